/* exec.c - grid scheduler and the interpreter loop.
 *
 * Algorithm:
 *   1. emu_launch() packs the kernel parameters into one buffer, then starts
 *      host workers (the caller is worker 0) that take block indices from an
 *      atomic counter until all blocks ran or one faulted.
 *   2. run_block() gives every thread its register file (a copy of the
 *      function's slot template, with special registers filled in) and runs
 *      the block in rounds: each warp's lanes run one after another until
 *      each blocks (bar.sync, a warp collective) or exits; warp collectives
 *      fire as soon as every live lane of the member mask waits at one;
 *      when every live thread waits at a barrier it is released (named
 *      barriers with a thread count release at that count).  A round with
 *      no progress is a deadlock, reported with where every thread waits.
 *   3. run_thread() is the interpreter (exec_loop.h): guard test, then a
 *      jump through a table to the handler of the pre-selected fast form
 *      (common 32/64-bit integer, f32, global and shared memory,
 *      kernel-parameter forms, bra), each handler ending in its own jump to
 *      the next instruction's; control flow (call and ret switch frames,
 *      exec_call.c), and the family executors for the rest.  A thread's
 *      registers start as its CTA's first thread's, copied only where the
 *      kernel's instructions name a slot (init_runs).
 *   4. Every launch can be stopped: at backward branches and calls (and between
 *      block rounds, and between blocks) every EMU_CHECK_EVERY instructions
 *      a thread looks at the stop flag, its instruction limit and the
 *      launch's deadline; past the deadline the launch fails with a report
 *      of where the block's threads are (emu_block_where).
 *   5. printf output is kept per block and written in block order when the
 *      launch ends.
 * Exited threads count as arrived at bar.sync (as on the hardware) and are
 * dropped from warp member masks. */
#include "emu/exec.h"
#include "emu/fast.h"
#include "support/target.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* ---- faults ---- */
/* The text of a fault report (malloc'd): what, where (instruction, thread, block) and why (fmt). */
static char *fault_text(const EmuBlock *b, const EmuThread *t, const EmuIns *in, const char *what, const char *fmt, va_list ap) {
    EmuLaunch *L = b->L;
    Str s = {0};
    str_printf(&s, "%s\n", what);
    if (in) {
        char line[256], src[512];
        emu_module_line(L->m, in->line, line, sizeof line);
        emu_module_srcloc(L->m, in->line, src, sizeof src);
        str_printf(&s, "    at %s%skernel '%s', PTX line %u: %s\n", src, *src ? " in " : "", L->f->name, emu_module_ptx_line(L->m, in->line), line);
        if (t && t->fn != L->f) str_printf(&s, "    in .func '%s' (call depth %u)\n", t->fn->name, t->depth);
    } else {
        str_printf(&s, "    in kernel '%s'\n", L->f->name);
    }
    /* no CTAs when the unit's state could not be allocated (out of host memory): no block to name */
    static const uint32_t none[3] = {0, 0, 0};
    const uint32_t *c = b->cta ? b->cta[t ? t->cta : 0].ctaid : none;
    if (t) str_printf(&s, "    by thread (%u,%u,%u) in block (%u,%u,%u)", t->tid[0], t->tid[1], t->tid[2], c[0], c[1], c[2]);
    else if (b->cta) str_printf(&s, "    in block (%u,%u,%u)", c[0], c[1], c[2]);
    else str_printf(&s, "    before its first block started");
    if (b->ncl > 1 && t) str_printf(&s, " (rank %u of a cluster of %u)", t->cta % b->ncl, b->ncl);
    else if (b->ncl > 1) str_printf(&s, " (the first of a cluster of %u)", b->ncl);
    else if (b->ncta > 1 && !t) str_printf(&s, " (the first of a cooperative launch of %u)", b->ncta);
    str_putc(&s, '\n');
    if (fmt && *fmt) {
        str_puts(&s, "    ");
        str_vprintf(&s, fmt, ap);
        str_putc(&s, '\n');
    }
    return str_take(&s);
}

bool emu_fault(EmuBlock *b, const EmuThread *t, const EmuIns *in, const char *what, const char *fmt, ...) {
    EmuLaunch *L = b->L;
    b->faulted = true;
    atomic_store(&L->stop, true);
    va_list ap;
    va_start(ap, fmt);
    char *text = fault_text(b, t, in, what, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&L->lock);
    if (!L->err) L->err = text, text = NULL;
    pthread_mutex_unlock(&L->lock);
    free(text);
    return false;
}

/* ---- generic dispatch ---- */
/* The instructions without a fast path (out of line: the interpreter loop stays small). */
static __attribute__((noinline)) bool exec_generic(EmuBlock *b, EmuThread *t, const EmuIns *in) {
    switch (in->op) {
    case EMU_OP_CVT: return emu_exec_cvt(b, t, in);
    case EMU_OP_ALLOCA: case EMU_OP_STACKSAVE: case EMU_OP_STACKRESTORE: return emu_exec_stack(b, t, in);
    case EMU_OP_CVT_PACK: { /* d = c << 2n | sat(a) << n | sat(b), each n bits (16: no c) */
        static const uint8_t bits[EMU_T_COUNT] = {[EMU_T_U16] = 16, [EMU_T_S16] = 16, [EMU_T_U8] = 8, [EMU_T_S8] = 8,
                                                  [EMU_T_U4] = 4, [EMU_T_S4] = 4, [EMU_T_U2] = 2, [EMU_T_S2] = 2};
        unsigned n = bits[in->ty];
        bool sg = emu_type_kind(in->ty) == EMU_K_S;
        int64_t lo = sg ? -(1ll << (n - 1)) : 0, hi = sg ? (1ll << (n - 1)) - 1 : (1ll << n) - 1;
        uint32_t m = n == 16 ? 0xFFFFu : (1u << n) - 1, d = 0;
        for (unsigned k = 1; k <= 2; k++) {
            int64_t v = (int32_t)EMU_R(t, in, k);
            v = v < lo ? lo : v > hi ? hi : v;
            d |= ((uint32_t)v & m) << (k == 1 ? n : 0);
        }
        if (n < 16) d |= (uint32_t)EMU_R(t, in, 3) << (2 * n);
        EMU_R(t, in, 0) = d;
        return true;
    }
    case EMU_OP_LD: case EMU_OP_LDU: case EMU_OP_ST: case EMU_OP_ATOM: case EMU_OP_RED: case EMU_OP_CVTA:
    case EMU_OP_ISSPACEP: case EMU_OP_CP_ASYNC:
        return emu_exec_mem(b, t, in);
    case EMU_OP_CP_BULK_COMMIT: emu_bulk_commit(t); return true;
    case EMU_OP_CP_BULK_WAIT: emu_bulk_wait(b, t, in); return true;
    case EMU_OP_FENCE:
        if (b->rt && (in->xflags & EMU_XF_PROXY_ASYNC)) b->rt[t->linear].pfence++;
        if (b->vc && (in->xflags & EMU_XF_ORDER)) emu_race_fence(b, t);
        return true;
    case EMU_OP_CP_ASYNC_COMMIT:
        if (b->cpa) emu_race_cp_async_commit(b, t);
        return true;
    case EMU_OP_CP_ASYNC_WAIT:
        if (b->cpa) emu_race_cp_async_wait(b, t, (int64_t)EMU_R(t, in, 0), false);
        return true;
    case EMU_OP_CP_ASYNC_WAIT_ALL:
        if (b->cpa) emu_race_cp_async_commit(b, t), emu_race_cp_async_wait(b, t, 0, false);
        return true;
    case EMU_OP_MEMBAR:
        if (b->vc && (in->xflags & EMU_XF_ORDER)) emu_race_fence(b, t);
        return true;
    case EMU_OP_PREFETCH: case EMU_OP_PREFETCHU: case EMU_OP_PMEVENT: case EMU_OP_NANOSLEEP:
    case EMU_OP_GRIDDEP: case EMU_OP_CP_BULK_PREFETCH: case EMU_OP_DISCARD: case EMU_OP_APPLYPRIORITY:
        return true;
    case EMU_OP_CREATEPOLICY: /* an opaque value: the emulator has no L2 to steer */
        EMU_R(t, in, 0) = 0x10F0000000000000ull;
        return true;
    case EMU_OP_CP_BULK: case EMU_OP_CP_BULK_TENSOR: case EMU_OP_CP_RED_BULK: case EMU_OP_CP_RED_BULK_TENSOR:
        return emu_exec_bulk(b, t, in);
    case EMU_OP_CP_ASYNC_MBAR:
        return emu_exec_cp_async_mbar(b, t, in);
    case EMU_OP_ST_ASYNC: case EMU_OP_RED_ASYNC:
        return emu_exec_st_async(b, t, in);
    case EMU_OP_TENSORMAP_REPLACE: case EMU_OP_TENSORMAP_CP:
        return emu_exec_tensormap(b, t, in);
    case EMU_OP_MAPA: case EMU_OP_GETCTARANK: { /* cluster shared addresses: EMU_DSMEM_TAG */
        uint64_t a = EMU_R(t, in, 1);
        bool generic = in->space != EMU_SP_SHARED;
        if (generic) {
            if (a - EMU_SHARED_WINDOW >= EMU_WINDOW_SIZE)
                return emu_fault(b, t, in, "invalid address", "%s of 0x%" PRIx64 ", which is not in shared memory", emu_op_name(in->op), a);
            a -= EMU_SHARED_WINDOW;
        }
        a &= 0xFFFFFFFFu;
        uint32_t own = a >= EMU_DSMEM_TAG ? (uint32_t)(a / EMU_DSMEM_TAG - 1) : t->cta % b->ncl;
        if (in->op == EMU_OP_GETCTARANK) {
            EMU_R(t, in, 0) = own;
            return true;
        }
        uint32_t rank = (uint32_t)EMU_R(t, in, 2);
        if (rank >= b->ncl || own >= b->ncl)
            return emu_fault(b, t, in, "invalid cluster rank", "mapa to CTA rank %u of 0x%" PRIx64 ": the cluster has %u CTA%s", rank,
                             a, b->ncl, b->ncl == 1 ? "" : "s");
        uint64_t d = (uint64_t)(rank + 1) * EMU_DSMEM_TAG + a % EMU_DSMEM_TAG;
        EMU_R(t, in, 0) = generic ? EMU_SHARED_WINDOW + d : d;
        return true;
    }
    case EMU_OP_RCP: case EMU_OP_SQRT: case EMU_OP_RSQRT: case EMU_OP_EX2: case EMU_OP_LG2: case EMU_OP_SIN:
    case EMU_OP_COS: case EMU_OP_TANH: case EMU_OP_COPYSIGN: case EMU_OP_TESTP: case EMU_OP_FMA:
        return emu_exec_float(b, t, in);
    case EMU_OP_ADD: case EMU_OP_SUB: case EMU_OP_MUL: case EMU_OP_MAD: case EMU_OP_DIV: case EMU_OP_ABS:
    case EMU_OP_NEG: case EMU_OP_MIN: case EMU_OP_MAX: case EMU_OP_SETP:
        if (emu_type_kind(in->ty) == EMU_K_F) return emu_exec_float(b, t, in);
        return emu_exec_int(b, t, in);
    case EMU_OP_SET:
        if (emu_type_kind(in->ty2) == EMU_K_F) return emu_exec_float(b, t, in);
        return emu_exec_int(b, t, in);
    case EMU_OP_CALL:
        return emu_fault(b, t, in, "unsupported instruction: call", "calls to .func are not supported by the emulator yet");
    case EMU_OP_TRAP:
        return emu_fault(b, t, in, "trap", "the kernel executed trap");
    case EMU_OP_BRKPT: /* the GPU suspends the thread for a debugger; with none attached the launch cannot go on */
        return emu_fault(b, t, in, "brkpt", "the kernel executed brkpt (a breakpoint: the emulator has no debugger to suspend for)");
    default:
        return EMU_IS_VIDEO(in->op) ? emu_exec_video(b, t, in) : emu_exec_int(b, t, in);
    }
}

static inline uint64_t canon32(float f) { return f != f ? 0x7FFFFFFFu : emu_bits32(f); }
static inline uint64_t canon64(double d) { return d != d ? 0x7FFFFFFFFFFFFFFFull : emu_bits64(d); }
static inline float flush32(float x) { return x != 0 && fabsf(x) < 0x1p-126f ? copysignf(0.0f, x) : x; }
/* cvt.rn of an f32 into f16 or bf16 (fmt), as emu_exec_cvt gives it (emu_round_f64's bits: NaN the canonical
 * 0x7fff, zeros and infinities their sign), by the f32's bits */
static inline uint32_t half_rn(float x, int fmt) { return fmt == EMU_FMT_BF16 ? emu_f32_to_bf16_rn(x) : emu_f32_to_f16_rn(x); }

/* A 4-byte shared store's checked path (racecheck knows the value stored); out of line, away from the
 * interpreter loop's registers. */
static __attribute__((noinline)) uint8_t *sts32_checked(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t a, uint32_t v) {
    b->wval = (const uint8_t *)&v;
    uint8_t *p = emu_access(b, t, in, EMU_SP_SHARED, a, 4, 4, true);
    b->wval = NULL;
    if (p && b->shadow && (in->xflags & EMU_XF_STRONG)) emu_race_strong(b, t, p, false, true, false); /* st.volatile/.relaxed */
    return p;
}

static __attribute__((noinline)) const uint8_t *lds32_checked(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t a) {
    const uint8_t *p = emu_access(b, t, in, EMU_SP_SHARED, a, 4, 4, false);
    if (p && b->shadow && (in->xflags & EMU_XF_STRONG)) emu_race_strong(b, t, p, true, false, false); /* ld.volatile/.relaxed */
    return p;
}

/* The interpreter loop (exec_loop.h), twice: plain, and with every instruction's registers checked against the
 * thread's in-flight wgmma results (a constant in each, so the plain loop pays nothing for it). */
#if defined(__GNUC__) && !defined(__clang__)
#define EMU_NO_CROSSJUMP __attribute__((optimize("no-crossjumping", "no-gcse"))) /* keeps the handlers' jumps apart */
#else
#define EMU_NO_CROSSJUMP
#endif
#define EMU_RUN_THREAD run_thread_plain
#define EMU_WGCHECK 0
#include "emu/exec_loop.h"
#define EMU_RUN_THREAD run_thread_wgcheck
#define EMU_WGCHECK 1
#include "emu/exec_loop.h"

static bool run_thread(EmuBlock *b, EmuThread *t) {
    return t->wg && t->wg->n ? run_thread_wgcheck(b, t) : run_thread_plain(b, t);
}

/* ---- block scheduling ---- */
/* The special registers of every thread of CTA rank (its first thread's registers, which hold the initial
 * slots too): what a thread's registers start as but for the per-thread ones init_threads writes. */
static void init_cta_regs(EmuBlock *b, uint32_t rank, uint64_t *r) {
    EmuLaunch *L = b->L;
    const EmuFunc *f = L->f;
    const uint32_t *ctaid = b->cta[rank].ctaid;
    memcpy(r, f->slot_init, f->nslots * sizeof(uint64_t));
    uint64_t *s = r + EMU_SLOT_SREG;
    for (int k = 0; k < 3; k++) {
        s[EMU_SREG_NTID_X + k] = L->block[k];
        s[EMU_SREG_CTAID_X + k] = ctaid[k];
        s[EMU_SREG_NCTAID_X + k] = L->grid[k];
    }
    s[EMU_SREG_NWARPID] = b->cta_warps;
    /* the multiprocessors: CTAs placed round robin by their linear index, so a grid of %nsmid CTAs has one on each */
    uint32_t nsm = L->opt->num_sms ? L->opt->num_sms : 1;
    s[EMU_SREG_NSMID] = nsm;
    s[EMU_SREG_SMID] = ((uint64_t)ctaid[2] * L->grid[1] * L->grid[0] + (uint64_t)ctaid[1] * L->grid[0] + ctaid[0]) % nsm;
    s[EMU_SREG_DYN_SMEM] = L->dyn_smem;
    s[EMU_SREG_TOTAL_SMEM] = L->total_smem;
    s[EMU_SREG_AGGR_SMEM] = L->total_smem + EMU_RESERVED_SMEM; /* user shared memory + the region reserved for the system */
    s[EMU_SREG_GLOBALTIMER] = L->globaltimer;
    s[EMU_SREG_GLOBALTIMER_LO] = (uint32_t)L->globaltimer;
    s[EMU_SREG_GLOBALTIMER_HI] = L->globaltimer >> 32;
    s[EMU_SREG_CURRENT_GRAPH_EXEC] = 0; /* launches never come from a CUDA graph */
    s[EMU_SREG_RSMEM_BEGIN] = s[EMU_SREG_RSMEM_0] = L->reserved_smem;
    s[EMU_SREG_RSMEM_END] = L->reserved_smem + EMU_RESERVED_SMEM;
    s[EMU_SREG_RSMEM_CAP] = EMU_RESERVED_SMEM;
    s[EMU_SREG_RSMEM_1] = L->reserved_smem + EMU_RESERVED_SMEM / 2;
    s[EMU_SREG_WARPSZ] = 32;
    for (int k = 0; k < 3; k++) {
        s[EMU_SREG_CLUSTER_CTAID_X + k] = ctaid[k] % L->cluster[k];
        s[EMU_SREG_CLUSTER_NCTAID_X + k] = L->cluster[k];
        s[EMU_SREG_CLUSTERID_X + k] = ctaid[k] / L->cluster[k];
        s[EMU_SREG_NCLUSTERID_X + k] = L->grid[k] / L->cluster[k];
    }
    s[EMU_SREG_CLUSTER_CTARANK] = rank % b->ncl;
    s[EMU_SREG_ENVREG1] = L->workspace >> 32; /* cooperative groups' grid barrier: envreg1:envreg2 */
    s[EMU_SREG_ENVREG2] = (uint32_t)L->workspace;
    s[EMU_SREG_CLUSTER_NCTARANK] = b->ncl;
    s[EMU_SREG_IS_EXPLICIT_CLUSTER] = L->explicit_cluster;
}

/* The register slots f's instructions name (operands, vector elements and the slot after each, which a .b128
 * register takes too; guards; the fixed slots), as runs (first slot, count) into *runs; false (and NULL) when every
 * slot is to be copied: f calls functions, which get the special registers of the caller's file, or no memory. */
static bool init_runs(const EmuFunc *f, uint32_t **runs, uint32_t *nruns) {
    *runs = NULL, *nruns = 0;
    uint32_t ns = f->nslots;
    uint8_t *used = calloc(ns + 3, 1);
    if (!used) return false;
    used[EMU_SLOT_ZERO] = used[EMU_SLOT_TRUE] = used[EMU_SLOT_SINK] = 1;
#define MARK(s) do { uint64_t s_ = (s); if (s_ < ns) used[s_] = used[s_ + 1] = 1; } while (0)
    for (uint32_t i = 0; i < f->ncode; i++) {
        const EmuIns *in = &f->code[i];
        if (in->op == EMU_OP_CALL) { free(used); return false; }
        MARK(in->guard);
        for (unsigned k = 0; k < EMU_MAX_OPS; k++) {
            if (in->ok[k] == EMU_OK_VEC)
                for (unsigned e = 0; e < in->on[k]; e++) MARK(f->vec[in->o[k] + e]);
            MARK(in->o[k]);
        }
    }
#undef MARK
    uint32_t n = 0, *r = malloc((ns / 2 + 2) * 2 * sizeof *r);
    if (!r) { free(used); return false; }
    for (uint32_t s = 0; s < ns;) {
        if (!used[s]) { s++; continue; }
        uint32_t e = s;
        while (e < ns && (used[e] || used[e + 1] || used[e + 2])) e++; /* gaps of 1 or 2 slots copied too */
        r[2 * n] = s, r[2 * n + 1] = e - s, n++;
        s = e;
    }
    free(used);
    *runs = r, *nruns = n;
    return true;
}

/* Every thread of the block ready to run from the kernel's first instruction: a CTA's first thread's
 * registers are made whole (init_cta_regs), the others copied from them (nothing has run yet) with
 * their own thread index, lane and warp.  The index counts up (x fastest) instead of being divided
 * out of the thread's number: the setup is a launch's fixed cost, once per block. */
static void init_threads(EmuBlock *b) {
    EmuLaunch *L = b->L;
    const EmuFunc *f = L->f;
    /* the thread index in three scalars (an array whose address memcpy takes lives in memory: 15 host
     * instructions a thread to store it into the special registers) */
    uint32_t cn = b->cta_threads, rank = 0, local = 0, tx = 0, ty = 0, tz = 0;
    size_t bytes = f->nslots * sizeof(uint64_t);
    const uint64_t *first = NULL;
    /* in locals: the copies below may write anywhere as far as the compiler knows, so L's fields were loaded again
     * for every run of every thread */
    const uint32_t *runs = L->init_runs;
    uint32_t nruns = L->ninit_runs, bx = L->block[0], by = L->block[1];
    for (uint32_t i = 0; i < b->nthreads; i++) {
        EmuThread *t = &b->t[i];
        t->fn = f;
        t->r = b->regs + (size_t)i * f->nslots;
        if (local == 0) {
            init_cta_regs(b, rank, t->r);
            first = t->r;
        } else if (runs) { /* the slots the code names: no instruction reads the others */
            /* copied inline, four slots at a time (a call to memcpy per run of a dozen slots cost as much as the
             * copy: 2 calls a thread and 45 host instructions in them on vadd) */
            for (uint32_t k = 0; k < nruns; k++) {
                uint64_t *d = t->r + runs[2 * k];
                const uint64_t *s = first + runs[2 * k];
                uint32_t len = runs[2 * k + 1];
                for (; len >= 4; len -= 4, d += 4, s += 4) memcpy(d, s, 4 * sizeof *d);
                switch (len) {
                case 3: d[2] = s[2]; /* fall through */
                case 2: d[1] = s[1]; /* fall through */
                case 1: d[0] = s[0];
                }
            }
        } else {
            memcpy(t->r, first, bytes);
        }
        t->pc = 0;
        t->state = EMU_TS_RUN;
        t->bar_id = 0;
        t->bar_count = 0;
        t->carry = 0;
        t->depth = 0;
        t->icount = 0;
        t->mbar_addr = 0;
        t->mbar_parity = 0;
        t->mbar_timed_out = false;
        t->cl_arrived = false;
        t->cl_phase = 0;
        t->bulk_commits = 0;
        if (t->wg) emu_wg_reset(t);
        t->linear = i;
        t->cta = rank;
        t->lane = (uint16_t)(local & 31);
        t->tid[0] = tx, t->tid[1] = ty, t->tid[2] = tz;
        if (t->frames) { /* call stacks are kept across blocks, frame 0's alloca buffer too (empty again) */
            uint8_t *dyn = t->frames[0].dyn;
            uint32_t cap = t->frames[0].cap_dyn;
            t->frames[0] = emu_frame0(b, t);
            t->frames[0].dyn = dyn, t->frames[0].cap_dyn = cap;
        }
        uint64_t *s = t->r + EMU_SLOT_SREG;
        s[EMU_SREG_TID_X] = tx, s[EMU_SREG_TID_X + 1] = ty, s[EMU_SREG_TID_X + 2] = tz;
        uint32_t lane = t->lane;
        s[EMU_SREG_LANEID] = lane;
        s[EMU_SREG_WARPID] = local / 32;
        s[EMU_SREG_LANEMASK_EQ] = 1u << lane;
        s[EMU_SREG_LANEMASK_LT] = (1u << lane) - 1;
        s[EMU_SREG_LANEMASK_LE] = (uint32_t)((2ull << lane) - 1);
        s[EMU_SREG_LANEMASK_GT] = (uint32_t)(~((2ull << lane) - 1));
        s[EMU_SREG_LANEMASK_GE] = (uint32_t)(~((1u << lane) - 1));
        /* the next thread: x fastest, then y, z; a new CTA after cn threads */
        if (++local == cn) {
            local = 0, rank++;
            tx = ty = tz = 0;
        } else if (++tx == bx) {
            tx = 0;
            if (++ty == by) ty = 0, tz++;
        }
    }
    if (b->fparam_size) memset(b->fparams, 0, (size_t)b->nthreads * b->fparam_size);
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The report of a timeout seen between blocks (no thread, no instruction). */
static char *late_timeout(const EmuBlock *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *text = fault_text(b, NULL, NULL, "timeout: the launch did not finish in time", fmt, ap);
    va_end(ap);
    return text;
}

/* The timeout report: fault text plus where the block's threads are. */
/* A timed-out launch's blocks that never started, as " N of its M blocks have started (...);" (empty when all
 * did): a spin on a flag a later block sets is the likely cause. */
static void not_started(const EmuLaunch *L, char *buf, size_t n) {
    uint64_t started = (uint64_t)atomic_load(&L->next_block) * L->ncta;
    if (started > L->nblocks) started = L->nblocks;
    buf[0] = 0;
    if (started < L->nblocks)
        snprintf(buf, n,
                 " %" PRIu64 " of its %" PRIu64 " blocks have started (they start in grid order as worker threads free up, "
                 "at most %d at once, so a block waiting for one that has not started may wait forever; a GPU promises no "
                 "order either);",
                 started, L->nblocks, EMU_MAX_WORKERS);
}

static bool timeout_fault(EmuBlock *b, EmuThread *t, const EmuIns *in) {
    Str w = {0};
    emu_block_where(b, &w);
    EmuLaunch *L = b->L;
    char waiting[300];
    not_started(L, waiting, sizeof waiting);
    bool r = emu_fault(b, t, in, "timeout: the launch did not finish in time",
                       "ran longer than %g s (TILE_EMU_TIMEOUT, tile_context_options.emu_timeout_seconds);%s "
                       "%s (%u,%u,%u) has %u threads:\n%s",
                       L->opt->timeout_seconds, waiting,
                       b->ncta > b->ncl ? "the cooperative grid from block" : b->ncl > 1 ? "the cluster of block" : "block",
                       b->cta[0].ctaid[0],
                       b->cta[0].ctaid[1], b->cta[0].ctaid[2], b->nthreads, w.buf ? w.buf : "");
    str_free(&w);
    return r;
}

/* Another thread asked the launch to stop (EmuOptions.interrupt: tile_context_interrupt). */
#define INTERRUPTED_WHY "the launch was stopped on request (tile_context_interrupt; Ctrl-C in Python)"
static bool interrupted(const EmuLaunch *L) { return L->opt->interrupt && (__atomic_load_n(L->opt->interrupt, __ATOMIC_RELAXED) & 1); }

bool emu_check_budget(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t n) {
    EmuLaunch *L = b->L;
    if (atomic_load_explicit(&L->stop, memory_order_relaxed)) {
        b->faulted = true;
        return false; /* another block failed: its report stands */
    }
    uint64_t maxi = L->opt->max_instructions;
    if (t && maxi && t->icount + n > maxi)
        return emu_fault(b, t, in, "watchdog: instruction limit reached",
                         "the thread executed more than %" PRIu64 " instructions, the per-thread limit (%s = %" PRIu64
                         "; 0 turns the watchdog off)", maxi,
                         L->opt->max_instructions_knob ? L->opt->max_instructions_knob : "EmuOptions.max_instructions", maxi);
    if (L->deadline_ns && now_ns() >= L->deadline_ns) return timeout_fault(b, t, in);
    if (interrupted(L))
        return emu_fault(b, t, in, "interrupted", INTERRUPTED_WHY);
    return true;
}

/* Releases n threads of the CTA whose threads are [lo, hi) waiting at barrier id; for bar.red, writes the
 * reduction of their predicates (popc: how many are true; and, or) into each one's destination.  Racecheck:
 * they release into the barrier's vector (acc, which holds the instance's bar.arrive arrivals already), then
 * acquire it, and with a whole-block barrier the exited threads' releases (ex). */
static bool release_waiters(EmuBlock *b, uint32_t lo, uint32_t hi, unsigned id, uint32_t n, uint32_t *acc, const uint32_t *ex) {
    uint32_t popc = 0, count = 0, nred = 0, released = 0;
    const EmuIns *red = NULL;
    for (uint32_t i = lo; i < hi && count < n; i++) {
        EmuThread *t = &b->t[i];
        if (t->state != EMU_TS_BAR || t->bar_id != id) continue;
        const EmuIns *in = &t->fn->code[t->pc];
        count++;
        if (acc) emu_race_release(b, t, acc);
        if (!(in->flags & EMU_F(REDOP))) continue;
        if (red && red->mode != in->mode)
            return emu_fault(b, t, in, "invalid barrier", "bar.red at barrier %u with another reduction than its other participants", id);
        red = in;
        nred++;
        unsigned c = in->nops - 1;
        bool v = EMU_R(t, in, c) & 1;
        popc += in->on[c] ? !v : v;
    }
    for (uint32_t i = lo; i < hi && released < n; i++) {
        EmuThread *t = &b->t[i];
        if (t->state != EMU_TS_BAR || t->bar_id != id) continue;
        const EmuIns *in = &t->fn->code[t->pc];
        if (in->flags & EMU_F(REDOP))
            EMU_R(t, in, 0) = in->mode == EMU_MODE_BPOPC ? popc : in->mode == EMU_MODE_AAND ? popc == nred : popc != 0;
        if (acc) emu_race_acquire(b, t, acc);
        if (ex) emu_race_acquire(b, t, ex);
        t->state = EMU_TS_RUN;
        t->pc++;
        released++;
    }
    return true;
}

/* Releases the barriers of CTA c every participant has reached; adds its live threads to *live, *progress
 * when a barrier was released. */
static bool release_barriers(EmuBlock *b, uint32_t c, uint32_t *live_out, bool *progress) {
    uint32_t live = 0, waiting[EMU_MAX_BAR_ID + 1] = {0}, need[EMU_MAX_BAR_ID + 1] = {0};
    const EmuThread *first[EMU_MAX_BAR_ID + 1] = {0};
    EmuCta *C = &b->cta[c];
    uint32_t lo = c * b->cta_threads, hi = lo + b->cta_threads, all = b->cta_threads;
    for (uint32_t i = lo; i < hi; i++) {
        EmuThread *t = &b->t[i];
        if (t->state == EMU_TS_DONE) continue;
        live++;
        if (t->state != EMU_TS_BAR) continue;
        unsigned id = t->bar_id;
        waiting[id]++;
        if (!first[id]) { first[id] = t; need[id] = t->bar_count; }
        else if (need[id] != t->bar_count) {
            const EmuThread *o = first[id];
            char line[256], where[600];
            emu_module_line(b->L->m, o->fn->code[o->pc].line, line, sizeof line);
            emu_module_where(b->L->m, o->fn->code[o->pc].line, where, sizeof where);
            return emu_fault(b, t, &t->fn->code[t->pc], "deadlock: barrier thread counts disagree",
                             "barrier %u is waited on for %u threads here and for %u by thread (%u,%u,%u) at %s: %s", id,
                             t->bar_count ? t->bar_count : all, need[id] ? need[id] : all, o->tid[0], o->tid[1],
                             o->tid[2], where, line);
        }
    }
    *live_out += live;
    for (unsigned id = 0; id <= EMU_MAX_BAR_ID; id++) {
        uint32_t arrived = C->bar_arrived[id];
        if (!waiting[id] && !arrived) continue;
        if (arrived && waiting[id] && need[id] != C->bar_arrive_count[id]) {
            const EmuThread *o = first[id];
            return emu_fault(b, o, &o->fn->code[o->pc], "deadlock: barrier thread counts disagree",
                             "barrier %u is waited on for %u threads here and %u bar.arrive arrivals pending were for %u", id,
                             need[id] ? need[id] : all, arrived, C->bar_arrive_count[id]);
        }
        /* exited threads count as arrived at a whole-block barrier, as on the GPU */
        uint32_t req = waiting[id] ? (need[id] ? need[id] : live) : C->bar_arrive_count[id];
        if (waiting[id] + arrived < req) continue;
        /* the waiters are released; the arrivals make up the rest (arrivals past the count stay for the next
         * completion, which a program only sees when it arrives twice before the others come) */
        uint32_t take = waiting[id] < req ? waiting[id] : req;
        C->bar_arrived[id] = arrived - (req - take);
        if (__builtin_expect(b->mbs != NULL, 0)) emu_async_barrier(b, lo, hi, (int)id);
        uint32_t *acc = b->vc ? emu_race_bar(b, c, id) : NULL;
        if (take && !release_waiters(b, lo, hi, id, take, acc, acc && waiting[id] && !need[id] ? emu_race_exited(b, c) : NULL))
            return false;
        /* racecheck: the next instance starts empty, but for arrivals kept for it (then it orders a little more) */
        if (acc && !C->bar_arrived[id]) memset(acc, 0, b->nvw * sizeof *acc);
        *progress = true;
    }
    return true;
}

/* barrier.cluster of the cluster whose rank 0 is CTA c: the phase completes once every live thread of its
 * CTAs has arrived in it (exited threads count as arrived, as at a whole-block barrier); its waiters go on. */
static void release_cluster(EmuBlock *b, uint32_t c, bool *progress) {
    EmuCta *lead = &b->cta[c];
    if (!lead->cl_arrived) return;
    uint32_t live = 0, in = 0, lo = c * b->cta_threads, hi = lo + b->ncl * b->cta_threads;
    for (uint32_t i = lo; i < hi; i++) {
        const EmuThread *t = &b->t[i];
        if (t->state == EMU_TS_DONE) continue;
        live++;
        if (t->cl_phase == lead->cl_phase && (t->cl_arrived || t->state == EMU_TS_CLUSTER)) in++;
    }
    if (in < live) return;
    lead->cl_phase++;
    lead->cl_arrived = 0;
    emu_async_barrier(b, lo, hi, -1);
    uint32_t *acq = NULL;
    if (b->vc) { /* racecheck: the phase's releases, and the exited threads', for its waiters */
        uint32_t *rel = emu_race_cl(b, c), nv = b->nvw;
        acq = rel + nv;
        for (uint32_t r = 0; r < b->ncl; r++) {
            const uint32_t *x = emu_race_exited(b, c + r);
            for (uint32_t j = 0; j < nv; j++)
                if (x[j] > rel[j]) rel[j] = x[j];
        }
        memcpy(acq, rel, nv * sizeof *rel);
        memset(rel, 0, nv * sizeof *rel);
    }
    for (uint32_t i = lo; i < hi; i++)
        if (b->t[i].state == EMU_TS_CLUSTER) {
            if (acq) emu_race_acquire(b, &b->t[i], acq);
            b->t[i].state = EMU_TS_RUN, b->t[i].pc++;
        }
    *progress = true;
}

/* Whether a thread of the block waits at an mbarrier.try_wait (EMU_TS_MBAR). */
static bool try_waits_blocked(const EmuBlock *b) {
    for (uint32_t i = 0; b->mbar_waits && i < b->nthreads; i++)
        if (b->t[i].state == EMU_TS_MBAR) return true;
    return false;
}

/* Every try_wait the block waits at, whose phase nothing can complete now, reaches its time limit: it answers
 * false and its thread goes on after it. */
static void try_waits_time_out(EmuBlock *b) {
    for (uint32_t i = 0; b->mbar_waits && i < b->nthreads; i++) {
        EmuThread *t = &b->t[i];
        if (t->state != EMU_TS_MBAR) continue;
        const EmuIns *in = &t->fn->code[t->pc];
        EMU_R(t, in, 0) = 0;
        t->pc++;
        t->state = EMU_TS_RUN;
        t->mbar_timed_out = true;
    }
}

static bool run_block(EmuBlock *b) {
    EmuLaunch *L = b->L;
    init_threads(b);
    size_t smem = (size_t)b->ncta * b->smem_stride;
    if (!b->shared_clean) memset(b->shared, 0, smem); /* shared memory starts zeroed in every block */
    b->shared_clean = false;
    if (b->shadow && b->sh_hi > b->sh_lo) /* what the last unit (or launch) touched: the rest is still zeros */
        memset(b->shadow + b->sh_lo, 0, (size_t)(b->sh_hi - b->sh_lo) * sizeof *b->shadow);
    b->sh_lo = UINT64_MAX, b->sh_hi = 0;
    if (b->warp_gen) memset(b->warp_gen, 0, (size_t)b->ncta * b->cta_warps * sizeof *b->warp_gen);
    if (b->wg_reads) memset(b->wg_reads, 0, (size_t)b->ncta * (b->smem_stride / 16) * sizeof *b->wg_reads); /* per CTA */
    b->wg_reading = 0;
    if (b->vc) emu_race_reset(b);
    for (uint32_t c = 0; c < b->ncta; c++) {
        memset(b->cta[c].bar_arrived, 0, sizeof b->cta[c].bar_arrived);
        b->cta[c].cl_arrived = b->cta[c].cl_phase = 0;
        b->cta[c].live = b->cta_threads;
    }
    b->mbar_events = 0;
    b->mbar_waits = false;
    b->nbulk = 0; /* a launch's bulk writes have landed when it ends */
    b->bulk_lo = b->bulk_hi = 0;
    emu_async_reset(b); /* racecheck's per-thread state too (b->rt): a worker's previous block's syncs order nothing here */
    uint32_t nwarps = b->ncta * b->cta_warps;
    uint32_t spin_rounds = 0; /* rounds in which threads only spun on mbarrier.test_wait */
    b->round = 0;
    for (;;) {
        bool progress = false, spun = false;
        uint64_t events = b->mbar_events;
        b->round++;
        /* threads that spun run again; those waiting for an mbarrier phase run when it has completed */
        for (uint32_t i = 0; b->mbar_waits && i < b->nthreads; i++) {
            EmuThread *t = &b->t[i];
            if (t->state == EMU_TS_YIELD) t->state = EMU_TS_RUN;
            else if (t->state == EMU_TS_MBAR && emu_mbarrier_phase_done(b, t->mbar_addr, t->mbar_parity)) {
                t->state = EMU_TS_RUN;
                progress = true;
            }
        }
        for (uint32_t w = 0; w < nwarps; w++) {
            uint32_t wl = w % b->cta_warps, cbase = w / b->cta_warps * b->cta_threads;
            uint32_t start = cbase + wl * 32, end = cbase + ((wl + 1) * 32 < b->cta_threads ? (wl + 1) * 32 : b->cta_threads);
            for (;;) {
                bool collective = false; /* a lane waits at a warp collective: else emu_fire_warp has nothing to fire */
                for (uint32_t i = start; i < end; i++) {
                    EmuThread *t = &b->t[i];
                    /* a wait for an mbarrier phase that completed earlier in this round ends now (a producer
                     * refills a stage as soon as its consumers release it) */
                    if (t->state == EMU_TS_MBAR && emu_mbarrier_phase_done(b, t->mbar_addr, t->mbar_parity))
                        t->state = EMU_TS_RUN, progress = true;
                    if (t->state == EMU_TS_RUN) {
                        uint32_t pc0 = t->pc;
                        const EmuFunc *fn0 = t->fn;
                        bool timed_out = t->mbar_timed_out;
                        t->mbar_timed_out = false;
                        if (!run_thread(b, t)) return false;
                        /* a thread back at the same failed test_wait, or blocked at a try_wait again after its last one
                         * timed out, changed nothing others can see but its registers (and memory no waiting thread reads) */
                        if (t->state == EMU_TS_YIELD || (t->state == EMU_TS_MBAR && timed_out)) spun = true;
                        else if (t->state != EMU_TS_MBAR || t->pc != pc0 || t->fn != fn0) progress = true;
                    }
                    collective |= t->state == EMU_TS_WARP;
                }
                if (!collective) break;
                bool fired;
                if (!emu_fire_warp(b, w, &fired)) return false;
                if (!fired) break;
                progress = true;
            }
            if (atomic_load_explicit(&L->stop, memory_order_relaxed)) return false;
        }
        /* rounds of short runs (loops around warp collectives) add up: the clock is looked at here too */
        if (b->icount >= b->next_check) {
            if (!emu_check_budget(b, NULL, NULL, 0)) return false;
            b->next_check = b->icount + EMU_CHECK_EVERY;
        }
        uint32_t live = 0;
        for (uint32_t c = 0; c < b->ncta; c++)
            if (!release_barriers(b, c, &live, &progress)) return false;
        for (uint32_t c = 0; c < b->ncta; c += b->ncl) release_cluster(b, c, &progress);
        if (live == 0) return true;
        if (b->mbar_events != events) progress = true;
        /* threads spinning on test_wait while nothing else moves, or blocked at try_waits nothing can complete: their
         * time limit expires and they answer false (the ISA's potentially blocking test: a loop may do other work
         * then).  A deadlock once it has gone on long enough that a bounded spin loop would have given up. */
        if (!progress && (spun || try_waits_blocked(b)) && ++spin_rounds < EMU_SPIN_ROUNDS) {
            try_waits_time_out(b);
            continue;
        }
        if (progress) spin_rounds = 0;
        if (!progress) {
            /* every live thread waits, at barriers or warp collectives, and none can be released */
            const EmuThread *t0 = NULL;
            for (uint32_t i = 0; i < b->nthreads && !t0; i++)
                if (b->t[i].state == EMU_TS_BAR) t0 = &b->t[i];
            for (uint32_t i = 0; i < b->nthreads && !t0; i++)
                if (b->t[i].state == EMU_TS_WARP) t0 = &b->t[i];
            for (uint32_t i = 0; i < b->nthreads && !t0; i++)
                if (b->t[i].state == EMU_TS_MBAR || b->t[i].state == EMU_TS_YIELD || b->t[i].state == EMU_TS_CLUSTER) t0 = &b->t[i];
            Str w = {0};
            emu_block_where(b, &w);
            bool r = emu_fault(b, t0, &t0->fn->code[t0->pc], b->ncta > b->ncl ? "deadlock: no thread of the cooperative grid can proceed"
                                                             : b->ncl > 1    ? "deadlock: no thread of the cluster can proceed"
                                                                           : "deadlock: no thread of the block can proceed",
                               "%u of %u threads are live and every one waits at a barrier, warp-synchronous instruction "
                               "or mbarrier phase that cannot complete (divergent barriers, a thread count never reached, exited "
                               "threads, an mbarrier phase nobody completes?):\n%s",
                               live, b->nthreads, w.buf ? w.buf : "");
            str_free(&w);
            return r;
        }
    }
}

/* Hands the block's printf output to the launch (kept in block order). */
static void flush_prints(EmuBlock *b) {
    EmuLaunch *L = b->L;
    if (!b->out.len) return;
    size_t len = b->out.len;
    pthread_mutex_lock(&L->lock);
    /* blocks end in any order: more than the limit is kept (up to 64 times it), so print_output can keep the
     * first blocks' output, whatever the host threads did */
    if (L->print_bytes + len > (uint64_t)EMU_PRINTF_LIMIT * 64) {
        L->print_dropped = true;
    } else {
        if (L->nprints == L->capprints) {
            uint32_t nc = L->capprints ? L->capprints * 2 : 16;
            EmuPrint *np = realloc(L->prints, nc * sizeof *np);
            if (np) L->prints = np, L->capprints = nc;
        }
        if (L->nprints < L->capprints) { /* else out of host memory: dropped, with print_output's note */
            L->print_bytes += len;
            L->prints[L->nprints++] = (EmuPrint){b->block_index, str_take(&b->out), len};
        } else {
            L->print_dropped = true;
        }
    }
    pthread_mutex_unlock(&L->lock);
    str_free(&b->out);
}

/* ---- buffers kept between launches (EmuBufs, emu.h) ---- */
/* One worker's buffers: its block state's allocation (bytes [0, dirty) may hold what earlier launches left there;
 * the rest is calloc's zeros) and its racecheck shadow (entries [sh_lo, sh_hi) may be non-zero). */
typedef struct EmuBufSet {
    uint8_t *arena;
    size_t arena_cap, dirty;
    EmuShadow *shadow;    /* 64-byte aligned in shadow_mem: an entry is one cache line, not parts of two */
    void *shadow_mem;     /* the allocation */
    size_t shadow_cap; /* entries */
    uint64_t sh_lo, sh_hi;
} EmuBufSet;

struct EmuBufs {
    pthread_mutex_t lock;
    EmuBufSet sets[EMU_BUFS_KEEP_SETS]; /* the sets kept, nsets of them, the most recently given back last */
    unsigned nsets;
    size_t bytes; /* their allocations' sizes together */
};

EmuBufs *emu_bufs_new(void) {
    EmuBufs *c = calloc(1, sizeof *c);
    if (c) pthread_mutex_init(&c->lock, NULL);
    return c;
}

static size_t bufset_bytes(const EmuBufSet *s) { return s->arena_cap + s->shadow_cap * sizeof(EmuShadow); }

void emu_bufs_free(EmuBufs *c) {
    if (!c) return;
    for (unsigned i = 0; i < c->nsets; i++) free(c->sets[i].arena), free(c->sets[i].shadow_mem);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* A kept set for a worker (the one given back last: its memory is the likeliest still in cache); all zeros when
 * none is kept. */
static EmuBufSet bufs_take(EmuBufs *c) {
    EmuBufSet s = {0};
    if (!c) return s;
    pthread_mutex_lock(&c->lock);
    if (c->nsets) {
        s = c->sets[--c->nsets];
        c->bytes -= bufset_bytes(&s);
    }
    pthread_mutex_unlock(&c->lock);
    return s;
}

/* Gives a worker's set back, or frees it when no cache keeps it or the kept bytes would pass EMU_BUFS_KEEP_BYTES. */
static void bufs_give(EmuBufs *c, EmuBufSet *s) {
    if (!s->arena && !s->shadow) return;
    if (c) {
        pthread_mutex_lock(&c->lock);
        bool keep = c->nsets < EMU_BUFS_KEEP_SETS && c->bytes + bufset_bytes(s) <= EMU_BUFS_KEEP_BYTES;
        if (keep) c->sets[c->nsets++] = *s, c->bytes += bufset_bytes(s);
        pthread_mutex_unlock(&c->lock);
        if (keep) return;
    }
    free(s->arena);
    free(s->shadow_mem);
}

/* The bytes of [lo, hi) below dirty (those that may be non-zero). */
static size_t dirty_in(size_t dirty, size_t lo, size_t hi) {
    if (hi > dirty) hi = dirty;
    return lo < hi ? hi - lo : 0;
}

/* Zeroes arena bytes [lo, hi) that may be non-zero. */
static void clear_dirty(uint8_t *arena, size_t dirty, size_t lo, size_t hi) {
    size_t n = dirty_in(dirty, lo, hi);
    if (n) memset(arena + lo, 0, n);
}

/* The worker's block state in one allocation (b.cta is its start), parts at off[0..5] of sizes part[0..5], total
 * bytes: a kept one when it is large enough, else a fresh calloc.  What a block can observe of a kept one starts as
 * calloc's would: CTAs, threads, local and frame-parameter memory (and the padding after shared memory) are zeroed
 * where an earlier launch may have written; registers are not (init_threads writes every slot an instruction
 * names before the block runs, as it does between the blocks of a launch), nor is shared memory (run_block
 * zeroes it for every block).  False when host memory ran out. */
static bool take_arena(EmuBlock *b, EmuBufSet *s, const size_t off[6], const size_t part[6], size_t total) {
    size_t smem = (size_t)b->ncta * b->smem_stride;
    bool reuse = s->arena && s->arena_cap >= total &&
                 dirty_in(s->dirty, 0, off[2]) + dirty_in(s->dirty, off[4], total) <= EMU_BUFS_CLEAR_MAX;
    if (reuse) {
        clear_dirty(s->arena, s->dirty, 0, off[2]);
        clear_dirty(s->arena, s->dirty, off[3] + smem, off[3] + part[3]);
        clear_dirty(s->arena, s->dirty, off[4], total);
    } else {
        free(s->arena);
        s->arena = calloc(total, 1);
        s->arena_cap = s->arena ? total : 0, s->dirty = 0;
        if (!s->arena) return false;
    }
    b->shared_clean = !reuse; /* calloc's zeros: the first block need not clear them again */
    if (total > s->dirty) s->dirty = total;
    uint8_t *arena = s->arena;
    b->cta = (EmuCta *)arena;
    b->t = (EmuThread *)(arena + off[1]);
    b->regs = (uint64_t *)(arena + off[2]);
    b->shared = arena + off[3];
    b->local = arena + off[4];
    b->fparams = arena + off[5];
    return true;
}

/* The worker's racecheck shadow, n entries: a kept one when large enough (run_block first clears what its last
 * user touched: [sh_lo, sh_hi)), else a fresh calloc (one entry more, to start it at a 64-byte boundary: a large
 * calloc is 16 bytes into a page, and every byte's check then loaded two cache lines).  False when host memory ran
 * out. */
static bool take_shadow(EmuBlock *b, EmuBufSet *s, size_t n) {
    _Static_assert(sizeof(EmuShadow) == 64, "a shadow entry is one cache line");
    if (!s->shadow || s->shadow_cap < n) {
        free(s->shadow_mem);
        s->shadow_mem = calloc(n + 1, sizeof *s->shadow);
        s->shadow = s->shadow_mem ? (EmuShadow *)(((uintptr_t)s->shadow_mem + 63) & ~(uintptr_t)63) : NULL;
        s->shadow_cap = s->shadow ? n : 0;
        s->sh_lo = s->sh_hi = 0;
        if (!s->shadow) return false;
    }
    b->shadow = s->shadow;
    b->sh_lo = s->sh_lo, b->sh_hi = s->sh_hi;
    return true;
}

/* A worker's block state (into b and set, which worker() frees) and its units, until none is left or the launch stops.
 * Not inlined: its locals must not live in the frame of worker()'s setjmp. */
static __attribute__((noinline)) void worker_units(EmuBlock *b, EmuBufSet *set) {
    EmuLaunch *L = b->L;
    /* the unit's fixed state in one zeroed allocation (a launch's set-up is its fixed cost): CTAs, threads,
     * registers, shared, local and frame-parameter memory, each 64-byte aligned (b->cta is the allocation) */
    size_t part[6] = {b->ncta * sizeof *b->cta, b->nthreads * sizeof *b->t, (size_t)b->nthreads * L->f->nslots * sizeof(uint64_t),
                      (size_t)b->ncta * b->smem_stride + 1, (size_t)b->nthreads * b->local_size + 1, (size_t)b->nthreads * b->fparam_size + 1};
    size_t off[6], total = 0;
    for (int k = 0; k < 6; k++) off[k] = total, total += (part[k] + 63) & ~(size_t)63;
    bool have_arena = take_arena(b, set, off, part, total);
    /* the global accesses' hints, empty (lim 0) until each instruction's first hit */
    if (have_arena && L->m->nghints && !(b->gh = calloc(L->m->nghints, sizeof *b->gh))) have_arena = false;
    if (L->opt->racecheck && have_arena && take_shadow(b, set, (size_t)b->ncta * b->smem_stride + 1)) {
        b->mbs = calloc(EMU_MB_SLOTS, sizeof *b->mbs);
        b->seen = calloc((size_t)b->nthreads * EMU_MB_SLOTS, sizeof *b->seen);
        b->warp_gen = calloc((size_t)b->ncta * b->cta_warps, sizeof *b->warp_gen);
        b->rt = calloc(b->nthreads, sizeof *b->rt);
        b->cpa = calloc((size_t)b->nthreads * EMU_CPA_MAX, sizeof *b->cpa);
    }
    if (!have_arena ||
        (L->opt->racecheck && (!b->shadow || !b->mbs || !b->seen || !b->warp_gen || !b->rt || !b->cpa || !emu_race_alloc(b)))) {
        atomic_store(&L->out_of_memory, true);
        emu_fault(b, NULL, NULL, "out of host memory", "for the block's registers, shared or local memory");
    } else {
        for (uint64_t nb = 0;; nb++) {
            if (atomic_load(&L->stop)) break;
            if (interrupted(L)) {
                emu_fault(b, NULL, NULL, "interrupted", INTERRUPTED_WHY);
                break;
            }
            if (L->deadline_ns && !(nb & 15) && now_ns() >= L->deadline_ns) {
                /* Between blocks there is no thread to show.  A block still running reaches the deadline in
                 * emu_check_budget and reports where its threads are; this report stands only when none does
                 * (a worker thread that started late on a loaded host must not take the report from them). */
                char waiting[300];
                not_started(L, waiting, sizeof waiting);
                char *text = late_timeout(b, "ran longer than %g s (TILE_EMU_TIMEOUT, tile_context_options.emu_timeout_seconds);%s",
                                          L->opt->timeout_seconds, waiting);
                pthread_mutex_lock(&L->lock);
                if (!L->late_err) L->late_err = text, text = NULL;
                pthread_mutex_unlock(&L->lock);
                free(text);
                break;
            }
            uint64_t idx = atomic_fetch_add(&L->next_block, 1);
            if (idx >= L->nunits) break;
            b->block_index = idx;
            /* cluster idx of the grid of clusters, its CTAs by rank (x fastest); a cooperative launch: every
             * cluster, CTA r of the unit being rank r % ncl of cluster r / ncl */
            const unsigned *cl = L->cluster;
            uint64_t gx = L->grid[0] / cl[0], gy = L->grid[1] / cl[1];
            for (uint32_t r = 0; r < b->ncta; r++) {
                uint64_t u = L->workspace ? r / b->ncl : idx;
                uint32_t cid[3] = {(uint32_t)(u % gx), (uint32_t)((u / gx) % gy), (uint32_t)(u / (gx * gy))};
                uint32_t q = L->workspace ? r % b->ncl : r, in[3] = {q % cl[0], (q / cl[0]) % cl[1], q / (cl[0] * cl[1])};
                for (int k = 0; k < 3; k++) b->cta[r].ctaid[k] = cid[k] * cl[k] + in[k];
            }
            uint64_t t0 = now_ns();
            bool ok = run_block(b);
            flush_prints(b);
            if (!ok) break;
            uint64_t dt = now_ns() - t0, was = atomic_load(&L->longest_ns);
            while (dt > was && !atomic_compare_exchange_weak(&L->longest_ns, &was, dt)) {}
            atomic_fetch_add(&L->done_units, 1);
        }
    }
}

static void *worker(void *arg) {
    EmuLaunch *L = arg;
    EmuBlock b;
    memset(&b, 0, sizeof b);
    b.L = L;
    b.ncta = L->ncta;
    b.ncl = L->ncl;
    b.cta_threads = L->block[0] * L->block[1] * L->block[2];
    b.cta_warps = (b.cta_threads + 31) / 32;
    b.nthreads = b.ncta * b.cta_threads;
    b.next_check = EMU_CHECK_EVERY;
    b.shared_size = L->shared_size;
    b.smem_stride = (L->shared_size + 15) & ~15u;
    b.local_size = (L->f->local_size + 15) & ~15u;
    b.fparam_size = (L->f->frame_param_size + 15) & ~15u;
    EmuBufSet set = bufs_take(L->opt->bufs);
    /* host memory running out in the block's state, its racecheck tables, a wgmma's or a copy's records, printf's
     * text or a report (out_of_memory() anywhere below) stops the launch: TILE_ERROR_OUT_OF_MEMORY, not an abort.
     * b and set change only inside worker_units (through their addresses), so they are what it left */
    OomScope oom;
    if (!setjmp(oom.env)) {
        oom_push(&oom);
        worker_units(&b, &set);
    } else {
        atomic_store(&L->out_of_memory, true);
        atomic_store(&L->stop, true);
    }
    oom_pop(&oom);
    atomic_fetch_add(&L->instructions, b.icount);
    for (uint32_t i = 0; b.t && i < b.nthreads; i++) emu_wg_free(&b.t[i]);
    emu_stacks_free(&b);
    str_free(&b.out);
    if (b.shadow) set.sh_lo = b.sh_lo, set.sh_hi = b.sh_hi; /* what the next user clears first */
    bufs_give(L->opt->bufs, &set);
    free(b.mbs);
    free(b.seen);
    free(b.warp_gen);
    free(b.rt);
    free(b.cpa);
    emu_race_free(&b);
    free(b.acp);
    free(b.relw);
    free(b.wg_reads);
    free(b.bulk);
    free(b.bulkrd);
    free(b.gh);
    return NULL;
}

/* A worker thread: blocks until none is left, then says it has left. */
static void *worker_thread(void *arg) {
    EmuLaunch *L = arg;
    worker(L);
    pthread_mutex_lock(&L->lock);
    L->workers_live--;
    pthread_cond_signal(&L->worker_exit);
    pthread_mutex_unlock(&L->lock);
    return NULL;
}

/* Fewer workers than units: nw threads take the units in order while the calling thread watches.  A
 * block may wait for one that has not started (a grid-wide barrier, a flag a later block sets: on a GPU
 * the whole grid is resident), and then none ends: when no unit has ended for EMU_STALL_MS, or four
 * times the longest a unit has taken, while units wait to start, the workers double (up to
 * EMU_MAX_WORKERS), so waiting blocks share the cores with the ones they wait for.  Workers only take
 * units, so a launch that is merely slow gets a few more threads and the same results. */
static void run_workers(EmuLaunch *L, unsigned nw) {
    pthread_t *th = malloc(sizeof *th * EMU_MAX_WORKERS);
    unsigned started = 0;
    pthread_mutex_lock(&L->lock);
    for (unsigned i = 0; th && i < nw; i++) {
        if (pthread_create(&th[started], NULL, worker_thread, L) != 0) break;
        started++, L->workers_live++;
    }
    pthread_mutex_unlock(&L->lock);
    if (!started) { /* no thread to be had: the calling thread runs them all */
        worker(L);
        free(th);
        return;
    }
    uint64_t seen = atomic_load(&L->done_units), last_ns = now_ns();
    pthread_mutex_lock(&L->lock);
    while (L->workers_live > 0) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 50 * 1000000L;
        if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&L->worker_exit, &L->lock, &until);
        uint64_t done = atomic_load(&L->done_units), now = now_ns(), longest = atomic_load(&L->longest_ns);
        uint64_t stall = (uint64_t)EMU_STALL_MS * 1000000u > 4 * longest ? (uint64_t)EMU_STALL_MS * 1000000u : 4 * longest;
        if (done != seen) seen = done, last_ns = now;
        else if (now - last_ns >= stall && atomic_load(&L->next_block) < L->nunits && started < EMU_MAX_WORKERS && !atomic_load(&L->stop)) {
            for (unsigned more = started; more > 0 && started < EMU_MAX_WORKERS; more--) {
                if (pthread_create(&th[started], NULL, worker_thread, L) != 0) break;
                started++, L->workers_live++;
            }
            last_ns = now;
        }
    }
    pthread_mutex_unlock(&L->lock);
    for (unsigned i = 0; i < started; i++) pthread_join(th[i], NULL);
    free(th);
}

static bool launch_error(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool launch_error(char **err, const char *fmt, ...) {
    Str s = {0};
    va_list ap;
    va_start(ap, fmt);
    str_vprintf(&s, fmt, ap);
    va_end(ap);
    *err = str_take(&s);
    return false;
}

static int by_block(const void *a, const void *b) {
    uint64_t x = ((const EmuPrint *)a)->block, y = ((const EmuPrint *)b)->block;
    return x < y ? -1 : x > y;
}

/* Writes the launch's printf output in block order. */
static void print_output(EmuLaunch *L) {
    if (!L->nprints && !L->print_dropped) return;
    FILE *out = L->opt->printf_out ? L->opt->printf_out : stdout;
    qsort(L->prints, L->nprints, sizeof *L->prints, by_block);
    uint64_t written = 0;
    bool full = false; /* in block order: the first block that does not fit and every later one are dropped */
    for (uint32_t i = 0; i < L->nprints; i++) {
        full = full || written + L->prints[i].len > EMU_PRINTF_LIMIT;
        if (full) L->print_dropped = true;
        else fwrite(L->prints[i].text, 1, L->prints[i].len, out), written += L->prints[i].len;
        free(L->prints[i].text);
    }
    if (L->print_dropped)
        fprintf(out, "emu: printf output of kernel '%s' beyond %d bytes was dropped\n", L->f->name, EMU_PRINTF_LIMIT);
    fflush(out);
    free(L->prints);
}

/* Once a module: an instruction used the accumulator of a wgmma no wgmma.wait_group had retired (undefined in the
 * PTX ISA; run as ptxas compiles it, with a wait injected before it: "wgmma asynchrony" in docs/emulator.md). */
static void note_early_acc(EmuLaunch *L) {
    uint32_t line = atomic_load(&L->early_acc_line);
    if (!line || __atomic_exchange_n(&L->m->noted_early_acc, 1, __ATOMIC_RELAXED)) return;
    FILE *out = L->opt->notes_out ? L->opt->notes_out : stderr;
    fprintf(out,
            "emu: note: kernel '%s', PTX line %u: uses an accumulator register of a wgmma.mma_async before the "
            "wgmma.wait_group that retires it (undefined in the PTX ISA; ptxas injects a wait there and serializes the "
            "wgmmas, info C7517; run as that wait; noted once a module)\n",
            L->f->name, emu_module_ptx_line(L->m, line));
    fflush(out);
}

/* Launch dimensions and shared memory within the hardware's limits. */
/* The launch's cluster dimensions: the kernel's .reqnctapercluster, else the options' (1, 1, 1 when neither). */
static bool cluster_dims(EmuModule *m, EmuFunc *f, const unsigned grid[3], const EmuOptions *opt, unsigned cl[3], char **err) {
    const uint32_t *req = f->reqnctapercluster;
    bool have_req = req[0] != 0, have_opt = opt->cluster[0] || opt->cluster[1] || opt->cluster[2];
    for (int k = 0; k < 3; k++) cl[k] = have_req ? req[k] : have_opt ? (opt->cluster[k] ? opt->cluster[k] : 1) : 1;
    if (have_req && have_opt && (opt->cluster[0] != req[0] || opt->cluster[1] != req[1] || opt->cluster[2] != req[2]))
        return launch_error(err, "launch of '%s': cluster (%u,%u,%u) differs from .reqnctapercluster %u, %u, %u", f->name,
                            opt->cluster[0], opt->cluster[1], opt->cluster[2], req[0], req[1], req[2]);
    uint64_t n = cl[0] > EMU_MAX_CLUSTER || cl[1] > EMU_MAX_CLUSTER || cl[2] > EMU_MAX_CLUSTER ? 0 : (uint64_t)cl[0] * cl[1] * cl[2];
    if (have_req && (n == 0 || n > EMU_MAX_CLUSTER)) /* ptxas takes any value (a module of several kernels loads) */
        return launch_error(err, "launch of '%s': its .reqnctapercluster %u, %u, %u is not a cluster of 1..%d CTAs (8 "
                            "portable), so no GPU launches it (ptxas takes the directive)", f->name, req[0], req[1], req[2],
                            EMU_MAX_CLUSTER);
    if (n == 0 || n > EMU_MAX_CLUSTER)
        return launch_error(err, "launch of '%s': clusters of %u x %u x %u CTAs; a cluster has 1..%d", f->name, cl[0], cl[1], cl[2],
                            EMU_MAX_CLUSTER);
    if (n > 1 && m->target && m->target->sm < 90)
        return launch_error(err, "launch of '%s': clusters of %" PRIu64 " CTAs need sm_90 or later (the module targets %s)", f->name,
                            n, m->target->name);
    if (f->maxclusterrank && n > f->maxclusterrank)
        return launch_error(err, "launch of '%s': clusters of %" PRIu64 " CTAs exceed .maxclusterrank %u", f->name, n, f->maxclusterrank);
    for (int k = 0; k < 3; k++)
        if (grid[k] % cl[k])
            return launch_error(err, "launch of '%s': grid (%u,%u,%u) is not a whole number of (%u,%u,%u) clusters", f->name, grid[0],
                                grid[1], grid[2], cl[0], cl[1], cl[2]);
    return true;
}

static bool check_launch(EmuModule *m, EmuFunc *f, const unsigned grid[3], const unsigned block[3], unsigned dyn_smem,
                         const EmuOptions *opt, unsigned cluster[3], char **err) {
    if (!f->is_entry) return launch_error(err, "'%s' is a .func, not a kernel entry", f->name);
    for (int k = 0; k < 3; k++)
        if (grid[k] == 0 || block[k] == 0)
            return launch_error(err, "launch of '%s': grid (%u,%u,%u) and block (%u,%u,%u) must be non-zero", f->name,
                                grid[0], grid[1], grid[2], block[0], block[1], block[2]);
    if (grid[0] > EMU_MAX_GRID_X || grid[1] > EMU_MAX_GRID_YZ || grid[2] > EMU_MAX_GRID_YZ)
        return launch_error(err, "launch of '%s': grid (%u,%u,%u) exceeds the limits (%u, %u, %u)", f->name, grid[0], grid[1],
                            grid[2], EMU_MAX_GRID_X, EMU_MAX_GRID_YZ, EMU_MAX_GRID_YZ);
    uint64_t nthreads = (uint64_t)block[0] * block[1] * block[2];
    if (block[0] > EMU_MAX_BLOCK_XY || block[1] > EMU_MAX_BLOCK_XY || block[2] > EMU_MAX_BLOCK_Z ||
        nthreads > EMU_MAX_BLOCK_THREADS)
        return launch_error(err, "launch of '%s': block (%u,%u,%u) exceeds the limits (x, y <= %u, z <= %u, %u threads in all)",
                            f->name, block[0], block[1], block[2], EMU_MAX_BLOCK_XY, EMU_MAX_BLOCK_Z, EMU_MAX_BLOCK_THREADS);
    if (f->reqntid[0] && (f->reqntid[0] != block[0] || f->reqntid[1] != block[1] || f->reqntid[2] != block[2]))
        return launch_error(err, "launch of '%s': block (%u,%u,%u) differs from .reqntid %u, %u, %u", f->name, block[0],
                            block[1], block[2], f->reqntid[0], f->reqntid[1], f->reqntid[2]);
    if (f->maxntid[0] && nthreads > (uint64_t)f->maxntid[0] * f->maxntid[1] * f->maxntid[2])
        return launch_error(err, "launch of '%s': %" PRIu64 " threads exceed .maxntid %u, %u, %u", f->name, nthreads,
                            f->maxntid[0], f->maxntid[1], f->maxntid[2]);
    if (!cluster_dims(m, f, grid, opt, cluster, err)) return false;
    if ((uint64_t)f->local_size + f->frame_param_size > EMU_MAX_THREAD_LOCAL)
        return launch_error(err, "launch of '%s': %" PRIu64 " bytes of local memory per thread exceed the %u a thread may use",
                            f->name, (uint64_t)f->local_size + f->frame_param_size, (unsigned)EMU_MAX_THREAD_LOCAL);
    /* the GPU's limit: an emu:<target> device's own, whatever the PTX's .target (an H100 gives sm_80 PTX its
     * 227 KiB; an sm_86 allows 99 KiB) */
    const Target *lt = opt->device ? opt->device : m->target;
    uint64_t limit = emu_smem_dynamic_limit(lt), used = (uint64_t)f->shared_used + dyn_smem;
    if (used > limit)
        return launch_error(err, "launch of '%s': %u bytes of static and %u of dynamic shared memory exceed the %" PRIu64
                            " a block may use on %s", f->name, f->shared_used, dyn_smem, limit, lt ? lt->name : "any target");
    return true;
}

bool emu_launch(EmuModule *m, EmuFunc *f, const unsigned grid[3], const unsigned block[3], unsigned dyn_smem,
                void **params, const EmuOptions *opt, EmuLaunchStats *stats, char **err) {
    *err = NULL;
    if (stats) stats->instructions = 0, stats->refused = true; /* until the shape and the parameters pass */
    unsigned cluster[3];
    if (!check_launch(m, f, grid, block, dyn_smem, opt, cluster, err)) return false;
    if (f->nparams && !params) return launch_error(err, "launch of '%s': %u parameters expected, params is NULL", f->name, f->nparams);
    EmuLaunch L;
    memset(&L, 0, sizeof L);
    L.m = m;
    if (f->packed && !opt->one_slot_per_register) f = f->packed; /* its registers sharing slots (slots.c) */
    L.f = f;
    memcpy(L.grid, grid, sizeof L.grid);
    memcpy(L.block, block, sizeof L.block);
    L.dyn_smem = dyn_smem;
    L.opt = opt;
    L.mem = m->mem;
    L.shared_size = dyn_smem ? m->shared_dyn_offset + dyn_smem : f->shared_static;
    L.total_smem = L.shared_size;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    L.globaltimer = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
    if (m->reserved_smem) { /* after the block's own shared memory, 16-byte aligned */
        L.reserved_smem = (L.shared_size + 15) / 16 * 16;
        L.shared_size = L.reserved_smem + EMU_RESERVED_SMEM;
    }
    L.nblocks = (uint64_t)grid[0] * grid[1] * grid[2];
    memcpy(L.cluster, cluster, sizeof L.cluster);
    L.ncl = cluster[0] * cluster[1] * cluster[2];
    L.ncta = L.ncl;
    /* %is_explicit_cluster: the kernel or the launch gave a cluster shape, 1x1x1 included */
    L.explicit_cluster = f->reqnctapercluster[0] || f->explicit_cluster || L.ncl > 1 || opt->cluster[0] || opt->cluster[1] || opt->cluster[2];
    if (opt->cooperative) {
        /* every block at once, and the grid barrier's workspace (cooperative groups reads it from %envreg1:2) */
        /* counted without a product that wraps: 2^60 blocks (grid (2^30, 2^15, 2^15)) of 16 threads made 0 threads, ran
         * as units of 0 CTAs and divided by zero */
        uint64_t bt = (uint64_t)block[0] * block[1] * block[2];
        if (L.nblocks > EMU_MAX_COOP_THREADS / bt) {
            if (L.nblocks > UINT64_MAX / bt)
                return launch_error(err, "launch of '%s': a cooperative launch of %" PRIu64 " blocks of %" PRIu64 " threads; all of "
                                    "them are resident at once, at most %d threads", f->name, L.nblocks, bt, EMU_MAX_COOP_THREADS);
            return launch_error(err, "launch of '%s': a cooperative launch of %" PRIu64 " threads; all of them are resident at once, "
                                "at most %d", f->name, L.nblocks * bt, EMU_MAX_COOP_THREADS);
        }
        L.ncta = (uint32_t)L.nblocks;
    }
    L.nunits = L.nblocks / L.ncta;
    /* past 10^9 s (INFINITY too) no deadline: the nanoseconds would not fit */
    if (opt->timeout_seconds > 0 && opt->timeout_seconds < 1e9) L.deadline_ns = now_ns() + (uint64_t)(opt->timeout_seconds * 1e9);
    L.param_size = f->param_size;
    L.params = calloc(f->param_size + 8, 1);
    if (!L.params) {
        if (stats) stats->refused = false, stats->out_of_memory = true;
        return launch_error(err, "out of host memory for the launch's parameters");
    }
    for (uint32_t i = 0; i < f->nparams; i++) {
        if (!params[i]) {
            free(L.params);
            return launch_error(err, "launch of '%s': params[%u] (%s) is NULL", f->name, i, f->params[i].name);
        }
        memcpy(L.params + f->params[i].offset, params[i], f->params[i].size);
    }
    if (stats) stats->refused = false;
    if (opt->cooperative) {
        if (!emu_mem_alloc(L.mem, 64, false, &L.workspace)) {
            free(L.params);
            if (stats) stats->out_of_memory = true;
            return launch_error(err, "out of host memory for the cooperative launch's grid barrier");
        }
        memset(emu_mem_host(L.mem, L.workspace, 64), 0, 64);
    }
    if (m->uses_heap && !emu_heap_ready(L.mem)) {
        free(L.params);
        if (L.workspace) emu_mem_free(L.mem, L.workspace);
        if (stats) stats->out_of_memory = true;
        return launch_error(err, "out of host memory for the device heap");
    }
    init_runs(f, &L.init_runs, &L.ninit_runs);
    emu_wgmma_slot_table(f, &L.wg_slot_at, &L.wg_slots, &L.wg_span);
    pthread_mutex_init(&L.lock, NULL);
    pthread_mutex_init(&L.atom128, NULL);
    pthread_cond_init(&L.worker_exit, NULL);
    unsigned nw = opt->host_threads;
    if (!nw) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        nw = c > 0 ? (unsigned)c : 1;
    }
    if (nw > L.nunits) nw = (unsigned)L.nunits;
    if (nw > EMU_MAX_WORKERS) nw = EMU_MAX_WORKERS;
    if (nw == L.nunits) { /* a worker per unit: every block starts at once (the calling thread is one of them) */
        pthread_t th[EMU_MAX_WORKERS];
        unsigned started = 0;
        for (unsigned i = 1; i < nw; i++) {
            if (pthread_create(&th[started], NULL, worker, &L) != 0) break;
            started++;
        }
        worker(&L);
        for (unsigned i = 0; i < started; i++) pthread_join(th[i], NULL);
    } else {
        run_workers(&L, nw);
    }
    pthread_cond_destroy(&L.worker_exit);
    pthread_mutex_destroy(&L.lock);
    pthread_mutex_destroy(&L.atom128);
    free(L.params);
    free(L.init_runs);
    free(L.wg_slot_at);
    free(L.wg_slots);
    free(L.wg_span);
    if (L.workspace) emu_mem_free(L.mem, L.workspace);
    print_output(&L);
    note_early_acc(&L);
    if (stats) stats->instructions = atomic_load(&L.instructions);
    if (stats) stats->out_of_memory = atomic_load(&L.out_of_memory);
    if (!L.err && atomic_load(&L.out_of_memory)) { /* a worker's out_of_memory(): no report was made (it needs memory) */
        free(L.late_err);
        L.late_err = NULL;
        char text[512]; /* no Str: out of memory it would abort */
        snprintf(text, sizeof text, "out of host memory\n    in kernel '%s'\n    while its blocks ran (racecheck's or wgmma's "
                 "records, printf's output or a report could not grow)", f->name);
        L.err = strdup(text); /* NULL still: stats->out_of_memory says it */
    }
    if (!L.err) L.err = L.late_err;
    else free(L.late_err);
    if (L.err || atomic_load(&L.out_of_memory)) {
        *err = L.err;
        return false;
    }
    return true;
}
