/* test_emu_race.c - the emulator's racecheck of Hopper's asynchronous proxy (docs/emulator.md,
 * Racecheck): bulk copies into shared memory read before their mbarrier phase was observed, generic
 * writes read by the async proxy (bulk stores, wgmma operands) without fence.proxy.async or a barrier,
 * a staging buffer rewritten while a bulk store reads it, a buffer refilled before its readers released
 * it.  Each hand-written kernel (checked by ptxas -arch=sm_90a when installed) runs correct and with the
 * one mistake, whose report must name the instructions and threads involved.  The producer/consumer
 * ring without its "empty" wait is in test_emu_hopper.c with the ring. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/device.h"
#include "support/target.h"
#include "test_emu_sm90.h"
#include "test_rng.h"

/* Racecheck of the async proxy.  Thread 0 bulk-loads 128 bytes of src into buf (completing on bar); every
 * thread t < 32 of both warps then reads buf[4 t % 128] and writes it to out[t + 32 w].  mode 0: every thread
 * waits on bar; 1: warp 1 does not (reported: the copy may land after its read); 2: only thread 0 waits and
 * a bar.sync passes what it observed on.  Then each thread of warp 0 writes its float into stage, fences
 * (mode 3: it does not, reported) before a barrier, and thread 0 bulk-stores stage to back; mode 4: the
 * threads write stage again after a barrier without thread 0 having waited for the store to read it
 * (reported); mode 5: as 4 after wait_group.read. */
static const char *async_proxy_ptx = PTX_HEAD
    ".visible .entry ap(.param .u64 src, .param .u64 out, .param .u64 back, .param .u32 mode)\n"
    "{\n"
    "  .reg .pred %p<12>;\n"
    "  .reg .b32 %r<16>;\n"
    "  .reg .b64 %rd<12>;\n"
    "  .reg .f32 %f<4>;\n"
    "  .shared .align 128 .b8 buf[128];\n"
    "  .shared .align 128 .b8 stage[128];\n"
    "  .shared .align 8 .b64 bar;\n"
    "  ld.param.u64 %rd1, [src];\n"
    "  ld.param.u64 %rd2, [out];\n"
    "  ld.param.u64 %rd3, [back];\n"
    "  ld.param.u32 %r1, [mode];\n"
    "  mov.u32 %r2, %tid.x;\n"
    "  and.b32 %r3, %r2, 31;\n"
    "  shr.u32 %r4, %r2, 5;\n"
    "  setp.eq.u32 %p1, %r2, 0;\n"
    "  @%p1 mbarrier.init.shared::cta.b64 [bar], 1;\n"
    "  fence.mbarrier_init.release.cluster;\n"
    "  bar.sync 0;\n"
    "  mov.u32 %r5, buf;\n"
    "  @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 %rd4, [bar], 128;\n"
    "  @%p1 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r5], [%rd1], 128, [bar];\n"
    "  setp.eq.u32 %p2, %r1, 2;\n"
    "  @%p2 bra $ONE;\n"
    "  setp.eq.u32 %p3, %r1, 1;\n"
    "  setp.ne.u32 %p4, %r4, 0;\n"
    "  and.pred %p5, %p3, %p4;\n"
    "  bar.sync 0;\n"
    "  @%p5 bra $READ;\n"
    "$W:\n"
    "  mbarrier.try_wait.parity.shared::cta.b64 %p6, [bar], 0;\n"
    "  @!%p6 bra $W;\n"
    "  bra $READ;\n"
    "$ONE:\n"
    "  @!%p1 bra $SYNC;\n"
    "$W1:\n"
    "  mbarrier.try_wait.parity.shared::cta.b64 %p6, [bar], 0;\n"
    "  @!%p6 bra $W1;\n"
    "$SYNC:\n"
    "  bar.sync 0;\n"
    "$READ:\n"
    "  mad.lo.u32 %r6, %r3, 4, %r5;\n"
    "  ld.shared.f32 %f1, [%r6];\n"
    "  mad.lo.u32 %r7, %r4, 32, %r3;\n"
    "  mul.wide.u32 %rd5, %r7, 4;\n"
    "  add.u64 %rd6, %rd2, %rd5;\n"
    "  st.global.f32 [%rd6], %f1;\n"
    "  bar.sync 0;\n"
    "  setp.ne.u32 %p7, %r4, 0;\n"
    "  @%p7 bra $END;\n"
    "  mov.u32 %r8, stage;\n"
    "  mad.lo.u32 %r9, %r3, 4, %r8;\n"
    "  add.f32 %f2, %f1, 0f3F800000;\n"
    "  st.shared.f32 [%r9], %f2;\n"
    "  setp.ne.u32 %p8, %r1, 3;\n"
    "  @%p8 fence.proxy.async.shared::cta;\n"
    "  bar.sync 1, 32;\n"
    "  @!%p1 bra $AGAIN;\n"
    "  cp.async.bulk.global.shared::cta.bulk_group [%rd3], [%r8], 128;\n"
    "  cp.async.bulk.commit_group;\n"
    "  setp.eq.u32 %p9, %r1, 5;\n"
    "  @%p9 cp.async.bulk.wait_group.read 0;\n"
    "$AGAIN:\n"
    "  bar.sync 1, 32;\n"
    "  setp.lt.u32 %p10, %r1, 4;\n"
    "  @!%p10 st.shared.f32 [%r9], %f1;\n"
    "  @%p1 cp.async.bulk.wait_group 0;\n"
    "$END:\n"
    "  ret;\n"
    "}\n";

Test(racecheck, async_proxy) {
    TileDevice *d = open_emu(true);
    TileDevModule *m;
    TileDevFunction *f = load(d, async_proxy_ptx, "ap", &m);
    seed_rng();
    float src[32];
    for (unsigned i = 0; i < 32; i++) src[i] = (float)urand() * 8 - 4;
    uint64_t ds = upload(d, src, sizeof src);
    for (uint32_t mode = 0; mode < 6; mode++) {
        uint64_t out = poisoned(d, 64 * 4), back = poisoned(d, 128);
        void *args[] = {&ds, &out, &back, &mode};
        if (mode == 1) {
            expect_launch_error(d, f, 64, args, "racecheck: shared memory read before the bulk copy that writes it was waited for",
                                "by thread (32,0,0)", "ld.shared.f32", "issued by thread (0,0,0)", "cp.async.bulk.shared::cluster",
                                "completes on the mbarrier at shared address 0x100 in its phase 0 (parity 0)",
                                "this thread has not observed that phase", NULL);
            continue;
        }
        if (mode == 3) {
            expect_launch_error(d, f, 64, args, "racecheck: cp.async.bulk reads shared memory written through the generic proxy without "
                                "fence.proxy.async", "by thread (0,0,0)", "shared address 0x80 was written by thread (0,0,0) (this thread)",
                                "st.shared.f32 [%r9], %f2", NULL);
            continue;
        }
        if (mode == 4) {
            expect_launch_error(d, f, 64, args, "racecheck: shared memory written while a bulk store still reads it",
                                "by thread (0,0,0)", "is a source of the bulk copy", "cp.async.bulk.wait_group.read", NULL);
            continue;
        }
        cr_assert_eq(dev_launch(f, 1, 1, 1, 64, 1, 1, 0, NULL, args), DEV_OK, "mode %u: %s", mode, dev_last_error(d));
        float h[64], b[32];
        dev_memcpy_dtoh(d, h, out, sizeof h);
        dev_memcpy_dtoh(d, b, back, sizeof b);
        for (unsigned i = 0; i < 64; i++) cr_assert_eq(h[i], src[i % 32], "mode %u: out[%u] = %g, want %g", mode, i, h[i], src[i % 32]);
        for (unsigned i = 0; i < 32; i++) cr_assert_eq(b[i], src[i] + 1, "mode %u: back[%u] = %g, want %g", mode, i, b[i], src[i] + 1);
    }
    dev_module_unload(m);
    dev_close(d);
}

/* A bulk load refilling a buffer must come after its readers' reads: thread 0 loads chunk 0 into buf, waits
 * for it and for `ready` (warp 1's 32 arrivals), then loads chunk 1 into buf.  Warp 1 waits for chunk 0,
 * reads it (out = chunk 0) and arrives on ready: after its reads (mode 0) or before them (mode 1, reported:
 * the refill may land before the reads; for the last lane, whose arrival completes the phase before its read:
 * the others read before the phase completed, which the check takes as ordered). */
static const char *refill_ptx = PTX_HEAD
    ".visible .entry refill(.param .u64 src, .param .u64 out, .param .u32 mode)\n"
    "{\n"
    "  .reg .pred %p<8>;\n"
    "  .reg .b32 %r<12>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  .reg .f32 %f<2>;\n"
    "  .shared .align 128 .b8 buf[128];\n"
    "  .shared .align 8 .b64 full;\n"
    "  .shared .align 8 .b64 ready;\n"
    "  ld.param.u64 %rd1, [src];\n"
    "  ld.param.u64 %rd2, [out];\n"
    "  ld.param.u32 %r1, [mode];\n"
    "  mov.u32 %r2, %tid.x;\n"
    "  mov.u32 %r3, buf;\n"
    "  setp.eq.u32 %p1, %r2, 0;\n"
    "  @%p1 mbarrier.init.shared::cta.b64 [full], 1;\n"
    "  @%p1 mbarrier.init.shared::cta.b64 [ready], 32;\n"
    "  fence.mbarrier_init.release.cluster;\n"
    "  bar.sync 0;\n"
    "  setp.ge.u32 %p2, %r2, 32;\n"
    "  @%p2 bra $CONSUMER;\n"
    "  @!%p1 bra $END;\n"
    "  mbarrier.arrive.expect_tx.shared::cta.b64 %rd3, [full], 128;\n"
    "  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd1], 128, [full];\n"
    "$W0:\n"
    "  mbarrier.try_wait.parity.shared::cta.b64 %p3, [full], 0;\n"
    "  @!%p3 bra $W0;\n"
    "$WR:\n"
    "  mbarrier.try_wait.parity.shared::cta.b64 %p3, [ready], 0;\n"
    "  @!%p3 bra $WR;\n"
    "  add.u64 %rd4, %rd1, 128;\n"
    "  mbarrier.arrive.expect_tx.shared::cta.b64 %rd3, [full], 128;\n"
    "  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd4], 128, [full];\n"
    "$W1:\n"
    "  mbarrier.try_wait.parity.shared::cta.b64 %p3, [full], 1;\n"
    "  @!%p3 bra $W1;\n"
    "  bra $END;\n"
    "$CONSUMER:\n"
    "  and.b32 %r4, %r2, 31;\n"
    "$WC:\n"
    "  mbarrier.try_wait.parity.shared::cta.b64 %p4, [full], 0;\n"
    "  @!%p4 bra $WC;\n"
    "  setp.ne.u32 %p5, %r1, 0;\n"
    "  @%p5 mbarrier.arrive.shared::cta.b64 %rd5, [ready];\n"
    "  mad.lo.u32 %r5, %r4, 4, %r3;\n"
    "  ld.shared.f32 %f1, [%r5];\n"
    "  mul.wide.u32 %rd6, %r4, 4;\n"
    "  add.u64 %rd7, %rd2, %rd6;\n"
    "  st.global.f32 [%rd7], %f1;\n"
    "  @!%p5 mbarrier.arrive.shared::cta.b64 %rd5, [ready];\n"
    "$END:\n"
    "  ret;\n"
    "}\n";

Test(racecheck, refill_after_reads) {
    TileDevice *d = open_emu(true);
    TileDevModule *m;
    TileDevFunction *f = load(d, refill_ptx, "refill", &m);
    seed_rng();
    float src[64];
    for (unsigned i = 0; i < 64; i++) src[i] = (float)urand() * 8 - 4;
    uint64_t ds = upload(d, src, sizeof src);
    for (uint32_t mode = 0; mode < 2; mode++) {
        uint64_t out = poisoned(d, 32 * 4);
        void *args[] = {&ds, &out, &mode};
        if (mode) {
            expect_launch_error(d, f, 64, args, "racecheck: a bulk copy overwrites shared memory whose reads it is not ordered after",
                                "by thread (0,0,0)", "was read by thread (63,0,0) at PTX line 49", "ld.shared.f32",
                                "no barrier or mbarrier phase completed after that read", NULL);
            continue;
        }
        cr_assert_eq(dev_launch(f, 1, 1, 1, 64, 1, 1, 0, NULL, args), DEV_OK, "%s", dev_last_error(d));
        float h[32];
        dev_memcpy_dtoh(d, h, out, sizeof h);
        for (unsigned i = 0; i < 32; i++) cr_assert_eq(h[i], src[i], "out[%u] = %g, want %g", i, h[i], src[i]);
    }
    dev_module_unload(m);
    dev_close(d);
}

/* wgmma reads its shared operands through the async proxy: the 128 threads write A (16 bytes each; B stays
 * zero), then fence.proxy.async (mode 1: not, reported) and a barrier; mode 2: the second warpgroup writes A,
 * fenced but with no barrier before the first warpgroup's wgmma (reported). */
static const char *wgmma_fence_ptx = PTX_HEAD
    ".visible .entry wf(.param .u64 out, .param .u32 mode)\n"
    "{\n"
    "  .reg .pred %p<4>;\n"
    "  .reg .b32 %r<12>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  .reg .f32 %f<4>;\n"
    "  .shared .align 1024 .b8 smem[2304];\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  ld.param.u32 %r1, [mode];\n"
    "  mov.u32 %r2, %tid.x;\n"
    "  mov.u32 %r3, smem;\n"
    "  setp.eq.u32 %p1, %r1, 2;\n"
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
    "  @%p2 bra $END;\n"
    "  @!%p1 bar.sync 1, 128;\n"
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
    "$END:\n"
    "  ret;\n"
    "}\n";

Test(racecheck, wgmma_operands_fenced) {
    TileDevice *d = open_emu(true);
    TileDevModule *m;
    TileDevFunction *f = load(d, wgmma_fence_ptx, "wf", &m);
    for (uint32_t mode = 0; mode < 3; mode++) {
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

/* "racecheck" in the device string turns the checks on without DevOptions (TILE_DEVICE, tile run
 * --device): the async_proxy kernel's missing wait is reported with it and runs without it. */
Test(racecheck, device_string_option) {
    DevSpec s;
    char *err = NULL;
    cr_assert_eq(dev_parse_spec("emu:sm_90a:racecheck", &s, &err), DEV_OK, "%s", err ? err : "");
    cr_assert(s.racecheck && s.target && !strcmp(s.target->name, "sm_90a"));
    cr_assert_eq(dev_parse_spec("emu:racecheck:sms=8", &s, &err), DEV_OK, "%s", err ? err : "");
    cr_assert(s.racecheck && s.sms == 8 && !s.target);
    cr_assert_eq(dev_parse_spec("emu:sm_90a", &s, &err), DEV_OK);
    cr_assert(!s.racecheck);
    cr_assert_eq(dev_parse_spec("emu:racecheck=1", &s, &err), DEV_ERR_INVALID);
    cr_assert(err && strstr(err, "racecheck=1") && strstr(err, "options such as sms=132 and racecheck"), "%s", err);
    free(err);
    cr_assert_eq(dev_parse_spec("emu:sm_90a:sms=0", &s, &err), DEV_ERR_INVALID); /* a known option with a bad value */
    cr_assert(err && strstr(err, "'sms=0': sms takes a multiprocessor count from 1 to 65536"), "%s", err);
    free(err);
    float src[32] = {0};
    for (int rc = 0; rc < 2; rc++) {
        TileDevice *d = NULL;
        cr_assert_eq(dev_open(rc ? "emu:sm_90a:racecheck" : "emu:sm_90a", NULL, &d, &err), DEV_OK, "%s", err ? err : "");
        TileDevModule *m;
        TileDevFunction *f = load(d, async_proxy_ptx, "ap", &m);
        uint64_t ds = upload(d, src, sizeof src), out = poisoned(d, 64 * 4), back = poisoned(d, 128);
        uint32_t mode = 1;
        void *args[] = {&ds, &out, &back, &mode};
        if (rc) expect_launch_error(d, f, 64, args, "racecheck: shared memory read before the bulk copy that writes it was waited for", NULL);
        else cr_assert_eq(dev_launch(f, 1, 1, 1, 64, 1, 1, 0, NULL, args), DEV_OK, "%s", dev_last_error(d));
        dev_module_unload(m);
        dev_close(d);
    }
}
