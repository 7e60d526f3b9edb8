/* builtins.c - the built-in functions of the language.
 *
 * Each built-in is declared once in LANG_BUILTINS (builtins_table.h) with its name, number of
 * required arguments, parameter names (for keyword arguments) and IR op.
 * A call:
 *   1. binds arguments to parameters (gen_bind_args: positional, then
 *      `name=` keywords) and evaluates them;
 *   2. checks what must be compile-time (axes, shapes, dtypes, arange
 *      bounds) and the types and shapes of the rest;
 *   3. makes promotion and broadcasting explicit (gen_coerce) and emits the
 *      op with its attributes.
 * Memory ops (loads, stores, atomics) are builtins_mem.c's, shape changes (reshape, trans, ...)
 * builtins_shape.c's. */
#include "builtins.h"

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "builtins_table.h"

static const Builtin builtins[BI_COUNT] = {
#define X(e, n, mn, ps, op, k, rk) {n, mn, ps, OP_##op, BK_##k, rk},
    LANG_BUILTINS(X)
#undef X
};


/* v holds no run-time value (tuples looked into) */
static bool ct_whole(Val v) {
    if (v.k == V_RT || v.k == V_VOID) return false;
    for (int i = 0; v.k == V_TUPLE && i < v.nelems; i++)
        if (!ct_whole(v.elems[i])) return false;
    return true;
}

/* v with its constants weak (a constexpr's), tuples element by element */
static Val weak_copy(Gen *g, Val v) {
    if (v.k == V_CT) v.held = false;
    if (v.k == V_TUPLE && !gen_is_record(v)) {
        Val *e = ARENA_ARRAY(g->a, Val, v.nelems);
        for (int i = 0; i < v.nelems; i++) e[i] = weak_copy(g, v.elems[i]);
        v.elems = e;
    }
    return v;
}

static int builtin_find(const char *name) {
    for (int i = 0; i < BI_COUNT; i++)
        if (!strcmp(builtins[i].name, name)) return i;
    return -1;
}

bool builtin_exists(const char *name) { return builtin_find(name) >= 0; }

const char *builtin_name(int i) { return i >= 0 && i < BI_COUNT ? builtins[i].name : NULL; }

const Builtin *bi_dot_entry(void) { return &builtins[BI_DOT]; }


/* Argument i as a compile-time int. */
static bool ct_int(Call *c, int i, const char *pname, int64_t *out) {
    Gen *g = c->g;
    Val v = c->v[i];
    if (v.k == V_ERR) return false;
    if (v.k == V_RT) {
        if (c->arg[i]->kind == N_NAME) diag_error(g->d, c->loc[i], "'%s' must be a compile-time constant", c->arg[i]->name);
        else diag_error(g->d, c->loc[i], "argument '%s' of '%s' must be a compile-time constant", pname, c->bi->name);
        gen_note_runtime_params(g, c->arg[i], v);
        return false;
    }
    return val_ct_int_of(g, v, c->loc[i], arena_printf(g->a, "argument '%s' of '%s'", pname, c->bi->name), out);
}

/* A compile-time switch (exact=, keep_dims=, reverse=, ...): true, false, 1 or 0; any other value is an error
 * at the argument (exp(x, -5) was taken as exact=true). */
bool bi_ct_flag(Call *c, int i, const char *pname, int64_t *out) {
    if (!ct_int(c, i, pname, out)) return false;
    if (*out == 0 || *out == 1) return true;
    diag_error(c->g->d, c->loc[i], "argument '%s' of '%s' is a switch (true or false), got %lld", pname, c->bi->name, (long long)*out);
    return false;
}

bool bi_axis_arg(Call *c, int i, int rank, bool allow_end, int *axis) {
    int64_t a;
    if (!ct_int(c, i, "axis", &a)) return false;
    int lim = rank + (allow_end ? 1 : 0);
    if (a < 0) a += lim;
    if (a < 0 || a >= lim) {
        diag_error(c->g->d, c->loc[i], "axis %lld is out of range for a tensor of rank %d", (long long)(a < 0 ? a - lim : a), rank);
        return false;
    }
    *axis = (int)a;
    return true;
}

/* Argument i as the axes a reduction removes: one axis, or Triton's tuple (or list) of them, `sum(x, axis=(0, 1))`,
 * each compile-time, in range and given once.  They come back highest first (*n of them), the order that reduces
 * them one after the other without renumbering the axes still to go. */
static bool axes_arg(Call *c, int i, int rank, int *axes, int *n) {
    Gen *g = c->g;
    Val v = c->v[i];
    if (v.k != V_TUPLE && v.k != V_SHAPE) {
        *n = 1;
        return bi_axis_arg(c, i, rank, false, &axes[0]);
    }
    int len = v.k == V_TUPLE ? v.nelems : v.rank;
    if (len == 0) { /* Python's () would reduce nothing here but everything in reduce(x, None): neither is meant */
        diag_error(g->d, c->loc[i], "'%s' along an empty tuple of axes (every axis is axis=None)", c->bi->name);
        return false;
    }
    if (len > TIR_MAX_RANK) { /* more than rank repeat one (said below, at the repeat) */
        diag_error(g->d, c->loc[i], "'%s' of a rank-%d tensor along %d axes", c->bi->name, rank, len);
        return false;
    }
    for (int k = 0; k < len; k++) {
        int64_t a;
        if (v.k == V_SHAPE) a = v.shape[k];
        else if (!val_ct_int_of(g, v.elems[k], c->loc[i], arena_printf(g->a, "an axis of '%s'", c->bi->name), &a)) return false;
        int64_t w = a < 0 ? a + rank : a;
        if (w < 0 || w >= rank) {
            diag_error(g->d, c->loc[i], "axis %lld is out of range for a tensor of rank %d", (long long)a, rank);
            return false;
        }
        for (int j = 0; j < k; j++)
            if (axes[j] == (int)w) {
                diag_error(g->d, c->loc[i], "axis %lld is given twice in the axes of '%s'", (long long)w, c->bi->name);
                return false;
            }
        int j = k; /* insertion, highest first */
        while (j > 0 && axes[j - 1] < (int)w) axes[j] = axes[j - 1], j--;
        axes[j] = (int)w;
    }
    *n = len;
    return true;
}

/* Argument i is a tuple or list of axes (sum(x, (0, 1))), which a reduction along one axis only rejects. */
static bool single_axis(Call *c, int i) {
    if (c->v[i].k != V_TUPLE && c->v[i].k != V_SHAPE) return true;
    diag_error(c->g->d, c->loc[i], "'%s' reduces along one axis, not a tuple of them", c->bi->name);
    return false;
}

/* compose_reduce along each of axes (highest first; none: every element), each removed or kept of size 1 in turn. */
static Val reduce_axes(Gen *g, Val x, const int *axes, int n, const Decl *fn, Op op, bool keep_dims, Loc loc) {
    if (n == 0) return compose_reduce(g, x, -1, fn, op, keep_dims, loc);
    for (int k = 0; k < n && x.k != V_ERR; k++) x = compose_reduce(g, x, axes[k], fn, op, keep_dims, loc);
    return x;
}

/* A tuple of compile-time sizes, (64, 32). */
static bool tuple_of_sizes(Val v) {
    for (int k = 0; k < v.nelems; k++) {
        Val e = v.elems[k];
        if (e.k != V_CT || !dtype_is_int(e.dt) || e.dt == DT_I1 || e.i <= 0 || e.i > GEN_MAX_NUMEL) return false;
    }
    return v.nelems > 0;
}

bool bi_shape_arg(Call *c, int i, int *rank, int32_t *shape) {
    Gen *g = c->g;
    Val v = c->v[i];
    if (v.k == V_ERR) return false;
    if (v.k == V_CT && dtype_is_int(v.dt) && v.i > 0 && v.i <= GEN_MAX_NUMEL) {
        *rank = 1;
        shape[0] = (int32_t)v.i;
    } else if (v.k == V_SHAPE && v.rank > 0) {
        *rank = v.rank;
        memcpy(shape, v.shape, sizeof v.shape);
    } else if (v.k == V_TUPLE && v.nelems <= TIR_MAX_RANK && tuple_of_sizes(v)) { /* (BM, BN), as Triton's */
        *rank = v.nelems;
        for (int k = 0; k < v.nelems; k++) shape[k] = (int32_t)v.elems[k].i;
    } else {
        if (v.k == V_RT && c->arg[i]->kind == N_NAME) {
            diag_error(g->d, c->loc[i], "'%s' must be a compile-time constant", c->arg[i]->name);
            gen_note_runtime_params(g, c->arg[i], v);
        } else if (v.k == V_TUPLE && tuple_of_sizes(v)) /* as a list of too many dims says (gen.c) */
            diag_error(g->d, c->loc[i], "tensors have at most %d dimensions, got a tuple of %d", TIR_MAX_RANK, v.nelems);
        else diag_error(g->d, c->loc[i], "'%s' expects a shape such as [64, 64]", c->bi->name);
        return false;
    }
    return gen_check_shape(g, *rank, shape, c->loc[i]);
}

static bool dtype_arg(Call *c, int i, const Type **t) {
    Val v = c->v[i];
    if (v.k == V_ERR) return false;
    if (v.k != V_DTYPE) {
        diag_error(c->g->d, c->loc[i], "'%s' expects a type name such as f32", c->bi->name);
        return false;
    }
    *t = v.t;
    return true;
}

/* Argument i must be a run-time tensor. */
bool bi_tensor_arg(Call *c, int i) {
    Val v = c->v[i];
    if (!val_is_value(c->g, v, c->loc[i])) return false;
    if (val_rank(v) == 0) {
        diag_error(c->g->d, c->loc[i], "'%s' expects a tensor, got a scalar", c->bi->name);
        return false;
    }
    return true;
}

static bool numeric(Call *c, int i) {
    Val v = c->v[i];
    if (!val_is_value(c->g, v, c->loc[i])) return false;
    DType d = val_dtype(v);
    if (d == DT_PTR || dtype_is_storage(d)) {
        diag_error(c->g->d, c->loc[i], "'%s' expects a number, got '%s'", c->bi->name, gen_val_type_name(c->g, v));
        return false;
    }
    return true;
}

static const Type *tensor_type(Gen *g, DType dt, int rank, const int32_t *shape) {
    return tir_type(g->m, dt, rank, shape, NULL, NULL);
}

static Val rt(Gen *g, ValueId v) { return val_rt(g, v); }

/* The dtype n operands promote to: run-time ones by the promotion rules,
 * constants weakly against them. */
static DType args_dtype(Call *c, int first, int n, bool *any_rt) {
    DType dt = DT_VOID;
    bool any_strong = false; /* run-time values and held constants (gen_is_strong) */
    *any_rt = false;
    for (int i = first; i < first + n; i++)
        if (gen_is_strong(c->v[i])) {
            DType d = val_dtype(c->v[i]);
            dt = any_strong ? gen_promote(dt, d) : d, any_strong = true;
            if (c->v[i].k == V_RT) *any_rt = true;
        }
    /* weak constants: against strong operands as gen_promote_vals takes them; alone, with Triton's to_tensor
     * types (minimum(1e300, 1.0) is an f64, where(c, 5, 3000000000) a u32) */
    for (int i = first; i < first + n; i++)
        if (c->v[i].k == V_CT && !c->v[i].held) {
            Val w = c->v[i];
            if (!any_strong) dt = dt == DT_VOID ? gen_hold(w).dt : gen_promote(dt, gen_hold(w).dt);
            else {
                Val s = {.k = V_CT, .held = true, .dt = dt};
                dt = gen_promote_vals(s, w);
            }
        }
    return dt;
}

/* Each weak integer constant among n operands is a value of dt, the type they promote to (Triton's
 * _cast_to_computation_type): where(c, x_i8, 1000) is an error, not a silent -24. */
static bool args_fit(Call *c, int first, int n, DType dt) {
    for (int i = first; i < first + n; i++)
        if (!gen_check_weak_operand(c->g, c->v[i], dt, false, c->loc[i])) return false;
    return true;
}

/* The broadcast shape of n operands; one that does not broadcast with those before it is the error's place. */
static bool args_shape(Call *c, int first, int n, int *r, int32_t *s) {
    *r = 0;
    memset(s, 0, sizeof(int32_t) * TIR_MAX_RANK);
    for (int i = first; i < first + n; i++)
        if (!gen_broadcast_shapes(c->g, *r, s, val_rank(c->v[i]), val_shape(c->v[i]), r, s, c->loc[i])) return false;
    return true;
}

/* Element-wise op on n operands: promote, broadcast, coerce.
 * float_only: integer inputs compute in f32. */
/* The argument checks above, for where and the ternary (builtins_cond.c). */
bool bi_numeric(Call *c, int i) { return numeric(c, i); }
DType bi_args_dtype(Call *c, int first, int n, bool *any_rt) { return args_dtype(c, first, n, any_rt); }
bool bi_args_fit(Call *c, int first, int n, DType dt) { return args_fit(c, first, n, dt); }
bool bi_args_shape(Call *c, int first, int n, int *r, int32_t *s) { return args_shape(c, first, n, r, s); }
const Builtin *bi_where_entry(void) { return &builtins[BI_WHERE]; }

static Val elementwise(Call *c, int first, int n, Op op, bool float_only) {
    Gen *g = c->g;
    for (int i = first; i < first + n; i++)
        if (!numeric(c, i)) return val_err();
    bool any_rt;
    DType dt = args_dtype(c, first, n, &any_rt);
    if (float_only && !dtype_is_float(dt)) dt = DT_F32;
    if (!args_fit(c, first, n, dt)) return val_err();
    int r;
    int32_t s[TIR_MAX_RANK];
    if (!args_shape(c, first, n, &r, s)) return val_err();
    ValueId ops[3];
    for (int i = 0; i < n; i++) ops[i] = gen_coerce(g, c->v[first + i], dt, NULL, r, s, c->loc[first + i]);
    return rt(g, gen_emit(g, c->node->loc, op, ops, n, tensor_type(g, dt, r, s)));
}

/* propagate_nan= of minimum, maximum and clamp (argument i): "all" (the default: a NaN operand gives NaN, Triton's
 * PropagateNan.ALL) or "none" (Triton's default, PropagateNan.NONE: a NaN operand gives the other one, as C's
 * fmin/fmax and PTX's min/max; *num set). */
static bool nan_mode(Call *c, int i, bool *num) {
    *num = false;
    if (!c->str[i]) return true;
    if (!strcmp(c->str[i], "none") || !strcmp(c->str[i], "NONE")) return *num = true, true;
    if (!strcmp(c->str[i], "all") || !strcmp(c->str[i], "ALL")) return true;
    diag_error(c->g->d, c->loc[i], "unknown propagate_nan \"%s\" of '%s': expected \"all\" (a NaN operand gives NaN) or \"none\" "
               "(Triton's default: the other operand)", c->str[i], c->bi->name);
    return false;
}

/* minimum or maximum (op) of arguments first and first + 1, promoted and broadcast.  On floats -0.0 is below +0.0,
 * and a NaN operand gives NaN (LLVM's minimum/maximum), or with num the other operand (both NaN: NaN), composed as
 * where(isnan(a), b, where(isnan(b), a, op(a, b))).  Constants fold the same way. */
static Val minmax(Call *c, int first, Op op, bool num) {
    Gen *g = c->g;
    Loc loc = c->node->loc;
    for (int i = first; i < first + 2; i++)
        if (!numeric(c, i)) return val_err();
    bool any_rt;
    DType dt = args_dtype(c, first, 2, &any_rt);
    if (!args_fit(c, first, 2, dt)) return val_err();
    bool fl = dtype_is_float(dt);
    if (!any_rt) {
        Val a = gen_cast(g, c->v[first], dt, c->loc[first]), b = gen_cast(g, c->v[first + 1], dt, c->loc[first + 1]);
        if (a.k == V_ERR || b.k == V_ERR) return val_err();
        if (fl && (isnan(a.f) || isnan(b.f))) return (isnan(a.f) != 0) == num ? b : a;
        bool lt = fl ? (a.f == b.f ? signbit(a.f) && !signbit(b.f) : a.f < b.f)
                     : dtype_is_signed(dt) ? a.i < b.i : (uint64_t)a.i < (uint64_t)b.i;
        Val m = (op == OP_MIN) == lt ? a : b;
        m.held = c->v[first].held || c->v[first + 1].held;
        return m;
    }
    int r;
    int32_t s[TIR_MAX_RANK];
    if (!args_shape(c, first, 2, &r, s)) return val_err();
    ValueId x = gen_coerce(g, c->v[first], dt, NULL, r, s, c->loc[first]);
    ValueId y = gen_coerce(g, c->v[first + 1], dt, NULL, r, s, c->loc[first + 1]);
    const Type *t = tensor_type(g, dt, r, s);
    ValueId m = gen_emit(g, loc, op, (ValueId[]){x, y}, 2, t);
    if (!num || !fl) return rt(g, m);
    Val nx = gen_binop(g, TK_NE, rt(g, x), rt(g, x), loc), ny = gen_binop(g, TK_NE, rt(g, y), rt(g, y), loc);
    if (nx.k != V_RT || ny.k != V_RT) return val_err();
    ValueId keep_x = gen_emit(g, loc, OP_SELECT, (ValueId[]){ny.v, x, m}, 3, t);
    return rt(g, gen_emit(g, loc, OP_SELECT, (ValueId[]){nx.v, y, keep_x}, 3, t));
}

static Val bi_math(Call *c) {
    Gen *g = c->g;
    if (!numeric(c, 0)) return val_err();
    Val x = c->v[0];
    DType dt = val_dtype(x);
    if (c->bi->op == OP_ABS && x.k == V_CT) {
        /* folded as the run-time abs computes it: a typed scalar (held, cast) stays one and wraps in its type, as
         * Triton's abs of an i8 -128 is -128; unsigned values are their own magnitude; a weak i32 -2147483648 gives
         * the i64 2147483648, as '-' lifts it */
        if (!dtype_is_float(dt) && (!dtype_is_signed(dt) || x.i >= 0)) return x;
        if (!dtype_is_float(dt) && !x.held && dt == DT_I32 && x.i == INT32_MIN) return val_ct_int(-(int64_t)INT32_MIN, DT_I64);
        Val r = dtype_is_float(dt) ? val_ct_float(fabs(x.f), dt) : val_ct_int(dtype_wrap_int((int64_t)(0 - (uint64_t)x.i), dt), dt);
        r.held = x.held;
        return r;
    }
    if (c->bi->op != OP_ABS && !dtype_is_float(dt)) dt = DT_F32;
    if (c->bi->op == OP_ABS && dt == DT_I1) dt = DT_I32;
    /* exp/exp2: `exact=true` asks for the full-range form (no flush to zero); tanh: the accurate one */
    int64_t exact = 0;
    if (has(c, 1) && !bi_ct_flag(c, 1, "exact", &exact)) return val_err();
    ValueId v = gen_coerce(g, x, dt, NULL, val_rank(x), val_shape(x), c->loc[0]);
    Inst *in = gen_emit_inst(g, c->node->loc, c->bi->op, &v, 1, tir_vtype(g->f, v));
    in->a.ival = exact != 0;
    return rt(g, in->res[0]);
}

/* umulhi(x, y) (the operands' type), popc(x), clz(x) (i32): on 32- and 64-bit integers */
static Val bi_bits(Call *c) {
    Gen *g = c->g;
    int n = c->bi->op == OP_UMULHI ? 2 : 1;
    for (int i = 0; i < n; i++)
        if (!numeric(c, i)) return val_err();
    bool any_rt;
    DType dt = args_dtype(c, 0, n, &any_rt);
    if (!args_fit(c, 0, n, dt)) return val_err();
    if (!dtype_is_int(dt) || dt == DT_I1 || dtype_bits(dt) < 32) {
        diag_error(g->d, c->node->loc, "'%s' expects 32- or 64-bit integers (i32 i64 u32 u64), got '%s'", c->bi->name, dtype_name(dt));
        return val_err();
    }
    int r;
    int32_t s[TIR_MAX_RANK];
    if (!args_shape(c, 0, n, &r, s)) return val_err();
    ValueId ops[2];
    for (int i = 0; i < n; i++) ops[i] = gen_coerce(g, c->v[i], dt, NULL, r, s, c->loc[i]);
    return rt(g, gen_emit(g, c->node->loc, c->bi->op, ops, n, tensor_type(g, n == 2 ? dt : DT_I32, r, s)));
}

/* isnan, isinf, signbit: i1 of x's shape (integers: never NaN or infinite; signbit is x < 0) */
static Val bi_classify(Call *c, BuiltinId id) {
    Gen *g = c->g;
    if (!numeric(c, 0)) return val_err();
    Val x = c->v[0];
    DType dt = val_dtype(x);
    Loc loc = c->node->loc;
    if (!dtype_is_float(dt)) return id == BI_SIGNBIT ? gen_binop(g, TK_LT, x, val_ct_int(0, dt), loc) : gen_binop(g, TK_NE, x, x, loc);
    if (id == BI_ISNAN) return gen_binop(g, TK_NE, x, x, loc); /* only NaN differs from itself */
    if (x.k == V_CT) { /* as a value of its type: 1e40 is infinite in f32 */
        double f = dt == DT_F32 && isfinite(x.f) && fabs(x.f) > FLT_MAX ? copysign(INFINITY, x.f) : x.f;
        return val_ct_int(id == BI_ISINF ? isinf(f) != 0 : signbit(f) != 0, DT_I1);
    }
    if (id == BI_ISINF) {
        Val a = rt(g, gen_emit(g, loc, OP_ABS, &x.v, 1, x.t));
        return gen_binop(g, TK_EQEQ, a, val_ct_float(INFINITY, dt), loc);
    }
    DType it = dtype_bits(dt) == 64 ? DT_I64 : dtype_bits(dt) == 32 ? DT_I32 : DT_I16;
    Val bits = rt(g, gen_emit(g, loc, OP_BITCAST, &x.v, 1, tir_with_dtype(g->m, x.t, it)));
    return gen_binop(g, TK_LT, bits, val_ct_int(0, it), loc);
}

/* value (argmax/argmin only; NULL: none): set to the reduction's second result, the element at the index. */
static Val reduce_once(Call *c, Val x, int axis, int kind, Op op, Val *value) {
    Gen *g = c->g;
    int32_t s[TIR_MAX_RANK];
    int r = 0;
    for (int i = 0; i < x.t->rank; i++)
        if (i != axis) s[r++] = x.t->shape[i];
    DType dt = kind == RED_ARGMAX || kind == RED_ARGMIN ? DT_I32 : x.t->dt;
    Inst *in;
    if (value) { /* (index, value) from one combine of (value, index) pairs, at the builder's point as gen_emit_inst's */
        const Type *ts[2] = {tensor_type(g, DT_I32, r, s), tensor_type(g, x.t->dt, r, s)};
        in = tir_inst_new(g->f, op, &x.v, 1, ts, 2, c->node->loc);
        if (g->b.before) tir_insert_before(g->b.before, in);
        else tir_block_append(g->b.block, in);
    } else {
        in = gen_emit_inst(g, c->node->loc, op, &x.v, 1, op == OP_SCAN ? x.t : tensor_type(g, dt, r, s));
    }
    in->a.ival = axis;
    in->a.ival2 = kind;
    if (value) *value = rt(g, in->res[1]);
    return rt(g, in->res[0]);
}

/* A reduction or scan of argument 0 along argument 1 (every axis when absent; a scan: axis 0).  keep
 * (-1: none) is the index of a keep_dims argument: the reduced axes stay, of size 1.  dtype (-1: none) the
 * index of sum's and cumsum's dtype argument: the type to accumulate in; without one, as Triton's
 * _pick_sum_dtype, integers narrower than 32 bits widen to i32 (u32 when unsigned, i1 included). */
static Val bi_reduce(Call *c, int kind, Op op, int keep, int dtype, Val *value) {
    Gen *g = c->g;
    if (!numeric(c, 0) || !bi_tensor_arg(c, 0)) return val_err();
    Val x = c->v[0];
    int64_t keep_dims = 0;
    if (keep >= 0 && has(c, keep) && !bi_ct_flag(c, keep, "keep_dims", &keep_dims)) return val_err();
    if (kind == RED_SUM) {
        DType to = x.t->dt;
        const Type *t;
        if (dtype >= 0 && has(c, dtype)) {
            if (!dtype_arg(c, dtype, &t)) return val_err();
            if (t->rank || !(dtype_is_int(t->dt) || dtype_is_float(t->dt)) || t->dt == DT_I1) {
                diag_error(g->d, c->loc[dtype], "'%s' accumulates in an integer or float type, not '%s'", c->bi->name,
                           gen_type_name(g, t));
                return val_err();
            }
            to = t->dt;
        } else if (to == DT_I8 || to == DT_I16) {
            to = DT_I32;
        } else if (to == DT_I1 || to == DT_U8 || to == DT_U16) { /* i1 is unsigned to Triton */
            to = DT_U32;
        }
        if (to != x.t->dt) x = gen_cast(g, x, to, c->loc[0]);
    }
    if (has(c, 1)) { /* several axes (Triton's tuple): highest first, each removed (or kept of size 1) in turn */
        int axes[TIR_MAX_RANK], n = 1;
        if ((op == OP_SCAN || (kind != RED_SUM && kind != RED_MAX && kind != RED_MIN)) && !single_axis(c, 1)) return val_err();
        if (!axes_arg(c, 1, x.t->rank, axes, &n)) return val_err();
        for (int k = 0; k < n && x.k != V_ERR; k++) {
            x = reduce_once(c, x, axes[k], kind, op, value);
            if (keep_dims && op != OP_SCAN) x = gen_expand_dims(g, x, axes[k], c->node->loc);
            if (keep_dims && value) *value = gen_expand_dims(g, *value, axes[k], c->node->loc);
        }
        return x;
    }
    if (op == OP_SCAN) return reduce_once(c, x, 0, kind, op, NULL);
    if (x.t->rank > 1 && (kind == RED_ARGMAX || kind == RED_ARGMIN)) {
        diag_error(g->d, c->node->loc, "'%s' of a rank-%d tensor needs an axis", c->bi->name, x.t->rank);
        return val_err();
    }
    int rank = x.t->rank;
    while (x.k == V_RT && x.t->rank > 0) x = reduce_once(c, x, 0, kind, op, value); /* arg kinds: rank 1, once */
    for (int k = 0; keep_dims && k < rank; k++) {
        x = gen_expand_dims(g, x, 0, c->node->loc);
        if (value) *value = gen_expand_dims(g, *value, 0, c->node->loc);
    }
    return x;
}

/* cast(x, T, fp_downcast_rounding="rtz") (Triton's; "rtne", the default, is plain cast): a float to a narrower
 * float rounded toward zero.  Composed from the round-to-nearest-even conversion r: where r's magnitude is above
 * x's (r rounded away from zero, or overflowed to inf), the value one ulp nearer zero is r's bits minus one
 * (floats order as their sign-magnitude bits), so finite values past the range give the largest finite one;
 * infinities, NaNs and exact values stay.  A value already of type T is returned as it is and any other conversion
 * with the argument is an error, as in Triton. */
static Val cast_rounding(Call *c, const Type *t, bool bitcast) {
    Gen *g = c->g;
    Loc loc = c->node->loc;
    const char *mode = c->str[3];
    if (strcmp(mode, "rtne") && strcmp(mode, "rtz")) {
        diag_error(g->d, c->loc[3], "unknown fp_downcast_rounding \"%s\" of 'cast': expected \"rtne\" or \"rtz\"", mode);
        return val_err();
    }
    Val x = c->v[0];
    if (!val_is_value(g, x, c->loc[0])) return val_err();
    /* Triton's cast makes a constexpr a tensor first (to_tensor): 1e300 is an f64, which may go to f32 toward zero */
    if (x.k == V_CT && dtype_is_float(x.dt)) x = gen_hold(x);
    DType from = val_dtype(x), to = t->dt;
    if (!bitcast && from == to) { /* Triton returns a value of the type asked for as it is, whatever the rounding says */
        Val r = gen_convert(g, x, t, false, loc);
        if (r.k == V_CT) r.held = true;
        return r;
    }
    if (bitcast || !dtype_is_float(from) || !dtype_is_float(to) || dtype_bits(to) >= dtype_bits(from)) {
        diag_error(g->d, c->loc[3], "fp_downcast_rounding is for a conversion of a float to a narrower float, not '%s' to '%s'%s",
                   dtype_name(from), dtype_name(to), bitcast ? " by bitcast" : "");
        return val_err();
    }
    if (!strcmp(mode, "rtne")) return gen_convert(g, x, t, false, loc);
    if (x.k == V_CT) x = rt(g, gen_materialize(g, x, loc));
    Val r = gen_cast(g, x, to, loc);
    Val back = gen_cast(g, r, from, loc);
    if (r.k == V_ERR || back.k == V_ERR) return val_err();
    Val away = gen_binop(g, TK_GT, rt(g, gen_emit(g, loc, OP_ABS, &back.v, 1, back.t)), rt(g, gen_emit(g, loc, OP_ABS, &x.v, 1, x.t)), loc);
    int w = dtype_bits(to);
    DType it = w == 8 ? DT_I8 : w == 16 ? DT_I16 : DT_I32;
    Val bits = rt(g, gen_emit(g, loc, OP_BITCAST, &r.v, 1, tir_with_dtype(g->m, r.t, it)));
    Val less = gen_binop(g, TK_MINUS, bits, val_ct_int(1, it), loc);
    if (away.k == V_ERR || less.k == V_ERR) return val_err();
    ValueId down = gen_emit(g, loc, OP_BITCAST, &less.v, 1, r.t);
    return rt(g, gen_emit(g, loc, OP_SELECT, (ValueId[]){away.v, down, r.v}, 3, r.t));
}

/* tf32x3: x = big + small with big = x with the low 13 mantissa bits cleared (a tf32
 * value) and small = x - big (exact); a.b ~ small_a.big_b + big_a.small_b + big_a.big_b,
 * small terms first, each on tf32 tensor cores (dropping only small.small and the
 * bits tf32 truncates from the small halves).  Infinite or NaN inputs give NaN
 * (inf - inf in the split), as Triton's. */
static Val dot_tf32x3(Call *c, Val a, Val b, ValueId acc) {
    Gen *g = c->g;
    Loc loc = c->node->loc;
    ValueId big[2], small[2];
    Val x[2] = {a, b};
    for (int k = 0; k < 2; k++) {
        Val bits = rt(g, gen_emit(g, loc, OP_BITCAST, &x[k].v, 1, tir_with_dtype(g->m, x[k].t, DT_I32)));
        Val hi = gen_binop(g, TK_AMP, bits, val_ct_int((int32_t)0xFFFFE000u, DT_I32), loc);
        big[k] = gen_emit(g, loc, OP_BITCAST, &hi.v, 1, x[k].t);
        small[k] = gen_binop(g, TK_MINUS, x[k], rt(g, big[k]), loc).v;
    }
    ValueId pairs[3][2] = {{small[0], big[1]}, {big[0], small[1]}, {big[0], big[1]}};
    for (int p = 0; p < 3; p++) {
        acc = gen_emit(g, loc, OP_DOT, (ValueId[]){pairs[p][0], pairs[p][1], acc}, 3, tir_vtype(g->f, acc));
        tir_val(g->f, acc)->def->a.allow_tf32 = 1;
    }
    return rt(g, acc);
}


/* x's slabs along dim 0: unstack, one round trip of x through shared memory for all n of them. */
static ValueId *unstack(Gen *g, Val x, Loc loc) {
    int n = x.t->shape[0];
    const Type *st = tir_with_shape(g->m, x.t, x.t->rank - 1, x.t->shape + 1);
    const Type **ts = ARENA_ARRAY(g->a, const Type *, n);
    for (int k = 0; k < n; k++) ts[k] = st;
    Inst *in = tir_inst_new(g->f, OP_UNSTACK, &x.v, 1, ts, n, loc);
    if (g->b.before) tir_insert_before(g->b.before, in);
    else tir_block_append(g->b.block, in);
    return in->res;
}

/* Triton's batched dot, [B, M, K] x [B, K, N] (+ acc [B, M, N]): B 2-D dots, one per batch, and
 * only their work (B·M·N·K multiply-adds, on tensor cores where a 2-D dot runs on them).  The
 * operands (and acc) are unstacked into their batches and the B results stacked back, each at
 * most one round trip through shared memory (O(B·M·K + B·K·N + B·M·N) element moves); canonicalize
 * moves the unstacks into the loads that made the operands and splits a stored stack, so usually
 * nothing goes through shared memory.  Every dot is an ordinary 2-D one, so each target and
 * precision takes it as it takes any dot. */
static Val dot_batched(Call *c) {
    Gen *g = c->g;
    Loc loc = c->node->loc;
    Val a = c->v[0], b = c->v[1];
    int32_t B = a.t->shape[0], M = a.t->shape[1], N = b.t->shape[2];
    if (b.t->shape[0] != B || b.t->shape[1] != a.t->shape[2]) {
        diag_error(g->d, loc, "dot: batched operands must be [B, M, K] and [B, K, N], got %s and %s", gen_shape_str(g, 3, a.t->shape),
                   gen_shape_str(g, 3, b.t->shape));
        return val_err();
    }
    int32_t s[3] = {B, M, N};
    if ((int64_t)B * M * N > GEN_MAX_NUMEL) {
        diag_error(g->d, loc, "tensor of shape %s has more than %d elements", gen_shape_str(g, 3, s), GEN_MAX_NUMEL);
        return val_err();
    }
    ValueId *acc = NULL;
    if (has(c, 2)) {
        Val cv = c->v[2];
        if (!numeric(c, 2)) return val_err();
        if (cv.k == V_RT && (cv.t->rank != 3 || cv.t->shape[0] != B || cv.t->shape[1] != M || cv.t->shape[2] != N)) {
            diag_error(g->d, c->loc[2], "dot: accumulator shape %s does not match %s", gen_shape_str(g, cv.t->rank, cv.t->shape),
                       gen_shape_str(g, 3, s));
            return val_err();
        }
        if (cv.k == V_RT) acc = unstack(g, cv, loc);
    }
    ValueId *as = unstack(g, a, loc), *bs = unstack(g, b, loc);
    ValueId *r = ARENA_ARRAY(g->a, ValueId, B);
    const Type *pt = NULL;
    for (int k = 0; k < B; k++) {
        Call d = *c;
        d.v[0] = rt(g, as[k]), d.v[1] = rt(g, bs[k]);
        if (acc) d.v[2] = rt(g, acc[k]);
        Val p = bi_dot(&d);
        if (p.k == V_ERR) return p;
        r[k] = p.v, pt = p.t;
    }
    return rt(g, gen_emit(g, loc, OP_STACK, r, B, tir_with_shape(g->m, pt, 3, s)));
}

Val bi_dot(Call *c) {
    Gen *g = c->g;
    /* batched: each batch's 2-D dot takes its own slabs (f8 ones too, so each can read them natively) */
    if (val_rank(c->v[0]) == 3 && val_rank(c->v[1]) == 3) return dot_batched(c);
    /* f8 operands: f16 holds every f8e4m3 and f8e5m2 value exactly, so the product runs on
     * f16 tensor cores with an f32 accumulator */
    for (int i = 0; i < 2; i++) {
        Val v = c->v[i];
        if (v.k == V_RT && dtype_is_storage(val_dtype(v)) && v.t->rank)
            c->v[i] = rt(g, gen_emit(g, c->loc[i], OP_CAST, &v.v, 1, tir_with_dtype(g->m, v.t, DT_F16)));
    }
    for (int i = 0; i < 2; i++)
        if (!numeric(c, i)) return val_err();
    Val a = c->v[0], b = c->v[1];
    if (val_rank(a) != 2 || val_rank(b) != 2) {
        diag_error(g->d, c->node->loc, "dot: operands must be 2-D tensors (or both 3-D: a batched dot), got %s and %s", gen_shape_str(g, val_rank(a), val_shape(a)),
                   gen_shape_str(g, val_rank(b), val_shape(b)));
        return val_err();
    }
    if (a.t->dt != b.t->dt) {
        diag_error(g->d, c->loc[1], "dot: operand types differ: a is '%s', b is '%s' (cast one to the other's type: 'b as %s' or "
                   "'a as %s')", dtype_name(a.t->dt), dtype_name(b.t->dt), dtype_name(a.t->dt), dtype_name(b.t->dt));
        return val_err();
    }
    DType in = a.t->dt;
    if (in == DT_I1) {
        diag_error(g->d, c->node->loc, "dot: operands must be numbers, got 'i1'");
        return val_err();
    }
    int32_t M = a.t->shape[0], K = a.t->shape[1], N = b.t->shape[1];
    if (b.t->shape[0] != K) { /* at b; a K that matches a transpose is attention's dot(q, trans(k)) written without it */
        diag_error(g->d, c->loc[1], "dot: inner dimensions differ: a is %s, b is %s (a's columns meet b's rows)%s",
                   gen_shape_str(g, 2, a.t->shape), gen_shape_str(g, 2, b.t->shape),
                   b.t->shape[1] == K ? ": for a times b's transpose write dot(a, trans(b))"
                   : a.t->shape[0] == b.t->shape[0] ? ": for a's transpose times b write dot(trans(a), b)" : "");
        return val_err();
    }
    int32_t s[2] = {M, N};
    if ((int64_t)M * N > GEN_MAX_NUMEL) {
        diag_error(g->d, c->node->loc, "tensor of shape %s has more than %d elements", gen_shape_str(g, 2, s), GEN_MAX_NUMEL);
        return val_err();
    }
    DType acc_dt = dtype_is_float(in) ? (in == DT_F64 ? DT_F64 : DT_F32) : (dtype_bits(in) == 64 ? DT_I64 : DT_I32);
    /* out_dtype: the accumulator's type (Triton's); f16 only for f16 inputs (f16 mma accumulate) */
    const Type *out_t = NULL;
    if (has(c, 5)) {
        if (!dtype_arg(c, 5, &out_t)) return val_err();
        DType o = out_t->dt;
        bool okd = dtype_is_float(in) ? (o == DT_F32 || (o == DT_F16 && in == DT_F16) || (o == DT_F64 && in == DT_F64))
                                      : (o == DT_I32 || o == DT_I64) && dtype_bits(o) >= dtype_bits(in);
        if (!okd) {
            diag_error(g->d, c->loc[5], "dot: out_dtype '%s' does not suit '%s' inputs (f32 for float inputs, f16 for f16, i32 or i64 for integers)",
                       dtype_name(o), dtype_name(in));
            return val_err();
        }
        acc_dt = o;
    }
    const Type *acc_t = tensor_type(g, acc_dt, 2, s);
    ValueId acc;
    if (!has(c, 2)) {
        g->b.loc = c->node->loc;
        acc = dtype_is_float(acc_dt) ? tir_const_float(&g->b, acc_t, 0) : tir_const_int(&g->b, acc_t, 0);
    } else {
        Val cv = c->v[2];
        if (!numeric(c, 2)) return val_err();
        if (cv.k == V_CT) {
            acc = gen_coerce(g, cv, acc_dt, NULL, 2, s, c->loc[2]);
        } else {
            if (cv.t->rank != 2 || cv.t->shape[0] != M || cv.t->shape[1] != N) {
                diag_error(g->d, c->loc[2], "dot: accumulator shape %s does not match %s", gen_shape_str(g, cv.t->rank, cv.t->shape),
                           gen_shape_str(g, 2, s));
                return val_err();
            }
            if (dtype_is_float(cv.t->dt) != dtype_is_float(in)) {
                diag_error(g->d, c->loc[2], "dot: accumulator type '%s' does not suit '%s' inputs", dtype_name(cv.t->dt), dtype_name(in));
                return val_err();
            }
            acc = cv.v;
        }
    }
    if (out_t && tir_vtype(g->f, acc)->dt != out_t->dt) {
        diag_error(g->d, c->loc[5], "dot: out_dtype '%s' differs from the accumulator's type '%s'", dtype_name(out_t->dt),
                   dtype_name(tir_vtype(g->f, acc)->dt));
        return val_err();
    }
    int64_t tf32 = 0;
    if (has(c, 3) && !ct_int(c, 3, "allow_tf32", &tf32)) return val_err();
    /* input_precision (Triton's): "ieee" exact f32 FMA, "tf32" one tensor-core pass,
     * "tf32x3" three passes on the big and small halves of each operand */
    bool x3 = false;
    if (c->str[4]) {
        const char *p = c->str[4];
        if (strcmp(p, "ieee") && strcmp(p, "tf32") && strcmp(p, "tf32x3")) {
            diag_error(g->d, c->loc[4], "dot: input_precision must be \"ieee\", \"tf32\" or \"tf32x3\", got \"%s\"", p);
            return val_err();
        }
        if (has(c, 3)) {
            diag_error(g->d, c->loc[3], "dot: give either allow_tf32 or input_precision, not both");
            return val_err();
        }
        tf32 = strcmp(p, "ieee") != 0;
        x3 = !strcmp(p, "tf32x3");
    }
    /* as Triton's: the precision concerns f32 inputs only; given for others (FBGEMM's fp8 GEMMs pass their
     * allow_tf32 on, Triton 2's default was true for every dot) it changes nothing */
    if (in != DT_F32) tf32 = 0, x3 = false;
    if (x3) return dot_tf32x3(c, a, b, acc);
    ValueId r = gen_emit(g, c->node->loc, OP_DOT, (ValueId[]){a.v, b.v, acc}, 3, tir_vtype(g->f, acc));
    tir_val(g->f, r)->def->a.allow_tf32 = tf32 != 0;
    return rt(g, r);
}

/* multiple_of(input, values), max_contiguous(input, values), max_constancy(input, values):
 * Triton's hints (of integers and pointers; max_constancy of an i1 mask too).  values: one positive int per dim of input (a list; a scalar input or 1-d
 * tensor takes a plain int, and multiple_of's plain int holds along every dim).  The result is
 * input; a compile-time input needs no hint and stays as it is. */
static Val bi_hint(Call *c, BuiltinId id) {
    Gen *g = c->g;
    Val x = c->v[0], v = c->v[1];
    if (x.k == V_ERR || v.k == V_ERR) return val_err();
    if (!val_is_value(g, x, c->loc[0])) return val_err();
    int rank = val_rank(x), want = rank ? rank : 1;
    int32_t vals[TIR_MAX_RANK];
    int n;
    if (v.k == V_CT && dtype_is_int(v.dt) && v.dt != DT_I1) {
        n = id == BI_MULTIPLE_OF ? want : 1;
        for (int d = 0; d < n; d++) vals[d] = v.i < 1 || v.i > (1 << 30) ? 0 : (int32_t)v.i;
    } else if (v.k == V_SHAPE) {
        n = v.rank;
        memcpy(vals, v.shape, sizeof vals);
    } else {
        diag_error(g->d, c->loc[1], "'%s' expects its values as a compile-time int or a list of them, one per dimension",
                   c->bi->name);
        return val_err();
    }
    if (n != want) {
        diag_error(g->d, c->loc[1], "'%s' takes one value per dimension of its input: %d for %s %s, got %d", c->bi->name, want,
                   rank ? "a tensor of shape" : "a", rank ? gen_shape_str(g, rank, val_shape(x)) : "scalar", n);
        return val_err();
    }
    for (int d = 0; d < n; d++)
        if (vals[d] < 1 || vals[d] > (1 << 30)) {
            diag_error(g->d, c->loc[1], "the values of '%s' must be between 1 and 2^30", c->bi->name);
            return val_err();
        }
    DType dt = val_dtype(x);
    /* max_constancy also of a mask, as Triton's (triton_kernels' swiglu: runs of 16 equal mask bits let a masked
     * load go 16 elements wide); divisibility and contiguity say nothing about an i1 */
    if (!(dtype_is_int(dt) && (dt != DT_I1 || id == BI_MAX_CONSTANCY)) && dt != DT_PTR) {
        diag_error(g->d, c->loc[0], "'%s' is a hint about integers and pointers%s, got '%s'", c->bi->name,
                   id == BI_MAX_CONSTANCY ? " (and masks)" : "", gen_val_type_name(g, x));
        return val_err();
    }
    if (x.k == V_CT) return x;
    Inst *in = gen_emit_inst(g, c->node->loc, c->bi->op, &x.v, 1, x.t);
    memcpy(in->a.perm, vals, sizeof vals);
    return val_rt(g, in->res[0]);
}

/* assume(cond), Triton's: the compiler may take cond (a scalar or a tensor of i1) as true; a false
 * one is undefined.  A compile-time false is an error. */
static Val bi_assume(Call *c) {
    Gen *g = c->g;
    Val x = c->v[0];
    if (x.k == V_ERR || !val_is_value(g, x, c->loc[0])) return val_err();
    if (val_dtype(x) != DT_I1) {
        diag_error(g->d, c->loc[0], "'assume' expects a condition (i1), got '%s'", gen_val_type_name(g, x));
        return val_err();
    }
    if (x.k == V_CT) {
        if (!x.i) diag_error(g->d, c->loc[0], "'assume' of a condition that is false at compile time");
        return x.i ? (Val){.k = V_VOID} : val_err();
    }
    gen_emit_inst(g, c->node->loc, OP_ASSUME, &x.v, 1, NULL);
    return (Val){.k = V_VOID};
}

/* The built-ins of compose.c: arguments checked here, the ops composed there. */
static Val bi_compose(Call *c, BuiltinId id) {
    Gen *g = c->g;
    Loc loc = c->node->loc;
    switch (id) {
    case BI_JOIN: return compose_join(g, c->v[0], c->v[1], loc);
    case BI_INTERLEAVE: return compose_interleave(g, c->v[0], c->v[1], loc);
    case BI_CAT: {
        int64_t reorder = 0; /* accepted, never used: the order is always a then b */
        if (has(c, 2) && !bi_ct_flag(c, 2, "can_reorder", &reorder)) return val_err();
        int dim = 0;
        if (has(c, 3) && (!bi_tensor_arg(c, 0) || !bi_axis_arg(c, 3, c->v[0].t->rank, false, &dim))) return val_err();
        return compose_cat(g, c->v[0], c->v[1], dim, loc);
    }
    case BI_SPLIT: return compose_split(g, c->v[0], loc);
    case BI_RAVEL: return compose_ravel(g, c->v[0], loc);
    case BI_FLIP:
    case BI_GATHER: {
        if (!bi_tensor_arg(c, 0)) return val_err();
        int axis = c->v[0].t->rank - 1;
        int ai = id == BI_FLIP ? 1 : 2;
        if (has(c, ai) && !bi_axis_arg(c, ai, c->v[0].t->rank, false, &axis)) return val_err();
        if (id == BI_FLIP) return compose_flip(g, c->v[0], axis, loc);
        if (!val_is_value(g, c->v[1], c->loc[1])) return val_err();
        return compose_gather(g, c->v[0], c->v[1], axis, loc);
    }
    case BI_REDUCE:
    case BI_ASSOCIATIVE_SCAN:
    case BI_CUMPROD:
    case BI_REDUCE_OR:
    case BI_XOR_SUM: {
        Val x = c->v[0];
        Val first = x.k == V_TUPLE && x.nelems ? x.elems[0] : x;
        if (x.k != V_TUPLE && !bi_tensor_arg(c, 0)) return val_err();
        if (!val_is_value(g, first, c->loc[0])) return val_err();
        int rank = val_rank(first), axis = -1, axes[TIR_MAX_RANK], naxes = 0;
        if (id == BI_CUMPROD && !has(c, 1)) axis = 0;
        if (has(c, 1) && id == BI_CUMPROD && (!single_axis(c, 1) || !bi_axis_arg(c, 1, rank, false, &axis))) return val_err();
        if (has(c, 1) && id != BI_CUMPROD) { /* reduce, xor_sum, reduce_or: several axes too, highest first */
            if (!axes_arg(c, 1, rank, axes, &naxes)) return val_err();
            axis = axes[0];
        }
        if (axis < 0 && id != BI_REDUCE && id != BI_XOR_SUM && id != BI_REDUCE_OR) {
            diag_error(g->d, loc, "'%s' needs an axis", c->bi->name);
            return val_err();
        }
        int64_t flag = 0;
        bool bitwise = id == BI_XOR_SUM || id == BI_REDUCE_OR;
        int fi = id == BI_CUMPROD || bitwise ? 2 : 3; /* keep_dims or reverse */
        if (has(c, fi) && !bi_ct_flag(c, fi, id == BI_REDUCE || bitwise ? "keep_dims" : "reverse", &flag)) return val_err();
        if (id == BI_REDUCE) return reduce_axes(g, x, axes, naxes, c->fn[2], OP_COUNT, flag != 0, loc);
        if (id == BI_REDUCE_OR) { /* Triton's: integers (i1: any), every element when the axis is None */
            if (!numeric(c, 0)) return val_err();
            if (!dtype_is_int(val_dtype(x))) {
                diag_error(g->d, c->loc[0], "'reduce_or' expects integers, got '%s'", gen_val_type_name(g, x));
                return val_err();
            }
            return reduce_axes(g, x, axes, naxes, NULL, OP_OR, flag != 0, loc);
        }
        if (id == BI_XOR_SUM) { /* Triton's: integers (i1: the parity), every element when there is no axis */
            if (!numeric(c, 0)) return val_err();
            if (!dtype_is_int(val_dtype(x))) {
                diag_error(g->d, c->loc[0], "'xor_sum' expects integers, got '%s'", gen_val_type_name(g, x));
                return val_err();
            }
            return reduce_axes(g, x, axes, naxes, NULL, OP_XOR, flag != 0, loc);
        }
        if (id == BI_CUMPROD) {
            if (!numeric(c, 0)) return val_err();
            /* as Triton's (and sum's): integers narrower than 32 bits multiply in i32 (u32 unsigned, i1 included), not
             * wrapping; dtype= names the type to multiply in */
            DType dt = val_dtype(x);
            const Type *t;
            if (has(c, 3)) {
                if (!dtype_arg(c, 3, &t)) return val_err();
                if (t->rank || !(dtype_is_int(t->dt) || dtype_is_float(t->dt)) || t->dt == DT_I1) {
                    diag_error(g->d, c->loc[3], "'cumprod' multiplies in an integer or float type, not '%s'", gen_type_name(g, t));
                    return val_err();
                }
                if (t->dt != dt) x = gen_cast(g, x, t->dt, loc);
            } else if (dt == DT_I8 || dt == DT_I16) {
                x = gen_cast(g, x, DT_I32, loc);
            } else if (dt == DT_I1 || dt == DT_U8 || dt == DT_U16) {
                x = gen_cast(g, x, DT_U32, loc);
            }
        }
        return compose_scan(g, x, axis, id == BI_CUMPROD ? NULL : c->fn[2], OP_MUL, flag != 0, loc);
    }
    case BI_SORT:
    case BI_BITONIC_MERGE:
    case BI_TOPK: {
        if (!bi_tensor_arg(c, 0)) return val_err();
        int rank = c->v[0].t->rank, dim = rank - 1, di = id == BI_TOPK ? 2 : 1;
        if (has(c, di) && !bi_axis_arg(c, di, rank, false, &dim)) return val_err();
        if (dim != rank - 1) {
            diag_error(g->d, c->loc[di], "'%s' works along the last dimension only (as Triton)", c->bi->name);
            return val_err();
        }
        if (id == BI_TOPK) {
            /* Triton's: the k largest (descending=false: smallest), in that order; return_indices=true (ours) gives
             * the tuple (values, indices) */
            int64_t k, desc = 1, ind = 0;
            if (!ct_int(c, 1, "k", &k) || (has(c, 3) && !bi_ct_flag(c, 3, "descending", &desc)) ||
                (has(c, 4) && !bi_ct_flag(c, 4, "return_indices", &ind)))
                return val_err();
            return compose_topk(g, c->v[0], k, desc != 0, ind != 0, loc);
        }
        int64_t desc = 0;
        if (has(c, 2) && !bi_ct_flag(c, 2, "descending", &desc)) return val_err();
        return id == BI_SORT ? compose_sort(g, c->v[0], desc != 0, loc) : compose_bitonic_merge(g, c->v[0], desc != 0, loc);
    }
    case BI_HISTOGRAM: {
        int64_t bins;
        if (!ct_int(c, 1, "num_bins", &bins)) return val_err();
        return compose_histogram(g, c->v[0], bins, c->arg[2] ? c->v[2] : (Val){.k = V_NONE}, loc);
    }
    default: unreachable("bi_compose");
    }
}

/* Python's float() of a string, as PyTorch Inductor's kernels write it (tl.full([1], float("-inf"), tl.float32)):
 * Python's spellings of the infinities and NaN, an optional sign, any case, spaces around ("inf", "-Infinity",
 * "nan"), a weak float as a literal is; any other string is an error at it. */
static Val python_float_of_string(Gen *g, const char *s, Loc loc) {
    const char *a = s, *e = s + strlen(s);
    while (a < e && isspace((unsigned char)*a)) a++;
    while (e > a && isspace((unsigned char)e[-1])) e--;
    bool neg = a < e && *a == '-';
    if (a < e && (*a == '-' || *a == '+')) a++;
    size_t n = (size_t)(e - a);
    if ((n == 3 && !strncasecmp(a, "inf", 3)) || (n == 8 && !strncasecmp(a, "infinity", 8)))
        return val_ct_float(neg ? -INFINITY : INFINITY, DT_F32);
    if (n == 3 && !strncasecmp(a, "nan", 3)) return val_ct_float(neg ? -NAN : NAN, DT_F32);
    diag_error(g->d, loc, "'float' of the string \"%s\": only Python's infinities and NaN are read from a string (\"inf\", "
               "\"-inf\", \"infinity\", \"nan\", any case); write a number itself (1.5, not float(\"1.5\"))", s);
    return val_err();
}

/* map_elementwise(scalar_fn, x, y, ..., pack=1): Triton's, with its arguments bound here (any
 * number of tensors after the function); compose_map builds it. */
static Val builtin_map(Gen *g, const Node *node) {
    const Node *fnode = NULL, *packn = NULL, *argn[MAP_MAX_ARGS];
    int n = 0;
    for (int i = 0; i < node->nkids; i++) {
        const char *kw = node->kwnames ? node->kwnames[i] : NULL;
        const Node *k = node->kids[i];
        if (kw && !strcmp(kw, "pack")) packn = k;
        else if (kw && !strcmp(kw, "scalar_fn")) fnode = k;
        else if (kw) {
            diag_error(g->d, k->loc, "'map_elementwise' has no parameter '%s' (it takes scalar_fn, the tensors, and pack=)", kw);
            return val_err();
        } else if (!fnode) fnode = k;
        else if (n == MAP_MAX_ARGS) {
            diag_error(g->d, k->loc, "'map_elementwise' maps at most %d tensors", MAP_MAX_ARGS);
            return val_err();
        } else argn[n++] = k;
    }
    if (!fnode || !n) {
        diag_error(g->d, node->loc, "'map_elementwise' needs a fn and at least one tensor: map_elementwise(scalar_fn, x, ...)");
        return val_err();
    }
    const Decl *mfn = gen_fn_arg(g, fnode, "the first argument of 'map_elementwise'");
    if (!mfn) return val_err();
    int64_t pack = 1;
    if (packn) {
        Val pv = gen_expr(g, packn);
        if (pv.k == V_ERR) return val_err();
        if (pv.k != V_CT) {
            diag_error(g->d, packn->loc, "'pack' of 'map_elementwise' must be a compile-time constant");
            return val_err();
        }
        if (!val_ct_int_of(g, pv, packn->loc, "'pack' of 'map_elementwise'", &pack)) return val_err();
        if (pack < 1 || pack > MAP_MAX_PACK) {
            diag_error(g->d, packn->loc, "'pack' of 'map_elementwise' must be 1 to %d, got %lld", MAP_MAX_PACK, (long long)pack);
            return val_err();
        }
    }
    Val xs[MAP_MAX_ARGS];
    int r = 0;
    int32_t s[TIR_MAX_RANK] = {0};
    bool ok = true;
    for (int k = 0; k < n; k++) {
        xs[k] = gen_expr(g, argn[k]);
        if (!val_is_value(g, xs[k], argn[k]->loc)) {
            ok = false;
            continue;
        }
        if (val_dtype(xs[k]) == DT_PTR) {
            diag_error(g->d, argn[k]->loc, "'map_elementwise' of pointers: map their offsets, or load first");
            ok = false;
            continue;
        }
        if (!gen_broadcast_shapes(g, r, s, val_rank(xs[k]), val_shape(xs[k]), &r, s, argn[k]->loc)) ok = false;
    }
    if (!ok) return val_err();
    for (int k = 0; k < n; k++) xs[k] = val_rt(g, gen_coerce(g, xs[k], val_dtype(xs[k]), NULL, r, s, argn[k]->loc));
    return compose_map(g, mfn, xs, n, (int)pack, node->loc);
}

Val builtin_call(Gen *g, const Node *node) {
    int id = builtin_find(node->name);
    if (id == BI_MAP_ELEMENTWISE) return builtin_map(g, node);
    if (id == BI_INLINE_ASM_ELEMENTWISE) return builtin_inline_asm(g, node);
    if (id == BI_DOT_SCALED) return bi_dot_scaled(g, node);
    if (id == BI_STATIC_ASSERT || id == BI_DEVICE_ASSERT || id == BI_DEVICE_PRINT || id == BI_STATIC_PRINT)
        return builtin_debug(g, node, builtins[id].name);
    if (id == BI_PRINT) { /* Triton runs Python's print as tl.device_print; print(x, y) prints without a prefix */
        if (!node->nkids || node->kids[0]->kind != N_STR) {
            Node *call = arena_alloc(g->a, sizeof *call), *pre = arena_alloc(g->a, sizeof *pre);
            *pre = (Node){.kind = N_STR, .loc = node->loc, .name = ""};
            *call = *node;
            call->nkids = node->nkids + 1;
            call->kids = ARENA_ARRAY(g->a, Node *, call->nkids);
            call->kwnames = node->kwnames ? ARENA_ARRAY(g->a, const char *, call->nkids) : NULL;
            call->kids[0] = pre;
            for (int i = 0; i < node->nkids; i++) {
                call->kids[i + 1] = node->kids[i];
                if (node->kwnames) call->kwnames[i + 1] = node->kwnames[i];
            }
            node = call;
        }
        return builtin_debug(g, node, "device_print");
    }
    /* Triton's trans(x, 1, 0), permute(x, 2, 0, 1), reshape(x, 16, 8) and broadcast_to(x, 16, 8): the dimensions
     * after x as a list */
    if (id == BI_TRANS || id == BI_PERMUTE || id == BI_RESHAPE || id == BI_VIEW || id == BI_BROADCAST_TO) {
        int pos = 0;
        while (pos < node->nkids && !(node->kwnames && node->kwnames[pos])) pos++;
        bool scalars = pos > 2;
        for (int i = 1; i < pos && scalars; i++) scalars = node->kids[i]->kind != N_LIST && node->kids[i]->kind != N_TUPLE;
        if (scalars) {
            Node *list = arena_alloc(g->a, sizeof *list), *call = arena_alloc(g->a, sizeof *call);
            *list = (Node){.kind = N_LIST, .loc = node->kids[1]->loc, .kids = node->kids + 1, .nkids = pos - 1};
            *call = *node;
            call->nkids = node->nkids - (pos - 2);
            call->kids = ARENA_ARRAY(g->a, Node *, call->nkids);
            call->kwnames = node->kwnames ? ARENA_ARRAY(g->a, const char *, call->nkids) : NULL;
            call->kids[0] = node->kids[0], call->kids[1] = list;
            for (int i = pos; i < node->nkids; i++) {
                call->kids[i - pos + 2] = node->kids[i];
                if (call->kwnames) call->kwnames[i - pos + 2] = node->kwnames[i];
            }
            if (call->kwnames) call->kwnames[0] = call->kwnames[1] = NULL;
            node = call;
        }
    }
    const Builtin *bi = &builtins[id];
    Call c = {.g = g, .bi = bi, .node = node};
    const char *pn[MAX_BI_PARAMS];
    bool is_str[MAX_BI_PARAMS] = {0}, is_fn[MAX_BI_PARAMS] = {0}, is_list[MAX_BI_PARAMS] = {0};
    const char *alias[MAX_BI_PARAMS] = {0};
    int np = 0;
    char *ps = arena_strdup(g->a, bi->params);
    for (char *tok = ps; *tok && np < MAX_BI_PARAMS;) {
        pn[np++] = tok;
        char *sp = strchr(tok, ' ');
        if (sp) *sp = 0;
        char *colon = strchr(tok, ':');
        if (colon) {
            if (!strcmp(colon + 1, "fn")) is_fn[np - 1] = true;
            else if (!strcmp(colon + 1, "list")) is_list[np - 1] = true;
            else is_str[np - 1] = true;
            *colon = 0;
        }
        char *bar = strchr(tok, '|');
        if (bar) *bar = 0, alias[np - 1] = bar + 1;
        if (!sp) break;
        tok = sp + 1;
    }
    /* a keyword that is Triton's name of a parameter (and no parameter's own name) binds as that parameter */
    const char **kwn = NULL;
    for (int i = 0; node->kwnames && i < node->nkids; i++) {
        const char *kw = node->kwnames[i];
        bool own = false;
        for (int j = 0; kw && j < np; j++) own = own || !strcmp(kw, pn[j]);
        for (int j = 0; kw && !own && j < np; j++)
            if (alias[j] && !strcmp(kw, alias[j])) {
                if (!kwn) kwn = ARENA_ARRAY(g->a, const char *, node->nkids), memcpy(kwn, node->kwnames, sizeof *kwn * (size_t)node->nkids);
                kwn[i] = pn[j];
            }
    }
    if (kwn) {
        Node *call = arena_alloc(g->a, sizeof *call);
        *call = *node;
        call->kwnames = kwn;
        c.node = node = call;
    }
    /* parameters from the first string one on are keyword-only */
    int npos = 0, given = 0;
    while (npos < np && !is_str[npos]) npos++;
    for (int i = 0; i < node->nkids; i++) given += !(node->kwnames && node->kwnames[i]);
    if (npos < np && given > npos) {
        Str kw = {0};
        for (int i = npos; i < np; i++) str_printf(&kw, "%s%s", i > npos ? (i + 1 == np ? " and " : ", ") : "", pn[i]);
        const Node *extra = node->kids[npos];
        diag_error(g->d, extra->loc, "'%s' takes %d to %d positional arguments, got %d: %s %s given by name (%s=...)", bi->name,
                   bi->min, npos, given, kw.buf, np - npos == 1 ? "is" : "are", pn[npos]);
        str_free(&kw);
        return val_err();
    }
    if (!gen_bind_args(g, node, bi->name, pn, np, bi->min, c.arg, c.kw)) return val_err();
    bool ok = true;
    for (int i = 0; i < np; i++) {
        if (!c.arg[i]) {
            if (i < bi->min) {
                diag_error(g->d, node->loc, "'%s' is missing argument '%s'", bi->name, pn[i]);
                ok = false;
            }
            c.v[i] = (Val){.k = V_NONE};
            continue;
        }
        c.loc[i] = c.arg[i]->loc;
        if (is_str[i]) {
            bool named = c.arg[i]->kind == N_NAME && (gen_lookup_var(g, c.arg[i]->name) || gen_find_global(g, c.arg[i]->name));
            Val sv = named ? gen_expr(g, c.arg[i]) : (Val){.k = V_NONE};
            if (sv.k == V_STR) { /* a const or define holding a string: sem=SEM */
                c.str[i] = sv.s;
                c.v[i] = (Val){.k = V_NONE};
                continue;
            }
            /* None, or a const holding it, is Triton's default, as if not given (triton_kernels passes its weights'
             * cache_modifier=W_CACHE_MODIFIER, None unless a small block wants ".cg"; sem=None, scope=None,
             * input_precision=None and fp_downcast_rounding=None are Triton's defaults too) */
            if (c.arg[i]->kind == N_NONE || (named && sv.k == V_NONE)) {
                c.str[i] = NULL;
                c.v[i] = (Val){.k = V_NONE};
                continue;
            }
            if (c.arg[i]->kind != N_STR) {
                diag_error(g->d, c.loc[i], "argument '%s' of '%s' must be a string such as %s=\"%s\"", pn[i], bi->name, pn[i],
                           !strcmp(pn[i], "sem") ? "relaxed" : !strcmp(pn[i], "scope") ? "gpu" : !strcmp(pn[i], "eviction_policy") ? "evict_last"
                           : !strcmp(pn[i], "propagate_nan") ? "none" : ".cg");
                ok = false;
            }
            c.str[i] = c.arg[i]->name;
            c.v[i] = (Val){.k = V_NONE};
            continue;
        }
        if (is_list[i]) { /* [a, b, ...] of scalars, run-time or not: a tuple */
            const Node *ln = c.arg[i];
            if (ln->kind != N_LIST && ln->kind != N_TUPLE) {
                diag_error(g->d, c.loc[i], "argument '%s' of '%s' must be a list such as [m, n]", pn[i], bi->name);
                ok = false;
                c.v[i] = (Val){.k = V_NONE};
                continue;
            }
            Val t = {.k = V_TUPLE, .nelems = ln->nkids};
            t.elems = ARENA_ARRAY(g->a, Val, ln->nkids ? ln->nkids : 1);
            for (int k = 0; k < ln->nkids; k++) {
                t.elems[k] = gen_expr(g, ln->kids[k]);
                if (!val_is_value(g, t.elems[k], ln->kids[k]->loc)) ok = false;
                else if (val_rank(t.elems[k]) != 0 || !dtype_is_int(val_dtype(t.elems[k])) || val_dtype(t.elems[k]) == DT_I1) {
                    diag_error(g->d, ln->kids[k]->loc, "elements of '%s' of '%s' must be integer scalars, got '%s'", pn[i], bi->name,
                               gen_val_type_name(g, t.elems[k]));
                    ok = false;
                }
            }
            c.v[i] = t;
            continue;
        }
        if (is_fn[i]) {
            const Decl *fd = gen_fn_arg(g, c.arg[i], arena_printf(g->a, "argument '%s' of '%s'", pn[i], bi->name));
            if (!fd) ok = false;
            else c.fn[i] = fd;
            c.v[i] = (Val){.k = V_NONE};
            continue;
        }
        c.v[i] = gen_expr(g, c.arg[i]);
        if (c.v[i].k == V_ERR) ok = false;
        if (c.v[i].k == V_VOID) {
            gen_error_no_value(g, c.v[i], c.loc[i]);
            ok = false;
        }
    }
    if (!ok) return val_err();
    switch ((BuiltinId)id) {
    case BI_PROGRAM_ID:
    case BI_NUM_PROGRAMS: {
        int64_t axis;
        if (!ct_int(&c, 0, "axis", &axis)) return val_err();
        if (axis < 0 || axis > 2) {
            diag_error(g->d, c.loc[0], "axis of '%s' must be 0, 1 or 2, got %lld", bi->name, (long long)axis);
            return val_err();
        }
        Inst *in = gen_emit_inst(g, node->loc, bi->op, NULL, 0, tir_scalar(g->m, DT_I32));
        in->a.ival = axis;
        return rt(g, in->res[0]);
    }
    case BI_ARANGE: {
        int64_t s, e;
        bool have_s = ct_int(&c, 0, "start", &s), have_e = ct_int(&c, 1, "end", &e); /* both reported */
        if (!have_s || !have_e) return val_err();
        if (s < INT32_MIN || s > INT32_MAX || e < INT32_MIN || e > INT32_MAX || e <= s) {
            diag_error(g->d, node->loc, "'arange' needs start < end within i32, got %lld and %lld", (long long)s, (long long)e);
            return val_err();
        }
        if (e - s > GEN_MAX_NUMEL) {
            diag_error(g->d, node->loc, "arange of %lld elements is larger than %d", (long long)(e - s), GEN_MAX_NUMEL);
            return val_err();
        }
        int32_t n = (int32_t)(e - s);
        if (!gen_check_shape(g, 1, &n, node->loc)) return val_err();
        Inst *in = gen_emit_inst(g, node->loc, OP_ARANGE, NULL, 0, tensor_type(g, DT_I32, 1, &n));
        in->a.ival = s;
        in->a.ival2 = e;
        return rt(g, in->res[0]);
    }
    case BI_ZEROS_LIKE: { /* Triton's: zeros of input's shape and dtype */
        Val x = c.v[0];
        if (!val_is_value(g, x, c.loc[0])) return val_err();
        if (val_dtype(x) == DT_PTR) {
            diag_error(g->d, c.loc[0], "'zeros_like' of a pointer: only numbers have a zero");
            return val_err();
        }
        return rt(g, gen_coerce(g, val_ct_int(0, DT_I32), val_dtype(x), NULL, val_rank(x), val_shape(x), node->loc));
    }
    case BI_BROADCAST: { /* Triton's broadcast(input, other): both, broadcast to their common shape */
        int r;
        int32_t s[TIR_MAX_RANK];
        for (int k = 0; k < 2; k++)
            if (!val_is_value(g, c.v[k], c.loc[k])) return val_err();
        if (!args_shape(&c, 0, 2, &r, s)) return val_err();
        Val t = {.k = V_TUPLE, .nelems = 2, .elems = ARENA_ARRAY(g->a, Val, 2)};
        for (int k = 0; k < 2; k++)
            t.elems[k] = rt(g, gen_coerce(g, c.v[k], val_dtype(c.v[k]), c.v[k].k == V_RT ? c.v[k].t->pointee : NULL, r, s, c.loc[k]));
        return t;
    }
    case BI_DIV_RN:
    case BI_FDIV: { /* x / y on floats, rounded to nearest (what `/` is here; ieee_rounding is accepted) */
        int64_t ieee = 0, approx = 0; /* Triton's flags: the quotient here is correctly rounded either way */
        if (has(&c, 2) && !bi_ct_flag(&c, 2, "ieee_rounding", &ieee)) return val_err();
        if (has(&c, 3) && !bi_ct_flag(&c, 3, "approx", &approx)) return val_err();
        if (ieee && approx) {
            diag_error(g->d, c.loc[3], "'%s': approx and ieee_rounding cannot both be true", bi->name);
            return val_err();
        }
        for (int k = 0; k < 2; k++)
            if (!numeric(&c, k)) return val_err();
        return elementwise(&c, 0, 2, OP_DIV, true);
    }
    case BI_ZEROS:
    case BI_FULL: {
        int r;
        int32_t s[TIR_MAX_RANK];
        int di = id == BI_ZEROS ? 1 : 2;
        const Type *dt = NULL;
        if ((c.v[0].k == V_SHAPE && c.v[0].rank == 0) || (c.v[0].k == V_TUPLE && c.v[0].nelems == 0))
            r = 0; /* [], () (or shape_of(scalar)): a scalar, as tl.zeros([], f32) and tl.zeros((), f32) */
        else if (!bi_shape_arg(&c, 0, &r, s)) return val_err();
        if (has(&c, di) && !dtype_arg(&c, di, &dt)) return val_err();
        Val v = id == BI_ZEROS ? val_ct_int(0, DT_I32) : c.v[1];
        if (!val_is_value(g, v, c.loc[1])) return val_err();
        if (val_rank(v)) {
            diag_error(g->d, c.loc[1], "'full' expects a scalar value");
            return val_err();
        }
        DType d = dt ? dt->dt : id == BI_ZEROS ? DT_F32 : val_dtype(v);
        if (d == DT_PTR) {
            diag_error(g->d, node->loc, "'%s' cannot make pointer tensors", bi->name);
            return val_err();
        }
        if (v.k == V_CT && dtype_is_float(d)) gen_warn_const_conversion(g, v, d, c.loc[1], "'full'"); /* an integer dtype: exact, below */
        if (v.k == V_CT) v = gen_ct_cast_into(g, v, d, c.loc[1], "'full'");
        if (v.k == V_CT && !v.held && dtype_is_float(v.dt) && dtype_is_int(d) && d != DT_I1) {
            /* as `let i: i32 = 1.5` (and Triton's tl.full): a constant must be exact in the integer dtype,
             * where the conversion would truncate or saturate silently */
            CtExact e = gen_ct_exact_in(v, d);
            if (e != CT_EXACT) {
                diag_error(g->d, c.loc[1], "'%s' of %s: the value %s is not %s", bi->name, dtype_name(d), arena_double(g->a, v.f),
                           e == CT_RANGE ? "in its range" : "an integer");
                return val_err();
            }
        }
        return rt(g, gen_coerce(g, v, d, NULL, r, s, node->loc));
    }
    case BI_RESHAPE:
    case BI_VIEW:
    case BI_TRANS:
    case BI_EXPAND_DIMS:
    case BI_UNSQUEEZE:
    case BI_SQUEEZE:
    case BI_BROADCAST_TO: return bi_shape_op(&c, id);
    case BI_WHERE: return bi_where(&c);
    case BI_CAST:
    case BI_BITCAST: { /* cast(x, T, bitcast=false), bitcast(x, T) */
        const Type *t;
        int64_t bc = id == BI_BITCAST;
        if (!dtype_arg(&c, 1, &t) || (id == BI_CAST && has(&c, 2) && !bi_ct_flag(&c, 2, "bitcast", &bc))) return val_err();
        if (id == BI_CAST && c.str[3]) return cast_rounding(&c, t, bc != 0);
        Val r = gen_convert(g, c.v[0], t, bc != 0, node->loc);
        if (r.k == V_CT) r.held = true; /* a typed scalar, as Triton's tl.cast gives: strong in promotion */
        return r;
    }
    case BI_TO_TENSOR: { /* Triton's tl.to_tensor: a constant as a typed scalar (strong in promotion), as `let` holds it */
        Val v = c.v[0];
        if (!val_is_value(g, v, c.loc[0])) return val_err();
        return gen_hold(v);
    }
    case BI_CONSTEXPR: { /* Triton's tl.constexpr(x): x, known at compile time; a number weak, as a constexpr's */
        Val v = c.v[0];
        if (v.k == V_ERR) return v;
        if (!ct_whole(v)) { /* Triton wraps a tensor unchanged and computes with it (xformers' causal diagonal,
                             * `diag_idx_shifted = tl.constexpr(diag_idx - NUM_QUERIES_CAUSAL + kv_len)`) */
            diag_warning(g->d, c.loc[0], "'constexpr' of a value known only at run time is that value, computed at run time "
                         "(Triton's tl.constexpr wraps it unchanged); nothing here is known at compile time");
            return v;
        }
        return weak_copy(g, v);
    }
    case BI_INT:
    case BI_FLOAT: { /* Python's int(x) and float(x) of a compile-time number: a weak constant, as Triton's are */
        Val v = c.v[0];
        if (v.k == V_ERR) return v;
        if (v.k == V_STR && id == BI_FLOAT) return python_float_of_string(g, v.s, c.loc[0]);
        if (v.k != V_CT) {
            diag_error(g->d, c.loc[0], "'%s' of %s: Python's int() and float() convert compile-time numbers, as in Triton; convert a "
                       "run-time value with 'x as %s'", bi->name,
                       v.k == V_RT ? "a value known only at run time" : v.k == V_NONE ? "None" : gen_a(g, gen_val_type_name(g, v), false),
                       id == BI_INT ? "i32" : "f32");
            return val_err();
        }
        bool fl = dtype_is_float(v.dt);
        double f = fl ? v.f : v.dt == DT_U64 ? (double)(uint64_t)v.i : (double)v.i;
        if (id == BI_FLOAT) return val_ct_float(f, DT_F32);
        if (!fl) return v.dt == DT_U64 && v.i < 0 ? val_ct_int(v.i, DT_U64) : val_ct_int(v.i, v.i == (int32_t)v.i ? DT_I32 : DT_I64);
        if (!(f > -9223372036854775808.0 - 1.0 && f < 9223372036854775808.0)) { /* NaN, infinities, past i64 */
            diag_error(g->d, c.loc[0], "'int' of %s: not an integer that fits in i64", arena_double(g->a, f));
            return val_err();
        }
        int64_t i = (int64_t)f; /* truncated toward zero, as Python's int() */
        return val_ct_int(i, i == (int32_t)i ? DT_I32 : DT_I64);
    }
    case BI_DTYPE_OF: { /* the element type of a value, as a type: cast(y, dtype_of(x)) */
        Val v = c.v[0];
        if (!val_is_value(g, v, c.loc[0])) return val_err();
        DType dt = val_dtype(v);
        if (dt == DT_PTR) {
            diag_error(g->d, c.loc[0], "'dtype_of' of a pointer: only numbers have a dtype to cast to");
            return val_err();
        }
        return (Val){.k = V_DTYPE, .t = tir_scalar(g->m, dt)};
    }
    case BI_FMA: return elementwise(&c, 0, 3, OP_FMA, true);
    case BI_ATAN2:
    case BI_FMOD:
    case BI_POW:
    case BI_HYPOT:
    case BI_COPYSIGN: return elementwise(&c, 0, 2, bi->op, true);
    case BI_UMULHI:
    case BI_POPC:
    case BI_CLZ: return bi_bits(&c);
    case BI_ISNAN:
    case BI_ISINF:
    case BI_SIGNBIT: return bi_classify(&c, (BuiltinId)id);
    case BI_CLAMP: { /* minimum(maximum(x, lo), hi): a NaN x stays NaN, or with propagate_nan="none" gives lo */
        bool num;
        if (!nan_mode(&c, 3, &num)) return val_err();
        Val t = minmax(&c, 0, OP_MAX, num);
        if (t.k == V_ERR) return t;
        c.v[1] = t;
        c.loc[1] = node->loc;
        return gen_hold(minmax(&c, 1, OP_MIN, num));
    }
    case BI_ADD:
    case BI_SUB:
    case BI_MUL: {
        int64_t sanitize = 1;
        if (has(&c, 2) && !bi_ct_flag(&c, 2, "sanitize_overflow", &sanitize)) return val_err();
        return gen_binop(g, id == BI_ADD ? TK_PLUS : id == BI_SUB ? TK_MINUS : TK_STAR, c.v[0], c.v[1], node->loc);
    }
    case BI_MINIMUM:
    case BI_MAXIMUM: { /* of constants a typed scalar, as Triton's tl.minimum (Python's min of constexprs is one) */
        bool num;
        if (!nan_mode(&c, 2, &num)) return val_err();
        return gen_hold(minmax(&c, 0, bi->op, num));
    }
    case BI_MIN:
    case BI_MAX: /* as Triton's tl.max(x, axis): the second argument is the axis, never an operand */
        /* min(a, b) of a scalar (Python's builtin in a Triton kernel, `min(num_pid_m - first, GROUP_M)`): there is
         * no axis to reduce, so it is minimum(a, b) */
        if (val_rank(c.v[0]) == 0 && (c.v[0].k == V_CT || c.v[0].k == V_RT) && has(&c, 1) && !c.kw[1] && !has(&c, 2) && !has(&c, 3) &&
            !has(&c, 4))
            return minmax(&c, 0, bi->op, false);
        if (has(&c, 1) && !c.kw[1] && c.v[1].k != V_TUPLE && c.v[1].k != V_SHAPE &&
            (c.v[1].k != V_CT || !dtype_is_int(c.v[1].dt) || c.v[1].dt == DT_I1)) {
            diag_error(g->d, c.loc[1], "the second argument of '%s' is the axis to reduce along (as Triton's tl.%s); for the "
                       "element-wise %s of two values write '%s(a, b)'", bi->name, bi->name, id == BI_MAX ? "maximum" : "minimum",
                       id == BI_MAX ? "maximum" : "minimum");
            return val_err();
        }
        if (has(&c, 2)) { /* return_indices: (max, argmax), ties to the lowest index whichever tie break is asked; the
                           * value is the element at that index (of +0.0 then -0.0, the +0.0 at index 0), as Triton's
                           * one reduction of (value, index) pairs gives */
            int64_t ri = 0, tb = 1;
            if (!ct_int(&c, 2, "return_indices", &ri) || (has(&c, 3) && !ct_int(&c, 3, "return_indices_tie_break_left", &tb)))
                return val_err();
            if (ri) {
                Val v = val_err(), i = bi_reduce(&c, id == BI_MAX ? RED_ARGMAX : RED_ARGMIN, OP_REDUCE, 4, -1, &v);
                if (i.k == V_ERR) return i;
                Val t = {.k = V_TUPLE, .nelems = 2, .elems = ARENA_ARRAY(g->a, Val, 2)};
                t.elems[0] = v, t.elems[1] = i;
                return t;
            }
        }
        /* as Triton's tl.max/tl.min (without indices): values narrower than 32 bits are reduced as f32 or i32 (the
         * same values, but x - max(x, 1)[:, None] of an f16 x is then computed in f32, as there) */
        if (c.v[0].k == V_RT && c.v[0].t->rank && (dtype_is_float(c.v[0].t->dt) || dtype_is_int(c.v[0].t->dt)) &&
            c.v[0].t->dt != DT_PTR && !dtype_is_storage(c.v[0].t->dt) && dtype_bits(c.v[0].t->dt) < 32)
            c.v[0] = gen_cast(g, c.v[0], dtype_is_float(c.v[0].t->dt) ? DT_F32 : DT_I32, c.loc[0]);
        return bi_reduce(&c, bi->red, OP_REDUCE, 4, -1, NULL);
    case BI_SUM: return bi_reduce(&c, bi->red, OP_REDUCE, 2, 3, NULL);
    case BI_ARGMAX:
    case BI_ARGMIN: { /* tie_break_left: the lowest index either way (a valid answer for false too) */
        int64_t tb = 1;
        if (has(&c, 2) && !bi_ct_flag(&c, 2, "tie_break_left", &tb)) return val_err();
        return bi_reduce(&c, bi->red, OP_REDUCE, 3, -1, NULL);
    }
    case BI_CUMSUM: {
        int64_t rev = 0;
        if (has(&c, 2) && !bi_ct_flag(&c, 2, "reverse", &rev)) return val_err();
        if (!rev) return bi_reduce(&c, RED_SUM, OP_SCAN, -1, 3, NULL);
        /* reverse: out[i] = x[n-1] + ... + x[i], the same order as a scan of flip(x) */
        int axis = 0;
        if (!numeric(&c, 0) || !bi_tensor_arg(&c, 0) || (has(&c, 1) && !bi_axis_arg(&c, 1, c.v[0].t->rank, false, &axis))) return val_err();
        c.v[0] = compose_flip(g, c.v[0], axis, node->loc);
        c.v[1] = val_ct_int(axis, DT_I32);
        Val s = bi_reduce(&c, RED_SUM, OP_SCAN, -1, 3, NULL);
        return s.k == V_ERR ? s : compose_flip(g, s, axis, node->loc);
    }
    case BI_PERMUTE: return bi_shape_op(&c, BI_TRANS);
    case BI_DOT: return bi_dot(&c);
    case BI_LOAD: return bi_load(&c);
    case BI_STORE: return bi_store(&c);
    case BI_ATOMIC_LOAD: return bi_atomic_access(&c, false);
    case BI_ATOMIC_STORE: return bi_atomic_access(&c, true);
    case BI_ATOMIC_POLL: return bi_atomic_poll(&c);
    case BI_EXPECT_ZERO: return bi_expect_zero(&c);
    case BI_MAKE_BLOCK_PTR: return bi_make_block_ptr(&c);
    case BI_ADVANCE: return bi_advance(&c);
    case BI_MAKE_TENSOR_DESCRIPTOR: return bi_make_desc(&c);
    case BI_LOAD_TENSOR_DESCRIPTOR: return bi_desc_access(&c, false);
    case BI_STORE_TENSOR_DESCRIPTOR: return bi_desc_access(&c, true);
    case BI_ATOMIC_ADD_TENSOR_DESCRIPTOR:
    case BI_ATOMIC_MAX_TENSOR_DESCRIPTOR:
    case BI_ATOMIC_MIN_TENSOR_DESCRIPTOR:
    case BI_ATOMIC_AND_TENSOR_DESCRIPTOR:
    case BI_ATOMIC_OR_TENSOR_DESCRIPTOR:
    case BI_ATOMIC_XOR_TENSOR_DESCRIPTOR: return bi_desc_atomic(&c);
    case BI_ATOMIC_ADD:
    case BI_ATOMIC_MAX:
    case BI_ATOMIC_MIN:
    case BI_ATOMIC_XCHG:
    case BI_ATOMIC_AND:
    case BI_ATOMIC_OR:
    case BI_ATOMIC_XOR:
    case BI_ATOMIC_CAS: return bi_atomic(&c);
    case BI_NUM_SMS: return val_ct_int(g->opt->num_sms > 0 ? g->opt->num_sms : 132, DT_I32); /* jit: the context's count */
    case BI_MULTIPLE_OF:
    case BI_MAX_CONTIGUOUS:
    case BI_MAX_CONSTANCY: return bi_hint(&c, (BuiltinId)id);
    case BI_ASSUME: return bi_assume(&c);
    case BI_DEBUG_BARRIER:
    case BI_GDC_WAIT:
    case BI_GDC_LAUNCH_DEPENDENTS: gen_emit_inst(g, node->loc, bi->op, NULL, 0, NULL); return (Val){.k = V_VOID};
    default:
        if (bi->kind == BK_MATH) return bi_math(&c);
        if (bi->kind == BK_COMPOSE) return bi_compose(&c, (BuiltinId)id);
        if (bi->kind == BK_QUERY) return bi_query(&c);
        unreachable("builtin");
    }
}
