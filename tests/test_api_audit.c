/* test_api_audit.c - promises of include/tile/tile.h and docs/runtime.md, docs/attention.md, docs/moe.md
 * checked the way a user reads them, where the area's own test programs did not: the GEMM epilogue of
 * every type pair through tile_gemm (i8's f32 epilogue rounded to nearest even, exactly; GELU with both
 * operands transposed; k = 0) on emu and emu:sm_90a against float64 on fresh inputs with C poisoned past
 * n; calls with nothing to compute; attention with no keys at all; and argument errors that came back
 * without a message (tile_tune_lookup's too-small buffer, tile_aot_table_kernel's NULLs) or were
 * accepted depending on another argument (tile_gemm_with_config's SPLIT_K) or silently resolved (a configuration
 * name given twice). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "include/tile/tile.h"
#include "ref/ref.h"
#include "support/hostfloat.h"
#include "tests/test_rng.h"

static char cache_dir[64];

static tile_context *open_on(const char *device) {
    snprintf(cache_dir, sizeof cache_dir, "/tmp/tile-test-audit-XXXXXX");
    cr_assert(mkdtemp(cache_dir));
    tile_context_options o = {.size = sizeof o, .device = device, .cache_dir = cache_dir, .emu_host_threads = 2};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK, "%s", tile_last_error(NULL));
    return ctx;
}

static void close_ctx(tile_context *ctx) {
    tile_context_destroy(ctx);
    tile_cache_clear(cache_dir, 1);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", cache_dir);
    cr_assert_eq(system(cmd), 0);
}

static tile_devptr upload(tile_context *ctx, const void *host, size_t bytes) {
    tile_devptr d;
    cr_assert_eq(tile_malloc(ctx, bytes, &d), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_htod(ctx, d, host, bytes), TILE_OK, "%s", tile_last_error(ctx));
    return d;
}

/* ============================ tile_gemm's epilogue ============================ */

/* x as the type stores it; *exact the value it holds.  Integers: i8 in [-128, 127], i32 (C, bias) in [-1000, 1000). */
static void put(tile_dtype t, void *buf, size_t i, double x, double *exact) {
    switch (t) {
    case TILE_F16: ((uint16_t *)buf)[i] = f32_to_f16((float)x), *exact = f16_to_d(((uint16_t *)buf)[i]); break;
    case TILE_BF16: ((uint16_t *)buf)[i] = f32_to_bf16((float)x), *exact = bf16_to_d(((uint16_t *)buf)[i]); break;
    case TILE_F32: ((float *)buf)[i] = (float)x, *exact = (float)x; break;
    case TILE_I8: ((int8_t *)buf)[i] = (int8_t)floor(x * 128), *exact = ((int8_t *)buf)[i]; break;
    case TILE_I32: ((int32_t *)buf)[i] = (int32_t)floor(x * 1000), *exact = ((int32_t *)buf)[i]; break;
    default: cr_assert_fail("no such input type");
    }
}

static double get(tile_dtype t, const void *buf, size_t i) {
    switch (t) {
    case TILE_F16: return f16_to_d(((const uint16_t *)buf)[i]);
    case TILE_BF16: return bf16_to_d(((const uint16_t *)buf)[i]);
    case TILE_F32: return ((const float *)buf)[i];
    default: return ((const int32_t *)buf)[i];
    }
}

/* the bit pattern that marks an element the call must not write */
static void poison(tile_dtype t, void *buf, size_t i) {
    switch (t) {
    case TILE_F16: ((uint16_t *)buf)[i] = 0x7e00; break;
    case TILE_BF16: ((uint16_t *)buf)[i] = 0x7fc0; break;
    case TILE_F32: ((float *)buf)[i] = NAN; break;
    default: ((int32_t *)buf)[i] = (int32_t)0x80000001; break;
    }
}

typedef struct GemmCase {
    tile_dtype in, out;
    int m, n, k, ta, tb;
    float alpha, beta;
    bool bias;
    tile_activation act;
} GemmCase;

/* D = act(alpha A B + beta C + bias) through tile_gemm, every element against float64; C's columns past n
 * (ldc > n) and, without beta, C itself are poisoned first.  i8: the sums are exact in i32 and, with the
 * values drawn here (alpha and beta multiples of 1/4, |C|, |bias| < 1000), so is the f32 epilogue: the
 * result must be the float64 value rounded to nearest even, bit for bit (docs/runtime.md). */
static void gemm_case(tile_context *ctx, const GemmCase *c) {
    int m = c->m, n = c->n, k = c->k;
    int64_t lda = (c->ta ? m : k) + 3, ldb = (c->tb ? k : n) + 5, ldc = n + 2;
    size_t an = (size_t)(c->ta ? k : m) * lda + 1, bn = (size_t)(c->tb ? n : k) * ldb + 1, cn = (size_t)m * ldc + 1;
    size_t ib = tile_dtype_size(c->in), ob = tile_dtype_size(c->out);
    void *ha = malloc(an * ib), *hb = malloc(bn * ib), *hc = malloc(cn * ob), *hbias = malloc((size_t)n * ob + 4);
    double *va = malloc(an * 8), *vb = malloc(bn * 8), *vc = malloc(cn * 8), *vbias = malloc((size_t)n * 8 + 8);
    for (size_t i = 0; i < an; i++) put(c->in, ha, i, urand(), &va[i]);
    for (size_t i = 0; i < bn; i++) put(c->in, hb, i, urand(), &vb[i]);
    for (size_t i = 0; i < cn; i++) {
        put(c->out, hc, i, urand(), &vc[i]);
        if (c->beta == 0 || i % (size_t)ldc >= (size_t)n) poison(c->out, hc, i), vc[i] = NAN;
    }
    for (int j = 0; j < n; j++) put(c->out, hbias, (size_t)j, urand(), &vbias[j]);
    void *orig = malloc(cn * ob);
    memcpy(orig, hc, cn * ob);
    tile_devptr da = upload(ctx, ha, an * ib), db = upload(ctx, hb, bn * ib), dc = upload(ctx, hc, cn * ob),
                dbias = upload(ctx, hbias, (size_t)n * ob + 4);
    tile_gemm_args g = {.size = sizeof g, .m = m, .n = n, .k = k, .a = da, .lda = lda, .trans_a = c->ta, .b = db, .ldb = ldb,
                        .trans_b = c->tb, .c = dc, .ldc = ldc, .in_dtype = c->in, .out_dtype = c->out, .alpha = c->alpha,
                        .beta = c->beta, .bias = c->bias ? dbias : 0, .activation = c->act};
    tile_status st = tile_gemm(ctx, &g);
    cr_assert_eq(st, TILE_OK, "tile_gemm %s->%s %dx%dx%d: %s: %s", tile_dtype_name(c->in), tile_dtype_name(c->out), m, n, k,
                 tile_status_string(st), tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, hc, dc, cn * ob), TILE_OK);
    ref_gemm_args r = {.m = m, .n = n, .k = k, .a = va, .lda = lda, .trans_a = c->ta, .b = vb, .ldb = ldb, .trans_b = c->tb,
                       .alpha = c->alpha, .beta = c->beta, .c = vc, .ldc = ldc, .bias = c->bias ? vbias : NULL, .activation = c->act};
    double rel = c->in == TILE_F32 ? 4e-3 : 1e-5; /* tf32 products */
    double out_rel = c->out == TILE_F16 ? 1.0 / 2048 : c->out == TILE_BF16 ? 1.0 / 256 : 0; /* half an ulp of the store */
    for (int i = 0; i < m; i++)
        for (int j = 0; j < ldc; j++) {
            size_t e = (size_t)i * ldc + j;
            if (j >= n) {
                cr_assert(!memcmp((char *)hc + e * ob, (char *)orig + e * ob, ob), "%s->%s %dx%dx%d: C[%d][%d], past n, was written",
                          tile_dtype_name(c->in), tile_dtype_name(c->out), m, n, k, i, j);
                continue;
            }
            double mag, want = ref_gemm_at(&r, i, j, &mag), got = get(c->out, hc, e), tol;
            if (c->out == TILE_I32) want = nearbyint(want), tol = 0; /* ties to even */
            else tol = rel * mag + out_rel * fabs(want) + 1e-6 * (1 + mag);
            cr_assert(fabs(got - want) <= tol, "%s->%s %dx%dx%d ta=%d tb=%d act=%d: D[%d][%d] = %.9g, want %.9g +- %.3g (seed %llu)",
                      tile_dtype_name(c->in), tile_dtype_name(c->out), m, n, k, c->ta, c->tb, c->act, i, j, got, want, tol,
                      (unsigned long long)seed);
        }
    tile_free(ctx, da), tile_free(ctx, db), tile_free(ctx, dc), tile_free(ctx, dbias);
    free(ha), free(hb), free(hc), free(hbias), free(va), free(vb), free(vc), free(vbias), free(orig);
}

static const GemmCase gemm_cases[] = {
    /* i8: half-integers before rounding, so ties occur; relu after the bias */
    {TILE_I8, TILE_I32, 13, 11, 37, 0, 1, 0.5f, 0.5f, true, TILE_ACT_RELU},
    {TILE_I8, TILE_I32, 9, 21, 18, 1, 0, 0.25f, -0.75f, true, TILE_ACT_NONE},
    /* k = 0: nothing is read from A and B, D = act(beta C + bias), i8's rounded as above */
    {TILE_I8, TILE_I32, 5, 7, 0, 0, 0, 1, 0.5f, true, TILE_ACT_NONE},
    {TILE_F16, TILE_F32, 5, 7, 0, 1, 1, 1, 0.5f, true, TILE_ACT_GELU},
    /* 16-bit outputs with the whole epilogue, both operands transposed */
    {TILE_F16, TILE_F16, 19, 23, 29, 1, 1, 0.75f, 0.5f, true, TILE_ACT_GELU},
    {TILE_BF16, TILE_BF16, 19, 23, 29, 0, 0, 1, -1, true, TILE_ACT_SILU},
    {TILE_F32, TILE_F32, 7, 45, 33, 1, 0, 2, 0.5f, true, TILE_ACT_GELU},
};

static void gemm_epilogues_on(const char *device) {
    seed_rng();
    tile_context *ctx = open_on(device);
    for (size_t i = 0; i < sizeof gemm_cases / sizeof gemm_cases[0]; i++) gemm_case(ctx, &gemm_cases[i]);
    close_ctx(ctx);
}

Test(api_audit, gemm_epilogues, .timeout = 300) { gemm_epilogues_on("emu"); }
Test(api_audit, gemm_epilogues_sm90a, .timeout = 300) { gemm_epilogues_on("emu:sm_90a"); }

/* A SPLIT_K outside 1..64 is refused whatever the epilogue: it was accepted (and run as SPLIT_K=1) when a bias,
 * beta, activation, a 16-bit output or ldc != n made split-K fall back, and refused otherwise. */
Test(api_audit, gemm_split_k_out_of_range_refused) {
    tile_context *ctx = open_on("emu");
    tile_devptr a, b, c, bias;
    cr_assert_eq(tile_malloc(ctx, 1 << 12, &a), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 1 << 12, &b), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 1 << 12, &c), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 256, &bias), TILE_OK);
    static const char *const big[] = {"SPLIT_K=1000", NULL}, *const zero[] = {"SPLIT_K=0", NULL};
    for (int epi = 0; epi < 4; epi++) {
        tile_gemm_args g = {.size = sizeof g, .m = 8, .n = 8, .k = 16, .a = a, .lda = 16, .b = b, .ldb = 8, .c = c, .ldc = 8,
                            .in_dtype = TILE_F16, .out_dtype = TILE_F32, .alpha = 1};
        if (epi == 1) g.bias = bias;
        if (epi == 2) g.beta = 1;
        if (epi == 3) g.out_dtype = TILE_F16;
        tile_status st = tile_gemm_with_config(ctx, &g, big);
        cr_expect_eq(st, TILE_ERROR_INVALID_VALUE, "epilogue %d: SPLIT_K=1000 gave %s", epi, tile_status_string(st));
        cr_expect(strstr(tile_last_error(ctx), "SPLIT_K=1000 (1 to 64)"), "epilogue %d: %s", epi, tile_last_error(ctx));
        st = tile_gemm_with_config(ctx, &g, zero);
        cr_expect_eq(st, TILE_ERROR_INVALID_VALUE, "epilogue %d: SPLIT_K=0 gave %s", epi, tile_status_string(st));
    }
    close_ctx(ctx);
}

/* A configuration name given twice ("BM=64", "BM=32") was run with the last value; the tuning database refuses a
 * record that sets a name twice, and so does tile_gemm_with_config now, naming the key and both entries. */
Test(api_audit, gemm_config_name_twice_refused) {
    tile_context *ctx = open_on("emu");
    tile_devptr buf;
    cr_assert_eq(tile_malloc(ctx, 1 << 12, &buf), TILE_OK);
    tile_gemm_args g = {.size = sizeof g, .m = 8, .n = 8, .k = 16, .a = buf, .lda = 16, .b = buf, .ldb = 8, .c = buf + 2048, .ldc = 8,
                        .in_dtype = TILE_F16, .out_dtype = TILE_F32, .alpha = 1};
    static const char *const twice[][4] = {{"BM=64", "BM=32", NULL}, {"BN=32", "num_warps=4", "BN=32", NULL},
                                           {"SPLIT_K=2", "BK=32", "SPLIT_K=1000", NULL}};
    static const char *const want[] = {"tile_gemm_with_config: BM is set twice (\"BM=64\", \"BM=32\")",
                                       "tile_gemm_with_config: BN is set twice (\"BN=32\", \"BN=32\")",
                                       "tile_gemm_with_config: SPLIT_K is set twice (\"SPLIT_K=2\", \"SPLIT_K=1000\")"};
    for (size_t i = 0; i < sizeof twice / sizeof *twice; i++) {
        tile_status st = tile_gemm_with_config(ctx, &g, twice[i]);
        cr_expect_eq(st, TILE_ERROR_INVALID_VALUE, "%s twice gave %s", twice[i][0], tile_status_string(st));
        cr_expect(strstr(tile_last_error(ctx), want[i]), "want %s\ngot %s", want[i], tile_last_error(ctx));
    }
    close_ctx(ctx);
}

/* ===================== calls with nothing to compute ===================== */

/* m or n 0 (tile_gemm), batch or seq_q 0 (attention), num_seqs 0 (decode), tokens 0 (MoE, norms): TILE_OK,
 * nothing launched, nothing written; pointers that nothing would read may be 0 (A with m = 0, ...), the
 * others are still checked. */
Test(api_audit, empty_calls_launch_nothing) {
    tile_context *ctx = open_on("emu");
    tile_devptr buf;
    cr_assert_eq(tile_malloc(ctx, 1 << 20, &buf), TILE_OK);
    cr_assert_eq(tile_memset(ctx, buf, 0x5a, 1 << 20), TILE_OK);
    tile_context_stats s0, s1;
    cr_assert_eq(tile_context_get_stats(ctx, &s0), TILE_OK);
    tile_gemm_args g = {.size = sizeof g, .m = 0, .n = 8, .k = 8, .a = 0, .lda = 8, .b = buf, .ldb = 8, .c = buf + 4096, .ldc = 8,
                        .in_dtype = TILE_F16, .out_dtype = TILE_F32, .alpha = 1};
    cr_expect_eq(tile_gemm(ctx, &g), TILE_OK, "m = 0: %s", tile_last_error(ctx));
    g.m = 8, g.n = 0, g.a = buf, g.b = 0;
    cr_expect_eq(tile_gemm(ctx, &g), TILE_OK, "n = 0: %s", tile_last_error(ctx));
    g.n = 8, g.b = buf, g.m = -1;
    cr_expect_eq(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE, "m = -1 is no empty call");
    tile_attention_args at = {.dtype = TILE_F16, .batch = 0, .heads_q = 2, .heads_kv = 1, .head_dim = 64, .seq_q = 16, .seq_k = 16,
                              .q = buf, .k = buf + (64 << 10), .v = buf + (128 << 10), .o = buf + (256 << 10), .window_left = -1,
                              .window_right = -1};
    cr_expect_eq(tile_attention_fwd(ctx, &at), TILE_OK, "batch = 0: %s", tile_last_error(ctx));
    at.batch = 2, at.seq_q = 0;
    cr_expect_eq(tile_attention_fwd(ctx, &at), TILE_OK, "seq_q = 0: %s", tile_last_error(ctx));
    tile_paged_attention_args pa = {.dtype = TILE_BF16, .num_seqs = 0, .heads_q = 4, .heads_kv = 2, .head_dim = 64, .num_tokens = 1,
                                    .block_size = 16, .num_blocks = 4, .q = buf, .o = buf + (64 << 10), .k_cache = buf + (128 << 10),
                                    .v_cache = buf + (256 << 10), .block_tables = buf + (512 << 10), .context_lens = buf + (520 << 10),
                                    .max_context_len = 64};
    cr_expect_eq(tile_attention_decode_paged(ctx, &pa), TILE_OK, "num_seqs = 0: %s", tile_last_error(ctx));
    tile_moe_args mo = {.tokens = 0, .hidden = 64, .inter = 32, .experts = 4, .topk = 2, .dtype = TILE_F16, .x = buf,
                        .w1 = buf + (64 << 10), .w2 = buf + (128 << 10), .out = buf + (256 << 10), .router_logits = buf + (512 << 10),
                        .logits_dtype = TILE_F32};
    cr_expect_eq(tile_moe_forward(ctx, &mo), TILE_OK, "tokens = 0: %s", tile_last_error(ctx));
    tile_norm_args no = {.size = sizeof no, .dtype = TILE_BF16, .tokens = 0, .hidden = 64, .x = buf, .weight = buf + (64 << 10),
                         .eps = 1e-6f, .out = buf + (128 << 10)};
    cr_expect_eq(tile_fused_add_rmsnorm(ctx, &no), TILE_OK, "tokens = 0: %s", tile_last_error(ctx));
    cr_expect_eq(tile_fused_add_layernorm(ctx, &no), TILE_OK, "tokens = 0: %s", tile_last_error(ctx));
    tile_gated_args ga = {.size = sizeof ga, .dtype = TILE_BF16, .tokens = 0, .d = 64, .x = buf, .out = buf + (64 << 10)};
    cr_expect_eq(tile_gated_activation(ctx, &ga), TILE_OK, "tokens = 0: %s", tile_last_error(ctx));
    cr_assert_eq(tile_context_get_stats(ctx, &s1), TILE_OK);
    cr_expect_eq(s1.launches, s0.launches, "%llu launches for calls with nothing to compute",
                 (unsigned long long)(s1.launches - s0.launches));
    unsigned char *h = malloc(1 << 20);
    cr_assert_eq(tile_memcpy_dtoh(ctx, h, buf, 1 << 20), TILE_OK);
    for (size_t i = 0; i < 1 << 20; i++)
        if (h[i] != 0x5a) cr_assert_fail("byte %zu was written: %#x", i, h[i]);
    free(h);
    close_ctx(ctx);
}

/* docs/attention.md: "A row that sees no key gets O = 0 and LSE = -inf", also when no row has a key (seq_k = 0;
 * a packed sequence with no keys), O and LSE poisoned first. */
Test(api_audit, attention_without_keys, .timeout = 120) {
    tile_context *ctx = open_on("emu");
    enum { B = 2, H = 2, S = 5, D = 64 };
    size_t no = (size_t)B * S * H * D, nl = (size_t)B * H * S;
    tile_devptr q, k, v, o, lse;
    cr_assert_eq(tile_malloc(ctx, no * 2, &q), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, no * 2, &k), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, no * 2, &v), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, no * 2, &o), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, nl * 4, &lse), TILE_OK);
    cr_assert_eq(tile_memset(ctx, q, 0x3c, no * 2), TILE_OK); /* 1.06 */
    cr_assert_eq(tile_memset(ctx, k, 0x3c, no * 2), TILE_OK);
    cr_assert_eq(tile_memset(ctx, v, 0x3c, no * 2), TILE_OK);
    uint16_t *ho = malloc(no * 2);
    float *hl = malloc(nl * 4);
    for (int causal = 0; causal < 2; causal++) {
        cr_assert_eq(tile_memset(ctx, o, 0x7e, no * 2), TILE_OK);
        cr_assert_eq(tile_memset(ctx, lse, 0x7f, nl * 4), TILE_OK);
        tile_attention_args a = {.dtype = TILE_F16, .batch = B, .heads_q = H, .heads_kv = H, .head_dim = D, .seq_q = S, .seq_k = 0, .q = q,
                                 .k = k, .v = v, .o = o, .lse = lse, .causal = causal, .window_left = -1, .window_right = -1};
        cr_assert_eq(tile_attention_fwd(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
        cr_assert_eq(tile_memcpy_dtoh(ctx, ho, o, no * 2), TILE_OK);
        cr_assert_eq(tile_memcpy_dtoh(ctx, hl, lse, nl * 4), TILE_OK);
        for (size_t i = 0; i < no; i++) cr_assert_eq(ho[i], 0, "seq_k 0, causal %d: O element %zu is %#06x, not 0", causal, i, ho[i]);
        for (size_t i = 0; i < nl; i++) cr_assert(hl[i] == -INFINITY, "seq_k 0, causal %d: LSE %zu is %g, not -inf", causal, i, hl[i]);
    }
    /* packed: sequence 0 has 2 queries and 4 keys, sequence 1 has 3 queries and none */
    int32_t cq[3] = {0, 2, 5}, ck[3] = {0, 4, 4};
    tile_devptr dcq = upload(ctx, cq, sizeof cq), dck = upload(ctx, ck, sizeof ck);
    cr_assert_eq(tile_memset(ctx, o, 0x7e, no * 2), TILE_OK);
    cr_assert_eq(tile_memset(ctx, lse, 0x7f, nl * 4), TILE_OK);
    tile_attention_args a = {.dtype = TILE_F16, .batch = 2, .heads_q = H, .heads_kv = H, .head_dim = D, .seq_q = 3, .seq_k = 4, .q = q,
                             .k = k, .v = v, .o = o, .lse = lse, .cu_seqlens_q = dcq, .cu_seqlens_k = dck, .total_q = 5, .total_k = 4,
                             .window_left = -1, .window_right = -1};
    cr_assert_eq(tile_attention_fwd(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, ho, o, 5 * H * D * 2), TILE_OK);
    cr_assert_eq(tile_memcpy_dtoh(ctx, hl, lse, H * 5 * 4), TILE_OK);
    double val = f16_to_d(0x3c3c), want_lse = 0.125 * val * val * D + log(4.0); /* equal scores over 4 keys */
    for (int t = 0; t < 5; t++)
        for (int h = 0; h < H; h++) {
            for (int d = 0; d < D; d++) {
                double got = f16_to_d(ho[((size_t)t * H + h) * D + d]), want = t < 2 ? val : 0;
                cr_assert(fabs(got - want) <= 1e-3, "packed token %d head %d: O[%d] = %g, want %g", t, h, d, got, want);
            }
            double l = hl[(size_t)h * 5 + t];
            if (t < 2) cr_assert(fabs(l - want_lse) <= 1e-4 * fabs(want_lse), "token %d head %d: LSE %g, want %g", t, h, l, want_lse);
            else cr_assert(l == -INFINITY, "token %d (no keys) head %d: LSE %g, want -inf", t, h, l);
        }
    free(ho), free(hl);
    close_ctx(ctx);
}

/* ===================== messages of the calls that take no context ===================== */

static const char tuned_source[] = "@config(BLOCK=128, num_warps=4)\n@config(BLOCK=256, num_warps=8)\n@tune_key(n)\n"
                                   "kernel scale2(x: *f32, n: i32, const BLOCK: i32 = 1024) {\n"
                                   "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
                                   "    store(x + offs, load(x + offs, offs < n, 0.0) * 2.0, offs < n);\n}\n";

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    cr_assert(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

/* tile.h: a lookup whose record does not fit config_size is TILE_ERROR_INVALID_VALUE with config ""; the calls
 * that take no context say why in tile_last_error(NULL) (it kept the previous failure's message). */
Test(api_audit, tune_lookup_failures_say_why) {
    char dir[64], path[96], id[33], cfg[64];
    snprintf(dir, sizeof dir, "/tmp/tile-test-audit-XXXXXX");
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/k.tile", dir);
    write_file(path, tuned_source);
    cr_assert_eq(tile_kernel_id_file(path, "scale2", id), TILE_OK, "%s", tile_last_error(NULL));
    cr_assert_eq(tile_tune_record(dir, id, "emu/sm_80", "n=1024", "BLOCK=256 num_warps=8", 1e-3), TILE_OK, "%s", tile_last_error(NULL));
    /* 22 bytes with its terminator */
    cr_assert_eq(tile_tune_lookup(dir, id, "emu/sm_80", "n=1024", cfg, 22), TILE_OK, "%s", tile_last_error(NULL));
    cr_assert_str_eq(cfg, "BLOCK=256 num_warps=8");
    cr_assert_eq(tile_tune_lookup_file(dir, path, "scale2", "emu/sm_80", "n=1024", cfg, 22), TILE_OK, "%s", tile_last_error(NULL));
    cr_assert_str_eq(cfg, "BLOCK=256 num_warps=8");
    tile_tune_lookup(dir, NULL, "emu/sm_80", "n=1024", cfg, sizeof cfg); /* some other message first */
    cr_assert_eq(tile_tune_lookup(dir, id, "emu/sm_80", "n=1024", cfg, 21), TILE_ERROR_INVALID_VALUE);
    cr_expect_str_eq(cfg, "");
    cr_expect(strstr(tile_last_error(NULL), "tile_tune_lookup: ") && strstr(tile_last_error(NULL), "needs 22 bytes; config_size is 21"),
              "%s", tile_last_error(NULL));
    tile_tune_lookup(dir, NULL, "emu/sm_80", "n=1024", cfg, sizeof cfg);
    cr_assert_eq(tile_tune_lookup_file(dir, path, "scale2", "emu/sm_80", "n=1024", cfg, 8), TILE_ERROR_INVALID_VALUE);
    cr_expect_str_eq(cfg, "");
    cr_expect(strstr(tile_last_error(NULL), "tile_tune_lookup_file: ") && strstr(tile_last_error(NULL), "scale2") &&
                  strstr(tile_last_error(NULL), "needs 22 bytes; config_size is 8"),
              "%s", tile_last_error(NULL));
    /* a kernel whose @config does not read: the located error, not the previous message */
    write_file(path, "@config(128)\nkernel scale2(x: *f32) { store(x, 1.0); }\n");
    tile_tune_lookup(dir, NULL, "emu/sm_80", "n=1024", cfg, sizeof cfg);
    cr_assert_eq(tile_tune_lookup_file(dir, path, "scale2", "emu/sm_80", "n=1024", cfg, sizeof cfg), TILE_ERROR_COMPILE);
    cr_expect(strstr(tile_last_error(NULL), "tile_tune_lookup_file: ") && strstr(tile_last_error(NULL), "k.tile:1:9: error: '@config'"),
              "%s", tile_last_error(NULL));
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

/* tile_aot_table_kernel (what tile aot's C calls) refuses NULL arguments with a message on the context */
Test(api_audit, aot_table_null_arguments_say_why) {
    tile_context *ctx = open_on("emu");
    tile_aot_table t = {0};
    tile_kernel *k;
    static const char *const want[] = {"tile_aot_table_kernel: table is NULL", "tile_aot_table_kernel: ptx is NULL",
                                       "tile_aot_table_kernel: name is NULL", "tile_aot_table_kernel: out is NULL"};
    for (int i = 0; i < 4; i++) {
        tile_status st = tile_aot_table_kernel(i == 0 ? NULL : &t, i == 1 ? NULL : ".version 8.0", i == 2 ? NULL : "k", ctx,
                                               i == 3 ? NULL : &k);
        cr_expect_eq(st, TILE_ERROR_INVALID_VALUE, "%s", want[i]);
        cr_expect_str_eq(tile_last_error(ctx), want[i]);
    }
    tile_aot_table_release(&t, ctx); /* nothing loaded: nothing to do */
    close_ctx(ctx);
}

/* ============================ environment ============================ */

/* What the library writes to stderr when the process starts with TILE_DEBUG=value (`tile cache stats` reads
 * the knobs once, as every process does). */
static char *stderr_with_debug(const char *value) {
    char dir[64], cmd[512];
    snprintf(dir, sizeof dir, "/tmp/tile-test-audit-XXXXXX");
    cr_assert(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "TILE_DEBUG='%s' %s cache stats --dir %s 2>&1 >/dev/null", value, TILE_CLI, dir);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    static char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, p);
    buf[n] = 0;
    cr_assert_eq(pclose(p), 0, "%s: %s", cmd, buf);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
    return buf;
}

/* TILE_DEBUG's categories are cache, launch, tune, assert, emu-1to1 and all; a misspelt one logged nothing and
 * said nothing (as a bad TILE_CACHE_MAX_BYTES says), now one warning names it. */
Test(api_audit, tile_debug_names_unknown_categories) {
    const char *out = stderr_with_debug("cache,tnue");
    cr_expect(strstr(out, "tile: warning: TILE_DEBUG=cache,tnue: 'tnue' is no category"), "%s", out);
    out = stderr_with_debug("CACHE");
    cr_expect(strstr(out, "'CACHE' is no category"), "%s", out);
    out = stderr_with_debug("cache,,launch,tune,assert,all,emu-1to1");
    cr_expect(!strstr(out, "warning"), "%s", out);
}
