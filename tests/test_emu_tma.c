/* test_emu_tma.c - the emulator as an sm_90a device, tensor copies: TMA loads and stores through
 * tile_tensor_map_encode's maps (boxes at tensor edges, every swizzle mode, maps in parameters and
 * global memory, encode and copy errors), maps the kernel builds itself (tensormap.replace,
 * tensormap.cp_fenceproxy), and a pipelined TMA + mbarrier + wgmma GEMM as the compiler emits it.
 *
 * Every hand-written kernel is checked by ptxas -arch=sm_90a when it is installed.  Shared-memory
 * placements are computed here from the PTX ISA's description of the swizzle atoms, independently
 * of the emulator; results are compared with values computed here, outputs poisoned first. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/tile/tile.h"
#include "runtime/device.h"
#include "support/support.h"
#include "support/hostfloat.h"
#include "support/target.h"
#include "test_emu_sm90.h"
#include "test_rng.h"

/* ==== 4. tensor copies (TMA) through tile_tensor_map_encode ==== */
typedef struct TmaCase {
    tile_dtype dtype;
    int rank;
    uint64_t dims[3];
    unsigned pitch_elems;    /* elements per row in memory (>= dims[0]) */
    uint32_t box[3], estr[3];
    tile_tensor_swizzle swz;
    int32_t c[3];
} TmaCase;

static char *tma_ptx(int rank, bool store) {
    Str s = {0};
    const char *co = rank == 1 ? "{%r1}" : rank == 2 ? "{%r1, %r2}" : "{%r1, %r2, %r4}";
    str_printf(&s, PTX_HEAD ".visible .entry t(.param .align 64 .b8 tmap[128], .param .u32 c0, .param .u32 c1, .param .u32 c2,"
                            " .param .u32 nbytes, .param .u32 txbytes, .param .u64 io, .param .u64 gmap)\n{\n"
                            "  .reg .pred %%p<4>;\n  .reg .b32 %%r<16>;\n  .reg .b64 %%rd<8>;\n"
                            "  .shared .align 1024 .b8 smem[8192];\n  .shared .align 8 .b64 bar;\n"
                            "  mov.u32 %%r0, %%tid.x;\n  ld.param.u32 %%r1, [c0];\n  ld.param.u32 %%r2, [c1];\n  ld.param.u32 %%r4, [c2];\n"
                            "  ld.param.u32 %%r3, [nbytes];\n  ld.param.u32 %%r12, [txbytes];\n  ld.param.u64 %%rd0, [io];\n"
                            "  mov.u32 %%r10, smem;\n  mov.u32 %%r11, bar;\n  mov.u64 %%rd1, tmap;\n  setp.ne.u32 %%p0, %%r0, 0;\n"
                            /* a tensor map in global memory when gmap is not 0 */
                            "  ld.param.u64 %%rd6, [gmap];\n  setp.ne.u64 %%p3, %%rd6, 0;\n  @%%p3 mov.u64 %%rd1, %%rd6;\n");
    if (!store) {
        str_printf(&s, "  @%%p0 bra $S;\n  mbarrier.init.shared::cta.b64 [%%r11], 1;\n  fence.mbarrier_init.release.cluster;\n$S:\n"
                       "  bar.sync 0;\n  @%%p0 bra $W;\n  mbarrier.arrive.expect_tx.shared::cta.b64 %%rd2, [%%r11], %%r12;\n"
                       "  cp.async.bulk.tensor.%dd.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%%r10], [%%rd1, %s], [%%r11];\n"
                       "$W:\n  mbarrier.try_wait.parity.shared::cta.b64 %%p1, [%%r11], 0;\n  @!%%p1 bra $W;\n", rank, co);
    }
    /* move the box's raw bytes between shared memory and io (load: out; store: in) */
    str_printf(&s, "  shl.b32 %%r5, %%r0, 2;\n$C:\n  setp.ge.u32 %%p2, %%r5, %%r3;\n  @%%p2 bra $D;\n  add.u32 %%r6, %%r10, %%r5;\n"
                   "  cvt.u64.u32 %%rd3, %%r5;\n  add.u64 %%rd4, %%rd0, %%rd3;\n");
    if (!store) str_printf(&s, "  ld.shared.u32 %%r7, [%%r6];\n  st.global.u32 [%%rd4], %%r7;\n");
    else str_printf(&s, "  ld.global.u32 %%r7, [%%rd4];\n  st.shared.u32 [%%r6], %%r7;\n");
    str_printf(&s, "  add.u32 %%r5, %%r5, 512;\n  bra $C;\n$D:\n");
    if (store)
        str_printf(&s, "  bar.sync 0;\n  fence.proxy.async.shared::cta;\n  @%%p0 bra $E;\n"
                       "  cp.async.bulk.tensor.%dd.global.shared::cta.tile.bulk_group [%%rd1, %s], [%%r10];\n"
                       "  cp.async.bulk.commit_group;\n  cp.async.bulk.wait_group 0;\n$E:\n", rank, co);
    str_printf(&s, "  ret;\n}\n");
    return str_take(&s);
}

/* Where box element (i0, i1, i2) lies in shared memory: densely, innermost first, then the 16-byte chunk c of
 * each W-byte row r moved to c ^ ((r % 8) >> s) (the swizzle atoms of the wgmma test). */
static size_t tma_smem_offset(const TmaCase *c, const uint32_t n[3], unsigned es, unsigned i0, unsigned i1, unsigned i2) {
    size_t byte = (((size_t)i2 * n[1] + i1) * n[0] + i0) * es;
    if (c->swz == TILE_SWIZZLE_NONE) return byte;
    unsigned W = c->swz == TILE_SWIZZLE_128B ? 128 : c->swz == TILE_SWIZZLE_64B ? 64 : 32, s = c->swz == TILE_SWIZZLE_128B ? 0 : c->swz == TILE_SWIZZLE_64B ? 1 : 2;
    size_t row = byte / W, chunk = (byte % W) / 16;
    return row * W + ((chunk ^ ((row % 8) >> s)) * 16) + byte % 16;
}

static void run_tma_case(tile_context *ctx, const TmaCase *c, bool store, bool global_map) {
    unsigned es = (unsigned)tile_dtype_size(c->dtype);
    uint64_t dims[3] = {c->dims[0], c->rank > 1 ? c->dims[1] : 1, c->rank > 2 ? c->dims[2] : 1};
    uint64_t strides[2] = {(uint64_t)c->pitch_elems * es, (uint64_t)c->pitch_elems * es * dims[1]};
    size_t gbytes = strides[1] * dims[2];
    uint8_t *g = malloc(gbytes);
    for (size_t i = 0; i < gbytes; i++) g[i] = (uint8_t)irand(256);
    tile_devptr dg, dio;
    cr_assert_eq(tile_malloc(ctx, gbytes, &dg), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, dg, g, gbytes), TILE_OK);
    _Alignas(64) uint8_t map[128];
    uint32_t estr[3] = {c->estr[0] ? c->estr[0] : 1, c->estr[1] ? c->estr[1] : 1, c->estr[2] ? c->estr[2] : 1};
    cr_assert_eq(tile_tensor_map_encode(ctx, map, c->dtype, c->rank, dg, c->dims, strides, c->box, estr, c->swz), TILE_OK, "%s",
                 tile_last_error(ctx));
    tile_devptr gmap = 0;
    if (global_map) {
        cr_assert_eq(tile_malloc(ctx, sizeof map, &gmap), TILE_OK);
        cr_assert_eq(tile_memcpy_htod(ctx, gmap, map, sizeof map), TILE_OK);
    }
    uint32_t n[3] = {1, 1, 1};
    for (int d = 0; d < c->rank; d++) n[d] = (c->box[d] + estr[d] - 1) / estr[d];
    unsigned nbytes = n[0] * n[1] * n[2] * es;
    uint8_t *io = malloc(nbytes), *back = malloc(gbytes);
    for (unsigned i = 0; i < nbytes; i++) io[i] = (uint8_t)irand(256);
    cr_assert_eq(tile_malloc(ctx, nbytes, &dio), TILE_OK);
    if (store) cr_assert_eq(tile_memcpy_htod(ctx, dio, io, nbytes), TILE_OK);
    else cr_assert_eq(tile_memset(ctx, dio, 0xFF, nbytes), TILE_OK);
    char *ptx = tma_ptx(c->rank, store);
    check_ptxas(ptx);
    tile_module *m;
    cr_assert_eq(tile_module_load_ptx(ctx, ptx, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(m, "t", &k), TILE_OK);
    void *args[] = {map, (void *)&c->c[0], (void *)&c->c[1], (void *)&c->c[2], &nbytes, &nbytes, &dio, &gmap};
    cr_assert_eq(tile_launch_raw(k, (tile_dim3){1, 1, 1}, (tile_dim3){128, 1, 1}, 0, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    uint8_t *got = malloc(store ? gbytes : nbytes);
    cr_assert_eq(tile_memcpy_dtoh(ctx, got, store ? dg : dio, store ? gbytes : nbytes), TILE_OK);
    if (store) memcpy(back, g, gbytes); /* what global memory must hold: untouched outside the box */
    for (unsigned i2 = 0; i2 < n[2]; i2++)
        for (unsigned i1 = 0; i1 < n[1]; i1++)
            for (unsigned i0 = 0; i0 < n[0]; i0++) {
                int64_t x[3] = {c->c[0] + (int64_t)i0 * estr[0], c->c[1] + (int64_t)i1 * estr[1], c->c[2] + (int64_t)i2 * estr[2]};
                bool inside = true;
                for (int d = 0; d < 3; d++) inside = inside && x[d] >= 0 && (uint64_t)x[d] < dims[d] && (d < c->rank || x[d] == 0);
                size_t so = tma_smem_offset(c, n, es, i0, i1, i2);
                size_t go = inside ? (size_t)x[0] * es + (size_t)x[1] * strides[0] + (size_t)x[2] * strides[1] : 0;
                if (store) {
                    if (inside) memcpy(back + go, io + so, es);
                } else {
                    for (unsigned b = 0; b < es; b++)
                        cr_assert_eq(got[so + b], inside ? g[go + b] : 0, "load box (%u,%u,%u) at (%lld,%lld,%lld) byte %u", i0, i1, i2,
                                     (long long)x[0], (long long)x[1], (long long)x[2], b);
                }
            }
    if (store)
        for (size_t i = 0; i < gbytes; i++) cr_assert_eq(got[i], back[i], "store: global byte %zu", i);
    /* a wrong expect_tx byte count never completes the phase: a deadlock, reported */
    if (!store) {
        unsigned fewer = nbytes + 16;
        void *args2[] = {map, (void *)&c->c[0], (void *)&c->c[1], (void *)&c->c[2], &nbytes, &fewer, &dio, &gmap};
        cr_assert_eq(tile_launch_raw(k, (tile_dim3){1, 1, 1}, (tile_dim3){128, 1, 1}, 0, args2, NULL), TILE_ERROR_LAUNCH);
        cr_assert(strstr(tile_last_error(ctx), "deadlock"), "%s", tile_last_error(ctx));
    }
    tile_module_unload(m);
    tile_free(ctx, dg);
    tile_free(ctx, dio);
    if (gmap) tile_free(ctx, gmap);
    free(g), free(io), free(back), free(got), free(ptx);
}

Test(tma, boxes_at_edges_every_swizzle, .timeout = 300) {
    seed_rng();
    tile_context *ctx;
    cr_assert_eq(tile_context_create("emu:sm_90a", &ctx), TILE_OK);
    static const TmaCase cases[] = {
        {TILE_F32, 2, {37, 23}, 40, {8, 5}, {0}, TILE_SWIZZLE_NONE, {32, 20}},
        {TILE_F32, 2, {37, 23}, 40, {8, 5}, {0}, TILE_SWIZZLE_32B, {-3, -2}},
        {TILE_F32, 2, {37, 23}, 40, {8, 6}, {1, 2}, TILE_SWIZZLE_NONE, {4, 19}},
        {TILE_F16, 2, {70, 19}, 72, {32, 6}, {0}, TILE_SWIZZLE_64B, {48, 16}},
        {TILE_F16, 2, {70, 19}, 72, {32, 6}, {0}, TILE_SWIZZLE_64B, {-8, 0}},
        {TILE_BF16, 2, {100, 9}, 104, {64, 4}, {0}, TILE_SWIZZLE_128B, {64, 6}},
        {TILE_F32, 3, {20, 7, 5}, 20, {4, 3, 2}, {0}, TILE_SWIZZLE_NONE, {17, 5, 4}},
        {TILE_U8, 3, {50, 9, 4}, 64, {128, 3, 3}, {0}, TILE_SWIZZLE_128B, {-40, 7, -1}},
        {TILE_F32, 1, {45}, 48, {16}, {0}, TILE_SWIZZLE_NONE, {36}},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) run_tma_case(ctx, &cases[i], false, false);
    /* the tensor map in global memory instead of a parameter */
    run_tma_case(ctx, &cases[5], false, true);
    /* stores skip what is out of bounds */
    run_tma_case(ctx, &cases[0], true, false);
    run_tma_case(ctx, &cases[3], true, true);
    run_tma_case(ctx, &cases[6], true, false);
    tile_context_destroy(ctx);
}

Test(tma, encode_errors) {
    tile_context *ctx;
    cr_assert_eq(tile_context_create("emu:sm_90a", &ctx), TILE_OK);
    tile_devptr p;
    cr_assert_eq(tile_malloc(ctx, 4096, &p), TILE_OK);
    _Alignas(64) uint8_t map[129];
    uint64_t dims[2] = {64, 16}, strides[1] = {256}; /* 4096 bytes: the allocation exactly */
    cr_assert_eq(tile_tensor_map_encode(ctx, map, TILE_F32, 2, p, dims, strides, (uint32_t[]){32, 8}, NULL, TILE_SWIZZLE_NONE), TILE_OK,
                 "%s", tile_last_error(ctx));
    uint32_t box[2] = {64, 8};
    struct { int rank; tile_devptr g; uint64_t stride; uint32_t box0; tile_tensor_swizzle swz; void *out; const char *want; } cases[] = {
        {2, p, 272, 32, TILE_SWIZZLE_NONE, map, "run past the end of its allocation"},
        {2, 0x1000, 256, 32, TILE_SWIZZLE_NONE, map, "was not allocated with tile_malloc"},
        {2, p, 256, 64, TILE_SWIZZLE_128B, map, "wider than the 128-byte swizzle"},
        {2, p, 250, 32, TILE_SWIZZLE_NONE, map, "strides[0] = 250"},
        {2, p + 8, 256, 32, TILE_SWIZZLE_NONE, map, "16-byte aligned"},
        {6, p, 256, 32, TILE_SWIZZLE_NONE, map, "rank 6"},
        {2, p, 256, 300, TILE_SWIZZLE_NONE, map, "box[0] = 300"},
        {2, p, 256, 3, TILE_SWIZZLE_NONE, map, "not a multiple of 16"},
        {2, p, 256, 32, TILE_SWIZZLE_NONE, map + 1, "64-byte aligned"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        strides[0] = cases[i].stride;
        box[0] = cases[i].box0;
        cr_assert_eq(tile_tensor_map_encode(ctx, cases[i].out, TILE_F32, cases[i].rank, cases[i].g, dims, strides, box, NULL, cases[i].swz),
                     TILE_ERROR_INVALID_VALUE, "case %zu", i);
        cr_assert(strstr(tile_last_error(ctx), cases[i].want), "case %zu: %s", i, tile_last_error(ctx));
    }
    tile_context_destroy(ctx);
}

/* A permuted view: strides that do not grow with the dimension.  A [S, H, D] f32 tensor (S 7, H 3, D 16) mapped
 * as (D, S, H) with strides H*D*4 and D*4 bytes, as attention kernels map a [B, S, H, D] tensor head by head: the
 * stride of dimension 2 (64 bytes) is less than dimension 1 spans (7 x 192).  The map encodes, and a box of
 * (16, 4, 2) at (0, 5, 1) reads element (d, s, h) from s*H*D + h*D + d, zero past S. */
Test(tma, permuted_strides_map_and_load) {
    tile_context *ctx;
    cr_assert_eq(tile_context_create("emu:sm_90a", &ctx), TILE_OK);
    enum { S = 7, H = 3, D = 16 };
    float host[S * H * D];
    for (int i = 0; i < S * H * D; i++) host[i] = (float)irand(1 << 20) - (float)(1 << 19);
    tile_devptr dg, dio;
    cr_assert_eq(tile_malloc(ctx, sizeof host, &dg), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, dg, host, sizeof host), TILE_OK);
    uint64_t dims[3] = {D, S, H}, strides[2] = {H * D * 4, D * 4};
    uint32_t box[3] = {16, 4, 2};
    _Alignas(64) uint8_t map[128];
    cr_assert_eq(tile_tensor_map_encode(ctx, map, TILE_F32, 3, dg, dims, strides, box, NULL, TILE_SWIZZLE_NONE), TILE_OK, "%s",
                 tile_last_error(ctx));
    unsigned nbytes = 16 * 4 * 2 * 4;
    cr_assert_eq(tile_malloc(ctx, nbytes, &dio), TILE_OK);
    cr_assert_eq(tile_memset(ctx, dio, 0xFF, nbytes), TILE_OK);
    char *ptx = tma_ptx(3, false);
    check_ptxas(ptx);
    tile_module *m;
    cr_assert_eq(tile_module_load_ptx(ctx, ptx, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(m, "t", &k), TILE_OK);
    int32_t c[3] = {0, 5, 1};
    tile_devptr gmap = 0;
    void *args[] = {map, &c[0], &c[1], &c[2], &nbytes, &nbytes, &dio, &gmap};
    cr_assert_eq(tile_launch_raw(k, (tile_dim3){1, 1, 1}, (tile_dim3){128, 1, 1}, 0, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    float got[16 * 4 * 2];
    cr_assert_eq(tile_memcpy_dtoh(ctx, got, dio, nbytes), TILE_OK);
    for (int h = 0; h < 2; h++)
        for (int s = 0; s < 4; s++)
            for (int d = 0; d < 16; d++) {
                int gs = c[1] + s, gh = c[2] + h;
                float want = gs < S && gh < H ? host[(gs * H + gh) * D + d] : 0.0f;
                cr_assert_eq(got[(h * 4 + s) * 16 + d], want, "box (%d, %d, %d)", d, s, h);
            }
    tile_module_unload(m);
    tile_free(ctx, dg);
    tile_free(ctx, dio);
    free(ptx);
    tile_context_destroy(ctx);
}

/* Bulk and tensor copies that cannot be done stop the launch with a message. */
Test(tma, copy_errors) {
    TileDevice *d = open_emu(false);
    uint64_t src = poisoned(d, 4096), zeros;
    cr_assert_eq(dev_malloc(d, 256, &zeros), DEV_OK); /* 128 zero bytes: no tensor map */
    struct { const char *body, *want; } cases[] = {
        {"  mov.u32 %r5, 24;\n  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd0], %r5, [%r2];\n",
         "not a positive multiple of 16"},
        {"  add.u32 %r3, %r1, 4080;\n  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd0], 64, [%r2];\n",
         "outside the block's"},
        {"  add.u64 %rd2, %rd0, 3072;\n  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd2], 2048, [%r2];\n",
         "runs 1024 bytes past its end"},
        {"  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r4, %r4}], [%r2];\n",
         "not a tensor map"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char ptx[2048];
        snprintf(ptx, sizeof ptx,
                 PTX_HEAD ".visible .entry k(.param .u64 src, .param .u64 map)\n{\n  .reg .b32 %%r<8>;\n  .reg .b64 %%rd<4>;\n"
                          "  .shared .align 1024 .b8 smem[4096];\n  .shared .align 8 .b64 bar;\n"
                          "  ld.param.u64 %%rd0, [src];\n  ld.param.u64 %%rd1, [map];\n  mov.u32 %%r1, smem;\n  mov.u32 %%r2, bar;\n"
                          "  mov.u32 %%r4, 0;\n  mbarrier.init.shared::cta.b64 [%%r2], 1;\n%s  ret;\n}\n",
                 cases[i].body);
        TileDevModule *m;
        TileDevFunction *f = load(d, ptx, "k", &m);
        void *args[] = {&src, &zeros};
        expect_launch_error(d, f, 1, args, cases[i].want, NULL);
        dev_module_unload(m);
    }
    expect_load_error(d, PTX_HEAD ".visible .entry k()\n{\n  .reg .b32 %r<4>;\n  .reg .b64 %rd<2>;\n"
                         "  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2}], [%r3];\n"
                         "  ret;\n}\n",
                      "with 2 coordinates");
    expect_load_error(d, PTX_HEAD ".visible .entry k()\n{\n  .reg .b32 %r<4>;\n  .reg .b64 %rd<2>;\n"
                         "  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], 24, [%r3];\n  ret;\n}\n",
                      "size 24 is not a positive multiple of 16");
    dev_close(d);
}

/* ISA, cp.async.bulk.tensor: "tensorCoords: a vector of 32-bit integers" - registers or immediates, as in
 * any vector operand; `[tmap, {3, 5}]` and `[tmap, {%r3, 5}]` were refused at load ("expected an operand,
 * found '3'") in every tensor form (probeP F2).  A 16 x 8 u32 tensor, box 4 x 2: loads at {3, 5},
 * {%r3 = -1, 5} and {-2, 7} (out-of-bounds elements zero), a store of the first box at {8, %r4 = 0}, a
 * reduction (add) of it at {12, 1}, a prefetch at {0, 0}. */
static const char *tma_imm_ptx = PTX_HEAD
    ".visible .entry k(.param .align 64 .b8 tmap[128], .param .u64 out)\n"
    "{\n"
    "  .reg .pred %p<3>;\n"
    "  .reg .b32 %r<12>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  .shared .align 1024 .b8 sbuf[384];\n"
    "  .shared .align 8 .b64 bar;\n"
    "  ld.param.u64 %rd2, [out];\n"
    "  mov.u64 %rd1, tmap;\n"
    "  mov.u32 %r3, -1;\n"
    "  mov.u32 %r4, 0;\n"
    "  mbarrier.init.shared::cta.b64 [bar], 1;\n"
    "  fence.mbarrier_init.release.cluster;\n"
    "  cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%rd1, {0, 0}];\n"
    "  mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], 96;\n"
    "  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [sbuf], [%rd1, {3, 5}], [bar];\n"
    "  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [sbuf+128], [%rd1, {%r3, 5}], [bar];\n"
    "  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [sbuf+256], [%rd1, {-2, 7}], [bar];\n"
    "$W:\n"
    "  mbarrier.try_wait.parity.shared::cta.b64 %p1, [bar], 0;\n"
    "  @!%p1 bra $W;\n"
    "  cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd1, {8, %r4}], [sbuf];\n"
    "  cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%rd1, {12, 1}], [sbuf];\n"
    "  cp.async.bulk.commit_group;\n"
    "  cp.async.bulk.wait_group 0;\n"
    "  mov.u32 %r5, 0;\n"
    "$C:\n"
    "  mov.u32 %r6, sbuf;\n"
    "  add.u32 %r6, %r6, %r5;\n"
    "  ld.shared.v4.u32 {%r7, %r8, %r9, %r10}, [%r6];\n"
    "  cvt.u64.u32 %rd3, %r5;\n"
    "  add.u64 %rd3, %rd3, %rd2;\n"
    "  st.global.v4.u32 [%rd3], {%r7, %r8, %r9, %r10};\n"
    "  add.u32 %r5, %r5, 16;\n"
    "  setp.lt.u32 %p2, %r5, 384;\n"
    "  @%p2 bra $C;\n"
    "  ret;\n"
    "}\n";

Test(tma, immediate_coordinates) {
    tile_context *ctx;
    cr_assert_eq(tile_context_create("emu:sm_90a", &ctx), TILE_OK);
    enum { W = 16, H = 8 };
    uint32_t g[H][W], want[H][W], got[H][W], box[3][2][4], out[96];
    for (int r = 0; r < H; r++)
        for (int c = 0; c < W; c++) g[r][c] = want[r][c] = (uint32_t)(100 * r + c + 1);
    tile_devptr dg, dout;
    cr_assert_eq(tile_malloc(ctx, sizeof g, &dg), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, dg, g, sizeof g), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof out, &dout), TILE_OK);
    cr_assert_eq(tile_memset(ctx, dout, 0xFF, sizeof out), TILE_OK);
    _Alignas(64) uint8_t map[128];
    uint64_t dims[2] = {W, H}, strides[1] = {W * 4};
    cr_assert_eq(tile_tensor_map_encode(ctx, map, TILE_U32, 2, dg, dims, strides, (uint32_t[]){4, 2}, NULL, TILE_SWIZZLE_NONE), TILE_OK,
                 "%s", tile_last_error(ctx));
    check_ptxas(tma_imm_ptx);
    tile_module *m;
    cr_assert_eq(tile_module_load_ptx(ctx, tma_imm_ptx, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(m, "k", &k), TILE_OK);
    void *args[] = {map, &dout};
    cr_assert_eq(tile_launch_raw(k, (tile_dim3){1, 1, 1}, (tile_dim3){1, 1, 1}, 0, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, out, dout, sizeof out), TILE_OK);
    cr_assert_eq(tile_memcpy_dtoh(ctx, got, dg, sizeof got), TILE_OK);
    const int at[3][2] = {{3, 5}, {-1, 5}, {-2, 7}};
    for (int b = 0; b < 3; b++)
        for (int i1 = 0; i1 < 2; i1++)
            for (int i0 = 0; i0 < 4; i0++) {
                int x = at[b][0] + i0, y = at[b][1] + i1;
                box[b][i1][i0] = x >= 0 && x < W && y >= 0 && y < H ? g[y][x] : 0;
                uint32_t v = out[32 * b + 4 * i1 + i0];
                cr_assert_eq(v, box[b][i1][i0], "box %d element (%d, %d): %u, want %u", b, i0, i1, v, box[b][i1][i0]);
            }
    for (int i1 = 0; i1 < 2; i1++)
        for (int i0 = 0; i0 < 4; i0++) {
            want[i1][8 + i0] = box[0][i1][i0];        /* the store at {8, 0} */
            want[1 + i1][12 + i0] += box[0][i1][i0]; /* the reduction at {12, 1} */
        }
    for (int r = 0; r < H; r++)
        for (int c = 0; c < W; c++) cr_assert_eq(got[r][c], want[r][c], "tensor (%d, %d): %u, want %u", c, r, got[r][c], want[r][c]);
    tile_module_unload(m);
    tile_context_destroy(ctx);
}

/* ==== 4b. tensor maps the kernel builds itself (Triton's device-side descriptors) ====
 * The first warp zeroes 128 bytes of shared memory, thread 0 writes every field with tensormap.replace
 * (64-byte swizzle, f16 or `elemtype`, the fill mode given), the warp copies the map to global memory with
 * tensormap.cp_fenceproxy, and a tensor copy through it loads a box (moved to io as raw bytes).  With
 * REDIRECT the map is instead the host's, in global memory, and only its address is replaced there. */
static char *built_map_ptx(const char *fields, bool redirect) {
    Str s = {0};
    str_printf(&s, PTX_HEAD ".visible .entry tb(.param .u64 io, .param .u64 src, .param .u64 gmap, .param .u32 c0, .param .u32 c1,"
                            " .param .u32 d0, .param .u32 d1, .param .u64 pitch, .param .u32 nbytes)\n{\n"
                            "  .reg .pred %%p<4>;\n  .reg .b32 %%r<20>;\n  .reg .b64 %%rd<10>;\n"
                            "  .shared .align 1024 .b8 smem[4096];\n  .shared .align 128 .b8 tmap[128];\n  .shared .align 8 .b64 bar;\n"
                            "  mov.u32 %%r0, %%tid.x;\n  ld.param.u64 %%rd0, [io];\n  ld.param.u64 %%rd1, [src];\n  ld.param.u64 %%rd2, [gmap];\n"
                            "  ld.param.u32 %%r1, [c0];\n  ld.param.u32 %%r2, [c1];\n  ld.param.u32 %%r4, [d0];\n  ld.param.u32 %%r5, [d1];\n"
                            "  ld.param.u64 %%rd3, [pitch];\n  ld.param.u32 %%r6, [nbytes];\n"
                            "  mov.u32 %%r10, tmap;\n  mov.u32 %%r11, smem;\n  mov.u32 %%r12, bar;\n  cvt.u64.u32 %%rd4, %%r10;\n"
                            "  setp.lt.u32 %%p0, %%r0, 32;\n  setp.ne.u32 %%p1, %%r0, 0;\n");
    if (redirect) {
        str_printf(&s, "  @%%p1 bra $R;\n  tensormap.replace.tile.global_address.global.b1024.b64 [%%rd2], %%rd1;\n$R:\n");
    } else {
        str_printf(&s, "  shl.b32 %%r8, %%r0, 2;\n  add.u32 %%r9, %%r10, %%r8;\n  mov.b32 %%r13, 0;\n  @%%p0 st.shared.b32 [%%r9], %%r13;\n"
                       "  bar.warp.sync -1;\n  @%%p1 bra $R;\n"
                       "  tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%%rd4], %%rd1;\n"
                       "  tensormap.replace.tile.rank.shared::cta.b1024.b32 [%%rd4], 1;\n"
                       "  tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%%rd4], 0, 32;\n"
                       "  tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%%rd4], 1, 6;\n"
                       "  tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%%rd4], 0, %%r4;\n"
                       "  tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%%rd4], 1, %%r5;\n"
                       "  tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%%rd4], 0, %%rd3;\n"
                       "  tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%%rd4], 0, 1;\n"
                       "  tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%%rd4], 1, 1;\n"
                       "  tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [%%rd4], 2;\n%s"
                       "$R:\n  bar.warp.sync -1;\n"
                       "  @%%p0 tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%%rd2], [%%rd4], 128;\n",
                   fields);
    }
    str_printf(&s, "  @%%p0 fence.proxy.tensormap::generic.acquire.gpu [%%rd2], 128;\n  bar.sync 0;\n"
                   "  @%%p1 bra $S;\n  mbarrier.init.shared::cta.b64 [%%r12], 1;\n  fence.mbarrier_init.release.cluster;\n$S:\n"
                   "  bar.sync 0;\n  @%%p1 bra $W;\n  mbarrier.arrive.expect_tx.shared::cta.b64 %%rd5, [%%r12], %%r6;\n"
                   "  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%%r11], [%%rd2, {%%r1, %%r2}], [%%r12];\n"
                   "$W:\n  mbarrier.try_wait.parity.shared::cta.b64 %%p2, [%%r12], 0;\n  @!%%p2 bra $W;\n"
                   "  shl.b32 %%r15, %%r0, 2;\n$C:\n  setp.ge.u32 %%p3, %%r15, %%r6;\n  @%%p3 bra $D;\n  add.u32 %%r16, %%r11, %%r15;\n"
                   "  cvt.u64.u32 %%rd6, %%r15;\n  add.u64 %%rd7, %%rd0, %%rd6;\n  ld.shared.u32 %%r17, [%%r16];\n  st.global.u32 [%%rd7], %%r17;\n"
                   "  add.u32 %%r15, %%r15, 512;\n  bra $C;\n$D:\n  ret;\n}\n");
    return str_take(&s);
}

/* One load through a map built on the device (or redirected there): the box's bytes against the source's,
 * out-of-bounds elements zero or, with nan_fill, f16 NaN. */
static void built_map_case(tile_context *ctx, const TmaCase *c, const char *fields, bool nan_fill, bool redirect) {
    unsigned es = 2, pitch = c->pitch_elems * es;
    size_t gbytes = (size_t)pitch * c->dims[1];
    uint8_t *g = malloc(gbytes);
    for (size_t i = 0; i < gbytes; i++) g[i] = (uint8_t)irand(256);
    tile_devptr dsrc, dother, dmap, dio;
    cr_assert_eq(tile_malloc(ctx, gbytes, &dsrc), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, dsrc, g, gbytes), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, gbytes, &dother), TILE_OK);
    cr_assert_eq(tile_memset(ctx, dother, 0x5A, gbytes), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 128, &dmap), TILE_OK);
    if (redirect) { /* the host's map of another buffer, in global memory: the kernel points it at the source */
        _Alignas(64) uint8_t map[128];
        uint64_t strides[1] = {pitch};
        uint32_t estr[2] = {1, 1};
        cr_assert_eq(tile_tensor_map_encode(ctx, map, c->dtype, 2, dother, c->dims, strides, c->box, estr, c->swz), TILE_OK, "%s",
                     tile_last_error(ctx));
        cr_assert_eq(tile_memcpy_htod(ctx, dmap, map, sizeof map), TILE_OK);
    } else {
        cr_assert_eq(tile_memset(ctx, dmap, 0xA5, 128), TILE_OK); /* whatever was there is overwritten whole */
    }
    uint32_t n[3] = {c->box[0], c->box[1], 1};
    unsigned nbytes = n[0] * n[1] * es;
    cr_assert_eq(tile_malloc(ctx, nbytes, &dio), TILE_OK);
    cr_assert_eq(tile_memset(ctx, dio, 0xEE, nbytes), TILE_OK);
    char *ptx = built_map_ptx(fields, redirect);
    check_ptxas(ptx);
    tile_module *m;
    cr_assert_eq(tile_module_load_ptx(ctx, ptx, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(m, "tb", &k), TILE_OK);
    uint32_t d0 = (uint32_t)c->dims[0], d1 = (uint32_t)c->dims[1];
    uint64_t pitch64 = pitch;
    void *args[] = {&dio, &dsrc, &dmap, (void *)&c->c[0], (void *)&c->c[1], &d0, &d1, &pitch64, &nbytes};
    cr_assert_eq(tile_launch_raw(k, (tile_dim3){1, 1, 1}, (tile_dim3){128, 1, 1}, 0, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    uint8_t *got = malloc(nbytes);
    cr_assert_eq(tile_memcpy_dtoh(ctx, got, dio, nbytes), TILE_OK);
    for (unsigned i1 = 0; i1 < n[1]; i1++)
        for (unsigned i0 = 0; i0 < n[0]; i0++) {
            int64_t x0 = c->c[0] + (int64_t)i0, x1 = c->c[1] + (int64_t)i1;
            bool inside = x0 >= 0 && (uint64_t)x0 < c->dims[0] && x1 >= 0 && (uint64_t)x1 < c->dims[1];
            size_t so = tma_smem_offset(c, n, es, i0, i1, 0);
            uint16_t want = inside ? (uint16_t)(g[(size_t)x1 * pitch + (size_t)x0 * es] | g[(size_t)x1 * pitch + (size_t)x0 * es + 1] << 8)
                                   : nan_fill ? 0x7FFF : 0;
            uint16_t v = (uint16_t)(got[so] | got[so + 1] << 8);
            if (!inside && nan_fill) cr_assert((v & 0x7C00) == 0x7C00 && (v & 0x3FF), "(%u, %u) outside: %#x is not an f16 NaN", i0, i1, v);
            else cr_assert_eq(v, want, "(%u, %u) at (%lld, %lld): %#x, want %#x", i0, i1, (long long)x0, (long long)x1, v, want);
        }
    tile_module_unload(m);
    tile_free(ctx, dsrc), tile_free(ctx, dother), tile_free(ctx, dmap), tile_free(ctx, dio);
    free(g), free(got), free(ptx);
}

Test(tma, map_built_on_the_device, .timeout = 300) {
    seed_rng();
    tile_context *ctx;
    cr_assert_eq(tile_context_create("emu:sm_90a", &ctx), TILE_OK);
    /* 64-byte swizzle: boxes of 32 f16 x 6 rows, at the tensor's edges and inside */
    TmaCase c = {TILE_F16, 2, {70, 19}, 72, {32, 6}, {0}, TILE_SWIZZLE_64B, {48, 16}};
    const char *f16 = "  tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [%rd4], 6;\n";
    const char *f16_nan = "  tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [%rd4], 6;\n"
                          "  tensormap.replace.tile.fill_mode.shared::cta.b1024.b32 [%rd4], 1;\n";
    built_map_case(ctx, &c, f16, false, false);
    built_map_case(ctx, &c, f16_nan, true, false);
    c.c[0] = -8, c.c[1] = -2;
    built_map_case(ctx, &c, f16_nan, true, false);
    c.c[0] = 16, c.c[1] = 4;
    built_map_case(ctx, &c, "  tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [%rd4], 1;\n", false, false); /* u16 */
    c.c[0] = 56, c.c[1] = 15;
    built_map_case(ctx, &c, "", false, true); /* the host's map, redirected in global memory */
    tile_context_destroy(ctx);
}

Test(tma, map_built_on_the_device_errors) {
    TileDevice *d = open_emu(false);
    uint64_t src = poisoned(d, 4096), gmap;
    cr_assert_eq(dev_malloc(d, 256, &gmap), DEV_OK);
    struct { const char *fields, *want; } cases[] = {
        {"  tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%rd4], 1, 300;\n", "a box extent is not in 1..256"},
        {"  tensormap.replace.tile.rank.shared::cta.b1024.b32 [%rd4], 5;\n", "the rank minus one"},
        {"  tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [%rd4], 1;\n"
         "  tensormap.replace.tile.fill_mode.shared::cta.b1024.b32 [%rd4], 1;\n", "NaN fill needs a floating-point element type"},
        {"  tensormap.replace.tile.interleave_layout.shared::cta.b1024.b32 [%rd4], 1;\n", "interleaved tensor maps are not supported"},
        {"  tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%rd4], 0, 0;\n", "an element stride is not in 1..8"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char *ptx = built_map_ptx(cases[i].fields, false);
        check_ptxas(ptx);
        TileDevModule *m;
        TileDevFunction *f = load(d, ptx, "tb", &m);
        uint64_t io = src + 2048, pitch = 144;
        uint32_t c0 = 0, c1 = 0, d0 = 70, d1 = 19, nbytes = 384;
        void *args[] = {&io, &src, &gmap, &c0, &c1, &d0, &d1, &pitch, &nbytes};
        expect_launch_error(d, f, 128, args, cases[i].want, NULL);
        dev_module_unload(m);
        free(ptx);
    }
#define TM_KERNEL(body) PTX_HEAD ".visible .entry k()\n{\n  .reg .b32 %r<4>;\n  .reg .b64 %rd<4>;\n" body "  ret;\n}\n"
    expect_load_error(d, TM_KERNEL("  tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%rd1], %r1, 32;\n"),
                      "the dimension (ord) must be an immediate 0..4");
    expect_load_error(d, TM_KERNEL("  tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%rd1], 4, %rd2;\n"),
                      "the dimension (ord) must be an immediate 0..3");
    expect_load_error(d, TM_KERNEL("  tensormap.replace.tile.global_address.shared::cta.b1024.b32 [%rd1], %r1;\n"), "needs .b1024.b64");
    expect_load_error(d, TM_KERNEL("  tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [%rd1], 13;\n"), "is not one of 0..12");
    expect_load_error(d, TM_KERNEL("  tensormap.replace.tile.shared::cta.b1024.b32 [%rd1], %r1;\n"), "which tensor-map field");
    expect_load_error(d, TM_KERNEL("  tensormap.replace.tile.rank.box_dim.shared::cta.b1024.b32 [%rd1], 0, %r1;\n"), "two tensor-map fields");
    expect_load_error(d, TM_KERNEL("  tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd1], [%rd2], 64;\n"),
                      "the size must be the immediate 128");
    expect_load_error(d, TM_KERNEL("  tensormap.cp_fenceproxy.shared::cta.global.tensormap::generic.release.gpu.sync.aligned [%rd1], [%rd2], 128;\n"),
                      "(.global.shared::cta)");
#undef TM_KERNEL
    dev_close(d);
}

/* Transaction counts, arrive_drop, noComplete, the cluster form: one thread records test_wait answers
 * (then a noComplete arrival that would complete a phase is an error). */

/* ==== 6. everything together: a pipelined GEMM as the compiler will emit it for sm_90a ====
 * D (M x N, f32) = A (M x K, bf16, row-major) * B^T (B: N x K, bf16, row-major), M = 50, N = 40, K = 200 in
 * one 64 x 64 tile: warpgroup 1 (its first thread) loads 64 x 64 k-tiles of A and B with TMA (128B swizzle,
 * out-of-bounds rows and columns zero) into a 2-stage ring, completing tx bytes on full[s]; warpgroup 0 waits
 * on full[s], runs 4 chained wgmma k-steps on the stage (descriptors 32 bytes apart), retires them, arrives on
 * empty[s]; the producer waits on empty[s] before it reuses a stage. */
static char *pipelined_gemm_ptx(void) {
    Str s = {0};
    str_printf(&s, PTX_HEAD ".visible .entry gemm(.param .align 64 .b8 tmA[128], .param .align 64 .b8 tmB[128], .param .u64 D,"
                            " .param .u32 M, .param .u32 N, .param .u32 ktiles)\n{\n"
                            "  .reg .pred %%p<8>;\n  .reg .b32 %%r<40>;\n  .reg .b64 %%rd<20>;\n  .reg .f32 %%d<32>;\n"
                            "  .shared .align 1024 .b8 sA[16384];\n  .shared .align 1024 .b8 sB[16384];\n"
                            "  .shared .align 8 .b64 full[2];\n  .shared .align 8 .b64 empty[2];\n"
                            "  mov.u32 %%r0, %%tid.x;\n  ld.param.u32 %%r30, [ktiles];\n  ld.param.u32 %%r31, [M];\n  ld.param.u32 %%r32, [N];\n"
                            "  ld.param.u64 %%rd10, [D];\n"
                            "  mov.u32 %%r1, full;\n  mov.u32 %%r2, empty;\n  mov.u32 %%r3, sA;\n  mov.u32 %%r4, sB;\n"
                            "  setp.ne.u32 %%p0, %%r0, 0;\n  @%%p0 bra $I;\n"
                            "  mbarrier.init.shared::cta.b64 [%%r1], 1;\n  mbarrier.init.shared::cta.b64 [%%r1+8], 1;\n"
                            "  mbarrier.init.shared::cta.b64 [%%r2], 128;\n  mbarrier.init.shared::cta.b64 [%%r2+8], 128;\n"
                            "  fence.mbarrier_init.release.cluster;\n$I:\n  bar.sync 0;\n  mov.u32 %%r10, 0;\n"
                            "  setp.lt.u32 %%p1, %%r0, 128;\n  @%%p1 bra $CONS;\n"
                            /* producer */
                            "  setp.ne.u32 %%p2, %%r0, 128;\n  @%%p2 bra $END;\n  mov.u64 %%rd1, tmA;\n  mov.u64 %%rd2, tmB;\n"
                            "$PL:\n  setp.ge.u32 %%p3, %%r10, %%r30;\n  @%%p3 bra $END;\n  and.b32 %%r11, %%r10, 1;\n  shr.u32 %%r12, %%r10, 1;\n"
                            "  setp.eq.u32 %%p4, %%r12, 0;\n  @%%p4 bra $PI;\n  add.u32 %%r13, %%r12, 1;\n  and.b32 %%r13, %%r13, 1;\n"
                            "  mad.lo.u32 %%r14, %%r11, 8, %%r2;\n"
                            "$PW:\n  mbarrier.try_wait.parity.shared::cta.b64 %%p5, [%%r14], %%r13;\n  @!%%p5 bra $PW;\n"
                            "$PI:\n  mad.lo.u32 %%r15, %%r11, 8, %%r1;\n  mbarrier.arrive.expect_tx.shared::cta.b64 %%rd3, [%%r15], 16384;\n"
                            "  mad.lo.u32 %%r16, %%r11, 8192, %%r3;\n  mad.lo.u32 %%r17, %%r11, 8192, %%r4;\n  shl.b32 %%r18, %%r10, 6;\n"
                            "  mov.u32 %%r19, 0;\n"
                            "  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%%r16], [%%rd1, {%%r18, %%r19}], [%%r15];\n"
                            "  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%%r17], [%%rd2, {%%r18, %%r19}], [%%r15];\n"
                            "  add.u32 %%r10, %%r10, 1;\n  bra $PL;\n"
                            /* consumer */
                            "$CONS:\n  setp.ne.u32 %%p6, %%r0, %%r0;\n"
                            "$CL:\n  setp.ge.u32 %%p3, %%r10, %%r30;\n  @%%p3 bra $STORE;\n  and.b32 %%r11, %%r10, 1;\n  shr.u32 %%r12, %%r10, 1;\n"
                            "  and.b32 %%r13, %%r12, 1;\n  mad.lo.u32 %%r15, %%r11, 8, %%r1;\n"
                            "$CW:\n  mbarrier.try_wait.parity.shared::cta.b64 %%p5, [%%r15], %%r13;\n  @!%%p5 bra $CW;\n"
                            "  mad.lo.u32 %%r16, %%r11, 8192, %%r3;\n  shr.u32 %%r16, %%r16, 4;\n  cvt.u64.u32 %%rd4, %%r16;\n"
                            "  or.b64 %%rd4, %%rd4, 0x4000004000010000;\n"
                            "  mad.lo.u32 %%r17, %%r11, 8192, %%r4;\n  shr.u32 %%r17, %%r17, 4;\n  cvt.u64.u32 %%rd5, %%r17;\n"
                            "  or.b64 %%rd5, %%rd5, 0x4000004000010000;\n  wgmma.fence.sync.aligned;\n");
    Str dv = {0};
    str_putc(&dv, '{');
    for (unsigned r = 0; r < 32; r++) str_printf(&dv, "%s%%d%u", r ? ", " : "", r);
    str_putc(&dv, '}');
    for (unsigned j = 0; j < 4; j++)
        str_printf(&s, "  wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 %s, %%rd4, %%rd5, %%p6, 1, 1, 0, 0;\n"
                       "  setp.eq.u32 %%p6, %%r0, %%r0;\n  add.u64 %%rd4, %%rd4, 2;\n  add.u64 %%rd5, %%rd5, 2;\n", dv.buf);
    str_free(&dv);
    str_printf(&s, "  wgmma.commit_group.sync.aligned;\n  wgmma.wait_group.sync.aligned 0;\n  mad.lo.u32 %%r14, %%r11, 8, %%r2;\n"
                   "  mbarrier.arrive.shared::cta.b64 %%rd6, [%%r14];\n  add.u32 %%r10, %%r10, 1;\n  bra $CL;\n"
                   "$STORE:\n  shr.u32 %%r20, %%r0, 5;\n  shl.b32 %%r20, %%r20, 4;\n  and.b32 %%r21, %%r0, 31;\n  shr.u32 %%r22, %%r21, 2;\n"
                   "  add.u32 %%r20, %%r20, %%r22;\n  and.b32 %%r21, %%r21, 3;\n  shl.b32 %%r21, %%r21, 1;\n");
    for (unsigned r = 0; r < 32; r++)
        str_printf(&s, "  add.u32 %%r23, %%r20, %u;\n  add.u32 %%r24, %%r21, %u;\n  setp.lt.u32 %%p7, %%r23, %%r31;\n"
                       "  setp.lt.and.u32 %%p7, %%r24, %%r32, %%p7;\n  mad.lo.u32 %%r25, %%r23, %%r32, %%r24;\n  mul.wide.u32 %%rd7, %%r25, 4;\n"
                       "  add.u64 %%rd8, %%rd10, %%rd7;\n  @%%p7 st.global.f32 [%%rd8], %%d%u;\n",
                   8 * ((r >> 1) & 1), 8 * (r >> 2) + (r & 1), r);
    str_printf(&s, "$END:\n  ret;\n}\n");
    return str_take(&s);
}

Test(together, tma_mbarrier_wgmma_pipeline, .timeout = 300) {
    seed_rng();
    enum { M = 50, N = 40, K = 200 };
    tile_context *ctx;
    tile_context_options o = {.size = sizeof o, .device = "emu:sm_90a", .emu_racecheck = 1};
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK, "%s", tile_last_error(NULL));
    static uint16_t a[M * K], b[N * K];
    static double av[M * K], bv[N * K];
    for (unsigned i = 0; i < M * K; i++) { float f = (float)(irand(33) - 16) / 8; a[i] = f32_to_bf16(f); av[i] = f; }
    for (unsigned i = 0; i < N * K; i++) { float f = (float)(irand(33) - 16) / 8; b[i] = f32_to_bf16(f); bv[i] = f; }
    tile_devptr da, db, dd;
    cr_assert_eq(tile_malloc(ctx, sizeof a, &da), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof b, &db), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, M * N * 4, &dd), TILE_OK);
    tile_memcpy_htod(ctx, da, a, sizeof a);
    tile_memcpy_htod(ctx, db, b, sizeof b);
    tile_memset(ctx, dd, 0xFF, M * N * 4);
    _Alignas(64) uint8_t ma[128], mb[128];
    uint64_t dimsA[2] = {K, M}, dimsB[2] = {K, N}, stride[1] = {K * 2};
    uint32_t box[2] = {64, 64};
    cr_assert_eq(tile_tensor_map_encode(ctx, ma, TILE_BF16, 2, da, dimsA, stride, box, NULL, TILE_SWIZZLE_128B), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_tensor_map_encode(ctx, mb, TILE_BF16, 2, db, dimsB, stride, box, NULL, TILE_SWIZZLE_128B), TILE_OK, "%s", tile_last_error(ctx));
    char *ptx = pipelined_gemm_ptx();
    check_ptxas(ptx);
    tile_module *m;
    cr_assert_eq(tile_module_load_ptx(ctx, ptx, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(m, "gemm", &k), TILE_OK);
    unsigned mm = M, nn = N, kt = (K + 63) / 64;
    void *args[] = {ma, mb, &dd, &mm, &nn, &kt};
    cr_assert_eq(tile_launch_raw(k, (tile_dim3){1, 1, 1}, (tile_dim3){256, 1, 1}, 0, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    static float d[M * N];
    tile_memcpy_dtoh(ctx, d, dd, sizeof d);
    for (unsigned i = 0; i < M; i++)
        for (unsigned j = 0; j < N; j++) {
            double ref = 0;
            for (unsigned q = 0; q < K; q++) ref += av[i * K + q] * bv[j * K + q];
            cr_assert_eq(d[i * N + j], (float)ref, "D[%u][%u] = %g, want %g", i, j, d[i * N + j], ref);
        }
    tile_module_unload(m);
    free(ptx);
    tile_context_destroy(ctx);
}

/* A box smaller than its swizzle's span: a 64-byte u8 box (4 rows of 16) under the 128-byte swizzle stays in
 * place (its chunks' XOR comes from address bits 7-9, all 0) and fits a 64-byte buffer at the end of shared
 * memory; memcheck took the whole 128-byte span as written. */
static const char *small_box_ptx = PTX_HEAD
    ".visible .entry k(.param .align 64 .b8 tmap[128], .param .u64 out)\n"
    "{\n"
    "  .reg .pred %p<3>;\n"
    "  .reg .b32 %r<8>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  .shared .align 8 .b64 bar;\n"
    "  .shared .align 1024 .b8 sbuf[64];\n"
    "  ld.param.u64 %rd2, [out];\n"
    "  mov.u64 %rd1, tmap;\n"
    "  mbarrier.init.shared::cta.b64 [bar], 1;\n"
    "  fence.mbarrier_init.release.cluster;\n"
    "  mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], 64;\n"
    "  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [sbuf], [%rd1, {16, 1}], [bar];\n"
    "$W:\n"
    "  mbarrier.try_wait.parity.shared::cta.b64 %p1, [bar], 0;\n"
    "  @!%p1 bra $W;\n"
    "  mov.u32 %r5, 0;\n"
    "$C:\n"
    "  mov.u32 %r6, sbuf;\n"
    "  add.u32 %r6, %r6, %r5;\n"
    "  ld.shared.u32 %r7, [%r6];\n"
    "  cvt.u64.u32 %rd3, %r5;\n"
    "  add.u64 %rd3, %rd3, %rd2;\n"
    "  st.global.u32 [%rd3], %r7;\n"
    "  add.u32 %r5, %r5, 4;\n"
    "  setp.lt.u32 %p2, %r5, 64;\n"
    "  @%p2 bra $C;\n"
    "  ret;\n"
    "}\n";

Test(tma, box_smaller_than_its_swizzle_span) {
    tile_context *ctx;
    cr_assert_eq(tile_context_create("emu:sm_90a", &ctx), TILE_OK);
    check_ptxas(small_box_ptx);
    enum { W = 48, H = 9 }; /* rows of 48 bytes: strides are multiples of 16 */
    uint8_t g[H][W], got[64];
    for (int r = 0; r < H; r++)
        for (int c = 0; c < W; c++) g[r][c] = (uint8_t)(r * 41 + c * 7 + 3);
    tile_devptr dg, dout;
    cr_assert_eq(tile_malloc(ctx, sizeof g, &dg), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, dg, g, sizeof g), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof got, &dout), TILE_OK);
    cr_assert_eq(tile_memset(ctx, dout, 0xEE, sizeof got), TILE_OK);
    _Alignas(64) uint8_t map[128];
    const uint64_t dims[2] = {W, H}, strides[1] = {W};
    const uint32_t box[2] = {16, 4};
    cr_assert_eq(tile_tensor_map_encode(ctx, map, TILE_U8, 2, dg, dims, strides, box, NULL, TILE_SWIZZLE_128B), TILE_OK, "%s",
                 tile_last_error(ctx));
    tile_module *m;
    tile_kernel *k;
    cr_assert_eq(tile_module_load_ptx(ctx, small_box_ptx, &m), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_module_get_kernel(m, "k", &k), TILE_OK);
    void *args[] = {map, &dout};
    cr_assert_eq(tile_launch_raw(k, (tile_dim3){1, 1, 1}, (tile_dim3){1, 1, 1}, 0, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, got, dout, sizeof got), TILE_OK);
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 16; c++) cr_expect_eq(got[r * 16 + c], g[1 + r][16 + c], "box (%d, %d)", r, c);
    tile_module_unload(m);
    tile_context_destroy(ctx);
}

/* A map holds an address of the context that encoded it: launched on another context, the copy reads memory that
 * context does not have, and the launch fails with a memcheck report naming the address (not the other
 * context's data, nor a crash).  The output stays as it was. */
Test(tma, map_of_another_context) {
    tile_context *a, *b;
    cr_assert_eq(tile_context_create("emu:sm_90a", &a), TILE_OK);
    cr_assert_eq(tile_context_create("emu:sm_90a", &b), TILE_OK);
    tile_devptr ga, gb, dio;
    cr_assert_eq(tile_malloc(a, 4096, &ga), TILE_OK);
    cr_assert_eq(tile_malloc(b, 4096, &gb), TILE_OK);
    cr_assert_eq(tile_malloc(b, 128, &dio), TILE_OK);
    cr_assert_eq(tile_memset(b, gb, 0x11, 4096), TILE_OK);
    cr_assert_eq(tile_memset(b, dio, 0xEE, 128), TILE_OK);
    _Alignas(64) uint8_t map[128];
    uint64_t dims[2] = {16, 16}, strides[1] = {64};
    cr_assert_eq(tile_tensor_map_encode(a, map, TILE_F32, 2, ga, dims, strides, (uint32_t[]){8, 4}, NULL, TILE_SWIZZLE_NONE), TILE_OK,
                 "%s", tile_last_error(a));
    char *ptx = tma_ptx(2, false);
    tile_module *m;
    cr_assert_eq(tile_module_load_ptx(b, ptx, &m), TILE_OK, "%s", tile_last_error(b));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(m, "t", &k), TILE_OK);
    int32_t c0 = 0, c1 = 0, c2 = 0;
    unsigned nbytes = 128;
    tile_devptr gmap = 0;
    void *args[] = {map, &c0, &c1, &c2, &nbytes, &nbytes, &dio, &gmap};
    cr_assert_eq(tile_launch_raw(k, (tile_dim3){1, 1, 1}, (tile_dim3){128, 1, 1}, 0, args, NULL), TILE_ERROR_LAUNCH);
    char want[64];
    snprintf(want, sizeof want, "address 0x%llx is not in any device allocation", (unsigned long long)ga);
    cr_assert(strstr(tile_last_error(b), "memcheck") && strstr(tile_last_error(b), want), "%s", tile_last_error(b));
    uint8_t out[128];
    cr_assert_eq(tile_memcpy_dtoh(b, out, dio, sizeof out), TILE_OK);
    for (int i = 0; i < 128; i++) cr_assert_eq(out[i], 0xEE, "out[%d] = %#x", i, out[i]);
    tile_module_unload(m);
    free(ptx);
    tile_context_destroy(b);
    tile_context_destroy(a);
}
