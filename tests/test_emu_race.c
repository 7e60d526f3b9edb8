/* test_emu_race.c - the emulator's racecheck between the warps and lanes that synchronise (docs/emulator.md,
 * Racecheck): named barriers of some warps, bar.arrive before the store, warpgroups taking turns, mbarrier
 * hand-offs, exited threads, writes after reads of several warps, flags ordered by fences, the lanes of one warp
 * across a barrier, the same bytes written again and replicas of a sum that differ in their last bits.  Each
 * hand-written kernel (checked by ptxas -arch=sm_90a when installed) runs correct and with the one mistake,
 * whose report must name the instructions and threads involved.  The asynchronous proxy's rules (bulk copies,
 * bulk stores, wgmma's operands) are in test_emu_race_async.c. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/device.h"
#include "support/target.h"
#include "test_emu_sm90.h"
#include "test_rng.h"

/* Racecheck orders the accesses of the warps that synchronise, and only theirs (happens-before at warp
 * granularity): a barrier of other warps completing in between orders nothing.  96 threads; warp 0 writes
 * a[lane] (and b[lane]), warps 1 and 2 read them:
 *   0: warps 0 and 1 pass bar.sync 1, 64; warp 2 passes bar.sync 2, 32 alone and reads a (reported);
 *   1: warp 0 does bar.arrive 1, 64 before its store; warp 1 passes bar.sync 1, 64 and reads a (reported: an
 *      arrival orders what came before it, not the store after it);
 *   2: as 1 with the store before the arrival (the named-barrier hand-off);
 *   3: warp 0 writes b, arrives at barrier 2 (warp 2's), writes a, arrives at barrier 1 (warp 1's); each
 *      consumer syncs on its barrier and reads its buffer (two consumers on two named barriers);
 *   4: as 3 with warp 2 reading a, which warp 0 wrote after the arrival warp 2 synchronised with (reported);
 *   5: as 0, warp 1 then passing bar.sync 3, 64 with warp 2, which then overwrites a (ordered through warp 1).
 * Before racecheck followed who synchronises with whom, 0, 1 and 4 were missed: a barrier completing anywhere
 * in the block ordered every access before it with every access after it. */
static const char *named_ptx = PTX_HEAD
    ".visible .entry named(.param .u64 out, .param .u32 mode)\n"
    "{\n"
    "  .reg .pred %p<8>;\n"
    "  .reg .b32 %r<12>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  .shared .align 4 .b32 a[32];\n"
    "  .shared .align 4 .b32 b[32];\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  ld.param.u32 %r1, [mode];\n"
    "  mov.u32 %r2, %tid.x;\n"
    "  and.b32 %r3, %r2, 31;\n"
    "  shr.u32 %r4, %r2, 5;\n"
    "  mov.u32 %r5, a;\n"
    "  mad.lo.u32 %r6, %r3, 4, %r5;\n"
    "  mov.u32 %r7, b;\n"
    "  mad.lo.u32 %r8, %r3, 4, %r7;\n"
    "  add.u32 %r9, %r2, 100;\n"
    "  setp.ne.u32 %p1, %r4, 0;\n"
    "  @%p1 bra $CONSUMER;\n"
    "  setp.eq.u32 %p2, %r1, 1;\n"
    "  @%p2 bra $P1;\n"
    "  setp.eq.u32 %p2, %r1, 2;\n"
    "  @%p2 bra $P2;\n"
    "  setp.eq.u32 %p2, %r1, 3;\n"
    "  setp.eq.u32 %p3, %r1, 4;\n"
    "  or.pred %p2, %p2, %p3;\n"
    "  @%p2 bra $P3;\n"
    "  st.shared.u32 [%r6], %r9;\n"
    "  bar.sync 1, 64;\n"
    "  bra $END;\n"
    "$P1:\n"
    "  bar.arrive 1, 64;\n"
    "  st.shared.u32 [%r6], %r9;\n"
    "  bra $END;\n"
    "$P2:\n"
    "  st.shared.u32 [%r6], %r9;\n"
    "  bar.arrive 1, 64;\n"
    "  bra $END;\n"
    "$P3:\n"
    "  st.shared.u32 [%r8], %r9;\n"
    "  bar.arrive 2, 64;\n"
    "  st.shared.u32 [%r6], %r9;\n"
    "  bar.arrive 1, 64;\n"
    "  bra $END;\n"
    "$CONSUMER:\n"
    "  setp.eq.u32 %p4, %r4, 2;\n"
    "  @%p4 bra $W2;\n"
    "  bar.sync 1, 64;\n"
    "  ld.shared.u32 %r10, [%r6];\n"
    "  setp.ne.u32 %p5, %r1, 5;\n"
    "  @%p5 bra $OUT;\n"
    "  bar.sync 3, 64;\n"
    "  bra $OUT;\n"
    "$W2:\n"
    "  setp.eq.u32 %p5, %r1, 0;\n"
    "  @%p5 bra $W2A;\n"
    "  setp.eq.u32 %p5, %r1, 3;\n"
    "  @%p5 bra $W2B;\n"
    "  setp.eq.u32 %p5, %r1, 4;\n"
    "  @%p5 bra $W2C;\n"
    "  setp.eq.u32 %p5, %r1, 5;\n"
    "  @%p5 bra $W2D;\n"
    "  bra $END;\n"
    "$W2A:\n"
    "  bar.sync 2, 32;\n"
    "  ld.shared.u32 %r10, [%r6];\n"
    "  bra $OUT;\n"
    "$W2B:\n"
    "  bar.sync 2, 64;\n"
    "  ld.shared.u32 %r10, [%r8];\n"
    "  bra $OUT;\n"
    "$W2C:\n"
    "  bar.sync 2, 64;\n"
    "  ld.shared.u32 %r10, [%r6];\n"
    "  bra $OUT;\n"
    "$W2D:\n"
    "  bar.sync 3, 64;\n"
    "  st.shared.u32 [%r6], %r9;\n"
    "  mov.u32 %r10, %r9;\n"
    "$OUT:\n"
    "  mul.wide.u32 %rd2, %r2, 4;\n"
    "  add.u64 %rd3, %rd1, %rd2;\n"
    "  st.global.u32 [%rd3], %r10;\n"
    "$END:\n"
    "  ret;\n"
    "}\n";

Test(racecheck, named_barriers_order_their_warps_only) {
    TileDevice *d = open_emu(true);
    TileDevModule *m;
    TileDevFunction *f = load(d, named_ptx, "named", &m);
    for (uint32_t mode = 0; mode < 6; mode++) {
        uint64_t out = poisoned(d, 96 * 4);
        void *args[] = {&out, &mode};
        if (mode == 0 || mode == 4) {
            expect_launch_error(d, f, 96, args, "racecheck: shared-memory hazard (read after write) at __shared__ address 0x0",
                                "by thread (64,0,0)", "ld.shared.u32 %r10, [%r6]", "conflicts with a write by thread (0,0,0)",
                                "st.shared.u32 [%r6], %r9", NULL);
            continue;
        }
        if (mode == 1) {
            expect_launch_error(d, f, 96, args, "racecheck: shared-memory hazard (read after write) at __shared__ address 0x0",
                                "by thread (32,0,0)", "conflicts with a write by thread (0,0,0) at PTX line 36",
                                "st.shared.u32 [%r6], %r9", NULL);
            continue;
        }
        cr_assert_eq(dev_launch(f, 1, 1, 1, 96, 1, 1, 0, NULL, args), DEV_OK, "mode %u: %s", mode, dev_last_error(d));
        uint32_t h[96];
        dev_memcpy_dtoh(d, h, out, sizeof h);
        for (unsigned i = 32; i < 64; i++) cr_assert_eq(h[i], i - 32 + 100, "mode %u: out[%u] = %u", mode, i, h[i]);
        for (unsigned i = 64; i < 96 && mode != 2; i++)
            cr_assert_eq(h[i], mode == 5 ? i + 100 : i - 64 + 100, "mode %u: out[%u] = %u", mode, i, h[i]);
    }
    dev_module_unload(m);
    dev_close(d);
}

/* Two warpgroups take turns on one buffer (the ping-pong of warp-specialized kernels): in turn i (0..3) the
 * warpgroup i % 2 adds 1 to buf[j] (j: its thread's rank), then hands the buffer over with bar.arrive at the
 * barrier the other syncs on (bar.sync 1 + g, 256 for warpgroup g).  Mode 1 arrives before the store
 * (reported: the other warpgroup reads a store its barrier did not order; it was missed when any completed
 * barrier ordered everything). */
static const char *pingpong_ptx = PTX_HEAD
    ".visible .entry pingpong(.param .u64 out, .param .u32 mode)\n"
    "{\n"
    "  .reg .pred %p<8>;\n"
    "  .reg .b32 %r<16>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  .shared .align 4 .b32 buf[128];\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  ld.param.u32 %r1, [mode];\n"
    "  mov.u32 %r2, %tid.x;\n"
    "  and.b32 %r3, %r2, 127;\n"
    "  shr.u32 %r4, %r2, 7;\n"
    "  mov.u32 %r5, buf;\n"
    "  mad.lo.u32 %r6, %r3, 4, %r5;\n"
    "  add.u32 %r7, %r4, 1;\n"
    "  sub.u32 %r8, 2, %r4;\n"
    "  setp.eq.u32 %p1, %r1, 1;\n"
    "  mov.u32 %r9, 0;\n"
    "$LOOP:\n"
    "  and.b32 %r10, %r9, 1;\n"
    "  setp.ne.u32 %p2, %r10, %r4;\n"
    "  @%p2 bra $NEXT;\n"
    "  setp.eq.u32 %p3, %r9, 0;\n"
    "  @!%p3 bar.sync %r7, 256;\n"
    "  ld.shared.u32 %r11, [%r6];\n"
    "  add.u32 %r11, %r11, 1;\n"
    "  setp.lt.u32 %p4, %r9, 3;\n"
    "  and.pred %p5, %p4, %p1;\n"
    "  @%p5 bar.arrive %r8, 256;\n"
    "  st.shared.u32 [%r6], %r11;\n"
    "  and.pred %p6, %p4, !%p1;\n"
    "  @%p6 bar.arrive %r8, 256;\n"
    "$NEXT:\n"
    "  add.u32 %r9, %r9, 1;\n"
    "  setp.lt.u32 %p7, %r9, 4;\n"
    "  @%p7 bra $LOOP;\n"
    "  bar.sync 0;\n"
    "  setp.ge.u32 %p2, %r2, 128;\n"
    "  @%p2 bra $END;\n"
    "  ld.shared.u32 %r12, [%r6];\n"
    "  mul.wide.u32 %rd2, %r2, 4;\n"
    "  add.u64 %rd3, %rd1, %rd2;\n"
    "  st.global.u32 [%rd3], %r12;\n"
    "$END:\n"
    "  ret;\n"
    "}\n";

Test(racecheck, warpgroups_ping_pong_on_named_barriers) {
    TileDevice *d = open_emu(true);
    TileDevModule *m;
    TileDevFunction *f = load(d, pingpong_ptx, "pingpong", &m);
    for (uint32_t mode = 0; mode < 2; mode++) {
        uint64_t out = poisoned(d, 128 * 4);
        void *args[] = {&out, &mode};
        if (mode) {
            expect_launch_error(d, f, 256, args, "racecheck: shared-memory hazard (read after write) at __shared__ address 0x0",
                                "by thread (128,0,0)", "ld.shared.u32 %r11, [%r6]", "conflicts with a write by thread (0,0,0)",
                                "st.shared.u32 [%r6], %r11", NULL);
            continue;
        }
        cr_assert_eq(dev_launch(f, 1, 1, 1, 256, 1, 1, 0, NULL, args), DEV_OK, "%s", dev_last_error(d));
        uint32_t h[128];
        dev_memcpy_dtoh(d, h, out, sizeof h);
        for (unsigned i = 0; i < 128; i++) cr_assert_eq(h[i], 4u, "out[%u] = %u", i, h[i]);
    }
    dev_module_unload(m);
    dev_close(d);
}

/* A producer warp and a consumer warp hand a buffer back and forth through two mbarriers (full, empty; 32
 * arrivals each), three times: the producer writes buf[lane] = 100 i + lane and arrives on full; the consumer
 * waits for full, adds buf[lane] up and arrives on empty, for which the producer waits before it writes
 * again; a third warp passes barriers of its own meanwhile.  Mode 1: the producer arrives before its store
 * (reported, at lane 0's store: the phase's observers are ordered after what came before each arrival). */
static const char *mbar_handoff_ptx = PTX_HEAD
    ".visible .entry handoff(.param .u64 out, .param .u32 mode)\n"
    "{\n"
    "  .reg .pred %p<8>;\n"
    "  .reg .b32 %r<16>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  .shared .align 4 .b32 buf[32];\n"
    "  .shared .align 8 .b64 full;\n"
    "  .shared .align 8 .b64 empty;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  ld.param.u32 %r1, [mode];\n"
    "  mov.u32 %r2, %tid.x;\n"
    "  and.b32 %r3, %r2, 31;\n"
    "  shr.u32 %r4, %r2, 5;\n"
    "  mov.u32 %r5, buf;\n"
    "  mad.lo.u32 %r6, %r3, 4, %r5;\n"
    "  setp.eq.u32 %p1, %r2, 0;\n"
    "  @%p1 mbarrier.init.shared::cta.b64 [full], 32;\n"
    "  @%p1 mbarrier.init.shared::cta.b64 [empty], 32;\n"
    "  bar.sync 0;\n"
    "  setp.eq.u32 %p7, %r1, 1;\n"
    "  mov.u32 %r7, 0;\n"
    "  mov.u32 %r8, 0;\n"
    "  setp.eq.u32 %p2, %r4, 1;\n"
    "  @%p2 bra $CONSUMER;\n"
    "  setp.eq.u32 %p2, %r4, 2;\n"
    "  @%p2 bra $OTHER;\n"
    "$PRODUCE:\n"
    "  setp.eq.u32 %p3, %r7, 0;\n"
    "  @%p3 bra $FILL;\n"
    "  sub.u32 %r9, %r7, 1;\n"
    "  and.b32 %r9, %r9, 1;\n"
    "$WE:\n"
    "  mbarrier.try_wait.parity.shared::cta.b64 %p4, [empty], %r9;\n"
    "  @!%p4 bra $WE;\n"
    "$FILL:\n"
    "  mad.lo.u32 %r10, %r7, 100, %r3;\n"
    "  @%p7 mbarrier.arrive.shared::cta.b64 %rd2, [full];\n"
    "  st.shared.u32 [%r6], %r10;\n"
    "  @!%p7 mbarrier.arrive.shared::cta.b64 %rd2, [full];\n"
    "  add.u32 %r7, %r7, 1;\n"
    "  setp.lt.u32 %p5, %r7, 3;\n"
    "  @%p5 bra $PRODUCE;\n"
    "  bra $END;\n"
    "$CONSUMER:\n"
    "  and.b32 %r9, %r7, 1;\n"
    "$WF:\n"
    "  mbarrier.try_wait.parity.shared::cta.b64 %p4, [full], %r9;\n"
    "  @!%p4 bra $WF;\n"
    "  ld.shared.u32 %r11, [%r6];\n"
    "  add.u32 %r8, %r8, %r11;\n"
    "  mbarrier.arrive.shared::cta.b64 %rd2, [empty];\n"
    "  add.u32 %r7, %r7, 1;\n"
    "  setp.lt.u32 %p5, %r7, 3;\n"
    "  @%p5 bra $CONSUMER;\n"
    "  mul.wide.u32 %rd3, %r3, 4;\n"
    "  add.u64 %rd4, %rd1, %rd3;\n"
    "  st.global.u32 [%rd4], %r8;\n"
    "  bra $END;\n"
    "$OTHER:\n"
    "  bar.sync 1, 32;\n"
    "  add.u32 %r7, %r7, 1;\n"
    "  setp.lt.u32 %p5, %r7, 8;\n"
    "  @%p5 bra $OTHER;\n"
    "$END:\n"
    "  ret;\n"
    "}\n";

Test(racecheck, mbarrier_handoff) {
    TileDevice *d = open_emu(true);
    TileDevModule *m;
    TileDevFunction *f = load(d, mbar_handoff_ptx, "handoff", &m);
    for (uint32_t mode = 0; mode < 2; mode++) {
        uint64_t out = poisoned(d, 32 * 4);
        void *args[] = {&out, &mode};
        if (mode) {
            expect_launch_error(d, f, 96, args, "racecheck: shared-memory hazard (read after write) at __shared__ address 0x0",
                                "by thread (32,0,0)", "ld.shared.u32 %r11, [%r6]", "conflicts with a write by thread (0,0,0)",
                                "st.shared.u32 [%r6], %r10", NULL);
            continue;
        }
        cr_assert_eq(dev_launch(f, 1, 1, 1, 96, 1, 1, 0, NULL, args), DEV_OK, "%s", dev_last_error(d));
        uint32_t h[32];
        dev_memcpy_dtoh(d, h, out, sizeof h);
        for (unsigned i = 0; i < 32; i++) cr_assert_eq(h[i], 300 + 3 * i, "out[%u] = %u", i, h[i]);
    }
    dev_module_unload(m);
    dev_close(d);
}

/* Threads that exited count as arrived at a whole-block barrier, and what they did before is ordered before
 * it: warp 1 writes a[lane] and exits, warp 0 passes bar.sync 0 and reads a.  Mode 1: warp 0 passes
 * bar.sync 1, 32, a barrier of its own, instead (reported). */
static const char *exited_ptx = PTX_HEAD
    ".visible .entry exited(.param .u64 out, .param .u32 mode)\n"
    "{\n"
    "  .reg .pred %p<4>;\n"
    "  .reg .b32 %r<8>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  .shared .align 4 .b32 a[32];\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  ld.param.u32 %r1, [mode];\n"
    "  mov.u32 %r2, %tid.x;\n"
    "  and.b32 %r3, %r2, 31;\n"
    "  mov.u32 %r4, a;\n"
    "  mad.lo.u32 %r5, %r3, 4, %r4;\n"
    "  setp.lt.u32 %p1, %r2, 32;\n"
    "  @%p1 bra $READ;\n"
    "  st.shared.u32 [%r5], %r2;\n"
    "  exit;\n"
    "$READ:\n"
    "  setp.eq.u32 %p2, %r1, 0;\n"
    "  @%p2 bar.sync 0;\n"
    "  @!%p2 bar.sync 1, 32;\n"
    "  ld.shared.u32 %r6, [%r5];\n"
    "  mul.wide.u32 %rd2, %r2, 4;\n"
    "  add.u64 %rd3, %rd1, %rd2;\n"
    "  st.global.u32 [%rd3], %r6;\n"
    "  ret;\n"
    "}\n";

Test(racecheck, exited_threads_at_whole_block_barriers) {
    TileDevice *d = open_emu(true);
    TileDevModule *m;
    TileDevFunction *f = load(d, exited_ptx, "exited", &m);
    for (uint32_t mode = 0; mode < 2; mode++) {
        uint64_t out = poisoned(d, 32 * 4);
        void *args[] = {&out, &mode};
        if (mode) {
            expect_launch_error(d, f, 64, args, "racecheck: shared-memory hazard (read after write) at __shared__ address 0x0",
                                "by thread (0,0,0)", "conflicts with a write by thread (32,0,0)", NULL);
            continue;
        }
        cr_assert_eq(dev_launch(f, 1, 1, 1, 64, 1, 1, 0, NULL, args), DEV_OK, "%s", dev_last_error(d));
        uint32_t h[32];
        dev_memcpy_dtoh(d, h, out, sizeof h);
        for (unsigned i = 0; i < 32; i++) cr_assert_eq(h[i], i + 32, "out[%u] = %u", i, h[i]);
    }
    dev_module_unload(m);
    dev_close(d);
}

/* A write after reads by several warps must be ordered after each warp's reads: after bar.sync 0 the three
 * warps read a[lane]; then warp 2 overwrites it.  Mode 0: after bar.sync 1, 96 (all three); mode 1: after
 * bar.sync 1, 64 with warp 1 only (reported: warp 0's read is not ordered before the write, though warp 2
 * read last and warp 1 was ordered).  Modes 2 and 3: as 0 and 1, warp 1 first passing a barrier of its own
 * (its read then comes later, at another clock than the other warps', which racecheck keeps apart). */
static const char *readers_ptx = PTX_HEAD
    ".visible .entry readers(.param .u64 out, .param .u32 mode)\n"
    "{\n"
    "  .reg .pred %p<8>;\n"
    "  .reg .b32 %r<12>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  .shared .align 4 .b32 a[32];\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  ld.param.u32 %r1, [mode];\n"
    "  mov.u32 %r2, %tid.x;\n"
    "  and.b32 %r3, %r2, 31;\n"
    "  shr.u32 %r4, %r2, 5;\n"
    "  mov.u32 %r5, a;\n"
    "  mad.lo.u32 %r6, %r3, 4, %r5;\n"
    "  add.u32 %r9, %r2, 100;\n"
    "  bar.sync 0;\n"
    "  setp.eq.u32 %p1, %r4, 0;\n"
    "  setp.eq.u32 %p6, %r4, 1;\n"
    "  setp.ge.u32 %p2, %r1, 2;\n"
    "  and.pred %p3, %p6, %p2;\n"
    "  @%p3 bar.sync 2, 32;\n"
    "  ld.shared.u32 %r10, [%r6];\n"
    "  and.b32 %r11, %r1, 1;\n"
    "  setp.eq.u32 %p4, %r11, 1;\n"
    "  @%p4 bra $RACY;\n"
    "  bar.sync 1, 96;\n"
    "  bra $WRITE;\n"
    "$RACY:\n"
    "  @%p1 bra $OUT;\n"
    "  bar.sync 1, 64;\n"
    "$WRITE:\n"
    "  setp.ne.u32 %p5, %r4, 2;\n"
    "  @%p5 bra $OUT;\n"
    "  st.shared.u32 [%r6], %r9;\n"
    "$OUT:\n"
    "  mul.wide.u32 %rd2, %r2, 4;\n"
    "  add.u64 %rd3, %rd1, %rd2;\n"
    "  st.global.u32 [%rd3], %r10;\n"
    "  ret;\n"
    "}\n";

Test(racecheck, write_after_reads_of_several_warps) {
    TileDevice *d = open_emu(true);
    TileDevModule *m;
    TileDevFunction *f = load(d, readers_ptx, "readers", &m);
    for (uint32_t mode = 0; mode < 4; mode++) {
        uint64_t out = poisoned(d, 96 * 4);
        void *args[] = {&out, &mode};
        if (mode & 1) {
            expect_launch_error(d, f, 96, args, "racecheck: shared-memory hazard (write after read) at __shared__ address 0x0",
                                "by thread (64,0,0)", "st.shared.u32 [%r6], %r9", "conflicts with a read by the warp of thread (0,0,0)",
                                NULL);
            continue;
        }
        cr_assert_eq(dev_launch(f, 1, 1, 1, 96, 1, 1, 0, NULL, args), DEV_OK, "mode %u: %s", mode, dev_last_error(d));
        uint32_t h[96];
        dev_memcpy_dtoh(d, h, out, sizeof h);
        for (unsigned i = 0; i < 96; i++) cr_assert_eq(h[i], 0u, "mode %u: out[%u] = %u", mode, i, h[i]);
    }
    dev_module_unload(m);
    dev_close(d);
}

/* Reads of one warp's lanes across a barrier: the in-place (Hillis-Steele) inclusive scan, s[t] = t + 1, then
 * for d = 1, 2, 4, ...: temp = s[t - d] (t >= d), bar.sync, s[t] += temp, bar.sync.  Lane t + d reads s[t] in
 * one step, lane t reads and writes it after the barrier: ordered (it was reported as a write after reads by
 * "several threads", the two lanes' reads merged at the later clock; a bitonic sort's compare-exchange, as in
 * ggml's argsort, hit it the same way).  Mode 1 leaves out the barrier between the reads and the writes:
 * lane 1 then reads s[0] after lane 0 has written it, reported.  32 threads (one warp) and 64. */
static const char *scan_ptx = PTX_HEAD
    ".visible .entry hs(.param .u64 out, .param .u32 mode)\n"
    "{\n"
    "  .reg .pred %p<4>;\n"
    "  .reg .b32 %r<14>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  .shared .align 4 .b32 s[64];\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  ld.param.u32 %r1, [mode];\n"
    "  mov.u32 %r2, %tid.x;\n"
    "  mov.u32 %r12, %ntid.x;\n"
    "  mov.u32 %r3, s;\n"
    "  mad.lo.u32 %r4, %r2, 4, %r3;\n"
    "  add.u32 %r5, %r2, 1;\n"
    "  st.shared.u32 [%r4], %r5;\n"
    "  bar.sync 0;\n"
    "  setp.ne.u32 %p2, %r1, 0;\n"
    "  mov.u32 %r6, 1;\n"
    "$STEP:\n"
    "  mov.u32 %r7, 0;\n"
    "  setp.lt.u32 %p1, %r2, %r6;\n"
    "  @%p1 bra $ADD;\n"
    "  shl.b32 %r8, %r6, 2;\n"
    "  sub.u32 %r9, %r4, %r8;\n"
    "  ld.shared.u32 %r7, [%r9];\n"
    "$ADD:\n"
    "  @!%p2 bar.sync 0;\n"
    "  ld.shared.u32 %r10, [%r4];\n"
    "  add.u32 %r10, %r10, %r7;\n"
    "  st.shared.u32 [%r4], %r10;\n"
    "  bar.sync 0;\n"
    "  shl.b32 %r6, %r6, 1;\n"
    "  setp.lt.u32 %p3, %r6, %r12;\n"
    "  @%p3 bra $STEP;\n"
    "  ld.shared.u32 %r11, [%r4];\n"
    "  mul.wide.u32 %rd2, %r2, 4;\n"
    "  add.u64 %rd3, %rd1, %rd2;\n"
    "  st.global.u32 [%rd3], %r11;\n"
    "  ret;\n"
    "}\n";

Test(racecheck, lanes_reads_across_a_barrier) {
    TileDevice *d = open_emu(true);
    TileDevModule *m;
    TileDevFunction *f = load(d, scan_ptx, "hs", &m);
    for (unsigned threads = 32; threads <= 64; threads += 32)
        for (uint32_t mode = 0; mode < 2; mode++) {
            uint64_t out = poisoned(d, 64 * 4);
            void *args[] = {&out, &mode};
            if (mode) {
                expect_launch_error(d, f, threads, args, "racecheck: shared-memory hazard (read after write) at __shared__ address 0x0",
                                    "by thread (1,0,0)", "ld.shared.u32 %r7, [%r9]", "conflicts with a write by thread (0,0,0)",
                                    "st.shared.u32 [%r4], %r10", NULL);
                continue;
            }
            cr_assert_eq(dev_launch(f, 1, 1, 1, threads, 1, 1, 0, NULL, args), DEV_OK, "%u threads: %s", threads, dev_last_error(d));
            uint32_t h[64];
            dev_memcpy_dtoh(d, h, out, threads * 4);
            for (unsigned i = 0; i < threads; i++) cr_assert_eq(h[i], (i + 1) * (i + 2) / 2, "%u threads: out[%u] = %u", threads, i, h[i]);
        }
    dev_module_unload(m);
    dev_close(d);
}

/* Two warps cp.async the same 16 bytes into the same shared row (a layout that loads an element in two
 * warps, as Triton's can): writing the bytes already there is no hazard, as for st.shared.  Mode 1: warp 1
 * copies from 16 bytes further on, other bytes into the same place: reported (probe Y: the same-bytes
 * exemption was st's and stmatrix's only). */
static const char *cp_dup_ptx = PTX_HEAD
    ".visible .entry cpdup(.param .u64 in, .param .u32 mode)\n"
    "{\n"
    "  .reg .pred %p<4>;\n"
    "  .reg .b32 %r<8>;\n"
    "  .reg .b64 %rd<6>;\n"
    "  .shared .align 16 .b8 s[512];\n"
    "  ld.param.u64 %rd1, [in];\n"
    "  ld.param.u32 %r1, [mode];\n"
    "  mov.u32 %r2, %tid.x;\n"
    "  and.b32 %r3, %r2, 31;\n"
    "  shr.u32 %r4, %r2, 5;\n"                /* the warp */
    "  mul.lo.u32 %r5, %r4, %r1;\n"           /* mode 1: warp 1 reads 16 bytes further on */
    "  add.u32 %r5, %r5, %r3;\n"
    "  mul.wide.u32 %rd2, %r5, 16;\n"
    "  add.u64 %rd3, %rd1, %rd2;\n"
    "  mov.u32 %r6, s;\n"
    "  mad.lo.u32 %r7, %r3, 16, %r6;\n"
    "  cp.async.cg.shared.global [%r7], [%rd3], 16;\n"
    "  cp.async.wait_all;\n"
    "  ret;\n"
    "}\n";

Test(racecheck, cp_async_of_the_bytes_already_there) {
    TileDevice *d = open_emu(true);
    TileDevModule *m;
    TileDevFunction *f = load(d, cp_dup_ptx, "cpdup", &m);
    uint8_t h[33 * 16];
    for (unsigned i = 0; i < sizeof h; i++) h[i] = (uint8_t)(i * 7 + 1);
    uint64_t in = poisoned(d, sizeof h);
    cr_assert_eq(dev_memcpy_htod(d, in, h, sizeof h), DEV_OK);
    for (uint32_t mode = 0; mode < 2; mode++) {
        void *args[] = {&in, &mode};
        if (mode) expect_launch_error(d, f, 64, args, "racecheck: shared-memory hazard (write after write)", NULL);
        else cr_assert_eq(dev_launch(f, 1, 1, 1, 64, 1, 1, 0, NULL, args), DEV_OK, "%s", dev_last_error(d));
    }
    dev_module_unload(m);
    dev_close(d);
}

/* A cp.async's bytes land at the wait that retires its group (probe R R3: they counted as written at issue, so a
 * bar.sync with no cp.async.wait_group before it hid the race).  Warp 0 copies 32 bytes per lane in two groups
 * (group 0: s[0..512), group 1: s[512..1024)), then warp 1 reads s[sel * 512 + lane * 16] after the bar.sync.
 * mode 0: wait_group 0 before the barrier: no race.  1: no wait: reported.  2: wait_group 1: group 0 has landed
 * (sel 0 is fine), group 1 may not have (sel 1 reported).  3: the issuing lane reads its own copy before any wait:
 * reported.  4: cp.async.mbarrier.arrive.noinc, and warp 1 waits on the mbarrier's phase instead of the bar.sync:
 * no race.  5: as 4 but warp 1 skips the mbarrier wait: reported. */
static const char *cp_wait_ptx = PTX_HEAD
    ".visible .entry cpwait(.param .u64 in, .param .u64 out, .param .u32 mode, .param .u32 sel)\n"
    "{\n"
    "  .reg .pred %p<12>;\n"
    "  .reg .b32 %r<16>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  .reg .f32 %f<2>;\n"
    "  .shared .align 16 .b8 s[1024];\n"
    "  .shared .align 8 .b64 bar;\n"
    "  ld.param.u64 %rd1, [in];\n"
    "  ld.param.u64 %rd4, [out];\n"
    "  ld.param.u32 %r1, [mode];\n"
    "  ld.param.u32 %r12, [sel];\n"
    "  mov.u32 %r2, %tid.x;\n"
    "  and.b32 %r3, %r2, 31;\n"
    "  shr.u32 %r4, %r2, 5;\n"
    "  mov.u32 %r6, s;\n"
    "  mad.lo.u32 %r7, %r3, 16, %r6;\n"        /* s + lane * 16 */
    "  mul.wide.u32 %rd2, %r3, 16;\n"
    "  add.u64 %rd3, %rd1, %rd2;\n"
    "  setp.eq.u32 %p1, %r4, 0;\n"             /* warp 0 copies */
    "  setp.eq.u32 %p2, %r2, 0;\n"
    "  @%p2 mbarrier.init.shared.b64 [bar], 32;\n"
    "  bar.sync 0;\n"
    "  @!%p1 bra READ;\n"
    "  cp.async.cg.shared.global [%r7], [%rd3], 16;\n"
    "  cp.async.commit_group;\n"
    "  add.u64 %rd5, %rd3, 512;\n"
    "  add.u32 %r8, %r7, 512;\n"
    "  cp.async.cg.shared.global [%r8], [%rd5], 16;\n"
    "  cp.async.commit_group;\n"
    "  setp.eq.u32 %p3, %r1, 0;\n"
    "  @%p3 cp.async.wait_group 0;\n"
    "  setp.eq.u32 %p4, %r1, 2;\n"
    "  @%p4 cp.async.wait_group 1;\n"
    "  setp.eq.u32 %p5, %r1, 3;\n"
    "  @%p5 ld.shared.f32 %f1, [%r7];\n"
    "  setp.ge.u32 %p6, %r1, 4;\n"
    "  @%p6 cp.async.mbarrier.arrive.noinc.shared.b64 [bar];\n"
    "  bar.sync 1, 64;\n"
    "  bra DONE;\n"
    "READ:\n"
    "  bar.sync 1, 64;\n"
    "  setp.eq.u32 %p7, %r1, 4;\n"
    "  @!%p7 bra LOAD;\n"
    "WAIT:\n"
    "  mbarrier.try_wait.parity.shared.b64 %p8, [bar], 0;\n"
    "  @!%p8 bra WAIT;\n"
    "LOAD:\n"
    "  mad.lo.u32 %r9, %r12, 512, %r7;\n"
    "  ld.shared.f32 %f1, [%r9];\n"
    "  mul.wide.u32 %rd6, %r3, 4;\n"
    "  add.u64 %rd7, %rd4, %rd6;\n"
    "  st.global.f32 [%rd7], %f1;\n"
    "DONE:\n"
    "  ret;\n"
    "}\n";

Test(racecheck, cp_async_lands_at_its_wait) {
    TileDevice *d = open_emu(true);
    TileDevModule *m;
    TileDevFunction *f = load(d, cp_wait_ptx, "cpwait", &m);
    float h[256];
    for (unsigned i = 0; i < 256; i++) h[i] = (float)i * 0.5f + 1.0f;
    uint64_t in = upload(d, h, sizeof h), out = poisoned(d, 32 * sizeof(float));
    static const struct {
        uint32_t mode, sel;
        const char *want, *why; /* want NULL: no race */
    } cases[] = {
        {0, 0, NULL, NULL},
        {0, 1, NULL, NULL},
        {1, 0, "racecheck: shared memory read before the cp.async that writes it was waited for", "cp.async.wait_group"},
        {2, 0, NULL, NULL},
        {2, 1, "racecheck: shared memory read before the cp.async that writes it was waited for", "cp.async.wait_group"},
        {3, 0, "racecheck: shared memory read before the cp.async that writes it was waited for", "(this thread)"},
        {4, 1, NULL, NULL},
        {5, 0, "racecheck: shared memory read before the cp.async that writes it was waited for", "completes on the mbarrier at shared"},
    };
    for (unsigned c = 0; c < sizeof cases / sizeof *cases; c++) {
        void *args[] = {&in, &out, (void *)&cases[c].mode, (void *)&cases[c].sel};
        if (cases[c].want) {
            expect_launch_error(d, f, 64, args, cases[c].want, "issued by thread (", cases[c].why, NULL);
            continue;
        }
        cr_assert_eq(dev_launch(f, 1, 1, 1, 64, 1, 1, 0, NULL, args), DEV_OK, "mode %u sel %u: %s", cases[c].mode, cases[c].sel,
                     dev_last_error(d));
        float o[32];
        cr_assert_eq(dev_memcpy_dtoh(d, o, out, sizeof o), DEV_OK);
        for (unsigned i = 0; i < 32; i++) cr_assert_eq(o[i], h[cases[c].sel * 128 + i * 4], "mode %u lane %u", cases[c].mode, i);
    }
    dev_module_unload(m);
    dev_close(d);
}

/* Storing the bytes already there is no hazard, but it must not take the place of an earlier write it is not
 * ordered with: warp 0 writes 7 with no barrier at all, warp 1 writes 7 too and then syncs with warp 2, which
 * writes 9: warp 0's 7 and warp 2's 9 race (X may end as either), reported (it was missed: warp 1's equal store
 * replaced warp 0's as the byte's last write; probe R).  Mode 1: warp 0 takes part in the barrier too (bar.sync 1,
 * 96 after its store): no race. */
static const char *same_bytes_ptx = PTX_HEAD
    ".visible .entry sb(.param .u32 mode)\n"
    "{\n"
    "  .reg .pred %p<4>;\n"
    "  .reg .b32 %r<24>;\n"
    "  .shared .align 4 .b8 X[128];\n"
    "  ld.param.u32 %r9, [mode];\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  shr.u32 %r2, %r1, 5;\n"
    "  and.b32 %r3, %r1, 31;\n"
    "  mov.u32 %r10, X;\n"
    "  mad.lo.u32 %r16, %r3, 4, %r10;\n"
    "  setp.eq.u32 %p0, %r9, 1;\n"
    "  setp.eq.u32 %p1, %r2, 1;\n"
    "  @%p1 bra $W1;\n"
    "  setp.eq.u32 %p2, %r2, 2;\n"
    "  @%p2 bra $W2;\n"
    "  mov.u32 %r21, 7;\n"
    "  st.shared.u32 [%r16], %r21;\n"
    "  @%p0 bar.sync 1, 96;\n"
    "  ret;\n"
    "$W1:\n"
    "  bar.sync 2, 32;\n"
    "  mov.u32 %r21, 7;\n"
    "  st.shared.u32 [%r16], %r21;\n"
    "  @%p0 bar.sync 1, 96;\n"
    "  @!%p0 bar.sync 1, 64;\n"
    "  ret;\n"
    "$W2:\n"
    "  @%p0 bar.sync 1, 96;\n"
    "  @!%p0 bar.sync 1, 64;\n"
    "  mov.u32 %r21, 9;\n"
    "  st.shared.u32 [%r16], %r21;\n"
    "  ret;\n"
    "}\n";

Test(racecheck, same_bytes_keep_an_unordered_earlier_write) {
    TileDevice *d = open_emu(true);
    TileDevModule *m;
    TileDevFunction *f = load(d, same_bytes_ptx, "sb", &m);
    for (uint32_t mode = 0; mode < 2; mode++) {
        void *args[] = {&mode};
        if (!mode) expect_launch_error(d, f, 96, args, "racecheck: shared-memory hazard (write after write)", "by thread (64,0,0)",
                                       "conflicts with a write by thread (0,0,0)", NULL);
        else cr_assert_eq(dev_launch(f, 1, 1, 1, 96, 1, 1, 0, NULL, args), DEV_OK, "%s", dev_last_error(d));
    }
    dev_module_unload(m);
    dev_close(d);
}

/* The bytes of one access with histories that differ in the writer's clock alone: racecheck checks an access's
 * bytes once per run of bytes that share one history and must not take byte 1 into byte 0's run.  Thread 0
 * stores byte i of buf, i = 0 then 1, with one st.shared.u8 in a loop (one thread, one line), arriving on barrier
 * 1 between the two (a release: its clock moves on); thread 32 waits at barrier 1 and reads both bytes with one
 * ld.shared.u16 once thread 0 has set a volatile flag (which orders nothing, but makes the read come second in
 * the emulator).  mode 0: thread 0 arrives again after byte 1 and warp 1 waits for that too, so the read is
 * ordered and gives 0x0201; mode 1: it does not, and byte 1's write races with the read (reported), byte 0's
 * does not. */
static const char *clock_run_ptx = PTX_HEAD
    ".visible .entry cr(.param .u64 out, .param .u64 flag, .param .u32 mode)\n"
    "{\n"
    "  .reg .pred %p<6>;\n"
    "  .reg .b32 %r<12>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  .shared .align 4 .b8 buf[4];\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  ld.param.u64 %rd2, [flag];\n"
    "  ld.param.u32 %r1, [mode];\n"
    "  mov.u32 %r2, %tid.x;\n"
    "  mov.u32 %r3, buf;\n"
    "  setp.eq.u32 %p0, %r1, 0;\n"
    "  setp.ge.u32 %p1, %r2, 32;\n"
    "  @%p1 bra $READER;\n"
    "  setp.eq.u32 %p2, %r2, 0;\n"
    "  mov.u32 %r4, 0;\n"
    "$LOOP:\n"
    "  add.u32 %r5, %r3, %r4;\n"
    "  add.u32 %r6, %r4, 1;\n"
    "  @%p2 st.shared.u8 [%r5], %r6;\n"
    "  setp.eq.u32 %p3, %r4, 0;\n"
    "  or.pred %p4, %p3, %p0;\n"
    "  @%p4 bar.arrive 1, 64;\n"
    "  mov.u32 %r4, %r6;\n"
    "  setp.lt.u32 %p5, %r4, 2;\n"
    "  @%p5 bra $LOOP;\n"
    "  mov.u32 %r7, 1;\n"
    "  @%p2 st.volatile.global.u32 [%rd2], %r7;\n"
    "  ret;\n"
    "$READER:\n"
    "  bar.sync 1, 64;\n"
    "  @%p0 bar.sync 1, 64;\n"
    "$SPIN:\n"
    "  ld.volatile.global.u32 %r8, [%rd2];\n"
    "  setp.eq.u32 %p3, %r8, 0;\n"
    "  @%p3 bra $SPIN;\n"
    "  setp.eq.u32 %p2, %r2, 32;\n"
    "  @!%p2 ret;\n"
    "  ld.shared.u16 %r9, [%r3];\n"
    "  st.global.u32 [%rd1], %r9;\n"
    "  ret;\n"
    "}\n";

Test(racecheck, access_of_bytes_whose_write_clocks_differ) {
    TileDevice *d = open_emu(true);
    TileDevModule *m;
    TileDevFunction *f = load(d, clock_run_ptx, "cr", &m);
    for (uint32_t mode = 0; mode < 2; mode++) {
        uint32_t zero = 0, poison = 0xDEADBEEF;
        uint64_t out = upload(d, &poison, sizeof poison), flag = upload(d, &zero, sizeof zero);
        void *args[] = {&out, &flag, &mode};
        if (mode == 1) {
            expect_launch_error(d, f, 64, args, "racecheck: shared-memory hazard (read after write) at __shared__ address 0x1\n",
                                "ld.shared.u16 %r9, [%r3]", "by thread (32,0,0)", "conflicts with a write by thread (0,0,0)",
                                "st.shared.u8 [%r5], %r6", NULL);
            continue;
        }
        cr_assert_eq(dev_launch(f, 1, 1, 1, 64, 1, 1, 0, NULL, args), DEV_OK, "mode %u: %s", mode, dev_last_error(d));
        uint32_t h = 0;
        dev_memcpy_dtoh(d, &h, out, sizeof h);
        cr_assert_eq(h, 0x0201u, "read 0x%x, want 0x0201", h);
    }
    dev_module_unload(m);
    dev_close(d);
}

/* The bytes of one store that share their history but not the answer to whether the store writes the bytes
 * already there: thread 0 stores 0x0201 into buf with one st.shared.u16 and sets a volatile flag (ordering
 * nothing); thread 32 then stores 0x0201 (mode 0: the same bytes, no hazard) or 0x0301 (mode 1: byte 0 the same,
 * byte 1 not: a write after write at byte 1, reported) into buf with no barrier in between. */
static const char *same_answer_ptx = PTX_HEAD
    ".visible .entry sa(.param .u64 flag, .param .u32 mode)\n"
    "{\n"
    "  .reg .pred %p<4>;\n"
    "  .reg .b32 %r<8>;\n"
    "  .reg .b64 %rd<2>;\n"
    "  .shared .align 4 .b8 buf[4];\n"
    "  ld.param.u64 %rd1, [flag];\n"
    "  ld.param.u32 %r1, [mode];\n"
    "  mov.u32 %r2, %tid.x;\n"
    "  mov.u32 %r3, buf;\n"
    "  shl.b32 %r4, %r1, 8;\n"
    "  add.u32 %r4, %r4, 0x0201;\n"
    "  setp.eq.u32 %p0, %r2, 0;\n"
    "  @!%p0 bra $OTHER;\n"
    "  mov.u32 %r5, 0x0201;\n"
    "  st.shared.u16 [%r3], %r5;\n"
    "  mov.u32 %r6, 1;\n"
    "  st.volatile.global.u32 [%rd1], %r6;\n"
    "  ret;\n"
    "$OTHER:\n"
    "  setp.ne.u32 %p1, %r2, 32;\n"
    "  @%p1 ret;\n"
    "$SPIN:\n"
    "  ld.volatile.global.u32 %r7, [%rd1];\n"
    "  setp.eq.u32 %p2, %r7, 0;\n"
    "  @%p2 bra $SPIN;\n"
    "  st.shared.u16 [%r3], %r4;\n"
    "  ret;\n"
    "}\n";

Test(racecheck, store_of_bytes_partly_already_there) {
    TileDevice *d = open_emu(true);
    TileDevModule *m;
    TileDevFunction *f = load(d, same_answer_ptx, "sa", &m);
    for (uint32_t mode = 0; mode < 2; mode++) {
        uint32_t zero = 0;
        uint64_t flag = upload(d, &zero, sizeof zero);
        void *args[] = {&flag, &mode};
        if (mode == 1)
            expect_launch_error(d, f, 64, args, "racecheck: shared-memory hazard (write after write) at __shared__ address 0x1\n",
                                "st.shared.u16 [%r3], %r4", "by thread (32,0,0)", "conflicts with a write by thread (0,0,0)",
                                "st.shared.u16 [%r3], %r5", NULL);
        else cr_assert_eq(dev_launch(f, 1, 1, 1, 64, 1, 1, 0, NULL, args), DEV_OK, "%s", dev_last_error(d));
    }
    dev_module_unload(m);
    dev_close(d);
}

/* A named barrier that three warps reach for 64 threads: the first instance takes warps 0 and 1 (the lowest
 * waiting), warp 2 is left for the second, with warp 3.  Mode 0: warp 2 stores Y and waits; warp 3, after the
 * second instance, reads Y: ordered (it was reported: warp 2's arrival went into the first instance's vector and
 * was wiped with it).  Mode 1: warp 0, after the first instance, reads what warp 2 stored: not ordered (warp 2
 * was not in it), reported (it was missed, the other side of the same mistake; probe R). */
static const char *oversub_ptx = PTX_HEAD
    ".visible .entry ov(.param .u32 mode)\n"
    "{\n"
    "  .reg .pred %p<4>;\n"
    "  .reg .b32 %r<24>;\n"
    "  .shared .align 4 .b8 Y[128];\n"
    "  ld.param.u32 %r9, [mode];\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  shr.u32 %r2, %r1, 5;\n"
    "  and.b32 %r3, %r1, 31;\n"
    "  mov.u32 %r10, Y;\n"
    "  mad.lo.u32 %r17, %r3, 4, %r10;\n"
    "  setp.eq.u32 %p0, %r9, 1;\n"
    "  setp.eq.u32 %p1, %r2, 2;\n"
    "  @%p1 bra $W2;\n"
    "  setp.eq.u32 %p2, %r2, 3;\n"
    "  @%p2 bra $W3;\n"
    "  bar.sync 1, 64;\n"                      /* warps 0 and 1 */
    "  @%p0 ld.shared.u32 %r20, [%r17];\n"
    "  ret;\n"
    "$W2:\n"
    "  st.shared.u32 [%r17], %r1;\n"
    "  bar.sync 1, 64;\n"
    "  ret;\n"
    "$W3:\n"
    "  bar.sync 2, 32;\n"
    "  bar.sync 2, 32;\n"
    "  bar.sync 1, 64;\n"
    "  @!%p0 ld.shared.u32 %r20, [%r17];\n"
    "  ret;\n"
    "}\n";

Test(racecheck, oversubscribed_named_barrier) {
    TileDevice *d = open_emu(true);
    TileDevModule *m;
    TileDevFunction *f = load(d, oversub_ptx, "ov", &m);
    for (uint32_t mode = 0; mode < 2; mode++) {
        void *args[] = {&mode};
        if (mode) expect_launch_error(d, f, 128, args, "racecheck: shared-memory hazard (read after write)", "by thread (0,0,0)",
                                      "conflicts with a write by thread (64,0,0)", NULL);
        else cr_assert_eq(dev_launch(f, 1, 1, 1, 128, 1, 1, 0, NULL, args), DEV_OK, "%s", dev_last_error(d));
    }
    dev_module_unload(m);
    dev_close(d);
}

/* A unit's racecheck state ends with it: block 0 bulk-loads the last 128 bytes of a 4 KiB buffer (and waits for
 * the copy), no thread touching them otherwise; block 1, on the same host thread, reads those bytes of its own
 * shared memory (zeros) with a plain load.  Clean: nothing block 0's copy left may be checked against block 1's
 * read (a shadow still naming the copy reported the read as one before the copy's phase was observed). */
static const char *unit_reset_ptx = PTX_HEAD
    ".visible .entry ur(.param .u64 src, .param .u64 out)\n{\n"
    " .reg .pred %p<4>;\n .reg .b32 %r<8>;\n .reg .b64 %rd<4>;\n"
    " .shared .align 128 .b8 buf[4096];\n .shared .align 8 .b64 bar;\n"
    " mov.u32 %r1, %tid.x;\n mov.u32 %r2, %ctaid.x;\n mov.u32 %r3, buf;\n"
    " setp.ne.u32 %p1, %r2, 0;\n @%p1 bra $PLAIN;\n setp.ne.u32 %p2, %r1, 0;\n @%p2 bra $END;\n"
    " mbarrier.init.shared::cta.b64 [bar], 1;\n fence.mbarrier_init.release.cluster;\n"
    " add.u32 %r4, %r3, 3968;\n ld.param.u64 %rd1, [src];\n"
    " mbarrier.arrive.expect_tx.shared::cta.b64 %rd2, [bar], 128;\n"
    " cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r4], [%rd1], 128, [bar];\n"
    "$W:\n mbarrier.try_wait.parity.shared::cta.b64 %p3, [bar], 0;\n @!%p3 bra $W;\n bra $END;\n"
    "$PLAIN:\n setp.ne.u32 %p2, %r1, 32;\n @%p2 bra $END;\n ld.shared.u32 %r5, [%r3+4000];\n"
    " ld.param.u64 %rd3, [out];\n st.global.u32 [%rd3], %r5;\n"
    "$END:\n ret;\n}\n";

Test(racecheck, a_units_copies_end_with_it) {
    TileDevice *d = NULL;
    DevOptions o = {.emu_racecheck = true, .emu_host_threads = 1, .emu_timeout_seconds = 60};
    cr_assert_eq(dev_open("emu:sm_90a", &o, &d, NULL), DEV_OK);
    TileDevModule *m;
    TileDevFunction *f = load(d, unit_reset_ptx, "ur", &m);
    uint8_t src[128];
    for (unsigned i = 0; i < 128; i++) src[i] = (uint8_t)(i * 7 + 1);
    uint64_t ds = upload(d, src, sizeof src), out = poisoned(d, 4);
    cr_assert_eq(dev_launch(f, 2, 1, 1, 64, 1, 1, 0, NULL, (void *[]){&ds, &out}), DEV_OK, "%s", dev_last_error(d));
    uint32_t v;
    dev_memcpy_dtoh(d, &v, out, 4);
    cr_assert_eq(v, 0u, "block 1 read %#x from its own (zeroed) shared memory", v);
    dev_module_unload(m);
    dev_close(d);
}

/* The PTX memory model's fence patterns (docs/emulator.md, Racecheck): a fence (fence.sc / fence.acq_rel /
 * membar) followed by a strong write releases, a strong read followed by a fence acquires.  Warp 0 writes
 * data[lane] + 100, bar.warp.sync, then lane 0 (wfence: after a fence) sets a flag by st.volatile (kind 0),
 * st.relaxed (1) or atom.exch (2); warp 1 spins on it by ld.volatile, ld.relaxed or atom.or and (rfence: after
 * a fence) reads data[lane].  Both fences: the classic __threadfence_block() hand-off, correct, and it was
 * reported (strong accesses never ordered anything).  Either fence missing: a race, reported at the read. */
static const char *fence_flag_ptx =
    ".version 7.8\n.target sm_80\n.address_size 64\n"
    ".visible .entry ff(.param .u64 out, .param .u32 wfence, .param .u32 rfence, .param .u32 kind)\n{\n"
    " .reg .pred %p<8>;\n .reg .b32 %r<16>;\n .reg .b64 %rd<4>;\n .shared .align 4 .b32 data[32];\n .shared .align 4 .b32 flag;\n"
    " ld.param.u32 %r1, [wfence];\n ld.param.u32 %r2, [rfence];\n ld.param.u32 %r11, [kind];\n"
    " mov.u32 %r3, %tid.x;\n and.b32 %r4, %r3, 31;\n shl.b32 %r5, %r4, 2;\n mov.u32 %r6, data;\n add.u32 %r7, %r6, %r5;\n"
    " setp.eq.u32 %p6, %r11, 0;\n setp.eq.u32 %p7, %r11, 1;\n"
    " setp.ge.u32 %p1, %r3, 32;\n @%p1 bra CONS;\n"
    " add.u32 %r8, %r3, 100;\n st.shared.u32 [%r7], %r8;\n bar.warp.sync -1;\n"
    " setp.ne.u32 %p2, %r1, 0;\n @%p2 membar.cta;\n"
    " setp.eq.u32 %p3, %r3, 0;\n @!%p3 bra END;\n"
    " @%p6 st.volatile.shared.u32 [flag], 1;\n @%p7 st.relaxed.cta.shared.u32 [flag], 1;\n"
    " setp.eq.u32 %p5, %r11, 2;\n @%p5 atom.shared.exch.b32 %r12, [flag], 1;\n bra END;\n"
    "CONS:\n"
    " @%p6 ld.volatile.shared.u32 %r9, [flag];\n @%p7 ld.relaxed.cta.shared.u32 %r9, [flag];\n"
    " setp.eq.u32 %p5, %r11, 2;\n @%p5 atom.shared.or.b32 %r9, [flag], 0;\n"
    " setp.eq.u32 %p4, %r9, 0;\n @%p4 bra CONS;\n"
    " setp.ne.u32 %p5, %r2, 0;\n @%p5 fence.acq_rel.cta;\n"
    " ld.shared.u32 %r10, [%r7];\n ld.param.u64 %rd1, [out];\n mul.wide.u32 %rd2, %r4, 4;\n add.s64 %rd3, %rd1, %rd2;\n"
    " st.global.u32 [%rd3], %r10;\n"
    "END:\n ret;\n}\n";

Test(racecheck, fence_patterns_order_strong_flags) {
    check_ptxas_arch(fence_flag_ptx, "sm_80");
    static const char *const devs[] = {"emu:sm_80", "emu:sm_90a"};
    for (int k = 0; k < 2; k++) {
        TileDevice *d = NULL;
        char *err = NULL;
        DevOptions o = {.emu_racecheck = true, .emu_host_threads = 2, .emu_timeout_seconds = 60};
        cr_assert_eq(dev_open(devs[k], &o, &d, &err), DEV_OK, "%s", err ? err : "");
        TileDevModule *m;
        cr_assert_eq(dev_module_load_ptx(d, fence_flag_ptx, &m), DEV_OK, "%s", dev_last_error(d));
        TileDevFunction *f;
        cr_assert_eq(dev_module_get_function(m, "ff", &f), DEV_OK);
        uint64_t out = poisoned(d, 128);
        for (uint32_t kind = 0; kind < 3; kind++)
            for (uint32_t fences = 0; fences < 4; fences++) {
                uint32_t wf = fences & 1, rf = fences >> 1;
                void *args[] = {&out, &wf, &rf, &kind};
                DevStatus st = dev_launch(f, 1, 1, 1, 64, 1, 1, 0, NULL, args);
                if (fences == 3) {
                    cr_assert_eq(st, DEV_OK, "%s %u: %s", devs[k], kind, dev_last_error(d));
                    uint32_t o32[32];
                    download(d, o32, out, sizeof o32);
                    for (uint32_t i = 0; i < 32; i++) cr_assert_eq(o32[i], i + 100);
                } else {
                    cr_assert_eq(st, DEV_ERR_MEMCHECK, "%s kind %u fences %u ran", devs[k], kind, fences);
                    const char *e = dev_last_error(d);
                    cr_assert(strstr(e, "racecheck: shared-memory hazard (read after write)") && strstr(e, "ld.shared.u32 %r10") &&
                                  strstr(e, "st.shared.u32 [%r7], %r8;"), "%s", e);
                }
            }
        dev_module_unload(m);
        dev_close(d);
    }
}

/* Two flags before one fence: warps 0 and 1 each write their half of data, fence and set their own flag
 * (st.volatile); warp 2 spins on both flags and (rfence) fences once, then reads all of data.  Correct; the
 * acquire kept only the last flag read, so warp 0's half was reported.  Without the fence: reported. */
static const char *two_flags_ptx =
    ".version 7.8\n.target sm_80\n.address_size 64\n"
    ".visible .entry tf(.param .u64 out, .param .u32 rfence)\n{\n"
    " .reg .pred %p<8>;\n .reg .b32 %r<16>;\n .reg .b64 %rd<4>;\n .shared .align 4 .b32 data[64];\n .shared .align 4 .b32 flag[2];\n"
    " ld.param.u32 %r2, [rfence];\n mov.u32 %r3, %tid.x;\n shr.u32 %r4, %r3, 5;\n and.b32 %r5, %r3, 31;\n"
    " mov.u32 %r6, data;\n mov.u32 %r11, flag;\n setp.eq.u32 %p1, %r4, 2;\n @%p1 bra CONS;\n"
    " shl.b32 %r7, %r3, 2;\n add.u32 %r7, %r6, %r7;\n add.u32 %r8, %r3, 100;\n st.shared.u32 [%r7], %r8;\n"
    " bar.warp.sync -1;\n membar.cta;\n setp.ne.u32 %p2, %r5, 0;\n @%p2 bra END;\n"
    " shl.b32 %r9, %r4, 2;\n add.u32 %r9, %r11, %r9;\n st.volatile.shared.u32 [%r9], 1;\n bra END;\n"
    "CONS:\n ld.volatile.shared.u32 %r9, [%r11];\n setp.eq.u32 %p3, %r9, 0;\n @%p3 bra CONS;\n"
    "CONS2:\n ld.volatile.shared.u32 %r9, [%r11+4];\n setp.eq.u32 %p3, %r9, 0;\n @%p3 bra CONS2;\n"
    " setp.ne.u32 %p4, %r2, 0;\n @%p4 fence.sc.cta;\n"
    " shl.b32 %r7, %r5, 2;\n add.u32 %r7, %r6, %r7;\n ld.shared.u32 %r12, [%r7];\n ld.shared.u32 %r13, [%r7+128];\n"
    " add.u32 %r12, %r12, %r13;\n ld.param.u64 %rd1, [out];\n mul.wide.u32 %rd2, %r5, 4;\n add.s64 %rd3, %rd1, %rd2;\n"
    " st.global.u32 [%rd3], %r12;\n"
    "END:\n ret;\n}\n";

Test(racecheck, fence_after_two_flags) {
    check_ptxas_arch(two_flags_ptx, "sm_80");
    TileDevice *d = open_emu(true);
    TileDevModule *m;
    TileDevFunction *f = load(d, two_flags_ptx, "tf", &m);
    uint64_t out = poisoned(d, 128);
    uint32_t rf = 1;
    void *args[] = {&out, &rf};
    cr_assert_eq(dev_launch(f, 1, 1, 1, 96, 1, 1, 0, NULL, args), DEV_OK, "%s", dev_last_error(d));
    uint32_t o[32];
    download(d, o, out, sizeof o);
    for (uint32_t i = 0; i < 32; i++) cr_assert_eq(o[i], (i + 100) + (i + 32 + 100));
    rf = 0;
    cr_assert_eq(dev_launch(f, 1, 1, 1, 96, 1, 1, 0, NULL, args), DEV_ERR_MEMCHECK);
    cr_assert(strstr(dev_last_error(d), "racecheck: shared-memory hazard (read after write)"), "%s", dev_last_error(d));
    dev_module_unload(m);
    dev_close(d);
}

/* Triton's reductions end replicated: every lane of a half-warp holds the butterfly's sum and all of them store
 * it to one shared word (a layout conversion).  The lanes' sums agree bit for bit when the butterfly only adds
 * (a + b == b + a), so those stores write the bytes already there: no hazard.  With FMA contraction (Triton's
 * default fp_fusion) the first step is fma(a_i, b_i, shfl(a_j * b_j)): lane i adds lane j's rounded product to its
 * own exact one and lane j the other way round, so the sums may differ in their last bits and the stores race
 * (which lane's value lands is not defined): reported.  Lanes 0 and 8 hold products that cancel (x * x and
 * -x * x with x = 1 + 2^-12, whose square rounds) and the other lanes of half-warp 0 zeros, so its sum is 0 when
 * added, 2^-24 in lanes 0-7 and -2^-24 in lanes 8-15 when contracted (the words differ in their sign byte, at
 * address 3); half-warp 1 sums random products, checked against float64.  mode 0: add; 1: fma. */
static const char *replicated_sum_ptx = PTX_HEAD
    ".visible .entry rs(.param .u64 a, .param .u64 b, .param .u64 out, .param .u32 mode)\n"
    "{\n"
    "  .reg .pred %p<4>;\n"
    "  .reg .b32 %r<24>;\n"
    "  .reg .b64 %rd<10>;\n"
    "  .shared .align 4 .b8 buf[8];\n"
    "  ld.param.u64 %rd1, [a];\n"
    "  ld.param.u64 %rd2, [b];\n"
    "  ld.param.u64 %rd3, [out];\n"
    "  ld.param.u32 %r1, [mode];\n"
    "  mov.u32 %r2, %tid.x;\n"
    "  mul.wide.u32 %rd4, %r2, 4;\n"
    "  add.s64 %rd5, %rd1, %rd4;\n"
    "  add.s64 %rd6, %rd2, %rd4;\n"
    "  ld.global.b32 %r3, [%rd5];\n"
    "  ld.global.b32 %r4, [%rd6];\n"
    "  mul.f32 %r5, %r3, %r4;\n"
    "  shfl.sync.bfly.b32 %r6, %r5, 8, 31, -1;\n"
    "  setp.ne.u32 %p1, %r1, 0;\n"
    "  @%p1 fma.rn.f32 %r7, %r3, %r4, %r6;\n"
    "  @!%p1 add.f32 %r7, %r5, %r6;\n"
    "  shfl.sync.bfly.b32 %r8, %r7, 4, 31, -1;\n"
    "  add.f32 %r9, %r7, %r8;\n"
    "  shfl.sync.bfly.b32 %r10, %r9, 2, 31, -1;\n"
    "  add.f32 %r11, %r9, %r10;\n"
    "  shfl.sync.bfly.b32 %r12, %r11, 1, 31, -1;\n"
    "  add.f32 %r13, %r11, %r12;\n"
    "  shr.u32 %r14, %r2, 4;\n"
    "  mov.u32 %r15, buf;\n"
    "  mad.lo.u32 %r16, %r14, 4, %r15;\n"
    "  st.shared.b32 [%r16], %r13;\n"
    "  bar.sync 0;\n"
    "  and.b32 %r17, %r2, 15;\n"
    "  setp.ne.u32 %p2, %r17, 0;\n"
    "  @%p2 bra $END;\n"
    "  ld.shared.b32 %r18, [%r16];\n"
    "  mul.wide.u32 %rd7, %r14, 4;\n"
    "  add.s64 %rd8, %rd3, %rd7;\n"
    "  st.global.b32 [%rd8], %r18;\n"
    "$END:\n"
    "  ret;\n"
    "}\n";

Test(racecheck, replicated_sums_of_a_contracted_butterfly) {
    seed_rng();
    TileDevice *d = open_emu(true);
    TileDevModule *m;
    TileDevFunction *f = load(d, replicated_sum_ptx, "rs", &m);
    float a[32] = {0}, b[32] = {0};
    const float x = 1.0f + 1.0f / 4096.0f;
    a[0] = x, b[0] = x, a[8] = -x, b[8] = x;
    double want1 = 0, mag1 = 0;
    for (int i = 16; i < 32; i++) {
        a[i] = (float)urand(), b[i] = (float)urand();
        want1 += (double)a[i] * b[i], mag1 += fabs((double)a[i] * b[i]);
    }
    uint64_t da = upload(d, a, sizeof a), db = upload(d, b, sizeof b);
    for (uint32_t mode = 0; mode < 2; mode++) {
        uint64_t out = poisoned(d, 2 * sizeof(float));
        void *args[] = {&da, &db, &out, &mode};
        if (mode == 1) {
            expect_launch_error(d, f, 32, args, "racecheck: shared-memory hazard (write after write) at __shared__ address 0x3\n",
                                "st.shared.b32 [%r16], %r13", "by thread (8,0,0)", "conflicts with a write by thread (0,0,0)", NULL);
            continue;
        }
        cr_assert_eq(dev_launch(f, 1, 1, 1, 32, 1, 1, 0, NULL, args), DEV_OK, "%s", dev_last_error(d));
        float got[2];
        download(d, got, out, sizeof got);
        cr_assert_eq(got[0], 0.0f, "half-warp 0: %a, want 0 (seed %llu)", (double)got[0], (unsigned long long)seed);
        cr_assert(fabs(got[1] - want1) <= 1e-6 * mag1 + 1e-30, "half-warp 1: %.9g, want %.9g (seed %llu)", (double)got[1], want1,
                  (unsigned long long)seed);
    }
    dev_module_unload(m);
    dev_close(d);
}
