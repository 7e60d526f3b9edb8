/* lang_diag.h - compiling .tile text in-process for the front end's tests (test_lang.c, test_lang_diag.c):
 * the rendered diagnostics and the printed module of one compile, and expectations on them. */
#ifndef TILE_TESTS_LANG_DIAG_H
#define TILE_TESTS_LANG_DIAG_H
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "lang/lang.h"

#ifndef TILE_SOURCE_DIR
#define TILE_SOURCE_DIR "."
#endif

typedef struct Result {
    Arena *a;
    Module *m;
    char *diags; /* rendered, malloc'd */
    char *ir;    /* printed module, malloc'd ("" when NULL) */
} Result;

/* lang/ has no standard library folder of its own: its caller names it (jit/compile.c asks runtime/datadir.c). */
static const char *const stdlib_dirs[] = {TILE_SOURCE_DIR "/stdlib", NULL};

static inline Result compile_src(const char *name, const char *text, size_t len, const LangDefine *defs, int ndefs) {
    Result r = {.a = arena_new()};
    SrcFile *src = ARENA_NEW(r.a, SrcFile);
    src->name = name;
    src->text = arena_strndup(r.a, text, len);
    src->len = len;
    Diag d;
    diag_init(&d);
    LangOptions opt = {.stdlib_dirs = stdlib_dirs, .defines = defs, .ndefines = ndefs};
    r.m = lang_compile(r.a, src, &opt, &d);
    Str s = {0}, ir = {0};
    if (r.m && !tir_verify(r.m, &d)) r.m = NULL;
    diag_render(&d, &s);
    if (r.m) tir_print_module(&ir, r.m);
    r.diags = str_take(&s);
    r.ir = str_take(&ir);
    diag_free(&d);
    return r;
}

static inline Result compile(const char *text) { return compile_src("t.tile", text, strlen(text), NULL, 0); }

static inline void result_free(Result *r) {
    free(r->diags);
    free(r->ir);
    arena_free(r->a);
}

/* Compile `text` and expect exactly the rendered diagnostics `want`. */
static inline void expect_diag(const char *text, const char *want) {
    Result r = compile(text);
    cr_expect_null(r.m, "compilation should fail");
    cr_expect_str_eq(r.diags, want);
    result_free(&r);
}

static inline void expect_ok(const char *text) {
    Result r = compile(text);
    cr_expect_not_null(r.m, "unexpected failure:\n%s", r.diags);
    cr_expect_str_eq(r.diags, "");
    result_free(&r);
}

/* Compile `text` and expect it to succeed with exactly the warnings `want`. */
static inline void expect_warnings(const char *text, const char *want) {
    Result r = compile(text);
    cr_expect_not_null(r.m, "unexpected failure:\n%s", r.diags);
    cr_expect_str_eq(r.diags, want);
    result_free(&r);
}

/* A define must name a const parameter of a kernel being compiled, a
 * file-level const (of the file or an import), num_warps or num_stages. */
static inline char *compile_defines(const char *kernel, const LangDefine *defs, int ndefs, bool *bad) {
    const char *text = "import \"random.tile\";\nconst SCALE = 2;\n"
                       "kernel a(p: *f32, const BLOCK: i32 = 64) {\n    store(p + arange(0, BLOCK), 1.0);\n}\n"
                       "kernel b(p: *f32, const BLOCK: i32 = 64, const N: i32 = 1) {\n    store(p + arange(0, BLOCK), 1.0);\n}\n";
    Arena *a = arena_new();
    SrcFile src = {.name = "dir/t.tile", .text = text, .len = strlen(text)};
    const char *incs[] = {TILE_SOURCE_DIR "/stdlib", NULL};
    Diag d;
    diag_init(&d);
    *bad = false;
    LangOptions opt = {.include_dirs = incs, .defines = defs, .ndefines = ndefs, .kernel_name = kernel, .bad_define = bad};
    Module *m = lang_compile(a, &src, &opt, &d);
    Str s = {0};
    diag_render(&d, &s);
    if (!m && !s.buf) str_puts(&s, "(failed without a diagnostic)");
    diag_free(&d);
    arena_free(a);
    return s.buf ? str_take(&s) : NULL;
}

#endif
