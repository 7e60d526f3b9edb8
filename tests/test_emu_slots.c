/* test_emu_slots.c - registers sharing register-file slots by liveness (emu/slots.c, docs/emulator.md "How
 * the emulator works"): the packed form of a kernel gives the same bits as one slot per register
 * (EmuOptions.one_slot_per_register) on hand-written PTX whose values live around back edges, through predicated
 * writes and reads of never-written registers, and on the compiler's attention kernel; the slot count drops. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/exec.h"
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
