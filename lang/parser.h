/* parser.h - the parser's state (internal to lang/): parse.c's recursive descent and floor_div.c's decision,
 * for each `//` after an operand, whether it is a comment or Triton's floor division pasted in. */
#ifndef TILE_LANG_PARSER_H
#define TILE_LANG_PARSER_H

#include "ast.h"

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
