/* test_moe_f8.c - tile_moe_forward with f8e4m3 expert weights and f32 scales
 * (per output channel, or per 128 x 128 block) on the emulator, against a
 * float64 forward computed from the dequantized weights (f8 value * scale,
 * exact in double).  f16 and bf16 activations; sizes below, at and past one
 * 128 block, tails that are not multiples of the tiles; block rows BM 16, 32
 * and 64 (tile_moe_forward picks them from the slots per expert); dropped
 * slots, a residual.  The weights' magnitudes change by up to 2^6 from row
 * block to row block and K block to K block, so a scale read from the wrong
 * block shows.  Fresh random inputs every run (seed printed on failure;
 * TILE_TEST_SEED repeats one); out poisoned past each row.  Also `tile run
 * moe` (its own float64 check) on the emulator. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/test_rng.h"
#include "ref/ref.h"
#include "support/hostfloat.h"
#include "include/tile/tile.h"


/* ---- host number formats ---- */
static double put16(bool bf16, uint16_t *dst, double v) {
    *dst = bf16 ? f32_to_bf16((float)v) : f32_to_f16((float)v);
    return bf16 ? bf16_to_d(*dst) : f16_to_d(*dst);
}

/* the nearest E4M3FN code (ties to the even code), saturating at 448: positive codes
 * 0..0x7e increase with the value */
static uint8_t e4m3_encode(double x) {
    int sign = x < 0 ? 0x80 : 0;
    double a = fabs(x);
    int lo = 0, hi = 0x7e;
    if (a >= 448) return (uint8_t)(sign | 0x7e);
    while (hi - lo > 1) { /* value(lo) <= a < value(hi) */
        int mid = (lo + hi) / 2;
        if (f8e4m3_to_d((uint8_t)mid) <= a) lo = mid;
        else hi = mid;
    }
    double dl = a - f8e4m3_to_d((uint8_t)lo), dh = f8e4m3_to_d((uint8_t)hi) - a;
    int c = dl < dh ? lo : dh < dl ? hi : (lo & 1 ? hi : lo);
    return (uint8_t)(sign | c);
}

/* Quantize a weight matrix W [E, R, C] to f8 with scales; `dq` gets the dequantized values.
 * channel: scales [E, R]; block: scales [E, rb, cdiv(C, 128)] where rows are blocked per
 * `seg` rows (W1: the gate's and the up's rows separately; seg = R for W2), as
 * ref_moe_scale_index lays them out. */
static void quantize(bool block, int E, int R, int C, int seg, const double *w, uint8_t *q, float *sc, double *dq) {
    tile_moe_scales layout = block ? TILE_MOE_SCALES_BLOCK128 : TILE_MOE_SCALES_CHANNEL;
    size_t ns = (size_t)ref_moe_scale_count(layout, E, R, C, seg);
    double *amax = calloc(ns, sizeof(double));
    for (int e = 0; e < E; e++)
        for (int r = 0; r < R; r++)
            for (int c = 0; c < C; c++) {
                size_t si = (size_t)ref_moe_scale_index(layout, R, C, seg, e, r, c);
                amax[si] = fmax(amax[si], fabs(w[((size_t)e * R + r) * C + c]));
            }
    for (size_t i = 0; i < ns; i++) sc[i] = amax[i] > 0 ? (float)(amax[i] / 448 * (1 + 0.25 * urand())) : 1.0f; /* not powers of two */
    for (int e = 0; e < E; e++)
        for (int r = 0; r < R; r++)
            for (int c = 0; c < C; c++) {
                size_t si = (size_t)ref_moe_scale_index(layout, R, C, seg, e, r, c);
                size_t i = ((size_t)e * R + r) * C + c;
                q[i] = e4m3_encode(w[i] / sc[si]);
                dq[i] = f8e4m3_to_d(q[i]) * (double)sc[si];
            }
    free(amax);
}

/* magnitude factor of a weight: changes per 128-row block and 128-column block (2^-3 .. 2^3) */
static double block_factor(const int *fr, const int *fc, int r, int c) { return ldexp(1, fr[r / 128] + fc[c / 128]); }

typedef struct Case {
    int T, E, K, H, I;
    bool bf16, block, accumulate;
    int dropped; /* about 1 in `dropped` slots is -1 (0: none) */
} Case;

static tile_devptr put(tile_context *ctx, const void *h, size_t bytes) {
    tile_devptr d;
    cr_assert_eq(tile_malloc(ctx, bytes, &d), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_htod(ctx, d, h, bytes), TILE_OK, "%s", tile_last_error(ctx));
    return d;
}

static void run_case(tile_context *ctx, const Case *c) {
    int T = c->T, E = c->E, K = c->K, H = c->H, I = c->I, n = T * K, ldo = H + 3;
    bool bf = c->bf16;
    uint16_t *hx = malloc(2 * (size_t)T * H);
    double *vx = malloc(sizeof(double) * (size_t)T * H);
    for (size_t i = 0; i < (size_t)T * H; i++) vx[i] = put16(bf, hx + i, urand());
    /* true weights, with magnitudes that change from block to block */
    size_t n1 = (size_t)E * 2 * I * H, n2 = (size_t)E * H * I;
    double *w1 = malloc(sizeof(double) * n1), *w2 = malloc(sizeof(double) * n2);
    int fr[64], fc[64];
    for (int i = 0; i < 64; i++) fr[i] = irand(4) - 2, fc[i] = irand(3) - 1;
    for (int e = 0; e < E; e++)
        for (int r = 0; r < 2 * I; r++)
            for (int k = 0; k < H; k++) w1[((size_t)e * 2 * I + r) * H + k] = urand() * 2 / sqrt(H) * block_factor(fr, fc, r, k);
    for (int e = 0; e < E; e++)
        for (int r = 0; r < H; r++)
            for (int k = 0; k < I; k++) w2[((size_t)e * H + r) * I + k] = urand() * 2 / sqrt(I) * block_factor(fc, fr, r, k);
    uint8_t *q1 = malloc(n1), *q2 = malloc(n2);
    double *d1 = malloc(sizeof(double) * n1), *d2 = malloc(sizeof(double) * n2);
    tile_moe_scales layout = c->block ? TILE_MOE_SCALES_BLOCK128 : TILE_MOE_SCALES_CHANNEL;
    size_t ns1 = (size_t)ref_moe_scale_count(layout, E, 2 * I, H, I), ns2 = (size_t)ref_moe_scale_count(layout, E, H, I, H);
    float *s1 = malloc(sizeof(float) * ns1), *s2 = malloc(sizeof(float) * ns2);
    quantize(c->block, E, 2 * I, H, I, w1, q1, s1, d1);
    quantize(c->block, E, H, I, H, w2, q2, s2, d2);
    /* routing: distinct experts per token, some slots dropped */
    int *ids = malloc(sizeof(int) * (size_t)n);
    float *tw = malloc(sizeof(float) * (size_t)n);
    for (int t = 0; t < T; t++)
        for (int j = 0; j < K; j++) {
            int e, dup;
            do {
                e = irand(E), dup = 0;
                for (int i = 0; i < j; i++) dup |= ids[t * K + i] == e;
            } while (dup);
            ids[t * K + j] = c->dropped && irand(c->dropped) == 0 ? -1 : e;
            tw[t * K + j] = (float)(0.25 + 0.75 * fabs(urand()));
        }
    float *hout = malloc(sizeof(float) * (size_t)T * ldo);
    for (size_t i = 0; i < (size_t)T * ldo; i++) hout[i] = (i % ldo) < (size_t)H ? (float)urand() : NAN;

    tile_moe_args a = {.tokens = T, .hidden = H, .inter = I, .experts = E, .topk = K, .dtype = bf ? TILE_BF16 : TILE_F16,
                       .ldo = ldo, .accumulate = c->accumulate, .weight_dtype = TILE_F8E4M3,
                       .scales = c->block ? TILE_MOE_SCALES_BLOCK128 : TILE_MOE_SCALES_CHANNEL};
    a.x = put(ctx, hx, 2 * (size_t)T * H);
    a.w1 = put(ctx, q1, n1);
    a.w2 = put(ctx, q2, n2);
    a.w1_scale = put(ctx, s1, sizeof(float) * ns1);
    a.w2_scale = put(ctx, s2, sizeof(float) * ns2);
    a.out = put(ctx, hout, sizeof(float) * (size_t)T * ldo);
    a.topk_ids = put(ctx, ids, 4 * (size_t)n);
    a.topk_weights = put(ctx, tw, 4 * (size_t)n);
    char what[160];
    snprintf(what, sizeof what, "f8e4m3 %s scales, %s x: T=%d E=%d K=%d H=%d I=%d", c->block ? "block" : "channel", bf ? "bf16" : "f16", T,
             E, K, H, I);
    cr_assert_eq(tile_moe_forward(ctx, &a), TILE_OK, "%s: %s", what, tile_last_error(ctx));
    cr_assert_eq(tile_synchronize(ctx), TILE_OK, "%s", tile_last_error(ctx));
    float *gout = malloc(sizeof(float) * (size_t)T * ldo);
    cr_assert_eq(tile_memcpy_dtoh(ctx, gout, a.out, sizeof(float) * (size_t)T * ldo), TILE_OK);

    /* float64 forward from the dequantized weights; h is stored in the activations' type (the tolerance's rnd) */
    double rnd = bf ? 1.0 / 256 : 1.0 / 2048;
    double *want = calloc((size_t)T * H, sizeof(double)), *mag = calloc((size_t)T * H, sizeof(double)), *twd = malloc(sizeof(double) * (size_t)n);
    for (int s = 0; s < n; s++) twd[s] = tw[s];
    ref_moe_args ma = {.tokens = T, .hidden = H, .inter = I, .experts = E, .topk = K, .x = vx, .w1 = d1, .w2 = d2, .topk_ids = ids,
                       .topk_weights = twd};
    cr_assert(ref_moe_forward(&ma, want, H, mag), "ref_moe_forward rejected %s", what);
    for (int t = 0; t < T; t++)
        for (int o = 0; o < ldo; o++) {
            double got = gout[(size_t)t * ldo + o];
            if (o >= H) {
                cr_assert(isnan(got), "%s: out[%d][%d] written past hidden", what, t, o);
                continue;
            }
            double res = c->accumulate ? hout[(size_t)t * ldo + o] : 0;
            double w = want[(size_t)t * H + o] + res, tol = (rnd + 3e-5) * mag[(size_t)t * H + o] + 1e-5 * fabs(res) + 1e-6;
            cr_assert(fabs(got - w) <= tol, "%s: out[%d][%d] = %.7g, want %.7g (tol %.3g, seed %llu)", what, t, o, got, w, tol,
                      (unsigned long long)seed);
        }
    tile_devptr bufs[] = {a.x, a.w1, a.w2, a.w1_scale, a.w2_scale, a.out, a.topk_ids, a.topk_weights};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) tile_free(ctx, bufs[i]);
    free(hx), free(vx), free(w1), free(w2), free(q1), free(q2), free(d1), free(d2), free(s1), free(s2), free(ids), free(tw);
    free(hout), free(gout), free(twd), free(want), free(mag);
}

static tile_context *open_ctx(void) {
    tile_context_options o = {.device = getenv("TILE_TEST_DEVICE") ? getenv("TILE_TEST_DEVICE") : "emu", .no_disk_cache = 1,
                              .emu_racecheck = 1};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK);
    return ctx;
}

Test(moe_f8, channel_scales) {
    seed_rng();
    tile_context *ctx = open_ctx();
    Case cs[] = {
        {.T = 7, .E = 8, .K = 2, .H = 64, .I = 128},                                             /* BM 16 */
        {.T = 100, .E = 8, .K = 2, .H = 160, .I = 96, .bf16 = true, .accumulate = true},         /* BM 32 */
        {.T = 300, .E = 16, .K = 4, .H = 48, .I = 80, .bf16 = true, .dropped = 10},              /* BM 64, tails */
        {.T = 1, .E = 64, .K = 8, .H = 40, .I = 72, .accumulate = true},                         /* sizes not multiples of 16 */
        {.T = 600, .E = 3, .K = 2, .H = 80, .I = 96, .dropped = 5},                              /* BM 128 on wgmma targets */
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) run_case(ctx, &cs[i]);
    tile_context_destroy(ctx);
}

Test(moe_f8, block_scales) {
    seed_rng();
    tile_context *ctx = open_ctx();
    Case cs[] = {
        /* hidden 2.5 blocks, inter 1.5 blocks: partial blocks in both directions, gate and up blocked apart */
        {.T = 60, .E = 8, .K = 2, .H = 320, .I = 192, .bf16 = true, .block = true},              /* BM 16 */
        {.T = 7, .E = 4, .K = 2, .H = 256, .I = 136, .block = true, .accumulate = true},         /* inter past one block, odd tail */
        {.T = 300, .E = 16, .K = 4, .H = 96, .I = 112, .bf16 = true, .block = true, .dropped = 8}, /* BM 64, one block each */
        {.T = 1, .E = 64, .K = 8, .H = 136, .I = 40, .block = true},                              /* sizes not multiples of 16 */
        {.T = 520, .E = 2, .K = 1, .H = 256, .I = 144, .bf16 = true, .block = true},             /* BM 128 on wgmma targets */
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) run_case(ctx, &cs[i]);
    tile_context_destroy(ctx);
}

Test(moe_f8, argument_errors) {
    tile_context *ctx = open_ctx();
    tile_devptr buf;
    cr_assert_eq(tile_malloc(ctx, 1 << 20, &buf), TILE_OK);
    tile_moe_args a = {.tokens = 4, .hidden = 64, .inter = 64, .experts = 8, .topk = 2, .dtype = TILE_BF16, .x = buf, .w1 = buf,
                       .w2 = buf, .out = buf, .topk_ids = buf, .topk_weights = buf, .weight_dtype = TILE_F8E4M3};
    cr_expect_eq(tile_moe_forward(ctx, &a), TILE_ERROR_INVALID_VALUE, "f8 weights without a scale layout");
    cr_expect(strstr(tile_last_error(ctx), "scales"), "%s", tile_last_error(ctx));
    a.scales = TILE_MOE_SCALES_CHANNEL;
    cr_expect_eq(tile_moe_forward(ctx, &a), TILE_ERROR_INVALID_VALUE, "f8 weights without scale buffers");
    cr_expect(strstr(tile_last_error(ctx), "w1_scale"), "%s", tile_last_error(ctx));
    a.weight_dtype = TILE_BF16;
    cr_expect_eq(tile_moe_forward(ctx, &a), TILE_ERROR_INVALID_VALUE, "scales with 16-bit weights");
    a.weight_dtype = TILE_F16, a.scales = TILE_MOE_SCALES_NONE;
    cr_expect_eq(tile_moe_forward(ctx, &a), TILE_ERROR_INVALID_VALUE, "weights in another 16-bit type than x");
    a.weight_dtype = TILE_F8E4M3, a.dtype = TILE_F8E4M3, a.scales = TILE_MOE_SCALES_BLOCK128;
    cr_expect_eq(tile_moe_forward(ctx, &a), TILE_ERROR_INVALID_VALUE, "f8 activations");
    cr_expect(strstr(tile_last_error(ctx), "dtype"), "%s", tile_last_error(ctx));
    tile_free(ctx, buf);
    tile_context_destroy(ctx);
}

Test(moe_f8, cli_run_moe) {
    /* tile run moe: random inputs, routing and output checked against float64 (exit 0), on the emulator */
    cr_expect_eq(system(TILE_CLI " run moe --device emu --tokens 9 --experts 4 --topk 2 --hidden 160 --inter 136 --dtype f8e4m3 --reps 1 > /dev/null"), 0);
    cr_expect_eq(system(TILE_CLI " run moe --device emu --tokens 9 --experts 4 --topk 2 --hidden 64 --inter 48 --dtype f8e4m3 --act-dtype f16 "
                                 "--scales channel --reps 1 > /dev/null"),
                 0);
    cr_expect_eq(system(TILE_CLI " run moe --device emu --tokens 5 --experts 8 --topk 8 --hidden 32 --inter 32 --dtype f16 --reps 1 > /dev/null"), 0);
    cr_expect_neq(system(TILE_CLI " run moe --device emu --dtype f16 --scales block 2> /dev/null"), 0, "--scales without f8 weights must fail");
}
