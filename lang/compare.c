/* compare.c - comparisons of compile-time values other than numbers, and Python's membership:
 *   gen_compare_names    == and != of strings, types and None (`ACT == "relu"`, `DT is bf16`, `b is None`)
 *   gen_compare_shapes   == and != of shapes (`x.shape == (BM, BN)`)
 *   gen_membership       `x in t`, `x not in t` of a tuple or list: == (!=) of each element, joined by || (&&)
 * gen.c's binary operators dispatch here; everything else goes to gen_binop. */
#include "gen.h"

#include <string.h>

/* == and != between compile-time strings (`ACT == "relu"`) or types (`DT == f16`, `dtype_of(x) != f32`):
 * a compile-time i1; anything else with one of them is an error at the operator. */
Val gen_compare_names(Gen *g, TokKind op, Val a, Val b, Loc loc) {
    if (a.k == V_ERR || b.k == V_ERR) return val_err();
    if ((a.k == V_NONE || b.k == V_NONE) && (op == TK_EQEQ || op == TK_NE)) { /* Triton's `x is None`: known at compile time */
        bool eq = a.k == V_NONE && b.k == V_NONE;
        return val_ct_int(op == TK_EQEQ ? eq : !eq, DT_I1);
    }
    if (a.k == V_NONE || b.k == V_NONE) {
        diag_error(g->d, loc, "None only compares with == and != (here '%s' %s '%s')", gen_val_type_name(g, a), lang_tok_spelling[op],
                   gen_val_type_name(g, b));
        return val_err();
    }
    bool strs = a.k == V_STR && b.k == V_STR, types = a.k == V_DTYPE && b.k == V_DTYPE;
    if ((op == TK_EQEQ || op == TK_NE) && ((a.k == V_DTYPE && b.k == V_STR) || (a.k == V_STR && b.k == V_DTYPE))) {
        /* xformers' `internal_dtype == "f32"` with internal_dtype defined as f32: a define of a type's name is that type */
        const char *t = gen_type_name(g, (a.k == V_DTYPE ? a : b).t), *str = (a.k == V_STR ? a : b).s;
        diag_error(g->d, loc, "a type compares only with types, a string only with strings (here the type '%s' %s the string "
                   "\"%s\"): a define or a keyword of compile() of a type's name (-D NAME=%s, NAME=\"%s\") is that type; give the "
                   "string quoted (NAME='\"%s\"'), or compare with the type (%s %s)", t, lang_tok_spelling[op], str, str, str, str,
                   lang_tok_spelling[op], t);
        return val_err();
    }
    if ((op != TK_EQEQ && op != TK_NE) || (!strs && !types)) {
        const char *what = a.k == V_STR || b.k == V_STR ? "strings" : "types";
        diag_error(g->d, loc, "%s only compare with == and != to %s (here '%s' %s '%s')", what, what, gen_val_type_name(g, a),
                   lang_tok_spelling[op], gen_val_type_name(g, b));
        return val_err();
    }
    bool eq = strs ? !strcmp(a.s, b.s) : a.t == b.t;
    return val_ct_int(op == TK_EQEQ ? eq : !eq, DT_I1);
}

/* The compile-time integers of a shape list or of a tuple of them (a shape written (BM, BN)); false otherwise. */
static bool ct_int_seq(Val v, int *n, int64_t *out) {
    if (v.k == V_SHAPE) {
        *n = v.rank;
        for (int i = 0; i < v.rank; i++) out[i] = v.shape[i];
        return true;
    }
    if (v.k != V_TUPLE || gen_is_record(v) || v.nelems > TIR_MAX_RANK) return false;
    *n = v.nelems;
    for (int i = 0; i < v.nelems; i++) {
        if (v.elems[i].k != V_CT || !dtype_is_int(v.elems[i].dt)) return false;
        out[i] = v.elems[i].i;
    }
    return true;
}

/* == and != of two shapes, as Triton's `x.shape == y.shape` or `acc.shape == (BM, BN)` compare (element by element,
 * a list and a tuple alike): a compile-time i1.  Other operators, and a shape against anything else, are errors. */
Val gen_compare_shapes(Gen *g, TokKind op, Val a, Val b, Loc loc) {
    if (a.k == V_ERR || b.k == V_ERR) return val_err();
    int na, nb;
    int64_t ea[TIR_MAX_RANK], eb[TIR_MAX_RANK];
    if ((op != TK_EQEQ && op != TK_NE) || !ct_int_seq(a, &na, ea) || !ct_int_seq(b, &nb, eb)) {
        diag_error(g->d, loc, "shapes (lists and tuples of compile-time integers) only compare with == and != to shapes (here '%s' "
                   "%s '%s')", gen_val_type_name(g, a),
                   lang_tok_spelling[op], gen_val_type_name(g, b));
        return val_err();
    }
    bool eq = na == nb;
    for (int i = 0; eq && i < na; i++) eq = ea[i] == eb[i];
    return val_ct_int(op == TK_EQEQ ? eq : !eq, DT_I1);
}

/* `a in t` (x->op ==) and `a not in t` (!=), t a tuple or list written out or held: a == e for each element e, joined by
 * || (a != e by && for `not in`), compared as == compares them (strings, types, shapes, numbers, tiles); an empty t
 * gives false (true).  Compile-time when every compare is. */
Val gen_membership(Gen *g, const Node *x, Val a) {
    if (a.k == V_ERR) return val_err();
    const Node *r = x->rhs;
    int n = 0;
    Val *e = NULL;
    if (r->kind == N_TUPLE || r->kind == N_LIST) { /* element by element: a list of strings or floats is no shape */
        e = ARENA_ARRAY(g->a, Val, r->nkids ? r->nkids : 1);
        for (; n < r->nkids; n++) e[n] = gen_expr(g, r->kids[n]);
    } else {
        Val t = gen_expr(g, r);
        if (t.k == V_ERR) return val_err();
        if (t.k == V_TUPLE && !gen_is_record(t)) n = t.nelems, e = t.elems;
        else if (t.k == V_SHAPE) {
            e = ARENA_ARRAY(g->a, Val, t.rank ? t.rank : 1);
            for (; n < t.rank; n++) e[n] = val_ct_int(t.shape[n], DT_I32);
        } else {
            diag_error(g->d, x->oploc, "'%s' takes a tuple or a list on its right (here '%s')", x->op == TK_EQEQ ? "in" : "not in",
                       gen_val_type_name(g, t));
            return val_err();
        }
    }
    Val acc = val_ct_int(x->op == TK_NE, DT_I1);
    for (int i = 0; i < n && acc.k != V_ERR; i++) {
        Val c;
        if (a.k == V_STR || e[i].k == V_STR || a.k == V_DTYPE || e[i].k == V_DTYPE || a.k == V_NONE || e[i].k == V_NONE)
            c = gen_compare_names(g, x->op, a, e[i], x->oploc);
        else if (a.k == V_SHAPE || e[i].k == V_SHAPE || (a.k == V_TUPLE && e[i].k == V_TUPLE)) c = gen_compare_shapes(g, x->op, a, e[i], x->oploc);
        else c = gen_binop(g, x->op, a, e[i], x->oploc);
        acc = gen_binop(g, x->op == TK_EQEQ ? TK_OROR : TK_ANDAND, acc, c, x->oploc);
    }
    return acc;
}
