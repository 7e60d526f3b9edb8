/* early_exit.c - early `return`, `break` and `continue` (for stmt.c): the statements themselves, the hidden flags
 * they set, what the end of a body or of an iteration sets, a run-time `if` that may return or jump, and the guard
 * that generates the rest of a body once.
 *
 * There are no jumps in the Tile IR: a statement sequence (stmt.c's gen_seq) carries a continuation (Cont): the
 * statements that follow in the enclosing blocks, up to the body's end (an implicit `return;`) or the loop
 * iteration's end.  The statements after a `return`, `break` or `continue` are not generated on its path
 * (Frame.returned, Frame.jumped end the sequence).
 *   1. An `if` with a run-time condition that contains a `return` (outside loops), one of whose branches always
 *      returns, becomes an OP_IF whose other branch is followed by the rest of the kernel or fn (the
 *      continuation), so the statements after the `if` run exactly on the paths that did not return.  Nothing
 *      follows the OP_IF itself; in a fn it yields the value returned (the hidden variable RETVAL, merged as any
 *      variable both branches assign).
 *   2. Where both branches may go on (`if c { if d { return x; } ... }`), copying the rest into both would double
 *      it at each such `if`: the branches are generated alone, yielding the hidden i1 RETURNED (false at the
 *      body's start, set by each `return` and at the body's end) and RETVAL, then the rest once, in the else
 *      branch of a guard `if RETURNED` (stmt.c's gen_if_rt with no branches).  A path that returned yields its
 *      variables as the other path has them (they are never read again), one that did not the other's type for
 *      RETVAL (exit_fill_unread).
 *   3. `break` and `continue` go through the loop-carried state.  A run-time `if` containing one of them takes the
 *      rest of the iteration's statements as its continuation (as 1), but its branches' variables are merged as
 *      usual, so the body's yield sees the values at the jump.  Where both branches may go on and statements
 *      follow, the rest is generated once after it, as in 2, under a guard on the hidden i1 JUMPED (false at the
 *      body's start, set by each jump and at the iteration's end), all variables merged (those of a path that
 *      jumped feed the yield).
 *   4. `break` also clears the loop's hidden carried i1 RUNNING (true before the loop; stmt.c's loops read it: a
 *      `for` runs its whole body under `if RUNNING`, so the remaining iterations do nothing, a `while` computes
 *      its next condition as `if RUNNING { cond } else { false }`, so it is not evaluated again after a break).
 *   5. A compile-time `if` whose taken branch contains a `return` or a jump inlines the branch followed by the
 *      continuation (stmt.c's gen_if), so these work under a `const` condition in kernels and fns alike; the
 *      continuation keeps the branch's scope (Cont.kept), and the names the branch declared live on in the
 *      statements after it, as after a branch that does not return or jump (exit_kept_scope). */
#include "stmt_scan.h"

/* return = "return" expr? ";" */
void exit_return(Gen *g, const Node *s) {
    Frame *fr = g->fr;
    if (fr->loops) { /* Triton's rule too: its loops are structured regions, which a return cannot leave */
        diag_error(g->d, s->loc,
                   "'return' inside a '%s' loop is not supported (as in Triton: no 'return' inside 'for' or 'while' statements)",
                   fr->loop && fr->loop->kind == N_WHILE ? "while" : "for");
        return;
    }
    Var *rf = gen_lookup_var(g, RETURNED);
    if (rf) rf->val = val_ct_int(1, DT_I1);
    if (!fr->fn) {
        if (s->rhs) diag_error(g->d, s->rhs->loc, "a kernel cannot return a value");
        fr->returned = true;
        return;
    }
    /* inside run-time `if`s, the value is the hidden variable's, merged by each `if` (gen_if_rt) */
    fr->ret = s->rhs ? gen_expr(g, s->rhs) : (Val){.k = V_VOID};
    Var *rv = gen_lookup_var(g, RETVAL);
    if (rv) rv->val = fr->ret, rv->set = s->loc;
    fr->returned = true;
}

/* break = "break" ";"   continue = "continue" ";" */
void exit_jump(Gen *g, const Node *s) {
    const char *what = s->kind == N_BREAK ? "break" : "continue";
    if (!g->fr->loop) {
        diag_error(g->d, s->loc, g->fr->fn ? "'%s' outside a loop (a function cannot leave its caller's loop)" : "'%s' outside a loop",
                   what);
        return;
    }
    if (s->kind == N_BREAK) {
        Var *run = gen_lookup_var(g, RUNNING);
        if (!run) unreachable("break without its loop's running flag");
        run->val = val_ct_int(0, DT_I1);
    }
    Var *jf = gen_lookup_var(g, JUMPED);
    if (jf) jf->val = val_ct_int(1, DT_I1), jf->set = s->loc;
    g->fr->jumped = true;
}

/* A continuation's end, reached by a path that went on to it: the body's end returns (a fn with no value), as
 * a `return;` would; the iteration's end leaves it, as a `continue` would.  False for any other continuation. */
bool exit_at_cont_end(Gen *g, const Cont *k) {
    if (k->end) {
        Var *rf = gen_lookup_var(g, RETURNED), *rv = g->fr->fn ? gen_lookup_var(g, RETVAL) : NULL;
        if (rf) rf->val = val_ct_int(1, DT_I1);
        if (rv) rv->val = (Val){.k = V_VOID};
        g->fr->ret = (Val){.k = V_VOID};
        g->fr->returned = true;
        return true;
    }
    if (k->iter_end) {
        Var *jf = gen_lookup_var(g, JUMPED);
        if (jf) jf->val = val_ct_int(1, DT_I1);
        return true;
    }
    return false;
}

/* The statements after a compile-time `if` whose taken branch returns or jumps (k: they, k->kept the branch's scope),
 * reached from the scope `from` at the end of a path through the branch: the names the branch declared, and those of
 * the compile-time branches inside it that it kept for its own later statements (the kept scopes between `from` and
 * k->kept), newest first, so the newest of a name wins; defined in the current scope.  The scopes of run-time
 * branches between keep their names, as everywhere. */
static void keep_names_after_branch(Gen *g, const Scope *from, const Cont *k) {
    int n = 0;
    const Scope *s = from;
    for (; s && s != k->kept; s = s->up) n += s->kept;
    const Scope **inner = ARENA_ARRAY(g->a, const Scope *, n + 1);
    n = 0;
    if (s) /* else not reached through the branch's scope: its own names only */
        for (s = from; s != k->kept; s = s->up)
            if (s->kept) inner[n++] = s;
    for (int i = 0; i < n; i++) gen_keep_branch_names(g, inner[i], NULL, k);
    gen_keep_branch_names(g, k->kept, k->kept_br, k);
}

/* The scope for the statements of k (k->kept set: they follow a compile-time `if`'s taken branch that returns or
 * jumps), reached at the end of a path through the branch: sc, made the current scope, with the names the branch
 * kept (keep_names_after_branch) declared in it. */
Scope *exit_kept_scope(Gen *g, const Cont *k, Scope *sc) {
    const Scope *from = g->fr->scope;
    *sc = (Scope){.up = k->scope, .kept = true};
    g->fr->scope = sc;
    keep_names_after_branch(g, from, k);
    return sc;
}

/* A variable's value on a path where it is never read again (a path that returned; the fn's value where it did not
 * return), made to merge with the other path's value other: that where it holds no run-time value, else a
 * run-time value of its type, in block b: own where own is one, else a zero (a null pointer). */
Val exit_fill_unread(Gen *g, Block *b, Val own, Val other, Loc loc) {
    if (other.k == V_TUPLE) {
        bool same = own.k == V_TUPLE && own.nelems == other.nelems;
        Val r = other;
        r.elems = ARENA_ARRAY(g->a, Val, other.nelems + 1);
        for (int i = 0; i < other.nelems; i++)
            r.elems[i] = exit_fill_unread(g, b, same ? own.elems[i] : (Val){.k = V_VOID}, other.elems[i], loc);
        return r;
    }
    if (other.k != V_RT) return other;
    if (own.k == V_RT && own.t == other.t) return own;
    Builder saved = g->b;
    g->b.block = b, g->b.before = NULL, g->b.loc = loc;
    const Type *t = other.t;
    ValueId z = tir_const_int(&g->b, t->dt == DT_PTR ? tir_type(g->m, DT_I64, t->rank, t->shape, NULL, NULL) : t, 0);
    if (t->dt == DT_PTR) z = gen_emit(g, loc, OP_BITCAST, &z, 1, t);
    g->b = saved;
    return val_rt(g, z);
}

/* Whether no statement follows in k, up to the body's or the iteration's end. */
static bool cont_empty(const Cont *k) {
    for (; k; k = k->next)
        if (k->n > 0) return false;
    return true;
}

/* The `if` s on the run-time condition cond, followed by rest (points 1-3 where it may return or jump; else a
 * plain merge).  Returns true when rest was generated here. */
bool exit_if_rt(Gen *g, const Node *s, ValueId cond, const Cont *rest) {
    Frame *fr = g->fr;
    /* a `return` in it (outside loops): where a branch always returns, the rest of the kernel or fn runs in the
     * other branch; else (both may go on: copying the rest into both would double it at each such `if`) the
     * branches are generated alone and the rest once after them, in the else branch of a guard `if RETURNED`.
     * A fn's value is then the one variable merged after the `if` (RETVAL), as Triton's branches each return */
    bool early = !fr->loops && contains_return(s);
    bool guarded = early && !always_returns(s->then) && !always_returns(s->els);
    /* a jump out of the iteration: where a branch always jumps, or nothing follows in the body, the rest of the body
     * runs in the branches, whose variables then merge as usual (the loop's yield follows the `if`); else, as for a
     * return, the branches alone and the rest once after them, in the else branch of a guard `if JUMPED` (the paths
     * that jumped keep their variables for the loop's yield, so all merge) */
    bool jumps = fr->loop && contains_jump(s, N_ERR);
    bool jguarded = jumps && !early && !always_jumps(s->then) && !always_jumps(s->els) && !cont_empty(rest);
    const Cont *k = (early && !guarded) || (jumps && !jguarded) ? rest : NULL;
    gen_if_rt(g, s->loc, cond, s->then, s->els, k, k, rest, early ? RETURNED : NULL);
    const char *flag = guarded ? RETURNED : jguarded ? JUMPED : NULL;
    Var *rf = flag ? gen_lookup_var(g, flag) : NULL;
    if (rf) {
        Val m = rf->val;
        if (m.k == V_CT && !m.i) return false; /* no path returned or jumped (one under a compile-time condition not taken) */
        /* the guard: the rest where not returned (or jumped); its messages at the `if` where such a path and one going
         * on met */
        if (m.k == V_RT) gen_if_rt(g, rf->set, m.v, NULL, NULL, NULL, rest, rest, flag);
    }
    if (early) { /* the rest ran inside the branches, or after the guard */
        fr->returned = true;
        Var *rv = fr->fn ? gen_lookup_var(g, RETVAL) : NULL;
        if (rv) fr->ret = rv->val;
    }
    return early || jumps;
}
