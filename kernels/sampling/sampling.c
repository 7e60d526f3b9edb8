/* sampling.c - tile_sample and tile_spec_verify: the kernels of
 * kernels/sampling/sampling.tile behind one call each (the algorithms are in
 * that file's opening comment and docs/kernels.md).
 *
 * What they launch, and the variants:
 *   tile_sample: sample_{f32,f16,bf16}_{i32,i64} (logits dtype, token dtype),
 *     grid (batch).  Defines BLOCK (vocab rounded up to a power of two,
 *     128 .. 1024; 8 warps at 1024, else 4) and PROBS (the probabilities are
 *     written); specializations
 *     =1/=16 of vocab and the row strides.  The logits pointer is passed twice,
 *     as floats and as same-width integers (the order keys).
 *   tile_spec_verify: spec_verify, grid (batch), BLOCK as above.
 *   Every variant: no_align_ptrs when a pointer is not 16-byte aligned.
 * Per-row parameters go to the kernel as an array pointer and a scalar, with
 * a bit in `flags` saying which one to read (a run-time choice: one variant
 * for every mix of arrays and scalars); an absent array is passed as the
 * logits pointer, never read.
 *
 *   1. Check the arguments: struct size, dtypes, sizes, strides, the scalar
 *      parameters' ranges, that each tensor spans fewer than 2^31 elements
 *      (32-bit offsets), that every pointer lies in an allocation of
 *      this context, aligned to its elements, with room for what is read,
 *      and that what the call writes (out, probs; accepted, out_tokens)
 *      shares no byte with another tensor of the call: a program writes its
 *      row while the others still read theirs.
 *   2. Choose the variant and specialize sizes and strides.
 *   3. The kernel comes from the context's table (kernels/shipped.h).
 *   4. Launch on the caller's stream.
 * tile_sample_prepare and tile_spec_verify_prepare run steps 1-3 without the
 * pointer checks (pointers pick the variant by their alignment and by which
 * are 0 only) and launch nothing. */
#include "kernels/shipped.h"
#include "runtime/rt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const int64_t I32_LIMIT = INT32_MAX;
enum { MAX_GRID_X = INT32_MAX, MIN_BLOCK = 128, MAX_BLOCK = 1024, MAX_VOCAB = 1 << 20, MAX_DRAFT = 64 };
/* the kernel's flags: which per-row parameters are arrays (sampling.tile F_*) */
enum { F_TEMP = 1, F_TOPK = 2, F_TOPP = 4, F_MINP = 8, F_SEED = 16, F_OFFSET = 32, F_GREEDY = 64 };

#define FAIL(...) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, __VA_ARGS__)
#define RANGE(api, ptr, esize, bytes, what) \
    if ((bytes) != 0 && (st = shipped_check_range(ctx, api, ptr, esize, bytes, what)) != TILE_OK) return st

/* The baselines of rt_struct_in: these structs' sizes in the first release that had them. */
enum { SAMPLE_ARGS_SIZE_0_1 = sizeof(tile_sample_args), SPEC_ARGS_SIZE_0_1 = sizeof(tile_spec_verify_args) };

static int64_t block_for(int64_t n) { return shipped_min(shipped_max(shipped_pow2_at_least(n), MIN_BLOCK), MAX_BLOCK); }


/* Each written tensor apart from every other tensor of the call (exact per row: interleaved columns pass);
 * entries with p 0 are absent. */
static tile_status outputs_apart(tile_context *ctx, const char *api, const ShippedRows *w, int nw, const ShippedRows *r, int nr) {
    tile_status st;
    for (int i = 0; i < nw; i++) {
        if (!w[i].p) continue;
        for (int j = 0; j < nr; j++)
            if (r[j].p && (st = shipped_check_rows_apart(ctx, api, &w[i], &r[j], false)) != TILE_OK) return st;
        for (int j = 0; j < i; j++)
            if (w[j].p && (st = shipped_check_rows_apart(ctx, api, &w[i], &w[j], false)) != TILE_OK) return st;
    }
    return TILE_OK;
}

/* A per-row parameter array: checked when given, and its flag set */
static tile_status param_array(tile_context *ctx, const char *api, tile_devptr p, uint64_t esize, int64_t batch, int flag,
                               const char *what, int *flags) {
    if (!p) return TILE_OK;
    *flags |= flag;
    return shipped_check_range(ctx, api, p, esize, esize * (uint64_t)batch, what);
}

/* ============================ tile_sample ============================ */

/* The call, or with launch false its preparation: no pointer checked, nothing launched. */
static tile_status sample_run(tile_context *ctx, const tile_sample_args *args, bool launch) {
    const char *api = launch ? "tile_sample" : "tile_sample_prepare";
    if (!rt_context_valid(ctx)) return rt_no_context(api, ctx);
    if (!args) FAIL("%s: args is NULL", api);
    /* 1. arguments */
    tile_sample_args a;
    char err[160];
    if (!rt_struct_in(&a, args, &rt_layout_tile_sample_args, SAMPLE_ARGS_SIZE_0_1, err, sizeof err)) FAIL("%s: args->%s", api, err);
    if (a.dtype != TILE_F32 && a.dtype != TILE_F16 && a.dtype != TILE_BF16) FAIL("%s: dtype must be TILE_F32, TILE_F16 or TILE_BF16", api);
    if (a.out_dtype == TILE_F32) a.out_dtype = TILE_I32; /* 0: the default */
    if (a.out_dtype != TILE_I32 && a.out_dtype != TILE_I64) FAIL("%s: out_dtype must be TILE_I32 or TILE_I64", api);
    if (a.batch < 0 || a.batch > MAX_GRID_X) FAIL("%s: batch = %lld: 0 .. 2^31 - 1", api, (long long)a.batch);
    if (a.vocab < 1 || a.vocab > MAX_VOCAB) FAIL("%s: vocab = %lld: 1 .. 2^20", api, (long long)a.vocab);
    int64_t ld = a.ld ? a.ld : a.vocab, ldp = a.ldp ? a.ldp : a.vocab;
    if (ld < a.vocab) FAIL("%s: ld = %lld is shorter than a row (0 or at least vocab)", api, (long long)a.ld);
    if (ldp < a.vocab) FAIL("%s: ldp = %lld is shorter than a row (0 or at least vocab)", api, (long long)a.ldp);
    if (!a.temperature && !isfinite(a.temperature_value)) FAIL("%s: temperature_value must be finite (<= 0: greedy)", api);
    if (!a.top_k && a.top_k_value < 0) FAIL("%s: top_k_value = %d: 0 (off) or more", api, (int)a.top_k_value);
    if (!a.top_p && !(a.top_p_value > 0 && a.top_p_value <= 1)) FAIL("%s: top_p_value = %g: in (0, 1] (1: off)", api, (double)a.top_p_value);
    if (!a.min_p && !(a.min_p_value >= 0 && a.min_p_value <= 1)) FAIL("%s: min_p_value = %g: in [0, 1] (0: off)", api, (double)a.min_p_value);
    uint64_t nx = shipped_rows_span(a.batch, a.vocab, ld), np = shipped_rows_span(a.batch, a.vocab, ldp);
    if (nx >= (uint64_t)I32_LIMIT || (a.probs && np >= (uint64_t)I32_LIMIT))
        FAIL("%s: sizes too large for the kernel's 32-bit offsets (each tensor must span fewer than 2^31 elements)", api);
    if (a.batch == 0) return TILE_OK; /* nothing to compute: no pointer is read, so each may be 0 (as tile_gemm with m = 0) */
    tile_status st;
    uint64_t es = a.dtype == TILE_F32 ? 4 : 2, oes = a.out_dtype == TILE_I64 ? 8 : 4;
    int flags = 0;
    if (launch) {
        if (!a.logits) FAIL("%s: logits is 0", api);
        if (!a.out) FAIL("%s: out is 0", api);
        RANGE(api, a.logits, es, es * nx, "logits");
        RANGE(api, a.out, oes, oes * (uint64_t)a.batch, "out");
        if (a.probs) RANGE(api, a.probs, 4, 4 * np, "probs");
        if ((st = param_array(ctx, api, a.temperature, 4, a.batch, F_TEMP, "temperature", &flags)) ||
            (st = param_array(ctx, api, a.top_k, 4, a.batch, F_TOPK, "top_k", &flags)) ||
            (st = param_array(ctx, api, a.top_p, 4, a.batch, F_TOPP, "top_p", &flags)) ||
            (st = param_array(ctx, api, a.min_p, 4, a.batch, F_MINP, "min_p", &flags)) ||
            (st = param_array(ctx, api, a.seed, 8, a.batch, F_SEED, "seed", &flags)) ||
            (st = param_array(ctx, api, a.offset, 8, a.batch, F_OFFSET, "offset", &flags)))
            return st;
        {
            uint64_t B = (uint64_t)a.batch;
            const ShippedRows w[] = {{"out", a.out, 1, oes * B, oes * B, oes}, {"probs", a.probs, B, 4 * (uint64_t)a.vocab, 4 * (uint64_t)ldp, 4}};
            const ShippedRows r[] = {{"logits", a.logits, B, es * (uint64_t)a.vocab, es * (uint64_t)ld, es},
                                     {"temperature", a.temperature, 1, 4 * B, 4 * B, 4}, {"top_k", a.top_k, 1, 4 * B, 4 * B, 4},
                                     {"top_p", a.top_p, 1, 4 * B, 4 * B, 4}, {"min_p", a.min_p, 1, 4 * B, 4 * B, 4},
                                     {"seed", a.seed, 1, 8 * B, 8 * B, 8}, {"offset", a.offset, 1, 8 * B, 8 * B, 8}};
            if ((st = outputs_apart(ctx, api, w, 2, r, 7)) != TILE_OK) return st;
        }
    }

    /* 2. variant */
    char name[32];
    snprintf(name, sizeof name, "sample_%s_%s", tile_dtype_name(a.dtype), a.out_dtype == TILE_I64 ? "i64" : "i32");
    ShippedVariant v = shipped_variant(name);
    int64_t block = block_for(a.vocab);
    shipped_define(&v, "BLOCK", block);
    if (block < MAX_BLOCK) shipped_define(&v, "num_warps", 4); /* 8 (the default) for the widest tile */
    shipped_flag(&v, "PROBS", a.probs != 0);
    shipped_spec16(&v, "vocab", a.vocab);
    shipped_spec_stride(&v, "sx", ld);
    if (a.probs) shipped_spec_stride(&v, "sp", ldp);
    tile_devptr x = a.logits, out = a.out, probs = a.probs ? a.probs : x;
    tile_devptr temp = a.temperature ? a.temperature : x, topk = a.top_k ? a.top_k : x, topp = a.top_p ? a.top_p : x,
                minp = a.min_p ? a.min_p : x, seeds = a.seed ? a.seed : x, offs = a.offset ? a.offset : x;
    v.no_align_ptrs = ((x | out | probs | temp | topk | topp | minp | seeds | offs) & 15) != 0;

    /* 3. kernel */
    tile_kernel *kern;
    st = shipped_kernel(ctx, api, "sampling/sampling.tile", &v, &kern, NULL);
    shipped_variant_free(&v);
    if (st != TILE_OK || !launch) return st;

    /* 4. launch: one program per row */
    float temp_v = a.temperature_value, topp_v = a.top_p_value, minp_v = a.min_p_value;
    int32_t topk_v = a.top_k_value, flags32 = flags, vocab32 = (int32_t)a.vocab, sx32 = (int32_t)ld,
            sp32 = a.probs ? (int32_t)ldp : 0;
    int64_t seed_v = (int64_t)a.seed_value, off_v = (int64_t)a.offset_value;
    void *params[] = {&x,      &x,      &out,  &probs, &temp,   &topk,    &topp,  &minp,  &seeds, &offs,
                      &temp_v, &topk_v, &topp_v, &minp_v, &seed_v, &off_v, &flags32, &vocab32, &sx32, &sp32};
    return shipped_launch(ctx, api, kern, (tile_dim3){(unsigned)a.batch, 1, 1}, params, a.stream);
}

tile_status tile_sample(tile_context *ctx, const tile_sample_args *args) { return sample_run(ctx, args, true); }
tile_status tile_sample_prepare(tile_context *ctx, const tile_sample_args *args) { return sample_run(ctx, args, false); }

/* ========================== tile_spec_verify ========================== */

/* The call, or with launch false its preparation: no pointer checked, nothing launched. */
static tile_status spec_run(tile_context *ctx, const tile_spec_verify_args *args, bool launch) {
    const char *api = launch ? "tile_spec_verify" : "tile_spec_verify_prepare";
    if (!rt_context_valid(ctx)) return rt_no_context(api, ctx);
    if (!args) FAIL("%s: args is NULL", api);
    /* 1. arguments */
    tile_spec_verify_args a;
    char err[160];
    if (!rt_struct_in(&a, args, &rt_layout_tile_spec_verify_args, SPEC_ARGS_SIZE_0_1, err, sizeof err)) FAIL("%s: args->%s", api, err);
    if (a.batch < 0 || a.batch > MAX_GRID_X) FAIL("%s: batch = %lld: 0 .. 2^31 - 1", api, (long long)a.batch);
    if (a.num_draft < 1 || a.num_draft > MAX_DRAFT) FAIL("%s: num_draft = %lld: 1 .. 64", api, (long long)a.num_draft);
    if (a.vocab < 1 || a.vocab > MAX_VOCAB) FAIL("%s: vocab = %lld: 1 .. 2^20", api, (long long)a.vocab);
    bool all_greedy = !a.greedy && a.greedy_value != 0;
    uint64_t nq = (uint64_t)a.batch * (uint64_t)a.num_draft * (uint64_t)a.vocab,
             np = (uint64_t)a.batch * (uint64_t)(a.num_draft + 1) * (uint64_t)a.vocab;
    if (np >= (uint64_t)I32_LIMIT)
        FAIL("%s: sizes too large for the kernel's 32-bit offsets (each tensor must span fewer than 2^31 elements)", api);
    if (a.batch == 0) return TILE_OK; /* nothing to compute: no pointer is read, so each may be 0 */
    tile_status st;
    int flags = 0;
    if (launch) {
        if (!a.draft_tokens) FAIL("%s: draft_tokens is 0", api);
        if (!a.target_probs) FAIL("%s: target_probs is 0", api);
        if (!a.draft_probs && !all_greedy) FAIL("%s: draft_probs is 0 but some rows may sample (greedy is not 1 for every row)", api);
        if (!a.accepted) FAIL("%s: accepted is 0", api);
        if (!a.out_tokens) FAIL("%s: out_tokens is 0", api);
        RANGE(api, a.draft_tokens, 4, 4 * (uint64_t)a.batch * (uint64_t)a.num_draft, "draft_tokens");
        if (a.draft_probs) RANGE(api, a.draft_probs, 4, 4 * nq, "draft_probs");
        RANGE(api, a.target_probs, 4, 4 * np, "target_probs");
        RANGE(api, a.accepted, 4, 4 * (uint64_t)a.batch, "accepted");
        RANGE(api, a.out_tokens, 4, 4 * (uint64_t)a.batch * (uint64_t)(a.num_draft + 1), "out_tokens");
        if ((st = param_array(ctx, api, a.greedy, 4, a.batch, F_GREEDY, "greedy", &flags)) ||
            (st = param_array(ctx, api, a.seed, 8, a.batch, F_SEED, "seed", &flags)) ||
            (st = param_array(ctx, api, a.offset, 8, a.batch, F_OFFSET, "offset", &flags)))
            return st;
        {
            uint64_t B = (uint64_t)a.batch, nd = (uint64_t)a.num_draft;
            const ShippedRows w[] = {{"accepted", a.accepted, 1, 4 * B, 4 * B, 4}, {"out_tokens", a.out_tokens, 1, 4 * B * (nd + 1), 4 * B * (nd + 1), 4}};
            const ShippedRows r[] = {{"draft_tokens", a.draft_tokens, 1, 4 * B * nd, 4 * B * nd, 4}, {"draft_probs", a.draft_probs, 1, 4 * nq, 4 * nq, 4},
                                     {"target_probs", a.target_probs, 1, 4 * np, 4 * np, 4}, {"greedy", a.greedy, 1, 4 * B, 4 * B, 4},
                                     {"seed", a.seed, 1, 8 * B, 8 * B, 8}, {"offset", a.offset, 1, 8 * B, 8 * B, 8}};
            if ((st = outputs_apart(ctx, api, w, 2, r, 6)) != TILE_OK) return st;
        }
    }

    /* 2. variant */
    ShippedVariant v = shipped_variant("spec_verify");
    shipped_define(&v, "BLOCK", block_for(a.vocab));
    shipped_spec16(&v, "vocab", a.vocab);
    tile_devptr draft = a.draft_tokens, p = a.target_probs, q = a.draft_probs ? a.draft_probs : p, acc = a.accepted,
                out = a.out_tokens, greedy = a.greedy ? a.greedy : p, seeds = a.seed ? a.seed : p, offs = a.offset ? a.offset : p;
    v.no_align_ptrs = ((draft | p | q | acc | out | greedy | seeds | offs) & 15) != 0;

    /* 3. kernel */
    tile_kernel *kern;
    st = shipped_kernel(ctx, api, "sampling/sampling.tile", &v, &kern, NULL);
    shipped_variant_free(&v);
    if (st != TILE_OK || !launch) return st;

    /* 4. launch: one program per sequence */
    int32_t greedy_v = a.greedy_value, flags32 = flags, nd32 = (int32_t)a.num_draft, vocab32 = (int32_t)a.vocab;
    int64_t seed_v = (int64_t)a.seed_value, off_v = (int64_t)a.offset_value;
    void *params[] = {&draft, &q, &p, &acc, &out, &greedy, &seeds, &offs, &greedy_v, &seed_v, &off_v, &flags32, &nd32, &vocab32};
    return shipped_launch(ctx, api, kern, (tile_dim3){(unsigned)a.batch, 1, 1}, params, a.stream);
}

tile_status tile_spec_verify(tile_context *ctx, const tile_spec_verify_args *args) { return spec_run(ctx, args, true); }
tile_status tile_spec_verify_prepare(tile_context *ctx, const tile_spec_verify_args *args) { return spec_run(ctx, args, false); }
