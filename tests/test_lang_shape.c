/* test_lang_shape.c - Triton's shape ops (join, split, interleave, cat, ravel,
 * permute, flip, gather), reduce/associative_scan with a user fn, cumprod,
 * reverse cumsum, sort, topk and histogram, run on the PTX emulator against C
 * references on fresh random inputs, outputs poisoned first, at sizes that are
 * not multiples of the tile (masked loads), with several warps.  Moves and
 * integer combines are compared exactly; float scans against float64. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/tile/tile.h"
#include "runtime/device.h"
#include "tests/test_rng.h"
#include "support/hostfloat.h"

static const DevOptions racecheck = {.emu_racecheck = true};

typedef struct K {
    TileDevice *dev;
    TileDevModule *mod;
    TileDevFunction *fn;
    int threads;
    uint64_t bufs[16];
    int nbufs;
} K;

/* src compiled for arch (NULL: the default target) and loaded. */
static void load_src_arch(K *k, const char *src, const char *name, const char *arch) {
    memset(k, 0, sizeof *k);
    tile_compile_options o = {.arch = arch};
    tile_compiled c;
    tile_status st = tile_compile_source("t.tile", src, &o, &c);
    cr_assert_eq(st, TILE_OK, "%s\n%s", tile_status_string(st), c.diagnostics);
    char *err = NULL;
    cr_assert_eq(dev_open(getenv("TILE_TEST_DEVICE") ? getenv("TILE_TEST_DEVICE") : "emu", &racecheck, &k->dev, &err), DEV_OK, "%s",
                 err ? err : "?");
    cr_assert_eq(dev_module_load_ptx(k->dev, c.ptx, &k->mod), DEV_OK, "%s", dev_last_error(k->dev));
    cr_assert_eq(dev_module_get_function(k->mod, name, &k->fn), DEV_OK, "%s", dev_last_error(k->dev));
    k->threads = 32 * c.kernels[0].num_warps;
    tile_compiled_free(&c);
}

static void load_src(K *k, const char *src, const char *name) { load_src_arch(k, src, name, NULL); }

static void unload(K *k) {
    dev_module_unload(k->mod);
    dev_close(k->dev);
}

static uint64_t upload(K *k, const void *h, size_t bytes) {
    uint64_t d;
    cr_assert_eq(dev_malloc(k->dev, bytes, &d), DEV_OK);
    cr_assert_eq(dev_memcpy_htod(k->dev, d, h, bytes), DEV_OK);
    return d;
}

/* A device output buffer filled with 0xFF bytes (NaN for floats, -1 for ints). */
static uint64_t poisoned(K *k, size_t bytes) {
    void *p = malloc(bytes);
    memset(p, 0xff, bytes);
    uint64_t d = upload(k, p, bytes);
    free(p);
    return d;
}

static void download(K *k, void *h, uint64_t d, size_t bytes) { cr_assert_eq(dev_memcpy_dtoh(k->dev, h, d, bytes), DEV_OK); }

static void launch(K *k, unsigned gx, void **params) {
    DevStatus st = dev_launch(k->fn, gx, 1, 1, (unsigned)k->threads, 1, 1, 0, NULL, params);
    cr_assert_eq(st, DEV_OK, "launch: %s", dev_last_error(k->dev));
    cr_assert_eq(dev_synchronize(k->dev), DEV_OK, "%s", dev_last_error(k->dev));
}

static void expect_f32(const float *got, const float *want, int n, const char *what) {
    int bad = 0;
    for (int i = 0; i < n && bad < 8; i++)
        if (memcmp(&got[i], &want[i], 4)) {
            cr_expect(0, "%s[%d] = %g, want %g (seed %llu)", what, i, got[i], want[i], (unsigned long long)seed);
            bad++;
        }
}

static void expect_i32(const int32_t *got, const int32_t *want, int n, const char *what) {
    int bad = 0;
    for (int i = 0; i < n && bad < 8; i++)
        if (got[i] != want[i]) {
            cr_expect(0, "%s[%d] = %d, want %d (seed %llu)", what, i, got[i], want[i], (unsigned long long)seed);
            bad++;
        }
}

/* ---- shape ops: pure moves, compared bit for bit ---- */

enum { R = 16, C = 32 };

/* The [16, 32] tiles a and b as loaded: rows < m and cols < n from x and y (row stride n),
 * the rest -1 and -2. */
static void tiles(const float *x, const float *y, int m, int n, float a[R][C], float b[R][C]) {
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++) {
            bool in = i < m && j < n;
            a[i][j] = in ? x[i * n + j] : -1.0f;
            b[i][j] = in ? y[i * n + j] : -2.0f;
        }
}

Test(lang_shape, join_split_interleave_cat_ravel_permute) {
    seed_rng();
    K k;
    load_src(&k,
             "@num_warps(4)\n"
             "kernel k(x: *f32, y: *f32, oj: *f32, oi: *f32, oc: *f32, orv: *f32, op: *f32, os: *f32, m: i32, n: i32) {\n"
             "    let r = arange(0, 16)[:, None];\n"
             "    let c = arange(0, 32)[None, :];\n"
             "    let mask = r < m && c < n;\n"
             "    let a = load(x + r * n + c, mask, -1.0);\n"
             "    let b = load(y + r * n + c, mask, -2.0);\n"
             "    let two = arange(0, 2)[None, None, :];\n"
             "    let j = join(a, b);\n"
             "    store(oj + (r * 32 + c)[:, :, None] * 2 + two, j);\n"
             "    store(oi + r * 64 + arange(0, 64)[None, :], interleave(a, b));\n"
             "    store(oc + arange(0, 32)[:, None] * 32 + c, cat(a, b, can_reorder=false));\n"
             "    store(orv + arange(0, 512), ravel(a));\n"
             "    let p = permute(j, [2, 0, 1]);\n"
             "    store(op + arange(0, 2)[:, None, None] * 512 + (r * 32 + c)[None, :, :], p);\n"
             "    let (s0, s1) = split(j);\n"
             "    let (t0, t1) = split(reshape(interleave(b, a), [16, 32, 2]));\n"
             "    store(os + r * 32 + c, s0);\n"
             "    store(os + 512 + r * 32 + c, s1);\n"
             "    store(os + 1024 + r * 32 + c, t0);\n"
             "    store(os + 1536 + r * 32 + c, t1);\n"
             "}\n",
             "k");
    int m = 13, n = 29;
    float x[13 * 29], y[13 * 29], a[R][C], b[R][C];
    for (int i = 0; i < m * n; i++) x[i] = (float)urand(), y[i] = (float)urand();
    tiles(x, y, m, n, a, b);
    uint64_t dx = upload(&k, x, sizeof x), dy = upload(&k, y, sizeof y);
    uint64_t dj = poisoned(&k, 4 * 1024), di = poisoned(&k, 4 * 1024), dc = poisoned(&k, 4 * 1024), drv = poisoned(&k, 4 * 512),
             dp = poisoned(&k, 4 * 1024), ds = poisoned(&k, 4 * 2048);
    void *params[] = {&dx, &dy, &dj, &di, &dc, &drv, &dp, &ds, &m, &n};
    launch(&k, 1, params);
    static float got[2048], want[2048];
    /* join: [16, 32, 2] with a at [.., 0] and b at [.., 1]; interleave: the same order as [16, 64] */
    for (int i = 0; i < R * C; i++) want[2 * i] = (&a[0][0])[i], want[2 * i + 1] = (&b[0][0])[i];
    download(&k, got, dj, 4 * 1024);
    expect_f32(got, want, 1024, "join");
    download(&k, got, di, 4 * 1024);
    expect_f32(got, want, 1024, "interleave");
    /* cat: a's rows, then b's */
    memcpy(want, a, sizeof a), memcpy(want + 512, b, sizeof b);
    download(&k, got, dc, 4 * 1024);
    expect_f32(got, want, 1024, "cat");
    download(&k, got, drv, 4 * 512);
    expect_f32(got, want, 512, "ravel");
    download(&k, got, dp, 4 * 1024);
    expect_f32(got, want, 1024, "permute");
    /* split(join(a, b)) = (a, b); split of interleave(b, a) as [16, 32, 2] = (b, a) */
    memcpy(want + 1024, b, sizeof b), memcpy(want + 1536, a, sizeof a);
    download(&k, got, ds, 4 * 2048);
    expect_f32(got, want, 2048, "split");
    unload(&k);
}

/* Triton's cat(a, b, dim=): along any dim, negative ones counted from the end, rank 6 (the most) too; dim= was
 * an error ('cat' joined along dim 0 only). */
Test(lang_shape, cat_along_a_dim) {
    seed_rng();
    K k;
    load_src(&k,
             "kernel k(x: *f32, y: *f32, o1: *f32, o0: *f32, o6: *f32, m: i32, n: i32) {\n"
             "    let r = arange(0, 16)[:, None];\n"
             "    let c = arange(0, 32)[None, :];\n"
             "    let mask = r < m && c < n;\n"
             "    let a = load(x + r * n + c, mask, -1.0);\n"
             "    let b = load(y + r * n + c, mask, -2.0);\n"
             "    store(o1 + r * 64 + arange(0, 64)[None, :], cat(a, b, dim=1));\n"
             "    store(o0 + arange(0, 32)[:, None] * 32 + c, cat(input=a, other=b, dim=-2));\n"
             "    let a6 = reshape(a, [2, 2, 4, 2, 4, 4]);\n"
             "    let b6 = reshape(b, [2, 2, 4, 2, 4, 4]);\n"
             "    for d in static_range(0, 6) {\n"
             "        store(o6 + d * 1024 + arange(0, 1024), reshape(cat(a6, b6, dim=d - 6 * (d % 2)), [1024]));\n"
             "    }\n"
             "}\n",
             "k");
    int m = 13, n = 29;
    float x[13 * 29], y[13 * 29], a[R][C], b[R][C];
    for (int i = 0; i < m * n; i++) x[i] = (float)urand(), y[i] = (float)urand();
    tiles(x, y, m, n, a, b);
    uint64_t dx = upload(&k, x, sizeof x), dy = upload(&k, y, sizeof y);
    uint64_t d1 = poisoned(&k, 4 * 1024), d0 = poisoned(&k, 4 * 1024), d6 = poisoned(&k, 4 * 6144);
    void *params[] = {&dx, &dy, &d1, &d0, &d6, &m, &n};
    launch(&k, 1, params);
    static float got[6144], want[6144];
    for (int i = 0; i < R; i++) /* dim 1: each row a's then b's */
        for (int j = 0; j < 2 * C; j++) want[i * 64 + j] = j < C ? a[i][j] : b[i][j - C];
    download(&k, got, d1, 4 * 1024);
    expect_f32(got, want, 1024, "cat dim=1");
    memcpy(want, a, sizeof a), memcpy(want + 512, b, sizeof b);
    download(&k, got, d0, 4 * 1024);
    expect_f32(got, want, 1024, "cat dim=-2");
    /* rank 6, [2, 2, 4, 2, 4, 4]: along d the result's index i_d < s_d is a's, else b's at i_d - s_d */
    static const int s6[6] = {2, 2, 4, 2, 4, 4};
    for (int d = 0; d < 6; d++) {
        int sh[6];
        memcpy(sh, s6, sizeof sh);
        sh[d] *= 2;
        for (int e = 0; e < 1024; e++) {
            int idx[6], rem = e;
            for (int q = 5; q >= 0; q--) idx[q] = rem % sh[q], rem /= sh[q];
            bool from_b = idx[d] >= s6[d];
            if (from_b) idx[d] -= s6[d];
            int flat = 0;
            for (int q = 0; q < 6; q++) flat = flat * s6[q] + idx[q];
            want[d * 1024 + e] = from_b ? (&b[0][0])[flat] : (&a[0][0])[flat];
        }
    }
    download(&k, got, d6, 4 * 6144);
    for (int d = 0; d < 6; d++) {
        char what[32];
        snprintf(what, sizeof what, "rank-6 cat dim=%d", d);
        expect_f32(got + d * 1024, want + d * 1024, 1024, what);
    }
    unload(&k);
}

Test(lang_shape, flip_and_gather) {
    seed_rng();
    K k;
    load_src(&k,
             "@num_warps(8)\n"
             "kernel k(x: *f32, ix: *i32, iy: *i64, of: *f32, og: *f32, m: i32, n: i32) {\n"
             "    let r = arange(0, 16)[:, None];\n"
             "    let c = arange(0, 32)[None, :];\n"
             "    let a = load(x + r * n + c, r < m && c < n, -1.0);\n"
             "    store(of + r * 32 + c, flip(a, 0));\n"
             "    store(of + 512 + r * 32 + c, flip(a));\n"
             "    let q1 = load(ix + r * 8 + arange(0, 8)[None, :]);\n"
             "    store(og + r * 8 + arange(0, 8)[None, :], gather(a, q1, 1));\n"
             "    let q0 = load(iy + arange(0, 4)[:, None] * 32 + c);\n"
             "    store(og + 128 + arange(0, 4)[:, None] * 32 + c, gather(a, q0, axis=0));\n"
             "}\n",
             "k");
    int m = 11, n = 27;
    float x[11 * 27], a[R][C], b[R][C];
    for (int i = 0; i < m * n; i++) x[i] = (float)urand();
    tiles(x, x, m, n, a, b);
    int32_t ix[16 * 8];
    int64_t iy[4 * 32];
    for (int i = 0; i < 16 * 8; i++) ix[i] = irand(32);
    for (int i = 0; i < 4 * 32; i++) iy[i] = irand(16);
    uint64_t dx = upload(&k, x, sizeof x), dix = upload(&k, ix, sizeof ix), diy = upload(&k, iy, sizeof iy);
    uint64_t df = poisoned(&k, 4 * 1024), dg = poisoned(&k, 4 * 256);
    void *params[] = {&dx, &dix, &diy, &df, &dg, &m, &n};
    launch(&k, 1, params);
    float got[1024], want[1024];
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++) want[i * C + j] = a[R - 1 - i][j], want[512 + i * C + j] = a[i][C - 1 - j];
    download(&k, got, df, sizeof got);
    expect_f32(got, want, 1024, "flip");
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 8; j++) want[i * 8 + j] = a[i][ix[i * 8 + j]];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 32; j++) want[128 + i * 32 + j] = a[iy[i * 32 + j]][j];
    download(&k, got, dg, 4 * 256);
    expect_f32(got, want, 256, "gather");
    unload(&k);
}

/* ---- reduce and associative_scan with a user fn ---- */

/* Composition of affine maps x -> a x + b (first f, then g), in i32 arithmetic that wraps:
 * associative but not commutative, so any change of order shows. */
#define AFFINE_FN                                                                                    \
    "fn affine(a1: i32, b1: i32, a2: i32, b2: i32) {\n"                                              \
    "    return (a1 * a2, b1 * a2 + b2);\n"                                                         \
    "}\n"                                                                                            \
    "fn add(a, b) { return a + b; }\n"                                                              \
    "fn argmax_combine(v1, k1, v2, k2) {\n"                                                         \
    "    let take = v2 > v1 || (v2 == v1 && k2 < k1);\n"                                             \
    "    return (where(take, v2, v1), where(take, k2, k1));\n"                                     \
    "}\n"

static void affine(uint32_t *a, uint32_t *b, uint32_t a2, uint32_t b2) {
    *b = *b * a2 + b2;
    *a = *a * a2;
}

Test(lang_shape, reduce_with_fn) {
    seed_rng();
    K k;
    load_src(&k,
             AFFINE_FN "@num_warps(4)\n"
                       "kernel k(pa: *i32, pb: *i32, pv: *f32, out: *i32, outf: *f32, m: i32, n: i32) {\n"
                       "    let r = arange(0, 16)[:, None];\n"
                       "    let c = arange(0, 64)[None, :];\n"
                       "    let mask = r < m && c < n;\n"
                       "    let a = load(pa + r * n + c, mask, 1);\n"
                       "    let b = load(pb + r * n + c, mask, 0);\n"
                       "    let v = load(pv + r * n + c, mask, -1.0e30);\n"
                       "    let (ra, rb) = reduce((a, b), 1, affine);\n"
                       "    store(out + arange(0, 16), ra);\n"
                       "    store(out + 16 + arange(0, 16), rb);\n"
                       "    let (ca, cb) = reduce((a, b), 0, affine, keep_dims=true);\n"
                       "    store(out + 32 + c, ca);\n"
                       "    store(out + 96 + c, cb);\n"
                       "    store(out + 160 + arange(0, 1), reduce(b, None, add) + zeros([1], i32));\n"
                       "    let (mv, mi) = reduce((v, c + zeros([16, 64], i32)), 1, argmax_combine);\n"
                       "    store(outf + arange(0, 16), mv);\n"
                       "    store(out + 161 + arange(0, 16), mi);\n"
                       "}\n",
             "k");
    int m = 13, n = 59;
    static int32_t A[13 * 59], B[13 * 59];
    static float V[13 * 59];
    for (int i = 0; i < m * n; i++) {
        A[i] = (int32_t)(rnext() >> 32), B[i] = (int32_t)(rnext() >> 32);
        V[i] = (float)irand(20); /* many ties: the smallest index must win */
    }
    uint64_t da = upload(&k, A, sizeof A), db = upload(&k, B, sizeof B), dv = upload(&k, V, sizeof V);
    uint64_t dout = poisoned(&k, 4 * 177), doutf = poisoned(&k, 4 * 16);
    void *params[] = {&da, &db, &dv, &dout, &doutf, &m, &n};
    launch(&k, 1, params);
    int32_t got[177], want[177];
    float gotf[16], wantf[16];
    uint32_t total = 0;
    for (int i = 0; i < 16; i++) {
        uint32_t ra = 1, rb = 0;
        float best = -INFINITY;
        int bi = 0;
        for (int j = 0; j < 64; j++) {
            bool in = i < m && j < n;
            affine(&ra, &rb, in ? (uint32_t)A[i * n + j] : 1u, in ? (uint32_t)B[i * n + j] : 0u);
            total += in ? (uint32_t)B[i * n + j] : 0u;
            float v = in ? V[i * n + j] : -1.0e30f;
            if (v > best) best = v, bi = j;
        }
        want[i] = (int32_t)ra, want[16 + i] = (int32_t)rb;
        wantf[i] = best, want[161 + i] = bi;
    }
    for (int j = 0; j < 64; j++) {
        uint32_t ca = 1, cb = 0;
        for (int i = 0; i < 16; i++) {
            bool in = i < m && j < n;
            affine(&ca, &cb, in ? (uint32_t)A[i * n + j] : 1u, in ? (uint32_t)B[i * n + j] : 0u);
        }
        want[32 + j] = (int32_t)ca, want[96 + j] = (int32_t)cb;
    }
    want[160] = (int32_t)total;
    download(&k, got, dout, sizeof got);
    download(&k, gotf, doutf, sizeof gotf);
    expect_i32(got, want, 177, "reduce");
    expect_f32(gotf, wantf, 16, "argmax value");
    unload(&k);
}

Test(lang_shape, associative_scan_cumprod_reverse_cumsum) {
    seed_rng();
    K k;
    load_src(&k,
             AFFINE_FN "@num_warps(4)\n"
                       "kernel k(pa: *i32, pb: *i32, px: *f32, out: *i32, outf: *f32, m: i32, n: i32) {\n"
                       "    let r = arange(0, 8)[:, None];\n"
                       "    let c = arange(0, 128)[None, :];\n"
                       "    let mask = r < m && c < n;\n"
                       "    let o = r * 128 + c;\n"
                       "    let a = load(pa + r * n + c, mask, 1);\n"
                       "    let b = load(pb + r * n + c, mask, 0);\n"
                       "    let x = load(px + r * n + c, mask, 1.0);\n"
                       "    let (fa, fb) = associative_scan((a, b), 1, affine);\n"
                       "    let (ga, gb) = associative_scan((a, b), 1, affine, reverse=true);\n"
                       "    let (ha, hb) = associative_scan((a, b), 0, affine);\n"
                       "    store(out + o, fa);\n"
                       "    store(out + 1024 + o, fb);\n"
                       "    store(out + 2048 + o, ga);\n"
                       "    store(out + 3072 + o, gb);\n"
                       "    store(out + 4096 + o, ha);\n"
                       "    store(out + 5120 + o, hb);\n"
                       "    store(outf + o, cumprod(x, 1));\n"
                       "    store(outf + 1024 + o, cumprod(x, axis=1, reverse=true));\n"
                       "    store(outf + 2048 + o, cumsum(x, 1, reverse=true));\n"
                       "    store(outf + 3072 + o, cumsum(x, 0, reverse=true));\n"
                       "}\n",
             "k");
    int m = 7, n = 117;
    static int32_t A[7 * 117], B[7 * 117];
    static float X[7 * 117];
    for (int i = 0; i < m * n; i++) {
        A[i] = (int32_t)(rnext() >> 32), B[i] = (int32_t)(rnext() >> 32);
        X[i] = (float)(1.0 + 0.05 * urand());
    }
    uint64_t da = upload(&k, A, sizeof A), db = upload(&k, B, sizeof B), dx = upload(&k, X, sizeof X);
    uint64_t dout = poisoned(&k, 4 * 6144), doutf = poisoned(&k, 4 * 4096);
    void *params[] = {&da, &db, &dx, &dout, &doutf, &m, &n};
    launch(&k, 1, params);
    static int32_t got[6144], want[6144];
    static float gotf[4096];
    static double wantf[4096];
    static uint32_t ta[8][128], tb[8][128];
    static double tx[8][128];
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 128; j++) {
            bool in = i < m && j < n;
            ta[i][j] = in ? (uint32_t)A[i * n + j] : 1u, tb[i][j] = in ? (uint32_t)B[i * n + j] : 0u;
            tx[i][j] = in ? X[i * n + j] : 1.0;
        }
    for (int i = 0; i < 8; i++) {
        uint32_t fa = 1, fb = 0, ga = 1, gb = 0;
        double p = 1, q = 1, s = 0;
        for (int j = 0; j < 128; j++) {
            affine(&fa, &fb, ta[i][j], tb[i][j]);
            want[i * 128 + j] = (int32_t)fa, want[1024 + i * 128 + j] = (int32_t)fb;
            p *= tx[i][j];
            wantf[i * 128 + j] = p;
            int jr = 127 - j; /* reverse: out[j] = x[127] (+) ... (+) x[j] */
            affine(&ga, &gb, ta[i][jr], tb[i][jr]);
            want[2048 + i * 128 + jr] = (int32_t)ga, want[3072 + i * 128 + jr] = (int32_t)gb;
            q *= tx[i][jr];
            s += tx[i][jr];
            wantf[1024 + i * 128 + jr] = q;
            wantf[2048 + i * 128 + jr] = s;
        }
    }
    for (int j = 0; j < 128; j++) {
        uint32_t ha = 1, hb = 0;
        double s = 0;
        for (int i = 0; i < 8; i++) {
            affine(&ha, &hb, ta[i][j], tb[i][j]);
            want[4096 + i * 128 + j] = (int32_t)ha, want[5120 + i * 128 + j] = (int32_t)hb;
            s += tx[7 - i][j];
            wantf[3072 + (7 - i) * 128 + j] = s;
        }
    }
    download(&k, got, dout, sizeof got);
    download(&k, gotf, doutf, sizeof gotf);
    expect_i32(got, want, 6144, "associative_scan");
    int bad = 0;
    for (int i = 0; i < 4096 && bad < 8; i++) {
        double tol = 1e-6 * (fabs(wantf[i]) + 1) * (i >= 2048 ? 4 : 1);
        if (!(fabs(gotf[i] - wantf[i]) <= tol)) {
            cr_expect(0, "%s [%d] = %.9g, want %.9g (seed %llu)", i < 1024 ? "cumprod" : i < 2048 ? "cumprod reverse" : "cumsum reverse", i % 1024,
                      gotf[i], wantf[i], (unsigned long long)seed);
            bad++;
        }
    }
    unload(&k);
}

/* ---- sort, topk, histogram ---- */

/* IEEE totalOrder on f32: -NaN < -inf < .. < -0 < +0 < .. < +inf < +NaN (what sort promises) */
static int32_t total_key(float f) {
    int32_t b;
    memcpy(&b, &f, 4);
    return b < 0 ? b ^ INT32_MAX : b;
}

static int cmp_f32(const void *a, const void *b) {
    int32_t x = total_key(*(const float *)a), y = total_key(*(const float *)b);
    return x < y ? -1 : x > y;
}

static int cmp_i32_desc(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x > y ? -1 : x < y;
}

static int cmp_i32(const void *a, const void *b) { return cmp_i32_desc(b, a); }

Test(lang_shape, sort_1d_2d) {
    seed_rng();
    K k;
    load_src(&k,
             "@num_warps(4)\n"
             "kernel k(x: *f32, y: *i32, ox: *f32, oy: *i32, n: i32, m: i32) {\n"
             "    let i = arange(0, 256);\n"
             "    let a = load(x + i, i < n, 1.0e30);\n"
             "    store(ox + i, sort(a));\n"
             "    store(ox + 256 + i, sort(a, descending=true));\n"
             "    let r = arange(0, 8)[:, None];\n"
             "    let c = arange(0, 64)[None, :];\n"
             "    let b = load(y + r * 64 + c, r < m, -7);\n"
             "    store(oy + r * 64 + c, sort(b, dim=1, descending=true));\n"
             "    store(oy + 512 + r * 64 + c, sort(b, -1, false));\n"
             "}\n",
             "k");
    int n = 201, m = 6;
    float x[201];
    int32_t y[6 * 64];
    for (int i = 0; i < n; i++) x[i] = i % 9 == 0 ? 0.25f : (float)urand(); /* duplicates */
    x[3] = NAN, x[5] = -NAN, x[7] = -0.0f, x[8] = 0.0f, x[10] = INFINITY, x[11] = -INFINITY, x[12] = -0.0f;
    for (int i = 0; i < m * 64; i++) y[i] = irand(100) - 50;
    uint64_t dx = upload(&k, x, sizeof x), dy = upload(&k, y, sizeof y), dox = poisoned(&k, 4 * 512), doy = poisoned(&k, 4 * 1024);
    void *params[] = {&dx, &dy, &dox, &doy, &n, &m};
    launch(&k, 1, params);
    float want[512], got[512];
    for (int i = 0; i < 256; i++) want[i] = i < n ? x[i] : 1.0e30f;
    qsort(want, 256, 4, cmp_f32);
    for (int i = 0; i < 256; i++) want[256 + i] = want[255 - i];
    download(&k, got, dox, sizeof got);
    expect_f32(got, want, 512, "sort f32");
    int32_t wi[1024], gi[1024];
    for (int r = 0; r < 8; r++) {
        for (int j = 0; j < 64; j++) wi[r * 64 + j] = r < m ? y[r * 64 + j] : -7;
        qsort(wi + r * 64, 64, 4, cmp_i32_desc);
        for (int j = 0; j < 64; j++) wi[512 + r * 64 + j] = wi[r * 64 + 63 - j];
    }
    download(&k, gi, doy, sizeof gi);
    expect_i32(gi, wi, 1024, "sort i32 rows");
    unload(&k);
}

/* Triton's bitonic_merge(x, dim=None, descending=false): the last stage of a bitonic sort along the last dim
 * (partners at n/2, n/4, .. 1; the lower of a pair keeps the smaller value, or the larger descending), which
 * sorts a bitonic row; the name was unknown.  Rows 0-2 bitonic (sorted after), the rest random, against the
 * same network run on the host. */
Test(lang_shape, bitonic_merge) {
    seed_rng();
    K k;
    load_src(&k,
             "kernel k(y: *i32, o: *i32, m: i32) {\n"
             "    let r = arange(0, 8)[:, None];\n"
             "    let c = arange(0, 32)[None, :];\n"
             "    let b = load(y + r * 32 + c, r < m, -7);\n"
             "    store(o + r * 32 + c, bitonic_merge(b));\n"
             "    store(o + 256 + r * 32 + c, bitonic_merge(b, dim=-1, descending=true));\n"
             "}\n",
             "k");
    int m = 7;
    int32_t y[7 * 32], want[512], got[512];
    for (int i = 0; i < m * 32; i++) y[i] = irand(200) - 100;
    for (int r = 0; r < 3; r++) { /* bitonic: up to a peak (a valley for row 1), then down (up) */
        int peak = 5 + 9 * r;
        qsort(y + r * 32, (size_t)peak, 4, r == 1 ? cmp_i32_desc : cmp_i32);
        qsort(y + r * 32 + peak, (size_t)(32 - peak), 4, r == 1 ? cmp_i32 : cmp_i32_desc);
    }
    uint64_t dy = upload(&k, y, sizeof y), d_o = poisoned(&k, sizeof got);
    void *params[] = {&dy, &d_o, &m};
    launch(&k, 1, params);
    download(&k, got, d_o, sizeof got);
    for (int desc = 0; desc < 2; desc++)
        for (int r = 0; r < 8; r++) {
            int32_t *w = want + desc * 256 + r * 32;
            for (int j = 0; j < 32; j++) w[j] = r < m ? y[r * 32 + j] : -7;
            for (int j = 16; j >= 1; j /= 2)
                for (int i = 0; i < 32; i++)
                    if (!(i & j) && (desc ? w[i] < w[i ^ j] : w[i] > w[i ^ j])) {
                        int32_t t = w[i];
                        w[i] = w[i ^ j], w[i ^ j] = t;
                    }
            for (int j = 1; r < 3 && j < 32; j++)
                cr_expect(desc ? w[j - 1] >= w[j] : w[j - 1] <= w[j], "the host network did not sort bitonic row %d", r);
        }
    expect_i32(got, want, 512, "bitonic_merge");
    unload(&k);
}

Test(lang_shape, topk_and_histogram) {
    seed_rng();
    K k;
    load_src(&k,
             "@num_warps(2)\n"
             "kernel k(x: *f32, h: *i32, h2: *i64, ov: *f32, oi: *i32, oh: *i32, n: i32, hn: i32, hn2: i32) {\n"
             "    let r = arange(0, 4)[:, None];\n"
             "    let c = arange(0, 128)[None, :];\n"
             "    let a = load(x + r * n + c, c < n, -1.0e30);\n"
             "    let (v, i) = topk(a, 8, return_indices=true);\n"
             "    store(ov + r * 8 + arange(0, 8)[None, :], v);\n"
             "    store(oi + r * 8 + arange(0, 8)[None, :], i);\n"
             "    let j = arange(0, 512);\n"
             "    let hv = load(h + j, j < hn, 0);\n"
             "    store(oh + arange(0, 32), histogram(hv, 32, mask=j < hn));\n"
             "    store(oh + 32 + arange(0, 32), histogram(hv, 32));\n"
             "    let jj = arange(0, 2048);\n"
             "    store(oh + 64 + arange(0, 256), histogram(load(h2 + jj, jj < hn2, 0), 256, mask=jj < hn2));\n"
             "}\n",
             "k");
    int n = 100, hn = 437, hn2 = 1999;
    float x[4 * 100];
    int32_t h[437];
    int64_t h2[2048];
    int32_t wh2[256] = {0}, gh2[256];
    for (int i = 0; i < 2048; i++) { /* some outside [0, 256), one whose low 32 bits are inside; past hn2 masked off */
        h2[i] = i % 97 == 0 ? (int64_t)irand(1000) - 500 : i % 89 == 0 ? ((int64_t)1 << 32) + 5 : irand(256);
        if (i < hn2 && h2[i] >= 0 && h2[i] < 256) wh2[h2[i]]++;
    }
    for (int i = 0; i < 4 * n; i++) x[i] = (float)irand(40) / 4; /* ties: the lower index first */
    for (int i = 0; i < hn; i++) h[i] = irand(40) - 4;            /* some outside [0, 32): ignored */
    uint64_t dx = upload(&k, x, sizeof x), dh = upload(&k, h, sizeof h), dh2 = upload(&k, h2, sizeof h2);
    uint64_t dov = poisoned(&k, 4 * 32), doi = poisoned(&k, 4 * 32), doh = poisoned(&k, 4 * (64 + 256));
    void *params[] = {&dx, &dh, &dh2, &dov, &doi, &doh, &n, &hn, &hn2};
    launch(&k, 1, params);
    float wv[32], gv[32];
    int32_t wi[32], gi[32], wh[64] = {0}, gh[64];
    for (int r = 0; r < 4; r++) {
        bool used[100] = {0};
        for (int t = 0; t < 8; t++) {
            int best = -1;
            for (int j = 0; j < n; j++)
                if (!used[j] && (best < 0 || x[r * n + j] > x[r * n + best])) best = j;
            used[best] = true;
            wv[r * 8 + t] = x[r * n + best], wi[r * 8 + t] = best;
        }
    }
    for (int i = 0; i < 512; i++) {
        int v = i < hn ? h[i] : 0;
        if (v >= 0 && v < 32) wh[32 + v]++, wh[v] += i < hn;
    }
    download(&k, gv, dov, sizeof gv);
    download(&k, gi, doi, sizeof gi);
    download(&k, gh, doh, sizeof gh);
    download(&k, gh2, doh + sizeof gh, sizeof gh2);
    expect_f32(gv, wv, 32, "topk values");
    expect_i32(gi, wi, 32, "topk indices");
    expect_i32(gh, wh, 64, "histogram");
    expect_i32(gh2, wh2, 256, "histogram of 2048 i64 values over 256 bins (16 slices of 16 bins)");
    unload(&k);
}

/* ---- diagnostics: located, and the library keeps going ---- */

static void expect_error(const char *src, const char *msg) {
    tile_compile_options o = {0};
    tile_compiled c;
    tile_status st = tile_compile_source("e.tile", src, &o, &c);
    cr_expect_eq(st, TILE_ERROR_COMPILE, "compiled: %s", src);
    cr_expect(c.diagnostics && strstr(c.diagnostics, msg), "want '%s' in:\n%s", msg, c.diagnostics ? c.diagnostics : "");
    tile_compiled_free(&c);
}

Test(lang_shape, errors) {
    const char *pre = "fn add(a, b) { return a + b; }\nfn two(a, b) { return (a, b); }\nkernel k(p: *f32) {\n    let x = load(p + arange(0, 16));\n";
    char src[1024];
#define E(body, msg)                                                     \
    snprintf(src, sizeof src, "%s    %s\n}\n", pre, body);               \
    expect_error(src, msg);
    E("let (a, b) = split(x);", "e.tile:5:18: error: 'split' expects a tensor whose last dimension is 2");
    E("store(p, reduce(x, 0, nothing));", "argument 'combine_fn' of 'reduce' must name a fn");
    E("store(p, reduce(x, 0, x));", "argument 'combine_fn' of 'reduce' must name a fn");
    E("store(p, reduce(x, 0, two));", "combine function 'two' returns 2 values, expected 1");
    E("let v = topk(x, 3);", "'topk': k must be a power of two from 1 to 16, got 3");
    E("store(p + arange(0, 16), sort(x, 0, descending=1) + cat(x, x[:, None]));", "'cat' expects two tensors of one shape");
    E("store(p + arange(0, 16), gather(x, x, 0));", "'gather' expects an integer index tensor");
    /* an index of another rank is named with its shape (it said "got 'i32'") */
    E("store(p + arange(0, 16), gather(x, arange(0, 16)[:, None], 0));",
      "'gather' expects an integer index tensor of the source's rank 1, got 'tensor<16x1xi32>'");
    E("store(p + arange(0, 16), associative_scan(x, 2, add));", "axis 2 is out of range for a tensor of rank 1");
    E("store(p + arange(0, 16), flip(x, 1));", "axis 1 is out of range");
    /* the tuple's tensors are their own limit (8), not tied to the rank limit */
    E("let r = reduce((x, x, x, x, x, x, x, x, x), 0, add);", "e.tile:5:13: error: 'reduce' takes at most 8 tensors");
    E("let h = histogram(x, 16);", "'histogram' expects a tensor of integers");
    /* a bin count that is no tensor size was an error without a message: the compile succeeded and the store vanished */
    E("store(p + arange(0, 16), histogram(x as i32, 0) as f32);", "e.tile:5:30: error: 'histogram': num_bins must be a power of two from 1 to 1048576, got 0");
    E("store(p + arange(0, 16), histogram(x as i32, -4) as f32);", "'histogram': num_bins must be a power of two from 1 to 1048576, got -4");
    E("store(p + arange(0, 16), histogram(x as i32, 12) as f32);", "'histogram': num_bins must be a power of two from 1 to 1048576, got 12");
#undef E
}

/* ---- dot options: input_precision and out_dtype ---- */

static int count(const char *s, const char *what) {
    int n = 0;
    for (const char *p = s; (p = strstr(p, what)); p++) n++;
    return n;
}

static char *ptx_of(const char *src) {
    tile_compile_options o = {0};
    tile_compiled c;
    tile_status st = tile_compile_source("t.tile", src, &o, &c);
    cr_assert_eq(st, TILE_OK, "%s", c.diagnostics);
    char *p = strdup(c.ptx);
    tile_compiled_free(&c);
    return p;
}

#define DOT_F32_SRC(PREC)                                                                          \
    "@num_warps(4)\n"                                                                              \
    "kernel k(a: *f32, b: *f32, c: *f32, m: i32, n: i32, kk: i32) {\n"                             \
    "    let r = arange(0, 32);\n"                                                                 \
    "    let q = arange(0, 64);\n"                                                                 \
    "    let ta = load(a + r[:, None] * kk + q[None, :], r[:, None] < m && q[None, :] < kk, 0.0);\n" \
    "    let tb = load(b + q[:, None] * n + r[None, :], q[:, None] < kk && r[None, :] < n, 0.0);\n"  \
    "    store(c + r[:, None] * 32 + r[None, :], dot(ta, tb, input_precision=\"" PREC "\"));\n"   \
    "}\n"

Test(lang_shape, dot_input_precision) {
    seed_rng();
    const char *precs[3] = {"ieee", "tf32", "tf32x3"};
    const char *srcs[3] = {DOT_F32_SRC("ieee"), DOT_F32_SRC("tf32"), DOT_F32_SRC("tf32x3")};
    int m = 29, n = 23, kk = 57;
    static float A[29 * 57], B[57 * 23];
    for (int i = 0; i < m * kk; i++) A[i] = (float)urand();
    for (int i = 0; i < kk * n; i++) B[i] = (float)urand();
    double maxerr[3];
    int mmas[3];
    for (int p = 0; p < 3; p++) {
        char *ptx = ptx_of(srcs[p]);
        mmas[p] = count(ptx, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32");
        free(ptx);
        K k;
        load_src(&k, srcs[p], "k");
        uint64_t da = upload(&k, A, sizeof A), db = upload(&k, B, sizeof B), dc = poisoned(&k, 4 * 1024);
        void *params[] = {&da, &db, &dc, &m, &n, &kk};
        launch(&k, 1, params);
        static float got[1024];
        download(&k, got, dc, sizeof got);
        maxerr[p] = 0;
        for (int i = 0; i < 32; i++)
            for (int j = 0; j < 32; j++) {
                double want = 0, mag = 0;
                for (int q = 0; i < m && j < n && q < kk; q++) want += (double)A[i * kk + q] * B[q * n + j], mag += fabs((double)A[i * kk + q] * B[q * n + j]);
                double err = fabs(got[i * 32 + j] - want) / (mag + 1e-30);
                if (!(err <= maxerr[p])) maxerr[p] = isnan(err) ? INFINITY : err; /* NaN: poison left or a wrong value */
                if (mag == 0) cr_expect(got[i * 32 + j] == 0, "%s: padding [%d][%d] = %g", precs[p], i, j, got[i * 32 + j]);
            }
        unload(&k);
    }
    cr_log_info("dot relative errors (to sum |a b|): ieee %.3g, tf32 %.3g, tf32x3 %.3g", maxerr[0], maxerr[1], maxerr[2]);
    /* error relative to sum |a b|: f32 FMA ~ K 2^-24; tf32 ~ 2^-11 per product; tf32x3 ~ f32 */
    cr_expect(maxerr[0] < 1e-6, "ieee: relative error %g (seed %llu)", maxerr[0], (unsigned long long)seed);
    cr_expect(maxerr[1] < 2e-3 && maxerr[1] > 1e-5, "tf32: relative error %g (seed %llu)", maxerr[1], (unsigned long long)seed);
    cr_expect(maxerr[2] < 1e-5 && maxerr[2] * 50 < maxerr[1], "tf32x3: relative error %g vs tf32 %g (seed %llu)", maxerr[2], maxerr[1],
              (unsigned long long)seed);
    cr_expect(mmas[0] == 0 && mmas[1] > 0 && mmas[2] == 3 * mmas[1], "tf32 mma counts %d %d %d", mmas[0], mmas[1], mmas[2]);
}

static uint16_t f2h(float f) { /* round to nearest even; inputs are small and normal */
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, e = (x >> 23) & 0xff, mant = x & 0x7fffff;
    int he = (int)e - 127 + 15;
    if (e == 0 || he <= 0) return (uint16_t)sign; /* below f16's normal range: zero (the reference reads the same bits) */
    uint32_t h = sign | ((uint32_t)he << 10) | (mant >> 13);
    uint32_t rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++;
    return (uint16_t)h;
}

static double h2d(uint16_t h) {
    int e = (h >> 10) & 0x1f, mant = h & 0x3ff;
    double v = e ? ldexp(1024 + mant, e - 25) : ldexp(mant, -24);
    return h & 0x8000 ? -v : v;
}

/* allow_tf32 and input_precision on f16 and i8 inputs change nothing (as Triton's) */
Test(lang_shape, dot_out_dtype) {
    seed_rng();
    const char *src = "@num_warps(4)\n"
                      "kernel k(a: *f16, b: *f16, c: *f16, d: *f32, x: *i8, y: *i8, z: *i32, m: i32, n: i32, kk: i32) {\n"
                      "    let r = arange(0, 32);\n"
                      "    let q = arange(0, 32);\n"
                      "    let ma = r[:, None] < m && q[None, :] < kk;\n"
                      "    let mb = q[:, None] < kk && r[None, :] < n;\n"
                      "    let ta = load(a + r[:, None] * kk + q[None, :], ma, 0.0);\n"
                      "    let tb = load(b + q[:, None] * n + r[None, :], mb, 0.0);\n"
                      "    let o = r[:, None] * 32 + r[None, :];\n"
                      "    store(c + o, dot(ta, tb, out_dtype=f16));\n"
                      "    store(d + o, dot(ta, tb, zeros([32, 32], f32), out_dtype=f32, allow_tf32=true));\n"
                      "    let ia = load(x + r[:, None] * kk + q[None, :], ma, 0);\n"
                      "    let ib = load(y + q[:, None] * n + r[None, :], mb, 0);\n"
                      "    store(z + o, dot(ia, ib, out_dtype=i32, input_precision=\"tf32\"));\n"
                      "}\n";
    char *ptx = ptx_of(src);
    cr_expect(count(ptx, "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16") > 0, "no f16-accumulating mma");
    cr_expect(count(ptx, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") > 0, "no f32-accumulating mma");
    free(ptx);
    K k;
    load_src(&k, src, "k");
    int m = 27, n = 31, kk = 29;
    static uint16_t A[27 * 29], B[29 * 31];
    static int8_t X[27 * 29], Y[29 * 31];
    for (int i = 0; i < m * kk; i++) A[i] = f2h((float)urand()), X[i] = (int8_t)(irand(256) - 128);
    for (int i = 0; i < kk * n; i++) B[i] = f2h((float)urand()), Y[i] = (int8_t)(irand(256) - 128);
    uint64_t da = upload(&k, A, sizeof A), db = upload(&k, B, sizeof B), dx = upload(&k, X, sizeof X), dy = upload(&k, Y, sizeof Y);
    uint64_t dc = poisoned(&k, 2 * 1024), dd = poisoned(&k, 4 * 1024), dz = poisoned(&k, 4 * 1024);
    void *params[] = {&da, &db, &dc, &dd, &dx, &dy, &dz, &m, &n, &kk};
    launch(&k, 1, params);
    static uint16_t gc[1024];
    static float gd[1024];
    static int32_t gz[1024];
    download(&k, gc, dc, sizeof gc);
    download(&k, gd, dd, sizeof gd);
    download(&k, gz, dz, sizeof gz);
    int bad = 0;
    for (int i = 0; i < 32 && bad < 8; i++)
        for (int j = 0; j < 32 && bad < 8; j++) {
            double want = 0, mag = 0;
            int64_t wz = 0;
            for (int q = 0; i < m && j < n && q < kk; q++) {
                want += h2d(A[i * kk + q]) * h2d(B[q * n + j]);
                mag += fabs(h2d(A[i * kk + q]) * h2d(B[q * n + j]));
                wz += (int64_t)X[i * kk + q] * Y[q * n + j];
            }
            double e16 = fabs(h2d(gc[i * 32 + j]) - want), e32 = fabs(gd[i * 32 + j] - want);
            /* f16 accumulation: two roundings to f16 (one per K step of 16) of sums up to mag */
            if (!(e16 <= 2 * 0x1p-11 * (mag + fabs(want)) + 1e-7) || !(e32 <= 1e-6 * mag + 1e-7) || gz[i * 32 + j] != (int32_t)wz) {
                cr_expect(0, "[%d][%d]: f16 %g, f32 %g, want %g; i32 %d want %lld (seed %llu)", i, j, h2d(gc[i * 32 + j]), gd[i * 32 + j], want,
                          gz[i * 32 + j], (long long)wz, (unsigned long long)seed);
                bad++;
            }
        }
    unload(&k);
}

Test(lang_shape, dot_option_errors) {
    const char *pre = "kernel k(p: *f32, h: *f16) {\n    let x = load(p + arange(0, 16)[:, None] * 16 + arange(0, 16)[None, :]);\n"
                      "    let y = load(h + arange(0, 16)[:, None] * 16 + arange(0, 16)[None, :]);\n";
    char src[1024];
#define E(body, msg)                                       \
    snprintf(src, sizeof src, "%s    %s\n}\n", pre, body); \
    expect_error(src, msg);
    E("let d = dot(x, x, input_precision=\"tf64\");", "dot: input_precision must be \"ieee\", \"tf32\" or \"tf32x3\", got \"tf64\"");
    E("let d = dot(x, x, allow_tf32=true, input_precision=\"tf32\");", "give either allow_tf32 or input_precision, not both");
    E("let d = dot(x, x, out_dtype=f16);", "dot: out_dtype 'f16' does not suit 'f32' inputs");
    E("let d = dot(y, y, zeros([16, 16], f32), out_dtype=f16);", "out_dtype 'f16' differs from the accumulator's type 'f32'");
#undef E
}

/* ---- edge cases: 8 warps, a 1024-element f16 sort, i1/i8/i64 and pointer operands, scalars ---- */

static int cmp_u16_as_f16(const void *a, const void *b) {
    double x = h2d(*(const uint16_t *)a), y = h2d(*(const uint16_t *)b);
    return x < y ? -1 : x > y;
}

Test(lang_shape, edge_cases) {
    seed_rng();
    K k;
    load_src(&k,
             "fn mx(a, b) { return maximum(a, b); }\n"
             "fn band(a, b) { return a & b; }\n"
             "@num_warps(8)\n"
             "kernel k(x: *f16, y: *f16, z: *i8, oz: *i8, w: *i64, o: *i32) {\n"
             "    let i = arange(0, 1024);\n"
             "    let a = load(x + i);\n"
             "    store(y + i, sort(a));\n"
             "    store(o + arange(0, 1), reduce(a as f32 > -100.0, 0, band) as i32 + zeros([1], i32));\n"
             "    store(o + 1 + arange(0, 1), reduce(a as f32 > 0.0, 0, band) as i32 + zeros([1], i32));\n"
             "    let zz = load(z + arange(0, 32));\n"
             "    store(oz + arange(0, 32), flip(zz) + reduce(zz, 0, mx));\n"
             "    store(o + 16 + arange(0, 16), histogram(load(w + arange(0, 64)), 16));\n"
             "    let pp = join(x + 1, x + 2);\n"
             "    let (p0, p1) = split(pp);\n"
             "    store(y + 1024 + arange(0, 2), join(load(p1), load(p0)));\n"
             "}\n",
             "k");
    static uint16_t x[1024], y[1026], want[1026];
    int8_t z[32], oz[32];
    int64_t w[64];
    int32_t o[32];
    for (int i = 0; i < 1024; i++) x[i] = f2h((float)(urand() * 8));
    for (int i = 0; i < 32; i++) z[i] = (int8_t)(irand(100) - 50);
    for (int i = 0; i < 64; i++) w[i] = i % 5 == 0 ? ((int64_t)1 << 33) + 3 : irand(20) - 2; /* 2^33 + 3 is no bin */
    uint64_t dx = upload(&k, x, sizeof x), dy = poisoned(&k, sizeof y), dz = upload(&k, z, sizeof z), doz = poisoned(&k, sizeof oz),
             dw = upload(&k, w, sizeof w), dout = poisoned(&k, sizeof o);
    void *params[] = {&dx, &dy, &dz, &doz, &dw, &dout};
    launch(&k, 1, params);
    download(&k, y, dy, sizeof y), download(&k, oz, doz, sizeof oz), download(&k, o, dout, sizeof o);
    memcpy(want, x, sizeof x);
    qsort(want, 1024, 2, cmp_u16_as_f16);
    want[1024] = x[2], want[1025] = x[1];
    int bad = 0;
    for (int i = 0; i < 1026; i++)
        if (h2d(y[i]) != h2d(want[i]) && bad++ < 8) cr_expect(0, "y[%d] = %g, want %g (seed %llu)", i, h2d(y[i]), h2d(want[i]), (unsigned long long)seed);
    bool all_pos = true;
    for (int i = 0; i < 1024; i++) all_pos &= h2d(x[i]) > 0;
    cr_expect_eq(o[0], 1, "reduce of i1 with & over a true tensor: %d", o[0]);
    cr_expect_eq(o[1], all_pos, "reduce of i1 with &: %d", o[1]);
    int8_t zmax = -128;
    for (int i = 0; i < 32; i++) zmax = z[i] > zmax ? z[i] : zmax;
    for (int i = 0; i < 32; i++) cr_expect_eq(oz[i], (int8_t)(z[31 - i] + zmax), "oz[%d] = %d", i, oz[i]);
    int32_t hist[16] = {0};
    for (int i = 0; i < 64; i++)
        if (w[i] >= 0 && w[i] < 16) hist[w[i]]++;
    expect_i32(o + 16, hist, 16, "histogram of i64");
    unload(&k);
}

/* A 1-D tile loaded 16 bytes per thread: several registers per thread along the axis,
 * lanes, warps and repetitions, all in one combine order. */
Test(lang_shape, fn_on_vectorized_layout) {
    seed_rng();
    K k;
    load_src(&k,
             AFFINE_FN "@num_warps(4)\n"
                       "kernel k(pa: *i32, pb: *i32, out: *i32, n: i32) {\n"
                       "    let i = arange(0, 2048);\n"
                       "    let a = where(i < n, load(pa + i), 1);\n"
                       "    let b = where(i < n, load(pb + i), 0);\n"
                       "    let (ra, rb) = reduce((a, b), 0, affine);\n"
                       "    store(out + arange(0, 2), join(ra, rb));\n"
                       "    let (sa, sb) = associative_scan((a, b), 0, affine);\n"
                       "    store(out + 2 + i, sa);\n"
                       "    store(out + 2050 + i, sb);\n"
                       "}\n",
             "k");
    int n = 2001;
    static int32_t A[2048], B[2048], got[4098], want[4098];
    for (int i = 0; i < 2048; i++) A[i] = (int32_t)(rnext() >> 32), B[i] = (int32_t)(rnext() >> 32);
    uint64_t da = upload(&k, A, sizeof A), db = upload(&k, B, sizeof B), dout = poisoned(&k, sizeof got);
    void *params[] = {&da, &db, &dout, &n};
    launch(&k, 1, params);
    download(&k, got, dout, sizeof got);
    uint32_t fa = 1, fb = 0;
    for (int i = 0; i < 2048; i++) {
        affine(&fa, &fb, i < n ? (uint32_t)A[i] : 1u, i < n ? (uint32_t)B[i] : 0u);
        want[2 + i] = (int32_t)fa, want[2050 + i] = (int32_t)fb;
    }
    want[0] = (int32_t)fa, want[1] = (int32_t)fb;
    expect_i32(got, want, 4098, "reduce/scan on a vectorized layout");
    unload(&k);
}

/* A combine function with a run-time `if` and a loop: the region holds control flow. */
Test(lang_shape, combine_with_control_flow) {
    seed_rng();
    K k;
    load_src(&k,
             "fn pick(a, b) {\n"
             "    let r = a;\n"
             "    if b > a { r = b; }\n"
             "    for t in range(0, 3) { r = r + 0; }\n"
             "    return r;\n"
             "}\n"
             "@num_warps(2)\n"
             "kernel k(x: *i32, out: *i32, n: i32) {\n"
             "    let i = arange(0, 256);\n"
             "    let v = load(x + i, i < n, -1000);\n"
             "    store(out + i, associative_scan(v, 0, pick));\n"
             "    store(out + 256 + arange(0, 1), reduce(v, 0, pick) + zeros([1], i32));\n"
             "}\n",
             "k");
    int n = 199;
    int32_t x[199], got[257], want[257];
    for (int i = 0; i < n; i++) x[i] = irand(1000000) - 500000;
    uint64_t dx = upload(&k, x, sizeof x), dout = poisoned(&k, sizeof got);
    void *params[] = {&dx, &dout, &n};
    launch(&k, 1, params);
    download(&k, got, dout, sizeof got);
    int32_t m = INT32_MIN;
    for (int i = 0; i < 256; i++) {
        int32_t v = i < n ? x[i] : -1000;
        m = v > m ? v : m;
        want[i] = m;
    }
    want[256] = m;
    expect_i32(got, want, 257, "max through a combine with control flow");
    unload(&k);
}

/* ---- a tile reduced with a broadcast vector: the vector moves, not the tile ----
 * sum(t * w[None, :], axis=1) (a GEMV row dot) on a [64, 1024] f32 tile, and the 3-D broadcast-reduce of
 * [16, 1, 128] x [1, 32, 128] over the last axis: the product took the layout of its broadcast operand, so
 * the whole tile went through shared memory before the reduction (256 KiB: refused at any warp count; Triton
 * compiles both with under 1 KiB).  Now the operand that costs the most to move decides the layout and the
 * vector is converted.  Checked against float64 on masked odd sizes, and the shared memory the TIR reports. */
static const char *gemv_src =
    "@num_warps(4)\n"
    "kernel rowdot(x: *f32, w: *f32, out: *f32, m: i32, n: i32, const BM: i32 = 64, const BN: i32 = 1024) {\n"
    "    let r = program_id(0) * BM + arange(0, BM);\n"
    "    let c = arange(0, BN);\n"
    "    let t = load(x + r[:, None] * n + c[None, :], (r[:, None] < m) && (c[None, :] < n), 0.0);\n"
    "    let v = load(w + c, c < n, 0.0);\n"
    "    store(out + r, sum(t * v[None, :], axis=1), r < m);\n"
    "}\n"
    "@num_warps(4)\n"
    "kernel qk(q: *f32, k: *f32, out: *f32, d: i32) {\n"
    "    let h = arange(0, 16);\n"
    "    let j = arange(0, 32);\n"
    "    let e = arange(0, 128);\n"
    "    let qv = load(q + h[:, None] * d + e[None, :], e[None, :] < d, 0.0);\n"
    "    let kv = load(k + j[:, None] * d + e[None, :], e[None, :] < d, 0.0);\n"
    "    store(out + h[:, None] * 32 + j[None, :], sum(qv[:, None, :] * kv[None, :, :], axis=2));\n"
    "}\n";

static int tir_smem(const char *tir, const char *kernel) {
    char key[64];
    snprintf(key, sizeof key, "kernel @%s(", kernel);
    const char *p = strstr(tir, key);
    cr_assert(p, "no %s in\n%s", key, tir);
    const char *s = strstr(p, "smem=");
    const char *brace = strchr(p, '{');
    return s && (!brace || s < brace) ? atoi(s + 5) : 0;
}

Test(lang_shape, broadcast_vector_reductions_move_the_vector) {
    seed_rng();
    tile_compiled c;
    cr_assert_eq(tile_compile_source("t.tile", gemv_src, &(tile_compile_options){0}, &c), TILE_OK, "%s", c.diagnostics);
    cr_expect_leq(tir_smem(c.tir, "rowdot"), 4096, "%s", c.tir);
    cr_expect_leq(tir_smem(c.tir, "qk"), 8192, "%s", c.tir);
    tile_compiled_free(&c);
    K k;
    load_src(&k, gemv_src, "rowdot");
    enum { M = 100, N = 1000 };
    float *x = malloc(sizeof(float) * M * N), w[N], out[M];
    for (int i = 0; i < M * N; i++) x[i] = (float)urand();
    for (int j = 0; j < N; j++) w[j] = (float)urand();
    uint64_t dx = upload(&k, x, sizeof(float) * M * N), dw = upload(&k, w, sizeof w), dout = poisoned(&k, sizeof out);
    int m = M, n = N;
    launch(&k, 2, (void *[]){&dx, &dw, &dout, &m, &n});
    download(&k, out, dout, sizeof out);
    for (int i = 0; i < M; i++) {
        double want = 0, mag = 0;
        for (int j = 0; j < N; j++) want += (double)x[i * N + j] * w[j], mag += fabs((double)x[i * N + j] * w[j]);
        cr_assert(fabs(out[i] - want) <= 1e-6 * mag + 1e-6, "row %d: %g, want %g (seed %llu)", i, out[i], want, (unsigned long long)seed);
    }
    free(x);
    unload(&k);
    load_src(&k, gemv_src, "qk");
    enum { D = 100 };
    float q[16 * D], kk[32 * D], o[16 * 32];
    for (int i = 0; i < 16 * D; i++) q[i] = (float)urand();
    for (int i = 0; i < 32 * D; i++) kk[i] = (float)urand();
    uint64_t dq = upload(&k, q, sizeof q), dk = upload(&k, kk, sizeof kk), dqk = poisoned(&k, sizeof o);
    int d = D;
    launch(&k, 1, (void *[]){&dq, &dk, &dqk, &d});
    download(&k, o, dqk, sizeof o);
    for (int h = 0; h < 16; h++)
        for (int j = 0; j < 32; j++) {
            double want = 0, mag = 0;
            for (int e = 0; e < D; e++) want += (double)q[h * D + e] * kk[j * D + e], mag += fabs((double)q[h * D + e] * kk[j * D + e]);
            cr_assert(fabs(o[h * 32 + j] - want) <= 1e-6 * mag + 1e-6, "(%d, %d): %g, want %g (seed %llu)", h, j, o[h * 32 + j], want,
                      (unsigned long long)seed);
        }
    unload(&k);
}

/* cumprod of narrow integers multiplies in i32 (u32 unsigned), as sum does and Triton's cumprod: five 3s of
 * an i8 tensor give 243 (they wrapped to -13 in i8; probe U). */
Test(lang_shape, cumprod_widens_narrow_integers) {
    K k;
    load_src(&k,
             "@num_warps(1)\n"
             "kernel k(out: *i32, outu: *u32) {\n"
             "    let o = arange(0, 32);\n"
             "    store(out + o, cumprod(zeros([32], i8) + 3, 0));\n"
             "    store(outu + o, cumprod((zeros([32], u16) + 2) as u16, 0));\n"
             "}\n",
             "k");
    uint64_t dout = poisoned(&k, 4 * 32), doutu = poisoned(&k, 4 * 32);
    launch(&k, 1, (void *[]){&dout, &doutu});
    int32_t v[32];
    uint32_t u[32];
    download(&k, v, dout, sizeof v);
    download(&k, u, doutu, sizeof u);
    int64_t p = 1;
    for (int i = 0; i < 32; i++) {
        p = (int64_t)(int32_t)(uint32_t)(p * 3);
        cr_expect_eq(v[i], (int32_t)p, "i8 cumprod[%d] = %d, want %d", i, v[i], (int32_t)p);
        cr_expect_eq(u[i], (uint32_t)(1ull << (i + 1)), "u16 cumprod[%d] = %u", i, u[i]); /* 2^32 wraps in u32 */
    }
    cr_expect_eq(v[4], 243);
    unload(&k);
}

/* cumsum of a dot's result along either axis, and of its row sums: the scan puts its operand in a
 * blocked layout first, as the tensor-core layouts' threads hold rows r and r + 8 (mma.sync and
 * wgmma), not one contiguous run along M (a scan in place summed each thread's rows apart).  f16
 * operands of small integers, so every sum is exact; rows past m masked. */
Test(lang_shape, cumsum_of_a_dot_result, .timeout = 300) {
    static const struct {
        int M, N, K, warps;
        const char *arch;
    } cases[] = {{16, 16, 16, 1, "sm_80"}, {64, 32, 16, 4, "sm_90a"}, {32, 64, 32, 8, "sm_80"}, {128, 16, 16, 4, "sm_90a"},
                 {16, 32, 16, 2, "sm_90a"}};
    seed_rng();
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int M = cases[c].M, N = cases[c].N, KK = cases[c].K, m = M - 3;
        char src[1400];
        snprintf(src, sizeof src,
                 "@num_warps(%d)\n"
                 "kernel k(pa: *f16, pb: *f16, out: *f32, m: i32) {\n"
                 "    let rm = arange(0, %d);\n"
                 "    let rn = arange(0, %d)[None, :];\n"
                 "    let rk = arange(0, %d);\n"
                 "    let a = load(pa + rm[:, None] * %d + rk[None, :], (rm < m)[:, None], 0.0);\n"
                 "    let d = dot(a, load(pb + rk[:, None] * %d + rn));\n"
                 "    let o = rm[:, None] * %d + rn;\n"
                 "    let ok = (rm < m)[:, None];\n"
                 "    store(out + o, cumsum(d, 0), ok);\n"
                 "    store(out + %d + o, cumsum(d, 1, reverse=true), ok);\n"
                 "    store(out + %d + rm, cumsum(sum(d, 1), 0), rm < m);\n"
                 "}\n",
                 cases[c].warps, M, N, KK, KK, N, N, M * N, 2 * M * N);
        K k;
        load_src_arch(&k, src, "k", cases[c].arch);
        int no = 2 * M * N + M;
        uint16_t *ha = malloc(sizeof(uint16_t) * (size_t)(M * KK + KK * N));
        float *a = malloc(sizeof(float) * (size_t)(M * KK + KK * N + M * N + no + no)), *b = a + M * KK, *d = b + KK * N,
              *want = d + M * N, *got = want + no;
        cr_assert(ha && a);
        for (int i = 0; i < M * KK + KK * N; i++) { /* small integers: exact in f16 and in every sum */
            float v = (float)(irand(9) - 4);
            ha[i] = f32_to_f16(v);
            a[i] = i < M * KK && i / KK >= m ? 0.0f : v; /* masked off: the load gives 0 */
        }
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double s = 0;
                for (int q = 0; q < KK; q++) s += (double)a[i * KK + q] * b[q * N + j];
                d[i * N + j] = (float)s;
            }
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int i = 0; i < m; i++) want[i * N + j] = (float)(s += d[i * N + j]);
        }
        for (int i = 0; i < m; i++) {
            double s = 0;
            for (int j = N - 1; j >= 0; j--) want[M * N + i * N + j] = (float)(s += d[i * N + j]);
        }
        double s = 0;
        for (int i = 0; i < m; i++) {
            double r = 0;
            for (int j = 0; j < N; j++) r += d[i * N + j];
            want[2 * M * N + i] = (float)(s += r);
        }
        uint64_t da = upload(&k, ha, sizeof(uint16_t) * (size_t)(M * KK)), db = upload(&k, ha + M * KK, sizeof(uint16_t) * (size_t)(KK * N)),
                 dout = poisoned(&k, sizeof(float) * (size_t)no);
        void *params[] = {&da, &db, &dout, &m};
        launch(&k, 1, params);
        download(&k, got, dout, sizeof(float) * (size_t)no);
        int bad = 0;
        for (int i = 0; i < no && bad < 8; i++) {
            bool masked = i < 2 * M * N ? (i % (M * N)) / N >= m : i - 2 * M * N >= m;
            bool okv = masked ? isnan(got[i]) : got[i] == want[i];
            if (!okv) {
                cr_expect(0, "%s M=%d N=%d K=%d warps=%d: out[%d] = %g, want %g (seed %llu)", cases[c].arch, M, N, KK, cases[c].warps, i,
                          got[i], masked ? NAN : want[i], (unsigned long long)seed);
                bad++;
            }
        }
        free(ha);
        free(a);
        unload(&k);
    }
}

/* Element-wise built-ins of several operands broadcast them NumPy-style whatever operand is the shorter: a 1-D
 * first operand beside a 2-D one (maximum(a, t), fma(a, col, t), where(mask, t, 0.0), map_elementwise(f, a, t))
 * was refused ("shapes [16] and [16, 64] do not broadcast": the result shape was written over the first operand's
 * before it was read).  A [16, 64] tile beside a 64-vector and a [16, 1] column; 50 of 64 columns live. */
static const char *mixed_rank_src =
    "fn add(x, y) { return x + y; }\n"
    "kernel k(x: *f32, t: *f32, out: *f32, n: i32) {\n"
    "    let i = arange(0, 64);\n"
    "    let r = arange(0, 16);\n"
    "    let m = i < n;\n"
    "    let a = load(x + i, m, 0.0);\n"
    "    let tt = load(t + r[:, None] * 64 + i[None, :]);\n"
    "    let col = r[:, None] as f32;\n"
    "    let o = out + r[:, None] * 64 + i[None, :];\n"
    "    store(o, maximum(a, tt), m);\n"
    "    store(o + 1024, fma(a, col, tt), m);\n"
    "    store(o + 2048, where(m, tt, 0.0));\n"
    "    store(o + 3072, map_elementwise(add, a, tt), m);\n"
    "}\n";

Test(lang_shape, mixed_rank_operands_broadcast) {
    seed_rng();
    K k;
    load_src(&k, mixed_rank_src, "k");
    enum { N = 50 };
    float x[64], t[16 * 64], out[4 * 1024];
    for (int i = 0; i < 64; i++) x[i] = (float)urand();
    for (int i = 0; i < 16 * 64; i++) t[i] = (float)urand();
    uint64_t dx = upload(&k, x, sizeof x), dt = upload(&k, t, sizeof t), d_o = poisoned(&k, sizeof out);
    int n = N;
    launch(&k, 1, (void *[]){&dx, &dt, &d_o, &n});
    download(&k, out, d_o, sizeof out);
    for (int r = 0; r < 16; r++)
        for (int i = 0; i < 64; i++) {
            int at = r * 64 + i;
            float tv = t[at];
            if (i < N) {
                cr_assert_eq(out[at], x[i] > tv ? x[i] : tv, "maximum [%d][%d]", r, i);
                cr_assert_eq(out[1024 + at], fmaf(x[i], (float)r, tv), "fma [%d][%d]", r, i);
                cr_assert_eq(out[3072 + at], x[i] + tv, "map_elementwise [%d][%d]", r, i);
            } else {
                cr_assert(isnan(out[at]) && isnan(out[1024 + at]) && isnan(out[3072 + at]), "[%d][%d] past n was written", r, i);
            }
            cr_assert_eq(out[2048 + at], i < N ? tv : 0.0f, "where [%d][%d]", r, i);
        }
    unload(&k);
}
