/* emu_speed.c - emulator throughput benchmark (not a test).
 *
 * Runs LLVM-emitted kernels from tests/emu/ on the emu backend (vadd, a
 * shuffle reduction, an mma.sync loop) and prints executed
 * thread-instructions per second, single host thread and all cores (one host thread: per second of wall
 * clock and of the process's CPU time).  Goal: >= 50 M thread-instructions/s per host core.
 *
 * Build: gcc -std=c17 -D_GNU_SOURCE -O2 -I. support/support.c runtime/device*.c \
 *            emu/ *.c bench/emu_speed.c -lpthread -ldl -lm -o emu_speed
 * Run from the repository root: ./emu_speed */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/numparse.h"
#include "runtime/device.h"
#include "support/support.h"
#include "tools/json.h"

static int json;            /* --json: one JSON object per row */
static const char *only;    /* --only KERNEL: that kernel's rows alone */
static int one_thread_only; /* --single: the one-host-thread rows alone */
static int racecheck;       /* --racecheck: with the emulator's racecheck, as the tests run it */
static unsigned reps = 1;   /* --reps N: each row's launch N times, its medians reported */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static double median(double *v, unsigned n) {
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The process's CPU time: with one host thread, the launch's own time whatever else the machine runs (the
 * calling thread only waits for the worker) */
static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what, TileDevice *d) {
    fprintf(stderr, "%s: %s\n", what, d ? dev_last_error(d) : "");
    exit(1);
}

static void bench(const char *file, const char *kernel, unsigned threads, int which) {
    if (only && strcmp(only, kernel)) return;
    char path[256];
    snprintf(path, sizeof path, "tests/emu/%s", file);
    size_t len;
    char *ptx = read_file(path, &len);
    if (!ptx) { fprintf(stderr, "cannot read %s (run from the repository root)\n", path); exit(1); }
    for (unsigned ht = 1; ht <= (one_thread_only ? 1u : 2u); ht++) {
        DevOptions o = {.emu_host_threads = ht == 1 ? 1 : 0, .emu_racecheck = racecheck};
        TileDevice *d;
        if (dev_open("emu", &o, &d, NULL)) die("open", NULL);
        TileDevModule *m;
        TileDevFunction *f;
        if (dev_module_load_ptx(d, ptx, &m) || dev_module_get_function(m, kernel, &f)) die("load", d);
        int n = 1 << 22;
        uint64_t a, b, c;
        if (dev_malloc(d, (size_t)n * 4, &a) || dev_malloc(d, (size_t)n * 4, &b) || dev_malloc(d, (size_t)n * 4, &c)) die("malloc", d);
        /* inputs that are not zero: f16 pairs in [-2, 2) for mma_loop (zeros would make every product trivial),
         * the same bits as integers for vadd/block_sum */
        uint32_t *h = malloc((size_t)n * 4), rng = 12345;
        if (!h) die("out of host memory", NULL);
        for (int i = 0; i < n; i++) {
            uint32_t w = 0;
            for (int half = 0; half < 2; half++) {
                rng = rng * 1664525u + 1013904223u;
                /* sign, exponent 14..15 (0.5 <= |x| < 2), ten random mantissa bits */
                uint32_t f16 = (rng >> 31) << 15 | (14u + (rng >> 30 & 1)) << 10 | (rng >> 8 & 0x3ff);
                w |= f16 << (16 * half);
            }
            h[i] = w;
        }
        if (dev_memcpy_htod(d, a, h, (size_t)n * 4) || dev_memcpy_htod(d, b, h, (size_t)n * 4)) die("copy", d);
        free(h);
        int nn = (int)threads;
        void *p3[] = {&a, &b, &c, &nn};
        void *p2[] = {&a, &b, &nn};
        unsigned bs = 256;
        /* one launch is one sample: a single sample on a shared machine is as much its load as the emulator (a
         * CI run's one-shot vadd figure moved 12% between two builds that executed the same host instructions) */
        double *ts = malloc(reps * sizeof *ts), *cs = malloc(reps * sizeof *cs);
        if (!ts || !cs) die("out of host memory", NULL);
        DevLaunchStats s;
        for (unsigned rep = 0; rep < reps; rep++) {
            double t0 = now(), c0 = cpu_now();
            if (dev_launch(f, (threads + bs - 1) / bs, 1, 1, bs, 1, 1, 0, NULL, which == 0 ? p3 : p2)) die("launch", d);
            ts[rep] = now() - t0, cs[rep] = cpu_now() - c0;
        }
        dev_last_launch_stats(d, &s);
        double t = median(ts, reps), cpu = median(cs, reps);
        free(ts);
        free(cs);
        if (json) {
            JsonOut j;
            json_begin(&j, stdout);
            json_str(&j, "bench", "emu_speed");
            json_str(&j, "file", file);
            json_str(&j, "kernel", kernel);
            json_uint(&j, "threads", threads);
            json_str(&j, "host_threads", ht == 1 ? "1" : "all");
            json_uint(&j, "instr", s.instructions);
            json_uint(&j, "reps", reps);
            json_num(&j, "s", t);
            json_num(&j, "m_thread_instr_per_s", s.instructions / t / 1e6);
            json_num(&j, "cpu_s", cpu);
            if (ht == 1) json_num(&j, "m_thread_instr_per_cpu_s", s.instructions / cpu / 1e6);
            json_end(&j);
        } else {
            /* the row ends in "= N M instr/s" (bench/gpu/run.sh reads the third field from the end) */
            printf("%-10s %-10s %u threads, host threads %-4s: %10llu instr in %.3f s", file, kernel, threads, ht == 1 ? "1" : "all",
                   (unsigned long long)s.instructions, t);
            if (reps > 1) printf(", median of %u", reps);
            if (ht == 1) printf(" (CPU %.3f s, %6.1f M/s)", cpu, s.instructions / cpu / 1e6);
            printf(" = %6.1f M instr/s\n", s.instructions / t / 1e6);
        }
        dev_module_unload(m);
        dev_close(d);
    }
    free(ptx);
}

/* emu_speed [--threads N] [--only vadd|block_sum|mma_loop] [--single] [--racecheck] [--reps N] [--json]: --threads sets the
 * vadd thread count (block_sum gets half, mma_loop a 256th; default 4M); --only runs one kernel, --single only on one
 * host thread, --racecheck with the emulator's racecheck on, --reps N launches each row N times and gives the
 * medians of the wall-clock and CPU times (default 1).  One host thread's rows also give the speed per second
 * of CPU time, which other jobs on the machine do not change as much as the wall-clock figure. */
int main(int argc, char **argv) {
    unsigned threads = 1u << 22;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--single")) one_thread_only = 1;
        else if (!strcmp(argv[i], "--racecheck")) racecheck = 1;
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            int v;
            if (!cli_option_int("emu_speed", argv[i], argv[i + 1], 1, INT32_MAX, &v)) return 2;
            threads = (unsigned)v, i++;
        }
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            int v;
            if (!cli_option_int("emu_speed", argv[i], argv[i + 1], 1, 1000, &v)) return 2;
            reps = (unsigned)v, i++;
        }
        else return fprintf(stderr, "usage: emu_speed [--threads N] [--only KERNEL] [--single] [--racecheck] [--reps N (1..1000)] [--json]\n"), 2;
    }
    /* a kernel it does not run measured nothing and exited 0 */
    if (only && strcmp(only, "vadd") && strcmp(only, "block_sum") && strcmp(only, "mma_loop"))
        return fprintf(stderr, "emu_speed: --only: no kernel '%s' (vadd, block_sum or mma_loop)\n", only), 2;
    if (threads < 512) threads = 512;
    if (threads > 1u << 22) threads = 1u << 22;
    bench("vadd.ptx", "vadd", threads, 0);
    bench("reduce.ptx", "block_sum", threads / 2, 1);
    /* tensor cores: 256 mma.m16n8k16 a warp (each lane counts one thread-instruction per mma) */
    unsigned mma_threads = threads / 256 / 256 * 256; /* whole blocks: a warp's mma needs all its lanes */
    bench("mma_loop.ptx", "mma_loop", mma_threads ? mma_threads : 256, 1);
    return 0;
}
