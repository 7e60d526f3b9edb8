/* test_emu_slots.c - registers sharing register-file slots by liveness (emu/slots.c, docs/emulator.md "How
 * the emulator works"): the packed form of a kernel gives the same bits as one slot per register
 * (EmuOptions.one_slot_per_register) on hand-written PTX whose values live around back edges, through predicated
 * writes and reads of never-written registers, and on the compiler's attention kernel; the slot count drops. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emu/exec.h"
#include "include/tile/tile.h"
#include "test_ptxas.h"

#ifndef TILE_SOURCE_DIR
#define TILE_SOURCE_DIR "."
#endif

#define PTX_HEAD ".version 7.8\n.target sm_80\n.address_size 64\n"

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    cr_assert(s && fread(s, 1, (size_t)n, f) == (size_t)n);
    s[n] = 0;
    fclose(f);
    return s;
}

static EmuModule *load(const char *ptx, EmuMem *mem) {
    emu_mem_init(mem);
    char *err = NULL;
    EmuModule *m = emu_module_parse(ptx, mem, &err);
    cr_assert(m, "%s", err ? err : "");
    return m;
}

/* Launches k(out) with `threads` threads in `blocks` blocks, out poisoned first, in both register layouts; the
 * words written must be the same bits; returns the packed form's. */
static uint32_t *run_both(EmuModule *m, EmuMem *mem, const char *name, unsigned blocks, unsigned threads, unsigned words) {
    EmuFunc *f = emu_module_find(m, name);
    cr_assert(f && f->packed, "'%s' has no packed form", name);
    uint64_t out;
    size_t bytes = (size_t)words * 4;
    cr_assert(emu_mem_alloc(mem, bytes, false, &out));
    uint32_t *got[2];
    for (int one = 0; one < 2; one++) {
        memset(emu_mem_host(mem, out, bytes), 0xA5, bytes);
        EmuOptions o = {.host_threads = 2, .timeout_seconds = 60, .one_slot_per_register = one};
        void *params[] = {&out};
        char *err = NULL;
        cr_assert(emu_launch(m, f, (unsigned[3]){blocks, 1, 1}, (unsigned[3]){threads, 1, 1}, 0, params, &o, NULL, &err),
                  "%s", err ? err : "");
        got[one] = malloc(bytes);
        memcpy(got[one], emu_mem_host(mem, out, bytes), bytes);
    }
    for (unsigned i = 0; i < words; i++)
        cr_assert_eq(got[0][i], got[1][i], "word %u: 0x%08x packed, 0x%08x with one slot per register", i, got[0][i], got[1][i]);
    free(got[1]);
    return got[0];
}

/* A loop whose values live around the back edge (a running sum, a value carried from the previous iteration, a
 * counter), many short-lived temporaries in the body that can share slots with each other but not with what the
 * loop carries, a predicated write that must keep the old value where its guard is false, and a register read
 * before it is ever written (0). */
Test(slots, loop_carried_and_predicated_values) {
    const char *ptx = PTX_HEAD ".visible .entry k(.param .u64 pout)\n{\n"
                      " .reg .pred %p<4>;\n .reg .b32 %r<40>;\n .reg .b64 %rd<4>;\n"
                      " mov.u32 %r1, %tid.x;\n mov.u32 %r2, 0;\n mov.u32 %r3, 7;\n mov.u32 %r4, 0;\n"
                      "LOOP:\n"
                      " add.s32 %r10, %r1, %r4;\n mul.lo.s32 %r11, %r10, 3;\n xor.b32 %r12, %r11, %r3;\n"
                      " shl.b32 %r13, %r12, 1;\n add.s32 %r21, %r13, %r5;\n add.s32 %r2, %r2, %r21;\n"
                      " and.b32 %r14, %r4, 1;\n setp.eq.s32 %p1, %r14, 0;\n"
                      " @%p1 mov.u32 %r3, %r10;\n" /* odd iterations keep the previous %r3 */
                      " add.s32 %r15, %r2, %r3;\n mul.lo.s32 %r16, %r15, %r15;\n sub.s32 %r17, %r16, %r11;\n"
                      " add.s32 %r20, %r20, %r17;\n" /* %r20 read before any write: 0 on entry, carried after */
                      " mul.lo.s32 %r5, %r17, 5;\n" /* carried to the next iteration only: live around the back edge */
                      " add.s32 %r31, %r4, 1;\n mov.u32 %r4, %r31;\n setp.lt.u32 %p2, %r31, 9;\n @%p2 bra LOOP;\n"
                      " ld.param.u64 %rd1, [pout];\n mul.wide.u32 %rd2, %r1, 16;\n add.s64 %rd3, %rd1, %rd2;\n"
                      " st.global.v4.u32 [%rd3], {%r2, %r3, %r20, %r30};\n" /* %r30: never written */
                      " ret;\n}\n";
    check_ptxas_arch(ptx, "sm_80");
    EmuMem mem;
    EmuModule *m = load(ptx, &mem);
    EmuFunc *f = emu_module_find(m, "k");
    cr_assert(f->packed && f->packed->nslots < f->nslots, "%u slots packed, %u", f->packed ? f->packed->nslots : 0, f->nslots);
    uint32_t *got = run_both(m, &mem, "k", 2, 64, 2 * 64 * 4);
    for (uint32_t t = 0; t < 64; t++) { /* the loop in C */
        uint32_t r2 = 0, r3 = 7, r20 = 0, r5 = 0;
        for (uint32_t r4 = 0; r4 < 9; r4++) {
            uint32_t r10 = t + r4, r11 = r10 * 3, r13 = (r11 ^ r3) << 1;
            r2 += r13 + r5;
            if (!(r4 & 1)) r3 = r10;
            uint32_t r15 = r2 + r3;
            uint32_t r17 = r15 * r15 - r11;
            r20 += r17;
            r5 = r17 * 5;
        }
        uint32_t want[4] = {r2, r3, r20, 0};
        for (int k = 0; k < 4; k++) cr_assert_eq(got[t * 4 + k], want[k], "thread %u word %d: %u, want %u", t, k, got[t * 4 + k], want[k]);
    }
    free(got);
    emu_module_free(m);
    emu_mem_destroy(&mem);
}

/* cp.async reads its registers (shared and global addresses, the source size) when it issues, so they share slots
 * like any others: its address and size registers die at the cp.async while registers made between them and it
 * live on past it (they may not take those slots early), and the copy, waited for later, lands whole.  Each thread
 * copies the first 1..16 bytes of its neighbour's 16 (zero-filled after), which it wrote itself first. */
Test(slots, cp_async_registers_shared_after_issue) {
    const char *ptx = PTX_HEAD ".visible .entry k(.param .u64 pout)\n{\n"
                      " .reg .b32 %r<24>;\n .reg .b64 %rd<12>;\n .shared .align 16 .b8 sbuf[512];\n"
                      " ld.param.u64 %rd1, [pout];\n mov.u32 %r1, %tid.x;\n"
                      " mul.lo.u32 %r2, %r1, 7;\n add.u32 %r3, %r2, 1;\n add.u32 %r4, %r2, 2;\n add.u32 %r5, %r2, 3;\n"
                      " mul.wide.u32 %rd2, %r1, 16;\n add.s64 %rd3, %rd1, %rd2;\n"
                      " st.global.v4.u32 [%rd3], {%r2, %r3, %r4, %r5};\n bar.sync 0;\n"
                      " add.u32 %r6, %r1, 1;\n and.b32 %r7, %r6, 31;\n mul.wide.u32 %rd4, %r7, 16;\n add.s64 %rd5, %rd1, %rd4;\n"
                      " shl.b32 %r8, %r1, 4;\n mov.u32 %r9, sbuf;\n add.u32 %r10, %r9, %r8;\n"
                      " mul.lo.u32 %r11, %r1, 5;\n and.b32 %r12, %r11, 15;\n add.u32 %r13, %r12, 1;\n"
                      " add.u32 %r14, %r1, 100;\n mul.lo.u32 %r15, %r1, 9;\n cvt.u64.u32 %rd6, %r14;\n"
                      " cp.async.cg.shared.global [%r10], [%rd5], 16, %r13;\n"
                      " mul.lo.u32 %r16, %r14, 3;\n add.s64 %rd7, %rd6, 11;\n"
                      " cp.async.wait_all;\n"
                      " shl.b32 %r17, %r1, 4;\n add.u32 %r18, %r9, %r17;\n ld.shared.v4.u32 {%r19, %r20, %r21, %r22}, [%r18];\n"
                      " add.u32 %r19, %r19, %r16;\n add.u32 %r20, %r20, %r15;\n cvt.u32.u64 %r23, %rd7;\n add.u32 %r21, %r21, %r23;\n"
                      " add.s64 %rd8, %rd3, 512;\n st.global.v4.u32 [%rd8], {%r19, %r20, %r21, %r22};\n ret;\n}\n";
    check_ptxas_arch(ptx, "sm_80");
    EmuMem mem;
    EmuModule *m = load(ptx, &mem);
    EmuFunc *f = emu_module_find(m, "k");
    cr_assert(f->packed && f->packed->nslots < f->nslots);
    const EmuFunc *p = f->packed;
    for (uint32_t i = 0; i < p->ncode; i++) /* its registers are on shared slots, not kept whole */
        if (p->code[i].op == EMU_OP_CP_ASYNC)
            for (unsigned k = 0; k < 4; k += 1 + (k == 1)) /* the two addresses' bases and the size (2: the immediate 16) */
                cr_assert_eq(p->slot_orig[p->code[i].o[k]], UINT32_MAX, "cp.async operand %u on a slot of its own", k);
    uint32_t *got = run_both(m, &mem, "k", 1, 32, 2 * 32 * 4);
    for (uint32_t t = 0; t < 32; t++) {
        uint32_t nb = (t + 1) % 32, size = (t * 5 & 15) + 1, src[4], w[4] = {0, 0, 0, 0};
        for (uint32_t k = 0; k < 4; k++) src[k] = nb * 7 + k;
        memcpy(w, src, size);
        uint32_t want[4] = {w[0] + (t + 100) * 3, w[1] + t * 9, w[2] + t + 111, w[3]};
        for (uint32_t k = 0; k < 4; k++) {
            cr_assert_eq(got[t * 4 + k], t * 7 + k);
            cr_assert_eq(got[128 + t * 4 + k], want[k], "thread %u word %u: 0x%08x, want 0x%08x", t, k, got[128 + t * 4 + k], want[k]);
        }
    }
    free(got);
    emu_module_free(m);
    emu_mem_destroy(&mem);
}

/* Calls in a loop: the entry's registers live across each call (a carried sum, the thread index, a value made
 * before the call and read after it) while the callee runs in its own frame; arguments by .reg and by .param,
 * results into registers; the entry packed, the .funcs with one slot per register. */
Test(slots, registers_live_across_calls) {
    const char *ptx = PTX_HEAD
                      ".func (.reg .b32 o) mix(.reg .b32 x, .param .b32 yp)\n{\n .reg .b32 %t<4>;\n"
                      " ld.param.b32 %t0, [yp];\n mul.lo.u32 %t1, x, 2654435761;\n xor.b32 %t2, %t1, %t0;\n"
                      " shr.u32 %t3, %t2, 7;\n add.u32 o, %t3, %t0;\n ret;\n}\n"
                      ".visible .entry k(.param .u64 pout)\n{\n .reg .pred %p<2>;\n .reg .b32 %r<24>;\n .reg .b64 %rd<4>;\n"
                      " mov.u32 %r1, %tid.x;\n mov.u32 %r2, 0;\n mov.u32 %r3, 0;\n"
                      "LOOP:\n"
                      " add.u32 %r10, %r1, %r3;\n mul.lo.u32 %r11, %r10, 7;\n"     /* %r11 read after the call */
                      " add.u32 %r12, %r3, 100;\n"
                      " {\n .param .b32 yp;\n st.param.b32 [yp], %r12;\n call.uni (%r13), mix, (%r10, yp);\n }\n"
                      " add.u32 %r14, %r13, %r11;\n add.u32 %r2, %r2, %r14;\n"
                      " add.u32 %r3, %r3, 1;\n setp.lt.u32 %p1, %r3, 5;\n @%p1 bra LOOP;\n"
                      " ld.param.u64 %rd1, [pout];\n mul.wide.u32 %rd2, %r1, 8;\n add.s64 %rd3, %rd1, %rd2;\n"
                      " st.global.v2.u32 [%rd3], {%r2, %r11};\n ret;\n}\n";
    check_ptxas_arch(ptx, "sm_80");
    EmuMem mem;
    EmuModule *m = load(ptx, &mem);
    EmuFunc *f = emu_module_find(m, "k");
    cr_assert(f->packed && f->packed->nslots < f->nslots);
    cr_assert(!emu_module_find(m, "mix")->packed);
    uint32_t *got = run_both(m, &mem, "k", 1, 96, 96 * 2);
    for (uint32_t t = 0; t < 96; t++) {
        uint32_t sum = 0, r11 = 0;
        for (uint32_t i = 0; i < 5; i++) {
            uint32_t x = t + i, y = i + 100;
            r11 = x * 7;
            sum += (((x * 2654435761u) ^ y) >> 7) + y + r11;
        }
        cr_assert_eq(got[2 * t], sum, "thread %u: %u, want %u", t, got[2 * t], sum);
        cr_assert_eq(got[2 * t + 1], r11);
    }
    free(got);
    emu_module_free(m);
    emu_mem_destroy(&mem);
}

/* The compiler's flash-attention kernel for sm_80 (bf16, head_dim 128; tests/emu/attention_sm80.ptx, emitted by
 * `tile run attention --device emu:sm_80`): 1,680 slots with one per register, far fewer packed. */
Test(slots, attention_kernel_takes_fewer_slots) {
    char *ptx = slurp(TILE_SOURCE_DIR "/tests/emu/attention_sm80.ptx");
    EmuMem mem;
    EmuModule *m = load(ptx, &mem);
    EmuFunc *f = emu_module_find(m, "attention_fwd_bf16");
    cr_assert(f && f->packed);
    cr_assert_eq(f->nslots, 1680);
    cr_assert_lt(f->packed->nslots, 600, "%u slots packed", f->packed->nslots);
    emu_module_free(m);
    emu_mem_destroy(&mem);
    free(ptx);
}

/* A kernel too large for the liveness bit sets (instructions + registers, times the registers / 64 words, past
 * PACK_MAX_WORDS) keeps one slot per register and runs: a chain of 24,000 fresh registers, each a multiply-add of
 * the one before, would have asked the packer for 72 MB of live sets and as much again of interference rows (an
 * unrolled 131,072-element tile asked for 5.3 GB). */
Test(slots, too_large_to_pack_keeps_one_slot_per_register) {
    enum { N = 24000 };
    Str s = {0};
    str_printf(&s, PTX_HEAD ".visible .entry chain(.param .u64 out)\n{\n .reg .b32 %%r<%d>;\n .reg .b64 %%rd<4>;\n", N + 2);
    str_puts(&s, " ld.param.u64 %rd1, [out];\n mov.u32 %r1, %tid.x;\n");
    for (int i = 1; i < N; i++) str_printf(&s, " mad.lo.u32 %%r%d, %%r%d, 3, %d;\n", i + 1, i, i);
    str_printf(&s, " mul.wide.u32 %%rd2, %%r1, 4;\n add.s64 %%rd3, %%rd1, %%rd2;\n st.global.u32 [%%rd3], %%r%d;\n ret;\n}\n", N);
    EmuMem mem;
    EmuModule *m = load(s.buf, &mem);
    EmuFunc *f = emu_module_find(m, "chain");
    cr_assert(f && !f->packed, "a kernel of %u instructions was packed", f ? f->ncode : 0);
    uint64_t out;
    cr_assert(emu_mem_alloc(&mem, 4 * 5, false, &out));
    memset(emu_mem_host(&mem, out, 20), 0xA5, 20);
    EmuOptions o = {.host_threads = 1, .timeout_seconds = 60};
    char *err = NULL;
    cr_assert(emu_launch(m, f, (unsigned[3]){1, 1, 1}, (unsigned[3]){5, 1, 1}, 0, (void *[]){&out}, &o, NULL, &err), "%s", err ? err : "");
    for (uint32_t t = 0; t < 5; t++) {
        uint32_t want = t;
        for (uint32_t i = 1; i < N; i++) want = want * 3 + i;
        uint32_t got;
        memcpy(&got, (uint8_t *)emu_mem_host(&mem, out, 20) + 4 * t, 4);
        cr_assert_eq(got, want, "thread %u: %u, want %u", t, got, want);
    }
    emu_module_free(m);
    emu_mem_destroy(&mem);
    str_free(&s);
}

/* A wgmma's A registers stay on their own slots (they are read until the wait): one written in flight is reported
 * by its PTX name from the packed form as from the 1:1 one, and the results are the same where none is. */
Test(slots, wgmma_in_flight_register_named) {
    const char *ptx = ".version 8.4\n.target sm_90a\n.address_size 64\n"
                      ".visible .entry a(.param .u64 out, .param .u32 mode)\n{\n"
                      " .reg .pred %p<4>;\n .reg .b32 %r<12>;\n .reg .b32 %a<4>;\n .reg .b64 %rd<8>;\n .reg .f32 %x<4>;\n"
                      " .shared .align 1024 .b8 smem[2048];\n"
                      " ld.param.u64 %rd0, [out];\n ld.param.u32 %r0, [mode];\n mov.u32 %r1, %tid.x;\n mov.u32 %r2, smem;\n"
                      " shl.b32 %r8, %r1, 2;\n add.u32 %r9, %r2, %r8;\n st.shared.b32 [%r9], 0x3C003C00;\n"
                      " fence.proxy.async.shared::cta;\n bar.sync 0;\n"
                      " shr.u32 %r3, %r2, 4;\n cvt.u64.u32 %rd1, %r3;\n or.b64 %rd2, %rd1, 0x0000000800010000;\n"
                      " mov.b32 %a0, 0x3C003C00;\n mov.b32 %a1, 0x3C003C00;\n mov.b32 %a2, 0x3C003C00;\n mov.b32 %a3, 0x3C003C00;\n"
                      " mov.f32 %x0, 0f3F800000;\n mov.f32 %x1, 0f3F800000;\n mov.f32 %x2, 0f3F800000;\n mov.f32 %x3, 0f3F800000;\n"
                      " wgmma.fence.sync.aligned;\n"
                      " wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%x0, %x1, %x2, %x3}, {%a0, %a1, %a2, %a3}, %rd2, 1, 1, 1, 0;\n"
                      " wgmma.commit_group.sync.aligned;\n"
                      " add.u32 %r4, %r1, 3;\n mul.lo.u32 %r5, %r4, %r4;\n xor.b32 %r6, %r5, %r1;\n" /* temporaries in flight */
                      " setp.eq.u32 %p1, %r0, 1;\n @%p1 mov.b32 %a2, 0;\n"
                      " wgmma.wait_group.sync.aligned 0;\n"
                      " cvt.rn.f32.u32 %x3, %r6;\n"
                      " mul.wide.u32 %rd4, %r1, 8;\n add.u64 %rd5, %rd0, %rd4;\n st.global.v2.f32 [%rd5], {%x1, %x3};\n"
                      " ret;\n}\n";
    check_ptxas_arch(ptx, "sm_90a");
    EmuMem mem;
    EmuModule *m = load(ptx, &mem);
    EmuFunc *f = emu_module_find(m, "a");
    cr_assert(f->packed && f->packed->nslots < f->nslots);
    uint64_t out;
    cr_assert(emu_mem_alloc(&mem, 128 * 8, false, &out));
    uint32_t got[2][256];
    for (int one = 0; one < 2; one++) {
        EmuOptions o = {.host_threads = 2, .timeout_seconds = 60, .one_slot_per_register = one};
        unsigned mode = 0;
        void *params[] = {&out, &mode};
        char *err = NULL;
        memset(emu_mem_host(&mem, out, 128 * 8), 0xA5, 128 * 8);
        cr_assert(emu_launch(m, f, (unsigned[3]){1, 1, 1}, (unsigned[3]){128, 1, 1}, 0, params, &o, NULL, &err), "%s", err);
        memcpy(got[one], emu_mem_host(&mem, out, 128 * 8), 128 * 8);
        mode = 1;
        cr_assert(!emu_launch(m, f, (unsigned[3]){1, 1, 1}, (unsigned[3]){128, 1, 1}, 0, params, &o, NULL, &err));
        cr_assert(err && strstr(err, "wgmma A operand modified while in flight") && strstr(err, "register %a2 holds A"),
                  "%s layout: %s", one ? "1:1" : "packed", err ? err : "(none)");
        free(err);
    }
    for (unsigned t = 0; t < 128; t++) {
        float x1, x3;
        memcpy(&x1, &got[0][2 * t], 4), memcpy(&x3, &got[0][2 * t + 1], 4);
        cr_assert_eq(x1, 17.0f, "thread %u: %g", t, x1); /* 1 + 16 products of 1 */
        cr_assert_eq(x3, (float)(((t + 3) * (t + 3)) ^ t), "thread %u: %g", t, x3);
        cr_assert_eq(got[0][2 * t], got[1][2 * t]);
        cr_assert_eq(got[0][2 * t + 1], got[1][2 * t + 1]);
    }
    emu_module_free(m);
    emu_mem_destroy(&mem);
}

/* ---- the shipped kernels through the public API, each layout in a process of its own ----
 * TILE_DEBUG=emu-1to1 is read once per process, so each layout runs in a child that writes its output bytes to
 * a pipe; the parent compares them bit for bit. */
typedef bool (*Job)(tile_context *ctx, uint8_t *out, size_t bytes);

static uint64_t rng;
static float rnd_unit(void) { /* in [-1, 1) */
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((rng >> 40) & 0xFFFFFF) / 8388608.0f - 1.0f;
}
static uint16_t to_bf16(float f) { uint32_t u; memcpy(&u, &f, 4); return (uint16_t)((u + 0x7FFF + (u >> 16 & 1)) >> 16); }
static uint16_t to_f16(float f) { _Float16 h = (_Float16)f; uint16_t u; memcpy(&u, &h, 2); return u; }

/* n random 16-bit elements (bf16 or f16) on the device. */
static tile_devptr upload16(tile_context *ctx, size_t n, bool bf16) {
    uint16_t *h = malloc(n * 2);
    for (size_t i = 0; i < n; i++) h[i] = bf16 ? to_bf16(rnd_unit()) : to_f16(rnd_unit());
    tile_devptr d = 0;
    if (tile_malloc(ctx, n * 2, &d) != TILE_OK || tile_memcpy_htod(ctx, d, h, n * 2) != TILE_OK) d = 0;
    free(h);
    return d;
}
static tile_devptr poisoned(tile_context *ctx, size_t bytes) {
    uint8_t *h = malloc(bytes);
    memset(h, 0xA5, bytes);
    tile_devptr d = 0;
    if (tile_malloc(ctx, bytes, &d) != TILE_OK || tile_memcpy_htod(ctx, d, h, bytes) != TILE_OK) d = 0;
    free(h);
    return d;
}

static uint8_t *in_child(const char *device, bool one_slot, Job job, size_t bytes) {
    int fd[2];
    cr_assert(pipe(fd) == 0);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        close(fd[0]);
        if (one_slot) setenv("TILE_DEBUG", "emu-1to1", 1);
        else unsetenv("TILE_DEBUG");
        rng = 0x9E3779B97F4A7C15ull; /* the same inputs in both children */
        tile_context *ctx = NULL;
        uint8_t *out = calloc(1, bytes);
        bool ok = tile_context_create(device, &ctx) == TILE_OK && job(ctx, out, bytes);
        if (!ok) fprintf(stderr, "%s: %s\n", device, ctx ? tile_last_error(ctx) : "no context");
        size_t done = 0;
        while (ok && done < bytes) {
            ssize_t w = write(fd[1], out + done, bytes - done);
            if (w <= 0) ok = false;
            else done += (size_t)w;
        }
        _exit(ok ? 0 : 1);
    }
    close(fd[1]);
    uint8_t *got = malloc(bytes);
    size_t done = 0;
    for (ssize_t r; done < bytes && (r = read(fd[0], got + done, bytes - done)) > 0;) done += (size_t)r;
    close(fd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0 && done == bytes, "the %s run on %s failed", one_slot ? "1:1" : "packed", device);
    return got;
}

static void same_bits(const char *device, Job job, size_t bytes, const char *what) {
    uint8_t *a = in_child(device, false, job, bytes), *b = in_child(device, true, job, bytes);
    size_t nz = 0, diff = bytes;
    for (size_t i = 0; i < bytes; i++) {
        nz += a[i] != 0xA5;
        if (a[i] != b[i] && diff == bytes) diff = i;
    }
    cr_assert_eq(diff, bytes, "%s on %s: byte %zu differs (packed 0x%02x, one slot per register 0x%02x)", what, device, diff,
                 a[diff], b[diff]);
    cr_assert_gt(nz, bytes / 2, "%s on %s wrote little of its output", what, device);
    free(a), free(b);
}

enum { GM = 70, GN = 50, GK = 40 }; /* not multiples of the tiles */
static bool gemm_job(tile_context *ctx, uint8_t *out, size_t bytes) {
    tile_gemm_args a = {.m = GM, .n = GN, .k = GK, .lda = GK, .ldb = GN, .ldc = GN, .in_dtype = TILE_F16,
                        .out_dtype = TILE_F32, .alpha = 1.0f, .beta = 0.0f};
    a.a = upload16(ctx, GM * GK, false), a.b = upload16(ctx, GK * GN, false), a.c = poisoned(ctx, bytes);
    return a.a && a.b && a.c && tile_gemm(ctx, &a) == TILE_OK && tile_memcpy_dtoh(ctx, out, a.c, bytes) == TILE_OK;
}

enum { AS = 45, AH = 2, AD = 64 };
static bool attention_job(tile_context *ctx, uint8_t *out, size_t bytes) {
    tile_attention_args a = {.dtype = TILE_BF16, .batch = 1, .heads_q = AH, .heads_kv = AH, .head_dim = AD, .seq_q = AS,
                             .seq_k = AS, .causal = 1, .window_left = -1, .window_right = -1};
    a.q = upload16(ctx, AS * AH * AD, true), a.k = upload16(ctx, AS * AH * AD, true), a.v = upload16(ctx, AS * AH * AD, true);
    a.o = poisoned(ctx, bytes);
    return a.q && a.k && a.v && a.o && tile_attention_fwd(ctx, &a) == TILE_OK &&
           tile_memcpy_dtoh(ctx, out, a.o, bytes) == TILE_OK;
}

enum { MT = 9, MH = 64, MI = 32, ME = 4, MK = 2 };
static bool moe_job(tile_context *ctx, uint8_t *out, size_t bytes) {
    tile_moe_args a = {.tokens = MT, .hidden = MH, .inter = MI, .experts = ME, .topk = MK, .dtype = TILE_BF16,
                       .logits_dtype = TILE_BF16, .renormalize = 1};
    a.x = upload16(ctx, MT * MH, true), a.w1 = upload16(ctx, (size_t)ME * 2 * MI * MH, true);
    a.w2 = upload16(ctx, (size_t)ME * MH * MI, true), a.router_logits = upload16(ctx, MT * ME, true);
    a.out = poisoned(ctx, bytes);
    return a.x && a.w1 && a.w2 && a.router_logits && a.out && tile_moe_forward(ctx, &a) == TILE_OK &&
           tile_memcpy_dtoh(ctx, out, a.out, bytes) == TILE_OK;
}

Test(slots, gemm_same_bits_in_both_layouts, .timeout = 120) {
    same_bits("emu:sm_80", gemm_job, GM * GN * 4, "gemm");
    same_bits("emu:sm_90a", gemm_job, GM * GN * 4, "gemm (wgmma)");
}

Test(slots, attention_same_bits_in_both_layouts, .timeout = 120) {
    same_bits("emu:sm_80", attention_job, AS * AH * AD * 2, "attention");
    same_bits("emu:sm_90a", attention_job, AS * AH * AD * 2, "attention (wgmma)");
}

Test(slots, moe_same_bits_in_both_layouts, .timeout = 120) {
    same_bits("emu:sm_80", moe_job, MT * MH * 4, "moe");
}
