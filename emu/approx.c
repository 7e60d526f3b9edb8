/* approx.c - the .approx instructions' documented error, for the bound mode (EmuOptions.approx).
 *
 * By default (EMU_APPROX_EXACT) the emulator computes ex2, lg2, sin, cos, tanh, rsqrt, rcp.approx,
 * sqrt.approx, div.approx and div.full with the host libm in double and rounds once: nearly exact, much
 * better than a GPU's MUFU.  A kernel whose tolerance quietly relies on that passes here and fails on
 * a GPU.  Under EMU_APPROX_BOUND each such result is moved by the PTX ISA's documented maximum error
 * instead, so a test that passes in this mode tolerates errors of the size a GPU may make (one
 * deterministic pattern of them, not every pattern the ISA allows):
 *   1. the exact value v is computed as before (exec_float.c);
 *   2. special values stay exact: a NaN or infinite operand, a result that is NaN, infinite or zero
 *      or rounds to one in the format (sin(+-0), sqrt(+-0), lg2(1), a/inf, ex2(128), ex2(-160) ...),
 *      ex2(+-0) = cos(+-0) = 1 (the ISA's special-value tables), a tanh that rounds to +-1
 *      (saturated), a result that .ftz flushes anyway;
 *   3. the bound for this operand comes from APPROX_BOUNDS below (one row per opcode, element type and
 *      range of |a|): B = 2^e times 1 (absolute) or |v| (relative), or 2^e ulps (ex2, rcp, div: NVIDIA
 *      counts ulps from the correctly rounded result r = round(v), so these rows step r by whole
 *      numbers of the format's neighbours instead);
 *   4. a hash of the opcode, type and operands picks t in {+-1, +-3/4, +-1/2} (full bound half of the
 *      time, both signs, so errors neither all cancel nor all add up), deterministically: the same
 *      inputs move the same way in every launch, thread and host;
 *   5. v + t B is clamped to the function's range (|sin|, |cos|, |tanh| <= 1), keeps v's sign (an
 *      absolute bound larger than |v|, as tanh.f16's near 0, does not turn tanh(x) negative) and, under
 *      .ftz, stays normal when v is; if rounding it into the format would land past B or across zero, t is
 *      halved, then 0: the result is within max(B, |round(v) - v|) of v; an ulp row's result is within
 *      round(|t| 2^e) (at least 1) neighbours of r, kept finite and, under .ftz, normal.  Both are what
 *      tests/test_emu_approx.c checks.
 * rcp.approx.ftz.f64 and rsqrt.approx.ftz.f64 already give a 20-bit result from a 20-bit operand
 * (exec_float.c approx_hi32); the ISA gives them no error figure, so the bound mode moves that result by
 * one unit of its 20th mantissa bit (emu_approx_move_hi32). */
#include "emu/exec.h"

#include <math.h>

enum { AB_ABS, AB_REL, AB_ULP, AB_GROW };

typedef struct ApproxBound {
    unsigned op, ety;  /* opcode and element type (EMU_T_F16 for .f16 and .f16x2) */
    double lo, hi;     /* the row applies where lo <= |a| <= hi (the first row that matches) */
    int kind;          /* AB_ABS: B = 2^e; AB_REL: 2^e |v|; AB_ULP: 2^e ulps from round(v) (f32 only);
                        * AB_GROW: 2^e |a| / (100 pi) (past the ISA's last range, see SIN below) */
    double e;          /* log2 of the bound's multiple */
} ApproxBound;

#define PI_100 314.15926535897932
/* The figures, checked against NVIDIA's published text (docs/emulator.md cites the pages): the PTX ISA's
 * instruction pages ("Floating Point Instructions" 9.7.3 for f32/f64, "Half Precision Floating Point
 * Instructions" 9.7.4 for the f16/bf16 forms), cross-checked with the CUDA C++ Programming Guide's table of
 * single-precision intrinsics (__expf, __log2f, __sinf, __cosf, __tanhf, __fdividef):
 *   ex2:   f32 2 ulp from the correctly rounded result, whatever the operand; f16 2^-9.9 and bf16 2^-7
 *          relative
 *   lg2:   2^-22 absolute for a in (0.5, 2), 2^-22 relative for other positive finite a
 *   sin, cos: 2^-20.5 absolute for |a| <= 2 pi, 2^-14.7 for |a| <= 100 pi, no guarantee beyond; there the
 *          emulator's own model: the f32 argument reduction's error, which grows with |a| (2^-14.7 at
 *          100 pi, scaled by |a| / 100 pi).  (The Guide's __sinf/__cosf give 2^-21.41/2^-21.19 on [-pi, pi],
 *          tighter than the ISA's figure: the ISA's is the contract.)
 *   tanh:  f32 2^-11 relative (the Guide's __tanhf says the same); f16 2^-10.987 and bf16 2^-8 ABSOLUTE
 *   rsqrt: f32 2^-22.9 relative; the ISA gives rsqrt.approx.f64 (done in software) no figure: the emulator
 *          takes the f32 one
 *   rcp:   f32 1 ulp; sqrt: f32 2^-23 relative
 *   div:   div.approx.f32 2 ulp for |b| in [2^-126, 2^126] (beyond: the ISA's 0 or NaN, exact in
 *          exec_float.c); div.full.f32 2 ulp for every b */
static const ApproxBound APPROX_BOUNDS[] = {
    {EMU_OP_EX2, EMU_T_F32, 0, INFINITY, AB_ULP, 1},
    {EMU_OP_EX2, EMU_T_F16, 0, INFINITY, AB_REL, -9.9},
    {EMU_OP_EX2, EMU_T_BF16, 0, INFINITY, AB_REL, -7},
    {EMU_OP_LG2, EMU_T_F32, 0.5, 2, AB_ABS, -22},
    {EMU_OP_LG2, EMU_T_F32, 0, INFINITY, AB_REL, -22},
    {EMU_OP_SIN, EMU_T_F32, 0, 2 * M_PI, AB_ABS, -20.5},
    {EMU_OP_SIN, EMU_T_F32, 0, PI_100, AB_ABS, -14.7},
    {EMU_OP_SIN, EMU_T_F32, 0, INFINITY, AB_GROW, -14.7},
    {EMU_OP_COS, EMU_T_F32, 0, 2 * M_PI, AB_ABS, -20.5},
    {EMU_OP_COS, EMU_T_F32, 0, PI_100, AB_ABS, -14.7},
    {EMU_OP_COS, EMU_T_F32, 0, INFINITY, AB_GROW, -14.7},
    {EMU_OP_TANH, EMU_T_F32, 0, INFINITY, AB_REL, -11},
    {EMU_OP_TANH, EMU_T_F16, 0, INFINITY, AB_ABS, -10.987},
    {EMU_OP_TANH, EMU_T_BF16, 0, INFINITY, AB_ABS, -8},
    {EMU_OP_RSQRT, EMU_T_F32, 0, INFINITY, AB_REL, -22.9},
    {EMU_OP_RSQRT, EMU_T_F64, 0, INFINITY, AB_REL, -22.9},
    {EMU_OP_RCP, EMU_T_F32, 0, INFINITY, AB_ULP, 0},
    {EMU_OP_SQRT, EMU_T_F32, 0, INFINITY, AB_REL, -23},
    {EMU_OP_DIV, EMU_T_F32, 0, INFINITY, AB_ULP, 1},
};

/* v rounded to nearest into ety (overflow to infinity), as a double. */
static double fmt_round(double v, unsigned ety) {
    switch (ety) {
    case EMU_T_F16: return emu_f16_to_f64((uint16_t)emu_round_f64(v, EMU_FMT_F16, EMU_RND_RN));
    case EMU_T_BF16: return emu_bf16_to_f64((uint16_t)emu_round_f64(v, EMU_FMT_BF16, EMU_RND_RN));
    case EMU_T_F64: return v;
    default: return (double)(float)v;
    }
}

static double min_normal(unsigned ety) { return ety == EMU_T_F16 ? 0x1p-14 : ety == EMU_T_F64 ? 0x1p-1022 : 0x1p-126; }

/* splitmix64's finalizer: every input bit moves every output bit. */
static uint64_t mix(uint64_t x) {
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* The direction and size of the move for these operands: +-1, +-3/4 or +-1/2 of the bound. */
static double pick(unsigned op, unsigned ety, double a, double b) {
    uint64_t h = mix(mix(emu_bits64(a) ^ ((uint64_t)op << 56 ^ (uint64_t)ety << 48)) ^ emu_bits64(b));
    static const double mag[4] = {1, 1, 0.75, 0.5};
    return (h & 1 ? -1 : 1) * mag[(h >> 1) & 3];
}

static const ApproxBound *bound_row(unsigned op, unsigned ety, double a) {
    double x = fabs(a);
    for (size_t i = 0; i < sizeof APPROX_BOUNDS / sizeof APPROX_BOUNDS[0]; i++) {
        const ApproxBound *r = &APPROX_BOUNDS[i];
        if (r->op == op && r->ety == ety && x >= r->lo && x <= r->hi) return r;
    }
    return NULL;
}

/* The bound B at operand a and exact result v (0: none documented); an AB_ULP row's B is its ulp count. */
static double approx_bound(const ApproxBound *r, double a, double v) {
    double s = exp2(r->e);
    switch (r->kind) {
    case AB_ABS: return s;
    case AB_REL: return s * fabs(v);
    case AB_ULP: return s;
    default: return s * fabs(a) / PI_100;
    }
}

/* An ulp row (f32): the correctly rounded result r stepped n neighbours up (t > 0) or down, n = round(|t| B)
 * and at least 1; not moved where that would leave the finite numbers or, under .ftz, the normal ones. */
static double step_ulps(float r, double t, double B, bool ftz) {
    int n = (int)floor(fabs(t) * B + 0.5);
    float w = r;
    for (int i = 0; i < (n < 1 ? 1 : n); i++) w = nextafterf(w, t > 0 ? INFINITY : -INFINITY);
    if (!isfinite(w) || w == 0 || signbit(w) != signbit(r)) return r;
    if (ftz && fabsf(w) < 0x1p-126f) return r;
    return w;
}

double emu_approx_move(unsigned op, unsigned ety, bool ftz, double a, double b, double v) {
    if (isnan(a) || isinf(a) || isnan(b) || isinf(b) || !isfinite(v) || v == 0) return v;
    if (a == 0 && (op == EMU_OP_EX2 || op == EMU_OP_COS)) return v;
    bool unit = op == EMU_OP_SIN || op == EMU_OP_COS || op == EMU_OP_TANH; /* results within [-1, 1] */
    double r = fmt_round(v, ety);
    if (!isfinite(r) || r == 0) return v;                 /* overflows or underflows in the format */
    if (op == EMU_OP_TANH && fabs(r) == 1) return v;      /* saturated */
    bool normal = fabs(v) >= min_normal(ety);
    if (ftz && !normal) return v; /* flushed to zero whatever it is */
    const ApproxBound *row = bound_row(op, ety, a);
    if (!row) return v;
    double B = approx_bound(row, a, v);
    if (!(B > 0)) return v;
    double t = pick(op, ety, a, b);
    if (row->kind == AB_ULP) return step_ulps((float)r, t, B, ftz);
    for (int i = 0; i < 2; i++, t /= 2) {
        double w = v + t * B;
        if (unit && fabs(w) > 1) w = copysign(1.0, w);
        if (ftz && normal && fabs(w) < min_normal(ety)) w = copysign(min_normal(ety), v);
        double wr = fmt_round(w, ety);
        if (fabs(wr - v) <= B && wr != 0 && signbit(wr) == signbit(v)) return w;
    }
    return v;
}

uint64_t emu_approx_move_hi32(unsigned op, double a, uint64_t u) {
    double v = emu_f64(u);
    if (isnan(a) || isinf(a) || !isfinite(v) || v == 0) return u;
    uint64_t w = pick(op, EMU_T_F64, a, 0) > 0 ? u + (1ull << 32) : u - (1ull << 32); /* one unit of the 20th bit */
    double x = emu_f64(w);
    return isfinite(x) && fabs(x) >= 0x1p-1022 && signbit(x) == signbit(v) ? w : u;
}
