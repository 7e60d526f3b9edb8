/* test_lang_triton_values.c - Triton's value and type rules, compiled from inline sources and run
 * on the emulator against exact references: constants taking their declared types, f8 constant
 * codes, *i1 bytes, casts to narrow floats rounding once and fp_downcast_rounding, Python's min/max
 * of scalars, reductions' result types, stored values converting to the pointee, zeros_like,
 * broadcast and xor_sum, propagate_nan=, -b of an i1, view, integer division's signedness rules,
 * add/sub/mul and topk (test_lang_triton.c: Triton's language features). */
#include <criterion/criterion.h>
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "include/tile/tile.h"
#include "runtime/device.h"
#include "support/hostfloat.h"
#include "support/support.h"
#include "tests/lang_run.h"
#include "tests/test_rng.h"

/* A float constant takes its declared type's value (it kept the exact 0.1 of the literal), and
 * compile-time f16 arithmetic rounds as the same arithmetic at run time (1000 * 1000 is inf in f16,
 * not 1e6); casts of constants to f8 round to nearest even and saturate as run-time casts do. */
Test(lang_triton_values, typed_float_constants) {
    K k;
    load_src(&k,
             "const T: f16 = 0.1;\n"
             "const U: bf16 = 0.1;\n"
             "const H: f16 = 1000.0;\n"
             "kernel k(o: *f64, h: f16) {\n"
             "    store(o, T as f64);\n"
             "    store(o + 1, U as f64);\n"
             "    store(o + 2, (H * H) as f64);\n"
             "    store(o + 3, (h * h) as f64);\n"
             "    store(o + 4, (1000.0 as f8e4m3) as f64);\n"
             "    store(o + 5, (1.0625 as f8e4m3) as f64);\n"
             "    store(o + 6, (1.1875 as f8e4m3) as f64);\n"
             "    store(o + 7, (0.1 * 3.0) as f64);\n"
             "}\n",
             "k");
    double o[8];
    for (int i = 0; i < 8; i++) o[i] = NAN;
    uint64_t d_o = upload(&k, o, sizeof o);
    uint16_t h = f32_to_f16(1000.0f);
    void *params[] = {&d_o, &h};
    launch(&k, 1, params);
    download(&k, o, d_o, sizeof o);
    cr_expect_eq(o[0], 0.0999755859375, "f16 0.1: %.17g", o[0]);
    cr_expect_eq(o[1], 0.10009765625, "bf16 0.1: %.17g", o[1]);
    cr_expect(isinf(o[2]) && o[2] > 0, "compile-time f16 1000 * 1000: %g", o[2]);
    cr_expect(isinf(o[3]) && o[3] > 0, "run-time f16 1000 * 1000: %g", o[3]);
    cr_expect_eq(o[4], 448.0, "1000 as f8e4m3 saturates: %g", o[4]);
    cr_expect_eq(o[5], 1.0, "1.0625 as f8e4m3 ties to even 1.0: %g", o[5]);
    cr_expect_eq(o[6], 1.25, "1.1875 as f8e4m3 ties to even 1.25: %g", o[6]);
    cr_expect_eq(o[7], 0.1 * 3.0, "literals fold exactly in 64 bits (weak: f64 takes them whole): %.17g", o[7]);
    unload(&k);
}

/* f8 constants are stored as their codes: 1.0 in e4m3 is 0x38 (it was written as the integer 1),
 * 500 saturates to 448 (0x7E), -2.5 in e5m2 is 0xC1; a masked load's `other` too. */
Test(lang_triton_values, f8_constants_are_codes) {
    K k;
    load_src(&k,
             "kernel k(p: *f8e4m3, q: *f8e5m2, src: *f8e4m3, o: *f32) {\n"
             "    let i = arange(0, 4);\n"
             "    store(p + i, full([4], 1.0, f8e4m3));\n"
             "    store(p + 4, 500.0 as f8e4m3);\n"
             "    store(p + 5, (-0.0) as f8e4m3);\n"
             "    store(q + i, full([4], -2.5, f8e5m2));\n"
             "    let v = load(src + i, i < 2, 3.0);\n"
             "    store(o + i, v as f32);\n"
             "}\n",
             "k");
    uint8_t p[8], q[4], src[4] = {0x40 /* 2.0 */, 0x3c /* 1.5 */, 0, 0};
    float o[4];
    memset(p, 0xEE, sizeof p), memset(q, 0xEE, sizeof q);
    for (int i = 0; i < 4; i++) o[i] = NAN;
    uint64_t dp = upload(&k, p, sizeof p), dq = upload(&k, q, sizeof q), ds = upload(&k, src, sizeof src), d_o = upload(&k, o, sizeof o);
    void *params[] = {&dp, &dq, &ds, &d_o};
    launch(&k, 1, params);
    download(&k, p, dp, sizeof p), download(&k, q, dq, sizeof q), download(&k, o, d_o, sizeof o);
    for (int i = 0; i < 4; i++) cr_expect_eq(p[i], 0x38, "e4m3 1.0 at %d: %#x", i, p[i]);
    cr_expect_eq(p[4], 0x7E, "500 as e4m3: %#x (448 is 0x7e)", p[4]);
    cr_expect_eq(p[5], 0x80, "-0.0 as e4m3: %#x", p[5]);
    for (int i = 0; i < 4; i++) cr_expect_eq(q[i], 0xC1, "e5m2 -2.5 at %d: %#x", i, q[i]);
    const float want[4] = {2.0f, 1.5f, 3.0f, 3.0f};
    for (int i = 0; i < 4; i++) cr_expect_eq(o[i], want[i], "load with other 3.0 at %d: %g", i, o[i]);
    unload(&k);
}

/* An *i1 element is a byte, true when not zero: bytes 2 and 128 (a uint8 mask) read as true (only
 * the low bit was kept); scalar, vector and masked loads. */
Test(lang_triton_values, i1_loads_are_nonzero_bytes) {
    K k;
    load_src(&k,
             "kernel k(m: *i1, o: *i32) {\n"
             "    let i = arange(0, 16);\n"
             "    store(o + i, where(load(m + i), 1, 0));\n"
             "    store(o + 16 + i, where(load(m + i, i < 12, false), 1, 0));\n"
             "    store(o + 32, where(load(m + 3), 1, 0));\n"
             "}\n",
             "k");
    uint8_t m[16] = {0, 1, 2, 128, 255, 0, 4, 0, 3, 0, 64, 1, 2, 0, 0, 8};
    int32_t o[33];
    memset(o, 0xEE, sizeof o);
    uint64_t dm = upload(&k, m, sizeof m), d_o = upload(&k, o, sizeof o);
    void *params[] = {&dm, &d_o};
    launch(&k, 1, params);
    download(&k, o, d_o, sizeof o);
    for (int i = 0; i < 16; i++) {
        cr_expect_eq(o[i], m[i] != 0, "byte %d = %u: %d", i, m[i], o[i]);
        cr_expect_eq(o[16 + i], i < 12 && m[i] != 0, "masked byte %d = %u: %d", i, m[i], o[16 + i]);
    }
    cr_expect_eq(o[32], 1, "scalar load of 128: %d", o[32]);
    unload(&k);
}

/* f64 (and wide integers) to f8 and bf16 round once, to nearest even: through f32 they rounded twice, and
 * a false tie went to even (1.0625 + 2^-30 as e4m3 was 1.0, the nearest is 1.125).  On sm_89 and sm_90a
 * too, where tensors of f32 convert in pairs in hardware (an f64 tensor went through those pairs). */
static void narrow_casts(const char *arch, const char *device);

Test(lang_triton_values, narrow_casts_round_once) { narrow_casts(NULL, NULL); }
Test(lang_triton_values, narrow_casts_round_once_sm90a) { narrow_casts("sm_90a", "emu:sm_90a"); }
Test(lang_triton_values, narrow_casts_round_once_sm89) { narrow_casts("sm_89", "emu:sm_89"); }

static void narrow_casts(const char *arch, const char *device) {
    static const char *src = /* one warp: two elements a thread, a pair for the hardware conversions */
        "@num_warps(1)\n"
        "kernel k(x: *f64, ints: *i32, uints: *u32, e4: *f8e4m3, e5: *f8e5m2, bf: *bf16, bfu: *bf16) {\n"
        "    let i = arange(0, 64);\n"
        "    let v = load(x + i);\n"
        "    store(e4 + i, v as f8e4m3);\n"
        "    store(e5 + i, v as f8e5m2);\n"
        "    store(bf + i, load(ints + i) as bf16);\n"
        "    store(bfu + i, load(uints + i) as bf16);\n"
        "}\n";
    if (arch) { /* the hardware's f8 conversions are in the code under test */
        char *ptx = compile_ptx(src, arch);
        cr_assert(strstr(ptx, "e4m3x2"), "%s", ptx);
        free(ptx);
    }
    K k;
    load_src_on(&k, src, "k", arch, device);
    double x[64];
    int32_t ints[64];
    uint32_t uints[64];
    uint64_t s = 12345;
    for (int i = 0; i < 64; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        /* halfway points of e4m3 (1 + (2j+1)/16) and e5m2 (1 + (2j+1)/8) nudged by tiny amounts either way */
        double tie4 = (1.0 + (2.0 * (i % 8) + 1) / 16.0) * ldexp(1.0, (int)(s >> 60) % 6 - 3);
        double tie5 = (1.0 + (2.0 * (i % 4) + 1) / 8.0) * ldexp(1.0, (int)(s >> 58) % 6 - 3);
        /* the nudge's sign independent of the tie's j (i % 8): half the nearest values are odd, unlike the tie's even */
        double nudge = ldexp(1.0, -28 - (int)(s >> 59) % 8) * ((i >> 3) & 1 ? 1 : -1);
        x[i] = (i < 32 ? tie4 : tie5) * (1 + nudge) * (i % 3 ? 1 : -1);
        ints[i] = (int32_t)((1 << 30) + (1 << 22) + (i & 1 ? 1 : -1)) * (i % 3 ? 1 : -1);
        uints[i] = (1u << 31) + (1u << 23) + (i & 1 ? 1u : 0u) + (uint32_t)(i >> 1) * 7u;
    }
    uint8_t e4[64], e5[64];
    uint16_t bf[64], bfu[64];
    memset(e4, 0xEE, sizeof e4), memset(e5, 0xEE, sizeof e5), memset(bf, 0xEE, sizeof bf), memset(bfu, 0xEE, sizeof bfu);
    uint64_t dx = upload(&k, x, sizeof x), di = upload(&k, ints, sizeof ints), du = upload(&k, uints, sizeof uints);
    uint64_t d4 = upload(&k, e4, sizeof e4), d5 = upload(&k, e5, sizeof e5), db = upload(&k, bf, sizeof bf), dbu = upload(&k, bfu, sizeof bfu);
    void *params[] = {&dx, &di, &du, &d4, &d5, &db, &dbu};
    launch(&k, 1, params);
    download(&k, e4, d4, sizeof e4), download(&k, e5, d5, sizeof e5), download(&k, bf, db, sizeof bf), download(&k, bfu, dbu, sizeof bfu);
    for (int i = 0; i < 64; i++) {
        cr_expect_eq(e4[i], d_to_f8(x[i], 0), "%.17g as e4m3: %#x, want %#x", x[i], e4[i], d_to_f8(x[i], 0));
        cr_expect_eq(e5[i], d_to_f8(x[i], 1), "%.17g as e5m2: %#x, want %#x", x[i], e5[i], d_to_f8(x[i], 1));
        /* bf16 of an integer: nearest even of the exact value, 8 significant bits */
        double want = (double)ints[i], wantu = (double)uints[i];
        int e;
        frexp(want, &e);
        double q = ldexp(1.0, e - 8);
        want = nearbyint(want / q) * q;
        frexp(wantu, &e);
        q = ldexp(1.0, e - 8);
        wantu = nearbyint(wantu / q) * q;
        cr_expect_eq(bf16_to_d(bf[i]), want, "%d as bf16: %.17g, want %.17g", ints[i], bf16_to_d(bf[i]), want);
        cr_expect_eq(bf16_to_d(bfu[i]), wantu, "%u as bf16: %.17g, want %.17g", uints[i], bf16_to_d(bfu[i]), wantu);
    }
    unload(&k);
}

/* |v| of a 64-bit integer rounded to nearest even at p significant bits, exactly. */
static double u64_round(uint64_t u, int p) {
    int bits = u ? 64 - __builtin_clzll(u) : 0;
    if (bits <= p) return (double)u;
    int k = bits - p;
    uint64_t q = u >> k, rem = u & ((1ull << k) - 1), half = 1ull << (k - 1);
    if (rem > half || (rem == half && (q & 1))) q++;
    return ldexp((double)q, k);
}

static double i64_round(int64_t v, int p) { return v < 0 ? -u64_round(0 - (uint64_t)v, p) : u64_round((uint64_t)v, p); }

/* The largest magnitude of the 16-bit type (to_d its decoding) not above |v|, with v's sign: round toward zero by
 * search, independent of any rounding to nearest.  v finite. */
static uint16_t rtz16(double v, double (*to_d)(uint16_t), uint16_t maxfinite) {
    uint16_t lo = 0, hi = maxfinite;
    if (fabs(v) >= to_d(maxfinite)) lo = maxfinite;
    while (lo < hi) {
        uint16_t mid = (uint16_t)((lo + hi + 1) / 2);
        if (to_d(mid) <= fabs(v)) lo = mid;
        else hi = (uint16_t)(mid - 1);
    }
    return (uint16_t)(lo | (signbit(v) ? 0x8000 : 0));
}

/* Triton's cast(x, T, fp_downcast_rounding="rtz"): f32 -> f16 and bf16, f64 -> f32 and f16 toward zero (finite
 * values past the range give the largest finite value, infinities and NaNs stay); "rtne" is the plain cast.
 * References: a search over the 16-bit codes, the f32 pattern's top half for bf16, the host's (float) under
 * FE_TOWARDZERO for f64 -> f32.  61 of 64 elements live, outputs poisoned; other conversions are errors. */
Test(lang_triton_values, cast_round_toward_zero) {
    K k;
    load_src(&k,
             "kernel k(x: *f32, d: *f64, h: *f16, b: *bf16, f: *f32, n: i32) {\n"
             "    let i = arange(0, 64); let m = i < n;\n"
             "    let v = load(x + i, m, 0.0); let w = load(d + i, m, 0.0);\n"
             "    store(h + i, cast(v, f16, fp_downcast_rounding=\"rtz\"), m);\n"
             "    store(b + i, cast(v, bf16, fp_downcast_rounding=\"rtz\"), m);\n"
             "    store(f + i, cast(w, f32, fp_downcast_rounding=\"rtz\"), m);\n"
             "    store(h + 64 + i, cast(w, f16, fp_downcast_rounding=\"rtz\"), m);\n"
             "    store(h + 128 + i, cast(v, f16, fp_downcast_rounding=\"rtne\"), m);\n"
             "}\n",
             "k");
    float x[64];
    double d[64];
    const double special[] = {65504, 65519.99, 65520, 70000, -1e10, 3.4e38, INFINITY, -INFINITY, NAN, -0.0, 1e-30, -3e-8, 6e-8,
                              1.0 + 1.0 / 1024, -(1.0 + 3.0 / 2048), 2049, -2051, 1.0 / 3, 1e300, -1e-300, 3.4028235677973366e38};
    for (int i = 0; i < 64; i++) {
        double v = i < (int)(sizeof special / sizeof *special) ? special[i]
                                                               : ldexp((double)(irand(1 << 30) - (1 << 29)), irand(60) - 60) * (1 + 1e-12);
        d[i] = v, x[i] = (float)v;
    }
    int32_t n = 61;
    uint64_t dx = upload(&k, x, sizeof x), dd = upload(&k, d, sizeof d), dh = poisoned(&k, 192 * 2), db = poisoned(&k, 64 * 2),
             df = poisoned(&k, 64 * 4);
    launch(&k, 1, (void *[]){&dx, &dd, &dh, &db, &df, &n});
    uint16_t h[192], b[64];
    float f[64];
    download(&k, h, dh, sizeof h), download(&k, b, db, sizeof b), download(&k, f, df, sizeof f);
    for (int i = 0; i < 64; i++) {
        if (i >= n) {
            cr_expect(h[i] == 0xFFFF && b[i] == 0xFFFF && h[64 + i] == 0xFFFF && isnan(f[i]), "[%d] masked off, but written", i);
            continue;
        }
        uint32_t xb;
        memcpy(&xb, &x[i], 4);
        bool fin = isfinite(x[i]), dfin = isfinite(d[i]);
        uint16_t wh = isnan(x[i]) ? 0 : fin ? rtz16(x[i], f16_to_d, 0x7BFF) : (uint16_t)(x[i] > 0 ? 0x7C00 : 0xFC00);
        uint16_t wb = (uint16_t)(xb >> 16); /* truncation is rtz for bf16 (NaN: any NaN) */
        uint16_t wd = isnan(d[i]) ? 0 : dfin ? rtz16(d[i], f16_to_d, 0x7BFF) : (uint16_t)(d[i] > 0 ? 0x7C00 : 0xFC00);
        fesetround(FE_TOWARDZERO);
        volatile double dv = d[i];
        float wf = (float)dv;
        fesetround(FE_TONEAREST);
        if (isnan(x[i])) cr_expect(isnan(f16_to_d(h[i])) && isnan(bf16_to_d(b[i])), "[%d] NaN: %04x %04x", i, h[i], b[i]);
        else {
            cr_expect_eq(h[i], wh, "[%d] f32 %.9g -> f16 rtz: %04x (%.9g), want %04x (%.9g)", i, x[i], h[i], f16_to_d(h[i]), wh, f16_to_d(wh));
            cr_expect_eq(b[i], wb, "[%d] f32 %.9g -> bf16 rtz: %04x, want %04x", i, x[i], b[i], wb);
            cr_expect_eq(h[128 + i], f32_to_f16(x[i]), "[%d] f32 %.9g -> f16 rtne: %04x, want %04x", i, x[i], h[128 + i], f32_to_f16(x[i]));
        }
        if (isnan(d[i])) cr_expect(isnan(f[i]) && isnan(f16_to_d(h[64 + i])), "[%d] NaN", i);
        else {
            cr_expect(f[i] == wf && signbit(f[i]) == signbit(wf), "[%d] f64 %.17g -> f32 rtz: %.9g, want %.9g", i, d[i], f[i], wf);
            cr_expect_eq(h[64 + i], wd, "[%d] f64 %.17g -> f16 rtz: %04x, want %04x", i, d[i], h[64 + i], wd);
        }
    }
    unload(&k);
    BadSource bad[] = {
        {"kernel k(p: *f32) { store(p, cast(program_id(0), f32, fp_downcast_rounding=\"rtz\")); }", "fp_downcast_rounding is for a conversion of a float to a narrower float"},
        {"kernel k(p: *f32) { store(p, cast(load(p), f64, fp_downcast_rounding=\"rtz\")); }", "not 'f32' to 'f64'"},
        {"kernel k(p: *f16) { store(p, cast(load(p) as f32, f16, fp_downcast_rounding=\"rtn\")); }", "unknown fp_downcast_rounding \"rtn\""},
    };
    expect_compile_errors(bad, sizeof bad / sizeof *bad);
}

/* fp_downcast_rounding as Triton's cast takes it: a value already of the type asked for comes back as it is
 * (Triton returns it before looking at the rounding, so a kernel generic over its output type may pass "rtz"
 * with an f32 output; it was an error), and a constant is first the tensor to_tensor makes of it: 1e300 is an
 * f64, which goes to f32 toward zero as f32's largest value (it was an error: "not 'f32' to 'f32'"), 0.1 the
 * f32 nearest to it.  Random inputs, 61 of 64 live, outputs poisoned. */
Test(lang_triton_values, cast_rounding_keeps_the_type_and_widens_constants) {
    K k;
    load_src(&k,
             "kernel k(x: *f32, y: *f16, z: *i32, o: *f32, oh: *f16, oi: *i32, c: *f64, n: i32, const OT = f32) {\n"
             "    let i = arange(0, 64); let m = i < n;\n"
             "    store(o + i, cast(load(x + i, m), OT, fp_downcast_rounding=\"rtz\"), m);\n"
             "    store(oh + i, cast(load(y + i, m), f16, fp_downcast_rounding=\"rtne\"), m);\n"
             "    store(oi + i, cast(load(z + i, m), i32, fp_downcast_rounding=\"rtz\"), m);\n"
             "    store(c, cast(1e300, f32, fp_downcast_rounding=\"rtz\"));\n"
             "    store(c + 1, cast(-1e300, f32, fp_downcast_rounding=\"rtz\"));\n"
             "    store(c + 2, cast(-1e-300, f32, fp_downcast_rounding=\"rtz\"));\n"
             "    store(c + 3, cast(1e300, f16, fp_downcast_rounding=\"rtz\"));\n"
             "    store(c + 4, cast(-1e-40, bf16, fp_downcast_rounding=\"rtz\"));\n"
             "    store(c + 5, cast(0.1, f32, fp_downcast_rounding=\"rtz\"));\n"
             "    store(c + 6, cast(1.1, f16, fp_downcast_rounding=\"rtz\"));\n"
             "}\n",
             "k");
    float x[64];
    uint16_t y[64];
    int32_t z[64];
    for (int i = 0; i < 64; i++) {
        x[i] = (float)ldexp((double)(irand(1 << 24) - (1 << 23)), irand(80) - 60);
        y[i] = f32_to_f16((float)ldexp((double)(irand(1 << 11) - (1 << 10)), irand(20) - 10));
        z[i] = (int32_t)rnext();
    }
    int32_t n = 61;
    uint64_t dx = upload(&k, x, sizeof x), dy = upload(&k, y, sizeof y), dz = upload(&k, z, sizeof z), d_o = poisoned(&k, sizeof x),
             doh = poisoned(&k, sizeof y), doi = poisoned(&k, sizeof z), dc = poisoned(&k, 7 * 8);
    launch(&k, 1, (void *[]){&dx, &dy, &dz, &d_o, &doh, &doi, &dc, &n});
    float o[64];
    uint16_t oh[64];
    int32_t oi[64];
    double c[7];
    download(&k, o, d_o, sizeof o), download(&k, oh, doh, sizeof oh), download(&k, oi, doi, sizeof oi), download(&k, c, dc, sizeof c);
    for (int i = 0; i < 64; i++) {
        bool live = i < n;
        cr_expect(live ? o[i] == x[i] : isnan(o[i]), "[%d] f32 rtz to f32: %a, want %a", i, o[i], x[i]);
        cr_expect_eq(oh[i], live ? y[i] : 0xFFFF, "[%d] f16 rtne to f16: %04x, want %04x", i, oh[i], y[i]);
        cr_expect_eq(oi[i], live ? z[i] : -1, "[%d] i32 to i32: %d, want %d", i, oi[i], z[i]);
    }
    cr_expect_eq(c[0], (double)FLT_MAX, "1e300 to f32 toward zero: %a", c[0]);
    cr_expect_eq(c[1], -(double)FLT_MAX, "-1e300 to f32 toward zero: %a", c[1]);
    cr_expect(c[2] == 0 && signbit(c[2]), "-1e-300 to f32 toward zero: %a", c[2]);
    cr_expect_eq(c[3], 65504.0, "1e300 to f16 toward zero: %a", c[3]);
    cr_expect_eq(c[4], -ldexp(1, -133), "-1e-40 (1.09 of bf16's least subnormal) to bf16 toward zero: %a", c[4]);
    cr_expect_eq(c[5], (double)0.1f, "0.1 to f32 (to_tensor's, nearest): %a", c[5]);
    cr_expect_eq(c[6], 1.099609375, "1.1 to f16 toward zero: %a", c[6]);
    unload(&k);
}

/* bitcast of a constant takes the bits of the typed scalar Triton's to_tensor makes of it: an integer from 2^31
 * to 2^32 - 1 is a u32 (bitcast(0xFF800000, f32) is -inf; it was an i64, a width error), a float outside f32's
 * normal range an f64 (1e300's 64 bits; it was f32's inf), as run-time values of those types give. */
Test(lang_triton_values, bitcast_of_constants_is_to_tensors) {
    K k;
    load_src(&k,
             "kernel k(x: *u32, o: *f32, c: *u32, w: *u64, n: i32) {\n"
             "    let i = arange(0, 64); let m = i < n;\n"
             "    store(o + i, bitcast(load(x + i, m), f32), m);\n"
             "    store(c as *f32, bitcast(0xFF800000, f32));\n"
             "    store(c as *f32 + 1, bitcast(0xFFFFFFFF, f32));\n"
             "    store(c as *f32 + 2, cast(3000000000, f32, bitcast=true));\n"
             "    store(c as *i32 + 3, bitcast(0.1, i32));\n"
             "    store(c as *i32 + 4, bitcast(-0.0, i32));\n"
             "    store(c as *f32 + 5, bitcast(-1073741824, f32));\n"
             "    store(w, bitcast(1e300, u64));\n"
             "    store(w as *i64 + 1, bitcast(-1e-40, i64));\n"
             "}\n",
             "k");
    uint32_t x[64];
    for (int i = 0; i < 64; i++) x[i] = i < 3 ? (uint32_t[]){0xFF800000u, 0xFFFFFFFFu, 3000000000u}[i] : (uint32_t)rnext();
    int32_t n = 61;
    uint64_t dx = upload(&k, x, sizeof x), d_o = poisoned(&k, sizeof x), dc = poisoned(&k, 6 * 4), dw = poisoned(&k, 2 * 8);
    launch(&k, 1, (void *[]){&dx, &d_o, &dc, &dw, &n});
    uint32_t o[64], c[6];
    uint64_t w[2];
    download(&k, o, d_o, sizeof o), download(&k, c, dc, sizeof c), download(&k, w, dw, sizeof w);
    for (int i = 0; i < 64; i++) cr_expect_eq(o[i], i < n ? x[i] : 0xFFFFFFFFu, "[%d] run-time bitcast: %08x, want %08x", i, o[i], x[i]);
    uint32_t want[6] = {0xFF800000u, 0xFFFFFFFFu, 3000000000u, 0x3DCCCCCDu, 0x80000000u, 0xC0000000u};
    for (int i = 0; i < 6; i++) cr_expect_eq(c[i], want[i], "constant %d: %08x, want %08x", i, c[i], want[i]);
    double big = 1e300, tiny = -1e-40;
    uint64_t wb, wt;
    memcpy(&wb, &big, 8), memcpy(&wt, &tiny, 8);
    cr_expect_eq(w[0], wb, "bitcast(1e300, u64): %016llx, want %016llx", (unsigned long long)w[0], (unsigned long long)wb);
    cr_expect_eq(w[1], wt, "bitcast(-1e-40, i64): %016llx, want %016llx", (unsigned long long)w[1], (unsigned long long)wt);
    unload(&k);
    BadSource bad[] = {
        {"kernel k(p: *i32) { store(p, bitcast(1e-40, i32)); }", "bitcast from 'f64' (64 bits) to 'i32' (32 bits) changes the width"},
        {"kernel k(p: *f32) { store(p, bitcast(5000000000, f32)); }", "bitcast from 'i64' (64 bits) to 'f32' (32 bits) changes the width"},
    };
    expect_compile_errors(bad, sizeof bad / sizeof *bad);
}

/* 64-bit integers to bf16 (run time) and to f32 and bf16 (folded) round once: through f64 to nearest
 * even first, an integer of more than 53 bits that lies just past a bf16 (or f32) tie became the tie
 * and went to even (2^56 + 2^48 + 1 as bf16 was 2^56; 2^60 + 2^36 + 1 as f32 was 2^60). */
Test(lang_triton_values, narrow_casts_of_64_bit_integers) {
    static const char *src =
        "@num_warps(1)\n"
        "kernel k(x: *i64, ux: *u64, bf: *bf16, bfu: *bf16, f: *f32, folded: *f32) {\n"
        "    let i = arange(0, 64);\n"
        "    let v = load(x + i);\n"
        "    store(bf + i, v as bf16);\n"
        "    store(bfu + i, load(ux + i) as bf16);\n"
        "    store(f + i, v as f32);\n"
        "    store(folded, 0x101000000000001 as bf16);\n"
        "    store(folded + 1, 1152921573326323713 as f32);\n"
        "    store(folded + 2, -1152921573326323713 as f32);\n"
        "    store(folded + 3, (0x8080000000000001 as u64) as bf16);\n"
        "}\n";
    K k;
    load_src(&k, src, "k");
    int64_t x[64];
    uint64_t ux[64];
    uint64_t s = 987654321;
    for (int i = 0; i < 64; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        int bits = 54 + (int)(s >> 60) % 10; /* 54..63 significant bits: f64 drops some */
        int p = i % 2 ? 8 : 24;              /* just past a bf16 or an f32 tie */
        uint64_t m = (s >> 20) & ((1ull << (p - 1)) - 1);
        uint64_t u = ((1ull << (p - 1)) | m) << (bits - p); /* p significant bits */
        u |= 1ull << (bits - p - 1);                        /* the half */
        u |= (i >> 1) % 3 ? 1 : 0;                          /* and a little more, or an exact tie */
        x[i] = (int64_t)u * (i % 4 < 2 ? 1 : -1);
        ux[i] = u << (63 - (bits - 1)); /* the same pattern, top bit set */
    }
    x[62] = INT64_MIN, x[63] = INT64_MAX;
    uint16_t bf[64], bfu[64];
    float f[64], folded[4];
    uint64_t dx = upload(&k, x, sizeof x), dux = upload(&k, ux, sizeof ux);
    uint64_t db = poisoned(&k, sizeof bf), dbu = poisoned(&k, sizeof bfu), df = poisoned(&k, sizeof f), dfo = poisoned(&k, sizeof folded);
    void *params[] = {&dx, &dux, &db, &dbu, &df, &dfo};
    launch(&k, 1, params);
    download(&k, bf, db, sizeof bf), download(&k, bfu, dbu, sizeof bfu), download(&k, f, df, sizeof f), download(&k, folded, dfo, sizeof folded);
    for (int i = 0; i < 64; i++) {
        cr_expect_eq(bf16_to_d(bf[i]), i64_round(x[i], 8), "%lld as bf16: %.17g, want %.17g", (long long)x[i], bf16_to_d(bf[i]),
                     i64_round(x[i], 8));
        cr_expect_eq(bf16_to_d(bfu[i]), u64_round(ux[i], 8), "%llu as bf16: %.17g, want %.17g", (unsigned long long)ux[i],
                     bf16_to_d(bfu[i]), u64_round(ux[i], 8));
        cr_expect_eq((double)f[i], i64_round(x[i], 24), "%lld as f32: %.9g, want %.17g", (long long)x[i], f[i], i64_round(x[i], 24));
    }
    cr_expect_eq((double)folded[0], u64_round(0x101000000000001ull, 8), "folded bf16: %.17g", folded[0]);
    cr_expect_eq((double)folded[1], u64_round(1152921573326323713ull, 24), "folded f32: %.17g", folded[1]);
    cr_expect_eq((double)folded[2], -u64_round(1152921573326323713ull, 24), "folded f32: %.17g", folded[2]);
    cr_expect_eq((double)folded[3], u64_round(0x8080000000000001ull, 8), "folded u64 bf16: %.17g", folded[3]);
    unload(&k);
}

/* Python's builtin min/max in a Triton kernel take two scalars (`min(num_pid_m - first_pid_m, GROUP_SIZE_M)`):
 * a scalar has no axis to reduce, so min(a, b) and max(a, b) of a scalar are minimum and maximum. */
Test(lang_triton_values, min_max_of_scalars) {
    K k;
    load_src(&k,
             "kernel k(out: *i32, n: i32, f: f32, outf: *f32) {\n"
             "    store(out, min(n - 3, 16));\n"
             "    store(out + 1, max(n, 7));\n"
             "    store(out + 2, max(min(n, 100), 50));\n"
             "    store(outf, min(f, 0.5));\n"
             "    store(outf + 1, max(f, 2.0));\n"
             "}\n",
             "k");
    int32_t o[3];
    float of[2];
    uint64_t d = upload(&k, o, sizeof o), df = upload(&k, of, sizeof of);
    for (int32_t n = -4; n <= 130; n += 67) {
        float f = (float)n * 0.25f;
        void *params[] = {&d, &n, &f, &df};
        launch(&k, 1, params);
        download(&k, o, d, sizeof o), download(&k, of, df, sizeof of);
        cr_expect_eq(o[0], n - 3 < 16 ? n - 3 : 16, "min(%d - 3, 16) = %d", n, o[0]);
        cr_expect_eq(o[1], n > 7 ? n : 7, "max(%d, 7) = %d", n, o[1]);
        cr_expect_eq(o[2], n < 50 ? 50 : n > 100 ? 100 : n, "max(min(%d, 100), 50) = %d", n, o[2]);
        cr_expect_eq(of[0], f < 0.5f ? f : 0.5f, "min(%g, 0.5) = %g", f, of[0]);
        cr_expect_eq(of[1], f > 2.0f ? f : 2.0f, "max(%g, 2.0) = %g", f, of[1]);
    }
    unload(&k);
}

/* Reductions take Triton's types: max and min (without indices) of values narrower than 32 bits reduce as f32 or
 * i32, so an f16 row's x - max(x, 1)[:, None] is computed in f32 (in f16 it rounds to the large maximum's
 * ulp, 0.5 here); sum, cumsum and cumprod of i1 (unsigned to Triton) count in u32; cumprod takes dtype=.
 * Rows of 13 live f16 values in [-2, 2) and one near 1000 (poisoned outputs, fresh values each run); the products
 * of 14 factors from 2 to 9 pass i32's range. */
Test(lang_triton_values, reduction_types) {
    K k;
    load_src(&k,
             "kernel k(x: *f16, z: *f32, p: *i32, q: *i64, n: i32) {\n"
             "    let r = arange(0, 4)[:, None]; let c = arange(0, 16)[None, :];\n"
             "    let m = c < n;\n"
             "    let v = load(x + r * 16 + c, m, -1000.0);\n"
             "    static_assert(dtype_of(max(v, 1)) == f32 && dtype_of(min(v > 0.0, 1)) == i32, \"max/min widen\");\n"
             "    static_assert(dtype_of(max(v as i8, 1)) == i32 && dtype_of(max(v as u16)) == i32, \"integers too\");\n"
             "    let (mv, mi) = max(v, 1, return_indices=true);\n"
             "    static_assert(dtype_of(mv) == f16, \"with indices the values keep their type, as Triton's\");\n"
             "    static_assert(dtype_of(sum(m, 1)) == u32 && dtype_of(cumsum(m, 1)) == u32 && dtype_of(cumprod(m, 1)) == u32,\n"
             "                  \"i1 counts in u32\");\n"
             "    store(z + r * 16 + c, v - max(v, 1)[:, None], m);\n"
             "    store(p + r * 16 + c, cumprod(load(p + r * 16 + c, m, 1), 1, dtype=i64) > 2147483647, m);\n"
             "    store(q + r * 16 + c, cumprod(v as i32 + 3, 1, dtype=i64), m);\n"
             "}\n",
             "k");
    int32_t n = 14;
    uint16_t hx[64];
    int32_t hp[64];
    for (int i = 0; i < 64; i++) {
        int col = i % 16;
        float f = col == 5 ? 999.5f + (float)irand(4) * 0.5f : (float)(irand(4096) - 2048) / 1024.0f;
        hx[i] = f32_to_f16(f), hp[i] = 2 + irand(8);
    }
    uint64_t dx = upload(&k, hx, sizeof hx), dz = poisoned(&k, 64 * 4), dp = upload(&k, hp, sizeof hp), dq = poisoned(&k, 64 * 8);
    void *params[] = {&dx, &dz, &dp, &dq, &n};
    launch(&k, 1, params);
    float z[64];
    int32_t p[64];
    int64_t q[64];
    download(&k, z, dz, sizeof z), download(&k, p, dp, sizeof p), download(&k, q, dq, sizeof q);
    for (int r = 0; r < 4; r++) {
        double mx = -INFINITY, pr = 1;
        int64_t qr = 1;
        for (int c = 0; c < n; c++) mx = fmax(mx, f16_to_d(hx[r * 16 + c]));
        for (int c = 0; c < 16; c++) {
            int i = r * 16 + c;
            if (c >= n) {
                cr_expect(isnan(z[i]) && p[i] == hp[i] && q[i] == -1, "[%d][%d] masked off, but written", r, c);
                continue;
            }
            double want = f16_to_d(hx[i]) - mx; /* exact in f32: both are multiples of 2^-10 below 2^11 */
            cr_expect_eq(z[i], (float)want, "[%d][%d]: x - max = %.9g, want %.9g (x %g, max %g)", r, c, z[i], want, f16_to_d(hx[i]), mx);
            pr *= hp[i];
            cr_expect_eq(p[i], pr > 2147483647.0, "[%d][%d]: cumprod in i64 past i32's range: %d, want %d", r, c, p[i], pr > 2147483647.0);
            qr *= (int64_t)trunc(f16_to_d(hx[i])) + 3; /* below 4^13 * 1004: past i32, within i64 */
            cr_expect_eq(q[i], qr, "[%d][%d]: cumprod(dtype=i64) = %lld, want %lld", r, c, (long long)q[i], (long long)qr);
        }
    }
    unload(&k);
}

/* A layer norm's (x - mean) * rstd keeps the digits the subtraction keeps: the contract pass never
 * distributes a subtraction into a scale (fma(x, s, -(m * s)) would lose them: x = 1e4 + noise gave errors
 * of 1e-2 instead of one rounding; softmax's case is test_math's softmax_exp_is_one_at_the_row_max). */
Test(lang_triton_values, centered_scale_is_not_distributed) {
    K k;
    load_src(&k,
             "kernel k(x: *f32, out: *f32, s: f32, m0: f32) {\n"
             "    let r = arange(0, 4);\n"
             "    let c = arange(0, 64);\n"
             "    let t = load(x + r[:, None] * 64 + c[None, :]);\n"
             "    let mean = sum(t, 1) / 64.0;\n"
             "    store(out + r[:, None] * 64 + c[None, :], (t - mean[:, None]) * s);\n"
             "    store(out + 256 + r, mean);\n"
             "    store(out + 260 + c, (load(x + c) - m0) * s);\n" /* the tutorial's form: a scalar mean */
             "}\n",
             "k");
    float x[256], out[324];
    for (int i = 0; i < 256; i++) x[i] = 10000.0f + (float)((i * 37) % 29 - 14) * 0.0009765625f;
    uint64_t dx = upload(&k, x, sizeof x), dout = upload(&k, out, sizeof out);
    float s = 997.0f, m0 = 10000.0048828125f; /* 10000 + 5 * 2^-10: m0 * s is not a float */
    void *params[] = {&dx, &dout, &s, &m0};
    launch(&k, 1, params);
    download(&k, out, dout, sizeof out);
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 64; c++) {
            float m = out[256 + r], want = (x[r * 64 + c] - m) * s; /* the subtraction is exact (Sterbenz), one rounding */
            cr_expect_eq(out[r * 64 + c], want, "(x - mean) * s at (%d, %d): %.9g, want %.9g", r, c, out[r * 64 + c], want);
        }
    for (int c = 0; c < 64; c++) {
        float want = (x[c] - m0) * s;
        cr_expect_eq(out[260 + c], want, "(x - m) * s of a scalar m at %d: %.9g, want %.9g", c, out[260 + c], want);
    }
    unload(&k);
}

/* Triton's zeros_like, broadcast, xor_sum (every element, and along an axis with keep_dims),
 * div_rn / fdiv (IEEE division, what `/` is, with ieee_rounding= or approx=) and sqrt_rn, on 100 of 128 elements
 * (poisoned output). */
Test(lang_triton_values, zeros_like_broadcast_xor_sum_rn) {
    K k;
    load_src(&k,
             "kernel k(x: *i32, y: *f32, o: *i32, rows: *i32, p: *f32, n: i32) {\n"
             "    let i = arange(0, 128);\n"
             "    let v = load(x + i, i < n, 0);\n"
             "    let (a, b) = broadcast(i[:, None] * 3, v[None, :]);\n"
             "    store(o + i, xor_sum(v) + zeros_like(v), i < n);\n"
             "    let r = xor_sum(a ^ b, axis=1, keep_dims=true);\n"
             "    store(rows + i[:, None], r);\n"
             "    let f = load(y + i, i < n, 1.0);\n"
             "    store(p + i, div_rn(f, 3.0), i < n);\n"
             "    store(p + 128 + i, fdiv(f, 7.0, ieee_rounding=true) + fdiv(f, 7.0, approx=true) - fdiv(x=f, y=7.0), i < n);\n"
             "    store(p + 256 + i, sqrt_rn(f), i < n);\n"
             "}\n",
             "k");
    static const BadSource bad[] = {
        {"kernel k(p: *f32) {\n    store(p, fdiv(load(p), 3.0, ieee_rounding=true, approx=true));\n}\n",
         "t.tile:2:60: error: 'fdiv': approx and ieee_rounding cannot both be true"},
    };
    expect_compile_errors(bad, 1);
    enum { N = 100, B = 128 };
    int32_t x[B], o[B], rows[B];
    float y[B], p[3 * B];
    for (int i = 0; i < B; i++) x[i] = (int32_t)(i * 2654435761u >> 3), y[i] = (float)(i * 1.37 + 0.11);
    memset(o, 0xee, sizeof o), memset(rows, 0xee, sizeof rows), memset(p, 0xee, sizeof p);
    uint64_t dx = upload(&k, x, sizeof x), dy = upload(&k, y, sizeof y), dob = upload(&k, o, sizeof o), dr = upload(&k, rows, sizeof rows),
             dp = upload(&k, p, sizeof p);
    int32_t n = N;
    void *params[] = {&dx, &dy, &dob, &dr, &dp, &n};
    launch(&k, 1, params);
    download(&k, o, dob, sizeof o), download(&k, rows, dr, sizeof rows), download(&k, p, dp, sizeof p);
    int32_t all = 0;
    for (int i = 0; i < N; i++) all ^= x[i];
    for (int i = 0; i < B; i++) {
        cr_expect_eq(o[i], i < N ? all : (int32_t)0xeeeeeeee, "o[%d] = %#x, want %#x", i, o[i], all);
        int32_t want = 0;
        for (int j = 0; j < B; j++) want ^= (i * 3) ^ (j < N ? x[j] : 0);
        cr_expect_eq(rows[i], want, "rows[%d] = %#x, want %#x", i, rows[i], want);
        if (i >= N) continue;
        cr_expect_eq(p[i], y[i] / 3.0f, "div_rn(%g, 3) = %.9g, want %.9g", y[i], p[i], y[i] / 3.0f);
        cr_expect_eq(p[B + i], y[i] / 7.0f, "fdiv(%g, 7) = %.9g, want %.9g", y[i], p[B + i], y[i] / 7.0f);
        cr_expect_eq(p[2 * B + i], sqrtf(y[i]), "sqrt_rn(%g) = %.9g, want %.9g", y[i], p[2 * B + i], sqrtf(y[i]));
    }
    unload(&k);
}

/* Triton's store casts the value to the pointee's type: an f32 tile stored through *f16, *bf16 (round to
 * nearest even), *i32 (toward zero), *f8e4m3 (nearest even, saturating as `as` does), and an atomic_add
 * of f32 values into *i32; load's `other` likewise; against the host's conversions. */
Test(lang_triton_values, store_converts_to_the_pointee) {
    K k;
    load_src(&k,
             "kernel k(x: *f32, h: *f16, b: *bf16, i: *i32, e: *f8e4m3, c: *i32, n: i32) {\n"
             "    let o = arange(0, 128);\n"
             "    let m = o < n;\n"
             "    let v = load(x + o, m, 0.0);\n"
             "    store(h + o, v, m);\n"
             "    store(b + o, v * 3.0, m);\n"
             "    store(i + o, v * 100.0, m);\n"
             "    store(e + o, v, m);\n"
             "    atomic_add(c + o % 4, v * 10.0, m);\n"
             "}\n",
             "k");
    enum { N = 100 };
    float x[128];
    for (int j = 0; j < N; j++) x[j] = (float)((j * 7919) % 1000 - 500) / 37.0f + 1.0f / 3.0f;
    uint64_t dx = upload(&k, x, sizeof x), dh = poisoned(&k, 256), db = poisoned(&k, 256), di = poisoned(&k, 512),
             de = poisoned(&k, 128), dc = upload(&k, (int32_t[4]){0, 0, 0, 0}, 16);
    int32_t n = N;
    launch(&k, 1, (void *[]){&dx, &dh, &db, &di, &de, &dc, &n});
    uint16_t h[128], b[128];
    int32_t iv[128], cv[4];
    uint8_t e[128];
    download(&k, h, dh, sizeof h);
    download(&k, b, db, sizeof b);
    download(&k, iv, di, sizeof iv);
    download(&k, e, de, sizeof e);
    download(&k, cv, dc, sizeof cv);
    int32_t want_c[4] = {0, 0, 0, 0};
    for (int j = 0; j < N; j++) {
        cr_assert_eq(h[j], f32_to_f16(x[j]), "f16[%d]: %04x, want %04x", j, h[j], f32_to_f16(x[j]));
        cr_assert_eq(b[j], f32_to_bf16(x[j] * 3.0f), "bf16[%d]: %04x, want %04x", j, b[j], f32_to_bf16(x[j] * 3.0f));
        cr_assert_eq(iv[j], (int32_t)(x[j] * 100.0f), "i32[%d]: %d, want %d", j, iv[j], (int32_t)(x[j] * 100.0f));
        cr_assert_eq(e[j], d_to_f8(x[j], 0), "f8e4m3[%d]: %02x, want %02x", j, e[j], d_to_f8(x[j], 0));
        want_c[j % 4] += (int32_t)(x[j] * 10.0f);
    }
    for (int j = 0; j < 4; j++) cr_assert_eq(cv[j], want_c[j], "atomic_add[%d]: %d, want %d", j, cv[j], want_c[j]);
    unload(&k);
    /* load's `other` converts too: an f32 tile as the masked-off values of an f16 load */
    load_src(&k,
             "kernel k(h: *f16, o32: *f32, n: i32) {\n"
             "    let o = arange(0, 128);\n"
             "    let fill = (o as f32) * 0.1;\n"
             "    store(o32 + o, load(h + o, o < n, fill) as f32);\n"
             "}\n",
             "k");
    uint16_t hin[128];
    for (int j = 0; j < 128; j++) hin[j] = f32_to_f16((float)j);
    uint64_t dhin = upload(&k, hin, sizeof hin), dout = poisoned(&k, 512);
    n = 40;
    launch(&k, 1, (void *[]){&dhin, &dout, &n});
    float got[128];
    download(&k, got, dout, sizeof got);
    for (int j = 0; j < 128; j++) {
        float want = j < 40 ? (float)j : (float)f16_to_d(f32_to_f16((float)j * 0.1f));
        cr_assert_eq(got[j], want, "load[%d]: %g, want %g", j, got[j], want);
    }
    unload(&k);
}


/* a op b for minimum (is_max false) or maximum with propagate_nan: num ("none") gives the non-NaN operand, else a NaN
 * gives NaN; -0.0 is below +0.0 in both (Triton's interpreter, numpy's fmax/maximum, returns either zero). */
static float min_max_ref(float a, float b, bool is_max, bool num) {
    if (isnan(a) || isnan(b)) return !num ? NAN : isnan(a) ? b : a;
    if (a == b) return (signbit(a) != 0) == is_max ? b : a;
    return (a > b) == is_max ? a : b;
}

static bool same_float(float got, float want) { return isnan(want) ? isnan(got) : got == want && !signbit(got) == !signbit(want); }

/* propagate_nan= of maximum, minimum and clamp, Triton's: "none" (Triton's default, PropagateNan.NONE) gives the
 * operand that is not NaN, as numpy's fmax/fmin in Triton's interpreter and PTX's max/min on the GPU do; "all" (and
 * no argument here) gives NaN.  clamp(x, lo, hi, propagate_nan="none") of a NaN x is lo.  Every pair of special
 * values and fresh random ones, f32 and f16, 121 of 128 lanes live, the output poisoned; the folded constants too
 * (minimum(NaN, 1.0) gave 1.0 and minimum(-0.0, 0.0) +0.0 before). */
Test(lang_triton_values, propagate_nan) {
    K k;
    load_src(&k,
             "kernel k(x: *f32, y: *f32, out: *f32, n: i32) {\n"
             "    let o = arange(0, 128);\n"
             "    let m = o < n;\n"
             "    let a = load(x + o, m);\n"
             "    let b = load(y + o, m);\n"
             "    store(out + o, maximum(a, b, propagate_nan=\"none\"), m);\n"
             "    store(out + 128 + o, minimum(a, b, propagate_nan=\"NONE\"), m);\n"
             "    store(out + 256 + o, maximum(a, b, propagate_nan=\"all\"), m);\n"
             "    store(out + 384 + o, minimum(a, b), m);\n"
             "    store(out + 512 + o, clamp(a, -1.0, b, propagate_nan=\"none\"), m);\n"
             "    store(out + 640 + o, clamp(a, -1.0, b), m);\n"
             "    store(out + 768 + o, minimum(a as f16, b as f16, propagate_nan=\"none\") as f32, m);\n"
             "    store(out + 896 + o, maximum(a, 0.0, propagate_nan=\"none\"), m);\n"
             "    let nan = 0.0 / 0.0;\n"
             "    let c = (maximum(nan, 2.0, propagate_nan=\"none\"), minimum(1.0, nan, propagate_nan=\"none\"), minimum(nan, 1.0),\n"
             "             maximum(1.0, nan), minimum(-0.0, 0.0), maximum(-0.0, 0.0), minimum(0.0, -0.0, propagate_nan=\"none\"),\n"
             "             clamp(nan, -1.0, 1.0, propagate_nan=\"none\"), clamp(nan, -1.0, 1.0), clamp(5.0, -1.0, 1.0, propagate_nan=\"none\"));\n"
             "    for i in static_range(10) { store(out + 1024 + i, c[i]); }\n"
             "}\n",
             "k");
    seed_rng();
    const float sv[] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, -NAN, 2.5f, -3.5f, 1e-45f};
    enum { S = sizeof sv / sizeof *sv, N = 121 };
    float x[128], y[128], o[1034];
    for (int i = 0; i < 128; i++) {
        x[i] = i < S * S ? sv[i / S] : (float)((urand() - 0.5) * 8);
        y[i] = i < S * S ? sv[i % S] : (float)((urand() - 0.5) * 8);
        if (i >= S * S && irand(4) == 0) (irand(2) ? x : y)[i] = NAN;
    }
    uint64_t dx = upload(&k, x, sizeof x), dy = upload(&k, y, sizeof y), d_o = poisoned(&k, sizeof o);
    int32_t n = N;
    void *params[] = {&dx, &dy, &d_o, &n};
    launch(&k, 1, params);
    download(&k, o, d_o, sizeof o);
    const char *what[] = {"maximum none", "minimum none", "maximum all", "minimum", "clamp none", "clamp", "minimum f16 none",
                          "maximum(a, 0.0) none"};
    for (int i = 0; i < 128; i++) {
        float a = x[i], b = y[i], ah = (float)f16_to_d(f32_to_f16(a)), bh = (float)f16_to_d(f32_to_f16(b));
        float want[8] = {min_max_ref(a, b, true, true), min_max_ref(a, b, false, true), min_max_ref(a, b, true, false),
                         min_max_ref(a, b, false, false), min_max_ref(min_max_ref(a, -1.0f, true, true), b, false, true),
                         min_max_ref(min_max_ref(a, -1.0f, true, false), b, false, false), min_max_ref(ah, bh, false, true),
                         min_max_ref(a, 0.0f, true, true)};
        for (int j = 0; j < 8; j++) {
            float got = o[j * 128 + i];
            if (i >= N) cr_expect(isnan(got), "%s [%d] written past n: %a", what[j], i, got);
            else cr_expect(same_float(got, want[j]), "%s(%a, %a) = %a, want %a (seed %llu)", what[j], a, b, got, want[j],
                           (unsigned long long)seed);
        }
    }
    const float cwant[10] = {2.0f, 1.0f, NAN, NAN, -0.0f, 0.0f, -0.0f, -1.0f, NAN, 1.0f};
    for (int i = 0; i < 10; i++) cr_expect(same_float(o[1024 + i], cwant[i]), "constant %d: %a, want %a", i, o[1024 + i], cwant[i]);
    unload(&k);
    static const BadSource bad[] = {
        {"kernel k(p: *f32) {\n    store(p, maximum(load(p), 1.0, propagate_nan=\"some\"));\n}\n",
         "t.tile:2:50: error: unknown propagate_nan \"some\" of 'maximum'"},
        {"kernel k(p: *f32) {\n    store(p, clamp(load(p), 0.0, 1.0, propagate_nan=1));\n}\n",
         "t.tile:2:53: error: argument 'propagate_nan' of 'clamp' must be a string such as propagate_nan=\"none\""},
        {"kernel k(p: *f32) {\n    store(p, minimum(load(p), 1.0, propagate_nan=PropagateNan.NONE));\n}\n",
         "t.tile:2:62: error: '.NONE': values have no methods or attributes here; write the string, propagate_nan=\"all\" or \"none\""},
    };
    expect_compile_errors(bad, sizeof bad / sizeof *bad);
}

/* -b of an i1 is b, as Triton computes it (0 - b in i1: -1 is true); it was an error.  Stored as i32 (0 or 1), used
 * as a where() condition; of the constant `true` it is Python's -True, the int -1 (as Triton folds it). */
Test(lang_triton_values, negate_i1) {
    K k;
    load_src(&k,
             "kernel k(x: *i32, out: *i32, n: i32) {\n"
             "    let o = arange(0, 64);\n"
             "    let b = load(x + o, o < n) > 0;\n"
             "    store(out + o, (-b) as i32, o < n);\n"
             "    store(out + 64 + o, where(-b, 5, 9), o < n);\n"
             "    store(out + 128, (-true) as i32 + 2 * (-false) as i32);\n"
             "}\n",
             "k");
    seed_rng();
    int32_t x[64], o[129];
    for (int i = 0; i < 64; i++) x[i] = irand(5) - 2;
    uint64_t dx = upload(&k, x, sizeof x), d_o = poisoned(&k, sizeof o);
    int32_t n = 61;
    void *params[] = {&dx, &d_o, &n};
    launch(&k, 1, params);
    download(&k, o, d_o, sizeof o);
    for (int i = 0; i < 64; i++) {
        cr_expect_eq(o[i], i < n ? x[i] > 0 : -1, "-(x > 0) at %d (x %d): %d", i, x[i], o[i]);
        cr_expect_eq(o[64 + i], i < n ? (x[i] > 0 ? 5 : 9) : -1, "where(-b) at %d (x %d): %d", i, x[i], o[64 + i]);
    }
    cr_expect_eq(o[128], -1, "-true (Python's -True, the int -1) as i32 + 2 * -false as i32: %d", o[128]);
    unload(&k);
}

/* Python's `not`, `and` and `or` of constexpr numbers (Triton's HAS_SEQ_IDX given 0 or 1, mamba's state passing):
 * their truth values, so `!HAS` and `A && B` with A, B integer (or float) consts pick code as in Triton (they were
 * errors: operands must be i1); a run-time integer still needs a comparison (tests/test_lang.c, logical_needs_i1). */
Test(lang_triton_values, not_and_or_of_constexpr_numbers) {
    K k;
    const char *defs[] = {"A=1", "B=0", "F=0.5", NULL};
    load_with(&k,
              "kernel k(out: *i32, n: i32, const A: constexpr, const B: constexpr, const F: constexpr) {\n"
              "    let o = arange(0, 32);\n"
              "    let v = o * 0;\n"
              "    if !B { v += 1; }\n"
              "    if !A { v += 2; }\n"
              "    if A && !B { v += 4; }\n"
              "    if A && B { v += 8; }\n"
              "    if B || F { v += 16; }\n"
              "    v = where((o < n) && A, v + 32, v);\n"
              "    v = where(!0.0 || (o > 3 && B), v + 64, v);\n"
              "    store(out + o, v, o < n);\n"
              "}\n",
              "k", NULL, defs, NULL);
    int32_t o[32];
    uint64_t d_o = poisoned(&k, sizeof o);
    int32_t n = 29;
    void *params[] = {&d_o, &n};
    launch(&k, 1, params);
    download(&k, o, d_o, sizeof o);
    for (int i = 0; i < 32; i++)
        if (i < n) cr_expect_eq(o[i], 1 + 4 + 16 + 32 + 64, "o[%d]: %d", i, o[i]);
    unload(&k);
}

/* view(x, shape), Triton's deprecated spelling of reshape(x, shape, can_reorder=True): the shape as a list, a tuple
 * or separate arguments; the elements keep their order (as in Triton's interpreter), so row sums of a [5, 24] view of
 * 120 loaded values are sums of consecutive runs of 24. */
Test(lang_triton_values, view) {
    K k;
    load_src(&k,
             "kernel k(x: *f32, out: *f32) {\n"
             "    let v = load(x + arange(0, 128), arange(0, 128) < 120, 0.0);\n"
             "    let w = view(reshape(v, [16, 8]), [4, 32]);\n"
             "    store(out + arange(0, 4), sum(w, 1));\n"
             "    store(out + 4 + arange(0, 8), sum(view(v, 8, 16), 1));\n"
             "    store(out + 12 + arange(0, 2), sum(view(v, (2, 64)), 1));\n"
             "}\n",
             "k");
    seed_rng();
    float x[128], o[14];
    for (int i = 0; i < 128; i++) x[i] = i < 120 ? (float)(irand(64) - 32) : NAN;
    uint64_t dx = upload(&k, x, sizeof x), d_o = poisoned(&k, sizeof o);
    void *params[] = {&dx, &d_o};
    launch(&k, 1, params);
    download(&k, o, d_o, sizeof o);
    const int runs[3] = {32, 16, 64}, first[3] = {0, 4, 12}, count[3] = {4, 8, 2};
    for (int v = 0; v < 3; v++)
        for (int r = 0; r < count[v]; r++) {
            double want = 0; /* small integers: the sum is exact in any order */
            for (int c = 0; c < runs[v]; c++) want += r * runs[v] + c < 120 ? x[r * runs[v] + c] : 0;
            cr_expect_eq(o[first[v] + r], (float)want, "view %d row %d: %g, want %g", v, r, o[first[v] + r], want);
        }
    unload(&k);
    static const BadSource bad[] = {
        {"kernel k(p: *f32) {\n    store(p + arange(0, 8), view(load(p + arange(0, 16)), 2, 4));\n}\n",
         "t.tile:2:59: error: cannot reshape [16] (16 elements) into [2, 4] (8 elements)"},
    };
    expect_compile_errors(bad, sizeof bad / sizeof *bad);
}

/* Integer '/' and '%' with operands of different signedness are errors, as Triton's `//` and `%` are (its
 * computation_type_impl): two run-time integers (an i1 is unsigned), an i1 with an integer constant, an unsigned
 * value with a negative constant; each computed the unsigned quotient before (i32 -7 / u32 2 was 2147483644).  A
 * constant of another signedness takes the value's type, and the quotients and remainders of negatives truncate
 * toward zero, as Triton's interpreter gives them (i32: -7 / 2 = -3, -7 % 2 = -1, 7 % -3 = 1). */
Test(lang_triton_values, division_signedness) {
    static const BadSource bad[] = {
        {"kernel k(p: *i32, q: *u32) {\n    store(p, load(p) / load(q));\n}\n",
         "t.tile:2:22: error: '/' of 'i32' and 'u32': integers of different signedness are refused, as Triton refuses them"},
        {"kernel k(p: *i32, q: *u8) {\n    store(p, load(q) % load(p));\n}\n",
         "t.tile:2:22: error: '%' of 'u8' and 'i32': integers of different signedness are refused"},
        {"kernel k(p: *i64, n: i32) {\n    let b = load(p) > 0;\n    store(p, load(p) / b);\n}\n",
         "t.tile:3:22: error: '/' of 'i64' and 'i1': integers of different signedness (an i1 is unsigned) are refused"},
        {"kernel k(p: *i32) {\n    store(p, (load(p) > 0) % 2);\n}\n",
         "t.tile:2:28: error: '%' of an i1 and the integer constant 2 is refused"},
        {"kernel k(p: *u32) {\n    store(p, load(p) / -4);\n}\n",
         "t.tile:2:22: error: '/' of an unsigned 'u32' and the negative constant -4 is refused, as Triton refuses it (the constant "
         "would be taken as the u32 4294967292)"},
        {"kernel k(p: *u64, n: i32) {\n    let v = load(p);\n    v %= -3;\n    store(p, v);\n}\n",
         "t.tile:3:7: error: '%' of an unsigned 'u64' and the negative constant -3 is refused"},
        {"kernel k(p: *i32, n: u32) {\n    store(p, n / load(p));\n}\n", "t.tile:2:16: error: '/' of 'u32' and 'i32'"},
        /* a comparison with a negative constant: x_u32 > -1 was false for every x */
        {"kernel k(p: *u32, q: *i32) {\n    store(q, (load(p) > -1) as i32);\n}\n",
         "t.tile:2:23: error: '>' of an unsigned 'u32' and the negative constant -1 is refused"},
        {"kernel k(p: *u8, q: *i32) {\n    store(q, (-3 == load(p)) as i32);\n}\n",
         "t.tile:2:18: error: '==' of an unsigned 'u8' and the negative constant -3 is refused"},
    };
    expect_compile_errors(bad, sizeof bad / sizeof *bad);
    K k;
    load_src(&k,
             "kernel k(x: *i32, y: *i32, u: *u32, v: *u16, out: *i32, uo: *u32, n: i32) {\n"
             "    let o = arange(0, 64);\n"
             "    let m = o < n;\n"
             "    let a = load(x + o, m, 1);\n"
             "    let b = load(y + o, m, 1);\n"
             "    let c = load(u + o, m, 1);\n"
             "    let d = load(v + o, m, 1);\n"
             "    store(out + o, a / b, m);\n"
             "    store(out + 64 + o, a % b, m);\n"
             "    store(out + 128 + o, a / -3 + a % -3 * 1000, m);\n"
             "    store(uo + o, c / 7 + c % d, m);\n"
             "    store(uo + 64 + o, c / 0xFFFFFFF0, m);\n"
             "    let e = load(v + o, m, 1) > 100;\n"
             "    store(uo + 128 + o, (e as u32) + (c % (d as u32)) / (e | true) as u32 + ((c >= 0) as u32 - 1) * 7, m);\n"
             "}\n",
             "k");
    seed_rng();
    int32_t x[64], y[64], o[192];
    uint32_t u[64], uo[192];
    uint16_t v[64];
    for (int i = 0; i < 64; i++) {
        x[i] = irand(2001) - 1000, y[i] = irand(41) - 20;
        if (y[i] == 0) y[i] = 3;
        u[i] = (uint32_t)(urand() * 4294967295.0), v[i] = (uint16_t)(irand(65535) + 1);
    }
    x[0] = -7, y[0] = 2, x[1] = 7, y[1] = -3, x[2] = INT32_MIN, y[2] = 7, u[3] = 0xFFFFFFFFu;
    uint64_t dx = upload(&k, x, sizeof x), dy = upload(&k, y, sizeof y), du = upload(&k, u, sizeof u), dv = upload(&k, v, sizeof v);
    uint64_t d_o = poisoned(&k, sizeof o), duo = poisoned(&k, sizeof uo);
    int32_t n = 59;
    void *params[] = {&dx, &dy, &du, &dv, &d_o, &duo, &n};
    launch(&k, 1, params);
    download(&k, o, d_o, sizeof o);
    download(&k, uo, duo, sizeof uo);
    cr_expect(o[0] == -3 && o[64] == -1 && o[1] == -2 && o[65] == 1, "-7 / 2 = %d, -7 %% 2 = %d, 7 / -3 = %d, 7 %% -3 = %d", o[0],
              o[64], o[1], o[65]);
    for (int i = 0; i < 64; i++) {
        bool live = i < n;
        /* C's / and % truncate toward zero, as Triton's on integer tensors */
        cr_expect_eq(o[i], live ? x[i] / y[i] : -1, "%d / %d: %d", x[i], y[i], o[i]);
        cr_expect_eq(o[64 + i], live ? x[i] % y[i] : -1, "%d %% %d: %d", x[i], y[i], o[64 + i]);
        cr_expect_eq(o[128 + i], live ? x[i] / -3 + x[i] % -3 * 1000 : -1, "%d / -3 + %d %% -3 * 1000: %d", x[i], x[i], o[128 + i]);
        cr_expect_eq(uo[i], live ? u[i] / 7 + u[i] % v[i] : 0xFFFFFFFFu, "%u / 7 + %u %% %u: %u", u[i], u[i], v[i], uo[i]);
        cr_expect_eq(uo[64 + i], live ? u[i] / 0xFFFFFFF0u : 0xFFFFFFFFu, "%u / 0xFFFFFFF0: %u", u[i], uo[64 + i]);
        uint32_t e = v[i] > 100;
        cr_expect_eq(uo[128 + i], live ? e + u[i] % v[i] : 0xFFFFFFFFu, "i1 %u: %u", e, uo[128 + i]);
    }
    unload(&k);
}

/* Triton folds `/` and `%` (its `//` and `%`) of two constexprs with Python's operators, which floor (-7 // 2 is -4,
 * -7 % 2 is 1, the remainder taking the divisor's sign, floats too: -7.5 % 2.0 is 0.5), while a run-time value's
 * truncate (sdiv, srem, frem), and an assignment makes a run-time scalar of a constexpr (`x = A` then `x // 2`
 * truncates).  Random pairs of both signs; expected values from floor() of the double quotient. */
Test(lang_triton_values, constexpr_division_floors) {
    seed_rng();
    enum { N = 12 };
    int32_t a[N], b[N];
    Str src = {0};
    for (int i = 0; i < N; i++) {
        a[i] = irand(2001) - 1000, b[i] = irand(41) - 20;
        if (b[i] == 0) b[i] = -7;
        if (i < 4) a[i] = i & 1 ? 7 : -7, b[i] = i & 2 ? -2 : 2; /* the four sign pairs */
        str_printf(&src, "const A%d = %d;\nconst B%d = %d;\n", i, a[i], i, b[i]);
    }
    str_puts(&src, "fn quo(a, b) { return a / b; }\n"
                   "fn half_const(const a) { return a / 2; }\n"
                   "const F = -7.5;\n"
                   "kernel k(o: *i32, rb: *i32, fo: *f32, const C: i32 = -9) {\n");
    for (int i = 0; i < N; i++)
        str_printf(&src,
                   "    store(o + %d, A%d / B%d); store(o + %d, A%d %% B%d);\n"
                   "    let x%d = A%d; store(o + %d, x%d / B%d); store(o + %d, x%d %% B%d);\n"
                   "    store(o + %d, (%d) / (%d)); store(o + %d, quo(A%d, B%d));\n"
                   "    store(o + %d, A%d / load(rb + %d)); store(o + %d, A%d %% load(rb + %d));\n",
                   8 * i, i, i, 8 * i + 1, i, i, i, i, 8 * i + 2, i, i, 8 * i + 3, i, i, 8 * i + 4, a[i], b[i], 8 * i + 5, i, i,
                   8 * i + 6, i, i, 8 * i + 7, i, i);
    str_printf(&src, "    store(o + %d, C / 4); store(o + %d, C %% 4); store(o + %d, -C / -4);\n", 8 * N, 8 * N + 1, 8 * N + 2);
    str_printf(&src, "    let h = -9; store(o + %d, quo(h, 2)); store(o + %d, half_const(h));\n", 8 * N + 3, 8 * N + 4);
    str_puts(&src, "    store(fo, F % 2.0); store(fo + 1, 7.5 % -2.0);\n"
                   "    let y = F; store(fo + 2, y % 2.0); store(fo + 3, -F % -2.0);\n}\n");
    K k;
    load_src(&k, src.buf, "k");
    str_free(&src);
    int32_t o[8 * N + 5];
    float fo[4];
    uint64_t d_o = poisoned(&k, sizeof o), drb = upload(&k, b, sizeof b), dfo = poisoned(&k, sizeof fo);
    void *params[] = {&d_o, &drb, &dfo};
    launch(&k, 1, params);
    download(&k, o, d_o, sizeof o);
    download(&k, fo, dfo, sizeof fo);
    for (int i = 0; i < N; i++) {
        int32_t fq = (int32_t)floor((double)a[i] / b[i]), fm = a[i] - b[i] * fq, tq = a[i] / b[i], tm = a[i] % b[i];
        cr_expect(o[8 * i] == fq && o[8 * i + 1] == fm, "const %d / %d: %d and %d, expected %d and %d", a[i], b[i], o[8 * i],
                  o[8 * i + 1], fq, fm);
        cr_expect(o[8 * i + 2] == tq && o[8 * i + 3] == tm, "let x = %d: x / %d: %d and %d, expected %d and %d", a[i], b[i],
                  o[8 * i + 2], o[8 * i + 3], tq, tm);
        cr_expect(o[8 * i + 4] == fq && o[8 * i + 5] == fq, "literals %d / %d: %d, quo(): %d, expected %d", a[i], b[i], o[8 * i + 4],
                  o[8 * i + 5], fq);
        cr_expect(o[8 * i + 6] == tq && o[8 * i + 7] == tm, "const %d / run-time %d: %d and %d, expected %d and %d", a[i], b[i],
                  o[8 * i + 6], o[8 * i + 7], tq, tm);
    }
    cr_expect(o[8 * N] == -3 && o[8 * N + 1] == 3 && o[8 * N + 2] == -3, "const C = -9: C / 4 = %d, C %% 4 = %d, -C / -4 = %d",
              o[8 * N], o[8 * N + 1], o[8 * N + 2]);
    cr_expect(o[8 * N + 3] == -4 && o[8 * N + 4] == -5, "let h = -9: h / 2 in a fn = %d (want -4, a run-time scalar's), through a const "
              "parameter %d (want -5, a constexpr's)", o[8 * N + 3], o[8 * N + 4]);
    cr_expect(fo[0] == 0.5f && fo[1] == -0.5f && fo[2] == -1.5f && fo[3] == -0.5f,
              "-7.5 %% 2.0 = %g, 7.5 %% -2.0 = %g, let y = -7.5: y %% 2.0 = %g, 7.5 %% -2.0 = %g", fo[0], fo[1], fo[2], fo[3]);
    unload(&k);
}

/* Triton's tl.add, tl.sub and tl.mul (with sanitize_overflow=, which checks only in Triton's debug mode) are the
 * operators, promotion and pointer arithmetic included; they did not exist. */
Test(lang_triton_values, add_sub_mul) {
    K k;
    load_src(&k,
             "kernel k(x: *i32, y: *f16, out: *f32, n: i32) {\n"
             "    let o = arange(0, 64);\n"
             "    let m = o < n;\n"
             "    let a = load(add(x, o), m, 0);\n"
             "    let b = load(y + o, m, 0.0);\n"
             "    store(out + o, add(a, b) as f32, m);\n"
             "    store(out + 64 + o, sub(a, 3, sanitize_overflow=false) as f32, m);\n"
             "    store(add(out, 128) + o, mul(b, 2.5) as f32 + mul(a, a) as f32, m);\n"
             "}\n",
             "k");
    seed_rng();
    int32_t x[64];
    uint16_t y[64];
    float o[192];
    for (int i = 0; i < 64; i++) x[i] = irand(201) - 100, y[i] = f32_to_f16((float)(irand(64) - 32) / 4);
    uint64_t dx = upload(&k, x, sizeof x), dy = upload(&k, y, sizeof y), d_o = poisoned(&k, sizeof o);
    int32_t n = 57;
    void *params[] = {&dx, &dy, &d_o, &n};
    launch(&k, 1, params);
    download(&k, o, d_o, sizeof o);
    for (int i = 0; i < 64; i++) {
        double b = f16_to_d(y[i]);
        /* i32 + f16 is f16 (exact here: |sum| < 200 in quarters, 10 bits), f16 * 2.5 exact in f16 */
        float w[3] = {(float)(x[i] + b), (float)(x[i] - 3), (float)(b * 2.5 + (double)x[i] * x[i])};
        for (int j = 0; j < 3; j++)
            if (i >= n) cr_expect(isnan(o[j * 64 + i]), "[%d][%d] written past n", j, i);
            else cr_expect_eq(o[j * 64 + i], w[j], "[%d][%d]: %g, want %g", j, i, o[j * 64 + i], w[j]);
    }
    unload(&k);
}

/* topk(x, k) is Triton's: the k largest values along the last dimension, largest first (it gave the tuple
 * (values, indices), so a port's `store(p, topk(x, 4))` was an error); descending=false gives the k smallest,
 * smallest first; return_indices=true gives (values, indices), equal values the lower index first.  Rows of
 * small random integers, so ties are many. */
static int cmp_desc_then_index(const void *a, const void *b) {
    const int32_t *x = a, *y = b; /* (value, index) pairs */
    return x[0] != y[0] ? (x[0] < y[0]) - (x[0] > y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

static int cmp_asc_then_index(const void *a, const void *b) {
    const int32_t *x = a, *y = b;
    return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

Test(lang_triton_values, topk_is_triton_s) {
    enum { R = 4, C = 16, KK = 4 };
    K k;
    load_src(&k,
             "kernel k(x: *i32, o: *i32) {\n"
             "    let r = arange(0, 4)[:, None];\n"
             "    let v = load(x + r * 16 + arange(0, 16)[None, :]);\n"
             "    let q = r * 4 + arange(0, 4)[None, :];\n"
             "    store(o + q, topk(v, 4));\n"
             "    store(o + 16 + q, topk(v, 4, descending=false));\n"
             "    let (tv, ti) = topk(v, 4, return_indices=true);\n"
             "    store(o + 32 + q, tv);\n"
             "    store(o + 48 + q, ti);\n"
             "    let (av, ai) = topk(v, 4, dim=1, descending=false, return_indices=true);\n"
             "    store(o + 64 + q, ai);\n"
             "}\n",
             "k");
    seed_rng();
    int32_t x[R * C], o[80];
    for (int i = 0; i < R * C; i++) x[i] = irand(9) - 4;
    uint64_t dx = upload(&k, x, sizeof x), d_o = poisoned(&k, sizeof o);
    void *params[] = {&dx, &d_o};
    launch(&k, 1, params);
    download(&k, o, d_o, sizeof o);
    for (int r = 0; r < R; r++) {
        int32_t d[C][2], a[C][2];
        for (int c = 0; c < C; c++) d[c][0] = a[c][0] = x[r * C + c], d[c][1] = a[c][1] = c;
        qsort(d, C, sizeof d[0], cmp_desc_then_index);
        qsort(a, C, sizeof a[0], cmp_asc_then_index);
        for (int j = 0; j < KK; j++) {
            int q = r * KK + j;
            cr_expect_eq(o[q], d[j][0], "row %d: topk[%d] = %d, want %d", r, j, o[q], d[j][0]);
            cr_expect_eq(o[16 + q], a[j][0], "row %d: smallest[%d] = %d, want %d", r, j, o[16 + q], a[j][0]);
            cr_expect(o[32 + q] == d[j][0] && o[48 + q] == d[j][1], "row %d: (value, index)[%d] = (%d, %d), want (%d, %d)", r, j,
                      o[32 + q], o[48 + q], d[j][0], d[j][1]);
            cr_expect_eq(o[64 + q], a[j][1], "row %d: smallest's index[%d] = %d, want %d", r, j, o[64 + q], a[j][1]);
        }
    }
    unload(&k);
}

/* A constant that a `let` holds, a cast constant and to_tensor(c) are typed scalars in promotion, as Triton's
 * assignment, tl.cast and tl.to_tensor make them (an i32, u32 past i32, f32 rounded to f32, f64 outside f32's
 * normal range); a literal is weak (it takes the other operand's type).  They took the other operand's type as
 * a literal does: x_i8 + one wrapped in i8 (-56 for 100), x_f16 * c rounded to f16, x_f32 * tiny flushed to f32.
 * Values against what Triton computes, on random inputs of a size that is not the tile's. */
Test(lang_triton_values, held_constants_are_typed_scalars) {
    K k;
    load_src(&k,
             "kernel k(x: *i8, u: *u8, h: *f16, f: *f32, d: *f64, o: *f64, n: i32) {\n"
             "    let i = arange(0, 64);\n"
             "    let m = i < n;\n"
             "    let a = load(x + i, m, 0);\n"
             "    let b = load(u + i, m, 0);\n"
             "    let hv = load(h + i, m, 0.0);\n"
             "    let fv = load(f + i, m, 0.0);\n"
             "    let dv = load(d + i, m, 0.0);\n"
             "    let one = 100;\n"
             "    let w = 1;\n"
             "    let c = 0.1;\n"
             "    let big = 3000000000;\n"
             "    let tiny = 1e-40;\n"
             "    let lim = 200;\n"
             "    let k1 = 1000;\n"
             "    store(o + i, (a + one) as f64, m);\n"
             "    store(o + 64 + i, (a + 100) as f64, m);\n"
             "    store(o + 128 + i, (a + (100 as i32)) as f64, m);\n"
             "    store(o + 192 + i, (a + to_tensor(100)) as f64, m);\n"
             "    store(o + 256 + i, (b + w) as f64, m);\n"
             "    store(o + 320 + i, (b + 1) as f64, m);\n"
             "    store(o + 384 + i, (hv * c) as f64, m);\n"
             "    store(o + 448 + i, (hv * 0.1) as f64, m);\n"
             "    store(o + 512 + i, (a + big) as f64, m);\n"
             "    store(o + 576 + i, (fv * tiny) as f64, m);\n"
             "    store(o + 640 + i, (dv * c) as f64, m);\n"
             "    store(o + 704 + i, (dv * 0.1) as f64, m);\n"
             "    store(o + 768 + i, where(a < lim, 1, 0) as f64, m);\n"
             "    store(o + 832 + i, where(a > 0, a, k1) as f64, m);\n"
             "    store(o + 896 + i, maximum(hv, c) as f64, m);\n"
             "    let s = load(x) + w;\n"
             "    let h16: f16 = 1000.0;\n"
             "    let t = 0.1;\n"
             "    store(o + 960, s as f64);\n"
             "    store(o + 961, (h16 * 1000.0) as f64);\n"
             "    store(o + 962, (t * 3.0) as f64);\n"
             "    store(o + 963, ((-7 as i32) / 2) as f64);\n"
             "    store(o + 964, (100 as i8 * 2) as f64);\n"
             "    store(o + 965, (one * 2 + 0.5) as f64);\n"
             "}\n",
             "k");
    seed_rng();
    enum { N = 64, OUT = 966 };
    int8_t x[N];
    uint8_t u[N];
    uint16_t h[N];
    float f[N];
    double d[N], o[OUT];
    for (int i = 0; i < N; i++) {
        x[i] = (int8_t)(irand(256) - 128), u[i] = (uint8_t)irand(256);
        h[i] = f32_to_f16((float)(urand() * 8));
        f[i] = (float)(urand() * 4), d[i] = urand() * 4;
    }
    x[0] = 127, x[1] = -128, x[2] = 100, u[0] = 255, u[1] = 0;
    uint64_t dx = upload(&k, x, sizeof x), du = upload(&k, u, sizeof u), dh = upload(&k, h, sizeof h), df = upload(&k, f, sizeof f),
             dd = upload(&k, d, sizeof d), d_o = poisoned(&k, sizeof o);
    int32_t n = 57;
    void *params[] = {&dx, &du, &dh, &df, &dd, &d_o, &n};
    launch(&k, 1, params);
    download(&k, o, d_o, sizeof o);
    const double f16_tenth = 0.0999755859375; /* 0.1 as f16: what a weak 0.1 is times an f16 */
    for (int i = 0; i < N; i++) {
        double hd = f16_to_d(h[i]);
        double w[15] = {
            x[i] + 100,                                  /* i32 */
            (int8_t)(x[i] + 100),                        /* i8, wrapped */
            x[i] + 100,                                  /* a cast constant: i32 */
            x[i] + 100,                                  /* to_tensor: i32 */
            u[i] + 1,                                    /* i32 (u8 with an i32) */
            (uint8_t)(u[i] + 1),                         /* u8, wrapped */
            (float)hd * 0.1f,                            /* f32: the f16 widened, times 0.1f */
            f16_to_d(f32_to_f16((float)(hd * f16_tenth))), /* f16 (the exact product rounded once) */
            (double)((uint32_t)(int32_t)x[i] + 3000000000u), /* u32 */
            (double)f[i] * 1e-40,                        /* f64 */
            d[i] * (double)0.1f,                         /* f64 times the f32 0.1 */
            d[i] * 0.1,                                  /* the literal takes f64 whole */
            1,                                           /* i8 < 200 in i32: always */
            x[i] > 0 ? x[i] : 1000,                      /* i32 */
            fmax((float)hd, 0.1f),                       /* f32 */
        };
        for (int j = 0; j < 15; j++)
            if (i >= n) cr_expect(isnan(o[j * 64 + i]), "[%d][%d] written past n", j, i);
            else cr_expect_eq(o[j * 64 + i], w[j], "[%d][%d] (x %d, u %u, h %g, f %g, d %g): %.17g, want %.17g (seed %llu)", j, i,
                              x[i], u[i], hd, f[i], d[i], o[j * 64 + i], w[j], (unsigned long long)seed);
    }
    cr_expect_eq(o[960], 128, "load(x) + held 1 of the i8 127 is the i32 128: %g", o[960]);
    cr_expect(isinf(o[961]) && o[961] > 0, "a held f16 1000 times the literal 1000 is an f16 (inf): %g", o[961]);
    cr_expect_eq(o[962], (double)(0.1f * 3.0f), "a held 0.1 is the f32 0.1, its product with 3.0 an f32: %.17g", o[962]);
    cr_expect_eq(o[963], -3, "(-7 as i32) / 2 truncates, a typed scalar's: %g", o[963]);
    cr_expect_eq(o[964], -56, "(100 as i8) * 2 is an i8: %g", o[964]);
    cr_expect_eq(o[965], 200.5, "held 100 * 2 + 0.5: %g", o[965]);
    unload(&k);
}

/* abs of a constant folds as the run-time abs computes: a typed scalar (a held or cast constant) stays typed and
 * wraps in its type.  It lost its type (abs(one) with `let one = 100` was a weak 100, so x_i8 + abs(one) wrapped in
 * i8 to -56 where x_i8 + one is the i32 200), gave 128 as an "i8" for the i8 -128 (an error at its use: "the
 * constant 128 is out of range for 'i8'"), and 1 for the u64 2^64 - 1.  Against the run-time abs of the same
 * values, on random i8 inputs. */
Test(lang_triton_values, abs_of_constants_keeps_their_type) {
    K k;
    load_src(&k,
             "kernel k(x: *i8, o: *f64, n: i32) {\n"
             "    let i = arange(0, 64);\n"
             "    let m = i < n;\n"
             "    let a = load(x + i, m, 0);\n"
             "    let one = 100;\n"
             "    let c8 = -128 as i8;\n"
             "    let r8 = load(x) * 0 + c8;\n"
             "    store(o + i, (a + abs(one)) as f64, m);\n"
             "    store(o + 64 + i, (a + abs(c8)) as f64, m);\n"
             "    store(o + 128 + i, (a + abs(r8)) as f64, m);\n"
             "    static_assert(dtype_of(abs(c8)) == i8 && dtype_of(abs(-5 as i16)) == i16, \"abs keeps the type\");\n"
             "    store(o + 192, abs(c8) as f64);\n"
             "    store(o + 193, abs(-32768 as i16) as f64);\n"
             "    store(o + 194, abs(-2147483648 as i32) as f64);\n"
             "    store(o + 195, (abs(0xFFFFFFFFFFFFFFFF) == 0xFFFFFFFFFFFFFFFF) as f64);\n"
             "    store(o + 196, abs(-2147483648) as f64);\n"
             "    store(o + 197, abs(-2.5 as f16) as f64);\n"
             "}\n",
             "k");
    seed_rng();
    enum { N = 64, OUT = 198 };
    int8_t x[N];
    double o[OUT];
    for (int i = 0; i < N; i++) x[i] = (int8_t)(irand(256) - 128);
    x[0] = 5;
    uint64_t dx = upload(&k, x, sizeof x), d_o = poisoned(&k, sizeof o);
    int32_t n = 53;
    void *params[] = {&dx, &d_o, &n};
    launch(&k, 1, params);
    download(&k, o, d_o, sizeof o);
    for (int i = 0; i < N; i++) {
        double w[3] = {x[i] + 100, (int8_t)(x[i] - 128), (int8_t)(x[i] - 128)}; /* i32; i8 + i8 wraps in i8 */
        for (int j = 0; j < 3; j++)
            if (i >= n) cr_expect(isnan(o[j * 64 + i]), "[%d][%d] written past n", j, i);
            else cr_expect_eq(o[j * 64 + i], w[j], "[%d][%d] (x %d): %.17g, want %.17g (seed %llu)", j, i, x[i], o[j * 64 + i], w[j],
                              (unsigned long long)seed);
    }
    cr_expect_eq(o[192], -128, "abs of the i8 -128 wraps, as at run time: %g", o[192]);
    cr_expect_eq(o[193], -32768, "abs of the i16 -32768 wraps: %g", o[193]);
    cr_expect_eq(o[194], -2147483648.0, "abs of the i32 -2147483648 wraps: %g", o[194]);
    cr_expect_eq(o[195], 1, "abs of a u64 is itself");
    cr_expect_eq(o[196], 2147483648.0, "abs of the weak -2147483648 is Python's 2147483648 (as '-' lifts it): %g", o[196]);
    cr_expect_eq(o[197], 2.5, "abs of an f16: %g", o[197]);
    unload(&k);
}

/* Conversions of constants as Triton 3.9 computes them (each value read off its TTIR):
 *  - a held constant computes in its type and wraps, as Triton's run-time scalar does: `let a = 2000000000; a + a`
 *    is the i32 -294967296 (it was lifted to the i64 4000000000), a * 2 likewise, a << 3 wraps in i32, -m of the held
 *    i32 -2147483648 is itself, a held i64 2^62 doubled wraps to i64's least value (it was an error), while the weak
 *    2000000000 * 2 stays the exact 4000000000;
 *  - `true + true` is Python's 2 and `-true` its -1; a held true plus itself is the i1 0;
 *  - a constant stored, a masked load's `other` and `full` convert by a cast, as Triton's: 1000 into i8 is -24 (it
 *    was an error);
 *  - a weak float of a higher kind takes part with its to_tensor type: x_i32 * 1e300 is an f64 (it was the f32 inf),
 *    minimum(1e300, 1.0) an f64. */
Test(lang_triton_values, constants_convert_as_triton) {
    K k;
    load_src(&k,
             "kernel k(o: *i64, p8: *i8, x: *i32, d: *f64, n: i32) {\n"
             "    let a = 2000000000;\n"
             "    store(o, a + a);\n"
             "    let b = 100000;\n"
             "    store(o + 1, b * b);\n"
             "    let m = -2147483648;\n"
             "    store(o + 2, -m);\n"
             "    let big = 4611686018427387904;\n"
             "    store(o + 3, big + big);\n"
             "    let t = true;\n"
             "    store(o + 4, t + t);\n"
             "    store(o + 5, true + true);\n"
             "    store(o + 6, -true);\n"
             "    let u = 3000000000;\n"
             "    store(o + 7, -u);\n"
             "    let s = 3;\n"
             "    store(o + 8, a << s);\n"
             "    store(o + 9, a * 2);\n"
             "    store(o + 10, 2000000000 * 2);\n"
             "    store(d, minimum(1e300, 1.0));\n"
             "    store(d + 1, load(x) * 1e300);\n"
             "    let c = 1000;\n"
             "    store(p8, c);\n"
             "    store(p8 + 1, 1000);\n"
             "    let i = arange(0, 8);\n"
             "    store(p8 + 2 + i, full([8], c, i8), i < n);\n"
             "    store(p8 + 10 + i, load(p8 + 20 + i, i < 3, c), i < n);\n"
             "}\n",
             "k");
    int64_t o[11];
    int8_t p8[28];
    double d[2];
    int32_t x = 3;
    for (int i = 0; i < 28; i++) p8[i] = (int8_t)(i + 1);
    uint64_t d_o = poisoned(&k, sizeof o), dp = upload(&k, p8, sizeof p8), dx = upload(&k, &x, sizeof x), dd = poisoned(&k, sizeof d);
    int32_t n = 7;
    void *params[] = {&d_o, &dp, &dx, &dd, &n};
    launch(&k, 1, params);
    download(&k, o, d_o, sizeof o);
    download(&k, p8, dp, sizeof p8);
    download(&k, d, dd, sizeof d);
    const int64_t want[11] = {-294967296, 1410065408, -2147483648LL, INT64_MIN, 0, 2, -1, 1294967296, -1179869184, -294967296,
                              4000000000LL};
    for (int i = 0; i < 11; i++) cr_expect_eq(o[i], want[i], "o[%d]: %lld, want %lld", i, (long long)o[i], (long long)want[i]);
    cr_expect_eq(d[0], 1.0, "minimum(1e300, 1.0): %.17g", d[0]);
    cr_expect_eq(d[1], 3e300, "x_i32 * 1e300 in f64: %.17g", d[1]);
    cr_expect_eq(p8[0], -24, "store of a held 1000 through *i8: %d", p8[0]);
    cr_expect_eq(p8[1], -24, "store of the literal 1000 through *i8: %d", p8[1]);
    for (int i = 0; i < 8; i++) {
        cr_expect_eq(p8[2 + i], i < n ? -24 : 3 + i, "full([8], c, i8)[%d]: %d", i, p8[2 + i]);
        int8_t w = i >= n ? (int8_t)(11 + i) : i < 3 ? (int8_t)(21 + i) : -24;
        cr_expect_eq(p8[10 + i], w, "load(.., other=c)[%d]: %d, want %d", i, p8[10 + i], w);
    }
    unload(&k);
}

/* Triton's >> is arithmetic when its left operand is signed, whatever type the two promote to: x_i32 >> s_u32 shifts
 * the u32 bits of x arithmetically (it was a logical shift), a typed i8 -56 >> a u8 7 is the u8 255 (it was 1); an
 * unsigned left operand with a signed right one is logical, as before. */
Test(lang_triton_values, shift_right_by_the_left_operands_signedness) {
    K k;
    load_src(&k,
             "kernel k(x: *i32, s: *u32, b: *i8, t: *u8, o: *i64, n: i32) {\n"
             "    let i = arange(0, 64);\n"
             "    let m = i < n;\n"
             "    let xv = load(x + i, m, 0);\n"
             "    let sv = load(s + i, m, 0);\n"
             "    store(o + i, xv >> sv, m);\n"
             "    store(o + 64 + i, load(b + i, m, 0) >> load(t + i, m, 0), m);\n"
             "    store(o + 128 + i, (xv as u32) >> (sv as i32), m);\n"
             "    store(o + 192, (200 as i8) >> (7 as u8));\n"
             "    store(o + 193, (-16 as i32) >> (2 as u32));\n"
             "}\n",
             "k");
    seed_rng();
    enum { N = 64 };
    int32_t x[N];
    uint32_t s[N];
    int8_t b[N];
    uint8_t t[N];
    int64_t o[194];
    for (int i = 0; i < N; i++) {
        x[i] = (int32_t)(urand() * 2147483647.0), s[i] = (uint32_t)irand(32);
        b[i] = (int8_t)(irand(256) - 128), t[i] = (uint8_t)irand(8);
    }
    x[0] = -16, s[0] = 2, b[0] = -56, t[0] = 7;
    uint64_t dx = upload(&k, x, sizeof x), ds = upload(&k, s, sizeof s), db = upload(&k, b, sizeof b), dt = upload(&k, t, sizeof t),
             d_o = poisoned(&k, sizeof o);
    int32_t n = 61;
    void *params[] = {&dx, &ds, &db, &dt, &d_o, &n};
    launch(&k, 1, params);
    download(&k, o, d_o, sizeof o);
    for (int i = 0; i < N; i++) {
        int64_t w0 = i < n ? (int64_t)(uint32_t)(x[i] >> s[i]) : -1;
        int64_t w1 = i < n ? (int64_t)(uint8_t)(b[i] >> t[i]) : -1;
        int64_t w2 = i < n ? (int64_t)((uint32_t)x[i] >> s[i]) : -1;
        cr_expect_eq(o[i], w0, "x_i32 >> s_u32 at %d (%d >> %u): %lld, want %lld (seed %llu)", i, x[i], s[i], (long long)o[i],
                     (long long)w0, (unsigned long long)seed);
        cr_expect_eq(o[64 + i], w1, "b_i8 >> t_u8 at %d (%d >> %u): %lld, want %lld", i, b[i], t[i], (long long)o[64 + i], (long long)w1);
        cr_expect_eq(o[128 + i], w2, "x_u32 >> s_i32 at %d: %lld, want %lld", i, (long long)o[128 + i], (long long)w2);
    }
    cr_expect_eq(o[0], 4294967292LL, "-16 >> 2 in u32: %lld", (long long)o[0]);
    cr_expect_eq(o[192], 255, "(200 as i8) >> (7 as u8): %lld", (long long)o[192]);
    cr_expect_eq(o[193], 4294967292LL, "(-16 as i32) >> (2 as u32): %lld", (long long)o[193]);
    unload(&k);
}

/* A weak float folded with a typed scalar is first a value of their type, as Triton casts the scalar: a held f32
 * 7.0 % 0.1 is fmodf(7, 0.1f) (it was fmod by the exact 0.1, rounded: 0.1f), `let t = 0.1; t == 0.1` is true (it
 * compared f32's 0.1 with the exact one); and a typed operand becomes a value of the result type before a folded
 * operation, as at run time: the i64 2e9 minus the f16 inf is an f16 inf - inf, NaN (it was -inf). */
Test(lang_triton_values, typed_float_constants_fold_in_their_type) {
    K k;
    load_src(&k,
             "kernel k(p: *f64) {\n"
             "    let a = 7.0;\n"
             "    store(p, a % 0.1);\n"
             "    store(p + 1, (7 as i64) % 0.1);\n"
             "    let u = 3000000000;\n"
             "    store(p + 2, u % 0.1);\n"
             "    store(p + 3, (2000000000 as i64) - (3000000000 as f16));\n"
             "    let t = 0.1;\n"
             "    store(p + 4, (t == 0.1) as f64);\n"
             "    store(p + 5, t + 1.1);\n"
             "}\n",
             "k");
    double o[6];
    uint64_t d_o = poisoned(&k, sizeof o);
    void *params[] = {&d_o};
    launch(&k, 1, params);
    download(&k, o, d_o, sizeof o);
    volatile float tenth = 0.1f, one_one = 1.1f;
    cr_expect_eq(o[0], (double)fmodf(7.0f, tenth), "held 7.0 %% 0.1: %.17g", o[0]);
    cr_expect_eq(o[1], (double)fmodf(7.0f, tenth), "(7 as i64) %% 0.1: %.17g", o[1]);
    cr_expect_eq(o[2], (double)fmodf(3e9f, tenth), "held u32 3e9 %% 0.1: %.17g", o[2]);
    cr_expect(isnan(o[3]), "(2e9 as i64) - (3e9 as f16) is inf - inf in f16: %g", o[3]);
    cr_expect_eq(o[4], 1.0, "held 0.1 == 0.1: %g", o[4]);
    cr_expect_eq(o[5], (double)(float)(tenth + one_one), "held 0.1 + 1.1 in f32: %.17g", o[5]);
    unload(&k);
}
