/* cache.c - the on-disk compile cache.
 *
 * A compile request (source, options) maps to one entry file:
 *   1. List the source and every file it imports (jit_source_files, the
 *      compiler's own resolution) and hash each key part with XXH3-128:
 *      compiler (version, build id of libtile, LLVM version), source, imports,
 *      defines, specializations, options (with want_cubin the ptxas that will run: its path, size and
 *      mtime, so an upgrade in place is another key), arch.  The key is the hash of the
 *      parts; the identity (source name and kernel) names "the same kernel"
 *      across changes, so a miss can say which part changed.
 *   2. Open the cache folder (jit_cache_open, the rules below) and look for
 *      v1/KK/REST in it (KK: the key's first two hex digits, REST the other
 *      30).  An entry is: magic, checksum (XXH3-128 of the rest), format
 *      version, identity, parts, payload length, payload (source name, arch,
 *      defines, specializations, TIR, PTX, cubin, ptxas log, diagnostics,
 *      kernel metadata).  The header is read first and must agree with the
 *      file's size before the rest is read (entry_read).  A hit sets the entry's modification time to now
 *      (utimensat): the mtime is the entry's last use.  A wrong magic, length or
 *      checksum is a corrupt entry, and parts other than the requested key's
 *      an entry of another key (copied there): both are logged under
 *      TILE_DEBUG=cache, removed and recompiled.
 *   3. On a miss compile, then write the entry to a temporary file in the
 *      same folder and rename it into place: readers see a whole entry or
 *      none, and concurrent writers of one key all succeed (last rename wins,
 *      the contents are equal).  Only when the compiler read the import texts
 *      the key was taken from (jit_imports_digest of both reads): an import
 *      changed in between made code the key does not describe.
 *   4. Count the hit or miss by appending one byte to stats (O_APPEND
 *      writes of one byte do not interleave); at 4 KiB the file is compacted
 *      into one line of counts, exactly (see "stats" below).
 *   5. After a write, when the entries total more than the cap
 *      (TILE_CACHE_MAX_BYTES, default 1 GiB), remove the least recently
 *      used (oldest mtime) until they total under 90% of it; the entry just
 *      written stays.  Concurrent evictors may both remove: an entry gone is
 *      only a miss later.
 * Requests for dumps, pass timing or LLVM IR are not cached (those outputs
 * are not stored); they compile directly.
 *
 * Safety (docs/runtime.md, "Who the cache trusts"): the folder is made
 * 0700 and used only when it is a directory owned by this user and not
 * writable by its group or others, so no other user can plant, replace or
 * link anything in it; otherwise one warning, and compiles go on without
 * the disk cache.  The folder itself is opened with O_NOFOLLOW and
 * everything inside it relative to its descriptor (openat, mkdirat,
 * fstatat, renameat, unlinkat), each component with O_NOFOLLOW, so no
 * symlink is followed to read, write or delete.  Clearing deletes only
 * regular files named as the cache names them.  Writes block SIGXFSZ (past
 * `ulimit -f` a write fails with EFBIG instead of killing the process), and
 * a failed write (full or read-only disk, no permission) leaves the compile
 * successful with one warning per cause.  The checksum only detects damage:
 * the same user can write anything the process reads.
 *
 * What a reader needs as well (the folder's rules, files opened by descriptor, the entry header and its
 * checksum, the payload reader, the walk over the entries, listing) is the runtime's, runtime/cache_read.c:
 * libtile_rt reads a cache without this file; here are the keys, writes, counters, eviction and clearing.
 *
 * Mutable state: `warned` (atomic bits: which warnings this process has
 * given), the temporary-name counter (atomic) and the compiler id
 * (pthread_once). */
#include "jit/jit.h"
#include "runtime/cache_entry.h"
#include "support/target.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <llvm/Config/llvm-config.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

/* The entry format, the key's parts and the reader are the runtime's (runtime/cache_entry.h, cache_read.c). */
#define KEY_PARTS RT_CACHE_KEY_PARTS

enum {
#define X(e, s) KP_##e,
    KEY_PARTS(X)
#undef X
        KP_COUNT
};
static const char *const part_reasons[] = {
#define X(e, s) s,
    KEY_PARTS(X)
#undef X
};

typedef struct CacheKey {
    XXH128_hash_t key, identity, parts[KP_COUNT];
    char hex[33];
} CacheKey;

_Static_assert((int)KP_COUNT == (int)RT_CACHE_KP_COUNT, "the key's parts are the entry header's");
enum { HDR_FIXED = RT_CACHE_HDR_FIXED, HDR_SIZE = RT_CACHE_HDR_SIZE };

void jit_hash_hex(const void *data, size_t n, char out[33]) {
    XXH128_hash_t h = XXH3_128bits(data, n);
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)h.high64, (unsigned long long)h.low64);
}

/* ---- compiler identity: GNU build id of libtile (or a hash of the file) ---- */
static char compiler_id[33];
static pthread_once_t id_once = PTHREAD_ONCE_INIT;

typedef struct BuildIdSearch {
    void *base;
    Str id;
} BuildIdSearch;

static int find_build_id(struct dl_phdr_info *info, size_t size, void *user) {
    BuildIdSearch *s = user;
    (void)size;
    bool mine = false; /* does one of this object's segments hold s->base (an address in libtile)? */
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (uintptr_t)s->base >= lo && (uintptr_t)s->base < lo + ph->p_memsz) mine = true;
    }
    if (!mine) return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE) continue;
        const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
            const char *name = p + sizeof *n, *desc = name + ((n->n_namesz + 3) & ~3u);
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
                for (unsigned k = 0; k < n->n_descsz; k++) str_printf(&s->id, "%02x", (unsigned char)desc[k]);
                return 1;
            }
            p = desc + ((n->n_descsz + 3) & ~3u);
        }
    }
    return 0;
}

static void compute_compiler_id(void) {
    Str s = {0};
    str_printf(&s, "tile %s llvm %s build ", tile_version(), LLVM_VERSION_STRING);
    Dl_info info;
    BuildIdSearch bs = {0};
    if (dladdr((void *)tile_version, &info) && info.dli_fbase) {
        bs.base = (void *)tile_version;
        dl_iterate_phdr(find_build_id, &bs);
        if (!bs.id.len && info.dli_fname) { /* no build-id note: hash the library file */
            size_t n;
            char *bytes = read_file(info.dli_fname, &n);
            char hex[33];
            if (bytes) jit_hash_hex(bytes, n, hex), str_puts(&bs.id, hex);
            free(bytes);
        }
    }
    str_puts(&s, bs.id.len ? bs.id.buf : __DATE__ " " __TIME__);
    jit_hash_hex(s.buf, s.len, compiler_id);
    str_free(&s);
    str_free(&bs.id);
}

const char *jit_compiler_id(void) {
    pthread_once(&id_once, compute_compiler_id);
    return compiler_id;
}


/* ---- keys ---- */
static void hash_list(XXH3_state_t *st, const char *const *l) {
    for (; l && *l; l++) XXH3_128bits_update(st, *l, strlen(*l) + 1);
}

typedef struct SetItem {
    const char *s;
    size_t name_len, at; /* NAME's length (up to '='), the place in the list */
} SetItem;

static int set_item_cmp(const void *pa, const void *pb) {
    const SetItem *a = pa, *b = pb;
    size_t n = a->name_len < b->name_len ? a->name_len : b->name_len;
    int c = memcmp(a->s, b->s, n);
    if (c) return c;
    if (a->name_len != b->name_len) return a->name_len < b->name_len ? -1 : 1;
    return a->at < b->at ? -1 : a->at > b->at;
}

/* Defines and specializations set NAME=VALUE pairs whose order changes no kernel: "-D BM=64 -D BN=32" and
 * "-D BN=32 -D BM=64" are one request.  The strings are hashed, each with its NUL, sorted by NAME and, for a name
 * given twice, in their order (the library's defines take the last value; the CLI, and specializations with two
 * values, refuse it: so "B=1 B=2" stays another key than "B=2 B=1", and a refused list never meets an entry of a
 * good one).  Out of memory for a long list, the list as given (a miss at worst). */
void jit_hash_set(XXH3_state_t *st, const char *const *l) {
    size_t n = 0;
    while (l && l[n]) n++;
    SetItem few[16], *v = n <= ARRAY_LEN(few) ? few : malloc(n * sizeof *v);
    if (!v) {
        hash_list(st, l);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(l[i], '=');
        v[i] = (SetItem){l[i], eq ? (size_t)(eq - l[i]) : strlen(l[i]), i};
    }
    if (n > 1) qsort(v, n, sizeof *v, set_item_cmp);
    for (size_t i = 0; i < n; i++) XXH3_128bits_update(st, v[i].s, strlen(v[i].s) + 1);
    if (v != few) free(v);
}

static XXH128_hash_t hash_str(const char *s) { return XXH3_128bits(s ? s : "", s ? strlen(s) + 1 : 0); }

void jit_imports_digest(const SrcFile *const *files, int n, unsigned char out[16]) {
    XXH3_state_t *st = XXH3_createState();
    if (!st) out_of_memory();
    XXH3_128bits_reset(st);
    for (int i = 1; i < n; i++) {
        XXH3_128bits_update(st, files[i]->name, strlen(files[i]->name) + 1);
        XXH3_128bits_update(st, &files[i]->len, sizeof files[i]->len);
        XXH3_128bits_update(st, files[i]->text, files[i]->len);
    }
    XXH128_hash_t h = XXH3_128bits_digest(st);
    XXH3_freeState(st);
    memcpy(out, &h, 16);
}

/* false when the source or an import does not parse (then nothing is cached) */
static bool make_key(const SrcFile *src, const tile_compile_options *o, CacheKey *k) {
    Arena *a = arena_new();
    const SrcFile **files;
    int n = jit_source_files(a, src, o, &files);
    if (n < 0) {
        arena_free(a);
        return false;
    }
    k->parts[KP_COMPILER] = hash_str(jit_compiler_id());
    XXH3_state_t *st = XXH3_createState();
    XXH3_128bits_reset(st);
    XXH3_128bits_update(st, src->text, src->len);
    /* line info writes the file's name into the PTX (.file): the same text under another name is another entry */
    if (!o->no_line_info) XXH3_128bits_update(st, src->name ? src->name : "", src->name ? strlen(src->name) + 1 : 0);
    k->parts[KP_SOURCE] = XXH3_128bits_digest(st);
    jit_imports_digest(files, n, (unsigned char *)&k->parts[KP_IMPORTS]);
    XXH3_128bits_reset(st);
    jit_hash_set(st, o->defines);
    k->parts[KP_DEFINES] = XXH3_128bits_digest(st);
    XXH3_128bits_reset(st);
    jit_hash_set(st, o->specialize);
    k->parts[KP_SPECIALIZE] = XXH3_128bits_digest(st);
    XXH3_128bits_reset(st);
    XXH3_128bits_update(st, o->kernel ? o->kernel : "", o->kernel ? strlen(o->kernel) + 1 : 0);
    hash_list(st, o->include_dirs);
    int flags[6] = {o->no_align_ptrs, o->want_cubin, o->debug != 0, o->num_sms > 0 ? o->num_sms : TILE_DEFAULT_NUM_SMS,
                    o->no_line_info != 0, o->no_tma != 0};
    XXH3_128bits_update(st, flags, sizeof flags);
    if (o->want_cubin) { /* the ptxas that will run, by path, size and mtime: one upgraded in place (a new CUDA) is another key */
        char pxbuf[4096];
        const char *px = jit_find_ptxas(o->ptxas, pxbuf, sizeof pxbuf);
        struct stat sb;
        int64_t stamp[3] = {-1, -1, -1}; /* none found: its own key, so an entry without a cubin is not served once one is */
        if (px && stat(px, &sb) == 0) stamp[0] = (int64_t)sb.st_size, stamp[1] = (int64_t)sb.st_mtim.tv_sec, stamp[2] = sb.st_mtim.tv_nsec;
        if (px) XXH3_128bits_update(st, px, strlen(px) + 1);
        XXH3_128bits_update(st, stamp, sizeof stamp);
    }
    k->parts[KP_OPTIONS] = XXH3_128bits_digest(st);
    k->parts[KP_ARCH] = hash_str(target_find(o->arch) ? target_find(o->arch)->name : o->arch);
    XXH3_128bits_reset(st);
    XXH3_128bits_update(st, src->name ? src->name : "", src->name ? strlen(src->name) + 1 : 0);
    XXH3_128bits_update(st, o->kernel ? o->kernel : "", o->kernel ? strlen(o->kernel) + 1 : 0);
    k->identity = XXH3_128bits_digest(st);
    k->key = XXH3_128bits(k->parts, sizeof k->parts);
    snprintf(k->hex, sizeof k->hex, "%016llx%016llx", (unsigned long long)k->key.high64, (unsigned long long)k->key.low64);
    XXH3_freeState(st);
    arena_free(a);
    return true;
}

/* ---- entries ---- */
static void put_u32(Str *s, uint32_t v) { str_putn(s, (const char *)&v, 4); }
static void put_u64(Str *s, uint64_t v) { str_putn(s, (const char *)&v, 8); }
static void put_blob(Str *s, const void *p, size_t n, bool present) {
    put_u64(s, present ? (uint64_t)n : UINT64_MAX);
    if (present && n) str_putn(s, p, n);
}
static void put_str(Str *s, const char *t) { put_blob(s, t, t ? strlen(t) : 0, t != NULL); }


static void put_list(Str *s, const char *const *l) {
    Str t = {0};
    for (int i = 0; l && l[i]; i++) str_printf(&t, "%s%s", i ? " " : "", l[i]);
    put_str(s, t.buf ? t.buf : "");
    str_free(&t);
}

static void serialize(const CacheKey *k, const char *srcname, const tile_compile_options *o, const tile_compiled *c, Str *out) {
    Str pl = {0};
    put_str(&pl, srcname);
    const Target *t = target_find(o->arch);
    put_str(&pl, t ? t->name : o->arch ? o->arch : target_default()->name);
    put_list(&pl, o->defines);
    put_list(&pl, o->specialize);
    put_str(&pl, c->tir);
    put_str(&pl, c->ptx);
    put_blob(&pl, c->cubin, c->cubin_size, c->cubin != NULL);
    put_str(&pl, c->ptxas_log);
    put_str(&pl, c->diagnostics);
    put_u32(&pl, (uint32_t)c->ptxas_missing);
    put_u32(&pl, (uint32_t)c->nkernels);
    for (int i = 0; i < c->nkernels; i++) {
        const tile_kernel_info *ki = &c->kernels[i];
        put_str(&pl, ki->name);
        put_str(&pl, ki->signature);
        put_str(&pl, ki->tensor_maps ? ki->tensor_maps : "");
        int32_t v[5] = {ki->num_warps, ki->num_stages, ki->smem_bytes, ki->registers, ki->spill_bytes};
        str_putn(&pl, (const char *)v, sizeof v);
    }
    Str rest = {0};
    put_u32(&rest, RT_CACHE_FORMAT);
    str_putn(&rest, (const char *)&k->identity, 16);
    str_putn(&rest, (const char *)k->parts, sizeof k->parts);
    put_u64(&rest, pl.len);
    str_putn(&rest, pl.buf, pl.len);
    unsigned char sum[16];
    rt_cache_hash(rest.buf, rest.len, sum);
    str_putn(out, RT_CACHE_MAGIC, 8);
    str_putn(out, (const char *)sum, 16);
    str_putn(out, rest.buf, rest.len);
    str_free(&pl);
    str_free(&rest);
}

/* ---- warnings ---- */
static _Atomic unsigned warned; /* bit c: warning c (JitWarn) was given by this process */

void jit_cache_warn(JitWarn cause, const char *fmt, ...) {
    Str s = {0};
    va_list ap;
    va_start(ap, fmt);
    str_vprintf(&s, fmt, ap);
    va_end(ap);
    if (rt_options()->debug_cache) rt_debug("cache", "%s", s.buf);
    unsigned bit = 1u << cause;
    if (!(atomic_fetch_or(&warned, bit) & bit)) fprintf(stderr, "tile: warning: %s\n", s.buf);
    str_free(&s);
}

static const char *err_text(int err) {
    return err == ELOOP ? "it is a symbolic link (not followed)" : err == EFBIG ? "the file-size limit (ulimit -f) is reached" : strerror(err);
}

void jit_cache_warn_write(const char *dir, const char *what, int err) {
    JitWarn c = err == ENOSPC || err == EDQUOT ? JIT_WARN_NOSPC
                : err == EROFS                 ? JIT_WARN_ROFS
                : err == EFBIG                 ? JIT_WARN_FBIG
                : err == EACCES || err == EPERM ? JIT_WARN_ACCES
                : err == ELOOP                 ? JIT_WARN_SYMLINK
                                               : JIT_WARN_WRITE;
    jit_cache_warn(c, "cannot write %s in the compile cache %s: %s; going on without it", what, dir, err_text(err));
}

int jit_cache_open(const char *dir, bool create) {
    char why[200];
    int fd = rt_cache_open_why(dir, create, why, sizeof why);
    if (fd < 0 && why[0]) {
        int err = errno;
        jit_cache_warn(JIT_WARN_FOLDER, "not using the compile cache %s: %s; compiling without the disk cache", dir, why);
        errno = err;
    }
    return fd;
}

/* Write all of data with SIGXFSZ blocked: past RLIMIT_FSIZE the write then
 * fails with EFBIG instead of killing the process, and the SIGXFSZ the
 * kernel queued for this thread is taken back before unblocking. */
static bool write_all(int fd, const void *data, size_t n) {
    sigset_t xfsz, old, pend;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &xfsz, &old);
    bool pending_before = sigpending(&pend) == 0 && sigismember(&pend, SIGXFSZ);
    int err = 0;
    for (size_t off = 0; off < n;) {
        ssize_t w = write(fd, (const char *)data + off, n - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            err = w < 0 ? errno : ENOSPC;
            break;
        }
        off += (size_t)w;
    }
    if (!pending_before && sigpending(&pend) == 0 && sigismember(&pend, SIGXFSZ)) {
        struct timespec zero = {0, 0};
        while (sigtimedwait(&xfsz, NULL, &zero) < 0 && errno == EINTR) {}
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = err;
    return err == 0;
}

/* Append data to the file open on fd when it is a regular file; false with errno. */
static bool append_fd(int fd, const void *data, size_t n) {
    struct stat sb;
    bool ok = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode);
    if (!ok) errno = EINVAL;
    return ok && write_all(fd, data, n);
}

bool jit_cache_append(int dfd, const char *name, const void *data, size_t n) {
    int fd = openat(dfd, name, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    bool ok = append_fd(fd, data, n);
    int err = errno;
    close(fd);
    errno = err;
    return ok;
}

int jit_cache_lock(int dfd, const char *name) {
    int fd = openat(dfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
    if (fd < 0) return -1;
    struct stat sb;
    int rc;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) rc = -1, errno = EINVAL;
    else
        while ((rc = flock(fd, LOCK_EX)) != 0 && errno == EINTR) {}
    if (rc != 0) {
        int err = errno;
        close(fd);
        return (errno = err), -1;
    }
    return fd;
}

/* ---- stats: the hit and miss counters ----
 * One byte a lookup, 'h' or 'm', appended (O_APPEND) to "stats"; once the file reaches STATS_COMPACT_BYTES it is
 * compacted into one line, "tile-stats found=H absent=M\n", that the bytes after it add to, so it stays under
 * that size and its counts stay exact.  The line has no byte 'h' or 'm': a library from before compaction counts
 * those bytes in the whole file, so it counts the lookups since the last compaction and no more (with the line
 * "tile-stats hits=H misses=M\n" that the first compacting releases wrote, which this one still reads, it counted
 * one hit and one miss too many on top).  Appenders hold a shared flock on the file while writing and check that
 * the file they locked is still the one named "stats" (else a compaction replaced it: they open the new one);
 * the compactor holds the exclusive lock from its read until its rename, so no byte is written to the file it
 * replaces after it was read. */
enum { STATS_COMPACT_BYTES = 4096 };
static const char stats_header[] = "tile-stats ";

typedef struct StatsCount {
    uint64_t hits, misses, bytes; /* bytes: the file's size */
    bool ours;                    /* the header (when there is one) parsed and every other byte is an 'h' or 'm' */
} StatsCount;

/* Count the file open on fd from its start, reading it in pieces (no size limit, nothing held); with
 * stop_if_foreign, stop at the first piece that shows it is not ours. */
static bool stats_scan(int fd, StatsCount *c, bool stop_if_foreign) {
    *c = (StatsCount){.ours = true};
    char buf[65536];
    bool first = true;
    for (ssize_t got; (c->ours || !stop_if_foreign) && (got = pread(fd, buf, sizeof buf, (off_t)c->bytes)) != 0;) {
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return false;
        size_t i = 0;
        if (first && (size_t)got >= sizeof stats_header - 1 && !memcmp(buf, stats_header, sizeof stats_header - 1)) {
            char line[128];
            size_t len = 0;
            while (len < (size_t)got && len < sizeof line - 1 && buf[len] != '\n') line[len] = buf[len], len++;
            line[len] = 0;
            unsigned long long h, m;
            int used = 0;
            if (len == (size_t)got || buf[len] != '\n' ||
                ((sscanf(line, "tile-stats found=%llu absent=%llu%n", &h, &m, &used) != 2 || (size_t)used != len) &&
                 (used = 0, sscanf(line, "tile-stats hits=%llu misses=%llu%n", &h, &m, &used) != 2 || (size_t)used != len)))
                c->ours = false;
            else c->hits = h, c->misses = m, i = len + 1;
        }
        first = false;
        for (; i < (size_t)got; i++) {
            c->hits += buf[i] == 'h';
            c->misses += buf[i] == 'm';
            if (buf[i] != 'h' && buf[i] != 'm') c->ours = false;
        }
        c->bytes += (uint64_t)got;
    }
    return true;
}

/* Replace the file by its one-line form, when it is still the one named stats, still at least the threshold
 * and ours (a file that is not the counters is left as it is). */
static void stats_compact(const char *dir, int dfd) {
    int fd = openat(dfd, "stats", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return;
    struct stat sb, named;
    int rc;
    while ((rc = flock(fd, LOCK_EX)) != 0 && errno == EINTR) {}
    StatsCount c;
    if (rc == 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && fstatat(dfd, "stats", &named, AT_SYMLINK_NOFOLLOW) == 0 &&
        named.st_ino == sb.st_ino && named.st_dev == sb.st_dev && sb.st_size >= STATS_COMPACT_BYTES && stats_scan(fd, &c, true) && c.ours) {
        char line[96];
        int n = snprintf(line, sizeof line, "tile-stats found=%llu absent=%llu\n", (unsigned long long)c.hits, (unsigned long long)c.misses);
        if (!jit_cache_replace(dfd, "stats", line, (size_t)n)) jit_cache_warn_write(dir, "stats", errno);
        else if (rt_options()->debug_cache)
            rt_debug("cache", "compacted %s/stats (%llu bytes): %llu hits, %llu misses", dir, (unsigned long long)c.bytes,
                     (unsigned long long)c.hits, (unsigned long long)c.misses);
    }
    close(fd); /* releases the lock */
}

static void count_event(const char *dir, int dfd, char what) {
    for (int attempt = 0; attempt < 8; attempt++) {
        int fd = openat(dfd, "stats", O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
        if (fd < 0) break;
        struct stat sb, named;
        int rc;
        while ((rc = flock(fd, LOCK_SH)) != 0 && errno == EINTR) {}
        if (rc == 0 && attempt < 7 && fstat(fd, &sb) == 0 && fstatat(dfd, "stats", &named, AT_SYMLINK_NOFOLLOW) == 0 &&
            (named.st_ino != sb.st_ino || named.st_dev != sb.st_dev)) {
            close(fd); /* compacted while this waited for the lock: count in the file that replaced it */
            continue;
        }
        bool ok = append_fd(fd, &what, 1);
        int err = errno;
        bool big = ok && fstat(fd, &sb) == 0 && sb.st_size >= STATS_COMPACT_BYTES;
        close(fd); /* releases the lock */
        if (!ok) jit_cache_warn_write(dir, "stats", err);
        else if (big) stats_compact(dir, dfd);
        return;
    }
    jit_cache_warn_write(dir, "stats", errno);
}

/* Under TILE_DEBUG=cache: why did this key miss?  Compare with entries of the same identity. */
typedef struct MissCtx {
    const CacheKey *k;
    bool found;
    Str why;
} MissCtx;

static bool explain_entry(void *user, int kkfd, const char *name, const char *key, const struct stat *sb) {
    MissCtx *mc = user;
    (void)key, (void)sb;
    char hdr[HDR_SIZE];
    int fd = rt_cache_open_regular(kkfd, name);
    if (fd < 0) return true;
    ssize_t got = read(fd, hdr, sizeof hdr);
    close(fd);
    if (got != (ssize_t)sizeof hdr || memcmp(hdr, RT_CACHE_MAGIC, 8)) return true;
    XXH128_hash_t id, parts[KP_COUNT];
    memcpy(&id, hdr + HDR_FIXED + 4, 16);
    memcpy(parts, hdr + HDR_FIXED + 20, sizeof parts);
    if (!XXH128_isEqual(id, mc->k->identity)) return true;
    mc->found = true;
    for (int i = 0; i < KP_COUNT; i++)
        if (!XXH128_isEqual(parts[i], mc->k->parts[i])) str_printf(&mc->why, "%s%s", mc->why.len ? "; " : "", part_reasons[i]);
    return false;
}

static void explain_miss(int dfd, const CacheKey *k, const char *srcname) {
    MissCtx mc = {k, false, {0}};
    rt_cache_each_entry(dfd, explain_entry, &mc);
    rt_debug("cache", "miss %s (%s): %s", k->hex, srcname ? srcname : "<source>",
             mc.found ? (mc.why.len ? mc.why.buf : "an entry with the same key parts is gone") : "first compile of this source and kernel");
    str_free(&mc.why);
}

/* Read and check the entry v1/KK/REST; a corrupt entry, or one written for another key, is removed
 * (*corrupt set: the miss is explained by it). */
static bool try_load(int dfd, const char *dir, const CacheKey *k, tile_compiled *out, const char *arch, bool *corrupt) {
    *corrupt = false;
    char kkname[3] = {k->hex[0], k->hex[1], 0};
    const char *name = k->hex + 2;
    int v1 = rt_cache_open_sub(dfd, "v1", false);
    int kk = v1 >= 0 ? rt_cache_open_sub(v1, kkname, false) : -1;
    if (v1 >= 0) close(v1);
    if (kk < 0) {
        if (errno != ENOENT && rt_options()->debug_cache) rt_debug("cache", "cannot open %s/v1/%s: %s", dir, kkname, err_text(errno));
        return false;
    }
    size_t n;
    const char *why = NULL;
    char *data = rt_cache_entry_read(kk, name, &n, &why);
    if (!data && !why) {
        if (errno != ENOENT && rt_options()->debug_cache) rt_debug("cache", "cannot read %s/v1/%s/%s: %s", dir, kkname, name, err_text(errno));
        close(kk);
        return false;
    }
    RtCacheReader r;
    RtCacheMeta meta = {0};
    bool ok = data && rt_cache_entry_valid(data, n, &r, &why);
    if (ok && memcmp(data + HDR_FIXED + 20, k->parts, sizeof k->parts))
        ok = false, why = "it was written for another key (copied or planted there)";
    if (ok && !rt_cache_deserialize(&r, out, &meta, arch)) ok = false, why = "malformed payload";
    if (!ok) {
        if (rt_options()->debug_cache) rt_debug("cache", "corrupt entry %s/v1/%s/%s: %s; recompiling", dir, kkname, name, why);
        unlinkat(kk, name, 0);
        *corrupt = true;
    } else utimensat(kk, name, NULL, AT_SYMLINK_NOFOLLOW); /* last use: now (a failure only ages the entry) */
    rt_cache_meta_free(&meta);
    free(data);
    close(kk);
    return ok;
}

/* The temporary name is ".tmp-PID-N-TIME": unique among the writers of one machine, but processes of two
 * PID namespaces (containers sharing the cache folder, each server PID 1) can take the same one in the
 * same second; O_EXCL refuses the second, which then tries again with the nanoseconds added. */
bool jit_cache_replace(int dfd, const char *name, const void *data, size_t n) {
    static _Atomic unsigned counter;
    char tmp[96];
    int fd = -1;
    for (int attempt = 0; attempt < 8 && fd < 0; attempt++) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        int len = snprintf(tmp, sizeof tmp, ".tmp-%d-%u-%lx", (int)getpid(), atomic_fetch_add(&counter, 1), (unsigned long)ts.tv_sec);
        if (attempt) snprintf(tmp + len, sizeof tmp - (size_t)len, "-%lx-%x", (unsigned long)ts.tv_nsec, (unsigned)attempt);
        fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST) break;
    }
    bool ok = fd >= 0 && write_all(fd, data, n);
    int err = errno;
    if (fd >= 0 && close(fd) != 0 && ok) ok = false, err = errno;
    if (ok && renameat(dfd, tmp, dfd, name) != 0) ok = false, err = errno;
    if (!ok && fd >= 0) unlinkat(dfd, tmp, 0);
    errno = err;
    return ok;
}

static void store(int dfd, const char *dir, const CacheKey *k, const char *srcname, const tile_compile_options *o, const tile_compiled *c) {
    char kkname[3] = {k->hex[0], k->hex[1], 0}, what[64];
    const char *name = k->hex + 2;
    int v1 = rt_cache_open_sub(dfd, "v1", true);
    int kk = v1 >= 0 ? rt_cache_open_sub(v1, kkname, true) : -1;
    int err = errno;
    if (v1 >= 0) close(v1);
    if (kk < 0) {
        snprintf(what, sizeof what, "v1%s%s", v1 >= 0 ? "/" : "", v1 >= 0 ? kkname : "");
        jit_cache_warn_write(dir, what, err);
        return;
    }
    Str s = {0};
    serialize(k, srcname, o, c, &s);
    if (!jit_cache_replace(kk, name, s.buf, s.len)) {
        err = errno;
        snprintf(what, sizeof what, "v1/%s/%s", kkname, name);
        jit_cache_warn_write(dir, what, err);
    }
    close(kk);
    str_free(&s);
}

/* ---- the cap (step 5) ---- */
typedef struct EvictEntry {
    struct timespec used; /* mtime: written or last hit */
    char key[33];
    uint64_t bytes;
} EvictEntry;

typedef struct EvictCtx {
    EvictEntry *v;
    size_t n, cap;
    uint64_t total;
} EvictCtx;

static bool collect_entry(void *user, int kkfd, const char *name, const char *key, const struct stat *sb) {
    EvictCtx *ec = user;
    (void)kkfd, (void)name;
    if (key[2] == '.') return true; /* a writer's temporary file */
    if (ec->n == ec->cap) {
        ec->cap = ec->cap ? 2 * ec->cap : 64;
        if (!(ec->v = realloc(ec->v, ec->cap * sizeof *ec->v))) out_of_memory();
    }
    EvictEntry *e = &ec->v[ec->n++];
    e->used = sb->st_mtim;
    snprintf(e->key, sizeof e->key, "%.32s", key);
    e->bytes = (uint64_t)sb->st_size;
    ec->total += e->bytes;
    return true;
}

static int older_first(const void *a, const void *b) {
    const struct timespec *x = &((const EvictEntry *)a)->used, *y = &((const EvictEntry *)b)->used;
    if (x->tv_sec != y->tv_sec) return x->tv_sec < y->tv_sec ? -1 : 1;
    return (x->tv_nsec > y->tv_nsec) - (x->tv_nsec < y->tv_nsec);
}

/* Remove least recently used entries, keeping `keep` (the key just written), until under 90% of the cap. */
static void evict(int dfd, const char *dir, const char *keep) {
    uint64_t cap = rt_options()->cache_max_bytes;
    if (!cap) return;
    EvictCtx ec = {0};
    rt_cache_each_entry(dfd, collect_entry, &ec);
    if (ec.total > cap) {
        uint64_t goal = cap / 10 * 9 + cap % 10 * 9 / 10;
        qsort(ec.v, ec.n, sizeof *ec.v, older_first);
        int v1 = rt_cache_open_sub(dfd, "v1", false);
        for (size_t i = 0; v1 >= 0 && i < ec.n && ec.total >= goal; i++) {
            if (!strcmp(ec.v[i].key, keep)) continue;
            char kkname[3] = {ec.v[i].key[0], ec.v[i].key[1], 0};
            int kk = rt_cache_open_sub(v1, kkname, false);
            if (kk < 0) continue;
            if (unlinkat(kk, ec.v[i].key + 2, 0) == 0 || errno == ENOENT) ec.total -= ec.v[i].bytes;
            close(kk);
            if (rt_options()->debug_cache) rt_debug("cache", "evicted %s from %s (cap %llu bytes)", ec.v[i].key, dir, (unsigned long long)cap);
        }
        if (v1 >= 0) close(v1);
    }
    free(ec.v);
}

tile_status jit_cache_compile(const char *dir, const SrcFile *src, const tile_compile_options *opt, tile_compiled *out,
                              int *from_cache, unsigned char imports[16]) {
    if (from_cache) *from_cache = 0;
    memset(out, 0, sizeof *out);
    tile_compile_options opts;
    const tile_compile_options *o = &opts;
    if (jit_options_read(opt, &opts, &out->diagnostics) != TILE_OK) return TILE_ERROR_INVALID_VALUE;
    CacheKey k;
    bool cacheable = dir && !o->dump_after && !o->time_passes && !o->want_llvm_ir && !o->tir_only && make_key(src, o, &k);
    int dfd = cacheable ? jit_cache_open(dir, true) : -1;
    if (dfd >= 0) {
        bool corrupt;
        if (try_load(dfd, dir, &k, out, o->arch, &corrupt)) {
            count_event(dir, dfd, 'h');
            if (from_cache) *from_cache = 1;
            if (imports) memcpy(imports, &k.parts[KP_IMPORTS], 16);
            close(dfd);
            return TILE_OK;
        }
        if (rt_options()->debug_cache && corrupt) rt_debug("cache", "miss %s (%s): its entry was unusable and is removed", k.hex, src->name);
        else if (rt_options()->debug_cache) explain_miss(dfd, &k, src->name);
    }
    /* The key was taken from the imports as they were read before the compile, and the compiler reads them
     * again: an import that changed in between (an editor saving, a checkout) made code from other texts than
     * the key names, which is returned but not stored under that key (it would be served for the old texts). */
    unsigned char built[16] = {0};
    tile_status st = jit_compile_src(src, o, out, built);
    if (imports) memcpy(imports, built, 16);
    bool same_inputs = cacheable && !memcmp(built, &k.parts[KP_IMPORTS], 16);
    if (cacheable && !same_inputs && st == TILE_OK && rt_options()->debug_cache)
        rt_debug("cache", "not storing %s (%s): an import changed while it compiled", k.hex, src->name ? src->name : "<source>");
    struct stat sb;
    if (dfd >= 0 && fstat(dfd, &sb) == 0 && sb.st_nlink == 0) { /* removed while we compiled (tile cache clear): anew */
        close(dfd);
        dfd = jit_cache_open(dir, true);
    }
    if (dfd >= 0) {
        count_event(dir, dfd, 'm');
        if (st == TILE_OK && same_inputs && !(o->want_cubin && !out->cubin && !out->ptxas_missing)) {
            store(dfd, dir, &k, src->name, o, out);
            evict(dfd, dir, k.hex);
        }
        close(dfd);
    }
    return st;
}

/* ---- public ---- */
tile_status tile_cache_compile_source(const char *cache_dir, const char *name, const char *source,
                                      const tile_compile_options *opt, tile_compiled *out, int *from_cache) {
    if (from_cache) *from_cache = 0; /* as tile_cache_compile_file's, before any check */
    if (!out) return rt_fail(NULL, TILE_ERROR_INVALID_VALUE, "tile_cache_compile_source: out is NULL");
    memset(out, 0, sizeof *out);
    if (!source) {
        out->diagnostics = strdup("error: the source is NULL");
        return TILE_ERROR_INVALID_VALUE;
    }
    SrcFile src = {.name = name && *name ? name : "<source>", .text = source, .len = strlen(source)};
    return jit_cache_compile(rt_cache_dir_or_default(cache_dir), &src, opt, out, from_cache, NULL);
}

tile_status tile_cache_compile_file(const char *cache_dir, const char *path, const tile_compile_options *opt,
                                    tile_compiled *out, int *from_cache) {
    if (from_cache) *from_cache = 0; /* before any check: a failed call leaves no earlier value */
    if (!out) return rt_fail(NULL, TILE_ERROR_INVALID_VALUE, "tile_cache_compile_file: out is NULL");
    SrcFile src;
    tile_status st = jit_read_file(path, out, &src);
    if (st != TILE_OK) return st;
    st = jit_cache_compile(rt_cache_dir_or_default(cache_dir), &src, opt, out, from_cache, NULL);
    free((char *)src.text);
    return st;
}

static bool count_entry(void *user, int kkfd, const char *name, const char *key, const struct stat *sb) {
    tile_cache_stats *s = user;
    (void)kkfd, (void)name;
    if (key[2] == '.') return true; /* a temporary file of a writer */
    s->entries++;
    s->bytes += (uint64_t)sb->st_size;
    return true;
}

/* The counters of dfd's stats (zero when it is missing or unreadable), read in pieces: any size.  A file that is
 * not the counters (a byte other than 'h' and 'm' after the header line) counts nothing, and its reading stops
 * at the piece that shows it: a 10 GiB sparse file planted there took minutes of `tile cache stats`. */
static StatsCount read_stats(int dfd) {
    StatsCount c = {0};
    int fd = openat(dfd, "stats", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat sb;
    if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && (!stats_scan(fd, &c, true) || !c.ours)) c = (StatsCount){0};
    if (fd >= 0) close(fd);
    return c;
}

tile_status tile_cache_get_stats(const char *cache_dir, tile_cache_stats *out) {
    if (!out) return rt_fail(NULL, TILE_ERROR_INVALID_VALUE, "tile_cache_get_stats: out is NULL");
    memset(out, 0, sizeof *out);
    int dfd;
    tile_status st = rt_cache_open_existing("tile_cache_get_stats", rt_cache_dir_or_default(cache_dir), &dfd);
    if (dfd < 0) return st;
    StatsCount c = read_stats(dfd);
    out->hits = c.hits, out->misses = c.misses;
    out->tuning_records = jit_tune_count(dfd);
    rt_cache_each_entry(dfd, count_entry, out);
    close(dfd);
    return TILE_OK;
}

/* A writer's temporary file younger than this may be one being written now (a server compiling while
 * `tile cache clear` runs): clearing leaves it, or the writer's rename would fail with a warning and its
 * entry be lost.  Older ones are a crashed writer's, and go. */
enum { TMP_IN_USE_SECONDS = 600 };

static bool remove_entry(void *user, int kkfd, const char *name, const char *key, const struct stat *sb) {
    if (key[2] == '.' && sb->st_mtime > time(NULL) - TMP_IN_USE_SECONDS) return true;
    if (unlinkat(kkfd, name, 0) != 0 && errno != ENOENT) *(int *)user = errno;
    return true;
}

/* Remove name from dfd when it is a regular file (a symlink of that name stays, and so does its target). */
static void remove_regular(int dfd, const char *name, int *err) {
    struct stat sb;
    if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode) && unlinkat(dfd, name, 0) != 0 && errno != ENOENT)
        *err = errno;
}

/* Whether dfd's "stats" is the counters count_event writes: one or more 'h' and 'm', after a compacted line when it
 * has one (count_event appends one a
 * lookup, so an empty file is not its), next to the entries' "v1" folder (a lookup that counted also wrote or
 * read an entry).  A folder that is no cache, say `tile cache clear --dir ~`, keeps a file of that name that
 * is someone else's, an empty one included. */
static bool stats_is_ours(int dfd) {
    struct stat sb;
    if (fstatat(dfd, "v1", &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(sb.st_mode)) return false;
    StatsCount c = read_stats(dfd);
    return c.ours && c.bytes > 0;
}

tile_status tile_cache_clear(const char *cache_dir, int tuning) {
    int dfd, err = 0;
    const char *dir = rt_cache_dir_or_default(cache_dir);
    tile_status st = rt_cache_open_existing("tile_cache_clear", dir, &dfd);
    if (dfd < 0) return st;
    rt_cache_each_entry(dfd, remove_entry, &err);
    if (stats_is_ours(dfd)) remove_regular(dfd, "stats", &err);
    struct stat sb; /* under tune.lock, so a recording tuner's rename never brings back what was cleared */
    if (tuning && fstatat(dfd, "tune.db", &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode)) {
        int lock = jit_cache_lock(dfd, "tune.lock");
        remove_regular(dfd, "tune.db", &err);
        if (lock >= 0) close(lock);
    }
    close(dfd);
    return err ? rt_fail(NULL, TILE_ERROR_IO, "tile_cache_clear: cannot remove everything in %s: %s", dir, strerror(err)) : TILE_OK;
}
