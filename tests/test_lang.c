/* test_lang.c - the front end: diagnostics (exact text, location, caret),
 * IR shape conventions, golden .tile -> .tir files, and every shipped kernel
 * and standard-library function compiling cleanly and verifying. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lang_diag.h"

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
        {"store(out, 1.0, maks=true);", "t.tile:2:21: error: 'store' has no parameter named 'maks'; did you mean 'mask'?\n"},
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

/* gemlite's `(pid_k * (BLOCK_SIZE_K / group_size)).to(tl.int32)`: Triton's constexpr quotient is a fraction; here a
 * constant quotient that dropped its remainder and is 0 makes an integer product 0 (it was silent): warned at the
 * '*'.  One that is not 0 is warned where the arithmetic it meets is cast to an integer (Triton truncates once, after
 * it); an exact quotient, one in index arithmetic (Triton's source had `//` there) or one cast itself is not. */
Test(lang_diag, zero_constant_quotient_in_a_product) {
    expect_warnings("kernel k(x: *f32, const BK: i32 = 32, const G: i32 = 128) {\n    let pid = program_id(1);\n"
                    "    let k_m = (pid * (BK / G)) as i32;\n    let ok = pid * (G / BK) + pid * (BK / 24) + (pid * BK) / G;\n"
                    "    let c = (pid * (BK / 24)) as i32 + (pid * (BK / 24) as i32) as i32;\n"
                    "    store(x + k_m + ok + c + (BK / 24) as i32 - (7 / 2) as i32, 1.0);\n}\n",
                    "t.tile:3:20: warning: an integer division of constants made this operand 0, so the product is 0 (Triton's '/' "
                    "divides as floats: a fraction there): write '(x * a) / b' for the product's quotient, or '(x as f32 * (a as "
                    "f32 / b)) as i32' for Triton's\n"
                    "      let k_m = (pid * (BK / G)) as i32;\n"
                    "                     ^\n"
                    "t.tile:5:18: warning: an integer division of constants truncated this operand of '*' to 1 before the cast to "
                    "'i32' (Triton's '/' of two constexprs gives the fraction, and its '.to()' truncates after the arithmetic): "
                    "write '(x * a) / b' for that, or '(a / b) as i32' for Triton's '//'\n"
                    "      let c = (pid * (BK / 24)) as i32 + (pid * (BK / 24) as i32) as i32;\n"
                    "                   ^\n"
                    "t.tile:5:31: note: the cast\n"
                    "      let c = (pid * (BK / 24)) as i32 + (pid * (BK / 24) as i32) as i32;\n"
                    "                                ^\n");
}

/* The same through a negation, as Liger's rms_norm backward writes it (`-(1 / n_cols) * rstd * ...`, a float
 * fraction in Triton): the run-time quotient warned at its division, the constant one at its use (both were
 * silent: the negation hid the quotient). */
Test(lang_diag, negated_integer_quotient_used_as_float) {
    expect_warnings("kernel k(x: *f32, n: i32, const D: i32 = 64) {\n    let v = load(x + arange(0, 16));\n"
                    "    let a = -(1 / n) * v;\n    let b = v * -(-(2 / D));\n    store(x + arange(0, 16), a + b);\n}\n",
                    "t.tile:3:17: warning: integer division truncates, and its quotient is then used as 'f32' (Triton's '/' on "
                    "integers divides as floats): write 'a as f32 / b' for the fraction, or '(a / b) as f32' to keep the truncation\n"
                    "      let a = -(1 / n) * v;\n"
                    "                  ^\n"
                    "t.tile:4:15: warning: an integer division truncated this operand to 0, and it is used as 'f32' (Triton's '/' "
                    "on integers divides as floats): write 'a as f32 / b' for the fraction, or '(a / b) as f32' to keep the "
                    "truncation\n"
                    "      let b = v * -(-(2 / D));\n"
                    "                ^\n");
}

/* A truncated quotient stored through float pointers (Triton's `tl.store(p, 1 / n)` stores the fraction): warned
 * at the division (run-time) or at the value (a constant that dropped a remainder); a store through integer
 * pointers, or of an exact constant quotient, is not. */
Test(lang_diag, integer_quotient_stored_as_float) {
    expect_warnings("kernel k(x: *f32, y: *i32, n: i32, const D: i32 = 64) {\n    store(x, 1 / n);\n    store(y, 1 / n);\n"
                    "    store(x + 1, 7 / D);\n    store(x + 2, D / 2);\n}\n",
                    "t.tile:2:16: warning: integer division truncates, and its quotient is then used as 'f32' (Triton's '/' on "
                    "integers divides as floats): write 'a as f32 / b' for the fraction, or '(a / b) as f32' to keep the truncation\n"
                    "      store(x, 1 / n);\n"
                    "                 ^\n"
                    "t.tile:4:18: warning: an integer division truncated this operand to 0, and it is used as 'f32' (Triton's '/' "
                    "on integers divides as floats): write 'a as f32 / b' for the fraction, or '(a / b) as f32' to keep the "
                    "truncation\n"
                    "      store(x + 1, 7 / D);\n"
                    "                   ^\n");
}

/* A branch's `let` that hides a variable the statements after the `if` read: Triton's assignment in the branch
 * would change it (`i_n, i_t = ...` ported as `let (i_n, i_t) = ...`, `T = eos - bos` as `let T = ...`), here
 * the outer one is read unchanged.  A warning at the `let`; none where the outer one is not read after. */
Test(lang_diag, branch_let_hides_a_variable_read_after) {
    expect_warnings("kernel k(x: *f32, ci: *i32, T: i32, const VARLEN: i1 = true) {\n    let i_t = program_id(0);\n"
                    "    if VARLEN {\n        let (i_n, i_t) = (load(ci), load(ci + 1));\n        let T = i_n * 2;\n    }\n"
                    "    if T > 3 { let v = 2.0; } else { let i_t = 5; }\n    store(x + i_t + T, 1.0);\n}\n",
                    "t.tile:4:9: warning: this 'let' declares a new 'i_t' that hides the outer one until the branch ends, and the outer "
                    "'i_t' is read after the 'if', unchanged (in Triton the branch's assignment changes it): assign it with 'i_t = ...' "
                    "(a new name beside it: declare that one first, then assign the tuple)\n"
                    "          let (i_n, i_t) = (load(ci), load(ci + 1));\n"
                    "          ^\n"
                    "t.tile:5:9: warning: this 'let' declares a new 'T' that hides the outer one until the branch ends, and the outer "
                    "'T' is read after the 'if', unchanged (in Triton the branch's assignment changes it): assign it with 'T = ...'\n"
                    "          let T = i_n * 2;\n"
                    "          ^\n"
                    "t.tile:7:38: warning: this 'let' declares a new 'i_t' that hides the outer one until the branch ends, and the outer "
                    "'i_t' is read after the 'if', unchanged (in Triton the branch's assignment changes it): assign it with 'i_t = ...'\n"
                    "      if T > 3 { let v = 2.0; } else { let i_t = 5; }\n"
                    "                                       ^\n");
}

/* A loop body's `let` of a new variable from the outer one of its name, `let acc = acc + x;` (Triton's `acc = acc +
 * x` accumulates): the outer acc stays as it was after the loop.  Warned in `for`, `while` and `static_range`
 * bodies (a tuple `let` too); a new name, or a `let` that does not read the outer one, is not. */
#define LOOP_LET_W                                                                                                        \
    "this 'let' declares a new 'acc' from the outer one, which the loop then leaves as it was (in Triton 'acc = acc + ...' " \
    "carries it across iterations): write 'acc = ...' to change the outer one"
Test(lang_diag, loop_let_from_the_outer_variable) {
    expect_warnings("kernel k(x: *f32, n: i32) {\n    let acc = zeros([16], f32);\n    let i = 0;\n"
                    "    for j in range(0, n) {\n        let acc = acc + load(x + j * 16 + arange(0, 16));\n        let t = 1.0;\n    }\n"
                    "    while i < n {\n        let (acc, q) = (acc * 2.0, 1);\n        i += 1;\n    }\n"
                    "    for s in static_range(0, 2) { let acc = acc + 1.0; }\n"
                    "    for s in range(0, 2) { let acc = zeros([16], f32); }\n"
                    "    store(x + arange(0, 16), acc);\n}\n",
                    "t.tile:5:9: warning: " LOOP_LET_W "\n"
                    "          let acc = acc + load(x + j * 16 + arange(0, 16));\n"
                    "          ^\n"
                    "t.tile:9:9: warning: " LOOP_LET_W "\n"
                    "          let (acc, q) = (acc * 2.0, 1);\n"
                    "          ^\n"
                    "t.tile:12:35: warning: " LOOP_LET_W "\n"
                    "      for s in static_range(0, 2) { let acc = acc + 1.0; }\n"
                    "                                    ^\n");
}

/* Two porting slips get a hint: assigning a name never declared (Python has no 'let'), and calling a
 * function that a parameter or variable of the same name hides (probe U).  A built-in's name is not hidden: Triton's
 * parameter `zeros` and its `tl.zeros` are two names, and so a call of `zeros` is the built-in's (it was this error). */
Test(lang_diag, assignment_without_let_and_hidden_builtin) {
    expect_diag("kernel k(x: *f32) {\n    v = 1.0;\n}\n",
                "t.tile:2:5: error: unknown name 'v' (a new variable is declared with 'let v = ...')\n"
                "      v = 1.0;\n"
                "      ^\n");
    expect_ok("kernel k(x: *f32, zeros: i32) {\n    let max = zeros([4], f32) + zeros as f32;\n    store(x, max(max, 0));\n}\n");
    expect_diag("fn twice(v) { return v * 2.0; }\nkernel k(x: *f32, twice: f32) {\n    store(x, twice(twice));\n}\n",
                "t.tile:3:14: error: 'twice' is a variable here, not a function: it hides the function 'twice' (rename the variable)\n"
                "      store(x, twice(twice));\n"
                "               ^\n");
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
     * to 2 arguments, got 3"), a required one left out is named; the caret is under the keyword's name (it was
     * under the value) */
    expect_diag("kernel k(x: *f32) {\n    let t = load(x + arange(0, 4));\n    store(x, sum(t, 0, keep_dims=true, dtype=f32, foo=3));\n}\n",
                "t.tile:3:51: error: 'sum' has no parameter named 'foo' (its parameters: x, axis, keep_dims, dtype)\n"
                "      store(x, sum(t, 0, keep_dims=true, dtype=f32, foo=3));\n"
                "                                                    ^\n");
    expect_diag("kernel k(x: *f32) {\n    let t = load(x + arange(0, 4));\n    store(x + arange(0, 4), where(t > 0.0, b=t, c=t));\n}\n",
                "t.tile:3:49: error: 'where' has no parameter named 'c' (its parameters: cond, a, b)\n"
                "      store(x + arange(0, 4), where(t > 0.0, b=t, c=t));\n"
                "                                                  ^\n");
    expect_diag("kernel k(x: *f32) {\n    let t = load(x + arange(0, 4));\n    store(x + arange(0, 4), where(t > 0.0, b=t, b=t));\n}\n",
                "t.tile:3:49: error: argument 'b' of 'where' given more than once\n"
                "      store(x + arange(0, 4), where(t > 0.0, b=t, b=t));\n"
                "                                                  ^\n");
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
                "t.tile:2:39: error: dot: inner dimensions differ: a is [32, 16], b is [32, 64] (a's columns meet b's rows): for a's "
                "transpose times b write dot(trans(a), b)\n"
                "      let z = dot(zeros([32, 16], f32), zeros([32, 64], f32));\n"
                "                                        ^\n");
    /* attention's q times k's transpose, written without trans */
    expect_diag("kernel k(p: *f32) {\n    let s = dot(zeros([16, 64], f16), zeros([32, 64], f16));\n}\n",
                "t.tile:2:39: error: dot: inner dimensions differ: a is [16, 64], b is [32, 64] (a's columns meet b's rows): for a "
                "times b's transpose write dot(a, trans(b))\n"
                "      let s = dot(zeros([16, 64], f16), zeros([32, 64], f16));\n"
                "                                        ^\n");
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

/* A value that must be known at compile time, given a run-time one: the error at the use; where that reads a kernel
 * parameter declared without `const` (a Triton port's `BLOCK: tl.constexpr` written as `BLOCK: i32`), a note at the
 * parameter saying how to declare it, in a call's argument, a shape list, a static_range bound and a fn's const
 * parameter alike.  A parameter reassigned or hidden by a `let` first is no longer the parameter: no note. */
Test(lang_diag, needs_constant) {
    expect_diag("kernel k(p: *f32, BLOCK: i32) {\n    let x = arange(0, BLOCK);\n}\n",
                "t.tile:2:23: error: 'BLOCK' must be a compile-time constant\n"
                "      let x = arange(0, BLOCK);\n"
                "                        ^\n"
                "t.tile:1:19: note: 'BLOCK' is a run-time parameter: declare it 'const BLOCK: i32' for a compile-time one (Triton's 'BLOCK: tl.constexpr'), which is no launch argument then\n"
                "  kernel k(p: *f32, BLOCK: i32) {\n"
                "                    ^\n");
    expect_diag("kernel k(p: *f32, M: i32, N: i32) {\n    let x = zeros([M, 2 * N], f32);\n}\n",
                "t.tile:2:20: error: a list element must be a compile-time integer\n"
                "      let x = zeros([M, 2 * N], f32);\n"
                "                     ^\n"
                "t.tile:1:19: note: 'M' is a run-time parameter: declare it 'const M: i32' for a compile-time one (Triton's 'M: tl.constexpr'), which is no launch argument then\n"
                "  kernel k(p: *f32, M: i32, N: i32) {\n"
                "                    ^\n"
                "t.tile:2:23: error: a list element must be a compile-time integer\n"
                "      let x = zeros([M, 2 * N], f32);\n"
                "                        ^\n"
                "t.tile:1:27: note: 'N' is a run-time parameter: declare it 'const N: i32' for a compile-time one (Triton's 'N: tl.constexpr'), which is no launch argument then\n"
                "  kernel k(p: *f32, M: i32, N: i32) {\n"
                "                            ^\n");
    expect_diag("fn f(x, const B) { return x * B; }\nkernel k(p: *f32, B: i32) {\n    store(p, f(1.0, B + 1));\n}\n",
                "t.tile:3:21: error: 'B' must be a compile-time constant\n"
                "      store(p, f(1.0, B + 1));\n"
                "                      ^\n"
                "t.tile:2:19: note: 'B' is a run-time parameter: declare it 'const B: i32' for a compile-time one (Triton's 'B: tl.constexpr'), which is no launch argument then\n"
                "  kernel k(p: *f32, B: i32) {\n"
                "                    ^\n");
    expect_diag("kernel k(p: *f32, B: i32) {\n    B = B * 2;\n    let x = arange(0, B);\n}\n",
                "t.tile:3:23: error: 'B' must be a compile-time constant\n"
                "      let x = arange(0, B);\n"
                "                        ^\n");
    expect_diag("kernel k(p: *f32, B: i32) {\n    let B = B * 2;\n    let x = arange(0, B);\n}\n",
                "t.tile:3:23: error: 'B' must be a compile-time constant\n"
                "      let x = arange(0, B);\n"
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
    /* a condition that is no number, named with its whole type (a float is one: test_lang_control number_conditions) */
    expect_diag("kernel k(p: *f32) {\n    let v = where(p, 1, 2);\n}\n",
                "t.tile:2:19: error: condition of 'where' must be i1, an integer or a float, got 'ptr<f32>'\n"
                "      let v = where(p, 1, 2);\n"
                "                    ^\n");
    expect_diag("kernel k(p: *f16) {\n    let x = load(p + arange(0, 16));\n    let v = where(p + arange(0, 16), x, 0.0);\n}\n",
                "t.tile:3:19: error: condition of 'where' must be i1, an integer or a float, got 'tensor<16xptr<f16>>'\n"
                "      let v = where(p + arange(0, 16), x, 0.0);\n"
                "                    ^\n");
}

/* A name bound in an `if`'s branches and used after it where Triton would not keep it either (branches declaring
 * it with two types; a loop's body):
 * the error at the use, and a note at the branch's `let` saying how to write it; an assignment likewise.
 * A `let` in a block that ends after the use, or a name never declared, gets no note. */
Test(lang_diag, name_of_an_ended_block) {
    expect_diag("kernel k(x: *f32, n: i32) {\n    if n > 3 {\n        let loss = 1.0;\n    } else {\n        let loss = 2;\n    }\n"
                "    store(x, loss);\n}\n",
                "t.tile:7:14: error: unknown name 'loss'\n"
                "      store(x, loss);\n"
                "               ^\n"
                "t.tile:3:9: note: 'loss' is declared here, in a block that ends before that use (a block keeps its names, but for "
                "those of a compile-time 'if''s taken branch and those both branches of an 'if' declare with one type, a 'const' "
                "with one value): "
                "declare it before the block ('let loss = ...;') and assign it inside\n"
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
    /* an `if` whose condition is an error: the one error, not an unknown name (and that note) at each later use of
     * the names its branches declare (a port of vLLM's top-k search, whose counter was an error) */
    expect_diag("kernel k(x: *f32, n: i32) {\n    let cnt = zeros(\"u32\");\n    if cnt > n {\n        let lo = 1.0;\n"
                "        let (a, b) = (2.0, 3.0);\n    } else {\n        let lo = 0.5;\n        if n > 1 { let deep = 4.0; }\n    }\n"
                "    store(x, lo + a + b + deep);\n}\n",
                "t.tile:2:21: error: 'zeros' expects a shape such as [64, 64]\n"
                "      let cnt = zeros(\"u32\");\n"
                "                      ^\n");
}

/* A number stored through pointers of another type converts (Triton's store casts); a pointer stored
 * where numbers go, or a number where pointers go, is an error at the value. */
Test(lang_diag, store_dtype) {
    Result r = compile("kernel k(p: *f16, v: f32) {\n    store(p, v);\n}\n");
    cr_expect_not_null(r.m, "%s", r.diags);
    result_free(&r);
    expect_diag("kernel k(p: *f16, q: *f32) {\n    store(p, q);\n}\n",
                "t.tile:2:14: error: 'store' through pointers to 'f16' takes a number as its value, not the pointer 'ptr<f32>' (only "
                "pointers to pointers hold pointers)\n"
                "      store(p, q);\n"
                "               ^\n");
    /* store(x, x): the pointer given as the value too (it was "store of 'ptr<f32>' value to 'ptr<f32>'"); through
     * pointers to pointers, a pointer of the pointee's type, not a number or another pointer type */
    static const char *const bad[][2] = {
        {"kernel k(x: *f32) {\n    store(x, x);\n}\n",
         "t.tile:2:14: error: 'store' through pointers to 'f32' takes a number as its value, not the pointer 'ptr<f32>'"},
        {"kernel k(pp: **f32, v: f32) {\n    store(pp, v);\n}\n",
         "t.tile:2:15: error: 'store' through pointers to 'ptr<f32>' takes a pointer of that type as its value, not the number 'f32'"},
        {"kernel k(pp: **f32, q: *i32) {\n    store(pp, q);\n}\n",
         "t.tile:2:15: error: 'store' through pointers to 'ptr<f32>' takes a pointer of that type as its value, not 'ptr<i32>'"},
        {"kernel k(pp: **f32, v: f32) {\n    store(pp, 1.5);\n}\n",
         "t.tile:2:15: error: 'store' through pointers to 'ptr<f32>' takes a pointer of that type as its value, not the number 'f32'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        Result b = compile(bad[i][0]);
        cr_expect_null(b.m, "%s compiled", bad[i][0]);
        cr_expect_not_null(strstr(b.diags, bad[i][1]), "want %s\ngot %s", bad[i][1], b.diags);
        result_free(&b);
    }
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
                "t.tile:3:25: error: loop-carried variable 'acc' changes type from 'f32' to 'tensor<16xi32>' in the loop (a variable keeps "
                "its type and shape through a loop, as in Triton: start it as the tile, 'zeros([16], i32)')\n"
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
    /* an unknown attribute lists the ones there are; Triton's num_ctas says why it has none */
    expect_diag("@num_ctas(1)\n@num_warp(4)\nkernel k(p: *f32) {\n}\n",
                "t.tile:1:2: error: unknown attribute '@num_ctas': a program here is one thread block (Triton's num_ctas=1); the "
                "attributes are @num_warps, @num_stages, @warp_specialize, @num_consumer_groups, @pingpong, @overlap, @config and "
                "@tune_key\n"
                "  @num_ctas(1)\n"
                "   ^\n"
                "t.tile:2:2: error: unknown attribute '@num_warp' (the attributes are @num_warps, @num_stages, @warp_specialize, "
                "@num_consumer_groups, @pingpong, @overlap, @config and @tune_key)\n"
                "  @num_warp(4)\n"
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
                "t.tile:2:36: error: 'return' inside a 'for' loop is not supported (as in Triton: no 'return' inside 'for' or 'while' statements)\n"
                "      for i in range(n) { if i > 2 { return; } }\n"
                "                                     ^\n");
}

Test(lang_diag, loops_and_jumps) {
    expect_diag("kernel k(n: i32) {\n    break;\n}\n",
                "t.tile:2:5: error: 'break' outside a loop\n"
                "      break;\n"
                "      ^\n");
    /* in source order (the warning was reported first): the error, its note, then the warning */
    expect_diag("fn f(x) {\n    continue;\n    return x;\n}\nkernel k(n: i32) {\n    for i in range(n) { let y = f(i); }\n}\n",
                "t.tile:2:5: error: 'continue' outside a loop (a function cannot leave its caller's loop)\n"
                "      continue;\n"
                "      ^\n"
                "t.tile:6:33: note: in this call of 'f'\n"
                "      for i in range(n) { let y = f(i); }\n"
                "                                  ^\n"
                "t.tile:3:5: warning: this statement follows the 'continue' at line 2 and never runs\n"
                "      return x;\n"
                "      ^\n");
    expect_diag("kernel k(n: i32) {\n    while n > 0 { return; }\n}\n",
                "t.tile:2:19: error: 'return' inside a 'while' loop is not supported (as in Triton: no 'return' inside 'for' or 'while' statements)\n"
                "      while n > 0 { return; }\n"
                "                    ^\n");
    expect_diag("kernel k(x: *f32) {\n    while load(x + arange(0, 4)) > 0.0 {}\n}\n",
                "t.tile:2:11: error: condition of 'while' must be a scalar number, got 'tensor<4xi1>'\n"
                "      while load(x + arange(0, 4)) > 0.0 {}\n"
                "            ^\n");
    /* a scalar pointer is a condition (not null), as Triton casts it to int1; a tensor of pointers is not */
    expect_diag("kernel k(x: *f32) {\n    while x + arange(0, 4) {}\n    if x + arange(0, 2) {}\n}\n",
                "t.tile:2:11: error: condition of 'while' must be a scalar number, got 'tensor<4xptr<f32>>'\n"
                "      while x + arange(0, 4) {}\n"
                "            ^\n"
                "t.tile:3:8: error: condition of 'if' must be a scalar number, got 'tensor<2xptr<f32>>'\n"
                "      if x + arange(0, 2) {}\n"
                "         ^\n");
    /* `!` of a scalar pointer is a null test (the converse of `if p`); of a tensor of pointers it is an error */
    expect_diag("kernel k(x: *f32) {\n    let t = !(x + arange(0, 4));\n}\n",
                "t.tile:2:13: error: operand of '!' must be a number or a scalar pointer, got 'tensor<4xptr<f32>>'\n"
                "      let t = !(x + arange(0, 4));\n"
                "              ^\n");
    expect_diag("kernel k(n: i32) {\n    while n > 0 {\n        break\n    }\n}\n",
                "t.tile:3:14: error: expected ';' after 'break', found '}' on line 4\n"
                "          break\n"
                "               ^\n");
    expect_diag("kernel k(p: *f32, n: i32) {\n    let acc = 0.0;\n    while n > 0 { acc = arange(0, 16); }\n}\n",
                "t.tile:3:19: error: loop-carried variable 'acc' changes type from 'f32' to 'tensor<16xi32>' in the loop (a variable keeps "
                "its type and shape through a loop, as in Triton: start it as the tile, 'zeros([16], i32)')\n"
                "      while n > 0 { acc = arange(0, 16); }\n"
                "                    ^\n"
                "t.tile:3:5: note: the loop\n"
                "      while n > 0 { acc = arange(0, 16); }\n"
                "      ^\n");
    /* mamba's state passing: `seq_idx = 0` before the loop, a load of an i64 seq_idx in it (the error names the type
     * to start from) */
    expect_diag("kernel k(s: *i64, n: i32) {\n    let seq_idx = 0;\n    for c in range(n) { seq_idx = load(s + c); }\n"
                "    store(s, seq_idx);\n}\n",
                "t.tile:3:25: error: loop-carried variable 'seq_idx' changes type from 'i32' to 'i64' in the loop (the constant it "
                "starts from makes it 'i32', as in Triton: start it as 'let seq_idx: i64 = 0;')\n"
                "      for c in range(n) { seq_idx = load(s + c); }\n"
                "                          ^\n"
                "t.tile:3:5: note: the loop\n"
                "      for c in range(n) { seq_idx = load(s + c); }\n"
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
                "t.tile:3:9: error: unknown name 'b' (a tuple assignment sets existing variables: declare it before with "
                "'let b = ...')\n"
                "      (a, b) = (1, 2);\n"
                "          ^\n");
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
    cr_expect_str_eq(diags, "error: no kernel named 'c' (the kernels of dir/t.tile: a, b)\n");
    cr_expect(!bad);
    free(diags);
    /* a const's name (or a fn's) given as the kernel: said so */
    diags = compile_defines("SCALE", other, 1, &bad);
    cr_expect_str_eq(diags, "error: no kernel named 'SCALE' ('SCALE' is a const, not a kernel; the kernels of dir/t.tile: a, b)\n");
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

/* fma of integers computes in f32, as the math functions do (docs/language.md): its result is an f32, and
 * storing it through an integer pointer converts back (lossy past 2^24, so integer multiply-adds are a * b + c) */
Test(lang_ir, fma_of_integers_is_f32) {
    Result r = compile("kernel k(a: *i64, b: *f32) {\n"
                       "    let x = load(a + arange(0, 32));\n"
                       "    store(b + arange(0, 32), fma(x, x, 3));\n"
                       "}\n");
    cr_assert_not_null(r.m, "%s", r.diags);
    cr_expect(strstr(r.ir, "= cast %") && strstr(r.ir, "= fma ") && strstr(strstr(r.ir, "= fma "), ": tensor<32xf32>\n"),
              "%s", r.ir);
    result_free(&r);
}

/* A constant that a `let` holds, one assigned, a cast constant and to_tensor(c) promote as typed scalars (Triton's
 * assignment, tl.cast and tl.to_tensor make them): they took the other operand's type as a literal does.  They are
 * still compile-time values: shapes, range and static_range bounds, const parameters and static_assert take them. */
Test(lang_ir, held_constants_are_typed_scalars) {
    expect_ok("fn width(const N) { return N * 2; }\n"
              "kernel k(p: *i8, q: *u8, r: *u32, h: *f16, bh: *bf16, f: *f32, o: *f32, const C = 5, const B = true) {\n"
              "    let a = load(p + arange(0, 16));\n    let s = load(p);\n    let b = load(q + arange(0, 16));\n"
              "    let ur = load(r + arange(0, 16));\n    let x = load(h + arange(0, 16));\n    let y = load(bh + arange(0, 16));\n"
              "    let z = load(f + arange(0, 16));\n"
              "    let one = 100;\n    let c = 0.5;\n    let cc = C;\n    let t = true;\n    let bb = B;\n"
              "    static_assert(dtype_of(a + 100) == i8 && dtype_of(a + C) == i8 && dtype_of(a + C * 2) == i8, \"literals, consts: weak\");\n"
              "    static_assert(dtype_of(a + one) == i32 && dtype_of(a + cc) == i32 && dtype_of(one + a) == i32, \"held: i32\");\n"
              "    static_assert(dtype_of(x * 0.5) == f16 && dtype_of(x * c) == f32 && dtype_of(y + c) == f32, \"held float: f32\");\n"
              "    static_assert(dtype_of(a + (100 as i32)) == i32 && dtype_of(a + cast(100, i64)) == i64, \"casts\");\n"
              "    static_assert(dtype_of(a + (1 as i8)) == i8 && dtype_of(x + (1 as i16)) == f16, \"narrow casts\");\n"
              "    static_assert(dtype_of(a + to_tensor(100)) == i32 && dtype_of(x * to_tensor(0.5)) == f32, \"to_tensor\");\n"
              "    static_assert(dtype_of(to_tensor(3000000000)) == u32 && dtype_of(to_tensor(5000000000)) == i64, \"to_tensor ints\");\n"
              "    static_assert(dtype_of(to_tensor(1e300)) == f64 && dtype_of(to_tensor(1e-40)) == f64, \"to_tensor f64\");\n"
              "    static_assert(dtype_of(to_tensor(true)) == i1 && dtype_of(to_tensor(1.5)) == f32, \"to_tensor i1 f32\");\n"
              "    static_assert(dtype_of(a + t) == i8 && dtype_of(a + bb) == i8, \"held i1: the other\");\n"
              "    static_assert(dtype_of(b + one) == i32 && dtype_of(ur + one) == u32, \"unsigned\");\n"
              "    static_assert(dtype_of(z * 1e300) == f32 && dtype_of(z * to_tensor(1e300)) == f64, \"f64\");\n"
              "    static_assert(dtype_of(s + one) == i32 && dtype_of(s + 1) == i8, \"scalars\");\n"
              "    static_assert(dtype_of(where(a > 0, a, one)) == i32 && dtype_of(where(a > 0, a, 100)) == i8, \"where\");\n"
              "    static_assert(dtype_of(maximum(a, one)) == i32 && dtype_of(minimum(x, c)) == f32, \"maximum, minimum\");\n"
              "    static_assert(dtype_of(join(a, one)) == i32 && dtype_of(join(a, 1)) == i8, \"join\");\n"
              "    let h16: f16 = 1.5;\n    let i8c = 100 as i8;\n"
              "    static_assert(dtype_of(h16 * 2.5) == f16 && dtype_of(i8c * 2) == i8 && dtype_of(one * 2) == i32, \"held with a literal\");\n"
              "    static_assert(i8c * 2 == -56 && one + one == 200, \"folded in the held type\");\n"
              "    static_assert(dtype_of(-one + a) == i32 && dtype_of(a + -one) == i32, \"negated\");\n"
              "    let tt = (1, 0.5);\n    let (t1, t2) = (1, 0.5);\n"
              "    static_assert(dtype_of(a + tt[0]) == i32 && dtype_of(x * tt[1]) == f32 && dtype_of(a + t1) == i32 && "
              "dtype_of(x * t2) == f32, \"tuples\");\n"
              "    for j in static_range(2) { static_assert(dtype_of(a + j) == i8, \"static_range: weak\"); }\n"
              "    static_assert(dtype_of(a + minimum(100, 50)) == i32 && dtype_of(a + min(100, 50)) == i8 && "
              "dtype_of(a + min(one, 50)) == i32, \"minimum of constants: typed; min: weak\");\n"
              "    static_assert(dtype_of(a + clamp(100, 0, 50)) == i32 && dtype_of(a + where(true, 100, 3)) == i32, \"clamp, where\");\n"
              "    static_assert(dtype_of(where(true, 100, 2.5)) == f32 && where(true, 100, 2.5) == 100.0, \"where of constants\");\n"
              "    let n = 8;\n    let v = zeros([n * 2], f32);\n    static_assert(shape_of(v)[0] == 16, \"shape\");\n"
              "    let acc = 0.0;\n    for j in static_range(n) { acc += j; }\n"
              "    for j in range(0, n) { acc += 1.0; }\n"
              "    static_assert(width(n) == 16, \"a const parameter\");\n"
              "    store(o + arange(0, 16), v + acc + (a + one) as f32 + x as f32);\n"
              "    store(o + arange(0, 16), where(a < 200 + one, 1.0, 0.0));\n"
              "}\n");
}

/* `a if c else b` on a run-time scalar c: a side that loads, stores, runs an atomic or an `if`, or may trap (an
 * integer division or remainder) makes it an `if` that yields the value, so only the side picked runs (Triton's
 * scf.if); pure sides stay where's select; a tile c is where's select (both sides, element-wise). */
Test(lang_ir, ternary_runs_only_its_side) {
    static const struct {
        const char *expr;
        bool branch;
    } cases[] = {
        {"load(x + 1) if n < 4 else 0.0", true},
        {"0.5 if n < 4 else load(x + n)", true},
        {"(n / m) as f32 if m != 0 else 1.0", true},
        {"(n % m) as f32 if m else 1.0", true},
        {"atomic_add(x + 3, 1.0) if f else 0.0", true},
        {"(f if m > 0 else load(x)) if n > 0 else 2.0", true},
        {"(n * 2) as f32 if n < m else sqrt(f)", false},
        {"f + 1.0 if f else f / 3.0", false},
        {"(f if m > 0 else 1.0) if n > 0 else 2.0", false},
        {"(n / 4) as f32 if n < m else 0.0", false}, /* by a constant other than 0: it cannot trap */
        {"sum(load(x + arange(0, 4) * m) if arange(0, 4) < n else 0.0)", false},
        /* pure but expensive sides are computed only where picked: a dot, a reduction, a sort, a big tile, many ops */
        {"sum(dot(full([16, 16], f, f32), full([16, 16], 2.0, f32)) if n < m else dot(full([16, 16], 3.0, f32), full([16, 16], f, f32)))",
         true},
        {"sum(full([16, 16], f, f32)) if n < m else f", true},
        {"sum(sort(arange(0, 16) as f32 * f) if n < m else full([16], f, f32))", true},
        {"sum(exp(full([64, 64], f, f32)) if n < m else full([64, 64], 1.0, f32))", true},
        {"f * f * f * f * f * f * f * f * f * f * f * f * f * f * f * f * f * f * f if n < m else 0.0", true},
        /* cheap pure sides stay a select: a few element-wise ops on scalars or a small tile */
        {"(n + 1) as f32 if n < m else (n * 2) as f32", false},
        {"sum(exp(full([8, 8], f, f32)) if n < m else full([8, 8], 1.0, f32))", false},
        {"f * f * f * f * f * f * f * f if n < m else 0.0", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char src[512];
        snprintf(src, sizeof src, "kernel k(x: *f32, n: i32, m: i32, f: f32) {\n    store(x + 2, %s);\n}\n", cases[i].expr);
        Result r = compile(src);
        cr_assert_not_null(r.m, "%s: %s", cases[i].expr, r.diags);
        bool branch = strstr(r.ir, " = if ") != NULL;
        cr_expect_eq(branch, cases[i].branch, "%s: %s\n%s", cases[i].expr, branch ? "an 'if'" : "no 'if'", r.ir);
        if (!cases[i].branch) cr_expect(strstr(r.ir, "select"), "%s: no select\n%s", cases[i].expr, r.ir);
        result_free(&r);
    }
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
static void check_golden(const char *stem) {
    char tpath[512], gpath[512];
    snprintf(tpath, sizeof tpath, "%s/tests/lang/%s.tile", TILE_SOURCE_DIR, stem);
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


Test(lang_golden, add) { check_golden("add"); }
Test(lang_golden, while_break_continue) { check_golden("while"); }
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
#include <unistd.h>

/* Cap this test process's memory (Criterion runs each test in its own process);
 * not under AddressSanitizer, which reserves far more address space itself. */
static void cap_memory(void) {
#if !defined(__SANITIZE_ADDRESS__)
    struct rlimit rl = {(rlim_t)2 << 30, (rlim_t)2 << 30};
    cr_assert_eq(setrlimit(RLIMIT_AS, &rl), 0);
#endif
}

/* A hostile source is refused with the error want, within the memory cap (the tests' own timeouts catch a
 * compile that does not end; how long these take is bench/compile_scaling.py's business, not a test's). */
static void expect_bounded(const char *text, size_t len, const char *want) {
    cap_memory();
    Result r = compile_src("t.tile", text, len, NULL, 0);
    cr_expect_null(r.m, "compilation should fail");
    cr_expect(strstr(r.diags, want), "expected '%s' in:\n%.2000s", want, r.diags);
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
    /* an empty name: no file named (it read the importing file's folder: "not a regular file") */
    expect_bounded("import \"\";\nkernel k(p: *f32) { store(p, 1.0); }\n", 48, "t.tile:1:8: error: import names no file: the string is empty");
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

/* Chains the parser builds in a loop (a + b + ..., x[None][None]..., x as f32 as f32 ...) are trees as deep
 * as they are long: 100000 links overflowed the stack of the tree walks after the parser. */
static void expect_chain_refused(const char *head, const char *link, int n, const char *tail) {
    Str s = {0};
    str_puts(&s, "kernel k(p: *f32) {\n    let y = load(p);\n    let x = ");
    str_puts(&s, head);
    for (int i = 0; i < n; i++) str_puts(&s, link);
    str_puts(&s, tail);
    str_puts(&s, ";\n    store(p, x);\n}\n");
    expect_bounded(s.buf, s.len, "t.tile:3:13: error: expression or statement nested too deeply (more than 10000 levels)");
    str_free(&s);
}

Test(lang_bounds, long_chains) {
    expect_chain_refused("y", " + y", 100000, "");
    expect_chain_refused("y > 0.0", " && y > 0.0", 100000, "");
    expect_chain_refused("arange(0, 4)", "[None]", 100000, "");
    expect_chain_refused("y", " as f32", 100000, "");
}

/* static_range loops nested until they unroll 16 million copies of a compile-time statement: each level
 * is within the per-loop bound of 4096, the whole is not. */
Test(lang_bounds, nested_static_range) {
    const char *t = "kernel k(p: *f32) {\n    let x = 0.0;\n    for i in static_range(0, 4000) {\n"
                    "        for j in static_range(0, 4000) { x += 1.0; }\n    }\n    store(p, x);\n}\n";
    expect_bounded(t, strlen(t), "t.tile:4:42: error: kernel too large after inlining and unrolling: more than 2097152 statements");
}

static int count_str(const char *s, const char *what) {
    int n = 0;
    for (const char *p = s; (p = strstr(p, what)); p += strlen(what)) n++;
    return n;
}

/* 4000 run-time variables, then 4000 run-time `if`s: each `if` keeps aside only the variables its branches
 * assign (every variable, per `if`, took 18 GB and two minutes for 5000 of each); each merges what its branches
 * changed: one value, or two where a branch also doubles a variable, which a later `if` then reads. */
Test(lang_bounds, thousands_of_variables_and_ifs) {
    enum { N = 4000 };
    cap_memory();
    Str s = {0};
    str_puts(&s, "kernel k(p: *i32) {\n    let pid = program_id(0);\n    let acc = 0;\n");
    for (int i = 0; i < N; i++) str_printf(&s, "    let v_%d = pid + %d;\n", i, i);
    for (int i = 0; i < N; i++) {
        if (i % 100 == 50) str_printf(&s, "    if v_%d > 9 { v_%d = v_%d * 2; acc = acc + 1; }\n", i, i + 1, i + 1);
        else str_printf(&s, "    if v_%d > 7 { acc = acc + v_%d; }\n", i, i);
    }
    str_puts(&s, "    store(p, acc);\n}\n");
    Result r = compile_src("t.tile", s.buf, s.len, NULL, 0);
    cr_assert_not_null(r.m, "%.2000s", r.diags);
    cr_expect_eq(count_str(r.ir, " = if "), N, "%d ifs", count_str(r.ir, " = if "));
    cr_expect_eq(count_str(r.ir, ":2 = if "), N / 100, "%d ifs of two values", count_str(r.ir, ":2 = if "));
    cr_expect_eq(count_str(r.ir, " = if %"), N, "each if gives a value");
    result_free(&r);
    str_free(&s);
}

/* A kernel of 20000 parameters: its argument list grows by doubling (it grew by one, copied whole each time:
 * 10000 took 15 s and 1.1 GB), and a duplicate among them is found by name, reported at its place. */
Test(lang_bounds, twenty_thousand_parameters) {
    enum { N = 20000 };
    cap_memory();
    Str s = {0};
    str_puts(&s, "kernel k(");
    for (int i = 0; i < N; i++) str_printf(&s, "a%d: i32, ", i);
    str_printf(&s, "p: *i32) { store(p, a0 + a%d); }\n", N - 1);
    Result r = compile_src("t.tile", s.buf, s.len, NULL, 0);
    cr_assert_not_null(r.m, "%.2000s", r.diags);
    const char *nl = strchr(r.ir, '\n');
    int n = 0;
    for (const char *q = r.ir; nl && (q = strstr(q, ": i32")) && q < nl; q++) n++;
    cr_expect_eq(n, N, "%d i32 arguments in the kernel's line", n);
    result_free(&r);
    s.len -= strlen(" { store(p, a0 + a19999); }\n") + 1;
    size_t col = s.len + 3;
    str_puts(&s, ", a7: i32) { store(p, a7); }\n");
    r = compile_src("t.tile", s.buf, s.len, NULL, 0);
    char want[64];
    snprintf(want, sizeof want, "t.tile:1:%zu: error: duplicate parameter 'a7'", col);
    cr_expect(!r.m && strstr(r.diags, want), "want '%s' in:\n%.1000s", want, r.diags);
    result_free(&r);
    str_free(&s);
}

Test(lang_bounds, float_literal_overflow) {
    expect_diag("kernel k(p: *f32) { store(p, 1e99999); }\n",
                "t.tile:1:30: error: float literal '1e99999' is too large for f64\n"
                "  kernel k(p: *f32) { store(p, 1e99999); }\n"
                "                               ^\n");
}
