/* test_streams.c - streams and events on the emulator: work on a stream
 * runs in submission order (copies, launches, fills, tile_gemm), events
 * order streams and time them, and misuse (a stream or event of another
 * context, a destroyed one, never-recorded events, NULL) is an error with a
 * message that never reaches the device. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "include/tile/tile.h"

static char cache_dir[64];

static tile_context *open_emu(void) {
    snprintf(cache_dir, sizeof cache_dir, "/tmp/tile-test-streams-XXXXXX");
    cr_assert(mkdtemp(cache_dir));
    tile_context_options o = {.device = "emu", .cache_dir = cache_dir, .emu_host_threads = 2};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK);
    return ctx;
}

static void close_emu(tile_context *ctx) {
    tile_context_destroy(ctx);
    tile_cache_clear(cache_dir, 1);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", cache_dir);
    cr_assert_eq(system(cmd), 0);
}

#define OK(call) cr_assert_eq((call), TILE_OK, "%s: %s", #call, tile_last_error(ctx))
#define ASSERT_ERR(c, call, status, needle)                                                                  \
    do {                                                                                                     \
        tile_status st_ = (call);                                                                            \
        cr_assert_eq(st_, status, "%s: got %s (%s)", #call, tile_status_string(st_), tile_last_error(c));    \
        cr_assert(strstr(tile_last_error(c), needle), "%s: message '%s' lacks '%s'", #call, tile_last_error(c), needle); \
    } while (0)

/* x[i] = x[i] * 2 + 1: applied twice in the wrong order it gives another answer than in the right one
 * only together with the copies around it, which is what the ordering test checks. */
static const char *kSrc =
    "@num_warps(1) kernel step(x: *f32, n: i32, const B: i32 = 64) {\n"
    "    let o = program_id(0) * B + arange(0, B);\n"
    "    store(x + o, load(x + o, o < n, 0.0) * 2.0 + 1.0, o < n);\n"
    "}\n";

static tile_kernel *step_kernel(tile_context *ctx, tile_module **m) {
    OK(tile_module_load_source(ctx, kSrc, NULL, m));
    tile_kernel *k;
    OK(tile_module_get_kernel(*m, "step", &k));
    return k;
}

Test(streams, in_order_copies_launches_fills) {
    tile_context *ctx = open_emu();
    tile_module *m;
    tile_kernel *k = step_kernel(ctx, &m);
    enum { N = 200 };
    float host[N], out[N];
    for (int i = 0; i < N; i++) host[i] = (float)i;
    tile_devptr x;
    OK(tile_malloc(ctx, sizeof host, &x));
    tile_stream s;
    OK(tile_stream_create(ctx, &s));
    cr_assert_not_null(s);
    int32_t n = N;
    void *args[] = {&x, &n};
    /* copy in, three steps, copy out: all on s, one synchronize at the end */
    OK(tile_memcpy_htod_async(ctx, x, host, sizeof host, s));
    for (int r = 0; r < 3; r++) OK(tile_launch(k, (tile_dim3){(N + 63) / 64, 1, 1}, args, s));
    OK(tile_memcpy_dtoh_async(ctx, out, x, sizeof out, s));
    OK(tile_stream_synchronize(ctx, s));
    for (int i = 0; i < N; i++) cr_assert_eq(out[i], (float)i * 8 + 7, "out[%d] = %g", i, out[i]);
    /* a fill, then a step: 0 * 2 + 1 */
    OK(tile_memset_async(ctx, x, 0, sizeof host, s));
    OK(tile_launch_raw(k, (tile_dim3){(N + 63) / 64, 1, 1}, (tile_dim3){32, 1, 1}, 0, args, s));
    OK(tile_memcpy_dtoh_async(ctx, out, x, sizeof out, s));
    OK(tile_stream_synchronize(ctx, s));
    for (int i = 0; i < N; i++) cr_assert_eq(out[i], 1.0f);
    /* the default stream orders with s */
    OK(tile_launch(k, (tile_dim3){(N + 63) / 64, 1, 1}, args, NULL));
    OK(tile_memcpy_dtoh_async(ctx, out, x, sizeof out, s));
    OK(tile_stream_synchronize(ctx, NULL));
    OK(tile_stream_synchronize(ctx, s));
    for (int i = 0; i < N; i++) cr_assert_eq(out[i], 3.0f);
    /* zero bytes is nothing, still checked for the stream */
    OK(tile_memcpy_htod_async(ctx, x, NULL, 0, s));
    OK(tile_stream_destroy(ctx, s));
    tile_module_unload(m);
    close_emu(ctx);
}

Test(streams, events_order_and_time) {
    tile_context *ctx = open_emu();
    tile_module *m;
    tile_kernel *k = step_kernel(ctx, &m);
    enum { N = 4096 };
    float *host = calloc(N, sizeof *host), *out = calloc(N, sizeof *out);
    tile_devptr x;
    OK(tile_malloc(ctx, N * sizeof *host, &x));
    OK(tile_memcpy_htod(ctx, x, host, N * sizeof *host));
    tile_stream a, b;
    OK(tile_stream_create(ctx, &a));
    OK(tile_stream_create(ctx, &b));
    cr_assert_neq(a, b);
    tile_event start, mid, end;
    OK(tile_event_create(ctx, &start));
    OK(tile_event_create(ctx, &mid));
    OK(tile_event_create(ctx, &end));
    int32_t n = N;
    void *args[] = {&x, &n};
    /* a: start, step, mid; b waits for mid, steps, end; the copy on b sees both steps */
    OK(tile_event_record(ctx, start, a));
    OK(tile_launch(k, (tile_dim3){N / 64, 1, 1}, args, a));
    OK(tile_event_record(ctx, mid, a));
    OK(tile_stream_wait_event(ctx, b, mid));
    OK(tile_launch(k, (tile_dim3){N / 64, 1, 1}, args, b));
    OK(tile_event_record(ctx, end, b));
    OK(tile_memcpy_dtoh_async(ctx, out, x, N * sizeof *out, b));
    OK(tile_event_synchronize(ctx, end));
    OK(tile_stream_synchronize(ctx, b));
    for (int i = 0; i < N; i++) cr_assert_eq(out[i], 3.0f, "out[%d] = %g", i, out[i]);
    float t1 = -1, t2 = -1, t0 = -1;
    OK(tile_event_elapsed_ms(ctx, start, mid, &t1));
    OK(tile_event_elapsed_ms(ctx, start, end, &t2));
    OK(tile_event_elapsed_ms(ctx, start, start, &t0));
    cr_assert(t1 >= 0 && t2 >= t1, "elapsed %g then %g ms", t1, t2);
    cr_assert(t2 > 0, "a launch of 64 blocks took %g ms", t2);
    cr_assert_eq(t0, 0.0f);
    /* re-recording moves the event */
    usleep(20000);
    OK(tile_event_record(ctx, end, NULL));
    float t3;
    OK(tile_event_elapsed_ms(ctx, start, end, &t3));
    cr_assert(t3 >= t2 + 15, "after sleeping 20 ms: %g ms (before: %g)", t3, t2);
    /* waiting for or synchronizing an event never recorded waits for nothing */
    tile_event fresh;
    OK(tile_event_create(ctx, &fresh));
    OK(tile_stream_wait_event(ctx, a, fresh));
    OK(tile_event_synchronize(ctx, fresh));
    ASSERT_ERR(ctx, tile_event_elapsed_ms(ctx, start, fresh, &t3), TILE_ERROR_INVALID_VALUE, "end event was never recorded");
    ASSERT_ERR(ctx, tile_event_elapsed_ms(ctx, fresh, start, &t3), TILE_ERROR_INVALID_VALUE, "start event was never recorded");
    OK(tile_event_destroy(ctx, fresh));
    OK(tile_event_destroy(ctx, start));
    OK(tile_event_destroy(ctx, mid));
    OK(tile_event_destroy(ctx, end));
    OK(tile_stream_destroy(ctx, a));
    OK(tile_stream_destroy(ctx, b));
    tile_module_unload(m);
    free(host), free(out);
    close_emu(ctx);
}

Test(streams, misuse_errors) {
    tile_context *ctx = open_emu();
    tile_module *m;
    tile_kernel *k = step_kernel(ctx, &m);
    tile_devptr x;
    OK(tile_malloc(ctx, 256, &x));
    int32_t n = 64;
    void *args[] = {&x, &n};
    char host[256] = {0};

    cr_assert_eq(tile_stream_create(NULL, NULL), TILE_ERROR_INVALID_VALUE);
    ASSERT_ERR(ctx, tile_stream_create(ctx, NULL), TILE_ERROR_INVALID_VALUE, "out is NULL");
    ASSERT_ERR(ctx, tile_event_create(ctx, NULL), TILE_ERROR_INVALID_VALUE, "out is NULL");
    ASSERT_ERR(ctx, tile_stream_destroy(ctx, NULL), TILE_ERROR_INVALID_VALUE, "default stream");
    OK(tile_stream_synchronize(ctx, NULL));

    /* a stream and an event of another context */
    tile_context *other;
    cr_assert_eq(tile_context_create("emu", &other), TILE_OK);
    tile_stream os;
    tile_event oe;
    cr_assert_eq(tile_stream_create(other, &os), TILE_OK);
    cr_assert_eq(tile_event_create(other, &oe), TILE_OK);
    ASSERT_ERR(ctx, tile_launch(k, (tile_dim3){1, 1, 1}, args, os), TILE_ERROR_INVALID_VALUE, "belongs to another context");
    ASSERT_ERR(ctx, tile_launch(k, (tile_dim3){1, 1, 1}, args, os), TILE_ERROR_INVALID_VALUE, "launch of 'step'");
    ASSERT_ERR(ctx, tile_memcpy_htod_async(ctx, x, host, 16, os), TILE_ERROR_INVALID_VALUE, "belongs to another context");
    ASSERT_ERR(ctx, tile_memcpy_dtoh_async(ctx, host, x, 16, os), TILE_ERROR_INVALID_VALUE, "belongs to another context");
    ASSERT_ERR(ctx, tile_memset_async(ctx, x, 0, 16, os), TILE_ERROR_INVALID_VALUE, "belongs to another context");
    ASSERT_ERR(ctx, tile_stream_synchronize(ctx, os), TILE_ERROR_INVALID_VALUE, "belongs to another context");
    ASSERT_ERR(ctx, tile_stream_destroy(ctx, os), TILE_ERROR_INVALID_VALUE, "belongs to another context");
    ASSERT_ERR(ctx, tile_event_record(ctx, oe, NULL), TILE_ERROR_INVALID_VALUE, "event belongs to another context");
    ASSERT_ERR(ctx, tile_event_destroy(ctx, oe), TILE_ERROR_INVALID_VALUE, "event belongs to another context");
    tile_gemm_args g = {.m = 4, .n = 4, .k = 4, .a = x, .lda = 4, .b = x, .ldb = 4, .c = x + 64, .ldc = 4, .in_dtype = TILE_F32,
                        .out_dtype = TILE_F32, .alpha = 1, .stream = os};
    ASSERT_ERR(ctx, tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE, "tile_gemm: the stream belongs to another context");
    /* ... which still work on their own context */
    cr_assert_eq(tile_event_record(other, oe, os), TILE_OK);
    cr_assert_eq(tile_stream_destroy(other, os), TILE_OK);
    cr_assert_eq(tile_event_destroy(other, oe), TILE_OK);
    tile_context_destroy(other);

    /* destroyed ones */
    tile_stream s;
    tile_event e, e2;
    OK(tile_stream_create(ctx, &s));
    OK(tile_event_create(ctx, &e));
    OK(tile_event_create(ctx, &e2));
    OK(tile_event_record(ctx, e2, s));
    OK(tile_stream_destroy(ctx, s));
    ASSERT_ERR(ctx, tile_launch(k, (tile_dim3){1, 1, 1}, args, s), TILE_ERROR_INVALID_VALUE, "the stream was destroyed");
    ASSERT_ERR(ctx, tile_stream_destroy(ctx, s), TILE_ERROR_INVALID_VALUE, "the stream was destroyed");
    ASSERT_ERR(ctx, tile_stream_synchronize(ctx, s), TILE_ERROR_INVALID_VALUE, "the stream was destroyed");
    ASSERT_ERR(ctx, tile_event_record(ctx, e, s), TILE_ERROR_INVALID_VALUE, "the stream was destroyed");
    ASSERT_ERR(ctx, tile_stream_wait_event(ctx, s, e2), TILE_ERROR_INVALID_VALUE, "the stream was destroyed");
    g.stream = s;
    ASSERT_ERR(ctx, tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE, "the stream was destroyed");
    OK(tile_event_destroy(ctx, e));
    ASSERT_ERR(ctx, tile_event_record(ctx, e, NULL), TILE_ERROR_INVALID_VALUE, "the event was destroyed");
    ASSERT_ERR(ctx, tile_event_synchronize(ctx, e), TILE_ERROR_INVALID_VALUE, "the event was destroyed");
    ASSERT_ERR(ctx, tile_event_elapsed_ms(ctx, e2, e, &(float){0}), TILE_ERROR_INVALID_VALUE, "end: the event was destroyed");
    ASSERT_ERR(ctx, tile_event_destroy(ctx, e), TILE_ERROR_INVALID_VALUE, "the event was destroyed");
    ASSERT_ERR(ctx, tile_event_elapsed_ms(ctx, e2, e2, NULL), TILE_ERROR_INVALID_VALUE, "ms is NULL");
    ASSERT_ERR(ctx, tile_event_record(ctx, NULL, NULL), TILE_ERROR_INVALID_VALUE, "the event is NULL");
    ASSERT_ERR(ctx, tile_stream_wait_event(ctx, NULL, NULL), TILE_ERROR_INVALID_VALUE, "the event is NULL");

    /* not a stream at all (a zeroed block the size of one) */
    void *junk[8] = {0};
    ASSERT_ERR(ctx, tile_launch(k, (tile_dim3){1, 1, 1}, args, (tile_stream)junk), TILE_ERROR_INVALID_VALUE, "not a tile_stream");
    ASSERT_ERR(ctx, tile_event_synchronize(ctx, (tile_event)junk), TILE_ERROR_INVALID_VALUE, "not a tile_event");

    /* the slot of a destroyed stream is reused: the new handle works */
    tile_stream s2;
    OK(tile_stream_create(ctx, &s2));
    OK(tile_launch(k, (tile_dim3){1, 1, 1}, args, s2));
    /* bad copies on a good stream are still checked */
    ASSERT_ERR(ctx, tile_memcpy_htod_async(ctx, x, host, 512, s2), TILE_ERROR_INVALID_VALUE, "run past the end");
    ASSERT_ERR(ctx, tile_memcpy_dtoh_async(ctx, NULL, x, 4, s2), TILE_ERROR_INVALID_VALUE, "dst is NULL");
    ASSERT_ERR(ctx, tile_memset_async(ctx, x + 1024 * 1024, 0, 4, s2), TILE_ERROR_INVALID_VALUE, "not allocated with tile_malloc");
    /* a live stream and events left for tile_context_destroy to free */
    tile_event left;
    OK(tile_event_create(ctx, &left));
    OK(tile_event_record(ctx, left, s2));
    tile_module_unload(m);
    close_emu(ctx);
}

/* tile_gemm on a stream: same result as on the default stream, and the
 * split-K zeroing of C runs on the stream too. */
Test(streams, gemm_on_a_stream, .timeout = 240) {
    tile_context *ctx = open_emu();
    enum { M = 32, N = 48, K = 64 };
    int8_t a[M * K], b[K * N];
    for (int i = 0; i < M * K; i++) a[i] = (int8_t)(i * 7 % 13 - 6);
    for (int i = 0; i < K * N; i++) b[i] = (int8_t)(i * 5 % 11 - 5);
    int32_t ref[M * N], c1[M * N], c2[M * N];
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            int32_t s = 0;
            for (int p = 0; p < K; p++) s += a[i * K + p] * b[p * N + j];
            ref[i * N + j] = s;
        }
    tile_devptr da, db, dc;
    OK(tile_malloc(ctx, sizeof a, &da));
    OK(tile_malloc(ctx, sizeof b, &db));
    OK(tile_malloc(ctx, sizeof c1, &dc));
    tile_stream s;
    OK(tile_stream_create(ctx, &s));
    OK(tile_memcpy_htod_async(ctx, da, a, sizeof a, s));
    OK(tile_memcpy_htod_async(ctx, db, b, sizeof b, s));
    OK(tile_memset_async(ctx, dc, 0xff, sizeof c1, s));
    tile_gemm_args g = {.m = M, .n = N, .k = K, .a = da, .lda = K, .b = db, .ldb = N, .c = dc, .ldc = N,
                        .in_dtype = TILE_I8, .out_dtype = TILE_I32, .alpha = 1, .stream = s};
    OK(tile_gemm(ctx, &g));
    OK(tile_memcpy_dtoh_async(ctx, c1, dc, sizeof c1, s));
    OK(tile_stream_synchronize(ctx, s));
    g.stream = NULL;
    OK(tile_memset(ctx, dc, 0, sizeof c2));
    OK(tile_gemm(ctx, &g));
    OK(tile_memcpy_dtoh(ctx, c2, dc, sizeof c2));
    for (int i = 0; i < M * N; i++) {
        cr_assert_eq(c1[i], ref[i], "stream: c[%d] = %d, want %d", i, c1[i], ref[i]);
        cr_assert_eq(c2[i], ref[i], "default: c[%d] = %d, want %d", i, c2[i], ref[i]);
    }
    OK(tile_stream_destroy(ctx, s));
    close_emu(ctx);
}

/* Several host threads, each with its own stream, on one context. */
typedef struct Worker {
    tile_context *ctx;
    tile_kernel *k;
    int id;
    int ok;
} Worker;

static void *worker(void *p) {
    Worker *w = p;
    tile_context *ctx = w->ctx;
    enum { N = 256 };
    float host[N], out[N];
    for (int i = 0; i < N; i++) host[i] = (float)(w->id + i);
    tile_stream s;
    tile_devptr x;
    if (tile_stream_create(ctx, &s) || tile_malloc(ctx, sizeof host, &x)) return NULL;
    int32_t n = N;
    void *args[] = {&x, &n};
    w->ok = 1;
    for (int r = 0; r < 4 && w->ok; r++) {
        w->ok = !tile_memcpy_htod_async(ctx, x, host, sizeof host, s) && !tile_launch(w->k, (tile_dim3){N / 64, 1, 1}, args, s) &&
                !tile_launch(w->k, (tile_dim3){N / 64, 1, 1}, args, s) && !tile_memcpy_dtoh_async(ctx, out, x, sizeof out, s) &&
                !tile_stream_synchronize(ctx, s);
        for (int i = 0; i < N && w->ok; i++) w->ok = out[i] == host[i] * 4 + 3;
    }
    tile_free(ctx, x);
    tile_stream_destroy(ctx, s);
    return NULL;
}

Test(streams, threads_with_their_own_streams, .timeout = 120) {
    tile_context *ctx = open_emu();
    tile_module *m;
    tile_kernel *k = step_kernel(ctx, &m);
    enum { T = 4 };
    pthread_t th[T];
    Worker w[T];
    for (int i = 0; i < T; i++) {
        w[i] = (Worker){ctx, k, i * 1000, 0};
        cr_assert_eq(pthread_create(&th[i], NULL, worker, &w[i]), 0);
    }
    for (int i = 0; i < T; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < T; i++) cr_assert(w[i].ok, "thread %d: %s", i, tile_last_error(ctx));
    tile_module_unload(m);
    close_emu(ctx);
}

/* Launches failing at once on one context from two threads (a device fault fails every serving thread's
 * launch): each thread's message names its own failure.  Before: the device kept one message, written and
 * freed by both threads together (a heap corruption, or the other thread's message). */
static const char *kOob =
    "@num_warps(1) kernel rd(x: *f32, out: *f32, n: i32) {\n"
    "    let o = arange(0, 32);\n"
    "    store(out + o, load(x + o + n));\n"
    "}\n"
    "@num_warps(1) kernel wr(x: *f32, out: *f32, n: i32) {\n"
    "    let o = arange(0, 32);\n"
    "    store(out + o + n, load(x + o));\n"
    "}\n";

typedef struct Failer {
    tile_context *ctx;
    tile_kernel *k;
    tile_devptr x, out;
    const char *want, *other;
    int wrong, launched_ok;
} Failer;

static void *failer(void *p) {
    Failer *f = p;
    int32_t n = 4096;
    void *args[] = {&f->x, &f->out, &n};
    for (int i = 0; i < 2000; i++) {
        if (tile_launch(f->k, (tile_dim3){1, 1, 1}, args, NULL) == TILE_OK) {
            f->launched_ok++;
            continue;
        }
        const char *msg = tile_last_error(f->ctx);
        char head[160];
        snprintf(head, sizeof head, "%s", msg);
        if (!strstr(head, f->want) || strstr(head, f->other)) f->wrong++;
    }
    return NULL;
}

Test(streams, concurrent_failing_launches_keep_their_messages, .timeout = 120) {
    tile_context *ctx = open_emu();
    tile_module *m;
    tile_kernel *kr, *kw;
    OK(tile_module_load_source(ctx, kOob, NULL, &m));
    OK(tile_module_get_kernel(m, "rd", &kr));
    OK(tile_module_get_kernel(m, "wr", &kw));
    tile_devptr x, out;
    OK(tile_malloc(ctx, 256, &x));
    OK(tile_malloc(ctx, 256, &out));
    enum { T = 4 };
    Failer f[T];
    pthread_t th[T];
    for (int i = 0; i < T; i++) {
        f[i] = (Failer){ctx, i & 1 ? kw : kr, x, out, i & 1 ? "invalid __global__ write" : "invalid __global__ read",
                        i & 1 ? "invalid __global__ read" : "invalid __global__ write", 0, 0};
        cr_assert_eq(pthread_create(&th[i], NULL, failer, &f[i]), 0);
    }
    for (int i = 0; i < T; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < T; i++) {
        cr_assert_eq(f[i].launched_ok, 0, "thread %d: an out-of-bounds launch succeeded", i);
        cr_assert_eq(f[i].wrong, 0, "thread %d: %d messages were not its own '%s'", i, f[i].wrong, f[i].want);
    }
    tile_module_unload(m);
    close_emu(ctx);
}
