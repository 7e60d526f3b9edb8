/* test_emu_im2col.c - im2col tensor maps and copies on emu:sm_90a, checked against a convolution's im2col matrix.
 *
 *   conv_loads        cp.async.bulk.tensor.{3,4,5}d .im2col loads of NWC / NHWC / NDHWC f32 activations for random
 *                     convolutions (padding at both ends, stride 1..3 as the traversal stride, dilation through the
 *                     im2col offsets of a random filter tap), every swizzle, zero and NaN fill: each element of the
 *                     shared tile against the host's im2col matrix, out-of-bounds elements against the fill value
 *   conv_stores       .im2col_no_offs stores and .add reductions of a shared tile back into the tensor: the elements
 *                     the matrix's rows name are written (added), the others and the out-of-bounds ones untouched
 *   encode_errors     tile_tensor_map_encode_im2col refuses what cuTensorMapEncodeIm2col documents as invalid
 *   form_errors       the .im2col forms ptxas refuses are refused at load, with their line; the multicast and
 *                     cache-hint forms load
 *   mode_mismatch     a tiled copy through an im2col map and an im2col copy through a tiled one fail the launch
 *   multicast         an .im2col load multicast to both CTAs of clusters of 2
 *   traversal_by_hand W and N traversal strides, the wrap, an offset past the edge, written out by hand
 *   hardware_examples five loads whose results on Hopper Triton's Gluon im2col tutorial states (corners, offsets
 *                     moving the window, the traversal running into the next image and restarting in the padding)
 *
 * The reference is the convolution's definition, not the traversal: for the im2col matrix of a convolution with
 * padding pad_lo / pad_hi, stride S and dilation L, row m = (n, o_D, o_H, o_W) (W fastest) of filter tap r holds
 * X[n][o*S - pad_lo + r*L][c0 ..].  A map with lower corner -pad_lo, upper corner pad_hi - (R - 1)*L and traversal
 * strides S, loaded from the pixel of row m0 with offsets r*L, must give rows m0 .. m0 + pixels - 1 (the PTX ISA's
 * im2col mode: the bounding box traversed W first, wrapping to its lower corner, then the next image).
 * Every kernel is checked by ptxas -arch=sm_90a when it is installed. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/tile/tile.h"
#include "support/support.h"
#include "test_emu_sm90.h"
#include "test_rng.h"

/* mode 0: load (the tile to io), 1: store (io to the tile, then to the tensor), 2: .add reduction; a prefetch of the
 * same pixels first.  Parameters: the map, five coordinates, three offsets, the tile's bytes, the bytes its swizzle
 * reaches (whole 1024-byte groups: a last group the tile fills in part has its chunks anywhere in the group), io,
 * mode. */
static char *im2col_ptx(unsigned rank) {
    static const char *const cs[] = {"%r1", "%r2", "%r3", "%r4", "%r5"}, *const os[] = {"%rs1", "%rs2", "%rs3"};
    char c[64] = "", o[32] = "";
    for (unsigned d = 0; d < rank; d++) snprintf(c + strlen(c), sizeof c - strlen(c), "%s%s", d ? ", " : "", cs[d]);
    for (unsigned k = 0; k + 2 < rank; k++) snprintf(o + strlen(o), sizeof o - strlen(o), "%s%s", k ? ", " : "", os[k]);
    Str s = {0};
    str_printf(&s,
               PTX_HEAD ".visible .entry k(.param .align 64 .b8 tmap[128], .param .u32 c0, .param .u32 c1, .param .u32 c2,"
               " .param .u32 c3, .param .u32 c4, .param .u16 o0, .param .u16 o1, .param .u16 o2, .param .u32 nbytes, .param .u32 cbytes,"
               " .param .u64 io, .param .u32 mode)\n{\n"
               "  .reg .pred %%p<4>;\n  .reg .b16 %%rs<4>;\n  .reg .b32 %%r<20>;\n  .reg .b64 %%rd<8>;\n"
               "  .shared .align 1024 .b8 smem[40960];\n  .shared .align 8 .b64 mbar;\n"
               "  mov.u64 %%rd1, tmap;\n"
               "  ld.param.u32 %%r1, [c0];\n  ld.param.u32 %%r2, [c1];\n  ld.param.u32 %%r3, [c2];\n"
               "  ld.param.u32 %%r4, [c3];\n  ld.param.u32 %%r5, [c4];\n"
               "  ld.param.u16 %%rs1, [o0];\n  ld.param.u16 %%rs2, [o1];\n  ld.param.u16 %%rs3, [o2];\n"
               "  ld.param.u32 %%r6, [nbytes];\n  ld.param.u32 %%r13, [cbytes];\n  ld.param.u64 %%rd2, [io];\n  cvta.to.global.u64 %%rd2, %%rd2;\n"
               "  ld.param.u32 %%r12, [mode];\n"
               "  mov.u32 %%r10, smem;\n  mov.u32 %%r11, mbar;\n"
               "  cp.async.bulk.prefetch.tensor.%ud.L2.global.im2col [%%rd1, {%s}], {%s};\n"
               "  setp.ne.u32 %%p3, %%r12, 0;\n  @%%p3 bra $STORE;\n"
               "  mbarrier.init.shared::cta.b64 [%%r11], 1;\n  fence.mbarrier_init.release.cluster;\n"
               "  mbarrier.arrive.expect_tx.shared::cta.b64 %%rd3, [%%r11], %%r6;\n"
               "  cp.async.bulk.tensor.%ud.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%%r10], [%%rd1, {%s}], [%%r11], {%s};\n"
               "$W:\n  mbarrier.try_wait.parity.shared::cta.b64 %%p1, [%%r11], 0;\n  @!%%p1 bra $W;\n"
               "  mov.u32 %%r7, 0;\n"
               "$L:\n  setp.ge.u32 %%p2, %%r7, %%r13;\n  @%%p2 bra $END;\n"
               "  add.u32 %%r8, %%r10, %%r7;\n  ld.shared.u32 %%r9, [%%r8];\n"
               "  cvt.u64.u32 %%rd4, %%r7;\n  add.u64 %%rd5, %%rd2, %%rd4;\n  st.global.u32 [%%rd5], %%r9;\n"
               "  add.u32 %%r7, %%r7, 4;\n  bra $L;\n"
               "$STORE:\n  mov.u32 %%r7, 0;\n"
               "$S:\n  setp.ge.u32 %%p2, %%r7, %%r13;\n  @%%p2 bra $GO;\n"
               "  cvt.u64.u32 %%rd4, %%r7;\n  add.u64 %%rd5, %%rd2, %%rd4;\n  ld.global.u32 %%r9, [%%rd5];\n"
               "  add.u32 %%r8, %%r10, %%r7;\n  st.shared.u32 [%%r8], %%r9;\n"
               "  add.u32 %%r7, %%r7, 4;\n  bra $S;\n"
               "$GO:\n  fence.proxy.async.shared::cta;\n  setp.eq.u32 %%p3, %%r12, 2;\n  @%%p3 bra $RED;\n"
               "  cp.async.bulk.tensor.%ud.global.shared::cta.im2col_no_offs.bulk_group [%%rd1, {%s}], [%%r10];\n  bra $WAIT;\n"
               "$RED:\n  cp.reduce.async.bulk.tensor.%ud.global.shared::cta.add.im2col_no_offs.bulk_group [%%rd1, {%s}], [%%r10];\n"
               "$WAIT:\n  cp.async.bulk.commit_group;\n  cp.async.bulk.wait_group 0;\n"
               "$END:\n  ret;\n}\n",
               rank, c, o, rank, c, o, rank, c, rank, c);
    return s.buf;
}

/* A convolution over an N x [D x] [H x] W x C tensor of f32 (dims innermost first: C, W, H, D, N). */
typedef struct Conv {
    unsigned rank, ns;           /* 3..5; spatial dimensions rank - 2 (0: W) */
    uint64_t dims[5];            /* C, spatial W first, N */
    int64_t pad_lo[3], pad_hi[3];
    unsigned filt[3], stride[3], dil[3];
    uint64_t out[3];             /* output extent per spatial dimension */
} Conv;

static uint64_t conv_rows(const Conv *cv) {
    uint64_t m = cv->dims[cv->rank - 1];
    for (unsigned k = 0; k < cv->ns; k++) m *= cv->out[k];
    return m;
}

/* The tensor element row m of the im2col matrix of tap `tap` (per spatial dimension) and channel c reads: its
 * element index into the tensor, or -1 outside it (padding, past the last image or channel). */
static int64_t im2col_elem(const Conv *cv, uint64_t m, const unsigned tap[3], int64_t c) {
    int64_t x[5];
    x[0] = c;
    for (unsigned k = 0; k < cv->ns; k++) {
        uint64_t o = m % cv->out[k];
        m /= cv->out[k];
        x[k + 1] = (int64_t)(o * cv->stride[k]) - cv->pad_lo[k] + (int64_t)(tap[k] * cv->dil[k]);
    }
    x[cv->rank - 1] = (int64_t)m;
    int64_t idx = 0;
    for (int d = (int)cv->rank - 1; d >= 0; d--) {
        if (x[d] < 0 || (uint64_t)x[d] >= cv->dims[d]) return -1;
        idx = idx * (int64_t)cv->dims[d] + x[d];
    }
    return idx;
}

/* The ISA's swizzle of byte offset a within a 1024-aligned tile: 16-byte chunk bits 4.. XOR address bits 7.. */
static uint32_t swz(uint32_t a, unsigned mode) {
    static const uint32_t mask[4] = {0, 1, 3, 7};
    return a ^ (((a >> 7) & mask[mode]) << 4);
}

static void random_conv(Conv *cv, unsigned rank) {
    memset(cv, 0, sizeof *cv);
    cv->rank = rank;
    cv->ns = rank - 2;
    cv->dims[0] = 4 + (uint64_t)irand(40); /* channels: not a multiple of the 4-element rows */
    cv->dims[rank - 1] = 1 + (uint64_t)irand(3);
    int lim = rank == 3 ? 1000 : rank == 4 ? 120 : 14; /* the corners' ranges: -32768.., -128.., -16.. */
    for (unsigned k = 0; k < cv->ns; k++) {
        cv->dims[k + 1] = 2 + (uint64_t)irand(rank == 5 ? 5 : 9);
        cv->filt[k] = 1 + (unsigned)irand(3);
        cv->stride[k] = 1 + (unsigned)irand(3);
        cv->dil[k] = 1 + (unsigned)irand(2);
        int64_t span = (int64_t)(cv->filt[k] - 1) * cv->dil[k];
        for (;;) {
            cv->pad_lo[k] = irand(3);
            cv->pad_hi[k] = irand(4); /* past the end: upper = pad_hi - span may be positive */
            int64_t lower = -cv->pad_lo[k], upper = cv->pad_hi[k] - span;
            if (upper >= -lim && upper < lim && lower >= -lim && (int64_t)cv->dims[k + 1] - 1 + upper >= lower) break;
        }
        cv->out[k] = (uint64_t)(((int64_t)cv->dims[k + 1] - 1 + cv->pad_lo[k] + cv->pad_hi[k] - (int64_t)(cv->filt[k] - 1) * cv->dil[k]) /
                                cv->stride[k] + 1);
    }
}

typedef struct Fix {
    tile_context *ctx;
    tile_kernel *k[6];
} Fix;

static tile_kernel *kernel_for(Fix *fx, unsigned rank) {
    if (!fx->k[rank]) {
        char *ptx = im2col_ptx(rank);
        check_ptxas(ptx);
        tile_module *m;
        cr_assert_eq(tile_module_load_ptx(fx->ctx, ptx, &m), TILE_OK, "%s\n%s", tile_last_error(fx->ctx), ptx);
        cr_assert_eq(tile_module_get_kernel(m, "k", &fx->k[rank]), TILE_OK);
        free(ptx);
    }
    return fx->k[rank];
}

/* One copy through a fresh map of cv: mode 0 load, 1 store, 2 .add; every element checked. */
static void run_case(Fix *fx, const Conv *cv, unsigned mode, unsigned swizzle, int nan_fill) {
    tile_context *ctx = fx->ctx;
    unsigned rank = cv->rank, ns = cv->ns;
    uint64_t nel = 1;
    for (unsigned d = 0; d < rank; d++) nel *= cv->dims[d];
    static const unsigned maxc[4] = {256, 8, 16, 32}; /* f32 channels within the swizzle's span */
    unsigned cpp = 4 * (1 + (unsigned)irand((int)maxc[swizzle] / 4 < 12 ? (int)maxc[swizzle] / 4 : 12));
    uint64_t rows = conv_rows(cv);
    unsigned ppc = 1 + (unsigned)irand(rows + 6 < 200 ? (int)rows + 6 : 200); /* may run past the last image */
    uint64_t m0 = (uint64_t)irand((int)rows);
    int64_t c0 = irand(3) == 0 ? -(int64_t)irand(8) : irand((int)cv->dims[0]); /* channels before 0 or past C too */
    unsigned tap[3] = {0, 0, 0};
    if (mode == 0)
        for (unsigned k = 0; k < ns; k++) tap[k] = (unsigned)irand((int)cv->filt[k]);
    uint32_t nbytes = cpp * ppc * 4, cbytes = (nbytes + 1023) / 1024 * 1024;
    uint32_t *x = malloc(nel * 4), *tile = malloc(cbytes), *io = malloc(cbytes), *got = malloc(nel * 4);
    for (uint64_t i = 0; i < nel; i++) { float f = (float)(irand(2000) - 1000); memcpy(&x[i], &f, 4); }
    tile_devptr dx, dio;
    cr_assert_eq(tile_malloc(ctx, nel * 4, &dx), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, cbytes, &dio), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, dx, x, nel * 4), TILE_OK);
    uint64_t strides[4];
    uint64_t acc = 4;
    for (unsigned d = 1; d < rank; d++) strides[d - 1] = acc *= cv->dims[d - 1];
    int32_t lower[3], upper[3];
    uint32_t estr[5] = {1, 1, 1, 1, 1};
    for (unsigned k = 0; k < ns; k++) {
        lower[k] = (int32_t)-cv->pad_lo[k];
        upper[k] = (int32_t)(cv->pad_hi[k] - (int64_t)(cv->filt[k] - 1) * cv->dil[k]);
        estr[k + 1] = cv->stride[k];
    }
    _Alignas(64) uint8_t map[128];
    cr_assert_eq(tile_tensor_map_encode_im2col(ctx, map, TILE_F32, (int)rank, dx, cv->dims, strides, lower, upper, cpp, ppc, estr,
                                               (tile_tensor_swizzle)swizzle, nan_fill),
                 TILE_OK, "%s", tile_last_error(ctx));
    /* the coordinates of row m0's pixel: the filter's origin (offset 0) */
    int32_t c[5] = {(int32_t)c0, 0, 0, 0, 0};
    uint64_t m = m0;
    for (unsigned k = 0; k < ns; k++) {
        c[k + 1] = (int32_t)((int64_t)(m % cv->out[k] * cv->stride[k]) - cv->pad_lo[k]);
        m /= cv->out[k];
    }
    c[rank - 1] = (int32_t)m;
    uint16_t off[3] = {0, 0, 0};
    for (unsigned k = 0; k < ns; k++) off[k] = (uint16_t)(tap[k] * cv->dil[k]);
    for (uint32_t i = 0; i < cbytes / 4; i++) { /* loads: poison; stores: the tile, small floats (exact sums) */
        float f = (float)(irand(100) + 1);
        if (mode) memcpy(&io[i], &f, 4);
        else io[i] = 0xDEADBEEFu;
    }
    cr_assert_eq(tile_memcpy_htod(ctx, dio, io, cbytes), TILE_OK);
    void *args[] = {map, &c[0], &c[1], &c[2], &c[3], &c[4], &off[0], &off[1], &off[2], &nbytes, &cbytes, &dio, &mode};
    cr_assert_eq(tile_launch_raw(kernel_for(fx, rank), (tile_dim3){1, 1, 1}, (tile_dim3){1, 1, 1}, 0, args, NULL), TILE_OK, "%s",
                 tile_last_error(ctx));
    char what[256];
    snprintf(what, sizeof what, "seed %llu rank %u mode %u swizzle %u fill %d: m0 %llu of %llu rows, %u pixels of %u channels from %lld",
             (unsigned long long)seed, rank, mode, swizzle, nan_fill, (unsigned long long)m0, (unsigned long long)rows, ppc, cpp,
             (long long)c0);
    if (mode == 0) {
        cr_assert_eq(tile_memcpy_dtoh(ctx, tile, dio, cbytes), TILE_OK);
        for (uint32_t p = 0; p < ppc; p++)
            for (uint32_t ch = 0; ch < cpp; ch++) {
                uint32_t at = swz((p * cpp + ch) * 4, swizzle) / 4;
                int64_t e = im2col_elem(cv, m0 + p, tap, c0 + ch);
                uint32_t want = e < 0 ? (nan_fill ? 0x7FFFFFFFu : 0) : x[e];
                cr_assert_eq(tile[at], want, "%s: row %u channel %u (tensor element %lld): 0x%08x, want 0x%08x", what, p, ch, (long long)e,
                             tile[at], want);
            }
    } else {
        /* the tile as the kernel wrote it (swizzled addresses): row p, channel ch is io[swz(..)] */
        cr_assert_eq(tile_memcpy_dtoh(ctx, got, dx, nel * 4), TILE_OK);
        uint32_t *want = malloc(nel * 4);
        memcpy(want, x, nel * 4);
        for (uint32_t p = 0; p < ppc; p++)
            for (uint32_t ch = 0; ch < cpp; ch++) {
                int64_t e = im2col_elem(cv, m0 + p, tap, c0 + ch);
                if (e < 0) continue;
                uint32_t v = io[swz((p * cpp + ch) * 4, swizzle) / 4];
                if (mode == 1) want[e] = v;
                else { float a, b; memcpy(&a, &want[e], 4); memcpy(&b, &v, 4); a += b; memcpy(&want[e], &a, 4); }
            }
        for (uint64_t i = 0; i < nel; i++) cr_assert_eq(got[i], want[i], "%s: tensor element %llu: 0x%08x, want 0x%08x", what,
                                                        (unsigned long long)i, got[i], want[i]);
        free(want);
    }
    tile_free(ctx, dx);
    tile_free(ctx, dio);
    free(x), free(tile), free(io), free(got);
}

static void fix_open(Fix *fx) {
    memset(fx, 0, sizeof *fx);
    cr_assert_eq(tile_context_create("emu:sm_90a", &fx->ctx), TILE_OK);
}

Test(im2col, conv_loads) {
    seed_rng();
    Fix fx;
    fix_open(&fx);
    for (unsigned it = 0; it < 60; it++) {
        Conv cv;
        random_conv(&cv, 3 + it % 3);
        cv.dims[0] = (cv.dims[0] + 3) / 4 * 4;
        run_case(&fx, &cv, 0, (unsigned)irand(4), it % 4 == 3);
    }
    tile_context_destroy(fx.ctx);
}

Test(im2col, conv_stores) {
    seed_rng();
    Fix fx;
    fix_open(&fx);
    for (unsigned it = 0; it < 30; it++) {
        Conv cv;
        random_conv(&cv, 3 + it % 3);
        cv.dims[0] = (cv.dims[0] + 3) / 4 * 4;
        run_case(&fx, &cv, 1 + it % 2, (unsigned)irand(4), 0);
    }
    tile_context_destroy(fx.ctx);
}

/* cuTensorMapEncodeIm2col's documented rules, each broken once from a valid NHWC map. */
Test(im2col, encode_errors) {
    tile_context *ctx;
    cr_assert_eq(tile_context_create("emu:sm_90a", &ctx), TILE_OK);
    tile_devptr g;
    cr_assert_eq(tile_malloc(ctx, 1 << 16, &g), TILE_OK);
    _Alignas(64) uint8_t map[128];
    uint64_t dims[5] = {16, 9, 7, 2, 2}, strides[4] = {64, 64 * 9, 64 * 9 * 7, 64 * 9 * 7 * 2};
    int32_t lo[3] = {-1, -1, -1}, up[3] = {-1, -1, -1};
    cr_assert_eq(tile_tensor_map_encode_im2col(ctx, map, TILE_F32, 4, g, dims, strides, lo, up, 16, 64, NULL, TILE_SWIZZLE_64B, 1), TILE_OK,
                 "%s", tile_last_error(ctx));
    int32_t big[3] = {128, 0, 0}, small[3] = {-129, 0, 0}, r5[3] = {-17, 0, 0}, r5ok[3] = {-16, 15, 0}, r3[3] = {32767, 0, 0};
    int32_t empty[3] = {10, -1, 0}; /* W: 9 - 1 - 1 < 10 */
    uint32_t es0[5] = {1, 9, 1, 1, 1};
    struct {
        tile_dtype dt;
        int rank;
        const int32_t *lo, *up;
        uint32_t cpp, ppc;
        const uint32_t *es;
        int swz, fill;
        const char *msg;
    } bad[] = {
        {TILE_F32, 2, lo, up, 16, 64, NULL, 0, 0, "rank 2 is not in 3..5"},
        {TILE_F32, 6, lo, up, 16, 64, NULL, 0, 0, "rank 6 is not in 3..5"},
        {TILE_F32, 4, big, up, 16, 64, NULL, 0, 0, "lower[0] = 128 is not in -128..127 (rank 4)"},
        {TILE_F32, 4, lo, small, 16, 64, NULL, 0, 0, "upper[0] = -129 is not in -128..127 (rank 4)"},
        {TILE_F32, 5, r5, up, 16, 64, NULL, 0, 0, "lower[0] = -17 is not in -16..15 (rank 5)"},
        {TILE_F32, 4, empty, up, 16, 64, NULL, 0, 0, "bounding box along spatial dimension 0"},
        {TILE_F32, 4, lo, up, 0, 64, NULL, 0, 0, "channels_per_pixel 0 is not in 1..256"},
        {TILE_U8, 4, lo, up, 272, 64, NULL, 0, 0, "channels_per_pixel 272 is not in 1..256"},
        {TILE_F32, 4, lo, up, 6, 64, NULL, 0, 0, "channels_per_pixel * element size = 24 bytes is not a multiple of 16"},
        {TILE_F32, 4, lo, up, 16, 0, NULL, 0, 0, "pixels_per_column 0 is not in 1..1024"},
        {TILE_F32, 4, lo, up, 16, 1025, NULL, 0, 0, "pixels_per_column 1025 is not in 1..1024"},
        {TILE_F32, 4, lo, up, 16, 64, NULL, TILE_SWIZZLE_32B, 0, "wider than the 32-byte swizzle"},
        {TILE_F32, 4, lo, up, 16, 64, es0, 0, 0, "elem_strides[1] = 9 is not in 1..8"},
        {TILE_I32, 4, lo, up, 16, 64, NULL, 0, 1, "NaN fill needs a floating-point dtype"},
        {TILE_F32, 4, lo, up, 16, 64, NULL, 0, 2, "nan_fill 2 is not 0 or 1"},
        {TILE_F32, 4, NULL, up, 16, 64, NULL, 0, 0, "lower is NULL"},
        {TILE_F32, 4, lo, up, 16, 64, NULL, 4, 0, "swizzle 4 is not"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tile_status st = tile_tensor_map_encode_im2col(ctx, map, bad[i].dt, bad[i].rank, g, dims, strides, bad[i].lo, bad[i].up, bad[i].cpp,
                                                       bad[i].ppc, bad[i].es, (tile_tensor_swizzle)bad[i].swz, bad[i].fill);
        cr_assert_eq(st, TILE_ERROR_INVALID_VALUE, "case %zu (%s) was accepted", i, bad[i].msg);
        cr_assert(strstr(tile_last_error(ctx), bad[i].msg), "case %zu: '%s' not in: %s", i, bad[i].msg, tile_last_error(ctx));
        cr_assert(strstr(tile_last_error(ctx), "tile_tensor_map_encode_im2col"), "%s", tile_last_error(ctx));
    }
    /* the corners' ranges end where the rank says: -16..15 at rank 5, -32768..32767 at rank 3 */
    uint64_t d5[5] = {16, 40, 40, 40, 1}, s5[4] = {64, 64 * 40, 64 * 1600, 64 * 64000};
    tile_devptr g5;
    cr_assert_eq(tile_malloc(ctx, 64 * 64000, &g5), TILE_OK);
    cr_assert_eq(tile_tensor_map_encode_im2col(ctx, map, TILE_F32, 5, g5, d5, s5, r5ok, r5ok, 16, 8, NULL, 0, 0), TILE_OK, "%s",
                 tile_last_error(ctx));
    cr_assert_eq(tile_tensor_map_encode_im2col(ctx, map, TILE_F32, 3, g, dims, strides, lo, r3, 16, 8, NULL, 0, 0), TILE_OK, "%s",
                 tile_last_error(ctx));
    int32_t r3b[3] = {32768, 0, 0};
    cr_assert_eq(tile_tensor_map_encode_im2col(ctx, map, TILE_F32, 3, g, dims, strides, lo, r3b, 16, 8, NULL, 0, 0), TILE_ERROR_INVALID_VALUE);
    /* the tensor lies in memory of the context */
    uint64_t huge[4] = {16, 9, 7, 1u << 22}; /* N */
    cr_assert_neq(tile_tensor_map_encode_im2col(ctx, map, TILE_F32, 4, g, huge, strides, lo, up, 16, 8, NULL, 0, 0), TILE_OK);
    cr_assert(strstr(tile_last_error(ctx), "tile_tensor_map_encode_im2col: global"), "%s", tile_last_error(ctx));
    tile_context_destroy(ctx);
}

/* The forms ptxas refuses, refused at load with the line (each also refused by ptxas when it is installed). */
Test(im2col, form_errors) {
    TileDevice *d = open_emu(false);
    static const struct {
        const char *ins, *msg;
    } bad[] = {
        {"cp.async.bulk.tensor.2d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r3, %r4}], [%r2], {%rs1};",
         "im2col copies are .3d, .4d or .5d"},
        {"cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r3, %r4, %r5, %r6}], [%r2];",
         "and 2 im2col offsets"},
        {"cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r3, %r4, %r5, %r6}], [%r2], {%rs1};",
         "and 2 im2col offsets"},
        {"cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r3, %r4, %r5}], [%r2], %rs1;",
         "the im2col offsets are a vector"},
        {"cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r3, %r4, %r5, %r6}], [%r2], {%r7, %r8};",
         "ptx:"},
        {"cp.async.bulk.tensor.3d.shared::cluster.global.tile.im2col.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r3, %r4, %r5}], [%r2], {%rs1};",
         ".tile or .im2col, not both"},
        {"cp.async.bulk.tensor.4d.global.shared::cta.im2col.bulk_group [%rd1, {%r3, %r4, %r5, %r6}], [%r1];", "takes .im2col_no_offs"},
        {"cp.async.bulk.tensor.4d.shared::cluster.global.im2col_no_offs.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r3, %r4, %r5, %r6}], [%r2];",
         "takes .im2col (with its offsets)"},
        {"cp.reduce.async.bulk.tensor.4d.global.shared::cta.add.im2col.bulk_group [%rd1, {%r3, %r4, %r5, %r6}], [%r1];", "takes .im2col_no_offs"},
        {"cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.im2col_no_offs.bulk_group [%rd1, {%r3, %r4}], [%r1];",
         "im2col copies are .3d, .4d or .5d"},
        {"cp.async.bulk.prefetch.tensor.4d.L2.global.im2col [%rd1, {%r3, %r4, %r5, %r6}];", "with 2 im2col offsets"},
        {"cp.async.bulk.prefetch.tensor.4d.L2.global.im2col_no_offs [%rd1, {%r3, %r4, %r5, %r6}], {%rs1, %rs2};", "takes .im2col"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char ptx[2048];
        snprintf(ptx, sizeof ptx,
                 PTX_HEAD ".visible .entry k(.param .align 64 .b8 tmap[128])\n{\n  .reg .b32 %%r<10>;\n  .reg .b64 %%rd<5>;\n"
                          "  .reg .b16 %%rs<5>;\n  .shared .align 128 .b8 sm[4096];\n  .shared .align 8 .b64 mb;\n  mov.u64 %%rd1, tmap;\n"
                          "  mov.u32 %%r1, sm;\n  mov.u32 %%r2, mb;\n  %s\n  ret;\n}\n",
                 bad[i].ins);
        if (!ptxas_refuses(ptx, "sm_90a")) cr_assert(0, "ptxas takes case %zu:\n%s", i, ptx);
        expect_load_error(d, ptx, bad[i].msg);
        expect_load_error(d, ptx, "ptx:14:");
    }
    /* the multicast (ctaMask after the offsets) and cache-hint forms load */
    static const char *const good[] = {
        "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes.multicast::cluster [%r1], [%rd1, {%r3, %r4, %r5, %r6}], [%r2], {%rs1, %rs2}, %rs4;",
        "cp.async.bulk.tensor.5d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes.L2::cache_hint [%r1], [%rd1, {%r3, %r4, %r5, %r6, %r7}], [%r2], {%rs1, 3, %rs2}, %rd2;",
        "cp.async.bulk.prefetch.tensor.3d.L2.global.im2col.L2::cache_hint [%rd1, {%r3, %r4, %r5}], {%rs1}, %rd2;",
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        char ptx[2048];
        snprintf(ptx, sizeof ptx,
                 PTX_HEAD ".visible .entry k(.param .align 64 .b8 tmap[128])\n{\n  .reg .b32 %%r<10>;\n  .reg .b64 %%rd<5>;\n"
                          "  .reg .b16 %%rs<5>;\n  .shared .align 128 .b8 sm[4096];\n  .shared .align 8 .b64 mb;\n  mov.u64 %%rd1, tmap;\n"
                          "  mov.u32 %%r1, sm;\n  mov.u32 %%r2, mb;\n  %s\n  ret;\n}\n",
                 good[i]);
        TileDevModule *m = NULL;
        load(d, ptx, "k", &m);
        dev_module_unload(m);
    }
    dev_close(d);
}

/* A .tile copy through an im2col map, and an .im2col copy through a tiled one, fail the launch. */
Test(im2col, mode_mismatch) {
    tile_context *ctx;
    cr_assert_eq(tile_context_create("emu:sm_90a", &ctx), TILE_OK);
    tile_devptr g;
    cr_assert_eq(tile_malloc(ctx, 1 << 14, &g), TILE_OK);
    uint64_t dims[4] = {16, 8, 8, 2}, strides[3] = {64, 512, 4096};
    int32_t lo[2] = {0, 0}, up[2] = {0, 0};
    uint32_t box[4] = {16, 8, 1, 1};
    const char *ptx = PTX_HEAD ".visible .entry k(.param .align 64 .b8 tmap[128], .param .u32 im)\n{\n  .reg .pred %p<3>;\n"
                               "  .reg .b32 %r<10>;\n  .reg .b64 %rd<5>;\n  .reg .b16 %rs<3>;\n  .shared .align 1024 .b8 sm[8192];\n"
                               "  .shared .align 8 .b64 mb;\n  mov.u64 %rd1, tmap;\n  mov.u32 %r1, sm;\n  mov.u32 %r2, mb;\n"
                               "  ld.param.u32 %r9, [im];\n  mov.u32 %r3, 0;\n  mov.u16 %rs1, 0;\n"
                               "  mbarrier.init.shared::cta.b64 [%r2], 1;\n  setp.ne.u32 %p1, %r9, 0;\n  @%p1 bra $IM;\n"
                               "  cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r3, %r3, %r3, %r3}], [%r2];\n"
                               "  ret;\n$IM:\n"
                               "  cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r3, %r3, %r3, %r3}], [%r2], {%rs1, %rs1};\n"
                               "  ret;\n}\n";
    check_ptxas(ptx);
    tile_module *m;
    cr_assert_eq(tile_module_load_ptx(ctx, ptx, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(m, "k", &k), TILE_OK);
    _Alignas(64) uint8_t im2col_map[128], tiled_map[128];
    cr_assert_eq(tile_tensor_map_encode_im2col(ctx, im2col_map, TILE_F32, 4, g, dims, strides, lo, up, 16, 32, NULL, 0, 0), TILE_OK);
    cr_assert_eq(tile_tensor_map_encode(ctx, tiled_map, TILE_F32, 4, g, dims, strides, box, NULL, 0), TILE_OK);
    uint32_t im = 0;
    void *a1[] = {im2col_map, &im};
    cr_assert_neq(tile_launch_raw(k, (tile_dim3){1, 1, 1}, (tile_dim3){1, 1, 1}, 0, a1, NULL), TILE_OK);
    cr_assert(strstr(tile_last_error(ctx), "a .tile copy through an im2col"), "%s", tile_last_error(ctx));
    im = 1;
    void *a2[] = {tiled_map, &im};
    cr_assert_neq(tile_launch_raw(k, (tile_dim3){1, 1, 1}, (tile_dim3){1, 1, 1}, 0, a2, NULL), TILE_OK);
    cr_assert(strstr(tile_last_error(ctx), "an .im2col copy through a tiled"), "%s", tile_last_error(ctx));
    tile_context_destroy(ctx);
}

/* Clusters of 2 CTAs: rank 0 multicasts an .im2col load (ctaMask 3, after the offsets) to both; each CTA expects the
 * tile's bytes on its own mbarrier and writes its copy out.  A 3x3 convolution, padding 1, stride 2, tap (2, 1). */
static const char *multicast_ptx = PTX_HEAD
    ".visible .entry mc(.param .align 64 .b8 tmap[128], .param .u32 w0, .param .u32 h0, .param .u64 out)\n"
    ".reqnctapercluster 2, 1, 1\n{\n"
    " .reg .pred %p<5>;\n .reg .b16 %rs<4>;\n .reg .b32 %r<32>;\n .reg .b64 %rd<12>;\n"
    " .shared .align 1024 .b8 tile[2048];\n .shared .align 8 .b64 bar;\n"
    " ld.param.u64 %rd2, [out];\n mov.u64 %rd3, tmap;\n ld.param.u32 %r20, [w0];\n ld.param.u32 %r21, [h0];\n"
    " mov.u32 %r1, %tid.x;\n mov.u32 %r2, %ctaid.x;\n mov.u32 %r3, %cluster_ctarank;\n"
    " setp.eq.u32 %p1, %r1, 0;\n setp.eq.u32 %p2, %r3, 0;\n mov.u32 %r5, bar;\n mov.u32 %r6, tile;\n"
    " @%p1 mbarrier.init.shared::cta.b64 [%r5], 1;\n fence.mbarrier_init.release.cluster;\n"
    " barrier.cluster.arrive.release.aligned;\n barrier.cluster.wait.acquire.aligned;\n"
    " @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r5], 1536;\n"
    " and.pred %p3, %p1, %p2;\n @!%p3 bra WAIT;\n"
    " mov.u32 %r11, 0;\n mov.u32 %r12, 0;\n mov.u16 %rs1, 2;\n mov.u16 %rs2, 4;\n mov.u16 %rs3, 3;\n"
    " cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes.multicast::cluster [%r6], "
    "[%rd3, {%r11, %r20, %r21, %r12}], [%r5], {%rs1, %rs2}, %rs3;\n"
    "WAIT:\n mbarrier.try_wait.parity.shared::cta.b64 %p4, [%r5], 0;\n @!%p4 bra WAIT;\n"
    " mul.wide.u32 %rd5, %r2, 1536;\n add.u64 %rd5, %rd2, %rd5;\n mov.u32 %r13, %r1;\n"
    "COPY:\n shl.b32 %r15, %r13, 2;\n add.u32 %r16, %r6, %r15;\n"
    " ld.shared.u32 %r17, [%r16];\n cvt.u64.u32 %rd6, %r15;\n add.u64 %rd7, %rd5, %rd6;\n st.global.u32 [%rd7], %r17;\n"
    " add.u32 %r13, %r13, 32;\n setp.lt.u32 %p4, %r13, 384;\n @%p4 bra COPY;\n"
    " barrier.cluster.arrive.release.aligned;\n barrier.cluster.wait.acquire.aligned;\n ret;\n}\n";

Test(im2col, multicast) {
    seed_rng();
    tile_context *ctx;
    tile_context_options o = {.size = sizeof o, .device = "emu:sm_90a", .emu_host_threads = 2};
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK, "%s", tile_last_error(NULL));
    Conv cv = {.rank = 4, .ns = 2, .dims = {8, 7, 6, 2}, .pad_lo = {1, 1}, .pad_hi = {1, 1}, .filt = {3, 3}, .stride = {2, 2},
               .dil = {2, 2}};
    for (unsigned k = 0; k < 2; k++)
        cv.out[k] = (uint64_t)(((int64_t)cv.dims[k + 1] - 1 + 2 - (int64_t)(cv.filt[k] - 1) * cv.dil[k]) / cv.stride[k] + 1);
    uint64_t nel = 8 * 7 * 6 * 2, strides[3] = {32, 32 * 7, 32 * 7 * 6};
    uint32_t x[8 * 7 * 6 * 2];
    for (uint64_t i = 0; i < nel; i++) { float f = (float)(irand(2000) - 1000); memcpy(&x[i], &f, 4); }
    tile_devptr dx, dout;
    cr_assert_eq(tile_malloc(ctx, sizeof x, &dx), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, dx, x, sizeof x), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 4 * 1536, &dout), TILE_OK);
    cr_assert_eq(tile_memset(ctx, dout, 0xFF, 4 * 1536), TILE_OK);
    int32_t lo[2] = {-1, -1}, up[2] = {1 - 4, 1 - 4};
    uint32_t es[4] = {1, 2, 2, 1};
    _Alignas(64) uint8_t map[128];
    /* 48 pixels of 8 channels: 1536 bytes, through the 32-byte swizzle */
    cr_assert_eq(tile_tensor_map_encode_im2col(ctx, map, TILE_F32, 4, dx, cv.dims, strides, lo, up, 8, 48, es, TILE_SWIZZLE_32B, 0), TILE_OK,
                 "%s", tile_last_error(ctx));
    uint64_t m0 = 1; /* (n 0, oh 0, ow 1): w = 1*2 - 1, h = -1 */
    int32_t w0 = 1, h0 = -1;
    tile_module *m;
    check_ptxas(multicast_ptx);
    cr_assert_eq(tile_module_load_ptx(ctx, multicast_ptx, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(m, "mc", &k), TILE_OK);
    cr_assert_eq(tile_launch_raw(k, (tile_dim3){4, 1, 1}, (tile_dim3){32, 1, 1}, 0, (void *[]){map, &w0, &h0, &dout}, NULL), TILE_OK, "%s",
                 tile_last_error(ctx));
    static uint32_t got[4 * 384];
    cr_assert_eq(tile_memcpy_dtoh(ctx, got, dout, sizeof got), TILE_OK);
    const unsigned tap[3] = {1, 2, 0}; /* offsets {2, 4} / dilation 2: W tap 1, H tap 2 */
    for (unsigned b = 0; b < 4; b++)
        for (uint32_t p = 0; p < 48; p++)
            for (uint32_t ch = 0; ch < 8; ch++) {
                int64_t e = im2col_elem(&cv, m0 + p, tap, ch);
                uint32_t want = e < 0 ? 0 : x[e], v = got[b * 384 + swz((p * 8 + ch) * 4, 1) / 4];
                cr_assert_eq(v, want, "block %u: row %u channel %u: 0x%08x, want 0x%08x", b, p, ch, v, want);
            }
    tile_context_destroy(ctx);
}

/* The traversal written out by hand for an NWC tensor (C 4, W 3, N 5) with corners 0 and 0, W's traversal stride 2
 * and N's 2: from (w 1, n 0) the pixels are (1,0) (w 3 is past 2: back to 0, N steps 2) (0,2) (2,2) (0,4) (2,4),
 * then n 6 (past the last image: zero), with the offset 1 added to w: w 2, 1, 3 (outside), 1, 3, 1, ... */
Test(im2col, traversal_by_hand) {
    Fix fx;
    fix_open(&fx);
    tile_context *ctx = fx.ctx;
    uint32_t x[5 * 3 * 4];
    for (unsigned i = 0; i < 60; i++) { float f = (float)(i + 1); memcpy(&x[i], &f, 4); }
    tile_devptr dx, dio;
    cr_assert_eq(tile_malloc(ctx, sizeof x, &dx), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, dx, x, sizeof x), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 1024, &dio), TILE_OK);
    cr_assert_eq(tile_memset(ctx, dio, 0xFF, 1024), TILE_OK);
    uint64_t dims[3] = {4, 3, 5}, strides[2] = {16, 48};
    int32_t lo[1] = {0}, up[1] = {0};
    uint32_t es[3] = {1, 2, 2};
    _Alignas(64) uint8_t map[128];
    cr_assert_eq(tile_tensor_map_encode_im2col(ctx, map, TILE_F32, 3, dx, dims, strides, lo, up, 4, 8, es, 0, 0), TILE_OK, "%s",
                 tile_last_error(ctx));
    int32_t c[5] = {0, 1, 0, 0, 0};
    uint16_t off[3] = {1, 0, 0};
    uint32_t nbytes = 128, cbytes = 1024, mode = 0;
    void *args[] = {map, &c[0], &c[1], &c[2], &c[3], &c[4], &off[0], &off[1], &off[2], &nbytes, &cbytes, &dio, &mode};
    cr_assert_eq(tile_launch_raw(kernel_for(&fx, 3), (tile_dim3){1, 1, 1}, (tile_dim3){1, 1, 1}, 0, args, NULL), TILE_OK, "%s",
                 tile_last_error(ctx));
    uint32_t got[256];
    cr_assert_eq(tile_memcpy_dtoh(ctx, got, dio, 1024), TILE_OK);
    static const int pix[8][2] = {{2, 0}, {1, 2}, {3, 2}, {1, 4}, {3, 4}, {1, 6}, {3, 6}, {1, 8}}; /* (w + 1, n) */
    for (unsigned p = 0; p < 8; p++)
        for (unsigned ch = 0; ch < 4; ch++) {
            int w = pix[p][0], n = pix[p][1];
            float want = w < 3 && n < 5 ? (float)(n * 12 + w * 4 + ch + 1) : 0.0f, v;
            memcpy(&v, &got[p * 4 + ch], 4);
            cr_assert_eq(v, want, "pixel %u channel %u: %g, want %g", p, ch, v, want);
        }
    tile_context_destroy(ctx);
}

/* Five loads whose results NVIDIA's hardware gives (the im2col tutorial of Triton's Gluon, run as tests on Hopper):
 * an NHWC f32 tensor of N x 4 x 4 pixels, 32 channels, pixel i of the tensor (row-major over n, h, w) holding i + 1
 * in every channel; 16 pixels of 32 channels through the 128B swizzle.  Corners (W, H): (0, 0) / (0, 0) from
 * (n, h, w) = (0, 0, 0); (-1, -1) / (-1, -1) from (0, -1, -1) with offsets 0 and with offsets 1 (the window moves
 * onto the tensor); (0, 0) / (0, 0) from (0, 1, 3) with two images (the traversal runs into image 1); (-1, -1) /
 * (-1, -1) from (0, 1, 2) with two images (rows and images start again at the lower corner, in the padding). */
Test(im2col, hardware_examples) {
    Fix fx;
    fix_open(&fx);
    tile_context *ctx = fx.ctx;
    static const struct {
        unsigned n;
        int32_t corner, h, w;
        uint16_t off;
        float want[16];
    } ex[] = {
        {1, 0, 0, 0, 0, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}},
        {1, -1, -1, -1, 0, {0, 0, 0, 0, 0, 1, 2, 3, 0, 5, 6, 7, 0, 9, 10, 11}},
        {1, -1, -1, -1, 1, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}},
        {2, 0, 1, 3, 0, {8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}},
        {2, -1, 1, 2, 0, {7, 0, 9, 10, 11, 0, 0, 0, 0, 0, 17, 18, 19, 0, 21, 22}},
    };
    static float x[2 * 16 * 32];
    for (unsigned i = 0; i < 2 * 16 * 32; i++) x[i] = (float)(i / 32 + 1);
    tile_devptr dx, dio;
    cr_assert_eq(tile_malloc(ctx, sizeof x, &dx), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, dx, x, sizeof x), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 2048, &dio), TILE_OK);
    for (unsigned e = 0; e < ARRAY_LEN(ex); e++) {
        uint64_t dims[4] = {32, 4, 4, ex[e].n}, strides[3] = {128, 512, 2048};
        int32_t lo[2] = {ex[e].corner, ex[e].corner}, up[2] = {ex[e].corner, ex[e].corner};
        uint32_t es[4] = {1, 1, 1, 1};
        _Alignas(64) uint8_t map[128];
        cr_assert_eq(tile_tensor_map_encode_im2col(ctx, map, TILE_F32, 4, dx, dims, strides, lo, up, 32, 16, es, TILE_SWIZZLE_128B, 0),
                     TILE_OK, "%s", tile_last_error(ctx));
        cr_assert_eq(tile_memset(ctx, dio, 0xFF, 2048), TILE_OK);
        int32_t c[5] = {0, ex[e].w, ex[e].h, 0, 0};
        uint16_t off[3] = {ex[e].off, ex[e].off, 0};
        uint32_t nbytes = 2048, cbytes = 2048, mode = 0;
        void *args[] = {map, &c[0], &c[1], &c[2], &c[3], &c[4], &off[0], &off[1], &off[2], &nbytes, &cbytes, &dio, &mode};
        cr_assert_eq(tile_launch_raw(kernel_for(&fx, 4), (tile_dim3){1, 1, 1}, (tile_dim3){32, 1, 1}, 0, args, NULL), TILE_OK, "%s",
                     tile_last_error(ctx));
        float got[512];
        cr_assert_eq(tile_memcpy_dtoh(ctx, got, dio, sizeof got), TILE_OK);
        for (unsigned p = 0; p < 16; p++)
            for (unsigned ch = 0; ch < 32; ch++) {
                float v = got[swz((p * 32 + ch) * 4, TILE_SWIZZLE_128B) / 4];
                cr_assert_eq(v, ex[e].want[p], "example %u: pixel %u channel %u: %g, want %g", e + 1, p, ch, v, ex[e].want[p]);
            }
    }
    tile_context_destroy(ctx);
}
