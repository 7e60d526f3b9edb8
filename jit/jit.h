/* jit.h - what the files of jit/ (the compile driver and cache) share
 * beyond the public API (internal).
 *
 *   compile.c  tile_compile_*: source -> Tile IR -> passes -> LLVM -> PTX -> cubin
 *   cache.c    the on-disk compile cache (jit_cache_compile)
 *   load.c     tile_module_load_file/source: compile through the caches, load into a context
 *   tune.c     tuning spaces and the tuning database
 *   aot.c      tile_aot_export */
#ifndef TILE_JIT_H
#define TILE_JIT_H

#include "include/tile/tile.h"
#include "runtime/rt.h"
#include "support/support.h"

#include <stdbool.h>

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

/* ---- load.c ---- */
/* tile_module_load_file_ex with the context's lock held; *source: 0 already
 * loaded, 1 disk cache, 2 compiled. */
tile_status jit_load_file_locked(tile_context *ctx, const char *path, const tile_compile_options *opt, tile_module **out,
                                 int *source);

#endif
