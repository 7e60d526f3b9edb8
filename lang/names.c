/* names.c - names in the generator: variables of the frame's scopes, "did you mean" suggestions, file-level
 * constants and defines (evaluated lazily, with cycle detection), and binding a call's arguments to
 * parameters (statements and inlining: stmt.c). */
#include "gen.h"

#include <math.h>
#include <string.h>

Var *gen_lookup_var(Gen *g, const char *name);
Global *gen_find_global(Gen *g, const char *name);

/* ---- name maps ---- */
static uint32_t name_hash(const char *s) { return hash_fnv1a(s, strlen(s), 0); }

void *namemap_get(const NameMap *m, const char *name) {
    if (!m->cap) return NULL;
    for (uint32_t i = name_hash(name) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (!m->keys[i]) return NULL;
        if (!strcmp(m->keys[i], name)) return m->vals[i];
    }
}

void namemap_put(Arena *a, NameMap *m, const char *name, void *val) {
    if (2 * (m->n + 1) > m->cap) { /* at most half full */
        NameMap big = {.cap = m->cap ? 2 * m->cap : 8};
        big.keys = ARENA_ARRAY(a, const char *, big.cap);
        big.vals = ARENA_ARRAY(a, void *, big.cap);
        for (uint32_t i = 0; i < m->cap; i++)
            if (m->keys[i]) namemap_put(a, &big, m->keys[i], m->vals[i]);
        *m = big;
    }
    uint32_t i = name_hash(name) & (m->cap - 1);
    while (m->keys[i] && strcmp(m->keys[i], name)) i = (i + 1) & (m->cap - 1);
    if (!m->keys[i]) m->keys[i] = name, m->n++;
    m->vals[i] = val;
}

/* ---- names ---- */
/* The variable called name among s's own, NULL when none. */
Var *gen_scope_find(const Scope *s, const char *name) {
    int limit = s->vars ? s->vars->seq + 1 : 0;
    Var *v = namemap_get(&s->index, name);
    while (v && !(v->seq < limit && s->byseq[v->seq] == v)) v = v->shadows; /* dropped by snap_restore */
    return v;
}

Var *gen_lookup_var(Gen *g, const char *name) {
    if (!g->fr) return NULL;
    for (Scope *s = g->fr->scope; s; s = s->up) {
        Var *v = gen_scope_find(s, name);
        if (v) return v;
    }
    return NULL;
}

void gen_define_var(Gen *g, const char *name, Val v) {
    Scope *s = g->fr->scope;
    Var *x = ARENA_NEW(g->a, Var);
    x->name = name;
    x->val = v;
    x->seq = s->vars ? s->vars->seq + 1 : 0;
    x->shadows = gen_scope_find(s, name);
    x->next = s->vars;
    if (x->seq >= s->cap) {
        int nc = s->cap ? 2 * s->cap : 8;
        while (nc <= x->seq) nc *= 2;
        s->byseq = arena_grow(g->a, s->byseq, sizeof(Var *) * (size_t)s->cap, sizeof(Var *) * (size_t)nc);
        s->cap = nc;
    }
    s->byseq[x->seq] = x;
    s->vars = x;
    namemap_put(g->a, &s->index, name, x);
}

/* The first `let name` inside a block of s (not s's own statements: those are in scope) before `use`. */
static const Node *let_in_block(const Node *s, const char *name, Loc use, bool nested) {
    if (!s) return NULL;
    switch (s->kind) {
    case N_LET: {
        bool named = s->name ? !strcmp(s->name, name) : false;
        for (int i = 0; !s->name && i < s->nkids; i++) named |= !strcmp(s->kids[i]->name, name);
        bool before = s->loc.file == use.file && (s->loc.line < use.line || (s->loc.line == use.line && s->loc.col < use.col));
        return nested && named && before ? s : NULL;
    }
    case N_BLOCK:
        for (int i = 0; i < s->nkids; i++) {
            const Node *r = let_in_block(s->kids[i], name, use, nested);
            if (r) return r;
        }
        return NULL;
    case N_IF: {
        const Node *r = let_in_block(s->then, name, use, true);
        return r ? r : let_in_block(s->els, name, use, true);
    }
    case N_FOR:
    case N_WHILE: return let_in_block(s->then, name, use, true);
    default: return NULL;
    }
}

/* After "unknown name": Python (so Triton) keeps a name bound in an `if`'s branches or a loop's body after
 * them; here a block keeps its own.  A note at such a `let` says how to write it. */
void gen_note_ended_let(Gen *g, const char *name, Loc use) {
    const Node *body = g->fr ? g->fr->body : NULL;
    const Node *let = NULL;
    for (int i = 0; body && !let && i < body->nkids; i++) let = let_in_block(body->kids[i], name, use, false);
    if (let)
        diag_note(g->d, let->loc, "'%s' is declared here, in a block that ends before that use (a block keeps its names, but for "
                  "those of a compile-time 'if''s taken branch and those both branches of an 'if' declare with one type, a 'const' "
                  "with one value): "
                  "declare it before the block ('let %s = ...;') and assign it inside", name, name);
}

/* After an error that an expression must be a compile-time value: a Triton port's `BLOCK: tl.constexpr` written
 * without `const` is a run-time parameter, and the error is at its use.  Each name in n that is still the kernel's
 * own run-time parameter (the first variable of its name in the kernel's outermost scope, never assigned since) gets
 * a note at the parameter saying how to declare it; names inside calls of fns and lambdas count as well, since the
 * error may be anywhere in n's value.  The walk stops 200 levels down (a hint, not worth a deep recursion). */
static void note_runtime_params(Gen *g, const Node *n, const char **seen, int *nseen, int depth) {
    if (!n || depth > 200) return;
    if (n->kind == N_NAME && n->name) {
        const Frame *fr = g->fr;
        Var *v = gen_lookup_var(g, n->name);
        if (!v || v->set.line || v->shadows || v->val.k != V_RT || gen_scope_find(fr->base, n->name) != v) return;
        for (int i = 0; i < *nseen; i++)
            if (!strcmp(seen[i], n->name)) return;
        for (int i = 0; i < fr->kernel->nparams; i++) {
            const Param *pa = &fr->kernel->params[i];
            if (pa->is_const || strcmp(pa->name, n->name) || pa->ty.nptr) continue;
            diag_note(g->d, pa->loc, "'%s' is a run-time parameter: declare it 'const %s%s%s' for a compile-time one (Triton's "
                      "'%s: tl.constexpr'), which is no launch argument then", pa->name, pa->name, pa->ty.dt != DT_VOID ? ": " : "",
                      pa->ty.dt != DT_VOID ? dtype_name(pa->ty.dt) : "", pa->name);
            if (*nseen < 8) seen[(*nseen)++] = n->name;
            return;
        }
        return;
    }
    note_runtime_params(g, n->lhs, seen, nseen, depth + 1);
    note_runtime_params(g, n->rhs, seen, nseen, depth + 1);
    note_runtime_params(g, n->cond, seen, nseen, depth + 1);
    note_runtime_params(g, n->then, seen, nseen, depth + 1);
    note_runtime_params(g, n->els, seen, nseen, depth + 1);
    for (int i = 0; i < n->nkids; i++) note_runtime_params(g, n->kids[i], seen, nseen, depth + 1);
}

/* The run-time `while` of plain `let`s (Gen.rt_whiles) whose results value id is computed from, NULL none; the walk
 * up its operands' definitions stops after 64 instructions (a hint). */
static const RtWhile *rt_while_of(Gen *g, ValueId id) {
    ValueId stack[64];
    int n = 0, seen = 0;
    stack[n++] = id;
    while (n > 0 && seen++ < 64) {
        const Inst *d = tir_val(g->f, stack[--n])->def;
        if (!d) continue;
        for (int i = 0; i < g->nrt_whiles; i++)
            if (g->rt_whiles[i].loop == d) return &g->rt_whiles[i];
        for (int i = 0; i < d->nops && n < (int)ARRAY_LEN(stack); i++) stack[n++] = d->ops[i];
    }
    return NULL;
}

void gen_note_runtime_params(Gen *g, const Node *n, Val v) {
    if (v.k == V_RT && g->nrt_whiles) {
        const RtWhile *w = rt_while_of(g, v.v);
        if (w && w->names)
            diag_note(g->d, w->loc, "this value comes from a 'while' that runs at run time because it assigns %s (Triton's 'n = i' "
                      "makes a tensor): declare each 'let NAME: constexpr = ...' or 'const NAME = ...' (Triton's 'n: tl.constexpr = i') "
                      "and the loop runs at compile time", w->names);
        else if (w)
            diag_note(g->d, w->loc, "this value comes from a 'range' loop, which runs at run time (as Triton's): 'static_range' "
                      "unrolls it at compile time");
    }
    if (!n || !g->fr || g->fr->fn || !g->fr->kernel) return; /* in a fn, a name is the fn's parameter */
    const char *seen[8];
    int nseen = 0;
    note_runtime_params(g, n, seen, &nseen, 0);
}

/* ---- suggestions for a misspelled name ---- */
/* The optimal-string-alignment distance between a and b (insertions, deletions, substitutions and swaps of
 * neighbours: 'laod' is 1 from 'load'); anything above max is max + 1. */
static int name_distance(const char *a, const char *b, int max) {
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64 || (la > lb ? la - lb : lb - la) > (size_t)max) return max + 1;
    int d[65][65];
    for (size_t i = 0; i <= la; i++) d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++) d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]), del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
            c = c < del ? c : del;
            c = c < ins ? c : ins;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < c) c = d[i - 2][j - 2] + 1;
            d[i][j] = c;
        }
    return d[la][lb] > max ? max + 1 : d[la][lb];
}

/* The candidate nearest to a name, within what a typo makes: none for names of 1 or 2 letters, 1 edit up to
 * 4, 2 up to 8, 3 beyond (so 'foo' suggests nothing, 'arrange' 'arange'); the first of equally near ones wins. */
typedef struct Nearest {
    const char *name, *best;
    int dist;
} Nearest;

static void nearest_try(Nearest *n, const char *cand) {
    size_t len = strlen(n->name);
    int max = len <= 2 ? 0 : len <= 4 ? 1 : len <= 8 ? 2 : 3;
    if (!max || !cand || !strcmp(cand, n->name) || cand[0] == '<') return;
    int d = name_distance(n->name, cand, max);
    if (d <= max && (!n->best || d < n->dist)) n->best = cand, n->dist = d;
}

static const char *nearest_hint(Gen *g, const Nearest *n) { return n->best ? arena_printf(g->a, "; did you mean '%s'?", n->best) : ""; }

const char *gen_did_you_mean_in(Gen *g, const char *name, const char *const *names, int count) {
    Nearest n = {.name = name};
    for (int i = 0; i < count; i++) nearest_try(&n, names[i]);
    return nearest_hint(g, &n);
}

/* For "unknown name": the variables in scope and, unless vars_only (an assignment's target), the file-level
 * names, the built-ins and the types (Triton's type names say which type they are). */
const char *gen_did_you_mean(Gen *g, const char *name, bool vars_only) {
    Nearest n = {.name = name};
    for (Scope *s = g->fr ? g->fr->scope : NULL; s; s = s->up)
        for (Var *v = s->vars; v; v = v->next) nearest_try(&n, v->name);
    if (vars_only) return nearest_hint(g, &n);
    static const char *const c_types[][2] = {{"float", "f32"}, {"double", "f64"}, {"half", "f16"}, {"int", "i32"},
                                             {"long", "i64"}, {"bool", "i1"}, {"uint", "u32"}};
    for (size_t i = 0; i < sizeof c_types / sizeof *c_types; i++)
        if (!strcmp(name, c_types[i][0])) return arena_printf(g->a, "; a type is named by its width here: '%s'", c_types[i][1]);
    static const char *const inf_names[] = {"inf", "INFINITY", "HUGE_VAL", "HUGE_VALF"};
    for (size_t i = 0; i < sizeof inf_names / sizeof *inf_names; i++)
        if (!strcmp(name, inf_names[i])) return "; infinity is written '1.0 / 0.0' here (a float literal, folded)";
    if (!strcmp(name, "nan") || !strcmp(name, "NAN")) return "; a NaN is written '0.0 / 0.0' here (a float literal, folded)";
    /* CUDA's names: a program is a whole thread block working on tiles, so the per-thread ones have no spelling here */
    static const char *const cuda[][2] = {
        {"__syncthreads", "'debug_barrier()'"}, {"atomicAdd", "'atomic_add'"}, {"atomicMax", "'atomic_max'"},
        {"atomicMin", "'atomic_min'"}, {"atomicExch", "'atomic_xchg'"}, {"atomicCAS", "'atomic_cas'"},
        {"atomicAnd", "'atomic_and'"}, {"atomicOr", "'atomic_or'"}, {"atomicXor", "'atomic_xor'"},
        {"__expf", "'exp'"}, {"__logf", "'log'"}, {"rsqrtf", "'rsqrt'"}, {"__fdividef", "'/'"},
        {"printf", "'device_print(\"prefix\", x)'"},
    };
    for (size_t i = 0; i < sizeof cuda / sizeof *cuda; i++)
        if (!strcmp(name, cuda[i][0])) return arena_printf(g->a, "; CUDA's '%s' is %s here", name, cuda[i][1]);
    if (!strncmp(name, "__shfl", 6))
        return "; there are no warp shuffles here: a program works on whole tiles, combined with sum, max, min, reduce or "
               "cumsum along an axis";
    DType dt = lang_triton_dtype(name, strlen(name));
    if (dt != DT_VOID && dt != DT_PTR) return arena_printf(g->a, "; the type is written '%s' here", dtype_name(dt));
    for (int i = 0; i < g->nglobals; i++) nearest_try(&n, g->globals[i].name);
    for (int i = 0; builtin_name(i); i++) nearest_try(&n, builtin_name(i));
    for (int i = 0; i < DT_COUNT; i++)
        if (i != DT_VOID && i != DT_PTR) nearest_try(&n, dtype_name((DType)i));
    return nearest_hint(g, &n);
}

/* Is f a standard-library file? */
static bool file_is_lib(const Gen *g, const SrcFile *f) {
    for (int i = 0; f && i < g->nfiles; i++)
        if (g->files[i]->src == f) return g->files[i]->stdlib;
    return false;
}

/* A file-level const or fn by name, as the code being generated sees it: a name that the program and a
 * standard-library file both define is the program's own in the program's files and the library's own
 * in the library's (a kernel's `fn silu` beside math.tile's, which math.tile's functions keep using).
 * The library's code never sees the program's names: a program's `fn exp` shadows the built-in in the
 * program only, and softmax.tile's `exp` stays the built-in (it was the program's, silently). */
/* The built-in or fn a file-level alias names (Triton's `fast_expf = tl.math.exp`, `tl_round = libdevice.round`, a
 * module-level name bound to a function: `const fast_expf = exp;`), through aliases of aliases; NULL when gl is no
 * alias of a function. */
const char *gen_callable_alias(Gen *g, const Global *gl) {
    for (int depth = 0; gl && depth < 16; depth++) {
        const Decl *d = gl->decl;
        if (d->kind != D_CONST || !d->value || d->value->kind != N_NAME) return NULL;
        const char *name = d->value->name;
        const Global *next = gen_find_global(g, name);
        if (next && next->decl->kind == D_FN) return name;
        if (!next) return builtin_exists(name) ? name : NULL;
        gl = next;
    }
    return NULL;
}

Global *gen_find_global(Gen *g, const char *name) {
    bool lib = g->fr && file_is_lib(g, g->fr->file);
    intptr_t own = (intptr_t)namemap_get(&g->global_index[lib], name);
    if (own) return &g->globals[own - 1];
    intptr_t other = lib ? 0 : (intptr_t)namemap_get(&g->global_index[1], name);
    return other ? &g->globals[other - 1] : NULL;
}

int gen_find_define(Gen *g, const char *name) {
    int r = -1;
    for (int i = 0; g->opt && i < g->opt->ndefines; i++)
        if (g->opt->defines[i].name && !strcmp(g->opt->defines[i].name, name)) r = i;
    return r;
}

CtExact gen_ct_exact_in(Val v, DType to) {
    bool fl = dtype_is_float(v.dt);
    int bits = dtype_bits(to);
    bool sg = dtype_is_signed(to);
    if (fl && (v.f != floor(v.f) || !isfinite(v.f))) return CT_FRACTION;
    bool usrc = !fl && !dtype_is_signed(v.dt) && dtype_bits(v.dt) == 64; /* a u64 value: i holds its bits */
    double lo = sg ? -ldexp(1, bits - 1) : 0, hi = sg ? ldexp(1, bits - 1) : ldexp(1, bits);
    bool fits; /* integers compare exactly: as doubles, i64's and u64's largest values rounded up to 2^63 and 2^64 */
    if (fl) fits = v.f >= lo && v.f < hi;
    else if (usrc) fits = (uint64_t)v.i <= (sg ? (bits == 64 ? (uint64_t)INT64_MAX : (UINT64_C(1) << (bits - 1)) - 1)
                                               : bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1);
    else if (sg) fits = bits == 64 || (v.i >= -(INT64_C(1) << (bits - 1)) && v.i < (INT64_C(1) << (bits - 1)));
    else fits = v.i >= 0 && (bits == 64 || (uint64_t)v.i < (UINT64_C(1) << bits));
    return fits ? CT_EXACT : CT_RANGE;
}

/* Convert a value to a declared parameter or variable type. */
Val gen_convert_to(Gen *g, Val v, TypeRef ty, Loc loc, const char *what) {
    const Type *t = gen_type_ref_or_null(g, ty);
    if (!t) return val_err(); /* the type's own error (`const ACT: str`) says it: no second one about the value */
    if (v.k == V_STR || v.k == V_DTYPE) { /* -D B=banana or -D B=f16 for a `const B: i32` */
        const char *tn = gen_type_name(g, t);
        if (v.k == V_STR) diag_error(g->d, loc, "'%s' is %s, but its value is the string \"%s\"", what, tn, v.s);
        else diag_error(g->d, loc, "'%s' is %s, but its value is the type %s", what, tn, gen_type_name(g, v.t));
        return val_err();
    }
    if (!val_is_value(g, v, loc)) return val_err();
    if (v.k == V_CT && dtype_is_int(t->dt) && t->dt != DT_I1) { /* a compile-time value must be exact in the declared type */
        CtExact e = gen_ct_exact_in(v, t->dt);
        bool fl = dtype_is_float(v.dt), usrc = !fl && !dtype_is_signed(v.dt) && dtype_bits(v.dt) == 64; /* u64: i holds its bits */
        if (e == CT_FRACTION) diag_error(g->d, loc, "'%s' is %s, but its value %s is not an integer", what, dtype_name(t->dt), arena_double(g->a, v.f));
        else if (e == CT_RANGE && fl) diag_error(g->d, loc, "'%s' is %s, but its value %s does not fit", what, dtype_name(t->dt), arena_double(g->a, v.f));
        else if (e == CT_RANGE && usrc)
            diag_error(g->d, loc, "'%s' is %s, but its value %llu does not fit", what, dtype_name(t->dt), (unsigned long long)v.i);
        else if (e == CT_RANGE) diag_error(g->d, loc, "'%s' is %s, but its value %lld does not fit", what, dtype_name(t->dt), (long long)v.i);
        if (e != CT_EXACT) return val_err();
    }
    if (v.k == V_CT && t->dt == DT_I1 && v.dt != DT_I1 && (dtype_is_float(v.dt) ? v.f != 0 && v.f != 1 : v.i != 0 && v.i != 1)) {
        if (dtype_is_float(v.dt)) diag_error(g->d, loc, "'%s' is i1, but its value %s is not 0 or 1", what, arena_double(g->a, v.f));
        else diag_error(g->d, loc, "'%s' is i1, but its value %lld is not 0 or 1", what, (long long)v.i);
        return val_err();
    }
    if (t->dt == DT_PTR) {
        if (v.k == V_RT && v.t->dt == DT_PTR && v.t->pointee == t->pointee) return v;
        diag_error(g->d, loc, "'%s' expects '%s', got '%s'", what, gen_type_name(g, t), gen_val_type_name(g, v));
        return val_err();
    }
    gen_warn_declared_overflow(g, v, t->dt, loc, what);
    return gen_cast(g, v, t->dt, loc);
}

/* Evaluate with only globals visible: a const's value or a parameter default. */
Val gen_eval_global(Gen *g, const Node *n) {
    Frame fr = {.up = g->fr, .file = n ? n->loc.file : g->fr ? g->fr->file : NULL}; /* names as the value's own file sees them */
    Scope sc = {0};
    fr.scope = fr.base = &sc;
    Frame *saved = g->fr;
    g->fr = &fr;
    Val v = gen_expr(g, n);
    g->fr = saved;
    return v;
}

const Decl *gen_global_fn_named(Gen *g, const Node *n) {
    Frame fr = {.up = g->fr, .file = n->loc.file}; /* as gen_eval_global: names as the value's own file sees them */
    Scope sc = {0};
    fr.scope = fr.base = &sc;
    Frame *saved = g->fr;
    g->fr = &fr;
    const Decl *d = gen_fn_named(g, n);
    g->fr = saved;
    return d;
}

Val gen_eval_define(Gen *g, int i) {
    if (!g->define_vals[i]) return val_err();
    return gen_eval_global(g, g->define_vals[i]);
}

Val gen_global_value(Gen *g, Global *gl, Loc loc) {
    if (gl->state == 2) return gl->val;
    if (gl->state == 1) {
        diag_error(g->d, loc, "constant '%s' depends on itself", gl->name);
        return val_err();
    }
    gl->state = 1;
    Func *sf = g->f;
    Builder sb = g->b;
    g->f = g->scratch;
    g->b = (Builder){.f = g->scratch, .block = g->scratch->body, .loc = gl->decl->loc};
    int di = gen_find_define(g, gl->name);
    const Node *vn = gl->decl->value;
    Val v = di >= 0 ? gen_eval_define(g, di) : gen_eval_global(g, vn);
    Loc vloc = di >= 0 && g->define_vals[di] ? g->define_vals[di]->loc : vn->loc; /* a -D value's errors name the define */
    if (v.k == V_RT) {
        diag_error(g->d, vloc, "constant '%s' must be a compile-time value", gl->name);
        v = val_err();
    } else if (v.k == V_VOID) {
        gen_error_no_value(g, v, vloc);
        v = val_err();
    }
    /* a declared type takes the value (a number converts exactly; a type, a string or a list is an error here, not at a use) */
    if (v.k != V_ERR && tyref_given(gl->decl->ty)) v = gen_convert_to(g, v, gl->decl->ty, vloc, gl->name);
    g->f = sf;
    g->b = sb;
    v.held = false; /* a constexpr: weak in promotion, also when its value was cast */
    gl->val = v;
    gl->state = 2;
    return v;
}

/* ---- arguments ---- */
static bool star_name_known(Gen *g, const char *name) { /* a variable, or a file-level const */
    const Global *gl;
    return gen_lookup_var(g, name) || ((gl = gen_find_global(g, name)) && gl->decl->kind == D_CONST);
}

/* Python's `*args` in a call, as triton_kernels calls its fused activation, ACTIVATION_FN(acc, *activation_fn_args):
 * a positional `*NAME` (or `*NAME[...]`, an element or a slice of it) whose variable or file-level const holds a
 * tuple (or a list) stands for its elements.  The parser reads `*NAME` as a pointer type (cast(x, *T)) and `*NAME[1:]`
 * as that type indexed, so the argument is taken apart here: the expression NAME[...] without its `*`, or NULL when the
 * argument is no such form. */
static const Node *star_operand(Gen *g, const Node *call, int i) {
    const Node *a = call->kids[i], *base = a;
    if (call->kwnames && call->kwnames[i]) return NULL;
    int depth = 0;
    while (base->kind == N_INDEX) base = base->lhs, depth++;
    if (base->kind != N_DTYPE || base->ty.nptr != 1 || !base->ty.name || base->ty.call || !star_name_known(g, base->ty.name)) return NULL;
    Node *name = arena_alloc(g->a, sizeof *name);
    *name = (Node){.kind = N_NAME, .loc = base->ty.loc, .name = base->ty.name};
    if (!depth) return name;
    Node *copy = arena_alloc(g->a, sizeof *copy), *at = copy; /* the index chain again, on the name */
    *copy = *a;
    while (at->lhs->kind == N_INDEX) {
        Node *next = arena_alloc(g->a, sizeof *next);
        *next = *at->lhs;
        at->lhs = next;
        at = next;
    }
    at->lhs = name;
    return copy;
}

/* The number of elements a `*` argument stands for (its operand's value in *val), or -1 when it is no `*` of a tuple */
static int star_arg_count(Gen *g, const Node *call, int i, const Node **operand, Val *val) {
    *operand = star_operand(g, call, i);
    if (!*operand) return -1;
    const Var *var = (*operand)->kind == N_NAME ? gen_lookup_var(g, (*operand)->name) : NULL;
    *val = var ? var->val : gen_expr(g, *operand);
    if (val->k == V_TUPLE && !gen_is_record(*val)) return val->nelems;
    return val->k == V_SHAPE ? val->rank : -1;
}

/* call itself when it has no `*` of a tuple, else a copy with each expanded (keywords kept with their arguments);
 * NULL, reported, when a `*` names a variable that holds neither a tuple nor a type (`*T`, a pointer type) */
const Node *gen_expand_star_args(Gen *g, const Node *call) {
    int n = 0;
    bool any = false;
    for (int i = 0; i < call->nkids; i++) {
        const Node *op;
        Val v = {.k = V_ERR};
        int m = star_arg_count(g, call, i, &op, &v);
        n += m < 0 ? 1 : m;
        any |= m >= 0;
        if (m < 0 && op && v.k == V_ERR) return NULL; /* reported by its evaluation */
        if (m < 0 && op && !(op->kind == N_NAME && v.k == V_DTYPE)) {
            const char *nm = call->kids[i]->kind == N_DTYPE ? call->kids[i]->ty.name : NULL;
            diag_error(g->d, call->kids[i]->loc, "'*%s' unpacks a tuple into arguments (Python's f(x, *args)), but %s%s%s holds %s",
                       nm ? nm : "...", nm ? "'" : "it", nm ? nm : "", nm ? "'" : "", gen_a(g, gen_val_type_name(g, v), true));
            return NULL;
        }
    }
    if (!any) return call;
    Node *c = arena_alloc(g->a, sizeof *c);
    *c = *call;
    c->kids = ARENA_ARRAY(g->a, Node *, n + 1);
    c->kwnames = ARENA_ARRAY(g->a, const char *, n + 1);
    c->kwlocs = NULL; /* diagnostics of a rewritten call point at the argument */
    int k = 0;
    for (int i = 0; i < call->nkids; i++) {
        const Node *a = call->kids[i], *op;
        Val v;
        int m = star_arg_count(g, call, i, &op, &v);
        if (m < 0) {
            c->kwnames[k] = call->kwnames ? call->kwnames[i] : NULL;
            c->kids[k++] = (Node *)a;
            continue;
        }
        for (int j = 0; j < m; j++) { /* (NAME[...])[j] */
            Node *idx = arena_alloc(g->a, sizeof *idx), *x = arena_alloc(g->a, sizeof *x);
            *idx = (Node){.kind = N_INT, .loc = a->loc, .ival = j};
            *x = (Node){.kind = N_INDEX, .loc = a->loc, .oploc = a->loc, .lhs = (Node *)op, .nkids = 1};
            x->kids = ARENA_ARRAY(g->a, Node *, 1);
            x->kids[0] = idx;
            c->kwnames[k] = NULL;
            c->kids[k++] = x;
        }
    }
    c->nkids = k;
    return c;
}

bool gen_bind_args(Gen *g, const Node *call, const char *fname, const char *const *pnames, int np, int min,
                   const Node **slots, bool *by_kw) {
    int n = call->nkids, npos = 0;
    for (int i = 0; i < np; i++) slots[i] = NULL, by_kw[i] = false;
    for (int i = 0; i < n; i++) npos += !(call->kwnames && call->kwnames[i]);
    /* too many positional arguments, or too few in all; too many keywords are named below (unknown ones,
     * or a parameter given twice) */
    if (n < min || npos > np) {
        int got = n < min ? n : npos;
        /* too many: at the first extra one; too few: the required parameters neither position nor keyword gave */
        Loc at = call->loc;
        for (int i = 0, p = 0; n >= min && i < n; i++)
            if (!(call->kwnames && call->kwnames[i]) && p++ == np) at = call->kids[i]->loc;
        Str miss = {0};
        int nmiss = 0;
        for (int j = npos; n < min && j < min; j++) {
            bool kw = false;
            for (int i = 0; i < n; i++) kw |= call->kwnames && call->kwnames[i] && !strcmp(call->kwnames[i], pnames[j]);
            if (!kw) str_printf(&miss, "%s'%s'", nmiss++ ? ", " : ": ", pnames[j]);
        }
        if (nmiss) str_printf(&miss, " %s missing", nmiss == 1 ? "is" : "are");
        if (min == np) diag_error(g->d, at, "'%s' expects %d argument%s, got %d%s", fname, np, np == 1 ? "" : "s", got, miss.buf ? miss.buf : "");
        else diag_error(g->d, at, "'%s' expects %d to %d arguments, got %d%s", fname, min, np, got, miss.buf ? miss.buf : "");
        str_free(&miss);
        return false;
    }
    int pos = 0;
    bool seen_kw = false, ok = true;
    for (int i = 0; i < n; i++) {
        const char *kw = call->kwnames ? call->kwnames[i] : NULL;
        const Node *arg = call->kids[i];
        int k = -1;
        if (!kw) {
            if (seen_kw) {
                diag_error(g->d, arg->loc, "positional argument after a keyword argument");
                ok = false;
                continue;
            }
            k = pos++;
        } else {
            seen_kw = true;
            for (int j = 0; j < np; j++)
                if (!strcmp(pnames[j], kw)) k = j;
            if (k < 0 && !strcmp(fname, "dot") && (!strcmp(kw, "trans_a") || !strcmp(kw, "trans_b"))) {
                /* Triton 2.0's transposed operands (kernl's, early flash-attention's dot(q, k, trans_b=True)) */
                diag_error(g->d, call->kwlocs && call->kwlocs[i].file ? call->kwlocs[i] : arg->loc,
                           "'dot' has no parameter named '%s': Triton 2.0's dot(a, b, %s=True) is %s here", kw, kw,
                           kw[6] == 'b' ? "dot(a, trans(b))" : "dot(trans(a), b)");
                ok = false;
                continue;
            }
            if (k < 0) {
                const char *near = gen_did_you_mean_in(g, kw, pnames, np);
                Str all = {0};
                for (int j = 0; !*near && j < np; j++) str_printf(&all, "%s%s", j ? ", " : "", pnames[j]);
                diag_error(g->d, call->kwlocs && call->kwlocs[i].file ? call->kwlocs[i] : arg->loc,
                           "'%s' has no parameter named '%s'%s%s%s%s", fname, kw, near, *near ? "" : " (its parameters: ",
                           all.buf ? all.buf : "", *near ? "" : ")");
                str_free(&all);
                ok = false;
                continue;
            }
        }
        if (slots[k]) {
            diag_error(g->d, kw && call->kwlocs && call->kwlocs[i].file ? call->kwlocs[i] : arg->loc,
                       "argument '%s' of '%s' given more than once", pnames[k], fname);
            ok = false;
            continue;
        }
        slots[k] = arg;
        by_kw[k] = kw != NULL;
    }
    for (int i = 0; ok && i < min; i++)
        if (!slots[i]) {
            diag_error(g->d, call->loc, "'%s' is missing argument '%s'", fname, pnames[i]);
            ok = false;
        }
    return ok;
}
