/* builtins_raw.c - the built-ins that bind their own arguments: positional string
 * literals and argument lists that gen_bind_args does not take.
 *   static_assert(cond, "msg"), device_assert(cond, "msg"), device_print("prefix", values...)
 *   inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack)
 * builtins.c dispatches to them by name. */
#include "gen.h"

#include <string.h>

/* static_assert(cond, "msg"), device_assert(cond, "msg"), device_print("prefix", values...):
 * positional strings and a variable count, so not through gen_bind_args. */
Val builtin_debug(Gen *g, const Node *node, const char *name) {
    bool is_print = !strcmp(name, "device_print"), is_static = !strcmp(name, "static_assert");
    int n = node->nkids;
    for (int k = 0; k < n; k++)
        if (node->kwnames && node->kwnames[k]) {
            diag_error(g->d, node->kids[k]->loc, "'%s' takes no keyword arguments", name);
            return val_err();
        }
    if (is_print) {
        if (n < 1 || node->kids[0]->kind != N_STR) {
            diag_error(g->d, node->loc, "'device_print' expects a string literal prefix first, such as device_print(\"x\", x)");
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
        ValueId ops[64];
        for (int k = 1; k < n; k++) {
            DType dt = val_dtype(v[k]);
            ops[k - 1] = gen_coerce(g, v[k], dt, v[k].k == V_RT ? v[k].t->pointee : NULL, r, s, node->kids[k]->loc);
        }
        Inst *in = gen_emit_inst(g, node->loc, OP_PRINT, ops, n - 1, NULL);
        in->a.msg = node->kids[0]->name;
        return (Val){.k = V_VOID};
    }
    if (n < 1 || n > 2 || (n == 2 && node->kids[1]->kind != N_STR)) {
        diag_error(g->d, node->loc, "'%s' expects a condition and an optional string literal message, such as %s(n > 0, \"n must be positive\")",
                   name, name);
        return val_err();
    }
    const char *msg = n == 2 ? node->kids[1]->name : "";
    Val c = gen_expr(g, node->kids[0]);
    if (c.k == V_ERR || !val_is_value(g, c, node->kids[0]->loc)) return val_err();
    DType dt = val_dtype(c);
    if (dt != DT_I1 && (!dtype_is_int(dt) || dt == DT_PTR)) {
        diag_error(g->d, node->kids[0]->loc, "condition of '%s' must be i1 or an integer, got '%s'", name, gen_val_type_name(g, c));
        return val_err();
    }
    if (dt != DT_I1) c = gen_cast(g, c, DT_I1, node->kids[0]->loc);
    if (is_static) {
        if (c.k != V_CT) {
            diag_error(g->d, node->kids[0]->loc, "condition of 'static_assert' must be a compile-time constant (device_assert checks at run time)");
            return val_err();
        }
        if (!c.i) diag_error(g->d, node->loc, "static_assert failed%s%s", *msg ? ": " : "", msg);
        return c.i ? (Val){.k = V_VOID} : val_err();
    }
    if (!g->opt->device_asserts) return (Val){.k = V_VOID}; /* compiled out, as NDEBUG */
    if (c.k == V_CT && c.i) return (Val){.k = V_VOID};
    ValueId cv = c.k == V_CT ? gen_materialize(g, c, node->loc) : c.v;
    Inst *in = gen_emit_inst(g, node->loc, OP_ASSERT, &cv, 1, NULL);
    in->a.msg = msg;
    return (Val){.k = V_VOID};
}

/* inline_asm_elementwise(asm, constraints, args, dtype, is_pure=true, pack=1), as Triton's: asm
 * (PTX with $0 the result, $1... the arguments) runs once per element of the broadcast
 * arguments, a list or tuple of values; only pack=1; always kept in order, never merged. */
/* The register type of a constraint letter: h i16, r i32, l i64, f f32, d f64 (DT_VOID: none). */
static DType asm_reg_type(char c) {
    switch (c) {
    case 'h': return DT_I16;
    case 'r': return DT_I32;
    case 'l': return DT_I64;
    case 'f': return DT_F32;
    case 'd': return DT_F64;
    default: return DT_VOID;
    }
}

/* Split the constraints: one output "=X" (or "=&X"), then an input per argument (a letter, or
 * the digit of the output it shares), then any "~{...}" clobbers.  reg[0] is the output's register
 * type, reg[1..] the inputs'; *nin the number of inputs.  False with a located error. */
static bool asm_constraints(Gen *g, const Node *cn, DType *reg, int *nin) {
    const char *c = cn->name;
    int nout = 0, n = 0;
    while (*c) {
        const char *e = strchr(c, ',');
        size_t len = e ? (size_t)(e - c) : strlen(c);
        while (len && (*c == ' ' || *c == '\t')) c++, len--;
        while (len && (c[len - 1] == ' ' || c[len - 1] == '\t')) len--;
        if (len && *c == '~') { /* a clobber */
        } else if (len && *c == '=') {
            size_t at = 1 + (len > 1 && c[1] == '&');
            if (n || nout || len != at + 1 || asm_reg_type(c[at]) == DT_VOID) {
                diag_error(g->d, cn->loc, n || nout ? "'inline_asm_elementwise' constraints: one output ('=r'), and it comes first"
                                                    : "'inline_asm_elementwise' constraints: the output '%.*s' is not one of =h, =r, =l, =f, =d",
                           (int)len, c);
                return false;
            }
            reg[0] = asm_reg_type(c[at]);
            nout = 1;
        } else {
            if (!nout) {
                diag_error(g->d, cn->loc, "'inline_asm_elementwise' constraints start with the output, such as \"=r,r\"");
                return false;
            }
            DType t = len == 1 ? (*c == '0' ? reg[0] : asm_reg_type(*c)) : DT_VOID;
            if (t == DT_VOID) {
                diag_error(g->d, cn->loc, "'inline_asm_elementwise' constraints: '%.*s' is not one of h, r, l, f, d (or 0, the output's register)",
                           (int)len, c);
                return false;
            }
            if (n == 16) {
                diag_error(g->d, cn->loc, "'inline_asm_elementwise' takes at most 16 arguments");
                return false;
            }
            reg[1 + n++] = t;
        }
        c = e ? e + 1 : c + len;
        if (!e) break;
    }
    if (!nout) {
        diag_error(g->d, cn->loc, "'inline_asm_elementwise' constraints name no output, such as \"=r\"");
        return false;
    }
    *nin = n;
    return true;
}

/* A value's bits as register type `reg` (a bitcast of the same width; pointers as i64). */
static bool asm_operand(Gen *g, Val *v, DType reg, Loc loc, const char *what) {
    DType d = val_dtype(*v);
    int bits = d == DT_PTR ? 64 : dtype_bits(d);
    if (d == reg) return true;
    if (bits != dtype_bits(reg) || d == DT_I1) {
        diag_error(g->d, loc, "%s is %s, %d bits, but its constraint is a %d-bit register (%s): convert it first", what,
                   gen_val_type_name(g, *v), bits, dtype_bits(reg), dtype_name(reg));
        return false;
    }
    *v = gen_convert(g, *v, tir_scalar(g->m, reg), true, loc);
    return v->k != V_ERR;
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
    Val dt = gen_expr(g, arg[3]);
    if (dt.k == V_ERR) return val_err();
    if (dt.k != V_DTYPE || dt.t->dt == DT_PTR || dtype_is_storage(dt.t->dt)) {
        diag_error(g->d, arg[3]->loc, "'inline_asm_elementwise' expects a result type such as f32 or i32");
        return val_err();
    }
    for (int k = 4; k < 6; k++) {
        if (!arg[k]) continue;
        Val v = gen_expr(g, arg[k]);
        if (v.k == V_ERR) return val_err();
        if (v.k != V_CT || (k == 5 && v.i != 1)) {
            diag_error(g->d, arg[k]->loc, k == 5 ? "'inline_asm_elementwise' supports pack=1 only" : "'is_pure' must be a compile-time i1");
            return val_err();
        }
    }
    const Node *list = arg[2];
    int n = list->kind == N_LIST || list->kind == N_TUPLE ? list->nkids : 1;
    const Node *const *kids = list->kind == N_LIST || list->kind == N_TUPLE ? (const Node *const *)list->kids : &list;
    if (n > 16) {
        diag_error(g->d, list->loc, "'inline_asm_elementwise' takes at most 16 arguments");
        return val_err();
    }
    DType reg[17];
    int nin;
    if (!asm_constraints(g, arg[1], reg, &nin)) return val_err();
    if (nin != n) {
        diag_error(g->d, list->loc, "'inline_asm_elementwise' has %d argument%s, but its constraints \"%s\" name %d input%s", n,
                   n == 1 ? "" : "s", arg[1]->name, nin, nin == 1 ? "" : "s");
        return val_err();
    }
    Val v[16];
    int r = 0;
    int32_t s[TIR_MAX_RANK] = {0};
    for (int k = 0; k < n; k++) {
        v[k] = gen_expr(g, kids[k]);
        if (v[k].k == V_ERR || !val_is_value(g, v[k], kids[k]->loc)) return val_err();
        if (!asm_operand(g, &v[k], reg[1 + k], kids[k]->loc, arena_printf(g->a, "argument %d", k))) return val_err();
        if (!gen_broadcast_shapes(g, r, s, val_rank(v[k]), val_shape(v[k]), &r, s, kids[k]->loc)) return val_err();
    }
    int rbits = dtype_bits(dt.t->dt);
    if (rbits != dtype_bits(reg[0]) || dt.t->dt == DT_I1) {
        diag_error(g->d, arg[3]->loc, "the result type %s has %d bits, but the output constraint is a %d-bit register (%s)",
                   dtype_name(dt.t->dt), rbits, dtype_bits(reg[0]), dtype_name(reg[0]));
        return val_err();
    }
    ValueId ops[16];
    for (int k = 0; k < n; k++) ops[k] = gen_coerce(g, v[k], val_dtype(v[k]), NULL, r, s, kids[k]->loc);
    /* the statement works on the registers' types; the result is the bits of dtype */
    Inst *in = gen_emit_inst(g, node->loc, OP_INLINE_ASM, ops, n, tir_type(g->m, reg[0], r, s, NULL, NULL));
    in->a.msg = arena_printf(g->a, "%s\n%s", arg[1]->name, arg[0]->name);
    Val res = val_rt(g, in->res[0]);
    return reg[0] == dt.t->dt ? res : gen_convert(g, res, dt.t, true, node->loc);
}

