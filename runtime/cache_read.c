/* cache_read.c - reading the compile cache, without the compiler (runtime/cache_entry.h says what is here).
 *
 * jit/cache.c writes the entries, counts hits and misses, evicts and clears; everything it shares with a
 * reader lives here, once: the folder's rules (0700, this user's, nothing followed through a symlink, every
 * file opened relative to the folder's descriptor), the entry header and its XXH3-128 checksum, the payload
 * reader, the walk over v1/KK/REST, and the public read-only calls:
 *   tile_cache_list, tile_cache_list_ex  every entry with what it records;
 *   tile_module_load_cache_entry  one entry, by the key tile_cache_list gives, loaded into a context:
 *     1. The key is 32 lowercase hex digits; the entry v1/KK/REST is read header first (rt_cache_entry_read).
 *     2. The whole entry is checked as the compiler checks it before using it (issue 16: the cache trusts
 *        nothing it did not write): magic, format, payload length, checksum; then that the key its header's
 *        parts hash to is the name it was found under (an entry copied or planted under another key is
 *        refused); then the payload is read (kernels, metadata, PTX, cubin).
 *     0. A module the context already holds for this folder and key (loaded by this call and not yet
 *        unloaded as often as it was loaded) is that module again, one more reference: an entry's content is
 *        its key's, checked when it was read, so the disk is not read again (a memory hit, as a compiled
 *        load's).
 *     3. The entry's arch must load on the context's device (rt_arch_loads).  The module is made from the
 *        cubin when the entry has one for exactly the device's compute capability (cuda), else from its PTX;
 *        it records the folder and key (its origin) for step 0.
 *   Unlike a compile's lookup, a bad entry is reported (TILE_ERROR_IO with the reason), not removed: a program
 *   that only reads leaves the folder to the compiler, which removes it at its next lookup of that key.
 *
 * The checksum is XXH3-128, compiled in here from xxhash.h as inline code (XXH_INLINE_ALL): libtile_rt links
 * no xxHash library, and jit/cache.c computes every entry's checksum through rt_cache_hash, so both sides
 * use one definition.  No mutable state. */
#include "runtime/cache_entry.h"
#include "runtime/rt.h"
#include "support/target.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

void rt_cache_hash(const void *data, size_t n, unsigned char out[16]) {
    XXH128_hash_t h = XXH3_128bits(data, n);
    memcpy(out, &h, 16);
}

void rt_cache_hash_hex(const unsigned char h[16], char out[33]) {
    XXH128_hash_t v;
    memcpy(&v, h, 16);
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)v.high64, (unsigned long long)v.low64);
}

/* ---- entries ---- */
void rt_cache_meta_free(RtCacheMeta *m) {
    free(m->srcname), free(m->arch), free(m->defines), free(m->specialize);
    memset(m, 0, sizeof *m);
}
static bool get(RtCacheReader *r, void *dst, size_t n) {
    if (r->bad || (size_t)(r->end - r->p) < n) return !(r->bad = true);
    memcpy(dst, r->p, n);
    r->p += n;
    return true;
}
/* NULL for an absent field (or a bad read: check r->bad) */
static char *get_blob(RtCacheReader *r, size_t *len) {
    uint64_t n = 0;
    if (!get(r, &n, 8) || n == UINT64_MAX) return NULL;
    if (n > (uint64_t)(r->end - r->p)) {
        r->bad = true;
        return NULL;
    }
    char *s = malloc(n + 1);
    if (!s) out_of_memory();
    memcpy(s, r->p, n);
    s[n] = 0;
    r->p += n;
    if (len) *len = n;
    return s;
}

/* Check the whole entry; on success *payload and *rest point into data. */
bool rt_cache_entry_valid(const char *data, size_t n, RtCacheReader *payload, const char **why) {
    if (n < RT_CACHE_HDR_SIZE || memcmp(data, RT_CACHE_MAGIC, 8)) return (*why = "bad magic or truncated header"), false;
    unsigned char got[16];
    rt_cache_hash(data + RT_CACHE_HDR_FIXED, n - RT_CACHE_HDR_FIXED, got);
    uint32_t fmt;
    uint64_t plen;
    memcpy(&fmt, data + RT_CACHE_HDR_FIXED, 4);
    memcpy(&plen, data + RT_CACHE_HDR_SIZE - 8, 8);
    if (fmt != RT_CACHE_FORMAT) return (*why = "unknown format version"), false;
    if (plen != n - RT_CACHE_HDR_SIZE) return (*why = "truncated (payload length does not match)"), false;
    if (memcmp(data + 8, got, 16)) return (*why = "checksum mismatch"), false;
    *payload = (RtCacheReader){data + RT_CACHE_HDR_SIZE, data + n, false};
    return true;
}

/* arch: the target the entry was compiled for (its key says so), NULL the default. */
bool rt_cache_deserialize(RtCacheReader *r, tile_compiled *c, RtCacheMeta *meta, const char *arch) {
    memset(c, 0, sizeof *c);
    meta->srcname = get_blob(r, NULL);
    meta->arch = get_blob(r, NULL);
    meta->defines = get_blob(r, NULL);
    meta->specialize = get_blob(r, NULL);
    c->tir = get_blob(r, NULL);
    c->ptx = get_blob(r, NULL);
    c->cubin = get_blob(r, &c->cubin_size);
    c->ptxas_log = get_blob(r, NULL);
    c->diagnostics = get_blob(r, NULL);
    uint32_t miss = 0, nk = 0;
    get(r, &miss, 4);
    get(r, &nk, 4);
    c->ptxas_missing = (int)miss;
    const Target *t = target_find(arch);
    int smem_static = (t ? t : target_default())->smem_static;
    if (!r->bad && nk <= 4096) {
        c->kernels = calloc(nk ? nk : 1, sizeof *c->kernels);
        if (!c->kernels) out_of_memory();
        for (uint32_t i = 0; i < nk && !r->bad; i++) {
            tile_kernel_info *ki = &c->kernels[c->nkernels++];
            ki->name = get_blob(r, NULL);
            ki->signature = get_blob(r, NULL);
            ki->tensor_maps = get_blob(r, NULL);
            int32_t v[5] = {0};
            get(r, v, sizeof v);
            ki->num_warps = v[0], ki->num_stages = v[1], ki->smem_bytes = v[2], ki->registers = v[3], ki->spill_bytes = v[4];
            ki->smem_dynamic = ki->smem_bytes > smem_static; /* derived, as the compiler decides it */
            if (!ki->name || !ki->signature || !ki->tensor_maps) r->bad = true;
        }
    } else r->bad = true;
    if (!c->diagnostics) c->diagnostics = strdup("");
    if (r->bad || !c->ptx || !meta->arch || !meta->defines || !meta->specialize) {
        tile_compiled_free(c);
        rt_cache_meta_free(meta);
        return false;
    }
    return true;
}

/* mkdir -p: every missing folder of path made 0700; false with errno. */
static bool make_dirs(const char *path) {
    char buf[4096];
    size_t n = strlen(path);
    if (n >= sizeof buf) return (errno = ENAMETOOLONG), false;
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != 0) continue;
        char c = buf[i];
        buf[i] = 0;
        if (mkdir(buf, 0700) != 0 && errno != EEXIST) return false;
        buf[i] = c;
    }
    return true;
}

/* Open the folder name in dfd (AT_FDCWD: a path) without following a
 * symlink; -1 with errno, ELOOP for a symlink (O_DIRECTORY reports one as
 * ENOTDIR). */
static int open_dir_nofollow(int dfd, const char *name) {
    int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 && errno == ENOTDIR && fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(sb.st_mode)) errno = ELOOP;
    return fd;
}

/* The folder name inside dfd (made 0700 first when create), never through a symlink; -1 with errno. */
int rt_cache_open_sub(int dfd, const char *name, bool create) {
    if (create && mkdirat(dfd, name, 0700) != 0 && errno != EEXIST) return -1;
    return open_dir_nofollow(dfd, name);
}

int rt_cache_open_why(const char *dir, bool create, char *why, size_t why_size) {
    char path[4096];
    size_t n = dir ? strlen(dir) : 0;
    why[0] = 0;
    if (!n || n >= sizeof path) {
        if (n) snprintf(why, why_size, "%s", strerror(ENAMETOOLONG));
        return (errno = n ? ENAMETOOLONG : ENOENT), -1;
    }
    memcpy(path, dir, n + 1);
    while (n > 1 && path[n - 1] == '/') path[--n] = 0; /* "dir/" would follow a symlink */
    if (create && !make_dirs(path)) {
        int err = errno;
        snprintf(why, why_size, "cannot create it: %s", strerror(err));
        return (errno = err), -1;
    }
    int fd = open_dir_nofollow(AT_FDCWD, path);
    if (fd < 0) {
        int err = errno;
        if (err == ENOENT && !create) return -1;
        snprintf(why, why_size, "%s", err == ELOOP ? "it is a symbolic link" : strerror(err));
        return (errno = err), -1;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0) snprintf(why, why_size, "%s", strerror(errno));
    else if (sb.st_uid != geteuid())
        snprintf(why, why_size, "it is owned by uid %u, not by this user (uid %u)", (unsigned)sb.st_uid, (unsigned)geteuid());
    else if (sb.st_mode & (S_IWGRP | S_IWOTH))
        snprintf(why, why_size, "it is writable by its group or others (mode %04o; chmod 700 it)", (unsigned)(sb.st_mode & 07777));
    if (why[0]) {
        close(fd);
        return (errno = EPERM), -1;
    }
    return fd;
}

/* A regular file in dfd opened for reading (O_NONBLOCK: a FIFO never blocks); -1 with errno. */
int rt_cache_open_regular(int dfd, const char *name) {
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat sb;
    if (fd >= 0 && (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))) {
        close(fd);
        return (errno = EINVAL), -1;
    }
    return fd;
}

/* The open regular file fd (at offset 0), at most max bytes; closes fd.  NULL with errno. */
static char *read_fd_max(int fd, size_t max, size_t *n) {
    struct stat sb;
    int err = 0;
    if (fstat(fd, &sb) != 0) err = errno;
    else if ((uint64_t)sb.st_size > max) err = EFBIG;
    size_t cap = err ? 0 : (size_t)sb.st_size + 1, len = 0; /* + 1: the NUL, and room to see that it grew */
    char *buf = err ? NULL : malloc(cap);
    if (!err && !buf) err = ENOMEM;
    while (!err) {
        if (len + 1 == cap) { /* full: at its end, or it grew since fstat (then on, up to max) */
            char c;
            ssize_t got = read(fd, &c, 1);
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) {
                if (got < 0) err = errno;
                break;
            }
            size_t nc = cap - 1 >= max ? 0 : cap - 1 >= max / 2 ? max + 1 : cap * 2;
            char *nb = nc ? realloc(buf, nc) : NULL;
            if (!nb) {
                err = nc ? ENOMEM : EFBIG;
                break;
            }
            buf = nb, cap = nc;
            buf[len++] = c;
            continue;
        }
        ssize_t got = read(fd, buf + len, cap - 1 - len);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) err = errno;
        else if (got == 0) break;
        else len += (size_t)got;
    }
    close(fd);
    if (err) {
        free(buf);
        return (errno = err), NULL;
    }
    buf[len] = 0;
    if (n) *n = len;
    return buf;
}

char *rt_cache_read_max(int dfd, const char *name, size_t max, size_t *n) {
    int fd = rt_cache_open_regular(dfd, name);
    return fd < 0 ? NULL : read_fd_max(fd, max, n);
}


/* An entry file in dfd, whole, once its header agrees with its size: the magic,
 * the format and the payload length are read first (RT_CACHE_HDR_SIZE bytes), so a file
 * that is no entry of this format (a sparse or garbage file of gigabytes, an
 * entry grown by appends or cut short) is refused before its body is read or
 * memory taken for it.  NULL with errno (ENOENT: none), or with *why set when
 * the file is there but no entry (rt_cache_entry_valid checks the rest once read). */
char *rt_cache_entry_read(int dfd, const char *name, size_t *n, const char **why) {
    *why = NULL;
    int fd = rt_cache_open_regular(dfd, name);
    if (fd < 0) return NULL;
    char hdr[RT_CACHE_HDR_SIZE];
    struct stat sb;
    ssize_t got = 0;
    int err = 0;
    if (fstat(fd, &sb) != 0) err = errno;
    else
        do got = pread(fd, hdr, sizeof hdr, 0);
        while (got < 0 && errno == EINTR);
    if (!err && got < 0) err = errno;
    if (err) return close(fd), (errno = err), NULL;
    uint32_t fmt = 0;
    uint64_t plen = 0;
    if (got == (ssize_t)sizeof hdr) memcpy(&fmt, hdr + RT_CACHE_HDR_FIXED, 4), memcpy(&plen, hdr + RT_CACHE_HDR_SIZE - 8, 8);
    if (got != (ssize_t)sizeof hdr || memcmp(hdr, RT_CACHE_MAGIC, 8)) *why = "bad magic or truncated header";
    else if (fmt != RT_CACHE_FORMAT) *why = "unknown format version";
    else if (plen != (uint64_t)sb.st_size - RT_CACHE_HDR_SIZE) *why = "truncated (payload length does not match)";
    if (*why) return close(fd), (errno = EINVAL), NULL;
    /* the same file, whole, at most what the header promised: one that grew since fails with EFBIG */
    char *data = read_fd_max(fd, RT_CACHE_HDR_SIZE + (size_t)plen, n);
    if (!data && errno == EFBIG) *why = "truncated (payload length does not match)";
    return data;
}

static bool is_hex(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
    return s[n] == 0;
}
/* a writer's temporary file: ".tmp-PID-N-TIME" */
static bool is_tmp_name(const char *s) {
    if (strncmp(s, ".tmp-", 5) || !s[5]) return false;
    for (s += 5; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') || *s == '-')) return false;
    return true;
}

/* Visit every regular file of the cache's naming in v1/KK of the folder dfd:
 * fn(user, KK's descriptor, file name, KK + name, its stat); fn returns false to stop.
 * Anything else (other names, symlinks, folders) is passed over. */
void rt_cache_each_entry(int dfd, RtCacheEntryFn fn, void *user) {
    int v1 = rt_cache_open_sub(dfd, "v1", false);
    DIR *top = v1 >= 0 ? fdopendir(v1) : NULL;
    if (!top && v1 >= 0) close(v1);
    bool more = true;
    for (struct dirent *e; top && more && (e = readdir(top));) {
        if (!is_hex(e->d_name, 2)) continue;
        int kk = rt_cache_open_sub(dirfd(top), e->d_name, false);
        DIR *dd = kk >= 0 ? fdopendir(kk) : NULL;
        if (!dd && kk >= 0) close(kk);
        for (struct dirent *f; dd && more && (f = readdir(dd));) {
            if (!is_hex(f->d_name, 30) && !is_tmp_name(f->d_name)) continue;
            struct stat sb;
            if (fstatat(dirfd(dd), f->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(sb.st_mode)) continue;
            char key[300];
            snprintf(key, sizeof key, "%.2s%.250s", e->d_name, f->d_name);
            more = fn(user, dirfd(dd), f->d_name, key, &sb);
        }
        if (dd) closedir(dd);
    }
    if (top) closedir(top);
}

const char *rt_cache_dir_or_default(const char *dir) { return dir && *dir ? dir : rt_options()->cache_dir; /* "": the default, as TILE_CACHE_DIR="" */ }

/* The folder for stats, list and clear (fn: the public call, for the message): *dfd -1 and TILE_OK when it
 * does not exist; TILE_ERROR_IO, with the reason, when it is not a folder this user can use. */
tile_status rt_cache_open_existing(const char *fn, const char *dir, int *dfd) {
    char why[200];
    *dfd = rt_cache_open_why(dir, false, why, sizeof why);
    if (*dfd >= 0 || !why[0]) return TILE_OK;
    return rt_fail(NULL, TILE_ERROR_IO, "%s: %s is not a cache folder this user can use: %s", fn, dir ? dir : "(no folder)", why);
}

typedef struct ListCtx {
    void (*fn)(void *user, const tile_cache_entry_info *entry);
    void *user;
} ListCtx;

static bool list_entry(void *user, int kkfd, const char *name, const char *key, const struct stat *sb) {
    ListCtx *lc = user;
    if (key[2] == '.') return true;
    size_t n;
    const char *why;
    char *data = rt_cache_entry_read(kkfd, name, &n, &why);
    RtCacheReader r;
    tile_compiled c;
    RtCacheMeta meta = {0};
    tile_cache_entry_info info = {.size = sizeof info, .key = key, .bytes = (uint64_t)sb->st_size, .last_use = (int64_t)sb->st_mtime};
    if (data && rt_cache_entry_valid(data, n, &r, &why) && rt_cache_deserialize(&r, &c, &meta, NULL)) {
        Str ks = {0};
        for (int i = 0; i < c.nkernels; i++) str_printf(&ks, "%s%s", i ? "," : "", c.kernels[i].name);
        info.source = meta.srcname ? meta.srcname : "";
        info.kernels = ks.buf ? ks.buf : "";
        info.arch = meta.arch, info.defines = meta.defines, info.specialize = meta.specialize;
        lc->fn(lc->user, &info);
        str_free(&ks);
        tile_compiled_free(&c);
    } else {
        info.source = "(corrupt)", info.kernels = info.arch = info.defines = info.specialize = "";
        lc->fn(lc->user, &info);
    }
    rt_cache_meta_free(&meta);
    free(data);
    return true;
}

/* tile_cache_list and its _ex: api, the call made, for the messages. */
static tile_status cache_list(const char *api, const char *cache_dir, void (*fn)(void *user, const tile_cache_entry_info *entry),
                              void *user) {
    ListCtx lc = {fn, user};
    int dfd;
    tile_status st = rt_cache_open_existing(api, rt_cache_dir_or_default(cache_dir), &dfd);
    if (dfd < 0) return st;
    rt_cache_each_entry(dfd, list_entry, &lc);
    close(dfd);
    return TILE_OK;
}

tile_status tile_cache_list_ex(const char *cache_dir, void (*fn)(void *user, const tile_cache_entry_info *entry), void *user) {
    if (!fn) return rt_fail(NULL, TILE_ERROR_INVALID_VALUE, "tile_cache_list_ex: fn is NULL");
    return cache_list("tile_cache_list_ex", cache_dir, fn, user);
}

/* The first API: the same walk, fewer fields. */
typedef struct OldListCtx {
    void (*fn)(void *, const char *, const char *, const char *, uint64_t);
    void *user;
} OldListCtx;

static void old_list_entry(void *user, const tile_cache_entry_info *e) {
    OldListCtx *o = user;
    o->fn(o->user, e->key, e->source, e->kernels, e->bytes);
}

tile_status tile_cache_list(const char *cache_dir,
                            void (*fn)(void *user, const char *key, const char *source, const char *kernels, uint64_t bytes),
                            void *user) {
    if (!fn) return rt_fail(NULL, TILE_ERROR_INVALID_VALUE, "tile_cache_list: fn is NULL");
    OldListCtx o = {fn, user};
    return cache_list("tile_cache_list", cache_dir, old_list_entry, &o);
}

/* ---- loading one entry (the header comment's steps) ---- */
static bool is_key(const char *s) {
    size_t n = 0;
    while (n < 33 && ((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f'))) n++;
    return n == 32 && !s[32];
}

/* What a module loaded from an entry answers (its origin): the folder as named (cache_dir, or the default it
 * stands for) and the key. */
typedef struct EntryLoad {
    char key[33];
    char dir[]; /* NUL-terminated */
} EntryLoad;

static void entry_load_free(void *data) { free(data); }

/* Step 0: the context's module for dir and key, one more reference taken and a memory hit counted; or NULL
 * (lock held). */
static tile_module *entry_loaded_locked(tile_context *ctx, const char *dir, const char *key) {
    for (tile_module *m = rt_module_next_locked(ctx, NULL); m; m = rt_module_next_locked(ctx, m)) {
        const EntryLoad *e = rt_module_origin(m, entry_load_free);
        if (e && !strcmp(e->key, key) && !strcmp(e->dir, dir)) {
            rt_module_retain_locked(m);
            rt_stats_locked(ctx)->memory_hits++;
            return m;
        }
    }
    return NULL;
}

tile_status tile_module_load_cache_entry(tile_context *ctx, const char *cache_dir, const char *key, tile_module **out) {
    static const char api[] = "tile_module_load_cache_entry";
    if (out) *out = NULL; /* cleared before any check, the context's included: a failed call leaves no earlier value */
    if (!rt_context_valid(ctx)) return rt_no_context(api, ctx);
    if (!out) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: out is NULL", api);
    if (!key || !is_key(key))
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: key %s%.40s%s is not 32 lowercase hex digits (tile_cache_list gives them)", api,
                       key ? "'" : "", key ? key : "NULL", key ? "'" : "");
    const char *dir = rt_cache_dir_or_default(cache_dir);
    /* 0. loaded already */
    rt_lock(ctx);
    *out = entry_loaded_locked(ctx, dir, key);
    rt_unlock(ctx);
    if (*out) return TILE_OK;
    /* 1. the folder (this user's, nothing followed) and the entry, header first */
    char why_dir[200];
    int dfd = rt_cache_open_why(dir, false, why_dir, sizeof why_dir);
    if (dfd < 0 && why_dir[0])
        return rt_fail(ctx, TILE_ERROR_IO, "%s: %s is not a cache folder this user can use: %s", api, dir, why_dir);
    if (dfd < 0) return rt_fail(ctx, TILE_ERROR_NOT_FOUND, "%s: no entry %s: the cache folder %s does not exist", api, key, dir);
    char kkname[3] = {key[0], key[1], 0};
    int v1 = rt_cache_open_sub(dfd, "v1", false), err = errno;
    int kk = v1 >= 0 ? rt_cache_open_sub(v1, kkname, false) : -1;
    if (v1 >= 0) err = errno, close(v1);
    close(dfd);
    size_t n = 0;
    const char *why = NULL;
    char *data = kk >= 0 ? rt_cache_entry_read(kk, key + 2, &n, &why) : NULL;
    if (kk >= 0) err = errno;
    if (!data && !why) {
        if (kk >= 0) close(kk);
        if (err == ENOENT) return rt_fail(ctx, TILE_ERROR_NOT_FOUND, "%s: no entry %s in the cache folder %s", api, key, dir);
        return rt_fail(ctx, TILE_ERROR_IO, "%s: cannot read the entry %s in %s: %s", api, key, dir,
                       err == ELOOP ? "it is a symbolic link (not followed)" : strerror(err));
    }
    /* 2. the whole entry as the compiler checks it, and the key its header's parts hash to */
    RtCacheReader r;
    tile_compiled c;
    RtCacheMeta meta = {0};
    unsigned char named[16];
    char hex[33];
    bool ok = data && rt_cache_entry_valid(data, n, &r, &why);
    if (ok) {
        rt_cache_hash(data + RT_CACHE_HDR_PARTS, 16 * RT_CACHE_KP_COUNT, named);
        rt_cache_hash_hex(named, hex);
        if (strcmp(hex, key)) ok = false, why = "its header is another key's (copied or planted there)";
    }
    if (ok && !rt_cache_deserialize(&r, &c, &meta, NULL)) ok = false, why = "malformed payload";
    if (ok) utimensat(kk, key + 2, NULL, AT_SYMLINK_NOFOLLOW); /* its last use: now, as a compile's hit (LRU eviction) */
    close(kk);
    free(data);
    if (!ok) return rt_fail(ctx, TILE_ERROR_IO, "%s: the entry %s in %s is unusable: %s", api, key, dir, why);
    /* 3. its target on this device, then the module */
    tile_status st;
    char aerr[200];
    if (!rt_arch_loads(ctx, meta.arch, aerr, sizeof aerr)) {
        st = rt_fail(ctx, TILE_ERROR_UNSUPPORTED, "%s: the entry %s was compiled for %s: %s", api, key, meta.arch, aerr);
        tile_compiled_free(&c);
    } else {
        /* the kernels' derived fields (dynamic shared memory) by the entry's own target */
        for (int i = 0; i < c.nkernels; i++)
            c.kernels[i].smem_dynamic = c.kernels[i].smem_bytes > (target_find(meta.arch) ? target_find(meta.arch) : target_default())->smem_static;
        size_t dn = strlen(dir);
        EntryLoad *e = malloc(sizeof *e + dn + 1);
        rt_lock(ctx);
        if ((*out = entry_loaded_locked(ctx, dir, key))) { /* another thread loaded it meanwhile: one module */
            st = TILE_OK;
            free(e);
            tile_compiled_free(&c);
        } else if (!e) {
            st = rt_fail(ctx, TILE_ERROR_OUT_OF_MEMORY, "%s: out of host memory", api);
            tile_compiled_free(&c);
        } else {
            memcpy(e->key, key, 33);
            memcpy(e->dir, dir, dn + 1);
            st = rt_module_create_entry_locked(ctx, meta.arch, &c, (RtOrigin){e, entry_load_free}, out);
            if (st == TILE_OK) rt_stats_locked(ctx)->disk_hits++; /* an entry read from the disk cache, as a compiled load's */
        }
        rt_unlock(ctx);
    }
    rt_cache_meta_free(&meta);
    return st;
}
