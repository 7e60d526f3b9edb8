/* moe_gpu.c - speed of tile_moe_forward next to tile_gemm on the dense
 * GEMMs of the same work, for bench/gpu/run.sh; the PyTorch side is
 * bench/gpu/moe_ref.py.
 *
 *   build/bench/moe_gpu [--device cuda|emu] [--tiny] [--models NAME:E:K:H:I,...] [--tokens 1,64,4096]
 *                       [--samples N] [--check-tokens N] [--no-dense] [--max-seconds S]
 *
 * Default models (issue 8):
 *   mixtral   8 experts, top-2, hidden 4096, intermediate 14336
 *   deepseek  256 experts, top-8, hidden 7168, intermediate 2048 (DeepSeek-V3's
 *             routed experts, all on one GPU: 22.5 GB of bf16 weights)
 * at 1, 64 and 4096 tokens.  --tiny: small models for the emulator (checks
 * only: the emulator's timings mean nothing).
 *
 * Per model: W1 [E, 2I, H] and W2 [E, H, I] bf16, periodic random tensors
 * (gpu_common.h) scaled so the layer's output stays O(1).  Per token count T:
 *   1. x [T, H] bf16 random in [-1, 1), router logits f32 random; routing by
 *      the router (softmax, top-k, renormalized: Mixtral's) inside the call;
 *      topk_ids / topk_weights poisoned, a caller workspace;
 *   2. one call, synchronized, then the checks: the routing written back is
 *      a top-k of the logits with renormalized softmax weights, no NaN in
 *      the output, and --check-tokens tokens against a float64 forward
 *      (ref_moe_token, weights read row by row; error within (2^-8 + 3e-5) * sum |terms| per output: h is rounded
 *      to bf16 between the GEMMs);
 *   3. timed calls (bench_time); TFLOP/s = 2 T K 3 H I / t (the expert
 *      GEMMs; routing and alignment are in the time, not in the count);
 *      weight GB/s = bytes of the distinct experts the routing touched / t
 *      (what bounds small T);
 *   4. the dense GEMMs of the same work through tile_gemm, bf16 in and out:
 *      [T K, H] x [H, 2I] and [T K, I] x [I, H] with B = expert 0's W1 and
 *      W2 (transposed, as the MoE kernels read them), each checked on 64
 *      sampled elements, timed alone; TFLOP/s = the same FLOPs / the sum.
 * Lines for run.sh's table:
 *   @@ moe NAME T tile TFLOPS MS WEIGHT_GBPS
 *   @@ moe NAME T dense TFLOPS MS
 * Exit status 1 when a check or a call fails, 2 on a usage error. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/numparse.h"
#include "bench/gpu_common.h"
#include "ref/ref.h"
#include "tools/json.h"

static int json; /* --json: one JSON object per result line, nothing else on stdout */

typedef struct Model {
    char name[32];
    int64_t e, k, h, i;
} Model;

typedef struct Opts {
    int samples, check_tokens, dense;
    double max_seconds, start;
} Opts;

static uint64_t rng = 0xD1B54A32D192ED03ull;

typedef struct MoeRun {
    tile_context *ctx;
    tile_moe_args a;
} MoeRun;
static tile_status moe_call(void *u) {
    MoeRun *r = u;
    return tile_moe_forward(r->ctx, &r->a);
}
typedef struct GemmRun {
    tile_context *ctx;
    tile_gemm_args a;
} GemmRun;
static tile_status gemm_call(void *u) {
    GemmRun *r = u;
    return tile_gemm(r->ctx, &r->a);
}

/* One dense GEMM C [m, n] = A [m, k] B^T (B [n, k] row-major): one checked
 * call (64 sampled elements against float64), then timed.  Returns 0 when
 * the check passed and the timing ran. */
static int dense_gemm(tile_context *ctx, const Opts *op, const BenchTensor *A, const BenchTensor *B, size_t b_off, tile_devptr C, int64_t m,
                      int64_t n, int64_t k, BenchTiming *tm) {
    GemmRun r = {ctx, {.m = m, .n = n, .k = k, .a = A->d, .lda = k, .b = B->d + 2 * b_off, .ldb = k, .trans_b = 1, .c = C, .ldc = n,
                       .in_dtype = TILE_BF16, .out_dtype = TILE_BF16, .alpha = 1, .beta = 0}};
    tile_status st = tile_memset(ctx, C, 0xff, (size_t)(m * n) * 2);
    if (st == TILE_OK) st = gemm_call(&r);
    if (st == TILE_OK) st = tile_synchronize(ctx);
    if (st != TILE_OK) return fprintf(stderr, "moe_gpu: tile_gemm %lldx%lldx%lld: %s\n", (long long)m, (long long)n, (long long)k, tile_last_error(ctx)), 1;
    double *ar = malloc(sizeof(double) * (size_t)k), *br = malloc(sizeof(double) * (size_t)k), num = 0, den = 0;
    int rc = 0;
    for (int s = 0; s < 64 && ar && br; s++) {
        int64_t i = (int64_t)(bench_next_u64(&rng) % (uint64_t)m), j = (int64_t)(bench_next_u64(&rng) % (uint64_t)n);
        uint16_t got;
        if (tile_memcpy_dtoh(ctx, &got, C + 2 * (tile_devptr)(i * n + j), 2) != TILE_OK) {
            rc = 1;
            break;
        }
        bench_tensor_row(A, TILE_BF16, (size_t)(i * k), (size_t)k, ar);
        bench_tensor_row(B, TILE_BF16, b_off + (size_t)(j * k), (size_t)k, br);
        double ref = ref_dot(k, ar, 1, br, 1, NULL);
        double g = bf16_to_d(got);
        num += (g - ref) * (g - ref), den += ref * ref;
    }
    free(ar), free(br);
    double rel = sqrt(num / (den > 0 ? den : 1));
    if (rc || !(rel < 1e-2))
        return fprintf(stderr, "moe_gpu: tile_gemm %lldx%lldx%lld: sampled relative error %.2e: FAILED\n", (long long)m, (long long)n, (long long)k,
                       rel),
               1;
    if (bench_time(ctx, gemm_call, &r, op->samples, 0.05, 0.01, tm) != TILE_OK)
        return fprintf(stderr, "moe_gpu: tile_gemm timing: %s\n", tile_last_error(ctx)), 1;
    return 0;
}

/* W1 and W2 rows for ref_moe_token, read from the periodic tensors into one scratch row */
typedef struct WeightRows {
    const BenchTensor *w1, *w2;
    int64_t h, i;
    double *row;
} WeightRows;
static const double *weight_row(void *u, int which, int64_t e, int64_t r) {
    const WeightRows *w = u;
    if (which == 1) bench_tensor_row(w->w1, TILE_BF16, (size_t)((e * 2 * w->i + r) * w->h), (size_t)w->h, w->row);
    else bench_tensor_row(w->w2, TILE_BF16, (size_t)((e * w->h + r) * w->i), (size_t)w->i, w->row);
    return w->row;
}

/* float64 forward of token t; returns the worst error / tolerance over its outputs */
static double check_token(const Model *md, const BenchTensor *x, const BenchTensor *w1, const BenchTensor *w2, const int32_t *ids,
                          const float *wts, const float *out, int64_t t, double *scratch) {
    int64_t H = md->h, I = md->i, K = md->k;
    double *xr = scratch, *row = xr + H, *want = row + (H > I ? H : I), *mag = want + H, wd[8], worst = 0;
    bench_tensor_row(x, TILE_BF16, (size_t)(t * H), (size_t)H, xr);
    for (int64_t c = 0; c < H; c++) want[c] = mag[c] = 0;
    for (int64_t j = 0; j < K; j++) wd[j] = wts[t * K + j];
    WeightRows wr = {w1, w2, H, I, row};
    ref_moe_args a = {.tokens = 1, .hidden = H, .inter = I, .experts = md->e, .topk = K, .x = xr, .weight_row = weight_row, .user = &wr,
                      .topk_ids = ids + t * K, .topk_weights = wd};
    if (!ref_moe_token(&a, 0, want, mag)) return INFINITY;
    for (int64_t c = 0; c < H; c++) {
        double e = fabs(out[t * H + c] - want[c]) / ((1.0 / 256 + 3e-5) * mag[c] + 1e-6);
        if (!(e <= worst)) worst = e;
    }
    return worst;
}

/* routing written back: distinct ids in range, a top-k of the logits, weights the renormalized softmax */
static bool check_routing(const Model *md, const BenchTensor *logits, const int32_t *ids, const float *wts, int64_t T, double *lrow) {
    int64_t E = md->e, K = md->k;
    for (int64_t t = 0; t < T; t++) {
        bench_tensor_row(logits, TILE_F32, (size_t)(t * E), (size_t)E, lrow);
        double mx = -INFINITY, sum = 0, lo = INFINITY;
        for (int64_t j = 0; j < K; j++) {
            int32_t e = ids[t * K + j];
            if (e < 0 || e >= E) return false;
            for (int64_t q = 0; q < j; q++)
                if (ids[t * K + q] == e) return false;
            if (lrow[e] > mx) mx = lrow[e];
            if (lrow[e] < lo) lo = lrow[e];
        }
        for (int64_t f = 0; f < E; f++) {
            bool chosen = false;
            for (int64_t j = 0; j < K; j++) chosen |= ids[t * K + j] == f;
            if (!chosen && lrow[f] > lo) return false;
        }
        for (int64_t j = 0; j < K; j++) sum += exp(lrow[ids[t * K + j]] - mx);
        for (int64_t j = 0; j < K; j++) {
            double want = exp(lrow[ids[t * K + j]] - mx) / sum;
            if (!(fabs(wts[t * K + j] - want) <= 1e-5 + 1e-5 * want)) return false;
        }
    }
    return true;
}

static int bench_tokens(tile_context *ctx, BenchCopy *cp, const Opts *op, const Model *md, const BenchTensor *w1, const BenchTensor *w2,
                        const BenchTensor *dA, tile_devptr dC, int64_t T) {
    int rc = 1;
    int64_t E = md->e, K = md->k, H = md->h, I = md->i;
    size_t ns = (size_t)(T * K);
    BenchTensor x, lg;
    memset(&x, 0, sizeof x), memset(&lg, 0, sizeof lg);
    tile_devptr out = 0, ids = 0, wts = 0, ws = 0;
    int32_t *hids = malloc(ns * 4);
    float *hw = malloc(ns * 4), *hout = malloc((size_t)(T * H) * 4);
    double *scratch = malloc(sizeof(double) * (size_t)(4 * H + 3 * I + E + 16));
    if (!hids || !hw || !hout || !scratch) {
        fprintf(stderr, "moe_gpu: out of host memory\n");
        goto done;
    }
    tile_status st = bench_tensor_make(ctx, cp, &x, TILE_BF16, (size_t)(T * H), 1.0, &rng);
    if (st == TILE_OK) st = bench_tensor_make(ctx, cp, &lg, TILE_F32, (size_t)(T * E), 2.0, &rng);
    if (st == TILE_OK) st = tile_malloc(ctx, (size_t)(T * H) * 4, &out);
    if (st == TILE_OK) st = tile_malloc(ctx, ns * 4, &ids);
    if (st == TILE_OK) st = tile_malloc(ctx, ns * 4, &wts);
    if (st == TILE_OK) st = tile_memset(ctx, ids, 0xff, ns * 4);
    if (st == TILE_OK) st = tile_memset(ctx, wts, 0xff, ns * 4);
    if (st == TILE_OK) st = tile_memset(ctx, out, 0xff, (size_t)(T * H) * 4);
    MoeRun r = {ctx, {.tokens = T, .hidden = H, .inter = I, .experts = E, .topk = K, .dtype = TILE_BF16, .x = x.d, .w1 = w1->d, .w2 = w2->d,
                      .out = out, .router_logits = lg.d, .logits_dtype = TILE_F32, .topk_ids = ids, .topk_weights = wts,
                      .scoring = TILE_MOE_SOFTMAX, .renormalize = 1}};
    size_t ws_bytes = 0;
    if (st == TILE_OK) st = tile_moe_workspace_size(&r.a, &ws_bytes);
    if (st == TILE_OK) st = tile_malloc(ctx, ws_bytes ? ws_bytes : 16, &ws);
    r.a.workspace = ws, r.a.workspace_bytes = ws_bytes;
    if (st != TILE_OK) {
        fprintf(stderr, "moe_gpu: inputs: %s\n", tile_last_error(ctx));
        goto done;
    }
    double t0 = bench_now_s();
    st = moe_call(&r);
    if (st == TILE_OK) st = tile_synchronize(ctx);
    double first = bench_now_s() - t0;
    if (st == TILE_OK) st = tile_memcpy_dtoh(ctx, hids, ids, ns * 4);
    if (st == TILE_OK) st = tile_memcpy_dtoh(ctx, hw, wts, ns * 4);
    if (st == TILE_OK) st = tile_memcpy_dtoh(ctx, hout, out, (size_t)(T * H) * 4);
    if (st != TILE_OK) {
        fprintf(stderr, "moe_gpu: tile_moe_forward: %s\n", tile_last_error(ctx));
        goto done;
    }
    bool routing_ok = check_routing(md, &lg, hids, hw, T, scratch);
    size_t nan = 0;
    for (size_t i = 0; i < (size_t)(T * H); i++) nan += isnan(hout[i]);
    double worst = routing_ok ? 0 : INFINITY;
    int64_t want = op->check_tokens < T ? op->check_tokens : T, checked = 0;
    for (int64_t c = 0; routing_ok && c < want; c++, checked++) {
        int64_t t = want > 1 ? c * (T - 1) / (want - 1) : T - 1;
        double e = check_token(md, &x, w1, w2, hids, hw, hout, t, scratch);
        if (!(e <= worst)) worst = e;
    }
    bool ok = routing_ok && nan == 0 && worst <= 1;
    /* distinct experts the routing touched: the weight bytes a call must read */
    int64_t touched = 0;
    for (int64_t e = 0; e < E; e++) {
        bool used = false;
        for (size_t s = 0; s < ns && !used; s++) used = hids[s] == e;
        touched += used;
    }
    BenchTiming tm;
    memset(&tm, 0, sizeof tm);
    if (ok && (st = bench_time(ctx, moe_call, &r, op->samples, 0.1, 0.01, &tm)) != TILE_OK)
        fprintf(stderr, "moe_gpu: timing: %s\n", tile_last_error(ctx));
    double flop = 2.0 * (double)T * (double)K * 3 * (double)H * (double)I, wbytes = (double)touched * 3 * (double)H * (double)I * 2;
    double tf = tm.median_s > 0 ? flop / tm.median_s * 1e-12 : 0, gbs = tm.median_s > 0 ? wbytes / tm.median_s * 1e-9 : 0;
    if (json) {
        JsonOut j;
        json_begin(&j, stdout);
        json_str(&j, "bench", "moe_gpu");
        json_str(&j, "kind", "moe");
        json_str(&j, "model", md->name);
        json_int(&j, "tokens", T);
        json_int(&j, "experts_used", touched);
        json_int(&j, "experts", E);
        json_str(&j, "check", ok ? "ok" : "FAILED");
        json_str(&j, "routing", routing_ok ? "ok" : "WRONG");
        json_uint(&j, "nan", nan);
        json_num(&j, "worst_err_of_tolerance", worst);
        json_int(&j, "tokens_checked", (int64_t)checked);
        json_num(&j, "first_call_ms", first * 1e3);
        if (ok && st == TILE_OK) {
            json_num(&j, "median_ms", tm.median_s * 1e3);
            json_num(&j, "min_ms", tm.min_s * 1e3);
            json_num(&j, "max_ms", tm.max_s * 1e3);
            json_int(&j, "samples", tm.samples);
            json_int(&j, "batch", tm.batch);
            json_num(&j, "tflops", tf);
            json_num(&j, "weight_gbps", gbs);
        }
        json_end(&j);
    } else {
    printf("  %s T=%lld (%lld of %lld experts used): check %s (routing %s, %zu NaN, worst error %.2f of tolerance on %lld tokens); first call "
           "%.1f ms",
           md->name, (long long)T, (long long)touched, (long long)E, ok ? "ok" : "FAILED", routing_ok ? "ok" : "WRONG", nan, worst, (long long)checked,
           first * 1e3);
    if (ok && st == TILE_OK) {
        printf("; median %.3f ms (min %.3f, max %.3f; %d samples x %d) = %.1f TFLOP/s, weights read at %.0f GB/s\n", tm.median_s * 1e3,
               tm.min_s * 1e3, tm.max_s * 1e3, tm.samples, tm.batch, tf, gbs);
        printf("@@ moe %s %lld tile %.2f %.4f %.0f\n", md->name, (long long)T, tf, tm.median_s * 1e3, gbs);
    } else printf("\n");
    }
    rc = ok && st == TILE_OK ? 0 : 1;
    if (op->dense && rc == 0) {
        BenchTiming g1, g2;
        int64_t M = T * K;
        if (dense_gemm(ctx, op, dA, w1, 0, dC, M, 2 * I, H, &g1) || dense_gemm(ctx, op, dA, w2, 0, dC, M, H, I, &g2)) rc = 1;
        else {
            double t = g1.median_s + g2.median_s;
            if (json) {
                JsonOut j;
                json_begin(&j, stdout);
                json_str(&j, "bench", "moe_gpu");
                json_str(&j, "kind", "dense");
                json_str(&j, "model", md->name);
                json_int(&j, "tokens", T);
                json_int(&j, "gemm1_m", M), json_int(&j, "gemm1_n", 2 * I), json_int(&j, "gemm1_k", H);
                json_num(&j, "gemm1_ms", g1.median_s * 1e3);
                json_int(&j, "gemm2_m", M), json_int(&j, "gemm2_n", H), json_int(&j, "gemm2_k", I);
                json_num(&j, "gemm2_ms", g2.median_s * 1e3);
                json_num(&j, "ms", t * 1e3);
                json_num(&j, "tflops", flop / t * 1e-12);
                json_num(&j, "moe_pct_of_dense", 100 * t / tm.median_s);
                json_end(&j);
            } else {
            printf("    dense tile_gemm of the same work: %lldx%lldx%lld %.3f ms + %lldx%lldx%lld %.3f ms = %.1f TFLOP/s; MoE at %.0f%% of it\n",
                   (long long)M, (long long)(2 * I), (long long)H, g1.median_s * 1e3, (long long)M, (long long)H, (long long)I, g2.median_s * 1e3,
                   flop / t * 1e-12, 100 * t / tm.median_s);
            printf("@@ moe %s %lld dense %.2f %.4f\n", md->name, (long long)T, flop / t * 1e-12, t * 1e3);
            }
        }
    }
    fflush(stdout);
done:
    bench_tensor_free(ctx, &x), bench_tensor_free(ctx, &lg);
    if (out) tile_free(ctx, out);
    if (ids) tile_free(ctx, ids);
    if (wts) tile_free(ctx, wts);
    if (ws) tile_free(ctx, ws);
    free(hids), free(hw), free(hout), free(scratch);
    return rc;
}

static int bench_model(tile_context *ctx, BenchCopy *cp, const Opts *op, const Model *md, const int64_t *tokens, int ntok, int *skipped) {
    int rc = 0;
    int64_t E = md->e, H = md->h, I = md->i, maxT = 0;
    for (int i = 0; i < ntok; i++)
        if (tokens[i] > maxT) maxT = tokens[i];
    BenchTensor w1, w2, dA;
    memset(&w1, 0, sizeof w1), memset(&w2, 0, sizeof w2), memset(&dA, 0, sizeof dA);
    tile_devptr dC = 0;
    size_t cmax = (size_t)(maxT * md->k) * (size_t)(2 * I > H ? 2 * I : H);
    double t0 = bench_now_s();
    tile_status st = bench_tensor_make(ctx, cp, &w1, TILE_BF16, (size_t)(E * 2 * I * H), 2 / sqrt((double)H), &rng);
    if (st == TILE_OK) st = bench_tensor_make(ctx, cp, &w2, TILE_BF16, (size_t)(E * H * I), 2 / sqrt((double)I), &rng);
    if (st == TILE_OK && op->dense) st = bench_tensor_make(ctx, cp, &dA, TILE_BF16, (size_t)(maxT * md->k) * (size_t)(H > I ? H : I), 1.0, &rng);
    if (st == TILE_OK && op->dense) st = tile_malloc(ctx, cmax * 2, &dC);
    if (st == TILE_OK) st = tile_synchronize(ctx);
    if (st != TILE_OK) {
        fprintf(stderr, "moe_gpu: %s weights: %s\n", md->name, tile_last_error(ctx));
        rc = 1;
        goto done;
    }
    if (json) {
        JsonOut j;
        json_begin(&j, stdout);
        json_str(&j, "bench", "moe_gpu");
        json_str(&j, "kind", "model");
        json_str(&j, "model", md->name);
        json_int(&j, "experts", E);
        json_int(&j, "topk", md->k);
        json_int(&j, "hidden", H);
        json_int(&j, "intermediate", I);
        json_num(&j, "weights_gb", (double)(w1.n + w2.n) * 2e-9);
        json_num(&j, "fill_s", bench_now_s() - t0);
        json_end(&j);
    } else
    printf("%s: %lld experts, top-%lld, hidden %lld, intermediate %lld: %.2f GB of bf16 weights (filled in %.1f s)\n", md->name, (long long)E,
           (long long)md->k, (long long)H, (long long)I, (double)(w1.n + w2.n) * 2e-9, bench_now_s() - t0);
    for (int i = 0; i < ntok; i++) {
        if (op->max_seconds > 0 && bench_now_s() - op->start > op->max_seconds) {
            *skipped += ntok - i;
            break;
        }
        rc |= bench_tokens(ctx, cp, op, md, &w1, &w2, &dA, dC, tokens[i]);
    }
done:
    bench_tensor_free(ctx, &w1), bench_tensor_free(ctx, &w2), bench_tensor_free(ctx, &dA);
    if (dC) tile_free(ctx, dC);
    return rc;
}

static const char default_models[] = "mixtral:8:2:4096:14336,deepseek:256:8:7168:2048";
static const char tiny_models[] = "mixtral-tiny:8:2:64:128,deepseek-tiny:16:8:64:32";

int main(int argc, char **argv) {
    const char *device = NULL, *models = NULL, *tokens_s = NULL;
    int tiny = 0;
    Opts op = {.samples = 10, .check_tokens = 2, .dense = 1, .start = bench_now_s()};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--tiny")) tiny = 1;
        else if (!strcmp(a, "--no-dense")) op.dense = 0;
        else if (!strcmp(a, "--json")) json = 1;
        else if (!v) goto usage;
        else if (!strcmp(a, "--device")) device = v, i++;
        else if (!strcmp(a, "--models")) models = v, i++;
        else if (!strcmp(a, "--tokens")) tokens_s = v, i++;
        else if (!strcmp(a, "--samples")) {
            if (!cli_option_int("moe_gpu", a, v, 1, 1000000, &op.samples)) return 2;
            i++;
        } else if (!strcmp(a, "--check-tokens")) {
            if (!cli_option_int("moe_gpu", a, v, 1, INT32_MAX, &op.check_tokens)) return 2;
            i++;
        } else if (!strcmp(a, "--max-seconds")) {
            if (!cli_option_double("moe_gpu", a, v, 0, 1e9, &op.max_seconds)) return 2;
            i++;
        }
        else goto usage;
    }
    Model md[16];
    int nm = 0;
    for (const char *p = models ? models : tiny ? tiny_models : default_models; *p && nm < 16;) {
        long long e, k, h, in;
        int len = 0;
        size_t nl = strcspn(p, ":");
        if (nl == 0 || nl >= sizeof md[0].name || sscanf(p + nl, ":%lld:%lld:%lld:%lld%n", &e, &k, &h, &in, &len) != 4 || e < 1 || k < 1 ||
            k > 8 || k > e || h < 1 || in < 1) {
            fprintf(stderr, "moe_gpu: bad --models (NAME:EXPERTS:TOPK:HIDDEN:INTER,...)\n");
            return 2;
        }
        memcpy(md[nm].name, p, nl), md[nm].name[nl] = 0;
        md[nm].e = e, md[nm].k = k, md[nm].h = h, md[nm].i = in, nm++;
        p += nl + (size_t)len;
        if (*p == ',') p++;
    }
    int64_t tokens[16];
    int ntok = cli_option_i64_list("moe_gpu", "--tokens", tokens_s ? tokens_s : tiny ? "1,16" : "1,64,4096", 1, INT32_MAX, tokens, 16);
    if (ntok < 0) return 2;

    tile_context *ctx;
    tile_status st = tile_context_create(device, &ctx);
    if (st != TILE_OK) {
        fprintf(stderr, "moe_gpu: cannot open device '%s': %s\n", device ? device : "default", tile_status_string(st));
        return 1;
    }
    tile_device_properties props;
    tile_context_get_properties(ctx, &props);
    BenchCopy cp;
    if (bench_copy_load(ctx, &cp) != TILE_OK) {
        fprintf(stderr, "moe_gpu: the copy kernel: %s\n", tile_last_error(ctx));
        tile_context_destroy(ctx);
        return 1;
    }
    tile_event ev;
    int events = tile_event_create(ctx, &ev) == TILE_OK;
    if (events) tile_event_destroy(ctx, ev);
    fprintf(json ? stderr : stdout, "moe_gpu: bf16 on %s (%s)%s; routing softmax top-k renormalized by the router; timing: median over %d samples, each a\n"
           "  batch of back-to-back calls timed with %s\n",
           props.name, props.arch, props.is_emulator ? "; the emulator's timings mean nothing: checks only" : "", op.samples,
           events ? "device events" : "the host clock around tile_synchronize (no events)");
    int rc = 0, skipped = 0;
    for (int i = 0; i < nm; i++) {
        if (op.max_seconds > 0 && bench_now_s() - op.start > op.max_seconds) {
            skipped += ntok;
            continue;
        }
        rc |= bench_model(ctx, &cp, &op, &md[i], tokens, ntok, &skipped);
    }
    if (skipped && json) {
        char why[128];
        snprintf(why, sizeof why, "%d shape%s skipped: --max-seconds %g reached", skipped, skipped == 1 ? "" : "s", op.max_seconds);
        JsonOut j;
        json_begin(&j, stdout);
        json_str(&j, "bench", "moe_gpu");
        json_str(&j, "skipped", why);
        json_int(&j, "shapes_skipped", skipped);
        json_end(&j);
    } else if (skipped) printf("moe_gpu: %d shape%s skipped: --max-seconds %g reached\n", skipped, skipped == 1 ? "" : "s", op.max_seconds);
    bench_copy_unload(&cp);
    tile_context_destroy(ctx);
    return rc;
usage:
    fprintf(stderr,
            "usage: %s [--device D] [--tiny] [--models NAME:E:K:H:I,...] [--tokens T,...] [--samples N] [--check-tokens N] [--no-dense]\n"
            "       [--max-seconds S] [--json]\n",
            argv[0]);
    return 2;
}
