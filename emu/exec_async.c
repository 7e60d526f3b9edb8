/* exec_async.c - the sm_90 asynchronous machinery: mbarrier objects, bulk
 * copies (cp.async.bulk), tensor copies through a tensor map
 * (cp.async.bulk.tensor), elect.sync.
 *
 * mbarrier (the 64-bit object in shared memory, encoding in exec.h):
 *   1. init sets the expected and pending arrivals to count (1..2^20-1), the
 *      tx-count to 0 and the phase to 0.
 *   2. arrive [count] takes count from the pending arrivals (more than are
 *      pending is an error); expect_tx adds bytes to the tx-count, complete_tx
 *      (and every bulk/tensor copy that names the mbarrier) takes them off;
 *      arrive.expect_tx is expect_tx then arrive.  arrive_drop also lowers the
 *      expected count of later phases.
 *   3. When the pending arrivals and the tx-count are both zero the phase
 *      completes: the parity flips, the pending arrivals are reset to the
 *      expected count.  For racecheck the arrivals of a phase release their
 *      threads' accesses (exec_race.c), which a thread that sees the phase
 *      complete (4.) acquires: only the threads that waited on it are ordered
 *      after them.
 *   4. test_wait / try_wait answer whether the phase named by a state (from
 *      arrive) or a parity has completed: true when the current parity differs.
 *      try_wait that would answer false blocks the thread instead, and the
 *      scheduler (exec.c) runs it again once that phase has completed, or
 *      makes it answer false (its time limit expired) in a round where no
 *      thread of the block can move; a false test_wait makes the thread
 *      yield to the other warps.  A block whose threads only spin so for
 *      EMU_SPIN_ROUNDS rounds is reported as a deadlock.
 *   5. Misuse stops the launch: an mbarrier outside shared memory or not
 *      8-byte aligned, used before init or after inval, a count out of range,
 *      more arrivals than are pending, a tx-count out of range, an arrive
 *      .noComplete that completes the phase.
 *
 * Bulk and tensor copies are done at issue (one legal schedule of the async
 * proxy): the bytes are in place when the instruction returns, then the
 * mbarrier's tx-count is completed.  Their writes to global memory are noted
 * as pending until the issuing thread's cp.async.bulk.wait_group (without
 * .read) retires their bulk group; any generic access to pending bytes is
 * reported (on a GPU it could see them before or after the copy lands); so
 * are writes to the shared bytes a bulk store reads until its thread's
 * wait_group[.read] retires its group.
 *
 * Racecheck of the async proxy (docs/emulator.md, Racecheck):
 *   - a copy's shared-memory writes make racecheck forget earlier accesses of
 *     those bytes and name the copy (EmuShadow.acopy) and the mbarrier phase
 *     it completes in; a thread touching them must have observed that phase
 *     (EmuBlock.seen: its own successful test_wait / try_wait, merged at
 *     barriers among their participants, released by mbarrier arrivals to
 *     that mbarrier's waiters); so must the issuer of a later copy into them,
 *     which must also have waited for a barrier or mbarrier phase completed
 *     (EmuBlock.ev, EmuRaceThread.obs_ev) after the bytes' last read
 *     (EmuShadow.xrev; a wgmma's reads at its retiring wait);
 *   - the async proxy reading shared memory (wgmma operands, bulk and tensor
 *     store sources) needs each generic write there fenced by its writer
 *     (fence.proxy.async after it: EmuRaceThread.pfence moved past
 *     EmuShadow.wfence) and ordered before the read (the issuing warp, or a
 *     warp of the wgmma's warpgroup, ordered after the write by exec_race.c's
 *     clocks, or the writer one of them).
 *
 * Tensor copies read the emulator's own 128-byte tensor map (tensormap.c),
 * from the kernel's parameter space (a `.param .align 64 .b8 tmap[128]`
 * parameter) or global memory: the box at the given coordinates, element
 * strides applied, out-of-bounds elements zero on loads and skipped on
 * stores, placed in shared memory densely (innermost dimension fastest) and
 * swizzled like wgmma's layouts: the 16-byte chunk bits [4,7) of the shared
 * address are XORed with bits [7,10) (128B), [7,9) (64B), [7,8) (32B); the
 * box then starts at a multiple of the pattern's repeat (1024, 512, 256
 * bytes; 128 unswizzled). */
#include "emu/exec.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- the mbarrier object ---- */
#define MB_PENDING(v) ((uint32_t)((v) & 0xFFFFF))
#define MB_EXPECTED(v) ((uint32_t)(((v) >> 20) & 0xFFFFF))
#define MB_INIT_BIT (1ull << 62)
#define MB_PARITY(v) ((unsigned)((v) >> 63))
enum { MB_MAX_COUNT = (1 << 20) - 1 };

static int64_t mb_tx(uint64_t v) {
    int64_t x = (int64_t)((v >> 40) & 0x1FFFFF);
    return x & 0x100000 ? x - 0x200000 : x;
}
static uint64_t mb_pack(uint32_t pending, uint32_t expected, int64_t tx, unsigned parity) {
    return (uint64_t)pending | (uint64_t)expected << 20 | ((uint64_t)tx & 0x1FFFFF) << 40 | MB_INIT_BIT | (uint64_t)parity << 63;
}

/* The shared-memory word of the mbarrier at addr (a shared or generic address of thread t, in its CTA or another
 * of the cluster); NULL after emu_fault. */
static uint64_t *mb_word(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t addr, unsigned space) {
    if (space == EMU_SP_GENERIC) {
        if (addr - EMU_SHARED_WINDOW >= EMU_WINDOW_SIZE) {
            emu_fault(b, t, in, "invalid mbarrier", "address 0x%" PRIx64 " is not in shared memory", addr);
            return NULL;
        }
        addr -= EMU_SHARED_WINDOW;
    }
    addr &= 0xFFFFFFFFu;
    if (addr & 7) {
        emu_fault(b, t, in, "invalid mbarrier", "shared address 0x%" PRIx64 " is not 8-byte aligned", addr);
        return NULL;
    }
    uint64_t idx;
    if (!emu_smem_index(b, t, addr, 8, &idx)) {
        emu_fault(b, t, in, "invalid mbarrier", "shared address 0x%" PRIx64 " is outside %s %u bytes of shared memory", addr,
                  addr >= EMU_DSMEM_TAG ? "the cluster CTA's" : "the block's", b->shared_size);
        return NULL;
    }
    if (!emu_smem_live(b, t, in, addr, idx, "invalid mbarrier")) return NULL;
    return (uint64_t *)(void *)(b->shared + idx);
}

/* The mbarrier's index into b->shared, and its name for reports. */
static uint64_t mb_index(const EmuBlock *b, const uint64_t *w) { return (uint64_t)((const uint8_t *)w - b->shared); }
#define MB_NAME(b, idx) emu_smem_name(b, idx, (char[96]){0}, 96)

static bool mb_ready(EmuBlock *b, EmuThread *t, const EmuIns *in, const uint64_t *w, uint64_t idx) {
    if (*w & MB_INIT_BIT) return true;
    return emu_fault(b, t, in, "invalid mbarrier", "the mbarrier at shared %s is not initialised (mbarrier.init; or it was invalidated)",
                     MB_NAME(b, idx));
}

/* ---- racecheck of the async proxy: what each thread has observed of the mbarriers' phases ---- */
/* The slot of the mbarrier at index idx (added when add and one is free); -1 when it has none. */
static int mb_slot(EmuBlock *b, uint32_t idx, bool add) {
    for (uint32_t i = 0; i < b->nmbs; i++)
        if (b->mbs[i].idx == idx) return (int)i;
    if (!add) return -1;
    if (b->nmbs == EMU_MB_SLOTS) {
        b->mb_untracked = true;
        return -1;
    }
    memset(&b->mbs[b->nmbs], 0, sizeof *b->mbs);
    if (b->mbvc) memset(emu_race_mb(b, b->nmbs), 0, 2 * b->nvw * sizeof *b->mbvc);
    b->mbs[b->nmbs].idx = idx;
    return (int)b->nmbs++;
}

static uint32_t *seen_of(const EmuBlock *b, uint32_t thread) { return b->seen + (size_t)thread * EMU_MB_SLOTS; }

/* t arrives on slot s: the phase's waiters will know what t knows. */
static void mb_release(EmuBlock *b, const EmuThread *t, int s) {
    if (s < 0) return;
    const uint32_t *me = seen_of(b, t->linear);
    uint32_t *rel = b->mbs[s].rel;
    for (uint32_t j = 0; j < b->nmbs; j++)
        if (me[j] > rel[j]) rel[j] = me[j];
}

/* t saw slot s's last completed phase complete (a test_wait / try_wait that answered true; s < 0: an
 * mbarrier without a slot, taken to have completed just now). */
static void mb_observe(EmuBlock *b, EmuThread *t, int s) {
    if (s < 0) {
        b->rt[t->linear].obs_ev = b->ev;
        emu_race_acquire_all(b, t);
        return;
    }
    emu_race_acquire(b, t, emu_race_mb(b, (uint32_t)s) + b->nvw);
    EmuRaceThread *rt = &b->rt[t->linear];
    if (b->mbs[s].done_ev > rt->obs_ev) rt->obs_ev = b->mbs[s].done_ev;
    uint32_t *me = seen_of(b, t->linear);
    const EmuMbSlot *m = &b->mbs[s];
    for (uint32_t j = 0; j < b->nmbs; j++)
        if (m->acq[j] > me[j]) me[j] = m->acq[j];
    if (m->done > me[s]) me[s] = m->done;
}

void emu_async_reset(EmuBlock *b) {
    b->nbulkrd = 0;
    b->nrelw = 0;
    if (!b->mbs) return;
    /* a thread's seen phases are written for the last unit's mbarrier slots only (below its nmbs): those are cleared */
    if (b->nmbs > EMU_MB_SLOTS / 2) memset(b->seen, 0, (size_t)b->nthreads * EMU_MB_SLOTS * sizeof *b->seen);
    else if (b->nmbs)
        for (uint32_t i = 0; i < b->nthreads; i++) memset(seen_of(b, i), 0, b->nmbs * sizeof *b->seen);
    b->nmbs = 0;
    b->mb_untracked = false;
    b->nacp = 0;
    b->ev = 1; /* EmuShadow.xrev 0: not read */
    memset(b->rt, 0, (size_t)b->nthreads * sizeof *b->rt);
}

void emu_async_barrier(EmuBlock *b, uint32_t lo, uint32_t hi, int id) {
    if (!b->mbs) return;
    uint32_t all[EMU_MB_SLOTS] = {0}, now = ++b->ev;
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t i = lo; i < hi; i++) {
            EmuThread *t = &b->t[i];
            if (id >= 0 && (t->state != EMU_TS_BAR || t->bar_id != id)) continue;
            if (pass == 1) b->rt[i].obs_ev = now;
            uint32_t *me = seen_of(b, i);
            for (uint32_t j = 0; j < b->nmbs; j++) {
                if (pass == 0 && me[j] > all[j]) all[j] = me[j];
                if (pass == 1) me[j] = all[j];
            }
        }
}

static bool async_fault(EmuBlock *b, EmuThread *t, const EmuIns *in, const EmuAsyncCopy *c, uint64_t idx, const char *access,
                        const char *who) {
    const EmuThread *by = &b->t[c->thread];
    char what[160], name[96], line[256], where[600];
    emu_module_line(b->L->m, c->line, line, sizeof line);
    snprintf(what, sizeof what, "racecheck: shared memory %s before the %s that writes it was waited for", access,
             c->cpasync ? "cp.async" : "bulk copy");
    return emu_fault(b, t, in, what,
                     "shared %s is written by the copy at %s (%s), issued by thread (%u,%u,%u)%s, which completes on the mbarrier "
                     "at shared %s in its phase %u (parity %u); %s that phase (mbarrier.try_wait / test_wait, "
                     "or a barrier or mbarrier after a thread that did), and on a GPU the copy may land at any time until then",
                     emu_smem_name(b, idx, name, sizeof name), emu_module_where(b->L->m, c->line, where, sizeof where), line,
                     by->tid[0], by->tid[1], by->tid[2], by == t ? " (this thread)" : "", MB_NAME(b, b->mbs[c->slot].idx), c->phase,
                     c->phase & 1, who);
}

bool emu_async_access(EmuBlock *b, EmuThread *t, const EmuIns *in, EmuShadow *s, uint64_t idx, bool write) {
    const EmuAsyncCopy *c = &b->acp[s->acopy - 1];
    if (seen_of(b, t->linear)[c->slot] <= c->phase && !b->mb_untracked)
        return async_fault(b, t, in, c, idx, write ? "written" : "read", "this thread has not observed");
    if (write) s->acopy = 0; /* the write orders it: the generic rules take over */
    return true;
}

/* The threads of t's warp: [*lo, *hi) in EmuBlock.t. */
static void warp_range(const EmuBlock *b, const EmuThread *t, uint32_t *lo, uint32_t *hi) {
    uint32_t base = t->cta * b->cta_threads, local = t->linear - base;
    *lo = base + (local & ~31u);
    *hi = *lo + 32 < base + b->cta_threads ? *lo + 32 : base + b->cta_threads;
}

bool emu_async_read(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t idx, uint64_t size, uint32_t lo, uint32_t hi,
                    const char *who) {
    if (!b->shadow) return true;
    uint32_t wlo, whi; /* a bulk copy's issuing lane: writers of its warp are ordered by the warp's synchronisation */
    if (hi - lo == 1) warp_range(b, t, &wlo, &whi);
    else wlo = lo, whi = hi;
    /* the last copy and the last write found in order: the bytes after them mostly have the same (a row of one copy, a
     * vector store), whose answer depends on nothing else */
    uint32_t ok_copy = 0, ok_tid = UINT32_MAX, ok_clk = 0, ok_fence = 0;
    uint16_t ok_warp = 0;
    for (uint64_t i = 0; i < size; i++) {
        EmuShadow *s = &b->shadow[idx + i];
        if (s->acopy) { /* a copy's bytes: the issuing thread (or one of the warpgroup) observed its phase */
            if (s->acopy == ok_copy) continue;
            const EmuAsyncCopy *c = &b->acp[s->acopy - 1];
            bool ok = seen_of(b, t->linear)[c->slot] > c->phase;
            for (uint32_t k = lo; k < hi && !ok; k++) ok = seen_of(b, k)[c->slot] > c->phase;
            if (!ok && !b->mb_untracked)
                return async_fault(b, t, in, c, idx + i, "read by the async proxy",
                                   hi - lo > 1 ? "no thread of the warpgroup has observed" : "the issuing thread has not observed");
            ok_copy = s->acopy;
            continue;
        }
        if (!s->wclk) continue;
        if (s->wtid == ok_tid && s->wclk == ok_clk && s->wwarp == ok_warp && s->wfence == ok_fence) continue;
        const EmuThread *o = &b->t[s->wtid];
        bool unordered = !(s->wtid >= wlo && s->wtid < whi);
        for (uint32_t k = lo; k < hi && unordered; k += 32) /* each warp of [lo, hi) */
            unordered = !emu_race_ordered(b, k, s->wwarp & EMU_SH_WARP, s->wclk);
        if (!unordered && b->rt[s->wtid].pfence != s->wfence) { /* ordered, and fenced since */
            ok_tid = s->wtid, ok_clk = s->wclk, ok_warp = s->wwarp, ok_fence = s->wfence;
            continue;
        }
        const char *kind = unordered ? "with no barrier in between" : "and not fenced: the writer has executed no fence.proxy.async since";
        char what[160], name[96], line[256], where[600];
        emu_module_line(b->L->m, s->wline, line, sizeof line);
        snprintf(what, sizeof what, "racecheck: %s reads shared memory written through the generic proxy %s", who,
                 unordered ? "with no barrier in between" : "without fence.proxy.async");
        return emu_fault(b, t, in, what, "shared %s was written by thread (%u,%u,%u)%s at %s %s: %s",
                         emu_smem_name(b, idx + i, name, sizeof name), o->tid[0], o->tid[1], o->tid[2], o == t ? " (this thread)" : "",
                         emu_module_where(b->L->m, s->wline, where, sizeof where), kind, line);
    }
    return true;
}

/* The record (EmuShadow.acopy) of a copy by t on line `line` that completes in mbarrier slot s's current phase. */
static uint32_t acp_record(EmuBlock *b, const EmuThread *t, uint32_t s, uint32_t line, bool cpasync) {
    const EmuAsyncCopy *last = b->nacp ? &b->acp[b->nacp - 1] : NULL;
    if (!last || last->slot != s || last->phase != b->mbs[s].done || last->thread != t->linear || last->line != line ||
        last->cpasync != cpasync) {
        if (b->nacp == b->capacp) {
            b->capacp = b->capacp ? 2 * b->capacp : 64;
            b->acp = realloc(b->acp, b->capacp * sizeof *b->acp);
            if (!b->acp) out_of_memory();
        }
        b->acp[b->nacp++] = (EmuAsyncCopy){s, b->mbs[s].done, t->linear, line, cpasync};
    }
    return b->nacp;
}

/* The bytes [idx, idx + size) of shared memory written by a bulk or tensor copy of thread t completing on the
 * mbarrier at index mb: their reads by other threads must be ordered before the copy (a barrier or an mbarrier
 * phase completed after the last one, which t has waited for: a pipeline's producer waits on its consumers'
 * release before it refills a stage), and so must their last generic write by a thread outside t's warp (a store
 * from another CTA into memory a multicast copy still targets); then racecheck forgets what it knew of them and
 * remembers the copy.  False after emu_fault. */
static bool async_written(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t idx, uint64_t size, uint32_t mb) {
    if (!b->shadow) return true;
    uint32_t wlo, whi; /* the issuing warp: its lanes' writes count as ordered before the copy, as for its reads */
    warp_range(b, t, &wlo, &whi);
    for (uint64_t i = 0; b->mbs && i < size; i++) {
        const EmuShadow *x = &b->shadow[idx + i];
        const EmuAsyncCopy *c = x->acopy ? &b->acp[x->acopy - 1] : NULL;
        if (b->mb_untracked) break; /* what t has observed may have come through an untracked mbarrier */
        if (c && seen_of(b, t->linear)[c->slot] <= c->phase) { /* an earlier copy's bytes: t must know it has landed */
            char name[96], line[256], where[600];
            const EmuThread *by = &b->t[c->thread];
            emu_module_line(b->L->m, c->line, line, sizeof line);
            return emu_fault(b, t, in, "racecheck: two bulk copies write the same shared memory with nothing ordering them",
                             "shared %s is written by the copy at %s (%s), issued by thread (%u,%u,%u)%s, which completes on the "
                             "mbarrier at shared %s in its phase %u; this thread has not observed that phase (by its own wait, or "
                             "through a barrier or an mbarrier the readers of the bytes arrived on), so on a GPU the copies may land "
                             "in either order",
                             emu_smem_name(b, idx + i, name, sizeof name), emu_module_where(b->L->m, c->line, where, sizeof where), line,
                             by->tid[0], by->tid[1], by->tid[2], by == t ? " (this thread)" : "", MB_NAME(b, b->mbs[c->slot].idx),
                             c->phase);
        }
        if (x->wclk && x->wclk != EMU_CLK_PENDING && !(x->wtid >= wlo && x->wtid < whi) &&
            !emu_race_ordered(b, t->linear, x->wwarp & EMU_SH_WARP, x->wclk)) {
            /* a generic write the copy is not ordered after: on a GPU either may land last */
            char name[96], line[256], where[600], cta[64] = "";
            const EmuThread *o = &b->t[x->wtid];
            if (o->cta != t->cta) {
                const uint32_t *c3 = b->cta[o->cta].ctaid;
                snprintf(cta, sizeof cta, " of block (%u,%u,%u)", c3[0], c3[1], c3[2]);
            }
            emu_module_line(b->L->m, x->wline, line, sizeof line);
            return emu_fault(b, t, in,
                             "racecheck: a bulk copy overwrites shared memory written through the generic proxy with nothing ordering them",
                             "shared %s was written by thread (%u,%u,%u)%s at %s (%s), and no barrier or mbarrier phase orders that "
                             "write before this copy: on a GPU the write may land after the copy's bytes",
                             emu_smem_name(b, idx + i, name, sizeof name), o->tid[0], o->tid[1], o->tid[2], cta,
                             emu_module_where(b->L->m, x->wline, where, sizeof where), line);
        }
        if (!x->xrev || x->xrtid == t->linear || b->rt[t->linear].obs_ev > x->xrev) continue;
        char name[96], line[256], where[600], who[96];
        emu_module_line(b->L->m, x->xrline, line, sizeof line);
        if (x->xrtid == UINT32_MAX) snprintf(who, sizeof who, "several threads (the last at %s)",
                                             emu_module_where(b->L->m, x->xrline, where, sizeof where));
        else snprintf(who, sizeof who, "thread (%u,%u,%u)", b->t[x->xrtid].tid[0], b->t[x->xrtid].tid[1], b->t[x->xrtid].tid[2]);
        return emu_fault(b, t, in, "racecheck: a bulk copy overwrites shared memory whose reads it is not ordered after",
                         "shared %s was read by %s%s%s (%s), and no barrier or mbarrier phase completed after that read which "
                         "this thread has waited for: on a GPU the copy may land before the read (a producer waits on its "
                         "consumers' release, the pipeline's \"empty\" mbarrier, before it refills a stage)",
                         emu_smem_name(b, idx + i, name, sizeof name), who, x->xrtid == UINT32_MAX ? "" : " at ",
                         x->xrtid == UINT32_MAX ? "" : emu_module_where(b->L->m, x->xrline, where, sizeof where), line);
    }
    int s = b->mbs ? mb_slot(b, mb, false) : -1;
    emu_race_forget(b, idx, size, s < 0 ? 0 : acp_record(b, t, (uint32_t)s, in->line, false));
    return true;
}

/* cp.async.mbarrier.arrive hands t's pending cp.async copies to the mbarrier's current phase: their bytes count as
 * written now, and a thread touching them must have observed that phase, as a bulk copy's (a barrier after the
 * arrive orders nothing: the arrive-on fires when the copies have landed, at any time).  An mbarrier without a
 * slot: they land now. */
static void cpa_to_mbarrier(EmuBlock *b, EmuThread *t, uint32_t mb) {
    int s = b->mbs && !b->mb_untracked ? mb_slot(b, mb, false) : -1;
    EmuRaceThread *rt = &b->rt[t->linear];
    if (s < 0) {
        emu_race_cp_async_wait(b, t, 0, true);
        return;
    }
    const EmuCpAsync *c = b->cpa + (size_t)t->linear * EMU_CPA_MAX;
    for (uint32_t k = 0; k < rt->ncpa; k++)
        for (uint32_t i = 0; i < c[k].size; i++) {
            EmuShadow *x = &b->shadow[c[k].idx + i];
            if (x->wclk != EMU_CLK_PENDING || x->wtid != t->linear) continue;
            x->wclk = rt->clock + 1;
            x->acopy = acp_record(b, t, (uint32_t)s, x->wline, true);
        }
    rt->ncpa = 0;
}

static void mb_complete_if_done(EmuBlock *b, uint64_t *w) {
    uint64_t v = *w;
    if (MB_PENDING(v) || mb_tx(v)) return;
    *w = mb_pack(MB_EXPECTED(v), MB_EXPECTED(v), 0, MB_PARITY(v) ^ 1);
    if (!b->mbs) return;
    b->ev++;
    int s = mb_slot(b, (uint32_t)mb_index(b, w), false);
    if (s >= 0) {
        EmuMbSlot *m = &b->mbs[s];
        m->done++;
        m->done_ev = b->ev;
        memcpy(m->acq, m->rel, sizeof m->acq);
        memset(m->rel, 0, sizeof m->rel);
        uint32_t *rel = emu_race_mb(b, (uint32_t)s); /* racecheck: the phase's releases, for its observers */
        memcpy(rel + b->nvw, rel, b->nvw * sizeof *rel);
        memset(rel, 0, b->nvw * sizeof *rel);
    }
}

bool emu_mbarrier_phase_done(const EmuBlock *b, uint32_t idx, unsigned parity) {
    if ((uint64_t)idx + 8 > (uint64_t)b->ncta * b->smem_stride) return true; /* cannot happen: checked when the thread blocked */
    uint64_t v;
    memcpy(&v, b->shared + idx, 8);
    return !(v & MB_INIT_BIT) || MB_PARITY(v) != parity; /* an invalidated mbarrier lets the waiter run into its error */
}

bool emu_mbarrier_tx(EmuBlock *b, EmuThread *t, const EmuIns *in, uint32_t idx, int64_t bytes, bool arrive, uint32_t count) {
    if ((uint64_t)idx + 8 > (uint64_t)b->ncta * b->smem_stride || (idx & 7))
        return emu_fault(b, t, in, "invalid mbarrier", "index 0x%x is not an mbarrier of the cluster's shared memory", idx);
    uint64_t *w = (uint64_t *)(void *)(b->shared + idx);
    if (!mb_ready(b, t, in, w, idx)) return false;
    uint64_t v = *w;
    int64_t tx = mb_tx(v) - bytes;
    if (tx > MB_MAX_COUNT || tx < -MB_MAX_COUNT)
        return emu_fault(b, t, in, "invalid mbarrier", "the tx-count of the mbarrier at shared %s would be %" PRId64
                         " bytes (the range is +-%d)", MB_NAME(b, idx), -tx, MB_MAX_COUNT);
    uint32_t pending = MB_PENDING(v);
    if (arrive) {
        if (count > pending)
            return emu_fault(b, t, in, "invalid mbarrier", "%u arrival%s on the mbarrier at shared %s, which has %u pending",
                             count, count == 1 ? "" : "s", MB_NAME(b, idx), pending);
        pending -= count;
        if (b->mbs && t) mb_release(b, t, mb_slot(b, idx, false));
    }
    /* racecheck: an arrival releases the thread's accesses to the phase's observers, and so does the tx of an
     * st.async / red.async or complete_tx (a bulk copy's bytes are checked by the copy rules instead) */
    bool rel = arrive || (bytes > 0 && in && (in->op == EMU_OP_ST_ASYNC || in->op == EMU_OP_RED_ASYNC || in->op == EMU_OP_MBARRIER));
    if (b->vc && t && rel) {
        int s = mb_slot(b, idx, false);
        if (s >= 0) emu_race_release(b, t, emu_race_mb(b, (uint32_t)s));
    }
    *w = mb_pack(pending, MB_EXPECTED(v), tx, MB_PARITY(v));
    mb_complete_if_done(b, w);
    b->mbar_events++;
    return true;
}

bool emu_exec_cp_async_mbar(EmuBlock *b, EmuThread *t, const EmuIns *in) {
    uint64_t *w = mb_word(b, t, in, EMU_R(t, in, 0) + (uint64_t)in->off[0], in->space);
    if (!w) return false;
    uint32_t addr = (uint32_t)mb_index(b, w);
    if (!mb_ready(b, t, in, w, addr)) return false;
    /* racecheck: the thread's copies complete in the mbarrier's phase; without .noinc the arrive-on is no
     * arrival of the phase, but the phase cannot complete before it: it releases them to the phase's observers */
    if (b->cpa) {
        cpa_to_mbarrier(b, t, addr);
        int s = b->mbs && !(in->flags & EMU_F(NOINC)) ? mb_slot(b, addr, false) : -1;
        if (s >= 0) emu_race_release(b, t, emu_race_mb(b, (uint32_t)s));
    }
    /* without .noinc the pending count goes up by one now and down by one as the copies complete: no net change */
    return !(in->flags & EMU_F(NOINC)) || emu_mbarrier_tx(b, t, in, addr, 0, true, 1);
}

int emu_exec_mbarrier(EmuBlock *b, EmuThread *t, const EmuIns *in) {
    unsigned ai = (in->mode == EMU_MODE_MB_INIT || in->mode == EMU_MODE_MB_EXPECT_TX || in->mode == EMU_MODE_MB_COMPLETE_TX ||
                   in->mode == EMU_MODE_MB_INVAL) ? 0 : 1;
    if (in->mode == EMU_MODE_MB_PENDING) { /* count = the pending arrivals before the arrival that made the state */
        EMU_R(t, in, 0) = MB_PENDING(EMU_R(t, in, 1));
        return EMU_MBAR_EXEC_DONE;
    }
    uint64_t raw = EMU_R(t, in, ai) + (uint64_t)in->off[0];
    uint64_t *w = mb_word(b, t, in, raw, in->space);
    if (!w) return EMU_MBAR_EXEC_FAULT;
    uint32_t addr = (uint32_t)mb_index(b, w); /* index into b->shared */
    uint64_t v = *w;
    switch (in->mode) {
    case EMU_MODE_MB_INIT: {
        uint64_t count = (uint32_t)EMU_R(t, in, 1);
        if (count < 1 || count > MB_MAX_COUNT) {
            emu_fault(b, t, in, "invalid mbarrier", "mbarrier.init count %" PRIu64 " is not in 1..%d", count, MB_MAX_COUNT);
            return EMU_MBAR_EXEC_FAULT;
        }
        *w = mb_pack((uint32_t)count, (uint32_t)count, 0, 0);
        if (b->mbs) mb_slot(b, addr, true);
        b->mbar_events++;
        return EMU_MBAR_EXEC_DONE;
    }
    case EMU_MODE_MB_INVAL:
        if (!mb_ready(b, t, in, w, addr)) return EMU_MBAR_EXEC_FAULT;
        *w = 0;
        b->mbar_events++;
        return EMU_MBAR_EXEC_DONE;
    case EMU_MODE_MB_EXPECT_TX: case EMU_MODE_MB_COMPLETE_TX: {
        int64_t bytes = (uint32_t)EMU_R(t, in, 1);
        return emu_mbarrier_tx(b, t, in, addr, in->mode == EMU_MODE_MB_EXPECT_TX ? -bytes : bytes, false, 0) ? EMU_MBAR_EXEC_DONE
                                                                                                          : EMU_MBAR_EXEC_FAULT;
    }
    case EMU_MODE_MB_ARRIVE: case EMU_MODE_MB_ARRIVE_DROP: case EMU_MODE_MB_ARRIVE_EXPECT_TX: case EMU_MODE_MB_ARRIVE_DROP_EXPECT_TX: {
        if (!mb_ready(b, t, in, w, addr)) return EMU_MBAR_EXEC_FAULT;
        uint32_t count = 1;
        int64_t tx = 0;
        bool drop = in->mode == EMU_MODE_MB_ARRIVE_DROP || in->mode == EMU_MODE_MB_ARRIVE_DROP_EXPECT_TX;
        if (in->mode == EMU_MODE_MB_ARRIVE_EXPECT_TX || in->mode == EMU_MODE_MB_ARRIVE_DROP_EXPECT_TX)
            tx = -(int64_t)(uint32_t)EMU_R(t, in, 2);
        else if (in->nops == 3) count = (uint32_t)EMU_R(t, in, 2);
        if (count < 1 || count > MB_MAX_COUNT) {
            emu_fault(b, t, in, "invalid mbarrier", "arrival count %u is not in 1..%d", count, MB_MAX_COUNT);
            return EMU_MBAR_EXEC_FAULT;
        }
        unsigned parity = MB_PARITY(v);
        uint32_t pending_after = MB_PENDING(v) >= count ? MB_PENDING(v) - count : 0;
        if ((in->flags & EMU_F(NOCOMPLETE)) && pending_after == 0 && mb_tx(v) - tx == 0) {
            emu_fault(b, t, in, "invalid mbarrier", "mbarrier.arrive.noComplete completes the phase of the mbarrier at shared %s",
                      MB_NAME(b, addr));
            return EMU_MBAR_EXEC_FAULT;
        }
        if (drop) {
            if (count > MB_EXPECTED(v)) {
                emu_fault(b, t, in, "invalid mbarrier", "arrive_drop of %u from an mbarrier expecting %u", count, MB_EXPECTED(v));
                return EMU_MBAR_EXEC_FAULT;
            }
            *w = mb_pack(MB_PENDING(v), MB_EXPECTED(v) - count, mb_tx(v), parity);
        }
        if (!emu_mbarrier_tx(b, t, in, addr, tx, true, count)) return EMU_MBAR_EXEC_FAULT;
        /* the state: the phase arrived at and the arrivals pending before this one (what mbarrier.pending_count
         * gives: "the pending count of the mbarrier object prior to the arrive-on operation", the PTX ISA) */
        EMU_R(t, in, 0) = (uint64_t)parity << 63 | MB_INIT_BIT | MB_PENDING(v);
        return EMU_MBAR_EXEC_DONE;
    }
    case EMU_MODE_MB_TEST_WAIT: case EMU_MODE_MB_TRY_WAIT: {
        if (!mb_ready(b, t, in, w, addr)) return EMU_MBAR_EXEC_FAULT;
        uint64_t arg = EMU_R(t, in, 2);
        unsigned parity;
        if (in->flags & EMU_F(PARITY)) {
            parity = (unsigned)(arg & 1);
        } else {
            if (!(arg & MB_INIT_BIT)) {
                emu_fault(b, t, in, "invalid mbarrier", "the state operand 0x%" PRIx64 " was not returned by mbarrier.arrive", arg);
                return EMU_MBAR_EXEC_FAULT;
            }
            parity = (unsigned)(arg >> 63);
        }
        bool done = MB_PARITY(v) != parity;
        if (!done && in->mode == EMU_MODE_MB_TRY_WAIT) {
            t->mbar_addr = addr;
            t->mbar_parity = (uint8_t)parity;
            return EMU_MBAR_EXEC_BLOCK;
        }
        EMU_R(t, in, 0) = done;
        if (done && b->mbs) mb_observe(b, t, mb_slot(b, addr, false));
        return done ? EMU_MBAR_EXEC_DONE : EMU_MBAR_EXEC_YIELD;
    }
    }
    emu_fault(b, t, in, "unsupported instruction", "this mbarrier operation is not supported by the emulator");
    return EMU_MBAR_EXEC_FAULT;
}

/* ---- elect.sync ---- */
bool emu_exec_elect(EmuBlock *b, EmuThread **g, unsigned n) {
    (void)b;
    uint32_t present = 0;
    for (unsigned i = 0; i < n; i++) present |= 1u << g[i]->lane;
    for (unsigned i = 0; i < n; i++) {
        EmuThread *t = g[i];
        const EmuIns *in = &t->fn->code[t->pc];
        uint32_t m = emu_warp_mask(t, in) & present;
        uint32_t leader = m ? (uint32_t)__builtin_ctz(m) : 0;
        EMU_R(t, in, 0) = leader;
        t->r[in->o[5]] = m && t->lane == leader;
    }
    return true;
}

/* ---- bulk copies ---- */
/* Host pointer of [addr, addr + size) in shared memory (a shared or generic address), for the async proxy: no racecheck
 * here (a copy's writes: async_written; tensormap.replace: map_bytes). */
static uint8_t *shared_bytes(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t addr, unsigned space, uint64_t size,
                             unsigned align, bool write) {
    if (space == EMU_SP_GENERIC) {
        if (addr - EMU_SHARED_WINDOW >= EMU_WINDOW_SIZE) {
            emu_fault(b, t, in, "memcheck: invalid __shared__ access by a bulk copy", "address 0x%" PRIx64 " is not in shared memory", addr);
            return NULL;
        }
        addr -= EMU_SHARED_WINDOW;
    }
    addr &= 0xFFFFFFFFu;
    if (addr & (align - 1)) {
        emu_fault(b, t, in, "memcheck: misaligned bulk copy", "shared address 0x%" PRIx64 " is not aligned to %u bytes", addr, align);
        return NULL;
    }
    uint64_t idx;
    if (!emu_smem_index(b, t, addr, size, &idx)) {
        emu_fault(b, t, in, write ? "memcheck: invalid __shared__ write by a bulk copy" : "memcheck: invalid __shared__ read by a bulk copy",
                  "[0x%" PRIx64 ", 0x%" PRIx64 ") is outside %s %u bytes of shared memory", addr, addr + size,
                  addr >= EMU_DSMEM_TAG ? "the cluster CTA's" : "the block's", b->shared_size);
        return NULL;
    }
    if (!emu_smem_live(b, t, in, addr, idx, write ? "memcheck: invalid __shared__ write by a bulk copy"
                                                  : "memcheck: invalid __shared__ read by a bulk copy"))
        return NULL;
    if (write && b->wg_reading && !emu_wgmma_smem_write(b, t, in, idx, size)) return NULL;
    return b->shared + idx;
}

/* Index into b->shared of a pointer shared_bytes or mb_word gave. */
static uint32_t shared_offset(const EmuBlock *b, const uint8_t *p) { return (uint32_t)(p - b->shared); }

/* .multicast::cluster: the CTA ranks of the 16-bit mask operand `op` (bit r: rank r) into *mask; false after
 * emu_fault.  Without it, the rank whose shared memory holds index idx. */
static bool copy_ranks(EmuBlock *b, EmuThread *t, const EmuIns *in, unsigned op, uint64_t idx, uint32_t *mask) {
    if (!(in->xflags & EMU_XF_MULTICAST)) {
        *mask = 1u << (idx / b->smem_stride - emu_cl_base(b, t));
        return true;
    }
    *mask = (uint16_t)EMU_R(t, in, op);
    if (*mask >> b->ncl)
        return emu_fault(b, t, in, "invalid multicast", "ctaMask 0x%04x names CTAs beyond the cluster's %u", *mask, b->ncl);
    return true;
}

/* The mbarrier a copy into the CTA whose shared memory starts at index cta completes its bytes on: the operand's
 * (w), or with .multicast::cluster the one at the same offset in that CTA. */
static uint32_t dest_mbarrier(const EmuBlock *b, const EmuIns *in, const uint64_t *w, size_t cta) {
    uint64_t idx = mb_index(b, w);
    return (uint32_t)((in->xflags & EMU_XF_MULTICAST) ? cta + idx % b->smem_stride : idx);
}

/* ---- reductions of bulk and tensor copies ---- */
bool emu_reduce_type_ok(unsigned mode, unsigned ty) {
    unsigned k = emu_type_kind(ty), sz = emu_type_size(ty);
    bool fl = ty == EMU_T_F16 || ty == EMU_T_BF16 || ty == EMU_T_F32 || ty == EMU_T_F64;
    bool in = (k == EMU_K_U || k == EMU_K_S || k == EMU_K_B) && (sz == 4 || sz == 8);
    switch (mode) {
    case EMU_MODE_AADD: case EMU_MODE_AMIN: case EMU_MODE_AMAX: return fl || (in && k != EMU_K_B);
    case EMU_MODE_AINC: case EMU_MODE_ADEC: return ty == EMU_T_U32;
    case EMU_MODE_AAND: case EMU_MODE_AOR: case EMU_MODE_AXOR: return in;
    }
    return false;
}

/* The element type of a tensor map's .elemtype code (u8 u16 u32 s32 u64 s64 f16 f32 f32.ftz f64 bf16 tf32 tf32.ftz). */
static unsigned map_elem_type(unsigned code) {
    static const uint8_t ty[13] = {EMU_T_U8, EMU_T_U16, EMU_T_U32, EMU_T_S32, EMU_T_U64, EMU_T_S64, EMU_T_F16, EMU_T_F32,
                                   EMU_T_F32, EMU_T_F64, EMU_T_BF16, EMU_T_F32, EMU_T_F32};
    return code < 13 ? ty[code] : EMU_T_U8;
}

/* *g op= *s for one element of type ty (checked by emu_reduce_type_ok).  Float min/max as atom's (emu_atom_apply): a
 * NaN loses to a number. */
static uint64_t reduce_value(unsigned mode, unsigned ty, uint64_t old, uint64_t v) {
    uint64_t r;
    if (mode == EMU_MODE_AADD && ty == EMU_T_F32) { /* cp.reduce.async.bulk .add.f32 flushes subnormals (the ISA) */
        r = emu_add_f32_ftz(old, v);
    } else {
        bool bad = false;
        r = emu_atom_apply(mode, ty, old, v, 0, &bad);
    }
    return r;
}

/* Atomically (blocks on other host threads reduce into the same global memory, as the GPU's L2 does it
 * element by element): a compare-and-swap loop on the element, whose address is aligned to its size. */
static void reduce_elem(unsigned mode, unsigned ty, uint8_t *g, const uint8_t *s) {
    unsigned es = emu_type_size(ty);
    uint64_t v = 0;
    memcpy(&v, s, es);
    if (es == 2) {
        uint16_t *q = (uint16_t *)(void *)g, o = __atomic_load_n(q, __ATOMIC_RELAXED);
        while (!__atomic_compare_exchange_n(q, &o, (uint16_t)reduce_value(mode, ty, o, v), true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
    } else if (es == 4) {
        uint32_t *q = (uint32_t *)(void *)g, o = __atomic_load_n(q, __ATOMIC_RELAXED);
        while (!__atomic_compare_exchange_n(q, &o, (uint32_t)reduce_value(mode, ty, o, v), true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
    } else {
        uint64_t *q = (uint64_t *)(void *)g, o = __atomic_load_n(q, __ATOMIC_RELAXED);
        while (!__atomic_compare_exchange_n(q, &o, reduce_value(mode, ty, o, v), true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
    }
}

/* ---- st.async, red.async: stores and reductions into the shared memory of a CTA of the cluster ---- */
bool emu_exec_st_async(EmuBlock *b, EmuThread *t, const EmuIns *in) {
    unsigned es = emu_type_size(in->ty), n = in->vec;
    uint64_t a = EMU_R(t, in, 0) + (uint64_t)in->off[0];
    unsigned space = in->space;
    if (space == EMU_SP_GENERIC) {
        if (a - EMU_SHARED_WINDOW >= EMU_WINDOW_SIZE)
            return emu_fault(b, t, in, "invalid address", "%s to 0x%" PRIx64 ", which is not in shared memory", emu_op_name(in->op), a);
        a -= EMU_SHARED_WINDOW;
        space = EMU_SP_SHARED;
    }
    uint8_t *p = emu_access(b, t, in, EMU_SP_SHARED, a & 0xFFFFFFFFu, es * n, es * n, true);
    if (!p) return false;
    for (unsigned k = 0; k < n; k++) {
        uint64_t v = n == 1 ? EMU_R(t, in, 1) : t->r[t->fn->vec[in->o[1] + k]];
        if (in->op == EMU_OP_RED_ASYNC) {
            uint64_t old = 0;
            memcpy(&old, p, es);
            bool bad = false;
            v = emu_atom_apply(in->mode, in->ty, old, v, 0, &bad);
        }
        memcpy(p + k * es, &v, es);
    }
    uint64_t *w = mb_word(b, t, in, EMU_R(t, in, 2) + (uint64_t)in->off[1], space);
    return w && emu_mbarrier_tx(b, t, in, shared_offset(b, (uint8_t *)w), (int64_t)(es * n), false, 0);
}

/* ---- pending bulk writes to global memory ---- */
/* Widens the pending bytes' span by [lo, hi); a cached allocation it meets leaves the inline cache and the hints
 * (emu_access then checks its accesses). */
static void bulk_span(EmuBlock *b, uint64_t lo, uint64_t hi) {
    if (b->bulk_lo == b->bulk_hi) b->bulk_lo = lo, b->bulk_hi = hi;
    if (lo < b->bulk_lo) b->bulk_lo = lo;
    if (hi > b->bulk_hi) b->bulk_hi = hi;
    for (unsigned k = 0; k < EMU_GCACHE; k++)
        if (b->gc[k].lo < hi && lo < b->gc[k].hi) b->gc[k] = (EmuGlobalCache){0, 0, NULL};
    for (uint32_t k = 0; k < b->L->m->nghints; k++) /* and the instructions' hints, copies of entries of gc */
        if (b->gh[k].lo < hi && lo < b->gh[k].hi) b->gh[k] = (EmuGlobalHint){0, 0, NULL, 0};
}

/* Notes [lo, hi) as written by t's open bulk group (merged into the previous note when it continues it). */
static void bulk_note(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t lo, uint64_t hi) {
    EmuBulkWrite *p = b->nbulk ? &b->bulk[b->nbulk - 1] : NULL;
    if (p && p->thread == t->linear && p->group == t->bulk_commits && p->line == in->line && p->hi == lo) {
        p->hi = hi;
        bulk_span(b, lo, hi);
        return;
    }
    if (b->nbulk == b->capbulk) {
        b->capbulk = b->capbulk ? 2 * b->capbulk : 64;
        b->bulk = realloc(b->bulk, b->capbulk * sizeof *b->bulk);
        if (!b->bulk) out_of_memory();
    }
    b->bulk[b->nbulk++] = (EmuBulkWrite){lo, hi, t->linear, t->bulk_commits, in->line};
    bulk_span(b, lo, hi);
}

void emu_bulk_commit(EmuThread *t) { t->bulk_commits++; }

/* Whether t's wait keeping its `keep` most recent bulk groups retires group g. */
static bool bulk_retired(const EmuThread *t, uint32_t thread, uint32_t g, uint64_t keep) {
    return thread == t->linear && g < t->bulk_commits && (uint64_t)(t->bulk_commits - g) > keep;
}

void emu_bulk_wait(EmuBlock *b, EmuThread *t, const EmuIns *in) {
    uint64_t keep = EMU_R(t, in, 0); /* groups that may stay pending: the most recent ones */
    uint32_t n = 0;
    for (uint32_t i = 0; i < b->nbulkrd; i++) { /* with or without .read, the sources of the retired groups are read */
        const EmuBulkWrite *r = &b->bulkrd[i];
        if (!bulk_retired(t, r->thread, r->group, keep)) b->bulkrd[n++] = *r;
        /* racecheck: as reads by t now (the copy's line), which another thread's write must be ordered after */
        else if (b->shadow) emu_race_read_note(b, t, r->lo, r->hi - r->lo, r->line);
    }
    b->nbulkrd = n;
    if (!b->nbulk || (in->flags & EMU_F(READ))) return; /* .read: the sources are read, the writes may be in flight */
    n = 0;
    for (uint32_t i = 0; i < b->nbulk; i++)
        if (!bulk_retired(t, b->bulk[i].thread, b->bulk[i].group, keep)) b->bulk[n++] = b->bulk[i];
    b->nbulk = n;
    b->bulk_lo = b->bulk_hi = 0;
    for (uint32_t i = 0; i < n; i++) bulk_span(b, b->bulk[i].lo, b->bulk[i].hi);
}

/* Notes the shared bytes [lo, hi) (indices into shared) as read by t's open bulk group: a bulk store to global
 * memory reads its source until cp.async.bulk.wait_group[.read] retires the group. */
static void bulkrd_note(EmuBlock *b, const EmuThread *t, const EmuIns *in, uint64_t lo, uint64_t hi) {
    if (b->nbulkrd == b->capbulkrd) {
        b->capbulkrd = b->capbulkrd ? 2 * b->capbulkrd : 64;
        b->bulkrd = realloc(b->bulkrd, b->capbulkrd * sizeof *b->bulkrd);
        if (!b->bulkrd) out_of_memory();
    }
    b->bulkrd[b->nbulkrd++] = (EmuBulkWrite){lo, hi, t->linear, t->bulk_commits, in->line};
}

bool emu_bulk_src_check(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t idx, uint64_t size) {
    for (uint32_t i = 0; i < b->nbulkrd; i++) {
        const EmuBulkWrite *r = &b->bulkrd[i];
        if (idx >= r->hi || idx + size <= r->lo) continue;
        const EmuThread *by = &b->t[r->thread];
        char name[96], line[256], where[600];
        emu_module_line(b->L->m, r->line, line, sizeof line);
        return emu_fault(b, t, in, "racecheck: shared memory written while a bulk store still reads it",
                         "shared %s is a source of the bulk copy at %s (%s), issued by thread (%u,%u,%u)%s, which has not waited "
                         "for it: the copy reads its source until cp.async.bulk.wait_group.read (or wait_group) retires its group",
                         emu_smem_name(b, idx > r->lo ? idx : r->lo, name, sizeof name),
                         emu_module_where(b->L->m, r->line, where, sizeof where), line, by->tid[0], by->tid[1], by->tid[2],
                         by == t ? " (this thread)" : "");
    }
    return true;
}

bool emu_bulk_check(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t addr, unsigned size, bool write) {
    for (uint32_t i = 0; i < b->nbulk; i++) {
        const EmuBulkWrite *w = &b->bulk[i];
        if (addr >= w->hi || addr + size <= w->lo) continue;
        const EmuThread *by = &b->t[w->thread];
        char line[256], where[600];
        emu_module_line(b->L->m, w->line, line, sizeof line);
        return emu_fault(b, t, in, write ? "racecheck: global memory written before a bulk store to it completed"
                                         : "racecheck: global memory read before a bulk store to it completed",
                         "global address 0x%" PRIx64 " is written by the bulk copy at %s (%s), issued by thread (%u,%u,%u)%s, which "
                         "has not waited for it: its writes land asynchronously until cp.async.bulk.wait_group (without .read, "
                         "which waits only until the source has been read) retires its group",
                         addr > w->lo ? addr : w->lo, emu_module_where(b->L->m, w->line, where, sizeof where), line, by->tid[0],
                         by->tid[1], by->tid[2], by == t ? " (this thread)" : "");
    }
    return true;
}

/* ---- tensor copies ---- */
/* The 16-byte chunk of shared address a after the swizzle of the tensor map (and of wgmma's layouts). */
static uint32_t swizzle_addr(uint32_t a, unsigned swz) {
    static const uint32_t mask[4] = {0, 1, 3, 7}; /* none, 32B, 64B, 128B */
    return a ^ (((a >> 7) & mask[swz & 3]) << 4);
}

static bool tensor_box(EmuBlock *b, EmuThread *t, const EmuIns *in, const EmuTensorMap *tm, const int64_t c[5], const uint64_t n[5],
                       uint8_t *cta, uint32_t soff, bool red, unsigned rty);
static bool tensor_im2col(EmuBlock *b, EmuThread *t, const EmuIns *in, const EmuTensorMap *tm, const int64_t c[5], const int64_t off[3],
                          uint8_t *cta, uint32_t soff, bool red, unsigned rty);

static bool exec_tensor(EmuBlock *b, EmuThread *t, const EmuIns *in) {
    bool load = in->space == EMU_SP_SHARED;
    unsigned mi = load ? 1 : 0, ci = load ? 2 : 1, si = load ? 0 : 2;
    uint64_t maddr = EMU_R(t, in, mi) + (uint64_t)in->off[load ? 1 : 0];
    /* a kernel parameter (the grid-constant tensor map, by its parameter-space or cvta.param
     * generic address) or global memory */
    if (maddr - EMU_PARAM_WINDOW < EMU_WINDOW_SIZE) maddr -= EMU_PARAM_WINDOW;
    bool param = maddr < EMU_PARAM_FRAME;
    const uint8_t *mp = emu_access(b, t, in, param ? EMU_SP_PARAM : EMU_SP_GLOBAL, maddr, 128, 64, false);
    if (!mp) return false;
    EmuTensorMap tm;
    const char *why = NULL;
    if (!emu_tensor_map_decode(mp, &tm, &why))
        return emu_fault(b, t, in, "invalid tensor map", "the 128 bytes at %s 0x%" PRIx64 " are not a tensor map: %s",
                         param ? "parameter offset" : "address", maddr, why);
    bool red = in->op == EMU_OP_CP_RED_BULK_TENSOR;
    unsigned dims = red ? in->vec : in->mode - EMU_MODE_D1 + 1;
    unsigned rty = red ? map_elem_type(tm.elemtype) : 0;
    if (red && !emu_reduce_type_ok(in->mode, rty))
        return emu_fault(b, t, in, "invalid tensor copy", "no .%s reduction of the map's .%s elements", emu_mode_name(in->mode),
                         emu_type_name(rty));
    if (dims != tm.rank)
        return emu_fault(b, t, in, "invalid tensor copy", "a .%ud copy through a tensor map of rank %u", dims, tm.rank);
    bool im2col = in->xflags & EMU_XF_IM2COL;
    if (im2col != (tm.im2col == 1))
        return emu_fault(b, t, in, "invalid tensor copy", "%s copy through %s tensor map", im2col ? "an .im2col" : "a .tile",
                         tm.im2col ? "an im2col (cuTensorMapEncodeIm2col)" : "a tiled (cuTensorMapEncodeTiled)");
    int64_t c[5] = {0}, off[3] = {0};
    const EmuFunc *f = t->fn;
    for (unsigned d = 0; d < dims; d++) c[d] = (int32_t)(uint32_t)t->r[f->vec[in->o[ci] + d]];
    if (im2col && load) /* the im2col offsets: unsigned 16-bit, one per spatial dimension (W first) */
        for (unsigned k = 0; k + 2 < dims; k++) off[k] = (uint16_t)t->r[f->vec[in->o[4] + k]];
    /* the box: n[d] elements along d, element strides applied (im2col: pixels rows of channels elements) */
    uint64_t n[5] = {1, 1, 1, 1, 1}, total = 1;
    for (unsigned d = 0; d < dims; d++) {
        n[d] = im2col ? d == 0 ? tm.channels : d == 1 ? tm.pixels : 1 : (tm.box[d] + tm.elem_strides[d] - 1) / tm.elem_strides[d];
        total *= n[d];
    }
    unsigned es = tm.esize;
    uint64_t bytes = total * es;
    /* a swizzle moves 16-byte chunks within groups of its span (the box starts aligned to 8 spans): a last
     * group the box fills in part reaches as far as its chunks land (a box of 64 bytes under the 128-byte
     * swizzle stays in place: its chunks' XOR, from address bits 7-9, is 0) */
    static const uint64_t span[4] = {1, 32, 64, 128};
    uint64_t g = span[tm.swizzle & 3], covered = bytes;
    if (g > 1 && bytes % g) {
        uint64_t start = bytes / g * g;
        covered = start;
        for (uint64_t o = start; o < bytes; o += 16) {
            uint64_t to = start + ((swizzle_addr((uint32_t)o, tm.swizzle) - start) & (g - 1)) + 16;
            if (to > covered) covered = to;
        }
    }
    uint8_t *smem = shared_bytes(b, t, in, EMU_R(t, in, si) + (uint64_t)in->off[load ? 0 : 2], load ? in->space : in->space2,
                                 covered, tm.swizzle ? (unsigned)span[tm.swizzle & 3] * 8 : 128, load);
    if (!smem) return false;
    uint32_t sidx = shared_offset(b, smem), soff = sidx % b->smem_stride; /* the box's offset in its CTA's shared memory */
    uint32_t ranks;
    if (!copy_ranks(b, t, in, im2col ? 5 : 4, sidx, &ranks)) return false; /* ctaMask after the im2col offsets */
    uint64_t *w = NULL;
    if (load && !(w = mb_word(b, t, in, EMU_R(t, in, 3) + (uint64_t)in->off[2], in->space))) return false;
    for (uint32_t rank = 0, base = emu_cl_base(b, t); rank < b->ncl; rank++) {
        if (!(ranks >> rank & 1)) continue;
        uint8_t *cta = b->shared + (size_t)(base + rank) * b->smem_stride; /* multicast: the same offset in every CTA of the mask */
        uint64_t at = (uint64_t)(cta - b->shared) + soff;
        if (load && b->nbulkrd && !emu_bulk_src_check(b, t, in, at, covered)) return false;
        if (load && !async_written(b, t, in, at, covered, dest_mbarrier(b, in, w, (size_t)(cta - b->shared)))) return false;
        if (load && b->wg_reading && !emu_wgmma_smem_write(b, t, in, at, covered)) return false;
        if (im2col ? !tensor_im2col(b, t, in, &tm, c, off, cta, soff, red, rty) : !tensor_box(b, t, in, &tm, c, n, cta, soff, red, rty))
            return false;
        if (load && !emu_mbarrier_tx(b, t, in, dest_mbarrier(b, in, w, (size_t)(cta - b->shared)), (int64_t)bytes, false, 0))
            return false;
    }
    if (!load) bulkrd_note(b, t, in, sidx, sidx + covered);
    return true;
}

/* Box row (i1..i4) of a tensor load with element stride 1 along dimension 0, its n0 elements from box element idx
 * on, at once: the out-of-bounds elements filled, the others copied from global memory in runs of up to 16 bytes
 * (a swizzle moves 16-byte chunks).  Only where the global bytes lie in one allocation of the block's cache
 * (emu_global's: nothing pending, writable, so each element's emu_access would have answered the same pointer
 * with no check to make); false (nothing done) otherwise: the caller copies the row element by element. */
static bool tensor_row_fast(EmuBlock *b, const EmuTensorMap *tm, const int64_t c[5], const uint64_t ii[5], uint64_t n0,
                            uint8_t *cta, uint32_t soff, uint64_t idx) {
    unsigned es = tm->esize;
    bool inside = true;
    uint64_t goff = 0;
    for (unsigned d = 1; d < tm->rank; d++) {
        int64_t x = c[d] + (int64_t)(ii[d] * tm->elem_strides[d]);
        if (x < 0 || (uint64_t)x >= tm->dims[d]) inside = false;
        else goff += (uint64_t)x * tm->strides[d - 1];
    }
    /* elements [lo, hi) of the row are inside dimension 0 */
    int64_t lo = inside ? (c[0] < 0 ? -c[0] : 0) : 0, hi = inside ? (int64_t)tm->dims[0] - c[0] : 0;
    if (hi > (int64_t)n0) hi = (int64_t)n0;
    if (lo > hi) lo = hi;
    const uint8_t *g = NULL;
    if (hi > lo) {
        uint64_t ga = tm->addr + goff + (uint64_t)(c[0] + lo) * es, len = (uint64_t)(hi - lo) * es;
        if (ga & (es - 1)) return false;
        for (unsigned k = 0; k < EMU_GCACHE && !g; k++)
            if (ga >= b->gc[k].lo && ga < b->gc[k].hi && len <= b->gc[k].hi - ga) g = b->gc[k].host + (ga - b->gc[k].lo);
        if (!g) return false;
    }
    uint64_t nan = es == 2 ? EMU_OOB_NAN16 : es == 4 ? 0x7FFFFFFFu : 0x7FFFFFFFFFFFFFFFull; /* NaN fill: a quiet NaN */
    for (int64_t i = 0; i < (int64_t)n0;) {
        uint32_t o = soff + (uint32_t)((idx + (uint64_t)i) * es);
        uint8_t *sp = cta + swizzle_addr(o, tm->swizzle);
        if (i < lo || i >= hi) {
            if (tm->fill) memcpy(sp, &nan, es);
            else memset(sp, 0, es);
            i++;
            continue;
        }
        /* to the end of this 16-byte chunk or of the inside run */
        int64_t cnt = (int64_t)((16 - (o & 15)) / es);
        if (cnt < 1) cnt = 1;
        if (cnt > hi - i) cnt = hi - i;
        memcpy(sp, g + (uint64_t)(i - lo) * es, (size_t)cnt * es);
        i += cnt;
    }
    return true;
}

/* Box row (i1..i4) of a tensor store (no reduction) with element stride 1 along dimension 0, its n0 elements
 * from box element idx on, at once: the elements inside the tensor copied to global memory in runs of up to
 * 16 bytes, the run of global bytes written so far (*run_lo, *run_hi) carried on as the element loop carries it.
 * Only where the row's global bytes lie in one writable allocation, aligned to the element, and racecheck is off
 * (each element's emu_access, in the copy's own bulk accesses, would have answered the same pointer with no check
 * to make, and there are no shadow reads to note); false (nothing done) otherwise: the caller copies the row
 * element by element, which reports what is wrong. */
static bool tensor_store_row_fast(EmuBlock *b, EmuThread *t, const EmuIns *in, const EmuTensorMap *tm, const int64_t c[5],
                                  const uint64_t ii[5], uint64_t n0, const uint8_t *cta, uint32_t soff, uint64_t idx,
                                  uint64_t *run_lo, uint64_t *run_hi) {
    if (b->shadow || !b->in_bulk) return false;
    unsigned es = tm->esize;
    uint64_t goff = 0;
    for (unsigned d = 1; d < tm->rank; d++) {
        int64_t x = c[d] + (int64_t)(ii[d] * tm->elem_strides[d]);
        if (x < 0 || (uint64_t)x >= tm->dims[d]) return true; /* the whole row is outside: nothing is stored */
        goff += (uint64_t)x * tm->strides[d - 1];
    }
    int64_t lo = c[0] < 0 ? -c[0] : 0, hi = (int64_t)tm->dims[0] - c[0];
    if (hi > (int64_t)n0) hi = (int64_t)n0;
    if (hi <= lo) return true;
    uint64_t ga = tm->addr + goff + (uint64_t)(c[0] + lo) * es, len = (uint64_t)(hi - lo) * es;
    if (ga & (es - 1)) return false;
    const EmuAlloc *a = emu_mem_find(b->L->mem, ga);
    if (!a || a->readonly || len > a->size - (ga - a->addr)) return false;
    uint8_t *g = a->host + (ga - a->addr);
    for (int64_t i = lo; i < hi;) {
        uint32_t o = soff + (uint32_t)((idx + (uint64_t)i) * es);
        int64_t cnt = (int64_t)((16 - (o & 15)) / es); /* to the end of this 16-byte chunk (a swizzle moves whole chunks) */
        if (cnt < 1) cnt = 1;
        if (cnt > hi - i) cnt = hi - i;
        memcpy(g + (uint64_t)(i - lo) * es, cta + swizzle_addr(o, tm->swizzle), (size_t)cnt * es);
        i += cnt;
    }
    if (ga != *run_hi) {
        if (*run_hi > *run_lo) bulk_note(b, t, in, *run_lo, *run_hi);
        *run_lo = ga;
    }
    *run_hi = ga + len;
    return true;
}

/* The box of a tensor copy between global memory and the shared memory of one CTA (cta; the box at offset soff):
 * out-of-bounds elements filled on loads and skipped on stores; false after emu_fault. */
static bool tensor_box(EmuBlock *b, EmuThread *t, const EmuIns *in, const EmuTensorMap *tmp, const int64_t c[5], const uint64_t n[5],
                       uint8_t *cta, uint32_t soff, bool red, unsigned rty) {
    const EmuTensorMap tm = *tmp;
    bool load = in->space == EMU_SP_SHARED;
    unsigned dims = tm.rank, es = tm.esize;
    uint64_t idx = 0, run_lo = 0, run_hi = 0; /* stores: the run of global bytes written so far */
    for (uint64_t i4 = 0; i4 < n[4]; i4++)
        for (uint64_t i3 = 0; i3 < n[3]; i3++)
            for (uint64_t i2 = 0; i2 < n[2]; i2++)
                for (uint64_t i1 = 0; i1 < n[1]; i1++) {
                    if (load && tm.elem_strides[0] == 1 && es <= 16 &&
                        tensor_row_fast(b, &tm, c, (const uint64_t[5]){0, i1, i2, i3, i4}, n[0], cta, soff, idx)) {
                        idx += n[0];
                        continue;
                    }
                    if (!load && !red && tm.elem_strides[0] == 1 && es <= 16 &&
                        tensor_store_row_fast(b, t, in, &tm, c, (const uint64_t[5]){0, i1, i2, i3, i4}, n[0], cta, soff, idx,
                                              &run_lo, &run_hi)) {
                        idx += n[0];
                        continue;
                    }
                    for (uint64_t i0 = 0; i0 < n[0]; i0++, idx++) {
                        const uint64_t ii[5] = {i0, i1, i2, i3, i4};
                        bool inside = true;
                        uint64_t goff = 0;
                        for (unsigned d = 0; d < dims; d++) {
                            int64_t x = c[d] + (int64_t)(ii[d] * tm.elem_strides[d]);
                            if (x < 0 || (uint64_t)x >= tm.dims[d]) inside = false;
                            else goff += (uint64_t)x * (d ? tm.strides[d - 1] : es);
                        }
                        uint8_t *sp = cta + swizzle_addr(soff + (uint32_t)(idx * es), tm.swizzle);
                        if (!inside) {
                            if (load && tm.fill) { /* NaN fill: a quiet NaN of the element's format */
                                uint64_t nan = es == 2 ? EMU_OOB_NAN16 : es == 4 ? 0x7FFFFFFFu : 0x7FFFFFFFFFFFFFFFull;
                                memcpy(sp, &nan, es);
                            } else if (load) {
                                memset(sp, 0, es);
                            }
                            continue;
                        }
                        if (!load && b->shadow && !emu_async_read(b, t, in, (uint64_t)(sp - b->shared), es, t->linear, t->linear + 1,
                                                                  emu_op_name(in->op)))
                            return false;
                        uint8_t *gp = emu_access(b, t, in, EMU_SP_GLOBAL, tm.addr + goff, es, es, !load);
                        if (!gp) return false;
                        if (load) memcpy(sp, gp, es);
                        else if (red) reduce_elem(in->mode, rty, gp, sp);
                        else memcpy(gp, sp, es);
                        if (!load && tm.addr + goff != run_hi) {
                            if (run_hi > run_lo) bulk_note(b, t, in, run_lo, run_hi);
                            run_lo = tm.addr + goff;
                        }
                        if (!load) run_hi = tm.addr + goff + es;
                    }
                }
    if (run_hi > run_lo) bulk_note(b, t, in, run_lo, run_hi);
    return true;
}

/* The pixels of an im2col copy (the PTX ISA's im2col mode): row p of the shared tile (tm->channels elements) is
 * pixel p of the traversal, its channels c[0] .. c[0] + channels - 1.  The traversal starts at the instruction's
 * coordinates (W, H, D from c[1] on, N last) and steps along W by W's traversal stride; past the bounding box's
 * upper bound along a spatial dimension (dims - 1 + upper) the coordinate goes back to the lower corner and the
 * next dimension steps (W, then H, then D, then N).  The element read (or written) is at the pixel's position
 * plus the im2col offsets (loads; stores have none), so the traversal is that of the filter's origin and the
 * offsets pick the filter tap; out-of-bounds elements fill (loads) or are skipped (stores) as in a tiled box.
 * Each row is a box of channels x 1 x .. through the tiled path. */
static bool tensor_im2col(EmuBlock *b, EmuThread *t, const EmuIns *in, const EmuTensorMap *tmp, const int64_t c[5], const int64_t off[3],
                          uint8_t *cta, uint32_t soff, bool red, unsigned rty) {
    EmuTensorMap tm = *tmp;
    unsigned rank = tm.rank, ns = rank - 2; /* spatial dimensions: 1 .. rank - 2 */
    int64_t lo[3], hi[3], step[4], pos[5];
    for (unsigned k = 0; k < ns; k++) {
        lo[k] = tm.lower[k];
        hi[k] = (int64_t)tm.dims[k + 1] - 1 + tm.upper[k];
    }
    for (unsigned k = 0; k < ns + 1; k++) step[k] = tm.elem_strides[k + 1];
    for (unsigned d = 0; d < rank; d++) pos[d] = c[d];
    for (unsigned d = 0; d < rank; d++) tm.elem_strides[d] = 1; /* each row moves contiguous channels */
    const uint64_t n[5] = {tm.channels, 1, 1, 1, 1};
    for (uint32_t p = 0; p < tm.pixels; p++) {
        int64_t rc[5] = {pos[0], 0, 0, 0, 0};
        for (unsigned k = 0; k < ns; k++) rc[k + 1] = pos[k + 1] + off[k];
        rc[rank - 1] = pos[rank - 1];
        if (!tensor_box(b, t, in, &tm, rc, n, cta, soff + p * tm.channels * tm.esize, red, rty)) return false;
        /* the next pixel: W steps; a coordinate past its upper bound wraps to the lower corner and carries */
        unsigned k = 0;
        for (; k < ns; k++) {
            pos[k + 1] += step[k];
            if (pos[k + 1] <= hi[k]) break;
            pos[k + 1] = lo[k];
        }
        if (k == ns) pos[rank - 1] += step[ns];
    }
    return true;
}

/* d op= s over size bytes of elements of in->ty (cp.reduce.async.bulk), else a copy (s and d may overlap in shared memory) */
static void bulk_move(const EmuIns *in, uint8_t *d, const uint8_t *s, uint64_t size) {
    if (in->op != EMU_OP_CP_RED_BULK) {
        memmove(d, s, size);
        return;
    }
    unsigned es = emu_type_size(in->ty);
    for (uint64_t i = 0; i + es <= size; i += es) reduce_elem(in->mode, in->ty, d + i, s + i);
}

static bool exec_bulk(EmuBlock *b, EmuThread *t, const EmuIns *in);

bool emu_exec_bulk(EmuBlock *b, EmuThread *t, const EmuIns *in) {
    b->in_bulk = true; /* the copy's own global accesses are the async proxy's */
    bool ok = exec_bulk(b, t, in);
    b->in_bulk = false;
    return ok;
}

static bool exec_bulk(EmuBlock *b, EmuThread *t, const EmuIns *in) {
    if (in->op == EMU_OP_CP_BULK_TENSOR || in->op == EMU_OP_CP_RED_BULK_TENSOR) return exec_tensor(b, t, in);
    uint64_t size = (uint32_t)EMU_R(t, in, 2);
    if (size == 0 || size % 16)
        return emu_fault(b, t, in, "invalid bulk copy", "%s size %" PRIu64 " is not a positive multiple of 16", emu_op_name(in->op), size);
    uint64_t dst = EMU_R(t, in, 0) + (uint64_t)in->off[0], src = EMU_R(t, in, 1) + (uint64_t)in->off[1];
    if (in->space == EMU_SP_SHARED) { /* global or shared -> shared (multicast: of each CTA of the mask), completing tx bytes */
        uint8_t *d = shared_bytes(b, t, in, dst, EMU_SP_SHARED, size, 16, true);
        if (!d) return false;
        const uint8_t *s = in->space2 == EMU_SP_SHARED ? shared_bytes(b, t, in, src, EMU_SP_SHARED, size, 16, false)
                                                       : emu_access(b, t, in, EMU_SP_GLOBAL, src, (unsigned)size, 16, false);
        if (!s) return false;
        if (in->space2 == EMU_SP_SHARED &&
            !emu_async_read(b, t, in, shared_offset(b, s), size, t->linear, t->linear + 1, emu_op_name(in->op)))
            return false;
        uint64_t *w = mb_word(b, t, in, EMU_R(t, in, 3) + (uint64_t)in->off[2], EMU_SP_SHARED);
        uint32_t ranks, ss = b->smem_stride, doff = shared_offset(b, d) % ss;
        if (!w || !copy_ranks(b, t, in, 4, shared_offset(b, d), &ranks)) return false;
        for (uint32_t r = 0, base = emu_cl_base(b, t); r < b->ncl; r++) {
            if (!(ranks >> r & 1)) continue;
            size_t at = (size_t)(base + r) * ss;
            if (b->nbulkrd && !emu_bulk_src_check(b, t, in, at + doff, size)) return false;
            if (!async_written(b, t, in, at + doff, size, dest_mbarrier(b, in, w, at))) return false;
            if (b->wg_reading && !emu_wgmma_smem_write(b, t, in, at + doff, size)) return false;
            bulk_move(in, b->shared + at + doff, s, size);
            if (!emu_mbarrier_tx(b, t, in, dest_mbarrier(b, in, w, at), (int64_t)size, false, 0)) return false;
        }
        return true;
    }
    const uint8_t *s = shared_bytes(b, t, in, src, in->space2, size, 16, false);
    if (!s || !emu_async_read(b, t, in, shared_offset(b, s), size, t->linear, t->linear + 1, emu_op_name(in->op))) return false;
    uint8_t *d = emu_access(b, t, in, EMU_SP_GLOBAL, dst, (unsigned)size, 16, true);
    if (!d) return false;
    bulk_move(in, d, s, size);
    bulk_note(b, t, in, dst, dst + size);
    bulkrd_note(b, t, in, shared_offset(b, s), shared_offset(b, s) + size);
    return true;
}

/* ---- tensor maps built by the kernel ---- */
/* The 128 bytes of a tensor map at addr in space (shared, global or generic), for tensormap.replace and
 * tensormap.cp_fenceproxy: the async proxy's view (no racecheck; a write makes racecheck forget the bytes). */
static uint8_t *map_bytes(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t addr, unsigned space, bool write) {
    if (space == EMU_SP_SHARED || (space == EMU_SP_GENERIC && addr - EMU_SHARED_WINDOW < EMU_WINDOW_SIZE)) {
        uint8_t *p = shared_bytes(b, t, in, addr, space, EMU_TMAP_BYTES, 64, write);
        if (p && write && b->shadow) emu_race_forget(b, (uint64_t)(p - b->shared), EMU_TMAP_BYTES, 0);
        return p;
    }
    return emu_access(b, t, in, space == EMU_SP_GENERIC ? EMU_SP_GENERIC : EMU_SP_GLOBAL, addr, EMU_TMAP_BYTES, 64, write);
}

bool emu_exec_tensormap(EmuBlock *b, EmuThread *t, const EmuIns *in) {
    if (in->op == EMU_OP_TENSORMAP_CP) { /* every lane of the warp copies the same bytes: once is what the GPU does */
        const uint8_t *src = map_bytes(b, t, in, EMU_R(t, in, 1) + (uint64_t)in->off[1], in->space2, false);
        if (!src) return false;
        uint8_t tmp[EMU_TMAP_BYTES];
        memcpy(tmp, src, sizeof tmp);
        uint8_t *dst = map_bytes(b, t, in, EMU_R(t, in, 0) + (uint64_t)in->off[0], EMU_SP_GLOBAL, true);
        if (!dst) return false;
        memcpy(dst, tmp, sizeof tmp);
        return true;
    }
    bool dim = in->nops == 3;
    uint64_t addr = EMU_R(t, in, 0) + (uint64_t)in->off[0];
    uint8_t *map = map_bytes(b, t, in, addr, in->space, true);
    if (!map) return false;
    unsigned ord = dim ? (unsigned)EMU_R(t, in, 1) : 0;
    uint64_t v = EMU_R(t, in, dim ? 2 : 1);
    if (in->ty == EMU_T_B32) v = (uint32_t)v;
    const char *why;
    if (!emu_tensor_map_replace(map, in->mode, ord, v, &why))
        return emu_fault(b, t, in, "invalid tensormap.replace", "%s: %s %" PRIu64 " (dimension %u) for the map at 0x%" PRIx64, why,
                         emu_mode_name(in->mode), v, ord, addr);
    return true;
}
