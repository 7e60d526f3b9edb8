/* tune.c - tuning spaces and the tuning database.
 *
 * A kernel declares its space in the source:
 *     @config(BM=128, BN=128, BK=32, num_warps=4, num_stages=3)   (repeatable)
 *     @tune_key(m, n, k)                                          (run-time args)
 * tile_tune_space_file and tile_tune_space_source read them through the front end
 * (lang_kernel_tuning).
 *
 * The database is one text file, DIR/tune.db, one record per line:
 *     KERNEL_ID \t DEVICE \t BUCKET \t CONFIG \t SECONDS \n
 * KERNEL_ID is XXH3-128 over the kernel's file, its imports and its name
 * (tile_kernel_id_file), DEVICE is "emu/sm_80" or, on a GPU,
 * "cuda/NVIDIA H100 80GB HBM3/driver 12040/sm_90a" (model and driver, not
 * the device number: rt_device_key), BUCKET is "m=4096,n=4096,k=4096" with
 * each key value rounded up to a power of two (tile_gemm's adds ",trans_a=1" and
 * ",trans_b=1" for a transposed operand: the layout is part of the key), CONFIG is "BM=64 BN=128 ...
 * num_warps=4".  The file is opened inside the cache folder as cache.c opens
 * its files (an owned, private folder; no symlink followed).
 *
 * Recording keeps, per (KERNEL_ID, DEVICE, BUCKET), the TUNE_KEEP fastest distinct configurations, the
 * fastest last: a recording cannot check a configuration against the kernel's space (it has no source), so
 * a faster record that a lookup refuses (ACT=1) must not push out the good one the lookup then falls back to:
 *   1. Read the file and parse it into records (tune_next_line, the one splitter, by length: a NUL byte
 *      ends no line; tune_line: a CRLF ending is a line end); a line that is not five fields with a
 *      well-formed CONFIG and a number of SECONDS, or that holds a NUL byte, is no record, but it is kept
 *      as it is, byte for byte (a hand edit with a typo, a torn write, a record a lookup warned about:
 *      the user's to fix, never lost); blank lines are dropped.
 *   2. When no key repeats (the new record's included) and the file ends with a newline, append the new
 *      line with one O_APPEND write (concurrent tuners do not interleave lines).
 *   3. Otherwise compact: the lines that are no record first, in file order, then each key's records
 *      where its last record was, one
 *      per configuration (its fastest time; a tie goes to the newer), the
 *      TUNE_KEEP fastest, slowest first (a lookup takes the last that passes,
 *      so the fastest good one), written to a temporary
 *      file in the folder and renamed over tune.db (jit_cache_replace), so a
 *      reader sees the old file or the new one.
 * Steps 1 to 3 hold an exclusive flock on DIR/tune.lock (made for it, kept): without it two tuners
 * compacting at once, or one appending while another compacts, lost a record (the last rename won, or the
 * append went to the file the rename replaced).  Lookups take no lock: they read a whole file, old or new.
 *
 * A lookup is applied as defines, so a record is checked before it is
 * returned:
 *   1. Take the records for (kernel, device, bucket), the last one first; a line of that key that is
 *      no record (tune_line) is ignored with a warning naming its line.
 *   2. Each must read NAME=VALUE NAME=VALUE ... (names identifiers, values
 *      literals or a string const's quoted value, ACT="leaky relu", whose spaces
 *      split no word; no name twice).
 *   3. A lookup by source and kernel (tile_tune_lookup_file, what tile_gemm
 *      uses) reads the kernel's @config space: every NAME must be one of its
 *      knobs and every VALUE one that some @config gives it, so ACT=1 or
 *      BM=96 is refused.  A lookup by id alone (tile_tune_lookup) has no
 *      source to read and checks the form only.
 *   4. The first record that passes is the answer; each refused one is
 *      ignored with a warning naming tune.db's line (on stderr once per process; every one under
 *      TILE_DEBUG=cache). */
#include "jit/jit.h"
#include "runtime/cache_entry.h"
#include "../lang/lang.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

int64_t tile_tune_bucket(int64_t v) {
    int64_t b = 1;
    while (b < v && b < ((int64_t)1 << 62)) b <<= 1;
    return b;
}

/* The id of kernel in the file src whose files (src first, then its imports) are files[0..nf). */
static void kernel_id(const SrcFile *src, const SrcFile **files, int nf, const char *kernel, char id[33]) {
    XXH3_state_t *st = XXH3_createState();
    XXH3_128bits_reset(st);
    XXH3_128bits_update(st, kernel, strlen(kernel) + 1);
    XXH3_128bits_update(st, src->text, src->len);
    for (int i = 1; i < nf; i++) XXH3_128bits_update(st, files[i]->text, files[i]->len);
    XXH128_hash_t h = XXH3_128bits_digest(st);
    snprintf(id, 33, "%016llx%016llx", (unsigned long long)h.high64, (unsigned long long)h.low64);
    XXH3_freeState(st);
}

tile_status tile_kernel_id_file(const char *path, const char *kernel, char id[33]) {
    if (id) id[0] = 0; /* before any check: a failed call leaves no earlier value */
    if (!path || !kernel || !id)
        return rt_fail(NULL, TILE_ERROR_INVALID_VALUE, "tile_kernel_id_file: %s is NULL", !path ? "path" : !kernel ? "kernel" : "id");
    size_t n;
    char *text = read_source(path, &n);
    if (!text) return rt_fail(NULL, TILE_ERROR_IO, "tile_kernel_id_file: cannot read '%s': %s", path, source_error(errno));
    SrcFile src = {.name = path, .text = text, .len = n};
    Arena *a = arena_new();
    /* an id for a kernel the file does not have is one nothing will ever look up */
    Diag d;
    diag_init(&d);
    LangDecl *decls;
    int nd = lang_list_decls(a, &src, &d, &decls);
    diag_free(&d);
    bool found = false;
    for (int i = 0; i < nd && !found; i++) found = decls[i].kind == LANG_DECL_KERNEL && !strcmp(decls[i].name, kernel);
    if (found) {
        const SrcFile **files;
        int nf = jit_source_files(a, &src, NULL, &files);
        kernel_id(&src, files, nf, kernel, id);
    } else id[0] = 0;
    arena_free(a);
    free(text);
    return found ? TILE_OK : rt_fail(NULL, TILE_ERROR_NOT_FOUND, "tile_kernel_id_file: %s declares no kernel '%s'", path, kernel);
}

/* ---- checking a record ---- */
static bool is_ident(const char *s, size_t n) {
    if (!n || !(s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z'))) return false;
    for (size_t i = 1; i < n; i++)
        if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9'))) return false;
    return true;
}
/* A quoted string value, as tune_space gives a string const's (ACT="leaky relu"): "..." holding no
 * control byte and no '"' but escaped ones (a backslash takes the next byte), the language's string. */
static bool is_quoted(const char *s, size_t n) {
    if (n < 2 || s[0] != '"' || s[n - 1] != '"') return false;
    for (size_t i = 1; i < n - 1; i++) {
        if ((unsigned char)s[i] < 0x20 || s[i] == '"') return false;
        if (s[i] == '\\' && ++i == n - 1) return false; /* the closing quote escaped */
    }
    return true;
}
static bool is_literal(const char *s, size_t n) {
    if (n && s[0] == '"') return is_quoted(s, n);
    size_t i = n && (s[0] == '-' || s[0] == '+');
    if (i == n) return false;
    for (; i < n; i++)
        if (!(s[i] == '_' || s[i] == '.' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9')))
            return false;
    return true;
}

/* Does some @config of sp set name (n bytes)?  With value: to exactly "name=value"? */
static bool space_has(const tile_tune_space *sp, const char *word, size_t name_len, bool whole) {
    for (int i = 0; i < sp->nconfigs; i++)
        for (char **w = sp->configs[i]; *w; w++)
            if (whole ? !strcmp(*w, word) : !strncmp(*w, word, name_len) && (*w)[name_len] == '=') return true;
    return false;
}

/* Steps 2 and (with sp) 3 of the header: true when config passes, else false and why not in *why. */
/* The end of the NAME=VALUE word at w: the first space outside a quoted value (a string may hold spaces), or
 * the terminator; an unterminated quote runs to the end (and is_literal refuses it). */
static const char *word_end(const char *w) {
    bool quoted = false;
    for (; *w && (quoted || *w != ' '); w++) {
        if (*w == '"') quoted = !quoted;
        else if (quoted && *w == '\\' && w[1]) w++;
    }
    return w;
}

static bool config_ok(const char *config, const tile_tune_space *sp, const char *kernel, Str *why) {
    if (!*config) return str_puts(why, "the configuration is empty"), false;
    for (const char *w = config; *w;) {
        const char *end = word_end(w);
        if (!*end) end = NULL;
        size_t len = end ? (size_t)(end - w) : strlen(w);
        const char *eq = memchr(w, '=', len);
        size_t nlen = eq ? (size_t)(eq - w) : len;
        if (!eq || !is_ident(w, nlen) || !is_literal(eq + 1, len - nlen - 1))
            return str_printf(why, "'%.*s' is not NAME=VALUE", (int)len, w), false;
        for (const char *p = config; p < w;) {
            const char *pe = strchr(p, '=');
            if ((size_t)(pe - p) == nlen && !strncmp(p, w, nlen)) return str_printf(why, "%.*s is set twice", (int)nlen, w), false;
            p = word_end(p) + 1;
        }
        char word[256];
        if (len >= sizeof word) return str_printf(why, "'%.40s...' is too long", w), false;
        memcpy(word, w, len);
        word[len] = 0;
        if (sp && !space_has(sp, word, nlen, false))
            return str_printf(why, "%.*s is not a tuning knob of %s (no @config sets it)", (int)nlen, w, kernel), false;
        if (sp && !space_has(sp, word, nlen, true))
            return str_printf(why, "%s is not a value any @config of %s gives %.*s", word, kernel, (int)nlen, w), false;
        if (!end) break;
        w = end + 1;
        if (!*w) return str_puts(why, "the configuration ends with a space"), false;
    }
    return true;
}

/* ---- recording ---- */
static bool field_ok(const char *s) { return s && *s && !strpbrk(s, "\t\n"); }

typedef struct TuneRec {
    const char *f[4]; /* id, device, bucket, config: into the file's text */
    double seconds;
    bool dup;         /* a later record of the same key replaced it */
} TuneRec;

enum { TUNE_KEEP = 4 }; /* configurations kept per key */
/* The most of tune.db that is read (docs/runtime.md): a larger file, or one that does not fit in memory, is
 * not read: lookups see no record and recording writes nothing (a rewrite would drop the records it could not
 * read) but fails with a message. */
#define TUNE_DB_MAX_BYTES ((size_t)16 << 20)

/* Why tune.db could not be read (errno from rt_cache_read_max), for messages. */
static const char *unreadable_why(int err, char *buf, size_t n) {
    if (err == EFBIG) snprintf(buf, n, "it is larger than %zu bytes (16 MiB), the most that is read", TUNE_DB_MAX_BYTES);
    else if (err == ENOMEM) snprintf(buf, n, "there is not enough memory to read it");
    else if (err == EINVAL) snprintf(buf, n, "it is not a regular file"); /* a folder, a FIFO, a device: open_regular */
    else if (err == ELOOP) snprintf(buf, n, "it is a symbolic link (not followed)");
    else snprintf(buf, n, "%s", strerror(err));
    return buf;
}

/* The one line splitter of tune.db, for recording and lookup alike: the line at *at of text[0..n) (its newline
 * overwritten with a NUL), its length in *len, NULL after the last; *at moves past it.  Lengths, not strlen:
 * a NUL byte inside the file ends no line (a line that holds one is no record, and the lines after it are
 * read as any other). */
static char *tune_next_line(char *text, size_t n, size_t *at, size_t *len) {
    if (!text || *at >= n) return NULL;
    char *line = text + *at, *nl = memchr(line, '\n', n - *at);
    *len = nl ? (size_t)(nl - line) : n - *at;
    if (nl) *nl = 0;
    *at += *len + (nl != NULL);
    return line;
}

/* One line of tune.db, len bytes (modified in place: tabs become NULs, a CR before the newline goes): true
 * when it is a record, its fields in f[0..3] and its time in *sec; else false with why in *why.  *nf: the
 * fields split (6 for more than 5), up to a NUL byte in the line, which makes it no record. */
static bool tune_line(char *line, size_t len, char *f[5], int *nf, double *sec, Str *why) {
    if (len && line[len - 1] == '\r') line[--len] = 0;
    const char *nul = memchr(line, 0, len);
    *nf = 0;
    char *p = line;
    while (p && *nf < 5) {
        f[(*nf)++] = p;
        if ((p = strchr(p, '\t'))) *p++ = 0;
    }
    if (p) ++*nf; /* a sixth field (or more) */
    if (nul) return str_printf(why, "it holds a NUL byte (column %zu)", (size_t)(nul - line) + 1), false;
    if (*nf != 5) return str_printf(why, "%d tab-separated fields, not 5: KERNEL_ID, DEVICE, BUCKET, CONFIG, SECONDS", *nf), false;
    if (!*f[0] || !*f[1] || !*f[2]) return str_printf(why, "its %s is empty", !*f[0] ? "KERNEL_ID" : !*f[1] ? "DEVICE" : "BUCKET"), false;
    char *end = NULL;
    *sec = c_strtod(f[4], &end);
    if (end == f[4] || *end || !(*sec >= 0)) return str_printf(why, "SECONDS '%s' is not a time", f[4]), false;
    return config_ok(f[3], NULL, f[0], why);
}

/* Step 1 of the header: the records of text[0..len) (modified in place); the lines that are no record, each
 * with its newline and byte for byte (NUL bytes included), into *kept. */
static TuneRec *parse_records(char *text, size_t len, int *nrec, Str *kept) {
    TuneRec *v = NULL;
    int n = 0;
    size_t at = 0, ll;
    for (char *line; (line = tune_next_line(text, len, &at, &ll));) {
        if (!ll || (ll == 1 && line[0] == '\r')) continue; /* a blank line */
        char *f[5] = {0}, *orig = malloc(ll + 1);
        int nf;
        double sec;
        Str why = {0};
        if (!orig) out_of_memory();
        memcpy(orig, line, ll);
        bool ok = tune_line(line, ll, f, &nf, &sec, &why);
        str_free(&why);
        if (!ok) str_putn(kept, orig, ll), str_putn(kept, "\n", 1);
        free(orig);
        if (!ok) continue;
        if (!(n & (n - 1)) && !(v = realloc(v, sizeof *v * (size_t)(n ? 2 * n : 1)))) out_of_memory();
        v[n++] = (TuneRec){{f[0], f[1], f[2], f[3]}, sec, false};
    }
    *nrec = n;
    return v;
}

uint64_t jit_tune_count(int dfd) {
    size_t len = 0;
    char *text = rt_cache_read_max(dfd, "tune.db", TUNE_DB_MAX_BYTES, &len); /* unreadable: no record counted */
    int n = 0;
    Str kept = {0};
    free(parse_records(text, text ? len : 0, &n, &kept));
    str_free(&kept);
    free(text);
    return (uint64_t)n;
}

static bool same_key(const TuneRec *a, const TuneRec *b) {
    return !strcmp(a->f[0], b->f[0]) && !strcmp(a->f[1], b->f[1]) && !strcmp(a->f[2], b->f[2]);
}

tile_status tile_tune_record(const char *cache_dir, const char *kernel_id, const char *device, const char *key_bucket,
                             const char *config, double seconds) {
    const char *dir = cache_dir && *cache_dir ? cache_dir : rt_options()->cache_dir;
    const char *const fields[4] = {kernel_id, device, key_bucket, config};
    static const char *const field_names[4] = {"kernel_id", "device", "key_bucket", "config"};
    for (int i = 0; i < 4; i++)
        if (!field_ok(fields[i]))
            return rt_fail(NULL, TILE_ERROR_INVALID_VALUE, "tile_tune_record: %s is %s", field_names[i],
                           !fields[i] ? "NULL" : !*fields[i] ? "empty" : "not one line without tabs");
    if (!(seconds >= 0)) return rt_fail(NULL, TILE_ERROR_INVALID_VALUE, "tile_tune_record: seconds = %g is not a time", seconds);
    Str why = {0}; /* a record every lookup would ignore (not NAME=VALUE words) is refused, not written over a good one */
    bool form = config_ok(config, NULL, kernel_id, &why);
    if (!form) rt_fail(NULL, TILE_ERROR_INVALID_VALUE, "tile_tune_record: config '%s': %s", config, why.buf ? why.buf : "not NAME=VALUE words");
    str_free(&why);
    if (!form) return TILE_ERROR_INVALID_VALUE;
    int dfd = jit_cache_open(dir, true);
    if (dfd < 0)
        return rt_fail(NULL, TILE_ERROR_IO, "tile_tune_record: cannot use the cache folder %s: %s", dir ? dir : "(none)", strerror(errno));
    /* 1. the records so far, the new one last; tune.lock held until the file is written, so a writer in
     *    another thread or process neither reads the file before this one's rename nor appends to the file
     *    it replaces */
    int lock = jit_cache_lock(dfd, "tune.lock");
    size_t text_len = 0;
    char *text = rt_cache_read_max(dfd, "tune.db", TUNE_DB_MAX_BYTES, &text_len);
    if (!text && errno != ENOENT) { /* records it cannot read: writing over them would lose them */
        char why[160];
        unreadable_why(errno, why, sizeof why);
        if (lock >= 0) close(lock);
        close(dfd);
        jit_cache_warn(JIT_WARN_TUNE, "cannot read %s/tune.db (%s): the tuning record for %.200s on %.200s, %.200s is not written "
                       "(`tile cache clear --tuning` starts a new database)", dir, why, kernel_id, device, key_bucket);
        return rt_fail(NULL, TILE_ERROR_IO, "tile_tune_record: cannot read %s/tune.db (%s): nothing recorded, so that its records "
                       "are kept (`tile cache clear --tuning` starts a new database)", dir, why);
    }
    int nrec = 0;
    if (!text) text_len = 0;
    bool ends_line = !text_len || text[text_len - 1] == '\n'; /* an append after a last line without its newline would join them */
    Str kept = {0};                                            /* lines that are no record: kept as they are */
    TuneRec *recs = parse_records(text, text_len, &nrec, &kept);
    if (!(recs = realloc(recs, sizeof *recs * (size_t)(nrec + 1)))) out_of_memory();
    recs[nrec++] = (TuneRec){{kernel_id, device, key_bucket, config}, seconds, false};
    /* a configuration recorded twice for a key: its fastest time, at the later record (a tie goes to the newer) */
    bool repeats = false;
    for (int i = 0; i < nrec; i++)
        for (int j = i + 1; j < nrec && !recs[i].dup; j++)
            if (same_key(&recs[i], &recs[j])) {
                repeats = true;
                if (!strcmp(recs[i].f[3], recs[j].f[3])) {
                    recs[i].dup = true;
                    if (recs[i].seconds < recs[j].seconds) recs[j].seconds = recs[i].seconds;
                }
            }
    Str out = {0};
    bool ok;
    if (!repeats && ends_line) { /* 2. a new key: append */
        str_printf(&out, "%s\t%s\t%s\t%s\t%.9g\n", kernel_id, device, key_bucket, config, seconds);
        ok = jit_cache_append(dfd, "tune.db", out.buf, out.len);
    } else { /* 3. compact: the lines that are no record, then each key's TUNE_KEEP fastest configurations, slowest first,
              *    where its last record was */
        if (kept.len) str_putn(&out, kept.buf, kept.len); /* byte for byte: a kept line may hold a NUL */
        int *grp = malloc(sizeof *grp * (size_t)nrec);
        if (!grp) out_of_memory();
        for (int last = 0; last < nrec; last++) {
            if (recs[last].dup) continue;
            bool is_last = true;
            for (int j = last + 1; j < nrec && is_last; j++) is_last = recs[j].dup || !same_key(&recs[j], &recs[last]);
            if (!is_last) continue;
            int n = 0;
            for (int i = 0; i <= last; i++)
                if (!recs[i].dup && same_key(&recs[i], &recs[last])) grp[n++] = i;
            /* slowest first (stable: among equal times the older first, so the newer is nearer the end) */
            for (int x = 1; x < n; x++)
                for (int y = x; y > 0 && recs[grp[y - 1]].seconds < recs[grp[y]].seconds; y--) {
                    int t = grp[y];
                    grp[y] = grp[y - 1], grp[y - 1] = t;
                }
            for (int k = n > TUNE_KEEP ? n - TUNE_KEEP : 0; k < n; k++) {
                const TuneRec *r = &recs[grp[k]];
                str_printf(&out, "%s\t%s\t%s\t%s\t%.9g\n", r->f[0], r->f[1], r->f[2], r->f[3], r->seconds);
            }
        }
        free(grp);
        ok = jit_cache_replace(dfd, "tune.db", out.buf ? out.buf : "", out.len);
    }
    int werr = errno;
    if (!ok) jit_cache_warn_write(dir, "tune.db", werr);
    if (lock >= 0) close(lock);
    close(dfd);
    str_free(&out);
    str_free(&kept);
    free(recs);
    free(text);
    /* the reason for the caller too: the warning is once per process and cause (a read-only folder's was
     * spent on the compile cache's stats) */
    return ok ? TILE_OK
              : rt_fail(NULL, TILE_ERROR_IO, "tile_tune_record: cannot write %s/tune.db: %s", dir,
                        werr == ELOOP ? "it is a symbolic link (not followed)" : strerror(werr));
}

static void space_from_tuning(const LangTuning *t, tile_tune_space *out) {
    out->nconfigs = t->nconfigs;
    out->configs = calloc((size_t)t->nconfigs + 1, sizeof *out->configs);
    for (int i = 0; i < t->nconfigs; i++) {
        int c = 0;
        while (t->configs[i][c]) c++;
        out->configs[i] = calloc((size_t)c + 1, sizeof(char *));
        for (int j = 0; j < c; j++) out->configs[i][j] = strdup(t->configs[i][j]);
    }
    out->nkeys = t->nkeys;
    out->keys = calloc((size_t)t->nkeys + 1, sizeof *out->keys);
    for (int i = 0; i < t->nkeys; i++) out->keys[i] = strdup(t->keys[i]);
}

/* The lookup; sp (NULL: records are checked for form only) is the kernel's declared space. */
static tile_status lookup(const char *cache_dir, const char *kernel_id, const tile_tune_space *sp, const char *kernel,
                          const char *device, const char *key_bucket, char *config, size_t config_size) {
    const char *dir = cache_dir && *cache_dir ? cache_dir : rt_options()->cache_dir;
    const char *fn = kernel ? "tile_tune_lookup_file" : "tile_tune_lookup"; /* the entry point, for messages */
    if (config && config_size) config[0] = 0; /* before any check: a failed call leaves no earlier value */
    if (!kernel_id || !device || !key_bucket || !config || !config_size)
        return rt_fail(NULL, TILE_ERROR_INVALID_VALUE, "%s: %s", fn, !kernel_id ? "kernel_id is NULL" : !device ? "device is NULL"
                                                                   : !key_bucket ? "key_bucket is NULL" : !config ? "config is NULL"
                                                                                 : "config_size is 0");
    const char *who0 = kernel ? kernel : kernel_id;
    int dfd = jit_cache_open(dir, false);
    if (dfd < 0) return rt_fail(NULL, TILE_ERROR_NOT_FOUND, "%s: no tuning database in %s (no record for %.200s on %.200s, %.200s)", fn, dir, who0, device, key_bucket);
    size_t n;
    char *text = rt_cache_read_max(dfd, "tune.db", TUNE_DB_MAX_BYTES, &n);
    int err = errno;
    close(dfd);
    if (!text && err != ENOENT) { /* fails softly: no record, as for a missing database (tile_gemm takes its defaults) */
        char why[160];
        unreadable_why(err, why, sizeof why);
        jit_cache_warn(JIT_WARN_TUNE, "cannot read %s/tune.db (%s): no tuning record is used", dir, why);
        return rt_fail(NULL, TILE_ERROR_NOT_FOUND, "%s: cannot read %s/tune.db (%s): no record for %.200s on %.200s, %.200s", fn, dir,
                       why, who0, device, key_bucket);
    }
    if (!text) return rt_fail(NULL, TILE_ERROR_NOT_FOUND, "%s: no tuning database in %s (no record for %.200s on %.200s, %.200s)", fn, dir, who0, device, key_bucket);
    /* 1. the matching records' configurations and lines, in file order */
    char **cfgs = NULL;
    int ncfg = 0, *lines = NULL, lineno = 0;
    const char *who = kernel ? kernel : kernel_id;
    size_t at = 0, ll;
    for (char *line; (line = tune_next_line(text, n, &at, &ll));) {
        lineno++;
        char *f[5] = {0};
        int nf;
        double sec;
        Str why = {0};
        bool rec = tune_line(line, ll, f, &nf, &sec, &why);
        bool ours = nf >= 3 && !strcmp(f[0], kernel_id) && !strcmp(f[1], device) && !strcmp(f[2], key_bucket);
        if (ours && !rec)
            jit_cache_warn(JIT_WARN_TUNE, "%s/tune.db:%d: ignoring a line that is no record (%s) for %s on %s, %s", dir, lineno, why.buf, who,
                           device, key_bucket);
        str_free(&why);
        if (!ours || !rec) continue;
        if (!(ncfg & (ncfg - 1)) &&
            (!(cfgs = realloc(cfgs, sizeof *cfgs * (size_t)(ncfg ? 2 * ncfg : 1))) || !(lines = realloc(lines, sizeof *lines * (size_t)(ncfg ? 2 * ncfg : 1)))))
            out_of_memory();
        lines[ncfg] = lineno;
        cfgs[ncfg++] = f[3];
    }
    /* 2-4. the last one that passes; one that does not fit the caller's buffer is the caller's problem, not the record's */
    bool found = false, too_small = false;
    size_t need = 0;
    for (int i = ncfg - 1; i >= 0 && !found; i--) {
        Str why = {0};
        if (config_ok(cfgs[i], sp, kernel ? kernel : kernel_id, &why)) {
            need = strlen(cfgs[i]) + 1;
            too_small = need > config_size;
            if (!too_small) snprintf(config, config_size, "%s", cfgs[i]);
            found = true;
        } else {
            jit_cache_warn(JIT_WARN_TUNE, "%s/tune.db:%d: ignoring the record \"%s\" for %s on %s, %s: %s", dir, lines[i], cfgs[i], who,
                           device, key_bucket, why.buf);
        }
        str_free(&why);
    }
    free(cfgs);
    free(lines);
    free(text);
    if (too_small)
        return rt_fail(NULL, TILE_ERROR_INVALID_VALUE, "%s: the configuration recorded for %s on %s, %s needs %zu bytes; config_size is %zu",
                       kernel ? "tile_tune_lookup_file" : "tile_tune_lookup", kernel ? kernel : kernel_id, device, key_bucket, need,
                       config_size);
    return found ? TILE_OK
                 : rt_fail(NULL, TILE_ERROR_NOT_FOUND, "%s: %s/tune.db has no usable record for %.200s on %.200s, %.200s", fn, dir, who0,
                           device, key_bucket);
}

tile_status tile_tune_lookup(const char *cache_dir, const char *kernel_id, const char *device, const char *key_bucket,
                             char *config, size_t config_size) {
    return lookup(cache_dir, kernel_id, NULL, NULL, device, key_bucket, config, config_size);
}

tile_status tile_tune_lookup_file(const char *cache_dir, const char *path, const char *kernel, const char *device,
                                  const char *key_bucket, char *config, size_t config_size) {
    if (config && config_size) config[0] = 0; /* as lookup's */
    if (!path || !kernel || !config || !config_size)
        return rt_fail(NULL, TILE_ERROR_INVALID_VALUE, "tile_tune_lookup_file: %s", !path ? "path is NULL" : !kernel ? "kernel is NULL"
                                                                                : !config ? "config is NULL" : "config_size is 0");
    char id[33];
    tile_status st = tile_kernel_id_file(path, kernel, id);
    if (st != TILE_OK) return st;
    tile_tune_space sp;
    char *err = NULL;
    if ((st = tile_tune_space_file(path, kernel, &sp, &err)) != TILE_OK) { /* its message (a located error) is the caller's answer */
        st = rt_fail(NULL, st, "tile_tune_lookup_file: %s", err ? err : tile_status_string(st));
        free(err);
        return st;
    }
    st = lookup(cache_dir, id, &sp, kernel, device, key_bucket, config, config_size);
    tile_tune_space_free(&sp);
    return st;
}

/* The space of `kernel` in src (a file's text or source text); errmsg as tile_tune_space_file's. */
static tile_status space_of(const SrcFile *src, const char *kernel, tile_tune_space *out, char **errmsg) {
    Arena *a = arena_new();
    Diag d;
    diag_init(&d);
    LangTuning t;
    tile_status st = TILE_OK;
    if (!lang_kernel_tuning(a, src, kernel, &d, &t)) {
        st = TILE_ERROR_COMPILE;
        if (errmsg) {
            Str s = {0};
            diag_render(&d, &s);
            *errmsg = str_take(&s);
        }
    } else {
        space_from_tuning(&t, out);
    }
    diag_free(&d);
    arena_free(a);
    return st;
}

/* A NULL argument: TILE_ERROR_INVALID_VALUE with why in *errmsg (when given) and tile_last_error(NULL). */
static tile_status space_refuse(char **errmsg, const char *why) {
    if (errmsg) *errmsg = strdup(why);
    return rt_fail(NULL, TILE_ERROR_INVALID_VALUE, "%s", why);
}

tile_status tile_tune_space_file(const char *path, const char *kernel, tile_tune_space *out, char **errmsg) {
    if (errmsg) *errmsg = NULL;
    if (!out) return space_refuse(errmsg, "tile_tune_space_file: out is NULL");
    memset(out, 0, sizeof *out);
    if (!path || !kernel) return space_refuse(errmsg, !path ? "tile_tune_space_file: path is NULL" : "tile_tune_space_file: kernel is NULL");
    size_t n;
    char *text = read_source(path, &n); /* as the compiler reads sources: a FIFO or a device never blocks, 16 MiB at most */
    if (!text) { /* in *errmsg as the CLI prints it, and in tile_last_error(NULL) as the calls without a context say why */
        Str s = {0};
        str_printf(&s, "cannot read '%s': %s", path, source_error(errno));
        tile_status st = rt_fail(NULL, TILE_ERROR_IO, "tile_tune_space_file: %s", s.buf ? s.buf : "out of host memory");
        if (errmsg) *errmsg = str_take(&s);
        else str_free(&s);
        return st;
    }
    tile_status st = space_of(&(SrcFile){.name = path, .text = text, .len = n}, kernel, out, errmsg);
    free(text);
    return st;
}

tile_status tile_tune_space_source(const char *name, const char *source, const char *kernel, tile_tune_space *out, char **errmsg) {
    if (errmsg) *errmsg = NULL;
    if (!out) return space_refuse(errmsg, "tile_tune_space_source: out is NULL");
    memset(out, 0, sizeof *out);
    if (!source || !kernel) return space_refuse(errmsg, !source ? "tile_tune_space_source: source is NULL" : "tile_tune_space_source: kernel is NULL");
    return space_of(&(SrcFile){.name = name && *name ? name : "<source>", .text = source, .len = strlen(source)}, kernel, out, errmsg);
}

void tile_tune_space_free(tile_tune_space *s) {
    if (!s) return;
    for (int i = 0; i < s->nconfigs; i++) {
        for (char **p = s->configs[i]; p && *p; p++) free(*p);
        free(s->configs[i]);
    }
    free(s->configs);
    for (int i = 0; i < s->nkeys; i++) free(s->keys[i]);
    free(s->keys);
    memset(s, 0, sizeof *s);
}
