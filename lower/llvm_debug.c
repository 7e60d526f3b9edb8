/* llvm_debug.c - device_print (vprintf), device_assert (__assertfail) and assume (llvm.assume).
 *
 * Both are calls the CUDA runtime resolves (and the emulator provides,
 * emu/exec_call.c):
 *   1. print: for each register of the first tensor operand (or once, for
 *      scalars only) that this thread owns (replicas stay silent), a branch to
 *      one `vprintf(fmt, buf)`: fmt is "pid (%d, %d, %d) idx (%d, ...) MSG v...\n"
 *      with a conversion per value, buf a local struct of the C-promoted
 *      values (floats as double, small integers as int, pointers as %p).
 *   2. assert: for each register, a branch on the negated condition to
 *      `__assertfail(msg, file, line, "kernel", 1)`, which stops the launch
 *      reporting MSG, the .tile file and line; the emulator adds the program
 *      and thread, a GPU prints them. */
#include "llvm_ctx.h"

#include <stdio.h>
#include <string.h>

static LLVMValueRef cstring(LL *l, const char *s) { return LLVMBuildGlobalStringPtr(l->b, s, ".str"); }

static LLVMValueRef callee(LL *l, const char *name, LLVMTypeRef ret, LLVMTypeRef *params, int n, LLVMTypeRef *fty) {
    *fty = LLVMFunctionType(ret, params, (unsigned)n, 0);
    LLVMValueRef f = LLVMGetNamedFunction(l->mod, name);
    return f ? f : LLVMAddFunction(l->mod, name, *fty);
}

/* Runs body(l, r, ctx) under `if (pred)`; pred NULL: unconditionally. */
static void guarded(LL *l, LLVMValueRef pred, void (*body)(LL *, int, void *), int r, void *ctx) {
    if (!pred || (LLVMIsAConstantInt(pred) && LLVMConstIntGetZExtValue(pred))) {
        body(l, r, ctx);
        return;
    }
    if (LLVMIsAConstantInt(pred)) return; /* never */
    LLVMBasicBlockRef then = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "dbg");
    LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "dbg.join");
    LLVMBuildCondBr(l->b, pred, then, join);
    LLVMPositionBuilderAtEnd(l->b, then);
    body(l, r, ctx);
    LLVMBuildBr(l->b, join);
    LLVMPositionBuilderAtEnd(l->b, join);
}

typedef struct PrintCtx {
    Inst *i;
    const Type *shape; /* the first tensor operand's type, NULL: scalars only */
    LLVMValueRef fmt, buf;
    LLVMTypeRef buft;
} PrintCtx;

/* the C-promoted value of operand k at register r, and its conversion */
static LLVMValueRef promoted(LL *l, Inst *i, int k, int r, const char **conv) {
    const Type *t = tir_vtype(l->f, i->ops[k]);
    LLVMValueRef v = ll_get(l, i->ops[k], NULL)[t->rank ? r : 0];
    DType dt = t->dt;
    if (dt == DT_PTR) {
        *conv = "%p";
        return LLVMBuildPtrToInt(l->b, v, l->t_i64, "");
    }
    if (dtype_is_storage(dt)) v = ll_cast(l, v, dt, DT_F32), dt = DT_F32;
    if (dtype_is_float(dt)) {
        *conv = "%g";
        return dt == DT_F64 ? v : LLVMBuildFPExt(l->b, v, l->t_f64, "");
    }
    if (dtype_bits(dt) == 64) {
        *conv = dtype_is_signed(dt) ? "%lld" : "%llu";
        return v;
    }
    *conv = dtype_is_signed(dt) || dt == DT_I1 ? "%d" : "%u";
    /* hex=1 prints the bits: zero-extended (an i8 -1 is 0xff) */
    return dtype_is_signed(dt) && !i->a.ival ? LLVMBuildSExt(l->b, v, l->t_i32, "") : LLVMBuildZExt(l->b, v, l->t_i32, "");
}

static void print_one(LL *l, int r, void *vctx) {
    PrintCtx *pc = vctx;
    Inst *i = pc->i;
    int nf = 0;
    for (int k = 0; k < i->nops; k++) {
        const char *conv;
        LLVMValueRef v = promoted(l, i, k, r, &conv);
        LLVMValueRef idx[2] = {ll_i32(l, 0), ll_i32(l, 3 + (pc->shape ? pc->shape->rank : 0) + nf++)};
        LLVMBuildStore(l->b, v, LLVMBuildInBoundsGEP2(l->b, pc->buft, pc->buf, idx, 2, ""));
    }
    for (int a = 0; a < 3; a++) {
        char name[48];
        snprintf(name, sizeof name, "llvm.nvvm.read.ptx.sreg.ctaid.%c", "xyz"[a]);
        LLVMValueRef idx[2] = {ll_i32(l, 0), ll_i32(l, a)};
        LLVMBuildStore(l->b, ll_intr(l, name, NULL, 0, NULL, 0), LLVMBuildInBoundsGEP2(l->b, pc->buft, pc->buf, idx, 2, ""));
    }
    for (int d = 0; pc->shape && d < pc->shape->rank; d++) {
        LLVMValueRef idx[2] = {ll_i32(l, 0), ll_i32(l, 3 + d)};
        LLVMBuildStore(l->b, ll_coord(l, pc->shape, r, d), LLVMBuildInBoundsGEP2(l->b, pc->buft, pc->buf, idx, 2, ""));
    }
    LLVMTypeRef ps[2] = {l->t_gptr, l->t_gptr}, fty;
    ps[0] = ps[1] = LLVMPointerTypeInContext(l->ctx, 0);
    LLVMValueRef f = callee(l, "vprintf", l->t_i32, ps, 2, &fty);
    LLVMValueRef args[2] = {pc->fmt, LLVMBuildAddrSpaceCast(l->b, pc->buf, ps[1], "")};
    LLVMBuildCall2(l->b, fty, f, args, 2, "");
}

static bool emit_print(LL *l, Inst *i) {
    PrintCtx pc = {.i = i};
    for (int k = 0; k < i->nops && !pc.shape; k++)
        if (tir_vtype(l->f, i->ops[k])->rank) pc.shape = tir_vtype(l->f, i->ops[k]);
    int rank = pc.shape ? pc.shape->rank : 0;
    /* the format and the buffer's layout */
    Str fmt = {0};
    str_puts(&fmt, "pid (%d, %d, %d)");
    if (rank) {
        str_puts(&fmt, " idx (");
        for (int d = 0; d < rank; d++) str_printf(&fmt, "%s%%d", d ? ", " : "");
        str_puts(&fmt, ")");
    }
    if (i->a.msg && *i->a.msg) str_puts(&fmt, " ");
    for (const char *c = i->a.msg ? i->a.msg : ""; *c; c++) str_printf(&fmt, *c == '%' ? "%%%%" : "%c", *c);
    LLVMTypeRef fields[3 + TIR_MAX_RANK + 64];
    int nfields = 0;
    for (int k = 0; k < 3 + rank; k++) fields[nfields++] = l->t_i32;
    if (i->nops > 64) {
        ll_error(l, i->loc, "device_print takes at most 64 values");
        str_free(&fmt);
        return false;
    }
    for (int k = 0; k < i->nops; k++) {
        const Type *t = tir_vtype(l->f, i->ops[k]);
        DType dt = t->dt;
        bool wide = dt == DT_PTR || dtype_is_float(dt) || dtype_bits(dt) == 64;
        fields[nfields++] = wide ? (dtype_is_float(dt) ? l->t_f64 : l->t_i64) : l->t_i32;
        const char *conv = dt == DT_PTR ? "%p" : dtype_is_float(dt) ? "%g" : dtype_bits(dt) == 64 ? (dtype_is_signed(dt) ? "%lld" : "%llu")
                                                                                                   : dtype_is_signed(dt) || dt == DT_I1 ? "%d" : "%u";
        if (i->a.ival && dt != DT_PTR) /* hex=true, Triton's: an integer's bits in its width's digits, a float as %a */
            str_printf(&fmt, dtype_is_float(dt) ? " %%a" : dtype_bits(dt) == 64 ? " 0x%%016llx" : " 0x%%0%dx", (dtype_bits(dt) + 3) / 4);
        else str_printf(&fmt, " %s", conv);
    }
    str_puts(&fmt, "\n");
    pc.buft = LLVMStructTypeInContext(l->ctx, fields, (unsigned)nfields, 0);
    LLInsertPoint ip = ll_enter_entry(l);
    pc.buf = LLVMBuildAlloca(l->b, pc.buft, "printbuf");
    pc.fmt = cstring(l, fmt.buf);
    ll_leave_entry(l, ip);
    str_free(&fmt);
    int n = pc.shape ? ll_regs_of(l, pc.shape)->n : 1;
    /* scalars only: once per program, by its thread 0 (every thread holds them) */
    LLVMValueRef first = pc.shape ? NULL : LLVMBuildICmp(l->b, LLVMIntEQ, l->tid, ll_i32(l, 0), "");
    for (int r = 0; r < n; r++) guarded(l, pc.shape ? ll_owner(l, pc.shape, r) : first, print_one, r, &pc);
    return true;
}

typedef struct AssertCtx {
    LLVMValueRef msg, file, func;
    unsigned line;
} AssertCtx;

static void assert_one(LL *l, int r, void *vctx) {
    (void)r;
    AssertCtx *ac = vctx;
    LLVMTypeRef gp = LLVMPointerTypeInContext(l->ctx, 0), fty;
    LLVMTypeRef ps[5] = {gp, gp, l->t_i32, gp, l->t_i64};
    LLVMValueRef f = callee(l, "__assertfail", l->t_void, ps, 5, &fty);
    LLVMValueRef args[5] = {ac->msg, ac->file, ll_i32(l, ac->line), ac->func, LLVMConstInt(l->t_i64, 1, 0)};
    LLVMBuildCall2(l->b, fty, f, args, 5, "");
}

static bool emit_assert(LL *l, Inst *i) {
    const Type *t = tir_vtype(l->f, i->ops[0]);
    LLVMValueRef *cond = ll_get(l, i->ops[0], NULL);
    int n = t->rank ? ll_regs_of(l, t)->n : 1;
    LLInsertPoint ip = ll_enter_entry(l);
    AssertCtx ac = {.msg = cstring(l, i->a.msg ? i->a.msg : ""), .file = cstring(l, i->loc.file ? i->loc.file->name : "?"),
                    .func = cstring(l, l->f->name), .line = i->loc.line};
    ll_leave_entry(l, ip);
    for (int r = 0; r < n; r++) guarded(l, LLVMBuildNot(l->b, cond[r], ""), assert_one, r, &ac);
    return true;
}

/* assume(cond): llvm.assume of each register, for LLVM's own analyses (x > 0 turns x / 16 into a
 * shift); no code of its own. */
static bool emit_assume(LL *l, Inst *i) {
    const Type *t = tir_vtype(l->f, i->ops[0]);
    LLVMValueRef *cond = ll_get(l, i->ops[0], NULL);
    int n = t->rank ? ll_regs_of(l, t)->n : 1;
    for (int r = 0; r < n; r++) ll_intr(l, "llvm.assume", NULL, 0, &cond[r], 1);
    return true;
}

bool ll_emit_debug(LL *l, Inst *i) {
    return i->op == OP_PRINT ? emit_print(l, i) : i->op == OP_ASSUME ? emit_assume(l, i) : emit_assert(l, i);
}
