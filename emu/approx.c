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
 *   3. the bound B for this operand comes from APPROX_BOUNDS below (one row per opcode, element type and
 *      range of |a|): B = 2^e times 1 (absolute), |v| (relative) or one ulp of the result's format at v;
 *   4. a hash of the opcode, type and operands picks t in {+-1, +-3/4, +-1/2} (full bound half of the
 *      time, both signs, so errors neither all cancel nor all add up), deterministically: the same
 *      inputs move the same way in every launch, thread and host;
 *   5. v + t B is clamped to the function's range (|sin|, |cos|, |tanh| <= 1) and, under .ftz, kept
 *      normal when v is; if rounding it into the format would land past B, t is halved, then 0: the
 *      result is within max(B, |round(v) - v|) of v, which tests/test_emu_approx.c checks.
 * rcp.approx.ftz.f64 and rsqrt.approx.ftz.f64 already give a 20-bit result from a 20-bit operand
 * (exec_float.c approx_hi32); the ISA gives them no error figure, so the bound mode moves that result by
 * one unit of its 20th mantissa bit (emu_approx_move_hi32). */
#include "emu/exec.h"

#include <math.h>

enum { AB_ABS, AB_REL, AB_ULP, AB_GROW };

typedef struct ApproxBound {
    unsigned op, ety;  /* opcode and element type (EMU_T_F16 for .f16 and .f16x2) */
    double lo, hi;     /* the row applies where lo <= |a| <= hi (the first row that matches) */
    int kind;          /* AB_ABS: B = 2^e; AB_REL: 2^e |v|; AB_ULP: 2^e ulps of the format at v;
                        * AB_GROW: 2^e |a| / (100 pi) (past the ISA's last range, see SIN below) */
    double e;          /* log2 of the bound's multiple */
} ApproxBound;

#define PI_100 314.15926535897932
/* The PTX ISA's instruction pages (section "Floating Point Instructions" for f32/f64, "Half Precision
 * Floating Point Instructions" for the f16/bf16 forms), in their words:
 *   ex2:   ".f32: maximum ulp error 2 across the full range of inputs"; "Max relative error for .f16
 *          type is 2^-9.9", "... for .bf16 type is 2^-7"
 *   lg2:   "maximum absolute error is 2^-22 when the input operand is in the range (0.5, 2); for positive
 *          finite inputs outside of this interval, maximum relative error is 2^-22" (older ISAs: "Max
 *          absolute error 2^-22.6 for mantissa", the tighter figure)
 *   sin, cos: "max absolute error 2^-20.5 in the range -pi..pi", "2^-14.7 in -100pi..100pi", no figure
 *          beyond; there the emulator's own model: the f32 argument reduction's error, which grows with
 *          |a| (2^-14.7 at 100 pi, scaled by |a| / 100 pi)
 *   tanh:  ".f32: max relative error 2^-10.987" (about 2^-11), ".f16: 2^-10.987", ".bf16: 2^-8"
 *   rsqrt: "maximum relative error over the entire range is 2^-22.9" (the .f64 form too: the page gives
 *          it no figure of its own)
 *   rcp:   "rcp.approx.f32: maximum ulp error is 1 across the full range of inputs"
 *   sqrt:  "sqrt.approx.f32: maximum relative error over the entire range is 2^-23"
 *   div:   "div.approx.f32: for |b| in [2^-126, 2^126] the maximum ulp error is 2"; "div.full.f32: the
 *          maximum ulp error is 2 across the full range of inputs" (|b| > 2^126 under .approx gives the
 *          ISA's 0 or NaN, exact in exec_float.c) */
static const ApproxBound APPROX_BOUNDS[] = {
    {EMU_OP_EX2, EMU_T_F32, 0, INFINITY, AB_ULP, 1},
    {EMU_OP_EX2, EMU_T_F16, 0, INFINITY, AB_REL, -9.9},
    {EMU_OP_EX2, EMU_T_BF16, 0, INFINITY, AB_REL, -7},
    {EMU_OP_LG2, EMU_T_F32, 0.5, 2, AB_ABS, -22},
    {EMU_OP_LG2, EMU_T_F32, 0, INFINITY, AB_REL, -22},
    {EMU_OP_SIN, EMU_T_F32, 0, M_PI, AB_ABS, -20.5},
    {EMU_OP_SIN, EMU_T_F32, 0, PI_100, AB_ABS, -14.7},
    {EMU_OP_SIN, EMU_T_F32, 0, INFINITY, AB_GROW, -14.7},
    {EMU_OP_COS, EMU_T_F32, 0, M_PI, AB_ABS, -20.5},
    {EMU_OP_COS, EMU_T_F32, 0, PI_100, AB_ABS, -14.7},
    {EMU_OP_COS, EMU_T_F32, 0, INFINITY, AB_GROW, -14.7},
    {EMU_OP_TANH, EMU_T_F32, 0, INFINITY, AB_REL, -10.987},
    {EMU_OP_TANH, EMU_T_F16, 0, INFINITY, AB_REL, -10.987},
    {EMU_OP_TANH, EMU_T_BF16, 0, INFINITY, AB_REL, -8},
    {EMU_OP_RSQRT, EMU_T_F32, 0, INFINITY, AB_REL, -22.9},
    {EMU_OP_RSQRT, EMU_T_F64, 0, INFINITY, AB_REL, -22.9},
    {EMU_OP_RCP, EMU_T_F32, 0, INFINITY, AB_ULP, 0},
    {EMU_OP_SQRT, EMU_T_F32, 0, INFINITY, AB_REL, -23},
    {EMU_OP_DIV, EMU_T_F32, 0, INFINITY, AB_ULP, 1},
};

/* One ulp of ety's numbers at |v| (subnormals' spacing below the smallest normal). */
static double fmt_ulp(double v, unsigned ety) {
    int p = ety == EMU_T_F16 ? 11 : ety == EMU_T_BF16 ? 8 : ety == EMU_T_F64 ? 53 : 24;
    int emin = ety == EMU_T_F16 ? -14 : ety == EMU_T_F64 ? -1022 : -126;
    int e = v == 0 ? emin : ilogb(v);
    return ldexp(1.0, (e < emin ? emin : e) - p + 1);
}

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

/* The bound B at operand a and exact result v (0: none documented). */
static double approx_bound(unsigned op, unsigned ety, double a, double v) {
    const ApproxBound *r = bound_row(op, ety, a);
    if (!r) return 0;
    double s = exp2(r->e);
    switch (r->kind) {
    case AB_ABS: return s;
    case AB_REL: return s * fabs(v);
    case AB_ULP: return s * fmt_ulp(v, ety);
    default: return s * fabs(a) / PI_100;
    }
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
    double B = approx_bound(op, ety, a, v);
    if (!(B > 0)) return v;
    double t = pick(op, ety, a, b);
    for (int i = 0; i < 2; i++, t /= 2) {
        double w = v + t * B;
        if (unit && fabs(w) > 1) w = copysign(1.0, w);
        if (ftz && normal && fabs(w) < min_normal(ety)) w = copysign(min_normal(ety), v);
        if (fabs(fmt_round(w, ety) - v) <= B) return w;
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
