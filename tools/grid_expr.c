/* grid_expr.c - a recursive-descent evaluator of grid expressions (grammar in grid_expr.h). */
#include "tools/grid_expr.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef struct Env {
    const char *const *names;
    const int64_t *vals;
    int n;
    const char *p;
    bool bad;
} Env;

static int64_t ex_expr(Env *e);

/* Step over `c`, or mark the expression bad (never past the end of the string). */
static void expect(Env *e, char c) {
    if (*e->p == c) e->p++;
    else e->bad = true;
}

/* atom = INT | NAME | "cdiv" "(" expr "," expr ")" | "(" expr ")" */
static int64_t ex_atom(Env *e) {
    while (*e->p == ' ') e->p++;
    if (*e->p == '(') {
        e->p++;
        int64_t v = ex_expr(e);
        expect(e, ')');
        return v;
    }
    if (isdigit((unsigned char)*e->p)) return strtoll(e->p, (char **)&e->p, 0);
    const char *s = e->p;
    while (isalnum((unsigned char)*e->p) || *e->p == '_') e->p++;
    size_t len = (size_t)(e->p - s);
    if (len == 4 && !strncmp(s, "cdiv", 4) && *e->p == '(') {
        e->p++;
        int64_t a = ex_expr(e);
        expect(e, ',');
        int64_t b = ex_expr(e);
        expect(e, ')');
        if (b <= 0) e->bad = true;
        return b > 0 ? (a + b - 1) / b : 0;
    }
    for (int i = e->n - 1; i >= 0; i--)
        if (strlen(e->names[i]) == len && !strncmp(e->names[i], s, len)) return e->vals[i];
    e->bad = true;
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
        if (op == '/' && r == 0) return e->bad = true, 0;
        v = op == '*' ? v * r : v / r;
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
        v = op == '+' ? v + r : v - r;
    }
}

bool grid_expr_dims(const char *grid, const char *const *names, const int64_t *vals, int n, unsigned dims[3]) {
    dims[0] = dims[1] = dims[2] = 1;
    const char *p = grid;
    for (int d = 0; d < 3 && *p; d++) {
        Env e = {names, vals, n, p, false};
        int64_t v = ex_expr(&e);
        if (e.bad || v < 1 || v > 2147483647) return false;
        dims[d] = (unsigned)v;
        p = *e.p == ',' ? e.p + 1 : e.p;
    }
    return true;
}
