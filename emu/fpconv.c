/* fpconv.c - exact IEEE rounding into narrower float formats.
 *
 * Algorithm (emu_round_f64):
 *   1. NaN gives the format's canonical NaN, infinities and zeros keep their sign.
 *   2. The value is taken as long double (exact for every f64 and int64) and
 *      split as |x| = n * q + rest, where q is the format's quantum at |x|'s
 *      exponent (or the subnormal quantum below the normal range).
 *   3. n is incremented or not by the rounding mode from the fraction
 *      rest / q (RN: ties to even, RNA: ties away, RZ, RM, RP by sign).
 *   4. n * q above the largest finite value overflows to infinity or to
 *      the largest finite value, as the mode says.
 *   5. The result is encoded in the format's bit layout.
 * Every rounding is a single rounding of the exact input, so f32->f16 and
 * f64->f16 are both correctly rounded (no double rounding through f32). */
#include "emu/exec.h"

#include <float.h>
#include <math.h>
#include <string.h>

typedef struct Fmt { int p, emin, emax, ebits, bits; } Fmt;
static const Fmt fmts[] = {
    [EMU_FMT_F16] = {11, -14, 15, 5, 16},
    [EMU_FMT_BF16] = {8, -126, 127, 8, 16},
    [EMU_FMT_TF32] = {11, -126, 127, 8, 32},
    [EMU_FMT_F32] = {24, -126, 127, 8, 32},
};

static uint64_t encode(const Fmt *f, int fmt, bool neg, long double v) {
    if (fmt == EMU_FMT_TF32 || fmt == EMU_FMT_F32) {
        float x = (float)v; /* exact: v is representable */
        uint64_t b = emu_bits32(x);
        return b | (neg ? 0x80000000u : 0);
    }
    uint64_t sign = neg ? 1ull << (f->bits - 1) : 0;
    if (isinf(v)) return sign | (((1ull << f->ebits) - 1) << (f->p - 1));
    if (v == 0) return sign;
    int e;
    frexpl(v, &e); /* v = m * 2^e, m in [0.5, 1) */
    int exp = e - 1;
    if (exp < f->emin) { /* subnormal */
        uint64_t mant = (uint64_t)ldexpl(v, -(f->emin - (f->p - 1)));
        return sign | mant;
    }
    uint64_t mant = (uint64_t)ldexpl(v, -(exp - (f->p - 1))) - (1ull << (f->p - 1));
    uint64_t ef = (uint64_t)(exp + ((1 << (f->ebits - 1)) - 1));
    return sign | (ef << (f->p - 1)) | mant;
}

static uint64_t round_ld(long double x, int fmt, int rnd, bool ftz) {
    const Fmt *f = &fmts[fmt];
    if (isnan(x)) {
        if (fmt == EMU_FMT_F16) return 0x7FFF;
        if (fmt == EMU_FMT_BF16) return 0x7FFF;
        return 0x7FFFFFFF;
    }
    bool neg = signbit(x);
    long double a = fabsl(x);
    if (isinf(a) || a == 0) return encode(f, fmt, neg, a);
    int e;
    frexpl(a, &e);
    int exp = e - 1;
    int qexp = (exp < f->emin ? f->emin : exp) - (f->p - 1);
    long double scaled = ldexpl(a, -qexp);
    long double n = floorl(scaled);
    long double frac = scaled - n;
    bool up = false;
    switch (rnd) {
    case EMU_RND_RZ: case EMU_RND_RZI: break;
    case EMU_RND_RM: case EMU_RND_RMI: up = neg && frac > 0; break;
    case EMU_RND_RP: case EMU_RND_RPI: up = !neg && frac > 0; break;
    case EMU_RND_RNA: up = frac >= 0.5L; break;
    default: up = frac > 0.5L || (frac == 0.5L && fmodl(n, 2.0L) != 0); break;
    }
    if (up) n += 1;
    long double v = ldexpl(n, qexp);
    long double maxf = ldexpl(ldexpl(1.0L, f->p) - 1, f->emax - (f->p - 1));
    if (v > maxf) {
        bool to_inf;
        switch (rnd) {
        case EMU_RND_RZ: case EMU_RND_RZI: to_inf = false; break;
        case EMU_RND_RM: case EMU_RND_RMI: to_inf = neg; break;
        case EMU_RND_RP: case EMU_RND_RPI: to_inf = !neg; break;
        default: to_inf = true; break;
        }
        v = to_inf ? (long double)INFINITY : maxf;
    }
    if (ftz && v != 0 && v < ldexpl(1.0L, f->emin)) v = 0;
    return encode(f, fmt, neg, v);
}

/* Round to nearest even of a normal double into f16, bf16 or f32 by its bits (the tensor-core and conversion
 * instructions' common case): |x| = mant 2^(exp - 52) is n quanta and a remainder, n rounded up past half a quantum
 * or at a tie when odd; the exponent field plus n - 2^(p-1) is the encoding, a carry out of n moving into the
 * exponent, and past the largest finite value that is infinity's.  The same bits as round_ld; false for what it
 * leaves to round_ld (zeros, subnormal doubles, infinities, NaN, values below half the least subnormal). */
static inline bool round_rn_bits(double x, int fmt, uint64_t *out) {
    const Fmt *f = &fmts[fmt];
    uint64_t u = emu_bits64(x), ef = u >> 52 & 0x7FF;
    if (ef == 0 || ef == 0x7FF) return false;
    int exp = (int)ef - 1023, qexp = (exp < f->emin ? f->emin : exp) - (f->p - 1), shift = 52 + qexp - exp;
    if (shift > 63) return false;
    uint64_t mant = (u & ((1ull << 52) - 1)) | 1ull << 52;
    uint64_t n = mant >> shift, rem = mant & ((1ull << shift) - 1), half = 1ull << (shift - 1);
    if (rem > half || (rem == half && (n & 1))) n++;
    uint64_t inf = ((1ull << f->ebits) - 1) << (f->p - 1);
    uint64_t bits = exp < f->emin ? n : ((uint64_t)(exp + (1 << (f->ebits - 1)) - 1) << (f->p - 1)) + n - (1ull << (f->p - 1));
    if (bits > inf) bits = inf;
    *out = bits | (u >> 63) << (f->bits - 1);
    return true;
}

uint64_t emu_round_f64(double x, int fmt, int rnd) {
    uint64_t bits;
    if ((rnd == EMU_RND_RN || rnd == EMU_RND_NONE) && (fmt == EMU_FMT_F16 || fmt == EMU_FMT_BF16 || fmt == EMU_FMT_F32) &&
        round_rn_bits(x, fmt, &bits))
        return bits;
    return round_ld(x, fmt, rnd, false);
}
uint64_t emu_round_f64_ftz(double x, int fmt, int rnd, bool ftz) { return round_ld(x, fmt, rnd, ftz); }
uint64_t emu_round_int(int64_t v, bool is_signed, int fmt, int rnd) {
    long double x = is_signed ? (long double)v : (long double)(uint64_t)v;
    if (fmt == EMU_FMT_F64) {
        /* p = 53: any int64 rounds with the host conversion under the mode */
        if (rnd == EMU_RND_RN || rnd == EMU_RND_NONE) return emu_bits64((double)x);
        long double a = fabsl(x);
        int e;
        frexpl(a, &e);
        int qexp = e - 53 > 0 ? e - 53 : 0;
        long double scaled = ldexpl(a, -qexp), n = floorl(scaled), frac = scaled - n;
        bool neg = x < 0, up = false;
        if (rnd == EMU_RND_RM) up = neg && frac > 0;
        else if (rnd == EMU_RND_RP) up = !neg && frac > 0;
        else if (rnd == EMU_RND_RNA) up = frac >= 0.5L;
        if (up) n += 1;
        double d = (double)ldexpl(n, qexp);
        return emu_bits64(neg ? -d : d);
    }
    return round_ld(x, fmt, rnd, false);
}

uint8_t emu_f64_to_f8_satfinite(double x, bool e5m2) {
    int mbits = e5m2 ? 2 : 3, bias = e5m2 ? 15 : 7;
    unsigned maxcode = e5m2 ? 0x7b : 0x7e;
    if (isnan(x)) return 0x7f;
    unsigned sign = signbit(x) ? 0x80 : 0;
    double a = fabs(x);
    unsigned code;
    if (a < ldexp(1.0, 1 - bias)) { /* subnormal range: units of the smallest subnormal */
        code = (unsigned)nearbyint(ldexp(a, bias - 1 + mbits));
    } else if (isinf(a)) {
        code = maxcode;
    } else {
        int ex;
        double f = frexp(a, &ex); /* a = f 2^ex, f in [0.5, 1) */
        int e = ex - 1;
        double q = nearbyint((2 * f - 1) * (1 << mbits));
        if (q == (1 << mbits)) q = 0, e++;
        long c = ((long)(e + bias) << mbits) | (long)q;
        code = c > (long)maxcode ? maxcode : (unsigned)c;
    }
    return (uint8_t)(sign | code);
}
