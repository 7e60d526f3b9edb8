/* builtins_raw.c - the built-ins that bind their own arguments: positional string
 * literals and argument lists that gen_bind_args does not take.
 *   static_assert(cond, "msg"), device_assert(cond, "msg", mask=), device_print("prefix", values..., hex=),
 *   static_print(values...)
 *   inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack)
 * builtins.c dispatches to them by name.  Also expect_zero(x, mask) (bound as the table's built-ins
 * are), which is a device_assert under the debug option. */
#include "builtins.h"

#include <string.h>

/* static_assert(cond, "msg"), device_assert(cond, "msg"), device_print("prefix", values...):
 * positional strings and a variable count, so not through gen_bind_args. */
/* static_print(values...): at compile time, a note at the call with each string as it is, each
 * compile-time value (a number, type or shape) and each run-time value's type, space-separated. */
static Val static_print(Gen *g, const Node *node) {
    Str s = {0};
    for (int k = 0; k < node->nkids; k++) {
        const Node *a = node->kids[k];
        if (k) str_putc(&s, ' ');
        if (a->kind == N_STR) {
            str_puts(&s, a->name);
            continue;
        }
        Val v = gen_expr(g, a);
        switch (v.k) {
        case V_ERR: str_free(&s); return val_err();
        case V_CT:
            if (dtype_is_float(v.dt)) str_puts(&s, arena_double(g->a, v.f));
            else if (v.dt == DT_I1) str_puts(&s, v.i ? "true" : "false");
            else if (dtype_is_signed(v.dt)) str_printf(&s, "%lld", (long long)v.i);
            else str_printf(&s, "%llu", (unsigned long long)v.i);
            break;
        case V_DTYPE: str_puts(&s, gen_type_desc(g, v.t)); break; /* a pointer type with its pointee */
        case V_STR: str_puts(&s, v.s); break;
        case V_SHAPE: str_puts(&s, gen_shape_str(g, v.rank, v.shape)); break;
        case V_NONE: str_puts(&s, "None"); break;
        default: str_puts(&s, v.k == V_RT ? gen_type_desc(g, v.t) : gen_val_type_name(g, v)); break;
        }
    }
    diag_note(g->d, node->loc, "static_print: %s", s.buf ? s.buf : "");
    str_free(&s);
    return (Val){.k = V_VOID};
}

/* device_assert's check of cond (i1): an assert op unless cond is true at compile time; nothing
 * without the debug option (as C's assert under NDEBUG). */
static void assert_emit(Gen *g, Val c, const char *msg, Loc loc) {
    if (!g->opt->device_asserts || (c.k == V_CT && c.i)) return;
    ValueId cv = c.k == V_CT ? gen_materialize(g, c, loc) : c.v;
    gen_emit_inst(g, loc, OP_ASSERT, &cv, 1, NULL)->a.msg = msg;
}

/* The keyword arguments of Triton's: static_assert(cond, msg=), device_assert(cond, msg=, mask=),
 * device_print(prefix, *args, hex=); the node returned holds the positional ones, msg= appended to them. */
static const Node *debug_keywords(Gen *g, const Node *node, const char *name, const Node **mask, const Node **hex) {
    bool is_print = !strcmp(name, "device_print"), is_assert = !strcmp(name, "device_assert");
    bool any = false;
    for (int k = 0; k < node->nkids; k++) any |= node->kwnames && node->kwnames[k];
    if (!any) return node;
    Node *pos = arena_alloc(g->a, sizeof *pos);
    *pos = *node;
    pos->kwnames = NULL;
    pos->kids = ARENA_ARRAY(g->a, Node *, node->nkids + 1);
    pos->nkids = 0;
    const Node *msg = NULL;
    for (int k = 0; k < node->nkids; k++) {
        const char *kw = node->kwnames[k];
        Node *a = node->kids[k];
        if (!kw) pos->kids[pos->nkids++] = a;
        else if (!strcmp(kw, "msg") && (is_assert || !strcmp(name, "static_assert")) && !msg) msg = a;
        else if (!strcmp(kw, "mask") && is_assert && !*mask) *mask = a;
        else if (!strcmp(kw, "hex") && is_print && !*hex) *hex = a;
        else {
            const char *takes = is_assert ? " (it takes msg= and mask=)" : is_print ? " (it takes hex=)"
                                : !strcmp(name, "static_assert") ? " (it takes msg=)" : "";
            diag_error(g->d, a->loc, "'%s' takes no keyword argument '%s'%s", name, kw, takes);
            return NULL;
        }
    }
    if (msg) {
        if (pos->nkids != 1) {
            diag_error(g->d, msg->loc, "'%s' has its message twice (or msg= without the condition)", name);
            return NULL;
        }
        pos->kids[pos->nkids++] = (Node *)msg;
    }
    return pos;
}

Val builtin_debug(Gen *g, const Node *node, const char *name) {
    bool is_print = !strcmp(name, "device_print"), is_static = !strcmp(name, "static_assert");
    const Node *mask_arg = NULL, *hex_arg = NULL;
    node = debug_keywords(g, node, name, &mask_arg, &hex_arg);
    if (!node) return val_err();
    int n = node->nkids;
    if (!strcmp(name, "static_print")) return static_print(g, node);
    if (is_print) {
        if (n < 1 || node->kids[0]->kind != N_STR) {
            diag_error(g->d, n ? node->kids[0]->loc : node->loc, "'device_print' expects a string literal prefix first, such as "
                       "device_print(\"x\", x)");
            return val_err();
        }
        if (n - 1 > 64) {
            diag_error(g->d, node->loc, "'device_print' takes at most 64 values, got %d", n - 1);
            return val_err();
        }
        Val v[65];
        int r = 0;
        int32_t s[TIR_MAX_RANK] = {0};
        bool ok = true;
        for (int k = 1; k < n; k++) {
            v[k] = gen_expr(g, node->kids[k]);
            if (v[k].k == V_ERR || !val_is_value(g, v[k], node->kids[k]->loc)) ok = false;
            else if (!gen_broadcast_shapes(g, r, s, val_rank(v[k]), val_shape(v[k]), &r, s, node->kids[k]->loc)) ok = false;
        }
        if (!ok) return val_err();
        int64_t hex = 0; /* hex=true: integers as 0x and their type's digits, floats as %a (C's hex floats) */
        if (hex_arg) {
            Val h = gen_expr(g, hex_arg);
            if (h.k == V_ERR) return val_err();
            if (h.k != V_CT || h.dt != DT_I1) {
                diag_error(g->d, hex_arg->loc, "hex= of 'device_print' must be true or false at compile time, got %s'%s'",
                           h.k == V_RT ? "a run-time " : "", gen_val_type_name(g, h));
                return val_err();
            }
            hex = h.i;
        }
        ValueId ops[64];
        for (int k = 1; k < n; k++) {
            DType dt = val_dtype(v[k]);
            ops[k - 1] = gen_coerce(g, v[k], dt, v[k].k == V_RT ? v[k].t->pointee : NULL, r, s, node->kids[k]->loc);
        }
        Inst *in = gen_emit_inst(g, node->loc, OP_PRINT, ops, n - 1, NULL);
        in->a.msg = node->kids[0]->name;
        in->a.ival = hex;
        return (Val){.k = V_VOID};
    }
    if (n < 1 || n > 2 || (n == 2 && node->kids[1]->kind != N_STR)) {
        diag_error(g->d, n > 2 ? node->kids[2]->loc : n == 2 ? node->kids[1]->loc : node->loc, /* at what is wrong */
                   "'%s' expects a condition and an optional string literal message, such as %s(n > 0, \"n must be positive\")", name, name);
        return val_err();
    }
    const char *msg = n == 2 ? node->kids[1]->name : "";
    Val c = gen_expr(g, node->kids[0]);
    if (c.k == V_ERR || !val_is_value(g, c, node->kids[0]->loc)) return val_err();
    DType dt = val_dtype(c);
    /* non-zero is true (a NaN too), as the condition of an `if`, a `while`, `where` and a ternary, and Triton's cast to int1 */
    if (dt == DT_PTR || (!dtype_is_int(dt) && !dtype_is_float(dt))) {
        diag_error(g->d, node->kids[0]->loc, "condition of '%s' must be i1, an integer or a float, got '%s'", name, gen_val_type_name(g, c));
        return val_err();
    }
    if (dt != DT_I1) c = gen_cast(g, c, DT_I1, node->kids[0]->loc);
    if (mask_arg) { /* Triton's mask=: checked only where the mask is true (cond | !mask) */
        Val m = gen_expr(g, mask_arg);
        if (m.k == V_ERR || !val_is_value(g, m, mask_arg->loc)) return val_err();
        if (val_dtype(m) != DT_I1) {
            diag_error(g->d, mask_arg->loc, "mask= of 'device_assert' must be i1, got '%s'", gen_val_type_name(g, m));
            return val_err();
        }
        c = gen_binop(g, TK_OROR, c, gen_binop(g, TK_EQEQ, m, val_ct_int(0, DT_I1), mask_arg->loc), mask_arg->loc);
        if (c.k == V_ERR) return c;
    }
    if (is_static) {
        if (c.k != V_CT) {
            diag_error(g->d, node->kids[0]->loc, "condition of 'static_assert' must be a compile-time constant (device_assert checks at run time)");
            gen_note_runtime_params(g, node->kids[0], c);
            return val_err();
        }
        if (!c.i) diag_error(g->d, node->loc, "static_assert failed%s%s", *msg ? ": " : "", msg);
        return c.i ? (Val){.k = V_VOID} : val_err();
    }
    assert_emit(g, c, msg, node->loc);
    return (Val){.k = V_VOID};
}

/* expect_zero(x, mask), Triton's: x itself; under the debug option (as device_assert) a run-time
 * check that x == 0 wherever mask is true, with Triton's message. */
Val bi_expect_zero(Call *c) {
    Gen *g = c->g;
    Val x = c->v[0], m = c->v[1];
    if (!val_is_value(g, x, c->loc[0]) || !val_is_value(g, m, c->loc[1])) return val_err();
    DType dx = val_dtype(x), dm = val_dtype(m);
    if (dx == DT_PTR || dx == DT_I1 || dtype_is_storage(dx)) {
        diag_error(g->d, c->loc[0], "'expect_zero' expects numbers, got '%s'", gen_val_type_name(g, x));
        return val_err();
    }
    if (dm != DT_I1) {
        diag_error(g->d, c->loc[1], "mask of 'expect_zero' must be i1, got '%s'", gen_val_type_name(g, m));
        return val_err();
    }
    int r;
    int32_t s[TIR_MAX_RANK];
    if (!gen_broadcast_shapes(g, val_rank(x), val_shape(x), val_rank(m), val_shape(m), &r, s, c->node->loc)) return val_err();
    if (!g->opt->device_asserts) return x;
    Loc at = c->node->loc;
    Val cond = gen_binop(g, TK_OROR, gen_binop(g, TK_EQEQ, x, val_ct_int(0, DT_I32), at), gen_binop(g, TK_EQEQ, m, val_ct_int(0, DT_I1), at), at);
    if (cond.k == V_ERR) return cond;
    assert_emit(g, cond, "expect_zero expected x == 0 where mask is true", at);
    return x;
}

/* inline_asm_elementwise(asm, constraints, args, dtype, is_pure=true, pack=1), as Triton's: asm
 * (PTX with $0... the output registers, then the arguments') runs on `pack` elements of the broadcast
 * arguments (a list or tuple of values) at a time; dtype is one type, or a tuple of types for several
 * results; always kept in order, never merged.  Registers pack elements as tir_asm_regs says. */

/* Check that registers reg[at..at+n) of the constraints fit a value of type `tname`: each `bits` wide. */
static bool asm_fits(Gen *g, const DType *reg, int at, int n, int bits, Loc loc, const char *what, const char *tname, int pack,
                     const char *hint) {
    for (int k = at; k < at + n; k++) {
        if (dtype_bits(reg[k]) == bits) continue;
        if (pack == 1)
            diag_error(g->d, loc, "%s is %s, %d bits, but its constraint is a %d-bit register (%s)%s", what, tname, bits, dtype_bits(reg[k]),
                       dtype_name(reg[k]), hint);
        else
            diag_error(g->d, loc, "%s is %s, packed at pack=%d into %d-bit registers, but its constraint is a %d-bit register (%s)", what,
                       tname, pack, bits, dtype_bits(reg[k]), dtype_name(reg[k]));
        return false;
    }
    return true;
}

Val builtin_inline_asm(Gen *g, const Node *node) {
    static const char *const pn[] = {"asm", "constraints", "args", "dtype", "is_pure", "pack"};
    const Node *arg[6];
    bool kw[6];
    if (!gen_bind_args(g, node, "inline_asm_elementwise", pn, 6, 4, arg, kw)) return val_err();
    for (int k = 0; k < 2; k++)
        if (arg[k]->kind != N_STR) {
            diag_error(g->d, arg[k]->loc, "argument '%s' of 'inline_asm_elementwise' must be a string literal", pn[k]);
            return val_err();
        }
    if (strchr(arg[1]->name, '\n')) {
        diag_error(g->d, arg[1]->loc, "constraints of 'inline_asm_elementwise' cannot contain a newline");
        return val_err();
    }
    /* the result types: one, or a tuple (several results) */
    const Node *dn = arg[3];
    bool many = dn->kind == N_TUPLE || dn->kind == N_LIST;
    int nres = many ? dn->nkids : 1;
    if (nres < 1 || nres > 16) {
        diag_error(g->d, dn->loc, "'inline_asm_elementwise' returns 1 to 16 results, got %d", nres);
        return val_err();
    }
    const Type *rt[16];
    for (int k = 0; k < nres; k++) {
        const Node *e = many ? dn->kids[k] : dn;
        Val dt = gen_expr(g, e);
        if (dt.k == V_ERR) return val_err();
        if (dt.k != V_DTYPE || dt.t->dt == DT_PTR || dt.t->dt == DT_I1) {
            diag_error(g->d, e->loc, "'inline_asm_elementwise' expects a result type such as f32 or i32, or a tuple of them");
            return val_err();
        }
        rt[k] = dt.t;
    }
    bool pure = true;
    int pack = 1;
    for (int k = 4; k < 6; k++) {
        if (!arg[k]) continue;
        Val v = gen_expr(g, arg[k]);
        if (v.k == V_ERR) return val_err();
        if (v.k != V_CT || dtype_is_float(v.dt) || (k == 5 && (v.i < 1 || v.i > 16))) {
            diag_error(g->d, arg[k]->loc, k == 5 ? "'pack' of 'inline_asm_elementwise' must be a compile-time integer from 1 to 16"
                                                 : "'is_pure' must be a compile-time i1");
            return val_err();
        }
        if (k == 4) pure = v.i != 0;
        else pack = (int)v.i;
    }
    if (!pure && nres > 1) {
        diag_error(g->d, arg[4]->loc, "an 'inline_asm_elementwise' with side effects (is_pure=false) returns one result");
        return val_err();
    }
    const Node *list = arg[2];
    int n = list->kind == N_LIST || list->kind == N_TUPLE ? list->nkids : 1;
    const Node *const *kids = list->kind == N_LIST || list->kind == N_TUPLE ? (const Node *const *)list->kids : &list;
    if (n > 16) {
        diag_error(g->d, list->loc, "'inline_asm_elementwise' takes at most 16 arguments");
        return val_err();
    }
    AsmRegs regs;
    char why[160];
    const char *bad = tir_asm_regs(arg[1]->name, &regs, why, sizeof why);
    if (bad) {
        diag_error(g->d, arg[1]->loc, "'inline_asm_elementwise' constraints: %s", bad);
        return val_err();
    }
    /* count the registers the results and the arguments take */
    int outs = 0, rbits[16], rregs[16];
    for (int k = 0; k < nres; k++) {
        int b = rt[k]->dt == DT_PTR ? 64 : dtype_bits(rt[k]->dt);
        rregs[k] = tir_asm_value_regs(rt[k]->dt, pack, &rbits[k]);
        if (pack % tir_asm_per_reg(b, pack)) {
            diag_error(g->d, arg[5] ? arg[5]->loc : node->loc, "pack=%d does not fill whole registers of %s results (%d a register)", pack,
                       dtype_name(rt[k]->dt), tir_asm_per_reg(b, pack));
            return val_err();
        }
        outs += rregs[k];
    }
    if ((bad = tir_asm_text_check(arg[0]->name, regs.nout + regs.nin, why, sizeof why))) {
        diag_error(g->d, arg[0]->loc, "'inline_asm_elementwise' assembly: %s", bad);
        return val_err();
    }
    if (outs != regs.nout) {
        diag_error(g->d, arg[1]->loc, "'inline_asm_elementwise' constraints \"%s\" name %d output%s, but %d result%s at pack=%d take%s %d register%s",
                   arg[1]->name, regs.nout, regs.nout == 1 ? "" : "s", nres, nres == 1 ? "" : "s", pack, nres == 1 ? "s" : "", outs,
                   outs == 1 ? "" : "s");
        return val_err();
    }
    Val v[16];
    int r = 0, ins = 0;
    int32_t s[TIR_MAX_RANK] = {0};
    for (int k = 0; k < n; k++) {
        v[k] = gen_expr(g, kids[k]);
        if (v[k].k == V_ERR || !val_is_value(g, v[k], kids[k]->loc)) return val_err();
        if (v[k].k == V_CT) v[k] = val_rt(g, gen_materialize(g, v[k], kids[k]->loc));
        if (val_dtype(v[k]) == DT_I1) {
            diag_error(g->d, kids[k]->loc, "argument %d of 'inline_asm_elementwise' is i1: convert it to an integer first", k);
            return val_err();
        }
        if (!gen_broadcast_shapes(g, r, s, val_rank(v[k]), val_shape(v[k]), &r, s, kids[k]->loc)) return val_err();
        ins += tir_asm_value_regs(val_dtype(v[k]), pack, &(int){0});
    }
    if (ins != regs.nin) {
        const char *took = pack > 1 ? arena_printf(g->a, " taking %d register%s at pack=%d", ins, ins == 1 ? "" : "s", pack) : "";
        diag_error(g->d, list->loc, "'inline_asm_elementwise' has %d argument%s%s, but its constraints \"%s\" name %d input%s", n,
                   n == 1 ? "" : "s", took, arg[1]->name, regs.nin, regs.nin == 1 ? "" : "s");
        return val_err();
    }
    for (int k = 0, at = 0; k < n; k++) {
        int bits, nr = tir_asm_value_regs(val_dtype(v[k]), pack, &bits);
        if (!asm_fits(g, regs.in, at, nr, bits, kids[k]->loc, arena_printf(g->a, "argument %d", k), gen_val_type_name(g, v[k]), pack,
                      ": convert it first"))
            return val_err();
        at += nr;
    }
    for (int k = 0, at = 0; k < nres; k++) {
        if (!asm_fits(g, regs.out, at, rregs[k], rbits[k], (many ? dn->kids[k] : dn)->loc, nres > 1 ? arena_printf(g->a, "result %d", k) : "the result",
                      dtype_name(rt[k]->dt), pack, ""))
            return val_err();
        at += rregs[k];
    }
    ValueId ops[16];
    for (int k = 0; k < n; k++) ops[k] = gen_coerce(g, v[k], val_dtype(v[k]), v[k].t->pointee, r, s, kids[k]->loc);
    /* one statement a result: each runs the whole asm and keeps its own outputs (ival2, the first) */
    Val res[16];
    for (int k = 0, at = 0; k < nres; k++) {
        Inst *in = gen_emit_inst(g, node->loc, OP_INLINE_ASM, ops, n, tir_type(g->m, rt[k]->dt, r, s, NULL, NULL));
        in->a.msg = arena_printf(g->a, "%s\n%s", arg[1]->name, arg[0]->name);
        in->a.ival = pack;
        in->a.ival2 = at;
        at += rregs[k];
        res[k] = val_rt(g, in->res[0]);
    }
    if (!many) return res[0];
    Val t = {.k = V_TUPLE, .nelems = nres, .elems = ARENA_ARRAY(g->a, Val, nres)};
    memcpy(t.elems, res, sizeof *res * (size_t)nres);
    return t;
}
