/* tile.h - the public C API of tile: compile .tile kernels to PTX and cubin.
 *
 * C17, no CUDA headers needed.  Every function returns a status; the
 * library never exits or aborts on user input.  Launching lives in the
 * device layer (see docs/architecture.md). */
#ifndef TILE_TILE_H
#define TILE_TILE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tile_status {
    TILE_OK = 0,
    TILE_ERROR_INVALID_VALUE = 1, /* bad argument or option */
    TILE_ERROR_COMPILE = 2,       /* the source has errors: see diagnostics */
    TILE_ERROR_IO = 3,            /* a file could not be read or written */
    TILE_ERROR_PTXAS = 4,         /* ptxas rejected the PTX or could not run */
    TILE_ERROR_INTERNAL = 5,      /* a bug in tile: please report it */
} tile_status;

typedef struct tile_compile_options {
    const char *arch;                /* "sm_80" (default) or "sm_90a" */
    const char *kernel;              /* NULL: every kernel of the file, in one module */
    const char *const *defines;      /* NULL-terminated "NAME=VALUE": const parameters, num_warps, num_stages */
    const char *const *include_dirs; /* searched for imports after the importing file's folder */
    const char *const *specialize;   /* NULL-terminated "ARG=1" or "ARG=16" for run-time integer arguments */
    int no_align_ptrs;               /* do not assume 16-byte-aligned pointer arguments */
    const char *dump_after;          /* pass name or "all": IR after it into result->dump */
    int time_passes;                 /* fill result->timing */
    int want_llvm_ir;                /* fill result->llvm_ir */
    int want_cubin;                  /* assemble with ptxas (when present) into result->cubin */
    const char *ptxas;               /* ptxas path; NULL: /usr/local/cuda/bin/ptxas, then PATH */
} tile_compile_options;

typedef struct tile_kernel_info {
    char *name;
    int num_warps, num_stages;
    int smem_bytes;     /* static shared memory */
    char *signature;    /* run-time parameters, e.g. "*f32:16, *f32:16, i32" (:16 divisible/aligned, =1 equal to one) */
    int registers;      /* from ptxas -v, -1 when not assembled */
    int spill_bytes;    /* spill stores + loads bytes from ptxas -v, -1 when not assembled */
} tile_kernel_info;

typedef struct tile_compiled {
    char *tir;          /* Tile IR after the last pass */
    char *llvm_ir;      /* when want_llvm_ir */
    char *ptx;
    void *cubin;        /* when want_cubin and ptxas ran */
    size_t cubin_size;
    char *diagnostics;  /* rendered errors and warnings, "" when none */
    char *dump;         /* dump_after output */
    char *timing;       /* time_passes report */
    char *ptxas_log;    /* ptxas -v output */
    int ptxas_missing;  /* want_cubin was set but no ptxas was found */
    int nkernels;
    tile_kernel_info *kernels;
} tile_compiled;

/* Compile a .tile file / source text.  On TILE_ERROR_COMPILE, out->diagnostics says why.
 * Always call tile_compiled_free(out) afterwards. */
tile_status tile_compile_file(const char *path, const tile_compile_options *opt, tile_compiled *out);
tile_status tile_compile_source(const char *name, const char *source, const tile_compile_options *opt, tile_compiled *out);
void tile_compiled_free(tile_compiled *c);
const char *tile_status_string(tile_status s);

#ifdef __cplusplus
}
#endif
#endif
