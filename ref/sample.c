/* sample.c - float64 references of tile_sample and tile_spec_verify (ref.h).
 *
 * The rules of kernels/sampling/sampling.tile written plainly, with a sort
 * where the kernel bisects: the same Philox words decide, and every decision
 * that f32 rounding on the device could turn the other way (a min_p or top_p
 * boundary, a uniform near a boundary of the cumulative distribution, an
 * acceptance test u q < p that is nearly equal) is reported to the caller,
 * who then accepts either answer or counts the case. */
#include "ref/ref.h"

#include <math.h>
#include <stdlib.h>

/* ============================ Philox-4x32-10 ============================ */

enum { PHILOX_M0 = 0xD2511F53u, PHILOX_M1 = 0xCD9E8D57u, PHILOX_W0 = 0x9E3779B9u, PHILOX_W1 = 0xBB67AE85u };

void ref_philox4x32(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3], k0 = key[0], k1 = key[1];
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)PHILOX_M0 * c0, p1 = (uint64_t)PHILOX_M1 * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n1 = (uint32_t)p1, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1, n3 = (uint32_t)p0;
        c0 = n0, c1 = n1, c2 = n2, c3 = n3;
        k0 += PHILOX_W0, k1 += PHILOX_W1;
    }
    out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

void ref_sample_words(uint64_t seed, uint64_t offset, uint32_t stream, uint32_t draw, uint32_t w[2]) {
    uint32_t ctr[4] = {(uint32_t)offset, (uint32_t)(offset >> 32), stream, draw}, key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    uint32_t out[4];
    ref_philox4x32(ctr, key, out);
    w[0] = out[0], w[1] = out[1];
}

double ref_unit(uint32_t w) { return (double)(w >> 8) * 0x1p-24; }

int64_t ref_argmax(int64_t n, const double *x) {
    int64_t b = 0;
    for (int64_t i = 1; i < n; i++)
        if (x[i] > x[b]) b = i;
    return b;
}

/* ============================ tile_sample ============================ */

typedef struct ByValue {
    const double *x;
    int64_t i;
} ByValue;

/* descending value, then ascending index */
static int by_value_desc(const void *pa, const void *pb) {
    const ByValue *a = pa, *b = pb;
    double xa = a->x[a->i], xb = b->x[b->i];
    if (xa != xb) return xa > xb ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

bool ref_sample_probs(int64_t vocab, const double *x, const ref_sample_params *p, double *probs, int64_t *kept, bool *near) {
    bool nr = false;
    double xm = x[ref_argmax(vocab, x)];
    /* 1. unnormalized softmax, 2. min_p */
    for (int64_t i = 0; i < vocab; i++) {
        double e = x[i] == xm ? 1.0 : exp((x[i] - xm) / p->temperature);
        if (p->min_p > 0) {
            if (fabs(e - p->min_p) <= p->eps * p->min_p && x[i] != xm) nr = true;
            if (e < p->min_p && x[i] != xm) e = -1; /* dropped */
        }
        probs[i] = e;
    }
    ByValue *ord = malloc((size_t)vocab * sizeof *ord);
    if (!ord) return false;
    for (int64_t i = 0; i < vocab; i++) ord[i] = (ByValue){x, i};
    qsort(ord, (size_t)vocab, sizeof *ord, by_value_desc);
    /* 3. top_k: every x >= the k-th largest */
    if (p->top_k > 0 && p->top_k < vocab) {
        double xk = x[ord[p->top_k - 1].i];
        for (int64_t i = 0; i < vocab; i++)
            if (x[i] < xk) probs[i] = -1;
    }
    /* 4. top_p: whole groups of equal x, largest first, until the mass reaches top_p of the kept */
    double m2 = 0;
    for (int64_t i = 0; i < vocab; i++)
        if (probs[i] >= 0) m2 += probs[i];
    if (p->top_p < 1) {
        double target = p->top_p * m2, cum = 0, t = -INFINITY;
        for (int64_t j = 0; j < vocab;) {
            int64_t g = j;
            double before = cum;
            while (g < vocab && x[ord[g].i] == x[ord[j].i]) {
                if (probs[ord[g].i] >= 0) cum += probs[ord[g].i];
                g++;
            }
            if (cum > before && cum >= target) {
                if (cum - target <= p->eps * m2 || (before > 0 && target - before <= p->eps * m2)) nr = true;
                t = x[ord[j].i];
                break;
            }
            j = g;
        }
        for (int64_t i = 0; i < vocab; i++)
            if (x[i] < t) probs[i] = -1;
    }
    free(ord);
    /* 5. renormalize */
    double m3 = 0;
    int64_t n = 0;
    for (int64_t i = 0; i < vocab; i++)
        if (probs[i] >= 0) m3 += probs[i], n++;
    for (int64_t i = 0; i < vocab; i++) probs[i] = probs[i] >= 0 ? probs[i] / m3 : 0;
    if (kept) *kept = n;
    if (near) *near = nr;
    return true;
}

/* The first i whose running sum exceeds u; else the last positive one */
static int64_t pick(int64_t vocab, const double *probs, double u) {
    double cum = 0;
    int64_t last = 0;
    for (int64_t i = 0; i < vocab; i++) {
        if (probs[i] <= 0) continue;
        cum += probs[i];
        last = i;
        if (cum > u) return i;
    }
    return last;
}

int64_t ref_sample_pick(int64_t vocab, const double *probs, double u, double eps, int64_t *lo, int64_t *hi) {
    if (lo) *lo = pick(vocab, probs, u - eps);
    if (hi) *hi = pick(vocab, probs, u + eps);
    return pick(vocab, probs, u);
}

/* ========================== tile_spec_verify ========================== */

/* The draw of u from w = max(0, p - q) (from p when that is all zero), normalized */
static int64_t draw_residual(int64_t vocab, const double *p, const double *q, double u, double eps, double *w, bool *near) {
    double m = 0;
    for (int64_t j = 0; j < vocab; j++) m += w[j] = q ? fmax(p[j] - q[j], 0) : p[j];
    if (!(m > 0)) {
        m = 0;
        for (int64_t j = 0; j < vocab; j++) m += w[j] = p[j];
    }
    for (int64_t j = 0; j < vocab; j++) w[j] /= m;
    int64_t lo, hi, t = ref_sample_pick(vocab, w, u, eps, &lo, &hi);
    if (lo != hi) *near = true;
    return t;
}

int64_t ref_spec_verify(int64_t nd, int64_t vocab, const int32_t *draft, const double *q, const double *p, bool greedy,
                        uint64_t seed, uint64_t offset, uint32_t stream, double eps, int32_t *out, bool *near) {
    bool nr = false;
    double *w = malloc((size_t)vocab * sizeof *w);
    int64_t acc = 0;
    for (int64_t i = 0; i <= nd; i++) out[i] = -1;
    for (; acc < nd; acc++) {
        const double *pi = p + acc * vocab, *qi = q ? q + acc * vocab : NULL;
        int32_t x = draft[acc];
        if (greedy) {
            int64_t a = ref_argmax(vocab, pi);
            if (x != a) {
                out[acc] = (int32_t)a;
                break;
            }
        } else {
            uint32_t wd[2];
            ref_sample_words(seed, offset, stream, (uint32_t)acc, wd);
            double u0 = ref_unit(wd[0]);
            bool ok = false;
            if (x >= 0 && x < vocab) {
                double lhs = u0 * qi[x], rhs = pi[x];
                ok = lhs < rhs;
                if (fabs(lhs - rhs) <= eps * (fabs(lhs) + fabs(rhs)) && (lhs != 0 || rhs != 0)) nr = true;
            }
            if (!ok) {
                out[acc] = w ? (int32_t)draw_residual(vocab, pi, qi, ref_unit(wd[1]), eps, w, &nr) : 0;
                break;
            }
        }
        out[acc] = x;
    }
    if (acc == nd) {
        const double *pb = p + nd * vocab;
        if (greedy) {
            out[nd] = (int32_t)ref_argmax(vocab, pb);
        } else {
            uint32_t wd[2];
            ref_sample_words(seed, offset, stream, (uint32_t)nd, wd);
            out[nd] = w ? (int32_t)draw_residual(vocab, pb, NULL, ref_unit(wd[1]), eps, w, &nr) : 0;
        }
    }
    free(w);
    if (near) *near = nr;
    return acc;
}
