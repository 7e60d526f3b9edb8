/* aot_table.c - the tables through which `tile aot`'s launchers load their kernels.
 *
 * The C that `tile aot` writes includes no header but tile.h (itself only <stddef.h> and <stdint.h>), so
 * that a kernel or parameter may carry any name the C library or a system header also uses; what it needs
 * of locking and memory lives here.  Per variant of a kernel the generated file holds one tile_aot_table
 * in static storage, zero-initialized.  tile_aot_table_kernel:
 *   1. the table's state (a mutex and the slots) is made on first use and published with one
 *      compare-and-swap, so two threads' first calls agree on one;
 *   2. under its mutex, a slot whose context was destroyed (its tile_context_id changed: the module went
 *      with the context) is emptied; the slot of ctx answers;
 *   3. otherwise the PTX is loaded into ctx and its kernel looked up, into the first empty slot (the
 *      slots grow by 8 when none is free); the slot keeps ctx's id, so that a new context at a destroyed
 *      one's address never takes its kernel.
 * tile_aot_table_release unloads what the table loaded into one context.  The state lives as long as the
 * process (the table is a static of the program), reachable from the table. */
#include "include/tile/tile.h"
#include "runtime/rt.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

typedef struct AotSlot {
    tile_context *ctx;
    uint64_t id;
    tile_module *mod;
    tile_kernel *kernel;
} AotSlot;

typedef struct AotTable {
    pthread_mutex_t lock;
    AotSlot *s;
    int n;
} AotTable;

/* 1. the state of t, made on first use; NULL when out of memory */
static AotTable *aot_table_state(tile_aot_table *t) {
    AotTable *a = __atomic_load_n((AotTable **)&t->impl, __ATOMIC_ACQUIRE);
    if (a) return a;
    AotTable *fresh = calloc(1, sizeof *fresh);
    if (!fresh) return NULL;
    if (pthread_mutex_init(&fresh->lock, NULL)) {
        free(fresh);
        return NULL;
    }
    void *seen = NULL;
    if (__atomic_compare_exchange_n(&t->impl, &seen, (void *)fresh, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return fresh;
    pthread_mutex_destroy(&fresh->lock); /* another thread's came first */
    free(fresh);
    return seen;
}

tile_status tile_aot_table_kernel(tile_aot_table *t, const char *ptx, const char *name, tile_context *ctx, tile_kernel **out) {
    if (out) *out = NULL; /* cleared before any check, the context's included: a failed call leaves no earlier value */
    uint64_t id = tile_context_id(ctx);
    if (!id) /* no live context: the message names `name`, the launcher the user called (its kernel's name, or
              * the C name a launcher exported under another passes on this path) */
        return rt_no_context(name ? name : "tile_aot_table_kernel", ctx);
    if (!t || !ptx || !name || !out)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_aot_table_kernel: %s is NULL", !t ? "table" : !ptx ? "ptx" : !name ? "name" : "out");
    AotTable *a = aot_table_state(t);
    if (!a) return TILE_ERROR_OUT_OF_MEMORY;
    tile_status st = TILE_OK;
    pthread_mutex_lock(&a->lock);
    AotSlot *slot = NULL;
    for (int i = 0; i < a->n; i++) { /* 2. */
        AotSlot *s = &a->s[i];
        if (s->ctx && tile_context_id(s->ctx) != s->id) *s = (AotSlot){0}; /* its context was destroyed */
        if (s->ctx == ctx) {
            *out = s->kernel;
            pthread_mutex_unlock(&a->lock);
            return TILE_OK;
        }
        if (!s->ctx && !slot) slot = s;
    }
    if (!slot) { /* 3. */
        AotSlot *grown = realloc(a->s, (size_t)(a->n + 8) * sizeof *grown);
        if (grown) {
            for (int i = a->n; i < a->n + 8; i++) grown[i] = (AotSlot){0};
            slot = &grown[a->n];
            a->s = grown;
            a->n += 8;
        }
    }
    if (!slot) st = TILE_ERROR_OUT_OF_MEMORY;
    else if ((st = tile_module_load_ptx(ctx, ptx, &slot->mod)) == TILE_OK) {
        if ((st = tile_module_get_kernel(slot->mod, name, &slot->kernel)) == TILE_OK) {
            slot->ctx = ctx;
            slot->id = id;
            *out = slot->kernel;
        } else {
            tile_module_unload(slot->mod);
            *slot = (AotSlot){0};
        }
    }
    pthread_mutex_unlock(&a->lock);
    return st;
}

void tile_aot_table_release(tile_aot_table *t, tile_context *ctx) {
    AotTable *a = t ? __atomic_load_n((AotTable **)&t->impl, __ATOMIC_ACQUIRE) : NULL;
    if (!a) return; /* nothing was ever loaded through it */
    pthread_mutex_lock(&a->lock);
    for (int i = 0; i < a->n; i++)
        if (a->s[i].ctx == ctx) {
            tile_module_unload(a->s[i].mod);
            a->s[i] = (AotSlot){0};
        }
    pthread_mutex_unlock(&a->lock);
}
