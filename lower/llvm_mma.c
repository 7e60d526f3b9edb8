/* llvm_mma.c - `dot` on tensor cores: mma.sync on operands already in their
 * fragment layouts (DOT_A / DOT_B, see tir.h and layout.c).
 *
 * For every output tile (im, in) of 16x8 and every K step kk, the thread's
 * A registers (im, kk) are packed into four 32-bit registers, its B
 * registers (in, kk) into two, and one mma.sync updates the four
 * accumulator registers of the tile in place:
 *   f16/bf16 -> f32: mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}...
 *   tf32     -> f32: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
 *   s8       -> s32: mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32
 * Register numbering follows layout.c: A (im*nk + kk)*4*vpr + j,
 * B (in*nk + kk)*2*vpr + j, C ((im*rn + in)*2 + h)*2 + e. */
#include "llvm_ctx.h"

#include <stdio.h>
#include <stdlib.h>

static int at_least_1(int v) { return v < 1 ? 1 : v; }

/* Pack `vpr` elements into one i32. */
static LLVMValueRef pack32(LL *l, LLVMValueRef *e, int vpr, DType dt) {
    if (vpr == 1) return LLVMBuildBitCast(l->b, e[0], l->t_i32, "");
    LLVMTypeRef et = ll_type(l, dt);
    LLVMValueRef v = LLVMGetUndef(LLVMVectorType(et, (unsigned)vpr));
    for (int k = 0; k < vpr; k++) v = LLVMBuildInsertElement(l->b, v, e[k], ll_i32(l, k), "");
    return LLVMBuildBitCast(l->b, v, l->t_i32, "");
}

bool ll_emit_dot_mma(LL *l, Inst *i) {
    Func *f = l->f;
    const Type *at = tir_vtype(f, i->ops[0]), *bt = tir_vtype(f, i->ops[1]), *rt = tir_vtype(f, i->res[0]);
    const Layout *la = at->layout, *mma = rt->layout;
    if (!la || la->kind != LAYOUT_DOT_A || !bt->layout || bt->layout->kind != LAYOUT_DOT_B || mma->kind != LAYOUT_MMA) {
        ll_error(l, i->loc, "internal error: dot on tensor cores without fragment layouts");
        return false;
    }
    int kw = la->kw, vpr = la->vpr, wm = mma->wpc[0], wn = mma->wpc[1];
    int M = rt->shape[0], N = rt->shape[1], K = at->shape[1];
    int rm = at_least_1(M / (16 * wm)), rn = at_least_1(N / (8 * wn)), nk = at_least_1(K / kw);
    const char *text;
    bool integer = at->dt == DT_I8;
    if (at->dt == DT_F16)
        text = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, {$10,$11,$12,$13};";
    else if (at->dt == DT_BF16)
        text = "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, {$10,$11,$12,$13};";
    else if (at->dt == DT_F32)
        text = "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, {$10,$11,$12,$13};";
    else
        text = "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, {$10,$11,$12,$13};";
    const char *cons = integer ? "=r,=r,=r,=r,r,r,r,r,r,r,0,1,2,3" : "=f,=f,=f,=f,r,r,r,r,r,r,0,1,2,3";
    LLVMTypeRef ct = integer ? l->t_i32 : l->t_f32;
    LLVMTypeRef fields[4] = {ct, ct, ct, ct};
    LLVMTypeRef ret = LLVMStructTypeInContext(l->ctx, fields, 4, 0);

    int na, nb, nc;
    LLVMValueRef *A = ll_get(l, i->ops[0], &na), *B = ll_get(l, i->ops[1], &nb), *C = ll_get(l, i->ops[2], &nc);
    if (na != rm * nk * 4 * vpr || nb != rn * nk * 2 * vpr || nc != rm * rn * 4) {
        ll_error(l, i->loc, "internal error: mma fragment register counts %d/%d/%d do not match the tile", na, nb, nc);
        return false;
    }
    LLVMValueRef *res = ll_new(l, i->res[0], nc);
    for (int r = 0; r < nc; r++) res[r] = C[r];
    /* pack every A and B fragment once */
    LLVMValueRef *pa = calloc((size_t)(rm * nk * 4), sizeof *pa), *pb = calloc((size_t)(rn * nk * 2), sizeof *pb);
    if (!pa || !pb) unreachable("out of memory");
    for (int g = 0; g < rm * nk * 4; g++) pa[g] = pack32(l, &A[g * vpr], vpr, at->dt);
    for (int g = 0; g < rn * nk * 2; g++) pb[g] = pack32(l, &B[g * vpr], vpr, bt->dt);
    for (int kk = 0; kk < nk; kk++)
        for (int im = 0; im < rm; im++)
            for (int in = 0; in < rn; in++) {
                LLVMValueRef args[10];
                for (int k = 0; k < 4; k++) args[k] = pa[(im * nk + kk) * 4 + k];
                for (int k = 0; k < 2; k++) args[4 + k] = pb[(in * nk + kk) * 2 + k];
                LLVMValueRef *acc = &res[(im * rn + in) * 4];
                for (int k = 0; k < 4; k++) args[6 + k] = acc[k];
                LLVMValueRef call = ll_asm(l, ret, text, cons, args, 10, false);
                for (int k = 0; k < 4; k++) acc[k] = LLVMBuildExtractValue(l->b, call, (unsigned)k, "");
            }
    free(pa);
    free(pb);
    return true;
}
