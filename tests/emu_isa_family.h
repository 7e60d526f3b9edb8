/* emu_isa_family.h - what test_emu_isa2.c and test_emu_isa_cvt.c share: checking the emulator's
 * instructions against references written in C from the PTX ISA's instruction pages, one kernel per
 * family (Family, run_family), the operand generators and the host's roundings.
 *
 * Lane i of a family's kernel reads three 64-bit operands a, b, c (in[3i..3i+2]), runs every
 * instruction of the family on them and writes one 64-bit slot per result (out[N*i + j], poisoned
 * first).  The host computes the same results from the ISA's semantics and compares them slot by slot,
 * bit for bit: where the ISA leaves a NaN's payload open, the canonical NaN docs/emulator.md promises
 * (0x7fffffff, 0x7fff, 0x7fffffffffffffff; abs/neg/copysign keep the payload); where it leaves the
 * result unspecified (division by zero, INT_MIN / -1) the lane must only not stop the launch; where it
 * does not order -0 and +0 (min/max) either passes.  Each family runs on emu:sm_80 and emu:sm_90a (the
 * sm_90-only forms on sm_90a alone), and ptxas must accept each kernel.  Operands are drawn from edge
 * lists (widths, zeros, signs, NaNs, infinities, subnormals, halfway points of the roundings) mixed with
 * fresh random values; the seed is printed with a failure. */
#ifndef TILE_TESTS_EMU_ISA_FAMILY_H
#define TILE_TESTS_EMU_ISA_FAMILY_H

#include <criterion/criterion.h>
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/device.h"
#include "emu_budget.h"
#include "test_ptxas.h"

#define SKIP 0xA5A5A5A5DEADF00Dull /* the reference's "unspecified": any value passes */

/* Stores of results into the lane's slots (j: a literal number). */
#define O64(j, r) " mov.b64 %o" #j ", " r ";\n"
#define O32(j, r) " cvt.u64.u32 %o" #j ", " r ";\n"
#define O16(j, h) " cvt.u64.u16 %o" #j ", " h ";\n"
#define OP(j, p) " selp.u64 %o" #j ", 1, 0, " p ";\n"
#define OF(j, f) " mov.b32 %rt, " f ";\n cvt.u64.u32 %o" #j ", %rt;\n"

typedef struct {
    const char *name;
    bool sm90_only;  /* forms ptxas takes for sm_90 and later only */
    int nout;
    const char *kinds; /* per slot: x exact; f f32, d f64, h f16, H f16x2, b bf16, B bf16x2 (a NaN must be the canonical one); a approximate f32 */
    const char *body;
    void (*gen)(uint64_t *x, int i, int n); /* the lane's a, b, c */
    void (*ref)(const uint64_t *x, uint64_t *r);
    int lanes;
} Family;

static uint64_t rng = 1;
static inline uint64_t rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static inline uint64_t pick(const uint64_t *e, int n) { return e[rnd() % (unsigned)n]; }
#define PICK(e) pick(e, (int)(sizeof e / sizeof e[0]))

static inline uint32_t fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float bitsf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint64_t dbits(double f) { uint64_t u; memcpy(&u, &f, 8); return u; }
static inline double bitsd(uint64_t u) { double f; memcpy(&f, &u, 8); return f; }

static inline bool f16_nan(uint32_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x3FF); }
static inline bool bf16_nan(uint32_t h) { return (h & 0x7F80) == 0x7F80 && (h & 0x7F); }

static inline bool slot_ok(char kind, uint64_t got, uint64_t want) {
    if (want == SKIP) return true;
    switch (kind) {
    /* NaN results: docs/emulator.md promises the canonical NaN (the ISA leaves the payload open) */
    case 'f': return isnan(bitsf((uint32_t)want)) ? got == 0x7FFFFFFF : got == want;
    case 'd': return isnan(bitsd(want)) ? got == 0x7FFFFFFFFFFFFFFFull : got == want;
    case 'h': return f16_nan((uint32_t)want) ? got == 0x7FFF : got == want;
    case 'b': return bf16_nan((uint32_t)want) ? got == 0x7FFF : got == want;
    case 'H':
    case 'B': {
        bool (*nan)(uint32_t) = kind == 'H' ? f16_nan : bf16_nan;
        if (got >> 32) return false;
        for (int s = 0; s < 32; s += 16) {
            uint32_t g = (uint32_t)(got >> s) & 0xFFFF, w = (uint32_t)(want >> s) & 0xFFFF;
            if (nan(w) ? g != 0x7FFF : g != w) return false;
        }
        return true;
    }
    case 'a': { /* the .approx instructions: specials exact, else within 2^-21 relative */
        float g = bitsf((uint32_t)got), w = bitsf((uint32_t)want);
        if (got >> 32) return false;
        if (isnan(w)) return isnan(g);
        if (isinf(w) || w == 0) return got == want;
        return fabsf(g - w) <= ldexpf(fabsf(w), -21);
    }
    default: return got == want;
    }
}

static inline void run_family_on(const Family *F, const char *target) {
    char head[160];
    snprintf(head, sizeof head, ".version %s\n.target %s\n.address_size 64\n", "8.3", target);
    size_t cap = strlen(F->body) + 4096 + 64 * (size_t)F->nout;
    char *ptx = malloc(cap);
    int len = snprintf(ptx, cap,
        "%s.visible .entry k(.param .u64 in, .param .u64 out, .param .u32 n)\n{\n"
        " .reg .pred %%p<16>;\n .reg .pred %%q<16>;\n .reg .b16 %%h<40>;\n .reg .b32 %%r<80>;\n .reg .b64 %%rd<60>;\n"
        " .reg .f32 %%f<60>;\n .reg .f64 %%fd<60>;\n .reg .b64 %%o<%d>;\n .reg .b32 %%rt;\n"
        " ld.param.u64 %%rd1, [in];\n ld.param.u64 %%rd2, [out];\n ld.param.u32 %%r1, [n];\n"
        " mov.u32 %%r2, %%ctaid.x;\n mov.u32 %%r3, %%ntid.x;\n mov.u32 %%r4, %%tid.x;\n mad.lo.u32 %%r5, %%r2, %%r3, %%r4;\n"
        " setp.ge.u32 %%p0, %%r5, %%r1;\n @%%p0 bra $END;\n"
        " mul.wide.u32 %%rd3, %%r5, 24;\n add.s64 %%rd4, %%rd1, %%rd3;\n"
        " ld.global.u64 %%rd10, [%%rd4];\n ld.global.u64 %%rd11, [%%rd4+8];\n ld.global.u64 %%rd12, [%%rd4+16];\n"
        " mov.b64 {%%r10, %%r20}, %%rd10;\n mov.b64 {%%r11, %%r21}, %%rd11;\n mov.b64 {%%r12, %%r13}, %%rd12;\n"
        " mov.b32 %%f10, %%r10;\n mov.b32 %%f11, %%r11;\n mov.b32 %%f12, %%r12;\n"
        " mov.b64 %%fd10, %%rd10;\n mov.b64 %%fd11, %%rd11;\n mov.b64 %%fd12, %%rd12;\n"
        " cvt.u16.u32 %%h10, %%r10;\n cvt.u16.u32 %%h11, %%r11;\n cvt.u16.u32 %%h12, %%r12;\n"
        "%s"
        " mul.wide.u32 %%rd5, %%r5, %d;\n add.s64 %%rd6, %%rd2, %%rd5;\n",
        head, F->nout, F->body, 8 * F->nout);
    for (int j = 0; j < F->nout; j++) len += snprintf(ptx + len, cap - len, " st.global.u64 [%%rd6+%d], %%o%d;\n", 8 * j, j);
    snprintf(ptx + len, cap - len, "$END:\n ret;\n}\n");
    check_ptxas_arch(ptx, target);

    char spec[64];
    snprintf(spec, sizeof spec, "emu:%s", target);
    TileDevice *d = NULL;
    char *err = NULL;
    DevOptions o = {.emu_host_threads = 1, .emu_timeout_seconds = test_emu_budget()};
    cr_assert_eq(dev_open(spec, &o, &d, &err), DEV_OK, "dev_open(%s): %s", spec, err ? err : "");
    TileDevModule *m = NULL;
    cr_assert_eq(dev_module_load_ptx(d, ptx, &m), DEV_OK, "%s on %s: load: %s", F->name, target, dev_last_error(d));
    TileDevFunction *fn = NULL;
    cr_assert_eq(dev_module_get_function(m, "k", &fn), DEV_OK);

    int n = F->lanes;
    uint64_t *in = malloc(sizeof *in * 3 * n), *out = malloc(sizeof *out * F->nout * n), *want = malloc(sizeof *want * F->nout);
    uint64_t seed = rng;
    for (int i = 0; i < n; i++) F->gen(in + 3 * i, i, n);
    uint64_t din, dout;
    cr_assert_eq(dev_malloc(d, sizeof *in * 3 * n, &din), DEV_OK);
    cr_assert_eq(dev_malloc(d, sizeof *out * F->nout * n, &dout), DEV_OK);
    cr_assert_eq(dev_memcpy_htod(d, din, in, sizeof *in * 3 * n), DEV_OK);
    cr_assert_eq(dev_memset_d8(d, dout, 0xEE, sizeof *out * F->nout * n), DEV_OK);
    unsigned nn = (unsigned)n;
    void *params[] = {&din, &dout, &nn};
    cr_assert_eq(dev_launch(fn, (nn + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, params), DEV_OK, "%s on %s: launch: %s", F->name, target, dev_last_error(d));
    cr_assert_eq(dev_synchronize(d), DEV_OK, "%s", dev_last_error(d));
    cr_assert_eq(dev_memcpy_dtoh(d, out, dout, sizeof *out * F->nout * n), DEV_OK);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        F->ref(in + 3 * i, want);
        for (int j = 0; j < F->nout; j++) {
            uint64_t g = out[(size_t)F->nout * i + j];
            if (slot_ok(F->kinds[j], g, want[j])) continue;
            if (bad++ < 40)
                cr_log_error("%s on %s, slot %d (%s), a=%#llx b=%#llx c=%#llx: got %#llx, want %#llx (seed %#llx)", F->name, target, j,
                             F->name, (unsigned long long)in[3 * i], (unsigned long long)in[3 * i + 1], (unsigned long long)in[3 * i + 2],
                             (unsigned long long)g, (unsigned long long)want[j], (unsigned long long)seed);
        }
    }
    cr_expect_eq(bad, 0, "%s on %s: %d slots differ from the ISA's reference", F->name, target, bad);
    free(in);
    free(out);
    free(want);
    free(ptx);
    dev_module_unload(m);
    dev_close(d);
}

static inline void run_family(const Family *F) {
    cr_assert_eq((int)strlen(F->kinds), F->nout, "%s: kinds", F->name);
    rng = (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ull | 1;
    if (!F->sm90_only) run_family_on(F, "sm_80");
    run_family_on(F, "sm_90a");
}

static const uint64_t EI[] = {0, 1, 2, 3, 0x7F, 0x80, 0xFFFF, 0x8000, 0x7FFFFF, 0x800000, 0xFFFFFF, 0x1000000, 0x7FFFFFFF, 0x80000000, 0x80000001,
                              0xFFFFFFFF, 0xFFFFFFFE, 0xFFFF8000, 0x12345678, 0x7FFFFFFFFFFFFFFFull, 0x8000000000000000ull, 0xFFFFFFFFFFFFFFFFull,
                              0xFFFFFFFF00000000ull, 0x100000000ull};
static inline void gen_int(uint64_t *x, int i, int n) {
    (void)i, (void)n;
    for (int k = 0; k < 3; k++) {
        uint64_t v = rnd() & 1 ? PICK(EI) : rnd();
        if (rnd() % 4 == 0) v = (uint64_t)(int64_t)(int32_t)v; /* sign-extended 32-bit values for the 64-bit forms */
        x[k] = v;
    }
}

static const int RND[4] = {FE_TONEAREST, FE_TOWARDZERO, FE_DOWNWARD, FE_UPWARD};

static const uint64_t EF[] = {0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FA00000,
                              0x00000001, 0x80000001, 0x007FFFFF, 0x00800000, 0x80800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F000000, 0x3FC00000, 0x40200000,
                              0xC0200000, 0x4B000000, 0x4B000001, 0x4B800000, 0x3F7FFFFF, 0x3F800001, 0x34000000, 0x33800000, 0x00400000, 0x4F000000,
                              0xCF000000, 0x4F800000, 0x5F000000, 0xDF000000, 0x5F800000, 0x3EFFFFFF, 0x40400000, 0x00800001, 0x00FFFFFF};

static inline uint32_t rnd_f32(void) {
    switch (rnd() % 5) {
    case 0: return (uint32_t)PICK(EF);
    case 1: return (uint32_t)rnd(); /* any bits */
    case 2: return (uint32_t)(rnd() & 0x807FFFFF) | (uint32_t)(0x3F - 8 + rnd() % 16) << 23; /* near 1 */
    case 3: return (uint32_t)(rnd() & 0x80FFFFFF) | (uint32_t)(rnd() % 4) << 23; /* subnormals and the smallest normals */
    default: return (uint32_t)PICK(EF) ^ (uint32_t)(rnd() & 7); /* an edge's neighbours */
    }
}
static inline void gen_f32(uint64_t *x, int i, int n) {
    (void)i, (void)n;
    for (int k = 0; k < 3; k++) x[k] = rnd_f32();
    if (rnd() % 4 == 0) x[1] = x[0] ^ 0x80000000u ^ (rnd() & 1); /* cancellation */
}

/* The host computes in the rounding asked for (volatile: nothing folded across fesetround). */
static inline float host_f32(int op, float a, float b, float c, int mode) {
    volatile float va = a, vb = b, vc = c, r;
    fesetround(RND[mode]);
    switch (op) {
    case 0: r = va + vb; break;
    case 1: r = va - vb; break;
    case 2: r = va * vb; break;
    case 3: r = fmaf(va, vb, vc); break;
    case 4: r = va / vb; break;
    case 5: r = 1.0f / va; break;
    default: r = sqrtf(va); break;
    }
    fesetround(FE_TONEAREST);
    return r;
}
static inline float ftz32(float f) { return fpclassify(f) == FP_SUBNORMAL ? copysignf(0.0f, f) : f; }
static inline float sat32f(float f) { return isnan(f) || f <= 0 ? 0.0f : f > 1 ? 1.0f : f; } /* NaN and -0 give +0 */
static inline uint64_t F(float f) { return fbits(f); }

static const uint64_t ED[] = {0, 0x8000000000000000ull, 0x3FF0000000000000ull, 0xBFF0000000000000ull, 0x7FF0000000000000ull, 0xFFF0000000000000ull,
                              0x7FF8000000000000ull, 0xFFF8000000000000ull, 0x7FF0000000000001ull, 1, 0x8000000000000001ull, 0x000FFFFFFFFFFFFFull,
                              0x0010000000000000ull, 0x7FEFFFFFFFFFFFFFull, 0xFFEFFFFFFFFFFFFFull, 0x3FE0000000000000ull, 0x3FF8000000000000ull,
                              0x4004000000000000ull, 0xC004000000000000ull, 0x4330000000000000ull, 0x4330000000000001ull, 0x3FEFFFFFFFFFFFFFull,
                              0x3FF0000000000001ull, 0x3CA0000000000000ull, 0x41E0000000000000ull, 0xC1E0000000000000ull, 0x43E0000000000000ull,
                              0xC3E0000000000000ull, 0x43F0000000000000ull, 0x41EFFFFFFFE00000ull, 0x47EFFFFFE0000000ull, 0x47EFFFFFF0000000ull,
                              0x3810000000000000ull, 0x36A0000000000000ull, 0x369FFFFFFFFFFFFFull, 0x4000000000000000ull, 0x3FD5555555555555ull};
static inline uint64_t rnd_f64(void) {
    switch (rnd() % 5) {
    case 0: return PICK(ED);
    case 1: return rnd();
    case 2: return (rnd() & 0x800FFFFFFFFFFFFFull) | (uint64_t)(0x3FF - 30 + rnd() % 60) << 52;
    case 3: return (rnd() & 0x801FFFFFFFFFFFFFull);
    default: return PICK(ED) ^ (rnd() & 7);
    }
}

static const uint16_t EH[] = {0x0000, 0x8000, 0x3C00, 0xBC00, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7C01, 0x0001, 0x8001, 0x03FF, 0x0400, 0x8400,
                              0x7BFF, 0xFBFF, 0x3800, 0x3E00, 0x4100, 0x3BFF, 0x3C01, 0x1400, 0x6800, 0x5BFF, 0x0200};
static const uint16_t EB[] = {0x0000, 0x8000, 0x3F80, 0xBF80, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7F81, 0x0001, 0x8001, 0x007F, 0x0080, 0x8080,
                              0x7F7F, 0xFF7F, 0x3F00, 0x3FC0, 0x4020, 0x3F7F, 0x3F81, 0x3B80, 0x4B00, 0x0040};
static inline uint16_t rnd_half(bool bf) {
    switch (rnd() % 4) {
    case 0: return bf ? EB[rnd() % (sizeof EB / 2)] : EH[rnd() % (sizeof EH / 2)];
    case 1: return (uint16_t)rnd();
    case 2: return bf ? (uint16_t)((rnd() & 0x807F) | (0x7F - 4 + rnd() % 8) << 7) : (uint16_t)((rnd() & 0x83FF) | (15 - 4 + rnd() % 8) << 10);
    default: return (uint16_t)(bf ? rnd() & 0x80FF : rnd() & 0x87FF); /* subnormals, the smallest normals */
    }
}
static inline double h2d(uint16_t h) { _Float16 f; memcpy(&f, &h, 2); return (double)f; }
static inline double b2d(uint16_t h) { return (double)bitsf((uint32_t)h << 16); }

/* v rounded to mbits fraction bits with exponents down to emin (subnormals below); mode 4: ties away */
static inline double round_fmt(double v, int mbits, int emin, int mode) {
    if (v == 0 || !isfinite(v)) return v;
    int e;
    frexp(v, &e);
    e -= 1;
    if (e < emin) e = emin;
    volatile double q = ldexp(v, mbits - e), rq;
    if (mode == 4) rq = round(q);
    else {
        fesetround(RND[mode]);
        rq = nearbyint(q);
        fesetround(FE_TONEAREST);
    }
    return ldexp(rq, e - mbits);
}
/* past max: inf where the rounding goes away from zero, else max */
static inline double overflow(double r, double max, int mode) {
    if (fabs(r) <= max || !isfinite(r)) return r; /* infinities convert exactly */
    bool away = mode == 0 || mode == 4 || (mode == 3 && r > 0) || (mode == 2 && r < 0);
    return away ? copysign(INFINITY, r) : copysign(max, r);
}
static inline uint16_t enc_h(double v) { _Float16 h = (_Float16)v; uint16_t u; memcpy(&u, &h, 2); return isnan(v) ? 0x7FFF : u; }
static inline uint16_t enc_b(double v) { return isnan(v) ? 0x7FFF : (uint16_t)(fbits((float)v) >> 16); }
static const double HMAX = 65504.0, BMAX = 0x1.FEp127;

/* float->int: round in mode, clamp to [lo, hi].  NaN (ISA, cvt, Integer Notes, PTX 8.8): 0 unless the source
 * is .f64 or the destination 64-bit, then 1 << (width - 1) (nan64: the caller says which) */
static inline uint64_t f2i_nan(double v, int mode, double lo, double hi, bool sign, bool nan_msb) {
    if (isnan(v)) return nan_msb ? (hi > 0x1p32 ? 1ull << 63 : hi > 0x1p16 ? (sign ? 0xFFFFFFFF80000000ull : 0x80000000ull) : hi > 0x1p8 ? 0x8000 : 0x80) : 0;
    volatile double vv = v, r;
    fesetround(RND[mode]);
    r = nearbyint(vv);
    fesetround(FE_TONEAREST);
    if (r <= lo) r = lo;
    if (r >= hi) return sign ? (uint64_t)(int64_t)(hi == 0x1p63 ? INT64_MAX : (int64_t)hi) : (hi == 0x1p64 ? UINT64_MAX : (uint64_t)hi);
    return sign ? (uint64_t)(int64_t)r : (uint64_t)r;
}
static inline uint64_t f2i(double v, int mode, double lo, double hi, bool sign) { return f2i_nan(v, mode, lo, hi, sign, false); }
static inline float f32_round(float f, int mode, bool integral) {
    volatile float vf = f, r;
    fesetround(RND[mode]);
    r = integral ? nearbyintf(vf) : vf;
    fesetround(FE_TONEAREST);
    return r;
}
static inline double f64_round(double f, int mode) {
    volatile double vf = f, r;
    fesetround(RND[mode]);
    r = nearbyint(vf);
    fesetround(FE_TONEAREST);
    return r;
}
static inline int64_t clampi(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

#endif
