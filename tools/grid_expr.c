/* grid_expr.c - a recursive-descent evaluator of grid expressions (grammar in grid_expr.h). */
#include "tools/grid_expr.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Env {
    const char *const *names;
    const int64_t *vals;
    int n;
    const char *start, *p;
    int depth; /* parentheses and cdiv( open around p */
    bool bad;
    char *why; /* the first problem, with its column */
    size_t whylen;
} Env;

/* Mark the expression bad with the first reason, at the current column. */
static void fail(Env *e, const char *what, int len, const char *name) {
    if (!e->bad) snprintf(e->why, e->whylen, what, (int)(e->p - e->start) + 1, len, name);
    e->bad = true;
}

static int64_t ex_expr(Env *e);

enum { MAX_DEPTH = 64 }; /* nesting a grid needs is a few levels; the evaluator recurses once per level */

/* Step over `c`, or mark the expression bad (never past the end of the string). */
static void expect(Env *e, char c) {
    while (*e->p == ' ') e->p++;
    if (*e->p == c) e->p++;
    else if (c == ')') fail(e, "column %d: expected ')'%.*s", 0, "");
    else fail(e, "column %d: expected ','%.*s", 0, "");
}

/* atom = INT | NAME | "cdiv" "(" expr "," expr ")" | "(" expr ")" */
static int64_t ex_atom(Env *e) {
    while (*e->p == ' ') e->p++;
    if (*e->p == '(') {
        if (e->depth == MAX_DEPTH) return fail(e, "column %d: parentheses nested more than 64 deep%.*s", 0, ""), 0;
        e->p++;
        e->depth++;
        int64_t v = ex_expr(e);
        e->depth--;
        expect(e, ')');
        return v;
    }
    if (isdigit((unsigned char)*e->p)) {
        errno = 0;
        const char *s = e->p;
        int64_t v = strtoll(s, (char **)&e->p, 0);
        if (errno == ERANGE) {
            e->p = s;
            return fail(e, "column %d: the number does not fit in 64 bits%.*s", 0, ""), 0;
        }
        return v;
    }
    if (!isalpha((unsigned char)*e->p) && *e->p != '_') {
        fail(e, "column %d: expected a number, a name, cdiv(a, b) or '('%.*s", 0, "");
        return 0;
    }
    const char *s = e->p;
    while (isalnum((unsigned char)*e->p) || *e->p == '_') e->p++;
    size_t len = (size_t)(e->p - s);
    if (len == 4 && !strncmp(s, "cdiv", 4) && *e->p == '(') {
        if (e->depth == MAX_DEPTH) return fail(e, "column %d: parentheses nested more than 64 deep%.*s", 0, ""), 0;
        e->p++;
        e->depth++;
        int64_t a = ex_expr(e);
        expect(e, ',');
        int64_t b = ex_expr(e);
        e->depth--;
        expect(e, ')');
        if (b <= 0) fail(e, "column %d: cdiv's divisor is not positive%.*s", 0, "");
        return b > 0 ? a / b + (a % b > 0) : 0; /* the ceiling, without a + b - 1 (which overflows near 2^63) */
    }
    for (int i = e->n - 1; i >= 0; i--)
        if (strlen(e->names[i]) == len && !strncmp(e->names[i], s, len)) return e->vals[i];
    e->p = s;
    fail(e, "column %d: unknown name '%.*s' (the --arg names and the configuration's constants)", (int)len, s);
    return 0;
}

/* term = atom {("*" | "/") atom} */
static int64_t ex_term(Env *e) {
    int64_t v = ex_atom(e);
    for (;;) {
        while (*e->p == ' ') e->p++;
        char op = *e->p;
        if (op != '*' && op != '/') return v;
        e->p++;
        int64_t r = ex_atom(e);
        if (op == '/' && r == 0) return fail(e, "column %d: division by zero%.*s", 0, ""), 0;
        if (op == '*' && __builtin_mul_overflow(v, r, &v)) return fail(e, "column %d: the product overflows%.*s", 0, ""), 0;
        if (op == '/') v /= r;
    }
}

/* expr = term {("+" | "-") term} */
static int64_t ex_expr(Env *e) {
    int64_t v = ex_term(e);
    for (;;) {
        while (*e->p == ' ') e->p++;
        char op = *e->p;
        if (op != '+' && op != '-') return v;
        e->p++;
        int64_t r = ex_term(e);
        if (op == '+' ? __builtin_add_overflow(v, r, &v) : __builtin_sub_overflow(v, r, &v))
            return fail(e, "column %d: the sum overflows%.*s", 0, ""), 0;
    }
}

bool grid_expr_dims(const char *grid, const char *const *names, const int64_t *vals, int n, unsigned dims[3], char *why, size_t whylen) {
    dims[0] = dims[1] = dims[2] = 1;
    const char *p = grid;
    for (int d = 0; d < 3 && *p; d++) {
        Env e = {names, vals, n, grid, p, 0, false, why, whylen};
        int64_t v = ex_expr(&e);
        while (*e.p == ' ') e.p++;
        if (!e.bad && *e.p && *e.p != ',') fail(&e, "column %d: unexpected '%.*s'", 1, e.p);
        if (!e.bad && *e.p == ',' && d == 2) fail(&e, "column %d: more than three dimensions%.*s", 0, "");
        if (e.bad) return false;
        if (v < 1 || v > (d ? 65535 : 2147483647)) { /* the launch's limits: y or z over 65535 was timed, each config skipped, exit 3 */
            snprintf(why, whylen, "the grid's %c is %lld: x is 1 to 2^31-1, y and z 1 to 65535", "xyz"[d], (long long)v);
            return false;
        }
        dims[d] = (unsigned)v;
        p = *e.p == ',' ? e.p + 1 : e.p;
    }
    return true;
}
