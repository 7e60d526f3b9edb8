/* Float to integer casts: toward zero, saturated at the integer type's range, NaN 0 (docs/language.md),
 * at run time and folded at compile time alike, for every integer type from f32, f64, f16 and bf16.
 * The result is read back widened to i64 (`cast(cast(v, OT), i64)`), so a value the integer type cannot
 * hold shows: before, an out-of-range `as u8` was LLVM's poison and a "u8" could hold 65519. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/tile/tile.h"
#include "test_rng.h"

enum { B = 64 };

/* Lanes 0..n-1: the run-time cast of x[c]; lane B: the cast of the constant K, folded. */
static const char *cast_src =
    "@num_warps(2)\n"
    "kernel k(x: *T, out: *i64, n: i32, const T = f32, const OT = u8, const K = 0.0) {\n"
    "    let c = arange(0, 64);\n"
    "    let m = c < n;\n"
    "    let v = load(x + c, m, 0);\n"
    "    store(out + c, cast(cast(v, OT), i64), m);\n"
    "    store(out + 64, cast(cast(K, OT), i64));\n"
    "}\n";

typedef struct IntType {
    const char *name;
    int bits;
    bool sign;
} IntType;

static const IntType int_types[] = {{"i8", 8, true},   {"u8", 8, false},   {"i16", 16, true}, {"u16", 16, false},
                                    {"i32", 32, true}, {"u32", 32, false}, {"i64", 64, true}, {"u64", 64, false}};

/* the documented result of `f as T`, as T's bits widened to i64 (u64 above 2^63: its bits) */
static int64_t want_cast(double f, const IntType *t) {
    if (isnan(f)) return 0;
    double t0 = trunc(f);
    if (!t->sign) {
        if (!(t0 > 0)) return 0;
        if (t0 >= ldexp(1.0, t->bits)) return t->bits == 64 ? -1 : (int64_t)((1ull << t->bits) - 1);
        return (int64_t)(uint64_t)t0;
    }
    double lim = ldexp(1.0, t->bits - 1);
    if (t0 >= lim) return t->bits == 64 ? INT64_MAX : (int64_t)(1ull << (t->bits - 1)) - 1;
    if (t0 <= -lim) return t->bits == 64 ? INT64_MIN : -(int64_t)(1ull << (t->bits - 1));
    return (int64_t)t0;
}

/* d rounded to the float type ft (f32, f64, f16 or bf16: to nearest even), its bits at p; returns the value */
static double store_float(const char *ft, double d, void *p) {
    if (!strcmp(ft, "f64")) {
        memcpy(p, &d, 8);
        return d;
    }
    float f = (float)d;
    if (!strcmp(ft, "f32")) {
        memcpy(p, &f, 4);
        return f;
    }
    uint32_t u;
    memcpy(&u, &f, 4);
    uint16_t h;
    if (!strcmp(ft, "bf16")) {
        h = isnan(f) ? 0x7FC0 : (uint16_t)((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
        uint32_t back = (uint32_t)h << 16;
        memcpy(&f, &back, 4);
        memcpy(p, &h, 2);
        return f;
    }
    /* f16: from the value, exactly representable ones only (the test's values are chosen so or saturate) */
    if (isnan(d)) h = 0x7E00;
    else if (fabs(d) >= 65520.0) h = d < 0 ? 0xFC00 : 0x7C00;
    else {
        double a = fabs(d);
        int e;
        frexp(a, &e); /* a in [2^(e-1), 2^e) */
        int ex = e - 1 < -14 ? -14 : e - 1;
        double q = nearbyint(ldexp(a, 10 - ex)); /* 11 bits (fewer below 2^-14) */
        double v = ldexp(q, ex - 10);
        if (v >= 65520.0) h = 0x7C00;
        else {
            int e2;
            frexp(v, &e2);
            int ex2 = v == 0 ? -15 : (e2 - 1 < -14 ? -15 : e2 - 1);
            uint16_t mant = ex2 == -15 ? (uint16_t)ldexp(v, 24) : (uint16_t)(ldexp(v, 10 - ex2) - 1024);
            h = (uint16_t)((ex2 + 15) << 10 | mant);
        }
        if (signbit(d)) h |= 0x8000;
        int exv = (h >> 10) & 31;
        int m = h & 1023;
        double back = exv ? ldexp(1024 + m, exv - 25) : ldexp(m, -24);
        memcpy(p, &h, 2);
        return signbit(d) ? -back : back;
    }
    memcpy(p, &h, 2);
    return isnan(d) ? NAN : d < 0 ? -INFINITY : INFINITY;
}

static void cast_case(tile_context *ctx, const char *ft, const IntType *it, const double *vals, int n, double k) {
    char t_def[32], ot_def[32], k_def[64];
    snprintf(t_def, sizeof t_def, "T=%s", ft);
    snprintf(ot_def, sizeof ot_def, "OT=%s", it->name);
    if (isnan(k)) snprintf(k_def, sizeof k_def, "K=nan");
    else if (isinf(k)) snprintf(k_def, sizeof k_def, "K=%sinf", k < 0 ? "-" : "");
    else snprintf(k_def, sizeof k_def, "K=%.17g", k);
    const char *defines[] = {t_def, ot_def, k_def, NULL};
    tile_module *m;
    cr_assert_eq(tile_module_load_source(ctx, cast_src, defines, &m), TILE_OK, "%s %s: %s", ft, it->name, tile_last_error(ctx));
    tile_kernel *kn;
    cr_assert_eq(tile_module_get_kernel(m, "k", &kn), TILE_OK);
    size_t fs = !strcmp(ft, "f64") ? 8 : !strcmp(ft, "f32") ? 4 : 2;
    unsigned char hx[B * 8];
    double xv[B];
    for (int i = 0; i < n; i++) xv[i] = store_float(ft, vals[i], hx + (size_t)i * fs);
    int64_t hout[B + 1];
    memset(hout, 0x5A, sizeof hout); /* poison */
    tile_devptr dx, dout;
    cr_assert_eq(tile_malloc(ctx, sizeof hx, &dx), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof hout, &dout), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, dx, hx, sizeof hx), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, dout, hout, sizeof hout), TILE_OK);
    void *args[] = {&dx, &dout, &n};
    cr_assert_eq(tile_launch(kn, (tile_dim3){1, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, hout, dout, sizeof hout), TILE_OK);
    for (int i = 0; i < n; i++) {
        int64_t want = want_cast(xv[i], it);
        cr_expect_eq(hout[i], want, "%s %a as %s: %lld, want %lld", ft, xv[i], it->name, (long long)hout[i], (long long)want);
    }
    for (int i = n; i < B; i++) cr_expect_eq(hout[i], 0x5A5A5A5A5A5A5A5All, "%s as %s: lane %d written past n", ft, it->name, i);
    int64_t wk = want_cast(k, it); /* K is a compile-time float: f64 */
    cr_expect_eq(hout[B], wk, "constant %a as %s folded: %lld, want %lld", k, it->name, (long long)hout[B], (long long)wk);
    tile_free(ctx, dx);
    tile_free(ctx, dout);
    tile_module_unload(m);
}

/* The edges of every integer type, and random values across them; n (61) is not the block. */
static int edge_values(double *v, int max) {
    static const double fixed[] = {0.0, -0.0, 0.5, -0.5, 0.99, -0.99, 1.5, -1.5, -3.75, 127.5, 128.0, -128.9, -129.0,
                                   255.9, 256.0, 32767.5, 32768.0, -32768.5, -32769.0, 65519.0, 65535.5, 65536.0,
                                   2147483520.0, 2147483648.0, -2147483648.0, -2147483904.0, 4294967040.0, 4294967296.0,
                                   9223372036854775808.0, -9223372036854775808.0, -9.3e18, 18446744073709551616.0, 1e30,
                                   -1e30, 0x1p-130, NAN, INFINITY, -INFINITY};
    int n = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0] && n < max; i++) v[n++] = fixed[i];
    while (n < max) v[n++] = urand() * ldexp(1.0, (int)((urand() + 1) * 35)); /* up to 2^70 in size */
    return n;
}

Test(lang_cast, float_to_int_saturates_everywhere, .timeout = 600) {
    tile_context_options o = {.device = "emu", .emu_host_threads = 2};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK);
    seed_rng();
    cr_log_info("seed %llu (TILE_TEST_SEED replays it)", (unsigned long long)seed);
    double vals[61];
    int n = edge_values(vals, 61);
    static const char *const fts[] = {"f32", "f64", "f16", "bf16"};
    static const double consts[] = {-3.75, 300.7, -1e30, 65519.0, NAN, 4294967296.5, -0.9, INFINITY};
    for (size_t f = 0; f < 4; f++)
        for (size_t t = 0; t < sizeof int_types / sizeof int_types[0]; t++)
            cast_case(ctx, fts[f], &int_types[t], vals, n, consts[(f * 8 + t) % 8]);
    tile_context_destroy(ctx);
}

/* The casts docs/language.md spells out, folded: `(-3.75) as u8` is 0 and `300.0 as i8` 127, while `as` binds
 * tighter than a unary minus (Triton's `-x.to(T)`), so `-3.75 as u8` is -(3 as u8), 253. */
Test(lang_cast, documented_examples_fold) {
    const char *src = "kernel k(p: *f32) {\n"
                      "    static_assert((-3.75) as u8 == 0 && 300.0 as i8 == 127, \"saturated\");\n"
                      "    static_assert(-3.75 as u8 == 253, \"as binds tighter than -\");\n"
                      "    store(p, 1.0);\n"
                      "}\n";
    tile_compile_options o = {.tir_only = 1};
    tile_compiled c;
    cr_expect_eq(tile_compile_source("t.tile", src, &o, &c), TILE_OK, "%s", c.diagnostics);
    tile_compiled_free(&c);
}
