/* builtins_query.c - compile-time questions about a value's shape and a type, the function
 * forms of Triton's attributes (there are no methods here):
 *   shape_of(x), shape_of(x, d)   x.shape (a list: a shape argument anywhere), x.shape[d]
 *   numel(x), rank(x)             x.numel, len(x.shape)
 *   len(t)                        Python's len of a tuple or a list (len(x.shape), len(descs))
 *   zip(a, b, ...), enumerate(t)  Python's, of tuples and lists: tuples of tuples, for `for (p, s) in zip(ptrs, strides)`
 *   is_float(T), is_int(T),       T.is_floating(), T.is_int(), T.is_int_signed(),
 *   is_signed(T), is_ptr(T),      T.is_ptr(), T.primitive_bitwidth, T.is_fp8()
 *   bitwidth(T), is_fp8(T)
 *   element_type(p)               p.dtype.element_ty
 *   pointer_type(T)               tl.pointer_type(T): the type *T (a table's i64 as a pointer, `as pointer_type(f16)`)
 *   next_power_of_2(n)            triton.next_power_of_2(n), of a compile-time integer
 *   get_int_dtype(bits, signed)   tl.core.get_int_dtype: the integer type of a width (a sort's bits of any dtype)
 *   cuda_capability_geq(M, m=0)   triton.language.target_info's: whether the target compiled for (sm_90a: 9.0) is
 *   is_cuda(), is_hip()           compute capability M.m or later; true; false
 * Every answer is a compile-time value (an i32, an i1, a list or a type), so an `if` on one picks
 * code at compile time and static_assert checks it.  T is a type (f16, dtype_of(x), a const
 * holding one) or a value, standing for its element type.  builtins.c binds the arguments and
 * dispatches here by the builtin's kind (BK_QUERY). */
#include "builtins.h"
#include "support/target.h"

#include <string.h>

/* v, for a message: "a type", "a list", "None", ... */
static const char *what(Gen *g, Val v) {
    const char *n = gen_val_type_name(g, v);
    return v.k == V_NONE ? n : gen_a(g, n, false);
}

/* Argument 0 as a value whose shape is asked for: a tensor or a scalar, run-time or not. */
static bool shaped_arg(Call *c) {
    Val v = c->v[0];
    if (v.k == V_CT || v.k == V_RT) return true;
    if (v.k != V_ERR)
        diag_error(c->g->d, c->loc[0], "'%s' expects a tensor or a scalar, got %s", c->bi->name, what(c->g, v));
    return false;
}

/* Argument i as a type: a type itself, or a value standing for its element type (a pointer value: its pointer type). */
static const Type *type_arg(Call *c, int i) {
    Gen *g = c->g;
    Val v = c->v[i];
    if (v.k == V_DTYPE) return v.t;
    if (v.k == V_CT) return tir_scalar(g->m, v.dt);
    if (v.k == V_RT) return v.t->dt == DT_PTR ? tir_ptr(g->m, v.t->pointee) : tir_scalar(g->m, v.t->dt);
    if (v.k != V_ERR)
        diag_error(g->d, c->loc[i], "'%s' expects a type (f16, dtype_of(x), a const holding one) or a value, got %s", c->bi->name,
                   what(g, v));
    return NULL;
}

static Val ct_i32(int64_t i) { return val_ct_int(i, DT_I32); }
static Val ct_i1(bool b) { return val_ct_int(b, DT_I1); }

Val bi_query(Call *c) {
    Gen *g = c->g;
    switch ((QueryKind)c->bi->red) {
    case Q_SHAPE_OF: {
        if (!shaped_arg(c)) return val_err();
        int r = val_rank(c->v[0]);
        const int32_t *s = val_shape(c->v[0]);
        if (!has(c, 1)) {
            Val l = {.k = V_SHAPE, .rank = r};
            for (int k = 0; k < r; k++) l.shape[k] = s[k];
            return l;
        }
        int64_t d;
        if (!val_ct_int_of(g, c->v[1], c->loc[1], "the dimension of 'shape_of'", &d)) return val_err();
        if (d < -r || d >= r) {
            diag_error(g->d, c->loc[1], "dimension %lld is out of range for %s of shape %s", (long long)d,
                       r ? "a tensor" : "a scalar", gen_shape_str(g, r, s));
            return val_err();
        }
        return ct_i32(s[d < 0 ? d + r : d]);
    }
    case Q_NUMEL: {
        if (!shaped_arg(c)) return val_err();
        int64_t n = 1;
        for (int k = 0; k < val_rank(c->v[0]); k++) n *= val_shape(c->v[0])[k];
        return ct_i32(n);
    }
    case Q_RANK: return shaped_arg(c) ? ct_i32(val_rank(c->v[0])) : val_err();
    case Q_LEN: {
        Val v = c->v[0];
        if (v.k == V_TUPLE) return ct_i32(v.nelems);
        if (v.k == V_SHAPE) return ct_i32(v.rank);
        if (v.k == V_STR) { /* Python's length: characters, so UTF-8 continuation bytes do not count */
            int64_t n = 0;
            for (const unsigned char *p = (const unsigned char *)v.s; *p; p++) n += (*p & 0xC0) != 0x80;
            return ct_i32(n);
        }
        if (v.k == V_CT || v.k == V_RT)
            diag_error(g->d, c->loc[0], "'len' expects a tuple or a list, got %s: the length of a tensor's first dimension is "
                       "shape_of(x, 0), its number of dimensions rank(x)",
                       val_rank(v) ? arena_printf(g->a, "a tensor of shape %s", gen_shape_str(g, val_rank(v), val_shape(v))) : "a scalar");
        else if (v.k != V_ERR) diag_error(g->d, c->loc[0], "'len' expects a tuple or a list, got %s", what(g, v));
        return val_err();
    }
    case Q_ZIP:
    case Q_ENUMERATE: { /* tuples of tuples, as long as the shortest input (Python's zip); compile-time structure only */
        bool en = c->bi->red == Q_ENUMERATE;
        int n = en ? 1 : 0;
        Val in[MAX_BI_PARAMS] = {{0}};
        for (int i = 0; i < MAX_BI_PARAMS && (en ? i < 1 : has(c, i)); i++, n += !en) {
            Val v = gen_list_as_tuple(g, c->v[i]);
            if (v.k != V_TUPLE || gen_is_record(v)) {
                if (v.k != V_ERR)
                    diag_error(g->d, c->loc[i], "'%s' expects a tuple or a list, got %s%s", c->bi->name, what(g, v),
                               (v.k == V_RT || v.k == V_CT) && !val_rank(v) && dtype_is_int(val_dtype(v))
                               ? " (a loop over a run-time count is 'for i in range(n)')" : "");
                return val_err();
            }
            in[i] = v;
        }
        int64_t start = 0;
        if (en && has(c, 1) && !val_ct_int_of(g, c->v[1], c->loc[1], "the start of 'enumerate'", &start)) return val_err();
        int len = in[0].nelems;
        for (int i = 1; i < n; i++) len = in[i].nelems < len ? in[i].nelems : len;
        Val t = {.k = V_TUPLE, .nelems = len, .elems = ARENA_ARRAY(g->a, Val, len ? len : 1)};
        for (int k = 0; k < len; k++) {
            int w = en ? 2 : n;
            Val e = {.k = V_TUPLE, .nelems = w, .elems = ARENA_ARRAY(g->a, Val, w)};
            if (en) e.elems[0] = val_ct_int(start + k, start + k == (int32_t)(start + k) ? DT_I32 : DT_I64), e.elems[1] = in[0].elems[k];
            else
                for (int i = 0; i < n; i++) e.elems[i] = in[i].elems[k];
            t.elems[k] = e;
        }
        return t;
    }
    case Q_IS_FLOAT:
    case Q_IS_FP8:
    case Q_IS_INT:
    case Q_IS_SIGNED:
    case Q_IS_PTR:
    case Q_BITWIDTH: {
        const Type *t = type_arg(c, 0);
        if (!t) return val_err();
        switch ((QueryKind)c->bi->red) {
        case Q_IS_FLOAT: return ct_i1(dtype_is_float(t->dt));
        case Q_IS_FP8: return ct_i1(t->dt == DT_F8E4M3 || t->dt == DT_F8E5M2);
        case Q_IS_INT: return ct_i1(dtype_is_int(t->dt));
        case Q_IS_SIGNED: return ct_i1(dtype_is_int(t->dt) && dtype_is_signed(t->dt));
        case Q_IS_PTR: return ct_i1(t->dt == DT_PTR);
        default: return ct_i32(dtype_bits(t->dt));
        }
    }
    case Q_ELEMENT_TYPE: {
        /* a block pointer's or a tensor descriptor's: its base's (Triton's p_o.dtype.element_ty, a block type whose
         * scalar `.to()` takes: fla's b_o.to(p_o.dtype.element_ty)) */
        if (gen_is_record(c->v[0])) return (Val){.k = V_DTYPE, .t = c->v[0].elems[1].t->pointee};
        const Type *t = type_arg(c, 0);
        if (!t) return val_err();
        if (t->dt != DT_PTR) {
            diag_error(g->d, c->loc[0], "'element_type' expects a pointer, got '%s' (the type of a number is dtype_of(x))",
                       gen_type_name(g, t));
            return val_err();
        }
        return (Val){.k = V_DTYPE, .t = t->pointee};
    }
    case Q_POINTER_TYPE: { /* Triton's tl.pointer_type(tl.float16), as tutorial 08 casts a table's i64: *f16 */
        const Type *t = type_arg(c, 0);
        if (!t) return val_err();
        return (Val){.k = V_DTYPE, .t = tir_ptr(g->m, t)};
    }
    case Q_NEXT_POWER_OF_2: { /* the least power of 2 >= n (0 of 0, as Triton's bit trick gives); i32 unless it needs i64 */
        int64_t n;
        Val v = c->v[0];
        if (v.k == V_RT) {
            diag_error(g->d, c->loc[0], "'next_power_of_2' needs a compile-time integer (a block size), not a run-time value");
            return val_err();
        }
        if (!val_ct_int_of(g, v, c->loc[0], "the argument of 'next_power_of_2'", &n)) return val_err();
        if (n < 0 || n > ((int64_t)1 << 62)) {
            diag_error(g->d, c->loc[0], "'next_power_of_2' of %lld: expected 0 to 2^62", (long long)n);
            return val_err();
        }
        int64_t p = n == 0 ? 0 : 1;
        while (p < n) p <<= 1;
        return val_ct_int(p, p <= INT32_MAX && v.dt != DT_I64 && v.dt != DT_U64 ? DT_I32 : DT_I64);
    }
    case Q_GET_INT_DTYPE: { /* Triton's tl.core.get_int_dtype(bitwidth=x.dtype.primitive_bitwidth, signed=True) */
        int64_t bits, sgn;
        if (!val_ct_int_of(g, c->v[0], c->loc[0], "the bit width of 'get_int_dtype'", &bits) ||
            !val_ct_int_of(g, c->v[1], c->loc[1], "'signed' of 'get_int_dtype'", &sgn))
            return val_err();
        static const DType of[2][4] = {{DT_U8, DT_U16, DT_U32, DT_U64}, {DT_I8, DT_I16, DT_I32, DT_I64}};
        int k = bits == 8 ? 0 : bits == 16 ? 1 : bits == 32 ? 2 : bits == 64 ? 3 : -1;
        if (bits == 1) return (Val){.k = V_DTYPE, .t = tir_scalar(g->m, DT_I1)};
        if (k < 0) {
            diag_error(g->d, c->loc[0], "'get_int_dtype' of %lld bits: the integer types have 1, 8, 16, 32 or 64", (long long)bits);
            return val_err();
        }
        return (Val){.k = V_DTYPE, .t = tir_scalar(g->m, of[sgn != 0][k])};
    }
    case Q_CUDA_CAPABILITY_GEQ: { /* cuda_capability_geq(9) on sm_90a, (8, 6) on sm_86 and sm_89 */
        int64_t major, minor = 0;
        if (!val_ct_int_of(g, c->v[0], c->loc[0], "the major version of 'cuda_capability_geq'", &major) ||
            (has(c, 1) && !val_ct_int_of(g, c->v[1], c->loc[1], "the minor version of 'cuda_capability_geq'", &minor)))
            return val_err();
        if (major < 0 || minor < 0 || minor > 9) {
            diag_error(g->d, c->loc[minor < 0 || minor > 9 ? 1 : 0], "'cuda_capability_geq(%lld, %lld)': a compute capability is "
                       "MAJOR, MINOR with MINOR 0 to 9 (9, 0 for Hopper)", (long long)major, (long long)minor);
            return val_err();
        }
        const Target *t = target_find(g->opt->arch);
        return val_ct_int(t && t->sm >= major * 10 + minor, DT_I1);
    }
    case Q_IS_CUDA: return val_ct_int(1, DT_I1);
    case Q_IS_HIP: return val_ct_int(0, DT_I1);
    }
    unreachable("query builtin");
}
