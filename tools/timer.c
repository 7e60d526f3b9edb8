/* timer.c - host clock, medians and event timing (see timer.h). */
#include "tools/timer.h"

#include <time.h>

double timer_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double timer_median(double *v, int n) {
    for (int i = 1; i < n; i++) /* insertion sort: a handful of repetitions */
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double x = v[j];
            v[j] = v[j - 1], v[j - 1] = x;
        }
    return v[n / 2];
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
