/* induction.c - turn a `for` loop's carried values that stay put or advance by a fixed
 * step into functions of the induction variable.
 *
 * Triton kernels move their pointers through a loop by carrying them: the tutorial's
 * `a_ptrs += BLOCK_K * stride_ak`, or a block pointer's `advance(bp, (0, BLOCK_K))`,
 * which is one carried i32 offset per dim beside the base, shape and strides it carries
 * unchanged.  A load through such a value depends on the previous iteration, so software
 * pipelining, which clones a load's address for iterations ahead, cannot take it.  With
 * the value written as init + j * step (j the iteration number) the address depends only
 * on the induction variable and values from before the loop, as pipelining needs.
 *
 * Algorithm, for each `for` (nested ones too) with a constant positive step S:
 *   1. A carried value whose yield is its own block argument never changes: its uses in
 *      the body and the loop's result become the initial value.
 *   2. A carried integer x whose yield is `x + c` or `x - c` (c defined before the loop, or
 *      computed in the body by pure ops from such values and constants, which are copied
 *      to the top of the body; integers only: float sums round differently), or a carried pointer
 *      p whose yield is `ptr_add(p, c)`, takes at the top of the body the value
 *      init + j * c (init - j * c; ptr_add(init, j * c)), with j = (iv - lb) / S
 *      (iv - lb taken unsigned, so a span past the signed range stays exact; a shift when S
 *      is a power of two), or init + (iv - lb) * (c / S)
 *      when S divides a factor of c (a constant, `BK * stride` with S = BK): then the
 *      address reads iv as the loop's masks do (`rk < K - k`), which lets the tma pass
 *      match the two.  Integer arithmetic wraps the same way as j repeated additions; a
 *      pointer's offset is computed in i64, as the repeated additions of the loop's i32
 *      offsets are summed in the 64-bit address (c itself is taken not to wrap).
 *      Every use of the block argument in the body reads the new value, so the update
 *      `x + c` in the yield reads it too and the carried value keeps its meaning.
 *   3. Nothing is deleted here: the carried value is now read only by its own update,
 *      so canonicalize drops it when the loop's result is unused (step 6 there).
 * `while` loops and loops with a run-time or non-positive step are left alone. */
#include "passes.h"

/* Whether v is defined inside `loop` (by an op of its regions, or as an argument of one of
 * their blocks, at any depth). */
static bool defined_inside(Func *f, ValueId v, const Inst *loop) {
    const Value *val = tir_val(f, v);
    const Block *b = val->def ? val->def->parent : val->block;
    while (b) {
        if (b->parent == loop) return true;
        b = b->parent ? b->parent->parent : NULL;
    }
    return false;
}

static int64_t const_int(Func *f, ValueId v, bool *ok) {
    const Inst *d = tir_val(f, v)->def;
    *ok = d && d->op == OP_CONST && !d->a.is_float && !tir_type_is_tensor(tir_vtype(f, v));
    return *ok ? d->a.ival : 0;
}

/* The iteration number j = (iv - lb) / step at the top of the body, made once per loop. */
typedef struct Iter {
    Func *f;
    Inst *loop;
    Builder b;
    ValueId span; /* iv - lb, unsigned; 0 until made */
    ValueId j;    /* the iteration number (iv - lb) / step, unsigned; 0 until made */
} Iter;

/* iv - lb in the unsigned type of iv's width, made once per loop: exact for every span below 2^32
 * (2^64), also where the signed difference overflows (lb = -2^31 + 10, three steps of 2^30). */
static ValueId iter_span(Iter *it) {
    if (it->span) return it->span;
    Func *f = it->f;
    Block *body = it->loop->regions[0];
    ValueId iv = body->args[0], lb = it->loop->ops[0];
    const Type *t = tir_vtype(f, iv), *u = tir_scalar(f->module, dtype_bits(t->dt) == 64 ? DT_U64 : DT_U32);
    bool ok;
    int64_t lbc = const_int(f, lb, &ok);
    ValueId d = ok && lbc == 0 ? iv : tir_emit_v(&it->b, OP_SUB, (ValueId[]){iv, lb}, 2, t);
    return it->span = t == u ? d : tir_emit_v(&it->b, OP_CAST, &d, 1, u);
}

static ValueId iter_j(Iter *it) {
    if (it->j) return it->j;
    Func *f = it->f;
    bool ok;
    int64_t step = const_int(f, it->loop->ops[2], &ok);
    ValueId d = iter_span(it);
    const Type *u = tir_vtype(f, d);
    if (step > 1) { /* unsigned: a logical shift, an unsigned division */
        int sh = 0;
        while ((1LL << sh) < step) sh++;
        ValueId k = tir_const_int(&it->b, u, (1LL << sh) == step ? sh : step);
        d = tir_emit_v(&it->b, (1LL << sh) == step ? OP_SHR : OP_DIV, (ValueId[]){d, k}, 2, u);
    }
    return it->j = d;
}

/* Scalar s of type-like t's dtype as a value of type t (cast, then splat). */
static ValueId scalar_as(Iter *it, ValueId s, const Type *t) {
    Module *m = it->f->module;
    const Type *st = tir_scalar(m, t->dt);
    if (tir_vtype(it->f, s) != st) s = tir_emit_v(&it->b, OP_CAST, &s, 1, st);
    return t->rank ? tir_emit_v(&it->b, OP_SPLAT, &s, 1, t) : s;
}

/* v as a value the top of the body can read: itself when defined before the loop, else a
 * copy there of its computation when that is pure and reads only such values (the
 * frontend writes `BLOCK_K * stride` and constants where they are used, in the body);
 * 0 otherwise. */
static ValueId invariant(Iter *it, ValueId v, int depth) {
    Func *f = it->f;
    if (!defined_inside(f, v, it->loop)) return v;
    Inst *d = tir_val(f, v)->def;
    if (!d || depth > 16 || !(tir_op_info[d->op].flags & OPF_PURE) || d->nregions || d->nres != 1) return 0;
    ValueId ops[TIR_MAX_RANK + 4];
    if (d->nops > (int)ARRAY_LEN(ops)) return 0;
    for (int k = 0; k < d->nops; k++)
        if (!(ops[k] = invariant(it, d->ops[k], depth + 1))) return 0;
    Inst *c = tir_emit(&it->b, d->op, ops, d->nops, tir_vtype(f, v));
    c->a = d->a;
    return c->res[0];
}

/* v / step where v is a product with a factor the step divides exactly (constants, `BK *
 * stride`, shifts, integer widenings of those), computed at the top of the body; 0 otherwise. */
static ValueId quotient(Iter *it, ValueId v, int64_t step, int depth) {
    Func *f = it->f;
    if (step == 1) return v;
    const Inst *d = tir_val(f, v)->def;
    const Type *t = tir_vtype(f, v);
    if (!d || depth > 8 || t->rank) return 0;
    switch (d->op) {
    case OP_CONST: return !d->a.is_float && d->a.ival % step == 0 ? tir_const_int(&it->b, t, d->a.ival / step) : 0;
    case OP_MUL:
        for (int s = 0; s < 2; s++) {
            ValueId q = quotient(it, d->ops[s], step, depth + 1);
            if (q) return tir_emit_v(&it->b, OP_MUL, (ValueId[]){q, d->ops[1 - s]}, 2, t);
        }
        return 0;
    case OP_SHL: {
        bool ok;
        int64_t sh = const_int(f, d->ops[1], &ok);
        if (!ok || sh < 0 || sh > 30 || (1LL << sh) % step) return 0;
        return tir_emit_v(&it->b, OP_MUL, (ValueId[]){d->ops[0], tir_const_int(&it->b, t, (1LL << sh) / step)}, 2, t);
    }
    case OP_CAST: {
        const Type *st = tir_vtype(f, d->ops[0]);
        if (!dtype_is_int(st->dt) || dtype_bits(st->dt) > dtype_bits(t->dt)) return 0;
        ValueId q = quotient(it, d->ops[0], step, depth + 1);
        return q ? tir_emit_v(&it->b, OP_CAST, &q, 1, t) : 0;
    }
    default: return 0;
    }
}

/* Step 2 for carried value k, or 0 when its update is not a fixed step. */
static ValueId stepped(Iter *it, int k) {
    Func *f = it->f;
    Module *m = f->module;
    Inst *loop = it->loop;
    Block *body = loop->regions[0];
    ValueId arg = body->args[1 + k], init = loop->ops[3 + k], y = body->last->ops[k];
    Inst *u = tir_val(f, y)->def;
    if (!u || u->parent != body || (u->op != OP_ADD && u->op != OP_SUB && u->op != OP_PTR_ADD)) return 0;
    int self = u->ops[0] == arg ? 0 : u->op == OP_ADD && u->ops[1] == arg ? 1 : -1;
    if (self < 0) return 0;
    ValueId c = invariant(it, u->ops[1 - self], 0);
    if (!c) return 0;
    const Type *t = tir_vtype(f, arg), *ct = tir_vtype(f, c);
    bool ptr = u->op == OP_PTR_ADD;
    if (!ptr && (!dtype_is_int(t->dt) || t->dt == DT_I1 || ct != t)) return 0;
    /* the step as a scalar: c itself, a splat's operand or a splat constant's value */
    const Inst *cd = tir_val(f, c)->def;
    ValueId cs = !ct->rank ? c : cd && cd->op == OP_SPLAT ? cd->ops[0] : 0;
    if (!cs && cd && cd->op == OP_CONST && !cd->a.is_float) cs = tir_const_int(&it->b, tir_scalar(m, ct->dt), cd->a.ival);
    const Type *ot = ptr ? tir_with_dtype(m, ct, DT_I64) : t; /* the offset's type */
    const Type *os = tir_scalar(m, ot->dt);
    ValueId off;
    if (cs) {
        /* n * q with n = iv - lb and q = c / S where S divides c (the offset then reads the
         * induction variable itself: the tutorial's masks compare k, and so can tensor maps'
         * coordinates), else n = j and q = c */
        bool ok;
        int64_t step = const_int(f, loop->ops[2], &ok);
        ValueId q = quotient(it, cs, step, 0), n;
        if (q) {
            n = iter_span(it);
        } else {
            q = cs;
            n = iter_j(it);
        }
        off = tir_emit_v(&it->b, OP_MUL, (ValueId[]){scalar_as(it, n, os), scalar_as(it, q, os)}, 2, os);
        if (ot->rank) off = tir_emit_v(&it->b, OP_SPLAT, &off, 1, ot);
    } else { /* a tensor of steps */
        ValueId c2 = ptr ? tir_emit_v(&it->b, OP_CAST, &c, 1, ot) : c;
        off = tir_emit_v(&it->b, OP_MUL, (ValueId[]){scalar_as(it, iter_j(it), ot), c2}, 2, ot);
    }
    return tir_emit_v(&it->b, ptr ? OP_PTR_ADD : u->op, (ValueId[]){init, off}, 2, t);
}

static bool rewrite_loop(Inst *loop, void *ud) {
    Func *f = ud;
    if (loop->op != OP_FOR || !loop->nregions) return true;
    bool ok;
    int64_t step = const_int(f, loop->ops[2], &ok);
    Block *body = loop->regions[0];
    if (!ok || step <= 0 || !body->last || body->last->op != OP_YIELD) return true;
    Iter it = {.f = f, .loop = loop, .b = {.f = f, .block = body, .before = body->first, .loc = loop->loc}};
    int n = loop->nres;
    for (int k = 0; k < n; k++) {
        ValueId arg = body->args[1 + k], init = loop->ops[3 + k];
        if (body->last->ops[k] == arg) { /* step 1 */
            tir_replace_uses(f, arg, init);
            tir_replace_uses(f, loop->res[k], init);
            continue;
        }
        ValueId v = stepped(&it, k);
        if (v) tir_replace_uses(f, arg, v);
    }
    return true;
}

bool lower_induction(Module *m, Diag *d) {
    (void)d;
    for (int k = 0; k < m->nfuncs; k++) tir_walk(m->funcs[k]->body, rewrite_loop, m->funcs[k]);
    return true;
}
