/* moe.c - tile_moe_forward: one mixture-of-experts layer from kernels/moe/.
 *
 * What it launches, in order, on the caller's stream, and the variants:
 *   moe_router_{f32,bf16,f16} (router.tile, by logits_dtype; only with
 *     router_logits), grid cdiv(tokens, BT): defines K, KP (K rounded up to
 *     a power of two, at least 2; 128 from BE 512), BE (experts rounded up),
 *     BT (16, fewer as BE grows, 1 from BE 512), SCORING, RENORM,
 *     GROUPED, GROUP_TOP2, HAS_BIAS;
 *   a memset of out (unless accumulating);
 *   moe_align_count (align.tile), grid chunks: BN=64 (CHUNK), BE=64;
 *   moe_align_scan, grid 1: BM, BE, BC, NB, PJ (from BM and BE);
 *   moe_align_scatter, grid chunks: BN=64;
 *   moe_gate_up_{f16,bf16}[_e4m3_channel|_e4m3_block] (experts.tile; the
 *     suffix by weight_dtype and scales), grid (max_blocks, cdiv(inter, BN)),
 *     and moe_down_* likewise, grid (max_blocks, cdiv(hidden, BN)): defines
 *     BM, BN, BK, and num_warps and num_stages on wgmma targets
 *     (expert_tiles below);
 *     specializations hidden=16, inter=16 and sx=16 (gate_up) or so=16
 *     (down) where those are multiples of 16.  Every variant: no_align_ptrs
 *     when a pointer is not 16-byte aligned.
 *
 *   1. Check the arguments: dtypes (activations f16/bf16; weights the same,
 *      or f8e4m3 with per-channel or 128x128 block scales), sizes (the
 *      kernels' i32 offsets), the grouping, and that every pointer lies in
 *      an allocation of this context with room for what the kernels touch.
 *   2. Choose the block shape: BM (rows per expert block) from the average
 *      number of slots per expert (16, 32, 64, or 128 on wgmma targets from
 *      256 on average), the expert GEMMs' tiles from BM, the target and
 *      whether the loads are 16-byte vectors (hidden, inter and ldx
 *      multiples of 16, 16-byte aligned pointers: moe_vectorized;
 *      expert_tiles); the router's and the alignment's tile sizes from the
 *      expert count.
 *   3. Lay out the workspace (tile_moe_workspace_size): top-k ids and
 *      weights when the router makes them and the caller gave no buffers,
 *      the alignment's per-chunk counts and bases, sorted slots, expert of
 *      each block, padded total, and the gate_up result h [slots, inter].
 *   4. The kernels come from the context's table of variants
 *      (kernels/shipped.h): compiled on first use through the caches and
 *      loaded until the context is destroyed.
 *   5. Launch on the caller's stream: router, zeroing of out (unless
 *      accumulating), align count / scan / scatter, gate_up, down.
 * Nothing is synchronized or copied back: the padded total stays on the
 * device and the expert GEMMs launch max_blocks programs of which those
 * past the total return at once.  tile_moe_prepare runs steps 1, 2 and 4
 * without the pointer checks and launches nothing, so a later call with a
 * caller workspace allocates, synchronizes and compiles nothing. */
#include "kernels/shipped.h"
#include "runtime/rt.h"
#include "support/target.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* BN and BK divide QBLOCK: a weight tile lies in one block of block scales.
 * gate_up takes BN_SCALAR columns when its loads are not 16-byte vectors
 * (moe_vectorized): element by element, every element of its three tiles
 * keeps its own address in registers beside two accumulators, and BN = 64
 * spills (ptxas -v; tests/test_kernels.c checks both with ptxas).  With
 * block-scaled weights at BM 16 it takes BK_SCALAR_BLOCK too: ptxas holds
 * that kernel to 128 registers and spilled 8 bytes on sm_90a at BK 32 (64
 * registers at 16). */
enum { CHUNK = 64, COUNT_BE = 64, BN = 64, BN_SCALAR = 32, BK = 32, BK_SCALAR_BLOCK = 16, MAX_EXPERTS = 1024, QBLOCK = 128 };

/* On wgmma targets BM is 128 from WIDE_AVG slots per expert on average (two computing warpgroups of
 * 64 rows; about BM / 2 padding rows an expert, 1/4 of its rows at most), else as on the others. */
enum { WIDE_AVG = 256 };

/* BM, the rows of an expert block, by the average slots per expert. */
static int block_rows(int64_t avg, bool wgmma) { return avg <= 16 ? 16 : avg <= 32 ? 32 : wgmma && avg >= WIDE_AVG ? 128 : 64; }

/* The most blocks of bm rows that n slots over e experts can take (each expert's last block partly padding). */
static int64_t blocks_of(int64_t n, int64_t e, int bm) { return shipped_max(1, shipped_cdiv(n + shipped_min(e, n) * (bm - 1), bm)); }

/* An expert GEMM's tile: BN, BK, num_warps, num_stages (0: the kernel's own). */
typedef struct ExpertTile {
    int bn, bk, warps, stages;
} ExpertTile;

/* gate_up's and down's tiles.  Everywhere but below: BN 64 (gate_up 32 without vector loads), BK 32 (16
 * for gate_up with block scales at BM 16 and no vectors), the kernels' 4 warps and 3 stages.  On wgmma
 * targets with vector loads, at BM 64 and 128, K steps of 64 and wider tiles (the warps' 64-row wgmmas
 * need N wide to keep the tensor cores fed from shared memory): BM 128 on 8 computing warps, gate_up
 * BN 64 (two 128 x 64 accumulators, the A tile shared: a 128 x 128 GEMM tile), down BN 256 (128 with f8
 * weights: a BN that divides 128 for block scales, and 48-2212 bytes of spills at 256); BM 64, 4 warps,
 * gate_up BN 64, down BN 128, about 99 KB of shared memory so that two programs share a multiprocessor.
 * Below BM 64 (decode: a few rows an expert, reading the weights is the time) K steps of 128: 32 KB of
 * gate_up's weights a stage instead of 8 (the 4-warp mma.sync tiles of BM 16 and 32).  The producer runs
 * two stages ahead, so a multiprocessor had 4 programs x 2 x 8 KB = 64 KB of loads in flight at BM 16
 * (58 registers, 29 KB of shared memory each), and an H200 read the weights at 2.4-2.6 TB/s of its 4.8;
 * at K steps of 128 it has 2 x 2 x 36 KB = 144 KB (112 KB of shared memory each).  By Little's law that
 * keeps 4.8 TB/s up at up to ~4 us of latency under load, where 64 KB did at ~1.8 us (a model, not yet
 * measured).  ptxas reports no spills at any of them (tests/test_kernels.c). */
static void expert_tiles(int bm, bool wgmma, bool vec, const tile_moe_args *a, bool f8, ExpertTile *gu, ExpertTile *dn) {
    *gu = (ExpertTile){vec ? BN : BN_SCALAR, !vec && bm == 16 && a->scales == TILE_MOE_SCALES_BLOCK128 ? BK_SCALAR_BLOCK : BK, 0, 0};
    *dn = (ExpertTile){BN, BK, 0, 0};
    if (!wgmma || !vec) return;
    if (bm < 64) {
        *gu = (ExpertTile){BN, 128, 0, 3};
        *dn = (ExpertTile){BN, 128, 0, 3};
        return;
    }
    int warps = bm == 128 ? 8 : 4;
    *gu = (ExpertTile){64, 64, warps, 3};
    *dn = (ExpertTile){bm == 128 && !f8 ? 256 : 128, 64, warps, 3};
}

typedef struct Plan {
    int64_t n_slots, chunks, max_blocks;
    int64_t sorted_slots, block_slots; /* the workspace's room: BM x blocks and blocks, the most of any target's BM */
    int bm, be;
    bool router, own_ids;
    bool f8;                           /* f8e4m3 weights with scales */
    uint64_t w1_scales, w2_scales;     /* f32 scale counts (f8) */
    size_t off_ids, off_w, off_counts, off_base, off_sorted, off_experts, off_total, off_h, bytes;
} Plan;

static size_t align256(size_t x) { return (x + 255) & ~(size_t)255; }

/* Are gate_up's loads 16-byte vectors?  x's rows and both weights' rows must
 * start on 16 bytes: hidden, inter and ldx multiples of 16, aligned pointers
 * (conservatively, as the compiler's alignment analysis needs them). */
static bool moe_vectorized(const tile_moe_args *a, int64_t ldx, bool no_align) {
    return !no_align && a->hidden % 16 == 0 && a->inter % 16 == 0 && ldx % 16 == 0;
}

/* Sizes only: what plan() needs, checked. */
static const char *plan_make(const tile_moe_args *a, bool wgmma, Plan *p) {
    if (a->tokens < 0 || a->hidden <= 0 || a->inter <= 0 || a->experts <= 0) return "tokens >= 0, hidden, inter and experts > 0";
    if (a->topk < 1 || a->topk > 8 || a->topk > a->experts) return "topk must be 1..8 and at most experts";
    if (a->experts > MAX_EXPERTS) return "at most 1024 experts";
    /* the 32-bit offsets' bound, before any product of sizes could wrap */
    if (a->tokens >= INT32_MAX || a->hidden >= INT32_MAX || a->inter >= INT32_MAX)
        return "sizes too large for the kernels' 32-bit offsets (tokens, hidden and inter below 2^31)";
    if (a->dtype != TILE_F16 && a->dtype != TILE_BF16)
        return "dtype (x, h) must be TILE_F16 or TILE_BF16 (f8 weights: weight_dtype = TILE_F8E4M3 with scales)";
    memset(p, 0, sizeof *p);
    /* weight_dtype 0 is TILE_F32, which no weights use: it means "as dtype" (zero-initialized args) */
    p->f8 = a->weight_dtype == TILE_F8E4M3;
    if (!p->f8 && a->weight_dtype != TILE_F32 && a->weight_dtype != a->dtype)
        return "weight_dtype must be 0, dtype or TILE_F8E4M3";
    if (p->f8 && a->scales != TILE_MOE_SCALES_CHANNEL && a->scales != TILE_MOE_SCALES_BLOCK128)
        return "f8e4m3 weights need scales TILE_MOE_SCALES_CHANNEL or TILE_MOE_SCALES_BLOCK128";
    if (!p->f8 && a->scales != TILE_MOE_SCALES_NONE) return "scales are for f8 weights (weight_dtype = TILE_F8E4M3)";
    p->n_slots = a->tokens * a->topk;
    int64_t avg = p->n_slots / a->experts;
    p->bm = block_rows(avg, wgmma);
    p->be = (int)shipped_pow2_at_least(a->experts);
    p->chunks = shipped_max(1, shipped_cdiv(p->n_slots, CHUNK));
    p->max_blocks = blocks_of(p->n_slots, a->experts, p->bm);
    /* the workspace is the same on every target (tile_moe_workspace_size has none): room for the
     * sorted slots and block experts of either BM */
    int bm_w = block_rows(avg, true), bm_n = block_rows(avg, false);
    p->sorted_slots = shipped_max(blocks_of(p->n_slots, a->experts, bm_w) * bm_w, blocks_of(p->n_slots, a->experts, bm_n) * bm_n);
    p->block_slots = shipped_max(blocks_of(p->n_slots, a->experts, bm_w), blocks_of(p->n_slots, a->experts, bm_n));
    int64_t lim = INT32_MAX;
    int64_t prod[2];
    if (__builtin_mul_overflow(p->n_slots, shipped_max(a->hidden, a->inter), &prod[0]) || prod[0] >= lim ||
        __builtin_mul_overflow(2 * a->inter, a->hidden, &prod[1]) || prod[1] >= lim || p->chunks * a->experts >= lim ||
        p->sorted_slots >= lim)
        return "sizes too large for the kernels' 32-bit offsets (tokens * topk * max(hidden, inter) and 2 * inter * hidden below 2^31)";
    if (p->f8 && a->scales == TILE_MOE_SCALES_CHANNEL) {
        p->w1_scales = (uint64_t)(a->experts * 2 * a->inter);
        p->w2_scales = (uint64_t)(a->experts * a->hidden);
    } else if (p->f8) {
        p->w1_scales = (uint64_t)(a->experts * 2 * shipped_cdiv(a->inter, QBLOCK) * shipped_cdiv(a->hidden, QBLOCK));
        p->w2_scales = (uint64_t)(a->experts * shipped_cdiv(a->hidden, QBLOCK) * shipped_cdiv(a->inter, QBLOCK));
    }
    p->router = a->router_logits != 0;
    p->own_ids = p->router && (!a->topk_ids || !a->topk_weights);
    size_t off = 0;
#define TAKE(field, bytes) (p->field = off, off = align256(off + (size_t)(bytes)))
    if (p->own_ids) {
        TAKE(off_ids, 4 * p->n_slots);
        TAKE(off_w, 4 * p->n_slots);
    }
    TAKE(off_counts, 4 * p->chunks * a->experts);
    TAKE(off_base, 4 * p->chunks * a->experts);
    TAKE(off_sorted, 4 * p->sorted_slots);
    TAKE(off_experts, 4 * p->block_slots);
    TAKE(off_total, 4);
    TAKE(off_h, 2 * p->n_slots * a->inter);
#undef TAKE
    p->bytes = off;
    return NULL;
}

/* tile_moe_args as the first release with size fields laid it out: keep this value when fields are appended. */
enum { MOE_ARGS_SIZE_0_1 = sizeof(tile_moe_args) };

/* The caller's args as this release reads them (rt_struct_in). */
static bool moe_args_in(const tile_moe_args *a, tile_moe_args *o, char *err, size_t err_size) {
    return rt_struct_in(o, a, &rt_layout_tile_moe_args, MOE_ARGS_SIZE_0_1, err, err_size);
}

/* No context to hold a message: the refusals' reasons are the thread's (tile_last_error(NULL)). */
tile_status tile_moe_workspace_size(const tile_moe_args *a, size_t *bytes) {
    if (bytes) *bytes = 0; /* cleared before any check: a failed call leaves no earlier value */
    if (!a || !bytes) return rt_fail(NULL, TILE_ERROR_INVALID_VALUE, "tile_moe_workspace_size: %s is NULL", !a ? "args" : "bytes");
    tile_moe_args args;
    char err[160];
    if (!moe_args_in(a, &args, err, sizeof err)) return rt_fail(NULL, TILE_ERROR_INVALID_VALUE, "tile_moe_workspace_size: args->%s", err);
    a = &args;
    Plan p;
    const char *why = plan_make(a, false, &p);
    if (why) return rt_fail(NULL, TILE_ERROR_INVALID_VALUE, "tile_moe_workspace_size: %s", why);
    *bytes = p.bytes;
    return TILE_OK;
}

/* The call, or with launch false its preparation (tile_moe_prepare): steps 1-4 without the pointer checks,
 * no workspace, nothing launched. */
static tile_status moe_run(tile_context *ctx, const tile_moe_args *a, bool launch) {
    const char *fn = launch ? "tile_moe_forward" : "tile_moe_prepare"; /* the entry point, for messages */
    if (!rt_context_valid(ctx)) return rt_no_context(fn, ctx);
    if (!a) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: args is NULL", fn);
    tile_moe_args args;
    char err[160];
    if (!moe_args_in(a, &args, err, sizeof err)) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: args->%s", fn, err);
    a = &args; /* read only this copy from here on */
    if ((a->accumulate | a->renormalize | a->group_top2) & ~1)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: accumulate = %d, renormalize = %d, group_top2 = %d: each is 0 or 1", fn,
                       a->accumulate, a->renormalize, a->group_top2);
    if (a->scoring != TILE_MOE_SOFTMAX && a->scoring != TILE_MOE_SIGMOID)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: unknown scoring %d", fn, (int)a->scoring);
    if (!isfinite(a->routed_scale))
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: routed_scale = %g is not finite", fn, (double)a->routed_scale);
    /* 1. arguments */
    const Target *tg = target_find(rt_arch(ctx));
    bool wgmma = tg && tg->mma == WGMMA;
    Plan p;
    const char *why = plan_make(a, wgmma, &p);
    if (why) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: %s", fn, why);
    int64_t ldx = a->ldx ? a->ldx : a->hidden, ldo = a->ldo ? a->ldo : a->hidden, ldl = a->ldl ? a->ldl : a->experts;
    const struct {
        const char *name;
        int64_t given, row;
    } strides[] = {{"ldx", a->ldx, a->hidden}, {"ldo", a->ldo, a->hidden}, {"ldl", a->ldl, a->experts}};
    for (size_t i = 0; i < ARRAY_LEN(strides); i++)
        if (strides[i].given && strides[i].given < strides[i].row) /* 0 is contiguous */
            return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: %s = %lld is shorter than its row of %lld elements (0: contiguous)", fn,
                           strides[i].name, (long long)strides[i].given, (long long)strides[i].row);
    int64_t rows_elems;
    if (__builtin_mul_overflow(a->tokens, shipped_max(ldx, shipped_max(ldo, ldl)), &rows_elems) || rows_elems >= INT32_MAX)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: tokens * row stride must stay below 2^31", fn);
    int n_group = a->n_group > 1 ? a->n_group : 1, topk_group = a->n_group > 1 ? a->topk_group : 1;
    if (p.router && n_group > 1) {
        if (a->experts % n_group || topk_group < 1 || topk_group > n_group)
            return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: experts must divide into n_group groups and 1 <= topk_group <= n_group", fn);
        if (topk_group * (a->experts / n_group) < a->topk)
            return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: topk_group groups hold fewer than topk experts", fn);
        if (a->group_top2 && a->experts / n_group < 2)
            return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: group_top2 needs at least two experts per group", fn);
    }
    if (p.router && a->logits_dtype != TILE_F32 && a->logits_dtype != TILE_BF16 && a->logits_dtype != TILE_F16)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: logits_dtype must be TILE_F32, TILE_BF16 or TILE_F16", fn);
    if (a->tokens == 0) return TILE_OK; /* no tokens: nothing to route (an empty batch's arrays may all be NULL) */
    /* a pointer check: tile_moe_prepare looks at no pointer (docs/runtime.md), as the other _prepare calls */
    if (launch && !p.router && (!a->topk_ids || !a->topk_weights))
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: without router_logits, topk_ids and topk_weights are inputs", fn);
    if (a->workspace && a->workspace_bytes < p.bytes)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: workspace of %zu bytes, %zu needed (tile_moe_workspace_size)", fn,
                       a->workspace_bytes, p.bytes);
    uint64_t T = (uint64_t)a->tokens, H = (uint64_t)a->hidden, I = (uint64_t)a->inter, E = (uint64_t)a->experts, K = (uint64_t)a->topk;
    tile_status st;
/* ptr holds bytes of esize-byte elements: aligned to them and inside one allocation */
#define RANGE(ptr, esize, bytes, what)                                                                           \
    do {                                                                                                         \
        if ((st = shipped_check_range(ctx, fn, ptr, esize, bytes, what)) != TILE_OK) return st; \
    } while (0)
    if (!launch) goto kernels; /* pointers are not read */
    RANGE(a->x, 2, 2 * ((T - 1) * (uint64_t)ldx + H), "x");
    uint64_t wb = p.f8 ? 1 : 2;
    RANGE(a->w1, wb, wb * E * 2 * I * H, "w1");
    RANGE(a->w2, wb, wb * E * H * I, "w2");
    if (p.f8) {
        RANGE(a->w1_scale, 4, 4 * p.w1_scales, "w1_scale");
        RANGE(a->w2_scale, 4, 4 * p.w2_scales, "w2_scale");
    }
    RANGE(a->out, 4, 4 * ((T - 1) * (uint64_t)ldo + H), "out");
    if (p.router) {
        uint64_t lb = a->logits_dtype == TILE_F32 ? 4 : 2;
        RANGE(a->router_logits, lb, lb * ((T - 1) * (uint64_t)ldl + E), "router_logits");
        if (a->score_bias) RANGE(a->score_bias, 4, 4 * E, "score_bias");
    }
    /* inputs without a router; with one, outputs where given (each on its own: the other stays in the workspace) */
    if (a->topk_ids) RANGE(a->topk_ids, 4, 4 * T * K, "topk_ids");
    if (a->topk_weights) RANGE(a->topk_weights, 4, 4 * T * K, "topk_weights");
    if (a->workspace) { /* the bytes it needs, then the bytes the caller says it has (no more than are there) */
        RANGE(a->workspace, 16, p.bytes, "workspace");
        RANGE(a->workspace, 16, a->workspace_bytes, "workspace_bytes");
    }
#undef RANGE
    { /* out is zeroed (or accumulated into, by atomics) while the kernels still read everything else: it may share no
       * byte with them (an out over x was zeroed before the first GEMM read x, and the call returned TILE_OK) */
        const uint64_t ob = 4 * ((T - 1) * (uint64_t)ldo + H), lb = a->logits_dtype == TILE_F32 ? 4 : 2;
        const struct { tile_devptr p; uint64_t bytes; const char *what; } in[] = {
            {a->x, 2 * ((T - 1) * (uint64_t)ldx + H), "x"},
            {a->w1, wb * E * 2 * I * H, "w1"},
            {a->w2, wb * E * H * I, "w2"},
            {p.f8 ? a->w1_scale : 0, 4 * (uint64_t)p.w1_scales, "w1_scale"},
            {p.f8 ? a->w2_scale : 0, 4 * (uint64_t)p.w2_scales, "w2_scale"},
            {p.router ? a->router_logits : 0, lb * ((T - 1) * (uint64_t)ldl + E), "router_logits"},
            {p.router ? a->score_bias : 0, 4 * E, "score_bias"},
            {a->topk_ids, 4 * T * K, "topk_ids"},
            {a->topk_weights, 4 * T * K, "topk_weights"},
            {a->workspace, p.bytes, "workspace"},
        };
        for (size_t i = 0; i < sizeof in / sizeof in[0]; i++)
            if (in[i].p && in[i].p < a->out + ob && a->out < in[i].p + in[i].bytes)
                return rt_fail(ctx, TILE_ERROR_INVALID_VALUE,
                               "%s: out [0x%llx, +%llu bytes) overlaps %s [0x%llx, +%llu bytes): out is %s while the "
                               "kernels read %s; give out memory of its own", fn,
                               (unsigned long long)a->out, (unsigned long long)ob, in[i].what, (unsigned long long)in[i].p,
                               (unsigned long long)in[i].bytes, a->accumulate ? "accumulated into" : "zeroed and accumulated into",
                               in[i].what);
        /* the workspace is written (counts, sorted slots, the intermediate activations) while the kernels read the
         * rest, and the router writes topk_ids and topk_weights while it and the experts read the others: neither
         * may share a byte with another tensor of the call (out is above) */
        for (size_t w = 0; w < sizeof in / sizeof in[0]; w++) {
            bool written = !strcmp(in[w].what, "workspace") || (p.router && !strncmp(in[w].what, "topk_", 5));
            for (size_t i = 0; written && i < sizeof in / sizeof in[0]; i++)
                if (i != w && in[w].p && in[i].p && in[i].p < in[w].p + in[w].bytes && in[w].p < in[i].p + in[i].bytes)
                    return shipped_check_apart(ctx, fn, in[w].p, in[w].bytes, in[w].what, in[i].p, in[i].bytes,
                                               in[i].what);
        }
    }

kernels:; /* 2-4. */
    const char *api = "tile_moe_forward";
    /* every pointer a kernel takes: the caller's, and the workspace's (256-byte offsets into it) */
    bool no_align = ((a->x | a->w1 | a->w2 | a->out | a->w1_scale | a->w2_scale | a->router_logits | a->score_bias | a->topk_ids |
                      a->topk_weights | a->workspace) & 15) != 0;
    bool bf = a->dtype == TILE_BF16;
    tile_kernel *k_router = NULL, *k_count, *k_scan, *k_scatter, *k_gate_up, *k_down;
    /* The router's [BT, BE] tiles: BT tokens a program.  ptxas -v showed spills (tests/test_kernels.c checks
     * these): with KP = 1 the [BT, 1] outputs lay the whole tile out along tokens (11-50 KB at BE = 1024), so
     * KP >= 2; from BE = 512 on, grouped selection keeps too many tiles live unless a program takes one token,
     * and KP = 128 there: the [1, KP] outputs' layout reaches the [1, BE] tiles through the reductions, and
     * one narrower than 32 lanes x 4 warps puts the warps over the one token (each warp a copy of the tile,
     * BE / 32 elements a thread: 255 registers and 80 bytes of spills on sm_90a at BE 1024, topk 1); at 128
     * they spread over the experts (72-80 registers, no spills). */
    int64_t bt = p.be >= 512 ? 1 : shipped_max(1, shipped_min(16, 2048 / p.be));
    int64_t kp = p.be >= 512 ? 128 : shipped_max(2, shipped_pow2_at_least(a->topk));
    if (p.router) {
        static const char *const rn[] = {[TILE_F32] = "moe_router_f32", [TILE_BF16] = "moe_router_bf16", [TILE_F16] = "moe_router_f16"};
        ShippedVariant v = shipped_variant(rn[a->logits_dtype]);
        shipped_define(&v, "K", a->topk);
        shipped_define(&v, "KP", kp);
        shipped_define(&v, "BE", p.be);
        shipped_define(&v, "BT", bt);
        shipped_define(&v, "SCORING", a->scoring == TILE_MOE_SIGMOID);
        shipped_flag(&v, "RENORM", a->renormalize);
        shipped_flag(&v, "GROUPED", n_group > 1);
        shipped_flag(&v, "GROUP_TOP2", a->group_top2);
        shipped_flag(&v, "HAS_BIAS", a->score_bias != 0);
        v.no_align_ptrs = no_align;
        st = shipped_kernel(ctx, api, "moe/router.tile", &v, &k_router, NULL);
        shipped_variant_free(&v);
        if (st != TILE_OK) return st;
    }
    ShippedVariant count = shipped_variant("moe_align_count"), scatter = shipped_variant("moe_align_scatter"),
                   scan = shipped_variant("moe_align_scan");
    shipped_define(&count, "BN", CHUNK);
    shipped_define(&count, "BE", COUNT_BE);
    shipped_define(&scatter, "BN", CHUNK);
    shipped_define(&scan, "BM", p.bm);
    shipped_define(&scan, "BE", p.be);
    /* the scan's chunks of [*, BE] tiles: 1024 or 2048 elements (twice that spilled 48-168 bytes at BE 128-256, BM 64) */
    shipped_define(&scan, "BC", shipped_max(1, shipped_min(16, 1024 / p.be)));
    shipped_define(&scan, "NB", shipped_max(1, shipped_min(64, 2048 / p.be)));
    shipped_define(&scan, "PJ", shipped_max(1, shipped_min(p.bm, 1024 / p.be)));
    char gu_name[64], dn_name[64];
    const char *wsuffix = !p.f8 ? "" : a->scales == TILE_MOE_SCALES_CHANNEL ? "_e4m3_channel" : "_e4m3_block";
    snprintf(gu_name, sizeof gu_name, "moe_gate_up_%s%s", bf ? "bf16" : "f16", wsuffix);
    snprintf(dn_name, sizeof dn_name, "moe_down_%s%s", bf ? "bf16" : "f16", wsuffix);
    ShippedVariant gate_up = shipped_variant(gu_name), down = shipped_variant(dn_name);
    ShippedVariant *experts_v[] = {&gate_up, &down};
    bool vec = moe_vectorized(a, ldx, no_align);
    ExpertTile tiles[2];
    expert_tiles(p.bm, wgmma, vec, a, p.f8, &tiles[0], &tiles[1]);
    ShippedVariant *all_v[] = {&count, &scatter, &scan, &gate_up, &down};
    for (int i = 0; i < (int)ARRAY_LEN(all_v); i++) all_v[i]->no_align_ptrs = no_align;
    for (int i = 0; i < 2; i++) {
        shipped_define(experts_v[i], "BM", p.bm);
        shipped_define(experts_v[i], "BN", tiles[i].bn);
        shipped_define(experts_v[i], "BK", tiles[i].bk);
        if (tiles[i].warps) shipped_define(experts_v[i], "num_warps", tiles[i].warps);
        if (tiles[i].stages) shipped_define(experts_v[i], "num_stages", tiles[i].stages);
        shipped_spec16(experts_v[i], "hidden", a->hidden);
        shipped_spec16(experts_v[i], "inter", a->inter);
        /* on sm_90a a producer warpgroup issues the weights' tensor-map loads (lower/warp_specialize.c;
         * the gathered activation rows stay the computing warps' cp.async) */
        if (wgmma) shipped_define(experts_v[i], "warp_specialize", 1);
    }
    shipped_spec16(&gate_up, "sx", ldx);
    shipped_spec16(&down, "so", ldo);
    if ((st = shipped_kernel(ctx, api, "moe/align.tile", &count, &k_count, NULL)) == TILE_OK &&
        (st = shipped_kernel(ctx, api, "moe/align.tile", &scatter, &k_scatter, NULL)) == TILE_OK &&
        (st = shipped_kernel(ctx, api, "moe/align.tile", &scan, &k_scan, NULL)) == TILE_OK &&
        (st = shipped_kernel(ctx, api, "moe/experts.tile", &gate_up, &k_gate_up, NULL)) == TILE_OK)
        st = shipped_kernel(ctx, api, "moe/experts.tile", &down, &k_down, NULL);
    shipped_variant_free(&count), shipped_variant_free(&scatter), shipped_variant_free(&scan);
    shipped_variant_free(&gate_up), shipped_variant_free(&down);
    if (st != TILE_OK || !launch) return st;

    /* 3. workspace */
    tile_devptr ws = a->workspace;
    bool own_ws = !ws;
    if (own_ws && (st = tile_malloc(ctx, p.bytes, &ws)) != TILE_OK) return st;
    /* a router writes the caller's topk_ids and topk_weights where given, even one without the other */
    tile_devptr ids = a->topk_ids ? a->topk_ids : ws + p.off_ids, wts = a->topk_weights ? a->topk_weights : ws + p.off_w;
    tile_devptr counts = ws + p.off_counts, base = ws + p.off_base, sorted = ws + p.off_sorted, experts = ws + p.off_experts;
    tile_devptr total = ws + p.off_total, h = ws + p.off_h;

    /* 5. launches */
    int32_t t32 = (int32_t)a->tokens, e32 = (int32_t)a->experts, k32 = (int32_t)a->topk, h32 = (int32_t)a->hidden, i32 = (int32_t)a->inter;
    int32_t ns = (int32_t)p.n_slots, nc = (int32_t)p.chunks, mb = (int32_t)p.max_blocks, sx = (int32_t)ldx, so = (int32_t)ldo,
            sl = (int32_t)ldl;
    if (p.router) {
        tile_devptr logits = a->router_logits, bias = a->score_bias ? a->score_bias : a->router_logits;
        int32_t g32 = n_group, tg32 = topk_group;
        float scale = a->routed_scale != 0 ? a->routed_scale : 1.0f;
        void *pr[] = {&logits, &bias, &ids, &wts, &t32, &e32, &sl, &g32, &tg32, &scale};
        if ((st = shipped_launch(ctx, api, k_router, (tile_dim3){(unsigned)shipped_cdiv(a->tokens, bt), 1, 1}, pr, a->stream)) != TILE_OK) goto done;
    }
    if (!a->accumulate) {
        /* the rows only: the bytes between them (ldo > hidden) are the caller's */
        if ((st = rt_memset2d_async(ctx, a->out, 4 * (size_t)ldo, 0, 4 * H, T, a->stream, "tile_moe_forward: out")) != TILE_OK) goto done;
    }
    void *pc[] = {&ids, &counts, &ns, &e32};
    if ((st = shipped_launch(ctx, api, k_count, (tile_dim3){(unsigned)p.chunks, 1, 1}, pc, a->stream)) != TILE_OK) goto done;
    void *ps[] = {&counts, &base, &sorted, &experts, &total, &nc, &ns, &e32, &mb};
    if ((st = shipped_launch(ctx, api, k_scan, (tile_dim3){1, 1, 1}, ps, a->stream)) != TILE_OK) goto done;
    void *pt[] = {&ids, &base, &sorted, &ns, &e32};
    if ((st = shipped_launch(ctx, api, k_scatter, (tile_dim3){(unsigned)p.chunks, 1, 1}, pt, a->stream)) != TILE_OK) goto done;
    tile_devptr x = a->x, w1 = a->w1, w2 = a->w2, out = a->out, w1s = a->w1_scale, w2s = a->w2_scale;
    /* the f8 kernels take the weights' scales right after the weights */
    void *pg16[] = {&x, &w1, &h, &sorted, &experts, &total, &ns, &k32, &h32, &i32, &sx};
    void *pg8[] = {&x, &w1, &w1s, &h, &sorted, &experts, &total, &ns, &k32, &h32, &i32, &sx};
    if ((st = shipped_launch(ctx, api, k_gate_up, (tile_dim3){(unsigned)p.max_blocks, (unsigned)shipped_cdiv(a->inter, tiles[0].bn), 1}, p.f8 ? pg8 : pg16, a->stream)) != TILE_OK)
        goto done;
    void *pd16[] = {&h, &w2, &out, &wts, &sorted, &experts, &total, &ns, &k32, &h32, &i32, &so};
    void *pd8[] = {&h, &w2, &w2s, &out, &wts, &sorted, &experts, &total, &ns, &k32, &h32, &i32, &so};
    st = shipped_launch(ctx, api, k_down, (tile_dim3){(unsigned)p.max_blocks, (unsigned)shipped_cdiv(a->hidden, tiles[1].bn), 1}, p.f8 ? pd8 : pd16, a->stream);
done:
    if (own_ws) {
        tile_status fs = tile_free(ctx, ws); /* waits for the launches on cuda (as cuMemFree does) */
        if (st == TILE_OK) st = fs;
    }
    return st;
}

tile_status tile_moe_forward(tile_context *ctx, const tile_moe_args *a) { return moe_run(ctx, a, true); }
tile_status tile_moe_prepare(tile_context *ctx, const tile_moe_args *a) { return moe_run(ctx, a, false); }
