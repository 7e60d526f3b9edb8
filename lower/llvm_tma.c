/* llvm_tma.c - tensor-map copies and mbarriers (sm_90a), the ops the tma pass makes.
 *
 *   - The kernel's tensor maps are parameters after its arguments: `ptr byval([128 x i8])
 *     align 64 "nvvm.grid_constant"`, which NVPTX emits as `.param .align 64 .b8 x[128]`;
 *     the copies name them by their generic address (cvta.param).
 *   - mbar_init / mbar_inval / mbar_expect and tma_load are one thread's work (one lane of warp 0, and
 *     `run`): a branch around the instructions.  mbar_init ends with
 *     fence.mbarrier_init, so the tensor copies' completions see the initialized objects.
 *   - mbar_wait is every thread's: a loop around mbarrier.try_wait.parity (which itself
 *     waits a while before it fails), its predicate returned through selp.
 *   - tma_store: one thread's cp.async.bulk.tensor from the stage to the map's box and a bulk group
 *     (with a kind: cp.reduce.async.bulk.tensor.OP, the box's elements combined with the stage's);
 *     tma_store_wait: that thread's cp.async.bulk.wait_group.read 0 (the stage may be written again).
 *   - A stage of rows wider than 128 bytes is 128-byte panels (llvm_mma.c's tile_make on
 *     sm_90a): one box per panel, the panel's columns added to the innermost coordinate.
 *   The stage's layout is the hardware swizzle of the tensor map (tma.c chose it to match
 *   llvm_mma.c's swz_offset), so the readers are unchanged. */
#include "llvm_ctx.h"

#include <stdio.h>
#include <string.h>

void ll_tma_params(LL *l, LLVMTypeRef *pt, int from, int n) {
    for (int k = 0; k < n; k++) pt[from + k] = LLVMPointerTypeInContext(l->ctx, 0);
}

void ll_tma_param_attrs(LL *l, int from, int n) {
    LLVMTypeRef map = LLVMArrayType2(l->t_i8, 128);
    unsigned byval = LLVMGetEnumAttributeKindForName("byval", 5), align = LLVMGetEnumAttributeKindForName("align", 5);
    for (int k = 0; k < n; k++) {
        unsigned idx = (unsigned)(from + k) + 1;
        LLVMAddAttributeAtIndex(l->fn, idx, LLVMCreateTypeAttribute(l->ctx, byval, map));
        LLVMAddAttributeAtIndex(l->fn, idx, LLVMCreateEnumAttribute(l->ctx, align, 64));
        LLVMAddAttributeAtIndex(l->fn, idx, LLVMCreateStringAttribute(l->ctx, "nvvm.grid_constant", 18, "", 0));
        char name[32];
        snprintf(name, sizeof name, "tensor_map_%d", k);
        LLVMSetValueName2(LLVMGetParam(l->fn, idx - 1), name, strlen(name));
    }
}

/* One thread (and cond, when not NULL) runs what follows until one_end: a lane elect.sync picks
 * in warp 0, so ptxas sees warp-uniform operands (a plain tid == 0 branch makes it loop over
 * the lanes' values around each UTMALDG) */
static LLVMBasicBlockRef one_begin(LL *l, LLVMValueRef cond) {
    LLVMValueRef w0 = LLVMBuildICmp(l->b, LLVMIntEQ, l->warp, ll_i32(l, l->issue_warp), "");
    LLVMBasicBlockRef warp0 = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "warp0");
    LLVMBasicBlockRef skip = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "one.join");
    LLVMBuildCondBr(l->b, w0, warp0, skip);
    LLVMPositionBuilderAtEnd(l->b, warp0);
    LLVMValueRef e = ll_asm(l, l->t_i32, "{\n\t.reg .pred p;\n\telect.sync _|p, 0xffffffff;\n\tselp.u32 $0, 1, 0, p;\n\t}", "=r", NULL, 0,
                            true);
    LLVMValueRef me = LLVMBuildICmp(l->b, LLVMIntNE, e, ll_i32(l, 0), "");
    if (cond) me = LLVMBuildAnd(l->b, me, cond, "");
    LLVMBasicBlockRef then = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "one");
    LLVMBuildCondBr(l->b, me, then, skip);
    LLVMPositionBuilderAtEnd(l->b, then);
    return skip;
}

static void one_end(LL *l, LLVMBasicBlockRef join) {
    LLVMBuildBr(l->b, join);
    LLVMPositionBuilderAtEnd(l->b, join);
}

static LLVMValueRef i1_of(LL *l, LLVMValueRef v) {
    LLVMTypeRef t = LLVMTypeOf(v);
    return LLVMGetIntTypeWidth(t) == 1 ? v : LLVMBuildICmp(l->b, LLVMIntNE, v, LLVMConstInt(t, 0, 0), "");
}

/* The 32-bit shared address of byte `off` of the buffer value v (its scratch offset). */
static LLVMValueRef saddr(LL *l, ValueId buf, LLVMValueRef off) {
    LLVMValueRef o = LLVMBuildAdd(l->b, ll_get(l, buf, NULL)[0], off, "");
    return LLVMBuildPtrToInt(l->b, ll_smem_ptr(l, 0, o), l->t_i32, "");
}

static LLVMValueRef bar_addr(LL *l, ValueId bars, LLVMValueRef stage) {
    return saddr(l, bars, LLVMBuildMul(l->b, ll_as_i32(l, stage), ll_i32(l, 8), ""));
}

/* The operands of a tensor copy's asm after its text[0, q), which ends in "[$1, {" ($0 an i32, $1 the map): the
 * rank coordinates $2.. (i32), "}], [$K];" with K = 2 + rank the last i32 operand, then `end`; the constraints in
 * cons to match, with the memory clobber. */
static void coord_operands(char *text, size_t size, int q, int rank, const char *end, char *cons, size_t csize) {
    int cq = snprintf(cons, csize, "r,l");
    for (int d = 0; d < rank; d++) {
        q += snprintf(text + q, size - (size_t)q, "%s$%d", d ? ", " : "", 2 + d);
        cq += snprintf(cons + cq, csize - (size_t)cq, ",r");
    }
    snprintf(text + q, size - (size_t)q, "}], [$%d];%s", 2 + rank, end);
    snprintf(cons + cq, csize - (size_t)cq, ",r,~{memory}");
}

/* The copies of tma_load i; the caller has elected the issuing thread. */
static void tma_copies(LL *l, Inst *i) {
    Func *f = l->f;
    const TensorMap *tm = &f->tmaps[i->a.ival];
    const Type *bt = tir_vtype(f, i->ops[0]);
    int eb = dtype_bits(bt->dt) / 8, contig = bt->layout->order[0] - 1;
    int rows = contig == 1 ? bt->shape[1] : bt->shape[2], cols = contig == 1 ? bt->shape[2] : bt->shape[1];
    int rb = cols * eb, panels = rb > 128 ? rb / 128 : 1;
    LLVMValueRef stage_off = LLVMBuildMul(l->b, ll_as_i32(l, ll_get(l, i->ops[1], NULL)[0]), ll_i32(l, rows * rb), "");
    LLVMValueRef bar = bar_addr(l, i->ops[2], ll_get(l, i->ops[1], NULL)[0]);
    LLVMValueRef coord[TMA_MAX_RANK];
    for (int d = 0; d < tm->rank; d++) coord[d] = ll_as_i32(l, ll_get(l, i->ops[4 + d], NULL)[0]);
    LLVMValueRef map = LLVMGetParam(l->fn, (unsigned)(f->nargs + i->a.ival));
    char text[256], cons[64];
    int q = snprintf(text, sizeof text,
                     "cp.async.bulk.tensor.%dd.shared::cluster.global.tile.mbarrier::complete_tx::bytes [$0], [$1, {", tm->rank);
    coord_operands(text, sizeof text, q, tm->rank, "", cons, sizeof cons);
    for (int p = 0; p < panels; p++) {
        LLVMValueRef args[3 + TMA_MAX_RANK];
        args[0] = saddr(l, i->ops[0], LLVMBuildAdd(l->b, stage_off, ll_i32(l, p * rows * 128), ""));
        args[1] = map;
        for (int d = 0; d < tm->rank; d++) args[2 + d] = coord[d];
        if (p) args[2] = LLVMBuildAdd(l->b, coord[0], ll_i32(l, p * (128 / eb)), "");
        args[2 + tm->rank] = bar;
        ll_asm(l, l->t_void, text, cons, args, 3 + tm->rank, true);
    }
}

/* One-thread work without a branch: every thread runs the asm; p is set in the elected lane of the
 * issuing warp, whose flag (1 there, else 0) is operand $N. */
#define ONE_THREAD_PRED(N) "\t.reg .pred p, w;\n\telect.sync _|p, 0xffffffff;\n\tsetp.ne.u32 w, $" #N ", 0;\n\tand.pred p, p, w;\n"

static LLVMValueRef issue_warp_flag(LL *l) {
    return LLVMBuildZExt(l->b, LLVMBuildICmp(l->b, LLVMIntEQ, l->warp, ll_i32(l, l->issue_warp), ""), l->t_i32, "");
}

/* tma_store i: the stage to the map's box at the coordinates (or, with a kind, reduced into it), one copy
 * per 128-byte panel, then one bulk group, by the elected lane of the issuing warp.  A predicate, not a branch: a divergent
 * branch in a persistent kernel's loop over tiles costs ptxas the uniformity of the main loop's
 * descriptors. */
static void tma_store(LL *l, Inst *i) {
    Func *f = l->f;
    const TensorMap *tm = &f->tmaps[i->a.ival];
    const Type *bt = tir_vtype(f, i->ops[0]);
    int eb = dtype_bits(bt->dt) / 8, rows = bt->shape[1], rb = bt->shape[2] * eb, panels = rb > 128 ? rb / 128 : 1;
    LLVMValueRef stage_off = LLVMBuildMul(l->b, ll_as_i32(l, ll_get(l, i->ops[1], NULL)[0]), ll_i32(l, rows * rb), "");
    /* operands: $0 the flag, $1 the map, $2.. the coordinates, then the panel's shared address */
    LLVMValueRef args[3 + TMA_MAX_RANK];
    args[0] = issue_warp_flag(l);
    args[1] = LLVMGetParam(l->fn, (unsigned)(f->nargs + i->a.ival));
    for (int d = 0; d < tm->rank; d++) args[2 + d] = ll_as_i32(l, ll_get(l, i->ops[2 + d], NULL)[0]);
    LLVMValueRef coord0 = args[2];
    char text[512], cons[64];
    RedKind kind = (RedKind)(i->a.ival2 - 1); /* a reduction (verified: one the map's type has) */
    int q = i->a.ival2 ? snprintf(text, sizeof text, "{\n" ONE_THREAD_PRED(0) "\t@p cp.reduce.async.bulk.tensor.%dd.global.shared::cta.%s.tile.bulk_group [$1, {",
                                  tm->rank, kind == RED_SUM ? "add" : tir_red_names[kind])
                       : snprintf(text, sizeof text, "{\n" ONE_THREAD_PRED(0) "\t@p cp.async.bulk.tensor.%dd.global.shared::cta.tile.bulk_group [$1, {",
                                  tm->rank);
    coord_operands(text, sizeof text, q, tm->rank, "\n\t}", cons, sizeof cons);
    for (int p = 0; p < panels; p++) {
        args[2] = p ? LLVMBuildAdd(l->b, coord0, ll_i32(l, p * (128 / eb)), "") : coord0;
        args[2 + tm->rank] = saddr(l, i->ops[0], LLVMBuildAdd(l->b, stage_off, ll_i32(l, p * rows * 128), ""));
        ll_asm(l, l->t_void, text, cons, args, 3 + tm->rank, true);
    }
    ll_asm(l, l->t_void, "{\n" ONE_THREAD_PRED(0) "\t@p cp.async.bulk.commit_group;\n\t}", "r,~{memory}", args, 1, true);
}

bool ll_emit_tma(LL *l, Inst *i) {
    Func *f = l->f;
    switch (i->op) {
    case OP_MBAR_INIT:
    case OP_MBAR_INVAL: {
        int n = tir_vtype(f, i->ops[0])->shape[0];
        LLVMBasicBlockRef join = one_begin(l, NULL);
        for (int s = 0; s < n; s++) {
            LLVMValueRef a = saddr(l, i->ops[0], ll_i32(l, 8 * s));
            if (i->op == OP_MBAR_INIT) {
                char text[64];
                snprintf(text, sizeof text, "mbarrier.init.shared::cta.b64 [$0], %lld;", (long long)(i->a.ival > 1 ? i->a.ival : 1));
                ll_asm(l, l->t_void, text, "r,~{memory}", &a, 1, true);
            } else ll_asm(l, l->t_void, "mbarrier.inval.shared::cta.b64 [$0];", "r,~{memory}", &a, 1, true);
        }
        if (i->op == OP_MBAR_INIT) ll_asm(l, l->t_void, "fence.mbarrier_init.release.cluster;", "~{memory}", NULL, 0, true);
        one_end(l, join);
        return true;
    }
    case OP_MBAR_EXPECT: { /* with the tma_loads right after it on the same mbarriers and run: one elected issue */
        LLVMValueRef bar = bar_addr(l, i->ops[0], ll_get(l, i->ops[1], NULL)[0]);
        LLVMBasicBlockRef join = one_begin(l, i1_of(l, ll_get(l, i->ops[2], NULL)[0]));
        LLVMValueRef args[2] = {bar, ll_i32(l, i->a.ival)};
        ll_asm(l, LLVMInt64TypeInContext(l->ctx), "mbarrier.arrive.expect_tx.shared::cta.b64 $0, [$1], $2;", "=l,r,r,~{memory}",
               args, 2, true);
        l->ntma_issued = 0;
        for (Inst *n = i->next; n && n->op == OP_TMA_LOAD && n->ops[2] == i->ops[0] && n->ops[3] == i->ops[2] &&
                                n->ops[1] == i->ops[1] && l->ntma_issued < (int)ARRAY_LEN(l->tma_issued);
             n = n->next) {
            tma_copies(l, n);
            l->tma_issued[l->ntma_issued++] = n;
        }
        one_end(l, join);
        return true;
    }
    case OP_MBAR_ARRIVE: { /* every thread, when run */
        LLVMValueRef bar = bar_addr(l, i->ops[0], ll_get(l, i->ops[1], NULL)[0]);
        LLVMBasicBlockRef go = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "mbar.arrive");
        LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "mbar.arrived");
        LLVMBuildCondBr(l->b, i1_of(l, ll_get(l, i->ops[2], NULL)[0]), go, done);
        LLVMPositionBuilderAtEnd(l->b, go);
        ll_asm(l, l->t_void, "mbarrier.arrive.shared::cta.b64 _, [$0];", "r,~{memory}", &bar, 1, true);
        LLVMBuildBr(l->b, done);
        LLVMPositionBuilderAtEnd(l->b, done);
        return true;
    }
    case OP_MBAR_WAIT: {
        LLVMValueRef args[2] = {bar_addr(l, i->ops[0], ll_get(l, i->ops[1], NULL)[0]), ll_as_i32(l, ll_get(l, i->ops[2], NULL)[0])};
        LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "mbar.wait");
        LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "mbar.done");
        if (i->nops > 3) LLVMBuildCondBr(l->b, i1_of(l, ll_get(l, i->ops[3], NULL)[0]), loop, done);
        else LLVMBuildBr(l->b, loop);
        LLVMPositionBuilderAtEnd(l->b, loop);
        LLVMValueRef ok = ll_asm(l, l->t_i32,
                                 "{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [$1], $2;\n\tselp.u32 $0, 1, 0, p;\n\t}",
                                 "=r,r,r,~{memory}", args, 2, true);
        LLVMBuildCondBr(l->b, LLVMBuildICmp(l->b, LLVMIntNE, ok, ll_i32(l, 0), ""), done, loop);
        LLVMPositionBuilderAtEnd(l->b, done);
        return true;
    }
    case OP_TMA_STORE: tma_store(l, i); return true;
    case OP_TMA_STORE_WAIT: { /* the issuing thread (the same elected lane) */
        LLVMValueRef w = issue_warp_flag(l);
        ll_asm(l, l->t_void, "{\n" ONE_THREAD_PRED(0) "\t@p cp.async.bulk.wait_group.read 0;\n\t}", "r,~{memory}", &w, 1, true);
        return true;
    }
    case OP_TMA_LOAD: {
        for (int k = 0; k < l->ntma_issued; k++)
            if (l->tma_issued[k] == i) return true; /* issued with its mbar_expect */
        LLVMBasicBlockRef join = one_begin(l, i1_of(l, ll_get(l, i->ops[3], NULL)[0]));
        tma_copies(l, i);
        one_end(l, join);
        return true;
    }
    default: return false;
    }
}
