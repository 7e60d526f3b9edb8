/* test_emu_limits.c - the PTX emulator within the host's resources: memcheck's list of freed ranges stays bounded,
 * a block whose state the host cannot allocate and tables that cannot grow while the blocks run fail the launch
 * with DEV_ERR_OUT_OF_MEMORY (under address-space limits), a module the host runs out of memory parsing is
 * TILE_ERROR_OUT_OF_MEMORY, a cooperative grid whose thread count passes 2^64 is refused, a thread's local memory
 * is bounded as on a GPU, and 100000 labels and parameters load in bounded time.  None of them aborts the
 * process.  The other reports (memcheck, racecheck, deadlocks): test_emu.c. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/device.h"
#include "support/support.h"
#include "test_emu_util.h"
#include "test_ptxas.h"

#define PTX_HEAD ".version 7.8\n.target sm_80\n.address_size 64\n"

/* memcheck remembers the last EMU_FREED_KEEP freed ranges, not every one: 3 x EMU_FREED_KEEP dev_malloc/dev_free pairs
 * (a cooperative launch frees its workspace so too) kept 32 bytes each for the device's life, 31 MB after 10^6
 * (measured).  The latest free is still named in a report; the list stays within its bound. */
#include "emu/emu.h"
Test(report, freed_ranges_kept_are_bounded) {
    EmuMem mem;
    emu_mem_init(&mem);
    uint64_t a = 0;
    for (int i = 0; i < 3 * EMU_FREED_KEEP + 7; i++) {
        cr_assert(emu_mem_alloc(&mem, 64 + i % 5, false, &a));
        cr_assert(emu_mem_free(&mem, a));
        cr_assert_leq(mem.nfreed, EMU_FREED_KEEP, "after %d frees: %u kept", i + 1, mem.nfreed);
    }
    cr_expect_leq(mem.capfreed, EMU_FREED_KEEP);
    cr_expect_eq(mem.freed[mem.nfreed - 1].addr, a, "the latest free is kept last");
    cr_expect_gt(mem.nfreed, EMU_FREED_KEEP / 2 - 1);
    emu_mem_destroy(&mem);
    TileDevice *d = open_emu(false);
    TileDevModule *m;
    TileDevFunction *f = load(d, mem_read_ptx(), "rd", &m);
    uint64_t p = poisoned(d, 64), q = poisoned(d, 64), off = q - p;
    for (int i = 0; i < 3 * EMU_FREED_KEEP; i++) {
        uint64_t x;
        cr_assert_eq(dev_malloc(d, 16, &x), DEV_OK);
        cr_assert_eq(dev_free(d, x), DEV_OK);
    }
    cr_assert_eq(dev_free(d, q), DEV_OK);
    void *params[] = {&p, &off};
    cr_assert_eq(dev_launch(f, 1, 1, 1, 1, 1, 1, 0, NULL, params), DEV_ERR_MEMCHECK);
    cr_expect(strstr(dev_last_error(d), "inside a freed allocation of 64 bytes"), "%s", dev_last_error(d));
    dev_module_unload(m);
    dev_close(d);
}



/* A block whose registers and local memory the host cannot give (1024 threads of 512 KiB of .local each, a
 * thread's limit, under an address-space limit just above what the process maps) fails its launch with "out of
 * host memory"; the report named the block through the CTAs that were never allocated (a NULL dereference in a
 * worker thread). */
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>
#if !defined(__SANITIZE_ADDRESS__) /* the tests below skip themselves under ASan */
static uint64_t mapped_bytes(void) {
    FILE *fp = fopen("/proc/self/status", "r");
    char line[256];
    uint64_t kb = 0;
    while (fp && fgets(line, sizeof line, fp))
        if (sscanf(line, "VmSize: %" SCNu64 " kB", &kb) == 1) break;
    if (fp) fclose(fp);
    return kb << 10;
}
#endif
Test(report, block_state_out_of_host_memory) {
#if defined(__SANITIZE_ADDRESS__)
    cr_skip("under AddressSanitizer the address space cannot be limited: NOT checked here");
#else
    static const char *ptx = PTX_HEAD
        ".visible .entry big(.param .u32 x)\n{\n .local .align 4 .b8 lm[524288];\n .reg .b32 %r<2>;\n"
        " mov.u32 %r1, 7;\n st.local.u32 [lm+524284], %r1;\n ret;\n}\n";
    TileDevice *d = NULL;
    cr_assert_eq(dev_open("emu", NULL, &d, NULL), DEV_OK);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "big", &m);
    uint64_t vm = mapped_bytes();
    cr_assert_gt(vm, 0);
    struct rlimit rl = {(rlim_t)(vm + (64u << 20)), (rlim_t)(vm + (64u << 20))};
    cr_assert_eq(setrlimit(RLIMIT_AS, &rl), 0);
    uint32_t x = 0;
    void *params[] = {&x};
    cr_assert_eq(dev_launch(f, 1, 1, 1, 1024, 1, 1, 0, NULL, params), DEV_ERR_OUT_OF_MEMORY, "%s", dev_last_error(d));
    cr_assert(strstr(dev_last_error(d), "out of host memory") && strstr(dev_last_error(d), "kernel 'big'"), "%s", dev_last_error(d));
    dev_module_unload(m);
    dev_close(d);
#endif
}

/* Host memory running out while the blocks run (racecheck's table of release writes growing with each global
 * address a thread stores to with st.release, printf's output) fails the launch with DEV_ERR_OUT_OF_MEMORY
 * (TILE_ERROR_OUT_OF_MEMORY) and a report, not an abort: one block of 256 threads, each storing to 64 words of
 * its own and printing a line, under address-space limits from 256 KiB to 96 MiB above what the process maps;
 * each launch ends in one or the other, both are seen, one of them while the blocks ran, and the device runs the
 * kernel afterwards.  Before, the table's growth aborted the process ("out of memory" at exec_race.c). */
#if !defined(__SANITIZE_ADDRESS__)
static DevStatus launch_quiet(TileDevFunction *f, unsigned threads, void **params) { /* its printf to /dev/null */
    fflush(stdout);
    int saved = dup(1), null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    DevStatus st = dev_launch(f, 1, 1, 1, threads, 1, 1, 0, NULL, params);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    close(null);
    return st;
}
#endif
Test(report, launch_out_of_host_memory_while_running, .timeout = 120) {
#if defined(__SANITIZE_ADDRESS__)
    cr_skip("under AddressSanitizer the address space cannot be limited: NOT checked here");
#else
    static const char *ptx = PTX_HEAD
        ".extern .func (.param .b32 r) vprintf(.param .b64 fmt, .param .b64 args);\n"
        ".global .align 1 .b8 fmt[8] = {116, 37, 117, 10, 0};\n" /* "t%u\n" */
        ".visible .entry rel(.param .u64 out)\n{\n .reg .pred %p1;\n .reg .b32 %r<8>;\n .reg .b64 %rd<12>;\n"
        " .local .align 4 .b8 args[4];\n"
        " ld.param.u64 %rd1, [out];\n mov.u32 %r1, %tid.x;\n mul.wide.u32 %rd2, %r1, 256;\n add.s64 %rd3, %rd1, %rd2;\n"
        " mov.u32 %r2, 0;\n"
        "LOOP:\n"
        " mul.wide.u32 %rd4, %r2, 4;\n add.s64 %rd5, %rd3, %rd4;\n add.u32 %r3, %r2, %r1;\n"
        " st.release.gpu.global.u32 [%rd5], %r3;\n add.u32 %r2, %r2, 1;\n setp.lt.u32 %p1, %r2, 64;\n @%p1 bra LOOP;\n"
        " st.local.u32 [args], %r1;\n mov.u64 %rd6, fmt;\n cvta.global.u64 %rd7, %rd6;\n mov.u64 %rd8, args;\n"
        " cvta.local.u64 %rd9, %rd8;\n"
        " { .param .b64 p0; st.param.b64 [p0], %rd7; .param .b64 p1; st.param.b64 [p1], %rd9; .param .b32 r;\n"
        "   call.uni (r), vprintf, (p0, p1); }\n ret;\n}\n";
    enum { T = 256 };
    TileDevice *d = NULL;
    DevOptions o = {.emu_racecheck = true, .emu_host_threads = 1, .emu_timeout_seconds = test_emu_budget()};
    cr_assert_eq(dev_open("emu", &o, &d, NULL), DEV_OK);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "rel", &m);
    uint64_t out;
    cr_assert_eq(dev_malloc(d, (size_t)T * 256, &out), DEV_OK);
    void *params[] = {&out};
    struct rlimit old;
    cr_assert_eq(getrlimit(RLIMIT_AS, &old), 0);
    int oom = 0, ok = 0, running = 0;
    char first_oom[512] = "";
    for (uint64_t extra = 256u << 10; extra <= (uint64_t)96 << 20; extra += extra / 4) {
        struct rlimit rl = {(rlim_t)(mapped_bytes() + extra), old.rlim_max};
        cr_assert_eq(setrlimit(RLIMIT_AS, &rl), 0);
        DevStatus st = launch_quiet(f, T, params);
        cr_assert_eq(setrlimit(RLIMIT_AS, &old), 0);
        cr_expect(st == DEV_OK || st == DEV_ERR_OUT_OF_MEMORY, "limit +%llu KiB: status %d: %s", (unsigned long long)(extra >> 10), st,
                  dev_last_error(d));
        if (st == DEV_ERR_OUT_OF_MEMORY) {
            cr_expect(strstr(dev_last_error(d), "out of host memory") && strstr(dev_last_error(d), "kernel 'rel'"), "%s", dev_last_error(d));
            running += strstr(dev_last_error(d), "while its blocks ran") != NULL;
            if (!*first_oom) snprintf(first_oom, sizeof first_oom, "%s", dev_last_error(d));
        }
        oom += st == DEV_ERR_OUT_OF_MEMORY;
        ok += st == DEV_OK;
    }
    cr_expect_gt(oom, 0, "no limit ran out of memory: the test checked nothing");
    cr_expect_gt(ok, 0, "no limit was enough");
    cr_expect_gt(running, 0, "no launch ran out of memory while its blocks ran (the first report: %s)", first_oom);
    /* the device still runs the kernel: each thread's 64 words */
    cr_assert_eq(dev_memset_d8(d, out, 0xEE, (size_t)T * 256), DEV_OK);
    cr_assert_eq(launch_quiet(f, T, params), DEV_OK, "%s", dev_last_error(d));
    uint32_t *got = malloc((size_t)T * 256);
    cr_assert_eq(dev_memcpy_dtoh(d, got, out, (size_t)T * 256), DEV_OK);
    for (uint32_t t = 0; t < T; t++)
        for (uint32_t k = 0; k < 64; k++) cr_expect_eq(got[t * 64 + k], t + k, "thread %u word %u: %#x", t, k, got[t * 64 + k]);
    free(got);
    dev_module_unload(m);
    dev_close(d);
#endif
}

/* A cooperative launch's thread count is counted without a product that wraps: grid (2^30, 2^15, 2^15) of 16
 * threads (2^64 threads, counted 0) is refused (DEV_ERR_INVALID, naming the count); before, it ran as units of no
 * CTA and divided by zero (SIGFPE). */
Test(report, cooperative_grid_too_large_for_64_bits) {
    static const char *ptx = PTX_HEAD ".visible .entry k()\n{\n ret;\n}\n";
    TileDevice *d = open_emu(false);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    static const struct { unsigned g[3], b[3]; const char *msg; } cases[] = {
        {{1u << 30, 1u << 15, 1u << 15}, {16, 1, 1}, "a cooperative launch of 1152921504606846976 blocks of 16 threads"},
        {{1u << 30, 1u << 15, 1u << 15}, {1024, 1, 1}, "a cooperative launch of 1152921504606846976 blocks of 1024 threads"},
        {{65536, 1, 1}, {8, 1, 1}, "a cooperative launch of 524288 threads"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_expect_eq(dev_launch_flags(f, cases[i].g, cases[i].b, 0, NULL, NULL, DEV_LAUNCH_COOPERATIVE, NULL), DEV_ERR_INVALID, "case %zu: %s",
                     i, dev_last_error(d));
        cr_expect(strstr(dev_last_error(d), cases[i].msg), "case %zu: %s", i, dev_last_error(d));
    }
    /* the largest that fits runs */
    cr_expect_eq(dev_launch_flags(f, (unsigned[3]){256, 1, 1}, (unsigned[3]){1024, 1, 1}, 0, NULL, NULL, DEV_LAUNCH_COOPERATIVE, NULL), DEV_OK,
                 "%s", dev_last_error(d));
    dev_module_unload(m);
    dev_close(d);
}

/* Memory running out while the emulator parses a module is TILE_ERROR_OUT_OF_MEMORY from tile_module_load_ptx,
 * not an abort: 40,000 instructions (about 14 MB parsed) loaded under address-space limits from 1 MiB to 128 MiB
 * above what the process maps, each ending in one or the other, with both seen; the context loads and runs a
 * module afterwards.  Before, the parser's allocation failure aborted the process. */
#include "tile/tile.h"
Test(report, module_parse_out_of_host_memory, .timeout = 120) {
#if defined(__SANITIZE_ADDRESS__)
    cr_skip("under AddressSanitizer the address space cannot be limited: NOT checked here");
#else
    enum { N = 40000 };
    Str s = {0};
    str_puts(&s, PTX_HEAD ".visible .entry k(.param .u64 p)\n{\n .reg .b32 %r<4>;\n .reg .b64 %rd<2>;\n mov.u32 %r1, 0;\n");
    for (int i = 0; i < N; i++) str_printf(&s, " add.s32 %%r1, %%r1, %d;\n", i & 1023);
    str_puts(&s, " ld.param.u64 %rd1, [p];\n st.global.u32 [%rd1], %r1;\n ret;\n}\n");
    char *ptx = str_take(&s);
    tile_context *ctx;
    cr_assert_eq(tile_context_create("emu", &ctx), TILE_OK);
    struct rlimit old;
    cr_assert_eq(getrlimit(RLIMIT_AS, &old), 0);
    int oom = 0, ok = 0;
    for (uint64_t extra = 1u << 20; extra <= (uint64_t)128 << 20; extra *= 2) {
        tile_module *m = NULL;
        struct rlimit rl = {(rlim_t)(mapped_bytes() + extra), old.rlim_max};
        cr_assert_eq(setrlimit(RLIMIT_AS, &rl), 0);
        tile_status st = tile_module_load_ptx(ctx, ptx, &m);
        cr_assert_eq(setrlimit(RLIMIT_AS, &old), 0);
        cr_expect(st == TILE_OK || st == TILE_ERROR_OUT_OF_MEMORY, "limit +%llu MiB: %s: %s", (unsigned long long)(extra >> 20),
                  tile_status_string(st), tile_last_error(ctx));
        if (st == TILE_ERROR_OUT_OF_MEMORY)
            cr_expect(strstr(tile_last_error(ctx), "out of host memory"), "%s", tile_last_error(ctx));
        oom += st == TILE_ERROR_OUT_OF_MEMORY;
        ok += st == TILE_OK;
        if (m) tile_module_unload(m);
    }
    cr_expect_gt(oom, 0, "no limit ran out of memory: the test checked nothing");
    cr_expect_gt(ok, 0, "no limit was enough");
    /* the context still works: the module loads and computes the sum */
    tile_module *m;
    tile_kernel *k;
    cr_assert_eq(tile_module_load_ptx(ctx, ptx, &m), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_module_get_kernel(m, "k", &k), TILE_OK);
    tile_devptr out;
    cr_assert_eq(tile_malloc(ctx, 4, &out), TILE_OK);
    void *args[] = {&out};
    cr_assert_eq(tile_launch_raw(k, (tile_dim3){1, 1, 1}, (tile_dim3){1, 1, 1}, 0, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    uint32_t got = 0, want = 0;
    cr_assert_eq(tile_memcpy_dtoh(ctx, &got, out, 4), TILE_OK);
    for (int i = 0; i < N; i++) want += (uint32_t)(i & 1023);
    cr_expect_eq(got, want);
    tile_module_unload(m);
    tile_context_destroy(ctx);
    free(ptx);
#endif
}

/* A thread's local memory is bounded as on a GPU (512 KiB: a kernel's .local beyond it is refused at launch, and
 * frames or allocas past it stop the launch as a call stack overflow).  Before, a thread could take 2 GiB: a
 * .func with 64 KiB of .local recursing 1000 deep in 32 threads took 12 GB of host memory and a minute and a
 * half past its time budget; a 1 GiB .local in 128 threads asked the host for 128 GiB. */
Test(report, local_memory_per_thread_is_bounded) {
    static const char *big = PTX_HEAD
        ".visible .entry big(.param .u32 x)\n{\n .local .align 4 .b8 lm[524292];\n .reg .b32 %r<2>;\n"
        " mov.u32 %r1, 7;\n st.local.u32 [lm+524288], %r1;\n ret;\n}\n";
    static const char *deep = PTX_HEAD
        ".func (.param .b32 r) f(.param .b32 n)\n{\n .local .align 4 .b8 buf[65536];\n .reg .b32 %r<4>;\n .reg .pred %p;\n"
        " ld.param.b32 %r1, [n];\n st.local.u32 [buf+65532], %r1;\n setp.eq.u32 %p, %r1, 0;\n @%p bra done;\n"
        " sub.u32 %r2, %r1, 1;\n {\n .param .b32 a;\n .param .b32 b;\n st.param.b32 [a], %r2;\n"
        " call.uni (b), f, (a);\n ld.param.b32 %r3, [b];\n }\n ld.local.u32 %r1, [buf+65532];\n add.u32 %r1, %r1, %r3;\n"
        "done:\n st.param.b32 [r], %r1;\n ret;\n}\n"
        ".visible .entry rec(.param .u64 out, .param .u32 n)\n{\n .reg .b32 %r<3>;\n .reg .b64 %rd<2>;\n"
        " ld.param.u32 %r1, [n];\n {\n .param .b32 a;\n .param .b32 b;\n st.param.b32 [a], %r1;\n"
        " call.uni (b), f, (a);\n ld.param.b32 %r2, [b];\n }\n ld.param.u64 %rd1, [out];\n st.global.u32 [%rd1], %r2;\n ret;\n}\n";
    TileDevice *d = NULL;
    cr_assert_eq(dev_open("emu", NULL, &d, NULL), DEV_OK);
    TileDevModule *m, *m2;
    TileDevFunction *f = load(d, big, "big", &m);
    uint32_t x = 0;
    void *params[] = {&x};
    int rc0 = dev_launch(f, 1, 1, 1, 32, 1, 1, 0, NULL, params);
    cr_assert_eq(rc0, DEV_ERR_INVALID, "%d %s", rc0, dev_last_error(d));
    cr_assert(strstr(dev_last_error(d), "524292 bytes of local memory per thread exceed the 524288"), "%s", dev_last_error(d));
    TileDevFunction *g = load(d, deep, "rec", &m2);
    uint64_t out;
    cr_assert_eq(dev_malloc(d, 4, &out), DEV_OK);
    for (uint32_t n = 3; n <= 1000; n += 997) {
        void *p2[] = {&out, &n};
        int rc = dev_launch(g, 1, 1, 1, 32, 1, 1, 0, NULL, p2);
        if (n == 3) { /* four frames of 64 KiB: within the limit, 3 + 2 + 1 + 0 */
            cr_assert_eq(rc, DEV_OK, "%s", dev_last_error(d));
            uint32_t v = 0;
            cr_assert_eq(dev_memcpy_dtoh(d, &v, out, 4), DEV_OK);
            cr_assert_eq(v, 6u);
        } else {
            cr_assert_eq(rc, DEV_ERR_LAUNCH);
            cr_assert(strstr(dev_last_error(d), "call stack overflow") && strstr(dev_last_error(d), "exceeds 524288 bytes"), "%s",
                      dev_last_error(d));
        }
    }
    dev_free(d, out);
    dev_module_unload(m2);
    dev_module_unload(m);
    dev_close(d);
}

/* Labels and parameters by the 100000 (20000 parameters): each label was looked up by a linear search (at its
 * definition and at every branch) and the parameters compared pairwise, minutes for either; the module loads and
 * runs (the branch goes to the last label), and a duplicate label and a duplicate parameter are still refused.
 * How long loading takes is bench/emu_load's number (about 1 s, 22 s before the hash tables), not this test's. */

Test(ptx, many_labels_and_parameters, .timeout = 60) {
    enum { N = 100000 };
    Str s = {0};
    /* each label is checked against the parameters' names, and every ld.param looks its name up (a linear search each:
     * N * P compares, about 20 s) */
    enum { P = 20000 };
    /* PTX 8.1: 32764 bytes of parameters */
    str_puts(&s, ".version 8.1\n.target sm_80\n.address_size 64\n.visible .entry many(.param .u64 out");
    for (int i = 0; i < P; i++) str_printf(&s, ", .param .u8 p%d", i);
    str_puts(&s, ")\n{\n .reg .b32 %r<4>;\n .reg .b16 %h<2>;\n .reg .b64 %rd<2>;\n mov.u32 %r1, 0;\n bra L_last;\n");
    for (int i = 0; i < N; i++) str_printf(&s, "L_%d:\n add.u32 %%r1, %%r1, 1;\n ld.param.u8 %%h1, [p%d];\n", i, i % P);
    str_printf(&s, "L_last:\n ld.param.u8 %%h1, [p%d];\n cvt.u32.u16 %%r2, %%h1;\n add.u32 %%r1, %%r1, %%r2;\n"
                   " ld.param.u64 %%rd1, [out];\n st.global.u32 [%%rd1], %%r1;\n ret;\n}\n", P - 1);
    TileDevice *d = NULL;
    cr_assert_eq(dev_open("emu", NULL, &d, NULL), DEV_OK);
    TileDevModule *m;
    TileDevFunction *f = load(d, s.buf, "many", &m);
    uint64_t out;
    cr_assert_eq(dev_malloc(d, 4, &out), DEV_OK);
    uint8_t *vals = calloc(P, sizeof *vals);
    void **params = calloc(P + 1, sizeof *params);
    cr_assert(vals && params);
    params[0] = &out;
    for (int i = 0; i < P; i++) params[i + 1] = &vals[i];
    vals[P - 1] = 41;
    cr_assert_eq(dev_launch(f, 1, 1, 1, 32, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(d));
    uint32_t got = 0;
    cr_assert_eq(dev_memcpy_dtoh(d, &got, out, 4), DEV_OK);
    cr_expect_eq(got, 41, "the branch skipped the adds: %u", got); /* 0 adds, then p_last */
    dev_module_unload(m);
    free(vals);
    free(params);

    /* a label defined twice far apart, and a parameter declared twice far apart */
    Str bad = {0};
    str_puts(&bad, PTX_HEAD ".visible .entry dup()\n{\n");
    for (int i = 0; i < N; i++) str_printf(&bad, "L_%d:\n", i);
    str_puts(&bad, "L_7:\n ret;\n}\n");
    cr_expect_eq(dev_module_load_ptx(d, bad.buf, &m), DEV_ERR_PTX);
    cr_expect(strstr(dev_last_error(d), "label 'L_7' defined twice in one block"), "%s", dev_last_error(d));
    bad.len = 0;
    str_puts(&bad, PTX_HEAD ".visible .entry dup(.param .u32 p7");
    for (int i = 0; i < N / 5; i++) str_printf(&bad, ", .param .u32 q%d", i);
    str_puts(&bad, ", .param .u32 p7)\n{\n ret;\n}\n");
    cr_expect_eq(dev_module_load_ptx(d, bad.buf, &m), DEV_ERR_PTX);
    cr_expect(strstr(dev_last_error(d), "parameter 'p7' of 'dup' is declared twice"), "%s", dev_last_error(d));
    str_free(&bad);
    str_free(&s);
    dev_close(d);
}
