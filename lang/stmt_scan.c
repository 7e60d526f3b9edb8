/* stmt_scan.c - pre-scans of statements for stmt.c: the names a statement binds (collect_bound) or assigns
 * (collect_assigned), loop conditions that cannot change (loop_invariant_cond, loop_static_cond), whether a
 * `while` runs at compile time (while_stays_static), jumps and returns in a statement, and nodes code
 * generation synthesizes. */
#include "stmt_scan.h"

#include <string.h>

static void names_add(Gen *g, NameSet *s, const char *name) {
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->v[i], name)) return;
    if (s->n == s->cap) {
        int nc = s->cap ? s->cap * 2 : 8;
        s->v = arena_grow(g->a, s->v, sizeof(char *) * (size_t)s->cap, sizeof(char *) * (size_t)nc);
        s->cap = nc;
    }
    s->v[s->n++] = name;
}

static bool names_has(const NameSet *s, const char *name) {
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->v[i], name)) return true;
    return false;
}

/* Names s binds anywhere in it: a let, an assignment, a for's variable. */
static void collect_bound(Gen *g, const Node *s, NameSet *out) {
    if (!s) return;
    switch (s->kind) {
    case N_LET:
    case N_ASSIGN:
        if (s->name) names_add(g, out, s->name);
        for (int i = 0; !s->name && i < s->nkids; i++) names_add(g, out, s->kids[i]->name);
        break;
    case N_BLOCK:
        for (int i = 0; i < s->nkids; i++) collect_bound(g, s->kids[i], out);
        break;
    case N_IF:
        collect_bound(g, s->then, out);
        collect_bound(g, s->els, out);
        break;
    case N_FOR:
        if (s->name) names_add(g, out, s->name);
        collect_bound(g, s->then, out);
        break;
    case N_WHILE: collect_bound(g, s->then, out); break;
    default: break;
    }
}

/* e is made of literals, operators and names the loop body binds nowhere (`HAS_W`, `!HAS_W && MODE == 1`, `b is None`). */
static bool loop_invariant_cond(const Node *e, const NameSet *bound) {
    if (!e) return false;
    switch (e->kind) {
    case N_INT:
    case N_FLOAT:
    case N_BOOL:
    case N_NONE:
    case N_STR:
    case N_DTYPE: return true;
    case N_NAME: return !names_has(bound, e->name);
    case N_UNARY:
    case N_CAST: return loop_invariant_cond(e->lhs, bound);
    case N_BINARY: return loop_invariant_cond(e->lhs, bound) && loop_invariant_cond(e->rhs, bound);
    default: return false;
    }
}

/* The value (0 or 1) of an `if`'s condition in a loop body that is a compile-time i1 before the
 * loop and that the body cannot change; -1 when it is not one.  Evaluated aside (no diagnostics,
 * nothing emitted): the `if` itself reports its condition's errors when the body is generated. */
static int loop_static_cond(Gen *g, const Node *cond, const NameSet *bound) {
    if (!loop_invariant_cond(cond, bound)) return -1;
    Diag d, *sd = g->d;
    diag_init(&d);
    Func *sf = g->f;
    Builder sb = g->b;
    g->d = &d;
    g->f = g->scratch;
    g->b = (Builder){.f = g->scratch, .block = g->scratch->body, .loc = cond->loc};
    Val c = gen_expr(g, cond);
    g->d = sd;
    g->f = sf;
    g->b = sb;
    int r = !d.nerrors && c.k == V_CT && c.dt == DT_I1 ? (c.i != 0) : -1;
    diag_free(&d);
    return r;
}

/* Names assigned in s (a loop body), and RUNNING when s breaks its own loop (not a nested one).
 * An `if` whose condition is a compile-time constant the body cannot change counts only its
 * taken branch: `if HAS_W { dw += ... }` in a loop assigns nothing when HAS_W is false, so a
 * `dw` that is None then (Triton's name bound only under the same constexpr) is no carried value. */
static void collect_assigned_in(Gen *g, const Node *s, NameSet *out, bool nested, const NameSet *bound) {
    if (!s) return;
    switch (s->kind) {
    case N_ASSIGN:
        if (s->name) names_add(g, out, s->name);
        for (int i = 0; !s->name && i < s->nkids; i++) names_add(g, out, s->kids[i]->name);
        break;
    case N_BREAK:
        if (!nested) names_add(g, out, RUNNING);
        break;
    case N_BLOCK:
        for (int i = 0; i < s->nkids; i++) collect_assigned_in(g, s->kids[i], out, nested, bound);
        break;
    case N_IF: {
        int c = loop_static_cond(g, s->cond, bound);
        if (c != 0) collect_assigned_in(g, s->then, out, nested, bound);
        if (c != 1) collect_assigned_in(g, s->els, out, nested, bound);
        break;
    }
    case N_FOR:
    case N_WHILE: collect_assigned_in(g, s->then, out, true, bound); break;
    default: break;
    }
}

/* The first assignment of name in s (through branches and nested loops), NULL none. */
const Node *first_assign(const Node *s, const char *name) {
    if (!s) return NULL;
    switch (s->kind) {
    case N_ASSIGN:
        if (s->name) return strcmp(s->name, name) ? NULL : s;
        for (int i = 0; i < s->nkids; i++)
            if (!strcmp(s->kids[i]->name, name)) return s;
        return NULL;
    case N_BLOCK:
        for (int i = 0; i < s->nkids; i++) {
            const Node *r = first_assign(s->kids[i], name);
            if (r) return r;
        }
        return NULL;
    case N_IF: {
        const Node *r = first_assign(s->then, name);
        return r ? r : first_assign(s->els, name);
    }
    case N_FOR:
    case N_WHILE: return first_assign(s->then, name);
    default: return NULL;
    }
}

void collect_assigned(Gen *g, const Node *s, NameSet *out) {
    NameSet bound = {0};
    collect_bound(g, s, &bound);
    collect_assigned_in(g, s, out, false, &bound);
}

/* ---- a `while` that runs at compile time ---- */

/* The names a `while` body binds (bound), those of them that may hold a run-time value (rt), and whether a jump of
 * the loop is under a condition that may be run-time (jump_rt). */
typedef struct StaticScan {
    NameSet bound, rt;
    bool changed, jump_rt;
    bool plain_ct; /* a plain `let` of a compile-time value counts as a const (while_plain_lets) */
} StaticScan;

/* v holds compile-time values only (a constant, a type, None, a string, a tuple of those) */
static bool val_compile_time(Val v) {
    if (v.k == V_TUPLE)
        for (int i = 0; i < v.nelems; i++)
            if (!val_compile_time(v.elems[i])) return false;
    return v.k != V_RT && v.k != V_ERR && v.k != V_VOID && v.k != V_FN;
}

/* Built-ins that give a compile-time value of compile-time arguments and do nothing else. */
static bool pure_builtin(const char *name) {
    static const char *const pure[] = {"min", "max", "minimum", "maximum", "abs", "next_power_of_2", "len"};
    for (int i = 0; i < (int)ARRAY_LEN(pure); i++)
        if (!strcmp(name, pure[i])) return true;
    return false;
}

/* e surely gives a compile-time value in the loop: literals, operators, conditionals, tuples and pure built-ins of
 * names that hold compile-time values (file-level consts, -D defines, variables the body binds only to such values,
 * variables it does not bind whose value is one). */
static bool ct_expr(Gen *g, const Node *e, const StaticScan *sc) {
    if (!e) return true;
    switch (e->kind) {
    case N_INT:
    case N_FLOAT:
    case N_BOOL:
    case N_NONE:
    case N_STR:
    case N_DTYPE: return true;
    case N_NAME: {
        if (names_has(&sc->bound, e->name)) return !names_has(&sc->rt, e->name);
        Var *x = gen_lookup_var(g, e->name);
        if (x) return val_compile_time(x->val);
        Global *gl = gen_find_global(g, e->name);
        if (gl) return gl->decl->kind == D_CONST;
        return gen_find_define(g, e->name) >= 0;
    }
    case N_UNARY:
    case N_CAST: return ct_expr(g, e->lhs, sc);
    case N_BINARY: return ct_expr(g, e->lhs, sc) && ct_expr(g, e->rhs, sc);
    case N_COND: return ct_expr(g, e->cond, sc) && ct_expr(g, e->then, sc) && ct_expr(g, e->els, sc);
    case N_CALL:
        if (!e->name || !pure_builtin(e->name) || gen_lookup_var(g, e->name) || gen_find_global(g, e->name)) return false;
        for (int i = 0; i < e->nkids; i++)
            if ((e->kwnames && e->kwnames[i]) || !ct_expr(g, e->kids[i], sc)) return false;
        return true;
    case N_INDEX:
        if (!ct_expr(g, e->lhs, sc)) return false;
        /* fall through */
    case N_TUPLE:
    case N_LIST:
        for (int i = 0; i < e->nkids; i++)
            if (!ct_expr(g, e->kids[i], sc)) return false;
        return true;
    default: return false;
    }
}

static void mark_rt(Gen *g, StaticScan *sc, const char *name) {
    if (names_has(&sc->rt, name)) return;
    names_add(g, &sc->rt, name);
    sc->changed = true;
}

/* One walk over a `while` body (rt: under a condition that may be run-time, or in a nested loop, whose values are
 * run-time; nested: in a nested loop, whose jumps are its own), marking the names bound to what may be run-time. */
static void static_scan(Gen *g, const Node *s, bool rt, bool nested, StaticScan *sc) {
    if (!s) return;
    switch (s->kind) {
    case N_LET:
    case N_ASSIGN: {
        Node self = {.kind = N_NAME, .name = s->name};
        /* a `let` keeps a compile-time value only as a `const` (Triton's `x: tl.constexpr = e`): another is Triton's
         * tensor */
        bool ct = !rt && ct_expr(g, s->rhs, sc) && ct_expr(g, s->cond, sc) &&
                  (s->kind == N_LET ? (s->ival == 1 || sc->plain_ct) && s->name
                                    : !s->name || (s->op == TK_ASSIGN && !s->cond) || ct_expr(g, &self, sc));
        for (int i = 0; !ct && i < (s->name ? 1 : s->nkids); i++) mark_rt(g, sc, s->name ? s->name : s->kids[i]->name);
        break;
    }
    case N_BREAK:
    case N_CONTINUE: sc->jump_rt |= rt && !nested; break;
    case N_BLOCK:
        for (int i = 0; i < s->nkids; i++) static_scan(g, s->kids[i], rt, nested, sc);
        break;
    case N_IF: {
        bool c = ct_expr(g, s->cond, sc);
        static_scan(g, s->then, rt || !c, nested, sc);
        static_scan(g, s->els, rt || !c, nested, sc);
        break;
    }
    case N_FOR:
    case N_WHILE:
        if (s->kind == N_FOR && s->name) mark_rt(g, sc, s->name);
        static_scan(g, s->then, true, true, sc);
        break;
    default: break;
    }
}

/* Whether the `while` s, whose condition is a compile-time true before the loop, runs at compile time (Triton's rule:
 * a loop over constexprs): every name its condition reads surely stays compile-time through the body (each binding of
 * it gives a compile-time value, none under a run-time condition or in a nested loop), and its `break`s and
 * `continue`s are under compile-time conditions only.  A name the body binds counts as run-time unless it was
 * declared a compile-time constant (Var.declared_const; in the body, a `const` `let`) and held one before the loop:
 * Triton's assignment makes a tensor of a plain `i = 0`, so `let i = 0; while i < N { ...; i += 1; }` is a run-time
 * loop there and here. */
static bool while_static_scan(Gen *g, const Node *s, bool plain_ct) {
    StaticScan sc = {.plain_ct = plain_ct};
    collect_bound(g, s->then, &sc.bound);
    for (int i = 0; i < sc.bound.n; i++) {
        Var *x = gen_lookup_var(g, sc.bound.v[i]);
        if (x && ((!x->declared_const && !plain_ct) || !val_compile_time(x->val))) mark_rt(g, &sc, sc.bound.v[i]);
    }
    do {
        sc.changed = false;
        static_scan(g, s->then, false, false, &sc);
    } while (sc.changed);
    return !sc.jump_rt && ct_expr(g, s->cond, &sc);
}

bool while_stays_static(Gen *g, const Node *s) { return while_static_scan(g, s, false); }

/* For a `while` that does not stay static: the names of the plain `let`s (variables bound before it and holding
 * compile-time values, and `let`s in its body) that make it run-time, "'n' and 'log2'", where declaring them
 * compile-time would make it static (Triton's `_log2` ported with `let n = i;`); NULL otherwise. */
const char *while_plain_lets(Gen *g, const Node *s) {
    if (!while_static_scan(g, s, true)) return NULL;
    NameSet bound = {0};
    collect_bound(g, s->then, &bound);
    const char **v = ARENA_ARRAY(g->a, const char *, bound.n + 1), *r = NULL;
    int n = 0;
    for (int i = 0; i < bound.n; i++) {
        Var *x = gen_lookup_var(g, bound.v[i]);
        if (x && !x->declared_const) v[n++] = x->name;
    }
    for (int i = 0; i < n; i++) r = i ? arena_printf(g->a, "%s%s'%s'", r, i + 1 < n ? ", " : " and ", v[i]) : arena_printf(g->a, "'%s'", v[i]);
    return n ? arena_printf(g->a, "the plain 'let' variable%s %s", n > 1 ? "s" : "", r) : NULL;
}

/* s contains a `break` (kind N_BREAK) or either jump (kind N_ERR) of the enclosing loop. */
bool contains_jump(const Node *s, NodeKind kind) {
    if (!s) return false;
    switch (s->kind) {
    case N_BREAK:
    case N_CONTINUE: return kind == N_ERR || s->kind == kind;
    case N_BLOCK:
        for (int i = 0; i < s->nkids; i++)
            if (contains_jump(s->kids[i], kind)) return true;
        return false;
    case N_IF: return contains_jump(s->then, kind) || contains_jump(s->els, kind);
    default: return false; /* a nested loop's jumps are its own */
    }
}

bool contains_return(const Node *s) {
    if (!s) return false;
    switch (s->kind) {
    case N_RETURN: return true;
    case N_BLOCK:
        for (int i = 0; i < s->nkids; i++)
            if (contains_return(s->kids[i])) return true;
        return false;
    case N_IF: return contains_return(s->then) || contains_return(s->els);
    case N_FOR:
    case N_WHILE: return contains_return(s->then);
    default: return false;
    }
}

/* Whether every path through s ends in a `return` (jumps: a `break` or `continue` of the enclosing loop) (a block
 * with one among its statements, an `if` with an `else` both of whose branches do); false where that is not seen
 * from the syntax alone. */
static bool always_ends(const Node *s, bool jumps) {
    if (!s) return false;
    switch (s->kind) {
    case N_RETURN: return !jumps;
    case N_BREAK:
    case N_CONTINUE: return jumps;
    case N_BLOCK:
        for (int i = 0; i < s->nkids; i++)
            if (always_ends(s->kids[i], jumps)) return true;
        return false;
    case N_IF: return always_ends(s->then, jumps) && always_ends(s->els, jumps);
    default: return false;
    }
}

bool always_returns(const Node *s) { return always_ends(s, false); }
bool always_jumps(const Node *s) { return always_ends(s, true); }

Node *synth_node(Gen *g, NodeKind k, Loc loc) {
    Node *n = ARENA_NEW(g->a, Node);
    n->kind = k;
    n->loc = n->oploc = loc;
    return n;
}
