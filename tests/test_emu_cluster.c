/* test_emu_cluster.c - thread-block clusters on emu:sm_90a: the cluster
 * special registers, distributed shared memory (mapa, ld/st/atom on
 * .shared::cluster and generic addresses, getctarank), barrier.cluster across
 * CTAs, mbarriers signalled from another CTA (remote arrive, st.async), TMA
 * and bulk copies multicast to the CTAs of a mask, and the errors: ranks
 * outside the cluster, out-of-bounds remote accesses, cross-CTA races and
 * deadlocks, grids that are not whole clusters; 3-D clusters whose CTAs have a
 * shared-memory size that is no multiple of 8.  Cooperative launches: every
 * block resident at once.
 *
 * Every kernel is hand-written PTX from the PTX ISA's descriptions and is
 * checked by ptxas -arch=sm_90a when it is installed; expected values are
 * computed here from the kernel's arithmetic, outputs poisoned first. */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu/emu.h"
#include "include/tile/tile.h"
#include "support/target.h"
#include "test_ptxas.h"
#include "test_rng.h"

#define PTX_HEAD ".version 8.4\n.target sm_90a\n.address_size 64\n"

/* ptxas (when installed) must accept every kernel here. */
static void check_ptxas(const char *ptx) { check_ptxas_arch(ptx, "sm_90a"); }

static tile_context *open_ctx(bool racecheck) {
    tile_context *ctx;
    tile_context_options o = {.size = sizeof o, .device = "emu:sm_90a", .emu_racecheck = racecheck, .emu_host_threads = 2};
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK, "%s", tile_last_error(NULL));
    return ctx;
}

static tile_kernel *load(tile_context *ctx, const char *ptx, const char *name, tile_module **m) {
    check_ptxas(ptx);
    cr_assert_eq(tile_module_load_ptx(ctx, ptx, m), TILE_OK, "%s\n%s", tile_last_error(ctx), ptx);
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(*m, name, &k), TILE_OK, "%s", tile_last_error(ctx));
    return k;
}

static tile_devptr poisoned(tile_context *ctx, size_t n) {
    tile_devptr p;
    cr_assert_eq(tile_malloc(ctx, n, &p), TILE_OK);
    cr_assert_eq(tile_memset(ctx, p, 0xFF, n), TILE_OK);
    return p;
}

static void launch(tile_context *ctx, tile_kernel *k, tile_dim3 grid, unsigned block, void **args) {
    cr_assert_eq(tile_launch_raw(k, grid, (tile_dim3){block, 1, 1}, 0, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
}

/* The launch fails and the report has every needle (NULL-terminated). */
static void launch_fails(tile_context *ctx, tile_kernel *k, tile_dim3 grid, unsigned block, void **args, const char *const *needles) {
    cr_assert_neq(tile_launch_raw(k, grid, (tile_dim3){block, 1, 1}, 0, args, NULL), TILE_OK, "the launch succeeded");
    const char *e = tile_last_error(ctx);
    for (const char *const *n = needles; *n; n++) cr_assert(strstr(e, *n), "report lacks '%s':\n%s", *n, e);
}

/* ==== special registers ==== */

/* A 4 x 2 grid of 2 x 2 clusters, two warps per CTA: lane 0 of each warp writes the cluster registers. */
Test(cluster, special_registers) {
    static const char *ptx = PTX_HEAD
        ".visible .entry sregs(.param .u64 out)\n.reqnctapercluster 2, 2, 1\n{\n"
        " .reg .pred %p<3>;\n .reg .b32 %r<24>;\n .reg .b64 %rd<4>;\n"
        " ld.param.u64 %rd1, [out];\n mov.u32 %r1, %laneid;\n setp.ne.u32 %p1, %r1, 0;\n @%p1 bra DONE;\n"
        " mov.u32 %r2, %ctaid.x;\n mov.u32 %r3, %ctaid.y;\n"
        " mov.u32 %r4, %cluster_ctaid.x;\n mov.u32 %r5, %cluster_ctaid.y;\n"
        " mov.u32 %r6, %clusterid.x;\n mov.u32 %r7, %clusterid.y;\n"
        " mov.u32 %r8, %nclusterid.x;\n mov.u32 %r9, %nclusterid.y;\n"
        " mov.u32 %r10, %cluster_nctaid.x;\n mov.u32 %r11, %cluster_nctaid.y;\n"
        " mov.u32 %r12, %cluster_ctarank;\n mov.u32 %r13, %cluster_nctarank;\n"
        " mov.pred %p2, %is_explicit_cluster;\n selp.u32 %r14, 1, 0, %p2;\n"
        " mov.u32 %r15, %warpid;\n mov.u32 %r16, %nwarpid;\n mov.u32 %r17, %tid.x;\n"
        " mov.u32 %r18, %nctaid.x;\n mad.lo.u32 %r19, %r3, %r18, %r2;\n shr.u32 %r20, %r17, 5;\n"
        " mad.lo.u32 %r19, %r19, 2, %r20;\n mul.wide.u32 %rd2, %r19, 64;\n add.u64 %rd2, %rd1, %rd2;\n"
        " st.global.v4.u32 [%rd2], {%r2, %r3, %r4, %r5};\n st.global.v4.u32 [%rd2+16], {%r6, %r7, %r8, %r9};\n"
        " st.global.v4.u32 [%rd2+32], {%r10, %r11, %r12, %r13};\n st.global.v4.u32 [%rd2+48], {%r14, %r15, %r16, %r17};\n"
        "DONE:\n ret;\n}\n";
    tile_context *ctx = open_ctx(false);
    tile_module *m;
    tile_kernel *k = load(ctx, ptx, "sregs", &m);
    enum { GX = 4, GY = 2, W = 2 };
    tile_devptr out = poisoned(ctx, GX * GY * W * 64);
    launch(ctx, k, (tile_dim3){GX, GY, 1}, 32 * W, (void *[]){&out});
    uint32_t o[GX * GY * W][16];
    cr_assert_eq(tile_memcpy_dtoh(ctx, o, out, sizeof o), TILE_OK);
    for (unsigned y = 0; y < GY; y++)
        for (unsigned x = 0; x < GX; x++)
            for (unsigned w = 0; w < W; w++) {
                const uint32_t *v = o[(y * GX + x) * W + w];
                uint32_t want[16] = {x, y, x % 2, y % 2, x / 2, y / 2, GX / 2, GY / 2, 2, 2, (y % 2) * 2 + x % 2, 4, 1, w, W, 32 * w};
                for (unsigned i = 0; i < 16; i++)
                    cr_assert_eq(v[i], want[i], "block (%u,%u) warp %u: register %u is %u, want %u", x, y, w, i, v[i], want[i]);
            }
    tile_module_unload(m);
    tile_context_destroy(ctx);
}

/* ==== 3-D clusters, a CTA's shared memory not a multiple of 8 bytes ====
 * A 4 x 2 x 2 grid of 2 x 2 x 2 clusters with 268 bytes of shared memory (buf[256], an mbarrier, a counter): the
 * cluster registers (%cluster_ctarank x fastest, then y, then z), an atom.shared::cluster into rank 0's counter,
 * getctarank of mapa'd .shared::cluster and generic addresses, a generic ld through mapa.u64, and a bulk copy of
 * 16 bytes of buf into buf+64 of the next rank, completing on that rank's mbarrier (its .shared::cluster address
 * from mapa).  The mbarriers of ranks 1.. must be found wherever the CTAs' shared memories lie. */
static const char *cl3d_ptx = PTX_HEAD
    ".visible .entry cl3d(.param .u64 out) .reqnctapercluster 2, 2, 2\n"
    "{\n"
    ".reg .pred %p<10>;\n"
    ".reg .b32 %r<80>;\n"
    ".reg .b64 %rd<20>;\n"
    ".shared .align 16 .b8 buf[256];\n"
    ".shared .align 8 .b64 mb;\n"
    ".shared .align 4 .b32 ctr;\n"
    "mov.u32 %r60, %tid.x;\n"
    "mov.u32 %r14, %ctaid.x; mov.u32 %r15, %ctaid.y; mov.u32 %r16, %ctaid.z;\n"
    "mov.u32 %r40, %nctaid.x; mov.u32 %r41, %nctaid.y;\n"
    "mad.lo.u32 %r42, %r16, %r41, %r15; mad.lo.u32 %r42, %r42, %r40, %r14;\n"
    "ld.param.u64 %rd1, [out];\n"
    "mul.wide.u32 %rd2, %r42, 128; add.u64 %rd1, %rd1, %rd2;\n"
    "mov.u32 %r0, %cluster_ctarank; mov.u32 %r1, %cluster_nctarank;\n"
    "mov.u32 %r2, %cluster_ctaid.x; mov.u32 %r3, %cluster_ctaid.y; mov.u32 %r4, %cluster_ctaid.z;\n"
    "mov.u32 %r5, %cluster_nctaid.x; mov.u32 %r6, %cluster_nctaid.y; mov.u32 %r7, %cluster_nctaid.z;\n"
    "mov.u32 %r8, %clusterid.x; mov.u32 %r9, %clusterid.y; mov.u32 %r10, %clusterid.z;\n"
    "mov.u32 %r11, %nclusterid.x; mov.u32 %r12, %nclusterid.y; mov.u32 %r13, %nclusterid.z;\n"
    "setp.ne.u32 %p1, %r60, 0;\n"
    "@%p1 bra SKIP;\n"
    "st.global.u32 [%rd1+0], %r0; st.global.u32 [%rd1+4], %r1; st.global.u32 [%rd1+8], %r2; st.global.u32 [%rd1+12], %r3;\n"
    "st.global.u32 [%rd1+16], %r4; st.global.u32 [%rd1+20], %r5; st.global.u32 [%rd1+24], %r6; st.global.u32 [%rd1+28], %r7;\n"
    "st.global.u32 [%rd1+32], %r8; st.global.u32 [%rd1+36], %r9; st.global.u32 [%rd1+40], %r10; st.global.u32 [%rd1+44], %r11;\n"
    "st.global.u32 [%rd1+48], %r12; st.global.u32 [%rd1+52], %r13; st.global.u32 [%rd1+56], %r14; st.global.u32 [%rd1+60], %r15;\n"
    "st.global.u32 [%rd1+64], %r16;\n"
    "mov.u32 %r20, mb;\n"
    "mbarrier.init.shared::cta.b64 [%r20], 1;\n"
    "mov.u32 %r21, 0; st.shared.u32 [ctr], %r21;\n"
    "mov.u32 %r22, buf;\n"
    "mul.lo.u32 %r23, %r0, 100;\n"
    "st.shared.u32 [%r22], %r23; add.u32 %r24, %r23, 1; st.shared.u32 [%r22+4], %r24;\n"
    "add.u32 %r24, %r23, 2; st.shared.u32 [%r22+8], %r24; add.u32 %r24, %r23, 3; st.shared.u32 [%r22+12], %r24;\n"
    "fence.mbarrier_init.release.cluster;\n"
    "fence.proxy.async.shared::cta;\n"
    "SKIP:\n"
    "barrier.cluster.arrive.release.aligned;\n"
    "barrier.cluster.wait.acquire.aligned;\n"
    "@%p1 bra SKIP2;\n"
    "mov.u32 %r25, ctr;\n"
    "mapa.shared::cluster.u32 %r26, %r25, 0;\n"
    "add.u32 %r27, %r0, 1;\n"
    "atom.shared::cluster.add.u32 %r28, [%r26], %r27;\n"
    "add.u32 %r29, %r0, 3; and.b32 %r29, %r29, 7;\n"
    "mapa.shared::cluster.u32 %r30, %r22, %r29;\n"
    "getctarank.shared::cluster.u32 %r31, %r30;\n"
    "st.global.u32 [%rd1+72], %r31;\n"
    "cvta.shared.u64 %rd5, buf;\n"
    "mapa.u64 %rd6, %rd5, %r29;\n"
    "getctarank.u64 %r32, %rd6;\n"
    "st.global.u32 [%rd1+76], %r32;\n"
    "ld.u32 %r33, [%rd6];\n"
    "st.global.u32 [%rd1+80], %r33;\n"
    "mbarrier.arrive.expect_tx.shared::cta.b64 %rd7, [%r20], 16;\n"
    "add.u32 %r34, %r0, 1; and.b32 %r34, %r34, 7;\n"
    "mapa.shared::cluster.u32 %r35, %r22, %r34;\n"
    "add.u32 %r35, %r35, 64;\n"
    "mapa.shared::cluster.u32 %r36, %r20, %r34;\n"
    "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r35], [%r22], 16, [%r36];\n"
    "WAIT:\n"
    "mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r20], 0;\n"
    "@!%p2 bra WAIT;\n"
    "ld.shared.u32 %r37, [%r22+64]; st.global.u32 [%rd1+84], %r37;\n"
    "ld.shared.u32 %r37, [%r22+68]; st.global.u32 [%rd1+88], %r37;\n"
    "ld.shared.u32 %r37, [%r22+76]; st.global.u32 [%rd1+92], %r37;\n"
    "SKIP2:\n"
    "barrier.cluster.arrive.relaxed.aligned;\n"
    "barrier.cluster.wait.aligned;\n"
    "@%p1 bra END;\n"
    "mov.u32 %r25, ctr;\n"
    "mapa.shared::cluster.u32 %r26, %r25, 0;\n"
    "ld.shared::cluster.u32 %r38, [%r26];\n"
    "st.global.u32 [%rd1+68], %r38;\n"
    "END:\n"
    "barrier.cluster.arrive.aligned;\n"
    "barrier.cluster.wait.aligned;\n"
    "ret;\n"
    "}\n";

Test(cluster, three_d_clusters_odd_shared_size) {
    for (int rc = 0; rc < 2; rc++) {
        tile_context *ctx = open_ctx(rc);
        tile_module *m;
        tile_kernel *k = load(ctx, cl3d_ptx, "cl3d", &m);
        enum { GX = 4, GY = 2, GZ = 2 };
        tile_devptr out = poisoned(ctx, GX * GY * GZ * 128);
        launch(ctx, k, (tile_dim3){GX, GY, GZ}, 32, (void *[]){&out});
        uint32_t o[GX * GY * GZ][32];
        cr_assert_eq(tile_memcpy_dtoh(ctx, o, out, sizeof o), TILE_OK);
        for (unsigned z = 0; z < GZ; z++)
            for (unsigned y = 0; y < GY; y++)
                for (unsigned x = 0; x < GX; x++) {
                    const uint32_t *v = o[(z * GY + y) * GX + x];
                    uint32_t r = x % 2 + 2 * (y % 2) + 4 * (z % 2), r3 = (r + 3) % 8, rp = (r + 7) % 8;
                    uint32_t want[24] = {r, 8, x % 2, y % 2, z % 2, 2, 2, 2, x / 2, y / 2, z / 2, GX / 2, 1, 1, x, y, z,
                                         36, r3, r3, r3 * 100, rp * 100, rp * 100 + 1, rp * 100 + 3};
                    for (unsigned i = 0; i < 24; i++)
                        cr_assert_eq(v[i], want[i], "racecheck %d, block (%u,%u,%u): word %u is %u, want %u", rc, x, y, z, i, v[i], want[i]);
                }
        tile_module_unload(m);
        tile_context_destroy(ctx);
    }
}

/* ==== a store into another CTA's shared memory that a bulk copy then overwrites ====
 * Clusters of 2: rank 0 stores 7 into buf[0] of rank 1 (st.shared::cluster), then raises a flag in global memory
 * (st.volatile: no synchronisation); rank 1 waits for the flag and then bulk-copies 16 bytes from global memory
 * into its buf, completing on its mbarrier.  Nothing orders the store before the copy, so on a GPU either may land
 * last (the race of a multicast copy into memory another CTA has reused): racecheck reports it.  With
 * barrier.cluster between the store and the copy instead of the flag, the copy's bytes are what rank 1 reads. */
static const char *remote_store_ptx = PTX_HEAD
    ".visible .entry rs(.param .u64 src, .param .u64 flag, .param .u64 out, .param .u32 sync)\n.reqnctapercluster 2, 1, 1\n{\n"
    " .reg .pred %p<6>;\n .reg .b32 %r<16>;\n .reg .b64 %rd<8>;\n"
    " .shared .align 16 .b8 buf[32];\n .shared .align 8 .b64 mb;\n"
    " ld.param.u64 %rd1, [src];\n ld.param.u64 %rd2, [flag];\n ld.param.u64 %rd3, [out];\n ld.param.u32 %r9, [sync];\n"
    " mov.u32 %r0, %tid.x;\n mov.u32 %r1, %cluster_ctarank;\n mov.u32 %r2, mb;\n mov.u32 %r3, buf;\n"
    " setp.eq.u32 %p1, %r0, 0;\n setp.ne.u32 %p5, %r9, 0;\n"
    " @%p1 mbarrier.init.shared::cta.b64 [%r2], 1;\n fence.mbarrier_init.release.cluster;\n"
    " barrier.cluster.arrive.release.aligned;\n barrier.cluster.wait.acquire.aligned;\n"
    " setp.eq.u32 %p2, %r1, 0;\n and.pred %p3, %p1, %p2;\n"
    " @%p3 mapa.shared::cluster.u32 %r4, %r3, 1;\n mov.u32 %r5, 7;\n @%p3 st.shared::cluster.u32 [%r4], %r5;\n"
    " mov.u32 %r6, 1;\n @%p3 st.volatile.global.u32 [%rd2], %r6;\n"
    " @%p5 barrier.cluster.arrive.release.aligned;\n @%p5 barrier.cluster.wait.acquire.aligned;\n"
    " @%p2 bra END;\n @!%p1 bra END;\n"
    "SPIN:\n ld.volatile.global.u32 %r7, [%rd2];\n setp.eq.u32 %p4, %r7, 0;\n @%p4 bra SPIN;\n"
    " mbarrier.arrive.expect_tx.shared::cta.b64 %rd4, [%r2], 16;\n"
    " cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd1], 16, [%r2];\n"
    "WAIT:\n mbarrier.try_wait.parity.shared::cta.b64 %p4, [%r2], 0;\n @!%p4 bra WAIT;\n"
    " ld.shared.u32 %r8, [%r3];\n st.global.u32 [%rd3], %r8;\n"
    "END:\n barrier.cluster.arrive.release.aligned;\n barrier.cluster.wait.acquire.aligned;\n ret;\n}\n";

Test(cluster, remote_store_overwritten_by_a_bulk_copy) {
    for (uint32_t sync = 0; sync < 2; sync++) {
        tile_context *ctx = open_ctx(true);
        tile_module *m;
        tile_kernel *k = load(ctx, remote_store_ptx, "rs", &m);
        uint32_t src[4] = {0x1234, 5, 6, 7}, zero = 0, got = 0;
        tile_devptr dsrc, dflag, dout = poisoned(ctx, 4);
        cr_assert_eq(tile_malloc(ctx, sizeof src, &dsrc), TILE_OK);
        cr_assert_eq(tile_memcpy_htod(ctx, dsrc, src, sizeof src), TILE_OK);
        cr_assert_eq(tile_malloc(ctx, 4, &dflag), TILE_OK);
        cr_assert_eq(tile_memcpy_htod(ctx, dflag, &zero, 4), TILE_OK);
        void *args[] = {&dsrc, &dflag, &dout, &sync};
        if (!sync) {
            launch_fails(ctx, k, (tile_dim3){2, 1, 1}, 32, args,
                         (const char *const[]){"a bulk copy overwrites shared memory written through the generic proxy",
                                               "st.shared::cluster.u32", "of block (0,0,0)", NULL});
        } else {
            launch(ctx, k, (tile_dim3){2, 1, 1}, 32, args);
            cr_assert_eq(tile_memcpy_dtoh(ctx, &got, dout, 4), TILE_OK);
            cr_assert_eq(got, 0x1234u, "rank 1 reads 0x%x, want the copy's 0x1234", got);
        }
        tile_module_unload(m);
        tile_context_destroy(ctx);
    }
}

/* ==== distributed shared memory ==== */

/* Clusters of 4 CTAs of 64 threads.  Each CTA fills arr[] with ctaid*1000+tid; after barrier.cluster each
 * thread reads arr[63-tid] of rank+1 (mapa.shared::cluster + ld.shared::cluster) and arr[tid] of rank+2
 * (a generic address from mapa.u64), asks getctarank where the first lives, stores ctaid*7+tid into
 * inbox[tid] of rank+3 (st.shared::cluster) and adds ctaid+1 to rank 0's counter (atom.shared::cluster).
 * After a second barrier.cluster it reads its own inbox. */
static const char *dsmem_ptx = PTX_HEAD
    ".visible .entry dsmem(.param .u64 out, .param .u64 sums)\n.reqnctapercluster 4, 1, 1\n{\n"
    " .reg .pred %p<3>;\n .reg .b32 %r<32>;\n .reg .b64 %rd<10>;\n"
    " .shared .align 4 .b32 arr[64];\n .shared .align 4 .b32 inbox[64];\n .shared .align 4 .b32 cnt;\n"
    " ld.param.u64 %rd1, [out];\n ld.param.u64 %rd2, [sums];\n"
    " mov.u32 %r1, %tid.x;\n mov.u32 %r2, %ctaid.x;\n mov.u32 %r3, %cluster_ctarank;\n"
    " mad.lo.u32 %r4, %r2, 1000, %r1;\n mov.u32 %r5, arr;\n shl.b32 %r6, %r1, 2;\n add.u32 %r7, %r5, %r6;\n"
    " st.shared.u32 [%r7], %r4;\n setp.eq.u32 %p1, %r1, 0;\n @%p1 st.shared.u32 [cnt], 0;\n"
    " barrier.cluster.arrive.release.aligned;\n barrier.cluster.wait.acquire.aligned;\n"
    /* rank+1: arr[63-tid] */
    " add.u32 %r8, %r3, 1;\n and.b32 %r8, %r8, 3;\n sub.u32 %r9, 63, %r1;\n shl.b32 %r9, %r9, 2;\n add.u32 %r10, %r5, %r9;\n"
    " mapa.shared::cluster.u32 %r11, %r10, %r8;\n ld.shared::cluster.u32 %r12, [%r11];\n"
    /* rank+2 through a generic address */
    " add.u32 %r13, %r3, 2;\n and.b32 %r13, %r13, 3;\n mov.u64 %rd3, arr;\n cvta.shared.u64 %rd3, %rd3;\n"
    " cvt.u64.u32 %rd4, %r6;\n add.u64 %rd3, %rd3, %rd4;\n mapa.u64 %rd5, %rd3, %r13;\n ld.u32 %r14, [%rd5];\n"
    " getctarank.shared::cluster.u32 %r15, %r11;\n"
    /* rank+3's inbox */
    " add.u32 %r16, %r3, 3;\n and.b32 %r16, %r16, 3;\n mov.u32 %r17, inbox;\n add.u32 %r17, %r17, %r6;\n"
    " mapa.shared::cluster.u32 %r18, %r17, %r16;\n mad.lo.u32 %r19, %r2, 7, %r1;\n st.shared::cluster.u32 [%r18], %r19;\n"
    /* rank 0's counter */
    " mov.u32 %r20, cnt;\n mapa.shared::cluster.u32 %r21, %r20, 0;\n add.u32 %r22, %r2, 1;\n"
    " atom.shared::cluster.add.u32 %r23, [%r21], %r22;\n"
    " barrier.cluster.arrive.release.aligned;\n barrier.cluster.wait.acquire.aligned;\n"
    " ld.shared.u32 %r24, [%r17];\n"
    " mad.lo.u32 %r25, %r2, 64, %r1;\n mul.wide.u32 %rd6, %r25, 16;\n add.u64 %rd6, %rd1, %rd6;\n"
    " st.global.v4.u32 [%rd6], {%r12, %r14, %r15, %r24};\n"
    " setp.eq.u32 %p2, %r3, 0;\n and.pred %p2, %p2, %p1;\n @!%p2 bra DONE;\n"
    " ld.shared.u32 %r26, [cnt];\n mov.u32 %r27, %clusterid.x;\n mul.wide.u32 %rd7, %r27, 4;\n add.u64 %rd7, %rd2, %rd7;\n"
    " st.global.u32 [%rd7], %r26;\n"
    "DONE:\n ret;\n}\n";

static void run_dsmem(bool racecheck) {
    tile_context *ctx = open_ctx(racecheck);
    tile_module *m;
    tile_kernel *k = load(ctx, dsmem_ptx, "dsmem", &m);
    enum { G = 12, B = 64, C = 4 };
    tile_devptr out = poisoned(ctx, G * B * 16), sums = poisoned(ctx, G / C * 4);
    launch(ctx, k, (tile_dim3){G, 1, 1}, B, (void *[]){&out, &sums});
    static uint32_t o[G * B][4];
    uint32_t s[G / C];
    cr_assert_eq(tile_memcpy_dtoh(ctx, o, out, sizeof o), TILE_OK);
    cr_assert_eq(tile_memcpy_dtoh(ctx, s, sums, sizeof s), TILE_OK);
    for (unsigned c = 0; c < G; c++) {
        unsigned base = c / C * C, r = c % C;
        for (unsigned t = 0; t < B; t++) {
            const uint32_t *v = o[c * B + t];
            uint32_t want[4] = {(base + (r + 1) % C) * 1000 + (63 - t), (base + (r + 2) % C) * 1000 + t, (r + 1) % C,
                                (base + (r + 1) % C) * 7 + t};
            for (unsigned i = 0; i < 4; i++)
                cr_assert_eq(v[i], want[i], "block %u thread %u: value %u is %u, want %u", c, t, i, v[i], want[i]);
        }
    }
    for (unsigned q = 0; q < G / C; q++) {
        uint32_t want = 0;
        for (unsigned c = q * C; c < q * C + C; c++) want += B * (c + 1);
        cr_assert_eq(s[q], want, "cluster %u: counter %u, want %u", q, s[q], want);
    }
    tile_module_unload(m);
    tile_context_destroy(ctx);
}

Test(cluster, distributed_shared_memory) { run_dsmem(false); }
/* the cluster barriers order every access: racecheck finds nothing */
Test(cluster, distributed_shared_memory_racecheck) { run_dsmem(true); }

/* ==== mbarriers across CTAs ==== */

/* Clusters of 2.  Rank 1's threads st.async ctaid*100+tid into rank 0's data[], completing tx bytes on rank 0's
 * mbarrier; rank 0 waits for it (arrive.expect_tx of 256 bytes), writes value+1 into rank 1's data[] and
 * signals rank 1's mbarrier with a remote arrive (mbarrier.arrive.shared::cluster), which rank 1 waits on. */
static const char *remote_mbar_ptx = PTX_HEAD
    ".visible .entry xbar(.param .u64 out)\n.reqnctapercluster 2, 1, 1\n{\n"
    " .reg .pred %p<5>;\n .reg .b32 %r<24>;\n .reg .b64 %rd<6>;\n"
    " .shared .align 8 .b64 bar;\n .shared .align 4 .b32 data[64];\n"
    " ld.param.u64 %rd1, [out];\n mov.u32 %r1, %tid.x;\n mov.u32 %r2, %ctaid.x;\n mov.u32 %r3, %cluster_ctarank;\n"
    " setp.eq.u32 %p1, %r1, 0;\n mov.u32 %r5, bar;\n"
    " @%p1 mbarrier.init.shared::cta.b64 [%r5], 1;\n fence.mbarrier_init.release.cluster;\n"
    " barrier.cluster.arrive.release.aligned;\n barrier.cluster.wait.acquire.aligned;\n"
    " mov.u32 %r6, data;\n shl.b32 %r7, %r1, 2;\n add.u32 %r7, %r6, %r7;\n"
    " setp.eq.u32 %p2, %r3, 0;\n @%p2 bra RANK0;\n"
    " mapa.shared::cluster.u32 %r8, %r7, 0;\n mapa.shared::cluster.u32 %r9, %r5, 0;\n mad.lo.u32 %r10, %r2, 100, %r1;\n"
    " st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%r8], %r10, [%r9];\n"
    "WAIT1:\n mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r5], 0;\n @!%p3 bra WAIT1;\n"
    " ld.shared.u32 %r11, [%r7];\n bra OUT;\n"
    "RANK0:\n @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r5], 256;\n"
    "WAIT0:\n mbarrier.try_wait.parity.shared::cta.b64 %p4, [%r5], 0;\n @!%p4 bra WAIT0;\n"
    " ld.shared.u32 %r11, [%r7];\n mapa.shared::cluster.u32 %r8, %r7, 1;\n add.u32 %r12, %r11, 1;\n"
    " st.shared::cluster.u32 [%r8], %r12;\n bar.sync 0;\n mapa.shared::cluster.u32 %r9, %r5, 1;\n"
    " @%p1 mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r9];\n"
    "OUT:\n mad.lo.u32 %r13, %r2, 64, %r1;\n mul.wide.u32 %rd2, %r13, 4;\n add.u64 %rd2, %rd1, %rd2;\n"
    " st.global.u32 [%rd2], %r11;\n"
    " barrier.cluster.arrive.release.aligned;\n barrier.cluster.wait.acquire.aligned;\n ret;\n}\n";

Test(cluster, remote_mbarrier_and_st_async) {
    for (int rc = 0; rc < 2; rc++) {
        tile_context *ctx = open_ctx(rc);
        tile_module *m;
        tile_kernel *k = load(ctx, remote_mbar_ptx, "xbar", &m);
        enum { G = 6, B = 64 };
        tile_devptr out = poisoned(ctx, G * B * 4);
        launch(ctx, k, (tile_dim3){G, 1, 1}, B, (void *[]){&out});
        uint32_t o[G * B];
        cr_assert_eq(tile_memcpy_dtoh(ctx, o, out, sizeof o), TILE_OK);
        for (unsigned c = 0; c < G; c++)
            for (unsigned t = 0; t < B; t++) {
                uint32_t want = (c | 1) * 100 + t + (c & 1);
                cr_assert_eq(o[c * B + t], want, "racecheck %d, block %u thread %u: %u, want %u", rc, c, t, o[c * B + t], want);
            }
        tile_module_unload(m);
        tile_context_destroy(ctx);
    }
}

/* Clusters of 2 of 64 threads, as nvcc writes cuda::ptx::red_async: every thread red.async-adds (t+1) << 32 | ctaid
 * (.u64) and t (.u32) into the one counter pair of the other CTA, completing 12 bytes each on its mbarrier.
 * The reductions are relaxed atomics: racecheck reports no hazard between them (it did: "write after write"). */
static const char *red_async_ptx = PTX_HEAD
    ".visible .entry racc(.param .u64 out)\n.reqnctapercluster 2, 1, 1\n{\n"
    " .reg .pred %p<4>;\n .reg .b32 %r<20>;\n .reg .b64 %rd<8>;\n"
    " .shared .align 8 .b64 acc;\n .shared .align 4 .b32 acc32;\n .shared .align 8 .b64 bar;\n"
    " ld.param.u64 %rd1, [out];\n mov.u32 %r1, %tid.x;\n mov.u32 %r2, %ctaid.x;\n mov.u32 %r3, %cluster_ctarank;\n"
    " setp.eq.u32 %p1, %r1, 0;\n mov.u32 %r4, bar;\n mov.u32 %r5, acc;\n mov.u32 %r6, acc32;\n"
    " @%p1 st.shared.u64 [%r5], 0;\n @%p1 st.shared.u32 [%r6], 0;\n"
    " @%p1 mbarrier.init.shared::cta.b64 [%r4], 1;\n fence.mbarrier_init.release.cluster;\n"
    " barrier.cluster.arrive.release.aligned;\n barrier.cluster.wait.acquire.aligned;\n"
    " @%p1 mbarrier.arrive.expect_tx.release.cluster.shared::cta.b64 _, [%r4], 768;\n"
    " barrier.cluster.arrive.release.aligned;\n barrier.cluster.wait.acquire.aligned;\n"
    " xor.b32 %r7, %r3, 1;\n mapa.shared::cluster.u32 %r8, %r5, %r7;\n mapa.shared::cluster.u32 %r9, %r6, %r7;\n"
    " mapa.shared::cluster.u32 %r10, %r4, %r7;\n"
    " add.s32 %r11, %r1, 1;\n cvt.u64.u32 %rd2, %r11;\n shl.b64 %rd2, %rd2, 32;\n cvt.u64.u32 %rd3, %r2;\n or.b64 %rd2, %rd2, %rd3;\n"
    " red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u64 [%r8], %rd2, [%r10];\n"
    " red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%r9], %r1, [%r10];\n"
    "WAIT:\n mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 %p2, [%r4], 0;\n @!%p2 bra WAIT;\n"
    " @!%p1 bra DONE;\n ld.shared.u64 %rd4, [%r5];\n ld.shared.u32 %r12, [%r6];\n"
    " mul.wide.u32 %rd5, %r2, 16;\n add.u64 %rd5, %rd1, %rd5;\n st.global.u64 [%rd5], %rd4;\n st.global.u32 [%rd5+8], %r12;\n"
    "DONE:\n barrier.cluster.arrive.release.aligned;\n barrier.cluster.wait.acquire.aligned;\n ret;\n}\n";

Test(cluster, red_async_from_every_thread) {
    for (int rc = 0; rc < 2; rc++) {
        tile_context *ctx = open_ctx(rc);
        tile_module *m;
        tile_kernel *k = load(ctx, red_async_ptx, "racc", &m);
        enum { G = 6, B = 64 };
        tile_devptr out = poisoned(ctx, G * 16);
        launch(ctx, k, (tile_dim3){G, 1, 1}, B, (void *[]){&out});
        uint64_t o[2 * G];
        cr_assert_eq(tile_memcpy_dtoh(ctx, o, out, sizeof o), TILE_OK);
        for (unsigned c = 0; c < G; c++) {
            uint64_t want = ((uint64_t)B * (B + 1) / 2 << 32) + (uint64_t)B * (c ^ 1);
            cr_assert_eq(o[2 * c], want, "racecheck %d, block %u: %#llx, want %#llx", rc, c, (unsigned long long)o[2 * c],
                         (unsigned long long)want);
            cr_assert_eq((uint32_t)o[2 * c + 1], B * (B - 1) / 2, "racecheck %d, block %u: u32 sum %u", rc, c, (uint32_t)o[2 * c + 1]);
        }
        tile_module_unload(m);
        tile_context_destroy(ctx);
    }
}

/* ==== multicast ==== */

/* Clusters of 2 CTAs of 32 threads.  Rank 0 multicasts a 32 x 8 f32 box of a 40 x 20 matrix at (16, 8*cluster+6)
 * (running off the right and, for cluster 1, the bottom edge) to both CTAs (ctaMask 3), and 256 bytes of src
 * to rank 1 alone (ctaMask 2); each CTA expects the bytes meant for it on its own mbarrier.  Rank 0 filled its
 * raw[] first: the bulk copy must leave it alone. */
static const char *multicast_ptx = PTX_HEAD
    ".visible .entry mc(.param .align 64 .b8 tmap[128], .param .u64 src, .param .u64 out)\n.reqnctapercluster 2, 1, 1\n{\n"
    " .reg .pred %p<5>;\n .reg .b16 %rs<4>;\n .reg .b32 %r<32>;\n .reg .b64 %rd<12>;\n"
    " .shared .align 128 .b8 tile[1024];\n .shared .align 16 .b8 raw[256];\n .shared .align 8 .b64 bar;\n"
    " ld.param.u64 %rd1, [src];\n ld.param.u64 %rd2, [out];\n mov.u64 %rd3, tmap;\n"
    " mov.u32 %r1, %tid.x;\n mov.u32 %r2, %ctaid.x;\n mov.u32 %r3, %cluster_ctarank;\n mov.u32 %r4, %clusterid.x;\n"
    " setp.eq.u32 %p1, %r1, 0;\n setp.eq.u32 %p2, %r3, 0;\n mov.u32 %r5, bar;\n mov.u32 %r6, tile;\n mov.u32 %r7, raw;\n"
    " shl.b32 %r8, %r1, 3;\n add.u32 %r9, %r7, %r8;\n"
    " @%p2 st.shared.v2.u32 [%r9], {%r2, %r1};\n"
    " @%p1 mbarrier.init.shared::cta.b64 [%r5], 1;\n fence.mbarrier_init.release.cluster;\n"
    " barrier.cluster.arrive.release.aligned;\n barrier.cluster.wait.acquire.aligned;\n"
    " selp.u32 %r10, 1024, 1280, %p2;\n @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r5], %r10;\n"
    " and.pred %p3, %p1, %p2;\n @!%p3 bra WAIT;\n"
    " mov.u32 %r11, 16;\n mad.lo.u32 %r12, %r4, 8, 6;\n mov.u16 %rs1, 3;\n"
    " cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%r6], [%rd3, {%r11, %r12}], [%r5], %rs1;\n"
    " mul.wide.u32 %rd4, %r4, 256;\n add.u64 %rd4, %rd1, %rd4;\n mov.u16 %rs2, 2;\n"
    " cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r7], [%rd4], 256, [%r5], %rs2;\n"
    "WAIT:\n mbarrier.try_wait.parity.shared::cta.b64 %p4, [%r5], 0;\n @!%p4 bra WAIT;\n"
    /* out[block] = tile (1024 bytes) then raw (256) */
    " mul.wide.u32 %rd5, %r2, 1280;\n add.u64 %rd5, %rd2, %rd5;\n mov.u32 %r13, 0;\n"
    "COPY:\n shl.b32 %r14, %r13, 5;\n add.u32 %r14, %r14, %r1;\n shl.b32 %r15, %r14, 2;\n add.u32 %r16, %r6, %r15;\n"
    " ld.shared.u32 %r17, [%r16];\n cvt.u64.u32 %rd6, %r15;\n add.u64 %rd7, %rd5, %rd6;\n st.global.u32 [%rd7], %r17;\n"
    " add.u32 %r13, %r13, 1;\n setp.lt.u32 %p4, %r13, 8;\n @%p4 bra COPY;\n"
    " ld.shared.v2.u32 {%r18, %r19}, [%r9];\n cvt.u64.u32 %rd8, %r8;\n add.u64 %rd9, %rd5, %rd8;\n"
    " st.global.v2.u32 [%rd9+1024], {%r18, %r19};\n"
    " barrier.cluster.arrive.release.aligned;\n barrier.cluster.wait.acquire.aligned;\n ret;\n}\n";

Test(cluster, tma_and_bulk_multicast) {
    seed_rng();
    enum { X = 40, Y = 20, G = 4 };
    tile_context *ctx = open_ctx(true);
    tile_module *m;
    tile_kernel *k = load(ctx, multicast_ptx, "mc", &m);
    float a[Y * X];
    for (unsigned i = 0; i < Y * X; i++) a[i] = (float)(irand(2001) - 1000) / 8;
    uint32_t src[G / 2 * 64];
    for (unsigned i = 0; i < G / 2 * 64; i++) src[i] = (uint32_t)irand(1 << 30);
    tile_devptr da, ds;
    cr_assert_eq(tile_malloc(ctx, sizeof a, &da), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof src, &ds), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, da, a, sizeof a), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, ds, src, sizeof src), TILE_OK);
    tile_devptr out = poisoned(ctx, G * 1280);
    _Alignas(64) uint8_t map[128];
    uint64_t dims[2] = {X, Y}, strides[1] = {X * 4};
    cr_assert_eq(tile_tensor_map_encode(ctx, map, TILE_F32, 2, da, dims, strides, (uint32_t[]){32, 8}, NULL, TILE_SWIZZLE_NONE), TILE_OK,
                 "%s", tile_last_error(ctx));
    launch(ctx, k, (tile_dim3){G, 1, 1}, 32, (void *[]){map, &ds, &out});
    static uint8_t o[G * 1280];
    cr_assert_eq(tile_memcpy_dtoh(ctx, o, out, sizeof o), TILE_OK);
    for (unsigned c = 0; c < G; c++) {
        unsigned cl = c / 2, y0 = cl * 8 + 6;
        for (unsigned r = 0; r < 8; r++)
            for (unsigned x = 0; x < 32; x++) {
                float got, want = (16 + x < X && y0 + r < Y) ? a[(y0 + r) * X + 16 + x] : 0.0f;
                memcpy(&got, o + c * 1280 + (r * 32 + x) * 4, 4);
                cr_assert_eq(got, want, "block %u: tile[%u][%u] = %g, want %g", c, r, x, got, want);
            }
        for (unsigned t = 0; t < 32; t++) {
            uint32_t v[2];
            memcpy(v, o + c * 1280 + 1024 + t * 8, 8);
            uint32_t w0 = c & 1 ? src[cl * 64 + 2 * t] : c, w1 = c & 1 ? src[cl * 64 + 2 * t + 1] : t;
            cr_assert(v[0] == w0 && v[1] == w1, "block %u: raw[%u] = %u %u, want %u %u", c, t, v[0], v[1], w0, w1);
        }
    }
    tile_module_unload(m);
    tile_context_destroy(ctx);
}

/* ==== errors ==== */

static const char *errors_ptx = PTX_HEAD
    /* mapa to a rank the cluster does not have */
    ".visible .entry bad_rank()\n.reqnctapercluster 2, 1, 1\n{\n .reg .b32 %r<4>;\n .shared .align 4 .b32 s[4];\n"
    " mov.u32 %r1, s;\n mov.u32 %r2, 2;\n mapa.shared::cluster.u32 %r3, %r1, %r2;\n ld.shared::cluster.u32 %r3, [%r3];\n ret;\n}\n"
    /* past the end of the other CTA's shared memory */
    ".visible .entry remote_oob()\n.reqnctapercluster 2, 1, 1\n{\n .reg .b32 %r<4>;\n .shared .align 4 .b32 s[4];\n"
    " mov.u32 %r1, s;\n add.u32 %r1, %r1, 64;\n mapa.shared::cluster.u32 %r2, %r1, 1;\n ld.shared::cluster.u32 %r3, [%r2];\n ret;\n}\n"
    /* rank 1 writes rank 0's word while rank 0 reads it, nothing between */
    ".visible .entry race()\n.reqnctapercluster 2, 1, 1\n{\n .reg .pred %p<2>;\n .reg .b32 %r<5>;\n .shared .align 4 .b32 s[4];\n"
    " mov.u32 %r1, %cluster_ctarank;\n setp.eq.u32 %p1, %r1, 0;\n mov.u32 %r2, s;\n"
    " @%p1 ld.shared.u32 %r3, [%r2];\n mapa.shared::cluster.u32 %r4, %r2, 0;\n @!%p1 st.shared::cluster.u32 [%r4], %r1;\n"
    " barrier.cluster.arrive.aligned;\n barrier.cluster.wait.aligned;\n ret;\n}\n"
    /* rank 0 waits at the cluster barrier, rank 1 on an mbarrier nobody completes */
    ".visible .entry stuck()\n.reqnctapercluster 2, 1, 1\n{\n .reg .pred %p<3>;\n .reg .b32 %r<4>;\n .shared .align 8 .b64 bar;\n"
    " mov.u32 %r1, %cluster_ctarank;\n setp.eq.u32 %p1, %r1, 0;\n mov.u32 %r2, bar;\n @%p1 bra R0;\n"
    " mbarrier.init.shared::cta.b64 [%r2], 1;\nW:\n mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;\n @!%p2 bra W;\n"
    "R0:\n barrier.cluster.arrive.aligned;\n barrier.cluster.wait.aligned;\n ret;\n}\n";

Test(cluster, errors) {
    tile_context *ctx = open_ctx(true);
    tile_module *m;
    tile_kernel *k = load(ctx, errors_ptx, "bad_rank", &m);
    launch_fails(ctx, k, (tile_dim3){2, 1, 1}, 32, NULL, (const char *[]){"invalid cluster rank", "rank 2", "the cluster has 2 CTAs", NULL});
    launch_fails(ctx, k, (tile_dim3){3, 1, 1}, 32, NULL, (const char *[]){"grid (3,1,1) is not a whole number of (2,1,1) clusters", NULL});
    cr_assert_eq(tile_module_get_kernel(m, "remote_oob", &k), TILE_OK);
    launch_fails(ctx, k, (tile_dim3){2, 1, 1}, 32, NULL,
                 (const char *[]){"memcheck: invalid __shared__ read of size 4",
                                  /* its own 16 bytes: the module's other kernels' arrays are not in its blocks */
                                  "offset 0x40 in the shared memory of cluster CTA rank 1, which has 16 bytes (16 static", NULL});
    cr_assert_eq(tile_module_get_kernel(m, "race", &k), TILE_OK);
    launch_fails(ctx, k, (tile_dim3){2, 1, 1}, 1, NULL,
                 (const char *[]){"racecheck: shared-memory hazard (write after read)", "of the cluster's CTA rank 0",
                                  "read by thread (0,0,0) of block (0,0,0)", "in block (1,0,0) (rank 1 of a cluster of 2)", NULL});
    cr_assert_eq(tile_module_get_kernel(m, "stuck", &k), TILE_OK);
    launch_fails(ctx, k, (tile_dim3){2, 1, 1}, 32, NULL,
                 (const char *[]){"deadlock: no thread of the cluster can proceed", "in block (0,0,0)) waiting at the cluster barrier",
                                  "in block (1,0,0)) waiting for an mbarrier phase", NULL});
    tile_module_unload(m);
    tile_context_destroy(ctx);
}

/* Distributed shared memory of a CTA that has exited: rank 1 stores 107 into s and exits after the first cluster
 * barrier; rank 0's thread 0 spins past the scheduling quantum (so rank 1 has ended) and then reaches rank 1's
 * shared memory, which is gone on a GPU: mode 0 ld.shared::cluster, 1 st.async, 2 a remote mbarrier arrive, 3
 * atom.shared::cluster, each reported with the rank.  Mode 4, the correct twin: both CTAs wait at a second
 * cluster barrier before exiting, so the load reads 107 (it was not reported: nothing was reported at all). */
static const char *exited_ptx = PTX_HEAD
    ".visible .entry gone(.param .u64 out, .param .u32 mode)\n.reqnctapercluster 2, 1, 1\n{\n"
    " .reg .pred %p<8>;\n .reg .b32 %r<16>;\n .reg .b64 %rd<4>;\n .shared .align 8 .b64 mb;\n .shared .align 16 .b32 s[4];\n"
    " ld.param.u64 %rd1, [out];\n ld.param.u32 %r1, [mode];\n mov.u32 %r2, %cluster_ctarank;\n mov.u32 %r3, %tid.x;\n"
    " setp.eq.u32 %p5, %r3, 0;\n mad.lo.u32 %r10, %r2, 100, 7;\n @%p5 st.shared.u32 [s], %r10;\n"
    " @%p5 mbarrier.init.shared::cta.b64 [mb], 2;\n fence.mbarrier_init.release.cluster;\n"
    " barrier.cluster.arrive.release.aligned;\n barrier.cluster.wait.acquire.aligned;\n"
    " setp.eq.u32 %p4, %r1, 4;\n setp.ne.u32 %p1, %r2, 0;\n setp.ne.u32 %p6, %r3, 0;\n or.pred %p1, %p1, %p6;\n @%p1 bra TAIL;\n"
    " mov.u32 %r4, 0;\nSPIN:\n add.u32 %r4, %r4, 1;\n setp.lt.u32 %p2, %r4, 20000;\n @%p2 bra SPIN;\n"
    " mov.u32 %r5, mb;\n mapa.shared::cluster.u32 %r6, %r5, 1;\n mov.u32 %r8, s;\n mapa.shared::cluster.u32 %r9, %r8, 1;\n"
    " mov.u32 %r7, 0;\n setp.eq.u32 %p3, %r1, 0;\n or.pred %p3, %p3, %p4;\n @%p3 ld.shared::cluster.u32 %r7, [%r9];\n"
    " setp.eq.u32 %p3, %r1, 1;\n @%p3 st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%r9], %r4, [%r6];\n"
    " setp.eq.u32 %p3, %r1, 2;\n @%p3 mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r6];\n"
    " setp.eq.u32 %p3, %r1, 3;\n @%p3 atom.shared::cluster.add.u32 %r7, [%r9], 1;\n"
    " st.global.u32 [%rd1], %r7;\n"
    "TAIL:\n @%p4 barrier.cluster.arrive.release;\n @%p4 barrier.cluster.wait.acquire;\n ret;\n}\n";

Test(cluster, dsmem_of_an_exited_cta) {
    static const char *const lines[] = {"ld.shared::cluster.u32", "st.async.shared::cluster", "mbarrier.arrive.release.cluster",
                                        "atom.shared::cluster.add"};
    static const char *const what[] = {"memcheck: invalid __shared__ read of size 4", "memcheck: invalid __shared__ write of size 4",
                                       "invalid mbarrier", "memcheck: invalid __shared__ write of size 4"};
    for (int rc = 0; rc < 2; rc++) {
        tile_context *ctx = open_ctx(rc);
        tile_module *m;
        tile_kernel *k = load(ctx, exited_ptx, "gone", &m);
        tile_devptr out = poisoned(ctx, 4);
        for (uint32_t mode = 0; mode < 4; mode++) {
            void *args[] = {&out, &mode};
            launch_fails(ctx, k, (tile_dim3){2, 1, 1}, 32, args,
                         (const char *[]){what[mode], lines[mode], "by thread (0,0,0) in block (0,0,0)",
                                          "in the shared memory of cluster CTA rank 1, which has exited", NULL});
        }
        uint32_t mode = 4, got = 0;
        void *args[] = {&out, &mode};
        launch(ctx, k, (tile_dim3){4, 1, 1}, 32, args);
        cr_assert_eq(tile_memcpy_dtoh(ctx, &got, out, 4), TILE_OK);
        cr_assert_eq(got, 107u);
        tile_module_unload(m);
        tile_context_destroy(ctx);
    }
}

/* ==== the emulator's own launch: cluster dimensions given at launch ==== */

/* A kernel without .reqnctapercluster launched as clusters of 2 (EmuOptions.cluster, what cuLaunchKernelEx's
 * cluster attribute gives): each CTA reads its partner's rank through distributed shared memory. */
Test(cluster, dimensions_at_launch) {
    static const char *ptx = PTX_HEAD
        ".visible .entry k(.param .u64 out)\n{\n .reg .b32 %r<8>;\n .reg .b64 %rd<4>;\n .shared .align 4 .b32 s;\n"
        " ld.param.u64 %rd1, [out];\n mov.u32 %r1, %cluster_ctarank;\n mov.u32 %r2, %ctaid.x;\n st.shared.u32 [s], %r2;\n"
        " barrier.cluster.arrive.aligned;\n barrier.cluster.wait.aligned;\n"
        " xor.b32 %r3, %r1, 1;\n mov.u32 %r4, s;\n mapa.shared::cluster.u32 %r5, %r4, %r3;\n ld.shared::cluster.u32 %r6, [%r5];\n"
        " mov.u32 %r7, %cluster_nctarank;\n mul.wide.u32 %rd2, %r2, 8;\n add.u64 %rd2, %rd1, %rd2;\n st.global.v2.u32 [%rd2], {%r6, %r7};\n"
        " barrier.cluster.arrive.aligned;\n barrier.cluster.wait.aligned;\n ret;\n}\n"
        ".visible .entry fixed()\n.reqnctapercluster 4, 1, 1\n{\n ret;\n}\n"
        ".visible .entry too_big()\n.reqnctapercluster 17\n{\n ret;\n}\n"        /* ptxas takes both: the module */
        ".visible .entry rank17()\n.maxclusterrank 17\n{\n ret;\n}\n";           /* loads, the launch decides */
    check_ptxas(ptx);
    EmuMem mem;
    emu_mem_init(&mem);
    char *err = NULL;
    EmuModule *m = emu_module_parse(ptx, &mem, &err);
    cr_assert(m && emu_module_finalize(m, &mem, &err), "%s", err ? err : "");
    uint64_t out;
    cr_assert(emu_mem_alloc(&mem, 6 * 8, false, &out));
    memset(emu_mem_host(&mem, out, 48), 0xFF, 48);
    EmuOptions o = {.host_threads = 2, .timeout_seconds = 60, .cluster = {2, 1, 1}};
    cr_assert(emu_launch(m, emu_module_find(m, "k"), (unsigned[]){6, 1, 1}, (unsigned[]){32, 1, 1}, 0, (void *[]){&out}, &o, NULL, &err),
              "%s", err ? err : "");
    const uint32_t *v = (const uint32_t *)emu_mem_host(&mem, out, 48);
    for (unsigned c = 0; c < 6; c++) {
        cr_assert_eq(v[2 * c], c ^ 1, "block %u read %u, want %u", c, v[2 * c], c ^ 1);
        cr_assert_eq(v[2 * c + 1], 2u);
    }
    /* without cluster dimensions the same kernel runs one-CTA clusters, and mapa to rank 1 is an error */
    o.cluster[0] = 0;
    cr_assert(!emu_launch(m, emu_module_find(m, "k"), (unsigned[]){2, 1, 1}, (unsigned[]){32, 1, 1}, 0, (void *[]){&out}, &o, NULL, &err));
    cr_assert(strstr(err, "invalid cluster rank") && strstr(err, "the cluster has 1 CTA"), "%s", err);
    free(err);
    err = NULL;
    /* given dimensions must agree with .reqnctapercluster */
    o.cluster[0] = 2;
    cr_assert(!emu_launch(m, emu_module_find(m, "fixed"), (unsigned[]){4, 1, 1}, (unsigned[]){32, 1, 1}, 0, NULL, &o, NULL, &err));
    cr_assert(strstr(err, "cluster (2,1,1) differs from .reqnctapercluster 4, 1, 1"), "%s", err);
    free(err);
    err = NULL;
    o.cluster[0] = 32;
    cr_assert(!emu_launch(m, emu_module_find(m, "k"), (unsigned[]){32, 1, 1}, (unsigned[]){32, 1, 1}, 0, (void *[]){&out}, &o, NULL, &err));
    cr_assert(strstr(err, "clusters of 32 x 1 x 1 CTAs; a cluster has 1..16"), "%s", err);
    free(err);
    err = NULL;
    /* a .reqnctapercluster no GPU launches (more than 16 CTAs) fails its launch, naming the directive */
    o.cluster[0] = o.cluster[1] = o.cluster[2] = 0;
    cr_assert(!emu_launch(m, emu_module_find(m, "too_big"), (unsigned[]){17, 1, 1}, (unsigned[]){32, 1, 1}, 0, NULL, &o, NULL, &err));
    cr_assert(strstr(err, "launch of 'too_big': its .reqnctapercluster 17, 1, 1 is not a cluster of 1..16 CTAs (8 portable), so "
                          "no GPU launches it"), "%s", err);
    free(err);
    err = NULL;
    /* .maxclusterrank 17 bounds nothing a GPU runs: clusters of 16 launch, 17 are past the hardware's limit */
    o.cluster[0] = 16;
    cr_assert(emu_launch(m, emu_module_find(m, "rank17"), (unsigned[]){16, 1, 1}, (unsigned[]){1, 1, 1}, 0, NULL, &o, NULL, &err),
              "%s", err ? err : "");
    o.cluster[0] = 17;
    cr_assert(!emu_launch(m, emu_module_find(m, "rank17"), (unsigned[]){17, 1, 1}, (unsigned[]){1, 1, 1}, 0, NULL, &o, NULL, &err));
    cr_assert(strstr(err, "clusters of 17 x 1 x 1 CTAs; a cluster has 1..16"), "%s", err);
    free(err);
    emu_module_free(m);
    emu_mem_destroy(&mem);
}

/* The same through the public API: tile_launch_ex's cluster option on a kernel loaded from PTX, and its checks. */
Test(cluster, tile_launch_ex_cluster) {
    static const char *ptx = PTX_HEAD
        ".visible .entry k(.param .u64 out)\n{\n .reg .b32 %r<8>;\n .reg .b64 %rd<4>;\n .shared .align 4 .b32 s;\n"
        " ld.param.u64 %rd1, [out];\n mov.u32 %r1, %cluster_ctarank;\n mov.u32 %r2, %ctaid.x;\n st.shared.u32 [s], %r2;\n"
        " barrier.cluster.arrive.aligned;\n barrier.cluster.wait.aligned;\n"
        " mov.u32 %r7, %cluster_nctarank;\n add.u32 %r3, %r1, 1;\n rem.u32 %r3, %r3, %r7;\n mov.u32 %r4, s;\n"
        " mapa.shared::cluster.u32 %r5, %r4, %r3;\n ld.shared::cluster.u32 %r6, [%r5];\n"
        " mul.wide.u32 %rd2, %r2, 8;\n add.u64 %rd2, %rd1, %rd2;\n st.global.v2.u32 [%rd2], {%r6, %r7};\n"
        " barrier.cluster.arrive.aligned;\n barrier.cluster.wait.aligned;\n ret;\n}\n";
    tile_context *ctx = open_ctx(false);
    tile_module *m;
    tile_kernel *k = load(ctx, ptx, "k", &m);
    enum { G = 8 };
    tile_devptr out = poisoned(ctx, G * 8);
    tile_launch_options o = {.size = sizeof o, .block = {32, 1, 1}, .cluster = {4, 1, 1}};
    cr_assert_eq(tile_launch_ex(k, (tile_dim3){G, 1, 1}, (void *[]){&out}, NULL, &o), TILE_OK, "%s", tile_last_error(ctx));
    uint32_t v[G][2];
    cr_assert_eq(tile_memcpy_dtoh(ctx, v, out, sizeof v), TILE_OK);
    for (unsigned c = 0; c < G; c++) {
        unsigned want = c / 4 * 4 + (c % 4 + 1) % 4;
        cr_assert(v[c][0] == want && v[c][1] == 4, "block %u: %u %u, want %u 4", c, v[c][0], v[c][1], want);
    }
    /* cooperatively: every cluster at once, each CTA reading its cluster's next one */
    o.cooperative = 1;
    cr_assert_eq(tile_memset(ctx, out, 0xFF, G * 8), TILE_OK);
    cr_assert_eq(tile_launch_ex(k, (tile_dim3){G, 1, 1}, (void *[]){&out}, NULL, &o), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, v, out, sizeof v), TILE_OK);
    for (unsigned c = 0; c < G; c++) {
        unsigned want = c / 4 * 4 + (c % 4 + 1) % 4;
        cr_assert(v[c][0] == want && v[c][1] == 4, "cooperative, block %u: %u %u, want %u 4", c, v[c][0], v[c][1], want);
    }
    o.cooperative = 0;
    o.cluster = (tile_dim3){3, 1, 1};
    cr_assert_eq(tile_launch_ex(k, (tile_dim3){G, 1, 1}, (void *[]){&out}, NULL, &o), TILE_ERROR_INVALID_VALUE);
    cr_assert(strstr(tile_last_error(ctx), "dividing the grid (8,1,1)"), "%s", tile_last_error(ctx));
    o.cluster = (tile_dim3){2, 0, 1};
    cr_assert_eq(tile_launch_ex(k, (tile_dim3){G, 1, 1}, (void *[]){&out}, NULL, &o), TILE_ERROR_INVALID_VALUE);
    /* an older caller's struct, without the field: one-CTA clusters, each block reads its own word */
    tile_launch_options old = {.size = offsetof(tile_launch_options, cluster), .block = {32, 1, 1}, .cluster = {4, 1, 1}};
    cr_assert_eq(tile_launch_ex(k, (tile_dim3){G, 1, 1}, (void *[]){&out}, NULL, &old), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, v, out, sizeof v), TILE_OK);
    for (unsigned c = 0; c < G; c++) cr_assert(v[c][0] == c && v[c][1] == 1, "block %u: %u %u, want %u 1", c, v[c][0], v[c][1], c);
    tile_module_unload(m);
    tile_context_destroy(ctx);
}

/* ==== cooperative launches ==== */

/* Every block resident at once: block b spins until block b+1 has written its flag (a chain no sequential
 * order of blocks could finish), through a hand-written acquire/release exchange; so too in clusters of 2
 * and 4 CTAs (every cluster resident).  The limit: all threads resident (2^18). */
Test(cooperative, blocks_wait_for_later_blocks) {
    static const char *ptx = PTX_HEAD
        ".visible .entry chain(.param .u64 flags, .param .u64 out)\n{\n .reg .pred %p<3>;\n .reg .b32 %r<10>;\n .reg .b64 %rd<8>;\n"
        " ld.param.u64 %rd1, [flags];\n ld.param.u64 %rd2, [out];\n mov.u32 %r1, %ctaid.x;\n mov.u32 %r2, %nctaid.x;\n"
        " mov.u32 %r3, %tid.x;\n setp.ne.u32 %p1, %r3, 0;\n @%p1 bra DONE;\n"
        " add.u32 %r4, %r1, 1;\n setp.ge.u32 %p2, %r4, %r2;\n mov.u32 %r6, 0;\n @%p2 bra LAST;\n"
        " mul.wide.u32 %rd3, %r4, 4;\n add.u64 %rd4, %rd1, %rd3;\n"
        "SPIN:\n ld.acquire.gpu.global.u32 %r5, [%rd4];\n setp.eq.u32 %p2, %r5, 0;\n @%p2 bra SPIN;\n mov.u32 %r6, %r5;\n"
        "LAST:\n add.u32 %r7, %r6, 1;\n mul.wide.u32 %rd5, %r1, 4;\n add.u64 %rd6, %rd2, %rd5;\n st.global.u32 [%rd6], %r7;\n"
        " add.u64 %rd7, %rd1, %rd5;\n st.release.gpu.global.u32 [%rd7], %r7;\n"
        "DONE:\n ret;\n}\n";
    tile_context *ctx = open_ctx(false);
    tile_module *m;
    tile_kernel *k = load(ctx, ptx, "chain", &m);
    enum { G = 40 };
    tile_devptr flags, out = poisoned(ctx, G * 4);
    cr_assert_eq(tile_malloc(ctx, G * 4, &flags), TILE_OK);
    cr_assert_eq(tile_memset(ctx, flags, 0, G * 4), TILE_OK);
    tile_launch_options o = {.size = sizeof o, .block = {64, 1, 1}, .cooperative = 1};
    cr_assert_eq(tile_launch_ex(k, (tile_dim3){G, 1, 1}, (void *[]){&flags, &out}, NULL, &o), TILE_OK, "%s", tile_last_error(ctx));
    uint32_t v[G];
    cr_assert_eq(tile_memcpy_dtoh(ctx, v, out, sizeof v), TILE_OK);
    for (unsigned b = 0; b < G; b++) cr_assert_eq(v[b], G - b, "block %u: %u, want %u", b, v[b], G - b);
    o.cooperative = 2;
    cr_assert_eq(tile_launch_ex(k, (tile_dim3){G, 1, 1}, (void *[]){&flags, &out}, NULL, &o), TILE_ERROR_INVALID_VALUE);
    o.cooperative = 1;
    o.block = (tile_dim3){1024, 1, 1};
    /* a shape refused before anything runs is the caller's invalid value, as the other launch-shape misuses */
    cr_assert_eq(tile_launch_ex(k, (tile_dim3){300, 1, 1}, (void *[]){&flags, &out}, NULL, &o), TILE_ERROR_INVALID_VALUE);
    cr_assert(strstr(tile_last_error(ctx), "a cooperative launch of 307200 threads"), "%s", tile_last_error(ctx));
    o.block = (tile_dim3){64, 1, 1};
    for (unsigned cl = 2; cl <= 4; cl += 2) {
        o.cluster = (tile_dim3){cl, 1, 1};
        cr_assert_eq(tile_memset(ctx, flags, 0, G * 4), TILE_OK);
        cr_assert_eq(tile_memset(ctx, out, 0xFF, G * 4), TILE_OK);
        cr_assert_eq(tile_launch_ex(k, (tile_dim3){G, 1, 1}, (void *[]){&flags, &out}, NULL, &o), TILE_OK, "cluster %u: %s", cl,
                     tile_last_error(ctx));
        cr_assert_eq(tile_memcpy_dtoh(ctx, v, out, sizeof v), TILE_OK);
        for (unsigned b = 0; b < G; b++) cr_assert_eq(v[b], G - b, "cluster %u, block %u: %u, want %u", cl, b, v[b], G - b);
    }
    tile_module_unload(m);
    tile_context_destroy(ctx);
}

/* isspacep on distributed shared memory: another CTA's part of the cluster's window is .shared::cluster but
 * not .shared::cta; the CTA's own part, through mapa or not, is both. */
Test(cluster, isspacep_cta_and_cluster) {
    static const char *ptx = PTX_HEAD
        ".visible .entry k(.param .u64 out)\n.reqnctapercluster 2, 1, 1\n{\n .reg .pred %p<7>;\n .reg .b32 %r<10>;\n"
        " .reg .b64 %rd<8>;\n .shared .align 4 .b32 s;\n"
        " ld.param.u64 %rd1, [out];\n mov.u32 %r1, %cluster_ctarank;\n xor.b32 %r2, %r1, 1;\n mov.u64 %rd2, s;\n"
        " cvta.shared.u64 %rd3, %rd2;\n mapa.u64 %rd4, %rd3, %r2;\n mapa.u64 %rd5, %rd3, %r1;\n"
        " isspacep.shared::cta %p1, %rd4;\n isspacep.shared::cluster %p2, %rd4;\n isspacep.shared::cta %p3, %rd5;\n"
        " isspacep.shared::cta %p4, %rd3;\n isspacep.shared %p5, %rd4;\n isspacep.global %p6, %rd4;\n"
        " selp.u32 %r3, 1, 0, %p1;\n selp.u32 %r4, 2, 0, %p2;\n selp.u32 %r5, 4, 0, %p3;\n selp.u32 %r6, 8, 0, %p4;\n"
        " selp.u32 %r7, 16, 0, %p5;\n selp.u32 %r8, 32, 0, %p6;\n"
        " or.b32 %r3, %r3, %r4;\n or.b32 %r3, %r3, %r5;\n or.b32 %r3, %r3, %r6;\n or.b32 %r3, %r3, %r7;\n or.b32 %r3, %r3, %r8;\n"
        " mov.u32 %r9, %ctaid.x;\n mul.wide.u32 %rd6, %r9, 4;\n add.u64 %rd7, %rd1, %rd6;\n st.global.u32 [%rd7], %r3;\n"
        " barrier.cluster.arrive.aligned;\n barrier.cluster.wait.aligned;\n ret;\n}\n";
    tile_context *ctx = open_ctx(false);
    tile_module *m;
    tile_kernel *k = load(ctx, ptx, "k", &m);
    tile_devptr out = poisoned(ctx, 16);
    launch(ctx, k, (tile_dim3){4, 1, 1}, 32, (void *[]){&out});
    uint32_t v[4];
    cr_assert_eq(tile_memcpy_dtoh(ctx, v, out, sizeof v), TILE_OK);
    /* the partner's address: ::cluster and generic shared, not ::cta; the own one through mapa and not: ::cta */
    for (unsigned c = 0; c < 4; c++) cr_assert_eq(v[c], 2u | 4u | 8u | 16u, "block %u: 0x%x", c, v[c]);
    tile_module_unload(m);
    tile_context_destroy(ctx);
}
