/* test_lang_diag_foreign.c - the front end's diagnostics for other languages' spellings, split from
 * test_lang_diag.c: Triton's `//` and precedence traps, tensor methods and module prefixes, Python's and
 * C's statements, bindings and pointer types, `None` comparisons: exact text, location and caret. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lang_diag.h"

/* Triton's floor division: a `//` after an operand whose statement does not parse with it as a comment but does
 * with '/' is reported where it stands (and read as `/`); other `//` stay comments. */
Test(lang_diag, floor_division_trap) {
    expect_diag("kernel k(x: *i32, n: i32) {\n    store(x, n // 4);\n}\n",
                "t.tile:2:16: error: '//' starts a comment; for integer division write '/' (it truncates toward zero, as Triton's '//' on integers does)\n"
                "      store(x, n // 4);\n"
                "                 ^\n");
    expect_diag("kernel k(x: *i32, n: i32) {\n    let q = (n + 1)//(2);\n    store(x, q);\n}\n",
                "t.tile:2:20: error: '//' starts a comment; for integer division write '/' (it truncates toward zero, as Triton's '//' on integers does)\n"
                "      let q = (n + 1)//(2);\n"
                "                     ^\n");
    /* a one-line block ends with its `}`: the `//` in the `if`'s header, or in a statement of the block */
    expect_diag("kernel k(x: *i32, n: i32) {\n    if n // 2 > 0 { store(x, n); }\n    if n > 0 { n = n // 4; }\n    store(x, n);\n}\n",
                "t.tile:2:10: error: '//' starts a comment; for integer division write '/' (it truncates toward zero, as Triton's '//' on integers does)\n"
                "      if n // 2 > 0 { store(x, n); }\n"
                "           ^\n"
                "t.tile:3:22: error: '//' starts a comment; for integer division write '/' (it truncates toward zero, as Triton's '//' on integers does)\n"
                "      if n > 0 { n = n // 4; }\n"
                "                       ^\n");
    expect_ok("kernel k(x: *i32, n: i32) // the doc\n{\n"
              "    let q = n; // 4 rows;\n"
              "    // a comment line;\n"
              "    if n > 2 // wide rows\n    { q = n / 4; }\n"
              "    store(x, q); // store it;\n"
              "    let r = [1, // first;\n"
              "             2];\n"
              "}\n");
}

/* Python's `n //= 2;` (Triton's integer halving) is reported at the `//=` and read as `/=`: it was a comment
 * from `//` on, and the error an expected ';' at the name before it.  A comment of `=` signs stays one. */
Test(lang_diag, floor_division_assignment_trap) {
    expect_diag("kernel k(x: *i32) {\n    let n = load(x);\n    n //= 2;\n    store(x, n);\n}\n",
                "t.tile:3:7: error: '//=' would start a comment here; for integer division write '/=' (it truncates toward zero, as "
                "Triton's '//' on integers does)\n"
                "      n //= 2;\n"
                "        ^\n");
    Result r = compile("kernel k(x: *i32) {\n    let n = load(x + arange(0, 4));\n    n//=4;\n    store(x + arange(0, 4), n);\n}\n");
    cr_expect(r.diags && strstr(r.diags, "t.tile:3:6: error: '//=' would start a comment") && !strstr(r.diags, "expected"), "%s", r.diags);
    result_free(&r);
    expect_ok("kernel k(x: *i32) {\n    let n = load(x); //== n halves ==\n    n /= 2; //= then stored;\n    store(x, n);\n}\n");
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
    /* black wraps before the operator: the `//` opens its line, the operand ends the one before (was `(pid)`) */
    expect_diag("kernel k(x: *i32, pid: i32, group: i32) {\n    let g = (\n        pid\n        // group\n    );\n    store(x, g);\n}\n",
                "t.tile:4:9: error: '//' starts a comment; for integer division write '/' (it truncates toward zero, as Triton's '//' on integers does)\n"
                "          // group\n"
                "          ^\n");
    /* a comment of words on its own line there, or one after a comma, stays one */
    expect_ok("kernel k(x: *i32, n: i32) {\n    let q = (n\n             // the row count\n             + 1);\n"
              "    let r = where(n > 0,\n                  // n: positive\n                  n, 0);\n    store(x, q + r);\n}\n");
}

/* Triton's `//` in the layouts a port or a formatter writes (black before the operator, yapf and autopep8 after it,
 * wrapped after `(`, `[`, `,`, `=`, `return`), and comments beside code that stay comments (floor_div.c): each source
 * with the places of the '//' errors, read as '/' so that nothing else is reported (but `others` errors), or ""
 * where every `//` is a comment and the source compiles. */
static const struct {
    const char *src, *at;
    int others;
} floor_div_layouts[] = {
    /* read as Triton's floor division */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let q = n // 4;\n    store(x, q);\n}\n",
     "2:15", 0}, /* semi */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    store(x, n // 4);\n}\n",
     "2:16", 0}, /* call */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let q = (n + 1)//(2);\n    store(x, q);\n}\n",
     "2:20", 0}, /* nospace paren */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    if n // 2 > 0 { store(x, n); }\n}\n",
     "2:10", 0}, /* if header one-line */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let h = n;\n    if n > 0 { h = n // 2; }\n    store(x, h);\n}\n",
     "3:22", 0}, /* one-line block */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let i = 0;\n    while i < n // 2 {\n        i += 1;\n    }\n    store(x, i);\n}\n",
     "3:17", 0}, /* while header */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let h = n // 2\n        + 1;\n    store(x, h);\n}\n",
     "2:15", 0}, /* next line binop */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let g = (\n        n\n        // m\n    );\n    store(x, g);\n}\n",
     "4:9", 0}, /* black op-first */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let g = (\n        n\n        // m\n        + 1\n    );\n    store(x, g);\n}\n",
     "4:9", 0}, /* black op-first cont */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let g = (\n        n // m\n    );\n    store(x, g);\n}\n",
     "3:11", 0}, /* black invisible parens */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    store(\n        x,\n        n // m,\n    );\n}\n",
     "4:11", 0}, /* black arg */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    store(\n        x,\n        n // m\n    );\n}\n",
     "4:11", 0}, /* black last arg */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let g = (n //\n             m);\n    store(x, g);\n}\n",
     "2:16", 0}, /* yapf trailing in parens */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let g = n //\n        m;\n    store(x, g);\n}\n",
     "2:15", 0}, /* trailing no parens */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let r = [16 // 2, 4];\n    store(x, r[0]);\n}\n",
     "2:17", 0}, /* after [ */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let r = [\n        16 // 2,\n        4,\n    ];\n    store(x, r[0]);\n}\n",
     "3:12", 0}, /* list wrapped */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    store(x, where(n > 0, n // 2, m));\n}\n",
     "2:29", 0}, /* after comma */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let q =\n        n // 2;\n    store(x, q);\n}\n",
     "3:11", 0}, /* after = wrapped */
    {"fn half(v) {\n    return v // 2;\n}\nkernel k(x: *i32, n: i32, m: i32) {\n    store(x, half(n));\n}\n",
     "2:14", 0}, /* return */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    store(x, (n // -4));\n}\n",
     "2:17", 0}, /* unary */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let s = 0;\n    for i in range(0, n // 2) {\n        s += i;\n    }\n    store(x, s);\n}\n",
     "3:25", 0}, /* for range */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let q = n // 2 // 4;\n    store(x, q);\n}\n",
     "2:15 2:20", 0}, /* double */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    store(x + n // 2, m);\n}\n",
     "2:17", 0}, /* pointer offset */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let q = n // max(m, 1);\n    store(x, q);\n}\n",
     "2:15", 0}, /* call operand */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let q = 0;\n    q = n // m;\n    store(x, q);\n}\n",
     "3:11", 0}, /* assign */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let o = arange(\n        0, 16 // 2\n    );\n    store(x + o, o);\n}\n",
     "3:15", 0}, /* arange black */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let q = n // (m + 1);\n    store(x, q);\n}\n",
     "2:15", 0}, /* paren operand */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let q = (n\n             // (m + 1));\n    store(x, q);\n}\n",
     "3:14", 0}, /* op-first paren operand */
    {"fn half1(v) { return v // 2; }\nkernel k(x: *i32, n: i32, m: i32) {\n    store(x, half1(n));\n}\n",
     "1:24", 0}, /* one-line fn */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let q = max(n, 1) // 2;\n    store(x, q);\n}\n",
     "2:23", 0}, /* after rparen */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let g = (n\n             // m\n             * 2);\n    store(x, g);\n}\n",
     "3:14", 0}, /* op-first chain */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let q = n // 2 if n > 0 else m;\n    store(x, q);\n}\n",
     "2:15", 0}, /* ternary */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let q = n // tl.num_programs(0);\n    store(x, q);\n}\n",
     "2:15", 1}, /* tl in rest: and the lexer's error in the rest of the line */
    {"fn half2(v) {\n    return (v //\n            2);\n}\nkernel k(x: *i32, n: i32, m: i32) {\n    store(x, half2(n));\n}\n",
     "2:15", 0}, /* yapf return */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let q = max(n //\n                m, 1);\n    store(x, q);\n}\n",
     "2:19", 0}, /* autopep8 hanging */
    /* comments */
    {"kernel k(\n    x: *i32,  // out\n    n: i32  // count\n) {\n    store(x, n);\n}\n",
     "", 0}, /* param comments */
    {"kernel k(\n    x: *i32,\n    const B: i32 = 128  // rows\n) {\n    store(x, B);\n}\n",
     "", 0}, /* param default comment */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    store(x,\n          n)  // store(x, n // 2)\n;\n}\n",
     "", 0}, /* commented code in brackets */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let v = n; // (n // 2)\n    store(x, v);\n}\n",
     "", 0}, /* semi paren comment */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let q = (n  // - 1\n             + 1);\n    store(x, q);\n}\n",
     "", 0}, /* minus space */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    static_print(\"see http://example.com\", n);\n    store(x, n);\n}\n",
     "", 0}, /* a URL in a string */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let q = n; // 4 rows\n    store(x, q);\n}\n",
     "", 0}, /* after semi */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    // a // b\n    store(x, n);\n}\n",
     "", 0}, /* own line */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    // TODO: (n // 2)\n    store(x, n);\n}\n",
     "", 0}, /* todo */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    store(x, n); // store(x, n // 2);\n}\n",
     "", 0}, /* commented code after stmt */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let q = n  // * 2\n        + 1;\n    store(x, q);\n}\n",
     "", 0}, /* commented code after expr */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    store(x, where(n > 0, // why\n        n, m));\n}\n",
     "", 0}, /* after comma */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    store(x,\n          n  // the row count\n    );\n}\n",
     "", 0}, /* multiline call words */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    store(x,  // destination\n          n);  // value\n}\n",
     "", 0}, /* multiline call after comma */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    if n > m // why\n    {\n        store(x, n);\n    }\n}\n",
     "", 0}, /* if brace next line */
    {"kernel k(x: *i32, n: i32) // doc\n{\n    store(x, n);\n}\n",
     "", 0}, /* kernel doc */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let t = n  // first part\n        + m;\n    store(x, t);\n}\n",
     "", 0}, /* words then binop */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let q = (n\n             // the row count\n             + 1);\n    store(x, q);\n}\n",
     "", 0}, /* own line words in parens */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    if n > 0 {\n        store(x, n);\n    }  // done\n}\n",
     "", 0}, /* after brace */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let r = [1, // first;\n             2];\n    store(x, r[0]);\n}\n",
     "", 0}, /* list comment after comma */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let q = n; //== n halves ==\n    store(x, q);\n}\n",
     "", 0}, /* eq signs */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let v = n * 2;  // [BLOCK_M, BLOCK_N]\n    store(x, v);\n}\n",
     "", 0}, /* shape comment after stmt */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let q = (n  // note: rows\n             + 1);\n    store(x, q);\n}\n",
     "", 0}, /* colon prose */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let q = (n  // row's count\n             + 1);\n    store(x, q);\n}\n",
     "", 0}, /* apostrophe */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let q = (n  // why?\n             + 1);\n    store(x, q);\n}\n",
     "", 0}, /* question */
    {"kernel k(x: *i32, n: i32, m: i32) {\n    let q: i32 = n; // i32\n    store(x, q);\n}\n",
     "", 0}, /* type then comment */
};

Test(lang_diag, floor_division_layouts) {
    for (size_t i = 0; i < sizeof floor_div_layouts / sizeof *floor_div_layouts; i++) {
        Result r = compile(floor_div_layouts[i].src);
        const char *w = floor_div_layouts[i].at;
        if (!*w) cr_expect(r.m && !strstr(r.diags, "error"), "layout %zu is comments only, yet:\n%s", i, r.diags);
        int want = 0, got = 0, errors = 0;
        for (const char *e = r.diags; (e = strstr(e, ": error: ")); e++) errors++;
        for (const char *e = r.diags; (e = strstr(e, "'//' starts a comment")); e++) got++;
        for (int line, col, k; *w && sscanf(w, "%d:%d%n", &line, &col, &k) == 2; w += k, want++) {
            char at[96];
            snprintf(at, sizeof at, "t.tile:%d:%d: error: '//' starts a comment", line, col);
            cr_expect(strstr(r.diags, at), "layout %zu: no %s in\n%s", i, at, r.diags);
        }
        cr_expect(got == want && errors == want + floor_div_layouts[i].others, "layout %zu: %d '//' errors of %d, %d in all:\n%s", i,
                  got, want, errors, r.diags);
        result_free(&r);
    }
}

/* Deciding a `//` may lex the rest of the file again: bounded for a file (64 times its size and 1 MiB), past which a `//` that
 * would be read as the operator where the comment does not end the expression is an error, never a silent comment.
 * 300 comments of code inside brackets (each read as '/', then, the statement failing, a comment again) spend it. */
Test(lang_diag, floor_division_budget) {
    Str s = {0};
    str_printf(&s, "kernel k(x: *i32, n: i32) {\n    let q = 0;\n");
    for (int i = 0; i < 300; i++) str_printf(&s, "    q = (n  // n: %d\n        );\n", i);
    str_printf(&s, "    q = (n // 3\n        );\n    store(x, q);\n}\n");
    Result r = compile(s.buf);
    cr_expect_null(r.m);
    const char *e = strstr(r.diags, "error: '//' after an operand: this file has too many such to decide whether each is a comment");
    cr_expect(e && !strstr(r.diags, "t.tile:3:") && !strstr(r.diags, "starts a comment"), "%s", r.diags);
    result_free(&r);
    str_free(&s);
}

/* Where every error is a spelling read on as the form here (`//`, a module prefix, Python's words), names and types are
 * checked too: the unknown name is reported with them.  After a spelling whose form is not read in its place (a
 * method: `.to(f32)` is dropped) they are not, as their errors would follow from the dropping. */
Test(lang_diag, spellings_then_names) {
    expect_diag("kernel k(x: *f32, n: i32) {\n    let q = n // 4;\n    let v = tl.exp(load(x)) if True else 0.0;\n"
                "    store(x + q, v + w);\n}\n",
                "t.tile:2:15: error: '//' starts a comment; for integer division write '/' (it truncates toward zero, as Triton's '//' on "
                "integers does)\n"
                "      let q = n // 4;\n"
                "                ^\n"
                "t.tile:3:13: error: 'tl.exp': there is no 'tl' module here; write 'exp' (the built-ins are plain names, docs/language.md)\n"
                "      let v = tl.exp(load(x)) if True else 0.0;\n"
                "              ^\n"
                "t.tile:3:32: error: 'True' is written 'true' here (Python's 'True')\n"
                "      let v = tl.exp(load(x)) if True else 0.0;\n"
                "                                 ^\n"
                "t.tile:4:22: error: unknown name 'w'\n"
                "      store(x + q, v + w);\n"
                "                       ^\n");
    expect_diag("kernel k(x: *f32, n: i32) {\n    let v = load(x).to(f32);\n    store(x, v + w);\n}\n",
                "t.tile:2:20: error: '.to': values have no methods or attributes here; write 'x as T' or 'cast(x, T)' for Triton's x.to(T)\n"
                "      let v = load(x).to(f32);\n"
                "                     ^\n");
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
    /* Triton 2.0's dot keywords (kernl's attention: tl.dot(q, k, trans_b=True)) name the transposed form */
    expect_diag("kernel k(a: *f16, o: *f32) {\n    let r = arange(0, 16);\n    let x = load(a + r[:, None] * 16 + r[None, :]);\n"
                "    store(o + r[:, None] * 16 + r[None, :], dot(x, x, trans_b=true));\n}\n",
                "t.tile:4:55: error: 'dot' has no parameter named 'trans_b': Triton 2.0's dot(a, b, trans_b=True) is dot(a, trans(b)) "
                "here\n"
                "      store(o + r[:, None] * 16 + r[None, :], dot(x, x, trans_b=true));\n"
                "                                                        ^\n");
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
                "Triton's p.dtype.element_ty (p a pointer value, a block pointer or a tensor descriptor)\n"
                "      let b = x.dtype.element_ty;\n"
                "               ^\n");
    /* the type's questions of one type each are comparisons here; is_fp8 is a function (vLLM's unified attention:
     * K_load.dtype.is_fp8() picks whether to scale an fp8 KV cache) */
    expect_diag("kernel k(x: *f8e4m3, y: *f16) {\n    let v = load(x);\n    if v.dtype.is_fp8() { store(y, v as f16); }\n"
                "    if y.dtype.element_ty.is_fp16() { store(y, 1.0); }\n}\n",
                "t.tile:3:9: error: '.dtype.is_fp8': values have no methods or attributes here; write 'is_fp8(T)' for Triton's "
                "T.is_fp8() (T a type, dtype_of(x) or a value)\n"
                "      if v.dtype.is_fp8() { store(y, v as f16); }\n"
                "          ^\n"
                "t.tile:4:9: error: '.dtype.element_ty': values have no methods or attributes here; write 'element_type(p)' for "
                "Triton's p.dtype.element_ty (p a pointer value, a block pointer or a tensor descriptor)\n"
                "      if y.dtype.element_ty.is_fp16() { store(y, 1.0); }\n"
                "          ^\n");
    expect_diag("kernel k(x: *f16) {\n    let v = load(x);\n    if v.dtype.is_fp16() { store(x, v); }\n}\n",
                "t.tile:3:9: error: '.dtype.is_fp16': values have no methods or attributes here; write 'dtype_of(x) == f16' for "
                "Triton's x.dtype.is_fp16()\n"
                "      if v.dtype.is_fp16() { store(x, v); }\n"
                "          ^\n");
    /* triton_kernels' topk: x.dtype.is_int_unsigned() (it named is_signed, the opposite question) and tl.dtype(f"uint{n}")
     * (it named a 'dtype' function there is none of) */
    expect_diag("fn f(x) {\n    static_assert(x.dtype.is_int_unsigned(), \"bits\");\n    return x;\n}\n"
                "kernel k(x: *u32) {\n    store(x, f(load(x)) as tl.dtype(\"uint32\"));\n}\n",
                "t.tile:2:20: error: '.dtype.is_int_unsigned': values have no methods or attributes here; write 'is_int(T) && "
                "!is_signed(T)' for Triton's T.is_int_unsigned() (T a type, dtype_of(x) or a value)\n"
                "      static_assert(x.dtype.is_int_unsigned(), \"bits\");\n"
                "                     ^\n"
                "t.tile:6:28: error: 'tl.dtype': there is no 'tl' module here; a type is written by its name ('u32', or a 'const' "
                "holding one), and Triton's tl.dtype(f\"uint{bits}\") is 'get_int_dtype(bits, false)'\n"
                "      store(x, f(load(x)) as tl.dtype(\"uint32\"));\n"
                "                             ^\n");
    /* Triton's tensor methods that are functions here name the function, the tensor first (xgrammar's
     * bitmask.reshape(BLOCK_SIZE), fla's b_k.trans()); a method of no such name keeps the general hint */
    expect_diag("kernel k(x: *f32) {\n    let v = load(x + arange(0, 4));\n    let r = v.reshape(2, 2);\n    let t = r.trans();\n"
                "    let s = v.logical_not();\n}\n",
                "t.tile:3:14: error: '.reshape': values have no methods or attributes here; write 'reshape(x, ...)' for Triton's "
                "x.reshape(...) (the function of that name, the tensor first)\n"
                "      let r = v.reshape(2, 2);\n"
                "               ^\n"
                "t.tile:4:14: error: '.trans': values have no methods or attributes here; write 'trans(x)' for Triton's x.trans() "
                "(the function of that name, the tensor first)\n"
                "      let t = r.trans();\n"
                "               ^\n"
                "t.tile:5:14: error: '.logical_not': values have no methods or attributes here; write a function: 'reshape(x, ...)', "
                "'trans(x)', 'sum(x, axis)', ...\n"
                "      let s = v.logical_not();\n"
                "               ^\n");
    /* a tensor descriptor's methods (tutorials 06 and 09: desc.load([m, 0])) name the _tensor_descriptor functions, not
     * load(x, ...), which refuses a descriptor */
    expect_diag("kernel k(x: *f32, n: i32) {\n    let d = make_tensor_descriptor(x, [n], [1], [16]);\n    let v = d.load([0]);\n"
                "    d.store([16], v);\n    d.atomic_add([0], v);\n}\n",
                "t.tile:3:14: error: '.load': values have no methods or attributes here; write 'load_tensor_descriptor(desc, offsets)' "
                "for a tensor descriptor's desc.load(offsets)\n"
                "      let v = d.load([0]);\n"
                "               ^\n"
                "t.tile:4:6: error: '.store': values have no methods or attributes here; write 'store_tensor_descriptor(desc, offsets, "
                "value)' for a tensor descriptor's desc.store(offsets, value)\n"
                "      d.store([16], v);\n"
                "       ^\n"
                "t.tile:5:6: error: '.atomic_add': values have no methods or attributes here; write "
                "'atomic_add_tensor_descriptor(desc, offsets, value)' for a tensor descriptor's desc.atomic_add(offsets, value)\n"
                "      d.atomic_add([0], v);\n"
                "       ^\n");
}

/* Statements written as in Python or C get one error each saying how they are written here, and the rest of the
 * kernel is still parsed (elif is read as else if, i++ as i += 1, a C for's body as a block): no cascade, and the
 * next mistake is reported too (they were "expected ';' after expression, found 'n'", "expected an expression,
 * found '+'", and a C for gave a second error at its '++'). */
Test(lang_diag, python_and_c_statements) {
    expect_diag("kernel k(x: *f32, n: i32) {\n    let i = 0;\n    for (let j = 0; j < n; j++) {\n        i++;\n    }\n"
                "    if n > 0 { i--; } elif n < 0 { store(x, zz); }\n}\n",
                "t.tile:3:5: error: a 'for' loop is written 'for i in range(start, end, step) { ... }' here, not as C's "
                "'for (init; cond; step)'\n"
                "      for (let j = 0; j < n; j++) {\n"
                "      ^\n"
                "t.tile:4:10: error: '++': there is no increment operator here; write 'i += 1'\n"
                "          i++;\n"
                "           ^\n"
                "t.tile:6:17: error: '--': there is no decrement operator here; write 'i -= 1'\n"
                "      if n > 0 { i--; } elif n < 0 { store(x, zz); }\n"
                "                  ^\n"
                "t.tile:6:23: error: 'elif' is written 'else if' here\n"
                "      if n > 0 { i--; } elif n < 0 { store(x, zz); }\n"
                "                        ^\n");
    expect_diag("kernel k(x: *f32, n: i32) {\n    if n > 0:\n        store(x, 1.0);\n}\n",
                "t.tile:2:13: error: expected '{' to open a block, found ':' (a block is in braces here, not after ':' and an indent)\n"
                "      if n > 0:\n"
                "              ^\n");
}

/* Other languages' bindings (`var x`, `let mut x`) get one error saying how a name is bound here, and the
 * statement is read as a `let` (the next mistake is still found); a type name in a binding is said to be one (they
 * were "expected ';' after expression, found 'acc'", "expected '=' after the name in 'let', found 'b'" and
 * "expected a name, found 'i1'", which reads as a name). */
Test(lang_diag, other_languages_bindings) {
    expect_diag("kernel k(x: *f32) {\n    var acc = 1.0;\n    let mut b = 2.0;\n    let (w, i1) = (acc, b);\n"
                "    auto c: f32 = w;\n    store(x, w + c + qq);\n}\n",
                "t.tile:2:5: error: 'var' is not a keyword here: a name is bound with 'let' (`let acc = ...;`) and any name "
                "can be reassigned (`acc = ...;`)\n"
                "      var acc = 1.0;\n"
                "      ^\n"
                "t.tile:3:9: error: 'let mut': every name can be reassigned here; write 'let b'\n"
                "      let mut b = 2.0;\n"
                "          ^\n"
                "t.tile:4:13: error: expected a name, found the type name 'i1': type names cannot name values\n"
                "      let (w, i1) = (acc, b);\n"
                "              ^\n"
                "t.tile:5:5: error: 'auto' is not a keyword here: a name is bound with 'let' (`let c = ...;`) and any name "
                "can be reassigned (`c = ...;`)\n"
                "      auto c: f32 = w;\n"
                "      ^\n");
    /* each is read as the 'let' it names, so the names after it are checked too */
    expect_diag("kernel k(x: *f32) {\n    var acc = 1.0;\n    let mut b = 2.0;\n    c: f32 = acc;\n    store(x, b + c + qq);\n}\n",
                "t.tile:2:5: error: 'var' is not a keyword here: a name is bound with 'let' (`let acc = ...;`) and any name "
                "can be reassigned (`acc = ...;`)\n"
                "      var acc = 1.0;\n"
                "      ^\n"
                "t.tile:3:9: error: 'let mut': every name can be reassigned here; write 'let b'\n"
                "      let mut b = 2.0;\n"
                "          ^\n"
                "t.tile:4:5: error: a new variable is declared with 'let c: T = ...;', not Python's annotated assignment\n"
                "      c: f32 = acc;\n"
                "      ^\n"
                "t.tile:5:22: error: unknown name 'qq'\n"
                "      store(x, b + c + qq);\n"
                "                       ^\n");
    expect_diag("kernel k(x: *f32) {\n    store(x, max(load(x), -inf) + NAN);\n}\n",
                "t.tile:2:28: error: unknown name 'inf'; infinity is written '1.0 / 0.0' here (a float literal, folded)\n"
                "      store(x, max(load(x), -inf) + NAN);\n"
                "                             ^\n"
                "t.tile:2:35: error: unknown name 'NAN'; a NaN is written '0.0 / 0.0' here (a float literal, folded)\n"
                "      store(x, max(load(x), -inf) + NAN);\n"
                "                                    ^\n");
    expect_diag("kernel k(x: *f32) {\n    let var = 1.0;\n    var = var + 1.0;\n    store(x, var + qq);\n}\n",
                "t.tile:4:20: error: unknown name 'qq'\n"
                "      store(x, var + qq);\n"
                "                     ^\n");
}

/* Triton's module prefixes get one error naming the plain name, then the parse goes on as if it was written so
 * (it was "'.exp': values have no methods", then "expected ')' after call arguments, found 'exp'"). */
Test(lang_diag, c_pointer_type) {
    expect_diag("kernel k(x: f32*, n: i32) {\n    store(x, 1.0);\n}\n",
                "t.tile:1:16: error: a pointer type is written before its pointee: '*f32', not 'f32*'\n"
                "  kernel k(x: f32*, n: i32) {\n"
                "                 ^\n");
    /* both are read as the pointer, so the names after them are checked too */
    expect_diag("kernel k(x: f32*, y: i32[]) {\n    store(x + load(y), qq);\n}\n",
                "t.tile:1:16: error: a pointer type is written before its pointee: '*f32', not 'f32*'\n"
                "  kernel k(x: f32*, y: i32[]) {\n"
                "                 ^\n"
                "t.tile:1:25: error: an array parameter is a pointer to its first element here: 'y: *i32'\n"
                "  kernel k(x: f32*, y: i32[]) {\n"
                "                          ^\n"
                "t.tile:2:24: error: unknown name 'qq'\n"
                "      store(x + load(y), qq);\n"
                "                         ^\n");
}

/* None is a compile-time value: == / != None (and Python's `is None`, `is not None`) are compile-time i1s; it is no
 * run-time value, and no other operator takes it.  `is` of anything else compares compile-time values only. */
Test(lang_diag, none_comparisons) {
    Result r = compile("fn f(a, b = None) {\n    if b is None { return a; }\n    return a + b;\n}\n"
                       "kernel k(x: *i32) {\n    let z = None;\n    static_assert(z == None && !(x is None) && (x is not None) && (z != 1) == true && (1 == z) == false, \"cmp\");\n"
                       "    store(x, f(1) + f(2, 3));\n}\n");
    cr_expect_not_null(r.m, "%s", r.diags);
    cr_expect(strstr(r.ir, "value=6"), "%s", r.ir);
    result_free(&r);
    expect_diag("kernel k(x: *f32) {\n    if x is 3 { store(x, 1.0); }\n}\n",
                "t.tile:2:10: error: 'is' compares compile-time values (types, strings, numbers, None); write '==' to compare "
                "run-time values\n"
                "      if x is 3 { store(x, 1.0); }\n"
                "           ^\n");
    expect_diag("kernel k(x: *f32) {\n    if None < 3 { store(x, 1.0); }\n}\n",
                "t.tile:2:13: error: None only compares with == and != (here 'None' < 'i32')\n"
                "      if None < 3 { store(x, 1.0); }\n"
                "              ^\n");
    expect_diag("kernel k(x: *f32) {\n    let a = None;\n    store(x, a);\n}\n",
                "t.tile:3:14: error: 'None' cannot be used as a value\n"
                "      store(x, a);\n"
                "               ^\n");
}

/* Triton's Python spellings get one error each saying how they are written here, and the file is read on as if
 * they had been (no cascade): a decorator, and/or/not/True, a method's arguments, math.inf (math.nan, math.pi,
 * math.e, math.sqrt), and
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
    /* Python's other math constants name their floats, and a math function its built-in */
    expect_diag("kernel k(x: *f32) {\n    store(x, -math.nan + math.pi * math.e + math.sqrt(2.0));\n}\n",
                "t.tile:2:15: error: 'math.nan': there is no 'math' module here; write the float (0.0 / 0.0)\n"
                "      store(x, -math.nan + math.pi * math.e + math.sqrt(2.0));\n"
                "                ^\n"
                "t.tile:2:26: error: 'math.pi': there is no 'math' module here; write the float (3.141592653589793)\n"
                "      store(x, -math.nan + math.pi * math.e + math.sqrt(2.0));\n"
                "                           ^\n"
                "t.tile:2:36: error: 'math.e': there is no 'math' module here; write the float (2.718281828459045)\n"
                "      store(x, -math.nan + math.pi * math.e + math.sqrt(2.0));\n"
                "                                     ^\n"
                "t.tile:2:45: error: 'math.sqrt': there is no 'math' module here; write 'sqrt' (the built-ins are plain names, "
                "docs/language.md)\n"
                "      store(x, -math.nan + math.pi * math.e + math.sqrt(2.0));\n"
                "                                              ^\n");
    Result r = compile("kernel k(a: **f32, n: i32) {\n    let and = 2;\n    let not = and * 2;\n    store(load(a), cast(not, f32));\n}\n");
    cr_expect_not_null(r.m, "a pointer to pointers, and Python's words as names, compile: %s", r.diags);
    result_free(&r);
    r = compile("kernel k(x: *i32, a: i32, b: i32) {\n    let t = a // first part\n        + b;\n    store(x, t);\n}\n");
    cr_expect_not_null(r.m, "a comment in words before a line that goes on stays a comment: %s", r.diags);
    result_free(&r);
}

/* Python's module imports, the first lines of every Triton file: one error for each such line, which is skipped,
 * so the parse goes on into the kernel (read as this language's `import`, the missing file name and ';' used to
 * swallow the kernel, and the `tl` of `import triton.language as tl` was taken for a prefix: "write 'language'").
 * A file name import and a variable named `from` are untouched. */
Test(lang_diag, python_module_imports) {
    expect_diag("import triton\n"
                "from triton.language.extra import libdevice\n"
                "import triton.language as tl\n"
                "import \"math.tile\";\n"
                "kernel k(x: *i32) {\n"
                "    let from = 3;\n"
                "    store(x, cdiv(from, 2))\n"
                "}\n",
                "t.tile:1:1: error: 'import triton': Python's modules are not imported here: the built-ins are plain names ('tl.load' "
                "is 'load') and the standard library needs no import; 'import' takes a file name (import \"math.tile\";)\n"
                "  import triton\n"
                "  ^\n"
                "t.tile:2:1: error: 'from triton.language.extra import libdevice': Python's modules are not imported here: the "
                "built-ins are plain names ('tl.load' is 'load') and the standard library needs no import; 'import' takes a file "
                "name (import \"math.tile\";)\n"
                "  from triton.language.extra import libdevice\n"
                "  ^\n"
                "t.tile:3:1: error: 'import triton.language as tl': Python's modules are not imported here: the built-ins are plain "
                "names ('tl.load' is 'load') and the standard library needs no import; 'import' takes a file name (import "
                "\"math.tile\";)\n"
                "  import triton.language as tl\n"
                "  ^\n"
                "t.tile:7:28: error: expected ';' after expression, found '}' on line 8\n"
                "      store(x, cdiv(from, 2))\n"
                "                             ^\n");
    expect_ok("import \"math.tile\";\nkernel k(x: *i32) {\n    let from = 3;\n    from\n        = from + 1;\n    store(x, cdiv(from, 2));\n}\n");
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
    /* the type a whole chain names (it was "write 'float16'", from the chain's first name) */
    expect_diag("kernel k(x: *f32) {\n    store(x, load(x) as triton.language.float16 as f32);\n}\n",
                "t.tile:2:25: error: 'triton.language.float16': there is no 'triton' module here; the type is 'f16'\n"
                "      store(x, load(x) as triton.language.float16 as f32);\n"
                "                          ^\n");
    /* Inductor's aliases tl_math and triton_helpers are modules too (they were "values have no methods") */
    expect_diag("kernel k(x: *f32) {\n    store(x, triton_helpers.maximum(tl_math.exp(load(x)), 0.0));\n}\n",
                "t.tile:2:14: error: 'triton_helpers.maximum': there is no 'triton_helpers' module here; write 'maximum' (the built-ins "
                "are plain names, docs/language.md)\n"
                "      store(x, triton_helpers.maximum(tl_math.exp(load(x)), 0.0));\n"
                "               ^\n"
                "t.tile:2:37: error: 'tl_math.exp': there is no 'tl_math' module here; write 'exp' (the built-ins are plain names, "
                "docs/language.md)\n"
                "      store(x, triton_helpers.maximum(tl_math.exp(load(x)), 0.0));\n"
                "                                      ^\n");
    /* Inductor's generated kernels open with @triton_heuristics.pointwise(size_hints=..., ...) before @triton.jit: one
     * error each, skipped with their arguments (it was "'.pointwise': values have no methods", then a parse error) */
    expect_diag("@triton_heuristics.pointwise(\n    size_hints={'x': 1024},\n    filename=__file__,\n)\n@triton.jit\n"
                "kernel k(x: *f32) {\n    store(x, 1.0);\n}\n",
                "t.tile:1:2: error: '@triton_heuristics.pointwise': a kernel needs no decorator here: 'kernel NAME(params) { ... }' "
                "(launch settings are attributes such as @num_warps(4); tuning configurations are @config(...))\n"
                "  @triton_heuristics.pointwise(\n"
                "   ^\n"
                "t.tile:5:2: error: '@triton.jit': a kernel needs no decorator here: 'kernel NAME(params) { ... }' (launch settings "
                "are attributes such as @num_warps(4); tuning configurations are @config(...))\n"
                "  @triton.jit\n"
                "   ^\n");
    /* isinstance (triton_kernels' isinstance(shape_bm, tl.tensor) and shape_bm.dtype.is_ptr()) names the type questions */
    expect_diag("kernel k(p: *i32, n: i32) {\n    let m = n;\n    if isinstance(p, n) && is_ptr(p) { m = load(p); }\n    store(p, m);\n}\n",
                "t.tile:3:8: error: unknown name 'isinstance': Triton's isinstance(x, tl.tensor) or isinstance(x, tl.constexpr) asks at "
                "compile time what an argument is; here it has a type: ask is_ptr(x), is_int(x), is_float(x), dtype_of(x) == T or x "
                "is None\n"
                "      if isinstance(p, n) && is_ptr(p) { m = load(p); }\n"
                "         ^\n");
    /* Triton's tl.core (Inductor's sort helper calls tl.core.get_int_dtype) is a module too (it was "write 'core'") */
    expect_diag("kernel k(x: *i32) {\n    store(x, cast(1.5, tl.core.get_int_dtype(32, true), bitcast=true));\n}\n",
                "t.tile:2:24: error: 'tl.core.get_int_dtype': there is no 'tl' module here; write 'get_int_dtype' (the built-ins are "
                "plain names, docs/language.md)\n"
                "      store(x, cast(1.5, tl.core.get_int_dtype(32, true), bitcast=true));\n"
                "                         ^\n");
    /* libdevice's accurate functions whose plain name is the hardware approximation name the form that keeps the accuracy
     * (Liger's geglu calls libdevice.tanh); libdevice's others, and tl.math's, the plain name */
    expect_diag("kernel k(x: *f32) {\n    let v = load(x);\n    store(x, libdevice.tanh(v) + tl.extra.cuda.libdevice.log(v) + "
                "libdevice.pow(v, v));\n}\n",
                "t.tile:3:14: error: 'libdevice.tanh': there is no 'libdevice' module here; write 'tanh(x, exact=true)' (libdevice's "
                "tanh is the accurate one; plain 'tanh' is tanh.approx)\n"
                "      store(x, libdevice.tanh(v) + tl.extra.cuda.libdevice.log(v) + libdevice.pow(v, v));\n"
                "               ^\n"
                "t.tile:3:34: error: 'tl.extra.cuda.libdevice.log': there is no 'tl' module here; write 'log(x as f64) as f32' for "
                "libdevice's accuracy ('log' is lg2.approx, as Triton's tl.log)\n"
                "      store(x, libdevice.tanh(v) + tl.extra.cuda.libdevice.log(v) + libdevice.pow(v, v));\n"
                "                                   ^\n"
                "t.tile:3:67: error: 'libdevice.pow': there is no 'libdevice' module here; write 'pow' (the built-ins are plain names, "
                "docs/language.md)\n"
                "      store(x, libdevice.tanh(v) + tl.extra.cuda.libdevice.log(v) + libdevice.pow(v, v));\n"
                "                                                                    ^\n");
    /* read as `const B` (and checked so: no value for B) */
    expect_diag("kernel k(x: *f32, B: tl.constexpr) {\n    store(x, 1.0);\n}\n",
                "t.tile:1:19: error: const parameter 'B' has no default and is not defined (-D B=...)\n"
                "  kernel k(x: *f32, B: tl.constexpr) {\n"
                "                    ^\n"
                "t.tile:1:22: error: 'tl.constexpr': a compile-time parameter is written 'const NAME: T' (or 'const NAME = default', "
                "or 'NAME: constexpr'), a local compile-time constant 'const NAME = value;' (or 'let NAME: constexpr = value;')\n"
                "  kernel k(x: *f32, B: tl.constexpr) {\n"
                "                       ^\n");
    /* triton.language.standard and core (sorting and top-k kernels' `tl.standard._log2(n)`, `import triton.language.core
     * as core` then `core.int16`): modules too, naming math.tile's _log2 and the type (they were "write 'standard'" and
     * "values have no methods", then "unknown name '_log2'") */
    expect_diag("kernel k(x: *i16) {\n    let n: constexpr = tl.standard._log2(16);\n    store(x, n as core.int16);\n}\n",
                "t.tile:2:24: error: 'tl.standard._log2': there is no 'tl' module here; write '_log2' (the built-ins are plain "
                "names, docs/language.md)\n"
                "      let n: constexpr = tl.standard._log2(16);\n"
                "                         ^\n"
                "t.tile:3:19: error: 'core.int16': there is no 'core' module here; the type is 'i16'\n"
                "      store(x, n as core.int16);\n"
                "                    ^\n");
}

/* CUDA's spellings: the built-in variables, one error each at the name (a method error at the '.' before), and the
 * functions, an unknown name that says what is written here.  A variable of such a name is the program's own. */
Test(lang_diag, cuda_spellings) {
    expect_diag("kernel k(a: *f32) {\n    let i = blockIdx.x * blockDim.x + threadIdx.x;\n    store(a + gridDim.y, 1.0);\n}\n",
                "t.tile:2:13: error: 'blockIdx.x': CUDA's block index is 'program_id(0)' here (the index of this program along axis 0)\n"
                "      let i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                "              ^\n"
                "t.tile:2:26: error: 'blockDim.x': a program here is a whole thread block working on tiles, and no code names a thread: "
                "the elements of a tile are 'arange(0, BLOCK)' (BLOCK a 'const' parameter)\n"
                "      let i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                "                           ^\n"
                "t.tile:2:39: error: 'threadIdx.x': a program here is a whole thread block working on tiles, and no code names a thread: "
                "the elements of a tile are 'arange(0, BLOCK)' (BLOCK a 'const' parameter)\n"
                "      let i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                "                                        ^\n"
                "t.tile:3:15: error: 'gridDim.y': CUDA's grid size is 'num_programs(1)' here (the number of programs along axis 1)\n"
                "      store(a + gridDim.y, 1.0);\n"
                "                ^\n");
    expect_diag("kernel k(a: *i32) {\n    __syncthreads();\n    atomicAdd(a, 1);\n    __shfl_xor_sync(0xffffffff, 1, 2);\n}\n",
                "t.tile:2:5: error: unknown name '__syncthreads'; CUDA's '__syncthreads' is 'debug_barrier()' here\n"
                "      __syncthreads();\n"
                "      ^\n"
                "t.tile:3:5: error: unknown name 'atomicAdd'; CUDA's 'atomicAdd' is 'atomic_add' here\n"
                "      atomicAdd(a, 1);\n"
                "      ^\n"
                "t.tile:4:5: error: unknown name '__shfl_xor_sync'; there are no warp shuffles here: a program works on whole tiles, "
                "combined with sum, max, min, reduce or cumsum along an axis\n"
                "      __shfl_xor_sync(0xffffffff, 1, 2);\n"
                "      ^\n");
    expect_ok("kernel k(a: *f32) {\n    let blockIdx = 3;\n    store(a + blockIdx, 1.0);\n}\n");
}

/* Python's `def`: one error, then read as `fn`, so the rest of a ported kernel is checked (its ':' block here). */
Test(lang_diag, python_def) {
    expect_diag("def k(a: *f32) {\n    store(a, 1.0);\n}\nkernel m(a: *f32) { store(a, 1.0); }\n",
                "t.tile:1:1: error: 'def' is written 'kernel' for a kernel (Triton's @triton.jit function) and 'fn' for a function it "
                "calls: 'kernel NAME(params) { ... }'\n"
                "  def k(a: *f32) {\n"
                "  ^\n");
    expect_diag("def k(a):\n    store(a, 1.0)\n",
                "t.tile:1:1: error: 'def' is written 'kernel' for a kernel (Triton's @triton.jit function) and 'fn' for a function it "
                "calls: 'kernel NAME(params) { ... }'\n"
                "  def k(a):\n"
                "  ^\n"
                "t.tile:1:9: error: expected '{' to open a block, found ':' (a block is in braces here, not after ':' and an indent)\n"
                "  def k(a):\n"
                "          ^\n");
    expect_ok("kernel k(def: *f32) {\n    store(def, 1.0);\n}\n");
}

/* Python's chained assignment, `a = b = v` (and after a `let`): named at the second '=' (it was "expected ';' after
 * assignment, found '='"). */
Test(lang_diag, python_chained_assignment) {
    expect_diag("kernel k(a: *f32) {\n    let x = 0.0;\n    let y = 0.0;\n    x = y = 1.0;\n    let z = x = 2.0;\n    store(a, x);\n}\n",
                "t.tile:4:11: error: there is no chained assignment here (Python's 'a = b = v'): assign each name ('b = v; a = b;')\n"
                "      x = y = 1.0;\n"
                "            ^\n"
                "t.tile:5:15: error: there is no chained assignment here (Python's 'a = b = v'): assign each name ('b = v; a = b;')\n"
                "      let z = x = 2.0;\n"
                "                ^\n");
}

/* Python's annotated assignment, `NAME: tl.constexpr = e` (Triton's local constexpr, tutorial 06's `LN2`) and
 * `acc: tl.float32 = 0.0`: one error saying how it is declared, then read as that `let`, so the parse goes on
 * (it was "expected ';' after expression, found ':'").  A `tl.constexpr` there is reported once, by the module
 * prefix's error, which names the same form. */
Test(lang_diag, python_annotated_assignment) {
    expect_diag("kernel k(x: *f32) {\n    LN2: constexpr = 0.5;\n    acc: f32 = 1.0;\n    p: *f32 = x;\n"
                "    B: tl.constexpr = 16;\n    let o = arange(0, B);\n    store(p + o, acc * LN2);\n}\n",
                "t.tile:2:5: error: a local compile-time constant is declared with 'let LN2: constexpr = ...;' (or 'const LN2 = ...;'), "
                "not Python's annotated assignment\n"
                "      LN2: constexpr = 0.5;\n"
                "      ^\n"
                "t.tile:3:5: error: a new variable is declared with 'let acc: T = ...;', not Python's annotated assignment\n"
                "      acc: f32 = 1.0;\n"
                "      ^\n"
                "t.tile:4:5: error: a new variable is declared with 'let p: T = ...;', not Python's annotated assignment\n"
                "      p: *f32 = x;\n"
                "      ^\n"
                "t.tile:5:8: error: 'tl.constexpr': a compile-time parameter is written 'const NAME: T' (or 'const NAME = default', "
                "or 'NAME: constexpr'), a local compile-time constant 'const NAME = value;' (or 'let NAME: constexpr = value;')\n"
                "      B: tl.constexpr = 16;\n"
                "         ^\n");
}

/* Triton's module-level constants, `NAME: tl.constexpr = v` and `NAME = tl.constexpr(v)`: one error each naming
 * `const NAME = ...;`, then read as that const (a typed one keeps its type), so the declarations after them are
 * still checked (it was "expected 'kernel', 'fn', 'const' or 'import', found 'LN2'", and the next ones skipped). */
Test(lang_diag, triton_module_level_constants) {
    /* these spellings are read as the form here, so the names after them are checked too (a port's first run lists
     * 'zz' beside them; it was reported only once the file had none of them) */
    expect_diag("B: tl.constexpr = 4\n@triton.jit\nkernel k(x: *f32, n: i32) {\n    if n > 0 { store(x, 1.0); } elif n < 0 { "
                "store(x, zz); }\n}\n",
                "t.tile:1:1: error: a file-level constant is declared with 'const': 'const B = ...;' (Triton's 'B: tl.constexpr = "
                "...' and 'B = tl.constexpr(...)')\n"
                "  B: tl.constexpr = 4\n"
                "  ^\n"
                "t.tile:2:2: error: '@triton.jit': a kernel needs no decorator here: 'kernel NAME(params) { ... }' (launch settings "
                "are attributes such as @num_warps(4); tuning configurations are @config(...))\n"
                "  @triton.jit\n"
                "   ^\n"
                "t.tile:4:33: error: 'elif' is written 'else if' here\n"
                "      if n > 0 { store(x, 1.0); } elif n < 0 { store(x, zz); }\n"
                "                                  ^\n"
                "t.tile:4:55: error: unknown name 'zz'\n"
                "      if n > 0 { store(x, 1.0); } elif n < 0 { store(x, zz); }\n"
                "                                                        ^\n");
    expect_diag("LN2: constexpr = 0.69;\nSQRT2 = constexpr(1.41);\nN: i32 = 4;\nkernel k(x: *f32) {\n    let y = ;\n}\n",
                "t.tile:1:1: error: a file-level constant is declared with 'const': 'const LN2 = ...;' (Triton's 'LN2: tl.constexpr = "
                "...' and 'LN2 = tl.constexpr(...)')\n"
                "  LN2: constexpr = 0.69;\n"
                "  ^\n"
                "t.tile:2:1: error: a file-level constant is declared with 'const': 'const SQRT2 = ...;' (Triton's 'SQRT2: tl.constexpr "
                "= ...' and 'SQRT2 = tl.constexpr(...)')\n"
                "  SQRT2 = constexpr(1.41);\n"
                "  ^\n"
                "t.tile:3:1: error: a file-level constant is declared with 'const': 'const N = ...;' (Triton's 'N: tl.constexpr = ...' "
                "and 'N = tl.constexpr(...)')\n"
                "  N: i32 = 4;\n"
                "  ^\n"
                "t.tile:5:13: error: expected an expression, found ';'\n"
                "      let y = ;\n"
                "              ^\n");
    /* as Triton writes them: 'tl.' and no ';' (it was a second error for each, "there is no 'tl' module here; write
     * 'constexpr'" or "expected ';' after constant") */
    expect_diag("LN2: tl.constexpr = 0.69\nSQRT2 = tl.constexpr(1.41)\nkernel k(x: *f32) {\n    let y = ;\n}\n",
                "t.tile:1:1: error: a file-level constant is declared with 'const': 'const LN2 = ...;' (Triton's 'LN2: tl.constexpr = "
                "...' and 'LN2 = tl.constexpr(...)')\n"
                "  LN2: tl.constexpr = 0.69\n"
                "  ^\n"
                "t.tile:2:1: error: a file-level constant is declared with 'const': 'const SQRT2 = ...;' (Triton's 'SQRT2: tl.constexpr "
                "= ...' and 'SQRT2 = tl.constexpr(...)')\n"
                "  SQRT2 = tl.constexpr(1.41)\n"
                "  ^\n"
                "t.tile:4:13: error: expected an expression, found ';'\n"
                "      let y = ;\n"
                "              ^\n");
}
