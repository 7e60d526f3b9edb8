/* remove_convert.c - drop layout conversions that move nothing.
 *
 * Algorithm:
 *   1. A convert_layout whose operand already has the result type is
 *      replaced by its operand.
 *   2. A convert_layout of a convert_layout converts the original value
 *      directly (the inner one dies if unused; canonicalize's DCE removes it).
 *   3. A convert_layout whose operand is a splat or constant is replaced by
 *      the same splat or constant made directly in the target layout. */
#include "passes.h"

typedef struct Ctx {
    Module *m;
    Func *f;
    int changed;
} Ctx;

static bool visit(Inst *i, void *ud) {
    Ctx *c = ud;
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
        tir_replace_uses(f, i->res[0], src);
        c->changed++;
        return true;
    }
    if (d && (d->op == OP_CONST || d->op == OP_SPLAT) && !(d->op == OP_SPLAT && tir_vtype(f, d->ops[0])->rank)) {
        Inst *n = tir_inst_new(f, d->op, d->ops, d->nops, &rt, 1, d->loc);
        n->a = d->a;
        tir_insert_before(i, n);
        tir_replace_uses(f, i->res[0], n->res[0]);
        c->changed++;
    }
    return true;
}

bool lower_remove_convert(Module *m, Diag *d) {
    (void)d;
    for (int k = 0; k < m->nfuncs; k++) {
        Ctx c = {m, m->funcs[k], 0};
        tir_walk(c.f->body, visit, &c);
    }
    return true;
}
