/* test_emu_race_wgmma.c - the emulator's racecheck of wgmma's shared-memory operands (docs/emulator.md,
 * Racecheck): operands written through the generic proxy without fence.proxy.async or a barrier before the
 * wgmma reads them, and writes by another warpgroup not ordered after the wgmma.wait_group that retires the
 * reads (a release before the wgmma, ping-pong warpgroups, two consumers releasing a stage).  Each
 * hand-written kernel (checked by ptxas -arch=sm_90a when installed) runs correct and with the one mistake,
 * whose report must name the instructions and threads involved.  The other async-proxy checks are in
 * test_emu_race.c. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/device.h"
#include "support/target.h"
#include "test_emu_sm90.h"

/* wgmma reads its shared operands through the async proxy: the 128 threads write A (16 bytes each; B stays
 * zero), then fence.proxy.async (mode 1: not, reported) and a barrier; mode 2: the second warpgroup writes A,
 * fenced but with no barrier before the first warpgroup's wgmma (reported); mode 3: as 2, each warpgroup
 * passing a named barrier of its own (bar.sync 1 / 2, 128) first: still no barrier between them (reported). */
static const char *wgmma_fence_ptx = PTX_HEAD
    ".visible .entry wf(.param .u64 out, .param .u32 mode)\n"
    "{\n"
    "  .reg .pred %p<6>;\n"
    "  .reg .b32 %r<12>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  .reg .f32 %f<4>;\n"
    "  .shared .align 1024 .b8 smem[2304];\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  ld.param.u32 %r1, [mode];\n"
    "  mov.u32 %r2, %tid.x;\n"
    "  mov.u32 %r3, smem;\n"
    "  setp.ge.u32 %p1, %r1, 2;\n"
    "  setp.ge.u32 %p2, %r2, 128;\n"
    "  xor.pred %p3, %p1, %p2;\n"
    "  @%p3 bra $SKIP;\n"
    "  and.b32 %r4, %r2, 127;\n"
    "  mad.lo.u32 %r5, %r4, 16, %r3;\n"
    "  mov.b32 %r6, 0x3c003c00;\n"
    "  st.shared.v4.b32 [%r5], {%r6, %r6, %r6, %r6};\n"
    "  setp.ne.u32 %p3, %r1, 1;\n"
    "  @%p3 fence.proxy.async.shared::cta;\n"
    "$SKIP:\n"
    "  setp.eq.u32 %p4, %r1, 3;\n"
    "  @%p2 bra $SECOND;\n"
    "  setp.ne.u32 %p5, %r1, 2;\n"
    "  @%p5 bar.sync 1, 128;\n"
    "  shr.u32 %r7, %r3, 4;\n"
    "  cvt.u64.u32 %rd2, %r7;\n"
    "  or.b64 %rd2, %rd2, 0x0000001000080000;\n"
    "  add.u64 %rd3, %rd2, 128;\n"
    "  mov.f32 %f0, 0f00000000;\n  mov.f32 %f1, %f0;\n  mov.f32 %f2, %f0;\n  mov.f32 %f3, %f0;\n"
    "  wgmma.fence.sync.aligned;\n"
    "  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd2, %rd3, 1, 1, 1, 0, 0;\n"
    "  wgmma.commit_group.sync.aligned;\n"
    "  wgmma.wait_group.sync.aligned 0;\n"
    "  mul.wide.u32 %rd4, %r2, 4;\n"
    "  add.u64 %rd5, %rd1, %rd4;\n"
    "  add.f32 %f0, %f0, %f3;\n"
    "  st.global.f32 [%rd5], %f0;\n"
    "  ret;\n"
    "$SECOND:\n"
    "  @%p4 bar.sync 2, 128;\n"
    "  ret;\n"
    "}\n";

Test(racecheck, wgmma_operands_fenced) {
    TileDevice *d = open_emu(true);
    TileDevModule *m;
    TileDevFunction *f = load(d, wgmma_fence_ptx, "wf", &m);
    for (uint32_t mode = 0; mode < 4; mode++) {
        uint64_t out = poisoned(d, 128 * 4);
        void *args[] = {&out, &mode};
        if (mode) {
            DevStatus st = dev_launch(f, 1, 1, 1, 256, 1, 1, 0, NULL, args);
            cr_assert_neq(st, DEV_OK, "mode %u: the launch succeeded", mode);
            const char *msg = dev_last_error(d);
            cr_assert(strstr(msg, mode == 1 ? "racecheck: wgmma.mma_async reads shared memory written through the generic proxy without "
                                              "fence.proxy.async"
                                            : "racecheck: wgmma.mma_async reads shared memory written through the generic proxy with no "
                                              "barrier in between"), "mode %u: %s", mode, msg);
            cr_assert(strstr(msg, "st.shared.v4.b32"), "%s", msg);
            continue;
        }
        cr_assert_eq(dev_launch(f, 1, 1, 1, 256, 1, 1, 0, NULL, args), DEV_OK, "%s", dev_last_error(d));
        float h[128];
        dev_memcpy_dtoh(d, h, out, sizeof h);
        for (unsigned i = 0; i < 128; i++) cr_assert_eq(h[i], 0.0f, "out[%u] = %g (B is zero)", i, h[i]);
    }
    dev_module_unload(m);
    dev_close(d);
}

/* A wgmma's shared operands are read until the wgmma.wait_group that retires it: a write by a thread of another
 * warpgroup must be ordered after that wait (a barrier or mbarrier phase a warp of the issuing warpgroup arrived
 * at after it), not merely after what the warpgroup did before issuing.  Warpgroup 0 writes A (1.0, 16 bytes per
 * thread) and B (2.0), fences them and passes bar 2 (its four warps), issues a wgmma and waits; warpgroup 1
 * then writes a word of A per thread.  mode 0: warpgroup 0 arrives at bar 1 after its wait, warpgroup 1 writes
 * after bar.sync 1; 1: the arrival comes before the wgmma (reported, naming the wgmma), and warpgroup 1 spins
 * on a volatile flag thread 0 sets after its wait (which orders nothing), so that its store comes after the wait
 * here; 2: warpgroup 1 writes nothing, warpgroup 0's threads write their A bytes again after their wait (its own
 * warps: no hazard); 3: thread 64 (warp 2, not the warpgroup's first) arrives on an mbarrier after the wait,
 * warpgroup 1 writes after observing the phase; 4: the arrival comes before the wgmma (reported, as 1).
 * Warpgroup 0 stores D[0] + D[3] = 2 * 16 * 2.0. */
static const char *wgmma_release_ptx = PTX_HEAD
    ".visible .entry wr(.param .u64 out, .param .u32 mode)\n"
    "{\n"
    "  .reg .pred %p<12>;\n"
    "  .reg .b32 %r<16>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  .reg .f32 %f<4>;\n"
    "  .shared .align 1024 .b8 smem[2304];\n"
    "  .shared .align 8 .b64 mb;\n"
    "  .shared .align 4 .b32 flag;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  ld.param.u32 %r1, [mode];\n"
    "  mov.u32 %r2, %tid.x;\n"
    "  mov.u32 %r3, smem;\n"
    "  and.b32 %r4, %r2, 127;\n"
    "  setp.eq.u32 %p1, %r2, 0;\n"
    "  @%p1 mbarrier.init.shared::cta.b64 [mb], 1;\n"
    "  @%p1 st.volatile.shared.u32 [flag], 0;\n"
    "  bar.sync 0;\n"
    "  setp.eq.u32 %p2, %r2, 64;\n"
    "  setp.ge.u32 %p3, %r2, 128;\n"
    "  @%p3 bra $SECOND;\n"
    "  mad.lo.u32 %r5, %r4, 16, %r3;\n"
    "  mov.b32 %r6, 0x3c003c00;\n"
    "  st.shared.v4.b32 [%r5], {%r6, %r6, %r6, %r6};\n"
    "  setp.lt.u32 %p4, %r4, 16;\n"
    "  mov.b32 %r7, 0x40004000;\n"
    "  @%p4 st.shared.v4.b32 [%r5+2048], {%r7, %r7, %r7, %r7};\n"
    "  fence.proxy.async.shared::cta;\n"
    "  bar.sync 2, 128;\n"
    "  setp.eq.u32 %p5, %r1, 1;\n"
    "  @%p5 bar.arrive 1, 256;\n"
    "  setp.eq.u32 %p6, %r1, 4;\n"
    "  and.pred %p6, %p6, %p2;\n"
    "  @%p6 mbarrier.arrive.shared::cta.b64 %rd6, [mb];\n"
    "  shr.u32 %r8, %r3, 4;\n"
    "  cvt.u64.u32 %rd2, %r8;\n"
    "  or.b64 %rd2, %rd2, 0x0000001000080000;\n"
    "  add.u64 %rd3, %rd2, 128;\n"
    "  mov.f32 %f0, 0f00000000;\n  mov.f32 %f1, %f0;\n  mov.f32 %f2, %f0;\n  mov.f32 %f3, %f0;\n"
    "  wgmma.fence.sync.aligned;\n"
    "  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd2, %rd3, 1, 1, 1, 0, 0;\n"
    "  wgmma.commit_group.sync.aligned;\n"
    "  wgmma.wait_group.sync.aligned 0;\n"
    "  setp.eq.u32 %p7, %r1, 0;\n"
    "  @%p7 bar.arrive 1, 256;\n"
    "  setp.eq.u32 %p8, %r1, 2;\n"
    "  @%p8 st.shared.v4.b32 [%r5], {%r7, %r7, %r7, %r7};\n"
    "  setp.eq.u32 %p9, %r1, 3;\n"
    "  and.pred %p9, %p9, %p2;\n"
    "  @%p9 mbarrier.arrive.shared::cta.b64 %rd6, [mb];\n"
    "  @%p1 st.volatile.shared.u32 [flag], 1;\n"
    "  mul.wide.u32 %rd4, %r2, 4;\n"
    "  add.u64 %rd5, %rd1, %rd4;\n"
    "  add.f32 %f0, %f0, %f3;\n"
    "  st.global.f32 [%rd5], %f0;\n"
    "  ret;\n"
    "$SECOND:\n"
    "  setp.eq.u32 %p10, %r1, 2;\n"
    "  @%p10 ret;\n"
    "  setp.ge.u32 %p11, %r1, 3;\n"
    "  @%p11 bra $WAIT;\n"
    "  bar.sync 1, 256;\n"
    "  bra $WRITE;\n"
    "$WAIT:\n"
    "  mbarrier.try_wait.parity.shared::cta.b64 %p11, [mb], 0;\n"
    "  @!%p11 bra $WAIT;\n"
    "$WRITE:\n"
    "  setp.ne.u32 %p10, %r1, 1;\n"
    "  setp.ne.u32 %p11, %r1, 4;\n"
    "  and.pred %p10, %p10, %p11;\n"
    "  @%p10 bra $STORE;\n"
    "$SPIN:\n"
    "  ld.volatile.shared.u32 %r10, [flag];\n"
    "  setp.eq.u32 %p10, %r10, 0;\n"
    "  @%p10 bra $SPIN;\n"
    "$STORE:\n"
    "  mad.lo.u32 %r9, %r4, 4, %r3;\n"
    "  st.shared.u32 [%r9], %r2;\n"
    "  ret;\n"
    "}\n";

Test(racecheck, wgmma_reads_end_at_the_wait) {
    TileDevice *d = open_emu(true);
    TileDevModule *m;
    TileDevFunction *f = load(d, wgmma_release_ptx, "wr", &m);
    for (uint32_t mode = 0; mode < 5; mode++) {
        uint64_t out = poisoned(d, 128 * 4);
        void *args[] = {&out, &mode};
        if (mode == 1 || mode == 4) {
            expect_launch_error(d, f, 256, args, "racecheck: shared-memory hazard (write after read)", "st.shared.u32 [%r9], %r2",
                                "by thread (128,0,0)", "conflicts with the read of the wgmma.mma_async at PTX line 47",
                                "by the warpgroup of thread (0,0,0)", "not ordered after that wait", NULL);
            continue;
        }
        cr_assert_eq(dev_launch(f, 1, 1, 1, 256, 1, 1, 0, NULL, args), DEV_OK, "mode %u: %s", mode, dev_last_error(d));
        float h[128];
        dev_memcpy_dtoh(d, h, out, sizeof h);
        for (unsigned i = 0; i < 128; i++) cr_assert_eq(h[i], 64.0f, "mode %u: out[%u] = %g", mode, i, h[i]);
    }
    dev_module_unload(m);
    dev_close(d);
}

/* Ping-pong of two warpgroups over one operand buffer (the CUTLASS / Triton schedule: each warpgroup's math
 * turn ends with an arrival on the named barrier the other waits at, after its wgmma.wait_group): warpgroup 0
 * writes A = 1.0 and B = 1.0, fences, runs a wgmma and waits, arrives at bar 1 and waits at bar 2; warpgroup 1
 * waits at bar 1, writes A = 1.0 and B = 4.0, runs its wgmma, waits and arrives at bar 2; warpgroup 0 then writes
 * B = 2.0 and accumulates a second wgmma.  Every thread stores D[0]: 16 + 32 (warpgroup 0), 64 (warpgroup 1).
 * Mode 1: warpgroup 1 arrives at bar 2 before its wgmma, and warpgroup 0 spins on a volatile flag thread 128 sets
 * after its wait, which orders nothing (reported at warpgroup 0's write of B). */
static const char *wgmma_pingpong_ptx = PTX_HEAD
    ".visible .entry wpp(.param .u64 out, .param .u32 mode)\n"
    "{\n"
    "  .reg .pred %p<8>;\n"
    "  .reg .b32 %r<16>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  .reg .f32 %f<4>;\n"
    "  .shared .align 1024 .b8 smem[2304];\n"
    "  .shared .align 4 .b32 flag;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  ld.param.u32 %r1, [mode];\n"
    "  mov.u32 %r2, %tid.x;\n"
    "  mov.u32 %r3, smem;\n"
    "  and.b32 %r4, %r2, 127;\n"
    "  mad.lo.u32 %r5, %r4, 16, %r3;\n"
    "  setp.eq.u32 %p4, %r2, 0;\n"
    "  @%p4 st.volatile.shared.u32 [flag], 0;\n"
    "  bar.sync 0;\n"
    "  setp.lt.u32 %p1, %r4, 16;\n"
    "  mov.b32 %r6, 0x3c003c00;\n"
    "  shr.u32 %r8, %r3, 4;\n"
    "  cvt.u64.u32 %rd2, %r8;\n"
    "  or.b64 %rd2, %rd2, 0x0000001000080000;\n"
    "  add.u64 %rd3, %rd2, 128;\n"
    "  mov.f32 %f0, 0f00000000;\n  mov.f32 %f1, %f0;\n  mov.f32 %f2, %f0;\n  mov.f32 %f3, %f0;\n"
    "  setp.eq.u32 %p2, %r1, 1;\n"
    "  setp.ge.u32 %p3, %r2, 128;\n"
    "  @%p3 bra $SECOND;\n"
    "  st.shared.v4.b32 [%r5], {%r6, %r6, %r6, %r6};\n"
    "  @%p1 st.shared.v4.b32 [%r5+2048], {%r6, %r6, %r6, %r6};\n"
    "  fence.proxy.async.shared::cta;\n"
    "  wgmma.fence.sync.aligned;\n"
    "  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd2, %rd3, 1, 1, 1, 0, 0;\n"
    "  wgmma.commit_group.sync.aligned;\n"
    "  wgmma.wait_group.sync.aligned 0;\n"
    "  bar.arrive 1, 256;\n"
    "  bar.sync 2, 256;\n"
    "$SPIN:\n"
    "  ld.volatile.shared.u32 %r9, [flag];\n"
    "  setp.eq.u32 %p5, %r9, 0;\n"
    "  and.pred %p5, %p5, %p2;\n"
    "  @%p5 bra $SPIN;\n"
    "  mov.b32 %r7, 0x40004000;\n"
    "  @%p1 st.shared.v4.b32 [%r5+2048], {%r7, %r7, %r7, %r7};\n"
    "  fence.proxy.async.shared::cta;\n"
    "  wgmma.fence.sync.aligned;\n"
    "  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd2, %rd3, 1, 1, 1, 0, 0;\n"
    "  wgmma.commit_group.sync.aligned;\n"
    "  wgmma.wait_group.sync.aligned 0;\n"
    "  bra $OUT;\n"
    "$SECOND:\n"
    "  bar.sync 1, 256;\n"
    "  st.shared.v4.b32 [%r5], {%r6, %r6, %r6, %r6};\n"
    "  mov.b32 %r7, 0x44004400;\n"
    "  @%p1 st.shared.v4.b32 [%r5+2048], {%r7, %r7, %r7, %r7};\n"
    "  fence.proxy.async.shared::cta;\n"
    "  @%p2 bar.arrive 2, 256;\n"
    "  wgmma.fence.sync.aligned;\n"
    "  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd2, %rd3, 1, 1, 1, 0, 0;\n"
    "  wgmma.commit_group.sync.aligned;\n"
    "  wgmma.wait_group.sync.aligned 0;\n"
    "  @!%p2 bar.arrive 2, 256;\n"
    "  setp.eq.u32 %p6, %r2, 128;\n"
    "  @%p6 st.volatile.shared.u32 [flag], 1;\n"
    "$OUT:\n"
    "  mul.wide.u32 %rd4, %r2, 4;\n"
    "  add.u64 %rd5, %rd1, %rd4;\n"
    "  st.global.f32 [%rd5], %f0;\n"
    "  ret;\n"
    "}\n";

Test(racecheck, wgmma_warpgroups_ping_pong) {
    TileDevice *d = open_emu(true);
    TileDevModule *m;
    TileDevFunction *f = load(d, wgmma_pingpong_ptx, "wpp", &m);
    for (uint32_t mode = 0; mode < 2; mode++) {
        uint64_t out = poisoned(d, 256 * 4);
        void *args[] = {&out, &mode};
        if (mode) {
            expect_launch_error(d, f, 256, args, "racecheck: shared-memory hazard (write after read)", "at __shared__ address 0x800",
                                "st.shared.v4.b32 [%r5+2048]", "by thread (0,0,0)", "conflicts with the read of the wgmma.mma_async at PTX line 64",
                                "by the warpgroup of thread (128,0,0)", NULL);
            continue;
        }
        cr_assert_eq(dev_launch(f, 1, 1, 1, 256, 1, 1, 0, NULL, args), DEV_OK, "%s", dev_last_error(d));
        float h[256];
        dev_memcpy_dtoh(d, h, out, sizeof h);
        for (unsigned i = 0; i < 256; i++) cr_assert_eq(h[i], i < 128 ? 48.0f : 64.0f, "out[%u] = %g", i, h[i]);
    }
    dev_module_unload(m);
    dev_close(d);
}

/* Two consumer warpgroups read one A and B (the cooperative schedule): warpgroup 2 writes A = 1.0 and B = 2.0,
 * fences and passes bar 1 with both; each consumer runs a wgmma, waits, and one thread of it arrives on the
 * "empty" mbarrier (2 arrivals); warpgroup 2 waits for its phase and writes B again.  Mode 0: the arriving
 * threads are the warpgroups' first (0, 128); 1: thread 64 of warpgroup 0 arrives before its wgmma instead of
 * thread 0 after its wait (reported); 2: threads 0 and 192 (warp 2 of warpgroup 1); 3: threads 64 and 128 (warp
 * 2 of warpgroup 0, whose read is the one kept in the read set when warpgroup 1's comes).  Each consumer stores
 * D[0] = 16 * 2.0. */
static const char *wgmma_coop_ptx = PTX_HEAD
    ".visible .entry wco(.param .u64 out, .param .u32 mode)\n"
    "{\n"
    "  .reg .pred %p<8>;\n"
    "  .reg .b32 %r<16>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  .reg .f32 %f<4>;\n"
    "  .shared .align 1024 .b8 smem[2304];\n"
    "  .shared .align 8 .b64 empty;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  ld.param.u32 %r1, [mode];\n"
    "  mov.u32 %r2, %tid.x;\n"
    "  mov.u32 %r3, smem;\n"
    "  and.b32 %r4, %r2, 127;\n"
    "  mad.lo.u32 %r5, %r4, 16, %r3;\n"
    "  setp.lt.u32 %p1, %r4, 16;\n"
    "  setp.eq.u32 %p2, %r2, 0;\n"
    "  @%p2 mbarrier.init.shared::cta.b64 [empty], 2;\n"
    "  bar.sync 0;\n"
    "  setp.ge.u32 %p3, %r2, 256;\n"
    "  @%p3 bra $PRODUCER;\n"
    "  bar.sync 1, 384;\n"
    "  setp.eq.u32 %p4, %r1, 1;\n"
    "  setp.eq.u32 %p5, %r2, 64;\n"
    "  and.pred %p4, %p4, %p5;\n"
    "  @%p4 mbarrier.arrive.shared::cta.b64 %rd6, [empty];\n"
    "  shr.u32 %r8, %r3, 4;\n"
    "  cvt.u64.u32 %rd2, %r8;\n"
    "  or.b64 %rd2, %rd2, 0x0000001000080000;\n"
    "  add.u64 %rd3, %rd2, 128;\n"
    "  mov.f32 %f0, 0f00000000;\n  mov.f32 %f1, %f0;\n  mov.f32 %f2, %f0;\n  mov.f32 %f3, %f0;\n"
    "  wgmma.fence.sync.aligned;\n"
    "  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd2, %rd3, 1, 1, 1, 0, 0;\n"
    "  wgmma.commit_group.sync.aligned;\n"
    "  wgmma.wait_group.sync.aligned 0;\n"
    "  setp.eq.u32 %p5, %r1, 2;\n"
    "  selp.u32 %r9, 192, 128, %p5;\n"
    "  setp.eq.u32 %p6, %r1, 3;\n"
    "  selp.u32 %r10, 64, 0, %p6;\n"
    "  setp.eq.u32 %p2, %r2, %r10;\n"
    "  setp.eq.u32 %p6, %r2, %r9;\n"
    "  setp.ne.u32 %p7, %r1, 1;\n"
    "  and.pred %p2, %p2, %p7;\n"
    "  or.pred %p2, %p2, %p6;\n"
    "  @%p2 mbarrier.arrive.shared::cta.b64 %rd6, [empty];\n"
    "  mul.wide.u32 %rd4, %r2, 4;\n"
    "  add.u64 %rd5, %rd1, %rd4;\n"
    "  st.global.f32 [%rd5], %f0;\n"
    "  ret;\n"
    "$PRODUCER:\n"
    "  mov.b32 %r6, 0x3c003c00;\n"
    "  st.shared.v4.b32 [%r5], {%r6, %r6, %r6, %r6};\n"
    "  mov.b32 %r7, 0x40004000;\n"
    "  @%p1 st.shared.v4.b32 [%r5+2048], {%r7, %r7, %r7, %r7};\n"
    "  fence.proxy.async.shared::cta;\n"
    "  bar.sync 1, 384;\n"
    "$WAIT:\n"
    "  mbarrier.try_wait.parity.shared::cta.b64 %p4, [empty], 0;\n"
    "  @!%p4 bra $WAIT;\n"
    "  @%p1 st.shared.v4.b32 [%r5+2048], {%r6, %r6, %r6, %r6};\n"
    "  ret;\n"
    "}\n";

Test(racecheck, wgmma_two_consumers_release_a_stage) {
    TileDevice *d = open_emu(true);
    TileDevModule *m;
    TileDevFunction *f = load(d, wgmma_coop_ptx, "wco", &m);
    for (uint32_t mode = 0; mode < 4; mode++) {
        uint64_t out = poisoned(d, 256 * 4);
        void *args[] = {&out, &mode};
        if (mode == 1) { /* warpgroup 0's read, kept in the read set beside warpgroup 1's */
            expect_launch_error(d, f, 384, args, "racecheck: shared-memory hazard (write after read) at __shared__ address 0x800",
                                "by thread (256,0,0)", "conflicts with a read by the warp of thread (0,0,0)",
                                "at PTX line 38: wgmma.mma_async", NULL);
            continue;
        }
        cr_assert_eq(dev_launch(f, 1, 1, 1, 384, 1, 1, 0, NULL, args), DEV_OK, "mode %u: %s", mode, dev_last_error(d));
        float h[256];
        dev_memcpy_dtoh(d, h, out, sizeof h);
        for (unsigned i = 0; i < 256; i++) cr_assert_eq(h[i], 32.0f, "mode %u: out[%u] = %g", mode, i, h[i]);
    }
    dev_module_unload(m);
    dev_close(d);
}
