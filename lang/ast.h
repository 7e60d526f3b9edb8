/* ast.h - tokens and syntax trees of the front end (internal to lang/).
 *
 * The lexer turns a whole file into an array of Tokens (lex_file); the
 * parser builds one FileAst per file: a list of Decls (imports, file-level
 * constants, device functions, kernels) whose bodies are Node trees.  Nodes
 * carry the location of the first token of their construct (binary and unary
 * expressions also the operator's, `oploc`).  Everything lives in the
 * compilation's Arena.  The generator (gen_*) walks these trees directly:
 * there is no separate typed AST, values are computed while emitting IR. */
#ifndef TILE_LANG_AST_H
#define TILE_LANG_AST_H

#include "lang.h"

#include <string.h>

/* ---- tokens: X(ENUM, spelling) --------------------------------------
 * Punctuators between LPAREN and SHREQ and keywords between KERNEL and NONE
 * are recognised by spelling from this table, so it is the only list.
 * `in` is contextual (only after the variable of `for`), so it may name a
 * parameter. */
#define LANG_TOKENS(X)                                                                  \
    X(EOF, "end of file") X(IDENT, "identifier") X(INT, "integer literal")              \
    X(FLOAT, "float literal") X(STRING, "string literal") X(TYPE, "type name")          \
    X(BAD, "bad character") /* a stray byte or character, reported by the lexer */      \
    /* punctuators */                                                                   \
    X(LPAREN, "(") X(RPAREN, ")") X(LBRACE, "{") X(RBRACE, "}") X(LBRACK, "[")          \
    X(RBRACK, "]") X(COMMA, ",") X(SEMI, ";") X(COLON, ":") X(AT, "@")                  \
    X(PLUS, "+") X(MINUS, "-") X(STAR, "*") X(SLASH, "/") X(PERCENT, "%")               \
    X(AMP, "&") X(PIPE, "|") X(CARET, "^") X(TILDE, "~") X(BANG, "!")                   \
    X(LT, "<") X(GT, ">") X(LE, "<=") X(GE, ">=") X(EQEQ, "==") X(NE, "!=")             \
    X(ANDAND, "&&") X(OROR, "||") X(SHL, "<<") X(SHR, ">>") X(ASSIGN, "=")              \
    X(PLUSEQ, "+=") X(MINUSEQ, "-=") X(STAREQ, "*=") X(SLASHEQ, "/=")                   \
    X(PERCENTEQ, "%=") X(AMPEQ, "&=") X(PIPEEQ, "|=") X(CARETEQ, "^=")                  \
    X(SHLEQ, "<<=") X(SHREQ, ">>=")                                                     \
    X(POW, "**") /* after an operand only (lex.c), so `**f32` stays two pointer levels */ \
    /* keywords */                                                                      \
    X(KERNEL, "kernel") X(FN, "fn") X(CONST, "const") X(LET, "let") X(IF, "if")         \
    X(ELSE, "else") X(FOR, "for") X(RANGE, "range") X(RETURN, "return")                \
    X(WHILE, "while") X(BREAK, "break") X(CONTINUE, "continue")                         \
    X(IMPORT, "import") X(AS, "as") X(TRUE, "true") X(FALSE, "false") X(NONE, "None")

typedef enum TokKind {
#define X(e, s) TK_##e,
    LANG_TOKENS(X)
#undef X
        TK_COUNT
} TokKind;

typedef struct Token {
    TokKind kind;
    Loc loc;
    const char *text; /* points into the source */
    uint32_t len;
    int64_t ival;     /* TK_INT */
    double fval;      /* TK_FLOAT */
    DType dt;         /* TK_TYPE */
    const char *str;  /* TK_STRING, decoded, arena */
    bool reported;    /* the lexer reported an error here (a stray character, an unterminated string or
                       * comment): the parser adds none at or just after this token, the same mistake */
    bool floor_div;   /* TK_SLASH: a `//` read as the operator (LexSlash), reported where the parser reads it */
} Token;

extern const char *const lang_tok_spelling[TK_COUNT];
/* A type name as written here or in Triton (float16, tl.float16's float16, int32): DT_VOID if neither. */
DType lang_triton_dtype(const char *s, size_t n);
/* A `//` right after an operand (a name, a literal, a type name, `)` or `]`) whose rest of the line could be code:
 * a comment, or Triton's floor division pasted in.  The lexer reads it as its state says (a comment while OPEN)
 * and keeps its own state there, so that lex_again can lex the file again from it; the parser decides
 * (floor_div.c). */
typedef enum SlashState { SLASH_OPEN, SLASH_OPERATOR, SLASH_COMMENT } SlashState;
typedef struct LexSlash {
    int tok;              /* the index of the token after it (of the `/` when it is read as the operator) */
    uint32_t off;         /* its byte offset in the source */
    Loc loc;
    uint8_t state;        /* SlashState */
    bool reached;         /* the parser came to it after an operand, where an operator may follow */
    DiagMsg *msgs;        /* the lexer's errors in the rest of its line, said when it is read as the operator */
    int nmsgs;
    struct LexSnap *snap; /* the lexer's state before it (lex.c) */
} LexSlash;
typedef struct LexSlashes {
    LexSlash *v; /* by offset (and token) */
    int n, cap;
    size_t budget; /* the bytes lex_again may still read */
    int tok_cap;   /* the tokens' capacity (lex_again writes its tokens over the old ones from the slash on) */
} LexSlashes;

/* Lex all of src; the array ends with TK_EOF.  Errors go to d; the `//`s after an operand to sl (NULL: comments). */
Token *lex_file(Arena *a, const SrcFile *src, Diag *d, int *ntoks, LexSlashes *sl);
/* The tokens again from sl->v[i] on, written over toks from there (each slash read as its state says; the later ones
 * keep theirs, sl->v[i..] made anew), the bytes read taken from sl->budget (the caller looks at it first). */
Token *lex_again(Arena *a, Token *toks, LexSlashes *sl, int i, int *ntoks);

/* A built-in function of that name (builtins.c): the lexer names it for Triton's method of the same name. */
bool builtin_exists(const char *name);

/* ---- syntax trees ---- */
typedef struct TypeRef {
    DType dt;          /* DT_VOID: none (or a named type) */
    int nptr;          /* levels of `*` */
    const char *name;  /* a named type: a compile-time constant whose value is a type (`*DT`), resolved
                        * where the type is used; NULL: dt */
    Loc loc;           /* the name */
    struct Node *call; /* a call giving a type (`dtype_of(x)`), evaluated where the type is used; NULL: none */
} TypeRef;

/* A type was written (a type name or a named type). */
static inline bool tyref_given(TypeRef t) { return t.dt != DT_VOID || t.name || t.call; }

typedef enum NodeKind {
    /* expressions */
    N_ERR, N_INT, N_FLOAT, N_BOOL, N_NONE, N_STR, N_NAME, N_DTYPE, N_LIST, N_SLICE,
    N_UNARY, N_BINARY, N_CAST, N_CALL, N_INDEX, N_TUPLE, N_COND,
    /* statements */
    N_LET, N_ASSIGN, N_FOR, N_WHILE, N_IF, N_RETURN, N_BREAK, N_CONTINUE, N_EXPR, N_BLOCK,
} NodeKind;

typedef struct Node Node;
struct Node {
    NodeKind kind;
    Loc loc;           /* first token */
    Loc oploc;         /* operator token (N_UNARY, N_BINARY, N_CAST, N_ASSIGN) */
    TokKind op;        /* N_UNARY, N_BINARY operator; N_ASSIGN: ASSIGN or compound */
    bool paren;        /* an expression written in parentheses: `(a < b) & c` */
    int64_t ival;      /* N_INT, N_BOOL; N_FOR: 1 for static_range, 2 over a tuple or list (kids[0]); N_LET: 1 for a local `const` (Triton's `x: tl.constexpr = e`);
                        * N_BINARY: 1 for Python's `is` / `is not` of something other than None, 2 for `in` / `not in` */
    double fval;       /* N_FLOAT */
    const char *name;  /* N_NAME, N_STR (the decoded string), N_CALL callee, N_LET, N_ASSIGN (NULL: a tuple of names in kids), N_FOR variable */
    TypeRef ty;        /* N_DTYPE, N_CAST, N_LET (dt == DT_VOID: none) */
    Node *lhs, *rhs;   /* operands; N_LET, N_ASSIGN, N_RETURN, N_EXPR: rhs is the value; N_FOR: rhs the
                        * range's keyword arguments (an N_CALL of them with kwnames), or NULL */
    Node **kids;       /* N_LIST, N_TUPLE, N_CALL args, N_INDEX items, N_BLOCK stmts, N_FOR range args,
                        * N_LET/N_ASSIGN of a tuple: the N_NAMEs */
    int nkids;
    const char **kwnames; /* N_CALL: keyword of each arg, NULL when positional */
    Loc *kwlocs;          /* N_CALL as parsed: where each keyword is written (a call the front end rewrites has none:
                           * its diagnostics point at the argument) */
    Node *cond, *then, *els; /* N_IF (els: N_BLOCK, N_IF or NULL); N_FOR, N_WHILE: then is the body;
                              * N_COND `then if cond else els`, each an expression (oploc: the `if`) */
};

typedef enum DeclKind { D_IMPORT, D_CONST, D_FN, D_KERNEL } DeclKind;

typedef struct Param {
    const char *name;
    Loc loc;
    bool is_const;
    TypeRef ty;  /* dt == DT_VOID: untyped */
    Node *def;   /* default, or NULL */
    bool tuple_type; /* written with a tuple type the parser reported (a const's, a fn's): then untyped */
    Node *tuple_ty;  /* a kernel's tuple parameter's type, `p: (*f32, (i32, f32))`: an expression of types; or NULL */
} Param;

/* A tensor descriptor parameter, `d: tensor_desc(f16, [BM, BK])` (lang/kernel.c), is parsed as a type given by a call:
 * that call (its arguments the element type and the block shape), or NULL for any other parameter. */
static inline const Node *param_desc(const Param *pa) {
    const Node *c = pa->ty.call;
    return c && c->kind == N_CALL && c->name && !strcmp(c->name, "tensor_desc") ? c : NULL;
}

typedef struct Attr {
    const char *name;
    Loc loc;
    Node *arg;            /* the first argument (NULL when none) */
    Node **args;          /* every argument */
    const char **argnames; /* keyword of each argument, NULL when positional */
    int nargs;
} Attr;

typedef struct Decl {
    DeclKind kind;
    const char *name; /* D_IMPORT: the path string */
    Loc loc;          /* the name */
    Param *params;
    int nparams;
    Attr *attrs;
    int nattrs;
    Node *body;       /* D_FN, D_KERNEL: N_BLOCK */
    Node *value;      /* D_CONST */
    TypeRef ty;       /* D_CONST */
} Decl;

/* A map from names to pointers in the arena (open addressing): the file-level names, the names a program calls
 * and each scope's variables are found in constant time, so a file of 100000 functions, constants or `let`s
 * compiles in time linear in its size (names.c). */
typedef struct NameMap {
    const char **keys;
    void **vals;
    uint32_t cap, n; /* cap: 0 or a power of two */
} NameMap;
void *namemap_get(const NameMap *m, const char *name);               /* NULL when absent */
void namemap_put(Arena *a, NameMap *m, const char *name, void *val); /* adds or replaces */

typedef struct FileAst {
    const SrcFile *src;
    Decl **decls;
    int ndecls;
    bool stdlib; /* read from a standard-library folder: the program's own names shadow its names */
} FileAst;

FileAst *parse_file(Arena *a, const SrcFile *src, Diag *d);
/* Parse a -D value: an optional '-' then an int, float, true/false or a type name. */
Node *parse_define_value(Arena *a, const SrcFile *src, Diag *d);

/* ---- generation (irgen.c) ---- */
Module *gen_module(Arena *a, FileAst **files, int nfiles, const LangOptions *opt, Diag *d);

#endif
