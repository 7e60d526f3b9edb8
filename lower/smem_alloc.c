/* smem_alloc.c - place every shared-memory scratch buffer.
 *
 * Algorithm:
 *   1. Number the instructions in program order (regions inline).  Each op
 *      that needs scratch (layout conversions, reshapes, cross-warp
 *      reductions and scans, gathers, stacks and unstacks, dot operand
 *      staging) gets a buffer whose size
 *      comes from smem_scratch_bytes() and whose live range is the op
 *      itself, inside a loop too (the barrier pass orders the reuse, back
 *      edges included).  A pipelining buffer (local_alloc) lives from its
 *      allocation to the last use of it or of a view of it, a use in a loop
 *      keeping it to the loop's end.
 *   2. Sort buffers by size (largest first) and give each the lowest
 *      16-byte-aligned offset that does not overlap a buffer with an
 *      intersecting live range (first fit), looking only at the buffers
 *      placed before it whose live ranges meet its own (near_before).
 *   3. The function's shared-memory total is the highest end offset.
 * Buffers with disjoint live ranges share space; the barrier pass then
 * orders the accesses to shared space between ops. */
#include "layout.h"
#include "passes.h"
#include "smem.h"
#include "../support/target.h"

#include <stdlib.h>

int smem_stack_chunk(const Func *f, const Inst *i) {
    const Type *t = f->values[i->op == OP_STACK ? i->res[0] : i->ops[0]].type;
    int n = t->shape[0];
    int64_t slab = tir_type_numel(t) / n * dtype_bytes(t->dt);
    if (slab * n <= SMEM_STACK_CHUNK_BYTES || !t->layout || layout_root(t->layout)->kind != LAYOUT_BLOCKED) return n;
    /* a blocked layout places dim 0 in bands of its coverage there (registers, then lanes, then warps): a register
     * whose index without the thread's part is in [k0, k0 + g) holds an element of those slabs in every thread when
     * g is a multiple of the coverage (and k0 of g) */
    int cov = layout_coverage(t->layout, 0);
    if (cov > n) return n; /* wrapped: replicas */
    int g = n;
    while (g > cov && slab * g > SMEM_STACK_CHUNK_BYTES) g /= 2;
    return g;
}

/* Distinct warp positions along dim d of a tensor in layout l. */
int smem_warps_along(const Type *t, int d) {
    if (!t->layout) return 1;
    ThreadTerm tt = layout_thread_term(t->layout, d);
    if (tt.warp_count <= 1 || tt.warp_mul <= 0) return 1; /* no warps along d */
    int per_warp = tt.warp_mul; /* elements covered by one warp along d */
    int distinct = t->shape[d] / per_warp;
    if (distinct < 1) distinct = 1;
    return distinct < tt.warp_count ? distinct : tt.warp_count;
}

bool smem_atomic_broadcasts(const Func *f, const Inst *i, const int *uses) {
    const Type *t = f->values[i->res[0]].type;
    if (!t || !(uses ? uses[i->res[0]] > 0 : tir_result_used(f, i->res[0]))) return false;
    if (!t->rank) return true; /* thread 0 issues a scalar atomic for the program */
    if (!t->layout) return false;
    LayoutRegs lr = layout_regs(t);
    bool replicated = (int64_t)lr.n * 32 * (f->num_warps > 0 ? f->num_warps : 1) > tir_type_numel(t);
    layout_regs_free(&lr);
    return replicated;
}

int smem_scratch_bytes(const Func *f, const Inst *i, bool wgmma) { return smem_scratch_bytes_counted(f, i, wgmma, NULL); }

int smem_scratch_bytes_counted(const Func *f, const Inst *i, bool wgmma, const int *uses) {
    switch (i->op) {
    case OP_ATOMIC_RMW:
    case OP_ATOMIC_CAS:
    case OP_ATOMIC_POLL: {
        if (!smem_atomic_broadcasts(f, i, uses)) return 0;
        const Type *t = f->values[i->res[0]].type;
        return (int)(tir_type_numel(t) * dtype_bytes(t->dt));
    }
    case OP_CONVERT_LAYOUT:
    case OP_RESHAPE: {
        const Type *t = f->values[i->ops[0]].type;
        if (i->op == OP_CONVERT_LAYOUT && layout_convert_is_local(t, f->values[i->res[0]].type)) return 0;
        return (int)(tir_type_numel(t) * dtype_bytes(t->dt));
    }
    case OP_REDUCE_FN:
    case OP_SCAN_FN: { /* the cross-warp step: one 8-byte slot per operand, row and warp position */
        const Type *t = f->values[i->ops[0]].type;
        int w = smem_warps_along(t, (int)i->a.ival);
        if (w <= 1) return 0;
        return (int)(tir_type_numel(t) / t->shape[i->a.ival] * w * 8 * i->nops);
    }
    case OP_GATHER: {
        const Type *t = f->values[i->ops[0]].type;
        if (i->a.ival2 && t->layout == f->values[i->res[0]].type->layout && layout_xor_partner(t, (int)i->a.ival, (int)i->a.ival2))
            return 0;
        return (int)(tir_type_numel(t) * dtype_bytes(t->dt));
    }
    case OP_UNSTACK: /* the whole stack, row-major: the operand of unstack, the result of stack (or a chunk of its slabs) */
    case OP_STACK: {
        const Type *t = f->values[i->op == OP_STACK ? i->res[0] : i->ops[0]].type;
        return (int)(tir_type_numel(t) / t->shape[0] * dtype_bytes(t->dt)) * smem_stack_chunk(f, i);
    }
    case OP_REDUCE:
    case OP_SCAN: {
        const Type *t = f->values[i->ops[0]].type;
        int ax = (int)i->a.ival;
        int w = smem_warps_along(t, ax);
        if (w <= 1) return 0;
        int64_t rows = tir_type_numel(t) / t->shape[ax];
        /* partials in the accumulation type (f16/bf16 as f32, narrow ints as i32), plus an i32 index for arg kinds */
        int per = (dtype_bytes(t->dt) < 4 ? 4 : dtype_bytes(t->dt)) + (tir_red_is_arg((RedKind)i->a.ival2) ? 4 : 0);
        return (int)(rows * w * per);
    }
    case OP_LOCAL_ALLOC: {
        const Type *t = f->values[i->res[0]].type;
        return (int)(tir_type_numel(t) * dtype_bytes(t->dt));
    }
    case OP_DOT: {
        const Type *a = f->values[i->ops[0]].type, *b = f->values[i->ops[1]].type;
        const Type *r = f->values[i->res[0]].type;
        if (r->layout && r->layout->kind == LAYOUT_MMA) { /* tensor cores: tiles in neither shared memory nor fragments are staged */
            bool as = a->layout && (a->layout->kind == LAYOUT_SHARED || a->layout->kind == LAYOUT_DOT_A);
            bool bs = b->layout && (b->layout->kind == LAYOUT_SHARED || b->layout->kind == LAYOUT_DOT_B);
            return (int)((as ? 0 : smem_dot_a_bytes((int)(tir_type_numel(a) * dtype_bytes(a->dt)), wgmma)) +
                         (bs && !smem_dot_b_restaged(b, wgmma) ? 0 : tir_type_numel(b) * dtype_bytes(b->dt)));
        }
        int64_t sa = (tir_type_numel(a) * dtype_bytes(a->dt) + 15) & ~15;
        return (int)(sa + tir_type_numel(b) * dtype_bytes(b->dt));
    }
    default: return 0;
    }
}

typedef struct Buf {
    Inst *inst;
    int start, end, size, offset, align;
} Buf;

typedef struct Ctx {
    Func *f;
    Buf *bufs;
    int n, cap;
    int counter;
    int *last_use; /* by ValueId: last instruction index using it (a use in a loop: the loop's end) */
    int *nuses;    /* by ValueId: its uses (tir_use_counts), whether an atomic's old value is read */
    bool wgmma;    /* sm_90a: tiles that wgmma reads start at 1024-byte boundaries (swizzle atoms) */
} Ctx;

static int count_insts(Block *b);

/* Live ranges of pipelining buffers: from their local_alloc to the last use of the buffer
 * or of a view of it; a use inside a loop keeps it live to the end of the outermost loop. */
static void uses(Ctx *c, Block *b, int loop_end) {
    for (Inst *i = b->first; i; i = i->next) {
        int idx = c->counter++;
        int at = loop_end >= 0 ? loop_end : idx;
        for (int k = 0; k < i->nops; k++)
            if (c->last_use[i->ops[k]] < at) c->last_use[i->ops[k]] = at;
        if (tir_is_loop(i->op)) {
            int e = loop_end >= 0 ? loop_end : idx + count_insts(i->regions[0]);
            uses(c, i->regions[0], e);
        } else {
            for (int r = 0; r < i->nregions; r++) uses(c, i->regions[r], loop_end);
        }
    }
}

static bool view_uses(Inst *i, void *ud) {
    Ctx *c = ud;
    if (i->op == OP_LOCAL_VIEW && c->last_use[i->ops[0]] < c->last_use[i->res[0]]) c->last_use[i->ops[0]] = c->last_use[i->res[0]];
    return true;
}

static int count_insts(Block *b) {
    int n = 0;
    for (Inst *i = b->first; i; i = i->next) {
        n++;
        for (int r = 0; r < i->nregions; r++) n += count_insts(i->regions[r]);
    }
    return n;
}

static void collect(Ctx *c, Block *b, int loop_start, int loop_end) {
    for (Inst *i = b->first; i; i = i->next) {
        int idx = c->counter++;
        int bytes = smem_scratch_bytes_counted(c->f, i, c->wgmma, c->nuses);
        if (bytes > 0) {
            if (c->n == c->cap) {
                c->cap = c->cap ? c->cap * 2 : 16;
                c->bufs = realloc(c->bufs, sizeof(Buf) * (size_t)c->cap);
                if (!c->bufs) out_of_memory();
            }
            Buf *bf = &c->bufs[c->n++];
            bf->inst = i;
            bf->size = (bytes + 15) & ~15;
            bf->align = c->wgmma && (i->op == OP_LOCAL_ALLOC || i->op == OP_DOT) ? 1024 : 16;
            /* a scratch buffer lives only during its op, even in a loop: the barrier pass
             * orders reuse between ops and across the back edge */
            bf->start = bf->end = idx;
            if (i->op == OP_LOCAL_ALLOC && c->last_use[i->res[0]] > bf->end) bf->end = c->last_use[i->res[0]];
        }
        if (tir_is_loop(i->op)) {
            int s = loop_start >= 0 ? loop_start : idx;
            int e = loop_start >= 0 ? loop_end : idx + count_insts(i->regions[0]);
            collect(c, i->regions[0], s, e);
        } else {
            for (int r = 0; r < i->nregions; r++) collect(c, i->regions[r], loop_start, loop_end);
        }
    }
}

/* After "needs N bytes of shared memory": a note at the op of the largest buffer (a batched dot's stack, a
 * layout conversion, ...), so that the error names the source line to change, not only the kernel. */
static void note_largest(Diag *d, Func *f, const Buf *b) {
    const Inst *i = b->inst;
    const Type *t = NULL;
    if (i->op == OP_STACK) t = f->values[i->res[0]].type;
    else if (i->op == OP_UNSTACK) t = f->values[i->ops[0]].type;
    if (t && t->rank == 3 && i->op == OP_STACK) {
        diag_note(d, i->loc,
                  "the largest buffer, %d bytes, is this batched dot's [%d, %d, %d] %s result, stacked whole through shared memory "
                  "because it is read whole afterwards (reduced, or stored with other values); store the result as the dot makes "
                  "it, or use a smaller batch or tile",
                  b->size, t->shape[0], t->shape[1], t->shape[2], dtype_name(t->dt));
        return;
    }
    if (t && t->rank == 3) {
        diag_note(d, i->loc,
                  "the largest buffer, %d bytes, is this batched dot's [%d, %d, %d] %s operand, split whole through shared memory "
                  "because it is not a load of its own (computed, or also used whole); load it right before the dot, or use a "
                  "smaller batch or tile",
                  b->size, t->shape[0], t->shape[1], t->shape[2], dtype_name(t->dt));
        return;
    }
    diag_note(d, i->loc, "the largest buffer, %d bytes, is for the operation here", b->size);
}

static int by_size(const void *a, const void *b) {
    const Buf *x = a, *y = b;
    if (x->size != y->size) return y->size - x->size;
    return x->start - y->start;
}

/* Step 2's neighbours: the buffers placed before buffer i whose live ranges meet its own, in placement order,
 * into cand (the others never move it).  Short ranges (at most SHORT_SPAN instructions; a scratch buffer's is
 * one) are found by binary search among those sorted by start, so a kernel of thousands of scratch buffers
 * costs each its few neighbours, not every buffer before it; the long ones (pipelining buffers) are checked
 * one by one. */
enum { SHORT_SPAN = 256 };
typedef struct Start {
    int start, idx;
} Start;
typedef struct Near {
    const Buf *bufs;
    Start *shorts; /* the short ranges by start (then index) */
    int nshort;
    int *longs, nlong; /* indices of the long ranges, ascending */
} Near;

static int by_start(const void *a, const void *b) {
    const Start *x = a, *y = b;
    return x->start != y->start ? x->start - y->start : x->idx - y->idx;
}
static int ascending(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

static int near_before(const Near *nr, int i, int *cand) {
    const Buf *b = nr->bufs, *me = &b[i];
    int n = 0, lo = 0, hi = nr->nshort;
    while (lo < hi) { /* the first short range starting at or after me->start - SHORT_SPAN */
        int mid = (lo + hi) / 2;
        if (nr->shorts[mid].start < me->start - SHORT_SPAN) lo = mid + 1;
        else hi = mid;
    }
    for (int k = lo; k < nr->nshort && nr->shorts[k].start <= me->end; k++) {
        int j = nr->shorts[k].idx;
        if (j < i && b[j].end >= me->start) cand[n++] = j;
    }
    for (int k = 0; k < nr->nlong && nr->longs[k] < i; k++) {
        int j = nr->longs[k];
        if (b[j].start <= me->end && me->start <= b[j].end) cand[n++] = j;
    }
    qsort(cand, (size_t)n, sizeof *cand, ascending);
    return n;
}

bool lower_smem_alloc(Module *m, Diag *d) {
    for (int k = 0; k < m->nfuncs; k++) {
        Func *f = m->funcs[k];
        const Target *tg = target_find(m->arch);
        Ctx c = {.f = f, .wgmma = tg && tg->mma == WGMMA};
        c.last_use = calloc(f->nvalues, sizeof(int));
        if (!c.last_use) out_of_memory();
        uses(&c, f->body, -1);
        tir_walk(f->body, view_uses, &c);
        c.counter = 0;
        c.nuses = tir_use_counts(f);
        collect(&c, f->body, -1, -1);
        free(c.nuses);
        free(c.last_use);
        if (c.n) qsort(c.bufs, (size_t)c.n, sizeof(Buf), by_size);
        Near nr = {.bufs = c.bufs, .shorts = malloc(sizeof(Start) * (size_t)(c.n + 1)), .longs = malloc(sizeof(int) * (size_t)(c.n + 1))};
        int *cand = malloc(sizeof(int) * (size_t)(c.n + 1));
        if (!nr.shorts || !nr.longs || !cand) out_of_memory();
        for (int i = 0; i < c.n; i++) {
            if (c.bufs[i].end - c.bufs[i].start <= SHORT_SPAN) nr.shorts[nr.nshort++] = (Start){c.bufs[i].start, i};
            else nr.longs[nr.nlong++] = i;
        }
        qsort(nr.shorts, (size_t)nr.nshort, sizeof(Start), by_start);
        int total = 0;
        for (int i = 0; i < c.n; i++) {
            int off = 0, al = c.bufs[i].align, ncand = near_before(&nr, i, cand);
            for (bool moved = true; moved;) {
                moved = false;
                for (int q = 0; q < ncand; q++) {
                    Buf *o = &c.bufs[cand[q]];
                    bool overlap = off < o->offset + o->size && o->offset < off + c.bufs[i].size;
                    if (overlap) {
                        off = (o->offset + o->size + al - 1) / al * al;
                        moved = true;
                    }
                }
            }
            c.bufs[i].offset = off;
            c.bufs[i].inst->a.smem_offset = off;
            c.bufs[i].inst->a.smem_bytes = c.bufs[i].size;
            if (off + c.bufs[i].size > total) total = off + c.bufs[i].size;
        }
        free(nr.shorts);
        free(nr.longs);
        free(cand);
        f->smem_bytes = total;
        int limit = tir_smem_limit(m->arch);
        if (total > limit) {
            diag_error(d, f->loc, "kernel '%s' needs %d bytes of shared memory, more than the %d a block can have on %s; use smaller tiles or fewer stages",
                       f->name, total, limit, m->arch);
            note_largest(d, f, &c.bufs[0]);
        }
        free(c.bufs);
    }
    return !d->nerrors;
}

/* Shared memory the kernel already asks for, at most: its buffers (1024-aligned) and the
 * largest scratch an op needs (smem_alloc places scratch by liveness, never beside itself). */
int smem_estimate(const Func *f, const Block *b, int *scratch) {
    int n = 0;
    for (const Inst *i = b->first; i; i = i->next) {
        int bytes = smem_scratch_bytes(f, i, true);
        if (i->op == OP_LOCAL_ALLOC) n += (bytes + 1023) / 1024 * 1024;
        else if (bytes > *scratch) *scratch = bytes;
        for (int r = 0; r < i->nregions; r++) n += smem_estimate(f, i->regions[r], scratch);
    }
    return n;
}
