/* A C++ program outside the project, built by scripts/check_install.sh with c++ -std=c++11 .. c++20
 * -Wall -Wextra -Wpedantic -Werror against an installed tile: <tile/tile.h> and a `tile aot` header
 * (add_aot.h from `tile aot kernels/add.tile --kernel add`; its .c compiled as C) from C++, the
 * structs value-initialized and assigned as docs/runtime.md says for C++, linked with libtile_rt
 * alone.  On the emulator: an engine-owned host buffer registered in place, the add launched on a
 * stream of the program's own, checked against a double loop with the output poisoned first. */
#include <tile/tile.h>

#include "add_aot.h"

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
    tile_context_options co{};
    co.size = sizeof co;
    co.device = "emu";
    co.no_disk_cache = 1;
    tile_context *ctx = nullptr;
    if (tile_context_create_ex(&co, &ctx) != TILE_OK) {
        std::fprintf(stderr, "%s\n", tile_last_error(nullptr));
        return 10;
    }
    const int n = 1000;
    std::vector<float> x(n), y(n), out(n, std::nanf(""));
    for (int i = 0; i < n; i++) x[i] = 0.5f * static_cast<float>(i), y[i] = static_cast<float>(i % 7) - 3.0f;
    tile_devptr dx = 0, dy = 0, dout = 0;
    if (tile_register_memory(ctx, x.data(), n * sizeof(float), &dx) != TILE_OK ||
        tile_register_memory(ctx, y.data(), n * sizeof(float), &dy) != TILE_OK ||
        tile_register_memory(ctx, out.data(), n * sizeof(float), &dout) != TILE_OK)
        return 11;
    tile_stream s = nullptr;
    if (tile_stream_create(ctx, &s) != TILE_OK) return 12;
    if (add(ctx, tile_dim3{(n + 1023) / 1024, 1, 1}, dx, dy, dout, n, s) != TILE_OK) {
        std::fprintf(stderr, "add: %s\n", tile_last_error(ctx));
        return 13;
    }
    if (tile_stream_synchronize(ctx, s) != TILE_OK) return 14;
    for (int i = 0; i < n; i++)
        if (static_cast<double>(out[i]) != static_cast<double>(x[i]) + static_cast<double>(y[i])) {
            std::fprintf(stderr, "out[%d] = %g, want %g\n", i, static_cast<double>(out[i]), static_cast<double>(x[i] + y[i]));
            return 15;
        }
    add_aot_unload(ctx);
    tile_stream_destroy(ctx, s);
    tile_unregister_memory(ctx, dx), tile_unregister_memory(ctx, dy), tile_unregister_memory(ctx, dout);
    tile_context_destroy(ctx);
    std::puts("c++ consumer ok");
    return 0;
}
