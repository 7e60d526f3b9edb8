/* timer.c - host clock, medians and event timing (see timer.h). */
#include "tools/timer.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

double timer_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double timer_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, by_value); /* --reps may be large: no quadratic sort */
    return v[n / 2];
}

tile_status timer_call(TimerCall call, tile_context *ctx, void *user, double *seconds) {
    double t0 = timer_now();
    tile_status st = call(ctx, user);
    *seconds = timer_now() - t0;
    return st;
}

tile_status timer_reps(TimerCall call, tile_context *ctx, void *user, int reps, double *median) {
    *median = 0;
    double *ts = calloc(reps > 0 ? (size_t)reps : 1, sizeof *ts);
    if (!ts) return fprintf(stderr, "tile: out of host memory\n"), *median = -1, TILE_ERROR_OUT_OF_MEMORY;
    tile_status st = TILE_OK;
    int ran = 0;
    while (ran < reps && st == TILE_OK) st = timer_call(call, ctx, user, &ts[ran++]);
    if (ran) *median = timer_median(ts, ran);
    free(ts);
    return st;
}

void timer_json_device(JsonOut *j, const tile_device_properties *props) {
    json_str(j, "device", props->name), json_str(j, "arch", props->arch), json_bool(j, "emulator", props->is_emulator);
}

void timer_json_times(JsonOut *j, double first, double median, int reps) {
    json_num(j, "first_seconds", first), json_num(j, "median_seconds", median), json_int(j, "reps", reps);
}

void timer_print_first(double first) { printf("  first call  %.3f ms (compile or cache load included)\n", first * 1e3); }

void timer_print_next(double median, int reps, const char *rate, bool emulator) {
    printf("  next calls  %.3f ms median of %d (%s%s)\n", median * 1e3, reps, rate, emulator ? "; the emulator's timings mean nothing" : "");
}

void timer_init(Timer *t, tile_context *ctx) {
    *t = (Timer){.ctx = ctx};
    if (tile_event_create(ctx, &t->start) != TILE_OK) t->start = NULL;
    else if (tile_event_create(ctx, &t->end) != TILE_OK) tile_event_destroy(ctx, t->start), t->start = NULL;
}

void timer_start(Timer *t) {
    if (t->start && tile_event_record(t->ctx, t->start, NULL) == TILE_OK) return;
    tile_synchronize(t->ctx);
    t->t0 = timer_now();
}

double timer_stop(Timer *t) {
    float ms;
    if (t->start && tile_event_record(t->ctx, t->end, NULL) == TILE_OK && tile_event_elapsed_ms(t->ctx, t->start, t->end, &ms) == TILE_OK)
        return ms * 1e-3;
    tile_synchronize(t->ctx);
    return timer_now() - t->t0;
}

void timer_free(Timer *t) {
    if (!t->start) return;
    tile_event_destroy(t->ctx, t->start);
    tile_event_destroy(t->ctx, t->end);
}
