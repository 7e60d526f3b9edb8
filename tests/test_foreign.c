/* test_foreign.c - memory, contexts and streams the caller already has (docs/runtime.md,
 * "Memory and streams you already have").
 *
 * A client that owns its memory: host buffers of its own, registered with
 * tile_register_memory (never tile_malloc), filled and read in place (the
 * emulator maps them zero-copy, so no tile_memcpy is needed either way), and
 * its own streams (tile_stream_create, and the default stream wrapped with
 * tile_stream_from_native).  On them it runs tile_gemm, tile_attention_fwd,
 * tile_attention_decode_paged and tile_moe_forward at odd sizes, outputs
 * poisoned first, each checked against the float64 references of ref/ with
 * the tolerances of test_gemm.c, test_attention_api.c and test_moe.c.  Then
 * the errors: a range used after it was unregistered, overlapping
 * registrations, a pointer just past a registered range, tile_free of one,
 * and what the emulator does not have (native contexts, native streams).
 * TILE_TEST_DEVICE=cuda runs the same client on a GPU (registered memory is
 * then pinned, mapped host memory). */
#include <dlfcn.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "tests/test_rng.h"
#include "ref/ref.h"
#include "support/hostfloat.h"
#include "include/tile/tile.h"

static const char *device(void) { return getenv("TILE_TEST_DEVICE") ? getenv("TILE_TEST_DEVICE") : "emu"; }

static tile_context *open_ctx(void) {
    tile_context_options o = {.device = device(), .no_disk_cache = 1};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK, "%s", tile_last_error(NULL));
    return ctx;
}

/* The client's own memory: a host buffer, registered. */
typedef struct Buf {
    void *h;
    size_t bytes;
    tile_devptr d;
} Buf;

static Buf buf_new(tile_context *ctx, size_t bytes) {
    Buf b = {calloc(1, bytes ? bytes : 1), bytes ? bytes : 1, 0};
    cr_assert(b.h);
    tile_status st = tile_register_memory(ctx, b.h, b.bytes, &b.d);
    cr_assert_eq(st, TILE_OK, "tile_register_memory: %s", tile_last_error(ctx));
    cr_assert_neq(b.d, 0);
    return b;
}

static void buf_free(tile_context *ctx, Buf *b) {
    if (!b->h) return;
    cr_assert_eq(tile_unregister_memory(ctx, b->d), TILE_OK, "%s", tile_last_error(ctx));
    free(b->h);
    *b = (Buf){0};
}

static uint16_t to16(tile_dtype t, double v) { return t == TILE_F16 ? f32_to_f16((float)v) : f32_to_bf16((float)v); }
static double from16(tile_dtype t, uint16_t h) { return t == TILE_F16 ? f16_to_d(h) : bf16_to_d(h); }
static const uint16_t POISON16 = 0x7e00; /* NaN in f16 and in bf16 */

/* random values of type t into h[n], their exact values into v[n] */
static void fill16(tile_dtype t, size_t n, uint16_t *h, double *v, double scale) {
    for (size_t i = 0; i < n; i++) {
        h[i] = to16(t, urand() * scale);
        v[i] = from16(t, h[i]);
    }
}

/* ---- tile_gemm: f16 -> f32, 37 x 45 x 29, C with 3 gap columns (poisoned, must stay so) ---- */
static void run_gemm(tile_context *ctx, tile_stream stream) {
    int m = 37, n = 45, k = 29, ldc = n + 3;
    Buf a = buf_new(ctx, 2 * (size_t)m * k), b = buf_new(ctx, 2 * (size_t)k * n), c = buf_new(ctx, 4 * (size_t)m * ldc),
        bias = buf_new(ctx, 4 * (size_t)n);
    double *va = malloc(sizeof(double) * (size_t)m * k), *vb = malloc(sizeof(double) * (size_t)k * n), *vbias = malloc(sizeof(double) * (size_t)n);
    /* written after registering: the device sees the bytes in place */
    fill16(TILE_F16, (size_t)m * k, a.h, va, 1);
    fill16(TILE_F16, (size_t)k * n, b.h, vb, 1);
    for (int j = 0; j < n; j++) ((float *)bias.h)[j] = (float)urand(), vbias[j] = ((float *)bias.h)[j];
    for (size_t i = 0; i < (size_t)m * ldc; i++) ((float *)c.h)[i] = NAN;
    tile_gemm_args g = {.m = m, .n = n, .k = k, .a = a.d, .lda = k, .b = b.d, .ldb = n, .c = c.d, .ldc = ldc, .in_dtype = TILE_F16,
                        .out_dtype = TILE_F32, .alpha = 1, .bias = bias.d, .activation = TILE_ACT_RELU, .stream = stream};
    tile_status st = tile_gemm(ctx, &g);
    cr_assert_eq(st, TILE_OK, "tile_gemm: %s", tile_last_error(ctx));
    cr_assert_eq(tile_stream_synchronize(ctx, stream), TILE_OK, "%s", tile_last_error(ctx));
    ref_gemm_args r = {.m = m, .n = n, .k = k, .a = va, .lda = k, .b = vb, .ldb = n, .alpha = 1, .bias = vbias, .activation = TILE_ACT_RELU};
    const float *got = c.h;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < ldc; j++) {
            float x = got[(size_t)i * ldc + j];
            if (j >= n) {
                cr_assert(isnan(x), "tile_gemm wrote C[%d][%d], past n = %d", i, j, n);
                continue;
            }
            double mag, want = ref_gemm_at(&r, i, j, &mag);
            cr_assert(fabs(x - want) <= 1e-5 * mag + 1e-5, "tile_gemm: C[%d][%d] = %.8g, want %.8g (seed %llu)", i, j, x, want,
                      (unsigned long long)seed);
        }
    buf_free(ctx, &a), buf_free(ctx, &b), buf_free(ctx, &c), buf_free(ctx, &bias);
    free(va), free(vb), free(vbias);
}

/* ---- tile_attention_fwd: f16, GQA 4/2, 19 queries over 33 keys, causal, with the LSE ---- */
static void run_attention(tile_context *ctx, tile_stream stream) {
    int B = 2, Hq = 4, Hk = 2, Sq = 19, Sk = 33, D = 64;
    size_t nq = (size_t)B * Sq * Hq * D, nk = (size_t)B * Sk * Hk * D, nl = (size_t)B * Hq * Sq;
    Buf q = buf_new(ctx, 2 * nq), k = buf_new(ctx, 2 * nk), v = buf_new(ctx, 2 * nk), o = buf_new(ctx, 2 * nq), lse = buf_new(ctx, 4 * nl);
    double *vq = malloc(8 * nq), *vk = malloc(8 * nk), *vv = malloc(8 * nk), *ro = malloc(8 * nq), *rl = malloc(8 * nl);
    fill16(TILE_F16, nq, q.h, vq, 1);
    fill16(TILE_F16, nk, k.h, vk, 1);
    fill16(TILE_F16, nk, v.h, vv, 1);
    for (size_t i = 0; i < nq; i++) ((uint16_t *)o.h)[i] = POISON16;
    for (size_t i = 0; i < nl; i++) ((float *)lse.h)[i] = NAN;
    tile_attention_args a = {.dtype = TILE_F16, .batch = B, .heads_q = Hq, .heads_kv = Hk, .head_dim = D, .seq_q = Sq, .seq_k = Sk,
                             .q = q.d, .k = k.d, .v = v.d, .o = o.d, .lse = lse.d, .causal = 1, .window_left = -1, .window_right = -1,
                             .stream = stream};
    tile_status st = tile_attention_fwd(ctx, &a);
    cr_assert_eq(st, TILE_OK, "tile_attention_fwd: %s", tile_last_error(ctx));
    cr_assert_eq(tile_stream_synchronize(ctx, stream), TILE_OK, "%s", tile_last_error(ctx));
    ref_attention_args r = {.batch = B, .heads_q = Hq, .heads_kv = Hk, .head_dim = D, .seq_q = Sq, .seq_k = Sk, .q = vq, .k = vk, .v = vv,
                            .o = ro, .lse = rl, .causal = true, .window_left = -1, .window_right = -1};
    cr_assert(ref_attention(&r));
    for (size_t i = 0; i < nq; i++) {
        double got = from16(TILE_F16, ((uint16_t *)o.h)[i]);
        cr_assert(fabs(got - ro[i]) <= 2e-3, "tile_attention_fwd: O[%zu] = %.6g, want %.6g (seed %llu)", i, got, ro[i], (unsigned long long)seed);
    }
    for (size_t i = 0; i < nl; i++) {
        double got = ((float *)lse.h)[i];
        cr_assert(fabs(got - rl[i]) <= 1e-4 + 1e-5 * fabs(rl[i]), "tile_attention_fwd: LSE[%zu] = %.8g, want %.8g (seed %llu)", i, got, rl[i],
                  (unsigned long long)seed);
    }
    buf_free(ctx, &q), buf_free(ctx, &k), buf_free(ctx, &v), buf_free(ctx, &o), buf_free(ctx, &lse);
    free(vq), free(vk), free(vv), free(ro), free(rl);
}

/* ---- tile_attention_decode_paged: bf16, 3 sequences of 5, 40 and 77 tokens, 2 query tokens, split in 2
 * over the client's workspace; shuffled block table with spare blocks ---- */
static void run_paged(tile_context *ctx, tile_stream stream) {
    int S = 3, Hq = 4, Hk = 2, T = 2, D = 64, bs = 16, lens[3] = {5, 40, 77}, max_ctx = 77;
    int sbt = (max_ctx + bs - 1) / bs + 1, used = 0;
    for (int s = 0; s < S; s++) used += (lens[s] + bs - 1) / bs;
    int nb = used + 2;
    size_t nq = (size_t)S * T * Hq * D, nc = (size_t)nb * bs * Hk * D;
    Buf q = buf_new(ctx, 2 * nq), o = buf_new(ctx, 2 * nq), kc = buf_new(ctx, 2 * nc), vc = buf_new(ctx, 2 * nc),
        tab = buf_new(ctx, 4 * (size_t)S * sbt), cl = buf_new(ctx, 4 * (size_t)S);
    double *vq = malloc(8 * nq), *vk = malloc(8 * nc), *vv = malloc(8 * nc), *ro = malloc(8 * nq);
    fill16(TILE_BF16, nq, q.h, vq, 1);
    fill16(TILE_BF16, nc, kc.h, vk, 1);
    fill16(TILE_BF16, nc, vc.h, vv, 1);
    for (size_t i = 0; i < nq; i++) ((uint16_t *)o.h)[i] = POISON16;
    int *perm = malloc(sizeof(int) * (size_t)nb), *table = tab.h;
    for (int i = 0; i < nb; i++) perm[i] = i;
    for (int i = nb - 1; i > 0; i--) {
        int j = irand(i + 1), x = perm[i];
        perm[i] = perm[j], perm[j] = x;
    }
    for (int s = 0, next = 0; s < S; s++)
        for (int i = 0; i < sbt; i++) table[s * sbt + i] = i < (lens[s] + bs - 1) / bs ? perm[next++] : 0;
    memcpy(cl.h, lens, sizeof lens);
    tile_paged_attention_args a = {.dtype = TILE_BF16, .num_seqs = S, .heads_q = Hq, .heads_kv = Hk, .head_dim = D, .num_tokens = T,
                                   .block_size = bs, .num_blocks = nb, .q = q.d, .o = o.d, .k_cache = kc.d, .v_cache = vc.d,
                                   .block_tables = tab.d, .block_table_stride = sbt, .context_lens = cl.d, .max_context_len = max_ctx,
                                   .num_splits = 2, .stream = stream};
    size_t ws_bytes;
    int splits;
    cr_assert_eq(tile_paged_attention_workspace_size(ctx, &a, &ws_bytes, &splits), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(splits, 2);
    cr_assert_gt(ws_bytes, 0);
    Buf ws = buf_new(ctx, ws_bytes);
    memset(ws.h, 0xff, ws_bytes);
    a.workspace = ws.d, a.workspace_bytes = ws_bytes;
    tile_status st = tile_attention_decode_paged(ctx, &a);
    cr_assert_eq(st, TILE_OK, "tile_attention_decode_paged: %s", tile_last_error(ctx));
    cr_assert_eq(tile_stream_synchronize(ctx, stream), TILE_OK, "%s", tile_last_error(ctx));
    ref_paged_args r = {.num_seqs = S, .heads_q = Hq, .heads_kv = Hk, .head_dim = D, .num_tokens = T, .block_size = bs, .num_blocks = nb,
                        .q = vq, .q_stride = {(int64_t)T * Hq * D, (int64_t)Hq * D, D}, .o = ro,
                        .o_stride = {(int64_t)T * Hq * D, (int64_t)Hq * D, D}, .k_cache = vk, .v_cache = vv,
                        .k_stride = {(int64_t)bs * Hk * D, (int64_t)Hk * D, D}, .v_stride = {(int64_t)bs * Hk * D, (int64_t)Hk * D, D},
                        .block_tables = table, .block_table_stride = sbt, .context_lens = lens};
    cr_assert(ref_paged_decode(&r), "ref_paged_decode rejected the case");
    for (size_t i = 0; i < nq; i++) {
        double got = from16(TILE_BF16, ((uint16_t *)o.h)[i]);
        cr_assert(fabs(got - ro[i]) <= 1.6e-2, "tile_attention_decode_paged: O[%zu] = %.6g, want %.6g (seed %llu)", i, got, ro[i],
                  (unsigned long long)seed);
    }
    buf_free(ctx, &q), buf_free(ctx, &o), buf_free(ctx, &kc), buf_free(ctx, &vc), buf_free(ctx, &tab), buf_free(ctx, &cl), buf_free(ctx, &ws);
    free(vq), free(vk), free(vv), free(ro), free(perm);
}

/* ---- tile_moe_forward: f16, 7 tokens, 8 experts, top-2 given (one slot dropped), hidden 48, inter 80,
 * out with 3 gap columns (poisoned, must stay so), the client's workspace ---- */
static void run_moe(tile_context *ctx, tile_stream stream) {
    int T = 7, E = 8, K = 2, H = 48, I = 80, ldo = H + 3;
    size_t nx = (size_t)T * H, n1 = (size_t)E * 2 * I * H, n2 = (size_t)E * H * I;
    Buf x = buf_new(ctx, 2 * nx), w1 = buf_new(ctx, 2 * n1), w2 = buf_new(ctx, 2 * n2), out = buf_new(ctx, 4 * (size_t)T * ldo),
        ids = buf_new(ctx, 4 * (size_t)T * K), tw = buf_new(ctx, 4 * (size_t)T * K);
    double *vx = malloc(8 * nx), *vw1 = malloc(8 * n1), *vw2 = malloc(8 * n2), *vtw = malloc(8 * (size_t)T * K);
    fill16(TILE_F16, nx, x.h, vx, 1);
    fill16(TILE_F16, n1, w1.h, vw1, 2 / sqrt(H));
    fill16(TILE_F16, n2, w2.h, vw2, 2 / sqrt(I));
    int32_t *hid = ids.h;
    float *htw = tw.h;
    for (int s = 0; s < T * K; s++) {
        hid[s] = s % K ? (hid[s - 1] + 1 + irand(E - 1)) % E : irand(E);
        htw[s] = (float)(0.25 + 0.75 * fabs(urand())), vtw[s] = htw[s];
    }
    hid[5] = -1; /* a dropped slot */
    for (size_t i = 0; i < (size_t)T * ldo; i++) ((float *)out.h)[i] = NAN;
    tile_moe_args a = {.tokens = T, .hidden = H, .inter = I, .experts = E, .topk = K, .dtype = TILE_F16, .x = x.d, .w1 = w1.d, .w2 = w2.d,
                       .out = out.d, .ldo = ldo, .topk_ids = ids.d, .topk_weights = tw.d, .stream = stream};
    size_t ws_bytes;
    cr_assert_eq(tile_moe_workspace_size(&a, &ws_bytes), TILE_OK);
    Buf ws = buf_new(ctx, ws_bytes);
    memset(ws.h, 0xff, ws_bytes);
    a.workspace = ws.d, a.workspace_bytes = ws_bytes;
    tile_status st = tile_moe_forward(ctx, &a);
    cr_assert_eq(st, TILE_OK, "tile_moe_forward: %s", tile_last_error(ctx));
    cr_assert_eq(tile_stream_synchronize(ctx, stream), TILE_OK, "%s", tile_last_error(ctx));
    double *want = calloc(nx, sizeof(double)), *mag = calloc(nx, sizeof(double));
    ref_moe_args r = {.tokens = T, .hidden = H, .inter = I, .experts = E, .topk = K, .x = vx, .w1 = vw1, .w2 = vw2, .topk_ids = hid,
                      .topk_weights = vtw};
    cr_assert(ref_moe_forward(&r, want, H, mag));
    const float *got = out.h;
    for (int t = 0; t < T; t++)
        for (int c = 0; c < ldo; c++) {
            float g = got[(size_t)t * ldo + c];
            if (c >= H) {
                cr_assert(isnan(g), "tile_moe_forward wrote out[%d][%d], past hidden", t, c);
                continue;
            }
            double w = want[(size_t)t * H + c], tol = (1.0 / 2048 + 3e-5) * mag[(size_t)t * H + c] + 1e-6;
            cr_assert(fabs(g - w) <= tol, "tile_moe_forward: out[%d][%d] = %.7g, want %.7g (tol %.3g, seed %llu)", t, c, g, w, tol,
                      (unsigned long long)seed);
        }
    buf_free(ctx, &x), buf_free(ctx, &w1), buf_free(ctx, &w2), buf_free(ctx, &out), buf_free(ctx, &ids), buf_free(ctx, &tw),
        buf_free(ctx, &ws);
    free(vx), free(vw1), free(vw2), free(vtw), free(want), free(mag);
}

Test(foreign, shipped_kernels_on_client_memory_and_streams, .timeout = 600) {
    seed_rng();
    tile_context *ctx = open_ctx();
    tile_stream own, dflt;
    cr_assert_eq(tile_stream_create(ctx, &own), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_stream_from_native(ctx, NULL, &dflt), TILE_OK, "%s", tile_last_error(ctx)); /* the default stream, wrapped */
    cr_assert_not_null(dflt);
    run_gemm(ctx, own);
    run_attention(ctx, dflt);
    run_paged(ctx, own);
    run_moe(ctx, dflt);
    cr_assert_eq(tile_stream_destroy(ctx, dflt), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_stream_destroy(ctx, own), TILE_OK, "%s", tile_last_error(ctx));
    /* the wrapper is gone: using it is an error */
    cr_assert_eq(tile_stream_synchronize(ctx, dflt), TILE_ERROR_INVALID_VALUE);
    tile_context_destroy(ctx);
}

#define EXPECT_ERR(call, status, text)                                                                                     \
    do {                                                                                                                   \
        tile_status st_ = (call);                                                                                          \
        cr_expect_eq(st_, status, "%s: %d (%s)", #call, st_, tile_last_error(ctx));                                        \
        cr_expect(strstr(tile_last_error(ctx), text), "%s: message '%s' lacks '%s'", #call, tile_last_error(ctx), text); \
    } while (0)

Test(foreign, registration_errors) {
    tile_context *ctx = open_ctx();
    size_t n = 4096; /* a page: on cuda, registrations are pinned by the page, so the two halves must not share one */
    uint8_t *mem = aligned_alloc(4096, 2 * n), tmp[64] = {0};
    cr_assert(mem);
    memset(mem, 0, 2 * n);
    tile_devptr d, d2;
    EXPECT_ERR(tile_register_memory(ctx, NULL, n, &d), TILE_ERROR_INVALID_VALUE, "host_ptr is NULL or bytes is 0");
    EXPECT_ERR(tile_register_memory(ctx, mem, 0, &d), TILE_ERROR_INVALID_VALUE, "host_ptr is NULL or bytes is 0");
    cr_assert_eq(tile_register_memory(ctx, mem, n, &d), TILE_OK, "%s", tile_last_error(ctx));
    /* the copies see the same bytes as the host */
    mem[100] = 42;
    cr_assert_eq(tile_memcpy_dtoh(ctx, tmp, d + 100, 1), TILE_OK, "%s", tile_last_error(ctx));
    cr_expect_eq(tmp[0], 42);
    cr_assert_eq(tile_memset(ctx, d + 200, 7, 8), TILE_OK, "%s", tile_last_error(ctx));
    cr_expect_eq(mem[207], 7);
    cr_expect_eq(mem[208], 0);
    /* copies between the registered range and host bytes inside it overlap (on the emulator the device bytes
     * are the host's): they move as memmove does (memcpy there was undefined; ASan refused it) */
    tile_device_properties p;
    cr_assert_eq(tile_context_get_properties(ctx, &p), TILE_OK);
    if (p.is_emulator) {
        for (int i = 0; i < 256; i++) mem[1024 + i] = (uint8_t)i;
        cr_assert_eq(tile_memcpy_htod(ctx, d + 1040, mem + 1024, 200), TILE_OK, "%s", tile_last_error(ctx));
        for (int i = 0; i < 200; i++) cr_assert_eq(mem[1040 + i], (uint8_t)i, "htod byte %d: %u", i, mem[1040 + i]);
        cr_assert_eq(tile_memcpy_dtoh(ctx, mem + 1030, d + 1040, 200), TILE_OK, "%s", tile_last_error(ctx));
        for (int i = 0; i < 200; i++) cr_assert_eq(mem[1030 + i], (uint8_t)i, "dtoh byte %d: %u", i, mem[1030 + i]);
        memset(mem + 1024, 0, 256);
    }
    /* overlapping ranges: inside, straddling either end, the same one again */
    EXPECT_ERR(tile_register_memory(ctx, mem + 512, 16, &d2), TILE_ERROR_INVALID_VALUE, "overlaps host memory already registered");
    EXPECT_ERR(tile_register_memory(ctx, mem + n - 8, 64, &d2), TILE_ERROR_INVALID_VALUE, "overlaps");
    EXPECT_ERR(tile_register_memory(ctx, mem, n, &d2), TILE_ERROR_INVALID_VALUE, "overlaps");
    cr_expect_eq(d2, 0);
    /* the range right after it is not an overlap */
    cr_assert_eq(tile_register_memory(ctx, mem + n, n, &d2), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_unregister_memory(ctx, d2), TILE_OK, "%s", tile_last_error(ctx));
    /* just past the end: one byte after, and a range that runs over it */
    EXPECT_ERR(tile_memcpy_htod(ctx, d + n, tmp, 1), TILE_ERROR_INVALID_VALUE, "was not allocated with tile_malloc on this context, nor registered");
    EXPECT_ERR(tile_memcpy_htod(ctx, d + n - 4, tmp, 8), TILE_ERROR_INVALID_VALUE, "run past the end");
    tile_gemm_args g = {.m = 32, .n = 32, .k = 32, .a = d, .lda = 32, .b = d, .ldb = 32, .c = d + n - 4 * 32 * 32 + 4, .ldc = 32,
                        .in_dtype = TILE_F16, .out_dtype = TILE_F32, .alpha = 1};
    EXPECT_ERR(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE, "run past the end");
    /* read-only pages are refused (on the emulator a write through them killed the process; cuMemHostRegister
     * refuses them too) */
    void *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(ro, MAP_FAILED);
    EXPECT_ERR(tile_register_memory(ctx, ro, 4096, &d2), TILE_ERROR_INVALID_VALUE, "not all writable memory of this process");
    munmap(ro, 4096);
    /* not tile_malloc's: tile_free refuses it */
    EXPECT_ERR(tile_free(ctx, d), TILE_ERROR_INVALID_VALUE, "tile_unregister_memory it");
    EXPECT_ERR(tile_unregister_memory(ctx, d + 16), TILE_ERROR_INVALID_VALUE, "not a device pointer tile_register_memory returned");
    tile_devptr m;
    cr_assert_eq(tile_malloc(ctx, 64, &m), TILE_OK);
    EXPECT_ERR(tile_unregister_memory(ctx, m), TILE_ERROR_INVALID_VALUE, "not a device pointer tile_register_memory returned");
    tile_free(ctx, m);
    /* unregistered, then used: copies and the shipped kernels refuse it */
    cr_assert_eq(tile_unregister_memory(ctx, d), TILE_OK, "%s", tile_last_error(ctx));
    EXPECT_ERR(tile_memcpy_htod(ctx, d, tmp, 4), TILE_ERROR_INVALID_VALUE, "was not allocated");
    g.c = d;
    EXPECT_ERR(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE, "was not allocated");
    EXPECT_ERR(tile_unregister_memory(ctx, d), TILE_ERROR_INVALID_VALUE, "not a device pointer tile_register_memory returned");
    /* the memory is still the client's and may be registered again */
    cr_assert_eq(tile_register_memory(ctx, mem, n, &d), TILE_OK, "%s", tile_last_error(ctx));
    tile_context_destroy(ctx); /* unregisters what is left; frees none of it */
    mem[0] = 1;
    free(mem);
}

Test(foreign, another_context_s_registration) {
    tile_context *ctx = open_ctx(), *other = open_ctx();
    uint8_t *mem = calloc(1, 256), tmp[4];
    tile_devptr d;
    cr_assert_eq(tile_register_memory(other, mem, 256, &d), TILE_OK, "%s", tile_last_error(other));
    if (!strcmp(device(), "emu")) /* on a GPU both contexts are the primary context: the pointer is valid in both */
        EXPECT_ERR(tile_memcpy_dtoh(ctx, tmp, d, 4), TILE_ERROR_INVALID_VALUE, "was not allocated");
    tile_context_destroy(other);
    tile_context_destroy(ctx);
    free(mem);
}

Test(foreign, emulator_has_no_native_handles) {
    if (strcmp(device(), "emu")) return;
    tile_context *ctx = NULL;
    int fake;
    tile_context_options o = {.device = "emu"};
    cr_expect_eq(tile_context_create_from_native(&fake, &o, &ctx), TILE_ERROR_UNSUPPORTED);
    cr_expect_null(ctx);
    cr_expect(strstr(tile_last_error(NULL), "the emulator has no native contexts"), "%s", tile_last_error(NULL));
    cr_expect_eq(tile_context_create_from_native(NULL, &o, &ctx), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(NULL), "cu_context is NULL"), "%s", tile_last_error(NULL));
    void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (driver) dlclose(driver);
    else { /* no CUDA driver on this machine: a CUcontext cannot exist, nothing is dereferenced */
        cr_expect_eq(tile_context_create_from_native(&fake, NULL, &ctx), TILE_ERROR_NO_DEVICE);
        cr_expect_null(ctx);
        cr_expect(strstr(tile_last_error(NULL), "libcuda.so.1"), "%s", tile_last_error(NULL));
    }
    ctx = open_ctx();
    cr_expect(!strstr(tile_last_error(NULL), "cu_context"), "a context was made: the creation error is cleared (%s)", tile_last_error(NULL));
    tile_stream s = NULL;
    EXPECT_ERR(tile_stream_from_native(ctx, &fake, &s), TILE_ERROR_UNSUPPORTED, "only NULL (the default stream) can be wrapped");
    cr_expect_null(s);
    EXPECT_ERR(tile_stream_from_native(ctx, NULL, NULL), TILE_ERROR_INVALID_VALUE, "out is NULL");
    tile_context_destroy(ctx);
}
