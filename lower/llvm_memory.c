/* llvm_memory.c - global loads, stores and atomics.
 *
 * A memory op's registers are taken `vec` at a time (set by assign_layout:
 * consecutive registers that are consecutive, aligned elements under one
 * mask value).  Each group becomes one access of vec*bits bits:
 *   - unmasked: an LLVM load/store of a vector with its alignment, so LLVM
 *     can see and optimize it;
 *   - masked: inline PTX with a predicate, `@p ld.global.v4.b32` (the
 *     destination registers are first set to `other`), or `@p st.global...`
 *     — a masked-off lane touches no memory; a load or store with cache hints
 *     (attr cache: `.cg`, `.L1::evict_last`, `.volatile`) takes this form too,
 *     under a true predicate when unmasked.
 * Atomics are inline PTX, `atom.acq_rel.gpu.global.add.u32` (LLVM's NVPTX
 * backend drops the ordering and scope of most atomicrmw), except where PTX
 * lacks the instruction: float min/max go through LLVM's atomicrmw, with its
 * ordering and sync scope, which expands to a CAS loop; bf16 add before sm_90
 * is our own 16-bit CAS loop; f16 (and bf16 on sm_90) adds on pairs of
 * consecutive elements are one packed .f16x2/.bf16x2 atom.  An atomic whose old
 * values nothing reads, at an ordering `red` has (relaxed, release), is `red`
 * instead (no result: split-K's partial sums, histograms).
 * Stores and atomics run only on the thread and register that own an element
 * (replicas in other threads or registers skip it), so atomics happen once;
 * when an atomic's old values are used and its layout replicates elements,
 * the issuing register broadcasts them through scratch (smem_atomic_broadcasts).
 * A scalar atomic is the program's one access, issued by thread 0, so a barrier
 * before it orders the other threads' earlier loads and stores of the program
 * before it (Triton's `count = load(Count); if count == 0 { atomic_xchg(Count, 1) }`,
 * a lock released after the stores it guards), and one after it (the broadcast's,
 * where the old value is read) the program's later accesses after it. */
#include "llvm_ctx.h"
#include "smem.h"
#include "../support/target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bits_of(DType dt) { return dt == DT_PTR ? 64 : dtype_bits(dt) < 8 ? 8 : dtype_bits(dt); }

/* Pack `vec` element values into nw words of ww bits.  One element or one word is a plain bitcast, no
 * one-lane vector: its insertelement, bitcast and extractelement are three instructions for each of the
 * optimizer's passes to visit (and the SLP vectorizer takes every insertelement as a seed). */
static void pack(LL *l, LLVMValueRef *elems, int vec, DType dt, int nw, int ww, LLVMValueRef *words) {
    LLVMTypeRef et = ll_type(l, dt);
    if (dt == DT_I1) et = l->t_i8;
    if (dt == DT_PTR) et = l->t_i64;
    LLVMValueRef v = vec > 1 ? LLVMGetUndef(LLVMVectorType(et, (unsigned)vec)) : NULL;
    for (int k = 0; k < vec; k++) {
        LLVMValueRef e = elems[k];
        if (dt == DT_I1) e = LLVMBuildZExt(l->b, e, l->t_i8, "");
        if (dt == DT_PTR) e = LLVMBuildPtrToInt(l->b, e, l->t_i64, "");
        v = vec > 1 ? LLVMBuildInsertElement(l->b, v, e, ll_i32(l, k), "") : e;
    }
    LLVMTypeRef wt = LLVMIntTypeInContext(l->ctx, (unsigned)ww);
    if (nw == 1) {
        words[0] = LLVMBuildBitCast(l->b, v, wt, "");
        return;
    }
    LLVMValueRef w = LLVMBuildBitCast(l->b, v, LLVMVectorType(wt, (unsigned)nw), "");
    for (int k = 0; k < nw; k++) words[k] = LLVMBuildExtractElement(l->b, w, ll_i32(l, k), "");
}

/* An i1 in memory is a byte, true when it is not zero (as Triton's, and NumPy's bool views of uint8 masks) */
static LLVMValueRef byte_to_i1(LL *l, LLVMValueRef b) { return LLVMBuildICmp(l->b, LLVMIntNE, b, LLVMConstInt(l->t_i8, 0, 0), ""); }

static void unpack(LL *l, LLVMValueRef *words, int nw, int ww, DType dt, int vec, LLVMValueRef *elems) {
    LLVMTypeRef wt = LLVMIntTypeInContext(l->ctx, (unsigned)ww);
    LLVMValueRef w = nw > 1 ? LLVMGetUndef(LLVMVectorType(wt, (unsigned)nw)) : words[0];
    for (int k = 0; nw > 1 && k < nw; k++) w = LLVMBuildInsertElement(l->b, w, words[k], ll_i32(l, k), "");
    LLVMTypeRef et = dt == DT_I1 ? l->t_i8 : dt == DT_PTR ? l->t_i64 : ll_type(l, dt);
    LLVMValueRef v = LLVMBuildBitCast(l->b, w, vec > 1 ? LLVMVectorType(et, (unsigned)vec) : et, "");
    for (int k = 0; k < vec; k++) {
        LLVMValueRef e = vec > 1 ? LLVMBuildExtractElement(l->b, v, ll_i32(l, k), "") : v;
        if (dt == DT_I1) e = byte_to_i1(l, e);
        if (dt == DT_PTR) e = LLVMBuildIntToPtr(l->b, e, l->t_gptr, "");
        elems[k] = e;
    }
}

/* The words (*nw of *ww bits) that carry total_bits of elements; an atomic access (strong) of a 64-bit element
 * stays one b64 word. */
static void word_shape(int total_bits, bool strong, int *nw, int *ww) {
    if (strong && total_bits == 64) {
        *ww = 64, *nw = 1;
    } else if (total_bits >= 32) {
        *ww = total_bits >= 256 ? 64 : 32;
        *nw = total_bits / *ww;
        if (*nw > 4) {
            *ww = 64;
            *nw = total_bits / 64;
        }
    } else {
        *ww = total_bits < 16 ? 16 : total_bits; /* 8-bit values travel in 16-bit registers */
        *nw = 1;
    }
}

static const char *reg_constraint(int ww) { return ww == 64 ? "l" : ww == 32 ? "r" : "h"; }

static LLVMValueRef is_const_true(LLVMValueRef p) {
    if (p && LLVMIsAConstantInt(p) && LLVMConstIntGetZExtValue(p) == 1) return p;
    return NULL;
}

static LLVMValueRef and_pred(LL *l, LLVMValueRef a, LLVMValueRef b) {
    if (!a) return b;
    if (!b) return a;
    return LLVMBuildAnd(l->b, a, b, "");
}

/* "ld.global", "ld.global.cg", "ld.global.L1::evict_last", "ld.volatile.global", "ld.acquire.gpu.global"
 * ... (attr cache, tir.h) */
static const char *cache_qual(const Inst *i, const char *verb, char *buf, size_t n) {
    int cache = i->a.cache, cop = tir_cache_cop(cache), ev = tir_cache_evict(cache);
    if (cache & TIR_CACHE_STRONG) {
        snprintf(buf, n, "%s.%s.%s.global", verb, tir_sem_names[i->a.sem], tir_scope_names[i->a.scope]);
        return buf;
    }
    snprintf(buf, n, "%s%s.global%s%s%s", verb, cache & TIR_CACHE_VOLATILE ? ".volatile" : "", tir_cop_names[cop], ev ? ".L1::" : "",
             tir_evict_names[ev]);
    return buf;
}

static bool emit_load(LL *l, Inst *i) {
    Func *f = l->f;
    const Type *rt = tir_vtype(f, i->res[0]);
    DType dt = rt->dt;
    int n;
    LLVMValueRef *ptr = ll_get(l, i->ops[0], &n);
    LLVMValueRef *mask = i->nops > 1 ? ll_get(l, i->ops[1], NULL) : NULL;
    LLVMValueRef *other = i->nops > 2 ? ll_get(l, i->ops[2], NULL) : NULL;
    LLVMValueRef *res = ll_new(l, i->res[0], n);
    int vec = i->a.vec > 0 ? i->a.vec : 1;
    if (n % vec || (i->a.cache & TIR_CACHE_STRONG)) vec = 1; /* an atomic access: an element an instruction */
    int eb = bits_of(dt);
    LLVMTypeRef et = dt == DT_I1 ? l->t_i8 : ll_type(l, dt);
    char qual[64];
    cache_qual(i, "ld", qual, sizeof qual);
    for (int r0 = 0; r0 < n; r0 += vec) {
        LLVMValueRef p = mask ? mask[r0] : NULL;
        if (p && is_const_true(p)) p = NULL;
        if (!p && i->a.cache) p = LLVMConstInt(l->t_i1, 1, 0); /* hints need the PTX form */
        if (!p) {
            LLVMTypeRef lt = vec > 1 ? LLVMVectorType(et, (unsigned)vec) : et;
            LLVMValueRef v = LLVMBuildLoad2(l->b, lt, ptr[r0], "");
            LLVMSetAlignment(v, (unsigned)(vec * eb / 8));
            for (int k = 0; k < vec; k++) {
                LLVMValueRef e = vec > 1 ? LLVMBuildExtractElement(l->b, v, ll_i32(l, k), "") : v;
                if (dt == DT_I1) e = byte_to_i1(l, e);
                res[r0 + k] = e;
            }
            continue;
        }
        int nw, ww;
        word_shape(vec * eb, (i->a.cache & TIR_CACHE_STRONG) != 0, &nw, &ww);
        LLVMValueRef oth[16], ow[4];
        for (int k = 0; k < vec; k++)
            oth[k] = other ? other[r0 + k] : (dt == DT_PTR ? LLVMConstNull(l->t_gptr) : LLVMConstNull(ll_type(l, dt)));
        if (vec * eb >= 16) pack(l, oth, vec, dt, nw, ww, ow);
        else ow[0] = LLVMBuildZExt(l->b, LLVMBuildBitCast(l->b, dt == DT_I1 ? LLVMBuildZExt(l->b, oth[0], l->t_i8, "") : oth[0], l->t_i8, ""), l->t_i16, "");
        /* "mov $0, $o0; ... @$p ld.global.v<nw>.b<ww> {$0..}, [$ptr];" */
        char text[512], cons[256];
        int tl = 0, cl = 0;
        const char *rc = reg_constraint(ww);
        for (int k = 0; k < nw; k++) {
            tl += snprintf(text + tl, sizeof text - (size_t)tl, "mov.b%d $%d, $%d;\n\t", ww, k, nw + 2 + k);
            cl += snprintf(cons + cl, sizeof cons - (size_t)cl, "%s=%s", k ? "," : "", rc);
        }
        const char *vs = nw == 1 ? "" : nw == 2 ? ".v2" : ".v4";
        if (vec * eb < 16) tl += snprintf(text + tl, sizeof text - (size_t)tl, "@$%d %s.u8 $0, [$%d];", nw + 1, qual, nw);
        else {
            tl += snprintf(text + tl, sizeof text - (size_t)tl, "@$%d %s%s.b%d %s", nw + 1, qual, vs, ww, nw > 1 ? "{" : "");
            for (int k = 0; k < nw; k++) tl += snprintf(text + tl, sizeof text - (size_t)tl, "%s$%d", k ? ", " : "", k);
            tl += snprintf(text + tl, sizeof text - (size_t)tl, "%s, [$%d];", nw > 1 ? "}" : "", nw);
        }
        cl += snprintf(cons + cl, sizeof cons - (size_t)cl, ",l,b");
        for (int k = 0; k < nw; k++) cl += snprintf(cons + cl, sizeof cons - (size_t)cl, ",%s", rc);
        LLVMValueRef args[8];
        args[0] = ptr[r0];
        args[1] = p;
        for (int k = 0; k < nw; k++) args[2 + k] = ow[k];
        LLVMTypeRef wt = LLVMIntTypeInContext(l->ctx, (unsigned)ww);
        LLVMTypeRef ret = wt;
        if (nw > 1) {
            LLVMTypeRef fields[4] = {wt, wt, wt, wt};
            ret = LLVMStructTypeInContext(l->ctx, fields, (unsigned)nw, 0);
        }
        LLVMValueRef call = ll_asm(l, ret, text, cons, args, 2 + nw, true);
        LLVMValueRef words[4] = {NULL};
        for (int k = 0; k < nw; k++) words[k] = nw > 1 ? LLVMBuildExtractValue(l->b, call, (unsigned)k, "") : call;
        if (vec * eb >= 16) unpack(l, words, nw, ww, dt, vec, &res[r0]);
        else {
            LLVMValueRef b8 = LLVMBuildTrunc(l->b, words[0], l->t_i8, "");
            res[r0] = dt == DT_I1 ? byte_to_i1(l, b8) : LLVMBuildBitCast(l->b, b8, ll_type(l, dt), "");
        }
    }
    return true;
}

static bool emit_store(LL *l, Inst *i) {
    Func *f = l->f;
    const Type *pt = tir_vtype(f, i->ops[0]);
    DType dt = tir_vtype(f, i->ops[1])->dt;
    int n;
    LLVMValueRef *ptr = ll_get(l, i->ops[0], &n);
    LLVMValueRef *val = ll_get(l, i->ops[1], NULL);
    LLVMValueRef *mask = i->nops > 2 ? ll_get(l, i->ops[2], NULL) : NULL;
    int vec = i->a.vec > 0 ? i->a.vec : 1;
    if (n % vec || (i->a.cache & TIR_CACHE_STRONG)) vec = 1; /* an atomic access: an element an instruction */
    int eb = bits_of(dt);
    LLVMTypeRef et = dt == DT_I1 ? l->t_i8 : ll_type(l, dt);
    char qual[64];
    cache_qual(i, "st", qual, sizeof qual);
    for (int r0 = 0; r0 < n; r0 += vec) {
        LLVMValueRef own = ll_owner(l, pt, r0);
        if (LLVMIsAConstantInt(own) && !LLVMConstIntGetZExtValue(own)) continue; /* in-thread replica */
        LLVMValueRef p = and_pred(l, mask ? mask[r0] : NULL, is_const_true(own) ? NULL : own);
        if (p && is_const_true(p)) p = NULL;
        if (!p && i->a.cache) p = LLVMConstInt(l->t_i1, 1, 0); /* hints need the PTX form */
        if (!p) {
            LLVMValueRef v;
            if (vec > 1) {
                v = LLVMGetUndef(LLVMVectorType(et, (unsigned)vec));
                for (int k = 0; k < vec; k++) {
                    LLVMValueRef e = dt == DT_I1 ? LLVMBuildZExt(l->b, val[r0 + k], l->t_i8, "") : val[r0 + k];
                    v = LLVMBuildInsertElement(l->b, v, e, ll_i32(l, k), "");
                }
            } else {
                v = dt == DT_I1 ? LLVMBuildZExt(l->b, val[r0], l->t_i8, "") : val[r0];
            }
            LLVMValueRef st = LLVMBuildStore(l->b, v, ptr[r0]);
            LLVMSetAlignment(st, (unsigned)(vec * eb / 8));
            continue;
        }
        int nw, ww;
        word_shape(vec * eb, (i->a.cache & TIR_CACHE_STRONG) != 0, &nw, &ww);
        LLVMValueRef words[4];
        if (vec * eb >= 16) pack(l, &val[r0], vec, dt, nw, ww, words);
        else {
            LLVMValueRef b8 = dt == DT_I1 ? LLVMBuildZExt(l->b, val[r0], l->t_i8, "") : LLVMBuildBitCast(l->b, val[r0], l->t_i8, "");
            words[0] = LLVMBuildZExt(l->b, b8, l->t_i16, "");
        }
        char text[256], cons[128];
        int tl = 0, cl = 0;
        const char *rc = reg_constraint(ww);
        const char *vs = nw == 1 ? "" : nw == 2 ? ".v2" : ".v4";
        if (vec * eb < 16) tl += snprintf(text, sizeof text, "@$1 %s.u8 [$0], $2;", qual);
        else {
            tl += snprintf(text + tl, sizeof text - (size_t)tl, "@$1 %s%s.b%d [$0], %s", qual, vs, ww, nw > 1 ? "{" : "");
            for (int k = 0; k < nw; k++) tl += snprintf(text + tl, sizeof text - (size_t)tl, "%s$%d", k ? ", " : "", 2 + k);
            tl += snprintf(text + tl, sizeof text - (size_t)tl, "%s;", nw > 1 ? "}" : "");
        }
        cl += snprintf(cons + cl, sizeof cons - (size_t)cl, "l,b");
        for (int k = 0; k < nw; k++) cl += snprintf(cons + cl, sizeof cons - (size_t)cl, ",%s", rc);
        LLVMValueRef args[6] = {ptr[r0], p};
        for (int k = 0; k < nw; k++) args[2 + k] = words[k];
        ll_asm(l, l->t_void, text, cons, args, 2 + nw, true);
    }
    return true;
}

/* The PTX of one atomic on an element of dtype dt, `atom.SEM.SCOPE.global.OP.TYPE` (with `red`:
 * `red.SEM.SCOPE.global.OP.TYPE`, no result), or NULL where PTX has no such instruction on the
 * target (float min/max, bf16 add before sm_90): those go through LLVM's atomicrmw, which
 * expands to a compare-and-swap loop.  Operands
 * travel as the returned register class *cls: integers bitcast from floats except for add. */
static const char *atomic_ptx_op(LL *l, const Inst *i, DType dt, bool red, char *buf, size_t n, char *cls) {
    bool fl = dtype_is_float(dt), s = dtype_is_signed(dt);
    int bits = dtype_bits(dt);
    const char *op, *ty;
    *cls = bits == 16 ? 'h' : bits == 64 ? 'l' : 'r';
    if (i->op == OP_ATOMIC_CAS) op = "cas", ty = bits == 64 ? "b64" : "b32";
    else switch ((RedKind)i->a.ival2) {
    case RED_SUM:
        op = "add";
        if (dt == DT_F16) ty = "noftz.f16";
        else if (dt == DT_BF16 && target_find(l->m->arch)->sm < 90) {
            /* a 16-bit compare-and-swap loop: LLVM's would swap the whole aligned 32-bit word,
             * reading past the end of an odd-sized array */
            snprintf(buf, n,
                     "{\n\t.reg .pred %%p;\n\t.reg .b16 %%cur, %%nxt, %%one;\n\tmov.b16 %%one, 0x3F80;\n"
                     "\tld.relaxed.%s.global.b16 %%cur, [$1];\n$$Lbf16cas${:uid}:\n\tfma.rn.bf16 %%nxt, %%cur, %%one, $2;\n"
                     "\tatom.%s.%s.global.cas.b16 $0, [$1], %%cur, %%nxt;\n\tsetp.ne.b16 %%p, $0, %%cur;\n\tmov.b16 %%cur, $0;\n"
                     "\t@%%p bra $$Lbf16cas${:uid};\n}",
                     tir_scope_names[i->a.scope], tir_sem_names[i->a.sem], tir_scope_names[i->a.scope]);
            return buf;
        } else if (dt == DT_BF16) ty = "noftz.bf16";
        else if (fl) ty = bits == 64 ? "f64" : "f32", *cls = bits == 64 ? 'd' : 'f';
        else ty = bits == 64 ? "u64" : s ? "s32" : "u32";
        break;
    case RED_MAX:
    case RED_MIN:
        if (fl) return NULL;
        op = i->a.ival2 == RED_MAX ? "max" : "min";
        ty = bits == 64 ? (s ? "s64" : "u64") : s ? "s32" : "u32";
        break;
    case RED_AND: op = "and", ty = bits == 64 ? "b64" : "b32"; break;
    case RED_OR: op = "or", ty = bits == 64 ? "b64" : "b32"; break;
    case RED_XOR: op = "xor", ty = bits == 64 ? "b64" : "b32"; break;
    default: op = "exch", ty = bits == 64 ? "b64" : "b32"; break;
    }
    if (red) snprintf(buf, n, "red.%s.%s.global.%s.%s [$0], $1;", tir_sem_names[i->a.sem], tir_scope_names[i->a.scope], op, ty);
    else
        snprintf(buf, n, "atom.%s.%s.global.%s.%s $0, [$1], $2%s;", tir_sem_names[i->a.sem], tir_scope_names[i->a.scope], op, ty,
                 i->op == OP_ATOMIC_CAS ? ", $3" : "");
    return buf;
}

/* LLVM's ordering and sync scope for the fallback path. */
static LLVMAtomicOrdering atomic_ordering(MemSem s) {
    switch (s) {
    case SEM_RELAXED: return LLVMAtomicOrderingMonotonic;
    case SEM_ACQUIRE: return LLVMAtomicOrderingAcquire;
    case SEM_RELEASE: return LLVMAtomicOrderingRelease;
    default: return LLVMAtomicOrderingAcquireRelease;
    }
}

static unsigned atomic_sync_scope(LL *l, MemScope s) {
    const char *name = s == SCOPE_CTA ? "block" : s == SCOPE_GPU ? "device" : "";
    return LLVMGetSyncScopeID(l->ctx, name, strlen(name));
}

/* The result of an atomic or poll that only the owning register issued (replicas hold zeros): when
 * smem_atomic_broadcasts says replicas read it, the owner writes it to the op's scratch and every
 * register reads it back after a barrier (a scalar's owner is thread 0); otherwise, for a scalar or
 * when `wait`, a barrier alone, so that no thread of the program goes on before the issuing one. */
static bool broadcast_to_replicas(LL *l, Inst *i, const Type *rt, LLVMValueRef *res, bool wait) {
    DType dt = rt->dt;
    if (!smem_atomic_broadcasts(l->f, i, NULL)) {
        if (wait) ll_barrier(l);
        return true;
    }
    int need = (int)(tir_type_numel(rt) * dtype_bytes(dt));
    if (!l->smem || i->a.smem_offset < 0 || i->a.smem_bytes < need) {
        ll_error(l, i->loc, "internal error: %s needs %d bytes of shared-memory scratch (run smem_alloc first)", tir_op_info[i->op].name,
                 need);
        return false;
    }
    if (rt->rank) {
        ll_smem_write_tensor(l, rt, res, i->a.smem_offset);
        ll_barrier(l);
        ll_smem_read_tensor(l, rt, res, i->a.smem_offset);
        return true;
    }
    /* thread 0 issued it; an i1 travels as a byte */
    LLVMTypeRef st = dt == DT_I1 ? l->t_i8 : ll_type(l, dt);
    LLVMValueRef slot = ll_smem_ptr(l, i->a.smem_offset, NULL);
    LLVMBasicBlockRef put = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "atom.bcast");
    LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "atom.bcast.join");
    LLVMBuildCondBr(l->b, ll_owner(l, rt, 0), put, join);
    LLVMPositionBuilderAtEnd(l->b, put);
    LLVMBuildStore(l->b, dt == DT_I1 ? LLVMBuildZExt(l->b, res[0], l->t_i8, "") : res[0], slot);
    LLVMBuildBr(l->b, join);
    LLVMPositionBuilderAtEnd(l->b, join);
    ll_barrier(l);
    res[0] = LLVMBuildLoad2(l->b, st, slot, "");
    if (dt == DT_I1) res[0] = LLVMBuildTrunc(l->b, res[0], l->t_i1, "");
    return true;
}

static bool emit_atomic(LL *l, Inst *i) {
    Func *f = l->f;
    const Type *pt = tir_vtype(f, i->ops[0]);
    const Type *rt = tir_vtype(f, i->res[0]);
    DType dt = rt->dt;
    bool fl = dtype_is_float(dt), s = dtype_is_signed(dt);
    bool half_add = i->op == OP_ATOMIC_RMW && i->a.ival2 == RED_SUM && (dt == DT_F16 || dt == DT_BF16);
    if (dtype_is_storage(dt) || dt == DT_I1 || (dtype_bits(dt) < 32 && !half_add)) {
        ll_error(l, i->loc, "atomics on %s are not supported; use 32- or 64-bit types (or f16/bf16 atomic_add)", dtype_name(dt));
        return false;
    }
    int n;
    LLVMValueRef *ptr = ll_get(l, i->ops[0], &n);
    bool cas = i->op == OP_ATOMIC_CAS;
    LLVMValueRef *val = ll_get(l, i->ops[cas ? 2 : 1], NULL);
    LLVMValueRef *cmp = cas ? ll_get(l, i->ops[1], NULL) : NULL;
    LLVMValueRef *mask = i->nops > (cas ? 3 : 2) ? ll_get(l, i->ops[cas ? 3 : 2], NULL) : NULL;
    LLVMValueRef *res = ll_new(l, i->res[0], n);
    char text[512], cls;
    /* old values nothing reads, at an ordering `red` has (relaxed, release): red, which returns none */
    bool red = !cas && i->a.ival2 != RED_XCHG && (i->a.sem == SEM_RELAXED || i->a.sem == SEM_RELEASE) &&
               !tir_result_used(f, i->res[0]);
    const char *ptx = atomic_ptx_op(l, i, dt, red, text, sizeof text, &cls);
    if (red && (!ptx || strncmp(ptx, "red.", 4))) red = false; /* float min/max, bf16 before sm_90: compare-and-swap loops */
    /* operands as the asm's register class: floats other than add's travel as bits */
    LLVMTypeRef at = cls == 'f' || cls == 'd' ? ll_type(l, dt) : LLVMIntTypeInContext(l->ctx, (unsigned)dtype_bits(dt));
    char cons[32];
    snprintf(cons, sizeof cons, cas ? "=&%c,l,%c,%c" : "=&%c,l,%c", cls, cls, cls); /* early clobber: the bf16 loop writes $0 before its last read of $2 */
    LLVMAtomicRMWBinOp op = LLVMAtomicRMWBinOpXchg;
    switch ((RedKind)i->a.ival2) {
    case RED_SUM: op = fl ? LLVMAtomicRMWBinOpFAdd : LLVMAtomicRMWBinOpAdd; break;
    case RED_MAX: op = fl ? LLVMAtomicRMWBinOpFMax : s ? LLVMAtomicRMWBinOpMax : LLVMAtomicRMWBinOpUMax; break;
    case RED_MIN: op = fl ? LLVMAtomicRMWBinOpFMin : s ? LLVMAtomicRMWBinOpMin : LLVMAtomicRMWBinOpUMin; break;
    default: break;
    }
    LLVMValueRef zero = LLVMConstNull(ll_type(l, dt));
    /* f16/bf16 adds on two consecutive aligned elements under one mask value (assign_layout's
     * vec): one packed atom.add.noftz.f16x2 / .bf16x2 */
    int vec = i->a.vec == 2 && half_add && ptx && n % 2 == 0 ? 2 : 1;
    char packed[128];
    if (red)
        snprintf(packed, sizeof packed, "red.%s.%s.global.add.noftz.%s [$0], $1;", tir_sem_names[i->a.sem], tir_scope_names[i->a.scope],
                 dt == DT_F16 ? "f16x2" : "bf16x2");
    else
        snprintf(packed, sizeof packed, "atom.%s.%s.global.add.noftz.%s $0, [$1], $2;", tir_sem_names[i->a.sem],
                 tir_scope_names[i->a.scope], dt == DT_F16 ? "f16x2" : "bf16x2");
    LLVMTypeRef v2 = LLVMVectorType(ll_type(l, dt), 2);
    bool scalar = !rt->rank;
    if (scalar) ll_barrier(l);
    for (int r = 0; r < n; r += vec) {
        LLVMValueRef own = ll_owner(l, pt, r);
        if (LLVMIsAConstantInt(own) && !LLVMConstIntGetZExtValue(own)) {
            for (int k = 0; k < vec; k++) res[r + k] = zero;
            continue;
        }
        LLVMValueRef p = and_pred(l, mask ? mask[r] : NULL, is_const_true(own) ? NULL : own);
        LLVMBasicBlockRef cur = LLVMGetInsertBlock(l->b), doit = NULL, join = NULL;
        if (p) {
            doit = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "atom");
            join = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "atom.join");
            LLVMBuildCondBr(l->b, p, doit, join);
            LLVMPositionBuilderAtEnd(l->b, doit);
        }
        LLVMValueRef old;
        if (vec == 2) {
            LLVMValueRef pv = LLVMGetUndef(v2);
            for (int k = 0; k < 2; k++) pv = LLVMBuildInsertElement(l->b, pv, val[r + k], ll_i32(l, k), "");
            LLVMValueRef args[2] = {ptr[r], LLVMBuildBitCast(l->b, pv, l->t_i32, "")};
            if (red) {
                ll_asm(l, l->t_void, packed, "l,r,~{memory}", args, 2, true);
                old = LLVMConstNull(l->t_i32);
            } else {
                old = ll_asm(l, l->t_i32, packed, "=&r,l,r", args, 2, true);
            }
        } else if (ptx && red) {
            char rcons[16];
            snprintf(rcons, sizeof rcons, "l,%c,~{memory}", cls);
            LLVMValueRef args[2] = {ptr[r], at == ll_type(l, dt) ? val[r] : LLVMBuildBitCast(l->b, val[r], at, "")};
            ll_asm(l, l->t_void, ptx, rcons, args, 2, true);
            old = zero;
        } else if (ptx) {
            LLVMValueRef args[3] = {ptr[r], NULL, NULL};
            LLVMValueRef *src[2] = {cas ? cmp : val, val};
            for (int k = 0; k < (cas ? 2 : 1); k++)
                args[1 + k] = at == ll_type(l, dt) ? src[k][r] : LLVMBuildBitCast(l->b, src[k][r], at, "");
            old = ll_asm(l, at, ptx, cons, args, cas ? 3 : 2, true);
            if (at != ll_type(l, dt)) old = LLVMBuildBitCast(l->b, old, ll_type(l, dt), "");
        } else {
            LLVMValueRef x = LLVMBuildAtomicRMWSyncScope(l->b, op, ptr[r], val[r], atomic_ordering((MemSem)i->a.sem),
                                                        atomic_sync_scope(l, (MemScope)i->a.scope));
            old = x;
        }
        if (p) {
            LLVMBasicBlockRef end = LLVMGetInsertBlock(l->b);
            LLVMBuildBr(l->b, join);
            LLVMPositionBuilderAtEnd(l->b, join);
            LLVMValueRef phi = LLVMBuildPhi(l->b, LLVMTypeOf(old), "");
            LLVMValueRef in[2] = {old, LLVMConstNull(LLVMTypeOf(old))};
            LLVMBasicBlockRef from[2] = {end, cur};
            LLVMAddIncoming(phi, in, from, 2);
            old = phi;
        }
        if (vec == 2) {
            LLVMValueRef ov = LLVMBuildBitCast(l->b, old, v2, "");
            for (int k = 0; k < 2; k++) res[r + k] = LLVMBuildExtractElement(l->b, ov, ll_i32(l, k), "");
        } else {
            res[r] = old;
        }
    }
    /* replicas (other threads, other registers) hold zeros so far: the issuing register
     * broadcasts its old value through scratch */
    return broadcast_to_replicas(l, i, rt, res, scalar);
}

/* atomic_poll: each owned element one loop of inline PTX (the shape of Triton's lowering):
 *     mov.u32 ok, 1;
 *   L: ld.SEM.SCOPE.global.bW v, [p];  setp.eq v, expected -> done
 *     mov.u64 t, %globaltimer;  t - start < timeout -> L;  mov.u32 ok, 0
 * (without a timeout, back to L until it matches), start being %globaltimer read once when the op
 * begins, so the budget is shared by the thread's elements, each loaded at least once.  Replicas
 * get the owner's answer through scratch, and every thread waits at a barrier for all polls. */
static bool emit_poll(LL *l, Inst *i) {
    Func *f = l->f;
    const Type *pt = tir_vtype(f, i->ops[0]), *rt = tir_vtype(f, i->res[0]);
    DType dt = pt->pointee->dt;
    int bits = dtype_bits(dt), n;
    LLVMValueRef *ptr = ll_get(l, i->ops[0], &n);
    LLVMValueRef *exp = ll_get(l, i->ops[1], NULL);
    LLVMValueRef timeout = i->nops > 2 ? ll_get(l, i->ops[2], NULL)[0] : NULL;
    LLVMValueRef *res = ll_new(l, i->res[0], n);
    LLVMValueRef start = NULL;
    if (timeout) start = ll_asm(l, l->t_i64, "mov.u64 $0, %globaltimer;", "=l", NULL, 0, true);
    char text[768], cons[32];
    const char *ld = tir_sem_names[i->a.sem], *sc = tir_scope_names[i->a.scope];
    if (timeout)
        snprintf(text, sizeof text,
                 "{\n\t.reg .pred %%p;\n\t.reg .b%d %%v;\n\t.reg .b64 %%t;\n\tmov.u32 $0, 1;\n$$Lpoll${:uid}:\n"
                 "\tld.%s.%s.global.b%d %%v, [$1];\n\tsetp.eq.b%d %%p, %%v, $2;\n\t@%%p bra $$Lpolled${:uid};\n"
                 "\tmov.u64 %%t, %%globaltimer;\n\tsub.u64 %%t, %%t, $3;\n\tsetp.lt.u64 %%p, %%t, $4;\n\t@%%p bra $$Lpoll${:uid};\n"
                 "\tmov.u32 $0, 0;\n$$Lpolled${:uid}:\n}",
                 bits, ld, sc, bits, bits);
    else
        snprintf(text, sizeof text,
                 "{\n\t.reg .pred %%p;\n\t.reg .b%d %%v;\n$$Lpoll${:uid}:\n\tld.%s.%s.global.b%d %%v, [$1];\n"
                 "\tsetp.ne.b%d %%p, %%v, $2;\n\t@%%p bra $$Lpoll${:uid};\n\tmov.u32 $0, 1;\n}",
                 bits, ld, sc, bits, bits);
    snprintf(cons, sizeof cons, "=&r,l,%s%s,~{memory}", reg_constraint(bits), timeout ? ",l,l" : "");
    LLVMValueRef zero = LLVMConstInt(l->t_i1, 0, 0);
    for (int r = 0; r < n; r++) {
        LLVMValueRef own = ll_owner(l, pt, r);
        if (LLVMIsAConstantInt(own) && !LLVMConstIntGetZExtValue(own)) {
            res[r] = zero;
            continue;
        }
        LLVMValueRef p = is_const_true(own) ? NULL : own;
        LLVMBasicBlockRef cur = LLVMGetInsertBlock(l->b), doit = NULL, join = NULL;
        if (p) {
            doit = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "poll");
            join = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "poll.join");
            LLVMBuildCondBr(l->b, p, doit, join);
            LLVMPositionBuilderAtEnd(l->b, doit);
        }
        LLVMValueRef args[4] = {ptr[r], exp[r], start, timeout};
        LLVMValueRef ok = ll_asm(l, l->t_i32, text, cons, args, timeout ? 4 : 2, true);
        ok = LLVMBuildICmp(l->b, LLVMIntNE, ok, ll_i32(l, 0), "");
        if (p) {
            LLVMBasicBlockRef end = LLVMGetInsertBlock(l->b);
            LLVMBuildBr(l->b, join);
            LLVMPositionBuilderAtEnd(l->b, join);
            LLVMValueRef phi = LLVMBuildPhi(l->b, l->t_i1, "");
            LLVMValueRef in[2] = {ok, zero};
            LLVMBasicBlockRef from[2] = {end, cur};
            LLVMAddIncoming(phi, in, from, 2);
            ok = phi;
        }
        res[r] = ok;
    }
    return broadcast_to_replicas(l, i, rt, res, true);
}

bool ll_emit_memory(LL *l, Inst *i) {
    switch (i->op) {
    case OP_LOAD: return emit_load(l, i);
    case OP_STORE: return emit_store(l, i);
    case OP_ATOMIC_POLL: return emit_poll(l, i);
    default: return emit_atomic(l, i);
    }
}
