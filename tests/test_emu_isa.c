/* test_emu_isa.c - rules of the PTX ISA the emulator once got wrong, each
 * checked with hand-written PTX whose expected result comes from the ISA's
 * text (quoted in the test's comment), not from the emulator:
 *   1. cp.async's fourth operand is src-size (an integer) or ignore-src (a
 *      predicate): both polarities, with and without a cache policy;
 *   2. cvt .satfinite to tf32 saturates to tf32's largest finite value;
 *   3. mbarrier.arrive_drop.expect_tx (refused before), %is_explicit_cluster
 *      of a launch given a 1x1x1 cluster; what the ISA does not have or the
 *      emulator cannot hold is refused at load: s8 wgmma shapes the ISA
 *      does not list, .b128 registers (they held 64 bits, silently). */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/tile/tile.h"
#include "runtime/device.h"

#define HEAD80 ".version 8.0\n.target sm_80\n.address_size 64\n"

static TileDevice *open_dev(const char *spec) {
    TileDevice *d = NULL;
    char *err = NULL;
    DevOptions o = {.emu_host_threads = 1};
    cr_assert_eq(dev_open(spec, &o, &d, &err), DEV_OK, "dev_open(%s): %s", spec, err ? err : "");
    return d;
}

static TileDevFunction *load(TileDevice *d, const char *ptx, TileDevModule **mod) {
    cr_assert_eq(dev_module_load_ptx(d, ptx, mod), DEV_OK, "load: %s\n%s", dev_last_error(d), ptx);
    TileDevFunction *f = NULL;
    cr_assert_eq(dev_module_get_function(*mod, "k", &f), DEV_OK, "get_function: %s", dev_last_error(d));
    return f;
}

static uint64_t buffer(TileDevice *d, const void *init, size_t n) {
    uint64_t a;
    cr_assert_eq(dev_malloc(d, n, &a), DEV_OK);
    if (init) cr_assert_eq(dev_memcpy_htod(d, a, init, n), DEV_OK);
    else cr_assert_eq(dev_memset_d8(d, a, 0xEE, n), DEV_OK);
    return a;
}

static void launch_ok(TileDevice *d, TileDevFunction *f, unsigned block, void **params) {
    cr_assert_eq(dev_launch(f, 1, 1, 1, block, 1, 1, 0, NULL, params), DEV_OK, "launch: %s", dev_last_error(d));
    cr_assert_eq(dev_synchronize(d), DEV_OK, "%s", dev_last_error(d));
}

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
Test(isa, cvt_satfinite_tf32_max) {
    static const char *ptx = ".version 8.0\n.target sm_90a\n.address_size 64\n"
        ".visible .entry k(.param .u64 in, .param .u64 out)\n{\n .reg .b32 %r<8>;\n .reg .f32 %f<2>;\n .reg .b64 %rd<8>;\n"
        " ld.param.u64 %rd1, [in];\n ld.param.u64 %rd2, [out];\n mov.u32 %r1, %tid.x;\n mul.wide.u32 %rd3, %r1, 4;\n"
        " add.s64 %rd4, %rd1, %rd3;\n ld.global.f32 %f1, [%rd4];\n"
        " cvt.rna.satfinite.tf32.f32 %r2, %f1;\n add.s64 %rd5, %rd2, %rd3;\n st.global.u32 [%rd5], %r2;\n"
        " cvt.rn.satfinite.tf32.f32 %r3, %f1;\n add.s64 %rd6, %rd5, 32;\n st.global.u32 [%rd6], %r3;\n"
        " cvt.rz.satfinite.tf32.f32 %r4, %f1;\n add.s64 %rd7, %rd6, 32;\n st.global.u32 [%rd7], %r4;\n ret;\n}\n";
    TileDevice *d = open_dev("emu:sm_90a");
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

#define HEAD90 ".version 8.0\n.target sm_90a\n.address_size 64\n"

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

static void load_fails(const char *spec, const char *ptx, const char *needle) {
    TileDevice *d = open_dev(spec);
    TileDevModule *m = NULL;
    cr_expect_eq(dev_module_load_ptx(d, ptx, &m), DEV_ERR_PTX, "loaded: %s", ptx);
    cr_expect(strstr(dev_last_error(d), needle), "message '%s' lacks '%s'", dev_last_error(d), needle);
    if (m) dev_module_unload(m);
    dev_close(d);
}

/* ISA, wgmma.mma_async, integer types: ".shape = {.m64n8k32, .m64n16k32, .m64n24k32, .m64n32k32,
 * .m64n48k32, .m64n64k32, .m64n80k32, ...}": past 32, N steps by 16 (the floating-point shapes by 8).
 * m64n40k32.s32.s8.s8 loaded and ran.  .b128 registers: the emulator's hold 64 bits, and
 * `mov.b128 %q, {a, b}` kept one half; refused at the declaration. */
Test(isa, refused_at_load) {
    load_fails("emu:sm_90a",
               HEAD90 ".visible .entry k()\n{\n .reg .b32 %d<20>;\n .reg .b64 %rd<3>;\n .reg .pred %p;\n"
               " mov.u64 %rd1, 0;\n mov.u64 %rd2, 0;\n setp.eq.u32 %p, 1, 1;\n wgmma.fence.sync.aligned;\n"
               " wgmma.mma_async.sync.aligned.m64n40k32.s32.s8.s8 {%d0, %d1, %d2, %d3, %d4, %d5, %d6, %d7, %d8, %d9, %d10, %d11, %d12,"
               " %d13, %d14, %d15, %d16, %d17, %d18, %d19}, %rd1, %rd2, %p;\n ret;\n}\n",
               "s8/u8 wgmma's N is 8, 16, 24 or a multiple of 16");
    load_fails("emu:sm_90a",
               ".version 8.3\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n .reg .b128 %q;\n .reg .b64 %rd<3>;\n"
               " mov.b128 %q, {%rd1, %rd2};\n ret;\n}\n",
               "128-bit registers (.reg .b128) are not supported");
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
