/* interrupter.h - a thread that calls tile_context_interrupt every period_ms (20 when 0) until done is set.
 * A request stops only a launch running at the time, so the thread repeats it until the launch it means has
 * returned (as the Python package does). */
#ifndef TILE_TEST_INTERRUPTER_H
#define TILE_TEST_INTERRUPTER_H

#include <criterion/criterion.h>
#include <stdatomic.h>
#include <time.h>

#include "include/tile/tile.h"

typedef struct Interrupter {
    tile_context *ctx;
    _Atomic int done;
    int period_ms;
} Interrupter;

static void *interrupt_until_done(void *p) {
    Interrupter *in = p;
    struct timespec ts = {0, (in->period_ms ? in->period_ms : 20) * 1000000L};
    while (!atomic_load(&in->done)) {
        nanosleep(&ts, NULL);
        cr_expect_eq(tile_context_interrupt(in->ctx), TILE_OK);
    }
    return NULL;
}

#endif
