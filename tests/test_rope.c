/* test_rope.c - tile_rope_kv_append (kernels/rope/rope.c) on the emulator
 * against float64 (ref/: ref_rope, ref_paged_decode), its argument checks,
 * and the cache it writes read back by tile_attention_decode_paged.
 *
 * Fresh random inputs every run (TILE_TEST_SEED repeats one; printed on
 * failure): NeoX and GPT-J, full and partial rotary (head_dim 2 to 256, odd
 * head counts, head_dim 80 with rot_dim 40, 6 with 2, an odd head_dim 7),
 * f16 and bf16, cos_sin in f32 or the input type, i32 and i64 positions and
 * slots (an i64 slot that does not fit in 32 bits counts as out of range),
 * in place and into separate outputs, gapped token strides and cache
 * strides, block sizes 16 and 5, padding tokens (slot -1), heads spread over
 * several programs of a token, an f8e4m3 cache with per-tensor (some values
 * saturating) and per-head scales.  The caches and outputs are poisoned
 * first: every element the call must not write is
 * checked to be untouched (the gaps of the inputs too, when in place).
 *
 * Tolerances: the kernel computes x1 cos - x2 sin in f32 from exactly widened
 * inputs and rounds once, so the rotated values are within half an ulp of
 * the output type (2^-11 |y| f16, 2^-8 bf16, plus 2^-25 below f16's normal
 * range) plus 2^-22 (|x1 cos| + |x2 sin|) of the reference; unrotated columns
 * are bit for bit.  The K cache holds exactly the rotated K (bit for bit), V
 * exactly V; an f8 cache the code f8e4m3((float)x / (float)scale) of that
 * value, which an independent encoder here (the nearest finite code, ties
 * to even, saturating) predicts bit for bit.
 * End to end: a prefill append of three sequences of different lengths
 * through shuffled block tables, then a decode step appending T = 1 or 2
 * tokens per sequence, then tile_attention_decode_paged on the caches:
 * against ref_paged_decode over the reference's rotated K (rounded to the
 * input type) and Q, with the decode tests' tolerances (2e-3 f16, 1.6e-2
 * bf16); with an f8 cache the reference quantizes the device's rotated K
 * (checked against ref_rope first) with the same encoder. */
#include <criterion/criterion.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tests/test_rng.h"
#include "ref/ref.h"
#include "support/hostfloat.h"
#include "include/tile/tile.h"
#include "tests/test_ctx_buffers.h"

static uint16_t to_dt(tile_dtype t, double v) { return t == TILE_F16 ? f32_to_f16((float)v) : f32_to_bf16((float)v); }
static double from_dt(tile_dtype t, uint16_t h) { return t == TILE_F16 ? f16_to_d(h) : bf16_to_d(h); }
static const uint16_t POISON16 = 0x7e00; /* NaN in f16 and in bf16 */
static const uint8_t POISON_F8 = 0x7f;   /* NaN in f8e4m3 (E4M3FN) */

/* f8e4m3 of x: the nearest finite code, ties to the even code, saturating at +-448 (as test_f8.c) */
static uint8_t f8_encode(double x) {
    if (isnan(x)) return 0x7f;
    uint8_t sign = signbit(x) ? 0x80 : 0;
    double a = fabs(x);
    if (a >= 448) return sign | 0x7e;
    int best = 0;
    double bd = INFINITY;
    for (int c = 0; c < 0x7f; c++) {
        double d = fabs(a - f8e4m3_to_d((uint8_t)c));
        if (d < bd || (d == bd && (c & 1) == 0)) bd = d, best = c;
    }
    return sign | (uint8_t)best;
}


/* cos_sin [max_pos, rot] as rotary embeddings make it (base 10000), stored in f32 or dt; *vals: the stored values */
static void *make_cos_sin(tile_dtype cs_dt, int max_pos, int rot, double **vals) {
    size_t n = (size_t)max_pos * rot, es = cs_dt == TILE_F32 ? 4 : 2;
    void *h = malloc(n * es);
    *vals = malloc(n * sizeof(double));
    for (int p = 0; p < max_pos; p++)
        for (int i = 0; i < rot / 2; i++) {
            double th = p * pow(10000.0, -2.0 * i / rot), cs[2] = {cos(th), sin(th)};
            for (int j = 0; j < 2; j++) {
                size_t k = (size_t)p * rot + (size_t)j * (rot / 2) + i;
                if (cs_dt == TILE_F32) ((float *)h)[k] = (float)cs[j], (*vals)[k] = (float)cs[j];
                else ((uint16_t *)h)[k] = to_dt(cs_dt, cs[j]), (*vals)[k] = from_dt(cs_dt, ((uint16_t *)h)[k]);
            }
        }
    return h;
}

/* An index array of `bytes`-byte integers */
static void *make_index(const int64_t *v, int n, int bytes) {
    void *h = malloc((size_t)n * (size_t)bytes + 8);
    for (int i = 0; i < n; i++) {
        if (bytes == 4) ((int32_t *)h)[i] = (int32_t)v[i];
        else ((int64_t *)h)[i] = v[i];
    }
    return h;
}

/* ======================= rotation and cache write ======================= */

typedef struct RopeCase {
    tile_dtype dt;
    tile_rope_style style;
    int tokens, hq, hk, D, rot; /* rot 0: head_dim */
    bool pos64, slot64, cs32;
    int f8;        /* 0: the cache in dt; 1: f8e4m3, per-tensor scales; 2: per-head scales */
    bool separate; /* q_out and k_out (else in place) */
    int block_size;
    int pad_every; /* every pad_every-th token gets slot -1 (0: none) */
} RopeCase;

/* Check a rotated [tokens, heads, D] tensor (row stride ld) against ref_rope of the input (row stride ldx). */
static void check_rotated(const RopeCase *c, const char *what, int heads, const uint16_t *in, int ldx, const uint16_t *out, int ld,
                          const int64_t *pos, const double *csv, int rot) {
    double rel = c->dt == TILE_F16 ? 0x1p-11 : 0x1p-8;
    double x[256], y[256], mag[256];
    for (int t = 0; t < c->tokens; t++)
        for (int h = 0; h < heads; h++) {
            for (int d = 0; d < c->D; d++) x[d] = from_dt(c->dt, in[(size_t)t * ldx + h * c->D + d]);
            const double *cs = csv + (size_t)pos[t] * rot;
            ref_rope(c->style, c->D, rot, x, cs, cs + rot / 2, y, mag);
            for (int d = 0; d < c->D; d++) {
                uint16_t g = out[(size_t)t * ld + h * c->D + d];
                if (d >= rot) {
                    cr_assert_eq(g, in[(size_t)t * ldx + h * c->D + d], "%s token %d head %d dim %d: the unrotated tail changed (seed %llu)", what,
                                 t, h, d, (unsigned long long)seed);
                    continue;
                }
                double got = from_dt(c->dt, g), tol = rel * fabs(y[d]) + 0x1p-22 * mag[d] + 0x1p-25;
                cr_assert(fabs(got - y[d]) <= tol, "%s token %d head %d dim %d (pos %lld): %.8g, want %.8g (tol %.3g) (seed %llu)", what, t, h, d,
                          (long long)pos[t], got, y[d], tol, (unsigned long long)seed);
            }
        }
}

static void run_rope(tile_context *ctx, const RopeCase *c) {
    char what[200];
    int T = c->tokens, Hq = c->hq, Hk = c->hk, D = c->D, rot = c->rot ? c->rot : D, bs = c->block_size;
    snprintf(what, sizeof what, "%s %s T %d hq %d hk %d D %d rot %d pos%d slot%d cs %s f8 %d %s bs %d", c->dt == TILE_F16 ? "f16" : "bf16",
             c->style == TILE_ROPE_GPTJ ? "gptj" : "neox", T, Hq, Hk, D, rot, c->pos64 ? 64 : 32, c->slot64 ? 64 : 32,
             c->cs32 ? "f32" : "dt", c->f8, c->separate ? "separate" : "in place", bs);
    int ldq = Hq * D + 8, ldk = Hk * D + 4, ldv = Hk * D, ldqo = Hq * D + 16, ldko = Hk * D + 2;
    size_t nq = (size_t)T * ldq, nk = (size_t)T * ldk, nv = (size_t)T * ldv, nqo = (size_t)T * ldqo, nko = (size_t)T * ldko;
    uint16_t *hq = malloc(nq * 2), *hk = malloc(nk * 2), *hv = malloc(nv * 2), *gq = malloc((c->separate ? nqo : nq) * 2),
             *gk = malloc((c->separate ? nko : nk) * 2);
    for (size_t i = 0; i < nq; i++) hq[i] = to_dt(c->dt, 2 * urand());
    for (size_t i = 0; i < nk; i++) hk[i] = to_dt(c->dt, 2 * urand());
    for (size_t i = 0; i < nv; i++) hv[i] = to_dt(c->dt, 2 * urand());
    int max_pos = 300;
    tile_dtype cs_dt = c->cs32 ? TILE_F32 : c->dt;
    double *csv;
    void *hcs = make_cos_sin(cs_dt, max_pos, rot, &csv);
    /* positions: random, with the first and last rows of the table */
    int64_t *pos = malloc(sizeof(int64_t) * (size_t)T), *slot = malloc(sizeof(int64_t) * (size_t)T);
    for (int t = 0; t < T; t++) pos[t] = t == 0 ? max_pos - 1 : t == 1 ? 0 : irand(max_pos);
    /* slots: distinct, from a shuffled cache with room to spare; some padding */
    int num_blocks = (T + bs - 1) / bs + 3, num_slots = num_blocks * bs;
    int *perm = malloc(sizeof(int) * (size_t)num_slots);
    for (int i = 0; i < num_slots; i++) perm[i] = i;
    for (int i = num_slots - 1; i > 0; i--) {
        int j = irand(i + 1), x = perm[i];
        perm[i] = perm[j], perm[j] = x;
    }
    for (int t = 0; t < T; t++) slot[t] = c->pad_every && t % c->pad_every == c->pad_every - 1 ? -1 : perm[t];
    int64_t big_slot = ((int64_t)1 << 32) + perm[T]; /* its low word is a free slot: read whole, it is out of range */
    if (c->slot64 && T > 2) slot[2] = big_slot;
    void *hpos = make_index(pos, T, c->pos64 ? 8 : 4), *hslot = make_index(slot, T, c->slot64 ? 8 : 4);
    /* caches: K gapped (head, slot and block strides), V contiguous */
    int skh = D + 8, sks = Hk * skh + 16, skb = bs * sks + 32;
    size_t nkc = (size_t)num_blocks * skb, nvc = (size_t)num_blocks * bs * Hk * D, kes = c->f8 ? 1 : 2;
    void *hkc = malloc(nkc * kes), *hvc = malloc(nvc * kes);
    for (size_t i = 0; i < nkc; i++) c->f8 ? (((uint8_t *)hkc)[i] = POISON_F8) : (((uint16_t *)hkc)[i] = POISON16);
    for (size_t i = 0; i < nvc; i++) c->f8 ? (((uint8_t *)hvc)[i] = POISON_F8) : (((uint16_t *)hvc)[i] = POISON16);
    float k_scale = c->f8 == 1 ? 0.004f : 0, v_scale = c->f8 == 1 ? 0.01f : 0; /* |k| up to ~2.8: k / 0.004 saturates */
    float *ksh = malloc(sizeof(float) * (size_t)Hk), *vsh = malloc(sizeof(float) * (size_t)Hk);
    for (int h = 0; h < Hk; h++) ksh[h] = (float)(0.011 + 0.008 * urand()), vsh[h] = (float)(0.006 + 0.004 * urand());
    for (size_t i = 0; i < (c->separate ? nqo : nq); i++) gq[i] = POISON16;
    for (size_t i = 0; i < (c->separate ? nko : nk); i++) gk[i] = POISON16;

    tile_devptr dq = upload(ctx, hq, nq * 2), dk = upload(ctx, hk, nk * 2), dv = upload(ctx, hv, nv * 2);
    tile_devptr dqo = c->separate ? upload(ctx, gq, nqo * 2) : 0, dko = c->separate ? upload(ctx, gk, nko * 2) : 0;
    tile_devptr dpos = upload(ctx, hpos, (size_t)T * (c->pos64 ? 8 : 4)), dslot = upload(ctx, hslot, (size_t)T * (c->slot64 ? 8 : 4));
    tile_devptr dcs = upload(ctx, hcs, (size_t)max_pos * rot * (c->cs32 ? 4 : 2));
    tile_devptr dkc = upload(ctx, hkc, nkc * kes), dvc = upload(ctx, hvc, nvc * kes);
    tile_devptr dks = c->f8 == 2 ? upload(ctx, ksh, sizeof(float) * (size_t)Hk) : 0, dvs = c->f8 == 2 ? upload(ctx, vsh, sizeof(float) * (size_t)Hk) : 0;
    tile_rope_args a = {.size = sizeof a, .dtype = c->dt, .style = c->style, .tokens = T, .heads_q = Hq, .heads_kv = Hk, .head_dim = D,
                        .rot_dim = c->rot, .q = dq, .ldq = ldq, .k = dk, .ldk = ldk, .v = dv, .ldv = 0, .q_out = dqo,
                        .ldq_out = c->separate ? ldqo : 0, .k_out = dko, .ldk_out = c->separate ? ldko : 0, .positions = dpos,
                        .positions_dtype = c->pos64 ? TILE_I64 : TILE_I32, .cos_sin = dcs, .cos_sin_dtype = c->cs32 ? TILE_F32 : c->dt,
                        .max_position = max_pos, .k_cache = dkc, .v_cache = dvc, .k_stride = {skb, sks, skh}, .num_blocks = num_blocks,
                        .block_size = bs, .slot_mapping = dslot, .slot_dtype = c->slot64 ? TILE_I64 : TILE_I32,
                        .kv_dtype = c->f8 ? TILE_F8E4M3 : 0, .k_scale = k_scale, .v_scale = v_scale, .k_scales = dks, .v_scales = dvs};
    tile_status st = tile_rope_kv_append(ctx, &a);
    cr_assert_eq(st, TILE_OK, "%s: %s: %s", what, tile_status_string(st), tile_last_error(ctx));
    cr_assert_eq(tile_synchronize(ctx), TILE_OK, "%s", tile_last_error(ctx));

    /* 1. Q and K against ref_rope; the inputs (separate) or the gaps (in place) untouched */
    uint16_t *aq = malloc(nq * 2), *ak = malloc(nk * 2), *av = malloc(nv * 2);
    download(ctx, aq, dq, nq * 2), download(ctx, ak, dk, nk * 2), download(ctx, av, dv, nv * 2);
    cr_assert(!memcmp(av, hv, nv * 2), "%s: v was written", what);
    int lqo = ldq, lko = ldk;
    if (c->separate) {
        download(ctx, gq, dqo, nqo * 2), download(ctx, gk, dko, nko * 2);
        cr_assert(!memcmp(aq, hq, nq * 2) && !memcmp(ak, hk, nk * 2), "%s: q or k was written with separate outputs", what);
        lqo = ldqo, lko = ldko;
    } else {
        memcpy(gq, aq, nq * 2), memcpy(gk, ak, nk * 2);
    }
    check_rotated(c, what, Hq, hq, ldq, gq, lqo, pos, csv, rot);
    check_rotated(c, what, Hk, hk, ldk, gk, lko, pos, csv, rot);
    for (int t = 0; t < T; t++) { /* the gaps after each row */
        for (int i = Hq * D; i < lqo; i++)
            cr_assert_eq(gq[(size_t)t * lqo + i], c->separate ? POISON16 : hq[(size_t)t * ldq + i], "%s: q's gap written (token %d)", what, t);
        for (int i = Hk * D; i < lko; i++)
            cr_assert_eq(gk[(size_t)t * lko + i], c->separate ? POISON16 : hk[(size_t)t * ldk + i], "%s: k's gap written (token %d)", what, t);
    }

    /* 2. the caches: each appended token's K (as rotated) and V at its slot, nothing else written */
    download(ctx, hkc, dkc, nkc * kes), download(ctx, hvc, dvc, nvc * kes);
    bool *wk = calloc(nkc, 1), *wv = calloc(nvc, 1);
    int appended = 0;
    for (int t = 0; t < T; t++) {
        if (slot[t] < 0 || slot[t] >= num_slots) continue;
        appended++;
        int64_t blk = slot[t] / bs, off = slot[t] % bs;
        for (int h = 0; h < Hk; h++)
            for (int d = 0; d < D; d++) {
                size_t ik = (size_t)(blk * skb + off * sks + h * skh + d), iv = (size_t)(((blk * bs + off) * Hk + h) * D + d);
                uint16_t kx = gk[(size_t)t * lko + h * D + d], vx = hv[(size_t)t * ldv + h * D + d];
                wk[ik] = wv[iv] = true;
                if (!c->f8) {
                    cr_assert_eq(((uint16_t *)hkc)[ik], kx, "%s: k_cache of token %d (slot %lld) head %d dim %d: 0x%04x, want 0x%04x (seed %llu)",
                                 what, t, (long long)slot[t], h, d, ((uint16_t *)hkc)[ik], kx, (unsigned long long)seed);
                    cr_assert_eq(((uint16_t *)hvc)[iv], vx, "%s: v_cache of token %d head %d dim %d (seed %llu)", what, t, h, d,
                                 (unsigned long long)seed);
                    continue;
                }
                float ks = c->f8 == 1 ? k_scale : ksh[h], vs = c->f8 == 1 ? v_scale : vsh[h];
                uint8_t wkc = f8_encode((float)from_dt(c->dt, kx) / ks), wvc = f8_encode((float)from_dt(c->dt, vx) / vs);
                cr_assert_eq(((uint8_t *)hkc)[ik], wkc, "%s: k_cache of token %d head %d dim %d: code 0x%02x, want 0x%02x (k %.6g / %.6g) (seed %llu)",
                             what, t, h, d, ((uint8_t *)hkc)[ik], wkc, from_dt(c->dt, kx), ks, (unsigned long long)seed);
                cr_assert_eq(((uint8_t *)hvc)[iv], wvc, "%s: v_cache of token %d head %d dim %d: code 0x%02x, want 0x%02x (seed %llu)", what, t,
                             h, d, ((uint8_t *)hvc)[iv], wvc, (unsigned long long)seed);
            }
    }
    cr_assert(appended > T / 2, "%s: the case appends too few tokens", what);
    for (size_t i = 0; i < nkc; i++)
        if (!wk[i]) cr_assert(c->f8 ? ((uint8_t *)hkc)[i] == POISON_F8 : ((uint16_t *)hkc)[i] == POISON16, "%s: k_cache element %zu written", what, i);
    for (size_t i = 0; i < nvc; i++)
        if (!wv[i]) cr_assert(c->f8 ? ((uint8_t *)hvc)[i] == POISON_F8 : ((uint16_t *)hvc)[i] == POISON16, "%s: v_cache element %zu written", what, i);

    tile_devptr bufs[] = {dq, dk, dv, dqo, dko, dpos, dslot, dcs, dkc, dvc, dks, dvs};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i]) tile_free(ctx, bufs[i]);
    free(hq), free(hk), free(hv), free(gq), free(gk), free(aq), free(ak), free(av), free(csv), free(hcs), free(pos), free(slot), free(perm);
    free(hpos), free(hslot), free(hkc), free(hvc), free(ksh), free(vsh), free(wk), free(wv);
}

Test(rope, neox_f16, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    run_rope(ctx, &(RopeCase){TILE_F16, TILE_ROPE_NEOX, 37, 4, 2, 64, 0, true, true, true, 0, false, 16, 0});
    run_rope(ctx, &(RopeCase){TILE_F16, TILE_ROPE_NEOX, 9, 7, 3, 128, 0, false, false, false, 0, true, 16, 4});
    run_rope(ctx, &(RopeCase){TILE_F16, TILE_ROPE_NEOX, 5, 3, 1, 256, 0, true, false, true, 0, false, 5, 0});
    /* more heads than one program takes: 2 query and 1 KV programs per token (16 heads of 64), 3 + 2 (4 of 256) */
    run_rope(ctx, &(RopeCase){TILE_F16, TILE_ROPE_NEOX, 6, 20, 5, 64, 0, false, true, true, 0, false, 16, 0});
    run_rope(ctx, &(RopeCase){TILE_BF16, TILE_ROPE_GPTJ, 4, 9, 5, 256, 192, true, false, false, 2, true, 16, 0});
    tile_context_destroy(ctx);
}

Test(rope, gptj_bf16, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    run_rope(ctx, &(RopeCase){TILE_BF16, TILE_ROPE_GPTJ, 37, 4, 2, 64, 0, false, true, false, 0, false, 16, 3});
    run_rope(ctx, &(RopeCase){TILE_BF16, TILE_ROPE_GPTJ, 9, 5, 5, 128, 0, true, false, true, 0, true, 16, 0});
    run_rope(ctx, &(RopeCase){TILE_F16, TILE_ROPE_GPTJ, 11, 2, 1, 64, 0, true, true, true, 0, true, 5, 0});
    tile_context_destroy(ctx);
}

Test(rope, partial_rotary, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    run_rope(ctx, &(RopeCase){TILE_F16, TILE_ROPE_NEOX, 13, 5, 1, 80, 40, true, true, true, 0, false, 16, 0});
    run_rope(ctx, &(RopeCase){TILE_BF16, TILE_ROPE_NEOX, 13, 3, 3, 80, 40, false, true, false, 0, true, 16, 5});
    run_rope(ctx, &(RopeCase){TILE_BF16, TILE_ROPE_GPTJ, 7, 3, 1, 128, 32, true, false, true, 0, true, 16, 0});
    run_rope(ctx, &(RopeCase){TILE_F16, TILE_ROPE_GPTJ, 7, 1, 1, 6, 2, false, false, false, 0, false, 5, 2}); /* tiny heads */
    run_rope(ctx, &(RopeCase){TILE_F16, TILE_ROPE_NEOX, 7, 2, 2, 10, 6, true, true, true, 0, true, 5, 0});
    run_rope(ctx, &(RopeCase){TILE_BF16, TILE_ROPE_NEOX, 5, 3, 2, 7, 4, false, true, true, 2, true, 5, 0}); /* an odd head_dim */
    run_rope(ctx, &(RopeCase){TILE_F16, TILE_ROPE_GPTJ, 5, 2, 1, 2, 0, true, false, false, 1, false, 16, 0}); /* one pair */
    tile_context_destroy(ctx);
}

Test(rope, f8_cache, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    run_rope(ctx, &(RopeCase){TILE_F16, TILE_ROPE_NEOX, 21, 4, 2, 64, 0, true, true, true, 1, false, 16, 4});
    run_rope(ctx, &(RopeCase){TILE_BF16, TILE_ROPE_GPTJ, 21, 6, 3, 128, 64, false, false, false, 2, true, 16, 0});
    run_rope(ctx, &(RopeCase){TILE_BF16, TILE_ROPE_NEOX, 9, 2, 2, 80, 40, true, false, true, 2, false, 5, 3});
    run_rope(ctx, &(RopeCase){TILE_F16, TILE_ROPE_GPTJ, 9, 3, 1, 96, 0, false, true, false, 1, true, 16, 0});
    tile_context_destroy(ctx);
}

/* ======================= end to end: append, then paged decode ======================= */

typedef struct E2eCase {
    tile_dtype dt;
    tile_rope_style style;
    int hq, hk, D, rot, bs, T; /* T: tokens per sequence of the decode step */
    bool f8;
} E2eCase;

static void run_e2e(tile_context *ctx, const E2eCase *c) {
    enum { S = 3 };
    static const int prompt[S] = {1, 37, 130};
    int Hq = c->hq, Hk = c->hk, D = c->D, rot = c->rot ? c->rot : D, bs = c->bs, T = c->T;
    char what[160];
    snprintf(what, sizeof what, "e2e %s %s hq %d hk %d D %d rot %d bs %d T %d%s", c->dt == TILE_F16 ? "f16" : "bf16",
             c->style == TILE_ROPE_GPTJ ? "gptj" : "neox", Hq, Hk, D, rot, bs, T, c->f8 ? " f8" : "");
    int ctxlen[S], max_ctx = 0, nb_total = 0, sbt = 0;
    for (int s = 0; s < S; s++) {
        ctxlen[s] = prompt[s] + T;
        max_ctx = ctxlen[s] > max_ctx ? ctxlen[s] : max_ctx;
        int nb = (ctxlen[s] + bs - 1) / bs;
        nb_total += nb, sbt = nb > sbt ? nb : sbt;
    }
    int num_blocks = nb_total + 2;
    int *perm = malloc(sizeof(int) * (size_t)num_blocks), *table = calloc((size_t)S * sbt, sizeof(int));
    for (int i = 0; i < num_blocks; i++) perm[i] = i;
    for (int i = num_blocks - 1; i > 0; i--) {
        int j = irand(i + 1), x = perm[i];
        perm[i] = perm[j], perm[j] = x;
    }
    for (int s = 0, next = 0; s < S; s++)
        for (int i = 0; i < (ctxlen[s] + bs - 1) / bs; i++) table[s * sbt + i] = perm[next++];
    int max_pos = 512;
    double *csv;
    void *hcs = make_cos_sin(TILE_F32, max_pos, rot, &csv);
    tile_devptr dcs = upload(ctx, hcs, (size_t)max_pos * rot * 4);
    size_t ncache = (size_t)num_blocks * bs * Hk * D, kes = c->f8 ? 1 : 2;
    void *poison = malloc(ncache * kes);
    for (size_t i = 0; i < ncache; i++) c->f8 ? (((uint8_t *)poison)[i] = 0) : (((uint16_t *)poison)[i] = 0);
    tile_devptr dkc = upload(ctx, poison, ncache * kes), dvc = upload(ctx, poison, ncache * kes);
    float k_scale = c->f8 ? 0.02f : 0, v_scale = c->f8 ? 0.015f : 0;
    /* the reference caches (f64), filled as the tokens are appended */
    double *rk = calloc(ncache, sizeof(double)), *rv = calloc(ncache, sizeof(double));
    double rel = c->dt == TILE_F16 ? 0x1p-11 : 0x1p-8;
    double *rq = NULL; /* the decode step's rotated Q, [S, T, Hq, D] */
    tile_devptr dq_step = 0;

    /* two appends: the prompts (one batch of every prompt token), then T tokens per sequence */
    for (int phase = 0; phase < 2; phase++) {
        int n = 0;
        for (int s = 0; s < S; s++) n += phase ? T : prompt[s];
        size_t nq = (size_t)n * Hq * D, nk = (size_t)n * Hk * D;
        uint16_t *hq = malloc(nq * 2), *hk = malloc(nk * 2), *hv = malloc(nk * 2), *gq = malloc(nq * 2), *gk = malloc(nk * 2);
        int64_t *pos = malloc(sizeof(int64_t) * (size_t)n), *slot = malloc(sizeof(int64_t) * (size_t)n);
        int *seq_of = malloc(sizeof(int) * (size_t)n);
        for (int s = 0, r = 0; s < S; s++)
            for (int j = 0; j < (phase ? T : prompt[s]); j++, r++) {
                int p = phase ? prompt[s] + j : j;
                pos[r] = p, seq_of[r] = s;
                slot[r] = (int64_t)table[s * sbt + p / bs] * bs + p % bs;
            }
        for (size_t i = 0; i < nq; i++) hq[i] = to_dt(c->dt, urand());
        for (size_t i = 0; i < nk; i++) hk[i] = to_dt(c->dt, urand()), hv[i] = to_dt(c->dt, urand());
        tile_devptr dq = upload(ctx, hq, nq * 2), dk = upload(ctx, hk, nk * 2), dv = upload(ctx, hv, nk * 2);
        tile_devptr dpos = upload(ctx, pos, sizeof(int64_t) * (size_t)n), dslot = upload(ctx, slot, sizeof(int64_t) * (size_t)n);
        tile_rope_args a = {.dtype = c->dt, .style = c->style, .tokens = n, .heads_q = Hq, .heads_kv = Hk, .head_dim = D, .rot_dim = c->rot,
                            .q = dq, .k = dk, .v = dv, .positions = dpos, .cos_sin = dcs, .max_position = max_pos, .k_cache = dkc,
                            .v_cache = dvc, .num_blocks = num_blocks, .block_size = bs, .slot_mapping = dslot,
                            .kv_dtype = c->f8 ? TILE_F8E4M3 : c->dt, .k_scale = k_scale, .v_scale = v_scale, .check_indices = 1};
        tile_status st = tile_rope_kv_append(ctx, &a);
        cr_assert_eq(st, TILE_OK, "%s: %s", what, tile_last_error(ctx));
        download(ctx, gq, dq, nq * 2), download(ctx, gk, dk, nk * 2);
        /* the reference: rotated in f64, rounded to dt (f8: the device's rotated K, checked first, quantized) */
        double x[256], y[256], mag[256];
        if (phase) rq = malloc(sizeof(double) * nq);
        for (int r = 0; r < n; r++) {
            const double *cs = csv + (size_t)pos[r] * rot;
            int64_t blk = slot[r] / bs, off = slot[r] % bs;
            for (int h = 0; h < Hk; h++) {
                for (int d = 0; d < D; d++) x[d] = from_dt(c->dt, hk[((size_t)r * Hk + h) * D + d]);
                ref_rope(c->style, D, rot, x, cs, cs + rot / 2, y, mag);
                for (int d = 0; d < D; d++) {
                    double got = from_dt(c->dt, gk[((size_t)r * Hk + h) * D + d]), tol = rel * fabs(y[d]) + 0x1p-22 * mag[d] + 0x1p-25;
                    cr_assert(fabs(got - y[d]) <= tol, "%s: K token %d head %d dim %d: %.8g, want %.8g (seed %llu)", what, r, h, d, got, y[d],
                              (unsigned long long)seed);
                    size_t ic = (size_t)(((blk * bs + off) * Hk + h) * D + d);
                    double vv = from_dt(c->dt, hv[((size_t)r * Hk + h) * D + d]);
                    if (c->f8) {
                        rk[ic] = f8e4m3_to_d(f8_encode((float)got / k_scale)) * k_scale;
                        rv[ic] = f8e4m3_to_d(f8_encode((float)vv / v_scale)) * v_scale;
                    } else {
                        rk[ic] = from_dt(c->dt, to_dt(c->dt, y[d]));
                        rv[ic] = vv;
                    }
                }
            }
            for (int h = 0; h < Hq && phase; h++) {
                for (int d = 0; d < D; d++) x[d] = from_dt(c->dt, hq[((size_t)r * Hq + h) * D + d]);
                ref_rope(c->style, D, rot, x, cs, cs + rot / 2, y, NULL);
                for (int d = 0; d < D; d++) rq[((size_t)r * Hq + h) * D + d] = from_dt(c->dt, to_dt(c->dt, y[d]));
            }
        }
        tile_free(ctx, dk), tile_free(ctx, dv), tile_free(ctx, dpos), tile_free(ctx, dslot);
        if (phase) dq_step = dq; /* [S, T, Hq, D]: the decode step's queries, rotated in place */
        else tile_free(ctx, dq);
        free(hq), free(hk), free(hv), free(gq), free(gk), free(pos), free(slot), free(seq_of);
    }

    /* decode over the appended caches */
    size_t no = (size_t)S * T * Hq * D;
    uint16_t *ho = malloc(no * 2);
    for (size_t i = 0; i < no; i++) ho[i] = POISON16;
    tile_devptr dout = upload(ctx, ho, no * 2), dtable = upload(ctx, table, sizeof(int) * (size_t)S * sbt), dlens = upload(ctx, ctxlen, sizeof ctxlen);
    tile_paged_attention_args pa = {.dtype = c->dt, .kv_dtype = c->f8 ? TILE_F8E4M3 : c->dt, .k_scale = k_scale, .v_scale = v_scale,
                                    .num_seqs = S, .heads_q = Hq, .heads_kv = Hk, .head_dim = D, .num_tokens = T, .block_size = bs,
                                    .num_blocks = num_blocks, .q = dq_step, .o = dout, .k_cache = dkc, .v_cache = dvc, .block_tables = dtable,
                                    .block_table_stride = sbt, .context_lens = dlens, .max_context_len = max_ctx, .check_tables = 1};
    tile_status st = tile_attention_decode_paged(ctx, &pa);
    cr_assert_eq(st, TILE_OK, "%s: tile_attention_decode_paged: %s", what, tile_last_error(ctx));
    download(ctx, ho, dout, no * 2);
    double *ro = malloc(no * sizeof(double));
    ref_paged_args ra = {.num_seqs = S, .heads_q = Hq, .heads_kv = Hk, .head_dim = D, .num_tokens = T, .block_size = bs,
                         .num_blocks = num_blocks, .q = rq, .q_stride = {(int64_t)T * Hq * D, (int64_t)Hq * D, D}, .o = ro,
                         .o_stride = {(int64_t)T * Hq * D, (int64_t)Hq * D, D}, .k_cache = rk, .v_cache = rv,
                         .k_stride = {(int64_t)bs * Hk * D, (int64_t)Hk * D, D}, .v_stride = {(int64_t)bs * Hk * D, (int64_t)Hk * D, D},
                         .block_tables = table, .block_table_stride = sbt, .context_lens = ctxlen};
    cr_assert(ref_paged_decode(&ra), "ref_paged_decode rejected the case");
    double tol = c->dt == TILE_F16 ? 2e-3 : 1.6e-2;
    for (size_t i = 0; i < no; i++) {
        double got = from_dt(c->dt, ho[i]);
        cr_assert(fabs(got - ro[i]) <= tol, "%s: O[seq %zu, token %zu, head %zu, dim %zu] = %.6g, want %.6g (seed %llu)", what,
                  i / ((size_t)T * Hq * D), i / ((size_t)Hq * D) % T, i / D % Hq, i % D, got, ro[i], (unsigned long long)seed);
    }
    tile_devptr bufs[] = {dcs, dkc, dvc, dq_step, dout, dtable, dlens};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) tile_free(ctx, bufs[i]);
    free(perm), free(table), free(csv), free(hcs), free(poison), free(rk), free(rv), free(rq), free(ho), free(ro);
}

Test(rope, end_to_end_decode, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    run_e2e(ctx, &(E2eCase){TILE_F16, TILE_ROPE_NEOX, 4, 2, 64, 0, 16, 1, false});
    run_e2e(ctx, &(E2eCase){TILE_BF16, TILE_ROPE_GPTJ, 3, 1, 80, 40, 32, 2, false});
    run_e2e(ctx, &(E2eCase){TILE_F16, TILE_ROPE_NEOX, 4, 2, 128, 64, 16, 1, true});
    tile_context_destroy(ctx);
}

/* ref_round_f8e4m3 (what tile run layer's reference stores for an f8 cache) against the encoder above */
Test(rope, ref_round_f8e4m3) {
    seed_rng();
    for (int c = 0; c < 256; c++) { /* every code, the midpoints to its neighbour and just off them */
        double v = f8e4m3_to_d((uint8_t)c), w = f8e4m3_to_d((uint8_t)(c + 1));
        if (isnan(v)) continue;
        double xs[4] = {v, (v + w) / 2, nextafter((v + w) / 2, INFINITY), nextafter((v + w) / 2, -INFINITY)};
        for (int i = 0; i < (isnan(w) || (c & 0x7f) == 0x7f ? 1 : 4); i++)
            cr_assert_eq(ref_round_f8e4m3(xs[i]), f8e4m3_to_d(f8_encode(xs[i])), "x = %a", xs[i]);
    }
    for (int i = 0; i < 4096; i++) {
        double x = urand() * ldexp(1, irand(30) - 15);
        cr_assert_eq(ref_round_f8e4m3(x), f8e4m3_to_d(f8_encode(x)), "x = %a (seed %llu)", x, (unsigned long long)seed);
    }
    cr_assert_eq(ref_round_f8e4m3(1e6), 448);
    cr_assert_eq(ref_round_f8e4m3(-500), -448);
    cr_assert(isnan(ref_round_f8e4m3(NAN)));
}

/* ======================= graph safety ======================= */

/* After tile_rope_kv_append_prepare the call allocates, frees, synchronizes and loads nothing (docs/runtime.md,
 * "Capturing in a CUDA graph"); prepare reads no pointer; check_indices synchronizes. */
Test(rope, prepared_call_is_graph_safe, .timeout = 300) {
    tile_context *ctx = open_ctx();
    tile_devptr buf, idx, cache;
    cr_assert_eq(tile_malloc(ctx, 8192, &buf), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 64, &idx), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 16384, &cache), TILE_OK);
    int32_t h_idx[8] = {3, 1, 4, 1, 0, 2, -1, 9}; /* positions, then slots (i32) */
    cr_assert_eq(tile_memcpy_htod(ctx, idx, h_idx, sizeof h_idx), TILE_OK);
    cr_assert_eq(tile_memset(ctx, buf, 0, 8192), TILE_OK);
    tile_rope_args a = {.dtype = TILE_BF16, .tokens = 4, .heads_q = 2, .heads_kv = 1, .head_dim = 64, .q = buf, .k = buf + 1024,
                        .v = buf + 1536, .positions = idx, .positions_dtype = TILE_I32, .cos_sin = buf + 2048, .max_position = 8,
                        .k_cache = cache, .v_cache = cache + 8192, .num_blocks = 2, .block_size = 16, .slot_mapping = idx + 16,
                        .slot_dtype = TILE_I32};
    tile_rope_args garbage = a;
    garbage.q = 0xdead0000, garbage.k = 0xbeef0000, garbage.v_cache = 0, garbage.positions = 0x10; /* not read by prepare */
    cr_assert_eq(tile_rope_kv_append_prepare(ctx, &garbage), TILE_OK, "%s", tile_last_error(ctx));
    tile_context_stats s0, s1;
    cr_assert_eq(tile_context_get_stats_ex(ctx, &s0, sizeof s0), TILE_OK);
    cr_assert_eq(s0.launches, 0, "preparing launched something");
    for (int rep = 0; rep < 3; rep++) cr_assert_eq(tile_rope_kv_append(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_context_get_stats_ex(ctx, &s1, sizeof s1), TILE_OK);
    cr_expect_eq(s1.launches - s0.launches, 3);
    cr_expect(s1.allocations == s0.allocations && s1.frees == s0.frees && s1.synchronizations == s0.synchronizations,
              "allocations %llu, frees %llu, synchronizations %llu", (unsigned long long)(s1.allocations - s0.allocations),
              (unsigned long long)(s1.frees - s0.frees), (unsigned long long)(s1.synchronizations - s0.synchronizations));
    cr_expect(s1.compiles == s0.compiles && s1.disk_hits == s0.disk_hits && s1.memory_hits == s0.memory_hits, "the prepared call loaded a module");
    a.check_indices = 1;
    cr_assert_eq(tile_rope_kv_append(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_context_get_stats_ex(ctx, &s0, sizeof s0), TILE_OK);
    cr_expect_gt(s0.synchronizations, s1.synchronizations, "check_indices must synchronize (it reads the indices back)");
    tile_free(ctx, buf), tile_free(ctx, idx), tile_free(ctx, cache);
    tile_context_destroy(ctx);
}

/* ======================= argument checks ======================= */

static void expect_fail(tile_context *ctx, tile_status st, const char *needle) {
    cr_assert_eq(st, TILE_ERROR_INVALID_VALUE, "status %d; expected an error containing \"%s\"", (int)st, needle);
    cr_assert(strstr(tile_last_error(ctx), needle), "message \"%s\" lacks \"%s\"", tile_last_error(ctx), needle);
    cr_assert(strstr(tile_last_error(ctx), "tile_rope_kv_append"), "message \"%s\" does not name the call", tile_last_error(ctx));
}

Test(rope, argument_checks) {
    tile_context *ctx = open_ctx();
    tile_devptr buf, idx, cache;
    cr_assert_eq(tile_malloc(ctx, 8192, &buf), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 64, &idx), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 16384, &cache), TILE_OK);
    int64_t ok_idx[8] = {0, 1, 2, 3, 0, 1, 2, 3};
    cr_assert_eq(tile_memcpy_htod(ctx, idx, ok_idx, sizeof ok_idx), TILE_OK);
    /* 4 tokens, 2 + 1 heads of 64: q 1 KiB, k and v 512 B; cos_sin f32 [8, 64]: 2 KiB; caches [2, 16, 1, 64] f16: 4 KiB,
     * V's the last 4 KiB of its allocation; positions and slots i64 [4] */
    tile_rope_args good = {.dtype = TILE_F16, .tokens = 4, .heads_q = 2, .heads_kv = 1, .head_dim = 64, .q = buf, .k = buf + 1024,
                           .v = buf + 1536, .positions = idx, .cos_sin = buf + 2048, .max_position = 8, .k_cache = cache,
                           .v_cache = cache + 12288, .num_blocks = 2, .block_size = 16, .slot_mapping = idx + 32};
    cr_assert_eq(tile_rope_kv_append(ctx, &good), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_rope_kv_append_prepare(ctx, &good), TILE_OK, "%s", tile_last_error(ctx));
    tile_rope_args a = good;
    a.dtype = TILE_F32;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "dtype must be");
    a = good, a.style = 2;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "style = 2");
    a = good, a.head_dim = 258;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "head_dim = 258");
    a = good, a.rot_dim = 33;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "rot_dim = 33");
    a = good, a.rot_dim = 66;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "rot_dim = 66");
    /* rot_dim 0 (the whole head) with an odd head_dim: the message says why 0 does not do here */
    a = good, a.head_dim = 63, a.rot_dim = 0;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "head_dim = 63, which is odd");
    a = good, a.heads_kv = 0;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "heads_q and heads_kv");
    a = good, a.tokens = -1;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "tokens = -1");
    a = good, a.ldq = 100;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "ldq = 100 is shorter than its row of");
    a = good, a.ldk_out = (int64_t)1 << 31; /* the message names the stride */
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "ldk_out = 2147483648 is 2^31 or more");
    a = good, a.positions_dtype = TILE_I16;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "positions_dtype");
    a = good, a.slot_dtype = TILE_F16;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "slot_dtype");
    a = good, a.cos_sin_dtype = TILE_BF16;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "cos_sin_dtype");
    a = good, a.kv_dtype = TILE_F8E5M2;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "kv_dtype");
    a = good, a.k_scales = idx;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "go together");
    a = good, a.k_scales = idx, a.v_scales = idx;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "for an f8e4m3 cache");
    a = good, a.kv_dtype = TILE_F8E4M3, a.k_scale = INFINITY;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "k_scale = inf: a scale is a finite positive number (0 means 1)");
    a = good, a.kv_dtype = TILE_F8E4M3, a.v_scale = -0.25f; /* codes of -x / 0.25: the cache held every V negated */
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "v_scale = -0.25: a scale");
    a = good, a.kv_dtype = TILE_F8E4M3, a.k_scale = NAN;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "k_scale = nan: a scale");
    /* scales quantize into f8 codes: with a 16-bit cache one other than 0 or 1 is refused (it was ignored) */
    a = good, a.k_scale = 0.5f;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "apply to an f8e4m3 cache only");
    a = good, a.v_scale = 3;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "apply to an f8e4m3 cache only");
    a = good, a.block_size = 0;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "block_size");
    a = good, a.max_position = 0;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "max_position");
    a = good, a.k_stride[0] = -1;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "cache strides");
    a = good, a.check_indices = 2;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "check_indices = 2");
    a = good, a.q = buf + 1;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "not aligned");
    a = good, a.tokens = 9; /* q, k, v still fit; positions (72 bytes) do not */
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "positions");
    a = good, a.max_position = 30; /* cos_sin 30 x 64 x 4 bytes from 2048 pass the end of 8192 */
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "cos_sin");
    a = good, a.num_blocks = 3;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "v_cache");
    a = good, a.q_out = buf + 8000;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "q_out");
    a = good, a.positions = idx + 4, a.positions_dtype = TILE_I64;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "positions");
    /* what the programs write shares no byte with what others read or write: q_out over half of q, k_out over v,
     * q and k in place over each other, a cache over q, cos_sin in k (rotated in place) are refused (they ran, with
     * results depending on the programs' order); separate outputs, and q, k, v as interleaved columns of one buffer
     * (in place), pass */
    a = good, a.q_out = buf + 512;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "q_out (0x");
    cr_assert(strstr(tile_last_error(ctx), "shares bytes with q (0x"), "%s", tile_last_error(ctx));
    a = good, a.k_out = buf + 1536;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "shares bytes with v (0x");
    a = good, a.k = buf + 256;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "rotated in place");
    a = good, a.k_cache = buf;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "k_cache (0x");
    a = good, a.cos_sin = buf + 1024;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "shares bytes with cos_sin (0x");
    a = good, a.slot_mapping = buf + 1104; /* in k */
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "shares bytes with slot_mapping (0x");
    a = good, a.q_out = buf + 4096, a.k_out = buf + 5120;
    cr_assert_eq(tile_rope_kv_append(ctx, &a), TILE_OK, "separate outputs: %s", tile_last_error(ctx));
    a = good, a.q_out = buf, a.k_out = buf + 1024; /* the same pointers: in place */
    cr_assert_eq(tile_rope_kv_append(ctx, &a), TILE_OK, "q_out = q: %s", tile_last_error(ctx));
    a = good, a.ldq = a.ldk = a.ldv = 256, a.k = buf + 256, a.v = buf + 384; /* [4 tokens, q 128 | k 64 | v 64] */
    cr_assert_eq(tile_rope_kv_append(ctx, &a), TILE_OK, "interleaved q, k, v: %s", tile_last_error(ctx));
    /* the caches: the same memory, or K and V slots overlapping, are refused; K and V interleaved slot by slot
     * ([2 blocks, 16 slots, K | V, 64]) pass; with cos 1 and sin 0 K's slots hold k and V's v, the rest untouched */
    a = good, a.v_cache = cache;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "v_cache (0x");
    cr_assert(strstr(tile_last_error(ctx), "shares bytes with k_cache (0x"), "%s", tile_last_error(ctx));
    a = good, a.v_cache = cache + 64;
    for (int i = 0; i < 3; i++) a.k_stride[i] = a.v_stride[i] = (int64_t[]){2048, 128, 64}[i];
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "shares bytes with k_cache (0x");
    a.v_cache = cache + 128;
    uint16_t hv[256], *hc = malloc(16384);
    for (int i = 0; i < 256; i++) hv[i] = (uint16_t)(0x3c00 + 3 * i); /* f16 1.0 and up */
    for (int i = 0; i < 8192; i++) hc[i] = 0xffff;
    float hcs[8 * 64];
    for (int i = 0; i < 8 * 64; i++) hcs[i] = i % 64 < 32 ? 1.0f : 0.0f;
    cr_assert_eq(tile_memcpy_htod(ctx, buf + 1536, hv, sizeof hv), TILE_OK);
    for (int i = 0; i < 256; i++) hv[i] ^= 0x8000; /* k: the negatives */
    cr_assert_eq(tile_memcpy_htod(ctx, buf + 1024, hv, sizeof hv), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, buf + 2048, hcs, sizeof hcs), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, cache, hc, 16384), TILE_OK);
    cr_assert_eq(tile_rope_kv_append(ctx, &a), TILE_OK, "K and V interleaved by slot: %s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, hc, cache, 16384), TILE_OK);
    for (int t = 0; t < 4; t++)
        for (int d = 0; d < 64; d++) {
            uint16_t v = hv[t * 64 + d] ^ 0x8000, k = hv[t * 64 + d];
            cr_assert_eq(hc[t * 128 + 64 + d], v, "interleaved caches: V of token %d dim %d: 0x%04x, want 0x%04x", t, d, hc[t * 128 + 64 + d], v);
            cr_assert_eq(hc[t * 128 + d], k, "interleaved caches: K of token %d dim %d: 0x%04x, want 0x%04x", t, d, hc[t * 128 + d], k);
        }
    for (int i = 4 * 128; i < 8192; i++) cr_assert_eq(hc[i], 0xffff, "interleaved caches: element %d past the 4 tokens' slots written", i);
    free(hc);
    a = good, a.size = 3;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "size");
    a = good, a.size = (size_t)1 << 20;
    expect_fail(ctx, tile_rope_kv_append(ctx, &a), "size");
    a = good, a.size = offsetof(tile_rope_args, check_indices), a.check_indices = 2; /* an older caller's struct: the field reads as 0 */
    cr_assert_eq(tile_rope_kv_append(ctx, &a), TILE_OK, "older size: %s", tile_last_error(ctx));
    a = good, a.tokens = 0, a.q = 0;
    cr_assert_eq(tile_rope_kv_append(ctx, &a), TILE_OK, "no tokens: nothing to do: %s", tile_last_error(ctx));

    /* check_indices: a position past the table, a slot past the cache, a slot twice */
    int64_t bad[4][8] = {{0, 1, 2, 8, 0, 1, 2, 3}, {0, 1, 2, 3, 0, 1, 32, 3}, {0, 1, 2, 3, 0, 5, 5, -1}, {7, 0, 1, 2, -1, -1, 31, 0}};
    static const char *const why[4] = {"positions[3] = 8", "slot_mapping[2] = 32", "slot 5 appears twice", NULL};
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(tile_memcpy_htod(ctx, idx, bad[i], sizeof bad[i]), TILE_OK);
        a = good, a.check_indices = 1;
        if (why[i]) expect_fail(ctx, tile_rope_kv_append(ctx, &a), why[i]);
        else cr_assert_eq(tile_rope_kv_append(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    }
    tile_free(ctx, buf), tile_free(ctx, idx), tile_free(ctx, cache);
    tile_context_destroy(ctx);
}

/* ======================= CLI: tile run rope, tile run layer ======================= */

/* The command's stdout; its exit status in *status */
static char *run_cli(const char *args, int *status) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>/dev/null", TILE_CLI, args);
    FILE *f = popen(cmd, "r");
    cr_assert(f, "popen %s", cmd);
    size_t cap = 1 << 16, n = 0;
    char *out = malloc(cap);
    size_t got;
    while ((got = fread(out + n, 1, cap - 1 - n, f)) > 0) n += got;
    out[n] = 0;
    *status = pclose(f);
    return out;
}

Test(rope, cli_run_rope, .timeout = 300) {
    static const char *const args[] = {
        "run rope --device emu --tokens 19 --heads-q 6 --heads-kv 2 --head-dim 64 --reps 1",
        "run rope --device emu --tokens 9 --heads-q 3 --heads-kv 1 --head-dim 80 --rot-dim 40 --style gptj --dtype f16 --kv-dtype f8e4m3 "
        "--block-size 5 --reps 1 --json",
    };
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
        int status;
        char *out = run_cli(args[i], &status);
        cr_expect_eq(status, 0, "tile %s: status %d:\n%s", args[i], status, out);
        cr_expect(strstr(out, i ? "\"ok\":true" : ": ok"), "tile %s:\n%s", args[i], out);
        free(out);
    }
    int status;
    free(run_cli("run rope --device emu --rot-dim 3", &status));
    cr_expect_eq(WEXITSTATUS(status), 2, "an odd --rot-dim is a usage error");
}

/* The whole decoder layer from the C API (tools/cmd_run_layer.c): the dense MLP with one decode token
 * per step (bf16; f16 with an f8 KV cache, odd sizes), the MoE block with three (speculative decoding),
 * every step checked by the command against float64 and every decode step for graph safety */
Test(rope, cli_run_layer, .timeout = 600) {
    static const char *const args[] = {
        "run layer --device emu --hidden 128 --heads 4 --heads-kv 2 --head-dim 32 --inter 192 --prompts 3 --steps 2",
        "run layer --device emu --hidden 96 --heads 3 --heads-kv 1 --head-dim 48 --inter 160 --prompts 2 --steps 2 --dtype f16 "
        "--kv-dtype f8e4m3 --block-size 32",
        "run layer --device emu --hidden 128 --heads 4 --heads-kv 1 --head-dim 64 --inter 64 --prompts 2 --steps 2 --moe --experts 6 "
        "--topk 2 --spec-tokens 3 --dtype f16 --json",
    };
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
        int status;
        char *out = run_cli(args[i], &status);
        cr_expect_eq(status, 0, "tile %s: status %d:\n%s", args[i], status, out);
        bool json = strstr(args[i], "--json") != NULL;
        cr_expect(strstr(out, json ? "\"ok\":true" : "every decode step graph-safe: ok"), "tile %s:\n%s", args[i], out);
        cr_expect(strstr(out, json ? "\"graph_safe\":true" : "; graph-safe"), "tile %s:\n%s", args[i], out);
        free(out);
    }
}
