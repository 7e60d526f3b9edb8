/* warp_specialize.c - on sm_90a, for a kernel that asks for it (@warp_specialize), hand the
 * tensor-map loads of its pipelined loop to a producer warpgroup of their own: 4 warps launched
 * after the num_warps that compute, one lane of which issues every copy while the others run
 * the loop's math without the address, expect and issue code, and with no block-wide barrier
 * per iteration (FlashAttention-3's and CUTLASS's producer/consumer split).  In a persistent
 * kernel (the pipelined loop inside a loop over tiles) the producer runs ahead across tiles:
 * it loads the next tile's first stages while the computing warps run this tile's epilogue.
 *
 * Algorithm, for the first loop L that the tma pass converted (mbar_wait on its full mbarriers
 * F, one mbar_expect and its tma_loads per iteration), in the kernel's body, in a branch of an
 * `if` there (a guard: the producer gets the same `if`) or in the body of a `for` O there, with
 * num_warps a multiple of 4.  Buffers without a tensor map (cp.async: MoE's gathered rows) stay
 * the computing warps', with the barrier their reuse needs:
 *   1. Release point.  The stage an iteration reads may be overwritten once every wgmma that
 *      reads it has completed.  The body leaves p wgmma groups outstanding at its end (the
 *      pending count of its last dot or wgmma_wait).  p = 0: the stage read in this iteration
 *      is released at the end of the body; 0 < p <= the body's dots: the previous iteration's,
 *      carried through L (the first iteration's is an extra mbarrier of E that no copy waits
 *      for: an arrival there costs nothing, where a test of the first iteration and the stage
 *      arithmetic took 2-4 SASS instructions an iteration; beside copies of the computing warps'
 *      own, computed from the second iteration on, step 3), and the last one's after the
 *      wgmma_wait that follows L; else the kernel is left as it is.
 *   2. Slices.  Every value the copies use (coordinates, stage, run predicate; the prologue's
 *      and the body's) and the loops' bounds must be computable from the kernel's arguments
 *      by scalar ops: pure ops with scalar results, scalar loads, `if`s of them; in a loop's
 *      body they may use its induction variable and carried values whose next values are
 *      scalar slices too.  Anything else (a tensor, a store) leaves the kernel as it is.
 *   3. Rewrite.  The local_allocs of the staged buffers and of F move to the top of the kernel,
 *      followed by: barrier, mbar_init F, mbar_init E (a new buffer of "empty" mbarriers, one
 *      per stage and with a lag one more, completed by one arrival of each computing thread), barrier, and
 *      ws_producer { a gdc_wait when the kernel has one anywhere (the producer starts at the top,
 *      before the kernel's own: no copy or scalar load of its may come before the wait), the slices
 *      cloned, [a `for` over O's bounds {] the prologue's expects and copies, then a `for` over L's
 *      bounds {the expect and copies} [}] }.  Every issue, when it
 *      runs, first waits for its stage to be empty: mbar_wait E[s] with parity bit s of a value
 *      the loops carry, from all ones (a fresh mbarrier's preceding phase counts as completed),
 *      bit s flipped after the issue.  The computing warps lose the copies and (without
 *      cp.async buffers) the barrier after their wait, and arrive on E at the release points; with O, F's phase (tma.c) becomes
 *      one parity bit per stage carried through O instead of starting again for every tile,
 *      and E and F are invalidated after O.  Every copy the producer issues is waited for by the computing
 *      warps, and the producer waits only before a copy it issues, so E and F are idle once
 *      the computing warps are done.
 * llvm_codegen.c launches num_warps + 4 warps, branches the producer warpgroup into the region
 * (setmaxnreg moves registers to the computing warpgroups when there are two or more), and
 * makes the computing warps' barriers named barriers of their own thread count. */
#include "passes.h"
#include "../support/target.h"

#include <stdlib.h>
#include <string.h>

enum { PRODUCER_WARPS = 4, MAX_ISSUE = 16, MAX_CARRIED = 16 };

/* One loop of the kernel and its producer clone. */
typedef struct PLoop {
    Inst *orig, *clone;
    Inst *yield;              /* the clone's yield, filled last */
    int carried[MAX_CARRIED]; /* the original's carried index of each of the clone's, -1: the producer's own */
    ValueId next[MAX_CARRIED];
    int ncarried;
} PLoop;

typedef struct WS {
    Module *m;
    Func *f;
    ValueId *map; /* original value -> the producer's, by ValueId below nmap */
    uint32_t nmap;
    PLoop lp[2];  /* [0]: O (orig NULL without one), [1]: L */
    Block *mid;   /* the block holding L (the kernel's body, O's body or a branch of a guard `if`) */
    Inst *top;    /* the producer's code for values of the kernel's body goes before this */
    bool fail;
} WS;

static bool scalar_results(Func *f, Inst *i) {
    for (int r = 0; r < i->nres; r++)
        if (tir_vtype(f, i->res[r])->rank) return false;
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

/* The clone of i before pos (or at the end of `into`), its operands mapped; regions too. */
static Inst *clone_inst(WS *w, Inst *i, Inst *pos, Block *into);

static void clone_block(WS *w, Block *from, Block *to) {
    for (Inst *i = from->first; i && !w->fail; i = i->next) clone_inst(w, i, NULL, to);
}

static Inst *clone_inst(WS *w, Inst *i, Inst *pos, Block *into) {
    Func *f = w->f;
    const Type *rt[16];
    ValueId ops[32];
    if (i->nres > 16 || i->nops > 32) {
        w->fail = true;
        return NULL;
    }
    for (int r = 0; r < i->nres; r++) rt[r] = tir_vtype(f, i->res[r]);
    for (int k = 0; k < i->nops; k++) ops[k] = i->ops[k] < w->nmap && w->map[i->ops[k]] ? w->map[i->ops[k]] : i->ops[k];
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
            bool inside = false;
            for (Block *p = val->def ? val->def->parent : val->block; p && !inside; p = p->parent ? p->parent->parent : NULL)
                inside = p == b;
            if (!inside) pval(w, v);
        }
        for (int r = 0; r < i->nregions; r++) map_free_values(w, i->regions[r]);
    }
}

static void grow(Arena *a, ValueId **arr, int *n, ValueId v) {
    *arr = arena_grow(a, *arr, sizeof(ValueId) * (size_t)*n, sizeof(ValueId) * (size_t)(*n + 1));
    (*arr)[(*n)++] = v;
}

/* Where the producer's code for values of block b goes: before this inst (NULL: not ours). */
static Inst *insertion(WS *w, Block *b) {
    if (b == w->f->body) return w->top;
    if (b == w->mid) return w->lp[1].clone;
    if (b == w->lp[1].orig->regions[0]) return w->lp[1].yield;
    return NULL;
}

/* A carried value of producer loop p: init (a producer value before the loop), type t; carried
 * index k of the original (-1: the producer's own).  Returns the body argument. */
static ValueId carry(WS *w, PLoop *p, ValueId init, const Type *t, int k) {
    if (p->ncarried == MAX_CARRIED) {
        w->fail = true;
        return 0;
    }
    Inst *c = p->clone;
    grow(w->m->arena, &c->ops, &c->nops, init);
    grow(w->m->arena, &c->res, &c->nres, 0);
    c->res[c->nres - 1] = tir_new_value(w->f, t, c, c->nres - 1);
    p->carried[p->ncarried] = k;
    p->next[p->ncarried++] = 0;
    return tir_block_add_arg(w->f, c->regions[0], t);
}

/* The producer's value for v: kernel arguments and the hoisted allocations are shared;
 * scalar ops are cloned where their block's producer code goes; the loops' induction
 * variables and carried values map to the producer loops'. */
static ValueId pval(WS *w, ValueId v) {
    if (w->fail || !v) return 0;
    if (v >= w->nmap) return v;
    if (w->map[v]) return w->map[v];
    Func *f = w->f;
    Value val = *tir_val(f, v);
    if (!val.def) {
        if (val.block == f->body) return w->map[v] = v; /* a kernel argument */
        for (int l = 0; l < 2; l++) {
            PLoop *p = &w->lp[l];
            if (!p->orig || val.block != p->orig->regions[0]) continue;
            if (val.index == 0) return w->map[v] = p->clone->regions[0]->args[0];
            int k = val.index - 1;
            ValueId init = pval(w, p->orig->ops[3 + k]);
            ValueId a = w->fail ? 0 : carry(w, p, init, val.type, k);
            return w->fail ? 0 : (w->map[v] = a);
        }
        w->fail = true;
        return 0;
    }
    Inst *d = val.def;
    Inst *pos = insertion(w, d->parent);
    if (!pos || !scalar_results(f, d) || (d->nregions && d->op != OP_IF) ||
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
    clone_inst(w, d, insertion(w, d->parent), NULL);
    return w->fail ? 0 : w->map[v];
}

/* Step 1: the stage released at the end of the body: 0 the one read, 1 the previous, -1 none. */
static int release_lag(Block *body) {
    int ndots = 0, pending = 0;
    for (Inst *i = body->first; i; i = i->next) {
        if (i->op == OP_DOT) ndots++, pending = (int)i->a.ival;
        else if (i->op == OP_WGMMA_WAIT) pending = (int)i->a.ival;
        else if (i->nregions)
            for (int r = 0; r < i->nregions; r++)
                for (Inst *n = i->regions[r]->first; n; n = n->next)
                    if (n->op == OP_DOT || n->op == OP_WGMMA_WAIT) return -1; /* dots under control flow */
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

static ValueId as_i32(Func *f, Inst *pos, ValueId v) {
    const Type *i32 = tir_scalar(f->module, DT_I32);
    return tir_vtype(f, v) == i32 ? v : emit(f, pos, OP_CAST, &v, 1, i32, 0);
}

/* The producer's issue of one group (an expect and its copies, originals g[0..n)) before pos:
 * the operands, the wait for the stage to be empty, the issue, and the parity bits after it
 * (returned: bits with the stage's bit flipped when the group runs). */
static ValueId issue_group(WS *w, Inst **g, int n, Inst *pos, ValueId E, ValueId bits) {
    Func *f = w->f;
    const Type *i32 = tir_scalar(w->m, DT_I32);
    for (int k = 0; k < n; k++)
        for (int j = 0; j < g[k]->nops; j++) pval(w, g[k]->ops[j]);
    if (w->fail) return 0;
    ValueId stage = w->map[g[0]->ops[1]] ? w->map[g[0]->ops[1]] : g[0]->ops[1];
    ValueId run = w->map[g[0]->ops[2]] ? w->map[g[0]->ops[2]] : g[0]->ops[2];
    ValueId s = as_i32(f, pos, stage);
    ValueId parity = emit(f, pos, OP_AND, (ValueId[]){emit(f, pos, OP_SHR, (ValueId[]){bits, s}, 2, i32, 0), cint(f, pos, i32, 1)}, 2, i32, 0);
    Inst *wait = tir_inst_new(f, OP_MBAR_WAIT, (ValueId[]){E, stage, parity, run}, 4, NULL, 0, g[0]->loc);
    tir_insert_before(pos, wait);
    for (int k = 0; k < n && !w->fail; k++) clone_inst(w, g[k], pos, NULL);
    ValueId flip = emit(f, pos, OP_XOR, (ValueId[]){bits, emit(f, pos, OP_SHL, (ValueId[]){cint(f, pos, i32, 1), s}, 2, i32, 0)}, 2, i32, 0);
    return emit(f, pos, OP_SELECT, (ValueId[]){run, flip, bits}, 3, i32, 0);
}

static void move_to(Inst *i, Inst *pos) {
    tir_inst_remove(i);
    tir_insert_before(pos, i);
}

static Inst *new_loop(WS *w, Inst *orig, Inst *pos, Block *into) {
    Inst *c = tir_inst_new(w->f, OP_FOR, (ValueId[]){0, 0, 0}, 3, NULL, 0, orig->loc);
    if (pos) tir_insert_before(pos, c);
    else tir_block_append(into, c);
    Block *b = tir_block_new(w->f, c);
    tir_inst_add_region(w->f, c, b);
    tir_block_add_arg(w->f, b, tir_vtype(w->f, orig->regions[0]->args[0]));
    return c;
}

static void specialize_loop(Module *m, Func *f, Inst *outer, Inst *guard, Inst *loop) {
    Block *body = loop->regions[0], *obody = loop->parent;
    Inst *wait = NULL, *expect = NULL, *issue[MAX_ISSUE], *pro[MAX_ISSUE];
    int nissue = 0, npro = 0;
    bool mixed = false; /* buffers no tensor map reads: the computing warps keep their cp.async and barrier */
    for (Inst *i = body->first; i; i = i->next) {
        mixed |= i->op == OP_ASYNC_COPY;
        if (i->op == OP_MBAR_WAIT && !wait) wait = i;
        else if (i->op == OP_MBAR_EXPECT) {
            if (expect) return; /* one group an iteration */
            expect = i;
        }
        if ((i->op == OP_MBAR_EXPECT || i->op == OP_TMA_LOAD) && nissue < MAX_ISSUE) issue[nissue++] = i;
    }
    if (!wait || !expect || issue[0] != expect || nissue == MAX_ISSUE || wait->nops != 3) return;
    ValueId F = wait->ops[0];
    for (int k = 0; k < nissue; k++)
        if (issue[k]->op == OP_TMA_LOAD ? issue[k]->ops[2] != F : issue[k]->ops[0] != F) return;
    Inst *init = NULL, *inval = NULL;
    for (Inst *i = obody->first; i; i = i->next) {
        if (i == loop) continue;
        if (i->op == OP_MBAR_INIT && i->ops[0] == F) init = i;
        else if (i->op == OP_MBAR_INVAL && i->ops[0] == F) inval = i;
        else if (((i->op == OP_MBAR_EXPECT && i->ops[0] == F) || (i->op == OP_TMA_LOAD && i->ops[2] == F)) && npro < MAX_ISSUE)
            pro[npro++] = i;
    }
    Inst *Fdef = tir_val(f, F)->def;
    if (!init || npro == MAX_ISSUE || (npro && pro[0]->op != OP_MBAR_EXPECT) || !Fdef || Fdef->op != OP_LOCAL_ALLOC ||
        Fdef->parent != obody)
        return;
    /* the staged buffers: allocated in the same block as F */
    Inst *bufs[MAX_ISSUE];
    int nbufs = 0;
    for (int k = 0; k < nissue; k++) {
        if (issue[k]->op != OP_TMA_LOAD) continue;
        Inst *d = tir_val(f, issue[k]->ops[0])->def;
        if (!d || d->op != OP_LOCAL_ALLOC || d->parent != obody) return;
        bool seen = false;
        for (int j = 0; j < nbufs; j++) seen |= bufs[j] == d;
        if (!seen) bufs[nbufs++] = d;
    }
    int lag = release_lag(body);
    if (lag < 0) return;
    /* with a lag, the loop's last stage is released after the wgmma_wait of its result */
    Inst *last_wait = NULL;
    if (lag)
        for (Inst *i = loop->next; i && !last_wait; i = i->next)
            for (int r = 0; r < loop->nres && i->op == OP_WGMMA_WAIT; r++)
                if (i->ops[0] == loop->res[r]) last_wait = i;
    if (lag && !last_wait) return;
    /* F's phase: the carried value the wait reads (tma.c) */
    int phase_k = -1;
    {
        Value *pv = tir_val(f, wait->ops[2]);
        if (!pv->def && pv->block == body && pv->index >= 1) phase_k = pv->index - 1;
    }
    if (outer && phase_k < 0) return;

    /* step 2: the producer, built beside the kernel until it is known to work */
    const Type *i1 = tir_scalar(m, DT_I1), *i32 = tir_scalar(m, DT_I32);
    WS w = {.m = m, .f = f, .nmap = f->nvalues, .mid = obody};
    w.map = calloc(w.nmap, sizeof *w.map);
    if (!w.map) out_of_memory();
    w.map[F] = F;
    for (int j = 0; j < nbufs; j++) w.map[bufs[j]->res[0]] = bufs[j]->res[0];
    Inst *region_op = tir_inst_new(f, OP_WS_PRODUCER, NULL, 0, NULL, 0, loop->loc);
    region_op->a.ival = PRODUCER_WARPS;
    Block *rb = tir_block_new(f, region_op);
    tir_inst_add_region(f, region_op, rb);
    Inst *ry = tir_inst_new(f, OP_YIELD, NULL, 0, NULL, 0, loop->loc);
    tir_block_append(rb, ry);
    const Type *bart = tir_vtype(f, F);
    /* E: one per stage, and with a lag one more that no copy waits for, released in the first iteration */
    bool carried = lag && !mixed;
    const Type *eart = carried ? tir_type(m, bart->dt, 3, (int32_t[]){bart->shape[0] + 1, 1, 1}, NULL, bart->layout) : bart;
    Inst *Edef = tir_inst_new(f, OP_LOCAL_ALLOC, NULL, 0, &eart, 1, Fdef->loc);
    ValueId E = Edef->res[0];
    PLoop *po = &w.lp[0], *pl = &w.lp[1];
    po->orig = outer, pl->orig = loop;
    if (outer) {
        po->clone = new_loop(&w, outer, ry, NULL);
        po->yield = tir_inst_new(f, OP_YIELD, NULL, 0, NULL, 0, outer->loc);
        tir_block_append(po->clone->regions[0], po->yield);
        w.top = po->clone;
        pl->clone = new_loop(&w, loop, po->yield, NULL);
    } else if (guard) {
        /* the same `if` around the producer's loop: its branch holding L gets it, the other nothing */
        Inst *gi = tir_inst_new(f, OP_IF, guard->ops, 1, NULL, 0, guard->loc);
        tir_insert_before(ry, gi);
        Block *side = NULL;
        for (int r = 0; r < guard->nregions; r++) {
            Block *nb = tir_block_new(f, gi);
            tir_inst_add_region(f, gi, nb);
            Inst *yy = tir_inst_new(f, OP_YIELD, NULL, 0, NULL, 0, guard->loc);
            tir_block_append(nb, yy);
            if (guard->regions[r] == obody) side = nb;
        }
        w.top = gi;
        pl->clone = new_loop(&w, loop, side->last, NULL);
        tir_inst_set_operand(f, gi, 0, pval(&w, guard->ops[0]));
    } else {
        pl->clone = new_loop(&w, loop, ry, NULL);
        w.top = pl->clone;
    }
    pl->yield = tir_inst_new(f, OP_YIELD, NULL, 0, NULL, 0, loop->loc);
    tir_block_append(pl->clone->regions[0], pl->yield);
    /* E's parity bits, all ones: the producer's own first carried value of each loop */
    ValueId bits = cint(f, w.top, i32, -1);
    if (outer) {
        for (int k = 0; k < 3; k++) po->clone->ops[k] = pval(&w, outer->ops[k]);
        bits = carry(&w, po, bits, i32, -1);
    }
    /* the prologue's issues, group by group, before L's clone */
    for (int k0 = 0, k1; k0 < npro && !w.fail; k0 = k1) {
        for (k1 = k0 + 1; k1 < npro && pro[k1]->op == OP_TMA_LOAD; k1++) {}
        bits = issue_group(&w, pro + k0, k1 - k0, pl->clone, E, bits);
    }
    for (int k = 0; k < 3 && !w.fail; k++) pl->clone->ops[k] = pval(&w, loop->ops[k]);
    ValueId lbits = w.fail ? 0 : carry(&w, pl, bits, i32, -1);
    ValueId lnext = w.fail ? 0 : issue_group(&w, issue, nissue, pl->yield, E, lbits);
    if (!w.fail) pl->next[0] = lnext;
    /* the carried values' next values (more may join while they are mapped): L's first, whose
     * may need O's carried values; O's never need L's (a value of O's body is cloned before
     * L's clone, and one that reads L's results fails) */
    for (int l = 1; l >= 0 && !w.fail; l--) {
        PLoop *p = &w.lp[l];
        if (!p->orig) continue;
        for (int c = 0; c < p->ncarried && !w.fail; c++)
            if (p->carried[c] >= 0) p->next[c] = pval(&w, p->orig->regions[0]->last->ops[p->carried[c]]);
    }
    if (outer && !w.fail) po->next[0] = pl->clone->res[0]; /* E's bits after this tile's loop */
    for (int l = 0; l < 2 && !w.fail; l++) {
        PLoop *p = &w.lp[l];
        if (!p->orig) continue;
        for (int c = 0; c < p->ncarried; c++)
            if (!p->next[c]) w.fail = true;
        if (w.fail) break;
        p->yield->ops = ARENA_ARRAY(m->arena, ValueId, p->ncarried ? p->ncarried : 1);
        memcpy(p->yield->ops, p->next, sizeof(ValueId) * (size_t)p->ncarried);
        p->yield->nops = p->ncarried;
    }
    if (w.fail) {
        /* nothing of the producer is in the kernel yet: its instructions are unreachable */
        free(w.map);
        return;
    }

    /* the producer never reaches the kernel's own gdc_wait (it runs from the top): it waits first itself */
    if (tir_block_holds(f->body, OP_GDC_WAIT)) tir_insert_before(rb->first, tir_inst_new(f, OP_GDC_WAIT, NULL, 0, NULL, 0, loop->loc));

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
    /* the invalidations after O (every computing warp past it first) */
    if (inval && outer) {
        Inst *b = tir_inst_new(f, OP_BARRIER, NULL, 0, NULL, 0, inval->loc);
        tir_inst_remove(inval);
        tir_insert_after(outer, b);
        tir_insert_after(b, inval);
    }
    if (inval) {
        Inst *ei = tir_inst_new(f, OP_MBAR_INVAL, &E, 1, NULL, 0, inval->loc);
        tir_insert_after(inval, ei);
    }
    /* F's phases carried through O from 0, as one parity bit per stage: a tile's loop starts
     * at stage 0 whatever stage the last one ended at, so the stages are not used in ring order */
    if (outer) {
        ValueId bits = wait->ops[2], rs = as_i32(f, wait, wait->ops[1]);
        ValueId par = emit(f, wait, OP_AND, (ValueId[]){emit(f, wait, OP_SHR, (ValueId[]){bits, rs}, 2, i32, 0), cint(f, wait, i32, 1)}, 2, i32, 0);
        tir_inst_set_operand(f, wait, 2, par);
        Inst *by = body->last;
        ValueId flip = emit(f, by, OP_XOR, (ValueId[]){bits, emit(f, by, OP_SHL, (ValueId[]){cint(f, by, i32, 1), rs}, 2, i32, 0)}, 2, i32, 0);
        tir_inst_set_operand(f, by, phase_k, flip);
        ValueId z = cint(f, outer, i32, 0);
        grow(m->arena, &outer->ops, &outer->nops, z);
        grow(m->arena, &outer->res, &outer->nres, 0);
        outer->res[outer->nres - 1] = tir_new_value(f, i32, outer, outer->nres - 1);
        ValueId ob = tir_block_add_arg(f, obody, i32);
        tir_inst_set_operand(f, loop, 3 + phase_k, ob);
        Inst *oy = obody->last;
        grow(m->arena, &oy->ops, &oy->nops, loop->res[phase_k]);
    }
    /* the computing warps: no copies, no barrier for the stage's reuse; arrive on E when released */
    for (int k = 0; k < npro; k++) tir_inst_remove(pro[k]);
    for (int k = 0; k < nissue; k++) tir_inst_remove(issue[k]);
    if (!mixed && wait->next && wait->next->op == OP_BARRIER) tir_inst_remove(wait->next); /* (mixed: the cp.async stages need it) */
    Inst *y = body->last;
    ValueId rstage = wait->ops[1], stage = rstage, run;
    const Type *rt = tir_vtype(f, rstage);
    int R = bart->shape[0];
    if (carried) {
        /* the previous iteration's stage, carried; the first iteration's is E's extra mbarrier (R), which
         * nothing waits for */
        grow(m->arena, &loop->ops, &loop->nops, cint(f, loop, rt, R));
        grow(m->arena, &loop->res, &loop->nres, 0);
        loop->res[loop->nres - 1] = tir_new_value(f, rt, loop, loop->nres - 1);
        stage = tir_block_add_arg(f, body, rt);
        grow(m->arena, &y->ops, &y->nops, rstage);
        run = cint(f, y, i1, 1);
        /* and, in a loop over tiles, the last iteration's after the loop (the next tile's copies wait
         * for it; without O nothing does, and E is invalidated by then); R where the loop did not run */
        Inst *pos = last_wait->next;
        if (outer && pos) {
            Inst *fa = tir_inst_new(f, OP_MBAR_ARRIVE, (ValueId[]){E, loop->res[loop->nres - 1], cint(f, pos, i1, 1)}, 3, NULL, 0,
                                    last_wait->loc);
            tir_insert_before(pos, fa);
        }
    } else if (lag) {
        /* beside the computing warps' own copies (mixed), whose addresses hold registers across the loop,
         * the previous iteration's stage is computed, from the second iteration on: one more value carried
         * spilled 8 B at tile_gemm's tf32 launch with B [K][N], beta, bias and GELU */
        ValueId is0 = emit(f, y, OP_CMP, (ValueId[]){rstage, cint(f, y, rt, 0)}, 2, i1, CMP_EQ);
        ValueId dec = emit(f, y, OP_SUB, (ValueId[]){rstage, cint(f, y, rt, 1)}, 2, rt, 0);
        stage = emit(f, y, OP_SELECT, (ValueId[]){is0, cint(f, y, rt, R - 1), dec}, 3, rt, 0);
        run = emit(f, y, OP_CMP, (ValueId[]){body->args[0], loop->ops[0]}, 2, i1, CMP_NE);
        Value *rv = tir_val(f, rstage);
        Inst *pos = last_wait->next;
        if (outer && !rv->def && rv->block == body && rv->index >= 1 && pos) {
            ValueId fin = loop->res[rv->index - 1];
            ValueId f0 = emit(f, pos, OP_CMP, (ValueId[]){fin, cint(f, pos, rt, 0)}, 2, i1, CMP_EQ);
            ValueId fd = emit(f, pos, OP_SUB, (ValueId[]){fin, cint(f, pos, rt, 1)}, 2, rt, 0);
            ValueId fs = emit(f, pos, OP_SELECT, (ValueId[]){f0, cint(f, pos, rt, R - 1), fd}, 3, rt, 0);
            ValueId ran = emit(f, pos, OP_CMP, (ValueId[]){loop->ops[0], loop->ops[1]}, 2, i1, CMP_LT);
            Inst *fa = tir_inst_new(f, OP_MBAR_ARRIVE, (ValueId[]){E, fs, ran}, 3, NULL, 0, last_wait->loc);
            tir_insert_before(pos, fa);
        }
    } else {
        run = cint(f, y, i1, 1);
    }
    Inst *arrive = tir_inst_new(f, OP_MBAR_ARRIVE, (ValueId[]){E, stage, run}, 3, NULL, 0, y->loc);
    tir_insert_before(y, arrive);
    f->producer_warps = PRODUCER_WARPS;
    free(w.map);
}

/* The first loop tma converted (its body waits on mbarriers): in the kernel's body, or in the
 * body of a `for` there; *outer gets the latter. */
static Inst *find_loop(Func *f, Inst **outer, Inst **guard) {
    for (Inst *i = f->body->first; i; i = i->next) {
        if (i->op == OP_IF) /* a guard: `if past the end { } else { ..the loop.. }` (MoE's expert blocks) */
            for (int r = 0; r < i->nregions; r++)
                for (Inst *n = i->regions[r]->first; n; n = n->next)
                    if (n->op == OP_FOR)
                        for (Inst *x = n->regions[0]->first; x; x = x->next)
                            if (x->op == OP_MBAR_WAIT) {
                                *outer = NULL, *guard = i;
                                return n;
                            }
        if (i->op != OP_FOR) continue;
        for (Inst *n = i->regions[0]->first; n; n = n->next) {
            if (n->op == OP_MBAR_WAIT) {
                *outer = *guard = NULL;
                return i;
            }
            if (n->op == OP_FOR)
                for (Inst *x = n->regions[0]->first; x; x = x->next)
                    if (x->op == OP_MBAR_WAIT) {
                        *outer = i, *guard = NULL;
                        return n;
                    }
        }
    }
    return NULL;
}

bool lower_warp_specialize(Module *m, Diag *d) {
    (void)d;
    const Target *tg = target_find(m->arch);
    if (!tg || tg->mma != WGMMA || m->no_tma) return true;
    for (int k = 0; k < m->nfuncs; k++) {
        Func *f = m->funcs[k];
        /* (a producer warpgroup beside 32 computing warps would pass a block's 1024 threads) */
        if (!f->warp_specialize || f->producer_warps || f->num_warps % 4 || f->num_warps + PRODUCER_WARPS > 32) continue;
        Inst *outer = NULL, *guard = NULL, *loop = find_loop(f, &outer, &guard);
        if (loop) specialize_loop(m, f, outer, guard, loop);
    }
    return true;
}
