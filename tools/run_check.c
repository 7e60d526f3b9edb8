/* run_check.c - random inputs and float64 references (see run_check.h).
 *
 * Tolerances:
 *   GEMM       |got - want| <= tol_rel * sum|a*b| + out_rel * |want| + 1e-5,
 *              tol_rel 4e-3 for tf32 inputs (f32 on tensor cores), else 1e-5;
 *              out_rel the rounding of an f16 (2^-10) or bf16 (2^-7) output.
 *   attention  absolute, 2e-3 (f16) or 1.6e-2 (bf16), on outputs of size ~1.
 *   MoE        (rounding of the activation type + 3e-5) * sum|terms| + 1e-6
 *              per output, the terms weighted as the output is.
 * Each reference is computed in float64 from the exact values of the inputs
 * as stored (after rounding to the device type, f8 codes times scales). */
#include "tools/run_check.h"
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

int check_dtype_size(tile_dtype t) { return t == TILE_I8 ? 1 : t == TILE_F16 || t == TILE_BF16 ? 2 : 4; }

double check_fill(tile_dtype t, void *buf, size_t i, double v) {
    switch (t) {
    case TILE_F16: return f16_to_d(((uint16_t *)buf)[i] = f32_to_f16((float)v));
    case TILE_BF16: return bf16_to_d(((uint16_t *)buf)[i] = f32_to_bf16((float)v));
    case TILE_I8: return ((int8_t *)buf)[i] = (int8_t)floor(v * 100);
    case TILE_I32: return ((int32_t *)buf)[i] = (int32_t)floor(v * 100);
    default: return ((float *)buf)[i] = (float)v;
    }
}

double check_get(tile_dtype t, const void *buf, size_t i) {
    switch (t) {
    case TILE_F16: return f16_to_d(((const uint16_t *)buf)[i]);
    case TILE_BF16: return bf16_to_d(((const uint16_t *)buf)[i]);
    case TILE_I32: return ((const int32_t *)buf)[i];
    default: return ((const float *)buf)[i];
    }
}

double check_e4m3_value(uint8_t c) {
    int e = (c >> 3) & 15, m = c & 7;
    double v = e ? ldexp(8 + m, e - 10) : ldexp(m, -9);
    return (c & 0x80) ? -v : v;
}

/* ---- GEMM ---- */
double check_gemm(const CheckGemm *g, const void *c) {
    double worst = 0, tol_rel = g->in == TILE_F32 ? 4e-3 : 1e-5;
    double out_rel = g->out == TILE_F16 ? 1.0 / 1024 : g->out == TILE_BF16 ? 1.0 / 128 : 0;
    int64_t m = g->m, n = g->n, k = g->k;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0, mag = 0;
            for (int64_t q = 0; q < k; q++) {
                double x = g->trans_a ? g->a[q * m + i] : g->a[i * k + q], y = g->trans_b ? g->b[j * k + q] : g->b[q * n + j];
                s += x * y, mag += fabs(x * y);
            }
            double got = check_get(g->out, c, (size_t)(i * n + j));
            double tol = tol_rel * mag + out_rel * fabs(s) + 1e-5;
            double e = fabs(got - s) / tol;
            if (!(e <= worst)) worst = e; /* NaN counts as worst */
        }
    return worst;
}

/* ---- attention ---- */
double check_attention_tolerance(tile_dtype t) { return t == TILE_F16 ? 2e-3 : 1.6e-2; }

/* One output row against float64: q [D], keys and values through a callback
 * of position j (kv 0: key, 1: value); returns max |error|. */
typedef const double *(*RowFn)(const void *u, int64_t j, int kv);

static double row_error(const double *q, int64_t D, int64_t nkeys, double scale, RowFn row, const void *u, const double *got) {
    double mx = -INFINITY, l = 0, worst = 0;
    double *p = malloc(sizeof(double) * (size_t)(nkeys + 1));
    if (!p) return INFINITY;
    for (int64_t j = 0; j < nkeys; j++) {
        const double *k = row(u, j, 0);
        double s = 0;
        for (int64_t d = 0; d < D; d++) s += q[d] * k[d];
        p[j] = s * scale, mx = fmax(mx, p[j]);
    }
    for (int64_t j = 0; j < nkeys; j++) l += (p[j] = exp(p[j] - mx));
    for (int64_t d = 0; d < D; d++) {
        double want = 0;
        for (int64_t j = 0; j < nkeys; j++) want += p[j] * row(u, j, 1)[d];
        want = nkeys ? want / l : 0;
        double e = fabs(got[d] - want);
        if (!(e <= worst)) worst = e;
    }
    free(p);
    return worst;
}

typedef struct PrefillRows {
    const double *vk, *vv;
    int64_t b, g, S, Hk, D;
} PrefillRows;

static const double *prefill_row(const void *u, int64_t j, int kv) {
    const PrefillRows *r = u;
    return (kv ? r->vv : r->vk) + ((r->b * r->S + j) * r->Hk + r->g) * r->D;
}

double check_attention(const CheckAttention *a, const void *o, int64_t *checked) {
    int64_t B = a->batch, Sq = a->seq_q, Sk = a->seq_k, H = a->heads, Hk = a->heads_kv, D = a->head_dim;
    double *got = malloc(sizeof(double) * (size_t)D);
    *checked = 0;
    if (!got) return INFINITY;
    /* at most 256 rows spread over the batch, heads and sequence */
    int64_t rows = B * H * Sq, step = rows > 256 ? rows / 256 : 1;
    double worst = 0, scale = 1.0 / sqrt((double)D);
    for (int64_t r = 0; r < rows; r += step, (*checked)++) {
        int64_t b = r / (H * Sq), h = r / Sq % H, i = r % Sq;
        PrefillRows pr = {a->k, a->v, b, h / (H / Hk), Sk, Hk, D};
        int64_t nkeys = a->causal ? i + Sk - Sq + 1 : Sk;
        if (nkeys < 0) nkeys = 0;
        if (nkeys > Sk) nkeys = Sk;
        size_t off = (size_t)(((b * Sq + i) * H + h) * D);
        for (int64_t d = 0; d < D; d++) got[d] = check_get(a->dtype, o, off + (size_t)d);
        double e = row_error(a->q + off, D, nkeys, scale, prefill_row, &pr, got);
        if (!(e <= worst)) worst = e;
    }
    free(got);
    return worst;
}

typedef struct DecodeRows {
    const double *vk, *vv;
    const int32_t *table;
    int64_t s, g, sbt, bs, Hk, D;
} DecodeRows;

static const double *decode_row(const void *u, int64_t j, int kv) {
    const DecodeRows *r = u;
    int64_t blk = r->table[r->s * r->sbt + j / r->bs];
    return (kv ? r->vv : r->vk) + ((blk * r->bs + j % r->bs) * r->Hk + r->g) * r->D;
}

double check_decode(const CheckDecode *a, const void *o, int64_t *checked) {
    int64_t S = a->seqs, T = a->tokens, H = a->heads, Hk = a->heads_kv, D = a->head_dim;
    double *got = malloc(sizeof(double) * (size_t)D);
    *checked = 0;
    if (!got) return INFINITY;
    int64_t rows = S * T * H, step = rows > 256 ? rows / 256 : 1;
    double worst = 0, scale = 1.0 / sqrt((double)D);
    for (int64_t r = 0; r < rows; r += step, (*checked)++) {
        int64_t s = r / (T * H), t = r / H % T, h = r % H;
        DecodeRows dr = {a->k, a->v, a->table, s, h / (H / Hk), a->table_stride, a->block_size, Hk, D};
        size_t off = (size_t)(((s * T + t) * H + h) * D);
        for (int64_t d = 0; d < D; d++) got[d] = check_get(a->dtype, o, off + (size_t)d);
        /* token t sees the context up to and including itself */
        double e = row_error(a->q + off, D, a->context - T + t + 1, scale, decode_row, &dr, got);
        if (!(e <= worst)) worst = e;
    }
    free(got);
    return worst;
}

/* ---- mixture of experts ---- */
int check_moe_weights_make(CheckMoeWeights *m, CheckRng *r, tile_dtype t, tile_moe_scales sc, int64_t E, int64_t R, int64_t C,
                           int64_t seg, double amp) {
    *m = (CheckMoeWeights){.n = (size_t)(E * R * C), .R = R, .C = C, .seg = seg, .rbs = (seg + 127) / 128, .cb = (C + 127) / 128, .t = t, .sc = sc};
    m->ns = t != TILE_F8E4M3 ? 0 : sc == TILE_MOE_SCALES_CHANNEL ? (size_t)(E * R) : (size_t)(E * (R / seg) * m->rbs * m->cb);
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
    size_t si = m->sc == TILE_MOE_SCALES_CHANNEL
                    ? (size_t)(e * m->R + r)
                    : (size_t)(((e * (m->R / m->seg) + r / m->seg) * m->rbs + r % m->seg / 128) * m->cb + c / 128);
    return check_e4m3_value(((const uint8_t *)m->w)[i]) * (double)m->s[si];
}

void check_moe_weights_free(CheckMoeWeights *m) { free(m->w), free(m->s); }

double check_moe(const CheckMoe *m, const int32_t *ids, const float *out, int *routing_ok, int64_t *checked) {
    int64_t T = m->tokens, E = m->experts, K = m->topk, H = m->hidden, I = m->inter;
    /* at most check_tokens tokens spread over the batch: the routing must be
     * a top-k of the logits (ties are improbable with random logits), its
     * weights the renormalized softmax, and the output the float64 forward
     * from the (dequantized) weights */
    int64_t step = (T + m->check_tokens - 1) / m->check_tokens;
    double worst = 0, rnd = m->act == TILE_F16 ? 1.0 / 2048 : 1.0 / 256;
    double *hv = malloc(sizeof(double) * (size_t)I), *wt = malloc(sizeof(double) * (size_t)K);
    double *want = malloc(sizeof(double) * (size_t)H), *mag = malloc(sizeof(double) * (size_t)H);
    *routing_ok = 1, *checked = 0;
    if (!hv || !wt || !want || !mag) {
        free(hv), free(wt), free(want), free(mag);
        return INFINITY;
    }
    for (int64_t t = 0; t < T; t += step, (*checked)++) {
        const float *l = m->logits + t * E;
        double mx = -INFINITY, wsum = 0;
        for (int64_t j = 0; j < K; j++) {
            int32_t e = ids[t * K + j];
            if (e < 0 || e >= E) {
                *routing_ok = 0;
                continue;
            }
            for (int64_t f = 0; f < E; f++) {
                int chosen = 0;
                for (int64_t q = 0; q < K; q++) chosen |= ids[t * K + q] == f;
                if (!chosen && l[f] > l[e]) *routing_ok = 0;
            }
        }
        if (!*routing_ok) break;
        for (int64_t j = 0; j < K; j++) mx = fmax(mx, l[ids[t * K + j]]);
        for (int64_t j = 0; j < K; j++) wsum += wt[j] = exp((double)l[ids[t * K + j]] - mx);
        memset(want, 0, sizeof(double) * (size_t)H), memset(mag, 0, sizeof(double) * (size_t)H);
        for (int64_t j = 0; j < K; j++) {
            int32_t e = ids[t * K + j];
            for (int64_t i = 0; i < I; i++) {
                double g = 0, u = 0;
                for (int64_t k = 0; k < H; k++)
                    g += m->x[t * H + k] * check_moe_weight(m->w1, e, i, k), u += m->x[t * H + k] * check_moe_weight(m->w1, e, I + i, k);
                hv[i] = g / (1 + exp(-g)) * u;
            }
            for (int64_t c = 0; c < H; c++) {
                double acc = 0, a = 0;
                for (int64_t i = 0; i < I; i++) {
                    double x = hv[i] * check_moe_weight(m->w2, e, c, i);
                    acc += x, a += fabs(x);
                }
                want[c] += wt[j] / wsum * acc, mag[c] += wt[j] / wsum * a;
            }
        }
        for (int64_t c = 0; c < H; c++) {
            double e = fabs(out[t * H + c] - want[c]) / ((rnd + 3e-5) * mag[c] + 1e-6);
            if (!(e <= worst)) worst = e;
        }
    }
    free(hv), free(wt), free(want), free(mag);
    return *routing_ok ? worst : INFINITY;
}
