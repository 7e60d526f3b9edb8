/* test_lang_diag.c - the front end's diagnostics, continued from test_lang.c: exact text, location and
 * caret of the errors for atomics' sem/scope, hints, static_assert, inline asm constraints, attributes and
 * the launch values of @config (other languages' spellings: test_lang_diag_foreign.c; constants that do not
 * fit their types: test_lang_diag_const.c). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "include/tile/tile.h"
#include "tests/lang_diag.h"

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
        {"    let a = zeros([4], get_int_dtype(24, true));\n",
         "t.tile:3:38: error: 'get_int_dtype' of 24 bits: the integer types have 1, 8, 16, 32 or 64\n"},
        {"    let a = get_int_dtype(bitwidth(v), n > 0);\n",
         "t.tile:3:40: error: 'signed' of 'get_int_dtype' must be a compile-time integer\n"},
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
    /* a constant bitcast to a pointer: its bits are the typed scalar's, and 7 is an i32 (it was widened to an i64
     * and accepted); one past i32's range is an i64, and `as` widens any integer */
    expect_diag("kernel k(x: *f32) { let p = cast(7, *f32, bitcast=true); store(p, 1.0); }\n",
                "t.tile:1:29: error: bitcast from 'i32' (32 bits) to 'ptr<f32>' (64 bits) changes the width\n"
                "  kernel k(x: *f32) { let p = cast(7, *f32, bitcast=true); store(p, 1.0); }\n"
                "                              ^\n");
    expect_diag("kernel k(x: *f32) { store(bitcast(0, *f32), 1.0); }\n",
                "t.tile:1:27: error: bitcast from 'i32' (32 bits) to 'ptr<f32>' (64 bits) changes the width\n"
                "  kernel k(x: *f32) { store(bitcast(0, *f32), 1.0); }\n"
                "                            ^\n");
    expect_ok("kernel k(x: *f32) { store(cast(4294967296, *f32, bitcast=true), 1.0); store(bitcast(7 as i64, *f32), 2.0);\n"
              "  store(7 as *f32, 3.0); }\n");
    /* Triton's x.to(tl.float32)[:, None] ported as 'x as f32[:, None]': one error naming the parentheses (it was
     * "expected ';'"), and the index is read as if they were there */
    expect_diag("kernel k(x: *f32) { let v = load(x + arange(0, 4)) as f32 [:, None]; }\n",
                "t.tile:1:59: error: an index after 'as' needs parentheses around the cast: '(x as T)[...]' (Triton's "
                "x.to(T)[...]); 'as' binds looser than an index\n"
                "  kernel k(x: *f32) { let v = load(x + arange(0, 4)) as f32 [:, None]; }\n"
                "                                                            ^\n");
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
    /* two of them, as Triton takes them: volatile kept over a hint, the cache modifier over the eviction policy */
    expect_warnings("kernel k(x: *f32) { let v = load(x, cache_modifier=\".cg\", volatile=true); }\n",
                "t.tile:1:52: warning: 'load' takes one of cache_modifier, eviction_policy and volatile=true (PTX has no instruction "
                "with two of them): cache_modifier \".cg\" is dropped, volatile=true kept\n"
                "  kernel k(x: *f32) { let v = load(x, cache_modifier=\".cg\", volatile=true); }\n"
                "                                                     ^\n");
    expect_warnings("kernel k(x: *f32) { store(x, 1.0, cache_modifier=\".cs\", eviction_policy=\"evict_last\"); }\n",
                "t.tile:1:73: warning: 'store' takes one of cache_modifier, eviction_policy and volatile=true (PTX has no instruction "
                "with two of them): eviction_policy \"evict_last\" is dropped, the cache_modifier kept\n"
                "  kernel k(x: *f32) { store(x, 1.0, cache_modifier=\".cs\", eviction_policy=\"evict_last\"); }\n"
                "                                                                          ^\n");
    expect_diag("kernel k(x: *f32) { let v = load(x, cache_modifier=cg); }\n",
                "t.tile:1:52: error: argument 'cache_modifier' of 'load' must be a string such as cache_modifier=\".cg\"\n"
                "  kernel k(x: *f32) { let v = load(x, cache_modifier=cg); }\n"
                "                                                     ^\n");
    /* "" is Triton's default of each (gemlite passes a constexpr meta_evict_policy=''): no hint, so it goes with another */
    expect_ok("kernel k(x: *f32, const P: constexpr = \"\") {\n"
              "    let v = load(x, cache_modifier=\".cg\", eviction_policy=P, padding_option=\"\");\n"
              "    store(x, v, cache_modifier=\"\", eviction_policy=\"evict_first\");\n}\n");
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
                "                                            ^\n"
                "t.tile:1:19: note: 'n' is a run-time parameter: declare it 'const n: i32' for a compile-time one (Triton's 'n: tl.constexpr'), which is no launch argument then\n"
                "  kernel k(x: *f32, n: i32) { static_assert(n > 0); }\n"
                "                    ^\n");
    expect_diag("kernel k(x: *f32) { device_print(x); }\n",
                "t.tile:1:34: error: 'device_print' expects a string literal prefix first, such as device_print(\"x\", x)\n"
                "  kernel k(x: *f32) { device_print(x); }\n"
                "                                   ^\n");
    /* at the message that is not a string */
    expect_diag("kernel k(x: *f32, const B: i32 = 16) { static_assert(B > 8, B); }\n",
                "t.tile:1:61: error: 'static_assert' expects a condition and an optional string literal message, such as "
                "static_assert(n > 0, \"n must be positive\")\n"
                "  kernel k(x: *f32, const B: i32 = 16) { static_assert(B > 8, B); }\n"
                "                                                              ^\n");
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

/* Diagnostics come out in source order, each error's notes right after it.  The lexer reads the whole file
 * before the parser starts, so its error at line 5 was listed before the parser's at lines 2 and 4.  In the
 * second source the unknown name (line 6) is reported before the error that inlining f finds at line 2 (with its
 * note at the call, line 7) and the warning at line 3: they come out 2 (and its note), 3, 6.  The same text from
 * the front end, the C API's diagnostics and `tile compile`. */
Test(lang_diag, source_order) {
    expect_diag("kernel k(x: *f32) {\n    let a = ;\n    store(x, 1.0);\n    let b = 3 @ 4;\n    let c = \"abc;\n}\n",
                "t.tile:2:13: error: expected an expression, found ';'\n"
                "      let a = ;\n"
                "              ^\n"
                "t.tile:4:15: error: expected ';' after 'let' statement, found '@'\n"
                "      let b = 3 @ 4;\n"
                "                ^\n"
                "t.tile:5:13: error: unterminated string literal (a string ends on its line with '\"')\n"
                "      let c = \"abc;\n"
                "              ^\n");
    static const char src[] = "fn f(x) {\n    continue;\n    return x;\n}\nkernel k(p: *f32) {\n    store(p, undefined_name);\n"
                              "    for i in range(3) { let y = f(i); }\n}\n";
    static const char want[] = "t.tile:2:5: error: 'continue' outside a loop (a function cannot leave its caller's loop)\n"
                               "      continue;\n"
                               "      ^\n"
                               "t.tile:7:33: note: in this call of 'f'\n"
                               "      for i in range(3) { let y = f(i); }\n"
                               "                                  ^\n"
                               "t.tile:3:5: warning: this statement follows the 'continue' at line 2 and never runs\n"
                               "      return x;\n"
                               "      ^\n"
                               "t.tile:6:14: error: unknown name 'undefined_name'\n"
                               "      store(p, undefined_name);\n"
                               "               ^\n";
    expect_diag(src, want);
    tile_compile_options o = {.tir_only = 1};
    tile_compiled c;
    cr_expect_eq(tile_compile_source("t.tile", src, &o, &c), TILE_ERROR_COMPILE);
    cr_expect_str_eq(c.diagnostics, want, "the C API's diagnostics");
    tile_compiled_free(&c);
    char dir[] = "/tmp/tile-test-diag-XXXXXX", path[128], cmd[512], out[4096];
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/t.tile", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(src, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' compile --no-cache t.tile 2>&1", dir, TILE_CLI);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    cr_expect_eq(WEXITSTATUS(pclose(p)), 1);
    cr_expect_str_eq(out, want, "tile compile's diagnostics");
    remove(path);
    rmdir(dir);
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
    /* Python's comment and string quotes are read as meant after their error: no second one about them, and the
     * names and values are checked on (the unknown name, the failing static_assert with its message) */
    expect_diag("kernel k(x: *f32) {\n    # scale it\n    store(x, zz);\n}\n",
                "t.tile:2:5: error: '#' does not start a comment here: write '//'\n"
                "      # scale it\n"
                "      ^\n"
                "t.tile:3:14: error: unknown name 'zz'\n"
                "      store(x, zz);\n"
                "               ^\n");
    expect_diag("kernel k(x: *f32) {\n    static_assert(false, 'no');\n}\n",
                "t.tile:2:5: error: static_assert failed: no\n"
                "      static_assert(false, 'no');\n"
                "      ^\n"
                "t.tile:2:26: error: strings are written with double quotes here: \"...\"\n"
                "      static_assert(false, 'no');\n"
                "                           ^\n");
    /* Python's f-string (xformers' static_assert messages): one error at its prefix, then read as the plain string */
    expect_diag("kernel k(x: *f32, const N: i32 = 3) {\n    static_assert(N == 1, f'N is {N}');\n    store(x, zz);\n}\n",
                "t.tile:2:5: error: static_assert failed: N is {N}\n"
                "      static_assert(N == 1, f'N is {N}');\n"
                "      ^\n"
                "t.tile:2:27: error: Python's f-string 'f\"...\"': strings are not formatted here; write a plain \"...\" (static_print "
                "shows compile-time values, device_print run-time ones)\n"
                "      static_assert(N == 1, f'N is {N}');\n"
                "                            ^\n"
                "t.tile:3:14: error: unknown name 'zz'\n"
                "      store(x, zz);\n"
                "               ^\n");
}

Test(lang_diag, combine_returning_a_tensor) {
    /* the message named the element type only: "returns 'i32' where its operands are i32" (probe Z F14) */
    expect_diag("fn f(a, b) { return arange(0, 4); }\nkernel k(x: *f32) { let r = reduce(arange(0, 16), 0, f); }\n",
                "t.tile:2:29: error: combine function 'f' returns 'tensor<4xi32>' where its operands are i32\n"
                "  kernel k(x: *f32) { let r = reduce(arange(0, 16), 0, f); }\n"
                "                              ^\n");
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
    expect_diag("kernel k(p: *f32) {\n    let a = max_contiguous(arange(0, 16) < 4, 16);\n}\n",
                "t.tile:2:28: error: 'max_contiguous' is a hint about integers and pointers, got 'i1'\n"
                "      let a = max_contiguous(arange(0, 16) < 4, 16);\n"
                "                             ^\n");
    expect_diag("kernel k(p: *f32) {\n    let a = max_constancy(zeros([16], f32), 16);\n}\n",
                "t.tile:2:27: error: 'max_constancy' is a hint about integers and pointers (and masks), got 'f32'\n"
                "      let a = max_constancy(zeros([16], f32), 16);\n"
                "                            ^\n");
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
                "                               ^\n"
                "t.tile:1:19: note: 'n' is a run-time parameter: declare it 'const n: i32' for a compile-time one (Triton's 'n: tl.constexpr'), which is no launch argument then\n"
                "  kernel k(x: *f32, n: i32) {\n"
                "                    ^\n");
    expect_diag("kernel k(x: *f32) {\n    for i in static_range(10) { if i > 3 { continue; } }\n}\n",
                "t.tile:2:44: error: 'continue' inside a 'static_range' loop is not supported (its body is unrolled)\n"
                "      for i in static_range(10) { if i > 3 { continue; } }\n"
                "                                             ^\n");
    expect_diag("kernel k(x: *f32) {\n    for i in static_range(0, 100000) { }\n}\n",
                "t.tile:2:5: error: 'static_range' unrolls 100000 iterations, more than 4096: use 'range'\n"
                "      for i in static_range(0, 100000) { }\n"
                "      ^\n");
    /* a `while` over compile-time constants unrolls as static_range does: the same bound, an error in a copy names it */
    expect_diag("kernel k(x: *f32) {\n    const i = 0;\n    while i < 5000 { i += 1; }\n}\n",
                "t.tile:3:5: error: this 'while' runs at compile time (its condition reads compile-time constants that its body "
                "keeps so) and still holds after 4096 iterations: for a run-time loop declare its counter with 'let' (not "
                "'const'), or use 'for ... in range(...)'\n"
                "      while i < 5000 { i += 1; }\n"
                "      ^\n");
    expect_diag("kernel k(x: *f32) {\n    let i: constexpr = 0;\n    while i < 3 { let t = zeros([16 >> i], f32) + arange(0, 8); i += 1; }\n}\n",
                "t.tile:3:49: error: shapes [16] and [8] do not broadcast\n"
                "      while i < 3 { let t = zeros([16 >> i], f32) + arange(0, 8); i += 1; }\n"
                "                                                  ^\n"
                "t.tile:3:5: note: in iteration 1 of the 'while' loop, which runs at compile time\n"
                "      while i < 3 { let t = zeros([16 >> i], f32) + arange(0, 8); i += 1; }\n"
                "      ^\n");
    expect_diag("kernel k(x: *f32) {\n    for i in static_range(0, 4) { return; }\n}\n",
                "t.tile:2:35: error: 'return' inside a 'for' loop is not supported (as in Triton: no 'return' inside 'for' or 'while' statements)\n"
                "      for i in static_range(0, 4) { return; }\n"
                "                                    ^\n");
    /* an error in an unrolled copy whose body reads the variable says which copy (it may hold for one value only);
     * the 'return' above, whose body does not, has no such note */
    expect_diag("kernel k(x: *f32) {\n    for i in static_range(0, 3) {\n        let t = zeros([16 >> i], f32) + arange(0, 8);\n    }\n}\n",
                "t.tile:3:39: error: shapes [16] and [8] do not broadcast\n"
                "          let t = zeros([16 >> i], f32) + arange(0, 8);\n"
                "                                        ^\n"
                "t.tile:2:5: note: in the unrolled copy with i = 0\n"
                "      for i in static_range(0, 3) {\n"
                "      ^\n");
    expect_diag("kernel k(x: *f32) {\n    for v in (1.0, arange(0, 8)) {\n        let t = v + arange(0, 16);\n    }\n}\n",
                "t.tile:3:19: error: shapes [8] and [16] do not broadcast\n"
                "          let t = v + arange(0, 16);\n"
                "                    ^\n"
                "t.tile:2:5: note: in copy 2 of 2 of the unrolled loop\n"
                "      for v in (1.0, arange(0, 8)) {\n"
                "      ^\n");
}

/* range()'s keywords are Triton's tl.range's, compile-time; static_range takes none. */
Test(lang_diag, range_keywords) {
    expect_diag("kernel k(x: *f32, n: i32) {\n    for i in range(0, n, num_stage=2) { }\n}\n",
                "t.tile:2:26: error: 'range' has no argument 'num_stage' (its keywords: num_stages, loop_unroll_factor, "
                "flatten, disallow_acc_multi_buffer, warp_specialize)\n"
                "      for i in range(0, n, num_stage=2) { }\n"
                "                           ^\n");
    expect_diag("kernel k(x: *f32, n: i32) {\n    for i in range(0, n, num_stages=n) { }\n}\n",
                "t.tile:2:37: error: 'range' argument 'num_stages' must be a compile-time integer\n"
                "      for i in range(0, n, num_stages=n) { }\n"
                "                                      ^\n");
    expect_diag("kernel k(x: *f32) {\n    for i in static_range(0, 4, num_stages=2) { }\n}\n",
                "t.tile:2:33: error: 'static_range' takes no keyword arguments\n"
                "      for i in static_range(0, 4, num_stages=2) { }\n"
                "                                  ^\n");
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

/* A conditional on a run-time condition between tuples of one structure chooses each element (it was an error asking for
 * an `if`; lang_run/ternary_between_tuples runs it); tuples of two structures, a tuple and a value, or tuples whose
 * types differ are an error at the conditional naming both sides, on a scalar and on a tile condition, and a tuple
 * holding a block pointer one at its side.  On a compile-time condition it picks its tuple, whatever the other. */
Test(lang_diag, conditional_between_tuples) {
    expect_ok("kernel k(x: *f32, n: i32) {\n    let u = (1.0, (2, x)) if n > 0 else (load(x), (n, x + 1));\n"
              "    store(u[1][1], u[0] + u[1][0]);\n}\n");
    expect_diag("kernel k(x: *f32, n: i32) {\n    let u = (1.0, 2.0) if n > 0 else (3.0, (4.0, 5.0));\n    store(x, u[1]);\n}\n",
                "t.tile:2:13: error: the sides of this conditional are '(f32, f32)' and '(f32, (f32, f32))': a conditional on a "
                "run-time condition chooses between tuples of one structure\n"
                "      let u = (1.0, 2.0) if n > 0 else (3.0, (4.0, 5.0));\n"
                "              ^\n");
    expect_diag("kernel k(x: *f32, n: i32) {\n    let u = (load(x), 2.0) if n > 0 else 3.0;\n    store(x, u[1]);\n}\n",
                "t.tile:2:13: error: the sides of this conditional are '(f32, f32)' and 'f32': a conditional on a run-time "
                "condition chooses between tuples of one structure\n"
                "      let u = (load(x), 2.0) if n > 0 else 3.0;\n"
                "              ^\n");
    expect_diag("kernel k(x: *f32, n: i32) {\n    let u = (1.0, f32) if n > 0 else (2.0, i32);\n    store(x, u[0]);\n}\n",
                "t.tile:2:13: error: the sides of this conditional are tuples '(f32, type)' that differ in an element a run-time "
                "condition cannot choose (a type, a shape, a string, None or a function)\n"
                "      let u = (1.0, f32) if n > 0 else (2.0, i32);\n"
                "              ^\n");
    expect_diag("kernel k(x: *f32) {\n    let v = load(x + arange(0, 16));\n    let (a, b) = (v, 1.0) if v > 0.0 else (v,);\n"
                "    store(x, a);\n}\n",
                "t.tile:3:18: error: the sides of this conditional are '(f32, f32)' and '(f32,)': a conditional on a run-time "
                "condition chooses between tuples of one structure\n"
                "      let (a, b) = (v, 1.0) if v > 0.0 else (v,);\n"
                "                   ^\n");
    expect_diag("kernel k(x: *f32, n: i32) {\n    let b = make_block_ptr(x, (n, n), (n, 1), (0, 0), (16, 16), (1, 0));\n"
                "    let (d, m) = (b, 1.0) if n > 4 else (advance(b, (16, 0)), 2.0);\n    store(x, m);\n}\n",
                "t.tile:3:18: error: a conditional on a run-time condition chooses between tuples of values, not of block "
                "pointers: choose in an 'if' (let t = b; if cond { t = a; })\n"
                "      let (d, m) = (b, 1.0) if n > 4 else (advance(b, (16, 0)), 2.0);\n"
                "                   ^\n");
    expect_ok("kernel k(x: *f32, const H: i1 = true) {\n    let u = (1.0, 2.0) if H else (3.0, None);\n    store(x, u[1]);\n}\n");
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

/* A kernel's name is its own among the program's kernels, functions and file-level consts (a fn and a kernel
 * of one name compiled, the body's calls reaching the fn); a standard-library function's or a built-in's name
 * may be a kernel's. */
Test(lang_diag, kernel_name_clashes) {
    expect_diag("kernel f(o: *f32) { store(o, 1.0); }\nfn f(x) { return x; }\n",
                "t.tile:2:4: error: 'f' is both a kernel and a function: rename one\n  fn f(x) { return x; }\n     ^\n"
                "t.tile:1:8: note: the kernel 'f' is here\n  kernel f(o: *f32) { store(o, 1.0); }\n         ^\n");
    expect_diag("const f = 2;\nkernel f(o: *f32) { store(o, 1.0); }\n",
                "t.tile:2:8: error: 'f' is both a kernel and a const: rename one\n  kernel f(o: *f32) { store(o, 1.0); }\n         ^\n"
                "t.tile:1:7: note: the const 'f' is here\n  const f = 2;\n        ^\n");
    expect_diag("kernel k(o: *f32) { store(o, 1.0); }\nkernel k(o: *f32) { store(o, 2.0); }\n",
                "t.tile:2:8: error: redefinition of kernel 'k'\n  kernel k(o: *f32) { store(o, 2.0); }\n         ^\n"
                "t.tile:1:8: note: the first kernel 'k' is here\n  kernel k(o: *f32) { store(o, 1.0); }\n         ^\n");
    expect_ok("kernel softmax(o: *f32) {\n    let x = arange(0, 4) as f32;\n"
              "    store(o + arange(0, 4), reshape(softmax(x[None, :], 1), [4]));\n}\nkernel sum(o: *f32) { store(o, 1.0); }\n");
}

/* A name defined twice: the error at the second, a note at the first. */
Test(lang_diag, redefinition_notes_the_first) {
    expect_diag("fn f(x) {\n    return x;\n}\nfn f(x) {\n    return x;\n}\nkernel k(o: *f32) { store(o, f(1.0)); }\n",
                "t.tile:4:4: error: redefinition of 'f'\n  fn f(x) {\n     ^\n"
                "t.tile:1:4: note: 'f' is first defined here\n  fn f(x) {\n     ^\n");
}

/* Assigning to an element, a slice or a call: one error at the '=' that says what to write instead, and
 * parsing goes on at the next statement (it was "expected ';' after expression, found '='"). */
Test(lang_diag, assignment_to_an_expression) {
    expect_diag("kernel k(x: *f32) {\n    let a = arange(0, 16);\n    a[:, None] = 1;\n    load(x) += 2.0;\n    store(x + a, a);\n}\n",
                "t.tile:3:16: error: cannot assign to an element or slice: tensors are values here; build the new one "
                "(`where(arange(0, N) == i, v, a)`) or store to memory\n      a[:, None] = 1;\n                 ^\n"
                "t.tile:4:13: error: cannot assign to this expression: only a variable or a tuple of variables `(a, b)` can be "
                "assigned\n      load(x) += 2.0;\n              ^\n");
    /* a[i] = v parses (a tuple's element is assigned so); of a tensor it is an error once names are known */
    expect_diag("kernel k(x: *f32) {\n    let a = arange(0, 16);\n    a[0] = 1;\n    store(x + a, a);\n}\n",
                "t.tile:3:10: error: cannot assign to an element of 'a', a 'tensor<16xi32>': tensors are values here; build the new one "
                "(`where(arange(0, N) == i, v, a)`) or store to memory (a tuple's elements are assigned: `t[i] = v`)\n"
                "      a[0] = 1;\n           ^\n");
}

/* `t[i] += v` where one of the element and v is a tuple or list and the other is not: one error at the '+=' naming
 * the element, both kinds and how to replace the element (it was "'+' concatenates a tuple with a tuple, not with
 * 'i32'", of a number element and a list) */
Test(lang_diag, tuple_element_add_assign_of_another_kind) {
    expect_diag("kernel k(p: *f32) {\n    let t = (1, 2.0);\n    t[0] += [1, 2];\n    store(p, t[1]);\n}\n",
                "t.tile:3:10: error: '+=' on t[0], an 'i32', with a list: '+' adds numbers and tensors or concatenates tuples and "
                "lists, not one with the other (to replace the element, assign it: `t[0] = ...`)\n"
                "      t[0] += [1, 2];\n           ^\n");
    expect_diag("kernel k(p: *f32) {\n    let t = ((1, 2), 2.0);\n    t[0] += 3;\n    store(p, t[1]);\n}\n",
                "t.tile:3:10: error: '+=' on t[0], a tuple of 2 values, with an 'i32': '+' adds numbers and tensors or concatenates "
                "tuples and lists, not one with the other (to replace the element, assign it: `t[0] = ...`; a one-element tuple is "
                "written (x,))\n      t[0] += 3;\n           ^\n");
}

/* Is s valid UTF-8 (no character cut in two)? */
static bool utf8_whole(const char *s) { /* no overlong forms, surrogates or code points past U+10FFFF either */
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int n = *p < 0x80 ? 1 : (*p & 0xE0) == 0xC0 ? 2 : (*p & 0xF0) == 0xE0 ? 3 : (*p & 0xF8) == 0xF0 ? 4 : 0;
        if (!n) return false;
        unsigned v = *p & (0xFFu >> (n + 1));
        for (int i = 1; i < n; i++) {
            if ((p[i] & 0xC0) != 0x80) return false;
            v = v << 6 | (p[i] & 0x3Fu);
        }
        if ((n == 2 && v < 0x80) || (n == 3 && v < 0x800) || (n == 4 && v < 0x10000) || (v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF)
            return false;
        p += n;
    }
    return true;
}

/* A name or a value as long as the input is cut in a message to its first 120 and last 40 bytes around
 * "...(N bytes cut)..." (between UTF-8 characters), in the message and in a define's "<-D NAME>" file name;
 * a message over 16384 bytes (the valid names of 5000 const parameters) ends after them with "...(N bytes cut)".
 * A 1 MB -D name gave a 2 MB message. */
Test(lang_diag, long_names_are_cut_in_messages) {
    enum { L = 1 << 20 };
    char *name = malloc(L + 2);
    cr_assert(name);
    name[0] = 'x';
    for (int i = 1; i + 1 < L; i += 2) name[i] = (char)0xC3, name[i + 1] = (char)0xA9; /* é */
    name[L - 1] = 'z', name[L] = 0;
    LangDefine def = {name, "3"};
    const char *k = "kernel k(p: *i32, const B: i32 = 1) { store(p, B); }\n";
    Result r = compile_src("t.tile", k, strlen(k), &def, 1);
    cr_expect_null(r.m);
    cr_expect(!strncmp(r.diags, "error: -D x\xC3\xA9", 13) && strstr(r.diags, " bytes cut)...\xC3\xA9"), "%.2000s", r.diags);
    cr_expect(strstr(r.diags, "\xC3\xA9z: no kernel of t.tile has a const parameter x\xC3\xA9"), "%.2000s", r.diags);
    cr_expect_lt(strlen(r.diags), 1000, "%zu bytes", strlen(r.diags));
    cr_expect(utf8_whole(r.diags), "%.2000s", r.diags);
    result_free(&r);

    /* a file-level const of that name, set to a value that does not parse: "<-D NAME>" is cut too */
    Str s = {0};
    memset(name, 'y', 5000), name[5000] = 0;
    str_printf(&s, "const %s: i32 = 1;\nkernel k(p: *i32) { store(p, %s); }\n", name, name);
    LangDefine bad = {name, "1+"};
    r = compile_src("t.tile", s.buf, s.len, &bad, 1);
    cr_expect(!strncmp(r.diags, "<-D yyyy", 8) && strstr(r.diags, " bytes cut)...yyyy") &&
              strstr(r.diags, "yyyy>:1:1: error: invalid value '1+'"), "%.2000s", r.diags);
    cr_expect_lt(strlen(r.diags), 1000, "%zu bytes", strlen(r.diags));
    result_free(&r);

    s.len = 0;
    str_puts(&s, "kernel k(p: *i32");
    for (int i = 0; i < 5000; i++) str_printf(&s, ", const P_%d: i32 = 1", i);
    str_puts(&s, ") { store(p, 1); }\n");
    LangDefine nope = {"nope", "1"};
    r = compile_src("t.tile", s.buf, s.len, &nope, 1);
    const char *end = r.diags + strlen(r.diags);
    cr_expect(strstr(r.diags, "(valid: P_0, P_1, P_2,") && strlen(r.diags) < 16500 && !strcmp(end - 12, " bytes cut)\n"),
              "%zu bytes: ...%s", strlen(r.diags), end - (end - r.diags > 200 ? 200 : end - r.diags));
    result_free(&r);
    str_free(&s);
    free(name);
}

/* Bytes that are not UTF-8 text: a surrogate (ED A0 80), a code point past U+10FFFF (F4 90 80 80) and an
 * overlong form (E0 80 AF) are stray bytes, not characters (they were named as characters, their bytes copied
 * into the message); such bytes in a string or a name that a message quotes, and in the source line shown,
 * print as '?', so the diagnostics are UTF-8 text (Python's str of them).  A word of continuation bytes after a
 * space in a message (a keyword's string value) cut past its start: the heap was overwritten. */
Test(lang_diag, bytes_that_are_not_utf8) {
    expect_diag("kernel k(x: *f32) {\n    \xed\xa0\x80 store(x, 1.0);\n}\n",
                "t.tile:2:5: error: unexpected byte 0xed (not UTF-8 text)\n"
                "      ??? store(x, 1.0);\n"
                "      ^\n");
    expect_diag("kernel k(x: *f32) {\n    \xf4\x90\x80\x80 store(x, 1.0);\n}\n",
                "t.tile:2:5: error: unexpected byte 0xf4 (not UTF-8 text)\n"
                "      ???? store(x, 1.0);\n"
                "      ^\n");
    expect_diag("kernel k(x: *f32) {\n    \xe0\x80\xaf store(x, 1.0);\n}\n",
                "t.tile:2:5: error: unexpected byte 0xe0 (not UTF-8 text)\n"
                "      ??? store(x, 1.0);\n"
                "      ^\n");
    /* the caret counts a stray byte as one cell, a character as one */
    expect_diag("kernel k(x: *f32) {\n    \"\xff\xce\xb1\"; store(x, zz);\n}\n",
                "t.tile:2:21: error: unknown name 'zz'\n"
                "      \"?\xce\xb1\"; store(x, zz);\n"
                "                     ^\n");
    expect_diag("kernel k(x: *f32) {\n    store(x, 1.0, cache_modifier=\"\xff\xfe\");\n}\n",
                "t.tile:2:34: error: unknown cache_modifier \"??\" of 'store': expected \".wb\", \".cg\", \".cs\" or \".wt\"\n"
                "      store(x, 1.0, cache_modifier=\"??\");\n"
                "                                   ^\n");
    Str src = {0};
    str_puts(&src, "kernel k(x: *f32) {\n    store(x, 1.0, cache_modifier=\" ");
    for (int i = 0; i < 400; i++) str_putc(&src, (char)0x80);
    str_puts(&src, "\");\n}\n");
    Result r = compile(src.buf);
    cr_expect_null(r.m);
    cr_expect(strstr(r.diags, "t.tile:2:34: error: unknown cache_modifier \" ????") && strstr(r.diags, " bytes cut)...????"), "%s", r.diags);
    cr_expect(utf8_whole(r.diags), "%s", r.diags);
    result_free(&r);
    str_free(&src);
}

/* A string of the source with control characters (Python's escapes make them) keeps a message on one line: each is
 * written as an escape, as the string was (the message printed over several lines, breaking file:line:col: form). */
Test(lang_diag, control_characters_in_messages_are_escaped) {
    expect_diag("kernel k(x: *f32) {\n    static_assert(false, \"one\\ntwo\\tthree\\rfour\");\n}\n",
                "t.tile:2:5: error: static_assert failed: one\\ntwo\\tthree\\rfour\n"
                "      static_assert(false, \"one\\ntwo\\tthree\\rfour\");\n"
                "      ^\n");
    expect_diag("kernel k(x: *f32) {\n    store(x, 1.0, cache_modifier=\"\x01.cg\x7f\");\n}\n",
                "t.tile:2:34: error: unknown cache_modifier \"\\x01.cg\\x7f\" of 'store': expected \".wb\", \".cg\", \".cs\" or \".wt\"\n"
                "      store(x, 1.0, cache_modifier=\"?.cg?\");\n"
                "                                   ^\n");
}

/* Statements after a return, break or continue of the same block never run (Triton skips them too): one warning a
 * block, at the first of them, naming the jump; the kernel still compiles.  A jump inside an `if` does not make the
 * statements after the `if` unreachable, unless every branch of an if/else ends in one. */
Test(lang_diag, statements_after_a_jump_warn) {
    expect_warnings("fn f(x) { return x; let y = x + 1.0; return y; }\n"
                    "kernel k(x: *f32) {\n"
                    "    for i in range(0, 4) { if i == 2 { continue; let z = 1; } store(x, f(1.0)); }\n"
                    "    while true { break; }\n"
                    "}\n",
                    "t.tile:1:21: warning: this statement follows the 'return' at line 1 and never runs\n"
                    "  fn f(x) { return x; let y = x + 1.0; return y; }\n"
                    "                      ^\n"
                    "t.tile:3:50: warning: this statement follows the 'continue' at line 3 and never runs\n"
                    "      for i in range(0, 4) { if i == 2 { continue; let z = 1; } store(x, f(1.0)); }\n"
                    "                                                   ^\n");
    expect_warnings("kernel k(x: *f32, n: i32) {\n    if n > 2 { return; }\n    store(x, 1.0);\n}\n", "");
    /* an if/else every branch of which (an else-if chain's too) ends in a jump: what follows never runs */
    expect_warnings("fn f(x, n) {\n"
                    "    if n > 3 { return x * 2.0; } else if n > 1 { let y = x; return y; } else { return x; }\n"
                    "    return x + 5.0;\n"
                    "}\n"
                    "kernel k(x: *f32, n: i32) {\n"
                    "    for i in range(0, n) { if i == n { break; } else { continue; } store(x, 2.0); }\n"
                    "    if n > 2 { store(x, f(1.0, n)); } else { return; }\n"
                    "    store(x, 1.0);\n"
                    "}\n",
                    "t.tile:3:5: warning: this statement follows the 'if' at line 2, whose branches all end in a 'return', "
                    "'break' or 'continue', and never runs\n"
                    "      return x + 5.0;\n"
                    "      ^\n"
                    "t.tile:6:68: warning: this statement follows the 'if' at line 6, whose branches all end in a 'return', "
                    "'break' or 'continue', and never runs\n"
                    "      for i in range(0, n) { if i == n { break; } else { continue; } store(x, 2.0); }\n"
                    "                                                                     ^\n");
}

/* The nesting limits (docs/language.md, Diagnostics) say which limit was passed and where: 200 levels of
 * parentheses, blocks and statements in the parser, 1000 levels of operands in code generation (`as` chains, which
 * the parser builds in a loop, reach it first). */
Test(lang_diag, nesting_limits_name_themselves) {
    Str src = {0};
    str_puts(&src, "kernel k(x: *f32) {\n  let y = ");
    for (int i = 0; i < 300; i++) str_putc(&src, '(');
    str_puts(&src, "1.0");
    for (int i = 0; i < 300; i++) str_putc(&src, ')');
    str_puts(&src, ";\n  store(x, y);\n}\n");
    Result r = compile(src.buf);
    cr_expect_null(r.m);
    cr_expect(strstr(r.diags, "t.tile:2:210: error: parentheses, blocks or statements nested too deeply (more than 200 levels)"), "%s",
              r.diags);
    /* one error: the rest of the kernel (its `store` and `}`, past a nest whose end is unknown) is skipped, not read
     * as top-level declarations ("expected 'kernel', 'fn', ..., found 'store'") */
    const char *e1 = strstr(r.diags, "error:");
    cr_expect(e1 && !strstr(e1 + 1, "error:"), "%s", r.diags);
    result_free(&r);
    str_puts(&src, "kernel k2(x: *f32) {\n  let z = ;\n}\n"); /* a later kernel's errors are still reported */
    r = compile(src.buf);
    cr_expect(strstr(r.diags, "t.tile:6:11: error: expected an expression"), "%s", r.diags);
    result_free(&r);
    src.len = 0;
    str_puts(&src, "kernel k(x: *f32) {\n  let y = 1.0");
    for (int i = 0; i < 1500; i++) str_puts(&src, " as f32");
    str_puts(&src, ";\n  store(x, y);\n}\n");
    r = compile(src.buf);
    cr_expect_null(r.m);
    cr_expect(strstr(r.diags, "t.tile:2:11: error: expression nested too deeply (more than 1000 levels of operands, calls inlined)"),
              "%s", r.diags);
    result_free(&r);
    str_free(&src);
}

/* NumPy's `x[..., None]`: one error naming the Ellipsis and what to write (it was "unexpected character '.'", and
 * the reference named `x[..., None]` as a form of the language).  A dot of a 3-D and a 2-D operand names the
 * batched form, which the message left out. */
Test(lang_diag, ellipsis_and_dot_ranks) {
    expect_diag("kernel k(x: *f32) {\n    let a = zeros([16, 4], f32);\n    let b = a[..., None];\n}\n",
                "t.tile:3:15: error: there is no '...' (Python's Ellipsis) here: index a tensor with one ':' for each dimension it "
                "keeps (x[:, :, None] of a 2-D x)\n"
                "      let b = a[..., None];\n"
                "                ^\n");
    expect_diag("kernel k(x: *f32) {\n    let a = dot(zeros([2, 16, 16], f32), zeros([16, 16], f32));\n}\n",
                "t.tile:2:13: error: dot: operands must be 2-D tensors (or both 3-D: a batched dot), got [2, 16, 16] and [16, 16]\n"
                "      let a = dot(zeros([2, 16, 16], f32), zeros([16, 16], f32));\n"
                "              ^\n");
    expect_ok("kernel k(x: *f32) {\n    let a = zeros([16, 4], f32);\n    let b = a[:, :, None];\n"
              "    store(x + arange(0, 16)[:, None, None] * 4 + arange(0, 4)[None, :, None], b);\n}\n");
}

/* Python's def rule for a fn: a parameter without a default after one with a default is an error at it (the
 * fn was accepted and a call giving the first only said "'f' expects 2 to 3 arguments, got 1").  A kernel's
 * const parameter without a default may follow one with a default (its value comes from -D). */
Test(lang_diag, fn_parameter_without_default_after_default) {
    expect_diag("fn f(a, b = 2.0, c) { return a + b + c; }\nkernel k(x: *f32) {\n    store(x, f(1.0, c=1.0));\n}\n",
                "t.tile:1:18: error: parameter 'c' has no default but follows 'b', which has one (as in Python): give it a default or "
                "put it before 'b'\n"
                "  fn f(a, b = 2.0, c) { return a + b + c; }\n"
                "                   ^\n");
    expect_ok("fn f(a, b = 2.0, c = None, const D = 2) { return a + b * D; }\nkernel k(x: *f32) {\n    store(x, f(1.0, c=1.0));\n}\n");
    Result r = compile("kernel k(x: *f32, const A: i32 = 2, const B: i32, n: i32) {\n    store(x, 1.0);\n}\n");
    cr_expect(strstr(r.diags, "const parameter 'B' has no default and is not defined (-D B=...)") && !strstr(r.diags, "follows"), "%s",
              r.diags);
    result_free(&r);
}

/* Reductions along a tuple of axes (sum(x, axis=(0, 1))): each axis compile-time, in range and given once; the
 * reductions along one axis only (argmax, cumsum, max with indices) reject a tuple. */
Test(lang_diag, reduce_several_axes) {
    expect_diag("kernel k(p: *f32) { let a = load(p + arange(0, 4)[:, None] + arange(0, 4)[None, :]); store(p, sum(a, axis=(0, 2))); }\n",
                "t.tile:1:107: error: axis 2 is out of range for a tensor of rank 2\n"
                "  kernel k(p: *f32) { let a = load(p + arange(0, 4)[:, None] + arange(0, 4)[None, :]); store(p, sum(a, axis=(0, 2))); }\n"
                "                                                                                                            ^\n");
    expect_diag("kernel k(p: *f32) { let a = load(p + arange(0, 4)[:, None] + arange(0, 4)[None, :]); store(p, max(a, (1, -1))); }\n",
                "t.tile:1:102: error: axis 1 is given twice in the axes of 'max'\n"
                "  kernel k(p: *f32) { let a = load(p + arange(0, 4)[:, None] + arange(0, 4)[None, :]); store(p, max(a, (1, -1))); }\n"
                "                                                                                                       ^\n");
    expect_diag("kernel k(p: *f32, n: i32) { let a = load(p + arange(0, 4)[:, None] + arange(0, 4)[None, :]); store(p, sum(a, axis=(0, n))); }\n",
                "t.tile:1:115: error: an axis of 'sum' must be a compile-time integer\n"
                "  kernel k(p: *f32, n: i32) { let a = load(p + arange(0, 4)[:, None] + arange(0, 4)[None, :]); store(p, sum(a, axis=(0, n))); }\n"
                "                                                                                                                    ^\n");
    expect_diag("kernel k(p: *f32) { let a = load(p + arange(0, 4)[:, None] + arange(0, 4)[None, :]); store(p, argmax(a, (0, 1))); }\n",
                "t.tile:1:105: error: 'argmax' reduces along one axis, not a tuple of them\n"
                "  kernel k(p: *f32) { let a = load(p + arange(0, 4)[:, None] + arange(0, 4)[None, :]); store(p, argmax(a, (0, 1))); }\n"
                "                                                                                                          ^\n");
    expect_diag("kernel k(p: *f32) { let a = load(p + arange(0, 4)[:, None] + arange(0, 4)[None, :]); store(p, xor_sum(a, axis=(0, 1, 0))); }\n",
                "t.tile:1:111: error: axis 0 is given twice in the axes of 'xor_sum'\n"
                "  kernel k(p: *f32) { let a = load(p + arange(0, 4)[:, None] + arange(0, 4)[None, :]); store(p, xor_sum(a, axis=(0, 1, 0))); }\n"
                "                                                                                                                ^\n");
    expect_diag("kernel k(p: *f32) { let a = load(p + arange(0, 4)[:, None] + arange(0, 4)[None, :]); store(p, sum(a, axis=(0, 1) * 0)); }\n",
                "t.tile:1:107: error: 'sum' along an empty tuple of axes (every axis is axis=None)\n"
                "  kernel k(p: *f32) { let a = load(p + arange(0, 4)[:, None] + arange(0, 4)[None, :]); store(p, sum(a, axis=(0, 1) * 0)); }\n"
                "                                                                                                            ^\n");
    /* `()` is the empty tuple, as Python's (it was a parse error) */
    expect_diag("kernel k(p: *f32) { let a = load(p + arange(0, 4)[:, None] + arange(0, 4)[None, :]); store(p, sum(a, ())); }\n",
                "t.tile:1:102: error: 'sum' along an empty tuple of axes (every axis is axis=None)\n"
                "  kernel k(p: *f32) { let a = load(p + arange(0, 4)[:, None] + arange(0, 4)[None, :]); store(p, sum(a, ())); }\n"
                "                                                                                                       ^\n");
    expect_ok("kernel k(p: *f32) { let e = (); let t = e + (2.0,) + e * 3; static_assert(len(t) == 1 && len(()) == 0); store(p, t[0]); }\n");
}

/* Tuple concatenation and repetition: the count is a compile-time integer, the operands tuples. */
Test(lang_diag, tuple_arithmetic) {
    expect_diag("kernel k(p: *f32, n: i32) { let t = (1.0, 2.0) * n; store(p, t[0]); }\n",
                "t.tile:1:48: error: '*' repeats a tuple a compile-time number of times, but the count is a run-time value\n"
                "  kernel k(p: *f32, n: i32) { let t = (1.0, 2.0) * n; store(p, t[0]); }\n"
                "                                                 ^\n");
    expect_diag("kernel k(p: *f32) { let t = (1.0, 2.0) + 3.0; store(p, t[0]); }\n",
                "t.tile:1:40: error: '+' concatenates a tuple with a tuple, not with 'f32' (a one-element tuple is written (x,))\n"
                "  kernel k(p: *f32) { let t = (1.0, 2.0) + 3.0; store(p, t[0]); }\n"
                "                                         ^\n");
    expect_diag("kernel k(p: *f32) { let t = (1.0, 2.0) * (1, 2); }\n",
                "t.tile:1:40: error: '*' repeats a tuple a compile-time number of times; it does not multiply two tuples\n"
                "  kernel k(p: *f32) { let t = (1.0, 2.0) * (1, 2); }\n"
                "                                         ^\n");
    expect_diag("kernel k(p: *f32) { let t = (1.0, 2.0) * 1.5; }\n",
                "t.tile:1:40: error: the repeat count of a tuple must be an integer, got 'f32'\n"
                "  kernel k(p: *f32) { let t = (1.0, 2.0) * 1.5; }\n"
                "                                         ^\n");
    /* a list is named a list (it was "'+' concatenates a tuple with a tuple, not with 'f32'" for [1, 2] + 3.0) */
    expect_diag("kernel k(p: *f32) { let t = [1, 2] + 3.0; store(p, t[0]); }\n",
                "t.tile:1:36: error: '+' concatenates a list with a list or a tuple, not with 'f32' (a one-element list is written [x])\n"
                "  kernel k(p: *f32) { let t = [1, 2] + 3.0; store(p, t[0]); }\n"
                "                                     ^\n");
    expect_diag("kernel k(p: *f32) { let t = [1, 2] * 1.5; }\n",
                "t.tile:1:36: error: the repeat count of a list must be an integer, got 'f32'\n"
                "  kernel k(p: *f32) { let t = [1, 2] * 1.5; }\n"
                "                                     ^\n");
    expect_diag("kernel k(p: *f32) { let t = [1, 2] * [3]; }\n",
                "t.tile:1:36: error: '*' repeats a list a compile-time number of times; it does not multiply two lists\n"
                "  kernel k(p: *f32) { let t = [1, 2] * [3]; }\n"
                "                                     ^\n");
    expect_ok("kernel k(p: *f32) { let t = [1, 2] + (3, 4); store(p, t[3] as f32); }\n");
}

/* for v in t: t a tuple or a list (a run-time count is range), no break in the unrolled body. */
Test(lang_diag, for_over_tuple) {
    expect_diag("kernel k(p: *f32, n: i32) { for v in n { store(p, 1.0); } }\n",
                "t.tile:1:38: error: 'for v in' expects range(...), static_range(...), a tuple or a list, got 'i32' (a loop over a run-time count is 'for i in range(n)')\n"
                "  kernel k(p: *f32, n: i32) { for v in n { store(p, 1.0); } }\n"
                "                                       ^\n");
    expect_diag("kernel k(p: *f32) { for v in (1, 2) { if v == 1 { break; } } }\n",
                "t.tile:1:51: error: 'break' inside a loop over a tuple is not supported (its body is unrolled)\n"
                "  kernel k(p: *f32) { for v in (1, 2) { if v == 1 { break; } } }\n"
                "                                                    ^\n");
}

/* next_power_of_2 of a compile-time integer only. */
Test(lang_diag, next_power_of_2) {
    expect_diag("kernel k(p: *f32, n: i32) { const B = next_power_of_2(n); }\n",
                "t.tile:1:55: error: 'next_power_of_2' needs a compile-time integer (a block size), not a run-time value\n"
                "  kernel k(p: *f32, n: i32) { const B = next_power_of_2(n); }\n"
                "                                                        ^\n");
    expect_diag("kernel k(p: *f32) { const B = next_power_of_2(-3); }\n",
                "t.tile:1:47: error: 'next_power_of_2' of -3: expected 0 to 2^62\n"
                "  kernel k(p: *f32) { const B = next_power_of_2(-3); }\n"
                "                                                ^\n");
    expect_diag("kernel k(p: *f32) { const B = next_power_of_2(2.5); }\n",
                "t.tile:1:47: error: the argument of 'next_power_of_2' must be an integer, got 'f32'\n"
                "  kernel k(p: *f32) { const B = next_power_of_2(2.5); }\n"
                "                                                ^\n");
}

/* The article before a type name is the one it is read with: "an i32", "an 'f16'", "a u8" (one helper, str_article,
 * picks it for every such message; they said "a f32", "a 'f16'"). */
Test(lang_diag, article_before_a_type_name) {
    expect_diag("kernel k(x: *f32, n: i32, b: u8, s: f32) {\n"
                "    for (i, v) in enumerate(b) { }\n"
                "    for (i, v) in enumerate(s) { }\n"
                "    let h = 1.5 as f16;\n"
                "    h[0] = 2.0;\n"
                "}\n",
                "t.tile:2:29: error: 'enumerate' expects a tuple or a list, got a u8 (a loop over a run-time count is 'for i in range(n)')\n"
                "      for (i, v) in enumerate(b) { }\n"
                "                              ^\n"
                "t.tile:3:29: error: 'enumerate' expects a tuple or a list, got an f32\n"
                "      for (i, v) in enumerate(s) { }\n"
                "                              ^\n"
                "t.tile:5:10: error: cannot assign to an element of 'h', an 'f16': tensors are values here; build the new one (`where(arange(0, N) == i, v, a)`) or store to memory (a tuple's elements are assigned: `t[i] = v`)\n"
                "      h[0] = 2.0;\n"
                "           ^\n");
}

/* Triton's tuple arguments: a kernel's run-time parameter takes a tuple type (tests/test_lang_python.c,
 * tuple_parameters); a const parameter's or a fn's tuple type is an error at its name saying what to write (a const
 * tuple and a fn's tuple are untyped), once, the body then checked without it. */
Test(lang_diag, tuple_typed_parameters) {
    expect_diag("kernel k(ptrs: (*f32, *f32), n: i32, const S: (i32, i32) = (4, 8)) {\n"
                "    store(ptrs[0], 1.0);\n"
                "}\n"
                "fn f(t: (*f32, i32)) { return t; }\n",
                "t.tile:1:44: error: const parameter 'S' has a tuple type: a tuple of compile-time values is an untyped const parameter ('const S = (64, 32)')\n"
                "  kernel k(ptrs: (*f32, *f32), n: i32, const S: (i32, i32) = (4, 8)) {\n"
                "                                             ^\n"
                "t.tile:4:6: error: parameter 't' has a tuple type: a fn's parameter takes a tuple untyped ('fn f(t)')\n"
                "  fn f(t: (*f32, i32)) { return t; }\n"
                "       ^\n");
}

/* A tuple's element holds what a tuple written out holds: a value, a tuple (a list is Triton's tuple, a shape still),
 * or a compile-time None, type or string, as Python's tuples do; a function is an error at it.  An element that
 * changes in a run-time if or a loop (a number to a tuple, a type to a tuple) is named by the tuples' structure
 * (both were 'tuple of 2 values'). */
Test(lang_diag, tuple_element_assigned_a_list_type_or_none) {
    expect_diag("kernel k(x: *f32, n: i32) {\n"
                "    let t = (1, 2);\n"
                "    t[0] = f16;\n"
                "    t[1] = None;\n"
                "    static_assert(t[0] == f16 && t[1] is None, \"held\");\n"
                "    t[1] = zeros;\n"
                "    if n > 0 { t[0] = [1, 2]; }\n"
                "}\n",
                "t.tile:6:12: error: built-in 'zeros' cannot be used as a value\n"
                "      t[1] = zeros;\n"
                "             ^\n"
                "t.tile:7:5: error: 't' is '((i32, i32), None)' in one branch of a run-time 'if' and '(type, None)' in the other\n"
                "      if n > 0 { t[0] = [1, 2]; }\n"
                "      ^\n");
    expect_diag("kernel k(x: *f32, n: i32) {\n"
                "    let t = (1, (2,));\n"
                "    for i in range(0, n) { t[1] = [3, 4]; }\n"
                "}\n",
                "t.tile:3:28: error: loop-carried variable 't' changes from '(i32, (i32,))' to '(i32, (i32, i32))' in the loop\n"
                "      for i in range(0, n) { t[1] = [3, 4]; }\n"
                "                             ^\n"
                "t.tile:3:5: note: the loop\n"
                "      for i in range(0, n) { t[1] = [3, 4]; }\n"
                "      ^\n");
}

/* A call that gives no value, used as one, names the callee (it said "expression has no value"), and a fn with no
 * `return VALUE;` gets a note at its definition, where the fix goes.  A fn whose body had an error gives no second
 * error at the call that used its value. */
Test(lang_diag, call_without_a_value) {
    expect_diag("fn f(x) {\n    let y = x + 1;\n}\nkernel k(a: *f32) {\n    store(a, f(1.0));\n}\n",
                "t.tile:5:14: error: 'f' returns no value (a 'fn' gives one with 'return VALUE;')\n"
                "      store(a, f(1.0));\n"
                "               ^\n"
                "t.tile:1:4: note: 'f' is defined here\n"
                "  fn f(x) {\n"
                "     ^\n");
    expect_diag("kernel k(a: *f32) {\n    let v = store(a, 1.0);\n}\n",
                "t.tile:2:13: error: 'store' returns no value\n"
                "      let v = store(a, 1.0);\n"
                "              ^\n");
    expect_diag("fn f(x, c) {\n    if c > 0 { return zeros([16], f32); } else { return zeros([32], f32); }\n}\n"
                "kernel k(a: *f32, c: i32) {\n    store(a + arange(0, 16), f(1.0, c));\n}\n",
                "t.tile:2:50: error: the value 'f' returns has type 'tensor<16xf32>' in one branch of 'if' and 'tensor<32xf32>' in the other\n"
                "      if c > 0 { return zeros([16], f32); } else { return zeros([32], f32); }\n"
                "                                                   ^\n"
                "t.tile:2:5: note: the 'if'\n"
                "      if c > 0 { return zeros([16], f32); } else { return zeros([32], f32); }\n"
                "      ^\n"
                "t.tile:5:30: note: in this call of 'f'\n"
                "      store(a + arange(0, 16), f(1.0, c));\n"
                "                               ^\n");
    /* a `return` inside a run-time `if` of a fn: every path returns one type, a value on all or on none */
    expect_diag("fn f(x, c) {\n    if c > 0 { return x; }\n    return x as f16;\n}\n"
                "kernel k(a: *f32, c: i32) {\n    store(a, f(load(a), c));\n}\n",
                "t.tile:3:5: error: the value 'f' returns has type 'f32' in one branch of 'if' and 'f16' in the other\n"
                "      return x as f16;\n"
                "      ^\n"
                "t.tile:2:5: note: the 'if'\n"
                "      if c > 0 { return x; }\n"
                "      ^\n"
                "t.tile:6:14: note: in this call of 'f'\n"
                "      store(a, f(load(a), c));\n"
                "               ^\n");
    expect_diag("fn f(x, c) {\n    if c > 0 { return x; }\n}\n"
                "kernel k(a: *f32, c: i32) {\n    store(a, f(load(a), c));\n}\n",
                "t.tile:2:16: error: 'f' returns an 'f32' on one path of a run-time 'if' and no value on another (every 'return' of a function gives one type)\n"
                "      if c > 0 { return x; }\n"
                "                 ^\n"
                "t.tile:2:5: note: the 'if'\n"
                "      if c > 0 { return x; }\n"
                "      ^\n"
                "t.tile:5:14: note: in this call of 'f'\n"
                "      store(a, f(load(a), c));\n"
                "               ^\n");
    expect_diag("fn f(x, c) {\n    if c > 0 { return (x, 1); }\n    return x;\n}\n"
                "kernel k(a: *f32, c: i32) {\n    store(a, f(load(a), c));\n}\n",
                "t.tile:3:5: error: 'f' returns a 'tuple of 2 values' on one path of a run-time 'if' and an 'f32' on another (every 'return' of a function gives one type)\n"
                "      return x;\n"
                "      ^\n"
                "t.tile:2:5: note: the 'if'\n"
                "      if c > 0 { return (x, 1); }\n"
                "      ^\n"
                "t.tile:6:14: note: in this call of 'f'\n"
                "      store(a, f(load(a), c));\n"
                "               ^\n");
    expect_diag("fn f(x, n) {\n    for i in range(n) { if i > 2 { return x; } }\n    return x;\n}\n"
                "kernel k(a: *f32, n: i32) {\n    store(a, f(load(a), n));\n}\n",
                "t.tile:2:36: error: 'return' inside a 'for' loop is not supported (as in Triton: no 'return' inside 'for' or 'while' statements)\n"
                "      for i in range(n) { if i > 2 { return x; } }\n"
                "                                     ^\n"
                "t.tile:6:14: note: in this call of 'f'\n"
                "      store(a, f(load(a), n));\n"
                "               ^\n");
    /* every error from inside an inlined call carries its call sites, innermost first (only the last error did) */
    expect_diag("fn f(x) {\n    let a = x + nope1;\n    let b = x * nope2;\n    return x;\n}\n"
                "fn g(y) { return f(y); }\nkernel k(p: *f32) {\n    store(p, g(1.0));\n}\n",
                "t.tile:2:17: error: unknown name 'nope1'\n"
                "      let a = x + nope1;\n"
                "                  ^\n"
                "t.tile:6:18: note: in this call of 'f'\n"
                "  fn g(y) { return f(y); }\n"
                "                   ^\n"
                "t.tile:8:14: note: in this call of 'g'\n"
                "      store(p, g(1.0));\n"
                "               ^\n"
                "t.tile:3:17: error: unknown name 'nope2'\n"
                "      let b = x * nope2;\n"
                "                  ^\n"
                "t.tile:6:18: note: in this call of 'f'\n"
                "  fn g(y) { return f(y); }\n"
                "                   ^\n"
                "t.tile:8:14: note: in this call of 'g'\n"
                "      store(p, g(1.0));\n"
                "               ^\n");
}

/* An assignment to a name never bound is one error: the name's later uses (a read, a compound assignment) are the
 * same mistake, not an "unknown name" each. */
Test(lang_diag, assignment_to_an_unknown_name_once) {
    expect_diag("kernel k(a: *f32) {\n    y = 1.0;\n    store(a, y * 2.0);\n    y += 1.0;\n}\n",
                "t.tile:2:5: error: unknown name 'y' (a new variable is declared with 'let y = ...')\n"
                "      y = 1.0;\n"
                "      ^\n");
}

/* Python's tuple assignment binding new names, `lo, hi = 0, n` (and nested, `a, (b, c) = ...`), is one error naming
 * the `let` that declares them; a name of such a tuple that is new among existing ones says to declare it first
 * (they were an "unknown name" each, with no hint); their later uses are the same mistake. */
Test(lang_diag, tuple_assignment_to_unknown_names_once) {
    expect_diag("kernel k(a: *f32, n: i32) {\n    lo, hi = 0, n;\n    x, (y, z) = 1.0, (2.0, 3.0);\n    let acc = 1.0;\n"
                "    acc, m_new = acc * 2.0, 4.0;\n    store(a + lo + hi, x + y + z + acc + m_new);\n}\n",
                "t.tile:2:5: error: unknown names: new variables are declared with 'let lo, hi = ...' (an assignment without 'let' "
                "sets existing variables)\n"
                "      lo, hi = 0, n;\n"
                "      ^\n"
                "t.tile:3:5: error: unknown names: new variables are declared with 'let x, (y, z) = ...' (an assignment without 'let' "
                "sets existing variables)\n"
                "      x, (y, z) = 1.0, (2.0, 3.0);\n"
                "      ^\n"
                "t.tile:5:10: error: unknown name 'm_new' (a tuple assignment sets existing variables: declare it before with "
                "'let m_new = ...')\n"
                "      acc, m_new = acc * 2.0, 4.0;\n"
                "           ^\n");
}

/* Braces and declarations: a function inside a kernel is named as such (it was "expected an expression, found 'fn'"),
 * and the statements after it are still checked; a `fn`, `kernel` or `@` at the start of a line inside a block is the
 * next declaration, so one error says a '}' is missing (each declaration after it was "expected an expression") and
 * the declarations after it are parsed as such; an extra '}' is named. */
Test(lang_diag, braces_and_nested_declarations) {
    expect_diag("kernel k(a: *f32) {\n    fn g(x) { return x; }\n    store(a, g(1.0));\n    let y = ;\n}\n",
                "t.tile:2:5: error: a 'fn' is declared at the top level of the file, not inside a kernel or a function: move it out "
                "(it is called by name from anywhere in the file)\n"
                "      fn g(x) { return x; }\n"
                "      ^\n"
                "t.tile:4:13: error: expected an expression, found ';'\n"
                "      let y = ;\n"
                "              ^\n");
    expect_diag("kernel k(a: *f32, n: i32) {\n    if n > 0 {\n        store(a, 1.0);\n\nfn f(x) { return x; }\nkernel m(a: *f32) { let z = ; }\n",
                "t.tile:5:1: error: expected '}' to close the block opened at line 2 before this 'fn' (a '}' is missing above)\n"
                "  fn f(x) { return x; }\n"
                "  ^\n"
                "t.tile:6:29: error: expected an expression, found ';'\n"
                "  kernel m(a: *f32) { let z = ; }\n"
                "                              ^\n");
    expect_diag("kernel k(a: *f32, n: i32) {\n    if n > 0 {\n        store(a, 1.0);\n    }\n@num_warps(4)\nkernel m(a: *f32) { store(a, 1.0); }\n",
                "t.tile:5:1: error: expected '}' to close the block opened at line 1 before this '@' (a '}' is missing above)\n"
                "  @num_warps(4)\n"
                "  ^\n");
    expect_diag("kernel k(a: *f32) {\n    store(a, 1.0);\n}\n}\n",
                "t.tile:4:1: error: unmatched '}': no block is open here (one '}' too many, or a '{' missing before it)\n"
                "  }\n"
                "  ^\n");
}

/* `num_warps(4)` in a kernel's body (Triton's launch keyword) was a plain unknown name: it says the attribute form;
 * Triton's num_ctas says it has none here. */
Test(lang_diag, launch_setting_written_as_a_call) {
    expect_diag("kernel k(o: *f32) {\n    num_warps(8);\n    store(o, 1.0);\n}\n",
                "t.tile:2:5: error: unknown name 'num_warps': it is a kernel attribute, written before 'kernel' ('@num_warps(8)'), "
                "not a call in its body\n"
                "      num_warps(8);\n"
                "      ^\n");
    expect_diag("kernel k(o: *f32) {\n    store(o, 1.0);\n    num_stages(2);\n}\n",
                "t.tile:3:5: error: unknown name 'num_stages': it is a kernel attribute, written before 'kernel' ('@num_stages(2)'), "
                "not a call in its body\n"
                "      num_stages(2);\n"
                "      ^\n");
    expect_diag("kernel k(o: *f32) {\n  num_ctas(2);\n}\n",
                "t.tile:2:3: error: unknown name 'num_ctas': Triton's num_ctas (a cluster of programs) has no equivalent here; "
                "a kernel's launch settings are attributes written before 'kernel' ('@num_warps(4)', '@num_stages(3)')\n"
                "    num_ctas(2);\n"
                "    ^\n");
}

/* A call's tuple in arithmetic (`two(x) * 2.0` repeats the tuple, so the float count is the error) gets a note at
 * the call saying it returns a tuple; a literal tuple's error stands alone. */
Test(lang_diag, arithmetic_on_a_returned_tuple) {
    expect_diag("fn two(x) { return (x, x + 1.0); }\nkernel k(o: *f32) {\n    let t = two(1.0) * 2.0;\n}\n",
                "t.tile:3:22: error: the repeat count of a tuple must be an integer, got 'f32'\n"
                "      let t = two(1.0) * 2.0;\n"
                "                       ^\n"
                "t.tile:3:13: note: 'two' returns a tuple of 2; arithmetic on a tuple is not element-wise (index it: 'two(...)[0]')\n"
                "      let t = two(1.0) * 2.0;\n"
                "              ^\n");
    expect_diag("fn two(x) { return (x, x + 1.0); }\nkernel k(o: *f32) {\n    store(o, 1.0 + two(1.0));\n}\n",
                "t.tile:3:18: error: '+' concatenates a tuple with a tuple, not with 'f32' (a one-element tuple is written (x,))\n"
                "      store(o, 1.0 + two(1.0));\n"
                "                   ^\n"
                "t.tile:3:20: note: 'two' returns a tuple of 2; arithmetic on a tuple is not element-wise (index it: 'two(...)[0]')\n"
                "      store(o, 1.0 + two(1.0));\n"
                "                     ^\n");
    expect_diag("kernel k(o: *f32) {\n    let t = (1.0, 2.0) * 2.0;\n}\n",
                "t.tile:2:24: error: the repeat count of a tuple must be an integer, got 'f32'\n"
                "      let t = (1.0, 2.0) * 2.0;\n"
                "                         ^\n");
}

/* Mistakes of a first kernel or a Triton port: each one error, at the token that is wrong, saying what to write.
 * (A lower-rank operand that fits the leading dimensions names the [:, None] that lines it up; a built-in's operands
 * that do not broadcast are reported at the operand; dot's K names the transpose that fits.) */
Test(lang_diag, first_kernel_mistakes) {
    const struct {
        const char *src, *want;
    } bad[] = {
        {"kernel k(x: *f32) {\n    let t = load(x + arange(0, 16)[:, None] * 32 + arange(0, 32)[None, :]);\n"
         "    store(x, exp(t - max(t, axis=1)));\n}\n",
         "t.tile:3:20: error: shapes [16, 32] and [16] do not broadcast (shapes line up at their last dimension, as in NumPy; "
         "x[:, None] makes the [16] a [16, 1])\n"},
        {"kernel k(x: *f32, n: i32) {\n    let t = zeros([4, 8, 16], f32);\n    let w = where(arange(0, 4)[:, None] < n, t, 0.0);\n}\n",
         "t.tile:3:46: error: shapes [4, 1] and [4, 8, 16] do not broadcast (shapes line up at their last dimension, as in NumPy; "
         "x[:, :, None] makes the [4, 1] a [4, 1, 1])\n"},
        {"kernel k(x: *f32) {\n    store(x + arange(0, 16), maximum(zeros([16], f32), zeros([8], f32)));\n}\n",
         "t.tile:2:56: error: shapes [16] and [8] do not broadcast\n"},
        {"kernel k(x: *f32) {\n    let r = reshape(zeros([16, 16], f32), [8, 8]);\n}\n",
         "t.tile:2:43: error: cannot reshape [16, 16] (256 elements) into [8, 8] (64 elements)\n"},
        {"kernel k(x: *f32, n: i32) {\n    for i in 0..n {\n        store(x + i, 1.0);\n    }\n}\n",
         "t.tile:2:15: error: there is no '..' range here: a loop over integers is 'for i in range(a, b)'\n"},
        {"kernel k(x: *f32, n: i32) {\n    for i in 1..=n {\n        store(x + i, 1.0);\n    }\n}\n",
         "t.tile:2:15: error: there is no '..=' range here: a loop over integers is 'for i in range(a, b)' (a..=b is range(a, b + 1))\n"},
        {"kernel k(x: *f32, n: i32) {\n    if n = 0 { store(x, 1.0); }\n}\n",
         "t.tile:2:10: error: expected '{' to open a block, found '=' (a condition compares with '==')\n"},
        {"kernel k(x: *f32, n: i32, const B: i32 = n) {\n    store(x, 1.0);\n}\n",
         "t.tile:1:42: error: 'n' is a run-time parameter: a const parameter's default is a compile-time value (a number, a type, "
         "a string, or an earlier const parameter)\n"},
        {"kernel k(x: *f32) {\n    store(x + arange(0, 16), full([16], 1.0, float));\n}\n",
         "t.tile:2:46: error: 'float' names no type here: a type is named by its width ('f32', 'f16', 'f64')\n"},
        {"kernel k(x: *f32) { store(x, 1.0); }\nkernel j(x: *f32) { k[(1,)](x); }\n",
         "t.tile:2:21: error: 'k' is a kernel: kernels are launched from the host (Triton's k[grid](...) is mod.k[grid](...) in "
         "Python, tile_launch in C), not called (write the shared code as a 'fn')\n"},
        {"fn one(a, b) { return a + b; }\nkernel k(x: *f32) {\n    store(x, map_elementwise(one, load(x)));\n}\n",
         "t.tile:3:14: error: 'one' takes 2 parameters but is given 1 value\n"},
        {"kernel k(x: *f32) {\n    let c = dot(zeros([16, 16], bf16), zeros([16, 16], f16));\n}\n",
         "t.tile:2:40: error: dot: operand types differ: a is 'bf16', b is 'f16' (cast one to the other's type: 'b as bf16' or "
         "'a as f16')\n"},
        {"kernel k(x: *f32) {\n    let l = [1.0, 2.0];\n}\n",
         "t.tile:2:14: error: a list holds compile-time integers (a shape, axes), got 'f32': values are a tuple, written (a, b)\n"},
        {"kernel k(x: *f32, n: i32) {\n    let s = n;\n    for i in range(0, n) { s += load(x + i); }\n}\n",
         "t.tile:3:28: error: loop-carried variable 's' changes type from 'i32' to 'f32' in the loop (a variable keeps its type "
         "through a loop, as in Triton: start it as 'f32', or cast the value with 'as i32')\n"},
        {"@num_warps(NW)\nkernel k(x: *f32, const NW: i32 = 4) { store(x, 1.0); }\n",
         "t.tile:1:12: error: 'NW' is a parameter of 'k': an attribute's value is a number or a file-level const (-D num_warps=... or "
         "@config(num_warps=...) set num_warps for a compile)\n"},
        {"kernel k(x: *f32, const A: i32 = B, const B: i32 = 4) { store(x, 1.0); }\n",
         "t.tile:1:34: error: 'B' is a const parameter declared after this one: a const parameter's default names file-level consts "
         "and the const parameters before it\n"},
        {"@config(num_warp=8)\nkernel k(x: *f32, const BLOCK: i32 = 64) { store(x, 1.0); }\n",
         "t.tile:1:18: error: '@config' sets 'num_warp', which is neither a const parameter of 'k' nor a file-level const; did you mean "
         "'num_warps'?\n"},
        {"kernel k(float *x, int n) { store(x, 1.0); }\n",
         "t.tile:1:10: error: a parameter is written 'NAME: TYPE' here: 'x: *T', not C's 'float *x' (T a type such as f32)\n"},
        {"kernel k(f16 **x) { store(x, 1.0); }\n", "t.tile:1:10: error: a parameter is written 'NAME: TYPE' here: 'x: **f16', not C's 'f16 **x'\n"},
        {"kernel k(x: f32[], n: i32) { store(x, 1.0); }\n",
         "t.tile:1:16: error: an array parameter is a pointer to its first element here: 'x: *f32'\n"},
        {"kernel k(x: *f32, n: i32) {\n    for i = 0; i < n; i += 1 {\n        store(x + i, 1.0);\n    }\n}\n",
         "t.tile:2:5: error: a 'for' loop is written 'for i in range(start, end, step) { ... }' here, not as 'for i = ...'\n"},
        /* a file that ends mid-statement (cut short, or saved half-written): one error where it ends */
        {"kernel k(x: *f32) {\n    if true {\n        let v = 1.0", "t.tile:3:20: error: expected ';' after 'let' statement, found end of file\n"},
        {"kernel k(x: *f32) {\n    if true {\n        store(x, 1.0);\n    \n}\n",
         "t.tile:6:1: error: expected '}' to close the block opened at line 1, found end of file\n"},
        {"kernel k(x: *f32) {\n    store(x);\n}\n", "t.tile:2:5: error: 'store' expects 2 to 6 arguments, got 1: 'value' is missing\n"},
        {"kernel k(x: *f32) {\n    let o = arange(0, 16, 2);\n}\n", "t.tile:2:27: error: 'arange' expects 2 arguments, got 3\n"},
        {"kernel k(x: *i32, n: i32, const BLOCK: i32 = 16) {\n    let y = where(arange(0, BLOCK) < n, b=0);\n}\n",
         "t.tile:2:13: error: 'where' expects 3 arguments, got 2: 'a' is missing\n"},
        {"kernel k(x: *f32, n: i32) {\n    let i = 0;\n    while i < n { i += 1; } else { store(x, 1.0); }\n}\n",
         "t.tile:3:29: error: 'else' without an 'if': an 'else' follows the '}' of an 'if' block (a 'for' or 'while' has no 'else' "
         "here)\n"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        Result r = compile(bad[i].src);
        cr_expect_null(r.m, "%s: compiled", bad[i].src);
        cr_expect(r.diags && !strncmp(r.diags, bad[i].want, strlen(bad[i].want)), "%s: got\n%s\nwant\n%s", bad[i].src, r.diags,
                  bad[i].want);
        int errors = 0;
        for (const char *e = r.diags; (e = strstr(e, ": error: ")); e++) errors++;
        cr_expect_eq(errors, 1, "%s: %d errors\n%s", bad[i].src, errors, r.diags);
        result_free(&r);
    }
}

/* A return type after the parameters (Python's `-> tl.tensor`, Rust's `-> f32`): one error at the '->' each, and the
 * file is read on without it, so an error in the body is reported too. */
Test(lang_diag, return_annotation) {
    expect_diag("fn f(x) -> f32 { return x + 1.0; }\nkernel k(x: *f32) -> None {\n    store(x, f(1.0) + y);\n}\n",
                "t.tile:1:9: error: a fn has no return type to write: its value has the type of what 'return' gives (remove the '->' "
                "and its type)\n"
                "  fn f(x) -> f32 { return x + 1.0; }\n"
                "          ^\n"
                "t.tile:2:19: error: a kernel has no return type to write: a kernel returns nothing, it stores its results (remove the "
                "'->' and its type)\n"
                "  kernel k(x: *f32) -> None {\n"
                "                    ^\n"
                "t.tile:3:23: error: unknown name 'y'\n"
                "      store(x, f(1.0) + y);\n"
                "                        ^\n");
}

/* An error at the end of a chain of calls names the four innermost and the four outermost calls, and says that the
 * ones between are left out (a chain 64 deep gave 64 notes). */
Test(lang_diag, long_call_chain) {
    char src[2048];
    int n = snprintf(src, sizeof src, "fn g11(x) { return x + nope; }\n");
    for (int i = 10; i >= 0; i--) n += snprintf(src + n, sizeof src - (size_t)n, "fn g%d(x) { return g%d(x); }\n", i, i + 1);
    snprintf(src + n, sizeof src - (size_t)n, "kernel k(p: *f32) { store(p, g0(1.0)); }\n");
    Result r = compile(src);
    cr_expect_null(r.m);
    int errors = 0, notes = 0;
    for (const char *e = r.diags; (e = strstr(e, ": error: ")); e++) errors++;
    for (const char *e = r.diags; (e = strstr(e, ": note: ")); e++) notes++;
    cr_expect(errors == 1 && notes == 9, "%d errors, %d notes:\n%s", errors, notes, r.diags);
    cr_expect(strstr(r.diags, "t.tile:2:20: note: in this call of 'g11'\n") &&
                  strstr(r.diags, "t.tile:9:19: note: in this call of 'g4' (the calls between it and the call above are not shown)\n") &&
                  strstr(r.diags, "t.tile:13:30: note: in this call of 'g0'\n"),
              "%s", r.diags);
    result_free(&r);
}

/* A binary file given as source (an executable, a cubin): one error, not one per stray byte; a text file's NUL
 * stays an error at its place. */
Test(lang_diag, binary_file) {
    static const char elf[] = "\x7f" "ELF\2\1\1\0\0\0\0\0\0\0\0\0\3\0>\0\1\0\0\0kernel k(x: *f32) { store(x, 1.0); }\n";
    Result r = compile_src("a.out", elf, sizeof elf - 1, NULL, 0);
    cr_expect_null(r.m);
    const char *want = "a.out:1:1: error: a.out is not source text: it holds NUL bytes (a binary file, such as an executable or a cubin)\n";
    int errors = 0;
    for (const char *e = r.diags; (e = strstr(e, ": error: ")); e++) errors++;
    cr_expect(!strncmp(r.diags, want, strlen(want)) && errors == 1, "%s", r.diags);
    result_free(&r);
}

/* Python's f(x, *args) unpacks a tuple (test_lang_python.c, star_args_and_none_strings); `*v` of a variable holding
 * no tuple (nor a type: `*T` is a pointer type) is an error at it, not a pointer type named 'v' */
Test(lang_diag, star_args) {
    expect_diag("fn f(x, a, b) { return x * a + b; }\nkernel k(p: *f32) {\n    let v = load(p);\n    store(p, f(v, *v));\n}\n",
                "t.tile:4:19: error: '*v' unpacks a tuple into arguments (Python's f(x, *args)), but 'v' holds an 'f32'\n"
                "      store(p, f(v, *v));\n"
                "                    ^\n");
}

/* a slice with bounds is a tuple's or a list's (test_lang_python.c, slices_of_tuples_and_lists): of a tensor it is an
 * error naming that, and its bounds are compile-time integers, the step not zero */
Test(lang_diag, slices) {
    expect_diag("kernel k(p: *f32) {\n    let v = load(p + arange(0, 16));\n    store(p, v[1:]);\n}\n",
                "t.tile:3:16: error: a tensor is indexed with ':' and 'None' only (as in Triton): index with arange and load, or "
                "reduce with a mask (a slice with bounds is a tuple's or a list's)\n"
                "      store(p, v[1:]);\n"
                "                 ^\n");
    expect_diag("kernel k(p: *f32) {\n    let t = (1.0, 2.0);\n    store(p, t[::0][0]);\n}\n",
                "t.tile:3:18: error: slice step cannot be zero\n"
                "      store(p, t[::0][0]);\n"
                "                   ^\n");
    expect_diag("kernel k(p: *f32, n: i32) {\n    let t = (1.0, 2.0);\n    store(p, t[n:][0]);\n}\n",
                "t.tile:3:16: error: a slice bound must be a compile-time integer\n"
                "      store(p, t[n:][0]);\n"
                "                 ^\n");
}
