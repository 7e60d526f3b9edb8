/* test_canonicalize.c - the specialize, canonicalize and contract passes.
 *
 * The cases are golden files in the shared format (docs/testing.md, run by
 * tests/test_tir.c as well): tests/lower/<pass>/<name>.tir is the input IR,
 * a line `// CHECK:`, then the IR the pass must print; `// ERROR: msg` on
 * an input line expects that diagnostic instead.  This runner adds what the
 * shared harness does not check: canonicalize's output is a fixed point
 * (running the pass on it again prints the same text).  The builder tests
 * at the end check what text cannot show: locations and long chains. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower/passes.h"

#ifndef TILE_SOURCE_DIR
#define TILE_SOURCE_DIR "."
#endif

static const char check_marker[] = "\n// CHECK:\n";

static char *print_text(Module *m) {
    Str s = {0};
    tir_print_module(&s, m);
    return str_take(&s);
}

static bool run_pass(const char *pass, Module *m, Diag *d) {
    const PassInfo *p = pass_lookup(pass);
    return p && p->run(m, d);
}

/* Parse and verify src, run `pass`, verify; the printed result or NULL
 * (diagnostics in d, pointing into src: keep it alive). */
static char *run_text(const char *pass, const SrcFile *src, Diag *d) {
    Arena *a = arena_new();
    Module *m = tir_parse(a, src, d);
    char *out = NULL;
    if (m && tir_verify(m, d) && run_pass(pass, m, d) && !d->nerrors && tir_verify(m, d)) out = print_text(m);
    arena_free(a);
    return out;
}

static char *render(const Diag *d) {
    Str s = {0};
    diag_render(d, &s);
    return s.buf ? str_take(&s) : strdup("");
}

/* Every `// ERROR: msg` of the input must have been reported. */
static void check_errors(const char *path, const char *input, const Diag *d) {
    char *all = render(d);
    for (const char *p = strstr(input, "// ERROR: "); p; p = strstr(p, "// ERROR: ")) {
        p += 10;
        size_t n = strcspn(p, "\n");
        bool found = false;
        for (int k = 0; k < d->n; k++)
            found |= strlen(d->msgs[k].msg) == n && !memcmp(d->msgs[k].msg, p, n);
        cr_expect(found, "%s: expected diagnostic not reported: %.*s\ngot:\n%s", path, (int)n, p, all);
    }
    free(all);
}

static void golden_file(const char *pass, const char *path) {
    size_t len;
    char *text = read_file(path, &len);
    cr_assert(text, "%s: cannot read", path);
    Diag d;
    diag_init(&d);
    if (strstr(text, "// ERROR: ")) {
        SrcFile src = {path, text, len};
        char *out = run_text(pass, &src, &d);
        cr_expect(!out, "%s: the pass succeeded; expected errors", path);
        check_errors(path, text, &d);
        free(out);
    } else {
        char *mark = strstr(text, check_marker);
        cr_assert(mark, "%s: no `// CHECK:` line", path);
        const char *expect = mark + sizeof check_marker - 1;
        SrcFile src = {path, text, (size_t)(mark - text) + 1};
        char *out = run_text(pass, &src, &d);
        char *errs = render(&d);
        cr_assert(out, "%s: failed:\n%s", path, errs);
        cr_expect_str_eq(out, expect, "%s: output differs; the pass printed:\n%s", path, out);
        if (!strcmp(pass, "canonicalize")) {
            SrcFile src2 = {path, out, strlen(out)};
            char *again = run_text(pass, &src2, &d);
            cr_expect(again && !strcmp(again, out), "%s: not a fixed point; a second run printed:\n%s", path,
                      again ? again : "(failed)");
            free(again);
        }
        free(errs);
        free(out);
    }
    diag_free(&d);
    free(text);
}

static int is_tir(const struct dirent *e) {
    size_t n = strlen(e->d_name);
    return n > 4 && !strcmp(e->d_name + n - 4, ".tir");
}

static void golden_dir(const char *pass) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/lower/%s", TILE_SOURCE_DIR, pass);
    struct dirent **files;
    int n = scandir(dir, &files, is_tir, alphasort);
    cr_assert(n > 0, "no golden files in %s", dir);
    for (int k = 0; k < n; k++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, files[k]->d_name);
        golden_file(pass, path);
        free(files[k]);
    }
    free(files);
}

Test(canonicalize, golden) { golden_dir("canonicalize"); }
Test(specialize, golden) { golden_dir("specialize"); }
Test(contract, golden) { golden_dir("contract"); }

/* Folding keeps the folded op's value and loc; a long chain folds in one round. */
Test(canonicalize, chain_keeps_loc) {
    Arena *a = arena_new();
    Diag d;
    diag_init(&d);
    Module *m = tir_module_new(a);
    Func *f = tir_func_new(m, "k");
    const Type *i32 = tir_scalar(m, DT_I32);
    ValueId p = tir_func_add_arg(f, "p", tir_ptr(m, i32))->value;
    SrcFile file = {"x.tile", "", 0};
    Builder b = {.f = f, .block = f->body};
    ValueId acc = tir_const_int(&b, i32, 0), one = tir_const_int(&b, i32, 1);
    for (int k = 0; k < 5000; k++) {
        b.loc = (Loc){&file, (uint32_t)k + 1, 1};
        ValueId ops[2] = {acc, one};
        acc = tir_emit_v(&b, OP_ADD, ops, 2, i32);
    }
    ValueId st[2] = {p, acc};
    tir_emit(&b, OP_STORE, st, 2, NULL);
    tir_emit(&b, OP_RETURN, NULL, 0, NULL);
    cr_assert(lower_canonicalize(m, &d));
    cr_assert(tir_verify(m, &d));
    Inst *c = f->values[acc].def;
    cr_assert_eq(c->op, OP_CONST);
    cr_assert_eq(c->a.ival, 5000);
    cr_assert_eq(c->loc.line, 5000);
    cr_assert_eq(f->body->last->prev->ops[1], acc);
    char *out = print_text(m);
    cr_assert_str_eq(out, "kernel @k(%p: ptr<i32>) num_warps=4 num_stages=3 {\n"
                          "  %0 = const {value=5000} : i32\n"
                          "  store %p, %0\n"
                          "  return\n"
                          "}\n");
    free(out);
    diag_free(&d);
    arena_free(a);
}
