/* warp_specialize.c - on sm_90a, for a kernel that asks for it (@warp_specialize), hand the
 * tensor-map loads of its pipelined loop to a producer warpgroup of their own: 4 warps launched
 * after the num_warps that compute, one lane of which issues every copy while the others run
 * the loop's math without the address, expect and issue code, and with no block-wide barrier
 * per iteration (FlashAttention-3's and CUTLASS's producer/consumer split).
 *
 * Algorithm, for the first loop of the kernel's body that the tma pass converted (mbar_wait
 * on its full mbarriers F, one mbar_expect and its tma_loads per iteration, no cp.async left),
 * with num_warps a multiple of 4:
 *   1. Release point.  The stage an iteration reads may be overwritten once every wgmma that
 *      reads it has completed.  The body leaves p wgmma groups outstanding at its end (the
 *      pending count of its last dot or wgmma_wait).  p = 0: the stage read in this iteration
 *      is released at the end of the body; 0 < p <= the body's dots: the previous iteration's
 *      (from the second iteration on); else the kernel is left as it is.
 *   2. Slices.  Every value the copies use (coordinates, stage, run predicate; the prologue's
 *      and the body's), and the loop's bounds, must be computable from the kernel's arguments
 *      by scalar ops: pure ops with scalar results, scalar loads, `if`s of them; in the body
 *      they may use the induction variable and carried values whose next values are scalar
 *      slices too.  Anything else (a tensor, a store) leaves the kernel as it is.
 *   3. Rewrite.  The local_allocs of the staged buffers and of F move to the top of the kernel,
 *      followed by: barrier, mbar_init F, mbar_init E (a new buffer of "empty" mbarriers, one
 *      per stage, completed by one arrival of each computing thread), barrier, and
 *      ws_producer { the slices cloned, the prologue's expects and copies, then a `for` over
 *      the loop's bounds carrying the slices' carried values and E's parity q, from 1 (a fresh
 *      mbarrier's preceding phase counts as completed):  mbar_wait E[stage] q when the copy
 *      runs, the expect and copies, q flipped when the stage wraps }.
 *      The computing warps lose the copies and the barrier after their wait, arrive on E at
 *      the release point, and invalidate E next to F.  Every copy the producer issues is
 *      waited for by the loop, and the producer waits only before a copy it issues, so E and
 *      F are idle once the loop is done.
 * llvm_codegen.c launches num_warps + 4 warps, branches the producer warpgroup into the region
 * (setmaxnreg moves registers to the computing warpgroups when there are two or more), and
 * makes the computing warps' barriers named barriers of their own thread count. */
#include "passes.h"
#include "../support/target.h"

#include <stdlib.h>
#include <string.h>

enum { PRODUCER_WARPS = 4, MAX_ISSUE = 16, MAX_CARRIED = 16 };

typedef struct WS {
    Module *m;
    Func *f;
    Inst *loop;
    ValueId *map; /* original value -> the producer's, by ValueId below nmap */
    uint32_t nmap;
    Inst *pfor;       /* the producer's loop */
    Inst *pyield;     /* its yield, filled last */
    int carried[MAX_CARRIED]; /* the consumer loop's carried index of each producer carried value after q */
    int ncarried;
    bool fail;
} WS;

static bool is_scalar(const Type *t) { return t && t->rank == 0; }

static bool scalar_results(Func *f, Inst *i) {
    for (int r = 0; r < i->nres; r++)
        if (!is_scalar(tir_vtype(f, i->res[r]))) return false;
    return true;
}

static bool block_clonable(Func *f, Block *b) {
    for (Inst *i = b->first; i; i = i->next) {
        if (i->op == OP_YIELD) continue;
        if (!scalar_results(f, i)) return false;
        if (i->op == OP_IF) {
            for (int r = 0; r < i->nregions; r++)
                if (!block_clonable(f, i->regions[r])) return false;
        } else if (i->nregions || !((tir_op_info[i->op].flags & OPF_PURE) || i->op == OP_LOAD)) {
            return false;
        }
    }
    return true;
}

static ValueId pval(WS *w, ValueId v);

/* The clone of i (its operands already mapped by the caller's order) before pos, or at the
 * end of block `into` when pos is NULL; regions are cloned recursively. */
static Inst *clone_inst(WS *w, Inst *i, Inst *pos, Block *into);

static void clone_block(WS *w, Block *from, Block *to) {
    for (Inst *i = from->first; i && !w->fail; i = i->next) clone_inst(w, i, NULL, to);
}

static ValueId mapped(WS *w, ValueId v) {
    if (v >= w->nmap) return v;
    return w->map[v] ? w->map[v] : pval(w, v);
}

static Inst *clone_inst(WS *w, Inst *i, Inst *pos, Block *into) {
    Func *f = w->f;
    const Type *rt[16];
    if (i->nres > 16) {
        w->fail = true;
        return NULL;
    }
    for (int r = 0; r < i->nres; r++) rt[r] = tir_vtype(f, i->res[r]);
    ValueId ops[32];
    if (i->nops > 32) {
        w->fail = true;
        return NULL;
    }
    for (int k = 0; k < i->nops; k++) ops[k] = w->map[i->ops[k]] ? w->map[i->ops[k]] : i->ops[k];
    Inst *c = tir_inst_new(f, i->op, ops, i->nops, rt, i->nres, i->loc);
    c->a = i->a;
    for (int r = 0; r < i->nres; r++) w->map[i->res[r]] = c->res[r];
    if (pos) tir_insert_before(pos, c);
    else tir_block_append(into, c);
    for (int r = 0; r < i->nregions; r++) {
        Block *nb = tir_block_new(f, c);
        for (int k = 0; k < i->regions[r]->nargs; k++)
            w->map[i->regions[r]->args[k]] = tir_block_add_arg(f, nb, tir_vtype(f, i->regions[r]->args[k]));
        tir_inst_add_region(f, c, nb);
        clone_block(w, i->regions[r], nb);
    }
    return c;
}

/* Map every value a region reads from outside it first, so that their clones come before
 * the clone of the region's op. */
static void map_free_values(WS *w, Block *b) {
    for (Inst *i = b->first; i && !w->fail; i = i->next) {
        for (int k = 0; k < i->nops && !w->fail; k++) {
            ValueId v = i->ops[k];
            if (v >= w->nmap || w->map[v]) continue;
            Value *val = tir_val(w->f, v);
            Block *home = val->def ? val->def->parent : val->block;
            bool inside = false;
            for (Block *p = home; p; p = p->parent ? p->parent->parent : NULL)
                if (p == b) inside = true;
            if (!inside) pval(w, v);
        }
        for (int r = 0; r < i->nregions; r++) map_free_values(w, i->regions[r]);
    }
}

/* A producer carried value for the consumer loop's carried value k (body argument k + 1). */
static ValueId carry(WS *w, int k) {
    Func *f = w->f;
    Inst *loop = w->loop;
    if (w->ncarried == MAX_CARRIED) {
        w->fail = true;
        return 0;
    }
    ValueId init = mapped(w, loop->ops[3 + k]);
    if (w->fail) return 0;
    Block *pb = w->pfor->regions[0];
    const Type *t = tir_vtype(f, loop->regions[0]->args[1 + k]);
    ValueId a = tir_block_add_arg(f, pb, t);
    w->pfor->ops = arena_grow(w->m->arena, w->pfor->ops, sizeof(ValueId) * (size_t)w->pfor->nops,
                              sizeof(ValueId) * (size_t)(w->pfor->nops + 1));
    w->pfor->ops[w->pfor->nops++] = init;
    w->pfor->res = arena_grow(w->m->arena, w->pfor->res, sizeof(ValueId) * (size_t)w->pfor->nres,
                              sizeof(ValueId) * (size_t)(w->pfor->nres + 1));
    w->pfor->res[w->pfor->nres] = tir_new_value(f, t, w->pfor, w->pfor->nres);
    w->pfor->nres++;
    w->carried[w->ncarried++] = k;
    return a;
}

/* The producer's value for v: kernel arguments and the hoisted allocations are shared;
 * scalar ops before the loop are cloned before the producer's loop, those of the body into
 * its body; the induction variable and carried values map to the producer loop's. */
static ValueId pval(WS *w, ValueId v) {
    if (w->fail || !v) return 0;
    if (v >= w->nmap) return v;
    if (w->map[v]) return w->map[v];
    Func *f = w->f;
    Block *body = w->loop->regions[0];
    Value val = *tir_val(f, v);
    if (!val.def) {
        if (val.block == f->body) return w->map[v] = v; /* a kernel argument */
        if (val.block != body) {
            w->fail = true;
            return 0;
        }
        if (val.index == 0) return w->map[v] = w->pfor->regions[0]->args[0];
        ValueId a = carry(w, val.index - 1);
        return w->fail ? 0 : (w->map[v] = a);
    }
    Inst *d = val.def;
    if (d->parent != f->body && d->parent != body) {
        w->fail = true;
        return 0;
    }
    if (!scalar_results(f, d) || (d->nregions && d->op != OP_IF) ||
        (!d->nregions && !((tir_op_info[d->op].flags & OPF_PURE) || d->op == OP_LOAD))) {
        w->fail = true;
        return 0;
    }
    for (int r = 0; r < d->nregions; r++)
        if (!block_clonable(f, d->regions[r])) {
            w->fail = true;
            return 0;
        }
    for (int k = 0; k < d->nops; k++) pval(w, d->ops[k]);
    for (int r = 0; r < d->nregions; r++) map_free_values(w, d->regions[r]);
    if (w->fail) return 0;
    if (d->parent == f->body) clone_inst(w, d, w->pfor, NULL);
    else clone_inst(w, d, w->pyield, NULL);
    return w->fail ? 0 : w->map[v];
}

/* Step 1: the stage released at the end of the body: 0 the one read, 1 the previous, -1 none. */
static int release_lag(Block *body) {
    int ndots = 0, pending = 0;
    for (Inst *i = body->first; i; i = i->next) {
        if (i->op == OP_DOT) ndots++, pending = (int)i->a.ival;
        else if (i->op == OP_WGMMA_WAIT) pending = (int)i->a.ival;
        else if (i->nregions) {
            for (int r = 0; r < i->nregions; r++)
                for (Inst *n = i->regions[r]->first; n; n = n->next)
                    if (n->op == OP_DOT || n->op == OP_WGMMA_WAIT) return -1; /* dots under control flow */
        }
    }
    if (!pending) return 0;
    return pending <= ndots ? 1 : -1;
}

static ValueId cint(Func *f, Inst *pos, const Type *t, int64_t v) {
    Inst *i = tir_inst_new(f, OP_CONST, NULL, 0, &t, 1, pos->loc);
    i->a.ival = v;
    tir_insert_before(pos, i);
    return i->res[0];
}

static ValueId emit(Func *f, Inst *pos, Op op, const ValueId *ops, int n, const Type *t, int64_t ival2) {
    Inst *i = tir_inst_new(f, op, ops, n, t ? &t : NULL, t ? 1 : 0, pos->loc);
    i->a.ival2 = ival2;
    tir_insert_before(pos, i);
    return t ? i->res[0] : 0;
}

static void move_to(Inst *i, Inst *pos) {
    tir_inst_remove(i);
    tir_insert_before(pos, i);
}

static void specialize_loop(Module *m, Func *f, Inst *loop) {
    Block *body = loop->regions[0];
    Inst *wait = NULL, *expect = NULL, *issue[MAX_ISSUE], *pro[MAX_ISSUE];
    int nissue = 0, npro = 0;
    for (Inst *i = body->first; i; i = i->next) {
        if (i->op == OP_ASYNC_COPY || i->op == OP_ASYNC_WAIT || i->op == OP_ASYNC_COMMIT) return; /* mixed: cp.async stays */
        if (i->op == OP_MBAR_WAIT && !wait) wait = i;
        else if (i->op == OP_MBAR_EXPECT) {
            if (expect) return; /* one group an iteration */
            expect = i;
        }
        if ((i->op == OP_MBAR_EXPECT || i->op == OP_TMA_LOAD) && nissue < MAX_ISSUE) issue[nissue++] = i;
    }
    if (!wait || !expect || nissue == MAX_ISSUE || wait->nops != 3) return;
    ValueId F = wait->ops[0];
    for (int k = 0; k < nissue; k++)
        if (issue[k]->op == OP_TMA_LOAD ? issue[k]->ops[2] != F : issue[k]->ops[0] != F) return;
    Inst *init = NULL, *inval = NULL;
    for (Inst *i = f->body->first; i; i = i->next) {
        if (i == loop) continue;
        if (i->op == OP_MBAR_INIT && i->ops[0] == F) init = i;
        else if (i->op == OP_MBAR_INVAL && i->ops[0] == F) inval = i;
        else if (((i->op == OP_MBAR_EXPECT && i->ops[0] == F) || (i->op == OP_TMA_LOAD && i->ops[2] == F)) &&
                 npro < MAX_ISSUE)
            pro[npro++] = i;
    }
    Inst *Fdef = tir_val(f, F)->def;
    if (!init || npro == MAX_ISSUE || !Fdef || Fdef->op != OP_LOCAL_ALLOC || Fdef->parent != f->body) return;
    /* the staged buffers: allocated in the kernel's body */
    Inst *bufs[MAX_ISSUE];
    int nbufs = 0;
    for (int k = 0; k < nissue; k++) {
        if (issue[k]->op != OP_TMA_LOAD) continue;
        Inst *d = tir_val(f, issue[k]->ops[0])->def;
        if (!d || d->op != OP_LOCAL_ALLOC || d->parent != f->body) return;
        bool seen = false;
        for (int j = 0; j < nbufs; j++) seen |= bufs[j] == d;
        if (!seen) bufs[nbufs++] = d;
    }
    int lag = release_lag(body);
    if (lag < 0) return;

    /* step 2: the producer, built beside the kernel until it is known to work */
    WS w = {.m = m, .f = f, .loop = loop, .nmap = f->nvalues};
    w.map = calloc(w.nmap, sizeof *w.map);
    if (!w.map) out_of_memory();
    w.map[F] = F;
    for (int j = 0; j < nbufs; j++) w.map[bufs[j]->res[0]] = bufs[j]->res[0];
    const Type *i1 = tir_scalar(m, DT_I1), *i32 = tir_scalar(m, DT_I32);
    Inst *region_op = tir_inst_new(f, OP_WS_PRODUCER, NULL, 0, NULL, 0, loop->loc);
    region_op->a.ival = PRODUCER_WARPS;
    Block *rb = tir_block_new(f, region_op);
    tir_inst_add_region(f, region_op, rb);
    Inst *ry = tir_inst_new(f, OP_YIELD, NULL, 0, NULL, 0, loop->loc);
    tir_block_append(rb, ry);
    w.pfor = tir_inst_new(f, OP_FOR, (ValueId[]){0, 0, 0}, 3, NULL, 0, loop->loc);
    tir_insert_before(ry, w.pfor);
    Block *pb = tir_block_new(f, w.pfor);
    tir_inst_add_region(f, w.pfor, pb);
    tir_block_add_arg(f, pb, tir_vtype(f, body->args[0]));
    w.pyield = tir_inst_new(f, OP_YIELD, NULL, 0, NULL, 0, loop->loc);
    tir_block_append(pb, w.pyield);
    /* E's parity: the first carried value */
    ValueId one = cint(f, w.pfor, i32, 1);
    w.pfor->ops = arena_grow(m->arena, w.pfor->ops, sizeof(ValueId) * 3, sizeof(ValueId) * 4);
    w.pfor->ops[w.pfor->nops++] = one;
    w.pfor->res = ARENA_ARRAY(m->arena, ValueId, 1);
    w.pfor->res[0] = tir_new_value(f, i32, w.pfor, 0);
    w.pfor->nres = 1;
    ValueId q = tir_block_add_arg(f, pb, i32);
    for (int k = 0; k < 3; k++) w.pfor->ops[k] = pval(&w, loop->ops[k]);
    /* the prologue's issues, in order */
    /* (each group's operands first, then its expect and copies side by side: one elected issue) */
    for (int k0 = 0, k1; k0 < npro && !w.fail; k0 = k1) {
        for (k1 = k0 + 1; k1 < npro && pro[k1]->op == OP_TMA_LOAD; k1++) {}
        for (int k = k0; k < k1; k++)
            for (int j = 0; j < pro[k]->nops; j++) pval(&w, pro[k]->ops[j]);
        for (int k = k0; k < k1 && !w.fail; k++) clone_inst(&w, pro[k], w.pfor, NULL);
    }
    /* the body's: wait for the stage to be empty, then expect and copy */
    ValueId E = 0;
    const Type *bart = tir_vtype(f, F);
    Inst *Edef = tir_inst_new(f, OP_LOCAL_ALLOC, NULL, 0, &bart, 1, Fdef->loc);
    E = Edef->res[0];
    ValueId wstage = pval(&w, expect->ops[1]), wrun = pval(&w, expect->ops[2]);
    for (int k = 0; k < nissue; k++)
        for (int j = 0; j < issue[k]->nops; j++) pval(&w, issue[k]->ops[j]);
    if (!w.fail) {
        Inst *ew = tir_inst_new(f, OP_MBAR_WAIT, (ValueId[]){E, wstage, q, wrun}, 4, NULL, 0, expect->loc);
        tir_insert_before(w.pyield, ew);
    }
    for (int k = 0; k < nissue && !w.fail; k++) clone_inst(&w, issue[k], w.pyield, NULL);
    /* the carried values' next values (more may join while they are mapped) */
    ValueId ynext[1 + MAX_CARRIED];
    for (int c = 0; c < w.ncarried && !w.fail; c++) ynext[1 + c] = pval(&w, body->last->ops[w.carried[c]]);
    if (w.fail) {
        /* nothing of the producer is in the kernel yet: its instructions are unreachable */
        free(w.map);
        return;
    }
    /* q flips when the write stage wraps */
    int R = bart->shape[0];
    const Type *st = tir_vtype(f, wstage);
    ValueId nx = emit(f, w.pyield, OP_ADD, (ValueId[]){wstage, cint(f, w.pyield, st, 1)}, 2, st, 0);
    ValueId wrap = emit(f, w.pyield, OP_CMP, (ValueId[]){nx, cint(f, w.pyield, st, R)}, 2, i1, CMP_EQ);
    ValueId flip = emit(f, w.pyield, OP_XOR, (ValueId[]){q, cint(f, w.pyield, i32, 1)}, 2, i32, 0);
    ynext[0] = emit(f, w.pyield, OP_SELECT, (ValueId[]){wrap, flip, q}, 3, i32, 0);
    w.pyield->ops = ARENA_ARRAY(m->arena, ValueId, 1 + w.ncarried);
    memcpy(w.pyield->ops, ynext, sizeof(ValueId) * (size_t)(1 + w.ncarried));
    w.pyield->nops = 1 + w.ncarried;

    /* step 3: the kernel's top: allocations, mbarriers, the producer */
    Inst *top = f->body->first;
    Inst *anchor = tir_inst_new(f, OP_BARRIER, NULL, 0, NULL, 0, loop->loc);
    tir_insert_before(top, anchor);
    for (int j = 0; j < nbufs; j++) move_to(bufs[j], anchor);
    move_to(Fdef, anchor);
    tir_insert_before(anchor, Edef);
    Inst *before = init->prev, *after = init->next;
    if (before && before->op == OP_BARRIER) tir_inst_remove(before);
    if (after && after->op == OP_BARRIER) tir_inst_remove(after);
    tir_inst_remove(init);
    tir_insert_after(anchor, init);
    Inst *einit = tir_inst_new(f, OP_MBAR_INIT, &E, 1, NULL, 0, init->loc);
    einit->a.ival = 32 * f->num_warps;
    tir_insert_after(init, einit);
    Inst *bar2 = tir_inst_new(f, OP_BARRIER, NULL, 0, NULL, 0, loop->loc);
    tir_insert_after(einit, bar2);
    tir_insert_after(bar2, region_op);
    if (inval) {
        Inst *ei = tir_inst_new(f, OP_MBAR_INVAL, &E, 1, NULL, 0, inval->loc);
        tir_insert_after(inval, ei);
    }
    /* the consumer: no copies, no barrier for the stage's reuse; arrive on E when released */
    for (int k = 0; k < npro; k++) tir_inst_remove(pro[k]);
    for (int k = 0; k < nissue; k++) tir_inst_remove(issue[k]);
    if (wait->next && wait->next->op == OP_BARRIER) tir_inst_remove(wait->next);
    Inst *y = body->last;
    ValueId rstage = wait->ops[1], stage = rstage, run;
    const Type *rt = tir_vtype(f, rstage);
    if (lag) {
        /* the previous iteration's stage, from the second iteration on */
        ValueId is0 = emit(f, y, OP_CMP, (ValueId[]){rstage, cint(f, y, rt, 0)}, 2, i1, CMP_EQ);
        ValueId dec = emit(f, y, OP_SUB, (ValueId[]){rstage, cint(f, y, rt, 1)}, 2, rt, 0);
        stage = emit(f, y, OP_SELECT, (ValueId[]){is0, cint(f, y, rt, R - 1), dec}, 3, rt, 0);
        run = emit(f, y, OP_CMP, (ValueId[]){body->args[0], loop->ops[0]}, 2, i1, CMP_NE);
    } else {
        run = cint(f, y, i1, 1);
    }
    Inst *arrive = tir_inst_new(f, OP_MBAR_ARRIVE, (ValueId[]){E, stage, run}, 3, NULL, 0, y->loc);
    tir_insert_before(y, arrive);
    f->producer_warps = PRODUCER_WARPS;
    free(w.map);
}

bool lower_warp_specialize(Module *m, Diag *d) {
    (void)d;
    const Target *tg = target_find(m->arch);
    if (!tg || tg->mma != WGMMA || m->no_tma) return true;
    for (int k = 0; k < m->nfuncs; k++) {
        Func *f = m->funcs[k];
        if (!f->warp_specialize || f->producer_warps || f->num_warps % 4) continue;
        for (Inst *i = f->body->first; i; i = i->next)
            if (i->op == OP_FOR) {
                bool tma = false;
                for (Inst *n = i->regions[0]->first; n && !tma; n = n->next) tma = n->op == OP_MBAR_WAIT;
                if (tma) {
                    specialize_loop(m, f, i);
                    break;
                }
            }
    }
    return true;
}
