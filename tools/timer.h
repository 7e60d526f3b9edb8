/* timer.h - wall-clock and device timing for `tile run` and `tile tune`.
 *
 * timer_now() is the host's monotonic clock.  A Timer times one run for the
 * tuner: two events recorded around it on the default stream (the device's
 * own clock, no host overhead), or the host clock around tile_synchronize
 * when events cannot be created.
 *
 * `tile run` times every command alike: the first call (which compiles or
 * loads its kernels), then the median of --reps calls, each on the host
 * clock with the call synchronized (timer_call, timer_reps), and reports
 * both in the same two lines (timer_print_first, timer_print_next). */
#ifndef TILE_TOOLS_TIMER_H
#define TILE_TOOLS_TIMER_H

#include "include/tile/tile.h"
#include "tools/json.h"

#include <stdbool.h>

double timer_now(void); /* seconds, monotonic */
/* The median of v[0..n) (n >= 1); sorts v. */
double timer_median(double *v, int n);

/* One call of a command's operation; its status once it has finished on the device (synchronized). */
typedef tile_status (*TimerCall)(tile_context *ctx, void *user);
/* One call timed on the host clock: its seconds in *seconds; its status. */
tile_status timer_call(TimerCall call, tile_context *ctx, void *user, double *seconds);
/* `reps` calls timed one after another: the median seconds of those that ran in *median; stops at the first
 * that fails and returns its status.  When the times cannot be kept: "tile: out of host memory" on stderr,
 * *median -1, TILE_ERROR_OUT_OF_MEMORY (the command exits 3 without its report). */
tile_status timer_reps(TimerCall call, tile_context *ctx, void *user, int reps, double *median);
/* "  first call  F ms (compile or cache load included)" and
 * "  next calls  M ms median of R (RATE[; the emulator's timings mean nothing])" on standard output. */
void timer_print_first(double first);
void timer_print_next(double median, int reps, const char *rate, bool emulator);
/* The same in a --json object, so every command names them alike: "device", "arch" and "emulator" (the run's
 * device), and "first_seconds", "median_seconds" and "reps". */
void timer_json_device(JsonOut *j, const tile_device_properties *props);
void timer_json_times(JsonOut *j, double first, double median, int reps);

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
