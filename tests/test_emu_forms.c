/* test_emu_forms.c - PTX text forms and limits on the emulator (issue 15:
 * "runs any compiler's PTX, exactly, and can always be stopped"; stopping
 * launches: test_emu_stop.c).
 *
 * Every test is hand-written PTX loaded through the device layer, one form
 * or limit per test:
 *   1. text forms: braces around one register, vector packs/unpacks,
 *      address offsets on every operand, .ptr parameters with and without
 *      .align, negated predicates where PTX allows them, .version, the free-form
 *      layout (directives and instructions sharing lines or split over them);
 *   2. regressions found with other compilers' PTX (Triton's sm_80 output),
 *      mutated PTX and hostile text (an unterminated comment): each names
 *      what went wrong before the fix;
 *   3. limits refused at load or launch time with a message, never wrapped;
 *   4. more forms (address initializers, jump tables, isspacep, cache hints,
 *      bulk reductions, bmsk/szext) and cluster directives.
 * Calls (recursion, the device heap, parameters) are in test_emu_calls.c. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "include/tile/tile.h"
#include "runtime/device.h"
#include "support/support.h"

#include "tests/emu_dev.h"
#include "tests/test_ptxas.h"

/* ==== 1. text forms ==== */

/* Braces around a single register are that register, in every operand
 * position (Triton writes `ld.global.b32 {%r2}, [%rd1];`).  Before: the
 * fast paths of 32/64-bit global and 32-bit shared loads/stores took the
 * vector-pool index for a register slot and read or wrote the wrong one. */
Test(forms, braces_around_one_register) {
    static const char *ptx = HEAD
        ".visible .entry k(.param .u64 p)\n{\n"
        " .reg .b32 %r<8>;\n .reg .b64 %rd<8>;\n .shared .align 8 .b8 s[64];\n"
        " ld.param.u64 %rd1, [p];\n"
        " ld.global.b32 {%r2}, [%rd1];\n"                      /* 7 */
        " add.s32 %r3, %r2, 1;\n"
        " st.global.b32 [%rd1+4], {%r3};\n"                    /* 4 + 7 = 8 */
        " ld.global.b64 {%rd2}, [%rd1+8];\n"
        " add.s64 %rd3, %rd2, 2;\n"
        " st.global.b64 [%rd1+16], {%rd3};\n"
        " mov.u32 %r4, s;\n"
        " st.shared.b32 [%r4+12], {%r3};\n"
        " ld.shared.b32 {%r5}, [%r4+12];\n"
        " mul.lo.s32 %r6, %r5, 3;\n"
        " st.global.u32 [%rd1+24], %r6;\n"
        " mov.b32 {%r7}, %r6;\n"
        " st.global.u32 [%rd1+28], %r7;\n"
        " ret;\n}\n";
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint32_t init[8] = {7, 0, 40, 0, 0, 0, 0, 0};
    uint64_t p = buffer(d, init, sizeof init);
    void *params[] = {&p};
    launch_ok(d, f, 1, 1, params);
    uint32_t o[8];
    cr_assert_eq(dev_memcpy_dtoh(d, o, p, sizeof o), DEV_OK);
    cr_assert_eq(o[1], 8u);
    cr_assert_eq(o[4], 42u);
    cr_assert_eq(o[6], 24u);
    cr_assert_eq(o[7], 24u);
    dev_module_unload(m);
    dev_close(d);
}

/* mov packs and unpacks: {%h1,%h2} <-> b32, {%r1,%r2} <-> b64, 4 x b16 <-> b64.
 * Before: the generic executor read the pack's source vector as a register,
 * past the end of the register file (heap-buffer-overflow under ASan). */
Test(forms, vector_pack_and_unpack) {
    Str ptx = {0};
    str_puts(&ptx, HEAD ".visible .entry k(.param .u64 p)\n{\n"
                   " .reg .b16 %h<8>;\n .reg .b32 %r<8>;\n .reg .b64 %rd<8>;\n"
                   " ld.param.u64 %rd1, [p];\n ld.global.u32 %r1, [%rd1];\n ld.global.u64 %rd2, [%rd1+8];\n");
    /* many vector operands: the pool index of the last is far past the register count */
    for (int i = 0; i < 24; i++) str_puts(&ptx, " mov.b32 {%h1, %h2}, %r1;\n");
    str_puts(&ptx, " mov.b32 %r2, {%h2, %h1};\n"           /* halves swapped */
                   " mov.b64 {%r3, %r4}, %rd2;\n"
                   " mov.b64 %rd3, {%r4, %r3};\n"          /* words swapped */
                   " mov.b64 {%h3, %h4, %h5, %h6}, %rd2;\n"
                   " mov.b64 %rd4, {%h6, %h5, %h4, %h3};\n" /* b16 lanes reversed */
                   " st.global.u32 [%rd1+16], %r2;\n st.global.u64 [%rd1+24], %rd3;\n st.global.u64 [%rd1+32], %rd4;\n"
                   " st.global.u32 [%rd1+40], %r3;\n"
                   " ret;\n}\n");
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx.buf, "k", &m);
    uint64_t init[6] = {0x11112222u, 0x0123456789ABCDEFull, 0, 0, 0, 0};
    uint64_t p = buffer(d, init, sizeof init);
    void *params[] = {&p};
    launch_ok(d, f, 1, 1, params);
    uint64_t o[6];
    cr_assert_eq(dev_memcpy_dtoh(d, o, p, sizeof o), DEV_OK);
    cr_assert_eq((uint32_t)o[2], 0x22221111u);
    cr_assert_eq(o[3], 0x89ABCDEF01234567ull);
    cr_assert_eq(o[4], 0xCDEF89AB45670123ull);
    cr_assert_eq((uint32_t)o[5], 0x89ABCDEFu);
    dev_module_unload(m);
    dev_close(d);
    str_free(&ptx);
}

/* Offsets on every address operand: register + offset, register + negative
 * offset (`+-4`, `-8`), symbol + offset for .param, .global, .shared and
 * .local, and both addresses of cp.async.  Before: cp.async's second offset
 * was taken for a `p|q` destination and the line was refused ("'|' is only
 * valid in setp and shfl destinations"). */
Test(forms, address_offsets_everywhere) {
    static const char *ptx = HEAD
        ".global .align 4 .u32 g[4] = {100, 200, 300, 400};\n"
        ".visible .entry k(.param .u64 p, .param .align 8 .b8 pair[16])\n{\n"
        " .reg .b32 %r<16>;\n .reg .b64 %rd<8>;\n"
        " .shared .align 16 .b8 s[64];\n .local .align 8 .b8 loc[16];\n"
        " ld.param.u64 %rd1, [p];\n"
        " ld.param.u32 %r1, [pair+8];\n"                  /* 5 */
        " ld.global.u32 %r2, [g+8];\n"                    /* 300 */
        " mov.u32 %r3, s;\n"
        " add.s32 %r4, %r3, 16;\n"
        " cp.async.ca.shared.global [%r3], [%rd1+16], 16;\n"  /* the buffer's words 4..7 into s[0..15] */
        " cp.async.commit_group;\n cp.async.wait_all;\n"
        " ld.shared.u32 %r5, [%r4+-4];\n"                 /* s word 3: 13 */
        " st.shared.u32 [%r4+-8], %r1;\n"                 /* s word 2 = 5 */
        " ld.shared.u32 %r6, [s+8];\n"                    /* 5 */
        " st.local.u32 [loc+4], %r2;\n"
        " mov.u64 %rd2, loc;\n"
        " ld.local.u32 %r7, [%rd2+4];\n"                  /* 300 */
        " add.s64 %rd3, %rd1, 48;\n"
        " ld.global.u32 %r8, [%rd3-8];\n"                 /* word 10: 20 */
        " st.global.u32 [%rd1+0], %r1;\n st.global.u32 [%rd1+4], %r5;\n st.global.u32 [%rd1+8], %r6;\n"
        " st.global.u32 [%rd3+-36], %r7;\n"               /* word 3 */
        " st.global.u32 [%rd3+4], %r8;\n"                 /* word 13 */
        " ret;\n}\n";
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint32_t init[16] = {0, 0, 0, 0, 10, 11, 12, 13, 0, 0, 20, 0, 0, 0, 0, 0};
    uint64_t p = buffer(d, init, sizeof init);
    uint32_t pair[4] = {0, 0, 5, 0};
    void *params[] = {&p, pair};
    launch_ok(d, f, 1, 1, params);
    uint32_t o[16];
    cr_assert_eq(dev_memcpy_dtoh(d, o, p, sizeof o), DEV_OK);
    cr_assert_eq(o[0], 5u);
    cr_assert_eq(o[1], 13u);
    cr_assert_eq(o[2], 5u);
    cr_assert_eq(o[3], 300u);
    cr_assert_eq(o[13], 20u);
    dev_module_unload(m);
    dev_close(d);
}

/* .ptr parameters: `.ptr [.space] [.align N]` describe the pointee; the
 * parameter itself is aligned to its type.  Before: `.ptr .global .align 1`
 * (Triton) made the 8-byte parameter 1-aligned, so the next u64 parameter
 * sat at offset 12 and its load failed ("misaligned param read of size 8"). */
Test(forms, ptr_params_with_and_without_align) {
    static const char *ptx = HEAD
        ".visible .entry k(.param .u64 .ptr .global .align 1 a, .param .u32 n, .param .u64 .ptr .global .align 16 b,\n"
        "  .param .u32 n2, .param .u64 .ptr .align 4 c, .param .u8 flag, .param .u64 .ptr .global e, .param .u64 .ptr f)\n{\n"
        " .reg .b16 %h<2>;\n .reg .b32 %r<8>;\n .reg .b64 %rd<8>;\n"
        " ld.param.u64 %rd1, [a];\n ld.param.u32 %r1, [n];\n ld.param.u64 %rd2, [b];\n ld.param.u32 %r2, [n2];\n"
        " ld.param.u64 %rd3, [c];\n ld.param.u8 %h1, [flag];\n ld.param.u64 %rd4, [e];\n ld.param.u64 %rd5, [f];\n"
        " cvt.u32.u16 %r3, %h1;\n"
        " st.global.u32 [%rd1], %r1;\n st.global.u32 [%rd2], %r2;\n st.global.u32 [%rd3], %r3;\n"
        " st.global.u32 [%rd4], %r1;\n st.global.u32 [%rd5], %r2;\n"
        " ret;\n}\n";
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint64_t a = buffer(d, NULL, 4), b = buffer(d, NULL, 4), c = buffer(d, NULL, 4), e = buffer(d, NULL, 4),
             ff = buffer(d, NULL, 4);
    uint32_t n = 11, n2 = 22;
    uint8_t flag = 3;
    void *params[] = {&a, &n, &b, &n2, &c, &flag, &e, &ff};
    launch_ok(d, f, 1, 1, params);
    uint32_t v;
    cr_assert_eq(dev_memcpy_dtoh(d, &v, a, 4), DEV_OK);
    cr_assert_eq(v, 11u);
    cr_assert_eq(dev_memcpy_dtoh(d, &v, b, 4), DEV_OK);
    cr_assert_eq(v, 22u);
    cr_assert_eq(dev_memcpy_dtoh(d, &v, c, 4), DEV_OK);
    cr_assert_eq(v, 3u);
    cr_assert_eq(dev_memcpy_dtoh(d, &v, e, 4), DEV_OK);
    cr_assert_eq(v, 11u);
    cr_assert_eq(dev_memcpy_dtoh(d, &v, ff, 4), DEV_OK);
    cr_assert_eq(v, 22u);
    dev_module_unload(m);
    dev_close(d);
}

/* ld.s32 into a 64-bit register sign-extends, from every space: LLVM folds sext(load i32) into
 * `ld.param.s32 %rd` and `ld.global.s32 %rd` (a negative i32 argument or index widened to i64).
 * Before: the fast paths of 32-bit parameter, global and shared loads zero-extended. */
Test(forms, signed_loads_into_64_bit_registers) {
    static const char *ptx = HEAD
        ".visible .entry k(.param .u64 .ptr .global .align 16 out, .param .u64 .ptr .global .align 16 in, .param .u32 neg)\n{\n"
        " .reg .b32 %r<4>;\n .reg .b64 %rd<12>;\n .shared .align 4 .b32 sm[1];\n"
        " ld.param.u64 %rd1, [out];\n ld.param.u64 %rd2, [in];\n"
        " ld.param.s32 %rd3, [neg];\n ld.global.s32 %rd4, [%rd2];\n ld.global.nc.s32 %rd5, [%rd2+4];\n"
        " ld.global.u32 %rd6, [%rd2];\n ld.global.s16 %rd7, [%rd2+8];\n"
        " ld.global.u32 %r1, [%rd2];\n st.shared.u32 [sm], %r1;\n ld.shared.s32 %rd8, [sm];\n"
        " mov.u64 %rd9, sm;\n cvta.shared.u64 %rd9, %rd9;\n ld.s32 %rd10, [%rd9];\n"
        " st.global.u64 [%rd1], %rd3;\n st.global.u64 [%rd1+8], %rd4;\n st.global.u64 [%rd1+16], %rd5;\n"
        " st.global.u64 [%rd1+24], %rd6;\n st.global.u64 [%rd1+32], %rd7;\n st.global.u64 [%rd1+40], %rd8;\n"
        " st.global.u64 [%rd1+48], %rd10;\n"
        " ret;\n}\n";
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    int32_t init[3] = {-7, -2147483647 - 1, 0x8001}; /* the s16 load reads 0x8001: -32767 */
    uint64_t out = buffer(d, NULL, 56), in = buffer(d, init, sizeof init);
    int32_t neg = -100;
    void *params[] = {&out, &in, &neg};
    launch_ok(d, f, 1, 1, params);
    int64_t v[7];
    cr_assert_eq(dev_memcpy_dtoh(d, v, out, sizeof v), DEV_OK);
    static const int64_t want[7] = {-100, -7, -2147483648LL, 4294967289LL, -32767, -7, -7};
    for (int i = 0; i < 7; i++) cr_expect_eq(v[i], want[i], "value %d: %lld, want %lld", i, (long long)v[i], (long long)want[i]);
    dev_module_unload(m);
    dev_close(d);
}

/* 16-bit and 16-byte shared-memory accesses (the interpreter's fast forms, and the checked path they hand off to):
 * st.shared.b16 stores a register's low half (its high bits set here), ld.shared.u16 zero-extends and ld.shared.s16
 * sign-extends what a neighbour stored; st/ld.shared.v4.b32 move four registers through another thread's 16 bytes;
 * a 16-bit load at an odd address is a memcheck report, not a read of the bytes there.  Before, these went through
 * the family executor only; a fast form that copied 4 bytes or mixed up the vector's registers fails here. */
Test(forms, shared_16_bit_and_vector_accesses) {
    static const char *ptx = HEAD
        ".visible .entry k(.param .u64 out, .param .u32 odd)\n{\n"
        " .reg .pred %p1;\n .reg .b32 %r<20>;\n .reg .b64 %rd<4>;\n"
        " .shared .align 16 .b8 h[128];\n .shared .align 16 .b8 v[1024];\n"
        " ld.param.u64 %rd1, [out];\n mov.u32 %r1, %tid.x;\n"
        " mad.lo.u32 %r2, %r1, 40503, 0xABC70000;\n" /* low half 40503 tid (mod 2^16), high bits set */
        " shl.b32 %r3, %r1, 1;\n mov.u32 %r4, h;\n add.u32 %r5, %r4, %r3;\n st.shared.b16 [%r5], %r2;\n"
        " shl.b32 %r6, %r1, 4;\n mov.u32 %r7, v;\n add.u32 %r8, %r7, %r6;\n"
        " add.u32 %r9, %r1, 1000;\n add.u32 %r10, %r1, 2000;\n add.u32 %r11, %r1, 3000;\n add.u32 %r12, %r1, 4000;\n"
        " st.shared.v4.b32 [%r8], {%r9, %r10, %r11, %r12};\n bar.sync 0;\n"
        " add.u32 %r13, %r1, 1;\n and.b32 %r13, %r13, 63;\n" /* the next thread */
        " shl.b32 %r14, %r13, 1;\n add.u32 %r14, %r4, %r14;\n ld.shared.u16 %r15, [%r14];\n ld.shared.s16 %r16, [%r14];\n"
        " shl.b32 %r17, %r13, 4;\n add.u32 %r17, %r7, %r17;\n ld.shared.v4.b32 {%r9, %r10, %r11, %r12}, [%r17];\n"
        " mul.wide.u32 %rd2, %r1, 32;\n add.s64 %rd3, %rd1, %rd2;\n"
        " st.global.v2.u32 [%rd3], {%r15, %r16};\n st.global.v4.u32 [%rd3+16], {%r12, %r11, %r10, %r9};\n"
        " ld.param.u32 %r18, [odd];\n setp.ne.u32 %p1, %r18, 0;\n @%p1 ld.shared.u16 %r19, [h+1];\n"
        " ret;\n}\n";
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint64_t out = buffer(d, NULL, 64 * 32);
    uint32_t odd = 0;
    void *params[] = {&out, &odd};
    launch_ok(d, f, 1, 64, params);
    uint32_t got[64 * 8];
    cr_assert_eq(dev_memcpy_dtoh(d, got, out, sizeof got), DEV_OK);
    for (uint32_t t = 0; t < 64; t++) {
        uint32_t n = (t + 1) & 63, half = (n * 40503u) & 0xFFFF;
        uint32_t want[8] = {half, (uint32_t)(int32_t)(int16_t)half, 0xEEEEEEEEu, 0xEEEEEEEEu, n + 4000, n + 3000, n + 2000, n + 1000};
        for (int k = 0; k < 8; k++)
            cr_expect_eq(got[t * 8 + k], want[k], "thread %u, word %d: %#x, want %#x", t, k, got[t * 8 + k], want[k]);
    }
    odd = 1;
    cr_assert_neq(dev_launch(f, 1, 1, 1, 64, 1, 1, 0, NULL, params), DEV_OK, "a 16-bit load at an odd shared address ran");
    cr_expect(strstr(dev_last_error(d), "misaligned") || strstr(dev_last_error(d), "align"), "%s", dev_last_error(d));
    dev_module_unload(m);
    dev_close(d);
}

/* Predicates: `@p` and `@!p` guards on every kind of instruction (moves,
 * arithmetic, loads, stores, atomics, branches, calls, barriers), negated
 * predicate sources of setp, set and vote; per thread, odd threads take
 * the @p side and even ones the @!p side. */
Test(forms, guards_and_negated_predicates) {
    static const char *ptx = HEAD
        ".func (.param .b32 r) twice(.param .b32 x)\n{\n .reg .b32 %r<3>;\n"
        " ld.param.b32 %r1, [x];\n shl.b32 %r2, %r1, 1;\n st.param.b32 [r], %r2;\n ret;\n}\n"
        ".visible .entry k(.param .u64 out, .param .u64 cnt)\n{\n"
        " .reg .pred %p<8>;\n .reg .b32 %r<20>;\n .reg .b64 %rd<8>;\n"
        " ld.param.u64 %rd1, [out];\n ld.param.u64 %rd2, [cnt];\n"
        " mov.u32 %r1, %tid.x;\n and.b32 %r2, %r1, 1;\n setp.eq.u32 %p1, %r2, 1;\n"   /* p1: odd */
        " mul.wide.u32 %rd3, %r1, 32;\n add.s64 %rd4, %rd1, %rd3;\n"
        " mov.u32 %r3, 0;\n"
        " @%p1 mov.u32 %r3, 1;\n @!%p1 mov.u32 %r3, 2;\n"                              /* odd 1, even 2 */
        " mov.u32 %r4, 10;\n @!%p1 add.s32 %r4, %r4, 5;\n"                             /* even 15 */
        " @%p1 st.global.u32 [%rd4+4], %r4;\n @!%p1 st.global.u32 [%rd4+4], %r3;\n"  /* odd 10, even 2 */
        " @!%p1 atom.global.add.u32 %r5, [%rd2], 1;\n"                                 /* counts evens */
        " @%p1 red.global.add.u32 [%rd2+4], 1;\n"                                      /* counts odds */
        " setp.lt.and.u32 %p2, %r1, 4, !%p1;\n"                                        /* even and tid < 4 */
        " selp.u32 %r6, 1, 0, %p2;\n"
        " set.lt.and.u32.u32 %r7, %r1, 4, !%p1;\n"                                     /* ~0 for the same */
        " vote.sync.ballot.b32 %r8, !%p1, 0xffffffff;\n"                               /* evens */
        " vote.sync.any.pred %p3, !%p1, 0xffffffff;\n selp.u32 %r9, 1, 0, %p3;\n"
        " mov.u32 %r10, 0;\n"
        " @!%p1 bra $EVEN;\n mov.u32 %r10, 7;\n bra $JOIN;\n$EVEN:\n mov.u32 %r10, 8;\n$JOIN:\n"
        " @%p1 bar.sync 0;\n @!%p1 bar.sync 0;\n"
        " mov.u32 %r11, 0;\n"
        " { .param .b32 a0; .param .b32 r0;\n"
        "   st.param.b32 [a0], %r1;\n"
        "   @!%p1 call.uni (r0), twice, (a0);\n"
        "   ld.param.b32 %r12, [r0];\n   @!%p1 mov.u32 %r11, %r12;\n }\n" /* a call's .param is read unguarded (ptxas) */
        " st.global.u32 [%rd4], %r3;\n st.global.u32 [%rd4+8], %r6;\n st.global.u32 [%rd4+12], %r7;\n"
        " st.global.u32 [%rd4+16], %r8;\n st.global.u32 [%rd4+20], %r9;\n st.global.u32 [%rd4+24], %r10;\n"
        " st.global.u32 [%rd4+28], %r11;\n"
        " ret;\n}\n";
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint64_t out = buffer(d, NULL, 32 * 32), cnt = buffer(d, (uint32_t[2]){0, 0}, 8);
    void *params[] = {&out, &cnt};
    launch_ok(d, f, 1, 32, params);
    uint32_t o[32][8], c[2];
    cr_assert_eq(dev_memcpy_dtoh(d, o, out, sizeof o), DEV_OK);
    cr_assert_eq(dev_memcpy_dtoh(d, c, cnt, sizeof c), DEV_OK);
    cr_assert_eq(c[0], 16u);
    cr_assert_eq(c[1], 16u);
    for (uint32_t i = 0; i < 32; i++) {
        bool odd = i & 1;
        cr_assert_eq(o[i][0], odd ? 1u : 2u, "thread %u", i);
        cr_assert_eq(o[i][1], odd ? 10u : 2u, "thread %u", i);
        cr_assert_eq(o[i][2], !odd && i < 4 ? 1u : 0u, "thread %u", i);
        cr_assert_eq(o[i][3], !odd && i < 4 ? 0xFFFFFFFFu : 0u, "thread %u", i);
        cr_assert_eq(o[i][4], 0x55555555u, "thread %u", i);
        cr_assert_eq(o[i][5], 1u, "thread %u", i);
        cr_assert_eq(o[i][6], odd ? 7u : 8u, "thread %u", i);
        cr_assert_eq(o[i][7], odd ? 0u : 2 * i, "thread %u", i);
    }
    dev_module_unload(m);
    dev_close(d);
}

/* .version: every PTX ISA version up to what ptxas of CUDA 13 reads (9.0);
 * a malformed or later version is refused. */
Test(forms, version_directive) {
    TileDevice *d = open_dev(0);
    /* each with a .target it supports (ptxas: "PTX .version 6.4 does not support .target sm_80") */
    static const char *const ok[] = {"1.0", "6.4", "7.0", "7.8", "8.0", "8.3", "8.5", "8.7", "8.8", "9.0", "8.6", "8.8"};
    static const char *const tg[] = {"sm_10", "sm_75", "sm_80", "sm_90", "sm_90a", "sm_90a", "sm_90a", "sm_120", "sm_121", "sm_110",
                                     "sm_100a", "sm_100f"};
    for (size_t i = 0; i < ARRAY_LEN(ok); i++) {
        char ptx[256];
        snprintf(ptx, sizeof ptx, ".version %s\n.target %s\n.address_size 64\n.visible .entry k()\n{\n ret;\n}\n", ok[i], tg[i]);
        TileDevModule *m;
        cr_assert_eq(dev_module_load_ptx(d, ptx, &m), DEV_OK, ".version %s: %s", ok[i], dev_last_error(d));
        dev_module_unload(m);
    }
    load_fails(d, ".version 10.0\n.target sm_80\n.visible .entry k()\n{\n ret;\n}\n", "unsupported .version 10.0");
    load_fails(d, ".version 6.4\n.target sm_80\n.visible .entry k()\n{\n ret;\n}\n",
               "ptx:2: PTX .version 6.4 does not support .target sm_80: it needs .version 7.0 or later");
    load_fails(d, ".version 7.8\n.target sm_90a\n.visible .entry k()\n{\n ret;\n}\n",
               "ptx:2: PTX .version 7.8 does not support .target sm_90a: it needs .version 8.0 or later");
    load_fails(d, ".version eight\n.target sm_80\n.visible .entry k()\n{\n ret;\n}\n", "bad .version");
    /* an `f` target needs 8.8 whatever its SM needs (sm_100: 8.6); sm_110 needs 9.0 (ptxas's "does not support") */
    load_fails(d, ".version 8.6\n.target sm_100f\n.visible .entry k()\n{\n ret;\n}\n",
               "ptx:2: PTX .version 8.6 does not support .target sm_100f: it needs .version 8.8 or later");
    load_fails(d, ".version 8.8\n.target sm_110\n.visible .entry k()\n{\n ret;\n}\n",
               "ptx:2: PTX .version 8.8 does not support .target sm_110: it needs .version 9.0 or later");
    dev_close(d);
}

/* PTX is free-form, as ptxas reads it: directives and instructions share lines (`.address_size 64 .global ...`,
 * `.loc 1 3 1 ld.param...`, a label before its instruction), an instruction spans lines, comments and whitespace sit
 * between any tokens (`ld .global\n .u32`: an opcode and its modifiers too), and nested { } blocks declare registers
 * that hide the outer ones.  Before, .version/.target/.address_size/
 * .file/.loc ended at the end of their line: `.address_size 64 .global .u32 g = 41;` dropped g's declaration, and the
 * others were refused. */
Test(forms, free_form_layout) {
    static const char *ptx =
        "/* first */ .version 8.0 .target\nsm_80 .address_size\n64 .global .align 4 .u32 g = 41; .global .u32 h[2] = {7, 9};\n"
        ".file 1 \"free.cu\" .file 2 \"b.cu\", 1700000000, 12\n"
        ".visible .entry k(.param .u64 out) .maxntid 64\n, 1, 1 { .reg .pred %p<2>; .reg .b32 %r<6>; .reg .b64 %rd<3>;\n"
        ".loc 1 3 1 ld.param.u64 %rd1, [out]; .loc 2\n 4 2 cvta.to.global.u64 %rd1, %rd1;\n"
        "ld.global.u32 %r1, [g]; mov.u32 %r2, 0; L1: add.u32 %r2, %r2, 1; setp.lt.u32 %p1, %r2, 5; @%p1 bra L1;\n"
        "add.u32\n  %r1 ,\n  %r1, /* a */\n  %r2 // b\n  ; st.global.u32 [%rd1], %r1;\n"
        "ld .global\n .u32 %r4, [ h + 4 ]; st /* x */ .global.u32 [ %rd1 + 4 ], %r4;\n"
        "mov.u32 %r3, 100; { .reg .b32 %r3; mov.u32 %r3, 5; st.global.u32 [%rd1+8], %r3; { .reg .b32 %r3; mov.u32 %r3, 6;\n"
        "st.global.u32 [%rd1+12], %r3; } add.u32 %r3, %r3, 1; st.global.u32 [%rd1+16], %r3; } st.global.u32 [%rd1+20], %r3;\n"
        "ret; } .visible .entry k2() { ret; }\n";
    check_ptxas_arch(ptx, "sm_80");
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint64_t out = buffer(d, NULL, 24);
    launch_ok(d, f, 1, 1, (void *[]){&out});
    uint32_t o[6];
    static const uint32_t want[6] = {46, 9, 5, 6, 6, 100};
    cr_assert_eq(dev_memcpy_dtoh(d, o, out, sizeof o), DEV_OK);
    for (int i = 0; i < 6; i++) cr_expect_eq(o[i], want[i], "word %d: %u, want %u", i, o[i], want[i]);
    TileDevFunction *f2 = NULL;
    cr_assert_eq(dev_module_get_function(m, "k2", &f2), DEV_OK, "the entry after '}' on its line: %s", dev_last_error(d));
    dev_module_unload(m);
    dev_close(d);
}

/* ==== 2. regressions ==== */

/* In an ASan build, whether LeakSanitizer finds leaks now (Criterion runs a
 * test in a child process whose exit-time leak report would not fail it). */
extern int __lsan_do_recoverable_leak_check(void) __attribute__((weak));
static void assert_no_leaks(void) {
    if (__lsan_do_recoverable_leak_check) cr_assert_eq(__lsan_do_recoverable_leak_check(), 0, "LeakSanitizer found leaks");
}

/* A signature that fails to parse frees its parameter list (before: leaked,
 * seen by LeakSanitizer). */
Test(regress, failed_signature_frees_params) {
    TileDevice *d = open_dev(0);
    load_fails(d, HEAD ".visible .entry k(.param .u64 a, .param .u64 b, .param .bogus c)\n{\n ret;\n}\n",
               "unsupported declaration qualifier '.bogus'");
    load_fails(d, HEAD ".func (.param .b32 r) f(.param .b32 x, .param .b32 x2\n{\n ret;\n}\n", "expected ')'");
    load_fails(d, HEAD ".visible .entry k(.param .u64 a)\n{\n ret;\n}\n.visible .entry k(.param .u64 a)\n{\n ret;\n}\n",
               "defined twice");
    dev_close(d);
    assert_no_leaks();
}

/* A block comment that never closes is refused where it opens, as ptxas
 * refuses it ("unexpected EOF while scanning").  Before: it ran silently to
 * the end of the text, so the kernels after it vanished (a module with no
 * kernel loaded) or, after the last kernel, the module loaded as if whole. */
Test(regress, unterminated_block_comment) {
    static const char *before = HEAD "/* opened\n.visible .entry k()\n{\n ret;\n}\n";
    static const char *after = HEAD ".visible .entry k()\n{\n ret;\n}\n\n/* opened at the end";
    static const char *closed = HEAD "/* closed */ .visible .entry k() /* a\n b */\n{\n ret; // /* in a line comment\n}\n/**/";
    cr_expect(ptxas_refuses(before, "sm_80") && ptxas_refuses(after, "sm_80"), "ptxas accepts an unterminated comment");
    check_ptxas_arch(closed, "sm_80");
    TileDevice *d = open_dev(0);
    load_fails(d, before, "ptx:4: unterminated /* comment");
    load_fails(d, after, "ptx:9: unterminated /* comment");
    TileDevModule *m;
    load(d, closed, "k", &m);
    dev_module_unload(m);
    dev_close(d);
    assert_no_leaks();
}

/* Packed half comparisons, which LLVM writes for any f16 compare (even after widening to f32):
 * `setp.CmpOp[.BoolOp].f16x2 p|q, a, b[, c]` sets p from the low halves and q from the high
 * halves.  Before: the emulator refused them, so a kernel comparing f16 tensors could not run.
 * Each case: a, b as (low, high) f16 pairs; the four predicates of lt, ltu (unordered: NaN
 * true), ge.and with a true c, and ne.or with a false c, stored as 0/1 words. */
Test(regress, packed_half_setp) {
    static const char ptx[] = HEAD
        ".visible .entry k(.param .u64 pa, .param .u64 po)\n{\n"
        " .reg .pred %p<12>;\n .reg .b32 %r<16>;\n .reg .b64 %rd<4>;\n"
        " ld.param.u64 %rd1, [pa];\n ld.param.u64 %rd2, [po];\n"
        " ld.global.b32 %r1, [%rd1];\n ld.global.b32 %r2, [%rd1+4];\n"
        " setp.eq.u32 %p9, %r1, %r1;\n setp.ne.u32 %p10, %r1, %r1;\n"
        " setp.lt.f16x2 %p1|%p2, %r1, %r2;\n"
        " setp.ltu.f16x2 %p3|%p4, %r1, %r2;\n"
        " setp.ge.and.f16x2 %p5|%p6, %r1, %r2, %p9;\n"
        " setp.ne.or.f16x2 %p7|%p8, %r1, %r2, %p10;\n"
        " selp.u32 %r3, 1, 0, %p1;\n selp.u32 %r4, 1, 0, %p2;\n selp.u32 %r5, 1, 0, %p3;\n selp.u32 %r6, 1, 0, %p4;\n"
        " selp.u32 %r7, 1, 0, %p5;\n selp.u32 %r8, 1, 0, %p6;\n selp.u32 %r9, 1, 0, %p7;\n selp.u32 %r10, 1, 0, %p8;\n"
        " st.global.v4.u32 [%rd2], {%r3, %r4, %r5, %r6};\n st.global.v4.u32 [%rd2+16], {%r7, %r8, %r9, %r10};\n"
        " ret;\n}\n";
    /* f16 bits: 1.0 0x3C00, 2.0 0x4000, 3.0 0x4200, NaN 0x7E00 */
    static const struct {
        uint16_t a_lo, a_hi, b_lo, b_hi;
        uint32_t want[8]; /* lt lo/hi, ltu lo/hi, ge lo/hi, ne lo/hi */
    } cases[] = {
        {0x3C00, 0x4200, 0x4000, 0x4000, {1, 0, 1, 0, 0, 1, 1, 1}},
        {0x7E00, 0x4000, 0x3C00, 0x4000, {0, 0, 1, 0, 0, 1, 0, 0}}, /* ne is ordered: NaN != 1 is false */
    };
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        uint16_t in[4] = {cases[c].a_lo, cases[c].a_hi, cases[c].b_lo, cases[c].b_hi};
        uint64_t a = buffer(d, in, sizeof in), o = buffer(d, NULL, 32);
        void *params[] = {&a, &o};
        launch_ok(d, f, 1, 1, params);
        uint32_t got[8];
        cr_assert_eq(dev_memcpy_dtoh(d, got, o, sizeof got), DEV_OK);
        for (int k = 0; k < 8; k++)
            cr_expect_eq(got[k], cases[c].want[k], "case %zu predicate %d: %u, want %u", c, k, got[k], cases[c].want[k]);
        dev_free(d, a), dev_free(d, o);
    }
    dev_module_unload(m);
    dev_close(d);
}

/* Packed half `set` (cuda_fp16's h2exp writes `set.eq.f16x2.f16x2`): each half is 1.0 of an f16x2/bf16x2
 * dtype, or 0xffff of a u32 one, where its comparison holds; .BoolOp combines both halves with c.
 * Before: refused at run time. */
Test(regress, packed_half_set) {
    static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n" /* set on .bf16x2: sm_90 */
        ".visible .entry k(.param .u64 po)\n{\n .reg .pred %p<3>;\n .reg .b32 %r<10>;\n .reg .b64 %rd<2>;\n"
        " ld.param.u64 %rd1, [po];\n"
        " mov.b32 %r1, 0x7E003C00;\n mov.b32 %r2, 0x40003C00;\n" /* a = (1.0, NaN), b = (1.0, 2.0) */
        " mov.b32 %r3, 0x3F804000;\n mov.b32 %r4, 0x40003F80;\n" /* bf16: a = (2.0, 1.0), b = (1.0, 2.0) */
        " setp.eq.u32 %p1, %r1, %r1;\n setp.ne.u32 %p2, %r1, %r1;\n"
        " set.eq.f16x2.f16x2 %r5, %r1, %r2;\n set.neu.u32.f16x2 %r6, %r1, %r2;\n"
        " set.gt.bf16x2.bf16x2 %r7, %r3, %r4;\n set.lt.or.s32.bf16x2 %r8, %r3, %r4, %p2;\n"
        " set.le.and.f16x2.f16x2 %r9, %r2, %r1, %p1;\n"
        " st.global.v4.u32 [%rd1], {%r5, %r6, %r7, %r8};\n st.global.u32 [%rd1+16], %r9;\n ret;\n}\n";
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint64_t o = buffer(d, NULL, 20);
    launch_ok(d, f, 1, 1, (void *[]){&o});
    uint32_t got[5];
    cr_assert_eq(dev_memcpy_dtoh(d, got, o, sizeof got), DEV_OK);
    static const uint32_t want[5] = {0x00003C00u, 0xFFFF0000u, 0x00003F80u, 0xFFFF0000u, 0x00003C00u};
    for (int k = 0; k < 5; k++) cr_expect_eq(got[k], want[k], "set %d: 0x%08x, want 0x%08x", k, got[k], want[k]);
    dev_module_unload(m);
    dev_close(d);
}

/* Each kernel's own .shared arrays (declared in its body) are its blocks' alone: one past the end of ka's 128
 * bytes is out of bounds, though kb's array came after it in the module (the read or write landed there,
 * unreported, and reports named the module's total as the block's size). */
Test(regress, kernel_scoped_shared_arrays) {
    static const char *ptx = HEAD
        ".visible .entry ka(.param .u64 out, .param .u32 i)\n{\n .reg .b32 %r<5>;\n .reg .b64 %rd<2>;\n .shared .align 4 .b32 s[32];\n"
        " ld.param.u64 %rd1, [out];\n ld.param.u32 %r1, [i];\n mov.u32 %r2, s;\n shl.b32 %r3, %r1, 2;\n add.u32 %r2, %r2, %r3;\n"
        " st.shared.u32 [%r2], %r1;\n ld.shared.u32 %r4, [%r2];\n st.global.u32 [%rd1], %r4;\n ret;\n}\n"
        ".visible .entry kb(.param .u64 out)\n{\n .reg .b32 %r<3>;\n .reg .b64 %rd<2>;\n .shared .align 4 .b32 t[10000];\n"
        " ld.param.u64 %rd1, [out];\n mov.u32 %r1, 7;\n st.shared.u32 [t+39996], %r1;\n ld.shared.u32 %r2, [t+39996];\n"
        " st.global.u32 [%rd1], %r2;\n ret;\n}\n";
    TileDevice *d = open_dev(60);
    TileDevModule *m;
    TileDevFunction *ka = load(d, ptx, "ka", &m), *kb;
    cr_assert_eq(dev_module_get_function(m, "kb", &kb), DEV_OK);
    uint64_t out = buffer(d, NULL, 4);
    uint32_t i = 31, v;
    launch_ok(d, ka, 1, 1, (void *[]){&out, &i});
    cr_assert_eq(dev_memcpy_dtoh(d, &v, out, 4), DEV_OK);
    cr_assert_eq(v, 31u);
    i = 32;
    launch_fails(d, ka, (unsigned[]){1, 1, 1}, (unsigned[]){1, 1, 1}, 0, (void *[]){&out, &i}, DEV_ERR_MEMCHECK,
                 (const char *[]){"memcheck: invalid __shared__ write of size 4", "the block has 128 bytes of shared memory (128 static", NULL});
    launch_ok(d, kb, 1, 1, (void *[]){&out});
    cr_assert_eq(dev_memcpy_dtoh(d, &v, out, 4), DEV_OK);
    cr_assert_eq(v, 7u);
    dev_module_unload(m);
    dev_close(d);
}

/* ==== 3. limits ==== */

/* Shared memory over the target's limit is refused, never wrapped: before,
 * `.shared .b8 s[4294967312]` became 16 bytes. */
Test(limits, shared_memory) {
    TileDevice *d = open_dev(0);
    load_fails(d, HEAD ".visible .entry k()\n{\n .shared .align 4 .b8 s[4294967312];\n ret;\n}\n",
               "of 4294967312 bytes exceeds the 49152 bytes of static shared memory a block may declare on sm_80");
    /* two arrays each under the limit, together over it, in one kernel */
    load_fails(d, HEAD ".shared .align 4 .b8 s1[40000];\n.shared .align 4 .b8 s2[40000];\n"
                      ".visible .entry k()\n{\n .reg .b32 %r<3>;\n mov.u32 %r1, s1;\n mov.u32 %r2, s2;\n ret;\n}\n",
               "kernel 'k' uses 80000 bytes of static shared memory");
    /* in two kernels of one module, they fit: each kernel counts what it uses */
    static const char *two = HEAD ".shared .align 4 .b8 s1[40000];\n.shared .align 4 .b8 s2[40000];\n"
                                  ".visible .entry k1()\n{\n .reg .b32 %r<2>;\n mov.u32 %r1, s1;\n st.shared.u32 [%r1], 1;\n ret;\n}\n"
                                  ".visible .entry k2()\n{\n .reg .b32 %r<2>;\n mov.u32 %r1, s2;\n st.shared.u32 [%r1], 1;\n ret;\n}\n";
    TileDevModule *m;
    TileDevFunction *f = load(d, two, "k2", &m);
    launch_ok(d, f, 1, 1, NULL);
    dev_module_unload(m);
    /* dynamic shared memory: the target's limit for static + dynamic (sm_80: 163 KiB, sm_90a: 227 KiB) */
    static const char *dyn80 = HEAD ".extern .shared .align 16 .b8 dsm[];\n"
                                    ".visible .entry k()\n{\n .reg .b32 %r<2>;\n mov.u32 %r1, dsm;\n st.shared.u32 [%r1], 1;\n ret;\n}\n";
    f = load(d, dyn80, "k", &m);
    cr_assert_eq(dev_launch(f, 1, 1, 1, 32, 1, 1, 163 * 1024, NULL, NULL), DEV_OK, "%s", dev_last_error(d));
    launch_fails(d, f, (unsigned[]){1, 1, 1}, (unsigned[]){32, 1, 1}, 163 * 1024 + 4, NULL, DEV_ERR_INVALID,
                 (const char *[]){"exceed the 166912 a block may use on sm_80", NULL});
    launch_fails(d, f, (unsigned[]){1, 1, 1}, (unsigned[]){32, 1, 1}, 0xFFFFFFF0u, NULL, DEV_ERR_INVALID,
                 (const char *[]){"4294967280 of dynamic shared memory", NULL});
    dev_module_unload(m);
    char dyn90[512];
    snprintf(dyn90, sizeof dyn90, "%s", dyn80);
    memcpy(strstr(dyn90, "sm_80"), "sm_90", 5); /* sm_90: the table's sm_90a row */
    f = load(d, dyn90, "k", &m);
    cr_assert_eq(dev_launch(f, 1, 1, 1, 32, 1, 1, 200 * 1024, NULL, NULL), DEV_OK, "%s", dev_last_error(d));
    dev_module_unload(m);
    dev_close(d);
    /* an emu:<target> device has its GPU's limit whatever the PTX's .target: sm_86 allows 99 KiB (150 KiB
     * launched), sm_90a 227 KiB for sm_80 PTX too (200 KiB was refused with sm_80's 163 KiB) */
    char *err = NULL;
    cr_assert_eq(dev_open("emu:sm_86", NULL, &d, &err), DEV_OK, "%s", err ? err : "");
    f = load(d, dyn80, "k", &m);
    cr_assert_eq(dev_launch(f, 1, 1, 1, 32, 1, 1, 99 * 1024, NULL, NULL), DEV_OK, "%s", dev_last_error(d));
    launch_fails(d, f, (unsigned[]){1, 1, 1}, (unsigned[]){32, 1, 1}, 150 * 1024, NULL, DEV_ERR_INVALID,
                 (const char *[]){"a block may use on sm_86", NULL});
    dev_module_unload(m);
    dev_close(d);
    cr_assert_eq(dev_open("emu:sm_90a", NULL, &d, &err), DEV_OK, "%s", err ? err : "");
    f = load(d, dyn80, "k", &m);
    cr_assert_eq(dev_launch(f, 1, 1, 1, 32, 1, 1, 200 * 1024, NULL, NULL), DEV_OK, "%s", dev_last_error(d));
    dev_module_unload(m);
    dev_close(d);
}

/* Barrier ids are 0..15 and thread counts multiples of 32: immediates at
 * load time (before: `bar.sync 99` ran), registers at run time. */
Test(limits, barrier_ids_and_counts) {
    TileDevice *d = open_dev(0);
    load_fails(d, HEAD ".visible .entry k()\n{\n bar.sync 99;\n ret;\n}\n", "barrier number 99 in 'bar.sync' is out of range: 0..15");
    load_fails(d, HEAD ".visible .entry k()\n{\n barrier.sync 16, 64;\n ret;\n}\n", "out of range");
    load_fails(d, HEAD ".visible .entry k()\n{\n bar.sync 1, 48;\n ret;\n}\n", "thread count 48");
    static const char *ptx = HEAD ".visible .entry k(.param .u32 id)\n{\n .reg .b32 %r<2>;\n ld.param.u32 %r1, [id];\n"
                                  " bar.sync %r1;\n ret;\n}\n";
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint32_t id = 15;
    void *params[] = {&id};
    launch_ok(d, f, 1, 64, params);
    id = 99;
    launch_fails(d, f, (unsigned[]){1, 1, 1}, (unsigned[]){64, 1, 1}, 0, params, DEV_ERR_LAUNCH,
                 (const char *[]){"invalid barrier", "barrier number 99", "PTX line 8: bar.sync %r1;", NULL});
    dev_module_unload(m);
    dev_close(d);
}

/* .const and an entry's .param space are read-only: stores are refused at
 * load time (before: a store to .const succeeded), generic stores into a
 * .const variable at run time. */
Test(limits, read_only_spaces) {
    TileDevice *d = open_dev(0);
    load_fails(d, HEAD ".const .align 4 .u32 c = 5;\n.visible .entry k()\n{\n st.const.u32 [c], 1;\n ret;\n}\n",
               "writes to the .const state space, which is read-only");
    load_fails(d, HEAD ".const .align 4 .u32 c;\n.visible .entry k()\n{\n .reg .b32 %r<2>;\n atom.const.add.u32 %r1, [c], 1;\n ret;\n}\n",
               "read-only");
    load_fails(d, HEAD ".visible .entry k(.param .u32 a)\n{\n st.param.u32 [a], 1;\n ret;\n}\n",
               "writes to a kernel parameter");
    static const char *ptx = HEAD ".const .align 4 .u32 c = 5;\n"
                                  ".visible .entry k(.param .u64 out)\n{\n .reg .b32 %r<2>;\n .reg .b64 %rd<4>;\n"
                                  " mov.u64 %rd1, c;\n cvta.const.u64 %rd2, %rd1;\n ld.u32 %r1, [%rd2];\n"
                                  " ld.param.u64 %rd3, [out];\n st.global.u32 [%rd3], %r1;\n"
                                  " st.u32 [%rd2], %r1;\n ret;\n}\n";
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint64_t out = buffer(d, NULL, 4);
    void *params[] = {&out};
    launch_fails(d, f, (unsigned[]){1, 1, 1}, (unsigned[]){1, 1, 1}, 0, params, DEV_ERR_MEMCHECK,
                 (const char *[]){"write to __constant__ memory", "PTX line 14: st.u32 [%rd2], %r1;", NULL});
    uint32_t v;
    cr_assert_eq(dev_memcpy_dtoh(d, &v, out, 4), DEV_OK);
    cr_assert_eq(v, 5u); /* the load before it ran */
    dev_module_unload(m);
    dev_close(d);
}

/* Grid and block dimensions over the hardware limits are refused. */
Test(limits, launch_dimensions) {
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, HEAD ".visible .entry k()\n{\n ret;\n}\n", "k", &m);
    static const unsigned bad[][6] = {
        {1, 1, 1, 1025, 1, 1}, {1, 1, 1, 1, 1025, 1}, {1, 1, 1, 1, 1, 65}, {1, 1, 1, 32, 33, 1}, {1, 1, 1, 16, 8, 16},
        {2147483648u, 1, 1, 1, 1, 1}, {1, 65536, 1, 1, 1, 1}, {1, 1, 65536, 1, 1, 1}, {0, 1, 1, 1, 1, 1}, {1, 1, 1, 0, 1, 1},
    };
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        DevStatus st = dev_launch(f, bad[i][0], bad[i][1], bad[i][2], bad[i][3], bad[i][4], bad[i][5], 0, NULL, NULL);
        /* zero sizes are refused by the device layer before the backend, the others by the emulator: both
         * before anything runs, the caller's invalid values */
        cr_assert_eq(st, DEV_ERR_INVALID, "case %zu gave %s", i, dev_status_string(st));
        cr_assert(strstr(dev_last_error(d), "launch of 'k'"), "%s", dev_last_error(d));
    }
    cr_assert_eq(dev_launch(f, 1, 1, 1, 1024, 1, 1, 0, NULL, NULL), DEV_OK, "%s", dev_last_error(d));
    cr_assert_eq(dev_launch(f, 1, 1, 1, 1, 1, 64, 0, NULL, NULL), DEV_OK, "%s", dev_last_error(d));
    cr_assert_eq(dev_launch(f, 2, 2, 2, 8, 8, 16, 0, NULL, NULL), DEV_OK, "%s", dev_last_error(d));
    dev_module_unload(m);
    dev_close(d);
}

/* ==== 4. more forms and limits ==== */

/* Addresses in initializers, as nvcc writes them: a pointer to another global (`__device__ int *p = arr + 2`:
 * generic(arr)+8), a table of function pointers, a C++ vtable ({0, 0, fn}), a .const table of addresses.
 * Before: "unsupported initializer 'generic'".  Elements not given are zero; a name that is no variable
 * or function, or an address in a 4-byte element, is refused. */
Test(forms, address_initializers) {
    static const char *ptx = HEAD
        ".global .align 4 .b8 arr[16] = {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4};\n"
        ".global .align 8 .u64 p = generic(arr)+8;\n"
        ".func (.param .b32 r) twice(.param .b32 x);\n"
        ".func (.param .b32 r) plus7(.param .b32 x)\n{\n .reg .b32 %r<3>;\n"
        " ld.param.b32 %r1, [x];\n add.s32 %r2, %r1, 7;\n st.param.b32 [r], %r2;\n ret;\n}\n"
        ".global .align 8 .u64 ops[2] = {twice, plus7};\n"
        ".global .align 8 .u64 vtab[4] = {0, 0, plus7};\n"
        ".const .align 8 .u64 ctab[2] = {arr-0, generic(arr) + 12};\n"
        ".func (.param .b32 r) twice(.param .b32 x)\n{\n .reg .b32 %r<3>;\n"
        " ld.param.b32 %r1, [x];\n add.s32 %r2, %r1, %r1;\n st.param.b32 [r], %r2;\n ret;\n}\n"
        ".visible .entry k(.param .u64 out)\n{\n .reg .b32 %r<12>;\n .reg .b64 %rd<12>;\n"
        " ld.param.u64 %rd1, [out];\n"
        " ld.global.u64 %rd2, [p];\n ld.u32 %r1, [%rd2];\n st.global.u32 [%rd1], %r1;\n"               /* arr[2] = 3 */
        " ld.global.u64 %rd3, [ops];\n ld.global.u64 %rd4, [ops+8];\n"
        " { .param .b32 a; .param .b32 q;\n st.param.b32 [a], 10;\n"
        " pr1 : .callprototype (.param .b32 _) _ (.param .b32 _);\n"
        " call (q), %rd3, (a), pr1;\n ld.param.b32 %r2, [q];\n }\n st.global.u32 [%rd1+4], %r2;\n"       /* twice(10) */
        " { .param .b32 a; .param .b32 q;\n st.param.b32 [a], 10;\n"
        " pr2 : .callprototype (.param .b32 _) _ (.param .b32 _);\n"
        " call (q), %rd4, (a), pr2;\n ld.param.b32 %r3, [q];\n }\n st.global.u32 [%rd1+8], %r3;\n"       /* plus7(10) */
        " mov.u64 %rd5, vtab;\n ld.global.u64 %rd6, [%rd5+16];\n"
        " { .param .b32 a; .param .b32 q;\n st.param.b32 [a], 1;\n"
        " pr3 : .callprototype (.param .b32 _) _ (.param .b32 _);\n"
        " call (q), %rd6, (a), pr3;\n ld.param.b32 %r4, [q];\n }\n st.global.u32 [%rd1+12], %r4;\n"      /* vtable: plus7(1) */
        " ld.global.u64 %rd7, [vtab+24];\n cvt.u32.u64 %r5, %rd7;\n st.global.u32 [%rd1+16], %r5;\n"      /* not given: 0 */
        " ld.const.u64 %rd8, [ctab];\n ld.u32 %r6, [%rd8];\n ld.const.u64 %rd9, [ctab+8];\n ld.u32 %r7, [%rd9];\n"
        " add.s32 %r6, %r6, %r7;\n st.global.u32 [%rd1+20], %r6;\n"                                          /* 1 + 4 */
        " ret;\n}\n";
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint64_t out = buffer(d, NULL, 6 * 4);
    launch_ok(d, f, 1, 1, (void *[]){&out});
    uint32_t o[6];
    cr_assert_eq(dev_memcpy_dtoh(d, o, out, sizeof o), DEV_OK);
    static const uint32_t want[6] = {3, 20, 17, 8, 0, 5};
    for (int i = 0; i < 6; i++) cr_assert_eq(o[i], want[i], "result %d: %u, want %u", i, o[i], want[i]);
    dev_module_unload(m);
    load_fails(d, HEAD ".global .align 8 .u64 q = generic(nothing);\n", "'nothing' in the initializer of 'q' is no .global");
    load_fails(d, HEAD ".global .align 4 .b8 a[4];\n.global .align 4 .u32 q = a;\n", "initializes a 4-byte element of 'q'");
    load_fails(d, HEAD ".visible .entry k()\n{\n ret;\n}\n.global .align 8 .u64 q = k;\n", "the address of kernel entry 'k'");
    dev_close(d);
}

/* ISA, Array declarations: "the size of the array ... may be omitted when an initializer is given"
 * (`.global .u32 a[] = {0, 1, 2};`; ptxas sizes it from the initializer).  Before: "too many initializers
 * for 'str'".  A byte string, a table longer than 16 elements, addresses, an outer dimension left out (its
 * last row padded with zeros), and the variables after them placed past their sizes. */
Test(forms, unsized_arrays_with_initializers) {
    static const char *ptx = HEAD
        ".global .align 1 .b8 str[] = {104, 105, 0};\n"
        ".global .align 1 .b8 after[2] = {7, 8};\n"
        ".const .align 4 .u32 big[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19,\n"
        "  20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39};\n"
        ".global .align 8 .u64 tab[] = {str, generic(big)+156};\n"
        ".global .align 4 .u32 rows[][2] = {{1, 2}, {3}};\n"
        ".global .align 4 .u32 tail = 99;\n"
        ".visible .entry k(.param .u64 out)\n{\n .reg .b32 %r<12>;\n .reg .b64 %rd<6>;\n"
        " ld.param.u64 %rd1, [out];\n"
        " ld.global.u8 %r1, [str+1];\n ld.global.u8 %r2, [str+2];\n ld.global.u8 %r3, [after];\n"
        " ld.const.u32 %r4, [big+156];\n ld.global.u64 %rd2, [tab];\n ld.global.u8 %r5, [%rd2];\n"
        " ld.global.u64 %rd3, [tab+8];\n ld.u32 %r6, [%rd3];\n"
        " ld.global.u32 %r7, [rows+8];\n ld.global.u32 %r8, [rows+12];\n ld.global.u32 %r9, [tail];\n"
        " st.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r4};\n st.global.v4.u32 [%rd1+16], {%r5, %r6, %r7, %r8};\n"
        " st.global.u32 [%rd1+32], %r9;\n ret;\n}\n";
    check_ptxas_arch(ptx, "sm_80");
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint64_t out = buffer(d, NULL, 9 * 4);
    launch_ok(d, f, 1, 1, (void *[]){&out});
    uint32_t o[9];
    cr_assert_eq(dev_memcpy_dtoh(d, o, out, sizeof o), DEV_OK);
    static const uint32_t want[9] = {105, 0, 7, 39, 104, 39, 3, 0, 99};
    for (int i = 0; i < 9; i++) cr_expect_eq(o[i], want[i], "result %d: %u, want %u", i, o[i], want[i]);
    dev_module_unload(m);
    dev_close(d);
}

/* ISA, Vectors: "Vectors cannot exceed 128-bits in length ... `.reg .v4 .f32 accel;`", their elements
 * selected as "v.x, v.y, v.z, v.w" or "v.r, v.g, v.b, v.a", and a vector register is an ld/st operand as a
 * whole.  Before: `.reg .v4 .f32 v` declared one scalar and `mov.f32 v.x, ...` was refused ("destination
 * of 'mov.f32' is not a register").  A vector stored and loaded whole, elements by both names, a scalar
 * of the same name in an inner block shadowing the vector; the forms the emulator does not take. */
Test(forms, vector_registers) {
    static const char *ptx = HEAD
        ".visible .entry k(.param .u64 out)\n{\n .reg .v4 .f32 v;\n .reg .v2 .b32 w;\n .reg .v2 .u64 %q;\n .reg .b64 o;\n"
        " ld.param.u64 o, [out];\n"
        " mov.f32 v.x, 0f40000000;\n mov.f32 v.y, 0f40400000;\n mov.f32 v.z, 0f40800000;\n mov.f32 v.w, 0f40A00000;\n"
        " st.global.v4.f32 [o], v;\n"                                   /* 2 3 4 5 */
        " ld.global.v2.b32 w, [o+8];\n st.global.v2.b32 [o+16], w;\n"   /* 4 5 */
        " add.f32 v.r, v.g, v.a;\n st.global.f32 [o+24], v.x;\n"         /* 3 + 5 */
        " { .reg .f32 v;\n mov.f32 v, 0f41000000;\n st.global.f32 [o+28], v;\n }\n" /* the inner scalar: 8 */
        " mov.u64 %q.x, 7;\n mov.u64 %q.y, 9;\n st.global.v2.u64 [o+32], %q;\n ret;\n}\n";
    check_ptxas_arch(ptx, "sm_80");
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint64_t out = buffer(d, NULL, 48);
    launch_ok(d, f, 1, 1, (void *[]){&out});
    float o[8];
    uint64_t q[2];
    cr_assert_eq(dev_memcpy_dtoh(d, o, out, sizeof o), DEV_OK);
    cr_assert_eq(dev_memcpy_dtoh(d, q, out + 32, sizeof q), DEV_OK);
    static const float want[8] = {2, 3, 4, 5, 4, 5, 8, 8};
    for (int i = 0; i < 8; i++) cr_expect_eq(o[i], want[i], "result %d: %g, want %g", i, o[i], want[i]);
    cr_expect(q[0] == 7 && q[1] == 9, "%%q: %llu %llu, want 7 9", (unsigned long long)q[0], (unsigned long long)q[1]);
    dev_module_unload(m);
    load_fails(d, HEAD ".visible .entry k()\n{\n .reg .v4 .f32 v<2>;\n ret;\n}\n", "vector registers declared as a range ('v<2>')");
    load_fails(d, HEAD ".visible .entry k()\n{\n .reg .v2 .pred p;\n ret;\n}\n", "vectors of predicates are not supported");
    dev_close(d);
}

/* The sub-byte types (.u4 .s4 .b1, cvt.pack's .u2 .s2) are operand types of mma and cvt.pack only; ptxas refuses
 * a variable or parameter of them ("syntax error").  The emulator loaded `.param .u2 x` as a parameter of no bytes
 * (found by mutating PTX: the Python launcher then failed on its type). */
Test(forms, sub_byte_declarations_refused) {
    TileDevice *d = open_dev(0);
    static const char *decl[] = {".visible .entry k(.param .u2 x)\n{\n ret;\n}\n", ".global .b1 flag;\n",
                                 ".visible .func f(.param .s4 x)\n{\n ret;\n}\n", ".const .align 4 .u4 t[8];\n"};
    for (size_t i = 0; i < sizeof decl / sizeof *decl; i++) {
        char ptx[256];
        snprintf(ptx, sizeof ptx, HEAD "%s", decl[i]);
        cr_expect(ptxas_refuses(ptx, "sm_80"), "ptxas takes %s", decl[i]);
        load_fails(d, ptx, "is no type of a variable or parameter");
    }
    dev_close(d);
}

/* Jump tables as clang writes them at -O0: `tab: .branchtargets L0, L1, ...;` then `brx.idx %r, tab;` goes to
 * the r-th label (the table may span lines; falling into it goes past it); an index past the table stops the
 * launch.  Before: "unsupported directive '.branchtargets' in function body". */
Test(forms, brx_idx_jump_table) {
    static const char *ptx = HEAD
        ".visible .entry k(.param .u64 in, .param .u64 out)\n{\n .reg .b32 %r<8>;\n .reg .b64 %rd<8>;\n"
        " ld.param.u64 %rd1, [in];\n ld.param.u64 %rd2, [out];\n mov.u32 %r1, %tid.x;\n mul.wide.u32 %rd3, %r1, 4;\n"
        " add.s64 %rd4, %rd1, %rd3;\n ld.global.u32 %r2, [%rd4];\n mov.u32 %r3, 1000;\n"
        " $L_brx_0: .branchtargets\n  $C0,\n  $C1,\n  $C2,\n  $C1;\n"
        " brx.idx.uni %r2, $L_brx_0;\n"
        "$C0:\n add.s32 %r3, %r3, 1;\n bra.uni $END;\n"
        "$C1:\n add.s32 %r3, %r3, 20;\n bra.uni $END;\n"
        "$C2:\n add.s32 %r3, %r3, 300;\n"
        "$END:\n add.s64 %rd5, %rd2, %rd3;\n st.global.u32 [%rd5], %r3;\n ret;\n}\n";
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint32_t in[32], o[32];
    for (int i = 0; i < 32; i++) in[i] = (uint32_t)(i % 4);
    uint64_t din = buffer(d, in, sizeof in), dout = buffer(d, NULL, sizeof o);
    launch_ok(d, f, 1, 32, (void *[]){&din, &dout});
    cr_assert_eq(dev_memcpy_dtoh(d, o, dout, sizeof o), DEV_OK);
    static const uint32_t want[4] = {1001, 1020, 1300, 1020};
    for (int i = 0; i < 32; i++) cr_assert_eq(o[i], want[i % 4], "thread %d (index %u): %u", i, in[i], o[i]);
    in[5] = 4; /* one past the table */
    cr_assert_eq(dev_memcpy_htod(d, din, in, sizeof in), DEV_OK);
    launch_fails(d, f, (unsigned[]){1, 1, 1}, (unsigned[]){32, 1, 1}, 0, (void *[]){&din, &dout}, DEV_ERR_LAUNCH,
                 (const char *[]){"invalid branch", "brx.idx index 4 past the 4 targets of its table", NULL});
    dev_module_unload(m);
    dev_close(d);
}

/* Labels are scoped by { } blocks: CUTLASS's inline PTX repeats `LAB_WAIT:` / `DONE:` in every inlined
 * block, and a branch goes to the label of its own block (or the nearest block around it that has one).
 * Before: every branch went to the last label of that name in the function.  Two labels of one name in
 * one block are refused. */
Test(forms, labels_scoped_by_blocks) {
    static const char *ptx = HEAD
        ".visible .entry k(.param .u64 out)\n{\n .reg .pred %p<2>;\n .reg .b32 %r<6>;\n .reg .b64 %rd<2>;\n"
        " ld.param.u64 %rd1, [out];\n mov.u32 %r1, 0;\n mov.u32 %r2, 0;\n"
        " {\n LOOP:\n add.s32 %r1, %r1, 1;\n setp.lt.s32 %p1, %r1, 3;\n @%p1 bra LOOP;\n bra DONE;\n DONE:\n }\n"
        " {\n LOOP:\n add.s32 %r2, %r2, 10;\n setp.lt.s32 %p1, %r2, 50;\n @%p1 bra LOOP;\n"
        "  { bra OUTER; }\n add.s32 %r2, %r2, 1000;\n OUTER:\n }\n"
        " st.global.u32 [%rd1], %r1;\n st.global.u32 [%rd1+4], %r2;\n ret;\n}\n";
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint64_t out = buffer(d, NULL, 8);
    launch_ok(d, f, 1, 1, (void *[]){&out});
    uint32_t o[2];
    cr_assert_eq(dev_memcpy_dtoh(d, o, out, sizeof o), DEV_OK);
    cr_assert_eq(o[0], 3u, "first loop: %u", o[0]);
    cr_assert_eq(o[1], 50u, "second loop: %u", o[1]);
    dev_module_unload(m);
    load_fails(d, HEAD ".visible .entry k()\n{\n { L:\n bra L;\n L:\n }\n ret;\n}\n", "label 'L' defined twice in one block");
    load_fails(d, HEAD ".visible .entry k()\n{\n { L:\n ret;\n }\n bra L;\n}\n", "unknown label or symbol 'L'");
    dev_close(d);
}

/* isspacep for every state space on addresses of each (nvcc -G checks pointers with it). */
Test(forms, isspacep) {
    static const char *ptx = ".version 8.3\n.target sm_90\n.address_size 64\n"
        ".const .align 4 .u32 c0 = 7;\n"
        ".visible .entry k(.param .u64 out)\n{\n .reg .pred %p<6>;\n .reg .b32 %r<8>;\n .reg .b64 %rd<10>;\n"
        " .shared .align 4 .b8 sh[16];\n .local .align 4 .b8 lo[16];\n"
        " ld.param.u64 %rd1, [out];\n mov.u64 %rd2, sh;\n cvta.shared.u64 %rd2, %rd2;\n"
        " mov.u64 %rd3, lo;\n cvta.local.u64 %rd3, %rd3;\n mov.u64 %rd4, out;\n cvta.param.u64 %rd4, %rd4;\n"
        " mov.u64 %rd5, c0;\n cvta.const.u64 %rd5, %rd5;\n"
        " mov.u32 %r7, 0;\n"
        /* one row of five bits per address: global, shared::cta, local, param::entry, const */
        "$ROW:\n"
        " setp.eq.s32 %p5, %r7, 0;\n selp.b64 %rd6, %rd1, 0, %p5;\n setp.eq.s32 %p5, %r7, 1;\n @%p5 mov.u64 %rd6, %rd2;\n"
        " setp.eq.s32 %p5, %r7, 2;\n @%p5 mov.u64 %rd6, %rd3;\n setp.eq.s32 %p5, %r7, 3;\n @%p5 mov.u64 %rd6, %rd4;\n"
        " setp.eq.s32 %p5, %r7, 4;\n @%p5 mov.u64 %rd6, %rd5;\n"
        " isspacep.global %p0, %rd6;\n isspacep.shared::cta %p1, %rd6;\n isspacep.local %p2, %rd6;\n"
        " isspacep.param::entry %p3, %rd6;\n isspacep.const %p4, %rd6;\n"
        " selp.u32 %r1, 1, 0, %p0;\n selp.u32 %r2, 2, 0, %p1;\n selp.u32 %r3, 4, 0, %p2;\n selp.u32 %r4, 8, 0, %p3;\n"
        " selp.u32 %r5, 16, 0, %p4;\n or.b32 %r1, %r1, %r2;\n or.b32 %r1, %r1, %r3;\n or.b32 %r1, %r1, %r4;\n"
        " or.b32 %r1, %r1, %r5;\n mul.wide.u32 %rd7, %r7, 4;\n add.s64 %rd8, %rd1, %rd7;\n st.global.u32 [%rd8], %r1;\n"
        " add.s32 %r7, %r7, 1;\n setp.lt.s32 %p5, %r7, 5;\n @%p5 bra $ROW;\n ret;\n}\n";
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint64_t out = buffer(d, NULL, 5 * 4);
    launch_ok(d, f, 1, 1, (void *[]){&out});
    uint32_t o[5];
    cr_assert_eq(dev_memcpy_dtoh(d, o, out, sizeof o), DEV_OK);
    /* a .const variable is in global memory's window too, as on the GPU */
    static const uint32_t want[5] = {1, 2, 4, 8, 1 | 16};
    for (int i = 0; i < 5; i++) cr_assert_eq(o[i], want[i], "address %d: spaces 0x%x, want 0x%x", i, o[i], want[i]);
    dev_module_unload(m);
    dev_close(d);
}

/* cp.async.mbarrier.arrive: with .noinc an arrival of the phase (here the only one of the 32 expected that
 * each thread makes), without it no net change of the count. */
Test(forms, cp_async_mbarrier_arrive) {
    static const char *ptx = HEAD
        ".visible .entry k(.param .u64 in, .param .u64 out)\n{\n .reg .pred %p<2>;\n .reg .b32 %r<6>;\n .reg .b64 %rd<8>;\n"
        " .shared .align 16 .b8 buf[1024];\n .shared .align 8 .b64 bar;\n"
        " ld.param.u64 %rd1, [in];\n ld.param.u64 %rd2, [out];\n mov.u32 %r1, %tid.x;\n"
        " setp.ne.s32 %p1, %r1, 0;\n @%p1 bra $SKIP;\n mbarrier.init.shared.b64 [bar], 32;\n$SKIP:\n bar.sync 0;\n"
        " mul.wide.u32 %rd3, %r1, 16;\n add.s64 %rd4, %rd1, %rd3;\n mov.u32 %r2, buf;\n cvt.u32.u64 %r3, %rd3;\n"
        " add.s32 %r2, %r2, %r3;\n cp.async.ca.shared.global [%r2], [%rd4], 16;\n"
        " cp.async.mbarrier.arrive.shared.b64 [bar];\n cp.async.mbarrier.arrive.noinc.shared.b64 [bar];\n"
        "$WAIT:\n mbarrier.test_wait.parity.shared.b64 %p1, [bar], 0;\n @!%p1 bra $WAIT;\n"
        " xor.b32 %r4, %r1, 31;\n mul.lo.s32 %r4, %r4, 16;\n mov.u32 %r5, buf;\n add.s32 %r5, %r5, %r4;\n"
        " ld.shared.v4.u32 {%r1, %r2, %r3, %r4}, [%r5];\n add.s64 %rd5, %rd2, %rd3;\n"
        " st.global.v4.u32 [%rd5], {%r1, %r2, %r3, %r4};\n ret;\n}\n";
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint32_t in[256];
    for (int i = 0; i < 256; i++) in[i] = 0x1000u + (uint32_t)i * 7;
    uint64_t din = buffer(d, in, sizeof in), dout = buffer(d, NULL, sizeof in);
    launch_ok(d, f, 1, 32, (void *[]){&din, &dout});
    uint32_t o[128];
    cr_assert_eq(dev_memcpy_dtoh(d, o, dout, sizeof o), DEV_OK);
    for (int t = 0; t < 32; t++)
        for (int j = 0; j < 4; j++) cr_assert_eq(o[t * 4 + j], in[(t ^ 31) * 4 + j], "thread %d word %d", t, j);
    /* 16 threads: 16 arrivals (the arrives without .noinc count for nothing), the phase never completes */
    launch_fails(d, f, (unsigned[]){1, 1, 1}, (unsigned[]){16, 1, 1}, 0, (void *[]){&din, &dout}, DEV_ERR_LAUNCH,
                 (const char *[]){"deadlock", "spinning on an mbarrier", NULL});
    dev_module_unload(m);
    dev_close(d);
}

/* .explicitcluster, .reqnctapercluster and .maxclusterrank: a one-CTA cluster runs; a grid that is not a whole number
 * of clusters is refused at launch. */
Test(limits, cluster_directives) {
    static const char *ptx = ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry one(.param .u64 out)\n.explicitcluster\n.reqnctapercluster 1, 1, 1\n"
        "{\n .reg .b32 %r<3>;\n .reg .b64 %rd<2>;\n ld.param.u64 %rd1, [out];\n mov.u32 %r1, %cluster_nctarank;\n"
        " st.global.u32 [%rd1], %r1;\n ret;\n}\n"
        ".visible .entry two(.param .u64 out)\n.reqnctapercluster 2, 1, 1\n"
        "{\n ret;\n}\n" /* .maxclusterrank on a kernel of its own (ptxas: "Conflicting directives" with .reqnctapercluster) */
        ".visible .entry three(.param .u64 out)\n.maxclusterrank 2\n"
        "{\n ret;\n}\n";
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "one", &m);
    uint64_t out = buffer(d, NULL, 4);
    launch_ok(d, f, 2, 32, (void *[]){&out});
    uint32_t o;
    cr_assert_eq(dev_memcpy_dtoh(d, &o, out, 4), DEV_OK);
    cr_assert_eq(o, 1u);
    TileDevFunction *g = NULL;
    cr_assert_eq(dev_module_get_function(m, "two", &g), DEV_OK);
    launch_fails(d, g, (unsigned[]){3, 1, 1}, (unsigned[]){32, 1, 1}, 0, (void *[]){&out}, DEV_ERR_INVALID,
                 (const char *[]){"grid (3,1,1) is not a whole number of (2,1,1) clusters", NULL});
    launch_ok(d, g, 4, 32, (void *[]){&out}); /* two clusters of two (tests/test_emu_cluster.c runs real ones) */
    dev_module_unload(m);
    dev_close(d);
}

/* Cache policies and hints (createpolicy, .L2::cache_hint's operand, discard, applypriority) are accepted
 * with no effect; shared -> shared bulk copies; cp.reduce.async.bulk's arithmetic per type: .add.noftz.f16
 * (rounded once), .add.f32, .inc.u32 (wraps to 0 past the bound), .xor.b64.  Before: each
 * of these was refused at load. */
Test(forms, cache_hints_and_bulk_reductions) {
    static const char *ptx = ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry k(.param .u64 g)\n{\n .reg .pred %p<2>;\n .reg .b32 %r<8>;\n .reg .b64 %rd<8>;\n"
        " .shared .align 16 .b8 s[256];\n .shared .align 8 .b64 bar;\n"
        " ld.param.u64 %rd1, [g];\n"
        " createpolicy.fractional.L2::evict_last.L2::evict_unchanged.b64 %rd2, 0f3F800000;\n"
        " createpolicy.fractional.L2::evict_first.b64 %rd3;\n"
        " ld.global.L2::cache_hint.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1], %rd2;\n"
        " st.shared.v4.u32 [s], {%r1, %r2, %r3, %r4};\n"
        " ld.global.L2::cache_hint.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1+16], %rd3;\n"
        " st.shared.v4.u32 [s+16], {%r1, %r2, %r3, %r4};\n"
        " ld.global.L2::cache_hint.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1+32], %rd3;\n"
        " st.shared.v4.u32 [s+32], {%r1, %r2, %r3, %r4};\n"
        " ld.global.L2::cache_hint.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1+48], %rd3;\n"
        " st.shared.v4.u32 [s+48], {%r1, %r2, %r3, %r4};\n"
        " discard.global.L2 [%rd1+128], 128;\n applypriority.global.L2::evict_normal [%rd1+128], 128;\n"
        " mbarrier.init.shared::cta.b64 [bar], 1;\n fence.proxy.async.shared::cta;\n"
        " mov.u32 %r5, s;\n add.u32 %r6, %r5, 64;\n mov.u32 %r7, bar;\n"
        " mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], 64;\n"
        " cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r6], [%r5], 64, [%r7];\n"
        "$W:\n mbarrier.try_wait.parity.shared::cta.b64 %p1, [bar], 0;\n @!%p1 bra $W;\n"
        /* s[64..128) is the copy of s[0..64): f16 x 8, f32 x 4, u32 x 4, b64 x 2 */
        " add.s64 %rd4, %rd1, 64;\n"
        " cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.f16 [%rd4], [s+64], 16;\n"
        " cp.reduce.async.bulk.global.shared::cta.bulk_group.L2::cache_hint.add.f32 [%rd4+16], [s+80], 16, %rd2;\n"
        " cp.reduce.async.bulk.global.shared::cta.bulk_group.inc.u32 [%rd4+32], [s+96], 16;\n"
        " cp.reduce.async.bulk.global.shared::cta.bulk_group.xor.b64 [%rd4+48], [s+112], 16;\n"
        " cp.async.bulk.commit_group;\n cp.async.bulk.wait_group.read 0;\n ret;\n}\n";
    TileDevice *d = NULL;
    char *err = NULL;
    DevOptions o = {.emu_host_threads = 2};
    cr_assert_eq(dev_open("emu:sm_90a", &o, &d, &err), DEV_OK, "%s", err ? err : "");
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    /* g[0..64): the sources; g[64..128): the destinations of the reductions */
    uint8_t g[256];
    uint16_t *h = (uint16_t *)g, *hd = (uint16_t *)(g + 64);
    float *fs = (float *)(g + 16), *fd = (float *)(g + 80);
    uint32_t *us = (uint32_t *)(g + 32), *ud = (uint32_t *)(g + 96);
    uint64_t *bs = (uint64_t *)(g + 48), *bd = (uint64_t *)(g + 112);
    static const uint16_t h_src[8] = {0x3C00, 0x3C01, 0xC000, 0x7BFF, 0x0001, 0x8000, 0x3555, 0x7E00};
    static const uint16_t h_dst[8] = {0x3C00, 0x1000, 0x4000, 0x7BFF, 0x0001, 0x0000, 0x3555, 0x3C00};
    /* 1 + 1, (1 + 2^-10) + 2^-11 (a tie: to even), -2 + 2, max + max (overflow: inf), two subnormals (no flush),
     * -0 + 0, x + x, NaN + 1 */
    static const uint16_t h_want[8] = {0x4000, 0x3C02, 0x0000, 0x7C00, 0x0002, 0x0000, 0x3955, 0x7FFF};
    memcpy(h, h_src, 16);
    memcpy(hd, h_dst, 16);
    float f_src[4] = {1.0f, -3.0f, 0.5f, 2.0f}, f_dst[4] = {2.0f, -1.0f, 5.0f, -0.25f}, f_want[4] = {3.0f, -4.0f, 5.5f, 1.75f};
    memcpy(fs, f_src, 16);
    memcpy(fd, f_dst, 16);
    uint32_t u_src[4] = {5, 5, 0, 7}, u_dst[4] = {3, 5, 0, 9}, u_want[4] = {4, 0, 0, 0};
    memcpy(us, u_src, 16);
    memcpy(ud, u_dst, 16);
    uint64_t b_src[2] = {0xF0F0F0F0F0F0F0F0ull, 1}, b_dst[2] = {0xFFFF0000FFFF0000ull, 3};
    memcpy(bs, b_src, 16);
    memcpy(bd, b_dst, 16);
    memset(g + 128, 0x5A, 128);
    uint64_t dg = 0;
    cr_assert_eq(dev_malloc(d, sizeof g, &dg), DEV_OK);
    cr_assert_eq(dev_memcpy_htod(d, dg, g, sizeof g), DEV_OK);
    launch_ok(d, f, 1, 1, (void *[]){&dg});
    uint8_t r[256];
    cr_assert_eq(dev_memcpy_dtoh(d, r, dg, sizeof r), DEV_OK);
    for (int i = 0; i < 8; i++) {
        uint16_t got;
        memcpy(&got, r + 64 + 2 * i, 2);
        cr_assert_eq(got, h_want[i], "f16 add %d: got 0x%04x, want 0x%04x", i, got, h_want[i]);
    }
    for (int i = 0; i < 4; i++) {
        float got;
        memcpy(&got, r + 80 + 4 * i, 4);
        cr_assert_eq(got, f_want[i], "f32 add %d: got %g, want %g", i, got, f_want[i]);
        uint32_t gu;
        memcpy(&gu, r + 96 + 4 * i, 4);
        cr_assert_eq(gu, u_want[i], "u32 inc %d: got %u, want %u", i, gu, u_want[i]);
    }
    for (int i = 0; i < 2; i++) {
        uint64_t gb;
        memcpy(&gb, r + 112 + 8 * i, 8);
        cr_assert_eq(gb, b_src[i] ^ b_dst[i], "b64 xor %d", i);
    }
    for (int i = 128; i < 256; i++) cr_assert_eq(r[i], 0x5A, "discarded byte %d changed", i);
    dev_module_unload(m);
    load_fails(d, ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 g)\n{\n .reg .b64 %rd<2>;\n"
               " .shared .align 16 .b8 s[64];\n ld.param.u64 %rd1, [g];\n"
               " cp.reduce.async.bulk.global.shared::cta.bulk_group.inc.f32 [%rd1], [s], 16;\n ret;\n}\n",
               "no .inc reduction of .f32 elements");
    load_fails(d, ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 g)\n{\n .reg .b32 %r<2>;\n"
               " .reg .b64 %rd<2>;\n ld.param.u64 %rd1, [g];\n ld.global.L2::cache_hint.u32 %r1, [%rd1];\n ret;\n}\n",
               "needs a cache-policy operand last");
    dev_close(d);
}

/* bmsk and szext, both modes, at the edges (positions and widths 0, 31, 32, 33). */
Test(forms, bmsk_and_szext) {
    static const char *ptx = HEAD
        ".visible .entry k(.param .u64 out, .param .u32 a, .param .u32 b)\n{\n .reg .b32 %r<8>;\n .reg .b64 %rd<2>;\n"
        " ld.param.u64 %rd1, [out];\n ld.param.u32 %r1, [a];\n ld.param.u32 %r2, [b];\n"
        " bmsk.clamp.b32 %r3, %r1, %r2;\n bmsk.wrap.b32 %r4, %r1, %r2;\n"
        " szext.clamp.s32 %r5, %r1, %r2;\n szext.wrap.u32 %r6, %r1, %r2;\n"
        " st.global.v4.u32 [%rd1], {%r3, %r4, %r5, %r6};\n ret;\n}\n";
    static const struct { uint32_t a, b, want[4]; } cases[] = {
        {4, 8, {0x00000FF0u, 0x00000FF0u, 0x00000004u, 0x00000004u}},
        {0x80, 8, {0x00000000u, 0x000000FFu, 0xFFFFFF80u, 0x00000080u}}, /* bmsk: position 128 clamps to 32 (none), wraps to 0 */
        {31, 4, {0x80000000u, 0x80000000u, 0xFFFFFFFFu, 0x0000000Fu}},
        {0, 33, {0xFFFFFFFFu, 0x00000001u, 0x00000000u, 0x00000000u}},  /* width 33: clamps to 32, wraps to 1 */
        {0xFFFF8000u, 16, {0x00000000u, 0x0000FFFFu, 0xFFFF8000u, 0x00008000u}},  /* bmsk.wrap: position 0 */
        {5, 0, {0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u}},
    };
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint64_t out = buffer(d, NULL, 16);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t a = cases[i].a, b = cases[i].b, got[4];
        launch_ok(d, f, 1, 1, (void *[]){&out, &a, &b});
        cr_assert_eq(dev_memcpy_dtoh(d, got, out, sizeof got), DEV_OK);
        for (int k = 0; k < 4; k++)
            cr_expect_eq(got[k], cases[i].want[k], "case %zu (a 0x%x, b %u) result %d: 0x%08x, want 0x%08x", i, a, b, k, got[k],
                         cases[i].want[k]);
    }
    dev_module_unload(m);
    dev_close(d);
}
