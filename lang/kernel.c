/* kernel.c - a kernel's generation (its attributes and launch metadata, -D overrides of them, its const
 * parameters bound before its run-time ones, its body) and the module's (gen_module: the files' globals,
 * then every kernel asked for).  Statements: stmt.c. */
#include "gen.h"

#include <string.h>

Global *gen_find_global(Gen *g, const char *name);
Val gen_global_value(Gen *g, Global *gl, Loc loc);

static bool attr_int(Gen *g, const Node *n, const char *name, int64_t *out) {
    const Decl *k = g->fr ? g->fr->kernel : NULL; /* @num_warps(NW) with a const parameter NW: attributes come before them */
    for (int i = 0; k && n->kind == N_NAME && !gen_find_global(g, n->name) && i < k->nparams; i++)
        if (!strcmp(k->params[i].name, n->name)) {
            diag_error(g->d, n->loc, "'%s' is a parameter of '%s': an attribute's value is a number or a file-level const (-D %s=... "
                       "or @config(%s=...) set %s for a compile)", n->name, k->name, name, name, name);
            return false;
        }
    Val v = gen_eval_global(g, n);
    if (v.k == V_RT) {
        diag_error(g->d, n->loc, "'%s' must be a compile-time constant", name);
        return false;
    }
    return val_ct_int_of(g, v, n->loc, name, out);
}

/* Whether v is a valid value of launch metadata `name` (num_warps, num_stages, or a 0-or-1 switch:
 * warp_specialize, pingpong, overlap); reported at loc when not.  @num_warps(N), -D num_warps=N and
 * @config(num_warps=N) are all checked here. */
static bool launch_value_ok(Gen *g, const char *name, int64_t v, Loc loc) {
    if (!strcmp(name, "num_warps")) {
        if (v == 1 || v == 2 || v == 4 || v == 8 || v == 16 || v == 32) return true;
        diag_error(g->d, loc, "num_warps must be 1, 2, 4, 8, 16 or 32, got %lld", (long long)v);
    } else if (!strcmp(name, "num_stages")) {
        if (v >= 0 && v <= 16) return true; /* as a loop's range(..., num_stages=S): 0 or 1 pipelines nothing */
        diag_error(g->d, loc, "num_stages must be between 0 and 16, got %lld", (long long)v);
    } else {
        if (v == 0 || v == 1) return true;
        diag_error(g->d, loc, "%s must be 0 or 1, got %lld", name, (long long)v);
    }
    return false;
}

/* What a compile-time value is, for the kinds a @config value and a const's default must share. */
static const char *config_kind(Val v) {
    switch (v.k) {
    case V_CT: return dtype_is_float(v.dt) ? "a float" : v.dt == DT_I1 ? "an i1" : "an integer";
    case V_STR: return "a string";
    case V_DTYPE: return "a type";
    case V_NONE: return "None";
    default: return NULL;
    }
}

/* A @config value for a const (a parameter, or a file-level const when gl): a literal, as tile tune passes it as a
 * define, that the const's declared type takes (as a -D value is converted when the kernel compiles), or, for a
 * const without one, of its default's kind (a string for an integer fails only when tile tune reaches it). */
static void check_config_value(Gen *g, const Node *n, const char *name, TypeRef ty, const Node *def, const Global *gl) {
    const Node *lit = n->kind == N_UNARY && n->op == TK_MINUS ? n->lhs : n;
    bool literal = lit->kind == N_INT || lit->kind == N_FLOAT || (lit == n && (lit->kind == N_BOOL || lit->kind == N_STR ||
                                                                               (lit->kind == N_DTYPE && !lit->ty.nptr)));
    if (!literal) {
        diag_error(g->d, n->loc, "'@config' value of '%s' must be a literal (a number, true, false, a type or a string): "
                   "tile tune passes it as a define", name);
        return;
    }
    Val v = gen_eval_global(g, n);
    if (v.k == V_ERR) return;
    if (tyref_given(ty)) {
        gen_convert_to(g, v, ty, n->loc, name);
        return;
    }
    Val d = gl ? (gl->state == 2 ? gl->val : val_err()) : def && (def->kind == N_INT || def->kind == N_FLOAT || def->kind == N_BOOL || def->kind == N_STR ||
                                   def->kind == N_DTYPE || (def->kind == N_UNARY && def->op == TK_MINUS &&
                                                            (def->lhs->kind == N_INT || def->lhs->kind == N_FLOAT)))
                                  ? gen_eval_global(g, def) : val_err(); /* a default naming an earlier const: not here */
    const char *vk = config_kind(v), *dk = config_kind(d);
    if (!vk || !dk || vk == dk) return;
    bool numbers = v.k == V_CT && d.k == V_CT;
    if (numbers && !dtype_is_float(v.dt)) return; /* an integer or i1 for a float or integer const: it converts */
    diag_error(g->d, n->loc, "'@config' gives '%s' %s, but %s is %s", name, vk, gl ? "its value" : "its default", dk);
}

/* @config(NAME=VALUE, ...): const parameters, num_warps, num_stages, warp_specialize, pingpong, overlap.
 * @tune_key(ARG, ...): run-time integer parameters.  The tuner reads them
 * (lang_kernel_tuning); compiling only checks that they name real things. */
static void check_tuning_attr(Gen *g, const Decl *k, const Attr *at) {
    bool config = !strcmp(at->name, "config");
    if (!at->nargs) diag_error(g->d, at->loc, "'@%s' needs at least one argument", at->name);
    for (int i = 0; i < at->nargs; i++) {
        const char *name = config ? at->argnames[i] : at->args[i]->kind == N_NAME ? at->args[i]->name : NULL;
        if (!name) {
            diag_error(g->d, at->args[i]->loc, config ? "'@config' arguments are NAME=VALUE" : "'@tune_key' arguments are parameter names");
            continue;
        }
        const Param *pa = NULL;
        for (int j = 0; j < k->nparams; j++)
            if (!strcmp(k->params[j].name, name)) pa = &k->params[j];
        Global *gl = config && !pa ? gen_find_global(g, name) : NULL; /* a file-level const: a define sets it too */
        if (config && !pa && !(gl && gl->decl->kind == D_CONST) && strcmp(name, "num_warps") && strcmp(name, "num_stages") &&
            strcmp(name, "warp_specialize") && strcmp(name, "pingpong") && strcmp(name, "overlap"))
        {
            const char *names[64] = {"num_warps", "num_stages", "warp_specialize", "pingpong", "overlap"};
            int nn = 5;
            for (int j = 0; j < k->nparams && nn < 64; j++)
                if (k->params[j].is_const) names[nn++] = k->params[j].name;
            diag_error(g->d, at->args[i]->loc, "'@config' sets '%s', which is neither a const parameter of '%s' nor a file-level const%s",
                       name, k->name, gen_did_you_mean_in(g, name, names, nn));
        }
        else if (config && !pa && !gl) { /* launch metadata: a bad value failed only when tile tune reached it */
            int64_t v;
            if (attr_int(g, at->args[i], name, &v)) launch_value_ok(g, name, v, at->args[i]->loc);
        }
        else if (config && pa && !pa->is_const)
            diag_error(g->d, at->args[i]->loc, "'@config' sets '%s', a run-time parameter: only const parameters can be tuned", name);
        else if (config && pa) check_config_value(g, at->args[i], name, pa->ty, pa->def, NULL);
        else if (config && gl && gl->decl->kind == D_CONST) check_config_value(g, at->args[i], name, gl->decl->ty, NULL, gl);
        else if (!config && (!pa || pa->is_const))
            diag_error(g->d, at->args[i]->loc, "'@tune_key' names '%s', which is not a run-time parameter of '%s'", name, k->name);
        else if (!config && !pa->ty.name && (pa->ty.nptr || !dtype_is_int(pa->ty.dt) || pa->ty.dt == DT_I1))
            diag_error(g->d, at->args[i]->loc, "'@tune_key' names '%s', which is not an integer parameter (the key is sizes)", name);
    }
}

/* A -D value of launch metadata (num_warps, ...) over *out, when given; *at becomes its place ("<-D num_warps>"),
 * so a bad value is reported where it came from, not at the source's attribute. */
static void define_int(Gen *g, const char *name, int64_t *out, Loc *at) {
    int di = gen_find_define(g, name);
    if (di < 0) return;
    if (g->define_vals[di]) *at = g->define_vals[di]->loc;
    val_ct_int_of(g, gen_eval_define(g, di), *at, name, out);
}

/* The same for a 0-or-1 switch (warp_specialize, pingpong, overlap): any other value is an error at loc. */
static void define_flag(Gen *g, const char *name, int64_t *out, Loc loc) {
    define_int(g, name, out, &loc);
    if (!launch_value_ok(g, name, *out, loc)) *out = 0;
}

/* A name of the flattened parameters of a tuple or descriptor parameter that another parameter of k has: an error
 * at that one (what a launch passes must be named once). */
static bool flat_name_free(Gen *g, const Decl *k, const char *nm, const char *whole, const char *what) {
    for (int j = 0; j < k->nparams; j++)
        if (k->params[j].name && !strcmp(k->params[j].name, nm)) {
            diag_error(g->d, k->params[j].loc, "parameter '%s' has the name of an element of %s parameter '%s' (flattened into "
                       "parameters of those names): rename one", nm, what, whole);
            return false;
        }
    return true;
}

/* The elements of a tuple parameter's type t (its leaves types, V_DTYPE) as the run-time parameters NAME_0, NAME_1,
 * ... of f (NAME_1_0 for an element of a nested tuple), depth first: the tuple of their values. */
static Val tuple_elems(Gen *g, Func *f, const Decl *k, const Param *pa, Val t, const char *name, int depth) {
    if (t.k == V_DTYPE && depth > 0) {
        if (!flat_name_free(g, k, name, pa->name, "tuple")) return val_err();
        return val_rt(g, tir_func_add_arg(f, name, t.t)->value);
    }
    if (t.k != V_TUPLE || gen_is_record(t) || depth > 8) {
        if (t.k != V_ERR)
            diag_error(g->d, pa->tuple_ty->loc, "the type of tuple parameter '%s' must be a tuple of types such as (*f32, i32)%s%s",
                       pa->name, depth ? ", nested 8 deep at most; an element is " : ", got ",
                       depth > 8            ? "deeper"
                       : t.k == V_DTYPE     ? "one type in parentheses (a tuple of one is written (T,))"
                                            : gen_val_type_name(g, t));
        return val_err();
    }
    Val v = {.k = V_TUPLE, .nelems = t.nelems};
    v.elems = ARENA_ARRAY(g->a, Val, t.nelems ? t.nelems : 1);
    for (int i = 0; i < t.nelems; i++) {
        v.elems[i] = tuple_elems(g, f, k, pa, t.elems[i], arena_printf(g->a, "%s_%d", name, i), depth + 1);
        if (v.elems[i].k == V_ERR) return val_err();
    }
    return v;
}

/* A tuple parameter, `ptrs: (*f32, (i32, f32))` (docs/language.md, "Tuple arguments"): its elements are run-time
 * parameters of their own at the launch, in order, depth first (ptrs_0, ptrs_1_0, ptrs_1_1), as Triton flattens
 * a tuple argument; in the body `ptrs` is the tuple of them, so `ptrs[0]`, `len(ptrs)` and `for p in ptrs` read as
 * in Triton. */
static Val tuple_param(Gen *g, Func *f, const Decl *k, const Param *pa) {
    return tuple_elems(g, f, k, pa, gen_expr(g, pa->tuple_ty), pa->name, 0);
}

/* A tensor descriptor parameter, `d: tensor_desc(T, [B0, ..., Br-1])` (docs/language.md, "Tensor descriptor
 * parameters"), is 1 + 2r run-time parameters at the launch: the base `d: *T`, the shape `d_shape0..` and the
 * strides `d_stride0..` (i32 each, strides in elements), in that order.  In the body `d` is the record
 * make_tensor_descriptor(d, [d_shape0, ...], [d_stride0, ...], [B0, ...]) makes (lang/descriptors.c), so its
 * accesses are that function's masked loads and stores, and a pipelined loop's loads of it on sm_90a may become
 * tensor-map copies as those of any descriptor whose shape and strides are kernel arguments (pass tma). */
static Val desc_param(Gen *g, Func *f, const Decl *k, const Param *pa) {
    const Node *call = param_desc(pa);
    if (call->nkids != 2 || (call->kwnames && (call->kwnames[0] || call->kwnames[1]))) {
        diag_error(g->d, call->loc, "'tensor_desc' of parameter '%s' takes two arguments, the element type and the block "
                   "shape: 'tensor_desc(f16, [64, 64])'", pa->name);
        return val_err();
    }
    const Node *block = call->kids[1];
    Val tv = gen_expr(g, call->kids[0]);
    if (tv.k != V_DTYPE && tv.k != V_ERR)
        diag_error(g->d, call->kids[0]->loc, "the element type of tensor descriptor parameter '%s' must be a type such as f16", pa->name);
    const Type *et = tv.k == V_DTYPE ? tv.t : NULL;
    g->in_desc_block = true;
    Val b = gen_expr(g, block);
    g->in_desc_block = false;
    int32_t shape[TIR_MAX_RANK] = {0};
    int r = 0;
    if (b.k == V_CT && dtype_is_int(b.dt) && b.i > 0 && b.i <= GEN_MAX_NUMEL) r = 1, shape[0] = (int32_t)b.i;
    else if (b.k == V_SHAPE && b.rank > 0) r = b.rank, memcpy(shape, b.shape, sizeof shape);
    else if (b.k == V_TUPLE && b.nelems > 0 && b.nelems <= TIR_MAX_RANK) {
        r = b.nelems;
        for (int j = 0; j < r; j++) {
            if (b.elems[j].k != V_CT || !dtype_is_int(b.elems[j].dt) || b.elems[j].i <= 0 || b.elems[j].i > GEN_MAX_NUMEL) r = 0;
            else shape[j] = (int32_t)b.elems[j].i;
        }
    }
    if (b.k != V_ERR && r == 0)
        diag_error(g->d, block->loc, "the block shape of tensor descriptor parameter '%s' must be a compile-time "
                   "shape such as [64, 64]", pa->name);
    if (!et || r == 0 || !gen_check_shape(g, r, shape, block->loc)) return val_err();
    if (et->dt == DT_PTR || et->rank) {
        diag_error(g->d, call->kids[0]->loc, "the element type of tensor descriptor parameter '%s' must "
                   "be a number type such as f16, got '%s'", pa->name, gen_type_name(g, et));
        return val_err();
    }
    for (int d = 0; d < 2 * r; d++) { /* the flattened names must not meet another parameter's */
        const char *nm = arena_printf(g->a, "%s_%s%d", pa->name, d < r ? "shape" : "stride", d % r);
        if (!flat_name_free(g, k, nm, pa->name, "tensor descriptor")) return val_err();
    }
    Val d = {.k = V_TUPLE, .nelems = 2 + 2 * r, .record = REC_DESC};
    d.elems = ARENA_ARRAY(g->a, Val, d.nelems);
    d.elems[0] = (Val){.k = V_SHAPE, .rank = r};
    memcpy(d.elems[0].shape, shape, sizeof shape);
    d.elems[1] = val_rt(g, tir_func_add_arg(f, pa->name, tir_ptr(g->m, et))->value);
    const Type *i32 = tir_type(g->m, DT_I32, 0, NULL, NULL, NULL);
    for (int d2 = 0; d2 < 2 * r; d2++) {
        const char *nm = arena_printf(g->a, "%s_%s%d", pa->name, d2 < r ? "shape" : "stride", d2 % r);
        Val v = val_rt(g, tir_func_add_arg(f, nm, i32)->value);
        d.elems[2 + d2] = d2 < r ? v : gen_cast(g, v, DT_I64, pa->loc); /* strides in i64, as make_tensor_descriptor's */
        if (d.elems[2 + d2].k == V_ERR) return val_err();
    }
    return d;
}

static void gen_kernel(Gen *g, const Decl *k) {
    Func *f = tir_func_new(g->m, k->name);
    f->loc = k->loc;
    g->f = f;
    g->ncalls = 0;
    g->nrt_whiles = 0;
    g->nstmts = 0;
    g->b = (Builder){.f = f, .block = f->body, .loc = k->loc};
    Frame fr = {.file = k->loc.file, .body = k->body, .kernel = k};
    Scope sc = {0};
    fr.scope = fr.base = &sc;
    g->fr = &fr;
    int64_t warps = 4, stages = 3, ws = 0, groups = 0, pp = 0, ov = 0;
    Loc wloc = k->loc, sloc = k->loc, wsloc = k->loc, gloc = k->loc, pploc = k->loc, ovloc = k->loc;
    bool warps_given = false, ws_given = false;
    for (int i = 0; i < k->nattrs; i++) {
        const Attr *at = &k->attrs[i];
        bool launch = !strcmp(at->name, "num_warps") || !strcmp(at->name, "num_stages");
        bool repeatable = !strcmp(at->name, "config");
        for (int j = 0; j < i && !repeatable; j++)
            if (!strcmp(k->attrs[j].name, at->name)) {
                diag_error(g->d, at->loc, "'@%s' is given twice", at->name);
                diag_note(g->d, k->attrs[j].loc, "the first");
                break;
            }
        if (launch && (at->nargs != 1 || at->argnames[0])) {
            diag_error(g->d, at->loc, "'@%s' takes one value", at->name);
            continue;
        }
        if (!strcmp(at->name, "num_warps")) attr_int(g, at->arg, "num_warps", &warps), wloc = at->arg->loc, warps_given = true;
        else if (!strcmp(at->name, "num_stages")) attr_int(g, at->arg, "num_stages", &stages), sloc = at->arg->loc;
        else if (!strcmp(at->name, "warp_specialize")) {
            if (at->nargs != 1 || at->argnames[0]) diag_error(g->d, at->loc, "'@warp_specialize' takes one value (0 or 1)");
            else attr_int(g, at->arg, "warp_specialize", &ws), wsloc = at->arg->loc, ws_given = true;
        } else if (!strcmp(at->name, "pingpong")) {
            if (at->nargs != 1 || at->argnames[0]) diag_error(g->d, at->loc, "'@pingpong' takes one value (0 or 1)");
            else attr_int(g, at->arg, "pingpong", &pp), pploc = at->arg->loc;
        } else if (!strcmp(at->name, "overlap")) {
            if (at->nargs != 1 || at->argnames[0]) diag_error(g->d, at->loc, "'@overlap' takes one value (0 or 1)");
            else attr_int(g, at->arg, "overlap", &ov), ovloc = at->arg->loc;
        } else if (!strcmp(at->name, "num_consumer_groups")) {
            /* @num_consumer_groups(N): N computing warpgroups (num_warps 4N) and a producer warpgroup */
            if (at->nargs != 1 || at->argnames[0]) diag_error(g->d, at->loc, "'@num_consumer_groups' takes one value (1, 2 or 4)");
            else attr_int(g, at->arg, "num_consumer_groups", &groups), gloc = at->arg->loc;
        }
        else if (!strcmp(at->name, "config") || !strcmp(at->name, "tune_key")) check_tuning_attr(g, k, at);
        else if (!strcmp(at->name, "num_ctas")) /* Triton's launch keyword for a cluster of CTAs */
            diag_error(g->d, at->loc, "unknown attribute '@num_ctas': a program here is one thread block (Triton's num_ctas=1); "
                       "the attributes are @num_warps, @num_stages, @warp_specialize, @num_consumer_groups, @pingpong, @overlap, "
                       "@config and @tune_key");
        else diag_error(g->d, at->loc, "unknown attribute '@%s' (the attributes are @num_warps, @num_stages, @warp_specialize, "
                        "@num_consumer_groups, @pingpong, @overlap, @config and @tune_key)", at->name);
    }
    if (groups) {
        if (groups == 8)
            diag_error(g->d, gloc, "num_consumer_groups=8: 32 computing warps and a producer warpgroup are more than a block's 1024 threads");
        else if (groups != 1 && groups != 2 && groups != 4)
            diag_error(g->d, gloc, "num_consumer_groups must be 1, 2 or 4, got %lld", (long long)groups);
        else if (warps_given && warps != 4 * groups)
            diag_error(g->d, wloc, "num_warps=%lld, but @num_consumer_groups(%lld) means %lld computing warps", (long long)warps,
                       (long long)groups, (long long)(4 * groups));
        else if (ws_given && !ws)
            diag_error(g->d, wsloc, "@warp_specialize(0) with @num_consumer_groups: consumer groups need a producer");
        else warps = 4 * groups, ws = 1;
    }
    define_int(g, "num_warps", &warps, &wloc);
    define_int(g, "num_stages", &stages, &sloc);
    if (!launch_value_ok(g, "num_warps", warps, wloc)) warps = 4;
    define_flag(g, "warp_specialize", &ws, wsloc);
    define_flag(g, "pingpong", &pp, pploc);
    define_flag(g, "overlap", &ov, ovloc);
    if (!launch_value_ok(g, "num_stages", stages, sloc)) stages = 3;
    f->num_warps = (int)warps;
    f->num_stages = (int)stages;
    f->warp_specialize = ws != 0;
    f->pingpong = pp != 0;
    f->overlap = ov != 0;
    /* const parameters first: a run-time parameter's type may name one (`x: *DT, ..., const DT = f16`) */
    for (int i = 0; i < k->nparams; i++) {
        const Param *pa = &k->params[i];
        if (pa->is_const && param_desc(pa)) {
            diag_error(g->d, pa->loc, "const parameter '%s': a tensor descriptor is a run-time parameter (remove the 'const')", pa->name);
            gen_define_var(g, pa->name, val_err());
            continue;
        }
        if (pa->is_const && pa->ty.nptr) {
            diag_error(g->d, pa->loc, "const parameter '%s' cannot be a pointer: compile-time values are numbers, types and strings", pa->name);
            gen_define_var(g, pa->name, val_err());
            continue;
        }
        if (pa->is_const) {
            Val v;
            Loc vloc = pa->def ? pa->def->loc : pa->loc;
            int di = gen_find_define(g, pa->name);
            if (di >= 0 && g->define_vals[di]) vloc = g->define_vals[di]->loc; /* a -D value's errors name the define */
            if (di >= 0) v = gen_eval_define(g, di);
            else if (pa->def) v = gen_expr(g, pa->def); /* in the kernel's scope: an earlier const parameter is seen */
            else {
                diag_error(g->d, pa->loc, "const parameter '%s' has no default and is not defined (-D %s=...)", pa->name, pa->name);
                v = val_err();
            }
            if (v.k == V_RT) {
                diag_error(g->d, vloc, "'%s' must be a compile-time constant", pa->name);
                v = val_err();
            }
            if (tyref_given(pa->ty) && v.k != V_ERR) v = gen_convert_to(g, v, pa->ty, vloc, pa->name);
            v.held = false; /* a constexpr: weak in promotion */
            gen_define_var(g, pa->name, v);
            g->fr->scope->vars->declared_const = true;
        }
    }
    int none_at[8], nnone = 0; /* parameters passed as None: named by a note when the body has an error */
    for (int i = 0; i < k->nparams; i++) {
        const Param *pa = &k->params[i];
        if (pa->is_const) continue;
        if (pa->def) diag_error(g->d, pa->def->loc, "only const parameters may have a default");
        if (param_desc(pa) || pa->tuple_ty) {
            gen_define_var(g, pa->name, pa->tuple_ty ? tuple_param(g, f, k, pa) : desc_param(g, f, k, pa));
            continue;
        }
        if (!tyref_given(pa->ty)) {
            if (!pa->tuple_type) diag_error(g->d, pa->loc, "kernel parameter '%s' needs a type", pa->name);
            gen_define_var(g, pa->name, val_err());
            continue;
        }
        FuncArg *fa = tir_func_add_arg(f, pa->name, gen_type_ref(g, pa->ty));
        bool none = false;
        for (int j = 0; g->opt && j < g->opt->nnone_args; j++) none |= !strcmp(g->opt->none_args[j], pa->name);
        if (none && pa->ty.nptr == 0) {
            diag_error(g->d, pa->loc, "'%s' cannot be specialized as None: only pointer parameters can be passed as None", pa->name);
            if (g->opt->bad_define) *g->opt->bad_define = true;
            none = false;
        }
        if (none && nnone < 8) none_at[nnone++] = i;
        /* a pointer passed as None: `b is None` is true in the body, the parameter stays in the signature (launched as 0) */
        gen_define_var(g, pa->name, none ? (Val){.k = V_NONE} : val_rt(g, fa->value));
    }
    int errors = g->d->nerrors;
    gen_stmts(g, k->body->kids, k->body->nkids);
    for (int j = 0; j < nnone && g->d->nerrors > errors; j++) /* the likely cause of an error about None */
        diag_note(g->d, k->params[none_at[j]].loc, "'%s' is None in this compile: it was passed as None (specialized %s=None)",
                  k->params[none_at[j]].name, k->params[none_at[j]].name);
    g->b.block = f->body;
    gen_emit_inst(g, k->loc, OP_RETURN, NULL, 0, NULL);
    g->fr = NULL;
}

/* A kernel's name is the module's: another kernel's, or a function's or file-level const's of the program's files
 * (the compiled file or an import from elsewhere), is an error at the later one of the file, a note at the
 * other.  A standard-library name and a built-in's may be a kernel's (`kernel softmax` beside softmax.tile:
 * the body's calls still reach the function); kernels of imported files are never compiled. */
static void kernel_name_unique(Gen *g, const FileAst *main, int i, NameMap *kernels) {
    const Decl *k = main->decls[i];
    const Decl *first = namemap_get(kernels, k->name); /* the kernels before k, by name */
    if (first) {
        diag_error(g->d, k->loc, "redefinition of kernel '%s'", k->name);
        diag_note(g->d, first->loc, "the first kernel '%s' is here", k->name);
        return;
    }
    namemap_put(g->a, kernels, k->name, (void *)k);
    intptr_t at = (intptr_t)namemap_get(&g->global_index[0], k->name);
    if (at) {
        const Global *gl = &g->globals[at - 1];
        const char *what = gl->decl->kind == D_FN ? "function" : "const";
        const Loc gloc = gl->decl->loc;
        if (gloc.file != main->src)
            diag_error(g->d, k->loc, "kernel '%s' has the name of a %s of the imported %s (line %u): rename one", k->name, what,
                       gloc.file ? gloc.file->name : "file", gloc.line);
        else {
            bool later = gloc.line > k->loc.line || (gloc.line == k->loc.line && gloc.col > k->loc.col);
            diag_error(g->d, later ? gloc : k->loc, "'%s' is both a kernel and a %s: rename one", k->name, what);
            if (later) diag_note(g->d, k->loc, "the kernel '%s' is here", k->name);
            else diag_note(g->d, gloc, "the %s '%s' is here", what, k->name);
        }
        return;
    }
}

Module *gen_module(Arena *a, FileAst **files, int nfiles, const LangOptions *opt, Diag *d) {
    Gen gen = {.a = a, .d = d, .m = tir_module_new(a), .opt = opt};
    Gen *g = &gen;
    int ndef = opt ? opt->ndefines : 0;
    g->define_vals = ARENA_ARRAY(a, Node *, ndef + 1);
    for (int i = 0; i < ndef; i++) {
        const LangDefine *df = &opt->defines[i];
        if (!df->name || !df->value) continue;
        SrcFile *src = ARENA_NEW(a, SrcFile);
        src->name = arena_printf(a, "<-D %s>", df->name);
        src->text = arena_strdup(a, df->value);
        src->len = strlen(df->value);
        g->define_vals[i] = parse_define_value(a, src, d);
    }
    if (d->nerrors > d->nspelled) return NULL; /* a -D value that does not parse: the kernels would only report what follows from it */
    g->scratch = tir_func_new(g->m, "<const>");
    g->m->nfuncs--; /* scratch space for constants, never part of the module */
    int cap = 0;
    g->files = files, g->nfiles = nfiles;
    for (int fi = 0; fi < nfiles; fi++) {
        for (int i = 0; i < files[fi]->ndecls; i++) {
            const Decl *dc = files[fi]->decls[i];
            if (dc->kind != D_CONST && dc->kind != D_FN) continue;
            /* a name defined twice on one side: the program's files, or the standard library's (each side
             * may have a name the other has: gen_find_global) */
            intptr_t at = (intptr_t)namemap_get(&g->global_index[files[fi]->stdlib], dc->name);
            Global *prev = at ? &g->globals[at - 1] : NULL;
            if (prev) {
                const Loc pl = prev->decl->loc;
                if (fi > 0 && pl.file == files[0]->src) /* the file's own name meets an import's: the error is at its own */
                    diag_error(d, pl, "'%s' is also defined by the imported %s (line %u): rename one", dc->name,
                               dc->loc.file ? dc->loc.file->name : "file", dc->loc.line);
                else {
                    diag_error(d, dc->loc, "redefinition of '%s'", dc->name);
                    diag_note(d, pl, "'%s' is first defined here", dc->name);
                }
                continue;
            }
            if (g->nglobals == cap) {
                int nc = cap ? cap * 2 : 32;
                g->globals = arena_grow(a, g->globals, sizeof(Global) * (size_t)cap, sizeof(Global) * (size_t)nc);
                cap = nc;
            }
            g->globals[g->nglobals++] = (Global){.name = dc->name, .decl = dc, .lib = files[fi]->stdlib};
            namemap_put(a, &g->global_index[files[fi]->stdlib], dc->name, (void *)(intptr_t)g->nglobals);
        }
    }
    for (int i = 0; i < g->nglobals; i++)
        if (g->globals[i].decl->kind == D_CONST && !gen_callable_alias(g, &g->globals[i]))
            gen_global_value(g, &g->globals[i], g->globals[i].decl->loc);
    const char *want = opt ? opt->kernel_name : NULL;
    bool found = false;
    FileAst *main = nfiles ? files[0] : NULL;
    g->main_file = main;
    NameMap kernels = {0};
    for (int i = 0; main && i < main->ndecls; i++) {
        const Decl *k = main->decls[i];
        if (k->kind != D_KERNEL) continue;
        kernel_name_unique(g, main, i, &kernels);
        if (want && strcmp(want, k->name)) continue;
        found = true;
        gen_kernel(g, k);
    }
    if (want && !found) { /* on one line (the CLI tells it from the source's errors): the kernels there are */
        Str ks = {0};
        for (int i = 0; main && i < main->ndecls; i++)
            if (main->decls[i]->kind == D_KERNEL) str_printf(&ks, "%s%s", ks.len ? ", " : "", main->decls[i]->name);
        const char *file = main && main->ndecls ? main->decls[0]->loc.file->name : NULL;
        const char *other = NULL; /* the name is a fn's or a const's: say so (a kernel is what a launch runs) */
        for (int i = 0; main && i < main->ndecls && !other; i++)
            if (main->decls[i]->name && !strcmp(main->decls[i]->name, want))
                other = main->decls[i]->kind == D_FN ? "a fn" : main->decls[i]->kind == D_CONST ? "a const" : NULL;
        Str is = {0};
        if (other) str_printf(&is, "'%s' is %s, not a kernel; ", want, other);
        if (ks.len && file) diag_error(d, (Loc){0}, "no kernel named '%s' (%sthe kernels of %s: %s)", want, is.len ? is.buf : "", file, ks.buf);
        else if (is.len) diag_error(d, (Loc){0}, "no kernel named '%s' (%.*s)", want, (int)is.len - 2, is.buf);
        else diag_error(d, (Loc){0}, "no kernel named '%s'", want);
        str_free(&is);
        str_free(&ks);
    }
    return d->nerrors ? NULL : g->m;
}
