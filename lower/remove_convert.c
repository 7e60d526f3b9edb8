/* remove_convert.c - drop layout conversions that move nothing.
 *
 * Algorithm:
 *   1. A convert_layout whose operand already has the result type is
 *      replaced by its operand.
 *   2. A convert_layout of a convert_layout converts the original value
 *      directly (the inner one dies if unused; canonicalize's DCE removes it).
 *   3. A convert_layout whose operand is a splat or constant is replaced by
 *      the same splat or constant made directly in the target layout.
 * A replaced result is recorded, not looked for: every use comes after the
 * convert in the walk's order, so each op's operands take the replacements
 * when the walk reaches it (one walk, however many converts go). */
#include "passes.h"

#include <stdlib.h>

typedef struct Ctx {
    Module *m;
    Func *f;
    int changed;
    ValueId *repl; /* by ValueId: what a removed convert's uses take (0: none) */
} Ctx;

static bool visit(Inst *i, void *ud) {
    Ctx *c = ud;
    for (int k = 0; k < i->nops; k++)
        while (c->repl[i->ops[k]]) i->ops[k] = c->repl[i->ops[k]];
    if (i->op != OP_CONVERT_LAYOUT) return true;
    Func *f = c->f;
    ValueId src = i->ops[0];
    const Type *rt = tir_vtype(f, i->res[0]);
    Inst *d = tir_val(f, src)->def;
    if (d && d->op == OP_CONVERT_LAYOUT) {
        i->ops[0] = src = d->ops[0];
        c->changed++;
    }
    if (tir_vtype(f, src) == rt) {
        c->repl[i->res[0]] = src;
        c->changed++;
        return true;
    }
    if (d && (d->op == OP_CONST || d->op == OP_SPLAT) && !(d->op == OP_SPLAT && tir_vtype(f, d->ops[0])->rank)) {
        Inst *n = tir_inst_new(f, d->op, d->ops, d->nops, &rt, 1, d->loc);
        n->a = d->a;
        tir_insert_before(i, n);
        c->repl[i->res[0]] = n->res[0];
        c->changed++;
    }
    return true;
}

bool lower_remove_convert(Module *m, Diag *d) {
    (void)d;
    for (int k = 0; k < m->nfuncs; k++) {
        Ctx c = {m, m->funcs[k], 0, calloc(m->funcs[k]->nvalues, sizeof(ValueId))};
        if (!c.repl) out_of_memory();
        tir_walk(c.f->body, visit, &c);
        free(c.repl);
    }
    return true;
}
