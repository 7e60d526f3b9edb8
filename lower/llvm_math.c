/* llvm_math.c - f32 math built from exact IEEE operations and short polynomials
 * (no libdevice): asin acos atan atan2 sinh cosh log1p expm1 fmod.
 *
 * The hardware approximations that llvm_elementwise.c uses for exp/log lose
 * accuracy where these functions need it (exp(x) for large |x|, log near 1),
 * so these build their own kernels:
 *   1. exp_scaled(a, k) = e^a * 2^-k: n = rint(a*log2(e)), r = a - n*ln2 in
 *      two fma steps (ln2 split hi/lo), e^r by its Taylor series to r^8 on
 *      |r| <= ln2/2 (truncation below 2^-31), times 2^(n-1-k) applied after
 *      doubling so that e^88.7 does not overflow on the way, as two exact
 *      powers of two built from their bits.  No ex2.approx: its error (2 ulp,
 *      the PTX ISA's bound) on both factors, amplified where expm1 and sinh
 *      cancel, made these functions 11 ulp off under the emulator's bound mode;
 *      now their accuracy is the same on every GPU and on the emulator.
 *   2. log_core(u) for u > 0 finite: u = m * 2^k with m in [sqrt(1/2), sqrt(2)),
 *      log(m) = 2 atanh(s), s = (m-1)/(m+1), |s| <= 0.1716, odd series to s^13;
 *      plus k*ln2 (hi/lo).
 *   3. atan on [0, 1]: t > 2-sqrt(3) maps to pi/6 + atan((t*sqrt(3)-1)/(sqrt(3)+t)),
 *      then the Taylor series to t^13 on |t| <= 0.268.
 *   4. fmod: exact, by steps in f64 (fmod_f32).
 * Small arguments use Taylor series (sinh, expm1) or the log1p correction
 * term (x - (u-1))/u.  Measured accuracy against libm: docs/language.md and
 * tests/test_math.c. */
#include "llvm_math.h"

#include <math.h>

static const double LN2_HI = 0.693145751953125, LN2_LO = 1.4286068203094172321e-06, LOG2E = 1.4426950408889634;

/* 2^i for an i32 i in [-126, 127], exactly: its bits */
static LLVMValueRef pow2_bits(M *m, LLVMValueRef i) {
    LL *l = m->l;
    LLVMValueRef e = LLVMBuildAdd(m->b, i, LLVMConstInt(l->t_i32, 127, 0), "");
    return LLVMBuildBitCast(m->b, LLVMBuildShl(m->b, e, LLVMConstInt(l->t_i32, 23, 0), ""), m->f, "");
}

/* v * 2^j for an integer-valued j, rounded once: j clamped to [-252, 254] (where 2^j times v in [1, 4) is
 * already 0 or inf; a NaN j becomes -252, and v carries the NaN), split into halves that are normal powers */
static LLVMValueRef scale_pow2(M *m, LLVMValueRef v, LLVMValueRef j) {
    LL *l = m->l;
    j = bin(m, "llvm.minnum", bin(m, "llvm.maxnum", j, c(m, -252.0)), c(m, 254.0));
    LLVMValueRef ji = LLVMBuildFPToSI(m->b, j, l->t_i32, "");
    LLVMValueRef j1 = LLVMBuildAShr(m->b, ji, LLVMConstInt(l->t_i32, 1, 0), "");
    LLVMValueRef j2 = LLVMBuildSub(m->b, ji, j1, "");
    return mul(m, mul(m, v, pow2_bits(m, j1)), pow2_bits(m, j2));
}

/* e^a * 2^-k (step 1 of the header) */
static LLVMValueRef exp_scaled(M *m, LLVMValueRef a, int k) {
    static const double t[] = {1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040, 1.0 / 40320};
    LLVMValueRef n = un(m, "llvm.rint", mul(m, a, c(m, LOG2E)));
    LLVMValueRef r = mfma(m, LLVMBuildFNeg(m->b, n, ""), c(m, LN2_HI), a);
    r = mfma(m, LLVMBuildFNeg(m->b, n, ""), c(m, LN2_LO), r);
    LLVMValueRef q = mfma(m, mul(m, r, r), poly(m, r, t, 7), r); /* e^r - 1 */
    LLVMValueRef er2 = mfma(m, q, c(m, 2.0), c(m, 2.0));         /* 2 e^r, one rounding */
    return scale_pow2(m, er2, sub(m, n, c(m, 1.0 + k)));
}

/* log(u) for finite u > 0 (step 2) */
static LLVMValueRef log_core(M *m, LLVMValueRef u) {
    LL *l = m->l;
    /* subnormal u: scale by 2^25 first */
    LLVMValueRef tiny = fcmp(m, LLVMRealOLT, u, c(m, 0x1p-126));
    LLVMValueRef us = sel(m, tiny, mul(m, u, c(m, 0x1p25)), u);
    LLVMValueRef bits = LLVMBuildBitCast(m->b, us, l->t_i32, "");
    LLVMValueRef ix = LLVMBuildAdd(m->b, bits, ll_i32(l, 0x3f800000 - 0x3f3504f3), "");
    LLVMValueRef k = LLVMBuildSub(m->b, LLVMBuildAShr(m->b, ix, ll_i32(l, 23), ""), ll_i32(l, 127), "");
    k = LLVMBuildSub(m->b, k, LLVMBuildSelect(m->b, tiny, ll_i32(l, 25), ll_i32(l, 0), ""), "");
    LLVMValueRef mb = LLVMBuildAdd(m->b, LLVMBuildAnd(m->b, ix, ll_i32(l, 0x007fffff), ""), ll_i32(l, 0x3f3504f3), "");
    LLVMValueRef mm = LLVMBuildBitCast(m->b, mb, m->f, "");
    LLVMValueRef f = sub(m, mm, c(m, 1.0));
    LLVMValueRef s = mdiv(m, f, add(m, c(m, 2.0), f));
    LLVMValueRef z = mul(m, s, s);
    static const double k2[] = {2.0 / 3, 2.0 / 5, 2.0 / 7, 2.0 / 9, 2.0 / 11, 2.0 / 13};
    LLVMValueRef tail = mul(m, mul(m, s, z), poly(m, z, k2, 6)); /* 2(s^3/3 + s^5/5 + ...) */
    /* 2s = f - f*s: keeps f exact and the rounding in the small term */
    LLVMValueRef lm = add(m, sub(m, f, mul(m, f, s)), tail);
    LLVMValueRef kf = LLVMBuildSIToFP(m->b, k, m->f, "");
    return mfma(m, kf, c(m, LN2_HI), mfma(m, kf, c(m, LN2_LO), lm));
}

/* atan(t) for t in [0, 1] (step 3) */
static LLVMValueRef atan01(M *m, LLVMValueRef t) {
    const double s3 = 1.7320508075688772;
    LLVMValueRef big = fcmp(m, LLVMRealOGT, t, c(m, 0.2679491924311227));
    LLVMValueRef tr = mdiv(m, mfma(m, t, c(m, s3), c(m, -1.0)), add(m, c(m, s3), t));
    LLVMValueRef u = sel(m, big, tr, t);
    LLVMValueRef z = mul(m, u, u);
    static const double k[] = {-1.0 / 3, 1.0 / 5, -1.0 / 7, 1.0 / 9, -1.0 / 11, 1.0 / 13};
    LLVMValueRef p = mfma(m, mul(m, u, z), poly(m, z, k, 6), u);
    return sel(m, big, add(m, c(m, M_PI / 6), p), p);
}

static LLVMValueRef atan2_f32(M *m, LLVMValueRef y, LLVMValueRef x) {
    LLVMValueRef ax = un(m, "llvm.fabs", x), ay = un(m, "llvm.fabs", y);
    LLVMValueRef ygt = fcmp(m, LLVMRealOGT, ay, ax);
    LLVMValueRef mx = sel(m, ygt, ay, ax), mn = sel(m, ygt, ax, ay);
    LLVMValueRef t = mdiv(m, mn, mx);
    t = sel(m, fcmp(m, LLVMRealOEQ, mx, c(m, 0.0)), c(m, 0.0), t);                /* atan2(±0, ±0) */
    t = sel(m, fcmp(m, LLVMRealOEQ, mn, c(m, INFINITY)), c(m, 1.0), t);           /* both infinite */
    LLVMValueRef r = atan01(m, t);
    r = sel(m, ygt, sub(m, c(m, M_PI / 2), r), r);
    LLVMValueRef xneg = LLVMBuildICmp(m->b, LLVMIntSLT, LLVMBuildBitCast(m->b, x, m->l->t_i32, ""), ll_i32(m->l, 0), "");
    r = sel(m, xneg, sub(m, c(m, M_PI), r), r);
    r = copysign2(m, r, y);
    LLVMValueRef nan = fcmp(m, LLVMRealUNO, x, y);
    return sel(m, nan, add(m, x, y), r);
}

/* fmod, exact for all finite x and y != 0 (step 4): in f64, six steps r = r mod (|y| * 2^k)
 * with k = max(0, exponent(r) - exponent(y) - 50).  Each step's quotient is below 2^51, so
 * q = trunc(r / y') is right or off by one (fixed after), and r - q*y' in one fma is exact
 * (a multiple of y's f32 ulp below 2|y'|).  Six steps cover the largest ratio, 2^277. */
static LLVMValueRef fmod_f32(M *m, LLVMValueRef x, LLVMValueRef y) {
    LL *l = m->l;
    LLVMBuilderRef B = m->b;
    LLVMTypeRef d = l->t_f64, i64 = l->t_i64;
    LLVMValueRef r = LLVMBuildFPExt(B, un(m, "llvm.fabs", x), d, "");
    LLVMValueRef ay = LLVMBuildFPExt(B, un(m, "llvm.fabs", y), d, "");
    LLVMValueRef c52 = LLVMConstInt(i64, 52, 0), m11 = LLVMConstInt(i64, 0x7ff, 0);
    LLVMValueRef ey = LLVMBuildAnd(B, LLVMBuildLShr(B, LLVMBuildBitCast(B, ay, i64, ""), c52, ""), m11, "");
    for (int step = 0; step < 6; step++) {
        LLVMValueRef er = LLVMBuildAnd(B, LLVMBuildLShr(B, LLVMBuildBitCast(B, r, i64, ""), c52, ""), m11, "");
        LLVMValueRef k = LLVMBuildSub(B, LLVMBuildSub(B, er, ey, ""), LLVMConstInt(i64, 50, 0), "");
        k = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSGT, k, LLVMConstInt(i64, 0, 0), ""), k, LLVMConstInt(i64, 0, 0), "");
        LLVMValueRef p2 = LLVMBuildBitCast(B, LLVMBuildShl(B, LLVMBuildAdd(B, k, LLVMConstInt(i64, 1023, 0), ""), c52, ""), d, "");
        LLVMValueRef yk = LLVMBuildFMul(B, ay, p2, "");
        LLVMValueRef q = ll_intr(l, "llvm.trunc", &d, 1, (LLVMValueRef[]){LLVMBuildFDiv(B, r, yk, "")}, 1);
        LLVMValueRef args[3] = {LLVMBuildFNeg(B, q, ""), yk, r};
        r = ll_intr(l, "llvm.fma", &d, 1, args, 3);
        r = LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOLT, r, LLVMConstReal(d, 0), ""), LLVMBuildFAdd(B, r, yk, ""), r, "");
        r = LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOGE, r, yk, ""), LLVMBuildFSub(B, r, yk, ""), r, "");
    }
    LLVMValueRef res = copysign2(m, LLVMBuildFPTrunc(B, r, m->f, ""), x); /* a zero result has x's sign, as C */
    /* y infinite and x finite: x; x infinite, y zero or a NaN: NaN (from the steps) */
    LLVMValueRef yinf = fcmp(m, LLVMRealOEQ, un(m, "llvm.fabs", y), c(m, INFINITY));
    LLVMValueRef xfin = fcmp(m, LLVMRealOLT, un(m, "llvm.fabs", x), c(m, INFINITY));
    res = sel(m, LLVMBuildAnd(B, yinf, xfin, ""), x, res);
    LLVMValueRef bad = LLVMBuildOr(B, fcmp(m, LLVMRealUNO, x, y), LLVMBuildOr(B, fcmp(m, LLVMRealOEQ, y, c(m, 0.0)),
                                                                             LLVMBuildNot(B, xfin, ""), ""), "");
    return sel(m, bad, c(m, NAN), res);
}

LLVMValueRef ll_math_ext_f32(LL *l, Op op, LLVMValueRef x, LLVMValueRef y) {
    M mm = {l, l->b, l->t_f32}, *m = &mm;
    switch (op) {
    case OP_ATAN: {
        LLVMValueRef a = un(m, "llvm.fabs", x);
        LLVMValueRef inv = fcmp(m, LLVMRealOGT, a, c(m, 1.0));
        LLVMValueRef r = atan01(m, sel(m, inv, mdiv(m, c(m, 1.0), a), a));
        r = sel(m, inv, sub(m, c(m, M_PI / 2), r), r);
        return copysign2(m, r, x); /* NaN stays NaN through the compares and the series */
    }
    case OP_ATAN2: return atan2_f32(m, x, y);
    case OP_ASIN:
    case OP_ACOS: {
        /* 1 - x is exact where it matters (|x| >= 1/2); |x| > 1 gives sqrt of a negative: NaN */
        LLVMValueRef w = un(m, "llvm.sqrt", mul(m, sub(m, c(m, 1.0), x), add(m, c(m, 1.0), x)));
        return op == OP_ASIN ? atan2_f32(m, x, w) : atan2_f32(m, w, x);
    }
    case OP_SINH:
    case OP_COSH: {
        LLVMValueRef a = un(m, "llvm.fabs", x);
        LLVMValueRef h = exp_scaled(m, a, 1); /* e^a / 2 */
        LLVMValueRef q = mdiv(m, c(m, 0.25), h);
        LLVMValueRef huge = fcmp(m, LLVMRealOGT, a, c(m, 89.5)); /* overflows (also keeps inf from making NaN) */
        if (op == OP_COSH) return sel(m, huge, c(m, INFINITY), add(m, h, q));
        LLVMValueRef big = copysign2(m, sel(m, huge, c(m, INFINITY), sub(m, h, q)), x);
        LLVMValueRef z = mul(m, x, x);
        static const double k[] = {1.0 / 6, 1.0 / 120, 1.0 / 5040, 1.0 / 362880, 1.0 / 39916800};
        LLVMValueRef small = mfma(m, mul(m, x, z), poly(m, z, k, 5), x);
        return sel(m, fcmp(m, LLVMRealOLT, a, c(m, 0.5)), small, big);
    }
    case OP_EXPM1: {
        static const double k[] = {1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040, 1.0 / 40320, 1.0 / 362880,
                                   1.0 / 3628800};
        LLVMValueRef small = mfma(m, mul(m, x, x), poly(m, x, k, 9), x);
        LLVMValueRef args[2] = {x, c(m, -100.0)};
        LLVMValueRef xl = ll_intr(l, "llvm.maxnum", &m->f, 1, args, 2);
        LLVMValueRef big = sub(m, exp_scaled(m, xl, 0), c(m, 1.0));
        big = sel(m, fcmp(m, LLVMRealOGT, x, c(m, 88.72283935546875)), c(m, INFINITY), big);
        LLVMValueRef r = sel(m, fcmp(m, LLVMRealOLT, un(m, "llvm.fabs", x), c(m, 0.5)), small, big);
        r = sel(m, fcmp(m, LLVMRealOEQ, x, c(m, 0.0)), x, r); /* -0 stays -0 */
        return sel(m, fcmp(m, LLVMRealUNO, x, x), x, r);
    }
    case OP_LOG1P: {
        LLVMValueRef u = add(m, c(m, 1.0), x);
        LLVMValueRef lg = log_core(m, u);
        /* the rounding of 1 + x, put back to first order: (x - (u - 1)) / u */
        LLVMValueRef corr = mdiv(m, sub(m, x, sub(m, u, c(m, 1.0))), u);
        LLVMValueRef r = add(m, lg, corr);
        r = sel(m, fcmp(m, LLVMRealOEQ, u, c(m, INFINITY)), u, r);
        r = sel(m, fcmp(m, LLVMRealOEQ, u, c(m, 0.0)), c(m, -INFINITY), r);
        r = sel(m, fcmp(m, LLVMRealULT, u, c(m, 0.0)), c(m, NAN), r);
        r = sel(m, fcmp(m, LLVMRealOEQ, x, c(m, 0.0)), x, r); /* -0 stays -0 */
        return sel(m, fcmp(m, LLVMRealUNO, x, x), x, r);
    }
    case OP_TANH: {
        /* tanh(x, exact=true): below |x| = 0.55 its Taylor series, x + x z P(z) with z = x^2 (P: the series'
         * next 11 coefficients, 2^2n (2^2n - 1) B_2n / (2n)!; each term is under 0.13 of the one before);
         * above, t = expm1(2|x|) and tanh = t / (t + 2), where t's error shrinks by 2 / (t + 2); 1 past 9.02
         * (where tanh rounds to 1; also keeps inf / inf from making NaN); the sign put back (-0 stays -0, a NaN
         * stays NaN).  The default tanh is tanh.approx.f32 (2^-11 relative). */
        static const double k[] = {-0.3333333333333333,   0.13333333333333333,   -0.05396825396825397, 0.021869488536155203,
                                   -0.008863235529902197, 0.003592128036572481,  -0.0014558343870513183, 0.000590027440945586,
                                   -0.00023912911424355248, 9.691537956929451e-05, -3.927832388331683e-05};
        LLVMValueRef a = un(m, "llvm.fabs", x);
        LLVMValueRef z = mul(m, x, x);
        /* x's sign kept: at x = -0 the fma is -0 * P + -0 with a positive product, +0 */
        LLVMValueRef small = copysign2(m, mfma(m, mul(m, x, z), poly(m, z, k, 11), x), x);
        LLVMValueRef t = ll_math_ext_f32(l, OP_EXPM1, add(m, a, a), NULL);
        LLVMValueRef r = copysign2(m, mdiv(m, t, add(m, t, c(m, 2.0))), x);
        r = sel(m, fcmp(m, LLVMRealOGT, a, c(m, 9.02)), copysign2(m, c(m, 1.0), x), r);
        return sel(m, fcmp(m, LLVMRealOLT, a, c(m, 0.55)), small, r);
    }
    case OP_FMOD: return fmod_f32(m, x, y);
    default: return NULL;
    }
}
