/* overlap.c - with @overlap, a warp-specialized kernel's loop of two chained dots
 *       s = dot(a, b_j);  register math on s -> p and a per-row factor;  acc = dot(p, c_j, acc * factor)
 * (attention: S = Q K^T, the online softmax, O += P V) issues the second dot of iteration j
 * together with the first dot of iteration j + 1, so the register math of block j + 1 runs on the
 * CUDA cores while the tensor cores do the second dot of block j (FlashAttention-3's
 * intra-warpgroup overlap of softmax with P·V; the ping-pong of lower/pingpong.c overlaps
 * different warpgroups, this overlaps the two dots of one).
 *
 * Algorithm, for each `for` of the kernel outside ws_producer that is not a peeled remainder,
 * whose body holds no region and exactly two dots D1 before D2, where D1 is a warpgroup (wgmma)
 * dot that is waited for at once (pending 0, or pingpong's  D1 {pending=1}; turn_pass;
 * wgmma_wait D1), D2 waits for itself (pending 0), D2's result is used only by the yield (carried
 * value k) and the body reads carried value k only after D1:
 *   1. The moved part M is D2 and the mbar_arrive after it (the release of the stage D2 reads);
 *      the rest is A.  Operands of M computed in the body are recomputed before M when they are
 *      consts or local_views (of operands resolved the same way), and otherwise carried to the
 *      next iteration: a new carried value, yielded as it is.  D2's accumulator operand is the
 *      one exception: it becomes carried value k (the accumulator before the last dot).
 *   2. Prologue: `if lb < ub` runs a copy of A at iv = lb from the loop's inits (reading carried
 *      value k directly), yielding what the loop carries; else the inits (zeros for the values M
 *      carries, unused).
 *   3. The loop runs from lb + step; its body becomes
 *          A up to D1 (issued, pending 1);  M's dot D2' from the carried operands (pending 1;
 *          pingpong's turn_pass moves after it);  wgmma_wait D1 {pending=1};  the rest of A, where
 *          the first read of carried value k (or the yield) reads W = wgmma_wait D2' {pending=0}
 *          and M's stage release follows W;  yield (slot k: D2's accumulator operand, or W where
 *          D2 accumulated into carried value k itself; the new carried values).
 *      Groups complete in order, so waiting with one group pending after D2' waits for D1 alone.
 *   4. Epilogue: `if lb < ub` runs M once from the loop's results (D2 waited at once), else passes
 *      carried value k through; the loop's result k is replaced by it.
 * Every iteration runs A, then M, as before; the values are the same.  The kernel needs a
 * register file that holds s of one block, p of the previous one and the accumulator at once. */
#include "layout.h"
#include "passes.h"

#include <stdlib.h>
#include <string.h>

#define MAX_CARRY 8

typedef struct Rot {
    Func *f;
    Inst *loop;
    Block *body;
    Inst *d1, *d1_wait, *d2; /* d1_wait: pingpong's, or NULL */
    Inst *moved[8];          /* d2 and the stage releases after it */
    int nmoved;
    int k;                   /* carried slot of d2's result (block argument k + 1) */
    bool *inside;            /* by ValueId: defined in the body */
    uint32_t ninside;
    ValueId carried[MAX_CARRY]; /* body values M reads from the iteration before */
    int ncarried;
    Inst *pro;                  /* the prologue `if`, once made */
} Rot;

static bool is_inside(const Rot *r, ValueId v) { return v < r->ninside && r->inside[v]; }

static bool mark_inside(Inst *i, void *ud) {
    Rot *r = ud;
    for (int k = 0; k < i->nres; k++) r->inside[i->res[k]] = true;
    return true;
}

static bool recomputed(const Inst *d) { return d && (d->op == OP_CONST || d->op == OP_LOCAL_VIEW); }

/* Step 1: collect the values M carries (depth-first through what is recomputed).  False when
 * there are too many. */
static bool collect_carried(Rot *r, ValueId v) {
    if (!is_inside(r, v) || v == r->d2->ops[2]) return true;
    Inst *d = r->f->values[v].def;
    if (recomputed(d)) {
        for (int k = 0; k < d->nops; k++)
            if (!collect_carried(r, d->ops[k])) return false;
        return true;
    }
    for (int c = 0; c < r->ncarried; c++)
        if (r->carried[c] == v) return true;
    if (r->ncarried == MAX_CARRY) return false;
    r->carried[r->ncarried++] = v;
    return true;
}

static int use_count(const Block *b, ValueId v) {
    int n = 0;
    for (const Inst *i = b->first; i; i = i->next)
        for (int k = 0; k < i->nops; k++) n += i->ops[k] == v;
    return n;
}

static bool reads(const Inst *i, ValueId v) {
    for (int k = 0; k < i->nops; k++)
        if (i->ops[k] == v) return true;
    return false;
}

/* Does the loop qualify?  Fills r. */
static bool qualifies(Rot *r) {
    Func *f = r->f;
    Inst *loop = r->loop;
    Block *b = r->body;
    if (loop->op != OP_FOR || loop->a.ival || loop->nregions != 1 || !b->last || b->last->op != OP_YIELD) return false;
    int dots = 0;
    for (Inst *i = b->first; i; i = i->next) {
        if (i->nregions) return false;
        if (i->op != OP_DOT) continue;
        if (dots == 0) r->d1 = i;
        else r->d2 = i;
        dots++;
    }
    if (dots != 2 || !layout_is_warpgroup_mma(tir_vtype(f, r->d1->res[0])->layout) || r->d2->a.ival != 0) return false;
    if (r->d1->a.ival) { /* pingpong's form: the wait follows the turn's pass */
        Inst *n = r->d1->next;
        if (!n || n->op != OP_TURN_PASS || !(n = n->next) || n->op != OP_WGMMA_WAIT || n->ops[0] != r->d1->res[0] ||
            n->a.ival)
            return false;
        r->d1_wait = n;
    }
    /* D2's result only yielded, at slot k */
    Inst *y = b->last;
    r->k = -1;
    for (int s = 0; s < y->nops; s++)
        if (y->ops[s] == r->d2->res[0]) r->k = s;
    if (r->k < 0 || use_count(b, r->d2->res[0]) != 1) return false;
    ValueId acc = b->args[r->k + 1];
    if (tir_vtype(f, acc) != tir_vtype(f, r->d2->res[0])) return false;
    bool after_d1 = false;
    for (Inst *i = b->first; i; i = i->next) {
        if (i == r->d1) after_d1 = true;
        if (!after_d1 && reads(i, acc)) return false;
    }
    if (reads(y, acc)) return false;
    /* D2 accumulates into a value of the body (attention's rescaled accumulator) or into the carried one */
    if (!is_inside(r, r->d2->ops[2])) return false;
    r->nmoved = 0;
    r->moved[r->nmoved++] = r->d2;
    for (Inst *i = r->d2->next; i && i != y; i = i->next)
        if (i->op == OP_MBAR_ARRIVE && r->nmoved < (int)ARRAY_LEN(r->moved)) r->moved[r->nmoved++] = i;
        else if (i->op == OP_MBAR_ARRIVE) return false;
    r->ncarried = 0;
    for (int m = 0; m < r->nmoved; m++)
        for (int k = 0; k < r->moved[m]->nops; k++)
            if (!collect_carried(r, r->moved[m]->ops[k])) return false;
    /* a carried value must not be one M makes */
    for (int c = 0; c < r->ncarried; c++)
        for (int m = 0; m < r->nmoved; m++)
            for (int k = 0; k < r->moved[m]->nres; k++)
                if (r->moved[m]->res[k] == r->carried[c]) return false;
    return true;
}

/* ---- building ---- */

typedef struct Map {
    ValueId *v;
    uint32_t n;
} Map;

static ValueId mapped(const Map *m, ValueId v) { return v < m->n && m->v[v] ? m->v[v] : v; }

static Inst *clone_inst(Func *f, const Inst *i, const Map *m) {
    /* scratch from the module's arena: an instruction of any width copies (a tuple reduce has up
     * to TIR_MAX_COMBINE results, an inline asm many operands) */
    Arena *a = f->module->arena;
    ValueId *ops = i->nops ? ARENA_ARRAY(a, ValueId, i->nops) : NULL;
    const Type **rt = i->nres ? ARENA_ARRAY(a, const Type *, i->nres) : NULL;
    for (int k = 0; k < i->nops; k++) ops[k] = mapped(m, i->ops[k]);
    for (int k = 0; k < i->nres; k++) rt[k] = tir_vtype(f, i->res[k]);
    Inst *n = tir_inst_new(f, i->op, ops, i->nops, rt, i->nres, i->loc);
    n->a = i->a;
    for (int k = 0; k < i->nres; k++) m->v[i->res[k]] = n->res[k];
    return n;
}

/* Recomputes what M reads in the body from the carried values (m maps them), appending the copies
 * before pos. */
static void recompute(Rot *r, ValueId v, Map *m, Inst *pos) {
    if (!is_inside(r, v) || m->v[v]) return;
    Inst *d = r->f->values[v].def;
    if (!recomputed(d)) return;
    for (int k = 0; k < d->nops; k++) recompute(r, d->ops[k], m, pos);
    tir_insert_before(pos, clone_inst(r->f, d, m));
}

/* M's instructions before pos, reading through m (carried values and slot k mapped); the dot
 * keeps `pending` groups. */
static Inst *emit_moved(Rot *r, Map *m, Inst *pos, int pending) {
    Inst *dot = NULL;
    for (int j = 0; j < r->nmoved; j++) {
        for (int k = 0; k < r->moved[j]->nops; k++) recompute(r, r->moved[j]->ops[k], m, pos);
        Inst *n = clone_inst(r->f, r->moved[j], m);
        if (j == 0) n->a.ival = pending, dot = n;
        tir_insert_before(pos, n);
    }
    return dot;
}

static Inst *new_yield(Func *f, Block *b, const ValueId *v, int n, Loc loc) {
    Inst *y = tir_inst_new(f, OP_YIELD, v, n, NULL, 0, loc);
    tir_block_append(b, y);
    return y;
}

static void rotate(Rot *r) {
    Func *f = r->f;
    Inst *loop = r->loop;
    Block *body = r->body;
    Inst *y = body->last;
    Arena *ar = f->module->arena;
    int nc = loop->nres, nt = nc + r->ncarried;
    int init0 = tir_loop_init(loop);
    ValueId acc_arg = body->args[r->k + 1];
    ValueId accpre = r->d2->ops[2]; /* D2's accumulator operand: acc_arg itself, or made from it */
    Loc loc = loop->loc;
    const Type *i1 = tir_scalar(f->module, DT_I1);
    const Type *ivt = tir_vtype(f, loop->ops[0]);
    const Type **rt = arena_alloc(ar, sizeof *rt * (size_t)nt);
    for (int s = 0; s < nc; s++) rt[s] = tir_vtype(f, loop->res[s]);
    for (int c = 0; c < r->ncarried; c++) rt[nc + c] = tir_vtype(f, r->carried[c]);
    Map m = {.n = f->nvalues + 1};
    m.v = calloc(m.n, sizeof *m.v);
    if (!m.v) out_of_memory();

    /* step 2: the prologue, `if lb < ub` */
    Inst *cmp = tir_inst_new(f, OP_CMP, (ValueId[]){loop->ops[0], loop->ops[1]}, 2, &i1, 1, loc);
    cmp->a.ival2 = CMP_LT;
    tir_insert_before(loop, cmp);
    Inst *pro = r->pro = tir_inst_new(f, OP_IF, &cmp->res[0], 1, rt, nt, loc);
    Block *then = tir_block_new(f, pro), *els = tir_block_new(f, pro);
    tir_inst_add_region(f, pro, then);
    tir_inst_add_region(f, pro, els);
    m.v[body->args[0]] = loop->ops[0];
    for (int s = 0; s < nc; s++) m.v[body->args[s + 1]] = loop->ops[init0 + s];
    for (Inst *i = body->first; i != y; i = i->next) {
        bool in_m = false;
        for (int j = 0; j < r->nmoved; j++) in_m |= r->moved[j] == i;
        if (!in_m) tir_block_append(then, clone_inst(f, i, &m));
    }
    ValueId *yv = arena_alloc(ar, sizeof *yv * (size_t)nt);
    for (int s = 0; s < nc; s++) yv[s] = mapped(&m, s == r->k ? accpre : y->ops[s]);
    for (int c = 0; c < r->ncarried; c++) yv[nc + c] = mapped(&m, r->carried[c]);
    new_yield(f, then, yv, nt, loc);
    for (int s = 0; s < nc; s++) yv[s] = loop->ops[init0 + s];
    Builder eb = {.f = f, .block = els, .loc = loc};
    for (int c = 0; c < r->ncarried; c++) {
        const Type *t = rt[nc + c];
        yv[nc + c] = dtype_is_float(t->dt) ? tir_const_float(&eb, t, 0) : tir_const_int(&eb, t, 0);
    }
    new_yield(f, els, yv, nt, loc);
    tir_insert_before(loop, pro);

    /* step 3: the loop from lb + step, carrying M's operands */
    Builder lb = {.f = f, .block = loop->parent, .before = loop, .loc = loc};
    loop->ops[0] = tir_emit_v(&lb, OP_ADD, (ValueId[]){loop->ops[0], loop->ops[2]}, 2, ivt);
    for (int s = 0; s < nc; s++) loop->ops[init0 + s] = pro->res[s];
    ValueId cargs[MAX_CARRY];
    for (int c = 0; c < r->ncarried; c++) {
        ValueId init = pro->res[nc + c];
        loop->ops = arena_grow(ar, loop->ops, sizeof(ValueId) * (size_t)loop->nops, sizeof(ValueId) * (size_t)(loop->nops + 1));
        loop->ops[loop->nops++] = init;
        cargs[c] = tir_block_add_arg(f, body, rt[nc + c]);
        loop->res = arena_grow(ar, loop->res, sizeof(ValueId) * (size_t)loop->nres, sizeof(ValueId) * (size_t)(loop->nres + 1));
        loop->res[loop->nres] = tir_new_value(f, rt[nc + c], loop, loop->nres);
        loop->nres++;
    }
    memset(m.v, 0, sizeof *m.v * m.n);
    for (int c = 0; c < r->ncarried; c++) m.v[r->carried[c]] = cargs[c];
    m.v[accpre] = acc_arg;
    /* M' right after D1 (and after pingpong's pass of the turn, which moves after M') */
    Inst *after_d1 = r->d1->next;
    Inst *turn = r->d1_wait ? r->d1->next : NULL;
    if (turn) after_d1 = turn->next, tir_inst_remove(turn);
    Inst *d2p = emit_moved(r, &m, after_d1, 1);
    if (turn) tir_insert_after(d2p, turn);
    /* D1 waited with D2' still pending */
    Inst *w1 = r->d1_wait;
    if (!w1) {
        ValueId s1 = r->d1->res[0];
        const Type *st = tir_vtype(f, s1);
        w1 = tir_inst_new(f, OP_WGMMA_WAIT, &s1, 1, &st, 1, r->d1->loc);
        tir_replace_uses(f, s1, w1->res[0]);
        w1->ops[0] = s1;
        tir_insert_after(turn ? turn : d2p, w1);
    } else {
        tir_inst_remove(w1);
        tir_insert_after(turn ? turn : d2p, w1);
    }
    r->d1->a.ival = 1;
    w1->a.ival = 1;
    for (int j = 0; j < r->nmoved; j++) tir_inst_remove(r->moved[j]); /* the old M goes */
    /* the accumulator: D2' waited before its first read (or at the end), the stage released after that */
    Inst *first = w1->next;
    while (first != y && !reads(first, acc_arg)) first = first->next;
    const Type *at = tir_vtype(f, acc_arg);
    Inst *w2 = tir_inst_new(f, OP_WGMMA_WAIT, &d2p->res[0], 1, &at, 1, r->d2->loc);
    tir_insert_before(first, w2);
    for (Inst *i = w2->next; i; i = i->next)
        for (int k = 0; k < i->nops; k++)
            if (i->ops[k] == acc_arg) tir_inst_set_operand(f, i, k, w2->res[0]);
    Inst *rel = w2;
    for (Inst *i = d2p->next; i && i != w2;) { /* the releases emit_moved put after D2' */
        Inst *nx = i->next;
        if (i->op == OP_MBAR_ARRIVE) tir_inst_remove(i), tir_insert_after(rel, i), rel = i;
        i = nx;
    }
    /* slot k yields D2's accumulator operand (D2' waited, when that is the carried value itself); the
     * carried values are yielded */
    tir_inst_set_operand(f, y, r->k, accpre == acc_arg ? w2->res[0] : accpre);
    for (int c = 0; c < r->ncarried; c++) {
        y->ops = arena_grow(ar, y->ops, sizeof(ValueId) * (size_t)y->nops, sizeof(ValueId) * (size_t)(y->nops + 1));
        y->ops[y->nops++] = r->carried[c];
    }

    /* step 4: the epilogue, `if lb < ub` (the original bounds: the loop's lb is lb + step now) */
    ValueId acc_out = loop->res[r->k];
    Inst *epi = tir_inst_new(f, OP_IF, &cmp->res[0], 1, &at, 1, loc);
    tir_replace_uses(f, acc_out, epi->res[0]);
    Block *et = tir_block_new(f, epi), *ee = tir_block_new(f, epi);
    tir_inst_add_region(f, epi, et);
    tir_inst_add_region(f, epi, ee);
    memset(m.v, 0, sizeof *m.v * m.n);
    for (int c = 0; c < r->ncarried; c++) m.v[r->carried[c]] = loop->res[nc + c];
    m.v[accpre] = acc_out;
    Inst *ety = new_yield(f, et, &acc_out, 1, loc);
    tir_inst_set_operand(f, ety, 0, emit_moved(r, &m, ety, 0)->res[0]);
    new_yield(f, ee, &acc_out, 1, loc);
    tir_insert_after(loop, epi);
    free(m.v);
}

/* Drops what rotating left unused in b (M's operands: its stage's view, its constants). */
static void drop_dead(Func *f, Block *b) {
    for (bool changed = true; changed;) {
        changed = false;
        int *uses = tir_use_counts(f);
        for (Inst *i = b->first; i;) {
            Inst *nx = i->next;
            if ((i->op == OP_LOCAL_VIEW || i->op == OP_CONST) && !uses[i->res[0]]) tir_inst_remove(i), changed = true;
            i = nx;
        }
        free(uses);
    }
}

static int rotate_loops(Func *f, Block *b) {
    int n = 0;
    for (Inst *i = b->first; i; i = i->next) {
        if (i->op == OP_WS_PRODUCER) continue;
        for (int g = 0; g < i->nregions; g++) n += rotate_loops(f, i->regions[g]);
        if (i->op != OP_FOR) continue;
        Rot r = {.f = f, .loop = i, .body = i->regions[0], .ninside = f->nvalues};
        r.inside = calloc(r.ninside, sizeof *r.inside);
        if (!r.inside) out_of_memory();
        for (int a = 0; a < r.body->nargs; a++) r.inside[r.body->args[a]] = true;
        tir_walk(r.body, mark_inside, &r);
        if (qualifies(&r)) {
            rotate(&r);
            drop_dead(f, r.body);
            drop_dead(f, r.pro->regions[0]);
            n++;
        }
        free(r.inside);
    }
    return n;
}

bool lower_overlap(Module *m, Diag *d) {
    (void)d;
    for (int k = 0; k < m->nfuncs; k++) {
        Func *f = m->funcs[k];
        if (f->overlap && f->producer_warps) rotate_loops(f, f->body);
    }
    return true;
}
