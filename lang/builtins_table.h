/* builtins_table.h - the table of the language's built-in functions, LANG_BUILTINS, included by builtins.c
 * only (which makes the BuiltinId enum and the Builtin array of it).  A new built-in is one row here and its
 * generator in builtins*.c; docs/language.md lists it. */
#ifndef TILE_LANG_BUILTINS_TABLE_H
#define TILE_LANG_BUILTINS_TABLE_H

/* X(ENUM, "name", required args, "parameter names", IR op, kind, attr kind) */
/* A parameter `name|alias` may also be given by keyword as alias, Triton's name for it where it differs
 * (load(pointer=p), where(condition=c, x=a, y=b), atomic_add(p, val=v)).
 * Parameters written `name:str` take a string literal (`sem="relaxed"`), by keyword only;
 * `name:fn` names a device function (a combine_fn); `name:list` a list of scalars that may be
 * run-time values (`[m, n]`), evaluated into a tuple. */
#define ATOMIC_PARAMS "ptr|pointer value|val mask sem:str scope:str"
#define LANG_BUILTINS(X)                                                                   \
    X(PROGRAM_ID, "program_id", 1, "axis", PROGRAM_ID, PLAIN, 0)                           \
    X(NUM_PROGRAMS, "num_programs", 1, "axis", NUM_PROGRAMS, PLAIN, 0)                     \
    X(NUM_SMS, "num_sms", 0, "", CONST, PLAIN, 0)                                          \
    X(ARANGE, "arange", 2, "start end", ARANGE, PLAIN, 0)                                  \
    X(ZEROS, "zeros", 1, "shape dtype", CONST, PLAIN, 0)                                   \
    X(ZEROS_LIKE, "zeros_like", 1, "input", CONST, PLAIN, 0)                               \
    X(FULL, "full", 2, "shape value dtype", CONST, PLAIN, 0)                               \
    X(RESHAPE, "reshape", 2, "x|input shape can_reorder", RESHAPE, PLAIN, 0)                                 \
    X(VIEW, "view", 2, "x|input shape", RESHAPE, PLAIN, 0) /* Triton's deprecated reshape(can_reorder=True) */  \
    X(TRANS, "trans", 1, "x|input perm|dims", TRANS, PLAIN, 0)                                        \
    X(EXPAND_DIMS, "expand_dims", 2, "x|input axis", EXPAND_DIMS, PLAIN, 0)                      \
    X(UNSQUEEZE, "unsqueeze", 2, "x dim", EXPAND_DIMS, PLAIN, 0)                           \
    X(SQUEEZE, "squeeze", 2, "x dim", RESHAPE, PLAIN, 0)                                   \
    X(BROADCAST_TO, "broadcast_to", 2, "x|input shape", BROADCAST, PLAIN, 0)                     \
    X(BROADCAST, "broadcast", 2, "input other", BROADCAST, PLAIN, 0)                       \
    X(WHERE, "where", 3, "cond|condition a|x b|y", SELECT, PLAIN, 0)                                     \
    X(CAST, "cast", 2, "x|input dtype bitcast fp_downcast_rounding:str", CAST, PLAIN, 0)         \
    X(BITCAST, "bitcast", 2, "x dtype", BITCAST, PLAIN, 0)                                 \
    X(DTYPE_OF, "dtype_of", 1, "x", CAST, PLAIN, 0)                                        \
    X(TO_TENSOR, "to_tensor", 1, "x", CAST, PLAIN, 0)                                      \
    X(CONSTEXPR, "constexpr", 1, "x|value", CAST, PLAIN, 0) /* Triton's tl.constexpr(x) */   \
    X(INT, "int", 1, "x", CAST, PLAIN, 0)     /* Python's int() and float() of compile-time numbers, */ \
    X(FLOAT, "float", 1, "x", CAST, PLAIN, 0) /* which Triton evaluates at compile time */             \
    /* compile-time shape and type queries, Triton's attributes: builtins_query.c */        \
    X(SHAPE_OF, "shape_of", 1, "x dim", CONST, QUERY, Q_SHAPE_OF)                          \
    X(NUMEL, "numel", 1, "x", CONST, QUERY, Q_NUMEL)                                       \
    X(RANK, "rank", 1, "x", CONST, QUERY, Q_RANK)                                          \
    X(LEN, "len", 1, "x", CONST, QUERY, Q_LEN) /* Python's len of a tuple or a list, len(x.shape) */ \
    X(ZIP, "zip", 1, "a b c d e f g h", CONST, QUERY, Q_ZIP) /* Python's zip of tuples or lists: a tuple of tuples */ \
    X(ENUMERATE, "enumerate", 1, "x start", CONST, QUERY, Q_ENUMERATE) /* Python's enumerate: (i, element) pairs */ \
    X(IS_FLOAT, "is_float", 1, "dtype", CONST, QUERY, Q_IS_FLOAT)                          \
    X(IS_FP8, "is_fp8", 1, "dtype", CONST, QUERY, Q_IS_FP8) /* T.is_fp8(): f8e4m3 or f8e5m2 */ \
    X(IS_INT, "is_int", 1, "dtype", CONST, QUERY, Q_IS_INT)                                \
    X(IS_SIGNED, "is_signed", 1, "dtype", CONST, QUERY, Q_IS_SIGNED)                       \
    X(IS_PTR, "is_ptr", 1, "dtype", CONST, QUERY, Q_IS_PTR)                                \
    X(BITWIDTH, "bitwidth", 1, "dtype", CONST, QUERY, Q_BITWIDTH)                          \
    X(ELEMENT_TYPE, "element_type", 1, "ptr", CONST, QUERY, Q_ELEMENT_TYPE)                \
    X(POINTER_TYPE, "pointer_type", 1, "element_ty", CONST, QUERY, Q_POINTER_TYPE) /* tl.pointer_type(T): *T */ \
    X(NEXT_POWER_OF_2, "next_power_of_2", 1, "n", CONST, QUERY, Q_NEXT_POWER_OF_2) /* triton.next_power_of_2 */ \
    X(GET_INT_DTYPE, "get_int_dtype", 2, "bitwidth signed", CONST, QUERY, Q_GET_INT_DTYPE) /* tl.core.get_int_dtype */ \
    /* the target compiled for, Triton's triton.language.target_info */                     \
    X(CUDA_CAPABILITY_GEQ, "cuda_capability_geq", 1, "major minor", CONST, QUERY, Q_CUDA_CAPABILITY_GEQ) \
    X(IS_CUDA, "is_cuda", 0, "", CONST, QUERY, Q_IS_CUDA) X(IS_HIP, "is_hip", 0, "", CONST, QUERY, Q_IS_HIP) \
    X(EXP, "exp", 1, "x exact", EXP, MATH, 0) X(EXP2, "exp2", 1, "x exact", EXP2, MATH, 0) \
    X(LOG, "log", 1, "x", LOG, MATH, 0) X(LOG2, "log2", 1, "x", LOG2, MATH, 0)             \
    X(SQRT, "sqrt", 1, "x", SQRT, MATH, 0) X(RSQRT, "rsqrt", 1, "x", RSQRT, MATH, 0)       \
    X(SQRT_RN, "sqrt_rn", 1, "x", SQRT, MATH, 0)                                           \
    X(DIV_RN, "div_rn", 2, "x y", DIV, PLAIN, 0)                                           \
    X(FDIV, "fdiv", 2, "x y ieee_rounding approx", DIV, PLAIN, 0)                                 \
    X(ABS, "abs", 1, "x", ABS, MATH, 0) X(SIN, "sin", 1, "x", SIN, MATH, 0)                \
    X(COS, "cos", 1, "x", COS, MATH, 0) X(TANH, "tanh", 1, "x exact", TANH, MATH, 0)             \
    X(SIGMOID, "sigmoid", 1, "x", SIGMOID, MATH, 0) X(ERF, "erf", 1, "x", ERF, MATH, 0)    \
    X(FLOOR, "floor", 1, "x", FLOOR, MATH, 0) X(CEIL, "ceil", 1, "x", CEIL, MATH, 0)       \
    X(ROUND, "round", 1, "x", ROUND, MATH, 0) X(RINT, "rint", 1, "x", RINT, MATH, 0)       \
    X(TRUNC, "trunc", 1, "x", TRUNC, MATH, 0) X(ASIN, "asin", 1, "x", ASIN, MATH, 0)       \
    X(ACOS, "acos", 1, "x", ACOS, MATH, 0) X(ATAN, "atan", 1, "x", ATAN, MATH, 0)          \
    X(SINH, "sinh", 1, "x", SINH, MATH, 0) X(COSH, "cosh", 1, "x", COSH, MATH, 0)          \
    X(LOG1P, "log1p", 1, "x", LOG1P, MATH, 0) X(EXPM1, "expm1", 1, "x", EXPM1, MATH, 0)    \
    X(ASINH, "asinh", 1, "x", ASINH, MATH, 0) X(ACOSH, "acosh", 1, "x", ACOSH, MATH, 0)    \
    X(ATANH, "atanh", 1, "x", ATANH, MATH, 0) X(ERFC, "erfc", 1, "x", ERFC, MATH, 0)       \
    X(CBRT, "cbrt", 1, "x", CBRT, MATH, 0)                                                 \
    X(TAN, "tan", 1, "x", TAN, MATH, 0) X(LOG10, "log10", 1, "x", LOG10, MATH, 0)          \
    X(EXP10, "exp10", 1, "x", EXP10, MATH, 0) X(ERFINV, "erfinv", 1, "x", ERFINV, MATH, 0) \
    X(LGAMMA, "lgamma", 1, "x", LGAMMA, MATH, 0) X(TGAMMA, "tgamma", 1, "x", TGAMMA, MATH, 0) \
    X(POW, "pow", 2, "x y", POW, PLAIN, 0)                                                 \
    X(HYPOT, "hypot", 2, "x y", HYPOT, PLAIN, 0)                                           \
    X(UMULHI, "umulhi", 2, "x y", UMULHI, PLAIN, 0)                                        \
    X(POPC, "popc", 1, "x", POPC, PLAIN, 0) X(CLZ, "clz", 1, "x", CLZ, PLAIN, 0)           \
    X(ATAN2, "atan2", 2, "y x", ATAN2, PLAIN, 0)                                           \
    X(FMOD, "fmod", 2, "x y", FMOD, PLAIN, 0)                                              \
    X(COPYSIGN, "copysign", 2, "x y", COPYSIGN, PLAIN, 0)                                  \
    X(ISNAN, "isnan", 1, "x", CMP, PLAIN, 0) X(ISINF, "isinf", 1, "x", CMP, PLAIN, 0)      \
    X(SIGNBIT, "signbit", 1, "x", CMP, PLAIN, 0)                                           \
    X(CLAMP, "clamp", 3, "x lo|min hi|max propagate_nan:str", MAX, PLAIN, 0)                       \
    X(FMA, "fma", 3, "a|x b|y c|z", FMA, PLAIN, 0)                                               \
    /* Triton's tl.add/sub/mul: the operators (sanitize_overflow checks only in Triton's debug mode) */ \
    X(ADD, "add", 2, "x y sanitize_overflow", ADD, PLAIN, 0)                               \
    X(SUB, "sub", 2, "x y sanitize_overflow", SUB, PLAIN, 0)                               \
    X(MUL, "mul", 2, "x y sanitize_overflow", MUL, PLAIN, 0)                               \
    X(MINIMUM, "minimum", 2, "a|x b|y propagate_nan:str", MIN, PLAIN, 0)                       \
    X(MAXIMUM, "maximum", 2, "a|x b|y propagate_nan:str", MAX, PLAIN, 0)                       \
    /* Triton's parameters, in Triton's order */                                            \
    X(MIN, "min", 1, "x|input axis return_indices return_indices_tie_break_left keep_dims", MIN, RED, RED_MIN) \
    X(MAX, "max", 1, "x|input axis return_indices return_indices_tie_break_left keep_dims", MAX, RED, RED_MAX) \
    X(SUM, "sum", 1, "x|input axis keep_dims dtype", REDUCE, RED, RED_SUM)                       \
    X(ARGMAX, "argmax", 1, "x|input axis tie_break_left keep_dims", REDUCE, RED, RED_ARGMAX)     \
    X(ARGMIN, "argmin", 1, "x|input axis tie_break_left keep_dims", REDUCE, RED, RED_ARGMIN)     \
    X(CUMSUM, "cumsum", 1, "x|input axis reverse dtype", SCAN, PLAIN, RED_SUM)                   \
    /* shape ops, user-function reductions and scans, sorting: composed in compose.c */    \
    X(JOIN, "join", 2, "a b", SELECT, COMPOSE, 0)                                          \
    X(SPLIT, "split", 1, "x|a", GATHER, COMPOSE, 0)                                          \
    X(INTERLEAVE, "interleave", 2, "a b", RESHAPE, COMPOSE, 0)                             \
    X(CAT, "cat", 2, "a|input b|other can_reorder dim", RESHAPE, COMPOSE, 0)                               \
    X(RAVEL, "ravel", 1, "x can_reorder", RESHAPE, COMPOSE, 0)                             \
    X(PERMUTE, "permute", 2, "x|input dims", TRANS, PLAIN, 0)                                    \
    X(FLIP, "flip", 1, "x dim", GATHER, COMPOSE, 0)                                        \
    X(GATHER, "gather", 3, "src index axis", GATHER, COMPOSE, 0)                           \
    X(REDUCE, "reduce", 3, "input axis combine_fn:fn keep_dims", GATHER, COMPOSE, 0)       \
    X(ASSOCIATIVE_SCAN, "associative_scan", 3, "input axis combine_fn:fn reverse", GATHER, COMPOSE, 0) \
    X(CUMPROD, "cumprod", 1, "x|input axis reverse dtype", MUL, COMPOSE, 0)                      \
    X(XOR_SUM, "xor_sum", 1, "x|input axis keep_dims", XOR, COMPOSE, 0)                          \
    X(REDUCE_OR, "reduce_or", 2, "input axis keep_dims", OR, COMPOSE, 0)                   \
    X(SORT, "sort", 1, "x dim descending", GATHER, COMPOSE, 0)                             \
    X(BITONIC_MERGE, "bitonic_merge", 1, "x dim descending", GATHER, COMPOSE, 0)           \
    X(TOPK, "topk", 2, "x k dim descending return_indices", GATHER, COMPOSE, 0)                                      \
    X(HISTOGRAM, "histogram", 2, "x|input num_bins mask", REDUCE, COMPOSE, 0)                    \
    X(MAP_ELEMENTWISE, "map_elementwise", 2, "scalar_fn *args pack", MAP_FN, COMPOSE, 0)   \
    X(DOT, "dot", 2, "a|input b|other acc allow_tf32 input_precision:str out_dtype max_num_imprecise_acc", DOT, PLAIN, 0) \
    X(DOT_SCALED, "dot_scaled", 6, "", DOT, PLAIN, 0)                                      \
    X(LOAD, "load", 1, "ptr|pointer mask other cache_modifier:str eviction_policy:str volatile boundary_check padding_option:str", LOAD, PLAIN, 0) \
    X(STORE, "store", 2, "ptr|pointer value mask cache_modifier:str eviction_policy:str boundary_check", STORE, PLAIN, 0) \
    /* tensor descriptors and block pointers: descriptors.c */                             \
    X(MAKE_TENSOR_DESCRIPTOR, "make_tensor_descriptor", 4, "base shape:list strides:list block_shape padding_option:str", LOAD, PLAIN, 0) \
    X(LOAD_TENSOR_DESCRIPTOR, "load_tensor_descriptor", 2, "desc offsets:list", LOAD, PLAIN, 0) \
    X(STORE_TENSOR_DESCRIPTOR, "store_tensor_descriptor", 3, "desc offsets:list value", STORE, PLAIN, 0) \
    X(ATOMIC_ADD_TENSOR_DESCRIPTOR, "atomic_add_tensor_descriptor", 3, "desc offsets:list value", ATOMIC_RMW, PLAIN, RED_SUM) \
    X(ATOMIC_MAX_TENSOR_DESCRIPTOR, "atomic_max_tensor_descriptor", 3, "desc offsets:list value", ATOMIC_RMW, PLAIN, RED_MAX) \
    X(ATOMIC_MIN_TENSOR_DESCRIPTOR, "atomic_min_tensor_descriptor", 3, "desc offsets:list value", ATOMIC_RMW, PLAIN, RED_MIN) \
    X(ATOMIC_AND_TENSOR_DESCRIPTOR, "atomic_and_tensor_descriptor", 3, "desc offsets:list value", ATOMIC_RMW, PLAIN, RED_AND) \
    X(ATOMIC_OR_TENSOR_DESCRIPTOR, "atomic_or_tensor_descriptor", 3, "desc offsets:list value", ATOMIC_RMW, PLAIN, RED_OR) \
    X(ATOMIC_XOR_TENSOR_DESCRIPTOR, "atomic_xor_tensor_descriptor", 3, "desc offsets:list value", ATOMIC_RMW, PLAIN, RED_XOR) \
    X(MAKE_BLOCK_PTR, "make_block_ptr", 5, "base shape:list strides:list offsets:list block_shape order", LOAD, PLAIN, 0) \
    X(ADVANCE, "advance", 2, "base offsets:list", LOAD, PLAIN, 0)                          \
    X(ATOMIC_ADD, "atomic_add", 2, ATOMIC_PARAMS, ATOMIC_RMW, ATOMIC, RED_SUM)             \
    X(ATOMIC_MAX, "atomic_max", 2, ATOMIC_PARAMS, ATOMIC_RMW, ATOMIC, RED_MAX)             \
    X(ATOMIC_MIN, "atomic_min", 2, ATOMIC_PARAMS, ATOMIC_RMW, ATOMIC, RED_MIN)             \
    X(ATOMIC_XCHG, "atomic_xchg", 2, ATOMIC_PARAMS, ATOMIC_RMW, ATOMIC, RED_XCHG)          \
    X(ATOMIC_AND, "atomic_and", 2, ATOMIC_PARAMS, ATOMIC_RMW, ATOMIC, RED_AND)             \
    X(ATOMIC_OR, "atomic_or", 2, ATOMIC_PARAMS, ATOMIC_RMW, ATOMIC, RED_OR)                \
    X(ATOMIC_XOR, "atomic_xor", 2, ATOMIC_PARAMS, ATOMIC_RMW, ATOMIC, RED_XOR)             \
    X(ATOMIC_CAS, "atomic_cas", 3, "ptr|pointer cmp value|val mask sem:str scope:str", ATOMIC_CAS, PLAIN, 0) \
    X(ATOMIC_LOAD, "atomic_load", 1, "ptr|pointer mask sem:str scope:str", LOAD, PLAIN, 0)              \
    X(ATOMIC_STORE, "atomic_store", 2, "ptr|pointer value|val mask sem:str scope:str", STORE, PLAIN, 0)     \
    /* Triton 3.9's, with Triton's parameter names */                                       \
    X(ATOMIC_POLL, "atomic_poll", 2, "pointer expected_value sem:str scope:str timeout_ns", ATOMIC_POLL, PLAIN, 0) \
    X(DEBUG_BARRIER, "debug_barrier", 0, "", BARRIER, PLAIN, 0)                            \
    /* programmatic dependent launch, Triton's triton.language.extra.cuda.gdc_*: nothing before sm_90 */ \
    X(GDC_WAIT, "gdc_wait", 0, "", GDC_WAIT, PLAIN, 0)                                     \
    X(GDC_LAUNCH_DEPENDENTS, "gdc_launch_dependents", 0, "", GDC_LAUNCH_DEPENDENTS, PLAIN, 0) \
    /* hints, Triton's: the value itself, with a fact the compiler may use (vector widths) */ \
    X(MULTIPLE_OF, "multiple_of", 2, "input values", MULTIPLE_OF, PLAIN, 0)                \
    X(MAX_CONTIGUOUS, "max_contiguous", 2, "input values", MAX_CONTIGUOUS, PLAIN, 0)       \
    X(MAX_CONSTANCY, "max_constancy", 2, "input values", MAX_CONSTANCY, PLAIN, 0)          \
    X(ASSUME, "assume", 1, "cond", ASSUME, PLAIN, 0)                                       \
    X(INLINE_ASM_ELEMENTWISE, "inline_asm_elementwise", 4, "asm constraints args dtype is_pure pack", INLINE_ASM, PLAIN, 0) \
    X(STATIC_ASSERT, "static_assert", 1, "cond msg", CONST, PLAIN, 0)                      \
    X(STATIC_PRINT, "static_print", 1, "prefix", CONST, PLAIN, 0)                          \
    X(DEVICE_ASSERT, "device_assert", 1, "cond msg", ASSERT, PLAIN, 0)                     \
    X(EXPECT_ZERO, "expect_zero", 2, "x mask", ASSERT, PLAIN, 0)                           \
    X(DEVICE_PRINT, "device_print", 1, "prefix", PRINT, PLAIN, 0)                          \
    X(PRINT, "print", 1, "prefix", PRINT, PLAIN, 0) /* Python's print in a Triton kernel: device_print */


/* BI_<NAME>: a built-in's index in LANG_BUILTINS */
typedef enum BuiltinId {
#define X(e, n, mn, ps, op, k, rk) BI_##e,
    LANG_BUILTINS(X)
#undef X
        BI_COUNT
} BuiltinId;

#endif
