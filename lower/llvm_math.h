/* llvm_math.h - the small builders the math lowering files share (llvm_math.c for f32,
 * llvm_math64.c for f64): one float type per M, IEEE operations (no fast-math flags,
 * so error-free transformations stay exact), Horner polynomials, selects. */
#ifndef TILE_LLVM_MATH_H
#define TILE_LLVM_MATH_H

#include "llvm_ctx.h"

typedef struct M {
    LL *l;
    LLVMBuilderRef b;
    LLVMTypeRef f;
} M;

static inline LLVMValueRef c(M *m, double v) { return LLVMConstReal(m->f, v); }
static inline LLVMValueRef add(M *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFAdd(m->b, a, b, ""); }
static inline LLVMValueRef sub(M *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFSub(m->b, a, b, ""); }
static inline LLVMValueRef mul(M *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFMul(m->b, a, b, ""); }
static inline LLVMValueRef mdiv(M *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFDiv(m->b, a, b, ""); }
static inline LLVMValueRef neg(M *m, LLVMValueRef a) { return LLVMBuildFNeg(m->b, a, ""); }
static inline LLVMValueRef mfma(M *m, LLVMValueRef a, LLVMValueRef b, LLVMValueRef d) {
    LLVMValueRef args[3] = {a, b, d};
    return ll_intr(m->l, "llvm.fma", &m->f, 1, args, 3);
}
static inline LLVMValueRef un(M *m, const char *intr, LLVMValueRef x) { return ll_intr(m->l, intr, &m->f, 1, &x, 1); }
static inline LLVMValueRef bin(M *m, const char *intr, LLVMValueRef x, LLVMValueRef y) {
    LLVMValueRef args[2] = {x, y};
    return ll_intr(m->l, intr, &m->f, 1, args, 2);
}
static inline LLVMValueRef sel(M *m, LLVMValueRef p, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildSelect(m->b, p, a, b, ""); }
static inline LLVMValueRef fcmp(M *m, LLVMRealPredicate p, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFCmp(m->b, p, a, b, ""); }
static inline LLVMValueRef copysign2(M *m, LLVMValueRef mag, LLVMValueRef sign) { return bin(m, "llvm.copysign", mag, sign); }
static inline LLVMValueRef isnan_(M *m, LLVMValueRef x) { return fcmp(m, LLVMRealUNO, x, x); }

/* p(x) = k[0] + k[1] x + ... + k[n-1] x^(n-1), Horner with fma */
static inline LLVMValueRef poly(M *m, LLVMValueRef x, const double *k, int n) {
    LLVMValueRef p = c(m, k[n - 1]);
    for (int i = n - 2; i >= 0; i--) p = mfma(m, p, x, c(m, k[i]));
    return p;
}

#endif
