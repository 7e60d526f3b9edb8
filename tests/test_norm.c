/* test_norm.c - tile_fused_add_rmsnorm and tile_gated_activation
 * (kernels/norm/norm.c) on the emulator against float64 references (ref/:
 * ref_rmsnorm, ref_gated, ref_quant_scale), and their argument checks.
 *
 * tile_fused_add_layernorm likewise (ref_layernorm), on inputs whose mean
 * is offset by 3.
 *
 * Fresh random inputs every run (TILE_TEST_SEED repeats one; printed on
 * failure); f16 and bf16; tokens 1, 7, 33; hidden 64, 1000, 4097 (d 64,
 * 1000, 4097 for the activations: one BLOCK, a masked tail, several
 * BLOCKs); gapped row strides; outputs, scales and the residual's gaps
 * poisoned first and checked untouched outside the rows.
 *
 * Tolerances: the kernels compute in f32 from exactly widened inputs, so the
 * error is the output's rounding (half an ulp: 2^-11 |y| for f16, 2^-8 for
 * bf16, plus 2^-25 below f16's normal range) and the f32 arithmetic
 * (rsqrt, exp: 1e-5 |y| relative; erf's formula is 1.5e-7 absolute, which
 * 0.5 g u (1 + erf) turns into up to 1.2e-6 absolute for |g|, |u| <= 4, a
 * large relative error where 1 + erf(g / sqrt 2) is small: 2e-6 absolute,
 * added before quantization too, where it can move y across a rounding
 * boundary).
 * The updated residual is compared bit for bit with round(f32(x + r)).
 * Quantized: scales within 1e-5 relative of the reference's (amax from the
 * f64 y); dequantized code * scale within the quantization step of y: half a
 * step (scale / 2) for i8; for f8e4m3 half an ulp of the code, 2^-4 |y|, or
 * scale * 2^-10 for the subnormal codes. */
#include <criterion/criterion.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test_rng.h"
#include "ref/ref.h"
#include "support/hostfloat.h"
#include "include/tile/tile.h"
#include "tests/test_ctx_buffers.h"

static uint16_t to_dt(tile_dtype t, double v) { return t == TILE_F16 ? f32_to_f16((float)v) : f32_to_bf16((float)v); }
static double from_dt(tile_dtype t, uint16_t h) { return t == TILE_F16 ? f16_to_d(h) : bf16_to_d(h); }
static const uint16_t POISON16 = 0x7e00; /* NaN in f16 and in bf16 */
static const uint8_t POISON_F8 = 0x7f;   /* NaN in f8e4m3 (E4M3FN) */
static const uint8_t POISON_I8 = 0x80;   /* -128: the kernels clamp to [-127, 127] */

static void fill16(tile_dtype t, size_t n, uint16_t *h, double scale) {
    for (size_t i = 0; i < n; i++) h[i] = to_dt(t, scale * urand());
}

/* The output of one launch: [tokens, n] with row stride so, in dt or quantized to q (TILE_F8E4M3, TILE_I8). */
typedef struct Output {
    tile_dtype dt, q;
    int tokens, n, so;
    int group, lds; /* group 0: a scale per token; else per group of columns, scales [tokens][lds] */
    size_t count, esize;
    void *host;
    float *scales;
    tile_devptr d, ds;
} Output;

static bool quantized(const Output *o) { return o->q == TILE_F8E4M3 || o->q == TILE_I8; }

static int groups_of(const Output *o) { return o->group ? (o->n + o->group - 1) / o->group : 1; }
static size_t scales_bytes(const Output *o) { return ((size_t)o->tokens * (size_t)o->lds + 1) * 4; }

static void output_alloc(tile_context *ctx, Output *o) {
    o->esize = quantized(o) ? 1 : 2;
    o->count = (size_t)o->tokens * (size_t)o->so + 8;
    o->host = malloc(o->count * o->esize);
    for (size_t i = 0; i < o->count; i++) {
        if (o->esize == 2) ((uint16_t *)o->host)[i] = POISON16;
        else ((uint8_t *)o->host)[i] = o->q == TILE_F8E4M3 ? POISON_F8 : POISON_I8;
    }
    o->d = upload(ctx, o->host, o->count * o->esize);
    if (!o->group) o->lds = 1;
    o->scales = malloc(scales_bytes(o));
    for (size_t t = 0; t < scales_bytes(o) / 4; t++) o->scales[t] = NAN;
    o->ds = quantized(o) ? upload(ctx, o->scales, scales_bytes(o)) : 0;
}

/* Compare with want [tokens][n] (the f64 reference); what = "out" and the case for messages. */
static void output_check(tile_context *ctx, Output *o, const double *want, const char *what) {
    download(ctx, o->host, o->d, o->count * o->esize);
    if (o->ds) download(ctx, o->scales, o->ds, scales_bytes(o));
    double rel = o->dt == TILE_F16 ? 0x1p-11 : 0x1p-8;
    int ng = groups_of(o), gw = o->group ? o->group : o->n;
    for (int t = 0; t < o->tokens; t++) {
        const double *y = want + (size_t)t * o->n;
        for (int gi = 0; gi < ng; gi++) {
            int lo = gi * gw, hi = lo + gw < o->n ? lo + gw : o->n;
            double s = 0;
            if (quantized(o)) {
                double amax = 0;
                for (int i = lo; i < hi; i++) amax = fmax(amax, fabs(y[i]));
                double ws = ref_quant_scale(amax, o->q == TILE_I8 ? 127 : 448);
                s = o->scales[(size_t)t * o->lds + gi];
                cr_assert(fabs(s - ws) <= 1e-5 * ws, "%s token %d group %d: scale %.8g, want %.8g (seed %llu)", what, t, gi, s, ws,
                          (unsigned long long)seed);
            }
            for (int i = lo; i < hi; i++) {
                size_t k = (size_t)t * o->so + (size_t)i;
                double got, tol;
                if (o->q == TILE_I8) {
                    int8_t c = ((int8_t *)o->host)[k];
                    cr_assert(c != -128, "%s token %d col %d: not written (seed %llu)", what, t, i, (unsigned long long)seed);
                    got = c * s;
                    tol = s * (0.5 + 1e-5) + 1e-5 * fabs(y[i]) + 2e-6;
                } else if (o->q == TILE_F8E4M3) {
                    got = f8e4m3_to_d(((uint8_t *)o->host)[k]) * s;
                    tol = fmax(0x1p-4 * fabs(y[i]), s * 0x1p-10) + 1e-5 * fabs(y[i]) + 2e-6;
                } else {
                    got = from_dt(o->dt, ((uint16_t *)o->host)[k]);
                    tol = (rel + 1e-5) * fabs(y[i]) + 0x1p-25 + 2e-6;
                }
                cr_assert(fabs(got - y[i]) <= tol, "%s token %d col %d: %.8g, want %.8g (tol %.3g) (seed %llu)", what, t, i, got, y[i],
                          tol, (unsigned long long)seed);
            }
        }
        for (int gi = ng; quantized(o) && gi < o->lds && t + 1 < o->tokens; gi++)
            cr_assert(isnan(o->scales[(size_t)t * o->lds + gi]), "%s: scale written in the gap of row %d at %d", what, t, gi);
        for (int i = o->n; i < o->so && t + 1 < o->tokens; i++) { /* the gap after the row */
            size_t k = (size_t)t * o->so + (size_t)i;
            bool poisoned = o->esize == 2 ? ((uint16_t *)o->host)[k] == POISON16 : ((uint8_t *)o->host)[k] == (o->q == TILE_F8E4M3 ? POISON_F8 : POISON_I8);
            cr_assert(poisoned, "%s: written in the gap of row %d at %d", what, t, i);
        }
    }
    if (o->ds) cr_assert(isnan(o->scales[(size_t)o->tokens * o->lds]), "%s: scales written past tokens", what);
}

static void output_free(tile_context *ctx, Output *o) {
    tile_free(ctx, o->d);
    if (o->ds) tile_free(ctx, o->ds);
    free(o->host), free(o->scales);
}

/* ======================= tile_fused_add_rmsnorm ======================= */

/* layer: LayerNorm (with a bias when bias), else RMSNorm */
static void run_norm_g(tile_context *ctx, tile_dtype dt, int tokens, int hidden, bool residual, tile_dtype q, bool layer, bool bias,
                      int group) {
    char what[160];
    snprintf(what, sizeof what, "%s %s tokens %d hidden %d%s%s q %d group %d", layer ? "layernorm" : "rmsnorm",
             dt == TILE_F16 ? "f16" : "bf16", tokens, hidden, residual ? " +residual" : "", bias ? " +bias" : "", (int)q, group);
    int sx = hidden + 8, sr = hidden + 3, so = hidden + 16;
    size_t nx = (size_t)tokens * sx, nr = (size_t)tokens * sr;
    uint16_t *hx = malloc(nx * 2), *hr = malloc(nr * 2), *hw = malloc((size_t)hidden * 2), *hb = malloc((size_t)hidden * 2),
             *hr_after = malloc(nr * 2);
    fill16(dt, nx, hx, 2.0);
    fill16(dt, nr, hr, 2.0);
    if (layer) /* an offset mean: LayerNorm must subtract it without cancellation */
        for (size_t i = 0; i < nx; i++) hx[i] = to_dt(dt, from_dt(dt, hx[i]) + 3);
    for (int i = 0; i < hidden; i++) hw[i] = to_dt(dt, 1 + 0.5 * urand());
    fill16(dt, (size_t)hidden, hb, 0.5);
    tile_devptr dx = upload(ctx, hx, nx * 2), dr = residual ? upload(ctx, hr, nr * 2) : 0, dw = upload(ctx, hw, (size_t)hidden * 2);
    tile_devptr db = bias ? upload(ctx, hb, (size_t)hidden * 2) : 0;
    Output o = {.dt = dt, .q = q, .tokens = tokens, .n = hidden, .so = so, .group = group};
    o.lds = group ? (hidden + group - 1) / group + 3 : 1; /* gapped */
    output_alloc(ctx, &o);
    float eps = 1e-6f;
    tile_norm_args a = {.size = sizeof a, .dtype = dt, .tokens = tokens, .hidden = hidden, .x = dx, .ldx = sx, .residual = dr, .ldr = sr, .weight = dw,
                        .bias = db, .eps = eps, .out = o.d, .ldo = so, .quant_dtype = q, .scales = o.ds,
                        .quant_group = group, .lds = group ? o.lds : 0};
    tile_status st = layer ? tile_fused_add_layernorm(ctx, &a) : tile_fused_add_rmsnorm(ctx, &a);
    cr_assert_eq(st, TILE_OK, "%s: %s: %s", what, tile_status_string(st), tile_last_error(ctx));
    cr_assert_eq(tile_synchronize(ctx), TILE_OK, "%s", tile_last_error(ctx));

    /* the reference: z = round(f32(x + r)) (checked bit for bit) or x */
    double *z = malloc((size_t)hidden * 8), *w = malloc((size_t)hidden * 8), *b = malloc((size_t)hidden * 8),
           *want = malloc((size_t)tokens * hidden * 8);
    for (int i = 0; i < hidden; i++) w[i] = from_dt(dt, hw[i]), b[i] = from_dt(dt, hb[i]);
    if (residual) download(ctx, hr_after, dr, nr * 2);
    for (int t = 0; t < tokens; t++) {
        for (int i = 0; i < hidden; i++) {
            double xv = from_dt(dt, hx[(size_t)t * sx + i]);
            if (residual) {
                size_t k = (size_t)t * sr + i;
                uint16_t zr = to_dt(dt, (float)(xv + from_dt(dt, hr[k])));
                cr_assert_eq(hr_after[k], zr, "%s token %d col %d: residual 0x%04x, want 0x%04x (seed %llu)", what, t, i, hr_after[k], zr,
                             (unsigned long long)seed);
                xv = from_dt(dt, zr);
            }
            z[i] = xv;
        }
        if (layer) ref_layernorm(hidden, z, w, bias ? b : NULL, eps, want + (size_t)t * hidden);
        else ref_rmsnorm(hidden, z, w, eps, want + (size_t)t * hidden);
        if (residual)
            for (int i = hidden; i < sr && t + 1 < tokens; i++)
                cr_assert_eq(hr_after[(size_t)t * sr + i], hr[(size_t)t * sr + i], "%s: residual's gap written", what);
    }
    output_check(ctx, &o, want, what);
    output_free(ctx, &o);
    tile_free(ctx, dx), tile_free(ctx, dw);
    if (dr) tile_free(ctx, dr);
    if (db) tile_free(ctx, db);
    free(hx), free(hr), free(hw), free(hb), free(hr_after), free(z), free(w), free(b), free(want);
}

static void run_norm_ex(tile_context *ctx, tile_dtype dt, int tokens, int hidden, bool residual, tile_dtype q, bool layer, bool bias) {
    run_norm_g(ctx, dt, tokens, hidden, residual, q, layer, bias, 0);
}

static void run_norm(tile_context *ctx, tile_dtype dt, int tokens, int hidden, bool residual, tile_dtype q) {
    run_norm_ex(ctx, dt, tokens, hidden, residual, q, false, false);
}

Test(norm, rmsnorm_f16, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    run_norm(ctx, TILE_F16, 1, 4097, true, TILE_F32);
    run_norm(ctx, TILE_F16, 7, 1000, true, TILE_F32);
    run_norm(ctx, TILE_F16, 33, 64, false, TILE_F32);
    run_norm(ctx, TILE_F16, 7, 64, true, TILE_F16); /* quant_dtype = dtype: none */
    tile_context_destroy(ctx);
}

Test(norm, rmsnorm_bf16, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    run_norm(ctx, TILE_BF16, 1, 4097, false, TILE_F32);
    run_norm(ctx, TILE_BF16, 7, 1000, true, TILE_F32);
    run_norm(ctx, TILE_BF16, 33, 64, true, TILE_F32);
    tile_context_destroy(ctx);
}

Test(norm, rmsnorm_quant, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    run_norm(ctx, TILE_F16, 7, 1000, true, TILE_F8E4M3);
    run_norm(ctx, TILE_BF16, 1, 4097, true, TILE_I8);
    run_norm(ctx, TILE_BF16, 33, 64, false, TILE_F8E4M3);
    run_norm(ctx, TILE_F16, 33, 64, true, TILE_I8);
    tile_context_destroy(ctx);
}

Test(norm, layernorm, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    run_norm_ex(ctx, TILE_F16, 7, 1000, true, TILE_F32, true, true);
    run_norm_ex(ctx, TILE_BF16, 1, 4097, false, TILE_F32, true, false);
    run_norm_ex(ctx, TILE_BF16, 33, 64, true, TILE_F32, true, true);
    run_norm_ex(ctx, TILE_F16, 33, 64, false, TILE_F32, true, false);
    run_norm_ex(ctx, TILE_F16, 7, 1000, true, TILE_I8, true, true);
    run_norm_ex(ctx, TILE_BF16, 1, 4097, true, TILE_F8E4M3, true, false);
    tile_context_destroy(ctx);
}

/* ======================= tile_gated_activation ======================= */

static void run_gated_g(tile_context *ctx, tile_dtype dt, tile_gated_act act, int tokens, int d, tile_dtype q, int group) {
    char what[160];
    snprintf(what, sizeof what, "gated act %d %s tokens %d d %d q %d group %d", (int)act, dt == TILE_F16 ? "f16" : "bf16", tokens, d,
             (int)q, group);
    int sx = 2 * d + 8, so = d + 24;
    size_t nx = (size_t)tokens * sx;
    uint16_t *hx = malloc(nx * 2);
    fill16(dt, nx, hx, 4.0); /* [-4, 4]: both tails of the activations */
    tile_devptr dx = upload(ctx, hx, nx * 2);
    Output o = {.dt = dt, .q = q, .tokens = tokens, .n = d, .so = so, .group = group};
    o.lds = group ? (d + group - 1) / group + 1 : 1; /* gapped */
    output_alloc(ctx, &o);
    tile_gated_args a = {.size = sizeof a, .dtype = dt, .act = act, .tokens = tokens, .d = d, .x = dx, .ldx = sx, .out = o.d, .ldo = so, .quant_dtype = q,
                         .scales = o.ds, .quant_group = group, .lds = group ? o.lds : 0};
    tile_status st = tile_gated_activation(ctx, &a);
    cr_assert_eq(st, TILE_OK, "%s: %s: %s", what, tile_status_string(st), tile_last_error(ctx));
    cr_assert_eq(tile_synchronize(ctx), TILE_OK, "%s", tile_last_error(ctx));
    double *want = malloc((size_t)tokens * d * 8);
    for (int t = 0; t < tokens; t++)
        for (int i = 0; i < d; i++)
            want[(size_t)t * d + i] = ref_gated(act, from_dt(dt, hx[(size_t)t * sx + i]), from_dt(dt, hx[(size_t)t * sx + d + i]));
    output_check(ctx, &o, want, what);
    output_free(ctx, &o);
    tile_free(ctx, dx);
    free(hx), free(want);
}

static void run_gated(tile_context *ctx, tile_dtype dt, tile_gated_act act, int tokens, int d, tile_dtype q) {
    run_gated_g(ctx, dt, act, tokens, d, q, 0);
}

/* Per-group quantization (quant_group, DeepSeek's 128 and others): a scale per group of columns, the
 * last group partial at odd sizes, a group wider than the row, gapped scale rows. */
Test(norm, group_quant, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    run_norm_g(ctx, TILE_F16, 7, 1000, true, TILE_F8E4M3, false, false, 128);
    run_norm_g(ctx, TILE_BF16, 3, 4097, false, TILE_I8, false, false, 128);
    run_norm_g(ctx, TILE_BF16, 5, 96, true, TILE_F8E4M3, true, true, 64);
    run_norm_g(ctx, TILE_F16, 2, 100, false, TILE_I8, false, false, 1024);
    run_gated_g(ctx, TILE_F16, TILE_GATED_SILU, 7, 1000, TILE_F8E4M3, 128);
    run_gated_g(ctx, TILE_BF16, TILE_GATED_GELU, 3, 300, TILE_I8, 16);
    tile_context_destroy(ctx);
}

Test(norm, gated_f16, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    run_gated(ctx, TILE_F16, TILE_GATED_SILU, 7, 1000, TILE_F32);
    run_gated(ctx, TILE_F16, TILE_GATED_GELU, 1, 4097, TILE_F32);
    run_gated(ctx, TILE_F16, TILE_GATED_GELU_TANH, 33, 64, TILE_F32);
    tile_context_destroy(ctx);
}

Test(norm, gated_bf16, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    run_gated(ctx, TILE_BF16, TILE_GATED_SILU, 33, 64, TILE_F32);
    run_gated(ctx, TILE_BF16, TILE_GATED_GELU, 7, 1000, TILE_F32);
    run_gated(ctx, TILE_BF16, TILE_GATED_GELU_TANH, 1, 4097, TILE_F32);
    tile_context_destroy(ctx);
}

Test(norm, gated_quant, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    run_gated(ctx, TILE_F16, TILE_GATED_SILU, 7, 1000, TILE_F8E4M3);
    run_gated(ctx, TILE_BF16, TILE_GATED_GELU_TANH, 33, 64, TILE_I8);
    run_gated(ctx, TILE_BF16, TILE_GATED_GELU, 1, 4097, TILE_F8E4M3);
    run_gated(ctx, TILE_F16, TILE_GATED_GELU_TANH, 7, 1000, TILE_I8);
    tile_context_destroy(ctx);
}

/* ======================= argument checks ======================= */

static void expect_fail(tile_context *ctx, tile_status st, const char *needle) {
    cr_assert_neq(st, TILE_OK, "accepted; expected an error containing \"%s\"", needle);
    cr_assert(strstr(tile_last_error(ctx), needle), "message \"%s\" lacks \"%s\"", tile_last_error(ctx), needle);
}

Test(norm, argument_checks) {
    tile_context *ctx = open_ctx();
    tile_devptr buf, sc;
    cr_assert_eq(tile_malloc(ctx, 4096, &buf), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 64, &sc), TILE_OK);
    tile_norm_args good = {.dtype = TILE_F16, .tokens = 4, .hidden = 64, .x = buf, .weight = buf, .eps = 1e-6f, .out = buf + 1024};
    tile_norm_args a = good;
    a.dtype = TILE_F32;
    expect_fail(ctx, tile_fused_add_rmsnorm(ctx, &a), "dtype must be");
    a = good, a.hidden = 0;
    expect_fail(ctx, tile_fused_add_rmsnorm(ctx, &a), "hidden = 0");
    a = good, a.ldx = 63;
    expect_fail(ctx, tile_fused_add_rmsnorm(ctx, &a), "ldx = 63 is shorter than its row of 64 elements");
    a = good, a.ldo = -1; /* the message names the stride */
    expect_fail(ctx, tile_fused_add_rmsnorm(ctx, &a), "ldo = -1 is shorter than its row");
    a = good, a.eps = NAN;
    expect_fail(ctx, tile_fused_add_rmsnorm(ctx, &a), "eps");
    a = good, a.quant_dtype = TILE_F8E5M2;
    expect_fail(ctx, tile_fused_add_rmsnorm(ctx, &a), "quant_dtype");
    a = good, a.x = buf + 1;
    expect_fail(ctx, tile_fused_add_rmsnorm(ctx, &a), "not aligned");
    a = good, a.tokens = 40; /* x spans 5120 bytes of a 4096-byte allocation */
    expect_fail(ctx, tile_fused_add_rmsnorm(ctx, &a), "x");
    a = good, a.quant_dtype = TILE_I8, a.scales = 0;
    expect_fail(ctx, tile_fused_add_rmsnorm(ctx, &a), "scales");
    a = good, a.residual = buf + 3800; /* 512 bytes from 3800 pass the end */
    expect_fail(ctx, tile_fused_add_rmsnorm(ctx, &a), "residual");
    a = good, a.bias = buf;
    expect_fail(ctx, tile_fused_add_rmsnorm(ctx, &a), "bias must be 0");
    a = good, a.bias = buf + 4000;
    expect_fail(ctx, tile_fused_add_layernorm(ctx, &a), "bias");
    a = good, a.size = 3;
    expect_fail(ctx, tile_fused_add_rmsnorm(ctx, &a), "size");
    a = good, a.size = sizeof a, a.tokens = 0;
    cr_assert_eq(tile_fused_add_rmsnorm(ctx, &a), TILE_OK, "no tokens: nothing to do: %s", tile_last_error(ctx));

    tile_gated_args g = {.dtype = TILE_BF16, .act = TILE_GATED_SILU, .tokens = 4, .d = 32, .x = buf, .out = buf + 1024,
                         .quant_dtype = TILE_F8E4M3, .scales = sc};
    cr_assert_eq(tile_gated_activation(ctx, &g), TILE_OK, "%s", tile_last_error(ctx));
    tile_gated_args b = g;
    b.act = 3;
    expect_fail(ctx, tile_gated_activation(ctx, &b), "act = 3");
    b = g, b.d = 0;
    expect_fail(ctx, tile_gated_activation(ctx, &b), "d = 0");
    b = g, b.ldx = 40;
    expect_fail(ctx, tile_gated_activation(ctx, &b), "ldx = 40 is shorter than its row of");
    b = g, b.tokens = 40;
    expect_fail(ctx, tile_gated_activation(ctx, &b), "x");
    b = g, b.scales = sc + 2;
    expect_fail(ctx, tile_gated_activation(ctx, &b), "scales");
    b = g, b.scales = sc + 56; /* aligned, but 16 bytes do not fit in the last 8 */
    expect_fail(ctx, tile_gated_activation(ctx, &b), "scales");
    /* per-group quantization: a power of two 16 .. 1024, with a quant_dtype, lds covering the groups,
     * the scales' extent checked; a struct of the first release's size (or size 0) reads quant_group as 0 */
    g.size = sizeof g, good.size = sizeof good;
    b = g, b.quant_group = 48;
    expect_fail(ctx, tile_gated_activation(ctx, &b), "quant_group must be 0 or a power of two");
    b = g, b.quant_group = 2048;
    expect_fail(ctx, tile_gated_activation(ctx, &b), "quant_group must be 0 or a power of two");
    b = g, b.quant_group = 16, b.quant_dtype = TILE_F32;
    expect_fail(ctx, tile_gated_activation(ctx, &b), "quant_group needs a quant_dtype");
    b = g, b.lds = 4;
    expect_fail(ctx, tile_gated_activation(ctx, &b), "lds is for quant_group");
    b = g, b.quant_group = 16, b.lds = 1; /* d 32: two groups */
    expect_fail(ctx, tile_gated_activation(ctx, &b), "lds is shorter");
    b = g, b.quant_group = 16, b.lds = 8; /* 4 tokens x 8: 32 floats = 128 bytes of a 64-byte allocation */
    expect_fail(ctx, tile_gated_activation(ctx, &b), "scales");
    b = g, b.quant_group = 16;
    cr_assert_eq(tile_gated_activation(ctx, &b), TILE_OK, "%s", tile_last_error(ctx));
    b = g, b.quant_group = 48, b.size = offsetof(tile_gated_args, quant_group);
    cr_assert_eq(tile_gated_activation(ctx, &b), TILE_OK, "an older caller's struct: %s", tile_last_error(ctx));
    b = g, b.quant_group = 48, b.size = 0;
    cr_assert_eq(tile_gated_activation(ctx, &b), TILE_OK, "size 0, the first release's layout: %s", tile_last_error(ctx));
    a = good, a.quant_dtype = TILE_F8E4M3, a.scales = sc, a.quant_group = 100;
    expect_fail(ctx, tile_fused_add_rmsnorm(ctx, &a), "quant_group must be 0 or a power of two");
    a = good, a.quant_dtype = TILE_F8E4M3, a.scales = sc, a.quant_group = 32, a.lds = 1;
    expect_fail(ctx, tile_fused_add_rmsnorm(ctx, &a), "lds is shorter");
    tile_free(ctx, buf), tile_free(ctx, sc);
    tile_context_destroy(ctx);
}

/* Row strides so large that (rows - 1) * ld wrapped around 64 bits passed the size checks, and the
 * kernels ran with the stride cut to 32 bits (out-of-bounds writes on a GPU; TILE_OK for MoE).
 * Every such stride is refused before anything launches. */
Test(norm, huge_row_strides_refused) {
    tile_context *ctx = open_ctx();
    tile_devptr x, w, o, s;
    cr_assert_eq(tile_malloc(ctx, 4096, &x), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 4096, &w), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 4096, &o), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 4096, &s), TILE_OK);
    const int64_t huge[] = {INT64_MAX, INT64_MAX / 2 + 2, (int64_t)1 << 62, INT64_MAX / 3 * 2};
    for (size_t i = 0; i < sizeof huge / sizeof *huge; i++) {
        int64_t ld = huge[i];
        for (int f = 0; f < 3; f++) {
            tile_norm_args n = {.size = sizeof n, .dtype = TILE_F16, .tokens = 3, .hidden = 16, .x = x, .weight = w, .out = o, .residual = s};
            if (f == 0) n.ldo = ld;
            if (f == 1) n.ldx = ld;
            if (f == 2) n.ldr = ld;
            tile_status st = tile_fused_add_rmsnorm(ctx, &n);
            cr_expect_eq(st, TILE_ERROR_INVALID_VALUE, "rmsnorm field %d ld %lld: %s", f, (long long)ld, tile_last_error(ctx));
        }
        tile_gated_args g = {.size = sizeof g, .dtype = TILE_F16, .tokens = 3, .d = 16, .x = x, .out = o, .ldo = ld};
        cr_expect_eq(tile_gated_activation(ctx, &g), TILE_ERROR_INVALID_VALUE, "gated ldo %lld: %s", (long long)ld, tile_last_error(ctx));
        g.ldo = 0, g.ldx = ld;
        cr_expect_eq(tile_gated_activation(ctx, &g), TILE_ERROR_INVALID_VALUE, "gated ldx %lld: %s", (long long)ld, tile_last_error(ctx));
        tile_sample_args sa = {.size = sizeof sa, .dtype = TILE_F32, .batch = 4, .vocab = 100, .logits = x, .out = o,
                               .temperature_value = 1, .top_p_value = 1, .ld = ld};
        cr_expect_eq(tile_sample(ctx, &sa), TILE_ERROR_INVALID_VALUE, "sample ld %lld: %s", (long long)ld, tile_last_error(ctx));
        sa.ld = 0, sa.probs = s, sa.ldp = ld;
        cr_expect_eq(tile_sample(ctx, &sa), TILE_ERROR_INVALID_VALUE, "sample ldp %lld: %s", (long long)ld, tile_last_error(ctx));
        for (int f = 0; f < 3; f++) {
            tile_moe_args m = {.size = sizeof m, .tokens = 3, .hidden = 16, .inter = 16, .experts = 2, .topk = 1, .dtype = TILE_F16,
                               .x = x, .w1 = w, .w2 = w, .out = o, .router_logits = s, .logits_dtype = TILE_F32};
            if (f == 0) m.ldx = ld;
            if (f == 1) m.ldo = ld;
            if (f == 2) m.ldl = ld;
            tile_status st = tile_moe_forward(ctx, &m);
            cr_expect_eq(st, TILE_ERROR_INVALID_VALUE, "moe field %d ld %lld: %s", f, (long long)ld, tile_last_error(ctx));
        }
    }
    tile_context_destroy(ctx);
}

/* eps = 0 is allowed (finite, >= 0): an all-zero row is then 0 / 0 in the normalization, so its outputs and its
 * scale are NaN (as vLLM's and PyTorch's RMSNorm), and only that row: the next row is the float64 RMSNorm. */
Test(norm, zero_row_with_eps_zero_is_nan) {
    tile_context *ctx = open_ctx();
    enum { H = 33 };
    uint16_t hx[2 * H], hw[H], got[2 * H];
    double z[H], w[H], want[H];
    for (int i = 0; i < H; i++) {
        hx[i] = 0, hx[H + i] = f32_to_f16((float)(i - 16) / 8), hw[i] = f32_to_f16(1 + (float)i / 64);
        z[i] = f16_to_d(hx[H + i]), w[i] = f16_to_d(hw[i]);
    }
    ref_rmsnorm(H, z, w, 0, want);
    tile_devptr dx = upload(ctx, hx, sizeof hx), dw = upload(ctx, hw, sizeof hw), dout, dq, ds;
    cr_assert_eq(tile_malloc(ctx, sizeof got, &dout), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 2 * H, &dq), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 8, &ds), TILE_OK);
    tile_norm_args a = {.size = sizeof a, .dtype = TILE_F16, .tokens = 2, .hidden = H, .x = dx, .weight = dw, .eps = 0, .out = dout};
    cr_assert_eq(tile_fused_add_rmsnorm(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, got, dout, sizeof got), TILE_OK);
    for (int i = 0; i < H; i++) {
        cr_expect(isnan(f16_to_d(got[i])), "zero row, eps 0: out[%d] = %g, not NaN", i, f16_to_d(got[i]));
        double g = f16_to_d(got[H + i]);
        cr_expect(fabs(g - want[i]) <= ldexp(fabs(want[i]), -11) + 1e-5 * fabs(want[i]) + 6e-8, "row 1 out[%d] = %g, want %g", i, g, want[i]);
    }
    a.out = dq, a.quant_dtype = TILE_I8, a.scales = ds;
    cr_assert_eq(tile_fused_add_rmsnorm(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    float sc[2];
    cr_assert_eq(tile_memcpy_dtoh(ctx, sc, ds, sizeof sc), TILE_OK);
    cr_expect(isnan(sc[0]), "zero row, eps 0: scale %g, not NaN", sc[0]);
    cr_expect(isfinite(sc[1]) && sc[1] > 0, "row 1 scale %g", sc[1]);
    tile_context_destroy(ctx);
}

/* A launch that fails on the device names the call the caller made before the kernel (kernels/shipped.c,
 * shipped_launch): an emulator budget of 1e-12 s has run out when the first block starts, so every launch fails
 * with its timeout report ("tile_fused_add_rmsnorm: launch of 'norm_f16...': ... timeout ..."; it said
 * "launch of 'norm_f16...'" alone, which does not tell which of a model's calls it was). */
Test(norm, launch_failure_names_the_call) {
    tile_context_options o = {.size = sizeof o, .device = "emu", .emu_timeout_seconds = 1e-12};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK, "%s", tile_last_error(NULL));
    enum { H = 40 };
    uint16_t h[2 * 2 * H] = {0};
    tile_devptr dx = upload(ctx, h, sizeof h), dw = upload(ctx, h, sizeof h), dout = upload(ctx, h, sizeof h);
    tile_norm_args a = {.size = sizeof a, .dtype = TILE_F16, .tokens = 2, .hidden = H, .x = dx, .weight = dw, .eps = 1e-6f, .out = dout};
    const struct {
        const char *api, *kernel;
    } want[] = {{"tile_fused_add_rmsnorm", "norm_f16"}, {"tile_gated_activation", "act_f16"}};
    for (int i = 0; i < 2; i++) {
        tile_status st;
        if (i == 0) st = tile_fused_add_rmsnorm(ctx, &a);
        else {
            tile_gated_args g = {.size = sizeof g, .dtype = TILE_F16, .act = TILE_GATED_SILU, .tokens = 2, .d = H, .x = dx, .out = dout};
            st = tile_gated_activation(ctx, &g);
        }
        const char *e = tile_last_error(ctx);
        char start[96];
        snprintf(start, sizeof start, "%s: launch of '%s", want[i].api, want[i].kernel);
        cr_expect_eq(st, TILE_ERROR_LAUNCH, "%s: %s", want[i].api, e);
        cr_expect(!strncmp(e, start, strlen(start)) && strstr(e, "timeout"), "%s (want it to start with %s)", e, start);
        cr_expect(!strstr(e + 1, want[i].api), "the call named twice: %s", e);
    }
    tile_free(ctx, dx), tile_free(ctx, dw), tile_free(ctx, dout);
    tile_context_destroy(ctx);
}

/* ======================= in place and overlapping tensors ======================= */

/* In place, checked against the float64 reference: out = x (RMSNorm, with and without a residual), out = residual
 * (LayerNorm), residual = x, out = x for the gated activations (ldo = ldx: out[t] over gate[t], up[t] kept); rows of
 * 3000 (three BLOCKs: a program writes its first tiles before it reads its last). */
static void run_norm_in_place(tile_context *ctx, tile_dtype dt, int mode) {
    int tokens = 5, hidden = 3000, ld = hidden + 8;
    bool residual = mode != 1, layer = mode == 2;
    size_t n = (size_t)tokens * ld;
    uint16_t *hx = malloc(n * 2), *hr = malloc(n * 2), *hw = malloc((size_t)hidden * 2), *got = malloc(n * 2);
    fill16(dt, n, hx, 2.0);
    fill16(dt, n, hr, 2.0);
    for (int i = 0; i < hidden; i++) hw[i] = to_dt(dt, 1 + 0.5 * urand());
    tile_devptr dx = upload(ctx, hx, n * 2), dr = mode == 3 ? dx : residual ? upload(ctx, hr, n * 2) : 0, dw = upload(ctx, hw, (size_t)hidden * 2);
    /* mode 0: out = x; 1: out = x, no residual; 2: LayerNorm, out = residual; 3: residual = x, out separate */
    tile_devptr dout = mode == 2 ? dr : mode == 3 ? upload(ctx, hr, n * 2) : dx;
    tile_norm_args a = {.size = sizeof a, .dtype = dt, .tokens = tokens, .hidden = hidden, .x = dx, .ldx = ld, .residual = dr, .ldr = ld,
                        .weight = dw, .eps = 1e-6f, .out = dout, .ldo = ld};
    tile_status st = layer ? tile_fused_add_layernorm(ctx, &a) : tile_fused_add_rmsnorm(ctx, &a);
    cr_assert_eq(st, TILE_OK, "in place mode %d: %s", mode, tile_last_error(ctx));
    cr_assert_eq(tile_synchronize(ctx), TILE_OK, "%s", tile_last_error(ctx));
    download(ctx, got, dout, n * 2);
    double *z = malloc((size_t)hidden * 8), *w = malloc((size_t)hidden * 8), *y = malloc((size_t)hidden * 8);
    for (int i = 0; i < hidden; i++) w[i] = from_dt(dt, hw[i]);
    for (int t = 0; t < tokens; t++) {
        for (int i = 0; i < hidden; i++) {
            size_t k = (size_t)t * ld + i;
            double xv = from_dt(dt, hx[k]);
            z[i] = !residual ? xv : from_dt(dt, to_dt(dt, (float)(xv + (mode == 3 ? xv : from_dt(dt, hr[k])))));
        }
        if (layer) ref_layernorm(hidden, z, w, NULL, 1e-6, y);
        else ref_rmsnorm(hidden, z, w, 1e-6, y);
        for (int i = 0; i < hidden; i++) {
            double g = from_dt(dt, got[(size_t)t * ld + i]), tol = ((dt == TILE_F16 ? 0x1p-11 : 0x1p-8) + 1e-5) * fabs(y[i]) + 0x1p-25;
            cr_assert(fabs(g - y[i]) <= tol, "in place mode %d token %d col %d: %.8g, want %.8g (seed %llu)", mode, t, i, g, y[i],
                      (unsigned long long)seed);
        }
    }
    tile_free(ctx, dx), tile_free(ctx, dw);
    if (residual && mode != 3) tile_free(ctx, dr);
    if (mode == 3) tile_free(ctx, dout);
    free(hx), free(hr), free(hw), free(got), free(z), free(w), free(y);
}

static void run_gated_in_place(tile_context *ctx, tile_dtype dt) {
    int tokens = 5, d = 3000, ld = 2 * d + 8;
    size_t n = (size_t)tokens * ld;
    uint16_t *hx = malloc(n * 2), *got = malloc(n * 2);
    fill16(dt, n, hx, 4.0);
    tile_devptr dx = upload(ctx, hx, n * 2);
    tile_gated_args a = {.size = sizeof a, .dtype = dt, .act = TILE_GATED_SILU, .tokens = tokens, .d = d, .x = dx, .ldx = ld, .out = dx, .ldo = ld};
    cr_assert_eq(tile_gated_activation(ctx, &a), TILE_OK, "gated in place: %s", tile_last_error(ctx));
    cr_assert_eq(tile_synchronize(ctx), TILE_OK, "%s", tile_last_error(ctx));
    download(ctx, got, dx, n * 2);
    for (int t = 0; t < tokens; t++)
        for (int i = 0; i < 2 * d; i++) {
            size_t k = (size_t)t * ld + i;
            if (i >= d) { /* up: read, never written */
                cr_assert_eq(got[k], hx[k], "gated in place token %d: up[%d] changed", t, i - d);
                continue;
            }
            double y = ref_gated(TILE_GATED_SILU, from_dt(dt, hx[k]), from_dt(dt, hx[k + d])), g = from_dt(dt, got[k]);
            double tol = ((dt == TILE_F16 ? 0x1p-11 : 0x1p-8) + 1e-5) * fabs(y) + 0x1p-25 + 2e-6;
            cr_assert(fabs(g - y) <= tol, "gated in place token %d col %d: %.8g, want %.8g (seed %llu)", t, i, g, y, (unsigned long long)seed);
        }
    tile_free(ctx, dx);
    free(hx), free(got);
}

/* A tensor a program writes may share no byte with one other programs read or write (or the same program reads
 * at other columns): out one element past x, one row past it, over the weight, the residual partly over x, the
 * scales in x, a quantized out at x (1-byte elements over 2-byte ones), the gated out over up or at x with its
 * own (shorter) row stride, the gated scales in out: TILE_ERROR_INVALID_VALUE naming both tensors (they launched,
 * with results that depend on the programs' order).  Interleaved columns of one buffer pass, and in place runs
 * (above) give the reference's results. */
Test(norm, overlap_refused_in_place_allowed, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    for (int mode = 0; mode < 4; mode++) run_norm_in_place(ctx, mode % 2 ? TILE_BF16 : TILE_F16, mode);
    run_gated_in_place(ctx, TILE_F16);
    run_gated_in_place(ctx, TILE_BF16);

    tile_devptr buf;
    cr_assert_eq(tile_malloc(ctx, 8192, &buf), TILE_OK);
    /* 4 tokens of 64: x [0, 512), out [1024, 1536), weight [2048, 2176) */
    tile_norm_args good = {.size = sizeof good, .dtype = TILE_F16, .tokens = 4, .hidden = 64, .x = buf, .weight = buf + 2048, .eps = 1e-6f,
                           .out = buf + 1024};
    cr_assert_eq(tile_fused_add_rmsnorm(ctx, &good), TILE_OK, "%s", tile_last_error(ctx));
    tile_norm_args a = good;
    a.out = buf + 2;
    cr_assert_eq(tile_fused_add_rmsnorm(ctx, &a), TILE_ERROR_INVALID_VALUE);
    expect_fail(ctx, tile_fused_add_rmsnorm(ctx, &a), "out (0x");
    cr_assert(strstr(tile_last_error(ctx), "shares bytes with x (0x"), "%s", tile_last_error(ctx));
    a = good, a.out = buf + 128; /* row t of out is row t + 1 of x */
    expect_fail(ctx, tile_fused_add_rmsnorm(ctx, &a), "shares bytes with x (0x");
    a = good, a.out = buf + 1920;
    expect_fail(ctx, tile_fused_add_rmsnorm(ctx, &a), "shares bytes with weight (0x");
    a = good, a.residual = buf + 256;
    expect_fail(ctx, tile_fused_add_layernorm(ctx, &a), "residual (0x");
    a = good, a.bias = buf + 1088;
    expect_fail(ctx, tile_fused_add_layernorm(ctx, &a), "shares bytes with bias (0x");
    a = good, a.quant_dtype = TILE_I8, a.scales = buf + 64;
    expect_fail(ctx, tile_fused_add_rmsnorm(ctx, &a), "scales (0x");
    a = good, a.quant_dtype = TILE_F8E4M3, a.scales = buf + 4096, a.out = buf, a.ldo = 128; /* the same bytes per row */
    expect_fail(ctx, tile_fused_add_rmsnorm(ctx, &a), "shares bytes with x (0x");
    a = good, a.ldx = a.ldo = 128, a.out = buf + 128; /* x and out: the two halves of [4, 128] rows */
    cr_assert_eq(tile_fused_add_rmsnorm(ctx, &a), TILE_OK, "interleaved columns: %s", tile_last_error(ctx));

    /* gated: 4 tokens, d 32: x [0, 512), out [1024, 1280) */
    tile_gated_args g = {.size = sizeof g, .dtype = TILE_F16, .act = TILE_GATED_SILU, .tokens = 4, .d = 32, .x = buf, .out = buf + 1024};
    cr_assert_eq(tile_gated_activation(ctx, &g), TILE_OK, "%s", tile_last_error(ctx));
    tile_gated_args b = g;
    b.out = buf + 64, b.ldo = 64; /* over up, the row stride x's */
    expect_fail(ctx, tile_gated_activation(ctx, &b), "shares bytes with x (0x");
    b = g, b.out = buf; /* at x, but with its own row stride d: row 1 of out is up of row 0 */
    expect_fail(ctx, tile_gated_activation(ctx, &b), "shares bytes with x (0x");
    b = g, b.out = buf, b.ldo = 128, b.quant_dtype = TILE_I8, b.scales = buf + 4096; /* x's bytes per row, 1-byte elements */
    expect_fail(ctx, tile_gated_activation(ctx, &b), "shares bytes with x (0x");
    b = g, b.quant_dtype = TILE_I8, b.scales = buf + 1040;
    expect_fail(ctx, tile_gated_activation(ctx, &b), "scales (0x");
    b = g, b.out = buf, b.ldo = 64; /* in place */
    cr_assert_eq(tile_gated_activation(ctx, &b), TILE_OK, "in place: %s", tile_last_error(ctx));
    tile_free(ctx, buf);
    tile_context_destroy(ctx);
}
