/* test_libdevice.c - libdevice.tile's functions with an explicit rounding mode (add_rd ... sqrt_rz, the
 * float2int_rz-style conversions) and its exponent, pi-trigonometric, norm, remainder, inverse error and Bessel functions, on the
 * PTX emulator, against references computed on the host without its rounding modes: the round-to-nearest
 * result and the sign of the exact residual (an error-free sum or product, or an fma residual) give the
 * directed result; the others against long double libm, bounded in ulps as docs/language.md says.  Inputs:
 * special values (0, -0, +-inf, NaN, the largest and smallest floats, subnormals) in every pair, then
 * random ones of every magnitude; outputs poisoned first, a count that is not a multiple of the tile. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "lang_run.h"

enum { N = 6000, BLOCK = 1024 };
enum { RD, RN, RU, RZ };
static const char *const MODE[] = {"rd", "rn", "ru", "rz"};

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next64(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}
static double urand(void) { return (double)(next64() >> 11) / 9007199254740992.0; }

static const double SPECIAL[] = {0.0, -0.0, 1.0, -1.0, INFINITY, -INFINITY, NAN, 0x1p-1074, -0x1p-1074, DBL_MAX, -DBL_MAX,
                                 FLT_MAX, -FLT_MAX, 0x1p-149, -0x1p-149, 0x1p-126, 3.0, -0.5, 1e-300, 0x1.fffffep127};
enum { S = sizeof SPECIAL / sizeof *SPECIAL };

/* x, y, z of every magnitude the type holds (f32: a random f32 bit pattern a third of the time) */
static void inputs(bool f64, double *x, double *y, double *z) {
    for (int i = 0; i < N; i++) {
        double v[3];
        for (int k = 0; k < 3; k++) {
            uint64_t r = next64();
            if (i < S * S) v[k] = SPECIAL[k == 0 ? i / S : k == 1 ? i % S : (i * 7) % S];
            else if (r % 3 == 0) {
                uint32_t b = (uint32_t)(r >> 20);
                float f;
                memcpy(&f, &b, 4);
                v[k] = f64 ? (double)(r >> 1) * (r & 1 ? -1 : 1) * 0x1p-40 : f;
                if (f64 && r % 9 == 0) memcpy(&v[k], &r, 8);
            } else v[k] = (urand() - 0.5) * exp2(urand() * (f64 ? 80 : 40) - (f64 ? 40 : 20));
            if (!f64) v[k] = (float)v[k];
        }
        x[i] = v[0], y[i] = v[1], z[i] = v[2];
        if (i >= S * S && i % 5 == 0) y[i] = -x[i]; /* exact zeros: their sign depends on the mode */
        if (i >= S * S && i % 7 == 0) z[i] = f64 ? -x[i] * y[i] : (float)(-x[i] * y[i]);
    }
}

/* Run exprs (of x, y, z) over the N points in type ty; out[j * N + i] is expression j at point i, each
 * element size es. */
static void run(const char *ty, size_t es, const char *const *exprs, int nexpr, const void *x, const void *y, const void *z, void *out) {
    char *src = malloc(65536);
    int len = snprintf(src, 65536,
                       "@num_warps(4)\n"
                       "kernel k(xp: *%s, yp: *%s, zp: *%s, out: *%s, n: i32) {\n"
                       "    let o = program_id(0) * %d + arange(0, %d);\n"
                       "    let m = o < n;\n"
                       "    let x = load(xp + o, m);\n    let y = load(yp + o, m);\n    let z = load(zp + o, m);\n",
                       ty, ty, ty, ty, BLOCK, BLOCK);
    for (int j = 0; j < nexpr; j++) len += snprintf(src + len, 65536 - (size_t)len, "    store(out + %d + o, %s, m);\n", j * N, exprs[j]);
    snprintf(src + len, 65536 - (size_t)len, "}\n");
    K k;
    load_src(&k, src, "k");
    free(src);
    uint64_t dx = upload(&k, x, es * N), dy = upload(&k, y, es * N), dz = upload(&k, z, es * N), dout = poisoned(&k, es * N * nexpr);
    int32_t n = N;
    void *params[] = {&dx, &dy, &dz, &dout, &n};
    launch(&k, (N + BLOCK - 1) / BLOCK, params);
    download(&k, out, dout, es * N * nexpr);
    unload(&k);
}

/* the sign of a + b - f, f the round-to-nearest a + b (two-sum: s + e is a + b exactly) */
static int sgn(double v) { return v > 0 ? 1 : v < 0 ? -1 : 0; }
static void two_sum(double a, double b, double *s, double *e) {
    *s = a + b;
    double bb = *s - a;
    *e = (a - (*s - bb)) + (b - bb);
}

enum { ADD, SUB, MUL, DIV, FMA, RCP, SQRT };
static const char *const OPNAME[] = {"add", "sub", "mul", "div", "fma", "rcp", "sqrt"};

/* The exactly rounded result of op in mode, for f32 (f64 false) or f64 operands. */
static double directed(int op, int mode, bool f64, double a, double b, double c) {
    double f; /* round to nearest */
    if (f64) {
        f = op == ADD ? a + b : op == SUB ? a - b : op == MUL ? a * b : op == DIV ? a / b : op == FMA ? fma(a, b, c) : op == RCP ? 1 / a : sqrt(a);
    } else {
        float x = (float)a, y = (float)b, w = (float)c;
        f = op == ADD ? x + y : op == SUB ? x - y : op == MUL ? x * y : op == DIV ? x / y : op == FMA ? fmaf(x, y, w) : op == RCP ? 1 / x : sqrtf(x);
    }
    if (isnan(f) || mode == RN) return f;
    bool finite_in = isfinite(a) && (op >= RCP || isfinite(b)) && (op != FMA || isfinite(c));
    if (isinf(f)) { /* overflow of finite operands: the largest finite toward zero */
        double big = f64 ? DBL_MAX : FLT_MAX;
        if (!finite_in || (op == DIV && b == 0) || (op == RCP && a == 0)) return f;
        if (mode == RZ || (mode == RD && f > 0) || (mode == RU && f < 0)) return copysign(big, f);
        return f;
    }
    if (!finite_in) return f;
    int r; /* the sign of the exact result minus f */
    double s, e, p, ep;
    switch (op) {
    case ADD: case SUB:
        two_sum(a, op == ADD ? b : -b, &s, &e);
        r = sgn((s - f) + e);
        break;
    case MUL: { /* p + ep = a b exactly (f32 operands: ep = 0); scaled up where ep would underflow */
        double k = fabs(f) < 0x1p-900 ? 0x1p200 : 1;
        p = (a * k) * b, ep = fma(a * k, b, -p);
        r = sgn((p - f * k) + ep);
        break;
    }
    case FMA: { /* p + ep = a b and s1 + e1 = p + c exactly; all scaled up when small */
        double k = fabs(a * b) < 0x1p-800 && fabs(c) < 0x1p-800 ? 0x1p400 : 1, ak = a * k, ck = c * k, fk = f * k;
        p = ak * b, ep = fma(ak, b, -p);
        double s1, e1, t, et;
        two_sum(p, ck, &s1, &e1);
        two_sum(s1 - fk, e1, &t, &et);
        r = sgn(t + (et + ep));
        if (r == 0 && p == 0 && ep == 0 && a != 0 && b != 0) r = sgn(a) * sgn(b); /* a product below the smallest double */
        break;
    }
    /* the residual's sign from one fma, its operands scaled by powers of two where it would underflow */
    case DIV: {
        double k = fabs(a) < 0x1p-900 ? 0x1p200 : 1;
        r = sgn(fma(-(f * k), b, a * k)) * sgn(b);
        break;
    }
    case RCP: r = sgn(fma(-f, a, 1.0)) * sgn(a); break;
    default: {
        double k = a < 0x1p-900 ? 0x1p100 : 1;
        r = sgn(fma(-(f * k), f * k, a * k * k));
        break;
    }
    }
    if (r == 0 && f == 0 && (op == MUL || op == DIV) && a != 0 && b != 0) r = sgn(a) * sgn(b); /* below the smallest double */
    if (r == 0) {
        /* an exact zero sum of nonzero terms (or of zeros of both signs) is -0 when rounding down */
        if (f == 0 && mode == RD && (op == ADD || op == SUB || op == FMA)) {
            double t1 = op == FMA ? a * b : a, t2 = op == FMA ? c : op == ADD ? b : -b;
            if (op == FMA && a * b == 0) t1 = copysign(0.0, a) * copysign(1.0, b);
            if (!(t1 == 0 && t2 == 0 && !signbit(t1) && !signbit(t2)) && !(t1 == 0 && t2 == 0 && signbit(t1) && signbit(t2))) return -0.0;
            if (t1 == 0 && t2 == 0 && signbit(t1) && signbit(t2)) return -0.0;
            if (t1 == 0 && t2 == 0) return 0.0;
        }
        return f;
    }
    bool down = mode == RD ? r < 0 : mode == RZ && r < 0 && f > 0;
    bool up = mode == RU ? r > 0 : mode == RZ && r > 0 && f < 0;
    if (down) return f64 ? nextafter(f, -INFINITY) : nextafterf((float)f, -INFINITY);
    if (up) return f64 ? nextafter(f, INFINITY) : nextafterf((float)f, INFINITY);
    return f;
}

static bool same(double got, double want) { return (isnan(got) && isnan(want)) || (got == want && signbit(got) == signbit(want)); }

/* add/sub/mul/div/fma/rcp/sqrt in each rounding mode, f32 and f64: exactly the IEEE result */
Test(libdevice, rounding_modes_exact) {
    for (int t = 0; t < 2; t++) {
        bool f64 = t == 1;
        static double x[N], y[N], z[N];
        inputs(f64, x, y, z);
        float xf[N], yf[N], zf[N];
        for (int i = 0; i < N; i++) xf[i] = (float)x[i], yf[i] = (float)y[i], zf[i] = (float)z[i];
        char names[7 * 4][64];
        const char *exprs[7 * 4];
        int ops[7 * 4], modes[7 * 4], ne = 0;
        for (int op = 0; op < 7; op++)
            for (int m = 0; m < 4; m++) {
                bool builtin = (op == DIV || op == SQRT) && m == RN; /* div_rn and sqrt_rn are built-ins */
                const char *args = op == FMA ? "x, y, z" : op >= RCP ? (op == SQRT ? "abs(x)" : "x") : "x, y";
                snprintf(names[ne], sizeof names[ne], "%s_%s(%s)", OPNAME[op], MODE[m], args);
                if (builtin) snprintf(names[ne], sizeof names[ne], "%s_rn(%s)", OPNAME[op], op == DIV ? "x, y" : "abs(x)");
                exprs[ne] = names[ne], ops[ne] = op, modes[ne] = m, ne++;
            }
        void *out = malloc((f64 ? 8 : 4) * (size_t)N * ne);
        run(f64 ? "f64" : "f32", f64 ? 8 : 4, exprs, ne, f64 ? (void *)x : xf, f64 ? (void *)y : yf, f64 ? (void *)z : zf, out);
        for (int j = 0; j < ne; j++) {
            int bad = 0;
            for (int i = 0; i < N && bad < 3; i++) {
                double a = x[i], b = y[i], c = z[i];
                if (ops[j] == SQRT) a = fabs(a);
                double want = directed(ops[j], modes[j], f64, a, b, c);
                double got = f64 ? ((double *)out)[j * N + i] : ((float *)out)[j * N + i];
                if (!same(got, want)) {
                    bad++;
                    cr_expect(false, "%s %s at x=%a y=%a z=%a: got %a, want %a", f64 ? "f64" : "f32", exprs[j], x[i], y[i], z[i], got, want);
                }
            }
        }
        free(out);
    }
}

/* rounding a double-valued exact result v (given as RN value f and the sign r of v - f) in mode, f32 or f64 */
static double adjust(double f, int r, int mode, bool f64) {
    bool down = mode == RD ? r < 0 : mode == RZ && r < 0 && f > 0;
    bool up = mode == RU ? r > 0 : mode == RZ && r > 0 && f < 0;
    if (down) return f64 ? nextafter(f, -INFINITY) : nextafterf((float)f, -INFINITY);
    if (up) return f64 ? nextafter(f, INFINITY) : nextafterf((float)f, INFINITY);
    return f;
}

/* float2int_rd ... ull2double_rz: every mode, every integer type, on specials, halves, the integer limits */
Test(libdevice, conversions_exact) {
    static const char *const fl[] = {"float", "double"}, *const in[] = {"int", "uint", "ll", "ull"};
    char src[32768], exprs[96][48];
    int len = snprintf(src, sizeof src,
                       "@num_warps(4)\nkernel k(xf: *f32, xd: *f64, xi: *i64, out: *i64, n: i32) {\n"
                       "    let o = program_id(0) * %d + arange(0, %d);\n    let m = o < n;\n"
                       "    let f = load(xf + o, m);\n    let d = load(xd + o, m);\n    let l = load(xi + o, m);\n"
                       "    let i = l as i32;\n    let u = l as u32;\n    let ul = l as u64;\n",
                       BLOCK, BLOCK);
    int ne = 0;
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 4; b++)
            for (int md = 0; md < 4; md++) snprintf(exprs[ne++], 48, "%s2%s_%s(%s) as i64", fl[a], in[b], MODE[md], a ? "d" : "f");
    for (int md = 0; md < 4; md++) snprintf(exprs[ne++], 48, "bitcast(double2float_%s(d), i32) as i64", MODE[md]);
    static const char *const iarg[] = {"i", "u", "l", "ul"};
    for (int b = 0; b < 4; b++)
        for (int md = 0; md < 4; md++) snprintf(exprs[ne++], 48, "bitcast(%s2float_%s(%s), i32) as i64", in[b], MODE[md], iarg[b]);
    for (int b = 0; b < 4; b++)
        for (int md = 0; md < 4; md++) {
            if (b < 2 && md != RN) continue; /* exact: only int2double_rn, uint2double_rn */
            snprintf(exprs[ne++], 48, "bitcast(%s2double_%s(%s), i64)", in[b], MODE[md], iarg[b]);
        }
    for (int j = 0; j < ne; j++) len += snprintf(src + len, sizeof src - (size_t)len, "    store(out + %d + o, %s, m);\n", j * N, exprs[j]);
    snprintf(src + len, sizeof src - (size_t)len, "}\n");
    static float xf[N];
    static double xd[N];
    static int64_t xi[N];
    static const double sp[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2147483647.0, 2147483648.0,
                                -2147483649.0, 4294967295.5, 4294967296.0, 9.3e18, 1.9e19, -9.3e18, 1e300, 3.4028235677973366e38, -3.5e38,
                                0x1p-149, 0x1p-1074, 1e-40};
    for (int i = 0; i < N; i++) {
        uint64_t r = next64();
        double v = i < 25 ? sp[i] : i % 3 ? (urand() - 0.5) * exp2(urand() * 70) : (double)(int64_t)r * 0x1p-20;
        if (i % 11 == 0) v = ldexp(round(v * 2) / 2, 0); /* halves */
        xd[i] = v, xf[i] = (float)v;
        xi[i] = i < 8 ? (int64_t[]){0, -1, INT64_MIN, INT64_MAX, INT32_MIN, INT32_MAX, 16777217, -16777217}[i]
                      : (int64_t)(r >> (r % 64));
        if (i % 2) xi[i] = -xi[i];
    }
    K k;
    load_src(&k, src, "k");
    uint64_t df = upload(&k, xf, sizeof xf), dd = upload(&k, xd, sizeof xd), di = upload(&k, xi, sizeof xi), dout = poisoned(&k, 8 * (size_t)N * ne);
    int32_t n = N;
    void *params[] = {&df, &dd, &di, &dout, &n};
    launch(&k, (N + BLOCK - 1) / BLOCK, params);
    int64_t *out = malloc(8 * (size_t)N * ne);
    download(&k, out, dout, 8 * (size_t)N * ne);
    unload(&k);
    for (int j = 0; j < ne; j++) {
        int bad = 0;
        for (int i = 0; i < N && bad < 3; i++) {
            int64_t got = out[j * N + i], want;
            if (j < 32) { /* float -> integer: rounded to an integral value, saturated; NaN as PTX's cvt */
                int a = j / 16, b = (j / 4) % 4, md = j % 4;
                double v = a ? xd[i] : xf[i];
                int bits = b < 2 ? 32 : 64;
                bool sg = b % 2 == 0;
                if (isnan(v)) want = a == 0 && bits == 32 ? 0 : (int64_t)(1ull << (bits - 1));
                else {
                    double rv = md == RD ? floor(v) : md == RN ? nearbyint(v) : md == RU ? ceil(v) : trunc(v);
                    double lo = sg ? -ldexp(1, bits - 1) : 0, hi = sg ? ldexp(1, bits - 1) : ldexp(1, bits);
                    if (rv < lo) want = sg ? (bits == 32 ? INT32_MIN : INT64_MIN) : 0;
                    else if (rv >= hi) want = sg ? (bits == 32 ? INT32_MAX : INT64_MAX) : (bits == 32 ? (int64_t)UINT32_MAX : -1);
                    else want = sg ? (int64_t)rv : (int64_t)(uint64_t)rv;
                }
                if (bits == 32) want = sg ? (int64_t)(int32_t)want : (int64_t)(uint32_t)want;
            } else if (j < 36) { /* double -> float */
                double v = xd[i];
                float f = (float)v;
                double w;
                if (isinf(f) && isfinite(v)) w = (j % 4 == RZ || (j % 4 == RD && v > 0) || (j % 4 == RU && v < 0)) ? copysign(FLT_MAX, v) : f;
                else w = isnan(v) ? NAN : adjust(f, sgn(v - (double)f), j % 4, false);
                float wf = (float)w;
                uint32_t wb;
                memcpy(&wb, &wf, 4);
                want = isnan(w) ? -1 : (int64_t)(int32_t)wb;
                if (isnan(w)) { cr_expect((got & 0x7f800000) == 0x7f800000 && (got & 0x7fffff), "double2float(%a) NaN", v); continue; }
            } else { /* integer -> float or double */
                int q = j - 36, b, md;
                bool f64 = q >= 16;
                if (!f64) b = q / 4, md = q % 4;
                else { q -= 16; b = q < 2 ? q : 2 + (q - 2) / 4; md = q < 2 ? RN : (q - 2) % 4; }
                long double v = b == 0 ? (long double)(int32_t)xi[i] : b == 1 ? (long double)(uint32_t)xi[i] : b == 2 ? (long double)xi[i] : (long double)(uint64_t)xi[i];
                double f = f64 ? (double)v : (double)(float)v;
                double w = adjust(f, v > (long double)f ? 1 : v < (long double)f ? -1 : 0, md, f64);
                if (f64) memcpy(&want, &w, 8);
                else {
                    float wf = (float)w;
                    uint32_t wb;
                    memcpy(&wb, &wf, 4);
                    want = (int64_t)(int32_t)wb;
                }
            }
            if (got != want) {
                bad++;
                cr_expect(false, "%s at f=%a d=%a l=%lld: got %#llx, want %#llx", exprs[j], xf[i], xd[i], (long long)xi[i], (unsigned long long)got,
                          (unsigned long long)want);
            }
        }
    }
    free(out);
}

/* ulps between got and ref in units of the float (f64 false) or double nearest ref; a zero's sign and an
 * infinity must match exactly */
static double ulps(double got, long double ref, bool f64) {
    if (isnan(ref) || isnan(got)) return isnan(got) && isnan(ref) ? 0 : INFINITY;
    double rd = f64 ? (double)ref : (double)(float)ref;
    if (isinf(rd) || isinf(got) || rd == 0 || got == 0)
        return got == rd && signbit(got) == signbit(rd) ? 0 : rd == 0 && got != 0 ? fabs(got) / (f64 ? 0x1p-1074 : 0x1p-149) + 0.5 : INFINITY;
    double a = fabs(rd), tiny = f64 ? 0x1p-1074 : 0x1p-149;
    double u = a < (f64 ? DBL_MIN : FLT_MIN) ? tiny : f64 ? nextafter(a, INFINITY) - a : (double)nextafterf((float)a, INFINITY) - a;
    return (double)(fabsl((long double)got - ref) / u);
}

/* sin(pi x), cos(pi x) with the exact reduction to |t| <= 1/2 (long double's pi t is good to 2^-64 there) */
static long double l_sinpi(long double x) {
    if (!isfinite(x)) return NAN;
    long double r = fmodl(x, 2.0L);
    if (r > 1) r -= 2;
    if (r < -1) r += 2;
    long double t = r > 0.5L ? 1 - r : r < -0.5L ? -1 - r : r;
    long double s = sinl(3.14159265358979323846264338327950288L * t);
    return s == 0 ? copysignl(0.0L, x) : s;
}
static long double l_cospi(long double x) {
    if (!isfinite(x)) return NAN;
    long double a = fabsl(fmodl(x, 2.0L));
    if (a > 1) a = 2 - a;
    long double s = a < 0.25L ? cosl(3.14159265358979323846264338327950288L * a) : sinl(3.14159265358979323846264338327950288L * (0.5L - a));
    return s == 0 ? 0.0L : s;
}
static long double l_norm(long double a, long double b, long double c, long double d, bool recip) {
    if (isinf(a) || isinf(b) || isinf(c) || isinf(d)) return recip ? 0.0L : INFINITY;
    long double q = a * a + b * b + c * c + d * d; /* long double's range holds every square of a double */
    return recip ? 1 / sqrtl(q) : sqrtl(q);
}

/* sinpi cospi ldexp scalbn logb ilogb nextafter remainder norm3d norm4d rnorm3d rnorm4d rhypot, f32 and f64 */
Test(libdevice, functions_against_long_double) {
    static const char *const ex[] = {"sinpi(x)",           "cospi(x)",           "ldexp(x, (o % 2600) - 1300)", "scalbn(x, 1300 - (o % 2600))",
                                     "logb(x)",            "cast(ilogb(x), dtype_of(x))", "nextafter(x, y)", "remainder(x, y)",
                                     "norm3d(x, y, z)",    "norm4d(x, y, z, x)", "rnorm3d(x, y, z)",   "rnorm4d(x, y, z, y)",
                                     "rhypot(x, y)"};
    enum { NE = sizeof ex / sizeof *ex };
    /* the largest error allowed, ulps of f32 and of f64 (docs/language.md) */
    static const double bound[NE][2] = {{0.501, 2}, {0.501, 2}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0},
                                        {0.501, 1.5}, {0.501, 1.5}, {0.501, 2}, {0.501, 2}, {0.501, 2}};
    for (int t = 0; t < 2; t++) {
        bool f64 = t == 1;
        static double x[N], y[N], z[N];
        inputs(f64, x, y, z);
        for (int i = S * S; i < N; i += 13) x[i] = f64 ? (double)(int64_t)(next64() >> 12) * 0.5 : (float)(int)(next64() >> 40) * 0.25f; /* halves, quarters */
        for (int i = S * S + 1; i < N; i += 17) y[i] = f64 ? x[i] / 3 : (float)(x[i] / 3); /* remainder's quotient near an integer */
        for (int i = S * S + 2; i < N; i += 19) { /* remainder's ties: x = (m + 1/2) y exactly, m even and odd */
            y[i] = ldexp(3, (int)(next64() % 200) - 100), x[i] = y[i] * ((double)(int)(next64() % 41) - 20.5);
            if (i % 2) x[i] = -x[i];
        }
        static float xf[N], yf[N], zf[N];
        for (int i = 0; i < N; i++) xf[i] = (float)x[i], yf[i] = (float)y[i], zf[i] = (float)z[i];
        void *out = malloc((f64 ? 8 : 4) * (size_t)N * NE);
        run(f64 ? "f64" : "f32", f64 ? 8 : 4, ex, NE, f64 ? (void *)x : xf, f64 ? (void *)y : yf, f64 ? (void *)z : zf, out);
        for (int j = 0; j < NE; j++) {
            double worst = 0;
            int at = 0;
            for (int i = 0; i < N; i++) {
                long double a = x[i], b = y[i], c = z[i], ref;
                int n = (i % 2600) - 1300;
                switch (j) {
                case 0: ref = l_sinpi(a); break;
                case 1: ref = l_cospi(a); break;
                case 2: ref = f64 ? ldexp(x[i], n) : ldexpf((float)x[i], n); break;
                case 3: ref = f64 ? ldexp(x[i], -n) : ldexpf((float)x[i], -n); break;
                case 4: ref = f64 ? logb(x[i]) : logbf((float)x[i]); break;
                case 5: ref = f64 ? (double)ilogb(x[i]) : (double)(float)ilogbf((float)x[i]); break;
                case 6: ref = f64 ? nextafter(x[i], y[i]) : nextafterf((float)x[i], (float)y[i]); break;
                case 7: ref = f64 ? remainder(x[i], y[i]) : remainderf((float)x[i], (float)y[i]); break;
                case 8: ref = l_norm(a, b, c, 0, false); break;
                case 9: ref = l_norm(a, b, c, a, false); break;
                case 10: ref = l_norm(a, b, c, 0, true); break;
                case 11: ref = l_norm(a, b, c, b, true); break;
                default: ref = l_norm(a, b, 0, 0, true); break;
                }
                double got = f64 ? ((double *)out)[j * N + i] : ((float *)out)[j * N + i];
                double e = ulps(got, ref, f64);
                if (!(e <= worst)) worst = e, at = i;
            }
            double got = f64 ? ((double *)out)[j * N + at] : ((float *)out)[j * N + at];
            printf("%s %-30s max %.3f ulp (at x=%a y=%a z=%a: got %a)\n", f64 ? "f64" : "f32", ex[j], worst, x[at], y[at], z[at], got);
            cr_expect(worst <= bound[j][t], "%s %s: %.3f ulp (bound %g) at x=%a y=%a z=%a: got %a", f64 ? "f64" : "f32", ex[j], worst,
                      bound[j][t], x[at], y[at], z[at], got);
        }
        free(out);
    }
}

/* byte_perm mul24 sad (signed and unsigned), double2hiint double2loint hiloint2double: exact, on extremes and
 * random words */
Test(libdevice, integer_helpers) {
    K k;
    load_src(&k,
             "@num_warps(4)\nkernel k(a: *i32, b: *i32, c: *i32, d: *f64, o: *i32, od: *f64, n: i32) {\n"
             "    let i = program_id(0) * 512 + arange(0, 512);\n    let m = i < n;\n"
             "    let x = load(a + i, m);\n    let y = load(b + i, m);\n    let z = load(c + i, m);\n    let v = load(d + i, m);\n"
             "    store(o + i, byte_perm(x, y, z), m);\n"
             "    store(o + n + i, mul24(x, y), m);\n"
             "    store(o + 2 * n + i, mul24(x as u32, y as u32) as i32, m);\n"
             "    store(o + 3 * n + i, sad(x, y, z), m);\n"
             "    store(o + 4 * n + i, sad(x as u32, y as u32, z as u32) as i32, m);\n"
             "    store(o + 5 * n + i, double2hiint(v), m);\n"
             "    store(o + 6 * n + i, double2loint(v), m);\n"
             "    store(od + i, hiloint2double(x, y), m);\n"
             "}\n",
             "k");
    enum { M = 1500 };
    static int32_t a[M], b[M], c[M], o[7 * M];
    static double d[M], od[M];
    for (int i = 0; i < M; i++) {
        a[i] = i < 4 ? (int32_t[]){0, -1, INT32_MIN, INT32_MAX}[i] : (int32_t)next64();
        b[i] = i < 4 ? (int32_t[]){-1, INT32_MIN, INT32_MAX, 0x00800001}[i] : (int32_t)(next64() >> (i % 32));
        c[i] = (int32_t)next64();
        uint64_t r = next64();
        memcpy(&d[i], &r, 8);
    }
    int32_t n = M;
    uint64_t da = upload(&k, a, sizeof a), db = upload(&k, b, sizeof b), dc = upload(&k, c, sizeof c), dd = upload(&k, d, sizeof d),
             dout = poisoned(&k, sizeof o), dod = poisoned(&k, sizeof od);
    void *params[] = {&da, &db, &dc, &dd, &dout, &dod, &n};
    launch(&k, (M + 511) / 512, params);
    download(&k, o, dout, sizeof o);
    download(&k, od, dod, sizeof od);
    unload(&k);
    for (int i = 0; i < M; i++) {
        uint32_t x = (uint32_t)a[i], y = (uint32_t)b[i], s = (uint32_t)c[i], perm = 0;
        uint8_t by[8];
        for (int q = 0; q < 4; q++) by[q] = (uint8_t)(x >> (8 * q)), by[4 + q] = (uint8_t)(y >> (8 * q));
        for (int q = 0; q < 4; q++) perm |= (uint32_t)by[(s >> (4 * q)) & 7] << (8 * q);
        int32_t sx = (int32_t)(x << 8) >> 8, sy = (int32_t)(y << 8) >> 8; /* the low 24 bits, sign-extended */
        uint32_t mul24s = (uint32_t)((int64_t)sx * sy), mul24u = (x & 0xFFFFFF) * (y & 0xFFFFFF);
        uint32_t sads = (uint32_t)((a[i] > b[i] ? (int64_t)a[i] - b[i] : (int64_t)b[i] - a[i]) + s), sadu = (x > y ? x - y : y - x) + s;
        uint64_t bits;
        memcpy(&bits, &d[i], 8);
        uint64_t hl = ((uint64_t)x << 32) | y, got;
        memcpy(&got, &od[i], 8);
        uint32_t want[7] = {perm, mul24s, mul24u, sads, sadu, (uint32_t)(bits >> 32), (uint32_t)bits};
        for (int j = 0; j < 7; j++)
            cr_expect_eq((uint32_t)o[j * M + i], want[j], "helper %d at x=%#x y=%#x z=%#x: got %#x, want %#x", j, x, y, s, (uint32_t)o[j * M + i], want[j]);
        cr_expect_eq(got, hl, "hiloint2double(%#x, %#x) bits %#llx", x, y, (unsigned long long)got);
    }
}

static const long double SQRT_PI_2 = 0.886226925452758013649083741671L; /* sqrt(pi) / 2 */
/* erfcinv in long double: the result given refined by Newton steps on erfcl (good to about 2^-60) */
static long double l_erfcinv(long double y, double start) {
    if (isnan(y) || y < 0 || y > 2) return NAN;
    if (y == 0) return INFINITY;
    if (y == 2) return -INFINITY;
    long double x = isfinite(start) ? start : 0;
    for (int k = 0; k < 6; k++) x += (erfcl(x) - y) * SQRT_PI_2 * expl(x * x);
    return x;
}
static long double l_erfcx(long double x) {
    if (isnan(x)) return NAN;
    if (isinf(x)) return x > 0 ? 0 : INFINITY;
    if (x < 100) {
        long double hi = x * x, lo = fmal(x, x, -hi);
        return expl(hi) * (1 + lo) * erfcl(x);
    }
    long double w = 1 / (2 * x * x), term = 1, sum = 1;
    for (int k = 1; k < 12; k++) term *= -(2 * k - 1) * w, sum += term;
    return sum / (x * 1.77245385090551602729816748334L);
}

/* erfcinv normcdfinv erfcx (f32 and f64), rsqrt_rn (f32, correctly rounded), rcp64h (f64) */
Test(libdevice, inverse_and_scaled_error_functions) {
    static const char *const ex[] = {"erfcinv(x)", "normcdfinv(y)", "erfcx(z)"};
    static const double bound[3][2] = {{0.501, 3}, {0.501, 3}, {0.501, 4}};
    for (int t = 0; t < 2; t++) {
        bool f64 = t == 1;
        static double x[N], y[N], z[N];
        inputs(f64, x, y, z);
        for (int i = S * S; i < N; i++) {
            double e = -urand() * (f64 ? 1070 : 148); /* every magnitude of (0, 2) */
            x[i] = i % 3 == 0 ? exp2(e) : i % 3 == 1 ? 2 - exp2(e / 20) : 2 * urand();
            y[i] = i % 2 ? exp2(e) : urand();
            z[i] = i % 4 == 0 ? (urand() - 0.3) * 60 : i % 4 == 1 ? exp2(urand() * 40 - 20) : i % 4 == 2 ? 20 + urand() * 10 : -urand() * 27;
            if (!f64) x[i] = (float)x[i], y[i] = (float)y[i], z[i] = (float)z[i];
        }
        static float xf[N], yf[N], zf[N];
        for (int i = 0; i < N; i++) xf[i] = (float)x[i], yf[i] = (float)y[i], zf[i] = (float)z[i];
        void *out = malloc((f64 ? 8 : 4) * (size_t)N * 3);
        run(f64 ? "f64" : "f32", f64 ? 8 : 4, ex, 3, f64 ? (void *)x : xf, f64 ? (void *)y : yf, f64 ? (void *)z : zf, out);
        for (int j = 0; j < 3; j++) {
            double worst = 0;
            int at = 0;
            for (int i = 0; i < N; i++) {
                double got = f64 ? ((double *)out)[j * N + i] : ((float *)out)[j * N + i];
                long double ref = j == 0 ? l_erfcinv(x[i], got) : j == 1 ? -1.41421356237309504880168872420969808L * l_erfcinv(2.0L * y[i], -got / M_SQRT2)
                                                        : l_erfcx(z[i]);
                double e = ulps(got, ref, f64);
                if (!(e <= worst)) worst = e, at = i;
            }
            double got = f64 ? ((double *)out)[j * N + at] : ((float *)out)[j * N + at];
            printf("%s %-14s max %.3f ulp (at x=%a y=%a z=%a: got %a)\n", f64 ? "f64" : "f32", ex[j], worst, x[at], y[at], z[at], got);
            cr_expect(worst <= bound[j][t], "%s %s: %.3f ulp (bound %g) at x=%a y=%a z=%a: got %a", f64 ? "f64" : "f32", ex[j], worst,
                      bound[j][t], x[at], y[at], z[at], got);
        }
        free(out);
    }
    /* rsqrt_rn: exactly 1/sqrt(x) rounded (long double's 64 bits leave no f32 midpoint in doubt here); rcp64h:
     * rcp.approx.ftz.f64 of x's high word, the low word zero */
    static float xf[N];
    static double xd[N];
    for (int i = 0; i < N; i++) {
        uint32_t b = (uint32_t)next64();
        if (i % 2) b &= 0x7fffffff;
        memcpy(&xf[i], &b, 4);
        if (i < S) xf[i] = (float)SPECIAL[i];
        xd[i] = (urand() - 0.5) * exp2(urand() * 200 - 100);
    }
    /* rsqrt_rn is 1 / sqrt(x) in f64 rounded to f32: that double rounding is right for every significand of
     * [1, 4), so for every f32 (x 4^k has the result 2^-k times x's) */
    for (uint32_t b = 0x3f800000, bad = 0; b < 0x40800000 && bad < 3; b++) {
        float v;
        memcpy(&v, &b, 4);
        if ((float)(1.0 / sqrt((double)v)) != (float)(1 / sqrtl(v))) {
            bad++;
            cr_expect(false, "1/sqrt(%a) double-rounds", v);
        }
    }
    static const char *const ex1[] = {"rsqrt_rn(x)"}, *const ex2[] = {"rcp64h(x)"};
    static float of[N];
    static double od[N];
    run("f32", 4, ex1, 1, xf, xf, xf, of);
    run("f64", 8, ex2, 1, xd, xd, xd, od);
    for (int i = 0, bad = 0; i < N && bad < 3; i++) {
        float want = (float)(1 / sqrtl(xf[i]));
        if (!same(of[i], want)) {
            bad++;
            cr_expect(false, "rsqrt_rn(%a) = %a, want %a", xf[i], of[i], want);
        }
        uint64_t hb, gb;
        memcpy(&hb, &xd[i], 8);
        hb &= ~0xFFFFFFFFull;
        double h;
        memcpy(&h, &hb, 8);
        memcpy(&gb, &od[i], 8);
        if ((gb & 0xFFFFFFFFu) || fabs(od[i] * h - 1) > 0x1p-19) {
            bad++;
            cr_expect(false, "rcp64h(%a) = %a", xd[i], od[i]);
        }
    }
}

/* I0 and I1 in long double: the power series of positive terms, to 2^-64 of the sum (every x up to 714) */
static long double l_bessel_i(long double x, int nu) {
    if (isnan(x)) return NAN;
    long double d = fabsl(x), q = d * d / 4, t = nu ? d / 2 : 1, s = t;
    if (isinf(d)) return nu && x < 0 ? -INFINITY : INFINITY;
    for (int k = 1; k < 4000 && t > s * 0x1p-70L; k++) t *= q / ((long double)k * (k + nu)), s += t;
    return nu && signbit(x) ? -s : s;
}

/* cyl_bessel_i0 cyl_bessel_i1 on f32 and f64, both series' ranges, up to overflow */
Test(libdevice, modified_bessel_functions) {
    static const char *const ex[] = {"cyl_bessel_i0(x)", "cyl_bessel_i1(x)"};
    static const double bound[2][2] = {{0.501, 6}, {0.501, 6}}; /* CUDA's for f64: 6 */
    for (int t = 0; t < 2; t++) {
        bool f64 = t == 1;
        static double x[N], y[N], z[N];
        inputs(f64, x, y, z);
        for (int i = S * S; i < N; i++) {
            x[i] = i % 3 == 0 ? (urand() - 0.5) * 50 : i % 3 == 1 ? (urand() - 0.5) * (f64 ? 1440 : 200) : (urand() - 0.5) * exp2(urand() * 30 - 25);
            if (!f64) x[i] = (float)x[i];
        }
        static float xf[N];
        for (int i = 0; i < N; i++) xf[i] = (float)x[i];
        void *out = malloc((f64 ? 8 : 4) * (size_t)N * 2);
        run(f64 ? "f64" : "f32", f64 ? 8 : 4, ex, 2, f64 ? (void *)x : xf, f64 ? (void *)x : xf, f64 ? (void *)x : xf, out);
        for (int j = 0; j < 2; j++) {
            double worst = 0;
            int at = 0;
            for (int i = 0; i < N; i++) {
                double got = f64 ? ((double *)out)[j * N + i] : ((float *)out)[j * N + i];
                double e = ulps(got, l_bessel_i(x[i], j), f64);
                if (!(e <= worst)) worst = e, at = i;
            }
            double got = f64 ? ((double *)out)[j * N + at] : ((float *)out)[j * N + at];
            printf("%s %-16s max %.3f ulp (at x=%a: got %a, want %La)\n", f64 ? "f64" : "f32", ex[j], worst, x[at], got, l_bessel_i(x[at], j));
            cr_expect(worst <= bound[j][t], "%s %s: %.3f ulp (bound %g) at x=%a: got %a", f64 ? "f64" : "f32", ex[j], worst, bound[j][t], x[at], got);
        }
        free(out);
    }
}

/* j0 j1 y0 y1 jn yn on f32 and f64 against glibc's long double j0l ... ynl: errors in ulps of the result, and where
 * the functions oscillate (|x| past 1/2 and the order) in ulps of the envelope sqrt(2 / (pi |x|)) when the result is
 * smaller (near a zero only the absolute error is small) */
Test(libdevice, bessel_functions) {
    static const char *const ex[] = {"j0(x)", "j1(x)", "y0(x)", "y1(x)", "jn(cast(y, i32), x)", "yn(cast(y, i32), x)"};
    enum { NE = sizeof ex / sizeof *ex };
    static const double bound[NE][2] = {{1, 8}, {1, 8}, {1, 8}, {1, 8}, {1, 12}, {1, 12}};
    for (int t = 0; t < 2; t++) {
        bool f64 = t == 1;
        static double x[N], y[N], z[N];
        inputs(f64, x, y, z);
        for (int i = 0; i < N; i++) {
            if (i >= S * S) x[i] = i % 4 == 0 ? (urand() - 0.5) * 60 : i % 4 == 1 ? (urand() - 0.5) * 200 : i % 4 == 2 ? exp2(urand() * 60 - 40) : exp2(urand() * (f64 ? 100 : 60));
            if (!f64) x[i] = (float)x[i];
            y[i] = (double)((int)(next64() % 60) - 20);
        }
        static float xf[N], yf[N];
        for (int i = 0; i < N; i++) xf[i] = (float)x[i], yf[i] = (float)y[i];
        void *out = malloc((f64 ? 8 : 4) * (size_t)N * NE);
        run(f64 ? "f64" : "f32", f64 ? 8 : 4, ex, NE, f64 ? (void *)x : xf, f64 ? (void *)y : yf, f64 ? (void *)y : yf, out);
        for (int j = 0; j < NE; j++) {
            double worst = 0;
            int at = 0;
            for (int i = 0; i < N; i++) {
                long double a = x[i], ref;
                int n = (int)y[i];
                switch (j) {
                case 0: ref = j0l(a); break;
                case 1: ref = j1l(a); break;
                case 2: ref = y0l(a); break;
                case 3: ref = y1l(a); break;
                case 4: ref = jnl(n, a); break;
                default: ref = ynl(n, a); break;
                }
                if (j >= 2 && j != 4 && a < 0) ref = NAN; /* Y of a negative x: NaN (glibc's says so too, with -inf at -0) */
                double got = f64 ? ((double *)out)[j * N + i] : ((float *)out)[j * N + i];
                double env = sqrt(2 / (M_PI * fabs(x[i]))), e = ulps(got, ref, f64);
                int order = j == 1 || j == 3 ? 1 : j >= 4 ? abs(n) : 0;
                /* where the functions oscillate (past their order and 2), the envelope's ulps; before, the result's */
                if (fabs(x[i]) > (order > 0.5 ? order : 0.5) && isfinite(ref) && isfinite(got) && fabsl(ref) < env) {
                    float ef = (float)env;
                    e = fabsl((long double)got - ref) / (f64 ? nextafter(env, INFINITY) - env : (double)nextafterf(ef, INFINITY) - ef);
                }
                if (isinf(x[i]) && got == 0 && ref == 0) e = 0; /* the sign of a zero at infinity means nothing */
                if (!(e <= worst)) worst = e, at = i;
            }
            double got = f64 ? ((double *)out)[j * N + at] : ((float *)out)[j * N + at];
            printf("%s %-20s max %.3f ulp (at x=%a n=%g: got %a)\n", f64 ? "f64" : "f32", ex[j], worst, x[at], y[at], got);
            cr_expect(worst <= bound[j][t], "%s %s: %.3f ulp (bound %g) at x=%a n=%g: got %a", f64 ? "f64" : "f32", ex[j], worst, bound[j][t], x[at],
                      y[at], got);
        }
        free(out);
    }
}

/* J_n(x) for x > 0, n >= 0 in long double: Miller's backward recurrence J_(k-1) = (2k / x) J_k - J_(k+1) from an
 * order far past n and x (J there below 2^-300 of J_n), normalized by J0 + 2 sum J_2k = 1.  Each J_k of the stable
 * (monotone) range k > x comes with a small relative error, so J_n past x is good to a few ulps of long double. */
static long double l_jn_miller(int n, long double x) {
    int top = 2 * ((int)(n > x ? n : x) + 200);
    long double bp = 0, b = 0x1p-8000L, norm = 0, jn = 0;
    for (int k = top; k >= 1; k--) { /* b = J_k, bp = J_(k+1) */
        if (k == n) jn = b;
        if (k % 2 == 0) norm += 2 * b;
        long double bm = 2.0L * k / x * b - bp;
        bp = b, b = bm;
        if (fabsl(b) > 0x1p8000L) b *= 0x1p-8000L, bp *= 0x1p-8000L, norm *= 0x1p-8000L, jn *= 0x1p-8000L;
    }
    if (n == 0) jn = b;
    return jn / (norm + b);
}

/* jn(n, x) for n > x > 88 (up to n = 128), where J_n is small and the forward recurrence from J0 and J1 loses
 * everything (before: f64 errors of 10^12 ulps and more, f32 results of the wrong sign); against l_jn_miller,
 * checked first against glibc's jnl where that is good (x below 25) */
Test(libdevice, bessel_jn_past_x) {
    for (int i = 0; i < 200; i++) {
        double x = 0.5 + urand() * 24;
        int n = (int)(next64() % 60);
        long double r = l_jn_miller(n, x), g = jnl(n, x);
        cr_assert(fabsl(r - g) <= 1e-15L * fabsl(g) + 1e-300L, "l_jn_miller(%d, %a) = %La, jnl %La", n, x, r, g);
    }
    static const char *const ex[] = {"jn(cast(y, i32), x)"};
    for (int t = 0; t < 2; t++) {
        bool f64 = t == 1;
        static double x[N], y[N];
        for (int i = 0; i < N; i++) {
            x[i] = 88 + urand() * 40; /* up to 128 */
            if (!f64) x[i] = (float)x[i];
            int lo = (int)ceil(x[i]) + (i % 3 == 0 ? 0 : 1);
            if (lo > 128) lo = 128;
            y[i] = lo + (double)(next64() % (uint64_t)(128 - lo + 1));
            if (i % 4 == 1) x[i] = -x[i]; /* J_n(-x) = (-1)^n J_n(x) */
            if (i % 4 == 2) y[i] = -y[i]; /* J_-n = (-1)^n J_n */
        }
        static float xf[N], yf[N];
        for (int i = 0; i < N; i++) xf[i] = (float)x[i], yf[i] = (float)y[i];
        void *out = malloc((f64 ? 8 : 4) * (size_t)N);
        run(f64 ? "f64" : "f32", f64 ? 8 : 4, ex, 1, f64 ? (void *)x : xf, f64 ? (void *)y : yf, f64 ? (void *)y : yf, out);
        double worst = 0;
        int at = 0;
        for (int i = 0; i < N; i++) {
            int n = (int)y[i], an = abs(n);
            long double ref = l_jn_miller(an, fabsl((long double)x[i]));
            if ((an % 2) && ((x[i] < 0) != (n < 0))) ref = -ref;
            double got = f64 ? ((double *)out)[i] : ((float *)out)[i];
            double e = ulps(got, ref, f64);
            if (!(e <= worst)) worst = e, at = i;
        }
        double got = f64 ? ((double *)out)[at] : ((float *)out)[at];
        printf("%s jn past x > 88: max %.3f ulp (at x=%a n=%g: got %a, want %La)\n", f64 ? "f64" : "f32", worst, x[at], y[at], got,
               l_jn_miller(abs((int)y[at]), fabsl((long double)x[at])));
        /* f64: 12.6 ulps while the steps below n were rounded to one double each (now double-double) */
        cr_expect(worst <= (f64 ? 4 : 1), "%s jn past x: %.3f ulp at x=%a n=%g: got %a", f64 ? "f64" : "f32", worst, x[at], y[at], got);
        free(out);
    }
}
