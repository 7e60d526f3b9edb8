/* test_examples.c - the Triton tutorial ports of kernels/examples/ run on the
 * PTX emulator against float64 C references, on fresh random inputs with the
 * outputs poisoned first, at sizes that are not multiples of the tiles:
 *   05 layer norm (forward; backward with the atomic_cas/atomic_xchg lock),
 *   06 fused attention (inner loop a fn returning a tuple; causal or not),
 *   07 asin over a vector (the extern-math tutorial),
 *   08 grouped GEMM (persistent programs, a `while` work loop);
 * and training kernels of Liger-Kernel and unsloth ported the same way:
 *   group norm (a 2-D grid; the backward's per-channel sums by scalar atomic_add),
 *   generalized JSD (compile-time float beta branches, ignored rows returning early),
 *   chunked cross-entropy (a 2-D grid over vocabulary chunks, softcapping and scaling);
 * and ports of serving-engine kernels (vLLM's): unified paged attention (block tables, grouped query heads,
 * a binary search for the sequence, an fp8 cache scaled under is_fp8, sinks as a None pointer or not, soft cap,
 * sliding window), moe_align_block_size (four launches of scalar loads and stores at addresses from memory) and
 * the speculative-decoding rejection sampler (ragged loops that stop at the first rejection, Gumbel-max
 * recovered tokens), each also on sm_90a;
 * and FlagGems' conv2d forward as an implicit GEMM (groups, stride, padding, dilation; run-time strides) and its
 * top-k second stage (a bitonic argsort by reshapes, masked sums and XOR swaps of the bits);
 * and split-KV decode attention in two launches (lightllm's GQA flash decoding: a 3-D grid of requests, KV heads
 * and splits over a slot table's shuffled token pool, grouped heads padded to a dot, then a merge of the splits
 * by their log-sum-exps);
 * and torchao's MX fp8 quantization (e8m0 shared exponents from bits or ceil(log2), a block per row by reshape);
 * and native-sparse-attention's selected-block attention (block pointers, block tables, packed sequences, G query
 * heads below 16 in a dot);
 * and a flex-attention forward in PyTorch Inductor's template's shape (score_mod and mask_mod passed as functions,
 * block-sparse key lists of partial and full blocks);
 * and lightning attention's forward (linear attention with a per-head decay: a causal decay mask within a block, a
 * state carried across blocks by dots). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/tile/tile.h"
#include "runtime/device.h"
#include "tests/test_rng.h"

static const DevOptions racecheck = {.emu_racecheck = true};

typedef struct K {
    TileDevice *dev;
    TileDevModule *mod;
    tile_compiled c;
} K;

/* Compile kernels/examples/FILE with the given defines and specializations (NULL-terminated lists, or NULL) for
 * `arch` (NULL: the default target) and load it on `device` (NULL: TILE_TEST_DEVICE, else "emu"). */
static void load_example_on(K *k, const char *file, const char *const *defines, const char *const *specialize, const char *arch,
                            const char *device) {
    char path[1024];
    snprintf(path, sizeof path, "%s/kernels/examples/%s", TILE_SOURCE_DIR, file);
    tile_compile_options o = {.defines = defines, .specialize = specialize, .arch = arch};
    tile_status st = tile_compile_file(path, &o, &k->c);
    cr_assert_eq(st, TILE_OK, "%s: %s\n%s", file, tile_status_string(st), k->c.diagnostics);
    char *err = NULL;
    if (!device) device = getenv("TILE_TEST_DEVICE") ? getenv("TILE_TEST_DEVICE") : "emu";
    cr_assert_eq(dev_open(device, &racecheck, &k->dev, &err), DEV_OK, "%s", err ? err : "?");
    cr_assert_eq(dev_module_load_ptx(k->dev, k->c.ptx, &k->mod), DEV_OK, "%s", dev_last_error(k->dev));
}

static void load_example(K *k, const char *file, const char *const *defines) { load_example_on(k, file, defines, NULL, NULL, NULL); }

static void unload(K *k) {
    dev_module_unload(k->mod);
    dev_close(k->dev);
    tile_compiled_free(&k->c);
}

static uint64_t upload(K *k, const void *h, size_t bytes) {
    uint64_t d;
    cr_assert_eq(dev_malloc(k->dev, bytes, &d), DEV_OK);
    cr_assert_eq(dev_memcpy_htod(k->dev, d, h, bytes), DEV_OK);
    return d;
}

static uint64_t poisoned(K *k, size_t bytes) {
    void *p = malloc(bytes);
    memset(p, 0xff, bytes);
    uint64_t d = upload(k, p, bytes);
    free(p);
    return d;
}

static void download(K *k, void *h, uint64_t d, size_t bytes) { cr_assert_eq(dev_memcpy_dtoh(k->dev, h, d, bytes), DEV_OK); }

static void launch(K *k, const char *name, unsigned gx, unsigned gy, void **params) {
    TileDevFunction *fn;
    cr_assert_eq(dev_module_get_function(k->mod, name, &fn), DEV_OK, "%s", dev_last_error(k->dev));
    int warps = 0;
    for (int i = 0; i < k->c.nkernels; i++)
        if (!strcmp(k->c.kernels[i].name, name)) warps = k->c.kernels[i].num_warps;
    cr_assert(warps > 0, "no kernel %s", name);
    DevStatus st = dev_launch(fn, gx, gy, 1, (unsigned)(32 * warps), 1, 1, 0, NULL, params);
    cr_assert_eq(st, DEV_OK, "launch %s: %s", name, dev_last_error(k->dev));
    cr_assert_eq(dev_synchronize(k->dev), DEV_OK, "%s", dev_last_error(k->dev));
}

/* |got - want| <= atol + rtol |want|, NaN fails; reports the first few. */
static int check(const char *what, const float *got, const double *want, int n, double atol, double rtol) {
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (!(fabs(got[i] - want[i]) <= atol + rtol * fabs(want[i]))) {
            if (bad < 6) cr_log_error("%s[%d] = %.9g, want %.9g (seed %llu)", what, i, got[i], want[i], (unsigned long long)seed);
            bad++;
        }
    cr_expect_eq(bad, 0, "%s: %d of %d out of tolerance", what, bad, n);
    return bad;
}

static uint16_t f2h(double d) { /* nearest even; |d| well inside the normal range or 0 */
    float f = (float)d;
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, e = (x >> 23) & 0xff, mant = x & 0x7fffff;
    if (e < 113) return (uint16_t)sign; /* below f16's normals: flush (inputs avoid them) */
    uint32_t h = sign | ((e - 112) << 10) | (mant >> 13), rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++;
    return (uint16_t)h;
}

static double h2d(uint16_t h) {
    int e = (h >> 10) & 0x1f, mant = h & 0x3ff;
    double v = e ? ldexp(1024 + mant, e - 25) : ldexp(mant, -24);
    return h & 0x8000 ? -v : v;
}

/* ---- 07: asin ---- */

Test(examples, extern_asin) {
    seed_rng();
    K k;
    load_example(&k, "extern_asin.tile", NULL);
    int n = 3001;
    float *x = malloc(4 * (size_t)n), *y = malloc(4 * (size_t)n);
    double *want = malloc(8 * (size_t)n);
    for (int i = 0; i < n; i++) x[i] = (float)urand(), want[i] = asin((double)x[i]);
    x[0] = 1.0f, want[0] = asin(1.0), x[1] = -1.0f, want[1] = asin(-1.0), x[2] = 0.0f, want[2] = 0.0;
    uint64_t dx = upload(&k, x, 4 * (size_t)n), dy = poisoned(&k, 4 * (size_t)n + 64);
    void *params[] = {&dx, &dy, &n};
    launch(&k, "asin_kernel", (unsigned)((n + 1023) / 1024), 1, params);
    download(&k, y, dy, 4 * (size_t)n);
    /* 4 ulp of f32 */
    int bad = 0;
    for (int i = 0; i < n; i++) {
        double ulp = ldexp(1.0, ilogb(want[i] == 0 ? 1e-38 : want[i]) - 23);
        if (!(fabs(y[i] - want[i]) <= 4 * ulp) && bad++ < 6) cr_log_error("asin(%.9g) = %.9g, want %.12g", x[i], y[i], want[i]);
    }
    cr_expect_eq(bad, 0, "%d asin values off by more than 4 ulp (seed %llu)", bad, (unsigned long long)seed);
    uint32_t tail[16];
    download(&k, tail, dy + 4 * (uint64_t)n, sizeof tail);
    for (int i = 0; i < 16; i++) cr_expect_eq(tail[i], 0xffffffffu, "masked-off element %d was written", n + i);
    free(x), free(y), free(want);
    unload(&k);
}

/* ---- 05: layer norm forward and backward ---- */

Test(examples, layer_norm_fwd_bwd) {
    seed_rng();
    K k;
    load_example(&k, "layer_norm.tile", NULL);
    enum { M = 37, N = 203, GROUP = 8 };
    float eps = 1e-5f;
    int stride = N, n = N;
    static float x[M * N], dy[M * N], w[N], b[N];
    for (int i = 0; i < M * N; i++) x[i] = (float)(urand() * 2 + 0.5), dy[i] = (float)urand();
    for (int j = 0; j < N; j++) w[j] = (float)(1 + 0.5 * urand()), b[j] = (float)urand();
    uint64_t dx_ = upload(&k, x, sizeof x), ddy = upload(&k, dy, sizeof dy), dw = upload(&k, w, sizeof w), db = upload(&k, b, sizeof b);
    uint64_t dyout = poisoned(&k, sizeof x), dmean = poisoned(&k, 4 * M), drstd = poisoned(&k, 4 * M);
    void *pf[] = {&dx_, &dyout, &dw, &db, &dmean, &drstd, &stride, &n, &eps};
    launch(&k, "layer_norm_fwd", M, 1, pf);
    int32_t locks[2 * GROUP] = {0};
    uint64_t ddx = poisoned(&k, sizeof x), dpw = poisoned(&k, 4 * GROUP * N), dpb = poisoned(&k, 4 * GROUP * N),
             dlock = upload(&k, locks, sizeof locks);
    void *pb[] = {&ddx, &ddy, &dpw, &dpb, &dx_, &dw, &dmean, &drstd, &dlock, &stride, &n};
    launch(&k, "layer_norm_bwd_dx", M, 1, pb);
    int groups = GROUP;
    uint64_t dfw = poisoned(&k, 4 * N), dfb = poisoned(&k, 4 * N);
    void *pr[] = {&dpw, &dpb, &dfw, &dfb, &groups, &n};
    launch(&k, "layer_norm_bwd_dwdb", (N + 63) / 64, 1, pr);

    static float y[M * N], gdx[M * N], mean[M], rstd[M], fw[N], fb[N];
    download(&k, y, dyout, sizeof y), download(&k, mean, dmean, sizeof mean), download(&k, rstd, drstd, sizeof rstd);
    download(&k, gdx, ddx, sizeof gdx), download(&k, fw, dfw, sizeof fw), download(&k, fb, dfb, sizeof fb);
    download(&k, locks, dlock, sizeof locks);
    static double wy[M * N], wdx[M * N], wmean[M], wrstd[M], wfw[N], wfb[N];
    memset(wfw, 0, sizeof wfw), memset(wfb, 0, sizeof wfb);
    for (int i = 0; i < M; i++) {
        const float *xr = x + i * N, *dyr = dy + i * N;
        double mu = 0, var = 0;
        for (int j = 0; j < N; j++) mu += xr[j];
        mu /= N;
        for (int j = 0; j < N; j++) var += (xr[j] - mu) * (xr[j] - mu);
        var /= N;
        double rs = 1 / sqrt(var + eps), c1 = 0, c2 = 0;
        wmean[i] = mu, wrstd[i] = rs;
        for (int j = 0; j < N; j++) {
            double xh = (xr[j] - mu) * rs, wdy = w[j] * (double)dyr[j];
            wy[i * N + j] = xh * w[j] + b[j];
            c1 += xh * wdy, c2 += wdy;
            wfw[j] += dyr[j] * xh, wfb[j] += dyr[j];
        }
        c1 /= N, c2 /= N;
        for (int j = 0; j < N; j++) wdx[i * N + j] = (w[j] * (double)dyr[j] - ((xr[j] - mu) * rs * c1 + c2)) * rs;
    }
    check("mean", mean, wmean, M, 1e-6, 1e-5);
    check("rstd", rstd, wrstd, M, 0, 1e-5);
    check("y", y, wy, M * N, 1e-5, 1e-5);
    check("dx", gdx, wdx, M * N, 1e-5, 1e-4);
    check("dw", fw, wfw, N, 1e-4, 1e-4);
    check("db", fb, wfb, N, 1e-4, 1e-4);
    for (int g = 0; g < GROUP; g++) {
        cr_expect_eq(locks[g], 0, "lock %d left taken", g);
        cr_expect_eq(locks[GROUP + g], 1, "group %d count %d", g, locks[GROUP + g]);
    }
    unload(&k);
}

/* ---- 06: fused attention ---- */

static void attention_case(bool causal) {
    seed_rng();
    K k;
    const char *defs[] = {causal ? "CAUSAL=true" : "CAUSAL=false", NULL};
    load_example(&k, "fused_attention.tile", defs);
    enum { BH = 2, D = 64 };
    int n_ctx = 77;
    float sm_scale = 0.125f;
    size_t ne = (size_t)BH * (size_t)n_ctx * D;
    uint16_t *q = malloc(2 * ne), *kk = malloc(2 * ne), *v = malloc(2 * ne), *o = malloc(2 * ne);
    for (size_t i = 0; i < ne; i++) q[i] = f2h(urand()), kk[i] = f2h(urand()), v[i] = f2h(urand());
    uint64_t dq = upload(&k, q, 2 * ne), dk = upload(&k, kk, 2 * ne), dv = upload(&k, v, 2 * ne), dout = poisoned(&k, 2 * ne),
             dm = poisoned(&k, 4 * BH * (size_t)n_ctx);
    void *params[] = {&dq, &dk, &dv, &dout, &dm, &n_ctx, &sm_scale};
    launch(&k, "attn_fwd", (unsigned)((n_ctx + 63) / 64), BH, params);
    download(&k, o, dout, 2 * ne);
    float *gm = malloc(4 * BH * (size_t)n_ctx), *go = malloc(4 * ne);
    double *wo = malloc(8 * ne), *wm = malloc(8 * BH * (size_t)n_ctx), *s = malloc(8 * (size_t)n_ctx);
    download(&k, gm, dm, 4 * BH * (size_t)n_ctx);
    for (size_t i = 0; i < ne; i++) go[i] = (float)h2d(o[i]);
    for (int h = 0; h < BH; h++)
        for (int i = 0; i < n_ctx; i++) {
            size_t qi = ((size_t)h * n_ctx + i) * D;
            double mx = -INFINITY, l = 0;
            int last = causal ? i : n_ctx - 1;
            for (int j = 0; j <= last; j++) {
                double d = 0;
                for (int c = 0; c < D; c++) d += h2d(q[qi + c]) * h2d(kk[((size_t)h * n_ctx + j) * D + c]);
                s[j] = d * sm_scale;
                if (s[j] > mx) mx = s[j];
            }
            for (int j = 0; j <= last; j++) l += exp(s[j] - mx);
            wm[h * n_ctx + i] = (mx + log(l)) / log(2.0); /* the kernel keeps log2 units */
            for (int c = 0; c < D; c++) {
                double acc = 0;
                for (int j = 0; j <= last; j++) acc += exp(s[j] - mx) / l * h2d(v[((size_t)h * n_ctx + j) * D + c]);
                wo[qi + c] = acc;
            }
        }
    /* p is rounded to f16 before the second dot and the output to f16: ~1e-3 of O(1) values */
    check(causal ? "causal o" : "o", go, wo, (int)ne, 4e-3, 1e-2);
    check(causal ? "causal m" : "m", gm, wm, BH * n_ctx, 1e-4, 1e-4);
    free(q), free(kk), free(v), free(o), free(gm), free(go), free(wo), free(wm), free(s);
    unload(&k);
}

Test(examples, fused_attention) { attention_case(false); }
Test(examples, fused_attention_causal) { attention_case(true); }

/* ---- a flex-attention forward in Inductor's template's shape ---- */

/* flex_attention.tile: ALiBi score_mod and a causal sliding-window mask_mod (130 keys) passed as functions, block-sparse
 * key lists built here as create_block_mask builds them (a 64x64 block is full when the mask holds everywhere in it,
 * partial when somewhere), so listed blocks are not adjacent ([0, 2], [0, 1, 3]) and each sparse block is walked in two
 * 32-key steps; 200 queries and keys (no multiple of 64), two heads, f16 against float64, the LSE in base 2. */
static void flex_attention_case(const char *arch, const char *device) {
    seed_rng();
    K k;
    const char *defs[] = {"HEAD_DIM=32", NULL};
    load_example_on(&k, "flex_attention.tile", defs, NULL, arch, device);
    enum { H = 2, L = 200, D = 32, SB = 64, NQ = (L + SB - 1) / SB, WIN = 130 };
    size_t ne = (size_t)H * L * D;
    uint16_t *q = malloc(2 * ne), *kk = malloc(2 * ne), *v = malloc(2 * ne), *o = malloc(2 * ne);
    for (size_t i = 0; i < ne; i++) q[i] = f2h(urand()), kk[i] = f2h(urand()), v[i] = f2h(urand());
    float slopes[H], lse[H * L], go[H * L * D];
    for (int h = 0; h < H; h++) slopes[h] = (float)(0.05 * (urand() + 1.0));
    int32_t kvn[H * NQ], kvi[H * NQ * NQ], fkvn[H * NQ], fkvi[H * NQ * NQ];
    memset(kvi, 0, sizeof kvi), memset(fkvi, 0, sizeof fkvi);
    for (int h = 0; h < H; h++)
        for (int i = 0; i < NQ; i++) {
            int np = 0, nf = 0;
            for (int j = 0; j < NQ; j++) {
                int any = 0, all = 1;
                for (int m = i * SB; m < (i + 1) * SB && m < L; m++)
                    for (int n = j * SB; n < (j + 1) * SB && n < L; n++) {
                        int in = m >= n && m - n < WIN;
                        any |= in, all &= in;
                    }
                if (all) fkvi[(h * NQ + i) * NQ + nf++] = j;
                else if (any) kvi[(h * NQ + i) * NQ + np++] = j;
            }
            kvn[h * NQ + i] = np, fkvn[h * NQ + i] = nf;
        }
    cr_assert(kvn[2] == 2 && kvi[2 * NQ] == 0 && kvi[2 * NQ + 1] == 2 && fkvn[2] == 1 && fkvi[2 * NQ] == 1,
              "query block 2: partial key blocks 0 and 2 (a jump), full block 1");
    uint64_t dq = upload(&k, q, 2 * ne), dk = upload(&k, kk, 2 * ne), dv = upload(&k, v, 2 * ne), dout = poisoned(&k, 2 * ne),
             dl = poisoned(&k, sizeof lse), ds = upload(&k, slopes, sizeof slopes), dkn = upload(&k, kvn, sizeof kvn),
             dki = upload(&k, kvi, sizeof kvi), dfn = upload(&k, fkvn, sizeof fkvn), dfi = upload(&k, fkvi, sizeof fkvi);
    int32_t h_ = H, len = L, nq = NQ;
    void *params[] = {&dq, &dk, &dv, &dl, &dout, &ds, &dkn, &dki, &dfn, &dfi, &h_, &len, &len, &nq, &nq};
    launch(&k, "flex_attention_fwd", (L + 31) / 32, H, params);
    download(&k, o, dout, 2 * ne);
    download(&k, lse, dl, sizeof lse);
    double *wo = malloc(8 * ne), wl[H * L], s[L];
    for (size_t i = 0; i < ne; i++) go[i] = (float)h2d(o[i]);
    for (int h = 0; h < H; h++)
        for (int m = 0; m < L; m++) {
            double mx = -INFINITY, l = 0;
            for (int n = 0; n < L; n++) {
                s[n] = -INFINITY;
                if (!(m >= n && m - n < WIN)) continue;
                double d = 0;
                for (int c = 0; c < D; c++) d += h2d(q[((size_t)h * L + m) * D + c]) * h2d(kk[((size_t)h * L + n) * D + c]);
                s[n] = d * 0.125 + (double)slopes[h] * (n - m);
                mx = s[n] > mx ? s[n] : mx;
            }
            for (int n = 0; n < L; n++) l += exp(s[n] - mx);
            wl[h * L + m] = (mx + log(l)) / log(2.0);
            for (int c = 0; c < D; c++) {
                double acc = 0;
                for (int n = 0; n < L; n++) acc += exp(s[n] - mx) / l * h2d(v[((size_t)h * L + n) * D + c]);
                wo[((size_t)h * L + m) * D + c] = acc;
            }
        }
    check("flex o", go, wo, (int)ne, 2e-3, 1e-2);
    check("flex lse", lse, wl, H * L, 1e-4, 1e-4);
    free(q), free(kk), free(v), free(o), free(wo);
    unload(&k);
}

Test(examples, flex_attention) { flex_attention_case(NULL, NULL); }
Test(examples, flex_attention_sm90a) { flex_attention_case("sm_90a", "emu:sm_90a"); }

/* ---- 08: grouped GEMM ---- */

Test(examples, grouped_gemm) {
    seed_rng();
    K k;
    load_example(&k, "grouped_gemm.tile", NULL);
    /* the signature names the tables of pointers as such (it said "*ptr:16", which readers could not use) */
    cr_assert(k.c.nkernels == 1 && !strncmp(k.c.kernels[0].signature, "**f16:16, **f16:16, **f16:16, *i32:16, *i32:16, i32", 52),
              "signature %s", k.c.kernels[0].signature);
    enum { G = 4 };
    /* m, n, k per problem: none a multiple of the 64x64x32 tiles except one dimension */
    int32_t sizes[G * 3] = {77, 45, 53, 128, 64, 32, 33, 97, 40, 5, 130, 70};
    int32_t lds[G * 3];
    uint64_t pa[G], pb[G], pc[G];
    uint16_t *ha[G], *hb[G];
    for (int g = 0; g < G; g++) {
        int m = sizes[3 * g], n = sizes[3 * g + 1], kk = sizes[3 * g + 2];
        lds[3 * g] = kk + 3, lds[3 * g + 1] = n + 1, lds[3 * g + 2] = n + 5; /* padded rows */
        ha[g] = malloc(2 * (size_t)m * (size_t)lds[3 * g]);
        hb[g] = malloc(2 * (size_t)kk * (size_t)lds[3 * g + 1]);
        for (int i = 0; i < m * lds[3 * g]; i++) ha[g][i] = f2h(urand());
        for (int i = 0; i < kk * lds[3 * g + 1]; i++) hb[g][i] = f2h(urand());
        pa[g] = upload(&k, ha[g], 2 * (size_t)m * (size_t)lds[3 * g]);
        pb[g] = upload(&k, hb[g], 2 * (size_t)kk * (size_t)lds[3 * g + 1]);
        pc[g] = poisoned(&k, 2 * (size_t)m * (size_t)lds[3 * g + 2]);
    }
    uint64_t da = upload(&k, pa, sizeof pa), db = upload(&k, pb, sizeof pb), dc = upload(&k, pc, sizeof pc);
    uint64_t ds = upload(&k, sizes, sizeof sizes), dl = upload(&k, lds, sizeof lds);
    int group = G;
    void *params[] = {&da, &db, &dc, &ds, &dl, &group};
    launch(&k, "grouped_matmul", 3, 1, params); /* 3 persistent programs for 2+2+2+3 = 9 tiles */
    for (int g = 0; g < G; g++) {
        int m = sizes[3 * g], n = sizes[3 * g + 1], kk = sizes[3 * g + 2], ldc = lds[3 * g + 2];
        uint16_t *hc = malloc(2 * (size_t)m * (size_t)ldc);
        download(&k, hc, pc[g], 2 * (size_t)m * (size_t)ldc);
        float *got = malloc(4 * (size_t)m * (size_t)n);
        double *want = malloc(8 * (size_t)m * (size_t)n);
        int pad_written = 0;
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < n; j++) {
                double acc = 0;
                for (int q = 0; q < kk; q++) acc += h2d(ha[g][i * lds[3 * g] + q]) * h2d(hb[g][q * lds[3 * g + 1] + j]);
                want[i * n + j] = acc;
                got[i * n + j] = (float)h2d(hc[i * ldc + j]);
            }
            for (int j = n; j < ldc; j++) pad_written += hc[i * ldc + j] != 0xffff;
        }
        char what[32];
        snprintf(what, sizeof what, "C%d", g);
        /* the f16 result: half an ulp of f16 plus the f32 accumulation */
        check(what, got, want, m * n, 1e-3, 1e-3);
        cr_expect_eq(pad_written, 0, "C%d: %d elements outside the matrix written", g, pad_written);
        free(hc), free(got), free(want), free(ha[g]), free(hb[g]);
    }
    unload(&k);
}

/* ---- group norm (Liger-Kernel's training kernels): forward, backward with scalar atomics ---- */

Test(examples, group_norm_fwd_bwd) {
    seed_rng();
    K k;
    enum { B = 3, C = 6, G = 2, H = 37, CPG = C / G, GS = CPG * H };
    const char *defs[] = {"BLOCK_SIZE=32", "hidden_size=37", "channels_per_group=3", NULL};
    load_example(&k, "group_norm.tile", defs);
    static float x[B * C * H], dy[B * C * H], w[C], b[C], zero[C];
    for (int i = 0; i < B * C * H; i++) x[i] = (float)(2 * urand() + 0.5), dy[i] = (float)urand();
    for (int c = 0; c < C; c++) w[c] = (float)(1 + 0.5 * urand()), b[c] = (float)urand(), zero[c] = 0;
    uint64_t dx_ = upload(&k, x, sizeof x), ddy = upload(&k, dy, sizeof dy), dw = upload(&k, w, sizeof w), db = upload(&k, b, sizeof b);
    uint64_t dyout = poisoned(&k, sizeof x), dmean = poisoned(&k, 4 * B * G), drstd = poisoned(&k, 4 * B * G);
    int row = C * H, gcol = GS, g1 = G, one = 1, gs = GS, cpg = CPG, hcol = H;
    float eps = 1e-5f;
    void *pf[] = {&dyout, &row, &gcol, &dx_, &row, &gcol, &dmean, &g1, &one, &drstd, &g1, &one, &dw, &db, &gs, &cpg, &eps};
    launch(&k, "group_norm_fwd", B, G, pf);
    uint64_t ddx = poisoned(&k, sizeof x), ddw = upload(&k, zero, sizeof zero), ddb = upload(&k, zero, sizeof zero);
    void *pb[] = {&dx_, &row, &hcol, &dw, &dmean, &g1, &one, &drstd, &ddx, &ddw, &ddb, &ddy};
    launch(&k, "group_norm_bwd", B, G, pb);
    static float y[B * C * H], gdx[B * C * H], mean[B * G], rstd[B * G], gw[C], gb[C];
    download(&k, y, dyout, sizeof y), download(&k, mean, dmean, sizeof mean), download(&k, rstd, drstd, sizeof rstd);
    download(&k, gdx, ddx, sizeof gdx), download(&k, gw, ddw, sizeof gw), download(&k, gb, ddb, sizeof gb);
    static double wy[B * C * H], wdx[B * C * H], wmean[B * G], wrstd[B * G], wdw[C], wdb[C];
    memset(wdw, 0, sizeof wdw), memset(wdb, 0, sizeof wdb);
    for (int n = 0; n < B; n++)
        for (int g = 0; g < G; g++) {
            const float *xg = x + n * C * H + g * GS, *dyg = dy + n * C * H + g * GS;
            double mu = 0, var = 0, c1 = 0, c2 = 0;
            for (int i = 0; i < GS; i++) mu += xg[i];
            mu /= GS;
            for (int i = 0; i < GS; i++) var += (xg[i] - mu) * (xg[i] - mu);
            var /= GS;
            wmean[n * G + g] = mu, wrstd[n * G + g] = 1 / sqrt(var + eps);
            double m = mean[n * G + g], rs = rstd[n * G + g]; /* the backward from the kernel's own statistics */
            for (int i = 0; i < GS; i++) {
                int c = g * CPG + i / H;
                double xh = (xg[i] - m) * rs, wdy = w[c] * (double)dyg[i];
                wy[n * C * H + g * GS + i] = (xg[i] - mu) * wrstd[n * G + g] * w[c] + b[c];
                wdw[c] += dyg[i] * xh, wdb[c] += dyg[i];
                c1 += xh * wdy, c2 += wdy;
            }
            c1 /= GS, c2 /= GS;
            for (int i = 0; i < GS; i++) {
                int c = g * CPG + i / H;
                double xh = (xg[i] - m) * rs;
                wdx[n * C * H + g * GS + i] = (w[c] * (double)dyg[i] - (xh * c1 + c2)) * rs;
            }
        }
    check("mean", mean, wmean, B * G, 1e-6, 1e-5);
    check("rstd", rstd, wrstd, B * G, 0, 1e-5);
    check("y", y, wy, B * C * H, 1e-5, 1e-5);
    check("dx", gdx, wdx, B * C * H, 1e-5, 1e-4);
    check("dw", gw, wdw, C, 1e-4, 1e-4);
    check("db", gb, wdb, C, 1e-4, 1e-4);
    unload(&k);
}

/* ---- generalized JSD (Liger-Kernel's distillation loss): a compile-time beta, ignored rows ---- */

static void jsd_case(const char *beta_def, double beta, bool has_label) {
    seed_rng();
    K k;
    enum { R = 6, V = 333 };
    const char *defs[] = {"BLOCK=128", beta_def, "IGNORE=-100", has_label ? "HAS_LABEL=true" : "HAS_LABEL=false", NULL};
    load_example(&k, "jsd.tile", defs);
    static float X[R * V], Y[R * V], loss[R * V], dX[R * V];
    static double wl[R * V], wd[R * V];
    int64_t label[R];
    for (int r = 0; r < R; r++) { /* log-softmax rows */
        for (int pass = 0; pass < 2; pass++) {
            float *row = (pass ? Y : X) + r * V;
            double mx = -INFINITY, s = 0;
            for (int j = 0; j < V; j++) row[j] = (float)(2 * urand()), mx = fmax(mx, row[j]);
            for (int j = 0; j < V; j++) s += exp(row[j] - mx);
            for (int j = 0; j < V; j++) row[j] = (float)(row[j] - mx - log(s));
        }
        label[r] = r == 1 || r == 4 ? -100 : irand(V);
    }
    int n_non_ignore = has_label ? R - 2 : R, v = V;
    int64_t stride = V;
    uint64_t dxin = upload(&k, X, sizeof X), dyin = upload(&k, Y, sizeof Y), dlab = upload(&k, label, sizeof label);
    uint64_t dl = poisoned(&k, sizeof loss), dd = poisoned(&k, sizeof dX);
    void *p[] = {&dxin, &stride, &dyin, &stride, &dl, &stride, &dd, &stride, &dlab, &n_non_ignore, &v};
    launch(&k, "jsd", R, 1, p);
    download(&k, loss, dl, sizeof loss), download(&k, dX, dd, sizeof dX);
    for (int r = 0; r < R; r++)
        for (int j = 0; j < V; j++) {
            int i = r * V + j;
            double x = X[i], y = Y[i], q = exp(x), pp = exp(y), l, d;
            if (beta == 0) l = pp * (y - x), d = -pp;
            else if (beta == 1) l = q * (x - y), d = l + q;
            else {
                double m = beta * pp + (1 - beta) * q;
                l = beta * pp * y + (1 - beta) * q * x - m * log(m), d = (1 - beta) * q * (x - log(m));
            }
            bool ignored = has_label && label[r] == -100;
            wl[i] = ignored ? 0 : l / n_non_ignore, wd[i] = ignored ? 0 : d / n_non_ignore;
        }
    check("loss", loss, wl, R * V, 1e-7, 1e-4);
    check("dX", dX, wd, R * V, 1e-7, 1e-4);
    unload(&k);
}

Test(examples, jsd_loss_and_grad) {
    jsd_case("beta=0.3", 0.3, true);
    jsd_case("beta=0.0", 0.0, false);
    jsd_case("beta=1.0", 1.0, true);
}

/* ---- cross-entropy by vocabulary chunks (unsloth's kernels), softcapped and scaled ---- */

Test(examples, cross_entropy_chunked) {
    seed_rng();
    K k;
    enum { R = 5, V = 300, NCH = 3, BS = 128 };
    const double cap = 2.5, scale = 1.3;
    const char *defs[] = {"VOCAB_SIZE=300", "N_CHUNKS=3", "BLOCK_SIZE=128", "DO_SOFTCAPPING=true", "SOFTCAP=2.5",
                          "DO_LOGIT_SCALING=true", "LOGIT_SCALE=1.3", "logits_row_stride=300", "dloss_row_stride=1",
                          "T=f32", NULL};
    load_example(&k, "cross_entropy_chunked.tile", defs);
    static float logits[R * V], grad[R * V];
    static double want[R * V];
    float loss[R], lse[R * NCH], dloss[R];
    int64_t label[R];
    for (int i = 0; i < R * V; i++) logits[i] = (float)(3 * urand());
    for (int r = 0; r < R; r++) label[r] = r == 2 ? -100 : irand(V), dloss[r] = (float)urand();
    uint64_t dlog = upload(&k, logits, sizeof logits), dlab = upload(&k, label, sizeof label), dls = poisoned(&k, sizeof loss),
             dlse = poisoned(&k, sizeof lse), ddl = upload(&k, dloss, sizeof dloss);
    void *pf[] = {&dlog, &dls, &dlse, &dlab};
    launch(&k, "cross_entropy_fwd_chunked", R, NCH, pf);
    download(&k, loss, dls, sizeof loss), download(&k, lse, dlse, sizeof lse);
    /* the row's logsumexp: the host's reduction of the chunks' */
    float row_lse[R];
    double wlse[R], got_loss[R], wloss[R];
    for (int r = 0; r < R; r++) {
        double mx = -INFINITY, s = 0, cm = -INFINITY, cs = 0;
        for (int j = 0; j < V; j++) mx = fmax(mx, cap * tanh(scale * logits[r * V + j] / cap));
        for (int j = 0; j < V; j++) s += exp(cap * tanh(scale * logits[r * V + j] / cap) - mx);
        wlse[r] = mx + log(s);
        for (int c = 0; c < NCH; c++) cm = fmax(cm, lse[r * NCH + c]);
        for (int c = 0; c < NCH; c++) cs += exp(lse[r * NCH + c] - cm);
        row_lse[r] = (float)(cm + log(cs));
        got_loss[r] = label[r] == -100 ? 0 : loss[r] + (double)row_lse[r];
        wloss[r] = label[r] == -100 ? 0 : wlse[r] - cap * tanh(scale * logits[r * V + label[r]] / cap);
    }
    float fl[R];
    for (int r = 0; r < R; r++) fl[r] = (float)got_loss[r];
    check("logsumexp", row_lse, wlse, R, 1e-5, 1e-5);
    check("loss", fl, wloss, R, 1e-5, 1e-5);
    for (int r = 0; r < R; r++) cr_expect(label[r] != -100 || loss[r] == 0, "ignored row %d: loss %g", r, loss[r]);
    uint64_t drl = upload(&k, row_lse, sizeof row_lse);
    void *pb[] = {&dlog, &ddl, &drl, &dlab};
    launch(&k, "cross_entropy_bwd", R, NCH, pb);
    download(&k, grad, dlog, sizeof grad);
    for (int r = 0; r < R; r++)
        for (int j = 0; j < V; j++) {
            double t = tanh(scale * logits[r * V + j] / cap), g = exp(cap * t - wlse[r]) - (j == label[r]);
            want[r * V + j] = label[r] == -100 ? 0 : dloss[r] * g * scale * (1 - t * t);
        }
    check("grad", grad, want, R * V, 1e-6, 1e-4);
    unload(&k);
}


/* ---- engine ports: vLLM's unified paged attention ---- */

static double e4m3_value(uint8_t b) { /* E4M3FN; the NaN codes are not generated */
    int e = (b >> 3) & 15, m = b & 7;
    double v = e ? ldexp(8 + m, e - 10) : ldexp(m, -9);
    return b & 0x80 ? -v : v;
}

/* Five sequences of 1, 7, 19, 1 and 3 new tokens after 5, 0, 13, 40 and 17 cached ones (decode and prefill in
 * one launch), their KV blocks scattered through the cache by a shuffled block table; grouped query heads (G of
 * them a KV head) stacked into the dot's rows, head_size D padded to a power of two.  fp8: the cache holds e4m3
 * codes scaled by k_scale and v_scale; sinks, cap, window: the optional attention sink per head (else the
 * pointer is None), the logit soft cap and the sliding window. */
static void unified_attention_case(const char *arch, const char *device, bool fp8, int D, int NKV, int G, int BS, bool sinks,
                                   float cap, int window) {
    seed_rng();
    enum { NSEQ = 5, TILE = 16 };
    const int qlens[NSEQ] = {1, 7, 19, 1, 3}, ctxs[NSEQ] = {5, 0, 13, 40, 17};
    int H = NKV * G, DP = 1, BLOCK_M = 16, BLOCK_Q = BLOCK_M / G;
    while (DP < D) DP *= 2;
    char defs[12][48];
    snprintf(defs[0], 48, "num_query_heads=%d", H), snprintf(defs[1], 48, "num_queries_per_kv=%d", G);
    snprintf(defs[2], 48, "BLOCK_SIZE=%d", BS), snprintf(defs[3], 48, "TILE_SIZE=%d", TILE);
    snprintf(defs[4], 48, "HEAD_SIZE=%d", D), snprintf(defs[5], 48, "HEAD_SIZE_PADDED=%d", DP);
    snprintf(defs[6], 48, "USE_SOFTCAP=%s", cap > 0 ? "true" : "false"), snprintf(defs[7], 48, "SLIDING_WINDOW=%d", window);
    snprintf(defs[8], 48, "BLOCK_Q=%d", BLOCK_Q), snprintf(defs[9], 48, "BLOCK_M=%d", BLOCK_M);
    snprintf(defs[10], 48, "KVT=%s", fp8 ? "f8e4m3" : "f16"), snprintf(defs[11], 48, "stride_k_cache_3=1");
    const char *dl[] = {defs[0], defs[1], defs[2], defs[3], defs[4], defs[5], defs[6], defs[7], defs[8], defs[9], defs[10], defs[11],
                        "stride_v_cache_3=1", NULL};
    const char *spec[] = {"sink_ptr=None", NULL};
    K k;
    load_example_on(&k, "unified_attention.tile", dl, sinks ? NULL : spec, arch, device);
    int32_t qsl[NSEQ + 1] = {0}, seq_lens[NSEQ];
    int maxblk = 0;
    for (int s = 0; s < NSEQ; s++) {
        qsl[s + 1] = qsl[s] + qlens[s], seq_lens[s] = qlens[s] + ctxs[s];
        if ((seq_lens[s] + BS - 1) / BS > maxblk) maxblk = (seq_lens[s] + BS - 1) / BS;
    }
    int T = qsl[NSEQ], nblocks = NSEQ * maxblk + 3;
    int32_t *bt = malloc(4 * (size_t)nblocks);
    for (int i = 0; i < nblocks; i++) bt[i] = i;
    for (int i = nblocks - 1; i > 0; i--) { /* shuffled: the table's first NSEQ * maxblk entries are used */
        int j = irand(i + 1), t = bt[i];
        bt[i] = bt[j], bt[j] = t;
    }
    size_t nq = (size_t)T * H * D, nc = (size_t)nblocks * BS * NKV * D, es = fp8 ? 1 : 2;
    uint16_t *q = malloc(2 * nq), *o = malloc(2 * nq);
    uint8_t *kc = malloc(es * nc), *vc = malloc(es * nc);
    double *kv = malloc(8 * nc), *vv = malloc(8 * nc); /* the values the kernel computes with */
    float ks = 0.05f, vs = 0.08f, sink[64];
    for (size_t i = 0; i < nq; i++) q[i] = f2h(urand());
    for (size_t i = 0; i < nc; i++)
        for (int w = 0; w < 2; w++) {
            uint8_t *c = w ? vc : kc;
            double *val = w ? vv : kv;
            if (fp8) {
                uint8_t b = (uint8_t)irand(256);
                if ((b & 0x7f) == 0x7f) b ^= 1; /* not a NaN */
                c[i] = b;
                val[i] = h2d(f2h((double)((float)e4m3_value(b) * (w ? vs : ks)))); /* scaled in f32, then Q's f16 */
            } else {
                uint16_t h = f2h(urand());
                memcpy(c + 2 * i, &h, 2);
                val[i] = h2d(h);
            }
        }
    for (int h = 0; h < H; h++) sink[h] = (float)urand();
    uint64_t dq = upload(&k, q, 2 * nq), dkc = upload(&k, kc, es * nc), dvc = upload(&k, vc, es * nc), dout = poisoned(&k, 2 * nq);
    uint64_t dsink = sinks ? upload(&k, sink, sizeof sink) : 0, dbt = upload(&k, bt, 4 * (size_t)nblocks);
    uint64_t dsl = upload(&k, seq_lens, sizeof seq_lens), dqsl = upload(&k, qsl, sizeof qsl), dks = upload(&k, &ks, 4),
             dvs = upload(&k, &vs, 4);
    float scale = (float)(1 / sqrt(D)), softcap = cap > 0 ? cap : 1;
    int64_t bts = maxblk, qs0 = (int64_t)H * D, qs1 = D, os0 = (int64_t)H * D, os1 = D, cs0 = (int64_t)BS * NKV * D, cs1 = NKV * D,
            cs2 = D;
    int32_t nseq = NSEQ;
    void *params[] = {&dout, &dq, &dkc, &dvc, &dsink, &dbt, &dsl, &scale, &dks, &dvs, &softcap, &bts, &qs0, &qs1, &os0, &os1,
                      &cs0, &cs1, &cs2, &cs0, &cs1, &cs2, &dqsl, &nseq};
    launch(&k, "unified_attention_2d", (unsigned)(T / BLOCK_Q + NSEQ), (unsigned)NKV, params);
    download(&k, o, dout, 2 * nq);
    float *got = malloc(4 * nq);
    double *want = malloc(8 * nq), *size = malloc(8 * nq), *sc = malloc(8 * 64);
    for (size_t i = 0; i < nq; i++) got[i] = (float)h2d(o[i]);
    for (int s = 0; s < NSEQ; s++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < qlens[s]; i++) {
                size_t qi = ((size_t)(qsl[s] + i) * H + h) * D;
                double mx = sinks ? sink[h] : -INFINITY, l = 0;
                for (int p = 0; p < seq_lens[s]; p++) {
                    size_t ci = (((size_t)bt[s * maxblk + p / BS] * BS + p % BS) * NKV + h / G) * D;
                    double d = 0;
                    for (int c = 0; c < D; c++) d += h2d(q[qi + c]) * kv[ci + c];
                    d *= scale;
                    if (cap > 0) d = cap * tanh(d / cap);
                    bool ok = p <= ctxs[s] + i && (window <= 0 || ctxs[s] + i - p < window);
                    sc[p] = ok ? d : -INFINITY;
                    if (sc[p] > mx) mx = sc[p];
                }
                if (sinks) l = exp(sink[h] - mx);
                for (int p = 0; p < seq_lens[s]; p++) l += exp(sc[p] - mx);
                for (int c = 0; c < D; c++) {
                    double acc = 0, mag = 0;
                    for (int p = 0; p < seq_lens[s]; p++) {
                        double v = vv[(((size_t)bt[s * maxblk + p / BS] * BS + p % BS) * NKV + h / G) * D + c];
                        acc += exp(sc[p] - mx) * v, mag += exp(sc[p] - mx) * fabs(v);
                    }
                    want[qi + c] = acc / l, size[qi + c] = mag / l;
                }
            }
    /* p rounded to f16 for the second dot, the output to f16: the error is relative to the weighted sum of |v|
     * (an fp8 cache's values reach 448 * 0.08, and a row of them may cancel to near 0), not to the output */
    int bad = 0;
    for (size_t i = 0; i < nq; i++)
        if (!(fabs(got[i] - want[i]) <= 2e-3 + 2e-2 * size[i])) {
            if (bad < 6) cr_log_error("unified attention[%zu] = %.9g, want %.9g, sum of |terms| %.6g (seed %llu)", i, got[i],
                                      want[i], size[i], (unsigned long long)seed);
            bad++;
        }
    cr_expect_eq(bad, 0, "unified attention%s: %d of %zu out of tolerance", fp8 ? ", fp8 cache" : "", bad, nq);
    free(size);
    free(bt), free(q), free(o), free(kc), free(vc), free(kv), free(vv), free(got), free(want), free(sc);
    unload(&k);
}

Test(examples, unified_attention) { unified_attention_case(NULL, NULL, false, 40, 2, 4, 16, false, 0, 0); }
Test(examples, unified_attention_fp8_sinks_softcap_window) {
    unified_attention_case("sm_90a", "emu:sm_90a", true, 64, 1, 3, 8, true, 30, 9);
}

/* ---- engine ports: vLLM's moe_align_block_size ---- */

/* NUMEL (token, expert) pairs of a top-k router over E experts, aligned to blocks of BS rows: the pairs' indices
 * sorted by expert, stably, each expert's run padded to a multiple of BS (the slots keep the caller's fill,
 * NUMEL), and one expert id per block; the expert ids and the total poisoned first. */
static void moe_align_case(const char *arch, const char *device, int E, int NUMEL, int BS) {
    seed_rng();
    char d0[32], d1[32];
    snprintf(d0, sizeof d0, "num_experts=%d", E), snprintf(d1, sizeof d1, "block_size=%d", BS);
    const char *defs[] = {d0, d1, NULL};
    K k;
    load_example_on(&k, "moe_align_block_size.tile", defs, NULL, arch, device);
    int32_t *ids = malloc(4 * (size_t)NUMEL), *cnts = calloc((size_t)(E + 1) * E, 4), *cum = calloc((size_t)E + 1, 4);
    for (int i = 0; i < NUMEL; i++) ids[i] = irand(E);
    int maxpad = NUMEL + E * (BS - 1), nblk = (maxpad + BS - 1) / BS, tpt = (NUMEL + E - 1) / E;
    uint64_t dids = upload(&k, ids, 4 * (size_t)NUMEL), dcnt = upload(&k, cnts, 4 * (size_t)(E + 1) * E), dcum = upload(&k, cum, 4 * ((size_t)E + 1));
    int32_t *sorted = malloc(4 * (size_t)maxpad), *exps = malloc(4 * (size_t)nblk), total;
    for (int i = 0; i < maxpad; i++) sorted[i] = NUMEL; /* the caller's fill, as vLLM's host code does: the padding */
    uint64_t dsorted = upload(&k, sorted, 4 * (size_t)maxpad), dexp = poisoned(&k, 4 * (size_t)nblk), dtotal = poisoned(&k, 4);
    int32_t numel = NUMEL;
    launch(&k, "moe_align_stage1", (unsigned)E, 1, (void *[]){&dids, &dcnt, &numel, &tpt});
    launch(&k, "moe_align_stage2", (unsigned)E, 1, (void *[]){&dcnt});
    launch(&k, "moe_align_stage3", 1, 1, (void *[]){&dtotal, &dcnt, &dcum});
    launch(&k, "moe_align_stage4", (unsigned)E, 1, (void *[]){&dids, &dcnt, &dsorted, &dexp, &dcum, &numel, &tpt});
    download(&k, &total, dtotal, 4), download(&k, sorted, dsorted, 4 * (size_t)maxpad), download(&k, exps, dexp, 4 * (size_t)nblk);
    int at = 0, bad = 0;
    for (int e = 0; e < E; e++) {
        int start = at;
        for (int i = 0; i < NUMEL; i++)
            if (ids[i] == e) bad += sorted[at++] != i;
        while ((at - start) % BS) bad += sorted[at++] != NUMEL;
        for (int b = start / BS; b < at / BS; b++) bad += exps[b] != e;
    }
    cr_expect_eq(total, at, "padded total %d, want %d", total, at);
    cr_expect_eq(bad, 0, "%d sorted ids or expert ids wrong (seed %llu)", bad, (unsigned long long)seed);
    for (int i = at; i < maxpad; i++) cr_expect_eq(sorted[i], NUMEL, "sorted[%d] written past the total", i);
    for (int b = at / BS; b < nblk; b++) cr_expect_eq(exps[b], -1, "expert id %d written past the total", b); /* poisoned */
    free(ids), free(cnts), free(cum), free(sorted), free(exps);
    unload(&k);
}

Test(examples, moe_align_block_size) {
    moe_align_case(NULL, NULL, 13, 159, 4);
    moe_align_case("sm_90a", "emu:sm_90a", 8, 74, 16);
}

/* ---- engine ports: vLLM's rejection sampler ---- */

/* Six requests of 3, 0, 5, 1, 4 and 2 draft tokens over a vocabulary of 203 (padded to 256), greedy or random by
 * request; the drafts are the target's argmax 60% of the time.  The recovered tokens come first (they feed the
 * random acceptance), then both acceptance kernels write their requests' rows of the output. */
static void rejection_case(const char *arch, const char *device, bool no_draft_probs) {
    seed_rng();
    enum { B = 6, V = 203, S = 5 };
    const int nd[B] = {3, 0, 5, 1, 4, 2};
    const char *defs[] = {"PADDED_VOCAB_SIZE=256", no_draft_probs ? "NO_DRAFT_PROBS=true" : "NO_DRAFT_PROBS=false", NULL};
    const char *spec[] = {"draft_probs_ptr=None", NULL};
    K k;
    load_example_on(&k, "rejection_sampler.tile", defs, no_draft_probs ? spec : NULL, arch, device);
    int32_t cu[B], starts[B], N = 0;
    for (int r = 0; r < B; r++) starts[r] = N, N += nd[r], cu[r] = N;
    static float tp[15 * V], dp[15 * V], qn[B * V];
    static int32_t argmax_t[15], draft[15], bonus[B], rec[15], out[B * (S + 1)];
    static double unif[15];
    uint8_t greedy[B];
    for (int t = 0; t < N; t++) {
        double st = 0, sd = 0;
        for (int v = 0; v < V; v++) tp[t * V + v] = (float)(urand() + 1), dp[t * V + v] = (float)(urand() + 1);
        for (int v = 0; v < V; v++) st += tp[t * V + v], sd += dp[t * V + v];
        argmax_t[t] = 0;
        for (int v = 0; v < V; v++) {
            tp[t * V + v] = (float)(tp[t * V + v] / st), dp[t * V + v] = (float)(dp[t * V + v] / sd);
            if (tp[t * V + v] > tp[t * V + argmax_t[t]]) argmax_t[t] = v;
        }
        draft[t] = irand(10) < 6 ? argmax_t[t] : irand(V);
        unif[t] = (urand() + 1) / 2;
    }
    for (int r = 0; r < B; r++) {
        bonus[r] = irand(V), greedy[r] = (uint8_t)(r % 2);
        for (int v = 0; v < V; v++) qn[r * V + v] = (float)-log((urand() + 1) / 2 + 1e-12);
    }
    uint64_t dcu = upload(&k, cu, sizeof cu), ddraft = upload(&k, draft, 4 * (size_t)N), dtp = upload(&k, tp, 4 * (size_t)N * V),
             ddp = no_draft_probs ? 0 : upload(&k, dp, 4 * (size_t)N * V), dq = upload(&k, qn, sizeof qn), drec = poisoned(&k, 4 * (size_t)N);
    int32_t vocab = V, spec_len = S;
    launch(&k, "sample_recovered_tokens", B, S, (void *[]){&drec, &dcu, &ddraft, &ddp, &dtp, &dq, &vocab});
    download(&k, rec, drec, 4 * (size_t)N);
    float tp_after[15 * V];
    download(&k, tp_after, dtp, 4 * (size_t)N * V);
    cr_expect(!memcmp(tp_after, tp, 4 * (size_t)N * V), "the target probabilities were not put back");
    int bad = 0;
    for (int r = 0; r < B; r++)
        for (int p = 0; p < nd[r]; p++) {
            int t = starts[r] + p, best = -1;
            double bv = -1;
            for (int v = 0; v < V; v++) {
                double pr = no_draft_probs ? (v == draft[t] ? 0 : tp[t * V + v]) : fmax((double)(tp[t * V + v] - dp[t * V + v]), 0);
                if (pr / qn[r * V + v] > bv) bv = pr / qn[r * V + v], best = v;
            }
            bad += rec[t] != best;
        }
    cr_expect_eq(bad, 0, "%d recovered tokens wrong (seed %llu)", bad, (unsigned long long)seed);
    uint64_t dam = upload(&k, argmax_t, 4 * (size_t)N), dbonus = upload(&k, bonus, sizeof bonus), dg = upload(&k, greedy, sizeof greedy),
             dout = poisoned(&k, sizeof out), dunif = upload(&k, unif, 8 * (size_t)N);
    launch(&k, "rejection_greedy_sample", B, 1, (void *[]){&dout, &dcu, &ddraft, &dam, &dbonus, &dg, &spec_len});
    launch(&k, "rejection_random_sample", B, 1, (void *[]){&dout, &dcu, &ddraft, &ddp, &dtp, &dbonus, &drec, &dunif, &dg, &spec_len, &vocab});
    download(&k, out, dout, sizeof out);
    bad = 0;
    for (int r = 0; r < B; r++) {
        int32_t want[S + 1];
        for (int p = 0; p <= S; p++) want[p] = -1; /* poisoned: not written */
        bool rejected = false;
        for (int p = 0; p < nd[r] && !rejected; p++) {
            int t = starts[r] + p;
            if (greedy[r]) want[p] = argmax_t[t], rejected = draft[t] != argmax_t[t];
            else {
                float dprob = no_draft_probs ? 1.0f : dp[t * V + draft[t]];
                bool accept = dprob > 0 && (double)(tp[t * V + draft[t]] / dprob) >= unif[t];
                want[p] = accept ? draft[t] : rec[t], rejected = !accept;
            }
        }
        if (!rejected) want[nd[r]] = bonus[r];
        for (int p = 0; p <= S; p++) bad += out[r * (S + 1) + p] != want[p];
    }
    cr_expect_eq(bad, 0, "%d output tokens wrong (seed %llu)", bad, (unsigned long long)seed);
    unload(&k);
}

Test(examples, rejection_sampler) { rejection_case(NULL, NULL, false); }
Test(examples, rejection_sampler_without_draft_probs) { rejection_case("sm_90a", "emu:sm_90a", true); }

/* ---- FlagGems' conv2d forward as an implicit GEMM: groups, stride, padding and dilation, the input in NHWC
 * through run-time strides, the output NCHW, against a float64 direct convolution ---- */

Test(examples, conv2d_implicit_gemm) {
    seed_rng();
    enum { N = 2, C = 6, H = 9, W = 11, O = 10, KH = 3, KW = 2, G = 2, CG = C / G, OG = O / G };
    enum { SH = 2, SW = 1, PH = 1, PW = 1, DH = 1, DW = 2 };
    enum { OH = (H + 2 * PH - DH * (KH - 1) - 1) / SH + 1, OW = (W + 2 * PW - DW * (KW - 1) - 1) / SW + 1 };
    static const char *const defs[] = {"CIN_G=3", "KH=3", "KW=2", "STRIDE_H=2", "STRIDE_W=1", "PAD_H=1", "PAD_W=1",
                                       "DIL_H=1", "DIL_W=2", "GROUPS=2", NULL};
    K k;
    load_example(&k, "conv2d.tile", defs);
    uint16_t x[N * H * W * C], w[O * CG * KH * KW], b[O], y[N * O * OH * OW];
    for (size_t i = 0; i < sizeof x / 2; i++) x[i] = f2h(urand());
    for (size_t i = 0; i < sizeof w / 2; i++) w[i] = f2h(urand());
    for (int i = 0; i < O; i++) b[i] = f2h(urand());
    uint64_t dx = upload(&k, x, sizeof x), dw = upload(&k, w, sizeof w), db = upload(&k, b, sizeof b), dy = poisoned(&k, sizeof y);
    int32_t a[] = {N, H, W, O, OH, OW, H * W * C, 1, W * C, C, CG * KH * KW, KH * KW, KW, 1, O * OH * OW, OH * OW, OW, 1};
    void *params[4 + 18] = {&dx, &dw, &dy, &db};
    for (int i = 0; i < 18; i++) params[4 + i] = &a[i];
    TileDevFunction *fn;
    cr_assert_eq(dev_module_get_function(k.mod, "conv2d_fwd", &fn), DEV_OK, "%s", dev_last_error(k.dev));
    DevStatus st = dev_launch(fn, (N * OH * OW + 31) / 32, (OG + 15) / 16, G, 128, 1, 1, 0, NULL, params);
    cr_assert_eq(st, DEV_OK, "%s", dev_last_error(k.dev));
    cr_assert_eq(dev_synchronize(k.dev), DEV_OK, "%s", dev_last_error(k.dev));
    download(&k, y, dy, sizeof y);
    float got[N * O * OH * OW];
    double want[N * O * OH * OW];
    for (int n = 0; n < N; n++)
        for (int o = 0; o < O; o++)
            for (int oh = 0; oh < OH; oh++)
                for (int ow = 0; ow < OW; ow++) {
                    double s = h2d(b[o]);
                    int g = o / OG;
                    for (int c = 0; c < CG; c++)
                        for (int kh = 0; kh < KH; kh++)
                            for (int kw = 0; kw < KW; kw++) {
                                int ih = oh * SH - PH + kh * DH, iw = ow * SW - PW + kw * DW;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                                s += h2d(x[((n * H + ih) * W + iw) * C + g * CG + c]) * h2d(w[((o * CG + c) * KH + kh) * KW + kw]);
                            }
                    int at = ((n * O + o) * OH + oh) * OW + ow;
                    want[at] = s, got[at] = (float)h2d(y[at]);
                }
    check("conv2d", got, want, N * O * OH * OW, 4e-3, 2e-3);
    unload(&k);
}


/* ---- FlagGems' top-k second stage: a bitonic argsort of each row's candidates (reshape, masked sums, XOR swaps
 * of the bits), both directions, the first K against the C order (distinct random values) ---- */

static const float *topk_vals;
static int topk_desc;
static int by_topk_order(const void *pa, const void *pb) {
    float a = topk_vals[*(const int *)pa], b = topk_vals[*(const int *)pb];
    return topk_desc ? (a < b) - (a > b) : (a > b) - (a < b);
}

Test(examples, bitonic_topk) {
    seed_rng();
    enum { R = 4, N = 50, KK = 8 };
    float cand[R * N], vals[R * KK];
    int64_t cidx[R * N], idx[R * KK];
    for (int i = 0; i < R * N; i++) cand[i] = (float)urand() * 100, cidx[i] = 1000 + 7 * i;
    for (int desc = 0; desc < 2; desc++) {
        const char *defs[] = {desc ? "DESCENDING=true" : "DESCENDING=false", NULL};
        K k;
        load_example(&k, "bitonic_topk.tile", defs);
        uint64_t dc = upload(&k, cand, sizeof cand), di = upload(&k, cidx, sizeof cidx);
        uint64_t dv = poisoned(&k, sizeof vals), dx = poisoned(&k, sizeof idx);
        launch(&k, "topk_rows", R, 1, (void *[]){&dv, &dx, &dc, &di});
        download(&k, vals, dv, sizeof vals), download(&k, idx, dx, sizeof idx);
        for (int r = 0; r < R; r++) {
            int order[N];
            for (int j = 0; j < N; j++) order[j] = j;
            topk_vals = cand + r * N, topk_desc = desc;
            qsort(order, N, sizeof *order, by_topk_order);
            for (int j = 0; j < KK; j++) {
                cr_expect_eq(vals[r * KK + j], cand[r * N + order[j]], "%s row %d rank %d: %.9g, want %.9g (seed %llu)",
                             desc ? "descending" : "ascending", r, j, vals[r * KK + j], cand[r * N + order[j]], (unsigned long long)seed);
                cr_expect_eq(idx[r * KK + j], cidx[r * N + order[j]], "%s row %d rank %d: index %lld", desc ? "descending" : "ascending",
                             r, j, (long long)idx[r * KK + j]);
            }
        }
        unload(&k);
    }
}

/* ---- MX fp8 quantization (torchao's to_mxfp8_dim0 and its dequantization) ----
 * bf16 rows of blocks of 32 with magnitudes from 2^-20 to 2^20 (and an all-zero block): the e8m0 exponent of each
 * block (rceil: ceil(log2(amax * (1/448 in f32))), floor: the bf16 exponent of amax minus 8, both clamped and biased),
 * every e4m3 code (x / 2^(e - 127) in f32, rounded to nearest even, saturating) exactly, and the dequantized values
 * (code times 2^(e - 127)) bit for bit. */
static float bf16_round(double d) { /* nearest even bf16, as a float */
    float f = (float)d;
    uint32_t x;
    memcpy(&x, &f, 4);
    x = (x + 0x7fff + ((x >> 16) & 1)) & 0xffff0000u;
    memcpy(&f, &x, 4);
    return f;
}

static uint8_t e4m3_code(float x) { /* nearest, ties to the even code, saturating at 448 (e4m3_value: above) */
    double a = fabs((double)x);
    int best = 0;
    for (int c = 1; c <= 0x7e; c++) {
        double d = fabs(e4m3_value((uint8_t)c) - a), db = fabs(e4m3_value((uint8_t)best) - a);
        if (d < db || (d == db && !(c & 1))) best = c;
    }
    return (uint8_t)(best | (signbit(x) ? 0x80 : 0)); /* a negative value rounded to 0 is -0, 0x80 */
}

static void mxfp8_case(const char *mode, const char *arch, const char *device) {
    seed_rng();
    enum { R = 45, C = 160, NB = C / 32 };
    static uint16_t x[R * C];
    static float xf[R * C], deq[R * C];
    static uint8_t q[R * C], sc[R * NB];
    for (int r = 0; r < R; r++) {
        double mag = ldexp(1.0, irand(41) - 20);
        for (int c = 0; c < C; c++) {
            xf[r * C + c] = r == 3 && c / 32 == 1 ? 0.0f : bf16_round(urand() * 2 * mag);
            uint32_t b;
            memcpy(&b, &xf[r * C + c], 4);
            x[r * C + c] = (uint16_t)(b >> 16);
        }
    }
    char defmode[32];
    snprintf(defmode, sizeof defmode, "SCALING_MODE=%s", mode);
    const char *defs[] = {defmode, NULL};
    K k;
    load_example_on(&k, "mxfp8_quant.tile", defs, NULL, arch, device);
    uint64_t dx = upload(&k, x, sizeof x), dq = poisoned(&k, sizeof q), ds = poisoned(&k, sizeof sc), dd = poisoned(&k, sizeof deq);
    int32_t rows = R, cols = C;
    unsigned gx = (R + 31) / 32, gy = (C + 63) / 64;
    launch(&k, "to_mxfp8_dim0", gx, gy, (void *[]){&dx, &dq, &ds, &rows, &cols});
    launch(&k, "dequant_mxfp8", gx, gy, (void *[]){&dq, &ds, &dd, &rows, &cols});
    download(&k, q, dq, sizeof q), download(&k, sc, ds, sizeof sc), download(&k, deq, dd, sizeof deq);
    int bad = 0;
    for (int r = 0; r < R; r++)
        for (int b = 0; b < NB; b++) {
            float amax = 0;
            for (int i = 0; i < 32; i++) amax = fmaxf(amax, fabsf(xf[r * C + b * 32 + i]));
            int e;
            if (!strcmp(mode, "rceil")) {
                float descale = amax * (float)(1.0 / 448.0);
                double l = descale > 0 ? ceil(log2((double)descale)) : -1e9;
                e = (int)fmin(fmax(l, -127), 127) + 127;
            } else {
                uint32_t bits;
                memcpy(&bits, &amax, 4); /* amax is a bf16 value: its top 16 bits */
                int p = (int)((bits >> 23) & 255) - 127 - 8;
                e = (p < -127 ? -127 : p > 128 ? 128 : p) + 127;
            }
            if (sc[r * NB + b] != e && bad++ < 6)
                cr_log_error("%s: scale of row %d block %d: %d, want %d (seed %llu)", mode, r, b, sc[r * NB + b], e,
                             (unsigned long long)seed);
            float s = fmaxf(ldexpf(1.0f, e - 127), ldexpf(1.0f, -126));
            for (int i = 0; i < 32; i++) {
                int at = r * C + b * 32 + i;
                uint8_t want = e4m3_code(xf[at] / s);
                double dwant = e4m3_value(q[at]) * ldexp(1.0, sc[r * NB + b] - 127);
                if ((q[at] != want || deq[at] != (float)dwant) && bad++ < 6)
                    cr_log_error("%s: x[%d][%d] = %g: code 0x%02x, want 0x%02x; dequantized %g, want %g", mode, r, b * 32 + i,
                                 xf[at], q[at], want, deq[at], dwant);
            }
        }
    cr_expect_eq(bad, 0, "%s: %d mismatches (seed %llu)", mode, bad, (unsigned long long)seed);
    unload(&k);
}

Test(examples, mxfp8_quant_rceil) { mxfp8_case("rceil", NULL, NULL); }
Test(examples, mxfp8_quant_floor_sm90a) { mxfp8_case("floor", "sm_90a", "emu:sm_90a"); }

/* ---- the documentation's whole-file examples compile ----
 * Every fenced ```tile block of README.md and the .md files of docs/ that declares a kernel (indented
 * blocks inside list items too, their indentation removed) compiles to PTX for every target: a reader copies
 * them as they are, so an example that no longer compiles is a broken promise.  (test_treesitter.c parses
 * every block, snippets included; this compiles the complete ones with the compiler itself.) */
#include <dirent.h>

static int compile_doc_blocks(const char *path, const char *rel) {
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot read %s", path);
    char line[4096], *block = NULL;
    size_t len = 0, cap = 0, indent = 0;
    int in = 0, lineno = 0, start = 0, kernels = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t sp = strspn(line, " ");
        if (!in && !strcmp(line + sp, "```tile\n")) {
            in = 1, indent = sp, len = 0, start = lineno;
            continue;
        }
        if (!in) continue;
        if (!strncmp(line + sp, "```", 3)) {
            in = 0;
            if (!block) continue;
            block[len] = 0;
            bool whole = false;
            for (const char *p = block; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
                if (!strncmp(p, "kernel ", 7)) whole = true;
            if (!whole) continue;
            kernels++;
            char name[512];
            snprintf(name, sizeof name, "%s:%d", rel, start);
            for (int t = 0; tile_target_name(t); t++) {
                tile_compile_options o = {.arch = tile_target_name(t)};
                tile_compiled c;
                tile_status st = tile_compile_source(name, block, &o, &c);
                cr_expect_eq(st, TILE_OK, "the example at %s (%s) does not compile: %s\n%s", name, o.arch,
                             tile_status_string(st), c.diagnostics);
                cr_expect(st != TILE_OK || (c.ptx && strstr(c.ptx, ".entry")), "%s (%s): no kernel in the PTX", name, o.arch);
                tile_compiled_free(&c);
            }
            continue;
        }
        size_t n = strlen(line), skip = sp < indent ? sp : indent;
        if (len + n + 1 > cap) {
            cap = 2 * (len + n + 1);
            block = realloc(block, cap);
            cr_assert(block);
        }
        memcpy(block + len, line + skip, n - skip);
        len += n - skip;
    }
    fclose(f);
    free(block);
    return kernels;
}

/* ---- split-KV decode attention in two launches (flash_decoding.tile) ---- */
static void flash_decoding_case(const char *arch, const char *device) {
    enum { B = 3, KVH = 2, G = 3, H = KVH * G, D = 32, SPLIT = 32, BN = 16, MAXLEN = 100 };
    K k;
    load_example_on(&k, "flash_decoding.tile", (const char *const[]){"HEADS_PAD=16", "SPLIT=32", "D=32", "BN=16", NULL}, NULL, arch,
                    device);
    int32_t lens[B], req_of[B] = {2, 0, 3}, slots[(B + 1) * MAXLEN] = {0};
    lens[0] = SPLIT * 2, lens[1] = 1 + irand(SPLIT), lens[2] = SPLIT + 1 + irand(MAXLEN - SPLIT); /* a split boundary, one split, several */
    int T = lens[0] + lens[1] + lens[2] + 7, used = 0;
    int32_t *perm = malloc(4 * (size_t)T);
    for (int i = 0; i < T; i++) perm[i] = i;
    for (int i = T - 1; i > 0; i--) { /* shuffled token slots: the pool's order is not the sequences' */
        int j = irand(i + 1), t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
    for (int b = 0; b < B; b++)
        for (int p = 0; p < lens[b]; p++) slots[req_of[b] * MAXLEN + p] = perm[used++];
    size_t nq = (size_t)B * H * D, nkv = (size_t)T * KVH * D;
    uint16_t *q = malloc(2 * nq), *kp = malloc(2 * nkv), *vp = malloc(2 * nkv), *o = malloc(2 * nq);
    for (size_t i = 0; i < nq; i++) q[i] = f2h(urand());
    for (size_t i = 0; i < nkv; i++) kp[i] = f2h(urand()), vp[i] = f2h(urand());
    int nsp = (MAXLEN + SPLIT - 1) / SPLIT;
    size_t npart = (size_t)B * H * nsp;
    uint64_t dq = upload(&k, q, 2 * nq), dk = upload(&k, kp, 2 * nkv), dv = upload(&k, vp, 2 * nkv), ds = upload(&k, slots, sizeof slots),
             dr = upload(&k, req_of, sizeof req_of), dl = upload(&k, lens, sizeof lens), dpo = poisoned(&k, 4 * npart * D),
             dpl = poisoned(&k, 4 * npart), dout = poisoned(&k, 2 * nq);
    float scale = (float)(1 / sqrt(D));
    int32_t sstride = MAXLEN, sqb = H * D, sqh = D, skt = KVH * D, skh = D, spb = H * nsp * D, sph = nsp * D, sps = D, slb = H * nsp,
            slh = nsp, group = G, sob = H * D, soh = D;
    TileDevFunction *fn;
    cr_assert_eq(dev_module_get_function(k.mod, "decode_split", &fn), DEV_OK);
    void *p1[] = {&dq, &dk, &dv, &scale, &ds, &dr, &dl, &dpo, &dpl, &sstride, &sqb, &sqh, &skt, &skh, &spb, &sph, &sps, &slb, &slh, &group};
    int warps = k.c.kernels[0].num_warps;
    cr_assert_eq(dev_launch(fn, B, KVH, (unsigned)nsp, (unsigned)(32 * warps), 1, 1, 0, NULL, p1), DEV_OK, "%s", dev_last_error(k.dev));
    cr_assert_eq(dev_synchronize(k.dev), DEV_OK, "%s", dev_last_error(k.dev));
    void *p2[] = {&dl, &dpo, &dpl, &dout, &spb, &sph, &sps, &slb, &slh, &sob, &soh};
    launch(&k, "decode_merge", B, H, p2);
    download(&k, o, dout, 2 * nq);
    float *got = malloc(4 * nq);
    double *want = malloc(8 * nq), sc[MAXLEN];
    for (size_t i = 0; i < nq; i++) got[i] = (float)h2d(o[i]);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            double mx = -INFINITY, l = 0;
            for (int p = 0; p < lens[b]; p++) {
                size_t ki = ((size_t)slots[req_of[b] * MAXLEN + p] * KVH + h / G) * D;
                double dd = 0;
                for (int c = 0; c < D; c++) dd += h2d(q[((size_t)b * H + h) * D + c]) * h2d(kp[ki + c]);
                sc[p] = dd * scale;
                if (sc[p] > mx) mx = sc[p];
            }
            for (int p = 0; p < lens[b]; p++) l += exp(sc[p] - mx);
            for (int c = 0; c < D; c++) {
                double acc = 0;
                for (int p = 0; p < lens[b]; p++) acc += exp(sc[p] - mx) * h2d(vp[((size_t)slots[req_of[b] * MAXLEN + p] * KVH + h / G) * D + c]);
                want[((size_t)b * H + h) * D + c] = acc / l;
            }
        }
    /* p rounded to f16 for the second dot, the output to f16 */
    check("flash decoding", got, want, (int)nq, 2e-3, 2e-2);
    free(perm), free(q), free(kp), free(vp), free(o), free(got), free(want);
    unload(&k);
}

Test(examples, flash_decoding) { flash_decoding_case(NULL, NULL); }
Test(examples, flash_decoding_sm90a) { flash_decoding_case("sm_90a", "emu:sm_90a"); }

/* ---- native-sparse-attention's selected-block attention: each token attends to the key blocks its block table
 * names (random distinct blocks, its own first, unused slots -1), G query heads per KV head (4 and 2: dots of fewer
 * than 16 rows), packed sequences with per-token block counts (sm_80) or B equal sequences (sm_90a). ---- */
static void nsa_selected_case(const char *arch, const char *device, bool varlen, int G) {
    enum { H = 2, D = 32, S = 3, BS = 16, MAXT = 128 };
    seed_rng();
    int lens_v[] = {29, 45}, lens_b[] = {37, 37}, *lens = varlen ? lens_v : lens_b, nseq = 2, hq = H * G;
    int ntok = lens[0] + lens[1], starts[3] = {0, lens[0], lens[0] + lens[1]};
    static uint16_t q[MAXT * 8 * D], kk[MAXT * H * D], vv[MAXT * H * D], o[MAXT * 8 * D];
    static float lse[MAXT * 8];
    static int32_t bi[MAXT * H * S], counts[MAXT * H], tok_idx[MAXT * 2];
    for (int i = 0; i < ntok * hq * D; i++) { /* |q| >= 0.25: q * scale stays an f16 normal (f2h flushes the rest) */
        double u = urand();
        q[i] = f2h(u < 0 ? u - 0.25 : u + 0.25);
    }
    for (int i = 0; i < ntok * H * D; i++) kk[i] = f2h(urand()), vv[i] = f2h(urand());
    for (int sq = 0; sq < nseq; sq++)
        for (int t = 0; t < lens[sq]; t++) {
            int tok = starts[sq] + t, nb = (lens[sq] + BS - 1) / BS;
            tok_idx[2 * tok] = sq, tok_idx[2 * tok + 1] = t;
            for (int h = 0; h < H; h++) {
                int perm[8], n = 0;
                perm[n++] = t / BS; /* its own block first, then the others shuffled */
                for (int b = 0; b < nb; b++)
                    if (b != t / BS) perm[n++] = b;
                for (int a = n - 1; a > 1; a--) {
                    int r = 1 + irand(a), x = perm[a];
                    perm[a] = perm[r], perm[r] = x;
                }
                for (int s2 = 0; s2 < S; s2++) bi[(tok * H + h) * S + s2] = s2 < n ? perm[s2] : -1;
                counts[tok * H + h] = 1 + irand(S);
            }
        }
    char g_def[16];
    snprintf(g_def, sizeof g_def, "G=%d", G);
    const char *defs[] = {g_def, "S=3", NULL};
    K k;
    /* B equal sequences: offsets, token_indices and block_counts None, as Triton's launch with None makes them */
    const char *nones[] = {"offsets=None", "token_indices=None", "block_counts=None", NULL};
    load_example_on(&k, "nsa_selected_attention.tile", defs, varlen ? NULL : nones, arch, device);
    uint64_t dq = upload(&k, q, sizeof q), dk = upload(&k, kk, sizeof kk), dv = upload(&k, vv, sizeof vv), dbi = upload(&k, bi, sizeof bi);
    uint64_t dcnt = upload(&k, counts, sizeof counts), doff = upload(&k, starts, sizeof starts), dtok = upload(&k, tok_idx, sizeof tok_idx);
    uint64_t dout = poisoned(&k, sizeof o), dlse = poisoned(&k, sizeof lse), none = 0;
    float scale = (float)(1 / sqrt((double)D));
    int tlen = lens[0];
    void *params[] = {&dq, &dk, &dv, &dout, &dlse, &scale, &dbi, varlen ? &dcnt : &none, varlen ? &doff : &none, varlen ? &dtok : &none, &tlen};
    TileDevFunction *fn;
    cr_assert_eq(dev_module_get_function(k.mod, "nsa_selected_fwd", &fn), DEV_OK, "%s", dev_last_error(k.dev));
    cr_assert_eq(dev_launch(fn, (unsigned)(varlen ? ntok : tlen), 1, varlen ? H : nseq * H, 32u * (unsigned)k.c.kernels[0].num_warps, 1, 1, 0,
                            NULL, params), DEV_OK, "%s", dev_last_error(k.dev));
    cr_assert_eq(dev_synchronize(k.dev), DEV_OK, "%s", dev_last_error(k.dev));
    download(&k, o, dout, sizeof o), download(&k, lse, dlse, sizeof lse);
    static float got_o[MAXT * 8 * D];
    static double want_o[MAXT * 8 * D], want_lse[MAXT * 8];
    for (int sq = 0; sq < nseq; sq++)
        for (int t = 0; t < lens[sq]; t++)
            for (int h = 0; h < H; h++) {
                int tok = starts[sq] + t, ns = varlen ? counts[tok * H + h] : S, keys[64], nk = 0;
                for (int s2 = 0; s2 < ns; s2++) {
                    int b = bi[(tok * H + h) * S + s2];
                    for (int j = b * BS; b >= 0 && j < b * BS + BS && j < lens[sq] && j <= t; j++) keys[nk++] = j;
                }
                for (int g = 0; g < G; g++) {
                    int row = tok * hq + h * G + g;
                    double sc[64], m = -INFINITY, l = 0;
                    for (int x = 0; x < nk; x++) {
                        sc[x] = 0;
                        for (int d = 0; d < D; d++) /* the kernel scales q in f16 first */
                            sc[x] += h2d(f2h(h2d(q[row * D + d]) * scale)) * h2d(kk[((starts[sq] + keys[x]) * H + h) * D + d]);
                        m = fmax(m, sc[x]);
                    }
                    for (int x = 0; x < nk; x++) l += exp(sc[x] - m);
                    for (int d = 0; d < D; d++) {
                        double acc = 0;
                        for (int x = 0; x < nk; x++) acc += exp(sc[x] - m) * h2d(vv[((starts[sq] + keys[x]) * H + h) * D + d]);
                        want_o[row * D + d] = acc / l, got_o[row * D + d] = (float)h2d(o[row * D + d]);
                    }
                    want_lse[row] = m + log(l);
                }
            }
    /* p rounded to f16 for the p.v dot and o to f16: a few f16 ulps; lse in f32 */
    check("o", got_o, want_o, ntok * hq * D, 2e-3, 4e-3);
    check("lse", lse, want_lse, ntok * hq, 1e-5, 1e-5);
    unload(&k);
}

Test(examples, nsa_selected_attention) { nsa_selected_case(NULL, NULL, true, 4); }
Test(examples, nsa_selected_attention_sm90a) { nsa_selected_case("sm_90a", "emu:sm_90a", false, 2); }

/* ---- lightning attention: linear attention with a per-head decay, a causal decay mask within a block and a
 * [D, BLOCK_E] state carried across blocks by dots ---- */

static void lightning_case(const char *arch, const char *device) {
    seed_rng();
    K k;
    load_example_on(&k, "lightning_attention.tile", NULL, NULL, arch, device);
    enum { B = 2, H = 3, N = 45, D = 16, E = 32, BLOCK = 16, BLOCK_E = 16 };
    static uint16_t q[B * H * N * D], kk[B * H * N * D], v[B * H * N * E], o[B * H * N * E];
    float lam[H];
    for (int i = 0; i < B * H * N * D; i++) q[i] = f2h(urand() * 0.6 - 0.3), kk[i] = f2h(urand() * 0.6 - 0.3);
    for (int i = 0; i < B * H * N * E; i++) v[i] = f2h(urand() * 2 - 1);
    for (int h = 0; h < H; h++) lam[h] = (float)(0.01 + 0.2 * urand());
    uint64_t dq = upload(&k, q, sizeof q), dk = upload(&k, kk, sizeof kk), dv = upload(&k, v, sizeof v), dl = upload(&k, lam, sizeof lam);
    uint64_t d_o = poisoned(&k, sizeof o);
    int heads = H, n = N, nb = (N + BLOCK - 1) / BLOCK;
    launch(&k, "lightning_attn_fwd", B * H, E / BLOCK_E, (void *[]){&dq, &dk, &dv, &d_o, &dl, &heads, &n, &nb});
    download(&k, o, d_o, sizeof o);
    static float got[B * H * N * E];
    static double want[B * H * N * E];
    for (int bh = 0; bh < B * H; bh++)
        for (int t = 0; t < N; t++)
            for (int e = 0; e < E; e++) {
                double acc = 0;
                for (int s = 0; s <= t; s++) {
                    double qk = 0;
                    for (int d = 0; d < D; d++) qk += h2d(q[(bh * N + t) * D + d]) * h2d(kk[(bh * N + s) * D + d]);
                    acc += exp(-(double)lam[bh % H] * (t - s)) * qk * h2d(v[(bh * N + s) * E + e]);
                }
                want[(bh * N + t) * E + e] = acc, got[(bh * N + t) * E + e] = (float)h2d(o[(bh * N + t) * E + e]);
            }
    check("o", got, want, B * H * N * E, 2e-3, 2e-3); /* f16 out: half an ulp is 2^-11 relative */
    unload(&k);
}

Test(examples, lightning_attention) { lightning_case(NULL, NULL); }
Test(examples, lightning_attention_sm90a) { lightning_case("sm_90a", "emu:sm_90a"); }

Test(examples, documented_kernels_compile, .timeout = 300) {
    char path[1024];
    snprintf(path, sizeof path, "%s/README.md", TILE_SOURCE_DIR);
    int kernels = compile_doc_blocks(path, "README.md");
    cr_expect(kernels >= 1, "README.md: no example kernel found");
    snprintf(path, sizeof path, "%s/docs", TILE_SOURCE_DIR);
    DIR *d = opendir(path);
    cr_assert(d, "cannot open %s", path);
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 4 || strcmp(e->d_name + n - 3, ".md")) continue;
        char file[1300], rel[300];
        snprintf(file, sizeof file, "%s/%s", path, e->d_name);
        snprintf(rel, sizeof rel, "docs/%s", e->d_name);
        kernels += compile_doc_blocks(file, rel);
    }
    closedir(d);
    cr_expect(kernels >= 5, "only %d example kernels found in README.md and docs/", kernels);
    cr_log_info("%d documented example kernels compiled", kernels);
}
