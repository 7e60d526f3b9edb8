/* test_fuzz.c - fuzz smoke: thousands of mutated copies of the shipped kernels
 * (truncations, deleted lines, swapped tokens, random bytes) go through the
 * whole compiler in-process.  Each must end in success or a source error
 * with a located diagnostic ("file:line:col: error:"); a crash, a hang
 * (Criterion's timeout) or an internal error fails the test.  The seed is
 * fixed so CI is repeatable; TILE_FUZZ_SEED and TILE_FUZZ_ITERS explore more. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/tile/tile.h"
#include "tests/sanitized.h"

static uint64_t rng;
static uint32_t next(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)len + 1);
    *n = fread(b, 1, (size_t)len, f);
    b[*n] = 0;
    fclose(f);
    return b;
}

/* One mutation of src into out (NUL-terminated). */
static size_t mutate(const char *src, size_t n, char *out, size_t cap) {
    size_t len = n < cap - 1 ? n : cap - 1;
    memcpy(out, src, len);
    int kind = (int)(next() % 6);
    int times = 1 + (int)(next() % 3);
    for (int t = 0; t < times && len > 0; t++) {
        size_t at = next() % len;
        switch (kind) {
        case 0: len = at; break;                          /* truncate */
        case 1: {                                         /* delete a line */
            size_t s = at, e = at;
            while (s > 0 && out[s - 1] != '\n') s--;
            while (e < len && out[e] != '\n') e++;
            memmove(out + s, out + e, len - e);
            len -= e - s;
            break;
        }
        case 2: {                                         /* swap two tokens (space-separated chunks) */
            size_t b = next() % len;
            if (b < at) { size_t x = b; b = at; at = x; }
            size_t ea = at, eb = b;
            while (ea < len && out[ea] != ' ' && out[ea] != '\n') ea++;
            while (eb < len && out[eb] != ' ' && out[eb] != '\n') eb++;
            if (ea <= b && eb > b && ea > at) {
                char tmp[4096];
                size_t la = ea - at, lb = eb - b, mid = b - ea;
                if (la + lb + mid < sizeof tmp) {
                    memcpy(tmp, out + b, lb);
                    memcpy(tmp + lb, out + ea, mid);
                    memcpy(tmp + lb + mid, out + at, la);
                    memcpy(out + at, tmp, la + lb + mid);
                }
            }
            break;
        }
        case 3: out[at] = (char)(next() & 0xff); break;    /* random byte */
        case 4: {                                           /* duplicate a chunk */
            size_t l = next() % 40;
            if (at + l > len) l = len - at;
            if (len + l < cap - 1) {
                memmove(out + at + l, out + at, len - at);
                len += l;
            }
            break;
        }
        default: {                                          /* replace a digit or punctuation */
            static const char repl[] = "0123456789(){}[];,:+-*/<>=!&|%^~. \"@";
            out[at] = repl[next() % (sizeof repl - 1)];
            break;
        }
        }
    }
    out[len] = 0;
    return len;
}

static bool located(const char *diag) {
    /* "name:LINE:COL: error:" somewhere */
    for (const char *p = strstr(diag, ": error:"); p; p = strstr(p + 1, ": error:")) {
        const char *q = p;
        int colons = 0;
        while (q > diag && q[-1] != '\n') {
            q--;
            if (*q == ':') colons++;
        }
        if (colons >= 2) return true;
    }
    return false;
}

Test(fuzz, mutated_kernels, .timeout = 540) {
    rng = getenv("TILE_FUZZ_SEED") ? strtoull(getenv("TILE_FUZZ_SEED"), NULL, 0) : 0x9E3779B97F4A7C15ull;
    if (!rng) rng = 1;
    uint64_t seed = rng;
    char *srcs[64];
    size_t lens[64];
    char names[64][256];
    int ns = 0;
    /* the shipped kernels: the .tile files of kernels/ and of its family folders */
    static const char *const dirs[] = {"", "gemm/", "attention/", "moe/"};
    for (size_t di = 0; di < sizeof dirs / sizeof dirs[0]; di++) {
        char dpath[512];
        snprintf(dpath, sizeof dpath, TILE_SOURCE_DIR "/kernels/%s", dirs[di]);
        DIR *d = opendir(dpath);
        cr_assert(d, "%s", dpath);
        struct dirent *e;
        while ((e = readdir(d)) && ns < 64) {
            size_t l = strlen(e->d_name);
            if (l < 6 || strcmp(e->d_name + l - 5, ".tile")) continue;
            char path[768];
            snprintf(path, sizeof path, "%s%s", dpath, e->d_name);
            srcs[ns] = slurp(path, &lens[ns]);
            snprintf(names[ns], sizeof names[ns], "%s%s", dirs[di], e->d_name);
            if (srcs[ns]) ns++;
        }
        closedir(d);
    }
    cr_assert_gt(ns, 0);
    /* 3000 inputs under the sanitizers; the plain run takes the first 1000 of the same ones (the sanitized
     * build, with its assertions on, checks more of each) */
    int iters = getenv("TILE_FUZZ_ITERS") ? atoi(getenv("TILE_FUZZ_ITERS")) : TILE_TEST_SANITIZED ? 3000 : 1000;
    static char buf[1 << 16];
    int ok = 0, errors = 0;
    for (int it = 0; it < iters; it++) {
        int k = (int)(next() % (uint32_t)ns);
        mutate(srcs[k], lens[k], buf, sizeof buf);
        /* every input goes through the front end and the Tile IR passes; one in 16 also
         * through LLVM to PTX (that is where the time goes for the big kernels) */
        tile_compile_options o = {.tir_only = (it % 16) != 0};
        tile_compiled c;
        tile_status st = tile_compile_source(names[k], buf, &o, &c);
        if (st == TILE_OK) ok++;
        else {
            errors++;
            cr_assert_eq(st, TILE_ERROR_COMPILE, "seed %llu iteration %d (%s): status %s\n%s\n--- input ---\n%s",
                         (unsigned long long)seed, it, names[k], tile_status_string(st), c.diagnostics, buf);
            cr_assert(located(c.diagnostics), "seed %llu iteration %d: diagnostic without a location:\n%s\n--- input ---\n%s",
                      (unsigned long long)seed, it, c.diagnostics, buf);
        }
        tile_compiled_free(&c);
    }
    cr_log_info("fuzz: seed %llu, %d inputs: %d compiled, %d rejected with located errors", (unsigned long long)seed, iters, ok,
                errors);
    for (int k = 0; k < ns; k++) free(srcs[k]);
}

/* The minimized inputs of bugs the fuzzers found (fuzz/regressions/): each is
 * an error with a message or a success, never a crash, a leak (under ASan)
 * or a hang.  PTX that begins with the byte 0x01 is also launched, as fuzz_ptx
 * does: each entry, one block of its .reqntid or 32 threads, pointers a zeroed
 * 64 KiB buffer, other parameters 37, under a 0.5 s budget. */
#include "include/tile/tile.h"
static void launch_entries(tile_context *ctx, tile_module *m, const char *ptx, const char *file) {
    for (const char *e = strstr(ptx, ".entry"); e; e = strstr(e + 6, ".entry")) {
        const char *s = e + 6;
        while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
        char name[256];
        size_t len = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$%");
        if (!len || len >= sizeof name) continue;
        memcpy(name, s, len);
        name[len] = 0;
        tile_kernel *k;
        tile_kernel_attributes at;
        if (tile_module_get_kernel(m, name, &k) != TILE_OK || tile_kernel_get_attributes(k, &at) != TILE_OK || at.num_params > 64)
            continue;
        unsigned char store[64][64] = {{0}};
        void *args[64];
        tile_devptr bufs[64];
        int nbufs = 0;
        const char *sig = at.signature ? at.signature : "";
        for (int i = 0; i < at.num_params; i++) {
            while (*sig == ' ' || *sig == ',') sig++;
            args[i] = store[i];
            if (!strncmp(sig, "ptr", 3) || !strncmp(sig, "u64", 3) || !strncmp(sig, "b64", 3) || !strncmp(sig, "s64", 3)) {
                tile_devptr p = 0;
                if (tile_malloc(ctx, 1 << 16, &p) == TILE_OK) tile_memset(ctx, p, 0, 1 << 16), bufs[nbufs++] = p;
                memcpy(store[i], &p, 8);
            } else if (strncmp(sig, "b8[", 3)) {
                store[i][0] = 37;
            }
            while (*sig && *sig != ',') sig++;
        }
        tile_launch_options lo = {.size = sizeof lo};
        if (!at.block_threads) lo.block = (tile_dim3){32, 1, 1};
        tile_status st = tile_launch_ex(k, (tile_dim3){1, 1, 1}, at.num_params ? args : NULL, NULL, &lo);
        const char *err = tile_last_error(ctx);
        cr_expect(st == TILE_OK || (st != TILE_ERROR_INTERNAL && *err && !strstr(err, "internal error")), "%s: launch of %s: %s: %s",
                  file, name, tile_status_string(st), err);
        for (int i = 0; i < nbufs; i++) tile_free(ctx, bufs[i]);
    }
}

Test(fuzz, regressions, .timeout = 120) {
    DIR *d = opendir(TILE_SOURCE_DIR "/fuzz/regressions");
    cr_assert(d);
    tile_context *ctx;
    tile_context_options co = {.device = "emu", .no_disk_cache = 1, .emu_timeout_seconds = 0.5};
    cr_assert_eq(tile_context_create_ex(&co, &ctx), TILE_OK);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        bool ptx = !strncmp(e->d_name, "ptx-", 4), tile = !strncmp(e->d_name, "tile-", 5);
        if (!ptx && !tile) continue;
        char path[512];
        snprintf(path, sizeof path, TILE_SOURCE_DIR "/fuzz/regressions/%s", e->d_name);
        size_t len;
        char *text = slurp(path, &len);
        cr_assert(text, "%s", path);
        if (ptx) {
            tile_module *m;
            const char *src = text[0] == 1 ? text + 1 : text;
            tile_status st = tile_module_load_ptx(ctx, src, &m);
            if (st == TILE_OK && src != text) launch_entries(ctx, m, src, e->d_name);
            if (st == TILE_OK) tile_module_unload(m);
            else cr_expect(*tile_last_error(ctx), "%s: an error without a message", e->d_name);
        } else {
            tile_compile_options o = {.tir_only = 1};
            tile_compiled c;
            tile_status st = tile_compile_source(e->d_name, text, &o, &c);
            cr_expect(st == TILE_OK || (c.diagnostics && *c.diagnostics), "%s: %s without diagnostics", e->d_name, tile_status_string(st));
            tile_compiled_free(&c);
        }
        free(text);
        n++;
    }
    closedir(d);
    tile_context_destroy(ctx);
    cr_expect_geq(n, 2, "expected the regression inputs in fuzz/regressions");
}
