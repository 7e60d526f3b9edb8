/* stmt.c - statements, structured control flow, inlining (kernels and the module: kernel.c).
 *
 * Statement sequences (gen_seq) carry a continuation (Cont: the statements
 * that follow in the enclosing blocks, up to the body's or the iteration's
 * end), which early `return`, `break` and `continue` use: their hidden
 * flags, what a continuation's end sets, a run-time `if` that may return or
 * jump and the guard that generates the rest of a body once are
 * early_exit.c's.  Otherwise:
 *   - `for`: a pre-scan collects the names assigned in the body; those bound
 *     outside the loop are loop-carried: OP_FOR operands [lb, ub, step,
 *     inits...], one region whose block args are the induction variable then
 *     the carried values, ending in `yield`; the FOR's results rebind them.
 *   - `while cond`: the condition is generated before the loop and again at
 *     the end of the body (with the body's scope closed); OP_WHILE carries it
 *     as value 0 in front of the loop-carried variables.
 *   - `break` and `continue` go through the loop-carried state, no jumps
 *     (early_exit.c).  A loop that breaks carries a hidden i1 "<running>"
 *     (true before the loop): a `for` runs its whole body under
 *     `if <running>`, a `while` computes its next condition as
 *     `if <running> { cond } else { false }`.
 *   - run-time `if`: both branches are generated into fresh blocks after a
 *     snapshot of every variable of the frame; variables whose value differs
 *     after either branch are yielded from both (constants materialized to
 *     the other branch's type) and rebound to the OP_IF's results.
 *   - `fn` calls are inlined in a fresh frame (stmt_fn.c).
 * File-level constants are evaluated lazily (with cycle detection) in a
 * scratch function that is not part of the module; they must fold. */
#include "gen.h"
#include "stmt_scan.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

Var *gen_lookup_var(Gen *g, const char *name);
Global *gen_find_global(Gen *g, const char *name);
Val gen_global_value(Gen *g, Global *gl, Loc loc);
Val gen_call_fn(Gen *g, const Decl *fn, const Node *call);

static void gen_seq(Gen *g, Node *const *st, int n, const Cont *k);

/* A kernel's or fn's body: its statements, then the end that every path not returned before reaches. */
static void gen_body(Gen *g, Node *const *st, int n) {
    static const Cont end = {.end = true};
    gen_define_var(g, RETURNED, val_ct_int(0, DT_I1));
    gen_seq(g, st, n, &end);
}

/* A device function's body, for stmt_fn.c's inlining. */
void gen_stmt_seq(Gen *g, Node *const *st, int n) { gen_body(g, st, n); }

/* ---- snapshots of a frame's variables (for run-time `if`) ---- */
typedef struct Snap {
    Scope **scopes;
    Var **heads;
    int nscopes;
    Var **vars;
    Val *vals;
    int nvars;
} Snap;

/* Names a statement may assign (through any branch and nested loop), RUNNING where it breaks the loop it is in and
 * JUMPED where it breaks or continues it (nested: inside a loop of its own, whose jumps are that loop's).  An inlined
 * fn runs in a frame of its own, so a call assigns nothing here. */
static void assigned_names(Gen *g, const Node *s, NameMap *out, bool nested) {
    if (!s) return;
    switch (s->kind) {
    case N_ASSIGN:
        if (s->name) namemap_put(g->a, out, s->name, (void *)s);
        for (int i = 0; !s->name && i < s->nkids; i++) namemap_put(g->a, out, s->kids[i]->name, (void *)s);
        break;
    case N_BREAK:
        if (!nested) namemap_put(g->a, out, RUNNING, (void *)s);
        /* fall through */
    case N_CONTINUE: /* whether the path left the iteration */
        if (!nested) namemap_put(g->a, out, JUMPED, (void *)s);
        break;
    case N_RETURN: /* whether the path returned, and a fn's value (a kernel has no such variable) */
        namemap_put(g->a, out, RETURNED, (void *)s);
        namemap_put(g->a, out, RETVAL, (void *)s);
        break;
    case N_BLOCK:
        for (int i = 0; i < s->nkids; i++) assigned_names(g, s->kids[i], out, nested);
        break;
    case N_IF:
        assigned_names(g, s->then, out, nested);
        assigned_names(g, s->els, out, nested);
        break;
    case N_FOR:
    case N_WHILE: assigned_names(g, s->then, out, true); break;
    default: break;
    }
}

static int var_newer_first(const void *a, const void *b) {
    const Var *x = *(Var *const *)a, *y = *(Var *const *)b;
    return (x->seq < y->seq) - (x->seq > y->seq);
}

/* The variables of the frame's scopes (innermost first, each newest first) whose names `only` has, and each
 * scope's list head.  Found by name, so a run-time `if` after 5000 `let`s costs what its assignments do (each
 * `if` copied every variable: 5000 lets and 5000 ifs took 18 GB). */
static void snap_take(Gen *g, Snap *s, const NameMap *only) {
    int ns = 0, nv = 0;
    for (Scope *sc = g->fr->scope; sc; sc = sc->up) {
        ns++;
        for (uint32_t k = 0; k < only->cap; k++)
            for (Var *v = only->keys[k] ? gen_scope_find(sc, only->keys[k]) : NULL; v; v = v->shadows) nv++;
    }
    s->scopes = ARENA_ARRAY(g->a, Scope *, ns + 1);
    s->heads = ARENA_ARRAY(g->a, Var *, ns + 1);
    s->vars = ARENA_ARRAY(g->a, Var *, nv + 1);
    s->vals = ARENA_ARRAY(g->a, Val, nv + 1);
    s->nscopes = s->nvars = 0;
    for (Scope *sc = g->fr->scope; sc; sc = sc->up) {
        s->scopes[s->nscopes] = sc;
        s->heads[s->nscopes++] = sc->vars;
        int first = s->nvars;
        for (uint32_t k = 0; k < only->cap; k++)
            for (Var *v = only->keys[k] ? gen_scope_find(sc, only->keys[k]) : NULL; v; v = v->shadows) s->vars[s->nvars++] = v;
        qsort(s->vars + first, (size_t)(s->nvars - first), sizeof(Var *), var_newer_first);
    }
    for (int i = 0; i < s->nvars; i++) s->vals[i] = s->vars[i]->val;
}

static void snap_restore(const Snap *s) {
    for (int i = 0; i < s->nscopes; i++) s->scopes[i]->vars = s->heads[i];
    for (int i = 0; i < s->nvars; i++) s->vars[i]->val = s->vals[i];
}

/* ---- statements ---- */

/* v taken apart by the pattern pat (an N_TUPLE of N_NAMEs and N_TUPLEs) into out[*pos..], depth first, as the
 * names were listed; a nested pattern's count is reported at its '(' (loc: the outermost's place). */
static bool unpack_pattern(Gen *g, const Node *s, const Node *pat, Loc loc, Val v, Val *out, int *pos) {
    if (pat->kind == N_NAME) {
        out[(*pos)++] = v;
        return true;
    }
    v = gen_list_as_tuple(g, v); /* Python's `M, N = x.shape` */
    if (v.k != V_TUPLE || gen_is_record(v)) {
        if (pat == s->lhs || !s->lhs) diag_error(g->d, s->rhs->loc, "cannot unpack '%s' into %d names: it is not a tuple", gen_val_type_name(g, v), pat->nkids);
        else diag_error(g->d, pat->loc, "cannot unpack '%s' into the %d names here: it is not a tuple", gen_val_type_name(g, v), pat->nkids);
        return false;
    }
    if (v.nelems != pat->nkids) {
        diag_error(g->d, loc, "cannot unpack a tuple of %d values into %d names", v.nelems, pat->nkids);
        return false;
    }
    for (int i = 0; i < pat->nkids; i++)
        if (!unpack_pattern(g, s, pat->kids[i], pat->kids[i]->loc, v.elems[i], out, pos)) return false;
    return true;
}

/* The values of a tuple for the names of `let (a, b) = v` or `(a, b) = v` (s->kids; s->lhs: the pattern, when
 * a tuple is nested in it, `let (a, (b, c)) = v`).  A name may appear once, but for Python's throw-away `_`
 * (FlagGems' `rv, _, _, _ = uniform(...)`), which takes the last of its values. */
static bool unpack(Gen *g, const Node *s, Loc names, Val v, Val *out) {
    for (int i = 0; i < s->nkids; i++) {
        out[i] = val_err();
        for (int j = 0; j < i; j++)
            if (!strcmp(s->kids[i]->name, s->kids[j]->name) && strcmp(s->kids[i]->name, "_")) {
                diag_error(g->d, s->kids[i]->loc, "'%s' appears twice in the names", s->kids[i]->name);
                return false;
            }
    }
    if (v.k == V_ERR) return false;
    if (s->lhs) {
        int pos = 0;
        return unpack_pattern(g, s, s->lhs, names, v, out, &pos);
    }
    v = gen_list_as_tuple(g, v);
    if (v.k != V_TUPLE || gen_is_record(v)) {
        diag_error(g->d, s->rhs->loc, "cannot unpack '%s' into %d names: it is not a tuple", gen_val_type_name(g, v), s->nkids);
        return false;
    }
    if (v.nelems != s->nkids) {
        diag_error(g->d, names, "cannot unpack a tuple of %d values into %d names", v.nelems, s->nkids);
        return false;
    }
    for (int i = 0; i < s->nkids; i++) out[i] = v.elems[i];
    return true;
}

/* A constant a variable holds: Triton's assignment makes a run-time scalar of a constexpr (`x = -7` is a tensor;
 * `x: tl.constexpr = -7` stays one, a `const` here), so `x / 2` truncates as a run-time value's (gen.c). */
static Val held(Gen *g, Val v) {
    if (v.k == V_TUPLE && !gen_is_record(v)) { /* Triton's assignment makes typed scalars of a tuple's constants too */
        Val *e = ARENA_ARRAY(g->a, Val, v.nelems);
        for (int i = 0; i < v.nelems; i++) e[i] = held(g, v.elems[i]);
        v.elems = e;
        return v;
    }
    return gen_hold(v);
}

/* v holds no run-time value (tuples looked into) */
static bool ct_only(Val v) {
    if (v.k == V_RT) return false;
    if (v.k == V_TUPLE)
        for (int i = 0; i < v.nelems; i++)
            if (!ct_only(v.elems[i])) return false;
    return v.k != V_VOID;
}

/* v with its constants weak (not typed scalars): a `const`'s value, as Triton's constexprs */
static Val unheld(Gen *g, Val v) {
    if (v.k == V_CT) v.held = false;
    if (v.k == V_TUPLE && !gen_is_record(v)) {
        Val *e = ARENA_ARRAY(g->a, Val, v.nelems);
        for (int i = 0; i < v.nelems; i++) e[i] = unheld(g, v.elems[i]);
        v.elems = e;
    }
    return v;
}

static void gen_let(Gen *g, const Node *s) {
    if (!s->name) { /* let (a, b, ...) = tuple */
        Val *vs = ARENA_ARRAY(g->a, Val, s->nkids);
        unpack(g, s, s->oploc, gen_expr(g, s->rhs), vs);
        for (int i = 0; i < s->nkids; i++) gen_define_var(g, s->kids[i]->name, held(g, vs[i]));
        return;
    }
    Val v = gen_expr(g, s->rhs);
    if (v.k == V_VOID) {
        gen_error_no_value(g, v, s->rhs->loc);
        v = val_err();
    }
    if (tyref_given(s->ty) && v.k != V_ERR) {
        v = gen_convert_to(g, v, s->ty, s->rhs->loc, s->name);
        if (v.k == V_CT) v.held = true; /* of the declared type (`let c: f32 = 1e-40` stays an f32) */
    }
    if (s->ival) { /* `const x = e;`, `let x: constexpr = e;`: a compile-time value, weak as a file-level const's */
        if (v.k != V_ERR && !ct_only(v)) {
            diag_error(g->d, s->rhs->loc, "'%s' is a compile-time constant, but its value is known only at run time (bind it with "
                       "'let %s = ...')", s->name, s->name);
            gen_note_runtime_params(g, s->rhs, v);
            v = val_err();
        }
        gen_define_var(g, s->name, unheld(g, v));
        g->fr->scope->vars->declared_const = true;
        return;
    }
    gen_define_var(g, s->name, held(g, v));
}

/* The targets of a tuple assignment as written (`lo, hi`, `a, (b, c)`), for a message: the pattern when nested (lhs),
 * else the names */
static const char *gen_targets_text(Gen *g, const Node *s) {
    const Node *pat = s->lhs ? s->lhs : s;
    const char *t = "";
    for (int i = 0; i < pat->nkids; i++) {
        const Node *k = pat->kids[i];
        const char *item = k->kind == N_TUPLE ? arena_printf(g->a, "(%s)", gen_targets_text(g, &(Node){.kids = k->kids, .nkids = k->nkids}))
                                              : k->name;
        t = arena_printf(g->a, "%s%s%s", t, i ? ", " : "", item);
    }
    return t;
}

/* Python's throwaway name: a target `_` that names no variable takes a value and keeps nothing (Triton's
 * `acc, l_i, _ = inner(...)`). */
static bool is_discard(const char *name) { return name && !strcmp(name, "_"); }

static void gen_assign(Gen *g, const Node *s) {
    static const TokKind binary_of[] = {TK_PLUS, TK_MINUS, TK_STAR, TK_SLASH, TK_PERCENT,
                                        TK_AMP, TK_PIPE, TK_CARET, TK_SHL, TK_SHR};
    if (!s->name) { /* (a, b, ...) = tuple: existing variables; `_`, where it names none, discards its element */
        Var **xs = ARENA_ARRAY(g->a, Var *, s->nkids);
        Val *vs = ARENA_ARRAY(g->a, Val, s->nkids);
        bool ok = true;
        int unknown = 0, discards = 0, first = -1;
        for (int i = 0; i < s->nkids; i++) {
            bool known = gen_lookup_var(g, s->kids[i]->name) || gen_find_global(g, s->kids[i]->name);
            if (!known && is_discard(s->kids[i]->name)) discards++;
            else if (!known && !unknown++) first = i;
        }
        for (int i = 0; i < s->nkids; i++) {
            const char *name = s->kids[i]->name;
            xs[i] = gen_lookup_var(g, name);
            if (xs[i] || (is_discard(name) && !gen_find_global(g, name))) continue;
            ok = false;
            if (gen_find_global(g, name)) {
                diag_error(g->d, s->kids[i]->loc, "cannot assign to '%s': it is not a variable", name);
                continue;
            }
            if (unknown == s->nkids - discards) { /* Python's `lo, hi = 0, n` binding new names: one error, at the first */
                if (i == first)
                    diag_error(g->d, s->loc, "unknown names: new variables are declared with 'let %s = ...' (an assignment without "
                               "'let' sets existing variables)", gen_targets_text(g, s));
            } else {
                diag_error(g->d, s->kids[i]->loc, "unknown name '%s'%s (a tuple assignment sets existing variables: declare it "
                           "before with 'let %s = ...')", name, gen_did_you_mean(g, name, true), name);
            }
            gen_note_ended_let(g, name, s->kids[i]->loc);
            /* bound from here on, without a value: its uses are the same mistake, not an unknown name each */
            gen_define_var(g, name, val_err());
        }
        Val v = gen_expr(g, s->rhs);
        if (!ok) return;
        unpack(g, s, s->loc, v, vs);
        for (int i = 0; i < s->nkids; i++)
            if (xs[i]) xs[i]->val = held(g, vs[i]), xs[i]->set = s->loc;
        return;
    }
    Var *x = gen_lookup_var(g, s->name);
    if (!x && is_discard(s->name) && s->op == TK_ASSIGN && !s->cond && !gen_find_global(g, s->name)) {
        /* Python's `_ = f(x)`: the value is computed and dropped */
        Val v = gen_expr(g, s->rhs);
        if (v.k == V_VOID) gen_error_no_value(g, v, s->rhs->loc);
        return;
    }
    if (!x) {
        if (gen_find_global(g, s->name)) diag_error(g->d, s->loc, "cannot assign to '%s': it is not a variable", s->name);
        else {
            diag_error(g->d, s->loc, "unknown name '%s'%s (a new variable is declared with 'let %s = ...')", s->name,
                       gen_did_you_mean(g, s->name, true), s->name);
            gen_note_ended_let(g, s->name, s->loc);
            /* bound from here on, without a value: its uses are the same mistake, not an unknown name each */
            if (s->op == TK_ASSIGN && !s->cond) gen_define_var(g, s->name, val_err());
        }
        return;
    }
    Val v = gen_expr(g, s->rhs);
    if (v.k == V_VOID) {
        gen_error_no_value(g, v, s->rhs->loc);
        v = val_err();
    }
    if (s->cond) { /* t[i] = v: Triton's tuple element assignment, the variable then holds the tuple with element i replaced */
        Val t = x->val;
        if (t.k == V_ERR || v.k == V_ERR) return;
        if (t.k != V_TUPLE || gen_is_record(t)) {
            diag_error(g->d, s->oploc, "cannot assign to an element of '%s', %s: tensors are values here; build the new one "
                       "(`where(arange(0, N) == i, v, a)`) or store to memory (a tuple's elements are assigned: `t[i] = v`)", s->name,
                       gen_a(g, t.k == V_RT ? gen_type_desc(g, t.t) : gen_val_type_name(g, t), t.k == V_RT || t.k == V_CT));
            return;
        }
        int64_t i;
        if (!val_ct_int_of(g, gen_expr(g, s->cond), s->cond->loc, "a tuple's index", &i)) return;
        if (i < -(int64_t)t.nelems || i >= t.nelems) {
            diag_error(g->d, s->cond->loc, "index %lld is out of range for a tuple of %d values", (long long)i, t.nelems);
            return;
        }
        if (i < 0) i += t.nelems;
        bool seq_e = t.elems[i].k == V_TUPLE || t.elems[i].k == V_SHAPE, seq_v = v.k == V_TUPLE || v.k == V_SHAPE;
        if (s->op == TK_PLUSEQ && seq_e != seq_v && t.elems[i].k != V_ERR) {
            /* `t[0] += [1, 2]` on a number (or `t[0] += 1` on a tuple): named as the element and the value, not as
             * gen_binop's operands (it said "'+' concatenates a tuple with a tuple, not with 'i32'") */
            diag_error(g->d, s->oploc, "'+=' on %s[%lld], %s, with %s: '+' adds numbers and tensors or concatenates tuples "
                       "and lists, not one with the other (to replace the element, assign it: `%s[%lld] = ...`%s)",
                       s->name, (long long)i, gen_a(g, gen_val_type_name(g, t.elems[i]), t.elems[i].k == V_CT || t.elems[i].k == V_RT),
                       gen_a(g, gen_val_type_name(g, v), v.k == V_CT || v.k == V_RT), s->name, (long long)i,
                       seq_e ? "; a one-element tuple is written (x,)" : "");
            return;
        }
        if (s->op != TK_ASSIGN) v = gen_binop(g, binary_of[s->op - TK_PLUSEQ], t.elems[i], v, s->oploc);
        /* what a tuple's element may be, as in a tuple written out: a value, a tuple, None, a type or a string.  A list
         * is Triton's tuple (`t[0] = [1, 2]` holds the tuple (1, 2), which serves as a shape as the list did) */
        v = gen_list_as_tuple(g, v);
        if (!val_is_tuple_element(g, v, s->rhs->loc)) return;
        Val *e = ARENA_ARRAY(g->a, Val, t.nelems);
        memcpy(e, t.elems, sizeof *e * (size_t)t.nelems);
        e[i] = held(g, v);
        t.elems = e;
        x->val = t;
        x->set = s->loc;
        return;
    }
    if (s->op != TK_ASSIGN) v = gen_binop(g, binary_of[s->op - TK_PLUSEQ], x->val, v, s->oploc);
    x->val = held(g, v);
    x->set = s->loc;
}

/* ---- loops ---- */

/* The loop-carried variables of a loop body: assigned in it (or RUNNING), bound before it.
 * A tuple (a user tuple, a tensor descriptor, a block pointer) is carried as its leaves
 * (val_leaves), its skeleton kept: `bp = advance(bp, [0, BK])` in a loop carries the offsets. */
typedef struct Carry {
    Var **vars;         /* the carried variables */
    Val *before;        /* their values before the loop: a tuple's skeleton */
    int *first;         /* each variable's first leaf */
    int nvars;
    ValueId *init;      /* per leaf: its value before the loop */
    const Type **types; /* per leaf */
    int n;              /* leaves */
} Carry;

static void carry_collect(Gen *g, const Node *s, const char *skip, Carry *c) {
    NameSet names = {0};
    collect_assigned(g, s->then, &names);
    memset(c, 0, sizeof *c);
    c->vars = ARENA_ARRAY(g->a, Var *, names.n + 1);
    c->before = ARENA_ARRAY(g->a, Val, names.n + 1);
    c->first = ARENA_ARRAY(g->a, int, names.n + 1);
    int cap = 0;
    for (int i = 0; i < names.n; i++) {
        Var *x = gen_lookup_var(g, names.v[i]);
        int k = x ? val_leaves(x->val, NULL) : 0;
        cap += k > 0 ? k : 0;
    }
    c->init = ARENA_ARRAY(g->a, ValueId, cap + 1);
    c->types = ARENA_ARRAY(g->a, const Type *, cap + 1);
    for (int i = 0; i < names.n; i++) {
        if (skip && !strcmp(names.v[i], skip)) continue;
        Var *x = gen_lookup_var(g, names.v[i]);
        if (!x || x->val.k == V_ERR) continue;
        if (x->declared_const) { /* as at a run-time `if`: a const's name is one compile-time value wherever it is seen */
            const Node *as = first_assign(s->then, x->name);
            diag_error(g->d, as ? as->loc : s->loc, "'%s' is a compile-time constant, and a run-time loop cannot change it (in "
                       "the loop and after it it would be known only at run time): declare it 'let %s = ...' for a run-time "
                       "value, or unroll the loop (static_range)", x->name, x->name);
            if (as) diag_note(g->d, s->loc, "the loop");
            x->val = val_err();
            continue;
        }
        int nl = val_leaves(x->val, NULL);
        if ((x->val.k != V_CT && x->val.k != V_RT && x->val.k != V_TUPLE) || nl < 0) {
            if (nl >= 0 || x->val.k != V_TUPLE)
                diag_error(g->d, s->loc, "'%s' holds a compile-time %s and cannot be reassigned in a loop", x->name,
                           gen_val_type_name(g, x->val));
            x->val = val_err();
            continue;
        }
        Val *lv = ARENA_ARRAY(g->a, Val, nl + 1);
        val_leaves(x->val, lv);
        c->vars[c->nvars] = x;
        c->before[c->nvars] = x->val;
        c->first[c->nvars++] = c->n;
        for (int k = 0; k < nl; k++) {
            ValueId iv = gen_materialize(g, lv[k], s->loc);
            c->init[c->n] = iv;
            c->types[c->n++] = tir_vtype(g->f, iv);
        }
    }
}

/* Rebind the carried variables to values[0..c->n) (the body's arguments, the loop's results). */
static void carry_bind(Gen *g, const Carry *c, const ValueId *values) {
    Val *lv = ARENA_ARRAY(g->a, Val, c->n + 1);
    for (int k = 0; k < c->n; k++) lv[k] = val_rt(g, values[k]);
    for (int i = 0; i < c->nvars; i++) {
        int pos = c->first[i];
        c->vars[i]->val = val_with_leaves(g, c->before[i], lv, &pos);
    }
}

/* The carried variables' values at the end of the body, as the yield's operands. */
static void carry_yield(Gen *g, const Node *s, const Carry *c, const ValueId *args, ValueId *ys) {
    memcpy(ys, args, sizeof(ValueId) * (size_t)c->n);
    for (int i = 0; i < c->nvars; i++) {
        Var *x = c->vars[i];
        Val nv = x->val;
        if (nv.k == V_ERR) continue;
        /* at the assignment that changed it, the loop in a note */
        Loc at = x->set.file == s->loc.file && x->set.line >= s->loc.line ? x->set : s->loc;
        int nl = c->before[i].k == V_TUPLE ? (i + 1 < c->nvars ? c->first[i + 1] : c->n) - c->first[i] : 1;
        Val *lv = ARENA_ARRAY(g->a, Val, nl + 1);
        if (c->before[i].k == V_TUPLE && !val_same_skeleton(nv, c->before[i])) {
            const char *was, *now;
            gen_differing_names(g, c->before[i], nv, &was, &now);
            diag_error(g->d, at, "loop-carried variable '%s' changes from '%s' to '%s' in the loop", x->name, was, now);
            if (at.line != s->loc.line || at.col != s->loc.col) diag_note(g->d, s->loc, "the loop");
            continue;
        }
        if (c->before[i].k == V_TUPLE) val_leaves(nv, lv);
        else lv[0] = nv;
        for (int k = 0; k < nl; k++) {
            int j = c->first[i] + k;
            const Type *t = c->types[j];
            Val v = lv[k];
            if (v.k == V_CT && t->dt != DT_PTR && dtype_is_float(v.dt) && !dtype_is_float(t->dt)) { /* 1.5 would truncate */
                diag_error(g->d, at, "loop-carried variable '%s' is %s, but is given the float %s in the loop (as in Triton, a "
                           "variable keeps its type: start it as a float, or cast)", x->name, gen_type_desc(g, t), arena_double(g->a, v.f));
                if (at.line != s->loc.line || at.col != s->loc.col) diag_note(g->d, s->loc, "the loop");
            } else if (v.k == V_CT && t->dt != DT_PTR) { /* a constant that does not fit: at its assignment, the loop in a note */
                int before = g->d->nerrors;
                ys[j] = gen_coerce(g, v, t->dt, NULL, t->rank, t->shape, at);
                if (g->d->nerrors > before && (at.line != s->loc.line || at.col != s->loc.col)) diag_note(g->d, s->loc, "the loop");
            }
            else if (v.k == V_RT && v.t == t) ys[j] = v.v;
            else if (v.k != V_ERR) {
                const char *what = gen_is_record(c->before[i]) ? arena_printf(g->a, "'%s' (a %s)", x->name, gen_val_type_name(g, c->before[i]))
                                   : c->before[i].k == V_TUPLE ? arena_printf(g->a, "element %d of '%s'", k, x->name)
                                                               : arena_printf(g->a, "'%s'", x->name);
                const Val b0 = c->before[i];
                const char *hint = v.k == V_RT ? gen_carried_type_hint(g, t, v.t) : "";
                if (b0.k == V_CT && t->rank == 0 && v.k == V_RT && v.t->rank == 0 && v.t->dt != DT_PTR && t->dt != DT_PTR)
                    /* mamba's `seq_idx = 0` before the loop, an i64 load in it: the constant made it an i32, as in Triton */
                    hint = arena_printf(g->a, " (the constant it starts from makes it '%s', as in Triton: start it as 'let %s: %s = %s;')",
                                        gen_type_desc(g, t), x->name, dtype_name(v.t->dt),
                                        dtype_is_float(b0.dt) ? arena_double(g->a, b0.f) : arena_printf(g->a, "%lld", (long long)b0.i));
                diag_error(g->d, at, "loop-carried variable %s changes type from '%s' to '%s' in the loop%s", what, gen_type_desc(g, t),
                           v.k == V_RT ? gen_type_desc(g, v.t) : gen_val_type_name(g, v), hint);
                if (at.line != s->loc.line || at.col != s->loc.col) diag_note(g->d, s->loc, "the loop");
            }
        }
    }
}

static bool name_read(const Node *n, const char *name);

/* A `let` of a loop body that declares a new variable from the outer one of its name, `let acc = acc + x;`:
 * Triton's `acc = acc + x` carries acc across iterations, this one does not (the outer acc stays as it was).
 * A warning at the first such `let` of each name (the loop variable aside). */
static void warn_loop_let_of_outer(Gen *g, const Node *body, const char *loopvar) {
    for (int i = 0; body && body->kind == N_BLOCK && i < body->nkids; i++) {
        const Node *l = body->kids[i];
        if (l->kind != N_LET || l->ival) continue;
        for (int k = 0; k < (l->name ? 1 : l->nkids); k++) {
            const char *nm = l->name ? l->name : l->kids[k]->name;
            if ((loopvar && !strcmp(nm, loopvar)) || !gen_lookup_var(g, nm) || !name_read(l->rhs, nm)) continue;
            bool earlier = false;
            for (int j = 0; j < i && !earlier; j++) {
                const Node *e = body->kids[j];
                if (e->kind != N_LET) continue;
                earlier = e->name && !strcmp(e->name, nm);
                for (int q = 0; !e->name && q < e->nkids; q++) earlier |= !strcmp(e->kids[q]->name, nm);
            }
            if (!earlier)
                diag_warning(g->d, l->loc, "this 'let' declares a new '%s' from the outer one, which the loop then leaves as it was "
                             "(in Triton '%s = %s + ...' carries it across iterations): write '%s = ...' to change the outer one",
                             nm, nm, nm, nm);
        }
    }
}

/* The body's statements in their own scope (`pre`: a variable to define there first), with JUMPED false
 * there, then the iteration's end.  A `for` that breaks runs them under `if <running>`. */
static void gen_loop_body(Gen *g, const Node *s, const char *pre, Val prev) {
    Frame *fr = g->fr;
    Scope *saved = fr->scope;
    Scope sc = {.up = saved};
    fr->scope = &sc;
    if (pre) gen_define_var(g, pre, prev);
    const Node *outer_loop = fr->loop;
    fr->loop = s;
    fr->loops++;
    static const Cont iter_end = {.iter_end = true};
    gen_define_var(g, JUMPED, val_ct_int(0, DT_I1));
    if (s->kind == N_FOR && contains_jump(s->then, N_BREAK)) {
        Node *guard = synth_node(g, N_IF, s->loc), *run = synth_node(g, N_NAME, s->loc);
        run->name = RUNNING;
        guard->cond = run;
        guard->then = s->then;
        Node *const one[1] = {guard};
        gen_seq(g, one, 1, &iter_end);
    } else {
        gen_seq(g, s->then->kids, s->then->nkids, &iter_end);
    }
    fr->loops--;
    fr->loop = outer_loop;
    fr->returned = fr->jumped = false;
    fr->scope = saved;
    warn_loop_let_of_outer(g, s->then, pre);
}

/* A scope around a loop that breaks, holding its RUNNING flag (true before the loop). */
static void loop_scope_open(Gen *g, const Node *s, Scope *sc) {
    sc->up = g->fr->scope;
    g->fr->scope = sc;
    if (contains_jump(s->then, N_BREAK)) gen_define_var(g, RUNNING, val_ct_int(1, DT_I1));
}

/* The first break or continue of a loop body that leaves this loop (not a nested one's), or NULL. */
static const Node *first_jump(const Node *s) {
    if (!s) return NULL;
    switch (s->kind) {
    case N_BREAK:
    case N_CONTINUE: return s;
    case N_BLOCK:
        for (int i = 0; i < s->nkids; i++) {
            const Node *j = first_jump(s->kids[i]);
            if (j) return j;
        }
        return NULL;
    case N_IF: {
        const Node *j = first_jump(s->then);
        return j ? j : first_jump(s->els);
    }
    default: return NULL; /* a nested loop's jumps are its own */
    }
}

/* for i in static_range(start, end, step): the body once per value of i, unrolled here with i a
 * compile-time int (so `if i == 0` picks code and shapes may depend on i), as Triton's
 * tl.static_range.  Assignments carry from one copy to the next as straight-line code does, so a
 * variable may even change type; break and continue have no loop to leave. */
enum { STATIC_RANGE_MAX = 4096 };

static void unroll_body(Gen *g, const Node *s, const Val *vals, int n);

static void gen_static_for(Gen *g, const Node *s) {
    int64_t b[3] = {0, 0, 1};
    int first = s->nkids == 1 ? 1 : 0;
    for (int i = 0; i < s->nkids; i++) {
        Val v = gen_expr(g, s->kids[i]);
        if (v.k == V_ERR) return;
        if (v.k != V_CT || !dtype_is_int(v.dt) || v.dt == DT_I1) {
            diag_error(g->d, s->kids[i]->loc, "'static_range' bounds must be compile-time integers%s",
                       v.k == V_RT ? " (use 'range' for a run-time loop)" : "");
            if (v.k == V_RT) gen_note_runtime_params(g, s->kids[i], v);
            return;
        }
        b[first + i] = v.i;
    }
    if (b[2] == 0) {
        diag_error(g->d, s->kids[s->nkids - 1]->loc, "'static_range' step must not be zero");
        return;
    }
    __int128 span = b[2] > 0 ? (__int128)b[1] - b[0] : (__int128)b[0] - b[1], step = b[2] > 0 ? b[2] : -(__int128)b[2];
    __int128 n = span > 0 ? (span + step - 1) / step : 0;
    if (n > STATIC_RANGE_MAX) {
        diag_error(g->d, s->loc, "'static_range' unrolls %lld iterations, more than %d: use 'range'",
                   (long long)(n > INT64_MAX ? INT64_MAX : n), STATIC_RANGE_MAX);
        return;
    }
    const Node *j = first_jump(s->then);
    if (j) {
        diag_error(g->d, j->loc, "'%s' inside a 'static_range' loop is not supported (its body is unrolled)",
                   j->kind == N_CONTINUE ? "continue" : "break");
        return;
    }
    Val *vals = ARENA_ARRAY(g->a, Val, n ? (size_t)n : 1);
    for (int64_t k = 0; k < n; k++) {
        int64_t iv = b[0] + k * b[2];
        vals[k] = val_ct_int(iv, iv == (int32_t)iv ? DT_I32 : DT_I64);
    }
    unroll_body(g, s, vals, (int)n);
}

/* Whether the statements or expression n read the name (an N_NAME of it anywhere inside). */
static bool node_mentions(const Node *n, const char *name) {
    if (!n) return false;
    if (n->kind == N_NAME && n->name && !strcmp(n->name, name)) return true;
    if (node_mentions(n->lhs, name) || node_mentions(n->rhs, name) || node_mentions(n->cond, name) ||
        node_mentions(n->then, name) || node_mentions(n->els, name))
        return true;
    for (int i = 0; i < n->nkids; i++)
        if (node_mentions(n->kids[i], name)) return true;
    return false;
}

/* The body of an unrolled loop s once per value in vals, its variable bound to each in turn. */
static void unroll_body(Gen *g, const Node *s, const Val *vals, int n) {
    Frame *fr = g->fr;
    const Node *outer_loop = fr->loop;
    fr->loop = s;
    fr->loops++; /* `return` stays an error inside, as in any loop */
    for (int k = 0; k < n; k++) {
        Scope *saved = fr->scope;
        Scope sc = {.up = saved};
        fr->scope = &sc;
        gen_define_var(g, s->name, vals[k]);
        int errors = g->d->nerrors;
        gen_seq(g, s->then->kids, s->then->nkids, NULL);
        fr->scope = saved;
        /* which copy, where the body reads the variable: an error may hold for one of its values only */
        bool named = s->name && (isalpha((unsigned char)s->name[0]) || s->name[0] == '_');
        if (g->d->nerrors > errors && n > 1 && (!named || node_mentions(s->then, s->name))) {
            const Val *v = &vals[k];
            if (named && v->k == V_CT && dtype_is_int(v->dt))
                diag_note(g->d, s->loc, "in the unrolled copy with %s = %lld", s->name, (long long)v->i);
            else diag_note(g->d, s->loc, "in copy %d of %d of the unrolled loop", k + 1, n);
        }
        if (g->d->nerrors > errors || g->too_big) break; /* once, not once per copy */
    }
    fr->loops--;
    fr->loop = outer_loop;
    if (n > 0) warn_loop_let_of_outer(g, s->then, s->name);
}

/* for v in t { ... } over a tuple, a list, or a list literal (whose elements may be any values, [1, 2.5, f16]): as
 * static_range, the body once per element with v that element, which may change type from one copy to the next
 * (Python's loop over a tuple, which Triton unrolls at compile time). */
static void gen_seq_for(Gen *g, const Node *s) {
    const Node *e = s->kids[0];
    const Node *j = first_jump(s->then);
    if (j) {
        diag_error(g->d, j->loc, "'%s' inside a loop over a tuple is not supported (its body is unrolled)",
                   j->kind == N_CONTINUE ? "continue" : "break");
        return;
    }
    Val *vals;
    int n;
    if (e->kind == N_LIST) {
        n = e->nkids;
        vals = ARENA_ARRAY(g->a, Val, n ? (size_t)n : 1);
        for (int k = 0; k < n; k++) {
            vals[k] = gen_expr(g, e->kids[k]);
            if (vals[k].k == V_ERR) return;
        }
    } else {
        Val t = gen_expr(g, e);
        if (t.k == V_ERR) return;
        t = gen_list_as_tuple(g, t);
        if (t.k == V_TUPLE && !gen_is_record(t)) {
            n = t.nelems; /* a copy: the body may assign the tuple's variable (t[i] = v), not the elements looped over */
            vals = ARENA_ARRAY(g->a, Val, n ? (size_t)n : 1);
            for (int k = 0; k < n; k++) vals[k] = t.elems[k];
        } else {
            diag_error(g->d, e->loc, "'for %s in' expects range(...), static_range(...), a tuple or a list, got '%s'%s", s->name,
                       gen_val_type_name(g, t), t.k == V_RT || t.k == V_CT ? " (a loop over a run-time count is 'for i in range(n)')" : "");
            return;
        }
    }
    if (n > STATIC_RANGE_MAX) {
        diag_error(g->d, e->loc, "the loop unrolls %d iterations, more than %d", n, STATIC_RANGE_MAX);
        return;
    }
    unroll_body(g, s, vals, n);
}

/* The keyword arguments of range(), as Triton's tl.range: num_stages (this loop's pipeline depth,
 * instead of the kernel's; 0 or 1: not pipelined) is *stages (-1: not given); loop_unroll_factor
 * (0 or 1: as LLVM decides; at most 255) is *unroll; flatten, disallow_acc_multi_buffer and
 * warp_specialize are accepted, compile-time, and have no effect here.  static_range takes none. */
static bool range_keywords(Gen *g, const Node *s, int *stages, int *unroll) {
    static const char *const known[] = {"num_stages", "loop_unroll_factor", "flatten", "disallow_acc_multi_buffer",
                                        "warp_specialize"};
    *stages = -1;
    *unroll = 0;
    const Node *kw = s->rhs;
    for (int i = 0; kw && i < kw->nkids; i++) {
        const char *name = kw->kwnames[i];
        const Node *e = kw->kids[i];
        Loc at_name = kw->kwlocs ? kw->kwlocs[i] : e->loc; /* where an unknown or repeated keyword is written */
        if (s->ival) {
            diag_error(g->d, at_name, "'static_range' takes no keyword arguments");
            return false;
        }
        int k = 0;
        while (k < (int)ARRAY_LEN(known) && strcmp(name, known[k])) k++;
        if (k == (int)ARRAY_LEN(known)) {
            diag_error(g->d, at_name, "'range' has no argument '%s' (its keywords: num_stages, loop_unroll_factor, flatten, "
                       "disallow_acc_multi_buffer, warp_specialize)", name);
            return false;
        }
        for (int j = 0; j < i; j++)
            if (!strcmp(kw->kwnames[j], name)) {
                diag_error(g->d, at_name, "'range' argument '%s' given twice", name);
                return false;
            }
        Val v = gen_expr(g, e);
        if (v.k == V_ERR) return false;
        if (v.k != V_CT || !dtype_is_int(v.dt)) {
            diag_error(g->d, e->loc, "'range' argument '%s' must be a compile-time %s", name, k >= 2 ? "bool or integer" : "integer");
            return false;
        }
        if (k == 0) {
            if (v.i < 0 || v.i > 16) {
                diag_error(g->d, e->loc, "'num_stages' of a loop must be between 0 and 16, got %lld", (long long)v.i);
                return false;
            }
            *stages = (int)v.i;
        }
        if (k == 1) {
            if (v.i < 0 || v.i > 255) {
                diag_error(g->d, e->loc, "'loop_unroll_factor' must be between 0 and 255, got %lld", (long long)v.i);
                return false;
            }
            *unroll = (int)v.i;
        }
    }
    return true;
}

/* A run-time loop whose results could have been compile-time values (Gen.rt_whiles), for the note where one is
 * needed as such (gen_note_runtime_params): a `while` of the plain lets names, a `for` of constants (names NULL). */
static void record_rt_loop(Gen *g, const Inst *loop, Loc loc, const char *names) {
    if (g->nrt_whiles == g->cap_rt_whiles) {
        int nc = g->cap_rt_whiles ? 2 * g->cap_rt_whiles : 4;
        g->rt_whiles = arena_grow(g->a, g->rt_whiles, sizeof(RtWhile) * (size_t)g->cap_rt_whiles, sizeof(RtWhile) * (size_t)nc);
        g->cap_rt_whiles = nc;
    }
    g->rt_whiles[g->nrt_whiles++] = (RtWhile){loop, loc, names};
}

static void gen_for(Gen *g, const Node *s) {
    int stages, unroll;
    if (!range_keywords(g, s, &stages, &unroll)) return;
    if (s->ival == 2) {
        gen_seq_for(g, s);
        return;
    }
    if (s->ival) {
        gen_static_for(g, s);
        return;
    }
    Module *m = g->m;
    Val b[3];
    Loc loc[3];
    if (s->nkids == 1) {
        b[0] = val_ct_int(0, DT_I32), b[1] = gen_expr(g, s->kids[0]), b[2] = val_ct_int(1, DT_I32);
        loc[0] = loc[1] = loc[2] = s->kids[0]->loc;
    } else {
        for (int i = 0; i < 3; i++) {
            b[i] = i < s->nkids ? gen_expr(g, s->kids[i]) : val_ct_int(1, DT_I32);
            loc[i] = s->kids[i < s->nkids ? i : 0]->loc;
        }
    }
    DType it = DT_I32;
    bool ok = true;
    for (int i = 0; i < 3; i++) {
        if (!val_is_value(g, b[i], loc[i])) {
            ok = false;
            continue;
        }
        if (val_rank(b[i]) || !dtype_is_int(val_dtype(b[i]))) {
            diag_error(g->d, loc[i], "'range' bounds must be integer scalars, got '%s'",
                       b[i].k == V_RT ? gen_type_desc(g, b[i].t) : dtype_name(b[i].dt));
            ok = false;
            continue;
        }
        /* i64 also for u32 bounds, whose values above 2^31 an i32 would make negative (range(0, n) ran no iteration) */
        if (dtype_bits(val_dtype(b[i])) == 64 || val_dtype(b[i]) == DT_U32) it = DT_I64;
    }
    for (int i = 0; ok && i < 3; i++) /* u64: counted in u64, compared unsigned (in i64, 2^63 and up were negative) */
        if (val_dtype(b[i]) == DT_U64) it = DT_U64;
    if (ok && b[2].k == V_CT && b[2].i == 0) {
        diag_error(g->d, loc[2], "'range' step must not be zero");
        ok = false;
    }
    /* a u64 loop counts up from a start that is not negative */
    for (int i = 0; ok && it == DT_U64 && i < 3; i++) {
        bool neg = b[i].k == V_CT && dtype_is_signed(b[i].dt) && b[i].i < 0;
        if (neg || (i == 2 && b[i].k == V_RT && dtype_is_signed(b[i].t->dt))) {
            diag_error(g->d, loc[i], "'range' over a u64 bound counts up in u64: %s", neg ? arena_printf(g->a, "its %s cannot be %lld",
                       i == 2 ? "step" : i ? "end" : "start", (long long)b[i].i) : "its step must be unsigned or a positive constant");
            ok = false;
        }
    }
    if (!ok) return;
    Scope *outer_scope = g->fr->scope, wrap = {0};
    loop_scope_open(g, s, &wrap);
    /* loop-carried variables: assigned in the body, bound before the loop */
    Carry c;
    carry_collect(g, s, s->name, &c);
    ValueId *ops = ARENA_ARRAY(g->a, ValueId, c.n + 3);
    for (int i = 0; i < 3; i++) ops[i] = gen_coerce(g, b[i], it, NULL, 0, NULL, loc[i]);
    memcpy(ops + 3, c.init, sizeof(ValueId) * (size_t)c.n);
    g->b.loc = s->loc;
    Inst *fi = tir_inst_new(g->f, OP_FOR, ops, 3 + c.n, c.types, c.n, s->loc);
    fi->a.ival2 = stages < 0 ? 0 : stages + 1; /* 0: the kernel's num_stages */
    fi->a.vec = (uint8_t)(unroll > 1 ? unroll : 0);
    tir_block_append(g->b.block, fi);
    bool ct_carry = false; /* a range of constants carrying a constant: its results could have been constants */
    for (int i = 0; i < c.nvars; i++) ct_carry |= c.before[i].k == V_CT;
    if (ct_carry && b[0].k == V_CT && b[1].k == V_CT && b[2].k == V_CT) record_rt_loop(g, fi, s->loc, NULL);
    Block *body = tir_block_new(g->f, NULL);
    tir_inst_add_region(g->f, fi, body);
    ValueId ivar = tir_block_add_arg(g->f, body, tir_scalar(m, it));
    for (int k = 0; k < c.n; k++) tir_block_add_arg(g->f, body, c.types[k]);
    carry_bind(g, &c, body->args + 1);
    Block *outer = g->b.block;
    g->b.block = body;
    gen_loop_body(g, s, s->name, val_rt(g, ivar));
    ValueId *ys = ARENA_ARRAY(g->a, ValueId, c.n + 1);
    carry_yield(g, s, &c, body->args + 1, ys);
    gen_emit_inst(g, s->loc, OP_YIELD, ys, c.n, NULL);
    g->b.block = outer;
    carry_bind(g, &c, fi->res);
    g->fr->scope = outer_scope;
}

/* The condition of an `if` or a `while` (what: its keyword; where: "" or " in the loop"): a scalar i1, or an
 * integer or float scalar, non-zero being true (NaN too: Triton's cond.to(int1), so `if HAS_BIAS` of a const
 * 0/1), or a scalar pointer, true when not null (Triton's cast of a pointer to int1, so FlagGems' batch norm's
 * `if weight_pointer:`), compile-time or not, as i1; val_err after an error otherwise.  c has been checked to be
 * a value. */
static Val scalar_cond(Gen *g, Val c, Loc loc, const char *what, const char *where) {
    if (c.k == V_ERR) return c;
    DType dt = c.k == V_CT ? c.dt : c.t->rank ? DT_VOID : c.t->dt;
    if (dt == DT_I1) return c;
    if (dt == DT_PTR) return gen_cast(g, gen_convert(g, c, tir_scalar(g->m, DT_I64), false, loc), DT_I1, loc);
    if (dt != DT_VOID && (dtype_is_int(dt) || dtype_is_float(dt))) return gen_cast(g, c, DT_I1, loc);
    diag_error(g->d, loc, "condition of '%s' must be a scalar number, got '%s'%s", what,
               c.k == V_CT ? gen_val_type_name(g, c) : gen_type_desc(g, c.t), where);
    return val_err();
}

/* A `while` condition: see scalar_cond; val_err otherwise. */
static Val while_cond(Gen *g, const Node *s) {
    Val c = gen_expr(g, s->cond);
    if (!val_is_value(g, c, s->cond->loc)) return val_err();
    return scalar_cond(g, c, s->cond->loc, "while", "");
}

/* A `while` whose condition is a compile-time true before the loop and stays compile-time through the body
 * (while_stays_static): unrolled here, one copy of the body per iteration while the condition holds, as
 * static_range's (Triton runs such a loop over constexprs at compile time: its `_log2`).  Assignments carry from one
 * copy to the next as in straight-line code; a `break` or `continue` (under compile-time conditions only) ends
 * the copy, a `break` the loop too, as their RUNNING and JUMPED flags say. */
static void gen_static_while(Gen *g, const Node *s) {
    Frame *fr = g->fr;
    const Node *outer_loop = fr->loop;
    fr->loop = s;
    fr->loops++; /* `return` stays an error inside, as in any loop */
    Var *run = contains_jump(s->then, N_BREAK) ? gen_lookup_var(g, RUNNING) : NULL;
    static const Cont iter_end = {.iter_end = true};
    for (int k = 1;; k++) {
        Scope *saved = fr->scope;
        Scope sc = {.up = saved};
        fr->scope = &sc;
        gen_define_var(g, JUMPED, val_ct_int(0, DT_I1));
        int errors = g->d->nerrors;
        gen_seq(g, s->then->kids, s->then->nkids, &iter_end);
        fr->returned = fr->jumped = false;
        fr->scope = saved;
        if (g->d->nerrors > errors) {
            diag_note(g->d, s->loc, "in iteration %d of the 'while' loop, which runs at compile time", k);
            break;
        }
        if (g->too_big || (run && run->val.k == V_CT && !run->val.i)) break;
        Val c = while_cond(g, s);
        if (c.k == V_ERR || (c.k == V_CT && !c.i)) break;
        if (c.k != V_CT) { /* while_stays_static said it cannot be */
            diag_error(g->d, s->cond->loc, "the condition of this 'while', compile-time before the loop, became run-time in "
                       "its body (iteration %d)", k);
            break;
        }
        if (k == STATIC_RANGE_MAX) {
            diag_error(g->d, s->loc, "this 'while' runs at compile time (its condition reads compile-time constants that its "
                       "body keeps so) and still holds after %d iterations: for a run-time loop declare its counter with "
                       "'let' (not 'const'), or use 'for ... in range(...)'", STATIC_RANGE_MAX);
            break;
        }
    }
    fr->loops--;
    fr->loop = outer_loop;
    warn_loop_let_of_outer(g, s->then, NULL);
}

static void gen_while(Gen *g, const Node *s) {
    if (!s->cond || !s->then) return;
    Scope *outer_scope = g->fr->scope, wrap = {0};
    loop_scope_open(g, s, &wrap);
    Val c0 = while_cond(g, s);
    if (c0.k == V_ERR || (c0.k == V_CT && !c0.i)) { /* never runs */
        g->fr->scope = outer_scope;
        return;
    }
    if (c0.k == V_CT && while_stays_static(g, s)) {
        gen_static_while(g, s);
        g->fr->scope = outer_scope;
        return;
    }
    Carry c;
    carry_collect(g, s, NULL, &c);
    const Type *i1 = tir_scalar(g->m, DT_I1);
    ValueId *ops = ARENA_ARRAY(g->a, ValueId, c.n + 1);
    const Type **types = ARENA_ARRAY(g->a, const Type *, c.n + 1);
    ops[0] = gen_coerce(g, c0, DT_I1, NULL, 0, NULL, s->cond->loc);
    types[0] = i1;
    memcpy(ops + 1, c.init, sizeof(ValueId) * (size_t)c.n);
    memcpy(types + 1, c.types, sizeof(const Type *) * (size_t)c.n);
    g->b.loc = s->loc;
    Inst *wi = tir_inst_new(g->f, OP_WHILE, ops, 1 + c.n, types, 1 + c.n, s->loc);
    tir_block_append(g->b.block, wi);
    const char *plain = c0.k == V_CT ? while_plain_lets(g, s) : NULL;
    if (plain) record_rt_loop(g, wi, s->loc, plain);
    Block *body = tir_block_new(g->f, NULL);
    tir_inst_add_region(g->f, wi, body);
    tir_block_add_arg(g->f, body, i1);
    for (int k = 0; k < c.n; k++) tir_block_add_arg(g->f, body, c.types[k]);
    carry_bind(g, &c, body->args + 1);
    Block *outer = g->b.block;
    g->b.block = body;
    gen_loop_body(g, s, NULL, val_err());
    /* the next condition, in the loop's scope; after a break, not evaluated: false */
    Val next;
    if (contains_jump(s->then, N_BREAK)) {
        gen_define_var(g, NEXT_COND, val_ct_int(0, DT_I1));
        Node *guard = synth_node(g, N_IF, s->loc), *run = synth_node(g, N_NAME, s->loc);
        Node *set = synth_node(g, N_ASSIGN, s->cond->loc), *blk = synth_node(g, N_BLOCK, s->loc);
        run->name = RUNNING;
        set->name = NEXT_COND;
        set->op = TK_ASSIGN;
        /* `cond as i1`: NEXT_COND is an i1, and an integer or float condition (checked before the loop) is
         * non-zero there, as scalar_cond makes it */
        Node *as = synth_node(g, N_CAST, s->cond->loc);
        as->lhs = s->cond;
        as->ty = (TypeRef){.dt = DT_I1};
        set->rhs = as;
        blk->kids = ARENA_ARRAY(g->a, Node *, 1);
        blk->kids[0] = set;
        blk->nkids = 1;
        guard->cond = run;
        guard->then = blk;
        Node *const one[1] = {guard};
        gen_seq(g, one, 1, NULL);
        next = gen_lookup_var(g, NEXT_COND)->val;
    } else {
        next = gen_expr(g, s->cond);
    }
    if (next.k != V_ERR && val_is_value(g, next, s->cond->loc)) next = scalar_cond(g, next, s->cond->loc, "while", " in the loop");
    else next = val_err();
    ValueId *ys = ARENA_ARRAY(g->a, ValueId, c.n + 2);
    if (next.k == V_CT && next.dt == DT_I1) ys[0] = gen_coerce(g, next, DT_I1, NULL, 0, NULL, s->cond->loc);
    else if (next.k == V_RT && next.t == i1) ys[0] = next.v;
    else {
        if (next.k != V_ERR)
            diag_error(g->d, s->cond->loc, "condition of 'while' must be a scalar number, got '%s' in the loop",
                       next.k == V_RT ? gen_type_desc(g, next.t) : gen_val_type_name(g, next));
        ys[0] = body->args[0];
    }
    carry_yield(g, s, &c, body->args + 1, ys + 1);
    gen_emit_inst(g, s->loc, OP_YIELD, ys, 1 + c.n, NULL);
    g->b.block = outer;
    carry_bind(g, &c, wi->res + 1);
    g->fr->scope = outer_scope;
}

/* A branch's statements (br: a block, the `if` after `else`, or NULL), in the current scope, then k. */
static void gen_branch_seq(Gen *g, const Node *br, const Cont *k) {
    if (!br) {
        if (k) gen_seq(g, NULL, 0, k);
    } else if (br->kind == N_BLOCK) {
        gen_seq(g, br->kids, br->nkids, k);
    } else {
        Node *const one[1] = {(Node *)br};
        gen_seq(g, one, 1, k);
    }
}

/* A branch of an `if`: a block, or the `if` after `else`; its own scope.
 * With a continuation, the statements after the `if` follow it.  keep (may be NULL) gets the branch's scope as
 * it ends: the names its own statements declared, with their last values. */
static void gen_branch(Gen *g, const Node *br, const Cont *k, Scope *keep) {
    Scope *saved = g->fr->scope;
    Scope sc = {.up = saved};
    g->fr->scope = &sc;
    gen_branch_seq(g, br, k);
    if (keep) *keep = sc;
    g->fr->scope = saved;
}

/* v, a variable of a branch's scope `sc` that ended, as Python would keep it after the `if`: the newest of its
 * name there, a name of the source (not a hidden one such as RUNNING), and no variable's or file-level
 * const's name here (a `let` that hid one stays the branch's own).  A built-in's or fn's name may be kept:
 * a call of it still calls that (Triton's `flip = ...` hides nothing: the built-in is `tl.flip`). */
static bool outlives_branch(Gen *g, const Scope *sc, const Var *v) {
    unsigned char c = (unsigned char)v->name[0];
    if (gen_scope_find(sc, v->name) != v || !(c == '_' || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')) || gen_lookup_var(g, v->name))
        return false;
    Global *gl = gen_find_global(g, v->name);
    return !gl || gl->decl->kind == D_FN;
}

/* Whether n reads the variable `name` (an assignment's target is not a read; `x += 1` is). */
static bool name_read(const Node *n, const char *name) {
    if (!n) return false;
    if (n->kind == N_NAME) return !strcmp(n->name, name);
    if ((n->kind == N_LET || n->kind == N_ASSIGN)) {
        /* `x += 1` and `t[i] = v` (the rest of the tuple) read the target */
        if (n->kind == N_ASSIGN && (n->op != TK_ASSIGN || n->cond) && n->name && !strcmp(n->name, name)) return true;
        return name_read(n->rhs, name) || name_read(n->ty.call, name) || (n->kind == N_ASSIGN && name_read(n->cond, name));
    }
    if (name_read(n->lhs, name) || name_read(n->rhs, name) || name_read(n->cond, name) || name_read(n->then, name) ||
        name_read(n->els, name) || name_read(n->ty.call, name))
        return true;
    for (int i = 0; i < n->nkids; i++)
        if (name_read(n->kids[i], name)) return true;
    return false;
}

/* The last `let` of name among a branch's own statements (br: a block, or the `if` after `else`), NULL none. */
static const Node *branch_let(const Node *br, const char *name) {
    const Node *r = NULL;
    for (int i = 0; br && br->kind == N_BLOCK && i < br->nkids; i++) {
        const Node *s = br->kids[i];
        if (s->kind != N_LET) continue;
        if (s->name ? !strcmp(s->name, name) : false) r = s;
        for (int j = 0; !s->name && j < s->nkids; j++)
            if (!strcmp(s->kids[j]->name, name)) r = s;
    }
    return r;
}

/* A branch's `let` that hid a variable of the frame which the statements after the `if` read: in Triton the
 * branch's assignment changes that variable, here it is the outer one again after the branch (Triton's
 * `i_n, i_t = ...` written `let (i_n, i_t) = ...`).  A warning at the `let`. */
static void warn_hidden_in_branch(Gen *g, const Scope *keep, const Node *br, const Cont *rest) {
    int n = 0;
    for (const Var *v = keep ? keep->vars : NULL; v; v = v->next) n++;
    const Var **vs = ARENA_ARRAY(g->a, const Var *, n + 1);
    n = 0;
    for (const Var *v = keep ? keep->vars : NULL; v; v = v->next) vs[n++] = v;
    while (n-- > 0) { /* oldest first */
        const Var *v = vs[n];
        if (gen_scope_find(keep, v->name) != v || !gen_lookup_var(g, v->name)) continue;
        bool read = false;
        for (const Cont *c = rest; c && !read; c = c->next)
            for (int i = 0; i < c->n && !read; i++) read = name_read(c->st[i], v->name);
        const Node *let = read ? branch_let(br, v->name) : NULL;
        if (let)
            diag_warning(g->d, let->loc, "this 'let' declares a new '%s' that hides the outer one until the branch ends, and the "
                         "outer '%s' is read after the 'if', unchanged (in Triton the branch's assignment changes it): assign it "
                         "with '%s = ...'%s", v->name, v->name, v->name,
                         let->name ? "" : " (a new name beside it: declare that one first, then assign the tuple)");
    }
}

/* Declares name after an `if` whose branch declared it (outlives_branch). */
static void define_outlived(Gen *g, const char *name, Val v, bool is_const) {
    gen_define_var(g, name, v);
    g->fr->scope->vars->outlived = true;
    g->fr->scope->vars->declared_const = is_const; /* a const stays one after the `if` that kept it */
}

/* After a compile-time `if` whose taken branch br had the scope sc (ended, or, for a branch that returns or jumps,
 * at the end of one path through it, where the statements after the `if` follow), the names the branch declared,
 * declared again in the current scope with their values there, oldest first, as Triton (Python) keeps them; a
 * warning at a `let` that hid a variable those statements (rest) read. */
void gen_keep_branch_names(Gen *g, const Scope *sc, const Node *br, const Cont *rest) {
    warn_hidden_in_branch(g, sc, br, rest);
    int n = 0;
    for (Var *v = sc->vars; v; v = v->next) n++;
    Var **out = ARENA_ARRAY(g->a, Var *, n + 1);
    n = 0;
    for (Var *v = sc->vars; v; v = v->next)
        if (outlives_branch(g, sc, v)) out[n++] = v;
    while (n > 0) define_outlived(g, out[n - 1]->name, out[n - 1]->val, out[n - 1]->declared_const), n--;
}

/* After an `if` whose condition was an error (reported), the names its branches declare stand for errors, so
 * later uses of them add nothing to that report (not an "unknown name" each). */
static void define_branch_names_as_errors(Gen *g, const Node *br) {
    if (!br) return;
    if (br->kind == N_BLOCK)
        for (int i = 0; i < br->nkids; i++) define_branch_names_as_errors(g, br->kids[i]);
    else if (br->kind == N_IF) define_branch_names_as_errors(g, br->then), define_branch_names_as_errors(g, br->els);
    else if (br->kind == N_LET && br->name) define_outlived(g, br->name, val_err(), false);
    else if (br->kind == N_LET)
        for (int i = 0; i < br->nkids; i++)
            if (br->kids[i]->name) define_outlived(g, br->kids[i]->name, val_err(), false);
}

/* Returns true when the rest of the sequence (`rest`) was generated here. */
static bool gen_if(Gen *g, const Node *s, const Cont *rest) {
    Val c = gen_expr(g, s->cond);
    /* Python's `if None:` is false: a pointer parameter passed as None (specialized b=None) under Triton's
     * `if b_ptr:` drops the branch, as its run-time pointer is tested for null */
    if (c.k == V_NONE) c = val_ct_int(0, DT_I1);
    if (val_is_value(g, c, s->cond->loc)) c = scalar_cond(g, c, s->cond->loc, "if", "");
    else c = val_err();
    if (c.k == V_ERR) {
        define_branch_names_as_errors(g, s->then);
        define_branch_names_as_errors(g, s->els);
        return false;
    }
    if (c.k == V_CT) {
        const Node *br = c.i ? s->then : s->els;
        /* as in Triton, where only the taken branch is compiled, the names it declares live on after the `if`
         * (`if HAS_BIAS { let b = load(pb + offs); }` ... `if HAS_BIAS { y += b; }`), also where it may return
         * or jump: then the statements after the `if` follow the branch's paths that go on, and see its names
         * there (xformers' `if USE_SEQ_LEN: kv_len = ...; if EARLY_EXIT and kv_len == 0: return`) */
        if (br && (contains_return(br) || (g->fr->loop && contains_jump(br, N_ERR)))) {
            Scope *saved = g->fr->scope;
            Scope sc = {.up = saved};
            Cont k = *rest;
            k.kept = &sc, k.kept_br = br;
            g->fr->scope = &sc;
            gen_branch_seq(g, br, &k);
            g->fr->scope = saved;
            return true;
        }
        Scope keep = {0};
        if (br) gen_branch(g, br, NULL, &keep);
        gen_keep_branch_names(g, &keep, br, rest);
        return false;
    }
    return exit_if_rt(g, s, c.v, rest);
}

/* A run-time `if` on cond (at_if: the statement's place, where its messages point) with the branches then and els,
 * each followed by its continuation kt or ke (a guard, then and els NULL: then empty, having returned or jumped, and
 * els the rest, not; flag, RETURNED or JUMPED, the one it reads); the variables either may assign merge after it.
 * rest: the statements after the `if`, for warnings.  flag RETURNED: the `if` may return, so the variables of a path
 * that returned are not merged (they are never read again), nor the fn's value on a path that did not return: filled
 * (exit_fill_unread) with the other path's.  (A path that jumped keeps its variables: the loop's yield reads them.) */
void gen_if_rt(Gen *g, Loc at_if, ValueId cond, const Node *then, const Node *els, const Cont *kt, const Cont *ke,
               const Cont *rest, const char *flag) {
    Frame *fr = g->fr;
    NameMap assigned = {0}; /* what the branches, and the statements they continue with, may assign */
    assigned_names(g, then, &assigned, false);
    assigned_names(g, els, &assigned, false);
    for (int side = 0; side < 2; side++)
        for (const Cont *c = side ? ke : kt; c && (side == 0 || ke != kt); c = c->next) {
            for (int i = 0; i < c->n; i++) assigned_names(g, c->st[i], &assigned, false);
            if (c->end) namemap_put(g->a, &assigned, RETVAL, NULL), namemap_put(g->a, &assigned, RETURNED, NULL);
            if (c->iter_end) namemap_put(g->a, &assigned, JUMPED, NULL);
        }
    if (flag && !strcmp(flag, RETURNED)) namemap_put(g->a, &assigned, RETURNED, NULL), namemap_put(g->a, &assigned, RETVAL, NULL);
    else if (flag) namemap_put(g->a, &assigned, flag, NULL);
    bool guard = !then && !els;
    Snap snap;
    snap_take(g, &snap, &assigned);
    Block *tb = tir_block_new(g->f, NULL), *eb = tir_block_new(g->f, NULL);
    Block *outer = g->b.block;
    Val *tv = ARENA_ARRAY(g->a, Val, snap.nvars + 1), *ev = ARENA_ARRAY(g->a, Val, snap.nvars + 1);
    /* each branch's last assignment of each variable: where a constant that does not fit the merged type is reported */
    Loc *s0 = ARENA_ARRAY(g->a, Loc, snap.nvars + 1), *ts = ARENA_ARRAY(g->a, Loc, snap.nvars + 1),
        *es = ARENA_ARRAY(g->a, Loc, snap.nvars + 1);
    for (int i = 0; i < snap.nvars; i++) s0[i] = snap.vars[i]->set;
    int ir = -1, iv = -1, ig = -1; /* RETURNED's, RETVAL's and the guard's flag's (the innermost one's) places in snap */
    for (int i = 0; i < snap.nvars; i++) {
        if (!strcmp(snap.vars[i]->name, RETURNED)) ir = i;
        if (!strcmp(snap.vars[i]->name, RETVAL)) iv = i;
        if (ig < 0 && flag && !strcmp(snap.vars[i]->name, flag)) ig = i;
    }
    g->b.block = tb;
    Scope tkeep = {0}, ekeep = {0};
    if (guard && ig >= 0) snap.vars[ig]->val = val_ct_int(1, DT_I1);
    gen_branch(g, then, kt, &tkeep);
    for (int i = 0; i < snap.nvars; i++) {
        tv[i] = snap.vars[i]->val;
        ts[i] = snap.vars[i]->set;
        snap.vars[i]->set = s0[i];
    }
    snap_restore(&snap);
    fr->returned = fr->jumped = false;
    g->b.block = eb;
    if (guard && ig >= 0) snap.vars[ig]->val = val_ct_int(0, DT_I1);
    if (els || ke) gen_branch(g, els, ke, &ekeep);
    if (!kt && !ke) {
        warn_hidden_in_branch(g, &tkeep, then, rest);
        warn_hidden_in_branch(g, &ekeep, els, rest);
    }
    for (int i = 0; i < snap.nvars; i++) {
        Var *x = snap.vars[i];
        ev[i] = x->val, es[i] = x->set;
        bool els_set = es[i].file != s0[i].file || es[i].line != s0[i].line || es[i].col != s0[i].col;
        x->set = els_set ? es[i] : ts[i]; /* the last assignment in either branch, as before the `if` was merged */
    }
    snap_restore(&snap);
    fr->returned = fr->jumped = false;
    /* a path that returned (RETURNED a constant true at its end) leaves its variables unread; one that did not
     * return leaves the fn's value unread.  Both returned: nothing follows, only the fn's value merges. */
    bool ta = ir >= 0 && tv[ir].k == V_CT && tv[ir].i, ra = ir >= 0 && ev[ir].k == V_CT && ev[ir].i;
    bool tn = ir >= 0 && tv[ir].k == V_CT && !tv[ir].i, rn = ir >= 0 && ev[ir].k == V_CT && !ev[ir].i;
    bool both = ta && ra;
    for (int i = 0; i < snap.nvars && !both; i++) {
        if (i == ir) continue;
        if (i == iv ? tn && !rn : ta) tv[i] = exit_fill_unread(g, tb, tv[i], ev[i], at_if);
        else if (i == iv ? rn && !tn : ra) ev[i] = exit_fill_unread(g, eb, ev[i], tv[i], at_if);
    }
    /* names both branches declare (their own statements, not blocks inside them), none of them in scope before:
     * as in Triton, they live on after the `if`, merged as a variable both branches assign (of one type; a
     * constant converts to the other branch's run-time type).  Others stay the branch's own: a use after the
     * `if` is an unknown name, with a note at the `let` (a name one branch declares is unbound in Triton too) */
    int nh = 0;
    for (Var *v = tkeep.vars; v; v = v->next) nh++;
    const char **hname = ARENA_ARRAY(g->a, const char *, nh + 1);
    Val *hta = ARENA_ARRAY(g->a, Val, nh + 1), *hea = ARENA_ARRAY(g->a, Val, nh + 1);
    bool *hconst = ARENA_ARRAY(g->a, bool, nh + 1);
    nh = 0;
    for (Var *v = els && !ke && !ta && !ra ? tkeep.vars : NULL; v; v = v->next) {
        Var *e = gen_scope_find(&ekeep, v->name);
        if (!e || !outlives_branch(g, &tkeep, v) || !outlives_branch(g, &ekeep, e)) continue;
        /* a const of one value in both stays that const; a const of two values, or a const and a variable, is no one
         * compile-time value after the `if`, so it stays the branches' own */
        if ((v->declared_const || e->declared_const) && !(v->declared_const && e->declared_const && val_same(v->val, e->val))) continue;
        hconst[nh] = v->declared_const;
        hname[nh] = v->name, hta[nh] = v->val, hea[nh++] = e->val;
    }
    /* merge: which variables changed, and to what type; a tuple of one skeleton in both
     * branches merges leaf by leaf */
    int cap = nh;
    for (int i = 0; i < snap.nvars; i++) {
        int ka = val_leaves(tv[i], NULL), kb = val_leaves(ev[i], NULL);
        cap += (ka > 0 ? ka : 0) + (kb > 0 ? kb : 0);
    }
    const Type **types = ARENA_ARRAY(g->a, const Type *, cap + 1);
    Val *ya = ARENA_ARRAY(g->a, Val, cap + 1), *yb = ARENA_ARRAY(g->a, Val, cap + 1);
    int *which = ARENA_ARRAY(g->a, int, cap + 1), *leaf = ARENA_ARRAY(g->a, int, cap + 1);
    int ny = 0;
    for (int i = 0; i < snap.nvars; i++) {
        /* (the fn's value before the `if` is none to keep: only a path's `return` gives it, as the paths merge) */
        Val a = tv[i], b = ev[i], o = i == iv ? (Val){.k = V_VOID} : snap.vals[i];
        Var *x = snap.vars[i];
        bool rv = !strcmp(x->name, RETVAL);
        if ((both && !rv && i != ir) || (val_same(a, o) && val_same(b, o))) continue;
        if (a.k == V_ERR || b.k == V_ERR) {
            x->val = val_err();
            continue;
        }
        if (val_same(a, b)) {
            x->val = a;
            continue;
        }
        if (x->declared_const) { /* a const's name is a compile-time value wherever it is seen: not one of two */
            Loc at = !val_same(a, o) ? ts[i] : es[i];
            if (at.file != at_if.file || at.line < at_if.line) at = at_if;
            diag_error(g->d, at, "'%s' is a compile-time constant, and a run-time 'if' cannot change it (after the 'if' it "
                       "would be known only at run time): declare it 'let %s = ...' for a run-time value", x->name, x->name);
            if (at.line != at_if.line || at.col != at_if.col) diag_note(g->d, at_if, "the 'if'");
            x->val = val_err();
            continue;
        }
        bool tuples = a.k == V_TUPLE && b.k == V_TUPLE && val_same_skeleton(a, b) && val_leaves(a, NULL) > 0;
        bool va = a.k == V_CT || a.k == V_RT, vb = b.k == V_CT || b.k == V_RT;
        if (!tuples && (!va || !vb)) {
            if (rv) {
                const char *na, *nb;
                gen_differing_names(g, a, b, &na, &nb);
                Loc at = x->set.file == at_if.file && x->set.line >= at_if.line ? x->set : at_if;
                diag_error(g->d, at, "'%s' returns %s on one path of a run-time 'if' and %s on another (every 'return' of a "
                           "function gives one type)", fr->fn->name, a.k == V_VOID ? "no value" : gen_a(g, na, true),
                           b.k == V_VOID ? "no value" : gen_a(g, nb, true));
                if (at.line != at_if.line || at.col != at_if.col) diag_note(g->d, at_if, "the 'if'");
            } else if (a.k == V_TUPLE && b.k == V_TUPLE && val_leaves(a, NULL) >= 0 && val_leaves(b, NULL) >= 0) {
                const char *na, *nb;
                gen_differing_names(g, a, b, &na, &nb);
                diag_error(g->d, at_if, "'%s' is '%s' in one branch of a run-time 'if' and '%s' in the other", x->name, na, nb);
            } else diag_error(g->d, at_if, "'%s' gets different compile-time values in the branches of a run-time 'if'", x->name);
            x->val = val_err();
            continue;
        }
        int nl = tuples ? val_leaves(a, NULL) : 1;
        Val *la = ya + ny, *lb = yb + ny;
        if (tuples) val_leaves(a, la), val_leaves(b, lb);
        else la[0] = a, lb[0] = b;
        bool bad = false;
        int n0 = ny;
        Val *lo = ARENA_ARRAY(g->a, Val, nl); /* the value before the `if`, leaf by leaf where it has the skeleton */
        if (tuples && o.k == V_TUPLE && val_same_skeleton(o, a)) val_leaves(o, lo);
        else if (!tuples) lo[0] = o;
        for (int k = 0; k < nl && !bad; k++) {
            Val ea = la[k], eb = lb[k], ok = lo[k];
            const char *name = rv ? arena_printf(g->a, "the value '%s' returns", fr->fn->name) : arena_printf(g->a, "'%s'", x->name);
            const char *what = gen_is_record(a) ? arena_printf(g->a, "%s (a %s)", name, gen_val_type_name(g, a))
                               : tuples ? arena_printf(g->a, "element %d of %s", k, name) : name;
            const Type *t = merge_leaf_type(g, at_if, what, ea, eb, ok, ts[i], es[i], x->set);
            if (!t) {
                bad = true;
                break;
            }
            ya[ny] = ea, yb[ny] = eb;
            types[ny] = t;
            which[ny] = i;
            leaf[ny++] = tuples ? k : -1;
        }
        if (bad) {
            ny = n0;
            x->val = val_err();
        }
    }
    for (int h = nh - 1; h >= 0; h--) { /* oldest first, as the branches declared them */
        Val a = hta[h], b = hea[h];
        if (a.k == V_ERR || b.k == V_ERR || val_same(a, b)) {
            define_outlived(g, hname[h], a.k == V_ERR || b.k == V_ERR ? val_err() : a, hconst[h]);
            continue;
        }
        const Type *t = NULL;
        if (a.k == V_RT && b.k == V_RT) t = a.t == b.t ? a.t : NULL;
        else if (a.k == V_RT && b.k == V_CT) t = a.t;
        else if (a.k == V_CT && b.k == V_RT) t = b.t;
        else if (a.k == V_CT && b.k == V_CT && dtype_is_float(a.dt) == dtype_is_float(b.dt))
            t = tir_scalar(g->m, gen_promote(a.dt, b.dt));
        Val cv = a.k == V_CT ? a : b;
        if (t && cv.k == V_CT && (t->dt == DT_PTR || (dtype_is_float(cv.dt) && !dtype_is_float(t->dt)))) t = NULL;
        if (!t) continue; /* no one value after the `if`: a use there is an unknown name */
        ya[ny] = a, yb[ny] = b;
        types[ny] = t;
        which[ny] = -1 - h;
        leaf[ny++] = -1;
    }
    ValueId *ys = ARENA_ARRAY(g->a, ValueId, ny + 1);
    Block *blocks[2] = {tb, eb};
    for (int side = 0; side < 2; side++) {
        g->b.block = blocks[side];
        for (int j = 0; j < ny; j++) {
            Val v = side ? yb[j] : ya[j];
            const Type *t = types[j];
            if (v.k != V_CT) {
                ys[j] = v.v;
                continue;
            }
            Loc at = at_if;
            if (which[j] >= 0) {
                Loc set = (side ? es : ts)[which[j]]; /* the branch's assignment, when it made this value */
                const Loc o0 = s0[which[j]];
                bool made = set.file != o0.file || set.line != o0.line || set.col != o0.col;
                if (made && set.file == at_if.file && set.line >= at_if.line) at = set;
            }
            int before = g->d->nerrors;
            ys[j] = gen_coerce(g, v, t->dt, NULL, t->rank, t->shape, at);
            if (g->d->nerrors > before && (at.line != at_if.line || at.col != at_if.col)) diag_note(g->d, at_if, "the 'if'");
        }
        gen_emit_inst(g, at_if, OP_YIELD, ys, ny, NULL);
    }
    g->b.block = outer;
    Inst *ii = tir_inst_new(g->f, OP_IF, &cond, 1, types, ny, at_if);
    tir_block_append(outer, ii);
    tir_inst_add_region(g->f, ii, tb);
    tir_inst_add_region(g->f, ii, eb);
    for (int j = 0; j < ny;) {
        if (which[j] < 0) { /* a name both branches declared */
            define_outlived(g, hname[-1 - which[j]], val_rt(g, ii->res[j]), false);
            j++;
            continue;
        }
        Var *x = snap.vars[which[j]];
        if (leaf[j] < 0) {
            x->val = val_rt(g, ii->res[j++]);
            int f = which[j - 1];
            if (f == ir || (f == ig && ig >= 0)) x->set = tv[f].k == V_RT ? ts[f] : ev[f].k == V_RT ? es[f] : at_if;
            continue;
        }
        Val skel = tv[which[j]];
        int nl = val_leaves(skel, NULL), pos = 0;
        Val *lv = ARENA_ARRAY(g->a, Val, nl);
        for (int k = 0; k < nl; k++) lv[k] = val_rt(g, ii->res[j + k]);
        x->val = val_with_leaves(g, skel, lv, &pos);
        j += nl;
    }
}

static void gen_stmt(Gen *g, const Node *s) {
    switch (s->kind) {
    case N_LET: gen_let(g, s); break;
    case N_ASSIGN: gen_assign(g, s); break;
    case N_FOR: gen_for(g, s); break;
    case N_WHILE: gen_while(g, s); break;
    case N_BREAK:
    case N_CONTINUE: exit_jump(g, s); break;
    case N_RETURN: exit_return(g, s); break;
    case N_EXPR: gen_expr(g, s->rhs); break;
    case N_BLOCK: gen_branch(g, s, NULL, NULL); break;
    default: diag_error(g->d, s->loc, "expected a statement"); break;
    }
}

static void gen_seq(Gen *g, Node *const *st, int n, const Cont *k) {
    for (int i = 0; i < n; i++) {
        if (g->fr->returned || g->fr->jumped || g->too_big || g->d->nerrors > 100) return;
        const Node *s = st[i];
        if (++g->nstmts > GEN_MAX_STMTS) {
            g->too_big = true;
            diag_error(g->d, s->loc, "kernel too large after inlining and unrolling: more than %d statements", GEN_MAX_STMTS);
            return;
        }
        if (s->kind == N_IF) {
            Cont rest = {st + i + 1, n - i - 1, g->fr->scope, k, false, false, NULL, NULL};
            if (gen_if(g, s, &rest)) return;
            continue;
        }
        if (s->kind == N_BLOCK && g->fr->loop && contains_jump(s, N_ERR)) { /* the rest follows inside */
            Cont rest = {st + i + 1, n - i - 1, g->fr->scope, k, false, false, NULL, NULL};
            gen_branch(g, s, &rest, NULL);
            return;
        }
        gen_stmt(g, s);
    }
    if (!k || g->fr->returned || g->fr->jumped) return;
    if (exit_at_cont_end(g, k)) return;
    Scope kept; /* after a compile-time `if`'s taken branch: its names (the caller restores the scope) */
    g->fr->scope = k->kept ? exit_kept_scope(g, k, &kept) : k->scope;
    gen_seq(g, k->st, k->n, k->next);
}

/* A kernel's statements (kernel.c). */
void gen_stmts(Gen *g, Node *const *st, int n) { gen_body(g, st, n); }
