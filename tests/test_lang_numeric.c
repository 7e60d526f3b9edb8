/* test_lang_numeric.c - the numeric rules of docs/language.md, operator by operator and type pair by
 * type pair, against host references, on the emulator as sm_80 and sm_90a: integer + - * / % & | ^
 * << >> and comparisons of every pair of the 8 integer types (promotion, wrap-around, truncating
 * division, shifts by the width or more and by negative amounts, unsigned compares), float + - * / %
 * comparisons and minimum/maximum (both propagate_nan modes) of every pair of f16 bf16 f32 f64
 * (NaN, signed zeros, infinities, subnormals), conversions between every pair of the 15 types (as sm_80,
 * sm_89 and sm_90a: software and hardware f8), fma/sqrt/div_rn rounded once; with run-time operands,
 * cast constants, constants held in `let`s and a run-time value with a constant (folded in lang/ or
 * by canonicalize, or left to LLVM), and the sign of a NaN that a constant fold makes.  Inputs: edge
 * values and random ones (TILE_TEST_SEED replays them); outputs poisoned first, n not the block. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/tile/tile.h"
#include "runtime/device.h"
#include "support/hostfloat.h"
#include "support/support.h"
#include "tests/lang_run.h"
#include "tests/test_rng.h"

enum { N = 64, LIVE = 61 }; /* lanes of a block, and the n the kernels get */

typedef struct Ty {
    const char *name;
    int bits;
    bool sgn, flt;
} Ty;

static const Ty ints[] = {{"i8", 8, true, false},   {"i16", 16, true, false}, {"i32", 32, true, false}, {"i64", 64, true, false},
                          {"u8", 8, false, false},  {"u16", 16, false, false}, {"u32", 32, false, false}, {"u64", 64, false, false}};
static const Ty flts[] = {{"f16", 16, true, true}, {"bf16", 16, true, true}, {"f32", 32, true, true}, {"f64", 64, true, true}};

static const char *targets[][2] = {{"sm_80", "emu:sm_80"}, {"sm_90a", "emu:sm_90a"}};

/* ---- integers ---- */

/* v as a value of t: its bits, sign- or zero-extended to 64 */
static uint64_t wrapi(uint64_t v, const Ty *t) {
    if (t->bits == 64) return v;
    uint64_t m = (1ull << t->bits) - 1, u = v & m;
    if (t->sgn && (u >> (t->bits - 1))) u |= ~m;
    return u;
}

static const Ty *promote_int(const Ty *a, const Ty *b) {
    if (a == b) return a;
    if (a->bits != b->bits) return a->bits > b->bits ? a : b;
    return a->sgn ? b : a;
}

static const char *const int_ops[] = {"+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "==", "!=", "<", "<=", ">", ">="};
enum { NIOPS = sizeof int_ops / sizeof *int_ops };

static bool is_cmp(const char *op) { return op[0] == '=' || op[0] == '!' || ((op[0] == '<' || op[0] == '>') && op[1] != op[0]); }
static bool is_div(const char *op) { return !strcmp(op, "/") || !strcmp(op, "%"); }

/* Whether the documented result of x op y (values of ta and tb, as bits) is defined, and it in *r: what
 * `(x op y) as i64` gives (the promoted type's value widened; a comparison 0 or 1). */
static bool int_ref(const char *op, const Ty *ta, const Ty *tb, uint64_t xa, uint64_t yb, uint64_t *r) {
    const Ty *t = promote_int(ta, tb);
    int w = t->bits;
    uint64_t x = wrapi(wrapi(xa, ta), t), y = wrapi(wrapi(yb, tb), t); /* converted to t */
    int64_t sx = (int64_t)x, sy = (int64_t)y;
    uint64_t mask = w == 64 ? ~0ull : (1ull << w) - 1, ux = x & mask, uy = y & mask;
    uint64_t v;
    if (!strcmp(op, "+")) v = x + y;
    else if (!strcmp(op, "-")) v = x - y;
    else if (!strcmp(op, "*")) v = x * y;
    else if (is_div(op)) {
        if (uy == 0) return false;                                          /* undefined, as in C */
        if (t->sgn && sy == -1 && ux == (1ull << (w - 1))) return false;     /* INT_MIN / -1 overflows */
        bool q = op[0] == '/';
        v = t->sgn ? (uint64_t)(q ? sx / sy : sx % sy) : (q ? ux / uy : ux % uy); /* C truncates, as documented */
    } else if (!strcmp(op, "&")) v = x & y;
    else if (!strcmp(op, "|")) v = x | y;
    else if (!strcmp(op, "^")) v = x ^ y;
    else if (!strcmp(op, "<<") || !strcmp(op, ">>")) {
        bool out = t->sgn ? (sy < 0 || sy >= w) : uy >= (uint64_t)w; /* by the width or more, or negative */
        if (op[0] == '<') v = out ? 0 : ux << uy;
        else if (ta->sgn) { /* arithmetic, on the promoted type's bits taken as signed */
            int64_t xs = (int64_t)wrapi(ux, &(Ty){"", w, true, false});
            v = out ? (xs < 0 ? ~0ull : 0) : (xs < 0 ? ~(~(uint64_t)xs >> uy) : (uint64_t)xs >> uy);
        } else v = out ? 0 : ux >> uy;
    } else {
        bool lt = t->sgn ? sx < sy : ux < uy, eq = ux == uy;
        bool c = !strcmp(op, "==") ? eq : !strcmp(op, "!=") ? !eq : !strcmp(op, "<") ? lt : !strcmp(op, "<=") ? lt || eq
                 : !strcmp(op, ">") ? !lt && !eq : !lt;
        *r = c;
        return true;
    }
    *r = wrapi(v, t);
    if (!t->sgn) *r &= mask;
    return true;
}

/* Edge values of t (its limits, widths as shift amounts, small negatives), then random ones: as bits. */
static void int_values(const Ty *t, uint64_t *v, int n) {
    static const int64_t fixed[] = {0, 1, -1, 2, -2, 3, -7, 7, INT64_MIN, INT64_MIN + 1, INT64_MAX, INT64_MAX - 1, 8, 16, 31, 32,
                                    33, 63, 64, 65, -8, -32, -64, 100, -100, 127, 128, 255, 256, 32767, 32768, 65535,
                                    (int64_t)0x80000000ll, (int64_t)0xFFFFFFFFll, 0x100000001ll, (int64_t)0x100000000ll};
    int k = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed && k < n; i++) v[k++] = wrapi((uint64_t)fixed[i], t);
    if (t->bits < 64) { /* the type's own limits */
        v[k++ % n] = wrapi(t->sgn ? 1ull << (t->bits - 1) : 0, t);
        v[k++ % n] = wrapi(t->sgn ? (1ull << (t->bits - 1)) - 1 : (1ull << t->bits) - 1, t);
    }
    for (; k < n; k++) v[k] = wrapi(rnext(), t) >> (irand(2) ? 0 : irand(t->bits)); /* some small, some full width */
    for (int i = 0; i < n; i++) v[i] = wrapi(v[i], t);
}

static void put_int(void *buf, int i, const Ty *t, uint64_t v) { memcpy((char *)buf + (size_t)i * (t->bits / 8), &v, t->bits / 8); }

/* `(v as T)`, v a value of t as bits: a literal of the value's sign (u64 past i64 as its unsigned value) */
static void int_literal(Str *s, const Ty *t, uint64_t v) {
    if (t->sgn && (int64_t)v < 0) str_printf(s, "((%lld) as %s)", (long long)(int64_t)v, t->name);
    else str_printf(s, "(%llu as %s)", (unsigned long long)(t->sgn ? v : v & (t->bits == 64 ? ~0ull : (1ull << t->bits) - 1)), t->name);
}

/* Every operator on run-time operands of types ta and tb: one kernel, N lanes an operator. */
static int int_pair_runtime(const char *arch, const char *dev, const Ty *ta, const Ty *tb) {
    uint64_t xv[N], yv[N], dv[N];
    int_values(ta, xv, N);
    int_values(tb, yv, N);
    for (int i = N - 1; i > 0; i--) { /* pair edges with other edges */
        int j = irand(i + 1);
        uint64_t t = yv[i];
        yv[i] = yv[j], yv[j] = t;
    }
    const Ty *pt = promote_int(ta, tb);
    for (int i = 0; i < N; i++) dv[i] = wrapi(yv[i], pt) == 0 ? 3 : yv[i]; /* no zero divisor */
    Str s = {0};
    str_printf(&s, "kernel k(xp: *%s, yp: *%s, dp: *%s, out: *i64, n: i32) {\n"
                   "    let c = arange(0, %d);\n    let m = c < n;\n"
                   "    let x = load(xp + c, m);\n    let y = load(yp + c, m);\n    let d = load(dp + c, m);\n",
               ta->name, tb->name, tb->name, N);
    bool live[NIOPS];
    for (int o = 0; o < NIOPS; o++) {
        live[o] = !(is_div(int_ops[o]) && ta->sgn != tb->sgn); /* refused: a compile error (test_lang_triton_values) */
        if (live[o]) str_printf(&s, "    store(out + %d + c, (x %s %s) as i64, m);\n", o * N, int_ops[o], is_div(int_ops[o]) ? "d" : "y");
    }
    str_puts(&s, "}\n");
    K k;
    load_src_on(&k, s.buf, "k", arch, dev);
    str_free(&s);
    unsigned char hx[N * 8], hy[N * 8], hd[N * 8];
    for (int i = 0; i < N; i++) put_int(hx, i, ta, xv[i]), put_int(hy, i, tb, yv[i]), put_int(hd, i, tb, dv[i]);
    uint64_t dx = upload(&k, hx, sizeof hx), dy = upload(&k, hy, sizeof hy), dd = upload(&k, hd, sizeof hd);
    uint64_t dout = poisoned(&k, (size_t)NIOPS * N * 8);
    int32_t n = LIVE;
    void *params[] = {&dx, &dy, &dd, &dout, &n};
    launch(&k, 1, params);
    uint64_t *got = malloc((size_t)NIOPS * N * 8);
    cr_assert(got);
    download(&k, got, dout, (size_t)NIOPS * N * 8);
    unload(&k);
    int bad = 0;
    for (int o = 0; o < NIOPS; o++)
        for (int i = 0; i < N; i++) {
            uint64_t want, g = got[o * N + i];
            if (!live[o]) continue;
            if (i >= LIVE) {
                bad += g != ~0ull;
                cr_expect_eq(g, ~0ull, "%s: lane %d past n written", arch, i);
                continue;
            }
            uint64_t y = is_div(int_ops[o]) ? dv[i] : yv[i];
            if (!int_ref(int_ops[o], ta, tb, xv[i], y, &want)) continue;
            if (g != want && bad++ < 8)
                cr_expect_eq(g, want, "%s: %s %lld %s %s %lld: %lld, want %lld", arch, ta->name, (long long)xv[i], int_ops[o], tb->name,
                             (long long)y, (long long)g, (long long)want);
        }
    free(got);
    return bad;
}

Test(lang_numeric, int_operators_of_every_type_pair, .timeout = 600) {
    seed_rng();
    cr_log_info("seed %llu (TILE_TEST_SEED replays it)", (unsigned long long)seed);
    for (size_t t = 0; t < 2; t++) {
        int bad = 0;
        for (size_t a = 0; a < 8; a++)
            for (size_t b = 0; b < 8; b++) bad += int_pair_runtime(targets[t][0], targets[t][1], &ints[a], &ints[b]);
        cr_expect_eq(bad, 0, "%s: %d wrong results", targets[t][0], bad);
    }
}

/* The same operators where the operands are constants: cast (`(v as T)`, folded in lang/), held in a
 * `let` of a declared type, and one of them run-time (the constant then folded by LLVM or canonicalize);
 * a shift of two constants by the width or more is an error (docs), so those amounts are left out. */
typedef enum CtForm { CT_CAST, CT_LET, CT_RT_LEFT, CT_RT_RIGHT, CT_FORMS } CtForm;
static const char *const ct_form_names[] = {"cast constants", "let constants", "run-time left", "run-time right"};

static int int_pair_constants(const Ty *ta, const Ty *tb, CtForm form) {
    enum { P = 9 };
    uint64_t xv[P], yv[P];
    int_values(ta, xv, P);
    int_values(tb, yv, P);
    for (int i = 0; i < P; i++) { /* fresh random pairs besides the edges */
        if (irand(2)) xv[i] = wrapi(rnext() >> irand(64), ta);
        if (irand(2)) yv[(i * 5) % P] = wrapi(rnext() >> irand(64), tb);
    }
    const Ty *pt = promote_int(ta, tb);
    Str s = {0};
    str_printf(&s, "kernel k(xp: *%s, yp: *%s, out: *i64) {\n", ta->name, tb->name);
    uint64_t want[NIOPS * P], hx[NIOPS * P], hy[NIOPS * P];
    int nc = 0;
    for (int o = 0; o < NIOPS; o++) {
        if (is_div(int_ops[o]) && ta->sgn != tb->sgn) continue;
        for (int i = 0; i < P; i++) {
            uint64_t x = xv[i], y = yv[(i + o) % P], r;
            if (!int_ref(int_ops[o], ta, tb, x, y, &r)) continue;
            int64_t amount = (int64_t)wrapi(y, pt);
            bool shift = int_ops[o][0] == int_ops[o][1] && (int_ops[o][0] == '<' || int_ops[o][0] == '>');
            if (shift && (form == CT_CAST || form == CT_LET) && (amount < 0 || amount >= pt->bits || (!pt->sgn && (uint64_t)amount >= (uint64_t)pt->bits)))
                continue; /* of two constants: an error */
            Str a = {0}, b = {0};
            if (form == CT_RT_LEFT) str_printf(&a, "load(xp + %d)", nc);
            else int_literal(&a, ta, x);
            if (form == CT_RT_RIGHT) str_printf(&b, "load(yp + %d)", nc);
            else int_literal(&b, tb, y);
            if (form == CT_LET) {
                str_printf(&s, "    let a%d: %s = %s;\n    let b%d: %s = %s;\n", nc, ta->name, a.buf, nc, tb->name, b.buf);
                str_free(&a), str_free(&b);
                str_printf(&a, "a%d", nc), str_printf(&b, "b%d", nc);
            }
            str_printf(&s, "    store(out + %d, (%s %s %s) as i64);\n", nc, a.buf, int_ops[o], b.buf);
            str_free(&a), str_free(&b);
            hx[nc] = x, hy[nc] = y, want[nc++] = r;
        }
    }
    str_puts(&s, "}\n");
    K k;
    load_src_on(&k, s.buf, "k", NULL, NULL);
    unsigned char bx[NIOPS * P * 8], by[NIOPS * P * 8];
    for (int i = 0; i < nc; i++) put_int(bx, i, ta, hx[i]), put_int(by, i, tb, hy[i]);
    uint64_t dx = upload(&k, bx, sizeof bx), dy = upload(&k, by, sizeof by), dout = poisoned(&k, (size_t)nc * 8);
    void *params[] = {&dx, &dy, &dout};
    launch(&k, 1, params);
    uint64_t got[NIOPS * P];
    download(&k, got, dout, (size_t)nc * 8);
    unload(&k);
    int bad = 0;
    for (int c = 0; c < nc; c++)
        if (got[c] != want[c] && bad++ < 6) {
            const char *line = s.buf;
            for (int l = 0; l < c + 1 + (form == CT_LET ? 2 * (c + 1) : 0); l++) line = strchr(line, '\n') + 1;
            cr_expect_eq(got[c], want[c], "%s: %.*s: %lld, want %lld", ct_form_names[form], (int)(strchr(line, '\n') - line), line,
                         (long long)got[c], (long long)want[c]);
        }
    str_free(&s);
    return bad;
}

Test(lang_numeric, int_operators_of_constants, .timeout = 600) {
    seed_rng();
    cr_log_info("seed %llu (TILE_TEST_SEED replays it)", (unsigned long long)seed);
    int bad = 0;
    for (int f = 0; f < CT_FORMS; f++)
        for (size_t a = 0; a < 8; a++) {
            bad += int_pair_constants(&ints[a], &ints[a], (CtForm)f);
            bad += int_pair_constants(&ints[a], &ints[(a + 3 + f) % 8], (CtForm)f); /* a mixed pair, another each form */
        }
    cr_expect_eq(bad, 0, "%d wrong results", bad);
}

/* A shift by the width or more gives 0 (or the sign's fill) whatever LLVM knows of it: `(1 << s) == 0` was
 * folded to false (LLVM's shl past the width is poison), and a 64-bit amount of 2^32 + 1 shifted by 1 (PTX's
 * 64-bit shifts take the amount's low 32 bits). */
Test(lang_numeric, shift_past_the_width_is_zero) {
    for (size_t t = 0; t < 2; t++) {
        K k;
        load_src_on(&k,
                    "kernel k(s: *i32, s64: *i64, out: *i32, o64: *i64, n: i32) {\n"
                    "    let c = arange(0, 16);\n    let m = c < n;\n"
                    "    let a = load(s + c, m);\n    let b = load(s64 + c, m);\n"
                    "    store(out + c, where((1 << a) == 0, 1, 0) + where((-8 >> a) == -1, 10, 0) + where((a >> a) == 0, 100, 0), m);\n"
                    "    store(o64 + c, (3 as i64) << b, m);\n"
                    "    store(o64 + 16 + c, (-5 as i64) >> b, m);\n"
                    "    store(o64 + 32 + c, (b as u64 >> b) as i64, m);\n"
                    "}\n",
                    "k", targets[t][0], targets[t][1]);
        int32_t s[16] = {0, 1, 31, 32, 33, 40, -1, -32, INT32_MIN, INT32_MAX, 64, 3};
        int64_t s64[16] = {0, 1, 63, 64, 65, 0x100000001ll, (int64_t)0x100000000ll, -1, INT64_MIN, INT64_MIN + 1, INT64_MAX, 32,
                           (int64_t)0x8000000000000001ull, 2};
        uint64_t ds = upload(&k, s, sizeof s), ds64 = upload(&k, s64, sizeof s64), dout = poisoned(&k, 16 * 4), do64 = poisoned(&k, 48 * 8);
        int32_t n = 14, out[16];
        int64_t o64[48];
        void *params[] = {&ds, &ds64, &dout, &do64, &n};
        launch(&k, 1, params);
        download(&k, out, dout, sizeof out);
        download(&k, o64, do64, sizeof o64);
        unload(&k);
        for (int i = 0; i < n; i++) {
            int32_t a = s[i];
            bool big = a < 0 || a >= 32;
            int want = (big ? 1 : 0) + ((big ? -1 : -8 >> a) == -1 ? 10 : 0) + ((big ? (a < 0 ? -1 : 0) : a >> a) == 0 ? 100 : 0);
            cr_expect_eq(out[i], want, "%s: s = %d: %d, want %d", targets[t][0], a, out[i], want);
            int64_t b = s64[i];
            bool big64 = b < 0 || b >= 64;
            cr_expect_eq(o64[i], big64 ? 0 : (int64_t)(3ull << b), "%s: 3 << %lld: %lld", targets[t][0], (long long)b, (long long)o64[i]);
            cr_expect_eq(o64[16 + i], big64 ? -1 : (int64_t)-5 >> b, "%s: -5 >> %lld: %lld", targets[t][0], (long long)b, (long long)o64[16 + i]);
            uint64_t ub = (uint64_t)b;
            cr_expect_eq((uint64_t)o64[32 + i], ub >= 64 ? 0 : ub >> ub, "%s: u64 %llu >> itself: %llu", targets[t][0],
                         (unsigned long long)ub, (unsigned long long)o64[32 + i]);
        }
    }
}

/* ---- floats ---- */

/* v rounded to nearest even with mant fraction bits, normal exponents from emin, past maxv infinite */
static double round_prec(double v, int mant, int emin, double maxv) {
    if (!isfinite(v) || v == 0) return v;
    int e;
    frexp(v, &e);
    int q = (e - 1 < emin ? emin : e - 1) - mant;
    double r = ldexp(nearbyint(ldexp(v, -q)), q);
    return fabs(r) > maxv ? copysign(INFINITY, v) : r;
}

static double round_to(double v, const Ty *t) {
    if (!strcmp(t->name, "f16")) return round_prec(v, 10, -14, 65504.0);
    if (!strcmp(t->name, "bf16")) return round_prec(v, 7, -126, 0x1.FEp127);
    if (!strcmp(t->name, "f32")) return (double)(float)v;
    return v;
}

static uint64_t f_bits(double v, const Ty *t) {
    if (t->bits == 64) {
        uint64_t b;
        memcpy(&b, &v, 8);
        return b;
    }
    float f = (float)v;
    uint32_t b;
    memcpy(&b, &f, 4);
    if (t->bits == 32) return b;
    return !strcmp(t->name, "f16") ? f32_to_f16(f) : f32_to_bf16(f); /* v is a value of t: exact */
}

static double f_val(uint64_t b, const Ty *t) {
    if (t->bits == 64) {
        double d;
        memcpy(&d, &b, 8);
        return d;
    }
    if (t->bits == 32) {
        float f;
        uint32_t u = (uint32_t)b;
        memcpy(&f, &u, 4);
        return f;
    }
    return !strcmp(t->name, "f16") ? f16_to_d((uint16_t)b) : bf16_to_d((uint16_t)b);
}

static const Ty *promote_float(const Ty *a, const Ty *b) {
    if (a == b) return a;
    if (a->bits == b->bits) return &flts[2]; /* f16 with bf16: f32 */
    return a->bits > b->bits ? a : b;
}

static const char *const float_ops[] = {"+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "min", "max", "minn", "maxn"};
enum { NFOPS = sizeof float_ops / sizeof *float_ops };

/* minimum/maximum: -0.0 below +0.0; a NaN gives NaN, or with num the other operand */
static double minmax_ref(double x, double y, bool min, bool num) {
    if (isnan(x) || isnan(y)) return num ? (isnan(x) ? y : x) : NAN;
    if (x == y) return (signbit(x) != 0) == min ? x : y;
    return (x < y) == min ? x : y;
}

/* x op y in t (operands values of t): a double of t, or for a comparison 0/1 */
static double float_ref(const char *op, double x, double y, const Ty *t) {
    if (!strcmp(op, "+")) return round_to(x + y, t); /* exact in double for f16 and bf16; else rounded once more, harmlessly */
    if (!strcmp(op, "-")) return round_to(x - y, t);
    if (!strcmp(op, "*")) return round_to(x * y, t);
    if (!strcmp(op, "/")) return round_to(x / y, t);
    if (!strcmp(op, "%")) return fmod(x, y); /* exact */
    if (!strcmp(op, "==")) return x == y;
    if (!strcmp(op, "!=")) return x != y;
    if (!strcmp(op, "<")) return x < y;
    if (!strcmp(op, "<=")) return x <= y;
    if (!strcmp(op, ">")) return x > y;
    if (!strcmp(op, ">=")) return x >= y;
    return minmax_ref(x, y, op[1] == 'i', op[3] == 'n');
}

static bool same_float(double a, double b) { return isnan(a) ? isnan(b) : a == b && signbit(a) == signbit(b); }

static void float_values(const Ty *t, double *v, int n) {
    double maxv = !strcmp(t->name, "f16") ? 65504.0 : !strcmp(t->name, "bf16") ? 0x1.FEp127 : t->bits == 32 ? FLT_MAX : DBL_MAX;
    int emin = !strcmp(t->name, "f16") ? -14 : t->bits == 64 ? -1022 : -126, mant = !strcmp(t->name, "f16") ? 10 : !strcmp(t->name, "bf16") ? 7 : t->bits == 32 ? 23 : 52;
    double fixed[] = {0.0, -0.0, 1.0, -1.0, INFINITY, -INFINITY, NAN, maxv, -maxv, ldexp(1, emin), -ldexp(1, emin), ldexp(1, emin - mant),
                      -ldexp(1, emin - mant), 0.5, 3.0, -7.5, 2.0, 1.0 + ldexp(1, -mant), 0.1, -0.3, 1e4, 1.0 / 3, 65504.0, 6e4, 7.0};
    int k = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed && k < n; i++) v[k++] = round_to(fixed[i], t);
    for (; k < n; k++) {
        double r = irand(2) ? urand() * 10 : copysign(exp2(emin - mant + (urand() + 1) / 2 * (log2(maxv) - emin + mant)), urand());
        v[k] = round_to(r, t);
    }
}

static void put_float(void *buf, int i, const Ty *t, double v) {
    uint64_t b = f_bits(v, t);
    memcpy((char *)buf + (size_t)i * (t->bits / 8), &b, t->bits / 8);
}

static const char *ubits(const Ty *t) { return t->bits == 64 ? "u64" : t->bits == 32 ? "u32" : "u16"; }

/* `(v as T)`: the double's shortest exact digits (infinities and NaN as divisions, folded) */
static void float_literal(Str *s, const Ty *t, double v) {
    if (isnan(v)) str_printf(s, "((0.0 / 0.0) as %s)", t->name);
    else if (isinf(v)) str_printf(s, "((%s1.0 / 0.0) as %s)", v < 0 ? "-" : "", t->name);
    else if (v == 0) str_printf(s, "((%s0.0) as %s)", signbit(v) ? "-" : "", t->name); /* -0 would be the integer 0 */
    else str_printf(s, "((%.17g) as %s)", v, t->name);
}

static void float_expr(Str *s, const char *op, const char *a, const char *b, const Ty *pt) {
    if (op[0] == 'm') str_printf(s, "%s(%s, %s%s)", op[1] == 'i' ? "minimum" : "maximum", a, b, op[3] == 'n' ? ", propagate_nan=\"none\"" : "");
    else if (is_cmp(op)) str_printf(s, "(%s %s %s) as %s", a, op, b, pt->name);
    else str_printf(s, "%s %s %s", a, op, b);
}

static int float_pair(const char *arch, const char *dev, const Ty *ta, const Ty *tb, CtForm form) {
    double xv[N], yv[N];
    float_values(ta, xv, N);
    float_values(tb, yv, N);
    for (int i = N - 1; i > 0; i--) {
        int j = irand(i + 1);
        double t = yv[i];
        yv[i] = yv[j], yv[j] = t;
    }
    const Ty *pt = promote_float(ta, tb);
    bool rt = form == CT_FORMS; /* both run-time: every lane; else 13 lanes an operator (others for the next), a store each */
    int cnt = rt ? N : 13;
    Str s = {0};
    str_printf(&s, "kernel k(xp: *%s, yp: *%s, out: *u64, n: i32) {\n    let c = arange(0, %d);\n    let m = c < n;\n", ta->name, tb->name, N);
    if (rt) str_puts(&s, "    let x = load(xp + c, m);\n    let y = load(yp + c, m);\n");
    for (int o = 0; o < NFOPS; o++) {
        if (rt) {
            Str e = {0};
            float_expr(&e, float_ops[o], "x", "y", pt);
            str_printf(&s, "    store(out + %d + c, bitcast(%s, %s) as u64, m);\n", o * N, e.buf, ubits(pt));
            str_free(&e);
            continue;
        }
        for (int j = 0; j < cnt; j++) {
            int i = (j * 5 + o) % N;
            Str a = {0}, b = {0}, e = {0};
            if (form == CT_RT_LEFT) str_printf(&a, "load(xp + %d)", i);
            else float_literal(&a, ta, xv[i]);
            if (form == CT_RT_RIGHT) str_printf(&b, "load(yp + %d)", i);
            else float_literal(&b, tb, yv[i]);
            if (form == CT_LET) {
                int id = o * N + i;
                str_printf(&s, "    let a%d: %s = %s;\n    let b%d: %s = %s;\n", id, ta->name, a.buf, id, tb->name, b.buf);
                str_free(&a), str_free(&b);
                str_printf(&a, "a%d", id), str_printf(&b, "b%d", id);
            }
            float_expr(&e, float_ops[o], a.buf, b.buf, pt);
            str_printf(&s, "    store(out + %d, bitcast(%s, %s) as u64);\n", o * N + i, e.buf, ubits(pt));
            str_free(&a), str_free(&b), str_free(&e);
        }
    }
    str_puts(&s, "}\n");
    K k;
    load_src_on(&k, s.buf, "k", arch, dev);
    str_free(&s);
    unsigned char hx[N * 8], hy[N * 8];
    for (int i = 0; i < N; i++) put_float(hx, i, ta, xv[i]), put_float(hy, i, tb, yv[i]);
    uint64_t dx = upload(&k, hx, sizeof hx), dy = upload(&k, hy, sizeof hy), dout = poisoned(&k, (size_t)NFOPS * N * 8);
    int32_t n = LIVE;
    void *params[] = {&dx, &dy, &dout, &n};
    launch(&k, 1, params);
    uint64_t *got = malloc((size_t)NFOPS * N * 8);
    cr_assert(got);
    download(&k, got, dout, (size_t)NFOPS * N * 8);
    unload(&k);
    int bad = 0;
    for (int o = 0; o < NFOPS; o++)
        for (int j = 0; j < cnt; j++) {
            int i = rt ? j : (j * 5 + o) % N;
            uint64_t g = got[o * N + i];
            if (rt && i >= LIVE) {
                bad += g != ~0ull;
                continue;
            }
            double x = xv[i], y = yv[i]; /* values of pt as well: widening is exact */
            double want = float_ref(float_ops[o], x, y, pt);
            /* a comparison is stored as 1 or 0 of pt */
            double gv = !is_cmp(float_ops[o]) ? f_val(g, pt) : g == f_bits(1.0, pt) ? 1 : g == f_bits(0.0, pt) ? 0 : -1;
            if (!same_float(gv, want) && bad++ < 8)
                cr_expect(false, "%s, %s: %s %a %s %s %a (in %s): %a, want %a", arch, rt ? "run-time" : ct_form_names[form], ta->name, x,
                          float_ops[o], tb->name, y, pt->name, gv, want);
        }
    free(got);
    return bad;
}

Test(lang_numeric, float_operators_of_every_type_pair, .timeout = 600) {
    seed_rng();
    cr_log_info("seed %llu (TILE_TEST_SEED replays it)", (unsigned long long)seed);
    for (size_t t = 0; t < 2; t++) {
        int bad = 0;
        for (size_t a = 0; a < 4; a++)
            for (size_t b = 0; b < 4; b++) bad += float_pair(targets[t][0], targets[t][1], &flts[a], &flts[b], CT_FORMS);
        cr_expect_eq(bad, 0, "%s: %d wrong results", targets[t][0], bad);
    }
}

Test(lang_numeric, float_operators_of_constants, .timeout = 600) {
    seed_rng();
    cr_log_info("seed %llu (TILE_TEST_SEED replays it)", (unsigned long long)seed);
    int bad = 0;
    for (int f = 0; f < CT_FORMS; f++)
        for (size_t a = 0; a < 4; a++) bad += float_pair(NULL, NULL, &flts[a], &flts[(a + (size_t)f) % 4], (CtForm)f);
    cr_expect_eq(bad, 0, "%d wrong results", bad);
}

/* A NaN that a constant fold makes is positive, as a GPU's arithmetic makes it: the host's invalid
 * operation gave x86's negative NaN, so `0.0 / 0.0` (the spelling of a NaN here) had its sign bit set,
 * signbit() of it was true and sort put it first instead of last (docs: "a NaN made by arithmetic is
 * positive"), unlike the same division at run time.  Folded in lang/ (weak and held constants) and by
 * canonicalize (sqrt(-1.0), inf - inf of splat tensors). */
Test(lang_numeric, folded_nan_is_positive) {
    K k;
    load_src(&k,
             "kernel k(zp: *f32, out: *u32, o16: *u16, o64: *u64) {\n"
             "    let z = load(zp);\n"
             "    static_assert(1.0 / -0.0 == -1.0 / 0.0 && isnan(1.0 % 0.0) && !signbit(1.0 % 0.0), \"IEEE's\");\n"
             "    let c = arange(0, 4);\n"
             "    let inf = 1.0 / 0.0;\n"
             "    let h: f32 = inf;\n"
             "    let t = zeros([4], f32) + inf;\n"
             "    store(out + 0, bitcast(0.0 / 0.0, u32));\n"
             "    store(out + 1, bitcast(h - h, u32));\n"
             "    store(out + 2, bitcast(sqrt(-1.0), u32));\n"
             "    store(out + 12 + c, bitcast(t - t, u32));\n"
             "    store(out + 3, bitcast((0.0 / 0.0) % 2.0, u32));\n"
             "    store(out + 4, bitcast(0.0 * h, u32));\n"
             "    store(out + 5, bitcast(z / z, u32));\n"
             "    store(out + 6, signbit(0.0 / 0.0) as u32);\n"
             "    store(out + 7, bitcast(-(0.0 / 0.0), u32));\n"
             "    store(out + 8 + c, bitcast(sort(where(c == 1, 0.0 / 0.0, c as f32)), u32));\n"
             "    store(o16 + 0, bitcast((0.0 / 0.0) as f16, u16));\n"
             "    store(o16 + 1, bitcast((0.0 / 0.0) as bf16, u16));\n"
             "    store(o16 + 2, bitcast((inf as f16) - (inf as f16), u16));\n"
             "    store(o64, bitcast((0.0 / 0.0) as f64, u64));\n"
             "    store(o64 + 1, bitcast((inf as f64) * 0.0, u64));\n"
             "}\n",
             "k");
    float zero = 0.0f;
    uint64_t dz = upload(&k, &zero, 4), dout = poisoned(&k, 16 * 4), d16 = poisoned(&k, 3 * 2), d64 = poisoned(&k, 2 * 8);
    void *params[] = {&dz, &dout, &d16, &d64};
    launch(&k, 1, params);
    uint32_t o[16];
    uint16_t o16[3];
    uint64_t o64[2];
    download(&k, o, dout, sizeof o);
    download(&k, o16, d16, sizeof o16);
    download(&k, o64, d64, sizeof o64);
    unload(&k);
    for (int i = 0; i < 6; i++)
        cr_expect((o[i] & 0x7fffffffu) > 0x7f800000u && !(o[i] >> 31), "out[%d] = 0x%08x: not a positive NaN", i, o[i]);
    for (int i = 12; i < 16; i++)
        cr_expect((o[i] & 0x7fffffffu) > 0x7f800000u && !(o[i] >> 31), "inf - inf of a tensor: 0x%08x, not a positive NaN", o[i]);
    cr_expect_eq(o[6], 0, "signbit(0.0 / 0.0) is true");
    cr_expect((o[7] & 0x7fffffffu) > 0x7f800000u && (o[7] >> 31), "-(0.0 / 0.0) = 0x%08x: not a negative NaN", o[7]);
    cr_expect(o[8] == 0 && o[9] == 0x40000000u && o[10] == 0x40400000u && (o[11] & 0x7fffffffu) > 0x7f800000u,
              "sort of (0, NaN, 2, 3): 0x%x 0x%x 0x%x 0x%x, the NaN not last", o[8], o[9], o[10], o[11]);
    cr_expect((o16[0] & 0x7fff) > 0x7c00 && !(o16[0] >> 15), "f16 NaN 0x%04x", o16[0]);
    cr_expect((o16[1] & 0x7fff) > 0x7f80 && !(o16[1] >> 15), "bf16 NaN 0x%04x", o16[1]);
    cr_expect((o16[2] & 0x7fff) > 0x7c00 && !(o16[2] >> 15), "f16 inf - inf 0x%04x", o16[2]);
    for (int i = 0; i < 2; i++)
        cr_expect((o64[i] & ~(1ull << 63)) > 0x7ff0000000000000ull && !(o64[i] >> 63), "f64 NaN %d: 0x%016llx", i, (unsigned long long)o64[i]);
}

/* ---- conversions: every source type to every type, at run time and folded ---- */

typedef struct CTy {
    const char *name;
    int bits;        /* of the storage: 8 for i1 and the f8 types */
    char kind;       /* 'i' signed, 'u' unsigned (i1 too), 'f' float, '8' f8 */
    int mant, emin;  /* floats: fraction bits, least normal exponent */
    long double max; /* floats: largest finite */
} CTy;

static const CTy ctys[] = {
    {"i1", 8, 'b', 0, 0, 0},       {"i8", 8, 'i', 0, 0, 0},
    {"i16", 16, 'i', 0, 0, 0},     {"i32", 32, 'i', 0, 0, 0},
    {"i64", 64, 'i', 0, 0, 0},     {"u8", 8, 'u', 0, 0, 0},
    {"u16", 16, 'u', 0, 0, 0},     {"u32", 32, 'u', 0, 0, 0},
    {"u64", 64, 'u', 0, 0, 0},     {"f16", 16, 'f', 10, -14, 65504.0L},
    {"bf16", 16, 'f', 7, -126, 0x1.FEp127L}, {"f32", 32, 'f', 23, -126, (long double)FLT_MAX},
    {"f64", 64, 'f', 52, -1022, (long double)DBL_MAX}, {"f8e4m3", 8, '8', 3, -6, 448.0L},
    {"f8e5m2", 8, '8', 2, -14, 57344.0L},
};
enum { NCTY = sizeof ctys / sizeof *ctys };

/* A value of a source type: an exact number (every integer of 64 bits and every float fit a long double's
 * 64-bit significand), NaN included. */
static long double lround_prec(long double v, const CTy *t) {
    if (isnan(v)) return v;
    if (isinf(v) || fabsl(v) > t->max) {
        if (t->kind == '8') return copysignl(t->max, v); /* saturate, infinities too */
        long double r = isinf(v) ? v : 0;
        if (!isinf(v)) { /* past the largest finite: to it or to infinity by the rounding */
            int e;
            frexpl(t->max, &e);
            long double half_ulp = ldexpl(1.0L, e - 1 - t->mant - 1);
            r = fabsl(v) >= t->max + half_ulp ? copysignl(INFINITY, v) : copysignl(t->max, v);
        }
        return r;
    }
    if (v == 0) return v;
    int e;
    frexpl(v, &e);
    int q = (e - 1 < t->emin ? t->emin : e - 1) - t->mant;
    long double r = ldexpl(nearbyintl(ldexpl(v, -q)), q);
    if (fabsl(r) > t->max) return t->kind == '8' ? copysignl(t->max, v) : copysignl(INFINITY, v);
    return r;
}

/* the bits of x (a value of t) */
static uint64_t cty_bits(long double x, const CTy *t) {
    switch (t->kind) {
    case 'b': return x != 0;
    case 'i': return (uint64_t)(int64_t)x & (t->bits == 64 ? ~0ull : (1ull << t->bits) - 1);
    case 'u': return (uint64_t)x;
    case '8': return isinf(x) && t->mant == 2 ? (signbit(x) ? 0xFC : 0x7C) : d_to_f8((double)x, t->mant == 2);
    default: break;
    }
    if (t->bits == 64) {
        double d = (double)x;
        uint64_t b;
        memcpy(&b, &d, 8);
        return b;
    }
    float f = (float)x;
    uint32_t b;
    memcpy(&b, &f, 4);
    return t->bits == 32 ? b : !strcmp(t->name, "f16") ? f32_to_f16(f) : f32_to_bf16(f);
}

/* the documented conversion of x (a value of from) to `to` */
static long double convert_ref(long double x, const CTy *from, const CTy *to) {
    bool fl = from->kind == 'f' || from->kind == '8';
    if (from == to) return x; /* the value itself (an f8e5m2 infinity too) */
    switch (to->kind) {
    case 'b': return x != 0; /* NaN: true */
    case 'i':
    case 'u': {
        if (isnan(x)) return 0;
        long double t = fl ? truncl(x) : x;
        long double lo = to->kind == 'u' ? 0 : -ldexpl(1, to->bits - 1), hi = ldexpl(1, to->bits - (to->kind == 'i')) - 1;
        if (fl) return t < lo ? lo : t > hi ? hi : t; /* saturated */
        /* integers wrap */
        uint64_t b = (uint64_t)(x < 0 ? (uint64_t)(int64_t)x : (uint64_t)x);
        if (to->bits < 64) b &= (1ull << to->bits) - 1;
        if (to->kind == 'i' && to->bits < 64 && (b >> (to->bits - 1))) return (long double)(int64_t)(b | ~((1ull << to->bits) - 1));
        if (to->kind == 'i' && to->bits == 64) return (long double)(int64_t)b;
        return (long double)b;
    }
    default: return lround_prec(x, to);
    }
}

static void cty_values(const CTy *t, long double *v, int n) {
    int k = 0;
    if (t->kind == 'b') {
        for (; k < n; k++) v[k] = k & 1;
        return;
    }
    if (t->kind == 'i' || t->kind == 'u') {
        const Ty it = {t->name, t->bits, t->kind == 'i', false};
        static const int64_t more[] = {65504, 65519, 65520, 65535, 16777217, -16777217, (1ll << 24) + 3, (1ll << 53) + 1,
                                       (1ll << 62) + (1ll << 38) + 1, (1ll << 56) + (1ll << 48) + 1, 448, 464, 480, 57344, 61440, 300,
                                       (int64_t)0x7FFFFF7FFFFFFFFFull, -(1ll << 60) - (1ll << 36) - 1};
        uint64_t b[N];
        int_values(&it, b, n);
        for (size_t i = 0; i < sizeof more / sizeof *more; i++) b[40 + i] = wrapi((uint64_t)more[i], &it);
        for (; k < n; k++) v[k] = t->kind == 'i' ? (long double)(int64_t)b[k] : (long double)b[k];
        return;
    }
    if (t->kind == '8') {
        for (; k < n; k++) {
            uint8_t c = (uint8_t)(k < 16 ? k * 17 : irand(256));
            v[k] = t->mant == 3 ? f8e4m3_to_d(c) : f8e5m2_to_d(c);
        }
        return;
    }
    static const long double fixed[] = {0.0L, -0.0L, 1.0L, -1.0L, INFINITY, -INFINITY, NAN, -3.75L, 300.7L, 127.5L, 128.0L,
                                        -128.5L, 255.9L, 65519.0L, 65520.0L, 65535.9L, 65536.0L, -2147483648.0L, 2147483648.0L,
                                        4294967296.0L, 9.3e18L, 1.9e19L, -9.3e18L, 448.0L, 464.0L, 465.0L, 1.0625L + 0x1p-20L,
                                        57344.0L, 61439.0L, 61440.0L, 1e-3L, 0x1p-10L, 0x1.8p-9L, 0x1p-17L, 0x1.8p-17L, 1e30L,
                                        -1e30L, 0x1p-130L, 0x1.000001p-126L};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed && k < n; i++) v[k++] = lround_prec(fixed[i], t);
    v[k++] = t->max, v[k++] = -t->max;
    for (; k < n; k++) v[k] = lround_prec(copysignl(exp2l(40.0L * (urand() + 1) - 20), urand()), t);
}

static void cty_literal(Str *s, const CTy *t, long double x) {
    if (t->kind == 'b') str_printf(s, "%s", x != 0 ? "true" : "false");
    else if (t->kind == 'i' || t->kind == 'u') int_literal(s, &(Ty){t->name, t->bits, t->kind == 'i', false}, cty_bits(x, t));
    else float_literal(s, &(Ty){t->name, t->bits, true, true}, (double)x);
}

static void put_bits(void *buf, int i, int bytes, uint64_t b) { memcpy((char *)buf + (size_t)i * bytes, &b, (size_t)bytes); }

/* From one source type to every type: run time (one lane a value) or constants (cast or let). */
static int casts_from(const char *arch, const char *dev, const CTy *from, CtForm form) {
    long double v[N];
    cty_values(from, v, N);
    bool rt = form == CT_FORMS;
    int per = rt ? N : 8;
    for (int i = 0; i < N && !rt && from->kind == '8'; i++) /* a constant cast to f8 saturates: no f8 infinity is written */
        if (isinf(v[i])) v[i] = copysignl(from->max, v[i]);
    Str s = {0};
    str_printf(&s, "kernel k(xp: *%s, out: *u64, n: i32) {\n    let c = arange(0, %d);\n    let m = c < n;\n", from->name, N);
    if (rt) str_puts(&s, "    let v = load(xp + c, m);\n");
    for (int j = 0; j < NCTY; j++) {
        const CTy *to = &ctys[j];
        const char *ub = to->bits == 64 ? "u64" : to->bits == 32 ? "u32" : to->bits == 16 ? "u16" : "u8";
        for (int i = 0; i < per; i++) {
            Str x = {0};
            int lane = rt ? 0 : (i * 7 + j) % N;
            if (rt) str_puts(&x, "v");
            else if (form == CT_LET) {
                Str lit = {0};
                cty_literal(&lit, from, v[lane]);
                str_printf(&s, "    let a%d_%d: %s = %s;\n", j, i, from->name, lit.buf);
                str_free(&lit);
                str_printf(&x, "a%d_%d", j, i);
            } else {
                str_puts(&x, "(");
                cty_literal(&x, from, v[lane]);
                if (from->kind == 'b') str_printf(&x, " as i1");
                str_puts(&x, ")");
            }
            if (to->kind == 'b') str_printf(&s, "    store(out + %d%s, (%s as i1) as u64%s);\n", j * N + (rt ? 0 : lane), rt ? " + c" : "", x.buf, rt ? ", m" : "");
            else str_printf(&s, "    store(out + %d%s, bitcast(%s as %s, %s) as u64%s);\n", j * N + (rt ? 0 : lane), rt ? " + c" : "", x.buf,
                            to->name, ub, rt ? ", m" : "");
            str_free(&x);
            if (rt) break;
        }
    }
    str_puts(&s, "}\n");
    K k;
    load_src_on(&k, s.buf, "k", arch, dev);
    str_free(&s);
    unsigned char hx[N * 8];
    for (int i = 0; i < N; i++) put_bits(hx, i, from->bits / 8, cty_bits(v[i], from));
    uint64_t dx = upload(&k, hx, sizeof hx), dout = poisoned(&k, (size_t)NCTY * N * 8);
    int32_t n = LIVE;
    void *params[] = {&dx, &dout, &n};
    launch(&k, 1, params);
    uint64_t *got = malloc((size_t)NCTY * N * 8);
    cr_assert(got);
    download(&k, got, dout, (size_t)NCTY * N * 8);
    unload(&k);
    int bad = 0;
    for (int j = 0; j < NCTY; j++) {
        const CTy *to = &ctys[j];
        for (int i = 0; i < (rt ? LIVE : per); i++) {
            int lane = rt ? i : (i * 7 + j) % N;
            long double want = convert_ref(v[lane], from, to);
            uint64_t g = got[j * N + lane], wb = cty_bits(want, to);
            bool nan_ok = isnan(want) && (to->kind == 'f' || to->kind == '8') && ((to->bits == 64 && (g & ~(1ull << 63)) > 0x7ff0000000000000ull) ||
                          (to->bits == 32 && (g & 0x7fffffffu) > 0x7f800000u) || (!strcmp(to->name, "f16") && (g & 0x7fff) > 0x7c00) ||
                          (!strcmp(to->name, "bf16") && (g & 0x7fff) > 0x7f80) || (to->kind == '8' && (g & 0x7f) == (to->mant == 3 ? 0x7f : (g & 0x7f)) && (to->mant == 3 || (g & 0x7f) > 0x7c)));
            if (g != wb && !nan_ok && bad++ < 8)
                cr_expect(false, "%s, %s: %s %.21Lg as %s: bits 0x%llx, want 0x%llx (%.21Lg)", arch ? arch : "sm_80", rt ? "run-time" : ct_form_names[form],
                          from->name, v[lane], to->name, (unsigned long long)g, (unsigned long long)wb, want);
        }
    }
    free(got);
    return bad;
}

Test(lang_numeric, conversions_between_every_type_pair, .timeout = 600) {
    seed_rng();
    cr_log_info("seed %llu (TILE_TEST_SEED replays it)", (unsigned long long)seed);
    static const char *arches[][2] = {{"sm_80", "emu:sm_80"}, {"sm_89", "emu:sm_89"}, {"sm_90a", "emu:sm_90a"}};
    int bad = 0;
    for (size_t a = 0; a < 3; a++)
        for (int f = 0; f < NCTY; f++) bad += casts_from(arches[a][0], arches[a][1], &ctys[f], CT_FORMS);
    for (int f = 0; f < NCTY; f++) {
        bad += casts_from(NULL, NULL, &ctys[f], CT_CAST);
        bad += casts_from(NULL, NULL, &ctys[f], CT_LET);
    }
    cr_expect_eq(bad, 0, "%d wrong conversions", bad);
}

/* fma rounds once, in every float type (f16 and bf16 too: fma.rn.f16/.bf16, not an f32 fma rounded again);
 * sqrt, sqrt_rn, `/`, div_rn and fdiv are correctly rounded; `x * y + z` is two roundings but in f32, which
 * the contract pass may make one fma (docs: "Precision of math functions"). */
Test(lang_numeric, fma_sqrt_div_round_once) {
    seed_rng();
    cr_log_info("seed %llu (TILE_TEST_SEED replays it)", (unsigned long long)seed);
    for (size_t a = 0; a < 2; a++)
        for (size_t t = 0; t < 4; t++) {
            const Ty *ty = &flts[t];
            char src[1024];
            snprintf(src, sizeof src,
                     "kernel k(xp: *%s, yp: *%s, zp: *%s, out: *%s, n: i32) {\n"
                     "    let c = arange(0, %d);\n    let m = c < n;\n"
                     "    let x = load(xp + c, m);\n    let y = load(yp + c, m);\n    let z = load(zp + c, m);\n"
                     "    store(out + c, fma(x, y, z), m);\n"
                     "    store(out + %d + c, sqrt(x), m);\n"
                     "    store(out + %d + c, sqrt_rn(x), m);\n"
                     "    store(out + %d + c, x / y, m);\n"
                     "    store(out + %d + c, div_rn(x, y), m);\n"
                     "    store(out + %d + c, fdiv(x, y), m);\n"
                     "    store(out + %d + c, x * y + z, m);\n"
                     "}\n",
                     ty->name, ty->name, ty->name, ty->name, N, N, 2 * N, 3 * N, 4 * N, 5 * N, 6 * N);
            K k;
            load_src_on(&k, src, "k", targets[a][0], targets[a][1]);
            double xv[N], yv[N], zv[N];
            static const double special[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0, -1.0};
            for (int i = 0; i < N; i++) {
                /* magnitudes in [2^-4, 2^4): f16's and bf16's exact fma fits a double */
                double *v[3] = {xv, yv, zv};
                for (int j = 0; j < 3; j++)
                    v[j][i] = irand(8) == 0 ? special[irand(7)] : round_to(copysign(exp2(4 * urand()), urand()), ty);
                if (i % 4 == 1 && isfinite(xv[i] * yv[i])) zv[i] = -round_to(xv[i] * yv[i], ty); /* cancels to the product's error */
            }
            unsigned char hx[N * 8], hy[N * 8], hz[N * 8];
            for (int i = 0; i < N; i++) put_float(hx, i, ty, xv[i]), put_float(hy, i, ty, yv[i]), put_float(hz, i, ty, zv[i]);
            uint64_t dx = upload(&k, hx, sizeof hx), dy = upload(&k, hy, sizeof hy), dz = upload(&k, hz, sizeof hz);
            uint64_t dout = poisoned(&k, 7 * N * 8);
            int32_t n = LIVE;
            void *params[] = {&dx, &dy, &dz, &dout, &n};
            launch(&k, 1, params);
            unsigned char ho[7 * N * 8];
            download(&k, ho, dout, sizeof ho);
            unload(&k);
            int bad = 0, bytes = ty->bits / 8;
            for (int r = 0; r < 7; r++)
                for (int i = 0; i < LIVE; i++) {
                    uint64_t b = 0;
                    memcpy(&b, ho + (size_t)(r * N + i) * bytes, (size_t)bytes);
                    double g = f_val(b, ty), x = xv[i], y = yv[i], z = zv[i];
                    double fused = ty->bits == 32 ? fmaf((float)x, (float)y, (float)z) : round_to(fma(x, y, z), ty);
                    double want = r == 0 ? fused : r <= 2 ? round_to(sqrt(x), ty) : r <= 5 ? round_to(x / y, ty) : round_to(round_to(x * y, ty) + z, ty);
                    bool ok = same_float(g, want) || (r == 6 && ty->bits == 32 && same_float(g, fused));
                    if (!ok && bad++ < 6)
                        cr_expect(false, "%s %s: op %d of %a %a %a: %a, want %a", targets[a][0], ty->name, r, x, y, z, g, want);
                }
            cr_expect_eq(bad, 0, "%s %s: %d wrong", targets[a][0], ty->name, bad);
        }
}

/* xor_sum of i1 is the parity (Triton's xor_sum takes every integer type, int1 among them; it was refused
 * here), reduce_or of i1 "any", along an axis and over every element. */
Test(lang_numeric, xor_sum_and_reduce_or_of_i1) {
    K k;
    load_src(&k,
             "kernel k(x: *i1, out: *i32, n: i32) {\n"
             "    let r = arange(0, 8);\n    let c = arange(0, 16);\n"
             "    let o = r[:, None] * 16 + c[None, :];\n"
             "    let b = load(x + o, o < n, false);\n"
             "    static_assert(dtype_of(xor_sum(b)) == i1, \"parity is an i1\");\n"
             "    store(out + r, xor_sum(b, 1) as i32);\n"
             "    store(out + 8 + r, reduce_or(b, 1) as i32);\n"
             "    store(out + 16, xor_sum(b) as i32);\n"
             "}\n",
             "k");
    seed_rng();
    uint8_t x[128];
    for (int i = 0; i < 128; i++) x[i] = irand(5) == 0 ? (uint8_t)(1 + irand(255)) : 0; /* *i1: true when not zero */
    for (int i = 32; i < 48; i++) x[i] = 0;                                                /* a row of none */
    int32_t n = 123, out[17];
    uint64_t dx = upload(&k, x, sizeof x), dout = poisoned(&k, sizeof out);
    void *params[] = {&dx, &dout, &n};
    launch(&k, 1, params);
    download(&k, out, dout, sizeof out);
    unload(&k);
    int all = 0;
    for (int r = 0; r < 8; r++) {
        int par = 0, any = 0;
        for (int c = 0; c < 16; c++)
            if (r * 16 + c < n && x[r * 16 + c]) par ^= 1, any = 1;
        all ^= par;
        cr_expect_eq(out[r], par, "row %d parity %d, want %d", r, out[r], par);
        cr_expect_eq(out[8 + r], any, "row %d any %d, want %d", r, out[8 + r], any);
    }
    cr_expect_eq(out[16], all, "parity of all %d, want %d", out[16], all);
}

/* cast(..., fp_downcast_rounding="rtz") to the f8 types from f32 and f64, at run time (sm_80's software
 * conversion, sm_89's cvt) and of constants: toward zero, past the largest finite value that value, an
 * infinity too (an f8 cast saturates), NaN a NaN. */
Test(lang_numeric, round_toward_zero_to_f8) {
    seed_rng();
    static const char *arches[][2] = {{"sm_80", "emu:sm_80"}, {"sm_89", "emu:sm_89"}};
    double v[N];
    static const double fixed[] = {0.3, -0.3, 1.0, 500.0, -500.0, INFINITY, -INFINITY, NAN, 448.0, 470.0, 60000.0, 57344.0, 61440.0,
                                   1e-3, -1e-3, 0.0, -0.0, 3.1, 0x1p-9, 0x1.fp-10, 0x1p-16, 0x1.8p-17, 240.0, 239.9, 1e30};
    for (int i = 0; i < N; i++) v[i] = i < (int)(sizeof fixed / sizeof *fixed) ? fixed[i] : copysign(exp2(24 * urand() - 8), urand());
    for (size_t a = 0; a < 2; a++) {
        Str s = {0};
        str_printf(&s, "kernel k(xp: *f32, dp: *f64, out: *u8) {\n    let c = arange(0, %d);\n"
                       "    let x = load(xp + c);\n    let d = load(dp + c);\n", N);
        for (int t = 0; t < 2; t++) {
            const char *ty = t ? "f8e5m2" : "f8e4m3";
            str_printf(&s, "    store(out + %d + c, bitcast(cast(x, %s, fp_downcast_rounding=\"rtz\"), u8));\n", (2 * t) * N, ty);
            str_printf(&s, "    store(out + %d + c, bitcast(cast(d, %s, fp_downcast_rounding=\"rtz\"), u8));\n", (2 * t + 1) * N, ty);
            for (int i = 0; i < 8; i++) {
                Str lit = {0};
                float_literal(&lit, &flts[3], v[i * 3]);
                str_printf(&s, "    store(out + %d, bitcast(cast(%s, %s, fp_downcast_rounding=\"rtz\"), u8));\n", (4 + t) * N + i, lit.buf, ty);
                str_free(&lit);
            }
        }
        str_puts(&s, "}\n");
        K k;
        load_src_on(&k, s.buf, "k", arches[a][0], arches[a][1]);
        str_free(&s);
        float xf[N];
        for (int i = 0; i < N; i++) xf[i] = (float)v[i];
        uint64_t dx = upload(&k, xf, sizeof xf), dd = upload(&k, v, sizeof v), dout = poisoned(&k, 6 * N);
        void *params[] = {&dx, &dd, &dout};
        launch(&k, 1, params);
        uint8_t out[6 * N];
        download(&k, out, dout, sizeof out);
        unload(&k);
        int bad = 0;
        for (int r = 0; r < 6; r++)
            for (int i = 0; i < (r < 4 ? N : 8); i++) {
                const CTy *t = &ctys[(r < 4 ? r / 2 : r - 4) ? 14 : 13];
                double x = r < 4 ? ((r & 1) ? v[i] : (double)xf[i]) : v[i * 3];
                uint8_t want;
                if (isnan(x)) want = 0x7f;
                else if (isinf(x) || fabs(x) >= (double)t->max) want = (uint8_t)(signbit(x) ? 0x80 : 0) | (t->mant == 3 ? 0x7e : 0x7b);
                else { /* toward zero: the grid below |x| */
                    int e;
                    frexp(x, &e);
                    int q = (e - 1 < t->emin ? t->emin : e - 1) - t->mant;
                    want = d_to_f8(ldexp(trunc(ldexp(x, -q)), q), t->mant == 2);
                    if (x == 0 || trunc(ldexp(x, -q)) == 0) want = signbit(x) ? 0x80 : 0;
                }
                uint8_t g = out[r * N + i];
                bool nan_ok = isnan(x) && (t->mant == 3 ? (g & 0x7f) == 0x7f : (g & 0x7f) > 0x7c);
                if (g != want && !nan_ok && bad++ < 6)
                    cr_expect(false, "%s: %.17g to %s rtz (%s): 0x%02x, want 0x%02x", arches[a][0], x, t->name,
                              r < 4 ? ((r & 1) ? "f64" : "f32") : "constant", g, want);
            }
        cr_expect_eq(bad, 0, "%s: %d wrong", arches[a][0], bad);
    }
}

/* Run kernel k(x: *f32, o: *f32) compiled for arch on device (through tile_launch: on sm_90a a dot's loads
 * may read tensor maps the launcher builds): nx floats in, no floats back into out (the output poisoned first). */
static void run_f32(const char *src, const char *arch, const char *device, const float *x, size_t nx, float *out, size_t no) {
    tile_context_options co = {.device = device};
    tile_context *ctx = NULL;
    cr_assert_eq(tile_context_create_ex(&co, &ctx), TILE_OK);
    tile_devptr dx, d_o;
    cr_assert_eq(tile_malloc(ctx, nx * 4, &dx), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, no * 4, &d_o), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, dx, x, nx * 4), TILE_OK);
    cr_assert_eq(tile_memset(ctx, d_o, 0xFF, no * 4), TILE_OK); /* NaN */
    tile_compile_options o = {.size = sizeof o, .arch = arch};
    tile_module *mod;
    cr_assert_eq(tile_module_load_source_ex(ctx, "t.tile", src, &o, &mod), TILE_OK, "%s\n%s", tile_last_error(ctx), src);
    tile_kernel *kern;
    cr_assert_eq(tile_module_get_kernel(mod, "k", &kern), TILE_OK);
    void *params[] = {&dx, &d_o};
    cr_assert_eq(tile_launch(kern, (tile_dim3){1, 1, 1}, params, NULL), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, out, d_o, no * 4), TILE_OK);
    tile_module_unload(mod);
    tile_context_destroy(ctx);
}

/* A random value exact in type t (f32 f16 bf16 f8e4m3), |v| < scale. */
static float exact_in(const char *t, double v) {
    if (!strcmp(t, "f16")) return (float)f16_to_d(f32_to_f16((float)v));
    if (!strcmp(t, "bf16")) return (float)bf16_to_d(f32_to_bf16((float)v));
    if (!strcmp(t, "f8e4m3")) return (float)f8e4m3_to_d(d_to_f8(v, 0));
    return (float)v;
}

/* `sum` and `cumsum` with dtype=f32 of long rows (4096 and 65536 elements) of f32, f16 and bf16 along
 * either axis, with 1 to 16 warps, against float64: no promise of an order, so the bound is what f32
 * accumulation in any tree gives, log2(n) * 2^-24 * sum |x| (measured: sum 0.4, cumsum 2.7, a 16-row
 * axis-0 sum 4.1 of those units, the same on sm_80 and sm_90a; summed in f16, the f16 rows would be off
 * by about 2^-11).  Inputs uniform in [-1, 1) or log-uniform over 2^-20 .. 2^20 (f16: 2^-14 .. 2^14)
 * with random signs. */
Test(lang_numeric, long_row_sums_against_f64, .timeout = 600) {
    seed_rng();
    static const struct {
        const char *t, *op;
        int len, warps, loguni;
        const char *arch;
    } cases[] = {
        {"f32", "sum", 4096, 1, 0, NULL},     {"f16", "sum", 4096, 4, 1, NULL},        {"bf16", "sum", 4096, 16, 1, NULL},
        {"f32", "sum", 65536, 16, 1, "sm_90a"}, {"f16", "sum", 16384, 8, 0, "sm_90a"}, {"f32", "cumsum", 4096, 1, 1, NULL},
        {"bf16", "cumsum", 4096, 16, 0, "sm_90a"}, {"f16", "rcumsum", 4096, 4, 1, NULL}, {"f32", "sum0", 4096, 2, 1, NULL},
        {"bf16", "sum0", 4096, 16, 0, "sm_90a"},
    };
    enum { MAXL = 65536 };
    float *x = malloc(MAXL * 4), *out = malloc(MAXL * 4);
    cr_assert(x && out);
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        int L = cases[c].len, cols = L / 16;
        const char *t = cases[c].t, *op = cases[c].op;
        for (int i = 0; i < L; i++) {
            double v = cases[c].loguni ? (rnext() & 1 ? -1 : 1) * exp2((strcmp(t, "f16") ? 20 : 14) * urand()) : urand();
            x[i] = exact_in(t, v);
        }
        char src[1024], body[256];
        if (!strcmp(op, "sum")) snprintf(body, sizeof body, "store(o, sum(x, 0, dtype=f32));");
        else if (!strcmp(op, "cumsum")) snprintf(body, sizeof body, "store(o + i, cumsum(x, 0, dtype=f32));");
        else if (!strcmp(op, "rcumsum")) snprintf(body, sizeof body, "store(o + i, cumsum(x, 0, reverse=true, dtype=f32));");
        else snprintf(body, sizeof body, "store(o + arange(0, %d), sum(reshape(x, [16, %d]), 0, dtype=f32));", cols, cols);
        snprintf(src, sizeof src, "@num_warps(%d)\nkernel k(xp: *f32, o: *f32) {\n    let i = arange(0, %d);\n    let x = load(xp + i) as %s;\n    %s\n}\n",
                 cases[c].warps, L, t, body);
        int nout = !strcmp(op, "sum") ? 1 : !strcmp(op, "sum0") ? cols : L;
        const char *arch = cases[c].arch;
        run_f32(src, arch, arch ? "emu:sm_90a" : "emu", x, (size_t)L, out, (size_t)nout);
        double worst = 0;
        int at = 0, terms = !strcmp(op, "sum0") ? 16 : L;
        for (int j = 0; j < nout; j++) {
            long double s = 0, mag = 0;
            if (!strcmp(op, "sum0"))
                for (int r = 0; r < 16; r++) s += x[r * cols + j], mag += fabsf(x[r * cols + j]);
            else if (!strcmp(op, "rcumsum"))
                for (int i = L - 1; i >= j; i--) s += x[i], mag += fabsf(x[i]);
            else
                for (int i = 0; i <= (!strcmp(op, "sum") ? L - 1 : j); i++) s += x[i], mag += fabsf(x[i]);
            double e = fabs(out[j] - (double)s) / (0x1p-24 * (double)mag);
            if (!(e <= worst)) worst = e, at = j;
        }
        printf("%s %s of %d, %d warps%s%s: max error %.2f x 2^-24 sum|x| (bound log2(n) = %.0f)\n", op, t, L, cases[c].warps,
               arch ? " on " : "", arch ? arch : "", worst, log2(terms));
        cr_expect(worst <= log2(terms), "%s %s of %d (%d warps, %s, seed %#llx): output %d off by %.2f x 2^-24 sum|x| (got %.9g)", op, t,
                  L, cases[c].warps, arch ? arch : "sm_80", (unsigned long long)seed, at, worst, out[at]);
    }
    free(x), free(out);
}

/* dot against float64 at K = 17 and 1023 (masked K steps of 32: K is no multiple of the tile), f32
 * accumulators, on sm_80 (mma.sync) and sm_90a (64-row tiles: wgmma), accumulating into a loaded C.
 * The errors in units of sum |a b| (docs/language.md, `dot`): f16/bf16/f8e4m3 inputs and
 * input_precision="ieee" and "tf32x3" within 16 * 2^-24 (measured 3.6 and 7.7: f32 accumulation);
 * "tf32" within 2^-10 (the operands' low 13 bits dropped; measured 2^-10.3 at K = 17) and biased toward
 * zero; out_dtype=f16 (accumulated in f16) within 2^-10 (measured 2^-10.8). */
Test(lang_numeric, dot_error_against_f64_by_k, .timeout = 600) {
    seed_rng();
    static const struct {
        const char *t, *opt;
        double bound;
    } cases[] = {
        {"f16", "", 16 * 0x1p-24},      {"bf16", "", 16 * 0x1p-24},
        {"f8e4m3", "", 16 * 0x1p-24},   {"f32", ", input_precision=\"ieee\"", 16 * 0x1p-24},
        {"f32", ", input_precision=\"tf32x3\"", 16 * 0x1p-24}, {"f32", ", input_precision=\"tf32\"", 0x1p-10},
        {"f16", ", out_dtype=f16", 0x1p-10},
    };
    const int ks[] = {17, 1023};
    const char *archs[] = {"sm_80", "sm_90a"}, *devs[] = {"emu", "emu:sm_90a"};
    enum { D = 64, MAXK = 1023 };
    float *x = malloc((2 * D * MAXK + D * D) * 4), out[D * D];
    cr_assert(x);
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        for (int ki = 0; ki < 2; ki++) {
            int K = ks[ki], half = !strcmp(cases[c].opt, ", out_dtype=f16");
            if (ki == 1 && (half || strcmp(cases[c].t, "f32"))) continue; /* K = 1023 for the f32 precisions only */
            float *a = x, *b = x + D * K, *c0 = b + D * K;
            for (int i = 0; i < D * K; i++) a[i] = exact_in(cases[c].t, urand() * 4), b[i] = exact_in(cases[c].t, urand());
            for (int i = 0; i < D * D; i++) c0[i] = exact_in(half ? "f16" : "f32", urand() * 8);
            const char *at = half ? "f16" : "f32";
            char src[1536];
            snprintf(src, sizeof src,
                     "@num_warps(4)\n"
                     "kernel k(ap: *f32, o: *f32) {\n"
                     "    let rm = arange(0, 64); let rn = arange(0, 64); let rk = arange(0, 32);\n"
                     "    let acc = load(ap + %d + rm[:, None] * 64 + rn[None, :]) as %s;\n"
                     "    for k0 in range(0, %d, 32) {\n"
                     "        let kk = k0 + rk;\n"
                     "        let a = load(ap + rm[:, None] * %d + kk[None, :], kk[None, :] < %d, 0.0) as %s;\n"
                     "        let b = load(ap + %d + kk[:, None] * 64 + rn[None, :], kk[:, None] < %d, 0.0) as %s;\n"
                     "        acc = dot(a, b, acc%s);\n"
                     "    }\n"
                     "    store(o + rm[:, None] * 64 + rn[None, :], acc as f32);\n"
                     "}\n",
                     2 * D * K, at, K, K, K, cases[c].t, D * K, K, cases[c].t, cases[c].opt);
            for (int ai = 0; ai < 2; ai++) {
                run_f32(src, archs[ai], devs[ai], x, (size_t)(2 * D * K + D * D), out, D * D);
                double worst = 0, bias = 0;
                for (int i = 0; i < D; i++)
                    for (int j = 0; j < D; j++) {
                        long double s = c0[i * D + j], mag = fabsf(c0[i * D + j]);
                        for (int q = 0; q < K; q++) {
                            long double p = (long double)a[i * K + q] * b[q * D + j];
                            s += p, mag += fabsl(p);
                        }
                        double e = fabs(out[i * D + j] - (double)s) / (double)mag;
                        bias += (fabs(out[i * D + j]) - fabsl(s)) / (double)mag;
                        if (!(e <= worst)) worst = e;
                    }
                printf("dot %s%s K=%d on %s: max error 2^%.1f of sum|ab|, mean bias %.2g\n", cases[c].t, cases[c].opt, K, archs[ai], log2(worst), bias / (D * D));
                cr_expect(worst <= cases[c].bound, "dot %s%s K=%d on %s (seed %#llx): error %.3g of sum|ab|, bound %.3g", cases[c].t,
                          cases[c].opt, K, archs[ai], (unsigned long long)seed, worst, cases[c].bound);
                if (strstr(cases[c].opt, "\"tf32\"")) cr_expect(bias < 0, "tf32 on %s: mean bias %g, not toward zero", archs[ai], bias);
            }
        }
    free(x);
}
