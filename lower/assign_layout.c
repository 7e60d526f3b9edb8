/* assign_layout.c - give every tensor a distributed layout.
 *
 * Algorithm:
 *   1. Axis analysis (axisinfo.c) of every integer and pointer value.
 *   2. Anchors: each global load/store/atomic gets a coalesced blocked layout
 *      from its pointer tensor: dims ordered by contiguity (most contiguous
 *      fastest), `vec` elements per thread along the fastest dim, as many as
 *      contiguity, the mask's constancy and 16 bytes allow (and no more than
 *      the tile has per thread); alignment limits only the width of each
 *      access (step 5), so differently aligned operands share a layout.
 *   3. Backward walk (reverse program order, regions included): each op
 *      pushes the layout it wants onto its operands — element-wise ops and
 *      broadcasts want their result's layout, expand_dims wants the slice of
 *      it, a reduction wants the parent of its result's slice, a trans the
 *      permuted layout, loops their iteration arguments' layouts.  The first
 *      wish a value receives (its last user in program order) wins.
 *   4. Forward walk: each result takes its wish, or the layout its operands
 *      imply (reduce -> slice, expand_dims of a slice -> parent, trans ->
 *      permuted, load -> anchor; an element-wise op without a wish: that of
 *      the operand costliest to move, a broadcast costing what its operand
 *      does), or the default blocked layout of its shape.
 *      Where an operand's layout differs from what its user needs, cheap
 *      producers (constants, arange, splat and element-wise trees of them)
 *      are rematerialized in the needed layout, broadcasts and expand_dims
 *      from their operand moved instead; anything else gets a
 *      convert_layout (through shared memory when lowered).  So in
 *      `sum(t * w[None, :], axis=1)` the vector w moves, not the tile t.
 *   5. Each memory op records its vector width: the layout's elements per
 *      thread along the fastest dim, capped by the pointer's contiguity and
 *      alignment and by the constancy of the mask.
 * A `dot` that tensor cores can do anchors its accumulator in the mma.sync
 * layout (before the backward walk, so a loop carries the accumulator in it)
 * and converts its operands to the mma operand layouts.  Any other `dot`
 * stages its operands through shared memory itself, so it places no wish on
 * them; its accumulator takes the layout of whatever consumes it. */
#include "layout.h"
#include "passes.h"
#include "../support/target.h"

#include <stdlib.h>
#include <string.h>

typedef struct Ctx {
    Module *m;
    Func *f;
    AxisInfo *ai;
    const Layout **want;   /* by ValueId, for the values that existed before the pass */
    uint32_t nv;
    /* dots whose warps all split M (a chain: one dot's result feeds the next one's A) */
    Inst **rows;
    int nrows, caprows;
    /* layout chosen for each memory op in the backward walk, reused by the forward walk */
    Inst **mem_inst;
    const Layout **mem_layout;
    int nmem, capmem;
} Ctx;

static const Layout *intern(Ctx *c, Layout l) { return tir_layout_intern(c->m, &l); }

static const Layout *default_layout(Ctx *c, const Type *t) {
    return intern(c, layout_blocked_for(t->rank, t->shape, NULL, 1, c->f->num_warps));
}

static int floor_pow2(int64_t v) {
    int p = 1;
    while ((int64_t)p * 2 <= v && p < (1 << 20)) p *= 2;
    return p;
}

/* The default blocked layout of t with up to 16 bytes per thread along the last dim (as many
 * elements as each thread has, so no thread holds a replica): shared-memory round trips that
 * move whole vectors. */
static const Layout *vector_layout(Ctx *c, const Type *t) {
    int eb = dtype_bits(t->dt) / 8 < 1 ? 1 : dtype_bits(t->dt) / 8;
    int64_t per = tir_type_numel(t) / (32 * c->f->num_warps);
    int vec = 16 / eb;
    if (vec > t->shape[t->rank - 1]) vec = t->shape[t->rank - 1];
    if (per < vec) vec = floor_pow2(per < 1 ? 1 : per);
    return intern(c, layout_blocked_for(t->rank, t->shape, NULL, vec, c->f->num_warps));
}

/* f16 adds (bf16 from sm_90) may take two elements per thread: a pair is one packed
 * f16x2 atom (llvm_memory.c); every other atomic goes one element at a time. */
static bool packed_half_add(Ctx *c, const Inst *i) {
    if (i->op != OP_ATOMIC_RMW || i->a.ival2 != RED_SUM) return false;
    DType dt = tir_vtype(c->f, i->ops[0])->pointee->dt;
    return dt == DT_F16 || (dt == DT_BF16 && target_find(c->f->module->arch)->sm >= 90);
}

/* Step 2: the coalesced layout of a memory op. */
static const Layout *coalesced(Ctx *c, Inst *mi) {
    ValueId ptr = mi->ops[0];
    bool packed = packed_half_add(c, mi);
    bool atomic = (mi->op == OP_ATOMIC_RMW || mi->op == OP_ATOMIC_CAS || mi->op == OP_ATOMIC_POLL) && !packed;
    const Type *t = tir_vtype(c->f, ptr);
    const AxisInfo *a = &c->ai[ptr];
    int rank = t->rank, order[TIR_MAX_RANK];
    for (int i = 0; i < rank; i++) order[i] = rank - 1 - i;
    /* stable sort by contiguity, descending */
    for (int i = 1; i < rank; i++)
        for (int j = i; j > 0 && a->contig[order[j]] > a->contig[order[j - 1]]; j--) {
            int x = order[j];
            order[j] = order[j - 1];
            order[j - 1] = x;
        }
    int fast = order[0];
    int eb = dtype_bits(t->pointee->dt) / 8;
    if (eb < 1) eb = 1;
    int vec = 1;
    if (!atomic) {
        /* Elements per thread follow contiguity only: alignment limits the access width
         * (mem_vec), not the layout, so loads of differently aligned pointers over the same
         * index space share one layout and need no conversion between them. */
        vec = floor_pow2(a->contig[fast]);
        if (16 / eb < vec) vec = 16 / eb;
        if (packed && vec > 2) vec = 2;
        /* a mask that may change inside a run would split every access anyway: then one
         * element per thread keeps each instruction's accesses contiguous across lanes */
        int mask_idx = mi->op == OP_LOAD ? 1 : 2;
        if (mi->nops > mask_idx && mi->ops[mask_idx] < c->nv && tir_vtype(c->f, mi->ops[mask_idx])->rank) {
            int k = c->ai[mi->ops[mask_idx]].constancy[fast];
            if (k < vec) vec = floor_pow2(k);
        }
        int64_t per_thread = tir_type_numel(t) / (32 * c->f->num_warps);
        if (per_thread < vec) vec = per_thread < 1 ? 1 : (int)per_thread;
    }
    return intern(c, layout_blocked_for(rank, t->shape, order, vec, c->f->num_warps));
}

static void wish(Ctx *c, ValueId v, const Layout *l) {
    if (!v || !l || v >= c->nv) return;
    const Type *t = tir_vtype(c->f, v);
    if (!t->rank || c->want[v]) return;
    if (l->rank != t->rank) return;
    c->want[v] = l;
}

static const Layout *result_wish(Ctx *c, ValueId v) {
    const Type *t = tir_vtype(c->f, v);
    if (!t->rank) return NULL;
    return v < c->nv && c->want[v] ? c->want[v] : default_layout(c, t);
}

static void backward_block(Ctx *c, Block *b);

/* Tensor cores: the mma.sync accumulator layout for a dot, or NULL when the dot stays on
 * FMA (types without an MMA form, or tiles smaller than one instruction).  Warps split the
 * output tile, doubling along whichever dim leaves each warp the larger share. */
static bool rows_dot(Ctx *c, Inst *i) {
    for (int k = 0; k < c->nrows; k++)
        if (c->rows[k] == i) return true;
    return false;
}

static const Layout *mma_for(Ctx *c, Inst *i, const Layout **la, const Layout **lb) {
    const Type *at = tir_vtype(c->f, i->ops[0]), *bt = tir_vtype(c->f, i->ops[1]), *rt = tir_vtype(c->f, i->res[0]);
    int kw = 0, vpr = 0;
    if ((at->dt == DT_F16 || at->dt == DT_BF16) && bt->dt == at->dt && rt->dt == DT_F32) kw = 16, vpr = 2;
    else if (at->dt == DT_F16 && bt->dt == DT_F16 && rt->dt == DT_F16) kw = 16, vpr = 2; /* f16 accumulate */
    else if (at->dt == DT_F32 && bt->dt == DT_F32 && rt->dt == DT_F32 && i->a.allow_tf32) kw = 8, vpr = 1;
    else if (at->dt == DT_I8 && bt->dt == DT_I8 && rt->dt == DT_I32) kw = 32, vpr = 4;
    else if (dtype_bits(at->dt) == 8 && dtype_bits(bt->dt) == 8 && dtype_is_float(at->dt) && rt->dt == DT_F32) kw = 32, vpr = 4; /* native_f8 */
    if (!kw) return NULL;
    int M = rt->shape[0], N = rt->shape[1], K = at->shape[1];
    if (M < 16 || N < 8 || K < kw) return NULL;
    int wm = 1, wn = 1, nw = c->f->num_warps;
    const Target *tg = target_find(c->m->arch);
    /* wgmma (sm_90a): each warpgroup of 4 warps computes 64-row slabs of the whole N, so the
     * warps all split M, 16 rows each, as the mma.sync layout with warps [nw, 1] does */
    bool wgmma = tg && tg->mma == WGMMA && nw % 4 == 0 && M % (16 * nw) == 0 && N % 8 == 0 && rt->dt != DT_F16;
    if ((wgmma || rows_dot(c, i)) && M >= 16 * nw) wm = nw; /* every warp owns whole rows */
    while (wm * wn < nw) {
        if (M / (16 * wm) >= 2 && (M / wm >= N / wn || N / (8 * wn) < 2)) wm *= 2;
        else if (N / (8 * wn) >= 2) wn *= 2;
        else wm *= 2;
    }
    Layout m = {.kind = LAYOUT_MMA, .rank = 2};
    m.wpc[0] = (uint8_t)wm;
    m.wpc[1] = (uint8_t)wn;
    m.order[0] = 1;
    const Layout *ml = intern(c, m);
    Layout a = {.kind = LAYOUT_DOT_A, .rank = 2, .parent = ml, .kw = (uint8_t)kw, .vpr = (uint8_t)vpr};
    Layout b = a;
    b.kind = LAYOUT_DOT_B;
    if (la) *la = intern(c, a);
    if (lb) *lb = intern(c, b);
    return ml;
}

/* The dot whose result `v` is computed from by element-wise ops, or NULL. */
static Inst *dot_source(Ctx *c, ValueId v, int depth) {
    Inst *d = v < c->nv ? tir_val(c->f, v)->def : NULL;
    if (!d || depth > 8) return NULL;
    if (d->op == OP_DOT) return d;
    if (!(tir_op_info[d->op].flags & OPF_ELEMENTWISE)) return NULL;
    for (int k = 0; k < d->nops; k++) {
        Inst *s = tir_vtype(c->f, d->ops[k])->rank ? dot_source(c, d->ops[k], depth + 1) : NULL;
        if (s) return s;
    }
    return NULL;
}

static void add_rows(Ctx *c, Inst *i) {
    if (rows_dot(c, i)) return;
    if (c->nrows == c->caprows) {
        c->caprows = c->caprows ? 2 * c->caprows : 8;
        c->rows = realloc(c->rows, sizeof *c->rows * (size_t)c->caprows);
        if (!c->rows) out_of_memory();
    }
    c->rows[c->nrows++] = i;
}

/* Chained dots (attention: p = softmax(dot(q, k^T)); dot(p, v)) split only M over warps, so
 * the first one's accumulator is the second one's A fragments in the same threads. */
static bool find_chains(Inst *i, void *ud) {
    Ctx *c = ud;
    if (i->op != OP_DOT) return true;
    Inst *src = dot_source(c, i->ops[0], 0);
    if (src) {
        add_rows(c, src);
        add_rows(c, i);
    }
    return true;
}

static bool anchor_dots(Inst *i, void *ud) {
    Ctx *c = ud;
    if (i->op != OP_DOT) return true;
    const Layout *m = mma_for(c, i, NULL, NULL);
    if (m) {
        c->want[i->res[0]] = m;
        wish(c, i->ops[2], m);
    }
    return true;
}

/* The layout a value without a wish will most likely get in the forward walk: that of a
 * memory op or a wished value it is computed from. */
static const Layout *infer(Ctx *c, ValueId v, int depth) {
    if (v >= c->nv || depth > 8) return NULL;
    if (c->want[v]) return c->want[v];
    Inst *d = tir_val(c->f, v)->def;
    if (!d) return NULL;
    if (tir_is_loop(d->op)) { /* a loop result is computed by what its body yields */
        Inst *y = d->regions[0]->last;
        int k = tir_val(c->f, v)->index;
        return y && y->op == OP_YIELD && k < y->nops ? infer(c, y->ops[k], depth + 1) : NULL;
    }
    if (d->op == OP_REDUCE && tir_vtype(c->f, v)->rank) { /* a reduction leaves the slice of its operand's layout */
        const Layout *l = infer(c, d->ops[0], depth + 1);
        return l ? intern(c, layout_slice(l, (int)d->a.ival)) : NULL;
    }
    if (d->op == OP_EXPAND_DIMS) {
        const Layout *l = infer(c, d->ops[0], depth + 1);
        return l && l->kind == LAYOUT_SLICE && l->dim == d->a.ival ? l->parent : NULL;
    }
    if (tir_op_info[d->op].flags & OPF_ELEMENTWISE || d->op == OP_BROADCAST || d->op == OP_SCAN)
        for (int k = 0; k < d->nops; k++) {
            const Layout *l = tir_vtype(c->f, d->ops[k])->rank ? infer(c, d->ops[k], depth + 1) : NULL;
            if (l) return l;
        }
    return NULL;
}

static bool mma_family(const Layout *l) { return l && layout_root(l)->kind != LAYOUT_BLOCKED; }

/* The layout of a memory op: the tensor-core layout of the data it stores or that its
 * users want (an epilogue reading C or a bias), so the accumulator never moves between
 * threads; otherwise the coalesced layout of its pointer. */
static const Layout *mem_layout(Ctx *c, Inst *i) {
    for (int k = 0; k < c->nmem; k++)
        if (c->mem_inst[k] == i) return c->mem_layout[k];
    const Layout *l = NULL;
    if (i->op == OP_STORE || i->op == OP_ATOMIC_RMW) l = infer(c, i->ops[1], 0);
    else if (i->op == OP_ATOMIC_CAS) l = infer(c, i->ops[2], 0);
    else if (i->op == OP_LOAD && i->res[0] < c->nv) l = c->want[i->res[0]];
    if (!mma_family(l) || l->rank != tir_vtype(c->f, i->ops[0])->rank) l = coalesced(c, i);
    if (c->nmem == c->capmem) {
        c->capmem = c->capmem ? 2 * c->capmem : 16;
        c->mem_inst = realloc(c->mem_inst, sizeof *c->mem_inst * (size_t)c->capmem);
        c->mem_layout = realloc(c->mem_layout, sizeof *c->mem_layout * (size_t)c->capmem);
        if (!c->mem_inst || !c->mem_layout) out_of_memory();
    }
    c->mem_inst[c->nmem] = i;
    c->mem_layout[c->nmem++] = l;
    return l;
}

/* A wish that arrived after the producers were visited: hand it down element-wise chains. */
static void push_down(Ctx *c, ValueId v, const Layout *l, int depth) {
    if (v >= c->nv || depth > 8 || !tir_vtype(c->f, v)->rank) return;
    if (c->want[v] && c->want[v] != l) return;
    c->want[v] = l;
    Inst *d = tir_val(c->f, v)->def;
    if (!d || !(tir_op_info[d->op].flags & OPF_ELEMENTWISE || d->op == OP_BROADCAST || d->op == OP_SCAN)) return;
    for (int k = 0; k < d->nops; k++) push_down(c, d->ops[k], l, depth + 1);
}

/* Step 3 for one instruction. */
static void backward_inst(Ctx *c, Inst *i) {
    Func *f = c->f;
    switch (i->op) {
    case OP_LOAD:
    case OP_STORE:
    case OP_ATOMIC_RMW:
    case OP_ATOMIC_CAS:
    case OP_ATOMIC_POLL: {
        if (!tir_vtype(f, i->ops[0])->rank) return;
        const Layout *l = mem_layout(c, i);
        if (i->nres) c->want[i->res[0]] = l; /* the anchor decides */
        for (int k = 0; k < i->nops; k++) wish(c, i->ops[k], l);
        return;
    }
    case OP_EXPAND_DIMS: {
        const Layout *r = result_wish(c, i->res[0]);
        wish(c, i->ops[0], intern(c, layout_slice(r, (int)i->a.ival)));
        return;
    }
    case OP_REDUCE: {
        const Layout *r = i->res[0] < c->nv ? c->want[i->res[0]] : NULL;
        if (r && r->kind == LAYOUT_SLICE && r->dim == i->a.ival) wish(c, i->ops[0], r->parent);
        return;
    }
    case OP_TRANS: {
        const Layout *r = result_wish(c, i->res[0]);
        if (r->kind == LAYOUT_BLOCKED) {
            int32_t inv[TIR_MAX_RANK];
            for (int d = 0; d < r->rank; d++) inv[i->a.perm[d]] = d;
            wish(c, i->ops[0], intern(c, layout_permute(r, inv)));
        }
        return;
    }
    case OP_DOT:
        wish(c, i->ops[2], result_wish(c, i->res[0]));
        return;
    case OP_FOR:
    case OP_WHILE: {
        Block *body = i->regions[0];
        Inst *yl = body->last;
        int a0 = tir_loop_arg(i), o0 = tir_loop_init(i);
        for (int k = 0; k < i->nres; k++) {
            /* an anchor computing the carried value (a dot's accumulator, or row statistics
             * reduced from it) beats later users: the loop then never moves it */
            if (yl && yl->op == OP_YIELD && k < yl->nops && yl->ops[k] < c->nv && c->want[yl->ops[k]])
                wish(c, body->args[a0 + k], c->want[yl->ops[k]]);
            if (yl && yl->op == OP_YIELD && k < yl->nops) {
                const Layout *in = infer(c, yl->ops[k], 0);
                if (mma_family(in)) wish(c, body->args[a0 + k], in);
            }
            if (c->want[i->res[k]]) wish(c, body->args[a0 + k], c->want[i->res[k]]);
        }
        backward_block(c, body);
        /* a carried value nobody downstream cares about takes the layout its update
         * computes in (e.g. the load an accumulator adds), so the loop needs no conversion */
        Inst *y = body->last;
        for (int k = 0; k < i->nres; k++) {
            ValueId a = body->args[a0 + k];
            if (!c->want[a] && y && y->op == OP_YIELD && k < y->nops) wish(c, a, infer(c, y->ops[k], 0));
            if (c->want[a]) {
                wish(c, i->res[k], c->want[a]);
                wish(c, i->ops[o0 + k], c->want[a]);
                if (y && y->op == OP_YIELD && k < y->nops) push_down(c, y->ops[k], c->want[a], 0);
            }
        }
        return;
    }
    case OP_IF:
        for (int r = i->nregions - 1; r >= 0; r--) backward_block(c, i->regions[r]);
        return;
    case OP_YIELD: {
        Inst *p = i->parent->parent;
        if (!p || p->op == OP_REDUCE_FN || p->op == OP_SCAN_FN || p->op == OP_MAP_FN) return; /* a combine yields scalars */
        for (int k = 0; k < i->nops; k++) {
            ValueId target = tir_is_loop(p->op) ? i->parent->args[tir_loop_arg(p) + k] : p->res[k];
            if (c->want[target]) wish(c, i->ops[k], c->want[target]);
        }
        return;
    }
    default:
        if (tir_op_info[i->op].flags & OPF_ELEMENTWISE || i->op == OP_BROADCAST || i->op == OP_SCAN || i->op == OP_MAP_FN) {
            if (!i->nres || !tir_vtype(f, i->res[0])->rank || !c->want[i->res[0]]) return;
            for (int k = 0; k < i->nops; k++) wish(c, i->ops[k], c->want[i->res[0]]);
        }
        return;
    }
}

static void backward_block(Ctx *c, Block *b) {
    for (Inst *i = b->last; i; i = i->prev) backward_inst(c, i);
}

/* ---- step 4 ---- */

static const Layout *layout_of(Ctx *c, ValueId v) { return tir_vtype(c->f, v)->layout; }

static void set_layout(Ctx *c, ValueId v, const Layout *l) {
    Value *val = tir_val(c->f, v);
    if (!val->type->rank) return;
    val->type = tir_with_layout(c->m, val->type, l);
}

static bool cheap(Ctx *c, ValueId v, int depth) {
    Inst *d = tir_val(c->f, v)->def;
    if (!d || depth > 8) return false;
    switch (d->op) {
    case OP_CONST:
    case OP_ARANGE:
    case OP_SPLAT: return true;
    case OP_BROADCAST:
    case OP_EXPAND_DIMS: return cheap(c, d->ops[0], depth + 1);
    default:
        if (!(tir_op_info[d->op].flags & OPF_ELEMENTWISE)) return false;
        for (int k = 0; k < d->nops; k++)
            if (tir_vtype(c->f, d->ops[k])->rank && !cheap(c, d->ops[k], depth + 1)) return false;
        return true;
    }
}

/* A broadcast or expand_dims of a tensor: relayout moves its operand instead of it. */
static bool moved_through_operand(Ctx *c, const Inst *d) {
    return d && (d->op == OP_BROADCAST || d->op == OP_EXPAND_DIMS) && tir_vtype(c->f, d->ops[0])->rank;
}

/* What moving `v` to another layout costs, in elements: nothing for a cheap tree (rematerialized), the
 * operand's for a broadcast or expand_dims, else all of v. */
static int64_t move_cost(Ctx *c, ValueId v) {
    if (cheap(c, v, 0)) return 0;
    for (int depth = 0; depth < 8 && moved_through_operand(c, tir_val(c->f, v)->def); depth++) v = tir_val(c->f, v)->def->ops[0];
    const Inst *d = tir_val(c->f, v)->def;
    if (d && (d->op == OP_BROADCAST || d->op == OP_EXPAND_DIMS)) return 0; /* of a scalar */
    return tir_type_numel(tir_vtype(c->f, v));
}

/* Produce `v` in layout `l` right before `pos`: rematerialize cheap trees, and broadcasts and expand_dims
 * from their (smaller) operand in the layout they need; else convert. */
static ValueId relayout(Ctx *c, ValueId v, const Layout *l, Inst *pos) {
    const Type *t = tir_vtype(c->f, v);
    if (!t->rank || t->layout == l) return v;
    const Type *nt = tir_with_layout(c->m, t, l);
    Inst *d = tir_val(c->f, v)->def;
    if (cheap(c, v, 0) || moved_through_operand(c, d)) {
        ValueId ops[8];
        int n = d->nops < 8 ? d->nops : 8;
        for (int k = 0; k < n; k++) {
            const Type *ot = tir_vtype(c->f, d->ops[k]);
            const Layout *ol = l;
            if (d->op == OP_EXPAND_DIMS) ol = intern(c, layout_slice(l, (int)d->a.ival));
            ops[k] = ot->rank ? relayout(c, d->ops[k], ol, pos) : d->ops[k];
        }
        Inst *ni = tir_inst_new(c->f, d->op, ops, n, &nt, 1, d->loc);
        ni->a = d->a;
        tir_insert_before(pos, ni);
        return ni->res[0];
    }
    Inst *cv = tir_inst_new(c->f, OP_CONVERT_LAYOUT, &v, 1, &nt, 1, pos->loc);
    tir_insert_before(pos, cv);
    return cv->res[0];
}

/* v is defined inside the region(s) of `loop` (or is one of its block arguments). */
static bool defined_inside(Ctx *c, ValueId v, Inst *loop) {
    Value *val = tir_val(c->f, v);
    Block *b = val->def ? val->def->parent : val->block;
    for (; b; b = b->parent ? b->parent->parent : NULL)
        if (b->parent == loop) return true;
    return false;
}

static void need(Ctx *c, Inst *i, int k, const Layout *l) {
    if (!l || !tir_vtype(c->f, i->ops[k])->rank) return;
    i->ops[k] = relayout(c, i->ops[k], l, i);
}

static const Layout *chosen(Ctx *c, ValueId v) { return result_wish(c, v); }

static void forward_block(Ctx *c, Block *b);

static int mem_vec(Ctx *c, Inst *i, const Layout *l) {
    if (!l) return 1;
    if (mma_family(l)) {
        /* mma accumulators hold two consecutive columns; operand and slice layouts: one */
        if (l->kind != LAYOUT_MMA) return 1;
        const AxisInfo *p = &c->ai[i->ops[0]];
        int eb = dtype_bits(tir_vtype(c->f, i->ops[0])->pointee->dt) / 8;
        int mask_idx = i->op == OP_LOAD ? 1 : 2;
        bool ok = p->contig[1] >= 2 && p->div[1] >= 2 * (eb < 1 ? 1 : eb);
        for (int k = mask_idx; k < i->nops; k++)
            if (tir_vtype(c->f, i->ops[k])->rank && c->ai[i->ops[k]].constancy[1] < 2) ok = false;
        if (i->op == OP_LOAD && i->nops > 2) {
            Inst *od = tir_val(c->f, i->ops[2])->def;
            if (!od || (od->op != OP_CONST && od->op != OP_SPLAT)) ok = false;
        }
        return ok ? 2 : 1;
    }
    int fast = l->order[0];
    int vec = l->spt[fast];
    const AxisInfo *p = &c->ai[i->ops[0]];
    const Type *pt = tir_vtype(c->f, i->ops[0]);
    int eb = dtype_bits(pt->pointee->dt) / 8;
    if (eb < 1) eb = 1;
    if (p->contig[fast] < vec) vec = floor_pow2(p->contig[fast]);
    if (p->div[fast] / eb < vec) vec = p->div[fast] / eb < 1 ? 1 : floor_pow2(p->div[fast] / eb);
    int mask_idx = i->op == OP_LOAD ? 1 : 2;
    for (int k = mask_idx; k < i->nops; k++) /* mask, and a load's `other` */
        if (tir_vtype(c->f, i->ops[k])->rank && c->ai[i->ops[k]].constancy[fast] < vec)
            vec = floor_pow2(c->ai[i->ops[k]].constancy[fast]);
    if (i->op == OP_LOAD && i->nops > 2) {
        /* `other` must also be uniform over the vector: constants and splats are */
        Inst *od = tir_val(c->f, i->ops[2])->def;
        if (!od || (od->op != OP_CONST && od->op != OP_SPLAT)) vec = 1;
    }
    bool packed = packed_half_add(c, i);
    if (i->op == OP_ATOMIC_CAS || i->op == OP_ATOMIC_POLL || (i->op == OP_ATOMIC_RMW && !packed)) vec = 1;
    if (packed && vec > 2) vec = 2;
    return vec < 1 ? 1 : vec;
}

static const Layout *elementwise_layout(Ctx *c, Inst *i);

static void forward_inst(Ctx *c, Inst *i) {
    Func *f = c->f;
    switch (i->op) {
    case OP_LOAD:
    case OP_STORE:
    case OP_ATOMIC_RMW:
    case OP_ATOMIC_CAS:
    case OP_ATOMIC_POLL: {
        const Layout *l = tir_vtype(f, i->ops[0])->rank ? mem_layout(c, i) : NULL;
        i->a.vec = (uint8_t)mem_vec(c, i, l); /* from the original operands' axis info */
        for (int k = 0; k < i->nops; k++) need(c, i, k, l);
        if (i->nres) set_layout(c, i->res[0], l);
        return;
    }
    case OP_EXPAND_DIMS: {
        const Layout *ol = layout_of(c, i->ops[0]);
        int ax = (int)i->a.ival;
        const Layout *r;
        if (ol && ol->kind == LAYOUT_SLICE && ol->dim == ax) r = ol->parent;
        else {
            r = chosen(c, i->res[0]);
            need(c, i, 0, intern(c, layout_slice(r, ax)));
        }
        set_layout(c, i->res[0], r);
        return;
    }
    case OP_REDUCE: { /* argmax/argmin's index and value alike */
        const Layout *ol = layout_of(c, i->ops[0]);
        for (int k = 0; k < i->nres; k++)
            if (tir_vtype(f, i->res[k])->rank) set_layout(c, i->res[k], intern(c, layout_slice(ol, (int)i->a.ival)));
        return;
    }
    case OP_REDUCE_FN:
    case OP_SCAN_FN: {
        /* every operand in one blocked layout, where each thread's elements along the axis
         * are contiguous and come before the next lane's (the combine keeps that order) */
        const Layout *ol = layout_of(c, i->ops[0]);
        if (ol->kind != LAYOUT_BLOCKED) ol = default_layout(c, tir_vtype(f, i->ops[0]));
        for (int k = 0; k < i->nops; k++) need(c, i, k, ol);
        for (int k = 0; k < i->nres; k++)
            if (i->op == OP_SCAN_FN) set_layout(c, i->res[k], ol);
            else if (tir_vtype(f, i->res[k])->rank) set_layout(c, i->res[k], intern(c, layout_slice(ol, (int)i->a.ival)));
        forward_block(c, i->regions[0]);
        return;
    }
    case OP_SCAN: {
        /* the element-wise choice, but blocked: the scan's steps take a thread's elements along the
         * axis as one contiguous run before the next lane's, which a tensor-core layout's are not
         * (an mma accumulator's thread holds rows r and r + 8) */
        if (!tir_vtype(f, i->res[0])->rank) return;
        const Layout *r = elementwise_layout(c, i);
        if (layout_root(r)->kind != LAYOUT_BLOCKED) r = default_layout(c, tir_vtype(f, i->res[0]));
        set_layout(c, i->res[0], r);
        need(c, i, 0, r);
        return;
    }
    case OP_GATHER: {
        /* the source keeps its layout (it goes through shared memory); the index is read
         * register by register with the result, so it takes the result's layout */
        const Layout *r = chosen(c, i->res[0]);
        if (i->a.ival2 && r->kind != LAYOUT_BLOCKED) r = default_layout(c, tir_vtype(f, i->res[0]));
        set_layout(c, i->res[0], r);
        need(c, i, 1, r);
        if (i->a.ival2) need(c, i, 0, r); /* a butterfly partner: in the same registers, or a lane's */
        return;
    }
    case OP_UNSTACK:
    case OP_STACK:
        /* through shared memory: the operands keep their layouts, each result takes its wish, else
         * (a batched dot's operand slabs: a dot places none) a blocked layout reading 16 bytes at a time */
        for (int k = 0; k < i->nres; k++) {
            ValueId r = i->res[k];
            set_layout(c, r, r < c->nv && c->want[r] ? c->want[r] : vector_layout(c, tir_vtype(f, r)));
        }
        return;
    case OP_TRANS: {
        const Layout *ol = layout_of(c, i->ops[0]);
        if (ol->kind != LAYOUT_BLOCKED) {
            ol = default_layout(c, tir_vtype(f, i->ops[0]));
            need(c, i, 0, ol);
        }
        set_layout(c, i->res[0], intern(c, layout_permute(ol, i->a.perm)));
        return;
    }
    case OP_RESHAPE:
        need(c, i, 0, default_layout(c, tir_vtype(f, i->ops[0])));
        set_layout(c, i->res[0], chosen(c, i->res[0]));
        return;
    case OP_DOT: {
        const Layout *la, *lb;
        const Layout *mma = mma_for(c, i, &la, &lb);
        if (mma) {
            /* operands stay as loaded: the dot stages them in shared memory for ldmatrix;
             * an A computed in this very mma layout (a chained dot's result) becomes its
             * fragments without leaving the threads */
            (void)lb;
            const Layout *al = layout_of(c, i->ops[0]);
            if (al && al->kind == LAYOUT_MMA && al == mma && la->vpr == 2) need(c, i, 0, la);
            else if (la->vpr == 2 && al && al->kind != LAYOUT_SHARED) {
                /* an A the loop does not change (attention's Q) becomes fragments once,
                 * before the loop, instead of being staged again every iteration */
                Inst *pos = i;
                for (Inst *p = i->parent->parent; p && p->op == OP_FOR && !defined_inside(c, i->ops[0], p); p = p->parent->parent)
                    pos = p;
                if (pos != i) i->ops[0] = relayout(c, i->ops[0], la, pos);
            }
            need(c, i, 2, mma);
            set_layout(c, i->res[0], mma);
            return;
        }
        const Layout *r = chosen(c, i->res[0]);
        if (r->kind != LAYOUT_BLOCKED) r = default_layout(c, tir_vtype(f, i->res[0]));
        need(c, i, 2, r);
        set_layout(c, i->res[0], r);
        return;
    }
    case OP_FOR:
    case OP_WHILE: {
        Block *body = i->regions[0];
        int a0 = tir_loop_arg(i), o0 = tir_loop_init(i);
        for (int k = 0; k < i->nres; k++) {
            const Layout *l = chosen(c, body->args[a0 + k]);
            set_layout(c, body->args[a0 + k], l);
            set_layout(c, i->res[k], l);
            need(c, i, o0 + k, l);
        }
        forward_block(c, body);
        return;
    }
    case OP_IF:
        for (int k = 0; k < i->nres; k++) set_layout(c, i->res[k], chosen(c, i->res[k]));
        for (int r = 0; r < i->nregions; r++) forward_block(c, i->regions[r]);
        return;
    case OP_YIELD: {
        Inst *p = i->parent->parent;
        if (!p || p->op == OP_MAP_FN) return; /* a map_fn yields scalars */
        for (int k = 0; k < i->nops; k++) {
            ValueId target = tir_is_loop(p->op) ? i->parent->args[tir_loop_arg(p) + k] : p->res[k];
            need(c, i, k, layout_of(c, target));
        }
        return;
    }
    case OP_SPLAT:
    case OP_CONST:
    case OP_ARANGE:
        if (i->nres && tir_vtype(f, i->res[0])->rank) set_layout(c, i->res[0], chosen(c, i->res[0]));
        return;
    case OP_MAP_FN: {
        /* results and operands in one layout (the element-wise choice below); the region runs on
         * each group of a thread's registers */
        if (!tir_vtype(f, i->res[0])->rank) return;
        const Layout *r = elementwise_layout(c, i);
        for (int k = 0; k < i->nres; k++) set_layout(c, i->res[k], r);
        for (int k = 0; k < i->nops; k++) need(c, i, k, r);
        forward_block(c, i->regions[0]);
        return;
    }
    default: {
        if (!i->nres) return;
        if (!tir_vtype(f, i->res[0])->rank) return;
        const Layout *r = elementwise_layout(c, i);
        set_layout(c, i->res[0], r);
        if (i->op == OP_CONVERT_LAYOUT) return;
        for (int k = 0; k < i->nops; k++) need(c, i, k, r);
        return;
    }
    }
}

/* The layout of an element-wise result: the wish for it, else that of the operand that would cost
 * the most to move, else any operand's (`x * w[None, :]` keeps the tile x where it is and moves
 * the vector w, not the tile). */
static const Layout *elementwise_layout(Ctx *c, Inst *i) {
    Func *f = c->f;
    const Layout *r = i->res[0] < c->nv ? c->want[i->res[0]] : NULL;
    if (!r && i->op != OP_CONVERT_LAYOUT) {
        int64_t best = -1;
        for (int k = 0; k < i->nops; k++) {
            const Type *ot = tir_vtype(f, i->ops[k]);
            if (!ot->rank || !ot->layout || ot->layout->rank != ot->rank) continue;
            int64_t cost = move_cost(c, i->ops[k]);
            if (cost > best) best = cost, r = ot->layout;
        }
    }
    return r ? r : chosen(c, i->res[0]);
}

static void forward_block(Ctx *c, Block *b) {
    for (Inst *i = b->first; i; i = i->next) forward_inst(c, i);
}

/* Native f8 (sm_89 on): the front end widens f8 dot operands to f16 (exact); where the target's
 * tensor cores take the bytes themselves the dot reads the f8 values instead:
 *   - a dot that mma_for will give the warpgroup layout (sm_90a) must be one wgmma_fits in
 *     llvm_mma.c accepts: m64nNk32, f32 accumulator, both operands K-major from shared memory;
 *     warps a multiple of 4 splitting M in 16-row slabs, N a multiple of 8 (16 beyond 32), K of
 *     32, 64, 128 bytes or a multiple of 128 (else it keeps f16, which wgmma takes at any K);
 *   - on sm_89 a dot becomes mma.sync.m16n8k32 on e4m3/e5m2 (f32 accumulator, the s8
 *     fragments: four bytes per register, B kept [N][K]): M of 16 or more, N of 8 or more, K a
 *     multiple of 32.  On sm_90a a dot that is no wgmma keeps f16 mma.sync: the f8 form spilled
 *     there (ptxas -v, attention.tile's f8 kernels at their defaults: 4 B) where f16 did not. */
static DType f8_source(Func *f, ValueId v) {
    Inst *d = tir_val(f, v)->def;
    if (!d || d->op != OP_CAST || tir_vtype(f, v)->dt != DT_F16) return DT_COUNT;
    DType s = tir_vtype(f, d->ops[0])->dt;
    return s == DT_F8E4M3 || s == DT_F8E5M2 ? s : DT_COUNT;
}

static bool native_f8(Inst *i, void *ud) {
    Ctx *c = ud;
    if (i->op != OP_DOT) return true;
    const Type *rt = tir_vtype(c->f, i->res[0]);
    const Target *tg = target_find(c->m->arch);
    int nw = c->f->num_warps, M = rt->shape[0], N = rt->shape[1], K = tir_vtype(c->f, i->ops[0])->shape[1];
    if (rt->dt != DT_F32 || !target_has_f8(tg)) return true;
    bool warpgroup = tg->mma == WGMMA && nw % 4 == 0 && M % (16 * nw) == 0 && N % 8 == 0; /* as mma_for */
    if (warpgroup && ((N > 32 && N % 16) || N > 256 * 8 || !(K == 32 || K == 64 || K == 128 || K % 128 == 0))) return true;
    if (!warpgroup && (tg->mma != MMA_SYNC || M < 16 || N < 8 || K % 32)) return true;
    if (f8_source(c->f, i->ops[0]) == DT_COUNT || f8_source(c->f, i->ops[1]) == DT_COUNT) return true;
    for (int k = 0; k < 2; k++) i->ops[k] = tir_val(c->f, i->ops[k])->def->ops[0];
    return true;
}

static void run_func(Module *m, Func *f) {
    Ctx c = {.m = m, .f = f};
    tir_walk(f->body, native_f8, &c);
    c.ai = axisinfo_compute(f);
    c.nv = f->nvalues;
    c.want = calloc(c.nv, sizeof *c.want);
    if (!c.want) out_of_memory();
    tir_walk(f->body, find_chains, &c);
    tir_walk(f->body, anchor_dots, &c);
    backward_block(&c, f->body);
    forward_block(&c, f->body); /* new values it creates have ids >= c.nv */
    free(c.mem_inst);
    free(c.mem_layout);
    free(c.rows);
    free(c.want);
    free(c.ai);
}

bool lower_assign_layout(Module *m, Diag *d) {
    (void)d;
    for (int k = 0; k < m->nfuncs; k++) run_func(m, m->funcs[k]);
    return true;
}
