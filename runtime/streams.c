/* streams.c - tile_stream and tile_event: the device layer's streams and events behind handles of a
 * context, checked before use (a destroyed one keeps a dead magic until its context goes: an error with a
 * message, never a read of freed memory), and the asynchronous copies that take a stream. */
#include "runtime/rt_state.h"

#include <stdlib.h>

/* ---- streams and events ---- */
/* The device stream behind s (NULL for the default stream), checked to be
 * a live stream of ctx.  No lock: launches call it. */
tile_status rt_check_stream(tile_context *ctx, tile_stream s, const char *what, void **impl) {
    *impl = NULL;
    if (!s) return TILE_OK;
    if (!handle_live(s, HANDLE_STREAM)) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: not a tile_stream", what);
    if (s->magic == STREAM_MAGIC && s->ctx == ctx) {
        *impl = s->impl;
        return TILE_OK;
    }
    if (s->magic == DEAD_STREAM_MAGIC && s->ctx == ctx)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: the stream was destroyed", what);
    if (s->magic == STREAM_MAGIC || s->magic == DEAD_STREAM_MAGIC)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: the stream belongs to another context", what);
    return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: not a tile_stream", what);
}

static tile_status check_event(tile_context *ctx, tile_event e, const char *what) {
    if (!e) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: the event is NULL", what);
    if (!handle_live(e, HANDLE_EVENT)) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: not a tile_event", what);
    if (e->magic == EVENT_MAGIC && e->ctx == ctx) return TILE_OK;
    if (e->magic == DEAD_EVENT_MAGIC && e->ctx == ctx)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: the event was destroyed", what);
    if (e->magic == EVENT_MAGIC || e->magic == DEAD_EVENT_MAGIC)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: the event belongs to another context", what);
    return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: not a tile_event", what);
}

/* A handle for the device stream impl: a destroyed one reused, else a new one (lock held).  NULL: out of memory. */
static tile_stream stream_new_locked(tile_context *ctx, void *impl, bool borrowed) {
    tile_stream s = ctx->streams;
    while (s && s->magic != DEAD_STREAM_MAGIC) s = s->next;
    if (!s && (!(s = calloc(1, sizeof *s)) || !handle_add(s, HANDLE_STREAM))) return free(s), NULL;
    if (!s->ctx) { /* new, not a destroyed one reused */
        s->next = ctx->streams;
        ctx->streams = s;
    }
    s->ctx = ctx;
    s->impl = impl;
    s->borrowed = borrowed;
    s->magic = STREAM_MAGIC;
    return s;
}

tile_status tile_stream_create(tile_context *ctx, tile_stream *out) {
    if (out) *out = NULL; /* cleared before any check, the context's included: a failed call leaves no earlier value */
    CHECK_CTX(ctx);
    if (!out) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_stream_create: out is NULL");
    rt_lock(ctx);
    void *impl;
    DevStatus ds = dev_stream_create(ctx->dev, &impl);
    tile_status st = TILE_OK;
    if (ds != DEV_OK) st = rt_dev_error(ctx, ds, "tile_stream_create");
    else if (!(*out = stream_new_locked(ctx, impl, false))) {
        dev_stream_destroy(ctx->dev, impl);
        st = rt_fail(ctx, TILE_ERROR_OUT_OF_MEMORY, "tile_stream_create: out of host memory");
    }
    rt_unlock(ctx);
    return st;
}

tile_status tile_stream_from_native(tile_context *ctx, void *cu_stream, tile_stream *out) {
    if (out) *out = NULL; /* cleared before any check, the context's included: a failed call leaves no earlier value */
    CHECK_CTX(ctx);
    if (!out) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_stream_from_native: out is NULL");
    rt_lock(ctx);
    DevStatus ds = dev_stream_check_native(ctx->dev, cu_stream);
    tile_status st = TILE_OK;
    if (ds != DEV_OK) st = rt_dev_error(ctx, ds, "tile_stream_from_native");
    else if (!(*out = stream_new_locked(ctx, cu_stream, true)))
        st = rt_fail(ctx, TILE_ERROR_OUT_OF_MEMORY, "tile_stream_from_native: out of host memory");
    rt_unlock(ctx);
    return st;
}

tile_status tile_stream_destroy(tile_context *ctx, tile_stream s) {
    CHECK_CTX(ctx);
    if (!s) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_stream_destroy: the default stream (NULL) cannot be destroyed");
    rt_lock(ctx);
    void *impl;
    tile_status st = rt_check_stream(ctx, s, "tile_stream_destroy", &impl);
    if (st == TILE_OK) {
        s->magic = DEAD_STREAM_MAGIC;
        s->impl = NULL;
        DevStatus ds = s->borrowed ? DEV_OK : dev_stream_destroy(ctx->dev, impl); /* the caller's stream stays its own */
        if (ds != DEV_OK) st = rt_dev_error(ctx, ds, "tile_stream_destroy");
    }
    rt_unlock(ctx);
    return st;
}

tile_status tile_stream_synchronize(tile_context *ctx, tile_stream s) {
    CHECK_CTX(ctx);
    void *impl;
    tile_status st = rt_check_stream(ctx, s, "tile_stream_synchronize", &impl);
    if (st != TILE_OK) return st;
    rt_count_sync(ctx);
    uint64_t begin = rt_launch_log_begin(&ctx->launch_log);
    DevStatus ds = dev_stream_synchronize(ctx->dev, impl);
    if (ds == DEV_OK) rt_launch_log_synced(s ? &s->synced : &ctx->default_synced, begin);
    return ds == DEV_OK ? TILE_OK : rt_dev_error(ctx, ds, "tile_stream_synchronize");
}

tile_status tile_stream_wait_event(tile_context *ctx, tile_stream s, tile_event e) {
    CHECK_CTX(ctx);
    void *impl;
    tile_status st = rt_check_stream(ctx, s, "tile_stream_wait_event", &impl);
    if (st == TILE_OK) st = check_event(ctx, e, "tile_stream_wait_event");
    if (st != TILE_OK) return st;
    if (!e->recorded) return TILE_OK; /* as in CUDA: nothing to wait for */
    DevStatus ds = dev_stream_wait_event(ctx->dev, impl, e->impl);
    return ds == DEV_OK ? TILE_OK : rt_dev_error(ctx, ds, "tile_stream_wait_event");
}

tile_status tile_event_create(tile_context *ctx, tile_event *out) {
    if (out) *out = NULL; /* cleared before any check, the context's included: a failed call leaves no earlier value */
    CHECK_CTX(ctx);
    if (!out) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_event_create: out is NULL");
    rt_lock(ctx);
    /* a destroyed event is reused with its device event (kept: another thread's late record or wait on the
     * destroyed handle touches a live device event, never freed memory) */
    tile_event e = ctx->events;
    while (e && e->magic != DEAD_EVENT_MAGIC) e = e->next;
    void *impl = e ? e->impl : NULL;
    DevStatus ds = e ? DEV_OK : dev_event_create(ctx->dev, &impl);
    tile_status st = TILE_OK;
    if (ds != DEV_OK) st = rt_dev_error(ctx, ds, "tile_event_create");
    else {
        if (!e && (!(e = calloc(1, sizeof *e)) || !handle_add(e, HANDLE_EVENT))) {
            free(e);
            e = NULL;
            dev_event_destroy(ctx->dev, impl);
            st = rt_fail(ctx, TILE_ERROR_OUT_OF_MEMORY, "tile_event_create: out of host memory");
        } else {
            if (!e->ctx) { /* new, not a destroyed one reused (whose ctx and impl are these already) */
                e->next = ctx->events;
                ctx->events = e;
                e->ctx = ctx;
                e->impl = impl;
            }
            e->recorded = false;
            e->magic = EVENT_MAGIC;
            *out = e;
        }
    }
    rt_unlock(ctx);
    return st;
}

tile_status tile_event_destroy(tile_context *ctx, tile_event e) {
    CHECK_CTX(ctx);
    rt_lock(ctx);
    tile_status st = check_event(ctx, e, "tile_event_destroy");
    if (st == TILE_OK) e->magic = DEAD_EVENT_MAGIC; /* its device event stays for the next create, freed with the context */
    rt_unlock(ctx);
    return st;
}

tile_status tile_event_record(tile_context *ctx, tile_event e, tile_stream s) {
    CHECK_CTX(ctx);
    void *impl;
    tile_status st = check_event(ctx, e, "tile_event_record");
    if (st == TILE_OK) st = rt_check_stream(ctx, s, "tile_event_record", &impl);
    if (st != TILE_OK) return st;
    DevStatus ds = dev_event_record(ctx->dev, e->impl, impl);
    if (ds != DEV_OK) return rt_dev_error(ctx, ds, "tile_event_record");
    e->recorded = true;
    return TILE_OK;
}

tile_status tile_event_synchronize(tile_context *ctx, tile_event e) {
    CHECK_CTX(ctx);
    tile_status st = check_event(ctx, e, "tile_event_synchronize");
    if (st != TILE_OK) return st;
    if (!e->recorded) return TILE_OK; /* as in CUDA: nothing to wait for */
    rt_count_sync(ctx);
    DevStatus ds = dev_event_synchronize(ctx->dev, e->impl);
    return ds == DEV_OK ? TILE_OK : rt_dev_error(ctx, ds, "tile_event_synchronize");
}

tile_status tile_event_elapsed_ms(tile_context *ctx, tile_event start, tile_event end, float *ms) {
    if (ms) *ms = 0; /* as tile_stream_create's */
    CHECK_CTX(ctx);
    if (!ms) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_event_elapsed_ms: ms is NULL");
    tile_status st = check_event(ctx, start, "tile_event_elapsed_ms: start");
    if (st == TILE_OK) st = check_event(ctx, end, "tile_event_elapsed_ms: end");
    if (st != TILE_OK) return st;
    if (!start->recorded || !end->recorded)
        return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_event_elapsed_ms: the %s event was never recorded",
                       !start->recorded ? "start" : "end");
    /* wait for both, so the call answers rather than fails with "not ready" */
    rt_count_sync(ctx);
    DevStatus ds = dev_event_synchronize(ctx->dev, start->impl);
    if (ds == DEV_OK) ds = dev_event_synchronize(ctx->dev, end->impl);
    if (ds == DEV_OK) ds = dev_event_elapsed_ms(ctx->dev, start->impl, end->impl, ms);
    return ds == DEV_OK ? TILE_OK : rt_dev_error(ctx, ds, "tile_event_elapsed_ms");
}

tile_status tile_memcpy_htod_async(tile_context *ctx, tile_devptr dst, const void *src, size_t bytes, tile_stream stream) {
    CHECK_CTX(ctx);
    void *impl;
    tile_status st = rt_check_stream(ctx, stream, "tile_memcpy_htod_async", &impl);
    if (st != TILE_OK || !bytes) return st;
    if (!src) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_memcpy_htod_async: src is NULL");
    if ((st = rt_check_range(ctx, dst, bytes, "tile_memcpy_htod_async: dst")) != TILE_OK) return st;
    DevStatus ds = dev_memcpy_htod_async(ctx->dev, dst, src, bytes, impl);
    return ds == DEV_OK ? TILE_OK : rt_dev_error(ctx, ds, "tile_memcpy_htod_async");
}

tile_status tile_memcpy_dtoh_async(tile_context *ctx, void *dst, tile_devptr src, size_t bytes, tile_stream stream) {
    CHECK_CTX(ctx);
    void *impl;
    tile_status st = rt_check_stream(ctx, stream, "tile_memcpy_dtoh_async", &impl);
    if (st != TILE_OK || !bytes) return st;
    if (!dst) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "tile_memcpy_dtoh_async: dst is NULL");
    if ((st = rt_check_range(ctx, src, bytes, "tile_memcpy_dtoh_async: src")) != TILE_OK) return st;
    DevStatus ds = dev_memcpy_dtoh_async(ctx->dev, dst, src, bytes, impl);
    return ds == DEV_OK ? TILE_OK : rt_dev_error(ctx, ds, "tile_memcpy_dtoh_async");
}

tile_status tile_memset_async(tile_context *ctx, tile_devptr dst, unsigned char value, size_t bytes, tile_stream stream) {
    CHECK_CTX(ctx);
    void *impl;
    tile_status st = rt_check_stream(ctx, stream, "tile_memset_async", &impl);
    if (st != TILE_OK || !bytes) return st;
    if ((st = rt_check_range(ctx, dst, bytes, "tile_memset_async: dst")) != TILE_OK) return st;
    DevStatus ds = dev_memset_d8_async(ctx->dev, dst, value, bytes, impl);
    return ds == DEV_OK ? TILE_OK : rt_dev_error(ctx, ds, "tile_memset_async");
}

tile_status rt_memset2d_async(tile_context *ctx, tile_devptr dst, size_t pitch, unsigned char value, size_t width, size_t rows,
                              tile_stream stream, const char *what) {
    CHECK_CTX(ctx);
    void *impl;
    tile_status st = rt_check_stream(ctx, stream, what, &impl);
    if (st != TILE_OK || !width || !rows) return st;
    if (rows > 1 && pitch < width) return rt_fail(ctx, TILE_ERROR_INVALID_VALUE, "%s: pitch %zu < width %zu", what, pitch, width);
    if ((st = rt_check_range(ctx, dst, (uint64_t)(rows - 1) * pitch + width, what)) != TILE_OK) return st;
    DevStatus ds = dev_memset2d_d8_async(ctx->dev, dst, pitch, value, width, rows, impl);
    return ds == DEV_OK ? TILE_OK : rt_dev_error(ctx, ds, what);
}
