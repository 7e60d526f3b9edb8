/* norm.c - tile_fused_add_rmsnorm, tile_fused_add_layernorm and
 * tile_gated_activation: the kernels of kernels/norm/norm.tile and
 * kernels/norm/act.tile behind one call each.
 *
 * What they launch, and the variants:
 *   tile_fused_add_rmsnorm, tile_fused_add_layernorm: norm_{f16,bf16}[_f8|_i8]
 *     (by dtype and quant_dtype), grid (tokens).  Defines BLOCK (hidden
 *     rounded up to a power of two, 128 .. 1024, at least quant_group),
 *     GROUP (quant_group, when set), RESIDUAL, LAYER and BIAS;
 *     specializations =1/=16 of the row strides and hidden.
 *   tile_gated_activation: act_{f16,bf16}[_f8|_i8], grid (tokens).  Defines
 *     BLOCK (d rounded up as above), GROUP and ACT; specializations of the strides
 *     and d.
 *   Every variant: no_align_ptrs when a pointer is not 16-byte aligned.
 *
 *   1. Check the arguments: struct size, dtypes, sizes, strides (a row
 *      stride at least the row), that each tensor spans fewer than 2^31
 *      elements (the kernels' offsets are 32-bit), and that every pointer
 *      lies in an allocation of this context, aligned to its elements, with
 *      room for what the kernel touches.
 *   2. Choose the variant (kernel by dtypes, BLOCK, flags) and specialize
 *      sizes and strides from their values.
 *   3. The kernel comes from the context's table (kernels/shipped.h),
 *      compiled on first use through the caches.
 *   4. Launch on the caller's stream.
 * The _prepare entry points (tile_fused_add_rmsnorm_prepare, ..._layernorm_prepare,
 * tile_gated_activation_prepare) run steps 1-3 without the pointer checks
 * (pointers pick the variant by their alignment only) and launch nothing. */
#include "kernels/shipped.h"
#include "runtime/rt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const int64_t I32_LIMIT = INT32_MAX;
enum { MAX_GRID_X = INT32_MAX, MIN_BLOCK = 128, MAX_BLOCK = 1024 };

#define FAIL(...) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, __VA_ARGS__)
/* ptr holds bytes of esize-byte elements: aligned to them and inside one allocation */
#define RANGE(api, ptr, esize, bytes, what) \
    if ((bytes) != 0 && (st = shipped_check_range(ctx, api, ptr, esize, bytes, what)) != TILE_OK) return st


/* The baselines of rt_struct_in: these structs' sizes in the first release that had them. */
enum { NORM_ARGS_SIZE_0_1 = offsetof(tile_norm_args, quant_group), GATED_ARGS_SIZE_0_1 = offsetof(tile_gated_args, quant_group) };


/* The row stride `name`: 0 means n; else at least n (a message naming it formatted into msg) */
static const char *stride_resolve(const char *name, int64_t in, int64_t n, int64_t *out, char *msg, size_t size) {
    if (in == 0) in = n;
    if (in < n) {
        snprintf(msg, size, "%s = %lld is shorter than its row of %lld elements (0: contiguous)", name, (long long)in, (long long)n);
        return msg;
    }
    *out = in;
    return NULL;
}

/* quant_dtype: 0 (TILE_F32) or dtype means none; *q 0 none, 1 f8e4m3, 2 i8 */
static const char *quant_resolve(tile_dtype dtype, tile_dtype quant, int *q) {
    if (quant == TILE_F32 || quant == dtype) *q = 0;
    else if (quant == TILE_F8E4M3) *q = 1;
    else if (quant == TILE_I8) *q = 2;
    else return "quant_dtype must be 0 (none), dtype, TILE_F8E4M3 or TILE_I8";
    return NULL;
}

static int64_t block_for(int64_t n) { return shipped_min(shipped_max(shipped_pow2_at_least(n), MIN_BLOCK), MAX_BLOCK); }

/* quant_group and lds: *groups scales per row (1 without groups) at row stride *ss */
static const char *group_resolve(int q, int64_t group, int64_t lds, int64_t n, int64_t *groups, int64_t *ss) {
    *groups = 1, *ss = 1;
    if (group == 0) return lds ? "lds is for quant_group; it must be 0" : NULL;
    if (!q) return "quant_group needs a quant_dtype (TILE_F8E4M3 or TILE_I8)";
    if (group < 16 || group > MAX_BLOCK || (group & (group - 1)))
        return "quant_group must be 0 or a power of two from 16 to 1024";
    *groups = (n + group - 1) / group;
    *ss = lds ? lds : *groups;
    return *ss < *groups ? "lds is shorter than a row of group scales" : NULL;
}

static const char *const KERNEL_SUFFIX[3] = {"", "_f8", "_i8"};

/* ================ tile_fused_add_rmsnorm, tile_fused_add_layernorm ================ */

/* The call, or with launch false its preparation: no pointer checked, nothing launched. */
static tile_status norm_run(tile_context *ctx, const tile_norm_args *args, bool layer, bool launch) {
    const char *api = layer ? (launch ? "tile_fused_add_layernorm" : "tile_fused_add_layernorm_prepare")
                            : (launch ? "tile_fused_add_rmsnorm" : "tile_fused_add_rmsnorm_prepare");
    if (!rt_context_valid(ctx)) return rt_no_context(api, ctx);
    if (!args) FAIL("%s: args is NULL", api);
    /* 1. arguments */
    tile_norm_args a;
    char err[160];
    if (!rt_struct_in(&a, args, &rt_layout_tile_norm_args, NORM_ARGS_SIZE_0_1, err, sizeof err)) FAIL("%s: args->%s", api, err);
    const char *why = NULL;
    int q = 0;
    int64_t sx = 0, sr = 0, so = 0, groups = 1, ss = 1;
    if (why) FAIL("%s: %s", api, why);
    if (a.dtype != TILE_F16 && a.dtype != TILE_BF16) FAIL("%s: dtype must be TILE_F16 or TILE_BF16", api);
    if ((why = quant_resolve(a.dtype, a.quant_dtype, &q))) FAIL("%s: %s", api, why);
    if (a.tokens < 0 || a.tokens > MAX_GRID_X) FAIL("%s: tokens = %lld: 0 .. 2^31 - 1", api, (long long)a.tokens);
    if (a.hidden < 1 || a.hidden > 65536) FAIL("%s: hidden = %lld: 1 .. 65536", api, (long long)a.hidden);
    if (!isfinite(a.eps) || a.eps < 0) FAIL("%s: eps must be finite and >= 0", api);
    if (a.bias && !layer) FAIL("%s: bias must be 0 (a bias is for tile_fused_add_layernorm)", api);
    char msg[128];
    if ((why = stride_resolve("ldx", a.ldx, a.hidden, &sx, msg, sizeof msg)) || (why = stride_resolve("ldr", a.ldr, a.hidden, &sr, msg, sizeof msg)) ||
        (why = stride_resolve("ldo", a.ldo, a.hidden, &so, msg, sizeof msg)))
        FAIL("%s: %s", api, why);
    if ((why = group_resolve(q, a.quant_group, a.lds, a.hidden, &groups, &ss))) FAIL("%s: %s", api, why);
    uint64_t nx = shipped_rows_span(a.tokens, a.hidden, sx), nr = shipped_rows_span(a.tokens, a.hidden, sr), no = shipped_rows_span(a.tokens, a.hidden, so);
    uint64_t ns = shipped_rows_span(a.tokens, groups, ss);
    if (nx >= (uint64_t)I32_LIMIT || (a.residual && nr >= (uint64_t)I32_LIMIT) || no >= (uint64_t)I32_LIMIT || ns >= (uint64_t)I32_LIMIT)
        FAIL("%s: sizes too large for the kernel's 32-bit offsets (each tensor must span fewer than 2^31 elements)", api);
    if (a.tokens == 0) return TILE_OK;
    tile_status st;
    uint64_t es = 2, oes = q ? 1 : 2;
    if (launch) {
        RANGE(api, a.x, es, es * nx, "x");
        if (a.residual) RANGE(api, a.residual, es, es * nr, "residual");
        RANGE(api, a.weight, es, es * (uint64_t)a.hidden, "weight");
        if (a.bias) RANGE(api, a.bias, es, es * (uint64_t)a.hidden, "bias");
        RANGE(api, a.out, oes, oes * no, "out");
        if (q) RANGE(api, a.scales, 4, 4 * ns, "scales");
        /* what a program writes (residual, out, scales) may share no byte with what others read or write; a tensor
         * in itself is the in-place form (residual = x, out = x or residual: the row's program reads a column before
         * it writes it) */
        uint64_t T = (uint64_t)a.tokens, H = (uint64_t)a.hidden;
        const ShippedRows rx = {"x", a.x, T, es * H, es * (uint64_t)sx, es}, rr = {"residual", a.residual, T, es * H, es * (uint64_t)sr, es},
                          rw = {"weight", a.weight, 1, es * H, es * H, es}, rb = {"bias", a.bias, 1, es * H, es * H, es},
                          ro = {"out", a.out, T, oes * H, oes * (uint64_t)so, oes},
                          rs = {"scales", q ? a.scales : 0, T, 4 * (uint64_t)groups, 4 * (uint64_t)ss, 4};
        const struct {
            const ShippedRows *out, *in;
            bool in_place;
        } pairs[] = {{&rr, &rx, true}, {&rr, &rw, false}, {&rr, &rb, false}, {&ro, &rx, true},  {&ro, &rr, true},
                     {&ro, &rw, false}, {&ro, &rb, false}, {&rs, &rx, false}, {&rs, &rr, false}, {&rs, &rw, false},
                     {&rs, &rb, false}, {&rs, &ro, false}};
        for (size_t i = 0; i < ARRAY_LEN(pairs); i++)
            if ((st = shipped_check_rows_apart(ctx, api, pairs[i].out, pairs[i].in, pairs[i].in_place)) != TILE_OK) return st;
    }

    /* 2. variant */
    char name[32];
    snprintf(name, sizeof name, "norm_%s%s", a.dtype == TILE_BF16 ? "bf16" : "f16", KERNEL_SUFFIX[q]);
    ShippedVariant v = shipped_variant(name);
    shipped_define(&v, "BLOCK", shipped_max(block_for(a.hidden), a.quant_group));
    if (a.quant_group) shipped_define(&v, "GROUP", a.quant_group);
    shipped_flag(&v, "RESIDUAL", a.residual != 0);
    shipped_flag(&v, "LAYER", layer);
    shipped_flag(&v, "BIAS", a.bias != 0);
    shipped_spec16(&v, "hidden", a.hidden);
    shipped_spec_stride(&v, "sx", sx);
    shipped_spec_stride(&v, "sr", sr);
    shipped_spec_stride(&v, "so", so);
    tile_devptr x = a.x, res = a.residual ? a.residual : a.x, w = a.weight, b = a.bias ? a.bias : a.weight, out = a.out,
                scales = q ? a.scales : a.out;
    v.no_align_ptrs = ((x | res | w | b | out | scales) & 15) != 0;

    /* 3. kernel */
    tile_kernel *kern;
    st = shipped_kernel(ctx, api, "norm/norm.tile", &v, &kern, NULL);
    shipped_variant_free(&v);
    if (st != TILE_OK || !launch) return st;

    /* 4. launch: one program per token */
    int32_t h32 = (int32_t)a.hidden, sx32 = (int32_t)sx, sr32 = (int32_t)sr, so32 = (int32_t)so, ss32 = (int32_t)ss;
    float eps = a.eps;
    void *params[] = {&x, &res, &w, &b, &out, &scales, &h32, &sx32, &sr32, &so32, &ss32, &eps};
    return shipped_launch(ctx, api, kern, (tile_dim3){(unsigned)a.tokens, 1, 1}, params, a.stream);
}

tile_status tile_fused_add_rmsnorm(tile_context *ctx, const tile_norm_args *args) { return norm_run(ctx, args, false, true); }
tile_status tile_fused_add_layernorm(tile_context *ctx, const tile_norm_args *args) { return norm_run(ctx, args, true, true); }
tile_status tile_fused_add_rmsnorm_prepare(tile_context *ctx, const tile_norm_args *args) { return norm_run(ctx, args, false, false); }
tile_status tile_fused_add_layernorm_prepare(tile_context *ctx, const tile_norm_args *args) { return norm_run(ctx, args, true, false); }

/* ======================= tile_gated_activation ======================= */

/* The call, or with launch false its preparation: no pointer checked, nothing launched. */
static tile_status gated_run(tile_context *ctx, const tile_gated_args *args, bool launch) {
    const char *api = launch ? "tile_gated_activation" : "tile_gated_activation_prepare";
    if (!rt_context_valid(ctx)) return rt_no_context(api, ctx);
    if (!args) FAIL("%s: args is NULL", api);
    /* 1. arguments */
    tile_gated_args a;
    char err[160];
    if (!rt_struct_in(&a, args, &rt_layout_tile_gated_args, GATED_ARGS_SIZE_0_1, err, sizeof err)) FAIL("%s: args->%s", api, err);
    const char *why = NULL;
    int q = 0;
    int64_t sx = 0, so = 0, groups = 1, ss = 1;
    if (why) FAIL("%s: %s", api, why);
    if (a.dtype != TILE_F16 && a.dtype != TILE_BF16) FAIL("%s: dtype must be TILE_F16 or TILE_BF16", api);
    if (a.act != TILE_GATED_SILU && a.act != TILE_GATED_GELU && a.act != TILE_GATED_GELU_TANH)
        FAIL("%s: act = %d: TILE_GATED_SILU, TILE_GATED_GELU or TILE_GATED_GELU_TANH", api, (int)a.act);
    if ((why = quant_resolve(a.dtype, a.quant_dtype, &q))) FAIL("%s: %s", api, why);
    if (a.tokens < 0 || a.tokens > MAX_GRID_X) FAIL("%s: tokens = %lld: 0 .. 2^31 - 1", api, (long long)a.tokens);
    if (a.d < 1 || a.d > (1 << 20)) FAIL("%s: d = %lld: 1 .. 2^20", api, (long long)a.d);
    char msg[128];
    if ((why = stride_resolve("ldx", a.ldx, 2 * a.d, &sx, msg, sizeof msg)) || (why = stride_resolve("ldo", a.ldo, a.d, &so, msg, sizeof msg)))
        FAIL("%s: %s", api, why);
    if ((why = group_resolve(q, a.quant_group, a.lds, a.d, &groups, &ss))) FAIL("%s: %s", api, why);
    uint64_t nx = shipped_rows_span(a.tokens, 2 * a.d, sx), no = shipped_rows_span(a.tokens, a.d, so), ns = shipped_rows_span(a.tokens, groups, ss);
    if (nx >= (uint64_t)I32_LIMIT || no >= (uint64_t)I32_LIMIT || ns >= (uint64_t)I32_LIMIT)
        FAIL("%s: sizes too large for the kernel's 32-bit offsets (each tensor must span fewer than 2^31 elements)", api);
    if (a.tokens == 0) return TILE_OK;
    tile_status st;
    uint64_t es = 2, oes = q ? 1 : 2;
    if (launch) {
        RANGE(api, a.x, es, es * nx, "x");
        RANGE(api, a.out, oes, oes * no, "out");
        if (q) RANGE(api, a.scales, 4, 4 * ns, "scales");
        /* out and scales may share no byte with x (nor with each other), but for out in x, row for row (ldo = ldx,
         * unquantized): a program reads gate[i] and up[i] before it writes out[i] over gate[i] */
        uint64_t T = (uint64_t)a.tokens, D = (uint64_t)a.d;
        const ShippedRows rx = {"x", a.x, T, es * 2 * D, es * (uint64_t)sx, es}, ro = {"out", a.out, T, oes * D, oes * (uint64_t)so, oes},
                          rs = {"scales", q ? a.scales : 0, T, 4 * (uint64_t)groups, 4 * (uint64_t)ss, 4};
        if ((st = shipped_check_rows_apart(ctx, api, &ro, &rx, true)) != TILE_OK || (st = shipped_check_rows_apart(ctx, api, &rs, &rx, false)) != TILE_OK ||
            (st = shipped_check_rows_apart(ctx, api, &rs, &ro, false)) != TILE_OK)
            return st;
    }

    /* 2. variant */
    char name[32];
    snprintf(name, sizeof name, "act_%s%s", a.dtype == TILE_BF16 ? "bf16" : "f16", KERNEL_SUFFIX[q]);
    ShippedVariant v = shipped_variant(name);
    shipped_define(&v, "BLOCK", shipped_max(block_for(a.d), a.quant_group));
    if (a.quant_group) shipped_define(&v, "GROUP", a.quant_group);
    shipped_define(&v, "ACT", (long long)a.act);
    shipped_spec16(&v, "d", a.d);
    shipped_spec_stride(&v, "sx", sx);
    shipped_spec_stride(&v, "so", so);
    tile_devptr x = a.x, out = a.out, scales = q ? a.scales : a.out;
    v.no_align_ptrs = ((x | out | scales) & 15) != 0;

    /* 3. kernel */
    tile_kernel *kern;
    st = shipped_kernel(ctx, api, "norm/act.tile", &v, &kern, NULL);
    shipped_variant_free(&v);
    if (st != TILE_OK || !launch) return st;

    /* 4. launch */
    int32_t d32 = (int32_t)a.d, sx32 = (int32_t)sx, so32 = (int32_t)so, ss32 = (int32_t)ss;
    void *params[] = {&x, &out, &scales, &d32, &sx32, &so32, &ss32};
    return shipped_launch(ctx, api, kern, (tile_dim3){(unsigned)a.tokens, 1, 1}, params, a.stream);
}

tile_status tile_gated_activation(tile_context *ctx, const tile_gated_args *args) { return gated_run(ctx, args, true); }
tile_status tile_gated_activation_prepare(tile_context *ctx, const tile_gated_args *args) { return gated_run(ctx, args, false); }
