/* llvm_elementwise.c - registers of constants, index sources, shape ops, and
 * element-wise arithmetic, math and casts.
 *
 * Shape ops never move data between threads: broadcast, expand_dims and
 * trans find, for each result register, the operand register holding the
 * same element by looking up its static coordinate (layout.h).  Element-wise
 * ops apply per register (offsets and addresses a run-time stride apart: as
 * vector operations, emit_strided).  f16/bf16 math runs in f32; transcendental
 * functions use the hardware approximations (ex2, lg2, sin, cos, tanh); f32
 * exp and exp2 flush subnormals (ex2.approx.ftz) unless marked exact
 * (docs/language.md, "Precision of math functions"); asin acos atan atan2
 * sinh cosh log1p expm1 fmod are llvm_math.c's; f64 math and the f32 forms of
 * asinh acosh atanh pow erfc cbrt hypot tan log10 exp10 erfinv lgamma tgamma are llvm_math64.c's. */
#include "llvm_ctx.h"
#include "../support/target.h"
#include "../support/hostfloat.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int nregs(LL *l, ValueId v) {
    const Type *t = tir_vtype(l->f, v);
    return t->rank ? ll_regs_of(l, t)->n : 1;
}

LLVMValueRef ll_const_of(LL *l, DType dt, const Attrs *a) {
    LLVMTypeRef ty = ll_type(l, dt);
    if (dtype_is_float(dt) && !dtype_is_storage(dt)) return LLVMConstReal(ty, a->is_float ? a->fval : (double)a->ival);
    if (dt == DT_PTR) return LLVMConstNull(ty);
    if (dt == DT_F8E4M3 || dt == DT_F8E5M2) /* the value's code: nearest even, saturating (NaN stays NaN) */
        return LLVMConstInt(ty, d_to_f8(a->is_float ? a->fval : (double)a->ival, dt == DT_F8E5M2), 0);
    int64_t v = a->is_float ? (int64_t)a->fval : a->ival;
    return LLVMConstInt(ty, (unsigned long long)v, dtype_is_signed(dt));
}

static bool is_f(DType t) { return dtype_is_float(t) && !dtype_is_storage(t); }

/* ---- one element-wise op's registers with the same operands ----
 * A broadcast operand holds one LLVM value in many registers (a row's [M, 1] copied across N), so an op
 * on it sees the same operands again and again: `offs_m[:, None] * stride` multiplies each row's value
 * N times over.  A pure op's value depends on its operands only, so each distinct operand tuple is built
 * once and the copies take its value: LLVM's passes then start from a fraction of the instructions
 * (they would merge the copies themselves, at a cost that grows with them). */
typedef struct RegMemo {
    LLVMValueRef (*keys)[4]; /* a, b, c, the value built for them (NULL: empty slot) */
    unsigned mask;
} RegMemo;

static RegMemo memo_begin(int n, bool pure) {
    RegMemo m = {0};
    if (!pure || n < 2) return m;
    unsigned cap = 4;
    while (cap < 2u * (unsigned)n) cap *= 2;
    m.keys = calloc(cap, sizeof *m.keys);
    if (!m.keys) out_of_memory();
    m.mask = cap - 1;
    return m;
}

/* the slot of (a, b, c): its value once built (NULL before); NULL without a table */
static LLVMValueRef *memo_find(RegMemo *m, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
    if (!m->keys) return NULL;
    uintptr_t h = (uintptr_t)a * 0x9E3779B97F4A7C15u ^ (uintptr_t)b * 0xC2B2AE3D27D4EB4Fu ^ (uintptr_t)c * 0x165667B19E3779F9u;
    for (unsigned k = (unsigned)(h >> 17) & m->mask;; k = (k + 1) & m->mask) {
        LLVMValueRef *e = m->keys[k];
        if (!e[0]) {
            e[0] = a, e[1] = b, e[2] = c;
            return &e[3];
        }
        if (e[0] == a && e[1] == b && e[2] == c) return &e[3];
    }
}

static void memo_end(RegMemo *m) { free(m->keys); }

/* ---- f8 in software (sm_80 has no f8 conversions; the same code runs everywhere) ----
 * f8e4m3 is E4M3FN: bias 7, no infinity, S.1111.111 is NaN, largest 448.
 * f8e5m2 is the top byte of an f16 (bias 15, with infinities).
 * To f8: round to nearest even, saturating to the largest finite value (PTX's
 * .satfinite), NaN stays NaN.
 *
 * From f8, two at a time into an f16x2 (exact: every f8 value is an f16).  With the
 * codes at bits 8-15 and 24-31 of t (zeros below):
 *   e5m2: t is the f16x2.
 *   e4m3: the magnitude's 7 bits moved to bits 7-13 of each half and the sign kept make the f16
 *         whose value is the code's times 2^-8 (the biases differ by 8; subnormals included),
 *         so one mul.f16x2 by 256 (exact) gives the value.  The NaN code's magnitude 0x3f80
 *         is the only one that carries into bit 14 when 0x80 is added: that bit, set, turns
 *         the half into a NaN (0x7f80) before the multiply.
 * About 7 instructions a pair (PRMT, SHF, 3 LOP3, IADD, HMUL2) where the bit-by-bit
 * decoding took 13 an element. */
static LLVMValueRef f8x2_to_f16x2_sw(LL *l, LLVMValueRef lo, LLVMValueRef hi, DType from) {
    LLVMBuilderRef B = l->b;
    LLVMValueRef t = LLVMBuildShl(B, LLVMBuildZExt(B, lo, l->t_i32, ""), ll_i32(l, 8), "");
    if (hi) t = LLVMBuildOr(B, t, LLVMBuildShl(B, LLVMBuildZExt(B, hi, l->t_i32, ""), ll_i32(l, 24), ""), "");
    LLVMTypeRef h2 = LLVMVectorType(l->t_f16, 2);
    if (from == DT_F8E5M2) return LLVMBuildBitCast(B, t, h2, "");
    LLVMValueRef mag = LLVMBuildAnd(B, LLVMBuildLShr(B, t, ll_i32(l, 1), ""), ll_i32(l, 0x3f803f80), "");
    LLVMValueRef nan = LLVMBuildAnd(B, LLVMBuildAdd(B, mag, ll_i32(l, 0x00800080), ""), ll_i32(l, 0x40004000), "");
    LLVMValueRef bits = LLVMBuildOr(B, LLVMBuildOr(B, LLVMBuildAnd(B, t, ll_i32(l, (int32_t)0x80008000), ""), mag, ""), nan, "");
    LLVMValueRef k = LLVMConstReal(l->t_f16, 256.0), ks[2] = {k, k};
    return LLVMBuildFMul(B, LLVMBuildBitCast(B, bits, h2, ""), LLVMConstVector(ks, 2), "");
}

static LLVMValueRef f8_to_f16_sw(LL *l, LLVMValueRef b, DType from) {
    return LLVMBuildExtractElement(l->b, f8x2_to_f16x2_sw(l, b, NULL, from), ll_i32(l, 0), "");
}

static LLVMValueRef f32_to_f8(LL *l, LLVMValueRef x, DType to) {
    LLVMBuilderRef B = l->b;
    int mbits = to == DT_F8E4M3 ? 3 : 2, bias = to == DT_F8E4M3 ? 7 : 15, maxcode = to == DT_F8E4M3 ? 0x7e : 0x7b;
    int shift = 23 - mbits;
    LLVMValueRef bits = LLVMBuildBitCast(B, x, l->t_i32, "");
    LLVMValueRef sign = LLVMBuildAnd(B, LLVMBuildLShr(B, bits, ll_i32(l, 24), ""), ll_i32(l, 0x80), "");
    LLVMValueRef a = LLVMBuildAnd(B, bits, ll_i32(l, 0x7fffffff), "");
    /* normal range: round the magnitude's bits to mbits, then rebias the exponent */
    LLVMValueRef odd = LLVMBuildAnd(B, LLVMBuildLShr(B, a, ll_i32(l, shift), ""), ll_i32(l, 1), "");
    LLVMValueRef rounded = LLVMBuildAdd(B, a, LLVMBuildAdd(B, ll_i32(l, (1 << (shift - 1)) - 1), odd, ""), "");
    LLVMValueRef normal = LLVMBuildSub(B, LLVMBuildLShr(B, rounded, ll_i32(l, shift), ""), ll_i32(l, (127 - bias) << mbits), "");
    /* below the smallest normal: count in units of the smallest subnormal (may round up to it) */
    LLVMTypeRef ft = l->t_f32;
    LLVMValueRef ax = LLVMBuildBitCast(B, a, ft, "");
    LLVMValueRef scaled = LLVMBuildFMul(B, ax, LLVMConstReal(ft, ldexp(1.0, bias - 1 + mbits)), "");
    LLVMValueRef sub = LLVMBuildFPToUI(B, ll_intr(l, "llvm.roundeven", &ft, 1, &scaled, 1), l->t_i32, "");
    LLVMValueRef is_sub = LLVMBuildICmp(B, LLVMIntULT, a, ll_i32(l, (128 - bias) << 23), "");
    LLVMValueRef code = LLVMBuildSelect(B, is_sub, sub, normal, "");
    LLVMValueRef over = LLVMBuildICmp(B, LLVMIntUGT, code, ll_i32(l, maxcode), "");
    LLVMValueRef big = LLVMBuildICmp(B, LLVMIntUGE, a, ll_i32(l, 0x7f000000), ""); /* also keeps the add from wrapping */
    code = LLVMBuildSelect(B, LLVMBuildOr(B, over, big, ""), ll_i32(l, maxcode), code, "");
    LLVMValueRef nan = LLVMBuildICmp(B, LLVMIntUGT, a, ll_i32(l, 0x7f800000), "");
    code = LLVMBuildSelect(B, nan, ll_i32(l, 0x7f), code, "");
    return LLVMBuildTrunc(B, LLVMBuildOr(B, sign, code, ""), l->t_i8, "");
}

/* ---- f8 in hardware (sm_89 and later: cvt with e4m3x2 / e5m2x2 pairs) ----
 * f8 -> f16: the byte in the low half of a pair, cvt.rn.f16x2.e4m3x2, the low f16 (exact);
 * f32 -> f8: cvt.rn.satfinite.e4m3x2.f32 with x in both halves, the low byte (round to
 * nearest even, satfinite: the software path's contract). */
static bool hw_f8(LL *l) { return target_has_f8(target_find(l->m->arch)); }

/* Two f8 codes (low byte first, an i16) to an f16x2 (an i32). */
static LLVMValueRef cvt_f8x2_f16x2(LL *l, LLVMValueRef pair, DType from) {
    return ll_asm(l, l->t_i32, from == DT_F8E5M2 ? "cvt.rn.f16x2.e5m2x2 $0, $1;" : "cvt.rn.f16x2.e4m3x2 $0, $1;", "=r,h", &pair, 1, false);
}

/* Two f32 to two f8 codes: hi to the upper byte, lo to the lower (an i16). */
static LLVMValueRef cvt_f32x2_f8x2(LL *l, LLVMValueRef hi, LLVMValueRef lo, DType to) {
    LLVMValueRef args[2] = {hi, lo};
    return ll_asm(l, l->t_i16, to == DT_F8E5M2 ? "cvt.rn.satfinite.e5m2x2.f32 $0, $1, $2;" : "cvt.rn.satfinite.e4m3x2.f32 $0, $1, $2;",
                  "=h,f,f", args, 2, false);
}

static LLVMValueRef f8_to_f16_hw(LL *l, LLVMValueRef b, DType from) {
    LLVMValueRef r = cvt_f8x2_f16x2(l, LLVMBuildZExt(l->b, b, l->t_i16, ""), from);
    return LLVMBuildBitCast(l->b, LLVMBuildTrunc(l->b, r, l->t_i16, ""), l->t_f16, "");
}

static LLVMValueRef f32_to_f8_hw(LL *l, LLVMValueRef x, DType to) { return LLVMBuildTrunc(l->b, cvt_f32x2_f8x2(l, x, x, to), l->t_i8, ""); }

/* A tensor's registers cast to or from f8 two at a time: one cvt (from f8 without one, the
 * software pair) per pair (registers 2j and 2j+1 share it; an odd last one goes alone). */
static void cast_f8_pairs(LL *l, LLVMValueRef *v, int n, DType from, DType to, LLVMValueRef *out) {
    LLVMBuilderRef B = l->b;
    for (int r = 0; r + 1 < n; r += 2) {
        if (dtype_is_storage(from)) {
            LLVMValueRef h2;
            if (hw_f8(l)) {
                LLVMValueRef h = LLVMBuildOr(B, LLVMBuildZExt(B, v[r], l->t_i16, ""),
                                             LLVMBuildShl(B, LLVMBuildZExt(B, v[r + 1], l->t_i16, ""), LLVMConstInt(l->t_i16, 8, 0), ""), "");
                h2 = LLVMBuildBitCast(B, cvt_f8x2_f16x2(l, h, from), LLVMVectorType(l->t_f16, 2), "");
            } else {
                h2 = f8x2_to_f16x2_sw(l, v[r], v[r + 1], from);
            }
            for (int k = 0; k < 2; k++) out[r + k] = ll_cast(l, LLVMBuildExtractElement(B, h2, ll_i32(l, k), ""), DT_F16, to);
        } else {
            LLVMValueRef w = cvt_f32x2_f8x2(l, ll_cast(l, v[r + 1], from, DT_F32), ll_cast(l, v[r], from, DT_F32), to);
            out[r] = LLVMBuildTrunc(B, w, l->t_i8, "");
            out[r + 1] = LLVMBuildTrunc(B, LLVMBuildLShr(B, w, LLVMConstInt(l->t_i16, 8, 0), ""), l->t_i8, "");
        }
    }
    if (n % 2) out[n - 1] = ll_cast(l, v[n - 1], from, to);
}

/* An f64 as an f32 rounded to odd (truncated, the last bit set when anything was dropped): rounding that
 * again to a narrower type (f8, bf16) gives the f64's own nearest-even result, where two nearest-even
 * roundings can create a false tie (1.0625 + 2^-30 to e4m3 was 1.0, not 1.125).  NaN passes. */
static LLVMValueRef f64_to_f32_odd(LL *l, LLVMValueRef x) {
    LLVMBuilderRef B = l->b;
    LLVMValueRef f = LLVMBuildFPTrunc(B, x, l->t_f32, ""), back = LLVMBuildFPExt(B, f, l->t_f64, "");
    LLVMTypeRef dt = l->t_f64;
    LLVMValueRef ax = ll_intr(l, "llvm.fabs", &dt, 1, &x, 1), ab = ll_intr(l, "llvm.fabs", &dt, 1, &back, 1);
    LLVMValueRef bits = LLVMBuildBitCast(B, f, l->t_i32, "");
    LLVMValueRef away = LLVMBuildFCmp(B, LLVMRealOGT, ab, ax, ""); /* rounded up in magnitude: one step back */
    LLVMValueRef trunc = LLVMBuildSub(B, bits, LLVMBuildZExt(B, away, l->t_i32, ""), "");
    LLVMValueRef inexact = LLVMBuildFCmp(B, LLVMRealONE, back, x, "");
    LLVMValueRef odd = LLVMBuildOr(B, trunc, LLVMConstInt(l->t_i32, 1, 0), "");
    return LLVMBuildBitCast(B, LLVMBuildSelect(B, inexact, odd, bits, ""), l->t_f32, "");
}

/* A 64-bit integer as an f64 rounded to odd: the bits below f64's 53 significant ones are dropped and,
 * when any was set, the lowest kept one is set, so the conversion is exact and a later rounding sees
 * the dropped bits (i64 -> f64 to nearest even can make a false tie: 2^56 + 2^48 + 1 to bf16). */
static LLVMValueRef i64_to_f64_odd(LL *l, LLVMValueRef v, bool is_signed) {
    LLVMBuilderRef B = l->b;
    LLVMTypeRef t = l->t_i64;
    LLVMValueRef zero = LLVMConstInt(t, 0, 0);
    LLVMValueRef neg = is_signed ? LLVMBuildICmp(B, LLVMIntSLT, v, zero, "") : NULL;
    LLVMValueRef u = neg ? LLVMBuildSelect(B, neg, LLVMBuildSub(B, zero, v, ""), v, "") : v; /* |v|; INT64_MIN as 2^63 */
    LLVMValueRef ctlz_args[2] = {u, LLVMConstInt(l->t_i1, 0, 0)};
    LLVMValueRef lz = ll_intr(l, "llvm.ctlz", &t, 1, ctlz_args, 2);
    LLVMValueRef k = LLVMBuildSub(B, LLVMConstInt(t, 11, 0), lz, ""); /* bits past 53 */
    k = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSGT, k, zero, ""), k, zero, "");
    LLVMValueRef one = LLVMConstInt(t, 1, 0), low = LLVMBuildShl(B, one, k, "");
    LLVMValueRef mask = LLVMBuildSub(B, low, one, "");
    LLVMValueRef sticky = LLVMBuildICmp(B, LLVMIntNE, LLVMBuildAnd(B, u, mask, ""), zero, "");
    LLVMValueRef kept = LLVMBuildAnd(B, u, LLVMBuildNot(B, mask, ""), "");
    u = LLVMBuildOr(B, kept, LLVMBuildSelect(B, sticky, low, zero, ""), "");
    LLVMValueRef f = LLVMBuildUIToFP(B, u, l->t_f64, "");
    return neg ? LLVMBuildSelect(B, neg, LLVMBuildFNeg(B, f, ""), f, "") : f;
}

/* A value of `from` as an f32 from which one more nearest-even rounding to a type of at most 11
 * significant bits is exact: f64 and integers wider than 24 bits go through f64 (64-bit ones
 * rounded to odd there) and round to odd. */
static LLVMValueRef to_f32_for_narrow(LL *l, LLVMValueRef v, DType from) {
    bool wide_int = dtype_is_int(from) && from != DT_I1 && dtype_bits(from) > 24;
    if (from != DT_F64 && !wide_int) return ll_cast(l, v, from, DT_F32);
    if (wide_int && dtype_bits(from) == 64) return f64_to_f32_odd(l, i64_to_f64_odd(l, v, dtype_is_signed(from)));
    return f64_to_f32_odd(l, from == DT_F64 ? v : ll_cast(l, v, from, DT_F64));
}

LLVMValueRef ll_cast(LL *l, LLVMValueRef v, DType from, DType to) {
    if (from == to) return v;
    LLVMTypeRef tt = ll_type(l, to);
    if (hw_f8(l)) {
        if (dtype_is_storage(from) && dtype_is_storage(to)) return f32_to_f8_hw(l, LLVMBuildFPExt(l->b, f8_to_f16_hw(l, v, from), l->t_f32, ""), to);
        if (dtype_is_storage(from)) return ll_cast(l, f8_to_f16_hw(l, v, from), DT_F16, to);
        if (dtype_is_storage(to)) return f32_to_f8_hw(l, to_f32_for_narrow(l, v, from), to);
    }
    if (dtype_is_storage(from) && dtype_is_storage(to)) return f32_to_f8(l, LLVMBuildFPExt(l->b, f8_to_f16_sw(l, v, from), l->t_f32, ""), to);
    if (dtype_is_storage(from)) return ll_cast(l, f8_to_f16_sw(l, v, from), DT_F16, to);
    if (dtype_is_storage(to)) return f32_to_f8(l, to_f32_for_narrow(l, v, from), to);
    if (to == DT_I1) {
        if (is_f(from)) return LLVMBuildFCmp(l->b, LLVMRealUNE, v, LLVMConstReal(LLVMTypeOf(v), 0), "");
        return LLVMBuildICmp(l->b, LLVMIntNE, v, LLVMConstInt(LLVMTypeOf(v), 0, 0), "");
    }
    if (dtype_is_int(from) && dtype_is_int(to)) {
        int fb = dtype_bits(from), tb = dtype_bits(to);
        if (fb == tb) return v;
        if (fb > tb) return LLVMBuildTrunc(l->b, v, tt, "");
        return dtype_is_signed(from) ? LLVMBuildSExt(l->b, v, tt, "") : LLVMBuildZExt(l->b, v, tt, "");
    }
    if (dtype_is_int(from) && to == DT_BF16 && dtype_bits(from) > 8) /* once rounded (i32 -> f32 -> bf16 rounded twice) */
        return LLVMBuildFPTrunc(l->b, to_f32_for_narrow(l, v, from), tt, "");
    if (dtype_is_int(from) && is_f(to))
        return dtype_is_signed(from) ? LLVMBuildSIToFP(l->b, v, tt, "") : LLVMBuildUIToFP(l->b, v, tt, "");
    if (is_f(from) && dtype_is_int(to)) { /* toward zero, saturated at to's range, NaN 0 (fpto[su]i's out of range is poison) */
        LLVMTypeRef ovl[2] = {tt, LLVMTypeOf(v)};
        return ll_intr(l, dtype_is_signed(to) ? "llvm.fptosi.sat" : "llvm.fptoui.sat", ovl, 2, &v, 1);
    }
    if (is_f(from) && is_f(to)) {
        if ((from == DT_F16 && to == DT_BF16) || (from == DT_BF16 && to == DT_F16))
            return LLVMBuildFPTrunc(l->b, LLVMBuildFPExt(l->b, v, l->t_f32, ""), tt, "");
        if (dtype_bits(from) < dtype_bits(to)) return LLVMBuildFPExt(l->b, v, tt, "");
        return LLVMBuildFPTrunc(l->b, v, tt, "");
    }
    return NULL;
}

static LLVMValueRef fconst(LL *l, LLVMTypeRef t, double v) { return LLVMConstReal(t, v); }

/* f32 2^x by the hardware approximation (MUFU.EX2, at most 2 ulp from the
 * correctly rounded result).  The .ftz form flushes subnormal inputs and
 * results to zero and is one MUFU; without .ftz ptxas wraps it in a
 * compare, two multiplies and a select to scale subnormals.  Every f32 exp
 * and exp2 takes .ftz, as Triton does, unless written `exact=true`. */
static LLVMValueRef ex2(LL *l, LLVMValueRef x, bool ftz) {
    LLVMTypeRef ft = l->t_f32;
    return ll_intr(l, ftz ? "llvm.nvvm.ex2.approx.ftz" : "llvm.nvvm.ex2.approx", &ft, 1, &x, 1);
}

/* exp(x, exact=true): t = x*log2(e) rounded, plus the rounding error of that
 * product (err = fma(x, L_hi, -t) + x*L_lo, exact to f32 precision), so the
 * result 2^t * (1 + err*ln 2) stays within ~3 ulp over the whole range instead
 * of losing |x*log2 e| ulps; infinite t (x = +-inf, overflow) skips the
 * correction, whose fma would be inf - inf, and so does an infinite 2^t. */
static LLVMValueRef exp_exact(LL *l, LLVMValueRef x) {
    LLVMBuilderRef B = l->b;
    LLVMTypeRef ft = l->t_f32;
    const double log2e = 1.4426950408889634;
    double hi = (double)(float)log2e, lo = log2e - hi;
    LLVMValueRef t = LLVMBuildFMul(B, x, fconst(l, ft, hi), "");
    LLVMValueRef a[3] = {x, fconst(l, ft, hi), LLVMBuildFNeg(B, t, "")};
    LLVMValueRef err = LLVMBuildFAdd(B, ll_intr(l, "llvm.fma", &ft, 1, a, 3), LLVMBuildFMul(B, x, fconst(l, ft, lo), ""), "");
    LLVMValueRef inf = LLVMBuildFCmp(B, LLVMRealOEQ, ll_intr(l, "llvm.fabs", &ft, 1, &t, 1), fconst(l, ft, INFINITY), "");
    err = LLVMBuildSelect(B, inf, fconst(l, ft, 0.0), err, "");
    LLVMValueRef r = ex2(l, t, false);
    LLVMValueRef c[3] = {r, LLVMBuildFMul(B, err, fconst(l, ft, 0.6931471805599453), ""), r};
    /* past the overflow threshold 2^t is inf, and inf * err + inf is NaN for a negative err: inf stays */
    LLVMValueRef over = LLVMBuildFCmp(B, LLVMRealOEQ, r, fconst(l, ft, INFINITY), "");
    return LLVMBuildSelect(B, over, r, ll_intr(l, "llvm.fma", &ft, 1, c, 3), "");
}

static LLVMValueRef math_f32(LL *l, Op op, bool exact, LLVMValueRef x) {
    LLVMTypeRef ft = l->t_f32;
    switch (op) {
    case OP_EXP2: return ex2(l, x, !exact);
    case OP_EXP: return exact ? exp_exact(l, x) : ex2(l, LLVMBuildFMul(l->b, x, fconst(l, ft, 1.4426950408889634), ""), true);
    case OP_LOG2: return ll_intr(l, "llvm.nvvm.lg2.approx.f", NULL, 0, &x, 1);
    case OP_LOG:
        return LLVMBuildFMul(l->b, ll_intr(l, "llvm.nvvm.lg2.approx.f", NULL, 0, &x, 1), fconst(l, ft, 0.6931471805599453), "");
    case OP_SIN: return ll_intr(l, "llvm.nvvm.sin.approx.f", NULL, 0, &x, 1);
    case OP_COS: return ll_intr(l, "llvm.nvvm.cos.approx.f", NULL, 0, &x, 1);
    case OP_RSQRT: return ll_intr(l, "llvm.nvvm.rsqrt.approx.f", NULL, 0, &x, 1);
    case OP_TANH: return exact ? NULL : ll_asm(l, ft, "tanh.approx.f32 $0, $1;", "=f,f", &x, 1, false); /* exact: llvm_math.c */
    case OP_SIGMOID: {
        LLVMValueRef e = ex2(l, LLVMBuildFMul(l->b, x, fconst(l, ft, -1.4426950408889634), ""), true);
        return LLVMBuildFDiv(l->b, fconst(l, ft, 1.0), LLVMBuildFAdd(l->b, fconst(l, ft, 1.0), e, ""), "");
    }
    case OP_ERF: {
        /* Two ranges of |x| (coefficients fitted for this by weighted least squares, bench/fit_erf.py):
         *   |x| < 1:        erf = |x| + |x| (P(x^2) - 1), P of degree 6 (erf(x) / x within 1.3e-9 relative),
         *                   the last step one fma: small x keep their relative precision (erf(1e-8) = 1.128e-8);
         *   1 <= |x| < 3.92: erf = 1 - 2^(R(|x| - 2.46) - x^2 log2(e)), R of degree 8 (log2(erfc(x) e^(x^2)),
         *                   which varies slowly: no cancellation) within 1.2e-8;
         *   |x| >= 3.92:    1 (erfc(3.92) < half an f32 ulp of 1).
         * Within 0.9 ulp on the emulator (exact ex2), about 1.5 with ex2.approx's error on a GPU; the sign is
         * restored last. */
        static const double p[7] = {0.1283791657340008, -0.37612625845317488, 0.1128358532077704, -0.026853817924676587,
                                    0.0051883377766540617, -0.00080102750122351685, 7.8541133041851833e-05};
        static const double r[9] = {-2.2255267288201894, -0.51536224789002338, 0.082854564847546303, -0.016175039993490733,
                                    0.0032477377663562082, -0.00063371619967449166, 0.00011703654235482863,
                                    -1.9909959556585477e-05, 2.3544425347897076e-06};
        LLVMValueRef ax = ll_intr(l, "llvm.fabs", &ft, 1, &x, 1);
        LLVMValueRef s = LLVMBuildFMul(l->b, ax, ax, "");
        LLVMValueRef q = fconst(l, ft, p[6]);
        for (int k = 5; k >= 0; k--) {
            LLVMValueRef args[3] = {q, s, fconst(l, ft, p[k])};
            q = ll_intr(l, "llvm.fma", &ft, 1, args, 3);
        }
        LLVMValueRef a1[3] = {ax, q, ax};
        LLVMValueRef small = ll_intr(l, "llvm.fma", &ft, 1, a1, 3);
        LLVMValueRef t = LLVMBuildFSub(l->b, ax, fconst(l, ft, 2.46), "");
        LLVMValueRef g = fconst(l, ft, r[8]);
        for (int k = 7; k >= 0; k--) {
            LLVMValueRef args[3] = {g, t, fconst(l, ft, r[k])};
            g = ll_intr(l, "llvm.fma", &ft, 1, args, 3);
        }
        LLVMValueRef a2[3] = {LLVMBuildFNeg(l->b, s, ""), fconst(l, ft, 1.4426950408889634), g};
        LLVMValueRef e = ex2(l, ll_intr(l, "llvm.fma", &ft, 1, a2, 3), true);
        LLVMValueRef mid = LLVMBuildFSub(l->b, fconst(l, ft, 1.0), e, "");
        LLVMValueRef y = LLVMBuildSelect(l->b, LLVMBuildFCmp(l->b, LLVMRealOLT, ax, fconst(l, ft, 1.0), ""), small, mid, "");
        y = LLVMBuildSelect(l->b, LLVMBuildFCmp(l->b, LLVMRealOGE, ax, fconst(l, ft, 3.92), ""), fconst(l, ft, 1.0), y, "");
        LLVMValueRef cs[2] = {y, x};
        return ll_intr(l, "llvm.copysign", &ft, 1, cs, 2);
    }
    default: return NULL;
    }
}

/* Past this many elements a thread, f64-computed math calls one helper per op instead of inlining its body at
 * every element (code size and compile time; up to it the copies give independent work to overlap). */
enum { MATH64_INLINE_MAX = 16 };

/* op (i's, or OP_FMOD for a float `%`) on x */
static LLVMValueRef emit_math_op(LL *l, Inst *i, Op op, DType dt, LLVMValueRef *x, int per_thread) {
    LLVMValueRef (*f64)(LL *, Op, LLVMValueRef, LLVMValueRef) = per_thread > MATH64_INLINE_MAX ? ll_math_f64_call : ll_math_f64;
    LLVMTypeRef ty = ll_type(l, dt);
    switch (op) {
    case OP_SQRT: return ll_intr(l, "llvm.sqrt", &ty, 1, x, 1);
    case OP_ABS: return ll_intr(l, "llvm.fabs", &ty, 1, x, 1);
    case OP_FLOOR: return ll_intr(l, "llvm.floor", &ty, 1, x, 1);
    case OP_CEIL: return ll_intr(l, "llvm.ceil", &ty, 1, x, 1);
    case OP_ROUND: return ll_intr(l, "llvm.round", &ty, 1, x, 1);
    case OP_RINT: return ll_intr(l, "llvm.rint", &ty, 1, x, 1);
    case OP_TRUNC: return ll_intr(l, "llvm.trunc", &ty, 1, x, 1);
    case OP_COPYSIGN: return ll_intr(l, "llvm.copysign", &ty, 1, x, 2);
    case OP_FMA: return ll_intr(l, "llvm.fma", &ty, 1, x, 3);
    default: break;
    }
    if (dt == DT_F64) {
        LLVMValueRef r = f64(l, op, x[0], x[1]);
        if (!r) ll_error(l, i->loc, "internal error: no f64 lowering for '%s'", tir_op_info[op].name);
        return r;
    }
    switch (op) { /* f32, f16, bf16 computed in f64 and rounded once */
    case OP_ASINH: case OP_ACOSH: case OP_ATANH: case OP_POW: case OP_ERFC: case OP_CBRT: case OP_HYPOT:
    case OP_TAN: case OP_LOG10: case OP_EXP10: case OP_ERFINV: case OP_LGAMMA: case OP_TGAMMA: {
        LLVMValueRef a = LLVMBuildFPExt(l->b, x[0], l->t_f64, "");
        LLVMValueRef b = x[1] ? LLVMBuildFPExt(l->b, x[1], l->t_f64, "") : NULL;
        return LLVMBuildFPTrunc(l->b, f64(l, op, a, b), ty, "");
    }
    default: break;
    }
    LLVMValueRef v = dt == DT_F32 ? x[0] : LLVMBuildFPExt(l->b, x[0], l->t_f32, "");
    LLVMValueRef w = !x[1] || dt == DT_F32 ? x[1] : LLVMBuildFPExt(l->b, x[1], l->t_f32, "");
    LLVMValueRef r = math_f32(l, op, (op == OP_EXP || op == OP_EXP2 || op == OP_TANH) && i->a.ival, v);
    if (!r) r = ll_math_ext_f32(l, op, v, w);
    if (!r) return NULL;
    return dt == DT_F32 ? r : LLVMBuildFPTrunc(l->b, r, ty, "");
}

static LLVMValueRef emit_math(LL *l, Inst *i, DType dt, LLVMValueRef *x, int per_thread) {
    return emit_math_op(l, i, i->op, dt, x, per_thread);
}

static LLVMValueRef emit_binary(LL *l, Inst *i, DType dt, LLVMValueRef a, LLVMValueRef b) {
    bool f = is_f(dt), s = dtype_is_signed(dt);
    LLVMTypeRef ty = ll_type(l, dt);
    switch (i->op) {
    case OP_ADD: return f ? LLVMBuildFAdd(l->b, a, b, "") : LLVMBuildAdd(l->b, a, b, "");
    case OP_SUB: return f ? LLVMBuildFSub(l->b, a, b, "") : LLVMBuildSub(l->b, a, b, "");
    case OP_MUL: return f ? LLVMBuildFMul(l->b, a, b, "") : LLVMBuildMul(l->b, a, b, "");
    case OP_DIV: return f ? LLVMBuildFDiv(l->b, a, b, "") : s ? LLVMBuildSDiv(l->b, a, b, "") : LLVMBuildUDiv(l->b, a, b, "");
    case OP_REM: return s ? LLVMBuildSRem(l->b, a, b, "") : LLVMBuildURem(l->b, a, b, ""); /* floats: fmod, in the caller */
    case OP_AND: return LLVMBuildAnd(l->b, a, b, "");
    case OP_OR: return LLVMBuildOr(l->b, a, b, "");
    case OP_XOR: return LLVMBuildXor(l->b, a, b, "");
    case OP_SHL:
    case OP_SHR: {
        /* A shift by the width or more (a negative amount is more, unsigned) gives 0, or the sign's fill for an
         * arithmetic shift right (docs/language.md).  LLVM's shifts give poison there, which LLVM may fold on
         * ((1 << s) == 0 became false for s = 32), and PTX's 64-bit shifts take a 32-bit amount (2^32 + 1 shifted
         * by 1): the amount is compared and the fill selected, a select LLVM drops where it knows the amount is
         * in range (s & 31).  A 64-bit amount is clamped to 64 first: NVPTX folds that select into its clamping
         * shift, whose amount is the low 32 bits (2^63 would shift by 0). */
        unsigned w = LLVMGetIntTypeWidth(ty);
        LLVMValueRef fill = i->op == OP_SHR && s ? LLVMBuildAShr(l->b, a, LLVMConstInt(ty, w - 1, 0), "") : LLVMConstNull(ty);
        if (LLVMIsAConstantInt(b) && LLVMConstIntGetZExtValue(b) >= w) return fill;
        if (!LLVMIsAConstantInt(b) && w > 32) {
            LLVMValueRef mm[2] = {b, LLVMConstInt(ty, w, 0)};
            b = ll_intr(l, "llvm.umin", &ty, 1, mm, 2);
        }
        LLVMValueRef sh = i->op == OP_SHL ? LLVMBuildShl(l->b, a, b, "") : s ? LLVMBuildAShr(l->b, a, b, "") : LLVMBuildLShr(l->b, a, b, "");
        if (LLVMIsAConstantInt(b)) return sh;
        LLVMValueRef big = LLVMBuildICmp(l->b, LLVMIntUGE, b, LLVMConstInt(ty, w, 0), "");
        return LLVMBuildSelect(l->b, big, fill, sh, "");
    }
    case OP_MIN:
    case OP_MAX: {
        if (f) {
            LLVMValueRef ab[2] = {a, b};
            return ll_intr(l, i->op == OP_MIN ? "llvm.minimum" : "llvm.maximum", &ty, 1, ab, 2);
        }
        LLVMIntPredicate p = i->op == OP_MIN ? (s ? LLVMIntSLT : LLVMIntULT) : (s ? LLVMIntSGT : LLVMIntUGT);
        return LLVMBuildSelect(l->b, LLVMBuildICmp(l->b, p, a, b, ""), a, b, "");
    }
    default: return NULL;
    }
}

static LLVMValueRef emit_cmp(LL *l, CmpPred p, DType dt, LLVMValueRef a, LLVMValueRef b) {
    if (is_f(dt)) {
        static const LLVMRealPredicate fp[] = {LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT, LLVMRealOLE, LLVMRealOGT, LLVMRealOGE};
        return LLVMBuildFCmp(l->b, fp[p], a, b, "");
    }
    bool s = dtype_is_signed(dt);
    static const LLVMIntPredicate sp[] = {LLVMIntEQ, LLVMIntNE, LLVMIntSLT, LLVMIntSLE, LLVMIntSGT, LLVMIntSGE};
    static const LLVMIntPredicate up[] = {LLVMIntEQ, LLVMIntNE, LLVMIntULT, LLVMIntULE, LLVMIntUGT, LLVMIntUGE};
    return LLVMBuildICmp(l->b, s ? sp[p] : up[p], a, b, "");
}

static LLVMValueRef sreg_axis(LL *l, const char *base, int64_t axis) {
    char name[64];
    snprintf(name, sizeof name, "%s.%c", base, "xyz"[axis < 0 || axis > 2 ? 0 : axis]);
    return ll_intr(l, name, NULL, 0, NULL, 0);
}

/* Shape ops: result register r takes the operand register with the matching static coordinate. */
static bool emit_lookup(LL *l, Inst *i) {
    const Type *rt = tir_vtype(l->f, i->res[0]), *ot = tir_vtype(l->f, i->ops[0]);
    const LayoutRegs *rr = ll_regs_of(l, rt);
    const LayoutRegs *orr = ot->rank ? ll_regs_of(l, ot) : NULL;
    LLVMValueRef *src = ll_get(l, i->ops[0], NULL);
    LLVMValueRef *res = ll_new(l, i->res[0], rr->n);
    for (int r = 0; r < rr->n; r++) {
        int32_t key[TIR_MAX_RANK] = {0};
        switch (i->op) {
        case OP_BROADCAST:
            for (int d = 0; d < rt->rank; d++) key[d] = ot->shape[d] == 1 ? 0 : rr->stat[r][d];
            break;
        case OP_EXPAND_DIMS:
            for (int d = 0, k = 0; d < rt->rank; d++)
                if (d != i->a.ival) key[k++] = rr->stat[r][d];
            break;
        case OP_TRANS:
            for (int d = 0; d < rt->rank; d++) key[i->a.perm[d]] = rr->stat[r][d];
            break;
        default: unreachable("not a lookup op");
        }
        int s = orr ? layout_regs_find(orr, key) : 0;
        if (s < 0) {
            ll_error(l, i->loc, "internal error: %s register mapping failed", tir_op_info[i->op].name);
            return false;
        }
        res[r] = src[s];
    }
    return true;
}

/* An element's bits as an integer, and back. */
static LLVMValueRef asm_bits(LL *l, LLVMValueRef v, DType dt) {
    if (dt == DT_PTR) return LLVMBuildPtrToInt(l->b, v, LLVMInt64TypeInContext(l->ctx), "");
    return LLVMBuildBitCast(l->b, v, LLVMIntTypeInContext(l->ctx, (unsigned)dtype_bits(dt)), "");
}

/* inline_asm: msg = constraints "\n" asm, attrs pack (ival) and out (ival2, this result's first output
 * register).  The asm runs once per `pack` of the thread's elements (the last group padded with copies of
 * its first element);
 * registers hold elements as tir_asm_regs packs them, the lowest element in the lowest bits. */
static bool emit_inline_asm(LL *l, Inst *i) {
    Func *f = l->f;
    const char *nl = strchr(i->a.msg, '\n');
    char *cons = strndup(i->a.msg, (size_t)(nl - i->a.msg)), why[160];
    if (!cons) out_of_memory();
    AsmRegs regs;
    if (tir_asm_regs(cons, &regs, why, sizeof why)) {
        free(cons);
        ll_error(l, i->loc, "internal error: inline_asm constraints: %s", why);
        return false;
    }
    int pack = i->a.ival ? (int)i->a.ival : 1, n = nregs(l, i->res[0]);
    const Type *rt = tir_vtype(f, i->res[0]);
    LLVMTypeRef outs[TIR_ASM_MAX_REGS], ret;
    for (int q = 0; q < regs.nout; q++) outs[q] = ll_type(l, regs.out[q]);
    ret = regs.nout == 1 ? outs[0] : LLVMStructTypeInContext(l->ctx, outs, (unsigned)regs.nout, 0);
    LLVMValueRef *ops[16];
    for (int k = 0; k < i->nops; k++) ops[k] = ll_get(l, i->ops[k], NULL);
    LLVMValueRef *res = ll_new(l, i->res[0], n);
    int rb = dtype_bits(rt->dt), re = tir_asm_per_reg(rb, pack);
    for (int g = 0; g < n; g += pack) {
        LLVMValueRef args[TIR_ASM_MAX_REGS];
        int na = 0;
        for (int k = 0; k < i->nops; k++) {
            DType dt = tir_vtype(f, i->ops[k])->dt;
            int b = dt == DT_PTR ? 64 : dtype_bits(dt), e = tir_asm_per_reg(b, pack);
            LLVMTypeRef wide = LLVMIntTypeInContext(l->ctx, (unsigned)(e * b));
            for (int q = 0; q < pack; q += e, na++) {
                LLVMValueRef w = NULL;
                for (int t = 0; t < e; t++) {
                    int r = g + q + t;
                    /* a padding lane repeats the group's first element: an asm that reads memory through it
                     * reads what a real lane does (undef was 0: a null pointer) */
                    LLVMValueRef x = asm_bits(l, ops[k][r < n ? r : g], dt);
                    if (e == 1) {
                        w = x;
                        break;
                    }
                    x = LLVMBuildZExt(l->b, x, wide, "");
                    if (t) x = LLVMBuildShl(l->b, x, LLVMConstInt(wide, (unsigned long long)(t * b), 0), "");
                    w = t ? LLVMBuildOr(l->b, w, x, "") : x;
                }
                args[na] = LLVMBuildBitCast(l->b, w, ll_type(l, regs.in[na]), "");
            }
        }
        /* one result of several: the same pure asm for each, for LLVM to merge */
        bool alone = regs.nout == (pack + re - 1) / re;
        LLVMValueRef call = ll_asm(l, ret, nl + 1, cons, args, na, alone);
        if (!alone && !strstr(cons, "~{memory}")) /* memory(none): identical calls merge */
            LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(l->ctx, LLVMGetEnumAttributeKindForName("memory", 6), 0));
        for (int q = 0; q < pack; q += re) {
            int o = (int)i->a.ival2 + q / re;
            LLVMValueRef w = regs.nout == 1 ? call : LLVMBuildExtractValue(l->b, call, (unsigned)o, "");
            w = LLVMBuildBitCast(l->b, w, LLVMIntTypeInContext(l->ctx, (unsigned)(re * rb)), "");
            for (int t = 0; t < re && g + q + t < n; t++) {
                LLVMValueRef x = t ? LLVMBuildLShr(l->b, w, LLVMConstInt(LLVMTypeOf(w), (unsigned long long)(t * rb), 0), "") : w;
                x = re > 1 ? LLVMBuildTrunc(l->b, x, LLVMIntTypeInContext(l->ctx, (unsigned)rb), "") : x;
                res[g + q + t] = LLVMBuildBitCast(l->b, x, ll_type(l, rt->dt), "");
            }
        }
    }
    free(cons);
    return true;
}

/* ---- offsets that are multiples of a run-time stride, as vectors ----
 * `a + rm[:, None] * sam + kk[None, :] * sak` with sam and sak unknown until launch: a thread's rows are
 * multiples of sam apart, never a constant apart, so each register's address is its own multiply and
 * getelementptr off the same base.  NVPTX's straight-line strength reduction groups such addresses by two
 * of (base, index, stride) and, finding no constant delta, compares every one with every other of its
 * group, each comparison a poison check (ScalarEvolution::canReuseInstruction): quadratic in the registers,
 * most of an unspecialized GEMM's code generation.  So these ops are built as one operation on vectors of
 * their distinct operand tuples, each register an extractelement of it: the pass takes integer and scalar
 * pointer operations only, and instruction selection splits the vectors into the same per-element
 * multiplies and adds (each lane the same arithmetic: an i32 product wraps as it did).  A value is strided when an integer multiply takes a run-time scalar (one value in
 * every register, not a constant) and an operand that differs between registers, or when an add, sub,
 * multiply, integer cast or ptr_add takes strided operands and operands with one value in every register
 * only; shape ops keep their operand's.  That includes a strided pointer plus one offset in every register
 * (the k loop's `(a + rm[:, None] * sam) + kk * sak`, a thread's rows at one column): as scalars, 16
 * getelementptrs of one index off 16 row pointers no two a constant apart, which the pass compared pairwise
 * (3,360 of the 5,437 comparisons left on gemm.tile sm_80).  An op that also takes offsets a constant apart (a row pointer
 * plus unit-stride columns, `rm * scm + rn`) stays scalar, and so does what is built on it: between such
 * registers the pass finds its constant delta at once, and SeparateConstOffsetFromGEP folds the constants
 * into the addressing ([%rd + 16]), which a vector lane would hide.  Ops of fewer than 16 distinct tuples
 * stay scalar too: the pass's pairs are few there, and the lanes are opaque to loop strength reduction and
 * to ptxas's register budgeting.  With four tuples and up, ptxas fitted attention's causal sm_80
 * configurations (four K rows a thread) into fewer registers with a 4-byte spill; with eight, the pipelined
 * loop of gemm f16 128x256x64 on sm_80 (eight B rows a thread, unit-stride columns) took 23 more integer
 * instructions.  Sixteen and more are the unspecialized kernels' element-by-element tiles (gemm.tile's
 * 128x32 A tile: 16 rows a thread), where the pass's pairs are many.  The lanes go in vectors of 4: instruction
 * selection splits a 16-lane vector in halves down to scalars, and on 4 lanes the widened, scaled products
 * come out as one mul.wide.s32 each (not a cvt and a shl): gemm.tile's unspecialized kernels 10-18 registers
 * and 20 main-loop instructions fewer, and less of its time (docs/benchmarks.md). */
enum { STRIDED_MIN_LANES = 16, STRIDED_CHUNK = 4 };

static bool all_same(const LLVMValueRef *v, int n) {
    for (int r = 1; r < n; r++)
        if (v[r] != v[0]) return false;
    return true;
}

static bool int_like(DType dt) { return !dtype_is_float(dt) && dt != DT_PTR && dt != DT_I1 && dtype_bits(dt) >= 8; }

/* each operand strided, or one value in every register */
static bool strided_or_uniform(LL *l, const Inst *i, LLVMValueRef **ops, int n) {
    for (int k = 0; k < i->nops; k++)
        if (!l->strided[i->ops[k]] && !all_same(ops[k], n)) return false;
    return true;
}

static bool strided_result(LL *l, const Inst *i, LLVMValueRef **ops, int n) {
    if (n < 2) return false;
    DType rdt = tir_vtype(l->f, i->res[0])->dt;
    switch (i->op) {
    case OP_CAST: return l->strided[i->ops[0]] && int_like(tir_vtype(l->f, i->ops[0])->dt) && int_like(rdt);
    case OP_PTR_ADD: return strided_or_uniform(l, i, ops, n) && int_like(tir_vtype(l->f, i->ops[1])->dt) && (l->strided[i->ops[0]] || !all_same(ops[1], n));
    case OP_ADD:
    case OP_SUB: return int_like(rdt) && strided_or_uniform(l, i, ops, n) && (l->strided[i->ops[0]] || l->strided[i->ops[1]]);
    case OP_MUL:
        if (!int_like(rdt)) return false;
        if (strided_or_uniform(l, i, ops, n) && (l->strided[i->ops[0]] || l->strided[i->ops[1]])) return true;
        for (int k = 0; k < 2; k++)
            if (all_same(ops[k], n) && !LLVMIsAConstant(ops[k][0]) && !all_same(ops[1 - k], n)) return true;
        return false;
    default: return false;
    }
}

/* lane k of vector x, for every k < nl: the lanes of an earlier strided op, in its order */
static LLVMValueRef lanes_source(LLVMValueRef *v, int nl) {
    LLVMValueRef x = LLVMIsAExtractElementInst(v[0]) ? LLVMGetOperand(v[0], 0) : NULL;
    if (!x || LLVMGetVectorSize(LLVMTypeOf(x)) != (unsigned)nl) return NULL;
    for (int k = 0; k < nl; k++) {
        LLVMValueRef at = LLVMIsAExtractElementInst(v[k]) ? LLVMGetOperand(v[k], 1) : NULL;
        if (!at || LLVMGetOperand(v[k], 0) != x || !LLVMIsAConstantInt(at) || LLVMConstIntGetZExtValue(at) != (unsigned long long)k)
            return NULL;
    }
    return x;
}

/* the lanes' values as one vector: an earlier strided op's vector itself when they are its lanes in order, one
 * value a splat (insert and shuffle, LLVM's own form; no chains of inserts and extracts for InstCombine to fold) */
static LLVMValueRef lanes_vector(LL *l, LLVMValueRef *v, int nl) {
    LLVMValueRef same = lanes_source(v, nl);
    if (same) return same;
    LLVMValueRef vec = LLVMGetPoison(LLVMVectorType(LLVMTypeOf(v[0]), (unsigned)nl));
    if (all_same(v, nl)) {
        vec = LLVMBuildInsertElement(l->b, vec, v[0], ll_i32(l, 0), "");
        return LLVMBuildShuffleVector(l->b, vec, LLVMGetPoison(LLVMTypeOf(vec)), LLVMConstNull(LLVMVectorType(l->t_i32, (unsigned)nl)), "");
    }
    for (int k = 0; k < nl; k++) vec = LLVMBuildInsertElement(l->b, vec, v[k], ll_i32(l, k), "");
    return vec;
}

/* A strided op (above): its distinct operand tuples as lanes, one vector operation per STRIDED_CHUNK lanes, a
 * register each lane; false, building nothing, for fewer than STRIDED_MIN_LANES tuples. */
static bool emit_strided(LL *l, const Inst *i, LLVMValueRef **ops, int n, LLVMValueRef *res) {
    const Type *rt = tir_vtype(l->f, i->res[0]);
    int nops = i->nops, nl = 0;
    int *lane = malloc(sizeof *lane * (size_t)n);
    LLVMValueRef *a = malloc(sizeof *a * 2 * (size_t)n), *b = a + n;
    if (!lane || !a) out_of_memory();
    for (int r = 0; r < n; r++) {
        int k = 0;
        while (k < nl && !(a[k] == ops[0][r] && (nops < 2 || b[k] == ops[1][r]))) k++;
        if (k == nl) {
            a[nl] = ops[0][r];
            if (nops > 1) b[nl] = ops[1][r];
            nl++;
        }
        lane[r] = k;
    }
    if (nl < STRIDED_MIN_LANES) { /* a few: the scalar ops, whose pairs the pass compares at little cost */
        free(lane), free(a);
        return false;
    }
    LLVMValueRef base = i->op == OP_PTR_ADD && all_same(a, nl) ? a[0] : NULL; /* one pointer: stays scalar */
    LLVMValueRef *ex = a; /* the operands are read, a chunk at a time: their room takes the lanes */
    for (int c0 = 0; c0 < nl; c0 += STRIDED_CHUNK) {
        unsigned w = (unsigned)(nl - c0 < STRIDED_CHUNK ? nl - c0 : STRIDED_CHUNK);
        LLVMValueRef v, va = base ? base : lanes_vector(l, a + c0, (int)w), vb = nops > 1 ? lanes_vector(l, b + c0, (int)w) : NULL;
        switch (i->op) {
        case OP_PTR_ADD: {
            DType offt = tir_vtype(l->f, i->ops[1])->dt;
            if (dtype_bits(offt) < 64) vb = LLVMBuildIntCast2(l->b, vb, LLVMVectorType(l->t_i64, w), dtype_is_signed(offt), "");
            v = LLVMBuildGEP2(l->b, ll_type(l, rt->pointee->dt), va, &vb, 1, "");
            break;
        }
        case OP_CAST:
            v = LLVMBuildIntCast2(l->b, va, LLVMVectorType(ll_type(l, rt->dt), w), dtype_is_signed(tir_vtype(l->f, i->ops[0])->dt), "");
            break;
        case OP_ADD: v = LLVMBuildAdd(l->b, va, vb, ""); break;
        case OP_SUB: v = LLVMBuildSub(l->b, va, vb, ""); break;
        default: v = LLVMBuildMul(l->b, va, vb, ""); break;
        }
        for (unsigned k = 0; k < w; k++) ex[c0 + (int)k] = LLVMBuildExtractElement(l->b, v, ll_i32(l, (int)k), "");
    }
    for (int r = 0; r < n; r++) res[r] = ex[lane[r]];
    free(lane), free(a);
    return true;
}

bool ll_emit_elementwise(LL *l, Inst *i) {
    Func *f = l->f;
    if (!i->nres) {
        ll_error(l, i->loc, "internal error: cannot lower '%s'", tir_op_info[i->op].name);
        return false;
    }
    const Type *rt = tir_vtype(f, i->res[0]);
    int n = nregs(l, i->res[0]);
    switch (i->op) {
    case OP_CONST: {
        LLVMValueRef c = ll_const_of(l, rt->dt, &i->a);
        LLVMValueRef *res = ll_new(l, i->res[0], n);
        for (int r = 0; r < n; r++) res[r] = c;
        return true;
    }
    case OP_ARANGE: {
        LLVMValueRef *res = ll_new(l, i->res[0], n);
        for (int r = 0; r < n; r++) {
            LLVMValueRef c = ll_coord(l, rt, r, 0);
            res[r] = i->a.ival ? LLVMBuildAdd(l->b, c, ll_i32(l, i->a.ival), "") : c;
        }
        return true;
    }
    case OP_PROGRAM_ID:
        ll_new(l, i->res[0], 1)[0] = sreg_axis(l, "llvm.nvvm.read.ptx.sreg.ctaid", i->a.ival);
        return true;
    case OP_NUM_PROGRAMS:
        ll_new(l, i->res[0], 1)[0] = sreg_axis(l, "llvm.nvvm.read.ptx.sreg.nctaid", i->a.ival);
        return true;
    case OP_SPLAT: {
        LLVMValueRef s = ll_get(l, i->ops[0], NULL)[0];
        LLVMValueRef *res = ll_new(l, i->res[0], n);
        for (int r = 0; r < n; r++) res[r] = s;
        return true;
    }
    case OP_BROADCAST:
    case OP_EXPAND_DIMS:
    case OP_TRANS: l->strided[i->res[0]] = l->strided[i->ops[0]]; return emit_lookup(l, i);
    case OP_MULTIPLE_OF:
    case OP_MAX_CONTIGUOUS:
    case OP_MAX_CONSTANCY: { /* hints: the axis analysis has used them; the value is the operand's */
        l->strided[i->res[0]] = l->strided[i->ops[0]];
        LLVMValueRef *x = ll_get(l, i->ops[0], NULL), *res = ll_new(l, i->res[0], n);
        for (int r = 0; r < n; r++) res[r] = x[r];
        return true;
    }
    default: break;
    }
    if (i->op == OP_INLINE_ASM) return emit_inline_asm(l, i);
    if (!(tir_op_info[i->op].flags & OPF_ELEMENTWISE)) {
        ll_error(l, i->loc, "internal error: no lowering for '%s'", tir_op_info[i->op].name);
        return false;
    }
    LLVMValueRef *ops[3] = {0};
    for (int k = 0; k < i->nops && k < 3; k++) ops[k] = ll_get(l, i->ops[k], NULL);
    DType odt = tir_vtype(f, i->ops[0])->dt;
    /* the pair conversions read f32: an f64 source goes the single-rounding way (ll_cast), not through f32 */
    if (i->op == OP_CAST && dtype_is_storage(odt) != dtype_is_storage(rt->dt) && n >= 2 &&
        (hw_f8(l) ? odt != DT_F64 : dtype_is_storage(odt))) {
        cast_f8_pairs(l, ops[0], n, odt, rt->dt, ll_new(l, i->res[0], n));
        return true;
    }
    LLVMValueRef *res = ll_new(l, i->res[0], n);
    if (strided_result(l, i, ops, n)) {
        l->strided[i->res[0]] = true;
        if (emit_strided(l, i, ops, n, res)) return true;
    }
    RegMemo memo = memo_begin(n, (tir_op_info[i->op].flags & OPF_PURE) != 0);
    for (int r = 0; r < n; r++) {
        LLVMValueRef a = ops[0][r], b = ops[1] ? ops[1][r] : NULL, v = NULL;
        LLVMValueRef *same = memo_find(&memo, a, b, ops[2] ? ops[2][r] : NULL);
        if (same && *same) { /* an element with the same operands (a broadcast's copies): the same value */
            res[r] = *same;
            continue;
        }
        switch (i->op) {
        case OP_NEG: v = is_f(odt) ? LLVMBuildFNeg(l->b, a, "") : LLVMBuildNeg(l->b, a, ""); break;
        case OP_NOT: v = LLVMBuildNot(l->b, a, ""); break;
        case OP_CMP: v = emit_cmp(l, (CmpPred)i->a.ival2, odt, a, b); break;
        case OP_SELECT: v = LLVMBuildSelect(l->b, a, b, ops[2][r], ""); break;
        case OP_CAST:
            v = ll_cast(l, a, odt, rt->dt);
            if (!v) {
                ll_error(l, i->loc, "conversion from %s to %s is not supported yet", dtype_name(odt), dtype_name(rt->dt));
                memo_end(&memo);
                return false;
            }
            break;
        case OP_BITCAST: /* pointers: the address as an integer and back */
            if (odt == DT_PTR && rt->dt == DT_PTR) v = a;
            else if (odt == DT_PTR) v = LLVMBuildPtrToInt(l->b, a, ll_type(l, rt->dt), "");
            else if (rt->dt == DT_PTR) v = LLVMBuildIntToPtr(l->b, a, ll_type(l, DT_PTR), "");
            else v = LLVMBuildBitCast(l->b, a, ll_type(l, rt->dt), "");
            break;
        case OP_UMULHI: { /* the high half of the 2N-bit unsigned product */
            LLVMTypeRef ty = ll_type(l, odt), wide = LLVMIntTypeInContext(l->ctx, 2 * (unsigned)dtype_bits(odt));
            LLVMValueRef p = LLVMBuildMul(l->b, LLVMBuildZExt(l->b, a, wide, ""), LLVMBuildZExt(l->b, b, wide, ""), "");
            v = LLVMBuildTrunc(l->b, LLVMBuildLShr(l->b, p, LLVMConstInt(wide, (unsigned)dtype_bits(odt), 0), ""), ty, "");
            break;
        }
        case OP_POPC:
        case OP_CLZ: {
            LLVMTypeRef ty = ll_type(l, odt);
            LLVMValueRef args[2] = {a, LLVMConstInt(l->t_i1, 0, 0)};
            v = i->op == OP_POPC ? ll_intr(l, "llvm.ctpop", &ty, 1, args, 1) : ll_intr(l, "llvm.ctlz", &ty, 1, args, 2);
            v = dtype_bits(odt) == 32 ? v : LLVMBuildTrunc(l->b, v, l->t_i32, "");
            break;
        }
        case OP_PTR_ADD: {
            LLVMValueRef off = b;
            DType offt = tir_vtype(f, i->ops[1])->dt;
            if (dtype_bits(offt) < 64) off = ll_cast(l, off, offt, dtype_is_signed(offt) ? DT_I64 : DT_U64);
            v = LLVMBuildGEP2(l->b, ll_type(l, rt->pointee->dt), a, &off, 1, "");
            break;
        }
        case OP_ABS:
            if (!is_f(odt)) {
                LLVMValueRef args[2] = {a, LLVMConstInt(l->t_i1, 0, 0)};
                LLVMTypeRef ty = ll_type(l, odt);
                v = dtype_is_signed(odt) ? ll_intr(l, "llvm.abs", &ty, 1, args, 2) : a;
                break;
            }
            /* fallthrough */
        case OP_EXP: case OP_EXP2: case OP_LOG: case OP_LOG2: case OP_SQRT: case OP_RSQRT: case OP_SIN:
        case OP_COS: case OP_TANH: case OP_SIGMOID: case OP_ERF: case OP_FLOOR: case OP_CEIL: case OP_FMA:
        case OP_ROUND: case OP_RINT: case OP_TRUNC: case OP_ASIN: case OP_ACOS: case OP_ATAN: case OP_ATAN2:
        case OP_SINH: case OP_COSH: case OP_LOG1P: case OP_EXPM1: case OP_FMOD: case OP_COPYSIGN: case OP_ASINH:
        case OP_ACOSH: case OP_ATANH: case OP_POW: case OP_ERFC: case OP_CBRT: case OP_HYPOT:
        case OP_TAN: case OP_LOG10: case OP_EXP10: case OP_ERFINV: case OP_LGAMMA: case OP_TGAMMA: {
            if (!is_f(odt)) {
                ll_error(l, i->loc, "'%s' needs a floating-point operand, got %s", tir_op_info[i->op].name, dtype_name(odt));
                memo_end(&memo);
                return false;
            }
            LLVMValueRef x[3] = {a, b, ops[2] ? ops[2][r] : NULL};
            v = emit_math(l, i, odt, x, n);
            if (!v) {
                memo_end(&memo);
                return false;
            }
            break;
        }
        case OP_REM:
            if (is_f(odt)) { /* exact, as fmod: LLVM's frem on NVPTX is x - trunc(x / y) y with a rounded quotient */
                LLVMValueRef x[3] = {a, b, NULL};
                if (!(v = emit_math_op(l, i, OP_FMOD, odt, x, n))) {
                    memo_end(&memo);
                    return false;
                }
                break;
            }
            v = emit_binary(l, i, odt, a, b);
            break;
        default: v = emit_binary(l, i, odt, a, b); break;
        }
        if (!v) {
            ll_error(l, i->loc, "internal error: no lowering for '%s' on %s", tir_op_info[i->op].name, dtype_name(odt));
            memo_end(&memo);
            return false;
        }
        res[r] = v;
        if (same) *same = v;
    }
    memo_end(&memo);
    return true;
}
