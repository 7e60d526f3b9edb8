/* exec_float.c - floating-point instructions and cvt.
 *
 * Every float instruction is evaluated per lane (two lanes for f16x2 and
 * bf16x2, low half first):
 *   1. inputs are decoded to double (exact for every format), subnormal
 *      inputs flushed to signed zero under .ftz;
 *   2. f32 and f64 arithmetic runs in the native type (IEEE round to
 *      nearest even; .rz/.rm/.rp switch the host rounding mode around the
 *      one operation), f16/bf16 arithmetic runs in double, which is exact
 *      for add/sub/mul (fma rounds to odd there: see emu_fma_half), and is
 *      then rounded once into the format;
 *   3. .sat clamps to [+0, 1] (NaN and -0 give +0, as an H200 does), .ftz flushes subnormal results,
 *      NaN results become the canonical NaN (0x7fffffff, 0x7fff).
 * .approx instructions use the host's correctly rounded (or nearly so)
 * libm: their results are within PTX's documented error bounds.  Under
 * EmuOptions.approx == EMU_APPROX_BOUND each is then moved by that bound
 * (emu/approx.c), as far as a GPU may be off.
 * min/max: a NaN operand loses unless .NaN; -0 orders below +0. */
#include "emu/exec.h"

#include <fenv.h>
#include <float.h>
#include <math.h>

static inline bool is_sub32(float x) { return x != 0 && fabsf(x) < 0x1p-126f; }
static inline float ftz32(float x) { return is_sub32(x) ? copysignf(0.0f, x) : x; }

static int host_mode(int rnd) {
    switch (rnd) {
    case EMU_RND_RZ: return FE_TOWARDZERO;
    case EMU_RND_RM: return FE_DOWNWARD;
    case EMU_RND_RP: return FE_UPWARD;
    default: return FE_TONEAREST;
    }
}

/* One f32/f64 operation under a rounding mode. */
static double native_op(unsigned op, bool is64, double a, double b, double c, int rnd) {
    int mode = host_mode(rnd), old = FE_TONEAREST;
    if (mode != FE_TONEAREST) { old = fegetround(); fesetround(mode); }
    double r;
    if (is64) {
        volatile double x = a, y = b, z = c, v;
        switch (op) {
        case EMU_OP_ADD: v = x + y; break;
        case EMU_OP_SUB: v = x - y; break;
        case EMU_OP_MUL: v = x * y; break;
        case EMU_OP_DIV: v = x / y; break;
        case EMU_OP_RCP: v = 1.0 / x; break;
        case EMU_OP_SQRT: v = sqrt(x); break;
        default: v = fma(x, y, z); break;
        }
        r = v;
    } else {
        volatile float x = (float)a, y = (float)b, z = (float)c, v;
        switch (op) {
        case EMU_OP_ADD: v = x + y; break;
        case EMU_OP_SUB: v = x - y; break;
        case EMU_OP_MUL: v = x * y; break;
        case EMU_OP_DIV: v = x / y; break;
        case EMU_OP_RCP: v = 1.0f / x; break;
        case EMU_OP_SQRT: v = sqrtf(x); break;
        default: v = fmaf(x, y, z); break;
        }
        r = v;
    }
    if (mode != FE_TONEAREST) fesetround(old);
    return r;
}

/* Element decoding/encoding for the scalar element type of ty. */
static unsigned elem_type(unsigned ty) {
    return ty == EMU_T_F16X2 ? EMU_T_F16 : ty == EMU_T_BF16X2 ? EMU_T_BF16 : ty;
}
static double dec(uint64_t bits, unsigned ety) {
    switch (ety) {
    case EMU_T_F16: return emu_f16_to_f64((uint16_t)bits);
    case EMU_T_BF16: return emu_bf16_to_f64((uint16_t)bits);
    case EMU_T_F64: return emu_f64(bits);
    default: return emu_f32(bits);
    }
}
static int fmt_of(unsigned ety) {
    switch (ety) {
    case EMU_T_F16: return EMU_FMT_F16;
    case EMU_T_BF16: return EMU_FMT_BF16;
    case EMU_T_TF32: return EMU_FMT_TF32;
    case EMU_T_F64: return EMU_FMT_F64;
    default: return EMU_FMT_F32;
    }
}
static double min_normal(unsigned ety) {
    switch (ety) {
    case EMU_T_F16: return 0x1p-14;
    case EMU_T_F64: return 0x1p-1022;
    default: return 0x1p-126;
    }
}
static double max_finite(unsigned ety) {
    switch (ety) {
    case EMU_T_F16: return 65504.0;
    case EMU_T_BF16: return 0x1.FEp127;
    case EMU_T_TF32: return 0x1.FFCp127; /* 10 mantissa bits */
    default: return FLT_MAX;
    }
}
static double flush(double x, unsigned ety, bool ftz) {
    if (ftz && x != 0 && fabs(x) < min_normal(ety)) return copysign(0.0, x);
    return x;
}
/* Round a double result into ety with the instruction's modifiers. */
static uint64_t enc(double v, unsigned ety, int rnd, bool ftz, bool sat) {
    /* NaN and -0 give +0: an H200 gives +0 for add/sub/mul/fma/cvt .sat of a -0 result, f32 and f16
     * (bench/gpu/hw_facts.cu) */
    if (sat) v = !(v > 0) ? 0.0 : v > 1 ? 1.0 : v;
    if (isnan(v)) return ety == EMU_T_F64 ? 0x7FFFFFFFFFFFFFFFull : (ety == EMU_T_F16 || ety == EMU_T_BF16) ? 0x7FFF : 0x7FFFFFFFu;
    if (ety == EMU_T_F64) return emu_bits64(flush(v, ety, ftz));
    if (ety == EMU_T_F32 && (rnd == EMU_RND_NONE || rnd == EMU_RND_RN)) {
        float f = (float)v; /* v is already the f32 result, or rounds once */
        return emu_bits32(ftz ? ftz32(f) : f);
    }
    return ftz ? emu_round_f64_ftz(v, fmt_of(ety), rnd, ftz) : emu_round_f64(v, fmt_of(ety), rnd); /* the latter by bits when it can */
}

static double fminmax(double a, double b, bool mn, bool nanp) {
    if (isnan(a) || isnan(b)) {
        if (nanp || (isnan(a) && isnan(b))) return NAN;
        return isnan(a) ? b : a;
    }
    if (a == b && a == 0) return mn ? (signbit(a) ? a : b) : (signbit(a) ? b : a);
    return mn ? (a < b ? a : b) : (a > b ? a : b);
}

/* rcp.approx.ftz.f64 and rsqrt.approx.ftz.f64 give 32 bits: the result's sign, exponent and 20 mantissa bits
 * (rounded to nearest) above 32 zero bits, a NaN 0x7fffffff00000000 (the ISA's canonical one); the host's
 * quotient is within their error bounds. */
static uint64_t approx_hi32(double v) {
    if (isnan(v)) return 0x7FFFFFFF00000000ull;
    v = flush(v, EMU_T_F64, true);
    uint64_t u = emu_bits64(v);
    return isinf(v) || v == 0 ? u : (u + 0x80000000u) & ~0xFFFFFFFFull;
}

/* One lane of an arithmetic instruction; ety is the element type; bound: .approx results moved by their
 * documented error (EMU_APPROX_BOUND). */
static uint64_t lane(const EmuIns *in, unsigned ety, uint64_t xa, uint64_t xb, uint64_t xc, bool bound, bool *bad) {
    bool ftz = in->flags & EMU_F(FTZ), sat = in->flags & EMU_F(SAT);
    double a = flush(dec(xa, ety), ety, ftz), b = flush(dec(xb, ety), ety, ftz), c = flush(dec(xc, ety), ety, ftz);
    bool native = ety == EMU_T_F32 || ety == EMU_T_F64;
    int rnd = in->rnd;
    bool approx = false; /* v is an .approx (or div.full) result */
    double v;
    switch (in->op) {
    case EMU_OP_ADD: case EMU_OP_SUB: case EMU_OP_MUL:
        if (native) v = native_op(in->op, ety == EMU_T_F64, a, b, 0, rnd);
        else v = in->op == EMU_OP_ADD ? a + b : in->op == EMU_OP_SUB ? a - b : a * b;
        break;
    case EMU_OP_FMA: case EMU_OP_MAD:
        if (native) v = native_op(EMU_OP_FMA, ety == EMU_T_F64, a, b, c, rnd);
        else v = emu_fma_half(a, b, c);
        if ((in->flags & EMU_F(RELU)) && signbit(v) && !isnan(v)) v = 0; /* fma.rn.relu (f16, bf16, pairs): a set sign bit clears */
        if (in->op == EMU_OP_FMA && (in->xflags & EMU_XF_OOB) && ((xa & 0xFFFF) == EMU_OOB_NAN16 || (xb & 0xFFFF) == EMU_OOB_NAN16 || (xc & 0xFFFF) == EMU_OOB_NAN16))
            v = 0; /* fma.rn.oob: an operand that is the OOB-NaN a tensor copy fills in gives +0 */
        break;
    case EMU_OP_DIV:
        if (native && !(in->flags & (EMU_F(APPROX) | EMU_F(FULL)))) v = native_op(EMU_OP_DIV, ety == EMU_T_F64, a, b, 0, rnd);
        else if ((in->flags & EMU_F(APPROX)) && ety == EMU_T_F32 && fabs(b) > 0x1p126 && isfinite(b))
            v = isinf(a) ? NAN : copysign(0.0, a) * copysign(1.0, b); /* a * (1/b) with 1/b flushed: the PTX ISA's 0 */
        else { v = a / b; rnd = EMU_RND_RN; approx = true; }
        break;
    case EMU_OP_ABS: v = fabs(a); break;
    case EMU_OP_NEG: v = -a; break;
    case EMU_OP_MIN: case EMU_OP_MAX:
        if (in->flags & EMU_F(XORSIGN)) { /* .xorsign.abs: min/max of the magnitudes, the sign the XOR of the signs */
            /* the signs from the operands' bits: an f16 (or e4m3) NaN decodes without its sign */
            unsigned top = emu_type_size(ety) * 8 - 1;
            v = fminmax(fabs(a), fabs(b), in->op == EMU_OP_MIN, in->flags & EMU_F(NANP));
            if (!isnan(v) && ((xa >> top) & 1) != ((xb >> top) & 1)) v = -v;
        } else v = fminmax(a, b, in->op == EMU_OP_MIN, in->flags & EMU_F(NANP));
        if ((in->flags & EMU_F(RELU)) && !(v >= 0)) v = isnan(v) ? v : 0;
        break;
    case EMU_OP_RCP:
        if (native && !(in->flags & EMU_F(APPROX))) v = native_op(EMU_OP_RCP, ety == EMU_T_F64, a, 0, 0, rnd);
        else if (ety == EMU_T_F64 && ftz) { /* "using the most-significant 20 bits of the mantissa of operand a" */
            uint64_t u = approx_hi32(isnan(a) ? a : 1.0 / emu_f64(emu_bits64(a) & ~0xFFFFFFFFull));
            return bound ? emu_approx_move_hi32(in->op, a, u) : u;
        } else { v = 1.0 / a; rnd = EMU_RND_RN; approx = true; }
        break;
    case EMU_OP_SQRT:
        if (native && !(in->flags & EMU_F(APPROX))) v = native_op(EMU_OP_SQRT, ety == EMU_T_F64, a, 0, 0, rnd);
        else { v = sqrt(a); rnd = EMU_RND_RN; approx = true; }
        break;
    case EMU_OP_RSQRT:
        if (ety == EMU_T_F64 && ftz) { /* "The least significant 32 bits ... are all zeros" */
            uint64_t u = approx_hi32(1.0 / sqrt(a));
            return bound ? emu_approx_move_hi32(in->op, a, u) : u;
        }
        v = 1.0 / sqrt(a);
        rnd = EMU_RND_RN;
        approx = true;
        break;
    case EMU_OP_EX2: v = exp2(a); rnd = EMU_RND_RN; approx = true; break;
    case EMU_OP_LG2: v = log2(a); rnd = EMU_RND_RN; approx = true; break;
    case EMU_OP_SIN: v = sin(a); rnd = EMU_RND_RN; approx = true; break;
    case EMU_OP_COS: v = cos(a); rnd = EMU_RND_RN; approx = true; break;
    case EMU_OP_TANH: v = tanh(a); rnd = EMU_RND_RN; approx = true; break;
    case EMU_OP_COPYSIGN: { /* a bit operation, as the hardware's LOP3: b's other bits (a NaN's payload too), a's sign */
        uint64_t sign = 1ull << (emu_type_size(ety) * 8 - 1);
        return ((xb & ~sign) | (xa & sign)) & (sign | (sign - 1));
    }
    default: *bad = true; return 0;
    }
    if (in->op == EMU_OP_ABS || in->op == EMU_OP_NEG) {
        /* sign-bit operations: keep NaN payloads; abs.f64 passes a NaN through unchanged, sign included (the
         * ISA; for the other types a NaN's result is unspecified and the sign is cleared) */
        if (isnan(a)) {
            unsigned sz = emu_type_size(ety);
            uint64_t sign = 1ull << (sz * 8 - 1);
            if (in->op == EMU_OP_ABS && ety == EMU_T_F64) return xa;
            return in->op == EMU_OP_ABS ? (xa & ~sign) & ((sign << 1) - 1) : (xa ^ sign) & ((sign << 1) - 1);
        }
    }
    if (approx && bound) v = emu_approx_move(in->op, ety, ftz, a, b, v);
    return enc(v, ety, rnd, ftz, sat);
}

bool emu_exec_float(EmuBlock *b, EmuThread *t, const EmuIns *in) {
    unsigned ety = elem_type(in->ty);
    bool pair = in->ty == EMU_T_F16X2 || in->ty == EMU_T_BF16X2;
    bool ftz = in->flags & EMU_F(FTZ);
    uint64_t xa = in->nops > 1 ? EMU_R(t, in, 1) : 0, xb = in->nops > 2 ? EMU_R(t, in, 2) : 0;
    uint64_t xc = in->nops > 3 ? EMU_R(t, in, 3) : 0;
    switch (in->op) {
    case EMU_OP_SETP: case EMU_OP_SET: {
        unsigned sty = in->op == EMU_OP_SET ? in->ty2 : in->ty;
        if ((sty == EMU_T_F16X2 || sty == EMU_T_BF16X2) && in->op == EMU_OP_SETP) {
            /* setp.CmpOp[.BoolOp].{f16x2,bf16x2} p|q, a, b[, c]: the low halves decide p, the high halves q */
            unsigned hty = sty == EMU_T_F16X2 ? EMU_T_F16 : EMU_T_BF16;
            bool lo = emu_cmp_f(in->cmp, flush(dec(xa & 0xFFFF, hty), hty, ftz), flush(dec(xb & 0xFFFF, hty), hty, ftz));
            bool hi = emu_cmp_f(in->cmp, flush(dec((xa >> 16) & 0xFFFF, hty), hty, ftz), flush(dec((xb >> 16) & 0xFFFF, hty), hty, ftz));
            uint64_t bsrc = EMU_R(t, in, 3);
            bool bc = (in->on[3] ? !(bsrc & 1) : bsrc & 1);
            EMU_R(t, in, 0) = emu_boolop(in->boolop, lo, bc);
            t->r[in->o[4]] = emu_boolop(in->boolop, hi, bc);
            return true;
        }
        if (sty == EMU_T_F16X2 || sty == EMU_T_BF16X2) {
            /* set.CmpOp[.BoolOp].dtype.{f16x2,bf16x2} d, a, b[, c]: per half, 1.0 of the dtype (.f16x2, .bf16x2) or all
             * ones (.u32, .s32) where the comparison holds */
            unsigned hty = sty == EMU_T_F16X2 ? EMU_T_F16 : EMU_T_BF16;
            uint32_t one = in->ty == EMU_T_F16X2 ? 0x3C00u : in->ty == EMU_T_BF16X2 ? 0x3F80u : 0xFFFFu, r = 0;
            for (unsigned h = 0; h < 2; h++) {
                bool v = emu_cmp_f(in->cmp, flush(dec((xa >> 16 * h) & 0xFFFF, hty), hty, ftz), flush(dec((xb >> 16 * h) & 0xFFFF, hty), hty, ftz));
                if (in->nops > 3) v = emu_boolop(in->boolop, v, (in->on[3] ? !(xc & 1) : xc & 1));
                if (v) r |= one << 16 * h;
            }
            EMU_R(t, in, 0) = r;
            return true;
        }
        double a = flush(dec(xa, sty), sty, ftz), c = flush(dec(xb, sty), sty, ftz);
        bool r = emu_cmp_f(in->cmp, a, c);
        if (in->op == EMU_OP_SETP) {
            uint64_t bsrc = EMU_R(t, in, 3);
            bool bc = (in->on[3] ? !(bsrc & 1) : bsrc & 1);
            EMU_R(t, in, 0) = emu_boolop(in->boolop, r, bc);
            t->r[in->o[4]] = emu_boolop(in->boolop, !r, bc);
        } else {
            if (in->nops > 3) r = emu_boolop(in->boolop, r, (in->on[3] ? !(xc & 1) : xc & 1));
            /* true: 1.0 of a float dtype (f32, f16, bf16), all ones of an integer one */
            uint64_t one = in->ty == EMU_T_F32 ? 0x3F800000u : in->ty == EMU_T_F16 ? 0x3C00u : in->ty == EMU_T_BF16 ? 0x3F80u
                                                                                   : emu_zext(~0ull, emu_type_size(in->ty));
            EMU_R(t, in, 0) = r ? one : 0;
        }
        return true;
    }
    case EMU_OP_TESTP: {
        double a = dec(xa, ety);
        bool r = false;
        switch (in->mode) {
        case EMU_MODE_FINITE: r = isfinite(a); break;
        case EMU_MODE_INFINITE: r = isinf(a); break;
        case EMU_MODE_NUMBER: r = !isnan(a); break;
        case EMU_MODE_NOTANUMBER: r = isnan(a); break;
        case EMU_MODE_NORMAL: r = isfinite(a) && (a == 0 || fabs(a) >= min_normal(ety)); break; /* ISA, testp: +-0 count as normal */
        case EMU_MODE_SUBNORMAL: r = a != 0 && fabs(a) < min_normal(ety); break;
        default: return emu_fault(b, t, in, "invalid instruction", "testp needs a class (.finite, .notanumber, ...)");
        }
        EMU_R(t, in, 0) = r;
        return true;
    }
    default: break;
    }
    bool bad = false, bound = b->L->opt->approx == EMU_APPROX_BOUND;
    uint64_t d;
    if (pair) {
        uint64_t lo = lane(in, ety, xa & 0xFFFF, xb & 0xFFFF, xc & 0xFFFF, bound, &bad);
        uint64_t hi = lane(in, ety, (xa >> 16) & 0xFFFF, (xb >> 16) & 0xFFFF, (xc >> 16) & 0xFFFF, bound, &bad);
        d = (lo & 0xFFFF) | ((hi & 0xFFFF) << 16);
    } else {
        d = lane(in, ety, xa, xb, xc, bound, &bad);
    }
    if (bad || !ety || emu_type_kind(in->ty) != EMU_K_F)
        return emu_fault(b, t, in, "unsupported instruction", "'%s' with type .%s is not supported by the emulator",
                         emu_op_name(in->op), emu_type_name(in->ty));
    EMU_R(t, in, 0) = d;
    return true;
}

/* ---- cvt ---- */
static double round_integral(double v, int rnd) {
    switch (rnd) {
    case EMU_RND_RNI: return nearbyint(v); /* host mode is round-to-nearest-even */
    case EMU_RND_RZI: return trunc(v);
    case EMU_RND_RMI: return floor(v);
    case EMU_RND_RPI: return ceil(v);
    }
    return v;
}

static uint64_t cvt_one(const EmuIns *in, uint64_t x, unsigned dty, unsigned sty) {
    unsigned dk = emu_type_kind(dty), sk = emu_type_kind(sty), dsz = emu_type_size(dty), ssz = emu_type_size(sty);
    bool ftz = in->flags & EMU_F(FTZ), sat = in->flags & EMU_F(SAT);
    int rnd = in->rnd;
    bool int_rnd = rnd >= EMU_RND_RNI;
    if (sk == EMU_K_F) {
        double v = dec(x, sty);
        if (sty == EMU_T_F32) v = flush(v, sty, ftz);
        if (dk == EMU_K_F) {
            if (int_rnd) { v = round_integral(v, rnd); rnd = EMU_RND_RN; }
            if ((in->flags & EMU_F(RELU)) && signbit(v) && !isnan(v)) v = 0; /* cvt.rn.relu.{f16,bf16}[x2].f32 */
            uint64_t r = enc(v, dty, rnd, ftz && dty == EMU_T_F32, sat);
            if ((in->flags & EMU_F(SATFINITE)) && isinf(dec(r, dty))) /* past the largest finite (or inf): that, signed */
                r = dty == EMU_T_F64 ? emu_bits64(copysign(DBL_MAX, v)) : emu_round_f64(copysign(max_finite(dty), v), fmt_of(dty), EMU_RND_RN);
            return r;
        }
        /* float -> int: saturating.  NaN: "Zero if source is not .f64 and destination is not .s64, .u64.
         * Otherwise 1 << (BitWidth(dst) - 1)" (MININT for a signed destination, sign-extended as any result) */
        if (isnan(v)) {
            if (sty != EMU_T_F64 && dsz != 8) return 0;
            uint64_t r = 1ull << (dsz * 8 - 1);
            return dk == EMU_K_S ? (uint64_t)emu_sext(r, dsz) : r;
        }
        v = round_integral(v, int_rnd ? rnd : EMU_RND_RZI);
        if (dk == EMU_K_S) {
            double lo = -ldexp(1.0, (int)dsz * 8 - 1), hi = ldexp(1.0, (int)dsz * 8 - 1);
            int64_t r = v < lo ? (int64_t)lo : v >= hi ? (dsz == 8 ? INT64_MAX : (int64_t)hi - 1) : (int64_t)v;
            return (uint64_t)r;
        }
        double hi = ldexp(1.0, (int)dsz * 8);
        if (v <= 0) return 0;
        if (v >= hi) return dsz == 8 ? UINT64_MAX : (uint64_t)hi - 1;
        return (uint64_t)v;
    }
    /* integer source */
    bool ss = sk == EMU_K_S;
    int64_t iv = ss ? emu_sext(x, ssz) : (int64_t)emu_zext(x, ssz);
    if (dk == EMU_K_F) {
        uint64_t r = emu_round_int(iv, ss, fmt_of(dty), rnd);
        if (sat) r = enc(dec(r, dty), dty, EMU_RND_RN, false, true); /* [0.0, 1.0], f64 too */
        return r;
    }
    /* integer -> integer */
    if (sat) {
        bool ds = dk == EMU_K_S;
        if (ds) {
            int64_t lo = dsz == 8 ? INT64_MIN : -(1ll << (dsz * 8 - 1)), hi = dsz == 8 ? INT64_MAX : (1ll << (dsz * 8 - 1)) - 1;
            if (!ss && (uint64_t)iv > (uint64_t)hi) iv = hi;
            else if (ss) iv = iv < lo ? lo : iv > hi ? hi : iv;
        } else {
            uint64_t hi = dsz == 8 ? UINT64_MAX : (1ull << (dsz * 8)) - 1;
            if (ss && iv < 0) iv = 0;
            else if ((uint64_t)iv > hi) iv = (int64_t)hi;
        }
    }
    return dk == EMU_K_S ? (uint64_t)emu_sext((uint64_t)iv, dsz) : emu_zext((uint64_t)iv, dsz);
}

/* f8 pairs (sm_89+): cvt.rn{.relu}.f16x2.{e4m3x2,e5m2x2} d, a (each byte of a exactly into its half,
 * low first; .relu gives +0 for a set sign bit and 0x7fff for a NaN); cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32
 * d, a, b (a to the upper byte, b to the lower) and .f16x2 d, a (each half to its byte). */
static bool cvt_f8x2(EmuBlock *b, EmuThread *t, const EmuIns *in) {
    unsigned dty = in->ty, sty = in->ty2;
    if (sty == EMU_T_E4M3X2 || sty == EMU_T_E5M2X2) {
        if (dty != EMU_T_F16X2 || in->nops != 2)
            return emu_fault(b, t, in, "unsupported instruction", "cvt from .%s gives .f16x2 from one source", emu_type_name(sty));
        bool e5 = sty == EMU_T_E5M2X2, relu = in->flags & EMU_F(RELU);
        uint64_t a = EMU_R(t, in, 1), d = 0;
        for (unsigned h = 0; h < 2; h++) {
            double v = emu_f8_to_f64((uint8_t)(a >> 8 * h), e5);
            /* .relu: "clamps the result to 0 if negative. NaN results are converted to canonical NaN" */
            uint64_t r = relu && isnan(v) ? 0x7FFF : relu && signbit(v) ? 0 : emu_round_f64(v, EMU_FMT_F16, EMU_RND_RN);
            d |= (r & 0xFFFF) << 16 * h;
        }
        EMU_R(t, in, 0) = d;
        return true;
    }
    bool e5 = dty == EMU_T_E5M2X2;
    if (in->rnd != EMU_RND_RN || !(in->flags & EMU_F(SATFINITE)))
        return emu_fault(b, t, in, "invalid instruction", "cvt to .%s needs .rn.satfinite", emu_type_name(dty));
    double hi, lo;
    if (sty == EMU_T_F32 && in->nops == 3) {
        hi = emu_f32(EMU_R(t, in, 1)), lo = emu_f32(EMU_R(t, in, 2));
    } else if (sty == EMU_T_F16X2 && in->nops == 2) {
        uint64_t a = EMU_R(t, in, 1);
        hi = emu_f16_to_f64((uint16_t)(a >> 16)), lo = emu_f16_to_f64((uint16_t)a);
    } else {
        return emu_fault(b, t, in, "unsupported instruction", "cvt to .%s takes two .f32 or one .f16x2", emu_type_name(dty));
    }
    if (in->flags & EMU_F(RELU)) { /* cvt.rn.satfinite.relu: a set sign bit clears (NaN stays NaN) */
        if (signbit(hi) && !isnan(hi)) hi = 0;
        if (signbit(lo) && !isnan(lo)) lo = 0;
    }
    EMU_R(t, in, 0) = (uint64_t)emu_f64_to_f8_satfinite(hi, e5) << 8 | emu_f64_to_f8_satfinite(lo, e5);
    return true;
}

bool emu_exec_cvt(EmuBlock *b, EmuThread *t, const EmuIns *in) {
    unsigned dty = in->ty, sty = in->ty2;
    if (dty == EMU_T_E4M3X2 || dty == EMU_T_E5M2X2 || sty == EMU_T_E4M3X2 || sty == EMU_T_E5M2X2) return cvt_f8x2(b, t, in);
    if (dty == EMU_T_F16X2 || dty == EMU_T_BF16X2) {
        /* cvt.rn.f16x2.f32 d, a, b: a goes to the upper half, b to the lower */
        if (in->nops != 3 || sty != EMU_T_F32)
            return emu_fault(b, t, in, "unsupported instruction", "cvt to .%s needs two .f32 sources", emu_type_name(dty));
        unsigned e = elem_type(dty);
        uint64_t hi = cvt_one(in, EMU_R(t, in, 1), e, sty), lo = cvt_one(in, EMU_R(t, in, 2), e, sty);
        EMU_R(t, in, 0) = (hi & 0xFFFF) << 16 | (lo & 0xFFFF);
        return true;
    }
    if (sty == EMU_T_F16X2 || sty == EMU_T_BF16X2 || emu_type_kind(dty) == EMU_K_PRED || emu_type_kind(sty) == EMU_K_PRED ||
        emu_type_kind(dty) == EMU_K_B || emu_type_kind(sty) == EMU_K_B || in->nops != 2)
        return emu_fault(b, t, in, "unsupported instruction", "cvt.%s.%s is not supported by the emulator",
                         emu_type_name(dty), emu_type_name(sty));
    if (emu_type_kind(dty) == EMU_K_F && emu_type_kind(sty) == EMU_K_F && emu_type_size(dty) < emu_type_size(sty) &&
        in->rnd == EMU_RND_NONE && dty != EMU_T_TF32)
        return emu_fault(b, t, in, "invalid instruction", "narrowing float cvt needs a rounding modifier");
    EMU_R(t, in, 0) = cvt_one(in, EMU_R(t, in, 1), dty, sty);
    return true;
}
