/* merge_loads.c - a load identical to an earlier one in the same block, with
 * nothing between them that may write memory, reuses the earlier one's tile.
 *
 * Kernels written in Triton's style often read the same tile twice: a norm that
 * loads x for its statistics and again to normalize it, two helper fns inlined
 * into one body that each load the row, a gated projection whose two dots each
 * load the A tile.  A masked load or one with cache hints is inline PTX with
 * side effects (llvm_memory.c), which LLVM never merges, so without this pass
 * each copy is a second trip to memory.
 *
 * Algorithm, per kernel, each block on its own (an op's regions right after it):
 *   1. Walk the block in program order keeping `avail`, the mergeable loads seen
 *      since the last op that may write memory.  A mergeable load is plain: not
 *      volatile, not strong (ld.acquire / ld.relaxed.scope: they order or
 *      observe other threads' writes) and not `.cv` (fetch again each time).
 *   2. A mergeable load looks for an earlier load in `avail` with the same
 *      operands (pointer, mask, other: the same values, which canonicalize's
 *      CSE has already made of equal address arithmetic), attributes (cache
 *      operator, eviction policy, vector width) and result type.  On a hit its
 *      uses take the earlier result and it is deleted; otherwise it joins `avail`.
 *   3. Pure ops without regions, loads and yields leave `avail` alone.  Every other
 *      op empties it: a store or atomic (the language cannot say two pointers
 *      never alias, so any store may write what the load read), a barrier or
 *      fence, an async copy, asm, print or assert, and every loop or `if` (a
 *      loop's body may write, and a load after a loop is often reloaded on
 *      purpose, so as not to keep its tile live across the loop: see
 *      kernels/moe/experts.tile's `slot`).  A pure op's combine region (a
 *      reduce's, a scan's) holding only such ops leaves it alone.
 *   4. Each region of an op is walked with an empty `avail` of its own: a load in
 *      a loop body never merges with one before the loop (that would keep the
 *      earlier tile live across every iteration).
 * Merges stay within a block and stop at every write, so the earlier tile is
 * kept live only over straight-line pure code: the merge trades the later
 * load's trip to memory for keeping the earlier tile live from its own last use
 * to the later load's (pressure between the two may rise).  The pass
 * runs before assign_layout (both loads have no layout yet, so one choice
 * serves their uses) and software_pipeline (a dot operand loaded twice becomes
 * one load with two dot uses, staged once, as when the source shares it). */
#include "passes.h"

#include <stdlib.h>

typedef struct Avail {
    Inst **load;
    int n, cap;
} Avail;

static bool mergeable_load(const Inst *i) {
    return i->op == OP_LOAD && i->nres == 1 && !(i->a.cache & TIR_CACHE_ORDERED) && tir_cache_cop(i->a.cache) != COP_CV;
}

/* Step 3: ops that neither write memory nor order accesses; a reduce's or scan's combine
 * region counts when all it holds does too, a loop or if never. */
static bool keeps_avail(const Inst *i) {
    if (i->op != OP_YIELD && i->op != OP_LOAD && !(tir_op_info[i->op].flags & OPF_PURE)) return false;
    if (i->nregions && (tir_is_loop(i->op) || i->op == OP_IF)) return false;
    for (int r = 0; r < i->nregions; r++)
        for (const Inst *j = i->regions[r]->first; j; j = j->next)
            if (!keeps_avail(j)) return false;
    return true;
}

static bool loads_same(Func *f, const Inst *a, const Inst *b) {
    if (a->nops != b->nops || tir_vtype(f, a->res[0]) != tir_vtype(f, b->res[0])) return false;
    for (int k = 0; k < a->nops; k++)
        if (a->ops[k] != b->ops[k]) return false;
    const Attrs *x = &a->a, *y = &b->a;
    return x->cache == y->cache && x->vec == y->vec && x->sem == y->sem && x->scope == y->scope && x->ival == y->ival &&
           x->ival2 == y->ival2;
}

/* repl: by ValueId, the earlier load's result that a deleted load's uses take (0: none).  Every use comes after
 * its load in the walk's order, so each op's operands are rewritten when the walk reaches it: one pass over the
 * kernel, however many loads merge. */
static int merge_block(Func *f, Block *b, ValueId *repl) {
    Avail av = {0};
    int merged = 0;
    for (Inst *i = b->first, *next; i; i = next) {
        next = i->next;
        for (int k = 0; k < i->nops; k++)
            if (repl[i->ops[k]]) i->ops[k] = repl[i->ops[k]];
        if (mergeable_load(i)) {
            Inst *hit = NULL;
            for (int k = 0; k < av.n && !hit; k++)
                if (loads_same(f, av.load[k], i)) hit = av.load[k];
            if (hit) { /* step 2 */
                repl[i->res[0]] = hit->res[0];
                tir_inst_remove(i);
                merged++;
                continue;
            }
            if (av.n == av.cap) {
                av.cap = av.cap ? av.cap * 2 : 8;
                av.load = realloc(av.load, sizeof *av.load * (size_t)av.cap);
                if (!av.load) out_of_memory();
            }
            av.load[av.n++] = i;
            continue;
        }
        if (!keeps_avail(i)) av.n = 0; /* step 3 */
        for (int r = 0; r < i->nregions; r++) merged += merge_block(f, i->regions[r], repl); /* step 4 */
    }
    free(av.load);
    return merged;
}

bool lower_merge_loads(Module *m, Diag *d) {
    (void)d;
    for (int k = 0; k < m->nfuncs; k++) {
        Func *f = m->funcs[k];
        ValueId *repl = calloc(f->nvalues, sizeof *repl);
        if (!repl) out_of_memory();
        merge_block(f, f->body, repl);
        free(repl);
    }
    return true;
}
