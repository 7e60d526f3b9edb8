/* run_check.c - random inputs and the checks of `tile run` (see run_check.h).
 *
 * Tolerances:
 *   GEMM       |got - want| <= tol_rel * sum|a*b| + out_rel * |want| + 1e-5,
 *              tol_rel 4e-3 for tf32 inputs (f32 on tensor cores), else 1e-5;
 *              out_rel the rounding of an f16 (2^-10) or bf16 (2^-7) output.
 *   attention  absolute, 2e-3 (f16) or 1.6e-2 (bf16), on outputs of size ~1.
 *   MoE        (rounding of the activation type + 3e-5) * sum|terms| + 1e-6
 *              per output, the terms weighted as the output is.
 *   norm, act  half a step of the output (exact: i8 scale / 2, half an ulp of
 *              the f8 code or 16-bit value) + 1e-4 |y| + 2e-6; what lies past
 *              the half step is reported, as a fraction of the rest.
 * The references are ref/'s, from the exact values of the inputs as stored
 * (after rounding to the device type, f8 codes times scales); a check that
 * samples rows (attention, decode, MoE) asks ref/ for those rows only. */
#include "tools/run_check.h"
#include "ref/ref.h"
#include "support/hostfloat.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- random inputs ---- */
void check_rng_init(CheckRng *r) { r->s = 0x9e3779b97f4a7c15ull; }

double check_urand(CheckRng *r) {
    r->s ^= r->s << 13, r->s ^= r->s >> 7, r->s ^= r->s << 17;
    return (double)(r->s >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

uint8_t check_rng_byte(CheckRng *r) {
    check_urand(r);
    return (uint8_t)(r->s >> 24);
}


double check_fill(tile_dtype t, void *buf, size_t i, double v) {
    switch (t) {
    case TILE_F16: return f16_to_d(((uint16_t *)buf)[i] = f32_to_f16((float)v));
    case TILE_BF16: return bf16_to_d(((uint16_t *)buf)[i] = f32_to_bf16((float)v));
    case TILE_I8: return ((int8_t *)buf)[i] = (int8_t)floor(v * 100);
    case TILE_I32: return ((int32_t *)buf)[i] = (int32_t)floor(v * 100);
    case TILE_F32: return ((float *)buf)[i] = (float)v;
    case TILE_F8E4M3: return f8e4m3_to_d(((uint8_t *)buf)[i] = d_to_f8(v, 0));
    case TILE_F8E5M2: return f8e5m2_to_d(((uint8_t *)buf)[i] = d_to_f8(v, 1));
    default: return NAN; /* a type no `tile run` command fills: the check fails */
    }
}

double check_get(tile_dtype t, const void *buf, size_t i) {
    switch (t) {
    case TILE_F16: return f16_to_d(((const uint16_t *)buf)[i]);
    case TILE_BF16: return bf16_to_d(((const uint16_t *)buf)[i]);
    case TILE_I32: return ((const int32_t *)buf)[i];
    case TILE_F32: return ((const float *)buf)[i];
    default: return NAN; /* a type no `tile run` command reads: the check fails */
    }
}

/* ---- GEMM ---- */
double check_gemm(const CheckGemm *g, const void *c) {
    double worst = 0, tol_rel = g->in == TILE_F32 ? 4e-3 : 1e-5;
    double out_rel = g->out == TILE_F16 ? 1.0 / 1024 : g->out == TILE_BF16 ? 1.0 / 128 : 0;
    ref_gemm_args r = {.m = g->m, .n = g->n, .k = g->k, .a = g->a, .lda = g->trans_a ? g->m : g->k, .trans_a = g->trans_a, .b = g->b,
                       .ldb = g->trans_b ? g->k : g->n, .trans_b = g->trans_b, .alpha = 1, .beta = 0};
    for (int64_t i = 0; i < g->m; i++)
        for (int64_t j = 0; j < g->n; j++) {
            double mag, want = ref_gemm_at(&r, i, j, &mag);
            double got = check_get(g->out, c, (size_t)(i * g->n + j));
            double e = fabs(got - want) / (tol_rel * mag + out_rel * fabs(want) + 1e-5);
            if (!(e <= worst)) worst = e; /* NaN counts as worst */
        }
    return worst;
}

/* ---- attention ---- */
double check_attention_tolerance(tile_dtype t) { return t == TILE_F16 ? 2e-3 : 1.6e-2; }

/* max |got - want| over a row of d elements of `o` (type t) from element off */
static double row_error(tile_dtype t, const void *o, size_t off, const double *want, int64_t d) {
    double worst = 0;
    for (int64_t i = 0; i < d; i++) {
        double e = fabs(check_get(t, o, off + (size_t)i) - want[i]);
        if (!(e <= worst)) worst = e; /* NaN counts as worst */
    }
    return worst;
}

/* K and V rows of one (sequence, KV head) for ref_attention_row: row j at base + j * step */
typedef struct KvRows {
    const double *k, *v;
    int64_t step;
} KvRows;

static const double *kv_row(void *user, int64_t j, int value) {
    const KvRows *r = user;
    return (value ? r->v : r->k) + j * r->step;
}

double check_attention(const CheckAttention *a, const void *o, int64_t *checked) {
    int64_t B = a->batch, Sq = a->seq_q, Sk = a->seq_k, H = a->heads, Hk = a->heads_kv, D = a->head_dim;
    double *want = malloc(sizeof(double) * (size_t)D);
    *checked = 0;
    if (!want) return INFINITY;
    /* at most 256 rows spread over the batch, heads and sequence */
    int64_t rows = B * H * Sq, step = rows > 256 ? rows / 256 : 1;
    double worst = 0;
    for (int64_t r = 0; r < rows; r += step, (*checked)++) {
        int64_t b = r / (H * Sq), h = r / Sq % H, i = r % Sq, g = h / (H / Hk), begin, end;
        KvRows kv = {a->k + (b * Sk * Hk + g) * D, a->v + (b * Sk * Hk + g) * D, Hk * D};
        size_t off = (size_t)(((b * Sq + i) * H + h) * D);
        ref_attention_keys(i, Sq, Sk, a->causal, -1, -1, &begin, &end);
        ref_attention_row(D, a->q + off, 1.0 / sqrt((double)D), begin, end, kv_row, &kv, want);
        double e = row_error(a->dtype, o, off, want, D);
        if (!(e <= worst)) worst = e;
    }
    free(want);
    return worst;
}

double check_decode(const CheckDecode *a, const void *o, int64_t *checked) {
    int64_t S = a->seqs, T = a->tokens, H = a->heads, D = a->head_dim;
    double *want = malloc(sizeof(double) * (size_t)D);
    *checked = 0;
    if (!want) return INFINITY;
    ref_paged_args p = {.num_seqs = S, .heads_q = H, .heads_kv = a->heads_kv, .head_dim = D, .num_tokens = T, .block_size = a->block_size,
                        .num_blocks = a->num_blocks, .q = a->q, .k_cache = a->k, .v_cache = a->v, .k_scale = a->k_scale,
                        .v_scale = a->v_scale, .block_tables = a->table, .block_table_stride = a->table_stride, .context_lens = a->lens,
                        .tree_mask = a->tree_mask};
    int64_t rows = S * T * H, step = rows > 256 ? rows / 256 : 1;
    double worst = 0;
    for (int64_t r = 0; r < rows; r += step, (*checked)++) {
        int64_t s = r / (T * H), t = r / H % T, h = r % H;
        if (!ref_paged_decode_row(&p, s, t, h, want)) {
            worst = INFINITY; /* the command's own table or lengths are wrong */
            break;
        }
        double e = row_error(a->dtype, o, (size_t)(((s * T + t) * H + h) * D), want, D);
        if (!(e <= worst)) worst = e;
    }
    free(want);
    return worst;
}

/* ---- mixture of experts ---- */
int check_moe_weights_make(CheckMoeWeights *m, CheckRng *r, tile_dtype t, tile_moe_scales sc, int64_t E, int64_t R, int64_t C,
                           int64_t seg, double amp) {
    *m = (CheckMoeWeights){.n = (size_t)(E * R * C), .R = R, .C = C, .seg = seg, .t = t, .sc = sc};
    m->ns = t != TILE_F8E4M3 ? 0 : (size_t)ref_moe_scale_count(sc, E, R, C, seg);
    m->w = malloc(m->n * (t == TILE_F8E4M3 ? 1 : 2));
    m->s = malloc(sizeof(float) * (m->ns ? m->ns : 1));
    if (!m->w || !m->s) return 3;
    if (t != TILE_F8E4M3) {
        for (size_t i = 0; i < m->n; i++) check_fill(t, m->w, i, check_urand(r) * amp);
        return 0;
    }
    for (size_t i = 0; i < m->ns; i++) m->s[i] = (float)(amp / 448 * (1 + 0.5 * check_urand(r)));
    uint8_t *q = m->w;
    for (size_t i = 0; i < m->n; i++) {
        uint8_t c;
        do c = check_rng_byte(r);
        while ((c & 0x7f) == 0x7f); /* NaN */
        q[i] = c;
    }
    return 0;
}

double check_moe_weight(const CheckMoeWeights *m, int64_t e, int64_t r, int64_t c) {
    size_t i = (size_t)((e * m->R + r) * m->C + c);
    if (m->t != TILE_F8E4M3) return check_get(m->t, m->w, i);
    size_t si = (size_t)ref_moe_scale_index(m->sc, m->R, m->C, m->seg, e, r, c);
    return f8e4m3_to_d(((const uint8_t *)m->w)[i]) * (double)m->s[si];
}

void check_moe_weights_free(CheckMoeWeights *m) { free(m->w), free(m->s); }

/* W1 and W2 rows for ref_moe_token, dequantized into one scratch row */
typedef struct MoeRows {
    const CheckMoeWeights *w1, *w2;
    double *row;
} MoeRows;

static const double *moe_row(void *user, int which, int64_t e, int64_t r) {
    const MoeRows *m = user;
    const CheckMoeWeights *w = which == 1 ? m->w1 : m->w2;
    for (int64_t c = 0; c < w->C; c++) m->row[c] = check_moe_weight(w, e, r, c);
    return m->row;
}

/* The device's routing of one token against ref_moe_route's: each of its ids
 * must take a distinct rank whose expert has the same logit (so an exact tie
 * may name another expert, and the order is free); its slot then gets that
 * rank's weight.  False when the ids are not a top-k. */
static bool moe_match_routing(int64_t E, int64_t K, const double *l, const int32_t *ids, const int32_t *ref_ids, const double *ref_w,
                              double *w, bool *taken) {
    memset(taken, 0, sizeof(bool) * (size_t)K);
    for (int64_t j = 0; j < K; j++) {
        int64_t r = 0;
        if (ids[j] < 0 || ids[j] >= E) return false;
        while (r < K && (taken[r] || l[ref_ids[r]] != l[ids[j]])) r++;
        if (r == K) return false;
        taken[r] = true, w[j] = ref_w[r];
    }
    return true;
}

double check_moe(const CheckMoe *m, const int32_t *ids, const float *out, int *routing_ok, int64_t *checked) {
    int64_t T = m->tokens, E = m->experts, K = m->topk, H = m->hidden, I = m->inter;
    /* at most check_tokens tokens spread over the batch: the routing must be
     * a top-k of the logits, its weights the renormalized softmax, and the
     * output the float64 forward from the (dequantized) weights */
    int64_t step = (T + m->check_tokens - 1) / m->check_tokens;
    double worst = 0, rnd = m->act == TILE_F16 ? 1.0 / 2048 : 1.0 / 256;
    double *l = malloc(sizeof(double) * (size_t)E), *ref_w = malloc(sizeof(double) * (size_t)K), *w = malloc(sizeof(double) * (size_t)K);
    double *want = malloc(sizeof(double) * (size_t)H), *mag = malloc(sizeof(double) * (size_t)H);
    double *row = malloc(sizeof(double) * (size_t)(H > I ? H : I));
    int32_t *ref_ids = malloc(sizeof(int32_t) * (size_t)K);
    bool *taken = malloc(sizeof(bool) * (size_t)K);
    bool ok = l && ref_w && w && want && mag && row && ref_ids && taken; /* false: out of memory, or ref/ refused the sizes */
    *routing_ok = 1, *checked = 0;
    ref_moe_router router = {.experts = E, .topk = K, .scoring = TILE_MOE_SOFTMAX, .renormalize = true};
    MoeRows rows = {m->w1, m->w2, row};
    for (int64_t t = 0; t < T && ok; t += step, (*checked)++) {
        for (int64_t e = 0; e < E; e++) l[e] = m->logits[t * E + e];
        if (!(ok = ref_moe_route(&router, l, ref_ids, ref_w, NULL))) break;
        if (!moe_match_routing(E, K, l, ids + t * K, ref_ids, ref_w, w, taken)) {
            *routing_ok = 0;
            break;
        }
        /* the device's ids in its order, one token */
        ref_moe_args a = {.tokens = 1, .hidden = H, .inter = I, .experts = E, .topk = K, .x = m->x + t * H, .weight_row = moe_row,
                          .user = &rows, .topk_ids = ids + t * K, .topk_weights = w};
        memset(want, 0, sizeof(double) * (size_t)H), memset(mag, 0, sizeof(double) * (size_t)H);
        if (!(ok = ref_moe_token(&a, 0, want, mag))) break;
        for (int64_t c = 0; c < H; c++) {
            double e = fabs(out[t * H + c] - want[c]) / ((rnd + 3e-5) * mag[c] + 1e-6);
            if (!(e <= worst)) worst = e;
        }
    }
    free(l), free(ref_w), free(w), free(want), free(mag), free(row), free(ref_ids), free(taken);
    return *routing_ok && ok ? worst : INFINITY;
}

/* ---- RMSNorm and gated activations ---- */
/* Half the spacing of out's values around magnitude v: the most that rounding to the nearest one moves a value.
 * i8 codes times the scale s: s / 2, the same everywhere.  f8e4m3 codes (4 significant bits) times s, f16 (11) and
 * bf16 (8): half an ulp of the binade holding v (of v / s for f8), the subnormals' below the smallest normal
 * binade (2^-6 for e4m3, 2^-14 for f16; bf16's is f32's, 2^-126). */
static double rows_half_step(const CheckRows *c, double v, double s) {
    if (c->quant == TILE_I8) return s / 2;
    bool q8 = c->quant == TILE_F8E4M3;
    int bits = q8 ? 4 : c->dtype == TILE_F16 ? 11 : 8, emin = q8 ? -6 : c->dtype == TILE_F16 ? -14 : -126, e;
    double m = q8 ? v / s : v;
    frexp(m, &e); /* m = f 2^e, f in [0.5, 1): the binade [2^(e-1), 2^e) */
    int k = m > 0 && e - 1 > emin ? e - 1 : emin;
    return ldexp(1.0, k - bits) * (q8 ? s : 1);
}

/* The error of row t of out, whose float64 values are y, as a fraction of the f32 arithmetic's allowance.
 * The kernels compute y in f32 from exactly widened inputs (and y / scale, quantized) and round once to
 * the nearest output value, so |out - y| <= half a step of the output (rows_half_step, taken at |y| plus the
 * allowance: the f32 value may sit in the binade above) + the allowance, 1e-4 |y| for the f32 arithmetic
 * (rsqrt, exp and the division by the scale are within a few f32 ulps, 2^-24 each) and 2e-6 absolute
 * (erf's formula, 1.5e-7, times 0.5 |gate up| <= 8).  The half step is exact, the output's definition, not
 * an error: only what lies past it is measured, (|out - y| - half step) / allowance, 0 for an output within
 * its rounding, so a correct kernel's margin shows (an i8 code that rounds y / scale = 0.5 to 0 or 1 is
 * exact, not at 0.9999 of a tolerance that was mostly the half step).  Quantized, each scale is checked
 * against ref_quant_scale of the row's (group's) f64 amax, |s - ref| / (1e-4 ref).  > 1 fails, NaN counts
 * as worst. */
static double rows_row_error(const CheckRows *c, const double *y, const void *out, const float *scales, int64_t t) {
    double worst = 0;
    bool q8 = c->quant == TILE_F8E4M3, qi = c->quant == TILE_I8;
    int64_t gw = c->group > 0 ? c->group : c->n, ng = (c->n + gw - 1) / gw;
    for (int64_t g = 0; g < ng; g++) {
        int64_t lo = g * gw, hi = lo + gw < c->n ? lo + gw : c->n;
        double s = 0;
        if (q8 || qi) {
            double amax = 0;
            for (int64_t i = lo; i < hi; i++) amax = fmax(amax, fabs(y[i]));
            double ws = ref_quant_scale(amax, qi ? 127 : 448);
            s = scales[t * ng + g];
            double e = fabs(s - ws) / (1e-4 * ws);
            if (!(e <= 1e300)) return INFINITY;
            if (e > worst) worst = e;
        }
        for (int64_t i = lo; i < hi; i++) {
            size_t k = (size_t)(t * c->n + i);
            double got, a = fabs(y[i]), allow = 1e-4 * a + 2e-6;
            if (qi) got = ((const int8_t *)out)[k] * s;
            else if (q8) got = f8e4m3_to_d(((const uint8_t *)out)[k]) * s;
            else got = check_get(c->dtype, out, k);
            double past = fabs(got - y[i]) - rows_half_step(c, a + allow, s);
            double e = !(past <= 0) ? past / allow : 0;
            if (!(e <= worst)) worst = e; /* NaN counts as worst (past is NaN, so is e) */
        }
    }
    return worst;
}

double check_norm(const CheckRows *c, bool layer, const double *z, const double *w, const double *b, double eps, const void *out,
                  const float *scales) {
    double *y = malloc(sizeof(double) * (size_t)c->n), worst = 0;
    if (!y) return INFINITY;
    for (int64_t t = 0; t < c->tokens; t++) {
        if (layer) ref_layernorm(c->n, z + t * c->n, w, b, eps, y);
        else ref_rmsnorm(c->n, z + t * c->n, w, eps, y);
        double e = rows_row_error(c, y, out, scales, t);
        if (!(e <= worst)) worst = e;
    }
    free(y);
    return worst;
}

double check_gated(const CheckRows *c, tile_gated_act act, const double *x, const void *out, const float *scales) {
    double *y = malloc(sizeof(double) * (size_t)c->n), worst = 0;
    if (!y) return INFINITY;
    for (int64_t t = 0; t < c->tokens; t++) {
        const double *row = x + t * 2 * c->n;
        for (int64_t i = 0; i < c->n; i++) y[i] = ref_gated(act, row[i], row[c->n + i]);
        double e = rows_row_error(c, y, out, scales, t);
        if (!(e <= worst)) worst = e;
    }
    free(y);
    return worst;
}
