/* llvm.h - Tile IR (with layouts) -> LLVM IR -> PTX.  The only files that touch
 * the LLVM C API are lower/llvm_*.c; this header keeps LLVM types out of the
 * rest of the compiler. */
#ifndef TILE_LLVM_H
#define TILE_LLVM_H

#include "tir.h"

typedef struct LlvmOptions {
    const char *arch;      /* a target of support/target.h; NULL: the default */
    bool run_o3;           /* the O3 passes (O3_PIPELINE, llvm_codegen.c) before emission */
    bool want_llvm_text;   /* fill out->llvm_ir */
    bool time_stages;
    bool line_info;        /* .file/.loc directives: each instruction's .tile file, line and column */
    int threads;           /* workers for a module of several kernels; 0: one per CPU (at most 8) */
} LlvmOptions;

typedef struct LlvmResult {
    char *llvm_ir;   /* malloc'd, optional */
    char *ptx;       /* malloc'd */
    double seconds_codegen, seconds_opt, seconds_emit;
} LlvmResult;

/* Lower a verified, layout-assigned module.  Errors (an op the target can't
 * do, an LLVM verifier failure) become diagnostics; returns false then. */
bool llvm_lower_module(Module *m, const LlvmOptions *o, LlvmResult *out, Diag *d);
void llvm_result_free(LlvmResult *r);

#endif
