/* llvm_shared.c - ops whose data crosses threads: convert_layout, reshape,
 * reduce, scan and the FMA dot.
 *
 * Every register of a tensor is located by layout.h's formula
 * coord_d = (stat[r][d] + T_d(thread)) mod S_d; this file only ever moves
 * registers between threads by (a) butterfly / indexed warp shuffles along
 * one dim's lane bits, or (b) the op's scratch buffer in shared memory
 * (i->a.smem_offset, sized by smem_scratch_bytes) with one barrier between
 * the op's own writes and reads.  The barrier pass orders scratch use
 * between different ops.
 *
 * convert_layout / reshape:
 *   1. Each thread stores its canonical registers (no in-thread replica) at
 *      the row-major linear index of their coordinate (reshape: in the
 *      source shape); only the owner thread of each element stores
 *      (ll_owner), so there is one writer per address.
 *      Runs of registers that are consecutive and aligned along the last
 *      dim are stored as one vector (<= 16 bytes).
 *   2. Barrier, then every result register is loaded from its coordinate's
 *      linear index (reshape: in the result shape; row-major order is what
 *      reshape preserves), vectorized the same way.
 *
 * reduce_fn / scan_fn (a user fn as the combine, see below): the same steps, in order.
 *
 * reduce (axis a, kind sum/max/min/argmax/argmin):
 *   1. Group the operand's canonical registers by their stat without dim a;
 *      combine each group in register order in the accumulation type
 *      (f16/bf16 -> f32, narrow ints -> i32); arg kinds carry the element's
 *      coordinate along a as an i32 index (ties -> smallest index, NaN wins),
 *      so one combine of (value, index) pairs gives both the index (result 0)
 *      and, when asked, the value that came with it (result 1).
 *   2. Butterfly shuffles over the distinct lane positions along a.
 *   3. More than one warp position along a (W of them): one thread per
 *      warp position stores each group's partial, in the accumulation
 *      type, at [row * W + warp_pos] (row = linear index of the result
 *      coordinate), barrier, then every thread reads the W partials of its
 *      groups and combines them in warp order, so all get identical bits.
 *   4. Each result register (slice layout) takes the group with its stat.
 *
 * scan (inclusive, axis a, kind sum/max/min), per repetition of the layout
 * along a (the elements a thread holds in repetition j come after every
 * element of repetition j-1):
 *   1. In-thread inclusive prefix over the group's registers of that rep.
 *   2. Hillis-Steele over the lane positions along a with indexed shuffles,
 *      then one shuffle from the previous lane position for the exclusive
 *      lane prefix, one from the last for the warp's total.
 *   3. Across warps: warp totals through scratch, barrier, each thread folds
 *      the totals of the warps before it; barrier before the next rep.
 *   4. Element = carry (earlier reps) (+) warp prefix (+) lane prefix (+)
 *      in-thread prefix; replicas copy their canonical register.
 *
 * gather (axis a): the source through scratch as above, then every result register loads
 * the source element at its coordinate with coordinate a taken from the index register;
 * with xor=j (index i ^ j, sort's partners) another register of the thread or one
 * butterfly shuffle when the layout keeps the partner in the warp (layout_xor_partner).
 *
 * dot (FMA): a and b are stored row-major in scratch (b 16-byte aligned
 * after a), barrier, then for k = 0..K-1, unrolled: each distinct row of the
 * thread's accumulator registers loads a[m][k] (vectors along k), each
 * distinct column b[k][n] (vectors along n), and every accumulator register
 * does one fma in f32 (f16/bf16 inputs) or one multiply-add (ints, in i32).
 * Past DOT_FMA_UNROLLED multiply-adds a thread, a loop over chunks of K, each
 * chunk so unrolled, the chunk's offset added to the row and column bases. */
#include "llvm_ctx.h"
#include "smem.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- scratch access ---- */

/* How an element is kept in shared memory: i1 as i8, pointers as i64. */
static LLVMTypeRef smem_type(LL *l, DType dt) {
    if (dt == DT_I1) return l->t_i8;
    if (dt == DT_PTR) return l->t_i64;
    return ll_type(l, dt);
}

static LLVMValueRef to_smem(LL *l, LLVMValueRef v, DType dt) {
    if (dt == DT_I1) return LLVMBuildZExt(l->b, v, l->t_i8, "");
    if (dt == DT_PTR) return LLVMBuildPtrToInt(l->b, v, l->t_i64, "");
    return v;
}

static LLVMValueRef from_smem(LL *l, LLVMValueRef v, DType dt) {
    if (dt == DT_I1) return LLVMBuildTrunc(l->b, v, l->t_i1, "");
    if (dt == DT_PTR) return LLVMBuildIntToPtr(l->b, v, l->t_gptr, "");
    return v;
}

static void st_shared(LL *l, LLVMValueRef v, LLVMValueRef p, int off, LLVMValueRef dyn, unsigned align) {
    LLVMValueRef st = LLVMBuildStore(l->b, v, p ? p : ll_smem_ptr(l, off, dyn));
    LLVMSetAlignment(st, align);
}

/* Store only where `pred` holds (NULL: always): one writer per address keeps the
 * race detector quiet and saves bandwidth.  At pointer p, or (p NULL) at scratch
 * byte off + dyn. */
static void st_shared_if(LL *l, LLVMValueRef pred, LLVMValueRef v, LLVMValueRef p, int off, LLVMValueRef dyn, unsigned align) {
    if (pred && LLVMIsConstant(pred)) {
        if (!LLVMConstIntGetZExtValue(pred)) return;
        pred = NULL;
    }
    if (!pred) {
        st_shared(l, v, p, off, dyn, align);
        return;
    }
    LLVMBasicBlockRef then = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "st.then");
    LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "st.join");
    LLVMBuildCondBr(l->b, pred, then, join);
    LLVMPositionBuilderAtEnd(l->b, then);
    st_shared(l, v, p, off, dyn, align);
    LLVMBuildBr(l->b, join);
    LLVMPositionBuilderAtEnd(l->b, join);
}

static LLVMValueRef ld_shared(LL *l, LLVMTypeRef ty, int off, LLVMValueRef dyn, unsigned align) {
    LLVMValueRef v = LLVMBuildLoad2(l->b, ty, ll_smem_ptr(l, off, dyn), "");
    LLVMSetAlignment(v, align);
    return v;
}

/* The op must have been given scratch by smem_alloc. */
static bool have_scratch(LL *l, Inst *i, int need) {
    if (l->smem && i->a.smem_offset >= 0 && i->a.smem_bytes >= need) return true;
    ll_error(l, i->loc, "internal error: %s needs %d bytes of shared-memory scratch but got %d (run smem_alloc first)",
             tir_op_info[i->op].name, need, i->a.smem_offset >= 0 ? i->a.smem_bytes : 0);
    return false;
}

/* Everything here works from the register tables and thread terms alone (layout.h), so any
 * layout kind goes; a tensor must just have one. */
static bool has_layout(LL *l, Inst *i, const Type *t) {
    if (!t->rank || t->layout) return true;
    ll_error(l, i->loc, "internal error: %s on a tensor without a layout (run assign_layout first)",
             tir_op_info[i->op].name);
    return false;
}

static bool is_replica(const LayoutRegs *lr, const Type *t, int r) {
    for (int d = 0; d < t->rank; d++)
        if (lr->raw[r][d] >= t->shape[d]) return true;
    return false;
}

/* Row-major linear index of register r's coordinate in shape `shape` (t's shape,
 * or another with the same element order), skipping dim `skip` (-1: none). */
static LLVMValueRef linear_index(LL *l, const Type *t, int r, int skip) {
    LLVMValueRef lin = ll_i32(l, 0);
    int64_t stride = 1;
    for (int d = t->rank - 1; d >= 0; d--) {
        if (d == skip) continue;
        LLVMValueRef c = ll_coord(l, t, r, d);
        lin = LLVMBuildAdd(l->b, lin, LLVMBuildMul(l->b, c, ll_i32(l, stride), ""), "");
        stride *= t->shape[d];
    }
    return lin;
}

/* linear_index * eb on numbers, less the window's first element (LLAddrs, llvm_ctx.h) */
typedef struct LinearAddrs {
    LLAddrs a;
    int eb;
    int64_t first;
} LinearAddrs;

static bool linear_host_offset(const void *ctx, const int64_t *c, int64_t *off) {
    const LinearAddrs *A = ctx;
    const Type *t = A->a.ty;
    int64_t lin = 0, stride = 1;
    for (int d = t->rank - 1; d >= 0; d--) {
        lin += c[d] * stride;
        stride *= t->shape[d];
    }
    *off = (lin - A->first) * A->eb;
    return true;
}

/* Scratch pointer of register r's element in a window of t at byte off (write_window, read_window). */
static LLVMValueRef window_ptr(LL *l, LinearAddrs *A, int r, int off) {
    LLVMValueRef p = A->a.ty->rank ? ll_addrs_find(l, &A->a, r) : NULL;
    if (p) return p;
    LLVMValueRef lin = linear_index(l, A->a.ty, r, -1);
    if (A->first) lin = LLVMBuildSub(l->b, lin, ll_i32(l, A->first), "");
    p = ll_smem_ptr(l, off, LLVMBuildMul(l->b, lin, ll_i32(l, A->eb), ""));
    if (A->a.ty->rank) ll_addrs_add(&A->a, p);
    return p;
}

/* Largest power-of-two v <= maxv such that registers r..r+v-1 hold consecutive,
 * v-aligned elements along the last dim (so one vector access covers them). */
static int vec_run(const LayoutRegs *lr, const Type *t, int r, int maxv) {
    if (!t->rank) return 1;
    int last = t->rank - 1;
    ThreadTerm tt = layout_thread_term(t->layout, last);
    int v = 1;
    for (int cand = 2; cand <= maxv; cand *= 2) {
        if (r + cand > lr->n || tt.lane_mul % cand || (tt.warp_count > 1 && tt.warp_mul % cand) ||
            t->shape[last] % cand || lr->stat[r][last] % cand)
            break;
        bool ok = true;
        for (int j = 1; j < cand && ok; j++)
            for (int d = 0; d < t->rank && ok; d++) {
                int want = d == last ? j : 0;
                ok = lr->stat[r + j][d] == lr->stat[r][d] + want && lr->raw[r + j][d] == lr->raw[r][d] + want;
            }
        if (!ok) break;
        v = cand;
    }
    return v;
}

/* Store every canonical register of `v` (type t) at scratch byte offset `off` +
 * linear index * element size.  Linear indices are row-major in t's shape. */
/* The registers whose index along dim 0 without the thread's part is in [lo, hi) (lo and hi multiples of the
 * layout's coverage of dim 0, smem_stack_chunk: then the element's index is in [lo, hi) in every thread), at byte
 * offset off + (linear index - lo * the elements below dim 0) * size: the window lies at off as if it were the
 * whole tensor.  A stack or unstack in chunks of slabs moves one window at a time. */
static void write_window(LL *l, const Type *t, LLVMValueRef *vals, int off, int lo, int hi) {
    const LayoutRegs *lr = ll_regs_of(l, t);
    int eb = dtype_bytes(t->dt);
    LLVMTypeRef st = smem_type(l, t->dt);
    int64_t below = t->rank ? tir_type_numel(t) / t->shape[0] : 1;
    bool whole = !t->rank || (lo <= 0 && hi >= t->shape[0]);
    LinearAddrs addrs = {.eb = eb, .first = whole ? 0 : lo * below};
    if (t->rank) ll_addrs_init(&addrs.a, t, lr, linear_host_offset, &addrs);
    addrs.a.ty = t;
    for (int r = 0; r < lr->n;) {
        if (is_replica(lr, t, r) || (!whole && (lr->stat[r][0] < lo || lr->stat[r][0] >= hi))) {
            r++;
            continue;
        }
        int v = vec_run(lr, t, r, 16 / eb);
        LLVMValueRef p = window_ptr(l, &addrs, r, off);
        /* threads holding a replica (wrapped or sliced-away thread terms) skip the store */
        LLVMValueRef own = ll_owner(l, t, r);
        if (v == 1) {
            st_shared_if(l, own, to_smem(l, vals[r], t->dt), p, 0, NULL, (unsigned)eb);
        } else {
            LLVMTypeRef vt = LLVMVectorType(st, (unsigned)v);
            LLVMValueRef vec = LLVMGetPoison(vt);
            for (int j = 0; j < v; j++)
                vec = LLVMBuildInsertElement(l->b, vec, to_smem(l, vals[r + j], t->dt), ll_i32(l, j), "");
            st_shared_if(l, own, vec, p, 0, NULL, (unsigned)(eb * v));
        }
        r += v;
    }
    if (t->rank) ll_addrs_free(&addrs.a);
}

void ll_smem_write_tensor(LL *l, const Type *t, LLVMValueRef *vals, int off) { write_window(l, t, vals, off, 0, INT32_MAX); }

/* Load every register of type t from scratch (row-major in t's shape). */
static void read_window(LL *l, const Type *t, LLVMValueRef *out, int off, int lo, int hi) {
    const LayoutRegs *lr = ll_regs_of(l, t);
    int eb = dtype_bytes(t->dt);
    LLVMTypeRef st = smem_type(l, t->dt);
    int64_t below = t->rank ? tir_type_numel(t) / t->shape[0] : 1;
    bool whole = !t->rank || (lo <= 0 && hi >= t->shape[0]);
    LinearAddrs addrs = {.eb = eb, .first = whole ? 0 : lo * below};
    if (t->rank) ll_addrs_init(&addrs.a, t, lr, linear_host_offset, &addrs);
    addrs.a.ty = t;
    for (int r = 0; r < lr->n;) {
        if (!whole && (lr->stat[r][0] < lo || lr->stat[r][0] >= hi)) {
            r++;
            continue;
        }
        int v = vec_run(lr, t, r, 16 / eb);
        LLVMTypeRef ty = v == 1 ? st : LLVMVectorType(st, (unsigned)v);
        LLVMValueRef x = LLVMBuildLoad2(l->b, ty, window_ptr(l, &addrs, r, off), "");
        LLVMSetAlignment(x, (unsigned)(eb * v));
        if (v == 1) {
            out[r] = from_smem(l, x, t->dt);
        } else {
            for (int j = 0; j < v; j++)
                out[r + j] = from_smem(l, LLVMBuildExtractElement(l->b, x, ll_i32(l, j), ""), t->dt);
        }
        r += v;
    }
    if (t->rank) ll_addrs_free(&addrs.a);
}

void ll_smem_read_tensor(LL *l, const Type *t, LLVMValueRef *out, int off) { read_window(l, t, out, off, 0, INT32_MAX); }

/* convert_layout and reshape: the same round trip through scratch. */
static bool emit_through_smem(LL *l, Inst *i) {
    const Type *ot = tir_vtype(l->f, i->ops[0]), *rt = tir_vtype(l->f, i->res[0]);
    if (!has_layout(l, i, ot) || !has_layout(l, i, rt)) return false;
    int n;
    LLVMValueRef *src = ll_get(l, i->ops[0], &n);
    const LayoutRegs *rr = ll_regs_of(l, rt);
    if (!rt->rank || !ot->rank) { /* scalar <-> 1-element tensor: every thread holds the element */
        LLVMValueRef *res = ll_new(l, i->res[0], rr->n);
        for (int r = 0; r < rr->n; r++) res[r] = src[0];
        return true;
    }
    if (i->op == OP_CONVERT_LAYOUT && layout_convert_is_local(ot, rt)) {
        /* every element stays in its thread: pick registers (e.g. an mma accumulator
         * becoming the A fragments of the next dot) */
        const LayoutRegs *orr = ll_regs_of(l, ot);
        LLVMValueRef *res = ll_new(l, i->res[0], rr->n);
        for (int r = 0; r < rr->n; r++) res[r] = src[layout_regs_find(orr, rr->stat[r])];
        return true;
    }
    if (!have_scratch(l, i, (int)(tir_type_numel(ot) * dtype_bytes(ot->dt)))) return false;
    ll_smem_write_tensor(l, ot, src, i->a.smem_offset);
    ll_barrier(l);
    LLVMValueRef *res = ll_new(l, i->res[0], rr->n);
    ll_smem_read_tensor(l, rt, res, i->a.smem_offset);
    return true;
}

/* stack and unstack: the round trip of convert_layout, in slabs.  The stack [n, ...] lies row-major
 * in scratch, so slab k (the tensor at index k of dim 0) starts at k times a slab's bytes and is
 * itself row-major in the slab's shape: unstack writes its operand whole and each result reads its
 * slab; stack writes each operand into its slab and reads the result whole.  One write and one read
 * of every element, whatever n is. */
static bool emit_stacking(LL *l, Inst *i) {
    Func *f = l->f;
    const Type *whole = tir_vtype(f, i->op == OP_STACK ? i->res[0] : i->ops[0]);
    int n = whole->shape[0], eb = dtype_bytes(whole->dt);
    int slab = (int)(tir_type_numel(whole) / n) * eb;
    int g = smem_stack_chunk(f, i); /* slabs at a time (smem_alloc sized the scratch so): n, or chunks of g */
    for (int k = 0; k < n; k++)
        if (!has_layout(l, i, tir_vtype(f, i->op == OP_STACK ? i->ops[k] : i->res[k]))) return false;
    if (!has_layout(l, i, whole) || !have_scratch(l, i, slab * g)) return false;
    LLVMValueRef *res = i->op == OP_STACK ? ll_new(l, i->res[0], ll_regs_of(l, whole)->n) : NULL;
    LLVMValueRef *src = i->op == OP_UNSTACK ? ll_get(l, i->ops[0], NULL) : NULL;
    for (int k0 = 0; k0 < n; k0 += g) {
        if (k0) ll_barrier(l); /* the previous chunk is read before its scratch is written again */
        int off = i->a.smem_offset;
        if (i->op == OP_UNSTACK) {
            write_window(l, whole, src, off, k0, k0 + g);
            ll_barrier(l);
            for (int k = k0; k < k0 + g; k++) {
                const Type *rt = tir_vtype(f, i->res[k]);
                ll_smem_read_tensor(l, rt, ll_new(l, i->res[k], ll_regs_of(l, rt)->n), off + (k - k0) * slab);
            }
        } else {
            for (int k = k0; k < k0 + g; k++)
                ll_smem_write_tensor(l, tir_vtype(f, i->ops[k]), ll_get(l, i->ops[k], NULL), off + (k - k0) * slab);
            ll_barrier(l);
            read_window(l, whole, res, off, k0, k0 + g);
        }
    }
    return true;
}

static LLVMValueRef shfl_elem(LL *l, const char *kind, LLVMValueRef v, LLVMValueRef arg);

/* gather: the source goes to scratch row-major (as convert_layout's step 1), barrier, then
 * each result register loads src at its own coordinate with the axis coordinate replaced by
 * the index register's value, wrapped modulo the axis size (a power of two) so no index
 * reads outside the buffer. */
static bool emit_gather(LL *l, Inst *i) {
    const Type *st = tir_vtype(l->f, i->ops[0]), *xt = tir_vtype(l->f, i->ops[1]), *rt = tir_vtype(l->f, i->res[0]);
    if (!has_layout(l, i, st) || !has_layout(l, i, rt)) return false;
    if (xt->layout != rt->layout) {
        ll_error(l, i->loc, "internal error: gather's index and result layouts differ");
        return false;
    }
    int eb = dtype_bytes(st->dt);
    int n;
    LLVMValueRef *src = ll_get(l, i->ops[0], &n);
    int ax = (int)i->a.ival, j = (int)i->a.ival2;
    int where = j && st->layout == rt->layout ? layout_xor_partner(st, ax, j) : 0;
    if (where) { /* the butterfly partner: another register of this thread, or a lane's */
        const LayoutRegs *lr = ll_regs_of(l, st);
        ThreadTerm tt = layout_thread_term(st->layout, ax);
        LLVMValueRef *res = ll_new(l, i->res[0], lr->n);
        for (int r = 0; r < lr->n; r++) {
            if (where == 2) {
                res[r] = shfl_elem(l, "bfly", src[r], ll_i32(l, tt.lane_stride * (j / tt.lane_mul)));
                continue;
            }
            int32_t c[TIR_MAX_RANK];
            memcpy(c, lr->stat[r], sizeof c);
            c[ax] ^= j;
            int q = layout_regs_find(lr, c);
            if (q < 0) {
                ll_error(l, i->loc, "internal error: gather xor=%d finds no partner register", j);
                return false;
            }
            res[r] = src[q];
        }
        return true;
    }
    if (!have_scratch(l, i, (int)(tir_type_numel(st) * eb))) return false;
    LLVMValueRef *idx = ll_get(l, i->ops[1], &n);
    ll_smem_write_tensor(l, st, src, i->a.smem_offset);
    ll_barrier(l);
    const LayoutRegs *rr = ll_regs_of(l, rt);
    LLVMValueRef *res = ll_new(l, i->res[0], rr->n);
    LLVMTypeRef et = smem_type(l, st->dt);
    for (int r = 0; r < rr->n; r++) {
        LLVMValueRef lin = ll_i32(l, 0);
        int64_t stride = 1;
        for (int d = st->rank - 1; d >= 0; d--) {
            LLVMValueRef c = d == ax ? LLVMBuildAnd(l->b, idx[r], ll_i32(l, st->shape[d] - 1), "") : ll_coord(l, rt, r, d);
            lin = LLVMBuildAdd(l->b, lin, LLVMBuildMul(l->b, c, ll_i32(l, (int32_t)stride), ""), "");
            stride *= st->shape[d];
        }
        LLVMValueRef byte = LLVMBuildMul(l->b, lin, ll_i32(l, eb), "");
        res[r] = from_smem(l, ld_shared(l, et, i->a.smem_offset, byte, (unsigned)eb), st->dt);
    }
    return true;
}

/* ---- combining values: the accumulation type of a reduction or scan ---- */

typedef struct Red {
    RedKind kind;
    DType dt;        /* element type */
    LLVMTypeRef at;  /* accumulation type */
    bool fp, sgn, arg;
} Red;

static bool red_init(LL *l, Inst *i, Red *k, DType dt, RedKind kind) {
    k->kind = kind;
    k->dt = dt;
    k->fp = dtype_is_float(dt);
    k->sgn = dtype_is_signed(dt);
    k->arg = tir_red_is_arg(kind);
    if (dt == DT_PTR || dtype_is_storage(dt) || dt == DT_VOID) {
        ll_error(l, i->loc, "%s of %s elements is not supported", tir_op_info[i->op].name, dtype_name(dt));
        return false;
    }
    if (kind != RED_SUM && kind != RED_MAX && kind != RED_MIN && !k->arg) {
        ll_error(l, i->loc, "%s kind '%s' is not supported", tir_op_info[i->op].name, tir_red_names[kind]);
        return false;
    }
    if (k->fp) k->at = dt == DT_F64 ? l->t_f64 : l->t_f32;
    else k->at = dtype_bits(dt) > 32 ? l->t_i64 : l->t_i32;
    return true;
}

/* An argmax/argmin returns x[index] bit for bit, but f16/bf16 values are compared as f32: exact for numbers, while
 * converting a NaN would lose its sign and payload (PTX's cvt gives the canonical NaN).  Such a NaN is carried as
 * the f32 quiet NaN whose low 16 bits are the element's own bits, and narrowed back from them. */
static bool red_keeps_nan_bits(const Red *k) { return k->arg && k->fp && dtype_bits(k->dt) == 16; }

static LLVMValueRef red_widen(LL *l, const Red *k, LLVMValueRef v) {
    if (LLVMTypeOf(v) == k->at) return v;
    if (red_keeps_nan_bits(k)) {
        LLVMValueRef w = LLVMBuildFPExt(l->b, v, k->at, "");
        LLVMValueRef bits = LLVMBuildZExt(l->b, LLVMBuildBitCast(l->b, v, l->t_i16, ""), l->t_i32, "");
        LLVMValueRef nan = LLVMBuildBitCast(l->b, LLVMBuildOr(l->b, bits, ll_i32(l, 0x7fc00000), ""), k->at, "");
        return LLVMBuildSelect(l->b, LLVMBuildFCmp(l->b, LLVMRealUNO, w, w, ""), nan, w, "");
    }
    if (k->fp) return LLVMBuildFPExt(l->b, v, k->at, "");
    return k->sgn ? LLVMBuildSExt(l->b, v, k->at, "") : LLVMBuildZExt(l->b, v, k->at, "");
}

static LLVMValueRef red_narrow(LL *l, const Red *k, LLVMValueRef v) {
    LLVMTypeRef et = ll_type(l, k->dt);
    if (et == k->at) return v;
    if (red_keeps_nan_bits(k)) {
        LLVMValueRef bits = LLVMBuildTrunc(l->b, LLVMBuildBitCast(l->b, v, l->t_i32, ""), l->t_i16, "");
        LLVMValueRef nan = LLVMBuildBitCast(l->b, bits, et, "");
        return LLVMBuildSelect(l->b, LLVMBuildFCmp(l->b, LLVMRealUNO, v, v, ""), nan, LLVMBuildFPTrunc(l->b, v, et, ""), "");
    }
    return k->fp ? LLVMBuildFPTrunc(l->b, v, et, "") : LLVMBuildTrunc(l->b, v, et, "");
}

/* Identity of the combine in the accumulation type. */
static LLVMValueRef red_identity(LL *l, const Red *k) {
    bool max = k->kind == RED_MAX || k->kind == RED_ARGMAX;
    if (k->kind == RED_SUM) return k->fp ? LLVMConstReal(k->at, -0.0) : LLVMConstInt(k->at, 0, 0);
    if (k->fp) return LLVMConstReal(k->at, max ? -INFINITY : INFINITY);
    int bits = dtype_bits(k->dt);
    unsigned long long all = bits >= 64 ? ~0ull : (1ull << bits) - 1; /* in the element's width, then extended */
    unsigned long long v;
    if (k->sgn) v = max ? ~(all >> 1) : all >> 1;
    else v = max ? 0 : all;
    LLVMValueRef c = LLVMConstInt(ll_type(l, k->dt), v, 0);
    return red_widen(l, k, c);
}

typedef struct Acc {
    LLVMValueRef v, idx; /* idx: arg kinds only */
} Acc;

static LLVMValueRef cmp_gt(LL *l, const Red *k, LLVMValueRef a, LLVMValueRef b) {
    if (k->fp) return LLVMBuildFCmp(l->b, LLVMRealOGT, a, b, "");
    return LLVMBuildICmp(l->b, k->sgn ? LLVMIntSGT : LLVMIntUGT, a, b, "");
}

/* a (+) b, where a holds the earlier elements.  NULL is the identity. */
static Acc red_combine(LL *l, const Red *k, Acc a, Acc b) {
    if (!a.v) return b;
    if (!b.v) return a;
    LLVMTypeRef ty = k->at;
    switch (k->kind) {
    case RED_SUM:
        return (Acc){k->fp ? LLVMBuildFAdd(l->b, a.v, b.v, "") : LLVMBuildAdd(l->b, a.v, b.v, ""), NULL};
    case RED_MAX:
    case RED_MIN: {
        bool max = k->kind == RED_MAX;
        if (k->fp) {
            LLVMValueRef args[2] = {a.v, b.v};
            return (Acc){ll_intr(l, max ? "llvm.maximum" : "llvm.minimum", &ty, 1, args, 2), NULL};
        }
        LLVMValueRef take_b = max ? cmp_gt(l, k, b.v, a.v) : cmp_gt(l, k, a.v, b.v);
        return (Acc){LLVMBuildSelect(l->b, take_b, b.v, a.v, ""), NULL};
    }
    default: {
        /* arg kinds: b wins when strictly better, or equal with a smaller index; NaN is better than
         * any number (argmax: NaN is the maximum; argmin: NaN propagates like min) */
        bool max = k->kind == RED_ARGMAX;
        LLVMValueRef better = max ? cmp_gt(l, k, b.v, a.v) : cmp_gt(l, k, a.v, b.v);
        LLVMValueRef eq;
        if (k->fp) {
            LLVMValueRef na = LLVMBuildFCmp(l->b, LLVMRealUNO, a.v, a.v, "");
            LLVMValueRef nb = LLVMBuildFCmp(l->b, LLVMRealUNO, b.v, b.v, "");
            LLVMValueRef nan_b_only = LLVMBuildAnd(l->b, nb, LLVMBuildNot(l->b, na, ""), "");
            better = LLVMBuildOr(l->b, better, nan_b_only, "");
            eq = LLVMBuildOr(l->b, LLVMBuildFCmp(l->b, LLVMRealOEQ, a.v, b.v, ""), LLVMBuildAnd(l->b, na, nb, ""), "");
        } else {
            eq = LLVMBuildICmp(l->b, LLVMIntEQ, a.v, b.v, "");
        }
        LLVMValueRef lower = LLVMBuildICmp(l->b, LLVMIntSLT, b.idx, a.idx, "");
        LLVMValueRef take_b = LLVMBuildOr(l->b, better, LLVMBuildAnd(l->b, eq, lower, ""), "");
        return (Acc){LLVMBuildSelect(l->b, take_b, b.v, a.v, ""), LLVMBuildSelect(l->b, take_b, b.idx, a.idx, "")};
    }
    }
}

/* ---- warp shuffles of any accumulation type ---- */

/* kind: "bfly" (arg = xor mask) or "idx" (arg = source lane). */
static LLVMValueRef shfl32(LL *l, const char *kind, LLVMValueRef v, LLVMValueRef arg) {
    char name[64];
    bool f = LLVMTypeOf(v) == l->t_f32;
    snprintf(name, sizeof name, "llvm.nvvm.shfl.sync.%s.%s", kind, f ? "f32" : "i32");
    LLVMValueRef args[4] = {ll_i32(l, -1), v, arg, ll_i32(l, 0x1f)};
    return ll_intr(l, name, NULL, 0, args, 4);
}

static LLVMValueRef shfl(LL *l, const char *kind, LLVMValueRef v, LLVMValueRef arg) {
    LLVMTypeRef ty = LLVMTypeOf(v);
    if (ty == l->t_i32 || ty == l->t_f32) return shfl32(l, kind, v, arg);
    if (ty == l->t_i64 || ty == l->t_f64) {
        LLVMValueRef x = ty == l->t_f64 ? LLVMBuildBitCast(l->b, v, l->t_i64, "") : v;
        LLVMValueRef lo = LLVMBuildTrunc(l->b, x, l->t_i32, "");
        LLVMValueRef hi = LLVMBuildTrunc(l->b, LLVMBuildLShr(l->b, x, LLVMConstInt(l->t_i64, 32, 0), ""), l->t_i32, "");
        lo = LLVMBuildZExt(l->b, shfl32(l, kind, lo, arg), l->t_i64, "");
        hi = LLVMBuildZExt(l->b, shfl32(l, kind, hi, arg), l->t_i64, "");
        LLVMValueRef r = LLVMBuildOr(l->b, lo, LLVMBuildShl(l->b, hi, LLVMConstInt(l->t_i64, 32, 0), ""), "");
        return ty == l->t_f64 ? LLVMBuildBitCast(l->b, r, l->t_f64, "") : r;
    }
    unreachable("shuffle of an unexpected type");
}

static Acc shfl_acc(LL *l, const char *kind, Acc a, LLVMValueRef arg) {
    Acc r = {shfl(l, kind, a.v, arg), NULL};
    if (a.idx) r.idx = shfl(l, kind, a.idx, arg);
    return r;
}

static int log2i(int v) { return v > 1 ? 31 - __builtin_clz((unsigned)v) : 0; }

/* Distinct lane positions along dim d of a tensor of type t (others replicate). */
static int lanes_along(const Type *t, int d) {
    ThreadTerm tt = layout_thread_term(t->layout, d);
    if (tt.lane_count <= 1 || tt.lane_mul <= 0) return 1;
    int distinct = t->shape[d] / tt.lane_mul;
    if (distinct < 1) distinct = 1;
    return distinct < tt.lane_count ? distinct : tt.lane_count;
}

/* This thread's lane (or warp) position along d, modulo the distinct positions. */
static LLVMValueRef pos_along(LL *l, LLVMValueRef id, int stride, int distinct) {
    LLVMValueRef v = LLVMBuildLShr(l->b, id, ll_i32(l, log2i(stride)), "");
    return LLVMBuildAnd(l->b, v, ll_i32(l, distinct - 1), "");
}

/* Group the canonical registers of t (no in-thread replica) by stat without dim ax.
 * grp[r] = group of register r or -1; returns the group count, rep[g] one member. */
static int group_regs(const LayoutRegs *lr, const Type *t, int ax, int *grp, int *rep) {
    int ng = 0;
    for (int r = 0; r < lr->n; r++) {
        grp[r] = -1;
        if (is_replica(lr, t, r)) continue;
        for (int g = 0; g < ng && grp[r] < 0; g++) {
            bool eq = true;
            for (int d = 0; d < t->rank && eq; d++)
                if (d != ax) eq = lr->stat[rep[g]][d] == lr->stat[r][d];
            if (eq) grp[r] = g;
        }
        if (grp[r] < 0) {
            rep[ng] = r;
            grp[r] = ng++;
        }
    }
    return ng;
}

/* Scratch slots of the cross-warp step: values at off, arg indices (i32) before them. */
typedef struct Slots {
    int val_off, idx_off, W;
    LLVMValueRef wpos;
} Slots;

/* Partials are kept in the accumulation type (f16 sums stay f32 until the end). */
static int acc_bytes(const Red *k) { return dtype_bits(k->dt) > 32 ? 8 : 4; }

static void slot_store(LL *l, const Red *k, const Slots *s, LLVMValueRef pred, LLVMValueRef row, Acc a) {
    LLVMValueRef slot = LLVMBuildAdd(l->b, LLVMBuildMul(l->b, row, ll_i32(l, s->W), ""), s->wpos, "");
    int eb = acc_bytes(k);
    st_shared_if(l, pred, a.v, NULL, s->val_off, LLVMBuildMul(l->b, slot, ll_i32(l, eb), ""), (unsigned)eb);
    if (a.idx) st_shared_if(l, pred, a.idx, NULL, s->idx_off, LLVMBuildMul(l->b, slot, ll_i32(l, 4), ""), 4);
}

/* The one thread that stores group partials of canonical register r for the cross-warp step:
 * lane position 0 along ax, a warp position below W, and no wrapped thread term in the other dims. */
static LLVMValueRef slot_writer(LL *l, const Type *t, int r, int ax, int W) {
    const LayoutRegs *lr = ll_regs_of(l, t);
    ThreadTerm tt = layout_thread_term(t->layout, ax);
    LLVMValueRef p = LLVMConstInt(l->t_i1, 1, 0);
    if (tt.lane_count > 1) {
        LLVMValueRef lp = LLVMBuildAnd(l->b, LLVMBuildLShr(l->b, l->lane, ll_i32(l, log2i(tt.lane_stride)), ""),
                                       ll_i32(l, tt.lane_count - 1), "");
        p = LLVMBuildAnd(l->b, p, LLVMBuildICmp(l->b, LLVMIntEQ, lp, ll_i32(l, 0), ""), "");
    }
    if (tt.warp_count > W) {
        LLVMValueRef wp = LLVMBuildAnd(l->b, LLVMBuildLShr(l->b, l->warp, ll_i32(l, log2i(tt.warp_stride)), ""),
                                       ll_i32(l, tt.warp_count - 1), "");
        p = LLVMBuildAnd(l->b, p, LLVMBuildICmp(l->b, LLVMIntULT, wp, ll_i32(l, W), ""), "");
    }
    for (int d = 0; d < t->rank; d++) {
        if (d == ax || layout_coverage(t->layout, d) <= t->shape[d]) continue;
        LLVMValueRef raw = LLVMBuildAdd(l->b, ll_i32(l, lr->raw[r][d]), ll_thread_term(l, t->layout, d), "");
        p = LLVMBuildAnd(l->b, p, LLVMBuildICmp(l->b, LLVMIntULT, raw, ll_i32(l, t->shape[d]), ""), "");
    }
    /* a slice operand is replicated across its parent's removed dims */
    for (const Layout *lay = t->layout; lay->kind == LAYOUT_SLICE; lay = lay->parent) {
        LLVMValueRef tt0 = ll_thread_term(l, lay->parent, lay->dim);
        p = LLVMBuildAnd(l->b, p, LLVMBuildICmp(l->b, LLVMIntEQ, tt0, ll_i32(l, 0), ""), "");
    }
    return p;
}

static Acc slot_load(LL *l, const Red *k, const Slots *s, LLVMValueRef row, int w) {
    LLVMValueRef slot = LLVMBuildAdd(l->b, LLVMBuildMul(l->b, row, ll_i32(l, s->W), ""), ll_i32(l, w), "");
    int eb = acc_bytes(k);
    Acc a = {ld_shared(l, k->at, s->val_off, LLVMBuildMul(l->b, slot, ll_i32(l, eb), ""), (unsigned)eb), NULL};
    if (k->arg) a.idx = ld_shared(l, l->t_i32, s->idx_off, LLVMBuildMul(l->b, slot, ll_i32(l, 4), ""), 4);
    return a;
}

static bool slots_init(LL *l, Inst *i, const Red *k, const Type *ot, int ax, Slots *s) {
    int W = smem_warps_along(ot, ax);
    s->W = W;
    if (W <= 1) return true;
    int rows = (int)(tir_type_numel(ot) / ot->shape[ax]);
    int n = rows * W;
    if (!have_scratch(l, i, n * (acc_bytes(k) + (k->arg ? 4 : 0)))) return false;
    /* n is even (W >= 2), so 4*n keeps 8-byte values aligned */
    s->idx_off = i->a.smem_offset;
    s->val_off = i->a.smem_offset + (k->arg ? 4 * n : 0);
    ThreadTerm tt = layout_thread_term(ot->layout, ax);
    s->wpos = pos_along(l, l->warp, tt.warp_stride, W);
    return true;
}

/* ---- reduce ---- */

static bool emit_reduce(LL *l, Inst *i) {
    const Type *ot = tir_vtype(l->f, i->ops[0]), *rt = tir_vtype(l->f, i->res[0]);
    int ax = (int)i->a.ival;
    Red k;
    if (!has_layout(l, i, ot) || !red_init(l, i, &k, ot->dt, (RedKind)i->a.ival2)) return false;
    const Layout *rl = rt->rank ? rt->layout : NULL;
    if (rt->rank && (!rl || rl->kind != LAYOUT_SLICE || rl->dim != ax || rl->parent != ot->layout)) {
        ll_error(l, i->loc, "internal error: reduce result must be in the slice of its operand's layout along axis %d", ax);
        return false;
    }
    if (i->nres > 1 && (!k.arg || tir_vtype(l->f, i->res[1])->layout != rt->layout)) {
        ll_error(l, i->loc, "internal error: a second reduce result is %s's value, in the layout of the index",
                 k.arg ? tir_red_names[k.kind] : "argmax or argmin");
        return false;
    }
    int n;
    LLVMValueRef *src = ll_get(l, i->ops[0], &n);
    const LayoutRegs *lr = ll_regs_of(l, ot);
    int *grp = calloc((size_t)lr->n * 2 + 1, sizeof(int)), *rep = grp + lr->n;
    Acc *acc = calloc((size_t)lr->n + 1, sizeof(Acc));
    if (!grp || !acc) out_of_memory();
    int ng = group_regs(lr, ot, ax, grp, rep);

    /* 1. in-thread */
    for (int r = 0; r < lr->n; r++) {
        if (grp[r] < 0) continue;
        Acc x = {red_widen(l, &k, src[r]), k.arg ? ll_coord(l, ot, r, ax) : NULL};
        acc[grp[r]] = red_combine(l, &k, acc[grp[r]], x);
    }
    /* 2. across lanes */
    ThreadTerm tt = layout_thread_term(ot->layout, ax);
    int D = lanes_along(ot, ax);
    for (int s = 1; s < D; s *= 2)
        for (int g = 0; g < ng; g++) {
            Acc o = shfl_acc(l, "bfly", acc[g], ll_i32(l, tt.lane_stride * s));
            acc[g] = red_combine(l, &k, acc[g], o);
        }
    /* 3. across warps */
    Slots sl;
    bool ok = slots_init(l, i, &k, ot, ax, &sl);
    if (ok && sl.W > 1) {
        LLVMValueRef *row = calloc((size_t)ng + 1, sizeof *row);
        for (int g = 0; g < ng; g++) {
            row[g] = linear_index(l, ot, rep[g], ax);
            slot_store(l, &k, &sl, slot_writer(l, ot, rep[g], ax, sl.W), row[g], acc[g]);
        }
        ll_barrier(l);
        for (int g = 0; g < ng; g++) {
            Acc a = {0};
            for (int w = 0; w < sl.W; w++) a = red_combine(l, &k, a, slot_load(l, &k, &sl, row[g], w));
            acc[g] = a;
        }
        free(row);
    }
    /* 4. result registers in the slice's order */
    if (ok) {
        const LayoutRegs *rr = ll_regs_of(l, rt);
        LLVMValueRef *res = ll_new(l, i->res[0], rr->n), *val = i->nres > 1 ? ll_new(l, i->res[1], rr->n) : NULL;
        for (int r = 0; r < rr->n; r++) {
            int g = 0;
            if (rt->rank) {
                for (g = 0; g < ng; g++) {
                    bool eq = true;
                    for (int d = 0, s = 0; d < ot->rank && eq; d++)
                        if (d != ax) eq = lr->stat[rep[g]][d] == rr->stat[r][s++];
                    if (eq) break;
                }
            }
            if (g == ng) {
                ll_error(l, i->loc, "internal error: reduce result register %d has no source group", r);
                ok = false;
                break;
            }
            /* arg kinds: the index, and as result 1 the value it came with, x[argmax] bit for bit */
            res[r] = k.arg ? acc[g].idx : red_narrow(l, &k, acc[g].v);
            if (val) val[r] = red_narrow(l, &k, acc[g].v);
        }
    }
    free(grp);
    free(acc);
    return ok;
}

/* ---- scan ---- */

static bool emit_scan(LL *l, Inst *i) {
    const Type *t = tir_vtype(l->f, i->ops[0]);
    int ax = (int)i->a.ival;
    Red k;
    if (!has_layout(l, i, t) || !red_init(l, i, &k, t->dt, (RedKind)i->a.ival2)) return false;
    if (k.arg) {
        ll_error(l, i->loc, "scan kind '%s' is not supported", tir_red_names[k.kind]);
        return false;
    }
    if (tir_vtype(l->f, i->res[0]) != t) {
        ll_error(l, i->loc, "internal error: scan result type differs from its operand's");
        return false;
    }
    if (layout_root(t->layout)->kind != LAYOUT_BLOCKED) { /* assign_layout's choice: see the steps below */
        ll_error(l, i->loc, "internal error: scan operand must be in a blocked layout (or a slice of one)");
        return false;
    }
    int n;
    LLVMValueRef *src = ll_get(l, i->ops[0], &n);
    const LayoutRegs *lr = ll_regs_of(l, t);
    int *grp = calloc((size_t)lr->n * 2 + 1, sizeof(int)), *rep = grp + lr->n;
    LLVMValueRef *out = calloc((size_t)lr->n + 1, sizeof *out);
    if (!grp || !out) out_of_memory();
    int ng = group_regs(lr, t, ax, grp, rep);
    Acc *carry = calloc((size_t)ng + 1, sizeof(Acc)), *local = calloc((size_t)ng + 1, sizeof(Acc));
    Acc *lane_ex = calloc((size_t)ng + 1, sizeof(Acc)), *wtot = calloc((size_t)ng + 1, sizeof(Acc));
    LLVMValueRef *row = calloc((size_t)ng + 1, sizeof *row);
    if (!carry || !local || !lane_ex || !wtot || !row) out_of_memory();

    /* canonical registers in axis order (stable insertion sort) */
    int *ord = calloc((size_t)lr->n + 1, sizeof(int)), nord = 0;
    if (!ord) out_of_memory();
    for (int r = 0; r < lr->n; r++) {
        if (grp[r] < 0) continue;
        int q = nord++;
        for (; q > 0 && lr->raw[ord[q - 1]][ax] > lr->raw[r][ax]; q--) ord[q] = ord[q - 1];
        ord[q] = r;
    }
    ThreadTerm tt = layout_thread_term(t->layout, ax);
    int D = lanes_along(t, ax);
    int cov = layout_coverage(t->layout, ax);
    int reps = t->shape[ax] / cov;
    if (reps < 1) reps = 1;
    LLVMValueRef e = pos_along(l, l->lane, tt.lane_stride, D);
    Slots sl;
    bool ok = slots_init(l, i, &k, t, ax, &sl);
    if (ok && sl.W > 1)
        for (int g = 0; g < ng; g++) row[g] = linear_index(l, t, rep[g], ax);
    LLVMValueRef ident = red_identity(l, &k);

    for (int j = 0; ok && j < reps; j++) {
        /* 1. in-thread inclusive prefix of this rep, in axis order */
        for (int g = 0; g < ng; g++) local[g] = (Acc){0};
        for (int q = 0; q < nord; q++) {
            int r = ord[q];
            if (lr->raw[r][ax] / cov != j) continue;
            Acc x = {red_widen(l, &k, src[r]), NULL};
            local[grp[r]] = red_combine(l, &k, local[grp[r]], x);
            out[r] = local[grp[r]].v; /* in-thread inclusive; prefixed below */
        }
        /* 2. across lanes: Hillis-Steele over the D lane positions */
        for (int g = 0; g < ng; g++) {
            lane_ex[g] = (Acc){0};
            wtot[g] = local[g];
            if (D <= 1) continue;
            LLVMValueRef incl = local[g].v;
            for (int s = 1; s < D; s *= 2) {
                LLVMValueRef has = LLVMBuildICmp(l->b, LLVMIntUGE, e, ll_i32(l, s), "");
                LLVMValueRef srcl = LLVMBuildSelect(l->b, has, LLVMBuildSub(l->b, l->lane, ll_i32(l, s * tt.lane_stride), ""),
                                                    l->lane, "");
                LLVMValueRef y = shfl(l, "idx", incl, srcl);
                LLVMValueRef sum = red_combine(l, &k, (Acc){y, NULL}, (Acc){incl, NULL}).v;
                incl = LLVMBuildSelect(l->b, has, sum, incl, "");
            }
            LLVMValueRef has = LLVMBuildICmp(l->b, LLVMIntUGE, e, ll_i32(l, 1), "");
            LLVMValueRef prev = LLVMBuildSelect(l->b, has, LLVMBuildSub(l->b, l->lane, ll_i32(l, tt.lane_stride), ""),
                                                l->lane, "");
            LLVMValueRef ex = shfl(l, "idx", incl, prev);
            lane_ex[g].v = LLVMBuildSelect(l->b, has, ex, ident, "");
            /* the warp's total sits at lane position D-1 */
            LLVMValueRef lastl = LLVMBuildAdd(
                l->b, l->lane, LLVMBuildMul(l->b, LLVMBuildSub(l->b, ll_i32(l, D - 1), e, ""), ll_i32(l, tt.lane_stride), ""), "");
            wtot[g].v = shfl(l, "idx", incl, lastl);
        }
        /* 3. across warps */
        Acc *warp_ex = calloc((size_t)ng + 1, sizeof(Acc)), *rep_tot = calloc((size_t)ng + 1, sizeof(Acc));
        if (!warp_ex || !rep_tot) out_of_memory();
        if (sl.W > 1) {
            if (j > 0) ll_barrier(l); /* the previous rep's reads are done */
            for (int g = 0; g < ng; g++) slot_store(l, &k, &sl, slot_writer(l, t, rep[g], ax, sl.W), row[g], wtot[g]);
            ll_barrier(l);
            for (int g = 0; g < ng; g++) {
                Acc ex = {ident, NULL}, all = {0};
                for (int w = 0; w < sl.W; w++) {
                    Acc v = slot_load(l, &k, &sl, row[g], w);
                    if (w < sl.W - 1) {
                        LLVMValueRef before = LLVMBuildICmp(l->b, LLVMIntULT, ll_i32(l, w), sl.wpos, "");
                        ex = red_combine(l, &k, ex, (Acc){LLVMBuildSelect(l->b, before, v.v, ident, ""), NULL});
                    }
                    all = red_combine(l, &k, all, v);
                }
                warp_ex[g] = ex;
                rep_tot[g] = all;
            }
        } else {
            for (int g = 0; g < ng; g++) rep_tot[g] = wtot[g];
        }
        /* 4. prefix every element of this rep, carry the rep's total */
        for (int g = 0; g < ng; g++) {
            Acc pre = red_combine(l, &k, red_combine(l, &k, carry[g], warp_ex[g]), lane_ex[g]);
            for (int r = 0; r < lr->n; r++)
                if (grp[r] == g && lr->raw[r][ax] / cov == j && pre.v)
                    out[r] = red_combine(l, &k, pre, (Acc){out[r], NULL}).v;
            if (j + 1 < reps) carry[g] = red_combine(l, &k, carry[g], rep_tot[g]);
        }
        free(warp_ex);
        free(rep_tot);
    }
    if (ok) {
        LLVMValueRef *res = ll_new(l, i->res[0], lr->n);
        for (int r = 0; r < lr->n; r++) {
            int c = r;
            if (grp[r] < 0) { /* in-thread replica: copy the canonical register with the same stat */
                for (int q = 0; q < lr->n; q++) {
                    bool eq = grp[q] >= 0;
                    for (int d = 0; d < t->rank && eq; d++) eq = lr->stat[q][d] == lr->stat[r][d];
                    if (eq) {
                        c = q;
                        break;
                    }
                }
            }
            res[r] = red_narrow(l, &k, out[c]);
        }
    }
    free(ord);
    free(grp);
    free(out);
    free(carry);
    free(local);
    free(lane_ex);
    free(wtot);
    free(row);
    return ok;
}

/* ---- reduce_fn and scan_fn: the combine is the op's region (a user fn) ----
 *
 * The same steps as reduce and scan, on k values at once, with two differences:
 *   - no identity and no commutativity: the combine is only ever applied to
 *     neighbouring runs of elements, the earlier run first.  The operands are in a
 *     blocked layout (assign_layout), where along the axis a thread's registers of
 *     one repetition are contiguous, lane positions follow, then warp positions, then
 *     repetitions; so the reduction goes repetition by repetition (in-thread, lanes
 *     by butterfly with the lower lane's value first, warps in order through scratch)
 *     and folds the repetitions' totals in order;
 *   - a value that may be missing (a scan's exclusive prefixes) carries an i1 saying
 *     whether it is there; a combine with a missing side selects the other. */
enum { FN_MAXK = 16 };

typedef struct FnVal {
    LLVMValueRef v[FN_MAXK];
    LLVMValueRef ok; /* i1, NULL: present */
    bool some;       /* false: nothing yet (compile-time) */
} FnVal;

typedef struct Fn {
    Inst *i;
    int k;
    DType dt[FN_MAXK];
} Fn;

static LLVMValueRef sel(LL *l, LLVMValueRef c, LLVMValueRef a, LLVMValueRef b) { return c ? LLVMBuildSelect(l->b, c, a, b, "") : a; }

/* a (+) b, a the earlier run */
static FnVal fn_combine(LL *l, const Fn *F, FnVal a, FnVal b) {
    if (!a.some) return b;
    if (!b.some) return a;
    FnVal r = {.some = true};
    if (!ll_emit_combine(l, F->i->regions[0], F->k, a.v, b.v, r.v)) return a;
    for (int j = 0; j < F->k; j++) {
        /* missing a: b; missing b: a */
        if (b.ok) r.v[j] = sel(l, b.ok, r.v[j], a.v[j]);
        if (a.ok) r.v[j] = sel(l, a.ok, r.v[j], b.v[j]);
    }
    r.ok = a.ok && b.ok ? LLVMBuildOr(l->b, a.ok, b.ok, "") : NULL;
    return r;
}

/* Shuffle of any scalar element type (narrow ones widened to 32 bits). */
static LLVMValueRef shfl_elem(LL *l, const char *kind, LLVMValueRef v, LLVMValueRef arg) {
    LLVMTypeRef ty = LLVMTypeOf(v);
    if (ty == l->t_i32 || ty == l->t_f32 || ty == l->t_i64 || ty == l->t_f64) return shfl(l, kind, v, arg);
    LLVMTypeKind tk = LLVMGetTypeKind(ty);
    if (tk == LLVMPointerTypeKind)
        return LLVMBuildIntToPtr(l->b, shfl(l, kind, LLVMBuildPtrToInt(l->b, v, l->t_i64, ""), arg), ty, "");
    if (tk == LLVMIntegerTypeKind) /* i1, i8, i16 */
        return LLVMBuildTrunc(l->b, shfl(l, kind, LLVMBuildZExt(l->b, v, l->t_i32, ""), arg), ty, "");
    /* f16, bf16: through their 16 bits */
    LLVMTypeRef i16 = LLVMInt16TypeInContext(l->ctx);
    LLVMValueRef x = LLVMBuildZExt(l->b, LLVMBuildBitCast(l->b, v, i16, ""), l->t_i32, "");
    return LLVMBuildBitCast(l->b, LLVMBuildTrunc(l->b, shfl(l, kind, x, arg), i16, ""), ty, "");
}

static FnVal fn_shfl(LL *l, const Fn *F, const char *kind, FnVal a, LLVMValueRef arg) {
    FnVal r = a;
    for (int j = 0; j < F->k; j++) r.v[j] = shfl_elem(l, kind, a.v[j], arg);
    if (a.ok) r.ok = LLVMBuildTrunc(l->b, shfl(l, kind, LLVMBuildZExt(l->b, a.ok, l->t_i32, ""), arg), l->t_i1, "");
    return r;
}

/* Cross-warp slots: operand j of (row, warp position w) at off + ((j * rows + row) * W + w) * 8. */
static void fn_slot_store(LL *l, const Fn *F, int off, int rows, int W, LLVMValueRef pred, LLVMValueRef row, LLVMValueRef w, FnVal a) {
    for (int j = 0; j < F->k; j++) {
        LLVMValueRef slot = LLVMBuildAdd(l->b, LLVMBuildMul(l->b, LLVMBuildAdd(l->b, row, ll_i32(l, j * rows), ""), ll_i32(l, W), ""), w, "");
        st_shared_if(l, pred, to_smem(l, a.v[j], F->dt[j]), NULL, off, LLVMBuildMul(l->b, slot, ll_i32(l, 8), ""), (unsigned)dtype_bytes(F->dt[j]));
    }
}

static FnVal fn_slot_load(LL *l, const Fn *F, int off, int rows, int W, LLVMValueRef row, int w) {
    FnVal a = {.some = true};
    for (int j = 0; j < F->k; j++) {
        LLVMValueRef slot = LLVMBuildAdd(l->b, LLVMBuildMul(l->b, LLVMBuildAdd(l->b, row, ll_i32(l, j * rows), ""), ll_i32(l, W), ""), ll_i32(l, w), "");
        a.v[j] = from_smem(l, ld_shared(l, smem_type(l, F->dt[j]), off, LLVMBuildMul(l->b, slot, ll_i32(l, 8), ""), (unsigned)dtype_bytes(F->dt[j])), F->dt[j]);
    }
    return a;
}

/* Checks shared by both, and the canonical registers of each group in axis order. */
typedef struct FnPlan {
    Fn F;
    const Type *t;
    int ax, n, ng, nord, D, W, reps, cov, rows;
    int *grp, *rep, *ord;
    LLVMValueRef *src[FN_MAXK];
    LLVMValueRef e, wpos, *row;
} FnPlan;

static bool fn_plan(LL *l, Inst *i, FnPlan *P) {
    memset(P, 0, sizeof *P);
    P->t = tir_vtype(l->f, i->ops[0]);
    P->ax = (int)i->a.ival;
    P->F.i = i;
    P->F.k = i->nops;
    if (i->nops > FN_MAXK) {
        ll_error(l, i->loc, "%s of more than %d tensors", tir_op_info[i->op].name, FN_MAXK);
        return false;
    }
    if (!has_layout(l, i, P->t)) return false;
    for (int j = 0; j < i->nops; j++) {
        const Type *tj = tir_vtype(l->f, i->ops[j]);
        if (tj->layout != P->t->layout || tj->layout->kind != LAYOUT_BLOCKED) {
            ll_error(l, i->loc, "internal error: %s operands must share one blocked layout", tir_op_info[i->op].name);
            return false;
        }
        P->F.dt[j] = tj->dt;
        P->src[j] = ll_get(l, i->ops[j], NULL);
    }
    const LayoutRegs *lr = ll_regs_of(l, P->t);
    P->n = lr->n;
    P->grp = calloc((size_t)lr->n * 3 + 1, sizeof(int));
    if (!P->grp) out_of_memory();
    P->rep = P->grp + lr->n;
    P->ord = P->rep + lr->n;
    P->ng = group_regs(lr, P->t, P->ax, P->grp, P->rep);
    for (int r = 0; r < lr->n; r++) {
        if (P->grp[r] < 0) continue;
        int q = P->nord++;
        for (; q > 0 && lr->raw[P->ord[q - 1]][P->ax] > lr->raw[r][P->ax]; q--) P->ord[q] = P->ord[q - 1];
        P->ord[q] = r;
    }
    ThreadTerm tt = layout_thread_term(P->t->layout, P->ax);
    P->D = lanes_along(P->t, P->ax);
    P->cov = layout_coverage(P->t->layout, P->ax);
    P->reps = P->t->shape[P->ax] / P->cov;
    if (P->reps < 1) P->reps = 1;
    P->e = pos_along(l, l->lane, tt.lane_stride, P->D);
    P->W = smem_warps_along(P->t, P->ax);
    P->rows = (int)(tir_type_numel(P->t) / P->t->shape[P->ax]);
    P->row = calloc((size_t)P->ng + 1, sizeof *P->row);
    if (!P->row) out_of_memory();
    if (P->W > 1) {
        if (!have_scratch(l, i, P->rows * P->W * 8 * P->F.k)) return false;
        P->wpos = pos_along(l, l->warp, tt.warp_stride, P->W);
        for (int g = 0; g < P->ng; g++) P->row[g] = linear_index(l, P->t, P->rep[g], P->ax);
    }
    return true;
}

static void fn_plan_free(FnPlan *P) {
    free(P->grp);
    free(P->row);
}

static FnVal reg_val(const FnPlan *P, int r) {
    FnVal x = {.some = true};
    for (int j = 0; j < P->F.k; j++) x.v[j] = P->src[j][r];
    return x;
}

static bool emit_reduce_fn(LL *l, Inst *i) {
    FnPlan P;
    bool ok = fn_plan(l, i, &P);
    const Fn *F = &P.F;
    const LayoutRegs *lr = ok ? ll_regs_of(l, P.t) : NULL;
    FnVal *total = calloc((size_t)P.ng + 1, sizeof(FnVal)), *acc = calloc((size_t)P.ng + 1, sizeof(FnVal));
    if (!total || !acc) out_of_memory();
    ThreadTerm tt = ok ? layout_thread_term(P.t->layout, P.ax) : (ThreadTerm){0};
    for (int j = 0; ok && j < P.reps; j++) {
        /* 1. in-thread, in axis order */
        for (int g = 0; g < P.ng; g++) acc[g] = (FnVal){0};
        for (int q = 0; q < P.nord; q++) {
            int r = P.ord[q];
            if (lr->raw[r][P.ax] / P.cov == j) acc[P.grp[r]] = fn_combine(l, F, acc[P.grp[r]], reg_val(&P, r));
        }
        /* 2. lanes: butterfly, the lane with bit s clear holds the earlier run */
        for (int s = 1; s < P.D; s *= 2) {
            LLVMValueRef upper = LLVMBuildICmp(l->b, LLVMIntNE, LLVMBuildAnd(l->b, P.e, ll_i32(l, s), ""), ll_i32(l, 0), "");
            for (int g = 0; g < P.ng; g++) {
                if (!acc[g].some) continue;
                FnVal o = fn_shfl(l, F, "bfly", acc[g], ll_i32(l, tt.lane_stride * s)), a = acc[g], b = o;
                for (int c = 0; c < F->k; c++) a.v[c] = sel(l, upper, o.v[c], acc[g].v[c]), b.v[c] = sel(l, upper, acc[g].v[c], o.v[c]);
                acc[g] = fn_combine(l, F, a, b);
            }
        }
        /* 3. warps, in order, through scratch */
        if (P.W > 1) {
            if (j > 0) ll_barrier(l);
            for (int g = 0; g < P.ng; g++)
                if (acc[g].some) fn_slot_store(l, F, i->a.smem_offset, P.rows, P.W, slot_writer(l, P.t, P.rep[g], P.ax, P.W), P.row[g], P.wpos, acc[g]);
            ll_barrier(l);
            for (int g = 0; g < P.ng; g++) {
                FnVal a = {0};
                for (int w = 0; w < P.W && acc[g].some; w++) a = fn_combine(l, F, a, fn_slot_load(l, F, i->a.smem_offset, P.rows, P.W, P.row[g], w));
                acc[g] = a;
            }
        }
        /* 4. after the earlier repetitions */
        for (int g = 0; g < P.ng; g++) total[g] = fn_combine(l, F, total[g], acc[g]);
    }
    /* 5. result registers in the slice's order */
    for (int k = 0; ok && k < i->nres; k++) {
        const Type *rt = tir_vtype(l->f, i->res[k]);
        const LayoutRegs *rr = ll_regs_of(l, rt);
        LLVMValueRef *res = ll_new(l, i->res[k], rr->n);
        for (int r = 0; r < rr->n; r++) {
            int g = 0;
            if (rt->rank)
                for (g = 0; g < P.ng; g++) {
                    bool eq = true;
                    for (int d = 0, s = 0; d < P.t->rank && eq; d++)
                        if (d != P.ax) eq = lr->stat[P.rep[g]][d] == rr->stat[r][s++];
                    if (eq) break;
                }
            if (g == P.ng || !total[g].some) {
                ll_error(l, i->loc, "internal error: reduce_fn result register %d has no source group", r);
                ok = false;
                break;
            }
            res[r] = total[g].v[k];
        }
    }
    free(total);
    free(acc);
    fn_plan_free(&P);
    return ok && !l->failed;
}

static bool emit_scan_fn(LL *l, Inst *i) {
    FnPlan P;
    bool ok = fn_plan(l, i, &P);
    const Fn *F = &P.F;
    const LayoutRegs *lr = ok ? ll_regs_of(l, P.t) : NULL;
    int ng = P.ng;
    FnVal *carry = calloc((size_t)ng + 1, sizeof(FnVal)), *local = calloc((size_t)ng + 1, sizeof(FnVal));
    FnVal *lane_ex = calloc((size_t)ng + 1, sizeof(FnVal)), *wtot = calloc((size_t)ng + 1, sizeof(FnVal));
    FnVal *warp_ex = calloc((size_t)ng + 1, sizeof(FnVal)), *rep_tot = calloc((size_t)ng + 1, sizeof(FnVal));
    FnVal *out = calloc((size_t)P.n + 1, sizeof(FnVal));
    if (!carry || !local || !lane_ex || !wtot || !warp_ex || !rep_tot || !out) out_of_memory();
    ThreadTerm tt = ok ? layout_thread_term(P.t->layout, P.ax) : (ThreadTerm){0};
    for (int j = 0; ok && j < P.reps; j++) {
        /* 1. in-thread inclusive prefix of this repetition */
        for (int g = 0; g < ng; g++) local[g] = (FnVal){0};
        for (int q = 0; q < P.nord; q++) {
            int r = P.ord[q];
            if (lr->raw[r][P.ax] / P.cov != j) continue;
            local[P.grp[r]] = fn_combine(l, F, local[P.grp[r]], reg_val(&P, r));
            out[r] = local[P.grp[r]];
        }
        /* 2. lanes: Hillis-Steele with indexed shuffles; the exclusive prefix from the
         * previous lane position (missing at position 0), the total from the last */
        for (int g = 0; g < ng; g++) {
            lane_ex[g] = (FnVal){0};
            wtot[g] = local[g];
            if (P.D <= 1 || !local[g].some) continue;
            FnVal incl = local[g];
            for (int s = 1; s < P.D; s *= 2) {
                LLVMValueRef has = LLVMBuildICmp(l->b, LLVMIntUGE, P.e, ll_i32(l, s), "");
                LLVMValueRef from = LLVMBuildSelect(l->b, has, LLVMBuildSub(l->b, l->lane, ll_i32(l, s * tt.lane_stride), ""), l->lane, "");
                FnVal y = fn_shfl(l, F, "idx", incl, from);
                y.ok = has;
                incl = fn_combine(l, F, y, incl);
            }
            LLVMValueRef has = LLVMBuildICmp(l->b, LLVMIntUGE, P.e, ll_i32(l, 1), "");
            LLVMValueRef prev = LLVMBuildSelect(l->b, has, LLVMBuildSub(l->b, l->lane, ll_i32(l, tt.lane_stride), ""), l->lane, "");
            lane_ex[g] = fn_shfl(l, F, "idx", incl, prev);
            lane_ex[g].ok = has;
            LLVMValueRef last = LLVMBuildAdd(
                l->b, l->lane, LLVMBuildMul(l->b, LLVMBuildSub(l->b, ll_i32(l, P.D - 1), P.e, ""), ll_i32(l, tt.lane_stride), ""), "");
            wtot[g] = fn_shfl(l, F, "idx", incl, last);
        }
        /* 3. warps: totals through scratch; each thread folds those of the warps before it */
        for (int g = 0; g < ng; g++) warp_ex[g] = (FnVal){0}, rep_tot[g] = wtot[g];
        if (P.W > 1) {
            if (j > 0) ll_barrier(l);
            for (int g = 0; g < ng; g++)
                if (wtot[g].some) fn_slot_store(l, F, i->a.smem_offset, P.rows, P.W, slot_writer(l, P.t, P.rep[g], P.ax, P.W), P.row[g], P.wpos, wtot[g]);
            ll_barrier(l);
            for (int g = 0; g < ng; g++) {
                FnVal ex = {0}, all = {0};
                for (int w = 0; w < P.W && wtot[g].some; w++) {
                    FnVal v = fn_slot_load(l, F, i->a.smem_offset, P.rows, P.W, P.row[g], w);
                    all = fn_combine(l, F, all, v);
                    if (w < P.W - 1) {
                        v.ok = LLVMBuildICmp(l->b, LLVMIntULT, ll_i32(l, w), P.wpos, "");
                        ex = fn_combine(l, F, ex, v);
                    }
                }
                warp_ex[g] = ex;
                rep_tot[g] = all;
            }
        }
        /* 4. prefix this repetition's elements; carry its total */
        for (int g = 0; g < ng; g++) {
            FnVal pre = fn_combine(l, F, fn_combine(l, F, carry[g], warp_ex[g]), lane_ex[g]);
            for (int r = 0; r < P.n; r++)
                if (P.grp[r] == g && lr->raw[r][P.ax] / P.cov == j && pre.some) out[r] = fn_combine(l, F, pre, out[r]);
            if (j + 1 < P.reps) carry[g] = fn_combine(l, F, carry[g], rep_tot[g]);
        }
    }
    for (int k = 0; ok && k < i->nres; k++) {
        LLVMValueRef *res = ll_new(l, i->res[k], P.n);
        for (int r = 0; r < P.n; r++) {
            int c = r;
            if (P.grp[r] < 0) /* in-thread replica: the canonical register with the same stat */
                for (int q = 0; q < P.n; q++) {
                    bool eq = P.grp[q] >= 0;
                    for (int d = 0; d < P.t->rank && eq; d++) eq = lr->stat[q][d] == lr->stat[r][d];
                    if (eq) {
                        c = q;
                        break;
                    }
                }
            res[r] = out[c].v[k];
        }
    }
    free(carry), free(local), free(lane_ex), free(wtot), free(warp_ex), free(rep_tot), free(out);
    fn_plan_free(&P);
    return ok && !l->failed;
}

/* ---- dot ---- */

typedef struct Line {
    int stat;           /* row (a) or column (b) stat */
    int run;            /* b: columns stat..stat+run-1 come from one vector load; 0: covered by another */
    LLVMValueRef base;  /* byte offset of element [m][0] (a) or [0][n] (b) relative to the operand */
    LLVMValueRef cur;   /* converted value for the current k */
} Line;

static int float_bits(LLVMTypeRef t) {
    switch (LLVMGetTypeKind(t)) {
    case LLVMHalfTypeKind:
    case LLVMBFloatTypeKind: return 16;
    case LLVMFloatTypeKind: return 32;
    default: return 64;
    }
}

/* Numeric conversion between scalar LLVM types; `sgn`: integer source is signed. */
static LLVMValueRef cvt(LL *l, LLVMValueRef v, bool sgn, LLVMTypeRef to) {
    LLVMTypeRef from = LLVMTypeOf(v);
    if (from == to) return v;
    if (LLVMGetTypeKind(from) != LLVMIntegerTypeKind)
        return float_bits(to) > float_bits(from) ? LLVMBuildFPExt(l->b, v, to, "") : LLVMBuildFPTrunc(l->b, v, to, "");
    if (LLVMGetIntTypeWidth(from) > LLVMGetIntTypeWidth(to)) return LLVMBuildTrunc(l->b, v, to, "");
    return sgn ? LLVMBuildSExt(l->b, v, to, "") : LLVMBuildZExt(l->b, v, to, "");
}

static int find_line(Line *ls, int n, int stat) {
    for (int q = 0; q < n; q++)
        if (ls[q].stat == stat) return q;
    return -1;
}

/* The FMA dot's k loop is unrolled whole while a thread's distinct accumulators times K is at most
 * DOT_FMA_UNROLLED multiply-adds; past that it is a loop over chunks of K, each unrolled, of at most
 * DOT_FMA_CHUNK multiply-adds (a [64, 64] x [64, 64] f32 dot over 4 warps: 32 accumulators, 2048 fmas
 * unrolled, 8 chunks of 8). */
enum { DOT_FMA_UNROLLED = 1024, DOT_FMA_CHUNK = 256 };

static bool emit_dot(LL *l, Inst *i) {
    const Type *at = tir_vtype(l->f, i->ops[0]), *bt = tir_vtype(l->f, i->ops[1]), *ct = tir_vtype(l->f, i->ops[2]);
    if (!has_layout(l, i, at) || !has_layout(l, i, bt)) return false;
    if (!has_layout(l, i, ct)) return false;
    if (tir_vtype(l->f, i->res[0]) != ct) {
        ll_error(l, i->loc, "internal error: dot result type differs from its accumulator's");
        return false;
    }
    DType in = at->dt, acc_dt = ct->dt;
    bool fp = dtype_is_float(acc_dt);
    if (dtype_is_storage(in) || in == DT_PTR || in == DT_I1 || dtype_is_float(in) != fp || dtype_is_storage(acc_dt)) {
        ll_error(l, i->loc, "dot of %s operands into %s %s accumulator is not supported by the FMA lowering", dtype_name(in),
                 str_article(dtype_name(acc_dt)), dtype_name(acc_dt));
        return false;
    }
    int M = at->shape[0], K = at->shape[1], N = bt->shape[1];
    int eb = dtype_bytes(in);
    int a_bytes = (M * K * eb + 15) & ~15;
    if (!have_scratch(l, i, a_bytes + K * N * eb)) return false;
    int off_a = i->a.smem_offset, off_b = off_a + a_bytes;
    LLVMTypeRef ct_ty = fp ? (acc_dt == DT_F64 ? l->t_f64 : l->t_f32) : (dtype_bits(acc_dt) > 32 ? l->t_i64 : l->t_i32);
    LLVMTypeRef et = ll_type(l, in);
    bool sgn_in = dtype_is_signed(in);

    /* 1. stage a and b */
    ll_smem_write_tensor(l, at, ll_get(l, i->ops[0], NULL), off_a);
    ll_smem_write_tensor(l, bt, ll_get(l, i->ops[1], NULL), off_b);
    ll_barrier(l);

    /* 2. the accumulator registers: compute each distinct stat once */
    const LayoutRegs *cr = ll_regs_of(l, ct);
    int n = cr->n;
    LLVMValueRef *cin = ll_get(l, i->ops[2], NULL);
    int *canon = calloc((size_t)n + 1, sizeof(int)), *ri = calloc((size_t)n * 2 + 2, sizeof(int)), *ci = ri + n;
    LLVMValueRef *acc = calloc((size_t)n + 1, sizeof *acc);
    Line *rows = calloc((size_t)n + 1, sizeof(Line)), *cols = calloc((size_t)n + 1, sizeof(Line));
    if (!canon || !ri || !acc || !rows || !cols) out_of_memory();
    int nr = 0, nc = 0;
    for (int r = 0; r < n; r++) {
        canon[r] = layout_regs_find(cr, cr->stat[r]);
        if (canon[r] != r) continue;
        acc[r] = cvt(l, cin[r], dtype_is_signed(acc_dt), ct_ty);
        int q = find_line(rows, nr, cr->stat[r][0]);
        if (q < 0) {
            q = nr++;
            rows[q].stat = cr->stat[r][0];
            rows[q].base = LLVMBuildMul(l->b, ll_coord(l, ct, r, 0), ll_i32(l, K * eb), "");
        }
        ri[r] = q;
        q = find_line(cols, nc, cr->stat[r][1]);
        if (q < 0) {
            q = nc++;
            cols[q].stat = cr->stat[r][1];
            cols[q].base = LLVMBuildMul(l->b, ll_coord(l, ct, r, 1), ll_i32(l, eb), "");
        }
        ci[r] = q;
    }
    /* b columns stat..stat+v-1 in one vector when aligned and within one thread's spt run */
    ThreadTerm tn = layout_thread_term(ct->layout, 1);
    for (int q = 0; q < nc; q++) cols[q].run = 1;
    for (int q = 0; q < nc; q++) {
        if (!cols[q].run) continue;
        int v = 1;
        for (int cand = 2; cand * eb <= 16; cand *= 2) {
            if (tn.lane_mul % cand || N % cand || cols[q].stat % cand) break;
            bool all = true;
            for (int j = 1; j < cand && all; j++) all = find_line(cols, nc, cols[q].stat + j) >= 0;
            if (!all) break;
            v = cand;
        }
        for (int j = 1; j < v; j++) cols[find_line(cols, nc, cols[q].stat + j)].run = 0;
        cols[q].run = v;
    }
    /* a along k: vectors of kv elements */
    int kv = 1;
    while (kv * 2 * eb <= 16 && K % (kv * 2) == 0) kv *= 2;

    /* 3. the k loop: unrolled, or, where the unrolled body would be large, a loop over chunks of K */
    int nacc = 0;
    for (int r = 0; r < n; r++) nacc += canon[r] == r;
    int kc = K;
    if ((long)nacc * K > DOT_FMA_UNROLLED) {
        kc = kv;
        while (kc * 2 < K && K % (kc * 2) == 0 && (long)nacc * kc * 2 <= DOT_FMA_CHUNK) kc *= 2;
        if (K % kc || kc >= K) kc = K;
    }
    LLVMValueRef *avec = calloc((size_t)nr + 1, sizeof *avec);
    LLVMValueRef *phi = NULL, kt = NULL;
    LLVMBasicBlockRef pre = NULL, body = NULL;
    if (!avec) out_of_memory();
    if (kc < K) {
        /* for (kt = 0; kt < K / kc; kt++): the chunk's offsets added to the row and column bases; every
         * accumulator still takes one fma per k, ascending, so the sums are the unrolled ones */
        pre = LLVMGetInsertBlock(l->b);
        body = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "dot.k");
        LLVMBuildBr(l->b, body);
        LLVMPositionBuilderAtEnd(l->b, body);
        kt = LLVMBuildPhi(l->b, l->t_i32, "kt");
        LLVMValueRef zero = ll_i32(l, 0);
        LLVMAddIncoming(kt, &zero, &pre, 1);
        phi = calloc((size_t)n + 1, sizeof *phi);
        if (!phi) out_of_memory();
        for (int r = 0; r < n; r++) {
            if (canon[r] != r) continue;
            phi[r] = LLVMBuildPhi(l->b, ct_ty, "");
            LLVMAddIncoming(phi[r], &acc[r], &pre, 1);
            acc[r] = phi[r];
        }
        LLVMValueRef da = LLVMBuildMul(l->b, kt, ll_i32(l, kc * eb), ""), db = LLVMBuildMul(l->b, kt, ll_i32(l, kc * N * eb), "");
        for (int q = 0; q < nr; q++) rows[q].base = LLVMBuildAdd(l->b, rows[q].base, da, "");
        for (int q = 0; q < nc; q++)
            if (cols[q].run) cols[q].base = LLVMBuildAdd(l->b, cols[q].base, db, "");
    }
    for (int kk = 0; kk < kc; kk++) {
        if (kk % kv == 0)
            for (int q = 0; q < nr; q++)
                avec[q] = kv == 1 ? ld_shared(l, et, off_a + kk * eb, rows[q].base, (unsigned)eb)
                                  : ld_shared(l, LLVMVectorType(et, (unsigned)kv), off_a + kk * eb, rows[q].base,
                                              (unsigned)(kv * eb));
        for (int q = 0; q < nr; q++) {
            LLVMValueRef x = kv == 1 ? avec[q] : LLVMBuildExtractElement(l->b, avec[q], ll_i32(l, kk % kv), "");
            rows[q].cur = cvt(l, x, sgn_in, ct_ty);
        }
        for (int q = 0; q < nc; q++) {
            int v = cols[q].run;
            if (!v) continue;
            int off = off_b + kk * N * eb;
            if (v == 1) {
                cols[q].cur = cvt(l, ld_shared(l, et, off, cols[q].base, (unsigned)eb), sgn_in, ct_ty);
                continue;
            }
            LLVMValueRef vec = ld_shared(l, LLVMVectorType(et, (unsigned)v), off, cols[q].base, (unsigned)(v * eb));
            for (int j = 0; j < v; j++) {
                int c = j ? find_line(cols, nc, cols[q].stat + j) : q;
                cols[c].cur = cvt(l, LLVMBuildExtractElement(l->b, vec, ll_i32(l, j), ""), sgn_in, ct_ty);
            }
        }
        for (int r = 0; r < n; r++) {
            if (canon[r] != r) continue;
            LLVMValueRef x = rows[ri[r]].cur, y = cols[ci[r]].cur;
            if (fp) {
                LLVMValueRef args[3] = {x, y, acc[r]};
                acc[r] = ll_intr(l, "llvm.fma", &ct_ty, 1, args, 3);
            } else {
                acc[r] = LLVMBuildAdd(l->b, LLVMBuildMul(l->b, x, y, ""), acc[r], "");
            }
        }
    }
    if (kc < K) {
        LLVMValueRef next = LLVMBuildAdd(l->b, kt, ll_i32(l, 1), "");
        LLVMBasicBlockRef latch = LLVMGetInsertBlock(l->b), done = LLVMAppendBasicBlockInContext(l->ctx, l->fn, "dot.k.done");
        LLVMBuildCondBr(l->b, LLVMBuildICmp(l->b, LLVMIntULT, next, ll_i32(l, K / kc), ""), body, done);
        LLVMAddIncoming(kt, &next, &latch, 1);
        for (int r = 0; r < n; r++)
            if (canon[r] == r) LLVMAddIncoming(phi[r], &acc[r], &latch, 1);
        LLVMPositionBuilderAtEnd(l->b, done);
        free(phi);
    }
    LLVMValueRef *res = ll_new(l, i->res[0], n);
    for (int r = 0; r < n; r++)
        if (canon[r] == r) res[r] = cvt(l, acc[r], false, ll_type(l, acc_dt));
    for (int r = 0; r < n; r++) res[r] = res[canon[r]];
    free(avec);
    free(canon);
    free(ri);
    free(acc);
    free(rows);
    free(cols);
    return true;
}

bool ll_emit_shared(LL *l, Inst *i) {
    switch (i->op) {
    case OP_CONVERT_LAYOUT:
    case OP_RESHAPE: return emit_through_smem(l, i);
    case OP_REDUCE: return emit_reduce(l, i);
    case OP_SCAN: return emit_scan(l, i);
    case OP_GATHER: return emit_gather(l, i);
    case OP_UNSTACK:
    case OP_STACK: return emit_stacking(l, i);
    case OP_REDUCE_FN: return emit_reduce_fn(l, i);
    case OP_SCAN_FN: return emit_scan_fn(l, i);
    case OP_DOT: return emit_dot(l, i);
    default: unreachable("ll_emit_shared: not a shared-memory op");
    }
}
