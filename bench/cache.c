/* cache.c - the compile cache: the cost of a memory hit (loading an
 * already loaded kernel: goal < 1 us), of a disk hit (reading and checking
 * an entry: goal < 1% of compiling cold), and of a cold compile, for the
 * shipped GEMM (gemm_bf16_f32) and a small kernel without imports.  A
 * memory hit by path stat()s the file and its imports (gemm.tile imports
 * math.tile), so the stat() cost of the machine is printed next to it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tools/numparse.h"
#include "include/tile/tile.h"
#include "tools/json.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* cache [--reps N] [--json]: N memory hits timed per row (default 200000); --json prints each row as one JSON object */
int main(int argc, char **argv) {
    int json = 0, hit_reps = 200000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            if (!cli_option_int("cache", argv[i], argv[i + 1], 1, INT32_MAX, &hit_reps)) return 2;
            i++;
        }
        else return fprintf(stderr, "usage: cache [--reps N] [--json]\n"), 2;
    }
    char dir[] = "/tmp/tile-bench-cache-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    const char *gemm = TILE_SOURCE_DIR "/kernels/gemm/gemm.tile";
    tile_compile_options o = {.kernel = "gemm_bf16_f32"};
    tile_compiled c;
    int hit;
    double t0 = now_s();
    if (tile_cache_compile_file(dir, gemm, &o, &c, &hit) != TILE_OK) return fprintf(stderr, "%s", c.diagnostics), 1;
    double cold = now_s() - t0;
    tile_compiled_free(&c);
    int n = 50;
    t0 = now_s();
    for (int i = 0; i < n; i++) {
        tile_cache_compile_file(dir, gemm, &o, &c, &hit);
        if (!hit) return fprintf(stderr, "expected a disk hit\n"), 1;
        tile_compiled_free(&c);
    }
    double disk = (now_s() - t0) / n;
    if (json) {
        JsonOut j;
        json_begin(&j, stdout);
        json_str(&j, "bench", "cache");
        json_str(&j, "kernel", "gemm_bf16_f32");
        json_num(&j, "cold_compile_ms", cold * 1e3);
        json_num(&j, "disk_load_ms", disk * 1e3);
        json_num(&j, "disk_pct_of_cold", 100 * disk / cold);
        json_num(&j, "goal_pct", 1);
        json_end(&j);
    } else
        printf("gemm_bf16_f32: cold compile %.2f ms, disk-cache load %.3f ms (%.2f%% of cold; goal < 1%%)\n", cold * 1e3, disk * 1e3,
               100 * disk / cold);

    /* memory hits: a module already loaded in the context */
    tile_context_options co = {.device = "emu", .cache_dir = dir};
    tile_context *ctx;
    if (tile_context_create_ex(&co, &ctx) != TILE_OK) return 1;
    const char *src = "kernel k(x: *f32, n: i32, const B: i32 = 128) { store(x + arange(0, B), 1.0, arange(0, B) < n); }";
    tile_module *m, *m2;
    tile_module_load_source(ctx, src, NULL, &m);
    int reps = hit_reps;
    t0 = now_s();
    for (int i = 0; i < reps; i++) {
        tile_module_load_source(ctx, src, NULL, &m2);
        tile_module_unload(m2);
    }
    double mem = (now_s() - t0) / reps;
    tile_module *g, *g2;
    tile_module_load_file_ex(ctx, gemm, &o, &g);
    t0 = now_s();
    for (int i = 0; i < reps; i++) {
        tile_module_load_file_ex(ctx, gemm, &o, &g2);
        tile_module_unload(g2);
    }
    double memg = (now_s() - t0) / reps;
    struct stat st;
    t0 = now_s();
    for (int i = 0; i < reps; i++) stat(gemm, &st);
    double stat_s = (now_s() - t0) / reps;
    /* the same with assume_files_unchanged: no stat() */
    tile_context_options co2 = co;
    co2.assume_files_unchanged = 1;
    tile_context *ctx2;
    if (tile_context_create_ex(&co2, &ctx2) != TILE_OK) return 1;
    tile_module *h, *h2;
    tile_module_load_file_ex(ctx2, gemm, &o, &h);
    t0 = now_s();
    for (int i = 0; i < reps; i++) {
        tile_module_load_file_ex(ctx2, gemm, &o, &h2);
        tile_module_unload(h2);
    }
    double memu = (now_s() - t0) / reps;
    if (json) {
        static const char *what[] = {"source without imports", "gemm.tile by path", "gemm.tile by path with assume_files_unchanged"};
        double us[] = {mem * 1e6, memg * 1e6, memu * 1e6};
        for (int i = 0; i < 3; i++) {
            JsonOut j;
            json_begin(&j, stdout);
            json_str(&j, "bench", "cache");
            json_str(&j, "memory_hit", what[i]);
            json_num(&j, "us", us[i]);
            if (i == 0) json_num(&j, "goal_us", 1);
            if (i == 1) json_num(&j, "stat_us", stat_s * 1e6);
            json_end(&j);
        }
    } else
    printf("memory hit (already loaded): %.3f us for a source without imports (goal < 1 us)\n"
           "  gemm.tile by path: %.3f us (stat()s it and its import math.tile; one stat() costs %.3f us here)\n"
           "  gemm.tile by path with assume_files_unchanged: %.3f us\n",
           mem * 1e6, memg * 1e6, stat_s * 1e6, memu * 1e6);
    tile_module_unload(h);
    tile_context_destroy(ctx2);
    tile_module_unload(m);
    tile_module_unload(g);
    tile_context_destroy(ctx);
    tile_cache_clear(dir, 1);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) != 0;
}
