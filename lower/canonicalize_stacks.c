/* canonicalize_stacks.c - step 7 of the canonicalize pass: a batched dot's stacks (what it does is
 * described with the other steps at the top of canonicalize.c). */
#include "canonicalize.h"
#include "passes.h"

#include <stdlib.h>
#include <string.h>

/* ---- step 7: stacks ---- */

typedef struct StackCtx {
    Func *f;
    ValueId v;   /* users_of: the value whose users are collected */
    Inst **users;
    int nusers, cap;
    bool only_unstack; /* every user of v is an unstack */
    bool changed;
} StackCtx;

static bool collect_users(Inst *i, void *ud) {
    StackCtx *sx = ud;
    for (int k = 0; k < i->nops; k++) {
        if (i->ops[k] != sx->v) continue;
        if (i->op != OP_UNSTACK) sx->only_unstack = false;
        if (sx->nusers == sx->cap) {
            sx->cap = sx->cap ? 2 * sx->cap : 4;
            sx->users = realloc(sx->users, sizeof *sx->users * (size_t)sx->cap);
            if (!sx->users) out_of_memory();
        }
        sx->users[sx->nusers++] = i;
        break;
    }
    return true;
}

static void grow_append(Arena *a, ValueId **arr, int *n, ValueId v) {
    *arr = arena_grow(a, *arr, sizeof(ValueId) * (size_t)*n, sizeof(ValueId) * (size_t)(*n + 1));
    (*arr)[(*n)++] = v;
}

/* unstack x into slabs of type t, a new op before pos */
static Inst *new_unstack(Func *f, ValueId x, const Type *t, Inst *pos) {
    int n = tir_vtype(f, x)->shape[0];
    const Type **ts = malloc(sizeof *ts * (size_t)n);
    if (!ts) out_of_memory();
    for (int k = 0; k < n; k++) ts[k] = t;
    Inst *u = tir_inst_new(f, OP_UNSTACK, &x, 1, ts, n, pos->loc);
    free(ts);
    tir_insert_before(pos, u);
    return u;
}

/* A `for` whose carried value k is a stack that the body only unstacks and that the body yields as a
 * stack of slabs of the same type: carry the slabs instead (new carried values, their init unstacked
 * before the loop, the result stacked after it); the old carried value is left dead for step 6. */
static bool split_carries(Inst *loop, void *ud) {
    StackCtx *sx = ud;
    Func *f = sx->f;
    if (loop->op != OP_FOR || loop->nregions != 1) return true;
    Block *body = loop->regions[0];
    Inst *y = body->last;
    if (!y || y->op != OP_YIELD || loop->nops - 3 != loop->nres || body->nargs != loop->nres + 1 || y->nops != loop->nres)
        return true;
    Arena *a = f->module->arena;
    for (int k = 0, n0 = loop->nres; k < n0; k++) {
        Inst *st = tir_val(f, y->ops[k])->def;
        if (!st || st->op != OP_STACK || st->parent != body) continue;
        const Type *slab = tir_vtype(f, st->ops[0]);
        bool ok = true;
        for (int j = 1; j < st->nops; j++) ok &= tir_vtype(f, st->ops[j]) == slab;
        sx->v = body->args[k + 1], sx->nusers = 0, sx->only_unstack = true;
        tir_walk(body, collect_users, sx);
        ok &= sx->only_unstack && sx->nusers > 0;
        for (int u = 0; ok && u < sx->nusers; u++) ok = tir_vtype(f, sx->users[u]->res[0]) == slab;
        if (!ok) continue;
        int n = st->nops, first = loop->nres;
        Inst *init = new_unstack(f, loop->ops[3 + k], slab, loop);
        for (int j = 0; j < n; j++) {
            grow_append(a, &loop->ops, &loop->nops, init->res[j]);
            ValueId arg = tir_block_add_arg(f, body, slab);
            grow_append(a, &loop->res, &loop->nres, tir_new_value(f, slab, loop, loop->nres));
            grow_append(a, &y->ops, &y->nops, st->ops[j]);
            for (int u = 0; u < sx->nusers; u++) tir_replace_uses(f, sx->users[u]->res[j], arg);
        }
        const Type *whole = tir_vtype(f, loop->res[k]);
        Inst *after = tir_inst_new(f, OP_STACK, loop->res + first, n, &whole, 1, loop->loc);
        tir_insert_after(loop, after);
        tir_replace_uses(f, loop->res[k], after->res[0]);
        sx->changed = true;
    }
    return true;
}

/* unstack of a stack of slabs of its own result type: the slabs; of a constant: constant slabs */
static bool fold_unstack(Inst *i, void *ud) {
    StackCtx *sx = ud;
    Func *f = sx->f;
    if (i->op != OP_UNSTACK) return true;
    Inst *d = tir_val(f, i->ops[0])->def;
    if (!d || (d->op != OP_STACK && d->op != OP_CONST)) return true;
    const Type *slab = tir_vtype(f, i->res[0]);
    for (int k = 0; k < i->nres; k++) {
        ValueId to = d->op == OP_STACK ? d->ops[k] : 0;
        if (d->op == OP_STACK && tir_vtype(f, to) != slab) return true;
        if (d->op == OP_CONST) {
            Inst *c = tir_inst_new(f, OP_CONST, NULL, 0, &slab, 1, d->loc);
            c->a = d->a;
            tir_insert_before(i, c);
            to = c->res[0];
        }
        tir_replace_uses(f, i->res[k], to);
    }
    sx->changed = true; /* i is left unused: step 5 deletes it */
    return true;
}

/* An unstack of x: one already between x's definition and pos in x's block, else a new one right
 * after the definition (at the top of the block for a block argument), so it dominates pos. */
static Inst *unstack_of(Func *f, ValueId x, Inst *pos) {
    Value *v = tir_val(f, x);
    Block *b = v->def ? v->def->parent : v->block;
    Inst *stop = pos; /* pos, or the op of b whose regions hold it */
    while (stop && stop->parent != b) stop = stop->parent ? stop->parent->parent : NULL;
    for (Inst *j = v->def ? v->def->next : b->first; stop && j && j != stop; j = j->next)
        if (j->op == OP_UNSTACK && j->ops[0] == x) return j;
    const Type *t = tir_vtype(f, x);
    const Type *slab = tir_with_shape(f->module, t, t->rank - 1, t->shape + 1);
    int n = t->shape[0];
    const Type **ts = malloc(sizeof *ts * (size_t)n);
    if (!ts) out_of_memory();
    for (int k = 0; k < n; k++) ts[k] = slab;
    Inst *u = tir_inst_new(f, OP_UNSTACK, &x, 1, ts, n, pos->loc);
    free(ts);
    if (v->def) tir_insert_after(v->def, u);
    else if (b->first) tir_insert_before(b->first, u);
    else tir_block_append(b, u);
    return u;
}

/* Whether every user of x other than `self` is an unstack (a use by a dead op counts until step 5). */
static bool only_unstacked(StackCtx *sx, ValueId x) {
    sx->v = x, sx->nusers = 0, sx->only_unstack = true;
    tir_walk(sx->f->body, collect_users, sx);
    return sx->only_unstack;
}

/* Slab k of an operand of the op being pushed: a scalar stays, a tensor is slab k of its unstack. */
static ValueId slab_operand(Func *f, ValueId o, Inst *u, int k) { return tir_vtype(f, o)->rank ? u->res[k] : o; }

/* Push unstack i of x into x's definition d: each slab computed by d's op on its operands' slabs
 * (new unstacks of them, which later sweeps push further), right after d; i's results are
 * replaced and i dies.  A load of [B, M, K] pointers becomes B loads of [M, K] ones, each a
 * plain dot operand that software pipelining and tensor maps take.  Loads and float element-wise
 * ops are pushed only where the unstacks are all that read x (else x would be loaded or computed
 * twice) or x holds one element per slab; integer, pointer and mask element-wise ops (addresses:
 * one op an element, cheaper than a round trip), shape ops, splats and aranges always. */
static bool push_unstack(StackCtx *sx, Inst *i) {
    Func *f = sx->f;
    ValueId x = i->ops[0];
    Inst *d = tir_val(f, x)->def;
    if (!d || d->nregions || d->nres != 1) return false;
    const Type *xt = tir_vtype(f, x), *slab = tir_vtype(f, i->res[0]);
    int n = i->nres;
    bool ew = (tir_op_info[d->op].flags & OPF_ELEMENTWISE) && d->op != OP_INLINE_ASM && !tir_is_hint(d->op);
    bool load = d->op == OP_LOAD && !(d->a.cache & TIR_CACHE_ORDERED);
    /* integer, pointer and mask arithmetic (addresses) is cheaper computed per slab than moved */
    bool cheap = ew && !dtype_is_float(xt->dt);
    if ((ew || load) && !cheap && tir_type_numel(xt) != n && !only_unstacked(sx, x)) return false;
    ValueId *to = malloc(sizeof *to * (size_t)n);
    if (!to) out_of_memory();
    Inst *at = d; /* the slabs go right after d, in order */
    bool ok = true;
#define PLACE(inst) (tir_insert_after(at, (inst)), at = (inst))
    switch (d->op) {
    case OP_SPLAT:
    case OP_ARANGE:
        for (int k = 0; k < n; k++) {
            if (d->op == OP_SPLAT && !slab->rank) { /* slabs of a splat vector: the scalar */
                to[k] = d->ops[0];
                continue;
            }
            Inst *c = d->op == OP_SPLAT ? tir_inst_new(f, OP_SPLAT, d->ops, 1, &slab, 1, d->loc)
                                        : tir_inst_new(f, OP_CONST, NULL, 0, &slab, 1, d->loc);
            if (d->op == OP_ARANGE) c->a.ival = d->a.ival + k; /* a rank-1 arange: scalar slabs */
            PLACE(c);
            to[k] = c->res[0];
        }
        break;
    case OP_EXPAND_DIMS:
    case OP_BROADCAST: {
        ValueId y = d->ops[0];
        const Type *yt = tir_vtype(f, y);
        if (d->op == OP_EXPAND_DIMS && d->a.ival == 0) { /* [1, ...] of y: y itself */
            ok = yt == slab;
            for (int k = 0; ok && k < n; k++) to[k] = y;
            break;
        }
        if (!yt->rank || yt->rank != xt->rank - (d->op == OP_EXPAND_DIMS)) {
            ok = false;
            break;
        }
        Inst *u = unstack_of(f, y, d);
        for (int k = 0; k < n; k++) {
            ValueId s = u->res[yt->shape[0] == 1 ? 0 : k];
            const Type *st = tir_vtype(f, s);
            if (st == slab) {
                to[k] = s;
                continue;
            }
            Op op = !st->rank ? OP_SPLAT : d->op;
            Inst *c = tir_inst_new(f, op, &s, 1, &slab, 1, d->loc);
            if (op == OP_EXPAND_DIMS) c->a.ival = d->a.ival - 1;
            PLACE(c);
            to[k] = c->res[0];
        }
        break;
    }
    default: {
        if (!ew && !load) {
            ok = false;
            break;
        }
        Inst *us[8];
        if (d->nops > 8) {
            ok = false;
            break;
        }
        for (int o = 0; o < d->nops; o++) us[o] = tir_vtype(f, d->ops[o])->rank ? unstack_of(f, d->ops[o], d) : NULL;
        for (int k = 0; k < n; k++) {
            ValueId ops[8];
            for (int o = 0; o < d->nops; o++) ops[o] = us[o] ? slab_operand(f, d->ops[o], us[o], k) : d->ops[o];
            Inst *c = tir_inst_new(f, d->op, ops, d->nops, &slab, 1, d->loc);
            c->a = d->a;
            PLACE(c);
            to[k] = c->res[0];
        }
        break;
    }
    }
#undef PLACE
    if (ok)
        for (int k = 0; k < n; k++) tir_replace_uses(f, i->res[k], to[k]);
    free(to);
    return ok;
}

static bool list_unstacks(Inst *i, void *ud) {
    StackCtx *sx = ud;
    if (i->op != OP_UNSTACK) return true;
    if (sx->nusers == sx->cap) {
        sx->cap = sx->cap ? 2 * sx->cap : 4;
        sx->users = realloc(sx->users, sizeof *sx->users * (size_t)sx->cap);
        if (!sx->users) out_of_memory();
    }
    sx->users[sx->nusers++] = i;
    return true;
}

/* A store of a stack: one store of each slab through its slab of the pointers (and mask), so the
 * batched dot's results go to memory from their own registers instead of through shared memory. */
static bool split_store(Inst *i, void *ud) {
    StackCtx *sx = ud;
    Func *f = sx->f;
    if (i->op != OP_STORE || i->nops < 2 || i->nops > 3) return true;
    Inst *st = tir_val(f, i->ops[1])->def;
    if (!st || st->op != OP_STACK) return true;
    for (int o = 0; o < i->nops; o++)
        if (o != 1 && tir_vtype(f, i->ops[o])->rank != tir_vtype(f, i->ops[1])->rank) return true; /* a scalar pointer: not a tile */
    Inst *up = unstack_of(f, i->ops[0], i), *um = i->nops == 3 ? unstack_of(f, i->ops[2], i) : NULL;
    for (int k = 0; k < st->nops; k++) {
        ValueId ops[3] = {up->res[k], st->ops[k], um ? um->res[k] : 0};
        if (tir_vtype(f, ops[0])->rank != tir_vtype(f, ops[1])->rank) return true;
        Inst *c = tir_inst_new(f, OP_STORE, ops, i->nops, NULL, 0, i->loc);
        c->a = i->a;
        tir_insert_before(i, c);
    }
    tir_inst_remove(i);
    sx->changed = true;
    return true;
}

static bool no_stack_op(Inst *i, void *ud) {
    (void)ud;
    return i->op != OP_STACK && i->op != OP_UNSTACK; /* false (stop) at the first */
}

bool canon_stacks(Func *f) {
    /* every rewrite below starts from a stack or an unstack: without one (every function without a batched
     * dot) one walk instead of four */
    if (tir_walk(f->body, no_stack_op, NULL)) return false;
    StackCtx sx = {.f = f};
    tir_walk(f->body, split_carries, &sx);
    tir_walk(f->body, fold_unstack, &sx);
    tir_walk(f->body, split_store, &sx);
    /* push unstacks into their operands' definitions, one level a sweep, dead code gone between */
    for (int sweep = 0; sweep < 64; sweep++) {
        bool any = false;
        sx.nusers = 0;
        tir_walk(f->body, list_unstacks, &sx);
        int nu = sx.nusers;
        if (!nu) break; /* no unstack (every function without a batched dot): nothing to push */
        Inst **us = malloc(sizeof *us * (size_t)nu);
        if (!us) out_of_memory();
        memcpy(us, sx.users, sizeof *us * (size_t)nu);
        int *uses = tir_use_counts(f);
        for (int k = 0; k < nu; k++) {
            bool live = false;
            for (int r = 0; r < us[k]->nres; r++) live |= uses[us[k]->res[r]] > 0;
            if (live && push_unstack(&sx, us[k])) any = true;
        }
        free(uses);
        free(us);
        if (!any) break;
        sx.changed = true;
        canon_dce(f);
    }
    free(sx.users);
    return sx.changed;
}
