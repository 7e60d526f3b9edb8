/* test_sample.c - tile_sample and tile_spec_verify (kernels/sampling/sampling.c)
 * on the emulator against the float64 references of ref/sample.c, and their
 * argument checks.
 *
 * Fresh random logits every run (TILE_TEST_SEED repeats one; printed on
 * failure), f32, f16 and bf16, vocab sizes that are not multiples of the
 * kernel's BLOCK (37, 1000, 32003, 128256), gapped row strides, outputs poisoned first
 * (tokens -1 through 0xFF bytes, probabilities NaN).
 *
 * What is checked:
 *   - Philox-4x32-10 of the reference against Random123's known answers;
 *   - greedy rows (T = 0) exactly against a C argmax (ties: lowest index);
 *   - sampled rows against the reference that applies the same filters in
 *     float64 and draws with the same Philox word: the tokens must be equal,
 *     except where the uniform lies within EPS of a boundary of the
 *     cumulative distribution (then the device token must lie between the
 *     reference's tokens for u - EPS and u + EPS, which are neighbours in the
 *     kept set) or where a min_p / top_p boundary was within EPS (the kept
 *     set itself may then differ by a token); both kinds are counted and must
 *     be rare;
 *   - where the kernel writes the probabilities it drew from (probs), every sampled row's token against the
 *     draw from those: the same token but where u lies within EPS_DEVICE (2e-6, a tenth of EPS) of a step
 *     of their cumulative sum, near-boundary rows included (a draw shifted by 1.5e-5, inside EPS, fails);
 *   - every token inside the reference's kept set (top_k / top_p / min_p);
 *   - the processed probabilities against the reference's;
 *   - a chi-square test of the empirical distribution of many draws (fixed
 *     seeds: deterministic) against the exact filtered distribution, with a
 *     critical value whose false-failure probability is about 1e-6;
 *   - reproducibility: the same seed and offset give the same tokens in
 *     another batch position and launch; another offset another stream;
 *   - tile_spec_verify: accepted counts and tokens against ref_spec_verify
 *     (random and greedy rows mixed), and the defining property of the rule:
 *     with drafts drawn from q, the first output token is distributed as p_0
 *     (chi-square as above). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/sanitized.h"
#include "tests/test_rng.h"
#include "ref/ref.h"
#include "support/hostfloat.h"
#include "include/tile/tile.h"
#include "tests/test_ctx_buffers.h"

/* A decision closer than this (in probability units) may go either way in f32 */
static const double EPS = 2e-5;
/* The draw from the probabilities the kernel wrote (probs) differs from a float64 prefix sum of them by the
 * kernel's f32 prefix sum only: a boundary closer than this may go either way */
static const double EPS_DEVICE = 2e-6;
/* A min_p or top_p decision closer than this (relative to min_p, to the mass compared) may go either way */
static const double EPS_SET = 5e-6;


/* A deterministic generator for the statistical tests (fixed seeds) */
static uint64_t fixed_next(uint64_t *s) {
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}
static double fixed_unit(uint64_t *s) { return (double)(fixed_next(s) >> 11) * 0x1p-53; }

/* Chi-square critical value for df degrees of freedom at a tail of about 1e-6 (Wilson-Hilferty, z = 4.75) */
static double chi2_critical(int df) {
    double k = df, z = 4.75;
    double c = 1 - 2 / (9 * k) + z * sqrt(2 / (9 * k));
    return k * c * c * c;
}

/* Chi-square statistic of counts[n] (total draws) against probabilities want[n]; cells whose expected count
 * is below 5 are merged.  *df gets the degrees of freedom. */
static double chi2(int n, const int64_t *counts, const double *want, int64_t draws, int *df) {
    double stat = 0, small_e = 0, small_o = 0;
    int cells = 0;
    for (int i = 0; i < n; i++) {
        double e = want[i] * (double)draws;
        if (want[i] == 0) continue;
        if (e < 5) {
            small_e += e, small_o += (double)counts[i];
            continue;
        }
        stat += (counts[i] - e) * (counts[i] - e) / e, cells++;
    }
    if (small_e > 0) stat += (small_o - small_e) * (small_o - small_e) / small_e, cells++;
    *df = cells - 1;
    return stat;
}

/* ======================= the reference's Philox ======================= */

Test(sample, philox_known_answers) {
    /* Random123's kat_vectors for philox4x32_10 */
    static const struct {
        uint32_t ctr[4], key[2], out[4];
    } kat[] = {
        {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
        {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}, {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
        {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}, {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
    };
    for (size_t k = 0; k < sizeof kat / sizeof kat[0]; k++) {
        uint32_t out[4];
        ref_philox4x32(kat[k].ctr, kat[k].key, out);
        for (int i = 0; i < 4; i++) cr_assert_eq(out[i], kat[k].out[i], "vector %zu word %d: %08x, want %08x", k, i, out[i], kat[k].out[i]);
    }
}

/* ============================ tile_sample ============================ */

/* One tile_sample problem: logits [batch, vocab] (row stride ld) in dt, per-row parameters. */
typedef struct Problem {
    tile_dtype dt, out_dt;
    int batch, vocab, ld;
    double *x;              /* [batch][vocab]: the exact logits */
    float *temp, *topp, *minp;
    int32_t *topk;
    uint64_t *seed, *off;
    bool arrays;            /* per-row arrays; else row 0's values as scalars for every row */
    bool probs;
} Problem;

typedef struct Tally {
    int rows, sampled, boundary, near_set, outside;
    int device_boundary; /* rows with probs whose u lay within EPS_DEVICE of a step of the device's own CDF */
    double device_err;   /* the farthest u lay outside the device's CDF step of its token (0: always inside) */
    double expect; /* near-boundary rows expected by chance: u lands within EPS of one of `kept` CDF steps */
} Tally;

static void problem_alloc(Problem *p) {
    p->x = calloc((size_t)p->batch * p->vocab, sizeof(double));
    p->temp = calloc((size_t)p->batch, 4), p->topp = calloc((size_t)p->batch, 4), p->minp = calloc((size_t)p->batch, 4);
    p->topk = calloc((size_t)p->batch, 4);
    p->seed = calloc((size_t)p->batch, 8), p->off = calloc((size_t)p->batch, 8);
    for (int r = 0; r < p->batch; r++) p->topp[r] = 1;
}
static void problem_free(Problem *p) { free(p->x), free(p->temp), free(p->topp), free(p->minp), free(p->topk), free(p->seed), free(p->off); }

/* Logits spread by `scale`, rounded to dt (p->x keeps the exact stored values); a few ties and -inf. */
static void fill_logits(Problem *p, double scale) {
    for (int r = 0; r < p->batch; r++)
        for (int i = 0; i < p->vocab; i++) {
            double v = scale * urand();
            if (irand(50) == 0) v = -INFINITY;
            if (i > 0 && irand(40) == 0) v = p->x[(size_t)r * p->vocab + i - 1]; /* a tie */
            float f = (float)v;
            p->x[(size_t)r * p->vocab + i] = p->dt == TILE_F16 ? f16_to_d(f32_to_f16(f)) : p->dt == TILE_BF16 ? bf16_to_d(f32_to_bf16(f)) : f;
        }
}

/* Random per-row parameters: some greedy rows, each filter on in about half the rows. */
static void random_params(Problem *p) {
    for (int r = 0; r < p->batch; r++) {
        p->temp[r] = irand(6) == 0 ? 0.0f : (float)(0.3 + 1.5 * (urand() + 1) / 2);
        p->topk[r] = irand(2) ? 0 : 1 + irand(p->vocab < 64 ? p->vocab : 64);
        p->topp[r] = irand(2) ? 1.0f : (float)(0.2 + 0.75 * (urand() + 1) / 2);
        p->minp[r] = irand(2) ? 0.0f : (float)(0.2 * (urand() + 1) / 2);
        p->seed[r] = rnext();
        p->off[r] = rnext() >> irand(64);
    }
}

/* Run tile_sample on p; tokens[batch] and probs[batch][vocab] (if p->probs) come back. */
static void run_sample(tile_context *ctx, const Problem *p, int64_t *tokens, float *probs) {
    size_t es = p->dt == TILE_F32 ? 4 : 2, n = (size_t)(p->batch - 1) * p->ld + p->vocab + 5;
    void *hx = malloc(n * es);
    memset(hx, 0x7f, n * es); /* the gaps: large finite values, never read */
    for (int r = 0; r < p->batch; r++)
        for (int i = 0; i < p->vocab; i++) {
            size_t k = (size_t)r * p->ld + i;
            float f = (float)p->x[(size_t)r * p->vocab + i];
            if (es == 4) ((float *)hx)[k] = f;
            else ((uint16_t *)hx)[k] = p->dt == TILE_F16 ? f32_to_f16(f) : f32_to_bf16(f);
        }
    tile_devptr dx = upload(ctx, hx, n * es);
    size_t oes = p->out_dt == TILE_I64 ? 8 : 4, on = (size_t)p->batch + 1;
    void *ho = malloc(on * oes);
    memset(ho, 0xff, on * oes);
    tile_devptr dout = upload(ctx, ho, on * oes);
    int ldp = p->vocab + 3;
    size_t pn = (size_t)p->batch * ldp;
    float *hp = malloc(pn * 4);
    for (size_t i = 0; i < pn; i++) hp[i] = NAN;
    tile_devptr dp = p->probs ? upload(ctx, hp, pn * 4) : 0;
    tile_sample_args a = {.size = sizeof a, .dtype = p->dt, .batch = p->batch, .vocab = p->vocab, .logits = dx, .ld = p->ld,
                          .out_dtype = p->out_dt, .out = dout, .probs = dp, .ldp = ldp};
    tile_devptr arr[6] = {0};
    if (p->arrays) {
        a.temperature = arr[0] = upload(ctx, p->temp, (size_t)p->batch * 4);
        a.top_k = arr[1] = upload(ctx, p->topk, (size_t)p->batch * 4);
        a.top_p = arr[2] = upload(ctx, p->topp, (size_t)p->batch * 4);
        a.min_p = arr[3] = upload(ctx, p->minp, (size_t)p->batch * 4);
        a.seed = arr[4] = upload(ctx, p->seed, (size_t)p->batch * 8);
        a.offset = arr[5] = upload(ctx, p->off, (size_t)p->batch * 8);
    } else {
        a.temperature_value = p->temp[0], a.top_k_value = p->topk[0], a.top_p_value = p->topp[0], a.min_p_value = p->minp[0];
        a.seed_value = p->seed[0], a.offset_value = p->off[0];
    }
    cr_assert_eq(tile_sample(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_synchronize(ctx), TILE_OK, "%s", tile_last_error(ctx));
    download(ctx, ho, dout, on * oes);
    for (int r = 0; r <= p->batch; r++) {
        int64_t t = oes == 8 ? ((int64_t *)ho)[r] : ((int32_t *)ho)[r];
        if (r == p->batch) cr_assert_eq(t, -1, "out written past batch");
        else tokens[r] = t;
    }
    if (p->probs) {
        download(ctx, hp, dp, pn * 4);
        for (int r = 0; r < p->batch; r++) {
            memcpy(probs + (size_t)r * p->vocab, hp + (size_t)r * ldp, (size_t)p->vocab * 4);
            for (int i = p->vocab; i < ldp; i++) cr_assert(isnan(hp[(size_t)r * ldp + i]), "probs written in the gap of row %d", r);
        }
    }
    for (int i = 0; i < 6; i++)
        if (arr[i]) tile_free(ctx, arr[i]);
    tile_free(ctx, dx), tile_free(ctx, dout);
    if (dp) tile_free(ctx, dp);
    free(hx), free(ho), free(hp);
}

/* Row r's parameters as the kernel sees them */
static void row_params(const Problem *p, int r, double *t, ref_sample_params *rp, uint64_t *sd, uint64_t *of, uint32_t *stream) {
    int k = p->arrays ? r : 0;
    *t = p->temp[k];
    *rp = (ref_sample_params){.temperature = p->temp[k], .top_k = p->topk[k], .top_p = p->topp[k], .min_p = p->minp[k], .eps = EPS_SET};
    if (rp->min_p < 0) rp->min_p = 0;
    *sd = p->seed[k], *of = p->off[k];
    *stream = p->arrays ? 0 : (uint32_t)r;
}

/* Check every row of a run against the reference; adds to *tally. */
static void check_sample(const Problem *p, const int64_t *tokens, const float *probs, const char *what, Tally *tally) {
    double *want = malloc((size_t)p->vocab * sizeof(double));
    for (int r = 0; r < p->batch; r++) {
        const double *x = p->x + (size_t)r * p->vocab;
        double t;
        ref_sample_params rp;
        uint64_t sd, of;
        uint32_t stream;
        row_params(p, r, &t, &rp, &sd, &of, &stream);
        int64_t tok = tokens[r];
        tally->rows++;
        cr_assert(tok >= 0 && tok < p->vocab, "%s row %d: token %lld outside the vocabulary (seed %llu)", what, r, (long long)tok,
                  (unsigned long long)seed);
        if (!(t > 0)) {
            int64_t w = ref_argmax(p->vocab, x);
            cr_assert_eq(tok, w, "%s row %d greedy: token %lld, want %lld (seed %llu)", what, r, (long long)tok, (long long)w,
                         (unsigned long long)seed);
            if (probs)
                for (int i = 0; i < p->vocab; i++)
                    cr_assert_eq(probs[(size_t)r * p->vocab + i], i == w ? 1.0f : 0.0f, "%s row %d greedy: probs[%d]", what, r, i);
            continue;
        }
        tally->sampled++;
        uint32_t w[2];
        ref_sample_words(sd, of, stream, 0, w);
        if (probs) { /* the draw from the probabilities the device wrote: exact but for its f32 prefix sum */
            const float *pd = probs + (size_t)r * p->vocab;
            double cum = 0, u = ref_unit(w[0]);
            for (int i = 0; i < p->vocab; i++) want[i] = pd[i];
            cr_assert(want[tok] > 0, "%s row %d: token %lld has probability %g in the probs written (seed %llu)", what, r, (long long)tok,
                      want[tok], (unsigned long long)seed);
            for (int64_t i = 0; i < tok; i++) cum += want[i];
            double err = u < cum ? cum - u : u >= cum + want[tok] ? u - (cum + want[tok]) : 0;
            if (err > tally->device_err) tally->device_err = err;
            int64_t dlo, dhi, dtok = ref_sample_pick(p->vocab, want, u, EPS_DEVICE, &dlo, &dhi);
            tally->device_boundary += dlo != dhi;
            cr_assert(dlo == dhi ? tok == dtok : tok >= dlo && tok <= dhi,
                      "%s row %d: token %lld, but u %.9f picks %lld (%lld .. %lld) from the probs written (T %g k %lld p %g min_p %g) "
                      "(seed %llu)",
                      what, r, (long long)tok, u, (long long)dtok, (long long)dlo, (long long)dhi, t, (long long)rp.top_k, rp.top_p,
                      rp.min_p, (unsigned long long)seed);
        }
        bool near;
        int64_t kept;
        cr_assert(ref_sample_probs(p->vocab, x, &rp, want, &kept, &near));
        int64_t lo, hi, ref_tok = ref_sample_pick(p->vocab, want, ref_unit(w[0]), EPS, &lo, &hi);
        tally->expect += fmin(1.0, 2 * EPS * (double)kept);
        if (near) {
            tally->near_set++;
            continue;
        }
        if (want[tok] == 0) tally->outside++;
        cr_assert(want[tok] > 0, "%s row %d: token %lld outside the kept set (%lld kept; T %g k %lld p %g min_p %g) (seed %llu)", what, r,
                  (long long)tok, (long long)kept, t, (long long)rp.top_k, rp.top_p, rp.min_p, (unsigned long long)seed);
        if (lo != hi) {
            tally->boundary++;
            cr_assert(tok >= lo && tok <= hi, "%s row %d: token %lld, want %lld .. %lld (u near a boundary) (seed %llu)", what, r,
                      (long long)tok, (long long)lo, (long long)hi, (unsigned long long)seed);
        } else {
            cr_assert_eq(tok, ref_tok, "%s row %d: token %lld, want %lld (u %.9f; T %g k %lld p %g min_p %g) (seed %llu)", what, r,
                         (long long)tok, (long long)ref_tok, ref_unit(w[0]), t, (long long)rp.top_k, rp.top_p, rp.min_p,
                         (unsigned long long)seed);
        }
        if (probs)
            for (int i = 0; i < p->vocab; i++) {
                double got = probs[(size_t)r * p->vocab + i];
                if (want[i] == 0) cr_assert_eq(got, 0.0, "%s row %d: probs[%d] = %g outside the kept set (seed %llu)", what, r, i, got,
                                               (unsigned long long)seed);
                else cr_assert(fabs(got - want[i]) <= 1e-4 * want[i] + 1e-9, "%s row %d: probs[%d] = %.8g, want %.8g (seed %llu)", what,
                               r, i, got, want[i], (unsigned long long)seed);
            }
    }
    free(want);
}

static void tally_check(const Tally *t, const char *what) {
    fprintf(stderr, "%s: %d rows, %d sampled; %d with u within %g of a CDF boundary (%.2f expected by chance), %d near a min_p/top_p boundary; "
            "%d within %g of the written probabilities' CDF steps, u at most %.3g outside its token's\n",
            what, t->rows, t->sampled, t->boundary, EPS, t->expect, t->near_set, t->device_boundary, EPS_DEVICE, t->device_err);
    /* near-boundary rows are checked only loosely (any token of the ambiguous range): they must stay
     * few beyond what chance gives at this vocabulary (about 2 EPS per kept token per row) */
    cr_assert(t->boundary + t->near_set <= 2 + t->sampled / 20 + (int)ceil(2 * t->expect), "%s: too many near-boundary cases (%d + %d of %d, %.2f expected)",
              what, t->boundary, t->near_set, t->sampled, t->expect);
}

static void sample_case(tile_context *ctx, tile_dtype dt, tile_dtype out_dt, int batch, int vocab, double scale, bool arrays,
                        bool probs, Tally *tally) {
    Problem p = {.dt = dt, .out_dt = out_dt, .batch = batch, .vocab = vocab, .ld = vocab + 7, .arrays = arrays, .probs = probs};
    problem_alloc(&p);
    fill_logits(&p, scale);
    random_params(&p);
    if (!arrays) { /* row 0's parameters for all: make it a sampled row with every filter */
        p.temp[0] = 0.9f, p.topk[0] = vocab / 3 + 1, p.topp[0] = 0.8f, p.minp[0] = 0.01f;
    }
    int64_t *tokens = malloc((size_t)batch * 8);
    float *pr = probs ? malloc((size_t)batch * vocab * 4) : NULL;
    run_sample(ctx, &p, tokens, pr);
    char what[96];
    snprintf(what, sizeof what, "%s->%s batch %d vocab %d%s", tile_dtype_name(dt), tile_dtype_name(out_dt), batch, vocab,
             arrays ? " arrays" : " scalars");
    check_sample(&p, tokens, pr, what, tally);
    free(tokens), free(pr);
    problem_free(&p);
}

Test(sample, greedy_ties, .timeout = 120) {
    seed_rng();
    tile_context *ctx = open_ctx();
    /* every row greedy; rows with their maximum repeated */
    Problem p = {.dt = TILE_F32, .out_dt = TILE_I32, .batch = 9, .vocab = 1000, .ld = 1000, .arrays = true, .probs = true};
    problem_alloc(&p);
    fill_logits(&p, 4.0);
    for (int r = 0; r < p.batch; r++) {
        double *x = p.x + (size_t)r * p.vocab;
        int a = irand(p.vocab), b = irand(p.vocab);
        x[a] = x[b] = 5.0 + (r % 3 == 0); /* the maximum at two places */
        p.temp[r] = 0, p.seed[r] = rnext();
    }
    int64_t tokens[9];
    float *pr = malloc((size_t)p.batch * p.vocab * 4);
    run_sample(ctx, &p, tokens, pr);
    Tally t = {0};
    check_sample(&p, tokens, pr, "greedy", &t);
    free(pr);
    problem_free(&p);
    tile_context_destroy(ctx);
}

Test(sample, against_reference_f32, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    Tally t = {0};
    sample_case(ctx, TILE_F32, TILE_I32, 48, 1000, 3.0, true, true, &t);
    sample_case(ctx, TILE_F32, TILE_I64, 48, 37, 2.0, true, false, &t);
    sample_case(ctx, TILE_F32, TILE_I32, 16, 1000, 3.0, false, true, &t);
    tally_check(&t, "f32");
    tile_context_destroy(ctx);
}

Test(sample, against_reference_f16_bf16, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    Tally t = {0};
    sample_case(ctx, TILE_F16, TILE_I32, 32, 1000, 3.0, true, true, &t);
    sample_case(ctx, TILE_BF16, TILE_I64, 32, 1000, 3.0, true, false, &t);
    sample_case(ctx, TILE_BF16, TILE_I32, 32, 37, 3.0, true, true, &t);
    tally_check(&t, "f16/bf16");
    tile_context_destroy(ctx);
}

Test(sample, large_vocab, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    Tally t = {0};
    sample_case(ctx, TILE_F32, TILE_I32, 6, 32003, 8.0, true, false, &t);
    sample_case(ctx, TILE_BF16, TILE_I64, 6, 32003, 8.0, true, false, &t);
    tally_check(&t, "vocab 32003");
    /* Llama-3's vocabulary with the probabilities written: each token checked against the draw from them */
    Tally t2 = {0};
    sample_case(ctx, TILE_F32, TILE_I32, 4, 128256, 8.0, true, true, &t2);
    tally_check(&t2, "vocab 128256");
    tile_context_destroy(ctx);
}

/* Draws from one row's distribution, each in its own batch row (seed per row, or one seed and the row's stream) */
static void distribution_case(tile_context *ctx, float temp, int topk, float topp, float minp, bool arrays, uint64_t fixed) {
    enum { V = 37 };
    const int N = sanitized_count(1024, 4); /* the exact draws are checked in against_reference; this checks their histogram */
    Problem p = {.dt = TILE_F32, .out_dt = TILE_I32, .batch = N, .vocab = V, .ld = V, .arrays = arrays};
    problem_alloc(&p);
    uint64_t s = fixed;
    double row[V];
    for (int i = 0; i < V; i++) row[i] = (float)(3.0 * (2 * fixed_unit(&s) - 1));
    for (int r = 0; r < N; r++) {
        memcpy(p.x + (size_t)r * V, row, sizeof row);
        p.temp[r] = temp, p.topk[r] = topk, p.topp[r] = topp, p.minp[r] = minp;
        p.seed[r] = arrays ? fixed_next(&s) : fixed;
        p.off[r] = arrays ? fixed_next(&s) : 12345;
    }
    int64_t *tokens = malloc(N * 8);
    run_sample(ctx, &p, tokens, NULL);
    double want[V];
    ref_sample_params rp = {.temperature = temp, .top_k = topk, .top_p = topp, .min_p = minp, .eps = EPS_SET};
    int64_t kept;
    cr_assert(ref_sample_probs(V, row, &rp, want, &kept, NULL));
    int64_t counts[V] = {0};
    for (int r = 0; r < N; r++) {
        cr_assert(tokens[r] >= 0 && tokens[r] < V && want[tokens[r]] > 0, "draw %d: token %lld outside the kept set", r, (long long)tokens[r]);
        counts[tokens[r]]++;
    }
    int df;
    double stat = chi2(V, counts, want, N, &df), crit = chi2_critical(df), tv = 0;
    for (int i = 0; i < V; i++) tv += fabs((double)counts[i] / N - want[i]) / 2;
    fprintf(stderr, "distribution T %g k %d p %g min_p %g (%s): %lld kept, chi2 %.2f (df %d, critical %.2f), total variation %.4f\n", temp,
            topk, topp, minp, arrays ? "seed per row" : "one seed, row streams", (long long)kept, stat, df, crit, tv);
    cr_assert(df >= 1 && stat < crit, "chi-square %.2f >= %.2f (df %d)", stat, crit, df);
    free(tokens);
    problem_free(&p);
}

Test(sample, distribution, .timeout = 300) {
    tile_context *ctx = open_ctx();
    distribution_case(ctx, 1.0f, 0, 1.0f, 0.0f, true, 0x1234567);
    distribution_case(ctx, 0.7f, 20, 0.9f, 0.02f, true, 0x89abcdef);
    distribution_case(ctx, 1.3f, 0, 0.75f, 0.0f, false, 0x5eed);
    tile_context_destroy(ctx);
}

Test(sample, reproducible, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    enum { B = 24, V = 1000 };
    Problem p = {.dt = TILE_F32, .out_dt = TILE_I32, .batch = B, .vocab = V, .ld = V, .arrays = true};
    problem_alloc(&p);
    fill_logits(&p, 1.0);
    random_params(&p);
    for (int r = 0; r < B; r++) p.temp[r] = 1.0f, p.topk[r] = 0, p.topp[r] = 1, p.minp[r] = 0; /* wide distributions */
    int64_t a[B], b[B], c[B];
    run_sample(ctx, &p, a, NULL);
    run_sample(ctx, &p, b, NULL);
    for (int r = 0; r < B; r++) cr_assert_eq(a[r], b[r], "row %d: %lld then %lld with the same seed and offset", r, (long long)a[r], (long long)b[r]);
    /* the same requests in reverse order, in a batch of another size: the same tokens */
    Problem q = p;
    q.batch = B - 5;
    problem_alloc(&q);
    for (int r = 0; r < q.batch; r++) {
        int s = B - 1 - r;
        memcpy(q.x + (size_t)r * V, p.x + (size_t)s * V, V * sizeof(double));
        q.temp[r] = p.temp[s], q.topk[r] = p.topk[s], q.topp[r] = p.topp[s], q.minp[r] = p.minp[s], q.seed[r] = p.seed[s], q.off[r] = p.off[s];
    }
    run_sample(ctx, &q, c, NULL);
    for (int r = 0; r < q.batch; r++) cr_assert_eq(c[r], a[B - 1 - r], "request %d in another batch position: %lld, want %lld", B - 1 - r,
                                                   (long long)c[r], (long long)a[B - 1 - r]);
    problem_free(&q);
    /* the next offset: another stream (a token repeats with probability about sum p^2, small here) */
    for (int r = 0; r < B; r++) p.off[r] += 1;
    run_sample(ctx, &p, c, NULL);
    int same = 0;
    for (int r = 0; r < B; r++) same += c[r] == a[r];
    cr_assert(same <= B / 4, "%d of %d rows drew the same token at the next offset", same, B);
    Tally t = {0};
    check_sample(&p, c, NULL, "next offset", &t);
    problem_free(&p);
    tile_context_destroy(ctx);
}

/* Rows the filters do not define well still give a valid index: all -inf, a NaN, +inf; a tiny temperature is the argmax */
Test(sample, edge_rows, .timeout = 120) {
    seed_rng();
    tile_context *ctx = open_ctx();
    enum { B = 8, V = 300 };
    Problem p = {.dt = TILE_F32, .out_dt = TILE_I64, .batch = B, .vocab = V, .ld = V, .arrays = true};
    problem_alloc(&p);
    fill_logits(&p, 2.0);
    random_params(&p);
    for (int i = 0; i < V; i++) p.x[i] = -INFINITY;            /* row 0: all -inf */
    p.x[1 * V + 17] = NAN;                                      /* row 1: a NaN */
    p.x[2 * V + 40] = INFINITY;                                 /* row 2: +inf */
    p.x[3 * V + 99] = 9.0, p.x[3 * V + 200] = 8.999, p.temp[3] = 1e-30f; /* row 3: tiny T */
    p.temp[0] = p.temp[1] = p.temp[2] = 1.0f;
    p.x[4 * V + 5] = 9.0, p.temp[4] = 1.0f, p.topk[4] = 1, p.topp[4] = 1, p.minp[4] = 0; /* row 4: top_k 1 */
    int64_t tok[B];
    run_sample(ctx, &p, tok, NULL);
    for (int r = 0; r < B; r++) cr_assert(tok[r] >= 0 && tok[r] < V, "row %d: token %lld", r, (long long)tok[r]);
    cr_assert_eq(tok[3], 99, "tiny temperature: %lld, want the maximum 99", (long long)tok[3]);
    cr_assert_eq(tok[4], 5, "top_k 1: %lld, want the maximum 5", (long long)tok[4]);
    problem_free(&p);
    tile_context_destroy(ctx);
}

Test(sample, argument_checks) {
    tile_context *ctx = open_ctx();
    tile_devptr x, out;
    cr_assert_eq(tile_malloc(ctx, 4096, &x), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 64, &out), TILE_OK);
    tile_sample_args ok = {.size = sizeof ok, .dtype = TILE_F32, .batch = 4, .vocab = 100, .logits = x, .temperature_value = 1,
                           .top_p_value = 1, .out = out};
    struct {
        tile_sample_args a;
        const char *msg;
    } bad[] = {
        {ok, NULL},
        {ok, "dtype"},
        {ok, "vocab"},
        {ok, "top_p_value"},
        {ok, "min_p_value"},
        {ok, "top_k_value"},
        {ok, "temperature_value"},
        {ok, "out_dtype"},
        {ok, "logits"},
        {ok, "ld"},
        {ok, "out is 0"},
        /* what the call writes shares no byte with what it reads (a program writes its row while others read theirs) */
        {ok, "out (0x"},
        {ok, "probs (0x"},
        {ok, "shares bytes with temperature"},
    };
    bad[1].a.dtype = TILE_I8;
    bad[2].a.vocab = 0;
    bad[3].a.top_p_value = 0;
    bad[4].a.min_p_value = 1.5f;
    bad[5].a.top_k_value = -1;
    bad[6].a.temperature_value = NAN;
    bad[7].a.out_dtype = TILE_F16;
    bad[8].a.batch = 40; /* 40 rows of 100 f32 do not fit in 4096 bytes */
    bad[9].a.ld = 50;
    bad[10].a.out = 0;
    bad[11].a.out = x + 396; /* over row 0's last logit */
    bad[12].a.probs = x + 800;
    bad[13].a.temperature = out + 8;
    cr_assert_eq(tile_sample(ctx, &bad[0].a), TILE_OK, "%s", tile_last_error(ctx));
    bad[0].a.size = 0; /* this release's layout */
    cr_assert_eq(tile_sample(ctx, &bad[0].a), TILE_OK, "%s", tile_last_error(ctx));
    bad[0].a.size = 3;
    cr_assert_eq(tile_sample(ctx, &bad[0].a), TILE_ERROR_INVALID_VALUE);
    cr_assert(strstr(tile_last_error(ctx), "size"), "%s", tile_last_error(ctx));
    for (size_t i = 1; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(tile_sample(ctx, &bad[i].a), TILE_ERROR_INVALID_VALUE, "case %zu accepted", i);
        cr_assert(strstr(tile_last_error(ctx), "tile_sample") && strstr(tile_last_error(ctx), bad[i].msg), "case %zu: %s", i,
                  tile_last_error(ctx));
    }
    cr_assert(strstr(tile_last_error(ctx), "shares bytes with"), "%s", tile_last_error(ctx));
    bad[0].a.size = sizeof bad[0].a, bad[0].a.probs = x + 1600; /* the rest of the logits' allocation: apart */
    cr_assert_eq(tile_sample(ctx, &bad[0].a), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_sample(ctx, NULL), TILE_ERROR_INVALID_VALUE);
    tile_free(ctx, x), tile_free(ctx, out);
    tile_context_destroy(ctx);
}

/* ========================== tile_spec_verify ========================== */

/* softmax(scale * base + noise * urand) into p[vocab], rounded to f32 */
static void random_probs(int vocab, const double *base, double noise, double *p) {
    double m = -INFINITY, s = 0;
    for (int i = 0; i < vocab; i++) m = fmax(m, p[i] = base[i] + noise * urand());
    for (int i = 0; i < vocab; i++) s += p[i] = exp(p[i] - m);
    for (int i = 0; i < vocab; i++) p[i] = (float)(p[i] / s);
}

typedef struct Spec {
    int batch, nd, vocab;
    int32_t *draft, *greedy;
    double *q, *p;
    uint64_t *seed, *off;
} Spec;

/* accepted[batch], out[batch][nd + 1] */
static void run_spec(tile_context *ctx, const Spec *s, bool arrays, int32_t *accepted, int32_t *out) {
    size_t nq = (size_t)s->batch * s->nd * s->vocab, np = (size_t)s->batch * (s->nd + 1) * s->vocab;
    float *hq = malloc(nq * 4), *hp = malloc(np * 4);
    for (size_t i = 0; i < nq; i++) hq[i] = (float)s->q[i];
    for (size_t i = 0; i < np; i++) hp[i] = (float)s->p[i];
    tile_devptr dq = upload(ctx, hq, nq * 4), dp = upload(ctx, hp, np * 4);
    tile_devptr dd = upload(ctx, s->draft, (size_t)s->batch * s->nd * 4);
    size_t no = (size_t)s->batch * (s->nd + 1) + 1;
    int32_t *poison = malloc((no + s->batch + 1) * 4);
    memset(poison, 0x5a, (no + s->batch + 1) * 4);
    tile_devptr dacc = upload(ctx, poison, ((size_t)s->batch + 1) * 4), dout = upload(ctx, poison, no * 4);
    tile_spec_verify_args a = {.size = sizeof a, .batch = s->batch, .num_draft = s->nd, .vocab = s->vocab, .draft_tokens = dd,
                               .draft_probs = dq, .target_probs = dp, .accepted = dacc, .out_tokens = dout};
    tile_devptr dg = 0, ds = 0, dof = 0;
    if (arrays) {
        a.greedy = dg = upload(ctx, s->greedy, (size_t)s->batch * 4);
        a.seed = ds = upload(ctx, s->seed, (size_t)s->batch * 8);
        a.offset = dof = upload(ctx, s->off, (size_t)s->batch * 8);
    } else {
        a.greedy_value = s->greedy[0], a.seed_value = s->seed[0], a.offset_value = s->off[0];
    }
    cr_assert_eq(tile_spec_verify(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_synchronize(ctx), TILE_OK, "%s", tile_last_error(ctx));
    int32_t *hacc = malloc(((size_t)s->batch + 1) * 4), *hout = malloc(no * 4);
    download(ctx, hacc, dacc, ((size_t)s->batch + 1) * 4);
    download(ctx, hout, dout, no * 4);
    cr_assert_eq(hacc[s->batch], poison[0], "accepted written past batch");
    cr_assert_eq(hout[no - 1], poison[0], "out_tokens written past its end");
    memcpy(accepted, hacc, (size_t)s->batch * 4);
    memcpy(out, hout, (no - 1) * 4);
    tile_free(ctx, dq), tile_free(ctx, dp), tile_free(ctx, dd), tile_free(ctx, dacc), tile_free(ctx, dout);
    if (dg) tile_free(ctx, dg), tile_free(ctx, ds), tile_free(ctx, dof);
    free(hq), free(hp), free(poison), free(hacc), free(hout);
}

static void spec_alloc(Spec *s) {
    s->draft = calloc((size_t)s->batch * s->nd, 4), s->greedy = calloc((size_t)s->batch, 4);
    s->q = calloc((size_t)s->batch * s->nd * s->vocab, 8), s->p = calloc((size_t)s->batch * (s->nd + 1) * s->vocab, 8);
    s->seed = calloc((size_t)s->batch, 8), s->off = calloc((size_t)s->batch, 8);
}
static void spec_free(Spec *s) { free(s->draft), free(s->greedy), free(s->q), free(s->p), free(s->seed), free(s->off); }

/* A draw from probabilities w[n] with the host generator */
static int host_draw(int n, const double *w, double u) {
    double c = 0;
    for (int i = 0; i < n; i++)
        if ((c += w[i]) > u) return i;
    return n - 1;
}

static void spec_case(tile_context *ctx, int batch, int nd, int vocab) {
    Spec s = {.batch = batch, .nd = nd, .vocab = vocab};
    spec_alloc(&s);
    double *base = malloc((size_t)vocab * 8);
    for (int r = 0; r < batch; r++) {
        for (int i = 0; i < vocab; i++) base[i] = 3.0 * urand();
        s.greedy[r] = irand(4) == 0;
        s.seed[r] = rnext(), s.off[r] = rnext();
        for (int i = 0; i <= nd; i++) {
            double *pi = s.p + ((size_t)r * (nd + 1) + i) * vocab;
            random_probs(vocab, base, 1.0, pi);
            if (i == nd) break;
            double *qi = s.q + ((size_t)r * nd + i) * vocab;
            random_probs(vocab, base, 1.0, qi);
            /* greedy rows: drafts equal to the argmax for a random prefix; random rows: drawn from q */
            int32_t x = s.greedy[r] ? (irand(3) ? (int32_t)ref_argmax(vocab, pi) : irand(vocab)) : host_draw(vocab, qi, (urand() + 1) / 2);
            if (irand(40) == 0) x = vocab + 3; /* out of range: rejected */
            s.draft[(size_t)r * nd + i] = x;
        }
    }
    int32_t *acc = malloc((size_t)batch * 4), *out = malloc((size_t)batch * (nd + 1) * 4), *want = malloc((size_t)(nd + 1) * 4);
    run_spec(ctx, &s, true, acc, out);
    int nearc = 0, total_acc = 0;
    for (int r = 0; r < batch; r++) {
        bool near;
        int64_t wa = ref_spec_verify(nd, vocab, s.draft + (size_t)r * nd, s.q + (size_t)r * nd * vocab, s.p + (size_t)r * (nd + 1) * vocab,
                                     s.greedy[r] != 0, s.seed[r], s.off[r], 0, EPS, want, &near);
        const int32_t *o = out + (size_t)r * (nd + 1);
        /* always: the accepted prefix is the drafts, then one token, then -1 */
        cr_assert(acc[r] >= 0 && acc[r] <= nd, "row %d: accepted %d", r, acc[r]);
        for (int i = 0; i < acc[r]; i++) cr_assert_eq(o[i], s.draft[(size_t)r * nd + i], "row %d: out[%d] is not the accepted draft", r, i);
        cr_assert(o[acc[r]] >= 0 && o[acc[r]] < vocab, "row %d: out[%d] = %d", r, acc[r], o[acc[r]]);
        for (int i = acc[r] + 1; i <= nd; i++) cr_assert_eq(o[i], -1, "row %d: out[%d] = %d, want -1", r, i, o[i]);
        total_acc += acc[r];
        if (near) {
            nearc++;
            continue;
        }
        cr_assert_eq(acc[r], wa, "row %d%s: accepted %d, want %lld (seed %llu)", r, s.greedy[r] ? " greedy" : "", acc[r], (long long)wa,
                     (unsigned long long)seed);
        for (int i = 0; i <= nd; i++)
            cr_assert_eq(o[i], want[i], "row %d%s: out[%d] = %d, want %d (seed %llu)", r, s.greedy[r] ? " greedy" : "", i, o[i], want[i],
                         (unsigned long long)seed);
    }
    fprintf(stderr, "spec_verify batch %d drafts %d vocab %d: %d accepted of %d, %d rows near a decision boundary\n", batch, nd, vocab,
            total_acc, batch * nd, nearc);
    /* a row is near by chance when a residual draw's u lands within EPS of one of at most `vocab` CDF steps (each
     * random row draws at most once): at most 2 EPS vocab per random row, as the sampler's tally bounds it.  The
     * bound was 2 + batch / 20 alone, and a run with 5 of 40 (at most 1.2 expected) failed: about 1 run in 100 */
    int random_rows = 0;
    for (int r = 0; r < batch; r++) random_rows += !s.greedy[r];
    double expect = random_rows * fmin(1.0, 2 * EPS * vocab);
    cr_assert(nearc <= 2 + batch / 20 + (int)ceil(2 * expect), "too many near-boundary rows: %d of %d (%.2f expected by chance)", nearc,
              batch, expect);
    cr_assert(total_acc > 0 && total_acc < batch * nd, "accepted %d of %d: the test exercises nothing", total_acc, batch * nd);
    free(base), free(acc), free(out), free(want);
    spec_free(&s);
}

Test(spec, against_reference, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    spec_case(ctx, 40, 4, 1000);
    spec_case(ctx, 24, 3, 37);
    tile_context_destroy(ctx);
}

/* With x_0 drawn from q_0, out[0] (the accepted draft or the replacement) is distributed as p_0. */
Test(spec, first_token_distribution, .timeout = 300) {
    tile_context *ctx = open_ctx();
    enum { V = 11, ND = 2 };
    const int N = sanitized_count(4096, 4);
    Spec s = {.batch = N, .nd = ND, .vocab = V};
    spec_alloc(&s);
    uint64_t f = 0xfeedbeef;
    double p0[(ND + 1) * V], q0[ND * V], base[V];
    for (int i = 0; i < V; i++) base[i] = 2.0 * (2 * fixed_unit(&f) - 1);
    for (int j = 0; j <= ND; j++) {
        double m = 0, t = 0;
        for (int i = 0; i < V; i++) t += p0[j * V + i] = exp(base[i] + (2 * fixed_unit(&f) - 1));
        for (int i = 0; i < V; i++) p0[j * V + i] = (float)(p0[j * V + i] / t);
        if (j == ND) break;
        t = 0;
        for (int i = 0; i < V; i++) t += q0[j * V + i] = exp(base[i] + 1.5 * (2 * fixed_unit(&f) - 1)) * (i == 3 ? 0 : 1); /* q(3) = 0 */
        for (int i = 0; i < V; i++) q0[j * V + i] = (float)(q0[j * V + i] / t);
        (void)m;
    }
    for (int r = 0; r < N; r++) {
        memcpy(s.p + (size_t)r * (ND + 1) * V, p0, sizeof p0);
        memcpy(s.q + (size_t)r * ND * V, q0, sizeof q0);
        for (int j = 0; j < ND; j++) s.draft[r * ND + j] = host_draw(V, q0 + j * V, fixed_unit(&f));
        s.seed[r] = 77, s.off[r] = 5;
    }
    int32_t *acc = malloc(N * 4), *out = malloc((size_t)N * (ND + 1) * 4);
    run_spec(ctx, &s, false, acc, out); /* one seed: the rows' streams differ */
    int64_t counts[V] = {0};
    int accepted0 = 0;
    for (int r = 0; r < N; r++) {
        int t = out[r * (ND + 1)];
        cr_assert(t >= 0 && t < V);
        counts[t]++;
        accepted0 += acc[r] > 0;
    }
    double want[V];
    for (int i = 0; i < V; i++) want[i] = p0[i];
    int df;
    double stat = chi2(V, counts, want, N, &df), crit = chi2_critical(df);
    double rate = 0; /* the acceptance rate sum min(p, q) */
    for (int i = 0; i < V; i++) rate += fmin(p0[i], q0[i]);
    fprintf(stderr, "spec first token: chi2 %.2f (df %d, critical %.2f); first draft accepted %d of %d (expected rate %.3f)\n", stat, df,
            crit, accepted0, N, rate);
    cr_assert(stat < crit, "first output token not distributed as p_0: chi-square %.2f >= %.2f", stat, crit);
    double sd = sqrt(rate * (1 - rate) / N);
    cr_assert(fabs((double)accepted0 / N - rate) < 5 * sd, "acceptance rate %.4f, want %.4f", (double)accepted0 / N, rate);
    free(acc), free(out);
    spec_free(&s);
    tile_context_destroy(ctx);
}

Test(spec, argument_checks) {
    tile_context *ctx = open_ctx();
    tile_devptr buf;
    cr_assert_eq(tile_malloc(ctx, 1 << 16, &buf), TILE_OK);
    /* the inputs may share memory (nothing writes them); what the call writes may not (it did) */
    tile_spec_verify_args ok = {.size = sizeof ok, .batch = 2, .num_draft = 3, .vocab = 100, .draft_tokens = buf, .draft_probs = buf,
                                .target_probs = buf, .accepted = buf + 40000, .out_tokens = buf + 40064};
    cr_assert_eq(tile_spec_verify(ctx, &ok), TILE_OK, "%s", tile_last_error(ctx));
    tile_spec_verify_args a = ok;
    a.accepted = ok.out_tokens + 28; /* over the last token of sequence 1 */
    cr_assert_eq(tile_spec_verify(ctx, &a), TILE_ERROR_INVALID_VALUE);
    cr_assert(strstr(tile_last_error(ctx), "out_tokens (0x") && strstr(tile_last_error(ctx), "shares bytes with accepted"), "%s",
              tile_last_error(ctx));
    a = ok, a.out_tokens = buf + 4;
    cr_assert_eq(tile_spec_verify(ctx, &a), TILE_ERROR_INVALID_VALUE);
    cr_assert(strstr(tile_last_error(ctx), "shares bytes with draft_tokens"), "%s", tile_last_error(ctx));
    a = ok, a.seed = ok.accepted;
    cr_assert_eq(tile_spec_verify(ctx, &a), TILE_ERROR_INVALID_VALUE);
    cr_assert(strstr(tile_last_error(ctx), "accepted (0x") && strstr(tile_last_error(ctx), "shares bytes with seed"), "%s",
              tile_last_error(ctx));
    a = ok;
    a.num_draft = 0;
    cr_assert_eq(tile_spec_verify(ctx, &a), TILE_ERROR_INVALID_VALUE);
    cr_assert(strstr(tile_last_error(ctx), "num_draft"), "%s", tile_last_error(ctx));
    a = ok, a.draft_probs = 0;
    cr_assert_eq(tile_spec_verify(ctx, &a), TILE_ERROR_INVALID_VALUE);
    cr_assert(strstr(tile_last_error(ctx), "draft_probs"), "%s", tile_last_error(ctx));
    a.greedy_value = 1; /* every row greedy: q is not needed */
    cr_assert_eq(tile_spec_verify(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    a = ok, a.vocab = 1000; /* p: 2 x 4 x 1000 f32 = 32000 bytes fit; q too; now 10000 */
    a.vocab = 10000;
    cr_assert_eq(tile_spec_verify(ctx, &a), TILE_ERROR_INVALID_VALUE);
    cr_assert(strstr(tile_last_error(ctx), "tile_spec_verify"), "%s", tile_last_error(ctx));
    a = ok, a.size = 3;
    cr_assert_eq(tile_spec_verify(ctx, &a), TILE_ERROR_INVALID_VALUE);
    cr_assert_eq(tile_synchronize(ctx), TILE_OK);
    tile_free(ctx, buf);
    tile_context_destroy(ctx);
}
