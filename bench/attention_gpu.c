/* attention_gpu.c - speed of tile_attention_fwd (prefill) and
 * tile_attention_decode_paged (decode) through the launcher API, for
 * bench/gpu/run.sh; the reference side is bench/gpu/attention_ref.py.
 *
 *   build/bench/attention_gpu [--device cuda|emu] [--tiny] [--dtype bf16|f16]
 *       [--prefill B:S:H:D:CAUSAL,...] [--decode B:CTX:HQ:HKV:D:BLOCK,...] [--only prefill|decode]
 *       [--samples N] [--check-rows N] [--max-seconds S]
 *
 * Default shapes (those of issue 7 and of FlashAttention-2's published
 * benchmark: 16k tokens per batch, model width 2048):
 *   prefill  head_dim 64 (32 heads) and 128 (16 heads), seq 1k, 4k, 16k with
 *            batch 16k / seq, causal and not;
 *   decode   Llama-3-8B-like heads (32 query, 8 KV, head_dim 128), one new
 *            token, block size 16, batch x context 1x1k, 1x32k, 16x8k,
 *            64x4k, 256x1k, 256x4k.
 * --tiny: a few small shapes for the emulator (checks only: the emulator's
 * timings mean nothing).
 *
 * Per shape:
 *   1. inputs: periodic random tensors (gpu_common.h), values in [-1, 1);
 *      the output poisoned with 0xff bytes (NaN);
 *   2. one call, synchronized, then the check: no NaN left anywhere in O,
 *      and --check-rows output rows spread over batch, heads and sequence
 *      against a float64 softmax(scale q k^T) v (ref_attention_row, K and
 *      V read row by row from the periodic tensors; max |error| within 2e-3
 *      for f16, 1.6e-2 for bf16: docs/attention.md's tolerances);
 *   3. timed calls (bench_time: median over samples of event-timed batches);
 *      prefill TFLOP/s = 4 B H S^2 D / t, halved when causal (the
 *      convention of FlashAttention's benchmarks); decode GB/s = bytes
 *      that must move (K and V of every context token once, q, o and the
 *      block tables) / t.  Decode rotates over several disjoint sets of
 *      cache blocks (block tables) so that the bytes read add up to at
 *      least 512 MB between two reads of one block: the L2 cannot serve
 *      repeated calls.
 * Lines starting "@@" are for run.sh's table:
 *   @@ prefill D S CAUSAL tile TFLOPS MS
 *   @@ decode B CTX tile GBPS MS SPLITS
 *   @@ copy tile GBPS
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

/* the check and timing members every shape's object has */
static void json_check(JsonOut *j, bool ok, double worst, double tol, long long checked, size_t unwritten, double first_s) {
    json_str(j, "check", ok ? "ok" : "FAILED");
    json_num(j, "max_abs_err", worst);
    json_num(j, "tolerance", tol);
    json_int(j, "rows_checked", checked);
    json_uint(j, "unwritten", unwritten);
    json_num(j, "first_call_ms", first_s * 1e3);
}

static void json_timing(JsonOut *j, const BenchTiming *tm) {
    json_num(j, "median_ms", tm->median_s * 1e3);
    json_num(j, "min_ms", tm->min_s * 1e3);
    json_num(j, "max_ms", tm->max_s * 1e3);
    json_int(j, "samples", tm->samples);
    json_int(j, "batch", tm->batch);
}

typedef struct PrefillShape {
    int64_t b, s, h, d;
    int causal;
} PrefillShape;
typedef struct DecodeShape {
    int64_t b, ctx, hq, hkv, d, bs;
} DecodeShape;

typedef struct Opts {
    tile_dtype dt;
    int samples, check_rows;
    double max_seconds, start;
} Opts;

static uint64_t rng = 0x9E3779B97F4A7C15ull;

/* ---- prefill ---- */
typedef struct PrefillRun {
    tile_context *ctx;
    tile_attention_args a;
} PrefillRun;
static tile_status prefill_call(void *u) {
    PrefillRun *r = u;
    return tile_attention_fwd(r->ctx, &r->a);
}

/* K and V rows for ref_attention_row, read from the periodic tensors into one scratch row:
 * a contiguous [B, S, H, D] problem's (b, h), or (table != NULL) a paged cache's sequence */
typedef struct KvRows {
    const BenchTensor *k, *v;
    tile_dtype dt;
    int64_t b, h, seq, heads, head_dim; /* prefill: [b, j, h]; decode: h is the KV head, seq the block size */
    const int32_t *table;               /* decode: the sequence's block table */
    double *row;
} KvRows;
static const double *kv_row(void *u, int64_t j, int value) {
    const KvRows *r = u;
    int64_t tok = r->table ? r->table[j / r->seq] * r->seq + j % r->seq : r->b * r->seq + j;
    bench_tensor_row(value ? r->v : r->k, r->dt, (size_t)((tok * r->heads + r->h) * r->head_dim), (size_t)r->head_dim, r->row);
    return r->row;
}

/* max |O - ref| over one row (b, i, h) of a contiguous [B, S, H, D] problem; row [3 D] scratch */
static double prefill_row_error(const BenchTensor *q, const BenchTensor *k, const BenchTensor *v, const uint16_t *o, tile_dtype dt,
                                const PrefillShape *s, int64_t b, int64_t i, int64_t h, double *row) {
    int64_t S = s->s, H = s->h, D = s->d, begin, end;
    double *qr = row, *want = row + 2 * D;
    size_t qoff = (size_t)(((b * S + i) * H + h) * D);
    bench_tensor_row(q, dt, qoff, (size_t)D, qr);
    KvRows kv = {k, v, dt, b, h, S, H, D, NULL, row + D};
    ref_attention_keys(i, S, S, s->causal, -1, -1, &begin, &end);
    ref_attention_row(D, qr, 1.0 / sqrt((double)D), begin, end, kv_row, &kv, want);
    double worst = 0;
    for (int64_t d = 0; d < D; d++) {
        double e = fabs(bench_from_16(dt, o[qoff + (size_t)d]) - want[d]);
        if (!(e <= worst)) worst = e;
    }
    return worst;
}

static int bench_prefill(tile_context *ctx, BenchCopy *cp, const Opts *op, const PrefillShape *s) {
    int rc = 1;
    tile_dtype dt = op->dt;
    size_t n = (size_t)(s->b * s->s * s->h * s->d);
    BenchTensor q, k, v;
    memset(&q, 0, sizeof q), memset(&k, 0, sizeof k), memset(&v, 0, sizeof v);
    tile_devptr o = 0;
    uint16_t *ho = NULL;
    double *acc = NULL;
    tile_status st = bench_tensor_make(ctx, cp, &q, dt, n, 1.0, &rng);
    if (st == TILE_OK) st = bench_tensor_make(ctx, cp, &k, dt, n, 1.0, &rng);
    if (st == TILE_OK) st = bench_tensor_make(ctx, cp, &v, dt, n, 1.0, &rng);
    if (st == TILE_OK) st = tile_malloc(ctx, n * 2, &o);
    if (st == TILE_OK) st = tile_memset(ctx, o, 0xff, n * 2);
    if (st != TILE_OK) {
        fprintf(stderr, "attention_gpu: inputs: %s\n", tile_last_error(ctx));
        goto done;
    }
    PrefillRun r = {ctx, {.dtype = dt, .batch = s->b, .heads_q = s->h, .heads_kv = s->h, .head_dim = s->d, .seq_q = s->s, .seq_k = s->s,
                          .q = q.d, .k = k.d, .v = v.d, .o = o, .causal = s->causal, .window_left = -1, .window_right = -1}};
    double t0 = bench_now_s();
    st = prefill_call(&r);
    if (st == TILE_OK) st = tile_synchronize(ctx);
    double first = bench_now_s() - t0;
    if (st != TILE_OK) {
        fprintf(stderr, "attention_gpu: tile_attention_fwd: %s\n", tile_last_error(ctx));
        goto done;
    }
    /* 2. check */
    ho = malloc(n * 2), acc = malloc(sizeof(double) * 3 * (size_t)s->d);
    if (!ho || !acc || tile_memcpy_dtoh(ctx, ho, o, n * 2) != TILE_OK) {
        fprintf(stderr, "attention_gpu: cannot read O back\n");
        goto done;
    }
    size_t unwritten = 0;
    for (size_t i = 0; i < n; i++) unwritten += isnan(bench_from_16(dt, ho[i]));
    int64_t rows = s->b * s->h * s->s, want = op->check_rows < rows ? op->check_rows : rows, checked = 0;
    double worst = 0, tol = dt == TILE_F16 ? 2e-3 : 1.6e-2;
    for (int64_t c = 0; c < want; c++, checked++) {
        /* spread over the rows, the last row (all keys when causal) included */
        int64_t row = want > 1 ? c * (rows - 1) / (want - 1) : rows - 1;
        int64_t b = row / (s->h * s->s), h = row / s->s % s->h, i = row % s->s;
        double e = prefill_row_error(&q, &k, &v, ho, dt, s, b, i, h, acc);
        if (!(e <= worst)) worst = e;
    }
    bool ok = unwritten == 0 && worst <= tol;
    /* 3. time */
    BenchTiming tm;
    memset(&tm, 0, sizeof tm);
    if (ok && (st = bench_time(ctx, prefill_call, &r, op->samples, 0.1, 0.01, &tm)) != TILE_OK)
        fprintf(stderr, "attention_gpu: timing: %s\n", tile_last_error(ctx));
    double flop = 4.0 * (double)s->b * (double)s->h * (double)s->s * (double)s->s * (double)s->d * (s->causal ? 0.5 : 1.0);
    double tf = tm.median_s > 0 ? flop / tm.median_s * 1e-12 : 0;
    if (json) {
        JsonOut j;
        json_begin(&j, stdout);
        json_str(&j, "bench", "attention_gpu");
        json_str(&j, "kind", "prefill");
        json_str(&j, "dtype", dt == TILE_F16 ? "f16" : "bf16");
        json_int(&j, "b", s->b), json_int(&j, "s", s->s), json_int(&j, "h", s->h), json_int(&j, "d", s->d);
        json_bool(&j, "causal", s->causal);
        json_check(&j, ok, worst, tol, (long long)checked, unwritten, first);
        if (ok && st == TILE_OK) json_timing(&j, &tm), json_num(&j, "tflops", tf);
        json_end(&j);
    } else {
    printf("  prefill b%lld s%lld h%lld d%lld %s: check %s (max |err| %.2e, tolerance %.1e, %lld rows; %zu unwritten); first call %.1f ms",
           (long long)s->b, (long long)s->s, (long long)s->h, (long long)s->d, s->causal ? "causal " : "full   ", ok ? "ok" : "FAILED", worst,
           tol, (long long)checked, unwritten, first * 1e3);
    if (ok && st == TILE_OK)
        printf("; median %.3f ms (min %.3f, max %.3f; %d samples x %d) = %.1f TFLOP/s\n", tm.median_s * 1e3, tm.min_s * 1e3, tm.max_s * 1e3,
               tm.samples, tm.batch, tf);
    else printf("\n");
    if (ok && st == TILE_OK) printf("@@ prefill %lld %lld %d tile %.2f %.4f\n", (long long)s->d, (long long)s->s, s->causal, tf, tm.median_s * 1e3);
    }
    fflush(stdout);
    rc = ok && st == TILE_OK ? 0 : 1;
done:
    bench_tensor_free(ctx, &q), bench_tensor_free(ctx, &k), bench_tensor_free(ctx, &v);
    if (o) tile_free(ctx, o);
    free(ho), free(acc);
    return rc;
}

/* ---- decode ---- */
typedef struct DecodeRun {
    tile_context *ctx;
    tile_paged_attention_args a;
    tile_devptr tables;    /* nsets tables of [b, nb] i32, one after the other */
    int64_t nsets, nb, b;
    int64_t next;
} DecodeRun;
static tile_status decode_call(void *u) {
    DecodeRun *r = u;
    r->a.block_tables = r->tables + (tile_devptr)(4 * (r->next * r->b * r->nb));
    r->next = (r->next + 1) % r->nsets;
    return tile_attention_decode_paged(r->ctx, &r->a);
}

static int bench_decode(tile_context *ctx, BenchCopy *cp, const Opts *op, const DecodeShape *s, double copy_gbs) {
    int rc = 1;
    tile_dtype dt = op->dt;
    int64_t B = s->b, C = s->ctx, Hq = s->hq, Hk = s->hkv, D = s->d, bs = s->bs, nb = (C + bs - 1) / bs;
    double kv_bytes = 2.0 * (double)B * (double)C * (double)Hk * (double)D * 2;
    int64_t nsets = (int64_t)ceil(512e6 / kv_bytes);
    if (nsets < 1) nsets = 1;
    if (nsets > 64) nsets = 64;
    int64_t num_blocks = nsets * B * nb;
    size_t ncache = (size_t)(num_blocks * bs * Hk * D), nq = (size_t)(B * Hq * D), ntab = (size_t)num_blocks;
    BenchTensor kc, vc, q;
    memset(&kc, 0, sizeof kc), memset(&vc, 0, sizeof vc), memset(&q, 0, sizeof q);
    tile_devptr o = 0, tables = 0, lens = 0, ws = 0;
    int32_t *ht = malloc(sizeof(int32_t) * ntab), *hl = malloc(sizeof(int32_t) * (size_t)B);
    uint16_t *ho = malloc(nq * 2);
    double *acc = malloc(sizeof(double) * 3 * (size_t)D);
    if (!ht || !hl || !ho || !acc) {
        fprintf(stderr, "attention_gpu: out of host memory\n");
        goto done;
    }
    /* every block once, shuffled, set by set */
    for (size_t i = 0; i < ntab; i++) ht[i] = (int32_t)i;
    for (size_t i = ntab - 1; i > 0; i--) {
        size_t j = (size_t)(bench_next_u64(&rng) % (uint64_t)(i + 1));
        int32_t x = ht[i];
        ht[i] = ht[j], ht[j] = x;
    }
    for (int64_t i = 0; i < B; i++) hl[i] = (int32_t)C;
    tile_status st = bench_tensor_make(ctx, cp, &kc, dt, ncache, 1.0, &rng);
    if (st == TILE_OK) st = bench_tensor_make(ctx, cp, &vc, dt, ncache, 1.0, &rng);
    if (st == TILE_OK) st = bench_tensor_make(ctx, cp, &q, dt, nq, 1.0, &rng);
    if (st == TILE_OK) st = tile_malloc(ctx, nq * 2, &o);
    if (st == TILE_OK) st = tile_malloc(ctx, ntab * 4, &tables);
    if (st == TILE_OK) st = tile_malloc(ctx, (size_t)B * 4, &lens);
    if (st == TILE_OK) st = tile_memcpy_htod(ctx, tables, ht, ntab * 4);
    if (st == TILE_OK) st = tile_memcpy_htod(ctx, lens, hl, (size_t)B * 4);
    if (st == TILE_OK) st = tile_memset(ctx, o, 0xff, nq * 2);
    if (st != TILE_OK) {
        fprintf(stderr, "attention_gpu: inputs: %s\n", tile_last_error(ctx));
        goto done;
    }
    DecodeRun r = {ctx,
                   {.dtype = dt, .kv_dtype = dt, .num_seqs = B, .heads_q = Hq, .heads_kv = Hk, .head_dim = D, .num_tokens = 1,
                    .block_size = bs, .num_blocks = num_blocks, .q = q.d, .o = o, .k_cache = kc.d, .v_cache = vc.d,
                    .block_tables = tables, .block_table_stride = nb, .context_lens = lens, .max_context_len = C},
                   tables, nsets, nb, B, 0};
    size_t ws_bytes = 0;
    int splits = 1;
    st = tile_paged_attention_workspace_size(ctx, &r.a, &ws_bytes, &splits);
    if (st == TILE_OK && ws_bytes) st = tile_malloc(ctx, ws_bytes, &ws);
    r.a.workspace = ws, r.a.workspace_bytes = ws_bytes;
    double t0 = bench_now_s();
    if (st == TILE_OK) st = decode_call(&r); /* set 0 */
    if (st == TILE_OK) st = tile_synchronize(ctx);
    double first = bench_now_s() - t0;
    if (st != TILE_OK) {
        fprintf(stderr, "attention_gpu: tile_attention_decode_paged: %s\n", tile_last_error(ctx));
        goto done;
    }
    if (tile_memcpy_dtoh(ctx, ho, o, nq * 2) != TILE_OK) {
        fprintf(stderr, "attention_gpu: cannot read O back\n");
        goto done;
    }
    size_t unwritten = 0;
    for (size_t i = 0; i < nq; i++) unwritten += isnan(bench_from_16(dt, ho[i]));
    /* rows (sequence, query head) against float64 through set 0's table */
    int64_t rows = B * Hq, want = op->check_rows < rows ? op->check_rows : rows, checked = 0;
    double worst = 0, tol = dt == TILE_F16 ? 2e-3 : 1.6e-2, scale = 1.0 / sqrt((double)D);
    for (int64_t c = 0; c < want; c++, checked++) {
        int64_t row = want > 1 ? c * (rows - 1) / (want - 1) : rows - 1, sq = row / Hq, h = row % Hq, g = h / (Hq / Hk);
        size_t qoff = (size_t)((sq * Hq + h) * D);
        double *qr = acc + D;
        bench_tensor_row(&q, dt, qoff, (size_t)D, qr);
        KvRows kv = {&kc, &vc, dt, 0, g, bs, Hk, D, ht + sq * nb, acc + 2 * D};
        ref_attention_row(D, qr, scale, 0, C, kv_row, &kv, acc);
        for (int64_t d = 0; d < D; d++) {
            double e = fabs(bench_from_16(dt, ho[qoff + (size_t)d]) - acc[d]);
            if (!(e <= worst)) worst = e;
        }
    }
    bool ok = unwritten == 0 && worst <= tol;
    BenchTiming tm;
    memset(&tm, 0, sizeof tm);
    if (ok && (st = bench_time(ctx, decode_call, &r, op->samples, 0.1, 0.005, &tm)) != TILE_OK)
        fprintf(stderr, "attention_gpu: timing: %s\n", tile_last_error(ctx));
    double bytes = kv_bytes + 2.0 * 2 * (double)nq + 4.0 * (double)(B * nb);
    double gbs = tm.median_s > 0 ? bytes / tm.median_s * 1e-9 : 0;
    if (json) {
        JsonOut j;
        json_begin(&j, stdout);
        json_str(&j, "bench", "attention_gpu");
        json_str(&j, "kind", "decode");
        json_str(&j, "dtype", dt == TILE_F16 ? "f16" : "bf16");
        json_int(&j, "b", B), json_int(&j, "ctx", C), json_int(&j, "hq", Hq), json_int(&j, "hkv", Hk), json_int(&j, "d", D);
        json_int(&j, "block", bs);
        json_int(&j, "splits", splits);
        json_int(&j, "table_sets", nsets);
        json_check(&j, ok, worst, tol, (long long)checked, unwritten, first);
        if (ok && st == TILE_OK) {
            json_timing(&j, &tm);
            json_num(&j, "gbps", gbs);
            if (copy_gbs > 0) json_num(&j, "pct_of_copy", 100 * gbs / copy_gbs);
        }
        json_end(&j);
    } else {
    printf("  decode b%lld ctx%lld h%lld/%lld d%lld block %lld, %d split%s, %lld table set%s: check %s (max |err| %.2e, tolerance %.1e, "
           "%lld rows; %zu unwritten); first call %.1f ms",
           (long long)B, (long long)C, (long long)Hq, (long long)Hk, (long long)D, (long long)bs, splits, splits == 1 ? "" : "s",
           (long long)nsets, nsets == 1 ? "" : "s", ok ? "ok" : "FAILED", worst, tol, (long long)checked, unwritten, first * 1e3);
    if (ok && st == TILE_OK) {
        printf("; median %.4f ms (min %.4f, max %.4f; %d samples x %d) = %.1f GB/s", tm.median_s * 1e3, tm.min_s * 1e3, tm.max_s * 1e3,
               tm.samples, tm.batch, gbs);
        if (copy_gbs > 0) printf(" (%.0f%% of the copy kernel's)", 100 * gbs / copy_gbs);
        printf("\n@@ decode %lld %lld tile %.1f %.4f %d\n", (long long)B, (long long)C, gbs, tm.median_s * 1e3, splits);
    } else printf("\n");
    }
    fflush(stdout);
    rc = ok && st == TILE_OK ? 0 : 1;
done:
    bench_tensor_free(ctx, &kc), bench_tensor_free(ctx, &vc), bench_tensor_free(ctx, &q);
    if (o) tile_free(ctx, o);
    if (tables) tile_free(ctx, tables);
    if (lens) tile_free(ctx, lens);
    if (ws) tile_free(ctx, ws);
    free(ht), free(hl), free(ho), free(acc);
    return rc;
}

/* ---- shapes ---- */
static int parse_prefill(const char *list, PrefillShape *out, int max) {
    int n = 0;
    for (const char *p = list; *p && n < max;) {
        long long b, s, h, d;
        int c;
        if (sscanf(p, "%lld:%lld:%lld:%lld:%d", &b, &s, &h, &d, &c) != 5 || b < 1 || s < 1 || h < 1 || d < 1) return -1;
        out[n++] = (PrefillShape){b, s, h, d, c != 0};
        p += strcspn(p, ",");
        if (*p == ',') p++;
    }
    return n;
}
static int parse_decode(const char *list, DecodeShape *out, int max) {
    int n = 0;
    for (const char *p = list; *p && n < max;) {
        long long b, c, hq, hk, d, bs;
        if (sscanf(p, "%lld:%lld:%lld:%lld:%lld:%lld", &b, &c, &hq, &hk, &d, &bs) != 6 || b < 1 || c < 1 || hq < 1 || hk < 1 || d < 1 ||
            bs < 1 || hq % hk)
            return -1;
        out[n++] = (DecodeShape){b, c, hq, hk, d, bs};
        p += strcspn(p, ",");
        if (*p == ',') p++;
    }
    return n;
}

static const char default_prefill[] = "16:1024:32:64:0,16:1024:32:64:1,4:4096:32:64:0,4:4096:32:64:1,1:16384:32:64:0,1:16384:32:64:1,"
                                      "16:1024:16:128:0,16:1024:16:128:1,4:4096:16:128:0,4:4096:16:128:1,1:16384:16:128:0,1:16384:16:128:1";
static const char default_decode[] = "1:1024:32:8:128:16,1:32768:32:8:128:16,16:8192:32:8:128:16,64:4096:32:8:128:16,256:1024:32:8:128:16,"
                                     "256:4096:32:8:128:16";
static const char tiny_prefill[] = "1:64:2:64:0,1:64:2:64:1,1:48:1:128:1";
static const char tiny_decode[] = "2:40:4:2:64:16,1:300:4:1:64:16";

int main(int argc, char **argv) {
    const char *device = NULL, *prefill = NULL, *decode = NULL, *only = NULL;
    int tiny = 0;
    Opts op = {.dt = TILE_BF16, .samples = 20, .check_rows = 48, .max_seconds = 0, .start = bench_now_s()};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--tiny")) tiny = 1;
        else if (!strcmp(a, "--json")) json = 1;
        else if (!v) goto usage;
        else if (!strcmp(a, "--device")) device = v, i++;
        else if (!strcmp(a, "--prefill")) prefill = v, i++;
        else if (!strcmp(a, "--decode")) decode = v, i++;
        else if (!strcmp(a, "--only")) only = v, i++;
        else if (!strcmp(a, "--samples")) {
            if (!cli_option_int("attention_gpu", a, v, 1, 1000000, &op.samples)) return 2;
            i++;
        } else if (!strcmp(a, "--check-rows")) {
            if (!cli_option_int("attention_gpu", a, v, 1, INT32_MAX, &op.check_rows)) return 2;
            i++;
        } else if (!strcmp(a, "--max-seconds")) {
            if (!cli_option_double("attention_gpu", a, v, 0, 1e9, &op.max_seconds)) return 2;
            i++;
        }
        else if (!strcmp(a, "--dtype") && (!strcmp(v, "bf16") || !strcmp(v, "f16"))) op.dt = v[0] == 'f' ? TILE_F16 : TILE_BF16, i++;
        else goto usage;
    }
    if (only && strcmp(only, "prefill") && strcmp(only, "decode")) goto usage;
    PrefillShape ps[64];
    DecodeShape ds[64];
    int np = (!only || !strcmp(only, "prefill")) ? parse_prefill(prefill ? prefill : tiny ? tiny_prefill : default_prefill, ps, 64) : 0;
    int ndec = (!only || !strcmp(only, "decode")) ? parse_decode(decode ? decode : tiny ? tiny_decode : default_decode, ds, 64) : 0;
    if (np < 0 || ndec < 0) {
        fprintf(stderr, "attention_gpu: bad shape list (prefill B:S:H:D:CAUSAL, decode B:CTX:HQ:HKV:D:BLOCK, comma-separated)\n");
        return 2;
    }

    tile_context *ctx;
    tile_status st = tile_context_create(device, &ctx);
    if (st != TILE_OK) {
        fprintf(stderr, "attention_gpu: cannot open device '%s': %s\n", device ? device : "default", tile_status_string(st));
        return 1;
    }
    tile_device_properties props;
    tile_context_get_properties(ctx, &props);
    BenchCopy cp;
    if (bench_copy_load(ctx, &cp) != TILE_OK) {
        fprintf(stderr, "attention_gpu: the copy kernel: %s\n", tile_last_error(ctx));
        tile_context_destroy(ctx);
        return 1;
    }
    fprintf(json ? stderr : stdout, "attention_gpu: %s on %s (%s)%s\n", op.dt == TILE_F16 ? "f16" : "bf16", props.name, props.arch,
           props.is_emulator ? "; the emulator's timings mean nothing: checks only" : "");
    BenchTiming ct;
    double copy_gbs = bench_copy_bandwidth(ctx, &cp, props.is_emulator ? ((size_t)1 << 20) : ((size_t)1 << 30), op.samples, &ct);
    if (json) {
        JsonOut j;
        json_begin(&j, stdout);
        json_str(&j, "bench", "attention_gpu");
        json_str(&j, "kind", "copy");
        json_str(&j, "device", props.name);
        json_str(&j, "arch", props.arch);
        json_bool(&j, "emulator", props.is_emulator);
        json_int(&j, "bytes", props.is_emulator ? (1 << 20) : (1 << 30));
        if (copy_gbs > 0) {
            json_num(&j, "gbps", copy_gbs);
            json_str(&j, "timed_with", bench_timing_how(&ct));
            json_int(&j, "samples", op.samples);
        } else json_str(&j, "skipped", tile_last_error(ctx));
        json_end(&j);
    } else if (copy_gbs > 0) {
        printf("  copy kernel (tile, %s): %.1f GB/s (bytes read + written; timed with %s)\n", props.is_emulator ? "1 MiB" : "1 GiB", copy_gbs,
               bench_timing_how(&ct));
        printf("@@ copy tile %.1f\n", copy_gbs);
        printf("  timing: median over %d samples, each a batch of back-to-back calls timed with %s\n", op.samples, bench_timing_how(&ct));
    } else printf("  copy kernel: could not be timed: %s\n", tile_last_error(ctx));
    int rc = 0, skipped = 0;
    for (int i = 0; i < np + ndec; i++) {
        if (op.max_seconds > 0 && bench_now_s() - op.start > op.max_seconds) {
            skipped = np + ndec - i;
            break;
        }
        rc |= i < np ? bench_prefill(ctx, &cp, &op, &ps[i]) : bench_decode(ctx, &cp, &op, &ds[i - np], copy_gbs);
    }
    if (skipped && json) {
        char why[128];
        snprintf(why, sizeof why, "%d shape%s skipped: --max-seconds %g reached", skipped, skipped == 1 ? "" : "s", op.max_seconds);
        JsonOut j;
        json_begin(&j, stdout);
        json_str(&j, "bench", "attention_gpu");
        json_str(&j, "skipped", why);
        json_int(&j, "shapes_skipped", skipped);
        json_end(&j);
    } else if (skipped) printf("attention_gpu: %d shape%s skipped: --max-seconds %g reached\n", skipped, skipped == 1 ? "" : "s", op.max_seconds);
    bench_copy_unload(&cp);
    tile_context_destroy(ctx);
    return rc;
usage:
    fprintf(stderr,
            "usage: %s [--device D] [--tiny] [--dtype bf16|f16] [--prefill B:S:H:D:CAUSAL,...] [--decode B:CTX:HQ:HKV:D:BLOCK,...]\n"
            "       [--only prefill|decode] [--samples N] [--check-rows N] [--max-seconds S] [--json]\n",
            argv[0]);
    return 2;
}
