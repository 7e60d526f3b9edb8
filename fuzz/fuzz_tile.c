/* fuzz_tile.c - libFuzzer target for the .tile front end and the Tile IR passes.
 *
 * Each input is one source file, compiled in-process the way jit/compile.c
 * does up to the end of the passes (never through LLVM: too slow to fuzz):
 *   1. an optional first byte 0x01..0x03 picks a variant and is dropped:
 *      bit 0 adds the define BLOCK=64, bit 1 targets sm_90a instead of sm_80;
 *   2. lang_list_decls parses the file alone (counted as "parsed");
 *   3. lang_compile with the stdlib on the import path (counted as "front end");
 *   4. tir_verify, then tir_run_pipeline with the verifier after every pass
 *      (counted as "compiled").
 * A rejected input must carry at least one located error, and no message may
 * be an internal error; either breach aborts so libFuzzer keeps the input
 * (the same rule tests/test_fuzz.c enforces).  Crashes, sanitizer reports,
 * unreachable() and timeouts are caught by libFuzzer itself.
 *
 * The counters are the fuzzer program's own (file scope is fine here): a line
 * goes to stderr every 2^k inputs and at exit, which scripts/fuzz.sh reads
 * for the share of inputs that compile. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/lang.h"
#include "lower/passes.h"
#include "support/target.h"

static uint64_t n_inputs, n_parsed, n_frontend, n_compiled;

static void fuzz_tile_report(const char *when) {
    fprintf(stderr, "fuzz_tile: %s: %llu inputs, %llu parsed, %llu through the front end, %llu compiled (%.1f%%)\n", when,
            (unsigned long long)n_inputs, (unsigned long long)n_parsed, (unsigned long long)n_frontend,
            (unsigned long long)n_compiled, n_inputs ? 100.0 * (double)n_compiled / (double)n_inputs : 0.0);
}

static void fuzz_tile_at_exit(void) { fuzz_tile_report("final"); }

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    atexit(fuzz_tile_at_exit);
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* 1. the variant byte */
    unsigned variant = size > 0 && data[0] >= 1 && data[0] <= 3 ? data[0] : 0;
    if (variant) data++, size--;
    n_inputs++;
    if ((n_inputs & (n_inputs - 1)) == 0) fuzz_tile_report("progress");

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
    if (tir_run_pipeline(m, &po, &d)) n_compiled++;
    else fuzz_tile_check_rejection(&d, "the pass pipeline", text);

done:
    diag_free(&d);
    arena_free(a);
    free(text);
    return 0;
}
