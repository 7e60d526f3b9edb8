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
 *   chunked cross-entropy (a 2-D grid over vocabulary chunks, softcapping and scaling). */
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

/* Compile kernels/examples/FILE with the given defines (NULL-terminated) and load it. */
static void load_example(K *k, const char *file, const char *const *defines) {
    char path[1024];
    snprintf(path, sizeof path, "%s/kernels/examples/%s", TILE_SOURCE_DIR, file);
    tile_compile_options o = {.defines = defines};
    tile_status st = tile_compile_file(path, &o, &k->c);
    cr_assert_eq(st, TILE_OK, "%s: %s\n%s", file, tile_status_string(st), k->c.diagnostics);
    char *err = NULL;
    cr_assert_eq(dev_open(getenv("TILE_TEST_DEVICE") ? getenv("TILE_TEST_DEVICE") : "emu", &racecheck, &k->dev, &err), DEV_OK, "%s",
                 err ? err : "?");
    cr_assert_eq(dev_module_load_ptx(k->dev, k->c.ptx, &k->mod), DEV_OK, "%s", dev_last_error(k->dev));
}

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
