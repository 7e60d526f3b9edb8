/* parse.c - recursive-descent parser: tokens -> FileAst.
 *
 * Each function parses one rule of the grammar in docs/language.md, quoted
 * in the comment above it.  Error handling:
 *   1. the first error in a statement (or top-level declaration) is reported
 *      and the parser enters panic mode, which silences further errors; an
 *      error at (or just after) a token the lexer reported is not reported
 *      again, only the panic begins;
 *   2. parse functions still return a node (N_ERR) and every loop that could
 *      spin stops when panicking;
 *   3. a statement (a declaration at the top) that fails after a `//` that
 *      could be Triton's floor division is parsed again with it read as `/`
 *      (floor_div.c decides);
 *   4. the enclosing block (or the file) resynchronises: it skips to the next
 *      `;` (consumed) or `}` (left for the block) at the same brace depth, or
 *      at top level to the next `kernel`, `fn`, `const`, `import` or `@`,
 *      then leaves panic mode so the next error is reported too.
 * Nesting is bounded (PARSE_MAX_DEPTH) so hostile input cannot overflow the
 * stack here; chains the parser builds in a loop (`a + b + c ...`, `x[0][0]...`,
 * `x as f32 as f32 ...`) nest without recursion here, so each declaration's
 * tree is measured afterwards, without recursion, and one deeper than
 * PARSE_MAX_HEIGHT is an error: the generator's and the other passes' tree
 * walks recurse (a flat chain of 5000 operators compiles; 100000 overflowed
 * the stack). */
#include "parser.h"

#include <math.h>
#include <string.h>

static Node *expr(Parser *p);
static Node *block(Parser *p);
/* an expression inside brackets */
static Node *nested_expr(Parser *p) {
    p->nest++;
    Node *n = expr(p);
    p->nest--;
    return n;
}

static Node *postfix(Parser *p);

/* type = SCALAR_TYPE | IDENT | call | "*" type   (IDENT: a compile-time constant whose value is a type;
 * call: one that gives a type, dtype_of(x)) */
static TypeRef type(Parser *p) {
    TypeRef t = {.dt = DT_VOID};
    while (accept(p, TK_STAR)) {
        if (t.nptr < 8) t.nptr++;
        else parse_error(p, peek(p)->loc, "too many levels of pointers");
    }
    if (at(p, TK_TYPE)) {
        t.dt = next(p)->dt;
        return t;
    }
    if (at(p, TK_IDENT) && peek2(p)->kind == TK_LPAREN) {
        t.loc = peek(p)->loc;
        t.call = postfix(p);
        return t;
    }
    if (at(p, TK_IDENT)) {
        Token *n = next(p);
        t.name = arena_strndup(p->a, n->text, n->len);
        t.loc = n->loc;
        return t;
    }
    parse_error(p, peek(p)->loc, "expected a type, found %s", tok_desc(p, peek(p)));
    t.dt = DT_F32;
    return t;
}

/* index = ":" | "None" */
/* index = ":" | "None" | expr (an element of a tuple or list: t[0]) */
/* Python's slice of a tuple or list, start:stop:step, each part optional (x.shape[:-1], t[1:]): an N_SLICE with
 * ival 1, lhs start, rhs stop, els step (NULL: not given); a bare ':' (a tensor's, x[:, None]) has ival 0 */
static Node *slice_rest(Parser *p, Node *n) {
    n->ival = 1;
    if (!at(p, TK_COLON) && !at(p, TK_COMMA) && !at(p, TK_RBRACK)) n->rhs = nested_expr(p);
    if (accept(p, TK_COLON) && !at(p, TK_COMMA) && !at(p, TK_RBRACK)) n->els = nested_expr(p);
    return n;
}

/* index = ":" | "None" | expr | [ expr ] ":" [ expr ] [ ":" [ expr ] ] */
static Node *index_item(Parser *p) {
    Token *t = peek(p);
    if (accept(p, TK_COLON)) {
        Node *n = new_node(p, N_SLICE, t->loc);
        return at(p, TK_COMMA) || at(p, TK_RBRACK) ? n : slice_rest(p, n);
    }
    if (t->kind == TK_NONE && (peek2(p)->kind == TK_COMMA || peek2(p)->kind == TK_RBRACK)) {
        next(p);
        return new_node(p, N_NONE, t->loc);
    }
    Node *e = nested_expr(p);
    if (!accept(p, TK_COLON)) return e;
    Node *n = new_node(p, N_SLICE, t->loc);
    n->lhs = e;
    return slice_rest(p, n);
}

/* primary = INT | FLOAT | "true" | "false" | "None" | IDENT | SCALAR_TYPE | "*" type | STRING { STRING }
 *         | "(" expr ")" | "[" [ expr { "," expr } ] "]" */
static Node *primary(Parser *p) {
    Token *t = peek(p);
    Node *n;
    switch (t->kind) {
    case TK_INT:
        next(p);
        n = new_node(p, N_INT, t->loc);
        n->ival = t->ival;
        n->ty.dt = t->dt == DT_U64 ? DT_U64 : DT_VOID; /* above i64: a u64 literal */
        return n;
    case TK_FLOAT:
        next(p);
        n = new_node(p, N_FLOAT, t->loc);
        n->fval = t->fval;
        return n;
    case TK_TRUE:
    case TK_FALSE:
        next(p);
        n = new_node(p, N_BOOL, t->loc);
        n->ival = t->kind == TK_TRUE;
        return n;
    case TK_NONE:
        next(p);
        return new_node(p, N_NONE, t->loc);
    case TK_IDENT:
        next(p);
        n = new_node(p, N_NAME, t->loc);
        n->name = arena_strndup(p->a, t->text, t->len);
        return n;
    case TK_TYPE:
        next(p);
        n = new_node(p, N_DTYPE, t->loc);
        n->ty = (TypeRef){.dt = t->dt};
        return n;
    case TK_STAR: /* a pointer type as an argument, cast(a, *f16, bitcast=true): no operator starts with '*' */
        n = new_node(p, N_DTYPE, t->loc);
        n->ty = type(p);
        return n;
    case TK_LPAREN: { /* "(" expr ")" | tuple = "(" ")" | "(" expr "," [ expr { "," expr } [ "," ] ] ")" */
        next(p);
        if (accept(p, TK_RPAREN)) return new_node(p, N_TUPLE, t->loc); /* (): Python's empty tuple */
        n = nested_expr(p);
        if (p->panic || !at(p, TK_COMMA)) {
            expect(p, TK_RPAREN, "after parenthesized expression");
            n->paren = true;
            return n;
        }
        NodeList l = {0};
        list_push(p, &l, n);
        n = new_node(p, N_TUPLE, t->loc);
        while (!p->panic && accept(p, TK_COMMA) && !at(p, TK_RPAREN)) list_push(p, &l, nested_expr(p)); /* (x,) and (x, y,) too */
        expect(p, TK_RPAREN, "after tuple elements");
        n->kids = l.v;
        n->nkids = l.n;
        return n;
    }
    case TK_LBRACK: {
        next(p);
        NodeList l = {0};
        n = new_node(p, N_LIST, t->loc);
        if (!at(p, TK_RBRACK)) /* [] is the shape of a scalar: Triton's tl.zeros([], dtype) */
            do {
                list_push(p, &l, nested_expr(p));
            } while (!p->panic && accept(p, TK_COMMA) && !at(p, TK_RBRACK)); /* [a, b,] */
        expect(p, TK_RBRACK, "after list elements");
        n->kids = l.v;
        n->nkids = l.n;
        return n;
    }
    case TK_STRING: { /* a compile-time string: sem="relaxed", ACT == "relu", device_print's prefix; "a" "b" is "ab" */
        next(p);
        n = new_node(p, N_STR, t->loc);
        n->name = t->str;
        while (at(p, TK_STRING)) n->name = arena_printf(p->a, "%s%s", n->name, next(p)->str);
        return n;
    }
    default:
        parse_error(p, t->loc, "expected an expression, found %s", tok_desc(p, t));
        return new_node(p, N_ERR, t->loc);
    }
}

/* postfix = primary { "(" [ arg { "," arg } ] ")" | "[" index { "," index } "]" }
 * arg     = [ IDENT "=" ] expr */
static Node *postfix_of(Parser *p, Node *n);
static Node *postfix(Parser *p) { return postfix_of(p, primary(p)); }

/* the calls and indexes after an operand n */
static Node *postfix_of(Parser *p, Node *n) {
    for (;;) {
        if (p->panic) return n;
        Token *t = peek(p);
        if (accept(p, TK_LPAREN)) {
            Node *c = new_node(p, N_CALL, n->loc);
            c->oploc = t->loc;
            c->lhs = n;
            c->name = n->kind == N_NAME ? n->name : NULL;
            NodeList l = {0};
            const char **kw = NULL;
            Loc *kwloc = NULL;
            int kwcap = 0;
            if (!at(p, TK_RPAREN)) {
                do {
                    const char *name = NULL;
                    Loc at_name = {0};
                    if (at(p, TK_IDENT) && peek2(p)->kind == TK_ASSIGN) {
                        Token *id = next(p);
                        next(p);
                        name = arena_strndup(p->a, id->text, id->len);
                        at_name = id->loc;
                    }
                    list_push(p, &l, nested_expr(p));
                    if (kwcap < l.cap) {
                        kw = arena_grow(p->a, kw, sizeof(char *) * (size_t)kwcap, sizeof(char *) * (size_t)l.cap);
                        kwloc = arena_grow(p->a, kwloc, sizeof(Loc) * (size_t)kwcap, sizeof(Loc) * (size_t)l.cap);
                        kwcap = l.cap;
                    }
                    kw[l.n - 1] = name;
                    kwloc[l.n - 1] = at_name;
                } while (!p->panic && accept(p, TK_COMMA) && !at(p, TK_RPAREN)); /* f(a, b,) as in Python */
            }
            expect(p, TK_RPAREN, "after call arguments");
            c->kids = l.v;
            c->nkids = l.n;
            c->kwnames = kw;
            c->kwlocs = kwloc;
            n = c;
        } else if (accept(p, TK_LBRACK)) {
            Node *x = new_node(p, N_INDEX, n->loc);
            x->oploc = t->loc;
            x->lhs = n;
            NodeList l = {0};
            do {
                list_push(p, &l, index_item(p));
            } while (!p->panic && accept(p, TK_COMMA));
            expect(p, TK_RBRACK, "after index");
            x->kids = l.v;
            x->nkids = l.n;
            n = x;
        } else {
            return n;
        }
    }
}

/* castexpr = postfix { "as" type } */
static Node *castexpr(Parser *p) {
    Node *n = postfix(p);
    while (!p->panic && at(p, TK_AS)) {
        Token *t = next(p);
        Node *c = new_node(p, N_CAST, n->loc);
        c->oploc = t->loc;
        c->lhs = n;
        c->ty = type(p);
        n = c;
        if (!p->panic && at(p, TK_LBRACK)) { /* Triton's x.to(tl.float32)[:, None]: read as (x as f32)[:, None] */
            diag_error(p->d, peek(p)->loc, "an index after 'as' needs parentheses around the cast: '(x as T)[...]' "
                       "(Triton's x.to(T)[...]); 'as' binds looser than an index");
            n = postfix_of(p, n);
        }
    }
    return n;
}

static Node *unary(Parser *p);

/* power = castexpr [ "**" unary ]: Python's, right-associative, tighter than a unary operator on its left
 * (`-2 ** 2` is -4) and looser than one on its right (`2 ** -1`) */
static Node *power(Parser *p) {
    Node *n = castexpr(p);
    if (p->panic || !at(p, TK_POW)) return n;
    Token *t = next(p);
    if (!enter(p)) {
        leave(p);
        return new_node(p, N_ERR, t->loc);
    }
    Node *b = new_node(p, N_BINARY, n->loc);
    b->oploc = t->loc;
    b->op = TK_POW;
    b->lhs = n;
    b->rhs = unary(p);
    leave(p);
    return b;
}

static Node *binary(Parser *p, int level);

/* unary = ( "-" | "+" | "!" | "~" ) unary | power
 * Python's `not` (reported by the lexer, read as `!`) binds as Python's, looser than a comparison and tighter than
 * `and`: `not a == b` is `!(a == b)`, `not a & m` is `!(a & m)` (its operand is the `|` level) */
static Node *unary(Parser *p) {
    Token *t = peek(p);
    if (t->kind == TK_MINUS || t->kind == TK_PLUS || t->kind == TK_BANG || t->kind == TK_TILDE) {
        if (!enter(p)) {
            leave(p);
            return new_node(p, N_ERR, t->loc);
        }
        next(p);
        Node *n = new_node(p, N_UNARY, t->loc);
        n->op = t->kind;
        bool py_not = t->kind == TK_BANG && t->len == 3 && !memcmp(t->text, "not", 3);
        n->lhs = py_not ? binary(p, 2) : unary(p);
        leave(p);
        return n;
    }
    return power(p);
}

/* Binary precedence levels, loosest first; each level is
 *   level = next { OP next } */
static const TokKind binary_levels[][4] = {
    {TK_OROR}, {TK_ANDAND}, {TK_PIPE}, {TK_CARET}, {TK_AMP}, {TK_EQEQ, TK_NE},
    {TK_LT, TK_LE, TK_GT, TK_GE}, {TK_SHL, TK_SHR}, {TK_PLUS, TK_MINUS}, {TK_STAR, TK_SLASH, TK_PERCENT},
};

static bool is_comparison(const Node *n) {
    return n->kind == N_BINARY && !n->paren &&
           (n->op == TK_EQEQ || n->op == TK_NE || n->op == TK_LT || n->op == TK_LE || n->op == TK_GT || n->op == TK_GE);
}

/* Two places where C's precedence (the one here) and Python's (Triton's) read the same text
 * differently, and the result still type-checks (an i1 promotes): an unparenthesized comparison
 * as an operand of `&`, `|`, `^` (`x & 1 == 0`: C reads x & (1 == 0), Python (x & 1) == 0) or of
 * another comparison (`lo <= x < n`: C compares the i1 with n, Python chains).  Both are errors
 * asking for parentheses. */
static void check_mixed(Parser *p, const Node *b) {
    bool bits = b->op == TK_AMP || b->op == TK_PIPE || b->op == TK_CARET;
    if (!bits && !is_comparison(&(Node){.kind = N_BINARY, .op = b->op})) return;
    const Node *c = is_comparison(b->lhs) ? b->lhs : is_comparison(b->rhs) ? b->rhs : NULL;
    if (!c) return;
    const char *op = lang_tok_spelling[b->op], *cop = lang_tok_spelling[c->op];
    if (bits)
        diag_error(p->d, b->oploc,
                   "'%s' of a comparison: here '%s' binds tighter than '%s' (as in C), in Python and Triton looser; "
                   "write the parentheses you mean, as in '(a < n) %s (b >= 0)' for masks or '(x %s 1) %s 0'",
                   op, cop, op, op, op, cop);
    else {
        const char *o1 = c == b->lhs ? cop : op, *o2 = c == b->lhs ? op : cop;
        diag_error(p->d, b->oploc,
                   "chained comparison 'a %s b %s c': here one compares the other's i1 result (as in C), not Python's "
                   "'a %s b and b %s c'; write '(a %s b) && (b %s c)'",
                   o1, o2, o1, o2, o1, o2);
    }
}

static bool binary_op(TokKind k) {
    for (size_t i = 0; i < ARRAY_LEN(binary_levels); i++)
        for (int j = 0; j < 4 && binary_levels[i][j]; j++)
            if (binary_levels[i][j] == k) return true;
    return false;
}

static bool ident_is(const Token *t, const char *s) { return t->kind == TK_IDENT && t->len == strlen(s) && !memcmp(t->text, s, t->len); }

/* or = and { "||" and } ... term = unary { ( "*" | "/" | "%" ) unary }
 * (one function for the ten levels of the grammar, driven by binary_levels) */

static Node *binary(Parser *p, int level) {
    if (level == (int)ARRAY_LEN(binary_levels)) return unary(p);
    Node *n = binary(p, level + 1);
    for (;;) {
        if (p->panic) return n;
        if (level == (int)ARRAY_LEN(binary_levels) - 1) floor_div_point(p, binary_op(peek(p)->kind));
        TokKind k = peek(p)->kind;
        bool is = ident_is(peek(p), "is"), in = ident_is(peek(p), "in") || (ident_is(peek(p), "not") && ident_is(&p->t[p->pos + 1], "in"));
        if (binary_levels[level][0] == TK_EQEQ && (is || in)) {
            /* Python's `x is None` and `x is not None` (contextual: `is`, `in` and `not` are names elsewhere): == and != None;
             * `x in t` and `x not in t`: ival 2, == (!=) of x and each element of the tuple or list t (gen.c) */
            Token *t = next(p);
            bool neg = in ? t->len == 3 && next(p) : ident_is(peek(p), "not") && next(p);
            Token *none = peek(p);
            Node *b = new_node(p, N_BINARY, n->loc);
            b->oploc = t->loc;
            b->op = neg ? TK_NE : TK_EQEQ;
            b->lhs = n;
            if (is && accept(p, TK_NONE)) b->rhs = new_node(p, N_NONE, none->loc);
            else { /* `dtype is bf16`, `ACT is not "relu"`: == and != of compile-time values (gen.c checks them) */
                b->rhs = binary(p, level + 1);
                b->ival = in ? 2 : 1;
            }
            n = b;
            continue;
        }
        bool match = false;
        for (int i = 0; i < 4 && binary_levels[level][i]; i++)
            if (binary_levels[level][i] == k) match = true;
        if (!match) return n;
        Token *t = next(p);
        if (t->floor_div) floor_div_report(p, t);
        Node *b = new_node(p, N_BINARY, n->loc);
        b->oploc = t->loc;
        b->op = k;
        b->lhs = n;
        b->rhs = binary(p, level + 1);
        check_mixed(p, b);
        n = b;
    }
}

/* expr = or [ "if" or "else" expr ]: Python's conditional expression, `a if c else b` (right to left:
 * `a if x else b if y else c`).  Outside brackets the `if` must be on the line where `a` ends, so that a
 * statement missing its ';' before an `if` statement on the next line still reads as that. */
static Node *expr(Parser *p) {
    if (!enter(p)) {
        leave(p);
        return new_node(p, N_ERR, peek(p)->loc);
    }
    Node *n = binary(p, 0);
    const Token *prev = p->pos > 0 ? &p->t[p->pos - 1] : NULL;
    if (!p->panic && at(p, TK_IF) && prev && (p->nest > 0 || (prev->loc.file == peek(p)->loc.file && prev->loc.line == peek(p)->loc.line))) {
        Node *c = new_node(p, N_COND, n->loc);
        c->oploc = next(p)->loc;
        c->then = n;
        c->cond = binary(p, 0);
        if (expect(p, TK_ELSE, "in a conditional expression ('a if cond else b')")) c->els = expr(p);
        else c->els = new_node(p, N_ERR, peek(p)->loc);
        n = c;
    }
    leave(p);
    return n;
}

static bool is_assign_op(TokKind k) { return k == TK_ASSIGN || (k >= TK_PLUSEQ && k <= TK_SHREQ); }

/* Skip to the end of a broken statement: past the next ';' or up to the '}'
 * closing the current block, at the same brace depth. */
/* `fn`, `kernel` or `@` at the start of a line: the next top-level declaration, whatever the braces before say */
static bool at_line_start_decl(Parser *p) {
    const Token *t = peek(p);
    return (t->kind == TK_FN || t->kind == TK_KERNEL || t->kind == TK_AT) && t->loc.col == 1;
}

static void sync_stmt(Parser *p) {
    int depth = 0;
    while (!at(p, TK_EOF)) {
        TokKind k = peek(p)->kind;
        if (depth == 0 && at_line_start_decl(p)) break;
        if (k == TK_LBRACE) depth++;
        if (k == TK_RBRACE) {
            if (depth == 0) break;
            depth--;
            next(p);
            if (depth == 0 && (at(p, TK_KERNEL) || at(p, TK_FN) || at(p, TK_AT))) break;
            continue;
        }
        next(p);
        if (k == TK_SEMI && depth == 0) break;
    }
    p->panic = false;
}

static Node *ifstmt(Parser *p);

/* names = "(" target "," [ target { "," target } [ "," ] ] ")"   target = IDENT | names
 * (the targets of a tuple let or assignment; `(a,)` unpacks a tuple of one, Python's `a, = t`: what Inductor
 * writes for associative_scan((x,), ...); `(a, (b, c))` a nested tuple, Python's `a, (b, c) = t`).  The N_NAMEs
 * go into flat, depth first; the returned N_TUPLE holds the structure. */
/* `(a)`, `((a))` at token k: Python's parenthesized name, which is the name itself (`(a,)` is the tuple of one);
 * the number of parentheses around it, 0 when the tokens there are not one */
static int paren_name_depth(const Parser *p, int k) {
    int d = 0;
    while (k + d < p->n && p->t[k + d].kind == TK_LPAREN) d++;
    if (!d || k + d >= p->n || p->t[k + d].kind != TK_IDENT) return 0;
    for (int i = 1; i <= d; i++)
        if (k + d + i >= p->n || p->t[k + d + i].kind != TK_RPAREN) return 0;
    return d;
}

/* The parenthesized name paren_name_depth found (d parentheses), consumed: its name token */
static Token *paren_name(Parser *p, int d) {
    for (int i = 0; i < d; i++) next(p);
    Token *id = next(p);
    for (int i = 0; i < d; i++) next(p);
    return id;
}

static Node *tuple_pattern(Parser *p, NodeList *flat, bool *nested, Loc where);

/* pattern_item = NAME | "(" pattern_item ")" | tuple_pattern
 * One item of a list of names, pushed on l; a name (`(b)` is b) also on flat, a nested tuple sets *nested. */
static void pattern_item(Parser *p, NodeList *l, NodeList *flat, bool *nested) {
    int d = paren_name_depth(p, p->pos); /* (a, (b)) and a, (b): b */
    if (at(p, TK_LPAREN) && !d) {
        *nested = true;
        list_push(p, l, tuple_pattern(p, flat, nested, peek(p)->loc));
        return;
    }
    Node *x = new_node(p, N_NAME, peek(p)->loc);
    if (d) {
        Token *id = paren_name(p, d);
        x->loc = id->loc;
        x->name = arena_strndup(p->a, id->text, id->len);
    } else {
        x->name = expect_ident(p, "a name", NULL);
    }
    list_push(p, l, x);
    list_push(p, flat, x);
}

static Node *tuple_pattern(Parser *p, NodeList *flat, bool *nested, Loc where) {
    Node *n = new_node(p, N_TUPLE, peek(p)->loc);
    expect(p, TK_LPAREN, "to open the names");
    NodeList l = {0};
    bool comma = false;
    do {
        if (l.n && at(p, TK_RPAREN)) break; /* (a,) and (a, b,) */
        pattern_item(p, &l, flat, nested);
    } while (!p->panic && (comma = accept(p, TK_COMMA)));
    expect(p, TK_RPAREN, "after the names");
    if (!p->panic && l.n < 2 && !comma) parse_error(p, where, "a tuple of names needs at least two, or a comma after one: (a,)");
    n->kids = l.v;
    n->nkids = l.n;
    return n;
}

/* n->kids: the names, depth first; n->lhs: the pattern when a tuple is nested in it (NULL: the names are the tuple's) */
static void tuple_names(Parser *p, Node *n) {
    NodeList flat = {0};
    bool nested = false;
    Node *pat = tuple_pattern(p, &flat, &nested, n->loc);
    n->kids = flat.v;
    n->nkids = flat.n;
    n->lhs = nested ? pat : NULL;
}

/* "(" targets ")" "=" ahead, the targets names and parenthesized targets: a tuple assignment, not an expression */
static bool at_tuple_assign(Parser *p) {
    int k = p->pos, depth = 0;
    if (p->t[k].kind != TK_LPAREN) return false;
    for (; k < p->n; k++) {
        TokKind t = p->t[k].kind;
        if (t == TK_LPAREN) depth++;
        else if (t == TK_RPAREN) {
            if (p->t[k - 1].kind == TK_LPAREN) return false; /* () */
            if (--depth == 0) return k + 1 < p->n && p->t[k + 1].kind == TK_ASSIGN;
        } else if (t != TK_IDENT && t != TK_COMMA) return false;
        else if (t == TK_IDENT && k + 1 < p->n && p->t[k + 1].kind != TK_COMMA && p->t[k + 1].kind != TK_RPAREN) return false;
    }
    return false;
}

/* "(" targets ")" "in" ahead, the targets names and parenthesized targets: a for loop's unpacking targets
 * (`for (a, b) in pairs`), not C's `for (init; cond; step)` */
static bool at_for_targets(Parser *p) {
    int depth = 0;
    for (int k = p->pos; k < p->n; k++) {
        TokKind t = p->t[k].kind;
        if (t == TK_LPAREN) depth++;
        else if (t == TK_RPAREN) {
            if (--depth == 0) return k + 1 < p->n && ident_is(&p->t[k + 1], "in");
        } else if (t != TK_IDENT && t != TK_COMMA) return false;
    }
    return false;
}

/* Python's targets without parentheses, `a, b`, `a, (b, c),`, `(a), b` or `(a, b), c` before "=" (for_in: before
 * a for loop's "in"), from token k: names, commas and parentheses up to there, a comma among them outside the
 * parentheses (`(a, b) =` is at_tuple_assign's, `(a) =` the parenthesized name's) */
static bool at_bare_targets(const Parser *p, int k, bool for_in) {
    int depth = 0;
    bool comma = false;
    if (k >= p->n || (p->t[k].kind != TK_IDENT && p->t[k].kind != TK_LPAREN)) return false;
    for (; k < p->n; k++) {
        TokKind t = p->t[k].kind;
        if (for_in ? ident_is(&p->t[k], "in") : t == TK_ASSIGN) return depth == 0 && comma;
        if (t == TK_LPAREN) depth++;
        else if (t == TK_RPAREN) {
            if (--depth < 0) return false;
        } else if (t == TK_COMMA) comma |= depth == 0;
        else if (t != TK_IDENT) return false;
    }
    return false;
}

/* The targets at_bare_targets found, as tuple_names makes them (a trailing comma: a tuple of one) */
static void bare_names(Parser *p, Node *n) {
    NodeList flat = {0}, l = {0};
    bool nested = false;
    Node *pat = new_node(p, N_TUPLE, peek(p)->loc);
    while (!p->panic && !at(p, TK_ASSIGN) && !ident_is(peek(p), "in")) { /* `in`: a for loop's targets end there */
        pattern_item(p, &l, &flat, &nested);
        if (!accept(p, TK_COMMA)) break;
    }
    pat->kids = l.v;
    pat->nkids = l.n;
    n->kids = flat.v;
    n->nkids = flat.n;
    n->lhs = nested ? pat : NULL;
}

/* A statement's value: an expression, or Python's tuple without parentheses, `a, b` (`return x, y`, `let s, c =
 * sin(x), cos(x);`); a trailing comma makes a tuple too, `t = x,` */
static Node *value_expr(Parser *p) {
    Node *e = expr(p);
    if (p->panic || !at(p, TK_COMMA)) return e;
    Node *t = new_node(p, N_TUPLE, e->loc);
    NodeList l = {0};
    list_push(p, &l, e);
    while (!p->panic && accept(p, TK_COMMA) && !at(p, TK_SEMI)) list_push(p, &l, expr(p));
    t->kids = l.v;
    t->nkids = l.n;
    return t;
}

/* IDENT ( "=" | "+=" | ... ) expr ";" after the name id: the assignment to it */
static Node *name_assign(Parser *p, const Token *id) {
    Token *op = next(p);
    Node *n = new_node(p, N_ASSIGN, id->loc);
    n->oploc = op->loc;
    n->op = op->kind;
    n->name = arena_strndup(p->a, id->text, id->len);
    n->rhs = op->kind == TK_ASSIGN ? value_expr(p) : expr(p);
    expect(p, TK_SEMI, "after assignment");
    return n;
}

/* `var`, `val`, `auto`: other languages' words for `let`, followed by a name and `=` or `:` */
static bool is_binding_word(const Token *t) {
    static const char *const words[] = {"var", "val", "auto"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (t->len == strlen(words[i]) && !memcmp(t->text, words[i], t->len)) return true;
    return false;
}

/* stmt = "let" name [ ":" type ] "=" expr ";"
 *      | "let" names "=" expr ";"
 *      | ( IDENT | pname ) ( "=" | "+=" | ... | ">>=" ) expr ";"
 *      | names "=" expr ";"
 *      | "for" name "in" ( "range" | "static_range" ) "(" expr [ "," expr [ "," expr ] ] { "," IDENT "=" expr } ")" block
 *      | "for" ( name | names ) "in" expr block              (over a tuple or list, unrolled)
 * name = IDENT | pname;  pname = "(" name ")"   (Python's parenthesized name: the name, paren_name_depth)
 *      | "while" expr block
 *      | ifstmt
 *      | "return" [ expr ] ";"
 *      | "break" ";" | "continue" ";"
 *      | expr ";" */
static Decl *decl(Parser *p);
/* `constexpr` as the type of a `const` (`const N: constexpr = 16;`, as a parameter's `const N: constexpr`): untyped */
static bool accept_constexpr(Parser *p) {
    if (!ident_is(peek(p), "constexpr") || peek2(p)->kind != TK_ASSIGN) return false;
    next(p);
    return true;
}

static Node *stmt(Parser *p) {
    Token *t = peek(p);
    Node *n;
    if (t->kind == TK_ELSE) { /* Python's while/for ... else, or an if's block closed early */
        const Token *prev = p->pos > 0 ? &p->t[p->pos - 1] : NULL;
        parse_error(p, t->loc, "'else' without an 'if': an 'else' follows the '}' of an 'if' block%s",
                    prev && prev->kind == TK_RBRACE ? " (a 'for' or 'while' has no 'else' here)" : "");
        return NULL;
    }
    if ((t->kind == TK_FN || t->kind == TK_KERNEL) && peek2(p)->kind == TK_IDENT) {
        /* a nested function (Python's def inside a def; one at the start of a line is the next declaration, block()): reported,
         * then parsed as a declaration and dropped, so the statements after it are read as statements */
        diag_error(p->d, t->loc, "a '%s' is declared at the top level of the file, not inside a kernel or a function: move it out "
                   "(it is called by name from anywhere in the file)", lang_tok_spelling[t->kind]);
        decl(p);
        return NULL;
    }
    if (t->kind == TK_LET && peek2(p)->kind == TK_LPAREN && !paren_name_depth(p, p->pos + 1) && !at_bare_targets(p, p->pos + 1, false)) {
        next(p);
        n = new_node(p, N_LET, t->loc);
        n->oploc = peek(p)->loc;
        tuple_names(p, n);
        expect(p, TK_ASSIGN, "after the names in 'let'");
        n->rhs = value_expr(p);
        expect(p, TK_SEMI, "after 'let' statement");
        return n;
    }
    if (t->kind == TK_LET && at_bare_targets(p, p->pos + 1, false)) {
        next(p); /* Python's `let a, b = ...`, `let (a), b = ...` */
        n = new_node(p, N_LET, t->loc);
        n->oploc = peek(p)->loc;
        bare_names(p, n);
        expect(p, TK_ASSIGN, "after the names in 'let'");
        n->rhs = value_expr(p);
        expect(p, TK_SEMI, "after 'let' statement");
        return n;
    }
    int pd = paren_name_depth(p, p->pos);
    if (pd && p->pos + 2 * pd + 1 < p->n && is_assign_op(p->t[p->pos + 2 * pd + 1].kind)) {
        return name_assign(p, paren_name(p, pd)); /* Python's `(a) = e`, `(a) += e`: a's */
    }
    bool tuple_assign = at_tuple_assign(p);
    if (tuple_assign || at_bare_targets(p, p->pos, false)) {
        n = new_node(p, N_ASSIGN, t->loc);
        if (tuple_assign) tuple_names(p, n);
        else bare_names(p, n);
        n->oploc = peek(p)->loc;
        n->op = TK_ASSIGN;
        expect(p, TK_ASSIGN, "after the names");
        n->rhs = value_expr(p);
        expect(p, TK_SEMI, "after assignment");
        return n;
    }
    if (t->kind == TK_IDENT && peek2(p)->kind == TK_IDENT && p->pos + 2 < p->n &&
        (p->t[p->pos + 2].kind == TK_ASSIGN || p->t[p->pos + 2].kind == TK_COLON) && is_binding_word(t)) {
        /* `var x = e;` of JavaScript, Swift, Go, C#: one error, then read as `let x = e;` */
        diag_error(p->d, t->loc, "'%.*s' is not a keyword here: a name is bound with 'let' (`let %.*s = ...;`) and any name "
                   "can be reassigned (`%.*s = ...;`)", (int)t->len, t->text, (int)peek2(p)->len, peek2(p)->text,
                   (int)peek2(p)->len, peek2(p)->text);
        p->d->nspelled++;
        t->kind = TK_LET;
    }
    if (t->kind == TK_IDENT && peek2(p)->kind == TK_COLON && p->pos + 2 < p->n &&
        (p->t[p->pos + 2].kind == TK_TYPE || p->t[p->pos + 2].kind == TK_IDENT || p->t[p->pos + 2].kind == TK_STAR)) {
        /* Python's annotated assignment, `NAME: tl.constexpr = e` (Triton's local constexpr) or `acc: tl.float32 = 0`:
         * one error, then read as `let NAME: T = e;`.  A `tl.constexpr` the lexer has already reported (it is read as
         * `constexpr`, the text after the module's '.') is that same mistake, reported once. */
        const Token *ty = &p->t[p->pos + 2];
        bool cx = ident_is(ty, "constexpr");
        if (!(cx && ty->text[-1] == '.')) {
            diag_error(p->d, t->loc, cx ? "a local compile-time constant is declared with 'let %.*s: constexpr = ...;' (or 'const %.*s "
                                          "= ...;'), not Python's annotated assignment"
                                        : "a new variable is declared with 'let %.*s: T = ...;', not Python's annotated assignment",
                       (int)t->len, t->text, (int)t->len, t->text);
            p->d->nspelled++;
        }
        next(p);
        next(p);
        n = new_node(p, N_LET, t->loc);
        n->name = arena_strndup(p->a, t->text, t->len);
        n->oploc = t->loc;
        if (cx && peek2(p)->kind == TK_ASSIGN) {
            next(p);
            n->ival = 1;
        } else {
            n->ty = type(p);
        }
        expect(p, TK_ASSIGN, "after the name and its type");
        n->rhs = value_expr(p);
        expect(p, TK_SEMI, "after the assignment");
        return n;
    }
    if (t->kind == TK_CONST && peek2(p)->kind == TK_IDENT) { /* a local compile-time constant, as a file-level one */
        next(p);
        n = new_node(p, N_LET, t->loc);
        n->ival = 1;
        n->name = expect_ident(p, "a name after 'const'", &n->oploc);
        if (accept(p, TK_COLON) && !accept_constexpr(p)) n->ty = type(p);
        expect(p, TK_ASSIGN, "after the name in 'const'");
        n->rhs = expr(p);
        expect(p, TK_SEMI, "after 'const' statement");
        return n;
    }
    if (accept(p, TK_LET)) {
        n = new_node(p, N_LET, t->loc);
        Token *m = peek(p);
        if (m->kind == TK_IDENT && m->len == 3 && !memcmp(m->text, "mut", 3) && peek2(p)->kind == TK_IDENT) {
            diag_error(p->d, m->loc, "'let mut': every name can be reassigned here; write 'let %.*s'", (int)peek2(p)->len,
                       peek2(p)->text);
            p->d->nspelled++;
            next(p);
        }
        int d = paren_name_depth(p, p->pos); /* Python's `(a) = e` is `a = e` */
        if (d) {
            Token *id = paren_name(p, d);
            n->name = arena_strndup(p->a, id->text, id->len);
            n->oploc = id->loc;
        } else {
            n->name = expect_ident(p, "a name after 'let'", &n->oploc);
        }
        if (accept(p, TK_COLON)) {
            Token *c = peek(p);
            if (c->kind == TK_IDENT && c->len == 9 && !memcmp(c->text, "constexpr", 9) && peek2(p)->kind == TK_ASSIGN) {
                next(p); /* Triton's `x: tl.constexpr = e`: a local `const` */
                n->ival = 1;
            } else {
                n->ty = type(p);
            }
        }
        expect(p, TK_ASSIGN, "after the name in 'let'");
        n->rhs = value_expr(p);
        expect(p, TK_SEMI, "after 'let' statement");
        return n;
    }
    if (t->kind == TK_IDENT && peek2(p)->kind == TK_LBRACK) { /* a tuple's element assigned, Triton's `t[i] = v` */
        int depth = 0, k = p->pos + 1;
        for (; k < p->n && p->t[k].kind != TK_EOF; k++) {
            TokKind kk = p->t[k].kind;
            if (kk == TK_LBRACK || kk == TK_LPAREN) depth++;
            else if ((kk == TK_RBRACK || kk == TK_RPAREN) && --depth == 0) break;
            else if (kk == TK_SEMI || kk == TK_LBRACE || kk == TK_RBRACE) break;
            else if (depth == 1 && (kk == TK_COLON || kk == TK_COMMA || kk == TK_NONE)) break; /* a slice: reported below */
        }
        if (k + 1 < p->n && p->t[k].kind == TK_RBRACK && is_assign_op(p->t[k + 1].kind)) {
            next(p);
            next(p);
            n = new_node(p, N_ASSIGN, t->loc);
            n->name = arena_strndup(p->a, t->text, t->len);
            n->cond = expr(p); /* the element's index */
            expect(p, TK_RBRACK, "after the index");
            Token *op = next(p);
            n->oploc = op->loc;
            n->op = op->kind;
            n->rhs = op->kind == TK_ASSIGN ? value_expr(p) : expr(p);
            expect(p, TK_SEMI, "after assignment");
            return n;
        }
    }
    if (t->kind == TK_IDENT && is_assign_op(peek2(p)->kind)) return name_assign(p, next(p));
    if (accept(p, TK_FOR)) {
        n = new_node(p, N_FOR, t->loc);
        bool bare = at_bare_targets(p, p->pos, true); /* `for a, b in`, `for (a), b in`, `for (a, b), c in` */
        if (at(p, TK_LPAREN) && !at_for_targets(p) && !bare) { /* C's for (init; cond; step): one error, then its body is parsed (and checked) */
            diag_error(p->d, t->loc, "a 'for' loop is written 'for i in range(start, end, step) { ... }' here, not as C's "
                       "'for (init; cond; step)'");
            for (int depth = 0; !at(p, TK_EOF);) {
                TokKind k = next(p)->kind;
                depth += (k == TK_LPAREN) - (k == TK_RPAREN);
                if (!depth || k == TK_LBRACE || k == TK_RBRACE) break;
            }
            if (at(p, TK_LBRACE)) n->then = block(p);
            return n;
        }
        if (at(p, TK_IDENT) && (peek2(p)->kind == TK_ASSIGN || peek2(p)->kind == TK_COLON)) { /* Go's for i := 0; ...; i++ {, Lua's for i = 1, n */
            diag_error(p->d, t->loc, "a 'for' loop is written 'for i in range(start, end, step) { ... }' here, not as 'for %.*s = ...'",
                       (int)peek(p)->len, peek(p)->text);
            while (!at(p, TK_EOF) && !at(p, TK_LBRACE) && !at(p, TK_RBRACE)) next(p);
            if (at(p, TK_LBRACE)) n->then = block(p);
            return n;
        }
        Node *unpack = NULL; /* `for (a, b) in t`, `for a, b in t`: a `let` of the targets from each element */
        int d = bare ? 0 : paren_name_depth(p, p->pos);
        if (d) { /* `for (a) in t`: Python's parenthesized name is the name, the loop's variable (over a range too) */
            Token *id = paren_name(p, d);
            n->name = arena_strndup(p->a, id->text, id->len);
            n->oploc = id->loc;
        } else if (bare || at(p, TK_LPAREN) || (at(p, TK_IDENT) && peek2(p)->kind == TK_COMMA)) {
            Token *first = peek(p);
            unpack = new_node(p, N_LET, first->loc);
            unpack->oploc = first->loc;
            if (at(p, TK_LPAREN) && !bare) tuple_names(p, unpack);
            else bare_names(p, unpack);
            /* the loop's own variable is the targets' text, which no name can be: messages quote it */
            const Token *last = &p->t[p->pos > 0 ? p->pos - 1 : 0];
            n->name = arena_strndup(p->a, first->text, (size_t)(last->text + last->len - first->text));
            n->oploc = first->loc;
        } else {
            n->name = expect_ident(p, "a loop variable after 'for'", &n->oploc);
        }
        if (at(p, TK_IDENT) && peek(p)->len == 2 && !memcmp(peek(p)->text, "in", 2)) next(p);
        else parse_error(p, peek(p)->loc, "expected 'in' after the loop variable, found %s", tok_desc(p, peek(p)));
        const char *rname = "range";
        if (!p->panic && !at(p, TK_RANGE) && !(ident_is(peek(p), "static_range") && peek2(p)->kind == TK_LPAREN)) {
            /* for v in t { ... }: over a tuple or list, unrolled at compile time */
            n->ival = 2;
            NodeList l = {0};
            list_push(p, &l, expr(p));
            n->kids = l.v;
            n->nkids = l.n;
            if (!p->panic) n->then = block(p);
            if (unpack && n->then && !p->panic) { /* the body starts with `let (a, b) = <element>;` */
                Node *elem = new_node(p, N_NAME, unpack->loc);
                elem->name = n->name;
                unpack->rhs = elem;
                Node **k = arena_alloc(p->a, sizeof(Node *) * (size_t)(n->then->nkids + 1));
                k[0] = unpack;
                if (n->then->nkids) memcpy(k + 1, n->then->kids, sizeof(Node *) * (size_t)n->then->nkids);
                n->then->kids = k;
                n->then->nkids++;
            }
            return n;
        }
        if (unpack && !p->panic)
            parse_error(p, unpack->loc, "'%s' gives one integer per iteration: unpacking '%s' is for a loop over a tuple or a "
                        "list (for %s in pairs)", ident_is(peek(p), "static_range") ? "static_range" : "range", n->name, n->name);
        if (at(p, TK_IDENT) && peek(p)->len == 12 && !memcmp(peek(p)->text, "static_range", 12)) {
            next(p);
            n->ival = 1; /* unrolled at compile time */
            rname = "static_range";
        } else {
            expect(p, TK_RANGE, "after 'in'");
        }
        expect(p, TK_LPAREN, rname[0] == 's' ? "after 'static_range'" : "after 'range'");
        NodeList l = {0}, kl = {0};
        const char **kw = NULL;
        Loc *kwloc = NULL;
        int kwcap = 0;
        if (!p->panic) {
            do { /* range(0, n, 1, num_stages=2): keywords after the bounds, as Triton's tl.range */
                if (at(p, TK_IDENT) && peek2(p)->kind == TK_ASSIGN) {
                    Token *id = next(p);
                    next(p);
                    list_push(p, &kl, expr(p));
                    if (kwcap < kl.cap) {
                        kw = arena_grow(p->a, kw, sizeof(char *) * (size_t)kwcap, sizeof(char *) * (size_t)kl.cap);
                        kwloc = arena_grow(p->a, kwloc, sizeof(Loc) * (size_t)kwcap, sizeof(Loc) * (size_t)kl.cap);
                        kwcap = kl.cap;
                    }
                    kw[kl.n - 1] = arena_strndup(p->a, id->text, id->len);
                    kwloc[kl.n - 1] = id->loc;
                } else {
                    Node *e = expr(p);
                    if (kl.n && !p->panic) parse_error(p, e->loc, "a bound of '%s' after its keyword arguments", rname);
                    list_push(p, &l, e);
                }
            } while (!p->panic && accept(p, TK_COMMA) && !at(p, TK_RPAREN));
        }
        if (!l.n && !p->panic) parse_error(p, peek(p)->loc, "'%s' expects 1 to 3 bounds before its keyword arguments", rname);
        if (kl.n) {
            n->rhs = new_node(p, N_CALL, kl.v[0]->loc);
            n->rhs->kids = kl.v;
            n->rhs->nkids = kl.n;
            n->rhs->kwnames = kw;
            n->rhs->kwlocs = kwloc;
        }
        if (l.n > 3) parse_error(p, l.v[3]->loc, "'%s' expects 1 to 3 arguments, got %d", rname, l.n);
        expect(p, TK_RPAREN, rname[0] == 's' ? "after 'static_range' arguments" : "after 'range' arguments");
        n->kids = l.v;
        n->nkids = l.n;
        if (p->panic) return n;
        n->then = block(p);
        return n;
    }
    if (t->kind == TK_IF) return ifstmt(p);
    if (accept(p, TK_WHILE)) {
        n = new_node(p, N_WHILE, t->loc);
        if (!enter(p)) {
            leave(p);
            return n;
        }
        n->cond = expr(p);
        if (!p->panic) n->then = block(p);
        leave(p);
        return n;
    }
    if (t->kind == TK_BREAK || t->kind == TK_CONTINUE) {
        next(p);
        n = new_node(p, t->kind == TK_BREAK ? N_BREAK : N_CONTINUE, t->loc);
        expect(p, TK_SEMI, t->kind == TK_BREAK ? "after 'break'" : "after 'continue'");
        return n;
    }
    if (ident_is(t, "pass") && peek2(p)->kind == TK_SEMI) { /* Python's `pass;`: nothing */
        next(p);
        next(p);
        return new_node(p, N_BLOCK, t->loc);
    }
    if (ident_is(t, "assert") && !is_assign_op(peek2(p)->kind) && peek2(p)->kind != TK_SEMI && peek2(p)->kind != TK_COMMA &&
        peek2(p)->kind != TK_LBRACK) {
        /* Python's `assert cond, "msg"`, which Triton compiles as device_assert(cond, msg) */
        next(p);
        Node *callee = new_node(p, N_NAME, t->loc);
        callee->name = "device_assert";
        Node *c = new_node(p, N_CALL, t->loc);
        c->oploc = t->loc;
        c->lhs = callee;
        c->name = callee->name;
        NodeList l = {0};
        Node *cond = expr(p);
        if (cond->kind == N_TUPLE && cond->nkids == 2 && !at(p, TK_COMMA)) {
            /* `assert(cond, "msg")`: Python asserts the tuple, always true; read as the two it meant */
            diag_error(p->d, cond->loc, "'assert(cond, msg)' asserts a tuple (always true in Python): write 'assert cond, msg;' "
                       "or 'device_assert(cond, msg)'");
            p->d->nspelled++;
            list_push(p, &l, cond->kids[0]);
            list_push(p, &l, cond->kids[1]);
        } else {
            list_push(p, &l, cond);
            if (accept(p, TK_COMMA)) list_push(p, &l, expr(p));
        }
        c->kids = l.v;
        c->nkids = l.n;
        n = new_node(p, N_EXPR, t->loc);
        n->rhs = c;
        expect(p, TK_SEMI, "after 'assert'");
        return n;
    }
    if (accept(p, TK_RETURN)) {
        n = new_node(p, N_RETURN, t->loc);
        if (!at(p, TK_SEMI)) n->rhs = value_expr(p);
        expect(p, TK_SEMI, "after 'return'");
        return n;
    }
    n = new_node(p, N_EXPR, t->loc);
    n->rhs = expr(p);
    if (!p->panic && is_assign_op(peek(p)->kind)) { /* `a[0] = 1`, `f(x) = y`: only names are assigned */
        Token *op = peek(p);
        if (n->rhs->kind == N_INDEX)
            parse_error(p, op->loc, "cannot assign to an element or slice: tensors are values here; build the new one "
                                    "(`where(arange(0, N) == i, v, a)`) or store to memory");
        else
            parse_error(p, op->loc, "cannot assign to this expression: only a variable or a tuple of variables `(a, b)` can be assigned");
        sync_stmt(p);
        return n;
    }
    expect(p, TK_SEMI, "after expression");
    return n;
}

/* ifstmt = "if" expr block [ "else" ( block | ifstmt ) ]   (Python's "elif" is an error, read as "else if") */
static Node *ifstmt(Parser *p) {
    Token *t = next(p);
    Node *n = new_node(p, N_IF, t->loc);
    if (!enter(p)) {
        leave(p);
        return n;
    }
    n->cond = expr(p);
    if (!p->panic) n->then = block(p);
    if (!p->panic && at(p, TK_IDENT) && peek(p)->len == 4 && !memcmp(peek(p)->text, "elif", 4)) {
        /* Python's elif: reported, then read as `else if` (so the rest is checked) */
        diag_error(p->d, peek(p)->loc, "'elif' is written 'else if' here");
        p->d->nspelled++;
        n->els = ifstmt(p);
    } else if (!p->panic && accept(p, TK_ELSE)) n->els = at(p, TK_IF) ? ifstmt(p) : block(p);
    leave(p);
    return n;
}

/* block = "{" { stmt } "}" */
/* Whether every path through statement s ends in a return, break or continue: the jump itself, or an `if` with an
 * `else` whose branches' last statements all do (what follows it never runs). */
static bool ends_in_jump(const Node *s) {
    if (!s) return false;
    switch (s->kind) {
    case N_RETURN: case N_BREAK: case N_CONTINUE: return true;
    case N_BLOCK: return s->nkids && ends_in_jump(s->kids[s->nkids - 1]);
    case N_IF: return s->els && ends_in_jump(s->then) && ends_in_jump(s->els);
    default: return false;
    }
}

static void *stmt_any(Parser *p) { return stmt(p); }

static Node *block(Parser *p) {
    Token *t = peek(p);
    Node *b = new_node(p, N_BLOCK, t->loc);
    if (at(p, TK_COLON)) { /* Python's `if c:` */
        parse_error(p, t->loc, "expected '{' to open a block, found ':' (a block is in braces here, not after ':' and an indent)");
        return b;
    }
    if (at(p, TK_ASSIGN)) { /* C's `if n = 0 {`, where the condition stops */
        parse_error(p, t->loc, "expected '{' to open a block, found '=' (a condition compares with '==')");
        return b;
    }
    if (!expect(p, TK_LBRACE, "to open a block")) return b;
    if (!enter(p)) {
        leave(p);
        return b;
    }
    NodeList l = {0};
    const Node *jump = NULL; /* this block's first return, break or continue: what follows it never runs */
    bool warned = false;
    while (!at(p, TK_RBRACE) && !at(p, TK_EOF)) {
        int before = p->pos;
        if (at_line_start_decl(p)) { /* the next declaration: this block lacks its '}', and the declaration is left for the file */
            if (p->unclosed_at != p->pos) /* the blocks around, as short of their '}', say nothing more there */
                parse_error(p, peek(p)->loc, "expected '}' to close the block opened at line %u before this '%s' (a '}' is missing above)",
                            t->loc.line, lang_tok_spelling[peek(p)->kind]);
            p->panic = true;
            p->unclosed_at = p->pos;
            break;
        }
        Node *s = floor_div_parse(p, stmt_any);
        if (s && jump && !warned) { /* once a block, at the first such statement */
            if (jump->kind == N_IF)
                diag_warning(p->d, s->loc, "this statement follows the 'if' at line %u, whose branches all end in a "
                             "'return', 'break' or 'continue', and never runs", jump->loc.line);
            else
                diag_warning(p->d, s->loc, "this statement follows the '%s' at line %u and never runs",
                             jump->kind == N_RETURN ? "return" : jump->kind == N_BREAK ? "break" : "continue", jump->loc.line);
            warned = true;
        }
        if (s && !jump && ends_in_jump(s)) jump = s;
        if (s) list_push(p, &l, s);
        if (p->panic) {
            /* a statement that still reached its ';' needs no skipping */
            if (p->pos > before && p->t[p->pos - 1].kind == TK_SEMI) p->panic = false;
            else sync_stmt(p);
            if (p->too_deep) break;
        }
        if (p->pos == before) next(p); /* always make progress */
        if (p->d->nerrors > 200) break;
    }
    if (at(p, TK_EOF)) {
        /* a file that ends mid-statement has one error there (expected ';' or ')'), not a second for each open block */
        const DiagMsg *last = p->d->n ? &p->d->msgs[p->d->n - 1] : NULL;
        Loc eof = peek(p)->loc;
        if (last && last->level == DIAG_ERROR && last->loc.file == eof.file && last->loc.line == eof.line && last->loc.col == eof.col)
            p->panic = true;
        else parse_error(p, eof, "expected '}' to close the block opened at line %u, found end of file", t->loc.line);
    } else if (at(p, TK_RBRACE)) next(p);
    leave(p);
    b->kids = l.v;
    b->nkids = l.n;
    return b;
}

/* param = [ "const" ] IDENT [ ":" type ] [ "=" expr ]
 * A kernel's run-time parameter may have a tuple type, `ptrs: (*f32, (i32, f32))` (Triton's tuple arguments), read
 * as an expression of types; a const parameter's or a fn's tuple type is an error at the name saying what to write
 * (a tuple of compile-time values is an untyped const parameter; a fn's parameter takes any tuple untyped), and
 * the group is skipped, the parameter then untyped. */
static void param(Parser *p, Param *pa, DeclKind kind) {
    pa->is_const = accept(p, TK_CONST);
    if ((at(p, TK_IDENT) || at(p, TK_TYPE)) && (peek2(p)->kind == TK_STAR || peek2(p)->kind == TK_POW || peek2(p)->kind == TK_IDENT)) {
        int k = p->pos + 1; /* C's float *x (a `**` after a name is lexed as the power operator) */
        int stars = 0;
        for (; k < p->n && (p->t[k].kind == TK_STAR || p->t[k].kind == TK_POW) && stars < 6; k++) stars += p->t[k].kind == TK_POW ? 2 : 1;
        if (k < p->n && p->t[k].kind == TK_IDENT && !ident_is(&p->t[k], "in")) {
            const Token *ty = peek(p), *nm = &p->t[k];
            parse_error(p, ty->loc, "a parameter is written 'NAME: TYPE' here: '%.*s: %.*s%.*s', not C's '%.*s %.*s%.*s'%s", (int)nm->len,
                        nm->text, stars, "********", ty->kind == TK_TYPE ? (int)ty->len : 1, ty->kind == TK_TYPE ? ty->text : "T",
                        (int)ty->len, ty->text, stars, "********", (int)nm->len, nm->text,
                        ty->kind == TK_TYPE ? "" : " (T a type such as f32)");
            return;
        }
    }
    pa->name = expect_ident(p, "a parameter name", &pa->loc);
    pa->ty = (TypeRef){.dt = DT_VOID};
    if (!p->panic && at(p, TK_COLON) && peek2(p)->kind == TK_LPAREN) {
        next(p);
        if (kind == D_FN)
            diag_error(p->d, pa->loc, "parameter '%s' has a tuple type: a fn's parameter takes a tuple untyped ('fn f(%s)')",
                       pa->name, pa->name);
        else if (pa->is_const)
            diag_error(p->d, pa->loc, "const parameter '%s' has a tuple type: a tuple of compile-time values is an untyped "
                       "const parameter ('const %s = (64, 32)')", pa->name, pa->name);
        else pa->tuple_ty = expr(p); /* a tuple of types, flattened at the launch (lang/kernel.c, tuple_param) */
        for (int depth = 0; !pa->tuple_ty && !at(p, TK_EOF) && !at(p, TK_LBRACE) && !at(p, TK_SEMI);) { /* the type's parentheses */
            TokKind k = next(p)->kind;
            depth += (k == TK_LPAREN) - (k == TK_RPAREN);
            if (!depth) break;
        }
        pa->tuple_type = !pa->tuple_ty;
    } else if (accept(p, TK_COLON)) {
        Token *t = peek(p);
        if ((ident_is(t, "constexpr") || ident_is(t, "tensor")) && peek2(p)->kind != TK_LPAREN) {
            /* Triton's annotations, `BLOCK: tl.constexpr` (a const parameter, untyped: its value's kind, as `let NAME:
             * constexpr` is a local const) and `x: tl.tensor` (untyped: the argument's type; a kernel's parameter then
             * needs a type, which is said where kernels' parameters are checked) */
            pa->is_const |= ident_is(next(p), "constexpr");
        } else {
            pa->ty = type(p);
            /* C's float* and an array (the kernel takes a pointer to its first element): one error each, then read as
             * the pointer, so the rest of the file is checked as if it were written '*f32' */
            if (at(p, TK_STAR) && !pa->ty.nptr) {
                diag_error(p->d, peek(p)->loc, "a pointer type is written before its pointee: '*%.*s', not '%.*s*'", (int)t->len,
                           t->text, (int)t->len, t->text);
                p->d->nspelled++;
                next(p);
                pa->ty.nptr = 1;
            } else if (at(p, TK_LBRACK) && !pa->ty.nptr) {
                diag_error(p->d, peek(p)->loc, "an array parameter is a pointer to its first element here: '%s: *%.*s'",
                           pa->name ? pa->name : "x", (int)t->len, t->text);
                if (peek2(p)->kind == TK_RBRACK) {
                    p->d->nspelled++;
                    next(p);
                    next(p);
                    pa->ty.nptr = 1;
                } else
                    p->panic = true, p->err_pos = p->pos; /* `x: f32[n]`: a size too; the parse resumes as after a syntax error */
            }
        }
    }
    if (accept(p, TK_ASSIGN)) pa->def = expr(p);
}

/* "(" [ param { "," param } ] ")"   (a name given twice is an error, of a kernel or a fn) */
static void params(Parser *p, Decl *d) {
    expect(p, TK_LPAREN, "after the name");
    int cap = 0;
    NameMap seen = {0}; /* the names so far */
    const Param *defaulted = NULL; /* a fn's first parameter with a default */
    if (!p->panic && !at(p, TK_RPAREN)) {
        do {
            if (d->nparams == cap) {
                int nc = cap ? cap * 2 : 8;
                d->params = arena_grow(p->a, d->params, sizeof(Param) * (size_t)cap, sizeof(Param) * (size_t)nc);
                cap = nc;
            }
            Param *pa = &d->params[d->nparams++];
            param(p, pa, d->kind);
            if (!p->panic && pa->name && namemap_get(&seen, pa->name)) /* a fn's was taken: the second hid the first */
                diag_error(p->d, pa->loc, "duplicate parameter '%s'", pa->name);
            else if (!p->panic && pa->name) namemap_put(p->a, &seen, pa->name, pa);
            /* Python's rule for a def (a kernel's const parameter without a default comes from -D instead) */
            if (!p->panic && d->kind == D_FN && pa->name && !pa->def && defaulted)
                diag_error(p->d, pa->loc, "parameter '%s' has no default but follows '%s', which has one (as in Python): give it a "
                           "default or put it before '%s'", pa->name, defaulted->name, defaulted->name);
            if (!p->panic && pa->def && !defaulted) defaulted = pa;
        } while (!p->panic && accept(p, TK_COMMA) && !at(p, TK_RPAREN)); /* a trailing comma, as Python allows */
    }
    expect(p, TK_RPAREN, "after parameters");
}

/* Python's and Rust's return annotation, `def f(x) -> tl.tensor:` and `fn f(x: f32) -> f32 {`: one error at the
 * '->', then the annotation is skipped up to the body, so the rest of the file is read as if it were not there. */
static void return_annotation(Parser *p, const Decl *d) {
    Token *t = peek(p);
    if (p->panic || !at(p, TK_MINUS) || peek2(p)->kind != TK_GT || peek2(p)->text != t->text + 1) return;
    diag_error(p->d, t->loc, "a %s has no return type to write: %s (remove the '->' and its type)", d->kind == D_KERNEL ? "kernel" : "fn",
               d->kind == D_KERNEL ? "a kernel returns nothing, it stores its results" : "its value has the type of what 'return' gives");
    p->d->nspelled++;
    next(p);
    next(p);
    while (!at(p, TK_LBRACE) && !at(p, TK_SEMI) && !at(p, TK_RBRACE) && !at(p, TK_COLON) && !at(p, TK_EOF)) next(p);
}

/* import    = "import" STRING ";"
 * constdecl = "const" IDENT [ ":" type ] "=" expr ";"
 * fn        = "fn" IDENT "(" [ param { "," param } ] ")" block
 * kernel    = { attr } "kernel" IDENT "(" [ param { "," param } ] ")" block
 * attr      = "@" IDENT "(" [ arg { "," arg } ] ")"
 * arg       = [ IDENT "=" ] expr */
static Decl *decl(Parser *p) {
    Decl *d = ARENA_NEW(p->a, Decl);
    Token *t = peek(p);
    d->loc = t->loc;
    if (accept(p, TK_IMPORT)) {
        d->kind = D_IMPORT;
        Token *s = peek(p);
        d->loc = s->loc;
        if (accept(p, TK_STRING)) {
            d->name = s->str;
            if (d->name && !*d->name) parse_error(p, s->loc, "import names no file: the string is empty"), d->name = NULL;
        } else parse_error(p, s->loc, "expected a file name string after 'import', found %s", tok_desc(p, s));
        expect(p, TK_SEMI, "after import");
        return d;
    }
    if (accept(p, TK_CONST)) {
        d->kind = D_CONST;
        d->name = expect_ident(p, "a name after 'const'", &d->loc);
        d->ty = (TypeRef){.dt = DT_VOID};
        if (accept(p, TK_COLON) && !accept_constexpr(p)) d->ty = type(p);
        expect(p, TK_ASSIGN, "after the constant's name");
        d->value = expr(p);
        expect(p, TK_SEMI, "after constant");
        return d;
    }
    if (at(p, TK_IDENT) && (peek2(p)->kind == TK_ASSIGN || (peek2(p)->kind == TK_COLON && p->pos + 2 < p->n &&
                                                              (p->t[p->pos + 2].kind == TK_IDENT || p->t[p->pos + 2].kind == TK_TYPE)))) {
        /* Triton's module-level constants, `NAME: tl.constexpr = v` and `NAME = tl.constexpr(v)` (Python's `NAME = v`):
         * one error naming the form here, then read as `const NAME = v;` (a `constexpr(v)` is v; a type other than
         * constexpr is kept: `N: i32 = 4` is `const N: i32 = 4`).  The lexer leaves a `tl.constexpr` here to this error;
         * a line without its ';' ends at the line's end. */
        const Token *ty = peek2(p)->kind == TK_COLON ? &p->t[p->pos + 2] : NULL;
        bool cx = ty && ident_is(ty, "constexpr");
        diag_error(p->d, t->loc, "a file-level constant is declared with 'const': 'const %.*s = ...;' (Triton's '%.*s: "
                   "tl.constexpr = ...' and '%.*s = tl.constexpr(...)')", (int)t->len, t->text, (int)t->len, t->text, (int)t->len, t->text);
        p->d->nspelled++;
        d->kind = D_CONST;
        d->name = expect_ident(p, "a name", &d->loc);
        d->ty = (TypeRef){.dt = DT_VOID};
        if (accept(p, TK_COLON)) {
            if (cx) next(p);
            else d->ty = type(p);
        }
        expect(p, TK_ASSIGN, "after the constant's name");
        d->value = expr(p);
        if (!at(p, TK_SEMI) && p->pos > 0 && peek(p)->loc.line > p->t[p->pos - 1].loc.line) return d;
        expect(p, TK_SEMI, "after constant");
        return d;
    }
    bool def = at(p, TK_IDENT) && t->len == 3 && !memcmp(t->text, "def", 3) && peek2(p)->kind == TK_IDENT;
    if (def) /* Python's def: reported, then read as `fn` (so the rest is checked) */
        diag_error(p->d, t->loc, "'def' is written 'kernel' for a kernel (Triton's @triton.jit function) and 'fn' for a function it "
                   "calls: 'kernel NAME(params) { ... }'");
    if (accept(p, TK_FN) || (def && next(p))) {
        d->kind = D_FN;
        d->name = expect_ident(p, "a function name after 'fn'", &d->loc);
        params(p, d);
        return_annotation(p, d);
        if (!p->panic) d->body = block(p);
        return d;
    }
    int acap = 0;
    while (at(p, TK_AT)) {
        next(p);
        if (d->nattrs == acap) {
            int nc = acap ? acap * 2 : 4;
            d->attrs = arena_grow(p->a, d->attrs, sizeof(Attr) * (size_t)acap, sizeof(Attr) * (size_t)nc);
            acap = nc;
        }
        Attr *at_ = &d->attrs[d->nattrs++];
        at_->name = expect_ident(p, "an attribute name after '@'", &at_->loc);
        expect(p, TK_LPAREN, "after the attribute name");
        int cap = 0;
        while (!p->panic && !at(p, TK_RPAREN)) {
            if (at_->nargs == cap) {
                int nc = cap ? cap * 2 : 4;
                at_->args = arena_grow(p->a, at_->args, sizeof(Node *) * (size_t)cap, sizeof(Node *) * (size_t)nc);
                at_->argnames = arena_grow(p->a, at_->argnames, sizeof(char *) * (size_t)cap, sizeof(char *) * (size_t)nc);
                cap = nc;
            }
            const char *kw = NULL;
            if (at(p, TK_IDENT) && peek2(p)->kind == TK_ASSIGN) {
                kw = arena_strndup(p->a, peek(p)->text, peek(p)->len);
                next(p);
                next(p);
            }
            at_->argnames[at_->nargs] = kw;
            at_->args[at_->nargs++] = expr(p);
            if (!accept(p, TK_COMMA)) break;
        }
        at_->arg = at_->nargs ? at_->args[0] : NULL;
        expect(p, TK_RPAREN, "after the attribute arguments");
        if (p->panic) return d;
    }
    if (accept(p, TK_KERNEL)) {
        d->kind = D_KERNEL;
        d->name = expect_ident(p, "a kernel name after 'kernel'", &d->loc);
        params(p, d);
        return_annotation(p, d);
        if (!p->panic) d->body = block(p);
        return d;
    }
    if (d->nattrs) /* `@num_warps(4) fn f(...)`: attributes are a kernel's */
        parse_error(p, peek(p)->loc, "expected 'kernel' after '@%s(...)', found %s: attributes go before a kernel", d->attrs[0].name,
                    tok_desc(p, peek(p)));
    else if (at(p, TK_RBRACE))
        parse_error(p, peek(p)->loc, "unmatched '}': no block is open here (one '}' too many, or a '{' missing before it)");
    else parse_error(p, peek(p)->loc, "expected 'kernel', 'fn', 'const' or 'import', found %s", tok_desc(p, peek(p)));
    return NULL;
}

/* Skip to the next token that can start a top-level declaration. */
static void sync_decl(Parser *p) {
    int depth = 0;
    while (!at(p, TK_EOF)) {
        TokKind k = peek(p)->kind;
        if (depth == 0 && (k == TK_KERNEL || k == TK_FN || k == TK_IMPORT || k == TK_AT ||
                           (k == TK_CONST && peek2(p)->kind == TK_IDENT)))
            break;
        if (k == TK_LBRACE || k == TK_LPAREN) depth++;
        if ((k == TK_RBRACE || k == TK_RPAREN) && depth > 0) depth--;
        next(p);
    }
    p->panic = false;
}

/* file = { import | constdecl | fn | kernel } */
static void *decl_any(Parser *p) { return decl(p); }

FileAst *parse_file(Arena *a, const SrcFile *src, Diag *d) {
    LexSlashes sl;
    SlashLog log = {0};
    Parser p = {.a = a, .d = d, .src = src, .sl = &sl, .log = &log};
    p.t = lex_file(a, src, d, &p.n, &sl);
    FileAst *f = ARENA_NEW(a, FileAst);
    f->src = src;
    int cap = 0;
    while (!at(&p, TK_EOF)) {
        int before = p.pos;
        p.depth = 0;
        Decl *dc = floor_div_parse(&p, decl_any);
        if (p.too_deep) { /* reported once; where the nest ends is unknown, so the rest of the declaration is skipped unreported */
            p.panic = true;
            p.too_deep = false;
        }
        if (dc && !p.panic && parse_decl_height_ok(&p, dc)) {
            if (f->ndecls == cap) {
                int nc = cap ? cap * 2 : 16;
                f->decls = arena_grow(a, f->decls, sizeof(Decl *) * (size_t)cap, sizeof(Decl *) * (size_t)nc);
                cap = nc;
            }
            f->decls[f->ndecls++] = dc;
        }
        if (p.panic) {
            if (p.pos == before) next(&p);
            sync_decl(&p);
        }
        if (d->nerrors > 200) break;
    }
    return f;
}

/* define = [ "-" ] ( INT | FLOAT | "true" | "false" | SCALAR_TYPE ) | "*" type | STRING | IDENT   (IDENT: the string of its name) */
Node *parse_define_value(Arena *a, const SrcFile *src, Diag *d) {
    Parser p = {.a = a, .d = d, .src = src};
    p.t = lex_file(a, src, d, &p.n, NULL);
    Token *t = peek(&p);
    bool neg = accept(&p, TK_MINUS);
    Node *n = NULL;
    bool inf = at(&p, TK_IDENT) && peek(&p)->len == 3 && !memcmp(peek(&p)->text, "inf", 3),
         nan = at(&p, TK_IDENT) && peek(&p)->len == 3 && !memcmp(peek(&p)->text, "nan", 3);
    if (at(&p, TK_INT) || at(&p, TK_FLOAT) || at(&p, TK_TRUE) || at(&p, TK_FALSE) || (!neg && (at(&p, TK_TYPE) || at(&p, TK_NONE))))
        n = primary(&p); /* None: a const parameter passed as None (Triton's constexpr None) */
    else if (!neg && at(&p, TK_STAR)) { /* a pointer type, `*i32`: a parameter `x: T` that is a number or a pointer */
        n = new_node(&p, N_DTYPE, t->loc);
        n->ty = type(&p);
        if (p.panic || n->ty.name || n->ty.call) n = NULL;
    }
    else if (inf || nan) { /* inf, -inf, nan: Python's float('inf') as a define (a string "inf" is quoted) */
        n = new_node(&p, N_FLOAT, next(&p)->loc);
        n->fval = inf ? INFINITY : NAN; /* NAN is positive, as Python's float('nan'); x86's 0.0 / 0.0 is not */
    } else if (!neg && (at(&p, TK_STRING) || at(&p, TK_IDENT))) { /* a string: "leaky relu", or relu unquoted */
        Token *s = next(&p);
        n = new_node(&p, N_STR, s->loc);
        n->name = s->kind == TK_STRING ? s->str : arena_strndup(a, s->text, s->len);
    }
    if (!n || !at(&p, TK_EOF)) {
        parse_error(&p, t->loc, "invalid value '%.*s': expected a number, true, false, None, a type name (or a pointer type, *f16) or a string",
                    (int)(src->len > 40 ? 40 : src->len), src->text);
        return NULL;
    }
    if (neg) {
        Node *u = new_node(&p, N_UNARY, t->loc);
        u->op = TK_MINUS;
        u->lhs = n;
        n = u;
    }
    return n;
}
