/* llvm_helpers.c - what every LLVM lowering file builds on (lower/llvm_*.c):
 * element types, intrinsic and inline-assembly calls, the registers of a
 * value, thread terms and element coordinates of a layout, the scratch
 * pointer, barriers, located errors.
 *
 * It sits below both the dispatcher (llvm_codegen.c: module, kernels,
 * control flow) and the op-family emitters (llvm_elementwise.c,
 * llvm_memory.c, llvm_shared.c, llvm_mma.c) that the dispatcher calls, so
 * neither reaches back into the other. */
#include "llvm_ctx.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void ll_error(LL *l, Loc loc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    diag_vadd(l->d, DIAG_ERROR, loc, fmt, ap);
    va_end(ap);
    l->failed = true;
}

LLVMTypeRef ll_type(LL *l, DType dt) {
    switch (dt) {
    case DT_I1: return l->t_i1;
    case DT_I8: case DT_U8: case DT_F8E4M3: case DT_F8E5M2: return l->t_i8;
    case DT_I16: case DT_U16: return l->t_i16;
    case DT_I32: case DT_U32: return l->t_i32;
    case DT_I64: case DT_U64: return l->t_i64;
    case DT_F16: return l->t_f16;
    case DT_BF16: return l->t_bf16;
    case DT_F32: return l->t_f32;
    case DT_F64: return l->t_f64;
    case DT_PTR: return l->t_gptr;
    case DT_VOID: return l->t_void;
    case DT_COUNT: break;
    }
    unreachable("ll_type: not a dtype");
}

/* Positioning before an instruction takes that instruction's debug location: keep ours. */
LLInsertPoint ll_enter_entry(LL *l) {
    LLInsertPoint ip = {LLVMGetInsertBlock(l->b), LLVMGetCurrentDebugLocation2(l->b)};
    LLVMPositionBuilderBefore(l->b, LLVMGetBasicBlockTerminator(l->entry));
    return ip;
}

void ll_leave_entry(LL *l, LLInsertPoint ip) {
    LLVMPositionBuilderAtEnd(l->b, ip.block);
    LLVMSetCurrentDebugLocation2(l->b, ip.dbg);
}

LLVMValueRef ll_i32(LL *l, int64_t v) { return LLVMConstInt(l->t_i32, (unsigned long long)v, 1); }

LLVMValueRef ll_as_i32(LL *l, LLVMValueRef v) {
    unsigned w = LLVMGetIntTypeWidth(LLVMTypeOf(v));
    return w == 32 ? v : w > 32 ? LLVMBuildTrunc(l->b, v, l->t_i32, "") : LLVMBuildSExt(l->b, v, l->t_i32, "");
}

LLVMValueRef ll_intr(LL *l, const char *name, LLVMTypeRef *ovl, int novl, LLVMValueRef *args, int nargs) {
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    if (!id) unreachable(name);
    if (!LLVMIntrinsicIsOverloaded(id)) novl = 0;
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(l->mod, id, ovl, (size_t)novl);
    LLVMTypeRef fty = LLVMIntrinsicGetType(l->ctx, id, ovl, (size_t)novl);
    return LLVMBuildCall2(l->b, fty, fn, args, (unsigned)nargs, "");
}

LLVMValueRef ll_asm(LL *l, LLVMTypeRef ret, const char *text, const char *constraints, LLVMValueRef *args, int nargs,
                    bool side_effects) {
    LLVMTypeRef small[16], *pt = nargs <= 16 ? small : malloc(sizeof *pt * (size_t)nargs);
    if (!pt) out_of_memory();
    for (int k = 0; k < nargs; k++) pt[k] = LLVMTypeOf(args[k]);
    LLVMTypeRef fty = LLVMFunctionType(ret, pt, (unsigned)nargs, 0);
    LLVMValueRef a = LLVMGetInlineAsm(fty, text, strlen(text), constraints, strlen(constraints), side_effects, 0,
                                      LLVMInlineAsmDialectATT, 0);
    LLVMValueRef call = LLVMBuildCall2(l->b, fty, a, args, (unsigned)nargs, "");
    if (pt != small) free(pt);
    /* every snippet returns and never unwinds: saying so spares LLVM's passes from scanning
     * whole blocks around each call (hundreds of them in a GEMM) */
    static const char *const attrs[] = {"nounwind", "willreturn"};
    for (size_t k = 0; k < ARRAY_LEN(attrs); k++)
        LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex,
                                 LLVMCreateEnumAttribute(l->ctx, LLVMGetEnumAttributeKindForName(attrs[k], strlen(attrs[k])), 0));
    return call;
}

const LayoutRegs *ll_regs_of(LL *l, const Type *t) {
    for (int i = 0; i < l->nrc; i++)
        if (l->rc[i].type == t) return &l->rc[i].regs;
    if (l->nrc == l->caprc) {
        l->caprc = l->caprc ? l->caprc * 2 : 32;
        l->rc = realloc(l->rc, sizeof(RegsCache) * (size_t)l->caprc);
        if (!l->rc) out_of_memory();
    }
    l->rc[l->nrc].type = t;
    l->rc[l->nrc].regs = layout_regs(t);
    return &l->rc[l->nrc++].regs;
}

static LLVMValueRef thread_term(LL *l, const Layout *lay, int dim);

LLVMValueRef ll_thread_term(LL *l, const Layout *lay, int dim) {
    for (int i = 0; i < l->nterms; i++)
        if (l->terms[i].lay == lay && l->terms[i].dim == dim) return l->terms[i].v;
    LLInsertPoint ip = ll_enter_entry(l);
    LLVMValueRef v = thread_term(l, lay, dim);
    ll_leave_entry(l, ip);
    if (l->nterms == l->capterms) {
        l->capterms = l->capterms ? 2 * l->capterms : 16;
        l->terms = realloc(l->terms, sizeof *l->terms * (size_t)l->capterms);
        if (!l->terms) out_of_memory();
    }
    l->terms[l->nterms].lay = lay;
    l->terms[l->nterms].dim = dim;
    l->terms[l->nterms++].v = v;
    return v;
}

static LLVMValueRef thread_term(LL *l, const Layout *lay, int dim) {
    ThreadTerm t = layout_thread_term(lay, dim);
    LLVMValueRef lane = l->lane, warp = l->warp;
    LLVMValueRef r = ll_i32(l, 0);
    if (t.lane_count > 1) {
        LLVMValueRef v = LLVMBuildLShr(l->b, lane, ll_i32(l, __builtin_ctz((unsigned)t.lane_stride)), "");
        v = LLVMBuildAnd(l->b, v, ll_i32(l, t.lane_count - 1), "");
        r = LLVMBuildMul(l->b, v, ll_i32(l, t.lane_mul), "");
    }
    if (t.warp_count > 1) {
        LLVMValueRef v = LLVMBuildLShr(l->b, warp, ll_i32(l, __builtin_ctz((unsigned)t.warp_stride)), "");
        v = LLVMBuildAnd(l->b, v, ll_i32(l, t.warp_count - 1), "");
        r = LLVMBuildAdd(l->b, r, LLVMBuildMul(l->b, v, ll_i32(l, t.warp_mul), ""), "");
    }
    return r;
}

LLVMValueRef ll_coord(LL *l, const Type *t, int reg, int dim) {
    const LayoutRegs *lr = ll_regs_of(l, t);
    LLVMValueRef tt = ll_thread_term(l, t->layout, dim); /* no `0 + tt` for LLVM to fold away */
    LLVMValueRef c = lr->stat[reg][dim] ? LLVMBuildAdd(l->b, ll_i32(l, lr->stat[reg][dim]), tt, "") : tt;
    if (layout_coverage(t->layout, dim) > t->shape[dim]) c = LLVMBuildAnd(l->b, c, ll_i32(l, t->shape[dim] - 1), "");
    return c;
}

LLVMValueRef ll_owner(LL *l, const Type *t, int reg) {
    LLVMValueRef p = LLVMConstInt(l->t_i1, 1, 0);
    if (!t->rank) return LLVMBuildICmp(l->b, LLVMIntEQ, l->tid, ll_i32(l, 0), "");
    const LayoutRegs *lr = ll_regs_of(l, t);
    for (int d = 0; d < t->rank; d++)
        if (lr->raw[reg][d] >= t->shape[d]) return LLVMConstInt(l->t_i1, 0, 0);
    /* threads whose offset wraps past the shape hold replicas */
    for (int d = 0; d < t->rank; d++) {
        if (layout_coverage(t->layout, d) <= t->shape[d]) continue;
        LLVMValueRef raw = LLVMBuildAdd(l->b, ll_i32(l, lr->raw[reg][d]), ll_thread_term(l, t->layout, d), "");
        p = LLVMBuildAnd(l->b, p, LLVMBuildICmp(l->b, LLVMIntULT, raw, ll_i32(l, t->shape[d]), ""), "");
    }
    /* a slice is replicated across the threads of its removed dims */
    const Layout *lay = t->layout;
    while (lay->kind == LAYOUT_SLICE) {
        const Layout *par = lay->parent;
        /* thread term of the parent's sliced dim must be zero */
        LLVMValueRef tt = ll_thread_term(l, par, lay->dim);
        p = LLVMBuildAnd(l->b, p, LLVMBuildICmp(l->b, LLVMIntEQ, tt, ll_i32(l, 0), ""), "");
        lay = par;
    }
    return p;
}

/* ---- a tensor's element addresses: a few computed, the rest constant offsets from them ----
 * A register's element has coordinates T_d + stat[r][d] (ll_coord: the layout's thread term and the
 * register's static part, wrapped where the layout covers more than the shape), and the caller's address
 * function maps them to a byte offset in shared memory.  Where two registers' offsets differ by the same
 * number of bytes in every thread (a thread's rows of a row-major tile, rows a whole swizzle period apart),
 * the second address is the first's plus a constant.  LLAddrs checks this on the host, over every
 * combination of thread-term values the layout takes, and the caller emits such an address as one
 * `getelementptr i8` off its basis instead of its own coordinates and index arithmetic: per element LLVM
 * then has one constant to fold, where it had a chain of multiplies, shifts, ors and xors that InstCombine
 * reworked and NVPTX's straight-line strength reduction compared with every other address of the tensor
 * (docs/benchmarks.md). */
static int thread_term_host(const ThreadTerm *tt, int lane, int warp) {
    int v = 0;
    if (tt->lane_count > 1) v += (lane / tt->lane_stride & (tt->lane_count - 1)) * tt->lane_mul;
    if (tt->warp_count > 1) v += (warp / tt->warp_stride & (tt->warp_count - 1)) * tt->warp_mul;
    return v;
}

void ll_addrs_init(LLAddrs *A, const Type *ty, const LayoutRegs *lr, LLHostOffset host, const void *ctx) {
    memset(A, 0, sizeof *A);
    A->ty = ty, A->lr = lr, A->host = host, A->ctx = ctx;
    ThreadTerm tt[TIR_MAX_RANK];
    int warps = 1; /* the warp values the terms tell apart: each term repeats past its stride * count */
    for (int d = 0; d < ty->rank; d++) {
        tt[d] = layout_thread_term(ty->layout, d);
        if (tt[d].warp_count > 1 && tt[d].warp_stride * tt[d].warp_count > warps) warps = tt[d].warp_stride * tt[d].warp_count;
    }
    A->nth = 32 * warps;
    A->cur = calloc((size_t)A->nth, sizeof *A->cur);
    if (!A->cur) out_of_memory();
    for (int d = 0; d < ty->rank; d++) {
        A->term[d] = malloc(sizeof *A->term[d] * (size_t)A->nth);
        if (!A->term[d]) out_of_memory();
        for (int k = 0; k < A->nth; k++) A->term[d][k] = thread_term_host(&tt[d], k % 32, k / 32);
    }
}

void ll_addrs_init_threads(LLAddrs *A, int nth) {
    memset(A, 0, sizeof *A);
    A->nth = nth;
    A->cur = calloc((size_t)nth, sizeof *A->cur);
    if (!A->cur) out_of_memory();
}

void ll_addrs_free(LLAddrs *A) {
    for (int d = 0; A->ty && d < A->ty->rank; d++) free(A->term[d]);
    for (int b = 0; b < A->nb; b++) free(A->off[b]);
    free(A->cur);
}

LLVMValueRef ll_addrs_find(LL *l, LLAddrs *A, int r) {
    A->cur_ok = true;
    int64_t c[TIR_MAX_RANK];
    for (int k = 0; k < A->nth && A->cur_ok; k++) {
        for (int d = 0; d < A->ty->rank; d++) {
            c[d] = (int64_t)A->lr->stat[r][d] + A->term[d][k];
            if (layout_coverage(A->ty->layout, d) > A->ty->shape[d]) c[d] &= A->ty->shape[d] - 1;
        }
        A->cur_ok = A->host(A->ctx, c, &A->cur[k]);
    }
    return A->cur_ok ? ll_addrs_match(l, A) : NULL;
}

LLVMValueRef ll_addrs_match(LL *l, LLAddrs *A) {
    A->cur_ok = true;
    for (int b = 0; A->cur_ok && b < A->nb; b++) {
        int64_t delta = A->cur[0] - A->off[b][0];
        int k = 1;
        while (k < A->nth && A->cur[k] - A->off[b][k] == delta) k++;
        if (k < A->nth || delta < INT32_MIN || delta > INT32_MAX) continue;
        if (!delta) return A->ptr[b];
        LLVMValueRef idx = ll_i32(l, delta);
        return LLVMBuildGEP2(l->b, l->t_i8, A->ptr[b], &idx, 1, "");
    }
    return NULL;
}

void ll_addrs_add(LLAddrs *A, LLVMValueRef ptr) {
    if (!A->cur_ok || A->nb == LL_ADDR_BASES) return;
    A->off[A->nb] = A->cur;
    A->ptr[A->nb++] = ptr;
    A->cur = calloc((size_t)A->nth, sizeof *A->cur);
    if (!A->cur) out_of_memory();
}

LLVMValueRef *ll_get(LL *l, ValueId v, int *n) {
    if (!l->vals[v]) unreachable("value used before it was lowered");
    if (n) *n = l->nvals[v];
    return l->vals[v];
}

LLVMValueRef *ll_new(LL *l, ValueId v, int n) {
    l->vals[v] = calloc((size_t)(n ? n : 1), sizeof(LLVMValueRef));
    if (!l->vals[v]) out_of_memory();
    l->nvals[v] = n;
    return l->vals[v];
}

void ll_barrier(LL *l) {
    if (l->barrier_count) {
        /* the producer warpgroup of a warp-specialized kernel never reaches these */
        LLVMValueRef args[2] = {ll_i32(l, 1), ll_i32(l, l->barrier_count)};
        ll_intr(l, "llvm.nvvm.barrier.cta.sync.aligned.count", NULL, 0, args, 2);
        return;
    }
    LLVMValueRef zero = ll_i32(l, 0);
    ll_intr(l, "llvm.nvvm.barrier.cta.sync.aligned.all", NULL, 0, &zero, 1);
}

LLVMValueRef ll_smem_ptr(LL *l, int off, LLVMValueRef dyn) {
    LLVMValueRef idx = ll_i32(l, off);
    if (dyn) idx = LLVMBuildAdd(l->b, idx, dyn, "");
    return LLVMBuildGEP2(l->b, l->t_i8, l->smem, &idx, 1, "");
}

/* ---- control flow ---- */
