/* gen.c - values and expressions: folding, promotion, broadcasting.
 *
 * An expression evaluates to a Val (see gen.h).  For a binary operator:
 *   1. both operands compile-time: fold here (fold_binop) in 64-bit
 *      unsigned-safe arithmetic, wrapped to the result dtype; two i32
 *      constants whose exact result does not fit i32 give i64 (weak ints);
 *   2. otherwise pick the dtype: gen_promote for two run-time operands,
 *      gen_weak_promote when one is a constant (literals are weak);
 *   3. broadcast the shapes NumPy-style (gen_broadcast_shapes);
 *   4. make both operands exactly that type (gen_coerce: OP_CONST for
 *      constants, OP_CAST, OP_SPLAT, OP_EXPAND_DIMS, OP_BROADCAST), so every
 *      element-wise op gets operands of identical type, then emit the op.
 * Pointer arithmetic becomes OP_PTR_ADD with an integer offset of the same
 * shape.  Statements, control flow and kernels are in stmt.c; built-in
 * functions in builtins.c. */
#include "gen.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Statement-level entry points live in stmt.c. */
Val gen_call_fn(Gen *g, const Decl *fn, const Node *call);
Var *gen_lookup_var(Gen *g, const char *name);
Global *gen_find_global(Gen *g, const char *name);
Val gen_global_value(Gen *g, Global *gl, Loc loc);

/* ---- small helpers ---- */
Val val_err(void) { return (Val){.k = V_ERR}; }
Val val_rt(Gen *g, ValueId v) { return (Val){.k = V_RT, .v = v, .t = tir_vtype(g->f, v)}; }
Val val_ct_int(int64_t i, DType dt) { return (Val){.k = V_CT, .dt = dt, .i = i}; }
Val val_ct_float(double f, DType dt) { return (Val){.k = V_CT, .dt = dt, .f = f}; }

DType val_dtype(Val v) { return v.k == V_CT ? v.dt : v.k == V_RT ? v.t->dt : DT_VOID; }
int val_rank(Val v) { return v.k == V_RT ? v.t->rank : 0; }
const int32_t *val_shape(Val v) {
    static const int32_t none[TIR_MAX_RANK];
    return v.k == V_RT ? v.t->shape : none;
}

const char *gen_type_name(Gen *g, const Type *t) {
    if (t->dt == DT_PTR) return arena_printf(g->a, "ptr<%s>", gen_type_name(g, t->pointee));
    return dtype_name(t->dt);
}

/* A tensor descriptor (make_tensor_descriptor): a tuple whose first element is its block shape, a list, then the
 * base, the shape and the strides.  Known by its mark, not its shape: a tuple of the same elements that a program
 * builds itself (`([16], p, n, s)`, or one `+` concatenates) is a tuple. */
bool gen_is_desc(Val v) { return v.k == V_TUPLE && v.record == REC_DESC; }
/* A block pointer (make_block_ptr): the same with its offsets after the strides. */
bool gen_is_block_ptr(Val v) { return v.k == V_TUPLE && v.record == REC_BLOCK_PTR; }

bool gen_is_record(Val v) { return gen_is_desc(v) || gen_is_block_ptr(v); }

const char *gen_val_type_name(Gen *g, Val v) {
    if (gen_is_desc(v)) return arena_printf(g->a, "tensor descriptor of block %s", gen_shape_str(g, v.elems[0].rank, v.elems[0].shape));
    if (gen_is_block_ptr(v)) return arena_printf(g->a, "block pointer of block %s", gen_shape_str(g, v.elems[0].rank, v.elems[0].shape));
    switch (v.k) {
    case V_CT: return dtype_name(v.dt);
    case V_RT: return gen_type_name(g, v.t);
    case V_DTYPE: return "type";
    case V_SHAPE: return "list";
    case V_NONE: return "None";
    case V_TUPLE:
        for (int i = 0; i < v.nelems; i++)
            if (gen_is_record(v.elems[i])) { /* name them: two such tuples may differ in a block shape only */
                Str s = {0};
                for (int j = 0; j < v.nelems; j++) str_printf(&s, "%s%s", j ? ", " : "tuple (", gen_val_type_name(g, v.elems[j]));
                str_putc(&s, ')');
                char *r = arena_strdup(g->a, s.buf);
                str_free(&s);
                return r;
            }
        return arena_printf(g->a, "tuple of %d values", v.nelems);
    case V_STR: return "string";
    case V_FN: return arena_printf(g->a, "function '%s'", v.fn->name);
    default: return "void";
    }
}

const char *gen_a(Gen *g, const char *name, bool quoted) {
    return arena_printf(g->a, quoted ? "%s '%s'" : "%s %s", str_article(name), name);
}

const char *gen_shape_str(Gen *g, int rank, const int32_t *shape) {
    Str s = {0};
    str_putc(&s, '[');
    for (int i = 0; i < rank; i++) str_printf(&s, "%s%d", i ? ", " : "", shape[i]);
    str_putc(&s, ']');
    char *r = arena_strdup(g->a, s.buf);
    str_free(&s);
    return r;
}

/* A V_VOID from a call carries the callee's name (gen_call): "'store' returns no value", and for a fn a note at it,
 * since the fix is there (a missing `return VALUE;`). */
void gen_error_no_value(Gen *g, Val v, Loc loc) {
    if (!v.s) {
        diag_error(g->d, loc, "expression has no value");
        return;
    }
    Global *gl = gen_find_global(g, v.s);
    bool fn = gl && gl->decl->kind == D_FN;
    diag_error(g->d, loc, "'%s' returns no value%s", v.s, fn ? " (a 'fn' gives one with 'return VALUE;')" : "");
    if (fn) diag_note(g->d, gl->decl->loc, "'%s' is defined here", v.s);
}

bool val_is_value(Gen *g, Val v, Loc loc) {
    switch (v.k) {
    case V_CT:
    case V_RT: return true;
    case V_ERR: return false;
    case V_DTYPE: diag_error(g->d, loc, "a type cannot be used as a value"); return false;
    case V_SHAPE: diag_error(g->d, loc, "a list cannot be used as a value"); return false;
    case V_NONE: diag_error(g->d, loc, "'None' cannot be used as a value"); return false;
    case V_STR:
        diag_error(g->d, loc, "a string (\"%s\") is not a value: strings are compile-time constants, compared with == and != "
                   "(if ACT == \"relu\") or given as a keyword's value (sem=\"relaxed\")", v.s);
        return false;
    case V_VOID: gen_error_no_value(g, v, loc); return false;
    case V_FN:
        diag_error(g->d, loc, "function '%s' cannot be used as a value: a fn parameter holding it may be called, or passed to a "
                   "fn or as a built-in's combine_fn", v.fn->name);
        return false;
    case V_TUPLE:
        if (gen_is_desc(v))
            diag_error(g->d, loc, "a tensor descriptor cannot be used as a value: load or store through it (load_tensor_descriptor(d, "
                                  "offsets), store_tensor_descriptor(d, offsets, value))");
        else if (gen_is_block_ptr(v))
            diag_error(g->d, loc, "a block pointer cannot be used as a value: load or store through it (load(bp, boundary_check=(0, 1)), "
                                  "store(bp, value)) or move it (advance(bp, offsets))");
        else if (v.nelems == 1) diag_error(g->d, loc, "a tuple of 1 value cannot be used as a value; unpack it: let (a,) = ...");
        else diag_error(g->d, loc, "a tuple of %d values cannot be used as a value; unpack it: let (a, b) = ...", v.nelems);
        return false;
    }
    return false;
}

bool val_is_tuple_element(Gen *g, Val v, Loc loc) {
    return v.k == V_TUPLE || v.k == V_NONE || v.k == V_DTYPE || v.k == V_STR || val_is_value(g, v, loc);
}

bool val_ct_int_of(Gen *g, Val v, Loc loc, const char *what, int64_t *out) {
    if (v.k == V_ERR) return false;
    if (v.k != V_CT || !dtype_is_int(v.dt)) {
        if (v.k == V_CT) diag_error(g->d, loc, "%s must be an integer, got '%s'", what, dtype_name(v.dt));
        else if (v.k == V_STR) /* a bare -D value that is no number is a string: -D B=banana */
            diag_error(g->d, loc, "%s must be an integer, got the string \"%s\"", what, v.s);
        else if (v.k == V_RT) diag_error(g->d, loc, "%s must be a compile-time integer", what);
        else if (v.k == V_DTYPE) diag_error(g->d, loc, "%s must be a compile-time integer, got the type '%s'", what, gen_type_name(g, v.t));
        else diag_error(g->d, loc, "%s must be a compile-time integer, got %s%s", what,
                        v.k == V_TUPLE && !gen_is_record(v) ? "a " : v.k == V_SHAPE ? "a " : "", gen_val_type_name(g, v));
        return false;
    }
    *out = v.i;
    return true;
}

/* What a named type resolves to: the type value of the compile-time constant of that name in scope
 * (a const parameter, a file-level const, a -D define); NULL after an error. */
static const Type *named_type(Gen *g, TypeRef r) {
    Var *var = gen_lookup_var(g, r.name);
    Global *gl = var ? NULL : gen_find_global(g, r.name);
    Val v;
    if (var) v = var->val;
    else if (gl && gl->decl->kind == D_CONST) v = gen_global_value(g, gl, r.loc);
    else {
        if (gl) diag_error(g->d, r.loc, "'%s' is a function, not a type", r.name);
        else if (!strcmp(r.name, "str"))
            diag_error(g->d, r.loc, "unknown type 'str': a string is a compile-time value, held by an untyped const ('const NAME = \"relu\"')");
        else {
            const char *near = gen_did_you_mean(g, r.name, false);
            if (*near) diag_error(g->d, r.loc, "unknown type '%s'%s", r.name, near);
            else diag_error(g->d, r.loc, "unknown type '%s' (a named type is a compile-time constant whose value is a type: 'const %s = f16;')",
                            r.name, r.name);
        }
        return NULL;
    }
    if (v.k == V_DTYPE) return v.t;
    if (v.k == V_ERR) return NULL;
    const char *what = v.k == V_CT ? arena_printf(g->a, "a compile-time %s", dtype_name(v.dt))
                       : v.k == V_RT ? "a run-time value" : v.k == V_SHAPE ? "a shape" : v.k == V_TUPLE ? "a tuple"
                       : v.k == V_STR ? arena_printf(g->a, "the string \"%s\"", v.s) : "not a value";
    diag_error(g->d, r.loc, "'%s' is used as a type, but it is %s", r.name, what);
    return NULL;
}

/* What a type written as a call (dtype_of(x)) gives; NULL after an error. */
static const Type *call_type(Gen *g, TypeRef r) {
    Val v = gen_expr(g, r.call);
    if (v.k == V_DTYPE) return v.t;
    if (v.k != V_ERR) diag_error(g->d, r.loc, "this call is used as a type, but it gives %s", gen_val_type_name(g, v));
    return NULL;
}

const Type *gen_type_ref_or_null(Gen *g, TypeRef r) {
    const Type *named = r.call ? call_type(g, r) : r.name ? named_type(g, r) : NULL;
    if ((r.call || r.name) && !named) return NULL;
    const Type *t = named ? named : tir_scalar(g->m, r.dt == DT_VOID ? DT_F32 : r.dt);
    for (int i = 0; i < r.nptr; i++) t = tir_ptr(g->m, t);
    return t;
}

const Type *gen_type_ref(Gen *g, TypeRef r) {
    const Type *t = gen_type_ref_or_null(g, r);
    if (t) return t;
    t = tir_scalar(g->m, DT_F32);
    for (int i = 0; i < r.nptr; i++) t = tir_ptr(g->m, t);
    return t;
}

bool gen_check_shape(Gen *g, int rank, const int32_t *shape, Loc loc) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (shape[i] <= 0 || (shape[i] & (shape[i] - 1))) {
            diag_error(g->d, loc, "block dimension %d is not a power of two", shape[i]);
            return false;
        }
        n *= shape[i];
        if (n > GEN_MAX_NUMEL) {
            diag_error(g->d, loc, "tensor of shape %s has more than %d elements", gen_shape_str(g, rank, shape), GEN_MAX_NUMEL);
            return false;
        }
    }
    return true;
}

/* ---- emission ---- */
Inst *gen_emit_inst(Gen *g, Loc loc, Op op, const ValueId *ops, int nops, const Type *t) {
    if (g->f->nvalues > GEN_MAX_VALUES && !g->too_big) {
        g->too_big = true;
        diag_error(g->d, loc, "kernel too large after inlining: %u ops (at most %d)", g->f->nvalues, GEN_MAX_VALUES);
    }
    g->b.loc = loc;
    return tir_emit(&g->b, op, ops, nops, t);
}

ValueId gen_emit(Gen *g, Loc loc, Op op, const ValueId *ops, int nops, const Type *t) {
    return gen_emit_inst(g, loc, op, ops, nops, t)->res[0];
}

/* ---- compile-time arithmetic ---- */

static double ct_to_double(Val c) {
    if (dtype_is_float(c.dt)) return c.f;
    if (!dtype_is_signed(c.dt) && dtype_bits(c.dt) == 64) return (double)(uint64_t)c.i;
    return (double)c.i;
}

/* c as a double from which dtype_round_float to dt rounds once: a 64-bit integer beyond f64's 53 bits that
 * goes to a narrower float is rounded to odd (the dropped bits kept as the lowest kept bit), since
 * rounding it to nearest even first could make a false tie (2^60 + 2^36 + 1 as f32 was 2^60). */
double gen_ct_to_double_for(Val c, DType dt) {
    if (dtype_is_float(c.dt) || dt == DT_F64 || dtype_bits(c.dt) < 64) return ct_to_double(c);
    bool neg = dtype_is_signed(c.dt) && c.i < 0;
    uint64_t u = neg ? 0 - (uint64_t)c.i : (uint64_t)c.i;
    int bits = 0;
    for (uint64_t t = u; t; t >>= 1) bits++;
    if (bits > 53) {
        uint64_t low = (uint64_t)1 << (bits - 53), mask = low - 1;
        u = (u & ~mask) | ((u & mask) ? low : 0);
    }
    return neg ? -(double)u : (double)u;
}

/* c cast to the type `to`: a float rounds to nearest even in to's format (support/dtype.h; f8 saturates, as its
 * casts do), so a value takes its declared type this way: `const T: f16 = 0.1` is f16's 0.0999755859375.  A
 * compile-time float keeps its double until a cast or ct_const gives it a type, so an f32-typed literal used with
 * f64 values is the literal itself. */
Val gen_ct_cast(Val c, DType to) {
    if (dtype_is_float(to)) return val_ct_float(dtype_round_float(gen_ct_to_double_for(c, to), to), to);
    if (to == DT_I1) return val_ct_int(dtype_is_float(c.dt) ? c.f != 0 : c.i != 0, DT_I1);
    int64_t i = dtype_is_float(c.dt) ? dtype_float_to_int(c.f, to) : c.i;
    return val_ct_int(dtype_wrap_int(i, to), to);
}

/* ---- promotion and broadcasting ---- */
DType gen_promote(DType a, DType b) {
    if (a == b) return a;
    if (a == DT_I1) return b;
    if (b == DT_I1) return a;
    bool fa = dtype_is_float(a), fb = dtype_is_float(b);
    if (fa && fb) {
        if (dtype_bits(a) == dtype_bits(b)) return DT_F32; /* f16 with bf16 */
        return dtype_bits(a) > dtype_bits(b) ? a : b;
    }
    if (fa) return a;
    if (fb) return b;
    if (dtype_bits(a) != dtype_bits(b)) return dtype_bits(a) > dtype_bits(b) ? a : b;
    return dtype_is_signed(a) ? b : a;
}

DType gen_weak_promote(DType rt, DType ct) {
    if (dtype_is_float(rt)) return rt;
    if (dtype_is_float(ct)) return DT_F32;
    if (rt == DT_I1 && ct != DT_I1) return ct;
    return rt;
}

bool gen_is_strong(Val v) { return v.k == V_RT || (v.k == V_CT && v.held); }

Val gen_hold(Val v) {
    if (v.k != V_CT || v.held) return v;
    v.held = true;
    /* Triton's to_tensor: an integer past i32 is a u32 up to 2^32 - 1 (i64 beyond, u64 past i64); a float is an
     * f32 (rounded to it) when it is 0, an infinity, a NaN or in f32's normal range, an f64 otherwise (1e-40, 1e300) */
    if (v.dt == DT_I64 && v.i > INT32_MAX && v.i <= (int64_t)UINT32_MAX) v.dt = DT_U32;
    if (v.dt == DT_F32) {
        double x = fabs(v.f);
        if (x == 0 || isinf(x) || isnan(x) || (x >= FLT_MIN && x <= FLT_MAX)) v.f = dtype_round_float(v.f, DT_F32);
        else v.dt = DT_F64;
    }
    return v;
}

DType gen_promote_vals(Val a, Val b) {
    DType da = val_dtype(a), db = val_dtype(b);
    bool sa = gen_is_strong(a), sb = gen_is_strong(b);
    if (sa == sb) return gen_promote(da, db);
    Val w = sa ? b : a;
    DType ds = sa ? da : db;
    /* a weak constant of a higher kind (a float with an integer, an integer with an i1) takes part with Triton's
     * to_tensor type: x_i32 * 1e300 is an f64, as 1e300 is outside f32's range */
    if ((dtype_is_float(w.dt) && !dtype_is_float(ds)) || (ds == DT_I1 && w.dt != DT_I1)) return gen_promote(ds, gen_hold(w).dt);
    return gen_weak_promote(ds, w.dt);
}

/* Shapes that do not broadcast.  A lower-rank operand that would fit the other's leading dimensions is the usual
 * slip of a row reduction (exp(t - max(t, axis=1)) of a [16, 32] t): NumPy lines shapes up at their last
 * dimension, so the message shows the index that lines it up at the first (x[:, None] makes a [16] a [16, 1]). */
static void broadcast_error(Gen *g, int ra, const int32_t *sa, int rb, const int32_t *sb, Loc loc) {
    const char *a = gen_shape_str(g, ra, sa), *b = gen_shape_str(g, rb, sb);
    int rl = ra < rb ? ra : rb, rh = ra < rb ? rb : ra;
    const int32_t *sl = ra < rb ? sa : sb, *sh = ra < rb ? sb : sa;
    bool leading = rl > 0 && rl < rh;
    for (int i = 0; leading && i < rl; i++) leading = sl[i] == sh[i] || sl[i] == 1;
    if (!leading) {
        diag_error(g->d, loc, "shapes %s and %s do not broadcast", a, b);
        return;
    }
    Str idx = {0}, to = {0};
    for (int i = 0; i < rh; i++) {
        str_printf(&idx, "%s%s", i ? ", " : "", i < rl ? ":" : "None");
        str_printf(&to, "%s%d", i ? ", " : "", i < rl ? sl[i] : 1);
    }
    diag_error(g->d, loc, "shapes %s and %s do not broadcast (shapes line up at their last dimension, as in NumPy; "
               "x[%s] makes the %s a [%s])", a, b, idx.buf, ra < rb ? a : b, to.buf);
    str_free(&idx);
    str_free(&to);
}

/* The result may be written over either operand's shape (callers fold many operands into one s: where(c, x, y),
 * maximum, map_elementwise), so the operands are copied first: a shorter shape read from s after s[0] was
 * written lost its first size (where(mask_64, t_16x64, 0) was "shapes [16] and [16, 64] do not broadcast"). */
bool gen_broadcast_shapes(Gen *g, int ra, const int32_t *sa_in, int rb, const int32_t *sb_in, int *r, int32_t *s, Loc loc) {
    int32_t sa[TIR_MAX_RANK], sb[TIR_MAX_RANK];
    if (ra > TIR_MAX_RANK || rb > TIR_MAX_RANK) unreachable("a shape of more than TIR_MAX_RANK dims");
    memcpy(sa, sa_in, sizeof(int32_t) * (size_t)ra);
    memcpy(sb, sb_in, sizeof(int32_t) * (size_t)rb);
    int n = ra > rb ? ra : rb;
    int64_t numel = 1;
    for (int i = 0; i < n; i++) {
        int ia = ra - n + i, ib = rb - n + i;
        int32_t x = ia >= 0 ? sa[ia] : 1, y = ib >= 0 ? sb[ib] : 1;
        if (x != y && x != 1 && y != 1) {
            broadcast_error(g, ra, sa, rb, sb, loc);
            return false;
        }
        s[i] = x == 1 ? y : x;
        numel *= s[i];
    }
    if (numel > GEN_MAX_NUMEL) {
        diag_error(g->d, loc, "tensor of shape %s has more than %d elements", gen_shape_str(g, n, s), GEN_MAX_NUMEL);
        return false;
    }
    *r = n;
    return true;
}

/* ---- operators ---- */
typedef enum BinKind { BK_ARITH, BK_BIT, BK_LOGIC, BK_CMP } BinKind;

/* X(token, IR op, kind, compare predicate, verb for "cannot VERB 'a' and 'b'") */
#define LANG_BINOPS(X)                                                                        \
    X(PLUS, ADD, ARITH, 0, "add") X(MINUS, SUB, ARITH, 0, "subtract")                         \
    X(STAR, MUL, ARITH, 0, "multiply") X(SLASH, DIV, ARITH, 0, "divide")                      \
    X(PERCENT, REM, ARITH, 0, "take the remainder of")                                        \
    X(AMP, AND, BIT, 0, "and") X(PIPE, OR, BIT, 0, "or") X(CARET, XOR, BIT, 0, "xor")         \
    X(SHL, SHL, BIT, 0, "shift") X(SHR, SHR, BIT, 0, "shift")                                 \
    X(ANDAND, AND, LOGIC, 0, "and") X(OROR, OR, LOGIC, 0, "or")                               \
    X(EQEQ, CMP, CMP, CMP_EQ, "compare") X(NE, CMP, CMP, CMP_NE, "compare")                   \
    X(LT, CMP, CMP, CMP_LT, "compare") X(LE, CMP, CMP, CMP_LE, "compare")                     \
    X(GT, CMP, CMP, CMP_GT, "compare") X(GE, CMP, CMP, CMP_GE, "compare")

typedef struct BinOp {
    TokKind tok;
    Op op;
    BinKind kind;
    int pred;
    const char *verb;
} BinOp;

static const BinOp binops[] = {
#define X(t, o, k, p, v) {TK_##t, OP_##o, BK_##k, p, v},
    LANG_BINOPS(X)
#undef X
};

static const BinOp *binop_info(TokKind t) {
    for (size_t i = 0; i < ARRAY_LEN(binops); i++)
        if (binops[i].tok == t) return &binops[i];
    unreachable("not a binary operator");
}

static bool fits_i32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

/* A weak compile-time number (a literal, a const, a folded expression of them: not a value a variable holds) becomes
 * its Python truth value, an i1 constant (non-zero is true; a NaN too, as Python's bool(nan)).  False for anything else. */
static bool ct_truth(Val *v) {
    if (v->k != V_CT || v->held || v->dt == DT_I1 || !(dtype_is_int(v->dt) || dtype_is_float(v->dt))) return false;
    *v = val_ct_int(dtype_is_float(v->dt) ? v->f != 0.0 : v->i != 0, DT_I1);
    return true;
}

static Val fold_binop(Gen *g, const BinOp *bo, Val a, Val b, Loc loc) {
    if (bo->kind == BK_LOGIC)
        return val_ct_int(bo->tok == TK_ANDAND ? (a.i && b.i) : (a.i || b.i), DT_I1);
    DType dt = gen_promote(a.dt, b.dt);
    if (dtype_is_float(dt)) {
        /* where the result is rounded (below), the operands are first values of its type, as at run time: a
         * typed i64 2e9 minus an f16 inf is an f16 inf - inf, NaN */
        bool rnd = dtype_bits(dt) < 32 || (dt == DT_F32 && (a.held || b.held));
        double x = rnd ? dtype_round_float(gen_ct_to_double_for(a, dt), dt) : ct_to_double(a);
        double y = rnd ? dtype_round_float(gen_ct_to_double_for(b, dt), dt) : ct_to_double(b), r = 0;
        switch (bo->tok) {
        case TK_PLUS: r = x + y; break;
        case TK_MINUS: r = x - y; break;
        case TK_STAR: r = x * y; break;
        case TK_SLASH: r = x / y; break;
        case TK_PERCENT: /* Python's for two constants (the sign of the divisor), C's fmod for a variable's */
            r = fmod(x, y);
            if (!a.held && !b.held && r != 0 && (r < 0) != (y < 0)) r += y;
            else if (!a.held && !b.held && r == 0) r = copysign(0.0, y);
            break;
        case TK_EQEQ: return val_ct_int(x == y, DT_I1);
        case TK_NE: return val_ct_int(x != y, DT_I1);
        case TK_LT: return val_ct_int(x < y, DT_I1);
        case TK_LE: return val_ct_int(x <= y, DT_I1);
        case TK_GT: return val_ct_int(x > y, DT_I1);
        case TK_GE: return val_ct_int(x >= y, DT_I1);
        default: unreachable("float fold");
        }
        /* the host's invalid operation gives a negative NaN (x86's default); a GPU's is positive, and so is a
         * folded one (sort puts it last, signbit(0.0 / 0.0) is false, as at run time) */
        if (isnan(r)) r = NAN;
        /* exact in 64 bits where the type is f32 or f64 (literals' own: `x_f64 * (1.0 / 3.0)` keeps f64's third),
         * rounded to a narrower declared type as the same arithmetic at run time (f16 1000 * 1000 is inf) */
        if (rnd) r = dtype_round_float(r, dt); /* a held f32 is one */
        return val_ct_float(r, dt);
    }
    int64_t x = dtype_wrap_int(a.i, dt), y = dtype_wrap_int(b.i, dt), r = 0;
    uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
    /* a held constant is a typed scalar: Triton computes with it at run time, in its type, and wraps */
    bool held = a.held || b.held;
    bool sgn = dtype_is_signed(dt), lift = a.dt == DT_I32 && b.dt == DT_I32 && !held, over = false;
    int bits = dtype_bits(dt);
    switch (bo->tok) {
    case TK_PLUS: over = __builtin_add_overflow(x, y, &r); break;
    case TK_MINUS: over = __builtin_sub_overflow(x, y, &r); break;
    case TK_STAR: over = __builtin_mul_overflow(x, y, &r); break;
    case TK_SLASH:
    case TK_PERCENT:
        if (y == 0) {
            diag_error(g->d, loc, "division by zero in a constant expression");
            return val_err();
        }
        if (!sgn) r = (int64_t)(bo->tok == TK_SLASH ? ux / uy : ux % uy);
        else if (x == INT64_MIN && y == -1) r = bo->tok == TK_SLASH ? x : 0, over = bo->tok == TK_SLASH;
        else {
            /* Triton folds two constexprs with Python's // and %, which floor (-7 // 2 == -4, -7 % 2 == 1); a variable
             * is a run-time scalar there, whose sdiv and srem truncate toward zero as C's */
            int64_t q = x / y, m = x % y;
            if (!a.held && !b.held && m != 0 && (m < 0) != (y < 0)) q -= 1, m += y;
            r = bo->tok == TK_SLASH ? q : m;
        }
        break;
    case TK_AMP: r = (int64_t)(ux & uy); break;
    case TK_PIPE: r = (int64_t)(ux | uy); break;
    case TK_CARET: r = (int64_t)(ux ^ uy); break;
    case TK_SHL:
    case TK_SHR: {
        int64_t amount = dtype_wrap_int(b.i, b.dt);
        if (!dtype_is_signed(b.dt) && dtype_bits(b.dt) == 64 && amount < 0) amount = 64;
        int lim = lift ? 64 : bits;
        if (amount < 0 || amount >= lim) {
            diag_error(g->d, loc, "shift amount %lld is out of range for '%s'", (long long)amount, dtype_name(dt));
            return val_err();
        }
        if (bo->tok == TK_SHL) {
            r = (int64_t)(ux << amount);
            if (lift && (r >> amount) != x) { /* 1 << 63, 3 << 62: past i64 (they wrapped to the i32 0) */
                /* Triton's Python ints take 1 << 63 (a radix sort's sign-bit mask of 64-bit keys, given to
                 * tl.full(..., dtype=tl.uint64)): say how to write that bit pattern here */
                diag_error(g->d, loc, "integer overflow in a constant expression: %lld << %lld does not fit in i64 (for "
                           "the u64 bit pattern write (%lld as u64) << %lld)", (long long)x, (long long)amount,
                           (long long)x, (long long)amount);
                return val_err();
            }
        } else {
            /* arithmetic when the left operand is signed, as Triton's >> picks by it (before promotion): a typed
             * i8 -56 >> a u8 7 is the u8 255 */
            bool ashr = sgn || (a.held && dtype_is_signed(a.dt) && a.dt != DT_I1);
            int64_t xs = ashr && !sgn ? dtype_wrap_int(x, dtype_is_int(dt) && bits < 64 ? (bits == 8 ? DT_I8 : bits == 16 ? DT_I16 : DT_I32) : DT_I64) : x;
            uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
            r = ashr ? (xs < 0 ? (int64_t)((~(~(uint64_t)xs >> amount)) & (sgn ? ~0ull : mask)) : (int64_t)((uint64_t)xs >> amount))
                     : (int64_t)(ux >> amount);
        }
        break;
    }
    case TK_EQEQ: return val_ct_int(x == y, DT_I1);
    case TK_NE: return val_ct_int(x != y, DT_I1);
    case TK_LT: return val_ct_int(sgn ? x < y : ux < uy, DT_I1);
    case TK_LE: return val_ct_int(sgn ? x <= y : ux <= uy, DT_I1);
    case TK_GT: return val_ct_int(sgn ? x > y : ux > uy, DT_I1);
    case TK_GE: return val_ct_int(sgn ? x >= y : ux >= uy, DT_I1);
    default: unreachable("int fold");
    }
    /* weak constants are numbers, as Triton's constexprs are Python's ints: an i32 result past i32 is an i64 (an
     * INT32_MIN / -1 too); a signed 64-bit one past i64 is an error (9223372036854775807 + 1 and
     * -9223372036854775808 / -1 wrapped to INT64_MIN, a constant the kernel then used); unsigned arithmetic
     * wraps, as u64 hashes want, and so do held constants' + - * in their type (let a = 2000000000; a + a is the
     * i32 -294967296, as Triton computes it at run time) */
    if (over && dt == DT_I64 && (!held || bo->tok == TK_SLASH)) {
        diag_error(g->d, loc, "integer overflow in a constant expression: %lld %s %lld does not fit in i64", (long long)x,
                   lang_tok_spelling[bo->tok], (long long)y);
        return val_err();
    }
    if (over) lift = false;
    if (bo->kind == BK_ARITH && (bo->tok == TK_PLUS || bo->tok == TK_MINUS || bo->tok == TK_STAR))
        r = (int64_t)(bo->tok == TK_PLUS ? ux + uy : bo->tok == TK_MINUS ? ux - uy : ux * uy);
    if (dt == DT_I32 && lift && !fits_i32(r) &&
        (bo->tok == TK_PLUS || bo->tok == TK_MINUS || bo->tok == TK_STAR || bo->tok == TK_SHL || bo->tok == TK_SLASH))
        return val_ct_int(r, DT_I64);
    Val v = val_ct_int(dtype_wrap_int(r, dt), dt);
    v.trunc_quotient = bo->tok == TK_SLASH && (sgn ? (y != -1 && x % y != 0) : ux % uy != 0);
    return v;
}

/* Triton's `/` on integers divides as floats (int / int is an f32); tile's truncates.  A truncated quotient
 * that meets a float right away (`acc += -1 / n`, `x * (1 / HEAD_DIM)`) is most likely a ported `/` that
 * meant the fraction: warned at the division, with both spellings.  An explicit cast says what is meant
 * and is not warned about. */
void gen_warn_int_quotient(Gen *g, Val q, DType to, Loc loc) {
    if (!dtype_is_float(to) || dtype_is_float(val_dtype(q))) return;
    if (q.k == V_RT) {
        Inst *d = tir_val(g->f, q.v)->def;
        while (d && d->op == OP_NEG && d->nops == 1) d = tir_val(g->f, d->ops[0])->def; /* -(1 / n) * r: Liger's rms_norm */
        if (!d || d->op != OP_DIV) return;
        loc = d->loc;
    } else if (q.k != V_CT || !q.trunc_quotient) {
        return;
    }
    if (q.k == V_CT)
        diag_warning(g->d, loc,
                     "an integer division truncated this operand to %lld, and it is used as '%s' (Triton's '/' on integers "
                     "divides as floats): write 'a as f32 / b' for the fraction, or '(a / b) as f32' to keep the truncation",
                     (long long)q.i, dtype_name(to));
    else
        diag_warning(g->d, loc,
                     "integer division truncates, and its quotient is then used as '%s' (Triton's '/' on integers divides as "
                     "floats): write 'a as f32 / b' for the fraction, or '(a / b) as f32' to keep the truncation",
                     dtype_name(to));
}

/* gemlite's `(pid_k * (BLOCK_SIZE_K / group_size)).to(tl.int32)`: Triton's `/` of two constexprs is Python's, a
 * fraction (0.25) that the cast truncates after the product; here a constant quotient that dropped its remainder and
 * is 0 makes the product 0 whatever the run-time operand, which is never what such a port meant: warned at the '*'. */
static void warn_zero_quotient(Gen *g, Val q, Loc loc) {
    if (q.k != V_CT || !q.trunc_quotient || q.i != 0) return;
    diag_warning(g->d, loc,
                 "an integer division of constants made this operand 0, so the product is 0 (Triton's '/' divides as floats: "
                 "a fraction there): write '(x * a) / b' for the product's quotient, or '(x as f32 * (a as f32 / b)) as i32' "
                 "for Triton's");
}

/* The same quotient met by a run-time integer in other arithmetic (`pid * (BK / G)` with BK / G 1.5): Triton's `/` of two
 * constexprs is the fraction, which makes the result a float there.  Where that result goes on into integer-only code
 * (an offset, a `%`, a shape) Triton's source must have had `//`, which this is; where the port casts it to an integer
 * (Triton's `.to(tl.int32)` after the arithmetic) the values differ: remembered here, warned at such a cast (N_CAST). */
static void note_const_quotient(Gen *g, Val q, Val other, TokKind op, Loc loc) {
    if (q.k != V_CT || q.held || !q.trunc_quotient || other.k != V_RT || (op == TK_STAR && q.i == 0)) return;
    g->quot_rt.n++;
    g->quot_rt.at = loc;
    g->quot_rt.op = op;
    g->quot_rt.q = q.i;
}

/* Offsets added to pointers: i32 and i64 stay, narrower ints become i32,
 * unsigned 32/64-bit ones i64 (so they are not sign-extended). */
static DType offset_dtype(Val v) {
    if (v.k == V_CT) return fits_i32(v.i) ? DT_I32 : DT_I64;
    DType d = v.t->dt;
    if (d == DT_I32 || d == DT_I64) return d;
    return dtype_bits(d) < 32 ? DT_I32 : DT_I64;
}

static Val ptr_binop(Gen *g, const BinOp *bo, Val a, Val b, Loc loc) {
    DType da = val_dtype(a), db = val_dtype(b);
    if (bo->kind == BK_CMP && da == DT_PTR && db == DT_PTR && a.t->pointee == b.t->pointee) {
        int r;
        int32_t s[TIR_MAX_RANK];
        if (!gen_broadcast_shapes(g, a.t->rank, a.t->shape, b.t->rank, b.t->shape, &r, s, loc)) return val_err();
        ValueId x = gen_coerce(g, a, DT_PTR, NULL, r, s, loc), y = gen_coerce(g, b, DT_PTR, NULL, r, s, loc);
        Inst *i = gen_emit_inst(g, loc, OP_CMP, (ValueId[]){x, y}, 2, tir_type(g->m, DT_I1, r, s, NULL, NULL));
        i->a.ival2 = bo->pred;
        return val_rt(g, i->res[0]);
    }
    bool add = bo->tok == TK_PLUS && ((da == DT_PTR && dtype_is_int(db)) || (db == DT_PTR && dtype_is_int(da)));
    bool sub = bo->tok == TK_MINUS && da == DT_PTR && dtype_is_int(db);
    if (!add && !sub) {
        if (bo->kind == BK_ARITH)
            diag_error(g->d, loc, "cannot %s '%s' and '%s'", bo->verb, gen_val_type_name(g, a), gen_val_type_name(g, b));
        else if (bo->kind == BK_CMP)
            diag_error(g->d, loc, "cannot compare '%s' and '%s'", gen_val_type_name(g, a), gen_val_type_name(g, b));
        else
            diag_error(g->d, loc, "operands of '%s' must be integers, got '%s'", lang_tok_spelling[bo->tok],
                       gen_val_type_name(g, da == DT_PTR ? a : b));
        return val_err();
    }
    Val p = da == DT_PTR ? a : b, o = da == DT_PTR ? b : a;
    DType odt = offset_dtype(o);
    if (sub && o.k == V_CT) {
        o = val_ct_int((int64_t)(0 - (uint64_t)o.i), DT_I64);
        odt = offset_dtype(o);
    }
    int r;
    int32_t s[TIR_MAX_RANK];
    if (!gen_broadcast_shapes(g, p.t->rank, p.t->shape, val_rank(o), val_shape(o), &r, s, loc)) return val_err();
    ValueId pv = gen_coerce(g, p, DT_PTR, NULL, r, s, loc);
    ValueId ov = gen_coerce(g, o, odt, NULL, r, s, loc);
    if (sub && o.k == V_RT) ov = gen_emit(g, loc, OP_NEG, &ov, 1, tir_vtype(g->f, ov));
    return val_rt(g, gen_emit(g, loc, OP_PTR_ADD, (ValueId[]){pv, ov}, 2, tir_vtype(g->f, pv)));
}

/* Integer '/', '%' and comparisons refuse what Triton's do (its computation_type_impl and
 * _cast_to_computation_type), where the unsigned reading would give what was rarely meant: an unsigned run-time
 * operand with a negative constant (-4 would divide as 2^32 - 4; x_u32 > -1 would be false for every x), and for
 * '/' and '%' also two run-time operands of different signedness (i1 counts as unsigned) and a run-time i1 with an
 * integer constant (which is an i32 to Triton).  A constant operand otherwise takes the other's type. */
static bool int_signedness_ok(Gen *g, const BinOp *bo, Val a, Val b, Loc loc) {
    const char *ops = lang_tok_spelling[bo->tok];
    DType da = val_dtype(a), db = val_dtype(b);
    bool div = bo->tok == TK_SLASH || bo->tok == TK_PERCENT;
    if (gen_is_strong(a) && gen_is_strong(b)) { /* run-time values and typed scalars */
        if (!div) return true;
        if (dtype_is_signed(da) == dtype_is_signed(db)) return true;
        diag_error(g->d, loc, "'%s' of '%s' and '%s': integers of different signedness%s are refused, as Triton refuses them; "
                   "cast one operand to the other's signedness ('a %s (b as %s)')", ops, dtype_name(da), dtype_name(db),
                   da == DT_I1 || db == DT_I1 ? " (an i1 is unsigned)" : "", ops, dtype_name(da == DT_I1 ? DT_U32 : da));
        return false;
    }
    Val r = gen_is_strong(a) ? a : b, k = gen_is_strong(a) ? b : a;
    DType dr = val_dtype(r);
    if (div && dr == DT_I1 && k.dt != DT_I1) {
        diag_error(g->d, loc, "'%s' of an i1 and the integer constant %lld is refused, as Triton refuses it (the constant is "
                   "signed, the i1 unsigned); cast the i1 first ('(b as i32) %s ...')", ops, (long long)k.i, ops);
        return false;
    }
    if (dr != DT_I1 && !dtype_is_signed(dr) && dtype_is_signed(k.dt) && k.i < 0) {
        diag_error(g->d, loc, "'%s' of an unsigned '%s' and the negative constant %lld is refused, as Triton refuses it (the "
                   "constant would be taken as the %s %llu); cast the '%s' to a signed type first", ops, dtype_name(dr), (long long)k.i,
                   dtype_name(dr), (unsigned long long)((uint64_t)k.i & (dtype_bits(dr) >= 64 ? ~0ull : (1ull << dtype_bits(dr)) - 1)),
                   dtype_name(dr));
        return false;
    }
    return true;
}

/* Python's `**`, which Triton has for constexprs only (a tensor has no power operator): two compile-time
 * numbers, folded as Python does.  Integers to a non-negative integer power give the exact integer (an
 * i32 where it fits and neither operand is 64-bit, else an i64; past i64's range an error); a negative
 * integer exponent or a float operand gives a float, computed in double as Python's and weak as a float
 * literal (f64 where an operand is one).  0 to a negative power and a negative number to a fractional one
 * (Python's ZeroDivisionError and complex result) are errors, and so is a finite float result past f64's range
 * (Python's OverflowError), as is a run-time operand. */
static Val gen_pow(Gen *g, Val a, Val b, Loc loc) {
    if (a.k == V_ERR || b.k == V_ERR) return val_err();
    if (!val_is_value(g, a, loc) || !val_is_value(g, b, loc)) return val_err();
    if (a.k != V_CT || b.k != V_CT) {
        diag_error(g->d, loc, "'**' of a run-time value: as in Triton, '**' is for compile-time numbers (`2 ** BITS`); "
                   "write pow(x, y) (x * x for a square)");
        return val_err();
    }
    bool fa = dtype_is_float(a.dt), fb = dtype_is_float(b.dt);
    if ((a.dt == DT_U64 && a.i < 0) || (b.dt == DT_U64 && b.i < 0)) {
        diag_error(g->d, loc, "'**' of a u64 past i64's range");
        return val_err();
    }
    if (!fa && !fb && b.i >= 0) {
        int64_t r = 1, x = a.i, e = b.i;
        bool over = false;
        if (x == 0 || x == 1 || x == -1) r = x == 0 ? e == 0 : x == 1 || !(e & 1) ? 1 : -1;
        else
            for (int64_t k = 0; k < e && !over; k++) over = __builtin_mul_overflow(r, x, &r); /* |x| >= 2: past i64 within 64 */
        if (over) {
            diag_error(g->d, loc, "'**': %lld ** %lld is past i64's range", (long long)a.i, (long long)b.i);
            return val_err();
        }
        bool wide = a.dt == DT_I64 || b.dt == DT_I64 || a.dt == DT_U64 || b.dt == DT_U64;
        return val_ct_int(r, !wide && fits_i32(r) ? DT_I32 : DT_I64);
    }
    double x = fa ? a.f : (double)a.i, e = fb ? b.f : (double)b.i;
    if (x == 0 && e < 0) {
        diag_error(g->d, loc, "'**': 0 to a negative power (a division by zero)");
        return val_err();
    }
    if (x < 0 && e != floor(e)) {
        diag_error(g->d, loc, "'**': a negative number to a fractional power ((%s) ** %s) is not a real number", arena_double(g->a, x),
                   arena_double(g->a, e));
        return val_err();
    }
    double r = pow(x, e);
    if (isinf(r) && isfinite(x) && isfinite(e)) { /* Python's OverflowError: a constexpr's 2.0 ** 1024 fails in Triton */
        diag_error(g->d, loc, "'**': %s ** %s is past f64's range (an OverflowError in Python)", arena_double(g->a, x), arena_double(g->a, e));
        return val_err();
    }
    return val_ct_float(r, a.dt == DT_F64 || b.dt == DT_F64 ? DT_F64 : DT_F32);
}

Val gen_list_as_tuple(Gen *g, Val v) {
    if (v.k != V_SHAPE) return v;
    Val t = {.k = V_TUPLE, .nelems = v.rank, .elems = ARENA_ARRAY(g->a, Val, v.rank ? v.rank : 1)};
    for (int i = 0; i < v.rank; i++) t.elems[i] = val_ct_int(v.shape[i], DT_I32);
    return t;
}

/* Python's tuple (and list) arithmetic, done at compile time: `a + b` concatenates, `t * k` and `k * t` repeat t k times
 * (k a compile-time integer; k <= 0 gives the empty tuple, as Python's).  A list and a tuple concatenate into a tuple
 * (Triton's x.shape, a list here, is a tuple there: x.shape + (1,)); two lists into a list.  Elements are kept as
 * they are, tensors and nested tuples included. */
static Val seq_binop(Gen *g, TokKind op, Val a, Val b, Loc loc) {
    /* the sequence operand's kind, as messages name it (a list was called a tuple) */
    const char *seq = a.k == V_TUPLE || b.k == V_TUPLE ? "tuple" : "list";
    if (op == TK_PLUS) {
        if (a.k == V_SHAPE && b.k == V_SHAPE) {
            if (a.rank + b.rank > TIR_MAX_RANK) {
                diag_error(g->d, loc, "tensors have at most %d dimensions, got a list of %d", TIR_MAX_RANK, a.rank + b.rank);
                return val_err();
            }
            for (int i = 0; i < b.rank; i++) a.shape[a.rank + i] = b.shape[i];
            a.rank += b.rank;
            return a;
        }
        a = gen_list_as_tuple(g, a);
        b = gen_list_as_tuple(g, b);
        if (a.k != V_TUPLE || b.k != V_TUPLE) {
            bool tuple = *seq == 't';
            diag_error(g->d, loc, "'+' concatenates a %s with a %s, not with '%s' (a one-element %s is written %s)", seq,
                       tuple ? "tuple" : "list or a tuple", gen_val_type_name(g, a.k == V_TUPLE ? b : a), seq, tuple ? "(x,)" : "[x]");
            return val_err();
        }
        Val r = {.k = V_TUPLE, .nelems = a.nelems + b.nelems, .elems = ARENA_ARRAY(g->a, Val, a.nelems + b.nelems + 1)};
        for (int i = 0; i < a.nelems; i++) r.elems[i] = a.elems[i];
        for (int i = 0; i < b.nelems; i++) r.elems[a.nelems + i] = b.elems[i];
        return r;
    }
    /* TK_STAR: the sequence and its count, either way round */
    Val t = a.k == V_TUPLE || a.k == V_SHAPE ? a : b, k = a.k == V_TUPLE || a.k == V_SHAPE ? b : a;
    if (k.k == V_TUPLE || k.k == V_SHAPE) {
        diag_error(g->d, loc, "'*' repeats a %s a compile-time number of times; it does not multiply two %ss", seq, seq);
        return val_err();
    }
    if (k.k == V_RT) {
        diag_error(g->d, loc, "'*' repeats a %s a compile-time number of times, but the count is a run-time value", seq);
        return val_err();
    }
    int64_t n;
    if (!val_ct_int_of(g, k, loc, *seq == 't' ? "the repeat count of a tuple" : "the repeat count of a list", &n)) return val_err();
    if (n < 0) n = 0;
    int len = t.k == V_TUPLE ? t.nelems : t.rank;
    if (len && n > GEN_MAX_TUPLE / len) {
        diag_error(g->d, loc, "repeating a %s of %d %lld times makes more than %d elements", t.k == V_TUPLE ? "tuple" : "list", len,
                   (long long)n, GEN_MAX_TUPLE);
        return val_err();
    }
    if (t.k == V_SHAPE) {
        if (len * n > TIR_MAX_RANK) {
            diag_error(g->d, loc, "tensors have at most %d dimensions, got a list of %lld", TIR_MAX_RANK, (long long)(len * n));
            return val_err();
        }
        Val r = {.k = V_SHAPE, .rank = (int)(len * n)};
        for (int i = 0; i < r.rank; i++) r.shape[i] = t.shape[i % len];
        return r;
    }
    Val r = {.k = V_TUPLE, .nelems = (int)(len * n), .elems = ARENA_ARRAY(g->a, Val, len * n + 1)};
    for (int i = 0; i < r.nelems; i++) r.elems[i] = t.elems[i % len];
    return r;
}

Val gen_binop(Gen *g, TokKind op, Val a, Val b, Loc loc) {
    const BinOp *bo = binop_info(op);
    if (a.k == V_ERR || b.k == V_ERR) return val_err();
    if (gen_is_record(a) || gen_is_record(b)) { /* what a descriptor or block pointer is for: load, store, advance */
        val_is_value(g, gen_is_record(a) ? a : b, loc);
        return val_err();
    }
    if ((op == TK_PLUS || op == TK_STAR) && (a.k == V_TUPLE || b.k == V_TUPLE || a.k == V_SHAPE || b.k == V_SHAPE))
        return seq_binop(g, op, a, b, loc);
    if (a.k == V_DTYPE && b.k == V_DTYPE && (op == TK_EQEQ || op == TK_NE)) /* dtype_of(x) == i64: Triton's x.dtype == tl.int64 */
        return val_ct_int((a.t == b.t) == (op == TK_EQEQ), DT_I1);
    if (!val_is_value(g, a, loc) || !val_is_value(g, b, loc)) return val_err();
    DType da = val_dtype(a), db = val_dtype(b);
    if (dtype_is_storage(da) || dtype_is_storage(db)) {
        diag_error(g->d, loc, "'%s' values can only be loaded, stored and cast", dtype_name(dtype_is_storage(da) ? da : db));
        return val_err();
    }
    if (bo->kind == BK_LOGIC) {
        /* a weak number (a literal, a const: Triton's constexpr) is Python's truth value there, as `HAS_A and
         * HAS_B` of constexprs 1 and 0 is in a Triton kernel */
        if (da != DT_I1 && ct_truth(&a)) da = DT_I1;
        if (db != DT_I1 && ct_truth(&b)) db = DT_I1;
        if (da != DT_I1 || db != DT_I1) {
            diag_error(g->d, loc, "operands of '%s' must be i1, got '%s'", lang_tok_spelling[op],
                       gen_val_type_name(g, da != DT_I1 ? a : b));
            return val_err();
        }
    }
    if (da == DT_PTR || db == DT_PTR) return ptr_binop(g, bo, a, b, loc);
    if (bo->kind == BK_BIT && (dtype_is_float(da) || dtype_is_float(db))) {
        diag_error(g->d, loc, "operands of '%s' must be integers, got '%s'", lang_tok_spelling[op],
                   dtype_name(dtype_is_float(da) ? da : db));
        return val_err();
    }
    bool bitwise = op == TK_AMP || op == TK_PIPE || op == TK_CARET;
    if (a.k == V_CT && b.k == V_CT) {
        if ((a.held || b.held) && (bo->tok == TK_SLASH || bo->tok == TK_PERCENT || bo->kind == BK_CMP) && dtype_is_int(da) &&
            dtype_is_int(db) && !int_signedness_ok(g, bo, a, b, loc))
            return val_err();
        if (a.held != b.held && bo->kind != BK_LOGIC) {
            /* a held constant is a typed scalar (Triton's assignment makes one of a constexpr): the weak one
             * takes its type first, as it would a run-time value's (a held `f16` times 2.5 is an `f16`) */
            Val *w = a.held ? &b : &a;
            DType to = gen_promote_vals(a, b);
            if (to != w->dt || dtype_is_float(to)) { /* a float rounded to the type too: held f32 % 0.1 is by 0.1f */
                if (!gen_check_weak_operand(g, *w, to, bitwise, loc)) return val_err();
                *w = gen_ct_cast(*w, to);
            }
            da = val_dtype(a), db = val_dtype(b);
        }
        if (!a.held && !b.held && (bo->kind == BK_ARITH || op == TK_SHL || op == TK_SHR)) {
            /* Python's arithmetic on bools is on ints: True + True is 2 */
            if (a.dt == DT_I1) a = val_ct_int(a.i, DT_I32), da = DT_I32;
            if (b.dt == DT_I1) b = val_ct_int(b.i, DT_I32), db = DT_I32;
        }
        if (bo->kind == BK_ARITH) {
            DType to = gen_promote(da, db);
            gen_warn_int_quotient(g, a, to, loc);
            gen_warn_int_quotient(g, b, to, loc);
        }
        Val r = fold_binop(g, bo, a, b, loc);
        r.held = r.k == V_CT && (a.held || b.held);
        return r;
    }
    DType dt = gen_promote_vals(a, b);
    if ((bo->tok == TK_SLASH || bo->tok == TK_PERCENT || bo->kind == BK_CMP) && dtype_is_int(da) && dtype_is_int(db) &&
        !int_signedness_ok(g, bo, a, b, loc))
        return val_err();
    if (!gen_check_weak_operand(g, a, dt, bitwise, loc) || !gen_check_weak_operand(g, b, dt, bitwise, loc)) return val_err();
    if (b.k == V_CT && dtype_is_int(dt) && dtype_is_int(b.dt) && b.i == 0 && (bo->tok == TK_SLASH || bo->tok == TK_PERCENT)) {
        diag_error(g->d, loc, "integer %s by zero (the divisor is the constant 0)", bo->tok == TK_SLASH ? "division" : "remainder");
        return val_err();
    }
    if (bo->kind == BK_ARITH) {
        gen_warn_int_quotient(g, a, dt, loc);
        gen_warn_int_quotient(g, b, dt, loc);
    }
    if (op == TK_STAR && dtype_is_int(dt)) {
        warn_zero_quotient(g, a, loc);
        warn_zero_quotient(g, b, loc);
    }
    if (bo->kind == BK_ARITH && dtype_is_int(dt)) {
        note_const_quotient(g, a, b, op, loc);
        note_const_quotient(g, b, a, op, loc);
    }
    int r;
    int32_t s[TIR_MAX_RANK];
    if (!gen_broadcast_shapes(g, val_rank(a), val_shape(a), val_rank(b), val_shape(b), &r, s, loc)) return val_err();
    ValueId x = gen_coerce(g, a, dt, NULL, r, s, loc), y = gen_coerce(g, b, dt, NULL, r, s, loc);
    if (op == TK_SHR && dtype_is_int(dt) && !dtype_is_signed(dt) && dt != DT_I1 && gen_is_strong(a) && dtype_is_signed(da) &&
        da != DT_I1) {
        /* Triton's >> is arithmetic when its left operand is signed, whatever the promoted type: x_i32 >> s_u32
         * shifts the u32 bits of x arithmetically (-16 >> 2 is 0xFFFFFFFC) */
        int bits = dtype_bits(dt);
        DType sd = bits == 8 ? DT_I8 : bits == 16 ? DT_I16 : bits == 32 ? DT_I32 : DT_I64;
        Val sx = gen_cast(g, val_rt(g, x), sd, loc), sy = gen_cast(g, val_rt(g, y), sd, loc);
        ValueId q = gen_emit(g, loc, OP_SHR, (ValueId[]){sx.v, sy.v}, 2, tir_type(g->m, sd, r, s, NULL, NULL));
        return gen_cast(g, val_rt(g, q), dt, loc);
    }
    const Type *t = tir_type(g->m, bo->kind == BK_CMP ? DT_I1 : dt, r, s, NULL, NULL);
    Inst *i = gen_emit_inst(g, loc, bo->op, (ValueId[]){x, y}, 2, t);
    if (bo->kind == BK_CMP) i->a.ival2 = bo->pred;
    return val_rt(g, i->res[0]);
}

static Val gen_unary(Gen *g, const Node *n) {
    /* -9223372036854775808: the literal alone is a u64 (above i64), its negation i64's least value */
    if (n->op == TK_MINUS && n->lhs->kind == N_INT && n->lhs->ty.dt == DT_U64 && n->lhs->ival == INT64_MIN)
        return val_ct_int(INT64_MIN, DT_I64);
    /* -2147483648 is i32's least value (the literal alone is an i64), so a variable holding it is an i32, as Triton's */
    if (n->op == TK_MINUS && n->lhs->kind == N_INT && n->lhs->ty.dt != DT_U64 && n->lhs->ival == -(int64_t)INT32_MIN)
        return val_ct_int(INT32_MIN, DT_I32);
    Val v = gen_expr(g, n->lhs);
    Loc loc = n->oploc;
    /* `!p` of a scalar pointer is true when it is null, as `if p` is true when it is not (Triton's `if not ptr`), and
     * `!None` is true, as Python's `not None` (a pointer parameter specialized None) */
    if (n->op == TK_BANG && v.k == V_NONE) return val_ct_int(1, DT_I1);
    if (n->op == TK_BANG && v.k == V_RT && v.t->rank == 0 && v.t->dt == DT_PTR)
        v = gen_cast(g, gen_convert(g, v, tir_scalar(g->m, DT_I64), false, loc), DT_I1, loc);
    if (!val_is_value(g, v, n->lhs->loc)) return val_err();
    DType dt = val_dtype(v);
    if (dtype_is_storage(dt)) {
        diag_error(g->d, loc, "'%s' values can only be loaded, stored and cast", dtype_name(dt));
        return val_err();
    }
    if (n->op == TK_PLUS) { /* Python's unary plus (Triton's tensor.__pos__): the value itself */
        if (dt == DT_PTR) {
            diag_error(g->d, loc, "operand of unary '+' must be a number, got '%s'", gen_val_type_name(g, v));
            return val_err();
        }
        if (dt == DT_I1 && v.k == V_CT && !v.held) return val_ct_int(v.i, DT_I32); /* Python's +True is the int 1 */
        return v;
    }
    Op op;
    if (n->op == TK_MINUS) {
        if (dt == DT_PTR) {
            diag_error(g->d, loc, "cannot negate '%s'", gen_val_type_name(g, v));
            return val_err();
        }
        if (dt == DT_I1 && v.k == V_CT && !v.held) return val_ct_int(-v.i, DT_I32); /* Python's -True is the int -1 */
        if (dt == DT_I1) return v; /* 0 - b in i1, as Triton computes it: -1 is true, so -b is b */
        if (v.k == V_CT && !v.held && dt == DT_I32 && v.i == INT32_MIN) return val_ct_int(-(int64_t)INT32_MIN, DT_I64); /* as fold_binop lifts */
        if (v.k == V_CT && !v.held && dt == DT_I64 && v.i == INT64_MIN) {
            diag_error(g->d, loc, "integer overflow in a constant expression: -(%lld) does not fit in i64", (long long)v.i);
            return val_err();
        }
        if (v.k == V_CT) {
            Val r = dtype_is_float(dt) ? val_ct_float(-v.f, dt) : val_ct_int(dtype_wrap_int((int64_t)(0 - (uint64_t)v.i), dt), dt);
            r.held = v.held;
            r.trunc_quotient = v.trunc_quotient; /* -(1 / N) * x still meets the float truncated (gen_warn_int_quotient) */
            return r;
        }
        op = OP_NEG;
    } else if (n->op == TK_BANG) {
        if (dt != DT_I1 && ct_truth(&v)) dt = DT_I1; /* Python's `not` of a constexpr number: `not HAS_SEQ_IDX` given 0 or 1 */
        /* `!x` of any other number is `x == 0`, element by element, as `if x` and `a if x else b` take non-zero as true (a
         * NaN too, so `!nan` is false) and C's `!` reads; Triton's `not` of an integer tensor fails to compile (a
         * bitcast to int1 of another width), so a port never meets the difference */
        if (dt != DT_I1 && (dtype_is_int(dt) || dtype_is_float(dt))) return gen_binop(g, TK_EQEQ, v, val_ct_int(0, DT_I32), loc);
        if (dt != DT_I1) {
            diag_error(g->d, loc, "operand of '!' must be a number or a scalar pointer, got '%s'",
                       v.k == V_RT ? gen_type_desc(g, v.t) : gen_val_type_name(g, v));
            return val_err();
        }
        if (v.k == V_CT) return val_ct_int(!v.i, DT_I1);
        op = OP_NOT;
    } else {
        if (!dtype_is_int(dt)) {
            diag_error(g->d, loc, "operand of '~' must be an integer, got '%s'", gen_val_type_name(g, v));
            return val_err();
        }
        if (v.k == V_CT) return val_ct_int(dtype_wrap_int((int64_t) ~(uint64_t)v.i, dt), dt);
        op = OP_NOT;
    }
    return val_rt(g, gen_emit(g, loc, op, &v.v, 1, v.t));
}

/* Insert a size-1 dim at `axis` (a scalar becomes a [1] tensor). */
Val gen_expand_dims(Gen *g, Val v, int axis, Loc loc) {
    if (v.k == V_CT) v = val_rt(g, gen_materialize(g, v, loc));
    const Type *t = v.t;
    if (t->rank >= TIR_MAX_RANK) {
        diag_error(g->d, loc, "tensors have at most %d dimensions", TIR_MAX_RANK);
        return val_err();
    }
    int32_t s[TIR_MAX_RANK];
    for (int i = 0, j = 0; i <= t->rank; i++) s[i] = i == axis ? 1 : t->shape[j++];
    const Type *rt = tir_with_shape(g->m, t, t->rank + 1, s);
    if (t->rank == 0) return val_rt(g, gen_emit(g, loc, OP_SPLAT, &v.v, 1, rt));
    Inst *i = gen_emit_inst(g, loc, OP_EXPAND_DIMS, &v.v, 1, rt);
    i->a.ival = axis;
    return val_rt(g, i->res[0]);
}

/* t[a:b:c] of a tuple or list, Python's slice (each bound a compile-time integer or absent; negative counts from
 * the end): a tuple or a list, Triton's x.shape[:-1] + [32] (triton_kernels' vpopc) */
static Val gen_slice_of(Gen *g, const Node *ix, Val v) {
    int64_t len = v.k == V_TUPLE ? v.nelems : v.rank, b[3] = {0, len, 1};
    const Node *part[3] = {ix->lhs, ix->rhs, ix->els};
    for (int k = 0; k < 3; k++)
        if (part[k] && part[k]->kind != N_NONE && !val_ct_int_of(g, gen_expr(g, part[k]), part[k]->loc, "a slice bound", &b[k]))
            return val_err();
    if (b[2] == 0) {
        diag_error(g->d, part[2]->loc, "slice step cannot be zero");
        return val_err();
    }
    if (b[2] < 0 && !(part[0] && part[0]->kind != N_NONE)) b[0] = len - 1; /* t[::-1]: from the end, past the start */
    if (b[2] < 0 && !(part[1] && part[1]->kind != N_NONE)) b[1] = -1 - len;
    for (int k = 0; k < 2; k++) { /* Python's slice.indices: negative from the end, then clamped */
        if (b[k] < 0) b[k] += len;
        int64_t lo = b[2] > 0 ? 0 : -1, hi = b[2] > 0 ? len : len - 1;
        b[k] = b[k] < lo ? lo : b[k] > hi ? hi : b[k];
    }
    int n = 0;
    int64_t *idx = ARENA_ARRAY(g->a, int64_t, len ? len : 1);
    for (int64_t i = b[0]; (b[2] > 0 ? i < b[1] : i > b[1]) && n < len; i += b[2]) idx[n++] = i;
    if (v.k == V_SHAPE) {
        Val r = {.k = V_SHAPE, .rank = n};
        for (int k = 0; k < n; k++) r.shape[k] = v.shape[idx[k]];
        return r;
    }
    Val r = {.k = V_TUPLE, .nelems = n, .elems = ARENA_ARRAY(g->a, Val, n ? n : 1)};
    for (int k = 0; k < n; k++) r.elems[k] = v.elems[idx[k]];
    return r;
}

/* x[:, None] -- each ':' keeps a dimension, each None inserts one. */
/* t[i]: element i of a tuple or list (a compile-time integer; negative counts from the end), as Python's. */
static Val gen_element(Gen *g, const Node *n, Val v) {
    const Node *ix = n->kids[0];
    if (n->nkids == 1 && ix->kind == N_SLICE) return gen_slice_of(g, ix, v);
    if (n->nkids != 1 || ix->kind == N_SLICE || ix->kind == N_NONE) {
        diag_error(g->d, n->oploc, "a %s takes one index, a compile-time integer", v.k == V_TUPLE ? "tuple" : "list");
        return val_err();
    }
    int64_t i, len = v.k == V_TUPLE ? v.nelems : v.rank;
    if (!val_ct_int_of(g, gen_expr(g, ix), ix->loc, "an index of a tuple or list", &i)) return val_err();
    if (i < -len || i >= len) {
        diag_error(g->d, ix->loc, "index %lld is out of range for a %s of %lld", (long long)i, v.k == V_TUPLE ? "tuple" : "list",
                   (long long)len);
        return val_err();
    }
    if (i < 0) i += len;
    return v.k == V_TUPLE ? v.elems[i] : val_ct_int(v.shape[i], DT_I32);
}

static Val gen_index(Gen *g, const Node *n) {
    Val v = gen_expr(g, n->lhs);
    if ((v.k == V_TUPLE && !gen_is_desc(v)) || v.k == V_SHAPE) return gen_element(g, n, v);
    if (!val_is_value(g, v, n->lhs->loc)) return val_err();
    for (int i = 0; i < n->nkids; i++)
        if ((n->kids[i]->kind != N_SLICE || n->kids[i]->ival) && n->kids[i]->kind != N_NONE) {
            diag_error(g->d, n->kids[i]->loc, "a tensor is indexed with ':' and 'None' only (as in Triton): index with arange and "
                       "load, or reduce with a mask%s", n->kids[i]->kind == N_SLICE ? " (a slice with bounds is a tuple's or a list's)" : "");
            return val_err();
        }
    int slices = 0;
    for (int i = 0; i < n->nkids; i++) slices += n->kids[i]->kind == N_SLICE;
    if (slices > val_rank(v)) { /* fewer are fine: the dims after the last are implied ':', as in Triton (x[None]) and NumPy */
        diag_error(g->d, n->oploc, "index has %d ':' but the value has rank %d", slices, val_rank(v));
        return val_err();
    }
    for (int i = 0; i < n->nkids && v.k != V_ERR; i++)
        if (n->kids[i]->kind == N_NONE) v = gen_expand_dims(g, v, i, n->kids[i]->loc);
    return v;
}

/* tuple = "(" expr "," expr { "," expr } ")": values, tensor descriptors and block pointers (records,
 * which a loop carries and an `if` merges by their values as any tuple's); no other nesting */
static Val gen_tuple(Gen *g, const Node *n) {
    Val r = {.k = V_TUPLE, .nelems = n->nkids};
    r.elems = ARENA_ARRAY(g->a, Val, n->nkids);
    bool ok = true;
    for (int i = 0; i < n->nkids; i++) {
        r.elems[i] = gen_list_as_tuple(g, gen_expr(g, n->kids[i])); /* a list is Triton's tuple: `([16], p)` holds (16,) */
        /* a tuple may hold tuples (Triton's nested tuples: `return (x, (m, r))`), already checked where they were made, and
         * None (`(x_ptr, b_ptr)` with b_ptr None), types and strings */
        if (!val_is_tuple_element(g, r.elems[i], n->kids[i]->loc)) ok = false;
    }
    return ok ? r : val_err();
}

static Val gen_list(Gen *g, const Node *n) {
    Val r = {.k = V_SHAPE};
    if (n->nkids > TIR_MAX_RANK) {
        diag_error(g->d, n->loc, "tensors have at most %d dimensions, got a list of %d", TIR_MAX_RANK, n->nkids);
        return val_err();
    }
    bool ok = true;
    for (int i = 0; i < n->nkids; i++) {
        Val e = gen_expr(g, n->kids[i]);
        int64_t x;
        if (e.k == V_CT && !dtype_is_int(e.dt)) { /* [1.0, 2.0]: one error for the list, not one per element */
            if (ok)
                diag_error(g->d, n->kids[i]->loc, "a list holds compile-time integers (a shape, axes), got '%s': values are a tuple, "
                           "written (a, b)", dtype_name(e.dt));
            return val_err();
        }
        if (!val_ct_int_of(g, e, n->kids[i]->loc, "a list element", &x)) { /* each run-time parameter gets its note */
            if (e.k == V_RT) gen_note_runtime_params(g, n->kids[i], e);
            ok = false;
            continue;
        }
        if (x < 0 || x > GEN_MAX_NUMEL) {
            diag_error(g->d, n->kids[i]->loc, "list element %lld is out of range", (long long)x);
            ok = false;
            continue;
        }
        r.shape[r.rank++] = (int32_t)x;
    }
    return ok ? r : val_err();
}

/* The fn a compile-time string names, for a call of a variable holding it (a const parameter given a fn's name,
 * Triton's JIT function passed as a constexpr: xformers' `ACTIVATION(x)`), or NULL.  Only a call reads it so: the
 * string stays a string everywhere else (`if ACT == "gelu"` beside a fn gelu). */
static const Decl *fn_of_string(Gen *g, Val v) {
    if (v.k != V_STR || !v.s) return NULL;
    Global *gl = gen_find_global(g, v.s);
    return gl && gl->decl->kind == D_FN ? gl->decl : NULL;
}

const Decl *gen_fn_named(Gen *g, const Node *n) {
    if (n->kind != N_NAME) return NULL;
    Var *v = gen_lookup_var(g, n->name);
    if (v) return v->val.k == V_FN ? v->val.fn : NULL;
    Global *gl = gen_find_global(g, n->name);
    return gl && gl->decl->kind == D_FN ? gl->decl : NULL;
}

/* The fn a built-in's function argument names (reduce's and associative_scan's combine_fn, map_elementwise's scalar_fn):
 * a fn, a parameter given one, or a compile-time string naming one (a const or a const parameter holding "add", as a
 * call `OP(a, b)` of it calls that fn); otherwise an error at the argument (what: "argument 'combine_fn' of 'reduce'"). */
const Decl *gen_fn_arg(Gen *g, const Node *n, const char *what) {
    const Decl *fd = gen_fn_named(g, n);
    if (fd) return fd;
    Val v = {.k = V_NONE};
    if (n->kind == N_NAME) {
        Var *x = gen_lookup_var(g, n->name);
        Global *gl = x ? NULL : gen_find_global(g, n->name);
        if (x) v = x->val;
        else if (gl && gl->decl->kind == D_CONST) v = gen_global_value(g, gl, n->loc);
    }
    if ((fd = fn_of_string(g, v))) return fd;
    if (v.k == V_ERR) return NULL;
    if (v.k == V_STR)
        diag_error(g->d, n->loc, "%s must name a fn: '%s' holds the string \"%s\", which names no fn of this file", what, n->name, v.s);
    else diag_error(g->d, n->loc, "%s must name a fn (or be a const string naming one)", what);
    return NULL;
}

/* A kernel's run-time parameters are defined after its const ones, and those in order, so a name unknown in a const
 * parameter's default (`const B: i32 = n`, `const A: i32 = B, const B: i32 = 4`) may be one of them. */
static bool kernel_param_unknown_here(Gen *g, const char *name, bool is_const) {
    const Decl *k = g->fr ? g->fr->kernel : NULL;
    for (int i = 0; k && i < k->nparams; i++)
        if (k->params[i].is_const == is_const && !strcmp(k->params[i].name, name)) return true;
    return false;
}

static Val gen_name(Gen *g, const Node *n) {
    Var *v = gen_lookup_var(g, n->name);
    if (v) return v->val;
    Global *gl = gen_find_global(g, n->name);
    const char *alias = gl ? gen_callable_alias(g, gl) : NULL;
    if (alias) {
        Global *f = gen_find_global(g, alias);
        if (f && f->decl->kind == D_FN) return (Val){.k = V_FN, .fn = f->decl}; /* passed on as that fn */
        diag_error(g->d, n->loc, "'%s' names the built-in '%s', which can be called but is no value", n->name, alias);
        return val_err();
    }
    if (gl && gl->decl->kind == D_CONST) return gen_global_value(g, gl, n->loc);
    if (gl) diag_error(g->d, n->loc, "function '%s' cannot be used as a value", n->name);
    else if (!strcmp(n->name, "float")) /* Python's float("inf") is a built-in, its type is not (full([n], 0.0, float)) */
        diag_error(g->d, n->loc, "'float' names no type here: a type is named by its width ('f32', 'f16', 'f64')");
    else if (builtin_exists(n->name)) diag_error(g->d, n->loc, "built-in '%s' cannot be used as a value", n->name);
    else if (kernel_param_unknown_here(g, n->name, false) && g->in_desc_block)
        diag_error(g->d, n->loc, "'%s' is a run-time parameter: a tensor_desc parameter's block shape is compile-time (numbers, "
                   "file-level consts and const parameters)", n->name);
    else if (kernel_param_unknown_here(g, n->name, false))
        diag_error(g->d, n->loc, "'%s' is a run-time parameter: a const parameter's default is a compile-time value (a number, a "
                   "type, a string, or an earlier const parameter)", n->name);
    else if (kernel_param_unknown_here(g, n->name, true)) /* `const A: i32 = B, const B: i32 = 4` */
        diag_error(g->d, n->loc, "'%s' is a const parameter declared after this one: a const parameter's default names file-level "
                   "consts and the const parameters before it", n->name);
    else {
        diag_error(g->d, n->loc, "unknown name '%s'%s", n->name, gen_did_you_mean(g, n->name, false));
        gen_note_ended_let(g, n->name, n->loc);
    }
    return val_err();
}

/* The standard-library file (its name, in the arena) that defines function `name`, for an unknown call's error;
 * NULL when none does. */
static const char *stdlib_file_of(Gen *g, const char *name) {
    const char *path = lang_stdlib_defining(g->a, g->opt, name), *slash = path ? strrchr(path, '/') : NULL;
    return slash ? slash + 1 : path;
}

/* `num_warps(4)` in a kernel's body, as Triton's launch keyword: an error saying it is an attribute before `kernel`
 * (`@num_warps(4)`); Triton's `num_ctas` (a cluster of programs) has none here.  False for other names. */
static bool launch_setting_call(Gen *g, const Node *n) {
    static const char *const attrs[] = {"num_warps", "num_stages", "warp_specialize", "num_consumer_groups", "pingpong", "overlap"};
    if (!strcmp(n->name, "num_ctas")) {
        diag_error(g->d, n->loc, "unknown name 'num_ctas': Triton's num_ctas (a cluster of programs) has no equivalent here; "
                   "a kernel's launch settings are attributes written before 'kernel' ('@num_warps(4)', '@num_stages(3)')");
        return true;
    }
    for (size_t i = 0; i < sizeof attrs / sizeof *attrs; i++)
        if (!strcmp(n->name, attrs[i])) {
            const Node *a = n->nkids == 1 ? n->kids[0] : NULL; /* the value written, when a plain integer */
            diag_error(g->d, n->loc, "unknown name '%s': it is a kernel attribute, written before 'kernel' ('@%s(%lld)'), not a call "
                       "in its body", n->name, n->name, a && a->kind == N_INT ? (long long)a->ival : !strcmp(n->name, "num_warps") ? 4LL :
                       !strcmp(n->name, "num_stages") ? 3LL : 1LL);
            return true;
        }
    return false;
}

static Val gen_call(Gen *g, const Node *n) {
    n = gen_expand_star_args(g, n);
    if (!n) return val_err();
    if (n->lhs->kind != N_NAME) {
        const Node *k = n->lhs->kind == N_INDEX && n->lhs->lhs->kind == N_NAME ? n->lhs->lhs : NULL; /* Triton's k[grid](...) */
        for (int i = 0; k && g->main_file && i < g->main_file->ndecls; i++)
            if (g->main_file->decls[i]->kind == D_KERNEL && !strcmp(g->main_file->decls[i]->name, k->name)) {
                diag_error(g->d, n->loc, "'%s' is a kernel: kernels are launched from the host (Triton's %s[grid](...) is "
                           "mod.%s[grid](...) in Python, tile_launch in C), not called (write the shared code as a 'fn')", k->name,
                           k->name, k->name);
                return val_err();
            }
        diag_error(g->d, n->loc, "only named functions can be called");
        return val_err();
    }
    Var *var = gen_lookup_var(g, n->name);
    const Decl *named = var ? fn_of_string(g, var->val) : NULL;
    if (var && (var->val.k == V_FN || named)) { /* a fn's parameter given a fn, or a const given a fn's name */
        const Decl *fd = var->val.k == V_FN ? var->val.fn : named;
        Val r = gen_call_fn(g, fd, n);
        if (r.k == V_VOID) r.s = fd->name;
        return r;
    }
    /* A variable of a built-in's name hides nothing: a call of the name calls the built-in, as Triton's `zeros` parameter
     * and `tl.zeros` are two names.  One of a fn's name does, but for one an `if` kept (Triton's `flip = ...`). */
    Global *gfn = var && var->outlived ? gen_find_global(g, n->name) : NULL;
    if (var && !builtin_exists(n->name) && !(var->outlived && gfn && gfn->decl->kind == D_FN)) {
        Global *gf = gen_find_global(g, n->name);
        if (gf && gf->decl->kind == D_FN)
            diag_error(g->d, n->loc, "'%s' is a variable here, not a function: it hides the function '%s' (rename the variable)", n->name,
                       n->name);
        else if (var->val.k == V_STR)
            diag_error(g->d, n->loc, "'%s' holds the string \"%s\", which names no fn of this file (a const given a fn's name "
                       "calls that fn)", n->name, var->val.s);
        else diag_error(g->d, n->loc, "'%s' is a variable, not a function", n->name);
        return val_err();
    }
    Global *gl = gen_find_global(g, n->name);
    if (gl && gl->decl->kind == D_FN) {
        Val r = gen_call_fn(g, gl->decl, n);
        if (r.k == V_VOID) r.s = gl->decl->name; /* for gen_error_no_value */
        return r;
    }
    const char *alias = gl ? gen_callable_alias(g, gl) : NULL;
    if (alias) { /* `const fast_expf = exp;`: the call is one of the function it names */
        Node *c = arena_alloc(g->a, sizeof *c), *callee = arena_alloc(g->a, sizeof *callee);
        *c = *n, *callee = *n->lhs;
        callee->name = c->name = alias;
        c->lhs = callee;
        return gen_call(g, c);
    }
    if (gl) {
        diag_error(g->d, n->loc, "'%s' is a constant, not a function", n->name);
        return val_err();
    }
    if (builtin_exists(n->name)) {
        Val r = builtin_call(g, n);
        if (r.k == V_VOID) r.s = n->name;
        return r;
    }
    for (int i = 0; g->main_file && i < g->main_file->ndecls; i++)
        if (g->main_file->decls[i]->kind == D_KERNEL && !strcmp(g->main_file->decls[i]->name, n->name)) {
            diag_error(g->d, n->loc, "'%s' is a kernel: kernels are launched, not called (write the shared code as a 'fn')", n->name);
            return val_err();
        }
    if (launch_setting_call(g, n)) return val_err();
    if (!strcmp(n->name, "isinstance")) { /* triton_kernels' isinstance(shape_bm, tl.tensor) and shape_bm.dtype.is_ptr() */
        diag_error(g->d, n->loc, "unknown name 'isinstance': Triton's isinstance(x, tl.tensor) or isinstance(x, tl.constexpr) asks "
                   "at compile time what an argument is; here it has a type: ask is_ptr(x), is_int(x), is_float(x), "
                   "dtype_of(x) == T or x is None");
        return val_err();
    }
    const char *lib = stdlib_file_of(g, n->name);
    if (lib) diag_error(g->d, n->loc, "unknown name '%s': the standard library's %s has it (add 'import \"%s\";')", n->name, lib, lib);
    else diag_error(g->d, n->loc, "unknown name '%s'%s", n->name, gen_did_you_mean(g, n->name, false));
    return val_err();
}

/* After a binary operator's error: an operand that is a call returning a tuple (`two(x) * 2.0`, where the '*' repeats
 * the tuple) gets a note at the call, as arithmetic on a tuple is not element-wise. */
static void note_tuple_call(Gen *g, const Node *operand, Val v) {
    if (!operand || operand->kind != N_CALL || !operand->name || v.k != V_TUPLE || gen_is_record(v)) return;
    diag_note(g->d, operand->loc, "'%s' returns a tuple of %d; arithmetic on a tuple is not element-wise (index it: '%s(...)[0]')",
              operand->name, v.nelems, operand->name);
}

static Val gen_expr1(Gen *g, const Node *n) {
    switch (n->kind) {
    case N_INT: return val_ct_int(n->ival, n->ty.dt == DT_U64 ? DT_U64 : fits_i32(n->ival) ? DT_I32 : DT_I64);
    case N_FLOAT: return val_ct_float(n->fval, DT_F32); /* exact until it takes a type (ct_const, casts): 0.1 with f64 is 0.1 */
    case N_BOOL: return val_ct_int(n->ival, DT_I1);
    case N_NONE: return (Val){.k = V_NONE};
    case N_STR: return (Val){.k = V_STR, .s = n->name};
    case N_NAME: return gen_name(g, n);
    case N_DTYPE: return (Val){.k = V_DTYPE, .t = gen_type_ref(g, n->ty)};
    case N_LIST: return gen_list(g, n);
    case N_TUPLE: return gen_tuple(g, n);
    case N_UNARY: return gen_unary(g, n);
    case N_BINARY: {
        /* a + b + c + ... parses left-deep: walk its left spine with a loop, so that a long flat
         * expression does not count as a deep one (only the right operands recurse) */
        int len = 0;
        for (const Node *x = n; x->kind == N_BINARY; x = x->lhs) len++;
        const Node **spine = ARENA_ARRAY(g->a, const Node *, len);
        int k = len;
        for (const Node *x = n; x->kind == N_BINARY; x = x->lhs) spine[--k] = x;
        Val a = gen_expr(g, spine[0]->lhs);
        for (k = 0; k < len; k++) {
            const Node *x = spine[k];
            if (x->ival == 2) { /* `a in t`, `a not in t` */
                a = gen_membership(g, x, a);
                continue;
            }
            Val b = gen_expr(g, x->rhs);
            if (x->ival && (a.k == V_RT || b.k == V_RT)) { /* Python's identity: Triton's `x is y` of two tensors is no compare */
                diag_error(g->d, x->oploc, "'is' compares compile-time values (types, strings, numbers, None); write '%s' to "
                           "compare run-time values", x->op == TK_NE ? "!=" : "==");
                a = val_err();
            } else if (x->op == TK_POW) a = gen_pow(g, a, b, x->oploc);
            else if (a.k == V_STR || b.k == V_STR || a.k == V_DTYPE || b.k == V_DTYPE || a.k == V_NONE || b.k == V_NONE)
                a = gen_compare_names(g, x->op, a, b, x->oploc);
            else if ((a.k == V_SHAPE || b.k == V_SHAPE || (a.k == V_TUPLE && b.k == V_TUPLE)) && (x->op == TK_EQEQ || x->op == TK_NE))
                a = gen_compare_shapes(g, x->op, a, b, x->oploc);
            else {
                Val l = a;
                a = gen_binop(g, x->op, a, b, x->oploc);
                if (a.k == V_ERR && l.k != V_ERR && b.k != V_ERR) { /* its error: a call's tuple taken for a value gets a note */
                    note_tuple_call(g, k == 0 ? x->lhs : NULL, l);
                    note_tuple_call(g, x->rhs, b);
                }
            }
        }
        return a;
    }
    case N_CAST: { /* a cast constant is a typed scalar, as Triton's tl.cast makes one: strong in promotion */
        int q0 = g->quot_rt.n;
        Val v = gen_expr(g, n->lhs);
        const Type *to = gen_type_ref(g, n->ty);
        if (g->quot_rt.n > q0 && v.k == V_RT && to && dtype_is_int(to->dt)) { /* note_const_quotient */
            diag_warning(g->d, g->quot_rt.at, "an integer division of constants truncated this operand of '%s' to %lld before the "
                         "cast to '%s' (Triton's '/' of two constexprs gives the fraction, and its '.to()' truncates after the "
                         "arithmetic): write '(x * a) / b' for that, or '(a / b) as i32' for Triton's '//'",
                         lang_tok_spelling[g->quot_rt.op], (long long)g->quot_rt.q, dtype_name(to->dt));
            diag_note(g->d, n->oploc, "the cast");
            g->quot_rt.n = q0; /* an enclosing cast adds nothing */
        }
        Val r = gen_convert(g, v, to, false, n->oploc);
        if (r.k == V_CT) r.held = true;
        return r;
    }
    case N_CALL: return gen_call(g, n);
    case N_COND: return builtin_cond(g, n);
    case N_INDEX: return gen_index(g, n);
    case N_SLICE: diag_error(g->d, n->loc, "':' is only allowed in an index"); return val_err();
    default: diag_error(g->d, n->loc, "expected an expression"); return val_err();
    }
}

Val gen_expr(Gen *g, const Node *n) {
    if (g->expr_depth >= GEN_MAX_EXPR_DEPTH) {
        diag_error(g->d, n->loc, "expression nested too deeply (more than %d levels of operands, calls inlined)", GEN_MAX_EXPR_DEPTH);
        return val_err();
    }
    g->expr_depth++;
    Val v = gen_expr1(g, n);
    g->expr_depth--;
    /* a failure with no error reported at all would compile the kernel without the code that used it
     * (histogram(x, 0) dropped its store): the innermost such expression says so.  After an error, values
     * that depend on it fail quietly (a variable bound to the failed value). */
    if (v.k == V_ERR && g->d->nerrors == 0)
        diag_error(g->d, n->loc, "this expression could not be compiled (the compiler gave no reason: please report it)");
    return v;
}

const char *gen_type_desc(Gen *g, const Type *t) {
    Str s = {0};
    tir_print_type(&s, t);
    char *r = arena_strdup(g->a, s.buf);
    str_free(&s);
    return r;
}

/* After "changes type from 'was' to 'now' in the loop": how to write it.  A scalar that becomes a tile is the usual
 * slip (`let acc = 0.0;` then `acc += load(p + offs)`): the tile to start from; another element type: the two fixes. */
const char *gen_carried_type_hint(Gen *g, const Type *was, const Type *now) {
    if (was->dt == DT_PTR || now->dt == DT_PTR) return "";
    if (was->rank != now->rank || memcmp(was->shape, now->shape, sizeof(int32_t) * (size_t)was->rank))
        return now->rank ? arena_printf(g->a, " (a variable keeps its type and shape through a loop, as in Triton: start it as the "
                                        "tile, 'zeros(%s, %s)')", gen_shape_str(g, now->rank, now->shape), dtype_name(now->dt))
                         : " (a variable keeps its type and shape through a loop, as in Triton)";
    return arena_printf(g->a, " (a variable keeps its type through a loop, as in Triton: start it as '%s', or cast the value with "
                        "'as %s')", dtype_name(now->dt), dtype_name(was->dt));
}
