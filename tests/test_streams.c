/* test_streams.c - streams and events on the emulator: work on a stream
 * runs in submission order (copies, launches, fills, tile_gemm), events
 * order streams and time them, and misuse (a stream or event of another
 * context, a destroyed one, never-recorded events, NULL) is an error with a
 * message that never reaches the device.  What an inference engine does from many threads at once, on
 * emu:sm_80 (scripts/sanitize_thread.sh runs these under ThreadSanitizer): threads sharing one context
 * compile, load, launch on two streams joined by an event and read back; threads with contexts of their
 * own, made and destroyed while another context is busy; threads failing in different ways on one
 * context, each reading its own message. */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "include/tile/tile.h"
#include "tests/interrupter.h"

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

/* ---- what an engine does from many threads (every result checked against float64) ---- */
static void remove_dir(const char *dir) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}

/* y = x * S + 1 (S a define: one module per thread), then z = y * y - x on a second stream. */
static const char *kEngine =
    "@num_warps(2) kernel axpb(x: *f32, y: *f32, n: i32, const B: i32 = 64, const S: i32 = 1) {\n"
    "    let o = program_id(0) * B + arange(0, B);\n"
    "    store(y + o, load(x + o, o < n, 0.0) * (S as f32) + 1.0, o < n);\n"
    "}\n"
    "@num_warps(1) kernel sqsub(x: *f32, y: *f32, z: *f32, n: i32, const B: i32 = 64) {\n"
    "    let o = program_id(0) * B + arange(0, B);\n"
    "    let v = load(y + o, o < n, 0.0);\n"
    "    store(z + o, v * v - load(x + o, o < n, 0.0), o < n);\n"
    "}\n";

static uint64_t xs_next(uint64_t *s) {
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

typedef struct EngineJob {
    tile_context *ctx; /* shared, or NULL: the thread makes its own (on cache_dir) and destroys it each round */
    const char *cache_dir;
    int id, rounds;
    uint64_t seed;
    int loads, launches; /* what it did, for the context's counters */
    char why[256];       /* empty: every result was right */
} EngineJob;

#define JOB_FAIL(j, ...) (snprintf((j)->why, sizeof (j)->why, __VA_ARGS__), false)

/* One request: compile (or hit) the thread's module and the one every thread loads, run axpb on stream s1,
 * sqsub on s2 after an event recorded on s1, read z back on s2 and compare with float64. */
static bool engine_round(EngineJob *j, tile_context *ctx, int round) {
    char def[32], name[32];
    snprintf(def, sizeof def, "S=%d", j->id + 4);
    snprintf(name, sizeof name, "engine%d.tile", j->id);
    const char *own_defs[] = {def, NULL}, *shared_defs[] = {"S=3", NULL};
    tile_compile_options oo = {.defines = own_defs}, so = {.defines = shared_defs};
    tile_module *mown = NULL, *mshared = NULL;
    if (tile_module_load_source_ex(ctx, name, kEngine, &oo, &mown) || tile_module_load_source_ex(ctx, "engine.tile", kEngine, &so, &mshared))
        return JOB_FAIL(j, "thread %d: load: %s", j->id, tile_last_error(ctx));
    j->loads += 2;
    tile_module *m = round & 1 ? mshared : mown;
    double scale = round & 1 ? 3 : j->id + 4;
    tile_kernel *ka, *kb;
    if (tile_module_get_kernel(m, "axpb", &ka) || tile_module_get_kernel(m, "sqsub", &kb))
        return JOB_FAIL(j, "thread %d: get_kernel: %s", j->id, tile_last_error(ctx));
    int32_t n = 1000 + 37 * j->id + 11 * round; /* not a multiple of the tile */
    size_t bytes = sizeof(float) * (size_t)n;
    float *x = malloc(bytes), *z = malloc(bytes);
    for (int i = 0; i < n; i++) x[i] = (float)((double)(xs_next(&j->seed) >> 11) / 9007199254740992.0 * 4.0 - 2.0);
    tile_stream s1, s2;
    tile_event ev;
    tile_devptr dx, dy, dz;
    bool ok = !tile_stream_create(ctx, &s1) && !tile_stream_create(ctx, &s2) && !tile_event_create(ctx, &ev) &&
              !tile_malloc(ctx, bytes, &dx) && !tile_malloc(ctx, bytes, &dy) && !tile_malloc(ctx, bytes, &dz);
    if (!ok) return free(x), free(z), JOB_FAIL(j, "thread %d: set-up: %s", j->id, tile_last_error(ctx));
    void *aa[] = {&dx, &dy, &n}, *ab[] = {&dx, &dy, &dz, &n};
    tile_dim3 grid = {(unsigned)(n + 63) / 64, 1, 1};
    memset(z, 0, bytes);
    ok = !tile_memcpy_htod_async(ctx, dx, x, bytes, s1) && !tile_memset_async(ctx, dy, 0xff, bytes, s1) && /* NaN poison */
         !tile_memset_async(ctx, dz, 0xff, bytes, s2) && !tile_launch(ka, grid, aa, s1) && !tile_event_record(ctx, ev, s1) &&
         !tile_stream_wait_event(ctx, s2, ev) && !tile_launch(kb, grid, ab, s2) && !tile_memcpy_dtoh_async(ctx, z, dz, bytes, s2) &&
         !tile_stream_synchronize(ctx, s2);
    if (!ok) (void)JOB_FAIL(j, "thread %d: run: %s", j->id, tile_last_error(ctx));
    else j->launches += 2;
    for (int i = 0; i < n && ok; i++) {
        double y = (double)(float)((double)x[i] * scale + 1.0);
        double want = y * y - x[i];
        if (!(fabs(z[i] - want) <= 1e-5 * (1 + fabs(want))))
            ok = JOB_FAIL(j, "thread %d round %d: z[%d] = %.9g, want %.9g (x %.9g, S %g)", j->id, round, i, z[i], want, x[i], scale);
    }
    tile_free(ctx, dx), tile_free(ctx, dy), tile_free(ctx, dz);
    tile_event_destroy(ctx, ev), tile_stream_destroy(ctx, s1), tile_stream_destroy(ctx, s2);
    tile_module_unload(mown), tile_module_unload(mshared);
    free(x), free(z);
    return ok;
}

static void *engine_thread(void *p) {
    EngineJob *j = p;
    for (int r = 0; r < j->rounds; r++) {
        tile_context *ctx = j->ctx;
        if (!ctx) {
            tile_context_options o = {.device = "emu:sm_80", .cache_dir = j->cache_dir, .emu_host_threads = 1};
            if (tile_context_create_ex(&o, &ctx)) {
                (void)JOB_FAIL(j, "thread %d: create: %s", j->id, tile_last_error(NULL));
                return NULL;
            }
        }
        bool ok = engine_round(j, ctx, r);
        if (!j->ctx) tile_context_destroy(ctx);
        if (!ok) break;
    }
    return NULL;
}

static uint64_t job_seed(int i) {
    static uint64_t base;
    if (!base) base = getenv("TILE_TEST_SEED") ? strtoull(getenv("TILE_TEST_SEED"), NULL, 0) : (uint64_t)time(NULL) * 2654435761u;
    return (base + (uint64_t)i * 0x9e3779b97f4a7c15ull) | 1;
}

/* Threads sharing one context: each compiles its own module (a define of its own) and loads the module
 * every thread loads (a memory hit but for the first), runs two kernels on two streams of its own
 * joined by an event, reads back and checks; the context's counters add up to what the threads did. */
Test(streams, engine_threads_share_one_context, .timeout = 300) {
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/tile-test-engine-XXXXXX");
    cr_assert(mkdtemp(dir));
    tile_context_options o = {.device = "emu:sm_80", .cache_dir = dir, .emu_host_threads = 2};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK, "%s", tile_last_error(NULL));
    enum { T = 4 };
    EngineJob j[T];
    pthread_t th[T];
    for (int i = 0; i < T; i++) {
        j[i] = (EngineJob){.ctx = ctx, .id = i, .rounds = 3, .seed = job_seed(i)};
        cr_assert_eq(pthread_create(&th[i], NULL, engine_thread, &j[i]), 0);
    }
    int loads = 0, launches = 0;
    for (int i = 0; i < T; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < T; i++) {
        cr_expect_str_eq(j[i].why, "", "%s (seed 0x%llx)", j[i].why, (unsigned long long)job_seed(i));
        loads += j[i].loads, launches += j[i].launches;
    }
    tile_context_stats st;
    cr_assert_eq(tile_context_get_stats(ctx, &st), TILE_OK);
    cr_expect_eq(st.memory_hits + st.disk_hits + st.compiles, (uint64_t)loads, "%llu + %llu + %llu loads, %d made",
                 (unsigned long long)st.memory_hits, (unsigned long long)st.disk_hits, (unsigned long long)st.compiles, loads);
    cr_expect_eq(st.launches, (uint64_t)launches);
    tile_context_destroy(ctx);
    remove_dir(dir);
}

/* Threads with contexts of their own, made and destroyed every round, on one cache folder (the disk cache
 * written and read by several contexts at once), while the main thread keeps a context of its own busy
 * with launches whose results it checks: destroying one context never disturbs another. */
Test(streams, own_contexts_made_and_destroyed_beside_a_busy_one, .timeout = 300) {
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/tile-test-engine-XXXXXX");
    cr_assert(mkdtemp(dir));
    enum { T = 3 };
    EngineJob j[T];
    pthread_t th[T];
    for (int i = 0; i < T; i++) {
        j[i] = (EngineJob){.cache_dir = dir, .id = i, .rounds = 3, .seed = job_seed(10 + i)};
        cr_assert_eq(pthread_create(&th[i], NULL, engine_thread, &j[i]), 0);
    }
    EngineJob busy = {.id = 9, .seed = job_seed(20)};
    tile_context_options o = {.device = "emu:sm_80", .cache_dir = dir, .emu_host_threads = 1};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK, "%s", tile_last_error(NULL));
    for (int r = 0; r < 4; r++) cr_expect(engine_round(&busy, ctx, r), "%s", busy.why);
    for (int i = 0; i < T; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < T; i++) cr_expect_str_eq(j[i].why, "", "%s (seed 0x%llx)", j[i].why, (unsigned long long)job_seed(10 + i));
    tile_context_destroy(ctx);
    tile_cache_stats cs;
    cr_assert_eq(tile_cache_get_stats(dir, &cs), TILE_OK);
    cr_expect_eq(cs.entries, (uint64_t)(T + 1 + 1), "an entry per thread's define, the busy one's and the shared one");
    remove_dir(dir);
}

/* Threads failing on one context at once, each in its own ways (a compile error in its own file name, a
 * copy to an address of its own, a kernel name of its own, a launch with its own bad grid), each reading
 * back its own message after every failure, and a thread that fails once and then only succeeds keeps
 * its message. */
typedef struct MixedFailer {
    tile_context *ctx;
    tile_module *m;
    int id, wrong;
    char first_wrong[320];
} MixedFailer;

static void mixed_check(MixedFailer *f, tile_status st, const char *token) {
    const char *msg = tile_last_error(f->ctx);
    if (st != TILE_OK && strstr(msg, token)) return;
    if (!f->wrong++) snprintf(f->first_wrong, sizeof f->first_wrong, "status %d, '%s' lacks '%s'", st, msg, token);
}

static void *mixed_failer(void *p) {
    MixedFailer *f = p;
    tile_context *ctx = f->ctx;
    char name[64], token[80];
    tile_kernel *k;
    if (tile_module_get_kernel(f->m, "axpb", &k)) return f->wrong = 1000, NULL;
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof name, "bad%d_%d.tile", f->id, i);
        tile_module *bad;
        char src[128];
        snprintf(src, sizeof src, "kernel k(x: *f32) {\n%*s}\n", 1 + f->id, "@");
        mixed_check(f, tile_module_load_source_ex(ctx, name, src, NULL, &bad), name);
        tile_devptr bogus = 0x7000000000ull + 0x1000ull * (uint64_t)(f->id * 100 + i);
        float v = 1;
        snprintf(token, sizeof token, "0x%llx", (unsigned long long)bogus);
        mixed_check(f, tile_memcpy_htod(ctx, bogus, &v, sizeof v), token);
        snprintf(name, sizeof name, "nosuch_%d_%d", f->id, i);
        tile_kernel *none;
        mixed_check(f, tile_module_get_kernel(f->m, name, &none), name);
        tile_devptr null = 0;
        int32_t n = 1;
        void *args[] = {&null, &null, &n};
        unsigned gy = 70000u + (unsigned)(f->id * 100 + i);
        snprintf(token, sizeof token, "grid (1,%u,1)", gy);
        mixed_check(f, tile_launch(k, (tile_dim3){1, gy, 1}, args, NULL), token);
    }
    return NULL;
}

Test(streams, racing_failures_keep_each_threads_message, .timeout = 300) {
    tile_context *ctx = open_emu();
    tile_module *m;
    const char *defs[] = {"S=1", NULL};
    tile_compile_options o = {.defines = defs};
    OK(tile_module_load_source_ex(ctx, "engine.tile", kEngine, &o, &m));
    tile_devptr x;
    OK(tile_malloc(ctx, 64, &x));
    cr_assert_eq(tile_free(ctx, x + 4), TILE_ERROR_INVALID_VALUE); /* this thread's own failure, kept throughout */
    char mine[256];
    snprintf(mine, sizeof mine, "%s", tile_last_error(ctx));
    cr_assert(mine[0]);
    enum { T = 4 };
    MixedFailer f[T];
    pthread_t th[T];
    for (int i = 0; i < T; i++) {
        f[i] = (MixedFailer){.ctx = ctx, .m = m, .id = i};
        cr_assert_eq(pthread_create(&th[i], NULL, mixed_failer, &f[i]), 0);
    }
    for (int r = 0; r < 40; r++) { /* succeeding calls meanwhile leave this thread's message alone */
        tile_devptr y;
        OK(tile_malloc(ctx, 128, &y));
        OK(tile_memset(ctx, y, 0, 128));
        OK(tile_free(ctx, y));
    }
    for (int i = 0; i < T; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < T; i++) cr_expect_eq(f[i].wrong, 0, "thread %d: %d messages were not its own; first: %s", i, f[i].wrong, f[i].first_wrong);
    cr_expect_str_eq(tile_last_error(ctx), mine);
    tile_module_unload(m);
    close_emu(ctx);
}

/* tile_gemm from several threads on one context, each its own shapes (none a multiple of a tile) on a
 * stream of its own: the shipped kernels' variant table and the tuned-configuration state are shared;
 * i8 inputs give exact i32 results. */
typedef struct GemmJob {
    tile_context *ctx;
    int id;
    char why[200];
} GemmJob;

static void *gemm_thread(void *p) {
    GemmJob *j = p;
    tile_context *ctx = j->ctx;
    tile_stream s;
    if (tile_stream_create(ctx, &s)) return snprintf(j->why, sizeof j->why, "stream: %s", tile_last_error(ctx)), NULL;
    for (int r = 0; r < 2 && !j->why[0]; r++) {
        int M = 17 + 8 * j->id + r, N = 40 + 5 * j->id, K = 33 + 7 * j->id + 2 * r;
        int8_t *a = malloc((size_t)(M * K)), *b = malloc((size_t)(K * N));
        int32_t *c = malloc(sizeof *c * (size_t)(M * N));
        for (int i = 0; i < M * K; i++) a[i] = (int8_t)((i * 7 + j->id) % 13 - 6);
        for (int i = 0; i < K * N; i++) b[i] = (int8_t)((i * 5 + r) % 11 - 5);
        tile_devptr da, db, dc;
        tile_gemm_args g = {.m = M, .n = N, .k = K, .lda = K, .ldb = N, .ldc = N, .in_dtype = TILE_I8, .out_dtype = TILE_I32,
                            .alpha = 1, .stream = s};
        tile_gemm_info info;
        bool ok = !tile_malloc(ctx, (size_t)(M * K), &da) && !tile_malloc(ctx, (size_t)(K * N), &db) &&
                  !tile_malloc(ctx, sizeof *c * (size_t)(M * N), &dc);
        g.a = da, g.b = db, g.c = dc;
        ok = ok && !tile_memcpy_htod_async(ctx, da, a, (size_t)(M * K), s) && !tile_memcpy_htod_async(ctx, db, b, (size_t)(K * N), s) &&
             !tile_memset_async(ctx, dc, 0xff, sizeof *c * (size_t)(M * N), s) && !tile_gemm(ctx, &g) &&
             !tile_gemm_last_info(ctx, &info) && !tile_memcpy_dtoh_async(ctx, c, dc, sizeof *c * (size_t)(M * N), s) &&
             !tile_stream_synchronize(ctx, s);
        if (!ok) snprintf(j->why, sizeof j->why, "thread %d: %s", j->id, tile_last_error(ctx));
        for (int i = 0; i < M && ok; i++)
            for (int jj = 0; jj < N && ok; jj++) {
                int32_t want = 0;
                for (int q = 0; q < K; q++) want += a[i * K + q] * b[q * N + jj];
                if (c[i * N + jj] != want)
                    ok = false, snprintf(j->why, sizeof j->why, "thread %d %dx%dx%d: c[%d][%d] = %d, want %d", j->id, M, N, K, i, jj,
                                         c[i * N + jj], want);
            }
        tile_free(ctx, da), tile_free(ctx, db), tile_free(ctx, dc);
        free(a), free(b), free(c);
    }
    tile_stream_destroy(ctx, s);
    return NULL;
}

Test(streams, gemm_from_threads_on_one_context, .timeout = 300) {
    tile_context *ctx = open_emu();
    enum { T = 3 };
    GemmJob j[T];
    pthread_t th[T];
    for (int i = 0; i < T; i++) {
        j[i] = (GemmJob){.ctx = ctx, .id = i};
        cr_assert_eq(pthread_create(&th[i], NULL, gemm_thread, &j[i]), 0);
    }
    for (int i = 0; i < T; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < T; i++) cr_expect_str_eq(j[i].why, "", "%s", j[i].why);
    close_emu(ctx);
}

/* tile_context_interrupt from another thread stops the long launch of one context while a thread keeps
 * another context busy: that launch says "interrupted", the other context's work (checked against
 * float64) is untouched, and the interrupted context runs its next launch right. */
static const char *kSpin =
    "@num_warps(1) kernel spin(x: *f32, n: i32) {\n"
    "    let o = arange(0, 32);\n"
    "    let acc = load(x + o);\n"
    "    for i in range(0, n) {\n"
    "        acc = acc * 0.5 + 1.0;\n"
    "    }\n"
    "    store(x + o, acc);\n"
    "}\n";


Test(streams, interrupt_one_context_beside_a_busy_one, .timeout = 300) {
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/tile-test-engine-XXXXXX");
    cr_assert(mkdtemp(dir));
    tile_context_options o = {.device = "emu:sm_80", .cache_dir = dir, .emu_host_threads = 1, .emu_timeout_seconds = 240};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK, "%s", tile_last_error(NULL));
    tile_module *m;
    tile_kernel *k;
    OK(tile_module_load_source(ctx, kSpin, NULL, &m));
    OK(tile_module_get_kernel(m, "spin", &k));
    tile_devptr x;
    float h[32];
    for (int i = 0; i < 32; i++) h[i] = (float)i;
    OK(tile_malloc(ctx, sizeof h, &x));
    OK(tile_memcpy_htod(ctx, x, h, sizeof h));
    EngineJob busy = {.cache_dir = dir, .id = 5, .rounds = 3, .seed = job_seed(30)};
    pthread_t bt, it;
    Interrupter in = {.ctx = ctx};
    cr_assert_eq(pthread_create(&bt, NULL, engine_thread, &busy), 0);
    cr_assert_eq(pthread_create(&it, NULL, interrupt_until_done, &in), 0);
    int32_t forever = 2000000000;
    void *args[] = {&x, &forever};
    tile_status st = tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL);
    atomic_store(&in.done, 1);
    pthread_join(it, NULL);
    pthread_join(bt, NULL);
    cr_expect_eq(st, TILE_ERROR_LAUNCH, "%s", tile_last_error(ctx));
    cr_expect(strstr(tile_last_error(ctx), "interrupted"), "%s", tile_last_error(ctx));
    cr_expect_str_eq(busy.why, "", "%s", busy.why);
    /* the next launch runs: three steps of acc * 0.5 + 1 from the values it left (not checked: the
     * interrupted launch stored nothing or everything), so start again from known ones */
    OK(tile_memcpy_htod(ctx, x, h, sizeof h));
    int32_t three = 3;
    void *args3[] = {&x, &three};
    OK(tile_launch(k, (tile_dim3){1, 1, 1}, args3, NULL));
    float out[32];
    OK(tile_memcpy_dtoh(ctx, out, x, sizeof out));
    for (int i = 0; i < 32; i++) cr_expect_eq(out[i], (float)(((i * 0.5 + 1) * 0.5 + 1) * 0.5 + 1), "x[%d] = %g", i, out[i]);
    tile_module_unload(m);
    tile_context_destroy(ctx);
    remove_dir(dir);
}
