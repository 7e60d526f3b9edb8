/* launch_overhead.c - CPU time of tile_launch on a cached, empty kernel on
 * the emulator, with 4 and 20 arguments (goal: under 2 us per launch,
 * argument checks included).  The kernel does nothing, so the number is the
 * library's path (checks, dispatch) plus the emulator's fixed launch cost
 * for one block of one warp; bench/gpu/run.sh measures cuda. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/numparse.h"
#include "include/tile/tile.h"
#include "tools/json.h"

static double cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    /* launch_overhead [DEVICE] [--iters N] [--json]: --json prints each row as one JSON object */
    const char *device = "emu";
    int json = 0, n = 200000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
            if (!cli_option_int("launch_overhead", argv[i], argv[i + 1], 1, INT32_MAX, &n)) return 2;
            i++;
        }
        else device = argv[i];
    }
    tile_context_options o = {.device = device, .emu_host_threads = 1, .no_disk_cache = 1};
    tile_context *ctx;
    if (tile_context_create_ex(&o, &ctx) != TILE_OK) return fprintf(stderr, "cannot open %s\n", device), 1;
    const char *src =
        "@num_warps(1) kernel empty4(a: *f32, b: *f32, n: i32, s: f32) {}\n"
        "@num_warps(1) kernel empty20(a: *f32, b: *f32, c: *f32, d: *f32, e: *f32, f: *f32, g: *f32, h: *f32,\n"
        "    q0: i32, q1: i32, q2: i32, q3: i32, q4: i32, q5: i32, q6: i32, q7: i32, f0: f32, f1: f32, f2: f32, f3: f32) {}\n";
    tile_module *m;
    if (tile_module_load_source(ctx, src, NULL, &m) != TILE_OK) return fprintf(stderr, "%s\n", tile_last_error(ctx)), 1;
    tile_devptr p;
    tile_malloc(ctx, 1024, &p);
    int32_t iv = 7;
    float fv = 1.5f;
    void *args[20];
    for (int i = 0; i < 8; i++) args[i] = &p;
    for (int i = 8; i < 16; i++) args[i] = &iv;
    for (int i = 16; i < 20; i++) args[i] = &fv;
    void *args4[] = {&p, &p, &iv, &fv};
    fprintf(json ? stderr : stdout, "tile_launch CPU time on %s (empty kernel, grid 1, one warp):\n", device);
    for (int which = 0; which < 2; which++) {
        tile_kernel *k;
        tile_module_get_kernel(m, which ? "empty20" : "empty4", &k);
        void **a = which ? args : args4;
        for (int i = 0; i < 1000; i++) tile_launch(k, (tile_dim3){1, 1, 1}, a, NULL);
        double t0 = cpu_s();
        for (int i = 0; i < n; i++)
            if (tile_launch(k, (tile_dim3){1, 1, 1}, a, NULL) != TILE_OK) return fprintf(stderr, "%s\n", tile_last_error(ctx)), 1;
        tile_synchronize(ctx);
        double us = (cpu_s() - t0) / n * 1e6;
        if (json) {
            JsonOut j;
            json_begin(&j, stdout);
            json_str(&j, "bench", "launch_overhead");
            json_str(&j, "device", device);
            json_int(&j, "args", which ? 20 : 4);
            json_num(&j, "us_per_launch", us);
            json_num(&j, "goal_us", 2);
            json_end(&j);
        } else printf("  %2d args: %.3f us per launch (goal < 2 us)\n", which ? 20 : 4, us);
    }
    tile_module_unload(m);
    tile_context_destroy(ctx);
    return 0;
}
