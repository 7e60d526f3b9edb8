/* attention.c - tile_attention_fwd and tile_attention_decode_paged: the
 * kernels of kernels/attention/attention.tile and
 * kernels/attention/paged_attention.tile behind one call each.
 *
 * What they launch, and the variants:
 *   tile_attention_fwd: attention_fwd_f16 or attention_fwd_bf16 (by dtype),
 *     attention_fwd_e4m3_f16 or attention_fwd_e4m3_bf16 (f8e4m3 inputs, by
 *     o_dtype; q_scale * k_scale folded into the scale argument, v_scale
 *     last), grid (cdiv(seq_q, BM), batch * heads_q).  Defines HEAD_DIM, BLOCK_D
 *     (head_dim rounded up to a power of two), BM=64, BN (64, 32 when
 *     BLOCK_D > 64), num_warps=8 when BLOCK_D > 128 (f8: always); on sm_90a (wgmma: each
 *     warpgroup takes 64 query rows, Q read from shared memory) BM=128 with
 *     8 warps, BN=128 and 3 stages up to BLOCK_D 64, BN=128 and 3 stages (f8: 2) up to
 *     128 (64 unless every stride is a multiple of 16 and the pointers are
 *     aligned), BN=64 and 2 stages at 256 (0 spills, ptxas -v; test_kernels), and
 *     warp_specialize=1 (a producer warpgroup after the 8 warps issues K's and V's loads),
 *     pingpong=1 up to BLOCK_D 128 but f8 (the two computing warpgroups take turns at Q·K^T),
 *     overlap=1 but f8 (each issues P·V of one key block with Q·K^T of the next);
 *     f8 on sm_90a: BN=128 at BLOCK_D 64 with vectors, else 64, 32 at 256;
 *     CAUSAL, LOCAL (a window), VARLEN (cu_seqlens), WRITE_LSE;
 *     specializations =16 of the q/k/v/o strides and slb, slh (the LSE's).
 *   tile_attention_decode_paged: paged_attention[_tree]_{f16,bf16}[_kv8] (by
 *     dtype, _kv8 for an f8e4m3 cache, _tree with a tree_mask), grid
 *     (heads_kv, num_seqs, splits); with
 *     more than one split then paged_attention_merge_{f16,bf16}, grid
 *     (heads_q * num_tokens, num_seqs).  Defines HEAD_DIM, BLOCK_D,
 *     BLOCK_SIZE, BM (query rows per KV head, a power of two >= 16), BN (64
 *     below BLOCK_D 128, else 32; 16 at BLOCK_D 256 with BM 64), SPLIT, num_warps=8 when BLOCK_D > 128; the merge HEAD_DIM,
 *     BLOCK_D, BLOCK_S (splits rounded up to a power of two).
 *     Specializations =16 of the strides and sbt (the block table's).
 *   Every variant: no_align_ptrs when a pointer is not 16-byte aligned.
 *
 *   1. Check the arguments before anything reaches the device: dtypes,
 *      sizes (non-negative, head_dim a multiple of 16 up to 256, heads_q a
 *      multiple of heads_kv, block_size 16/32/64, ...), that every offset
 *      the kernels form in 32 bits fits, and that every pointer lies in an
 *      allocation of this context with room for what the kernel touches
 *      (computed from the sizes and strides).  Paged decode can also copy
 *      the block tables and context lengths back and check every entry.
 *   2. Choose the variant: the kernel by dtype (and f8 KV cache), defines
 *      for the head_dim, padding, masks and tile shape; split-KV from the
 *      batch and context length.
 *   3. Specialize run-time arguments from their values: strides and sizes
 *      divisible by 16 become "ARG=16" (only what is true); pointers not
 *      16-byte aligned turn off the alignment assumption.
 *   4. The kernel comes from the context's table of variants
 *      (kernels/shipped.h); a variant compiles on first use through the
 *      caches (memory, disk, compiler) and stays loaded with the context.
 *   5. Launch on the caller's stream (tile_launch passes dynamic shared
 *      memory past the target's static limit, support/target.h).
 * The _prepare entry points run steps 1-4 with the size checks but without
 * reading a pointer (only which are zero and their alignment, as the
 * variants depend on them), the block tables or a workspace, and launch
 * nothing: afterwards the call finds every variant in the context's table.
 * With a caller workspace (or no splits) the call then allocates nothing. */
#include "kernels/shipped.h"
#include "runtime/rt.h"
#include "support/target.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_SPLITS = 64, SPLIT_MIN_KEYS = 256 };
/* split-KV aims at 2 programs per multiprocessor of the context's device */
enum { PROGRAMS_PER_SM = 2 };
static const int64_t I32_LIMIT = INT32_MAX;

/* The element offset of the last element of a [n0, n1, n2, d] tensor with
 * strides s (d contiguous) plus one: how many elements it spans. */
static uint64_t span(int64_t n0, int64_t n1, int64_t n2, int64_t d, const int64_t s[3]) {
    if (n0 <= 0 || n1 <= 0 || n2 <= 0 || d <= 0) return 0;
    /* UINT64_MAX past 2^64 (sizes and strides from the caller: a product that wrapped could pass the checks) */
    uint64_t t0, t1, t2, r;
    if (__builtin_mul_overflow((uint64_t)(n0 - 1), (uint64_t)s[0], &t0) || __builtin_mul_overflow((uint64_t)(n1 - 1), (uint64_t)s[1], &t1) ||
        __builtin_mul_overflow((uint64_t)(n2 - 1), (uint64_t)s[2], &t2) || __builtin_add_overflow(t0, t1, &r) ||
        __builtin_add_overflow(r, t2, &r) || __builtin_add_overflow(r, (uint64_t)d, &r))
        return UINT64_MAX;
    return r;
}

/* a * b for sizes >= 0, INT64_MAX past it (a stride that large fails strides_too_big) */
static int64_t mul_sat(int64_t a, int64_t b) {
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

/* strides all 0: contiguous [., n1, n2, d]; else each >= 0 and < 2^31 */
static const char *strides_resolve(const int64_t in[3], int64_t n1, int64_t n2, int64_t d, int64_t out[3]) {
    if (!in[0] && !in[1] && !in[2]) {
        out[2] = d, out[1] = mul_sat(n2, d), out[0] = mul_sat(n1, out[1]);
        return NULL;
    }
    for (int i = 0; i < 3; i++) {
        if (in[i] < 0) return "strides must be non-negative";
        out[i] = in[i];
    }
    return NULL;
}

/* An output's layout: NULL when no two elements of the [n0, n1, n2, d] tensor with strides s (d contiguous)
 * share an address, else a message (formatted into msg).  The dimensions of more than one index, sorted by
 * stride, must each step past everything inside them: stride >= the span of the smaller-stride dimensions and
 * d.  A stride of 0, or one under head_dim, overlaps for sure; a layout whose dimensions interleave without
 * nesting is refused too, though some such do not overlap (strides 2d over 3 and 3d over 2).  Programs write their
 * rows of an overlapping output at once: each element was whichever wrote last. */
static const char *overlapping_output(const char *name, const char *const dims[3][2], const int64_t n[3], int64_t d, const int64_t s[3],
                                      char *msg, size_t size) {
    int idx[3], k = 0;
    for (int i = 0; i < 3; i++)
        if (n[i] > 1) idx[k++] = i;
    for (int i = 1; i < k; i++) /* insertion sort by stride */
        for (int j = i; j > 0 && s[idx[j]] < s[idx[j - 1]]; j--) {
            int t = idx[j];
            idx[j] = idx[j - 1], idx[j - 1] = t;
        }
    uint64_t extent = (uint64_t)d; /* strides and sizes are below 2^31: no product or sum here wraps */
    for (int i = 0; i < k; i++) {
        int t = idx[i];
        if ((uint64_t)s[t] < extent) {
            snprintf(msg, size, "%s's %s stride %lld is under the %llu elements %s%s: two of its elements would share an address (an "
                     "output may not overlap itself)", name, dims[t][0], (long long)s[t], (unsigned long long)extent,
                     i ? "its " : "of a head_dim", i ? dims[idx[i - 1]][1] : "");
            return msg;
        }
        extent += (uint64_t)(n[t] - 1) * (uint64_t)s[t];
    }
    return NULL;
}

/* NULL when the resolved strides s of tensor `name` fit the kernels' 32-bit arithmetic, else a message naming the
 * first that does not (in msg); given: the caller's strides (all 0: contiguous, so the stride was computed from the
 * sizes); dim: the dimensions' names, outermost first */
static const char *strides_too_big(const char *name, const int64_t given[3], const int64_t s[3], const char *const dim[3], char *msg,
                                   size_t size) {
    for (int i = 0; i < 3; i++)
        if (s[i] >= I32_LIMIT) {
            bool contiguous = !given[0] && !given[1] && !given[2];
            if (contiguous && s[i] == INT64_MAX) /* mul_sat's: the sizes' product is past 2^63 */
                snprintf(msg, size, "%s's %s stride (contiguous, from the sizes) is past 2^63, not below 2^31 (the kernels' offsets are 32-bit)",
                         name, dim[i]);
            else
                snprintf(msg, size, "%s's %s stride %lld%s is not below 2^31 (the kernels' offsets are 32-bit)", name, dim[i], (long long)s[i],
                         contiguous ? " (contiguous, from the sizes)" : "");
            return msg;
        }
    return NULL;
}

#define FAIL(...) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, __VA_ARGS__)
/* ptr holds bytes of esize-byte elements: aligned to them and inside one allocation */
#define RANGE(api, ptr, esize, bytes, what) \
    if ((bytes) != 0 && (st = shipped_check_range(ctx, api, ptr, esize, bytes, what)) != TILE_OK) return st
#define APART(api, out, ob, oname, in, ib, iname) \
    if ((st = shipped_check_apart(ctx, api, out, ob, oname, in, ib, iname)) != TILE_OK) return st


/* ======================= tile_attention_fwd ======================= */

/* The call, or with launch false its preparation (tile_attention_fwd_prepare): no pointer is checked, nothing launched. */
/* The args structs as the first release with size fields laid them out: keep these values when fields are appended. */
enum {
    ATTENTION_ARGS_SIZE_0_1 = offsetof(tile_attention_args, q_scale), /* the f8 fields came later */
    PAGED_ATTENTION_ARGS_SIZE_0_1 = offsetof(tile_paged_attention_args, tree_mask), /* tree_mask came later */
};

/* The caller's paged args as this release reads them (rt_struct_in); false with a message on ctx. */
static bool paged_args_in(tile_context *ctx, const char *api, const tile_paged_attention_args *a, tile_paged_attention_args *o) {
    char err[160];
    if (rt_struct_in(o, a, &rt_layout_tile_paged_attention_args, PAGED_ATTENTION_ARGS_SIZE_0_1, err, sizeof err)) return true;
    rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: args->%s", api, err);
    return false;
}

static tile_status attention_fwd_run(tile_context *ctx, const tile_attention_args *a, bool launch) {
    const char *api = launch ? "tile_attention_fwd" : "tile_attention_fwd_prepare";
    if (!rt_context_valid(ctx)) return rt_no_context(api, ctx);
    if (!a) FAIL("%s: args is NULL", api);
    tile_attention_args args;
    char err[160];
    size_t caller_size;
    memcpy(&caller_size, a, sizeof caller_size);
    if (!rt_struct_in(&args, a, &rt_layout_tile_attention_args, ATTENTION_ARGS_SIZE_0_1, err, sizeof err))
        FAIL("%s: args->%s", api, err);
    a = &args; /* read only this copy from here on */
    if (a->causal != 0 && a->causal != 1) FAIL("%s: causal = %d: 0 or 1", api, a->causal);
    /* 1. arguments */
    if (a->dtype != TILE_F16 && a->dtype != TILE_BF16 && a->dtype != TILE_F8E4M3)
        FAIL("%s: dtype must be TILE_F16, TILE_BF16 or TILE_F8E4M3", api);
    bool f8 = a->dtype == TILE_F8E4M3;
    /* f8: the scales and o_dtype follow stream; a caller whose size stops before them would lose them silently */
    if (f8 && caller_size < offsetof(tile_attention_args, o_dtype) + sizeof a->o_dtype)
        FAIL("%s: dtype TILE_F8E4M3 reads q_scale, k_scale, v_scale and o_dtype: set args->size = sizeof(tile_attention_args) "
             "(size %zu does not cover them)", api, caller_size);
    tile_dtype odt = a->o_dtype == TILE_F32 ? (f8 ? TILE_BF16 : a->dtype) : a->o_dtype;
    if (f8 ? odt != TILE_F16 && odt != TILE_BF16 : odt != a->dtype)
        FAIL("%s: o_dtype %d: %s", api, (int)a->o_dtype,
             f8 ? "TILE_F16 or TILE_BF16 (0: TILE_BF16) with f8e4m3 inputs" : "0 or dtype with f16/bf16 inputs");
    {   /* a negative, NaN or infinite scale is no dequantization scale (shipped_scale_check) */
        const struct { const char *name; float v; } sc[] = {{"q_scale", a->q_scale}, {"k_scale", a->k_scale}, {"v_scale", a->v_scale}};
        char msg[160];
        for (int i = 0; i < 3; i++)
            if (shipped_scale_check(sc[i].name, sc[i].v, msg, sizeof msg)) FAIL("%s: %s", api, msg);
    }
    /* 0 and 1 both mean "no scale" (as the paged decode's k_scale and v_scale with a 16-bit cache); any
     * other value with f16/bf16 inputs would be dropped silently */
#define NO_SCALE(x) ((x) == 0 || (x) == 1)
    if (!f8 && !(NO_SCALE(a->q_scale) && NO_SCALE(a->k_scale) && NO_SCALE(a->v_scale)))
        FAIL("%s: q_scale, k_scale and v_scale apply to TILE_F8E4M3 inputs only (0 or 1 with f16/bf16)", api);
#undef NO_SCALE
    if (a->batch < 0 || a->seq_q < 0 || a->seq_k < 0) FAIL("%s: batch, seq_q and seq_k must be >= 0", api);
    if (a->heads_q < 1 || a->heads_kv < 1) FAIL("%s: heads_q and heads_kv must be >= 1", api);
    if (a->heads_q % a->heads_kv) FAIL("%s: heads_q (%lld) must be a multiple of heads_kv (%lld)", api, (long long)a->heads_q, (long long)a->heads_kv);
    if (a->head_dim < 16 || a->head_dim % 16 || a->head_dim > 256)
        FAIL("%s: head_dim %lld is not supported (a multiple of 16, at most 256)", api, (long long)a->head_dim);
    if (a->window_left < -1 || a->window_right < -1) FAIL("%s: window_left and window_right must be >= 0, or -1 for unbounded", api);
    if (!isfinite(a->softmax_scale)) FAIL("%s: softmax_scale must be finite", api);
    float scale = a->softmax_scale != 0 ? a->softmax_scale : (float)(1.0 / sqrt((double)a->head_dim)), v_scale = 1;
    if (f8) { /* the dequantization scales of Q and K fold into the softmax scale (the kernel's one factor) */
        scale *= (a->q_scale != 0 ? a->q_scale : 1.0f) * (a->k_scale != 0 ? a->k_scale : 1.0f);
        v_scale = a->v_scale != 0 ? a->v_scale : 1.0f;
        if (!isfinite(scale) || scale == 0)
            FAIL("%s: softmax_scale * q_scale * k_scale = %g: the product must be finite and nonzero in f32", api, (double)scale);
    }
    bool varlen = a->cu_seqlens_q || a->cu_seqlens_k;
    if (varlen && (!a->cu_seqlens_q || !a->cu_seqlens_k)) FAIL("%s: cu_seqlens_q and cu_seqlens_k go together", api);
    if (varlen && (a->total_q < 0 || a->total_k < 0)) FAIL("%s: total_q and total_k must be >= 0", api);
    int64_t H = a->heads_q, Hk = a->heads_kv, D = a->head_dim, B = a->batch;
    int64_t sq[3], sk[3], sv[3], so[3];
    const char *why;
    if ((why = strides_resolve(a->q_stride, a->seq_q, H, D, sq)) || (why = strides_resolve(a->k_stride, a->seq_k, Hk, D, sk)) ||
        (why = strides_resolve(a->v_stride, a->seq_k, Hk, D, sv)) || (why = strides_resolve(a->o_stride, a->seq_q, H, D, so)))
        FAIL("%s: %s", api, why);
    if (varlen) sq[0] = sk[0] = sv[0] = so[0] = 0;
    {
        static const char *const dim[3] = {"batch", "token", "head"};
        char msg[160];
        if ((why = strides_too_big("q", a->q_stride, sq, dim, msg, sizeof msg)) || (why = strides_too_big("k", a->k_stride, sk, dim, msg, sizeof msg)) ||
            (why = strides_too_big("v", a->v_stride, sv, dim, msg, sizeof msg)) || (why = strides_too_big("o", a->o_stride, so, dim, msg, sizeof msg)))
            FAIL("%s: %s", api, why);
    }
    {
        static const char *const dims[3][2] = {{"batch", "batches span"}, {"token", "tokens span"}, {"head", "heads span"}};
        char msg[256];
        /* sizes below 2^31 here (the sizes check follows): a larger one fails that check either way */
        int64_t n[3] = {varlen ? 1 : shipped_min(a->batch, I32_LIMIT), shipped_min(varlen ? a->total_q : a->seq_q, I32_LIMIT), shipped_min(a->heads_q, I32_LIMIT)};
        if (a->batch > 0 && a->seq_q > 0 && overlapping_output("o", dims, n, a->head_dim, so, msg, sizeof msg)) FAIL("%s: %s", api, msg);
    }
    /* the kernels address within a batch entry (varlen: the whole packed tensor) with 32-bit offsets */
    int64_t rows_q = varlen ? a->total_q : a->seq_q, rows_k = varlen ? a->total_k : a->seq_k;
    uint64_t in_q = span(1, rows_q, H, D, sq), in_k = span(1, rows_k, Hk, D, sk), in_v = span(1, rows_k, Hk, D, sv),
             in_o = span(1, rows_q, H, D, so);
    if (B > I32_LIMIT || rows_q > I32_LIMIT || rows_k > I32_LIMIT || in_q >= (uint64_t)I32_LIMIT ||
        in_k >= (uint64_t)I32_LIMIT || in_v >= (uint64_t)I32_LIMIT || in_o >= (uint64_t)I32_LIMIT)
        FAIL("%s: sizes too large for the kernel's 32-bit offsets (one sequence of one tensor must span fewer than 2^31 elements)", api);
    if (H > 65535 || B * H > 65535) /* a valid request the grid cannot hold (H first: B * H may not overflow) */
        return rt_fail(ctx, TILE_ERROR_UNSUPPORTED, "%s: batch * heads_q must be at most 65535 (the grid's y dimension)", api);
    int64_t slb = varlen ? 0 : H * a->seq_q, slh = varlen ? a->total_q : a->seq_q;
    /* rows_q, not total_q: without cu_seqlens total_q is not read (and may be anything: H * total_q overflowed) */
    if (B * H * shipped_max(1, a->seq_q) >= I32_LIMIT || H * shipped_max(rows_q, 1) >= I32_LIMIT) FAIL("%s: the LSE tensor must hold fewer than 2^31 rows", api);
    if (B == 0 || a->seq_q == 0) return TILE_OK; /* nothing to compute; pointers unused */
    tile_status st;
    size_t es = f8 ? 1 : 2, oes = 2; /* q, k, v; o (f16 or bf16) */
    if (!launch) {
        /* prepare: pointers are not read */
    } else if (varlen) {
        RANGE(api, a->q, es, es * in_q, "q");
        RANGE(api, a->k, es, es * in_k, "k");
        RANGE(api, a->v, es, es * in_v, "v");
        RANGE(api, a->o, oes, oes * in_o, "o");
        APART(api, a->o, oes * in_o, "o", a->k, es * in_k, "k");
        APART(api, a->o, oes * in_o, "o", a->v, es * in_v, "v");
        RANGE(api, a->cu_seqlens_q, 4, 4 * (uint64_t)(B + 1), "cu_seqlens_q");
        RANGE(api, a->cu_seqlens_k, 4, 4 * (uint64_t)(B + 1), "cu_seqlens_k");
        if (a->lse) RANGE(api, a->lse, 4, 4 * (uint64_t)(H * a->total_q), "lse");
    } else {
        RANGE(api, a->q, es, es * span(B, a->seq_q, H, D, sq), "q");
        if (a->seq_k) {
            RANGE(api, a->k, es, es * span(B, a->seq_k, Hk, D, sk), "k");
            RANGE(api, a->v, es, es * span(B, a->seq_k, Hk, D, sv), "v");
        }
        RANGE(api, a->o, oes, oes * span(B, a->seq_q, H, D, so), "o");
        if (a->seq_k) { /* other programs still read k and v while one writes its rows of o */
            APART(api, a->o, oes * span(B, a->seq_q, H, D, so), "o", a->k, es * span(B, a->seq_k, Hk, D, sk), "k");
            APART(api, a->o, oes * span(B, a->seq_q, H, D, so), "o", a->v, es * span(B, a->seq_k, Hk, D, sv), "v");
        }
        if (a->lse) RANGE(api, a->lse, 4, 4 * (uint64_t)(B * H * a->seq_q), "lse");
    }
    if (launch) { /* the LSE is written while other programs read q, k, v and the offsets, and beside o; o beside the offsets */
        const struct { tile_devptr p; uint64_t bytes; const char *what; } in[] = {
            {a->q, es * (varlen ? in_q : (uint64_t)span(B, a->seq_q, H, D, sq)), "q"},
            {a->seq_k || varlen ? a->k : 0, es * (varlen ? in_k : (uint64_t)span(B, a->seq_k, Hk, D, sk)), "k"},
            {a->seq_k || varlen ? a->v : 0, es * (varlen ? in_v : (uint64_t)span(B, a->seq_k, Hk, D, sv)), "v"},
            {a->o, oes * (varlen ? in_o : (uint64_t)span(B, a->seq_q, H, D, so)), "o"},
            {varlen ? a->cu_seqlens_q : 0, 4 * (uint64_t)(B + 1), "cu_seqlens_q"},
            {varlen ? a->cu_seqlens_k : 0, 4 * (uint64_t)(B + 1), "cu_seqlens_k"},
        };
        uint64_t lb = 4 * (uint64_t)(varlen ? H * a->total_q : B * H * a->seq_q);
        /* o over q: exactly in place (each program reads its rows of q before it writes them) or apart */
        if (!(a->o == a->q && es == oes && !memcmp(so, sq, sizeof sq))) { APART(api, a->o, in[3].bytes, "o", a->q, in[0].bytes, "q"); }
        for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
            if (a->lse) { APART(api, a->lse, lb, "lse", in[i].p, in[i].bytes, in[i].what); }
            if (i >= 4) { APART(api, a->o, in[3].bytes, "o", in[i].p, in[i].bytes, in[i].what); }
        }
    }

    /* 2-3. variant */
    int64_t bd = shipped_pow2_at_least(D);
    bool local = a->window_left >= 0 || a->window_right >= 0;
    const char *kname = f8 ? (odt == TILE_BF16 ? "attention_fwd_e4m3_bf16" : "attention_fwd_e4m3_f16")
                           : (a->dtype == TILE_BF16 ? "attention_fwd_bf16" : "attention_fwd_f16");
    ShippedVariant v = shipped_variant(kname);
    shipped_define(&v, "HEAD_DIM", D);
    shipped_define(&v, "BLOCK_D", bd);
    const Target *tg = target_find(rt_arch(ctx));
    int64_t bm = 64;
    if (tg && tg->mma == WGMMA) {
        /* BN 128 above BLOCK_D 64 only where every row loads as 16-byte vectors (strides multiples of
         * 16, pointers aligned): element-by-element loads keep an address per element and spill (216 B
         * at head_dim 80 with every option) */
        bool vec = ((a->q | a->k | a->v | a->o | a->lse) & 15) == 0;
        for (int i = 0; i < 3; i++) vec = vec && sq[i] % 16 == 0 && sk[i] % 16 == 0 && sv[i] % 16 == 0 && so[i] % 16 == 0;
        /* f8 at head_dim 256: BM 64 (128 spills 500 B: V's transposing stage in registers) */
        bm = f8 && bd > 128 ? 64 : 128;
        shipped_define(&v, "BM", bm);
        /* f8: narrower tiles: BN 128 only at BLOCK_D 64 with vectors (32 B of spills without), 64 at 128
         * (128 spilled 828 B); at 256 (mma.sync on widened values: K and V pipelined as bytes and read
         * back into registers to be widened, lower/software_pipeline.c step 1b) 16 (32 spilled 56 B) */
        int64_t bn = f8 ? (bd <= 64 && vec ? 128 : bd <= 128 ? 64 : 16) : bd <= 64 || (bd <= 128 && vec) ? 128 : 64;
        shipped_define(&v, "BN", bn);
        shipped_define(&v, "num_warps", 8);
        /* 3 stages up to 128 but f8 (230,432 B of shared memory at BN 128 of the 232,448): with
         * overlap a stage of K and V is released one iteration later, after its P·V */
        shipped_define(&v, "num_stages", bd <= 64 || (!f8 && bd <= 128) ? 3 : 2);
        /* a producer warpgroup issues K's and V's tensor-map loads (lower/warp_specialize.c): the two
         * computing warpgroups' loop loses the copies' code and its per-iteration barrier */
        shipped_define(&v, "warp_specialize", 1);
        /* and the two take turns issuing Q·K^T, so one's softmax runs under the other's dots
         * (lower/pingpong.c; FlashAttention-3 does so up to head_dim 128 in f16/bf16) */
        if (!f8 && bd <= 128) shipped_define(&v, "pingpong", 1);
        /* and each issues P·V of one block with Q·K^T of the next, so its own softmax runs under its
         * P·V (lower/overlap.c; f8 would spill: 200-370 B more with the e4m3 P carried) */
        if (!f8) shipped_define(&v, "overlap", 1);
    } else {
        /* f8 at head_dim 256: BM 32, BN 16 on 8 warps (BM 64 spills 360-450 B, 1,260 B as launched before) */
        if (f8 && bd > 128) bm = 32;
        shipped_define(&v, "BM", bm);
        shipped_define(&v, "BN", f8 && bd > 128 ? 16 : bd <= 64 ? 64 : 32);
        /* head_dim 256: 4 warps spill the 64 x 256 accumulator (ptxas -v); f8 always: its K and V
         * tiles stay in registers to be widened, and P's conversions add more (4 warps spill 276 B at
         * BLOCK_D 64) */
        if (bd > 128 || f8) shipped_define(&v, "num_warps", 8);
        /* sm_86 and sm_89 give a block 99 KiB of shared memory (sm_80 163 KiB): BLOCK_D 256's three stages of K
         * and V need 100-104 KiB there, two fit */
        if (bd > 128 && tg && tg->smem_dynamic < 128 * 1024) shipped_define(&v, "num_stages", 2);
    }
    shipped_flag(&v, "CAUSAL", a->causal != 0);
    shipped_flag(&v, "LOCAL", local);
    shipped_flag(&v, "VARLEN", varlen);
    shipped_flag(&v, "WRITE_LSE", a->lse != 0);
    static const char *const stride_names[4][3] = {{"sqb", "sqs", "sqh"}, {"skb", "sks", "skh"}, {"svb", "svs", "svh"}, {"sob", "sos", "soh"}};
    const int64_t *strides[4] = {sq, sk, sv, so};
    /* K and V both through tensor maps (every stride a nonzero multiple of 16, pointer aligned) or neither: on
     * sm_90a a variant with one of them through a tensor map and the other not (a broadcast or sliced K beside a
     * contiguous V) deadlocked its consumer warpgroups at the pingpong barriers (seen on emu:sm_90a); such a call
     * leaves both unspecialized, the variant gapped layouts take */
    bool hopper = tg && tg->mma == WGMMA, tma[2] = {(a->k & 15) == 0, (a->v & 15) == 0};
    for (int t = 0; t < 2; t++)
        for (int i = varlen ? 1 : 0; i < 3; i++) tma[t] = tma[t] && strides[t + 1][i] != 0 && strides[t + 1][i] % 16 == 0;
    for (int t = 0; t < 4; t++)
        for (int i = 0; i < 3; i++)
            if (!(hopper && (t == 1 || t == 2) && tma[0] != tma[1])) shipped_spec16(&v, stride_names[t][i], strides[t][i]);
    shipped_spec16(&v, "slb", slb);
    shipped_spec16(&v, "slh", slh);
    tile_devptr lse = a->lse ? a->lse : a->o, cu_q = varlen ? a->cu_seqlens_q : a->q, cu_k = varlen ? a->cu_seqlens_k : a->q;
    tile_devptr q = a->q, k = a->seq_k || varlen ? a->k : a->q, vv = a->seq_k || varlen ? a->v : a->q, o = a->o;
    v.no_align_ptrs = ((q | k | vv | o | lse | cu_q | cu_k) & 15) != 0;

    /* 4. kernel */
    tile_kernel *kern;
    st = shipped_kernel(ctx, api, "attention/attention.tile", &v, &kern, NULL);
    shipped_variant_free(&v);
    if (st != TILE_OK || !launch) return st;

    /* 5. launch: grid (cdiv(seq_q, BM), batch * heads_q) */
    int32_t seq_q = (int32_t)a->seq_q, seq_k = (int32_t)a->seq_k, hq = (int32_t)H, group = (int32_t)(H / Hk);
    int32_t s32[4][3];
    for (int t = 0; t < 4; t++)
        for (int i = 0; i < 3; i++) s32[t][i] = (int32_t)strides[t][i];
    int32_t slb32 = (int32_t)slb, slh32 = (int32_t)slh;
    int32_t wl = a->window_left < 0 ? 1 << 30 : (int32_t)shipped_min(a->window_left, 1 << 30);
    int32_t wr = a->window_right < 0 ? 1 << 30 : (int32_t)shipped_min(a->window_right, 1 << 30);
    void *params[] = {&q, &k, &vv, &o, &lse, &cu_q, &cu_k, &seq_q, &seq_k, &hq, &group,
                      &s32[0][0], &s32[0][1], &s32[0][2], &s32[1][0], &s32[1][1], &s32[1][2],
                      &s32[2][0], &s32[2][1], &s32[2][2], &s32[3][0], &s32[3][1], &s32[3][2], &slb32, &slh32, &scale, &wl, &wr, &v_scale};
    return shipped_launch(ctx, api, kern, (tile_dim3){(unsigned)shipped_cdiv(a->seq_q, bm), (unsigned)(B * H), 1}, params, a->stream);
}

tile_status tile_attention_fwd(tile_context *ctx, const tile_attention_args *a) { return attention_fwd_run(ctx, a, true); }
tile_status tile_attention_fwd_prepare(tile_context *ctx, const tile_attention_args *a) { return attention_fwd_run(ctx, a, false); }

/* ==================== tile_attention_decode_paged ==================== */

typedef struct PagedPlan {
    tile_dtype kv;
    int64_t group, bm, bn, bd, table_stride, warps;
    int64_t sq[3], so[3], sk[3], sv[3];
    int splits;
    char msg[256]; /* a message paged_plan had to format */
    size_t ws_bytes, off_lse; /* workspace: o_part f32 [rows * splits * head_dim], then lse_part f32 [rows * splits] */
} PagedPlan;

/* Sizes only (no pointers): the checks and choices both entry points share. */
static const char *paged_plan(const tile_paged_attention_args *a, int sms, PagedPlan *p, tile_status *status) {
    *status = TILE_ERROR_INVALID_VALUE;
    memset(p, 0, sizeof *p);
    if (a->dtype != TILE_F16 && a->dtype != TILE_BF16) return "dtype must be TILE_F16 or TILE_BF16";
    p->kv = a->kv_dtype == TILE_F32 ? a->dtype : a->kv_dtype;
    if (p->kv != a->dtype && p->kv != TILE_F8E4M3) return "kv_dtype must be dtype or TILE_F8E4M3";
    if (shipped_scale_check("k_scale", a->k_scale, p->msg, sizeof p->msg) || shipped_scale_check("v_scale", a->v_scale, p->msg, sizeof p->msg))
        return p->msg;
    if (!isfinite(a->softmax_scale)) return "softmax_scale must be finite";
    /* the scales dequantize f8 codes; a 16-bit cache holds values, so a scale there would be dropped silently */
    if (p->kv != TILE_F8E4M3 && ((a->k_scale != 0 && a->k_scale != 1) || (a->v_scale != 0 && a->v_scale != 1)))
        return "k_scale and v_scale apply to an f8e4m3 cache only (kv_dtype TILE_F8E4M3; 0 or 1 with a 16-bit cache)";
    if (a->num_seqs < 0) return "num_seqs must be >= 0";
    if (a->heads_q < 1 || a->heads_kv < 1) return "heads_q and heads_kv must be >= 1";
    /* the checks a caller most often trips name the value given, as tile_attention_fwd's do */
    if (a->heads_q % a->heads_kv) {
        snprintf(p->msg, sizeof p->msg, "heads_q (%lld) must be a multiple of heads_kv (%lld)", (long long)a->heads_q,
                 (long long)a->heads_kv);
        return p->msg;
    }
    if (a->head_dim < 16 || a->head_dim % 16 || a->head_dim > 256) {
        snprintf(p->msg, sizeof p->msg, "head_dim %lld is not supported (a multiple of 16, at most 256)", (long long)a->head_dim);
        return p->msg;
    }
    if (a->num_tokens < 1 || a->num_tokens > 8) {
        snprintf(p->msg, sizeof p->msg, "num_tokens %lld: must be 1..8", (long long)a->num_tokens);
        return p->msg;
    }
    if (a->block_size != 16 && a->block_size != 32 && a->block_size != 64) {
        snprintf(p->msg, sizeof p->msg, "block_size %lld: must be 16, 32 or 64", (long long)a->block_size);
        return p->msg;
    }
    if (a->num_blocks < 1 || a->num_blocks > I32_LIMIT) return "num_blocks must be 1 .. 2^31 - 1";
    if (a->max_context_len < a->num_tokens || a->max_context_len > I32_LIMIT) return "max_context_len must be at least num_tokens and below 2^31";
    if (a->num_splits < 0 || a->num_splits > MAX_SPLITS) return "num_splits must be 0 (automatic) .. 64";
    p->group = a->heads_q / a->heads_kv;
    if (p->group * a->num_tokens > 64) {
        *status = TILE_ERROR_UNSUPPORTED;
        snprintf(p->msg, sizeof p->msg, "(heads_q / heads_kv) * num_tokens = %lld query rows per KV head: at most 64 are supported",
                 (long long)(p->group * a->num_tokens));
        return p->msg;
    }
    if (a->heads_kv > 65535 || a->num_seqs > 65535) {
        *status = TILE_ERROR_UNSUPPORTED; /* a valid request the grid cannot hold */
        return "heads_kv and num_seqs must be at most 65535 (the grid)";
    }
    int64_t need_blocks = shipped_cdiv(a->max_context_len, a->block_size);
    p->table_stride = a->block_table_stride ? a->block_table_stride : need_blocks;
    if (p->table_stride < need_blocks) return "block_table_stride is shorter than cdiv(max_context_len, block_size)";
    const char *why;
    int64_t T = a->num_tokens, H = a->heads_q, Hk = a->heads_kv, D = a->head_dim, bs = a->block_size;
    if ((why = strides_resolve(a->q_stride, T, H, D, p->sq)) || (why = strides_resolve(a->o_stride, T, H, D, p->so)) ||
        (why = strides_resolve(a->k_stride, bs, Hk, D, p->sk)) || (why = strides_resolve(a->v_stride, bs, Hk, D, p->sv)))
        return why;
    static const char *const seq_dim[3] = {"sequence", "token", "head"}, *const cache_dim[3] = {"block", "slot", "head"};
    if ((why = strides_too_big("q", a->q_stride, p->sq, seq_dim, p->msg, sizeof p->msg)) ||
        (why = strides_too_big("o", a->o_stride, p->so, seq_dim, p->msg, sizeof p->msg)) ||
        (why = strides_too_big("k_cache", a->k_stride, p->sk, cache_dim, p->msg, sizeof p->msg)) ||
        (why = strides_too_big("v_cache", a->v_stride, p->sv, cache_dim, p->msg, sizeof p->msg)))
        return why;
    if (p->table_stride >= I32_LIMIT) return "block_table_stride must be below 2^31";
    /* within one sequence / one block the kernel's offsets are 32-bit */
    if (span(1, T, H, D, p->sq) >= (uint64_t)I32_LIMIT || span(1, T, H, D, p->so) >= (uint64_t)I32_LIMIT ||
        span(1, bs, Hk, D, p->sk) >= (uint64_t)I32_LIMIT || span(1, bs, Hk, D, p->sv) >= (uint64_t)I32_LIMIT)
        return "sizes too large for the kernel's 32-bit offsets";
    {
        static const char *const dims[3][2] = {{"sequence", "sequences span"}, {"token", "tokens span"}, {"head", "heads span"}};
        int64_t n[3] = {shipped_min(a->num_seqs, I32_LIMIT), T, H};
        if (a->num_seqs > 0 && overlapping_output("o", dims, n, D, p->so, p->msg, sizeof p->msg)) return p->msg;
    }
    p->bd = shipped_pow2_at_least(D);
    p->bm = shipped_pow2_at_least(shipped_max(16, p->group * T));
    /* shared memory (both dots stage their operands) and registers: ptxas -v shows no spills with these
     * (tests/test_kernels.c); BN = 64 spilled 12 bytes at BLOCK_D 128, BM 16 and 32 at BLOCK_D 256, BM 64 */
    p->bn = p->bd < 128 ? 64 : p->bd > 128 && p->bm >= 64 ? 16 : 32;
    p->warps = p->bd > 128 ? 8 : 4;
    /* split-KV: enough programs to fill the device, each split at least SPLIT_MIN_KEYS keys */
    int64_t programs = a->num_seqs * Hk;
    int splits = a->num_splits;
    if (splits == 0) {
        splits = 1;
        int64_t target = (int64_t)PROGRAMS_PER_SM * (sms > 0 ? sms : 1);
        if (programs > 0 && programs < target)
            splits = (int)shipped_max(1, shipped_min(shipped_min(shipped_cdiv(target, programs), shipped_cdiv(a->max_context_len, SPLIT_MIN_KEYS)), MAX_SPLITS));
    }
    splits = (int)shipped_min(splits, shipped_cdiv(a->max_context_len, p->bn)); /* a split is whole BN chunks */
    p->splits = splits < 1 ? 1 : splits;
    if (p->splits > 1) {
        uint64_t rows = (uint64_t)(a->num_seqs * H * T) * (uint64_t)p->splits;
        p->off_lse = (size_t)((4 * rows * (uint64_t)D + 255) & ~(uint64_t)255);
        p->ws_bytes = p->off_lse + 4 * rows;
    }
    *status = TILE_OK;
    return NULL;
}

tile_status tile_paged_attention_workspace_size(tile_context *ctx, const tile_paged_attention_args *a, size_t *bytes, int *num_splits) {
    const char *api = "tile_paged_attention_workspace_size";
    if (bytes) *bytes = 0; /* cleared before any check, the context's included: a failed call leaves no earlier value */
    if (num_splits) *num_splits = 0;
    if (!rt_context_valid(ctx)) return rt_no_context(api, ctx);
    if (!a || !bytes) FAIL("%s: args or bytes is NULL", api);
    tile_paged_attention_args args;
    if (!paged_args_in(ctx, api, a, &args)) return TILE_ERROR_INVALID_VALUE;
    a = &args; /* read only this copy from here on */
    PagedPlan p;
    tile_status st;
    const char *why = paged_plan(a, rt_num_sms(ctx), &p, &st);
    if (why) return rt_fail(ctx, st, "%s: %s", api, why);
    *bytes = p.ws_bytes;
    if (num_splits) *num_splits = p.splits;
    return TILE_OK;
}

/* check_tables: every context length and every block the kernels will read */
static tile_status paged_check_tables(tile_context *ctx, const tile_paged_attention_args *a, const PagedPlan *p) {
    const char *api = "tile_attention_decode_paged";
    size_t S = (size_t)a->num_seqs, nt = (size_t)shipped_cdiv(a->max_context_len, a->block_size);
    int32_t *lens = malloc(S * 4), *table = malloc(nt * 4);
    if (!lens || !table) return free(lens), free(table), rt_fail(ctx, TILE_ERROR_OUT_OF_MEMORY, "%s: check_tables: out of host memory", api);
    tile_status st = tile_synchronize(ctx);
    if (st == TILE_OK) st = tile_memcpy_dtoh(ctx, lens, a->context_lens, S * 4);
    for (size_t s = 0; s < S && st == TILE_OK; s++) {
        if (lens[s] < a->num_tokens || lens[s] > a->max_context_len) {
            st = rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: context_lens[%zu] = %d is outside [num_tokens, max_context_len] = [%lld, %lld]", api, s,
                         lens[s], (long long)a->num_tokens, (long long)a->max_context_len);
            break;
        }
        int64_t nb = shipped_cdiv(lens[s], a->block_size);
        if (nb && (st = tile_memcpy_dtoh(ctx, table, a->block_tables + 4 * s * (uint64_t)p->table_stride, (size_t)nb * 4)) != TILE_OK) break;
        for (int64_t i = 0; i < nb; i++)
            if (table[i] < 0 || table[i] >= a->num_blocks) {
                st = rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: block_tables[%zu][%lld] = %d is not a block (num_blocks %lld)", api, s,
                             (long long)i, table[i], (long long)a->num_blocks);
                break;
            }
    }
    free(lens), free(table);
    return st;
}

/* The call, or with launch false its preparation (tile_attention_decode_paged_prepare): no pointer checked,
 * no table read, no workspace, nothing launched. */
static tile_status decode_paged_run(tile_context *ctx, const tile_paged_attention_args *a, bool launch) {
    const char *api = launch ? "tile_attention_decode_paged" : "tile_attention_decode_paged_prepare";
    if (!rt_context_valid(ctx)) return rt_no_context(api, ctx);
    if (!a) FAIL("%s: args is NULL", api);
    tile_paged_attention_args args;
    if (!paged_args_in(ctx, api, a, &args)) return TILE_ERROR_INVALID_VALUE;
    a = &args; /* read only this copy from here on */
    if (a->check_tables != 0 && a->check_tables != 1) FAIL("%s: check_tables = %d: 0 or 1", api, a->check_tables);
    /* 1. arguments */
    PagedPlan p;
    tile_status st;
    const char *why = paged_plan(a, rt_num_sms(ctx), &p, &st);
    if (why) return rt_fail(ctx, st, "%s: %s", api, why);
    if (a->workspace && a->workspace_bytes < p.ws_bytes) /* ws_bytes is 0 without splits */
        FAIL("%s: workspace of %zu bytes, %zu needed for %d splits (tile_paged_attention_workspace_size)", api, a->workspace_bytes,
             p.ws_bytes, p.splits);
    if (a->num_seqs == 0) return TILE_OK;
    int64_t S = a->num_seqs, T = a->num_tokens, H = a->heads_q, Hk = a->heads_kv, D = a->head_dim;
    size_t es = 2, kes = p.kv == TILE_F8E4M3 ? 1 : 2;
    if (!launch) goto variants; /* pointers are not read */
    RANGE(api, a->q, es, es * span(S, T, H, D, p.sq), "q");
    RANGE(api, a->o, es, es * span(S, T, H, D, p.so), "o");
    RANGE(api, a->k_cache, kes, kes * span(a->num_blocks, a->block_size, Hk, D, p.sk), "k_cache");
    RANGE(api, a->v_cache, kes, kes * span(a->num_blocks, a->block_size, Hk, D, p.sv), "v_cache");
    APART(api, a->o, es * span(S, T, H, D, p.so), "o", a->k_cache, kes * span(a->num_blocks, a->block_size, Hk, D, p.sk), "k_cache");
    APART(api, a->o, es * span(S, T, H, D, p.so), "o", a->v_cache, kes * span(a->num_blocks, a->block_size, Hk, D, p.sv), "v_cache");
    RANGE(api, a->block_tables, 4, 4 * (uint64_t)((S - 1) * p.table_stride + shipped_cdiv(a->max_context_len, a->block_size)), "block_tables");
    RANGE(api, a->context_lens, 4, 4 * (uint64_t)S, "context_lens");
    if (a->tree_mask) RANGE(api, a->tree_mask, 4, 4 * (uint64_t)(S * T), "tree_mask");
    if (a->workspace) { /* the bytes it needs, then the bytes the caller says it has (no more than are there): checked
                         * without splits too, where it needs none, so a bad workspace is not found only once a shape splits */
        RANGE(api, a->workspace, 16, p.ws_bytes ? p.ws_bytes : 1, "workspace");
        RANGE(api, a->workspace, 16, a->workspace_bytes, "workspace_bytes");
    }
    { /* o and the split workspace are written while other programs read the tables and the rest */
        const struct { tile_devptr p; uint64_t bytes; const char *what; } in[] = {
            {a->q, es * (uint64_t)span(S, T, H, D, p.sq), "q"},
            {a->k_cache, kes * (uint64_t)span(a->num_blocks, a->block_size, Hk, D, p.sk), "k_cache"},
            {a->v_cache, kes * (uint64_t)span(a->num_blocks, a->block_size, Hk, D, p.sv), "v_cache"},
            {a->block_tables, 4 * (uint64_t)((S - 1) * p.table_stride + shipped_cdiv(a->max_context_len, a->block_size)), "block_tables"},
            {a->context_lens, 4 * (uint64_t)S, "context_lens"},
            {a->tree_mask, 4 * (uint64_t)(S * T), "tree_mask"},
            {a->o, es * (uint64_t)span(S, T, H, D, p.so), "o"},
        };
        tile_devptr ws = p.splits > 1 ? a->workspace : 0;
        /* o over q: exactly in place (a program reads its rows of q before it writes them) or apart */
        if (!(a->o == a->q && !memcmp(p.so, p.sq, sizeof p.sq))) { APART(api, a->o, in[6].bytes, "o", a->q, in[0].bytes, "q"); }
        for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
            if (i >= 3 && i < 6) { APART(api, a->o, in[6].bytes, "o", in[i].p, in[i].bytes, in[i].what); } /* the caches: above */
            if (i == 6) { /* the merge reads the workspace while it writes o */
                APART(api, a->o, in[6].bytes, "o", ws, p.ws_bytes, "workspace");
            } else {
                APART(api, ws, p.ws_bytes, "workspace", in[i].p, in[i].bytes, in[i].what);
            }
        }
    }
    if (a->check_tables && (st = paged_check_tables(ctx, a, &p)) != TILE_OK) return st;

variants:; /* 2-3. */
    bool bf = a->dtype == TILE_BF16, f8 = p.kv == TILE_F8E4M3;
    bool tree = a->tree_mask != 0;
    static const char *const kn[2][2][2] = {
        {{"paged_attention_f16", "paged_attention_f16_kv8"}, {"paged_attention_bf16", "paged_attention_bf16_kv8"}},
        {{"paged_attention_tree_f16", "paged_attention_tree_f16_kv8"}, {"paged_attention_tree_bf16", "paged_attention_tree_bf16_kv8"}}};
    ShippedVariant v = shipped_variant(kn[tree][bf][f8]);
    shipped_define(&v, "HEAD_DIM", D);
    shipped_define(&v, "BLOCK_D", p.bd);
    shipped_define(&v, "BLOCK_SIZE", a->block_size);
    shipped_define(&v, "BM", p.bm);
    shipped_define(&v, "BN", p.bn);
    shipped_flag(&v, "SPLIT", p.splits > 1);
    if (p.warps != 4) shipped_define(&v, "num_warps", p.warps);
    static const char *const names[4][3] = {{"sqs", "sqt", "sqh"}, {"sos", "sot", "soh"}, {"skb", "sks", "skh"}, {"svb", "svs", "svh"}};
    const int64_t *strides[4] = {p.sq, p.so, p.sk, p.sv};
    for (int t = 0; t < 4; t++)
        for (int i = 0; i < 3; i++) shipped_spec16(&v, names[t][i], strides[t][i]);
    shipped_spec16(&v, "sbt", p.table_stride);
    tile_devptr ws = a->workspace;
    bool own_ws = p.splits > 1 && !ws;
    tile_devptr q = a->q, kc = a->k_cache, vc = a->v_cache, o = a->o, tables = a->block_tables, lens = a->context_lens,
                tmask = a->tree_mask;
    bool no_align = ((q | kc | vc | o | tables | lens | ws | tmask) & 15) != 0;
    v.no_align_ptrs = no_align;
    tile_kernel *k_attn, *k_merge = NULL;
    /* 4. kernels */
    st = shipped_kernel(ctx, api, "attention/paged_attention.tile", &v, &k_attn, NULL);
    shipped_variant_free(&v);
    if (st != TILE_OK) return st;
    if (p.splits > 1) {
        ShippedVariant m = shipped_variant(bf ? "paged_attention_merge_bf16" : "paged_attention_merge_f16");
        shipped_define(&m, "HEAD_DIM", D);
        shipped_define(&m, "BLOCK_D", p.bd);
        shipped_define(&m, "BLOCK_S", shipped_pow2_at_least(p.splits));
        for (int i = 0; i < 3; i++) shipped_spec16(&m, names[1][i], p.so[i]);
        m.no_align_ptrs = no_align;
        st = shipped_kernel(ctx, api, "attention/paged_attention.tile", &m, &k_merge, NULL);
        shipped_variant_free(&m);
        if (st != TILE_OK) return st;
    }
    if (!launch) return TILE_OK;
    if (own_ws && (st = tile_malloc(ctx, p.ws_bytes, &ws)) != TILE_OK) return st;

    /* 5. launches: grid (heads_kv, num_seqs, splits), then the merge (heads_q * T, num_seqs) */
    tile_devptr o_part = p.splits > 1 ? ws : o, lse_part = p.splits > 1 ? ws + p.off_lse : o;
    int32_t t32 = (int32_t)T, g32 = (int32_t)p.group, h32 = (int32_t)H, ns32 = p.splits, sbt = (int32_t)p.table_stride;
    int32_t s32[4][3];
    for (int t = 0; t < 4; t++)
        for (int i = 0; i < 3; i++) s32[t][i] = (int32_t)strides[t][i];
    float scale = a->softmax_scale != 0 ? a->softmax_scale : (float)(1.0 / sqrt((double)D));
    float v_scale = 1;
    if (f8) scale *= a->k_scale != 0 ? a->k_scale : 1.0f, v_scale = a->v_scale != 0 ? a->v_scale : 1.0f;
    /* the tree kernels take tree_mask last: after v_scale with an f8 cache, else after scale */
    void *params[] = {&q, &kc, &vc, &o, &o_part, &lse_part, &tables, &lens, &t32, &g32, &h32,
                      &s32[0][0], &s32[0][1], &s32[0][2], &s32[2][0], &s32[2][1], &s32[2][2], &s32[3][0], &s32[3][1], &s32[3][2],
                      &s32[1][0], &s32[1][1], &s32[1][2], &sbt, &scale, f8 ? (void *)&v_scale : (void *)&tmask, &tmask};
    st = shipped_launch(ctx, api, k_attn, (tile_dim3){(unsigned)Hk, (unsigned)S, (unsigned)p.splits}, params, a->stream);
    if (st == TILE_OK && k_merge) {
        void *mp[] = {&o, &o_part, &lse_part, &t32, &h32, &ns32, &s32[1][0], &s32[1][1], &s32[1][2]};
        st = shipped_launch(ctx, api, k_merge, (tile_dim3){(unsigned)(H * T), (unsigned)S, 1}, mp, a->stream);
    }
    if (own_ws) {
        tile_status fs = tile_free(ctx, ws); /* waits for the launches on cuda (as cuMemFree does) */
        if (st == TILE_OK) st = fs;
    }
    return st;
}

tile_status tile_attention_decode_paged(tile_context *ctx, const tile_paged_attention_args *a) { return decode_paged_run(ctx, a, true); }
tile_status tile_attention_decode_paged_prepare(tile_context *ctx, const tile_paged_attention_args *a) {
    return decode_paged_run(ctx, a, false);
}
