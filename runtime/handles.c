/* handles.c - the registry of live API handles.
 *
 * Every tile_context, tile_module, tile_kernel, tile_stream and tile_event
 * the runtime hands out is entered here when it is made and removed before
 * its memory is freed.  An API call first asks the registry whether the
 * pointer it was given is a live handle of the expected kind, and only then
 * reads through it: a garbage pointer, a handle of another kind, or one that
 * was destroyed (context destroyed twice, module unloaded twice, a kernel of
 * an unloaded module, a stream of a destroyed context) is answered with
 * TILE_ERROR_INVALID_VALUE and never dereferenced.
 *
 * The registry is process-wide (handles cross contexts: a stream of another
 * context must be recognised as one): an open-addressing hash set of
 * addresses with their kind, linear probing, tombstones, grown at half load,
 * under one reader-writer lock (lookups, the hot path of tile_launch, take
 * it shared).  A rehash drops the tombstones and sizes the table for the
 * live handles, so it never grows with the number of handles ever made.  A handle whose memory is reused by a new handle of the same
 * kind is that new handle, as with any pointer-based API. */
#include "runtime/handles.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

enum { EMPTY = 0, TOMB = 0xff };

typedef struct Slot {
    uintptr_t addr;
    uint8_t kind; /* EMPTY, TOMB, or HandleKind + 1 */
} Slot;

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static Slot *slots;
static size_t cap, used; /* used counts live entries and tombstones */

static size_t hash(uintptr_t a) {
    uint64_t x = (uint64_t)a;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x;
}

static Slot *find(uintptr_t a) {
    if (!cap) return NULL;
    for (size_t i = hash(a) & (cap - 1), n = 0; n < cap; i = (i + 1) & (cap - 1), n++) {
        if (slots[i].kind == EMPTY) return NULL;
        if (slots[i].kind != TOMB && slots[i].addr == a) return &slots[i];
    }
    return NULL;
}

/* Write lock held.  Rehash into a table sized for the live entries alone (at most a quarter full
 * afterwards): tombstones are dropped, so a process that makes and destroys handles for ever
 * (a context per request, an event per step) keeps a table the size of what is live, not of
 * everything it ever made. */
static bool grow(void) {
    size_t live = 0;
    for (size_t i = 0; i < cap; i++) live += slots[i].kind != EMPTY && slots[i].kind != TOMB;
    size_t ncap = 64;
    while (ncap < (live + 1) * 4) ncap *= 2;
    Slot *ns = calloc(ncap, sizeof *ns);
    if (!ns) return false;
    size_t nused = 0;
    for (size_t i = 0; i < cap; i++) {
        if (slots[i].kind == EMPTY || slots[i].kind == TOMB) continue;
        size_t j = hash(slots[i].addr) & (ncap - 1);
        while (ns[j].kind != EMPTY) j = (j + 1) & (ncap - 1);
        ns[j] = slots[i];
        nused++;
    }
    free(slots);
    slots = ns;
    cap = ncap;
    used = nused;
    return true;
}

bool handle_add(const void *p, HandleKind kind) {
    uintptr_t a = (uintptr_t)p;
    pthread_rwlock_wrlock(&lock);
    bool ok = true;
    Slot *s = find(a);
    if (s) s->kind = (uint8_t)(kind + 1);
    else if ((used + 1) * 2 > cap && !grow()) ok = false;
    else {
        size_t i = hash(a) & (cap - 1);
        while (slots[i].kind != EMPTY && slots[i].kind != TOMB) i = (i + 1) & (cap - 1);
        if (slots[i].kind == EMPTY) used++;
        slots[i] = (Slot){a, (uint8_t)(kind + 1)};
    }
    pthread_rwlock_unlock(&lock);
    return ok;
}

void handle_remove(const void *p) {
    pthread_rwlock_wrlock(&lock);
    Slot *s = find((uintptr_t)p);
    if (s) s->kind = TOMB;
    pthread_rwlock_unlock(&lock);
}

size_t handle_table_slots(void) {
    pthread_rwlock_rdlock(&lock);
    size_t n = cap;
    pthread_rwlock_unlock(&lock);
    return n;
}

bool handle_live(const void *p, HandleKind kind) {
    if (!p) return false;
    pthread_rwlock_rdlock(&lock);
    Slot *s = find((uintptr_t)p);
    bool live = s && s->kind == kind + 1;
    pthread_rwlock_unlock(&lock);
    return live;
}
