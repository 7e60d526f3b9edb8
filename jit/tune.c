/* tune.c - tuning spaces and the tuning database.
 *
 * A kernel declares its space in the source:
 *     @config(BM=128, BN=128, BK=32, num_warps=4, num_stages=3)   (repeatable)
 *     @tune_key(m, n, k)                                          (run-time args)
 * tile_tune_space_file reads them through the front end (lang_kernel_tuning).
 *
 * The database is one text file, DIR/tune.db, one record per line:
 *     KERNEL_ID \t DEVICE \t BUCKET \t CONFIG \t SECONDS \n
 * KERNEL_ID is XXH3-128 over the kernel's file, its imports and its name
 * (tile_kernel_id_file), DEVICE is "emu/sm_80" or "cuda:0/sm_80", BUCKET is
 * "m=4096,n=4096,k=4096" with each key value rounded up to a power of two,
 * CONFIG is "BM=64 BN=128 ... num_warps=4".  Records are appended with one
 * O_APPEND write each (concurrent tuners do not interleave lines); the
 * last record for a (kernel, device, bucket) wins. */
#include "jit/jit.h"
#include "../lang/lang.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

int64_t tile_tune_bucket(int64_t v) {
    int64_t b = 1;
    while (b < v && b < ((int64_t)1 << 62)) b <<= 1;
    return b;
}

tile_status tile_kernel_id_file(const char *path, const char *kernel, char id[33]) {
    if (!path || !kernel || !id) return TILE_ERROR_INVALID_VALUE;
    size_t n;
    char *text = read_source(path, &n);
    if (!text) return TILE_ERROR_IO;
    SrcFile src = {.name = path, .text = text, .len = n};
    Arena *a = arena_new();
    const SrcFile **files;
    int nf = jit_source_files(a, &src, NULL, &files);
    XXH3_state_t *st = XXH3_createState();
    XXH3_128bits_reset(st);
    XXH3_128bits_update(st, kernel, strlen(kernel) + 1);
    XXH3_128bits_update(st, text, n);
    for (int i = 1; i < nf; i++) XXH3_128bits_update(st, files[i]->text, files[i]->len);
    XXH128_hash_t h = XXH3_128bits_digest(st);
    snprintf(id, 33, "%016llx%016llx", (unsigned long long)h.high64, (unsigned long long)h.low64);
    XXH3_freeState(st);
    arena_free(a);
    free(text);
    return TILE_OK;
}

static bool field_ok(const char *s) { return s && *s && !strpbrk(s, "\t\n"); }

tile_status tile_tune_record(const char *cache_dir, const char *kernel_id, const char *device, const char *key_bucket,
                             const char *config, double seconds) {
    const char *dir = cache_dir ? cache_dir : rt_options()->cache_dir;
    if (!field_ok(kernel_id) || !field_ok(device) || !field_ok(key_bucket) || !field_ok(config)) return TILE_ERROR_INVALID_VALUE;
    if (!jit_mkdirs(dir)) return TILE_ERROR_IO;
    Str line = {0};
    str_printf(&line, "%s\t%s\t%s\t%s\t%.9g\n", kernel_id, device, key_bucket, config, seconds);
    char path[4200];
    snprintf(path, sizeof path, "%s/tune.db", dir);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    bool ok = fd >= 0 && write(fd, line.buf, line.len) == (ssize_t)line.len;
    if (fd >= 0) close(fd);
    str_free(&line);
    return ok ? TILE_OK : TILE_ERROR_IO;
}

tile_status tile_tune_lookup(const char *cache_dir, const char *kernel_id, const char *device, const char *key_bucket,
                             char *config, size_t config_size) {
    const char *dir = cache_dir ? cache_dir : rt_options()->cache_dir;
    if (!kernel_id || !device || !key_bucket || !config || !config_size) return TILE_ERROR_INVALID_VALUE;
    config[0] = 0;
    char path[4200];
    snprintf(path, sizeof path, "%s/tune.db", dir);
    size_t n;
    char *text = read_file(path, &n);
    if (!text) return TILE_ERROR_NOT_FOUND;
    bool found = false;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = 0;
        char *f[5] = {0};
        int nf = 0;
        for (char *p = line; p && nf < 5; nf++) {
            f[nf] = p;
            p = strchr(p, '\t');
            if (p) *p++ = 0;
        }
        if (nf < 4 || strcmp(f[0], kernel_id) || strcmp(f[1], device) || strcmp(f[2], key_bucket)) continue;
        snprintf(config, config_size, "%s", f[3]);
        found = true;
    }
    free(text);
    return found ? TILE_OK : TILE_ERROR_NOT_FOUND;
}

tile_status tile_tune_space_file(const char *path, const char *kernel, tile_tune_space *out, char **errmsg) {
    if (errmsg) *errmsg = NULL;
    if (!out) return TILE_ERROR_INVALID_VALUE;
    memset(out, 0, sizeof *out);
    if (!path || !kernel) return TILE_ERROR_INVALID_VALUE;
    size_t n;
    char *text = read_file(path, &n);
    if (!text) {
        if (errmsg) {
            Str s = {0};
            str_printf(&s, "cannot read '%s': %s", path, strerror(errno));
            *errmsg = str_take(&s);
        }
        return TILE_ERROR_IO;
    }
    SrcFile src = {.name = path, .text = text, .len = n};
    Arena *a = arena_new();
    Diag d;
    diag_init(&d);
    LangTuning t;
    tile_status st = TILE_OK;
    if (!lang_kernel_tuning(a, &src, kernel, &d, &t)) {
        st = TILE_ERROR_COMPILE;
        if (errmsg) {
            Str s = {0};
            diag_render(&d, &s);
            *errmsg = str_take(&s);
        }
    } else {
        out->nconfigs = t.nconfigs;
        out->configs = calloc((size_t)t.nconfigs + 1, sizeof *out->configs);
        for (int i = 0; i < t.nconfigs; i++) {
            int c = 0;
            while (t.configs[i][c]) c++;
            out->configs[i] = calloc((size_t)c + 1, sizeof(char *));
            for (int j = 0; j < c; j++) out->configs[i][j] = strdup(t.configs[i][j]);
        }
        out->nkeys = t.nkeys;
        out->keys = calloc((size_t)t.nkeys + 1, sizeof *out->keys);
        for (int i = 0; i < t.nkeys; i++) out->keys[i] = strdup(t.keys[i]);
    }
    diag_free(&d);
    arena_free(a);
    free(text);
    return st;
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
