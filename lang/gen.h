/* gen.h - state shared by the IR generator (gen.c) and the built-in
 * functions (builtins.c).  Internal to lang/.
 *
 * The generator evaluates the syntax tree directly into Vals: a compile-time
 * constant (V_CT: a tagged int/float/bool, folded here and materialized as
 * OP_CONST only where a run-time value is needed), a run-time SSA value
 * (V_RT), or a compile-time type, shape list or None, or a tuple of values
 * (V_TUPLE: what a `fn` returns with `return (a, b);`, unpacked by
 * `let (x, y) = ...` or `(x, y) = ...`).  V_ERR marks a value
 * whose error was already reported, so one mistake gives one message. */
#ifndef TILE_LANG_GEN_H
#define TILE_LANG_GEN_H

#include "ast.h"

/* Bounds that keep any input's compile time and memory finite: tensor size,
 * call nesting, expression depth, and per kernel after inlining the values
 * emitted, the calls inlined and the statements generated (a call's
 * arguments may all be compile-time constants, so a chain of doubling calls
 * emits nothing yet must stop; so must static_range loops nested until they
 * unroll millions of compile-time statements). */
enum {
    GEN_MAX_NUMEL = 1 << 20,
    GEN_MAX_INLINE = 64,
    GEN_MAX_EXPR_DEPTH = 1000,
    GEN_MAX_VALUES = 1 << 20,
    GEN_MAX_CALLS = 1 << 18,
    GEN_MAX_STMTS = 1 << 21,
    GEN_MAX_TUPLE = 1 << 12, /* elements of a tuple made by repetition, t * n */
};

typedef enum VKind { V_ERR, V_VOID, V_CT, V_RT, V_DTYPE, V_SHAPE, V_NONE, V_TUPLE, V_STR, V_FN } VKind;

typedef struct Val {
    VKind k;
    DType dt;          /* V_CT: dtype (never PTR) */
    int64_t i;         /* V_CT ints: normalized to dt (sign/zero extended); i1: 0 or 1 */
    double f;          /* V_CT floats */
    ValueId v;         /* V_RT */
    const Type *t;     /* V_RT: its type; V_DTYPE: the scalar (or pointer) type */
    int rank;          /* V_SHAPE */
    int32_t shape[TIR_MAX_RANK];
    struct Val *elems; /* V_TUPLE: nelems values (V_CT or V_RT), arena */
    int nelems;
    bool trunc_quotient; /* V_CT: an integer quotient that dropped a remainder (a float would have kept it) */
    bool held;           /* V_CT: a variable's (`let`, `=`) or made from one: a run-time scalar to Triton, whose
                          * assignment makes a tensor of a constexpr, so its integer `/` and `%` truncate */
    const char *s;       /* V_STR: a compile-time string (a literal, a const, a -D define), arena */
    const struct Decl *fn; /* V_FN: a `fn` given as an argument to a `fn` (Triton's JIT function as a constexpr argument),
                            * which the callee calls or passes on (a combine_fn, map_elementwise's scalar_fn) */
    uint8_t record;      /* V_TUPLE: REC_DESC or REC_BLOCK_PTR for the records make_tensor_descriptor and make_block_ptr
                          * make (copies keep it); 0 for every other tuple, whatever its elements look like */
} Val;

enum { REC_DESC = 1, REC_BLOCK_PTR = 2 };

typedef struct Var {
    const char *name;
    Val val;
    Loc set; /* its last assignment (line 0: none since `let`): where a loop or an if that changes its type is reported */
    struct Var *next;
    int seq;             /* its place in its scope's list, the oldest 0 */
    struct Var *shadows; /* the variable of its name that its `let` hid in the same scope, NULL none */
    bool outlived;       /* declared in an `if`'s branch and kept after it (stmt.c): a call of its name that is a
                          * built-in or a fn calls that (Triton's names of those are tl.'s, never hidden) */
    bool declared_const; /* declared a compile-time constant: `const x = e;`, `let x: constexpr = e;` (Triton's
                          * `x: tl.constexpr = e`) or a const parameter; only such names keep a `while` compile-time
                          * when its body assigns them (stmt_scan.c), as Triton's assignment makes any other a tensor */
} Var;

/* A scope's variables, newest first.  A run-time `if` puts a list back to an older head (snap_restore), which
 * drops the newer variables: `index` (name -> newest Var) may then name a dropped one, which byseq tells
 * apart (a variable is in the list when byseq[its seq] is it and its seq is below the head's + 1). */
typedef struct Scope {
    Var *vars;
    struct Scope *up;
    NameMap index;
    Var **byseq;
    int cap;
    bool kept; /* it holds the names of a compile-time `if`'s taken branch that returns or jumps, for the statements
                * after that `if` (stmt.c) */
} Scope;

/* Hidden variable of an inlined fn's frame: the value its `return`s give, merged as a variable where a `return` is
 * inside a run-time `if` (stmt.c); V_VOID until a `return` with a value. */
#define RETVAL "<return>"

/* One kernel body or one inlined device function. */
typedef struct Frame {
    struct Frame *up;
    const Decl *fn;   /* NULL for the kernel */
    Scope *scope;     /* innermost */
    Scope *base;      /* names below this belong to callers */
    int loops;        /* enclosing `for`s and `while`s in this frame */
    const struct Node *loop; /* the innermost of them (N_FOR or N_WHILE), NULL none */
    bool returned;    /* a `return` ended the current statement sequence */
    bool jumped;      /* a `break` or `continue` ended the current iteration's statements */
    Val ret;
    const SrcFile *file; /* the file whose code this is: names resolve from it (gen_find_global) */
    const struct Node *body; /* the kernel's or fn's body (for the hint at a name whose block has ended) */
    const Decl *kernel;      /* the kernel, in its own frame (for the hint at a run-time parameter used as a constant) */
} Frame;

typedef struct Global {
    const char *name;
    const Decl *decl;  /* D_CONST or D_FN */
    bool lib;          /* defined by a standard-library file (FileAst.stdlib) */
    int state;         /* constants: 0 not evaluated, 1 in progress, 2 done */
    Val val;
} Global;

/* A run-time loop whose results could have been compile-time values: a `while` that would run at compile time if the
 * plain `let`s it names were declared compile-time (Triton's `_log2` ported with `let n = i;`), or a `range` loop of
 * constant bounds carrying a constant; a value needed at compile time that comes from its results gets a note. */
typedef struct RtWhile {
    const Inst *loop;
    Loc loc;
    const char *names; /* the while's plain lets, "the plain 'let' variables 'n' and 'log2'"; NULL: a range loop */
} RtWhile;

typedef struct Gen {
    Arena *a;
    Diag *d;
    Module *m;
    Func *f;
    Builder b;
    Frame *fr;
    Global *globals;
    int nglobals;
    NameMap global_index[2]; /* name -> index + 1 in globals: [0] the program's files, [1] the standard library's */
    const struct FileAst *main_file; /* the file compiled (its kernels: a call of one is named as such) */
    struct FileAst **files;          /* every file loaded, the main one first */
    int nfiles;
    const LangOptions *opt;
    Func *scratch;        /* evaluates file-level constants; not in the module */
    Node **define_vals;   /* parsed opt->defines[i].value, NULL if invalid */
    int inline_depth;
    int expr_depth;
    int ncalls;   /* fn calls inlined into the current kernel */
    int nstmts;   /* statements generated for the current kernel (each inlined or unrolled copy counts) */
    bool too_big; /* over GEN_MAX_VALUES, GEN_MAX_CALLS or GEN_MAX_STMTS: generation of the kernel stops */
    RtWhile *rt_whiles; /* the kernel's run-time loops that could have been compile-time (gen_note_runtime_params) */
    int nrt_whiles, cap_rt_whiles;
    struct {
        int n;       /* a truncated quotient of constants met a run-time integer (gen.c, note_const_quotient) */
        Loc at;      /* the last time: the operator, */
        TokKind op;  /* its token */
        int64_t q;   /* and the quotient */
    } quot_rt;
    bool in_desc_block; /* evaluating a tensor_desc parameter's block shape (lang/kernel.c): how an unknown name is said */
} Gen;

/* gen.c: values */
Val gen_expr(Gen *g, const Node *n);
/* stmt.c, for kernel.c */
void gen_stmts(Gen *g, Node *const *st, int n);                          /* statements, nothing after them */
void gen_define_var(Gen *g, const char *name, Val v);                    /* bind name in the innermost scope */
void gen_note_ended_let(Gen *g, const char *name, Loc use);              /* after 'unknown name': a let of it in a block that ended */
void gen_note_runtime_params(Gen *g, const Node *n, Val v); /* after 'must be compile-time': the run-time parameters n reads, the loops v comes from */
const char *gen_did_you_mean(Gen *g, const char *name, bool vars_only); /* "; did you mean 'x'?" for a name in scope near it, or "" */
const char *gen_did_you_mean_in(Gen *g, const char *name, const char *const *names, int n); /* the same among names */
int gen_find_define(Gen *g, const char *name);                           /* index of -D name, or -1 */
Val gen_eval_define(Gen *g, int i);                                      /* its value */
Val gen_eval_global(Gen *g, const Node *n);                              /* n with only globals visible */
/* The file-level fn a default value names (`fn f(x, g = add)`), as its own file sees it; NULL otherwise. */
const Decl *gen_global_fn_named(Gen *g, const Node *n);
Val gen_convert_to(Gen *g, Val v, TypeRef ty, Loc loc, const char *what); /* to a declared type, exactly */
/* Is the compile-time number v exactly a value of the integer dtype `to` (not i1)?  CT_FRACTION: a float with a
 * fraction, an infinity or a NaN; CT_RANGE: a whole number outside to's range.  What `let i: T = c`, a const
 * parameter's type and full(shape, c, T) ask of c. */
typedef enum CtExact { CT_EXACT, CT_FRACTION, CT_RANGE } CtExact;
CtExact gen_ct_exact_in(Val v, DType to);
Val val_err(void);
Val val_rt(Gen *g, ValueId v);
Val val_ct_int(int64_t i, DType dt);
Val val_ct_float(double f, DType dt);
bool val_is_value(Gen *g, Val v, Loc loc); /* CT or RT; reports otherwise (silent for V_ERR) */
/* What a tuple's element may be, as Python's: a value, a tuple, or a compile-time None, type or string (its skeleton,
 * which a loop or an `if` keeps); reports otherwise (silent for V_ERR) */
bool val_is_tuple_element(Gen *g, Val v, Loc loc);
void gen_error_no_value(Gen *g, Val v, Loc loc); /* v is V_VOID where a value is needed: names the call that gave none */
bool val_ct_int_of(Gen *g, Val v, Loc loc, const char *what, int64_t *out);
const char *gen_type_name(Gen *g, const Type *t); /* element type: "f32", "ptr<f16>" */
const char *gen_shape_str(Gen *g, int rank, const int32_t *shape);
const char *gen_val_type_name(Gen *g, Val v);
/* A message's "a/an <name>" ("an i32", "a tuple of 2 values"; quoted: "an 'f16'"), the one place picking the article */
const char *gen_a(Gen *g, const char *name, bool quoted);
bool gen_is_desc(Val v);      /* a tensor descriptor (lang/descriptors.c) */
bool gen_is_block_ptr(Val v); /* a block pointer */
bool gen_is_record(Val v);    /* either (a tuple only the compiler reads) */
DType val_dtype(Val v);                  /* element dtype of a CT/RT value */
int val_rank(Val v);
const int32_t *val_shape(Val v);
bool gen_check_shape(Gen *g, int rank, const int32_t *shape, Loc loc);
const Type *gen_type_ref(Gen *g, TypeRef t);         /* a type written in the source (f32 after its error) */
const Type *gen_type_ref_or_null(Gen *g, TypeRef t); /* the same, NULL after its error */
DType gen_promote(DType a, DType b);
/* A warning when q is a truncated integer quotient (a run-time `/` of integers, or a constant one that dropped a
 * remainder) about to be used as the float type `to`: Triton's `/` on integers divides as floats. */
void gen_warn_int_quotient(Gen *g, Val q, DType to, Loc loc);
DType gen_weak_promote(DType rt, DType ct);
/* Strong operands (run-time values, and constants a variable holds or a cast made: typed scalars to Triton)
 * promote by gen_promote; a weak constant (a literal, a const) takes a strong operand's type (gen_weak_promote). */
bool gen_is_strong(Val v);
/* A weak integer constant v taking the integer type dt in a promotion must be a value of dt (bits: a bit pattern
 * of dt's width is enough, for &, |, ^); reports and returns false otherwise.  Other values pass. */
bool gen_check_weak_operand(Gen *g, Val v, DType dt, bool bits, Loc loc);
DType gen_promote_vals(Val a, Val b); /* the dtype two number operands compute in */
/* A constant a variable takes (`let c = 0.5;`, `c = 100;`): held, so strong; a weak float becomes Triton's
 * to_tensor type (f32, rounded; f64 outside f32's normal range).  Other values as they are. */
Val gen_hold(Val v);
bool gen_broadcast_shapes(Gen *g, int ra, const int32_t *sa, int rb, const int32_t *sb, int *r, int32_t *s, Loc loc);
/* Convert a value to dtype dt and shape (rank, shape): constants become OP_CONST,
 * run-time values are cast, splat, expanded and broadcast as needed.  The
 * shapes must already be known to broadcast. */
ValueId gen_coerce(Gen *g, Val v, DType dt, const Type *pointee, int rank, const int32_t *shape, Loc loc);
/* An integer constant stored, loaded as `other` or filled (full) into the integer type `to`: converted as a cast,
 * as Triton converts it (store(p_i8, 1000) stores -24), with a warning at loc naming `what` when it changes value
 * (neither its signed nor its unsigned reading fits).  Other values as they are. */
Val gen_ct_cast_into(Gen *g, Val v, DType to, Loc loc, const char *what);
Val gen_ct_cast(Val c, DType to);               /* a constant as type `to` (floats rounded once, ints wrapped) */
double gen_ct_to_double_for(Val c, DType dt);  /* a constant as the double that rounds once to dt */
void gen_warn_const_conversion(Gen *g, Val v, DType to, Loc loc, const char *what); /* store(p_i32, 1.5), store(p_f16, 1e10): a warning */
void gen_warn_declared_overflow(Gen *g, Val v, DType to, Loc loc, const char *what); /* let x: f16 = 1e10: a warning */
ValueId gen_materialize(Gen *g, Val v, Loc loc); /* CT -> scalar OP_CONST of its dtype; RT as is */
Val gen_cast(Gen *g, Val v, DType to, Loc loc);
Val gen_convert(Gen *g, Val v, const Type *t, bool bitcast, Loc loc); /* `as`, cast(), bitcast(): pointers too */
ValueId gen_emit(Gen *g, Loc loc, Op op, const ValueId *ops, int nops, const Type *t);
Inst *gen_emit_inst(Gen *g, Loc loc, Op op, const ValueId *ops, int nops, const Type *t);
Val gen_list_as_tuple(Gen *g, Val v); /* a list (a shape: compile-time sizes) as a tuple of i32s; any other value as it is */
Val gen_binop(Gen *g, TokKind op, Val a, Val b, Loc loc);

/* compare.c */
Val gen_compare_names(Gen *g, TokKind op, Val a, Val b, Loc loc);  /* == and != of strings, types, None: a compile-time i1 */
Val gen_compare_shapes(Gen *g, TokKind op, Val a, Val b, Loc loc); /* == and != of two shapes (lists, tuples of integers) */
Val gen_membership(Gen *g, const Node *x, Val a);                  /* a in x->rhs (x->op ==), a not in x->rhs (!=) */
Val gen_expand_dims(Gen *g, Val v, int axis, Loc loc);
const char *gen_type_desc(Gen *g, const Type *t); /* full type: "tensor<64x32xf32>" */
const char *gen_carried_type_hint(Gen *g, const Type *was, const Type *now); /* how to keep a loop-carried type */

/* stmt.c */
/* Match a call's arguments to parameter names: slots[i] is the argument
 * node for parameter i or NULL, by_kw[i] whether it was given by keyword.
 * Parameters before `min` are required.  Reports and returns false on error. */
const Node *gen_expand_star_args(Gen *g, const Node *call); /* Python's f(x, *args) of a tuple: args' elements */
bool gen_bind_args(Gen *g, const Node *call, const char *fname, const char *const *pnames, int np, int min,
                   const Node **slots, bool *by_kw);

/* Inline device function fn with n already evaluated arguments (the rest take their
 * defaults), as a call at loc: what reduce/associative_scan do with their combine_fn. */
Val gen_call_fn_vals(Gen *g, const Decl *fn, const Val *args, int n, Loc loc);
void gen_stmt_seq(Gen *g, Node *const *st, int n); /* statements with nothing after them (stmt.c) */
/* The file-level constant or fn called name, or NULL. */
Global *gen_find_global(Gen *g, const char *name);
Var *gen_lookup_var(Gen *g, const char *name);
/* The built-in or fn a file-level `const NAME = other_function;` names (through aliases), or NULL (names.c). */
const char *gen_callable_alias(Gen *g, const Global *gl);
/* The fn a name stands for: a variable holding one (a fn's parameter given a fn), else a file-level fn the name does
 * not hide; NULL for anything else. */
const Decl *gen_fn_named(Gen *g, const Node *n);
const Decl *gen_fn_arg(Gen *g, const Node *n, const char *what); /* a built-in's fn argument, a string naming one too */
Var *gen_scope_find(const Scope *s, const char *name); /* among s's own variables (the newest of the name), or NULL */

/* merge.c: a value's run-time-able leaves (V_CT, V_RT: itself, or a tuple's, depth first) and its skeleton (the rest:
 * tuple structure, types, shapes, None, strings), as a loop, an `if` and a conditional merge them */
bool val_same(Val a, Val b);                                         /* one value (the same run-time value, constant, ...) */
int val_leaves(Val v, Val *out);                                     /* their count (out: them); -1 when v holds other */
Val val_with_leaves(Gen *g, Val skel, const Val *leaves, int *pos); /* skel with its leaves from leaves[*pos...] */
bool val_same_skeleton(Val a, Val b);
const char *gen_skeleton_str(Gen *g, Val v); /* "(i32, (f32, i32))": a tuple element by element, else its type name */
void gen_differing_names(Gen *g, Val a, Val b, const char **na, const char **nb); /* two values' names for a message */
/* The type a leaf merges to after a run-time `if`'s branches gave it ea and eb (ok before it), NULL after an error */
const Type *merge_leaf_type(Gen *g, Loc at_if, const char *what, Val ea, Val eb, Val ok, Loc tset, Loc eset, Loc xset);

/* compose.c: built-ins composed from other ops (arguments checked by builtins.c) */
Val compose_join(Gen *g, Val a, Val b, Loc loc);
Val compose_split(Gen *g, Val x, Loc loc);
Val compose_interleave(Gen *g, Val a, Val b, Loc loc);
Val compose_cat(Gen *g, Val a, Val b, int dim, Loc loc); /* along dim */
Val compose_ravel(Gen *g, Val x, Loc loc);
Val compose_flip(Gen *g, Val x, int dim, Loc loc);
Val compose_unpack_e2m1(Gen *g, Val x, int dim, Loc loc); /* packed fp4 codes -> bf16, dim doubled */
Val compose_gather(Gen *g, Val src, Val index, int axis, Loc loc);
Val compose_reduce(Gen *g, Val in, int axis, const Decl *fn, Op op, bool keep_dims, Loc loc); /* axis -1: all; fn NULL: op (xor) */
Val compose_scan(Gen *g, Val in, int axis, const Decl *fn, Op op, bool reverse, Loc loc); /* fn NULL: op (mul) */
Val compose_sort(Gen *g, Val x, bool descending, Loc loc);
Val compose_bitonic_merge(Gen *g, Val x, bool descending, Loc loc); /* the last stage of sort: sorts a bitonic x */
Val compose_topk(Gen *g, Val x, int64_t k, bool descending, bool indices, Loc loc); /* values, or (values, indices) */
Val compose_histogram(Gen *g, Val x, int64_t bins, Val mask, Loc loc);
enum { MAP_MAX_ARGS = 16, MAP_MAX_PACK = 16 };
/* map_elementwise: fn applied on scalars to each element of the n values xs (tensors of one shape, or
 * scalars), pack elements at a time; one value or a tuple, as fn returns */
Val compose_map(Gen *g, const Decl *fn, const Val *xs, int n, int pack, Loc loc);

/* builtins.c (builtin_exists: ast.h) */
const char *builtin_name(int i); /* the i-th built-in's name, NULL past the last */
/* lang.c: the standard-library file (its path, in the arena) that defines function `name` ("fn name(" at the
 * start of a line); NULL when none does. */
const char *lang_stdlib_defining(Arena *a, const LangOptions *opt, const char *name);
Val builtin_call(Gen *g, const Node *call);
Val builtin_cond(Gen *g, const Node *cond); /* `a if c else b` */
/* builtins_raw.c */
Val builtin_debug(Gen *g, const Node *node, const char *name); /* static_assert, device_assert, device_print */
Val builtin_inline_asm(Gen *g, const Node *node);

#endif
