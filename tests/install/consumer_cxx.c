/* A program outside the project written in the common subset of C and C++, built by
 * scripts/check_install.sh as C++ (c++ -x c++ -std=c++11 .. c++20 -Wall -Wextra -Wpedantic -Werror) against
 * an installed tile: <tile/tile.h> and a `tile aot` header (add_aot.h from `tile aot kernels/add.tile
 * --kernel add`; its .c compiled as C) included from C++, the structs zero-initialized and assigned as
 * docs/runtime.md says, linked with libtile_rt alone.  On the emulator: an engine-owned host buffer
 * registered in place, the add launched on a stream of the program's own, checked against a double loop
 * with the output poisoned first. */
#include <tile/tile.h>

#include "add_aot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    tile_context_options co;
    memset(&co, 0, sizeof co);
    co.size = sizeof co;
    co.device = "emu";
    co.no_disk_cache = 1;
    tile_context *ctx = NULL;
    if (tile_context_create_ex(&co, &ctx) != TILE_OK) {
        fprintf(stderr, "%s\n", tile_last_error(NULL));
        return 10;
    }
    const int n = 1000;
    float *x = (float *)malloc(n * sizeof(float)), *y = (float *)malloc(n * sizeof(float)), *out = (float *)malloc(n * sizeof(float));
    if (!x || !y || !out) return 9;
    for (int i = 0; i < n; i++) x[i] = 0.5f * (float)i, y[i] = (float)(i % 7) - 3.0f, out[i] = nanf("");
    tile_devptr dx = 0, dy = 0, dout = 0;
    if (tile_register_memory(ctx, x, n * sizeof(float), &dx) != TILE_OK || tile_register_memory(ctx, y, n * sizeof(float), &dy) != TILE_OK ||
        tile_register_memory(ctx, out, n * sizeof(float), &dout) != TILE_OK)
        return 11;
    tile_stream s = NULL;
    if (tile_stream_create(ctx, &s) != TILE_OK) return 12;
    tile_dim3 grid;
    grid.x = (unsigned)(n + 1023) / 1024, grid.y = 1, grid.z = 1;
    if (add(ctx, grid, dx, dy, dout, n, s) != TILE_OK) {
        fprintf(stderr, "add: %s\n", tile_last_error(ctx));
        return 13;
    }
    if (tile_stream_synchronize(ctx, s) != TILE_OK) return 14;
    for (int i = 0; i < n; i++)
        if ((double)out[i] != (double)x[i] + (double)y[i]) {
            fprintf(stderr, "out[%d] = %g, want %g\n", i, (double)out[i], (double)x[i] + (double)y[i]);
            return 15;
        }
    add_aot_unload(ctx);
    tile_stream_destroy(ctx, s);
    tile_unregister_memory(ctx, dx), tile_unregister_memory(ctx, dy), tile_unregister_memory(ctx, dout);
    tile_context_destroy(ctx);
    free(x), free(y), free(out);
    puts("c++ consumer ok");
    return 0;
}
