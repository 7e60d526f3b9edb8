/* tir_parse.c - read the textual Tile IR that tir_print.c writes.
 *
 * The grammar is line oriented, exactly as printed (see tir_print.c):
 *
 *   module  = (alias | kernel | NL)* EOF
 *   alias   = "#" IDENT "=" layout NL
 *   kernel  = "kernel" "@" IDENT "(" (arg ("," arg)*)? ")" kopt* "{" NL inst* "}" NL
 *   inst    = (results "=")? OPNAME (value ("," value)*)? attrs? (":" type ("," type)*)?
 *             (region ("else" region)*)? NL
 *   region  = "{" NL ("^(" (barg ("," barg)*)? ")" ":" NL)? inst* "}"
 *
 * Comments run from "//" to the end of the line.  The parser works on
 * characters with one cursor; it never skips a newline except where the
 * grammar ends a line, so "barrier" followed by "%5 = ..." on the next
 * line cannot be misread as an operand.
 *
 * Names.  Value names are local to a kernel and scoped lexically: a region's
 * block arguments and instructions are visible inside it only, and an
 * instruction's results become visible after its regions (so a `for` body
 * cannot use the loop's own results).  `%r:2 = ...` binds `%r#0` and `%r#1`;
 * when r is a number N it also binds `%N`, `%N+1`, which is how the printer
 * numbers multi-result instructions.  Names live in a hash table whose
 * buckets are popped in LIFO order when a region closes.
 *
 * Errors.  The first error is reported with its location and parsing stops:
 * the error flag is sticky and moves the cursor to the end, so every loop
 * terminates and tir_parse returns NULL.  Nesting depth is bounded so no
 * input can exhaust the stack.
 *
 * Float constants: the printer writes `%.17g`, so 1.0 prints as `value=1`.
 * A constant is a float when its literal looks like one (`.`, `e`, inf,
 * nan) or its element type is a float and the integer is exact as a double
 * (|v| <= 2^53), `-0` being -0.0 (a negated zero, as sampling.tile's
 * dumps hold); this makes print(parse(print(m))) == print(m) for every m. */
#include "tir.h"
#include "../support/target.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64          /* nesting of regions, and of types/layouts */
#define NAME_BUCKETS 4096

typedef struct Name {
    const char *s;
    uint32_t n;
    uint32_t hash;
    ValueId v;
    int next; /* bucket chain, -1 ends */
} Name;

typedef struct Alias {
    const char *s;
    size_t n;
    const Layout *l;
} Alias;

typedef struct Parser {
    const SrcFile *src;
    const char *p, *end;
    const char *line_start;
    uint32_t line;
    Diag *d;
    Arena *a;
    Module *m;
    Func *f;
    bool err;
    int depth;
    Alias *aliases;
    int naliases, cap_aliases;
    Name *names;
    int nnames, cap_names;
    int *buckets; /* NAME_BUCKETS heads */
} Parser;

/* ---- cursor and errors ---- */

static Loc here(Parser *P) {
    return (Loc){P->src, P->line, (uint32_t)(P->p - P->line_start) + 1};
}

static int peek(Parser *P) { return P->p < P->end ? (unsigned char)*P->p : -1; }
static int peek_at(Parser *P, size_t k) { return P->p + k < P->end ? (unsigned char)P->p[k] : -1; }

static void sp(Parser *P);

__attribute__((format(printf, 2, 3))) static void perr(Parser *P, const char *fmt, ...) {
    if (P->err) return;
    va_list ap;
    va_start(ap, fmt);
    diag_vadd(P->d, DIAG_ERROR, here(P), fmt, ap);
    va_end(ap);
    P->err = true;
    P->p = P->end;
}

/* What the cursor is looking at, for "expected X, found Y". */
static const char *found(Parser *P, char *buf, size_t n) {
    int c = peek(P);
    if (c < 0) return "end of file";
    if (c == '\n') return "end of line";
    if (c < 0x20 || c >= 0x7f) {
        snprintf(buf, n, "byte 0x%02x", c);
        return buf;
    }
    size_t k = 0;
    while (k + 1 < n && k < 16 && P->p + k < P->end) {
        char ch = P->p[k];
        if ((unsigned char)ch <= 0x20 || (unsigned char)ch >= 0x7f) break;
        buf[k++] = ch;
    }
    if (!k) buf[k++] = (char)c;
    buf[k] = 0;
    return buf;
}

static void expected(Parser *P, const char *what) {
    char buf[32];
    sp(P);
    const char *f = found(P, buf, sizeof buf);
    perr(P, "expected %s, found '%s'", what, f);
}

/* Skip blanks and a trailing comment, never a newline. */
static void sp(Parser *P) {
    while (P->p < P->end) {
        char c = *P->p;
        if (c == ' ' || c == '\t' || c == '\r') P->p++;
        else if (c == '/' && peek_at(P, 1) == '/')
            while (P->p < P->end && *P->p != '\n') P->p++;
        else break;
    }
}

/* Skip blank lines (and comment lines). */
static void skip_lines(Parser *P) {
    for (;;) {
        sp(P);
        if (peek(P) != '\n') return;
        P->p++;
        P->line++;
        P->line_start = P->p;
    }
}

/* End of a line: a newline (or the end of the file), then any blank lines. */
static void end_line(Parser *P) {
    sp(P);
    if (peek(P) >= 0 && peek(P) != '\n') {
        expected(P, "end of line");
        return;
    }
    skip_lines(P);
}

static bool eat(Parser *P, const char *s) {
    sp(P);
    size_t n = strlen(s);
    if ((size_t)(P->end - P->p) < n || memcmp(P->p, s, n)) return false;
    P->p += n;
    return true;
}

static void expect(Parser *P, const char *s) {
    if (P->err || eat(P, s)) return;
    char what[40];
    snprintf(what, sizeof what, "'%s'", s);
    expected(P, what);
}

static bool is_ident_char(int c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '$';
}

/* IDENT = [A-Za-z0-9_.$]+ ; returns its length (0: none, cursor unmoved) */
static size_t ident(Parser *P, const char **s) {
    sp(P);
    const char *b = P->p;
    while (P->p < P->end && is_ident_char((unsigned char)*P->p)) P->p++;
    *s = b;
    return (size_t)(P->p - b);
}

static bool is_digit(int c) { return c >= '0' && c <= '9'; }

/* INT = "-"? [0-9]+, in [lo, hi] */
static int64_t int_lit(Parser *P, const char *what, int64_t lo, int64_t hi) {
    sp(P);
    Loc at = here(P);
    const char *b = P->p;
    if (peek(P) == '-') P->p++;
    if (!is_digit(peek(P))) {
        P->p = b;
        char buf[64];
        snprintf(buf, sizeof buf, "integer %s", what);
        expected(P, buf);
        return lo;
    }
    while (is_digit(peek(P))) P->p++;
    char buf[32];
    size_t n = (size_t)(P->p - b);
    int64_t v = 0;
    bool range = n < sizeof buf;
    if (range) {
        memcpy(buf, b, n);
        buf[n] = 0;
        errno = 0;
        long long x = strtoll(buf, NULL, 10);
        range = errno == 0;
        v = x;
    }
    if (!range || v < lo || v > hi) {
        if (!P->err) {
            diag_error(P->d, at, "%s %.*s out of range [%lld, %lld]", what, (int)(n < 32 ? n : 32), b, (long long)lo,
                       (long long)hi);
            P->err = true;
            P->p = P->end;
        }
        return lo;
    }
    return v;
}

/* ---- names ---- */

static uint32_t hash_name(const char *s, size_t n) { return hash_fnv1a(s, n, 0); }

static ValueId name_lookup(Parser *P, const char *s, size_t n) {
    uint32_t h = hash_name(s, n);
    for (int i = P->buckets[h % NAME_BUCKETS]; i >= 0; i = P->names[i].next)
        if (P->names[i].hash == h && P->names[i].n == n && !memcmp(P->names[i].s, s, n)) return P->names[i].v;
    return 0;
}

static void name_bind(Parser *P, Loc at, const char *s, size_t n, ValueId v) {
    if (P->err) return;
    if (name_lookup(P, s, n)) {
        diag_error(P->d, at, "redefinition of %%%.*s", (int)n, s);
        P->err = true;
        P->p = P->end;
        return;
    }
    if (P->nnames == P->cap_names) {
        int nc = P->cap_names ? P->cap_names * 2 : 256;
        Name *nn = realloc(P->names, sizeof(Name) * (size_t)nc);
        if (!nn) out_of_memory();
        P->names = nn;
        P->cap_names = nc;
    }
    uint32_t h = hash_name(s, n);
    P->names[P->nnames] = (Name){s, (uint32_t)n, h, v, P->buckets[h % NAME_BUCKETS]};
    P->buckets[h % NAME_BUCKETS] = P->nnames++;
}

/* Names are pushed and popped in stack order, so each popped name heads its bucket. */
static void names_pop_to(Parser *P, int mark) {
    while (P->nnames > mark) {
        Name *nm = &P->names[--P->nnames];
        P->buckets[nm->hash % NAME_BUCKETS] = nm->next;
    }
}

/* ---- layouts ---- */

static const Layout *layout(Parser *P);

/* ints = "[" (INT ("," INT)*)? "]" ; returns the count */
static int small_ints(Parser *P, uint8_t *out, const char *what) {
    expect(P, "[");
    int n = 0;
    if (eat(P, "]")) return 0;
    do {
        int64_t v = int_lit(P, what, 0, 255);
        if (n == TIR_MAX_RANK) {
            perr(P, "layout rank exceeds %d", TIR_MAX_RANK);
            return 0;
        }
        out[n++] = (uint8_t)v;
    } while (!P->err && eat(P, ","));
    expect(P, "]");
    return n;
}

/* blocked = "blocked<" "spt=" ints "," "tpw=" ints "," "wpc=" ints "," "order=" ints ">" */
static const Layout *layout_blocked(Parser *P) {
    Layout l = {.kind = LAYOUT_BLOCKED};
    static const char *const keys[4] = {"spt", "tpw", "wpc", "order"};
    uint8_t *arrs[4] = {l.spt, l.tpw, l.wpc, l.order};
    int rank = 0;
    for (int k = 0; k < 4 && !P->err; k++) {
        if (k) expect(P, ",");
        sp(P);
        Loc at = here(P);
        const char *s;
        size_t n = ident(P, &s);
        if (n != strlen(keys[k]) || memcmp(s, keys[k], n)) {
            P->p = s;
            char what[16];
            snprintf(what, sizeof what, "'%s='", keys[k]);
            expected(P, what);
            return NULL;
        }
        expect(P, "=");
        int r = small_ints(P, arrs[k], keys[k]);
        if (P->err) return NULL;
        if (k == 0) rank = r;
        else if (r != rank) {
            diag_error(P->d, at, "blocked layout: '%s' has %d entries, 'spt' has %d", keys[k], r, rank);
            P->err = true;
            P->p = P->end;
            return NULL;
        }
    }
    expect(P, ">");
    if (P->err) return NULL;
    l.rank = (uint8_t)rank;
    return tir_layout_intern(P->m, &l);
}

/* mma = "mma<" "wpc=" "[" INT "," INT "]" ">" */
static const Layout *layout_mma(Parser *P) {
    Layout l = {.kind = LAYOUT_MMA, .rank = 2};
    expect(P, "wpc");
    expect(P, "=");
    uint8_t w[TIR_MAX_RANK] = {0};
    int r = small_ints(P, w, "wpc");
    expect(P, ">");
    if (P->err) return NULL;
    if (r != 2 || !w[0] || !w[1]) {
        perr(P, "mma layout needs two non-zero warp counts");
        return NULL;
    }
    l.wpc[0] = w[0];
    l.wpc[1] = w[1];
    l.order[0] = 1;
    l.order[1] = 0;
    return tir_layout_intern(P->m, &l);
}

/* layout = "#" IDENT | blocked | mma | "slice<" "dim=" INT "," layout ">"
 *        | ("dot_a"|"dot_b") "<" "kw=" INT "," "vpr=" INT "," layout ">" */
static const Layout *layout(Parser *P) {
    sp(P);
    Loc at = here(P);
    if (eat(P, "#")) {
        const char *s;
        size_t n = ident(P, &s);
        if (!n) {
            expected(P, "layout alias name");
            return NULL;
        }
        for (int i = 0; i < P->naliases; i++)
            if (P->aliases[i].n == n && !memcmp(P->aliases[i].s, s, n)) return P->aliases[i].l;
        diag_error(P->d, at, "unknown layout #%.*s", (int)n, s);
        P->err = true;
        P->p = P->end;
        return NULL;
    }
    const char *s;
    size_t n = ident(P, &s);
    const char *word = n == 7 && !memcmp(s, "blocked", 7) ? "blocked"
                       : n == 5 && !memcmp(s, "slice", 5) ? "slice"
                       : n == 5 && !memcmp(s, "dot_a", 5) ? "dot_a"
                       : n == 5 && !memcmp(s, "dot_b", 5) ? "dot_b"
                       : n == 3 && !memcmp(s, "mma", 3)   ? "mma"
                       : n == 6 && !memcmp(s, "shared", 6) ? "shared"
                                                          : NULL;
    if (!word) {
        P->p = s;
        expected(P, "layout (blocked, mma, shared, slice, dot_a, dot_b or #alias)");
        return NULL;
    }
    expect(P, "<");
    if (word[0] == 'b') return layout_blocked(P);
    if (word[0] == 'm') return layout_mma(P);
    if (word[0] == 's' && word[1] == 'h') {
        Layout l = {.kind = LAYOUT_SHARED};
        expect(P, "order");
        expect(P, "=");
        int r = small_ints(P, l.order, "order");
        expect(P, ">");
        if (P->err) return NULL;
        if (r < 2 || r > 3) {
            perr(P, "shared layout must have rank 2 or 3");
            return NULL;
        }
        l.rank = (uint8_t)r;
        return tir_layout_intern(P->m, &l);
    }
    if (++P->depth > MAX_DEPTH) {
        perr(P, "layout nested too deeply");
        return NULL;
    }
    Layout l = {0};
    if (word[0] == 's') {
        expect(P, "dim");
        expect(P, "=");
        l.kind = LAYOUT_SLICE;
        l.dim = (int8_t)int_lit(P, "slice dim", 0, TIR_MAX_RANK - 1);
        expect(P, ",");
    } else {
        l.kind = word[4] == 'a' ? LAYOUT_DOT_A : LAYOUT_DOT_B;
        expect(P, "kw");
        expect(P, "=");
        l.kw = (uint8_t)int_lit(P, "kw", 1, 64);
        expect(P, ",");
        expect(P, "vpr");
        expect(P, "=");
        l.vpr = (uint8_t)int_lit(P, "vpr", 1, 4);
        expect(P, ",");
    }
    if (P->err) return NULL;
    l.parent = layout(P);
    P->depth--;
    expect(P, ">");
    if (P->err || !l.parent) return NULL;
    if (l.kind == LAYOUT_SLICE) {
        if (l.dim >= l.parent->rank) {
            diag_error(P->d, at, "slice dim %d out of range for a rank-%d parent", l.dim, l.parent->rank);
            P->err = true;
            P->p = P->end;
            return NULL;
        }
        l.rank = (uint8_t)(l.parent->rank - 1); /* as layout_slice() builds it */
    } else {
        l.rank = l.parent->rank;
    }
    return tir_layout_intern(P->m, &l);
}

/* ---- types ---- */

/* elem = "ptr<" type ">" | DTYPE */
static const Type *type(Parser *P);

static const Type *elem_type(Parser *P) {
    sp(P);
    const char *s;
    size_t n = ident(P, &s);
    if (!n) {
        expected(P, "type");
        return NULL;
    }
    if (n == 3 && !memcmp(s, "ptr", 3)) {
        expect(P, "<");
        if (++P->depth > MAX_DEPTH) {
            perr(P, "type nested too deeply");
            return NULL;
        }
        sp(P);
        Loc at = here(P);
        const Type *pt = type(P);
        P->depth--;
        expect(P, ">");
        if (P->err || !pt) return NULL;
        if (pt->rank) {
            diag_error(P->d, at, "pointer element type must be a scalar");
            P->err = true;
            P->p = P->end;
            return NULL;
        }
        return tir_ptr(P->m, pt);
    }
    DType dt = dtype_from_name(s, n);
    if (dt == DT_VOID || dt == DT_PTR) {
        P->p = s;
        char buf[32];
        perr(P, "unknown type '%s'", found(P, buf, sizeof buf));
        return NULL;
    }
    return tir_scalar(P->m, dt);
}

/* type = "tensor<" (INT "x")+ elem ("," layout)? ">" | elem */
static const Type *type(Parser *P) {
    sp(P);
    if (!eat(P, "tensor<")) return elem_type(P);
    int32_t shape[TIR_MAX_RANK];
    int rank = 0;
    do {
        sp(P);
        if (rank == TIR_MAX_RANK) {
            perr(P, "tensor rank exceeds %d", TIR_MAX_RANK);
            return NULL;
        }
        shape[rank++] = (int32_t)int_lit(P, "tensor dimension", 1, 1 << 30);
        if (peek(P) != 'x') expected(P, "'x' after tensor dimension");
        else P->p++;
    } while (!P->err && is_digit(peek(P)));
    const Type *et = elem_type(P);
    const Layout *l = NULL;
    if (!P->err && eat(P, ",")) l = layout(P);
    expect(P, ">");
    if (P->err || !et) return NULL;
    return tir_type(P->m, et->dt, rank, shape, et->pointee, l);
}

/* ---- attributes ---- */

#define TIR_ATTR_KEYS(X)                                                                       \
    X(VALUE, "value") X(START, "start") X(END, "end") X(AXIS, "axis") X(PERM, "perm")          \
    X(KIND, "kind") X(PRED, "pred") X(TF32, "tf32") X(VEC, "vec") X(SMEM, "smem") X(CACHE, "cache")    \
    X(PENDING, "pending") X(SEM, "sem") X(SCOPE, "scope") X(EXACT, "exact") X(REMAINDER, "remainder") X(UNROLL, "unroll") \
    X(XOR, "xor") X(MSG, "msg") X(MAP, "map") X(BYTES, "bytes") \
    X(ARRIVALS, "count") X(WARPS, "warps") X(COL, "col") X(VALUES, "values") X(STAGES, "stages") \
    X(PACK, "pack") X(OUT, "out") X(HEX, "hex")
typedef enum AttrKey {
#define X(e, n) AK_##e,
    TIR_ATTR_KEYS(X)
#undef X
    AK_COUNT
} AttrKey;
static const char *const attr_names[] = {
#define X(e, n) n,
    TIR_ATTR_KEYS(X)
#undef X
};
enum {
#define X(e, n) +1
    N_RED_KINDS = 0 TIR_REDUCE_KINDS(X),
    N_CMP_PREDS = 0 TIR_CMP_PREDS(X),
#undef X
};

/* Which op prints which attribute: mirrors print_attrs() in tir_print.c. */
static bool attr_allowed(Op op, AttrKey k) {
    switch (k) {
    case AK_VALUE: return op == OP_CONST;
    case AK_START:
    case AK_END: return op == OP_ARANGE;
    case AK_AXIS:
        return op == OP_PROGRAM_ID || op == OP_NUM_PROGRAMS || op == OP_EXPAND_DIMS || op == OP_REDUCE || op == OP_SCAN ||
               op == OP_GATHER || op == OP_REDUCE_FN || op == OP_SCAN_FN;
    case AK_PERM: return op == OP_TRANS;
    case AK_VALUES: return tir_is_hint(op);
    case AK_KIND: return op == OP_REDUCE || op == OP_SCAN || op == OP_ATOMIC_RMW || op == OP_TMA_STORE;
    case AK_PRED: return op == OP_CMP;
    case AK_TF32: return op == OP_DOT;
    case AK_PENDING: return op == OP_ASYNC_WAIT || op == OP_DOT || op == OP_WGMMA_WAIT;
    case AK_SEM:
    case AK_SCOPE: return op == OP_ATOMIC_RMW || op == OP_ATOMIC_CAS || op == OP_ATOMIC_POLL || op == OP_LOAD || op == OP_STORE;
    case AK_EXACT: return op == OP_EXP || op == OP_EXP2 || op == OP_TANH;
    case AK_XOR: return op == OP_GATHER;
    case AK_REMAINDER:
    case AK_STAGES:
    case AK_UNROLL: return op == OP_FOR;
    case AK_MAP: return op == OP_TMA_LOAD || op == OP_TMA_STORE;
    case AK_BYTES: return op == OP_MBAR_EXPECT;
    case AK_ARRIVALS: return op == OP_MBAR_INIT;
    case AK_WARPS: return op == OP_WS_PRODUCER;
    case AK_COL: return op == OP_LOCAL_STORE;
    case AK_MSG: return op == OP_PRINT || op == OP_ASSERT || op == OP_INLINE_ASM;
    case AK_PACK: return op == OP_INLINE_ASM || op == OP_MAP_FN;
    case AK_OUT: return op == OP_INLINE_ASM;
    case AK_HEX: return op == OP_PRINT;
    case AK_VEC:
    case AK_SMEM:
    case AK_CACHE: return true;
    case AK_COUNT: break;
    }
    return false;
}

/* The constant's literal, interpreted once the result type is known. */
typedef struct ConstLit {
    const char *s;
    size_t n;
    Loc at;
} ConstLit;

static int name_index(const char *const *names, int count, const char *s, size_t n) {
    for (int i = 0; i < count; i++)
        if (strlen(names[i]) == n && !memcmp(names[i], s, n)) return i;
    return -1;
}

/* attrs = "{" attr ("," attr)* "}"   attr = KEY "=" value */
static void attrs(Parser *P, Op op, Attrs *a, ConstLit *lit) {
    expect(P, "{");
    do {
        sp(P);
        Loc at = here(P);
        const char *s;
        size_t n = ident(P, &s);
        int k = name_index(attr_names, AK_COUNT, s, n);
        if (k < 0) {
            P->p = s;
            expected(P, "attribute name");
            return;
        }
        if (!attr_allowed(op, (AttrKey)k)) {
            diag_error(P->d, at, "attribute '%s' is not valid for '%s'", attr_names[k], tir_op_info[op].name);
            P->err = true;
            P->p = P->end;
            return;
        }
        expect(P, "=");
        if (P->err) return;
        switch ((AttrKey)k) {
        case AK_VALUE:
            sp(P);
            lit->at = here(P);
            lit->s = P->p;
            while (P->p < P->end && (is_ident_char((unsigned char)*P->p) || *P->p == '-' || *P->p == '+')) P->p++;
            lit->n = (size_t)(P->p - lit->s);
            if (!lit->n) expected(P, "constant value");
            break;
        case AK_START: a->ival = int_lit(P, "start", INT32_MIN, INT32_MAX); break;
        case AK_END: a->ival2 = int_lit(P, "end", INT32_MIN, INT32_MAX); break;
        case AK_AXIS: a->ival = int_lit(P, "axis", 0, TIR_MAX_RANK - 1); break;
        case AK_PERM: {
            expect(P, "[");
            int d = 0;
            if (!eat(P, "]")) {
                do {
                    sp(P);
                    if (d == TIR_MAX_RANK) perr(P, "perm has more than %d entries", TIR_MAX_RANK);
                    else a->perm[d++] = (int32_t)int_lit(P, "perm entry", 0, TIR_MAX_RANK - 1);
                } while (!P->err && eat(P, ","));
                expect(P, "]");
            }
            break;
        }
        case AK_VALUES: {
            expect(P, "[");
            int d = 0;
            do {
                sp(P);
                if (d == TIR_MAX_RANK) perr(P, "values has more than %d entries", TIR_MAX_RANK);
                else a->perm[d++] = (int32_t)int_lit(P, "hint value", 1, 1 << 30);
            } while (!P->err && eat(P, ","));
            expect(P, "]");
            break;
        }
        case AK_KIND:
        case AK_PRED: {
            sp(P);
            Loc vat = here(P);
            const char *v;
            size_t vn = ident(P, &v);
            int i;
            if (k == AK_PRED) i = name_index(tir_cmp_names, N_CMP_PREDS, v, vn);
            else if ((op == OP_ATOMIC_RMW || op == OP_TMA_STORE) && vn == 3 && !memcmp(v, "add", 3)) i = RED_SUM;
            else i = name_index(tir_red_names, N_RED_KINDS, v, vn);
            if (i < 0 && !P->err) {
                diag_error(P->d, vat, "unknown %s '%.*s'", k == AK_PRED ? "comparison predicate" : "reduction kind",
                           (int)vn, v);
                P->err = true;
                P->p = P->end;
            }
            a->ival2 = i < 0 ? 0 : i + (op == OP_TMA_STORE); /* tma_store: 0 is a copy */
            break;
        }
        case AK_TF32: a->allow_tf32 = (uint8_t)int_lit(P, "tf32", 0, 1); break;
        case AK_XOR: a->ival2 = int_lit(P, "xor", 1, 1 << 20); break;
        case AK_VEC: a->vec = (uint8_t)int_lit(P, "vec", 0, 255); break;
        case AK_CACHE: a->cache = (uint8_t)int_lit(P, "cache", 0, 255); break;
        case AK_PENDING: a->ival = int_lit(P, "pending", 0, 64); break;
        case AK_SEM:
        case AK_SCOPE: {
            sp(P);
            Loc vat = here(P);
            const char *v;
            size_t vn = ident(P, &v);
            int i = k == AK_SEM ? name_index(tir_sem_names, SEM_COUNT, v, vn) : name_index(tir_scope_names, SCOPE_COUNT, v, vn);
            if (i < 0 && !P->err) {
                diag_error(P->d, vat, "unknown memory %s '%.*s'", k == AK_SEM ? "ordering" : "scope", (int)vn, v);
                P->err = true;
                P->p = P->end;
            }
            if (k == AK_SEM) a->sem = (uint8_t)(i < 0 ? 0 : i);
            else a->scope = (uint8_t)(i < 0 ? 0 : i);
            break;
        }
        case AK_EXACT: a->ival = int_lit(P, "exact", 0, 1); break;
        case AK_REMAINDER: a->ival = int_lit(P, "remainder", 0, 1); break;
        case AK_STAGES: a->ival2 = int_lit(P, "stages", 0, 16) + 1; break;
        case AK_UNROLL: a->vec = (uint8_t)int_lit(P, "unroll", 2, 255); break;
        case AK_MAP: a->ival = int_lit(P, "map", 0, TIR_MAX_TMAPS - 1); break;
        case AK_BYTES: a->ival = int_lit(P, "bytes", 0, 1 << 20); break;
        case AK_ARRIVALS: a->ival = int_lit(P, "count", 1, 1024); break;
        case AK_WARPS: a->ival = int_lit(P, "warps", 1, 32); break;
        case AK_COL: a->ival = int_lit(P, "col", 0, 1 << 20); break;
        case AK_PACK: a->ival = int_lit(P, "pack", 1, 16); break;
        case AK_HEX: a->ival = int_lit(P, "hex", 0, 1); break;
        case AK_OUT: a->ival2 = int_lit(P, "out", 0, TIR_ASM_MAX_REGS - 1); break;
        case AK_MSG: { /* "..." with \" \\ \n */
            if (*P->p != '"') {
                expected(P, "a string");
                return;
            }
            Str m = {0};
            for (P->p++; *P->p && *P->p != '"' && *P->p != '\n'; P->p++) {
                if (*P->p == '\\' && P->p[1]) P->p++, str_printf(&m, "%c", *P->p == 'n' ? '\n' : *P->p);
                else str_printf(&m, "%c", *P->p);
            }
            if (*P->p != '"') {
                str_free(&m);
                expected(P, "'\"' closing the string");
                return;
            }
            P->p++;
            a->msg = arena_strdup(P->a, m.buf ? m.buf : "");
            str_free(&m);
            break;
        }
        case AK_SMEM:
            a->smem_offset = (int32_t)int_lit(P, "smem offset", 0, INT32_MAX);
            expect(P, ":");
            a->smem_bytes = (int32_t)int_lit(P, "smem bytes", 0, INT32_MAX);
            break;
        case AK_COUNT: break;
        }
    } while (!P->err && eat(P, ","));
    expect(P, "}");
}

/* Fill a const's value from its literal and element type (see the design comment). */
static void const_value(Parser *P, Attrs *a, const ConstLit *lit, const Type *t) {
    if (!lit->s) return;
    char buf[64];
    if (lit->n >= sizeof buf) {
        diag_error(P->d, lit->at, "constant literal too long");
        P->err = true;
        return;
    }
    memcpy(buf, lit->s, lit->n);
    buf[lit->n] = 0;
    bool floaty = false;
    for (size_t i = 0; i < lit->n; i++)
        if (strchr(".eEnN", buf[i]) || ((buf[i] == 'x' || buf[i] == 'X') && i)) floaty = true;
    char *e;
    errno = 0;
    if (!floaty) {
        long long v = strtoll(buf, &e, 10);
        if (*e || e == buf || errno) goto bad;
        if (t && dtype_is_float(t->dt) && v >= -(1LL << 53) && v <= (1LL << 53)) {
            a->is_float = 1;
            a->fval = v == 0 && buf[0] == '-' ? -0.0 : (double)v; /* `%.17g` prints -0.0 as `-0` */
        } else {
            a->ival = v;
        }
        return;
    }
    double v = c_strtod(buf, &e);
    if (*e || e == buf) goto bad;
    a->is_float = 1;
    a->fval = v;
    return;
bad:
    diag_error(P->d, lit->at, "invalid constant '%s'", buf);
    P->err = true;
}

/* ---- instructions and regions ---- */

static void block_body(Parser *P, Block *b);

/* value = "%" IDENT ("#" INT)? */
static ValueId value_ref(Parser *P) {
    sp(P);
    Loc at = here(P);
    if (!eat(P, "%")) {
        expected(P, "value");
        return 0;
    }
    const char *s = P->p;
    size_t n = ident(P, &s);
    if (n && peek(P) == '#' && is_digit(peek_at(P, 1))) {
        P->p++;
        while (is_digit(peek(P))) P->p++;
        n = (size_t)(P->p - s);
    }
    if (!n) {
        expected(P, "value name");
        return 0;
    }
    ValueId v = name_lookup(P, s, n);
    if (!v && !P->err) {
        diag_error(P->d, at, "use of undefined value %%%.*s", (int)n, s);
        P->err = true;
        P->p = P->end;
    }
    return v;
}

/* Bind the results of `i` to `%name` (one result) or `%name#k` and, when name is a number N, `%N+k`. */
static void bind_results(Parser *P, Loc at, const char *s, size_t n, bool multi, Inst *i) {
    if (!multi) {
        name_bind(P, at, s, n, i->res[0]);
        P->f->values[i->res[0]].name = arena_strndup(P->a, s, n);
        return;
    }
    bool numeric = n <= 9;
    for (size_t k = 0; k < n; k++) numeric &= is_digit((unsigned char)s[k]);
    long base = numeric ? strtol(arena_strndup(P->a, s, n), NULL, 10) : 0;
    for (int k = 0; k < i->nres && !P->err; k++) {
        char *h = arena_printf(P->a, "%.*s#%d", (int)n, s, k);
        name_bind(P, at, h, strlen(h), i->res[k]);
        if (numeric) {
            char *num = arena_printf(P->a, "%ld", base + k);
            name_bind(P, at, num, strlen(num), i->res[k]);
        }
    }
}

/* region = "{" NL ("^(" (barg ("," barg)*)? ")" ":" NL)? inst* "}"   barg = "%" IDENT ":" type */
static void region(Parser *P, Inst *i) {
    expect(P, "{");
    end_line(P);
    if (P->err) return;
    if (++P->depth > MAX_DEPTH) {
        perr(P, "regions nested too deeply");
        return;
    }
    Block *b = tir_block_new(P->f, i);
    tir_inst_add_region(P->f, i, b);
    int mark = P->nnames;
    if (eat(P, "^(")) {
        if (!eat(P, ")")) {
            do {
                sp(P);
                Loc at = here(P);
                expect(P, "%");
                const char *s;
                size_t n = ident(P, &s);
                if (!n) expected(P, "block argument name");
                expect(P, ":");
                const Type *t = type(P);
                if (P->err) break;
                if (b->nargs == UINT16_MAX) {
                    perr(P, "too many block arguments");
                    break;
                }
                ValueId v = tir_block_add_arg(P->f, b, t);
                P->f->values[v].name = arena_strndup(P->a, s, n);
                name_bind(P, at, s, n, v);
            } while (!P->err && eat(P, ","));
            expect(P, ")");
        }
        expect(P, ":");
        end_line(P);
    }
    block_body(P, b);
    names_pop_to(P, mark);
    P->depth--;
}

/* inst = (results "=")? OPNAME operands? attrs? (":" types)? (region ("else" region)*)? NL */
static void inst(Parser *P, Block *b) {
    sp(P);
    Loc at = here(P);
    const char *rname = NULL;
    size_t rn = 0;
    int nres = 0;
    bool multi = false;
    if (eat(P, "%")) {
        rn = ident(P, &rname);
        if (!rn) {
            expected(P, "result name");
            return;
        }
        nres = 1;
        if (eat(P, ":")) {
            nres = (int)int_lit(P, "result count", 1, UINT16_MAX);
            multi = true;
        }
        expect(P, "=");
    }
    sp(P);
    Loc opat = here(P);
    const char *os;
    size_t on = ident(P, &os);
    if (P->err) return;
    if (!on) {
        if (peek(P) == '^') perr(P, "block arguments must open their region");
        else expected(P, "instruction");
        return;
    }
    Op op = tir_op_from_name(os, on);
    if (op == OP_COUNT) {
        diag_error(P->d, opat, "unknown op '%.*s'", (int)on, os);
        P->err = true;
        P->p = P->end;
        return;
    }
    const OpInfo *info = &tir_op_info[op];

    /* operands */
    ValueId *ops = NULL;
    int nops = 0, cap = 0;
    sp(P);
    if (peek(P) == '%') {
        do {
            ValueId v = value_ref(P);
            if (nops == cap) {
                int nc = cap ? cap * 2 : 4;
                ops = arena_grow(P->a, ops, sizeof(ValueId) * (size_t)cap, sizeof(ValueId) * (size_t)nc);
                cap = nc;
            }
            ops[nops++] = v;
        } while (!P->err && eat(P, ","));
    }

    /* attributes: "{" on the same line followed by a key (a region's "{" ends the line) */
    Attrs a = {.smem_offset = -1};
    ConstLit lit = {0};
    sp(P);
    if (peek(P) == '{') {
        size_t k = 1;
        while (peek_at(P, k) == ' ') k++;
        int c = peek_at(P, k);
        if (c >= 0 && c != '\n' && c != '\r' && c != '/') attrs(P, op, &a, &lit);
    }

    /* result types */
    const Type **types = nres ? ARENA_ARRAY(P->a, const Type *, nres) : NULL;
    if (eat(P, ":")) {
        if (!nres) {
            P->p--;
            perr(P, "'%s' has no results to type", info->name);
            return;
        }
        for (int k = 0; k < nres && !P->err; k++) {
            if (k) expect(P, ",");
            types[k] = type(P);
        }
    } else if (nres) {
        expected(P, "':' and result types");
    }
    if (P->err) return;
    if (info->nops >= 0 && nops != info->nops) {
        diag_error(P->d, opat, "'%s' takes %d operand%s, found %d", info->name, info->nops, info->nops == 1 ? "" : "s",
                   nops);
        P->err = true;
    } else if (info->nres >= 0 && nres != info->nres) {
        diag_error(P->d, opat, "'%s' has %d result%s, found %d", info->name, info->nres, info->nres == 1 ? "" : "s",
                   nres);
        P->err = true;
    }
    if (P->err) {
        P->p = P->end;
        return;
    }

    Inst *i = tir_inst_new(P->f, op, ops, nops, types, nres, at);
    i->a = a;
    if (op == OP_CONST) const_value(P, &i->a, &lit, types[0]);
    tir_block_append(b, i);

    /* regions: "{" then end of line */
    sp(P);
    if (peek(P) == '{') {
        region(P, i);
        while (!P->err && eat(P, "else")) region(P, i);
    }
    if (P->err) return;
    if (nres) bind_results(P, at, rname, rn, multi, i);
    end_line(P);
}

/* Instructions up to the closing "}" (consumed; the rest of its line is the caller's). */
static void block_body(Parser *P, Block *b) {
    for (;;) {
        skip_lines(P);
        if (P->err) return;
        if (peek(P) < 0) {
            expected(P, "'}'");
            return;
        }
        if (peek(P) == '}') {
            P->p++;
            return;
        }
        inst(P, b);
    }
}

/* harg = "%" IDENT  (a kernel argument) */
static int16_t host_arg(Parser *P, Func *f) {
    expect(P, "%");
    const char *s;
    size_t n = ident(P, &s);
    for (int k = 0; k < f->nargs && !P->err; k++)
        if (strlen(f->args[k].name) == n && !memcmp(f->args[k].name, s, n)) return (int16_t)k;
    if (!P->err) perr(P, "'%%%.*s' is not an argument of the kernel", (int)n, s);
    return 0;
}

/* hexpr = "?" | hterm ("+" hterm)*   hterm = INT | (INT "*")? harg ("*" harg)? */
static void host_expr(Parser *P, Func *f, HostExpr *e) {
    memset(e, 0, sizeof *e);
    if (eat(P, "?")) return;
    do {
        if (e->n == TMA_MAX_TERMS) {
            perr(P, "more than %d terms", TMA_MAX_TERMS);
            return;
        }
        HostTerm *t = &e->t[e->n++];
        t->c = 1;
        t->a[0] = t->a[1] = -1;
        sp(P);
        if (peek(P) != '%') {
            t->c = int_lit(P, "coefficient", -((int64_t)1 << 40), (int64_t)1 << 40);
            if (!eat(P, "*")) continue;
        }
        t->a[0] = host_arg(P, f);
        if (eat(P, "*")) t->a[1] = host_arg(P, f);
    } while (!P->err && eat(P, "+"));
}

/* tmap = "tensor_map" INT "=" "base" harg "," "esize" INT "," ("elem" TYPE ",")? "swizzle" INT "," "box" "[" INT,* "]" ","
 *        "dims" "[" hexpr,* "]" "," "strides" "[" hexpr,* "]" NL  (one stride per dim after the first) */
static void tensor_map(Parser *P, Func *f) {
    int k = (int)int_lit(P, "tensor map", 0, TIR_MAX_TMAPS - 1);
    if (!P->err && k != f->ntmaps) perr(P, "tensor map %d out of order (expected %d)", k, f->ntmaps);
    expect(P, "=");
    expect(P, "base");
    if (P->err) return;
    f->tmaps = arena_grow(P->a, f->tmaps, sizeof *f->tmaps * (size_t)f->ntmaps, sizeof *f->tmaps * (size_t)(f->ntmaps + 1));
    TensorMap *tm = &f->tmaps[f->ntmaps++];
    memset(tm, 0, sizeof *tm);
    tm->base = host_arg(P, f);
    expect(P, ",");
    expect(P, "esize");
    tm->esize = (int)int_lit(P, "element size", 1, 8);
    expect(P, ",");
    if (!P->err && eat(P, "elem")) {
        sp(P);
        Loc at = here(P);
        const char *v;
        size_t vn = ident(P, &v);
        tm->elem = dtype_from_name(v, vn);
        if (!P->err && (tm->elem == DT_VOID || dtype_bytes(tm->elem) != tm->esize)) {
            diag_error(P->d, at, "tensor map element type '%.*s' is not a type of %d bytes", (int)vn, v, tm->esize);
            P->err = true;
            P->p = P->end;
        }
        expect(P, ",");
    }
    expect(P, "swizzle");
    tm->swizzle = (int)int_lit(P, "swizzle", 0, 128);
    expect(P, ",");
    expect(P, "box");
    expect(P, "[");
    do {
        if (tm->rank == TMA_MAX_RANK) perr(P, "rank over %d", TMA_MAX_RANK);
        else tm->box[tm->rank++] = (int32_t)int_lit(P, "box size", 1, 256);
    } while (!P->err && eat(P, ","));
    expect(P, "]");
    expect(P, ",");
    expect(P, "dims");
    expect(P, "[");
    for (int d = 0; d < tm->rank && !P->err; d++) {
        if (d) expect(P, ",");
        host_expr(P, f, &tm->dim[d]);
    }
    expect(P, "]");
    expect(P, ",");
    expect(P, "strides");
    expect(P, "[");
    for (int d = 1; d < tm->rank && !P->err; d++) {
        if (d > 1) expect(P, ",");
        host_expr(P, f, &tm->stride[d]);
    }
    expect(P, "]");
    end_line(P);
}

/* kernel = "kernel" "@" IDENT "(" (arg ("," arg)*)? ")" kopt* "{" NL tmap* inst* "}" NL
 * arg = "%" IDENT ":" type ("#div16" | "#one")?   kopt = ("num_warps"|"num_stages"|"warp_specialize"|"pingpong"|"overlap"|"producer_warps"|"smem") "=" INT */
static void kernel(Parser *P) {
    sp(P);
    Loc at = here(P);
    expect(P, "kernel");
    expect(P, "@");
    const char *s;
    size_t n = ident(P, &s);
    if (!n) expected(P, "kernel name");
    if (P->err) return;
    char *name = arena_strndup(P->a, s, n);
    for (int k = 0; k < P->m->nfuncs; k++)
        if (!strcmp(P->m->funcs[k]->name, name)) {
            diag_error(P->d, at, "redefinition of kernel @%s", name);
            P->err = true;
            P->p = P->end;
            return;
        }
    Func *f = P->f = tir_func_new(P->m, name);
    f->loc = at;
    names_pop_to(P, 0);
    expect(P, "(");
    if (!eat(P, ")")) {
        do {
            sp(P);
            Loc aat = here(P);
            expect(P, "%");
            n = ident(P, &s);
            if (!n) expected(P, "argument name");
            expect(P, ":");
            const Type *t = type(P);
            if (P->err) return;
            FuncArg *arg = tir_func_add_arg(f, arena_strndup(P->a, s, n), t);
            if (eat(P, "#div16")) arg->spec = SPEC_DIV16;
            else if (eat(P, "#one")) arg->spec = SPEC_ONE;
            else if (eat(P, "#null")) arg->spec = SPEC_NULL;
            name_bind(P, aat, s, n, arg->value);
        } while (!P->err && eat(P, ","));
        expect(P, ")");
    }
    for (;;) {
        if (eat(P, "num_warps")) {
            expect(P, "=");
            f->num_warps = (int)int_lit(P, "num_warps", 1, 1024);
        } else if (eat(P, "num_stages")) {
            expect(P, "=");
            f->num_stages = (int)int_lit(P, "num_stages", 0, 1024);
        } else if (eat(P, "warp_specialize")) {
            expect(P, "=");
            f->warp_specialize = int_lit(P, "warp_specialize", 0, 1) != 0;
        } else if (eat(P, "pingpong")) {
            expect(P, "=");
            f->pingpong = int_lit(P, "pingpong", 0, 1) != 0;
        } else if (eat(P, "overlap")) {
            expect(P, "=");
            f->overlap = int_lit(P, "overlap", 0, 1) != 0;
        } else if (eat(P, "producer_warps")) {
            expect(P, "=");
            f->producer_warps = (int)int_lit(P, "producer_warps", 0, 32);
        } else if (eat(P, "smem")) {
            expect(P, "=");
            f->smem_bytes = (int)int_lit(P, "smem", 0, INT32_MAX);
        } else {
            break;
        }
    }
    expect(P, "{");
    end_line(P);
    while (!P->err && eat(P, "tensor_map")) tensor_map(P, f);
    block_body(P, f->body);
    end_line(P);
}

/* alias = "#" IDENT "=" layout NL */
static void alias(Parser *P) {
    sp(P);
    Loc at = here(P);
    expect(P, "#");
    const char *s;
    size_t n = ident(P, &s);
    if (!n) expected(P, "layout alias name");
    expect(P, "=");
    const Layout *l = layout(P);
    end_line(P);
    if (P->err) return;
    for (int i = 0; i < P->naliases; i++)
        if (P->aliases[i].n == n && !memcmp(P->aliases[i].s, s, n)) {
            diag_error(P->d, at, "redefinition of layout #%.*s", (int)n, s);
            P->err = true;
            P->p = P->end;
            return;
        }
    if (P->naliases == P->cap_aliases) {
        int nc = P->cap_aliases ? P->cap_aliases * 2 : 8;
        P->aliases = arena_grow(P->a, P->aliases, sizeof(Alias) * (size_t)P->cap_aliases, sizeof(Alias) * (size_t)nc);
        P->cap_aliases = nc;
    }
    P->aliases[P->naliases++] = (Alias){s, n, l};
}

/* target = "target" ident   (the module's arch, e.g. `target sm_90a`; default: the default target) */
static void target_line(Parser *P) {
    sp(P);
    Loc at = here(P);
    expect(P, "target");
    sp(P);
    const char *s;
    size_t n = ident(P, &s);
    if (!n) expected(P, "target name");
    if (P->err) return;
    char *name = arena_strndup(P->a, s, n);
    if (!target_find(name)) {
        char names[128];
        diag_error(P->d, at, "unknown target '%s' (expected one of %s)", name, target_names(names, sizeof names));
        P->err = true;
        P->p = P->end;
        return;
    }
    P->m->arch = name;
    skip_lines(P);
}

/* module = [target] (alias | kernel)* EOF */
Module *tir_parse(Arena *a, const SrcFile *src, Diag *d) {
    Parser P = {.src = src, .p = src->text, .end = src->text + src->len, .line_start = src->text, .line = 1,
                .d = d, .a = a};
    P.m = tir_module_new(a);
    P.buckets = malloc(sizeof(int) * NAME_BUCKETS);
    if (!P.buckets) out_of_memory();
    for (int i = 0; i < NAME_BUCKETS; i++) P.buckets[i] = -1;
    skip_lines(&P);
    if (P.end - P.p > 7 && !strncmp(P.p, "target ", 7)) target_line(&P);
    while (!P.err && peek(&P) >= 0) {
        if (peek(&P) == '#') alias(&P);
        else kernel(&P);
    }
    free(P.buckets);
    free(P.names);
    return P.err ? NULL : P.m;
}
