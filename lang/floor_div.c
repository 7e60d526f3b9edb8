/* floor_div.c - Triton's floor division pasted in: `n // 4` would make the rest of the line a comment.
 *
 * A `//` right after an operand whose rest of the line could be code is a LexSlash (lex.c), a comment until the
 * parser reads it as the operator `/`, the file then lexed again from it (lex_again), and reported where it is read:
 *   1. where an operator may follow an operand (binary's `* / %` level) and a slash stands before the next token,
 *      the slash is marked reached, and read as the operator at once when the comment would not end the expression:
 *      inside brackets (`(pid` then `// group` then `)`: black's wrap, which was `(pid)`; `(` then `n // 2` then `)`)
 *      or when the next line goes on with an operator (`let h = n // 2` then `+ 1;`, which was `n + 1`);
 *   2. floor_div_parse parses a statement (a declaration at the top) with that; when the parse fails at or after a
 *      reached slash left a comment, the last such one before the error is read as the operator and the statement
 *      parsed again, its messages taken back (`let q = n // 4;`, `if n // 2 > 0 {`, `(pid //` then `m)`);
 *   3. when it still fails, the slashes it read as the operator are comments again, for good, and it is parsed
 *      once more: its errors are those the comments give.
 * So a comment stays one wherever the statement parses with it and no bracket or operator says otherwise (`if a > b
 * // why` then `{`), and prose (two words in a row, `'`, `?`) never gets here (lex.c, slash_may_be_code).  The lexing again
 * is bounded for a file (LexSlashes.budget; each reading as the operator keeps what its taking back needs): past
 * it, a slash that 1. would read as the operator is an error saying so. */
#include "parser.h"

/* The index of the first slash before token k or a later one. */
static int slash_from(Parser *p, int k) {
    int lo = 0, hi = p->sl ? p->sl->n : 0;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (p->sl->v[mid].tok < k) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}
static LexSlash *slash_before(Parser *p, int k) {
    int i = slash_from(p, k);
    return p->sl && i < p->sl->n && p->sl->v[i].tok == k ? &p->sl->v[i] : NULL;
}

/* Read the slashes from sl->v[i] on as their states say: the tokens from there lexed again. */
static void slash_relex(Parser *p, int i) { p->t = lex_again(p->a, p->t, p->sl, i, &p->n); }

/* Read s as the operator, logged for floor_div_parse; false when the budget would not cover that and its taking back. */
static bool slash_flip(Parser *p, LexSlash *s) {
    if (p->sl->budget / 2 < p->src->len - s->off) return false;
    s->state = SLASH_OPERATOR;
    SlashLog *g = p->log;
    if (g->n == g->cap) {
        int nc = g->cap ? g->cap * 2 : 8;
        g->off = arena_grow(p->a, g->off, sizeof(uint32_t) * (size_t)g->cap, sizeof(uint32_t) * (size_t)nc);
        g->cap = nc;
    }
    g->off[g->n++] = s->off;
    slash_relex(p, (int)(s - p->sl->v));
    return true;
}

/* 1. (above) */
void floor_div_point(Parser *p, bool op_next) {
    LexSlash *s = slash_before(p, p->pos);
    while (s && s + 1 < p->sl->v + p->sl->n && s->state != SLASH_OPEN && s[1].tok == p->pos) s++; /* two comments: the first open one */
    if (!s || s->state != SLASH_OPEN) return;
    s->reached = true;
    if ((p->nest > 0 || op_next) && !slash_flip(p, s)) /* never a silent comment where it would not end the expression */
        diag_error(p->d, s->loc, "'//' after an operand: this file has too many such to decide whether each is a comment or "
                   "Triton's floor division; write '/' to divide, or '/* ... */' for a comment");
}

void floor_div_report(Parser *p, const Token *t) {
    diag_error(p->d, t->loc, "'//' starts a comment; for integer division write '/' (it truncates toward zero, as Triton's '//' on integers does)");
    p->d->nspelled++;
    const LexSlash *s = slash_before(p, (int)(t - p->t));
    for (int i = 0; s && i < s->nmsgs; i++) { /* the lexer's errors in the rest of its line, a comment until now */
        const DiagMsg *m = &s->msgs[i];
        if (m->level == DIAG_ERROR) diag_error(p->d, m->loc, "%s", m->msg);
        else if (m->level == DIAG_WARNING) diag_warning(p->d, m->loc, "%s", m->msg);
        else diag_note(p->d, m->loc, "%s", m->msg);
    }
}

/* 2. and 3. (above).  A slash read as the operator that leaves the statement failing before it points the next try at
 * an earlier slash: FLOOR_DIV_BACK_TRIES such steps back, no more (each parses the whole statement again, so a
 * kernel of n lines `if a > b // why` then `{`, its last '}' missing, parsed itself n times: 0.3 s at 10 KiB). */
enum { FLOOR_DIV_BACK_TRIES = 4 };
void *floor_div_parse(Parser *p, void *(*parse)(Parser *)) {
    if (!p->sl) return parse(p);
    Parser start = *p;
    int dn = p->d->n, de = p->d->nerrors, ds = p->d->nspelled, log0 = p->log->n, last_tok = -1, back = 0;
    for (;;) {
        p->err_pos = -1;
        void *r = parse(p);
        if (!p->panic) {
            p->log->n = log0; /* its slashes are decided: a failing statement around it takes back only its own */
            return r;
        }
        LexSlash *s = NULL;
        for (int i = slash_from(p, start.pos + 1); i < p->sl->n && p->sl->v[i].tok <= p->err_pos; i++)
            if (p->sl->v[i].reached && p->sl->v[i].state == SLASH_OPEN) s = &p->sl->v[i];
        if (s && last_tok >= 0 && s->tok < last_tok && ++back > FLOOR_DIV_BACK_TRIES) s = NULL;
        if (s) last_tok = s->tok;
        bool again = s && slash_flip(p, s);
        if (!again && p->log->n > log0) {
            int first = p->sl->n;
            for (int i = log0; i < p->log->n; i++)
                for (int j = 0; j < p->sl->n; j++)
                    if (p->sl->v[j].off == p->log->off[i]) {
                        p->sl->v[j].state = SLASH_COMMENT;
                        if (j < first) first = j;
                    }
            p->log->n = log0;
            if (first < p->sl->n) slash_relex(p, first);
            again = true;
        }
        if (!again) return r;
        diag_truncate(p->d, dn, de);
        p->d->nspelled = ds;
        Token *t = p->t;
        int n = p->n;
        *p = start;
        p->t = t;
        p->n = n;
    }
}

