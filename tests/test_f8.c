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
    char *err = NULL;
    cr_assert_eq(dev_open(device, NULL, &dev, &err), DEV_OK);
    TileDevModule *mod;
    TileDevFunction *fn;
    cr_assert_eq(dev_module_load_ptx(dev, c.ptx, &mod), DEV_OK, "%s", dev_last_error(dev));
    cr_assert_eq(dev_module_get_function(mod, "cvt", &fn), DEV_OK);
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
