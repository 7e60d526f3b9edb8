/* test_lang.c - the front end: diagnostics (exact text, location, caret),
 * IR shape conventions, golden .tile -> .tir files, and every shipped kernel
 * and standard-library function compiling cleanly and verifying. */
#include <criterion/criterion.h>
#include <stdio.h>
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

static Result compile_src(const char *name, const char *text, size_t len, const LangDefine *defs, int ndefs) {
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

static Result compile(const char *text) { return compile_src("t.tile", text, strlen(text), NULL, 0); }

static void result_free(Result *r) {
    free(r->diags);
    free(r->ir);
    arena_free(r->a);
}

/* Compile `text` and expect exactly the rendered diagnostics `want`. */
static void expect_diag(const char *text, const char *want) {
    Result r = compile(text);
    cr_expect_null(r.m, "compilation should fail");
    cr_expect_str_eq(r.diags, want);
    result_free(&r);
}

static void expect_ok(const char *text) {
    Result r = compile(text);
    cr_expect_not_null(r.m, "unexpected failure:\n%s", r.diags);
    cr_expect_str_eq(r.diags, "");
    result_free(&r);
}

static char *slurp(const char *path, size_t *len) {
    char *t = read_file(path, len);
    cr_assert_not_null(t, "cannot read %s", path);
    return t;
}

/* ---- diagnostics ---- */
Test(lang_diag, missing_semicolon) {
    expect_diag("kernel k(x: *f32) {\n    store(x, 1.0)\n}\n",
                "t.tile:2:18: error: expected ';' after expression, found '}' on line 3\n"
                "      store(x, 1.0)\n"
                "                   ^\n");
}

Test(lang_diag, unknown_name) {
    expect_diag("kernel k(x: *f32) {\n    let a = foo + 1;\n}\n",
                "t.tile:2:13: error: unknown name 'foo'\n"
                "      let a = foo + 1;\n"
                "              ^\n");
}

/* A misspelled name says which one in scope is near it: a built-in, a variable, a parameter, a type, a
 * keyword argument (Triton's and C's type names say the type); a name near nothing gets no guess. */
Test(lang_diag, unknown_name_did_you_mean) {
    static const struct {
        const char *body, *msg;
    } cases[] = {
        {"let a = arrange(0, 64);", "t.tile:2:13: error: unknown name 'arrange'; did you mean 'arange'?\n"},
        {"let a = laod(x);", "t.tile:2:13: error: unknown name 'laod'; did you mean 'load'?\n"},
        {"let a = maximun(1.0, 2.0);", "t.tile:2:13: error: unknown name 'maximun'; did you mean 'maximum'?\n"},
        {"let offs = arange(0, 64);\n    store(x + ofs, 1.0);", "t.tile:3:15: error: unknown name 'ofs'; did you mean 'offs'?\n"},
        {"store(xx, 1.0);", "t.tile:2:11: error: unknown name 'xx'\n"},
        {"store(outt, 1.0);", "t.tile:2:11: error: unknown name 'outt'; did you mean 'out'?\n"},
        {"let a = zeros([4], fp32);", "t.tile:2:24: error: unknown name 'fp32'; did you mean 'f32'?\n"},
        {"let a = zeros([4], float32);", "t.tile:2:24: error: unknown name 'float32'; the type is written 'f32' here\n"},
        {"let a: float = 1.0;", "t.tile:2:12: error: unknown type 'float'; a type is named by its width here: 'f32'\n"},
        {"let acc = 0.0;\n    accc += 1.0;", "t.tile:3:5: error: unknown name 'accc'; did you mean 'acc'? (a new variable is declared with "
                                                 "'let accc = ...')\n"},
        {"store(out, 1.0, maks=true);", "t.tile:2:26: error: 'store' has no parameter named 'maks'; did you mean 'mask'?\n"},
        {"let a = foo(1);", "t.tile:2:13: error: unknown name 'foo'\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char src[512];
        snprintf(src, sizeof src, "kernel k(x: *f32, out: *f32) {\n    %s\n}\n", cases[i].body);
        Result r = compile(src);
        cr_expect_null(r.m, "%s", src);
        const char *e = strstr(r.diags, ": error:");
        cr_expect(e && !strstr(e + 1, ": error:"), "one error: %s", r.diags);
        cr_expect(!strncmp(r.diags, cases[i].msg, strlen(cases[i].msg)), "%s:\n%s\nwant:\n%s", src, r.diags, cases[i].msg);
        result_free(&r);
    }
}

/* A variable whose type an if changes is reported at the branch's assignment, the if in a note (it was
 * reported at the if alone). */
Test(lang_diag, if_type_change_at_the_assignment) {
    expect_diag("kernel k(x: *f32, n: i32) {\n    let t = zeros([64], f32);\n    if n > 3 {\n        t = zeros([32], f32);\n    }\n"
                "    store(x + arange(0, 64), t);\n}\n",
                "t.tile:4:9: error: 't' has type 'tensor<32xf32>' in one branch of 'if' and 'tensor<64xf32>' in the other\n"
                "          t = zeros([32], f32);\n"
                "          ^\n"
                "t.tile:3:5: note: the 'if'\n"
                "      if n > 3 {\n"
                "      ^\n");
}

/* Triton's '/' on integers divides as floats; tile's truncates.  A truncated quotient that meets a float
 * at once is warned about at the division (a run-time quotient) or at its use (a constant one that dropped a
 * remainder); casts and exact constant quotients are not. */
static void expect_warnings(const char *text, const char *want) {
    Result r = compile(text);
    cr_expect_not_null(r.m, "unexpected failure:\n%s", r.diags);
    cr_expect_str_eq(r.diags, want);
    result_free(&r);
}

Test(lang_diag, integer_quotient_used_as_float) {
    expect_warnings("kernel k(x: *f32, n: i32, const D: i32 = 64) {\n    let o = arange(0, 16);\n    let v = load(x + o);\n"
                    "    let a = v + -1 / n;\n    let s = 1 / D;\n    let b = v * s;\n    let c = v * (D / 2) + (o / n) as f32;\n"
                    "    let e = o as f32 / n + o / n * 2;\n    store(x + o, a + b + c + e);\n}\n",
                    "t.tile:4:20: warning: integer division truncates, and its quotient is then used as 'f32' (Triton's '/' on "
                    "integers divides as floats): write 'a as f32 / b' for the fraction, or '(a / b) as f32' to keep the truncation\n"
                    "      let a = v + -1 / n;\n"
                    "                     ^\n"
                    "t.tile:6:15: warning: an integer division truncated this operand to 0, and it is used as 'f32' (Triton's '/' "
                    "on integers divides as floats): write 'a as f32 / b' for the fraction, or '(a / b) as f32' to keep the "
                    "truncation\n"
                    "      let b = v * s;\n"
                    "                ^\n");
}

/* Two porting slips get a hint: assigning a name never declared (Python has no 'let'), and calling a
 * built-in that a parameter or variable of the same name hides (probe U). */
Test(lang_diag, assignment_without_let_and_hidden_builtin) {
    expect_diag("kernel k(x: *f32) {\n    v = 1.0;\n}\n",
                "t.tile:2:5: error: unknown name 'v' (a new variable is declared with 'let v = ...')\n"
                "      v = 1.0;\n"
                "      ^\n");
    expect_diag("kernel k(x: *f32, zeros: i32) {\n    let t = zeros([4], f32);\n}\n",
                "t.tile:2:13: error: 'zeros' is a variable here, not a function: it hides the built-in 'zeros' (rename the variable)\n"
                "      let t = zeros([4], f32);\n"
                "              ^\n");
}

Test(lang_diag, arg_count) {
    expect_diag("kernel k(x: *f32) {\n    let a = load(x, 1, 2, 3, 4);\n}\n",
                "t.tile:2:27: error: 'load' takes 1 to 3 positional arguments, got 5: cache_modifier, eviction_policy, "
                "volatile, boundary_check and padding_option are given by name (cache_modifier=...)\n"
                "      let a = load(x, 1, 2, 3, 4);\n"
                "                            ^\n");
    expect_diag("kernel k(x: *f32) {\n    store(x, 1.0, true, \".wt\");\n}\n",
                "t.tile:2:25: error: 'store' takes 2 to 3 positional arguments, got 4: cache_modifier, eviction_policy and "
                "boundary_check are given by name (cache_modifier=...)\n"
                "      store(x, 1.0, true, \".wt\");\n"
                "                          ^\n");
    /* keyword arguments are not counted as positional ones: an unknown one is named (it was "'sum' expects 1
     * to 2 arguments, got 3"), a required one left out is named */
    expect_diag("kernel k(x: *f32) {\n    let t = load(x + arange(0, 4));\n    store(x, sum(t, 0, keep_dims=true, dtype=f32, foo=3));\n}\n",
                "t.tile:3:55: error: 'sum' has no parameter named 'foo' (its parameters: x, axis, keep_dims, dtype)\n"
                "      store(x, sum(t, 0, keep_dims=true, dtype=f32, foo=3));\n"
                "                                                        ^\n");
    expect_diag("kernel k(x: *f32) {\n    let t = load(x + arange(0, 4));\n    store(x + arange(0, 4), where(t > 0.0, b=t, c=t));\n}\n",
                "t.tile:3:51: error: 'where' has no parameter named 'c' (its parameters: cond, a, b)\n"
                "      store(x + arange(0, 4), where(t > 0.0, b=t, c=t));\n"
                "                                                    ^\n");
    expect_diag("kernel k(x: *f32) {\n    let t = load(x + arange(0, 4));\n    store(x + arange(0, 4), where(t > 0.0, b=t, b=t));\n}\n",
                "t.tile:3:51: error: argument 'b' of 'where' given more than once\n"
                "      store(x + arange(0, 4), where(t > 0.0, b=t, b=t));\n"
                "                                                    ^\n");
}

Test(lang_diag, add_pointers) {
    expect_diag("kernel k(x: *f32, y: *f32) {\n    let a = x + y;\n}\n",
                "t.tile:2:15: error: cannot add 'ptr<f32>' and 'ptr<f32>'\n"
                "      let a = x + y;\n"
                "                ^\n");
}

Test(lang_diag, logical_needs_i1) {
    expect_diag("kernel k(x: f32, y: i1) {\n    let a = x && y;\n}\n",
                "t.tile:2:15: error: operands of '&&' must be i1, got 'f32'\n"
                "      let a = x && y;\n"
                "                ^\n");
}

Test(lang_diag, broadcast_mismatch) {
    expect_diag("kernel k(x: *f32) {\n    let a = arange(0, 64) + arange(0, 32);\n}\n",
                "t.tile:2:27: error: shapes [64] and [32] do not broadcast\n"
                "      let a = arange(0, 64) + arange(0, 32);\n"
                "                            ^\n");
}

Test(lang_diag, dot_inner) {
    expect_diag("kernel k(p: *f32) {\n    let z = dot(zeros([32, 16], f32), zeros([32, 64], f32));\n}\n",
                "t.tile:2:13: error: dot: inner dimensions differ: a is [32, 16], b is [32, 64]\n"
                "      let z = dot(zeros([32, 16], f32), zeros([32, 64], f32));\n"
                "              ^\n");
}

Test(lang_diag, power_of_two) {
    expect_diag("kernel k(p: *f32) {\n    let x = arange(0, 48);\n}\n",
                "t.tile:2:13: error: block dimension 48 is not a power of two\n"
                "      let x = arange(0, 48);\n"
                "              ^\n");
    expect_diag("kernel k(p: *f32) {\n    let x = zeros([16, 12], f32);\n}\n",
                "t.tile:2:19: error: block dimension 12 is not a power of two\n"
                "      let x = zeros([16, 12], f32);\n"
                "                    ^\n");
}

Test(lang_diag, needs_constant) {
    expect_diag("kernel k(p: *f32, BLOCK: i32) {\n    let x = arange(0, BLOCK);\n}\n",
                "t.tile:2:23: error: 'BLOCK' must be a compile-time constant\n"
                "      let x = arange(0, BLOCK);\n"
                "                        ^\n");
}

Test(lang_diag, mask_shape) {
    expect_diag("kernel k(p: *f32) {\n"
                "    let o = arange(0, 64);\n"
                "    let v = load(p + o[None, :], o[:, None] < 10);\n"
                "}\n",
                "t.tile:3:34: error: mask shape [64, 1] does not broadcast to pointer shape [1, 64]\n"
                "      let v = load(p + o[None, :], o[:, None] < 10);\n"
                "                                   ^\n");
    expect_diag("kernel k(p: *f32) {\n    let v = where(1.5, 1, 2);\n}\n",
                "t.tile:2:19: error: condition of 'where' must be i1 or an integer, got 'f32'\n"
                "      let v = where(1.5, 1, 2);\n"
                "                    ^\n");
}

/* A name bound in an `if`'s branches and used after it (Python keeps it; a block here keeps its names):
 * the error at the use, and a note at the branch's `let` saying how to write it; an assignment likewise.
 * A `let` in a block that ends after the use, or a name never declared, gets no note. */
Test(lang_diag, name_of_an_ended_block) {
    expect_diag("kernel k(x: *f32, n: i32) {\n    if n > 3 {\n        let loss = 1.0;\n    } else {\n        let loss = 2.0;\n    }\n"
                "    store(x, loss);\n}\n",
                "t.tile:7:14: error: unknown name 'loss'\n"
                "      store(x, loss);\n"
                "               ^\n"
                "t.tile:3:9: note: 'loss' is declared here, in a block that ends before that use (a block keeps its names, unlike "
                "Python's branches): declare it before the block ('let loss = ...;') and assign it inside\n"
                "          let loss = 1.0;\n"
                "          ^\n");
    Result r = compile("kernel k(x: *f32, n: i32) {\n    for i in range(0, n) {\n        let (a, b) = (1.0, 2.0);\n    }\n    b = 3.0;\n}\n");
    cr_expect(strstr(r.diags, "t.tile:5:5: error: unknown name 'b' (a new variable is declared with 'let b = ...')") &&
                  strstr(r.diags, "t.tile:3:9: note: 'b' is declared here, in a block that ends before that use"),
              "%s", r.diags);
    result_free(&r);
    r = compile("kernel k(x: *f32) {\n    store(x, later);\n    if true { let later = 1.0; }\n}\n");
    cr_expect(strstr(r.diags, "unknown name 'later'") && !strstr(r.diags, "note:"), "%s", r.diags);
    result_free(&r);
}

/* A number stored through pointers of another type converts (Triton's store casts); a pointer stored
 * where numbers go, or a number where pointers go, is an error at the value. */
Test(lang_diag, store_dtype) {
    Result r = compile("kernel k(p: *f16, v: f32) {\n    store(p, v);\n}\n");
    cr_expect_not_null(r.m, "%s", r.diags);
    result_free(&r);
    expect_diag("kernel k(p: *f16, q: *f32) {\n    store(p, q);\n}\n",
                "t.tile:2:14: error: store of 'ptr<f32>' value to 'ptr<f16>'\n"
                "      store(p, q);\n"
                "               ^\n");
}

Test(lang_diag, recovery_reports_several) {
    /* a syntax error resynchronises at ';' so the next statement's error is reported too */
    Result r = compile("kernel k(x: *f32) {\n    let a = (1 + ;\n    let b = 2 2;\n}\n");
    cr_expect_null(r.m);
    cr_expect(strstr(r.diags, "t.tile:2:18: error: expected an expression, found ';'") != NULL, "%s", r.diags);
    cr_expect(strstr(r.diags, "t.tile:3:15: error: expected ';' after 'let' statement, found '2'") != NULL, "%s", r.diags);
    result_free(&r);
}

Test(lang_diag, semantic_errors_continue) {
    Result r = compile("kernel k(x: *f32) {\n    let a = foo;\n    let b = bar;\n}\n");
    cr_expect(strstr(r.diags, "unknown name 'foo'") && strstr(r.diags, "unknown name 'bar'"), "%s", r.diags);
    result_free(&r);
}

Test(lang_diag, misc) {
    expect_diag("fn f(x) { return f(x); }\nkernel k(p: *f32) {\n    store(p, f(1.0));\n}\n",
                "t.tile:1:18: error: recursive call to 'f'\n"
                "  fn f(x) { return f(x); }\n"
                "                   ^\n"
                "t.tile:3:14: note: in this call of 'f'\n"
                "      store(p, f(1.0));\n"
                "               ^\n");
    expect_diag("kernel k(p: *f32, n: i32) {\n    let acc = 0.0;\n    for i in range(n) { acc = arange(0, 16); }\n}\n",
                "t.tile:3:25: error: loop-carried variable 'acc' changes type from 'f32' to 'tensor<16xi32>' in the loop\n"
                "      for i in range(n) { acc = arange(0, 16); }\n"
                "                          ^\n"
                "t.tile:3:5: note: the loop\n"
                "      for i in range(n) { acc = arange(0, 16); }\n"
                "      ^\n");
    expect_diag("kernel k(p: *f32, const B: i32) {\n}\n",
                "t.tile:1:25: error: const parameter 'B' has no default and is not defined (-D B=...)\n"
                "  kernel k(p: *f32, const B: i32) {\n"
                "                          ^\n");
    expect_diag("@num_warps(4)\nfn f(x) { return x; }\nkernel k(p: *f32) {\n}\n",
                "t.tile:2:1: error: expected 'kernel' after '@num_warps(...)', found 'fn': attributes go before a kernel\n"
                "  fn f(x) { return x; }\n"
                "  ^\n");
    expect_diag("@num_warps(3)\nkernel k(p: *f32) {\n}\n",
                "t.tile:1:12: error: num_warps must be 1, 2, 4, 8, 16 or 32, got 3\n"
                "  @num_warps(3)\n"
                "             ^\n");
    expect_diag("@warp_specialize(2)\nkernel k(p: *f32) {\n}\n",
                "t.tile:1:18: error: warp_specialize must be 0 or 1, got 2\n"
                "  @warp_specialize(2)\n"
                "                   ^\n");
    expect_diag("@num_consumer_groups(3)\nkernel k(p: *f32) {\n}\n",
                "t.tile:1:22: error: num_consumer_groups must be 1, 2 or 4, got 3\n"
                "  @num_consumer_groups(3)\n"
                "                       ^\n");
    expect_diag("@num_consumer_groups(8)\nkernel k(p: *f32) {\n}\n",
                "t.tile:1:22: error: num_consumer_groups=8: 32 computing warps and a producer warpgroup are more than a block's 1024 threads\n"
                "  @num_consumer_groups(8)\n"
                "                       ^\n");
    expect_diag("@num_warps(4)\n@num_consumer_groups(2)\nkernel k(p: *f32) {\n}\n",
                "t.tile:1:12: error: num_warps=4, but @num_consumer_groups(2) means 8 computing warps\n"
                "  @num_warps(4)\n"
                "             ^\n");
    expect_diag("@warp_specialize(on=1)\nkernel k(p: *f32) {\n}\n",
                "t.tile:1:2: error: '@warp_specialize' takes one value (0 or 1)\n"
                "  @warp_specialize(on=1)\n"
                "   ^\n");
    expect_diag("@pingpong(3)\nkernel k(p: *f32) {\n}\n",
                "t.tile:1:11: error: pingpong must be 0 or 1, got 3\n"
                "  @pingpong(3)\n"
                "            ^\n");
    expect_diag("@pingpong(on=1)\nkernel k(p: *f32) {\n}\n",
                "t.tile:1:2: error: '@pingpong' takes one value (0 or 1)\n"
                "  @pingpong(on=1)\n"
                "   ^\n");
    expect_diag("@overlap(2)\nkernel k(p: *f32) {\n}\n",
                "t.tile:1:10: error: overlap must be 0 or 1, got 2\n"
                "  @overlap(2)\n"
                "           ^\n");
    expect_diag("@overlap(1, 1)\nkernel k(p: *f32) {\n}\n",
                "t.tile:1:2: error: '@overlap' takes one value (0 or 1)\n"
                "  @overlap(1, 1)\n"
                "   ^\n");
    expect_diag("kernel k(p: *f32) {\n    let x = 1 / 0;\n}\n",
                "t.tile:2:15: error: division by zero in a constant expression\n"
                "      let x = 1 / 0;\n"
                "                ^\n");
    expect_diag("kernel k(p: *f32) {\n    let x = zeros([1024, 2048], f32);\n}\n",
                "t.tile:2:19: error: tensor of shape [1024, 2048] has more than 1048576 elements\n"
                "      let x = zeros([1024, 2048], f32);\n"
                "                    ^\n");
    expect_diag("kernel k(p: *f32) {\n    let x = \x01;\n}\n",
                "t.tile:2:13: error: unexpected byte 0x01 (a control character)\n"
                "      let x = ?;\n"
                "              ^\n");
    expect_diag("kernel k(p: *f32, n: i32) {\n    for i in range(n) { if i > 2 { return; } }\n}\n",
                "t.tile:2:36: error: 'return' inside a 'for' loop is not supported\n"
                "      for i in range(n) { if i > 2 { return; } }\n"
                "                                     ^\n");
}

Test(lang_diag, loops_and_jumps) {
    expect_diag("kernel k(n: i32) {\n    break;\n}\n",
                "t.tile:2:5: error: 'break' outside a loop\n"
                "      break;\n"
                "      ^\n");
    expect_diag("fn f(x) {\n    continue;\n    return x;\n}\nkernel k(n: i32) {\n    for i in range(n) { let y = f(i); }\n}\n",
                "t.tile:2:5: error: 'continue' outside a loop (a function cannot leave its caller's loop)\n"
                "      continue;\n"
                "      ^\n"
                "t.tile:6:33: note: in this call of 'f'\n"
                "      for i in range(n) { let y = f(i); }\n"
                "                                  ^\n");
    expect_diag("kernel k(n: i32) {\n    while n > 0 { return; }\n}\n",
                "t.tile:2:19: error: 'return' inside a 'while' loop is not supported\n"
                "      while n > 0 { return; }\n"
                "                    ^\n");
    expect_diag("kernel k(x: *f32) {\n    while load(x + arange(0, 4)) > 0.0 {}\n}\n",
                "t.tile:2:11: error: condition of 'while' must be a scalar 'i1', got 'tensor<4xi1>'\n"
                "      while load(x + arange(0, 4)) > 0.0 {}\n"
                "            ^\n");
    expect_diag("kernel k(n: i32) {\n    while n {}\n}\n",
                "t.tile:2:11: error: condition of 'while' must be a scalar 'i1', got 'i32'\n"
                "      while n {}\n"
                "            ^\n");
    expect_diag("kernel k(n: i32) {\n    while n > 0 {\n        break\n    }\n}\n",
                "t.tile:3:14: error: expected ';' after 'break', found '}' on line 4\n"
                "          break\n"
                "               ^\n");
    expect_diag("kernel k(p: *f32, n: i32) {\n    let acc = 0.0;\n    while n > 0 { acc = arange(0, 16); }\n}\n",
                "t.tile:3:19: error: loop-carried variable 'acc' changes type from 'f32' to 'tensor<16xi32>' in the loop\n"
                "      while n > 0 { acc = arange(0, 16); }\n"
                "                    ^\n"
                "t.tile:3:5: note: the loop\n"
                "      while n > 0 { acc = arange(0, 16); }\n"
                "      ^\n");
}

Test(lang_diag, tuples) {
    expect_diag("fn f(x) {\n    return (x, x + 1, x * 2);\n}\nkernel k(p: *i32) {\n    let (a, b) = f(1);\n}\n",
                "t.tile:5:9: error: cannot unpack a tuple of 3 values into 2 names\n"
                "      let (a, b) = f(1);\n"
                "          ^\n");
    expect_diag("fn f(x) {\n    return (x, x + 1);\n}\nkernel k(p: *i32) {\n    let a = 0;\n    let b = 0;\n    let c = 0;\n"
                "    (a, b, c) = f(1);\n}\n",
                "t.tile:8:5: error: cannot unpack a tuple of 2 values into 3 names\n"
                "      (a, b, c) = f(1);\n"
                "      ^\n");
    expect_diag("kernel k(p: *i32) {\n    let (a, b) = load(p);\n}\n",
                "t.tile:2:18: error: cannot unpack 'i32' into 2 names: it is not a tuple\n"
                "      let (a, b) = load(p);\n"
                "                   ^\n");
    expect_diag("fn f(x) {\n    return (x, x);\n}\nkernel k(p: *i32) {\n    store(p, f(1));\n}\n",
                "t.tile:5:14: error: a tuple of 2 values cannot be used as a value; unpack it: let (a, b) = ...\n"
                "      store(p, f(1));\n"
                "               ^\n");
    expect_diag("kernel k(p: *i32) {\n    let (a, a) = (1, 2);\n}\n",
                "t.tile:2:13: error: 'a' appears twice in the names\n"
                "      let (a, a) = (1, 2);\n"
                "              ^\n");
    expect_diag("kernel k(p: *i32) {\n    let a = 0;\n    (a, b) = (1, 2);\n}\n",
                "t.tile:3:9: error: unknown name 'b'\n"
                "      (a, b) = (1, 2);\n"
                "          ^\n");
}

/* A define must name a const parameter of a kernel being compiled, a
 * file-level const (of the file or an import), num_warps or num_stages. */
static char *compile_defines(const char *kernel, const LangDefine *defs, int ndefs, bool *bad) {
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

Test(lang_diag, unknown_define) {
    bool bad;
    LangDefine ok[] = {{"BLOCK", "128"}, {"N", "2"}, {"SCALE", "3"}, {"PHILOX_KEY_A", "1"}, {"num_warps", "8"}, {"num_stages", "2"}};
    char *diags = compile_defines(NULL, ok, 6, &bad);
    cr_expect_null(diags, "%s", diags);
    cr_expect(!bad);
    free(diags);
    LangDefine nope[] = {{"BLOCK", "128"}, {"NOPE", "1"}};
    diags = compile_defines(NULL, nope, 2, &bad);
    cr_expect_str_eq(diags, "error: -D NOPE: no kernel of t.tile has a const parameter NOPE (valid: BLOCK, N, SCALE, num_warps, num_stages, warp_specialize, pingpong, overlap)\n");
    cr_expect(bad);
    free(diags);
    /* with one kernel selected, another kernel's parameter is still a name of the file (one set of
     * defines serves every kernel compiled from it); an unknown one is not */
    LangDefine other[] = {{"N", "2"}};
    diags = compile_defines("a", other, 1, &bad);
    cr_expect_null(diags, "%s", diags);
    cr_expect(!bad);
    free(diags);
    diags = compile_defines("a", nope, 2, &bad);
    cr_expect_str_eq(diags, "error: -D NOPE: no kernel of t.tile has a const parameter NOPE (valid: BLOCK, N, SCALE, num_warps, num_stages, warp_specialize, pingpong, overlap)\n");
    cr_expect(bad);
    free(diags);
    /* a missing kernel is reported as such, not as a define error */
    diags = compile_defines("c", other, 1, &bad);
    cr_expect_str_eq(diags, "error: no kernel named 'c'\n");
    cr_expect(!bad);
    free(diags);
}

/* ---- IR conventions ---- */
Test(lang_ir, const_params_and_defines) {
    const char *src = "@num_warps(8)\nkernel k(p: *f32, n: i32, const B: i32 = 64) {\n"
                      "    store(p + arange(0, B), 1.0);\n}\n";
    LangDefine defs[] = {{"B", "128"}, {"num_stages", "2"}};
    Result r = compile_src("t.tile", src, strlen(src), defs, 2);
    cr_assert_not_null(r.m, "%s", r.diags);
    Func *f = r.m->funcs[0];
    cr_expect_eq(f->nargs, 2);
    cr_expect_eq(f->num_warps, 8);
    cr_expect_eq(f->num_stages, 2);
    cr_expect(strstr(r.ir, "arange {start=0, end=128} : tensor<128xi32>") != NULL, "%s", r.ir);
    cr_expect(strstr(r.ir, "const {value=1} : tensor<128xf32>") != NULL, "%s", r.ir);
    cr_expect_eq(f->loc.line, 2);
    result_free(&r);
}

Test(lang_ir, promotion_and_literals) {
    Result r = compile("kernel k(a: *f16, b: *i32, c: *f32) {\n"
                       "    let x = load(a);\n    let i = load(b);\n"
                       "    store(a, x * 2);\n"          /* weak int: stays f16 */
                       "    store(c, i * 0.5);\n"        /* int with weak float: f32 */
                       "    store(c, x + (i as f32));\n" /* f16 + f32: f32 */
                       "    store(b, i + (1 << 4));\n"   /* folded */
                       "}\n");
    cr_assert_not_null(r.m, "%s", r.diags);
    cr_expect(strstr(r.ir, "const {value=2} : f16") != NULL, "%s", r.ir);
    cr_expect(strstr(r.ir, "const {value=0.5} : f32") != NULL, "%s", r.ir);
    cr_expect(strstr(r.ir, "const {value=16} : i32") != NULL, "%s", r.ir);
    result_free(&r);
}

Test(lang_ir, every_inst_has_a_location) {
    size_t len;
    char *text = slurp(TILE_SOURCE_DIR "/kernels/matmul.tile", &len);
    Result r = compile_src(TILE_SOURCE_DIR "/kernels/matmul.tile", text, len, NULL, 0);
    cr_assert_not_null(r.m, "%s", r.diags);
    Func *f = r.m->funcs[0];
    for (Inst *i = f->body->first; i; i = i->next) cr_expect(i->loc.file && i->loc.line > 0, "%s without location", tir_op_info[i->op].name);
    cr_expect_eq(f->body->last->op, OP_RETURN);
    result_free(&r);
    free(text);
}

Test(lang_ok, positives) {
    expect_ok("kernel k(p: *f32, n: i32) {\n"
              "    let i = arange(0, 32);\n"
              "    let m = (i < n)[:, None] && (i < n)[None, :];\n"
              "    let t = load(p + i[:, None] * 32 + i[None, :], m, 0.0);\n"
              "    store(p + i, sum(t, axis=1) + max(t, axis=0) + sum(minimum(t, 1.0), 1) + min(t, 1) + max(t, 0));\n"
              "}\n");
    expect_ok("kernel k(p: *f32, n: i32) {\n"
              "    let x = 0.0;\n"
              "    for i in range(0, n, 2) { if i % 4 == 0 { x += 1.0; } else { x -= 0.5; } }\n"
              "    for j in range(10, 0, -1) { x = x * 2.0; }\n"
              "    if n > 3 { store(p, x); }\n"
              "}\n");
    expect_ok("kernel k(p: *bf16, q: *u8) {\n"
              "    let i = arange(0, 16);\n"
              "    let t = load(p + i);\n"
              "    store(p + i, (sqrt(t as f32) as bf16) + t);\n"
              "    store(q + i, load(q + i) >> 1 | (3 as u8));\n"
              "    store(p + broadcast_to(i[:, None], [16, 16]) + trans(expand_dims(i, 0), [1, 0]), 0.0);\n"
              "}\n");
}

/* ---- goldens and shipped sources ---- */
/* `suffix`: ".tile", or ".tile.new" for syntax the committed tree-sitter parser does not
 * know yet (test_treesitter parses every .tile file) */
static void check_golden_src(const char *stem, const char *suffix) {
    char tpath[512], gpath[512];
    snprintf(tpath, sizeof tpath, "%s/tests/lang/%s%s", TILE_SOURCE_DIR, stem, suffix);
    snprintf(gpath, sizeof gpath, "%s/tests/lang/%s.tir", TILE_SOURCE_DIR, stem);
    size_t len, glen;
    char *text = slurp(tpath, &len), *want = slurp(gpath, &glen);
    Result r = compile_src(tpath, text, len, NULL, 0);
    cr_expect_not_null(r.m, "%s", r.diags);
    cr_expect_str_eq(r.ir, want, "golden %s differs", stem);
    result_free(&r);
    free(text);
    free(want);
}

static void check_golden(const char *stem) { check_golden_src(stem, ".tile"); }

Test(lang_golden, add) { check_golden("add"); }
Test(lang_golden, while_break_continue) { check_golden_src("while", ".tile.new"); }
Test(lang_golden, loop) { check_golden("loop"); }
Test(lang_golden, control) { check_golden("control"); }
Test(lang_golden, dot) { check_golden("dot"); }
Test(lang_golden, casts) { check_golden("casts"); }
Test(lang_golden, shape) { check_golden("shape"); }

static void check_compiles(const char *rel) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", TILE_SOURCE_DIR, rel);
    size_t len;
    char *text = slurp(path, &len);
    Result r = compile_src(path, text, len, NULL, 0);
    cr_expect_not_null(r.m, "%s failed:\n%s", rel, r.diags);
    cr_expect_str_eq(r.diags, "");
    cr_expect(r.m && r.m->nfuncs >= 1, "%s has no kernel", rel);
    result_free(&r);
    free(text);
}

Test(lang_kernels, add) { check_compiles("kernels/add.tile"); }
Test(lang_kernels, softmax) { check_compiles("kernels/softmax.tile"); }
Test(lang_kernels, layernorm) { check_compiles("kernels/layernorm.tile"); }
Test(lang_kernels, rmsnorm) { check_compiles("kernels/rmsnorm.tile"); }
Test(lang_kernels, row_sum) { check_compiles("kernels/row_sum.tile"); }
Test(lang_kernels, transpose) { check_compiles("kernels/transpose.tile"); }
Test(lang_kernels, matmul) { check_compiles("kernels/matmul.tile"); }
Test(lang_kernels, stdlib) { check_compiles("tests/lang/stdlib_use.tile"); }

/* Hostile input never crashes: truncations of every kernel. */
Test(lang_robust, truncations) {
    const char *files[] = {"kernels/matmul.tile", "kernels/layernorm.tile", "stdlib/random.tile"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", TILE_SOURCE_DIR, files[f]);
        size_t len;
        char *text = slurp(path, &len);
        for (size_t n = 0; n < len; n += 7) {
            Result r = compile_src("t.tile", text, n, NULL, 0);
            result_free(&r);
        }
        free(text);
    }
}

/* ---- bounded on any input (each fails with a located error, in bounded time and memory) ---- */
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Cap this test process's memory (Criterion runs each test in its own process);
 * not under AddressSanitizer, which reserves far more address space itself. */
static void cap_memory(void) {
#if !defined(__SANITIZE_ADDRESS__)
    struct rlimit rl = {(rlim_t)2 << 30, (rlim_t)2 << 30};
    cr_assert_eq(setrlimit(RLIMIT_AS, &rl), 0);
#endif
}

static double mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void expect_bounded(const char *text, size_t len, const char *want) {
    cap_memory();
    double t0 = mono();
    Result r = compile_src("t.tile", text, len, NULL, 0);
    double dt = mono() - t0;
    cr_expect_null(r.m, "compilation should fail");
    cr_expect(strstr(r.diags, want), "expected '%s' in:\n%.2000s", want, r.diags);
    cr_expect_lt(dt, 20.0, "took %.1f s", dt);
    result_free(&r);
}

/* g_i calls g_{i-1} twice: 2^40 calls if nothing stops it, with run-time or compile-time arguments */
static char *doubling_chain(bool runtime) {
    Str s = {0};
    str_puts(&s, "fn g_0(x) { return x; }\n");
    for (int i = 1; i <= 40; i++) str_printf(&s, "fn g_%d(x) { return g_%d(x) + g_%d(x); }\n", i, i - 1, i - 1);
    str_puts(&s, runtime ? "kernel k(p: *f32) { let v = load(p); store(p, g_40(v)); }\n"
                         : "kernel k(p: *i32) { store(p, g_40(3)); }\n");
    return str_take(&s);
}

Test(lang_bounds, exponential_inlining_runtime_values) {
    char *t = doubling_chain(true);
    expect_bounded(t, strlen(t), "error: kernel too large after inlining");
    free(t);
}

Test(lang_bounds, exponential_inlining_constants) {
    char *t = doubling_chain(false);
    expect_bounded(t, strlen(t), "error: kernel too large after inlining");
    free(t);
}

Test(lang_bounds, imports_of_devices_and_fifos) {
    expect_bounded("import \"/dev/zero\";\nkernel k(p: *f32) { store(p, 1.0); }\n", 57,
                   "t.tile:1:8: error: cannot import '/dev/zero': not a regular file");
    char dir[] = "/tmp/tile-test-fifo-XXXXXX";
    cr_assert(mkdtemp(dir));
    char fifo[64], text[160];
    snprintf(fifo, sizeof fifo, "%s/f.tile", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    snprintf(text, sizeof text, "import \"%s\";\nkernel k(p: *f32) { store(p, 1.0); }\n", fifo);
    expect_bounded(text, strlen(text), "not a regular file"); /* no writer: a blocking open would hang */
    unlink(fifo);
    rmdir(dir);
}

Test(lang_bounds, import_over_the_size_cap) {
    char dir[] = "/tmp/tile-test-big-XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[64], text[160];
    snprintf(path, sizeof path, "%s/big.tile", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    static char line[1 << 16];
    memset(line, ' ', sizeof line);
    for (int i = 0; i < 17 * 16; i++) fwrite(line, 1, sizeof line, f); /* 17 MiB of blanks */
    fclose(f);
    snprintf(text, sizeof text, "import \"%s\";\nkernel k(p: *f32) { store(p, 1.0); }\n", path);
    expect_bounded(text, strlen(text), "larger than 16 MiB");
    unlink(path);
    rmdir(dir);
}

Test(lang_bounds, random_bytes) {
    size_t n = 16u << 20;
    unsigned char *b = malloc(n);
    cr_assert(b);
    uint64_t x = 0x243F6A8885A308D3ull;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        b[i] = (unsigned char)x;
    }
    expect_bounded((const char *)b, n, "error:");
    free(b);
}

Test(lang_bounds, too_many_tokens) {
    size_t n = 4u << 20;
    char *b = malloc(n);
    cr_assert(b);
    memset(b, ';', n);
    expect_bounded(b, n, "error: source too large: more than 1048576 tokens");
    free(b);
}

Test(lang_bounds, float_literal_overflow) {
    expect_diag("kernel k(p: *f32) { store(p, 1e99999); }\n",
                "t.tile:1:30: error: float literal '1e99999' is too large for f64\n"
                "  kernel k(p: *f32) { store(p, 1e99999); }\n"
                "                               ^\n");
}

Test(lang_diag, atomic_sem_scope) {
    expect_diag("kernel k(p: *f32) {\n    atomic_add(p, 1.0, sem=\"seq\");\n}\n",
                "t.tile:2:28: error: unknown memory ordering \"seq\" of 'atomic_add': expected \"acq_rel\", \"relaxed\", \"acquire\" or \"release\"\n"
                "      atomic_add(p, 1.0, sem=\"seq\");\n"
                "                             ^\n");
    expect_diag("kernel k(p: *i32) {\n    atomic_cas(p, 1, 2, scope=1);\n}\n",
                "t.tile:2:31: error: argument 'scope' of 'atomic_cas' must be a string such as scope=\"gpu\"\n"
                "      atomic_cas(p, 1, 2, scope=1);\n"
                "                                ^\n");
    expect_diag("kernel k(p: *i32) {\n    atomic_add(p, 1, \"relaxed\");\n}\n",
                "t.tile:2:22: error: a string (\"relaxed\") is not a value: strings are compile-time constants, compared with == and != "
                "(if ACT == \"relu\") or given as a keyword's value (sem=\"relaxed\")\n"
                "      atomic_add(p, 1, \"relaxed\");\n"
                "                       ^\n");
    expect_diag("kernel k(p: *f32) {\n    atomic_and(p, 1.0);\n}\n",
                "t.tile:2:16: error: 'atomic_and' is not supported on 'ptr<f32>' (it needs integers)\n"
                "      atomic_and(p, 1.0);\n"
                "                 ^\n");
    expect_diag("kernel k(p: *bf16) {\n    atomic_max(p, 1.0);\n}\n",
                "t.tile:2:16: error: 'atomic_max' is not supported on 'ptr<bf16>' (f16 and bf16 take atomic_add only)\n"
                "      atomic_max(p, 1.0);\n"
                "                 ^\n");
    expect_diag("fn f(x, y) { return x * y; }\nkernel k(p: *f32) {\n    store(p, f(1.0, y=\"a\"));\n}\n",
                "t.tile:1:23: error: strings only compare with == and != to strings (here 'f32' * 'string')\n"
                "  fn f(x, y) { return x * y; }\n"
                "                        ^\n"
                "t.tile:3:14: note: in this call of 'f'\n"
                "      store(p, f(1.0, y=\"a\"));\n"
                "               ^\n");
    expect_ok("kernel k(p: *i32) {\n    let o = atomic_cas(p, 1, 2, sem=\"relaxed\", scope=\"cta\");\n    debug_barrier();\n}\n");
}

/* Triton's floor division: `//` after an operand, with the rest of the line ending in `;`,
 * is reported where it stands (and read as `/`); other `//` stay comments. */
Test(lang_diag, floor_division_trap) {
    expect_diag("kernel k(x: *i32, n: i32) {\n    store(x, n // 4);\n}\n",
                "t.tile:2:16: error: '//' starts a comment; for integer division write '/' (it truncates toward zero, as Triton's '//' on integers does)\n"
                "      store(x, n // 4);\n"
                "                 ^\n");
    expect_diag("kernel k(x: *i32, n: i32) {\n    let q = (n + 1)//(2);\n    store(x, q);\n}\n",
                "t.tile:2:20: error: '//' starts a comment; for integer division write '/' (it truncates toward zero, as Triton's '//' on integers does)\n"
                "      let q = (n + 1)//(2);\n"
                "                     ^\n");
    expect_ok("kernel k(x: *i32, n: i32) // the doc\n{\n"
              "    let q = n; // 4 rows;\n"
              "    // a comment line;\n"
              "    if n > 2 // wide rows\n    { q = n / 4; }\n"
              "    store(x, q); // store it;\n"
              "    let r = [1, // first;\n"
              "             2];\n"
              "}\n");
}

/* Inside parentheses or brackets (an expression wrapped over lines, as black formats Triton code) a `//`
 * after an operand is the operator whatever the line ends with; a comment after a comma stays one. */
Test(lang_diag, floor_division_trap_wrapped) {
    expect_diag("kernel k(x: *i32, n: i32) {\n    let q = (n // 2 * 16\n             + 1);\n    store(x, q);\n}\n",
                "t.tile:2:16: error: '//' starts a comment; for integer division write '/' (it truncates toward zero, as Triton's '//' on integers does)\n"
                "      let q = (n // 2 * 16\n"
                "                 ^\n");
    expect_ok("kernel k(x: *i32, n: i32) {\n    let q = where(n > 0, // positive\n                  n, 0);\n    store(x, q);\n}\n");
    expect_diag("kernel k(x: *i32, n: i32) {\n    store(x, (n // -4));\n}\n",
                "t.tile:2:17: error: '//' starts a comment; for integer division write '/' (it truncates toward zero, as Triton's '//' on integers does)\n"
                "      store(x, (n // -4));\n"
                "                  ^\n");
}

/* Where C's precedence and Python's (Triton's) read the same text differently: a comparison as an operand of
 * `&`, `|`, `^` or of another comparison needs parentheses. */
Test(lang_diag, precedence_traps) {
    expect_diag("kernel k(x: *i32) {\n    let o = arange(0, 16);\n    store(x + o, where(o & 1 == 0, 1, 0));\n}\n",
                "t.tile:3:26: error: '&' of a comparison: here '==' binds tighter than '&' (as in C), in Python and Triton looser; "
                "write the parentheses you mean, as in '(a < n) & (b >= 0)' for masks or '(x & 1) == 0'\n"
                "      store(x + o, where(o & 1 == 0, 1, 0));\n"
                "                           ^\n");
    expect_diag("kernel k(x: *i32, n: i32) {\n    let o = arange(0, 16);\n    store(x + o, where(2 <= o < n, 1, 0));\n}\n",
                "t.tile:3:31: error: chained comparison 'a <= b < c': here one compares the other's i1 result (as in C), not Python's "
                "'a <= b and b < c'; write '(a <= b) && (b < c)'\n"
                "      store(x + o, where(2 <= o < n, 1, 0));\n"
                "                                ^\n");
    expect_diag("kernel k(x: *i32, n: i32) {\n    let o = arange(0, 16);\n    store(x + o, where(o | n != 0, 1, 0));\n}\n",
                "t.tile:3:26: error: '|' of a comparison: here '!=' binds tighter than '|' (as in C), in Python and Triton looser; "
                "write the parentheses you mean, as in '(a < n) | (b >= 0)' for masks or '(x | 1) != 0'\n"
                "      store(x + o, where(o | n != 0, 1, 0));\n"
                "                           ^\n");
    expect_ok("kernel k(x: *i32, n: i32) {\n    let o = arange(0, 16);\n"
              "    store(x + o, where(((o & 1) == 0) & (o < n) | (2 <= o) && o < n, 1, 0));\n}\n");
}

/* Triton's methods and attributes name what to write here */
Test(lang_diag, triton_methods) {
    Result r = compile("kernel k(x: *f32) {\n    let v = load(x);\n    store(x, v.to(f16) as f32);\n}\n");
    cr_expect(r.diags && strstr(r.diags, "t.tile:3:15: error: '.to': values have no methods or attributes here; write 'x as T' or "
                                         "'cast(x, T)' for Triton's x.to(T)\n"), "%s", r.diags);
    result_free(&r);
    r = compile("kernel k(x: *f32) {\n    let v = load(x + arange(0, 4));\n    let s = v.shape;\n}\n");
    cr_expect(r.diags && strstr(r.diags, "t.tile:3:14: error: '.shape': values have no methods or attributes here; write 'shape_of(x)' "
                                         "for Triton's x.shape"), "%s", r.diags);
    result_free(&r);
    /* attribute chains are one error each, naming the function form */
    expect_diag("kernel k(x: *f32) {\n    let v = load(x + arange(0, 4));\n    if v.dtype.is_floating() { store(x, v.shape[0] + v.numel); }\n"
                "    let b = x.dtype.element_ty;\n}\n",
                "t.tile:3:9: error: '.dtype.is_floating': values have no methods or attributes here; write 'is_float(T)' for Triton's "
                "T.is_floating() (T a type, dtype_of(x) or a value)\n"
                "      if v.dtype.is_floating() { store(x, v.shape[0] + v.numel); }\n"
                "          ^\n"
                "t.tile:3:42: error: '.shape': values have no methods or attributes here; write 'shape_of(x, d)' for Triton's x.shape[d] "
                "(a compile-time i32)\n"
                "      if v.dtype.is_floating() { store(x, v.shape[0] + v.numel); }\n"
                "                                           ^\n"
                "t.tile:3:55: error: '.numel': values have no methods or attributes here; write 'numel(x)' for Triton's x.numel "
                "(a compile-time i32)\n"
                "      if v.dtype.is_floating() { store(x, v.shape[0] + v.numel); }\n"
                "                                                        ^\n"
                "t.tile:4:14: error: '.dtype.element_ty': values have no methods or attributes here; write 'element_type(p)' for "
                "Triton's p.dtype.element_ty (p a pointer value)\n"
                "      let b = x.dtype.element_ty;\n"
                "               ^\n");
}

/* the shape and type queries' bad arguments, located at the argument */
Test(lang_diag, shape_and_type_queries) {
    const char *head = "kernel k(x: *f32, n: i32) {\n    let v = load(x + arange(0, 16));\n";
    const struct {
        const char *line, *want;
    } bad[] = {
        {"    let a = numel(f32);\n", "t.tile:3:19: error: 'numel' expects a tensor or a scalar, got a type\n"},
        {"    let a = rank(None);\n", "t.tile:3:18: error: 'rank' expects a tensor or a scalar, got None\n"},
        {"    let a = shape_of(v, 1);\n", "t.tile:3:25: error: dimension 1 is out of range for a tensor of shape [16]\n"},
        {"    let a = shape_of(n, 0);\n", "t.tile:3:25: error: dimension 0 is out of range for a scalar of shape []\n"},
        {"    let a = shape_of(v, n);\n", "t.tile:3:25: error: the dimension of 'shape_of' must be a compile-time integer\n"},
        {"    let a = element_type(v);\n",
         "t.tile:3:26: error: 'element_type' expects a pointer, got 'f32' (the type of a number is dtype_of(x))\n"},
        {"    let a = is_float(\"f32\");\n",
         "t.tile:3:22: error: 'is_float' expects a type (f16, dtype_of(x), a const holding one) or a value, got a string\n"},
        {"    let a = bitwidth([4, 4]);\n",
         "t.tile:3:22: error: 'bitwidth' expects a type (f16, dtype_of(x), a const holding one) or a value, got a list\n"},
        {"    static_assert(is_int(v), \"integers only\");\n", "t.tile:3:5: error: static_assert failed: integers only\n"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char text[512];
        snprintf(text, sizeof text, "%s%s}\n", head, bad[i].line);
        Result r = compile(text);
        cr_expect_null(r.m, "%s: compiled", bad[i].line);
        cr_expect(r.diags && !strncmp(r.diags, bad[i].want, strlen(bad[i].want)), "%s: got\n%s\nwant\n%s", bad[i].line, r.diags,
                  bad[i].want);
        result_free(&r);
    }
}

/* bitcast widths, pointer casts, located */
Test(lang_diag, casts) {
    expect_diag("kernel k(x: *f32) { let v = load(x); store(x, bitcast(v, f16) as f32); }\n",
                "t.tile:1:47: error: bitcast from 'f32' (32 bits) to 'f16' (16 bits) changes the width\n"
                "  kernel k(x: *f32) { let v = load(x); store(x, bitcast(v, f16) as f32); }\n"
                "                                                ^\n");
    expect_diag("kernel k(x: *f32) { let p = x as f32; }\n",
                "t.tile:1:31: error: cannot cast 'ptr<f32>' to 'f32' (pointers convert to and from integers and other pointer types)\n"
                "  kernel k(x: *f32) { let p = x as f32; }\n"
                "                                ^\n");
    expect_diag("kernel k(x: *f32) { let p = cast(x, i32, bitcast=true); }\n",
                "t.tile:1:29: error: bitcast from 'ptr<f32>' (64 bits) to 'i32' (32 bits) changes the width\n"
                "  kernel k(x: *f32) { let p = cast(x, i32, bitcast=true); }\n"
                "                              ^\n");
}

/* cache hints: unknown values and PTX's exclusive forms, located */
Test(lang_diag, cache_hints) {
    expect_diag("kernel k(x: *f32) { let v = load(x, cache_modifier=\".wb\"); }\n",
                "t.tile:1:52: error: unknown cache_modifier \".wb\" of 'load': expected \".ca\", \".cg\", \".cs\", \".lu\" or \".cv\"\n"
                "  kernel k(x: *f32) { let v = load(x, cache_modifier=\".wb\"); }\n"
                "                                                     ^\n");
    expect_diag("kernel k(x: *f32) { store(x, 1.0, eviction_policy=\"evict_later\"); }\n",
                "t.tile:1:51: error: unknown eviction_policy \"evict_later\" of 'store': expected \"evict_normal\", \"evict_first\", "
                "\"evict_last\", \"evict_unchanged\" or \"no_allocate\"\n"
                "  kernel k(x: *f32) { store(x, 1.0, eviction_policy=\"evict_later\"); }\n"
                "                                                    ^\n");
    expect_diag("kernel k(x: *f32) { let v = load(x, cache_modifier=\".cg\", volatile=true); }\n",
                "t.tile:1:29: error: 'load' takes one of cache_modifier, eviction_policy and volatile=true: PTX has no instruction "
                "with two of them\n"
                "  kernel k(x: *f32) { let v = load(x, cache_modifier=\".cg\", volatile=true); }\n"
                "                              ^\n");
    expect_diag("kernel k(x: *f32) { let v = load(x, cache_modifier=cg); }\n",
                "t.tile:1:52: error: argument 'cache_modifier' of 'load' must be a string such as cache_modifier=\".cg\"\n"
                "  kernel k(x: *f32) { let v = load(x, cache_modifier=cg); }\n"
                "                                                     ^\n");
}

/* static_assert: compile-time conditions, the message at the call */
Test(lang_diag, static_assert) {
    expect_diag("kernel k(x: *f32, const B: i32 = 48) { static_assert(B % 32 == 0, \"B must be a multiple of 32\"); }\n",
                "t.tile:1:40: error: static_assert failed: B must be a multiple of 32\n"
                "  kernel k(x: *f32, const B: i32 = 48) { static_assert(B % 32 == 0, \"B must be a multiple of 32\"); }\n"
                "                                         ^\n");
    expect_diag("kernel k(x: *f32, n: i32) { static_assert(n > 0); }\n",
                "t.tile:1:43: error: condition of 'static_assert' must be a compile-time constant (device_assert checks at run time)\n"
                "  kernel k(x: *f32, n: i32) { static_assert(n > 0); }\n"
                "                                            ^\n");
    expect_diag("kernel k(x: *f32) { device_print(x); }\n",
                "t.tile:1:21: error: 'device_print' expects a string literal prefix first, such as device_print(\"x\", x)\n"
                "  kernel k(x: *f32) { device_print(x); }\n"
                "                      ^\n");
}

/* Triton's max/min: the second argument is the axis; two values want maximum/minimum */
Test(lang_diag, max_min_axis) {
    expect_diag("kernel k(p: *f32) { let a = load(p + arange(0, 4)); store(p, max(a, load(p + 1))); }\n",
                "t.tile:1:69: error: the second argument of 'max' is the axis to reduce along (as Triton's tl.max); for the element-wise "
                "maximum of two values write 'maximum(a, b)'\n"
                "  kernel k(p: *f32) { let a = load(p + arange(0, 4)); store(p, max(a, load(p + 1))); }\n"
                "                                                                      ^\n");
    expect_diag("kernel k(p: *f32) { let a = load(p + arange(0, 8)); store(p + arange(0, 8), min(a, 0.5)); }\n",
                "t.tile:1:84: error: the second argument of 'min' is the axis to reduce along (as Triton's tl.min); for the element-wise "
                "minimum of two values write 'minimum(a, b)'\n"
                "  kernel k(p: *f32) { let a = load(p + arange(0, 8)); store(p + arange(0, 8), min(a, 0.5)); }\n"
                "                                                                                     ^\n");
    /* max(x, 0) reduces along axis 0, as tl.max(x, 0) */
    Result r = compile("kernel k(p: *f32) { let a = load(p + arange(0, 8)); store(p, max(a, 0)); }\n");
    cr_expect_not_null(r.m, "%s", r.diags);
    cr_expect(r.ir && strstr(r.ir, "reduce") && strstr(r.ir, "kind=max, axis=0"), "%s", r.ir ? r.ir : "");
    result_free(&r);
}

/* A compile-time value given to a const of a declared integer type must be exact in it: a float default
 * is not truncated (2.5 -> 2), a -D value is not wrapped (99999999999 -> 1215752191); a -D value's
 * errors point at the define, not at the default it replaces. */
Test(lang_diag, typed_const_values_exact) {
    expect_diag("kernel k(x: *f32, const B: i32 = 2.5) {\n    store(x + arange(0, B), 1.0);\n}\n",
                "t.tile:1:34: error: 'B' is i32, but its value 2.5 is not an integer\n"
                "  kernel k(x: *f32, const B: i32 = 2.5) {\n"
                "                                   ^\n");
    expect_diag("const N: u8 = 300;\nkernel k(x: *f32) {\n    store(x + arange(0, 16), N as f32);\n}\n",
                "t.tile:1:15: error: 'N' is u8, but its value 300 does not fit\n"
                "  const N: u8 = 300;\n"
                "                ^\n");
    expect_ok("const N: u8 = 255;\nconst M: i64 = 4.0;\nkernel k(x: *f32, const B: i32 = 16) {\n"
              "    store(x + arange(0, B), (N as f32) + (M as f32));\n}\n");
    const char *src = "kernel k(x: *f32, const B: i32 = 16) {\n    store(x + arange(0, B), 1.0);\n}\n";
    LangDefine big[] = {{"B", "99999999999"}}, half[] = {{"B", "2.5"}}, ty[] = {{"B", "f16"}};
    Result r = compile_src("t.tile", src, strlen(src), big, 1);
    cr_expect_null(r.m);
    cr_expect_str_eq(r.diags, "<-D B>:1:1: error: 'B' is i32, but its value 99999999999 does not fit\n  99999999999\n  ^\n");
    result_free(&r);
    r = compile_src("t.tile", src, strlen(src), half, 1);
    cr_expect_str_eq(r.diags, "<-D B>:1:1: error: 'B' is i32, but its value 2.5 is not an integer\n  2.5\n  ^\n");
    result_free(&r);
    r = compile_src("t.tile", src, strlen(src), ty, 1);
    cr_expect_str_eq(r.diags, "<-D B>:1:1: error: 'B' is i32, but its value is the type f16\n  f16\n  ^\n");
    result_free(&r);
}

/* Values that do not fit what takes them, from probe Z: a switch argument that is not true/false (exp(x, -5)
 * was exact=true), a typed file-level const given a type or a string (the declared type was ignored), an i1
 * const given 2, defines of launch metadata that are not integers (reported with no location), digit
 * separators that separate nothing, a float constant carried into an integer variable (silently truncated),
 * a const parameter declared a pointer. */
/* The caret stands under the column after UTF-8 text on the line (it counted bytes: 6 cells too far right here,
 * probe Z F16); the column itself counts bytes. */
Test(lang_diag, caret_after_utf8) {
    expect_diag("kernel k(x: *f32) { /* \xc3\xa9\xc3\xa9\xe6\x97\xa5\xe6\x9c\xac */ store(x, zz); }\n",
                "t.tile:1:47: error: unknown name 'zz'\n"
                "  kernel k(x: *f32) { /* \xc3\xa9\xc3\xa9\xe6\x97\xa5\xe6\x9c\xac */ store(x, zz); }\n"
                "                                          ^\n");
}

/* A lone "\r" ends a line as "\n" and "\r\n" do (a CR-only file was one line: every error on line 1, and a
 * `//` comment ran to the end of the file); a "\r\n" line shows without its "\r". */
Test(lang_diag, line_endings) {
    expect_diag("kernel k(x: *f32) { // c\r    let a = 1;\r    store(x, zz);\r}\r",
                "t.tile:3:14: error: unknown name 'zz'\n"
                "      store(x, zz);\n"
                "               ^\n");
    expect_diag("kernel k(x: *f32) {\r\n    let a = 1;\r\n    store(x, zz);\r\n}\r\n",
                "t.tile:3:14: error: unknown name 'zz'\n"
                "      store(x, zz);\n"
                "               ^\n");
    expect_diag("kernel k(x: *f32) {\r    static_assert(false, \"a\r\");\r}\r",
                "t.tile:2:26: error: unterminated string literal (a string ends on its line with '\"')\n"
                "      static_assert(false, \"a\n"
                "                           ^\n"
                "t.tile:3:1: error: unterminated string literal (a string ends on its line with '\"')\n"
                "  \");\n"
                "  ^\n");
}

/* A character the lexer reports is one error: the parser adds nothing about the same mistake (a stray '×'
 * was "unexpected byte 0xc3" and then "expected ';'", an unterminated string or comment one more error at the
 * next token or the end of the file); a non-ASCII character is named, with what to write for a look-alike. */
Test(lang_diag, stray_characters_one_error) {
    expect_diag("kernel k(x: *f32) {\n    let a = 2.0 \xc3\x97 3.0;\n    store(x, a);\n}\n",
                "t.tile:2:17: error: unexpected character U+00D7 (a multiplication sign): write '*'\n"
                "      let a = 2.0 \xc3\x97 3.0;\n"
                "                  ^\n");
    expect_diag("kernel k(x: *f32) {\n    let \xce\xb1 = 1.0;\n}\n",
                "t.tile:2:9: error: unexpected character '\xce\xb1' (U+03B1): outside strings and comments the source is ASCII (a "
                "name is letters, digits and '_')\n"
                "      let \xce\xb1 = 1.0;\n"
                "          ^\n");
    expect_diag("kernel k(x: *f32) {\n    store(x, \xe2\x88\x92" "1.0);\n}\n",
                "t.tile:2:14: error: unexpected character U+2212 (a minus sign): write '-'\n"
                "      store(x, \xe2\x88\x92" "1.0);\n"
                "               ^\n");
    expect_diag("kernel k(x: *f32, n: i32) {\n    let a = n > 0 ? 1.0 : 2.0;\n    store(x, a);\n}\n",
                "t.tile:2:19: error: there is no '?:' here: write 'a if cond else b' (where(cond, a, b) to choose per element)\n"
                "      let a = n > 0 ? 1.0 : 2.0;\n"
                "                    ^\n");
    expect_diag("import \"math.tile;\nkernel k(x: *f32) {\n}\n",
                "t.tile:1:8: error: unterminated string literal (a string ends on its line with '\"')\n"
                "  import \"math.tile;\n"
                "         ^\n");
    expect_diag("kernel k(x: *f32) {\n    store(x, 1.0); /* never closed\n}\n",
                "t.tile:2:20: error: unterminated comment: no '*/' closes this '/*'\n"
                "      store(x, 1.0); /* never closed\n"
                "                     ^\n");
    /* Python's comment and string quotes are read as meant after their error: no second one */
    expect_diag("kernel k(x: *f32) {\n    # scale it\n    store(x, zz);\n}\n",
                "t.tile:2:5: error: '#' does not start a comment here: write '//'\n"
                "      # scale it\n"
                "      ^\n");
    expect_diag("kernel k(x: *f32) {\n    static_assert(false, 'no');\n}\n",
                "t.tile:2:26: error: strings are written with double quotes here: \"...\"\n"
                "      static_assert(false, 'no');\n"
                "                           ^\n");
}

/* Statements written as in Python or C get one error each saying how they are written here, and the rest of the
 * kernel is still parsed (elif is read as else if, i++ as i += 1, a C for's body as a block): no cascade, and the
 * next mistake is reported too (they were "expected ';' after expression, found 'n'", "expected an expression,
 * found '+'", and a C for gave a second error at its '++'). */
Test(lang_diag, python_and_c_statements) {
    expect_diag("kernel k(x: *f32, n: i32) {\n    let i = 0;\n    for (let j = 0; j < n; j++) {\n        i++;\n    }\n"
                "    if n > 0 { i--; } elif n < 0 { store(x, zz); }\n}\n",
                "t.tile:4:10: error: '++': there is no increment operator here; write 'i += 1'\n"
                "          i++;\n"
                "           ^\n"
                "t.tile:6:17: error: '--': there is no decrement operator here; write 'i -= 1'\n"
                "      if n > 0 { i--; } elif n < 0 { store(x, zz); }\n"
                "                  ^\n"
                "t.tile:3:5: error: a 'for' loop is written 'for i in range(start, end, step) { ... }' here, not as C's "
                "'for (init; cond; step)'\n"
                "      for (let j = 0; j < n; j++) {\n"
                "      ^\n"
                "t.tile:6:23: error: 'elif' is written 'else if' here\n"
                "      if n > 0 { i--; } elif n < 0 { store(x, zz); }\n"
                "                        ^\n");
    expect_diag("kernel k(x: *f32, n: i32) {\n    if n > 0:\n        store(x, 1.0);\n}\n",
                "t.tile:2:13: error: expected '{' to open a block, found ':' (a block is in braces here, not after ':' and an indent)\n"
                "      if n > 0:\n"
                "              ^\n");
}

/* Triton's module prefixes get one error naming the plain name, then the parse goes on as if it was written so
 * (it was "'.exp': values have no methods", then "expected ')' after call arguments, found 'exp'"). */
Test(lang_diag, c_pointer_type) {
    expect_diag("kernel k(x: f32*, n: i32) {\n    store(x, 1.0);\n}\n",
                "t.tile:1:16: error: a pointer type is written before its pointee: '*f32', not 'f32*'\n"
                "  kernel k(x: f32*, n: i32) {\n"
                "                 ^\n");
}

/* None is a compile-time value: == / != None (and Python's `is None`, `is not None`) are compile-time i1s; it is no
 * run-time value, and no other operator takes it. */
Test(lang_diag, none_comparisons) {
    Result r = compile("fn f(a, b = None) {\n    if b is None { return a; }\n    return a + b;\n}\n"
                       "kernel k(x: *i32) {\n    let z = None;\n    static_assert(z == None && !(x is None) && (x is not None) && (z != 1) == true && (1 == z) == false, \"cmp\");\n"
                       "    store(x, f(1) + f(2, 3));\n}\n");
    cr_expect_not_null(r.m, "%s", r.diags);
    cr_expect(strstr(r.ir, "value=6"), "%s", r.ir);
    result_free(&r);
    expect_diag("kernel k(x: *f32) {\n    if x is 3 { store(x, 1.0); }\n}\n",
                "t.tile:2:13: error: expected 'None' after 'is' ('is' compares with None only; write == or !=), found '3'\n"
                "      if x is 3 { store(x, 1.0); }\n"
                "              ^\n");
    expect_diag("kernel k(x: *f32) {\n    if None < 3 { store(x, 1.0); }\n}\n",
                "t.tile:2:13: error: None only compares with == and != (here 'None' < 'i32')\n"
                "      if None < 3 { store(x, 1.0); }\n"
                "              ^\n");
    expect_diag("kernel k(x: *f32) {\n    let a = None;\n    store(x, a);\n}\n",
                "t.tile:3:14: error: 'None' cannot be used as a value\n"
                "      store(x, a);\n"
                "               ^\n");
}

/* An integer division or remainder of a run-time value by the constant 0 is an error at the operator (it compiled
 * to a store of an undefined value; probe C C0b); by a run-time zero it stays the hardware's business. */
Test(lang_diag, division_by_constant_zero) {
    expect_diag("kernel k(x: *i32, n: i32) {\n    store(x, n % 0 + n / (4 - 4));\n}\n",
                "t.tile:2:16: error: integer remainder by zero (the divisor is the constant 0)\n"
                "      store(x, n % 0 + n / (4 - 4));\n"
                "                 ^\n"
                "t.tile:2:24: error: integer division by zero (the divisor is the constant 0)\n"
                "      store(x, n % 0 + n / (4 - 4));\n"
                "                         ^\n");
}

/* Triton's Python spellings get one error each saying how they are written here, and the file is read on as if
 * they had been (no cascade): a decorator, and/or/not/True, float("-inf"), **, a method's arguments, math.inf, and
 * the `//` of a loop header or of an expression that goes on on the next line (it was silently `n + 1`). */
Test(lang_diag, python_spellings) {
    expect_diag(
        "@triton.jit\n"
        "kernel k(x: *f32, n: i32) {\n"
        "    let r = arange(0, 16);\n"
        "    let m = r < n and not (r > 2) or True;\n"
        "    let v = load(x + r, m, float(\"-inf\")) ** 2;\n"
        "    store(x + r, v.to(f32) + math.inf, m);\n"
        "    let h = n // 2\n"
        "        + 1;\n"
        "    while h < n // 2 {\n"
        "        h += 1;\n"
        "    }\n"
        "}\n",
        "t.tile:1:2: error: '@triton.jit': a kernel needs no decorator here: 'kernel NAME(params) { ... }' (launch settings are attributes such as @num_warps(4); tuning configurations are @config(...))\n"
        "  @triton.jit\n"
        "   ^\n"
        "t.tile:4:19: error: 'and' is written '&&' here (Python's 'and')\n"
        "      let m = r < n and not (r > 2) or True;\n"
        "                    ^\n"
        "t.tile:4:23: error: 'not' is written '!' here (Python's 'not')\n"
        "      let m = r < n and not (r > 2) or True;\n"
        "                        ^\n"
        "t.tile:4:35: error: 'or' is written '||' here (Python's 'or')\n"
        "      let m = r < n and not (r > 2) or True;\n"
        "                                    ^\n"
        "t.tile:4:38: error: 'True' is written 'true' here (Python's 'True')\n"
        "      let m = r < n and not (r > 2) or True;\n"
        "                                       ^\n"
        "t.tile:5:28: error: 'float(...)' of a string: write the float here (-1.0 / 0.0 for minus infinity, 0.0 / 0.0 for NaN)\n"
        "      let v = load(x + r, m, float(\"-inf\")) ** 2;\n"
        "                             ^\n"
        "t.tile:5:43: error: '**': there is no power operator here; write pow(x, y) (x * x for a square)\n"
        "      let v = load(x + r, m, float(\"-inf\")) ** 2;\n"
        "                                            ^\n"
        "t.tile:6:19: error: '.to': values have no methods or attributes here; write 'x as T' or 'cast(x, T)' for Triton's x.to(T)\n"
        "      store(x + r, v.to(f32) + math.inf, m);\n"
        "                    ^\n"
        "t.tile:6:30: error: 'math.inf': there is no 'math' module here; write the float (1.0 / 0.0)\n"
        "      store(x + r, v.to(f32) + math.inf, m);\n"
        "                               ^\n"
        "t.tile:7:15: error: '//' starts a comment; for integer division write '/' (it truncates toward zero, as Triton's '//' on integers does)\n"
        "      let h = n // 2\n"
        "                ^\n"
        "t.tile:9:17: error: '//' starts a comment; for integer division write '/' (it truncates toward zero, as Triton's '//' on integers does)\n"
        "      while h < n // 2 {\n"
        "                  ^\n");
    Result r = compile("kernel k(a: **f32, n: i32) {\n    let and = 2;\n    let not = and * 2;\n    store(load(a), cast(not, f32));\n}\n");
    cr_expect_not_null(r.m, "a pointer to pointers, and Python's words as names, compile: %s", r.diags);
    result_free(&r);
    r = compile("kernel k(x: *i32, a: i32, b: i32) {\n    let t = a // first part\n        + b;\n    store(x, t);\n}\n");
    cr_expect_not_null(r.m, "a comment in words before a line that goes on stays a comment: %s", r.diags);
    result_free(&r);
}

Test(lang_diag, triton_module_prefix) {
    expect_diag("kernel k(x: *f32) {\n    store(x, tl.math.exp(1.0) + tl.sqrt(2.0));\n}\n",
                "t.tile:2:14: error: 'tl.math.exp': there is no 'tl' module here; write 'exp' (the built-ins are plain names, "
                "docs/language.md)\n"
                "      store(x, tl.math.exp(1.0) + tl.sqrt(2.0));\n"
                "               ^\n"
                "t.tile:2:33: error: 'tl.sqrt': there is no 'tl' module here; write 'sqrt' (the built-ins are plain names, "
                "docs/language.md)\n"
                "      store(x, tl.math.exp(1.0) + tl.sqrt(2.0));\n"
                "                                  ^\n");
    expect_diag("kernel k(x: *f32) {\n    store(x, cast(1.5, tl.bfloat16) as f32);\n}\n",
                "t.tile:2:24: error: 'tl.bfloat16': there is no 'tl' module here; the type is 'bf16'\n"
                "      store(x, cast(1.5, tl.bfloat16) as f32);\n"
                "                         ^\n");
    expect_diag("kernel k(x: *f32, B: tl.constexpr) {\n    store(x, 1.0);\n}\n",
                "t.tile:1:22: error: 'tl.constexpr': a compile-time parameter is written 'const NAME: T' (or 'const NAME = default')\n"
                "  kernel k(x: *f32, B: tl.constexpr) {\n"
                "                       ^\n");
}

Test(lang_diag, combine_returning_a_tensor) {
    /* the message named the element type only: "returns 'i32' where its operands are i32" (probe Z F14) */
    expect_diag("fn f(a, b) { return arange(0, 4); }\nkernel k(x: *f32) { let r = reduce(arange(0, 16), 0, f); }\n",
                "t.tile:2:29: error: combine function 'f' returns 'tensor<4xi32>' where its operands are i32\n"
                "  kernel k(x: *f32) { let r = reduce(arange(0, 16), 0, f); }\n"
                "                              ^\n");
}

Test(lang_diag, values_that_do_not_fit) {
    expect_diag("kernel k(x: *f32) {\n    store(x, exp(load(x), -5));\n}\n",
                "t.tile:2:27: error: argument 'exact' of 'exp' is a switch (true or false), got -5\n"
                "      store(x, exp(load(x), -5));\n"
                "                            ^\n");
    expect_diag("const B: i32 = f16;\nkernel k(x: *B) { }\n",
                "t.tile:1:16: error: 'B' is i32, but its value is the type f16\n"
                "  const B: i32 = f16;\n"
                "                 ^\n");
    expect_diag("const A: i32 = \"x\";\nkernel k(x: *f32) { store(x, A as f32); }\n",
                "t.tile:1:16: error: 'A' is i32, but its value is the string \"x\"\n"
                "  const A: i32 = \"x\";\n"
                "                 ^\n");
    const char *src = "const G: i32 = 4;\nconst FL: i1 = true;\nkernel k(x: *f32) { if FL { store(x, G as f32); } }\n";
    LangDefine g[] = {{"G", "relu"}}, fl[] = {{"FL", "2"}}, nw[] = {{"num_warps", "f16"}};
    Result r = compile_src("t.tile", src, strlen(src), g, 1);
    cr_expect_str_eq(r.diags, "<-D G>:1:1: error: 'G' is i32, but its value is the string \"relu\"\n  relu\n  ^\n");
    result_free(&r);
    r = compile_src("t.tile", src, strlen(src), fl, 1);
    cr_expect_str_eq(r.diags, "<-D FL>:1:1: error: 'FL' is i1, but its value 2 is not 0 or 1\n  2\n  ^\n");
    result_free(&r);
    r = compile_src("t.tile", src, strlen(src), nw, 1);
    cr_expect_str_eq(r.diags, "<-D num_warps>:1:1: error: num_warps must be a compile-time integer\n  f16\n  ^\n");
    result_free(&r);
    static const char *const bad_literals[] = {"0x_", "1__0", "1_", "1.5_", "0b_"};
    for (int i = 0; i < 5; i++) {
        char text[128], want[256];
        snprintf(text, sizeof text, "kernel k(x: *f32) { store(x, (%s) as f32); }\n", bad_literals[i]);
        snprintf(want, sizeof want, "t.tile:1:31: error: invalid %s literal '%s'", strchr(bad_literals[i], '.') ? "float" : "integer",
                 bad_literals[i]);
        Result rr = compile_src("t.tile", text, strlen(text), NULL, 0);
        cr_expect(rr.diags && strstr(rr.diags, want), "%s: %s", bad_literals[i], rr.diags);
        result_free(&rr);
    }
    expect_ok("kernel k(x: *f32) { store(x, (0x_ff + 1_000 + 0b_1) as f32 + 1_0.2_5); }\n");
    expect_diag("kernel k(p: *i32, n: i32) {\n    let a = 0;\n    for i in range(0, n) { a = 1.5; }\n    store(p, a);\n}\n",
                "t.tile:3:28: error: loop-carried variable 'a' is i32, but is given the float 1.5 in the loop (as in Triton, a variable "
                "keeps its type: start it as a float, or cast)\n"
                "      for i in range(0, n) { a = 1.5; }\n"
                "                             ^\n"
                "t.tile:3:5: note: the loop\n"
                "      for i in range(0, n) { a = 1.5; }\n"
                "      ^\n");
    expect_diag("kernel k(p: *i32, n: i32) {\n    let a = load(p);\n    if n > 0 { a = 2.5; }\n    store(p, a);\n}\n",
                "t.tile:3:5: error: 'a' is i32 in one branch of 'if' and the float 2.5 in the other (a variable keeps its type: "
                "cast, or start it as a float)\n"
                "      if n > 0 { a = 2.5; }\n"
                "      ^\n");
    expect_ok("kernel k(p: *f32, n: i32) {\n    let a = 0.0;\n    for i in range(0, n) { a = 2; }\n    store(p, a);\n}\n");
    expect_diag("kernel k(const x: *f32) { }\n",
                "t.tile:1:16: error: const parameter 'x' cannot be a pointer: compile-time values are numbers, types and strings\n"
                "  kernel k(const x: *f32) { }\n"
                "                 ^\n");
    /* @config may set a file-level const: a define sets it */
    expect_ok("const ACT = \"none\";\n@config(ACT=\"relu\")\n@config(ACT=\"none\")\nkernel k(x: *f32) {\n"
              "    if ACT == \"relu\" { store(x, 1.0); }\n}\n");
}

/* A tensor descriptor where a value is expected is named as one (it is a record, not a user tuple). */
Test(lang_diag, descriptor_as_value) {
    expect_diag("kernel k(x: *f32, n: i32) {\n    let d = make_tensor_descriptor(x, [n], [1], [16]);\n    store(x, d);\n}\n",
                "t.tile:3:14: error: a tensor descriptor cannot be used as a value: load or store through it "
                "(load_tensor_descriptor(d, offsets), store_tensor_descriptor(d, offsets, value))\n"
                "      store(x, d);\n"
                "               ^\n");
}

/* Triton's hints check their values against the input's rank and type. */
Test(lang_diag, hints) {
    expect_diag("kernel k(p: *f32) {\n    let a = max_contiguous(zeros([16, 16], i32) + program_id(0), 16);\n}\n",
                "t.tile:2:66: error: 'max_contiguous' takes one value per dimension of its input: 2 for a tensor of shape "
                "[16, 16], got 1\n"
                "      let a = max_contiguous(zeros([16, 16], i32) + program_id(0), 16);\n"
                "                                                                   ^\n");
    expect_diag("kernel k(p: *f32) {\n    let a = multiple_of(program_id(0), 0);\n}\n",
                "t.tile:2:40: error: the values of 'multiple_of' must be between 1 and 2^30\n"
                "      let a = multiple_of(program_id(0), 0);\n"
                "                                         ^\n");
    expect_diag("kernel k(p: *f32) {\n    let a = multiple_of(zeros([16], f32), 16);\n}\n",
                "t.tile:2:25: error: 'multiple_of' is a hint about integers and pointers, got 'f32'\n"
                "      let a = multiple_of(zeros([16], f32), 16);\n"
                "                          ^\n");
    expect_diag("kernel k(p: *f32) {\n    assume(program_id(0));\n}\n",
                "t.tile:2:12: error: 'assume' expects a condition (i1), got 'i32'\n"
                "      assume(program_id(0));\n"
                "             ^\n");
    expect_diag("kernel k(p: *f32) {\n    assume(1 > 2);\n}\n",
                "t.tile:2:12: error: 'assume' of a condition that is false at compile time\n"
                "      assume(1 > 2);\n"
                "             ^\n");
    expect_ok("kernel k(p: *f32, n: i32) {\n    let a = multiple_of(zeros([16, 16], i32) + n, 16);\n"
              "    let b = max_constancy(a, [16, 1]);\n    let q = multiple_of(p, 16);\n    assume(n > 0);\n    assume(true);\n"
              "    store(q + b, 1.0);\n}\n");
}

/* static_range needs compile-time bounds and has no loop to break out of. */
Test(lang_diag, static_range) {
    expect_diag("kernel k(x: *f32, n: i32) {\n    for i in static_range(0, n) { }\n}\n",
                "t.tile:2:30: error: 'static_range' bounds must be compile-time integers (use 'range' for a run-time loop)\n"
                "      for i in static_range(0, n) { }\n"
                "                               ^\n");
    expect_diag("kernel k(x: *f32) {\n    for i in static_range(10) { if i > 3 { continue; } }\n}\n",
                "t.tile:2:44: error: 'continue' inside a 'static_range' loop is not supported (its body is unrolled)\n"
                "      for i in static_range(10) { if i > 3 { continue; } }\n"
                "                                             ^\n");
    expect_diag("kernel k(x: *f32) {\n    for i in static_range(0, 100000) { }\n}\n",
                "t.tile:2:5: error: 'static_range' unrolls 100000 iterations, more than 4096: use 'range'\n"
                "      for i in static_range(0, 100000) { }\n"
                "      ^\n");
    expect_diag("kernel k(x: *f32) {\n    for i in static_range(0, 4) { return; }\n}\n",
                "t.tile:2:35: error: 'return' inside a 'for' loop is not supported\n"
                "      for i in static_range(0, 4) { return; }\n"
                "                                    ^\n");
}

/* range()'s keywords are Triton's tl.range's, compile-time; static_range takes none. */
Test(lang_diag, range_keywords) {
    expect_diag("kernel k(x: *f32, n: i32) {\n    for i in range(0, n, num_stage=2) { }\n}\n",
                "t.tile:2:36: error: 'range' has no argument 'num_stage' (its keywords: num_stages, loop_unroll_factor, "
                "flatten, disallow_acc_multi_buffer, warp_specialize)\n"
                "      for i in range(0, n, num_stage=2) { }\n"
                "                                     ^\n");
    expect_diag("kernel k(x: *f32, n: i32) {\n    for i in range(0, n, num_stages=n) { }\n}\n",
                "t.tile:2:37: error: 'range' argument 'num_stages' must be a compile-time integer\n"
                "      for i in range(0, n, num_stages=n) { }\n"
                "                                      ^\n");
    expect_diag("kernel k(x: *f32) {\n    for i in static_range(0, 4, num_stages=2) { }\n}\n",
                "t.tile:2:44: error: 'static_range' takes no keyword arguments\n"
                "      for i in static_range(0, 4, num_stages=2) { }\n"
                "                                             ^\n");
    expect_diag("kernel k(x: *f32, n: i32) {\n    for i in range(num_stages=2, 0, n) { }\n}\n",
                "t.tile:2:34: error: a bound of 'range' after its keyword arguments\n"
                "      for i in range(num_stages=2, 0, n) { }\n"
                "                                   ^\n");
    expect_ok("kernel k(x: *f32, n: i32) {\n    for i in range(n, num_stages=0, flatten=true) { }\n"
              "    for i in range(0, n, 2, disallow_acc_multi_buffer=false, loop_unroll_factor=4) { }\n}\n");
}

/* inline_asm_elementwise checks its constraints against its arguments and result (a mismatch in
 * the count crashed LLVM). */
Test(lang_diag, inline_asm_constraints) {
    expect_diag("kernel k(o: *i32) {\n    let c = arange(0, 32);\n"
                "    store(o + c, inline_asm_elementwise(\"mov.b32 $0, $1;\", \"=r,r,r\", [c], i32));\n}\n",
                "t.tile:3:70: error: 'inline_asm_elementwise' has 1 argument, but its constraints \"=r,r,r\" name 2 inputs\n"
                "      store(o + c, inline_asm_elementwise(\"mov.b32 $0, $1;\", \"=r,r,r\", [c], i32));\n"
                "                                                                       ^\n");
    expect_diag("kernel k(o: *i32) {\n    let c = arange(0, 32);\n"
                "    store(o + c, inline_asm_elementwise(\"mov.b32 $0, $1;\", \"=r,l\", [c], i32));\n}\n",
                "t.tile:3:69: error: argument 0 is i32, 32 bits, but its constraint is a 64-bit register (i64): convert it first\n"
                "      store(o + c, inline_asm_elementwise(\"mov.b32 $0, $1;\", \"=r,l\", [c], i32));\n"
                "                                                                      ^\n");
    expect_diag("kernel k(o: *i32) {\n    let c = arange(0, 32);\n"
                "    store(o + c, inline_asm_elementwise(\"mov.b32 $0, $1;\", \"=r,q\", [c], i32));\n}\n",
                "t.tile:3:60: error: 'inline_asm_elementwise' constraints: 'q' is not one of h, r, l, f, d or the digit of an "
                "output (0 to 0)\n"
                "      store(o + c, inline_asm_elementwise(\"mov.b32 $0, $1;\", \"=r,q\", [c], i32));\n"
                "                                                             ^\n");
    expect_diag("kernel k(o: *i32) {\n    let c = arange(0, 32);\n"
                "    store(o + c, inline_asm_elementwise(\"mov.b32 $0, $1;\", \"=h,r\", [c], i32));\n}\n",
                "t.tile:3:73: error: the result is i32, 32 bits, but its constraint is a 16-bit register (i16)\n"
                "      store(o + c, inline_asm_elementwise(\"mov.b32 $0, $1;\", \"=h,r\", [c], i32));\n"
                "                                                                          ^\n");
}

/* With pack, the constraints name each result's and argument's registers as Triton packs them. */
Test(lang_diag, inline_asm_pack) {
    expect_diag("kernel k(o: *f32, x: *i8) {\n    let c = arange(0, 32);\n"
                "    store(o + c, inline_asm_elementwise(\"cvt.rn.f32.s8 $0, $1;\", \"=r,r\", [load(x + c)], f32, pack=4));\n}\n",
                "t.tile:3:66: error: 'inline_asm_elementwise' constraints \"=r,r\" name 1 output, but 1 result at pack=4 takes 4 registers\n"
                "      store(o + c, inline_asm_elementwise(\"cvt.rn.f32.s8 $0, $1;\", \"=r,r\", [load(x + c)], f32, pack=4));\n"
                "                                                                   ^\n");
    expect_diag("kernel k(o: *f16, x: *f16) {\n    let c = arange(0, 32);\n"
                "    store(o + c, inline_asm_elementwise(\"mov.b32 $0, $1;\", \"=r,h\", [load(x + c)], f16, pack=2));\n}\n",
                "t.tile:3:69: error: argument 0 is f16, packed at pack=2 into 32-bit registers, but its constraint is a 16-bit register (i16)\n"
                "      store(o + c, inline_asm_elementwise(\"mov.b32 $0, $1;\", \"=r,h\", [load(x + c)], f16, pack=2));\n"
                "                                                                      ^\n");
    expect_diag("kernel k(o: *f16, x: *f16) {\n    let c = arange(0, 32);\n"
                "    store(o + c, inline_asm_elementwise(\"mov.b32 $0, $1;\", \"=r,r\", [load(x + c)], f16, pack=3));\n}\n",
                "t.tile:3:93: error: pack=3 does not fill whole registers of f16 results (2 a register)\n"
                "      store(o + c, inline_asm_elementwise(\"mov.b32 $0, $1;\", \"=r,r\", [load(x + c)], f16, pack=3));\n"
                "                                                                                              ^\n");
    expect_diag("kernel k(o: *f16, x: *f16) {\n    let c = arange(0, 32);\n"
                "    let (a, b) = inline_asm_elementwise(\"mov.b16 $0, $2; mov.b16 $1, $2;\", \"=h,=h,h\", [load(x + c)], (f16, f16), false);\n"
                "    store(o + c, a + b);\n}\n",
                "t.tile:3:114: error: an 'inline_asm_elementwise' with side effects (is_pure=false) returns one result\n"
                "      let (a, b) = inline_asm_elementwise(\"mov.b16 $0, $2; mov.b16 $1, $2;\", \"=h,=h,h\", [load(x + c)], (f16, f16), false);\n"
                "                                                                                                                   ^\n");
}

/* The assembly's $ references and the clobbers are checked at the call: LLVM aborted the process on a bad
 * $N (past the operands, $x, a trailing $, ${0 unclosed) and crashed on an unterminated clobber. */
Test(lang_diag, inline_asm_operand_references) {
    static const char *const bad[][2] = {
        {"mov.b32 $0, $7;", "'$7' at offset 12 names operand 7, but there are 2 ($0 to $1)"},
        {"mov.b32 $0, $x;", "'$x' at offset 12: an operand is $N or ${N} with N from 0 to 1 ($$ is a '$')"},
        {"mov.b32 $0, $", "'$' at offset 12: an operand is $N or ${N} with N from 0 to 1"},
        {"mov.b32 ${0, $1;", "'${0,' at offset 8: ${N} takes no modifier and needs its '}'"},
        {"mov.b32 ${0:x}, $1;", "'${0:' at offset 8: ${N} takes no modifier and needs its '}'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char src[256];
        snprintf(src, sizeof src, "kernel k(o: *i32) {\n    let c = arange(0, 32);\n    store(o + c, inline_asm_elementwise(\"%s\", \"=r,r\", [c], i32));\n}\n",
                 bad[i][0]);
        Result r = compile(src);
        cr_expect_null(r.m, "case %zu compiled", i);
        cr_expect(strstr(r.diags, "t.tile:3:41: error: 'inline_asm_elementwise' assembly: ") && strstr(r.diags, bad[i][1]), "case %zu: %s", i,
                  r.diags);
        result_free(&r);
    }
    expect_diag("kernel k(o: *i32) {\n    let c = arange(0, 32);\n"
                "    store(o + c, inline_asm_elementwise(\"mov.b32 $0, $1;\", \"=r,r,~{\", [c], i32));\n}\n",
                "t.tile:3:60: error: 'inline_asm_elementwise' constraints: the clobber '~{' is not of the form ~{name}\n"
                "      store(o + c, inline_asm_elementwise(\"mov.b32 $0, $1;\", \"=r,r,~{\", [c], i32));\n"
                "                                                             ^\n");
    expect_ok("kernel k(o: *i32) {\n    let c = arange(0, 32);\n"
              "    store(o + c, inline_asm_elementwise(\"mov.b32 ${0}, $1; // $$\", \"=r,r,~{memory}\", [c], i32));\n}\n");
}

/* A weak integer constant takes the other operand's type; one that fits it neither as a signed nor as an
 * unsigned number is an error (x_i32 + 5000000000 wrapped to x + 705032704, store(i8p, 1000) stored -24). */
Test(lang_diag, constant_does_not_fit) {
    expect_diag("kernel k(a: *i32) {\n    let i = arange(0, 16);\n    store(a + i, load(a + i) + 5000000000);\n}\n",
                "t.tile:3:30: error: the constant 5000000000 does not fit 'i32', the type it takes here (cast the other "
                "operand, or the constant with 'as', to say which is meant)\n"
                "      store(a + i, load(a + i) + 5000000000);\n"
                "                               ^\n");
    expect_diag("kernel k(b: *i8) {\n    store(b, 1000);\n}\n",
                "t.tile:2:14: error: the constant 1000 does not fit 'i8', the type it takes here (cast the other operand, or "
                "the constant with 'as', to say which is meant)\n"
                "      store(b, 1000);\n"
                "               ^\n");
    /* a literal past 2^63 is an unsigned constant: the message shows the value written (it showed -9223372036854775808) */
    expect_diag("kernel k(b: *i32) {\n    store(b, 9223372036854775808);\n}\n",
                "t.tile:2:14: error: the constant 9223372036854775808 does not fit 'i32', the type it takes here (cast the other "
                "operand, or the constant with 'as', to say which is meant)\n"
                "      store(b, 9223372036854775808);\n"
                "               ^\n");
    /* bit patterns of the width are fine either way; an explicit cast says what is meant */
    expect_ok("kernel k(a: *i32, b: *i8, u: *u32, w: *i64) {\n    let x = load(a);\n    store(a, x & 0xFFFFFFFF);\n"
              "    store(b, 255);\n    store(b, -128);\n    store(u, load(u) + -1);\n    store(w, (x as i64) + 5000000000);\n"
              "    store(b, 1000 as i8);\n}\n");
}

/* Compile-time integer arithmetic past i64 is an error at the operator (9223372036854775807 + 1 and
 * -(-9223372036854775808) wrapped to i64's least value, stored as such); i32 constants lift to i64 for
 * -2147483648 / -1 as for + - * (it wrapped to -2147483648); u64 arithmetic wraps, as hashes want. */
Test(lang_diag, constant_overflow) {
    expect_diag("kernel k(a: *i64) {\n    store(a, 9223372036854775807 + 1);\n}\n",
                "t.tile:2:34: error: integer overflow in a constant expression: 9223372036854775807 + 1 does not fit in i64\n"
                "      store(a, 9223372036854775807 + 1);\n"
                "                                   ^\n");
    expect_diag("kernel k(a: *i64) {\n    store(a, -(-9223372036854775808));\n}\n",
                "t.tile:2:14: error: integer overflow in a constant expression: -(-9223372036854775808) does not fit in i64\n"
                "      store(a, -(-9223372036854775808));\n"
                "               ^\n");
    expect_diag("kernel k(a: *i64) {\n    store(a, (-9223372036854775807 - 1) / -1);\n}\n",
                "t.tile:2:41: error: integer overflow in a constant expression: -9223372036854775808 / -1 does not fit in i64\n"
                "      store(a, (-9223372036854775807 - 1) / -1);\n"
                "                                          ^\n");
    Result r = compile("kernel k(a: *i64, u: *u64) {\n    store(a, -2147483648 / -1);\n    store(a + 1, -(-2147483648));\n"
                       "    store(u, 0x9E3779B97F4A7C15 * 31);\n}\n");
    cr_assert_not_null(r.m, "%s", r.diags);
    cr_expect(strstr(r.ir, "const {value=2147483648} : i64") && !strstr(r.ir, "-2147483648"), "%s", r.ir);
    cr_expect(strstr(r.ir, "const {value=2934021998537672331} : u64"), "%s", r.ir);
    result_free(&r);
}

/* A parameter name given twice is an error in a fn as in a kernel (a fn's second 'a' hid the first, so
 * f(1.0, 2.0) returned 2.0 without a word); one error each. */
Test(lang_diag, duplicate_parameter) {
    expect_diag("fn f(a, a) { return a; }\nkernel k(x: *f32) {\n    store(x, f(1.0, 2.0));\n}\n",
                "t.tile:1:9: error: duplicate parameter 'a'\n"
                "  fn f(a, a) { return a; }\n"
                "          ^\n");
    expect_diag("kernel k(x: *f32, n: i32, x: *f32) {\n}\n",
                "t.tile:1:27: error: duplicate parameter 'x'\n"
                "  kernel k(x: *f32, n: i32, x: *f32) {\n"
                "                            ^\n");
}

/* load's other fills the lanes the mask turns off: given without a mask it was dropped silently (every lane
 * loaded, out of bounds too, where padding was meant); Triton refuses it, so does this. */
Test(lang_diag, load_other_without_mask) {
    expect_diag("kernel k(x: *f32) {\n    let o = arange(0, 64);\n    store(x + o, load(x + o, other=0.0));\n}\n",
                "t.tile:3:36: error: 'other' of 'load' without a mask: it fills the lanes the mask turns off, so with no mask it "
                "does nothing (give the mask: load(ptr, mask, other), as Triton requires)\n"
                "      store(x + o, load(x + o, other=0.0));\n"
                "                                     ^\n");
    expect_ok("kernel k(x: *f32) {\n    let o = arange(0, 64);\n    store(x + o, load(x + o, true, 1.0));\n"
              "    store(x + o, load(x + o, None, None));\n}\n");
}

/* A @config's launch metadata is checked when the kernel compiles, as @num_warps is (@config(num_warps=3)
 * compiled, and only tile tune failed when it reached that configuration). */
Test(lang_diag, config_launch_values) {
    expect_diag("@config(num_warps=3)\nkernel k(x: *f32) {\n}\n",
                "t.tile:1:19: error: num_warps must be 1, 2, 4, 8, 16 or 32, got 3\n"
                "  @config(num_warps=3)\n"
                "                    ^\n");
    expect_diag("@config(num_warps=4, num_stages=17)\nkernel k(x: *f32) {\n}\n",
                "t.tile:1:33: error: num_stages must be between 0 and 16, got 17\n"
                "  @config(num_warps=4, num_stages=17)\n"
                "                                  ^\n");
    expect_diag("@config(pingpong=2)\nkernel k(x: *f32) {\n}\n",
                "t.tile:1:18: error: pingpong must be 0 or 1, got 2\n"
                "  @config(pingpong=2)\n"
                "                   ^\n");
    expect_ok("@config(num_warps=8, num_stages=4, warp_specialize=1, pingpong=0, overlap=1)\nkernel k(x: *f32) {\n}\n");
}

/* where() with a compile-time condition has the type and shape the select would have with a run-time one:
 * where(true, x_f16, y_f32) is f32 (it was x itself, f16), where(true, s, t) broadcasts the scalar s. */
Test(lang_diag, where_with_a_constant_condition) {
    expect_ok("kernel k(o: *f32, x: *f16, n: f32) {\n    let i = arange(0, 16);\n    let v = load(x + i);\n"
              "    store(o + i, where(true, v, load(o + i)));\n    store(o + i, where(1 > 0, n, load(o + i)));\n"
              "    store(x + i, where(false, 1.0, v));\n}\n");
}

/* Attributes: one of each (but @config), @tune_key of integer parameters only; a bad -D num_warps is
 * reported at the define, not at the source's @num_warps (which was right). */
Test(lang_diag, attribute_checks) {
    expect_diag("@tune_key(x)\nkernel k(x: *f32, n: i32) {\n    store(x, 1.0);\n}\n",
                "t.tile:1:11: error: '@tune_key' names 'x', which is not an integer parameter (the key is sizes)\n"
                "  @tune_key(x)\n"
                "            ^\n");
    expect_diag("@num_warps(4) @num_warps(8)\nkernel k(x: *f32) {\n    store(x, 1.0);\n}\n",
                "t.tile:1:16: error: '@num_warps' is given twice\n"
                "  @num_warps(4) @num_warps(8)\n"
                "                 ^\n"
                "t.tile:1:2: note: the first\n"
                "  @num_warps(4) @num_warps(8)\n"
                "   ^\n");
    expect_ok("@config(BLOCK=64) @config(BLOCK=128)\n@tune_key(n)\nkernel k(x: *f32, n: i32, const BLOCK: i32 = 64) {\n"
              "    store(x + arange(0, BLOCK), 1.0);\n}\n");
    LangDefine defs[] = {{"num_warps", "3"}};
    bool bad;
    char *e = compile_defines("a", defs, 1, &bad);
    cr_expect(e && strstr(e, "<-D num_warps>:1:1: error: num_warps must be 1, 2, 4, 8, 16 or 32, got 3"), "%s", e ? e : "(none)");
    free(e);
}

/* A kernel called from a kernel is named as such (it was "unknown name"); permute's errors name permute. */
Test(lang_diag, kernel_call_and_permute_names) {
    expect_diag("kernel g(x: *f32) {\n    store(x, 1.0);\n}\nkernel k(x: *f32) {\n    g(x);\n}\n",
                "t.tile:5:5: error: 'g' is a kernel: kernels are launched, not called (write the shared code as a 'fn')\n"
                "      g(x);\n"
                "      ^\n");
    expect_diag("kernel k(x: *f32) {\n    let t = permute(zeros([4, 4], f32), [0, 0]);\n}\n",
                "t.tile:2:41: error: 'permute' expects a permutation of the 2 dimensions\n"
                "      let t = permute(zeros([4, 4], f32), [0, 0]);\n"
                "                                          ^\n");
}

/* A long line shows 160 bytes around the column, "..." where cut, the caret still under the column
 * (a 10 MB line was echoed whole). */
Test(lang_diag, long_line_is_clipped) {
    Str src = {0}, want = {0}, shown = {0};
    str_puts(&src, "kernel k(x: *f32) {\n    let a = 1.0");
    for (int i = 0; i < 100; i++) str_puts(&src, " + 1.0");
    str_puts(&src, " + y");
    for (int i = 0; i < 100; i++) str_puts(&src, " + 2.0");
    str_puts(&src, ";\n}\n");
    const char *line = strchr(src.buf, '\n') + 1, *y = strstr(line, "+ y") + 2;
    int col = (int)(y - line) + 1, from = col - 1 - 80;
    str_printf(&shown, "...%.160s...", line + from);
    str_printf(&want, "t.tile:2:%d: error: unknown name 'y'\n  %s\n  %*s^\n", col, shown.buf, 3 + 80, "");
    expect_diag(src.buf, want.buf);
    str_free(&src), str_free(&want), str_free(&shown);
}

/* A name defined twice: the error at the second, a note at the first. */
Test(lang_diag, redefinition_notes_the_first) {
    expect_diag("fn f(x) {\n    return x;\n}\nfn f(x) {\n    return x;\n}\nkernel k(o: *f32) { store(o, f(1.0)); }\n",
                "t.tile:4:4: error: redefinition of 'f'\n  fn f(x) {\n     ^\n"
                "t.tile:1:4: note: 'f' is first defined here\n  fn f(x) {\n     ^\n");
}
