/* test_math.c - the f32 math built-ins against libm on the PTX emulator: 131072
 * points per function (uniform and log-uniform ranges, odd tails, special values),
 * errors in ulps of the correctly rounded result; the bounds are the accuracy
 * docs/language.md promises.  Also the exact ones: round rint trunc fmod copysign
 * clamp isnan isinf signbit.  (The sign of a NaN result is not checked.) */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/tile/tile.h"
#include "lang_run.h"
#include "runtime/device.h"

enum { N = 131072, BLOCK = 1024 };

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double urand(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}
static float uni(double lo, double hi) { return (float)(lo + (hi - lo) * urand()); }
/* sign * 2^e, e uniform in [elo, ehi] */
static float logu(double elo, double ehi) { return (float)((urand() < 0.5 ? -1 : 1) * exp2(elo + (ehi - elo) * urand())); }

/* Run `expr` (of x[o] and y[o]) over npts points (a multiple of BLOCK); out receives the results. */
static void run_n(const char *expr, const float *x, const float *y, float *out, int npts) {
    char src[1024];
    snprintf(src, sizeof src,
             "@num_warps(4)\n"
             "kernel k(xp: *f32, yp: *f32, out: *f32, n: i32) {\n"
             "    let o = program_id(0) * %d + arange(0, %d);\n"
             "    let m = o < n;\n"
             "    let x = load(xp + o, m);\n"
             "    let y = load(yp + o, m);\n"
             "    store(out + o, %s, m);\n"
             "}\n",
             BLOCK, BLOCK, expr);
    tile_compile_options opt = {0};
    tile_compiled c;
    tile_status st = tile_compile_source("t.tile", src, &opt, &c);
    cr_assert_eq(st, TILE_OK, "%s\n%s", tile_status_string(st), c.diagnostics);
    TileDevice *dev;
    TileDevModule *mod;
    TileDevFunction *fn;
    char *err = NULL;
    cr_assert_eq(dev_open("emu", NULL, &dev, &err), DEV_OK, "%s", err ? err : "?");
    cr_assert_eq(dev_module_load_ptx(dev, c.ptx, &mod), DEV_OK, "%s", dev_last_error(dev));
    cr_assert_eq(dev_module_get_function(mod, "k", &fn), DEV_OK, "%s", dev_last_error(dev));
    tile_compiled_free(&c);
    uint64_t dx, dy, dout;
    size_t bytes = sizeof(float) * (size_t)npts;
    cr_assert_eq(dev_malloc(dev, bytes, &dx), DEV_OK);
    cr_assert_eq(dev_malloc(dev, bytes, &dy), DEV_OK);
    cr_assert_eq(dev_malloc(dev, bytes, &dout), DEV_OK);
    cr_assert_eq(dev_memcpy_htod(dev, dx, x, bytes), DEV_OK);
    cr_assert_eq(dev_memcpy_htod(dev, dy, y, bytes), DEV_OK);
    int32_t n = npts;
    void *params[] = {&dx, &dy, &dout, &n};
    cr_assert_eq(dev_launch(fn, (unsigned)(npts / BLOCK), 1, 1, 128, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(dev));
    cr_assert_eq(dev_synchronize(dev), DEV_OK, "%s", dev_last_error(dev));
    cr_assert_eq(dev_memcpy_dtoh(dev, out, dout, bytes), DEV_OK);
    dev_module_unload(mod);
    dev_close(dev);
}

static void run(const char *expr, const float *x, const float *y, float *out) { run_n(expr, x, y, out, N); }

/* ulps between got and the double reference, in units of the float nearest ref */
static double ulps(float got, double ref) {
    if (isnan(ref)) return isnan(got) ? 0 : INFINITY;
    float rf = (float)ref;
    if (isinf(rf) || isinf(got)) return got == rf ? 0 : INFINITY;
    double a = fabs((double)rf);
    double u = a < FLT_MIN ? ldexp(1.0, -149) : (double)nextafterf((float)a, INFINITY) - a;
    return fabs((double)got - ref) / u;
}

typedef struct Case {
    const char *name, *expr;
    double (*ref1)(double);
    double (*ref2)(double, double);
    double bound; /* max ulps promised */
    void (*gen)(float *x, float *y, int i);
} Case;

static void g_unit(float *x, float *y, int i) { *x = i % 64 == 0 ? uni(-1.0005, 1.0005) : i % 3 ? uni(-1, 1) : logu(-30, 0), *y = 0; }
static void g_atan(float *x, float *y, int i) { *x = i % 2 ? uni(-10, 10) : logu(-40, 40), *y = 0; }
static void g_atan2(float *x, float *y, int i) {
    *x = i % 2 ? uni(-10, 10) : logu(-30, 30);
    *y = i % 3 ? uni(-10, 10) : logu(-30, 30);
    if (i % 1000 == 7) *x = 0;
    if (i % 1000 == 9) *y = -0.0f;
}
static void g_hyp(float *x, float *y, int i) { *x = i % 2 ? uni(-20, 20) : i % 4 ? uni(-89.5, 89.5) : logu(-30, 0), *y = 0; }
static void g_log1p(float *x, float *y, int i) {
    *x = i % 4 == 0 ? uni(-1, 1) : i % 4 == 1 ? logu(-40, 0) : i % 4 == 2 ? (float)exp2(60 * urand()) : uni(-0.999f, 4);
    *y = 0;
}
static void g_expm1(float *x, float *y, int i) { *x = i % 2 ? uni(-20, 88.7) : i % 4 ? logu(-40, 0) : uni(-100, 0), *y = 0; }
static void g_round(float *x, float *y, int i) { *x = i % 2 ? uni(-1000, 1000) : (float)((int)uni(-2000, 2000)) * 0.5f, *y = 0; }
static void g_fmod(float *x, float *y, int i) {
    *x = i % 2 ? uni(-1000, 1000) : logu(-10, 20);
    *y = i % 3 ? uni(-10, 10) : logu(-5, 5);
    if (i % 997 == 0) *x = *y * (float)(int)uni(-100, 100); /* exact multiples: a zero result */
}

static double d_rint(double x) { return nearbyint(x); }
/* tanh(x, exact=true): tiny, moderate, near 9.02 (where it turns to 1), large, and the specials */
static void g_tanh(float *x, float *y, int i) {
    *x = i % 4 == 0 ? uni(-5, 5) : i % 4 == 1 ? logu(-40, 0) : i % 4 == 2 ? uni(8.5, 9.5) * (i % 8 < 4 ? 1 : -1) : logu(-2, 10);
    if (i % 1000 == 3) *x = -0.0f;
    if (i % 1000 == 5) *x = INFINITY;
    if (i % 1000 == 6) *x = -INFINITY;
    if (i % 1000 == 8) *x = NAN;
    *y = 0;
}
/* erf: both ranges and their boundaries (1, 3.92), tiny arguments (relative precision: erf(1e-8) is not 0) */
static void g_erf(float *x, float *y, int i) {
    *x = i % 4 == 0 ? uni(-6, 6) : i % 4 == 1 ? uni(-1.05, 1.05) : i % 4 == 2 ? logu(-40, 0) : uni(3.8, 4.0) * (i % 8 < 4 ? 1 : -1);
    *y = 0;
}

static const Case cases[] = {
    {"asin", "asin(x)", asin, NULL, 4, g_unit},
    {"acos", "acos(x)", acos, NULL, 4, g_unit},
    {"atan", "atan(x)", atan, NULL, 4, g_atan},
    {"atan2", "atan2(y, x)", NULL, atan2, 4, g_atan2},
    {"sinh", "sinh(x)", sinh, NULL, 4, g_hyp},
    {"cosh", "cosh(x)", cosh, NULL, 4, g_hyp},
    {"log1p", "log1p(x)", log1p, NULL, 4, g_log1p},
    {"expm1", "expm1(x)", expm1, NULL, 4, g_expm1},
    {"round", "round(x)", round, NULL, 0, g_round},
    {"rint", "rint(x)", d_rint, NULL, 0, g_round},
    {"trunc", "trunc(x)", trunc, NULL, 0, g_round},
    {"fmod", "fmod(x, y)", NULL, fmod, 0, g_fmod},
    {"rem", "x % y", NULL, fmod, 0, g_fmod}, /* `%` on floats is fmod, exact */
    {"erf", "erf(x)", erf, NULL, 2, g_erf},
    {"tanh", "tanh(x, exact=true)", tanh, NULL, 2, g_tanh},
};

Test(math, accuracy_against_libm, .timeout = 600) {
    float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N), *out = malloc(sizeof(float) * N);
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const Case *c = &cases[k];
        for (int i = 0; i < N; i++) c->gen(&x[i], &y[i], i);
        run(c->expr, x, y, out);
        double worst = 0;
        int at = 0;
        for (int i = 0; i < N; i++) {
            double ref = c->ref1 ? c->ref1(x[i]) : c->ref2(c->ref2 == atan2 ? y[i] : x[i], c->ref2 == atan2 ? x[i] : y[i]);
            double e = ulps(out[i], ref);
            if (!(e <= worst)) worst = e, at = i;
        }
        printf("%-6s max %.2f ulp over %d points (at x=%a y=%a: got %a, libm %a)\n", c->name, worst, N, x[at], y[at], out[at],
               c->ref1 ? c->ref1(x[at]) : c->ref2(c->ref2 == atan2 ? y[at] : x[at], c->ref2 == atan2 ? x[at] : y[at]));
        cr_expect(worst <= c->bound, "%s: %.2f ulp (bound %.0f) at x=%a y=%a: got %a", c->name, worst, c->bound, x[at], y[at], out[at]);
    }
    free(x), free(y), free(out);
}

/* The hardware-approximation forms (docs/language.md, "Precision of math functions") and the
 * f64-computed f32 functions, each against the bound the table there states, in the unit it states:
 * ulps, an absolute error, or a relative one (E_EXP: exp's 2.5 ulp plus 1.25 |x| 2^-24, the rounding
 * of x * log2 e and of log2 e itself: |x| 2^-24 alone was exceeded by 1.1 times at x = -44.5).  Under the emulator's bound mode (approx_math) every .approx result is moved by the
 * ISA's documented error, so the bounds are what a GPU may give; with exact .approx the errors are
 * smaller.  Points: uniform over the range the row names, log-uniform where it says so. */
enum { E_ULP, E_ABS, E_REL, E_EXP };
typedef struct ApproxCase {
    const char *expr;
    double (*ref1)(double);
    double (*ref2)(double, double);
    int metric;
    double bound, lo, hi;
    bool logu_x; /* x = 2^u, u uniform in [lo, hi] (positive) */
} ApproxCase;

static double d_rsqrt(double x) { return 1 / sqrt(x); }
static double d_sigmoid(double x) { return 1 / (1 + exp(-x)); }
static double d_exp10(double x) { return pow(10, x); }
static double d_lgamma(double x) { return (double)lgammal(x); }
static double d_tgamma(double x) { return (double)tgammal(x); }

static const ApproxCase approx_cases[] = {
    {"exp2(x)", exp2, NULL, E_ULP, 2.5, -125.9, 127.9, false},
    {"exp2(x, exact=true)", exp2, NULL, E_ULP, 2.5, -149, 127.9, false},
    {"exp(x)", exp, NULL, E_EXP, 1, -87.3, 88.7, false},
    {"exp(x, exact=true)", exp, NULL, E_ULP, 3, -103, 88.7, false},
    {"log2(x)", log2, NULL, E_ABS, 0x1.1p-22, 0.5, 2, false},
    {"log(x)", log, NULL, E_ABS, 0x1.1p-22, 0.5, 2, false},
    {"log2(x)", log2, NULL, E_ULP, 5, 1, 127.99, true},
    {"log(x)", log, NULL, E_ULP, 5, -149, -1, true},
    {"rsqrt(x)", d_rsqrt, NULL, E_REL, 0x1.2p-23, -149, 127, true},
    {"sin(x)", sin, NULL, E_ABS, 0x1.7p-21, -2 * M_PI, 2 * M_PI, false},
    {"cos(x)", cos, NULL, E_ABS, 0x1.7p-21, -2 * M_PI, 2 * M_PI, false},
    {"sin(x)", sin, NULL, E_ABS, 0x1.4p-15, -100 * M_PI, 100 * M_PI, false},
    {"cos(x)", cos, NULL, E_ABS, 0x1.4p-15, -100 * M_PI, 100 * M_PI, false},
    {"tanh(x)", tanh, NULL, E_ABS, 0x1.04p-11, -10, 10, false},
    {"sigmoid(x)", d_sigmoid, NULL, E_EXP, 1, -87, 0, false},
    {"sigmoid(x)", d_sigmoid, NULL, E_ULP, 2.5, 0, 30, false},
    /* computed in f64 and rounded once: within 1 ulp (0.5 but for a double rounding) */
    {"asinh(x)", asinh, NULL, E_ULP, 1, -1e6, 1e6, false},
    {"acosh(x)", acosh, NULL, E_ULP, 1, 1, 1e4, false},
    {"atanh(x)", atanh, NULL, E_ULP, 1, -1, 1, false},
    {"erfc(x)", erfc, NULL, E_ULP, 1, -3, 10.05, false},
    {"cbrt(x)", cbrt, NULL, E_ULP, 1, -149, 127, true},
    {"tan(x)", tan, NULL, E_ULP, 1, -1e6, 1e6, false},
    {"log10(x)", log10, NULL, E_ULP, 1, -149, 127, true},
    {"exp10(x)", d_exp10, NULL, E_ULP, 1, -44.8, 38.5, false},
    {"lgamma(x)", d_lgamma, NULL, E_ULP, 1, -30, 40, false},
    {"tgamma(x)", d_tgamma, NULL, E_ULP, 1, -40, 35, false},
    {"pow(x, y)", NULL, pow, E_ULP, 1, 0, 10, false},
    {"hypot(x, y)", NULL, hypot, E_ULP, 1, -1e30, 1e30, false},
};

Test(math, approx_forms_within_documented_bounds, .timeout = 600) {
    enum { NA = N / 4 }; /* 32768 points a row: the table is long, and runs twice (approx_math) */
    float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N), *out = malloc(sizeof(float) * N);
    for (size_t k = 0; k < sizeof approx_cases / sizeof *approx_cases; k++) {
        const ApproxCase *c = &approx_cases[k];
        for (int i = 0; i < NA; i++) {
            x[i] = c->logu_x ? (float)exp2(c->lo + (c->hi - c->lo) * urand()) : uni(c->lo, c->hi);
            y[i] = c->ref2 == pow ? (i % 4 ? uni(-40, 40) : (float)(int)uni(-30, 30)) : uni(-1e30, 1e30);
            if (c->ref2 == pow && i % 8 == 1) x[i] = -x[i];
        }
        run_n(c->expr, x, y, out, NA);
        double worst = 0;
        int at = 0;
        for (int i = 0; i < NA; i++) {
            double ref = c->ref1 ? c->ref1(x[i]) : c->ref2(x[i], y[i]), e;
            if (!isfinite(ref) || !isfinite(out[i]) || c->metric == E_ULP) e = ulps(out[i], ref);
            else if (c->metric == E_ABS) e = fabs(out[i] - ref);
            else if (c->metric == E_REL) e = fabs(out[i] - ref) / fabs(ref);
            else e = fabs(out[i] - ref) / fabs(ref) / (2.5 * 0x1p-23 + 1.25 * fabs(x[i]) * 0x1p-24);
            if (!(e <= worst)) worst = e, at = i;
        }
        printf("%-20s on [%g, %g]%s: max %s %.3g (bound %.3g) at x=%a y=%a: got %a, want %a\n", c->expr, c->lo, c->hi, c->logu_x ? " (log2)" : "",
               c->metric == E_ULP ? "ulp" : c->metric == E_ABS ? "abs" : "rel", worst, c->bound, x[at], y[at], out[at],
               c->ref1 ? c->ref1(x[at]) : c->ref2(x[at], y[at]));
        cr_expect(worst <= c->bound, "%s on [%g, %g]: %.3g (bound %.3g) at x=%a y=%a: got %a", c->expr, c->lo, c->hi, worst, c->bound, x[at], y[at], out[at]);
    }
    free(x), free(y), free(out);
}

/* f16 and bf16 math is computed in f32 and rounded once: within about half an ulp of their own
 * precision over their normal range, even with each .approx result moved by the ISA's error (the bound
 * mode: 0.6 measured), but for tanh, whose 2^-11 is f16's own resolution near 1 (1.5 f16 ulp measured;
 * bf16 0.61).  (sin and cos keep f32's absolute error, many f16 ulps where the result is near 0: not
 * tested here.)  In units of the type's ulp at the reference, on points exact in the type. */
static double half_round(double v, int p, int emin) {
    int e;
    frexp(fabs(v), &e);
    double u = ldexp(1.0, (e - 1 < emin ? emin : e - 1) - (p - 1));
    return nearbyint(v / u) * u;
}
Test(math, half_forms_round_once) {
    enum { NH = N / 8 };
    static const struct {
        const char *f;
        double (*ref)(double);
        double lo, hi, bound_f16, bound_bf16;
        bool logu_x;
    } hc[] = {
        {"exp", exp, -9.7, 11, 0.6, 0.6, false},          {"log2", log2, -14, 15.9, 0.65, 0.6, true},
        {"rsqrt", d_rsqrt, -14, 15.9, 0.6, 0.6, true},   {"sigmoid", d_sigmoid, -9, 20, 0.6, 0.6, false},
        {"erf", erf, -4, 4, 0.6, 0.6, false},             {"tanh", tanh, -5, 5, 1.6, 0.75, false},
    };
    static float x[NH], y[NH], out[NH];
    for (int t = 0; t < 2; t++)
        for (size_t k = 0; k < sizeof hc / sizeof *hc; k++) {
            int p = t ? 8 : 11, emin = t ? -126 : -14;
            for (int i = 0; i < NH; i++) {
                double v = hc[k].logu_x ? exp2(hc[k].lo + (hc[k].hi - hc[k].lo) * urand()) : uni(hc[k].lo, hc[k].hi);
                x[i] = (float)half_round(v, p, emin), y[i] = 0;
            }
            char expr[96];
            snprintf(expr, sizeof expr, "%s(x as %s) as f32", hc[k].f, t ? "bf16" : "f16");
            run_n(expr, x, y, out, NH);
            double worst = 0;
            int at = 0;
            for (int i = 0; i < NH; i++) {
                double ref = hc[k].ref(x[i]), r = half_round(ref, p, emin);
                int e;
                frexp(fabs(r), &e);
                double e_ulps = fabs(out[i] - ref) / ldexp(1.0, (e - 1 < emin ? emin : e - 1) - (p - 1));
                if (!(e_ulps <= worst)) worst = e_ulps, at = i;
            }
            double bound = t ? hc[k].bound_bf16 : hc[k].bound_f16;
            printf("%-22s max %.2f ulp of %s (bound %.2f) at x=%a: got %a, want %a\n", expr, worst, t ? "bf16" : "f16", bound, x[at], out[at], hc[k].ref(x[at]));
            cr_expect(worst <= bound, "%s: %.2f ulp (bound %.2f) at x=%a: got %a, want %a", expr, worst, bound, x[at], out[at], hc[k].ref(x[at]));
        }
}

/* `%` on f16 and bf16 stays in the type and is exact (fmod): operands exact in both types, the
 * remainder exact in them too; LLVM's frem gave results of the wrong sign or larger than |y|. */
Test(math, half_remainder_is_exact) {
    static float x[N], y[N], out[N];
    for (int t = 0; t < 2; t++) {
        for (int i = 0; i < N; i++) {
            int k = (int)(((unsigned)i * 7919u) % (t ? 511u : 4095u)) - (t ? 255 : 2047);
            int j = (int)(((unsigned)i * 104729u) % 255u) + 1;
            x[i] = (float)k / (i % 3 ? 16 : 1), y[i] = (float)j / 128 * (i % 5 < 2 ? -1 : 1);
        }
        run(t ? "((x as bf16) % (y as bf16)) as f32" : "((x as f16) % (y as f16)) as f32", x, y, out);
        for (int i = 0; i < N; i++) {
            double want = fmod(x[i], y[i]);
            cr_assert(out[i] == (float)want && !signbit(out[i]) == !signbit(want), "%s: %a %% %a = %a, want %a", t ? "bf16" : "f16", x[i],
                      y[i], out[i], want);
        }
    }
}

/* Special values, and the classification functions (their i1 results stored as 0/1). */
Test(math, special_values_and_classification) {
    static float x[N], y[N], out[N];
    const float sv[] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, -NAN, 1e-45f, -3.5f, 2.5f, 1e30f};
    enum { S = sizeof sv / sizeof *sv };
    for (int i = 0; i < N; i++) x[i] = sv[i % S], y[i] = sv[(i / S) % S];
    struct {
        const char *expr;
        double (*f)(double, double);
    } ex[] = {{"atan2(y, x)", NULL}, {"fmod(x, y)", fmod}, {"copysign(x, y)", copysign}, {"x % y", fmod}};
    for (int k = 0; k < 4; k++) {
        run(ex[k].expr, x, y, out);
        for (int i = 0; i < S * S; i++) {
            double ref = k == 0 ? atan2(y[i], x[i]) : ex[k].f(x[i], y[i]);
            bool ok = isnan(ref) ? isnan(out[i]) : (out[i] == (float)ref && !signbit(out[i]) == !signbit(ref)) || (k == 0 && ulps(out[i], ref) <= 4);
            cr_expect(ok, "%s at x=%a y=%a: got %a, libm %a", ex[k].expr, x[i], y[i], out[i], ref);
        }
    }
    /* the sign of a zero result too: tanh(-0.0, exact=true) was +0 (its series' fma added -0 to a +0 product) */
    const char *unary[] = {"asin(x)", "acos(x)", "atan(x)", "sinh(x)", "cosh(x)", "log1p(x)", "expm1(x)", "round(x)", "rint(x)", "trunc(x)",
                           "tanh(x, exact=true)", "erf(x)"};
    double (*uref[])(double) = {asin, acos, atan, sinh, cosh, log1p, expm1, round, d_rint, trunc, tanh, erf};
    for (int k = 0; k < 12; k++) {
        run(unary[k], x, y, out);
        for (int i = 0; i < S; i++) {
            double ref = uref[k](x[i]);
            cr_expect(ulps(out[i], ref) <= 4 && (ref != 0 || !signbit(out[i]) == !signbit(ref)), "%s at %a: got %a, libm %a", unary[k], x[i], out[i], ref);
        }
    }
    run("where(isnan(x), 1.0, 0.0) + where(isinf(x), 2.0, 0.0) + where(signbit(x), 4.0, 0.0) + where(isnan(7), 8.0, 0.0)", x, y, out);
    for (int i = 0; i < S; i++) {
        float want = (isnan(x[i]) ? 1.0f : 0.0f) + (isinf(x[i]) ? 2.0f : 0.0f) + (signbit(x[i]) ? 4.0f : 0.0f);
        cr_expect_eq(out[i], want, "classify %a: %g, want %g", x[i], out[i], want);
    }
    run("clamp(x, -1.0, y)", x, y, out);
    for (int i = 0; i < S * S; i++) {
        float lo = fmaxf(x[i], -1.0f);
        float want = isnan(x[i]) || isnan(y[i]) ? NAN : lo < y[i] ? lo : y[i];
        if (isnan(want)) cr_expect(isnan(out[i]), "clamp(%a, -1, %a) = %a, want NaN", x[i], y[i], out[i]);
        else cr_expect(out[i] == want, "clamp(%a, -1, %a) = %a, want %a", x[i], y[i], out[i], want);
    }
}

/* Softmax's exp(x - max(x)) is exactly 1 at each row's maximum, whatever the row's magnitude: the
 * subtraction is exact there and no pass reassociates it (lower/contract.c; fma(x, log2 e, -(max * log2 e))
 * gave 1.0015 near 1e5 and 0, so a NaN softmax, near 1e30).  The stdlib softmax checked too, against
 * float64, rows of 8 magnitudes from 1.5 to 3e38 with the maximum at a different column in each. */
Test(math, softmax_exp_is_one_at_the_row_max) {
    enum { R = 8, C = 32 };
    const char *src = "import \"softmax.tile\";\n"
                      "@num_warps(4)\n"
                      "kernel k(x: *f32, e: *f32, sm: *f32) {\n"
                      "    let o = arange(0, 8)[:, None] * 32 + arange(0, 32)[None, :];\n"
                      "    let t = load(x + o);\n"
                      "    store(e + o, exp(t - max(t, axis=1)[:, None]));\n"
                      "    store(sm + o, softmax(t, 1));\n"
                      "}\n";
    const double base[R] = {1.5, -3, 100, 1e5, -1e5, 1e30, -1e30, 3e38};
    float x[R * C], e[R * C], sm[R * C];
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++) {
            int p = (r * 5 + 3) % C; /* the row's maximum sits at column p */
            x[r * C + c] = (float)(base[r] - fabs(base[r]) * ((c - p + C) % C) * 0x1p-12);
        }
    K k;
    load_src(&k, src, "k");
    uint64_t dx = upload(&k, x, sizeof x), de = poisoned(&k, sizeof e), dsm = poisoned(&k, sizeof sm);
    void *params[] = {&dx, &de, &dsm};
    launch(&k, 1, params);
    download(&k, e, de, sizeof e);
    download(&k, sm, dsm, sizeof sm);
    unload(&k);
    for (int r = 0; r < R; r++) {
        double mx = -INFINITY, sum = 0;
        for (int c = 0; c < C; c++) mx = fmax(mx, x[r * C + c]);
        for (int c = 0; c < C; c++) sum += exp((double)x[r * C + c] - mx);
        for (int c = 0; c < C; c++) {
            int i = r * C + c;
            double d = (double)x[i] - mx, want = exp(d);
            if (d == 0) cr_expect(e[i] == 1.0f, "row %d (around %g): exp(x - max) at the maximum = %.9g, want exactly 1", r, base[r], e[i]);
            else cr_expect(fabs(e[i] - want) <= 1e-6 * want + 1e-6 * fabs(d) * want + 1e-37,
                           "row %d col %d: exp(%g) = %.9g, want %.9g", r, c, d, e[i], want);
            cr_expect(fabs(sm[i] - want / sum) <= 2e-6 * (want / sum) + 1e-37 + 1e-6 * fabs(d) * want / sum,
                      "row %d col %d (around %g): softmax %.9g, want %.9g", r, c, base[r], sm[i], want / sum);
        }
    }
}
