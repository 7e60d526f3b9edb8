/* test_emu_calls.c - calls and built-in functions of PTX on the emulator, hand-written and loaded
 * through the device layer: recursion through the param-space ABI, locals passed to callees, the depth
 * limit, printf and assert, indirect calls, twelve arguments, the device heap (malloc/free), alloca,
 * the address of a by-value parameter, kernel-parameter addresses in callees, .alias, and whole modules
 * written as nvcc, LLVM (clang) and Triton write them. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "include/tile/tile.h"
#include "runtime/device.h"
#include "support/support.h"

#include "tests/emu_dev.h"
#include "tests/test_ptxas.h"

/* Recursion through the param-space ABI, a pointer to the caller's local
 * array used by the callee, and unbounded recursion stopped at the depth
 * limit. */
Test(calls, recursion_locals_and_overflow) {
    static const char *ptx = HEAD
        ".func (.param .b32 r) fact(.param .b32 n)\n{\n .reg .pred %p<2>;\n .reg .b32 %r<5>;\n"
        " ld.param.b32 %r1, [n];\n setp.le.s32 %p1, %r1, 1;\n @%p1 bra $BASE;\n"
        " add.s32 %r2, %r1, -1;\n"
        " { .param .b32 a; .param .b32 q;\n st.param.b32 [a], %r2;\n call.uni (q), fact, (a);\n ld.param.b32 %r3, [q];\n }\n"
        " mul.lo.s32 %r4, %r3, %r1;\n st.param.b32 [r], %r4;\n ret;\n"
        "$BASE:\n st.param.b32 [r], 1;\n ret;\n}\n"
        ".func (.param .b32 r) sum3(.param .b64 p)\n{\n .reg .b32 %r<5>;\n .reg .b64 %rd<2>;\n"
        " .local .align 4 .b8 mine[16];\n"
        " ld.param.b64 %rd1, [p];\n ld.u32 %r1, [%rd1];\n ld.u32 %r2, [%rd1+4];\n ld.u32 %r3, [%rd1+8];\n"
        " st.local.u32 [mine], %r1;\n ld.local.u32 %r1, [mine];\n"
        " add.s32 %r4, %r1, %r2;\n add.s32 %r4, %r4, %r3;\n st.param.b32 [r], %r4;\n ret;\n}\n"
        ".visible .entry k(.param .u64 out, .param .u32 depth)\n{\n .reg .b32 %r<8>;\n .reg .b64 %rd<6>;\n"
        " .local .align 8 .b8 arr[12];\n"
        " ld.param.u64 %rd1, [out];\n ld.param.u32 %r1, [depth];\n mov.u32 %r2, %tid.x;\n"
        " add.s32 %r3, %r2, %r1;\n"
        " { .param .b32 a; .param .b32 q;\n st.param.b32 [a], %r3;\n call.uni (q), fact, (a);\n ld.param.b32 %r4, [q];\n }\n"
        " st.local.u32 [arr], %r2;\n st.local.u32 [arr+4], 10;\n st.local.u32 [arr+8], 100;\n"
        " mov.u64 %rd2, arr;\n cvta.local.u64 %rd3, %rd2;\n"
        " { .param .b64 a; .param .b32 q;\n st.param.b64 [a], %rd3;\n call.uni (q), sum3, (a);\n ld.param.b32 %r5, [q];\n }\n"
        " mul.wide.u32 %rd4, %r2, 8;\n add.s64 %rd5, %rd1, %rd4;\n st.global.u32 [%rd5], %r4;\n st.global.u32 [%rd5+4], %r5;\n"
        " ret;\n}\n";
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint64_t out = buffer(d, NULL, 8 * 8);
    uint32_t depth = 1;
    void *params[] = {&out, &depth};
    launch_ok(d, f, 1, 8, params);
    uint32_t o[8][2];
    cr_assert_eq(dev_memcpy_dtoh(d, o, out, sizeof o), DEV_OK);
    for (uint32_t i = 0; i < 8; i++) {
        uint32_t fact = 1;
        for (uint32_t k = 2; k <= i + 1; k++) fact *= k;
        cr_assert_eq(o[i][0], fact, "thread %u: fact %u", i, o[i][0]);
        cr_assert_eq(o[i][1], i + 110, "thread %u: sum3 %u", i, o[i][1]);
    }
    depth = 1024; /* the limit, 1024 nested calls of fact, runs (it stopped at 1024, "more than 1024", before) */
    launch_ok(d, f, 1, 1, params);
    for (depth = 1025; depth <= 5000; depth += 3975) /* fact(1025) and fact(5000) recurse past the depth limit */
        launch_fails(d, f, (unsigned[]){1, 1, 1}, (unsigned[]){1, 1, 1}, 0, params, DEV_ERR_LAUNCH,
                 (const char *[]){"call stack overflow", "more than 1024 nested calls", "in .func 'fact'", NULL});
    depth = 1;
    launch_ok(d, f, 1, 8, params);
    dev_module_unload(m);
    dev_close(d);
}

/* Runs f with stdout captured; returns the text (malloc'd). */
static char *captured_launch(TileDevice *d, TileDevFunction *f, unsigned grid, unsigned block, void **params, DevStatus *st) {
    char path[] = "/tmp/tile-emu-forms-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    fflush(stdout);
    int saved = dup(1);
    dup2(fd, 1);
    *st = dev_launch(f, grid, 1, 1, block, 1, 1, 0, NULL, params);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    close(fd);
    size_t len;
    char *text = read_file(path, &len);
    unlink(path);
    cr_assert(text);
    (void)d;
    return text;
}

/* Output past 1 MiB is dropped in block order: what is kept is the whole output of blocks 0, 1, ... up to the
 * first that does not fit, whatever order the host threads ran them in (the blocks that ended last were
 * dropped: the kept set changed from run to run with 2 or more host threads, probeW F-p1).  Every thread of
 * 600 blocks of 512 prints "block thread\n" (2.6 MB); 4 host threads. */
Test(calls, printf_overflow_keeps_the_first_blocks) {
    static const char *ptx = HEAD
        ".extern .func (.param .b32 func_retval0) vprintf(.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);\n"
        ".global .align 1 .b8 fmt[7] = {37, 117, 32, 37, 117, 10, 0};\n" /* "%u %u\n" */
        ".visible .entry k()\n{\n .reg .b32 %r<4>;\n .reg .b64 %rd<8>;\n .local .align 8 .b8 buf[8];\n"
        " mov.u32 %r1, %ctaid.x;\n mov.u32 %r2, %tid.x;\n st.local.u32 [buf], %r1;\n st.local.u32 [buf+4], %r2;\n"
        " mov.u64 %rd1, buf;\n cvta.local.u64 %rd2, %rd1;\n mov.u64 %rd3, fmt;\n cvta.global.u64 %rd4, %rd3;\n"
        " { .param .b64 p0; st.param.b64 [p0], %rd4;\n .param .b64 p1; st.param.b64 [p1], %rd2;\n .param .b32 r;\n"
        "   call.uni (r), vprintf, (p0, p1);\n ld.param.b32 %r3, [r];\n }\n ret;\n}\n";
    TileDevice *d = NULL;
    char *err = NULL;
    DevOptions o = {.emu_host_threads = 4};
    cr_assert_eq(dev_open("emu", &o, &d, &err), DEV_OK, "%s", err ? err : "");
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    DevStatus st;
    char *text = captured_launch(d, f, 600, 512, NULL, &st);
    cr_assert_eq(st, DEV_OK, "%s", dev_last_error(d));
    cr_assert(strstr(text, "beyond 1048576 bytes was dropped"), "no note in %zu bytes: %.200s", strlen(text), text);
    unsigned block = 0, thread = 0, lines = 0, b, t;
    for (const char *p = text; *p && sscanf(p, "%u %u", &b, &t) == 2; p = strchr(p, '\n') + 1, lines++) {
        cr_assert(b == block && t == thread, "line %u: block %u thread %u, want %u %u", lines, b, t, block, thread);
        if (++thread == 512) thread = 0, block++;
    }
    cr_assert_eq(thread, 0u, "block %u was cut", block);
    cr_assert_gt(block, 90u, "only %u blocks kept", block);
    free(text);
    dev_module_unload(m);
    dev_close(d);
}

/* vprintf and __assertfail, as nvcc calls them; output past 1 MiB is dropped with a note. */
Test(calls, printf_and_assert) {
    static const char *ptx = HEAD
        ".extern .func (.param .b32 func_retval0) vprintf(.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);\n"
        ".extern .func __assertfail(.param .b64 m, .param .b64 f, .param .b32 l, .param .b64 fn, .param .b64 cs);\n"
        ".global .align 1 .b8 fmt[20] = {116, 37, 100, 32, 37, 115, 32, 37, 46, 49, 102, 32, 37, 99, 10, 0};\n" /* "t%d %s %.1f %c\n" */
        ".global .align 1 .b8 word[3] = {104, 105, 0};\n"                                                        /* "hi" */
        ".global .align 1 .b8 msg[4] = {120, 62, 48, 0};\n"                                                      /* "x>0" */
        ".visible .entry k(.param .u32 mode, .param .u64 ret)\n{\n .reg .pred %p<2>;\n .reg .b32 %r<8>;\n .reg .b64 %rd<10>;\n"
        " .local .align 8 .b8 buf[32];\n"
        " mov.u32 %r1, %tid.x;\n ld.param.u32 %r2, [mode];\n setp.eq.u32 %p1, %r2, 1;\n @%p1 bra $ASSERT;\n"
        " mov.u64 %rd1, buf;\n cvta.local.u64 %rd2, %rd1;\n"
        " st.local.u32 [buf], %r1;\n mov.u64 %rd3, word;\n cvta.global.u64 %rd4, %rd3;\n st.local.u64 [buf+8], %rd4;\n"
        " mov.u64 %rd5, 4612811918334230528;\n st.local.u64 [buf+16], %rd5;\n st.local.u32 [buf+24], 90;\n" /* 2.5, 'Z' */
        " mov.u64 %rd6, fmt;\n cvta.global.u64 %rd7, %rd6;\n"
        " { .param .b64 p0; st.param.b64 [p0], %rd7;\n .param .b64 p1; st.param.b64 [p1], %rd2;\n .param .b32 r;\n"
        "   call.uni (r), vprintf, (p0, p1);\n ld.param.b32 %r3, [r];\n }\n"
        " ld.param.u64 %rd8, [ret];\n st.global.u32 [%rd8], %r3;\n ret;\n"
        "$ASSERT:\n mov.u64 %rd6, msg;\n cvta.global.u64 %rd7, %rd6;\n mov.u64 %rd3, word;\n cvta.global.u64 %rd4, %rd3;\n"
        " { .param .b64 a0; st.param.b64 [a0], %rd7;\n .param .b64 a1; st.param.b64 [a1], %rd4;\n .param .b32 a2; st.param.b32 [a2], 42;\n"
        "   .param .b64 a3; st.param.b64 [a3], %rd4;\n .param .b64 a4; st.param.b64 [a4], 1;\n"
        "   call.uni __assertfail, (a0, a1, a2, a3, a4);\n }\n ret;\n}\n";
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint64_t ret = buffer(d, NULL, 4);
    uint32_t mode = 0;
    void *params[] = {&mode, &ret};
    DevStatus st;
    char *text = captured_launch(d, f, 2, 3, params, &st);
    cr_assert_eq(st, DEV_OK, "%s", dev_last_error(d));
    cr_assert_str_eq(text, "t0 hi 2.5 Z\nt1 hi 2.5 Z\nt2 hi 2.5 Z\nt0 hi 2.5 Z\nt1 hi 2.5 Z\nt2 hi 2.5 Z\n");
    free(text);
    uint32_t r;
    cr_assert_eq(dev_memcpy_dtoh(d, &r, ret, 4), DEV_OK);
    cr_assert_eq(r, 4u, "vprintf returns the number of arguments: %u", r);
    /* 2 x 1024 threads x 12 bytes fit; 200 blocks do not: the rest is dropped, with a note */
    text = captured_launch(d, f, 200, 1024, params, &st);
    cr_assert_eq(st, DEV_OK, "%s", dev_last_error(d));
    cr_assert(strlen(text) <= (1 << 20) + 200 && strstr(text, "beyond 1048576 bytes was dropped"), "%zu bytes", strlen(text));
    free(text);
    mode = 1;
    launch_fails(d, f, (unsigned[]){1, 1, 1}, (unsigned[]){1, 1, 1}, 0, params, DEV_ERR_LAUNCH,
                 (const char *[]){"assertion failed", "hi:42: hi: Assertion `x>0` failed.", NULL});
    dev_module_unload(m);
    dev_close(d);
}

/* Peak resident memory of this process, in MiB. */
static double peak_mib(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024.0;
}

/* printf formats from a buffer, `reps` times by one thread: widths and precisions past what a launch keeps
 * (1 MiB: the block's output is dropped whole) are printed as dropped, in little time and memory.  Before:
 * "%2000000000d" padded 2 GB on the host (past INT_MAX, vsnprintf failed and the length went wrong), a
 * '*' width of INT_MIN was negated (undefined), and a block printing in a loop kept all its output until the
 * launch ended.  Widths and precisions that fit print as before. */
Test(calls, printf_huge_widths_and_endless_output, .timeout = 120) {
    static const char *ptx = HEAD
        ".extern .func (.param .b32 func_retval0) vprintf(.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);\n"
        ".visible .entry pf(.param .u64 fmt, .param .u64 args, .param .u32 reps, .param .u64 ret)\n{\n"
        " .reg .pred %p<2>;\n .reg .b32 %r<4>;\n .reg .b64 %rd<4>;\n"
        " ld.param.u64 %rd1, [fmt];\n ld.param.u64 %rd2, [args];\n ld.param.u32 %r1, [reps];\n"
        "$L:\n { .param .b64 p0; st.param.b64 [p0], %rd1;\n .param .b64 p1; st.param.b64 [p1], %rd2;\n .param .b32 r;\n"
        "   call.uni (r), vprintf, (p0, p1);\n ld.param.b32 %r2, [r];\n }\n"
        " sub.u32 %r1, %r1, 1;\n setp.ne.u32 %p1, %r1, 0;\n @%p1 bra $L;\n"
        " ld.param.u64 %rd3, [ret];\n st.global.u32 [%rd3], %r2;\n ret;\n}\n";
    check_ptxas_arch(ptx, "sm_80");
    TileDevice *d = open_dev(60);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "pf", &m);
    struct {
        const char *fmt;
        uint32_t reps, nargs;
        const char *want; /* the whole output, or NULL: dropped, with the note */
    } cases[] = {
        {"[%12d|%-*d|%.*f|%05.1f]\n", 1, 6, "[          42|7   |1.50|001.5]\n"},
        {"%2000000000d|%.2000000000f\n", 1, 2, NULL},
        {"%*d|%99999999999999999999999d|%.*d\n", 1, 5, NULL}, /* a width of INT_MIN, then a huge one */
        {"%*d|%.*d\n", 2, 4, "-2147483648|00000000042\n-2147483648|00000000042\n"}, /* INT_MIN as a value */
        {"%60000d\n", 2000, 1, NULL},                                                /* 120 MB from one thread */
    };
    uint32_t args_[8][8] = {
        {42, (uint32_t)-4, 7, 2, 0, 0, 0, 0},
        {42, 0, 0, 0, 0, 0, 0, 0},
        {0x80000000u, 42, 7, 3000000000u, 5, 0, 0, 0},
        {11, 0x80000000u, 11, 42, 0, 0, 0, 0},
        {42, 0, 0, 0, 0, 0, 0, 0},
    };
    double x = 1.5; /* the doubles: 8-byte aligned after the ints */
    memcpy(&args_[0][4], &x, 8);
    memcpy(&args_[0][6], &x, 8);
    memcpy(&args_[1][2], &x, 8);
    uint64_t ret = buffer(d, NULL, 4);
    double peak0 = peak_mib();
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        uint64_t fmt = buffer(d, cases[i].fmt, strlen(cases[i].fmt) + 1), args = buffer(d, args_[i], sizeof args_[i]);
        uint32_t reps = cases[i].reps;
        void *params[] = {&fmt, &args, &reps, &ret};
        DevStatus st;
        double t0 = now_seconds();
        char *text = captured_launch(d, f, 1, 1, params, &st);
        double took = now_seconds() - t0;
        cr_assert_eq(st, DEV_OK, "case %zu: %s", i, dev_last_error(d));
        if (cases[i].want) cr_assert_str_eq(text, cases[i].want, "case %zu", i);
        else cr_assert_str_eq(text, "emu: printf output of kernel 'pf' beyond 1048576 bytes was dropped\n", "case %zu", i);
        free(text);
        uint32_t r;
        cr_assert_eq(dev_memcpy_dtoh(d, &r, ret, 4), DEV_OK);
        cr_assert_eq(r, cases[i].nargs, "case %zu: vprintf returned %u", i, r);
        cr_assert_lt(took, 20, "case %zu took %.1f s", i, took);
        cr_assert_lt(peak_mib() - peak0, 64, "case %zu: the peak memory grew by %.0f MiB", i, peak_mib() - peak0);
    }
    dev_module_unload(m);
    dev_close(d);
}

/* Indirect calls, as nvcc -G writes them for libcu++'s atomics: a function's address taken with mov, a
 * .callprototype label, `call [(rets),] %rd, (args), prototype;`.  Before: 'unknown label or symbol' at
 * the mov.  An address that is no function's, or a call whose arguments do not match the callee, stops the
 * launch. */
Test(calls, indirect_through_a_register) {
    static const char *ptx = HEAD
        ".func (.param .b32 r) twice(.param .b32 x)\n{\n .reg .b32 %r<3>;\n"
        " ld.param.b32 %r1, [x];\n add.s32 %r2, %r1, %r1;\n st.param.b32 [r], %r2;\n ret;\n}\n"
        ".func (.param .b32 r) square(.param .b32 x)\n{\n .reg .b32 %r<3>;\n"
        " ld.param.b32 %r1, [x];\n mul.lo.s32 %r2, %r1, %r1;\n st.param.b32 [r], %r2;\n ret;\n}\n"
        ".func store1(.param .b64 p, .param .b32 v)\n{\n .reg .b32 %r<2>;\n .reg .b64 %rd<2>;\n"
        " ld.param.b64 %rd1, [p];\n ld.param.b32 %r1, [v];\n st.u32 [%rd1], %r1;\n ret;\n}\n"
        ".visible .entry k(.param .u64 out, .param .u64 bad)\n{\n .reg .pred %p<2>;\n .reg .b32 %r<6>;\n .reg .b64 %rd<8>;\n"
        " ld.param.u64 %rd1, [out];\n ld.param.u64 %rd6, [bad];\n mov.u32 %r1, %tid.x;\n"
        " and.b32 %r2, %r1, 1;\n setp.eq.s32 %p1, %r2, 0;\n"
        " mov.u64 %rd2, twice;\n mov.u64 %rd3, square;\n selp.b64 %rd4, %rd2, %rd3, %p1;\n add.s64 %rd4, %rd4, %rd6;\n"
        " { .param .b32 a; .param .b32 q;\n st.param.b32 [a], %r1;\n"
        " proto_1 : .callprototype (.param .b32 _) _ (.param .b32 _);\n"
        " call (q), %rd4, (a), proto_1;\n ld.param.b32 %r3, [q];\n }\n"
        " mul.wide.u32 %rd5, %r1, 4;\n add.s64 %rd5, %rd1, %rd5;\n mov.u64 %rd7, store1;\n"
        " { .param .b64 a; .param .b32 b;\n st.param.b64 [a], %rd5;\n st.param.b32 [b], %r3;\n"
        " proto_2 : .callprototype ()_ (.param .b64 _, .param .b32 _);\n"
        " call %rd7, (a, b), proto_2;\n }\n"
        " ret;\n}\n";
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint64_t out = buffer(d, NULL, 32 * 4), bad = 0;
    void *params[] = {&out, &bad};
    launch_ok(d, f, 1, 32, params);
    uint32_t o[32];
    cr_assert_eq(dev_memcpy_dtoh(d, o, out, sizeof o), DEV_OK);
    for (uint32_t i = 0; i < 32; i++) cr_assert_eq(o[i], i % 2 ? i * i : 2 * i, "thread %u: %u", i, o[i]);
    bad = 8; /* between two functions' addresses */
    launch_fails(d, f, (unsigned[]){1, 1, 1}, (unsigned[]){1, 1, 1}, 0, params, DEV_ERR_LAUNCH,
                 (const char *[]){"invalid call", "not the address of a function", NULL});
    bad = 32; /* twice + 32 is store1, which takes two arguments and returns nothing */
    launch_fails(d, f, (unsigned[]){1, 1, 1}, (unsigned[]){1, 1, 1}, 0, params, DEV_ERR_LAUNCH,
                 (const char *[]){"indirect call of 'store1' with 1 argument and 1 return value; it takes 2 and 0", NULL});
    dev_module_unload(m);
    load_fails(d, HEAD ".visible .entry k()\n{\n .reg .b64 %rd<2>;\n mov.u64 %rd1, k;\n ret;\n}\n",
               "ptx:7: the address of kernel entry 'k' is taken (mov): a kernel launched from the device (CUDA dynamic parallelism)");
    dev_close(d);
}

/* Calls with more than 8 arguments (thrust::merge_by_key takes 10 at -G; nvcc keeps a __noinline__ function's
 * parameters as they are).  Before: "more than 8 call arguments" refused the whole module. */
Test(calls, twelve_arguments) {
    static const char *ptx = HEAD
        ".func (.param .b32 r) wsum(%s)\n{\n .reg .b32 %%r<24>;\n mov.u32 %%r20, 0;\n"
        "%s"
        " st.param.b32 [r], %%r20;\n ret;\n}\n"
        ".visible .entry k(.param .u64 out)\n{\n .reg .b32 %%r<4>;\n .reg .b64 %%rd<2>;\n ld.param.u64 %%rd1, [out];\n"
        " {\n .param .b32 q;\n%s call (q), wsum, (%s);\n ld.param.b32 %%r1, [q];\n }\n"
        " st.global.u32 [%%rd1], %%r1;\n ret;\n}\n";
    char src[8192];
    snprintf(src, sizeof src, ptx, ".param .b32 a0, .param .b32 a1, .param .b32 a2, .param .b32 a3, .param .b32 a4, .param .b32 a5, .param .b32 a6, .param .b32 a7, .param .b32 a8, .param .b32 a9, .param .b32 a10, .param .b32 a11", " ld.param.b32 %r1, [a0];\n mad.lo.s32 %r20, %r1, 1, %r20;\n ld.param.b32 %r2, [a1];\n mad.lo.s32 %r20, %r2, 2, %r20;\n ld.param.b32 %r3, [a2];\n mad.lo.s32 %r20, %r3, 3, %r20;\n ld.param.b32 %r4, [a3];\n mad.lo.s32 %r20, %r4, 4, %r20;\n ld.param.b32 %r5, [a4];\n mad.lo.s32 %r20, %r5, 5, %r20;\n ld.param.b32 %r6, [a5];\n mad.lo.s32 %r20, %r6, 6, %r20;\n ld.param.b32 %r7, [a6];\n mad.lo.s32 %r20, %r7, 7, %r20;\n ld.param.b32 %r8, [a7];\n mad.lo.s32 %r20, %r8, 8, %r20;\n ld.param.b32 %r9, [a8];\n mad.lo.s32 %r20, %r9, 9, %r20;\n ld.param.b32 %r10, [a9];\n mad.lo.s32 %r20, %r10, 10, %r20;\n ld.param.b32 %r11, [a10];\n mad.lo.s32 %r20, %r11, 11, %r20;\n ld.param.b32 %r12, [a11];\n mad.lo.s32 %r20, %r12, 12, %r20;\n", " .param .b32 p0;\n st.param.b32 [p0], 1;\n .param .b32 p1;\n st.param.b32 [p1], 2;\n .param .b32 p2;\n st.param.b32 [p2], 3;\n .param .b32 p3;\n st.param.b32 [p3], 4;\n .param .b32 p4;\n st.param.b32 [p4], 5;\n .param .b32 p5;\n st.param.b32 [p5], 6;\n .param .b32 p6;\n st.param.b32 [p6], 7;\n .param .b32 p7;\n st.param.b32 [p7], 8;\n .param .b32 p8;\n st.param.b32 [p8], 9;\n .param .b32 p9;\n st.param.b32 [p9], 10;\n .param .b32 p10;\n st.param.b32 [p10], 11;\n .param .b32 p11;\n st.param.b32 [p11], 12;\n", "p0, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11");
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, src, "k", &m);
    uint64_t out = buffer(d, NULL, 4);
    launch_ok(d, f, 1, 1, (void *[]){&out});
    uint32_t o;
    cr_assert_eq(dev_memcpy_dtoh(d, &o, out, 4), DEV_OK);
    uint32_t want = 0;
    for (uint32_t i = 1; i <= 12; i++) want += i * i; /* argument i is i, weighted by i */
    cr_assert_eq(o, want, "wsum: %u, want %u", o, want);
    dev_module_unload(m);
    dev_close(d);
}

/* The argument limits docs/emulator.md gives: a call takes up to 128 arguments (a 129th is refused at load), and
 * a float literal is an argument among the first 64 (converted to the parameter's type: 1.5, a double, into an
 * .f32 one); one later is refused at load, not passed as its bits or taken for another argument's. */
static char *many_args_ptx(int nargs, int lit) {
    size_t cap = 64 * 1024, n = 0;
    char *s = malloc(cap);
    cr_assert(s);
#define PUT(...) do { n += (size_t)snprintf(s + n, cap - n, __VA_ARGS__); cr_assert_lt(n, cap); } while (0)
    PUT(HEAD ".func (.param .f32 r) sum(");
    for (int k = 0; k < nargs; k++) PUT("%s.param .f32 a%d", k ? ", " : "", k);
    PUT(")\n{\n .reg .f32 %%f<3>;\n mov.f32 %%f1, 0f00000000;\n");
    for (int k = 0; k < nargs; k++) PUT(" ld.param.f32 %%f2, [a%d];\n add.f32 %%f1, %%f1, %%f2;\n", k);
    PUT(" st.param.f32 [r], %%f1;\n ret;\n}\n.visible .entry k(.param .u64 out)\n{\n .reg .f32 %%f<3>;\n .reg .b64 %%rd<2>;\n"
        " ld.param.u64 %%rd1, [out];\n {\n .param .f32 q;\n");
    for (int k = 0; k < nargs; k++)
        if (k != lit) PUT(" .param .f32 p%d;\n st.param.f32 [p%d], %d.0;\n", k, k, k);
    PUT(" call (q), sum, (");
    for (int k = 0; k < nargs; k++) PUT(k == lit ? "%s1.5" : "%sp%d", k ? ", " : "", k);
    PUT(");\n ld.param.f32 %%f1, [q];\n }\n st.global.f32 [%%rd1], %%f1;\n ret;\n}\n");
#undef PUT
    return s;
}

Test(calls, argument_limits) {
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    char *src = many_args_ptx(128, 63);
    TileDevFunction *f = load(d, src, "k", &m);
    uint64_t out = buffer(d, NULL, 4);
    launch_ok(d, f, 1, 1, (void *[]){&out});
    float o;
    cr_assert_eq(dev_memcpy_dtoh(d, &o, out, 4), DEV_OK);
    cr_assert_eq(o, 127 * 128 / 2 - 63 + 1.5f, "sum of 128 arguments: %g", o); /* argument k is k, but 63 is 1.5 */
    dev_module_unload(m);
    free(src);
    src = many_args_ptx(129, -1);
    cr_assert_eq(dev_module_load_ptx(d, src, &m), DEV_ERR_PTX, "129 arguments loaded");
    cr_assert(strstr(dev_last_error(d), "more than 128 call arguments"), "%s", dev_last_error(d));
    free(src);
    src = many_args_ptx(128, 64);
    cr_assert_eq(dev_module_load_ptx(d, src, &m), DEV_ERR_PTX, "a float literal as argument 65 loaded");
    cr_assert(strstr(dev_last_error(d), "unsupported call argument '1.5': a float literal after the 64th argument"), "%s",
              dev_last_error(d));
    free(src);
    dev_close(d);
}

/* Device malloc/free (new/delete, thrust::sort(thrust::seq) in device code): every thread of 3 blocks takes
 * a piece, fills it, reads it back and frees it, on several host threads at once; pieces are 16-byte aligned
 * and never overlap while held; past the heap (8 MiB) malloc gives NULL; free(NULL) is nothing; a second
 * free of a piece stops the launch.  Before: the module did not load ("call of 'malloc', which has no body"). */
Test(calls, device_malloc_free) {
    static const char *ptx = HEAD
        ".extern .func (.param .b64 func_retval0) malloc(.param .b64 malloc_param_0);\n"
        ".extern .func free(.param .b64 free_param_0);\n"
        ".visible .entry k(.param .u64 out, .param .u64 sz, .param .u32 twice)\n{\n"
        " .reg .pred %p<4>;\n .reg .b32 %r<12>;\n .reg .b64 %rd<12>;\n"
        " ld.param.u64 %rd1, [out];\n ld.param.u64 %rd2, [sz];\n ld.param.u32 %r9, [twice];\n"
        " mov.u32 %r1, %tid.x;\n mov.u32 %r2, %ctaid.x;\n mov.u32 %r3, %ntid.x;\n mad.lo.s32 %r4, %r2, %r3, %r1;\n"
        " { .param .b64 a;\n .param .b64 r;\n st.param.b64 [a], %rd2;\n call.uni (r), malloc, (a);\n ld.param.b64 %rd3, [r];\n }\n"
        " mul.wide.u32 %rd4, %r4, 16;\n add.s64 %rd4, %rd1, %rd4;\n st.global.u64 [%rd4], %rd3;\n"  /* out[gid] = {ptr, sum} */
        " setp.eq.u64 %p1, %rd3, 0;\n @%p1 bra $FREE;\n"
        " mul.lo.s32 %r5, %r4, 1000;\n st.u32 [%rd3], %r5;\n add.s32 %r6, %r5, 7;\n st.u32 [%rd3+36], %r6;\n"
        " bar.sync 0;\n"  /* every piece of the block is held here: none may overlap another */
        " ld.u32 %r7, [%rd3];\n ld.u32 %r8, [%rd3+36];\n add.s32 %r7, %r7, %r8;\n st.global.u32 [%rd4+8], %r7;\n"
        "$FREE:\n { .param .b64 a;\n st.param.b64 [a], %rd3;\n call.uni free, (a);\n }\n"
        " setp.ne.u32 %p2, %r9, 0;\n @!%p2 bra $END;\n"
        " { .param .b64 a;\n st.param.b64 [a], %rd3;\n call.uni free, (a);\n }\n"
        "$END:\n ret;\n}\n";
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    enum { N = 3 * 64 };
    uint64_t out = buffer(d, NULL, N * 16), sz = 40;
    uint32_t twice = 0;
    void *params[] = {&out, &sz, &twice};
    for (int round = 0; round < 2; round++) { /* the second round reuses the freed pieces */
        launch_ok(d, f, 3, 64, params);
        uint64_t o[N][2];
        cr_assert_eq(dev_memcpy_dtoh(d, o, out, sizeof o), DEV_OK);
        for (int i = 0; i < N; i++) {
            cr_assert(o[i][0] && o[i][0] % 16 == 0, "round %d thread %d: piece 0x%llx", round, i, (unsigned long long)o[i][0]);
            cr_assert_eq((uint32_t)o[i][1], (uint32_t)(2 * 1000 * i + 7), "round %d thread %d: read back %u", round, i, (uint32_t)o[i][1]);
            for (int j = 0; j < i; j++)
                if (i / 64 == j / 64) /* held together in one block: apart by at least the 48 bytes a piece takes */
                    cr_assert(o[i][0] >= o[j][0] + 48 || o[j][0] >= o[i][0] + 48, "threads %d and %d share memory", i, j);
        }
    }
    sz = 9u << 20; /* more than the heap: NULL, and free(NULL) is fine */
    launch_ok(d, f, 1, 32, params);
    uint64_t o0[2];
    cr_assert_eq(dev_memcpy_dtoh(d, o0, out, sizeof o0), DEV_OK);
    cr_assert_eq(o0[0], 0, "malloc(9 MiB) gave 0x%llx", (unsigned long long)o0[0]);
    sz = 40, twice = 1;
    launch_fails(d, f, (unsigned[]){1, 1, 1}, (unsigned[]){1, 1, 1}, 0, params, DEV_ERR_LAUNCH,
                 (const char *[]){"invalid free", "which is no piece malloc gave", NULL});
    dev_module_unload(m);
    dev_close(d);
}

/* alloca, stacksave, stackrestore (C's alloca, VLAs in a loop): each iteration saves the stack pointer,
 * takes n+1 words aligned to 64, fills and sums them, and restores it, so every iteration gets the same
 * address back; a call after an alloca keeps its own locals apart from the alloca'd words; a read past what
 * alloca took is memcheck's.  Before: "unsupported instruction 'alloca.u64'" refused the module. */
Test(calls, alloca_stacksave_restore) {
    static const char *ptx = HEAD
        ".func (.param .b32 r) clobber(.param .b32 x)\n{\n .reg .b32 %r<4>;\n .reg .b64 %rd<4>;\n .local .align 4 .b8 loc[64];\n"
        " ld.param.b32 %r1, [x];\n mov.u64 %rd1, loc;\n st.local.u32 [%rd1], %r1;\n st.local.u32 [%rd1+60], %r1;\n"
        " ld.local.u32 %r2, [%rd1+60];\n st.param.b32 [r], %r2;\n ret;\n}\n"
        ".visible .entry k(.param .u64 out, .param .u32 past)\n{\n .reg .pred %p<4>;\n .reg .b32 %r<16>;\n .reg .b64 %rd<16>;\n"
        " ld.param.u64 %rd1, [out];\n ld.param.u32 %r12, [past];\n mov.u32 %r1, %tid.x;\n mov.u32 %r2, 0;\n mov.u32 %r3, 0;\n"
        "$IT:\n stacksave.u64 %rd2;\n add.s32 %r4, %r1, %r2;\n add.s32 %r4, %r4, 1;\n mul.wide.u32 %rd3, %r4, 4;\n"
        " alloca.u64 %rd4, %rd3, 64;\n cvta.local.u64 %rd5, %rd4;\n"
        " and.b64 %rd6, %rd4, 63;\n cvt.u32.u64 %r13, %rd6;\n or.b32 %r3, %r3, %r13;\n"  /* misalignment, if any */
        " mov.u32 %r5, 0;\n mov.u32 %r6, 0;\n"
        "$FILL:\n mul.wide.u32 %rd7, %r5, 4;\n add.s64 %rd8, %rd5, %rd7;\n st.u32 [%rd8], %r5;\n add.s32 %r5, %r5, 1;\n"
        " setp.lt.u32 %p1, %r5, %r4;\n @%p1 bra $FILL;\n"
        " { .param .b32 a;\n .param .b32 q;\n st.param.b32 [a], 77;\n call.uni (q), clobber, (a);\n ld.param.b32 %r7, [q];\n }\n"
        " mov.u32 %r5, 0;\n"
        "$SUM:\n mul.wide.u32 %rd7, %r5, 4;\n add.s64 %rd8, %rd5, %rd7;\n ld.u32 %r8, [%rd8];\n add.s32 %r6, %r6, %r8;\n"
        " add.s32 %r5, %r5, 1;\n setp.lt.u32 %p1, %r5, %r4;\n @%p1 bra $SUM;\n"
        " setp.ne.u32 %p2, %r12, 0;\n @!%p2 bra $NOPAST;\n mul.wide.u32 %rd9, %r4, 4;\n add.s64 %rd10, %rd5, %rd9;\n"
        " ld.u32 %r9, [%rd10];\n"  /* one word past the alloca */
        "$NOPAST:\n add.s32 %r6, %r6, %r7;\n"
        " stackrestore.u64 %rd2;\n"
        " mad.lo.s32 %r10, %r1, 4, %r2;\n mul.wide.u32 %rd11, %r10, 8;\n add.s64 %rd12, %rd1, %rd11;\n"
        " st.global.u32 [%rd12], %r6;\n cvt.u32.u64 %r11, %rd4;\n st.global.u32 [%rd12+4], %r11;\n"
        " add.s32 %r2, %r2, 1;\n setp.lt.u32 %p3, %r2, 4;\n @%p3 bra $IT;\n"
        " st.global.u32 [%rd1+1024], %r3;\n ret;\n}\n";
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint64_t out = buffer(d, NULL, 1028);
    uint32_t past = 0;
    void *params[] = {&out, &past};
    launch_ok(d, f, 1, 32, params);
    uint32_t o[257];
    cr_assert_eq(dev_memcpy_dtoh(d, o, out, sizeof o), DEV_OK);
    for (uint32_t t = 0; t < 32; t++)
        for (uint32_t it = 0; it < 4; it++) {
            uint32_t n = t + it + 1, i = t * 4 + it;
            cr_assert_eq(o[2 * i], n * (n - 1) / 2 + 77, "thread %u iteration %u: sum %u", t, it, o[2 * i]);
            cr_assert_eq(o[2 * i + 1], o[2 * t * 4 + 1], "thread %u iteration %u: alloca at 0x%x, the first at 0x%x (restored?)", t, it,
                         o[2 * i + 1], o[2 * t * 4 + 1]);
        }
    cr_assert_eq(o[256], 0u, "an alloca was not 64-byte aligned: low bits 0x%x", o[256]);
    past = 1;
    launch_fails(d, f, (unsigned[]){1, 1, 1}, (unsigned[]){1, 1, 1}, 0, params, DEV_ERR_MEMCHECK,
                 (const char *[]){"memcheck: invalid __local__ read", NULL});
    dev_module_unload(m);
    dev_close(d);
}

/* A .func's own parameters live in its frame's local memory (the PTX ISA puts them in .local when their
 * address is taken): clang passes a struct by value so, `mov.b64 %rd, fn_param_0` then ld.local/st.local or
 * cvta.local, and the address may escape into a callee.  Before: memcheck "invalid __local__ read" at
 * 0x20000000 + offset (the parameter-space address).  Every thread gets its own copy. */
Test(calls, address_of_a_by_value_parameter) {
    static const char *ptx = HEAD
        ".func (.param .b32 r) sum(.param .b64 p, .param .b32 n)\n{\n .reg .pred %p<2>;\n .reg .b32 %r<8>;\n .reg .b64 %rd<4>;\n"
        " ld.param.u64 %rd1, [p];\n ld.param.u32 %r1, [n];\n mov.u32 %r2, 0;\n mov.u32 %r3, 0;\n"
        "$L:\n mul.wide.u32 %rd2, %r3, 4;\n add.s64 %rd3, %rd1, %rd2;\n ld.u32 %r4, [%rd3];\n add.s32 %r5, %r3, 1;\n"
        " mad.lo.s32 %r2, %r4, %r5, %r2;\n mov.u32 %r3, %r5;\n setp.lt.u32 %p1, %r3, %r1;\n @%p1 bra $L;\n"
        " st.param.b32 [r], %r2;\n ret;\n}\n"
        ".func (.param .b32 r) get(.param .align 4 .b8 s[16], .param .b32 n)\n{\n .reg .b32 %r<8>;\n .reg .b64 %rd<4>;\n"
        " mov.b64 %rd1, s;\n ld.local.u32 %r1, [%rd1];\n add.s32 %r1, %r1, 100;\n st.local.u32 [%rd1], %r1;\n"
        " ld.param.u32 %r6, [s+4];\n"  /* the same bytes through the parameter's name */
        " cvta.local.u64 %rd2, %rd1;\n ld.param.u32 %r2, [n];\n"
        " { .param .b64 a;\n .param .b32 b;\n .param .b32 q;\n st.param.b64 [a], %rd2;\n st.param.b32 [b], %r2;\n"
        " call.uni (q), sum, (a, b);\n ld.param.b32 %r3, [q];\n }\n"
        " mad.lo.s32 %r3, %r6, 1000, %r3;\n st.param.b32 [r], %r3;\n ret;\n}\n"
        ".visible .entry k(.param .u64 in, .param .u64 out)\n{\n .reg .b32 %r<8>;\n .reg .b64 %rd<8>;\n"
        " ld.param.u64 %rd1, [in];\n ld.param.u64 %rd2, [out];\n mov.u32 %r1, %tid.x;\n mul.wide.u32 %rd3, %r1, 8;\n"
        " add.s64 %rd4, %rd1, %rd3;\n ld.global.u32 %r2, [%rd4];\n ld.global.u32 %r3, [%rd4+4];\n"
        " { .param .align 4 .b8 s[16];\n .param .b32 n;\n .param .b32 q;\n"
        " st.param.u32 [s], %r2;\n st.param.u32 [s+4], %r3;\n st.param.u32 [s+8], 5;\n st.param.u32 [s+12], 7;\n"
        " st.param.b32 [n], 4;\n call.uni (q), get, (s, n);\n ld.param.b32 %r4, [q];\n }\n"
        " mul.wide.u32 %rd5, %r1, 4;\n add.s64 %rd6, %rd2, %rd5;\n st.global.u32 [%rd6], %r4;\n ret;\n}\n";
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint32_t in[64];
    for (int i = 0; i < 64; i++) in[i] = (uint32_t)(i * 7 + 3);
    uint64_t din = buffer(d, in, sizeof in), dout = buffer(d, NULL, 32 * 4);
    launch_ok(d, f, 1, 32, (void *[]){&din, &dout});
    uint32_t o[32];
    cr_assert_eq(dev_memcpy_dtoh(d, o, dout, sizeof o), DEV_OK);
    for (uint32_t t = 0; t < 32; t++) {
        uint32_t a = in[2 * t], bb = in[2 * t + 1], want = (a + 100) + 2 * bb + 3 * 5 + 4 * 7 + 1000 * bb;
        cr_assert_eq(o[t], want, "thread %u: %u, want %u", t, o[t], want);
    }
    dev_module_unload(m);
    dev_close(d);
}

/* The address of a kernel parameter names that parameter in every callee: nvcc passes a `__grid_constant__`
 * struct by reference to a non-inlined function so (`mov.b64 %rd, s` and `cvta.param`, then a generic `ld` in
 * the callee; the PTX ISA: "the address of a kernel parameter may be moved into a register using mov, and
 * then used by ld.param", or by generic loads after cvta.param).  Before: at call depth 1 and more every
 * param-space address was taken for one of the callee's own parameters (which sit at the same small
 * offsets), so get() read its own arguments: 0, 0, 0, 12288, ... instead of 100, 101, ...  (probeP F4). */
Test(calls, kernel_parameter_address_in_a_callee) {
    static const char *ptx = HEAD
        ".func (.param .b32 r) get(.param .b64 gp, .param .b32 i)\n{\n .reg .b32 %r<4>;\n .reg .b64 %rd<4>;\n"
        " ld.param.u64 %rd1, [gp];\n ld.param.u32 %r1, [i];\n mul.wide.s32 %rd2, %r1, 4;\n add.s64 %rd3, %rd1, %rd2;\n"
        " ld.u32 %r2, [%rd3];\n st.param.b32 [r], %r2;\n ret;\n}\n"
        /* the param-space address read with ld.param, and the generic one passed on to a second level */
        ".func (.param .b32 r) getp(.param .b64 sp, .param .b64 gp, .param .b32 i)\n{\n .reg .b32 %r<8>;\n .reg .b64 %rd<6>;\n"
        " ld.param.u64 %rd1, [sp];\n ld.param.u64 %rd4, [gp];\n ld.param.u32 %r1, [i];\n mul.wide.s32 %rd2, %r1, 4;\n"
        " add.s64 %rd3, %rd1, %rd2;\n ld.param.u32 %r2, [%rd3];\n sub.s32 %r3, 15, %r1;\n"
        " { .param .b64 a; .param .b32 b; .param .b32 q;\n st.param.b64 [a], %rd4; st.param.b32 [b], %r3;\n"
        " call.uni (q), get, (a, b);\n ld.param.b32 %r4, [q]; }\n"
        " mad.lo.s32 %r5, %r2, 1000, %r4;\n st.param.b32 [r], %r5;\n ret;\n}\n"
        ".visible .entry k(.param .align 4 .b8 s[64], .param .u64 out)\n{\n .reg .b32 %r<8>;\n .reg .b64 %rd<8>;\n"
        " mov.b64 %rd1, s;\n cvta.param.u64 %rd2, %rd1;\n ld.param.u64 %rd3, [out];\n mov.u32 %r1, %tid.x;\n"
        " { .param .b64 a; .param .b32 b; .param .b32 q;\n st.param.b64 [a], %rd2; st.param.b32 [b], %r1;\n"
        " call.uni (q), get, (a, b);\n ld.param.b32 %r2, [q]; }\n"
        " { .param .b64 a; .param .b64 g; .param .b32 b; .param .b32 q;\n"
        " st.param.b64 [a], %rd1; st.param.b64 [g], %rd2; st.param.b32 [b], %r1;\n"
        " call.uni (q), getp, (a, g, b);\n ld.param.b32 %r3, [q]; }\n"
        " mul.wide.u32 %rd4, %r1, 4;\n add.s64 %rd5, %rd3, %rd4;\n st.global.u32 [%rd5], %r2;\n st.global.u32 [%rd5+64], %r3;\n"
        " ret;\n}\n";
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint32_t s[16], o[32];
    for (int i = 0; i < 16; i++) s[i] = 100u + (uint32_t)i;
    uint64_t dout = buffer(d, NULL, sizeof o);
    launch_ok(d, f, 1, 16, (void *[]){s, &dout});
    cr_assert_eq(dev_memcpy_dtoh(d, o, dout, sizeof o), DEV_OK);
    for (uint32_t t = 0; t < 16; t++) {
        cr_expect_eq(o[t], s[t], "get, thread %u: %u, want %u", t, o[t], s[t]);
        cr_expect_eq(o[16 + t], s[t] * 1000 + s[15 - t], "getp, thread %u: %u, want %u", t, o[16 + t], s[t] * 1000 + s[15 - t]);
    }
    dev_module_unload(m);
    dev_close(d);
}

/* ISA, .alias: ".alias fAlias, fAliasee;" makes fAlias (declared by a prototype) another name of fAliasee, "both
 * should have same prototype" (LLVM writes it for a C alias attribute).  Before: "unsupported directive
 * '.alias'".  A direct call through the alias, its address in a table of function pointers and from mov,
 * both called indirectly; the aliases ptxas refuses are refused with their line. */
Test(calls, alias) {
    static const char *ptx = HEAD
        ".visible .func (.param .b32 r) plus7(.param .b32 x)\n{\n .reg .b32 %r<3>;\n"
        " ld.param.b32 %r1, [x];\n add.s32 %r2, %r1, 7;\n st.param.b32 [r], %r2;\n ret;\n}\n"
        ".visible .func (.param .b32 r) p7(.param .b32 x);\n"
        ".alias p7, plus7;\n"
        ".global .align 8 .u64 tab[1] = {p7};\n"
        ".visible .entry k(.param .u64 out)\n{\n .reg .b32 %r<4>;\n .reg .b64 %rd<4>;\n"
        " ld.param.u64 %rd1, [out];\n"
        " { .param .b32 a; .param .b32 q;\n st.param.b32 [a], 1;\n call (q), p7, (a);\n ld.param.b32 %r1, [q];\n }\n"
        " ld.global.u64 %rd2, [tab];\n"
        " { .param .b32 a; .param .b32 q;\n st.param.b32 [a], 2;\n"
        " pr1 : .callprototype (.param .b32 _) _ (.param .b32 _);\n call (q), %rd2, (a), pr1;\n ld.param.b32 %r2, [q];\n }\n"
        " mov.u64 %rd3, p7;\n"
        " { .param .b32 a; .param .b32 q;\n st.param.b32 [a], 3;\n"
        " pr2 : .callprototype (.param .b32 _) _ (.param .b32 _);\n call (q), %rd3, (a), pr2;\n ld.param.b32 %r3, [q];\n }\n"
        " st.global.v2.u32 [%rd1], {%r1, %r2};\n st.global.u32 [%rd1+8], %r3;\n ret;\n}\n";
    check_ptxas_arch(ptx, "sm_80");
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint64_t out = buffer(d, NULL, 12);
    launch_ok(d, f, 1, 1, (void *[]){&out});
    uint32_t o[3];
    cr_assert_eq(dev_memcpy_dtoh(d, o, out, sizeof o), DEV_OK);
    for (int i = 0; i < 3; i++) cr_expect_eq(o[i], (uint32_t)(i + 8), "call %d: %u, want %d", i, o[i], i + 8);
    dev_module_unload(m);
#define F7 ".visible .func (.param .b32 r) plus7(.param .b32 x)\n{\n ret;\n}\n"
    load_fails(d, HEAD F7 ".alias p7, plus7;\n", ".alias: 'p7' is no function declared before the directive");
    load_fails(d, HEAD F7 ".visible .func p7(.param .b32 x);\n.alias p7, plus7;\n", "'p7' and 'plus7' have different parameters");
    load_fails(d, HEAD F7 ".visible .func (.param .b32 r) p7(.param .b32 x)\n{\n ret;\n}\n.alias p7, plus7;\n",
               "'p7' has a body");
    load_fails(d, HEAD ".visible .func (.param .b32 r) plus7(.param .b32 x);\n.visible .func (.param .b32 r) p7(.param .b32 x);\n"
               ".alias p7, plus7;\n", "'p7' aliases 'plus7', which has no body in this module");
#undef F7
    dev_close(d);
}

/* A module written as nvcc writes one (its declarations, call sequences and directives, in its layout): `//`
 * headers, a forward-declared .func defined after its caller, `.reg .b32 %r<N>` ranges, a local depot reached
 * through %SP/%SPL (generic and .local), `{ // callseq }` blocks with `.reg .b32 temp_param_reg;`, call.uni
 * spread over lines, an empty argument list `( )`, recursion, a void callee, an indirect call through a .global
 * table of function pointers with a .callprototype, .global and .const arrays with initializers (one shorter than
 * its array: the rest is zero), `.extern .shared` dynamic shared memory, `.pragma "nounroll"`, `.maxntid` and
 * `.minnctapersm`, cvta.to.global, ld.global.nc, %nctaid, %dynamic_smem_size, %lanemask_lt, vote and redux on
 * the odd or even lanes of a divergent branch, a `{ }` block whose register shadows the kernel's, and threads
 * that exit before a bar.sync the others wait at.  Each thread's 16 words against a C reference. */
static const char *nvcc_style_ptx =
    "//\n// Generated by NVIDIA NVVM Compiler\n//\n// Compiler Build ID: hand-written in its style\n//\n\n"
    ".version 8.0\n.target sm_80\n.address_size 64\n\n"
    "\t// .globl\tk\n"
    ".func  (.param .b32 func_retval0) _Z4facti(\n\t.param .b32 _Z4facti_param_0\n)\n;\n"
    ".global .align 1 .b8 tab[4] = {1, 2, 3, 4};\n"
    ".global .align 4 .u32 gtab[4] = {10, 20, 30, 40};\n"
    ".const .align 4 .b8 cbank[16] = {100, 0, 0, 0, 200, 0, 0, 0, 44, 1};\n"
    ".global .align 4 .f32 fk[2] = {0f3FC00000, 0fC0200000};\n"
    ".extern .shared .align 16 .b8 smem[];\n\n"
    ".func  (.param .b32 func_retval0) _Z2sqi(\n\t.param .b32 _Z2sqi_param_0\n)\n{\n"
    "\t.reg .b32 \t%r<3>;\n\n\n"
    "\tld.param.u32 \t%r1, [_Z2sqi_param_0];\n\tmul.lo.s32 \t%r2, %r1, %r1;\n"
    "\tst.param.b32 \t[func_retval0+0], %r2;\n\tret;\n\n}\n"
    ".global .align 8 .u64 fptab[2] = {_Z2sqi, _Z4facti};\n"
    ".func _Z7nothingv()\n{\n\n\n\tret;\n\n}\n"
    ".func _Z5fvoidPjj(\n\t.param .b64 _Z5fvoidPjj_param_0,\n\t.param .b32 _Z5fvoidPjj_param_1\n)\n{\n"
    "\t.reg .b32 \t%r<4>;\n\t.reg .b64 \t%rd<3>;\n\n\n"
    "\tld.param.u64 \t%rd1, [_Z5fvoidPjj_param_0];\n\tld.param.u32 \t%r1, [_Z5fvoidPjj_param_1];\n"
    "\tmad.lo.s32 \t%r2, %r1, 7, 1;\n\tst.u32 \t[%rd1], %r2;\n\tret;\n\n}\n"
    ".func  (.param .b64 func_retval0) _Z4lsumPjj(\n\t.param .b64 _Z4lsumPjj_param_0,\n\t.param .b32 _Z4lsumPjj_param_1\n)\n{\n"
    "\t.reg .pred \t%p<2>;\n\t.reg .b32 \t%r<8>;\n\t.reg .b64 \t%rd<8>;\n\n\n"
    "\tld.param.u64 \t%rd1, [_Z4lsumPjj_param_0];\n\tld.param.u32 \t%r1, [_Z4lsumPjj_param_1];\n"
    "\tmov.u64 \t%rd7, 0;\n\tmov.u32 \t%r7, 0;\n"
    "$L__BB3_1:\n\t.pragma \"nounroll\";\n"
    "\tmul.wide.u32 \t%rd3, %r7, 4;\n\tadd.s64 \t%rd4, %rd1, %rd3;\n\tld.u32 \t%r3, [%rd4];\n"
    "\tcvt.u64.u32 \t%rd5, %r3;\n\tadd.s64 \t%rd7, %rd7, %rd5;\n\tadd.s32 \t%r7, %r7, 1;\n"
    "\tsetp.lt.u32 \t%p1, %r7, %r1;\n\t@%p1 bra \t$L__BB3_1;\n"
    "\tst.param.b64 \t[func_retval0+0], %rd7;\n\tret;\n\n}\n"
    "\t// .globl\tk\n"
    ".visible .entry k(\n\t.param .u64 k_param_0,\n\t.param .u64 k_param_1\n)\n"
    ".maxntid 64, 1, 1\n.minnctapersm 2\n{\n"
    "\t.local .align 8 .b8 \t__local_depot4[16];\n\t.reg .b64 \t%SP;\n\t.reg .b64 \t%SPL;\n"
    "\t.reg .pred \t%p<8>;\n\t.reg .f32 \t%f<4>;\n\t.reg .b32 \t%r<40>;\n\t.reg .b64 \t%rd<30>;\n\n\n"
    "\tmov.u64 \t%SPL, __local_depot4;\n\tcvta.local.u64 \t%SP, %SPL;\n"
    "\tld.param.u64 \t%rd1, [k_param_0];\n\tld.param.u64 \t%rd2, [k_param_1];\n"
    "\tcvta.to.global.u64 \t%rd3, %rd1;\n\tcvta.to.global.u64 \t%rd4, %rd2;\n"
    "\tmov.u32 \t%r1, %tid.x;\n\tmov.u32 \t%r31, %ctaid.x;\n\tmov.u32 \t%r32, %ntid.x;\n"
    "\tmad.lo.s32 \t%r33, %r31, %r32, %r1;\n"
    "\tmul.wide.u32 \t%rd5, %r33, 4;\n\tadd.s64 \t%rd6, %rd4, %rd5;\n\tld.global.nc.u32 \t%r2, [%rd6];\n"
    "\tmul.wide.u32 \t%rd7, %r33, 64;\n\tadd.s64 \t%rd8, %rd3, %rd7;\n\tand.b32 \t%r3, %r2, 7;\n"
    "\t{ // callseq 0, 0\n\t.reg .b32 temp_param_reg;\n\t.param .b32 param0;\n\tst.param.b32 \t[param0+0], %r3;\n"
    "\t.param .b32 retval0;\n\tcall.uni (retval0), \n\t_Z2sqi, \n\t(\n\tparam0\n\t);\n"
    "\tld.param.b32 \t%r4, [retval0+0];\n\t} // callseq 0\n\tst.global.u32 \t[%rd8], %r4;\n"
    "\t{ // callseq 1, 0\n\t.reg .b32 temp_param_reg;\n\t.param .b32 param0;\n\tst.param.b32 \t[param0+0], %r3;\n"
    "\t.param .b32 retval0;\n\tcall.uni (retval0), \n\t_Z4facti, \n\t(\n\tparam0\n\t);\n"
    "\tld.param.b32 \t%r5, [retval0+0];\n\t} // callseq 1\n\tst.global.u32 \t[%rd8+4], %r5;\n"
    /* the depot: x, x + 1 through .local, x ^ 255 through the generic %SP, tid */
    "\tadd.u64 \t%rd9, %SP, 0;\n\tadd.u64 \t%rd10, %SPL, 0;\n\tst.local.u32 \t[%rd10], %r2;\n"
    "\tadd.s32 \t%r6, %r2, 1;\n\tst.local.u32 \t[%rd10+4], %r6;\n\txor.b32 \t%r7, %r2, 255;\n"
    "\tst.u32 \t[%rd9+8], %r7;\n\tst.local.u32 \t[%rd10+12], %r1;\n\tand.b32 \t%r8, %r1, 3;\n\tadd.s32 \t%r8, %r8, 1;\n"
    "\t{ // callseq 2, 0\n\t.reg .b32 temp_param_reg;\n\t.param .b64 param0;\n\tst.param.b64 \t[param0+0], %rd9;\n"
    "\t.param .b32 param1;\n\tst.param.b32 \t[param1+0], %r8;\n\t.param .b64 retval0;\n"
    "\tcall.uni (retval0), \n\t_Z4lsumPjj, \n\t(\n\tparam0, \n\tparam1\n\t);\n"
    "\tld.param.b64 \t%rd11, [retval0+0];\n\t} // callseq 2\n\tst.global.u64 \t[%rd8+8], %rd11;\n"
    /* module variables */
    "\tand.b32 \t%r9, %r1, 3;\n\tmov.u64 \t%rd12, tab;\n\tcvt.u64.u32 \t%rd13, %r9;\n\tadd.s64 \t%rd14, %rd12, %rd13;\n"
    "\tld.global.u8 \t%r10, [%rd14];\n\tmul.wide.u32 \t%rd15, %r9, 4;\n\tmov.u64 \t%rd16, gtab;\n"
    "\tadd.s64 \t%rd17, %rd16, %rd15;\n\tld.global.u32 \t%r11, [%rd17];\n\tmov.u64 \t%rd18, cbank;\n"
    "\tadd.s64 \t%rd19, %rd18, %rd15;\n\tld.const.u32 \t%r12, [%rd19];\n\tadd.s32 \t%r13, %r10, %r11;\n"
    "\tadd.s32 \t%r13, %r13, %r12;\n\tst.global.u32 \t[%rd8+16], %r13;\n"
    /* indirect through the table */
    "\tand.b32 \t%r14, %r1, 1;\n\tmul.wide.u32 \t%rd20, %r14, 8;\n\tmov.u64 \t%rd21, fptab;\n\tadd.s64 \t%rd21, %rd21, %rd20;\n"
    "\tld.global.u64 \t%rd22, [%rd21];\n"
    "\t{ // callseq 3, 0\n\t.reg .b32 temp_param_reg;\n\t.param .b32 param0;\n\tst.param.b32 \t[param0+0], %r3;\n"
    "\t.param .b32 retval0;\n\tprototype_3 : .callprototype (.param .b32 _) _ (.param .b32 _);\n"
    "\tcall (retval0), \n\t%rd22, \n\t(\n\tparam0\n\t)\n\t, prototype_3;\n"
    "\tld.param.b32 \t%r15, [retval0+0];\n\t} // callseq 3\n\tst.global.u32 \t[%rd8+20], %r15;\n"
    /* dynamic shared memory: the next thread's input */
    "\tmov.u32 \t%r16, smem;\n\tshl.b32 \t%r17, %r1, 2;\n\tadd.s32 \t%r18, %r16, %r17;\n\tst.shared.u32 \t[%r18], %r2;\n"
    "\tbar.sync \t0;\n\tadd.s32 \t%r19, %r1, 1;\n\tand.b32 \t%r19, %r19, 63;\n\tshl.b32 \t%r20, %r19, 2;\n"
    "\tadd.s32 \t%r21, %r16, %r20;\n\tld.shared.u32 \t%r22, [%r21];\n\tst.global.u32 \t[%rd8+24], %r22;\n"
    "\tmov.u32 \t%r23, %nctaid.x;\n\tmov.u32 \t%r24, %dynamic_smem_size;\n\tmad.lo.s32 \t%r25, %r23, 1000, %r24;\n"
    "\tst.global.u32 \t[%rd8+28], %r25;\n"
    "\tmov.u32 \t%r26, %lanemask_lt;\n\tst.global.u32 \t[%rd8+32], %r26;\n"
    /* the odd lanes' ballot and max, the even lanes' min */
    "\tsetp.eq.s32 \t%p1, %r14, 0;\n\t@%p1 bra \t$L__BB4_2;\n"
    "\tsetp.gt.u32 \t%p2, %r1, 40;\n\tvote.sync.ballot.b32 \t%r27, %p2, -1431655766;\n"
    "\tredux.sync.max.u32 \t%r28, %r1, -1431655766;\n\tbra.uni \t$L__BB4_3;\n"
    "$L__BB4_2:\n\tmov.u32 \t%r27, 0;\n\tredux.sync.min.s32 \t%r28, %r1, 1431655765;\n"
    "$L__BB4_3:\n\tst.global.v2.u32 \t[%rd8+40], {%r27, %r28};\n"
    /* a float table and the void callee */
    "\tmov.u64 \t%rd23, fk;\n\tadd.s64 \t%rd24, %rd23, %rd15;\n\tand.b32 \t%r29, %r2, 255;\n"
    "\tcvt.rn.f32.u32 \t%f1, %r29;\n\tmul.wide.u32 \t%rd25, %r14, 4;\n\tadd.s64 \t%rd24, %rd23, %rd25;\n"
    "\tld.global.f32 \t%f2, [%rd24];\n\tmul.rn.f32 \t%f3, %f1, %f2;\n\tst.global.f32 \t[%rd8+48], %f3;\n"
    "\tadd.s64 \t%rd26, %rd8, 52;\n"
    "\t{ // callseq 4, 0\n\t.reg .b32 temp_param_reg;\n\t.param .b64 param0;\n\tst.param.b64 \t[param0+0], %rd26;\n"
    "\t.param .b32 param1;\n\tst.param.b32 \t[param1+0], %r2;\n"
    "\tcall.uni \n\t_Z5fvoidPjj, \n\t(\n\tparam0, \n\tparam1\n\t);\n\t} // callseq 4\n"
    "\t{ // callseq 5, 0\n\t.reg .b32 temp_param_reg;\n\tcall.uni \n\t_Z7nothingv, \n\t(\n\t);\n\t} // callseq 5\n"
    /* a block's own %r1 */
    "\t{\n\t.reg .b32 %r1;\n\tmov.u32 \t%r1, 77;\n\tst.global.u32 \t[%rd8+56], %r1;\n\t}\n"
    "\tst.global.u32 \t[%rd8+60], %r1;\n"
    /* block 1's threads 48.. exit; the others meet at a barrier and then write a word */
    "\tsetp.ne.s32 \t%p3, %r31, 1;\n\tsetp.lt.u32 \t%p4, %r1, 48;\n\tor.pred \t%p5, %p3, %p4;\n"
    "\t@!%p5 bra \t$L__BB4_5;\n\tbar.sync \t0;\n\tst.global.u32 \t[%rd8+36], %r33;\n\tret;\n"
    "$L__BB4_5:\n\texit;\n\n}\n"
    ".func  (.param .b32 func_retval0) _Z4facti(\n\t.param .b32 _Z4facti_param_0\n)\n{\n"
    "\t.reg .pred \t%p<2>;\n\t.reg .b32 \t%r<6>;\n\n\n"
    "\tld.param.u32 \t%r1, [_Z4facti_param_0];\n\tsetp.lt.u32 \t%p1, %r1, 2;\n\tmov.u32 \t%r5, 1;\n"
    "\t@%p1 bra \t$L__BB5_2;\n\n\tadd.s32 \t%r3, %r1, -1;\n"
    "\t{ // callseq 6, 0\n\t.reg .b32 temp_param_reg;\n\t.param .b32 param0;\n\tst.param.b32 \t[param0+0], %r3;\n"
    "\t.param .b32 retval0;\n\tcall.uni (retval0), \n\t_Z4facti, \n\t(\n\tparam0\n\t);\n"
    "\tld.param.b32 \t%r4, [retval0+0];\n\t} // callseq 6\n\tmul.lo.s32 \t%r5, %r4, %r1;\n\n"
    "$L__BB5_2:\n\tst.param.b32 \t[func_retval0+0], %r5;\n\tret;\n\n}\n";

static uint32_t fact_ref(uint32_t n) { return n < 2 ? 1 : n * fact_ref(n - 1); }

Test(calls, nvcc_style_module) {
    check_ptxas_arch(nvcc_style_ptx, "sm_80");
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, nvcc_style_ptx, "k", &m);
    enum { BLOCKS = 3, T = 64, W = 16, SMEM = 264 };
    uint32_t in[BLOCKS * T], o[BLOCKS * T * W];
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (unsigned i = 0; i < BLOCKS * T; i++) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; in[i] = (uint32_t)s; }
    uint64_t din = buffer(d, in, sizeof in), dout = buffer(d, NULL, sizeof o);
    void *params[] = {&dout, &din};
    cr_assert_eq(dev_launch(f, BLOCKS, 1, 1, T, 1, 1, SMEM, NULL, params), DEV_OK, "launch: %s", dev_last_error(d));
    cr_assert_eq(dev_memcpy_dtoh(d, o, dout, sizeof o), DEV_OK);
    for (unsigned g = 0; g < BLOCKS * T; g++) {
        unsigned t = g % T, blk = g / T, lane = t % 32, warp0 = blk * T + t / 32 * 32;
        uint32_t x = in[g], k = x & 7, loc[4] = {x, x + 1, x ^ 255, t}, *w = o + g * W;
        uint64_t sum = 0;
        for (unsigned i = 0; i <= (t & 3); i++) sum += loc[i];
        uint32_t ballot = 0, red = t & 1 ? 0 : UINT32_MAX;
        for (unsigned l = 0; l < 32; l++) {
            unsigned lt = (warp0 + l) % T;
            if ((l & 1) != (t & 1)) continue;
            if (t & 1) { ballot |= (uint32_t)(lt > 40) << l; red = lt > red ? lt : red; }
            else red = lt < red ? lt : red;
        }
        float fk[2] = {1.5f, -2.5f};
        uint32_t want[W] = {k * k, fact_ref(k), (uint32_t)sum, (uint32_t)(sum >> 32),
                            (uint32_t)((const uint8_t[]){1, 2, 3, 4})[t & 3] + (uint32_t[]){10, 20, 30, 40}[t & 3] +
                                (uint32_t[]){100, 200, 300, 0}[t & 3],
                            t & 1 ? fact_ref(k) : k * k, in[blk * T + (t + 1) % T], BLOCKS * 1000 + SMEM, (1u << lane) - 1,
                            blk == 1 && t >= 48 ? 0xEEEEEEEEu : g, /* written after the barrier: not by the exited threads */
                            ballot, red, 0, x * 7 + 1, 77, t};
        float fv = (float)(x & 255) * fk[t & 1];
        memcpy(&want[12], &fv, 4);
        for (unsigned j = 0; j < W; j++)
            cr_assert_eq(w[j], want[j], "thread %u of block %u, word %u: %#x, want %#x", t, blk, j, w[j], want[j]);
    }
    dev_module_unload(m);
    dev_close(d);
}

/* A module written as LLVM's NVPTX back end (clang --cuda-device-only, LLVM 22) writes one: `.param .u64 .ptr
 * .align 1` kernel parameters, i8/i16/bool arguments in `.param .b32` read back with ld.param.s8/.b8/.b16,
 * structs passed and returned by value in `.param .align N .b8 p[n]` arrays written member by member
 * (st.param.b8/.b16/.b32, immediates too), a float2 through ld/st.param.v2, f32 arithmetic on .b32 registers,
 * a by-value array parameter indexed through its address (`mov.b64 %rd, f_param_0` then ld.local), a depot
 * through %SPL without %SP, `ld.global.b32` into a 64-bit register, a .const array with a short initializer,
 * `.extern .shared` reached by 64-bit shared addresses, a `switch` as brx.idx over a .branchtargets table,
 * and bar.red.popc.  Each thread's words against a C reference. */
static const char *llvm_style_ptx =
    "//\n// Generated by LLVM NVPTX Back-End\n//\n\n"
    ".version 7.0\n.target sm_80\n.address_size 64\n\n"
    "\t// .globl\t_Z2fcah                // -- Begin function _Z2fcah\n"
    ".visible .const .align 4 .b8 cb[16] = {100, 0, 0, 0, 200, 0, 0, 0, 44, 1, 0, 0, 144, 1};\n"
    ".extern .shared .align 4 .b8 dsm[];\n"
    "                                        // @_Z2fcah\n"
    ".visible .func  (.param .b32 func_retval0) _Z2fcah(\n\t.param .b32 _Z2fcah_param_0,\n\t.param .b32 _Z2fcah_param_1\n)\n{\n"
    "\t.reg .b16 \t%rs<4>;\n\t.reg .b32 \t%r<3>;\n\n// %bb.0:\n"
    "\tld.param.s8 \t%rs1, [_Z2fcah_param_0];\n\tld.param.b8 \t%rs2, [_Z2fcah_param_1];\n"
    "\tmad.lo.s16 \t%rs3, %rs1, 3, %rs2;\n\tcvt.u32.u16 \t%r1, %rs3;\n\tcvt.s32.s8 \t%r2, %r1;\n"
    "\tst.param.b32 \t[func_retval0], %r2;\n\tret;\n                                        // -- End function\n}\n"
    ".visible .func  (.param .b32 func_retval0) _Z2fssb(\n\t.param .b32 _Z2fssb_param_0,\n\t.param .b32 _Z2fssb_param_1\n)\n{\n"
    "\t.reg .pred \t%p<2>;\n\t.reg .b16 \t%rs<7>;\n\t.reg .b32 \t%r<2>;\n\n// %bb.0:\n"
    "\tld.param.b8 \t%rs1, [_Z2fssb_param_1];\n\tand.b16 \t%rs2, %rs1, 1;\n\tsetp.ne.b16 \t%p1, %rs2, 0;\n"
    "\tld.param.b16 \t%rs3, [_Z2fssb_param_0];\n\tshr.s16 \t%rs4, %rs3, 2;\n\tneg.s16 \t%rs5, %rs3;\n"
    "\tselp.b16 \t%rs6, %rs4, %rs5, %p1;\n\tcvt.s32.s16 \t%r1, %rs6;\n\tst.param.b32 \t[func_retval0], %r1;\n\tret;\n}\n"
    /* struct S3 { char c; short s; int i; } f(S3 v, int k) { return {c + k, s * k, i ^ k}; } */
    ".visible .func  (.param .align 4 .b8 func_retval0[8]) _Z3fs32S3i(\n"
    "\t.param .align 4 .b8 _Z3fs32S3i_param_0[8],\n\t.param .b32 _Z3fs32S3i_param_1\n)\n{\n"
    "\t.reg .b16 \t%rs<6>;\n\t.reg .b32 \t%r<4>;\n\n// %bb.0:\n"
    "\tld.param.b32 \t%r1, [_Z3fs32S3i_param_1];\n\tld.param.b8 \t%rs1, [_Z3fs32S3i_param_0];\n"
    "\tcvt.u16.u32 \t%rs2, %r1;\n\tadd.s16 \t%rs3, %rs1, %rs2;\n\tld.param.b16 \t%rs4, [_Z3fs32S3i_param_0+2];\n"
    "\tmul.lo.s16 \t%rs5, %rs4, %rs2;\n\tld.param.b32 \t%r2, [_Z3fs32S3i_param_0+4];\n\txor.b32 \t%r3, %r2, %r1;\n"
    "\tst.param.b32 \t[func_retval0+4], %r3;\n\tst.param.b16 \t[func_retval0+2], %rs5;\n"
    "\tst.param.b8 \t[func_retval0], %rs3;\n\tret;\n}\n"
    /* long long[3] by value, element (i + n) % 3 of it times i + 1 */
    ".visible .func  (.param .align 8 .b8 func_retval0[24]) _Z4fbig3Bigi(\n"
    "\t.param .align 8 .b8 _Z4fbig3Bigi_param_0[24],\n\t.param .b32 _Z4fbig3Bigi_param_1\n)\n{\n"
    "\t.reg .b32 \t%r<8>;\n\t.reg .b64 \t%rd<12>;\n\n// %bb.0:\n"
    "\tmov.b64 \t%rd1, _Z4fbig3Bigi_param_0;\n\tld.param.b32 \t%r1, [_Z4fbig3Bigi_param_1];\n"
    "\trem.u32 \t%r2, %r1, 3;\n\tmul.wide.u32 \t%rd2, %r2, 8;\n\tadd.s64 \t%rd3, %rd1, %rd2;\n\tld.local.b64 \t%rd4, [%rd3];\n"
    "\tadd.s32 \t%r3, %r1, 1;\n\trem.u32 \t%r4, %r3, 3;\n\tmul.wide.u32 \t%rd5, %r4, 8;\n\tadd.s64 \t%rd6, %rd1, %rd5;\n"
    "\tld.local.b64 \t%rd7, [%rd6];\n\tshl.b64 \t%rd8, %rd7, 1;\n"
    "\tadd.s32 \t%r5, %r1, 2;\n\trem.u32 \t%r6, %r5, 3;\n\tmul.wide.u32 \t%rd9, %r6, 8;\n\tadd.s64 \t%rd10, %rd1, %rd9;\n"
    "\tld.local.b64 \t%rd11, [%rd10];\n\tmul.lo.s64 \t%rd11, %rd11, 3;\n"
    "\tst.param.b64 \t[func_retval0], %rd4;\n\tst.param.b64 \t[func_retval0+16], %rd11;\n"
    "\tst.param.b64 \t[func_retval0+8], %rd8;\n\tret;\n}\n"
    /* float2 f(float2 a, float k) { return {a.y * k, a.x}; } */
    ".visible .func  (.param .align 8 .b8 func_retval0[8]) _Z3fv2Dv2_ff(\n"
    "\t.param .align 8 .b8 _Z3fv2Dv2_ff_param_0[8],\n\t.param .b32 _Z3fv2Dv2_ff_param_1\n)\n{\n"
    "\t.reg .b32 \t%r<5>;\n\n// %bb.0:\n"
    "\tld.param.v2.b32 \t{%r1, %r2}, [_Z3fv2Dv2_ff_param_0];\n\tld.param.b32 \t%r3, [_Z3fv2Dv2_ff_param_1];\n"
    "\tmul.rn.f32 \t%r4, %r2, %r3;\n\tst.param.v2.b32 \t[func_retval0], {%r4, %r1};\n\tret;\n}\n"
    "\t// .globl\t_Z1kPjPKj\n"
    ".visible .entry _Z1kPjPKj(\n\t.param .u64 .ptr .align 1 _Z1kPjPKj_param_0,\n\t.param .u64 .ptr .align 1 _Z1kPjPKj_param_1\n)\n"
    "{\n\t.local .align 4 .b8 \t__local_depot5[8];\n\t.reg .b64 \t%SP;\n\t.reg .b64 \t%SPL;\n"
    "\t.reg .pred \t%p<4>;\n\t.reg .b16 \t%rs<8>;\n\t.reg .b32 \t%r<40>;\n\t.reg .b64 \t%rd<30>;\n\n// %bb.0:\n"
    "\tmov.b64 \t%SPL, __local_depot5;\n\tld.param.b64 \t%rd1, [_Z1kPjPKj_param_0];\n\tld.param.b64 \t%rd2, [_Z1kPjPKj_param_1];\n"
    "\tcvta.to.global.u64 \t%rd3, %rd2;\n\tcvta.to.global.u64 \t%rd4, %rd1;\n\tadd.u64 \t%rd5, %SPL, 0;\n"
    "\tmov.u32 \t%r1, %tid.x;\n\tmul.wide.u32 \t%rd6, %r1, 4;\n\tadd.s64 \t%rd7, %rd3, %rd6;\n"
    "\tld.global.b32 \t%r2, [%rd7];\n\tld.global.b32 \t%r3, [%rd7+256];\n"
    "\tmul.wide.u32 \t%rd8, %r1, 64;\n\tadd.s64 \t%rd9, %rd4, %rd8;\n"
    "\t{ // callseq 0, 0\n\t.param .b32 \tparam0;\n\t.param .b32 \tparam1;\n\t.param .b32 \tretval0;\n"
    "\tst.param.b32 \t[param1], %r3;\n\tst.param.b32 \t[param0], %r2;\n"
    "\tcall.uni (retval0), _Z2fcah, (param0, param1);\n\tld.param.b32 \t%r4, [retval0];\n\t} // callseq 0\n"
    "\tst.global.b32 \t[%rd9], %r4;\n"
    "\tand.b32 \t%r5, %r3, 1;\n"
    "\t{ // callseq 1, 0\n\t.param .b32 \tparam0;\n\t.param .b32 \tparam1;\n\t.param .b32 \tretval0;\n"
    "\tst.param.b32 \t[param1], %r5;\n\tst.param.b32 \t[param0], %r2;\n"
    "\tcall.uni (retval0), _Z2fssb, (param0, param1);\n\tld.param.b32 \t%r6, [retval0];\n\t} // callseq 1\n"
    "\tst.global.b32 \t[%rd9+4], %r6;\n"
    /* S3 {x, y >> 8, x ^ y} built in the depot, then passed */
    "\tcvt.u16.u32 \t%rs1, %r2;\n\tshr.u32 \t%r7, %r3, 8;\n\tcvt.u16.u32 \t%rs2, %r7;\n\txor.b32 \t%r8, %r2, %r3;\n"
    "\tst.local.b8 \t[%rd5], %rs1;\n\tst.local.b16 \t[%rd5+2], %rs2;\n\tst.local.b32 \t[%rd5+4], %r8;\n"
    "\tld.local.b8 \t%rs3, [%rd5];\n\tld.local.b16 \t%rs4, [%rd5+2];\n\tld.local.b32 \t%r9, [%rd5+4];\n"
    "\tadd.s32 \t%r10, %r1, 1;\n"
    "\t{ // callseq 2, 0\n\t.param .align 4 .b8 \tparam0[8];\n\t.param .b32 \tparam1;\n\t.param .align 4 .b8 \tretval0[8];\n"
    "\tst.param.b32 \t[param1], %r10;\n\tst.param.b32 \t[param0+4], %r9;\n\tst.param.b16 \t[param0+2], %rs4;\n"
    "\tst.param.b8 \t[param0], %rs3;\n\tcall.uni (retval0), _Z3fs32S3i, (param0, param1);\n"
    "\tld.param.b8 \t%rs5, [retval0];\n\tld.param.b16 \t%rs6, [retval0+2];\n\tld.param.b32 \t%r11, [retval0+4];\n\t} // callseq 2\n"
    "\tcvt.u32.u16 \t%r12, %rs5;\n\tcvt.s32.s8 \t%r13, %r12;\n\tst.global.b32 \t[%rd9+8], %r13;\n"
    "\tcvt.s32.s16 \t%r14, %rs6;\n\tst.global.b32 \t[%rd9+12], %r14;\n\tst.global.b32 \t[%rd9+16], %r11;\n"
    /* three 64-bit elements, one loaded as b32 into a 64-bit register */
    "\tld.global.b32 \t%rd10, [%rd7];\n\tmul.wide.u32 \t%rd11, %r3, 2;\n\tmov.b64 \t%rd12, {%r3, %r2};\n"
    "\t{ // callseq 3, 0\n\t.param .align 8 .b8 \tparam0[24];\n\t.param .b32 \tparam1;\n\t.param .align 8 .b8 \tretval0[24];\n"
    "\tst.param.b32 \t[param1], %r1;\n\tst.param.b64 \t[param0+16], %rd12;\n\tst.param.b64 \t[param0+8], %rd11;\n"
    "\tst.param.b64 \t[param0], %rd10;\n\tcall.uni (retval0), _Z4fbig3Bigi, (param0, param1);\n"
    "\tld.param.b64 \t%rd13, [retval0];\n\tld.param.b64 \t%rd14, [retval0+8];\n\tld.param.b64 \t%rd15, [retval0+16];\n\t} // callseq 3\n"
    "\tst.global.b64 \t[%rd9+24], %rd13;\n\tst.global.b64 \t[%rd9+32], %rd14;\n\tst.global.b64 \t[%rd9+40], %rd15;\n"
    /* float2 {x & 0xfff, 1.5} * 0.5 */
    "\tand.b32 \t%r15, %r2, 4095;\n\tcvt.rn.f32.u32 \t%r16, %r15;\n"
    "\t{ // callseq 4, 0\n\t.param .align 8 .b8 \tparam0[8];\n\t.param .b32 \tparam1;\n\t.param .align 8 .b8 \tretval0[8];\n"
    "\tst.param.b32 \t[param1], 1056964608;\n\tst.param.v2.b32 \t[param0], {%r16, 1069547520};\n"
    "\tcall.uni (retval0), _Z3fv2Dv2_ff, (param0, param1);\n\tld.param.v2.b32 \t{%r17, %r18}, [retval0];\n\t} // callseq 4\n"
    "\tst.global.v2.b32 \t[%rd9+48], {%r17, %r18};\n"
    /* cb[t & 3] + the next thread's x through 64-bit shared addresses */
    "\tand.b32 \t%r19, %r1, 3;\n\tmul.wide.u32 \t%rd16, %r19, 4;\n\tmov.b64 \t%rd17, cb;\n\tadd.s64 \t%rd18, %rd17, %rd16;\n"
    "\tld.const.b32 \t%r20, [%rd18];\n\tmov.b64 \t%rd19, dsm;\n\tadd.s64 \t%rd20, %rd19, %rd6;\n\tst.shared.b32 \t[%rd20], %r2;\n"
    "\tand.b32 \t%r21, %r2, 1;\n\tsetp.ne.b32 \t%p1, %r21, 0;\n\tbar.red.popc.u32 \t%r22, 0, %p1;\n"
    "\tadd.s32 \t%r23, %r1, 1;\n\tmov.u32 \t%r24, %ntid.x;\n\trem.u32 \t%r25, %r23, %r24;\n\tmul.wide.u32 \t%rd21, %r25, 4;\n"
    "\tadd.s64 \t%rd22, %rd19, %rd21;\n\tld.shared.b32 \t%r26, [%rd22];\n\tadd.s32 \t%r27, %r26, %r20;\n"
    "\tst.global.b32 \t[%rd9+56], %r27;\n"
    /* switch (x & 7) { 0: 5, 1: 9, 2: 13, 3: 1, 4: 77, default: 3 } + the barrier's count */
    "\tand.b32 \t%r28, %r2, 7;\n\tsetp.gt.u32 \t%p3, %r28, 4;\n\t@%p3 bra \t$L__BB5_6;\n// %bb.1:\n"
    "\tmov.b32 \t%r29, 5;\n\t$L_brx_0: .branchtargets\n\t\t$L__BB5_7,\n\t\t$L__BB5_2,\n\t\t$L__BB5_3,\n\t\t$L__BB5_4,\n\t\t$L__BB5_5;\n"
    "\tbrx.idx \t%r28, $L_brx_0;\n$L__BB5_2:\n\tmov.b32 \t%r29, 9;\n\tbra.uni \t$L__BB5_7;\n"
    "$L__BB5_5:\n\tmov.b32 \t%r29, 77;\n\tbra.uni \t$L__BB5_7;\n$L__BB5_3:\n\tmov.b32 \t%r29, 13;\n\tbra.uni \t$L__BB5_7;\n"
    "$L__BB5_4:\n\tmov.b32 \t%r29, 1;\n\tbra.uni \t$L__BB5_7;\n$L__BB5_6:\n\tmov.b32 \t%r29, 3;\n"
    "$L__BB5_7:\n\tmad.lo.s32 \t%r30, %r22, 1000, %r29;\n\tst.global.b32 \t[%rd9+60], %r30;\n\tret;\n"
    "                                        // -- End function\n}\n";

Test(calls, llvm_style_module) {
    check_ptxas_arch(llvm_style_ptx, "sm_80");
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, llvm_style_ptx, "_Z1kPjPKj", &m);
    enum { T = 50, W = 16 }; /* not a multiple of the warp */
    uint32_t in[128], o[T * W];
    uint64_t s = 0xD1B54A32D192ED03ull;
    for (unsigned i = 0; i < 128; i++) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; in[i] = (uint32_t)s; }
    in[3] = 0x80u; in[64 + 3] = 0xFFu;                 /* (signed char)-128 * 3 + 255 */
    in[5] = 0xFFFF8000u; in[64 + 5] = 0;               /* -(short)-32768 */
    uint64_t din = buffer(d, in, sizeof in), dout = buffer(d, NULL, sizeof o);
    void *params[] = {&dout, &din};
    cr_assert_eq(dev_launch(f, 1, 1, 1, T, 1, 1, T * 4, NULL, params), DEV_OK, "launch: %s", dev_last_error(d));
    cr_assert_eq(dev_memcpy_dtoh(d, o, dout, sizeof o), DEV_OK);
    unsigned popc = 0;
    for (unsigned t = 0; t < T; t++) popc += in[t] & 1;
    for (unsigned t = 0; t < T; t++) {
        uint32_t x = in[t], y = in[t + 64], k = t + 1;
        int16_t sh = (int16_t)x;
        uint64_t big[3] = {x, (uint64_t)y * 2, (uint64_t)x << 32 | y}, rb[3];
        for (unsigned i = 0; i < 3; i++) rb[i] = big[(i + t) % 3] * (i + 1);
        float v2[2] = {1.5f * 0.5f, (float)(x & 4095)};
        uint32_t sw[5] = {5, 9, 13, 1, 77};
        uint32_t want[W] = {(uint32_t)(int32_t)(int8_t)((int8_t)x * 3 + (uint8_t)y),
                            (uint32_t)(int32_t)(int16_t)(y & 1 ? sh >> 2 : -sh),
                            (uint32_t)(int32_t)(int8_t)(uint8_t)(x + k),
                            (uint32_t)(int32_t)(int16_t)(uint16_t)((y >> 8) * k),
                            x ^ y ^ k, 0xEEEEEEEEu, /* word 5: not written */
                            (uint32_t)rb[0], (uint32_t)(rb[0] >> 32), (uint32_t)rb[1], (uint32_t)(rb[1] >> 32),
                            (uint32_t)rb[2], (uint32_t)(rb[2] >> 32), 0, 0,
                            in[(t + 1) % T] + (uint32_t[]){100, 200, 300, 400}[t & 3],
                            popc * 1000 + ((x & 7) < 5 ? sw[x & 7] : 3)};
        memcpy(&want[12], v2, 8);
        for (unsigned j = 0; j < W; j++)
            cr_assert_eq(o[t * W + j], want[j], "thread %u, word %u: %#x, want %#x", t, j, o[t * W + j], want[j]);
    }
    dev_module_unload(m);
    dev_close(d);
}

/* A module written as Triton writes one (its LLVM back end plus its inline PTX): `.reqntid`, `.param .u64 .ptr
 * .global .align 1` parameters, `// begin inline asm` blocks with Triton's spacing (`{ %r2, %r3 }`, `[ %rd1 + 0 ]`),
 * hex immediates, guarded loads with `@!%p` fills of -inf, butterfly shuffles, `.loc` lines before the `.file`s
 * that name them, and DWARF sections (`.b8`/`.b32` data, `.b64` of a label) after the function.  A masked row
 * softmax numerator (exp(x - max) over the first 126 of a block's 128 elements: the masked pair is not stored), three rows. */
static const char *triton_style_ptx =
    "//\n"
    "// Generated by LLVM NVPTX Back-End\n"
    "//\n"
    "\n"
    ".version 8.4\n"
    ".target sm_80\n"
    ".address_size 64\n"
    "\n"
    "\t// .globl\tsoftmax_kernel          // -- Begin function softmax_kernel\n"
    ".extern .shared .align 16 .b8 global_smem[];\n"
    "                                        // @softmax_kernel\n"
    ".visible .entry softmax_kernel(\n"
    "\t.param .u64 .ptr .global .align 1 softmax_kernel_param_0,\n"
    "\t.param .u64 .ptr .global .align 1 softmax_kernel_param_1,\n"
    "\t.param .u32 softmax_kernel_param_2,\n"
    "\t.param .u64 .ptr .global .align 1 softmax_kernel_param_3\n"
    ")\n"
    ".reqntid 64, 1, 1\n"
    "{\n"
    "\t.reg .pred \t%p<10>;\n"
    "\t.reg .b32 \t%r<60>;\n"
    "\t.reg .f32 \t%f<40>;\n"
    "\t.reg .b64 \t%rd<12>;\n"
    "\t.loc\t1 10 0                          // softmax.py:10:0\n"
    "$L__func_begin0:\n"
    "\t.loc\t1 10 0                          // softmax.py:10:0\n"
    "\n"
    "// %bb.0:\n"
    "\tld.param.u64 \t%rd3, [softmax_kernel_param_0];\n"
    "\tld.param.u64 \t%rd4, [softmax_kernel_param_1];\n"
    "$L__tmp0:\n"
    "\t.loc\t1 12 24                         // softmax.py:12:24\n"
    "\t// begin inline asm\n"
    "\tmov.u32 %r1, %ctaid.x;\n"
    "\t// end inline asm\n"
    "\tld.param.u32 \t%r10, [softmax_kernel_param_2];\n"
    "\tmov.u32 \t%r11, %tid.x;\n"
    "\tand.b32  \t%r12, %r11, 31;\n"
    "\tshl.b32 \t%r13, %r11, 1;\n"
    "\tmad.lo.s32 \t%r14, %r1, 128, %r13;\n"
    "\tsetp.lt.s32 \t%p1, %r13, %r10;\n"
    "\tsetp.lt.s32 \t%p2, %r13, 127;\n"
    "\tand.pred  \t%p1, %p1, %p2;\n"
    "\tmul.wide.s32 \t%rd5, %r14, 4;\n"
    "\tadd.s64 \t%rd1, %rd3, %rd5;\n"
    "\t.loc\t1 14 20\n"
    "\t// begin inline asm\n"
    "\tmov.u32 %r2, 0x0;\n"
    "\tmov.u32 %r3, 0x0;\n"
    "\t@%p1 ld.global.v2.b32 { %r2, %r3 }, [ %rd1 + 0 ];\n"
    "\t@!%p1 mov.u32 %r2, 0xff800000;\n"
    "\t@!%p1 mov.u32 %r3, 0xff800000;\n"
    "\t// end inline asm\n"
    "\tmov.b32 \t%f1, %r2;\n"
    "\tmov.b32 \t%f2, %r3;\n"
    "\t.loc\t2 184 40                        // standard.py:184:40\n"
    "\tmax.f32 \t%f3, %f1, %f2;\n"
    "\tmov.b32 \t%r15, %f3;\n"
    "\tshfl.sync.bfly.b32\t%r16, %r15, 16, 31, -1;\n"
    "\tmov.b32 \t%f4, %r16;\n"
    "\tmax.f32 \t%f5, %f3, %f4;\n"
    "\tmov.b32 \t%r17, %f5;\n"
    "\tshfl.sync.bfly.b32\t%r18, %r17, 8, 31, -1;\n"
    "\tmov.b32 \t%f6, %r18;\n"
    "\tmax.f32 \t%f7, %f5, %f6;\n"
    "\tmov.b32 \t%r19, %f7;\n"
    "\tshfl.sync.bfly.b32\t%r20, %r19, 4, 31, -1;\n"
    "\tmov.b32 \t%f8, %r20;\n"
    "\tmax.f32 \t%f9, %f7, %f8;\n"
    "\tmov.b32 \t%r21, %f9;\n"
    "\tshfl.sync.bfly.b32\t%r22, %r21, 2, 31, -1;\n"
    "\tmov.b32 \t%f10, %r22;\n"
    "\tmax.f32 \t%f11, %f9, %f10;\n"
    "\tmov.b32 \t%r23, %f11;\n"
    "\tshfl.sync.bfly.b32\t%r24, %r23, 1, 31, -1;\n"
    "\tmov.b32 \t%f12, %r24;\n"
    "\tmax.f32 \t%f13, %f11, %f12;\n"
    "\tsetp.eq.s32 \t%p3, %r12, 0;\n"
    "\tshr.u32 \t%r25, %r11, 3;\n"
    "\tand.b32  \t%r26, %r25, 4;\n"
    "\tmov.u32 \t%r27, global_smem;\n"
    "\tadd.s32 \t%r4, %r27, %r26;\n"
    "\tmov.b32 \t%r5, %f13;\n"
    "\t// begin inline asm\n"
    "\t@%p3 st.shared.b32 [ %r4 + 0 ], %r5;\n"
    "\t// end inline asm\n"
    "\tbar.sync \t0;\n"
    "\tsetp.lt.s32 \t%p4, %r11, 2;\n"
    "\tshl.b32 \t%r28, %r11, 2;\n"
    "\tadd.s32 \t%r7, %r27, %r28;\n"
    "\t// begin inline asm\n"
    "\t@%p4 ld.shared.b32 %r6, [ %r7 + 0 ];\n"
    "\t// end inline asm\n"
    "\tmov.b32 \t%f14, %r6;\n"
    "\tshfl.sync.bfly.b32\t%r29, %r6, 1, 31, -1;\n"
    "\tmov.b32 \t%f15, %r29;\n"
    "\tmax.f32 \t%f16, %f14, %f15;\n"
    "\tand.b32  \t%r30, %r11, 1;\n"
    "\tsetp.eq.b32 \t%p5, %r30, 0;\n"
    "\tand.pred  \t%p6, %p4, %p5;\n"
    "\tmov.b32 \t%r9, %f16;\n"
    "\t// begin inline asm\n"
    "\t@%p6 st.shared.b32 [ %r7 + 0 ], %r9;\n"
    "\t// end inline asm\n"
    "\tbar.sync \t0;\n"
    "\tld.shared.f32 \t%f17, [global_smem];\n"
    "\t.loc\t1 16 20\n"
    "\tsub.f32 \t%f18, %f1, %f17;\n"
    "\tsub.f32 \t%f19, %f2, %f17;\n"
    "\tmul.f32 \t%f20, %f18, 0f3FB8AA3B;\n"
    "\tex2.approx.f32 %f21, %f20;\n"
    "\tmul.f32 \t%f22, %f19, 0f3FB8AA3B;\n"
    "\tex2.approx.f32 %f23, %f22;\n"
    "\tld.param.u64 \t%rd6, [softmax_kernel_param_3];\n"
    "\tadd.s64 \t%rd2, %rd4, %rd5;\n"
    "\tmov.b32 \t%r31, %f21;\n"
    "\tmov.b32 \t%r32, %f23;\n"
    "\t// begin inline asm\n"
    "\t@%p1 st.global.v2.b32 [ %rd2 + 0 ], { %r31, %r32 };\n"
    "\t// end inline asm\n"
    "\t.loc\t1 18 4\n"
    "\tret;\n"
    "$L__tmp1:\n"
    "$L__func_end0:\n"
    "                                        // -- End function\n"
    "}\n"
    "\t.file\t1 \"/tmp/softmax.py\"\n"
    "\t.file\t2 \"/opt/triton/language/standard.py\"\n"
    "\t.section\t.debug_abbrev\n"
    "\t{\n"
    ".b8 1                                   // Abbreviation Code\n"
    ".b8 17                                  // DW_TAG_compile_unit\n"
    ".b8 1                                   // DW_CHILDREN_yes\n"
    ".b8 37                                  // DW_AT_producer\n"
    ".b8 8                                   // DW_FORM_string\n"
    ".b8 0                                   // EOM(1)\n"
    ".b8 0                                   // EOM(2)\n"
    ".b8 0                                   // EOM(3)\n"
    "\t}\n"
    "\t.section\t.debug_info\n"
    "\t{\n"
    ".b32 40                                 // Length of Unit\n"
    ".b8 2                                   // DWARF version number\n"
    ".b8 0\n"
    ".b32 .debug_abbrev                      // Offset Into Abbrev. Section\n"
    ".b8 8                                   // Address Size (in bytes)\n"
    ".b8 1                                   // Abbrev [1] 0xb:0x3b DW_TAG_compile_unit\n"
    ".b8 116                                 // DW_AT_producer\n"
    ".b8 114\n"
    ".b8 105\n"
    ".b8 116\n"
    ".b8 111\n"
    ".b8 110\n"
    ".b8 0\n"
    ".b64 $L__func_begin0                    // DW_AT_low_pc\n"
    "\t}\n"
    "\t.section\t.debug_macinfo\t{\t}\n";

Test(calls, triton_style_module) {
    check_ptxas_arch(triton_style_ptx, "sm_80");
    TileDevice *d = open_dev(0);
    TileDevModule *m;
    TileDevFunction *f = load(d, triton_style_ptx, "softmax_kernel", &m);
    enum { ROWS = 3, N = 128, NCOLS = 126 }; /* even: the kernel masks pairs */
    float x[ROWS * N], o[ROWS * N];
    uint64_t s = 0x2545F4914F6CDD1Dull;
    for (unsigned i = 0; i < ROWS * N; i++) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; x[i] = (float)(int)(s % 2001 - 1000) / 100.0f; }
    for (unsigned j = 0; j < N; j++) x[N + j] = -fabsf(x[N + j]) - 1.0f; /* row 1 negative: a 0 fill would be its max */
    for (unsigned r = 0; r < ROWS; r++) x[r * N + 126] = x[r * N + 127] = 50.0f; /* masked: never the max */
    uint64_t dx = buffer(d, x, sizeof x), dout = buffer(d, NULL, sizeof o), none = 0;
    uint32_t ncols = NCOLS;
    void *params[] = {&dx, &dout, &ncols, &none};
    cr_assert_eq(dev_launch(f, ROWS, 1, 1, 64, 1, 1, 16, NULL, params), DEV_OK, "launch: %s", dev_last_error(d));
    cr_assert_eq(dev_memcpy_dtoh(d, o, dout, sizeof o), DEV_OK);
    for (unsigned r = 0; r < ROWS; r++) {
        double mx = -INFINITY;
        for (unsigned j = 0; j < NCOLS; j++) mx = fmax(mx, x[r * N + j]);
        for (unsigned j = 0; j < N; j++) {
            float got = o[r * N + j];
            if (j >= NCOLS) { /* not stored: the poison stays */
                uint32_t bits;
                memcpy(&bits, &got, 4);
                cr_assert_eq(bits, 0xEEEEEEEEu, "row %u, column %u written: %#x", r, j, bits);
                continue;
            }
            double want = exp((double)x[r * N + j] - mx);
            cr_assert(fabs(got - want) <= 4e-6 * want + 1e-30, "row %u, column %u: %.9g, want %.9g", r, j, got, want);
        }
    }
    dev_module_unload(m);
    dev_close(d);
}
