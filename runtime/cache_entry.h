/* cache_entry.h - the compile cache's folder and entry format, as libtile_rt reads them (internal).
 *
 * The compiler (jit/cache.c) writes entries; reading one needs no compiler, so the reader lives here, in the
 * runtime: a program linked to libtile_rt alone lists a cache (tile_cache_list, tile_cache_list_ex) and loads
 * an entry the compiler stored (tile_module_load_cache_entry).  runtime/cache_read.c holds everything both
 * sides use: the folder's safety rules (rt_cache_open_why), files opened by descriptor, the entry header and
 * its checksum, the payload's reader and the walk over the entries.
 *
 * An entry file v1/KK/REST (KK the key's first two hex digits, REST the other 30):
 *   "TILECACH" | checksum (16 bytes: XXH3-128 of everything after it) | format (u32) | identity (16) |
 *   parts (16 each, RT_CACHE_KEY_PARTS order) | payload length (u64) | payload.
 * The key is XXH3-128 of the parts, so the name an entry is stored under can be checked against its header.
 * The checksum only detects damage: the same user can write anything the process reads (docs/runtime.md,
 * "Who the cache trusts"). */
#ifndef TILE_RUNTIME_CACHE_ENTRY_H
#define TILE_RUNTIME_CACHE_ENTRY_H

#include "include/tile/tile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#define RT_CACHE_MAGIC "TILECACH"
#define RT_CACHE_FORMAT 3u /* 2: arch, defines and specializations in the payload; 3: kernels' tensor maps */

/* RT_CACHE_KEY_PARTS(enum, what a miss reports): the parts of a key, in the header's order */
#define RT_CACHE_KEY_PARTS(X)                                               \
    X(COMPILER, "the compiler (version, build or LLVM) changed")            \
    X(SOURCE, "the kernel's source (or, with line info, its name) changed") \
    X(IMPORTS, "an imported file changed")                                  \
    X(DEFINES, "the defines changed")                                       \
    X(SPECIALIZE, "the specializations changed")                            \
    X(OPTIONS, "the options changed")                                       \
    X(ARCH, "the arch changed")

enum {
#define X(e, s) RT_CACHE_KP_##e,
    RT_CACHE_KEY_PARTS(X)
#undef X
        RT_CACHE_KP_COUNT
};

/* header after magic+checksum: format, identity, parts, payload length */
enum {
    RT_CACHE_HDR_FIXED = 8 + 16,
    RT_CACHE_HDR_REST = 4 + 16 * (1 + RT_CACHE_KP_COUNT) + 8,
    RT_CACHE_HDR_SIZE = RT_CACHE_HDR_FIXED + RT_CACHE_HDR_REST,
    RT_CACHE_HDR_PARTS = RT_CACHE_HDR_FIXED + 4 + 16, /* where the parts begin */
};

/* XXH3-128 of data, as XXH128_hash_t lays it out in memory (the checksum and the key are these bytes). */
void rt_cache_hash(const void *data, size_t n, unsigned char out[16]);
/* The key's 32 hex digits (high 64 bits first, as the entry's name). */
void rt_cache_hash_hex(const unsigned char h[16], char out[33]);

/* What an entry records about its request (the key has only hashes). */
typedef struct RtCacheMeta {
    char *srcname, *arch, *defines, *specialize; /* malloc'd */
} RtCacheMeta;
void rt_cache_meta_free(RtCacheMeta *m);

typedef struct RtCacheReader {
    const char *p, *end;
    bool bad;
} RtCacheReader;
/* Check the whole entry (magic, format, length, checksum); on success *payload reads its payload.  False with
 * *why ("checksum mismatch", ...). */
bool rt_cache_entry_valid(const char *data, size_t n, RtCacheReader *payload, const char **why);
/* The payload into c (free with tile_compiled_free) and meta; arch: the target the entry was compiled for
 * (NULL: the default), for the kernels' derived fields.  False, both freed, for a malformed payload. */
bool rt_cache_deserialize(RtCacheReader *r, tile_compiled *c, RtCacheMeta *meta, const char *arch);

/* The folder dir (made first, 0700, when create) opened without following a symlink, when it is a folder of
 * this user that its group and others cannot write: its descriptor; else -1 with errno and the reason in why
 * ("" when it does not exist and create is false). */
int rt_cache_open_why(const char *dir, bool create, char *why, size_t why_size);
/* The folder name inside dfd (made 0700 first when create), never through a symlink; -1 with errno. */
int rt_cache_open_sub(int dfd, const char *name, bool create);
/* A regular file in dfd opened for reading (O_NONBLOCK: a FIFO never blocks); -1 with errno. */
int rt_cache_open_regular(int dfd, const char *name);
/* The regular file name in dfd, whole and NUL-terminated, at most max bytes: NULL with errno EFBIG for a
 * larger file, ENOMEM when the memory for it is not there. */
char *rt_cache_read_max(int dfd, const char *name, size_t max, size_t *n);
/* An entry file in dfd, whole, once its header agrees with its size (the header is read first: a file that is
 * no entry is refused before its body is read).  NULL with errno (ENOENT: none), or with *why set when the file
 * is there but no entry; rt_cache_entry_valid checks the rest. */
char *rt_cache_entry_read(int dfd, const char *name, size_t *n, const char **why);
/* Visit every regular file of the cache's naming in v1/KK of the folder dfd: fn(user, KK's descriptor, file
 * name, KK + name, its stat); fn returns false to stop.  A writer's temporary file has key[2] == '.'.
 * Anything else (other names, symlinks, folders) is passed over. */
typedef bool (*RtCacheEntryFn)(void *user, int kkfd, const char *name, const char *key, const struct stat *sb);
void rt_cache_each_entry(int dfd, RtCacheEntryFn fn, void *user);
/* dir, or the default folder for NULL or "" (as TILE_CACHE_DIR="" is). */
const char *rt_cache_dir_or_default(const char *dir);
/* The folder for stats, list and clear (fn: the public call, for the message): *dfd -1 and TILE_OK when it
 * does not exist; TILE_ERROR_IO, with the reason, when it is not a folder this user can use. */
tile_status rt_cache_open_existing(const char *fn, const char *dir, int *dfd);

#endif
