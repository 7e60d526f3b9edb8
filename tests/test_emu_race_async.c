/* test_emu_race_async.c - the emulator's racecheck of Hopper's asynchronous proxy (docs/emulator.md,
 * Racecheck): bulk copies into shared memory read before their mbarrier phase was observed, generic writes read
 * by a bulk store without fence.proxy.async or a barrier, a staging buffer rewritten while a bulk store reads it,
 * a buffer refilled before its readers released it ("racecheck" in the device string too); wgmma's shared-memory
 * operands written through the generic proxy without fence.proxy.async or a barrier before the wgmma reads them,
 * and writes by another warpgroup not ordered after the wgmma.wait_group that retires the reads (a release before
 * the wgmma, ping-pong warpgroups, two consumers releasing a stage).  Each hand-written kernel (checked by ptxas
 * -arch=sm_90a when installed) runs correct and with the one mistake, whose report must name the instructions and
 * threads involved.  Racecheck's ordering between warps and lanes that synchronise is in test_emu_race.c; the
 * producer/consumer ring without its "empty" wait is in test_emu_hopper.c with the ring. */
#include <criterion/criterion.h>
#include <math.h>
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

/* The opening the two bulk-store-source kernels below share: kernel NAME(out, flag, mode) with buf, 128 bytes of shared
 * memory; %r1 the thread, %r2 buf, %r3 the lane, %r5 the lane's float of buf, %p4 mode 0, %p1 a thread of warp 0. */
#define BULK_SRC_PROLOGUE(name) \
    PTX_HEAD \
    ".visible .entry " name "(.param .u64 out, .param .u64 flag, .param .u32 mode)\n" \
    "{\n" \
    "  .reg .pred %p<6>;\n" \
    "  .reg .b32 %r<12>;\n" \
    "  .reg .b64 %rd<4>;\n" \
    "  .reg .f32 %f<4>;\n" \
    "  .shared .align 128 .b8 buf[128];\n" \
    "  ld.param.u64 %rd1, [out];\n" \
    "  ld.param.u64 %rd2, [flag];\n" \
    "  ld.param.u32 %r10, [mode];\n" \
    "  mov.u32 %r1, %tid.x;\n" \
    "  mov.u32 %r2, buf;\n" \
    "  and.b32 %r3, %r1, 31;\n" \
    "  shl.b32 %r4, %r3, 2;\n" \
    "  add.u32 %r5, %r2, %r4;\n" \
    "  setp.eq.u32 %p4, %r10, 0;\n" \
    "  setp.lt.u32 %p1, %r1, 32;\n"

/* A bulk store's source is read by the async proxy until the issuing thread's wait_group.read: a write to it by
 * another warp must be ordered after that wait, as after a plain read.  Warp 0 fills buf, fences and hands it to
 * warp 1 (bar.sync 1), whose thread 32 bulk-stores buf to out and waits for the read; warp 0 then writes buf
 * again.  mode 0: after bar.sync 2, which warp 1 reaches after its wait; mode 1: after spinning on a volatile
 * flag thread 32 sets after its wait, with no fence on either side (no release, no acquire: reported, as the
 * write-back of an epilogue's staging buffer that its storer has not released; the spin makes the write come
 * after the store in the emulator, where the in-flight check cannot see it). */
static const char *bulk_src_war_ptx = BULK_SRC_PROLOGUE("bsw")
    "  @!%p1 bra $STORER;\n"
    "  cvt.rn.f32.u32 %f1, %r3;\n"
    "  st.shared.f32 [%r5], %f1;\n"
    "  fence.proxy.async.shared::cta;\n"
    "  bar.sync 1, 64;\n"
    "  @%p4 bar.sync 2, 64;\n"
    "  @%p4 bra $REFILL;\n"
    "$SPIN:\n"
    "  ld.volatile.global.u32 %r6, [%rd2];\n"
    "  setp.eq.u32 %p3, %r6, 0;\n"
    "  @%p3 bra $SPIN;\n"
    "$REFILL:\n"
    "  add.f32 %f2, %f1, 0f42C80000;\n"
    "  st.shared.f32 [%r5], %f2;\n"
    "  bra.uni $END;\n"
    "$STORER:\n"
    "  bar.sync 1, 64;\n"
    "  setp.eq.u32 %p2, %r1, 32;\n"
    "  @%p2 cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r2], 128;\n"
    "  @%p2 cp.async.bulk.commit_group;\n"
    "  @%p2 cp.async.bulk.wait_group.read 0;\n"
    "  @%p4 bar.sync 2, 64;\n"
    "  @%p4 bra.uni $END;\n"
    "  mov.u32 %r7, 1;\n"
    "  @%p2 st.volatile.global.u32 [%rd2], %r7;\n"
    "$END:\n"
    "  ret;\n"
    "}\n";

Test(racecheck, bulk_store_source_rewritten_unordered) {
    TileDevice *d = open_emu(true);
    TileDevModule *m;
    TileDevFunction *f = load(d, bulk_src_war_ptx, "bsw", &m);
    for (uint32_t mode = 0; mode < 2; mode++) {
        uint32_t zero = 0;
        uint64_t out = poisoned(d, 128), flag = upload(d, &zero, sizeof zero);
        void *args[] = {&out, &flag, &mode};
        if (mode == 1) {
            expect_launch_error(d, f, 64, args, "racecheck: shared-memory hazard (write after read)", "st.shared.f32 [%r5], %f2",
                                "by thread (0,0,0)", "conflicts with a read by thread (32,0,0)",
                                "cp.async.bulk.global.shared::cta.bulk_group", NULL);
            continue;
        }
        cr_assert_eq(dev_launch(f, 1, 1, 1, 64, 1, 1, 0, NULL, args), DEV_OK, "mode %u: %s", mode, dev_last_error(d));
        float h[32];
        dev_memcpy_dtoh(d, h, out, sizeof h);
        for (unsigned i = 0; i < 32; i++) cr_assert_eq(h[i], (float)i, "out[%u] = %g, want %u", i, h[i], i);
    }
    dev_module_unload(m);
    dev_close(d);
}

/* A bulk store's source bytes with different histories: racecheck notes the range's read at the wait once per run
 * of bytes that share one, and must not take the bytes of one run for another's.  Warp 0 fills buf (lane l
 * writes float l at 4 l), fences and passes it to warps 1 and 2 (bar.sync 1, 96); warp 2, after a barrier with
 * warp 0 (bar.sync 4: a later clock than warp 1's, so its read goes to a read set), reads the upper half (lanes
 * 0-15, bytes 64-127) and sets a volatile flag, which warp 1 spins on (no fence: that orders nothing, but makes
 * the read come first in the emulator); thread 32 bulk-stores buf to out and waits for the read, then hands it
 * back to warp 0, whose lanes 17-31 write byte 4 l + 1 again (each second of a run of 4 bytes, a lane's read).
 * mode 0: warp 2 arrives on barrier 3 after its read, which warp 0 waits at before its writes; mode 1: neither,
 * so lane 17's write of byte 69 races with warp 2's read (reported), which only the upper half's history holds. */
static const char *bulk_src_mixed_ptx = BULK_SRC_PROLOGUE("bsm")
    "  setp.ge.u32 %p3, %r1, 64;\n"
    "  @%p3 bra $READER;\n"
    "  @!%p1 bra $STORER;\n"
    "  cvt.rn.f32.u32 %f1, %r3;\n"
    "  st.shared.f32 [%r5], %f1;\n"
    "  fence.proxy.async.shared::cta;\n"
    "  bar.sync 1, 96;\n"
    "  bar.sync 4, 64;\n"
    "  bar.sync 2, 64;\n"
    "  @%p4 bar.sync 3, 64;\n"
    "  setp.gt.u32 %p3, %r3, 16;\n"
    "  @%p3 st.shared.u8 [%r5+1], %r3;\n"
    "  bra.uni $END;\n"
    "$READER:\n"
    "  bar.sync 1, 96;\n"
    "  bar.sync 4, 64;\n"
    "  setp.lt.u32 %p5, %r3, 16;\n"
    "  @%p5 ld.shared.f32 %f3, [%r5+64];\n"
    "  mov.u32 %r7, 1;\n"
    "  st.volatile.global.u32 [%rd2], %r7;\n"
    "  @%p4 bar.arrive 3, 64;\n"
    "  bra.uni $END;\n"
    "$STORER:\n"
    "  bar.sync 1, 96;\n"
    "$SPIN:\n"
    "  ld.volatile.global.u32 %r6, [%rd2];\n"
    "  setp.eq.u32 %p0, %r6, 0;\n"
    "  @%p0 bra $SPIN;\n"
    "  setp.eq.u32 %p2, %r1, 32;\n"
    "  @%p2 cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r2], 128;\n"
    "  @%p2 cp.async.bulk.commit_group;\n"
    "  @%p2 cp.async.bulk.wait_group.read 0;\n"
    "  bar.sync 2, 64;\n"
    "$END:\n"
    "  ret;\n"
    "}\n";

Test(racecheck, bulk_store_source_of_mixed_histories) {
    TileDevice *d = open_emu(true);
    TileDevModule *m;
    TileDevFunction *f = load(d, bulk_src_mixed_ptx, "bsm", &m);
    for (uint32_t mode = 0; mode < 2; mode++) {
        uint32_t zero = 0;
        uint64_t out = poisoned(d, 128), flag = upload(d, &zero, sizeof zero);
        void *args[] = {&out, &flag, &mode};
        if (mode == 1) {
            expect_launch_error(d, f, 96, args, "racecheck: shared-memory hazard (write after read)", "st.shared.u8 [%r5+1], %r3",
                                "by thread (17,0,0)", "conflicts with a read by the warp of thread (64,0,0)", NULL);
            continue;
        }
        cr_assert_eq(dev_launch(f, 1, 1, 1, 96, 1, 1, 0, NULL, args), DEV_OK, "mode %u: %s", mode, dev_last_error(d));
        float h[32];
        dev_memcpy_dtoh(d, h, out, sizeof h);
        for (unsigned i = 0; i < 32; i++) cr_assert_eq(h[i], (float)i, "out[%u] = %g, want %u", i, h[i], i);
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
    /* a number is decimal digits, no sign, space or leading zero; a value is never empty; sms= and approx= once */
    static const char *const bad[][2] = {
        {"emu:sms=08", "'sms=08': sms takes a multiprocessor count from 1 to 65536 (decimal digits, no sign or leading zero)"},
        {"emu:sms=", "'sms=': sms takes a multiprocessor count"},
        {"emu:sms=+8", "'sms=+8': sms takes"},
        {"emu:sms=-8", "'sms=-8': sms takes"},
        {"emu:sms= 8", "'sms= 8': sms takes"},
        {"emu:sms=8 ", "'sms=8 ': sms takes"},
        {"emu:sms=65537", "'sms=65537': sms takes"},
        {"emu:sms=99999999999999999999", "sms takes"},
        {"emu:sms=0x10", "'sms=0x10': sms takes"},
        {"emu:sms=8:sms=8", "the option sms is given twice"},
        {"emu:sms=8:sms=", "the option sms is given twice"},
        {"emu:approx=", "'approx=': approx takes exact or bound"},
        {"emu:approx=Exact", "approx takes exact or bound"},
        {"emu:approx=exact ", "approx takes exact or bound"},
        {"emu:approx=bound:approx=bound", "the option approx is given twice"},
        {"emu:Racecheck", "unknown emulator target or option 'Racecheck'"},
        {"emu: racecheck", "unknown emulator target or option ' racecheck'"},
        {"emu:racecheck:", "an empty part between ':'s"},
        {"emu:SM_90A", "unknown emulator target or option 'SM_90A'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_expect_eq(dev_parse_spec(bad[i][0], &s, &err), DEV_ERR_INVALID, "'%s' accepted", bad[i][0]);
        cr_expect(err && strstr(err, bad[i][1]) && strstr(err, bad[i][0]), "'%s': %s", bad[i][0], err ? err : "");
        free(err);
    }
    cr_assert_eq(dev_parse_spec("emu:sms=1:racecheck:racecheck:sm_80:approx=bound", &s, &err), DEV_OK, "%s", err ? err : "");
    cr_assert(s.sms == 1 && s.racecheck && s.approx == 2 && !strcmp(s.target->name, "sm_80"));
    cr_assert_eq(dev_parse_spec("emu:sms=65536", &s, &err), DEV_OK, "%s", err ? err : "");
    cr_assert_eq(s.sms, 65536);
    cr_assert_eq(dev_parse_spec("emu:sms=10", &s, &err), DEV_OK, "%s", err ? err : "");
    cr_assert_eq(s.sms, 10);
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
