/* load.c - tile_module_load_file/source: compile a .tile source through the
 * caches and load it into a context (the compiler's side of module loading;
 * the runtime below knows only PTX and metadata).
 *
 * Each module made here carries a LoadRecord as its origin: the request
 * that produced it (a hash of the source text, defines and options), for a
 * file also the request by path, and the content hashes and stat stamps of
 * the files read (see "memory hits" below).  A later load is answered from
 * those records first, then by the disk cache (cache.c), then the compiler. */
#include "jit/jit.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

/* What stat() says of a file the module was built from. */
typedef struct FileStamp {
    uint64_t dev, ino, size;
    int64_t mtime_ns, ctime_ns;
    bool trusted; /* last changed well before its content was read: an equal stamp means equal content */
} FileStamp;

typedef struct LoadRecord {
    XXH128_hash_t request; /* source text + options: the memory cache's key */
    bool has_file_request;
    XXH128_hash_t file_request; /* path + options (tile_module_load_file): the key that needs no read */
    FileStamp file_stamp;       /* that file when it was read */
    int nimports;
    char **import_path;
    XXH128_hash_t *import_hash;
    FileStamp *import_stamp;
    bool stale; /* the imports read for this record are not the texts the code was built from (one changed in
                   between): the record answers no later load */
} LoadRecord;

static void record_free(void *p) {
    LoadRecord *r = p;
    for (int i = 0; i < r->nimports; i++) free(r->import_path[i]);
    free(r->import_path);
    free(r->import_hash);
    free(r->import_stamp);
    free(r);
}

/* The module's record when this file made it (modules from PTX have none). */
static LoadRecord *record_of(tile_module *m) { return rt_module_origin(m, record_free); }

/* kind: "S" a source text, "F" a file by path (text empty); o went through load_options, so o->arch is the arch the
 * code is built for (the context's when none was asked: it was the context's always, and a load asking sm_86, or an
 * arch no compiler knows, got the module an earlier sm_80 load had made). */
static XXH128_hash_t request_key(const char *kind, const char *name, const char *text, size_t len, const tile_compile_options *o) {
    XXH3_state_t st;
    XXH3_INITSTATE(&st);
    XXH3_128bits_reset(&st);
    const char *parts[] = {kind, name ? name : "", o->kernel ? o->kernel : "", o->arch, o->ptxas ? o->ptxas : ""};
    for (size_t i = 0; i < ARRAY_LEN(parts); i++) XXH3_128bits_update(&st, parts[i], strlen(parts[i]) + 1);
    XXH3_128bits_update(&st, text, len);
    /* defines and specializations in sorted order (their order changes no kernel); include folders in theirs */
    jit_hash_set(&st, o->defines);
    XXH3_128bits_update(&st, "\x01", 1);
    jit_hash_set(&st, o->specialize);
    XXH3_128bits_update(&st, "\x01", 1);
    for (const char *const *p = o->include_dirs; p && *p; p++) XXH3_128bits_update(&st, *p, strlen(*p) + 1);
    XXH3_128bits_update(&st, "\x01", 1);
    int flags[6] = {o->no_align_ptrs, o->want_cubin, o->debug != 0, o->num_sms, o->no_line_info != 0, o->no_tma != 0};
    XXH3_128bits_update(&st, flags, sizeof flags);
    return XXH3_128bits_digest(&st);
}

/* ---- memory hits ----
 * A module answers a later load when the request is the same and the
 * files it was built from have not changed.  Re-reading and re-hashing
 * them would be exact but costs microseconds (8 us for gemm.tile and its
 * import math.tile); comparing stat() stamps costs a few hundred ns a file:
 *   1. When a file's content is read, the realtime clock t is taken first;
 *      afterwards its stamp (device, inode, size, mtime, ctime) is kept,
 *      trusted only when both times are older than t - RACY_NS.  File times
 *      come from a clock that ticks coarsely, so a change made in the same
 *      tick as the read could leave an equal stamp over different content
 *      (git's "racy" index entries); a file changed since t has a ctime
 *      near t or later, so it is never trusted.  ctime cannot be set by
 *      utime(), so restoring an old mtime is seen too.
 *   2. A load by path hashes the path and options (file_request), then
 *      compares each trusted stamp with stat(): all equal is a hit without
 *      reading anything.
 *   3. Otherwise the strong check: read the file, hash the text into the
 *      request, and compare every import's content hash.  A hit there
 *      takes the stamps again (so a file edited a moment ago is trusted
 *      once RACY_NS has passed); a miss goes to the disk cache, whose key
 *      is computed from the contents as before.
 * Like the content check before it, this does not notice a new file that
 * would now shadow an import in an earlier folder of the search path.
 * tile_context_options.assume_files_unchanged skips step 2's stat()s. */
enum { RACY_NS = 2000000000 };

static int64_t realtime_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static bool stat_stamp(const char *path, FileStamp *f) {
    struct stat st;
    if (stat(path, &st) != 0) return false;
    *f = (FileStamp){(uint64_t)st.st_dev, (uint64_t)st.st_ino, (uint64_t)st.st_size,
                     (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec,
                     (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec, false};
    return true;
}

/* The stamp of a file whose content was read after t_read. */
static void stamp_take(const char *path, FileStamp *f, int64_t t_read) {
    if (!stat_stamp(path, f)) {
        memset(f, 0, sizeof *f);
        return;
    }
    f->trusted = f->mtime_ns < t_read - RACY_NS && f->ctime_ns < t_read - RACY_NS;
}

static bool stamp_fresh(const char *path, const FileStamp *f) {
    FileStamp now;
    return f->trusted && stat_stamp(path, &now) && now.dev == f->dev && now.ino == f->ino && now.size == f->size &&
           now.mtime_ns == f->mtime_ns && now.ctime_ns == f->ctime_ns;
}

static bool imports_fresh(const LoadRecord *m) {
    for (int i = 0; i < m->nimports; i++)
        if (!stamp_fresh(m->import_path[i], &m->import_stamp[i])) return false;
    return true;
}

/* The strong check: every import's content against its hash; the stamps are taken again. */
static bool imports_unchanged(LoadRecord *m) {
    for (int i = 0; i < m->nimports; i++) {
        if (stamp_fresh(m->import_path[i], &m->import_stamp[i])) continue;
        int64_t t = realtime_ns();
        size_t n;
        char *text = read_source(m->import_path[i], &n);
        bool same = text && XXH128_isEqual(XXH3_128bits(text, n), m->import_hash[i]);
        free(text);
        if (!same) return false;
        stamp_take(m->import_path[i], &m->import_stamp[i], t);
    }
    return true;
}

/* t_read: the realtime clock before the compiler read the files; built: the jit_imports_digest of the imports
 * the code was built from (jit_cache_compile), which the texts read here must match. */
static bool record_imports(LoadRecord *m, const SrcFile *src, const tile_compile_options *o, int64_t t_read,
                           const unsigned char built[16]) {
    Arena *a = arena_new();
    const SrcFile **files;
    int n = jit_source_files(a, src, o, &files);
    unsigned char now[16];
    jit_imports_digest(files, n < 0 ? 0 : n, now);
    m->stale = n < 0 || memcmp(now, built, 16) != 0;
    if (n > 1) {
        m->import_path = calloc((size_t)n, sizeof *m->import_path);
        m->import_hash = calloc((size_t)n, sizeof *m->import_hash);
        m->import_stamp = calloc((size_t)n, sizeof *m->import_stamp);
        if (!m->import_path || !m->import_hash || !m->import_stamp) return arena_free(a), false;
        for (int i = 1; i < n; i++) {
            if (!(m->import_path[m->nimports] = strdup(files[i]->name))) return arena_free(a), false;
            m->import_hash[m->nimports] = XXH3_128bits(files[i]->text, files[i]->len);
            stamp_take(files[i]->name, &m->import_stamp[m->nimports++], t_read);
        }
    }
    arena_free(a);
    return true;
}

/* The options of a load of name (a path, or a source's name) checked and completed; fn: the public function
 * called, which the messages name ("tile_module_load_file: k.tile: opt->arch: ..."), or NULL for the layers
 * above (shipped kernels: "loading k.tile: ...", to which they add their own function's name). */
static tile_status load_options(tile_context *ctx, const char *fn, const char *name, const tile_compile_options *opt,
                                tile_compile_options *o) {
    char err[200];
    const char *sep = fn ? ": " : " ";
    if (!fn) fn = "loading";
    if (!jit_options_in(opt, o, err, sizeof err)) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s%s%s: %s", fn, sep, name, err);
    if (!o->arch || !*o->arch) o->arch = rt_arch(ctx); /* "" is no arch, as NULL (it compiled for tile_target_default()) */
    else if (!rt_arch_loads(ctx, o->arch, err, sizeof err)) /* before a compile whose code could not be loaded */
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s%s%s: opt->arch: %s", fn, sep, name, err);
    if (o->num_sms <= 0) o->num_sms = rt_num_sms(ctx);
    if (rt_options()->debug_assert) o->debug = 1;
    if (o->dump_after || o->time_passes || o->want_llvm_ir)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s%s%s: dump_after, time_passes and want_llvm_ir are for tile_compile_*", fn,
                       sep, name);
    return TILE_OK;
}

/* Compile (through the caches) and load; the lock is held.  o went through
 * load_options; t_read: the realtime clock before src was read. */
static tile_status load_source_locked(tile_context *ctx, const SrcFile *src, const tile_compile_options *opt, tile_module **out,
                                      int *source, int64_t t_read) {
    tile_compile_options o = *opt;
    XXH128_hash_t req = request_key("S", src->name, src->text, src->len, &o);
    tile_context_stats *stats = rt_stats_locked(ctx);
    for (tile_module *m = rt_module_next_locked(ctx, NULL); m; m = rt_module_next_locked(ctx, m)) {
        LoadRecord *r = record_of(m);
        if (r && !r->stale && XXH128_isEqual(r->request, req) && imports_unchanged(r)) {
            rt_module_retain_locked(m);
            stats->memory_hits++;
            if (source) *source = 0;
            *out = m;
            return TILE_OK;
        }
    }
    tile_compiled c;
    int from_disk = 0;
    double t0 = now_seconds();
    unsigned char built[16] = {0};
    tile_status st = jit_cache_compile(rt_cache_dir(ctx), src, &o, &c, &from_disk, built);
    double t1 = now_seconds();
    if (from_disk) stats->disk_hits++;
    else stats->compiles++, stats->compile_seconds += t1 - t0;
    if (source) *source = from_disk ? 1 : 2;
    if (st != TILE_OK) {
        rt_fail(ctx, st, "compiling %s: %s\n%s", src->name ? src->name : "<source>", tile_status_string(st),
                c.diagnostics ? c.diagnostics : "");
        tile_compiled_free(&c);
        return st;
    }
    LoadRecord *r = calloc(1, sizeof *r);
    if (!r || !record_imports(r, src, &o, t_read, built)) {
        if (r) record_free(r);
        tile_compiled_free(&c);
        return rt_fail(ctx, TILE_ERROR_OUT_OF_MEMORY, "loading %s: out of host memory", src->name ? src->name : "<source>");
    }
    r->request = req;
    char *ptx = c.ptx;
    c.ptx = NULL; /* the module keeps the metadata only */
    /* an inline_asm op in the module's Tile IR: the PTX holds a source's own asm text (the op prints as `= inline_asm `) */
    bool user_asm = c.tir && strstr(c.tir, "= inline_asm ");
    st = rt_module_create_locked(ctx, ptx, user_asm, &c, (RtOrigin){r, record_free}, out);
    free(ptx);
    return st;
}

/* jit_load_file_locked, with fn the public function called (NULL: none) for the messages. */
static tile_status load_file_locked(tile_context *ctx, const char *fn, const char *path, const tile_compile_options *opt,
                                    tile_module **out, int *source) {
    tile_compile_options o;
    tile_status st = load_options(ctx, fn, path, opt, &o);
    if (st != TILE_OK) return st;
    XXH128_hash_t freq = request_key("F", path, "", 0, &o);
    for (tile_module *m = rt_module_next_locked(ctx, NULL); m; m = rt_module_next_locked(ctx, m)) {
        LoadRecord *r = record_of(m);
        if (r && !r->stale && r->has_file_request && XXH128_isEqual(r->file_request, freq) &&
            (rt_assume_files_unchanged(ctx) || (stamp_fresh(path, &r->file_stamp) && imports_fresh(r)))) {
            rt_module_retain_locked(m);
            rt_stats_locked(ctx)->memory_hits++;
            if (source) *source = 0;
            *out = m;
            return TILE_OK;
        }
    }
    int64_t t = realtime_ns();
    size_t n;
    char *text = read_source(path, &n);
    if (!text) { /* a path as long as an argument may be: shortened, as the compiler's messages are */
        int err = errno;
        char *shown = diag_shorten(path);
        st = rt_fail(ctx, TILE_ERROR_IO, "%s%scannot read '%s': %s", fn ? fn : "", fn ? ": " : "", shown ? shown : path, source_error(err));
        free(shown);
        return st;
    }
    SrcFile src = {.name = path, .text = text, .len = n};
    st = load_source_locked(ctx, &src, &o, out, source, t);
    free(text);
    LoadRecord *r = st == TILE_OK ? record_of(*out) : NULL;
    if (r && !r->has_file_request) {
        r->has_file_request = true;
        r->file_request = freq;
        stamp_take(path, &r->file_stamp, t);
    }
    return st;
}

tile_status jit_load_file_locked(tile_context *ctx, const char *path, const tile_compile_options *opt, tile_module **out,
                                 int *source) {
    return load_file_locked(ctx, NULL, path, opt, out, source);
}

/* tile_module_load_file and its _ex: one body, each message naming the function the caller called. */
static tile_status load_file(tile_context *ctx, const char *fn, const char *path, const tile_compile_options *opt, tile_module **out) {
    if (out) *out = NULL; /* cleared before any check, the context's included: a failed call leaves no earlier value */
    if (!rt_context_valid(ctx)) return rt_no_context(fn, ctx);
    if (!out) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: out is NULL", fn);
    if (!path) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: path is NULL", fn);
    rt_lock(ctx);
    tile_status st = load_file_locked(ctx, fn, path, opt, out, NULL);
    rt_unlock(ctx);
    return st;
}

/* tile_module_load_source and its _ex, likewise. */
static tile_status load_source(tile_context *ctx, const char *fn, const char *name, const char *source, const tile_compile_options *opt,
                               tile_module **out) {
    if (out) *out = NULL; /* as load_file's */
    if (!rt_context_valid(ctx)) return rt_no_context(fn, ctx);
    if (!out) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: out is NULL", fn);
    if (!source) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: source is NULL", fn);
    SrcFile src = {.name = name && *name ? name : "<source>", .text = source, .len = strlen(source)};
    tile_compile_options o;
    tile_status st = load_options(ctx, fn, src.name, opt, &o);
    if (st != TILE_OK) return st;
    int64_t t = realtime_ns();
    rt_lock(ctx);
    st = load_source_locked(ctx, &src, &o, out, NULL, t);
    rt_unlock(ctx);
    return st;
}

tile_status tile_module_load_file_ex(tile_context *ctx, const char *path, const tile_compile_options *opt, tile_module **out) {
    return load_file(ctx, "tile_module_load_file_ex", path, opt, out);
}

tile_status tile_module_load_source_ex(tile_context *ctx, const char *name, const char *source, const tile_compile_options *opt,
                                       tile_module **out) {
    return load_source(ctx, "tile_module_load_source_ex", name, source, opt, out);
}

tile_status tile_module_load_file(tile_context *ctx, const char *path, const char *const *defines, tile_module **out) {
    tile_compile_options o = {.defines = defines};
    return load_file(ctx, "tile_module_load_file", path, &o, out);
}

tile_status tile_module_load_source(tile_context *ctx, const char *source, const char *const *defines, tile_module **out) {
    tile_compile_options o = {.defines = defines};
    return load_source(ctx, "tile_module_load_source", NULL, source, &o, out);
}
