/* ref.c - the float64 references of ref.h.
 *
 * How the results are kept comparable between callers:
 *   1. Every sum runs in index order over plain doubles (ref_dot is the one inner
 *      product), so a reference computed whole, by row or through a row callback
 *      gives the same bits.
 *   2. Attention is two passes over the visible keys, no scratch: the first finds
 *      the largest scaled score, the second recomputes each score (the same
 *      bits), sums p = exp(score - max) and accumulates p V into the output row.
 *      Masks are a key range (ref_attention_keys), so a masked row and a row of
 *      fewer keys are the same computation.  The whole-tensor entry points only
 *      walk the (sequence, head, query) rows with a strided or paged row reader;
 *      ref_paged_decode_row is one step of that walk, checked on its own.
 *   3. The router is the rule of docs/moe.md written as plainly as possible:
 *      best choice value first, lowest index on ties, groups before experts; it
 *      also notes when a decision was closer than tie_eps between values that
 *      come from different inputs, because the device's f32 may decide those
 *      either way (callers draw such rows again, or accept either answer).
 *   4. The expert MLP adds into the caller's row (a residual, or zeros), one slot
 *      after the other in rank order, as the tests' formulas read. */
#include "ref/ref.h"

#include <math.h>
#include <stdlib.h>

/* ================================ GEMM ================================ */

double ref_activation(tile_activation act, double x) {
    switch (act) {
    case TILE_ACT_RELU: return x > 0 ? x : 0;
    case TILE_ACT_GELU: return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    case TILE_ACT_SILU: return x / (1 + exp(-x));
    default: return x;
    }
}

double ref_dot(int64_t n, const double *x, int64_t incx, const double *y, int64_t incy, double *mag) {
    double s = 0, m = 0;
    for (int64_t p = 0; p < n; p++) {
        double t = x[p * incx] * y[p * incy];
        s += t;
        m += fabs(t);
    }
    if (mag) *mag = m;
    return s;
}

double ref_gemm_at(const ref_gemm_args *g, int64_t i, int64_t j, double *mag) {
    const double *x = g->trans_a ? g->a + i : g->a + i * g->lda, *y = g->trans_b ? g->b + j * g->ldb : g->b + j;
    double m, s = ref_dot(g->k, x, g->trans_a ? g->lda : 1, y, g->trans_b ? 1 : g->ldb, &m);
    double d = g->alpha * s, dmag = fabs(g->alpha) * m;
    if (g->beta != 0 && g->c) {
        double c = g->c[i * g->ldc + j];
        d += g->beta * c, dmag += fabs(g->beta * c);
    }
    if (g->bias) d += g->bias[j], dmag += fabs(g->bias[j]);
    if (mag) *mag = dmag;
    return ref_activation(g->activation, d);
}

void ref_gemm(const ref_gemm_args *g, double *out, int64_t ldo, double *mag) {
    for (int64_t i = 0; i < g->m; i++)
        for (int64_t j = 0; j < g->n; j++) out[i * ldo + j] = ref_gemm_at(g, i, j, mag ? &mag[i * ldo + j] : NULL);
}

/* ============================== attention ============================== */

void ref_attention_keys(int64_t i, int64_t len_q, int64_t len_k, bool causal, int64_t window_left, int64_t window_right,
                        int64_t *begin, int64_t *end) {
    int64_t diag = i + len_k - len_q, b = 0, e = len_k;
    if (window_left >= 0 && diag - window_left > b) b = diag - window_left;
    if (causal && diag + 1 < e) e = diag + 1;
    if (window_right >= 0 && diag + window_right + 1 < e) e = diag + window_right + 1;
    if (b > len_k) b = len_k;
    *begin = b;
    *end = e > b ? e : b;
}

/* ref_attention_row with the cache scales of paged decode (1: none; x * 1 is exact) */
static double attention_row(int64_t D, const double *q, double scale, int64_t begin, int64_t end, ref_kv_row_fn row, void *user,
                            double k_scale, double v_scale, double *o) {
    double mx = -INFINITY, l = 0;
    for (int64_t j = begin; j < end; j++) {
        const double *k = row(user, j, 0);
        double s = 0;
        for (int64_t d = 0; d < D; d++) s += q[d] * (k[d] * k_scale);
        mx = fmax(mx, s * scale);
    }
    for (int64_t d = 0; d < D; d++) o[d] = 0;
    for (int64_t j = begin; j < end; j++) {
        const double *k = row(user, j, 0);
        double s = 0;
        for (int64_t d = 0; d < D; d++) s += q[d] * (k[d] * k_scale);
        double p = exp(s * scale - mx);
        l += p;
        const double *v = row(user, j, 1);
        for (int64_t d = 0; d < D; d++) o[d] += p * (v[d] * v_scale);
    }
    for (int64_t d = 0; d < D; d++) o[d] = l > 0 ? o[d] / l : 0;
    return l > 0 ? mx + log(l) : -INFINITY;
}

double ref_attention_row(int64_t head_dim, const double *q, double scale, int64_t begin, int64_t end, ref_kv_row_fn row, void *user,
                         double *o) {
    return attention_row(head_dim, q, scale, begin, end, row, user, 1, 1, o);
}

/* K and V rows of one (sequence, KV head) in strided memory: row j at base + j * step */
typedef struct StridedKV {
    const double *k, *v;
    int64_t k_step, v_step;
} StridedKV;
static const double *strided_row(void *user, int64_t j, int value) {
    const StridedKV *s = user;
    return value ? s->v + j * s->v_step : s->k + j * s->k_step;
}

/* strides (outer, token, head) with all three 0 meaning contiguous [outer, tokens, heads, head_dim] */
static void strides_or_contiguous(const int64_t in[3], int64_t tokens, int64_t heads, int64_t head_dim, int64_t out[3]) {
    if (in[0] || in[1] || in[2]) {
        out[0] = in[0], out[1] = in[1], out[2] = in[2];
        return;
    }
    out[2] = head_dim, out[1] = heads * head_dim, out[0] = tokens * heads * head_dim;
}

bool ref_attention(const ref_attention_args *a) {
    int64_t B = a->batch, Hq = a->heads_q, Hk = a->heads_kv, D = a->head_dim;
    bool varlen = a->cu_seqlens_q != NULL;
    if (B < 0 || Hk < 1 || Hq < 1 || Hq % Hk || D < 1 || varlen != (a->cu_seqlens_k != NULL)) return false;
    if (!varlen && (a->seq_q < 0 || a->seq_k < 0)) return false;
    if (varlen)
        for (int64_t b = 0; b < B; b++)
            if (a->cu_seqlens_q[b] < 0 || a->cu_seqlens_q[b + 1] < a->cu_seqlens_q[b] || a->cu_seqlens_k[b] < 0 ||
                a->cu_seqlens_k[b + 1] < a->cu_seqlens_k[b])
                return false;
    if (B > 0 && (!a->q || !a->k || !a->v || !a->o)) return false;
    int64_t qs[3], ks[3], vs[3], os[3];
    strides_or_contiguous(a->q_stride, a->seq_q, Hq, D, qs);
    strides_or_contiguous(a->k_stride, a->seq_k, Hk, D, ks);
    strides_or_contiguous(a->v_stride, a->seq_k, Hk, D, vs);
    strides_or_contiguous(a->o_stride, a->seq_q, Hq, D, os);
    double scale = a->scale != 0 ? a->scale : 1.0 / sqrt((double)D);
    int64_t group = Hq / Hk, total_q = varlen ? a->cu_seqlens_q[B] : 0;
    for (int64_t b = 0; b < B; b++) {
        /* a sequence's first token: packed, or the batch stride */
        int64_t q0 = varlen ? a->cu_seqlens_q[b] : 0, k0 = varlen ? a->cu_seqlens_k[b] : 0;
        int64_t lq = varlen ? a->cu_seqlens_q[b + 1] - q0 : a->seq_q, lk = varlen ? a->cu_seqlens_k[b + 1] - k0 : a->seq_k;
        int64_t qb = varlen ? 0 : b * qs[0], kb = varlen ? 0 : b * ks[0], vb = varlen ? 0 : b * vs[0], ob = varlen ? 0 : b * os[0];
        for (int64_t h = 0; h < Hq; h++) {
            int64_t g = h / group;
            StridedKV kv = {a->k + kb + k0 * ks[1] + g * ks[2], a->v + vb + k0 * vs[1] + g * vs[2], ks[1], vs[1]};
            for (int64_t i = 0; i < lq; i++) {
                int64_t begin, end;
                ref_attention_keys(i, lq, lk, a->causal, a->window_left, a->window_right, &begin, &end);
                double lse = attention_row(D, a->q + qb + (q0 + i) * qs[1] + h * qs[2], scale, begin, end, strided_row, &kv, 1, 1,
                                           a->o + ob + (q0 + i) * os[1] + h * os[2]);
                if (a->lse) a->lse[varlen ? h * total_q + q0 + i : (b * Hq + h) * a->seq_q + i] = lse;
            }
        }
    }
    return true;
}

/* K and V rows of one (sequence, KV head) of a paged cache: position j in block table[j / bs] */
typedef struct PagedKV {
    const double *k, *v; /* the KV head's slot 0 of block 0 */
    const int32_t *table;
    int64_t bs, k_block, k_slot, v_block, v_slot;
} PagedKV;
static const double *paged_row(void *user, int64_t j, int value) {
    const PagedKV *p = user;
    int64_t blk = p->table[j / p->bs], slot = j % p->bs;
    return value ? p->v + blk * p->v_block + slot * p->v_slot : p->k + blk * p->k_block + slot * p->k_slot;
}

/* A tree-masked row's visible keys, renumbered 0 .. n: the context before the new tokens, then the new
 * tokens its mask names, in position order */
typedef struct TreeKV {
    PagedKV kv;
    int64_t base;    /* positions before the new tokens */
    int64_t pick[32]; /* the visible new tokens' positions */
} TreeKV;
static const double *tree_row(void *user, int64_t j, int value) {
    const TreeKV *t = user;
    return paged_row((void *)&t->kv, j < t->base ? j : t->pick[j - t->base], value);
}

/* what every row needs: sizes, pointers */
static bool paged_shape_ok(const ref_paged_args *a) {
    int64_t S = a->num_seqs, Hq = a->heads_q, Hk = a->heads_kv;
    if (S < 0 || Hk < 1 || Hq < 1 || Hq % Hk || a->head_dim < 1 || a->num_tokens < 1 || a->block_size < 1 || a->num_blocks < 1) return false;
    return S == 0 || (a->q && a->k_cache && a->v_cache && a->block_tables && a->context_lens);
}

/* what the rows of sequence s read: its length and every table entry of it */
static bool paged_seq_ok(const ref_paged_args *a, int64_t s) {
    int64_t ctx = a->context_lens[s], nb = (ctx + a->block_size - 1) / a->block_size;
    if (ctx < a->num_tokens || nb > a->block_table_stride) return false;
    for (int64_t i = 0; i < nb; i++)
        if (a->block_tables[s * a->block_table_stride + i] < 0 || a->block_tables[s * a->block_table_stride + i] >= a->num_blocks) return false;
    return true;
}

/* row (s, t, h) into o; the arguments checked */
static void paged_row_compute(const ref_paged_args *a, int64_t s, int64_t t, int64_t h, double *o) {
    int64_t Hq = a->heads_q, D = a->head_dim, T = a->num_tokens, bs = a->block_size;
    int64_t qs[3], ks[3], vs[3];
    strides_or_contiguous(a->q_stride, T, Hq, D, qs);
    strides_or_contiguous(a->k_stride, bs, a->heads_kv, D, ks);
    strides_or_contiguous(a->v_stride, bs, a->heads_kv, D, vs);
    double scale = a->scale != 0 ? a->scale : 1.0 / sqrt((double)D);
    double k_scale = a->k_scale != 0 ? a->k_scale : 1, v_scale = a->v_scale != 0 ? a->v_scale : 1;
    int64_t g = h / (Hq / a->heads_kv);
    PagedKV kv = {a->k_cache + g * ks[2], a->v_cache + g * vs[2], a->block_tables + s * a->block_table_stride, bs, ks[0], ks[1], vs[0], vs[1]};
    const double *q = a->q + s * qs[0] + t * qs[1] + h * qs[2];
    if (a->tree_mask) { /* the context before the new tokens, and the new tokens the mask names */
        TreeKV tk = {.kv = kv, .base = a->context_lens[s] - T};
        int64_t n = 0;
        uint32_t bits = (uint32_t)a->tree_mask[s * T + t];
        for (int64_t j = 0; j < T && j < 32; j++)
            if (bits >> j & 1) tk.pick[n++] = tk.base + j;
        attention_row(D, q, scale, 0, tk.base + n, tree_row, &tk, k_scale, v_scale, o);
        return;
    }
    /* token t is at position context - T + t and sees every key up to it */
    attention_row(D, q, scale, 0, a->context_lens[s] - T + t + 1, paged_row, &kv, k_scale, v_scale, o);
}

bool ref_paged_decode(const ref_paged_args *a) {
    if (!paged_shape_ok(a) || (a->num_seqs > 0 && !a->o)) return false;
    for (int64_t s = 0; s < a->num_seqs; s++)
        if (!paged_seq_ok(a, s)) return false;
    int64_t os[3];
    strides_or_contiguous(a->o_stride, a->num_tokens, a->heads_q, a->head_dim, os);
    for (int64_t s = 0; s < a->num_seqs; s++)
        for (int64_t t = 0; t < a->num_tokens; t++)
            for (int64_t h = 0; h < a->heads_q; h++) paged_row_compute(a, s, t, h, a->o + s * os[0] + t * os[1] + h * os[2]);
    return true;
}

bool ref_paged_decode_row(const ref_paged_args *a, int64_t seq, int64_t token, int64_t head, double *o) {
    if (!paged_shape_ok(a) || !o || seq < 0 || seq >= a->num_seqs || token < 0 || token >= a->num_tokens || head < 0 || head >= a->heads_q ||
        !paged_seq_ok(a, seq))
        return false;
    paged_row_compute(a, seq, token, head, o);
    return true;
}

/* ================================= MoE ================================= */

/* Two choice values are the same decision when they come from the same logit and bias. */
typedef struct Key {
    double l, b;
} Key;
static bool same_key(Key x, Key y) { return x.l == y.l && x.b == y.b; }

bool ref_moe_route(const ref_moe_router *r, const double *logits, int32_t *ids, double *weights, bool *near_tie) {
    int64_t E = r->experts, K = r->topk, G = r->n_group > 1 ? r->n_group : 1;
    bool grouped = G > 1;
    if (E < 1 || K < 1 || K > E || !logits || !ids || !weights) return false;
    if (grouped && (E % G || r->topk_group < 1 || r->topk_group > G || K > r->topk_group * (E / G) || (r->group_top2 && E / G < 2)))
        return false;
    /* one block: per expert score, choice value, key, kept; per group score, best two keys, selected */
    double *s = malloc(sizeof(double) * (size_t)(2 * E + G) + sizeof(Key) * (size_t)(E + 2 * G) + (size_t)(E + G));
    if (!s) return false;
    double *ch = s + E, *gsc = ch + E;
    Key *key = (Key *)(gsc + G), *k1 = key + E, *k2 = k1 + G;
    bool *keep = (bool *)(k2 + G), *gsel = keep + E;
    bool near = false;
    double eps = r->tie_eps;

    double mx = -INFINITY, sum = 0;
    for (int64_t e = 0; e < E; e++) mx = fmax(mx, logits[e]);
    for (int64_t e = 0; e < E; e++) sum += exp(logits[e] - mx);
    for (int64_t e = 0; e < E; e++) {
        double bias = r->score_bias ? r->score_bias[e] : 0;
        s[e] = r->scoring == TILE_MOE_SOFTMAX ? exp(logits[e] - mx) / sum : 1 / (1 + exp(-logits[e]));
        ch[e] = (r->scoring == TILE_MOE_SOFTMAX ? logits[e] : s[e]) + bias;
        key[e] = (Key){logits[e], bias};
        keep[e] = true;
    }
    if (grouped) {
        int64_t gs = E / G;
        for (int64_t g = 0; g < G; g++) {
            int64_t b1 = g * gs, b2 = -1;
            for (int64_t e = g * gs; e < (g + 1) * gs; e++)
                if (ch[e] > ch[b1]) b1 = e;
            gsc[g] = ch[b1], k1[g] = key[b1], k2[g] = (Key){0, 0}, gsel[g] = false;
            if (r->group_top2) {
                for (int64_t e = g * gs; e < (g + 1) * gs; e++)
                    if (e != b1 && (b2 < 0 || ch[e] > ch[b2])) b2 = e;
                gsc[g] += ch[b2], k2[g] = key[b2];
            }
        }
        for (int64_t j = 0; j < r->topk_group; j++) {
            int64_t b = -1;
            for (int64_t g = 0; g < G; g++)
                if (!gsel[g] && (b < 0 || gsc[g] > gsc[b])) b = g;
            gsel[b] = true;
        }
        /* the boundary: every kept group against every dropped one */
        for (int64_t g = 0; g < G; g++)
            for (int64_t h = 0; h < G; h++)
                if (gsel[g] && !gsel[h] && fabs(gsc[g] - gsc[h]) < eps && !(same_key(k1[g], k1[h]) && same_key(k2[g], k2[h])))
                    near = true;
        for (int64_t e = 0; e < E; e++) keep[e] = gsel[e / gs];
    }
    double wsum = 0;
    for (int64_t j = 0; j < K; j++) {
        int64_t b = -1;
        for (int64_t e = 0; e < E; e++)
            if (keep[e] && (b < 0 || ch[e] > ch[b])) b = e;
        for (int64_t e = 0; e < E; e++)
            if (keep[e] && e != b && fabs(ch[e] - ch[b]) < eps && !same_key(key[e], key[b])) near = true;
        ids[j] = (int32_t)b;
        weights[j] = s[b];
        wsum += s[b];
        keep[b] = false;
    }
    double scale = r->routed_scale != 0 ? r->routed_scale : 1;
    for (int64_t j = 0; j < K; j++) weights[j] = (r->renormalize ? weights[j] / wsum : weights[j]) * scale;
    if (near_tie) *near_tie = near;
    free(s);
    return true;
}

static const double *weight_row(const ref_moe_args *a, int which, int64_t e, int64_t r) {
    if (a->weight_row) return a->weight_row(a->user, which, e, r);
    return which == 1 ? a->w1 + (e * 2 * a->inter + r) * a->hidden : a->w2 + (e * a->hidden + r) * a->inter;
}

static bool moe_args_ok(const ref_moe_args *a) {
    return a->tokens >= 0 && a->hidden >= 1 && a->inter >= 1 && a->experts >= 1 && a->topk >= 1 && (a->ldx == 0 || a->ldx >= a->hidden) &&
           (a->tokens == 0 || (a->x && a->topk_ids && a->topk_weights)) && (a->weight_row || (a->w1 && a->w2));
}

/* token t into out / mag; hbuf [inter] unless a->h */
static void moe_token(const ref_moe_args *a, int64_t t, double *out, double *mag, double *hbuf) {
    int64_t H = a->hidden, I = a->inter, K = a->topk;
    const double *x = a->x + t * (a->ldx ? a->ldx : H);
    for (int64_t j = 0; j < K; j++) {
        int64_t s = t * K + j, e = a->topk_ids[s];
        if (e < 0 || e >= a->experts) continue;
        const double *h = a->h ? a->h + s * I : hbuf;
        if (!a->h)
            for (int64_t i = 0; i < I; i++) {
                double g = ref_dot(H, x, 1, weight_row(a, 1, e, i), 1, NULL);
                double u = ref_dot(H, x, 1, weight_row(a, 1, e, I + i), 1, NULL);
                hbuf[i] = ref_activation(TILE_ACT_SILU, g) * u;
            }
        double w = a->topk_weights[s];
        for (int64_t c = 0; c < H; c++) {
            double m, acc = ref_dot(I, h, 1, weight_row(a, 2, e, c), 1, &m);
            out[c] += w * acc;
            if (mag) mag[c] += fabs(w) * m;
        }
    }
}

bool ref_moe_token(const ref_moe_args *a, int64_t t, double *out, double *mag) {
    if (!moe_args_ok(a) || t < 0 || t >= a->tokens || !out) return false;
    double *hbuf = a->h ? NULL : malloc(sizeof(double) * (size_t)a->inter);
    if (!a->h && !hbuf) return false;
    moe_token(a, t, out, mag, hbuf);
    free(hbuf);
    return true;
}

bool ref_moe_forward(const ref_moe_args *a, double *out, int64_t ldo, double *mag) {
    if (!moe_args_ok(a) || ldo < a->hidden || (a->tokens > 0 && !out)) return false;
    double *hbuf = a->h ? NULL : malloc(sizeof(double) * (size_t)a->inter);
    if (!a->h && !hbuf) return false;
    for (int64_t t = 0; t < a->tokens; t++) moe_token(a, t, out + t * ldo, mag ? mag + t * ldo : NULL, hbuf);
    free(hbuf);
    return true;
}

int64_t ref_moe_scale_count(tile_moe_scales layout, int64_t experts, int64_t rows, int64_t cols, int64_t seg) {
    if (layout == TILE_MOE_SCALES_CHANNEL) return experts * rows;
    if (layout == TILE_MOE_SCALES_BLOCK128) return experts * (rows / seg) * ((seg + 127) / 128) * ((cols + 127) / 128);
    return 0;
}

int64_t ref_moe_scale_index(tile_moe_scales layout, int64_t rows, int64_t cols, int64_t seg, int64_t e, int64_t r, int64_t c) {
    if (layout == TILE_MOE_SCALES_CHANNEL) return e * rows + r;
    if (layout == TILE_MOE_SCALES_BLOCK128)
        return ((e * (rows / seg) + r / seg) * ((seg + 127) / 128) + r % seg / 128) * ((cols + 127) / 128) + c / 128;
    return -1;
}

/* ====================== normalization, gated activations ====================== */

void ref_rmsnorm(int64_t n, const double *z, const double *w, double eps, double *y) {
    double ss = 0;
    for (int64_t i = 0; i < n; i++) ss += z[i] * z[i];
    double r = 1 / sqrt(ss / (double)n + eps);
    for (int64_t i = 0; i < n; i++) y[i] = z[i] * r * w[i];
}

void ref_layernorm(int64_t n, const double *z, const double *w, const double *b, double eps, double *y) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < n; i++) mean += z[i];
    mean /= (double)n;
    for (int64_t i = 0; i < n; i++) var += (z[i] - mean) * (z[i] - mean);
    double r = 1 / sqrt(var / (double)n + eps);
    for (int64_t i = 0; i < n; i++) y[i] = (z[i] - mean) * r * w[i] + (b ? b[i] : 0);
}

double ref_gated(tile_gated_act act, double g, double u) {
    switch (act) {
    case TILE_GATED_SILU: return g / (1 + exp(-g)) * u;
    case TILE_GATED_GELU: return 0.5 * g * (1 + erf(g / sqrt(2.0))) * u;
    case TILE_GATED_GELU_TANH: return 0.5 * g * (1 + tanh(sqrt(2 / M_PI) * (g + 0.044715 * g * g * g))) * u;
    }
    return NAN;
}

double ref_quant_scale(double amax, double qmax) { return fmax(amax / qmax, 1 / (qmax * 512)); }

double ref_round_f8e4m3(double x) {
    if (isnan(x)) return x;
    double a = fabs(x), best = 0;
    if (a >= 448) return copysign(448, x);
    /* the codes' values in increasing order: m * 2^-9 below 2^-6 (subnormal), then (8 + m) * 2^(e - 10);
     * an even code has an even mantissa */
    int best_m = 0;
    for (int c = 0; c < 0x7f; c++) {
        int e = c >> 3, m = c & 7;
        double v = e ? ldexp(8 + m, e - 10) : ldexp(m, -9);
        double d = fabs(a - v), bd = fabs(a - best);
        if (d < bd || (d == bd && (m & 1) == 0 && (best_m & 1))) best = v, best_m = m;
    }
    return copysign(best, x);
}

void ref_rope(tile_rope_style style, int64_t head_dim, int64_t rot_dim, const double *x, const double *cos, const double *sin, double *y,
              double *mag) {
    int64_t half = rot_dim / 2;
    for (int64_t i = 0; i < half; i++) {
        int64_t c1 = style == TILE_ROPE_GPTJ ? 2 * i : i, c2 = style == TILE_ROPE_GPTJ ? 2 * i + 1 : i + half;
        y[c1] = x[c1] * cos[i] - x[c2] * sin[i];
        y[c2] = x[c2] * cos[i] + x[c1] * sin[i];
        if (mag) mag[c1] = fabs(x[c1] * cos[i]) + fabs(x[c2] * sin[i]), mag[c2] = fabs(x[c2] * cos[i]) + fabs(x[c1] * sin[i]);
    }
    for (int64_t d = rot_dim; d < head_dim; d++) {
        y[d] = x[d];
        if (mag) mag[d] = fabs(x[d]);
    }
}
