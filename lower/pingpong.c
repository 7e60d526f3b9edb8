/* pingpong.c - for a warp-specialized kernel with two or more computing warpgroups that asks for
 * it (@pingpong), the warpgroups take turns issuing the first dot of every loop iteration, so
 * that one warpgroup's tensor-core work runs while the other does the rest of its iteration
 * (FlashAttention-3's "ping-pong": the softmax of one overlaps the other's Q·K^T).
 *
 * Algorithm.  A loop of the kernel (outside ws_producer, at any depth) whose body holds two or
 * more dots at its top level, the first of them a warpgroup (wgmma) dot that waits for itself
 * (no groups left pending), becomes
 *       turn_wait; %s = dot ... {pending=1}; turn_pass; %s' = wgmma_wait %s {pending=0}
 * with the dot's uses moved to %s': the dot is issued in turn, and the turn is passed on as soon
 * as it is issued, before waiting for its result.  Nothing runs between turn_wait and turn_pass
 * but the issue, so no warpgroup can wait for another at a barrier while holding the turn.  A
 * turn_start after ws_producer hands the first warpgroup its first turn.  Every computing
 * warpgroup runs the same loops the same number of times (their bounds are the program's), so
 * the turns go round in order: warpgroup g waits at named barrier 2 + g for its own threads and
 * the previous warpgroup's arrivals, and arrives at 2 + (g + 1) % G.  The pass runs last (after
 * barrier): no barrier can be inserted between a turn_wait and its dot afterwards.
 * Kernels without a producer warpgroup, or with one computing warpgroup, are left as they are
 * (@pingpong is a hint, like @warp_specialize off sm_90a). */
#include "layout.h"
#include "passes.h"

static Inst *new_plain(Func *f, Op op, Loc loc) { return tir_inst_new(f, op, NULL, 0, NULL, 0, loc); }

/* The loop's first dot when it qualifies, else NULL. */
static Inst *first_dot(Func *f, Block *body) {
    Inst *first = NULL;
    int dots = 0;
    for (Inst *i = body->first; i; i = i->next)
        if (i->op == OP_DOT && dots++ == 0) first = i;
    if (dots < 2 || first->a.ival != 0) return NULL;
    const Type *rt = tir_vtype(f, first->res[0]);
    return layout_is_warpgroup_mma(rt->layout) ? first : NULL;
}

static int take_turns(Func *f, Block *b) {
    int n = 0;
    for (Inst *i = b->first; i; i = i->next) {
        if (i->op == OP_WS_PRODUCER) continue;
        for (int r = 0; r < i->nregions; r++) n += take_turns(f, i->regions[r]);
        if (i->op != OP_FOR && i->op != OP_WHILE) continue;
        Inst *d = first_dot(f, i->regions[0]);
        if (!d) continue;
        tir_insert_before(d, new_plain(f, OP_TURN_WAIT, d->loc));
        d->a.ival = 1;
        ValueId r = d->res[0];
        const Type *rt = tir_vtype(f, r);
        Inst *w = tir_inst_new(f, OP_WGMMA_WAIT, &r, 1, &rt, 1, d->loc);
        tir_replace_uses(f, r, w->res[0]);
        w->ops[0] = r;
        tir_insert_after(d, w);
        tir_insert_after(d, new_plain(f, OP_TURN_PASS, d->loc));
        n++;
    }
    return n;
}

bool lower_pingpong(Module *m, Diag *d) {
    (void)d;
    for (int k = 0; k < m->nfuncs; k++) {
        Func *f = m->funcs[k];
        if (!f->pingpong || !f->producer_warps || f->num_warps < 8 || f->num_warps % 4) continue;
        Inst *ws = NULL;
        for (Inst *i = f->body->first; i && !ws; i = i->next)
            if (i->op == OP_WS_PRODUCER) ws = i;
        if (!ws || !take_turns(f, f->body)) continue;
        tir_insert_after(ws, new_plain(f, OP_TURN_START, ws->loc));
    }
    return true;
}
