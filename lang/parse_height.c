/* parse_height.c - the height of the trees under a declaration, bounded.  The parser builds chains in a loop
 * (`a + b + c ...`, `x[0][0]...`, `x as f32 as f32 ...`) without recursion, but the generator's and the other
 * passes' tree walks recurse, so each declaration's tree is measured after it is parsed, with an explicit stack,
 * and one deeper than PARSE_MAX_HEIGHT is an error (parse.c's header comment says more). */
#include "parser.h"

/* The height of the trees under a declaration, measured with an explicit stack: false (and an error at
 * the first node past PARSE_MAX_HEIGHT, down the left first, so a chain is reported at its start) when deeper. */
typedef struct HeightItem {
    const Node *n;
    int h;
} HeightItem;

typedef struct HeightStack {
    Arena *a;
    HeightItem *v;
    int n, cap;
} HeightStack;

static void height_push(HeightStack *st, const Node *x, int h) {
    if (!x) return;
    if (st->n == st->cap) {
        int nc = st->cap ? st->cap * 2 : 64;
        st->v = arena_grow(st->a, st->v, sizeof(HeightItem) * (size_t)st->cap, sizeof(HeightItem) * (size_t)nc);
        st->cap = nc;
    }
    st->v[st->n++] = (HeightItem){x, h};
}

bool parse_decl_height_ok(Parser *p, const Decl *dc) {
    HeightStack st = {.a = p->a};
    for (int i = dc->nattrs - 1; i >= 0; i--)
        for (int j = dc->attrs[i].nargs - 1; j >= 0; j--) height_push(&st, dc->attrs[i].args[j], 1);
    for (int i = dc->nparams - 1; i >= 0; i--)
        height_push(&st, dc->params[i].def, 1), height_push(&st, dc->params[i].ty.call, 1), height_push(&st, dc->params[i].tuple_ty, 1);
    height_push(&st, dc->ty.call, 1);
    height_push(&st, dc->value, 1);
    height_push(&st, dc->body, 1);
    while (st.n > 0) {
        HeightItem it = st.v[--st.n];
        const Node *x = it.n;
        if (it.h > PARSE_MAX_HEIGHT) {
            diag_error(p->d, x->loc, "expression or statement nested too deeply (more than %d levels)", PARSE_MAX_HEIGHT);
            return false;
        }
        /* pushed last to first: the left operand is taken next */
        for (int i = x->nkids - 1; i >= 0; i--) height_push(&st, x->kids[i], it.h + 1);
        height_push(&st, x->ty.call, it.h + 1);
        height_push(&st, x->els, it.h + 1);
        height_push(&st, x->then, it.h + 1);
        height_push(&st, x->cond, it.h + 1);
        height_push(&st, x->rhs, it.h + 1);
        height_push(&st, x->lhs, it.h + 1);
    }
    return true;
}
