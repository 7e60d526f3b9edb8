/* cache.c - the on-disk compile cache.
 *
 * A compile request (source, options) maps to one entry file:
 *   1. List the source and every file it imports (jit_source_files, the
 *      compiler's own resolution) and hash each key part with XXH3-128:
 *      compiler (version, build id of libtile, LLVM version), source, imports,
 *      defines, specializations, options, arch.  The key is the hash of the
 *      parts; the identity (source name and kernel) names "the same kernel"
 *      across changes, so a miss can say which part changed.
 *   2. Look for DIR/v1/KK/KEY (KK: the key's first two hex digits).  An
 *      entry is: magic, checksum (XXH3-128 of the rest), format version,
 *      identity, parts, payload length, payload (TIR, PTX, cubin, ptxas log,
 *      diagnostics, kernel metadata).  A wrong magic, length or checksum is
 *      a corrupt entry: logged under TILE_DEBUG=cache, removed, recompiled.
 *   3. On a miss compile, then write the entry to a temporary file in the
 *      same folder and rename() it into place: readers see a whole entry or
 *      none, and concurrent writers of one key all succeed (last rename wins,
 *      the contents are equal).
 *   4. Count the hit or miss by appending one byte to DIR/stats (O_APPEND
 *      writes of one byte do not interleave).
 * Requests for dumps, pass timing or LLVM IR are not cached (those outputs
 * are not stored); they compile directly.  Folders are created mode 0700. */
#include "jit/jit.h"
#include "support/target.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <llvm/Config/llvm-config.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#define CACHE_MAGIC "TILECACH"
#define CACHE_FORMAT 1u

/* KEY_PARTS(enum, what a miss reports) */
#define KEY_PARTS(X)                                           \
    X(COMPILER, "the compiler (version, build or LLVM) changed") \
    X(SOURCE, "the kernel's source changed")                   \
    X(IMPORTS, "an imported file changed")                     \
    X(DEFINES, "the defines changed")                          \
    X(SPECIALIZE, "the specializations changed")               \
    X(OPTIONS, "the options changed")                          \
    X(ARCH, "the arch changed")

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

/* header after magic+checksum: format, identity, parts, payload length */
enum { HDR_FIXED = 8 + 16, HDR_REST = 4 + 16 * (1 + KP_COUNT) + 8, HDR_SIZE = HDR_FIXED + HDR_REST };

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

static XXH128_hash_t hash_str(const char *s) { return XXH3_128bits(s ? s : "", s ? strlen(s) + 1 : 0); }

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
    k->parts[KP_SOURCE] = XXH3_128bits(src->text, src->len);
    XXH3_state_t *st = XXH3_createState();
    XXH3_128bits_reset(st);
    for (int i = 1; i < n; i++) {
        XXH3_128bits_update(st, files[i]->name, strlen(files[i]->name) + 1);
        XXH3_128bits_update(st, &files[i]->len, sizeof files[i]->len);
        XXH3_128bits_update(st, files[i]->text, files[i]->len);
    }
    k->parts[KP_IMPORTS] = XXH3_128bits_digest(st);
    XXH3_128bits_reset(st);
    hash_list(st, o->defines);
    k->parts[KP_DEFINES] = XXH3_128bits_digest(st);
    XXH3_128bits_reset(st);
    hash_list(st, o->specialize);
    k->parts[KP_SPECIALIZE] = XXH3_128bits_digest(st);
    XXH3_128bits_reset(st);
    XXH3_128bits_update(st, o->kernel ? o->kernel : "", o->kernel ? strlen(o->kernel) + 1 : 0);
    hash_list(st, o->include_dirs);
    int flags[2] = {o->no_align_ptrs, o->want_cubin};
    XXH3_128bits_update(st, flags, sizeof flags);
    if (o->want_cubin && o->ptxas) XXH3_128bits_update(st, o->ptxas, strlen(o->ptxas));
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

static void serialize(const CacheKey *k, const char *srcname, const tile_compiled *c, Str *out) {
    Str pl = {0};
    put_str(&pl, srcname);
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
        int32_t v[5] = {ki->num_warps, ki->num_stages, ki->smem_bytes, ki->registers, ki->spill_bytes};
        str_putn(&pl, (const char *)v, sizeof v);
    }
    Str rest = {0};
    put_u32(&rest, CACHE_FORMAT);
    str_putn(&rest, (const char *)&k->identity, 16);
    str_putn(&rest, (const char *)k->parts, sizeof k->parts);
    put_u64(&rest, pl.len);
    str_putn(&rest, pl.buf, pl.len);
    XXH128_hash_t sum = XXH3_128bits(rest.buf, rest.len);
    str_putn(out, CACHE_MAGIC, 8);
    str_putn(out, (const char *)&sum, 16);
    str_putn(out, rest.buf, rest.len);
    str_free(&pl);
    str_free(&rest);
}

typedef struct Reader {
    const char *p, *end;
    bool bad;
} Reader;

static bool get(Reader *r, void *dst, size_t n) {
    if (r->bad || (size_t)(r->end - r->p) < n) return !(r->bad = true);
    memcpy(dst, r->p, n);
    r->p += n;
    return true;
}
/* NULL for an absent field (or a bad read: check r->bad) */
static char *get_blob(Reader *r, size_t *len) {
    uint64_t n = 0;
    if (!get(r, &n, 8) || n == UINT64_MAX) return NULL;
    if (n > (uint64_t)(r->end - r->p)) {
        r->bad = true;
        return NULL;
    }
    char *s = malloc(n + 1);
    if (!s) unreachable("out of memory");
    memcpy(s, r->p, n);
    s[n] = 0;
    r->p += n;
    if (len) *len = n;
    return s;
}

/* Check the whole entry; on success *payload and *rest point into data. */
static bool entry_valid(const char *data, size_t n, Reader *payload, const char **why) {
    if (n < HDR_SIZE || memcmp(data, CACHE_MAGIC, 8)) return (*why = "bad magic or truncated header"), false;
    XXH128_hash_t sum, got = XXH3_128bits(data + HDR_FIXED, n - HDR_FIXED);
    memcpy(&sum, data + 8, 16);
    uint32_t fmt;
    uint64_t plen;
    memcpy(&fmt, data + HDR_FIXED, 4);
    memcpy(&plen, data + HDR_SIZE - 8, 8);
    if (fmt != CACHE_FORMAT) return (*why = "unknown format version"), false;
    if (plen != n - HDR_SIZE) return (*why = "truncated (payload length does not match)"), false;
    if (!XXH128_isEqual(sum, got)) return (*why = "checksum mismatch"), false;
    *payload = (Reader){data + HDR_SIZE, data + n, false};
    return true;
}

/* arch: the target the entry was compiled for (its key says so), NULL the default. */
static bool deserialize(Reader *r, tile_compiled *c, char **srcname, const char *arch) {
    memset(c, 0, sizeof *c);
    *srcname = get_blob(r, NULL);
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
        if (!c->kernels) unreachable("out of memory");
        for (uint32_t i = 0; i < nk && !r->bad; i++) {
            tile_kernel_info *ki = &c->kernels[c->nkernels++];
            ki->name = get_blob(r, NULL);
            ki->signature = get_blob(r, NULL);
            int32_t v[5] = {0};
            get(r, v, sizeof v);
            ki->num_warps = v[0], ki->num_stages = v[1], ki->smem_bytes = v[2], ki->registers = v[3], ki->spill_bytes = v[4];
            ki->smem_dynamic = ki->smem_bytes > smem_static; /* derived, as the compiler decides it */
            if (!ki->name || !ki->signature) r->bad = true;
        }
    } else r->bad = true;
    if (!c->diagnostics) c->diagnostics = strdup("");
    if (r->bad || !c->ptx) {
        tile_compiled_free(c);
        free(*srcname);
        *srcname = NULL;
        return false;
    }
    return true;
}

bool jit_mkdirs(const char *path) {
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
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static void count_event(const char *dir, char what) {
    char path[4096];
    snprintf(path, sizeof path, "%s/stats", dir);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return;
    ssize_t w = write(fd, &what, 1);
    (void)w;
    close(fd);
}

static void entry_path(const char *dir, const CacheKey *k, char *out, size_t n) {
    snprintf(out, n, "%s/v1/%.2s/%s", dir, k->hex, k->hex + 2);
}

/* Under TILE_DEBUG=cache: why did this key miss?  Compare with entries of the same identity. */
static void explain_miss(const char *dir, const CacheKey *k, const char *srcname) {
    char sub[4200];
    bool found = false;
    Str why = {0};
    snprintf(sub, sizeof sub, "%s/v1", dir);
    DIR *top = opendir(sub);
    for (struct dirent *e; top && !found && (e = readdir(top));) {
        if (e->d_name[0] == '.') continue;
        char d2[4500];
        snprintf(d2, sizeof d2, "%s/%s", sub, e->d_name);
        DIR *dd = opendir(d2);
        for (struct dirent *f; dd && !found && (f = readdir(dd));) {
            if (f->d_name[0] == '.') continue;
            char p[4800];
            snprintf(p, sizeof p, "%s/%s", d2, f->d_name);
            char hdr[HDR_SIZE];
            int fd = open(p, O_RDONLY | O_CLOEXEC);
            if (fd < 0) continue;
            ssize_t got = read(fd, hdr, sizeof hdr);
            close(fd);
            if (got != (ssize_t)sizeof hdr || memcmp(hdr, CACHE_MAGIC, 8)) continue;
            XXH128_hash_t id, parts[KP_COUNT];
            memcpy(&id, hdr + HDR_FIXED + 4, 16);
            memcpy(parts, hdr + HDR_FIXED + 20, sizeof parts);
            if (!XXH128_isEqual(id, k->identity)) continue;
            found = true;
            for (int i = 0; i < KP_COUNT; i++)
                if (!XXH128_isEqual(parts[i], k->parts[i])) str_printf(&why, "%s%s", why.len ? "; " : "", part_reasons[i]);
        }
        if (dd) closedir(dd);
    }
    if (top) closedir(top);
    rt_debug("cache", "miss %s (%s): %s", k->hex, srcname ? srcname : "<source>",
              found ? (why.len ? why.buf : "an entry with the same key parts is gone") : "first compile of this source and kernel");
    str_free(&why);
}

/* Read and check the entry; NULL-safe.  Corrupt entries are removed. */
static bool try_load(const char *path, tile_compiled *out, const char *arch) {
    size_t n;
    char *data = read_file(path, &n);
    if (!data) return false;
    Reader r;
    const char *why = NULL;
    char *srcname = NULL;
    bool ok = entry_valid(data, n, &r, &why);
    if (ok && !deserialize(&r, out, &srcname, arch)) ok = false, why = "malformed payload";
    if (!ok) {
        if (rt_options()->debug_cache) rt_debug("cache", "corrupt entry %s: %s; recompiling", path, why);
        unlink(path);
    }
    free(srcname);
    free(data);
    return ok;
}

static void store(const char *dir, const char *path, const CacheKey *k, const char *srcname, const tile_compiled *c) {
    char folder[4200];
    snprintf(folder, sizeof folder, "%s/v1/%.2s", dir, k->hex);
    if (!jit_mkdirs(folder)) {
        if (rt_options()->debug_cache) rt_debug("cache", "cannot create %s: %s", folder, strerror(errno));
        return;
    }
    Str s = {0};
    serialize(k, srcname, c, &s);
    static _Atomic unsigned counter;
    char tmp[4400];
    snprintf(tmp, sizeof tmp, "%s/.tmp-%d-%u-%lx", folder, (int)getpid(), counter++, (unsigned long)time(NULL));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    bool ok = fd >= 0;
    for (size_t off = 0; ok && off < s.len;) {
        ssize_t w = write(fd, s.buf + off, s.len - off);
        if (w <= 0 && errno != EINTR) ok = false;
        else if (w > 0) off += (size_t)w;
    }
    if (fd >= 0 && close(fd) != 0) ok = false;
    if (ok && rename(tmp, path) != 0) ok = false;
    if (!ok) {
        if (rt_options()->debug_cache) rt_debug("cache", "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
    }
    str_free(&s);
}

tile_status jit_cache_compile(const char *dir, const SrcFile *src, const tile_compile_options *opt, tile_compiled *out,
                              int *from_cache) {
    tile_compile_options dflt = {0};
    const tile_compile_options *o = opt ? opt : &dflt;
    if (from_cache) *from_cache = 0;
    memset(out, 0, sizeof *out);
    CacheKey k;
    bool cacheable = dir && !o->dump_after && !o->time_passes && !o->want_llvm_ir && !o->tir_only && make_key(src, o, &k);
    char path[4400];
    if (cacheable) {
        entry_path(dir, &k, path, sizeof path);
        if (try_load(path, out, o->arch)) {
            count_event(dir, 'h');
            if (from_cache) *from_cache = 1;
            return TILE_OK;
        }
        if (rt_options()->debug_cache) explain_miss(dir, &k, src->name);
    }
    tile_status st = tile_compile_source(src->name, src->text, o, out);
    if (cacheable) {
        jit_mkdirs(dir);
        count_event(dir, 'm');
        if (st == TILE_OK && !(o->want_cubin && !out->cubin && !out->ptxas_missing)) store(dir, path, &k, src->name, out);
    }
    return st;
}

/* ---- public ---- */
static const char *dir_or_default(const char *dir) { return dir ? dir : rt_options()->cache_dir; }

tile_status tile_cache_compile_source(const char *cache_dir, const char *name, const char *source,
                                      const tile_compile_options *opt, tile_compiled *out, int *from_cache) {
    if (!out) return TILE_ERROR_INVALID_VALUE;
    memset(out, 0, sizeof *out);
    if (!source) return TILE_ERROR_INVALID_VALUE;
    SrcFile src = {.name = name ? name : "<source>", .text = source, .len = strlen(source)};
    return jit_cache_compile(dir_or_default(cache_dir), &src, opt, out, from_cache);
}

tile_status tile_cache_compile_file(const char *cache_dir, const char *path, const tile_compile_options *opt,
                                    tile_compiled *out, int *from_cache) {
    if (!out) return TILE_ERROR_INVALID_VALUE;
    memset(out, 0, sizeof *out);
    if (from_cache) *from_cache = 0;
    if (!path) return TILE_ERROR_INVALID_VALUE;
    size_t n;
    char *text = read_source(path, &n);
    if (!text) {
        Str s = {0};
        str_printf(&s, "error: cannot read '%s': %s\n", path, source_error(errno));
        out->diagnostics = str_take(&s);
        return TILE_ERROR_IO;
    }
    SrcFile src = {.name = path, .text = text, .len = n};
    tile_status st = jit_cache_compile(dir_or_default(cache_dir), &src, opt, out, from_cache);
    free(text);
    return st;
}

/* Visit every entry file: fn(path, hex key, size). */
static void each_entry(const char *dir, void (*fn)(void *, const char *, const char *, uint64_t), void *user) {
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/v1", dir);
    DIR *top = opendir(sub);
    for (struct dirent *e; top && (e = readdir(top));) {
        if (e->d_name[0] == '.' || strlen(e->d_name) != 2) continue;
        char d2[4500];
        snprintf(d2, sizeof d2, "%s/%s", sub, e->d_name);
        DIR *dd = opendir(d2);
        for (struct dirent *f; dd && (f = readdir(dd));) {
            if (f->d_name[0] == '.' && strncmp(f->d_name, ".tmp-", 5)) continue;
            char p[4800], key[300];
            snprintf(p, sizeof p, "%s/%s", d2, f->d_name);
            snprintf(key, sizeof key, "%s%s", e->d_name, f->d_name);
            struct stat sb;
            if (stat(p, &sb) == 0 && S_ISREG(sb.st_mode)) fn(user, p, key, (uint64_t)sb.st_size);
        }
        if (dd) closedir(dd);
    }
    if (top) closedir(top);
}

static void count_entry(void *user, const char *path, const char *key, uint64_t size) {
    tile_cache_stats *s = user;
    (void)path;
    if (key[2] == '.') return; /* a temporary file of a writer */
    s->entries++;
    s->bytes += size;
}

static uint64_t count_bytes(const char *path, char what) {
    FILE *f = fopen(path, "rb");
    uint64_t n = 0;
    for (int c; f && (c = getc(f)) != EOF;) n += c == what;
    if (f) fclose(f);
    return n;
}

tile_status tile_cache_get_stats(const char *cache_dir, tile_cache_stats *out) {
    if (!out) return TILE_ERROR_INVALID_VALUE;
    memset(out, 0, sizeof *out);
    const char *dir = dir_or_default(cache_dir);
    char p[4200];
    snprintf(p, sizeof p, "%s/stats", dir);
    out->hits = count_bytes(p, 'h');
    out->misses = count_bytes(p, 'm');
    snprintf(p, sizeof p, "%s/tune.db", dir);
    out->tuning_records = count_bytes(p, '\n');
    each_entry(dir, count_entry, out);
    return TILE_OK;
}

typedef struct ListCtx {
    void (*fn)(void *, const char *, const char *, const char *, uint64_t);
    void *user;
} ListCtx;

static void list_entry(void *user, const char *path, const char *key, uint64_t size) {
    ListCtx *lc = user;
    if (key[2] == '.') return;
    size_t n;
    char *data = read_file(path, &n);
    Reader r;
    const char *why;
    tile_compiled c;
    char *srcname = NULL;
    if (data && entry_valid(data, n, &r, &why) && deserialize(&r, &c, &srcname, NULL)) {
        Str ks = {0};
        for (int i = 0; i < c.nkernels; i++) str_printf(&ks, "%s%s", i ? "," : "", c.kernels[i].name);
        lc->fn(lc->user, key, srcname ? srcname : "", ks.buf ? ks.buf : "", size);
        str_free(&ks);
        tile_compiled_free(&c);
    } else lc->fn(lc->user, key, "(corrupt)", "", size);
    free(srcname);
    free(data);
}

tile_status tile_cache_list(const char *cache_dir,
                            void (*fn)(void *user, const char *key, const char *source, const char *kernels, uint64_t bytes),
                            void *user) {
    if (!fn) return TILE_ERROR_INVALID_VALUE;
    ListCtx lc = {fn, user};
    each_entry(dir_or_default(cache_dir), list_entry, &lc);
    return TILE_OK;
}

static void remove_entry(void *user, const char *path, const char *key, uint64_t size) {
    (void)key, (void)size;
    if (unlink(path) != 0) *(int *)user = errno;
}

tile_status tile_cache_clear(const char *cache_dir, int tuning) {
    const char *dir = dir_or_default(cache_dir);
    int err = 0;
    each_entry(dir, remove_entry, &err);
    char p[4200];
    snprintf(p, sizeof p, "%s/stats", dir);
    unlink(p);
    if (tuning) {
        snprintf(p, sizeof p, "%s/tune.db", dir);
        unlink(p);
    }
    return err ? TILE_ERROR_IO : TILE_OK;
}
