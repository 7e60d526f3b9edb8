/* passes.h - the Tile IR passes, declared once.
 *
 * X(name, summary): each pass lives in lower/<name>.c as
 *     bool lower_<name>(Module *m, Diag *d);
 * returning false (with diagnostics in d) when the kernel cannot be
 * compiled.  The order they run in is written out in pipeline.c. */
#ifndef TILE_PASSES_H
#define TILE_PASSES_H

#include "tir.h"

#define TIR_PASSES(X)                                                                      \
    X(specialize, "replace arguments specialized to 1 by the constant")                   \
    X(canonicalize, "fold constants, simplify algebra, merge common subexpressions, drop dead code") \
    X(induction, "make a loop's carried values that stay put or advance by a fixed step functions of the induction variable") \
    X(merge_loads, "merge a load into an identical earlier one of its block when nothing between them may write memory") \
    X(contract, "contract f32 multiply-adds (and row-uniform (x - b) * s) into fma")  \
    X(assign_layout, "assign blocked layouts: coalesced, vectorized global access; convert where they differ") \
    X(remove_convert, "drop conversions to the layout a value already has, fold chains")   \
    X(software_pipeline, "stream a dot's operand tiles into shared memory num_stages iterations ahead with cp.async") \
    X(tma, "on sm_90a, stream the pipelined tiles through tensor maps (cp.async.bulk.tensor) and mbarriers") \
    X(warp_specialize, "on sm_90a with @warp_specialize, issue the tensor-map loads from a producer warpgroup of their own") \
    X(peel, "split a loop whose masks are all true but in its last iterations into an unmasked loop and a masked remainder") \
    X(smem_alloc, "give each shared-memory scratch buffer an offset, reusing space by liveness") \
    X(barrier, "insert barriers between shared-memory accesses of different threads")    \
    X(pingpong, "with @pingpong, the computing warpgroups of a warp-specialized kernel take turns issuing a loop's first dot") \
    X(overlap, "with @overlap, a warp-specialized loop of two chained dots issues the second with the next iteration's first")

#define X(n, s) bool lower_##n(Module *m, Diag *d);
TIR_PASSES(X)
#undef X

typedef struct PassInfo {
    const char *name;
    const char *summary;
    bool (*run)(Module *m, Diag *d);
} PassInfo;

extern const PassInfo tir_passes[];
extern const int tir_npasses;
const PassInfo *pass_lookup(const char *name);

/* Options for running the pipeline: dumps and timing go to the caller's strings. */
typedef struct PipelineOptions {
    const char *dump_after; /* pass name, "all", or NULL */
    Str *dump;              /* receives "// -----// IR after <pass> //----- //\n<module>" */
    bool verify;            /* run tir_verify after every pass */
    bool time_passes;
    double *pass_seconds;   /* [tir_npasses], filled when time_passes */
} PipelineOptions;

/* The passes tir_run_pipeline runs, in order (a pass may run twice). */
extern const char *const tir_pipeline_order[];
extern const int tir_pipeline_len;

/* Run every pass in order.  Returns false on the first failing pass or verifier error. */
bool tir_run_pipeline(Module *m, const PipelineOptions *o, Diag *d);

/* ---- analyses shared by passes and the LLVM lowering ---- */
/* Per-dim facts about integer and pointer tensors (Triton's axis info):
 * contiguity: runs of consecutive values (pointers: consecutive elements) along d;
 * divisibility: the first value of each run is a multiple of this (pointers: in bytes);
 * constancy: runs of equal values along d.  Scalars use dim 0. */
typedef struct AxisInfo {
    int32_t contig[TIR_MAX_RANK];
    int32_t div[TIR_MAX_RANK];
    int32_t constancy[TIR_MAX_RANK];
    int64_t value;  /* known constant value when is_const */
    bool is_const;
} AxisInfo;
/* Returns an array indexed by ValueId (f->nvalues entries), malloc'd. */
AxisInfo *axisinfo_compute(Func *f);
/* tma.c: whether the tma pass can read the rank-2 tile at pointers ptr under mask (0: none),
 * memory-contiguous along tile dim contig, through a tensor map (sm_90a, no_tma unset):
 * software_pipeline then pipelines it even where per-thread copies could not (under 4 bytes). */
bool tma_can_load(Module *m, Func *f, ValueId ptr, ValueId mask, int contig);

#endif
