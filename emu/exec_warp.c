/* exec_warp.c - which group of a warp's waiting lanes fires (emu_fire_warp, the scheduler's choice, activemask
 * last) and the warp-collective instructions: shfl.sync, vote.sync,
 * match.sync, redux.sync, bar.warp.sync; ldmatrix, movmatrix and mma.sync
 * are dispatched to exec_mma.c.
 *
 * The scheduler (exec.c) calls emu_exec_warp once every live lane of the
 * member mask waits at an instruction of the same op.  Each lane's
 * operands are read from its own registers and instruction (lanes may sit
 * at different instructions of the same op, as after divergent branches),
 * then every lane's results are written and its pc advanced.  Lanes of the
 * mask that exited are left out; a shfl reading from a lane outside the
 * group gets its own value. */
#include "emu/exec.h"

/* ---- which group of a warp fires (the scheduler's choice) ---- */

static int mask_operand(unsigned op);

/* Where thread t is in the function of call level k (0: the kernel): its pc at its own level, else the call
 * instruction it is inside. */
static uint32_t code_pos(const EmuThread *t, uint32_t k) { return k == t->depth ? t->pc : t->frames[k + 1].ret_pc; }

/* a against b in the code, outermost level first (a call's inside comes after its call instruction): < 0 when a
 * is earlier, 0 when they are at one place along one path (the same call sites: lanes that called one .func
 * from two places are on two paths, though at one pc of it). */
static int code_order(const EmuThread *a, const EmuThread *b) {
    uint32_t d = a->depth < b->depth ? a->depth : b->depth;
    for (uint32_t k = 0; k <= d; k++) {
        if (k && a->frames[k].fn != b->frames[k].fn) return a->frames[k].fn < b->frames[k].fn ? -1 : 1;
        uint32_t pa = code_pos(a, k), pb = code_pos(b, k);
        if (pa != pb) return pa < pb ? -1 : 1;
    }
    return a->depth == b->depth ? 0 : a->depth > b->depth ? 1 : -1;
}

/* The .aligned collectives the scheduler fires for the whole warp (emu_fire_warp's `full`; not the warpgroup ones
 * nor activemask, which it takes apart). */
static bool aligned_op(unsigned op) {
    switch (op) {
    case EMU_OP_LDMATRIX: case EMU_OP_MOVMATRIX: case EMU_OP_MMA: case EMU_OP_STMATRIX: case EMU_OP_WMMA_LOAD:
    case EMU_OP_WMMA_STORE: case EMU_OP_WMMA_MMA:
        return true;
    default: return false;
    }
}

static bool exec_collective(EmuBlock *b, EmuThread **g, unsigned n, const EmuIns *in, bool uniform);

/* After an .aligned collective fired for the lanes g (every lane of the warp that has not exited) and each was
 * advanced past it: true when each of them, run now, would stop at once at another .aligned collective, the same
 * instruction for all: their guards hold, they are at one pc of one function at call level 0, and no wgmma result
 * of theirs is in flight (whose check each instruction would take).  The lanes are then put to wait there, each
 * instruction counted as run_thread counts one it dispatches. */
static bool next_aligned(EmuBlock *b, EmuThread **g, unsigned n) {
    const EmuThread *t0 = g[0];
    const EmuFunc *f = t0->fn;
    uint32_t pc = t0->pc;
    if (t0->depth || pc >= f->ncode) return false;
    const EmuIns *in = &f->code[pc];
    if (!aligned_op(in->op)) return false;
    /* the lanes' places in one pass without branches (as emu_full_warp checks them); wgmma results in flight and
     * guards apart, only when some lane has wgmma state or the instruction a guard (an unguarded instruction's is
     * the constant EMU_SLOT_TRUE) */
    uint32_t off = 0;
    bool any_wg = false;
    for (unsigned i = 0; i < n; i++) {
        const EmuThread *t = g[i];
        off |= (uint32_t)(t->state ^ EMU_TS_RUN) | (t->pc ^ pc) | (uint32_t)(t->fn != f) | t->depth;
        any_wg |= t->wg != NULL;
    }
    if (off) return false;
    for (unsigned i = 0; any_wg && i < n; i++)
        if (g[i]->wg && g[i]->wg->n) return false;
    for (unsigned i = 0; (in->guard != EMU_SLOT_TRUE || in->gneg) && i < n; i++)
        if (!((uint32_t)g[i]->r[in->guard] ^ in->gneg)) return false;
    for (unsigned i = 0; i < n; i++) {
        g[i]->state = EMU_TS_WARP;
        g[i]->icount++;
    }
    b->icount += n;
    return true;
}

/* Fires the .aligned collective the lanes g wait at (every lane of the warp that has not exited, in lane order),
 * then, while each of them, run now, would stop at once at another .aligned collective, the same instruction for
 * all (the tensor-core code's runs of ldmatrix and mma.sync), that one too: what the scheduler would do, less a
 * run of every lane that executes nothing and a look over the warp.  uniform: the caller proved the lanes at one
 * pc of one function at call level 0 (else next_aligned's look, after the first, proves it).
 *   1. Fire the instruction (emu_full_warp's check only where uniform was not proved).
 *   2. Not uniform: advance each lane as emu_exec_warp does and let next_aligned look; if it holds the lanes
 *      are uniform from now on (step 3).
 *   3. Uniform: they stay uniform (every lane steps past the same instruction), so only the next instruction's
 *      op and guard are looked at, and whether some lane has wgmma results in flight, once (only warpgroup
 *      collectives change that, and they end the run).  The executors read the instruction, not the lanes'
 *      pcs, so each lane's pc, its count of instructions and its state are brought up to date when the run
 *      ends (or faults). */
static bool fire_aligned(EmuBlock *b, EmuThread **g, unsigned n, bool uniform) {
    const EmuIns *in = &g[0]->fn->code[g[0]->pc];
    while (!uniform) {
        if (!emu_exec_warp(b, g, n, false)) return false;
        if (!next_aligned(b, g, n)) return true;
        uniform = true;
        in = &g[0]->fn->code[g[0]->pc];
    }
    bool wg_busy = false;
    for (unsigned i = 0; i < n; i++) wg_busy |= g[i]->wg && g[i]->wg->n;
    const EmuFunc *f = g[0]->fn;
    uint32_t pc = (uint32_t)(in - f->code), more = 0; /* more: instructions fired after the first, for the counts */
    for (;;) {
        if (!exec_collective(b, g, n, in, true)) {
            for (unsigned i = 0; i < n; i++) g[i]->pc = pc; /* where each lane faulted (the executors read `in`) */
            return false;
        }
        pc++;
        if (wg_busy || pc >= f->ncode || !aligned_op(f->code[pc].op)) break;
        in = &f->code[pc];
        bool held = true;
        for (unsigned i = 0; (in->guard != EMU_SLOT_TRUE || in->gneg) && i < n; i++) /* the interpreter's guard test */
            held &= ((uint32_t)g[i]->r[in->guard] ^ in->gneg) != 0;
        if (!held) break;
        more++;
        b->icount += n;
    }
    for (unsigned i = 0; i < n; i++) {
        g[i]->pc = pc;
        g[i]->state = EMU_TS_RUN;
        g[i]->icount += more;
    }
    return true;
}

/* Fires one complete warp-collective group of warp w, if any.  Called
 * when no lane of the warp can run: every lane has exited or waits. */
bool emu_fire_warp(EmuBlock *b, uint32_t gw, bool *fired) {
    *fired = false;
    uint32_t w = gw % b->cta_warps, cbase = gw / b->cta_warps * b->cta_threads; /* warp w of the CTA whose threads start at cbase */
    uint32_t base = cbase + w * 32, n = b->cta_threads - w * 32 < 32 ? b->cta_threads - w * 32 : 32;
    /* activemask last: lanes still waiting at a collective of their own (16 lanes at a shuffle over 0xffff0000
     * while the other 16 went on to activemask) get to run first, and may arrive at the activemask too (on a GPU
     * both halves shuffle at once; the mask here was 0xaaaa where the GPU's is 0xaaaaaaaa) */
    uint32_t am_lead = n; /* of the lanes at an activemask, the one earliest in the code: lanes at a later one
                            * (after the `if` whose other lanes are at this one) wait for those to arrive */
    uint8_t op[32]; /* each waiting lane's op, read once (EMU_OP_COUNT: the lane does not wait at a collective) */
    uint32_t done = 0; /* the lanes that exited */
    EmuThread *lanes = &b->t[base];
    /* the common case first: every lane that has not exited waits at one .aligned collective, the same instruction
     * at call level 0 (the tensor-core code), the group the loops below would fire, found without them */
    if (lanes[0].state == EMU_TS_WARP && !lanes[0].depth && aligned_op(lanes[0].fn->code[lanes[0].pc].op)) {
        EmuThread *group[32];
        unsigned ng = 0;
        uint32_t i = 0;
        for (; i < n; i++) {
            EmuThread *ti = &lanes[i];
            if (ti->state == EMU_TS_DONE) continue;
            if (ti->state != EMU_TS_WARP || ti->pc != lanes[0].pc || ti->fn != lanes[0].fn || ti->depth) break;
            group[ng++] = ti;
        }
        if (i == n) {
            if (!fire_aligned(b, group, ng, true)) return false;
            *fired = true;
            return true;
        }
    }
    /* then a collective with a member mask (shfl.sync, vote, ...) that every lane not exited waits at, the same
     * instruction at call level 0, each lane's mask the same and naming every such lane (block_sum's shuffles): the
     * group the loops below would fire (lead 0, its mask, every member checked), found in one pass over the lanes.
     * Anything else (a lane elsewhere, another mask, one leaving out a waiting lane or lane 0) takes the loops. */
    int mk = lanes[0].state == EMU_TS_WARP && !lanes[0].depth ? mask_operand(lanes[0].fn->code[lanes[0].pc].op) : -1;
    if (mk >= 0) {
        const EmuIns *il = &lanes[0].fn->code[lanes[0].pc];
        uint32_t mask = (uint32_t)EMU_R(&lanes[0], il, (unsigned)mk), live = 0, off = 0;
        EmuThread *group[32];
        unsigned ng = 0;
        for (uint32_t i = 0; i < n && !off; i++) {
            EmuThread *ti = &lanes[i];
            if (ti->state == EMU_TS_DONE) continue;
            live |= 1u << i;
            off = (uint32_t)(ti->state ^ EMU_TS_WARP) | (ti->pc ^ lanes[0].pc) | (uint32_t)(ti->fn != lanes[0].fn) | ti->depth;
            if (!off) off = (uint32_t)EMU_R(ti, il, (unsigned)mk) ^ mask; /* its registers are the same function's */
            group[ng++] = ti;
        }
        if (!off && (mask & live) == live) {
            if (!emu_exec_warp(b, group, ng, true)) return false;
            *fired = true;
            return true;
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        const EmuThread *ti = &lanes[i];
        op[i] = ti->state == EMU_TS_WARP ? ti->fn->code[ti->pc].op : EMU_OP_COUNT;
        done |= (uint32_t)(ti->state == EMU_TS_DONE) << i;
        if (op[i] != EMU_OP_ACTIVEMASK) continue;
        if (am_lead == n || code_order(ti, &b->t[base + am_lead]) < 0) am_lead = i;
    }
    unsigned wg_not_ready = EMU_OP_COUNT; /* a warpgroup op found not ready: the same for every lead waiting at it */
    for (int pass = 0; pass < 2; pass++)
    for (uint32_t lead = pass ? am_lead : 0; lead < n; lead++) {
        if (op[lead] == EMU_OP_COUNT) continue;
        EmuThread *tl = &b->t[base + lead];
        const EmuIns *il = &tl->fn->code[tl->pc];
        if ((il->op == EMU_OP_ACTIVEMASK) != (pass == 1)) continue;
        if (il->op == wg_not_ready) continue;
        if (emu_is_warpgroup_op(il->op)) {
            /* a warpgroup collective fires when all 128 threads of the warpgroup wait at one */
            uint32_t wbase = (w / 4) * 128;
            if (wbase + 128 > b->cta_threads)
                return emu_fault(b, tl, il, "invalid warpgroup instruction",
                                 "'%s' needs the 4 warps of warpgroup %u (threads %u-%u); the block has %u threads",
                                 emu_op_name(il->op), w / 4, wbase, wbase + 127, b->cta_threads);
            wbase += cbase;
            EmuThread *wg[128];
            bool ready = true;
            for (uint32_t i = 0; i < 128 && ready; i++) {
                EmuThread *ti = &b->t[wbase + i];
                if (ti->state == EMU_TS_DONE)
                    return emu_fault(b, tl, il, "invalid warpgroup instruction",
                                     "'%s' needs all 128 threads of warpgroup %u; thread (%u,%u,%u) has exited", emu_op_name(il->op),
                                     w / 4, ti->tid[0], ti->tid[1], ti->tid[2]);
                if (ti->state != EMU_TS_WARP || ti->fn->code[ti->pc].op != il->op) ready = false;
                wg[i] = ti;
            }
            if (!ready) {
                wg_not_ready = il->op;
                continue;
            }
            if (!emu_exec_warpgroup(b, wg)) return false;
            *fired = true;
            return true;
        }
        if (il->op == EMU_OP_ACTIVEMASK) {
            /* the lanes that reached this activemask together (on the same path) are the active ones;
             * the others went on to wait elsewhere, or exited */
            uint32_t mask = 0;
            for (uint32_t i = 0; i < n; i++) {
                const EmuThread *ti = &b->t[base + i];
                if (ti->state == EMU_TS_WARP && ti->fn == tl->fn && ti->pc == tl->pc && !code_order(ti, tl)) mask |= 1u << i;
            }
            for (uint32_t i = 0; i < n; i++) {
                EmuThread *ti = &b->t[base + i];
                if (!(mask >> i & 1)) continue;
                EMU_R(ti, il, 0) = mask;
                ti->pc++;
                ti->state = EMU_TS_RUN;
            }
            *fired = true;
            return true;
        }
        uint32_t mask = emu_warp_mask(tl, il);
        bool full = mask_operand(il->op) < 0;
        if (!(mask & (1u << lead)))
            return emu_fault(b, tl, il, "invalid warp-synchronous instruction",
                             "the executing lane %u is not in the member mask 0x%08x", lead, mask);
        EmuThread *group[32];
        unsigned ng = 0;
        bool ready = true;
        if (full) { /* .aligned (mma, ldmatrix, ...): the member mask is the whole warp's, so the group is every lane
                     * that has not exited, each waiting at this op (the loop below, by masks) */
            uint32_t other = 0, want = (n < 32 ? (1u << n) - 1 : ~0u) & ~done; /* lanes not at il->op; those to wait at it */
            for (uint32_t i = 0; i < n; i++) other |= (uint32_t)(op[i] != il->op) << i;
            if (want & other) continue;
            for (uint32_t i = 0; i < n; i++) {
                group[ng] = &lanes[i];
                ng += want >> i & 1;
            }
            if (!fire_aligned(b, group, ng, false)) return false;
            *fired = true;
            return true;
        }
        for (uint32_t i = 0; i < n && ready; i++) {
            if (!(mask & (1u << i))) continue;
            EmuThread *ti = &b->t[base + i];
            if (ti->state == EMU_TS_DONE) continue;
            if (ti->state != EMU_TS_WARP) { ready = false; break; }
            /* a member waiting at another kind of collective may belong to a group that fires first
             * (lanes 16-31 shuffle among themselves while 0-15 wait at __syncwarp); if none can, the
             * block deadlocks and the report says where each lane waits */
            if (op[i] != il->op) { ready = false; break; }
            /* ... or at one with another member mask: lanes 8-15 still at a shuffle among themselves (0xff00)
             * while 0-7 went on to one over 0xffff; the wider one waits for them to arrive */
            if (emu_warp_mask(ti, &ti->fn->code[ti->pc]) != mask) { ready = false; break; }
            group[ng++] = ti;
        }
        if (!ready) continue;
        if (!emu_exec_warp(b, group, ng, false)) return false;
        *fired = true;
        return true;
    }
    return true;
}

/* ---- the collectives ---- */

/* The operand that holds a collective's member mask; -1: an .aligned collective, whose mask is the whole warp */
static int mask_operand(unsigned op) {
    switch (op) {
    case EMU_OP_SHFL: return 4;
    case EMU_OP_VOTE: case EMU_OP_MATCH: case EMU_OP_REDUX: return 2;
    case EMU_OP_BAR_WARP: return 0;
    case EMU_OP_ELECT: return 1;
    default: return -1;
    }
}

uint32_t emu_warp_mask(const EmuThread *t, const EmuIns *in) {
    int k = mask_operand(in->op);
    return k < 0 ? 0xFFFFFFFFu : (uint32_t)EMU_R(t, in, (unsigned)k);
}

/* Lane `lane`'s source lane of shfl.sync in `mode` with b = bv and c = c, and whether it is in range (p): the ISA's
 * formulas; an out-of-range source is the lane itself. */
static inline uint32_t shfl_source(unsigned mode, uint32_t lane, uint32_t bv, uint32_t c, bool *p) {
    uint32_t cval = c & 31, segmask = (c >> 8) & 31;
    uint32_t maxl = (lane & segmask) | (cval & ~segmask), minl = lane & segmask;
    int32_t j;
    switch (mode) {
    case EMU_MODE_UP: j = (int32_t)lane - (int32_t)bv; *p = j >= (int32_t)maxl; break;
    case EMU_MODE_DOWN: j = (int32_t)(lane + bv); *p = j <= (int32_t)maxl; break;
    case EMU_MODE_BFLY: j = (int32_t)(lane ^ bv); *p = j <= (int32_t)maxl; break;
    default: j = (int32_t)(minl | (bv & ~segmask)); *p = j <= (int32_t)maxl; break; /* EMU_MODE_IDX */
    }
    return !*p || j < 0 || j > 31 ? lane : (uint32_t)j;
}

/* Each lane's result and predicate of the shfl.sync `in` that every lane of g is at, from the lanes' values val
 * (have: the lanes that gave one). */
static inline __attribute__((always_inline)) void shfl_lanes(EmuThread **g, unsigned n, const EmuIns *in, const uint32_t *val,
                                                             uint32_t have, unsigned mode) {
    uint32_t s2 = in->o[2], s3 = in->o[3], d = in->o[0], dp = in->o[5];
    for (unsigned i = 0; i < n; i++) {
        EmuThread *t = g[i];
        bool p;
        uint32_t j = shfl_source(mode, t->lane, (uint32_t)t->r[s2] & 31, (uint32_t)t->r[s3], &p);
        t->r[d] = (have >> j) & 1 ? val[j] : val[t->lane];
        t->r[dp] = p;
    }
}

/* shfl.sync of the lanes g.  uniform: every lane at one instruction (emu_fire_warp's one pass proved it), whose
 * type and mode are looked at once; else each lane's own. */
static bool exec_shfl(EmuBlock *b, EmuThread **g, unsigned n, bool uniform) {
    uint32_t val[32] = {0}, have = 0;
    if (uniform) {
        const EmuIns *in = &g[0]->fn->code[g[0]->pc];
        if (in->ty != EMU_T_B32) return emu_fault(b, g[0], in, "unsupported instruction", "shfl.sync needs .b32");
        if (in->mode != EMU_MODE_UP && in->mode != EMU_MODE_DOWN && in->mode != EMU_MODE_BFLY && in->mode != EMU_MODE_IDX)
            return emu_fault(b, g[0], in, "invalid instruction", "shfl.sync needs .up, .down, .bfly or .idx");
        uint32_t s1 = in->o[1];
        for (unsigned i = 0; i < n; i++) {
            val[g[i]->lane] = (uint32_t)g[i]->r[s1];
            have |= 1u << g[i]->lane;
        }
        switch (in->mode) { /* shfl_lanes for each mode: its formula picked once */
        case EMU_MODE_UP: shfl_lanes(g, n, in, val, have, EMU_MODE_UP); break;
        case EMU_MODE_DOWN: shfl_lanes(g, n, in, val, have, EMU_MODE_DOWN); break;
        case EMU_MODE_BFLY: shfl_lanes(g, n, in, val, have, EMU_MODE_BFLY); break;
        default: shfl_lanes(g, n, in, val, have, EMU_MODE_IDX); break;
        }
        return true;
    }
    for (unsigned i = 0; i < n; i++) {
        const EmuIns *in = &g[i]->fn->code[g[i]->pc];
        val[g[i]->lane] = (uint32_t)EMU_R(g[i], in, 1);
        have |= 1u << g[i]->lane;
    }
    for (unsigned i = 0; i < n; i++) {
        EmuThread *t = g[i];
        const EmuIns *in = &t->fn->code[t->pc];
        if (in->ty != EMU_T_B32)
            return emu_fault(b, t, in, "unsupported instruction", "shfl.sync needs .b32");
        if (in->mode != EMU_MODE_UP && in->mode != EMU_MODE_DOWN && in->mode != EMU_MODE_BFLY && in->mode != EMU_MODE_IDX)
            return emu_fault(b, t, in, "invalid instruction", "shfl.sync needs .up, .down, .bfly or .idx");
        uint32_t lane = t->lane;
        bool p;
        uint32_t j = shfl_source(in->mode, lane, (uint32_t)EMU_R(t, in, 2) & 31, (uint32_t)EMU_R(t, in, 3), &p);
        uint32_t v = (have >> j) & 1 ? val[j] : val[lane];
        EMU_R(t, in, 0) = v;
        t->r[in->o[5]] = p;
    }
    return true;
}

static bool exec_vote(EmuBlock *b, EmuThread **g, unsigned n) {
    uint32_t ballot = 0, members = 0;
    for (unsigned i = 0; i < n; i++) {
        const EmuIns *in = &g[i]->fn->code[g[i]->pc];
        uint64_t v = EMU_R(g[i], in, 1) & 1;
        if (in->on[1]) v = !v;
        if (v) ballot |= 1u << g[i]->lane;
        members |= 1u << g[i]->lane;
    }
    for (unsigned i = 0; i < n; i++) {
        EmuThread *t = g[i];
        const EmuIns *in = &t->fn->code[t->pc];
        uint64_t d;
        switch (in->mode) {
        case EMU_MODE_ALL: d = ballot == members; break;
        case EMU_MODE_ANY: d = ballot != 0; break;
        case EMU_MODE_VUNI: d = ballot == 0 || ballot == members; break;
        case EMU_MODE_BALLOT: d = ballot; break;
        default: return emu_fault(b, t, in, "invalid instruction", "vote.sync needs .all, .any, .uni or .ballot");
        }
        EMU_R(t, in, 0) = d;
    }
    return true;
}

static bool exec_match(EmuBlock *b, EmuThread **g, unsigned n) {
    uint64_t val[32] = {0};
    uint32_t have = 0;
    for (unsigned i = 0; i < n; i++) {
        const EmuIns *in = &g[i]->fn->code[g[i]->pc];
        val[g[i]->lane] = emu_zext(EMU_R(g[i], in, 1), emu_type_size(in->ty));
        have |= 1u << g[i]->lane;
    }
    for (unsigned i = 0; i < n; i++) {
        EmuThread *t = g[i];
        const EmuIns *in = &t->fn->code[t->pc];
        if (in->ty != EMU_T_B32 && in->ty != EMU_T_B64)
            return emu_fault(b, t, in, "unsupported instruction", "match.sync needs .b32 or .b64");
        uint32_t mask = emu_warp_mask(t, in) & have, same = 0;
        for (unsigned j = 0; j < 32; j++)
            if ((mask >> j & 1) && val[j] == val[t->lane]) same |= 1u << j;
        if (in->mode == EMU_MODE_ANY) {
            EMU_R(t, in, 0) = same;
        } else {
            bool all = same == mask;
            EMU_R(t, in, 0) = all ? emu_warp_mask(t, in) : 0;
            t->r[in->o[5]] = all;
        }
    }
    return true;
}

static bool exec_redux(EmuBlock *b, EmuThread **g, unsigned n) {
    const EmuIns *in0 = &g[0]->fn->code[g[0]->pc];
    bool sg = in0->ty == EMU_T_S32;
    if (emu_type_size(in0->ty) != 4)
        return emu_fault(b, g[0], in0, "unsupported instruction", "redux.sync on .%s (it takes .u32, .s32 and .b32)",
                         emu_type_name(in0->ty));
    uint32_t acc = 0;
    for (unsigned i = 0; i < n; i++) {
        const EmuIns *in = &g[i]->fn->code[g[i]->pc];
        uint32_t v = (uint32_t)EMU_R(g[i], in, 1);
        if (i == 0) { acc = v; continue; }
        switch (in0->mode) {
        case EMU_MODE_AADD: acc += v; break;
        case EMU_MODE_AMIN: acc = sg ? ((int32_t)v < (int32_t)acc ? v : acc) : (v < acc ? v : acc); break;
        case EMU_MODE_AMAX: acc = sg ? ((int32_t)v > (int32_t)acc ? v : acc) : (v > acc ? v : acc); break;
        case EMU_MODE_AAND: acc &= v; break;
        case EMU_MODE_AOR: acc |= v; break;
        default: acc ^= v; break;
        }
    }
    for (unsigned i = 0; i < n; i++) EMU_R(g[i], &g[i]->fn->code[g[i]->pc], 0) = acc;
    return true;
}

/* racecheck: bar.warp.sync orders the accesses of its lanes before it with those after (a new generation of
 * the warp; out of line, as the collectives' dispatch is hot). */
static __attribute__((noinline)) void warp_synced(EmuBlock *b, EmuThread **g, unsigned n) {
    uint32_t w = g[0]->cta * b->cta_warps + (g[0]->linear % b->cta_threads) / 32, gen = ++b->warp_gen[w];
    for (unsigned i = 0; i < n; i++) {
        EmuRaceThread *r = &b->rt[g[i]->linear];
        r->wsync = gen;
        for (unsigned j = 0; j < n; j++) r->with[(g[j]->linear % b->cta_threads) % 32] = gen; /* lanes that synced together */
    }
    emu_race_warp_sync(b, g, n);
}

/* The collective at `in` for the lanes g, no lane advanced.  The .aligned ones get the whole warp by lane number:
 * emu_full_warp's check (every lane of the warp, at one instruction), skipped where the caller proved it
 * (uniform, fire_aligned's) and the 32 lanes take part (g is then already in lane order). */
static bool exec_collective(EmuBlock *b, EmuThread **g, unsigned n, const EmuIns *in, bool uniform) {
    if (aligned_op(in->op)) {
        EmuThread *buf[32], **lane = g;
        if (!uniform || n != 32) {
            if (!emu_full_warp(b, g, n, buf)) return false;
            lane = buf;
        }
        switch (in->op) {
        case EMU_OP_MMA: return emu_exec_mma(b, lane, in);
        case EMU_OP_LDMATRIX: return emu_exec_ldmatrix(b, lane, in);
        case EMU_OP_MOVMATRIX: return emu_exec_movmatrix(b, lane, in);
        case EMU_OP_STMATRIX: return emu_exec_stmatrix(b, lane, in);
        default: return emu_exec_wmma(b, lane, in);
        }
    }
    switch (in->op) {
    case EMU_OP_SHFL: return exec_shfl(b, g, n, uniform);
    case EMU_OP_VOTE: return exec_vote(b, g, n);
    case EMU_OP_MATCH: return exec_match(b, g, n);
    case EMU_OP_REDUX: return exec_redux(b, g, n);
    case EMU_OP_BAR_WARP:
        if (b->warp_gen) warp_synced(b, g, n);
        return true;
    case EMU_OP_ELECT: return emu_exec_elect(b, g, n);
    default:
        return emu_fault(b, g[0], in, "unsupported instruction",
                         "'%s' is not supported by the emulator yet", emu_op_name(in->op));
    }
}

bool emu_exec_warp(EmuBlock *b, EmuThread **g, unsigned n, bool uniform) {
    if (!exec_collective(b, g, n, &g[0]->fn->code[g[0]->pc], uniform)) return false;
    for (unsigned i = 0; i < n; i++) {
        g[i]->pc++;
        g[i]->state = EMU_TS_RUN;
    }
    return true;
}
