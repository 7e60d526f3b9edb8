/* tir.h - Tile IR: an SSA IR of block-level operations on typed tensors.
 *
 * A Module holds Funcs (kernels; device functions are inlined by the front
 * end).  A Func has one body Block; Blocks hold an intrusive list of Insts.
 * Structured control flow: a `for` Inst owns one region (its body, whose
 * block arguments are the induction variable then the loop-carried values)
 * and an `if` Inst owns two (then, else); regions end in `yield`.
 *
 * Values are small integer handles (ValueId) into the Func's value array.
 * Value 0 is never used, so 0 means "none".  Types are interned per Module
 * and compared by pointer.  Everything lives in the Module's Arena.
 *
 * Ops are declared once in TIR_OPS below; enum, names, arity, printer,
 * parser and verifier all derive from that table. */
#ifndef TILE_TIR_H
#define TILE_TIR_H

#include "../support/support.h"
#include "../support/dtype.h"

#define TIR_MAX_RANK 6
/* Operands of one reduce_fn / scan_fn (a tuple's tensors, each with its own combine argument pair). */
#define TIR_MAX_COMBINE 8

/* ---- element types: the one table in support/dtype.h ---- */

/* ---- layouts (assigned by the layout pass; NULL before) ----
 * BLOCKED: each thread holds spt[d] contiguous elements along dim d, a warp
 *   spans tpw[d] threads along d, the block spans wpc[d] warps along d;
 *   order[0] is the fastest-varying dim.  A tensor larger than the layout's
 *   coverage repeats it; a smaller one wraps (elements are replicated).
 * SLICE: rank-(r-1) tensor laid out like `parent` with dim `dim` removed
 *   (what a reduction along `dim` produces; expand_dims undoes it).
 * MMA: accumulator of mma.sync m16n8kK tiles (rank 2): warps wpc[0] x
 *   wpc[1] over M x N; per 16x8 tile each thread holds rows g, g+8 and
 *   columns 2t, 2t+1 (g = lane/4, t = lane%4), tiles repeating over the
 *   warps' coverage.
 * DOT_A / DOT_B: mma.sync operand fragments for an MMA `parent`: `kw` is
 *   the K of one instruction (16 f16/bf16, 8 tf32, 32 i8) and `vpr` the
 *   elements per 32-bit register (2, 1, 4).  A is [M, K], B is [K, N].
 * SHARED: a tile kept in shared memory, not in registers (software
 *   pipelining's buffers): rank-2 tiles, or rank 3 with the stage first;
 *   order[0] is the contiguous dim of the tile; 16-byte chunks of each row
 *   are XOR-swizzled (see llvm_mma.c). */
typedef enum LayoutKind { LAYOUT_BLOCKED, LAYOUT_SLICE, LAYOUT_DOT_A, LAYOUT_DOT_B, LAYOUT_MMA, LAYOUT_SHARED } LayoutKind;

typedef struct Layout {
    LayoutKind kind;
    uint8_t rank;
    uint8_t spt[TIR_MAX_RANK], tpw[TIR_MAX_RANK], wpc[TIR_MAX_RANK], order[TIR_MAX_RANK];
    int8_t dim;                   /* SLICE */
    uint8_t kw, vpr;              /* DOT_A, DOT_B */
    const struct Layout *parent;  /* SLICE, DOT_A, DOT_B */
} Layout;

/* ---- types ---- */
typedef struct Type {
    DType dt;
    uint8_t rank;                  /* 0: scalar */
    int32_t shape[TIR_MAX_RANK];
    const struct Type *pointee;    /* dt == DT_PTR: scalar type pointed to */
    const Layout *layout;          /* tensors, after layout assignment */
} Type;

/* ---- ops: X(ENUM, "name", nops, nres, flags)  nops/nres -1 = variadic ---- */
enum {
    OPF_ELEMENTWISE = 1, /* result[i] = f(operands[i]); all operands same shape */
    OPF_PURE = 2,        /* no side effects: CSE/DCE may touch it */
    OPF_TERMINATOR = 4,
    OPF_REGION = 8,      /* owns regions */
    OPF_COMMUTATIVE = 16,
    OPF_MEMORY = 32,     /* reads or writes global memory */
};
#define EW (OPF_ELEMENTWISE | OPF_PURE)
#define TIR_OPS(X)                                                                          \
    /* constants and index sources */                                                      \
    X(CONST, "const", 0, 1, OPF_PURE)           /* scalar or splat constant: attr ival/fval */\
    X(ARANGE, "arange", 0, 1, OPF_PURE)         /* [start, end) as i32 tensor: attr ival, ival2 */\
    X(PROGRAM_ID, "program_id", 0, 1, OPF_PURE) /* program index along attr axis, i32 */    \
    X(NUM_PROGRAMS, "num_programs", 0, 1, OPF_PURE) /* grid size along attr axis, i32 */    \
    /* shape manipulation */                                                               \
    X(SPLAT, "splat", 1, 1, OPF_PURE)           /* scalar -> tensor of result shape */      \
    X(BROADCAST, "broadcast", 1, 1, OPF_PURE)   /* size-1 dims -> result shape */           \
    X(EXPAND_DIMS, "expand_dims", 1, 1, OPF_PURE) /* insert size-1 dim at attr axis */      \
    X(RESHAPE, "reshape", 1, 1, OPF_PURE)       /* same elements, row-major order, new shape */\
    X(TRANS, "trans", 1, 1, OPF_PURE)           /* permute dims by attr perm */             \
    X(CONVERT_LAYOUT, "convert_layout", 1, 1, OPF_PURE) /* same values, new layout */       \
    /* element-wise arithmetic (ints wrap; division by type signedness) */                 \
    X(ADD, "add", 2, 1, EW | OPF_COMMUTATIVE)                                              \
    X(SUB, "sub", 2, 1, EW)                                                                \
    X(MUL, "mul", 2, 1, EW | OPF_COMMUTATIVE)                                              \
    X(DIV, "div", 2, 1, EW)             /* ints: truncating division */                    \
    X(REM, "rem", 2, 1, EW)             /* ints: sign of dividend; floats: fmod */         \
    X(NEG, "neg", 1, 1, EW)                                                                \
    X(AND, "and", 2, 1, EW | OPF_COMMUTATIVE) /* bitwise; logical on i1 */                 \
    X(OR, "or", 2, 1, EW | OPF_COMMUTATIVE)                                                \
    X(XOR, "xor", 2, 1, EW | OPF_COMMUTATIVE)                                              \
    X(NOT, "not", 1, 1, EW)                                                                \
    X(SHL, "shl", 2, 1, EW)                                                                \
    X(SHR, "shr", 2, 1, EW)             /* arithmetic for signed, logical for unsigned */  \
    X(MIN, "min", 2, 1, EW | OPF_COMMUTATIVE) /* floats: NaN-propagating */                \
    X(MAX, "max", 2, 1, EW | OPF_COMMUTATIVE)                                              \
    X(CMP, "cmp", 2, 1, EW)             /* attr pred: eq ne lt le gt ge; result i1 */      \
    X(SELECT, "select", 3, 1, EW)       /* cond ? a : b */                                 \
    X(CAST, "cast", 1, 1, EW)           /* numeric conversion to result dtype */           \
    X(BITCAST, "bitcast", 1, 1, EW)     /* same bits, new dtype of equal width */          \
    X(PTR_ADD, "ptr_add", 2, 1, EW)     /* pointer + element offset */                     \
    /* math on floats (computed in f32 for f16/bf16) */                                    \
    X(EXP, "exp", 1, 1, EW)             /* f32: ex2.approx.ftz; attr ival 1 (exact): no flush */ \
    X(EXP2, "exp2", 1, 1, EW)           /* as exp */                                       \
    X(LOG, "log", 1, 1, EW)                                                                \
    X(LOG2, "log2", 1, 1, EW)                                                              \
    X(SQRT, "sqrt", 1, 1, EW)                                                              \
    X(RSQRT, "rsqrt", 1, 1, EW)                                                            \
    X(ABS, "abs", 1, 1, EW)             /* also integers */                                \
    X(SIN, "sin", 1, 1, EW)                                                                \
    X(COS, "cos", 1, 1, EW)                                                                \
    X(TANH, "tanh", 1, 1, EW)                                                              \
    X(SIGMOID, "sigmoid", 1, 1, EW)                                                        \
    X(ERF, "erf", 1, 1, EW)                                                                \
    X(FLOOR, "floor", 1, 1, EW)                                                            \
    X(CEIL, "ceil", 1, 1, EW)                                                              \
    X(ROUND, "round", 1, 1, EW)         /* to nearest, halves away from zero */              \
    X(RINT, "rint", 1, 1, EW)           /* to nearest, halves to even */                     \
    X(TRUNC, "trunc", 1, 1, EW)         /* toward zero */                                    \
    X(ASIN, "asin", 1, 1, EW)                                                              \
    X(ACOS, "acos", 1, 1, EW)                                                              \
    X(ATAN, "atan", 1, 1, EW)                                                              \
    X(ATAN2, "atan2", 2, 1, EW)         /* atan2(y, x), the angle of (x, y) */               \
    X(SINH, "sinh", 1, 1, EW)                                                              \
    X(COSH, "cosh", 1, 1, EW)                                                              \
    X(LOG1P, "log1p", 1, 1, EW)         /* log(1 + x), accurate near 0 */                    \
    X(EXPM1, "expm1", 1, 1, EW)         /* e^x - 1, accurate near 0 */                       \
    X(FMOD, "fmod", 2, 1, EW)           /* x - trunc(x/y)*y with the sign of x, as C */      \
    X(COPYSIGN, "copysign", 2, 1, EW)   /* |x| with the sign bit of y */                     \
    X(ASINH, "asinh", 1, 1, EW)                                                            \
    X(ACOSH, "acosh", 1, 1, EW)         /* NaN below 1 */                                    \
    X(ATANH, "atanh", 1, 1, EW)         /* +-inf at +-1, NaN beyond */                       \
    X(POW, "pow", 2, 1, EW)             /* x^y with C99's special cases (pow(x, 0) = 1) */   \
    X(ERFC, "erfc", 1, 1, EW)           /* 1 - erf(x), accurate where it is tiny */          \
    X(CBRT, "cbrt", 1, 1, EW)           /* real cube root, odd */                            \
    X(HYPOT, "hypot", 2, 1, EW)         /* sqrt(x^2 + y^2) without overflow; inf beats NaN */\
    X(TAN, "tan", 1, 1, EW)                                                                \
    X(LOG10, "log10", 1, 1, EW)                                                            \
    X(EXP10, "exp10", 1, 1, EW)         /* 10^x */                                           \
    X(ERFINV, "erfinv", 1, 1, EW)       /* the inverse of erf: +-inf at +-1, NaN beyond */   \
    X(LGAMMA, "lgamma", 1, 1, EW)       /* log |gamma(x)|: +inf at 0 and the negative integers */ \
    X(TGAMMA, "tgamma", 1, 1, EW)       /* gamma(x): NaN at the negative integers, +-inf at +-0 */ \
    /* integer bit operations (i32 i64 u32 u64) */                                         \
    X(UMULHI, "umulhi", 2, 1, EW)       /* high half of the unsigned 2N-bit product */       \
    X(POPC, "popc", 1, 1, EW)           /* set bits; result i32 */                           \
    X(CLZ, "clz", 1, 1, EW)             /* leading zeros; result i32 */                      \
    X(FMA, "fma", 3, 1, EW)             /* a*b+c, one rounding */                          \
    /* hints for the axis analysis (Triton's): the operand's value, with a fact about it along \
     * each dim d, attr values[d] (in perm[]; scalars: values[0]).  A false fact is undefined */\
    X(MULTIPLE_OF, "multiple_of", 1, 1, EW)       /* every element is a multiple of values[d] */      \
    X(MAX_CONTIGUOUS, "max_contiguous", 1, 1, EW) /* runs of values[d] elements, starting at multiples of \
                                                     values[d], count up by 1 */                      \
    X(MAX_CONSTANCY, "max_constancy", 1, 1, EW)   /* runs of values[d] elements, likewise, are equal */ \
    /* reductions and scans along attr axis */                                             \
    X(REDUCE, "reduce", 1, -1, OPF_PURE) /* attr kind: sum max min argmax argmin; argmax/argmin: the i32 index, and \
        with a second result the element at that index (x[argmax] bit for bit), both from one combine of (value, index) pairs */ \
    X(SCAN, "scan", 1, 1, OPF_PURE)     /* attr kind: sum (inclusive cumsum) */            \
    X(REDUCE_FN, "reduce_fn", -1, -1, OPF_REGION) /* x0..x(k-1) -> k results without dim attr axis, \
        combined by the region: ^(a0.., b0..) yields k scalars a (+) b, a the earlier elements */ \
    X(SCAN_FN, "scan_fn", -1, -1, OPF_REGION) /* inclusive scan along attr axis, region as reduce_fn */ \
    X(MAP_FN, "map_fn", -1, -1, OPF_REGION) /* x0..x(k-1) of one shape -> m results of that shape: the region \
        ^(x0 e0..e(P-1), x1 e0.., ..) yields (r0 e0..e(P-1), r1 e0.., ..) on scalars, for P = attr pack (1 \
        if absent) elements of a thread at a time (map_elementwise) */ \
    X(DOT, "dot", 3, 1, OPF_PURE)       /* a[M,K] x b[K,N] + acc[M,N] */                   \
    X(GATHER, "gather", 2, 1, OPF_PURE) /* src, index -> r[..i..] = src[..index[..i..] mod S_a..] along attr axis; \
        index (i32) and result share a shape that matches src except along axis; attr xor=j \
        (ival2) promises index = i ^ j (a butterfly partner: registers or shuffles) */       \
    X(UNSTACK, "unstack", 1, -1, OPF_PURE) /* x[S0, ...] -> S0 results x[0] .. x[S0-1] (dim 0 dropped): one round \
        trip of x through shared memory, each result reading its own slab */                 \
    X(STACK, "stack", -1, 1, OPF_PURE)  /* x0 .. x(n-1) of one shape -> [n, ...] with r[k] = xk: each operand written \
        to its slab of shared memory, the result read back */                               \
    /* memory */                                                                           \
    X(LOAD, "load", -1, 1, OPF_MEMORY)  /* ptr [, mask [, other]] */                       \
    X(STORE, "store", -1, 0, OPF_MEMORY) /* ptr, value [, mask] */                         \
    X(ATOMIC_RMW, "atomic_rmw", -1, 1, OPF_MEMORY) /* attr kind add max min xchg and or xor; ptr, val [, mask] -> old */\
    X(ATOMIC_CAS, "atomic_cas", -1, 1, OPF_MEMORY) /* ptr, cmp, val [, mask]; bitwise compare */ \
    X(ATOMIC_POLL, "atomic_poll", -1, 1, OPF_MEMORY) /* ptr (16/32/64-bit integers), expected [, timeout_ns: u64 scalar] -> i1 \
        shaped like ptr: each element loaded (ld.SEM.SCOPE) until it equals expected or timeout_ns of %globaltimer have \
        passed since the op began (loaded at least once); true where it was seen; every thread of the program waits */ \
    /* programmatic dependent launch (griddepcontrol; sm_90 on, nothing on older targets): never removed, and \
     * no load or store moves across a gdc_wait */                                        \
    X(GDC_WAIT, "gdc_wait", 0, 0, 0) /* each thread waits until the grids this launch depends on have completed \
        and their writes are visible (griddepcontrol.wait) */                              \
    X(GDC_LAUNCH_DEPENDENTS, "gdc_launch_dependents", 0, 0, 0) /* the next launch on the stream may begin once \
        every program has issued this or exited (griddepcontrol.launch_dependents) */   \
    /* control flow */                                                                     \
    X(FOR, "for", -1, -1, OPF_REGION)   /* lb, ub, step, inits... -> finals...; attr ival2: 1 + this loop's \
                                           num_stages (0: the kernel's); vec: unroll count (0: LLVM's choice) */ \
    X(WHILE, "while", -1, -1, OPF_REGION) /* c0, inits... -> finals...: carried value 0 is an  \
        i1; the body runs while it is true and yields the next condition and values */     \
    X(IF, "if", 1, -1, OPF_REGION)      /* cond -> yielded values */                       \
    X(YIELD, "yield", -1, 0, OPF_TERMINATOR)                                               \
    X(RETURN, "return", 0, 0, OPF_TERMINATOR)                                              \
    /* inserted by the lowering passes */                                                  \
    X(INLINE_ASM, "inline_asm", -1, 1, OPF_ELEMENTWISE) /* per element: PTX attr msg = constraints "\n" asm; never merged or removed */ \
    X(PRINT, "print", -1, 0, 0)         /* device_print: attr msg, then each element's values (vprintf) */ \
    X(ASSERT, "assert", 1, 0, 0)        /* device_assert: a false element stops the launch with attr msg */ \
    X(ASSUME, "assume", 1, 0, 0)        /* the program may take every element of the i1 operand as true (llvm.assume) */ \
    X(BARRIER, "barrier", 0, 0, 0)      /* bar.sync across the program's threads */          \
    X(LOCAL_ALLOC, "local_alloc", 0, 1, 0) /* a [stages, rows, cols] buffer in shared memory */ \
    X(LOCAL_VIEW, "local_view", 2, 1, OPF_PURE) /* buf, stage -> that stage's [rows, cols] tile */ \
    X(ASYNC_COPY, "async_copy", -1, 0, OPF_MEMORY) /* buf, stage, ptr [, mask]: cp.async, zero-fill */ \
    X(LOCAL_STORE, "local_store", 3, 0, OPF_MEMORY) /* buf, stage, value: write a register tile into that stage */ \
    X(LOCAL_LOAD, "local_load", 1, 1, 0) /* view -> its elements in registers, in the result's layout (a pipelined tile \
        that reaches its dot through register math: a dequantizing cast) */ \
    X(WGMMA_WAIT, "wgmma_wait", 1, 1, 0) /* acc -> acc once the wgmma groups still writing it have completed */ \
    X(ASYNC_COMMIT, "async_commit", 0, 0, 0) /* close the group of copies issued so far */      \
    X(ASYNC_WAIT, "async_wait", 0, 0, 0) /* wait until at most attr ival groups are pending */ \
    X(MBAR_INIT, "mbar_init", 1, 0, 0) /* bars ([stages, 1, 1] i64 buffer): one thread initializes each stage's mbarrier \
        for attr ival arrivals (0: one) */ \
    X(MBAR_INVAL, "mbar_inval", 1, 0, 0) /* bars: one thread invalidates them, after which the memory may serve another use */ \
    X(MBAR_EXPECT, "mbar_expect", 3, 0, 0) /* bars, stage, run: when run, one thread arrives on the stage's mbarrier expecting attr ival bytes */ \
    X(MBAR_WAIT, "mbar_wait", -1, 0, 0) /* bars, stage, phase [, run]: every thread (when run) waits until the phase of parity \
        `phase` has completed */ \
    X(MBAR_ARRIVE, "mbar_arrive", 3, 0, 0) /* bars, stage, run: when run, every thread arrives on the stage's mbarrier */ \
    X(WS_PRODUCER, "ws_producer", 0, 0, OPF_REGION) /* the producer warpgroup (attr ival warps, after the num_warps \
        others) runs the region and exits; the others skip it and run the rest of the kernel */ \
    X(TMA_STORE, "tma_store", -1, 0, OPF_MEMORY) /* buf, stage, coords (i32, innermost first): one thread copies the stage to \
        the box of tensor map attr ival at coords (cp.async.bulk.tensor; elements outside the map's bounds are not written) \
        and commits a bulk group; with attr kind (ival2 = 1 + RedKind: add max min and or xor) it reduces the stage into \
        the box instead, each element atomically (cp.reduce.async.bulk.tensor, the map's element type) */ \
    X(TMA_STORE_WAIT, "tma_store_wait", 1, 0, 0) /* buf: the thread that issues tma_stores waits until they have read their \
        stages (buf: what they read, kept live until here) */ \
    X(TURN_START, "turn_start", 0, 0, 0) /* pingpong: the last computing warpgroup hands the first its first turn */ \
    X(TURN_WAIT, "turn_wait", 0, 0, 0) /* pingpong: a computing warpgroup waits until the one before it has passed it the turn */ \
    X(TURN_PASS, "turn_pass", 0, 0, 0) /* pingpong: it passes the turn to the next one (without waiting) */ \
    X(TMA_LOAD, "tma_load", -1, 0, OPF_MEMORY) /* buf, stage, bars, run, coords (i32, innermost first): when run, one thread \
        copies the box of the kernel's tensor map attr ival at coords into the stage (cp.async.bulk.tensor), completing its bytes on the stage's mbarrier */

typedef enum Op {
#define X(e, n, no, nr, f) OP_##e,
    TIR_OPS(X)
#undef X
        OP_COUNT
} Op;

typedef struct OpInfo {
    const char *name;
    int nops, nres;
    unsigned flags;
} OpInfo;
extern const OpInfo tir_op_info[OP_COUNT];
Op tir_op_from_name(const char *s, size_t n); /* OP_COUNT if unknown */

/* attr kind values: X(ENUM, "name") */
#define TIR_CMP_PREDS(X) X(EQ, "eq") X(NE, "ne") X(LT, "lt") X(LE, "le") X(GT, "gt") X(GE, "ge")
typedef enum CmpPred {
#define X(e, n) CMP_##e,
    TIR_CMP_PREDS(X)
#undef X
} CmpPred;
#define TIR_REDUCE_KINDS(X) X(SUM, "sum") X(MAX, "max") X(MIN, "min") X(ARGMAX, "argmax") X(ARGMIN, "argmin") \
    X(XCHG, "xchg") X(AND, "and") X(OR, "or") X(XOR, "xor") /* these four: atomic_rmw only */
typedef enum RedKind {
#define X(e, n) RED_##e,
    TIR_REDUCE_KINDS(X)
#undef X
} RedKind;
/* Kinds that carry an i32 index through the combine (ties to the smaller index, a NaN beating any number). */
static inline bool tir_red_is_arg(RedKind k) { return k == RED_ARGMAX || k == RED_ARGMIN; }
/* Memory ordering and scope of atomics (attrs sem, scope); the first entry is the default,
 * as Triton: acq_rel at gpu scope.  The names are PTX's qualifiers. */
#define TIR_MEM_SEMS(X) X(ACQ_REL, "acq_rel") X(RELAXED, "relaxed") X(ACQUIRE, "acquire") X(RELEASE, "release")
typedef enum MemSem {
#define X(e, n) SEM_##e,
    TIR_MEM_SEMS(X)
#undef X
    SEM_COUNT
} MemSem;
#define TIR_MEM_SCOPES(X) X(GPU, "gpu") X(CTA, "cta") X(SYS, "sys")
typedef enum MemScope {
#define X(e, n) SCOPE_##e,
    TIR_MEM_SCOPES(X)
#undef X
    SCOPE_COUNT
} MemScope;
extern const char *const tir_cmp_names[];
extern const char *const tir_red_names[];
/* Whether a tensor reduction (cp.reduce.async.bulk.tensor) does `kind` on elements a map declares `elem`:
 * add on u32 i32 u64 f16 bf16 f32; max and min on u32 i32 u64 i64 f16 bf16; and, or, xor on 32- and 64-bit integers. */
bool tir_tma_reduce_ok(RedKind kind, DType elem);
/* inline_asm's registers.  The constraints are LLVM's: the outputs ("=X" or "=&X") first, then one input
 * per register (a letter, or the digit of the output whose register it starts as), then "~{...}"
 * clobbers; X is h (16-bit), r (32), l (64), f (f32) or d (f64).  With `pack` P an asm runs on P
 * elements at once: a value of b-bit elements takes e = min(32 / b, P) of them per register when b < 32
 * (one otherwise), so ceil(P / e) registers of e * b bits, as Triton packs them. */
#define TIR_ASM_MAX_REGS 64
typedef struct AsmRegs {
    int nout, nin;
    DType out[TIR_ASM_MAX_REGS], in[TIR_ASM_MAX_REGS]; /* each register's type: i16 i32 i64 f32 f64 */
} AsmRegs;
/* NULL, or what is wrong with the constraints (in buf, `len` bytes). */
const char *tir_asm_regs(const char *constraints, AsmRegs *r, char *buf, size_t len);
/* NULL, or what is wrong with the assembly's operand references (in buf): each `$` is `$$`, `$N` or `${N}`
 * with N below `noperands` (LLVM aborts the process on any other). */
const char *tir_asm_text_check(const char *text, int noperands, char *buf, size_t len);
/* Elements of a `bits`-wide type per register at `pack` (e above). */
int tir_asm_per_reg(int bits, int pack);
/* The registers a value of type dt (a pointer: 64 bits) takes at `pack`, each *bits wide. */
int tir_asm_value_regs(DType dt, int pack, int *bits);
extern const char *const tir_sem_names[];
extern const char *const tir_scope_names[];

/* Shared memory: up to 48 KiB is a static array in the kernel; beyond that it is dynamic
 * (the launch passes the size) up to the architecture's limit. */
int tir_smem_limit(const char *arch); /* bytes of shared memory per block on the target (support/target.h) */

typedef uint32_t ValueId;

typedef struct Inst Inst;
typedef struct Block Block;
typedef struct Func Func;

typedef struct Value {
    const Type *type;
    Inst *def;       /* defining instruction, or NULL for block arguments */
    Block *block;    /* for block arguments: owning block */
    uint16_t index;  /* result index in def, or argument index */
    const char *name;/* name hint for printing, may be NULL */
} Value;

struct Block {
    Inst *first, *last;
    ValueId *args;
    int nargs;
    Inst *parent; /* owning region inst; NULL for the function body */
};

/* Which Attrs fields an op uses (the printer, parser and verifier agree on this):
 *   const: ival (ints) or fval with is_float;  arange: ival = start, ival2 = end
 *   program_id, num_programs, expand_dims, gather, reduce_fn, scan_fn: ival = axis;  gather: ival2 = xor;  trans: perm
 *   reduce, scan: ival = axis, ival2 = RedKind;  cmp: ival2 = CmpPred
 *   atomic_rmw: ival2 = RedKind (sum is add);  atomics, atomic_poll: sem, scope (printed when not the default);  dot: allow_tf32
 *   convert_layout, reduce, scan, reduce_fn, scan_fn, dot, gather, local_alloc, atomics and atomic_poll (results to replicas):
 *   smem_offset/smem_bytes after smem_alloc
 *   async_wait: ival = groups that may stay pending;  async_copy: vec (elements per copy)
 *   tma_load, tma_store: ival = tensor map;  mbar_expect: ival = bytes;  mbar_init: ival = arrivals;  ws_producer: ival = warps
 *   exp, exp2: ival = 1 for the exact (full-range, no flush-to-zero) form */
/* Cache hints of load/store (attr cache), PTX's qualifiers: a cache operator
 * (`ld.global.cg`) or an L1 eviction priority (`ld.global.L1::evict_last`), or
 * `volatile`; the first entry of each table is "none". */
#define TIR_CACHE_COPS(X) X(NONE, "") X(CA, ".ca") X(CG, ".cg") X(CS, ".cs") X(LU, ".lu") X(CV, ".cv") X(WB, ".wb") X(WT, ".wt")
typedef enum CacheCop {
#define X(e, n) COP_##e,
    TIR_CACHE_COPS(X)
#undef X
    COP_COUNT
} CacheCop;
#define TIR_EVICTIONS(X) X(NONE, "") X(NORMAL, "evict_normal") X(FIRST, "evict_first") X(LAST, "evict_last") \
    X(UNCHANGED, "evict_unchanged") X(NO_ALLOCATE, "no_allocate")
typedef enum Eviction {
#define X(e, n) EVICT_##e,
    TIR_EVICTIONS(X)
#undef X
    EVICT_COUNT
} Eviction;
/* Bits of a load's or store's attr cache above the cache operator and eviction policy: VOLATILE is
 * `ld.volatile`; STRONG an atomic access, `ld.SEM.SCOPE` / `st.SEM.SCOPE` with the instruction's sem
 * and scope (atomic_load, atomic_store), one element an instruction.  Either keeps the access where
 * it is (no dead-code removal, no pipelining). */
enum { TIR_CACHE_VOLATILE = 64, TIR_CACHE_STRONG = 128, TIR_CACHE_ORDERED = TIR_CACHE_VOLATILE | TIR_CACHE_STRONG };
static inline bool tir_is_hint(Op op) { return op == OP_MULTIPLE_OF || op == OP_MAX_CONTIGUOUS || op == OP_MAX_CONSTANCY; }
static inline int tir_cache_cop(int cache) { return cache & 7; }
static inline int tir_cache_evict(int cache) { return (cache >> 3) & 7; }
extern const char *const tir_cop_names[COP_COUNT], *const tir_evict_names[EVICT_COUNT];

typedef struct Attrs {
    int64_t ival, ival2;
    double fval;           /* float constant */
    int32_t perm[TIR_MAX_RANK];
    int32_t smem_offset;   /* scratch shared memory (bytes), -1 none; set by smem_alloc */
    int32_t smem_bytes;    /* scratch size needed */
    uint8_t is_float;      /* const: fval holds the value */
    uint8_t allow_tf32;    /* dot: input precision hint (tensor-core issue) */
    uint8_t cache;         /* load/store cache hints: TIR_CACHE_COP | TIR_CACHE_EVICT << 3 | volatile << 6 (0 none) */
    uint8_t vec;           /* load/store: elements per vector access, set by lowering analysis */
    uint8_t sem, scope;    /* atomics: MemSem, MemScope */
    const char *msg;       /* print, assert: the message (arena) */
} Attrs;

struct Inst {
    Op op;
    Inst *prev, *next;
    Block *parent;
    ValueId *ops;
    int nops;
    ValueId *res;
    int nres;
    Block **regions;
    int nregions;
    Attrs a;
    Loc loc;
};

/* Run-time argument specialization (recorded in the kernel signature). */
typedef enum ArgSpec { SPEC_NONE = 0, SPEC_ONE = 1, SPEC_NULL = 2, SPEC_DIV16 = 16 } ArgSpec;

typedef struct FuncArg {
    const char *name;
    ValueId value;
    ArgSpec spec;  /* ints: ==1 or %16==0; pointers: 16-byte aligned when DIV16, None (unused, launched as 0) when NULL */
} FuncArg;

/* A tensor map (CUtensorMap) the launcher encodes before each launch from the run-time arguments
 * and passes after them, as a 128-byte grid-constant parameter (the tma pass makes them).  Sizes
 * and strides are host expressions over the kernel's arguments: sum of c * arg[a0] * arg[a1]
 * (a = -1: none); a dim with no terms (n == 0) is unbounded. */
enum { TMA_MAX_RANK = 5, TMA_MAX_TERMS = 4 };
typedef struct HostTerm {
    int64_t c;
    int16_t a[2];
} HostTerm;
typedef struct HostExpr {
    int n;
    HostTerm t[TMA_MAX_TERMS];
} HostExpr;
typedef struct TensorMap {
    int base;                      /* the pointer argument */
    int rank;
    int esize;                     /* bytes per element */
    DType elem;                    /* what a reduction through the map reads its elements as (u32 u64 i32 f16 bf16 f32);
                                      DT_VOID: unsigned integers of esize bytes (copies) */
    int swizzle;                   /* 0, 32, 64 or 128 bytes */
    int32_t box[TMA_MAX_RANK];     /* elements per dim, innermost first */
    HostExpr dim[TMA_MAX_RANK];    /* elements per dim; n == 0: unbounded */
    HostExpr stride[TMA_MAX_RANK]; /* in elements, dims 1.. (stride[0] unused: 1) */
} TensorMap;
enum { TMA_UNBOUNDED = 0x7FFFFFFF, TIR_MAX_TMAPS = 16 };

struct Func {
    struct Module *module;
    const char *name;
    Block *body;
    FuncArg *args;
    int nargs;
    Value *values; /* values[0] unused */
    uint32_t nvalues, cap_values;
    int num_warps, num_stages;
    bool warp_specialize; /* asked for (@warp_specialize): loads issued by a producer warpgroup */
    int producer_warps;   /* warps launched after num_warps for a ws_producer region (warp_specialize pass) */
    bool pingpong;        /* asked for (@pingpong): the computing warpgroups take turns issuing a loop's first dot */
    bool overlap;         /* asked for (@overlap): a loop's second dot is issued with the next iteration's first */
    int smem_bytes; /* total shared memory needed, set by smem_alloc */
    TensorMap *tmaps; /* hidden parameters after the arguments, set by tma */
    int ntmaps;
    Loc loc;
};

typedef struct Module {
    Arena *arena;
    Func **funcs;
    int nfuncs, cap_funcs;
    const char *arch; /* a target of support/target.h (checked by the driver) */
    bool no_tma;      /* the driver's no_tma option: loads stay cp.async on sm_90a */
    /* interning tables */
    const Type **types;
    int ntypes, cap_types;
    const Layout **layouts;
    int nlayouts, cap_layouts;
} Module;

/* ---- construction ---- */
Module *tir_module_new(Arena *a);
Func *tir_func_new(Module *m, const char *name);
FuncArg *tir_func_add_arg(Func *f, const char *name, const Type *t);
const Type *tir_type(Module *m, DType dt, int rank, const int32_t *shape, const Type *pointee,
                     const Layout *layout);
const Type *tir_scalar(Module *m, DType dt);
const Type *tir_ptr(Module *m, const Type *pointee);  /* scalar pointer */
const Type *tir_with_shape(Module *m, const Type *t, int rank, const int32_t *shape); /* keeps dt/pointee, drops layout */
const Type *tir_with_dtype(Module *m, const Type *t, DType dt); /* keeps shape+layout */
const Type *tir_with_layout(Module *m, const Type *t, const Layout *l);
const Type *tir_elem(Module *m, const Type *t); /* scalar type of elements */
const Layout *tir_layout_intern(Module *m, const Layout *l);
bool tir_type_is_tensor(const Type *t);
int64_t tir_type_numel(const Type *t);

ValueId tir_new_value(Func *f, const Type *t, Inst *def, int index);
static inline Value *tir_val(Func *f, ValueId v) { return &f->values[v]; }
static inline const Type *tir_vtype(Func *f, ValueId v) { return f->values[v].type; }
Block *tir_block_new(Func *f, Inst *parent);
ValueId tir_block_add_arg(Func *f, Block *b, const Type *t);

/* Create an Inst (not yet in a block).  Results get the given types. */
Inst *tir_inst_new(Func *f, Op op, const ValueId *ops, int nops, const Type *const *res_types, int nres, Loc loc);
void tir_block_append(Block *b, Inst *i);
void tir_insert_before(Inst *pos, Inst *i);
void tir_insert_after(Inst *pos, Inst *i);
void tir_inst_remove(Inst *i); /* unlinks; does not touch uses */
void tir_inst_add_region(Func *f, Inst *i, Block *b);
void tir_inst_set_operand(Func *f, Inst *i, int k, ValueId v);

/* Builder: appends at an insertion point. */
typedef struct Builder {
    Func *f;
    Block *block;
    Inst *before; /* insert before this inst; NULL: append to block */
    Loc loc;
} Builder;
Inst *tir_emit(Builder *b, Op op, const ValueId *ops, int nops, const Type *res_type); /* 0 or 1 result */
ValueId tir_emit_v(Builder *b, Op op, const ValueId *ops, int nops, const Type *res_type);
ValueId tir_const_int(Builder *b, const Type *t, int64_t v);
ValueId tir_const_float(Builder *b, const Type *t, double v);

/* Loops: `for` (operands lb, ub, step, inits...; body args iv, carried...) and `while`
 * (operands c0, inits...; body args c, carried...: carried value 0 is the i1 condition, true
 * in the body).  Carried value k is operand tir_loop_init(i) + k, body argument
 * tir_loop_arg(i) + k, operand k of the body's yield and result k. */
static inline bool tir_is_loop(Op op) { return op == OP_FOR || op == OP_WHILE; }
static inline int tir_loop_init(const Inst *i) { return i->op == OP_FOR ? 3 : 0; }
static inline int tir_loop_arg(const Inst *i) { return i->op == OP_FOR ? 1 : 0; }

/* Replace every use of `from` with `to` in f (looking only where `from` can be read: after its definition in its
 * block, or in the block whose argument it is). */
void tir_replace_uses(Func *f, ValueId from, ValueId to);
bool tir_value_used(const Block *b, ValueId v); /* whether an instruction in b (or its regions) reads v */
bool tir_result_used(const Func *f, ValueId v); /* whether anything in f reads v (looking where tir_replace_uses does) */
bool tir_block_holds(const Block *b, Op op);     /* whether an instruction in b (or its regions) is an `op` */
/* Use counts for all values (array of f->nvalues, malloc'd). */
int *tir_use_counts(Func *f);

/* Iterate every inst of a block tree in program order (pre-order). */
typedef bool (*TirVisitFn)(Inst *i, void *ud); /* return false to stop */
bool tir_walk(Block *b, TirVisitFn fn, void *ud);

/* ---- text ---- */
void tir_print_type(Str *s, const Type *t);
void tir_print_layout(Str *s, const Layout *l);
void tir_print_module(Str *s, const Module *m);
void tir_print_func(Str *s, const Func *f);
/* "base %a, esize 2, swizzle 128, box [64, 128], dims [%k, ?], strides [%lda]" (arguments by name),
 * or with "$N" for argument N when by_index (the kernel metadata's form, read by the launcher). */
void tir_print_tmap(Str *s, const Func *f, const TensorMap *tm, bool by_index);
/* Parse the text form back (for pass tests).  Returns NULL on error (diagnostics in d). */
Module *tir_parse(Arena *a, const SrcFile *src, Diag *d);

/* ---- verifier: structural and type invariants; errors into d ---- */
bool tir_verify(Module *m, Diag *d);

#endif
