/* test_emu_isa.c - rules of the PTX ISA the emulator once got wrong, each
 * checked with hand-written PTX whose expected result comes from the ISA's
 * text (quoted in the test's comment), not from the emulator:
 *   1. cp.async's fourth operand is src-size (an integer) or ignore-src (a
 *      predicate): both polarities, with and without a cache policy;
 *   2. cvt .satfinite to tf32 saturates to tf32's largest finite value;
 *   3. mbarrier.arrive_drop.expect_tx (refused before), %is_explicit_cluster
 *      of a launch given a 1x1x1 cluster; what the ISA does not have or the
 *      emulator cannot hold is refused at load: s8 wgmma shapes the ISA
 *      does not list;
 *   4. forms the emulator refused: movmatrix, prefetchu, %globaltimer_lo/_hi,
 *      %aggr_smem_size, %current_graph_exec, ld [a].unified, pmevent, brkpt
 *      (stops the launch);
 *   5. vector atom/red and .b128 registers: test_emu_isa_vector.c;
 *   6. sign bits: copysign keeps a NaN's payload, .xorsign.abs takes a NaN
 *      operand's sign; %is_explicit_cluster is a .pred (only mov.pred reads
 *      it); .func parameters and return values in the .reg state space;
 *   7. negated predicate operands (!%p) of cp.async's ignore-src and selp; '!'
 *      on a register that is no predicate is refused;
 *   8. scalar rules probeS found broken: cvt.rn.relu.f16x2 from f8 pairs, one
 *      rounding in f16/bf16 fma, cvt.sat.f64 from integers, float->int cvt of
 *      NaN, constant expressions as operands, rcp/rsqrt.approx.ftz.f64,
 *      %clock_hi and %pm0..7(_64);
 *   9. lop3.and/.or with a predicate destination (PTX 8.2), refused before. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "include/tile/tile.h"
#include "runtime/device.h"
#include "test_ptxas.h"
#include "emu_isa_rules.h"

/* ISA, cp.async: "cp.async.ca.shared{::cta}.global [dst], [src], cp-size{, ignore-src}{, cache-policy};
 * The optional and non-immediate predicate argument ignore-src specifies whether the data from the
 * source location src should be ignored completely.  If the source data is ignored then zeros will
 * be copied to destination dst.  If the argument ignore-src is not specified then it defaults to
 * False."  The emulator took the predicate for src-size: true copied 1 byte, false none. */
Test(isa, cp_async_ignore_src) {
    static const char *ptx = HEAD80
        ".visible .entry k(.param .u64 in, .param .u64 out)\n{\n .reg .pred %p<3>;\n .reg .b32 %r<12>;\n .reg .b64 %rd<6>;\n"
        " .shared .align 16 .b8 buf[128];\n"
        " ld.param.u64 %rd1, [in];\n ld.param.u64 %rd2, [out];\n mov.u32 %r1, buf;\n"
        " mov.u32 %r2, 0xdeadbeef;\n mov.u32 %r3, 0;\n"
        "$FILL:\n add.s32 %r4, %r1, %r3;\n st.shared.u32 [%r4], %r2;\n add.s32 %r3, %r3, 4;\n"
        " setp.lt.u32 %p1, %r3, 128;\n @%p1 bra $FILL;\n"
        " setp.eq.u32 %p1, 1, 1;\n setp.eq.u32 %p2, 1, 0;\n mov.u32 %r5, 5;\n createpolicy.fractional.L2::evict_last.b64 %rd3, 1.0;\n"
        " cp.async.ca.shared.global [%r1], [%rd1], 16, %p1;\n"                                     /* ignored: zeros */
        " cp.async.cg.shared.global [%r1+16], [%rd1], 16, %p2;\n"                                 /* copied */
        " cp.async.cg.shared.global.L2::cache_hint [%r1+32], [%rd1], 16, %p2, %rd3;\n"             /* copied */
        " cp.async.cg.shared.global.L2::cache_hint [%r1+48], [%rd1], 16, %p1, %rd3;\n"             /* zeros */
        " cp.async.ca.shared.global [%r1+64], [%rd1], 4, %p2;\n"                                  /* copied */
        " cp.async.ca.shared.global [%r1+72], [%rd1], 8, %p1;\n"                                  /* zeros */
        " cp.async.ca.shared.global [%r1+80], [%rd1], 16, %r5;\n"                                 /* src-size 5 */
        " cp.async.ca.shared.global [%r1+96], [%rd1], 16, 3;\n"                                   /* src-size 3 */
        " cp.async.wait_all;\n"
        " mov.u32 %r3, 0;\n"
        "$COPY:\n add.s32 %r4, %r1, %r3;\n ld.shared.u32 %r6, [%r4];\n cvt.u64.u32 %rd4, %r3;\n add.s64 %rd5, %rd2, %rd4;\n"
        " st.global.u32 [%rd5], %r6;\n add.s32 %r3, %r3, 4;\n setp.lt.u32 %p1, %r3, 128;\n @%p1 bra $COPY;\n ret;\n}\n";
    TileDevice *d = open_dev("emu");
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, &m);
    uint32_t in[4] = {0x04030201u, 0x08070605u, 0x0c0b0a09u, 0x100f0e0du}, out[32];
    uint64_t din = buffer(d, in, sizeof in), dout = buffer(d, NULL, sizeof out);
    launch_ok(d, f, 1, (void *[]){&din, &dout});
    cr_assert_eq(dev_memcpy_dtoh(d, out, dout, sizeof out), DEV_OK);
    const uint32_t D = 0xdeadbeefu;
    const uint32_t want[32] = {0, 0, 0, 0,                                           /* 0: ignored */
                               in[0], in[1], in[2], in[3],                           /* 16: copied */
                               in[0], in[1], in[2], in[3],                           /* 32: copied, with a policy */
                               0, 0, 0, 0,                                           /* 48: ignored, with a policy */
                               in[0], D, 0, 0,                                       /* 64: 4 copied; 72: 8 ignored */
                               in[0], in[1] & 0xff, 0, 0,                            /* 80: 5 of 16 bytes */
                               in[0] & 0xffffff, 0, 0, 0,                            /* 96: 3 of 16 bytes */
                               D, D, D, D};
    for (int i = 0; i < 32; i++) cr_expect_eq(out[i], want[i], "byte %d: %#x, want %#x", 4 * i, out[i], want[i]);
    dev_module_unload(m);
    dev_close(d);
}

/* ISA, cvt: ".satfinite: ... if the absolute value of input (after rounding) exceeds the maximum
 * finite value of the destination format, the result is the sign-preserved maximum finite value."
 * tf32 keeps f32's 8 exponent bits and 10 mantissa bits: (2 - 2^-10) * 2^127, bits 0x7F7FE000.  The
 * emulator saturated to 0x7F7FC000 (9 mantissa bits' worth), below values it rounded up to. */
Test(isa, cvt_satfinite_tf32_max) { /* .rn/.rz with .satfinite: PTX 8.6, sm_100 (ptxas) */
    static const char *ptx = ".version 8.6\n.target sm_100a\n.address_size 64\n"
        ".visible .entry k(.param .u64 in, .param .u64 out)\n{\n .reg .b32 %r<8>;\n .reg .f32 %f<2>;\n .reg .b64 %rd<8>;\n"
        " ld.param.u64 %rd1, [in];\n ld.param.u64 %rd2, [out];\n mov.u32 %r1, %tid.x;\n mul.wide.u32 %rd3, %r1, 4;\n"
        " add.s64 %rd4, %rd1, %rd3;\n ld.global.f32 %f1, [%rd4];\n"
        " cvt.rna.satfinite.tf32.f32 %r2, %f1;\n add.s64 %rd5, %rd2, %rd3;\n st.global.u32 [%rd5], %r2;\n"
        " cvt.rn.satfinite.tf32.f32 %r3, %f1;\n add.s64 %rd6, %rd5, 32;\n st.global.u32 [%rd6], %r3;\n"
        " cvt.rz.satfinite.tf32.f32 %r4, %f1;\n add.s64 %rd7, %rd6, 32;\n st.global.u32 [%rd7], %r4;\n ret;\n}\n";
    TileDevice *d = open_dev("emu");
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, &m);
    const uint32_t bits[8] = {0x7F7FE000u, 0x7F7FD000u, 0x7F7FF000u, 0x7F7FFFFFu, 0xFF7FF000u, 0x7F800000u, 0x3F800000u, 0x00000000u};
    /* rna and rn round 0x7F7FD000 (a tie / above half) up to the maximum, rz truncates it; past the maximum: the maximum */
    const uint32_t rna[8] = {0x7F7FE000u, 0x7F7FE000u, 0x7F7FE000u, 0x7F7FE000u, 0xFF7FE000u, 0x7F7FE000u, 0x3F800000u, 0};
    const uint32_t rz[8] = {0x7F7FE000u, 0x7F7FC000u, 0x7F7FE000u, 0x7F7FE000u, 0xFF7FE000u, 0x7F7FE000u, 0x3F800000u, 0};
    uint32_t out[24];
    uint64_t din = buffer(d, bits, sizeof bits), dout = buffer(d, NULL, sizeof out);
    launch_ok(d, f, 8, (void *[]){&din, &dout});
    cr_assert_eq(dev_memcpy_dtoh(d, out, dout, sizeof out), DEV_OK);
    for (int i = 0; i < 8; i++) {
        cr_expect_eq(out[i], rna[i], "rna %#x: %#x, want %#x", bits[i], out[i], rna[i]);
        cr_expect_eq(out[16 + i], rz[i], "rz %#x: %#x, want %#x", bits[i], out[16 + i], rz[i]);
    }
    cr_expect_eq(out[8 + 3], 0x7F7FE000u, "rn FLT_MAX: %#x", out[8 + 3]);
    dev_module_unload(m);
    dev_close(d);
}

/* ISA, mbarrier.arrive_drop: "mbarrier.arrive_drop{.sem}{.scope}{.shared{::cta}}.expect_tx.b64 state,
 * [addr], txCount" performs an expect-tx operation before the arrive-on operation, and the drop
 * lowers the expected arrival count of the next phases by one.  Two threads, count 2: thread 0
 * arrive_drop.expect_tx 16 bytes, thread 1 arrives; the phase waits for the 16 bytes, which
 * thread 1's complete_tx brings.  Next phase: one arrival (the drop) completes it. */
Test(isa, mbarrier_arrive_drop_expect_tx) {
    static const char *ptx = HEAD90
        ".visible .entry k(.param .u64 out)\n{\n .reg .pred %p<4>;\n .reg .b32 %r<8>;\n .reg .b64 %rd<8>;\n"
        " .shared .align 8 .b64 bar;\n"
        " ld.param.u64 %rd1, [out];\n mov.u32 %r1, %tid.x;\n setp.eq.u32 %p1, %r1, 0;\n"
        " @%p1 mbarrier.init.shared::cta.b64 [bar], 2;\n bar.sync 0;\n"
        " @%p1 mbarrier.arrive_drop.expect_tx.shared::cta.b64 %rd2, [bar], 16;\n"
        " @!%p1 mbarrier.arrive.shared::cta.b64 %rd2, [bar];\n"
        " mbarrier.test_wait.parity.shared::cta.b64 %p2, [bar], 0;\n selp.u32 %r2, 1, 0, %p2;\n bar.sync 0;\n"
        " @!%p1 mbarrier.complete_tx.shared::cta.b64 [bar], 16;\n bar.sync 0;\n"
        " mbarrier.test_wait.parity.shared::cta.b64 %p2, [bar], 0;\n selp.u32 %r3, 1, 0, %p2;\n bar.sync 0;\n"
        " @!%p1 mbarrier.arrive.shared::cta.b64 %rd3, [bar];\n bar.sync 0;\n"
        " mbarrier.test_wait.parity.shared::cta.b64 %p2, [bar], 1;\n selp.u32 %r4, 1, 0, %p2;\n"
        " mul.wide.u32 %rd4, %r1, 12;\n add.s64 %rd5, %rd1, %rd4;\n st.global.u32 [%rd5], %r2;\n"
        " st.global.u32 [%rd5+4], %r3;\n st.global.u32 [%rd5+8], %r4;\n ret;\n}\n";
    TileDevice *d = open_dev("emu:sm_90a");
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, &m);
    uint32_t out[6];
    uint64_t dout = buffer(d, NULL, sizeof out);
    launch_ok(d, f, 2, (void *[]){&dout});
    cr_assert_eq(dev_memcpy_dtoh(d, out, dout, sizeof out), DEV_OK);
    for (int t = 0; t < 2; t++) {
        cr_expect_eq(out[3 * t], 0, "thread %d: phase 0 complete before its 16 bytes", t);
        cr_expect_eq(out[3 * t + 1], 1, "thread %d: phase 0 not complete after complete_tx", t);
        cr_expect_eq(out[3 * t + 2], 1, "thread %d: phase 1 not completed by one arrival after the drop", t);
    }
    dev_module_unload(m);
    dev_close(d);
}

/* ISA, Special registers: "%is_explicit_cluster ... indicating whether the cluster launch is explicitly
 * specified by user": a launch given a 1 x 1 x 1 cluster is one; a launch without a cluster is not. */
Test(isa, is_explicit_cluster_of_a_one_cta_cluster) {
    static const char *ptx = HEAD90
        ".visible .entry k(.param .u64 out)\n{\n .reg .pred %p<2>;\n .reg .b32 %r<4>;\n .reg .b64 %rd<4>;\n"
        " ld.param.u64 %rd1, [out];\n mov.pred %p1, %is_explicit_cluster;\n selp.u32 %r1, 1, 0, %p1;\n"
        " mov.u32 %r2, %ctaid.x;\n mul.wide.u32 %rd2, %r2, 4;\n add.s64 %rd3, %rd1, %rd2;\n st.global.u32 [%rd3], %r1;\n ret;\n}\n";
    TileDevice *d = open_dev("emu:sm_90a");
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, &m);
    uint32_t out[2];
    uint64_t dout = buffer(d, NULL, sizeof out);
    const unsigned grid[3] = {2, 1, 1}, block[3] = {1, 1, 1}, one[3] = {1, 1, 1};
    cr_assert_eq(dev_launch_flags(f, grid, block, 0, NULL, (void *[]){&dout}, 0, one), DEV_OK, "%s", dev_last_error(d));
    cr_assert_eq(dev_synchronize(d), DEV_OK);
    cr_assert_eq(dev_memcpy_dtoh(d, out, dout, sizeof out), DEV_OK);
    cr_expect(out[0] == 1 && out[1] == 1, "1x1x1 cluster launch: %u %u", out[0], out[1]);
    cr_assert_eq(dev_launch_flags(f, grid, block, 0, NULL, (void *[]){&dout}, 0, NULL), DEV_OK, "%s", dev_last_error(d));
    cr_assert_eq(dev_synchronize(d), DEV_OK);
    cr_assert_eq(dev_memcpy_dtoh(d, out, dout, sizeof out), DEV_OK);
    cr_expect(out[0] == 0 && out[1] == 0, "launch without a cluster: %u %u", out[0], out[1]);
    dev_module_unload(m);
    dev_close(d);
}

/* ISA, copysign: "Copy sign of a into b" (d = b with a's sign bit).  The hardware does it with a bit
 * operation (LOP3: (b & 0x7fffffff) | (a & 0x80000000)), so a NaN b keeps its payload and takes a's sign:
 * Triton's libdevice.copysign(nan, -1) then signbit() must give 1.  The emulator computed copysign in
 * double and returned the canonical NaN 0x7fffffff for every NaN (probeN finding 2). */
Test(isa, copysign_keeps_nan_payload) {
    static const char *ptx = HEAD80
        ".visible .entry k(.param .u64 out)\n{\n .reg .f32 %f<20>;\n .reg .f64 %fd<8>;\n .reg .b64 %rd<2>;\n"
        " ld.param.u64 %rd1, [out];\n"
        " mov.f32 %f1, 0fBF800000;\n mov.f32 %f2, 0f7FC00000;\n copysign.f32 %f3, %f1, %f2;\n st.global.f32 [%rd1], %f3;\n"
        " mov.f32 %f4, 0fC0000000;\n mov.f32 %f5, 0f7F87743B;\n copysign.f32 %f6, %f4, %f5;\n st.global.f32 [%rd1+4], %f6;\n"
        " mov.f32 %f7, 0f3F800000;\n mov.f32 %f8, 0fFFC00000;\n copysign.f32 %f9, %f7, %f8;\n st.global.f32 [%rd1+8], %f9;\n"
        " mov.f32 %f10, 0f7FC00001;\n mov.f32 %f11, 0fBF800000;\n copysign.f32 %f12, %f10, %f11;\n st.global.f32 [%rd1+12], %f12;\n"
        " mov.f32 %f13, 0f80000000;\n mov.f32 %f14, 0f00000001;\n copysign.f32 %f15, %f13, %f14;\n st.global.f32 [%rd1+16], %f15;\n"
        " mov.f64 %fd1, 0d8000000000000000;\n mov.f64 %fd2, 0d7FF8000000000123;\n copysign.f64 %fd3, %fd1, %fd2;\n"
        " st.global.f64 [%rd1+24], %fd3;\n"
        " mov.f64 %fd4, 0d3FF0000000000000;\n mov.f64 %fd5, 0dFFF0000000000001;\n copysign.f64 %fd6, %fd4, %fd5;\n"
        " st.global.f64 [%rd1+32], %fd6;\n ret;\n}\n";
    check_ptxas_arch(ptx, "sm_80");
    TileDevice *d = open_dev("emu");
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, &m);
    uint32_t out[10];
    uint64_t dout = buffer(d, NULL, sizeof out);
    launch_ok(d, f, 1, (void *[]){&dout});
    cr_assert_eq(dev_memcpy_dtoh(d, out, dout, sizeof out), DEV_OK);
    const uint32_t want[5] = {0xFFC00000u, 0xFF87743Bu, 0x7FC00000u, 0x3F800000u, 0x80000001u};
    for (int i = 0; i < 5; i++) cr_expect_eq(out[i], want[i], "f32 case %d: %#x, want %#x", i, out[i], want[i]);
    uint64_t d0, d1;
    memcpy(&d0, &out[6], 8);
    memcpy(&d1, &out[8], 8);
    cr_expect_eq(d0, 0xFFF8000000000123ull, "f64 NaN: %#llx", (unsigned long long)d0);
    cr_expect_eq(d1, 0x7FF0000000000001ull, "f64 signalling NaN: %#llx", (unsigned long long)d1);
    dev_module_unload(m);
    dev_close(d);
}

/* ISA, max/min: ".xorsign.abs: the sign bit of the result is the XOR of the sign bits of a and b, and the
 * absolute value of the result is the maximum (minimum) of the absolute values"; a NaN operand loses to a
 * number (no .NaN).  The XOR takes the sign bits, a NaN's too: (1, -NaN) gives -1 in every type.  The
 * emulator took the signs from the decoded values, and an f16 NaN decodes signless (probeN finding 3). */
Test(isa, xorsign_takes_a_nan_operands_sign) {
    static const char *ptx = ".version 8.0\n.target sm_86\n.address_size 64\n"
        ".visible .entry k(.param .u64 out)\n{\n .reg .b32 %r<20>;\n .reg .b16 %h<8>;\n .reg .b64 %rd<2>;\n"
        " ld.param.u64 %rd1, [out];\n"
        " mov.b32 %r1, 0x3C003C00;\n mov.b32 %r2, 0xFE00FE00;\n max.xorsign.abs.f16x2 %r3, %r1, %r2;\n st.global.b32 [%rd1], %r3;\n"
        " mov.b32 %r4, 0x28263C00;\n mov.b32 %r5, 0xFC0A3C00;\n max.xorsign.abs.f16x2 %r6, %r4, %r5;\n st.global.b32 [%rd1+4], %r6;\n"
        " mov.b32 %r7, 0x3F803F80;\n mov.b32 %r8, 0xFFC17FC1;\n min.xorsign.abs.bf16x2 %r9, %r7, %r8;\n st.global.b32 [%rd1+8], %r9;\n"
        " mov.b16 %h1, 0xFE00;\n mov.b16 %h2, 0x4000;\n max.xorsign.abs.f16 %h3, %h1, %h2;\n st.global.b16 [%rd1+12], %h3;\n"
        " mov.b16 %h4, 0x3C00;\n mov.b16 %h5, 0xFD00;\n min.xorsign.abs.f16 %h6, %h4, %h5;\n st.global.b16 [%rd1+14], %h6;\n"
        " mov.b16 %h4, 0xBF80;\n mov.b16 %h5, 0xFFC0;\n max.xorsign.abs.bf16 %h7, %h4, %h5;\n st.global.b16 [%rd1+16], %h7;\n"
        " mov.b32 %r10, 0x3F800000;\n mov.b32 %r11, 0xFFC00000;\n max.xorsign.abs.f32 %r12, %r10, %r11;\n st.global.b32 [%rd1+20], %r12;\n"
        " ret;\n}\n";
    check_ptxas_arch(ptx, "sm_86");
    TileDevice *d = open_dev("emu:sm_86");
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, &m);
    uint32_t out[6];
    uint64_t dout = buffer(d, NULL, sizeof out);
    launch_ok(d, f, 1, (void *[]){&dout});
    cr_assert_eq(dev_memcpy_dtoh(d, out, dout, sizeof out), DEV_OK);
    const uint32_t want[6] = {0xBC00BC00u,  /* f16x2: (1, 1) x (-NaN, -NaN): -1 in both halves */
                              0xA8263C00u,  /* f16x2: high 0x2826 x -NaN with a payload: -0x2826; low 1 x 1: 1 */
                              0xBF803F80u,  /* bf16x2: high 1 x -NaN: -1; low 1 x +NaN: 1 */
                              0xBC00C000u,  /* f16: low -NaN x 2: -2; high 1 x -NaN: -1 */
                              0x3F80u,      /* bf16: -1 x -NaN: +1 (the upper half is not written) */
                              0xBF800000u}; /* f32: 1 x -NaN: -1 */
    for (int i = 0; i < 6; i++)
        cr_expect_eq(out[i] & (i == 4 ? 0xFFFFu : ~0u), want[i], "case %d: %#x, want %#x", i, out[i], want[i]);
    dev_module_unload(m);
    dev_close(d);
}

/* ISA, slct: "d = (c >= 0) ? a : b ... If operand c is NaN, the comparison is ordered and operand b is
 * selected"; "slct.ftz.dtype.f32 flushes subnormal values of operand c to sign-preserving zero, and operand
 * a is selected".  abs: "For abs.f64, NaN input is passed through unchanged" (its sign too).  The emulator
 * selected a for a NaN c, b for a negative subnormal c under .ftz, and cleared a NaN's sign in abs.f64
 * (probeS F1-F3). */
Test(isa, slct_nan_and_ftz_abs_f64_nan) {
    static const char *ptx = HEAD80
        ".visible .entry k(.param .u64 in, .param .u64 out)\n{\n .reg .b32 %r<8>;\n .reg .f32 %f<4>;\n .reg .b64 %rd<8>;\n"
        " .reg .f64 %fd<4>;\n"
        " ld.param.u64 %rd1, [in];\n ld.param.u64 %rd2, [out];\n mov.u32 %r1, %tid.x;\n"
        " mul.wide.u32 %rd3, %r1, 4;\n add.s64 %rd4, %rd1, %rd3;\n ld.global.f32 %f1, [%rd4];\n"
        " mul.wide.u32 %rd3, %r1, 16;\n add.s64 %rd5, %rd2, %rd3;\n"
        " slct.u32.f32 %r2, 1, 2, %f1;\n st.global.u32 [%rd5], %r2;\n"
        " slct.ftz.u32.f32 %r3, 1, 2, %f1;\n st.global.u32 [%rd5+4], %r3;\n"
        " slct.ftz.f64.f32 %fd1, 0d3FF0000000000000, 0d4000000000000000, %f1;\n cvt.rzi.u32.f64 %r4, %fd1;\n"
        " st.global.u32 [%rd5+8], %r4;\n"
        " mov.b64 %fd2, 0dFFF8000000001234;\n abs.f64 %fd3, %fd2;\n mov.b64 {%r5, %r6}, %fd3;\n"
        " st.global.u32 [%rd5+12], %r6;\n ret;\n}\n";
    check_ptxas_arch(ptx, "sm_80");
    TileDevice *d = open_dev("emu");
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, &m);
    /* c: NaNs of both signs, a signalling NaN, -subnormals, +subnormal, -0, 0, -1, 1 */
    const uint32_t c[] = {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0x80000001u, 0x807FFFFFu, 0x00000001u, 0x80000000u, 0, 0xBF800000u,
                          0x3F800000u};
    enum { N = sizeof c / sizeof c[0] };
    /* plain: NaN b; -subnormal b (it is below zero); +subnormal, -0, 0 a; -1 b; 1 a.  ftz: -subnormal a. */
    const uint32_t plain[N] = {2, 2, 2, 2, 2, 1, 1, 1, 2, 1}, ftz[N] = {2, 2, 2, 1, 1, 1, 1, 1, 2, 1};
    uint64_t din = buffer(d, c, sizeof c), dout = buffer(d, NULL, N * 16);
    cr_assert_eq(dev_launch(f, 1, 1, 1, N, 1, 1, 0, NULL, (void *[]){&din, &dout}), DEV_OK, "%s", dev_last_error(d));
    uint32_t out[N * 4];
    cr_assert_eq(dev_memcpy_dtoh(d, out, dout, sizeof out), DEV_OK);
    for (int i = 0; i < N; i++) {
        cr_expect_eq(out[4 * i], plain[i], "slct c=%#x: %u, want %u", c[i], out[4 * i], plain[i]);
        cr_expect_eq(out[4 * i + 1], ftz[i], "slct.ftz c=%#x: %u, want %u", c[i], out[4 * i + 1], ftz[i]);
        cr_expect_eq(out[4 * i + 2], ftz[i], "slct.ftz.f64 c=%#x: %u, want %u", c[i], out[4 * i + 2], ftz[i]);
        cr_expect_eq(out[4 * i + 3], 0xFFF80000u, "abs.f64 of -NaN: high word %#x", out[4 * i + 3]);
    }
    dev_module_unload(m);
    dev_close(d);
}

/* ISA, set (half precision): "If result is True, ... 1.0 in target precision floating point format is
 * written for destination type .f16, .bf16".  The emulator wrote all ones (0xffff, a NaN) for scalar f16 and
 * bf16 destinations; integer destinations keep all ones (probeS 1). */
Test(isa, set_half_destination_is_one) {
    static const char *ptx = ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry k(.param .u64 out)\n{\n .reg .b16 %h<12>;\n .reg .b32 %r<4>;\n .reg .f32 %f<4>;\n .reg .b64 %rd<2>;\n"
        " ld.param.u64 %rd1, [out];\n mov.b16 %h1, 0x3C00;\n mov.b16 %h2, 0x4000;\n mov.f32 %f1, 0f3F800000;\n"
        " mov.f32 %f2, 0f40000000;\n"
        " set.lt.f16.f16 %h3, %h1, %h2;\n st.global.b16 [%rd1], %h3;\n"
        " set.gt.f16.f16 %h4, %h1, %h2;\n st.global.b16 [%rd1+2], %h4;\n"
        " set.lt.bf16.f32 %h5, %f1, %f2;\n st.global.b16 [%rd1+4], %h5;\n"
        " set.lt.f16.f32 %h6, %f1, %f2;\n st.global.b16 [%rd1+6], %h6;\n"
        " set.lt.u16.f16 %h7, %h1, %h2;\n st.global.b16 [%rd1+8], %h7;\n"
        " set.ne.bf16.f32 %h8, %f1, %f1;\n st.global.b16 [%rd1+10], %h8;\n ret;\n}\n";
    check_ptxas_arch(ptx, "sm_90");
    TileDevice *d = open_dev("emu:sm_90a");
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, &m);
    uint16_t out[6];
    uint64_t dout = buffer(d, NULL, sizeof out);
    launch_ok(d, f, 1, (void *[]){&dout});
    cr_assert_eq(dev_memcpy_dtoh(d, out, dout, sizeof out), DEV_OK);
    const uint16_t want[6] = {0x3C00, 0, 0x3F80, 0x3C00, 0xFFFF, 0};
    for (int i = 0; i < 6; i++) cr_expect_eq(out[i], want[i], "case %d: %#x, want %#x", i, out[i], want[i]);
    dev_module_unload(m);
    dev_close(d);
}

/* ISA, Special registers: "%is_explicit_cluster ... .pred": a predicate, read with mov.pred (or named by a
 * guard, as ptxas takes it).  ptxas refuses mov.u32 / mov.b32 of it ("Arguments mismatch for instruction
 * 'mov'") and any other instruction's operand; the emulator loaded mov.u32 and ran it (probeP F-low1). */
Test(isa, is_explicit_cluster_is_a_predicate) {
    static const char *bad[] = {"mov.u32 %r1, %is_explicit_cluster;", "mov.b32 %r1, %is_explicit_cluster;",
                                "selp.u32 %r1, 1, 0, %is_explicit_cluster;", "and.pred %p1, %p2, %is_explicit_cluster;"};
    char ptx[512];
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(ptx, sizeof ptx, HEAD90 ".visible .entry k()\n{\n .reg .pred %%p<3>;\n .reg .b32 %%r<4>;\n"
                 " setp.eq.u32 %%p2, %%r2, 0;\n %s\n ret;\n}\n", bad[i]);
        load_fails("emu:sm_90a", ptx, "%is_explicit_cluster is a .pred special register: only mov.pred reads it");
    }
    static const char *ok = HEAD90
        ".visible .entry k(.param .u64 out)\n{\n .reg .pred %p<3>;\n .reg .b32 %r<4>;\n .reg .b64 %rd<2>;\n"
        " ld.param.u64 %rd1, [out];\n mov.u32 %r1, 2;\n mov.pred %p1, %is_explicit_cluster;\n @%p1 mov.u32 %r1, 1;\n"
        " @!%is_explicit_cluster mov.u32 %r1, 0;\n st.global.u32 [%rd1], %r1;\n ret;\n}\n";
    check_ptxas_arch(ok, "sm_90a");
    TileDevice *d = open_dev("emu:sm_90a");
    TileDevModule *m;
    TileDevFunction *f = load(d, ok, &m);
    uint32_t out;
    uint64_t dout = buffer(d, NULL, sizeof out);
    launch_ok(d, f, 1, (void *[]){&dout});
    cr_assert_eq(dev_memcpy_dtoh(d, &out, dout, sizeof out), DEV_OK);
    cr_expect_eq(out, 0, "a launch without a cluster: %u", out);
    dev_module_unload(m);
    dev_close(d);
}

/* ISA, Parameter state space: ".reg ... Scalar parameters of a .func may be in the .reg space": such a
 * parameter is a register of the function, and a call passes it a register, an immediate or a .param
 * variable (ptxas takes each).  The emulator refused them with misleading messages ("destination of
 * 'add.u32' is not a register", "call return values must be .param variables"; probeP F-reg1).  Here:
 * .reg in and out, .reg in with a .param return, .param in with a .reg return, an immediate argument,
 * a .param argument to a .reg parameter, a register to a .param one, 64-bit and f32 registers, and a
 * recursive factorial whose frames each hold their own n. */
Test(isa, func_reg_parameters) {
    static const char *ptx = HEAD80
        ".func (.reg .b32 o) add1(.reg .b32 x)\n{\n add.u32 o, x, 1;\n ret;\n}\n"
        ".func (.param .b32 op) add2(.reg .b32 x)\n{\n .reg .b32 %t;\n add.u32 %t, x, 2;\n st.param.b32 [op], %t;\n ret;\n}\n"
        ".func (.reg .b32 o) add3(.param .b32 xp)\n{\n .reg .b32 %t;\n ld.param.b32 %t, [xp];\n add.u32 o, %t, 3;\n ret;\n}\n"
        ".func (.reg .b64 o) wide(.param .b64 xp, .reg .b64 y)\n{\n .reg .b64 %t;\n ld.param.b64 %t, [xp];\n add.u64 o, %t, y;\n ret;\n}\n"
        ".func (.reg .f32 o) half(.reg .f32 x)\n{\n mul.f32 o, x, 0f3F000000;\n ret;\n}\n"
        ".func (.reg .b32 o) fact(.reg .b32 n)\n{\n .reg .pred %p;\n .reg .b32 %m, %q;\n setp.le.u32 %p, n, 1;\n @%p bra $ONE;\n"
        " sub.u32 %m, n, 1;\n call.uni (%q), fact, (%m);\n mul.lo.u32 o, %q, n;\n ret;\n$ONE:\n mov.u32 o, 1;\n ret;\n}\n"
        ".visible .entry k(.param .u64 out)\n{\n .reg .b32 %r<12>;\n .reg .b64 %rd<6>;\n .reg .f32 %f<2>;\n"
        " ld.param.u64 %rd1, [out];\n mov.u32 %r1, 41;\n"
        " call.uni (%r2), add1, (%r1);\n"
        " call.uni (%r3), add1, (99);\n"
        " {\n .param .b32 rv;\n call.uni (rv), add2, (%r1);\n ld.param.b32 %r4, [rv];\n }\n"
        " {\n .param .b32 pa;\n st.param.b32 [pa], %r2;\n call.uni (%r5), add1, (pa);\n }\n"
        " call.uni (%r9), add3, (%r1);\n"
        " mov.u64 %rd2, 0x100000000;\n"
        " {\n .param .b64 xp;\n st.param.b64 [xp], %rd2;\n call.uni (%rd3), wide, (xp, 5);\n }\n"
        " call.uni (%f1), half, (0f40400000);\n mov.b32 %r6, %f1;\n"
        " mov.u32 %r7, 6;\n call.uni (%r8), fact, (%r7);\n"
        " st.global.v4.u32 [%rd1], {%r2, %r3, %r4, %r5};\n st.global.v4.u32 [%rd1+16], {%r6, %r8, %r9, %r7};\n"
        " st.global.u64 [%rd1+32], %rd3;\n ret;\n}\n";
    check_ptxas_arch(ptx, "sm_80");
    TileDevice *d = open_dev("emu");
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, &m);
    uint32_t out[10];
    uint64_t dout = buffer(d, NULL, sizeof out);
    launch_ok(d, f, 1, (void *[]){&dout});
    cr_assert_eq(dev_memcpy_dtoh(d, out, dout, sizeof out), DEV_OK);
    const uint32_t want[10] = {42, 100, 43, 43, 0x3FC00000u, 720, 44, 6, 5, 1};
    for (int i = 0; i < 10; i++) cr_expect_eq(out[i], want[i], "word %d: %u (%#x), want %u", i, out[i], out[i], want[i]);
    dev_module_unload(m);
    dev_close(d);
    load_fails("emu", HEAD80 ".visible .entry k(.reg .b32 x)\n{\n ret;\n}\n", "kernel parameter 'x' is .reg");
    load_fails("emu", HEAD80 ".func f(.reg .b32 x[4])\n{\n ret;\n}\n", "a .reg parameter is one register of at most 64 bits");
    load_fails("emu", HEAD80 ".func (.reg .b32 o) f()\n{\n mov.u32 o, 1;\n ret;\n}\n"
                      ".visible .entry k()\n{\n call.uni (7), f, ();\n ret;\n}\n", "a call's return value is an immediate");
}

/* ISA, wgmma.mma_async, integer types: ".shape = {.m64n8k32, .m64n16k32, .m64n24k32, .m64n32k32,
 * .m64n48k32, .m64n64k32, .m64n80k32, ...}": past 32, N steps by 16 (the floating-point shapes by 8).
 * m64n40k32.s32.s8.s8 loaded and ran.  Vectors of .b128 registers (the ISA has none). */
Test(isa, refused_at_load) {
    load_fails("emu:sm_90a",
               HEAD90 ".visible .entry k()\n{\n .reg .b32 %d<20>;\n .reg .b64 %rd<3>;\n .reg .pred %p;\n"
               " mov.u64 %rd1, 0;\n mov.u64 %rd2, 0;\n setp.eq.u32 %p, 1, 1;\n wgmma.fence.sync.aligned;\n"
               " wgmma.mma_async.sync.aligned.m64n40k32.s32.s8.s8 {%d0, %d1, %d2, %d3, %d4, %d5, %d6, %d7, %d8, %d9, %d10, %d11, %d12,"
               " %d13, %d14, %d15, %d16, %d17, %d18, %d19}, %rd1, %rd2, %p;\n ret;\n}\n",
               "s8/u8 wgmma's N is 8, 16, 24 or a multiple of 16");
    load_fails("emu:sm_90a",
               ".version 8.3\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n .reg .v2 .b128 %q;\n .reg .b64 %rd<3>;\n"
               " ret;\n}\n",
               "vectors of .b128 registers are not supported");
}

/* ISA, "Predicates": a predicate source may be negated with `!`, as cp.async's ignore-src ("If the source data
 * is ignored then zeros will be copied to destination dst") and selp's c ("If c is True, a is stored in d, b
 * otherwise") are; ptxas takes both.  Before: cp.async read `!%p` as `%p` (zeros for a false `!%p1`, the copy
 * for a true `!%p2`), and `selp ..., !%p` was refused at load as if %p were no predicate (probeP F5).  `!` on a
 * register that is no predicate is refused, as ptxas refuses it ("Illegal argument to predicate negation"). */
Test(isa, negated_predicate_operands) {
    static const char *ptx = HEAD80
        ".visible .entry k(.param .u64 in, .param .u64 out)\n{\n .reg .pred %p<3>;\n .reg .b32 %r<12>;\n .reg .b64 %rd<6>;\n"
        " .shared .align 16 .b8 buf[64];\n"
        " ld.param.u64 %rd1, [in];\n ld.param.u64 %rd2, [out];\n mov.u32 %r1, buf;\n mov.u32 %r2, 0xdeadbeef;\n"
        " st.shared.v4.u32 [%r1], {%r2, %r2, %r2, %r2};\n st.shared.v4.u32 [%r1+16], {%r2, %r2, %r2, %r2};\n"
        " st.shared.v4.u32 [%r1+32], {%r2, %r2, %r2, %r2};\n st.shared.v4.u32 [%r1+48], {%r2, %r2, %r2, %r2};\n"
        " setp.eq.u32 %p1, 1, 1;\n setp.eq.u32 %p2, 1, 0;\n"
        " cp.async.ca.shared.global [%r1], [%rd1], 16, !%p1;\n"    /* copied */
        " cp.async.ca.shared.global [%r1+16], [%rd1], 16, !%p2;\n" /* zeros */
        " cp.async.cg.shared.global [%r1+32], [%rd1], 16, !%p1;\n" /* copied */
        " cp.async.ca.shared.global [%r1+48], [%rd1], 4, !%p2;\n"  /* 4 zero bytes */
        " cp.async.wait_all;\n"
        " ld.shared.v4.u32 {%r2, %r3, %r4, %r5}, [%r1];\n st.global.v4.u32 [%rd2], {%r2, %r3, %r4, %r5};\n"
        " ld.shared.v4.u32 {%r2, %r3, %r4, %r5}, [%r1+16];\n st.global.v4.u32 [%rd2+16], {%r2, %r3, %r4, %r5};\n"
        " ld.shared.v4.u32 {%r2, %r3, %r4, %r5}, [%r1+32];\n st.global.v4.u32 [%rd2+32], {%r2, %r3, %r4, %r5};\n"
        " ld.shared.v4.u32 {%r2, %r3, %r4, %r5}, [%r1+48];\n st.global.v4.u32 [%rd2+48], {%r2, %r3, %r4, %r5};\n"
        " selp.b32 %r6, 7, 9, !%p1;\n selp.b32 %r7, 7, 9, !%p2;\n selp.b32 %r8, 7, 9, %p1;\n selp.b32 %r9, 7, 9, %p2;\n"
        " st.global.v4.u32 [%rd2+64], {%r6, %r7, %r8, %r9};\n ret;\n}\n";
    TileDevice *d = open_dev("emu");
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, &m);
    uint32_t in[4] = {0x04030201u, 0x08070605u, 0x0c0b0a09u, 0x100f0e0du}, out[20];
    uint64_t din = buffer(d, in, sizeof in), dout = buffer(d, NULL, sizeof out);
    launch_ok(d, f, 1, (void *[]){&din, &dout});
    cr_assert_eq(dev_memcpy_dtoh(d, out, dout, sizeof out), DEV_OK);
    const uint32_t D = 0xdeadbeefu;
    const uint32_t want[20] = {in[0], in[1], in[2], in[3], /* !%p1: false, copied */
                               0, 0, 0, 0,                 /* !%p2: true, zeros */
                               in[0], in[1], in[2], in[3], /* .cg, copied */
                               0, D, D, D,                 /* 4 bytes, zeros */
                               9, 7, 7, 9};                /* selp */
    for (int i = 0; i < 20; i++) cr_expect_eq(out[i], want[i], "word %d: %#x, want %#x", i, out[i], want[i]);
    dev_module_unload(m);
    dev_close(d);
    load_fails("emu", HEAD80 ".visible .entry k()\n{\n .reg .b32 %r<4>;\n mov.u32 %r2, %tid.x;\n add.u32 %r1, !%r2, 1;\n ret;\n}\n",
               "'!' is allowed only on predicate sources");
}

/* ISA, atom: "Current implementation of atom.add.f32 on global memory flushes subnormal inputs and
 * results to sign-preserving zero; whereas atom.add.f32 on shared memory supports subnormal inputs and
 * results" (red: the same).  2^-130 + 2^-130: 0 on global (atom and red, and through a generic
 * address), 2^-129 on shared. */
Test(isa, global_f32_atomic_add_flushes_subnormals) {
    static const char *ptx = HEAD80
        ".visible .entry k(.param .u64 g)\n{\n .reg .b32 %r<4>;\n .reg .f32 %f<4>;\n .reg .b64 %rd<4>;\n"
        " .shared .align 4 .f32 s;\n"
        " ld.param.u64 %rd1, [g];\n mov.b32 %f1, 0x00100000;\n"
        " atom.global.add.f32 %f2, [%rd1], %f1;\n red.global.add.f32 [%rd1+4], %f1;\n atom.add.f32 %f3, [%rd1+8], %f1;\n"
        " st.shared.f32 [s], %f1;\n atom.shared.add.f32 %f2, [s], %f1;\n ld.shared.f32 %f3, [s];\n st.global.f32 [%rd1+12], %f3;\n"
        " mov.b32 %f1, 0x3f800000;\n atom.global.add.f32 %f2, [%rd1+16], %f1;\n ret;\n}\n";
    TileDevice *d = open_dev("emu");
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, &m);
    uint32_t g[5] = {0x00100000u, 0x00100000u, 0x80100000u, 0, 0x3f800000u}, out[5];
    uint64_t dg = buffer(d, g, sizeof g);
    launch_ok(d, f, 1, (void *[]){&dg});
    cr_assert_eq(dev_memcpy_dtoh(d, out, dg, sizeof out), DEV_OK);
    cr_expect_eq(out[0], 0u, "atom.global.add.f32 of subnormals: %#x", out[0]);
    cr_expect_eq(out[1], 0u, "red.global.add.f32 of subnormals: %#x", out[1]);
    cr_expect_eq(out[2], 0u, "generic (global) atom.add.f32 of -2^-130 + 2^-130: %#x", out[2]);
    cr_expect_eq(out[3], 0x00200000u, "atom.shared.add.f32 keeps subnormals: %#x", out[3]);
    cr_expect_eq(out[4], 0x40000000u, "normal sums are exact: %#x", out[4]);
    dev_module_unload(m);
    dev_close(d);
}

/* ISA, movmatrix: "movmatrix.sync.aligned.shape.trans.type d, a; .shape = {.m8n8}; .type = {.b16}": "Each thread
 * in a warp holds a fragment of a row of the input matrix ... A group of four threads holds an entire row"
 * (lane l: row l/4, columns 2(l%4) and 2(l%4)+1, the lower column in the low half, as ldmatrix's fragments),
 * and d holds the same fragment of the transposed matrix.  Every element distinct, checked against a host
 * transpose; d may be a (in place), and transposing twice gives the matrix back. */
Test(isa, movmatrix_transposes_the_fragments) {
    static const char *ptx = HEAD80
        ".visible .entry k(.param .u64 in, .param .u64 out)\n{\n .reg .b32 %r<8>;\n .reg .b64 %rd<8>;\n"
        " ld.param.u64 %rd1, [in];\n ld.param.u64 %rd2, [out];\n mov.u32 %r1, %laneid;\n mul.wide.u32 %rd3, %r1, 4;\n"
        " add.s64 %rd4, %rd1, %rd3;\n ld.global.b32 %r2, [%rd4];\n"
        " movmatrix.sync.aligned.m8n8.trans.b16 %r3, %r2;\n"       /* d from a */
        " mov.b32 %r4, %r2;\n movmatrix.sync.aligned.m8n8.trans.b16 %r4, %r4;\n" /* in place */
        " movmatrix.sync.aligned.m8n8.trans.b16 %r5, %r3;\n"       /* twice: the matrix again */
        " add.s64 %rd5, %rd2, %rd3;\n st.global.b32 [%rd5], %r3;\n st.global.b32 [%rd5+128], %r4;\n"
        " st.global.b32 [%rd5+256], %r5;\n ret;\n}\n";
    TileDevice *d = open_dev("emu");
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, &m);
    uint16_t mat[8][8], tr[8][8];
    for (int r = 0; r < 8; r++)
        for (int c = 0; c < 8; c++) mat[r][c] = (uint16_t)(0x3C00 + 0x111 * r + 0x0B * c + (r * c) % 5); /* all 64 distinct */
    for (int r = 0; r < 8; r++)
        for (int c = 0; c < 8; c++) tr[r][c] = mat[c][r];
    uint32_t in[32], out[96], want[32];
    for (int l = 0; l < 32; l++) {
        in[l] = mat[l / 4][2 * (l % 4)] | (uint32_t)mat[l / 4][2 * (l % 4) + 1] << 16;
        want[l] = tr[l / 4][2 * (l % 4)] | (uint32_t)tr[l / 4][2 * (l % 4) + 1] << 16;
    }
    for (int i = 0; i < 64; i++)
        for (int j = 0; j < i; j++) cr_assert_neq(mat[i / 8][i % 8], mat[j / 8][j % 8], "test matrix elements %d and %d equal", i, j);
    uint64_t din = buffer(d, in, sizeof in), dout = buffer(d, NULL, sizeof out);
    launch_ok(d, f, 32, (void *[]){&din, &dout});
    cr_assert_eq(dev_memcpy_dtoh(d, out, dout, sizeof out), DEV_OK);
    for (int l = 0; l < 32; l++) {
        cr_expect_eq(out[l], want[l], "lane %d: %#010x, want %#010x", l, out[l], want[l]);
        cr_expect_eq(out[32 + l], want[l], "lane %d in place: %#010x, want %#010x", l, out[32 + l], want[l]);
        cr_expect_eq(out[64 + l], in[l], "lane %d transposed twice: %#010x, want %#010x", l, out[64 + l], in[l]);
    }
    dev_module_unload(m);
    dev_close(d);
    load_fails("emu", HEAD80 ".visible .entry k()\n{\n .reg .b32 %r<3>;\n movmatrix.sync.aligned.m8n8.b16 %r1, %r2;\n ret;\n}\n",
               "unsupported movmatrix form");
}

/* ISA, prefetch, prefetchu: "prefetchu.L1 [a];" a uniform prefetch to L1 of a generic address: a hint, no
 * effect on values.  It takes an address operand, as prefetch does here (checked at load; at run time a hint is
 * never an error, whatever the address). */
Test(isa, prefetchu_is_a_hint) {
    static const char *ptx = HEAD80
        ".visible .entry k(.param .u64 out)\n{\n .reg .b32 %r<4>;\n .reg .b64 %rd<4>;\n"
        " ld.param.u64 %rd1, [out];\n prefetchu.L1 [%rd1];\n prefetchu.L1 [%rd1+4096];\n prefetch.global.L1 [%rd1];\n"
        " mov.u32 %r1, 0x1234abcd;\n st.global.u32 [%rd1], %r1;\n ret;\n}\n";
    TileDevice *d = open_dev("emu");
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, &m);
    uint32_t out = 0;
    uint64_t dout = buffer(d, NULL, sizeof out);
    launch_ok(d, f, 1, (void *[]){&dout});
    cr_assert_eq(dev_memcpy_dtoh(d, &out, dout, sizeof out), DEV_OK);
    cr_expect_eq(out, 0x1234abcdu, "%#x", out);
    dev_module_unload(m);
    dev_close(d);
    load_fails("emu", HEAD80 ".visible .entry k()\n{\n .reg .b64 %rd<2>;\n prefetchu.L1 %rd1;\n ret;\n}\n", "needs an address operand");
    load_fails("emu", HEAD80 ".visible .entry k()\n{\n .reg .b64 %rd<2>;\n prefetchu [%rd1];\n ret;\n}\n", "prefetchu takes .L1");
    load_fails("emu", HEAD80 ".visible .entry k()\n{\n .reg .b64 %rd<2>;\n prefetch.global.L2 %rd1;\n ret;\n}\n", "needs an address operand");
}

/* ISA, special registers: "%globaltimer_lo: the lower 32-bits of %globaltimer; %globaltimer_hi: the upper
 * 32-bits"; "%aggr_smem_size ... total aggregated size of shared memory consisting of the size of user shared
 * memory allocated (statically and dynamically) at launch time and the size of shared memory region which is
 * reserved for the NVIDIA system software use" (sm_90); "%current_graph_exec ... is 0 if the executing kernel is
 * not part of a CUDA device graph".  48 static + 208 dynamic bytes: %total_smem_size 256, the reserved region
 * %reserved_smem_offset_cap = 1024 bytes, so %aggr_smem_size 1280.  The timer reads the host's real-time clock
 * in ns when read (it stood at the launch's start, and a wait on it spun to the budget), so its high half is
 * not 0 and the halves, read after it, are no earlier; a loop waiting 2 ms on it ends. */
Test(isa, globaltimer_halves_aggr_smem_graph_exec) {
    static const char *ptx = HEAD83
        ".shared .align 16 .b8 s[48];\n.extern .shared .align 16 .b8 dyn[];\n"
        ".visible .entry k(.param .u64 out)\n{\n .reg .b32 %r<10>;\n .reg .b64 %rd<6>;\n"
        " ld.param.u64 %rd1, [out];\n mov.u64 %rd2, %globaltimer;\n mov.u32 %r1, %globaltimer_lo;\n mov.u32 %r2, %globaltimer_hi;\n"
        " mov.u32 %r3, %total_smem_size;\n mov.u32 %r4, %aggr_smem_size;\n mov.u32 %r5, %dynamic_smem_size;\n"
        " mov.u32 %r6, %reserved_smem_offset_cap;\n mov.u64 %rd3, %current_graph_exec;\n"
        " st.global.u64 [%rd1], %rd2;\n st.global.u32 [%rd1+8], %r1;\n st.global.u32 [%rd1+12], %r2;\n"
        " st.global.u32 [%rd1+16], %r3;\n st.global.u32 [%rd1+20], %r4;\n st.global.u32 [%rd1+24], %r5;\n"
        " st.global.u32 [%rd1+28], %r6;\n st.global.u64 [%rd1+32], %rd3;\n ret;\n}\n";
    TileDevice *d = open_dev("emu:sm_90a");
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, &m);
    uint64_t dout = buffer(d, NULL, 40);
    struct timespec t0, t1;
    clock_gettime(CLOCK_REALTIME, &t0);
    cr_assert_eq(dev_launch(f, 1, 1, 1, 1, 1, 1, 208, NULL, (void *[]){&dout}), DEV_OK, "%s", dev_last_error(d));
    cr_assert_eq(dev_synchronize(d), DEV_OK);
    clock_gettime(CLOCK_REALTIME, &t1);
    struct { uint64_t gt; uint32_t lo, hi, total, aggr, dyn, cap; uint64_t graph; } o;
    cr_assert_eq(dev_memcpy_dtoh(d, &o, dout, sizeof o), DEV_OK);
    uint64_t ns0 = (uint64_t)t0.tv_sec * 1000000000u + (uint64_t)t0.tv_nsec, ns1 = (uint64_t)t1.tv_sec * 1000000000u + (uint64_t)t1.tv_nsec;
    cr_expect(o.gt >= ns0 && o.gt <= ns1, "%%globaltimer %llu outside the launch [%llu, %llu]", (unsigned long long)o.gt,
              (unsigned long long)ns0, (unsigned long long)ns1);
    cr_expect_lt((uint32_t)(o.lo - (uint32_t)o.gt), 1000000000u, "%%globaltimer_lo %#x, %%globaltimer %#llx", o.lo,
                 (unsigned long long)o.gt);
    cr_expect(o.hi - (uint32_t)(o.gt >> 32) <= 1u, "%%globaltimer_hi %#x, %%globaltimer %#llx", o.hi, (unsigned long long)o.gt);
    cr_expect_neq(o.hi, 0u);
    cr_expect_eq(o.total, 256u, "%%total_smem_size %u", o.total);
    cr_expect_eq(o.dyn, 208u, "%%dynamic_smem_size %u", o.dyn);
    cr_expect_eq(o.cap, 1024u, "%%reserved_smem_offset_cap %u", o.cap);
    cr_expect_eq(o.aggr, 1280u, "%%aggr_smem_size %u, want 256 + 1024", o.aggr);
    cr_expect_eq(o.graph, 0u, "%%current_graph_exec %#llx", (unsigned long long)o.graph);
    dev_module_unload(m);
    dev_close(d);
    load_fails("emu", HEAD80 ".visible .entry k()\n{\n .reg .b32 %r<2>;\n mov.u32 %r1, %aggr_smem_size;\n ret;\n}\n",
               "needs .target sm_90 or later");
}

/* A wait on %globaltimer (a timeout loop, as CUTLASS's and cooperative groups' waits use): 2 ms pass. */
Test(isa, globaltimer_wait_ends) {
    static const char *ptx = HEAD80
        ".visible .entry k(.param .u64 out)\n{\n .reg .pred %p<2>;\n .reg .b64 %rd<6>;\n"
        " ld.param.u64 %rd1, [out];\n mov.u64 %rd2, %globaltimer;\n"
        "$L:\n mov.u64 %rd3, %globaltimer;\n sub.s64 %rd4, %rd3, %rd2;\n setp.lt.u64 %p1, %rd4, 2000000;\n @%p1 bra $L;\n"
        " st.global.u64 [%rd1], %rd4;\n ret;\n}\n";
    check_ptxas_arch(ptx, "sm_80");
    TileDevice *d = NULL;
    char *err = NULL;
    DevOptions opt = {.emu_host_threads = 1, .emu_timeout_seconds = 20}; /* a timer that stands still fails in 20 s */
    cr_assert_eq(dev_open("emu", &opt, &d, &err), DEV_OK, "%s", err ? err : "");
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, &m);
    uint64_t dout = buffer(d, NULL, 8), waited;
    cr_assert_eq(dev_launch(f, 1, 1, 1, 32, 1, 1, 0, NULL, (void *[]){&dout}), DEV_OK, "%s", dev_last_error(d));
    cr_assert_eq(dev_memcpy_dtoh(d, &waited, dout, 8), DEV_OK);
    cr_expect(waited >= 2000000 && waited < 20000000000ull, "waited %llu ns", (unsigned long long)waited);
    dev_module_unload(m);
    dev_close(d);
}

/* %clock64 and %clock advance: a loop that waits until 200000 cycles have passed (nvcc's clock64() spin, a
 * backoff) ends, and the difference it stores is at least that (both read 0 before, and the loop spun until
 * the launch's time budget).  %clock is read before %clock64 at the start and after it at the end, so its
 * difference spans the other's (the other order failed on a loaded machine: 199966). */
Test(isa, clock_advances) {
    static const char *ptx = HEAD80
        ".visible .entry k(.param .u64 out)\n{\n .reg .pred %p<3>;\n .reg .b32 %r<4>;\n .reg .b64 %rd<6>;\n"
        " ld.param.u64 %rd1, [out];\n mov.u32 %r1, %clock;\n mov.u64 %rd2, %clock64;\n"
        "$L:\n mov.u64 %rd3, %clock64;\n sub.s64 %rd4, %rd3, %rd2;\n setp.lt.u64 %p1, %rd4, 200000;\n @%p1 bra $L;\n"
        " mov.u32 %r2, %clock;\n sub.s32 %r3, %r2, %r1;\n"
        " st.global.u64 [%rd1], %rd4;\n st.global.u32 [%rd1+8], %r3;\n ret;\n}\n";
    TileDevice *d = NULL;
    char *err = NULL;
    DevOptions opt = {.emu_host_threads = 1, .emu_timeout_seconds = 20}; /* a clock that stands still fails in 20 s */
    cr_assert_eq(dev_open("emu", &opt, &d, &err), DEV_OK, "%s", err ? err : "");
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, &m);
    uint64_t dout = buffer(d, NULL, 16);
    cr_assert_eq(dev_launch(f, 1, 1, 1, 32, 1, 1, 0, NULL, (void *[]){&dout}), DEV_OK, "%s", dev_last_error(d));
    cr_assert_eq(dev_synchronize(d), DEV_OK);
    struct { uint64_t d64; uint32_t d32; } o;
    cr_assert_eq(dev_memcpy_dtoh(d, &o, dout, sizeof o), DEV_OK);
    cr_expect(o.d64 >= 200000 && o.d64 < 60000000000ull, "%%clock64 advanced by %llu", (unsigned long long)o.d64);
    cr_expect(o.d32 >= 200000u, "%%clock advanced by %u", o.d32);
    dev_module_unload(m);
    dev_close(d);
}

/* ISA, ld: "ld{.weak}{.ss}... d, [a]{.unified}{, cache-policy};" "The optional qualifier .unified must be
 * specified on operand a if a is the address of a variable declared with .unified attribute"; "The qualifiers
 * .unified and .level::cache_hint are only supported for .global state space and for generic addressing where
 * the address points to the .global state space".  st does not take it.  (The syntax shows it on weak loads
 * only, but ptxas takes ld.volatile/.relaxed/.acquire and ldu with it too: so does the emulator.) */
Test(isa, ld_unified_address) {
    static const char *ptx = HEAD80
        ".visible .entry k(.param .u64 in, .param .u64 out)\n{\n .reg .b32 %r<6>;\n .reg .b64 %rd<4>;\n"
        " ld.param.u64 %rd1, [in];\n ld.param.u64 %rd2, [out];\n"
        " ld.global.u32 %r1, [%rd1].unified;\n ld.volatile.u32 %r2, [%rd1+4].unified;\n ld.global.nc.v2.u32 {%r3, %r1}, [%rd1+8].unified;\n"
        " ldu.global.u32 %r4, [%rd1+4].unified;\n add.u32 %r2, %r2, %r4;\n"
        " st.global.u32 [%rd2], %r1;\n st.global.u32 [%rd2+4], %r2;\n st.global.u32 [%rd2+8], %r3;\n ret;\n}\n";
    TileDevice *d = open_dev("emu");
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, &m);
    uint32_t in[4] = {0x11111111u, 0x22222222u, 0x33333333u, 0x44444444u}, out[3];
    uint64_t din = buffer(d, in, sizeof in), dout = buffer(d, NULL, sizeof out);
    launch_ok(d, f, 1, (void *[]){&din, &dout});
    cr_assert_eq(dev_memcpy_dtoh(d, out, dout, sizeof out), DEV_OK);
    cr_expect(out[0] == in[3] && out[1] == 2 * in[1] && out[2] == in[2], "%#x %#x %#x", out[0], out[1], out[2]);
    dev_module_unload(m);
    /* a generic .unified address must point to global memory: a shared one stops the launch */
    static const char *shared_ptx = HEAD80
        ".visible .entry k()\n{\n .reg .b32 %r<2>;\n .reg .b64 %rd<2>;\n .shared .align 4 .b32 s;\n"
        " cvta.shared.u64 %rd1, s;\n ld.u32 %r1, [%rd1].unified;\n ret;\n}\n";
    f = load(d, shared_ptx, &m);
    launch_fails(d, f, 1, NULL, DEV_ERR_LAUNCH, "needs a global address");
    dev_module_unload(m);
    /* a variable declared .unified: its attribute's own parentheses (the inner ')' ended the attribute, and the outer
     * one was read as the variable's name: "expected a name in declaration, found ')'"); .unified is sm_90's */
    static const char *var_ptx = ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".global .attribute(.unified(19, 95)) .align 4 .u32 ug = 42;\n"
        ".global .attribute(.managed) .align 4 .u32 mg = 5;\n"
        ".visible .entry k(.param .u64 in, .param .u64 out)\n{\n .reg .b32 %r<3>;\n .reg .b64 %rd<2>;\n"
        " ld.param.u64 %rd1, [out];\n ld.global.u32 %r1, [ug].unified;\n ld.global.u32 %r2, [mg];\n add.u32 %r1, %r1, %r2;\n"
        " st.global.u32 [%rd1], %r1;\n ret;\n}\n";
    f = load(d, var_ptx, &m);
    launch_ok(d, f, 1, (void *[]){&din, &dout});
    cr_assert_eq(dev_memcpy_dtoh(d, out, dout, 4), DEV_OK);
    cr_expect_eq(out[0], 47u);
    dev_module_unload(m);
    dev_close(d);
    load_fails("emu", HEAD80 ".visible .entry k()\n{\n .reg .b32 %r<2>;\n .shared .b32 s;\n ld.shared.u32 %r1, [s].unified;\n ret;\n}\n",
               ".unified is allowed on .global or generic addresses only");
    load_fails("emu", HEAD80 ".visible .entry k()\n{\n .reg .b32 %r<2>;\n .reg .b64 %rd<2>;\n ld.local.u32 %r1, [%rd1].unified;\n"
               " ret;\n}\n", ".unified is allowed on .global or generic addresses only");
    load_fails("emu", HEAD80 ".visible .entry k()\n{\n .reg .b32 %r<2>;\n .reg .b64 %rd<2>;\n st.global.u32 [%rd1].unified, %r1;\n"
               " ret;\n}\n", "only ld and ldu take a .unified address");
}

/* ISA, pmevent: "pmevent a; pmevent.mask a;" "triggers a single performance monitor event indexed by immediate
 * operand a, in the range 0..15"; ".mask ... Each bit in the 16-bit immediate operand a controls an event": no
 * effect here.  brkpt: "Suspends execution" (for a debugger): the emulator has none, so the launch stops with an
 * error naming the PTX line, as trap does. */
Test(isa, pmevent_and_brkpt) {
    static const char *ptx = HEAD80
        ".visible .entry k(.param .u64 out, .param .u32 stop)\n{\n .reg .pred %p<2>;\n .reg .b32 %r<4>;\n .reg .b64 %rd<4>;\n"
        " ld.param.u64 %rd1, [out];\n ld.param.u32 %r1, [stop];\n setp.ne.u32 %p1, %r1, 0;\n"
        " pmevent 1;\n @%p1 pmevent 15;\n pmevent.mask 0xffff;\n"
        " mov.u32 %r2, 77;\n st.global.u32 [%rd1], %r2;\n"
        " @%p1 brkpt;\n"
        " mov.u32 %r2, 78;\n st.global.u32 [%rd1], %r2;\n ret;\n}\n";
    TileDevice *d = open_dev("emu");
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, &m);
    uint32_t out = 0, stop = 0;
    uint64_t dout = buffer(d, NULL, sizeof out);
    launch_ok(d, f, 1, (void *[]){&dout, &stop});
    cr_assert_eq(dev_memcpy_dtoh(d, &out, dout, sizeof out), DEV_OK);
    cr_expect_eq(out, 78u, "no brkpt: %u", out);
    stop = 1;
    launch_fails(d, f, 1, (void *[]){&dout, &stop}, DEV_ERR_LAUNCH, "brkpt");
    cr_expect(strstr(dev_last_error(d), "PTX line 17: @%p1 brkpt;"), "%s", dev_last_error(d));
    cr_assert_eq(dev_memcpy_dtoh(d, &out, dout, sizeof out), DEV_OK);
    cr_expect_eq(out, 77u, "the thread went on past brkpt: %u", out);
    launch_ok(d, f, 1, (void *[]){&dout, &(uint32_t){0}}); /* the device stays usable */
    dev_module_unload(m);
    dev_close(d);
    load_fails("emu", HEAD80 ".visible .entry k()\n{\n pmevent 16;\n ret;\n}\n", "event number in 0..15");
    load_fails("emu", HEAD80 ".visible .entry k()\n{\n pmevent.mask 0x10000;\n ret;\n}\n", "16-bit mask");
    load_fails("emu", HEAD80 ".visible .entry k()\n{\n .reg .b32 %r<2>;\n pmevent %r1;\n ret;\n}\n", "event number in 0..15");
}

/* The scalar tests below run k(in, out) with one thread per input: LANE_ADDRS(IS, OS) leaves the thread's
 * input at %la4 (IS bytes apart) and its output at %la5 (OS bytes apart). */
#define KIO ".visible .entry k(.param .u64 in, .param .u64 out)\n{\n"
#define LANE_ADDRS(IS, OS)                                                                                          \
    " .reg .b32 %lt;\n .reg .b64 %la<6>;\n ld.param.u64 %la1, [in];\n ld.param.u64 %la2, [out];\n"                  \
    " mov.u32 %lt, %tid.x;\n mul.wide.u32 %la3, %lt, " #IS ";\n add.s64 %la4, %la1, %la3;\n"                       \
    " mul.wide.u32 %la3, %lt, " #OS ";\n add.s64 %la5, %la2, %la3;\n"

static void run_lanes(const char *spec, const char *ptx, const void *in, size_t in_bytes, void *out, size_t out_bytes, unsigned n) {
    TileDevice *d = open_dev(spec);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, &m);
    uint64_t din = buffer(d, in, in_bytes), dout = buffer(d, NULL, out_bytes);
    launch_ok(d, f, n, (void *[]){&din, &dout});
    cr_assert_eq(dev_memcpy_dtoh(d, out, dout, out_bytes), DEV_OK);
    dev_module_unload(m);
    dev_close(d);
}

/* ISA, cvt: "cvt.rn{.relu}.f16x2.f8x2type d, a;" and ".relu: For .f16, .f16x2, .bf16, .bf16x2, .e4m3x2,
 * .e5m2x2 and .e2m1x2 destination types, .relu clamps the result to 0 if negative. NaN results are converted
 * to canonical NaN."  Each byte of a (the low one to the low half) is exact in f16.  The emulator ignored
 * .relu here (probeS F4). */
Test(isa, cvt_relu_f16x2_from_f8x2) {
    static const char *ptx = ".version 8.1\n.target sm_89\n.address_size 64\n" KIO " .reg .b16 %h1;\n .reg .b32 %r<6>;\n"
        LANE_ADDRS(2, 16) " ld.global.b16 %h1, [%la4];\n"
        " cvt.rn.relu.f16x2.e4m3x2 %r2, %h1;\n cvt.rn.relu.f16x2.e5m2x2 %r3, %h1;\n"
        " cvt.rn.f16x2.e4m3x2 %r4, %h1;\n cvt.rn.f16x2.e5m2x2 %r5, %h1;\n st.global.v4.u32 [%la5], {%r2, %r3, %r4, %r5};\n ret;\n}\n";
    check_ptxas_arch(ptx, "sm_89");
    enum { ANY = 0xFFFFFFFFu }; /* the plain form of a NaN: the ISA does not say which NaN */
    /* e4m3 0xb8 -1, 0xbc -1.5, 0x81 -2^-9, 0xfc -384, 0xfe -448, 0x7e 448, 0x7f NaN, 0x01 2^-9, 0x38 1;
     * e5m2 0xb8 -0.5, 0xbc -1, 0x81 -2^-16, 0xfc -inf, 0xfe NaN, 0x7e 0x7f NaN, 0x01 2^-16, 0x38 0.5 */
    static const struct { uint16_t a; uint32_t relu4, relu5, plain4, plain5; } c[] = {
        {0xBCB8, 0, 0, 0xBE00BC00u, 0xBC00B800u},
        {0x0081, 0, 0, 0x00009800u, 0x00008100u},
        {0xFEFC, 0, 0x7FFF0000u, 0xDF00DE00u, ANY},
        {0x7F7E, 0x7FFF5F00u, 0x7FFF7FFFu, ANY, ANY},
        {0x3801, 0x3C001800u, 0x38000100u, 0x3C001800u, 0x38000100u},
        {0x01FC, 0x18000000u, 0x01000000u, 0x1800DE00u, 0x0100FC00u},
    };
    enum { N = sizeof c / sizeof c[0] };
    uint16_t in[N];
    for (int i = 0; i < N; i++) in[i] = c[i].a;
    uint32_t out[N * 4];
    run_lanes("emu", ptx, in, sizeof in, out, sizeof out, N);
    for (int i = 0; i < N; i++) {
        const uint32_t want[4] = {c[i].relu4, c[i].relu5, c[i].plain4, c[i].plain5};
        static const char *form[4] = {"relu e4m3x2", "relu e5m2x2", "e4m3x2", "e5m2x2"};
        for (int j = 0; j < 4; j++)
            if (want[j] != ANY) cr_expect_eq(out[4 * i + j], want[j], "cvt.rn.%s a=%#x: %#x, want %#x", form[j], c[i].a, out[4 * i + j], want[j]);
    }
}

/* Every f16, e4m3 and e5m2 code decodes to its value (the emulator decodes them by bits; the references
 * here are the ISA's formulas through ldexp): cvt.f64.f16 of all 65,536 f16 codes, and cvt.rn.f16x2.e4m3x2 /
 * .e5m2x2 of every pair of bytes (exact in f16), read back through the f16 formula.  NaN: any NaN. */
static double ref_small(unsigned code, int eb, int mb, int bias, bool e4m3) {
    unsigned e = code >> mb & ((1u << eb) - 1), m = code & ((1u << mb) - 1), s = code >> (eb + mb) & 1;
    double v;
    if (e4m3 && e == 15 && m == 7) return NAN;
    if (!e4m3 && e == (1u << eb) - 1) v = m ? NAN : INFINITY;
    else v = e ? ldexp(1.0 + (double)m / (1 << mb), (int)e - bias) : ldexp((double)m / (1 << mb), 1 - bias);
    return s ? -v : v;
}

static bool same_value(double got, double want) { return isnan(want) ? isnan(got) : got == want && signbit(got) == signbit(want); }

Test(isa, every_f16_and_f8_code_decodes) {
    static const char *ptx = ".version 8.1\n.target sm_89\n.address_size 64\n"
        ".visible .entry k(.param .u64 out)\n{\n .reg .b16 %h1;\n .reg .b32 %r<4>;\n .reg .b64 %rd<4>;\n .reg .f64 %d1;\n"
        " .reg .pred %p;\n ld.param.u64 %rd1, [out];\n mov.u32 %r1, %tid.x;\nL:\n cvt.u16.u32 %h1, %r1;\n cvt.f64.f16 %d1, %h1;\n"
        " cvt.rn.f16x2.e4m3x2 %r2, %h1;\n cvt.rn.f16x2.e5m2x2 %r3, %h1;\n mul.wide.u32 %rd2, %r1, 16;\n add.s64 %rd3, %rd1, %rd2;\n"
        " st.global.f64 [%rd3], %d1;\n st.global.v2.u32 [%rd3+8], {%r2, %r3};\n add.u32 %r1, %r1, 256;\n"
        " setp.lt.u32 %p, %r1, 65536;\n @%p bra L;\n ret;\n}\n";
    check_ptxas_arch(ptx, "sm_89");
    enum { N = 65536 };
    TileDevice *d = open_dev("emu");
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, &m);
    uint64_t dout = buffer(d, NULL, (size_t)N * 16);
    launch_ok(d, f, 256, (void *[]){&dout});
    uint8_t *out = malloc((size_t)N * 16);
    cr_assert(out);
    cr_assert_eq(dev_memcpy_dtoh(d, out, dout, (size_t)N * 16), DEV_OK);
    int bad = 0;
    for (unsigned c = 0; c < N && bad < 10; c++) {
        double h;
        uint32_t f8[2];
        memcpy(&h, out + 16 * c, 8);
        memcpy(f8, out + 16 * c + 8, 8);
        double want = ref_small(c, 5, 10, 15, false);
        if (!same_value(h, want)) {
            bad++;
            cr_expect(0, "cvt.f64.f16 %#06x: %a, want %a", c, h, want);
        }
        for (int j = 0; j < 2; j++)
            for (int half = 0; half < 2; half++) {
                unsigned byte = c >> (8 * half) & 0xFF;
                double got = ref_small(f8[j] >> (16 * half) & 0xFFFF, 5, 10, 15, false);
                double w = j ? ref_small(byte, 5, 2, 15, false) : ref_small(byte, 4, 3, 7, true);
                if (!same_value(got, w)) {
                    bad++;
                    cr_expect(0, "cvt.rn.f16x2.%s byte %#04x: %a, want %a", j ? "e5m2x2" : "e4m3x2", byte, got, w);
                }
            }
    }
    free(out);
    dev_module_unload(m);
    dev_close(d);
}

/* ISA, fma (half precision): "Performs a fused multiply-add with no loss of precision in the intermediate
 * product and addition", and "fma.rn: mantissa LSB rounds to nearest even": one rounding of the exact
 * a*b+c.  The emulator summed in double and then rounded to bf16: where the product is a bf16 tie and c
 * is too small to show in the double sum (a*b near 2^120, c = 2^-133) the tie went to even (probeS F6).
 * Expected values: the exact sum (fractions) rounded once.  f16's range keeps such sums exact in double;
 * its rows check a product on an f16 tie that the smallest subnormal c breaks. */
Test(isa, fma_half_rounds_once) {
    static const char *ptx = HEAD80 KIO " .reg .b16 %h<8>;\n .reg .b32 %r<8>;\n" LANE_ADDRS(8, 16)
        " ld.global.v4.b16 {%h1, %h2, %h3, %h4}, [%la4];\n"
        " fma.rn.bf16 %h5, %h1, %h2, %h3;\n fma.rn.relu.bf16 %h6, %h1, %h2, %h3;\n fma.rn.f16 %h7, %h1, %h2, %h3;\n"
        " cvt.u32.u16 %r1, %h5;\n cvt.u32.u16 %r2, %h6;\n cvt.u32.u16 %r3, %h7;\n"
        " mov.b32 %r4, {%h1, %h1};\n mov.b32 %r5, {%h2, %h2};\n mov.b32 %r6, {%h3, %h3};\n fma.rn.relu.bf16x2 %r7, %r4, %r5, %r6;\n"
        " st.global.v4.u32 [%la5], {%r1, %r2, %r3, %r7};\n ret;\n}\n";
    check_ptxas_arch(ptx, "sm_80");
    /* a, b, c; fma.rn.bf16, fma.rn.relu.bf16, fma.rn.f16 (the same bits as f16), fma.rn.relu.bf16x2 of (a, a), (b, b), (c, c) */
    static const struct { uint16_t a, b, c; uint32_t want[4]; } t[] = {
        {0x2B40, 0x5F9B, 0x16EC, {0x4B69u, 0x4B69u, 0x4EE5u, 0x4B694B69u}}, /* probeS's: a*b a bf16 tie, c breaks it */
        {0xEC15, 0xD040, 0x8A54, {0x7CDFu, 0x7CDFu, 0x7C00u, 0x7CDF7CDFu}},
        {0xD65C, 0xE6E0, 0x0113, {0x7DC1u, 0x7DC1u, 0x7C00u, 0x7DC17DC1u}},
        {0x3F88, 0xF1A8, 0x94EE, {0xF1B3u, 0, 0xF553u, 0}},
        {0x6460, 0x3314, 0x8001, {0x5801u, 0x5801u, 0x5BBEu, 0x58015801u}},
        {0x3314, 0x6460, 0x8001, {0x5801u, 0x5801u, 0x5BBEu, 0x58015801u}},
        /* 87*2^60 * 3*2^52 = 261*2^112, half-way between 130*2^113 (even) and 131*2^113; c = +-2^-133 */
        {0x60AE, 0x5A40, 0x0001, {0x7B83u, 0x7B83u, 0x7C00u, 0x7B837B83u}},
        {0x60AE, 0x5A40, 0x8001, {0x7B82u, 0x7B82u, 0x7C00u, 0x7B827B82u}},
        {0xE0AE, 0x5A40, 0x8001, {0xFB83u, 0, 0xFC00u, 0}},
        {0xE0AE, 0x5A40, 0x0001, {0xFB82u, 0, 0xFC00u, 0}},
        /* f16: 683 * 48 = 32784, half-way between 32768 (even) and 32800; c = +-2^-24 */
        {0x6156, 0x5200, 0x0001, {0x73D6u, 0x73D6u, 0x7801u, 0x73D673D6u}},
        {0x6156, 0x5200, 0x8001, {0x73D6u, 0x73D6u, 0x7800u, 0x73D673D6u}},
    };
    enum { N = sizeof t / sizeof t[0] };
    uint16_t in[N][4];
    for (int i = 0; i < N; i++) in[i][0] = t[i].a, in[i][1] = t[i].b, in[i][2] = t[i].c, in[i][3] = 0;
    uint32_t out[N][4];
    run_lanes("emu", ptx, in, sizeof in, out, sizeof out, N);
    static const char *form[4] = {"fma.rn.bf16", "fma.rn.relu.bf16", "fma.rn.f16", "fma.rn.relu.bf16x2"};
    for (int i = 0; i < N; i++)
        for (int j = 0; j < 4; j++)
            cr_expect_eq(out[i][j], t[i].want[j], "%s(%#x, %#x, %#x): %#x, want %#x", form[j], t[i].a, t[i].b, t[i].c, out[i][j], t[i].want[j]);
}

/* ISA, cvt, Floating Point Notes: ".sat: For floating-point destination types, .sat limits the result to the
 * range [0.0, 1.0]. NaN results are flushed to positive zero. Applies to .f16, .f32, and .f64 types."  The
 * emulator dropped .sat for an integer source and an .f64 destination (probeS F11). */
Test(isa, cvt_sat_f64_from_int) {
    static const char *ptx = HEAD80 KIO " .reg .b16 %h1;\n .reg .b32 %r1;\n .reg .b64 %rd1;\n .reg .f64 %fd<8>;\n"
        LANE_ADDRS(8, 64) " ld.global.u64 %rd1, [%la4];\n"
        " cvt.rn.sat.f64.s64 %fd1, %rd1;\n cvt.rz.sat.f64.s64 %fd2, %rd1;\n cvt.rn.sat.f64.u64 %fd3, %rd1;\n"
        " cvt.u32.u64 %r1, %rd1;\n cvt.rm.sat.f64.s32 %fd4, %r1;\n cvt.rp.sat.f64.u32 %fd5, %r1;\n"
        " cvt.u16.u64 %h1, %rd1;\n cvt.rn.sat.f64.s8 %fd6, %h1;\n cvt.rn.sat.f64.u8 %fd7, %h1;\n"
        " st.global.v2.f64 [%la5], {%fd1, %fd2};\n st.global.v2.f64 [%la5+16], {%fd3, %fd4};\n"
        " st.global.v2.f64 [%la5+32], {%fd5, %fd6};\n st.global.f64 [%la5+48], %fd7;\n ret;\n}\n";
    check_ptxas_arch(ptx, "sm_80");
    static const uint64_t x[] = {2, ~0ull, 1ull << 63, 0, 1, INT64_MAX, 1ull << 32, 0xFFFFFFFFull, 0x180, 0x101};
    enum { N = sizeof x / sizeof x[0] };
    double out[N][8];
    run_lanes("emu", ptx, x, sizeof x, out, sizeof out, N);
    for (int i = 0; i < N; i++) {
        /* x read as each source type: <= 0 gives +0.0, >= 1 gives 1.0 (a u64 is >= 1 unless 0) */
        static const char *form[7] = {"rn.sat.f64.s64", "rz.sat.f64.s64", "rn.sat.f64.u64", "rm.sat.f64.s32", "rp.sat.f64.u32",
                                      "rn.sat.f64.s8", "rn.sat.f64.u8"};
        const int64_t v[7] = {(int64_t)x[i], (int64_t)x[i], x[i] != 0, (int32_t)x[i], (uint32_t)x[i], (int8_t)x[i], (uint8_t)x[i]};
        for (int j = 0; j < 7; j++) {
            uint64_t want = v[j] >= 1 ? 0x3FF0000000000000ull : 0, got;
            memcpy(&got, &out[i][j], 8);
            cr_expect_eq(got, want, "cvt.%s of %#llx: %#llx, want %#llx", form[j], (unsigned long long)x[i], (unsigned long long)got,
                         (unsigned long long)want);
        }
    }
}

/* ISA, cvt, Integer Notes: "In float-to-integer conversions, depending upon conversion types, NaN input
 * results in following value: 1. Zero if source is not .f64 and destination is not .s64, .u64. 2. Otherwise
 * 1 << (BitWidth(dst) - 1) corresponding to the value of (MAXINT >> 1) + 1 for unsigned type or MININT for
 * signed type."  The emulator gave 0 for every NaN (probeS F5; PTX 8.7 and earlier said so).  Every rounding
 * mode, .ftz and .sat; -inf checks that saturation is unchanged. */
Test(isa, cvt_float_to_int_nan) {
    static const char *ptx = HEAD90 KIO " .reg .b16 %h<8>;\n .reg .b32 %r<8>;\n .reg .b64 %rd<8>;\n .reg .f32 %f1;\n .reg .f64 %fd1;\n"
        LANE_ADDRS(16, 80) " ld.global.f64 %fd1, [%la4];\n ld.global.f32 %f1, [%la4+8];\n ld.global.b16 %h1, [%la4+12];\n"
        " ld.global.b16 %h2, [%la4+14];\n"
        " cvt.rzi.s32.f64 %r1, %fd1;\n cvt.rni.u32.f64 %r2, %fd1;\n cvt.rmi.s16.f64 %h3, %fd1;\n cvt.rpi.u8.f64 %h4, %fd1;\n"
        " cvt.rni.u16.f16 %h5, %h1;\n cvt.rzi.sat.s64.f64 %rd1, %fd1;\n cvt.rni.s64.f32 %rd2, %f1;\n cvt.rzi.ftz.u64.f32 %rd3, %f1;\n"
        " cvt.rzi.u64.f16 %rd4, %h1;\n cvt.rmi.s64.bf16 %rd5, %h2;\n cvt.rzi.s32.f32 %r3, %f1;\n cvt.rzi.sat.u32.f32 %r4, %f1;\n"
        " cvt.rpi.s32.bf16 %r5, %h2;\n"
        " st.global.u32 [%la5], %r1;\n st.global.u32 [%la5+4], %r2;\n st.global.u16 [%la5+8], %h3;\n st.global.u8 [%la5+10], %h4;\n"
        " st.global.u16 [%la5+12], %h5;\n st.global.u64 [%la5+16], %rd1;\n st.global.u64 [%la5+24], %rd2;\n"
        " st.global.u64 [%la5+32], %rd3;\n st.global.u64 [%la5+40], %rd4;\n st.global.u64 [%la5+48], %rd5;\n"
        " st.global.u32 [%la5+56], %r3;\n st.global.u32 [%la5+60], %r4;\n st.global.u32 [%la5+64], %r5;\n ret;\n}\n";
    check_ptxas_arch(ptx, "sm_90a"); /* cvt from .bf16 to an integer needs sm_90 */
    static const struct { const char *form; unsigned off, size; uint64_t nan, minf; } col[] = {
        {"rzi.s32.f64", 0, 4, 0x80000000u, 0x80000000u},
        {"rni.u32.f64", 4, 4, 0x80000000u, 0},
        {"rmi.s16.f64", 8, 2, 0x8000, 0x8000},
        {"rpi.u8.f64", 10, 1, 0x80, 0},
        {"rni.u16.f16", 12, 2, 0, 0},
        {"rzi.sat.s64.f64", 16, 8, 1ull << 63, 1ull << 63},
        {"rni.s64.f32", 24, 8, 1ull << 63, 1ull << 63},
        {"rzi.ftz.u64.f32", 32, 8, 1ull << 63, 0},
        {"rzi.u64.f16", 40, 8, 1ull << 63, 0},
        {"rmi.s64.bf16", 48, 8, 1ull << 63, 1ull << 63},
        {"rzi.s32.f32", 56, 4, 0, 0x80000000u},
        {"rzi.sat.u32.f32", 60, 4, 0, 0},
        {"rpi.s32.bf16", 64, 4, 0, 0x80000000u},
    };
    /* f64, f32, f16, bf16: quiet NaNs, NaNs with a sign and a payload, signalling NaNs, all ones; -inf last */
    static const struct { uint64_t f64; uint32_t f32; uint16_t f16, bf16; } x[] = {
        {0x7FF8000000000000ull, 0x7FC00000u, 0x7E00, 0x7FC0},
        {0xFFF8000012345678ull, 0xFFC12345u, 0xFE01, 0xFFC1},
        {0x7FF0000000000001ull, 0x7F800001u, 0x7C01, 0x7F81},
        {0xFFFFFFFFFFFFFFFFull, 0xFFFFFFFFu, 0xFFFF, 0xFFFF},
        {0xFFF0000000000000ull, 0xFF800000u, 0xFC00, 0xFF80},
    };
    enum { N = sizeof x / sizeof x[0] };
    uint8_t out[N][80];
    run_lanes("emu:sm_90a", ptx, x, sizeof x, out, sizeof out, N);
    for (int i = 0; i < N; i++)
        for (size_t j = 0; j < sizeof col / sizeof *col; j++) {
            uint64_t got = 0, want = i == N - 1 ? col[j].minf : col[j].nan;
            memcpy(&got, out[i] + col[j].off, col[j].size); /* little-endian */
            cr_expect_eq(got, want, "cvt.%s of %s: %#llx, want %#llx", col[j].form, i == N - 1 ? "-inf" : "NaN", (unsigned long long)got,
                         (unsigned long long)want);
        }
}

/* ISA 4.6.3, Constant Expressions: "Integer constant expressions also allow unary logical negation (!), bitwise
 * complement (~), remainder (%), shift operators (<< and >>) ..." with C's precedence; 4.6.4: "Literals are
 * signed unless unsigned is needed to prevent overflow, or unless the literal uses a U suffix", "Unary plus and
 * minus preserve the type of the input operand", "Unary logical negation (!) produces a signed result with value
 * 0 or 1", "Unary bitwise complement (~) interprets the source operand as unsigned and produces an unsigned
 * result", "Remainder (%) interprets the operands as unsigned", "Left and right shift interpret the second operand
 * as unsigned and produce a result with the same type as the first operand ... right shift of a signed value is
 * arithmetic".  The emulator read `(5)` as 0 and `!0`/`!7` as 0/7 and refused the rest (probeS F9).  Where the
 * ISA is silent or its text and ptxas differ (the type of %'s result and of ?:, shift counts past 63) the values
 * are the ones ptxas folds into its SASS (checked once by reading the immediates of a ptxas-built cubin). */
Test(isa, constant_expressions) {
    static const struct { const char *e; uint64_t want; } t[] = {
        {"(5)", 5}, {"!0", 1}, {"!7", 0}, {"!~0", 0}, {"(1+2)*3", 9}, {"1<<31", 0x80000000u}, {"(1<<20)-1", 0xFFFFF},
        {"(-1)>>1", ~0ull}, {"~0", ~0ull}, {"(~0)>>60", 0xF}, {"(.s64)~0>>60", ~0ull}, {"(.u64)-1>>63", 1},
        {"(.s64)0xFFFFFFFFFFFFFFFF >> 63", ~0ull}, {"7/2", 3}, {"-7/2", (uint64_t)-3}, {"6/-4", ~0ull},
        {"-7 % 3", 0}, /* (2^64 - 7) mod 3 */ {"7 % 3", 1}, {"(5 % 3) - 3 < 0", 0}, /* an unsigned remainder (ptxas) */
        {"0xFFFFFFFFU+1", 0x100000000ull}, {"0x8000000000000000/2", 0x4000000000000000ull}, /* unsigned: past INT64_MAX */
        {"-0x8000000000000000/2", 0x4000000000000000ull}, /* unary minus keeps it unsigned */
        {"-2147483648", 0xFFFFFFFF80000000ull}, {"-(-42)", 42}, {"+7", 7},
        {"1?5:6", 5}, {"0?5:6", 6}, {"1?2:0?4:5", 2}, {"(0 ? 0U : -1) >> 63", ~0ull}, /* the chosen operand's type (ptxas) */
        {"3==3", 1}, {"3!=3", 0}, {"-1<0", 1}, {"-1<0U", 0}, {"5>3>=1", 1}, {"(1<=1)+(2>=3)+(1>2)", 1},
        {"1&&2", 1}, {"0||0", 0}, {"2|1^3&1", 2}, {"1+2*3-4/2", 5}, {"10-2-3", 5},
        {"(-1 & -1) >> 63", ~0ull}, {"(~0 & -1) >> 63", 1}, {"(-1 * 1U) >> 63", 1},
        {"1 << 64", 1}, {"-1 >> 100", ~0ull}, /* the count modulo 64 (ptxas) */ {"WARP_SZ*2", 64}, {"WARP_SZ-1", 31},
    };
    enum { N = sizeof t / sizeof t[0] }; /* N + 2 <= 64 registers */
    static const char *head = HEAD80 ".global .u32 g[2] = {2*3, (1 << 4) | 1};\n" KIO " .reg .b32 %r<8>;\n .reg .b64 %rd<64>;\n"
        " .reg .f32 %f<3>;\n" LANE_ADDRS(8, 8) " mov.u32 %r1, 100;\n add.u32 %r2, %r1, (5);\n add.u32 %r3, %r1, !0;\n"
        " add.u32 %r4, %r1, WARP_SZ / 4;\n mov.f32 %f1, (1.0);\n mov.f32 %f2, -(2.5);\n ld.global.u32 %r5, [g];\n"
        " ld.global.u32 %r6, [g+4];\n st.global.v4.u32 [%la2], {%r2, %r3, %r4, %r5};\n st.global.v2.f32 [%la2+16], {%f1, %f2};\n"
        " st.global.u32 [%la2+24], %r6;\n mov.b64 %rd1, {(1+1), 3 * 3};\n st.global.u64 [%la2+32], %rd1;\n";
    char ptx[8192];
    int n = snprintf(ptx, sizeof ptx, "%s", head);
    for (int i = 0; i < N; i++) n += snprintf(ptx + n, sizeof ptx - n, " mov.b64 %%rd%d, %s;\n st.global.u64 [%%la2+%d], %%rd%d;\n", i + 2, t[i].e, 40 + 8 * i, i + 2);
    snprintf(ptx + n, sizeof ptx - n, " ret;\n}\n");
    check_ptxas_arch(ptx, "sm_80");
    uint64_t out[5 + N];
    run_lanes("emu", ptx, NULL, 8, out, sizeof out, 1);
    uint32_t w[10];
    memcpy(w, out, sizeof w);
    cr_expect(w[0] == 105 && w[1] == 101 && w[2] == 108, "add.u32 100 + (5), !0, WARP_SZ / 4: %u %u %u", w[0], w[1], w[2]);
    cr_expect(w[3] == 6 && w[6] == 17, "initializers 2*3, (1 << 4) | 1: %u %u", w[3], w[6]);
    cr_expect(w[4] == 0x3F800000u && w[5] == 0xC0200000u, "(1.0), -(2.5): %#x %#x", w[4], w[5]);
    cr_expect_eq(out[4], 0x0000000900000002ull, "{(1+1), 3 * 3}: %#llx", (unsigned long long)out[4]);
    for (int i = 0; i < N; i++)
        cr_expect_eq(out[5 + i], t[i].want, "%s: %#llx, want %#llx", t[i].e, (unsigned long long)out[5 + i], (unsigned long long)t[i].want);
    /* what the emulator does not evaluate is refused at its line */
    static const struct { const char *ins, *msg; } bad[] = {
        {" mov.f32 %f1, 1.0 + 2.0;\n", "'+' on a float in a constant expression"},
        {" mov.u32 %r1, 1 / 0;\n", "'/' by zero"},
        {" mov.u32 %r1, 5 % (2 - 2);\n", "'%' by zero"},
        {" mov.u32 %r1, (1 + 2;\n", "expected ')' in a constant expression"},
        {" mov.u32 %r1, 1 + %r2;\n", "'%r2' in a constant expression"},
        {" mov.u32 %r1, 1 ? 2;\n", "expected ':'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char p[512];
        snprintf(p, sizeof p, HEAD80 ".visible .entry k()\n{\n .reg .b32 %%r<3>;\n .reg .f32 %%f<2>;\n%s ret;\n}\n", bad[i].ins);
        load_fails("emu", p, bad[i].msg);
        load_fails("emu", p, "ptx:8:");
    }
}

/* ISA, rcp.approx.ftz.f64: "compute an approximate .f64 reciprocal of this value using the most-significant 20 bits
 * of the mantissa of operand a, ... zero the least significant 32 mantissa bits of .f64 destination d" and "Input
 * NaNs map to a canonical NaN with encoding 0x7fffffff00000000"; rsqrt.approx.ftz.f64: "The least significant 32
 * bits of the double-precision (.f64) destination d are all zeros."  Subnormal inputs and results flush to zero.
 * The emulator returned the full-precision double (probeS F12).  Finite results: the low word 0, the high word
 * within one unit of the exact result's (an approximation of 20 mantissa bits). */
Test(isa, rcp_rsqrt_approx_ftz_f64_low_word) {
    static const char *ptx = HEAD80 KIO " .reg .f64 %fd<4>;\n" LANE_ADDRS(8, 16) " ld.global.f64 %fd1, [%la4];\n"
        " rcp.approx.ftz.f64 %fd2, %fd1;\n rsqrt.approx.ftz.f64 %fd3, %fd1;\n st.global.v2.f64 [%la5], {%fd2, %fd3};\n ret;\n}\n";
    check_ptxas_arch(ptx, "sm_80");
    enum { APPROX = 1 }; /* a finite result: compare the high word with the exact one's, +-1 */
    static const struct { uint64_t a; int rcp_kind; uint64_t rcp; int rsq_kind; uint64_t rsq; } t[] = {
        {0x3FF8000000000000ull, APPROX, 0, APPROX, 0},                                        /* 1.5 */
        {0x400921FB54442D18ull, APPROX, 0, APPROX, 0},                                        /* pi */
        {0x3FF0000012345678ull, 0, 0x3FF0000000000000ull, APPROX, 0},                         /* rcp reads 1.0 */
        {0x4010000000000000ull, 0, 0x3FD0000000000000ull, 0, 0x3FE0000000000000ull},         /* 4: 0.25, 0.5 */
        {0xC000000000000000ull, 0, 0xBFE0000000000000ull, 0, 0x7FFFFFFF00000000ull},         /* -2: -0.5, NaN */
        {0x7FD0000000000000ull, 0, 0x0010000000000000ull, APPROX, 0},                         /* 2^1022: 2^-1022 */
        {0x7FE0000000000000ull, 0, 0, APPROX, 0},                                             /* 2^1023: 2^-1023 flushes */
        {0, 0, 0x7FF0000000000000ull, 0, 0x7FF0000000000000ull},                              /* +0: +inf */
        {0x8000000000000000ull, 0, 0xFFF0000000000000ull, 0, 0xFFF0000000000000ull},          /* -0: -inf */
        {1, 0, 0x7FF0000000000000ull, 0, 0x7FF0000000000000ull},                              /* subnormal: +0 */
        {0x7FF0000000000000ull, 0, 0, 0, 0},                                                  /* inf: +0 */
        {0x7FF8000000000000ull, 0, 0x7FFFFFFF00000000ull, 0, 0x7FFFFFFF00000000ull},          /* NaN */
        {0xFFF0000000000001ull, 0, 0x7FFFFFFF00000000ull, 0, 0x7FFFFFFF00000000ull},          /* NaN, low payload */
    };
    enum { N = sizeof t / sizeof t[0] };
    uint64_t in[N], out[N][2];
    for (int i = 0; i < N; i++) in[i] = t[i].a;
    run_lanes("emu", ptx, in, sizeof in, out, sizeof out, N);
    for (int i = 0; i < N; i++) {
        double a, hi_a;
        uint64_t ahi = t[i].a & ~0xFFFFFFFFull;
        memcpy(&a, &t[i].a, 8);
        memcpy(&hi_a, &ahi, 8);
        const double exact[2] = {1.0 / hi_a, 1.0 / sqrt(a)};
        const int kind[2] = {t[i].rcp_kind, t[i].rsq_kind};
        const uint64_t want[2] = {t[i].rcp, t[i].rsq};
        for (int j = 0; j < 2; j++) {
            const char *op = j ? "rsqrt" : "rcp";
            uint64_t got = out[i][j];
            if (kind[j] == APPROX) {
                uint64_t e;
                memcpy(&e, &exact[j], 8);
                int64_t d = (int64_t)(got >> 32) - (int64_t)(e >> 32);
                cr_expect((uint32_t)got == 0 && d >= -1 && d <= 1, "%s.approx.ftz.f64(%#llx): %#llx, exact %#llx", op,
                          (unsigned long long)t[i].a, (unsigned long long)got, (unsigned long long)e);
            } else {
                cr_expect_eq(got, want[j], "%s.approx.ftz.f64(%#llx): %#llx, want %#llx", op, (unsigned long long)t[i].a,
                             (unsigned long long)got, (unsigned long long)want[j]);
            }
        }
    }
}

/* ISA, Special Registers: "%clock_hi: The upper 32-bits of %clock64 special register" (Triton's proton profiler
 * reads it); "%pm0..%pm7: Performance monitoring counters" and "%pm0_64..%pm7_64: 64-bit performance monitoring
 * counters", whose counts the ISA leaves to the hardware: the emulator counts no events (pmevent has no effect),
 * so they read 0.  All were refused as undeclared registers (probeS F7, F8).  %clock_hi read between two %clock64
 * reads lies between their upper halves. */
Test(isa, clock_hi_and_pm_counters) {
    static const char *ptx = HEAD80 KIO " .reg .b32 %r<11>;\n .reg .b64 %rd<12>;\n" LANE_ADDRS(8, 128)
        " mov.u64 %rd1, %clock64;\n mov.u32 %r1, %clock_hi;\n mov.u64 %rd2, %clock64;\n"
        " mov.u32 %r2, %pm0;\n mov.u32 %r3, %pm1;\n mov.u32 %r4, %pm2;\n mov.u32 %r5, %pm3;\n"
        " mov.u32 %r6, %pm4;\n mov.u32 %r7, %pm5;\n mov.u32 %r8, %pm6;\n mov.u32 %r9, %pm7;\n"
        " mov.u64 %rd3, %pm0_64;\n mov.u64 %rd4, %pm1_64;\n mov.u64 %rd5, %pm2_64;\n mov.u64 %rd6, %pm3_64;\n"
        " mov.u64 %rd7, %pm4_64;\n mov.u64 %rd8, %pm5_64;\n mov.u64 %rd9, %pm6_64;\n mov.u64 %rd10, %pm7_64;\n"
        " st.global.v2.u64 [%la5], {%rd1, %rd2};\n st.global.v4.u32 [%la5+16], {%r1, %r2, %r3, %r4};\n"
        " st.global.v4.u32 [%la5+32], {%r5, %r6, %r7, %r8};\n st.global.u32 [%la5+48], %r9;\n"
        " st.global.v2.u64 [%la5+64], {%rd3, %rd4};\n st.global.v2.u64 [%la5+80], {%rd5, %rd6};\n"
        " st.global.v2.u64 [%la5+96], {%rd7, %rd8};\n st.global.v2.u64 [%la5+112], {%rd9, %rd10};\n ret;\n}\n";
    check_ptxas_arch(ptx, "sm_80");
    enum { N = 4 };
    uint8_t out[N][128];
    run_lanes("emu", ptx, NULL, 8 * N, out, sizeof out, N);
    for (int i = 0; i < N; i++) {
        uint64_t c[2], pm64[8];
        uint32_t hi, pm[8];
        memcpy(c, out[i], 16);
        memcpy(&hi, out[i] + 16, 4);
        memcpy(pm, out[i] + 20, 32);
        memcpy(pm64, out[i] + 64, 64);
        cr_expect(c[0] >> 32 <= hi && hi <= c[1] >> 32, "%%clock_hi %#x between %%clock64 %#llx and %#llx", hi, (unsigned long long)c[0],
                  (unsigned long long)c[1]);
        for (int k = 0; k < 8; k++) {
            cr_expect_eq(pm[k], 0u, "%%pm%d: %u", k, pm[k]);
            cr_expect_eq(pm64[k], 0u, "%%pm%d_64: %llu", k, (unsigned long long)pm64[k]);
        }
    }
}

/* ISA, mad24: "mad24.hi.sat.s32 d, a, b, c" adds c to bits 47..16 of the 48-bit product of a's and b's low 24
 * bits and ".sat limits result to MININT..MAXINT (no overflow) ... applies only to .s32 type in .hi mode";
 * ptxas takes it.  The emulator ignored .sat there and wrapped (probe h1: 0x20000000 + 0x7fffffff gave
 * 0x9fffffff).  Values worked by hand from the ISA's formula, the lanes' sources sign-extended from bit 23. */
Test(isa, mad24_hi_sat_s32) {
    static const char *ptx = HEAD80 KIO " .reg .b32 %r<8>;\n" LANE_ADDRS(12, 8)
        " ld.global.u32 %r1, [%la4];\n ld.global.u32 %r2, [%la4+4];\n ld.global.u32 %r3, [%la4+8];\n"
        " mad24.hi.sat.s32 %r4, %r1, %r2, %r3;\n mad24.hi.s32 %r5, %r1, %r2, %r3;\n"
        " st.global.v2.u32 [%la5], {%r4, %r5};\n ret;\n}\n";
    check_ptxas_arch(ptx, "sm_80");
    static const struct { uint32_t a, b, c, sat, wrap; } c[] = {
        /* (-2^23)(-2^22) = 2^45, >> 16 = 2^29; + MAXINT saturates */
        {0x7F800000u, 0x7FC00000u, 0x7FFFFFFFu, 0x7FFFFFFFu, 0x9FFFFFFFu},
        /* (-2^23)(2^23 - 1) >> 16 = -(2^30 - 128); + (MININT + 2^23 - 1) saturates low */
        {0xFF800000u, 0x807FFFFFu, 0x807FFFFFu, 0x80000000u, 0x4080007Fu},
        /* in range: 0x123456 * 0x10 = 0x1234560, >> 16 = 0x123; + 5 */
        {0x00123456u, 0x00000010u, 5u, 0x128u, 0x128u},
        /* (-1)(1) = -1, >> 16 = -1 (arithmetic); + MININT saturates at MININT */
        {0x00FFFFFFu, 1u, 0x80000000u, 0x80000000u, 0x7FFFFFFFu},
    };
    enum { N = sizeof c / sizeof c[0] };
    uint32_t in[N][3], out[N][2];
    for (int i = 0; i < N; i++) in[i][0] = c[i].a, in[i][1] = c[i].b, in[i][2] = c[i].c;
    run_lanes("emu", ptx, in, sizeof in, out, sizeof out, N);
    for (int i = 0; i < N; i++) {
        cr_expect_eq(out[i][0], c[i].sat, "mad24.hi.sat.s32 %#x %#x %#x: %#x, want %#x", c[i].a, c[i].b, c[i].c, out[i][0], c[i].sat);
        cr_expect_eq(out[i][1], c[i].wrap, "mad24.hi.s32 %#x %#x %#x: %#x, want %#x", c[i].a, c[i].b, c[i].c, out[i][1], c[i].wrap);
    }
}

/* ISA, integer add/sub/mad/mad24: .sat is "add.sat.s32", "sub.sat.s32", "mad.hi.sat.s32" and
 * "mad24.hi.sat.s32" only; ptxas refuses it on other types and modes ("Modifier '.sat' does not apply to
 * '.u32' type", "Illegal modifier '.sat' for instruction 'mad.lo'").  The emulator took these and ran them
 * without saturating: a silently wrong result for PTX no GPU runs. */
Test(isa, integer_sat_forms_refused) {
    static const char *bad[] = {
        "add.sat.u32 %r3, %r1, %r2;", "sub.sat.s64 %rd3, %rd1, %rd2;", "add.sat.s16 %h3, %h1, %h2;", "add.sat.s16x2 %r3, %r1, %r2;",
        "sub.sat.u16x2 %r3, %r1, %r2;", "mad.lo.sat.s32 %r3, %r1, %r2, %r1;", "mad.hi.sat.u32 %r3, %r1, %r2, %r1;",
        "mad24.lo.sat.s32 %r3, %r1, %r2, %r1;", "mul24.lo.sat.s32 %r3, %r1, %r2;", "mul.lo.sat.s32 %r3, %r1, %r2;",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char ptx[1024];
        snprintf(ptx, sizeof ptx, HEAD80 ".visible .entry k()\n{\n .reg .b32 %%r<4>;\n .reg .b64 %%rd<4>;\n .reg .b16 %%h<4>;\n"
                 " mov.u32 %%r1, 1;\n mov.u32 %%r2, 2;\n mov.u64 %%rd1, 1;\n mov.u64 %%rd2, 2;\n mov.u16 %%h1, 1;\n mov.u16 %%h2, 2;\n"
                 " %s\n ret;\n}\n", bad[i]);
        cr_expect(ptxas_refuses(ptx, "sm_80"), "ptxas takes %s", bad[i]);
        load_fails("emu", ptx, "integer .sat is add.sat.s32, sub.sat.s32, mad.hi.sat.s32 and mad24.hi.sat.s32 only");
    }
    /* the four forms the ISA has still load */
    TileDevice *d = open_dev("emu");
    TileDevModule *m;
    load(d, HEAD80 ".visible .entry k()\n{\n .reg .b32 %r<4>;\n mov.u32 %r1, 1;\n mov.u32 %r2, 2;\n add.sat.s32 %r3, %r1, %r2;\n"
            " sub.sat.s32 %r3, %r1, %r2;\n mad.hi.sat.s32 %r3, %r1, %r2, %r3;\n mad24.hi.sat.s32 %r3, %r1, %r2, %r3;\n ret;\n}\n", &m);
    dev_module_unload(m);
    dev_close(d);
}

/* ISA, lop3 (PTX 8.2): "lop3.BoolOp.b32 d|p, a, b, c, immLut, q; .BoolOp = { .or, .and };  ... the
 * result of the logical operation is also used to compute the predicate p: p = (d != 0) BoolOp q".
 * ptxas takes it from .version 8.2 on sm_80; the emulator refused the modifier. */
Test(isa, lop3_boolop_predicate_destination) {
    static const char *ptx = ".version 8.2\n.target sm_80\n.address_size 64\n" KIO
        " .reg .b32 %r<16>;\n .reg .pred %p<8>;\n" LANE_ADDRS(16, 16)
        " ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%la4];\n setp.ne.u32 %p1, %r4, 0;\n"
        " lop3.or.b32 %r5|%p2, %r1, %r2, %r3, 0x80, %p1;\n"   /* a & b & c; p = d != 0 || q */
        " lop3.and.b32 %r6|%p3, %r1, %r2, %r3, 0x96, !%p1;\n" /* a ^ b ^ c; p = d != 0 && !q */
        " lop3.and.b32 %r7|%p4, %r1, %r2, %r3, 0xFE, 1;\n"   /* a | b | c; p = d != 0 && true */
        " selp.u32 %r8, 1, 0, %p2;\n selp.u32 %r9, 2, 0, %p3;\n selp.u32 %r10, 4, 0, %p4;\n"
        " or.b32 %r8, %r8, %r9;\n or.b32 %r8, %r8, %r10;\n"
        " st.global.v4.u32 [%la5], {%r5, %r6, %r7, %r8};\n ret;\n}\n";
    check_ptxas_arch(ptx, "sm_80");
    static const uint32_t c[][4] = {
        {0, 0, 0, 0}, {0, 0, 0, 1}, {0xF0, 0x3C, 0x0F, 0}, {0xF0, 0x3C, 0x0F, 1}, {0xFF, 0xFF, 0xFF, 0},
        {0xFF, 0xFF, 0xFF, 1}, {0x80000000u, 0x80000000u, 0x80000000u, 0}, {5, 5, 0, 1}, {5, 5, 0, 0},
    };
    enum { N = sizeof c / sizeof c[0] };
    uint32_t out[N][4];
    run_lanes("emu", ptx, c, sizeof c, out, sizeof out, N);
    for (int i = 0; i < N; i++) {
        uint32_t a = c[i][0], b = c[i][1], cc = c[i][2];
        bool q = c[i][3] != 0;
        uint32_t d1 = a & b & cc, d2 = a ^ b ^ cc, d3 = a | b | cc;
        uint32_t p = ((d1 != 0) || q ? 1u : 0u) | ((d2 != 0) && !q ? 2u : 0u) | (d3 != 0 ? 4u : 0u);
        cr_expect_eq(out[i][0], d1, "lane %d: lop3.or d %#x, want %#x", i, out[i][0], d1);
        cr_expect_eq(out[i][1], d2, "lane %d: lop3.and d %#x, want %#x", i, out[i][1], d2);
        cr_expect_eq(out[i][2], d3, "lane %d: lop3.and d %#x, want %#x", i, out[i][2], d3);
        cr_expect_eq(out[i][3], p, "lane %d (%#x %#x %#x q=%d): predicates %#x, want %#x", i, a, b, cc, q, out[i][3], p);
    }
    /* what ptxas refuses is refused: before 8.2, .xor, a BoolOp without p|q, p|q without a BoolOp */
    static const struct { const char *ins, *version, *why; } bad[] = {
        {"lop3.or.b32 %r1|%p1, %r1, %r2, %r3, 0x80, %p2;", "8.1", "needs PTX ISA .version 8.2"},
        {"lop3.xor.b32 %r1|%p1, %r1, %r2, %r3, 0x80, %p2;", "8.2", "unsupported modifier '.xor'"},
        {"lop3.or.b32 %r1, %r1, %r2, %r3, 0x80, %p2;", "8.2", "lop3 with a predicate destination is"},
        {"lop3.or.b32 %r1, %r1, %r2, %r3, 0x80;", "8.2", "lop3 with a predicate destination is"},
        {"lop3.b32 %r1|%p1, %r1, %r2, %r3, 0x80, %p2;", "8.2", "lop3 with a predicate destination is"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char src[1024];
        snprintf(src, sizeof src, ".version %s\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n .reg .b32 %%r<4>;\n"
                 " .reg .pred %%p<4>;\n mov.u32 %%r2, 1;\n mov.u32 %%r3, 2;\n setp.ne.u32 %%p2, %%r2, 0;\n %s\n ret;\n}\n",
                 bad[i].version, bad[i].ins);
        cr_expect(ptxas_refuses(src, "sm_80"), "ptxas takes %s at .version %s", bad[i].ins, bad[i].version);
        load_fails("emu", src, bad[i].why);
    }
}
