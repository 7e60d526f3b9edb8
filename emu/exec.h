/* exec.h - executor internals shared by exec*.c: launch, block and thread
 * state, operand access helpers and the family executors.
 *
 * A launch (EmuLaunch) is read-only while blocks run, except for the work
 * counter, the stop flag and the first error, which are atomic / locked.
 * Each host worker owns one EmuBlock that it reuses for every block it
 * takes: threads, register files, shared and local memory, the racecheck
 * shadow, a four-entry cache of the last global allocations touched and, per
 * global-memory instruction, a hint: the allocation it hit last. */
#ifndef TILE_JIT_EMU_EXEC_H
#define TILE_JIT_EMU_EXEC_H

#include "emu/emu.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

/* Instructions a thread or block runs between looks at the clock, the stop
 * flag and the instruction limit (at backward branches and block rounds). */
#define EMU_CHECK_EVERY (1u << 16)
/* A thread that has run this many instructions in one go gives way to the others at its next backward
 * branch (it stays runnable): no thread waits forever on memory another is to write. */
#define EMU_QUANTUM (1u << 14)
/* Rounds of a block in which threads only spin on a failed mbarrier.test_wait or on a try_wait that
 * timed out, nothing else moving, before the block is reported as deadlocked. */
#define EMU_SPIN_ROUNDS 4096u

/* Thread states.  MBAR: blocked at mbarrier.try_wait until the phase it waits for completes
 * (the scheduler wakes it, and the try_wait runs again) or, in a round where no thread of the block
 * can move, its time limit expires (it answers false: EmuThread.mbar_timed_out); YIELD: a failed
 * mbarrier.test_wait, runnable again in the next round (a spin loop lets the other warps run). */
enum { EMU_TS_RUN, EMU_TS_BAR, EMU_TS_WARP, EMU_TS_MBAR, EMU_TS_YIELD, EMU_TS_CLUSTER, EMU_TS_DONE };

/* A register of an in-flight wgmma (exec_wgmma.c): an A fragment register and the value it was read with (also
 * the record's layout in reports). */
typedef struct EmuWgPend {
    uint32_t slot;        /* the register */
    uint32_t group;       /* wgmma-group (EmuWgState.open: not committed yet) */
    uint32_t line;        /* PTX line of the wgmma.mma_async */
    uint32_t wline;       /* PTX line of the last instruction that wrote the register while in flight (0: none) */
    uint64_t value;
} EmuWgPend;
/* A 16-byte chunk of shared memory (an index into EmuBlock.shared / 16) that a wgmma of the
 * warpgroup reads through a descriptor, until the wait that retires its group. */
typedef struct EmuWgRead {
    uint32_t chunk, group, line;
} EmuWgRead;
/* wgmma.mma_async results not yet retired, by register slot of the frame that issued them: a busy slot's
 * result (pv) and wgmma-group (pg), written to the register at the wgmma.wait_group that retires its group.
 * Indexed by slot, so that setting, finding and retiring one costs a bit test and a store. */
typedef struct EmuWgState {
    uint64_t *pv;         /* per register slot: a busy slot's in-flight result */
    uint32_t *pg;         /* per register slot: a busy slot's wgmma-group */
    uint32_t n;           /* busy slots */
    uint32_t open;        /* number of the group being filled (committed groups are below it) */
    uint64_t *busy;       /* bit per register slot: an accumulator of an in-flight wgmma */
    uint32_t nbusy_words;
    uint32_t lo, hi;      /* every busy slot is in [lo, hi] (set as slots become busy, kept until none is) */
    EmuWgPend *ap;        /* A-fragment registers of in-flight wgmmas and the values they were read with */
    uint32_t nap, capap;
    EmuWgRead *rd;        /* kept by the warpgroup's first thread: what its in-flight wgmmas read */
    uint32_t nrd, caprd;
    uint64_t wait_round;  /* the warpgroup's first thread: the round its held wgmma.wait_group arrived in (0: none) */
} EmuWgState;

/* One activation of a function on a thread's call stack (exec_call.c).
 * Frame 0 is the entry; its registers and locals live in the EmuBlock,
 * its parameters in the launch.  A callee's buffers are kept (and reused)
 * when it returns. */
typedef struct EmuFrame {
    const EmuFunc *fn;
    uint32_t ret_pc;        /* the caller's call instruction (frames >= 1) */
    uint64_t *r;            /* registers (fn->nslots) */
    uint8_t *local;         /* fn->local_size bytes at local address local_base */
    uint32_t local_base;
    uint8_t *args;          /* .func: return values then parameters (fn->param_size) */
    uint8_t *fparams;       /* call-sequence .param variables of the body (fn->frame_param_size) */
    uint8_t *dyn;           /* alloca'd bytes (dyn_size), after the static local memory (16-byte aligned) */
    uint32_t dyn_size;
    uint32_t cap_r, cap_local, cap_args, cap_fparams, cap_dyn; /* allocated sizes (frames >= 1; dyn: every frame) */
} EmuFrame;

typedef struct EmuThread {
    uint64_t *r;          /* register file of the current function */
    const EmuFunc *fn;    /* the current function: the entry or a .func it called */
    uint32_t pc;
    uint8_t state;
    uint8_t bar_id;
    uint8_t carry;        /* CC.CF of add.cc/addc/sub.cc/subc/mad.cc/madc */
    uint32_t cta;         /* its CTA: index into EmuBlock.cta (rank in its cluster: cta % EmuBlock.ncl) */
    uint16_t lane;
    uint32_t linear;      /* index in EmuBlock.t: rank * threads per CTA + linear thread index in the CTA */
    uint32_t bar_count;   /* thread count of the barrier waited on (0: all) */
    uint32_t tid[3];
    uint32_t depth;       /* current frame: frames[depth] */
    uint32_t nframes;     /* frames allocated */
    EmuFrame *frames;     /* call stack, NULL until the first call (frame 0 then lives in the EmuBlock alone) */
    uint64_t icount;      /* executed instructions (watchdog) */
    uint32_t mbar_addr;   /* EMU_TS_MBAR: the mbarrier waited on (index into EmuBlock.shared) */
    uint8_t mbar_parity;  /* and the parity of the phase whose completion it waits for */
    bool mbar_timed_out;  /* its try_wait answered false (timed out) since it last ran: blocking again is a spin */
    bool cl_arrived;      /* barrier.cluster.arrive done, its wait not yet */
    uint32_t cl_phase;    /* the cluster barrier's phase it arrived in (EMU_TS_CLUSTER: waits for its completion) */
    EmuWgState *wg;       /* in-flight wgmma results (NULL: none ever) */
    uint32_t bulk_commits; /* cp.async.bulk.commit_groups so far: the number of its open bulk group */
} EmuThread;

/* What racecheck knows of a thread (EmuBlock.rt, by EmuThread.linear; kept out of EmuThread, whose size and
 * layout the interpreter's speed is sensitive to). */
typedef struct EmuRaceThread {
    uint32_t clock;       /* releases so far (barrier arrivals, mbarrier arrivals, release writes): its accesses happen at
                           * clock + 1 (EmuShadow.wclk, rclk), a release hands clock + 1 on and then counts itself */
    uint32_t pfence;      /* fence.proxy.async (covering shared memory) executed so far */
    uint32_t wsync;       /* the generation of the last bar.warp.sync it took part in */
    uint32_t obs_ev;      /* the latest EmuBlock.ev event it has waited for */
    uint32_t with[32];    /* by lane of its warp: the generation of the last bar.warp.sync both took part in */
    uint32_t cpa_commits; /* cp.async.commit_groups so far: the number of its open cp.async group */
    uint32_t ncpa;        /* its cp.async copies not yet retired (EmuBlock.cpa) */
    bool fenced;          /* it has run a fence (fence.sc/.acq_rel, membar): its strong writes since are releases */
    uint32_t pend_acq;    /* the EmuBlock.relw entry (+ 1; 0: none) its strong reads read, acquired at its next fence; */
    bool pend_many;       /* or several: its next fence acquires everything (no false report) */
} EmuRaceThread;

/* A cp.async copy whose shared-memory writes have not landed yet (racecheck): the copy is done at issue, but on a
 * GPU its bytes land at any time until the issuing thread's cp.async.wait_group / wait_all retires its group (or
 * its cp.async.mbarrier.arrive fires); until then the bytes' shadow says EMU_CLK_PENDING and any access to them is
 * reported.  EMU_CPA_MAX per thread: past that the oldest is taken as landed (no report can be false). */
enum { EMU_CPA_MAX = 64 };
#define EMU_CLK_PENDING UINT32_MAX
typedef struct EmuCpAsync {
    uint32_t idx;   /* its first byte, an index into EmuBlock.shared */
    uint16_t group; /* its cp.async group (EmuRaceThread.cpa_commits at issue, modulo 2^16) */
    uint16_t size;
} EmuCpAsync;

/* Global bytes a bulk store or reduction (cp.async.bulk[.tensor] / cp.reduce.async.bulk[.tensor] to global
 * memory) has written and whose issuing thread has not waited for with cp.async.bulk.wait_group (without
 * .read): the copy is done at issue, but on a GPU those writes land later, so any other access to them is
 * reported (exec_async.c).  The same for the shared bytes such a copy reads (EmuBlock.bulkrd, indices into
 * shared) until wait_group[.read]: a write to them is reported. */
typedef struct EmuBulkWrite {
    uint64_t lo, hi;
    uint32_t thread; /* linear index of the issuing thread */
    uint32_t group;  /* its bulk group (the thread's bulk_commits at issue) */
    uint32_t line;
} EmuBulkWrite;

/* printf output of one block, kept until the launch ends (so output comes
 * out in block order, whatever the host threads' timing). */
typedef struct EmuPrint {
    uint64_t block;
    char *text;
    size_t len;
} EmuPrint;

typedef struct EmuLaunch {
    EmuModule *m;
    EmuFunc *f;
    unsigned grid[3], block[3];
    unsigned dyn_smem;
    uint8_t *params;      /* kernel parameter buffer */
    uint32_t param_size;
    const EmuOptions *opt;
    EmuMem *mem;
    uint32_t shared_size; /* static + dynamic (+ EMU_RESERVED_SMEM when the module reads the reserved offsets) */
    uint32_t total_smem;    /* static + dynamic: %total_smem_size */
    uint64_t globaltimer;   /* %globaltimer: CLOCK_REALTIME in ns when the launch started */
    uint32_t reserved_smem; /* where the reserved shared memory starts (module->reserved_smem) */
    uint64_t nblocks;
    unsigned cluster[3];  /* CTAs per cluster along x, y, z (1, 1, 1 without clusters) */
    uint32_t ncl;         /* CTAs per cluster */
    uint32_t ncta;        /* CTAs run together: a cluster, or the whole grid of a cooperative launch */
    uint64_t nunits;      /* units of ncta CTAs: what the workers take one at a time */
    uint64_t workspace;   /* cooperative launch: the grid barrier's global memory (%envreg1:%envreg2); 0: none */
    bool explicit_cluster; /* launched as a cluster (%is_explicit_cluster) */
    uint64_t deadline_ns; /* CLOCK_MONOTONIC; 0: no timeout */
    atomic_uint_fast64_t next_block;
    atomic_uint_fast64_t done_units; /* units run to their end: the launch's progress (more workers when it stalls) */
    atomic_uint_fast64_t longest_ns; /* the longest a unit has run (a stall is a gap well past it) */
    atomic_bool stop;
    atomic_bool out_of_memory; /* host memory ran out in a worker (the launch fails with TILE_ERROR_OUT_OF_MEMORY) */
    atomic_uint_fast64_t instructions;
    pthread_mutex_t lock;
    pthread_cond_t worker_exit; /* signalled (lock held) as each worker leaves */
    unsigned workers_live;      /* workers not yet left (lock held) */
    pthread_mutex_t atom128; /* atom.cas/.exch.b128 of the launch, one at a time (the host has no portable 16-byte CAS);
                              * also atomics on 3, 5, 6 or 7 valid bytes of a tail access (exec_mem.c atom_tail) */
    char *err;            /* first error report (malloc'd) */
    char *late_err;       /* a timeout seen between blocks (malloc'd): the report when no running block gives one with where its threads are */
    _Atomic uint32_t early_acc_line; /* the PTX line of the first access to an accumulator no wgmma.wait_group had retired; 0: none */
    uint32_t *init_runs;  /* the register slots the kernel's instructions name, as runs (first slot, count): all a thread
                           * after its CTA's first needs copied from that one's registers; NULL: every slot (calls) */
    uint32_t ninit_runs;
    uint32_t *wg_slot_at;  /* the kernel uses wgmma: the registers instruction i reads or writes (its guard, operands and
                            * extras) are wg_slots[wg_slot_at[i] .. wg_slot_at[i + 1]), those of them a wgmma of the kernel writes as D
                            * (the only slots ever in flight) within [wg_span[2i], wg_span[2i + 1]] (emu_wgmma_slot_table); NULL: none */
    uint32_t *wg_slots, *wg_span;
    EmuPrint *prints;     /* printf output by block (lock held) */
    uint32_t nprints, capprints;
    size_t print_bytes;
    bool print_dropped;
} EmuLaunch;

enum { EMU_SH_STRONG = 0x8000, EMU_SH_WGMMA = 0x4000, EMU_SH_WARP = 0x3FFF };
/* Racecheck shadow of one shared-memory byte (exec_race.c).  The last write, and the reads since it: the last
 * reading warp's in the r fields, those of other warps not ordered before it in the read set rset. */
typedef struct EmuShadow {
    uint32_t wclk, rclk;     /* the writer's / last reading warp's clock (EmuRaceThread.clock + 1) at the access; 0: none */
    uint32_t wtid, rtid;     /* EmuThread.linear of the last write / read; UINT32_MAX: several readers (lanes of rwarp) */
    uint32_t wline, rline;   /* PTX lines, for reports */
    uint32_t wfence;         /* the writer's EmuRaceThread.pfence at the write: the write is fenced once that has moved on */
    uint32_t acopy;          /* written by a bulk or tensor copy: its EmuAsyncCopy + 1 (0: not, or no longer checked) */
    uint32_t wgen, rgen;     /* the accessing warp's bar.warp.sync generation (EmuBlock.warp_gen) at the write / last read */
    uint32_t rmask;          /* reads by other warps (bit: the warp, < 32) at clock rclk, not ordered before the last warp's, */
    uint32_t rset;           /* and others (at other clocks): a vector of EmuBlock.rsets, by warp (+1; 0: none) */
    uint16_t wwarp, rwarp;   /* the warp (in its cluster: EmuBlock.nvw) of the write / of the last reads, with
                              * EMU_SH_STRONG: the write was an atomic or a strong access / every read since it was one;
                              * EMU_SH_WGMMA (rwarp): the last reads are a wgmma's of the warpgroup whose first warp it
                              * is, made at the wait that retired it (exec_race.c, emu_race_wgmma_read) */
    uint32_t xrev, xrtid;    /* the last read (a wgmma's: at the wait that retires it) in EmuBlock.ev time (0: none),
                              * its thread (UINT32_MAX: several) and PTX line, for a bulk or tensor load that */
    uint32_t xrline;         /* overwrites the byte */
} EmuShadow;

/* Racecheck of the async proxy's shared-memory writes (exec_async.c): the unit's mbarriers get slots (the first
 * EMU_MB_SLOTS; when a unit has more, mb_untracked turns the checks that depend on them off) that count their completed phases; every thread knows which phases
 * of each it has observed (EmuBlock.seen), by its own test_wait / try_wait or through a barrier or mbarrier
 * from a thread that had; the bytes a bulk or tensor copy writes into shared memory name the copy, whose phase
 * a thread must have observed before it touches them. */
enum { EMU_MB_SLOTS = 64 };
typedef struct EmuMbSlot {
    uint32_t idx;                 /* the mbarrier: its index into EmuBlock.shared */
    uint32_t done;                /* phases completed */
    uint32_t done_ev;             /* the EmuBlock.ev event of the last completion */
    uint32_t rel[EMU_MB_SLOTS];   /* what the arrivals of the current phase had observed (done of every slot) */
    uint32_t acq[EMU_MB_SLOTS];   /* the same of the last completed phase: what its waiters learn */
} EmuMbSlot;
/* A release write (racecheck of synchronisation through atomics, exec_mem.c): its location's host address. */
typedef struct EmuRelWrite {
    const uint8_t *at;
    uint32_t thread;
    uint32_t cl;          /* the cluster whose warps its clock vector (EmuBlock.relvc) counts; UINT32_MAX: several */
} EmuRelWrite;
typedef struct EmuAsyncCopy {
    uint32_t slot, phase;         /* completes in that phase (its done count at issue) of that mbarrier slot */
    uint32_t thread, line;        /* issued by, for reports */
    bool cpasync;                 /* a cp.async handed to the mbarrier by cp.async.mbarrier.arrive (else a bulk copy) */
} EmuAsyncCopy;

/* An entry of the global-memory cache (EmuBlock.gc): an allocation's device range and host bytes (lo = hi = 0:
 * empty). */
enum { EMU_GCACHE = 4 };
typedef struct EmuGlobalCache {
    uint64_t lo, hi;
    uint8_t *host;
} EmuGlobalCache;

/* A global-memory instruction's hint (EmuBlock.gh, indexed by EmuIns.ghint): a copy of the cache entry gc it hit
 * last, and lim, the offsets from lo at which its access (of its one size) lies inside [lo, hi): lim = hi - lo - size
 * + 1, or 0 (empty: the entry no access hits).  Filled from gc only, so it holds what gc may (nothing pending,
 * writable); bulk_span empties the hints it empties in gc.  gc's round-robin replacement leaves hints alone: an
 * entry replaced is still a live allocation's (nothing is freed while a launch runs). */
typedef struct EmuGlobalHint {
    uint64_t lo, lim;
    uint8_t *host;
    uint64_t hi;
} EmuGlobalHint;

/* One CTA of the unit a worker runs. */
typedef struct EmuCta {
    uint32_t ctaid[3];
    /* bar.arrive: arrivals at each barrier not yet counted into a completion, and their thread count */
    uint32_t bar_arrived[EMU_MAX_BAR_ID + 1], bar_arrive_count[EMU_MAX_BAR_ID + 1];
    /* barrier.cluster, kept by the cluster's rank 0: arrivals in the current phase, phases completed */
    uint32_t cl_arrived, cl_phase;
    /* threads of the CTA that have not exited: 0 once it has, and its shared memory is gone for the cluster's
     * other CTAs (memcheck of distributed shared memory) */
    uint32_t live;
} EmuCta;

/* A unit of ncta CTAs run together: a cluster (ncl = ncta; one CTA without clusters), or every CTA of a
 * cooperative launch (clusters of ncl = 1).  Their threads one after the other in t (cta_threads each),
 * their shared memories one after the other in shared, smem_stride bytes apart. */
typedef struct EmuBlock {
    EmuLaunch *L;
    EmuCta *cta;
    uint32_t ncta, ncl, cta_threads, cta_warps;
    EmuThread *t;
    uint32_t nthreads;    /* ncta * cta_threads */
    uint64_t *regs;
    uint8_t *shared;
    uint32_t shared_size; /* of one CTA */
    uint32_t smem_stride; /* from one CTA's shared memory to the next in shared: shared_size rounded up to 16 bytes, so that
                           * every CTA's starts aligned as on a GPU (an mbarrier or a vector in another CTA of the cluster) */
    uint8_t *local;       /* the entry's .local memory, local_size bytes per thread */
    uint32_t local_size;  /* the stride: L->f->local_size rounded up to 16 (memcheck bounds the exact size) */
    uint8_t *fparams;     /* the entry's call-sequence .param variables, fparam_size bytes per thread */
    uint32_t fparam_size;
    EmuShadow *shadow;    /* racecheck (a shadow per byte of shared); NULL when off */
    uint32_t *wg_reads;   /* per 16-byte chunk of shared: reads by in-flight wgmmas (NULL until a wgmma) */
    uint64_t wg_reading;  /* their sum: 0 when no wgmma reads shared memory */
    uint64_t round;       /* scheduling rounds of this unit, from 1 */
    /* the last global allocations hit (a kernel streams through several: a, b and c of c = a + b) */
    EmuGlobalCache gc[EMU_GCACHE];
    uint32_t gc_next;     /* the entry the next miss fills */
    EmuGlobalHint *gh;    /* per EmuIns.ghint of the module (L->m->nghints; NULL when none) */
    bool faulted;
    uint64_t icount;
    uint64_t next_check;  /* icount at which run_block looks at the clock and the stop flag again */
    uint64_t block_index; /* linear index of the cluster running (of the block without clusters) */
    uint64_t mbar_events; /* mbarrier state changes (arrivals, tx counts, phases): progress for the deadlock check */
    bool mbar_waits;      /* a thread of the block has waited on an mbarrier (rounds then look for threads to wake) */
    EmuBulkWrite *bulk;   /* pending bulk writes to global memory */
    uint32_t nbulk, capbulk;
    uint64_t bulk_lo, bulk_hi; /* the bytes they span: an allocation that meets them stays out of the cache gc */
    bool in_bulk;         /* a bulk copy's own accesses are under way (its writes not checked against the pending ones) */
    const uint8_t *wval;  /* racecheck: the bytes an st is writing (NULL: unknown), during its emu_access */
    /* A tail access (emu_access): an aligned scalar load or atomic of at most 8 bytes that starts inside a
     * global allocation and runs past its end only because the allocation's size is not a multiple of the
     * access size (the word LLVM's sub-word atomics load and CAS).  emu_access returns buf: the valid bytes,
     * then zeros; a write to the bytes past the end is dropped.  Writes are taken only while tail_write is set
     * (scalar atom/red), whose caller writes the valid bytes back to host itself; vector accesses and plain
     * stores past the end are errors. */
    struct { uint8_t buf[8]; uint8_t *host; unsigned valid; } tail;
    bool tail_write;
    uint32_t *warp_gen;   /* racecheck: bar.warp.syncs completed by each warp (ncta * cta_warps) */
    EmuRaceThread *rt;    /* racecheck: per thread (nthreads) */
    EmuCpAsync *cpa;      /* racecheck: EMU_CPA_MAX per thread, the first EmuRaceThread.ncpa of them pending */
    uint32_t ev;          /* racecheck: synchronisation events (mbarrier phases, barriers) completed so far */
    EmuRelWrite *relw;    /* racecheck: the last release write of each location released in the block (grows) */
    uint32_t nrelw, caprelw;
    EmuBulkWrite *bulkrd; /* shared bytes (indices into shared) that bulk stores to global memory still read */
    uint32_t nbulkrd, capbulkrd;
    EmuMbSlot *mbs;       /* racecheck of the async proxy (NULL when racecheck is off): mbarrier slots, */
    uint32_t nmbs;
    bool mb_untracked;    /* an mbarrier past EMU_MB_SLOTS: orderings may go through it, so no copy-order reports */
    uint32_t *seen;       /* nthreads x EMU_MB_SLOTS phases observed, */
    EmuAsyncCopy *acp;    /* and the copies into shared memory */
    uint32_t nacp, capacp;
    /* racecheck's happens-before (exec_race.c): clock vectors of nvw entries, one per warp of a cluster */
    uint32_t nvw;         /* ncl * cta_warps */
    uint32_t *vc;         /* per warp of the unit: the clock of each warp of its cluster up to which it is ordered after it */
    uint32_t *barvc;      /* per CTA and barrier id: the releases of the barrier's current instance */
    uint32_t *exitvc;     /* per CTA: the releases of its exited threads (which count as arrived at whole-block barriers) */
    uint32_t *clvc;       /* per CTA (a cluster's rank 0): barrier.cluster's releases of the current phase, then of the last completed */
    uint32_t *mbvc;       /* per mbarrier slot: the releases of its current phase, then of its last completed one */
    uint32_t *relvc;      /* per EmuBlock.relw entry: the releases its acquirers learn */
    uint32_t *rsets;      /* the read sets of EmuShadow.rset */
    uint32_t nrsets, caprsets, rsets_free; /* vectors used, allocated, the first free one (+1; its entry 0 the next) */
    uint32_t *relh;       /* open-addressed index of relw by location (entry + 1; 0: empty), caprelh slots (a power of 2) */
    uint32_t caprelh, nrelh; /* nrelh: the relw entries it holds (relw was reset when nrelw differs) */
    uint64_t sh_lo, sh_hi; /* racecheck: the shadow entries [sh_lo, sh_hi) the unit may have changed since it was cleared */
    bool shared_clean;     /* shared is all zeros (a fresh allocation): the next block need not clear it */
    Str out;              /* printf output of the block */
} EmuBlock;

/* ---- float formats and exact rounding (fpconv.c) ---- */
enum { EMU_FMT_F16, EMU_FMT_BF16, EMU_FMT_TF32, EMU_FMT_F32, EMU_FMT_F64 };
/* Round a double to a narrower format with an EmuRnd mode (RN, RZ, RM, RP,
 * RNA; NONE means RN).  Returns the format's bits (TF32: f32 bits with the
 * low 13 bits clear).  ftz flushes subnormal results to signed zero. */
uint64_t emu_round_f64(double x, int fmt, int rnd);
uint64_t emu_round_f64_ftz(double x, int fmt, int rnd, bool ftz);
/* An integer (exact) rounded into a float format (EMU_FMT_F64 too). */
uint64_t emu_round_int(int64_t v, bool is_signed, int fmt, int rnd);
/* The small float formats decoded by bits, inline: they sit in the inner loops of every emulated mma and
 * wgmma.  emu_small_float: sign, biased exponent e (bias `bias`, 0: subnormal) and m of `mb` mantissa
 * bits; infinities and NaNs are the callers'. */
static inline double emu_small_float(bool neg, unsigned e, unsigned m, int bias, int mb) {
    uint64_t u = e ? (uint64_t)(e - bias + 1023) << 52 | (uint64_t)m << (52 - mb) : (uint64_t)(1023 - bias + 1 - mb) << 52;
    double v;
    memcpy(&v, &u, sizeof v);
    if (!e) v *= (double)m; /* m * 2^(1 - bias - mb), exact */
    return neg ? -v : v;
}

static inline double emu_f16_to_f64(uint16_t h) {
    unsigned e = (h >> 10) & 0x1F, m = h & 0x3FF;
    if (e == 31) return m ? (double)NAN : (h & 0x8000) ? -(double)INFINITY : (double)INFINITY;
    return emu_small_float(h & 0x8000, e, m, 15, 10);
}

static inline double emu_bf16_to_f64(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* f8: E4M3FN (bias 7, no infinity, S.1111.111 NaN, max 448) or E5M2 (bias 15, IEEE-like) */
static inline double emu_f8_to_f64(uint8_t b, bool e5m2) {
    bool neg = b >> 7 & 1;
    if (!e5m2) {
        unsigned e = b >> 3 & 15, m = b & 7;
        return e == 15 && m == 7 ? (double)NAN : emu_small_float(neg, e, m, 7, 3);
    }
    unsigned e = b >> 2 & 31, m = b & 3;
    if (e == 31) return m ? (double)NAN : neg ? -(double)INFINITY : (double)INFINITY;
    return emu_small_float(neg, e, m, 15, 2);
}
/* Round to nearest even into f8 with .satfinite: NaN -> 0x7f, beyond the largest finite value
 * (infinities too) -> the largest finite value of that sign. */
uint8_t emu_f64_to_f8_satfinite(double x, bool e5m2);

/* ---- operand helpers ---- */
static inline float emu_f32(uint64_t v) { uint32_t u = (uint32_t)v; float f; memcpy(&f, &u, 4); return f; }
static inline uint64_t emu_bits32(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
/* f16 to f32 by its bits: a normal value's exponent rebiased, a subnormal one m * 2^-24 normalized, an infinity kept
 * and any NaN the canonical one (what emu_f16_to_f64 gives, without the trip through f64). */
static inline float emu_f16_to_f32(uint16_t h) {
    unsigned e = (h >> 10) & 0x1F, m = h & 0x3FF;
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    if (__builtin_expect(e - 1u < 30u, 1)) return emu_f32(sign | (e + 112u) << 23 | (uint32_t)m << 13);
    if (e == 31) return m ? (float)NAN : emu_f32(sign | 0x7F800000u);
    if (!m) return emu_f32(sign); /* +-0 */
    unsigned p = 31 - (unsigned)__builtin_clz(m); /* m * 2^-24, normal in f32: its top bit 2^(p - 24) */
    return emu_f32(sign | (p + 103u) << 23 | ((uint32_t)m << (23 - p) & 0x7FFFFFu));
}
/* emu_f16_to_f32 of four f16 values at once (each in the low 16 bits of its lane), without branches: the same bits
 * (the host's vector unit decodes a tensor-core instruction's operands).  A subnormal m * 2^-24 is 2^-14 (1 + m/1024)
 * less 2^-14, exact in f32. */
typedef uint32_t emu_v4u __attribute__((vector_size(16)));
typedef float emu_v4f __attribute__((vector_size(16)));
static inline emu_v4f emu_f16x4_to_f32(emu_v4u h) {
    const emu_v4u two_m14 = {0x38800000u, 0x38800000u, 0x38800000u, 0x38800000u};
    emu_v4u em = (h & 0x7FFFu) << 13, e = em & 0x0F800000u;
    emu_v4u sub = (emu_v4u)((emu_v4f)(em + two_m14) - (emu_v4f)two_m14);
    emu_v4u is_sub = (emu_v4u)(e == 0), is_spec = (emu_v4u)(e == 0x0F800000u);
    emu_v4u is_nan = is_spec & (emu_v4u)((em & 0x007FE000u) != 0);
    emu_v4u v = ((em + 0x38000000u) & ~is_sub) | (sub & is_sub); /* normal: exponent rebiased 15 -> 127 */
    v = (v & ~is_spec) | (0x7F800000u & is_spec) | (h & 0x8000u) << 16;
    v = (v & ~is_nan) | (0x7FC00000u & is_nan); /* any NaN the canonical one, as (float)NAN */
    return (emu_v4f)v;
}
/* Round to nearest even of an f32 into bf16 or f16 by its bits: the same bits as emu_round_f64((double)x, EMU_FMT_BF16
 * or EMU_FMT_F16, EMU_RND_RN) for every f32 (NaN the canonical 0x7fff, zeros and infinities their sign, overflow to
 * infinity), without the trip through f64 (the tensor-core results, cvt.rn.{bf16,f16}x2.f32).  bf16 is f32's top
 * half: the low half rounds into it, a carry moving into the exponent.  f16: a normal result is the exponent rebiased
 * (127 -> 15) and 13 bits rounded off; below 2^-14 the significand is shifted to units of 2^-24 and rounded there. */
static inline uint32_t emu_f32_to_bf16_rn(float x) {
    uint32_t u = (uint32_t)emu_bits32(x);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FFFu;
    return (u + 0x7FFFu + (u >> 16 & 1)) >> 16;
}
static inline uint32_t emu_f32_to_f16_rn(float x) {
    uint32_t u = (uint32_t)emu_bits32(x), a = u & 0x7FFFFFFFu, sign = u >> 16 & 0x8000u;
    if (a > 0x7F800000u) return 0x7FFFu;
    if (a >= 0x477FF000u) return sign | 0x7C00u; /* 65520 (the largest finite 65504 plus half its quantum) and up */
    if (a >= 0x38800000u) return sign | (a - 0x38000000u + 0xFFFu + (a >> 13 & 1)) >> 13;
    unsigned e = a >> 23; /* |x| < 2^-14: m 2^(e - 150) is m 2^(e - 126) units of 2^-24 */
    if (e < 102) return sign; /* under half a unit (f32 subnormals too) */
    uint32_t m = (a & 0x7FFFFFu) | 0x800000u, shift = 126 - e, n = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    return sign | (n + (rem > half || (rem == half && (n & 1))));
}
/* The cvt fast forms (emu_fast_select; exec_loop.h's handlers), each the bits emu_exec_cvt gives for every source x
 * (test_emu_mma_fast compares them over special and random inputs).  cvt.f32.{bf16,f16}: exact, any NaN the
 * canonical 0x7fffffff. */
static inline uint64_t emu_cvt_f32_half(const EmuIns *in, uint64_t x) {
    uint16_t h = (uint16_t)x;
    if (in->ty2 == EMU_T_BF16) return (h & 0x7FFFu) > 0x7F80u ? 0x7FFFFFFFu : (uint32_t)h << 16;
    float f = emu_f16_to_f32(h);
    return f != f ? 0x7FFFFFFFu : emu_bits32(f);
}
/* cvt.rn.{bf16,f16}.f32: NaN the canonical 0x7fff */
static inline uint64_t emu_cvt_half_f32(const EmuIns *in, uint64_t x) {
    return in->ty == EMU_T_BF16 ? emu_f32_to_bf16_rn(emu_f32(x)) : emu_f32_to_f16_rn(emu_f32(x));
}
/* cvt.{rni,rzi,rmi,rpi}[.ftz].{s32,u32}.f32: .ftz flushes a subnormal source to a zero of its sign, NaN gives 0, the
 * rounded value saturates to the destination's range; an s32 result is sign-extended (as the general path's). */
static inline uint64_t emu_cvt_i32_f32(const EmuIns *in, uint64_t x) {
    float f = emu_f32(x);
    if (f != f) return 0;
    if ((in->flags & EMU_F(FTZ)) && f != 0 && fabsf(f) < 0x1p-126f) f = copysignf(0.0f, f);
    double v = f;
    int rnd = in->rnd;
    v = rnd == EMU_RND_RNI ? nearbyint(v) : rnd == EMU_RND_RMI ? floor(v) : rnd == EMU_RND_RPI ? ceil(v) : trunc(v);
    if (in->ty == EMU_T_S32) return (uint64_t)(int64_t)(v < -0x1p31 ? INT32_MIN : v >= 0x1p31 ? INT32_MAX : (int32_t)v);
    return v <= 0 ? 0 : v >= 0x1p32 ? UINT32_MAX : (uint32_t)v;
}
/* cvt.rn.f32.{s32,u32,s64,u64}: the host's conversion (to nearest even) */
static inline uint64_t emu_cvt_f32_int(const EmuIns *in, uint64_t x) {
    switch (in->ty2) {
    case EMU_T_S32: return emu_bits32((float)(int32_t)x);
    case EMU_T_U32: return emu_bits32((float)(uint32_t)x);
    case EMU_T_S64: return emu_bits32((float)(int64_t)x);
    default: return emu_bits32((float)x);
    }
}
static inline double emu_f64(uint64_t v) { double d; memcpy(&d, &v, 8); return d; }
static inline uint64_t emu_bits64(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }
/* Sign/zero extension of the low `bytes` bytes. */
static inline uint64_t emu_zext(uint64_t v, unsigned bytes) { return bytes >= 8 ? v : v & ((1ull << (bytes * 8)) - 1); }
static inline int64_t emu_sext(uint64_t v, unsigned bytes) {
    if (bytes >= 8) return (int64_t)v;
    unsigned sh = 64 - bytes * 8;
    return (int64_t)(v << sh) >> sh;
}
/* cvt.{rni,rzi,rmi,rpi}.f32.f32: NaN the canonical 0x7fffffff, the rest rounded to an integral value (exact) */
static inline uint64_t emu_cvt_f32_f32i(const EmuIns *in, uint64_t x) {
    float f = emu_f32(x);
    if (f != f) return 0x7FFFFFFFu;
    int rnd = in->rnd;
    return emu_bits32(rnd == EMU_RND_RNI ? nearbyintf(f) : rnd == EMU_RND_RMI ? floorf(f) : rnd == EMU_RND_RPI ? ceilf(f) : truncf(f));
}
/* cvt between integer types without .sat (cvt.u32.u16, cvt.u16.u32, ...): the source extended by its type, then
 * the destination's width sign- or zero-extended by the destination's type */
static inline uint64_t emu_cvt_int_int(const EmuIns *in, uint64_t x) {
    unsigned ss = emu_type_size(in->ty2), ds = emu_type_size(in->ty);
    uint64_t v = emu_type_kind(in->ty2) == EMU_K_S ? (uint64_t)emu_sext(x, ss) : emu_zext(x, ss);
    return emu_type_kind(in->ty) == EMU_K_S ? (uint64_t)emu_sext(v, ds) : emu_zext(v, ds);
}
#define EMU_R(t, in, i) ((t)->r[(in)->o[i]])
/* a*b+c for f16/bf16 operands (decoded to double), rounded to odd at double's 53 bits, so that the one rounding
 * into the 11- or 8-bit format that follows is the fused one (a round-to-odd result of p+2 bits or more rounds
 * again correctly).  The product is exact in double (22 or 16 bits); the sum need not be (a tiny product and a
 * large c span more than 53 bits), so a two-sum gives its error, which sets the odd bit. */
static inline double emu_fma_half(double a, double b, double c) {
    double p = a * b, s = p + c;
    if (!isfinite(s)) return s;
    double bb = s - p, e = (p - (s - bb)) + (c - bb);
    if (e != 0 && !(emu_bits64(s) & 1)) s = nextafter(s, e > 0 ? INFINITY : -INFINITY);
    return s;
}
/* The f16/bf16 arithmetic fast form: {add,sub,mul,fma}[.rn].{f16,bf16,f16x2,bf16x2} without .ftz, .sat, .relu or
 * .oob, each lane (low half first) the bits emu_exec_float's lane gives: exact in double, rounded once to nearest
 * even, a NaN the canonical 0x7fff. */
static inline uint64_t emu_half_lane(unsigned op, bool bf, uint16_t xa, uint16_t xb, uint16_t xc) {
    double a = bf ? emu_bf16_to_f64(xa) : emu_f16_to_f64(xa), b = bf ? emu_bf16_to_f64(xb) : emu_f16_to_f64(xb);
    double v;
    switch (op) {
    case EMU_OP_ADD: v = a + b; break;
    case EMU_OP_SUB: v = a - b; break;
    case EMU_OP_MUL: v = a * b; break;
    default: v = emu_fma_half(a, b, bf ? emu_bf16_to_f64(xc) : emu_f16_to_f64(xc)); break;
    }
    return v != v ? 0x7FFFu : emu_round_f64(v, bf ? EMU_FMT_BF16 : EMU_FMT_F16, EMU_RND_RN) & 0xFFFFu;
}
static inline uint64_t emu_half_arith(const EmuIns *in, uint64_t a, uint64_t b, uint64_t c) {
    bool bf = in->ty == EMU_T_BF16 || in->ty == EMU_T_BF16X2;
    uint64_t lo = emu_half_lane(in->op, bf, (uint16_t)a, (uint16_t)b, (uint16_t)c);
    if (in->ty == EMU_T_F16 || in->ty == EMU_T_BF16) return lo;
    return lo | emu_half_lane(in->op, bf, (uint16_t)(a >> 16), (uint16_t)(b >> 16), (uint16_t)(c >> 16)) << 16;
}
/* a CMP b (EMU_CMP_*) on unsigned integers (zero-extended to 64 bits). */
static inline bool emu_cmp_u(unsigned c, uint64_t a, uint64_t b) {
    switch (c) {
    case EMU_CMP_EQ: return a == b;
    case EMU_CMP_NE: return a != b;
    case EMU_CMP_LT: case EMU_CMP_LO: return a < b;
    case EMU_CMP_LE: case EMU_CMP_LS: return a <= b;
    case EMU_CMP_GT: case EMU_CMP_HI: return a > b;
    case EMU_CMP_GE: case EMU_CMP_HS: return a >= b;
    }
    return false;
}
/* a CMP b (EMU_CMP_*) on integers that a signed 64-bit value holds exactly. */
static inline bool emu_cmp_s(unsigned c, int64_t a, int64_t b) {
    switch (c) {
    case EMU_CMP_EQ: return a == b;
    case EMU_CMP_NE: return a != b;
    case EMU_CMP_LT: case EMU_CMP_LO: return a < b;
    case EMU_CMP_LE: case EMU_CMP_LS: return a <= b;
    case EMU_CMP_GT: case EMU_CMP_HI: return a > b;
    case EMU_CMP_GE: case EMU_CMP_HS: return a >= b;
    }
    return false;
}

/* a CMP b (EMU_CMP_*) on floats (f32 operands compare exactly as doubles): the ordered comparisons are false and
 * the unordered ones (equ ... geu, nan) true when either is NaN. */
static inline bool emu_cmp_f(unsigned c, double a, double b) {
    bool un = a != a || b != b;
    switch (c) {
    case EMU_CMP_EQ: return !un && a == b;
    case EMU_CMP_NE: return !un && a != b;
    case EMU_CMP_LT: return !un && a < b;
    case EMU_CMP_LE: return !un && a <= b;
    case EMU_CMP_GT: return !un && a > b;
    case EMU_CMP_GE: return !un && a >= b;
    case EMU_CMP_EQU: return un || a == b;
    case EMU_CMP_NEU: return un || a != b;
    case EMU_CMP_LTU: return un || a < b;
    case EMU_CMP_LEU: return un || a <= b;
    case EMU_CMP_GTU: return un || a > b;
    case EMU_CMP_GEU: return un || a >= b;
    case EMU_CMP_NUM: return !un;
    case EMU_CMP_NAN: return un;
    }
    return false;
}

/* setp/set combining: cmp result a with bool source c under EMU_MODE_AAND/AOR/AXOR. */
bool emu_boolop(unsigned op, bool a, bool c);

/* ---- executor entry points ---- */
/* Fast-path selector, called by the parser at finalisation. */
uint8_t emu_fast_select(const EmuIns *in, bool entry); /* entry: the instruction is in a kernel (not a .func) */
/* EmuIns.disp of an instruction whose fast form is chosen: 1 + that form without a guard, else 0 (the guard's test
 * first; the interpreter loop's handler table, exec_loop.h) */
uint8_t emu_fast_dispatch(const EmuIns *in);
/* Whether a fast form reads or writes global memory through emu_global (or the hint, cp.async): its instruction
 * gets an EmuIns.ghint at finalisation. */
bool emu_fast_global(uint8_t fast);

/* Report a fault: formats "<what>\n  at <kernel> (PTX line N): <text>\n  by thread
 * (x,y,z) in block (x,y,z)\n<detail>" into the launch error (first one wins)
 * and stops the launch.  Returns false for `return emu_fault(...)`. */
bool emu_fault(EmuBlock *b, const EmuThread *t, const EmuIns *in, const char *what, const char *detail_fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Appends to s where the block's threads are: one line per distinct
 * location (function, PTX line, state) with the threads there (no final
 * newline). */
void emu_block_where(EmuBlock *b, Str *s);
/* Slow-path check of the stop flag, the instruction limit of t (n more
 * instructions) and the launch's deadline; false after emu_fault. */
bool emu_check_budget(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t n);

/* Calls (exec_call.c): call pushes a frame (or runs a builtin such as
 * vprintf) and leaves t->fn, t->r, t->pc at the callee's first
 * instruction; ret pops one, copying the return values back, and leaves
 * them at the instruction after the call.  Both return false after
 * emu_fault. */
bool emu_call(EmuBlock *b, EmuThread *t, const EmuIns *in);
bool emu_ret(EmuBlock *b, EmuThread *t);
/* alloca, stacksave, stackrestore: the current frame's stack of alloca'd local memory. */
bool emu_exec_stack(EmuBlock *b, EmuThread *t, const EmuIns *in);
void emu_stacks_free(EmuBlock *b);
/* Frame 0 of thread t (the entry's registers, locals and call-sequence params in the block). */
EmuFrame emu_frame0(const EmuBlock *b, const EmuThread *t);
/* Host pointer for a param-space access in t's current frame; NULL after emu_fault. */
uint8_t *emu_param(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t addr, unsigned size, bool write);
/* Host pointer for a local-space access (any frame of t's stack); NULL after emu_fault. */
uint8_t *emu_local(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t addr, unsigned size, bool write);

/* Family executors: return false after emu_fault. */
bool emu_exec_int(EmuBlock *b, EmuThread *t, const EmuIns *in);    /* exec_int.c */
bool emu_exec_video(EmuBlock *b, EmuThread *t, const EmuIns *in);  /* exec_video.c */
bool emu_exec_float(EmuBlock *b, EmuThread *t, const EmuIns *in);  /* exec_float.c */
bool emu_exec_cvt(EmuBlock *b, EmuThread *t, const EmuIns *in);    /* exec_float.c */
/* approx.c, the bound mode (EmuOptions.approx): v, the exact result of .approx op (ex2 lg2 sin cos tanh rsqrt,
 * rcp/sqrt .approx, div .approx/.full) on element type ety at operands a, b, moved by the PTX ISA's documented
 * maximum error in a direction hashed from the operands; special values unchanged.  Rounded into ety afterwards. */
double emu_approx_move(unsigned op, unsigned ety, bool ftz, double a, double b, double v);
/* The same for the 20-bit results of rcp/rsqrt.approx.ftz.f64 (bits u): one unit of the 20th mantissa bit. */
uint64_t emu_approx_move_hi32(unsigned op, double a, uint64_t u);
bool emu_exec_mem(EmuBlock *b, EmuThread *t, const EmuIns *in);    /* exec_mem.c */
/* Warp collectives, executed for the `n` lanes `lanes` all stopped at
 * their own instruction of the same op, then each advanced past it (exec_warp.c).  uniform: the caller proved
 * every lane at one instruction of one function at call level 0, in lane order (emu_fire_warp's one-pass
 * cases), which then is not looked at again. */
bool emu_exec_warp(EmuBlock *b, EmuThread **lanes, unsigned n, bool uniform);
/* Fires one complete warp-collective group (or warpgroup collective, or activemask) of global warp gw of the
 * block, if any; *fired says whether one did.  False after a fault. */
bool emu_fire_warp(EmuBlock *b, uint32_t gw, bool *fired);
/* Tensor-core instructions (exec_mma.c), called by emu_exec_warp with the
 * whole warp.  emu_mma_form checks an mma's shape and types (the parser
 * uses it too) and gives its fragment geometry (EmuMmaForm, emu.h; EmuIns.mma keeps the one decoded at load);
 * *why says what is wrong. */
bool emu_mma_form(const EmuIns *in, EmuMmaForm *f, const char **why);
/* The float tensor-core product (exec_mma.c): D = D + A B, A M x K (row stride lda), B K x N (row stride ldb),
 * D M x N (row stride ldd), M a multiple of 4 and N of 8; each D element takes one fmaf per k ascending.
 * On an x86-64 host with FMA3 the host's vector fma does it (the same single rounding, any operands); else
 * when every product is exact in f32 (exact_types: emu_mma_exact_type of A's and B's types, or else
 * emu_mma_products_exact says so) acc + a*b is that fmaf and the host's vector adds run the sums; else fmaf. */
void emu_mma_f32(const float *A, unsigned lda, const float *B, unsigned ldb, float *D, unsigned ldd, unsigned M, unsigned N,
                 unsigned K, bool exact_types);
/* emu_mma_f32 by one path, for the tests that compare them: FMAF the reference (fmaf per element and k), ADD
 * vector adds (only right for exact products), HOST_FMA the host's fma (false, nothing done, without one) */
typedef enum EmuMmaPath { EMU_MMA_FMAF, EMU_MMA_ADD, EMU_MMA_HOST_FMA } EmuMmaPath;
bool emu_mma_f32_by(const float *A, unsigned lda, const float *B, unsigned ldb, float *D, unsigned ldd, unsigned M, unsigned N,
                    unsigned K, EmuMmaPath path);
/* Eight f16 codes at p (16 bytes) times neg into v[0], v[stride], ... v[7 * stride]: emu_f16_to_f32's bits (NaN
 * the canonical one) by the host's F16C (exec_mma.c; wgmma's descriptor operands).  emu_host_f16c() says whether
 * the host has it: without it, emu_f16x8_to_f32_host must not be called. */
bool emu_host_f16c(void);
void emu_f16x8_to_f32_host(const uint8_t *p, float *v, float neg, size_t stride);
/* f16, e4m3, e5m2: any product of two such values (f16 or f8 significands of at most 11 bits, sizes 2^-48 to
 * 2^32) is exact and normal in f32 */
bool emu_mma_exact_type(unsigned ty);
/* Whether every product of an A element and a B element is exact in f32 (bf16 or tf32 values whose
 * products stay in f32's normal range; zeros, infinities and NaNs give what fmaf gives) */
bool emu_mma_products_exact(const float *A, unsigned lda, const float *B, unsigned ldb, unsigned M, unsigned N, unsigned K);
/* A warp-collective instruction's lanes by lane number (exec_mma.c); faults unless the whole warp takes
 * part at one instruction. */
bool emu_full_warp(EmuBlock *b, EmuThread **g, unsigned n, EmuThread *lane[32]);
/* An element of a tensor-core operand as a double: f16, bf16, tf32 (low 13 bits ignored), f32, f64,
 * e4m3, e5m2, s8, u8, s4, u4, b1, s32 (exec_wgmma.c). */
double emu_elem_value(unsigned ty, uint64_t bits);
/* The .aligned collectives: lane[l] is lane l of the whole warp, every lane at `in` (emu_exec_warp checked it by
 * emu_full_warp, or the scheduler proved it); none advanced. */
bool emu_exec_mma(EmuBlock *b, EmuThread **lane, const EmuIns *in);
bool emu_exec_ldmatrix(EmuBlock *b, EmuThread **lane, const EmuIns *in);
bool emu_exec_movmatrix(EmuBlock *b, EmuThread **lane, const EmuIns *in);
/* wmma.load / wmma.store / wmma.mma (exec_wmma.c): the shape's index for a modifier ("m16n16k16"; 0: none),
 * the registers of each operand (load: regs[0] the destination; store: regs[0] the source; mma: D, A, B, C)
 * and mma's A, B, C types; emu_exec_wmma is called by emu_exec_warp with the whole warp. */
typedef struct EmuWmmaForm {
    uint8_t regs[4];
    uint8_t a, b, c;
} EmuWmmaForm;
int emu_wmma_shape(const char *p, uint32_t l);
bool emu_wmma_form(const EmuIns *in, EmuWmmaForm *f, const char **why);
bool emu_exec_wmma(EmuBlock *b, EmuThread **lane, const EmuIns *in);
/* stmatrix (exec_wgmma.c), called by emu_exec_warp with the whole warp, as emu_exec_mma. */
bool emu_exec_stmatrix(EmuBlock *b, EmuThread **lane, const EmuIns *in);
/* elect.sync (exec_async.c), called by emu_exec_warp with the lanes of the member mask. */
bool emu_exec_elect(EmuBlock *b, EmuThread **lanes, unsigned n);

/* ---- sm_90 asynchronous operations (exec_async.c) ---- */
/* The 64-bit mbarrier object in shared memory, the emulator's own encoding:
 *   bits  0..19 pending arrivals of the current phase     bits 20..39 expected arrivals (init count)
 *   bits 40..60 tx-count, signed 21 bits (bytes)           bit  62     initialised (0 after .inval)
 *   bit  63     parity of the current phase */
enum { EMU_MBAR_EXEC_DONE, EMU_MBAR_EXEC_FAULT, EMU_MBAR_EXEC_BLOCK, EMU_MBAR_EXEC_YIELD };
/* Runs an mbarrier instruction for thread t: DONE (pc advances), FAULT (after emu_fault),
 * BLOCK (try_wait of a phase not complete: t waits in EMU_TS_MBAR, pc stays), YIELD
 * (test_wait returned false: pc advances, t yields). */
int emu_exec_mbarrier(EmuBlock *b, EmuThread *t, const EmuIns *in);
/* Whether the phase of parity `parity` of the mbarrier at shared address addr has completed. */
bool emu_mbarrier_phase_done(const EmuBlock *b, uint32_t addr, unsigned parity);
/* Adds tx bytes completed (negative: expected) to the mbarrier at addr, completing its phase when
 * its arrivals and tx-count reach zero; false after emu_fault. */
bool emu_mbarrier_tx(EmuBlock *b, EmuThread *t, const EmuIns *in, uint32_t addr, int64_t bytes, bool arrive, uint32_t count);
/* cp.async.bulk and cp.async.bulk.tensor: copies done at issue. */
bool emu_exec_bulk(EmuBlock *b, EmuThread *t, const EmuIns *in);
/* cp.async.bulk.commit_group / wait_group[.read] N: a wait without .read retires the thread's pending bulk
 * writes but those of its N most recent groups. */
void emu_bulk_commit(EmuThread *t);
void emu_bulk_wait(EmuBlock *b, EmuThread *t, const EmuIns *in);
/* An access to global memory that a pending bulk write covers: false after emu_fault. */
bool emu_bulk_check(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t addr, unsigned size, bool write);
/* A write to shared bytes [idx, idx + size) (indices into shared) that a bulk store still reads: false after
 * emu_fault (called while b->nbulkrd). */
bool emu_bulk_src_check(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t idx, uint64_t size);
/* Racecheck of the async proxy (b->mbs set): reset for a new unit (also clears the bulk sources); a barrier
 * completing among threads [lo, hi) (those waiting at bar id; id < 0: all of them), which then know what each
 * knew; a generic access by t to shared byte idx, which a bulk or tensor copy wrote (s->acopy); the async proxy
 * reading [idx, idx + size) for t's instruction `who` (wgmma: for the warpgroup [lo, hi)), which needs the
 * generic writes before it ordered and fenced (fence.proxy.async) and the copies' phases observed.  False
 * after emu_fault. */
void emu_async_reset(EmuBlock *b);
void emu_async_barrier(EmuBlock *b, uint32_t lo, uint32_t hi, int id);
bool emu_async_access(EmuBlock *b, EmuThread *t, const EmuIns *in, EmuShadow *s, uint64_t idx, bool write);
bool emu_async_read(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t idx, uint64_t size, uint32_t lo, uint32_t hi,
                    const char *who);
/* ---- racecheck of shared memory (exec_race.c) ---- */
/* With racecheck on (b->shadow): the clock vectors' memory for the worker's units, and the reset for each. */
bool emu_race_alloc(EmuBlock *b);
void emu_race_free(EmuBlock *b);
void emu_race_reset(EmuBlock *b);
/* t's access of shared bytes [idx, idx + size) (indices into b->shared), checked against their shadow and
 * recorded; false after emu_fault. */
bool emu_race_check(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t idx, unsigned size, bool write);
/* Records the shared bytes [idx, idx + size) as read by t now, on PTX line `line` (an asynchronous read that
 * ends here: a bulk store's source at the wait that retires it), for later writes to be checked against. */
void emu_race_read_note(EmuBlock *b, EmuThread *t, uint64_t idx, uint64_t size, uint32_t line);
void emu_race_wgmma_wait(EmuBlock *b, uint32_t first);
void emu_race_wgmma_read(EmuBlock *b, uint32_t first, uint64_t idx, uint64_t size, uint32_t line);
/* Shadow entries [idx, idx + size) are about to change: run_block clears only what a unit touched. */
static inline void emu_race_touch(EmuBlock *b, uint64_t idx, uint64_t size) {
    if (idx < b->sh_lo) b->sh_lo = idx;
    if (idx + size > b->sh_hi) b->sh_hi = idx + size;
}
/* cp.async by t wrote shared bytes [idx, idx + size): they are pending until retired (EmuCpAsync). */
void emu_race_cp_async(EmuBlock *b, EmuThread *t, uint64_t idx, unsigned size);
/* cp.async.commit_group; cp.async.wait_group keep (all but the keep most recent committed groups land, at t's
 * clock now; uncommitted: every copy lands).  cp.async.wait_all is commit_group and wait_group 0. */
void emu_race_cp_async_commit(EmuBlock *b, EmuThread *t);
void emu_race_cp_async_wait(EmuBlock *b, EmuThread *t, int64_t keep, bool uncommitted);
/* Racecheck forgets what it knew of bytes [idx, idx + size) (a copy or tensormap.replace rewrote them); acopy: the
 * copy that wrote them now (EmuShadow.acopy; 0: none followed). */
void emu_race_forget(EmuBlock *b, uint64_t idx, uint64_t size, uint32_t acopy);
/* t releases what its warp's accesses so far into acc (nvw entries), and counts the release; t's warp
 * acquires acc (its later accesses are ordered after what acc holds); acquire_all: after every access of
 * every thread of t's cluster so far, for a synchronisation the vectors do not follow. */
void emu_race_release(EmuBlock *b, EmuThread *t, uint32_t *acc);
void emu_race_acquire(EmuBlock *b, EmuThread *t, const uint32_t *acc);
void emu_race_acquire_all(EmuBlock *b, EmuThread *t);
/* bar.warp.sync of lanes g: their clocks become equal (the latest). */
void emu_race_warp_sync(EmuBlock *b, EmuThread **g, unsigned n);
/* A release write by t at host address at (rmw: an atomic read-modify-write, which joins the release
 * sequence); an acquire read there. */
void emu_race_release_at(EmuBlock *b, EmuThread *t, const uint8_t *at, bool rmw);
void emu_race_acquire_at(EmuBlock *b, EmuThread *t, const uint8_t *at);
/* The PTX memory model's fence patterns: a fence followed by a strong write releases (emu_race_strong: what the
 * thread did before the write), a strong read followed by a fence acquires (emu_race_fence: the last strong read
 * of a location a release wrote). */
void emu_race_fence(EmuBlock *b, EmuThread *t);
void emu_race_strong(EmuBlock *b, EmuThread *t, const uint8_t *at, bool read, bool write, bool rmw);
/* Whether the accesses of thread `thread` from now on are ordered after an access at clock clk by warp
 * `warp` (an index in the cluster, EmuShadow.wwarp). */
bool emu_race_ordered(const EmuBlock *b, uint32_t thread, uint16_t warp, uint32_t clk);
/* The vectors of barrier id of CTA cta, of barrier.cluster of the cluster whose rank 0 is cta (+ nvw: the
 * last completed phase's), of the exited threads of CTA cta, of mbarrier slot s (+ nvw: its last completed
 * phase's). */
static inline uint32_t *emu_race_bar(const EmuBlock *b, uint32_t cta, unsigned id) {
    return b->barvc + ((size_t)cta * (EMU_MAX_BAR_ID + 1) + id) * b->nvw;
}
static inline uint32_t *emu_race_cl(const EmuBlock *b, uint32_t cta) { return b->clvc + (size_t)cta * 2 * b->nvw; }
static inline uint32_t *emu_race_exited(const EmuBlock *b, uint32_t cta) { return b->exitvc + (size_t)cta * b->nvw; }
static inline uint32_t *emu_race_mb(const EmuBlock *b, uint32_t s) { return b->mbvc + (size_t)s * 2 * b->nvw; }

/* old op= v (atom's arithmetic: .add .inc .dec .min .max .exch .cas (c: the new value) .and .or .xor on ty);
 * *bad when the combination has no meaning (min/max of floats) */
uint64_t emu_atom_apply(unsigned mode, unsigned ty, uint64_t old, uint64_t v, uint64_t c, bool *bad); /* exec_mem.c */
uint64_t emu_add_f32_ftz(uint64_t old, uint64_t v); /* exec_mem.c: global .add.f32, subnormals flushed */
bool emu_exec_cp_async_mbar(EmuBlock *b, EmuThread *t, const EmuIns *in); /* cp.async.mbarrier.arrive */
bool emu_exec_st_async(EmuBlock *b, EmuThread *t, const EmuIns *in);      /* st.async, red.async (exec_async.c) */
bool emu_exec_tensormap(EmuBlock *b, EmuThread *t, const EmuIns *in); /* tensormap.replace, tensormap.cp_fenceproxy */
/* Warpgroup collectives (wgmma.*, setmaxnreg): the 128 threads of one warpgroup, by rank in it. */
bool emu_is_warpgroup_op(unsigned op);
bool emu_exec_warpgroup(EmuBlock *b, EmuThread **wg);
/* The wgmma form of in (parse-time check too; exec_wgmma.c; EmuWgmmaForm in emu.h, EmuIns.wgmma keeps the one
 * decoded at load). */
bool emu_wgmma_form(const EmuIns *in, EmuWgmmaForm *f, const char **why);
/* A register access of t's instruction in that touches an accumulator of an in-flight wgmma:
 * emu_fault naming the register and the wgmma; false then. */
bool emu_wgmma_check_access(EmuBlock *b, EmuThread *t, const EmuIns *in);
/* Whether emu_wgmma_check_access has anything to do for instruction pc of t's function: false when it is the
 * kernel's code, no A register is held and none of the instruction's registers lies within the bounds of the slots
 * in flight (the interpreter then skips the call: it runs for every instruction while results are in flight). */
static inline bool emu_wgmma_may_touch(const EmuBlock *b, const EmuThread *t, uint32_t pc) {
    const EmuLaunch *L = b->L;
    const EmuWgState *w = t->wg;
    if (w->nap || t->fn != L->f || !L->wg_span) return true;
    return w->n && L->wg_span[2 * pc] <= w->hi && L->wg_span[2 * pc + 1] >= w->lo;
}
/* For a kernel f that uses wgmma, the registers each instruction names, as emu_wgmma_check_access looks them up
 * (*at: f->ncode + 1 offsets into *slots; *span: per instruction the lowest and highest of them that a wgmma of f
 * writes as D, the only slots ever in flight: constants, special registers and the rest never are; lowest >
 * highest when none); false (all NULL) when f has no wgmma or there is no memory, and the
 * check finds them itself. */
bool emu_wgmma_slot_table(const EmuFunc *f, uint32_t **at, uint32_t **slots, uint32_t **span);
/* A call or ret by t (its instruction in): every wgmma group of the thread in flight ends now, into the
 * registers of the frame it leaves (ptxas serializes wgmma at function boundaries: info C7510), so no
 * result of one frame reaches another's registers; false after emu_fault (an A register changed). */
bool emu_wgmma_frame_end(EmuBlock *b, EmuThread *t, const EmuIns *in);
/* Whether an instruction writes its first operand (a register or a vector of them; parse_check.c). */
bool emu_writes_first(const EmuIns *in);
void emu_wg_reset(EmuThread *t);
void emu_wg_free(EmuThread *t);
/* A write by t's instruction in of shared bytes [idx, idx + size) (an index into b->shared): an
 * emu_fault when a wgmma that no wait has retired reads one of them; false then. */
bool emu_wgmma_smem_write(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t idx, uint64_t size);

/* Member mask operand of a warp-collective instruction. */
uint32_t emu_warp_mask(const EmuThread *t, const EmuIns *in);

/* Shared memory of the cluster (exec_mem.c): the index into b->shared of the shared address addr (32 bits;
 * EMU_DSMEM_TAG) of thread t, if [addr, addr + size) lies in the shared memory of one CTA; false if not. */
bool emu_smem_index(const EmuBlock *b, const EmuThread *t, uint64_t addr, uint64_t size, uint64_t *idx);
/* Whether the CTA whose shared memory index idx (of address addr) lies in is still running; if it has exited (a
 * distributed-shared-memory access after its threads all ended) stops the launch with what and false. */
bool emu_smem_live(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t addr, uint64_t idx, const char *what);
/* Text naming shared-memory index idx for reports: "address 0x.." (in its CTA's shared memory), with the CTA's
 * rank in a cluster. */
const char *emu_smem_name(const EmuBlock *b, uint64_t idx, char *buf, size_t cap);
/* The unit index of rank 0 of t's cluster. */
static inline uint32_t emu_cl_base(const EmuBlock *b, const EmuThread *t) { return t->cta - t->cta % b->ncl; }
/* The thread's own CTA's shared memory. */
static inline uint8_t *emu_cta_smem(const EmuBlock *b, const EmuThread *t) { return b->shared + (size_t)t->cta * b->smem_stride; }

/* Memory (exec_mem.c): host pointer for `size` bytes at `addr` in `space`,
 * checked (bounds, alignment `align`); NULL after emu_fault.  A tail access gives b->tail.buf (above). */
uint8_t *emu_access(EmuBlock *b, EmuThread *t, const EmuIns *in, unsigned space, uint64_t addr, unsigned size,
                    unsigned align, bool write);

/* emu_global past the instruction's hint (exec_mem.c): the cache gc, else the checked path; either way the
 * allocation hit, when cacheable, becomes the hint. */
uint8_t *emu_global_miss(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t addr, unsigned size, bool write);
/* Its first step: the host bytes of an aligned access of size bytes at addr in an allocation of gc, which becomes
 * in's hint; NULL (nothing reported) when addr is misaligned or in none. */
uint8_t *emu_global_cached(EmuBlock *b, const EmuIns *in, uint64_t addr, unsigned size);

/* Fast global access of `size` bytes (4, 8 or 16, the same at every execution of in): the allocation in's
 * hint names (an address below lo wraps off to above lim: one compare for both ends), else emu_global_miss.
 * Streaming kernels hit three or more allocations in turn (a, b and c of c = a + b), each instruction the same
 * one every time: one entry to look at, where walking gc took up to four. */
static inline uint8_t *emu_global(EmuBlock *b, EmuThread *t, const EmuIns *in, uint64_t addr, unsigned size, bool write) {
    const EmuGlobalHint *h = &b->gh[in->ghint];
    uint64_t off = addr - h->lo;
    if (off < h->lim && !(addr & (size - 1))) return h->host + off;
    return emu_global_miss(b, t, in, addr, size, write);
}

#endif
