/* lex.c - the tokenizer.
 *
 * One pass over the whole file produces an array of tokens ending in TK_EOF.
 * Punctuators are matched longest-first against the spellings of the token
 * table and identifiers against its keywords, so LANG_TOKENS in ast.h is the
 * only list of either.  Identifiers spelling a scalar dtype become TK_TYPE.
 * Bad input (stray bytes, NULs, unterminated comments or strings, oversized
 * literals) is reported and skipped; lexing always reaches the end.  A `//`
 * after an operand that could be Triton's floor division is kept with the
 * lexer's state there (lex_slash), so that the parser, which decides
 * (floor_div.c), can have the rest lexed again with it read as `/`. */
#include "ast.h"
#include "../support/support.h"

#include <errno.h>
#include <math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const lang_tok_spelling[TK_COUNT] = {
#define X(e, s) s,
    LANG_TOKENS(X)
#undef X
};

typedef struct Lexer {
    Arena *a;
    Diag *d;
    const SrcFile *src;
    const char *p, *end;
    uint32_t line, col;
    Token *toks;
    int n, cap;
    int depth; /* ( and [ open so far */
    int braces; /* { open so far: 0 at the top of the file */
    bool eof_reported; /* an unterminated comment ran to the end of the file */
    int bad_run;       /* bad bytes in a row (one error for the run) */
    const char *chain; /* just past the '.' of a Triton module prefix dropped last (tl.math.exp reports once) */
    LexSlashes *sl;    /* where the `//`s after an operand go (NULL: every `//` is a comment) */
    const LexSlash *carry; /* lex_again: the slashes of the old tokens from its start on, whose states it keeps */
    int ncarry, icarry;
} Lexer;

/* The lexer's state at a `//` after an operand: lex_again goes on from it. */
struct LexSnap {
    Lexer l;
};

static Loc lex_loc(Lexer *l) { return (Loc){l->src, l->line, l->col}; }

static void lex_advance(Lexer *l, size_t k) {
    for (size_t i = 0; i < k && l->p < l->end; i++, l->p++) {
        if (src_line_end(l->p, l->end)) {
            l->line++;
            l->col = 1;
        } else {
            l->col++;
        }
    }
}

/* LEX_AGAIN_*: lex_again may read 64 times the file and 1 MiB more, in all (one with a `//` the parser asks about on
 * every line would otherwise be lexed again once for each line: its size squared) */
enum { LEX_MAX_TOKENS = 1 << 20, LEX_MAX_ERRORS = 200, LEX_AGAIN_PER_BYTE = 64, LEX_AGAIN_BASE = 1 << 20 };

static Token *lex_push(Lexer *l, TokKind k, Loc loc, const char *start) {
    if (l->n == l->cap) {
        int nc = l->cap ? l->cap * 2 : 256;
        l->toks = arena_grow(l->a, l->toks, sizeof(Token) * (size_t)l->cap, sizeof(Token) * (size_t)nc);
        l->cap = nc;
    }
    Token *t = &l->toks[l->n++];
    *t = (Token){.kind = k, .loc = loc, .text = start, .len = (uint32_t)(l->p - start)};
    l->depth += (k == TK_LPAREN || k == TK_LBRACK) - (l->depth > 0 && (k == TK_RPAREN || k == TK_RBRACK));
    l->braces += (k == TK_LBRACE) - (l->braces > 0 && k == TK_RBRACE);
    return t;
}

static bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }

static int digit_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return 99;
}

/* number = INT | FLOAT; a '.' or exponent after decimal digits makes a float. */
static void lex_number(Lexer *l) {
    Loc loc = lex_loc(l);
    const char *s = l->p;
    int base = 10;
    const char *q = s;
    if (q + 1 < l->end && q[0] == '0' && (q[1] == 'x' || q[1] == 'X')) base = 16, q += 2;
    else if (q + 1 < l->end && q[0] == '0' && (q[1] == 'b' || q[1] == 'B')) base = 2, q += 2;
    bool is_float = false;
    const char *digits = q;
    while (q < l->end && (is_ident_char(*q) || *q == '.')) {
        if (base == 10 && *q == '.') {
            if (is_float || (q + 1 < l->end && q[1] == '.')) break; /* 0..n: an integer, then Rust's '..' */
            is_float = true;
        } else if (base == 10 && (*q == 'e' || *q == 'E')) {
            is_float = true;
            if (q + 1 < l->end && (q[1] == '+' || q[1] == '-')) q++;
        }
        q++;
    }
    lex_advance(l, (size_t)(q - s));
    Token *t = lex_push(l, is_float ? TK_FLOAT : TK_INT, loc, s);
    /* '_' separates digits, as in Python: one at a time, between digits of the base (or right after 0x / 0b),
     * so 1_.5 and 1_e5 are as invalid as 1__0 and 1_ */
    bool bad_sep = false;
    for (const char *c = digits; c < q; c++)
        if (*c == '_' && (c + 1 == q || !(digit_value(c[1]) < base) ||
                          (c == digits ? base == 10 : !(digit_value(c[-1]) < base))))
            bad_sep = true;
    if (is_float) {
        char small[128], *buf = (size_t)(q - s) < sizeof small ? small : malloc((size_t)(q - s) + 1);
        if (!buf) out_of_memory();
        size_t n = 0;
        for (const char *c = s; c < q; c++)
            if (*c != '_') buf[n++] = *c;
        buf[n] = 0;
        char *endp;
        errno = 0;
        t->fval = c_strtod(buf, &endp);
        if (*endp || bad_sep) diag_error(l->d, loc, "invalid float literal '%.*s'", (int)(q - s) > 40 ? 40 : (int)(q - s), s);
        else if (errno == ERANGE && isinf(t->fval))
            diag_error(l->d, loc, "float literal '%.*s' is too large for f64", (int)(q - s) > 40 ? 40 : (int)(q - s), s);
        if (buf != small) free(buf);
        return;
    }
    uint64_t v = 0;
    bool bad = digits == q || bad_sep, big = false;
    for (const char *c = digits; c < q; c++) {
        if (*c == '_') continue;
        int dv = digit_value(*c);
        if (dv >= base) {
            bad = true;
            continue;
        }
        if (v > (UINT64_MAX - (uint64_t)dv) / (uint64_t)base) big = true;
        v = v * (uint64_t)base + (uint64_t)dv;
    }
    int shown = (int)(q - s) > 40 ? 40 : (int)(q - s);
    if (bad) diag_error(l->d, loc, "invalid integer literal '%.*s'", shown, s);
    else if (big) diag_error(l->d, loc, "integer literal '%.*s' is too large (more than 64 bits)", shown, s);
    else {
        t->ival = (int64_t)v;
        if (v > (uint64_t)INT64_MAX) t->dt = DT_U64; /* 0xFFFFFFFFFFFFFFFF: a u64, as Triton's */
    }
}

/* string = '"' { char | '\"' | '\\' } '"' on one line; q is the quote (a Python '...' string is read with
 * q = '\'' after its error, so the parse goes on) */
/* Whether the line from p on holds only blanks (or a comment). */
static bool lex_rest_blank(const Lexer *l, const char *p) {
    while (p < l->end && (*p == ' ' || *p == '\t')) p++;
    return p == l->end || src_line_end(p, l->end) || (l->end - p >= 2 && p[0] == '/' && (p[1] == '/' || p[1] == '*'));
}

static void lex_string(Lexer *l, char q) {
    Loc loc = lex_loc(l);
    const char *s = l->p;
    Str buf = {0};
    /* Python's triple-quoted string ("""...""", a Triton kernel's multi-line inline assembly): it may span lines,
     * each line end kept as '\n' */
    bool triple = l->end - l->p >= 3 && l->p[1] == q && l->p[2] == q;
    lex_advance(l, triple ? 3 : 1);
    bool closed = false;
    while (l->p < l->end && (triple || !src_line_end(l->p, l->end))) {
        char c = *l->p;
        if (triple && src_line_end(l->p, l->end)) {
            str_putc(&buf, '\n');
            lex_advance(l, c == '\r' && l->p + 1 < l->end && l->p[1] == '\n' ? 2 : 1);
            continue;
        }
        if (c == q && (!triple || (l->end - l->p >= 3 && l->p[1] == q && l->p[2] == q))) {
            lex_advance(l, triple ? 3 : 1);
            closed = true;
            break;
        }
        if (c == '\\' && l->p + 1 < l->end && (l->p[1] == q || l->p[1] == '\\' || l->p[1] == '"' || l->p[1] == '\'')) {
            str_putc(&buf, l->p[1]);
            lex_advance(l, 2);
            continue;
        }
        /* Python's \n, \t and \r (a Triton kernel's multi-line inline assembly: "{\n .reg .pred p;\n ...}");
         * another backslash stays as written, as Python keeps an escape it does not know */
        if (c == '\\' && l->p + 1 < l->end && (l->p[1] == 'n' || l->p[1] == 't' || l->p[1] == 'r')) {
            str_putc(&buf, l->p[1] == 'n' ? '\n' : l->p[1] == 't' ? '\t' : '\r');
            lex_advance(l, 2);
            continue;
        }
        if (c == '\0') {
            diag_error(l->d, lex_loc(l), "NUL byte in string literal");
        } else {
            str_putc(&buf, c);
        }
        lex_advance(l, 1);
    }
    if (!closed)
        diag_error(l->d, loc, triple ? "unterminated string literal (no %c%c%c closes this one)"
                                     : "unterminated string literal (a string ends on its line with '\"')", q, q, q);
    /* a string alone on its line as a statement, without the ';' that makes it one here ("doc";): Python's
     * docstring, one error, and read as a comment */
    /* (at the start of the text only a triple-quoted one: a -D value "leaky_relu" is lexed alone) */
    if (closed && (l->n ? l->toks[l->n - 1].kind == TK_LBRACE || l->toks[l->n - 1].kind == TK_SEMI || l->toks[l->n - 1].kind == TK_RBRACE
                        : triple)) {
        const char *e = l->p;
        while (e < l->end && (*e == ' ' || *e == '\t')) e++;
        if (lex_rest_blank(l, e)) {
            diag_error(l->d, loc, "a docstring is written as a comment here: /* ... */");
            str_free(&buf);
            return;
        }
    }
    Token *t = lex_push(l, TK_STRING, loc, s);
    t->reported = !closed;
    t->str = arena_strndup(l->a, buf.buf ? buf.buf : "", buf.len);
    str_free(&buf);
}

static bool ends_operand(const Token *t);

static bool is_keyword(const char *w, size_t n) {
    static const char *const python[] = {"and", "or", "not", "is", "in"};
    for (int i = TK_KERNEL; i <= TK_NONE; i++)
        if (strlen(lang_tok_spelling[i]) == n && !memcmp(lang_tok_spelling[i], w, n)) return true;
    for (size_t i = 0; i < sizeof python / sizeof *python; i++)
        if (strlen(python[i]) == n && !memcmp(python[i], w, n)) return true;
    return false;
}

/* Whether the text after a `//`, [q, eol), could be code going on from the operand before it: empty (the operand
 * then starts the next line: yapf's `a //` then `b`), or an operand's start (a name, a number, `(`, `[`, or `-`, `!`,
 * `~` against one), then only names, numbers, blanks, brackets, braces and operators, and no two words in a row
 * (prose: `// the row count`; keywords such as `as` and `if` are no words).  A filter on cost only: the parser
 * decides (floor_div.c), and a `//` this refuses is a comment without asking it. */
static bool slash_may_be_code(const char *q, const char *eol) {
    while (q < eol && (*q == ' ' || *q == '\t')) q++;
    while (eol > q && (eol[-1] == ' ' || eol[-1] == '\t' || eol[-1] == '\r')) eol--;
    if (q == eol) return true;
    bool sign = (*q == '-' || *q == '!' || *q == '~') && q + 1 < eol && (is_ident_char(q[1]) || q[1] == '(' || q[1] == '.');
    if (!(is_ident_char(*q) || *q == '(' || *q == '[' || sign)) return false;
    bool after_word = false; /* a name or a number, then only blanks */
    for (const char *c = q; c < eol;) {
        if (is_ident_start(*c) || is_digit(*c) || (*c == '.' && c + 1 < eol && is_digit(c[1]))) {
            const char *w = c;
            bool number = !is_ident_start(*c);
            while (c < eol && (is_ident_char(*c) || (number && (*c == '.' || ((*c == '-' || *c == '+') && (c[-1] == 'e' || c[-1] == 'E'))))))
                c++; /* a number: 2, 1.5e-3, 0x1f */
            bool keyword = !number && is_keyword(w, (size_t)(c - w));
            if (after_word && !keyword) return false; /* two words in a row */
            after_word = !keyword;
            continue;
        }
        if (*c != ' ' && *c != '\t') {
            if (!strchr("+-*/%&|^<>=!~.,;:()[]{}", *c)) return false; /* prose's or no code's: ' ? # ` $ \\ non-ASCII */
            after_word = false;
        }
        c++;
    }
    return true;
}

/* Python's `n //= 2;` (after a name or `]`, the line ending with `;`): read as `/=` and reported (lex_run). */
static bool lex_floor_div_assign(const Lexer *l) {
    if (!l->n || !(l->toks[l->n - 1].kind == TK_IDENT || l->toks[l->n - 1].kind == TK_RBRACK)) return false;
    const char *q = l->p + 2, *eol = q;
    while (eol < l->end && !src_line_end(eol, l->end)) eol++;
    if (!(q < eol && *q == '=' && !(q + 1 < eol && q[1] == '='))) return false;
    while (eol > q && (eol[-1] == ' ' || eol[-1] == '\t' || eol[-1] == '\r')) eol--;
    return eol[-1] == ';';
}

/* A `//` after an operand (a name, a literal, a type name, `)` or `]`), where the text after it could be code: Triton's
 * floor division, or a comment.  It is kept in l->sl with the lexer's state, for the parser to decide, and read as the
 * operator `/` (true) when an earlier lexing's slash there was decided so (lex_again). */
static bool lex_slash(Lexer *l) {
    if (!l->sl || !l->n || !ends_operand(&l->toks[l->n - 1])) return false;
    const char *q = l->p + 2, *eol = q;
    while (eol < l->end && !src_line_end(eol, l->end)) eol++;
    if ((q < eol && *q == '=') || !slash_may_be_code(q, eol)) return false;
    uint32_t off = (uint32_t)(l->p - l->src->text);
    LexSlash s = {.tok = l->n, .off = off, .loc = lex_loc(l), .state = SLASH_OPEN};
    while (l->icarry < l->ncarry && l->carry[l->icarry].off < off) l->icarry++;
    if (l->icarry < l->ncarry && l->carry[l->icarry].off == off) { /* lex_again: its decision, and its snapshot's memory */
        s.state = l->carry[l->icarry].state;
        s.reached = l->carry[l->icarry].reached;
        s.snap = l->carry[l->icarry].snap;
    } else {
        s.snap = ARENA_NEW(l->a, struct LexSnap);
    }
    s.snap->l = *l;
    LexSlashes *sl = l->sl;
    if (sl->n == sl->cap) {
        int nc = sl->cap ? sl->cap * 2 : 16;
        sl->v = arena_grow(l->a, sl->v, sizeof(LexSlash) * (size_t)sl->cap, sizeof(LexSlash) * (size_t)nc);
        sl->cap = nc;
    }
    sl->v[sl->n++] = s;
    return s.state == SLASH_OPERATOR;
}

static bool lex_skip_space(Lexer *l) {
    while (l->p < l->end) {
        char c = *l->p;
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
            lex_advance(l, 1);
        } else if (c == '/' && l->p + 1 < l->end && l->p[1] == '/') {
            if (lex_floor_div_assign(l) || lex_slash(l)) return true; /* lex_run reads it */
            while (l->p < l->end && !src_line_end(l->p, l->end)) lex_advance(l, 1);
        } else if (c == '/' && l->p + 1 < l->end && l->p[1] == '*') {
            Loc loc = lex_loc(l);
            lex_advance(l, 2);
            while (l->p < l->end && !(*l->p == '*' && l->p + 1 < l->end && l->p[1] == '/')) lex_advance(l, 1);
            if (l->p >= l->end) {
                diag_error(l->d, loc, "unterminated comment: no '*/' closes this '/*'");
                l->eof_reported = true;
                return false;
            }
            lex_advance(l, 2);
        } else {
            return true;
        }
    }
    return false;
}

/* Triton's module prefixes (tl.exp, tl.math.exp, tl.extra.cuda.libdevice.exp, triton.language.float16, and
 * tl.standard._log2, core.int16 of `import triton.language.core as core`): the names they qualify are plain names here. */
static bool triton_module_name(const char *s, size_t n) {
    /* the last three: Inductor's aliases tl_math and triton_helpers, and its @triton_heuristics.pointwise(...) */
    static const char *const names[] = {"tl",       "triton",  "language", "math",           "libdevice",        "extra",
                                        "cuda",     "core",    "standard", "target_info",    "tl_math",          "triton_helpers",
                                        "triton_heuristics"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strlen(names[i]) == n && !memcmp(names[i], s, n)) return true;
    return false;
}
static bool triton_module(const Token *t) { return t->kind == TK_IDENT && triton_module_name(t->text, t->len); }

/* CUDA's built-in variables (`blockIdx.x`), which a CUDA programmer writes first: one error at the name saying
 * what a program has instead (a program is a whole thread block, working on tiles); false for other names. */
static bool cuda_builtin_var(Lexer *l, const Token *name, int axis) {
    static const char *const vars[] = {"blockIdx", "gridDim", "threadIdx", "blockDim"};
    int k = -1;
    for (int i = 0; i < 4; i++)
        if (strlen(vars[i]) == name->len && !memcmp(vars[i], name->text, name->len)) k = i;
    if (k < 0) return false;
    if (k < 2)
        diag_error(l->d, name->loc, "'%s.%c': CUDA's %s is '%s(%d)' here (%s along axis %d)", vars[k], 'x' + axis,
                   k ? "grid size" : "block index", k ? "num_programs" : "program_id", axis,
                   k ? "the number of programs" : "the index of this program", axis);
    else
        diag_error(l->d, name->loc, "'%s.%c': a program here is a whole thread block working on tiles, and no code names a thread: "
                   "the elements of a tile are 'arange(0, BLOCK)' (BLOCK a 'const' parameter)", vars[k], 'x' + axis);
    return true;
}

/* Whether the token ends an operand (a binary operator may follow it). */
static bool ends_operand(const Token *t) {
    TokKind k = t->kind;
    return k == TK_IDENT || k == TK_INT || k == TK_FLOAT || k == TK_TYPE || k == TK_RPAREN || k == TK_RBRACK || k == TK_TRUE ||
           k == TK_FALSE || k == TK_NONE || k == TK_STRING;
}

/* Past a balanced (...) or [...] that starts at p (p itself when none does); strings inside are skipped whole. */
static const char *skip_balanced(const char *p, const char *end) {
    if (p >= end || (*p != '(' && *p != '[')) return p;
    int depth = 0;
    for (const char *q = p; q < end; q++) {
        if (*q == '"') {
            for (q++; q < end && *q != '"' && *q != '\n'; q++)
                if (*q == '\\' && q + 1 < end) q++;
            continue;
        }
        if (*q == '(' || *q == '[') depth++;
        else if ((*q == ')' || *q == ']') && --depth == 0) return q + 1;
    }
    return p;
}

/* What to write for Triton's x.NAME (then .NAME2, or [..] when indexed), for the error at the '.'. */
static const char *method_hint(char *buf, size_t cap, const char *m, size_t mn, const char *m2, size_t m2n, bool indexed,
                               bool no_args) {
#define IS(p, n, lit) ((n) == sizeof(lit) - 1 && !memcmp((p), (lit), (n)))
    if (IS(m, mn, "dtype") && m2) m = m2, mn = m2n; /* x.dtype.is_floating(): the type's own question */
    if (IS(m, mn, "to")) return "'x as T' or 'cast(x, T)' for Triton's x.to(T)";
    if (IS(m, mn, "shape") && indexed) return "'shape_of(x, d)' for Triton's x.shape[d] (a compile-time i32)";
    if (IS(m, mn, "shape"))
        return "'shape_of(x)' for Triton's x.shape (a compile-time list, a shape argument: zeros(shape_of(x), f32)), "
               "'rank(x)' for len(x.shape)";
    if (IS(m, mn, "numel")) return "'numel(x)' for Triton's x.numel (a compile-time i32)";
    if (IS(m, mn, "dtype") || IS(m, mn, "type")) return "'dtype_of(x)' for Triton's x.dtype";
    if (IS(m, mn, "is_floating")) return "'is_float(T)' for Triton's T.is_floating() (T a type, dtype_of(x) or a value)";
    if (IS(m, mn, "is_int")) return "'is_int(T)' for Triton's T.is_int() (T a type, dtype_of(x) or a value)";
    if (IS(m, mn, "is_int_signed")) return "'is_signed(T)' for Triton's T.is_int_signed() (T a type, dtype_of(x) or a value)";
    if (IS(m, mn, "is_int_unsigned"))
        return "'is_int(T) && !is_signed(T)' for Triton's T.is_int_unsigned() (T a type, dtype_of(x) or a value)";
    if (IS(m, mn, "is_ptr")) return "'is_ptr(T)' for Triton's T.is_ptr()";
    if (IS(m, mn, "is_fp8")) return "'is_fp8(T)' for Triton's T.is_fp8() (T a type, dtype_of(x) or a value)";
    /* T.is_fp16(), T.is_uint8(), ...: one type each, a comparison of types here */
    static const char *const is_type[][2] = {
        {"is_fp16", "f16"},   {"is_bf16", "bf16"},    {"is_fp32", "f32"},     {"is_fp64", "f64"},   {"is_fp8e4nv", "f8e4m3"},
        {"is_fp8e5", "f8e5m2"}, {"is_bool", "i1"},    {"is_int1", "i1"},      {"is_int8", "i8"},    {"is_int16", "i16"},
        {"is_int32", "i32"},  {"is_int64", "i64"},    {"is_uint8", "u8"},     {"is_uint16", "u16"}, {"is_uint32", "u32"},
        {"is_uint64", "u64"},
    };
    for (size_t i = 0; i < sizeof is_type / sizeof is_type[0]; i++)
        if (mn == strlen(is_type[i][0]) && !memcmp(m, is_type[i][0], mn)) {
            snprintf(buf, cap, "'dtype_of(x) == %s' for Triton's x.dtype.%s()", is_type[i][1], is_type[i][0]);
            return buf;
        }
    if (IS(m, mn, "primitive_bitwidth") || IS(m, mn, "int_bitwidth"))
        return "'bitwidth(T)' for Triton's T.primitive_bitwidth (T a type, dtype_of(x) or a value)";
    if (IS(m, mn, "element_ty")) return "'element_type(p)' for Triton's p.dtype.element_ty (p a pointer value, a block pointer or a tensor descriptor)";
    if (IS(m, mn, "T")) return "'trans(x)' for Triton's x.T";
    if (IS(m, mn, "ALL") || IS(m, mn, "NONE")) return "the string, propagate_nan=\"all\" or \"none\", for Triton's PropagateNan.ALL or .NONE";
    /* a tensor descriptor's methods (Triton's desc.load(offsets), tutorials 06 and 09): the _tensor_descriptor functions;
     * a pointer has none, so x.atomic_add(...) can only be a descriptor's */
    if (IS(m, mn, "load") || IS(m, mn, "store") || IS(m, mn, "atomic_add") || IS(m, mn, "atomic_max") || IS(m, mn, "atomic_min") ||
        IS(m, mn, "atomic_and") || IS(m, mn, "atomic_or") || IS(m, mn, "atomic_xor")) {
        bool ld = IS(m, mn, "load");
        snprintf(buf, cap, "'%.*s_tensor_descriptor(desc, offsets%s)' for a tensor descriptor's desc.%.*s(offsets%s)", (int)mn, m,
                 ld ? "" : ", value", (int)mn, m, ld ? "" : ", value");
        return buf;
    }
    char name[32];
    if (mn < sizeof name) { /* Triton's tensor methods are its functions with the tensor first: x.reshape(n) */
        memcpy(name, m, mn);
        name[mn] = 0;
        if (builtin_exists(name)) {
            snprintf(buf, cap, "'%s(x%s)' for Triton's x.%s(%s) (the function of that name, the tensor first)", name,
                     no_args ? "" : ", ...", name, no_args ? "" : "...");
            return buf;
        }
    }
    return "a function: 'reshape(x, ...)', 'trans(x)', 'sum(x, axis)', ...";
#undef IS
}

/* libdevice's accurate functions whose plain name here is the hardware approximation (as Triton's tl.exp is): the
 * form that keeps libdevice's accuracy, for a chain through `libdevice` (Liger's libdevice.tanh); NULL otherwise. */
static const char *libdevice_hint(const char *chain, int chainn, const char *m, size_t mn) {
    bool lib = false;
    for (int i = 0; i + 9 <= chainn && !lib; i++) lib = !memcmp(chain + i, "libdevice", 9);
    if (!lib) return NULL;
#define IS(lit) (mn == sizeof(lit) - 1 && !memcmp(m, (lit), mn))
    if (IS("tanh")) return "'tanh(x, exact=true)' (libdevice's tanh is the accurate one; plain 'tanh' is tanh.approx)";
    if (IS("exp")) return "'exp(x, exact=true)' (libdevice's exp is the accurate one; plain 'exp' is ex2.approx.ftz, as Triton's tl.exp)";
    if (IS("exp2")) return "'exp2(x, exact=true)' (libdevice's exp2 keeps subnormals; plain 'exp2' is ex2.approx.ftz, as Triton's tl.exp2)";
    if (IS("sin") || IS("cos") || IS("log") || IS("log2"))
        return IS("sin") ? "'sin(x as f64) as f32' for libdevice's accuracy ('sin' is sin.approx, as Triton's tl.sin)"
               : IS("cos") ? "'cos(x as f64) as f32' for libdevice's accuracy ('cos' is cos.approx, as Triton's tl.cos)"
               : IS("log") ? "'log(x as f64) as f32' for libdevice's accuracy ('log' is lg2.approx, as Triton's tl.log)"
                           : "'log2(x as f64) as f32' for libdevice's accuracy ('log2' is lg2.approx, as Triton's tl.log2)";
    if (IS("rsqrt")) return "'rsqrt_rn(x)' for libdevice's accuracy ('rsqrt' is rsqrt.approx, as Triton's tl.rsqrt)";
#undef IS
    return NULL;
}

/* Python's math constants (math.inf, math.nan, math.pi, math.e): the float each is, for the error at math.inf */
static bool python_float(const char *s, size_t n, double *v) {
    if (n == 3 && !memcmp(s, "inf", 3)) return *v = INFINITY, true;
    if (n == 3 && !memcmp(s, "nan", 3)) return *v = NAN, true;
    if (n == 2 && !memcmp(s, "pi", 2)) return *v = 3.141592653589793, true;
    if (n == 1 && *s == 'e') return *v = 2.718281828459045, true;
    return false;
}

/* Triton's dtype names and what they are here (tl.float16 is f16). */
DType lang_triton_dtype(const char *s, size_t n) {
    static const struct {
        const char *name;
        const char *here;
    } map[] = {{"float16", "f16"}, {"bfloat16", "bf16"}, {"float32", "f32"}, {"float64", "f64"}, {"int1", "i1"},
               {"int8", "i8"},     {"int16", "i16"},     {"int32", "i32"},   {"int64", "i64"},   {"uint8", "u8"},
               {"uint16", "u16"},  {"uint32", "u32"},    {"uint64", "u64"},  {"float8e4nv", "f8e4m3"},
               {"float8e5", "f8e5m2"}, {"float8_e4m3fn", "f8e4m3"}, {"float8_e5m2", "f8e5m2"}};
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (strlen(map[i].name) == n && !memcmp(map[i].name, s, n)) return dtype_from_name(map[i].here, strlen(map[i].here));
    return dtype_from_name(s, n);
}

/* Python's module imports at the start of a line, the first lines of every Triton file (`import triton`, `import
 * triton.language as tl`, `from triton.language.extra import libdevice`): one error for the line, which is then
 * skipped.  Read as this language's `import`, the parse would look for a file name and a ';' past the end of the
 * line and swallow the kernel after it, so its own errors (a `def`, a block after ':') would go unreported.  The
 * lexer stands just past the word `import` or `from` (`s`, `n`); true when the line was such an import. */
static bool python_import(Lexer *l, TokKind k, const char *s, size_t n, Loc loc) {
    bool from = k == TK_IDENT && n == 4 && !memcmp(s, "from", 4);
    if (k != TK_IMPORT && !from) return false;
    if (l->n && l->toks[l->n - 1].loc.line == loc.line) return false; /* not the first word of its line */
    const char *q = l->p, *e = l->p;
    while (q < l->end && (*q == ' ' || *q == '\t')) q++;
    if (q == l->p || q == l->end || !is_ident_start(*q)) return false; /* import "x.tile"; and a name `from` */
    while (e < l->end && !src_line_end(e, l->end) && *e != '#' && *e != ';') e++;
    if (from) { /* from MODULE import NAMES: the word import must follow the module */
        const char *w = q;
        while (w < e && (is_ident_char(*w) || *w == '.')) w++;
        while (w < e && (*w == ' ' || *w == '\t')) w++;
        if (!(e - w >= 7 && !memcmp(w, "import", 6) && !is_ident_char(w[6]))) return false;
    }
    const char *t = e;
    while (t > s && (t[-1] == ' ' || t[-1] == '\t' || t[-1] == '\r')) t--;
    diag_error(l->d, loc, "'%.*s': Python's modules are not imported here: the built-ins are plain names ('tl.load' is "
               "'load') and the standard library needs no import; 'import' takes a file name (import \"math.tile\";)",
               (int)(t - s), s);
    l->d->nspelled++;
    while (l->p < l->end && !src_line_end(l->p, l->end) && *l->p != '#') lex_advance(l, 1); /* a '#' comment is lexed */
    return true;
}

/* A Python word that a Triton kernel uses where this language has an operator or a literal: one error saying how
 * it is written here, and its token in its place (so the parse goes on).  `is not` stays two names (the parser's
 * `x is not None`); `and`/`or` only after an operand, `not` only before one. */
static bool python_word(Lexer *l, const char *s, size_t n, Loc loc) {
    const Token *prev = l->n ? &l->toks[l->n - 1] : NULL;
    const char *q = l->p, *r;
    while (q < l->end && (*q == ' ' || *q == '\t')) q++;
    for (r = q; r < l->end && (*r == ' ' || *r == '\t' || *r == '\r' || *r == '\n');) r++; /* black's `(not` then the operand */
    /* an operand's start after `not` (a `[` list only after a space: `not[0]` indexes a variable named not) */
    bool operand_next = r < l->end && (is_ident_start(*r) || is_digit(*r) || *r == '(' || *r == '-' || *r == '+' || *r == '!' ||
                                       *r == '~' || *r == '"' || *r == '\'' || (*r == '[' && r > l->p) ||
                                       (*r == '.' && r + 1 < l->end && is_digit(r[1])));
    TokKind k = TK_COUNT;
    const char *how = NULL;
    if (n == 3 && !memcmp(s, "and", 3) && prev && ends_operand(prev)) k = TK_ANDAND, how = "'&&'";
    else if (n == 2 && !memcmp(s, "or", 2) && prev && ends_operand(prev)) k = TK_OROR, how = "'||'";
    else if (n == 3 && !memcmp(s, "not", 3) && operand_next && !(prev && ends_operand(prev))) k = TK_BANG, how = "'!'";
    else if (n == 4 && !memcmp(s, "True", 4)) k = TK_TRUE, how = "'true'";
    else if (n == 5 && !memcmp(s, "False", 5)) k = TK_FALSE, how = "'false'";
    if (k != TK_COUNT) {
        diag_error(l->d, loc, "'%.*s' is written %s here (Python's '%.*s')", (int)n, s, how, (int)n, s);
        l->d->nspelled++;
        lex_push(l, k, loc, s);
        return true;
    }
    return false;
}

/* A character that starts no token, at l->p: reported, naming it (UTF-8 decoded where valid; *cp its code
 * point, 0 for a byte that is not) and what to write where it is an ASCII look-alike that editors and chat
 * tools put into pasted code (U+2212 for '-', no-break spaces, curly quotes).  Returns its length in bytes. */
static size_t lex_stray(Lexer *l, Loc loc, int *cp) {
    static const struct {
        int cp;
        const char *what, *write;
    } lookalike[] = {
        {0x00A0, "a no-break space", "a plain space"}, {0x2009, "a thin space", "a plain space"},
        {0x202F, "a narrow no-break space", "a plain space"}, {0x3000, "an ideographic space", "a plain space"},
        {0x200B, "a zero-width space", "nothing: delete it"}, {0xFEFF, "a zero-width no-break space", "nothing: delete it"},
        {0x2212, "a minus sign", "'-'"}, {0x2010, "a hyphen", "'-'"}, {0x2013, "an en dash", "'-'"}, {0x2014, "an em dash", "'-'"},
        {0x00D7, "a multiplication sign", "'*'"}, {0x00F7, "a division sign", "'/'"}, {0x2215, "a division slash", "'/'"},
        {0x2264, "less-than or equal to", "'<='"}, {0x2265, "greater-than or equal to", "'>='"}, {0x2260, "not equal to", "'!='"},
        {0x2018, "a curly quote", "'\"'"}, {0x2019, "a curly quote", "'\"'"}, {0x201C, "a curly quote", "'\"'"},
        {0x201D, "a curly quote", "'\"'"}, {0x201E, "a curly quote", "'\"'"}, {0xFF08, "a full-width parenthesis", "'('"},
        {0xFF09, "a full-width parenthesis", "')'"}, {0xFF1B, "a full-width semicolon", "';'"}, {0xFF0C, "a full-width comma", "','"},
    };
    const unsigned char *u = (const unsigned char *)l->p;
    size_t avail = (size_t)(l->end - l->p);
    unsigned c = u[0];
    *cp = 0;
    if (c == '?') {
        diag_error(l->d, loc, "there is no '?:' here: write 'a if cond else b' (where(cond, a, b) to choose per element)");
        return 1;
    }
    if (c == '.' && avail >= 3 && u[1] == '.' && u[2] == '.') { /* x[..., None] of NumPy, which Triton's indexing lacks too */
        diag_error(l->d, loc, "there is no '...' (Python's Ellipsis) here: index a tensor with one ':' for each dimension it keeps "
                   "(x[:, :, None] of a 2-D x)");
        return 3;
    }
    if (c == '.' && avail >= 2 && u[1] == '.') { /* Rust's 0..n and 0..=n */
        bool incl = avail >= 3 && u[2] == '=';
        diag_error(l->d, loc, "there is no '%s' range here: a loop over integers is 'for i in range(a, b)'%s", incl ? "..=" : "..",
                   incl ? " (a..=b is range(a, b + 1))" : "");
        return incl ? 3 : 2;
    }
    if (c >= 0x20 && c < 0x7f) {
        diag_error(l->d, loc, "unexpected character '%c'", c);
        return 1;
    }
    size_t n = c >= 0x80 ? utf8_char_len(l->p, avail) : 0; /* 0: not a character (a surrogate, an overlong form) */
    if (!n) {
        diag_error(l->d, loc, c < 0x20 || c == 0x7f ? "unexpected byte 0x%02x (a control character)" : "unexpected byte 0x%02x (not UTF-8 text)", c);
        return 1;
    }
    int v = (int)(c & (0xFF >> (n + 1)));
    for (size_t i = 1; i < n; i++) v = v << 6 | (u[i] & 0x3F);
    *cp = v;
    for (size_t i = 0; i < sizeof lookalike / sizeof *lookalike; i++)
        if (lookalike[i].cp == v) {
            diag_error(l->d, loc, "unexpected character U+%04X (%s): write %s", v, lookalike[i].what, lookalike[i].write);
            return n;
        }
    diag_error(l->d, loc, "unexpected character '%.*s' (U+%04X): outside strings and comments the source is ASCII (a name is "
               "letters, digits and '_')", (int)n, l->p, v);
    return n;
}

/* Python's f-string, `f"..."` (also `rf`/`fr`, either case), right after its prefix s[0..n): Triton's messages are
 * often one (xformers' `tl.static_assert(..., f"... {PACKED_PER_VAL=}")`).  Reported, then read as the plain string,
 * braces and all, so the rest of the file is still checked. */
static bool python_fstring(Lexer *l, const char *s, size_t n, Loc loc) {
    if (n < 1 || n > 2 || l->p >= l->end || (*l->p != '"' && *l->p != '\''))
        return false;
    bool f = false, other = false;
    for (size_t i = 0; i < n; i++) {
        char c = (char)(s[i] | 0x20);
        if (c == 'f') f = true;
        else if (c != 'r') other = true;
    }
    if (!f || other) return false;
    diag_error(l->d, loc, "Python's f-string '%.*s\"...\"': strings are not formatted here; write a plain \"...\" (static_print "
               "shows compile-time values, device_print run-time ones)", (int)n, s);
    l->d->nspelled++;
    lex_string(l, *l->p);
    return true;
}

/* Lex from l's state to the end of the file. */
static void lex_run(Lexer *lp) {
    Lexer l = *lp;
    Arena *a = l.a;
    Diag *d = l.d;
    /* bounded work and memory on any input: stop at LEX_MAX_TOKENS tokens or
     * LEX_MAX_ERRORS errors (the parser could not make sense of more) */
    while (lex_skip_space(&l)) {
        if (l.n >= LEX_MAX_TOKENS) {
            diag_error(d, lex_loc(&l), "source too large: more than %d tokens", LEX_MAX_TOKENS);
            break;
        }
        if (d->nerrors > LEX_MAX_ERRORS) break;
        const char *s = l.p;
        Loc loc = lex_loc(&l);
        char c = *s;
        if (is_ident_start(c)) {
            while (l.p < l.end && is_ident_char(*l.p)) lex_advance(&l, 1);
            size_t n = (size_t)(l.p - s);
            TokKind k = TK_IDENT;
            for (int i = TK_KERNEL; i <= TK_NONE; i++)
                if (strlen(lang_tok_spelling[i]) == n && !memcmp(lang_tok_spelling[i], s, n)) k = (TokKind)i;
            DType dt = k == TK_IDENT ? dtype_from_name(s, n) : DT_VOID;
            if (dt == DT_PTR) dt = DT_VOID;
            if (dt != DT_VOID) k = TK_TYPE;
            if (python_import(&l, k, s, n, loc)) {
                l.bad_run = 0;
                continue;
            }
            if (k == TK_IDENT && python_fstring(&l, s, n, loc)) { /* Python's f"..." (static_assert's message) */
                l.bad_run = 0;
                continue;
            }
            if (k == TK_IDENT && python_word(&l, s, n, loc)) { /* Python's and, or, not, True, False */
                l.bad_run = 0;
                continue;
            }
            lex_push(&l, k, loc, s)->dt = dt;
            l.bad_run = 0;
            continue;
        }
        if (is_digit(c) || (c == '.' && s + 1 < l.end && is_digit(s[1]))) {
            lex_number(&l);
            l.bad_run = 0;
            continue;
        }
        if (c == '"') {
            lex_string(&l, '"');
            continue;
        }
        if (c == '/' && s + 2 < l.end && s[1] == '/' && s[2] == '=') { /* lex_floor_div_assign: Python's n //= 2; */
            diag_error(d, loc, "'//=' would start a comment here; for integer division write '/=' (it truncates toward zero, as "
                       "Triton's '//' on integers does)");
            d->nspelled++;
            lex_advance(&l, 3);
            lex_push(&l, TK_SLASHEQ, loc, s);
            continue;
        }
        if (c == '/' && s + 1 < l.end && s[1] == '/') { /* a slash the parser took for the operator (lex_slash) */
            lex_advance(&l, 2);
            lex_push(&l, TK_SLASH, loc, s)->floor_div = true; /* reported where the parser reads it */
            l.bad_run = 0;
            continue;
        }
        if ((c == '+' || c == '-') && s + 1 < l.end && s[1] == c && l.n && ends_operand(&l.toks[l.n - 1])) { /* C's i++; */
            const char *q = s + 2;
            while (q < l.end && (*q == ' ' || *q == '\t')) q++;
            if (q < l.end && *q == ';') {
                const Token *prev = &l.toks[l.n - 1];
                bool named = prev->kind == TK_IDENT;
                diag_error(d, loc, "'%c%c': there is no %s operator here; write '%.*s%s%c= 1'", c, c, c == '+' ? "increment" : "decrement",
                           named ? (int)prev->len : 0, prev->text, named ? " " : "", c);
                d->nspelled++;
                lex_advance(&l, 2); /* read as `i += 1;`, so the parse goes on */
                lex_push(&l, c == '+' ? TK_PLUSEQ : TK_MINUSEQ, loc, s);
                lex_push(&l, TK_INT, loc, s)->ival = 1;
                continue;
            }
        }
        if (c == '*' && s + 1 < l.end && s[1] == '*' && l.n && ends_operand(&l.toks[l.n - 1])) { /* Python's power (not **T) */
            lex_advance(&l, 2);
            lex_push(&l, TK_POW, loc, s);
            continue;
        }
        int best = -1;
        size_t best_len = 0;
        for (int i = TK_LPAREN; i <= TK_SHREQ; i++) {
            size_t n = strlen(lang_tok_spelling[i]);
            if (n > best_len && (size_t)(l.end - s) >= n && !memcmp(lang_tok_spelling[i], s, n)) best = i, best_len = n;
        }
        if (best >= 0) {
            lex_advance(&l, best_len);
            lex_push(&l, (TokKind)best, loc, s);
            l.bad_run = 0;
            continue;
        }
        /* report one error per run of bad bytes */
        if (!l.bad_run++) {
            const char *m = s + 1;
            size_t mn = 0;
            while (m + mn < l.end && is_ident_char(m[mn])) mn++;
            const Token *prev = l.n ? &l.toks[l.n - 1] : NULL;
            if (c == '.' && mn && is_ident_start(*m) && prev && triton_module(prev) && prev->text + prev->len == s) {
                /* tl.exp(x): reported once, then lexed as exp(x), so the parse goes on without a cascade of errors */
                bool first = prev->text != l.chain;
                Loc at = prev->loc;
                const char *mod = prev->text;
                int modn = (int)prev->len;
                l.n--;
                lex_advance(&l, 1);
                l.chain = l.p;
                DType dt = lang_triton_dtype(m, mn);
                bool deco = l.n && l.toks[l.n - 1].kind == TK_AT && first; /* @triton.jit, @triton.autotune(...) */
                const char *last = m, *end = l.end; /* the name the whole chain qualifies: tl.math.exp is exp */
                size_t lastn = mn;
                while (triton_module_name(last, lastn) && last + lastn + 1 < end && last[lastn] == '.' && is_ident_start(last[lastn + 1])) {
                    last += lastn + 1;
                    for (lastn = 0; last + lastn < end && is_ident_char(last[lastn]);) lastn++;
                }
                int chainn = (int)(last + lastn - mod);
                double fv;
                DType cdt;
                if (deco) {
                    diag_error(d, at, "'@%.*s': a kernel needs no decorator here: 'kernel NAME(params) { ... }' (launch settings are "
                               "attributes such as @num_warps(4); tuning configurations are @config(...))", chainn, mod);
                    d->nspelled++; /* skipped with its arguments: the file reads as if it were not there */
                    l.n--;         /* the '@' */
                    lex_advance(&l, (size_t)(skip_balanced(last + lastn, l.end) - l.p));
                    l.bad_run = 0;
                    continue;
                }
                if (first && last == m && python_float(m, mn, &fv)) { /* math.inf */
                    diag_error(d, at, "'%.*s': there is no '%.*s' module here; write the float (%s)", chainn, mod, modn, mod,
                               isinf(fv) ? "1.0 / 0.0" : isnan(fv) ? "0.0 / 0.0" : mn == 2 ? "3.141592653589793" : "2.718281828459045");
                    d->nspelled++;
                    lex_advance(&l, mn);
                    lex_push(&l, TK_FLOAT, at, m)->fval = fv;
                    l.bad_run = 0;
                    continue;
                }
                /* Triton's module-level `NAME: tl.constexpr = v` and `NAME = tl.constexpr(v)`: the parser reports the
                 * line as a whole, naming the file-level `const` (decl) */
                bool module_const = first && !l.braces && !l.depth && mn == 9 && !memcmp(m, "constexpr", 9) && l.n >= 2 &&
                                    ((l.toks[l.n - 1].kind == TK_ASSIGN && m + mn < l.end && m[mn] == '(') ||
                                     l.toks[l.n - 1].kind == TK_COLON) &&
                                    l.toks[l.n - 2].kind == TK_IDENT;
                if (module_const)
                    ;
                else if (first && mn == 9 && !memcmp(m, "constexpr", 9) && !(m + mn < l.end && m[mn] == '('))
                    diag_error(d, at, "'%.*s.constexpr': a compile-time parameter is written 'const NAME: T' (or 'const NAME = default', "
                               "or 'NAME: constexpr'), a local compile-time constant 'const NAME = value;' (or 'let NAME: constexpr = "
                               "value;')", modn, mod);
                else if (first && (cdt = lang_triton_dtype(last, lastn)) != DT_VOID && cdt != DT_PTR) /* triton.language.float16 */
                    diag_error(d, at, "'%.*s': there is no '%.*s' module here; the type is '%s'", chainn, mod, modn, mod,
                               dtype_name(cdt));
                else if (first && lastn == 5 && !memcmp(last, "dtype", 5)) /* triton_kernels' tl.dtype(f"uint{bits}") */
                    diag_error(d, at, "'%.*s': there is no '%.*s' module here; a type is written by its name ('u32', or a 'const' "
                               "holding one), and Triton's tl.dtype(f\"uint{bits}\") is 'get_int_dtype(bits, false)'", chainn, mod,
                               modn, mod);
                else if (first && libdevice_hint(mod, chainn, last, lastn))
                    diag_error(d, at, "'%.*s': there is no '%.*s' module here; write %s", chainn, mod, modn, mod,
                               libdevice_hint(mod, chainn, last, lastn));
                else if (first)
                    diag_error(d, at, "'%.*s': there is no '%.*s' module here; write '%.*s' (the built-ins are plain names, "
                               "docs/language.md)", chainn, mod, modn, mod, (int)lastn, last);
                if (first && !module_const) d->nspelled++; /* read as the plain name (the parser reports a module_const) */
                if (dt != DT_VOID && dt != DT_PTR && !dtype_from_name(m, mn)) { /* float16: lexed as the type f16 */
                    lex_advance(&l, mn);
                    lex_push(&l, TK_TYPE, at, m)->dt = dt;
                }
                l.bad_run = 0;
                continue;
            }
            if (c == '.' && mn == 1 && *m >= 'x' && *m <= 'z' && prev && prev->kind == TK_IDENT && prev->text + prev->len == s &&
                cuda_builtin_var(&l, prev, *m - 'x')) { /* CUDA's blockIdx.x: reported at the name, read as that name */
                lex_advance(&l, 2);
                l.bad_run = 0;
                continue;
            }
            if (c == '.' && mn && is_ident_start(*m) && l.n) { /* Triton's methods and attributes: x.to(f16), x.shape */
                /* the whole l.chain goes with the error (x.dtype.is_floating(), x.shape[0]: no second one at the name) */
                const char *e = skip_balanced(m + mn, l.end), *m2 = NULL;
                size_t m2n = 0;
                bool indexed = e > m + mn && m[mn] == '[';
                while (e + 1 < l.end && *e == '.' && is_ident_start(e[1])) {
                    const char *a = e + 1, *b = a;
                    while (b < l.end && is_ident_char(*b)) b++;
                    if (!m2) m2 = a, m2n = (size_t)(b - a);
                    e = skip_balanced(b, l.end);
                }
                char hint[256];
                bool no_args = m + mn + 1 < l.end && m[mn] == '(' && m[mn + 1] == ')';
                diag_error(d, loc, "'.%.*s%s%.*s': values have no methods or attributes here; write %s", (int)mn, m, m2 ? "." : "",
                           (int)m2n, m2 ? m2 : "", method_hint(hint, sizeof hint, m, mn, m2, m2n, indexed, no_args));
                lex_advance(&l, (size_t)(e - l.p));
                continue;
            } else if (c == '\\' && lex_rest_blank(&l, s + 1)) { /* Python's line continuation: reported, then skipped */
                diag_error(d, loc, "a line continuation '\\' is not needed here: a statement goes on until its ';'");
                d->nspelled++;
                lex_advance(&l, 1);
                l.bad_run = 0;
                continue;
            } else if (c == '#') { /* a Python comment in a ported kernel: reported, then read as one */
                diag_error(d, loc, "'#' does not start a comment here: write '//'");
                d->nspelled++;
                while (l.p < l.end && !src_line_end(l.p, l.end)) lex_advance(&l, 1);
                l.bad_run = 0;
                continue;
            } else if (c == '\'') { /* a Python string: reported, then read as one; float('nan') is Python's float, as */
                const Token *t = l.n >= 2 ? &l.toks[l.n - 2] : NULL; /* float("nan") is (builtins.c) */
                bool of_float = t && t->kind == TK_IDENT && t->len == 5 && !memcmp(t->text, "float", 5) &&
                                l.toks[l.n - 1].kind == TK_LPAREN;
                if (!of_float) {
                    diag_error(d, loc, "strings are written with double quotes here: \"...\"");
                    d->nspelled++;
                }
                lex_string(&l, '\'');
                l.bad_run = 0;
                continue;
            } else {
                int cp = 0;
                size_t n = lex_stray(&l, loc, &cp);
                if (cp == 0x201C || cp == 0x201D || cp == 0x201E) { /* a pasted “string”: read up to its closing quote */
                    lex_advance(&l, n);
                    const char *b = l.p;
                    while (l.p < l.end && !src_line_end(l.p, l.end) && *l.p != '"' &&
                           !(l.end - l.p >= 3 && !memcmp(l.p, "\xE2\x80", 2) && ((unsigned char)l.p[2] == 0x9C || (unsigned char)l.p[2] == 0x9D)))
                        lex_advance(&l, 1);
                    const char *e = l.p;
                    bool closed = l.p < l.end && !src_line_end(l.p, l.end);
                    if (closed) lex_advance(&l, *l.p == '"' ? 1 : 3);
                    Token *t = lex_push(&l, TK_STRING, loc, s);
                    t->str = arena_strndup(a, b, (size_t)(e - b));
                    t->reported = !closed;
                    l.bad_run = 0;
                    continue;
                }
                /* one token for the parser to stop at silently: the statement is skipped without a second error */
                lex_push(&l, TK_BAD, loc, s)->reported = true;
                lex_advance(&l, n);
                continue;
            }
        }
        lex_advance(&l, 1);
    }
    lex_push(&l, TK_EOF, lex_loc(&l), l.p)->reported = l.eof_reported;
    *lp = l;
}

Token *lex_file(Arena *a, const SrcFile *src, Diag *d, int *ntoks, LexSlashes *sl) {
    Lexer l = {.a = a, .d = d, .src = src, .p = src->text, .end = src->text + src->len, .line = 1, .col = 1, .sl = sl};
    if (l.end - l.p >= 3 && !memcmp(l.p, "\xEF\xBB\xBF", 3)) l.p += 3; /* a UTF-8 byte-order mark (editors on Windows write one) */
    if (sl) *sl = (LexSlashes){.budget = LEX_AGAIN_PER_BYTE * src->len + LEX_AGAIN_BASE};
    /* a binary file (an executable, an object, a cubin given as source or import): one error, not one per stray byte
     * (/bin/ls gave 437); a text file's stray NUL stays an error at its place */
    size_t nul = 0, head = src->len < 4096 ? src->len : 4096;
    for (size_t i = 0; i < head; i++) nul += !src->text[i];
    if (nul >= 4) {
        diag_error(d, (Loc){src, 1, 1}, "%s is not source text: it holds NUL bytes (a binary file, such as an executable or a cubin)",
                   src->name);
        lex_push(&l, TK_EOF, lex_loc(&l), l.p)->reported = true;
        *ntoks = l.n;
        return l.toks;
    }
    lex_run(&l);
    if (sl) sl->tok_cap = l.cap;
    *ntoks = l.n;
    return l.toks;
}

Token *lex_again(Arena *a, Token *toks, LexSlashes *sl, int i, int *ntoks) {
    const LexSlash *s = &sl->v[i];
    size_t work = (size_t)(s->snap->l.end - s->snap->l.p);
    sl->budget -= work < sl->budget ? work : sl->budget;
    Lexer l = s->snap->l;
    Diag scratch;
    diag_init(&scratch);
    l.d = &scratch;
    l.toks = toks; /* the tokens before the slash are those it had; the parser holds none after it */
    l.cap = sl->tok_cap;
    l.ncarry = sl->n - i;
    LexSlash *carry = malloc(sizeof(LexSlash) * (size_t)(l.ncarry ? l.ncarry : 1));
    if (!carry) out_of_memory();
    memcpy(carry, s, sizeof(LexSlash) * (size_t)l.ncarry);
    l.carry = carry;
    l.icarry = 0;
    sl->n = i;
    lex_run(&l);
    sl->tok_cap = l.cap;
    free(carry);
    /* the lexer's errors after a `//` read as the operator go with that slash (the parser says them where it reads it);
     * the others were said by the first lexing */
    for (int k = 0; k < scratch.n; k++) {
        const DiagMsg *m = &scratch.msgs[k];
        LexSlash *owner = NULL;
        for (int j = i; j < sl->n; j++)
            if (sl->v[j].state == SLASH_OPERATOR && sl->v[j].loc.line == m->loc.line && sl->v[j].loc.col < m->loc.col) owner = &sl->v[j];
        if (!owner) continue;
        owner->msgs = arena_grow(a, owner->msgs, sizeof(DiagMsg) * (size_t)owner->nmsgs, sizeof(DiagMsg) * (size_t)(owner->nmsgs + 1));
        owner->msgs[owner->nmsgs++] = (DiagMsg){m->level, m->loc, arena_strdup(a, m->msg)};
    }
    diag_free(&scratch);
    *ntoks = l.n;
    return l.toks;
}
