/* software_pipeline.c - overlap a loop's global loads (a dot's operands, or any load of a loop
 * without dots) with the math.
 *
 * Algorithm, for each innermost `for` (no `for` or `while` inside; `while` loops are left
 * alone) with num_stages = S >= 2 (the loop's own, range(..., num_stages=S), or the kernel's)
 * and a positive constant step:
 *   1. Find the tensor-core dots of the body (result in an mma layout) whose operand
 *      is a `load` of the same body that only dots use (one buffer serves several),
 *      with a pointer and mask computed inside the body only from the induction
 *      variable and values defined before the loop (or from index loads of such
 *      addresses, in a body that writes no global memory: step 2b), through a pointer
 *      argument the body writes nothing through (a tile stored in the loop and read back,
 *      an RNN's state, must be read after its store; a wait for what others write, atomic_poll
 *      or gdc_wait, counts as a write through every pointer), a zero `other`, accesses of 4, 8
 *      or 16 bytes, and its fast dim one the operand's shared tile can keep contiguous
 *      (A: K, or M for 16-bit types, tf32, and f8 read by wgmma -- wgmma reads 32- and 8-bit A
 *      from shared memory K-major only, so the dot loads those fragments from the stage into
 *      its A registers, but not a tf32 A beside a B copied element by element: ptxas spilled;
 *      B: N or K as loaded, K for 8-bit types (N too for a wgmma dot where each computing thread
 *      gets 64 bytes or more: the dot copies the stage K-major, restage_pays), N for tf32 on
 *      mma.sync; trans(A) or trans(B) of a tile, the stage keeping the tile as loaded).
 *      A tf32 B loaded N-contiguous for a wgmma dot is staged K-contiguous instead (wgmma
 *      reads 32-bit B only K-major), copied element by element (4-byte cp.async) to its
 *      transposed place, as Triton does.
 *   1c. In a loop with no dot given its own num_stages (range(..., num_stages=S)), its plain loads
 *      instead (a layer norm's or a softmax's column loop, a GEMV's K loop; eligible_plain): a rank-1 or rank-2 blocked tile whose address varies with the
 *      induction variable, under step 1's rules for addresses, masks and writes, 4-, 8- or 16-byte
 *      accesses, any constant `other` (the read selects it where the load's mask is off: the ring
 *      holds zeros there), while the rings fit the target's shared memory beside what the kernel
 *      already uses.  A rank-1 tile is staged as a one-row tile; each is read back, like step 1b's
 *      loads, into the load's own registers (a local_load of the stage's view).
 *   2. Before the loop: a [S, rows, cols] shared buffer per such operand; copies for
 *      iterations 0 .. S-2 (the address computation cloned with iv = lb + s*step,
 *      masked off when that iteration does not run), each iteration one group.
 *   3. At the top of the body, iteration j: wait until at most S-2 groups are pending
 *      (the group of iteration j has landed); a barrier (its data is visible to every
 *      warp, and every warp is done with the stage about to be refilled); copies for
 *      iteration j+S-1 into stage (j+S-1) % S; a commit (also when the copies are
 *      masked off, so group counting stays uniform); the dot reads stage j % S through
 *      a view that replaces the load.
 *   4. After the loop: wait for every group and a barrier, so later users of shared
 *      memory race neither the last copies nor the last reads.
 *   2a. On wgmma targets, when every such dot is a wgmma accumulating into a loop-carried
 *      value only it touches (acc = dot(a, b, acc)) whose B is a stage of the ring and whose A is
 *      one too (read through a descriptor, or a tf32 or f8 A the dot loads into the wgmma's
 *      registers, where they are few: llvm_codegen.c's emit_loop then runs two bodies a trip, so
 *      that the next iteration's loads take other registers than the ones the wgmma in flight
 *      reads; A_REGS_IN_FLIGHT), a chained dot's fragments or staged once before the loop
 *      (step 5) -- a dot that
 *      writes an operand to its staging buffer every iteration would overwrite what the wgmma of
 *      the iteration before may still read -- each leaves its wgmma group in flight
 *      (pending=1; the next iteration's wgmma accumulates on top), the ring gets S + 1 stages so
 *      the copies of iteration j + S - 1 never overwrite the stage iteration j - 1's wgmma may
 *      still read, and a wgmma_wait after the loop hands the accumulator back.
 *   2b. Index loads (paged decode's block table, a gather's row ids): cloned with the rest of
 *      the prologue's addresses, masked off where that iteration does not run; for the body,
 *      the index of iteration lb + (S-1)*step is loaded before the loop and, at the top of
 *      iteration j after its copies, that of j + S*step, carried to the next iteration (its
 *      latency hides behind the iteration's math instead of stalling the copies).
 *   5. On wgmma targets (sm_90a), a loop-invariant A operand of such a dot is written once
 *      to shared memory before the loop (local_store) and read from there (stage_invariant_a).
 * The replaced loads and their address computation die; canonicalize removes them.
 * The function's use counts and step 1c's shared-memory estimate are taken once and kept up to date as each
 * loop is rewritten (only the rewritten span is counted again), so a kernel of many loops costs time linear
 * in its size. */
#include "layout.h"
#include "passes.h"
#include "smem.h"
#include "../support/target.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct Ctx {
    Module *m;
    Func *f;
    int nwritten;      /* the pointer arguments the loop body writes through (stores, atomics), -1 for one it cannot tell */
    int written[8];
    uint32_t nmap; /* values that existed when the current loop's analysis began (later ones are neither inside nor mapped) */
    bool readonly; /* the loop body writes no global memory: a load in an address may be issued early */
    ValueId run;   /* while cloning an iteration's addresses: it runs (scalar i1), masking cloned loads */
    /* Per-function arrays by ValueId, grown as values are added and kept across the function's loops, so that a
     * kernel of many loops costs its size once rather than once a loop.  Stamps tell the current loop's (or
     * walk's, or cloning session's) entries from stale ones. */
    uint32_t cap;
    uint32_t *inside, istamp; /* == istamp: defined in the loop body */
    ValueId *map;             /* clone map for one cloning session, valid where mstamp_of == mstamp */
    uint32_t *mstamp_of, mstamp;
    uint32_t *seen, stamp;    /* by 2 * ValueId (+1 where indirect): visited in the current walk of a slice */
    int *uses;                /* every value's uses in the function, kept exact as the pass edits it */
    /* Shared memory the function already asks for (smem_estimate), kept as the sum of its buffers and a histogram
     * of its ops' scratch sizes (the largest counts); valid while smem_ok, recomputed in full when not. */
    bool smem_ok;
    int smem_bufs;
    int (*scratch)[2]; /* {bytes, ops needing that many} */
    int nscratch, capscratch;
    /* The span of the loop's block being rewritten: what lies strictly between wprev and wnext there had its
     * uses (and shared memory) taken out of the counts, which window_end adds back as it then stands. */
    bool in_window;
    Inst *wprev, *wnext;
    Block *wblock;
} Ctx;

static void *grow_zeroed(void *p, size_t old, size_t n, size_t size) {
    p = realloc(p, n * size);
    if (!p) out_of_memory();
    memset((char *)p + old * size, 0, (n - old) * size);
    return p;
}

/* The arrays by ValueId cover every value of the function. */
static void ensure_values(Ctx *c) {
    uint32_t n = c->f->nvalues;
    if (n <= c->cap) return;
    uint32_t cap = c->cap ? c->cap : 256;
    while (cap < n) cap *= 2;
    c->inside = grow_zeroed(c->inside, c->cap, cap, sizeof *c->inside);
    c->map = grow_zeroed(c->map, c->cap, cap, sizeof *c->map);
    c->mstamp_of = grow_zeroed(c->mstamp_of, c->cap, cap, sizeof *c->mstamp_of);
    c->seen = grow_zeroed(c->seen, 2 * (size_t)c->cap + 1, 2 * (size_t)cap + 1, sizeof *c->seen);
    c->uses = grow_zeroed(c->uses, c->cap, cap, sizeof *c->uses);
    c->cap = cap;
}

static bool is_inside(const Ctx *c, ValueId v) {
    return v < c->nmap && c->inside[v] == c->istamp;
}

/* A new cloning session: the map forgets every entry. */
static void map_clear(Ctx *c) {
    if (++c->mstamp == 0) memset(c->mstamp_of, 0, sizeof(uint32_t) * c->cap), c->mstamp = 1;
}

static ValueId map_get(const Ctx *c, ValueId v) {
    return c->mstamp_of[v] == c->mstamp ? c->map[v] : 0;
}

static void map_set(Ctx *c, ValueId v, ValueId to) {
    c->mstamp_of[v] = c->mstamp, c->map[v] = to;
}

/* A new walk over values' slices (slice_ok, varies, index_loads): each value is visited once, so a body whose
 * values are used many times over (`o = o + o`, thirty times) costs its size, not a path per use. */
static void walk_begin(Ctx *c) {
    if (++c->stamp == 0) memset(c->seen, 0, sizeof(uint32_t) * (2 * (size_t)c->cap + 1)), c->stamp = 1;
}

/* First visit of (v, k) in this walk. */
static bool first_visit(Ctx *c, ValueId v, int k) {
    uint32_t *s = &c->seen[2 * (size_t)v + (size_t)k];
    if (*s == c->stamp) return false;
    *s = c->stamp;
    return true;
}

/* The kept shared-memory estimate gains (sign 1) or loses (-1) op i, without its regions. */
static void smem_count(Ctx *c, const Inst *i, int sign) {
    if (!c->smem_ok) return;
    int bytes = smem_scratch_bytes(c->f, i, true);
    if (i->op == OP_LOCAL_ALLOC) {
        c->smem_bufs += sign * ((bytes + 1023) / 1024 * 1024);
        return;
    }
    if (bytes <= 0) return;
    for (int k = 0; k < c->nscratch; k++)
        if (c->scratch[k][0] == bytes) {
            c->scratch[k][1] += sign;
            if (c->scratch[k][1] < 0) c->smem_ok = false; /* an op never counted: the estimate is off; start again */
            return;
        }
    if (sign < 0) { /* likewise */
        c->smem_ok = false;
        return;
    }
    if (c->nscratch == c->capscratch) {
        c->capscratch = c->capscratch ? 2 * c->capscratch : 16;
        c->scratch = realloc(c->scratch, sizeof *c->scratch * (size_t)c->capscratch);
        if (!c->scratch) out_of_memory();
    }
    c->scratch[c->nscratch][0] = bytes, c->scratch[c->nscratch][1] = 1;
    c->nscratch++;
}

/* v's uses change by delta.  An atomic's scratch depends on whether its result is used at all
 * (smem_atomic_broadcasts): where that changes, the shared-memory estimate is recomputed. */
static void uses_add(Ctx *c, ValueId v, int delta) {
    int before = c->uses[v];
    c->uses[v] += delta;
    if ((before == 0) != (c->uses[v] == 0)) {
        const Inst *d = tir_val(c->f, v)->def;
        if (d && (d->op == OP_ATOMIC_RMW || d->op == OP_ATOMIC_CAS || d->op == OP_ATOMIC_POLL)) c->smem_ok = false;
    }
}

/* Op i and everything in its regions join (sign 1) or leave (-1) the counts. */
static void count_inst(Ctx *c, const Inst *i, int sign) {
    for (int k = 0; k < i->nops; k++) uses_add(c, i->ops[k], sign);
    smem_count(c, i, sign);
    for (int r = 0; r < i->nregions; r++)
        for (const Inst *j = i->regions[r]->first; j; j = j->next) count_inst(c, j, sign);
}

static void smem_count_block(Ctx *c, const Block *b) {
    for (const Inst *i = b->first; i; i = i->next) {
        smem_count(c, i, 1);
        for (int r = 0; r < i->nregions; r++) smem_count_block(c, i->regions[r]);
    }
}

/* Shared memory the function already asks for, as smem_estimate(f, f->body) + its scratch counts it. */
static int smem_have(Ctx *c) {
    if (!c->smem_ok) {
        c->smem_ok = true;
        c->smem_bufs = 0, c->nscratch = 0;
        smem_count_block(c, c->f->body);
    }
    int most = 0;
    for (int k = 0; k < c->nscratch; k++)
        if (c->scratch[k][1] > 0 && c->scratch[k][0] > most) most = c->scratch[k][0];
    return c->smem_bufs + most;
}

/* Before the loop is rewritten: its uses leave the counts (the analysis is done with them). */
static void window_begin(Ctx *c, Inst *loop) {
    c->wprev = loop->prev, c->wnext = loop->next, c->wblock = loop->parent;
    count_inst(c, loop, -1);
    c->in_window = true;
}

/* After: what now stands between wprev and wnext (the loop, its prologue, drain and staging) joins them. */
static void window_end(Ctx *c) {
    if (!c->in_window) return;
    c->in_window = false;
    ensure_values(c);
    for (Inst *i = c->wprev ? c->wprev->next : c->wblock->first; i != c->wnext; i = i->next) count_inst(c, i, 1);
}

/* Uses of `from` in the block and what it holds replaced by `to`, stopping after `left` (from's uses
 * there, as counted); returns how many are left. */
static int replace_uses_in(Block *b, Inst *start, ValueId from, ValueId to, int left) {
    for (Inst *i = start ? start : b->first; i && left > 0; i = i->next) {
        for (int k = 0; k < i->nops; k++)
            if (i->ops[k] == from) i->ops[k] = to, left--;
        for (int r = 0; r < i->nregions && left > 0; r++) left = replace_uses_in(i->regions[r], NULL, from, to, left);
    }
    return left;
}

static bool mark_inside(Inst *i, void *ud) {
    Ctx *c = ud;
    for (int k = 0; k < i->nres; k++) c->inside[i->res[k]] = c->istamp;
    for (int r = 0; r < i->nregions; r++)
        for (int a = 0; a < i->regions[r]->nargs; a++) c->inside[i->regions[r]->args[a]] = c->istamp;
    return true;
}

/* c->inside: the body's values (a new stamp, so no clearing). */
static void mark_body(Ctx *c, Block *body) {
    if (++c->istamp == 0) memset(c->inside, 0, sizeof(uint32_t) * c->cap), c->istamp = 1;
    for (int a = 0; a < body->nargs; a++) c->inside[body->args[a]] = c->istamp;
    tir_walk(body, mark_inside, c);
}

/* v depends, inside the body, only on pure region-free ops of the induction variable and,
 * where `indirect`, on loads whose pointer and mask do (an index loaded each iteration: a
 * paged cache's block table, a gather's row ids), in a body that writes no global memory. */
static bool slice_rec(Ctx *c, ValueId v, ValueId iv, int depth, bool indirect) {
    if (v == iv) return true;
    if (!is_inside(c, v)) return true;
    if (!first_visit(c, v, indirect)) return true; /* checked: where it failed, the whole walk has */
    Inst *d = tir_val(c->f, v)->def;
    if (!d || depth > 64 || d->nregions) return false;
    if (d->op == OP_LOAD) {
        if (!indirect || !c->readonly || (d->a.cache & TIR_CACHE_ORDERED)) return false;
        indirect = false; /* one level: the index load's own address is pure */
    } else if (!(tir_op_info[d->op].flags & OPF_PURE)) {
        return false;
    }
    for (int k = 0; k < d->nops; k++)
        if (!slice_rec(c, d->ops[k], iv, depth + 1, indirect)) return false;
    return true;
}

static bool slice_ok(Ctx *c, ValueId v, ValueId iv, bool indirect) {
    walk_begin(c);
    return slice_rec(c, v, iv, 0, indirect);
}

static bool writes_memory(const Block *b) {
    for (const Inst *i = b->first; i; i = i->next) {
        if (i->op == OP_STORE || i->op == OP_ATOMIC_RMW || i->op == OP_ATOMIC_CAS || i->op == OP_TMA_STORE ||
            i->op == OP_INLINE_ASM || i->op == OP_PRINT || i->op == OP_ASSERT || i->op == OP_ATOMIC_POLL || i->op == OP_GDC_WAIT)
            return true;
        for (int r = 0; r < i->nregions; r++)
            if (writes_memory(i->regions[r])) return true;
    }
    return false;
}

/* The pointer argument (its index) that pointer v is computed from, -1 when that is not clear. */
static int pointer_base(Func *f, ValueId v, int depth) {
    for (int a = 0; a < f->nargs; a++)
        if (f->args[a].value == v) return a;
    const Inst *d = tir_val(f, v)->def;
    if (!d || depth > 64) return -1;
    switch (d->op) {
    case OP_PTR_ADD:
    case OP_SPLAT:
    case OP_BROADCAST:
    case OP_EXPAND_DIMS:
    case OP_CONVERT_LAYOUT:
    case OP_RESHAPE:
    case OP_TRANS:
    case OP_MULTIPLE_OF:
    case OP_MAX_CONTIGUOUS:
    case OP_MAX_CONSTANCY: return pointer_base(f, d->ops[0], depth + 1);
    case OP_SELECT: {
        int a = pointer_base(f, d->ops[1], depth + 1);
        return a == pointer_base(f, d->ops[2], depth + 1) ? a : -1;
    }
    default: return -1;
    }
}

/* c->written: what the body writes global memory through (store, atomics, inline assembly). */
static void collect_writes(Ctx *c, const Block *b) {
    for (const Inst *i = b->first; i; i = i->next) {
        int base = -2;
        if (i->op == OP_STORE || i->op == OP_ATOMIC_RMW || i->op == OP_ATOMIC_CAS || i->op == OP_TMA_STORE)
            base = i->op == OP_TMA_STORE ? c->f->tmaps[i->a.ival].base : pointer_base(c->f, i->ops[0], 0);
        else if (i->op == OP_INLINE_ASM || i->op == OP_ATOMIC_POLL || i->op == OP_GDC_WAIT)
            base = -1; /* a poll waits for other programs' writes, gdc_wait for the previous grid's: to anything */
        if (base != -2) {
            bool seen = false;
            for (int k = 0; k < c->nwritten; k++) seen |= c->written[k] == base;
            if (!seen && c->nwritten < 8) c->written[c->nwritten++] = base;
            else if (!seen) c->written[7] = -1; /* too many to list: unknown */
        }
        for (int r = 0; r < i->nregions; r++) collect_writes(c, i->regions[r]);
    }
}

/* A load may be issued iterations ahead only when the loop writes nothing through its pointer argument
 * (or through pointers whose argument is unknown): a tile stored in this iteration or the last (an RNN's
 * h_{i+1}, a scratch tile stored, debug_barrier()'d and read back) must be read after the store. */
static bool unwritten(Ctx *c, const Inst *ld) {
    int base = pointer_base(c->f, ld->ops[0], 0);
    for (int k = 0; k < c->nwritten; k++)
        if (c->written[k] == -1 || c->written[k] == base || base < 0) return false;
    return true;
}

static ValueId emit(Ctx *c, Inst *pos, Op op, const ValueId *ops, int n, const Type *t);

/* Clone v's slice before `pos` with the induction variable replaced by iv2. */
static ValueId clone(Ctx *c, ValueId v, ValueId iv, ValueId iv2, Inst *pos) {
    if (v == iv) return iv2;
    if (!is_inside(c, v)) return v;
    if (map_get(c, v)) return map_get(c, v);
    Inst *d = tir_val(c->f, v)->def;
    ValueId ops[8];
    for (int k = 0; k < d->nops && k < 8; k++) ops[k] = clone(c, d->ops[k], iv, iv2, pos);
    const Type *rt = tir_vtype(c->f, v);
    int nops = d->nops;
    if (d->op == OP_LOAD) { /* an index load: masked off where the iteration does not run */
        const Type *pt = tir_vtype(c->f, ops[0]);
        const Type *mt = tir_type(c->m, DT_I1, pt->rank, pt->shape, NULL, pt->layout);
        ValueId run = pt->rank ? emit(c, pos, OP_SPLAT, &c->run, 1, mt) : c->run;
        ops[1] = nops > 1 ? emit(c, pos, OP_AND, (ValueId[]){ops[1], run}, 2, mt) : run;
        if (nops < 2) nops = 2;
    }
    Inst *n = tir_inst_new(c->f, d->op, ops, nops, &rt, 1, d->loc);
    n->a = d->a;
    tir_insert_before(pos, n);
    map_set(c, v, n->res[0]);
    return n->res[0];
}

static ValueId emit(Ctx *c, Inst *pos, Op op, const ValueId *ops, int n, const Type *t) {
    Inst *i = tir_inst_new(c->f, op, ops, n, &t, t ? 1 : 0, pos->loc);
    tir_insert_before(pos, i);
    return t ? i->res[0] : 0;
}

static ValueId cint(Ctx *c, Inst *pos, const Type *t, int64_t v) {
    Inst *i = tir_inst_new(c->f, OP_CONST, NULL, 0, &t, 1, pos->loc);
    i->a.ival = v;
    tir_insert_before(pos, i);
    return i->res[0];
}

static void emit_plain(Ctx *c, Inst *pos, Op op, int64_t ival) {
    Inst *i = tir_inst_new(c->f, op, NULL, 0, NULL, 0, pos->loc);
    i->a.ival = ival;
    tir_insert_before(pos, i);
}

typedef struct Cand {
    Inst *dot, *load; /* dot NULL: a plain load of step 1c (reg set: read back into its registers as 1b's are) */
    Inst *trans; /* B given as trans(load) of an [N][K] tile, or NULL */
    int operand;
    int contig; /* tile dim kept contiguous in shared memory */
    bool xpose; /* contig is not the loaded tile's contiguous dim: 4-byte copies */
    ValueId buf;
    int primary; /* index of the candidate that owns the buffer (a load feeding several dots) */
    bool reg;    /* step 1b: the load reaches the dot through a cast; read back into registers (local_load) */
    Inst *conv;  /* 1b: a convert_layout between the load and the cast, which the local_load replaces too */
} Cand;

/* A load the ring can take in its place: a zero `other`, its pointer and mask computed from the
 * induction variable (and index loads of it). */
static bool copyable(Ctx *c, const Inst *ld, ValueId iv, bool any_other) {
    if (!unwritten(c, ld)) return false;
    if (ld->nops > 2) {
        Inst *o = tir_val(c->f, ld->ops[2])->def;
        if (!o || o->op != OP_CONST || (!any_other && (o->a.is_float ? o->a.fval != 0 : o->a.ival != 0))) return false;
    }
    for (int j = 0; j < ld->nops && j < 2; j++)
        if (!slice_ok(c, ld->ops[j], iv, true)) return false;
    return true;
}

/* An 8-bit B loaded [K][N] (N contiguous) for a wgmma dot: wgmma reads 8-bit B K-major only and no copy
 * moves single bytes apart, so it is pipelined as loaded and the dot copies each stage K-major into its
 * scratch (llvm_mma.c restage_b: 16 K rows x 4 N columns a thread, 4-byte loads, prmt, 16-byte stores)
 * where that fills every computing thread, at least 64 bytes each.  Below that the blocks leave threads
 * idle and the registers' path (the load staged by the dot with byte stores) took fewer SASS
 * instructions: at 128x128x32 on 8 warps 68 against 104; at 64 bytes and more the copy wins (128x128x128
 * e4m3 on 8 warps: 250 to 174, load/store- to tensor-bound; i8 128x128x64 on 4 warps: 191 to 126). */
static bool restage_pays(Ctx *c, const Type *t, bool wgdot) {
    return wgdot && (int64_t)t->shape[0] * t->shape[1] >= (int64_t)64 * 32 * c->f->num_warps;
}

/* Step 1 for one operand.  B may also be trans(load) of an [N][K] tile with K contiguous
 * (attention's K, or a transposed B): the stage then keeps the loaded [N][K] tile, which is
 * the K-contiguous B the dot reads for i8 anyway.  Likewise A may be trans(load) of a [K][M]
 * tile (a transposed A): the stage keeps [K][M] and the dot reads it M-contiguous. */
static bool eligible(Ctx *c, Inst *dot, int k, Block *body, int *uses, int *contig, Inst **trans, bool *xpose) {
    ValueId v = dot->ops[k];
    Inst *ld = tir_val(c->f, v)->def;
    *trans = NULL;
    *xpose = false;
    if (ld && ld->op == OP_TRANS && ld->parent == body && uses[v] == 1 && ld->a.perm[0] == 1 && tir_vtype(c->f, v)->dt != DT_F32) {
        *trans = ld;
        v = ld->ops[0];
        ld = tir_val(c->f, v)->def;
    }
    if (!ld || ld->op != OP_LOAD || ld->parent != body || (*trans && uses[v] != 1)) return false;
    if (ld->a.cache) return false; /* a cache hint or volatile asks for this load as written */
    const Type *t = tir_vtype(c->f, v);
    if (t->rank != 2 || !t->layout || t->layout->kind != LAYOUT_BLOCKED) return false;
    int eb = dtype_bits(t->dt) / 8;
    int bytes = (ld->a.vec ? ld->a.vec : 1) * eb;
    bool tensor_map = false; /* a tile the tma pass reads whole: the accesses' width does not matter */
    /* contig: the loaded tile's dim kept contiguous in the stage, as loaded.  For B either N ([K][N],
     * read with ldmatrix.trans) or K ([N][K], plain ldmatrix), except that i8 fragments need K and
     * tf32 ones N; trans(B) of a K-contiguous [N][K] tile.  For A K ([M][K], plain ldmatrix) or, for
     * 16-bit types, M ([K][M], or trans() of a [K][M] tile: ldmatrix.trans, wgmma's transposed A);
     * tf32 too (mma.sync: 32-bit loads; wgmma, which reads tf32 A from shared memory K-major only:
     * loaded from the stage into its A registers), f8 only for wgmma (likewise, a byte a load;
     * ldmatrix.trans moves 16-bit elements), i8 never.  On wgmma a tf32 B may be K-contiguous too. */
    const Target *tg = target_find(c->m->arch);
    bool wgdot = layout_is_warpgroup_mma(tir_vtype(c->f, dot->res[0])->layout) && tg && tg->mma == WGMMA;
    if (k == 0) {
        *contig = t->layout->order[0];
        int vc = *trans ? 1 - *contig : *contig; /* the dot's A: 1 K-contiguous, 0 M-contiguous */
        if (vc == 0 && eb != 2 && t->dt != DT_F32 && !(eb == 1 && wgdot && dtype_is_float(t->dt))) return false;
        if (vc == 0 && t->shape[*trans ? 1 : 0] < 16) return false; /* ldmatrix.trans reads 8 M a matrix, two matrices */
    } else {
        *contig = *trans ? 1 : t->layout->order[0];
    }
    if (bytes != 4 && bytes != 8 && bytes != 16) {
        tensor_map = (bytes < 4 || bytes % 4) && t->layout->order[0] == *contig &&
                     tma_can_load(c->m, c->f, ld->ops[0], ld->nops > 1 ? ld->ops[1] : 0, *contig);
        if (!tensor_map) return false;
    }
    if (k == 1 && !*trans && t->dt == DT_F32 && *contig == 1 && wgdot && t->shape[0] * eb % 32 == 0)
        *contig = 0, *xpose = true; /* tf32 wgmma: B K-major, K rows of 32, 64 or 128 bytes */
    if (t->layout->order[0] != *contig && !*xpose) return false;
    if (k == 1 && !*trans && ((dtype_bits(t->dt) == 8 && *contig != 0 && !restage_pays(c, t, wgdot)) ||
                              (t->dt == DT_F32 && *contig != 1 && !*xpose && !wgdot)))
        return false;
    if (t->shape[1 - *contig] < 8 || t->shape[*contig] * eb < 16) return false;
    return copyable(c, ld, body->args[0], false);
}

/* Step 1b: an operand that reaches its dot through a conversion of a load (a dequantizing cast, maybe
 * transposed after it: paged decode's f8 K and V, a GEMM's int8 or f8 weights): the load's tile is
 * staged as it was loaded and read back into registers (local_load) where the load was; the cast, the
 * transpose and the dot stay as they were (the dot stages its operand itself).  A convert_layout
 * between the load and the cast goes too where the local_load can read the stage in its layout by
 * vectors (the same contiguous dim; *conv set): element by element, each with its own swizzled
 * address, cost paged decode's K 40-70 registers more than the conversion through scratch, which
 * then stays.  Returns the load. */
static Inst *eligible_reg(Ctx *c, Inst *dot, int k, Block *body, int *uses, int *contig, Inst **conv) {
    ValueId v = dot->ops[k];
    Inst *d = tir_val(c->f, v)->def;
    if (d && d->op == OP_TRANS && d->parent == body && uses[v] == 1) {
        v = d->ops[0];
        d = tir_val(c->f, v)->def;
    }
    if (!d || d->op != OP_CAST || d->parent != body || uses[v] != 1) return NULL;
    ValueId lv = d->ops[0];
    Inst *ld = tir_val(c->f, lv)->def;
    *conv = NULL;
    Inst *cv = NULL;
    if (ld && ld->op == OP_CONVERT_LAYOUT && ld->parent == body && uses[lv] == 1) {
        cv = ld;
        lv = ld->ops[0];
        ld = tir_val(c->f, lv)->def;
    }
    if (!ld || ld->op != OP_LOAD || ld->parent != body || uses[lv] != 1 || ld->a.cache) return NULL;
    const Type *t = tir_vtype(c->f, lv);
    if (t->rank != 2 || !t->layout || t->layout->kind != LAYOUT_BLOCKED) return NULL;
    const Layout *cl = cv ? tir_vtype(c->f, cv->res[0])->layout : NULL;
    if (cl && cl->kind == LAYOUT_BLOCKED && cl->order[0] == t->layout->order[0]) *conv = cv;
    int eb = dtype_bits(t->dt) / 8, bytes = (ld->a.vec ? ld->a.vec : 1) * eb;
    if (eb < 1 || (bytes != 4 && bytes != 8 && bytes != 16)) return NULL;
    *contig = t->layout->order[0];
    if (t->shape[*contig] * eb < 16) return NULL;
    return copyable(c, ld, body->args[0], false) ? ld : NULL;
}

/* v's slice in the body reaches the induction variable: the load reads other memory each iteration (one
 * whose address does not change is loop-invariant, nothing to stream). */
static bool varies(Ctx *c, ValueId v, ValueId iv, int depth) {
    if (v == iv) return true;
    if (!is_inside(c, v) || depth > 64 || !first_visit(c, v, 0)) return false;
    Inst *d = tir_val(c->f, v)->def;
    for (int k = 0; d && k < d->nops; k++)
        if (varies(c, d->ops[k], iv, depth + 1)) return true;
    return false;
}

/* Step 1c: a load of the body no dot reads (a layer norm's column loop, a softmax's row loop, a GEMV's K
 * loop): a rank-1 or rank-2 tile of a blocked layout, read each iteration at an address of the induction
 * variable, in accesses cp.async can make (4, 8 or 16 bytes), and copyable -- except that any constant
 * `other` will do: the ring fills a masked-off lane with zero, so the read selects `other` there under the
 * load's own mask (that mask stays computed in the body).  *contig: the stage's contiguous dim (1 for a
 * rank-1 tile, kept as one row). */
static bool eligible_plain(Ctx *c, Inst *ld, Block *body, int *contig) {
    if (ld->op != OP_LOAD || ld->a.cache) return false; /* a cache hint or volatile asks for this load as written */
    const Type *t = tir_vtype(c->f, ld->res[0]);
    if ((t->rank != 1 && t->rank != 2) || !t->layout || t->layout->kind != LAYOUT_BLOCKED) return false;
    if (!dtype_is_float(t->dt) && !dtype_is_int(t->dt)) return false;
    int eb = dtype_bits(t->dt) / 8, bytes = (ld->a.vec ? ld->a.vec : 1) * eb;
    if (eb < 1 || (bytes != 4 && bytes != 8 && bytes != 16)) return false;
    if (ld->nops > 2 && tir_vtype(c->f, ld->ops[2]) != t) return false; /* selected under the mask */
    *contig = t->rank == 1 ? 1 : t->layout->order[0];
    walk_begin(c);
    return varies(c, ld->ops[0], body->args[0], 0) && copyable(c, ld, body->args[0], true);
}


/* The index loads in the addresses of the candidates' loads (slice_ok's `indirect`), at most max. */
static void index_loads(Ctx *c, ValueId v, ValueId iv, Inst **out, int *n, int max) {
    if (v == iv || !is_inside(c, v) || !first_visit(c, v, 0)) return;
    Inst *d = tir_val(c->f, v)->def;
    if (d->op == OP_LOAD) {
        for (int k = 0; k < *n; k++)
            if (out[k] == d) return;
        if (*n < max) out[(*n)++] = d;
        return;
    }
    for (int k = 0; k < d->nops; k++) index_loads(c, d->ops[k], iv, out, n, max);
}

/* Copies of one iteration's tiles: operands cloned with the induction variable `it`,
 * masked off unless `run` (scalar i1) holds; the index loads idx[0..nidx) are not cloned but
 * read from the values pre[] (loaded an iteration earlier), where pre is given. */
static void issue(Ctx *c, Cand *cs, int n, ValueId iv, ValueId it, ValueId run, ValueId stage, Inst *pos,
                  Inst *const *idx, const ValueId *pre, int nidx) {
    Func *f = c->f;
    map_clear(c);
    c->run = run;
    for (int k = 0; pre && k < nidx; k++) map_set(c, idx[k]->res[0], pre[k]);
    for (int k = 0; k < n; k++) {
        if (cs[k].primary != k) continue; /* its load is copied once, by its primary */
        Inst *ld = cs[k].load;
        ValueId ptr = clone(c, ld->ops[0], iv, it, pos);
        const Type *pt = tir_vtype(f, ptr);
        const Type *mt = tir_type(c->m, DT_I1, pt->rank, pt->shape, NULL, pt->layout);
        ValueId mask = emit(c, pos, OP_SPLAT, &run, 1, mt);
        if (ld->nops > 1) {
            ValueId old = clone(c, ld->ops[1], iv, it, pos);
            mask = emit(c, pos, OP_AND, (ValueId[]){old, mask}, 2, mt);
        }
        Inst *cp = tir_inst_new(f, OP_ASYNC_COPY, (ValueId[]){cs[k].buf, stage, ptr, mask}, 4, NULL, 0, ld->loc);
        cp->a.vec = ld->a.vec && !cs[k].xpose ? ld->a.vec : 1;
        tir_insert_before(pos, cp);
    }
    emit_plain(c, pos, OP_ASYNC_COMMIT, 0);
}

static void append(Arena *a, ValueId **arr, int *n, ValueId v) {
    *arr = arena_grow(a, *arr, sizeof(ValueId) * (size_t)*n, sizeof(ValueId) * (size_t)(*n + 1));
    (*arr)[(*n)++] = v;
}

/* A new loop-carried value of `loop` starting at `init`: its block argument (and a result);
 * the caller appends the next value to the yield, in the order of the arguments. */
static ValueId carry_arg(Ctx *c, Inst *loop, ValueId init) {
    Func *f = c->f;
    Arena *a = f->module->arena;
    const Type *t = tir_vtype(f, init);
    append(a, &loop->ops, &loop->nops, init);
    ValueId arg = tir_block_add_arg(f, loop->regions[0], t);
    append(a, &loop->res, &loop->nres, tir_new_value(f, t, loop, loop->nres));
    return arg;
}

/* A new loop-carried stage index of `loop` starting at `init`: its block argument, advanced
 * modulo S just before the yield.  Returns the block argument. */
static ValueId carry_stage(Ctx *c, Inst *loop, ValueId init, int S) {
    Func *f = c->f;
    Arena *a = f->module->arena;
    const Type *t = tir_vtype(f, init);
    ValueId arg = carry_arg(c, loop, init);
    Inst *y = loop->regions[0]->last;
    ValueId next = emit(c, y, OP_ADD, (ValueId[]){arg, cint(c, y, t, 1)}, 2, t);
    const Type *i1 = tir_scalar(c->m, DT_I1);
    Inst *wrap = tir_inst_new(f, OP_CMP, (ValueId[]){next, cint(c, y, t, S)}, 2, &i1, 1, y->loc);
    wrap->a.ival2 = CMP_EQ;
    tir_insert_before(y, wrap);
    ValueId v = emit(c, y, OP_SELECT, (ValueId[]){wrap->res[0], cint(c, y, t, 0), next}, 3, t);
    append(a, &y->ops, &y->nops, v);
    return arg;
}

/* Step 2a: on wgmma targets, every candidate dot is a wgmma (warps [4k, 1]) whose accumulator
 * only it touches in the loop: acc = dot(a, b, acc), the loop-carried argument used by the dot
 * alone and the result by the yield alone.  Then each dot leaves its wgmma group in flight
 * (pending=1) and the next iteration's dot accumulates on top of it. */
static int carried_index(Block *body, ValueId v) {
    for (int a = 1; a < body->nargs; a++)
        if (body->args[a] == v) return a;
    return -1;
}

/* Step 5's test: dot i's A is a loop-invariant register tile of f16/bf16 used by it alone (c->inside
 * marks the loop's values), which goes to shared memory once before the loop. */
static bool invariant_a(Ctx *c, const Inst *i, const int *uses) {
    ValueId v = i->ops[0];
    const Type *t = tir_vtype(c->f, v);
    return v < c->nmap && !is_inside(c, v) && uses[v] == 1 && t->rank == 2 && t->layout && t->layout->kind != LAYOUT_SHARED &&
           (t->dt == DT_F16 || t->dt == DT_BF16);
}

/* Is operand `op` of dot d one of the ring's tiles (a view of a stage, not read back into registers)? */
static bool piped(const Cand *cs, int n, const Inst *d, int op) {
    for (int j = 0; j < n; j++)
        if (cs[j].dot == d && cs[j].operand == op && !cs[j].reg) return true;
    return false;
}

/* Candidate k is an M-contiguous A of a type other than f16/bf16 (tf32, f8): where it is a wgmma's, the
 * dot loads its stage into the wgmma's A registers (wgmma reads 32- and 8-bit A K-major only). */
static bool a_to_regs(Ctx *c, const Cand *k) {
    DType dt = tir_vtype(c->f, k->dot->ops[0])->dt;
    return k->operand == 0 && !k->reg && (k->trans ? 1 - k->contig : k->contig) == 0 && dt != DT_F16 && dt != DT_BF16;
}

/* An A the dot loads from its stage into the wgmma's registers (a_to_regs) stays in flight only where one
 * set of those registers is at most A_REGS_IN_FLIGHT a thread: the LLVM lowering gives each of two loop
 * bodies a trip a set of its own, both live across the loop, and with 8 a set (tf32 at BK 16, f8 at BK 64)
 * or 16 (f8 at BK 128) ptxas spilled 8-104 B at tile_gemm's warp-specialized trans_a + trans_b launches
 * with beta, bias and GELU (values kept across the persistent loop), where waiting at once it spills
 * nothing; f8 at BK 32 (4 a set) did not. */
enum { A_REGS_IN_FLIGHT = 4 };

/* Registers a thread holds of the dot's A, as wgmma fragments (4 per 16 x 32-byte slab a warp owns). */
static int a_regs_per_set(Ctx *c, const Inst *dot) {
    const Type *at = tir_vtype(c->f, dot->ops[0]), *rt = tir_vtype(c->f, dot->res[0]);
    if (!layout_is_warpgroup_mma(rt->layout)) return 0; /* no wgmma: refused below */
    int rows = 16 * rt->layout->wpc[0];
    return (rt->shape[0] + rows - 1) / rows * (at->shape[1] * dtype_bits(at->dt) / 8 / 32) * 4;
}

static bool async_ok(Ctx *c, Block *body, const Cand *cs, int n, const int *uses) {
    const Target *tg = target_find(c->m->arch);
    if (!tg || tg->mma != WGMMA || !n) return false;
    for (int k = 0; k < n; k++) {
        if (cs[k].reg) return false; /* the dot stages a register operand itself: its wgmma waits */
        if (a_to_regs(c, &cs[k]) && a_regs_per_set(c, cs[k].dot) > A_REGS_IN_FLIGHT) return false;
    }
    /* so does a dot whose B, or whose A (unless it is a chained dot's fragments or staged once before the
     * loop, step 5), is not a stage of the ring: its next iteration would overwrite the staging buffer
     * this iteration's wgmma may still read */
    for (int k = 0; k < n; k++) {
        Inst *d = cs[k].dot;
        const Type *at = tir_vtype(c->f, d->ops[0]);
        if (!piped(cs, n, d, 1)) return false;
        if (!piped(cs, n, d, 0) && !(at->layout && at->layout->kind == LAYOUT_DOT_A) && !invariant_a(c, d, uses)) return false;
    }
    Inst *y = body->last;
    for (int k = 0; k < n; k++) {
        Inst *d = cs[k].dot;
        if (!layout_is_warpgroup_mma(tir_vtype(c->f, d->res[0])->layout)) return false;
        DType dt = tir_vtype(c->f, d->res[0])->dt, in = tir_vtype(c->f, d->ops[0])->dt;
        if (dt != DT_F32 && dt != DT_I32) return false;
        if (in != DT_F16 && in != DT_BF16) { /* tf32, i8, f8: wgmma reads B only K-major (kept [N][K]) */
            bool kmajor = dtype_bits(in) == 8; /* staged by the dot itself */
            for (int j = 0; j < n; j++)
                if (cs[j].dot == d && cs[j].operand == 1) kmajor = (cs[j].trans ? 1 - cs[j].contig : cs[j].contig) == 0;
            if (!kmajor) return false;
        }
        int a = carried_index(body, d->ops[2]);
        if (a < 0 || uses[d->ops[2]] != 1 || uses[d->res[0]] != 1 || !y || y->op != OP_YIELD || a - 1 >= y->nops ||
            y->ops[a - 1] != d->res[0])
            return false;
    }
    return true;
}

/* Before pos: iteration base + off of loop, and whether it runs (< the loop's bound) into *run. */
static ValueId iteration(Ctx *c, Inst *loop, ValueId base, int64_t off, Inst *pos, ValueId *run) {
    const Type *it = tir_vtype(c->f, loop->ops[0]), *i1 = tir_scalar(c->m, DT_I1);
    ValueId its = emit(c, pos, OP_ADD, (ValueId[]){base, cint(c, pos, it, off)}, 2, it);
    /* whether it runs, in i64 for an i32 loop: near the top of the range base + off wraps (ub = 2^31 - 41,
     * four stages of 32) and a negative iteration would pass for one that runs */
    ValueId lhs = its, ub = loop->ops[1];
    if (dtype_bits(it->dt) < 64) {
        const Type *i64 = tir_scalar(c->m, DT_I64);
        ValueId b64 = emit(c, pos, OP_CAST, &base, 1, i64);
        lhs = emit(c, pos, OP_ADD, (ValueId[]){b64, cint(c, pos, i64, off)}, 2, i64);
        ub = emit(c, pos, OP_CAST, &ub, 1, i64);
    }
    Inst *cmp = tir_inst_new(c->f, OP_CMP, (ValueId[]){lhs, ub}, 2, &i1, 1, loop->loc);
    cmp->a.ival2 = CMP_LT;
    tir_insert_before(pos, cmp);
    *run = cmp->res[0];
    return its;
}

static void pipeline_loop(Ctx *c, Inst *loop) {
    Func *f = c->f;
    Module *m = c->m;
    int S = loop->a.ival2 ? (int)loop->a.ival2 - 1 : f->num_stages; /* range(..., num_stages=S) */
    Block *body = loop->regions[0];
    Inst *stepd = tir_val(f, loop->ops[2])->def;
    if (!stepd || stepd->op != OP_CONST || stepd->a.is_float || stepd->a.ival <= 0) return;
    mark_body(c, body);
    c->readonly = !writes_memory(body);
    c->nwritten = 0;
    collect_writes(c, body);
    int *uses = c->uses;
    /* dead pure ops go first, so their uses do not count (assign_layout's native_f8 leaves the
     * f8 operands' widening casts to canonicalize) */
    for (Inst *i = body->last, *prev; i; i = prev) {
        prev = i->prev;
        if ((tir_op_info[i->op].flags & OPF_PURE) && !i->nregions && i->nres == 1 && !uses[i->res[0]]) {
            count_inst(c, i, -1);
            tir_inst_remove(i);
        }
    }
    Cand cs[8];
    int n = 0;
    for (Inst *i = body->first; i; i = i->next) {
        if (i->op != OP_DOT || !tir_vtype(f, i->res[0])->layout || tir_vtype(f, i->res[0])->layout->kind != LAYOUT_MMA) continue;
        for (int k = 0; k < 2 && n < 8; k++) {
            int contig;
            Inst *tr;
            bool xpose;
            Inst *ld, *conv;
            if (eligible(c, i, k, body, uses, &contig, &tr, &xpose)) { /* primary: its own index, n before the increment */
                cs[n] = (Cand){i, tir_val(f, tr ? tr->ops[0] : i->ops[k])->def, tr, k, contig, xpose, 0, n, false, NULL};
                n++;
            } else if ((ld = eligible_reg(c, i, k, body, uses, &contig, &conv))) {
                cs[n] = (Cand){i, ld, NULL, k, contig, false, 0, n, true, conv};
                n++;
            }
        }
    }
    /* a tf32 A for the wgmma's registers beside a B the same warps copy element by element (xpose) keeps
     * the register path: ptxas -v, tile_gemm's tf32 trans_a at 128 x 128 x 16 on 8 warps, warp-specialized
     * (168 registers) with beta, bias and GELU, spilled 24 B with both (0 as before) */
    for (int a = 0; a < n; a++) {
        bool drop = false;
        for (int b = 0; b < n && a_to_regs(c, &cs[a]); b++) drop |= cs[b].dot == cs[a].dot && cs[b].xpose;
        if (drop) {
            memmove(&cs[a], &cs[a + 1], sizeof *cs * (size_t)(n - a - 1));
            n--, a--;
        }
    }
    for (int a = 0; a < n; a++) cs[a].primary = a;
    /* a load feeding several dots: one buffer, when every use is an eligible dot operand of
     * the same contiguity; otherwise the registers are still needed and none of them goes */
    for (int a = 0; a < n; a++) {
        int same = 0;
        bool agree = true;
        for (int b = 0; b < n; b++)
            if (cs[b].load == cs[a].load) {
                same++;
                agree &= cs[b].contig == cs[a].contig && !cs[b].trans == !cs[a].trans;
                if (b < a && cs[a].primary == a) cs[a].primary = b;
            }
        if (same != uses[cs[a].load->res[0]] || !agree) cs[a].load = NULL;
    }
    int kept = 0;
    for (int a = 0; a < n; a++) {
        bool ok = cs[a].load != NULL;
        for (int b = 0; b < n && ok; b++)
            if (b != a && cs[b].load == NULL && cs[b].primary == cs[a].primary) ok = false;
        if (ok) cs[kept++] = cs[a];
    }
    n = kept;
    for (int a = 0; a < n; a++) { /* primaries as indices into the kept list */
        cs[a].primary = a;
        for (int b = 0; b < a; b++)
            if (cs[b].load == cs[a].load) {
                cs[a].primary = b;
                break;
            }
    }
    bool async = async_ok(c, body, cs, n, uses);
    int R = async ? S + 1 : S; /* stages in the ring: one more while a wgmma may still read the last */
    /* 1c. a loop without dots that asks for it (its own num_stages; the kernel's alone does not: ptxas -v at the
     * launched configurations, sampling's BLOCK=512 kernels went from 48 to 90 registers on sm_80 and
     * moe_align_scan from 80 to 86 with 36 B spilled on sm_90a): its plain loads, while the rings fit beside
     * what the kernel already holds in shared memory (the target's limit, with every buffer and the largest
     * scratch counted; a load that would not fit stays as written); not in a loop asked to unroll, as LLVM
     * unrolls no loop with a barrier */
    if (!n && loop->a.ival2 && !tir_block_holds(body, OP_DOT) && loop->a.vec <= 1) {
        const Target *tg = target_find(m->arch);
        int have = smem_have(c);
        for (Inst *i = body->first; i && n < 8; i = i->next) {
            int contig;
            if (i->op != OP_LOAD || !eligible_plain(c, i, body, &contig)) continue;
            const Type *t = tir_vtype(f, i->res[0]);
            int64_t bytes = ((int64_t)R * tir_type_numel(t) * (dtype_bits(t->dt) / 8) + 1023) / 1024 * 1024;
            if (!tg || have + bytes > tg->smem_dynamic) continue;
            have += (int)bytes;
            cs[n] = (Cand){NULL, i, NULL, -1, contig, false, 0, n, true, NULL};
            n++;
        }
    }
    if (!n) return;
    window_begin(c, loop);
    const Type *it = tir_vtype(f, loop->ops[0]);
    ValueId iv = body->args[0];
    /* 2. buffers and prologue */
    for (int k = 0; k < n; k++) {
        if (cs[k].primary != k) {
            cs[k].buf = cs[cs[k].primary].buf;
            continue;
        }
        const Type *t = tir_vtype(f, cs[k].load->res[0]);
        Layout sl = {.kind = LAYOUT_SHARED, .rank = 3};
        sl.order[0] = (uint8_t)(cs[k].contig + 1);
        sl.order[1] = (uint8_t)(2 - cs[k].contig);
        sl.order[2] = 0;
        int32_t shape[3] = {R, t->rank == 1 ? 1 : t->shape[0], t->shape[t->rank - 1]}; /* a rank-1 tile: one row */
        const Type *bt = tir_type(m, t->dt, 3, shape, NULL, tir_layout_intern(m, &sl));
        cs[k].buf = emit(c, loop, OP_LOCAL_ALLOC, NULL, 0, bt);
    }
    ValueId run;
    for (int s = 0; s < S - 1; s++) {
        ValueId its = iteration(c, loop, loop->ops[0], s * stepd->a.ival, loop, &run);
        issue(c, cs, n, iv, its, run, cint(c, loop, tir_scalar(m, DT_I32), s), loop, NULL, NULL, 0);
    }
    /* index loads (a block table) are loaded one iteration ahead of the copies they address:
     * those for iteration lb + (S-1)*step before the loop, then at the top of iteration j (after
     * its copies) those for j + S*step, carried to the next iteration, so that the latency of
     * the index load hides behind a whole iteration's math instead of stalling the copies */
    Inst *idx[8];
    int nidx = 0;
    for (int k = 0; k < n; k++)
        for (int j = 0; j < cs[k].load->nops && j < 2; j++) walk_begin(c), index_loads(c, cs[k].load->ops[j], iv, idx, &nidx, 8);
    ValueId pre[8], carried[8];
    if (nidx) {
        ValueId its = iteration(c, loop, loop->ops[0], (int64_t)(S - 1) * stepd->a.ival, loop, &c->run);
        map_clear(c);
        for (int k = 0; k < nidx; k++) pre[k] = clone(c, idx[k]->res[0], iv, its, loop);
    }
    /* 3. the body; the stages read and written are carried by the loop (0 and S-1 at the
     * start, each advancing by one modulo S) rather than divided out of the counter */
    Inst *top = body->first;
    ValueId rstage = carry_stage(c, loop, cint(c, loop, it, 0), R);
    ValueId wstage = carry_stage(c, loop, cint(c, loop, it, S - 1), R);
    for (int k = 0; k < nidx; k++) carried[k] = carry_arg(c, loop, pre[k]); /* yielded below, after the stages */
    emit_plain(c, top, OP_ASYNC_WAIT, S - 2);
    emit_plain(c, top, OP_BARRIER, 0);
    ValueId ahead = iteration(c, loop, iv, (int64_t)(S - 1) * stepd->a.ival, top, &run);
    issue(c, cs, n, iv, ahead, run, wstage, top, idx, nidx ? carried : NULL, nidx);
    if (nidx) {
        ValueId next = iteration(c, loop, iv, (int64_t)S * stepd->a.ival, top, &c->run);
        map_clear(c);
        Inst *y = body->last;
        for (int k = 0; k < nidx; k++) append(f->module->arena, &y->ops, &y->nops, clone(c, idx[k]->res[0], iv, next, top));
    }
    for (int k = 0; k < n; k++) {
        const Type *bt = tir_vtype(f, cs[k].buf);
        if (cs[k].reg) { /* 1b, 1c: the load becomes a read of the stage, in the load's own layout */
            Inst *ld = cs[k].load;
            Layout vl = {.kind = LAYOUT_SHARED, .rank = 2};
            vl.order[0] = (uint8_t)cs[k].contig;
            vl.order[1] = (uint8_t)(1 - cs[k].contig);
            int32_t shape[2] = {bt->shape[1], bt->shape[2]};
            const Type *vt = tir_type(m, bt->dt, 2, shape, NULL, tir_layout_intern(m, &vl));
            Inst *last = cs[k].conv ? cs[k].conv : ld;
            const Type *rt = tir_vtype(f, last->res[0]);
            ValueId view = emit(c, ld, OP_LOCAL_VIEW, (ValueId[]){cs[k].buf, rstage}, 2, vt);
            ValueId x = emit(c, ld, OP_LOCAL_LOAD, &view, 1, rt);
            Inst *o = ld->nops > 2 ? tir_val(f, ld->ops[2])->def : NULL;
            if (o && (o->a.is_float ? o->a.fval != 0 : o->a.ival != 0)) /* 1c: a masked-off lane reads `other` */
                x = emit(c, ld, OP_SELECT, (ValueId[]){ld->ops[1], x, ld->ops[2]}, 3, rt);
            replace_uses_in(body, NULL, last->res[0], x, INT32_MAX); /* a body's value is used in the body only */
            if (cs[k].conv) tir_inst_remove(cs[k].conv);
            tir_inst_remove(ld);
            continue;
        }
        Layout vl = {.kind = LAYOUT_SHARED, .rank = 2};
        /* the view is the dot's operand: a transposed one swaps the dims, and the stage's
         * contiguous dim becomes dim 0 */
        int vc = cs[k].trans ? 1 - cs[k].contig : cs[k].contig;
        vl.order[0] = (uint8_t)vc;
        vl.order[1] = (uint8_t)(1 - vc);
        int32_t shape[2] = {bt->shape[cs[k].trans ? 2 : 1], bt->shape[cs[k].trans ? 1 : 2]};
        const Type *vt = tir_type(m, bt->dt, 2, shape, NULL, tir_layout_intern(m, &vl));
        ValueId view = emit(c, cs[k].dot, OP_LOCAL_VIEW, (ValueId[]){cs[k].buf, rstage}, 2, vt);
        cs[k].dot->ops[cs[k].operand] = view;
        if (cs[k].trans) tir_inst_remove(cs[k].trans);
        if (cs[k].primary == k) tir_inst_remove(cs[k].load);
    }
    /* 4. drain */
    Inst *after = loop->next;
    if (after) {
        emit_plain(c, after, OP_ASYNC_WAIT, 0);
        emit_plain(c, after, OP_BARRIER, 0);
    }
    /* 2a. the in-flight accumulators: each dot leaves one wgmma group pending, and after the
     * loop a wgmma_wait hands its result back before anything reads it */
    for (int k = 0; async && after && k < n; k++) {
        Inst *d = cs[k].dot;
        if (d->a.ival) continue; /* a dot of several candidates */
        d->a.ival = 1;
        int a = carried_index(body, d->ops[2]);
        ValueId r = loop->res[a - 1];
        const Type *rt = tir_vtype(f, r);
        Inst *w = tir_inst_new(f, OP_WGMMA_WAIT, &r, 1, &rt, 1, loop->loc);
        /* r is used after the loop in its block only (the rewritten span is out of the counts) */
        ensure_values(c);
        if (replace_uses_in(loop->parent, after, r, w->res[0], c->uses[r])) tir_replace_uses(f, r, w->res[0]);
        uses_add(c, w->res[0], c->uses[r]);
        uses_add(c, r, -c->uses[r]);
        w->ops[0] = r;
        tir_insert_before(after, w);
    }
}

/* 5. (wgmma targets) An A operand of a tensor-core dot in the loop that is defined before the
 * loop and used only there (attention's Q) would hold its registers through every iteration;
 * wgmma reads A from shared memory as well, so it is written once into a one-stage buffer
 * before the loop (barriers on both sides) and the dot reads a view of it. */
static void stage_invariant_a(Ctx *c, Inst *loop) {
    Func *f = c->f;
    const Target *tg = target_find(c->m->arch);
    bool wgmma = tg && tg->mma == WGMMA;
    Block *body = loop->regions[0];
    c->nmap = f->nvalues;
    ensure_values(c);
    mark_body(c, body);
    /* the dots chosen first, with the counts as they stand; then the loop's uses leave the counts while it is
     * rewritten (staging one dot's A changes no other dot's choice: an A staged has that dot as its one use) */
    Inst **dots = NULL;
    int ndots = 0;
    for (Inst *i = body->first; i; i = i->next) {
        if (i->op != OP_DOT) continue;
        const Type *rt = tir_vtype(f, i->res[0]);
        /* only where the dot becomes wgmma (warps [4k, 1]): mma.sync wants A in registers */
        if (!layout_is_warpgroup_mma(rt->layout)) continue;
        if (!invariant_a(c, i, c->uses)) continue;
        /* mma.sync reads A from registers; there, only an A of 64 or more registers per thread
         * (attention's Q at 128 rows x head_dim 128 over 4 warps) is read through ldmatrix each
         * K step instead, or the loop spills */
        if (!wgmma && tir_type_numel(tir_vtype(f, i->ops[0])) / (32 * f->num_warps) < 128) continue;
        dots = realloc(dots, sizeof *dots * (size_t)(ndots + 1));
        if (!dots) out_of_memory();
        dots[ndots++] = i;
    }
    if (ndots) window_begin(c, loop);
    for (int k = 0; k < ndots; k++) {
        Inst *i = dots[k];
        ValueId v = i->ops[0];
        const Type *t = tir_vtype(f, v);
        Layout sl = {.kind = LAYOUT_SHARED, .rank = 3};
        sl.order[0] = 2, sl.order[1] = 1, sl.order[2] = 0; /* K contiguous */
        int32_t shape[3] = {1, t->shape[0], t->shape[1]};
        const Type *bt = tir_type(c->m, t->dt, 3, shape, NULL, tir_layout_intern(c->m, &sl));
        Layout vl = {.kind = LAYOUT_SHARED, .rank = 2};
        vl.order[0] = 1, vl.order[1] = 0;
        const Type *vt = tir_type(c->m, t->dt, 2, t->shape, NULL, tir_layout_intern(c->m, &vl));
        ValueId buf = emit(c, loop, OP_LOCAL_ALLOC, NULL, 0, bt);
        ValueId zero = cint(c, loop, tir_scalar(c->m, DT_I32), 0);
        emit_plain(c, loop, OP_BARRIER, 0); /* earlier users of this scratch are done with it */
        Inst *st = tir_inst_new(f, OP_LOCAL_STORE, (ValueId[]){buf, zero, v}, 3, NULL, 0, i->loc);
        tir_insert_before(loop, st);
        emit_plain(c, loop, OP_BARRIER, 0);
        i->ops[0] = emit(c, loop, OP_LOCAL_VIEW, (ValueId[]){buf, zero}, 2, vt);
    }
    free(dots);
    window_end(c);
}

static bool has_loop(Block *b) {
    for (Inst *i = b->first; i; i = i->next)
        if (tir_is_loop(i->op) || (i->nregions && (has_loop(i->regions[0]) || (i->nregions > 1 && has_loop(i->regions[1])))))
            return true;
    return false;
}

static void walk(Ctx *c, Block *b) {
    for (Inst *i = b->first; i; i = i->next) {
        if (i->op == OP_FOR && !has_loop(i->regions[0])) {
            if ((i->a.ival2 ? (int)i->a.ival2 - 1 : c->f->num_stages) < 2) continue; /* not pipelined */
            c->nmap = c->f->nvalues;
            ensure_values(c);
            pipeline_loop(c, i);
            window_end(c);
            stage_invariant_a(c, i);
        } else {
            for (int r = 0; r < i->nregions; r++) walk(c, i->regions[r]);
        }
    }
}

/* The counts of step 1's uses and 1c's shared memory are taken once per function and then kept up to date
 * as each loop is rewritten (window_begin, window_end): a kernel of many loops costs its size, not its size
 * once a loop. */
bool lower_software_pipeline(Module *m, Diag *d) {
    (void)d;
    for (int k = 0; k < m->nfuncs; k++) {
        Ctx c = {.m = m, .f = m->funcs[k]};
        ensure_values(&c);
        for (const Inst *i = c.f->body->first; i; i = i->next) count_inst(&c, i, 1); /* uses only: smem_ok is false */
        walk(&c, c.f->body);
        free(c.inside), free(c.map), free(c.mstamp_of), free(c.seen), free(c.uses), free(c.scratch);
    }
    return true;
}
