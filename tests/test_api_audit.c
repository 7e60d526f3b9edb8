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
    /* the configuration tile_gemm_last_info reports, given back to tile_gemm_with_config, runs the same launch: it
     * lists the configuration alone (the epilogue's HAS_BETA, HAS_BIAS, ACT came from the arguments, and
     * tile_gemm_with_config refuses them; they were listed, so the round trip failed) */
    tile_gemm_info info, again;
    cr_assert_eq(tile_gemm_last_info(ctx, &info), TILE_OK);
    cr_expect(!strstr(info.config, "HAS_") && !strstr(info.config, "ACT=") && !strstr(info.config, "SCALE="), "config %s", info.config);
    char words[256];
    snprintf(words, sizeof words, "%s", info.config);
    const char *cfg[24] = {0};
    int nw = 0;
    for (char *save = NULL, *t = strtok_r(words, " ", &save); t && nw < 23; t = strtok_r(NULL, " ", &save)) cfg[nw++] = t;
    st = tile_gemm_with_config(ctx, &g, cfg);
    cr_assert_eq(st, TILE_OK, "%s given back: %s", info.config, tile_last_error(ctx));
    cr_assert_eq(tile_gemm_last_info(ctx, &again), TILE_OK);
    cr_expect_str_eq(again.config, info.config);
    cr_expect(again.grid.x == info.grid.x && again.grid.y == info.grid.y && again.block.x == info.block.x, "%s: another launch", info.config);
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

/* A configuration the kernel refuses is the same error whatever the sizes: with m or n 0 (nothing to compute) the
 * configuration's values were not checked (BM=96 was TILE_OK), while with work the compiler refused them.  A
 * good configuration with nothing to compute is TILE_OK and launches nothing. */
Test(api_audit, gemm_config_checked_when_empty) {
    tile_context *ctx = open_on("emu");
    tile_devptr buf;
    cr_assert_eq(tile_malloc(ctx, 1 << 14, &buf), TILE_OK);
    static const char *const bad[][3] = {{"BM=96", NULL}, {"BM=abc", NULL}, {"num_warps=3", NULL}, {"BN=64", "PERSISTENT=2", NULL}};
    /* as docs/runtime.md says: BM=96 the compiler's compile error, num_warps=3 its refusal of the define */
    static const tile_status codes[] = {TILE_ERROR_COMPILE, TILE_ERROR_INVALID_VALUE, TILE_ERROR_INVALID_VALUE, TILE_ERROR_INVALID_VALUE};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tile_status want = TILE_OK;
        char want_msg[512] = "";
        for (int shape = 0; shape < 3; shape++) { /* work, m = 0, n = 0 */
            tile_gemm_args g = {.size = sizeof g, .m = shape == 1 ? 0 : 24, .n = shape == 2 ? 0 : 40, .k = 16, .a = buf, .lda = 16,
                                .b = buf + 4096, .ldb = 40, .c = buf + 8192, .ldc = 40, .in_dtype = TILE_F16, .out_dtype = TILE_F32,
                                .alpha = 1};
            tile_status st = tile_gemm_with_config(ctx, &g, bad[i]);
            if (!shape) {
                cr_assert_neq(st, TILE_OK, "%s with work was accepted", bad[i][0]);
                cr_expect_eq(st, codes[i], "%s: %s", bad[i][0], tile_status_string(st));
                cr_expect(strstr(tile_last_error(ctx), "tile_gemm_with_config: "), "%s: %s", bad[i][0], tile_last_error(ctx));
                want = st;
                snprintf(want_msg, sizeof want_msg, "%s", tile_last_error(ctx));
                continue;
            }
            cr_expect_eq(st, want, "%s with %s = 0: %s, with work %s", bad[i][0], shape == 1 ? "m" : "n", tile_status_string(st),
                         tile_status_string(want));
            cr_expect_str_eq(tile_last_error(ctx), want_msg, "%s with %s = 0", bad[i][0], shape == 1 ? "m" : "n");
        }
    }
    tile_context_stats s0, s1;
    cr_assert_eq(tile_context_get_stats(ctx, &s0), TILE_OK);
    static const char *const good[] = {"BM=64", "BN=64", "BK=32", "num_warps=4", NULL};
    tile_gemm_args g = {.size = sizeof g, .m = 0, .n = 40, .k = 16, .b = buf, .ldb = 40, .c = buf + 8192, .ldc = 40,
                        .in_dtype = TILE_F16, .out_dtype = TILE_F32, .alpha = 1};
    cr_expect_eq(tile_gemm_with_config(ctx, &g, good), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_context_get_stats(ctx, &s1), TILE_OK);
    cr_expect_eq(s1.launches, s0.launches, "an empty call launched");
    close_ctx(ctx);
}

/* ===================== calls with nothing to compute ===================== */

/* m or n 0 (tile_gemm), batch or seq_q 0 (attention), num_seqs 0 (decode), tokens 0 (MoE, norms), batch 0 (sampling): TILE_OK,
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
    /* sampling with batch 0 reads nothing: every pointer may be 0 (they were refused: "logits is 0"); the sizes
     * and scalar parameters are still checked */
    tile_sample_args sa = {.size = sizeof sa, .dtype = TILE_F32, .batch = 0, .vocab = 1000, .top_p_value = 1};
    cr_expect_eq(tile_sample(ctx, &sa), TILE_OK, "batch = 0, pointers 0: %s", tile_last_error(ctx));
    sa.vocab = 0;
    cr_expect_eq(tile_sample(ctx, &sa), TILE_ERROR_INVALID_VALUE, "batch = 0 with vocab = 0 was accepted");
    sa.vocab = 1000, sa.top_p_value = 0;
    cr_expect_eq(tile_sample(ctx, &sa), TILE_ERROR_INVALID_VALUE, "batch = 0 with top_p_value = 0 was accepted");
    tile_spec_verify_args sv = {.size = sizeof sv, .batch = 0, .num_draft = 4, .vocab = 1000};
    cr_expect_eq(tile_spec_verify(ctx, &sv), TILE_OK, "batch = 0, pointers 0: %s", tile_last_error(ctx));
    sv.num_draft = 0;
    cr_expect_eq(tile_spec_verify(ctx, &sv), TILE_ERROR_INVALID_VALUE, "batch = 0 with num_draft = 0 was accepted");
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

/* docs/language.md: @config(ACT="relu") tunes a string const, and tune_space gives its value quoted (a space
 * in it too): tile tune and Python's autotune record that text, which the database refused as no literal
 * ("was not stored: ... refused it"), so a string-tuned kernel never kept its choice.  Now it is stored and
 * returned whole, a lookup by file checks it against the @config values, and broken quoting is refused. */
Test(api_audit, tune_database_string_configs) {
    char dir[64], path[96], id[33], cfg[96];
    snprintf(dir, sizeof dir, "/tmp/tile-test-audit-XXXXXX");
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/act.tile", dir);
    write_file(path, "@config(B=64, ACT=\"leaky relu\")\n@config(B=128, ACT=\"none\")\n@config(B=128, ACT=\"a\\\"b\")\n@tune_key(n)\n"
                     "kernel act(x: *f32, n: i32, const B: i32 = 32, const ACT = \"none\") { store(x, 1.0); }\n");
    tile_tune_space sp;
    char *err = NULL;
    cr_assert_eq(tile_tune_space_file(path, "act", &sp, &err), TILE_OK, "%s", err ? err : "");
    cr_assert_str_eq(sp.configs[0][1], "ACT=\"leaky relu\"");
    cr_assert_str_eq(sp.configs[2][1], "ACT=\"a\\\"b\"");
    tile_tune_space_free(&sp);
    cr_assert_eq(tile_kernel_id_file(path, "act", id), TILE_OK, "%s", tile_last_error(NULL));
    const char *leaky = "B=64 ACT=\"leaky relu\"", *escaped = "ACT=\"a\\\"b\" B=128";
    cr_assert_eq(tile_tune_record(dir, id, "emu/sm_80", "n=1024", "B=128 ACT=\"none\"", 2e-3), TILE_OK, "%s", tile_last_error(NULL));
    cr_assert_eq(tile_tune_record(dir, id, "emu/sm_80", "n=1024", leaky, 1e-3), TILE_OK, "%s", tile_last_error(NULL));
    cr_assert_eq(tile_tune_record(dir, id, "emu/sm_80", "n=2048", escaped, 1e-3), TILE_OK, "%s", tile_last_error(NULL));
    cr_assert_eq(tile_tune_lookup_file(dir, path, "act", "emu/sm_80", "n=1024", cfg, sizeof cfg), TILE_OK, "%s", tile_last_error(NULL));
    cr_assert_str_eq(cfg, leaky);
    cr_assert_eq(tile_tune_lookup_file(dir, path, "act", "emu/sm_80", "n=2048", cfg, sizeof cfg), TILE_OK, "%s", tile_last_error(NULL));
    cr_assert_str_eq(cfg, escaped);
    /* a string no @config gives, recorded fastest: the id-only lookup returns it (form only), the lookup by file
     * refuses it (with a warning) and falls back to the good record */
    cr_assert_eq(tile_tune_record(dir, id, "emu/sm_80", "n=1024", "B=64 ACT=\"relu\"", 1e-4), TILE_OK, "%s", tile_last_error(NULL));
    cr_assert_eq(tile_tune_lookup(dir, id, "emu/sm_80", "n=1024", cfg, sizeof cfg), TILE_OK, "%s", tile_last_error(NULL));
    cr_assert_str_eq(cfg, "B=64 ACT=\"relu\"");
    cr_assert_eq(tile_tune_lookup_file(dir, path, "act", "emu/sm_80", "n=1024", cfg, sizeof cfg), TILE_OK, "%s", tile_last_error(NULL));
    cr_assert_str_eq(cfg, leaky);
    static const char *const bad[] = {"ACT=\"open", "ACT=\"a\"b\"", "ACT=\"x\" ", "ACT=\"\\\"", "ACT=\"x\"y", "ACT=\"a\" \"b\"", "ACT=\"\x01\""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        cr_expect_eq(tile_tune_record(dir, id, "emu/sm_80", "n=1024", bad[i], 1e-3), TILE_ERROR_INVALID_VALUE, "%s", bad[i]);
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
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

/* ============================ every entry point, bad arguments ============================ */

/* A message that the call must replace: tile_last_error(NULL) or ctx's set by another function first, so that a
 * refusal that sets none (or sets another function's) cannot pass on a stale one. */
static void prime_messages(tile_context *ctx) {
    tile_dtype t;
    (void)tile_dtype_from_name(NULL, &t);
    if (ctx) {
        tile_devptr p;
        (void)tile_malloc(ctx, 0, &p);
    }
}

/* call returns st, and `where`'s message (ctx's, or the thread's with NULL) begins with "fn: " */
#define REFUSED(where, st, fn, call)                                                                                     \
    do {                                                                                                                 \
        prime_messages(where);                                                                                           \
        tile_status st_ = (call);                                                                                        \
        const char *m_ = tile_last_error(where);                                                                         \
        cr_expect_eq(st_, st, "%s: %s (%s)", #call, tile_status_string(st_), m_);                                        \
        cr_expect(m_ && !strncmp(m_, fn ": ", strlen(fn ": ")), "%s: the message is '%s', not %s's", #call, m_ ? m_ : "", \
                  fn);                                                                                                   \
        n_refused++;                                                                                                     \
    } while (0)

static const char bad_args_src[] = "kernel k(x: *f32) { store(x + arange(0, 128), zeros([128], f32)); }";

/* Every entry point that takes a context, given NULL, a destroyed one or another kind of handle; NULL out
 * pointers; streams and events destroyed or of another context: an error, a message that begins with the
 * function's name, and the context usable afterwards (the table runs under ASan in CI, where a read of freed
 * memory fails it). */
Test(api_audit, every_entry_point_refuses_bad_handles_by_name) {
    int n_refused = 0;
    tile_context *ctx = open_on("emu"), *other;
    cr_assert_eq(tile_context_create("emu:sm_90a", &other), TILE_OK, "%s", tile_last_error(NULL));
    tile_context *dead;
    cr_assert_eq(tile_context_create("emu", &dead), TILE_OK);
    tile_context_destroy(dead);
    tile_module *m;
    cr_assert_eq(tile_module_load_source(ctx, bad_args_src, NULL, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_context *const bad_ctx[] = {NULL, dead, (tile_context *)m};
    char host[64] = {0}, key[64];
    tile_devptr p = 0;
    tile_device_properties dp;
    tile_context_stats cs;
    tile_stream s;
    tile_event e;
    float ms;
    tile_module *mm;
    tile_gemm_args ga = {.size = sizeof ga};
    tile_gemm_info gi;
    tile_moe_args ma = {.size = sizeof ma};
    tile_attention_args aa = {.size = sizeof aa};
    tile_paged_attention_args pa = {.size = sizeof pa};
    tile_norm_args na = {.size = sizeof na};
    tile_gated_args ta = {.size = sizeof ta};
    tile_sample_args sa = {.size = sizeof sa};
    tile_spec_verify_args va = {.size = sizeof va};
    tile_rope_args ra = {.size = sizeof ra};
    size_t bytes;
    int splits;
    unsigned char map[128] __attribute__((aligned(64)));
    uint64_t dims[2] = {64, 64}, strides[1] = {128};
    uint32_t box[2] = {16, 16}, es[2] = {1, 1};
    int32_t lo[2] = {0}, up[2] = {0};
    for (size_t i = 0; i < sizeof bad_ctx / sizeof *bad_ctx; i++) {
        tile_context *x = bad_ctx[i];
        const tile_status INV = TILE_ERROR_INVALID_VALUE;
        REFUSED(NULL, INV, "tile_context_interrupt", tile_context_interrupt(x));
        REFUSED(NULL, INV, "tile_context_get_properties", (tile_context_get_properties)(x, &dp)); /* exported; tile.h's macro is the _ex */
        REFUSED(NULL, INV, "tile_context_get_properties_ex", tile_context_get_properties_ex(x, &dp, sizeof dp));
        REFUSED(NULL, INV, "tile_context_device_key", tile_context_device_key(x, key, sizeof key));
        REFUSED(NULL, INV, "tile_context_get_stats", (tile_context_get_stats)(x, &cs));
        REFUSED(NULL, INV, "tile_context_get_stats_ex", tile_context_get_stats_ex(x, &cs, sizeof cs));
        REFUSED(NULL, INV, "tile_malloc", tile_malloc(x, 16, &p));
        REFUSED(NULL, INV, "tile_free", tile_free(x, 0x1000));
        REFUSED(NULL, INV, "tile_register_memory", tile_register_memory(x, host, sizeof host, &p));
        REFUSED(NULL, INV, "tile_unregister_memory", tile_unregister_memory(x, 0x1000));
        REFUSED(NULL, INV, "tile_memcpy_htod", tile_memcpy_htod(x, 0x1000, host, 4));
        REFUSED(NULL, INV, "tile_memcpy_dtoh", tile_memcpy_dtoh(x, host, 0x1000, 4));
        REFUSED(NULL, INV, "tile_memset", tile_memset(x, 0x1000, 0, 4));
        REFUSED(NULL, INV, "tile_synchronize", tile_synchronize(x));
        REFUSED(NULL, INV, "tile_module_load_ptx", tile_module_load_ptx(x, ".version 8.0", &mm));
        REFUSED(NULL, INV, "tile_module_load_source", tile_module_load_source(x, bad_args_src, NULL, &mm));
        REFUSED(NULL, INV, "tile_module_load_file", tile_module_load_file(x, "k.tile", NULL, &mm));
        REFUSED(NULL, INV, "tile_module_load_file_ex", tile_module_load_file_ex(x, "k.tile", NULL, &mm));
        REFUSED(NULL, INV, "tile_module_load_source_ex", tile_module_load_source_ex(x, "k", bad_args_src, NULL, &mm));
        REFUSED(NULL, INV, "tile_stream_create", tile_stream_create(x, &s));
        REFUSED(NULL, INV, "tile_stream_from_native", tile_stream_from_native(x, NULL, &s));
        REFUSED(NULL, INV, "tile_stream_destroy", tile_stream_destroy(x, NULL));
        REFUSED(NULL, INV, "tile_stream_synchronize", tile_stream_synchronize(x, NULL));
        REFUSED(NULL, INV, "tile_stream_wait_event", tile_stream_wait_event(x, NULL, NULL));
        REFUSED(NULL, INV, "tile_event_create", tile_event_create(x, &e));
        REFUSED(NULL, INV, "tile_event_destroy", tile_event_destroy(x, NULL));
        REFUSED(NULL, INV, "tile_event_record", tile_event_record(x, NULL, NULL));
        REFUSED(NULL, INV, "tile_event_synchronize", tile_event_synchronize(x, NULL));
        REFUSED(NULL, INV, "tile_event_elapsed_ms", tile_event_elapsed_ms(x, NULL, NULL, &ms));
        REFUSED(NULL, INV, "tile_memcpy_htod_async", tile_memcpy_htod_async(x, 0x1000, host, 4, NULL));
        REFUSED(NULL, INV, "tile_memcpy_dtoh_async", tile_memcpy_dtoh_async(x, host, 0x1000, 4, NULL));
        REFUSED(NULL, INV, "tile_memset_async", tile_memset_async(x, 0x1000, 0, 4, NULL));
        REFUSED(NULL, INV, "tile_tensor_map_encode", tile_tensor_map_encode(x, map, TILE_F16, 2, 0x1000, dims, strides, box, es, 0));
        REFUSED(NULL, INV, "tile_tensor_map_encode_im2col",
                tile_tensor_map_encode_im2col(x, map, TILE_F16, 3, 0x1000, dims, strides, lo, up, 16, 16, es, 0, 0));
        REFUSED(NULL, INV, "tile_gemm", tile_gemm(x, &ga));
        REFUSED(NULL, INV, "tile_gemm_with_config", tile_gemm_with_config(x, &ga, (const char *const[]){"BM=64", NULL}));
        REFUSED(NULL, INV, "tile_gemm_prepare", tile_gemm_prepare(x, &ga));
        REFUSED(NULL, INV, "tile_gemm_last_info", tile_gemm_last_info(x, &gi));
        REFUSED(NULL, INV, "tile_moe_forward", tile_moe_forward(x, &ma));
        REFUSED(NULL, INV, "tile_moe_prepare", tile_moe_prepare(x, &ma));
        REFUSED(NULL, INV, "tile_attention_fwd", tile_attention_fwd(x, &aa));
        REFUSED(NULL, INV, "tile_attention_fwd_prepare", tile_attention_fwd_prepare(x, &aa));
        REFUSED(NULL, INV, "tile_attention_decode_paged", tile_attention_decode_paged(x, &pa));
        REFUSED(NULL, INV, "tile_attention_decode_paged_prepare", tile_attention_decode_paged_prepare(x, &pa));
        REFUSED(NULL, INV, "tile_paged_attention_workspace_size", tile_paged_attention_workspace_size(x, &pa, &bytes, &splits));
        REFUSED(NULL, INV, "tile_fused_add_rmsnorm", tile_fused_add_rmsnorm(x, &na));
        REFUSED(NULL, INV, "tile_fused_add_rmsnorm_prepare", tile_fused_add_rmsnorm_prepare(x, &na));
        REFUSED(NULL, INV, "tile_fused_add_layernorm", tile_fused_add_layernorm(x, &na));
        REFUSED(NULL, INV, "tile_fused_add_layernorm_prepare", tile_fused_add_layernorm_prepare(x, &na));
        REFUSED(NULL, INV, "tile_gated_activation", tile_gated_activation(x, &ta));
        REFUSED(NULL, INV, "tile_gated_activation_prepare", tile_gated_activation_prepare(x, &ta));
        REFUSED(NULL, INV, "tile_sample", tile_sample(x, &sa));
        REFUSED(NULL, INV, "tile_sample_prepare", tile_sample_prepare(x, &sa));
        REFUSED(NULL, INV, "tile_spec_verify", tile_spec_verify(x, &va));
        REFUSED(NULL, INV, "tile_spec_verify_prepare", tile_spec_verify_prepare(x, &va));
        REFUSED(NULL, INV, "tile_rope_kv_append", tile_rope_kv_append(x, &ra));
        REFUSED(NULL, INV, "tile_rope_kv_append_prepare", tile_rope_kv_append_prepare(x, &ra));
        cr_expect_eq(tile_context_id(x), 0, "tile_context_id of a bad context");
        tile_context_destroy(x == dead ? dead : NULL); /* harmless */
    }
    /* NULL where the call writes its answer, or reads its arguments */
    const tile_status INV = TILE_ERROR_INVALID_VALUE;
    REFUSED(ctx, INV, "tile_context_get_properties", (tile_context_get_properties)(ctx, NULL));
    REFUSED(ctx, INV, "tile_context_get_properties_ex", tile_context_get_properties(ctx, NULL)); /* tile.h's macro */
    REFUSED(ctx, INV, "tile_context_get_stats", (tile_context_get_stats)(ctx, NULL));
    REFUSED(ctx, INV, "tile_context_get_stats_ex", tile_context_get_stats(ctx, NULL));
    REFUSED(ctx, INV, "tile_context_device_key", tile_context_device_key(ctx, NULL, 64));
    REFUSED(ctx, INV, "tile_malloc", tile_malloc(ctx, 16, NULL));
    REFUSED(ctx, INV, "tile_malloc", tile_malloc(ctx, SIZE_MAX, &p));
    REFUSED(ctx, INV, "tile_register_memory", tile_register_memory(ctx, host, sizeof host, NULL));
    REFUSED(ctx, INV, "tile_module_load_ptx", tile_module_load_ptx(ctx, NULL, &mm));
    REFUSED(ctx, INV, "tile_module_load_source", tile_module_load_source(ctx, bad_args_src, NULL, NULL));
    REFUSED(ctx, INV, "tile_stream_create", tile_stream_create(ctx, NULL));
    REFUSED(ctx, INV, "tile_event_create", tile_event_create(ctx, NULL));
    REFUSED(ctx, INV, "tile_gemm", tile_gemm(ctx, NULL));
    REFUSED(ctx, INV, "tile_gemm_last_info", tile_gemm_last_info(ctx, NULL));
    REFUSED(ctx, INV, "tile_moe_forward", tile_moe_forward(ctx, NULL));
    REFUSED(ctx, INV, "tile_attention_fwd", tile_attention_fwd(ctx, NULL));
    REFUSED(ctx, INV, "tile_paged_attention_workspace_size", tile_paged_attention_workspace_size(ctx, &pa, NULL, &splits));
    REFUSED(ctx, INV, "tile_fused_add_rmsnorm", tile_fused_add_rmsnorm(ctx, NULL));
    REFUSED(ctx, INV, "tile_gated_activation", tile_gated_activation(ctx, NULL));
    REFUSED(ctx, INV, "tile_sample", tile_sample(ctx, NULL));
    REFUSED(ctx, INV, "tile_spec_verify", tile_spec_verify(ctx, NULL));
    REFUSED(ctx, INV, "tile_rope_kv_append", tile_rope_kv_append(ctx, NULL));
    REFUSED(ctx, INV, "tile_event_elapsed_ms", tile_event_elapsed_ms(ctx, NULL, NULL, NULL));
    tile_kernel *k;
    tile_kernel_attributes ka;
    REFUSED(NULL, INV, "tile_module_get_kernel", tile_module_get_kernel(NULL, "k", &k));
    REFUSED(ctx, INV, "tile_module_get_kernel", tile_module_get_kernel(m, NULL, &k));
    REFUSED(ctx, INV, "tile_module_get_kernel", tile_module_get_kernel(m, "k", NULL));
    REFUSED(NULL, INV, "tile_kernel_get_attributes", tile_kernel_get_attributes(NULL, &ka));
    REFUSED(NULL, INV, "tile_kernel_get_attributes", tile_kernel_get_attributes((tile_kernel *)ctx, &ka));
    REFUSED(ctx, TILE_ERROR_IO, "tile_module_load_file", tile_module_load_file(ctx, "/nonexistent/k.tile", NULL, &mm));
    REFUSED(ctx, TILE_ERROR_IO, "tile_module_load_file_ex", tile_module_load_file_ex(ctx, "/nonexistent/k.tile", NULL, &mm));
    cr_expect(strstr(tile_last_error(ctx), "cannot read '/nonexistent/k.tile': "), "%s", tile_last_error(ctx));
    char *long_path = malloc(1 << 20); /* a path of 1 MiB: the message shows its ends, not all of it */
    cr_assert(long_path);
    memset(long_path, 'a', (1 << 20) - 1);
    long_path[(1 << 20) - 1] = 0;
    REFUSED(ctx, TILE_ERROR_IO, "tile_module_load_file", tile_module_load_file(ctx, long_path, NULL, &mm));
    cr_expect_lt(strlen(tile_last_error(ctx)), 20000, "a message of %zu bytes", strlen(tile_last_error(ctx)));
    free(long_path);
    REFUSED(ctx, TILE_ERROR_NOT_FOUND, "tile_module_get_kernel", tile_module_get_kernel(m, "nope", &k));
    cr_expect(strstr(tile_last_error(ctx), "no kernel 'nope' (it has: k)"), "%s", tile_last_error(ctx));
    cr_assert_eq(tile_module_get_kernel(m, "k", &k), TILE_OK, "%s", tile_last_error(ctx));
    const char *const *knames;
    int nk;
    REFUSED(NULL, INV, "tile_module_get_kernel_names", tile_module_get_kernel_names(NULL, &knames, &nk));
    REFUSED(ctx, INV, "tile_module_get_kernel_names", tile_module_get_kernel_names(m, &knames, NULL));
    cr_assert_eq(tile_module_get_kernel_names(m, &knames, &nk), TILE_OK, "%s", tile_last_error(ctx));
    cr_expect(nk == 1 && !strcmp(knames[0], "k") && !knames[1], "a compiled module's kernels: %d", nk);
    REFUSED(ctx, INV, "tile_kernel_get_attributes", tile_kernel_get_attributes(k, NULL));
    /* streams and events destroyed (made before the live ones, so that no address is reused) or another context's */
    tile_stream gone_s, live_s, other_s;
    tile_event gone_e, live_e, other_e;
    cr_assert_eq(tile_stream_create(ctx, &gone_s), TILE_OK);
    cr_assert_eq(tile_event_create(ctx, &gone_e), TILE_OK);
    cr_assert_eq(tile_stream_create(ctx, &live_s), TILE_OK);
    cr_assert_eq(tile_event_create(ctx, &live_e), TILE_OK);
    cr_assert_eq(tile_stream_create(other, &other_s), TILE_OK);
    cr_assert_eq(tile_event_create(other, &other_e), TILE_OK);
    cr_assert_eq(tile_stream_destroy(ctx, gone_s), TILE_OK);
    cr_assert_eq(tile_event_destroy(ctx, gone_e), TILE_OK);
    tile_stream const bad_s[] = {gone_s, other_s, (tile_stream)live_e};
    tile_event const bad_e[] = {gone_e, other_e, (tile_event)live_s};
    tile_devptr d;
    cr_assert_eq(tile_malloc(ctx, 4096, &d), TILE_OK);
    for (int i = 0; i < 3; i++) {
        REFUSED(ctx, INV, "tile_stream_destroy", tile_stream_destroy(ctx, bad_s[i]));
        REFUSED(ctx, INV, "tile_stream_synchronize", tile_stream_synchronize(ctx, bad_s[i]));
        REFUSED(ctx, INV, "tile_stream_wait_event", tile_stream_wait_event(ctx, bad_s[i], live_e));
        REFUSED(ctx, INV, "tile_stream_wait_event", tile_stream_wait_event(ctx, live_s, bad_e[i]));
        REFUSED(ctx, INV, "tile_event_destroy", tile_event_destroy(ctx, bad_e[i]));
        REFUSED(ctx, INV, "tile_event_record", tile_event_record(ctx, bad_e[i], live_s));
        REFUSED(ctx, INV, "tile_event_record", tile_event_record(ctx, live_e, bad_s[i]));
        REFUSED(ctx, INV, "tile_event_synchronize", tile_event_synchronize(ctx, bad_e[i]));
        REFUSED(ctx, INV, "tile_event_elapsed_ms", tile_event_elapsed_ms(ctx, live_e, bad_e[i], &ms));
        REFUSED(ctx, INV, "tile_memcpy_htod_async", tile_memcpy_htod_async(ctx, d, host, 4, bad_s[i]));
        REFUSED(ctx, INV, "tile_memcpy_dtoh_async", tile_memcpy_dtoh_async(ctx, host, d, 4, bad_s[i]));
        REFUSED(ctx, INV, "tile_memset_async", tile_memset_async(ctx, d, 0, 4, bad_s[i]));
        ga = (tile_gemm_args){.size = sizeof ga, .in_dtype = TILE_F16, .out_dtype = TILE_F32, .stream = bad_s[i]};
        REFUSED(ctx, INV, "tile_gemm", tile_gemm(ctx, &ga));
    }
    /* still usable: the live stream and event work, and a launch runs */
    cr_expect_eq(tile_memset_async(ctx, d, 0x5a, 4096, live_s), TILE_OK, "%s", tile_last_error(ctx));
    cr_expect_eq(tile_event_record(ctx, live_e, live_s), TILE_OK, "%s", tile_last_error(ctx));
    cr_expect_eq(tile_event_synchronize(ctx, live_e), TILE_OK, "%s", tile_last_error(ctx));
    void *args[] = {&d};
    cr_expect_eq(tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    float back[130];
    cr_assert_eq(tile_memcpy_dtoh(ctx, back, d, sizeof back), TILE_OK, "%s", tile_last_error(ctx));
    for (int i = 0; i < 128; i++) cr_expect_eq(back[i], 0.0f, "x[%d] = %g after the launch", i, (double)back[i]);
    uint32_t past;
    memcpy(&past, &back[128], 4);
    cr_expect_eq(past, 0x5a5a5a5au, "x[128] = 0x%08x: written past the 128 the kernel stores", past);
    cr_expect_eq(tile_stream_destroy(other, other_s), TILE_OK);
    cr_expect_eq(tile_event_destroy(other, other_e), TILE_OK);
    cr_expect_eq(tile_stream_destroy(ctx, live_s), TILE_OK);
    cr_expect_eq(tile_event_destroy(ctx, live_e), TILE_OK);
    tile_module_unload(m);
    tile_context_destroy(other);
    close_ctx(ctx);
    cr_expect_gt(n_refused, 200);
}

/* What a refused call leaves in its answers (docs/runtime.md, "Answers of a failed call"): the answer
 * pointers cleared before any check, the handle's included, so a caller that misses the status reads NULL,
 * 0, "" or a zeroed struct, never the value from before (these calls cleared them only past the handle's
 * check, or never: tile_dtype_from_name, the workspace sizes, tile_gemm_last_info). */
#define POISON(v) memset(&(v), 0x5a, sizeof(v))
static bool all_zero(const void *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (((const unsigned char *)p)[i]) return false;
    return true;
}
Test(api_audit, answers_cleared_when_refused) {
    tile_context *dead, *ctx = open_on("emu");
    cr_assert_eq(tile_context_create("emu", &dead), TILE_OK);
    tile_context_destroy(dead);
    tile_context *const bad_ctx[] = {NULL, dead};
    tile_devptr p;
    tile_module *mm;
    tile_stream s;
    tile_event e;
    float ms;
    tile_gemm_info gi;
    size_t bytes;
    int splits, count, from_cache;
    char key[64], cfg[64], id[33];
    const char *const *names;
    tile_kernel *k;
    tile_kernel_attributes ka;
    tile_compiled c;
    unsigned char map[128] __attribute__((aligned(64)));
    uint64_t dims[2] = {64, 64}, strides[1] = {128};
    uint32_t box[2] = {16, 16};
    char host[64];
    tile_paged_attention_args pa = {.size = sizeof pa};
    for (size_t i = 0; i < sizeof bad_ctx / sizeof *bad_ctx; i++) {
        tile_context *x = bad_ctx[i];
        const char *which = x ? "a destroyed context" : "NULL";
        POISON(p); cr_expect_neq(tile_malloc(x, 16, &p), TILE_OK); cr_expect_eq(p, 0, "tile_malloc(%s)", which);
        POISON(p); cr_expect_neq(tile_register_memory(x, host, sizeof host, &p), TILE_OK);
        cr_expect_eq(p, 0, "tile_register_memory(%s)", which);
        POISON(mm); cr_expect_neq(tile_module_load_ptx(x, ".version 8.0", &mm), TILE_OK);
        cr_expect_null(mm, "tile_module_load_ptx(%s)", which);
        POISON(mm); cr_expect_neq(tile_module_load_cubin(x, host, sizeof host, &mm), TILE_OK);
        cr_expect_null(mm, "tile_module_load_cubin(%s)", which);
        POISON(mm); cr_expect_neq(tile_module_load_cache_entry(x, NULL, "0123456789abcdef0123456789abcdef", &mm), TILE_OK);
        cr_expect_null(mm, "tile_module_load_cache_entry(%s)", which);
        POISON(mm); cr_expect_neq(tile_module_load_source(x, bad_args_src, NULL, &mm), TILE_OK);
        cr_expect_null(mm, "tile_module_load_source(%s)", which);
        POISON(mm); cr_expect_neq(tile_module_load_file_ex(x, "k.tile", NULL, &mm), TILE_OK);
        cr_expect_null(mm, "tile_module_load_file_ex(%s)", which);
        POISON(s); cr_expect_neq(tile_stream_create(x, &s), TILE_OK); cr_expect_null(s, "tile_stream_create(%s)", which);
        POISON(s); cr_expect_neq(tile_stream_from_native(x, NULL, &s), TILE_OK);
        cr_expect_null(s, "tile_stream_from_native(%s)", which);
        POISON(e); cr_expect_neq(tile_event_create(x, &e), TILE_OK); cr_expect_null(e, "tile_event_create(%s)", which);
        POISON(ms); cr_expect_neq(tile_event_elapsed_ms(x, NULL, NULL, &ms), TILE_OK);
        cr_expect_eq(ms, 0, "tile_event_elapsed_ms(%s)", which);
        POISON(gi); cr_expect_neq(tile_gemm_last_info(x, &gi), TILE_OK);
        cr_expect(all_zero(&gi, sizeof gi), "tile_gemm_last_info(%s)", which);
        POISON(bytes); POISON(splits); cr_expect_neq(tile_paged_attention_workspace_size(x, &pa, &bytes, &splits), TILE_OK);
        cr_expect(bytes == 0 && splits == 0, "tile_paged_attention_workspace_size(%s)", which);
        POISON(map); cr_expect_neq(tile_tensor_map_encode(x, map, TILE_F16, 2, 0x1000, dims, strides, box, NULL, 0), TILE_OK);
        cr_expect(all_zero(map, sizeof map), "tile_tensor_map_encode(%s)", which);
        POISON(key); cr_expect_neq(tile_context_device_key(x, key, sizeof key), TILE_OK);
        cr_expect_eq(key[0], 0, "tile_context_device_key(%s)", which);
    }
    /* handles of another kind of call, refused */
    POISON(k); cr_expect_neq(tile_module_get_kernel(NULL, "k", &k), TILE_OK); cr_expect_null(k);
    POISON(names); POISON(count); cr_expect_neq(tile_module_get_kernel_names(NULL, &names, &count), TILE_OK);
    cr_expect(!names && !count);
    POISON(ka); cr_expect_neq(tile_kernel_get_attributes(NULL, &ka), TILE_OK); cr_expect(all_zero(&ka, sizeof ka));
    POISON(k); cr_expect_neq(tile_aot_table_kernel(NULL, "x", "k", NULL, &k), TILE_OK); cr_expect_null(k);
    /* values refused, on a live context or none */
    tile_dtype t = TILE_F16;
    cr_expect_eq(tile_dtype_from_name("f17", &t), TILE_ERROR_NOT_FOUND);
    cr_expect_eq(t, TILE_DTYPE_COUNT, "no type: %d", (int)t);
    POISON(gi); cr_expect_eq(tile_gemm_last_info(ctx, &gi), TILE_ERROR_NOT_FOUND); cr_expect(all_zero(&gi, sizeof gi));
    tile_moe_args ma = {.size = sizeof ma};
    POISON(bytes); cr_expect_neq(tile_moe_workspace_size(&ma, &bytes), TILE_OK); cr_expect_eq(bytes, 0);
    POISON(bytes); POISON(splits); cr_expect_neq(tile_paged_attention_workspace_size(ctx, &pa, &bytes, &splits), TILE_OK);
    cr_expect(bytes == 0 && splits == 0);
    POISON(map); cr_expect_neq(tile_tensor_map_encode(ctx, map, TILE_F16, 2, 0x1000, dims, strides, box, NULL, 0), TILE_OK);
    cr_expect(all_zero(map, sizeof map), "a tensor map of memory the context does not have");
    POISON(from_cache); memset(&c, 0, sizeof c);
    cr_expect_neq(tile_cache_compile_source(cache_dir, "s.tile", NULL, NULL, &c, &from_cache), TILE_OK);
    cr_expect_eq(from_cache, 0);
    tile_compiled_free(&c);
    POISON(cfg); cr_expect_neq(tile_tune_lookup(cache_dir, NULL, "emu/sm_80", "n=1", cfg, sizeof cfg), TILE_OK); cr_expect_eq(cfg[0], 0);
    POISON(cfg); cr_expect_neq(tile_tune_lookup_file(cache_dir, NULL, "k", "emu/sm_80", "n=1", cfg, sizeof cfg), TILE_OK);
    cr_expect_eq(cfg[0], 0);
    POISON(id); cr_expect_neq(tile_kernel_id_file(NULL, "k", id), TILE_OK); cr_expect_eq(id[0], 0);
    close_ctx(ctx);
}

/* Refusals that came back with no message, or with another function's name: tile_moe_workspace_size (no
 * context: the thread's message), tile_moe_prepare and tile_gemm_prepare (named tile_moe_forward, tile_gemm),
 * tile_gemm_with_config (named tile_gemm), tile_tune_lookup finding no record;
 * tile_gemm_with_config's configuration, accepted unread when m or n was 0; attention sizes that overflowed int64;
 * device strings that do not parse (the reason alone, without the call). */
Test(api_audit, refusals_name_their_function) {
    int n_refused = 0;
    const tile_status INV = TILE_ERROR_INVALID_VALUE;
    tile_moe_args ma = {.size = sizeof ma, .tokens = 4, .hidden = 64, .inter = 64, .experts = 4, .topk = 2, .dtype = TILE_F16};
    size_t bytes;
    REFUSED(NULL, INV, "tile_moe_workspace_size", tile_moe_workspace_size(NULL, &bytes));
    REFUSED(NULL, INV, "tile_moe_workspace_size", tile_moe_workspace_size(&ma, NULL));
    ma.topk = 9;
    REFUSED(NULL, INV, "tile_moe_workspace_size", tile_moe_workspace_size(&ma, &bytes));
    cr_expect(strstr(tile_last_error(NULL), "topk"), "%s", tile_last_error(NULL));
    ma.topk = 2, ma.size = 3;
    REFUSED(NULL, INV, "tile_moe_workspace_size", tile_moe_workspace_size(&ma, &bytes));
    cr_expect(strstr(tile_last_error(NULL), "args->size = 3"), "%s", tile_last_error(NULL));
    ma.size = sizeof ma;
    cr_expect_eq(tile_moe_workspace_size(&ma, &bytes), TILE_OK, "%s", tile_last_error(NULL));

    /* device strings that do not parse: the device layer's reason, after the call's name */
    static const char *const bad_devices[] = {"bogus", "emu:", "emu:sm_1", "emu:sms=0", "cuda:x", "emu0"};
    tile_context *none = NULL;
    for (size_t i = 0; i < sizeof bad_devices / sizeof *bad_devices; i++) {
        tile_context_options co = {.size = sizeof co, .device = bad_devices[i]};
        REFUSED(NULL, INV, "tile_device_check", tile_device_check(bad_devices[i]));
        REFUSED(NULL, INV, "tile_context_create", tile_context_create(bad_devices[i], &none));
        cr_expect(strstr(tile_last_error(NULL), bad_devices[i]), "%s", tile_last_error(NULL));
        REFUSED(NULL, INV, "tile_context_create_ex", tile_context_create_ex(&co, &none));
        cr_expect_null(none);
    }
    /* no options at all: every option 0 (tile.h), the default device */
    cr_expect_eq(tile_context_create_ex(NULL, &none), TILE_OK, "%s", tile_last_error(NULL));
    tile_context_destroy(none);

    tile_context *ctx = open_on("emu");
    ma.topk = 9;
    REFUSED(ctx, INV, "tile_moe_prepare", tile_moe_prepare(ctx, &ma));
    REFUSED(ctx, INV, "tile_moe_forward", tile_moe_forward(ctx, &ma));
    ma.topk = 2, ma.scoring = (tile_moe_scoring)9999;
    REFUSED(ctx, INV, "tile_moe_prepare", tile_moe_prepare(ctx, &ma));
    REFUSED(ctx, INV, "tile_moe_prepare", tile_moe_prepare(ctx, NULL));
    /* prepare looks at no pointer (docs/runtime.md), as the other _prepare calls: routing given as inputs
     * but not passed yet is fine there; the call itself still needs them */
    ma.scoring = TILE_MOE_SOFTMAX;
    cr_expect_eq(tile_moe_prepare(ctx, &ma), TILE_OK, "%s", tile_last_error(ctx));
    REFUSED(ctx, INV, "tile_moe_forward", tile_moe_forward(ctx, &ma));
    cr_expect(strstr(tile_last_error(ctx), "topk_ids and topk_weights are inputs"), "%s", tile_last_error(ctx));

    /* tile_gemm_prepare and tile_gemm_with_config name themselves (they said tile_gemm) */
    tile_gemm_args bad = {.size = sizeof bad, .m = -1, .n = 8, .k = 8, .in_dtype = TILE_F16, .out_dtype = TILE_F32};
    REFUSED(ctx, INV, "tile_gemm_prepare", tile_gemm_prepare(ctx, &bad));
    REFUSED(ctx, INV, "tile_gemm_with_config", tile_gemm_with_config(ctx, &bad, (const char *const[]){"BM=64", NULL}));
    REFUSED(ctx, INV, "tile_gemm", tile_gemm(ctx, &bad));
    bad.m = 8, bad.lda = 4; /* shorter than k */
    REFUSED(ctx, INV, "tile_gemm_prepare", tile_gemm_prepare(ctx, &bad));
    cr_expect(strstr(tile_last_error(ctx), "ldA = 4 is less than the 8 columns of A"), "%s", tile_last_error(ctx));
    REFUSED(ctx, INV, "tile_gemm_prepare", tile_gemm_prepare(ctx, NULL));

    /* m = 0 (and n = 0): nothing to compute, but the configuration is still read */
    tile_gemm_args ga = {.size = sizeof ga, .m = 0, .n = 8, .k = 8, .in_dtype = TILE_F16, .out_dtype = TILE_F32, .alpha = 1};
    static const char *const bad_configs[][3] = {{"BM=", NULL}, {"BM", NULL}, {"ACT=1", NULL}, {"BM=64", "BM=32", NULL},
                                                 {"SPLIT_K=0", NULL}, {"SPLIT_K=65", NULL}, {"GROUP_M=0", NULL}, {"FAST_ACCUM=1", NULL},
                                                 /* values out of the knob's range: named, never the kernel's compile error */
                                                 {"BM=-64", NULL}, {"BN=0", NULL}, {"BK=2048", NULL}, {"num_warps=64", NULL},
                                                 {"num_stages=0", NULL}, {"PERSISTENT=2", NULL}, {"BM=64x", NULL},
                                                 {"num_warps=99999999999999999999", NULL}};
    static const char *const what[] = {"has no value", "is not a configuration", "is not a configuration", "set twice",
                                       "SPLIT_K=0 (1 to 64)", "SPLIT_K=65", "GROUP_M=0 (1 to 65535)", "FAST_ACCUM applies to f8",
                                       "tile_gemm_with_config: BM=-64 (1 to 1024)", "BN=0 (1 to 1024)", "BK=2048 (1 to 1024)",
                                       "num_warps=64 (1 to 32)", "num_stages=0 (1 to 16)", "PERSISTENT=2 (0 to 1)",
                                       "BM=64x: BM is not an integer (1 to 1024)", "num_warps is not an integer"};
    for (int i = 0; i < 16; i++)
        for (int mn = 0; mn < 3; mn++) { /* m = 0, n = 0, and with work (m = n = 16: checked before the pointers) */
            ga.m = mn == 1 ? 8 : mn ? 16 : 0, ga.n = mn == 0 ? 8 : mn == 1 ? 0 : 16;
            prime_messages(ctx);
            cr_expect_eq(tile_gemm_with_config(ctx, &ga, bad_configs[i]), INV, "%s with m = %lld, n = %lld", bad_configs[i][0],
                         (long long)ga.m, (long long)ga.n);
            cr_expect(strstr(tile_last_error(ctx), what[i]), "%s: '%s'", bad_configs[i][0], tile_last_error(ctx));
        }
    ga.m = 0;
    cr_expect_eq(tile_gemm_with_config(ctx, &ga, (const char *const[]){"BM=64", "SPLIT_K=2", NULL}), TILE_OK, "%s", tile_last_error(ctx));

    /* sizes whose contiguous strides overflow int64 (64 * INT64_MAX was computed before any check: UBSan stops
     * the test there) are refused with the reason */
    const int64_t huge[] = {INT64_MAX, INT64_MAX / 64 + 1, (int64_t)1 << 58};
    for (int i = 0; i < 3; i++)
        for (int which = 0; which < 2; which++) {
            tile_attention_args aa = {.size = sizeof aa, .dtype = TILE_F16, .batch = 1, .heads_q = 1, .heads_kv = 1, .head_dim = 64,
                                      .seq_q = which ? 4 : huge[i], .seq_k = which ? huge[i] : 4};
            REFUSED(ctx, INV, "tile_attention_fwd", tile_attention_fwd(ctx, &aa));
            REFUSED(ctx, INV, "tile_attention_fwd_prepare", tile_attention_fwd_prepare(ctx, &aa));
        }
    /* total_q is read with cu_seqlens only: anything else there (INT64_MAX overflowed heads_q * total_q) is unused */
    tile_attention_args empty = {.size = sizeof empty, .dtype = TILE_F16, .batch = 0, .heads_q = 2, .heads_kv = 1, .head_dim = 64,
                                 .seq_q = 4, .seq_k = 4, .total_q = INT64_MAX, .total_k = INT64_MAX};
    cr_expect_eq(tile_attention_fwd(ctx, &empty), TILE_OK, "%s", tile_last_error(ctx));
    close_ctx(ctx);

    /* no record: TILE_ERROR_NOT_FOUND with the reason */
    char dir[64], cfg[64];
    snprintf(dir, sizeof dir, "/tmp/tile-test-audit-XXXXXX");
    cr_assert(mkdtemp(dir));
    const char *id = "0123456789abcdef0123456789abcdef";
    REFUSED(NULL, TILE_ERROR_NOT_FOUND, "tile_tune_lookup", tile_tune_lookup(dir, id, "emu/sm_80", "n=1", cfg, sizeof cfg));
    cr_expect(strstr(tile_last_error(NULL), "no tuning database"), "%s", tile_last_error(NULL));
    cr_assert_eq(tile_tune_record(dir, id, "emu/sm_80", "n=2", "BLOCK=64", 1e-3), TILE_OK, "%s", tile_last_error(NULL));
    REFUSED(NULL, TILE_ERROR_NOT_FOUND, "tile_tune_lookup", tile_tune_lookup(dir, id, "emu/sm_80", "n=1", cfg, sizeof cfg));
    cr_expect(strstr(tile_last_error(NULL), "no usable record") && strstr(tile_last_error(NULL), "n=1"), "%s", tile_last_error(NULL));
    REFUSED(NULL, INV, "tile_tune_lookup", tile_tune_lookup(dir, NULL, "emu/sm_80", "n=1", cfg, sizeof cfg));
    cr_expect_eq(tile_tune_lookup(dir, id, "emu/sm_80", "n=2", cfg, sizeof cfg), TILE_OK, "%s", tile_last_error(NULL));
    cr_expect_str_eq(cfg, "BLOCK=64");
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
    cr_expect_eq(n_refused, 47);
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

/* The numbers and words of the TILE_* variables are read alike, with the white space around them left out
 * (runtime/options.c, env_word): TILE_EMU_TIMEOUT="0.5 " was refused while " 0.5" was taken, TILE_CACHE_MAX_BYTES=
 * " 2K" fell back to the default with a warning and TILE_EMU_APPROX="bound " made emulator devices refuse to open.
 * White space inside a value is still no number, and the refusal names the variable. */
#include "runtime/rt.h"
Test(api_audit, variables_read_without_surrounding_white_space) {
    setenv("TILE_EMU_TIMEOUT", "0.5 ", 1);
    setenv("TILE_CACHE_MAX_BYTES", " 2K\t", 1);
    setenv("TILE_EMU_APPROX", "bound\n", 1);
    tile_context_options o = {.device = "emu", .no_disk_cache = 1};
    tile_context *ctx = NULL;
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK, "%s", tile_last_error(NULL));
    cr_expect_eq(rt_options()->emu_timeout_seconds, 0.5);
    cr_expect_eq(tile_cache_max_bytes(), 2048u);
    cr_expect(rt_options()->emu_approx_bound);
    tile_context_destroy(ctx);
}

/* TILE_EMU_TIMEOUT is a decimal number of seconds, or inf: strtod alone took "0x10" as 16 s and "infinity", and read
 * "1e-999" as 0.  Each value in a child of its own, as the variables are read once per process; the child reports
 * the budget it read (in ms, 0 when context creation refused the value) through its exit status. */
#include <sys/wait.h>
static int timeout_ms_of(const char *value) {
    pid_t pid = fork();
    if (pid == 0) {
        setenv("TILE_EMU_TIMEOUT", value, 1);
        tile_context *ctx = NULL;
        if (tile_context_create("emu", &ctx) != TILE_OK)
            _exit(strstr(tile_last_error(NULL), "TILE_EMU_TIMEOUT is not a positive number") ? 0 : 255);
        double t = rt_options()->emu_timeout_seconds;
        tile_context_destroy(ctx);
        _exit(isinf(t) ? 254 : t * 1000 > 0 && t * 1000 < 250 ? (int)lround(t * 1000) : 253);
    }
    int st = 0;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st), "%s", value);
    return WEXITSTATUS(st);
}
Test(api_audit, emu_timeout_is_decimal_seconds) {
    static const struct { const char *v; int ms; } cases[] = {
        {"0.2", 200}, {".125", 125}, {"2e-2", 20}, {"5E-3", 5}, {"1.e-1", 100}, {" 0.05\t", 50},
        {"inf", 254}, {"1e999", 254}, /* no budget, as 10^9 s and more are */
        {"0x10", 0}, {"0x1p-4", 0}, {"infinity", 0}, {"INF", 0}, {"nan", 0}, {"1e-999", 0}, {"0", 0}, {"-1", 0},
        {"+0.1", 0}, {".", 0}, {"1e", 0}, {"e3", 0}, {"0,5", 0}, {"5s", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        cr_expect_eq(timeout_ms_of(cases[i].v), cases[i].ms, "TILE_EMU_TIMEOUT='%s'", cases[i].v);
}

Test(api_audit, variables_with_inner_white_space_refused) {
    setenv("TILE_EMU_TIMEOUT", " 5 s ", 1);
    tile_context *ctx = NULL;
    cr_assert_eq(tile_context_create("emu", &ctx), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(NULL), "TILE_EMU_TIMEOUT is not a positive number: '5 s' (seconds"), "%s", tile_last_error(NULL));
}

/* A host program that set a decimal-comma LC_NUMERIC (a C++ engine calling setlocale(LC_ALL, "") under de_DE):
 * the library reads and writes numbers with a '.' all the same.  The lexer's strtod refused "1.5" there ("invalid
 * float literal"), the PTX reader's read "1.5" as 1, and a define's or tuning record's float was printed "0,75".
 * The locale is made with localedef (the locales package) into a folder of the test's own (LOCPATH); the child
 * compiles a kernel with float literals and a float define, loads PTX with a decimal float immediate, runs both on
 * the emulator against host values, and exits with the first failed step's number. */
#include <locale.h>
static int decimal_comma_child(const char *locdir, const char *cachedir) {
    setenv("LOCPATH", locdir, 1);
    setenv("TILE_CACHE_DIR", cachedir, 1);
    if (!setlocale(LC_ALL, "de_DE.UTF-8")) return 10;
    char probe[16];
    snprintf(probe, sizeof probe, "%.2f", 1.5);
    if (strcmp(probe, "1,50")) return 11; /* not a decimal-comma locale: the test would prove nothing */
    tile_context *ctx = NULL;
    if (tile_context_create("emu", &ctx) != TILE_OK) return 12;
    static const char src[] = "@num_warps(2)\n"
                              "kernel k(out: *f32, n: i32, const S: f32 = 0.25) {\n"
                              "    let o = arange(0, 64);\n"
                              "    store(out + o, (o as f32) * 1.5 + S + 2.5e-1, o < n);\n"
                              "}\n";
    const char *defines[] = {"S=0.75", NULL};
    tile_module *m = NULL, *mp = NULL;
    tile_kernel *k = NULL, *kp = NULL;
    if (tile_module_load_source(ctx, src, defines, &m) != TILE_OK) {
        fprintf(stderr, "%s\n", tile_last_error(ctx));
        return 13;
    }
    if (tile_module_get_kernel(m, "k", &k) != TILE_OK) return 14;
    static const char ptx[] = ".version 8.0\n.target sm_80\n.address_size 64\n"
                              ".visible .entry p(.param .u64 out)\n{\n .reg .f32 %f<3>;\n .reg .b64 %rd<2>;\n"
                              " ld.param.u64 %rd1, [out];\n mov.f32 %f1, 2.5;\n add.f32 %f2, %f1, 0.125;\n"
                              " st.global.f32 [%rd1], %f2;\n ret;\n}\n";
    if (tile_module_load_ptx(ctx, ptx, &mp) != TILE_OK || tile_module_get_kernel(mp, "p", &kp) != TILE_OK) {
        fprintf(stderr, "%s\n", tile_last_error(ctx));
        return 15;
    }
    enum { N = 50 };
    float host[64], got[64];
    memset(host, 0xA5, sizeof host); /* poisoned */
    tile_devptr d = 0;
    int n = N;
    if (tile_malloc(ctx, sizeof host, &d) != TILE_OK || tile_memcpy_htod(ctx, d, host, sizeof host) != TILE_OK) return 16;
    void *args[] = {&d, &n};
    if (tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL) != TILE_OK || tile_synchronize(ctx) != TILE_OK ||
        tile_memcpy_dtoh(ctx, got, d, sizeof got) != TILE_OK)
        return 17;
    for (int i = 0; i < 64; i++) {
        float want = i < N ? (float)i * 1.5f + 0.75f + 0.25f : host[i];
        if (memcmp(&got[i], &want, 4)) {
            fprintf(stderr, "out[%d] = %g, not %g\n", i, (double)got[i], (double)want);
            return 18;
        }
    }
    void *pargs[] = {&d};
    if (tile_launch_raw(kp, (tile_dim3){1, 1, 1}, (tile_dim3){1, 1, 1}, 0, pargs, NULL) != TILE_OK || tile_synchronize(ctx) != TILE_OK ||
        tile_memcpy_dtoh(ctx, got, d, 4) != TILE_OK)
        return 19;
    if (got[0] != 2.625f) {
        fprintf(stderr, "the PTX stored %g, not 2.625\n", (double)got[0]);
        return 20;
    }
    tile_free(ctx, d);
    tile_module_unload(mp);
    tile_module_unload(m);
    tile_context_destroy(ctx);
    return 0;
}
Test(api_audit, numbers_read_and_written_in_a_decimal_comma_locale, .timeout = 120) {
    char locdir[] = "/tmp/tile_locale_XXXXXX", cachedir[] = "/tmp/tile_locale_cache_XXXXXX", cmd[512];
    cr_assert(mkdtemp(locdir) && mkdtemp(cachedir));
    snprintf(cmd, sizeof cmd, "localedef -i de_DE -f UTF-8 '%s/de_DE.UTF-8' >/dev/null 2>&1", locdir);
    int made = system(cmd);
    cr_assert(made != -1 && WIFEXITED(made) && WEXITSTATUS(made) <= 1, /* 1: made, with warnings */
              "localedef could not make de_DE.UTF-8 (the Debian package locales, scripts/setup.sh): status %d", made);
    pid_t pid = fork();
    if (pid == 0) _exit(decimal_comma_child(locdir, cachedir));
    int st = 0;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", locdir, cachedir);
    cr_assert_eq(system(cmd), 0);
    cr_assert(WIFEXITED(st), "the child did not exit (signal %d)", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    cr_assert_eq(WEXITSTATUS(st), 0, "step %d failed (10: no such locale, 11: not a decimal comma, 13/15: load refused; "
                                     "18/20: wrong values)", WEXITSTATUS(st));
}
