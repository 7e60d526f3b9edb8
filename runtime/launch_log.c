/* launch_log.c - the last launches of a context that no synchronization has yet shown to have finished, so that
 * a kernel's fault, which a GPU reports only at a later call (the driver's sticky error at the next synchronize,
 * copy or launch: "an illegal memory access was encountered", naming no kernel), names the launches that could
 * have caused it.
 *
 *   1. Each launch the device accepted is recorded in its context's ring of RT_LAUNCH_LOG slots: the kernel's
 *      name (copied from the kernel's padded copy, tile_kernel.log_name: the kernel may be unloaded before the
 *      fault surfaces), the shipped call that made it (tile_gemm, ...; a string that lives as long as the
 *      process), the grid and the tile_stream.  No allocation and no lock, since the launch path's cost is a goal:
 *      a launch takes its number from an atomic counter and writes slot number % RT_LAUNCH_LOG under the slot's
 *      sequence word (a seqlock: odd while being written, 2 * (number + 1) once written), every field with relaxed
 *      atomic stores, so a reader on another thread never takes a half-written slot.  A slot another launch is
 *      still writing (RT_LAUNCH_LOG launches begun since) is left to it: that launch goes unrecorded, which the
 *      reader notices as a missing number.
 *   2. A successful synchronization moves a mark to the number the next launch had when it began: tile_synchronize
 *      the context's (every stream), tile_stream_synchronize its stream's, a tile_memcpy_dtoh the default stream's
 *      (the legacy default stream's copy waits for its earlier work).  Recording after the device took the launch
 *      makes that sound: a launch numbered below the mark was submitted before the synchronization began, so the
 *      synchronization waited for it.  A launch is a candidate while its number is at or past both its stream's
 *      mark and the context's.
 *   3. A device error that says a kernel faulted (DEV_ERR_FAULT: rt_dev_error) gets the candidates appended,
 *      oldest first: "; after launch of 'k' (tile_gemm, grid 4,2,1)", "; after one of the last 3 launches: ...", or,
 *      when launches since the mark are missing from the ring (more than RT_LAUNCH_LOG, or unrecorded), "; after
 *      one of the launches since the last synchronization, the last 8 recorded: ...".  Streams are named only when
 *      the candidates ran on more than one. */
#include "runtime/rt_state.h"

#include <stdio.h>
#include <string.h>

#define LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)

void rt_launch_log_name(uint64_t out[RT_LAUNCH_NAME_WORDS], const char *name) {
    char *c = (char *)out;
    size_t cap = RT_LAUNCH_NAME_WORDS * sizeof *out, n = strlen(name);
    memset(out, 0, cap);
    if (n < cap) memcpy(c, name, n);
    else snprintf(c, cap, "%.*s...", (int)(cap - 4), name); /* truncated, and says so */
}

void rt_launch_log_add(RtLaunchLog *log, const uint64_t name[RT_LAUNCH_NAME_WORDS], const char *call, const unsigned grid[3],
                       tile_stream stream) {
    uint64_t n = atomic_fetch_add_explicit(&log->next, 1, memory_order_relaxed);
    RtLaunchSlot *s = &log->slot[n % RT_LAUNCH_LOG];
    uint64_t seq = atomic_load_explicit(&s->seq, memory_order_relaxed);
    if ((seq & 1) || !atomic_compare_exchange_strong_explicit(&s->seq, &seq, seq | 1, memory_order_relaxed, memory_order_relaxed))
        return; /* another launch is writing this slot */
    atomic_thread_fence(memory_order_release); /* the odd sequence before the fields */
    for (int i = 0; i < RT_LAUNCH_NAME_WORDS; i++) STORE(&s->name[i], name[i]);
    STORE(&s->call, call);
    STORE(&s->stream, stream);
    STORE(&s->grid[0], grid[0]);
    STORE(&s->grid[1], grid[1]);
    STORE(&s->grid[2], grid[2]);
    atomic_store_explicit(&s->seq, 2 * (n + 1), memory_order_release);
}

uint64_t rt_launch_log_begin(RtLaunchLog *log) { return atomic_load_explicit(&log->next, memory_order_relaxed); }

void rt_launch_log_synced(_Atomic uint64_t *mark, uint64_t begin) {
    uint64_t m = atomic_load_explicit(mark, memory_order_relaxed);
    while (m < begin && !atomic_compare_exchange_weak_explicit(mark, &m, begin, memory_order_relaxed, memory_order_relaxed)) {
    }
}

/* A slot read whole, or false (never written, or being written while read). */
typedef struct Entry {
    uint64_t n;
    uint64_t name[RT_LAUNCH_NAME_WORDS];
    const char *call;
    tile_stream stream;
    unsigned grid[3];
} Entry;

static bool slot_read(RtLaunchSlot *s, Entry *e) {
    uint64_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
    if (!seq || (seq & 1)) return false;
    for (int i = 0; i < RT_LAUNCH_NAME_WORDS; i++) e->name[i] = LOAD(&s->name[i]);
    e->call = LOAD(&s->call);
    e->stream = LOAD(&s->stream);
    for (int i = 0; i < 3; i++) e->grid[i] = LOAD(&s->grid[i]);
    atomic_thread_fence(memory_order_acquire); /* the fields before the second look at the sequence */
    if (atomic_load_explicit(&s->seq, memory_order_relaxed) != seq) return false;
    e->n = seq / 2 - 1;
    ((char *)e->name)[sizeof e->name - 1] = 0;
    return true;
}

void rt_launch_log_describe(RtLaunchLog *log, _Atomic uint64_t *default_synced, Str *out) {
    uint64_t synced = atomic_load_explicit(&log->synced, memory_order_relaxed);
    uint64_t next = atomic_load_explicit(&log->next, memory_order_relaxed);
    Entry e[RT_LAUNCH_LOG];
    int n = 0, present = 0; /* candidates; slots numbered since the context's mark, candidates or not */
    for (int i = 0; i < RT_LAUNCH_LOG; i++) {
        Entry x;
        if (!slot_read(&log->slot[i], &x) || x.n < synced) continue;
        present++;
        _Atomic uint64_t *mark = x.stream ? &x.stream->synced : default_synced;
        if (x.n < atomic_load_explicit(mark, memory_order_relaxed)) continue;
        int j = n++;
        for (; j > 0 && e[j - 1].n > x.n; j--) e[j] = e[j - 1]; /* oldest first */
        e[j] = x;
    }
    bool missing = next > synced && next - synced > (uint64_t)present;
    if (!n) {
        str_puts(out, missing ? "; no launch of this context recorded since its last synchronization"
                              : "; no launch of this context since its last synchronization (another library's kernel on the same "
                                "CUDA context?)");
        return;
    }
    bool streams = false;
    for (int i = 1; i < n; i++) streams |= e[i].stream != e[0].stream;
    if (missing) str_printf(out, "; after one of the launches since the last synchronization, the last %d recorded: ", n);
    else if (n == 1) str_puts(out, "; after launch of ");
    else str_printf(out, "; after one of the last %d launches: ", n);
    for (int i = 0; i < n; i++) {
        str_printf(out, "%s'%s' (", i ? ", " : "", (const char *)e[i].name);
        if (e[i].call) str_printf(out, "%s, ", e[i].call);
        str_printf(out, "grid %u,%u,%u", e[i].grid[0], e[i].grid[1], e[i].grid[2]);
        if (streams && e[i].stream) str_printf(out, ", stream %p", (void *)e[i].stream);
        else if (streams) str_puts(out, ", default stream");
        str_puts(out, ")");
    }
}
