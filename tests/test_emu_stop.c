/* test_emu_stop.c - launches on the emulator that cannot finish are stopped (issue 15: "runs any compiler's PTX,
 * exactly, and can always be stopped"), each with hand-written PTX through the device layer or the public API:
 * the time budget (an infinite loop, brx.idx loops giving way, recursion without a loop, spinners at a divergent
 * barrier, the largest grid; the report names the kernel, a block and the PTX lines its threads are at), deadlocks
 * reported at once, tile_context_interrupt from another thread, the context's and TILE_EMU_TIMEOUT's budgets (NaN
 * refused, huge ones no limit); the next launch on the device works.  The text forms and limits:
 * test_emu_forms.c. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "include/tile/tile.h"
#include "tests/interrupter.h"
#include "runtime/device.h"
#include "support/support.h"

#include "tests/emu_dev.h"
#include "tests/test_ptxas.h"

static const char *spin_ptx = HEAD
    ".visible .entry spin(.param .u64 flag)\n{\n .reg .pred %p<2>;\n .reg .b32 %r<4>;\n .reg .b64 %rd<2>;\n"
    " ld.param.u64 %rd1, [flag];\n"
    "$LOOP:\n"
    " ld.volatile.global.u32 %r1, [%rd1];\n"     /* line 11 */
    " setp.eq.u32 %p1, %r1, 0;\n"
    " @%p1 bra $LOOP;\n"                          /* line 13 */
    " ret;\n}\n";

static const char *ok_ptx = HEAD
    ".visible .entry inc(.param .u64 p)\n{\n .reg .b32 %r<2>;\n .reg .b64 %rd<2>;\n"
    " ld.param.u64 %rd1, [p];\n atom.global.add.u32 %r1, [%rd1], 1;\n ret;\n}\n";

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* An infinite loop fails at the time budget with a report naming the
 * kernel, a block and where its threads are (every thread: a loop gives
 * way to the others every EMU_QUANTUM instructions); the device stays
 * usable.  Before: the launch never returned. */
Test(stop, infinite_loop_times_out, .timeout = 60) {
    TileDevice *d = open_dev(0.5);
    TileDevModule *m, *m2;
    TileDevFunction *f = load(d, spin_ptx, "spin", &m), *g = load(d, ok_ptx, "inc", &m2);
    uint64_t flag = buffer(d, (uint32_t[]){0}, 4);
    void *params[] = {&flag};
    double t0 = seconds();
    launch_fails(d, f, (unsigned[]){4, 1, 1}, (unsigned[]){64, 1, 1}, 0, params, DEV_ERR_LAUNCH,
                 (const char *[]){"timeout", "kernel 'spin'", "0.5 s", "in block (", "TILE_EMU_TIMEOUT",
                                  "64 threads (linear index 0-63) running at PTX line 13: @%p1 bra $LOOP;", NULL});
    double took = seconds() - t0;
    cr_assert(took < 10, "the timeout took %.1f s", took);
    /* the next launches on the same device work */
    uint64_t cnt = buffer(d, (uint32_t[]){0}, 4);
    void *p2[] = {&cnt};
    launch_ok(d, g, 3, 32, p2);
    uint32_t v;
    cr_assert_eq(dev_memcpy_dtoh(d, &v, cnt, 4), DEV_OK);
    cr_assert_eq(v, 96u);
    cr_assert_eq(dev_memcpy_htod(d, flag, (uint32_t[]){1}, 4), DEV_OK);
    launch_ok(d, f, 4, 64, params); /* the flag is set: the loop ends */
    dev_module_unload(m);
    dev_module_unload(m2);
    dev_close(d);
}

/* Loops whose jump back is a brx.idx through a .branchtargets table declared before the loop (the table's
 * entries jump forward to the loop): an endless one stops at the budget, and a warp spinning that way on a
 * flag another warp sets gives way to it.  Both ran forever: the jump back was never seen as one, so
 * neither the clock nor the other threads were looked at (probeW). */
Test(stop, brx_loops_time_out_and_give_way, .timeout = 60) {
    static const char *endless = HEAD
        ".visible .entry k()\n{\n .reg .b32 %r<4>;\n mov.u32 %r1, 0;\n tab: .branchtargets L0;\n"
        "L0:\n add.u32 %r2, %r2, 1;\n brx.idx %r1, tab;\n}\n";
    static const char *spin = HEAD
        ".visible .entry s(.param .u64 out)\n{\n .reg .b32 %r<6>;\n .reg .pred %p<3>;\n .reg .b64 %rd<2>;\n"
        " .shared .align 4 .b32 flag;\n"
        " mov.u32 %r1, %tid.x;\n setp.ge.u32 %p1, %r1, 32;\n @%p1 bra SETTER;\n tab: .branchtargets SPIN, DONE;\n"
        "SPIN:\n ld.volatile.shared.u32 %r2, [flag];\n brx.idx %r2, tab;\n"
        "SETTER:\n mov.u32 %r3, 1;\n st.volatile.shared.u32 [flag], %r3;\n"
        "DONE:\n ld.param.u64 %rd1, [out];\n atom.global.add.u32 %r4, [%rd1], 1;\n ret;\n}\n";
    check_ptxas_arch(endless, "sm_80");
    check_ptxas_arch(spin, "sm_80");
    TileDevice *d = open_dev(0.5);
    TileDevModule *m, *m2;
    TileDevFunction *f = load(d, endless, "k", &m), *g = load(d, spin, "s", &m2);
    double t0 = seconds();
    launch_fails(d, f, (unsigned[]){1, 1, 1}, (unsigned[]){32, 1, 1}, 0, NULL, DEV_ERR_LAUNCH, (const char *[]){"timeout", NULL});
    cr_assert(seconds() - t0 < 10, "the timeout took %.1f s", seconds() - t0);
    uint64_t cnt = buffer(d, (uint32_t[]){0}, 4);
    launch_ok(d, g, 1, 64, (void *[]){&cnt});
    uint32_t v;
    cr_assert_eq(dev_memcpy_dtoh(d, &v, cnt, 4), DEV_OK);
    cr_assert_eq(v, 64u);
    dev_module_unload(m);
    dev_module_unload(m2);
    dev_close(d);
}

/* Recursion without a loop: f(n) calls f(n - 1) twice, 2^60 calls with no backward branch.  It stops at the
 * budget; it ran on past any budget (the clock was looked at only at backward branches). */
Test(stop, recursion_without_a_loop_times_out, .timeout = 60) {
    static const char *ptx = HEAD
        ".func (.reg .b32 r) f(.reg .b32 n)\n{\n .reg .b32 %r<4>;\n .reg .pred %p<2>;\n"
        " setp.eq.u32 %p1, n, 0;\n @%p1 bra $BASE;\n sub.u32 %r1, n, 1;\n"
        " call.uni (%r2), f, (%r1);\n call.uni (%r3), f, (%r1);\n add.u32 r, %r2, %r3;\n ret;\n"
        "$BASE:\n mov.u32 r, 1;\n ret;\n}\n"
        ".visible .entry k(.param .u64 out, .param .u32 depth)\n{\n .reg .b32 %r<4>;\n .reg .b64 %rd<2>;\n"
        " ld.param.u32 %r1, [depth];\n call.uni (%r2), f, (%r1);\n"
        " ld.param.u64 %rd1, [out];\n atom.global.add.u32 %r3, [%rd1], %r2;\n ret;\n}\n";
    check_ptxas_arch(ptx, "sm_80");
    TileDevice *d = open_dev(0.5);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint64_t out = buffer(d, (uint32_t[]){0}, 4);
    uint32_t depth = 60;
    void *params[] = {&out, &depth};
    double t0 = seconds();
    launch_fails(d, f, (unsigned[]){2, 1, 1}, (unsigned[]){32, 1, 1}, 0, params, DEV_ERR_LAUNCH,
                 (const char *[]){"timeout", "kernel 'k'", "0.5 s", NULL});
    cr_assert(seconds() - t0 < 10, "the timeout took %.1f s", seconds() - t0);
    depth = 4; /* 2^4 per thread: the same kernel runs to its end */
    cr_assert_eq(dev_memcpy_htod(d, out, (uint32_t[]){0}, 4), DEV_OK);
    launch_ok(d, f, 2, 32, params);
    uint32_t v;
    cr_assert_eq(dev_memcpy_dtoh(d, &v, out, 4), DEV_OK);
    cr_assert_eq(v, 64u * 16u);
    dev_module_unload(m);
    dev_close(d);
}

/* Half a block spins on a flag the other half sets only after a barrier
 * that the spinners never reach: the report lists both groups of threads
 * and their PTX lines. */
Test(stop, divergent_barrier_with_spinners_times_out, .timeout = 60) {
    static const char *ptx = HEAD
        ".visible .entry half(.param .u64 flag)\n{\n .reg .pred %p<3>;\n .reg .b32 %r<4>;\n .reg .b64 %rd<2>;\n"
        " ld.param.u64 %rd1, [flag];\n mov.u32 %r1, %tid.x;\n setp.ge.u32 %p1, %r1, 32;\n"
        " @%p1 bra $SPIN;\n"
        " bar.sync 0;\n"                               /* line 13 */
        " st.volatile.global.u32 [%rd1], 1;\n ret;\n"
        "$SPIN:\n"
        " ld.volatile.global.u32 %r2, [%rd1];\n"      /* line 17 */
        " setp.eq.u32 %p2, %r2, 0;\n @%p2 bra $SPIN;\n ret;\n}\n";
    TileDevice *d = open_dev(0.5);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "half", &m);
    uint64_t flag = buffer(d, (uint32_t[]){0}, 4);
    void *params[] = {&flag};
    launch_fails(d, f, (unsigned[]){1, 1, 1}, (unsigned[]){64, 1, 1}, 0, params, DEV_ERR_LAUNCH,
                 (const char *[]){"emu: timeout: the launch did not finish in time\n    at kernel 'half', PTX line ",
                                  "ran longer than 0.5 s (TILE_EMU_TIMEOUT, tile_context_options.emu_timeout_seconds); block (0,0,0) has 64 threads:",
                                  "32 threads (linear index 0-31) waiting at a barrier at PTX line 13: bar.sync 0;",
                                  "32 threads (linear index 32-63) running at PTX line 19: @%p2 bra $SPIN;", NULL});
    dev_module_unload(m);
    dev_close(d);
}

/* The largest legal grid of trivial blocks is stopped by the budget too. */
Test(stop, maximum_grid_times_out, .timeout = 60) {
    TileDevice *d = open_dev(0.5);
    TileDevModule *m;
    TileDevFunction *f = load(d, ok_ptx, "inc", &m);
    uint64_t cnt = buffer(d, (uint32_t[]){0}, 4);
    void *params[] = {&cnt};
    double t0 = seconds();
    DevStatus st = dev_launch(f, 2147483647u, 65535, 65535, 1, 1, 1, 0, NULL, params);
    cr_assert_eq(st, DEV_ERR_LAUNCH, "%s", dev_last_error(d));
    cr_assert(strstr(dev_last_error(d), "timeout") && strstr(dev_last_error(d), "blocks"), "%s", dev_last_error(d));
    cr_assert(seconds() - t0 < 10);
    launch_ok(d, f, 2, 2, params);
    dev_module_unload(m);
    dev_close(d);
}

/* Deadlocks are reported at once (no waiting for the budget): every live
 * thread waits at a barrier that cannot complete. */
Test(stop, deadlocks_reported_at_once, .timeout = 60) {
    TileDevice *d = open_dev(600);
    TileDevModule *m;
    /* divergent barriers: the halves wait at different named barriers */
    static const char *div = HEAD
        ".visible .entry div()\n{\n .reg .pred %p<2>;\n .reg .b32 %r<2>;\n"
        " mov.u32 %r1, %tid.x;\n setp.lt.u32 %p1, %r1, 32;\n"
        " @%p1 bar.sync 1;\n"                      /* line 10 */
        " @!%p1 bar.sync 2;\n"                     /* line 11 */
        " ret;\n}\n";
    double t0 = seconds();
    TileDevFunction *f = load(d, div, "div", &m);
    launch_fails(d, f, (unsigned[]){1, 1, 1}, (unsigned[]){64, 1, 1}, 0, NULL, DEV_ERR_LAUNCH,
                 (const char *[]){"deadlock: no thread of the block can proceed", "kernel 'div'", "block (0,0,0)",
                                  "64 of 64 threads are live and every one waits at a barrier, warp-synchronous instruction or mbarrier phase",
                                  "waiting at a barrier at PTX line 10: @%p1 bar.sync 1;",
                                  "waiting at a barrier at PTX line 11: @!%p1 bar.sync 2;", NULL});
    dev_module_unload(m);
    /* a thread count that the live threads never reach (the others exited) */
    static const char *exited = HEAD
        ".visible .entry ex()\n{\n .reg .pred %p<2>;\n .reg .b32 %r<2>;\n"
        " mov.u32 %r1, %tid.x;\n setp.lt.u32 %p1, %r1, 32;\n @%p1 ret;\n"
        " bar.sync 1, 96;\n ret;\n}\n";
    f = load(d, exited, "ex", &m);
    launch_fails(d, f, (unsigned[]){1, 1, 1}, (unsigned[]){96, 1, 1}, 0, NULL, DEV_ERR_LAUNCH,
                 (const char *[]){"deadlock", "32 threads (linear index 0-31) exited", "bar.sync 1, 96;", NULL});
    dev_module_unload(m);
    /* mismatched thread counts on one barrier */
    static const char *counts = HEAD
        ".visible .entry cnt()\n{\n .reg .pred %p<2>;\n .reg .b32 %r<2>;\n"
        " mov.u32 %r1, %tid.x;\n setp.lt.u32 %p1, %r1, 32;\n"
        " @%p1 bar.sync 3, 64;\n @!%p1 bar.sync 3, 96;\n ret;\n}\n";
    f = load(d, counts, "cnt", &m);
    launch_fails(d, f, (unsigned[]){1, 1, 1}, (unsigned[]){128, 1, 1}, 0, NULL, DEV_ERR_LAUNCH,
                 (const char *[]){"barrier thread counts disagree", "barrier 3", NULL});
    dev_module_unload(m);
    cr_assert(seconds() - t0 < 30, "deadlocks took %.1f s to report", seconds() - t0);
    /* lanes of a warp at different collectives, each needing the others */
    static const char *warp = HEAD
        ".visible .entry wdl()\n{\n .reg .pred %p<3>;\n .reg .b32 %r<4>;\n"
        " mov.u32 %r1, %laneid;\n setp.lt.u32 %p1, %r1, 16;\n"
        " @%p1 shfl.sync.idx.b32 %r2|%p2, %r1, 0, 31, -1;\n"     /* line 10 */
        " @!%p1 bar.warp.sync -1;\n ret;\n}\n";               /* line 11 */
    f = load(d, warp, "wdl", &m);
    launch_fails(d, f, (unsigned[]){1, 1, 1}, (unsigned[]){32, 1, 1}, 0, NULL, DEV_ERR_LAUNCH,
                 (const char *[]){"deadlock", "16 threads (linear index 0-15) waiting at a warp-synchronous instruction at PTX line 10",
                                  "16 threads (linear index 16-31) waiting at a warp-synchronous instruction at PTX line 11", NULL});
    dev_module_unload(m);
    /* a barrier every live thread reaches, with others exited, completes */
    static const char *fine = HEAD
        ".visible .entry fine()\n{\n .reg .pred %p<2>;\n .reg .b32 %r<2>;\n"
        " mov.u32 %r1, %tid.x;\n setp.lt.u32 %p1, %r1, 32;\n @%p1 ret;\n bar.sync 0;\n bar.sync 2, 64;\n ret;\n}\n";
    f = load(d, fine, "fine", &m);
    launch_ok(d, f, 2, 96, NULL);
    dev_module_unload(m);
    dev_close(d);
}

/* A context with the spin kernel (k, on a zeroed flag that is never set) and the inc kernel (k2, on a
 * zeroed counter), for launches that are stopped and the launch after them. */
typedef struct StopCtx {
    tile_context *ctx;
    tile_module *m, *m2;
    tile_kernel *k, *k2;
    tile_devptr flag, cnt;
} StopCtx;

static void stop_open(StopCtx *c, double timeout) {
    tile_context_options o = {.device = "emu", .no_disk_cache = 1, .emu_timeout_seconds = timeout};
    cr_assert_eq(tile_context_create_ex(&o, &c->ctx), TILE_OK);
    tile_context *ctx = c->ctx;
    cr_assert_eq(tile_module_load_ptx(ctx, spin_ptx, &c->m), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_module_get_kernel(c->m, "spin", &c->k), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_module_load_ptx(ctx, ok_ptx, &c->m2), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_module_get_kernel(c->m2, "inc", &c->k2), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_malloc(ctx, 4, &c->flag), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 4, &c->cnt), TILE_OK);
    cr_assert_eq(tile_memset(ctx, c->flag, 0, 4), TILE_OK);
    cr_assert_eq(tile_memset(ctx, c->cnt, 0, 4), TILE_OK);
}

/* The next launch on the context runs: 32 threads add 1 to the counter (zeroed first). */
static void stop_next_launch_runs(StopCtx *c) {
    void *args[] = {&c->cnt};
    cr_assert_eq(tile_memset(c->ctx, c->cnt, 0, 4), TILE_OK);
    cr_assert_eq(tile_launch_raw(c->k2, (tile_dim3){4, 1, 1}, (tile_dim3){8, 1, 1}, 0, args, NULL), TILE_OK, "%s", tile_last_error(c->ctx));
    uint32_t v;
    cr_assert_eq(tile_memcpy_dtoh(c->ctx, &v, c->cnt, 4), TILE_OK);
    cr_assert_eq(v, 32u);
}

static void stop_close(StopCtx *c) {
    tile_module_unload(c->m);
    tile_module_unload(c->m2);
    tile_context_destroy(c->ctx);
}

/* Through the public API: the context's emu_timeout_seconds, TILE_ERROR_LAUNCH,
 * and the next launch on the same context works. */
Test(stop, public_api_timeout_and_next_launch, .timeout = 60) {
    StopCtx c;
    stop_open(&c, 0.5);
    tile_context *ctx = c.ctx;
    tile_kernel *k = c.k;
    void *args[] = {&c.flag};
    tile_status st = tile_launch_raw(k, (tile_dim3){2, 1, 1}, (tile_dim3){32, 1, 1}, 0, args, NULL);
    cr_assert_eq(st, TILE_ERROR_LAUNCH, "%s", tile_last_error(ctx));
    const char *e = tile_last_error(ctx);
    cr_assert(strstr(e, "timeout") && strstr(e, "kernel 'spin'") && strstr(e, "block (") && strstr(e, "PTX line 13"), "%s", e);
    /* blocks that never started: a spin on a later block's write is named as the likely cause */
    st = tile_launch_raw(k, (tile_dim3){4096, 1, 1}, (tile_dim3){32, 1, 1}, 0, args, NULL);
    cr_assert_eq(st, TILE_ERROR_LAUNCH, "%s", tile_last_error(ctx));
    e = tile_last_error(ctx);
    cr_assert(strstr(e, "of its 4096 blocks have started") && strstr(e, "waiting for one that has not started"), "%s", e);
    stop_next_launch_runs(&c);
    stop_close(&c);
}

/* tile_context_interrupt from another thread stops the running launch (a spin that would run until the
 * budget): TILE_ERROR_LAUNCH "interrupted", and the context runs the next launch.  A request stops only a
 * launch running at the time: made while none runs, it does nothing, so the requester repeats it until
 * the launch it means has returned (as the Python package does; tests/interrupter.h). */
Test(stop, interrupt_from_another_thread, .timeout = 60) {
    StopCtx c;
    stop_open(&c, 30);
    tile_context *ctx = c.ctx;
    /* idle: nothing to stop, and the request is not kept for the next launch */
    cr_assert_eq(tile_context_interrupt(ctx), TILE_OK);
    stop_next_launch_runs(&c);
    pthread_t th;
    Interrupter in = {.ctx = ctx, .period_ms = 50};
    cr_assert_eq(pthread_create(&th, NULL, interrupt_until_done, &in), 0);
    void *args[] = {&c.flag};
    double t0 = now_seconds();
    tile_status st = tile_launch_raw(c.k, (tile_dim3){2, 1, 1}, (tile_dim3){32, 1, 1}, 0, args, NULL);
    atomic_store(&in.done, 1);
    pthread_join(th, NULL);
    cr_assert_eq(st, TILE_ERROR_LAUNCH, "%s", tile_last_error(ctx));
    cr_expect(strstr(tile_last_error(ctx), "interrupted"), "%s", tile_last_error(ctx));
    cr_expect_lt(now_seconds() - t0, 10.0, "the interrupt took %.1f s", now_seconds() - t0);
    stop_next_launch_runs(&c);
    /* on a device without it (none here) it is TILE_ERROR_UNSUPPORTED; a NULL context is refused */
    cr_expect_neq(tile_context_interrupt(NULL), TILE_OK);
    stop_close(&c);
}

/* A NaN budget is neither a budget nor a spelling of none: refused, as TILE_EMU_TIMEOUT=nan is. */
Test(stop, nan_timeout_is_refused) {
    tile_context_options o = {.device = "emu", .no_disk_cache = 1, .emu_timeout_seconds = NAN};
    tile_context *ctx = NULL;
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_ERROR_INVALID_VALUE);
    cr_assert_null(ctx);
    cr_assert(strstr(tile_last_error(NULL), "emu_timeout_seconds is NaN"), "%s", tile_last_error(NULL));
}

/* A budget too large for the clock's nanoseconds (INFINITY, DBL_MAX, 1e12 s) is no budget: launches run
 * (before: the deadline overflowed and every launch failed at once with "timeout"). */
Test(stop, huge_timeouts_are_no_limit) {
    static const double tos[] = {INFINITY, DBL_MAX, 1e12, 1e9};
    for (size_t i = 0; i < sizeof tos / sizeof tos[0]; i++) {
        tile_context_options o = {.device = "emu", .no_disk_cache = 1, .emu_timeout_seconds = tos[i]};
        tile_context *ctx;
        cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK, "%g: %s", tos[i], tile_last_error(NULL));
        tile_module *m;
        tile_kernel *k;
        cr_assert_eq(tile_module_load_ptx(ctx, ok_ptx, &m), TILE_OK, "%s", tile_last_error(ctx));
        cr_assert_eq(tile_module_get_kernel(m, "inc", &k), TILE_OK, "%s", tile_last_error(ctx));
        tile_devptr cnt;
        cr_assert_eq(tile_malloc(ctx, 4, &cnt), TILE_OK);
        cr_assert_eq(tile_memset(ctx, cnt, 0, 4), TILE_OK);
        void *args[] = {&cnt};
        cr_assert_eq(tile_launch_raw(k, (tile_dim3){4, 1, 1}, (tile_dim3){8, 1, 1}, 0, args, NULL), TILE_OK, "timeout %g: %s",
                     tos[i], tile_last_error(ctx));
        uint32_t v;
        cr_assert_eq(tile_memcpy_dtoh(ctx, &v, cnt, 4), TILE_OK);
        cr_assert_eq(v, 32u, "timeout %g", tos[i]);
        tile_module_unload(m);
        tile_context_destroy(ctx);
    }
}

/* TILE_EMU_TIMEOUT sets the budget when the option is 0; a bad value makes
 * context creation fail.  (Criterion runs each test in its own process, so
 * the environment is read afresh.) */
Test(stop, env_timeout, .timeout = 60) {
    setenv("TILE_EMU_TIMEOUT", "0.25", 1);
    tile_context *ctx;
    cr_assert_eq(tile_context_create("emu", &ctx), TILE_OK);
    tile_module *m;
    tile_kernel *k;
    cr_assert_eq(tile_module_load_ptx(ctx, spin_ptx, &m), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_module_get_kernel(m, "spin", &k), TILE_OK);
    tile_devptr flag;
    cr_assert_eq(tile_malloc(ctx, 4, &flag), TILE_OK);
    cr_assert_eq(tile_memset(ctx, flag, 0, 4), TILE_OK);
    void *args[] = {&flag};
    double t0 = seconds();
    cr_assert_eq(tile_launch_raw(k, (tile_dim3){1, 1, 1}, (tile_dim3){1, 1, 1}, 0, args, NULL), TILE_ERROR_LAUNCH);
    cr_assert(strstr(tile_last_error(ctx), "ran longer than 0.25 s"), "%s", tile_last_error(ctx));
    cr_assert(seconds() - t0 < 10);
    tile_module_unload(m);
    tile_context_destroy(ctx);
    unsetenv("TILE_EMU_TIMEOUT");
}

Test(stop, env_timeout_bad_value) {
    setenv("TILE_EMU_TIMEOUT", "soon", 1);
    tile_context *ctx = NULL;
    cr_assert_eq(tile_context_create("emu", &ctx), TILE_ERROR_INVALID_VALUE);
    cr_assert_null(ctx);
    /* an explicit option does not need the variable */
    tile_context_options o = {.device = "emu", .no_disk_cache = 1, .emu_timeout_seconds = 5};
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK);
    tile_context_destroy(ctx);
    unsetenv("TILE_EMU_TIMEOUT");
}
