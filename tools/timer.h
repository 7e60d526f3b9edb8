/* timer.h - wall-clock and device timing for `tile run` and `tile tune`.
 *
 * timer_now() is the host's monotonic clock.  A Timer times one run for the
 * tuner: two events recorded around it on the default stream (the device's
 * own clock, no host overhead), or the host clock around tile_synchronize
 * when events cannot be created. */
#ifndef TILE_TOOLS_TIMER_H
#define TILE_TOOLS_TIMER_H

#include "include/tile/tile.h"

double timer_now(void); /* seconds, monotonic */
/* The median of v[0..n) (n >= 1); sorts v. */
double timer_median(double *v, int n);

typedef struct Timer {
    tile_context *ctx;
    tile_event start, end; /* NULL: the host clock */
    double t0;
} Timer;

void timer_init(Timer *t, tile_context *ctx);
void timer_start(Timer *t);
double timer_stop(Timer *t); /* seconds since timer_start */
void timer_free(Timer *t);

#endif
