/* test_emu_approx.c - the emulator's bound mode for .approx instructions (EmuOptions.approx, emu:approx=bound,
 * TILE_EMU_APPROX=bound): every .approx instruction and type, hand-written PTX, run on emu:approx=exact and on
 * emu:approx=bound over edge and random operands (every f16 and bf16 value for the half forms).  Against a
 * float64 reference, with this file's own transcription of the PTX ISA's documented errors (isa_bound):
 *   - special operands and results (NaN, infinities, zeros, ex2/cos of 0, a saturated tanh, what .ftz
 *     flushes) come out of the bound mode exactly as out of the exact one;
 *   - every other result is within the documented error of the reference (or the format's rounding of it,
 *     where that is larger), and the results differ from the exact mode's: most of them move, both up and
 *     down, and some as far as nearly the whole bound;
 *   - the checker itself refuses a result just past the bound (a test that cannot fail proves nothing).
 * Then the ways to ask for the mode: the device string, TILE_EMU_APPROX and its precedence, bad values. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/tile/tile.h"
#include "runtime/device.h"
#include "support/hostfloat.h"
#include "support/support.h"
#include "test_dev_buffers.h"

/* Each thread loads a[i] and b[i] (u64; their low halves in %r1, %r2) and stores %rd4 (the body leaves a
 * 32-bit result in %r4, copied over). */
static const char *harness_fmt =
    ".version 8.1\n.target sm_90a\n.address_size 64\n"
    ".visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pd, .param .u32 pn)\n{\n"
    " .reg .pred %%p<4>;\n .reg .b16 %%h<8>;\n .reg .b32 %%r<16>;\n .reg .b64 %%rd<16>;\n"
    " mov.u32 %%r10, %%tid.x;\n mov.u32 %%r11, %%ctaid.x;\n mov.u32 %%r12, %%ntid.x;\n"
    " mad.lo.s32 %%r10, %%r11, %%r12, %%r10;\n ld.param.u32 %%r11, [pn];\n"
    " setp.ge.u32 %%p1, %%r10, %%r11;\n @%%p1 bra $DONE;\n mul.wide.u32 %%rd10, %%r10, 8;\n"
    " ld.param.u64 %%rd11, [pa];\n add.s64 %%rd11, %%rd11, %%rd10;\n ld.global.u64 %%rd1, [%%rd11];\n"
    " ld.param.u64 %%rd11, [pb];\n add.s64 %%rd11, %%rd11, %%rd10;\n ld.global.u64 %%rd2, [%%rd11];\n"
    " cvt.u32.u64 %%r1, %%rd1;\n cvt.u32.u64 %%r2, %%rd2;\n mov.b32 %%r4, 0;\n mov.b64 %%rd4, 0;\n"
    " %s\n"
    " %s\n"
    " ld.param.u64 %%rd11, [pd];\n add.s64 %%rd11, %%rd11, %%rd10;\n st.global.u64 [%%rd11], %%rd4;\n"
    "$DONE:\n ret;\n}\n";

enum Fn { EX2, LG2, SIN, COS, TANH, RSQRT, RCP, SQRT, DIV };
enum Ty { F32, F16, BF16, F64, F64_HI20 }; /* F64_HI20: rcp/rsqrt.approx.ftz.f64, 20-bit results */

typedef struct Case {
    const char *ptx;
    enum Fn fn;
    enum Ty ty;
    bool pair; /* f16x2 / bf16x2: two lanes in %r1 */
    bool ftz;  /* operands and results flushed (bf16 ex2 always is) */
} Case;

static const Case cases[] = {
    {"ex2.approx.f32 %r4, %r1;", EX2, F32, false, false},
    {"ex2.approx.ftz.f32 %r4, %r1;", EX2, F32, false, true},
    {"lg2.approx.f32 %r4, %r1;", LG2, F32, false, false},
    {"lg2.approx.ftz.f32 %r4, %r1;", LG2, F32, false, true},
    {"sin.approx.f32 %r4, %r1;", SIN, F32, false, false},
    {"sin.approx.ftz.f32 %r4, %r1;", SIN, F32, false, true},
    {"cos.approx.f32 %r4, %r1;", COS, F32, false, false},
    {"cos.approx.ftz.f32 %r4, %r1;", COS, F32, false, true},
    {"tanh.approx.f32 %r4, %r1;", TANH, F32, false, false},
    {"rsqrt.approx.f32 %r4, %r1;", RSQRT, F32, false, false},
    {"rsqrt.approx.ftz.f32 %r4, %r1;", RSQRT, F32, false, true},
    {"rcp.approx.f32 %r4, %r1;", RCP, F32, false, false},
    {"rcp.approx.ftz.f32 %r4, %r1;", RCP, F32, false, true},
    {"sqrt.approx.f32 %r4, %r1;", SQRT, F32, false, false},
    {"sqrt.approx.ftz.f32 %r4, %r1;", SQRT, F32, false, true},
    {"div.approx.f32 %r4, %r1, %r2;", DIV, F32, false, false},
    {"div.approx.ftz.f32 %r4, %r1, %r2;", DIV, F32, false, true},
    {"div.full.f32 %r4, %r1, %r2;", DIV, F32, false, false},
    {"div.full.ftz.f32 %r4, %r1, %r2;", DIV, F32, false, true},
    {"mov.b32 {%h1, %h2}, %r1;\n ex2.approx.f16 %h3, %h1;\n mov.b32 %r4, {%h3, %h2};", EX2, F16, false, false},
    {"ex2.approx.f16x2 %r4, %r1;", EX2, F16, true, false},
    {"mov.b32 {%h1, %h2}, %r1;\n ex2.approx.ftz.bf16 %h3, %h1;\n mov.b32 %r4, {%h3, %h2};", EX2, BF16, false, true},
    {"ex2.approx.ftz.bf16x2 %r4, %r1;", EX2, BF16, true, true},
    {"mov.b32 {%h1, %h2}, %r1;\n tanh.approx.f16 %h3, %h1;\n mov.b32 %r4, {%h3, %h2};", TANH, F16, false, false},
    {"tanh.approx.f16x2 %r4, %r1;", TANH, F16, true, false},
    {"mov.b32 {%h1, %h2}, %r1;\n tanh.approx.bf16 %h3, %h1;\n mov.b32 %r4, {%h3, %h2};", TANH, BF16, false, false},
    {"tanh.approx.bf16x2 %r4, %r1;", TANH, BF16, true, false},
    {"rcp.approx.ftz.f64 %rd4, %rd1;", RCP, F64_HI20, false, true},
    {"rsqrt.approx.ftz.f64 %rd4, %rd1;", RSQRT, F64_HI20, false, true},
    {"rsqrt.approx.f64 %rd4, %rd1;", RSQRT, F64, false, false},
};

static uint64_t rng = 0x243F6A8885A308D3ull;
static uint64_t rnd64(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static double uni(double lo, double hi) { return lo + (hi - lo) * (double)(rnd64() >> 11) * 0x1p-53; }
static uint32_t f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint64_t d2u(double f) { uint64_t u; memcpy(&u, &f, 8); return u; }
static double u2d(uint64_t u) { double f; memcpy(&f, &u, 8); return f; }

/* ---- this file's reading of the PTX ISA ---- */
static double ulp_of(double v, enum Ty ty) {
    int p = ty == F16 ? 11 : ty == BF16 ? 8 : ty == F64 ? 53 : 24, emin = ty == F16 ? -14 : ty == F64 ? -1022 : -126;
    int e = v == 0 ? emin : ilogb(v);
    return ldexp(1.0, (e < emin ? emin : e) - p + 1);
}

/* The documented maximum error of fn on type ty at operand x with exact result ref (PTX ISA 9.7.3 and 9.7.4;
 * docs/emulator.md).  The ulp figures (f32 ex2, rcp, div) are counted from the correctly rounded result, in
 * neighbours of the format: isa_ulps. */
static double isa_bound(enum Fn fn, enum Ty ty, double x, double ref) {
    double ax = fabs(x), ar = fabs(ref);
    if (ty == F64_HI20) return exp2(-18.5) * ar; /* a 20-bit operand and result, then one unit of the 20th bit */
    switch (fn) {
    case EX2: return ty == F32 ? 2 * ulp_of(ref, ty) : ty == F16 ? exp2(-9.9) * ar : 0x1p-7 * ar;
    case LG2: return ax >= 0.5 && ax <= 2 ? 0x1p-22 : 0x1p-22 * ar;
    case SIN: case COS: return ax <= 2 * M_PI ? exp2(-20.5) : ax <= 100 * M_PI ? exp2(-14.7) : exp2(-14.7) * ax / (100 * M_PI);
    case TANH: return ty == F32 ? 0x1p-11 * ar : ty == F16 ? exp2(-10.987) : 0x1p-8; /* the half forms: absolute */
    case RSQRT: return exp2(-22.9) * ar;
    case RCP: return ulp_of(ref, ty);
    case SQRT: return 0x1p-23 * ar;
    case DIV: return 2 * ulp_of(ref, ty);
    }
    return 0;
}
static int isa_ulps(enum Fn fn, enum Ty ty) { return ty != F32 ? 0 : fn == EX2 || fn == DIV ? 2 : fn == RCP ? 1 : 0; }

static double ref_of(enum Fn fn, double x, double y) {
    switch (fn) {
    case EX2: return exp2(x);
    case LG2: return log2(x);
    case SIN: return sin(x);
    case COS: return cos(x);
    case TANH: return tanh(x);
    case RSQRT: return 1 / sqrt(x);
    case RCP: return 1 / x;
    case SQRT: return sqrt(x);
    case DIV: return x / y;
    }
    return NAN;
}

/* A lane's value in its type (the low 16 bits for f16/bf16). */
static double dec(uint64_t bits, enum Ty ty) {
    switch (ty) {
    case F16: return f16_to_d((uint16_t)bits);
    case BF16: return bf16_to_d((uint16_t)bits);
    case F32: return (double)u2f((uint32_t)bits);
    default: return u2d(bits);
    }
}
static double min_normal(enum Ty ty) { return ty == F16 ? 0x1p-14 : ty == F64 || ty == F64_HI20 ? 0x1p-1022 : 0x1p-126; }
static double flush(double v, enum Ty ty, bool ftz) { return ftz && v != 0 && fabs(v) < min_normal(ty) ? copysign(0.0, v) : v; }

/* What the checks saw of one case (or a lane of it). */
typedef struct Tally {
    size_t checked, movable, moved, up, down, special;
    double worst; /* the largest error / allowed error */
} Tally;

/* The format's next number after bits away from zero (dir 1) or toward it (-1); the 20-bit forms step by their
 * 20th bit. */
static uint64_t neighbour(uint64_t bits, enum Ty ty, int dir) {
    uint64_t step = ty == F64_HI20 ? 1ull << 32 : 1;
    return dir > 0 ? bits + step : bits - step;
}

/* One lane: x, y the operands' bits, e the exact mode's result bits, g the bound mode's.  False (with *why)
 * when the bound mode broke a rule. */
static bool check_lane(const Case *c, uint64_t xb, uint64_t yb, uint64_t e, uint64_t g, Tally *t, char *why, size_t cap) {
    enum Ty ty = c->ty;
    double x = flush(dec(xb, ty), ty, c->ftz), y = flush(dec(yb, ty), ty, c->ftz);
    double ev = dec(e, ty), gv = dec(g, ty), ref = ref_of(c->fn, x, y);
    bool special = !isfinite(x) || (c->fn == DIV && !isfinite(y)) || !isfinite(ref) || ref == 0 || !isfinite(ev) || ev == 0 ||
                   (x == 0 && (c->fn == EX2 || c->fn == COS)) || (c->fn == TANH && fabs(ev) == 1) ||
                   (c->ftz && fabs(ref) < min_normal(ty)) || (strstr(c->ptx, "div.approx") && fabs(y) > 0x1p126);
    if (special) {
        t->special++;
        if (e == g || (isnan(ev) && isnan(gv))) return true;
        snprintf(why, cap, "a special value moved: exact %#llx, bound %#llx", (unsigned long long)e, (unsigned long long)g);
        return false;
    }
    double B = isa_bound(c->fn, ty, x, ref), err = fabs(gv - ref), allowed = fmax(B, fabs(ev - ref));
    t->checked++;
    int k = isa_ulps(c->fn, ty);
    if (k) { /* within k neighbours of the correctly rounded result (e: the exact mode's, which is it) */
        uint32_t r = f2u((float)ref);
        long long steps = (long long)(uint32_t)g - (long long)r;
        if ((g ^ r) >> 31) steps = 1LL << 40; /* across zero */
        t->movable++;
        if (g != e) {
            t->moved++;
            if (gv > ev) t->up++;
            else t->down++;
        }
        if ((double)llabs(steps) / k > t->worst) t->worst = (double)llabs(steps) / k;
        if (llabs(steps) <= k) return true;
        snprintf(why, cap, "%lld neighbours from the correctly rounded %.9g, past %d (bound-mode %.9g)", steps, (double)u2f(r), k, gv);
        return false;
    }
    /* could it move?  the exact mode's result has a neighbour within the bound */
    if (fabs(dec(neighbour(e, ty, 1), ty) - ref) <= B || fabs(dec(neighbour(e, ty, -1), ty) - ref) <= B) t->movable++;
    if (g != e) {
        t->moved++;
        if (gv > ev) t->up++;
        else t->down++;
    }
    if (err / allowed > t->worst) t->worst = err / allowed;
    if (err <= allowed) return true;
    snprintf(why, cap, "error %.3g past the bound %.3g (reference %.9g, exact-mode %.9g, bound-mode %.9g)", err, allowed, ref, ev, gv);
    return false;
}

/* The operands: the edges, then random ones in the ranges where each function is interesting, then random bits. */
static double edge32[] = {0, -0.0, 1, -1, 0.5, 2, 1.5, -2.5, INFINITY, -INFINITY, NAN, 0x1p-149, -0x1p-149, 0x1.fffffcp-127,
                          0x1p-126, -0x1p-126, 0x1.fffffep127, -0x1.fffffep127, 3.14159274, -3.14159274, 314.159271, 1000,
                          -130, -126.5, -149.5, 127.9, 128, 10, 20, -9.5, 1e-30, -1e-20, 0.99999994, 1.00000012, 0x1p126,
                          0x1.8p126, -0x1p127, 1e30, 7, 1.0 / 3};
static double rnd_operand(enum Fn fn, size_t i) {
    switch (i % 4) {
    case 0: return (double)u2f((uint32_t)rnd64());
    case 1: /* a wide range of magnitudes */
        return (rnd64() & 1 ? -1 : 1) * exp2(uni(fn == EX2 ? -8 : -60, fn == EX2 ? 7.2 : 60));
    default:
        switch (fn) {
        case EX2: return uni(-150, 130);
        case LG2: return i % 8 == 2 ? uni(0.4, 2.2) : exp2(uni(-140, 127));
        case SIN: case COS: return i % 8 == 2 ? uni(-4, 4) : uni(-400, 400);
        case TANH: return i % 8 == 2 ? uni(-0.01, 0.01) : uni(-12, 12);
        default: return uni(-1e3, 1e3);
        }
    }
}

static TileDevice *open_dev(const char *spec) {
    TileDevice *d = NULL;
    char *err = NULL;
    DevOptions o = {.emu_host_threads = 2};
    cr_assert_eq(dev_open(spec, &o, &d, &err), DEV_OK, "dev_open(%s): %s", spec, err ? err : "");
    return d;
}

/* Runs c's PTX over a, b (n each) on d; out gets the results. */
static void run_on(TileDevice *d, const Case *c, const uint64_t *a, const uint64_t *b, size_t n, uint64_t *out) {
    char ptx[4096];
    bool out64 = c->ty == F64 || c->ty == F64_HI20;
    snprintf(ptx, sizeof ptx, harness_fmt, c->ptx, out64 ? "" : "cvt.u64.u32 %rd4, %r4;");
    TileDevModule *m;
    cr_assert_eq(dev_module_load_ptx(d, ptx, &m), DEV_OK, "'%s': %s", c->ptx, dev_last_error(d));
    TileDevFunction *f;
    cr_assert_eq(dev_module_get_function(m, "k", &f), DEV_OK);
    uint64_t da = upload(d, a, n * 8), db = upload(d, b, n * 8), dd = poisoned(d, n * 8);
    uint32_t nn = (uint32_t)n;
    void *params[] = {&da, &db, &dd, &nn};
    cr_assert_eq(dev_launch(f, (unsigned)(n + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, params), DEV_OK, "'%s': %s", c->ptx,
                 dev_last_error(d));
    download(d, out, dd, n * 8);
    dev_free(d, da);
    dev_free(d, db);
    dev_free(d, dd);
    dev_module_unload(m);
}

/* The operands of case c: 32-bit lanes in a[i] (pairs for .x2, the high half of a scalar half form the
 * neighbouring value), 64-bit for the f64 forms. */
static size_t operands(const Case *c, uint64_t **pa, uint64_t **pb) {
    bool half = c->ty == F16 || c->ty == BF16;
    size_t ne = sizeof edge32 / sizeof edge32[0], n = half ? 32768 : ne * (c->fn == DIV ? ne : 1) + 6000;
    uint64_t *a = malloc(n * 8), *b = malloc(n * 8);
    for (size_t i = 0; i < n; i++) {
        if (half) { /* every value of the format: 2i and 2i + 1 as the two lanes */
            a[i] = (uint64_t)(2 * i) | (uint64_t)(2 * i + 1) << 16;
            b[i] = 0;
            continue;
        }
        double x, y = uni(-10, 10);
        if (c->fn == DIV && i < ne * ne) x = edge32[i / ne], y = edge32[i % ne];
        else if (i < ne) x = edge32[i];
        else x = rnd_operand(c->fn, i);
        if (c->fn == DIV && i >= ne * ne && i % 3 == 0) y = (double)u2f((uint32_t)rnd64());
        if (c->ty == F64 || c->ty == F64_HI20) {
            if ((c->fn == RSQRT || c->fn == RCP) && i >= ne && i % 2) x = fabs(x) * (1 + uni(0, 0x1p-20)); /* low bits set */
            a[i] = d2u(i >= ne && i % 5 == 0 ? u2d(rnd64()) : x);
        } else {
            a[i] = f2u((float)x) | rnd64() << 32; /* garbage upper halves must not matter */
        }
        b[i] = f2u((float)y) | rnd64() << 32;
    }
    *pa = a;
    *pb = b;
    return n;
}

static void run_case(TileDevice *exact, TileDevice *bound, const Case *c) {
    uint64_t *a, *b;
    size_t n = operands(c, &a, &b);
    uint64_t *e = malloc(n * 8), *g = malloc(n * 8);
    run_on(exact, c, a, b, n, e);
    run_on(bound, c, a, b, n, g);
    Tally t = {0};
    bool half = c->ty == F16 || c->ty == BF16, out64 = c->ty == F64 || c->ty == F64_HI20;
    for (size_t i = 0; i < n; i++) {
        char why[256];
        unsigned lanes = half && c->pair ? 2 : 1;
        for (unsigned l = 0; l < lanes; l++) {
            unsigned sh = 16 * l;
            uint64_t mask = half ? 0xFFFF : out64 ? ~0ull : 0xFFFFFFFFull;
            if (!check_lane(c, (a[i] >> sh) & mask, (b[i] >> sh) & mask, (e[i] >> sh) & mask, (g[i] >> sh) & mask, &t, why, sizeof why))
                cr_assert_fail("'%s', operands %#llx %#llx, lane %u: %s", c->ptx, (unsigned long long)a[i], (unsigned long long)b[i], l, why);
        }
        if (half && !c->pair) /* the scalar forms leave the other half alone */
            cr_assert_eq(g[i] >> 16 & 0xFFFF, a[i] >> 16 & 0xFFFF, "'%s': the upper half changed", c->ptx);
    }
    char name[48];
    snprintf(name, sizeof name, "%s", strrchr(c->ptx, '\n') && half && !c->pair ? strchr(c->ptx, '\n') + 2 : c->ptx);
    if (strchr(name, ';')) *strchr(name, ';') = 0;
    cr_log_info("%-32s %6zu checked, %6zu could move, %5.1f%% of those moved (%zu up, %zu down), worst %.2f of the bound, %zu special",
                name, t.checked, t.movable, 100.0 * (double)t.moved / (double)(t.movable ? t.movable : 1), t.up, t.down, t.worst,
                t.special);
    /* the mode does something: most results that may move do, both ways, some as far as allowed (where a format's
     * ulp is about the bound, as for tanh.bf16's 2^-8, only results near a rounding midpoint may move) */
    cr_expect_gt(t.checked, n / 4, "'%s': only %zu of %zu results were checked against the bound", c->ptx, t.checked, n);
    cr_expect_gt(t.movable, t.checked / 50, "'%s': %zu of %zu results could move", c->ptx, t.movable, t.checked);
    cr_expect_gt((double)t.moved, 0.3 * (double)t.movable, "'%s': %zu of %zu results moved", c->ptx, t.moved, t.movable);
    cr_expect(t.up > t.moved / 5 && t.down > t.moved / 5, "'%s': %zu up, %zu down", c->ptx, t.up, t.down);
    cr_expect_gt(t.worst, 0.5, "'%s': results move at most %.2f of the bound", c->ptx, t.worst);
    free(a); free(b); free(e); free(g);
}

Test(approx, bound_mode_within_the_isa_error) {
    TileDevice *exact = open_dev("emu:approx=exact"), *bound = open_dev("emu:approx=bound");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(exact, bound, &cases[i]);
    dev_close(exact);
    dev_close(bound);
}

/* Values the ISA defines exactly stay exact in the bound mode (and the bound mode is not the default). */
Test(approx, special_values_exact) {
    static const struct { const char *ptx; uint32_t a, want; } sv[] = {
        {"ex2.approx.f32 %r4, %r1;", 0xFF800000u, 0},                   /* ex2(-inf) = +0 */
        {"ex2.approx.f32 %r4, %r1;", 0x80000000u, 0x3F800000u},         /* ex2(-0) = 1 */
        {"ex2.approx.ftz.f32 %r4, %r1;", 0x00000001u, 0x3F800000u},     /* a flushed operand */
        {"ex2.approx.f32 %r4, %r1;", 0x7F800000u, 0x7F800000u},         /* ex2(+inf) = +inf */
        {"lg2.approx.f32 %r4, %r1;", 0, 0xFF800000u},                   /* lg2(0) = -inf */
        {"lg2.approx.f32 %r4, %r1;", 0x3F800000u, 0},                   /* lg2(1) = 0 */
        {"lg2.approx.f32 %r4, %r1;", 0xBF800000u, 0x7FFFFFFFu},         /* lg2(-1) = NaN */
        {"tanh.approx.f32 %r4, %r1;", 0x7F800000u, 0x3F800000u},        /* tanh(+inf) = 1 */
        {"tanh.approx.f32 %r4, %r1;", 0xC1A00000u, 0xBF800000u},        /* tanh(-20) = -1: saturated */
        {"tanh.approx.f32 %r4, %r1;", 0x80000000u, 0x80000000u},        /* tanh(-0) = -0 */
        {"sin.approx.f32 %r4, %r1;", 0x80000000u, 0x80000000u},         /* sin(-0) = -0 */
        {"cos.approx.f32 %r4, %r1;", 0x80000000u, 0x3F800000u},         /* cos(-0) = 1 */
        {"sin.approx.f32 %r4, %r1;", 0x7F800000u, 0x7FFFFFFFu},         /* sin(inf) = NaN */
        {"rsqrt.approx.f32 %r4, %r1;", 0x80000000u, 0xFF800000u},       /* rsqrt(-0) = -inf */
        {"rcp.approx.f32 %r4, %r1;", 0xFF800000u, 0x80000000u},         /* rcp(-inf) = -0 */
        {"sqrt.approx.f32 %r4, %r1;", 0x80000000u, 0x80000000u},        /* sqrt(-0) = -0 */
        {"div.approx.f32 %r4, %r1, %r2;", 0x3F800000u, 0},              /* 1 / 2^127: the ISA's 0 (b = 2^127 below) */
    };
    TileDevice *bound = open_dev("emu:approx=bound");
    for (size_t i = 0; i < sizeof sv / sizeof sv[0]; i++) {
        Case c = {sv[i].ptx, EX2, F32, false, false};
        uint64_t a = sv[i].a, b = 0x7F000000u, g;
        run_on(bound, &c, &a, &b, 1, &g);
        cr_expect_eq((uint32_t)g, sv[i].want, "'%s' of %#x: got %#x, want %#x", sv[i].ptx, sv[i].a, (uint32_t)g, sv[i].want);
    }
    dev_close(bound);
    /* plain "emu" is the exact mode: tanh(0.5) is tanh's f32 rounding */
    TileDevice *d = open_dev("emu");
    Case c = {"tanh.approx.f32 %r4, %r1;", TANH, F32, false, false};
    uint64_t a = 0x3F000000u, b = 0, g;
    run_on(d, &c, &a, &b, 1, &g);
    cr_expect_eq((uint32_t)g, f2u((float)tanh(0.5)));
    dev_close(d);
}

/* The checker refuses a result just past the documented bound, and takes one just inside it. */
Test(approx, checker_can_fail) {
    static const Case c = {"tanh.approx.f32 %r4, %r1;", TANH, F32, false, false};
    double x = 0.75, ref = tanh(x), B = isa_bound(TANH, F32, x, ref);
    uint64_t e = f2u((float)ref), xb = f2u((float)x);
    char why[256];
    Tally t = {0};
    cr_assert(check_lane(&c, xb, 0, e, f2u((float)(ref + 0.98 * B)), &t, why, sizeof why), "%s", why);
    cr_assert_not(check_lane(&c, xb, 0, e, f2u((float)(ref + 1.02 * B)), &t, why, sizeof why));
    cr_assert_not(check_lane(&c, f2u(INFINITY), 0, f2u(1.0f), f2u(0.999f), &t, why, sizeof why), "a special value may not move");
    /* an ulp figure: ex2.approx.f32 two neighbours of the correctly rounded result, not three */
    static const Case ce = {"ex2.approx.f32 %r4, %r1;", EX2, F32, false, false};
    uint32_t r = f2u((float)exp2(0.3));
    cr_assert(check_lane(&ce, f2u(0.3f), 0, r, r - 2, &t, why, sizeof why), "%s", why);
    cr_assert_not(check_lane(&ce, f2u(0.3f), 0, r, r + 3, &t, why, sizeof why));
    /* tanh.f16's absolute bound near zero, where a relative one would be far tighter */
    static const Case ch = {"tanh.approx.f16x2 %r4, %r1;", TANH, F16, true, false};
    uint16_t x16 = f32_to_f16(0.01f);
    double h = tanh(f16_to_d(x16));
    cr_assert(check_lane(&ch, x16, 0, f32_to_f16((float)h), f32_to_f16((float)(h + 0.9 * exp2(-10.987))), &t, why, sizeof why), "%s", why);
    cr_assert_not(check_lane(&ch, x16, 0, f32_to_f16((float)h), f32_to_f16((float)(h + 1.3 * exp2(-10.987))), &t, why, sizeof why));
}

/* ---- asking for the mode through the runtime ---- */
static const char *tanh_ptx =
    ".version 8.1\n.target sm_80\n.address_size 64\n"
    ".visible .entry th(.param .u64 p)\n{\n .reg .b32 %r<4>;\n .reg .b64 %rd<4>;\n"
    " ld.param.u64 %rd1, [p];\n ld.global.b32 %r1, [%rd1];\n tanh.approx.f32 %r2, %r1;\n st.global.b32 [%rd1], %r2;\n ret;\n}\n";

/* tanh.approx.f32 of x on a context for device (*st: the context's creation; 0 when refused). */
static uint32_t ctx_tanh(const char *device, float x, tile_status *st) {
    tile_context *ctx = NULL;
    *st = tile_context_create(device, &ctx);
    if (*st != TILE_OK) return 0;
    tile_module *m;
    tile_kernel *k;
    cr_assert_eq(tile_module_load_ptx(ctx, tanh_ptx, &m), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_module_get_kernel(m, "th", &k), TILE_OK);
    tile_devptr p;
    cr_assert_eq(tile_malloc(ctx, 4, &p), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, p, &x, 4), TILE_OK);
    void *args[] = {&p};
    cr_assert_eq(tile_launch_raw(k, (tile_dim3){1, 1, 1}, (tile_dim3){1, 1, 1}, 0, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    uint32_t r;
    cr_assert_eq(tile_memcpy_dtoh(ctx, &r, p, 4), TILE_OK);
    tile_module_unload(m);
    tile_context_destroy(ctx);
    return r;
}

/* 0.75 is one of the operands the bound mode moves (checked here, so a change of hash shows). */
Test(approx, device_string_and_environment) {
    tile_status st;
    uint32_t exact = f2u((float)tanh(0.75));
    cr_assert_eq(ctx_tanh("emu", 0.75f, &st), exact);
    uint32_t moved = ctx_tanh("emu:approx=bound", 0.75f, &st);
    cr_assert_eq(st, TILE_OK, "%s", tile_last_error(NULL));
    cr_assert_neq(moved, exact, "emu:approx=bound left tanh(0.75) exact");
    cr_assert_leq(fabs(u2f(moved) - tanh(0.75)), 0x1p-11 * tanh(0.75));
    cr_assert_eq(ctx_tanh("emu:sm_80:approx=exact", 0.75f, &st), exact);
    /* a bad value names the option */
    tile_context *ctx = NULL;
    cr_assert_eq(tile_context_create("emu:approx=maybe", &ctx), TILE_ERROR_INVALID_VALUE);
    cr_assert(strstr(tile_last_error(NULL), "approx takes exact or bound"), "%s", tile_last_error(NULL));
}

/* TILE_EMU_APPROX is read once per process, at the first context (Criterion runs each test in its own
 * process): bound unless the device string says otherwise. */
Test(approx, environment) {
    setenv("TILE_EMU_APPROX", "bound", 1);
    tile_status st;
    uint32_t exact = f2u((float)tanh(0.75)), moved = ctx_tanh("emu", 0.75f, &st);
    cr_assert_eq(st, TILE_OK, "%s", tile_last_error(NULL));
    cr_assert_neq(moved, exact, "TILE_EMU_APPROX=bound left tanh(0.75) exact");
    cr_assert_eq(ctx_tanh("emu:approx=bound", 0.75f, &st), moved);
    cr_assert_eq(ctx_tanh("emu:approx=exact", 0.75f, &st), exact);
    /* the device layer's emulator devices too */
    TileDevice *d = open_dev("emu:sm_90a");
    Case c = {"tanh.approx.f32 %r4, %r1;", TANH, F32, false, false};
    uint64_t a = f2u(0.75f), b = 0, g;
    run_on(d, &c, &a, &b, 1, &g);
    cr_assert_eq((uint32_t)g, moved);
    dev_close(d);
    unsetenv("TILE_EMU_APPROX");
}

Test(approx, environment_bad_value) {
    setenv("TILE_EMU_APPROX", "loose", 1);
    tile_status st;
    ctx_tanh("emu", 0.75f, &st);
    cr_assert_eq(st, TILE_ERROR_INVALID_VALUE);
    cr_assert(strstr(tile_last_error(NULL), "TILE_EMU_APPROX is neither exact nor bound"), "%s", tile_last_error(NULL));
    /* the device layer refuses it too (the kernels' tests open devices there), unless the string decides */
    TileDevice *d = NULL;
    char *err = NULL;
    cr_assert_eq(dev_open("emu", NULL, &d, &err), DEV_ERR_INVALID);
    cr_assert(err && strstr(err, "TILE_EMU_APPROX"), "%s", err ? err : "");
    free(err);
    cr_assert_eq(dev_open("emu:approx=exact", NULL, &d, &err), DEV_OK, "%s", err ? err : "");
    dev_close(d);
    unsetenv("TILE_EMU_APPROX");
}
