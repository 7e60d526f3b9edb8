/* llvm_ctx.h - state shared by the LLVM lowering files (lower/llvm_*.c only).
 *
 * One LL per module lowering: it owns every LLVM handle and caches types.
 * Each Tile IR value maps to an array of LLVM values, one per register the
 * thread holds (layout.h); scalars have one register. */
#ifndef TILE_LLVM_CTX_H
#define TILE_LLVM_CTX_H

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "layout.h"
#include "llvm.h"

typedef struct RegsCache {
    const Type *type;
    LayoutRegs regs;
} RegsCache;

typedef struct LineInfo LineInfo; /* llvm_lineinfo.c */

typedef struct LL {
    Module *m;
    Func *f;
    Diag *d;
    const LlvmOptions *opt;
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    LLVMBuilderRef b;
    LLVMTargetMachineRef tm;
    LLVMValueRef fn;
    /* cached types */
    LLVMTypeRef t_void, t_i1, t_i8, t_i16, t_i32, t_i64, t_f16, t_bf16, t_f32, t_f64, t_gptr, t_sptr;
    /* per function */
    LLVMValueRef **vals; /* by ValueId */
    int *nvals;
    bool *strided; /* by ValueId: registers apart by multiples of a run-time scalar (llvm_elementwise.c) */
    LLVMValueRef tid, lane, warp;
    /* thread terms, computed once per (layout, dim) in the entry block */
    LLVMBasicBlockRef entry;
    struct { const Layout *lay; int dim; LLVMValueRef v; } *terms;
    int nterms, capterms;
    LLVMValueRef smem; /* ptr addrspace(3) scratch base, NULL when the kernel needs none */
    RegsCache *rc;
    int nrc, caprc;
    LineInfo *li; /* .file/.loc line info; NULL: off */
    const Inst *tma_issued[16]; /* tma_loads an mbar_expect already issued in its elected block */
    int ntma_issued;
    int issue_warp;     /* the warp whose elected lane issues one-thread work (mbar_*, tma_load) */
    int barrier_count;  /* computing warps of a warp-specialized kernel: their barriers are named barrier 1 of
                           this many threads (0: bar.sync 0 over the block) */
    bool failed;
} LL;

/* llvm_helpers.c: below the dispatcher (llvm_codegen.c) and the op-family emitters alike */
LLVMTypeRef ll_type(LL *l, DType dt);                /* scalar element type; ptr -> ptr addrspace(1) */
LLVMValueRef ll_intr(LL *l, const char *name, LLVMTypeRef *ovl, int novl, LLVMValueRef *args, int nargs);
LLVMValueRef ll_asm(LL *l, LLVMTypeRef ret, const char *text, const char *constraints, LLVMValueRef *args, int nargs, bool side_effects);
LLVMValueRef ll_i32(LL *l, int64_t v);
LLVMValueRef ll_as_i32(LL *l, LLVMValueRef v); /* an integer as i32 (truncated or sign-extended): stage indices, coordinates */
const LayoutRegs *ll_regs_of(LL *l, const Type *t);
LLVMValueRef ll_thread_term(LL *l, const Layout *lay, int dim); /* T_d */
LLVMValueRef ll_coord(LL *l, const Type *t, int reg, int dim);   /* element coordinate of a register */
/* i1: this register is the canonical copy of its element (not a replica in another thread or register) */
LLVMValueRef ll_owner(LL *l, const Type *t, int reg);
LLVMValueRef *ll_get(LL *l, ValueId v, int *n);
LLVMValueRef *ll_new(LL *l, ValueId v, int n);       /* allocate the register array of v */
void ll_error(LL *l, Loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void ll_barrier(LL *l);
LLVMValueRef ll_smem_ptr(LL *l, int byte_offset_const, LLVMValueRef byte_offset_dyn); /* into scratch */
/* Shared addresses of a tensor's registers, each a constant offset from an earlier one where that holds in every
 * thread (llvm_helpers.c): find gives it, or NULL, and then the caller builds the address and adds it as a basis.
 * host: the byte offset of the element at coordinates coord, computed as the emitted IR computes it (false: a
 * coordinate the IR would read otherwise; the register then never shares). */
typedef bool (*LLHostOffset)(const void *ctx, const int64_t *coord, int64_t *off);
enum { LL_ADDR_BASES = 8 };
typedef struct LLAddrs {
    const Type *ty;
    const LayoutRegs *lr;
    LLHostOffset host;
    const void *ctx;
    int nth;                   /* combinations of thread-term values enumerated */
    int *term[TIR_MAX_RANK];   /* their values, per dim */
    int64_t *cur;              /* offsets of the register find looked at last, per combination */
    bool cur_ok;
    int nb;
    int64_t *off[LL_ADDR_BASES]; /* a basis's offsets */
    LLVMValueRef ptr[LL_ADDR_BASES];
} LLAddrs;
void ll_addrs_init(LLAddrs *A, const Type *ty, const LayoutRegs *lr, LLHostOffset host, const void *ctx);
LLVMValueRef ll_addrs_find(LL *l, LLAddrs *A, int r);
void ll_addrs_add(LLAddrs *A, LLVMValueRef ptr); /* the address of the register find looked at last */
/* The same without a layout: the caller fills cur[0 .. nth) with each thread's offset, then asks match
 * (and adds the address it built where match gives NULL). */
void ll_addrs_init_threads(LLAddrs *A, int nth);
LLVMValueRef ll_addrs_match(LL *l, LLAddrs *A);
void ll_addrs_free(LLAddrs *A);
/* Values computed once per kernel: the builder moves before the entry block's branch, and back to the
 * end of the block it was in, keeping the debug location of the instruction being lowered. */
typedef struct LLInsertPoint {
    LLVMBasicBlockRef block;
    LLVMMetadataRef dbg;
} LLInsertPoint;
LLInsertPoint ll_enter_entry(LL *l);
void ll_leave_entry(LL *l, LLInsertPoint ip);

/* llvm_lineinfo.c: .file/.loc line info from the Tile IR's locations (only when l->li is made by begin) */
void ll_lineinfo_begin(LL *l, const SrcFile *main_file);
void ll_lineinfo_func(LL *l, Func *f); /* after l->fn is created */
void ll_lineinfo_at(LL *l, Loc loc);    /* the location of what the builder builds next */
void ll_lineinfo_end(LL *l);            /* before LLVMVerifyModule */
void ll_lineinfo_free(LL *l);
/* The emitted PTX with each `.file` name's `\"` written `\042`, which ptxas reads (NULL: nothing to change) */
char *ll_lineinfo_ptx_file_names(const char *ptx);

/* llvm_codegen.c: one combine of reduce_fn / scan_fn: the region on k scalar pairs (a earlier) */
bool ll_emit_combine(LL *l, Block *body, int k, LLVMValueRef *a, LLVMValueRef *b, LLVMValueRef *out);

/* llvm_elementwise.c: constants, index sources, shape ops, arithmetic, math, casts */
bool ll_emit_elementwise(LL *l, Inst *i);
LLVMValueRef ll_cast(LL *l, LLVMValueRef v, DType from, DType to);
LLVMValueRef ll_const_of(LL *l, DType dt, const Attrs *a);
/* llvm_math.c: f32 asin acos atan atan2 sinh cosh log1p expm1 fmod (y: atan2's x, fmod's y); NULL for other ops */
LLVMValueRef ll_math_ext_f32(LL *l, Op op, LLVMValueRef x, LLVMValueRef y);
/* llvm_math64.c: f64 math (and the f32 forms of asinh acosh atanh pow erfc cbrt hypot, computed
 * in f64 and rounded once); NULL for an op it does not know */
LLVMValueRef ll_math_f64(LL *l, Op op, LLVMValueRef x, LLVMValueRef y);
/* The same as a call of one noinline helper of the module per op (for a tile of many elements per thread:
 * inlined, 128 lgammas a thread took seconds to compile); NULL where ll_math_f64 has no lowering. */
LLVMValueRef ll_math_f64_call(LL *l, Op op, LLVMValueRef x, LLVMValueRef y);
/* llvm_memory.c: load, store, atomics */
bool ll_emit_memory(LL *l, Inst *i);
/* llvm_debug.c: device_print (vprintf), device_assert (__assertfail) */
bool ll_emit_debug(LL *l, Inst *i);
/* llvm_shared.c: convert_layout, reshape, reduce, scan, dot */
bool ll_emit_shared(LL *l, Inst *i);
/* Round trip through scratch at byte offset `off`, row-major in t's shape: the canonical
 * registers write (replicas skip), and after a barrier every register reads. */
void ll_smem_write_tensor(LL *l, const Type *t, LLVMValueRef *vals, int off);
void ll_smem_read_tensor(LL *l, const Type *t, LLVMValueRef *out, int off);
/* llvm_mma.c: dot on tensor cores (operands in DOT_A/DOT_B, accumulator in MMA layouts) */
bool ll_emit_dot_mma(LL *l, Inst *i);
bool ll_emit_dot_mma_smem(LL *l, Inst *i); /* operands in any layout, staged in scratch, read with ldmatrix */
bool ll_emit_async(LL *l, Inst *i);        /* local_alloc, local_view, async_copy / commit / wait */
/* A dot whose wgmma reads A from registers and leaves its group in flight past the end of the loop
 * iteration (emit_loop then emits two bodies a trip, so each wgmma has A registers of its own) */
bool ll_dot_a_regs_in_flight(LL *l, const Inst *i);
/* llvm_tma.c: the tensor-map parameters (types, then their attributes once l->fn exists) and
 * mbar_* / tma_load */
void ll_tma_params(LL *l, LLVMTypeRef *pt, int from, int n);
void ll_tma_param_attrs(LL *l, int from, int n);
bool ll_emit_tma(LL *l, Inst *i);

#endif
