/* exec_race.c - racecheck of shared memory: the shadow of every byte and the happens-before order it is checked
 * against (docs/emulator.md, Racecheck).
 *
 * Happens-before at warp granularity, with vector clocks:
 *   1. Every thread counts its releases (EmuRaceThread.clock): a bar.sync / bar.arrive / bar.red arrival, an
 *      mbarrier arrival (and the tx an st.async completes), a barrier.cluster.arrive, a release write, its exit.
 *      Its accesses happen at clock + 1.  Lanes of a warp that run the same code count alike, so a warp's
 *      clock is that of any of its lanes; bar.warp.sync and the barriers a warp waits at make its lanes'
 *      counts equal again where the code made them differ (an elected lane's arrivals).
 *   2. Every warp w of the unit has a vector vc[w][0..nvw) over the warps of its cluster (the only ones whose
 *      accesses can meet its own: shared memory is the cluster's): vc[w][x] = the clock of warp x up to
 *      which w's accesses from now on are ordered after x's.  vc[w][w] is what came back to w of its own
 *      releases (a barrier it took part in, an mbarrier phase one of its lanes arrived on): it orders the
 *      accesses of w's lanes with each other, as bar.warp.sync does.
 *   3. A release by thread t of warp w into a synchronisation object's vector acc: acc = acc join vc[w],
 *      acc[w] = max(acc[w], clock + 1); then t's clock counts it.  An acquire by t: vc[w] = vc[w] join acc,
 *      and t's clock moves past vc[w][w] (its later accesses come after everything its warp now knows of
 *      itself).  The objects: each barrier id of a CTA (its current instance: arrivals release, the
 *      threads that waited acquire at completion; bar.arrive does not acquire; a whole-block barrier
 *      acquires the CTA's exited threads too), barrier.cluster (the phase), each tracked mbarrier (the arrivals
 *      of the current phase; test_wait / try_wait answering true acquires the last completed phase), each
 *      location release-written (EmuBlock.relw: an acquire reading it acquires; a release store replaces
 *      the vector, a release read-modify-write joins it, as a release sequence; the fence patterns count: a
 *      strong write after a fence of its thread releases, a strong read of such a location is acquired at the
 *      thread's next fence, EmuRaceThread.fenced / pend_acq).  What the vectors cannot
 *      say (an mbarrier past the tracked slots, a release by another cluster of a cooperative launch) is
 *      acquired as everything every thread of the cluster did so far ("acquire all": no false report).
 *   4. A byte's shadow keeps its last write (thread, warp, clock) and its reads since: the last reading
 *      warp's (thread or several lanes, clock) and, when earlier reads by other warps are not ordered
 *      before that warp's, those warps: a bit each (rmask) while they read at the same clock as the last
 *      warp (warps that run in step: the common case, which costs no memory), else their clocks by warp
 *      in a read set (a vector of EmuBlock.rsets, freed at the next write).  An access by warp w is
 *      ordered after an access of warp x at clock k when vc[w][x] >= k; two lanes of one warp also when
 *      both passed one bar.warp.sync together since (EmuRaceThread.with, EmuBlock.warp_gen).  A write
 *      after a write or a read, or a read after a write, not ordered so is a hazard and stops the launch;
 *      atomics and strong accesses never conflict with each other, and a store of the bytes already there
 *      is no hazard after a write.
 *   5. A wgmma's shared-operand reads are noted at the wgmma.wait_group that retires them, as reads by its
 *      warpgroup's first warp flagged EMU_SH_WGMMA, at a clock the warpgroup's threads share from the wait: a
 *      write is ordered after them when it comes from the warpgroup, or is ordered after the wait of any of its
 *      warps (wgmma_read_ordered); kept in a read set beside other reads, flagged there too (rs_put).
 * The async proxy's rules (copies' phases observed, fence.proxy.async) are exec_async.c's; they read the
 * write records kept here. */
#include "emu/exec.h"

#include <stdio.h>
#include <stdlib.h>

/* ---- clocks ---- */
static uint32_t unit_warp(const EmuBlock *b, const EmuThread *t) { return t->cta * b->cta_warps + (t->linear % b->cta_threads) / 32; }
static uint32_t *vc_of(const EmuBlock *b, const EmuThread *t) { return b->vc + (size_t)unit_warp(b, t) * b->nvw; }
static uint16_t cl_warp(const EmuBlock *b, const EmuThread *t) { return (uint16_t)(unit_warp(b, t) % b->nvw); }
static uint32_t clock_of(const EmuBlock *b, const EmuThread *t) { return b->rt[t->linear].clock + 1; }

bool emu_race_alloc(EmuBlock *b) {
    uint32_t nw = b->ncta * b->cta_warps, nv = b->nvw = b->ncl * b->cta_warps;
    b->vc = calloc((size_t)nw * nv, sizeof *b->vc);
    b->barvc = calloc((size_t)b->ncta * (EMU_MAX_BAR_ID + 1) * nv, sizeof *b->barvc);
    b->exitvc = calloc((size_t)b->ncta * nv, sizeof *b->exitvc);
    b->clvc = calloc((size_t)b->ncta * 2 * nv, sizeof *b->clvc);
    b->mbvc = calloc((size_t)EMU_MB_SLOTS * 2 * nv, sizeof *b->mbvc);
    return b->vc && b->barvc && b->exitvc && b->clvc && b->mbvc;
}

void emu_race_free(EmuBlock *b) {
    free(b->vc);
    free(b->barvc);
    free(b->exitvc);
    free(b->clvc);
    free(b->mbvc);
    free(b->relvc);
    free(b->relh);
    free(b->rsets);
}

void emu_race_reset(EmuBlock *b) {
    size_t nv = b->nvw;
    memset(b->vc, 0, (size_t)b->ncta * b->cta_warps * nv * sizeof *b->vc);
    memset(b->barvc, 0, (size_t)b->ncta * (EMU_MAX_BAR_ID + 1) * nv * sizeof *b->barvc);
    memset(b->exitvc, 0, (size_t)b->ncta * nv * sizeof *b->exitvc);
    memset(b->clvc, 0, (size_t)b->ncta * 2 * nv * sizeof *b->clvc);
    memset(b->mbvc, 0, (size_t)EMU_MB_SLOTS * 2 * nv * sizeof *b->mbvc);
    b->nrsets = 0;
    b->rsets_free = 0;
}

void emu_race_release(EmuBlock *b, EmuThread *t, uint32_t *acc) {
    const uint32_t *v = vc_of(b, t);
    for (uint32_t j = 0; j < b->nvw; j++)
        if (v[j] > acc[j]) acc[j] = v[j];
    uint32_t w = cl_warp(b, t), c = clock_of(b, t);
    if (c > acc[w]) acc[w] = c;
    b->rt[t->linear].clock++;
}

void emu_race_acquire(EmuBlock *b, EmuThread *t, const uint32_t *acc) {
    uint32_t *v = vc_of(b, t);
    for (uint32_t j = 0; j < b->nvw; j++)
        if (acc[j] > v[j]) v[j] = acc[j];
    uint32_t *c = &b->rt[t->linear].clock, self = v[cl_warp(b, t)];
    if (self > *c) *c = self;
}

void emu_race_acquire_all(EmuBlock *b, EmuThread *t) {
    uint32_t *v = vc_of(b, t), lo = emu_cl_base(b, t) * b->cta_threads, hi = lo + b->ncl * b->cta_threads;
    for (uint32_t i = lo; i < hi; i++) {
        uint32_t w = cl_warp(b, &b->t[i]), c = b->rt[i].clock + 1;
        if (c > v[w]) v[w] = c;
        b->rt[i].clock++; /* what each thread does from now on is not ordered by this */
    }
    uint32_t *c = &b->rt[t->linear].clock, self = v[cl_warp(b, t)];
    if (self > *c) *c = self;
}

void emu_race_warp_sync(EmuBlock *b, EmuThread **g, unsigned n) {
    uint32_t m = 0;
    for (unsigned i = 0; i < n; i++)
        if (b->rt[g[i]->linear].clock > m) m = b->rt[g[i]->linear].clock;
    for (unsigned i = 0; i < n; i++) b->rt[g[i]->linear].clock = m;
}

/* ---- release writes: the last release of each location and what its acquirers learn ---- */
static uint32_t *relvc_of(const EmuBlock *b, uint32_t i) { return b->relvc + (size_t)i * b->nvw; }

static uint32_t relh_slot(const EmuBlock *b, const uint8_t *at) {
    uint64_t h = (uint64_t)(uintptr_t)at * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(h >> 32) & (b->caprelh - 1);
}

/* The relw entry of location at, or nrelw (none).  A linear search cost each acquire and release the number of
 * locations released so far (a kernel's per-row flags and counters: thousands). */
static uint32_t relw_find(EmuBlock *b, const uint8_t *at) {
    if (b->nrelh != b->nrelw) { /* relw was reset (emu_async_reset, each unit): so is the index */
        if (b->relh) memset(b->relh, 0, b->caprelh * sizeof *b->relh);
        b->nrelh = 0;
    }
    if (!b->nrelw) return 0;
    for (uint32_t k = relh_slot(b, at);; k = (k + 1) & (b->caprelh - 1)) {
        uint32_t e = b->relh[k];
        if (!e) return b->nrelw;
        if (b->relw[e - 1].at == at) return e - 1;
    }
}

static void relh_put(EmuBlock *b, uint32_t i) {
    uint32_t k = relh_slot(b, b->relw[i].at);
    while (b->relh[k]) k = (k + 1) & (b->caprelh - 1);
    b->relh[k] = i + 1;
}

void emu_race_release_at(EmuBlock *b, EmuThread *t, const uint8_t *at, bool rmw) {
    uint32_t i = relw_find(b, at), cl = t->cta / b->ncl;
    if (i == b->nrelw) {
        if (b->nrelw == b->caprelw) {
            uint32_t nc = b->caprelw ? 2 * b->caprelw : 16;
            EmuRelWrite *n = realloc(b->relw, sizeof *n * nc);
            uint32_t *v = realloc(b->relvc, sizeof *v * nc * b->nvw);
            if (n) b->relw = n;
            if (v) b->relvc = v;
            if (!n || !v) out_of_memory();
            b->caprelw = nc;
        }
        if (2 * (b->nrelw + 1) > b->caprelh) { /* at most half full: rebuilt twice as large */
            uint32_t nc = b->caprelh ? 2 * b->caprelh : 64;
            uint32_t *h = calloc(nc, sizeof *h);
            if (!h) out_of_memory();
            free(b->relh);
            b->relh = h, b->caprelh = nc;
            for (uint32_t k = 0; k < b->nrelw; k++) relh_put(b, k);
        }
        b->relw[b->nrelw++] = (EmuRelWrite){at, t->linear, cl};
        relh_put(b, i);
        b->nrelh = b->nrelw;
        rmw = false;
    }
    EmuRelWrite *e = &b->relw[i];
    if (!rmw) { /* a store: its acquirers synchronise with it alone */
        memset(relvc_of(b, i), 0, b->nvw * sizeof *b->relvc);
        e->cl = cl;
    } else if (e->cl != cl) {
        e->cl = UINT32_MAX; /* releases of several clusters (a cooperative launch): acquired as everything */
    }
    e->thread = t->linear;
    if (e->cl == cl) emu_race_release(b, t, relvc_of(b, i));
    else b->rt[t->linear].clock++;
}

void emu_race_acquire_at(EmuBlock *b, EmuThread *t, const uint8_t *at) {
    uint32_t i = relw_find(b, at);
    if (i == b->nrelw) return;
    const EmuRelWrite *e = &b->relw[i];
    if (e->thread == t->linear) return;
    if (e->cl == t->cta / b->ncl) emu_race_acquire(b, t, relvc_of(b, i));
    else emu_race_acquire_all(b, t);
    if (b->mbs) b->rt[t->linear].obs_ev = ++b->ev;
}

void emu_race_fence(EmuBlock *b, EmuThread *t) {
    EmuRaceThread *rt = &b->rt[t->linear];
    rt->fenced = true;
    uint32_t i = rt->pend_acq - 1;
    bool many = rt->pend_many;
    rt->pend_acq = 0, rt->pend_many = false;
    if (many) {
        emu_race_acquire_all(b, t);
        if (b->mbs) rt->obs_ev = ++b->ev;
        return;
    }
    if (i >= b->nrelw) return; /* none, or the unit's locations were forgotten */
    const EmuRelWrite *e = &b->relw[i];
    if (e->thread == t->linear) return;
    if (e->cl == t->cta / b->ncl) emu_race_acquire(b, t, relvc_of(b, i));
    else emu_race_acquire_all(b, t);
    if (b->mbs) rt->obs_ev = ++b->ev;
}

void emu_race_strong(EmuBlock *b, EmuThread *t, const uint8_t *at, bool read, bool write, bool rmw) {
    EmuRaceThread *rt = &b->rt[t->linear];
    if (read) {
        uint32_t i = relw_find(b, at);
        if (i < b->nrelw && b->relw[i].thread != t->linear) {
            if (rt->pend_acq && rt->pend_acq != i + 1) rt->pend_many = true;
            rt->pend_acq = i + 1;
        }
    }
    if (write && rt->fenced) emu_race_release_at(b, t, at, rmw);
}

/* ---- read sets ---- */
static uint32_t *rset_of(const EmuBlock *b, uint32_t r) { return b->rsets + (size_t)(r - 1) * b->nvw; }

static uint32_t rset_new(EmuBlock *b) {
    uint32_t r = b->rsets_free;
    if (r) {
        b->rsets_free = rset_of(b, r)[0];
    } else {
        if (b->nrsets == b->caprsets) {
            uint32_t nc = b->caprsets ? 2 * b->caprsets : 256;
            uint32_t *n = realloc(b->rsets, sizeof *n * nc * b->nvw);
            if (!n) out_of_memory();
            b->rsets = n, b->caprsets = nc;
        }
        r = ++b->nrsets;
    }
    memset(rset_of(b, r), 0, b->nvw * sizeof *b->rsets);
    return r;
}

/* Entry x of a read set takes a read by warp x at clock clk (wg: a wgmma's, of the warpgroup whose first warp x
 * is: flagged RS_WGMMA, ordered before a write as EMU_SH_WGMMA's reads are, wgmma_read_ordered).  It keeps the
 * later clock, flagged only while every read it stands for is a wgmma's: a generic read of warp x and a wgmma's
 * of its warpgroup together are ordered before a write that is ordered after warp x at the later clock (no race
 * missed; a write ordered only after another warp of the warpgroup is reported). */
enum { RS_WGMMA = 0x80000000u };
static void rs_put(uint32_t *rs, uint32_t x, uint32_t clk, bool wg) {
    uint32_t old = rs[x], oc = old & ~RS_WGMMA;
    if (!old) {
        rs[x] = clk | (wg ? RS_WGMMA : 0);
        return;
    }
    rs[x] = (clk > oc ? clk : oc) | (wg && (old & RS_WGMMA) ? RS_WGMMA : 0);
}

/* The warps of the read mask move to the read set (rclk is about to change). */
static void rmask_flush(EmuBlock *b, EmuShadow *s) {
    if (!s->rset) s->rset = rset_new(b);
    uint32_t *rs = rset_of(b, s->rset);
    for (uint32_t m = s->rmask; m; m &= m - 1) {
        uint32_t y = (uint32_t)__builtin_ctz(m);
        rs_put(rs, y, s->rclk, false); /* (a wgmma's reads never go to the mask) */
    }
    s->rmask = 0;
}

static void rset_drop(EmuBlock *b, EmuShadow *s) {
    s->rmask = 0;
    if (!s->rset) return;
    rset_of(b, s->rset)[0] = b->rsets_free;
    b->rsets_free = s->rset;
    s->rset = 0;
}

void emu_race_forget(EmuBlock *b, uint64_t idx, uint64_t size, uint32_t acopy) {
    emu_race_touch(b, idx, size);
    const EmuShadow clean = {.acopy = acopy};
    bool rsets = b->nrsets != 0; /* none was ever taken in this unit: no byte holds one */
    for (uint64_t i = 0; i < size; i++) {
        EmuShadow *s = &b->shadow[idx + i];
        if (rsets) rset_drop(b, s);
        *s = clean;
    }
}

bool emu_race_ordered(const EmuBlock *b, uint32_t thread, uint16_t warp, uint32_t clk) {
    return vc_of(b, &b->t[thread])[warp] >= clk;
}

/* ---- cp.async: its writes land at the wait that retires them ---- */
static EmuCpAsync *cpa_of(const EmuBlock *b, const EmuThread *t) { return b->cpa + (size_t)t->linear * EMU_CPA_MAX; }

/* Copy c of t lands now: its bytes still pending from t count as written at t's clock. */
static void cpa_land(EmuBlock *b, EmuThread *t, const EmuCpAsync *c) {
    uint32_t clk = clock_of(b, t), me = t->linear, n = c->size; /* (read once: the stores below may alias them) */
    EmuShadow *s = &b->shadow[c->idx];
    for (uint32_t i = 0; i < n; i++)
        if (s[i].wclk == EMU_CLK_PENDING && s[i].wtid == me) s[i].wclk = clk;
}

void emu_race_cp_async(EmuBlock *b, EmuThread *t, uint64_t idx, unsigned size) {
    EmuRaceThread *rt = &b->rt[t->linear];
    EmuCpAsync *c = cpa_of(b, t);
    if (rt->ncpa == EMU_CPA_MAX) { /* the oldest lands now: a race with it may go unreported, none is made up */
        cpa_land(b, t, &c[0]);
        memmove(c, c + 1, (EMU_CPA_MAX - 1) * sizeof *c);
        rt->ncpa--;
    }
    bool mine = false; /* the bytes whose write it took (not those another thread's equal copy holds) */
    uint32_t me = t->linear, clk = clock_of(b, t);
    for (uint32_t i = 0; i < size; i++) {
        EmuShadow *s = &b->shadow[idx + i];
        if (s->wtid == me && s->wclk == clk) s->wclk = EMU_CLK_PENDING, mine = true;
    }
    if (mine) c[rt->ncpa++] = (EmuCpAsync){(uint32_t)idx, (uint16_t)rt->cpa_commits, (uint16_t)size};
}

void emu_race_cp_async_commit(EmuBlock *b, EmuThread *t) { b->rt[t->linear].cpa_commits++; }

void emu_race_cp_async_wait(EmuBlock *b, EmuThread *t, int64_t keep, bool uncommitted) {
    EmuRaceThread *rt = &b->rt[t->linear];
    EmuCpAsync *c = cpa_of(b, t);
    uint32_t n = 0;
    for (uint32_t i = 0; i < rt->ncpa; i++) {
        uint16_t age = (uint16_t)((uint16_t)rt->cpa_commits - c[i].group); /* 0: the open group, 1: the last committed */
        if (uncommitted || (age > 0 && age > keep)) cpa_land(b, t, &c[i]);
        else c[n++] = c[i];
    }
    rt->ncpa = n;
}

static bool cpa_report(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t idx, bool write) {
    const EmuShadow *s = &b->shadow[idx];
    const EmuThread *by = &b->t[s->wtid];
    char what[160], name[96], line[256], where[600];
    emu_module_line(b->L->m, s->wline, line, sizeof line);
    snprintf(what, sizeof what, "racecheck: shared memory %s before the cp.async that writes it was waited for",
             write ? "written" : "read");
    return emu_fault(b, t, in, what,
                     "shared %s is written by the cp.async at %s (%s), issued by thread (%u,%u,%u)%s, which has not retired "
                     "it: cp.async.wait_group (or wait_all) in the issuing thread, then a barrier before other threads "
                     "touch the bytes; on a GPU the copy may land at any time until then",
                     emu_smem_name(b, idx, name, sizeof name), emu_module_where(b->L->m, s->wline, where, sizeof where), line,
                     by->tid[0], by->tid[1], by->tid[2], by == t ? " (this thread)" : "");
}

/* ---- the check of each access ---- */
/* bar.warp.sync orders the accesses of the lanes that take part in it: an access of another thread of the
 * same warp at warp-sync generation gen is ordered with t's when both have since taken part in one later
 * bar.warp.sync together (two syncs of disjoint masks order nothing between their lanes). */
static bool warp_ordered(const EmuBlock *b, const EmuThread *t, uint32_t other, uint32_t gen) {
    const EmuThread *o = &b->t[other];
    return unit_warp(b, o) == unit_warp(b, t) && b->rt[t->linear].with[(o->linear % b->cta_threads) % 32] > gen;
}

static bool race_report(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t idx, const char *kind, uint32_t other, uint32_t oline,
                        bool other_write, int owarp) {
    char what[200], name[96];
    snprintf(what, sizeof what, "racecheck: shared-memory hazard (%s) at __shared__ %s", kind, emu_smem_name(b, idx, name, sizeof name));
    char line[256], where[600];
    emu_module_line(b->L->m, oline, line, sizeof line);
    emu_module_where(b->L->m, oline, where, sizeof where);
    if (owarp >= 0) { /* a warp of the read set: its threads, by their first */
        const EmuThread *o = &b->t[(emu_cl_base(b, t) * b->cta_warps + (uint32_t)owarp) / b->cta_warps * b->cta_threads +
                                   (uint32_t)owarp % b->cta_warps * 32];
        return emu_fault(b, t, in, what, "conflicts with a read by the warp of thread (%u,%u,%u) with no barrier in between "
                         "(the last read of the byte, by another warp, at %s: %s)", o->tid[0], o->tid[1], o->tid[2], where, line);
    }
    if (other == UINT32_MAX)
        return emu_fault(b, t, in, what, "conflicts with reads by several threads (the last at %s) with no barrier in between: %s",
                         where, line);
    const EmuThread *o = &b->t[other];
    char cta[64] = "";
    if (o->cta != t->cta) {
        const uint32_t *c = b->cta[o->cta].ctaid;
        snprintf(cta, sizeof cta, " of block (%u,%u,%u)", c[0], c[1], c[2]);
    }
    return emu_fault(b, t, in, what, "conflicts with a %s by thread (%u,%u,%u)%s at %s with no barrier in between: %s",
                     other_write ? "write" : "read", o->tid[0], o->tid[1], o->tid[2], cta, where, line);
}

/* A write of byte idx (shadow s) not ordered after the wgmma read it last had (EMU_SH_WGMMA). */
static bool wgmma_report(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t idx, const EmuShadow *s) {
    char what[200], name[96], line[256], where[600];
    snprintf(what, sizeof what, "racecheck: shared-memory hazard (write after read) at __shared__ %s",
             emu_smem_name(b, idx, name, sizeof name));
    emu_module_line(b->L->m, s->rline, line, sizeof line);
    const EmuThread *o = &b->t[s->rtid == UINT32_MAX ? 0 : s->rtid];
    return emu_fault(b, t, in, what,
                     "conflicts with the read of the wgmma.mma_async at %s (%s) by the warpgroup of thread (%u,%u,%u): its "
                     "shared operands are read until the wgmma.wait_group that retires it, and this write is not ordered "
                     "after that wait (a barrier or mbarrier phase a warp of that warpgroup arrived at after its wait; on a "
                     "GPU the async proxy may still be reading)",
                     emu_module_where(b->L->m, s->rline, where, sizeof where), line, o->tid[0], o->tid[1], o->tid[2]);
}

/* A wgmma's shared-operand reads end at the wgmma.wait_group that retires them, which its warpgroup's four warps
 * execute together: they are recorded as reads by the warpgroup's first warp rw at the clock the four share there
 * (emu_race_wgmma_wait), flagged EMU_SH_WGMMA.  An access of warp w (clock vector v) is ordered after them when w
 * is one of the four (past its wait), or is ordered after the wait of one of them (v[rw + k] >= clk): a barrier or
 * mbarrier phase that warp arrived at after its wait.  Not after a barrier it arrived at before issuing the wgmma:
 * on a GPU the async proxy may still be reading then. */
static bool wgmma_read_ordered(const uint32_t *v, uint16_t w, uint16_t rw, uint32_t clk) {
    if (w >= rw && w < rw + 4) return true;
    for (uint16_t k = 0; k < 4; k++)
        if (v[rw + k] >= clk) return true;
    return false;
}

/* Whether the last reads of s (by warp rw at rclk, a wgmma's with rwg) are ordered before every access ordered
 * after a new read by warp w, clock vector v (wg: a wgmma's read of the warpgroup of w, which needs the four warps
 * ordered after them: any one of them orders what comes after it). */
static bool last_reads_before(const EmuBlock *b, const EmuShadow *s, uint16_t w, const uint32_t *v, bool wg) {
    uint16_t rw = s->rwarp & EMU_SH_WARP;
    bool rwg = s->rwarp & EMU_SH_WGMMA;
    for (uint16_t k = 0; k < (wg ? 4 : 1); k++) {
        const uint32_t *vk = v + (size_t)k * b->nvw; /* the warpgroup's warps are consecutive, as are their vectors */
        if (rwg ? !wgmma_read_ordered(vk, (uint16_t)(w + k), rw, s->rclk) : vk[rw] < s->rclk) return false;
    }
    return true;
}

/* Records a read of shadow byte s by thread me (its warp w at clock clk, generation gen, clock vector v; strong:
 * an atomic or strong access; wg: a wgmma's read by the warpgroup whose first warp w is, at its wait) of PTX
 * line `line`, for the writes after it to be checked against. */
static void note_read(EmuBlock *b, EmuShadow *s, uint32_t me, uint16_t w, uint32_t clk, uint32_t gen, const uint32_t *v,
                      bool strong, bool wg, uint32_t line) {
    uint16_t rw = s->rwarp & EMU_SH_WARP;
    bool rstrong = s->rwarp & EMU_SH_STRONG, rwg = s->rwarp & EMU_SH_WGMMA;
    s->xrtid = s->xrev && s->xrtid != me ? UINT32_MAX : me; /* since the bytes were last written by a copy */
    s->xrev = b->ev;
    s->xrline = line;
    s->rline = line;
    if (s->rclk && rw == w && wg == rwg) { /* more reads of this warp (more wgmma reads of its warpgroup) */
        bool stands = clk > s->rclk && v[w] >= s->rclk;
        if (stands) {
            /* the warp passed a barrier since its earlier reads: they are ordered before this one and
             * everything after it, so this read stands for them (kept as "several lanes" at the later
             * clock, a lane's write after it would be taken as unordered with another lane's read from
             * before the barrier: an in-place scan, a bitonic sort) */
            s->rwarp = (uint16_t)(w | (strong ? EMU_SH_STRONG : 0) | (wg ? EMU_SH_WGMMA : 0));
            s->rtid = me;
        }
        if (rstrong && !strong) s->rwarp = (uint16_t)(w | (wg ? EMU_SH_WGMMA : 0));
        if (s->rtid != me) s->rtid = UINT32_MAX;
        if (clk > s->rclk) {
            if (s->rmask) rmask_flush(b, s);
            s->rclk = clk;
        }
        s->rgen = gen;
        return;
    }
    bool all_strong = strong;
    if (s->rclk) {
        all_strong = strong && rstrong;
        if (clk != s->rclk && s->rmask) rmask_flush(b, s);
        /* the last reads are not ordered before this one: kept (a wgmma's flagged in the read set, rs_put) */
        if (!last_reads_before(b, s, w, v, wg)) {
            if (clk == s->rclk && rw < 32 && !rwg) { /* warps in step (the common case): a bit */
                s->rmask |= 1u << rw;
            } else {
                if (!s->rset) s->rset = rset_new(b);
                uint32_t *rs = rset_of(b, s->rset);
                rs_put(rs, rw, s->rclk, rwg);
            }
        }
    }
    s->rclk = clk;
    s->rwarp = (uint16_t)(w | (all_strong ? EMU_SH_STRONG : 0) | (wg ? EMU_SH_WGMMA : 0));
    s->rtid = me;
    s->rgen = gen;
}

/* A shadow as four 16-byte blocks (GCC's and Clang's vector extensions: SSE2 registers on x86-64), for the runs of
 * bytes with one history below: each byte's shadow compared whole with the run's (no early exit, where memcmp
 * had four: they mostly are equal) and stored from registers. */
typedef uint64_t ShadowBlk __attribute__((vector_size(16), aligned(4), may_alias));
_Static_assert(sizeof(EmuShadow) == 4 * sizeof(ShadowBlk), "a shadow is four 16-byte blocks");
static inline const ShadowBlk *shadow_blk(const EmuShadow *s) { return (const ShadowBlk *)(const void *)s; }
static inline bool blk_same(const ShadowBlk *x, ShadowBlk p0, ShadowBlk p1, ShadowBlk p2, ShadowBlk p3) {
    ShadowBlk d = (x[0] ^ p0) | (x[1] ^ p1) | (x[2] ^ p2) | (x[3] ^ p3);
    return !(d[0] | d[1]);
}
/* Byte s ends as its predecessor did (both had the same shadow, without a read set, before the same access): a
 * read set the access gave the predecessor is the one s would get, copied into a read set of its own. */
static inline void shadow_as_prev(EmuBlock *b, EmuShadow *s) {
    *s = s[-1];
    if (!s->rset) return;
    uint32_t r = rset_new(b); /* (may move the read sets) */
    memcpy(rset_of(b, r), rset_of(b, s[-1].rset), b->nvw * sizeof *b->rsets);
    s->rset = r;
}

/* The bytes of one access mostly have one history.  The bytes s[0..n) after one the access has just been checked
 * and recorded for (s[-1], whose shadow was pre before it, without a read set; for emu_race_check also without a
 * copy record or a pending cp.async), while each has pre's shadow too and (a store: wval, its bytes; old, those
 * there) the same answer as s[-1] (pre_same) to whether the store writes the bytes already there, end as s[-1]
 * did (their outcome depends on nothing else of their own: no report, for s[-1] made none).  Returns how many
 * did. */
static inline uint64_t same_run(EmuBlock *b, EmuShadow *s, uint64_t n, const EmuShadow *pre, const uint8_t *old,
                                const uint8_t *wval, bool pre_same) {
    const ShadowBlk *p = shadow_blk(pre);
    ShadowBlk p0 = p[0], p1 = p[1], p2 = p[2], p3 = p[3];
    uint64_t k = 0;
    if (wval || s[-1].rset) { /* a store's bytes must give pre_same's answer too; a read set is copied for each byte */
        for (; k < n && (!wval || (old[k] == wval[k]) == pre_same) && blk_same(shadow_blk(&s[k]), p0, p1, p2, p3); k++)
            shadow_as_prev(b, &s[k]);
        return k;
    }
    const ShadowBlk *q = shadow_blk(&s[-1]);
    ShadowBlk q0 = q[0], q1 = q[1], q2 = q[2], q3 = q[3];
    for (; k < n; k++) {
        ShadowBlk *x = (ShadowBlk *)(void *)&s[k];
        if (!blk_same(x, p0, p1, p2, p3)) break;
        x[0] = q0, x[1] = q1, x[2] = q2, x[3] = q3;
    }
    return k;
}

/* Atomics (atom, red, and red.async, a .relaxed.cluster reduction) and strong loads and stores (.relaxed, .acquire,
 * .release, .volatile) never conflict with one another; a plain access conflicting with one of them is a hazard as
 * between plain ones (the PTX memory model's data race: a plain store of a counter other threads atomically add to
 * loses their adds). */
bool emu_race_check(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t addr, unsigned size, bool write) {
    uint32_t me = t->linear, uw = unit_warp(b, t), gen = b->warp_gen[uw], clk = clock_of(b, t);
    uint16_t w = (uint16_t)(uw % b->nvw);
    const uint32_t *v = b->vc + (size_t)uw * b->nvw;
    bool strong = in && (in->op == EMU_OP_ATOM || in->op == EMU_OP_RED || in->op == EMU_OP_RED_ASYNC ||
                        (in->xflags & EMU_XF_STRONG));
    emu_race_touch(b, addr, size);
    /* the bytes after one checked here that share its history end as it did (same_run) */
    EmuShadow pre = {0}; /* (read only once pre_ok says it was set) */
    bool pre_ok = false, pre_same = false;
    const uint8_t *wval = write ? b->wval : NULL, *old = b->shared + addr; /* a store's bytes, and those there */
    for (unsigned i = 0; i < size; i++) {
        if (pre_ok && (i += (unsigned)same_run(b, &b->shadow[addr + i], size - i, &pre, old + i, wval ? wval + i : NULL,
                                                pre_same)) == size)
            break;
        EmuShadow *s = &b->shadow[addr + i];
        bool same_i = wval && old[i] == wval[i];
        pre_ok = !s->acopy && !s->rset && s->wclk != EMU_CLK_PENDING;
        if (pre_ok) pre = *s, pre_same = same_i;
        if (s->acopy && b->mbs && !emu_async_access(b, t, in, s, addr + i, write)) return false;
        if (s->wclk == EMU_CLK_PENDING && !(same_i && s->wtid != me))
            return cpa_report(b, t, in, addr + i, write); /* a copy of the same bytes by another thread: no hazard */
        uint16_t ww = s->wwarp & EMU_SH_WARP, rw = s->rwarp & EMU_SH_WARP;
        bool wstrong = s->wwarp & EMU_SH_STRONG, rstrong = s->rwarp & EMU_SH_STRONG;
        bool unordered = s->wclk && s->wtid != me && !(strong && wstrong) && v[ww] < s->wclk &&
                         !(ww == w && warp_ordered(b, t, s->wtid, s->wgen));
        bool same = same_i; /* the bytes already there: no hazard */
        if (unordered && !same)
            return race_report(b, t, in, addr + i, write ? "write after write" : "read after write", s->wtid, s->wline, true, -1);
        if (write) {
            if (s->rclk && !(strong && rstrong)) { /* (a wgmma's reads are not strong) */
                if (s->rwarp & EMU_SH_WGMMA) {
                    if (!wgmma_read_ordered(v, w, rw, s->rclk)) return wgmma_report(b, t, in, addr + i, s);
                } else if (s->rtid != me && v[rw] < s->rclk &&
                           !(rw == w && (s->rtid == UINT32_MAX ? b->rt[me].wsync > s->rgen : warp_ordered(b, t, s->rtid, s->rgen))))
                    return race_report(b, t, in, addr + i, "write after read", s->rtid, s->rline, false, -1);
                /* other warps' reads (this warp's lanes there are not followed) */
                for (uint32_t m = s->rmask & (w < 32 ? ~(1u << w) : ~0u); m; m &= m - 1)
                    if (v[__builtin_ctz(m)] < s->rclk)
                        return race_report(b, t, in, addr + i, "write after read", 0, s->rline, false, __builtin_ctz(m));
                const uint32_t *rs = s->rset ? rset_of(b, s->rset) : NULL;
                for (uint32_t x = 0; rs && x < b->nvw; x++)
                    if (rs[x] & RS_WGMMA ? !wgmma_read_ordered(v, w, (uint16_t)x, rs[x] & ~RS_WGMMA) : x != w && v[x] < rs[x])
                        return race_report(b, t, in, addr + i, "write after read", 0, s->rline, false, (int)x);
                /* every read is ordered before this write: later accesses are checked against the write alone */
                rset_drop(b, s);
                s->rclk = 0;
            }
            /* the same bytes stored again while an earlier write is unordered with this one: that earlier write stays
             * the one later accesses are checked against (taking this one's place would hide its race with them) */
            if (unordered) continue;
            s->wclk = clk;
            s->wtid = me;
            s->wwarp = (uint16_t)(w | (strong ? EMU_SH_STRONG : 0));
            s->wline = in->line;
            s->wfence = b->rt[me].pfence;
            s->wgen = gen;
        } else {
            note_read(b, s, me, w, clk, gen, v, strong, false, in->line);
        }
    }
    return true;
}

/* note_read of the bytes [idx, idx + size) (one reader, one clock, one line).  What note_read makes of a byte
 * depends on its shadow and the arguments alone (a read set it starts is filled from them): a byte without a read
 * set whose shadow is the one its predecessor had before this read ends as its predecessor did (the bytes of one
 * copy, one tile, mostly share their history: a wgmma operand's 16-byte chunk, a bulk store's source). */
static void note_reads(EmuBlock *b, uint64_t idx, uint64_t size, uint32_t me, uint16_t w, uint32_t clk, uint32_t gen,
                       const uint32_t *v, bool wg, uint32_t line) {
    EmuShadow pre = {0}; /* (read only once pre_ok says it was set) */
    bool pre_ok = false;
    emu_race_touch(b, idx, size);
    for (uint64_t i = 0; i < size; i++) {
        if (pre_ok && (i += same_run(b, &b->shadow[idx + i], size - i, &pre, NULL, NULL, false)) == size) break;
        EmuShadow *s = &b->shadow[idx + i];
        pre_ok = !s->rset;
        if (pre_ok) pre = *s;
        note_read(b, s, me, w, clk, gen, v, false, wg, line);
    }
}

void emu_race_read_note(EmuBlock *b, EmuThread *t, uint64_t idx, uint64_t size, uint32_t line) {
    uint32_t uw = unit_warp(b, t);
    note_reads(b, idx, size, t->linear, (uint16_t)(uw % b->nvw), clock_of(b, t), b->warp_gen[uw], b->vc + (size_t)uw * b->nvw,
               false, line);
}

/* The wgmma.wait_group of the warpgroup whose first thread is `first`: its threads' clocks are made equal (the
 * highest), so that the wgmma reads it retires (emu_race_wgmma_read, at that clock + 1) are ordered before an
 * access ordered after any of its warps' releases from now on, and after none of their releases before. */
void emu_race_wgmma_wait(EmuBlock *b, uint32_t first) {
    const EmuThread *t = &b->t[first];
    uint32_t end = (t->cta + 1) * b->cta_threads, hi = first + 128 < end ? first + 128 : end, m = 0;
    for (uint32_t i = first; i < hi; i++)
        if (b->rt[i].clock > m) m = b->rt[i].clock;
    for (uint32_t i = first; i < hi; i++) b->rt[i].clock = m;
}

/* The shared bytes [idx, idx + size) read by a wgmma of the warpgroup whose first thread is `first` (PTX line
 * `line`), retired by the wait it executes now (after emu_race_wgmma_wait). */
void emu_race_wgmma_read(EmuBlock *b, uint32_t first, uint64_t idx, uint64_t size, uint32_t line) {
    const EmuThread *t = &b->t[first];
    uint32_t uw = unit_warp(b, t);
    note_reads(b, idx, size, first, (uint16_t)(uw % b->nvw), clock_of(b, t), b->warp_gen[uw], b->vc + (size_t)uw * b->nvw,
               true, line);
}
