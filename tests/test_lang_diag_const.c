/* test_lang_diag_const.c - the front end's diagnostics for constants (split from test_lang_diag.c): exact
 * text, location and caret of the errors and warnings for values that do not fit their types (typed
 * constants, `full`, @config and `const` values, the ends of each integer type, float overflow, constants
 * of different signedness), constant arithmetic that overflows or divides by zero, the types a run-time
 * `if` keeps for the constants it merges, a const changed at run time, and spellings of Triton ports named. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/tile/tile.h"
#include "tests/lang_diag.h"

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
    cr_expect_str_eq(r.diags, "<-D num_warps>:1:1: error: num_warps must be a compile-time integer, got the type 'f16'\n  f16\n  ^\n");
    result_free(&r);
    /* an untyped const given a bare name is a string: where a number is needed, the error says what it got */
    const char *untyped = "const B = 64;\nkernel k(x: *f32) { store(x + arange(0, B), 1.0); }\n";
    LangDefine banana[] = {{"B", "banana"}};
    r = compile_src("t.tile", untyped, strlen(untyped), banana, 1);
    cr_expect_str_eq(r.diags, "t.tile:2:41: error: argument 'end' of 'arange' must be an integer, got the string \"banana\"\n"
                              "  kernel k(x: *f32) { store(x + arange(0, B), 1.0); }\n"
                              "                                          ^\n");
    result_free(&r);
    expect_diag("kernel k(x: *f32) { store(x + arange(0, f16), 1.0); }\n",
                "t.tile:1:41: error: argument 'end' of 'arange' must be a compile-time integer, got the type 'f16'\n"
                "  kernel k(x: *f32) { store(x + arange(0, f16), 1.0); }\n"
                "                                          ^\n");
    /* checked for each kernel of the file, said once (it was printed once a kernel) */
    const char *two = "kernel a(x: *f32) { store(x, 1.0); }\nkernel b(x: *f32) { store(x, 2.0); }\n";
    LangDefine nw3[] = {{"num_warps", "3"}};
    r = compile_src("t.tile", two, strlen(two), nw3, 1);
    cr_expect_str_eq(r.diags, "<-D num_warps>:1:1: error: num_warps must be 1, 2, 4, 8, 16 or 32, got 3\n  3\n  ^\n");
    result_free(&r);
    static const char *const bad_literals[] = {"0x_", "1__0", "1_", "1.5_", "0b_", "1_.5", "1._5", "1_e5", "1e_5", "0x1_g"};
    for (int i = 0; i < 10; i++) {
        char text[128], want[256];
        snprintf(text, sizeof text, "kernel k(x: *f32) { store(x, (%s) as f32); }\n", bad_literals[i]);
        snprintf(want, sizeof want, "t.tile:1:31: error: invalid %s literal '%s'", strpbrk(bad_literals[i], ".e") && bad_literals[i][1] != 'x' ? "float" : "integer",
                 bad_literals[i]);
        Result rr = compile_src("t.tile", text, strlen(text), NULL, 0);
        cr_expect(rr.diags && strstr(rr.diags, want), "%s: %s", bad_literals[i], rr.diags);
        result_free(&rr);
    }
    expect_ok("kernel k(x: *f32) { store(x, (0x_ff + 1_000 + 0b_1) as f32 + 1_0.2_5); }\n");
    /* a held i8 is a typed scalar: a literal takes its type, as it would a run-time i8's (Triton: out of range) */
    expect_diag("kernel k(p: *i32) {\n    let c: i8 = 100;\n    store(p, c + 1000);\n}\n",
                "t.tile:3:16: error: the constant 1000 is out of range for 'i8', the type it takes here, as in Triton (cast the "
                "other operand, or the constant with 'as', to say which is meant)\n"
                "      store(p, c + 1000);\n"
                "                 ^\n");
    expect_ok("kernel k(p: *i8) {\n    let lim = 1000;\n    store(p, where(load(p) < lim, 1, 0));\n}\n");
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

/* A weak integer constant takes the other operand's type; one that fits it neither as a signed nor as an
 * unsigned number is an error (x_i32 + 5000000000 wrapped to x + 705032704, store(i8p, 1000) stored -24). */
Test(lang_diag, constant_does_not_fit) {
    /* an operand of a promotion: the constant must be a value of the type it takes, as Triton asks */
    expect_diag("kernel k(a: *i32) {\n    let i = arange(0, 16);\n    store(a + i, load(a + i) + 5000000000);\n}\n",
                "t.tile:3:30: error: the constant 5000000000 is out of range for 'i32', the type it takes here, as in Triton "
                "(cast the other operand, or the constant with 'as', to say which is meant)\n"
                "      store(a + i, load(a + i) + 5000000000);\n"
                "                               ^\n");
    /* a bit pattern of the width was taken for + - * and comparisons too: x_i32 + 3000000000 added -1294967296 and
     * x_i32 < 3000000000 compared with it (Triton refuses both); x_u32 + -1 likewise */
    expect_diag("kernel k(a: *i32) {\n    store(a, load(a) + 3000000000);\n}\n",
                "t.tile:2:22: error: the constant 3000000000 is out of range for 'i32', the type it takes here, as in Triton "
                "(cast the other operand, or the constant with 'as', to say which is meant)\n"
                "      store(a, load(a) + 3000000000);\n"
                "                       ^\n");
    expect_diag("kernel k(a: *i32, b: *i1) {\n    store(b, load(a) < 3000000000);\n}\n",
                "t.tile:2:22: error: the constant 3000000000 is out of range for 'i32', the type it takes here, as in Triton "
                "(cast the other operand, or the constant with 'as', to say which is meant)\n"
                "      store(b, load(a) < 3000000000);\n"
                "                       ^\n");
    expect_diag("kernel k(u: *u32) {\n    store(u, load(u) + -1);\n}\n",
                "t.tile:2:22: error: the constant -1 is out of range for 'u32', the type it takes here, as in Triton "
                "(cast the other operand, or the constant with 'as', to say which is meant)\n"
                "      store(u, load(u) + -1);\n"
                "                       ^\n");
    /* where, minimum and the other built-ins of several operands alike (where(false, c_i8, 1000) was -24) */
    expect_diag("kernel k(p: *i32) {\n    let c = 5 as i8;\n    store(p, where(false, c, 1000));\n}\n",
                "t.tile:3:30: error: the constant 1000 is out of range for 'i8', the type it takes here, as in Triton "
                "(cast the other operand, or the constant with 'as', to say which is meant)\n"
                "      store(p, where(false, c, 1000));\n"
                "                               ^\n");
    expect_diag("kernel k(p: *i8) {\n    store(p, maximum(load(p), 200));\n}\n",
                "t.tile:2:31: error: the constant 200 is out of range for 'i8', the type it takes here, as in Triton "
                "(cast the other operand, or the constant with 'as', to say which is meant)\n"
                "      store(p, maximum(load(p), 200));\n"
                "                                ^\n");
    /* stored, a load's other and full convert by a cast, as Triton's (an error here before), with a warning when
     * the value changes; a held constant too */
    expect_warnings("kernel k(b: *i8) {\n    store(b, 1000);\n}\n",
                    "t.tile:2:14: warning: 'store' converts the constant 1000 to 'i8' by a cast, as Triton does, which wraps it "
                    "to -24 (write the 'i8' value meant, or cast the constant with 'as' to say the wrap is meant)\n"
                    "      store(b, 1000);\n"
                    "               ^\n");
    /* a warning from inside an inlined fn names each call it came through, as an error does (it named none) */
    expect_warnings("fn put(q) {\n    store(q, 1000);\n}\nkernel k(b: *i8) {\n    put(b);\n    put(b + 1);\n}\n",
                    "t.tile:2:14: warning: 'store' converts the constant 1000 to 'i8' by a cast, as Triton does, which wraps it "
                    "to -24 (write the 'i8' value meant, or cast the constant with 'as' to say the wrap is meant)\n"
                    "      store(q, 1000);\n"
                    "               ^\n"
                    "t.tile:5:5: note: in this call of 'put'\n"
                    "      put(b);\n"
                    "      ^\n"
                    "t.tile:2:14: warning: 'store' converts the constant 1000 to 'i8' by a cast, as Triton does, which wraps it "
                    "to -24 (write the 'i8' value meant, or cast the constant with 'as' to say the wrap is meant)\n"
                    "      store(q, 1000);\n"
                    "               ^\n"
                    "t.tile:6:5: note: in this call of 'put'\n"
                    "      put(b + 1);\n"
                    "      ^\n");
    /* a literal past 2^63 is an unsigned constant: the message shows the value written (it showed -9223372036854775808) */
    expect_warnings("kernel k(b: *i32) {\n    let c = 9223372036854775808;\n    store(b + arange(0, 4), full([4], c, i32));\n}\n",
                    "t.tile:3:39: warning: 'full' converts the constant 9223372036854775808 to 'i32' by a cast, as Triton does, "
                    "which wraps it to 0 (write the 'i32' value meant, or cast the constant with 'as' to say the wrap is meant)\n"
                    "      store(b + arange(0, 4), full([4], c, i32));\n"
                    "                                        ^\n");
    /* bit patterns of the width are fine for & | ^ and stores; an explicit cast says what is meant */
    expect_ok("kernel k(a: *i32, b: *i8, u: *u32, w: *i64) {\n    let x = load(a);\n    store(a, x & 0xFFFFFFFF);\n"
              "    store(a, x ^ 0x9E3779B9);\n    store(b, 255);\n    store(b, -128);\n    store(u, load(u) - 1);\n"
              "    store(u, -1);\n    store(w, (x as i64) + 5000000000);\n    store(b, 1000 as i8);\n"
              "    store(b, load(b + 1, true, 200));\n}\n");
    /* a written float that is no integer of the type, stored or a load's other through integer pointers, is warned
     * about as an integer that wraps (it was silent: store(p_i32, 1.5) stored 1); an integral one, a held one (a
     * run-time scalar to Triton) and a cast are not */
    expect_warnings("kernel k(a: *i32, b: *u8) {\n    store(a, 1.5);\n    atomic_cas(a, 1.0, 3e10);\n    store(b, -1.0 / 0.0);\n"
                    "    store(a + arange(0, 4), load(a + arange(0, 4), arange(0, 4) < 2, 0.5));\n"
                    "    let c = 2.5;\n    store(a, c);\n    store(a, 2.0);\n    store(a, 1.5 as i32);\n}\n",
                    "t.tile:2:14: warning: 'store' converts the constant 1.5 to 'i32' by a cast, as Triton does, which drops its "
                    "fraction (write the 'i32' value meant, or cast the constant with 'as' to say the conversion is meant)\n"
                    "      store(a, 1.5);\n"
                    "               ^\n"
                    "t.tile:3:24: warning: 'atomic_cas' converts the constant 30000000000 to 'i32' by a cast, as Triton does, which "
                    "cannot hold it (write the 'i32' value meant, or cast the constant with 'as' to say the conversion is meant)\n"
                    "      atomic_cas(a, 1.0, 3e10);\n"
                    "                         ^\n"
                    "t.tile:4:14: warning: 'store' converts the constant -inf to 'u8' by a cast, as Triton does, which has no such "
                    "value (write the 'u8' value meant, or cast the constant with 'as' to say the conversion is meant)\n"
                    "      store(b, -1.0 / 0.0);\n"
                    "               ^\n"
                    "t.tile:5:70: warning: 'other' of 'load' converts the constant 0.5 to 'i32' by a cast, as Triton does, which "
                    "drops its fraction (write the 'i32' value meant, or cast the constant with 'as' to say the conversion is meant)\n"
                    "      store(a + arange(0, 4), load(a + arange(0, 4), arange(0, 4) < 2, 0.5));\n"
                    "                                                                       ^\n");
    /* a finite constant past a float type's range, stored, a load's other or full's value, becomes an infinity: warned
     * about (it was silent); the saturating f8 types, an infinity written as such and a held constant are not */
    expect_warnings("kernel k(a: *f16, b: *bf16, e: *f8e5m2) {\n    store(a, -70000);\n    store(b, 1e39);\n"
                    "    store(a + arange(0, 4), full([4], 1e5, f16));\n"
                    "    store(a + arange(0, 4), load(a + arange(0, 4), arange(0, 4) < 2, -1e9));\n"
                    "    store(e, 1e6);\n    store(a, -1.0 / 0.0);\n    store(a, 65504.0);\n    let h = 1e10;\n    store(a, h);\n}\n",
                    "t.tile:2:14: warning: 'store' converts the constant -70000 to 'f16' by a cast, as Triton does, which overflows it "
                    "to -inf (its largest value is 65504)\n"
                    "      store(a, -70000);\n"
                    "               ^\n"
                    "t.tile:3:14: warning: 'store' converts the constant 1e+39 to 'bf16' by a cast, as Triton does, which overflows it "
                    "to inf (its largest value is 3.3895313892515355e+38)\n"
                    "      store(b, 1e39);\n"
                    "               ^\n"
                    "t.tile:4:39: warning: 'full' converts the constant 100000 to 'f16' by a cast, as Triton does, which overflows it "
                    "to inf (its largest value is 65504)\n"
                    "      store(a + arange(0, 4), full([4], 1e5, f16));\n"
                    "                                        ^\n"
                    "t.tile:5:70: warning: 'other' of 'load' converts the constant -1000000000 to 'f16' by a cast, as Triton does, which "
                    "overflows it to -inf (its largest value is 65504)\n"
                    "      store(a + arange(0, 4), load(a + arange(0, 4), arange(0, 4) < 2, -1e9));\n"
                    "                                                                       ^\n");
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
    /* an i32 shift past i64 (1 << 63 and 3 << 62 wrapped to the i32 0, stored as such) */
    expect_diag("kernel k(a: *i64) {\n    store(a, 1 << 63);\n}\n",
                "t.tile:2:16: error: integer overflow in a constant expression: 1 << 63 does not fit in i64 (for the u64 bit "
                "pattern write (1 as u64) << 63)\n"
                "      store(a, 1 << 63);\n"
                "                 ^\n");
    expect_diag("kernel k(a: *i64) {\n    store(a, 3 << 62);\n}\n",
                "t.tile:2:16: error: integer overflow in a constant expression: 3 << 62 does not fit in i64 (for the u64 bit "
                "pattern write (3 as u64) << 62)\n"
                "      store(a, 3 << 62);\n"
                "                 ^\n");
    Result r = compile("kernel k(a: *i64, u: *u64) {\n    store(a, -2147483648 / -1);\n    store(a + 1, -(-2147483648));\n"
                       "    store(u, 0x9E3779B97F4A7C15 * 31);\n    store(a + 2, -1 << 63);\n    store(a + 3, 1 << 62);\n}\n");
    cr_assert_not_null(r.m, "%s", r.diags);
    cr_expect(strstr(r.ir, "const {value=2147483648} : i64") && !strstr(r.ir, "-2147483648"), "%s", r.ir);
    cr_expect(strstr(r.ir, "const {value=2934021998537672331} : u64"), "%s", r.ir);
    cr_expect(strstr(r.ir, "const {value=-9223372036854775808} : i64"), "-1 << 63 is i64's least value:\n%s", r.ir);
    cr_expect(strstr(r.ir, "const {value=4611686018427387904} : i64"), "1 << 62:\n%s", r.ir);
    result_free(&r);
}

/* A run-time `if` keeps an integer variable's type as a loop does when its branches give constants: an integer in
 * one and a float in the other is an error at the assignment (`let x = 0; if c { x = 1.5; }` made x an f32),
 * element by element in a tuple; a float variable takes an integer constant (tests/test_lang_run.c runs those). */
Test(lang_diag, if_keeps_an_integer_constant_type) {
    expect_diag("kernel k(p: *f32, c: i32) {\n    let x = 0;\n    if c > 0 { x = 1.5; }\n    store(p, x as f32);\n}\n",
                "t.tile:3:16: error: 'x' is the i32 0 in one branch of 'if' and the float 1.5 in the other (as in a loop, a variable "
                "keeps its type: start it as a float, or cast)\n"
                "      if c > 0 { x = 1.5; }\n"
                "                 ^\n"
                "t.tile:3:5: note: the 'if'\n"
                "      if c > 0 { x = 1.5; }\n"
                "      ^\n");
    expect_diag("kernel k(p: *f32, c: i32) {\n    let x = 0;\n    if c > 0 { x = 1.5; } else { x = 2; }\n    store(p, x as f32);\n}\n",
                "t.tile:3:16: error: 'x' is the i32 2 in one branch of 'if' and the float 1.5 in the other (as in a loop, a variable "
                "keeps its type: start it as a float, or cast)\n"
                "      if c > 0 { x = 1.5; } else { x = 2; }\n"
                "                 ^\n"
                "t.tile:3:5: note: the 'if'\n"
                "      if c > 0 { x = 1.5; } else { x = 2; }\n"
                "      ^\n");
    expect_diag("kernel k(p: *f32, c: i32) {\n    let t = (1.0, 0);\n    if c > 0 { t = (2.0, 0.5); }\n    store(p, t[1] as f32);\n}\n",
                "t.tile:3:16: error: element 1 of 't' is the i32 0 in one branch of 'if' and the float 0.5 in the other (as in a loop, a "
                "variable keeps its type: start it as a float, or cast)\n"
                "      if c > 0 { t = (2.0, 0.5); }\n"
                "                 ^\n"
                "t.tile:3:5: note: the 'if'\n"
                "      if c > 0 { t = (2.0, 0.5); }\n"
                "      ^\n");
}

/* A compile-time number before a run-time `if` is a scalar of its own type there, as in a loop and as Triton's `x = 0`
 * is an i32: a branch's run-time value of another type or shape is an error at its assignment (`let x = 0; if c {
 * x = n_i64; }` made x an i64 unseen, `x = v_i8` an i8 that later wraps, and `let z = 0; if c { z = zeros(...) }` a
 * tensor, whose fix is a tile before the `if`, `full([16], 0, f32)`: the message said `0 as f32`, a scalar still); a
 * typed constant, or a value of the constant's own type, merges as before. */
Test(lang_diag, if_keeps_a_constant_s_type) {
    expect_diag("kernel k(out: *i64, n: i64, c: i1) {\n    let x = 0;\n    if c { x = n; }\n    store(out, x);\n}\n",
                "t.tile:3:12: error: 'x' is the i32 0 before the 'if' and a run-time 'i64' in it (as in a loop and in Triton, a variable "
                "keeps its type and shape: give the value before the 'if' the type, `0 as i64`, or cast)\n"
                "      if c { x = n; }\n"
                "             ^\n"
                "t.tile:3:5: note: the 'if'\n"
                "      if c { x = n; }\n"
                "      ^\n");
    expect_diag("kernel k(out: *i32, q: *i8, c: i1) {\n    let x = 0;\n    if c { x = 1; } else { x = load(q); }\n    store(out, x);\n}\n",
                "t.tile:3:28: error: 'x' is the i32 0 before the 'if' and a run-time 'i8' in it (as in a loop and in Triton, a variable "
                "keeps its type and shape: give the value before the 'if' the type, `0 as i8`, or cast)\n"
                "      if c { x = 1; } else { x = load(q); }\n"
                "                             ^\n"
                "t.tile:3:5: note: the 'if'\n"
                "      if c { x = 1; } else { x = load(q); }\n"
                "      ^\n");
    expect_diag("kernel k(out: *f32, c: i1) {\n    let z = 0.0;\n    if c { z = zeros([16], f32); }\n    store(out + arange(0, 16), z);\n}\n",
                "t.tile:3:12: error: 'z' is the f32 0 before the 'if' and a 'tensor<16xf32>' tensor in it (as in a loop and in Triton, a "
                "variable keeps its type and shape: give the value before the 'if' that shape and type, `full([16], 0, f32)`)\n"
                "      if c { z = zeros([16], f32); }\n"
                "             ^\n"
                "t.tile:3:5: note: the 'if'\n"
                "      if c { z = zeros([16], f32); }\n"
                "      ^\n");
    expect_diag("kernel k(out: *f32, c: i1) {\n    let t = (1.0, 0);\n    if c { t = (2.0, program_id(0) as i64); }\n    store(out, t[0]);\n}\n",
                "t.tile:3:12: error: element 1 of 't' is the i32 0 before the 'if' and a run-time 'i64' in it (as in a loop and in Triton, a "
                "variable keeps its type and shape: give the value before the 'if' the type, `0 as i64`, or cast)\n"
                "      if c { t = (2.0, program_id(0) as i64); }\n"
                "             ^\n"
                "t.tile:3:5: note: the 'if'\n"
                "      if c { t = (2.0, program_id(0) as i64); }\n"
                "      ^\n");
    expect_ok("kernel k(out: *i64, n: i64, c: i1, q: *f16) {\n    let x: i64 = 0;\n    if c { x = n; }\n    let y = 0 as i64;\n"
              "    if c { y = n; } else { y = 3; }\n    let f = 0.0 as f16;\n    if c { f = load(q); }\n    let m = -1;\n"
              "    if c { m = program_id(0); }\n    store(out, x + y + f as i64 + m as i64);\n}\n");
}

/* A run-time `if` whose branches both give constants keeps the run-time type and shape the variable had before it,
 * as a loop does (an i8 became an i32, an f16 an f32, a tensor a scalar); a constant that does not fit, in a loop
 * or an `if`, is reported at its assignment with a note at the statement (it was at the `if` or the `for`). */
Test(lang_diag, if_constants_keep_a_run_time_type) {
    expect_ok("kernel k(o: *f32, h: *f16, q: *i8, n: i32) {\n    let v = load(h);\n    if n > 0 { v = 1.5; } else { v = 4; }\n"
              "    static_assert(dtype_of(v) == f16, \"f16\");\n    let w = zeros([4], i8);\n    if n > 0 { w = 1; } else { w = 2; }\n"
              "    static_assert(dtype_of(w) == i8 && shape_of(w)[0] == 4, \"i8 [4]\");\n    store(o + arange(0, 4), (w + v) as f32);\n}\n");
    expect_diag("kernel k(q: *i8, n: i32) {\n    let v = load(q);\n    if n > 0 { v = 3; } else {\n        v = 300;\n    }\n    store(q, v);\n}\n",
                "t.tile:4:9: error: the constant 300 does not fit 'i8', the type it takes here (cast the other operand, or the constant "
                "with 'as', to say which is meant)\n"
                "          v = 300;\n"
                "          ^\n"
                "t.tile:3:5: note: the 'if'\n"
                "      if n > 0 { v = 3; } else {\n"
                "      ^\n");
    expect_diag("kernel k(q: *i8, n: i32) {\n    let v = load(q);\n    for i in range(0, n) {\n        v = 300;\n    }\n    store(q, v);\n}\n",
                "t.tile:4:9: error: the constant 300 does not fit 'i8', the type it takes here (cast the other operand, or the constant "
                "with 'as', to say which is meant)\n"
                "          v = 300;\n"
                "          ^\n"
                "t.tile:3:5: note: the loop\n"
                "      for i in range(0, n) {\n"
                "      ^\n");
    expect_diag("kernel k(q: *i8, n: i32) {\n    let v = load(q);\n    if n > 0 { v = 1.5; } else { v = 4; }\n    store(q, v);\n}\n",
                "t.tile:3:16: error: 'v' is i8 before the 'if' and given the float 1.5 in it (as in a loop, a variable keeps its type: "
                "start it as a float, or cast)\n"
                "      if n > 0 { v = 1.5; } else { v = 4; }\n"
                "                 ^\n"
                "t.tile:3:5: note: the 'if'\n"
                "      if n > 0 { v = 1.5; } else { v = 4; }\n"
                "      ^\n");
}

/* A @config's value for a const is checked when the kernel compiles, as a -D value is: a literal (tile tune passes
 * it as a define), of the const's declared type, or of its default's kind (@config(BLOCK="x") compiled, and only
 * tile tune failed when it reached that configuration). */
Test(lang_diag, config_const_values) {
    expect_diag("@config(BLOCK=\"x\")\nkernel k(x: *f32, const BLOCK: i32 = 64) {\n}\n",
                "t.tile:1:15: error: 'BLOCK' is i32, but its value is the string \"x\"\n"
                "  @config(BLOCK=\"x\")\n"
                "                ^\n");
    expect_diag("@config(BLOCK=64)\n@config(BLOCK=64.5)\nkernel k(x: *f32, const BLOCK: i32 = 64) {\n}\n",
                "t.tile:2:15: error: 'BLOCK' is i32, but its value 64.5 is not an integer\n"
                "  @config(BLOCK=64.5)\n"
                "                ^\n");
    expect_diag("@config(BLOCK=2 * 32)\nkernel k(x: *f32, const BLOCK: i32 = 64) {\n}\n",
                "t.tile:1:15: error: '@config' value of 'BLOCK' must be a literal (a number, true, false, a type or a string): "
                "tile tune passes it as a define\n"
                "  @config(BLOCK=2 * 32)\n"
                "                ^\n");
    expect_diag("@config(BLOCK=\"x\")\nkernel k(x: *f32, const BLOCK = 64) {\n}\n",
                "t.tile:1:15: error: '@config' gives 'BLOCK' a string, but its default is an integer\n"
                "  @config(BLOCK=\"x\")\n"
                "                ^\n");
    expect_diag("const ACT = \"none\";\n@config(ACT=1)\nkernel k(x: *f32) {\n}\n",
                "t.tile:2:13: error: '@config' gives 'ACT' an integer, but its value is a string\n"
                "  @config(ACT=1)\n"
                "              ^\n");
    expect_ok("const C = 2.0;\n@config(B=128, F=2, T=f32, S=\"y\", C=3, W=-1)\n"
              "kernel k(x: *f32, const B: i32 = 64, const F = 1.5, const T = f16, const S = \"s\", const U = T, const W: i8 = 1) {\n}\n");
}

/* full's constant value must be exact in an integer dtype, as `let i: i32 = 1.5` must (and Triton's tl.full):
 * full([4], 1.5, i32) silently filled 1, and 1e10 or inf saturated to i32's largest. */
Test(lang_diag, full_of_an_integer_dtype_takes_an_exact_value) {
    expect_diag("kernel k(o: *i32) {\n    store(o + arange(0, 4), full([4], 1.5, i32));\n}\n",
                "t.tile:2:39: error: 'full' of i32: the value 1.5 is not an integer\n"
                "      store(o + arange(0, 4), full([4], 1.5, i32));\n"
                "                                        ^\n");
    expect_diag("kernel k(o: *i32) {\n    store(o + arange(0, 4), full([4], 1e10, i32));\n}\n",
                "t.tile:2:39: error: 'full' of i32: the value 10000000000 is not in its range\n"
                "      store(o + arange(0, 4), full([4], 1e10, i32));\n"
                "                                        ^\n");
    expect_diag("kernel k(o: *u8) {\n    store(o + arange(0, 4), full([4], -1.0, u8));\n}\n",
                "t.tile:2:39: error: 'full' of u8: the value -1 is not in its range\n"
                "      store(o + arange(0, 4), full([4], -1.0, u8));\n"
                "                                        ^\n");
    Result r = compile("kernel k(o: *i32, u: *u8) {\n    store(o + arange(0, 4), full([4], 3.0, i32));\n"
                       "    store(u + arange(0, 4), full([4], 255.0, u8));\n}\n");
    cr_assert_not_null(r.m, "%s", r.diags);
    cr_expect(strstr(r.ir, "const {value=3} : tensor<4xi32") && strstr(r.ir, "const {value=255} : tensor<4xu8"), "%s", r.ir);
    result_free(&r);
}

/* full()'s constant and a declared type's share one exactness rule (gen_ct_exact_in): each integer dtype's ends
 * as floats are exact, one past them is out of range, and an infinity is not an integer, for both. */
Test(lang_diag, exactness_at_the_ends_of_each_integer_type) {
    const struct {
        const char *value, *ty, *full_err, *let_err; /* NULL: compiles */
    } cases[] = {
        {"2147483647.0", "i32", NULL, NULL},
        {"-2147483648.0", "i32", NULL, NULL},
        {"2147483648.0", "i32", "'full' of i32: the value 2147483648 is not in its range", "'x' is i32, but its value 2147483648 does not fit"},
        {"255.0", "u8", NULL, NULL},
        {"256.0", "u8", "'full' of u8: the value 256 is not in its range", "'x' is u8, but its value 256 does not fit"},
        {"-0.0", "u8", NULL, NULL},
        {"9223372036854775808.0", "i64", "'full' of i64: the value 9.223372036854776e+18 is not in its range",
         "'x' is i64, but its value 9.223372036854776e+18 does not fit"},
        {"-9223372036854775808.0", "i64", NULL, NULL},
        {"18446744073709551616.0", "u64", "'full' of u64: the value 1.8446744073709552e+19 is not in its range",
         "'x' is u64, but its value 1.8446744073709552e+19 does not fit"},
        {"1e300 * 1e300", "i32", "the value inf is not an integer", "its value inf is not an integer"},
        {"0.5", "u64", "'full' of u64: the value 0.5 is not an integer", "'x' is u64, but its value 0.5 is not an integer"},
        /* a float is written as Python's repr writes it, the shortest digits that read back (not 2.7000000000000002) */
        {"2.7", "i32", "'full' of i32: the value 2.7 is not an integer", "'x' is i32, but its value 2.7 is not an integer"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        for (int form = 0; form < 2; form++) {
            char src[512];
            if (form == 0)
                snprintf(src, sizeof src, "kernel k(o: *%s) {\n    store(o + arange(0, 4), full([4], %s, %s));\n}\n", cases[i].ty,
                         cases[i].value, cases[i].ty);
            else snprintf(src, sizeof src, "kernel k(o: *%s) {\n    let x: %s = %s;\n    store(o, x);\n}\n", cases[i].ty, cases[i].ty, cases[i].value);
            const char *want = form == 0 ? cases[i].full_err : cases[i].let_err;
            Result r = compile(src);
            if (!want) cr_expect_not_null(r.m, "%s: %s", src, r.diags);
            else cr_expect(!r.m && strstr(r.diags, want), "%s: want '%s' in:\n%s", src, want, r.diags);
            result_free(&r);
        }
    }
}

/* A typed scalar (a held or cast constant) is refused in '/' and '%' with an operand of the other signedness, as two
 * run-time values are and as Triton refuses them (it computed (200 as u32) % (3 as i64) in i64). */
Test(lang_diag, typed_constants_of_different_signedness) {
    expect_diag("kernel k(p: *i64) {\n    store(p, (200 as u32) % (3 as i64));\n}\n",
                "t.tile:2:27: error: '%' of 'u32' and 'i64': integers of different signedness are refused, as Triton refuses them; "
                "cast one operand to the other's signedness ('a % (b as u32)')\n"
                "      store(p, (200 as u32) % (3 as i64));\n"
                "                            ^\n");
    expect_diag("kernel k(p: *i64) {\n    let t = true;\n    store(p, t % -7);\n}\n",
                "t.tile:3:16: error: '%' of an i1 and the integer constant -7 is refused, as Triton refuses it (the constant is "
                "signed, the i1 unsigned); cast the i1 first ('(b as i32) % ...')\n"
                "      store(p, t % -7);\n"
                "                 ^\n");
    expect_ok("kernel k(p: *i64) {\n    let a = -7;\n    store(p, a % (2 as i64));\n    store(p + 1, (200 as u32) % 3);\n}\n");
}

/* A typed `let` (or a parameter's, a const's or an argument's declared type) of a written finite constant that the
 * float type overflows to an infinity is warned about, as a store of it is (it was silent: `let x: f16 = 1e10` was
 * inf); 65504 as f16, an infinity written as such, a held constant and the saturating f8 types are not. */
Test(lang_diag, declared_float_overflow) {
    expect_warnings("fn f(v: bf16) { return v; }\nkernel k(a: *f16, b: *bf16, e: *f8e4m3) {\n    let x: f16 = 1e10;\n"
                    "    let y: f16 = -70000;\n    store(b, f(1e39));\n    let w: f16 = 65504.0;\n    let i: f16 = 1.0 / 0.0;\n"
                    "    let h = 1e10;\n    let z: f16 = h;\n    let s: f8e4m3 = 1000.0;\n    store(a, x + y + w + i + z);\n"
                    "    store(e, s);\n}\n",
                    "t.tile:3:18: warning: 'x' is f16, but its value 10000000000 overflows it to inf (its largest value is 65504)\n"
                    "      let x: f16 = 1e10;\n"
                    "                   ^\n"
                    "t.tile:4:18: warning: 'y' is f16, but its value -70000 overflows it to -inf (its largest value is 65504)\n"
                    "      let y: f16 = -70000;\n"
                    "                   ^\n"
                    "t.tile:5:16: warning: 'v' is bf16, but its value 1e+39 overflows it to inf (its largest value is "
                    "3.3895313892515355e+38)\n"
                    "      store(b, f(1e39));\n"
                    "                 ^\n");
}

/* A const parameter's type that is not one is one error, with or without a -D value (a -D value added "'ACT' is f32,
 * but its value is the string", the type taken as f32 after its error, and the unknown type twice); Python's `str`
 * says that a string is held by an untyped const. */
Test(lang_diag, const_parameter_of_an_unknown_type) {
    const char *src = "kernel k(x: *f32, const ACT: str = \"silu\", const B: int = 3, const H: blah = 1) {\n    store(x, 1.0);\n}\n";
    const char *want =
        "t.tile:1:30: error: unknown type 'str': a string is a compile-time value, held by an untyped const ('const NAME = \"relu\"')\n"
        "  kernel k(x: *f32, const ACT: str = \"silu\", const B: int = 3, const H: blah = 1) {\n"
        "                               ^\n"
        "t.tile:1:53: error: unknown type 'int'; a type is named by its width here: 'i32'\n"
        "  kernel k(x: *f32, const ACT: str = \"silu\", const B: int = 3, const H: blah = 1) {\n"
        "                                                      ^\n"
        "t.tile:1:71: error: unknown type 'blah' (a named type is a compile-time constant whose value is a type: 'const blah = f16;')\n"
        "  kernel k(x: *f32, const ACT: str = \"silu\", const B: int = 3, const H: blah = 1) {\n"
        "                                                                        ^\n";
    expect_diag(src, want);
    LangDefine defs[] = {{"ACT", "relu"}, {"B", "4"}};
    Result r = compile_src("t.tile", src, strlen(src), defs, 2);
    cr_expect_null(r.m);
    cr_expect_str_eq(r.diags, want);
    result_free(&r);
}

/* A compile-time constant is one value wherever its name is seen: a run-time `if` or loop that changes it is an
 * error at the assignment (it became a run-time value, silently, and failed later as "must be a compile-time
 * integer"), and a const both branches declare lives on after the `if` with one value only; one a
 * compile-time `if` keeps stays a const (it became a plain variable, so a `while` over it ran at run time). */
Test(lang_diag, const_changed_at_run_time) {
    /* a const a compile-time `if`'s taken branch declares stays one after it: a `while` over it runs at compile time */
    expect_ok("kernel k(x: *f32, n: i32, const HAS: i32 = 1) {\n"
              "    if HAS { let q: constexpr = 16; }\n"
              "    let L: constexpr = 0;\n"
              "    while q > 1 { q >>= 1; L += 1; }\n"
              "    store(x + arange(0, 1 << L), 1.0);\n"
              "    if n > 0 { const W = 8; let u: constexpr = W; while u > 1 { u >>= 1; } static_assert(u == 1, \"u\"); }\n"
              "}\n");
    expect_diag(
        "kernel k(x: *i32, n: i32) {\n"
        "    let L: constexpr = 0;\n"
        "    for i in range(0, n) { L += 1; }\n"
        "    if n > 0 { const W = 32; } else { const W = 64; }\n"
        "    if n > 1 { const V = 8; } else { const V = 8; }\n"
        "    store(x + arange(0, V), W);\n"
        "}\n",
        "t.tile:3:28: error: 'L' is a compile-time constant, and a run-time loop cannot change it (in the "
        "loop and after it it would be known only at run time): declare it 'let L = ...' for a run-time "
        "value, or unroll the loop (static_range)\n"
        "      for i in range(0, n) { L += 1; }\n"
        "                             ^\n"
        "t.tile:3:5: note: the loop\n"
        "      for i in range(0, n) { L += 1; }\n"
        "      ^\n"
        "t.tile:6:29: error: unknown name 'W'\n"
        "      store(x + arange(0, V), W);\n"
        "                              ^\n"
        "t.tile:4:16: note: 'W' is declared here, in a block that ends before that use (a block keeps its "
        "names, but for those of a compile-time 'if''s taken branch and those both branches of an 'if' "
        "declare with one type, a 'const' with one value): declare it before the block ('let W = ...;') and "
        "assign it inside\n"
        "      if n > 0 { const W = 32; } else { const W = 64; }\n"
        "                 ^\n");
}

/* Porting gaps, each reported once with the form to write: a const string that names no fn as a combine_fn, a
 * plain-let `_log2` whose run-time loop feeds a compile-time argument (a note at the loop naming the lets; a
 * `range` loop of constants, a note naming static_range),
 * Python's `assert(cond, msg)` tuple, and Python's `not` read with its own precedence (`not x == y` is
 * `!(x == y)`: read as `(!x) == y` it compared an i1 with a pointer, a second error) and before an operand on
 * the next line (black's wrapping; it was a name, then a syntax error). */
Test(lang_diag, porting_gaps_named) {
    expect_diag("kernel k(x: *f32, n: i32) {\n    let w = 1;\n    for i in range(0, 5) { w *= 2; }\n"
                "    store(x + arange(0, w), 1.0);\n}\n",
                "t.tile:4:25: error: 'w' must be a compile-time constant\n"
                "      store(x + arange(0, w), 1.0);\n"
                "                          ^\n"
                "t.tile:3:5: note: this value comes from a 'range' loop, which runs at run time (as Triton's): 'static_range' "
                "unrolls it at compile time\n"
                "      for i in range(0, 5) { w *= 2; }\n"
                "      ^\n");
    expect_diag(
        "fn add(a, b) { return a + b; }\n"
        "fn _log2(const i) {\n"
        "    let log2 = 0;\n"
        "    let n = i;\n"
        "    while n > 1 { n >>= 1; log2 += 1; }\n"
        "    return log2;\n"
        "}\n"
        "kernel k(x: *i32, n: i32, const OP = \"sub\") {\n"
        "    const B = 16;\n"
        "    if n > 0 { B = 32; }\n"
        "    for i in range(0, n) { B += 1; }\n"
        "    let t = reduce(load(x + arange(0, 16)), 0, OP);\n"
        "    let r = arange(0, 1 << _log2(16));\n"
        "    assert(n > 0, \"n\");\n"
        "    let p = not x == x + 1;\n"
        "    let q = (p and not\n"
        "             p);\n"
        "}\n",
        "t.tile:10:16: error: 'B' is a compile-time constant, and a run-time 'if' cannot change it (after "
        "the 'if' it would be known only at run time): declare it 'let B = ...' for a run-time value\n"
        "      if n > 0 { B = 32; }\n"
        "                 ^\n"
        "t.tile:10:5: note: the 'if'\n"
        "      if n > 0 { B = 32; }\n"
        "      ^\n"
        "t.tile:12:48: error: argument 'combine_fn' of 'reduce' must name a fn: 'OP' holds the string \"sub\", "
        "which names no fn of this file\n"
        "      let t = reduce(load(x + arange(0, 16)), 0, OP);\n"
        "                                                 ^\n"
        "t.tile:13:23: error: argument 'end' of 'arange' must be a compile-time constant\n"
        "      let r = arange(0, 1 << _log2(16));\n"
        "                        ^\n"
        "t.tile:5:5: note: this value comes from a 'while' that runs at run time because it assigns the "
        "plain 'let' variables 'n' and 'log2' (Triton's 'n = i' makes a tensor): declare each 'let NAME: "
        "constexpr = ...' or 'const NAME = ...' (Triton's 'n: tl.constexpr = i') and the loop runs at "
        "compile time\n"
        "      while n > 1 { n >>= 1; log2 += 1; }\n"
        "      ^\n"
        "t.tile:14:11: error: 'assert(cond, msg)' asserts a tuple (always true in Python): write 'assert "
        "cond, msg;' or 'device_assert(cond, msg)'\n"
        "      assert(n > 0, \"n\");\n"
        "            ^\n"
        "t.tile:15:13: error: 'not' is written '!' here (Python's 'not')\n"
        "      let p = not x == x + 1;\n"
        "              ^\n"
        "t.tile:16:16: error: 'and' is written '&&' here (Python's 'and')\n"
        "      let q = (p and not\n"
        "                 ^\n"
        "t.tile:16:20: error: 'not' is written '!' here (Python's 'not')\n"
        "      let q = (p and not\n"
        "                     ^\n");
}
