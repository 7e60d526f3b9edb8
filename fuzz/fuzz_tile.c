/* fuzz_tile.c - libFuzzer target for the .tile front end and the Tile IR passes.
 *
 * Each input is one source file, compiled in-process the way jit/compile.c
 * does up to the end of the passes (never through LLVM: too slow to fuzz):
 *   1. an optional first byte 0x01..0x07 picks a variant and is dropped:
 *      bit 0 adds the define BLOCK=64, bit 1 targets sm_90a instead of sm_80,
 *      bit 2 also runs what compiles (5., below);
 *   2. lang_list_decls parses the file alone (counted as "parsed");
 *   3. lang_compile with the stdlib on the import path (counted as "front end");
 *   4. tir_verify, then tir_run_pipeline with the verifier after every pass
 *      (counted as "compiled").
 *   5. with bit 2, an input that compiled goes on through LLVM and is loaded
 *      into an emulator context of its arch (tile_module_load_source_ex):
 *      the emulator must take the compiler's own PTX, so a failed load is a
 *      finding unless it is a located compile error (or the input has
 *      inline_asm_elementwise, whose text is the user's PTX); then each kernel runs
 *      once, one block, pointers a zeroed 4 KiB buffer ("**T": a buffer of
 *      pointers to such buffers), integers 37 (1 for "=1"), floats 1.5,
 *      under a 50 ms budget (counted as "launches").  A fault (memcheck: the
 *      kernel may index past the small buffers) is fine; a failure without a
 *      message, or with an internal one, is not.
 * A rejected input must carry at least one located error, and no message may
 * be an internal error; either breach aborts so libFuzzer keeps the input
 * (the same rule tests/test_fuzz.c enforces).  Crashes, sanitizer reports,
 * unreachable() and timeouts are caught by libFuzzer itself.
 *
 * The counters are the fuzzer program's own (file scope is fine here): a line
 * goes to stderr every 2^k inputs and at exit, and the exit's line is also
 * appended to the file FUZZ_TILE_COUNTS names, if set: under -fork=N the
 * fuzzing processes' stderr goes to logs libFuzzer deletes, so scripts/fuzz.sh
 * sums that file's lines for the share of inputs that compile. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/tile/tile.h"
#include "lang/lang.h"
#include "lower/passes.h"
#include "support/target.h"

static uint64_t n_inputs, n_parsed, n_frontend, n_compiled, n_ran;
static tile_context *ctx80, *ctx90;

static void fuzz_tile_report(FILE *out, const char *when) {
    fprintf(out, "fuzz_tile: %s: %llu inputs, %llu parsed, %llu through the front end, %llu compiled (%.1f%%), %llu launches\n",
            when, (unsigned long long)n_inputs, (unsigned long long)n_parsed, (unsigned long long)n_frontend,
            (unsigned long long)n_compiled, n_inputs ? 100.0 * (double)n_compiled / (double)n_inputs : 0.0,
            (unsigned long long)n_ran);
}

static void fuzz_tile_at_exit(void) {
    fuzz_tile_report(stderr, "final");
    const char *path = getenv("FUZZ_TILE_COUNTS");
    FILE *f = path && n_inputs ? fopen(path, "a") : NULL;
    if (!f) return;
    fuzz_tile_report(f, "final");
    fclose(f);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    atexit(fuzz_tile_at_exit);
    tile_context_options co = {.size = sizeof co, .device = "emu:sm_80", .no_disk_cache = 1, .emu_host_threads = 1,
                               .emu_timeout_seconds = 0.05};
    if (tile_context_create_ex(&co, &ctx80) != TILE_OK) abort();
    co.device = "emu:sm_90a";
    if (tile_context_create_ex(&co, &ctx90) != TILE_OK) abort();
    return 0;
}

/* Rejected input: every error fine, at least one with a location, none internal. */
static void fuzz_tile_check_rejection(const Diag *d, const char *stage, const char *text) {
    bool located = false, internal = false;
    for (int i = 0; i < d->n; i++) {
        if (d->msgs[i].level != DIAG_ERROR) continue;
        if (d->msgs[i].loc.file) located = true;
        /* at the start only: messages quote the source, and libFuzzer learns the words */
        if (!strncmp(d->msgs[i].msg, "internal error", 14)) internal = true;
    }
    if (located && !internal) return;
    Str s = {0};
    diag_render(d, &s);
    fprintf(stderr, "fuzz_tile: %s failed %s:\n%s--- input ---\n%s\n", stage,
            internal ? "with an internal error" : "without a located error", s.buf ? s.buf : "(no diagnostics)\n", text);
    str_free(&s);
    abort();
}

static void fuzz_tile_breach(const char *what, const char *msg, const char *text) {
    fprintf(stderr, "fuzz_tile: %s: %s\n--- input ---\n%s\n", what, msg && *msg ? msg : "(no message)", text);
    abort();
}

static bool fuzz_tile_internal(const char *msg) {
    return strstr(msg, "internal error") || strstr(msg, "unreachable") || strstr(msg, "LLVM ERROR");
}

/* "fuzz.tile:LINE:COL: error" somewhere in the message */
static bool fuzz_tile_located(const char *msg) {
    for (const char *p = strstr(msg, "fuzz.tile:"); p; p = strstr(p + 1, "fuzz.tile:")) {
        const char *q = p + 10;
        if (*q < '0' || *q > '9') continue;
        while (*q >= '0' && *q <= '9') q++;
        if (*q++ != ':' || *q < '0' || *q > '9') continue;
        return true;
    }
    return false;
}

/* 5.: through LLVM onto the emulator of the arch, and each kernel run once. */
static void fuzz_tile_run(const char *text, unsigned variant) {
    tile_context *ctx = (variant & 2) ? ctx90 : ctx80;
    static const char *const block64[] = {"BLOCK=64", NULL};
    tile_compile_options o = {.size = sizeof o, .defines = (variant & 1) ? block64 : NULL};
    tile_module *m = NULL;
    tile_status st = tile_module_load_source_ex(ctx, "fuzz.tile", text, &o, &m);
    if (st != TILE_OK) {
        const char *err = tile_last_error(ctx);
        /* inline_asm_elementwise's text is the user's PTX: the emulator may refuse it (with a message) */
        bool user_ptx = strstr(text, "inline_asm") && st != TILE_ERROR_INTERNAL && *err;
        if (fuzz_tile_internal(err) || (!user_ptx && (st != TILE_ERROR_COMPILE || !fuzz_tile_located(err))))
            fuzz_tile_breach("the load of what the passes took failed", err, text);
        return;
    }
    enum { MAXP = 64, BUF = 4096 };
    /* the kernels by name (the first 8 the text declares: the module's list is not public) */
    char names[8][256];
    int nn = 0;
    for (const char *p = strstr(text, "kernel"); p && nn < 8; p = strstr(p + 6, "kernel")) {
        if (p > text && (p[-1] == '_' || ((p[-1] | 32) >= 'a' && (p[-1] | 32) <= 'z') || (p[-1] >= '0' && p[-1] <= '9'))) continue;
        const char *q = p + 6;
        if (*q != ' ' && *q != '\t') continue;
        while (*q == ' ' || *q == '\t') q++;
        size_t l = strspn(q, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
        if (!l || l > 255) continue;
        memcpy(names[nn], q, l);
        names[nn++][l] = 0;
    }
    for (int i = 0; i < nn; i++) {
        const char *name = names[i];
        tile_kernel *k = NULL;
        tile_kernel_attributes at;
        if (tile_module_get_kernel(m, name, &k) != TILE_OK || tile_kernel_get_attributes(k, &at) != TILE_OK) continue;
        if (at.num_params < 0 || at.num_params > MAXP) continue;
        unsigned char store[MAXP][64];
        void *args[MAXP];
        tile_devptr bufs[2 * MAXP];
        int nbufs = 0;
        memset(store, 0, sizeof store);
        const char *s = at.signature ? at.signature : "";
        for (int j = 0; j < at.num_params; j++) {
            while (*s == ' ' || *s == ',') s++;
            const char *e = s + strcspn(s, ",");
            char t[64];
            size_t l = (size_t)(e - s) < sizeof t - 1 ? (size_t)(e - s) : sizeof t - 1;
            memcpy(t, s, l);
            t[l] = 0;
            s = e;
            args[j] = store[j];
            if (strstr(t, "=None")) continue;
            if (t[0] == '*') {
                tile_devptr p = 0, q = 0;
                if (tile_malloc(ctx, BUF, &p) != TILE_OK) continue;
                tile_memset(ctx, p, 0, BUF);
                bufs[nbufs++] = p;
                if (t[1] == '*' && tile_malloc(ctx, BUF, &q) == TILE_OK) {
                    tile_devptr tab[BUF / 8];
                    tile_memset(ctx, q, 0, BUF);
                    bufs[nbufs++] = q;
                    for (int x = 0; x < BUF / 8; x++) tab[x] = q;
                    tile_memcpy_htod(ctx, p, tab, sizeof tab);
                }
                memcpy(store[j], &p, 8);
            } else if (strstr(t, "f32")) {
                float f = 1.5f;
                memcpy(store[j], &f, 4);
            } else if (strstr(t, "f64")) {
                double d = 1.5;
                memcpy(store[j], &d, 8);
            } else if (strstr(t, "f16") || strstr(t, "bf16")) {
                store[j][1] = 0x3e;
            } else if (strstr(t, "=1") || (!strncmp(t, "i1", 2) && (t[2] == 0 || t[2] == ':'))) {
                store[j][0] = 1;
            } else {
                store[j][0] = strstr(t, ":16") ? 48 : 37;
            }
        }
        tile_launch_options lo = {.size = sizeof lo};
        st = tile_launch_ex(k, (tile_dim3){1, 1, 1}, at.num_params ? args : NULL, NULL, &lo);
        if (st == TILE_OK) st = tile_synchronize(ctx);
        n_ran++;
        const char *err = tile_last_error(ctx);
        if (st == TILE_ERROR_INTERNAL || (st != TILE_OK && (!*err || fuzz_tile_internal(err)))) fuzz_tile_breach("a launch failed", err, text);
        for (int j = 0; j < nbufs; j++) tile_free(ctx, bufs[j]);
    }
    tile_module_unload(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* 1. the variant byte */
    unsigned variant = size > 0 && data[0] >= 1 && data[0] <= 7 ? data[0] : 0;
    if (variant) data++, size--;
    n_inputs++;
    if ((n_inputs & (n_inputs - 1)) == 0) fuzz_tile_report(stderr, "progress");

    /* the front end reads len bytes; the copy is NUL-terminated like every caller's */
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    SrcFile src = {.name = "fuzz.tile", .text = text, .len = size};
    Arena *a = arena_new();
    Diag d;
    diag_init(&d);

    /* 2. parse alone */
    LangDecl *decls = NULL;
    lang_list_decls(a, &src, &d, &decls);
    bool parsed = d.nerrors == 0;
    n_parsed += parsed;
    diag_free(&d);
    diag_init(&d);

    /* 3. front end */
    static const LangDefine block64[] = {{"BLOCK", "64"}};
    bool bad_define = false;
    LangOptions lo = {.defines = block64, .ndefines = (variant & 1) ? 1 : 0, .bad_define = &bad_define};
    Module *m = lang_compile(a, &src, &lo, &d);
    if (!m || d.nerrors) {
        if (!bad_define) fuzz_tile_check_rejection(&d, "the front end", text);
        goto done;
    }
    if (m->nfuncs == 0) goto done;
    m->arch = target_find((variant & 2) ? "sm_90a" : "sm_80")->name;
    n_frontend++;

    /* 4. verifier and passes */
    if (!tir_verify(m, &d)) {
        diag_error(&d, (Loc){0}, "internal error: the front end produced invalid IR");
        fuzz_tile_check_rejection(&d, "tir_verify", text);
    }
    PipelineOptions po = {.verify = true};
    if (tir_run_pipeline(m, &po, &d)) {
        n_compiled++;
        /* the whole file again, through the runtime: a NUL in the input ends its C string there */
        if ((variant & 4) && strlen(text) == size) fuzz_tile_run(text, variant);
    } else
        fuzz_tile_check_rejection(&d, "the pass pipeline", text);

done:
    diag_free(&d);
    arena_free(a);
    free(text);
    return 0;
}
