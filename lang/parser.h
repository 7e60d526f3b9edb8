/* parser.h - the parser's state (internal to lang/): parse.c's recursive descent and floor_div.c's decision,
 * for each `//` after an operand, whether it is a comment or Triton's floor division pasted in. */
#ifndef TILE_LANG_PARSER_H
#define TILE_LANG_PARSER_H

#include "ast.h"

#include <stdarg.h>
#include <string.h>

typedef struct Parser {
    Arena *a;
    Diag *d;
    Token *t;
    int n, pos;
    int depth;
    int nest; /* inside ( ) or [ ]: a conditional expression's `if` may then be on a later line */
    bool panic;
    bool too_deep;
    int unclosed_at; /* the token before which a block's missing '}' was reported (0: none yet) */
    int err_pos;     /* the token at the first error since floor_div_parse began the statement (-1: none) */
    const SrcFile *src;
    LexSlashes *sl;  /* the `//`s after an operand (NULL: none) */
    struct SlashLog *log;
} Parser;

/* ---- the token cursor, errors and node allocation: parse.c's primitives ---- */
enum { PARSE_MAX_DEPTH = 200 };

static inline Token *peek(Parser *p) { return &p->t[p->pos]; }
static inline Token *peek2(Parser *p) { return &p->t[p->pos + 1 < p->n ? p->pos + 1 : p->n - 1]; }
static inline bool at(Parser *p, TokKind k) { return p->t[p->pos].kind == k; }
static inline Token *next(Parser *p) {
    Token *t = &p->t[p->pos];
    if (t->kind != TK_EOF) p->pos++;
    return t;
}
static inline bool accept(Parser *p, TokKind k) {
    if (!at(p, k)) return false;
    next(p);
    return true;
}

static inline void parse_error(Parser *p, Loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static inline void parse_error(Parser *p, Loc loc, const char *fmt, ...) {
    if (p->panic) return;
    p->panic = true;
    p->err_pos = p->pos;
    /* the lexer reported this token or the one before (a stray character, an unterminated string or comment):
     * what the parser would add is the same mistake again */
    if (peek(p)->reported || (p->pos > 0 && p->t[p->pos - 1].reported)) return;
    va_list ap;
    va_start(ap, fmt);
    diag_vadd(p->d, DIAG_ERROR, loc, fmt, ap);
    va_end(ap);
}

/* How a token is named in "found X": its spelling, quoted. */
static inline const char *tok_desc(Parser *p, const Token *t) {
    if (t->kind == TK_EOF) return "end of file";
    int n = t->len > 32 ? 32 : (int)t->len;
    return arena_printf(p->a, "'%.*s%s'", n, t->text, t->len > 32 ? "..." : "");
}

static inline bool expect(Parser *p, TokKind k, const char *where) {
    if (accept(p, k)) return true;
    Loc loc = peek(p)->loc;
    const Token *prev = p->pos > 0 ? &p->t[p->pos - 1] : NULL;
    if (k == TK_SEMI && prev && prev->loc.file == loc.file && prev->loc.line < loc.line) {
        /* a ';' missing at the end of a line: the caret goes there, not under the next line's first token */
        loc = prev->loc;
        loc.col += prev->len;
        parse_error(p, loc, "expected '%s' %s, found %s on line %u", lang_tok_spelling[k], where, tok_desc(p, peek(p)),
                    peek(p)->loc.line);
        return false;
    }
    if (k == TK_SEMI && at(p, TK_ASSIGN) && (!strcmp(where, "after assignment") || !strcmp(where, "after 'let' statement"))) {
        parse_error(p, loc, "there is no chained assignment here (Python's 'a = b = v'): assign each name ('b = v; a = b;')");
        return false;
    }
    parse_error(p, loc, "expected '%s' %s, found %s", lang_tok_spelling[k], where, tok_desc(p, peek(p)));
    return false;
}

static inline const char *expect_ident(Parser *p, const char *what, Loc *loc) {
    Token *t = peek(p);
    if (loc) *loc = t->loc;
    if (t->kind == TK_IDENT) {
        next(p);
        return arena_strndup(p->a, t->text, t->len);
    }
    if (t->kind == TK_TYPE)
        parse_error(p, t->loc, "expected %s, found the type name %s: type names cannot name values", what, tok_desc(p, t));
    else if (t->kind >= TK_KERNEL)
        parse_error(p, t->loc, "expected %s, found the keyword %s", what, tok_desc(p, t));
    else parse_error(p, t->loc, "expected %s, found %s", what, tok_desc(p, t));
    return "<error>";
}

static inline Node *new_node(Parser *p, NodeKind k, Loc loc) {
    Node *n = ARENA_NEW(p->a, Node);
    n->kind = k;
    n->loc = loc;
    n->oploc = loc;
    return n;
}

/* A growable list of node pointers, copied into the arena when done. */
typedef struct NodeList {
    Node **v;
    int n, cap;
} NodeList;
static inline void list_push(Parser *p, NodeList *l, Node *x) {
    if (l->n == l->cap) {
        int nc = l->cap ? l->cap * 2 : 8;
        l->v = arena_grow(p->a, l->v, sizeof(Node *) * (size_t)l->cap, sizeof(Node *) * (size_t)nc);
        l->cap = nc;
    }
    l->v[l->n++] = x;
}

static inline bool enter(Parser *p) {
    if (++p->depth > PARSE_MAX_DEPTH) {
        if (!p->too_deep) parse_error(p, peek(p)->loc, "parentheses, blocks or statements nested too deeply (more than %d levels)", PARSE_MAX_DEPTH);
        p->too_deep = true;
        return false;
    }
    return true;
}
static inline void leave(Parser *p) { p->depth--; }

enum { PARSE_MAX_HEIGHT = 10000 }; /* the deepest tree a declaration may hold (parse_height.c) */

/* Whether the trees under dc are at most PARSE_MAX_HEIGHT deep; false with an error at the first node past it. */
bool parse_decl_height_ok(Parser *p, const Decl *dc);

/* The offsets of the slashes read as the operator by the statements being decided (floor_div_parse), innermost last. */
typedef struct SlashLog {
    uint32_t *off;
    int n, cap;
} SlashLog;

/* After an operand, where an operator may follow (binary's `* / %` level); op_next: the next token is a binary
 * operator. */
void floor_div_point(Parser *p, bool op_next);
/* The error at a `//` read as the operator, where the parser reads it (and the lexer's in the rest of its line). */
void floor_div_report(Parser *p, const Token *t);
/* One statement (or top-level declaration) parsed by parse, its `//`s decided. */
void *floor_div_parse(Parser *p, void *(*parse)(Parser *));

#endif
