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

/* num_sms() when neither the options nor a context give the count (an H100 SXM's) */
enum { TILE_DEFAULT_NUM_SMS = 132 };

/* ---- compile.c ---- */
/* The file and its imports as the compiler resolves them; -1 when they do not parse. */
int jit_source_files(Arena *a, const SrcFile *src, const tile_compile_options *opt, const SrcFile ***out);
/* The caller's options (NULL: the defaults) as this release reads them (rt_struct_in: opt->size); false, with
 * "opt->size = ..." in err, for a size that is no struct size.  Every entry point taking options calls it first:
 * the callers put their own names before err, never "opt->" (written here only). */
bool jit_options_in(const tile_compile_options *opt, tile_compile_options *o, char *err, size_t err_size);
/* jit_options_in for the entry points that answer in a tile_compiled (tile_compile_*, tile_cache_compile_*): on a
 * bad size, TILE_ERROR_INVALID_VALUE with "error: opt->size = ...\n" in *diagnostics (malloc'd). */
tile_status jit_options_read(const tile_compile_options *opt, tile_compile_options *o, char **diagnostics);
/* tile_compile_source on src as it is: its len bytes (a file's NUL byte is an error, not its end).  imports
 * (optional out): the jit_imports_digest of the imports the compiler read, the texts this code was built from. */
tile_status jit_compile_src(const SrcFile *src, const tile_compile_options *opt, tile_compiled *out, unsigned char imports[16]);

/* The source a tile_*compile_file call names, into src (its text freed by the caller): clears *out first; a NULL
 * path or a file that cannot be read is out->diagnostics and the status (src->text NULL). */
tile_status jit_read_file(const char *path, tile_compiled *out, SrcFile *src);

/* ---- cache.c ---- */
/* Compile src through the disk cache in dir (NULL: no disk cache, just
 * compile).  *from_cache: 1 when read from disk.  imports (optional out): the
 * jit_imports_digest of the import texts the code was built from.  A compile
 * that read other import texts than the key was taken from (a file changed
 * in between) is not stored. */
tile_status jit_cache_compile(const char *dir, const SrcFile *src, const tile_compile_options *opt, tile_compiled *out,
                              int *from_cache, unsigned char imports[16]);
/* The imports' part of a cache key: files[1 .. n) (files[0] is the main file) by resolved path, length and text. */
void jit_imports_digest(const SrcFile *const *files, int n, unsigned char out[16]);
/* The ptxas to run, written into buf (the caller's): the given path, else
 * /usr/local/cuda/bin/ptxas, else the first on PATH.  NULL when none runs. */
const char *jit_find_ptxas(const char *given, char *buf, size_t size);
/* The compiler's identity: version, build id, LLVM version (hex digest, static). */
const char *jit_compiler_id(void);
/* The cache folder, opened safely (the rules are in cache.c's design
 * comment): dir made 0700 with its missing parents when create, opened
 * without following a symlink, and used only when it is a directory owned
 * by this user and not writable by its group or others.  Returns its
 * descriptor, or -1: silently when !create and it does not exist (errno
 * ENOENT), else after one warning on stderr. */
int jit_cache_open(const char *dir, bool create);
/* Without the warning (rt_cache_open_why), reading files in the folder (rt_cache_read_max) and the entries'
 * format: the runtime's, runtime/cache_entry.h (libtile_rt reads the cache without the compiler). */
/* Append data to NAME in dfd (created 0600, never through a symlink) in
 * one write with SIGXFSZ blocked; false with errno. */
bool jit_cache_append(int dfd, const char *name, const void *data, size_t n);
/* Replace dfd/name by data whole: a temporary file in dfd renamed over it (readers see the old or the
 * new contents, never part); false with errno. */
bool jit_cache_replace(int dfd, const char *name, const void *data, size_t n);
/* The records of the tuning database dfd/tune.db (tune.c: lines that are no record not counted). */
uint64_t jit_tune_count(int dfd);
/* An exclusive lock on NAME in dfd (a regular file made 0600 for the purpose, never through a symlink; flock, so
 * it serializes threads and processes alike and goes with the process): the descriptor to close to release it,
 * or -1 with errno (a folder it cannot be made in: the caller goes on unlocked and its write fails there). */
int jit_cache_lock(int dfd, const char *name);
/* Warnings on stderr, one per process and cause ("tile: warning: ..."); every
 * occurrence is also logged under TILE_DEBUG=cache. */
typedef enum JitWarn {
    JIT_WARN_FOLDER,  /* the cache folder is refused or cannot be made */
    JIT_WARN_NOSPC,   /* ENOSPC, EDQUOT: the disk is full */
    JIT_WARN_ROFS,    /* EROFS: a read-only file system */
    JIT_WARN_FBIG,    /* EFBIG: past the file-size limit (ulimit -f) */
    JIT_WARN_ACCES,   /* EACCES, EPERM: no permission */
    JIT_WARN_SYMLINK, /* ELOOP: a symlink inside the folder, not followed */
    JIT_WARN_WRITE,   /* any other write failure */
    JIT_WARN_TUNE,    /* a tune.db record was ignored */
    JIT_WARN_COUNT
} JitWarn;
void jit_cache_warn(JitWarn cause, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Warn that writing `what` into the cache folder dir failed with err (the cause from err). */
void jit_cache_warn_write(const char *dir, const char *what, int err);
/* Hex of an XXH3-128 of data. */
void jit_hash_hex(const void *data, size_t n, char out[33]);
/* A NULL-terminated list of defines or specializations into an XXH3 state, sorted by NAME (a name given twice in
 * its order): their order changes no kernel, so it changes no key (cache.c's disk key, load.c's memory key). */
struct XXH3_state_s;
void jit_hash_set(struct XXH3_state_s *st, const char *const *list);

/* ---- load.c ---- */
/* tile_module_load_file_ex with the context's lock held; *source: 0 already
 * loaded, 1 disk cache, 2 compiled. */
tile_status jit_load_file_locked(tile_context *ctx, const char *path, const tile_compile_options *opt, tile_module **out,
                                 int *source);

#endif
