/* builtins_cond.c - choosing between values: where(cond, a, b) and the ternary `a if cond else b`.
 *
 * where evaluates both sides and selects element-wise.  The ternary on a compile-time condition generates its
 * side only; on a run-time tile condition it is where; on a run-time scalar condition it runs only the side it
 * picks (an `if` yielding the value), unless both sides are pure and cannot trap, when it is where's select.  Tuples
 * of one structure are chosen element by element, each as a value. */
#include "builtins.h"

#include <string.h>

#include "gen.h"

/* The type and shape where(c->v[0], c->v[1], c->v[2]) has (its sides values): false after an error. */
static bool where_type(Call *c, DType *dt, int *r, int32_t *s) {
    Gen *g = c->g;
    Val a = c->v[1], b = c->v[2];
    bool ptrs = val_dtype(a) == DT_PTR || val_dtype(b) == DT_PTR;
    if (ptrs && (a.k != V_RT || b.k != V_RT || tir_elem(g->m, a.t) != tir_elem(g->m, b.t))) {
        diag_error(g->d, c->node->loc, "'where' cannot choose between '%s' and '%s'", gen_val_type_name(g, a), gen_val_type_name(g, b));
        return false;
    }
    if (!ptrs && (!bi_numeric(c, 1) || !bi_numeric(c, 2))) return false;
    bool any_rt;
    *dt = ptrs ? DT_PTR : bi_args_dtype(c, 1, 2, &any_rt);
    if (!ptrs && !bi_args_fit(c, 1, 2, *dt)) return false;
    return bi_args_shape(c, 0, 3, r, s);
}

Val bi_where(Call *c) {
    Gen *g = c->g;
    Val cond = c->v[0], a = c->v[1], b = c->v[2];
    if (!val_is_value(g, cond, c->loc[0]) || !val_is_value(g, a, c->loc[1]) || !val_is_value(g, b, c->loc[2])) return val_err();
    DType cdt = val_dtype(cond);
    if (cdt == DT_PTR || (!dtype_is_int(cdt) && !dtype_is_float(cdt))) {
        diag_error(g->d, c->loc[0], "condition of 'where' must be i1, an integer or a float, got '%s'",
                   cond.k == V_RT ? gen_type_desc(g, cond.t) : gen_val_type_name(g, cond));
        return val_err();
    }
    /* non-zero is true, a NaN too, as an `if`'s condition and Triton's cast to int1 (x != 0, unordered) */
    if (cdt != DT_I1) cond = gen_cast(g, cond, DT_I1, c->loc[0]);
    if (cond.k == V_CT && a.k == V_CT && b.k == V_CT) {
        if (dtype_is_storage(a.dt) || dtype_is_storage(b.dt)) return cond.i ? a : b;
        /* a typed scalar of the two sides' type, as Triton's tl.where(True, 100, 2.5) is the f32 100.0 */
        bool any_rt;
        DType dt = bi_args_dtype(c, 1, 2, &any_rt);
        if (!bi_args_fit(c, 1, 2, dt)) return val_err();
        Val v = cond.i ? a : b;
        return gen_hold(v.dt == dt ? v : gen_cast(g, v, dt, c->loc[cond.i ? 1 : 2]));
    }
    DType dt;
    int r;
    int32_t s[TIR_MAX_RANK];
    if (!where_type(c, &dt, &r, s)) return val_err();
    if (cond.k == V_CT) /* one side, but of the type and shape the select would have (not the other way with a run-time cond) */
        return val_rt(g, gen_coerce(g, cond.i ? a : b, dt, NULL, r, s, c->loc[cond.i ? 1 : 2]));
    ValueId ops[3] = {gen_coerce(g, cond, DT_I1, NULL, r, s, c->loc[0]), gen_coerce(g, a, dt, NULL, r, s, c->loc[1]),
                      gen_coerce(g, b, dt, NULL, r, s, c->loc[2])};
    return val_rt(g, gen_emit(g, c->node->loc, OP_SELECT, ops, 3, tir_vtype(g->f, ops[1])));
}

/* How much work a side may do and still be computed whatever the condition (then selected): its instructions,
 * those in their regions included, but constants, at most TERNARY_SELECT_MAX_INSTS of them, whose results have at
 * most TERNARY_SELECT_MAX_ELEMS elements together (a scalar counts 1, an f32[16, 16] 256).  A few element-wise ops
 * on scalars or small tiles fit; more is computed only on the side the condition picks, in an `if`. */
enum { TERNARY_SELECT_MAX_INSTS = 16, TERNARY_SELECT_MAX_ELEMS = 1024 };

/* Whether the instructions of b (and of their regions) may all run whatever the condition of a ternary, and
 * cheaply: pure ones (no load, store, atomic, print, assert, inline asm or `if`) that cannot trap (no integer
 * division or remainder but by a constant other than 0 and -1: the select form would divide by the zero, or
 * INT_MIN by -1, that the condition guards against) and are not expensive (no dot, reduction, scan or gather:
 * work across a tile, as sum, histogram, sort and topk make; within the budget above).  *insts and *elems
 * accumulate the cost. */
static bool branch_speculable_cost(Gen *g, const Block *b, int64_t *insts, int64_t *elems) {
    for (const Inst *i = b->first; i; i = i->next) {
        if (!(tir_op_info[i->op].flags & OPF_PURE)) return false;
        if (i->op == OP_DOT || i->op == OP_REDUCE || i->op == OP_SCAN || i->op == OP_GATHER) return false;
        if ((i->op == OP_DIV || i->op == OP_REM) && !dtype_is_float(tir_vtype(g->f, i->res[0])->dt)) {
            const Inst *d = tir_val(g->f, i->ops[1])->def; /* a constant divisor but 0 and -1 (INT_MIN / -1) */
            if (!d || d->op != OP_CONST || d->a.ival == 0 || d->a.ival == -1) return false;
        }
        if (i->op != OP_CONST) {
            ++*insts;
            for (int k = 0; k < i->nres; k++) *elems += tir_type_numel(tir_vtype(g->f, i->res[k]));
            if (*insts > TERNARY_SELECT_MAX_INSTS || *elems > TERNARY_SELECT_MAX_ELEMS) return false;
        }
        for (int k = 0; k < i->nregions; k++)
            if (!branch_speculable_cost(g, i->regions[k], insts, elems)) return false;
    }
    return true;
}

static bool branch_speculable(Gen *g, const Block *b) {
    int64_t insts = 0, elems = 0;
    return branch_speculable_cost(g, b, &insts, &elems);
}

/* Puts i where the builder emits. */
static void place(Gen *g, Inst *i) {
    if (g->b.before) tir_insert_before(g->b.before, i);
    else tir_block_append(g->b.block, i);
}

/* Moves b's instructions, in order, to where the builder emits. */
static void branch_splice(Gen *g, Block *b) {
    for (Inst *i = b->first, *next; i; i = next) {
        next = i->next;
        place(g, i);
    }
    b->first = b->last = NULL;
}

/* Whether v is a tuple a conditional chooses leaf by leaf (not a descriptor or block pointer record). */
static bool plain_tuple(Val v) { return v.k == V_TUPLE && !gen_is_record(v); }

/* The first descriptor or block pointer in the tuple v (at any depth), or NULL. */
static const Val *record_in(const Val *v) {
    if (gen_is_record(*v)) return v;
    for (int i = 0; v->k == V_TUPLE && i < v->nelems; i++) {
        const Val *r = record_in(&v->elems[i]);
        if (r) return r;
    }
    return NULL;
}

/* The sides c->v[1] and c->v[2] of a conditional on a run-time condition, one of them a tuple: both must be tuples of
 * one skeleton (val_same_skeleton: the same structure, the same types, shapes and strings where they hold those),
 * whose leaves go to *la and *lb (arena).  Returns their count, -1 after an error that names both sides. */
static int tuple_sides(Call *c, Val **la, Val **lb) {
    Gen *g = c->g;
    Val a = c->v[1], b = c->v[2];
    int n = plain_tuple(a) && plain_tuple(b) && val_same_skeleton(a, b) ? val_leaves(a, NULL) : -1;
    if (n < 0) {
        const char *na = gen_skeleton_str(g, a), *nb = gen_skeleton_str(g, b);
        if (strcmp(na, nb))
            diag_error(g->d, c->node->loc, "the sides of this conditional are '%s' and '%s': a conditional on a run-time "
                       "condition chooses between tuples of one structure", na, nb);
        else
            diag_error(g->d, c->node->loc, "the sides of this conditional are tuples '%s' that differ in an element a run-time "
                       "condition cannot choose (a type, a shape, a string, None or a function)", na);
        return -1;
    }
    for (int k = 1; k <= 2; k++) {
        const Val *r = record_in(&c->v[k]);
        if (r) {
            diag_error(g->d, c->loc[k], "a conditional on a run-time condition chooses between tuples of values, not of %s: "
                       "choose in an 'if' (let t = b; if cond { t = a; })", gen_is_desc(*r) ? "tensor descriptors" : "block pointers");
            return -1;
        }
    }
    *la = ARENA_ARRAY(g->a, Val, n + 1);
    *lb = ARENA_ARRAY(g->a, Val, n + 1);
    val_leaves(a, *la);
    val_leaves(b, *lb);
    return n;
}

/* where(cond, a, b) leaf by leaf for the n leaves la and lb of the tuple sides of c: the tuple of the results. */
static Val where_leaves(Call *c, const Val *la, const Val *lb, int n) {
    Val *r = ARENA_ARRAY(c->g->a, Val, n + 1);
    for (int k = 0; k < n; k++) {
        Call d = *c;
        d.v[1] = la[k], d.v[2] = lb[k];
        r[k] = bi_where(&d);
        if (r[k].k == V_ERR) return r[k];
    }
    int pos = 0;
    return val_with_leaves(c->g, c->v[1], r, &pos);
}

/* `a if cond else b` (N_COND): a compile-time cond (a number, a comparison of strings or types, None)
 * picks its side, and only that side is generated (the other may be anything that parses: None where
 * a pointer is not given, a call that would not compile).  A run-time tile cond is where(cond, a, b), both
 * sides evaluated element-wise.  A run-time scalar cond runs only the side it picks, as Triton's scf.if: the
 * sides are generated into the two regions of an `if` that yields the value (of where's type and shape);
 * when both sides are speculable (branch_speculable: pure, no trap, cheap) they are moved in front and selected
 * instead, the same code where(cond, a, b) gives.  Tuple sides of one skeleton are chosen leaf by leaf, each leaf
 * as a value would be (where's select, or one result of the `if`), the skeleton kept. */
Val builtin_cond(Gen *g, const Node *n) {
    Val cond = gen_expr(g, n->cond);
    if (cond.k == V_ERR) return cond;
    if (cond.k == V_NONE) return gen_expr(g, n->els);
    if (cond.k == V_CT) return gen_expr(g, (dtype_is_float(cond.dt) ? cond.f != 0 : cond.i != 0) ? n->then : n->els);
    /* a float is true when non-zero (NaN too), as an `if`'s and Triton's `a if f else b` */
    if (cond.k == V_RT && dtype_is_float(val_dtype(cond))) cond = gen_cast(g, cond, DT_I1, n->cond->loc);
    /* a scalar pointer is true when not null, as an `if`'s (Triton's `load(b_ptr + i) if b_ptr else 0.0`) */
    if (cond.k == V_RT && !cond.t->rank && cond.t->dt == DT_PTR)
        cond = gen_cast(g, gen_convert(g, cond, tir_scalar(g->m, DT_I64), false, n->cond->loc), DT_I1, n->cond->loc);
    Call c = {.g = g, .bi = bi_where_entry(), .node = n};
    const Node *parts[3] = {n->cond, n->then, n->els};
    for (int k = 0; k < MAX_BI_PARAMS; k++) c.v[k] = (Val){.k = V_NONE};
    c.v[0] = cond;
    for (int k = 0; k < 3; k++) c.arg[k] = parts[k], c.loc[k] = parts[k]->loc;
    Val *la = &c.v[1], *lb = &c.v[2];
    int nl = 1;
    DType cdt = val_dtype(cond); /* a tile, or a condition where refuses (a pointer): where */
    if (cond.k != V_RT || cond.t->rank || cdt == DT_PTR || (!dtype_is_int(cdt) && !dtype_is_float(cdt))) {
        c.v[1] = gen_expr(g, n->then);
        c.v[2] = gen_expr(g, n->els);
        if (c.v[1].k == V_ERR || c.v[2].k == V_ERR) return val_err();
        if (!plain_tuple(c.v[1]) && !plain_tuple(c.v[2])) return bi_where(&c);
        if ((nl = tuple_sides(&c, &la, &lb)) < 0) return val_err();
        return where_leaves(&c, la, lb, nl);
    }
    Builder outer = g->b;
    Block *side[2] = {tir_block_new(g->f, NULL), tir_block_new(g->f, NULL)};
    for (int k = 0; k < 2; k++) {
        g->b.block = side[k], g->b.before = NULL;
        c.v[1 + k] = gen_expr(g, k ? n->els : n->then);
        g->b = outer;
    }
    if (c.v[1].k == V_ERR || c.v[2].k == V_ERR) return val_err();
    bool tuples = plain_tuple(c.v[1]) || plain_tuple(c.v[2]);
    if (tuples && (nl = tuple_sides(&c, &la, &lb)) < 0) return val_err();
    if (branch_speculable(g, side[0]) && branch_speculable(g, side[1])) {
        branch_splice(g, side[0]);
        branch_splice(g, side[1]);
        return tuples ? where_leaves(&c, la, lb, nl) : bi_where(&c);
    }
    if (val_dtype(cond) != DT_I1) cond = gen_cast(g, cond, DT_I1, n->cond->loc);
    ValueId *ys[2] = {ARENA_ARRAY(g->a, ValueId, nl + 1), ARENA_ARRAY(g->a, ValueId, nl + 1)};
    const Type **t = ARENA_ARRAY(g->a, const Type *, nl + 1);
    for (int j = 0; j < nl; j++) {
        Call d = c; /* this leaf's where */
        d.v[1] = la[j], d.v[2] = lb[j];
        if (!val_is_value(g, d.v[1], d.loc[1]) || !val_is_value(g, d.v[2], d.loc[2])) return val_err();
        DType dt;
        int r;
        int32_t s[TIR_MAX_RANK];
        if (!where_type(&d, &dt, &r, s)) return val_err();
        const Type *tk[2];
        for (int k = 0; k < 2; k++) {
            g->b.block = side[k], g->b.before = NULL;
            ys[k][j] = gen_coerce(g, d.v[1 + k], dt, NULL, r, s, d.loc[1 + k]);
            tk[k] = tir_vtype(g->f, ys[k][j]);
            g->b = outer;
        }
        if (tk[0] != tk[1]) {
            const char *what = tuples ? arena_printf(g->a, "element %d of the sides", j) : "the sides";
            diag_error(g->d, n->loc, "%s of this conditional have types '%s' and '%s'", what, gen_type_desc(g, tk[0]),
                       gen_type_desc(g, tk[1]));
            return val_err();
        }
        t[j] = tk[0];
    }
    for (int k = 0; k < 2; k++) {
        g->b.block = side[k], g->b.before = NULL;
        gen_emit_inst(g, c.loc[1 + k], OP_YIELD, ys[k], nl, NULL);
        g->b = outer;
    }
    Inst *ii = tir_inst_new(g->f, OP_IF, &cond.v, 1, t, nl, n->loc);
    place(g, ii);
    tir_inst_add_region(g->f, ii, side[0]);
    tir_inst_add_region(g->f, ii, side[1]);
    if (!tuples) return val_rt(g, ii->res[0]);
    Val *r = ARENA_ARRAY(g->a, Val, nl + 1);
    for (int j = 0; j < nl; j++) r[j] = val_rt(g, ii->res[j]);
    int pos = 0;
    return val_with_leaves(g, c.v[1], r, &pos);
}
