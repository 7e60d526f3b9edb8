/* builtins.h - a built-in call being generated, shared by builtins.c, builtins_mem.c (loads, stores,
 * atomics) and descriptors.c (tensor descriptors and block pointers).  Internal to lang/. */
#ifndef TILE_LANG_BUILTINS_H
#define TILE_LANG_BUILTINS_H

#include "gen.h"

typedef enum BiKind { BK_PLAIN, BK_MATH, BK_RED, BK_ATOMIC, BK_COMPOSE, BK_QUERY } BiKind;

/* What a BK_QUERY builtin asks (its attribute kind): builtins_query.c */
typedef enum QueryKind { Q_SHAPE_OF, Q_NUMEL, Q_RANK, Q_LEN, Q_IS_FLOAT, Q_IS_FP8, Q_IS_INT, Q_IS_SIGNED, Q_IS_PTR, Q_BITWIDTH, Q_ELEMENT_TYPE, Q_POINTER_TYPE,
                         Q_NEXT_POWER_OF_2, Q_ZIP, Q_ENUMERATE, Q_GET_INT_DTYPE,
                         Q_CUDA_CAPABILITY_GEQ, Q_IS_CUDA, Q_IS_HIP } QueryKind;

typedef struct Builtin {
    const char *name;
    int min;
    const char *params;
    Op op;
    BiKind kind;
    int red;
} Builtin;

enum { MAX_BI_PARAMS = 8 };

/* One call being generated: its arguments, evaluated. */
typedef struct Call {
    Gen *g;
    const Builtin *bi;
    const Node *node;
    const Node *arg[MAX_BI_PARAMS];
    bool kw[MAX_BI_PARAMS];
    Val v[MAX_BI_PARAMS];
    Loc loc[MAX_BI_PARAMS];
    const char *str[MAX_BI_PARAMS]; /* string parameters: the literal given, or NULL */
    const Decl *fn[MAX_BI_PARAMS];  /* function parameters: the fn named, or NULL */
} Call;

/* Argument i was given (and is not None). */
static inline bool has(const Call *c, int i) { return c->arg[i] && c->v[i].k != V_NONE; }

/* builtins.c */
bool bi_shape_arg(Call *c, int i, int *rank, int32_t *shape); /* a compile-time shape: [64, 64], (64, 64) or 64 */
bool bi_ct_flag(Call *c, int i, const char *pname, int64_t *out); /* a switch argument: true/false, 1/0 */
bool bi_axis_arg(Call *c, int i, int rank, bool allow_end, int *axis); /* a compile-time axis, negative from the end */
bool bi_tensor_arg(Call *c, int i); /* a tensor, not a scalar */
bool bi_numeric(Call *c, int i);                                    /* a number (not a pointer, string, ...) */
DType bi_args_dtype(Call *c, int first, int n, bool *any_rt);      /* the promoted type of n arguments */
bool bi_args_fit(Call *c, int first, int n, DType dt);             /* their constants fit dt */
bool bi_args_shape(Call *c, int first, int n, int *r, int32_t *s); /* their broadcast shape */
const Builtin *bi_where_entry(void);                               /* where's table entry, for the ternary's Call */

/* builtins_cond.c */
Val bi_where(Call *c); /* where(cond, a, b) */

/* builtins_shape.c */
Val bi_shape_op(Call *c, int id); /* reshape, view, trans/permute, expand_dims/unsqueeze, squeeze, broadcast_to (BI_<NAME>) */

/* builtins_mem.c */
bool bi_ptr_arg(Call *c, int i);                              /* a pointer (scalar or tensor) */
Val bi_load(Call *c);   /* load(ptr, mask, other, ...): block pointers through descriptors.c */
Val bi_store(Call *c);  /* store(ptr, value, mask, ...) */
Val bi_atomic(Call *c); /* atomic_OP(ptr, value, mask, sem, scope), atomic_cas */
Val bi_atomic_access(Call *c, bool store); /* atomic_load(ptr, mask, sem, scope), atomic_store(ptr, value, mask, sem, scope) */
Val bi_atomic_poll(Call *c); /* atomic_poll(pointer, expected_value, sem, scope, timeout_ns) */
Val bi_expect_zero(Call *c); /* expect_zero(x, mask) */

/* builtins_query.c */
Val bi_query(Call *c); /* shape_of, numel, rank, is_float, is_int, is_signed, is_ptr, bitwidth, element_type */

/* dot (builtins.c) and dot_scaled (builtins_dot_scaled.c) */
const Builtin *bi_dot_entry(void); /* dot's table entry, for a Call built elsewhere */
Val bi_dot(Call *c); /* dot(a, b, acc, allow_tf32, input_precision, out_dtype, max_num_imprecise_acc) */
Val bi_dot_scaled(Gen *g, const Node *node); /* dot_scaled(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, ...) */

/* descriptors.c */
Val bi_make_desc(Call *c);              /* make_tensor_descriptor(base, shape, strides, block_shape) */
Val bi_desc_access(Call *c, bool store); /* load_/store_tensor_descriptor(desc, offsets[, value]) */
Val bi_desc_atomic(Call *c);            /* atomic_OP_tensor_descriptor(desc, offsets, value) */
Val bi_make_block_ptr(Call *c);         /* make_block_ptr(base, shape, strides, offsets, block_shape, order) */
Val bi_advance(Call *c);                /* advance(base, offsets) */
/* A load (store) through a block pointer (argument 0): rewrite the call's pointer, mask and
 * other (value) arguments into the block's pointers and boundary mask. */
bool bi_block_ptr_access(Call *c, bool store);

#endif
