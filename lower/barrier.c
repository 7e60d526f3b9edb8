/* barrier.c - order shared-memory accesses between ops.
 *
 * Every op with scratch (smem_offset >= 0) writes its buffer first and reads
 * it after an internal barrier.  Between two such ops the second one's
 * writes must wait for the first one's reads when their buffers overlap.
 * Algorithm:
 *   1. Walk in program order keeping the byte ranges that ops touched since
 *      the last barrier ("dirty").  A loop body starts dirty with everything
 *      its own body touches, because the previous iteration ran it (`for`
 *      and `while` alike: both have one body region and a back edge).
 *   2. Before an op whose range overlaps a dirty range, insert a barrier and
 *      clear the dirty set.  After the op, add its range.
 *   3. After an if, the dirty set is the union of both branches. */
#include "passes.h"

#include <string.h>

#define MAXR 64
typedef struct Dirty {
    int n;
    int lo[MAXR], hi[MAXR];
    bool all; /* too many ranges: treat everything as dirty */
} Dirty;

static bool overlaps(const Dirty *d, int lo, int hi) {
    if (d->all) return d->n > 0 || true;
    for (int i = 0; i < d->n; i++)
        if (lo < d->hi[i] && d->lo[i] < hi) return true;
    return false;
}

static void add(Dirty *d, int lo, int hi) {
    if (d->n == MAXR) {
        d->all = true;
        return;
    }
    d->lo[d->n] = lo;
    d->hi[d->n] = hi;
    d->n++;
}

static void merge(Dirty *a, const Dirty *b) {
    if (b->all) a->all = true;
    for (int i = 0; i < b->n; i++) add(a, b->lo[i], b->hi[i]);
}

typedef struct Ctx {
    Func *f;
} Ctx;

static void collect_ranges(Block *b, Dirty *d) {
    for (Inst *i = b->first; i; i = i->next) {
        if (i->a.smem_offset >= 0 && i->a.smem_bytes > 0) add(d, i->a.smem_offset, i->a.smem_offset + i->a.smem_bytes);
        for (int r = 0; r < i->nregions; r++) collect_ranges(i->regions[r], d);
    }
}

static void walk(Ctx *c, Block *b, Dirty *dirty) {
    for (Inst *i = b->first; i; i = i->next) {
        if (i->op == OP_BARRIER) {
            memset(dirty, 0, sizeof *dirty);
            continue;
        }
        if (tir_is_loop(i->op)) {
            Dirty body = *dirty;
            collect_ranges(i->regions[0], &body); /* previous iteration */
            walk(c, i->regions[0], &body);
            merge(dirty, &body);
            continue;
        }
        if (i->op == OP_IF) {
            Dirty acc = {0};
            for (int r = 0; r < i->nregions; r++) {
                Dirty br = *dirty;
                walk(c, i->regions[r], &br);
                merge(&acc, &br);
            }
            *dirty = acc;
            continue;
        }
        if (i->a.smem_offset >= 0 && i->a.smem_bytes > 0) {
            int lo = i->a.smem_offset, hi = lo + i->a.smem_bytes;
            if ((dirty->n || dirty->all) && overlaps(dirty, lo, hi)) {
                Inst *bar = tir_inst_new(c->f, OP_BARRIER, NULL, 0, NULL, 0, i->loc);
                tir_insert_before(i, bar);
                memset(dirty, 0, sizeof *dirty);
            }
            add(dirty, lo, hi);
        }
    }
}

bool lower_barrier(Module *m, Diag *d) {
    (void)d;
    for (int k = 0; k < m->nfuncs; k++) {
        Ctx c = {m->funcs[k]};
        Dirty dirty = {0};
        walk(&c, c.f->body, &dirty);
    }
    return true;
}
