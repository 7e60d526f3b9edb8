/* test_f8.c - f8e4m3 / f8e5m2 conversions (software, the same on every target) on the
 * emulator, against an independent reference: every code decoded, and encoding as
 * "the nearest finite code, ties to the even code, saturating, NaN to NaN". */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/tile/tile.h"
#include "runtime/device.h"

/* value of every code: E4M3FN (bias 7, no inf, 0x7f/0xff NaN) and E5M2 (IEEE-like, bias 15) */
static double decode(int code, bool e4m3) {
    int s = code >> 7, mb = e4m3 ? 3 : 2, eb = e4m3 ? 4 : 5, bias = e4m3 ? 7 : 15;
    int e = (code >> mb) & ((1 << eb) - 1), m = code & ((1 << mb) - 1);
    double v;
    if (e4m3 && e == 15 && m == 7) return NAN;
    if (!e4m3 && e == 31) return m ? NAN : (s ? -INFINITY : INFINITY);
    if (e == 0) v = ldexp(m, 1 - bias - mb);
    else v = ldexp((1 << mb) + m, e - bias - mb);
    return s ? -v : v;
}

static int encode(double x, bool e4m3) {
    if (isnan(x)) return 0x7f;
    int sign = signbit(x) ? 0x80 : 0;
    double a = fabs(x);
    int maxcode = e4m3 ? 0x7e : 0x7b;
    if (a >= decode(maxcode, e4m3)) return sign | maxcode; /* saturating (.satfinite) */
    int best = -1;
    double bd = INFINITY;
    for (int c = 0; c < 128; c++) {
        double v = decode(c, e4m3);
        if (isnan(v) || isinf(v)) continue;
        double d = fabs(a - v);
        if (d < bd || (d == bd && (c & 1) == 0)) bd = d, best = c;
    }
    return sign | best;
}

/* The kernel `name` of ptx, loaded on `device`. */
static TileDevFunction *load_kernel(const char *device, const char *ptx, const char *name, TileDevice **dev, TileDevModule **mod) {
    char *err = NULL;
    cr_assert_eq(dev_open(device, NULL, dev, &err), DEV_OK, "%s", err ? err : "");
    TileDevFunction *fn;
    cr_assert_eq(dev_module_load_ptx(*dev, ptx, mod), DEV_OK, "%s", dev_last_error(*dev));
    cr_assert_eq(dev_module_get_function(*mod, name, &fn), DEV_OK);
    return fn;
}

/* The conversions on `device`, compiled for `arch`: software on sm_80, cvt with e4m3x2/e5m2x2
 * pairs from sm_89 (run by the emulator as the hardware defines them). */
static void conversions(const char *arch, const char *device) {
    const char *src = "kernel cvt(x: *f32, a: *f8e4m3, b: *f8e5m2, ra: *f32, rb: *f32, n: i32) {\n"
                      "  let o = program_id(0) * 256 + arange(0, 256);\n  let m = o < n;\n"
                      "  let v = load(x + o, m, 0.0);\n"
                      "  store(a + o, v as f8e4m3, m);\n  store(b + o, v as f8e5m2, m);\n"
                      "  store(ra + o, load(a + o, m) as f32, m);\n  store(rb + o, load(b + o, m) as f32, m);\n}\n";
    tile_compile_options o = {.arch = arch};
    tile_compiled c;
    cr_assert_eq(tile_compile_source("f8.tile", src, &o, &c), TILE_OK, "%s", c.diagnostics);
    bool hw = strcmp(arch, "sm_80") != 0;
    cr_assert(!hw == !strstr(c.ptx, "cvt.rn.satfinite.e4m3x2.f32"), "%s: hardware f8 conversion %s", arch, hw ? "missing" : "on sm_80");
    cr_assert(!hw == !strstr(c.ptx, "cvt.rn.f16x2.e5m2x2"), "%s: hardware f8 widening %s", arch, hw ? "missing" : "on sm_80");
    TileDevice *dev;
    TileDevModule *mod;
    TileDevFunction *fn = load_kernel(device, c.ptx, "cvt", &dev, &mod);
    /* inputs: every code's value, midpoints between neighbours (ties), just off them,
     * beyond the largest finite, infinities, NaN, zeros, and random values */
    enum { N = 4096 };
    static float x[N];
    int n = 0;
    for (int f = 0; f < 2; f++)
        for (int cd = 0; cd < 256; cd++) {
            double v = decode(cd, f == 0), w = decode(cd + 1 < 256 ? cd + 1 : cd, f == 0);
            if (isnan(v)) continue;
            x[n++] = (float)v;
            if (!isnan(w) && !isinf(w) && !isinf(v) && (cd & 0x7f) != 0x7f) {
                x[n++] = (float)((v + w) / 2);
                x[n++] = (float)nextafter((v + w) / 2, INFINITY);
                x[n++] = (float)nextafter((v + w) / 2, -INFINITY);
            }
        }
    float specials[] = {0.0f, -0.0f, 500.0f, -1e6f, 60000.0f, 1e30f, INFINITY, -INFINITY, NAN, 1e-10f, -3e-3f, 0.0009765625f};
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++) x[n++] = specials[i];
    uint64_t r = 88172645463325252ull;
    while (n < N) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        x[n++] = (float)(((double)(r >> 11) / 9007199254740992.0 - 0.5) * ldexp(1, (int)(r % 40) - 20));
    }
    uint64_t dx, da, db, dra, drb;
    dev_malloc(dev, sizeof x, &dx);
    dev_malloc(dev, N, &da);
    dev_malloc(dev, N, &db);
    dev_malloc(dev, sizeof x, &dra);
    dev_malloc(dev, sizeof x, &drb);
    dev_memcpy_htod(dev, dx, x, sizeof x);
    int nn = N;
    void *params[] = {&dx, &da, &db, &dra, &drb, &nn};
    cr_assert_eq(dev_launch(fn, N / 256, 1, 1, 128, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(dev));
    static uint8_t ha[N], hb[N];
    static float hra[N], hrb[N];
    dev_memcpy_dtoh(dev, ha, da, N);
    dev_memcpy_dtoh(dev, hb, db, N);
    dev_memcpy_dtoh(dev, hra, dra, sizeof hra);
    dev_memcpy_dtoh(dev, hrb, drb, sizeof hrb);
    for (int i = 0; i < N; i++) {
        int wa = encode(x[i], true), wb = encode(x[i], false);
        cr_assert_eq(ha[i], wa, "f8e4m3(%a) = 0x%02x, want 0x%02x", x[i], ha[i], wa);
        cr_assert_eq(hb[i], wb, "f8e5m2(%a) = 0x%02x, want 0x%02x", x[i], hb[i], wb);
        double va = decode(ha[i], true), vb = decode(hb[i], false);
        cr_assert(isnan(va) ? isnan(hra[i]) : hra[i] == (float)va, "e4m3 0x%02x -> %a, want %a", ha[i], hra[i], va);
        cr_assert(isnan(vb) ? isnan(hrb[i]) : hrb[i] == (float)vb, "e5m2 0x%02x -> %a, want %a", hb[i], hrb[i], vb);
    }
    dev_module_unload(mod);
    dev_close(dev);
    tile_compiled_free(&c);
}

Test(f8, conversions_match_reference) { conversions("sm_80", "emu"); }
Test(f8, conversions_match_reference_sm89) { conversions("sm_89", "emu:sm_89"); }
Test(f8, conversions_match_reference_sm90a) { conversions("sm_90a", "emu:sm_90a"); }

/* Every code of both formats decoded to f32, f16, bf16 and i32: a tensor (two registers a thread:
 * the pair conversions; sm_80's software pair puts the code's magnitude in an f16 scaled by 2^-8) and
 * a lone scalar a program (the single conversion), both signs of NaN and zero included. */
static void decode_every_code(const char *arch, const char *device) {
    const char *src = "kernel dec(a: *f8e4m3, b: *f8e5m2, f: *f32, h: *f16, g: *bf16, q: *i32, s: *f32) {\n"
                      "  let o = arange(0, 256);\n"
                      "  let x = load(a + o);\n  let y = load(b + o);\n"
                      "  store(f + o, x as f32);\n  store(f + 256 + o, y as f32);\n"
                      "  store(h + o, x as f16);\n  store(h + 256 + o, y as f16);\n"
                      "  store(g + o, x as bf16);\n  store(g + 256 + o, y as bf16);\n"
                      "  store(q + o, x as i32);\n  store(q + 256 + o, y as i32);\n"
                      "  let p = program_id(0);\n"
                      "  store(s + p, load(a + p) as f32);\n  store(s + 256 + p, load(b + p) as f32);\n}\n";
    tile_compile_options o = {.arch = arch};
    tile_compiled c;
    cr_assert_eq(tile_compile_source("f8dec.tile", src, &o, &c), TILE_OK, "%s", c.diagnostics);
    TileDevice *dev;
    TileDevModule *mod;
    TileDevFunction *fn = load_kernel(device, c.ptx, "dec", &dev, &mod);
    uint8_t codes[256];
    for (int i = 0; i < 256; i++) codes[i] = (uint8_t)i;
    uint64_t da, db, df, dh, dg, dq, ds;
    dev_malloc(dev, 256, &da);
    dev_malloc(dev, 256, &db);
    dev_malloc(dev, 512 * 4, &df);
    dev_malloc(dev, 512 * 2, &dh);
    dev_malloc(dev, 512 * 2, &dg);
    dev_malloc(dev, 512 * 4, &dq);
    dev_malloc(dev, 512 * 4, &ds);
    dev_memcpy_htod(dev, da, codes, 256);
    dev_memcpy_htod(dev, db, codes, 256);
    static uint8_t poison[512 * 4];
    memset(poison, 0xa5, sizeof poison);
    uint64_t outs[] = {df, dh, dg, dq, ds};
    size_t sizes[] = {2048, 1024, 1024, 2048, 2048};
    for (int i = 0; i < 5; i++) dev_memcpy_htod(dev, outs[i], poison, sizes[i]);
    void *params[] = {&da, &db, &df, &dh, &dg, &dq, &ds};
    cr_assert_eq(dev_launch(fn, 256, 1, 1, 128, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(dev));
    float hf[512], hs[512];
    uint16_t hh[512], hg[512];
    int32_t hq[512];
    dev_memcpy_dtoh(dev, hf, df, sizeof hf);
    dev_memcpy_dtoh(dev, hh, dh, sizeof hh);
    dev_memcpy_dtoh(dev, hg, dg, sizeof hg);
    dev_memcpy_dtoh(dev, hq, dq, sizeof hq);
    dev_memcpy_dtoh(dev, hs, ds, sizeof hs);
    for (int i = 0; i < 512; i++) {
        int code = i & 255;
        bool e4 = i < 256;
        double v = decode(code, e4);
        const char *fmt = e4 ? "e4m3" : "e5m2";
        /* f16 and bf16 results read back through their bits: every f8 value is exact in both */
        uint32_t gb = (uint32_t)hg[i] << 16;
        float gv;
        memcpy(&gv, &gb, 4);
        int hexp = (hh[i] >> 10) & 31, hman = hh[i] & 1023;
        double hv = hexp == 31 ? (hman ? NAN : INFINITY) : hexp ? ldexp(1024 + hman, hexp - 25) : ldexp(hman, -24);
        if (hh[i] & 0x8000) hv = -hv;
        if (isnan(v)) {
            cr_assert(isnan(hf[i]) && isnan(hs[i]) && isnan(hv) && isnan(gv), "%s 0x%02x: NaN as %a %a 0x%04x 0x%04x", fmt, code, hf[i],
                      hs[i], hh[i], hg[i]);
            continue;
        }
        cr_assert(hf[i] == (float)v && !signbit(hf[i]) == !signbit(v), "%s 0x%02x as f32 = %a, want %a", fmt, code, hf[i], v);
        cr_assert(hs[i] == (float)v && !signbit(hs[i]) == !signbit(v), "%s 0x%02x alone as f32 = %a, want %a", fmt, code, hs[i], v);
        cr_assert(hv == v && !signbit(hv) == !signbit(v), "%s 0x%02x as f16 = 0x%04x, want %a", fmt, code, hh[i], v);
        cr_assert(gv == (float)v && !signbit(gv) == !signbit(v), "%s 0x%02x as bf16 = 0x%04x, want %a", fmt, code, hg[i], v);
        if (!isinf(v)) cr_assert_eq(hq[i], (int32_t)trunc(v), "%s 0x%02x as i32 = %d, want %.0f", fmt, code, hq[i], trunc(v));
    }
    dev_module_unload(mod);
    dev_close(dev);
    tile_compiled_free(&c);
}

Test(f8, every_code_decoded) { decode_every_code("sm_80", "emu"); }
Test(f8, every_code_decoded_sm89) { decode_every_code("sm_89", "emu:sm_89"); }
Test(f8, every_code_decoded_sm90a) { decode_every_code("sm_90a", "emu:sm_90a"); }

/* dot on f8 operands, e4m3 A times e5m2 B (and the other way round), against float64 at sizes that
 * are no multiples of the tile, the output poisoned first: sm_80 widens both to f16 (exact) for
 * mma.sync m16n8k16; sm_89 feeds the bytes to mma.sync m16n8k32 .e4m3.e5m2; sm_90a to wgmma k32.
 * b_nk: B given as [N][K] (K contiguous, what both f8 tensor-core forms read) instead of [K][N]. */
typedef struct DotTile { int bm, bn, bk, warps; } DotTile;

static void f8_dot_tile(const char *arch, const char *device, bool a_e5, bool b_nk, const char *want, const char *not_want,
                        DotTile t) {
    char src[2048];
    snprintf(src, sizeof src,
             "@num_warps(%d)\n@num_stages(2)\n"
             "kernel mm(a: *%s, b: *%s, c: *f32, m: i32, n: i32, k: i32) {\n"
             "  let rm = program_id(0) * %d + arange(0, %d);\n  let rn = program_id(1) * %d + arange(0, %d);\n"
             "  let rk = arange(0, %d);\n  let acc = zeros([%d, %d], f32);\n"
             "  for k0 in range(0, k, %d) {\n    let ka = k0 + rk;\n"
             "    let ta = load(a + rm[:, None] * k + ka[None, :], (rm[:, None] < m) && (ka[None, :] < k), 0.0);\n"
             "    let tb = %s;\n    acc = dot(ta, tb, acc);\n  }\n"
             "  store(c + rm[:, None] * n + rn[None, :], acc, (rm[:, None] < m) && (rn[None, :] < n));\n}\n",
             t.warps, a_e5 ? "f8e5m2" : "f8e4m3", a_e5 ? "f8e4m3" : "f8e5m2", t.bm, t.bm, t.bn, t.bn, t.bk, t.bm, t.bn, t.bk,
             b_nk ? "trans(load(b + rn[:, None] * k + ka[None, :], (rn[:, None] < n) && (ka[None, :] < k), 0.0))"
                  : "load(b + ka[:, None] * n + rn[None, :], (ka[:, None] < k) && (rn[None, :] < n), 0.0)");
    tile_compile_options o = {.arch = arch};
    tile_compiled c;
    cr_assert_eq(tile_compile_source("f8dot.tile", src, &o, &c), TILE_OK, "%s", c.diagnostics);
    cr_assert(strstr(c.ptx, want), "%s: no %s in the PTX", arch, want);
    cr_assert(!strstr(c.ptx, not_want), "%s: %s in the PTX", arch, not_want);
    TileDevice *dev;
    TileDevModule *mod;
    TileDevFunction *fn = load_kernel(device, c.ptx, "mm", &dev, &mod);
    enum { M = 70, N = 45, K = 100 };
    static uint8_t ha[M * K], hb[K * N];
    static float hc[M * N];
    uint64_t r = 0x9E3779B97F4A7C15ull ^ (uint64_t)(a_e5 * 2 + b_nk);
    for (int i = 0; i < M * K + K * N; i++) {
        uint8_t v;
        bool e5 = (i < M * K) == a_e5;
        do {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            v = (uint8_t)r;
        } while (isnan(decode(v, !e5)) || isinf(decode(v, !e5)));
        if (i < M * K) ha[i] = v;
        else hb[i - M * K] = v;
    }
    static uint8_t hbt[N * K]; /* B as the kernel reads it */
    for (int p = 0; p < K; p++)
        for (int j = 0; j < N; j++) hbt[b_nk ? j * K + p : p * N + j] = hb[p * N + j];
    uint64_t da, db, dc;
    dev_malloc(dev, sizeof ha, &da);
    dev_malloc(dev, sizeof hbt, &db);
    dev_malloc(dev, sizeof hc, &dc);
    dev_memcpy_htod(dev, da, ha, sizeof ha);
    dev_memcpy_htod(dev, db, hbt, sizeof hbt);
    dev_memset_d8(dev, dc, 0xFF, sizeof hc); /* NaN */
    int m = M, n = N, k = K;
    void *params[] = {&da, &db, &dc, &m, &n, &k};
    cr_assert_eq(dev_launch(fn, (M + t.bm - 1) / t.bm, (N + t.bn - 1) / t.bn, 1, 32 * t.warps, 1, 1, 0, NULL, params), DEV_OK, "%s",
                 dev_last_error(dev));
    dev_memcpy_dtoh(dev, hc, dc, sizeof hc);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0, mag = 0;
            for (int p = 0; p < K; p++) {
                double t = decode(ha[i * K + p], !a_e5) * decode(hb[p * N + j], a_e5);
                s += t, mag += fabs(t);
            }
            cr_assert(fabs(hc[i * N + j] - s) <= mag * 0x1p-20, "%s %s x %s%s, %dx%dx%d on %d warps: C[%d][%d] = %a, want %a", arch,
                      a_e5 ? "e5m2" : "e4m3", a_e5 ? "e4m3" : "e5m2", b_nk ? " ([N][K])" : "", t.bm, t.bn, t.bk, t.warps, i, j,
                      hc[i * N + j], s);
        }
    dev_module_unload(mod);
    dev_close(dev);
    tile_compiled_free(&c);
}

static void f8_dot(const char *arch, const char *device, bool a_e5, bool b_nk, const char *want, const char *not_want) {
    f8_dot_tile(arch, device, a_e5, b_nk, want, not_want, (DotTile){64, 32, 32, 4});
}

Test(f8, dot_mixed_formats_sm80) {
    f8_dot("sm_80", "emu", false, false, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "e4m3.e5m2");
    f8_dot("sm_80", "emu", true, true, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "e5m2.e4m3");
}
Test(f8, dot_native_mma_sm89) {
    f8_dot("sm_89", "emu:sm_89", false, false, "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32", "f32.f16.f16.f32");
    f8_dot("sm_89", "emu:sm_89", true, true, "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e4m3.f32", "f32.f16.f16.f32");
    f8_dot("sm_89", "emu:sm_89", false, true, "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32", "cvt.rn.f16x2.e4m3x2");
    /* the smallest tile, warps splitting N, more K steps than one, eight warps */
    static const char *const k32 = "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32";
    f8_dot_tile("sm_89", "emu:sm_89", false, false, k32, "f32.f16.f16.f32", (DotTile){16, 16, 32, 1});
    f8_dot_tile("sm_89", "emu:sm_89", false, true, k32, "f32.f16.f16.f32", (DotTile){32, 64, 64, 2});
    f8_dot_tile("sm_89", "emu:sm_89", false, false, k32, "f32.f16.f16.f32", (DotTile){16, 128, 128, 4});
    f8_dot_tile("sm_89", "emu:sm_89", false, true, k32, "f32.f16.f16.f32", (DotTile){128, 64, 32, 8});
    /* K 16: no f8 form takes it, both sides widen to f16 */
    f8_dot_tile("sm_89", "emu:sm_89", false, false, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "e4m3.e5m2",
                (DotTile){64, 32, 16, 4});
}
Test(f8, dot_native_wgmma_sm90a) {
    f8_dot("sm_90a", "emu:sm_90a", false, false, "wgmma.mma_async.sync.aligned.m64n32k32.f32.e4m3.e5m2", "mma.sync");
    f8_dot("sm_90a", "emu:sm_90a", true, true, "wgmma.mma_async.sync.aligned.m64n32k32.f32.e5m2.e4m3", "mma.sync");
}
