/* merge.c - values where control-flow paths join: a value's run-time leaves and its compile-time skeleton, and
 * the type one leaf of a variable takes after the two branches of a run-time `if`.
 *
 * A loop carries, an `if` merges and a conditional `a if c else b` chooses (builtins_cond.c) a tuple leaf by leaf:
 *   1. val_leaves takes a value apart into its leaves (numbers: V_CT, V_RT), depth first; the rest (tuple
 *      structure, types, shapes, None, strings) is its skeleton, which the paths must agree on
 *      (val_same_skeleton);
 *   2. each leaf gets one type on both paths (merge_leaf_type for an `if`; the loop's and the conditional's
 *      checks are their own), reported at the assignment that made the paths differ;
 *   3. val_with_leaves puts the merged leaves (the loop's or the `if`'s results) back into the skeleton.
 * gen_skeleton_str and gen_differing_names name two values that do not merge, element by element where their
 * type names alone are the same. */
#include "gen.h"

#include <string.h>

bool val_same(Val a, Val b) {
    if (a.k != b.k) return false;
    switch (a.k) {
    case V_RT: return a.v == b.v;
    case V_CT: return a.dt == b.dt && a.i == b.i && !memcmp(&a.f, &b.f, sizeof a.f);
    case V_DTYPE: return a.t == b.t;
    case V_STR: return !strcmp(a.s, b.s);
    case V_FN: return a.fn == b.fn;
    case V_SHAPE: return a.rank == b.rank && !memcmp(a.shape, b.shape, sizeof a.shape) && a.i == b.i; /* i: a descriptor's padding */
    case V_TUPLE:
        if (a.nelems != b.nelems || a.record != b.record) return false;
        for (int i = 0; i < a.nelems; i++)
            if (!val_same(a.elems[i], b.elems[i])) return false;
        return true;
    default: return true;
    }
}

/* The run-time-able leaves of a value: the value itself when it is one (V_CT, V_RT), else
 * a tuple's such elements, depth first; other elements (a descriptor's block shape, a list,
 * a type, None, a string) are its skeleton, which a loop or an `if` keeps as it is.  Returns their count
 * (out, when not NULL, gets them); -1 when v holds something else (an error, void). */
int val_leaves(Val v, Val *out) {
    if (v.k == V_CT || v.k == V_RT) {
        if (out) out[0] = v;
        return 1;
    }
    if (v.k == V_SHAPE || v.k == V_DTYPE || v.k == V_NONE || v.k == V_STR) return 0;
    if (v.k != V_TUPLE) return -1;
    int n = 0;
    for (int i = 0; i < v.nelems; i++) {
        int k = val_leaves(v.elems[i], out ? out + n : NULL);
        if (k < 0) return -1;
        n += k;
    }
    return n;
}

/* skel with its leaves replaced by leaves[*pos...], in val_leaves' order. */
Val val_with_leaves(Gen *g, Val skel, const Val *leaves, int *pos) {
    if (skel.k == V_CT || skel.k == V_RT) return leaves[(*pos)++];
    if (skel.k != V_TUPLE) return skel;
    Val r = skel;
    r.elems = ARENA_ARRAY(g->a, Val, skel.nelems ? skel.nelems : 1);
    for (int i = 0; i < skel.nelems; i++) r.elems[i] = val_with_leaves(g, skel.elems[i], leaves, pos);
    return r;
}

/* a and b have one skeleton: the same tuple structure and the same non-leaf elements. */
bool val_same_skeleton(Val a, Val b) {
    bool la = a.k == V_CT || a.k == V_RT, lb = b.k == V_CT || b.k == V_RT;
    if (la || lb) return la && lb;
    if (a.k != V_TUPLE || b.k != V_TUPLE) return val_same(a, b);
    if (a.nelems != b.nelems) return false;
    for (int i = 0; i < a.nelems; i++)
        if (!val_same_skeleton(a.elems[i], b.elems[i])) return false;
    return true;
}

/* a and b for a message that they differ: their type names, or where those are the same ("tuple of 2 values" and a
 * tuple of 2 whose element is now a tuple) their structure, element by element: "(i32, i32)", "((i32, i32), i32)" */
const char *gen_skeleton_str(Gen *g, Val v) {
    if (v.k != V_TUPLE || gen_is_record(v)) return gen_val_type_name(g, v);
    Str s = {0};
    str_putc(&s, '(');
    for (int i = 0; i < v.nelems; i++) str_printf(&s, "%s%s", i ? ", " : "", gen_skeleton_str(g, v.elems[i]));
    str_puts(&s, v.nelems == 1 ? ",)" : ")");
    char *r = arena_strdup(g->a, s.buf);
    str_free(&s);
    return r;
}

void gen_differing_names(Gen *g, Val a, Val b, const char **na, const char **nb) {
    *na = gen_val_type_name(g, a);
    *nb = gen_val_type_name(g, b);
    if (!strcmp(*na, *nb)) *na = gen_skeleton_str(g, a), *nb = gen_skeleton_str(g, b);
}

/* The type a leaf of a variable merges to after a run-time `if` at at_if whose branches leave it ea and eb (ok: its
 * value before the `if`; what: the variable or the element named in a message; tset, eset: each branch's last
 * assignment of the variable, xset the else's when it made one, else the then's), or NULL after an error,
 * reported at the assignment that made the difference when it is after the `if`'s start (the `if` in a note),
 * else at the `if`. */
const Type *merge_leaf_type(Gen *g, Loc at_if, const char *what, Val ea, Val eb, Val ok, Loc tset, Loc eset, Loc xset) {
    const Type *t;
    /* a compile-time number before the `if` is a scalar of its own type, as in a loop (and in Triton, whose
     * `x = 0` is an i32): a branch's run-time value of another type or shape is an error at its assignment
     * (`let x = 0; if c { x = n_i64; }` made x an i64 unseen, and `x = v_i8` an i8 that later wraps) */
    if (ok.k == V_CT && (ea.k == V_RT || eb.k == V_RT)) {
        /* (a pointer is reported below, as a pointer in one branch and a number in the other) */
        bool in_a = ea.k == V_RT && ea.t->dt != DT_PTR && (ea.t->rank || ea.t->dt != ok.dt);
        const Type *bt = in_a ? ea.t : eb.k == V_RT && eb.t->dt != DT_PTR && (eb.t->rank || eb.t->dt != ok.dt) ? eb.t : NULL;
        if (bt) {
            Loc set = in_a ? tset : eset;
            Loc at = set.file == at_if.file && set.line >= at_if.line ? set : at_if;
            const char *cv = dtype_is_float(ok.dt) ? arena_double(g->a, ok.f) : arena_printf(g->a, "%lld", (long long)ok.i);
            /* the form to start it as: a tile of the branch's shape (`0 as f32` would stay a scalar) */
            const char *fix = bt->rank ? arena_printf(g->a, "give the value before the 'if' that shape and type, `full(%s, %s, %s)`",
                                                      gen_shape_str(g, bt->rank, bt->shape), cv, dtype_name(bt->dt))
                                       : arena_printf(g->a, "give the value before the 'if' the type, `%s as %s`, or cast", cv,
                                                      dtype_name(bt->dt));
            diag_error(g->d, at, "%s is the %s %s before the 'if' and %s in it (as in a loop and in Triton, a variable "
                       "keeps its type and shape: %s)", what, dtype_name(ok.dt), cv,
                       bt->rank ? arena_printf(g->a, "a '%s' tensor", gen_type_desc(g, bt))
                                : arena_printf(g->a, "a run-time '%s'", gen_type_desc(g, bt)),
                       fix);
            if (at.line != at_if.line || at.col != at_if.col) diag_note(g->d, at_if, "the 'if'");
            return NULL;
        }
    }
    if (ea.k == V_RT && eb.k == V_RT && ea.t != eb.t) { /* at a branch's assignment, the if in a note */
        Loc at = xset.file == at_if.file && xset.line >= at_if.line ? xset : at_if;
        diag_error(g->d, at, "%s has type '%s' in one branch of 'if' and '%s' in the other", what,
                   gen_type_desc(g, ea.t), gen_type_desc(g, eb.t));
        if (at.line != at_if.line || at.col != at_if.col) diag_note(g->d, at_if, "the 'if'");
        return NULL;
    }
    if (ea.k == V_RT) t = ea.t;
    else if (eb.k == V_RT) t = eb.t;
    else if (ok.k == V_RT && ok.t->dt != DT_PTR) t = ok.t; /* two constants: the type before the `if` stays (an i8 became an i32) */
    else t = tir_scalar(g->m, gen_promote(ea.dt, eb.dt));
    Val cv = ea.k == V_CT ? ea : eb;
    if (ea.k == V_CT && eb.k == V_CT && t == ok.t && !dtype_is_float(t->dt) && (dtype_is_float(ea.dt) || dtype_is_float(eb.dt))) {
        Loc fs = dtype_is_float(ea.dt) ? tset : eset; /* the float's branch's assignment */
        Loc at = fs.file == at_if.file && fs.line >= at_if.line ? fs : at_if;
        diag_error(g->d, at, "%s is %s before the 'if' and given the float %s in it (as in a loop, a variable keeps its "
                   "type: start it as a float, or cast)", what, gen_type_desc(g, t), arena_double(g->a, dtype_is_float(ea.dt) ? ea.f : eb.f));
        if (at.line != at_if.line || at.col != at_if.col) diag_note(g->d, at_if, "the 'if'");
        return NULL;
    }
    if ((ea.k == V_RT || eb.k == V_RT) && cv.k == V_CT && dtype_is_float(cv.dt) && !dtype_is_float(t->dt) && t->dt != DT_PTR) {
        diag_error(g->d, at_if, "%s is %s in one branch of 'if' and the float %s in the other (a variable keeps its "
                   "type: cast, or start it as a float)", what, gen_type_desc(g, t), arena_double(g->a, cv.f));
        return NULL;
    }
    /* two constants, an integer and a float: as in a loop, an integer variable does not become a float (it
     * did: `let x = 0; if c { x = 1.5; }` made x an f32); one that was a float before the `if` takes an integer */
    if (ea.k == V_CT && eb.k == V_CT && dtype_is_float(ea.dt) != dtype_is_float(eb.dt) &&
        !(ok.k == V_CT ? dtype_is_float(ok.dt) : ok.k == V_RT && dtype_is_float(ok.t->dt))) {
        Val iv = dtype_is_float(ea.dt) ? eb : ea, fv = dtype_is_float(ea.dt) ? ea : eb;
        Loc fs = dtype_is_float(ea.dt) ? tset : eset; /* the float's branch's assignment */
        Loc at = fs.file == at_if.file && fs.line >= at_if.line ? fs : at_if;
        diag_error(g->d, at, "%s is the %s %lld in one branch of 'if' and the float %s in the other (as in a loop, a "
                   "variable keeps its type: start it as a float, or cast)", what, dtype_name(iv.dt), (long long)iv.i,
                   arena_double(g->a, fv.f));
        if (at.line != at_if.line || at.col != at_if.col) diag_note(g->d, at_if, "the 'if'");
        return NULL;
    }
    if (t->dt == DT_PTR && (ea.k == V_CT || eb.k == V_CT)) {
        diag_error(g->d, at_if, "%s is a pointer in one branch of 'if' and a number in the other", what);
        return NULL;
    }
    return t;
}
