/* test_stdlib.c - stdlib files run on the emulator: Philox 4x32-10 against a C
 * implementation of the published algorithm and its known-answer vector, Triton's
 * random interface (randint4x with 64-bit seeds and offsets, rand's uniforms bit for
 * bit, randn's normals), dropout, softmax/logsumexp and the math helpers against float64. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "include/tile/tile.h"
#include "runtime/device.h"

/* Philox 4x32 as published: counter c, key k, `rounds` rounds, in place. */
static void philox4(uint32_t c[4], uint32_t k0, uint32_t k1, int rounds) {
    uint32_t k[2] = {k0, k1};
    for (int r = 0; r < rounds; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c[0], p1 = (uint64_t)0xCD9E8D57u * c[2];
        uint32_t n[4] = {(uint32_t)(p1 >> 32) ^ c[1] ^ k[0], (uint32_t)p1, (uint32_t)(p0 >> 32) ^ c[3] ^ k[1], (uint32_t)p0};
        memcpy(c, n, sizeof n);
        k[0] += 0x9E3779B9u;
        k[1] += 0xBB67AE85u;
    }
}

static uint32_t philox_c(uint32_t seed, uint32_t offset) {
    uint32_t c[4] = {offset, 0, 0, 0};
    philox4(c, seed, 0, 10);
    return c[0];
}

/* Triton's tl.rand of a word: its bits as an i32, negative x as -x - 1, times 4.6566127342e-10 in f32. */
static float uniform_c(uint32_t x) {
    int32_t v = (int32_t)x;
    if (v < 0) v = -(v + 1);
    return (float)v * 4.6566127342e-10f;
}

typedef struct Dev {
    TileDevice *dev;
    TileDevModule *mod;
    TileDevFunction *fn;
    int threads;
} Dev;

static void load(Dev *d, const char *src, const char *name) {
    tile_compile_options o = {0};
    tile_compiled c;
    tile_status st = tile_compile_source("t.tile", src, &o, &c);
    cr_assert_eq(st, TILE_OK, "%s", c.diagnostics);
    char *err = NULL;
    cr_assert_eq(dev_open("emu", NULL, &d->dev, &err), DEV_OK, "%s", err ? err : "");
    cr_assert_eq(dev_module_load_ptx(d->dev, c.ptx, &d->mod), DEV_OK, "%s", dev_last_error(d->dev));
    cr_assert_eq(dev_module_get_function(d->mod, name, &d->fn), DEV_OK, "%s", dev_last_error(d->dev));
    d->threads = 32 * c.kernels[0].num_warps;
    tile_compiled_free(&c);
}

static uint64_t buf(Dev *d, size_t bytes, const void *init) {
    uint64_t p;
    cr_assert_eq(dev_malloc(d->dev, bytes, &p), DEV_OK);
    if (init) cr_assert_eq(dev_memcpy_htod(d->dev, p, init, bytes), DEV_OK);
    else dev_memset_d8(d->dev, p, 0xff, bytes);
    return p;
}

static void run(Dev *d, unsigned grid, void **params) {
    cr_assert_eq(dev_launch(d->fn, grid, 1, 1, (unsigned)d->threads, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(d->dev));
}

static void done(Dev *d) {
    dev_module_unload(d->mod);
    dev_close(d->dev);
}

Test(stdlib, philox_known_answer_and_reference) {
    cr_assert_eq(philox_c(0, 0), 0x6627e8d5u, "C reference disagrees with the published vector");
    Dev d;
    load(&d,
         "import \"random.tile\";\n"
         "kernel k(out: *u32, u: *f32, seed: i32, n: i32) {\n"
         "  let o = program_id(0) * 256 + arange(0, 256);\n"
         "  store(out + o, philox(seed, o), o < n);\n"
         "  store(u + o, rand(seed, o), o < n);\n"
         "}\n",
         "k");
    int n = 700;
    for (int s = 0; s < 3; s++) {
        int seed = s == 0 ? 0 : s == 1 ? 12345 : -7;
        uint64_t out = buf(&d, (size_t)n * 4, NULL), u = buf(&d, (size_t)n * 4, NULL);
        void *params[] = {&out, &u, &seed, &n};
        run(&d, (unsigned)((n + 255) / 256), params);
        uint32_t *h = malloc((size_t)n * 4);
        float *hu = malloc((size_t)n * 4);
        dev_memcpy_dtoh(d.dev, h, out, (size_t)n * 4);
        dev_memcpy_dtoh(d.dev, hu, u, (size_t)n * 4);
        for (int i = 0; i < n; i++) {
            uint32_t want = philox_c((uint32_t)seed, (uint32_t)i);
            cr_assert_eq(h[i], want, "philox(seed %d, offset %d) = %08x, want %08x", seed, i, h[i], want);
            /* seed -7 is sign-extended to 64 bits: key (0xFFFFFFF9, 0xFFFFFFFF), as Triton's */
            uint32_t c[4] = {(uint32_t)i, 0, 0, 0};
            philox4(c, (uint32_t)seed, seed < 0 ? 0xFFFFFFFFu : 0, 10);
            cr_assert_eq(hu[i], uniform_c(c[0]), "rand(seed %d, %d) = %.9g, want %.9g", seed, i, hu[i], uniform_c(c[0]));
            cr_assert(hu[i] >= 0 && hu[i] < 1);
        }
        free(h), free(hu);
    }
    done(&d);
}

/* Triton's tl.philox(seed, c0, c1, c2, c3, n_rounds): four words of four 32-bit counters (scalars broadcast beside
 * tensors, signed ones taken bit for bit), the seed sign-extended into the key's high word; the two-argument form
 * stays the first word of (seed, offset).  The rounds by Triton's keyword n_rounds= and by N_ROUNDS=. */
Test(stdlib, philox_four_counter_form) {
    Dev d;
    load(&d,
         "import \"random.tile\";\n"
         "kernel k(out: *u32, seed: i32) {\n"
         "  let o = arange(0, 128);\n"
         "  let (a, b, c, e) = philox(seed, o, o * 3 - 200, 7, o ^ 5);\n"
         "  let (f, g, h, j) = philox(seed, o, 0, 0, 0, N_ROUNDS=7);\n"
         "  store(out + o * 7, a);\n  store(out + o * 7 + 1, b);\n  store(out + o * 7 + 2, c);\n  store(out + o * 7 + 3, e);\n"
         "  store(out + o * 7 + 4, f);\n  store(out + o * 7 + 5, philox(seed, o));\n"
         "  store(out + o * 7 + 6, randint(seed, o, n_rounds=5));\n"
         "}\n",
         "k");
    for (int seed = -7; seed <= 12345; seed += 12352) {
        uint64_t out = buf(&d, 128 * 7 * 4, NULL);
        void *params[] = {&out, &seed};
        run(&d, 1, params);
        uint32_t h[128 * 7];
        dev_memcpy_dtoh(d.dev, h, out, sizeof h);
        uint32_t khi = seed < 0 ? 0xFFFFFFFFu : 0;
        for (uint32_t i = 0; i < 128; i++) {
            uint32_t c[4] = {i, i * 3 - 200, 7, i ^ 5};
            philox4(c, (uint32_t)seed, khi, 10);
            for (int w = 0; w < 4; w++) cr_assert_eq(h[i * 7 + w], c[w], "seed %d counter %u word %d: %08x, want %08x", seed, i, w, h[i * 7 + w], c[w]);
            uint32_t r[4] = {i, 0, 0, 0};
            philox4(r, (uint32_t)seed, khi, 7);
            cr_assert_eq(h[i * 7 + 4], r[0], "seed %d, 7 rounds, counter %u", seed, i);
            cr_assert_eq(h[i * 7 + 5], philox_c((uint32_t)seed, i), "two-argument form, seed %d offset %u", seed, i);
            uint32_t q[4] = {i, 0, 0, 0}; /* Triton's keyword n_rounds */
            philox4(q, (uint32_t)seed, khi, 5);
            cr_assert_eq(h[i * 7 + 6], q[0], "seed %d, n_rounds=5, counter %u", seed, i);
        }
    }
    done(&d);
}

/* Philox 4x64 (Random123's): 64-bit multipliers and key schedule, the high words of 128-bit products */
static void philox4x64(uint64_t c[4], uint64_t k0, uint64_t k1, int rounds) {
    for (int r = 0; r < rounds; r++) {
        unsigned __int128 pa = (unsigned __int128)c[0] * 0xD2E7470EE14C6C93ull, pb = (unsigned __int128)c[2] * 0xCA5A826395121157ull;
        uint64_t n0 = (uint64_t)(pb >> 64) ^ c[1] ^ k0, n2 = (uint64_t)(pa >> 64) ^ c[3] ^ k1;
        c[1] = (uint64_t)pb, c[3] = (uint64_t)pa, c[0] = n0, c[2] = n2;
        k0 += 0x9E3779B97F4A7C15ull, k1 += 0xBB67AE8584CAA73Bull;
    }
}

/* Triton's philox_impl on u32 words (Philox 4x32) and u64 words (Philox 4x64), and tl.philox with 64-bit counters
 * (4x64, key (seed, 0)); the host's 4x64 first checked on Random123's known answer for a zero counter and key. */
Test(stdlib, philox_impl_and_64_bit_counters) {
    uint64_t kat[4] = {0, 0, 0, 0};
    philox4x64(kat, 0, 0, 10);
    cr_assert(kat[0] == 0x16554d9eca36314cull && kat[1] == 0xdb20fe9d672d0fdcull && kat[2] == 0xd7e772cee186176bull &&
              kat[3] == 0x7e68b68aec7ba23bull, "philox4x64-10 of zeros: %llx", (unsigned long long)kat[0]);
    Dev d;
    load(&d,
         "kernel k(w: *u64, v: *u32, seed: i64, uf: *f32) {\n"
         "  let o = arange(0, 128);\n  let c = (o as u64) * 0x9E3779B97F4A7C15;\n"
         "  let (a, b, e, f) = philox_impl(c, c ^ 77, (o * 3) as u64, 5 + c * 0, seed as u64 + c * 0, (seed as u64) * 3 + c * 0);\n"
         "  store(w + o * 8, a);\n  store(w + o * 8 + 1, b);\n  store(w + o * 8 + 2, e);\n  store(w + o * 8 + 3, f);\n"
         "  let (g, h, i, j) = philox(seed, c as i64, o as i64, 0 as i64, -1 as i64, n_rounds=6);\n"
         "  store(w + o * 8 + 4, g);\n  store(w + o * 8 + 5, h);\n  store(w + o * 8 + 6, i);\n  store(w + o * 8 + 7, j);\n"
         "  store(uf + o, uint_to_uniform_float(g));\n"
         "  let u = o as u32;\n"
         "  let (p, q, r, s) = philox_impl(u, u * 3, u ^ 9, 0 * u, (seed as u32) + 0 * u, 11 + 0 * u, n_rounds=7);\n"
         "  store(v + o * 4, p);\n  store(v + o * 4 + 1, q);\n  store(v + o * 4 + 2, r);\n  store(v + o * 4 + 3, s);\n"
         "}\n",
         "k");
    for (int64_t seed = -5; seed <= 0x123456789ll; seed += 0x12345678Ell) {
        uint64_t w = buf(&d, 128 * 8 * 8, NULL), v = buf(&d, 128 * 4 * 4, NULL), uf = buf(&d, 128 * 4, NULL);
        void *params[] = {&w, &v, &seed, &uf};
        run(&d, 1, params);
        uint64_t hw[128 * 8];
        uint32_t hv[128 * 4];
        float hu[128];
        dev_memcpy_dtoh(d.dev, hw, w, sizeof hw);
        dev_memcpy_dtoh(d.dev, hv, v, sizeof hv);
        dev_memcpy_dtoh(d.dev, hu, uf, sizeof hu);
        for (uint64_t i = 0; i < 128; i++) {
            uint64_t c = i * 0x9E3779B97F4A7C15ull, a[4] = {c, c ^ 77, i * 3, 5}, b[4] = {c, i, 0, ~0ull};
            philox4x64(a, (uint64_t)seed, (uint64_t)seed * 3, 10);
            philox4x64(b, (uint64_t)seed, 0, 6);
            uint32_t q[4] = {(uint32_t)i, (uint32_t)i * 3, (uint32_t)i ^ 9, 0};
            philox4(q, (uint32_t)seed, 11, 7);
            for (int k = 0; k < 4; k++) {
                cr_assert_eq(hw[i * 8 + k], a[k], "philox_impl u64, seed %lld, counter %llu word %d", (long long)seed, (unsigned long long)i, k);
                cr_assert_eq(hw[i * 8 + 4 + k], b[k], "philox 64-bit counters, seed %lld, counter %llu word %d", (long long)seed, (unsigned long long)i, k);
                cr_assert_eq(hv[i * 4 + k], q[k], "philox_impl u32, seed %lld, counter %llu word %d", (long long)seed, (unsigned long long)i, k);
            }
            /* Triton's uint_to_uniform_float of a u64 word: as an i64, negatives as -x - 1, times 1.0842020432385337e-19 */
            uint64_t x = b[0] >> 63 ? ~b[0] : b[0];
            float want = (float)(int64_t)x * (float)1.0842020432385337e-19;
            cr_assert(hu[i] == want && hu[i] >= 0 && hu[i] < 1, "uint_to_uniform_float(%016llx) = %a, want %a", (unsigned long long)b[0],
                      hu[i], want);
        }
    }
    done(&d);
}

/* Triton's interface: randint4x with a 64-bit seed and 64-bit offsets (the high words are the key's and
 * the counter's second), rand4x, randn and randn4x (Box-Muller on the uniforms), fewer rounds. */
Test(stdlib, triton_random_interface) {
    Dev d;
    load(&d,
         "import \"random.tile\";\n"
         "kernel k(w: *u32, u: *f32, nrm: *f32, seed: i64, base: i64) {\n"
         "  let o = base + arange(0, 128) as i64;\n"
         "  let i = arange(0, 128);\n"
         "  let (a, b, c, e) = randint4x(seed, o);\n"
         "  store(w + i * 5, a);\n  store(w + i * 5 + 1, b);\n  store(w + i * 5 + 2, c);\n  store(w + i * 5 + 3, e);\n"
         "  store(w + i * 5 + 4, randint(seed, o, 7));\n"
         "  let (u1, u2, u3, u4) = rand4x(seed, o);\n"
         "  store(u + i * 4, u1);\n  store(u + i * 4 + 1, u2);\n  store(u + i * 4 + 2, u3);\n  store(u + i * 4 + 3, u4);\n"
         "  let (n1, n2, n3, n4) = randn4x(seed, o);\n"
         "  store(nrm + i * 5, n1);\n  store(nrm + i * 5 + 1, n2);\n  store(nrm + i * 5 + 2, n3);\n  store(nrm + i * 5 + 3, n4);\n"
         "  store(nrm + i * 5 + 4, randn(seed, o));\n"
         "}\n",
         "k");
    int64_t seeds[] = {42, 0x123456789abcLL, -5}, bases[] = {0, 0x500000000LL - 64, -64};
    for (int t = 0; t < 3; t++) {
        int64_t seed = seeds[t], base = bases[t];
        uint64_t w = buf(&d, 128 * 5 * 4, NULL), u = buf(&d, 128 * 4 * 4, NULL), nrm = buf(&d, 128 * 5 * 4, NULL);
        void *params[] = {&w, &u, &nrm, &seed, &base};
        run(&d, 1, params);
        uint32_t hw[128 * 5];
        float hu[128 * 4], hn[128 * 5];
        dev_memcpy_dtoh(d.dev, hw, w, sizeof hw);
        dev_memcpy_dtoh(d.dev, hu, u, sizeof hu);
        dev_memcpy_dtoh(d.dev, hn, nrm, sizeof hn);
        for (int i = 0; i < 128; i++) {
            uint64_t off = (uint64_t)(base + i), s = (uint64_t)seed;
            uint32_t c[4] = {(uint32_t)off, (uint32_t)(off >> 32), 0, 0}, c7[4];
            memcpy(c7, c, sizeof c);
            philox4(c, (uint32_t)s, (uint32_t)(s >> 32), 10);
            philox4(c7, (uint32_t)s, (uint32_t)(s >> 32), 7);
            for (int k = 0; k < 4; k++) {
                cr_assert_eq(hw[i * 5 + k], c[k], "seed %lld offset %lld: word %d %08x, want %08x", (long long)seed, (long long)(base + i), k,
                             hw[i * 5 + k], c[k]);
                cr_assert_eq(hu[i * 4 + k], uniform_c(c[k]), "rand4x word %d", k);
                cr_assert(hu[i * 4 + k] >= 0 && hu[i * 4 + k] < 1);
            }
            cr_assert_eq(hw[i * 5 + 4], c7[0], "randint with 7 rounds");
            for (int k = 0; k < 4; k += 2) {
                double u1 = fmax(uniform_c(c[k]), 1e-7), th = 6.283185307179586 * uniform_c(c[k + 1]), r = sqrt(-2 * log(u1));
                double want[2] = {r * cos(th), r * sin(th)};
                for (int j = 0; j < 2; j++) /* the device's log, sqrt, sin and cos are the approximate instructions */
                    cr_assert(fabs(hn[i * 5 + k + j] - want[j]) < 2e-5 * (1 + fabs(want[j])), "randn4x %d: %g, want %g", k + j,
                              hn[i * 5 + k + j], want[j]);
            }
            cr_assert_eq(hn[i * 5 + 4], hn[i * 5], "randn is randn4x's first");
        }
    }
    done(&d);
}

/* dropout(x, p, seed, offsets), as Triton's: x / (1 - p) where rand(seed, offsets) > p, else 0; bit for bit against
 * Philox in C, at p = 0 (everything kept), 0.3, and 1 (nothing kept), on a masked tail. */
Test(stdlib, dropout_against_philox) {
    Dev d;
    load(&d,
         "kernel k(x: *f32, out: *f32, p: f32, seed: i32, n: i32) {\n"
         "    let o = arange(0, 256);\n"
         "    store(out + o, dropout(load(x + o, o < n, 0.0), p, seed, o), o < n);\n"
         "}\n",
         "k");
    const int n = 250;
    float xs[256], got[256];
    srand(777);
    for (int i = 0; i < 256; i++) xs[i] = (float)(rand() % 20001 - 10000) / 1000.0f;
    const float ps[] = {0.0f, 0.3f, 1.0f};
    for (int t = 0; t < 3; t++) {
        float p = ps[t];
        int32_t seed = 1234 + t, nn = n;
        uint64_t x = buf(&d, sizeof xs, xs), out = buf(&d, sizeof got, NULL);
        void *params[] = {&x, &out, &p, &seed, &nn};
        run(&d, 1, params);
        dev_memcpy_dtoh(d.dev, got, out, sizeof got);
        int kept = 0;
        for (int i = 0; i < n; i++) {
            float u = uniform_c(philox_c((uint32_t)seed, (uint32_t)i)), want = u > p ? xs[i] / (1.0f - p) : 0.0f;
            kept += u > p;
            cr_expect(got[i] == want, "p %g seed %d: dropout[%d] = %.9g, want %.9g (x %g, rand %.9g)", p, seed, i, got[i], want,
                      xs[i], u);
        }
        uint32_t tail[6];
        memcpy(tail, got + n, sizeof tail);
        for (int i = 0; i < 6; i++) cr_expect_eq(tail[i], 0xffffffffu, "out[%d] past n was written", n + i);
        if (t == 2) cr_expect_eq(kept, 0, "p = 1 keeps nothing");
        if (t == 1) cr_expect(kept > n / 2 && kept < n * 9 / 10, "p = 0.3 kept %d of %d", kept, n);
    }
    done(&d);
}

Test(stdlib, softmax_logsumexp_and_math) {
    Dev d;
    load(&d,
         "import \"softmax.tile\";\nimport \"math.tile\";\n"
         "kernel k(x: *f32, sm: *f32, lse: *f32, g: *f32, s: *f32, sp: *f32, cd: *i32) {\n"
         "  let r = arange(0, 8);\n  let c = arange(0, 32);\n"
         "  let t = load(x + r[:, None] * 32 + c[None, :]);\n"
         "  store(sm + r[:, None] * 32 + c[None, :], softmax(t, 1));\n"
         "  store(lse + r, logsumexp(t, 1));\n"
         "  let v = load(x + c);\n"
         "  store(g + c, gelu(v));\n  store(s + c, silu(v));\n  store(sp + c, softplus(v));\n"
         "  store(cd + c, cdiv(c + 1, 4));\n"
         "}\n",
         "k");
    float hx[256];
    for (int i = 0; i < 256; i++) hx[i] = (float)(sin(i * 1.7) * 6);
    uint64_t x = buf(&d, sizeof hx, hx), sm = buf(&d, 1024, NULL), lse = buf(&d, 32, NULL), g = buf(&d, 128, NULL),
             s = buf(&d, 128, NULL), sp = buf(&d, 128, NULL), cd = buf(&d, 128, NULL);
    void *params[] = {&x, &sm, &lse, &g, &s, &sp, &cd};
    run(&d, 1, params);
    float hsm[256], hl[8], hg[32], hs[32], hsp[32];
    int32_t hcd[32];
    dev_memcpy_dtoh(d.dev, hsm, sm, sizeof hsm);
    dev_memcpy_dtoh(d.dev, hl, lse, sizeof hl);
    dev_memcpy_dtoh(d.dev, hg, g, sizeof hg);
    dev_memcpy_dtoh(d.dev, hs, s, sizeof hs);
    dev_memcpy_dtoh(d.dev, hsp, sp, sizeof hsp);
    dev_memcpy_dtoh(d.dev, hcd, cd, sizeof hcd);
    for (int r = 0; r < 8; r++) {
        double mx = -INFINITY, sum = 0;
        for (int c = 0; c < 32; c++) mx = fmax(mx, hx[r * 32 + c]);
        for (int c = 0; c < 32; c++) sum += exp(hx[r * 32 + c] - mx);
        cr_assert(fabs(hl[r] - (mx + log(sum))) < 1e-4, "logsumexp row %d: %g vs %g", r, hl[r], mx + log(sum));
        for (int c = 0; c < 32; c++)
            cr_assert(fabs(hsm[r * 32 + c] - exp(hx[r * 32 + c] - mx) / sum) < 1e-5, "softmax[%d][%d]", r, c);
    }
    for (int c = 0; c < 32; c++) {
        double v = hx[c];
        cr_assert(fabs(hg[c] - 0.5 * v * (1 + erf(v / sqrt(2.0)))) < 1e-4 * (1 + fabs(v)), "gelu(%g) = %g", v, hg[c]);
        cr_assert(fabs(hs[c] - v / (1 + exp(-v))) < 1e-4 * (1 + fabs(v)), "silu(%g) = %g", v, hs[c]);
        cr_assert(fabs(hsp[c] - log1p(exp(v))) < 1e-4 * (1 + fabs(v)), "softplus(%g) = %g", v, hsp[c]);
        cr_assert_eq(hcd[c], (c + 1 + 3) / 4, "cdiv(%d, 4)", c + 1);
    }
    done(&d);
}

/* f16 through the stdlib: softmax and logsumexp of a 4096-long row, against float64 (summed in f32 now: a
 * row whose sum passed 65504 overflowed in f16),
 * softplus past 11.09 (where an f16 e^x overflows), silu below -11.09 (where math.tile's f16 sigmoid flushed to
 * 0); results stay f16. */
static uint16_t h_of(float f) {
    _Float16 h = (_Float16)f;
    uint16_t u;
    memcpy(&u, &h, 2);
    return u;
}
static double d_of(uint16_t u) {
    _Float16 h;
    memcpy(&h, &u, 2);
    return (double)h;
}

Test(stdlib, f16_without_overflow) {
    Dev d;
    load(&d,
         "import \"softmax.tile\";\nimport \"math.tile\";\n"
         "@num_warps(4) kernel k(x: *f16, sm: *f16, lse: *f16, v: *f16, sp: *f16, s: *f16) {\n"
         "  let c = arange(0, 4096);\n"
         "  let t = reshape(load(x + c), [1, 4096]);\n"
         "  store(sm + c, reshape(softmax(t, 1), [4096]));\n"
         "  store(lse + arange(0, 1), logsumexp(t, 1));\n"
         "  let r = arange(0, 32);\n"
         "  let a = load(v + r);\n"
         "  store(sp + r, softplus(a));\n  store(s + r, silu(a));\n"
         "}\n",
         "k");
    static uint16_t hx[4096], hv[32];
    for (int i = 0; i < 4096; i++) hx[i] = h_of(3.0f - 0.125f * (float)(i % 7));
    for (int i = 0; i < 32; i++) hv[i] = h_of(-16.0f + (float)i * 1.0f);
    uint64_t x = buf(&d, sizeof hx, hx), sm = buf(&d, sizeof hx, NULL), lse = buf(&d, 2, NULL), v = buf(&d, sizeof hv, hv),
             sp = buf(&d, 64, NULL), s = buf(&d, 64, NULL);
    void *params[] = {&x, &sm, &lse, &v, &sp, &s};
    run(&d, 1, params);
    static uint16_t hsm[4096];
    uint16_t hl, hsp[32], hs[32];
    dev_memcpy_dtoh(d.dev, hsm, sm, sizeof hsm);
    dev_memcpy_dtoh(d.dev, &hl, lse, 2);
    dev_memcpy_dtoh(d.dev, hsp, sp, sizeof hsp);
    dev_memcpy_dtoh(d.dev, hs, s, sizeof hs);
    double sum = 0;
    for (int i = 0; i < 4096; i++) sum += exp(d_of(hx[i]) - 3.0);
    for (int i = 0; i < 4096; i++) {
        double w = exp(d_of(hx[i]) - 3.0) / sum; /* f16 rounding (2^-11 relative) and exp's */
        cr_assert(fabs(d_of(hsm[i]) - w) <= 0x1p-11 * w, "softmax[%d] = %.6g, want %.6g", i, d_of(hsm[i]), w);
    }
    double want = 3 + log(sum);
    cr_assert(fabs(d_of(hl) - want) <= 0.01, "logsumexp = %g, want %g", d_of(hl), want);
    for (int i = 0; i < 32; i++) {
        double a = d_of(hv[i]), spw = a > 0 ? a + log1p(exp(-a)) : log1p(exp(a)), sw = a / (1 + exp(-a));
        cr_assert(isfinite(d_of(hsp[i])) && fabs(d_of(hsp[i]) - spw) <= 2e-3 * fmax(1, fabs(spw)), "softplus(%g) = %g, want %g", a,
                  d_of(hsp[i]), spw);
        /* sigmoid(x) rounds to f16 first: below 2^-14 in steps of 2^-24 (subnormal), then times x */
        cr_assert(fabs(d_of(hs[i]) - sw) <= 2e-3 * fabs(sw) + fabs(a) * 0x1p-25, "silu(%g) = %g, want %g", a, d_of(hs[i]), sw);
    }
    done(&d);
}

/* grid.tile's swizzle2d is Triton's: every program of a 7 x 5 tile grid in groups of 3 rows, against the
 * reference below, and the result is a permutation of the grid. */
static void swizzle_ref(int i, int j, int si, int sj, int sg, int *ni, int *nj) {
    int ij = i * sj + j, gj = sg * sj, off = ij / gj * sg, rows = si - off < sg ? si - off : sg;
    ij %= gj;
    *ni = off + ij % rows, *nj = ij / rows;
}

Test(stdlib, swizzle2d) {
    Dev d;
    load(&d,
         "import \"grid.tile\";\n"
         "kernel k(out: *i32, si: i32, sj: i32, sg: i32) {\n"
         "  let p = arange(0, 64);\n"
         "  let (i, j) = swizzle2d(p / sj, p % sj, si, sj, sg);\n"
         "  store(out + 2 * p, i, p < si * sj);\n"
         "  store(out + 2 * p + 1, j, p < si * sj);\n"
         "}\n",
         "k");
    enum { SI = 7, SJ = 5, SG = 3 };
    uint64_t out = buf(&d, 512, NULL);
    int32_t si = SI, sj = SJ, sg = SG, h[128];
    void *params[] = {&out, &si, &sj, &sg};
    run(&d, 1, params);
    dev_memcpy_dtoh(d.dev, h, out, sizeof h);
    bool seen[SI * SJ] = {0};
    for (int p = 0; p < SI * SJ; p++) {
        int ni, nj;
        swizzle_ref(p / SJ, p % SJ, SI, SJ, SG, &ni, &nj);
        cr_expect(h[2 * p] == ni && h[2 * p + 1] == nj, "swizzle2d(%d, %d) = (%d, %d), want (%d, %d)", p / SJ, p % SJ, h[2 * p],
                  h[2 * p + 1], ni, nj);
        cr_assert(h[2 * p] >= 0 && h[2 * p] < SI && h[2 * p + 1] >= 0 && h[2 * p + 1] < SJ, "out of the grid");
        cr_expect(!seen[h[2 * p] * SJ + h[2 * p + 1]], "(%d, %d) twice", h[2 * p], h[2 * p + 1]);
        seen[h[2 * p] * SJ + h[2 * p + 1]] = true;
    }
    cr_expect_eq(h[2 * SI * SJ], -1, "written past the grid");
    done(&d);
}

/* A call to a standard-library function that nothing defines imports its file (Triton's tl.cdiv is there without an
 * import): the kernel runs.  When that file also defines a name of the user's (a Triton port's own `relu` beside
 * math.tile's), the user's code gets the user's and the library's code its own: `uint_to_uniform_float` of the
 * program's does not change what random.tile's `rand` computes with it.  An unknown name stays unknown. */
Test(stdlib, standard_library_functions_without_an_import) {
    Dev d;
    load(&d, "kernel k(x: *i32, n: i32) {\n    let (i, j) = swizzle2d(1, 2, 4, 4, 2);\n    store(x, cdiv(n, 4) * 100 + j);\n}\n", "k");
    uint64_t x = buf(&d, 4, NULL);
    int n = 10;
    void *params[] = {&x, &n};
    run(&d, 1, params);
    int32_t h;
    dev_memcpy_dtoh(d.dev, &h, x, 4);
    int si, sj;
    swizzle_ref(1, 2, 4, 4, 2, &si, &sj);
    cr_expect_eq(h, 300 + sj, "cdiv(10, 4) * 100 + swizzle2d's j: %d", h);
    done(&d);
    load(&d,
         "fn relu(x) { return x; }\n"
         "fn uint_to_uniform_float(x) { return 7.0; }\n"
         "kernel k(x: *i32, f: *f32, n: i32) {\n"
         "    store(x, cdiv(n, 4) + relu(-3));\n"
         "    let r = arange(0, 64);\n"
         "    store(f + r, rand(n, r));\n"
         "    store(f + 64 + r, uint_to_uniform_float(r));\n"
         "}\n",
         "k");
    uint64_t x2 = buf(&d, 4, NULL), f = buf(&d, 128 * 4, NULL);
    void *params2[] = {&x2, &f, &n};
    run(&d, 1, params2);
    dev_memcpy_dtoh(d.dev, &h, x2, 4);
    cr_expect_eq(h, 0, "cdiv(10, 4) + the program's relu(-3): %d (with math.tile's relu the sum is 3)", h);
    float fv[128];
    dev_memcpy_dtoh(d.dev, fv, f, sizeof fv);
    for (int i = 0; i < 64; i++) {
        cr_expect(fv[i] >= 0.0f && fv[i] < 1.0f, "rand[%d] = %g: random.tile's rand must use its own uint_to_uniform_float", i, fv[i]);
        cr_expect_eq(fv[64 + i], 7.0f, "the program's uint_to_uniform_float[%d] = %g", i, fv[64 + i]);
    }
    done(&d);
    tile_compile_options o = {0};
    tile_compiled c;
    tile_status st = tile_compile_source("t.tile", "kernel k(x: *i32, n: i32) {\n    store(x, no_such_fn(n, 4));\n}\n", &o, &c);
    cr_expect_neq(st, TILE_OK);
    cr_expect(strstr(c.diagnostics, "t.tile:2:14: error: unknown name 'no_such_fn'\n"), "%s", c.diagnostics);
    tile_compiled_free(&c);
}

/* Triton's triton.language.standard._log2 and _is_power_of_two (math.tile, no import): compile-time values that size a
 * static_range and a shape, as an argsort's stage count does; a run-time argument is an error at the call. */
Test(stdlib, triton_standard_log2) {
    Dev d;
    load(&d,
         "kernel k(x: *i32, n: i32) {\n"
         "    let v = arange(0, 64);\n"
         "    let n_dims: constexpr = _log2(shape_of(v, 0));\n"
         "    static_assert(n_dims == 6 && _log2(1) == 0 && _log2(0) == 0 && _log2(1000) == 9 && _log2(1 << 40) == 40);\n"
         "    static_assert(_is_power_of_two(64) && !_is_power_of_two(0) && !_is_power_of_two(96));\n"
         "    let s = zeros([1 << n_dims], i32);\n"
         "    for i in static_range(1, n_dims + 1) { s += i * (v >> (i - 1) & 1); }\n"
         "    store(x + v, s + n);\n"
         "}\n",
         "k");
    uint64_t x = buf(&d, 64 * 4, NULL);
    int n = 1000;
    void *params[] = {&x, &n};
    run(&d, 1, params);
    int32_t h[64];
    dev_memcpy_dtoh(d.dev, h, x, sizeof h);
    for (int v = 0; v < 64; v++) {
        int want = n;
        for (int i = 1; i <= 6; i++) want += i * ((v >> (i - 1)) & 1);
        cr_expect_eq(h[v], want, "x[%d] = %d, want %d", v, h[v], want);
    }
    done(&d);
    tile_compile_options o = {0};
    tile_compiled c;
    cr_expect_eq(tile_compile_source("t.tile", "kernel k(x: *i32, n: i32) {\n    store(x, _log2(n));\n}\n", &o, &c), TILE_ERROR_COMPILE);
    cr_expect(strstr(c.diagnostics, "t.tile:2:20: error: 'i' must be a compile-time constant\n"), "%s", c.diagnostics);
    tile_compiled_free(&c);
}

/* cdiv takes integers, as Triton's: on floats (a + b - 1) / b is no ceiling (cdiv(2.5, 2.0) was 1.75), so a float
 * argument is an error naming the call; integer arguments of any width, run-time or constant, still divide. */
Test(stdlib, cdiv_of_floats_is_an_error) {
    static const char *const bad[] = {
        "kernel k(o: *f32, x: f32) {\n    store(o, cdiv(x, 2.0));\n}\n",
        "kernel k(o: *f32, n: i32) {\n    store(o, cdiv(n, 2.0));\n}\n",
        "kernel k(o: *f32) {\n    store(o, cdiv(2.5, 2));\n}\n",
        "kernel k(o: *f16, x: *f16) {\n    store(o + arange(0, 16), cdiv(load(x + arange(0, 16)), 4));\n}\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tile_compile_options o = {0};
        tile_compiled c;
        cr_expect_eq(tile_compile_source("t.tile", bad[i], &o, &c), TILE_ERROR_COMPILE, "%s compiled", bad[i]);
        cr_expect(strstr(c.diagnostics, "error: static_assert failed\n      static_assert(is_int(x) && is_int(div)); // cdiv takes integers, as in Triton; for floats write ceil(x / div)\n") &&
                      strstr(c.diagnostics, "t.tile:2:"),
                  "%s", c.diagnostics);
        tile_compiled_free(&c);
    }
    Dev d;
    load(&d,
         "kernel k(x: *i64, n: i32, m: i64, u: u32, const B: i32 = 64) {\n"
         "    static_assert(cdiv(100, B) == 2, \"folds\");\n"
         "    store(x, cdiv(n, B) as i64);\n"
         "    store(x + 1, cdiv(m, 1000));\n"
         "    store(x + 2, cdiv(u, 7 as u32) as i64);\n"
         "}\n",
         "k");
    uint64_t x = buf(&d, 3 * 8, NULL);
    int32_t n = 129;
    int64_t m = 5000000001ll;
    uint32_t u = 4000000000u;
    void *params[] = {&x, &n, &m, &u};
    run(&d, 1, params);
    int64_t h[3];
    dev_memcpy_dtoh(d.dev, h, x, sizeof h);
    cr_expect_eq(h[0], 3, "cdiv(129, 64) = %lld", (long long)h[0]);
    cr_expect_eq(h[1], 5000001, "cdiv(5000000001, 1000) = %lld", (long long)h[1]);
    cr_expect_eq(h[2], 571428572, "cdiv(4000000000u, 7) = %lld", (long long)h[2]);
    done(&d);
}

/* A program's fn that shadows a built-in (docs/language.md: "A function may shadow a built-in of the same name")
 * does so in the program's code only: softmax.tile's exp and maximum stay the built-ins.  Before, the library's
 * calls found the program's fns, so softmax here computed (x - max) + 1 normalized, and logsumexp likewise. */
Test(stdlib, program_fn_shadowing_a_builtin_leaves_the_library_alone) {
    Dev d;
    load(&d,
         "fn exp(x) { return x + 1.0; }\n"
         "fn maximum(a, b) { return a; }\n"
         "kernel k(x: *f32, o: *f32, n: i32) {\n"
         "    let c = arange(0, 64);\n"
         "    let t = load(x + c, c < n, -1.0 / 0.0);\n"
         "    store(o + c, softmax(t, 0), c < n);\n"
         "    store(o + 64 + c, exp(t), c < n);\n"
         "    store(o + 128 + c, logsumexp(t, 0) + zeros([64], f32), c < n);\n"
         "}\n",
         "k");
    int n = 45;
    float xs[64], got[192];
    srand(12345);
    for (int i = 0; i < 64; i++) xs[i] = (float)((rand() % 2000) / 250.0 - 4.0);
    uint64_t x = buf(&d, sizeof xs, xs), o = buf(&d, sizeof got, NULL);
    void *params[] = {&x, &o, &n};
    run(&d, 1, params);
    dev_memcpy_dtoh(d.dev, got, o, sizeof got);
    double m = -INFINITY, sum = 0;
    for (int i = 0; i < n; i++) m = fmax(m, xs[i]);
    for (int i = 0; i < n; i++) sum += exp((double)xs[i] - m);
    for (int i = 0; i < n; i++) {
        double want = exp((double)xs[i] - m) / sum;
        cr_expect(fabs(got[i] - want) <= 1e-5 * want + 1e-7, "softmax[%d] = %.9g, want %.9g (the library used the program's exp)",
                  i, got[i], want);
        cr_expect_eq(got[64 + i], xs[i] + 1.0f, "the program's exp[%d] = %g, want %g", i, got[64 + i], xs[i] + 1.0f);
        cr_expect(fabs(got[128 + i] - (m + log(sum))) <= 1e-5 * fabs(m + log(sum)) + 1e-5, "logsumexp = %.9g, want %.9g",
                  got[128 + i], m + log(sum));
    }
    done(&d);
}

/* Triton's tl.softmax(x, dim=None, keep_dims=None, ieee_rounding=False): dim given by keyword (negative too), its
 * default 0 (not the last axis), keep_dims= and ieee_rounding= accepted; and tl.cdiv(x, div=).  The keywords were
 * errors (softmax took axis only, cdiv's parameters were a and b).  A [7, 13] block of a [8, 16] tile (masked to
 * -inf, which softmax gives 0), checked against float64. */
Test(stdlib, softmax_and_cdiv_take_triton_s_keywords) {
    Dev d;
    load(&d,
         "kernel k(x: *f32, o: *f32, n: *i32, nr: i32, nc: i32) {\n"
         "    let r = arange(0, 8)[:, None];\n"
         "    let c = arange(0, 16)[None, :];\n"
         "    let t = load(x + r * 16 + c, (r < nr) && (c < nc), -1.0 / 0.0);\n"
         "    store(o + r * 16 + c, softmax(t, dim=-1, keep_dims=true));\n"
         "    store(o + 128 + r * 16 + c, softmax(t, ieee_rounding=true));\n"
         "    store(o + 256 + r * 16 + c, softmax(t, dim=0));\n"
         "    store(n, cdiv(nc, div=4));\n"
         "    store(n + 1, cdiv(x=nr, div=2));\n"
         "    store(n + 2, cdiv(-9, div=4));\n"
         "}\n",
         "k");
    int nr = 7, nc = 13;
    float xs[128], got[384];
    srand(4242);
    for (int i = 0; i < 128; i++) xs[i] = (float)((rand() % 4000) / 250.0 - 8.0);
    uint64_t x = buf(&d, sizeof xs, xs), o = buf(&d, sizeof got, NULL), n = buf(&d, 3 * sizeof(int32_t), NULL);
    void *params[] = {&x, &o, &n, &nr, &nc};
    run(&d, 1, params);
    dev_memcpy_dtoh(d.dev, got, o, sizeof got);
    int32_t q[3];
    dev_memcpy_dtoh(d.dev, q, n, sizeof q);
    for (int which = 0; which < 3; which++) {
        bool rows = which == 0; /* along dim 1 (-1); else along dim 0 */
        for (int i = 0; i < 8; i++)
            for (int j = 0; j < 16; j++) {
                bool in = i < nr && j < nc;
                double m = -INFINITY, sum = 0;
                for (int k = 0; k < (rows ? nc : nr); k++) m = fmax(m, xs[rows ? i * 16 + k : k * 16 + j]);
                for (int k = 0; k < (rows ? nc : nr); k++) sum += exp((double)xs[rows ? i * 16 + k : k * 16 + j] - m);
                double want = in ? exp((double)xs[i * 16 + j] - m) / sum : 0.0;
                float g = got[which * 128 + i * 16 + j];
                /* a row or column of -inf only is NaN, as in Triton */
                if (!rows && j >= nc) cr_expect(isnan(g), "softmax %d [%d][%d] = %g, want NaN", which, i, j, g);
                else if (rows && i >= nr) cr_expect(isnan(g), "softmax %d [%d][%d] = %g, want NaN", which, i, j, g);
                else cr_expect(fabs(g - want) <= 1e-5 * want + 1e-7, "softmax %d [%d][%d] = %.9g, want %.9g", which, i, j, g, want);
            }
    }
    cr_expect(q[0] == 4 && q[1] == 4 && q[2] == -2, "cdiv(13, div=4) = %d, cdiv(x=7, div=2) = %d, cdiv(-9, div=4) = %d (Python: (-9 + 3) // 4)", q[0], q[1],
              q[2]);
    done(&d);
}

/* A function of the file that a file it imports defines too: the error is at the file's own definition, naming the
 * import.  The standard library's files are the exception: `import "math.tile";` beside the file's own `relu`
 * compiles, and the file's `relu` is the one it calls. */
Test(stdlib, clash_with_an_import_is_reported_at_the_file) {
    char dir[] = "/tmp/tile_clash_XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/helpers.tile", dir);
    FILE *fp = fopen(path, "w");
    cr_assert(fp);
    fputs("fn relu(x) {\n    return x;\n}\n", fp);
    fclose(fp);
    const char *incs[] = {dir, NULL};
    tile_compile_options o = {.include_dirs = incs};
    tile_compiled c;
    tile_status st =
        tile_compile_source("t.tile", "import \"helpers.tile\";\nfn relu(x) {\n    return x;\n}\nkernel k(o: *f32) { store(o, relu(1.0)); }\n", &o, &c);
    cr_expect_neq(st, TILE_OK);
    cr_expect(strstr(c.diagnostics, "t.tile:2:4: error: 'relu' is also defined by the imported ") && strstr(c.diagnostics, "helpers.tile (line "),
              "%s", c.diagnostics);
    tile_compiled_free(&c);
    /* a kernel of the imported function's name: at the kernel, naming the import (it compiled) */
    st = tile_compile_source("t.tile", "import \"helpers.tile\";\nkernel relu(o: *f32) { store(o, 1.0); }\n", &o, &c);
    cr_expect_neq(st, TILE_OK);
    cr_expect(strstr(c.diagnostics, "t.tile:2:8: error: kernel 'relu' has the name of a function of the imported ") &&
                  strstr(c.diagnostics, "helpers.tile (line 1): rename one"),
              "%s", c.diagnostics);
    tile_compiled_free(&c);
    remove(path);
    rmdir(dir);
    st = tile_compile_source("t.tile", "import \"math.tile\";\nfn relu(x) {\n    return x * 2.0;\n}\nkernel k(o: *f32) { store(o, relu(-1.0) + sigmoid(0.0)); }\n",
                             &o, &c);
    cr_expect_eq(st, TILE_OK, "%s", c.diagnostics);
    tile_compiled_free(&c);
}

/* libdevice's bit and integer helpers: float_as_int and int_as_float (and the unsigned and 64-bit forms),
 * mulhi (signed, and unsigned as umulhi), hadd/rhadd without overflow, brev of 32 and 64 bits, normcdf; the
 * names were unknown.  Extremes first, then random words; references in 64-bit host arithmetic. */
Test(stdlib, libdevice_bit_helpers) {
    Dev d;
    load(&d,
         "kernel k(x: *f32, a: *i32, b: *i32, u: *u32, w: *i64, o: *i32, of: *f32, ol: *i64) {\n"
         "    let i = arange(0, 64);\n"
         "    let v = load(x + i); let p = load(a + i); let q = load(b + i); let r = load(u + i); let ww = load(w + i);\n"
         "    store(o + i, float_as_int(v)); store(of + i, int_as_float(p));\n"
         "    store(o + 64 + i, mulhi(p, q)); store(o + 128 + i, mulhi(r, r + 7) as i32);\n"
         "    store(o + 192 + i, hadd(p, q)); store(o + 256 + i, rhadd(p, q));\n"
         "    store(o + 320 + i, brev(p)); store(ol + i, brev(ww));\n"
         "    store(ol + 64 + i, double_as_longlong(longlong_as_double(ww)));\n"
         "    store(of + 64 + i, normcdf(v) + uint_as_float(float_as_uint(v)) - v);\n"
         "}\n",
         "k");
    float hx[64], hof[128];
    int32_t ha[64], hb[64], ho[384];
    uint32_t hu[64];
    int64_t hw[64], hol[128];
    srand(99);
    for (int i = 0; i < 64; i++) {
        hx[i] = (float)((rand() % 8000) - 4000) / 1000.0f;
        ha[i] = (int32_t)((uint32_t)rand() * 2654435761u), hb[i] = (int32_t)((uint32_t)rand() * 40503u + (uint32_t)rand());
        hu[i] = (uint32_t)rand() * 2246822519u, hw[i] = (int64_t)(((uint64_t)(uint32_t)rand() << 33) ^ (uint64_t)rand() * 0x9E3779B97F4A7C15ull);
    }
    ha[0] = hb[0] = INT32_MAX, ha[1] = hb[1] = INT32_MIN, ha[2] = INT32_MIN, hb[2] = INT32_MAX, hu[0] = UINT32_MAX, hw[0] = INT64_MIN, hw[1] = -1;
    uint64_t x = buf(&d, sizeof hx, hx), a = buf(&d, sizeof ha, ha), b = buf(&d, sizeof hb, hb), u = buf(&d, sizeof hu, hu),
             w = buf(&d, sizeof hw, hw), o = buf(&d, sizeof ho, NULL), of = buf(&d, sizeof hof, NULL), ol = buf(&d, sizeof hol, NULL);
    void *params[] = {&x, &a, &b, &u, &w, &o, &of, &ol};
    run(&d, 1, params);
    dev_memcpy_dtoh(d.dev, ho, o, sizeof ho);
    dev_memcpy_dtoh(d.dev, hof, of, sizeof hof);
    dev_memcpy_dtoh(d.dev, hol, ol, sizeof hol);
    for (int i = 0; i < 64; i++) {
        int32_t xi;
        memcpy(&xi, &hx[i], 4);
        cr_expect(ho[i] == xi && !memcmp(&hof[i], &ha[i], 4), "float_as_int(%g) = %#x, int_as_float(%#x) bits differ", hx[i], ho[i], ha[i]);
        int64_t prod = (int64_t)ha[i] * hb[i];
        cr_expect_eq(ho[64 + i], (int32_t)(prod >> 32), "mulhi(%d, %d) = %d", ha[i], hb[i], ho[64 + i]);
        uint32_t u7 = hu[i] + 7;
        cr_expect_eq((uint32_t)ho[128 + i], (uint32_t)(((uint64_t)hu[i] * u7) >> 32), "mulhi(%u, %u) = %u", hu[i], u7, (uint32_t)ho[128 + i]);
        int64_t sum = (int64_t)ha[i] + hb[i];
        cr_expect(ho[192 + i] == (int32_t)(sum >> 1) && ho[256 + i] == (int32_t)((sum + 1) >> 1), "hadd/rhadd(%d, %d) = %d, %d", ha[i],
                  hb[i], ho[192 + i], ho[256 + i]);
        uint32_t rb = 0, xa = (uint32_t)ha[i];
        for (int k = 0; k < 32; k++) rb |= ((xa >> k) & 1u) << (31 - k);
        uint64_t rbl = 0, xw = (uint64_t)hw[i];
        for (int k = 0; k < 64; k++) rbl |= ((xw >> k) & 1u) << (63 - k);
        cr_expect(ho[320 + i] == (int32_t)rb && hol[i] == (int64_t)rbl, "brev(%#x) = %#x, brevll(%llx) = %llx", xa, ho[320 + i],
                  (unsigned long long)xw, (unsigned long long)hol[i]);
        cr_expect_eq(hol[64 + i], hw[i], "double_as_longlong(longlong_as_double(%lld))", (long long)hw[i]);
        double want = 0.5 * erfc(-(double)hx[i] / sqrt(2.0));
        cr_expect(fabs(hof[64 + i] - want) <= 4e-6 * want + 1e-6, "normcdf(%g) = %.9g, want %.9g", hx[i], hof[64 + i], want);
    }
    done(&d);
}

/* libdevice.tile (Triton's libdevice names), found without an import: each function on special and random
 * inputs (NaN, infinities, signed zeros, halves for the roundings) against C's. */
Test(stdlib, libdevice_names) {
    Dev d;
    load(&d,
         "kernel k(x: *f32, y: *f32, o: *f32, l: *i64, b: *i32, ib: *i32, iw: *i64, n: i32) {\n"
         "  let i = arange(0, 128);\n  let m = i < n;\n"
         "  let v = load(x + i, m, 0.0);\n  let w = load(y + i, m, 0.0);\n"
         "  store(o + 0 + i, fast_expf(v), m);\n"
         "  store(o + 128 + i, fast_exp10f(v), m);\n"
         "  store(o + 256 + i, fast_logf(abs(v)), m);\n"
         "  store(o + 384 + i, fast_log2f(abs(v)), m);\n"
         "  store(o + 512 + i, fast_log10f(abs(v)), m);\n"
         "  store(o + 640 + i, fast_powf(abs(v), w), m);\n"
         "  store(o + 768 + i, fast_sinf(v), m);\n"
         "  store(o + 896 + i, fast_cosf(v), m);\n"
         "  store(o + 1024 + i, fast_tanf(v), m);\n"
         "  store(o + 1152 + i, fast_dividef(v, w), m);\n"
         "  store(o + 1280 + i, nearbyint(v), m);\n"
         "  store(o + 1408 + i, saturatef(v), m);\n"
         "  store(o + 1536 + i, fmax(v, w), m);\n"
         "  store(o + 1664 + i, fmin(v, w), m);\n"
         "  store(o + 1792 + i, fdim(v, w), m);\n"
         "  store(o + 1920 + i, rcbrt(v), m);\n"
         "  store(l + i, llrint(v), m);\n  store(l + 128 + i, llround(v), m);\n"
         "  store(b + i, (isfinite(v) as i32) + 2 * (isfinited(v) as i32) + 4 * (isinfd(v) as i32) + 8 * (isnand(v) as i32) + 16 * (signbitd(v) as i32), m);\n"
         "  let ii = load(ib + i, m, 0);\n  store(b + 128 + i, ffs(ii), m);\n"
         "  let jj = load(iw + i, m, 0);\n  store(b + 256 + i, ffsll(jj), m);\n"
         "}\n",
         "k");
    enum { N = 128 };
    float hx[N], hy[N];
    int32_t hi[N];
    int64_t hw[N];
    const float sp[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 1.0f, 3e9f, -3e9f, 0.25f, 7.0f};
    srand(7);
    for (int i = 0; i < N; i++) {
        hx[i] = i < 16 ? sp[i] : (float)((rand() % 20000) - 10000) / 997.0f;
        hy[i] = i < 16 ? sp[(i * 5 + 3) % 16] : i % 7 == 0 ? NAN : (float)((rand() % 20000) - 10000) / 1231.0f;
        hi[i] = i < 4 ? (int32_t[]){0, 1, INT32_MIN, -1}[i] : (int32_t)((unsigned)rand() << (i % 31));
        hw[i] = i < 4 ? (int64_t[]){0, 1, INT64_MIN, -1}[i] : (int64_t)((uint64_t)(unsigned)rand() << (i % 63));
    }
    int n = N;
    uint64_t x = buf(&d, sizeof hx, hx), y = buf(&d, sizeof hy, hy), o = buf(&d, 16 * N * 4, NULL), l = buf(&d, 2 * N * 8, NULL),
             b = buf(&d, 3 * N * 4, NULL), ib = buf(&d, sizeof hi, hi), iw = buf(&d, sizeof hw, hw);
    void *params[] = {&x, &y, &o, &l, &b, &ib, &iw, &n};
    run(&d, 1, params);
    static float ho[16 * N];
    int64_t hl[2 * N];
    int32_t hb[3 * N];
    dev_memcpy_dtoh(d.dev, ho, o, sizeof ho);
    dev_memcpy_dtoh(d.dev, hl, l, sizeof hl);
    dev_memcpy_dtoh(d.dev, hb, b, sizeof hb);
    for (int i = 0; i < N; i++) {
        double v = hx[i], w = hy[i];
        double want[16] = {exp(v), pow(10, v), log(fabs(v)), log2(fabs(v)), log10(fabs(v)), exp2(w * log2(fabs(v))), sin(v), cos(v),
                           tan(v), v / w, nearbyint(v), isnan(v) ? 0 : fmin(fmax(v, 0), 1), fmax(v, w), fmin(v, w), fdim(v, w),
                           1 / cbrt(v)};
        /* exact: the roundings, saturatef, fmax/fmin, fdim (NaN as NaN, zeros by sign); approximate: the fast forms */
        for (int j = 0; j < 16; j++) want[j] = (float)want[j]; /* the f32 result: x - y, x / y rounded once */
        static const double rel[16] = {1e-5, 1e-5, 1e-5, 1e-5, 1e-5, 1e-4, 1e-5, 1e-5, 1e-4, 1e-6, 0, 0, 0, 0, 0, 2e-7};
        for (int j = 0; j < 16; j++) {
            double got = ho[j * N + i], tol = rel[j] * fabs(want[j]) + (j >= 6 && j <= 8 ? 1e-6 : 0);
            if ((j == 6 || j == 7 || j == 8) && fabs(v) > 1e3) continue; /* the fast trigonometric forms: within 2^-21.4 of one period */
            if (isnan(want[j]) || isnan(got)) {
                cr_expect(isnan(want[j]) && isnan(got), "f[%d](%g, %g) = %g, want %g", j, v, w, got, want[j]);
                continue;
            }
            if (isinf(want[j]) || tol == 0) {
                cr_expect(got == want[j] && signbit(got) == signbit(want[j]), "f[%d](%g, %g) = %g, want %g", j, v, w, got, want[j]);
                continue;
            }
            cr_expect(fabs(got - want[j]) <= tol, "f[%d](%g, %g) = %.9g, want %.9g", j, v, w, got, want[j]);
        }
        if (isfinite(v) && fabs(v) < 9e18) {
            cr_expect_eq(hl[i], llrint(v), "llrint(%g) = %lld", v, (long long)hl[i]);
            cr_expect_eq(hl[N + i], llround(v), "llround(%g) = %lld", v, (long long)hl[N + i]);
        } else { /* as `as i64` converts (docs/language.md): saturated, NaN 0 */
            int64_t sat = isnan(v) ? 0 : v > 0 ? INT64_MAX : INT64_MIN;
            cr_expect(hl[i] == sat && hl[N + i] == sat, "llrint/llround(%g) = %lld, %lld, want %lld", v, (long long)hl[i],
                      (long long)hl[N + i], (long long)sat);
        }
        int bits = !!isfinite(v) + 2 * !!isfinite(v) + 4 * !!isinf(v) + 8 * !!isnan(v) + 16 * !!signbit(v);
        cr_expect_eq(hb[i], bits, "class bits of %g: %d, want %d", v, hb[i], bits);
        cr_expect_eq(hb[N + i], __builtin_ffs(hi[i]), "ffs(%d) = %d", hi[i], hb[N + i]);
        cr_expect_eq(hb[2 * N + i], __builtin_ffsll(hw[i]), "ffsll(%lld) = %d", (long long)hw[i], hb[2 * N + i]);
    }
    done(&d);
}

/* cuda.tile: Triton's tl.extra.cuda globaltimer(), smid() and num_threads(), found without an import: the two timer
 * reads are both kept (is_pure=false) and ordered, smid is a multiprocessor of the device, num_threads the block. */
Test(stdlib, cuda_special_registers) {
    static const char *src = "kernel k(o: *i64, s: *i32, x: *f32, n: i32) {\n"
                             "  let t0 = globaltimer();\n"
                             "  let acc = 0.0;\n"
                             "  for i in range(0, n) { acc += load(x + i); }\n"
                             "  let t1 = globaltimer();\n"
                             "  let p = program_id(0);\n"
                             "  store(o + 2 * p, t1 - t0);\n  store(o + 2 * p + 1, t0);\n"
                             "  store(s + 3 * p, smid());\n  store(s + 3 * p + 1, num_threads());\n  store(s + 3 * p + 2, acc as i32);\n"
                             "}\n";
    tile_compile_options opt = {0};
    tile_compiled c;
    cr_assert_eq(tile_compile_source("t.tile", src, &opt, &c), TILE_OK, "%s", c.diagnostics);
    int reads = 0;
    for (const char *p = c.ptx; (p = strstr(p, "%globaltimer")); p++) reads++;
    cr_expect_eq(reads, 2, "the two timer reads, not merged:\n%s", c.ptx);
    tile_compiled_free(&c);
    Dev d;
    load(&d, src, "k");
    float hx[64];
    for (int i = 0; i < 64; i++) hx[i] = 1.0f;
    int n = 64;
    uint64_t o = buf(&d, 3 * 2 * 8, NULL), s = buf(&d, 3 * 3 * 4, NULL), x = buf(&d, sizeof hx, hx);
    run(&d, 3, (void *[]){&o, &s, &x, &n});
    int64_t ho[6];
    int32_t hs[9];
    cr_assert_eq(dev_memcpy_dtoh(d.dev, ho, o, sizeof ho), DEV_OK);
    cr_assert_eq(dev_memcpy_dtoh(d.dev, hs, s, sizeof hs), DEV_OK);
    for (int p = 0; p < 3; p++) {
        cr_expect(ho[2 * p] >= 0 && ho[2 * p + 1] > 0, "program %d: timer %lld, elapsed %lld", p, (long long)ho[2 * p + 1], (long long)ho[2 * p]);
        cr_expect(hs[3 * p] >= 0 && hs[3 * p] < 132, "program %d: smid %d", p, hs[3 * p]);
        cr_expect_eq(hs[3 * p + 1], d.threads, "program %d: num_threads %d", p, hs[3 * p + 1]);
        cr_expect_eq(hs[3 * p + 2], 64, "program %d: the loop's sum %d", p, hs[3 * p + 2]);
    }
    done(&d);
}
