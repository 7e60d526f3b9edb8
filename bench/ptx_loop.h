/* ptx_loop.h - the main loop of a kernel's PTX, for the reports that count
 * what the compiler made (bench/gemm_report.c, bench/attention_report.c).
 *
 * Every branch back to a label above it (in the same .entry) closes a loop;
 * the main loop is the one with the most mma instructions (mma.sync or
 * wgmma), the innermost (shortest) on ties.  Header-only, static inline:
 * each bench program is built alone. */
#ifndef TILE_BENCH_PTX_LOOP_H
#define TILE_BENCH_PTX_LOOP_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct PtxLine {
    char label[64];  /* "name" when the line is "name:" */
    char target[64]; /* the label a bra jumps to */
    char op[64];     /* opcode with modifiers, guard removed; "" for non-instructions */
    bool func;       /* a .entry or .func starts here */
} PtxLine;

/* One PtxLine per line of the PTX (malloc'd in *out); the number of lines. */
static inline int ptx_parse_lines(const char *ptx, PtxLine **out) {
    int cap = 1024, n = 0;
    PtxLine *ls = malloc(sizeof(PtxLine) * (size_t)cap);
    for (const char *p = ptx; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (n == cap) ls = realloc(ls, sizeof(PtxLine) * (size_t)(cap *= 2));
        PtxLine *l = &ls[n++];
        memset(l, 0, sizeof *l);
        char buf[512];
        snprintf(buf, sizeof buf, "%.*s", (int)(len < 511 ? len : 511), p);
        char *s = buf;
        while (*s == ' ' || *s == '\t') s++;
        char *cm = strstr(s, "//");
        if (cm) *cm = 0;
        l->func = strstr(s, ".entry ") || strstr(s, ".func ");
        size_t sl = strlen(s);
        while (sl && (s[sl - 1] == ' ' || s[sl - 1] == '\t' || s[sl - 1] == '\r')) s[--sl] = 0;
        if (sl && s[sl - 1] == ':' && !strchr(s, ' ')) {
            snprintf(l->label, sizeof l->label, "%.*s", (int)(sl - 1), s);
        } else if (*s && *s != '.' && *s != '{' && *s != '}' && *s != ')' && *s != '(') {
            if (*s == '@') { /* guard */
                while (*s && *s != ' ' && *s != '\t') s++;
                while (*s == ' ' || *s == '\t') s++;
            }
            size_t ol = strcspn(s, " \t;");
            snprintf(l->op, sizeof l->op, "%.*s", (int)(ol < 63 ? ol : 63), s);
            if (!strncmp(l->op, "bra", 3)) {
                char *t = s + ol;
                while (*t == ' ' || *t == '\t') t++;
                snprintf(l->target, sizeof l->target, "%.*s", (int)strcspn(t, " \t;"), t);
            }
        }
        p = e ? e + 1 : p + len;
    }
    *out = ls;
    return n;
}

static inline bool ptx_is_mma(const char *op) { return !strncmp(op, "mma.sync", 8) || !strncmp(op, "wgmma.mma_async", 15); }

/* The main loop as 0-based line indexes [*first, *last] (its label to its back
 * branch); false when the PTX has no loop. */
static inline bool ptx_main_loop(const PtxLine *ls, int n, int *first, int *last) {
    int best_mma = -1, best_span = 0;
    int func_start = 0; /* labels are per function: a branch never leaves its .entry */
    for (int j = 0; j < n; j++) {
        if (ls[j].func) func_start = j;
        if (!ls[j].target[0]) continue;
        for (int i = j - 1; i >= func_start; i--) {
            if (strcmp(ls[i].label, ls[j].target)) continue;
            int mma = 0;
            for (int k = i; k <= j; k++) mma += ptx_is_mma(ls[k].op);
            if (mma > best_mma || (mma == best_mma && j - i < best_span)) {
                best_mma = mma;
                best_span = j - i;
                *first = i;
                *last = j;
            }
            break;
        }
    }
    return best_mma >= 0;
}

#endif
