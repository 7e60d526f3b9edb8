/* jit.h - what the files of jit/ share beyond the public API (internal).
 *
 *   options.c  the process's knobs (TILE_CACHE_DIR, TILE_DEBUG), read once
 *   compile.c  jit_source_files: a file and its imports, for cache keys
 *   cache.c    the on-disk compile cache (jit_cache_compile)
 *   tune.c     tuning spaces and the tuning database
 *   runtime.c  contexts, modules, kernels, launches
 *   gemm.c     tile_gemm */
#ifndef TILE_JIT_H
#define TILE_JIT_H

#include "../include/tile/tile.h"
#include "../support/support.h"

#include <stdbool.h>

/* ---- options.c: the only reader of TILE_CACHE_DIR, XDG_CACHE_HOME, HOME and TILE_DEBUG ----
 * TILE_DEBUG is a comma-separated list of categories: cache, launch, tune (or all). */
typedef struct JitOptions {
    const char *cache_dir; /* resolved default cache folder, never NULL */
    bool debug_cache;      /* log every cache miss with its reason, every corrupt entry */
    bool debug_launch;     /* log each compile/load done for a launch (tile_gemm variants) */
    bool debug_tune;
} JitOptions;
const JitOptions *jit_options(void);
/* Debug log line to stderr: "tile[cat]: ..." */
void jit_debug(const char *cat, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- compile.c ---- */
/* The file and its imports as the compiler resolves them; -1 when they do not parse. */
int jit_source_files(Arena *a, const SrcFile *src, const tile_compile_options *opt, const SrcFile ***out);

/* ---- cache.c ---- */
/* Compile src through the disk cache in dir (NULL: no disk cache, just
 * compile).  *from_cache: 1 when read from disk. */
tile_status jit_cache_compile(const char *dir, const SrcFile *src, const tile_compile_options *opt, tile_compiled *out,
                              int *from_cache);
/* The compiler's identity: version, build id, LLVM version (hex digest, static). */
const char *jit_compiler_id(void);
/* mkdir -p with mode 0700 for what it creates; false with errno. */
bool jit_mkdirs(const char *path);
/* Hex of an XXH3-128 of data. */
void jit_hash_hex(const void *data, size_t n, char out[33]);

/* ---- runtime.c: what gemm.c and tune.c use of a context ---- */
/* Record a printf-style message as the context's last error and return status. */
tile_status rt_fail(tile_context *ctx, tile_status status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Is [p, p + bytes) inside one allocation of this context?  Fails with a message naming `what`. */
tile_status rt_check_range(tile_context *ctx, tile_devptr p, uint64_t bytes, const char *what);
/* Is s NULL or a live stream of this context?  *impl: the device layer's stream. */
tile_status rt_check_stream(tile_context *ctx, tile_stream s, const char *what, void **impl);
void rt_lock(tile_context *ctx);
void rt_unlock(tile_context *ctx);
/* tile_module_load_file_ex with the lock held; *source: 0 already loaded, 1 disk cache, 2 compiled. */
tile_status rt_load_file_locked(tile_context *ctx, const char *path, const tile_compile_options *opt, tile_module **out,
                                int *source);
const char *rt_cache_dir(tile_context *ctx);    /* NULL when the disk cache is off */
const char *rt_device_key(tile_context *ctx);   /* "emu/sm_80": device name and arch, for the tuning database */
/* The context's tile_gemm state (gemm.c owns it). */
typedef struct GemmState GemmState;
GemmState **rt_gemm_state(tile_context *ctx);
void gemm_state_free(GemmState *g);

#endif
