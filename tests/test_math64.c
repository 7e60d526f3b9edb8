/* test_math64.c - f64 math against long double libm, the f32 forms of asinh acosh atanh
 * pow erfc cbrt hypot tan log10 exp10 erfinv lgamma tgamma against f64 libm, and the integer bit functions, on the PTX emulator.
 * 131072 points per function (16384 under the sanitizers: tests/sanitized.h; uniform and log-uniform ranges, tails, near poles and zeros,
 * subnormal inputs and results, special values mixed in); errors in ulps of the correctly
 * rounded result, bounded by what docs/language.md promises.  The output is poisoned
 * (all ones, a NaN) before each launch. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/tile/tile.h"
#include "runtime/device.h"
#include "tests/sanitized.h"

enum { N = TILE_TEST_SANITIZED ? 131072 / 8 : 131072, BLOCK = 1024 };

static uint64_t rng = 0x2545f4914f6cdd1dull;
static double urand(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}
static double uni(double lo, double hi) { return lo + (hi - lo) * urand(); }
static double logu(double elo, double ehi) { return (urand() < 0.5 ? -1 : 1) * exp2(elo + (ehi - elo) * urand()); }
static double logp(double elo, double ehi) { return exp2(elo + (ehi - elo) * urand()); }

/* The elements each program takes (4 warps: BLOCK / 128 a thread). */
static int block = BLOCK;

/* Run `expr` over N points of element type ty ("f64", "f32", "i64", ...) of esize bytes. */
static void run(const char *ty, size_t esize, const char *expr, const void *x, const void *y, void *out) {
    char src[1024];
    snprintf(src, sizeof src,
             "@num_warps(4)\n"
             "kernel k(xp: *%s, yp: *%s, out: *%s, n: i32) {\n"
             "    let o = program_id(0) * %d + arange(0, %d);\n"
             "    let m = o < n;\n"
             "    let x = load(xp + o, m);\n"
             "    let y = load(yp + o, m);\n"
             "    store(out + o, %s, m);\n"
             "}\n",
             ty, ty, ty, block, block, expr);
    tile_compile_options opt = {0};
    tile_compiled c;
    tile_status st = tile_compile_source("t.tile", src, &opt, &c);
    cr_assert_eq(st, TILE_OK, "%s: %s\n%s", expr, tile_status_string(st), c.diagnostics);
    TileDevice *dev;
    TileDevModule *mod;
    TileDevFunction *fn;
    char *err = NULL;
    cr_assert_eq(dev_open("emu", NULL, &dev, &err), DEV_OK, "%s", err ? err : "?");
    cr_assert_eq(dev_module_load_ptx(dev, c.ptx, &mod), DEV_OK, "%s", dev_last_error(dev));
    cr_assert_eq(dev_module_get_function(mod, "k", &fn), DEV_OK, "%s", dev_last_error(dev));
    tile_compiled_free(&c);
    uint64_t dx, dy, dout;
    size_t bytes = esize * N;
    cr_assert_eq(dev_malloc(dev, bytes, &dx), DEV_OK);
    cr_assert_eq(dev_malloc(dev, bytes, &dy), DEV_OK);
    cr_assert_eq(dev_malloc(dev, bytes, &dout), DEV_OK);
    cr_assert_eq(dev_memcpy_htod(dev, dx, x, bytes), DEV_OK);
    cr_assert_eq(dev_memcpy_htod(dev, dy, y, bytes), DEV_OK);
    memset(out, 0xff, bytes);
    cr_assert_eq(dev_memcpy_htod(dev, dout, out, bytes), DEV_OK);
    int32_t n = N;
    void *params[] = {&dx, &dy, &dout, &n};
    cr_assert_eq(dev_launch(fn, N / block, 1, 1, 128, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(dev));
    cr_assert_eq(dev_synchronize(dev), DEV_OK, "%s", dev_last_error(dev));
    cr_assert_eq(dev_memcpy_dtoh(dev, out, dout, bytes), DEV_OK);
    dev_module_unload(mod);
    dev_close(dev);
}

/* ulps between got and ref, in units of the double nearest ref */
static double ulps64(double got, long double ref) {
    if (isnan(ref)) return isnan(got) ? 0 : INFINITY;
    double rd = (double)ref;
    if (isinf(rd) || isinf(got)) return got == rd ? 0 : INFINITY;
    double a = fabs(rd);
    double u = a < DBL_MIN ? 0x1p-1074 : nextafter(a, INFINITY) - a;
    return (double)(fabsl((long double)got - ref) / u);
}
static double ulps32(float got, double ref) {
    if (isnan(ref)) return isnan(got) ? 0 : INFINITY;
    float rf = (float)ref;
    if (isinf(rf) || isinf(got)) return got == rf ? 0 : INFINITY;
    double a = fabs((double)rf);
    double u = a < FLT_MIN ? 0x1p-149 : (double)nextafterf((float)a, INFINITY) - a;
    return fabs((double)got - ref) / u;
}

typedef struct Case {
    const char *name, *expr;
    long double (*ref1)(long double);
    long double (*ref2)(long double, long double);
    double bound64, bound32; /* ulps promised; bound32 < 0: not run on f32 */
    void (*gen)(double *x, double *y, int i);
} Case;

/* special values mixed into every generator */
static const double SV[] = {0.0, -0.0, 1.0, -1.0, INFINITY, -INFINITY, NAN, 0x1p-1074, -0x1p-1074, DBL_MAX, -DBL_MAX, 0.5, 2.0, -2.0};
static bool special(double *x, double *y, int i) {
    enum { S = sizeof SV / sizeof *SV };
    if (i % 61) return false;
    *x = SV[(i / 61) % S];
    *y = SV[(i / (61 * S)) % S];
    return true;
}

static void g_exp(double *x, double *y, int i) {
    if (special(x, y, i)) return;
    *y = 0;
    *x = i % 3 == 0 ? uni(-745.2, 709.8) : i % 3 == 1 ? logu(-60, 3) : uni(-760, -700);
}
static void g_exp2(double *x, double *y, int i) {
    if (special(x, y, i)) return;
    *y = 0;
    *x = i % 3 == 0 ? uni(-1075, 1024) : i % 3 == 1 ? logu(-60, 3) : uni(-1080, -1000);
}
static void g_expm1(double *x, double *y, int i) {
    if (special(x, y, i)) return;
    *y = 0;
    *x = i % 3 == 0 ? uni(-50, 709.7) : i % 3 == 1 ? logu(-80, 0) : uni(-1, 1);
}
static void g_log(double *x, double *y, int i) {
    if (special(x, y, i)) return;
    *y = 0;
    *x = i % 3 == 0 ? logp(-1074, 1024) : i % 3 == 1 ? uni(0.5, 2) : 1 + logu(-50, -1);
}
static void g_log1p(double *x, double *y, int i) {
    if (special(x, y, i)) return;
    *y = 0;
    *x = i % 4 == 0 ? uni(-1, 1) : i % 4 == 1 ? logu(-80, 0) : i % 4 == 2 ? logp(0, 1000) : -1 + logp(-60, -1);
}
/* Doubles close to multiples of pi/2 (x 2/pi within 2^-61.5 .. 2^-49 of an integer: found with continued
 * fractions of 2^E 2/pi), where the reduced argument keeps the fewest bits; the first is Muller's worst case. */
static const double trig_hard[][2] = {{6381956970095103, 797}, {7948344983408087, 8},   {8880990173877656, 60},
                                      {5342111778415315, 180}, {8082813195958980, 420}, {8855309494070093, 960}};

static void g_trig(double *x, double *y, int i) {
    if (special(x, y, i)) return;
    *y = 0;
    int nh = (int)(sizeof trig_hard / sizeof trig_hard[0]);
    if (i % 97 < 2 * nh) {
        int h = i % 97 / 2;
        *x = ldexp(trig_hard[h][0], (int)trig_hard[h][1]) * (i % 97 % 2 ? -1 : 1);
        return;
    }
    *x = i % 5 == 0 ? uni(-10, 10) : i % 5 == 1 ? logu(-60, 0) : i % 5 == 2 ? logu(0, 30) : i % 5 == 3 ? logu(30, 1024)
                                                                                             : round(uni(-1e6, 1e6)) * M_PI_2;
}
static void g_atan(double *x, double *y, int i) {
    if (special(x, y, i)) return;
    *x = i % 2 ? uni(-4, 4) : logu(-100, 100);
    *y = i % 3 ? uni(-4, 4) : logu(-100, 100);
}
static void g_unit(double *x, double *y, int i) {
    if (special(x, y, i)) return;
    *y = 0;
    *x = i % 3 == 0 ? uni(-1, 1) : i % 3 == 1 ? logu(-60, 0) : (1 - logp(-52, -1)) * (i % 2 ? 1 : -1);
}
static void g_hyp(double *x, double *y, int i) {
    if (special(x, y, i)) return;
    *y = 0;
    *x = i % 3 == 0 ? uni(-30, 30) : i % 3 == 1 ? logu(-60, 0) : uni(-711, 711);
}
static void g_erf(double *x, double *y, int i) {
    if (special(x, y, i)) return;
    *y = 0;
    *x = i % 3 == 0 ? uni(-6, 6) : i % 3 == 1 ? logu(-60, 0) : uni(-2, 28);
}
static void g_acosh(double *x, double *y, int i) {
    if (special(x, y, i)) return;
    *y = 0;
    *x = i % 3 == 0 ? uni(1, 3) : i % 3 == 1 ? 1 + logp(-52, 0) : logp(0, 1000);
}
static void g_asinh(double *x, double *y, int i) {
    if (special(x, y, i)) return;
    *y = 0;
    *x = i % 2 ? uni(-5, 5) : logu(-60, 1000);
}
static void g_cbrt(double *x, double *y, int i) {
    if (special(x, y, i)) return;
    *y = 0;
    *x = i % 2 ? uni(-10, 10) : logu(-1074, 1023);
}
static void g_hypot(double *x, double *y, int i) {
    if (special(x, y, i)) return;
    *x = i % 2 ? uni(-10, 10) : logu(-1074, 1023);
    *y = i % 3 ? uni(-10, 10) : logu(-1074, 1023);
    if (i % 5 == 0) *y = *x * uni(0.5, 2);
}
static void g_pow(double *x, double *y, int i) {
    if (special(x, y, i)) return;
    switch (i % 5) {
    case 0: *x = logp(-20, 20), *y = uni(-50, 50); break;
    case 1: *x = uni(0, 4), *y = uni(-300, 300); break;
    case 2: *x = -logp(-5, 5), *y = round(uni(-100, 100)); break; /* negative base, integer power */
    case 3: *x = 1 + logu(-40, -5), *y = logu(0, 45); break;    /* near 1, huge powers */
    default: *x = logp(-1000, 1000), *y = uni(-1, 1); break;
    }
}
static void g_fmod(double *x, double *y, int i) {
    if (special(x, y, i)) return;
    *x = i % 2 ? uni(-1000, 1000) : logu(-1074, 1023);
    *y = i % 3 ? uni(-10, 10) : logu(-1074, 1023);
}
static void g_sqrt(double *x, double *y, int i) {
    if (special(x, y, i)) return;
    *y = 0;
    *x = logp(-1074, 1023);
}

static void g_exp10(double *x, double *y, int i) {
    if (special(x, y, i)) return;
    *y = 0;
    *x = i % 3 == 0 ? uni(-20, 20) : i % 3 == 1 ? logu(-60, 0) : uni(-330, 310);
}

/* lgamma: positive x over the whole range, near its zeros 1 and 2, tiny and huge; negative x in (-2, 0) and
 * midway between the integers below -4 (near a negative zero no absolute accuracy gives a relative one) */
static void g_lgamma(double *x, double *y, int i) {
    if (special(x, y, i)) return;
    *y = 0;
    switch (i % 6) {
    case 0: *x = uni(0, 20); break;
    case 1: *x = (i % 4 ? 1 : 2) + logu(-50, -2); break;
    case 2: *x = logp(-1074, 0); break;
    case 3: *x = logp(0, 1023); break;
    case 4: *x = uni(-2, 0); break;
    default: *x = -(floor(uni(4, 170)) + uni(0.3, 0.7)); break;
    }
}

/* tgamma: positive x up to past the overflow, near 1 and 2, tiny; negative x in (-10, 0), midway and near the
 * integers below (not on them: poles), and down to where the result is subnormal and then 0 */
static void g_tgamma(double *x, double *y, int i) {
    if (special(x, y, i)) return;
    *y = 0;
    switch (i % 7) {
    case 0: *x = uni(0, 30); break;
    case 1: *x = uni(0, 175); break;
    case 2: *x = (i % 4 ? 1 : 2) + logu(-50, -2); break;
    case 3: *x = logp(-1074, 0); break;
    case 4: *x = uni(-10, 0); break;
    case 5: *x = -(floor(uni(1, 170)) + (i % 3 ? uni(0.01, 0.99) : logu(-30, -3))); break;
    default: *x = -uni(170, 190); break;
    }
    if (*x == rint(*x) && *x < 0) *x += 0.5;
}

static long double l_exp2(long double x) { return exp2l(x); }
static long double l_exp10(long double x) { return powl(10, x); }
static long double l_log10(long double x) { return log10l(x); }
static long double l_tan(long double x) { return tanl(x); }
/* erfinv by bisection on erf (erfc beyond 1/2, where 1 - |y| is exact) to long double's last bit */
static long double l_erfinv(long double y) {
    long double a = fabsl(y);
    if (isnan(y) || a > 1) return NAN;
    if (a == 1) return copysignl(INFINITY, y);
    if (y == 0) return y;
    long double lo = a <= 0.5L ? 0.8L * a : 0, hi = a <= 0.5L ? 1.1L * a : 7, om = 1 - a; /* erfinv(a) / a in [0.886, 1.05] below 1/2 */
    for (int i = 0; i < 200 && lo < hi; i++) {
        long double mid = (lo + hi) / 2;
        if (mid == lo || mid == hi) break;
        bool below = a <= 0.5L ? erfl(mid) < a : erfcl(mid) > om;
        if (below) lo = mid;
        else hi = mid;
    }
    return copysignl((lo + hi) / 2, y);
}
static long double l_sigmoid(long double x) { return 1 / (1 + expl(-x)); }
static long double l_rsqrt(long double x) { return 1 / sqrtl(x); }
static long double l_fmod(long double x, long double y) { return fmodl(x, y); }
static long double l_atan2(long double y, long double x) { return atan2l(y, x); }
static long double l_pow(long double x, long double y) { return powl(x, y); }
static long double l_hypot(long double x, long double y) { return hypotl(x, y); }

static const Case cases[] = {
    {"exp", "exp(x)", expl, NULL, 1, -1, g_exp},
    {"exp2", "exp2(x)", l_exp2, NULL, 1.5, -1, g_exp2},
    {"expm1", "expm1(x)", expm1l, NULL, 2, -1, g_expm1},
    {"log", "log(x)", logl, NULL, 1, -1, g_log},
    {"log2", "log2(x)", log2l, NULL, 2, -1, g_log},
    {"log1p", "log1p(x)", log1pl, NULL, 2, -1, g_log1p},
    {"pow", "pow(x, y)", NULL, l_pow, 1.5, 1, g_pow},
    {"sin", "sin(x)", sinl, NULL, 2, -1, g_trig},
    {"cos", "cos(x)", cosl, NULL, 2, -1, g_trig},
    {"atan", "atan(x)", atanl, NULL, 2, -1, g_atan},
    {"atan2", "atan2(y, x)", NULL, l_atan2, 2, -1, g_atan},
    {"asin", "asin(x)", asinl, NULL, 2.5, -1, g_unit},
    {"acos", "acos(x)", acosl, NULL, 2.5, -1, g_unit},
    {"sinh", "sinh(x)", sinhl, NULL, 2, -1, g_hyp},
    {"cosh", "cosh(x)", coshl, NULL, 2, -1, g_hyp},
    {"tanh", "tanh(x)", tanhl, NULL, 3, -1, g_hyp},
    {"sigmoid", "sigmoid(x)", l_sigmoid, NULL, 2.5, -1, g_hyp},
    {"erf", "erf(x)", erfl, NULL, 2, -1, g_erf},
    {"erfc", "erfc(x)", erfcl, NULL, 3, 1, g_erf},
    {"asinh", "asinh(x)", asinhl, NULL, 2.5, 1, g_asinh},
    {"acosh", "acosh(x)", acoshl, NULL, 3, 1, g_acosh},
    {"atanh", "atanh(x)", atanhl, NULL, 2, 1, g_unit},
    {"cbrt", "cbrt(x)", cbrtl, NULL, 1, 1, g_cbrt},
    {"hypot", "hypot(x, y)", NULL, l_hypot, 1, 1, g_hypot},
    {"tan", "tan(x)", l_tan, NULL, 3, 1, g_trig},
    {"log10", "log10(x)", l_log10, NULL, 1, 1, g_log},
    {"exp10", "exp10(x)", l_exp10, NULL, 1.5, 1, g_exp10},
    {"erfinv", "erfinv(x)", l_erfinv, NULL, 3, 1, g_unit},
    {"lgamma", "lgamma(x)", lgammal, NULL, 5, 1, g_lgamma},
    {"tgamma", "tgamma(x)", tgammal, NULL, 6, 1, g_tgamma},
    {"fmod", "fmod(x, y)", NULL, l_fmod, 0, -1, g_fmod},
    {"rem", "x % y", NULL, l_fmod, 0, -1, g_fmod}, /* `%` on floats is fmod, exact */
    {"sqrt", "sqrt(x)", sqrtl, NULL, 0.5, -1, g_sqrt},
    {"rsqrt", "rsqrt(x)", l_rsqrt, NULL, 1, -1, g_sqrt},
};

static long double ref_of(const Case *c, double x, double y) {
    return c->ref1 ? c->ref1(x) : c->ref2 == l_atan2 ? c->ref2(y, x) : c->ref2(x, y);
}

Test(math64, f64_against_long_double_libm, .timeout = 1200) {
    double *x = malloc(sizeof(double) * N), *y = malloc(sizeof(double) * N), *out = malloc(sizeof(double) * N);
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const Case *c = &cases[k];
        for (int i = 0; i < N; i++) c->gen(&x[i], &y[i], i);
        run("f64", 8, c->expr, x, y, out);
        double worst = 0;
        int at = 0;
        for (int i = 0; i < N; i++) {
            double e = ulps64(out[i], ref_of(c, x[i], y[i]));
            if (!(e <= worst)) worst = e, at = i;
        }
        printf("f64 %-8s max %.3f ulp over %d points (at x=%a y=%a: got %a, libm %La)\n", c->name, worst, N, x[at], y[at], out[at],
               ref_of(c, x[at], y[at]));
        cr_expect(worst <= c->bound64, "f64 %s: %.3f ulp (bound %.1f) at x=%a y=%a: got %a, libm %La", c->name, worst, c->bound64,
                  x[at], y[at], out[at], ref_of(c, x[at], y[at]));
    }
    free(x), free(y), free(out);
}

/* lgamma below -2, where the reflection subtracts lgamma(1 - x) from log(pi / |sin(pi x)|), both a few
 * units, and lgamma crosses zero twice between each pair of integers: within 16 ulp where |lgamma| > 1/2 and
 * within 8e-15 absolutely (docs/language.md; measured 10.4 ulp and 3.7e-15 on (-8, -2)). */
Test(math64, lgamma_below_minus_two) {
    double *x = malloc(sizeof(double) * N), *out = malloc(sizeof(double) * N);
    uint64_t r = 0x2545f4914f6cdd1dull;
    for (int i = 0; i < N; i++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        x[i] = -2 - 6 * ((double)(r >> 11) / 9007199254740992.0);
    }
    run("f64", 8, "lgamma(x)", x, x, out);
    for (int i = 0; i < N; i++) {
        long double ref = lgammal(x[i]);
        cr_assert(fabsl(out[i] - ref) <= 8e-15L, "lgamma(%a) = %a, want %La", x[i], out[i], ref);
        if (fabsl(ref) > 0.5L) cr_assert(ulps64(out[i], ref) <= 16, "lgamma(%a) = %a, want %La", x[i], out[i], ref);
    }
    free(x), free(out);
}

/* With more than 16 elements a thread the f64 math is one noinline helper per op, called at each element (inlined
 * 128 times a thread, lgamma took 11 s to compile): the same numbers as the inline form, bit for bit, for f64 and for
 * the f32 forms computed in f64; one op of two operands, and fmod's loop, among them. */
Test(math64, helper_call_form_matches_the_inline_form, .timeout = 600) {
    static const char *const exprs[] = {"lgamma(x)", "pow(x, y)", "fmod(x, y) + erfinv(y / 512.0)"};
    tile_compile_options opt = {0};
    tile_compiled c;
    const char *src = "@num_warps(4)\nkernel k(x: *f32, n: i32) {\n    let o = arange(0, 4096);\n"
                      "    store(x + o, lgamma(load(x + o, o < n)) + lgamma(load(x + o + 1, o < n)), o < n);\n}\n";
    cr_assert_eq(tile_compile_source("t.tile", src, &opt, &c), TILE_OK, "%s", c.diagnostics);
    int calls = 0;
    for (const char *p = c.ptx; (p = strstr(p, "call.uni")); p++) calls++;
    cr_assert(strstr(c.ptx, ".func  (.param .b64 func_retval0) tile_math64_lgamma(") && calls == 64, "%d calls:\n%.3000s", calls,
              c.ptx);
    tile_compiled_free(&c);
    double *x = malloc(sizeof(double) * N), *y = malloc(sizeof(double) * N);
    double *a = malloc(sizeof(double) * N), *b = malloc(sizeof(double) * N);
    for (size_t e = 0; e < sizeof exprs / sizeof *exprs; e++)
        for (int f32 = 0; f32 < 2; f32++) {
            for (int i = 0; i < N; i++) {
                x[i] = logu(-8, 8), y[i] = e == 1 ? uni(-4, 4) : logu(-8, 8);
                if (f32) ((float *)x)[i] = (float)x[i], ((float *)y)[i] = (float)y[i];
            }
            block = BLOCK; /* 8 a thread: inline */
            run(f32 ? "f32" : "f64", f32 ? 4 : 8, exprs[e], x, y, a);
            block = 4096; /* 32 a thread: calls */
            run(f32 ? "f32" : "f64", f32 ? 4 : 8, exprs[e], x, y, b);
            block = BLOCK;
            cr_assert(!memcmp(a, b, (f32 ? 4 : 8) * (size_t)N), "%s %s: the call form differs from the inline form", exprs[e],
                      f32 ? "f32" : "f64");
        }
    free(x), free(y), free(a), free(b);
}

/* Powers of ten come out exact where they are doubles: log10(10^k) = k and exp10(k) = 10^k for k in
 * [0, 22] (one rounding at the end of double-double forms), and tan/erfinv keep their odd symmetry. */
Test(math64, exact_powers_of_ten, .timeout = 600) {
    double *x = calloc(N, sizeof(double)), *y = calloc(N, sizeof(double)), *out = malloc(sizeof(double) * N);
    for (int k = 0; k <= 22; k++) x[k] = pow(10, k);
    run("f64", 8, "log10(x)", x, y, out);
    for (int k = 0; k <= 22; k++) cr_expect_eq(out[k], (double)k, "log10(1e%d) = %a", k, out[k]);
    for (int k = 0; k <= 22; k++) x[k] = k, x[32 + k] = -k;
    run("f64", 8, "exp10(x)", x, y, out);
    for (int k = 0; k <= 22; k++) cr_expect_eq(out[k], pow(10, k), "exp10(%d) = %a", k, out[k]);
    for (int i = 0; i < 64; i++) x[i] = (i % 2 ? -1 : 1) * ldexp(1 + i, -i / 2), x[64 + i] = -x[i];
    run("f64", 8, "tan(x)", x, y, out);
    for (int i = 0; i < 64; i++) cr_expect_eq(out[64 + i], -out[i], "tan(%a) = %a, tan(-x) = %a", x[i], out[i], out[64 + i]);
    for (int i = 0; i < 64; i++) x[i] = ldexp((i % 7) + 1, -3) * (i % 2 ? 1 : -1) * 0.124, x[64 + i] = -x[i];
    run("f64", 8, "erfinv(x)", x, y, out);
    for (int i = 0; i < 64; i++) cr_expect_eq(out[64 + i], -out[i], "erfinv(%a) = %a, erfinv(-x) = %a", x[i], out[i], out[64 + i]);
    free(x), free(y), free(out);
}

Test(math64, new_f32_functions_against_libm, .timeout = 600) {
    double *xd = malloc(sizeof(double) * N), *yd = malloc(sizeof(double) * N);
    float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N), *out = malloc(sizeof(float) * N);
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const Case *c = &cases[k];
        if (c->bound32 < 0) continue;
        for (int i = 0; i < N; i++) {
            c->gen(&xd[i], &yd[i], i);
            x[i] = (float)xd[i], y[i] = (float)yd[i];
            if (c->ref2 == l_pow && i % 5 == 1) y[i] = (float)uni(-40, 40); /* results within f32 range mostly */
        }
        run("f32", 4, c->expr, x, y, out);
        double worst = 0;
        int at = 0;
        for (int i = 0; i < N; i++) {
            double e = ulps32(out[i], (double)ref_of(c, x[i], y[i]));
            if (!(e <= worst)) worst = e, at = i;
        }
        printf("f32 %-8s max %.3f ulp over %d points (at x=%a y=%a: got %a, libm %La)\n", c->name, worst, N, x[at], y[at], out[at],
               ref_of(c, x[at], y[at]));
        cr_expect(worst <= c->bound32, "f32 %s: %.3f ulp (bound %.1f) at x=%a y=%a: got %a", c->name, worst, c->bound32, x[at], y[at],
                  out[at]);
    }
    free(xd), free(yd), free(x), free(y), free(out);
}

/* umulhi, popc, clz on i32 u32 i64 u64: exact */
Test(math64, integer_bit_functions) {
    static const char *const tys[] = {"i32", "u32", "i64", "u64"};
    static uint64_t x[N], y[N], out[N];
    for (int t = 0; t < 4; t++) {
        bool w64 = t >= 2;
        size_t es = w64 ? 8 : 4;
        for (int i = 0; i < N; i++) {
            uint64_t a = (uint64_t)(urand() * 0x1p53) << 11 ^ (uint64_t)(urand() * 0x1p53);
            uint64_t b = (uint64_t)(urand() * 0x1p53) << 11 ^ (uint64_t)(urand() * 0x1p53);
            if (i % 7 == 0) a >>= (i / 7) % 64; /* every leading-zero count */
            if (i % 11 == 0) b = i % 2 ? 0 : ~0ull;
            if (w64) x[i] = a, y[i] = b;
            else ((uint32_t *)x)[i] = (uint32_t)a, ((uint32_t *)y)[i] = (uint32_t)b;
        }
        const char *exprs[] = {"umulhi(x, y)", "(popc(x) + 1000 * clz(y)) as %s"};
        for (int e = 0; e < 2; e++) {
            char expr[64];
            snprintf(expr, sizeof expr, exprs[e], tys[t]);
            run(tys[t], es, expr, x, y, out);
            for (int i = 0; i < N; i++) {
                uint64_t a = w64 ? x[i] : ((uint32_t *)x)[i], b = w64 ? y[i] : ((uint32_t *)y)[i];
                uint64_t got = w64 ? out[i] : ((uint32_t *)out)[i], want;
                if (e == 0) want = w64 ? (uint64_t)(((unsigned __int128)a * b) >> 64) : (a * b) >> 32;
                else want = (uint64_t)__builtin_popcountll(a) + 1000 * (uint64_t)(b ? __builtin_clzll(b) - (w64 ? 0 : 32) : (w64 ? 64 : 32));
                if (!w64) want &= 0xffffffffu;
                if (got != want) {
                    cr_expect_eq(got, want, "%s on %s at %d: a=%#llx b=%#llx got %#llx want %#llx", expr, tys[t], i, (unsigned long long)a,
                                 (unsigned long long)b, (unsigned long long)got, (unsigned long long)want);
                    break;
                }
            }
        }
    }
}

/* f16/bf16 go through f32 (and f64): a few of the new functions on f16 are exact to f16 precision */
Test(math64, half_precision_through_f32) {
    static uint16_t x[N], y[N], out[N];
    for (int i = 0; i < N; i++) {
        _Float16 a = (_Float16)uni(0.01, 8), b = (_Float16)uni(-3, 3);
        memcpy(&x[i], &a, 2), memcpy(&y[i], &b, 2);
    }
    run("f16", 2, "pow(x, y) + hypot(x, y) + cbrt(x)", x, y, out);
    for (int i = 0; i < N; i++) {
        _Float16 a, b, g;
        memcpy(&a, &x[i], 2), memcpy(&b, &y[i], 2), memcpy(&g, &out[i], 2);
        /* each function rounds to f16, then the f16 sums round again: 3 roundings of about 2^-11 relative */
        double want = (double)(_Float16)pow(a, b) + (double)(_Float16)hypot(a, b);
        want = (double)(_Float16)want + (double)(_Float16)cbrt(a);
        bool ok = (double)g == want || fabs((double)g - want) <= fabs(want) * 0x1p-9;
        cr_expect(ok, "f16 at %d: x=%g y=%g got %g want %g", i, (double)a, (double)b, (double)g, want);
        if (!ok) break;
    }
}

/* errors: integer ops on floats, f64 math works where it was rejected before */
Test(math64, bit_function_errors) {
    tile_compile_options opt = {0};
    tile_compiled c;
    const char *src = "kernel k(x: *f32) { store(x, popc(load(x))); }\n";
    cr_assert_eq(tile_compile_source("e.tile", src, &opt, &c), TILE_ERROR_COMPILE);
    cr_expect(strstr(c.diagnostics, "e.tile:1:") && strstr(c.diagnostics, "'popc' expects 32- or 64-bit integers"), "%s", c.diagnostics);
    tile_compiled_free(&c);
    src = "kernel k(x: *i16) { store(x, umulhi(load(x), load(x)) as i16); }\n";
    cr_assert_eq(tile_compile_source("e.tile", src, &opt, &c), TILE_ERROR_COMPILE);
    cr_expect(strstr(c.diagnostics, "'umulhi' expects 32- or 64-bit integers"), "%s", c.diagnostics);
    tile_compiled_free(&c);
}

/* f64 special values: every pair of 0, -0, +-1, +-inf, NaN, +-0.5, +-2, +-3, tiny and huge through
 * pow, atan2, hypot, fmod (C99's special cases exactly, signs of zeros included), and the unary
 * functions on them (signed zeros kept, within the bounds elsewhere) */
Test(math64, f64_special_values) {
    static const double sv[] = {0.0, -0.0, 1.0, -1.0, INFINITY, -INFINITY, NAN, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 0x1p-1074, -0x1p-1074,
                                DBL_MAX, -DBL_MAX, 1e-300, -1e300, 0.7};
    enum { S = sizeof sv / sizeof *sv };
    double *x = calloc(N, sizeof(double)), *y = calloc(N, sizeof(double)), *out = malloc(N * sizeof(double));
    for (int i = 0; i < N; i++) x[i] = sv[i % S], y[i] = sv[(i / S) % S];
    struct {
        const char *expr;
        long double (*f)(long double, long double);
    } bin[] = {{"pow(x, y)", l_pow}, {"atan2(y, x)", l_atan2}, {"hypot(x, y)", l_hypot}, {"fmod(x, y)", l_fmod}};
    for (int k = 0; k < 4; k++) {
        run("f64", 8, bin[k].expr, x, y, out);
        for (int i = 0; i < S * S; i++) {
            long double ref = bin[k].f == l_atan2 ? l_atan2(y[i], x[i]) : bin[k].f(x[i], y[i]);
            bool ok = isnan(ref) ? isnan(out[i])
                                 : (ulps64(out[i], ref) <= 2 && (ref != 0 || !signbit(out[i]) == !signbit((double)ref)) &&
                                    (!isinf(ref) || out[i] == (double)ref));
            cr_expect(ok, "%s at x=%a y=%a: got %a, libm %La", bin[k].expr, x[i], y[i], out[i], ref);
        }
    }
    const char *un[] = {"exp(x)", "exp2(x)", "expm1(x)", "log(x)", "log2(x)", "log1p(x)", "sin(x)", "cos(x)", "atan(x)", "asin(x)",
                        "acos(x)", "sinh(x)", "cosh(x)", "tanh(x)", "erf(x)", "erfc(x)", "asinh(x)", "acosh(x)", "atanh(x)", "cbrt(x)",
                        "sqrt(x)", "rsqrt(x)", "sigmoid(x)", "tgamma(x)"};
    long double (*uf[])(long double) = {expl, l_exp2, expm1l, logl, log2l, log1pl, sinl, cosl, atanl, asinl, acosl, sinhl, coshl,
                                        tanhl, erfl, erfcl, asinhl, acoshl, atanhl, cbrtl, sqrtl, l_rsqrt, l_sigmoid, tgammal};
    for (size_t k = 0; k < sizeof un / sizeof *un; k++) {
        run("f64", 8, un[k], x, y, out);
        for (int i = 0; i < S; i++) {
            long double ref = uf[k](x[i]);
            bool ok = isnan(ref) ? isnan(out[i])
                                 : ulps64(out[i], ref) <= 3 && (ref != 0 || !signbit(out[i]) == !signbit((double)ref));
            cr_expect(ok, "%s at %a: got %a, libm %La", un[k], x[i], out[i], ref);
        }
    }
    free(x), free(y), free(out);
}
