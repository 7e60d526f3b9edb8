/* A program shipping an AOT-exported kernel (add_aot.c from `tile aot kernels/add.tile --kernel add`),
 * linked with libtile_rt only; runs it on the default device and checks the sums. */
#include "add_aot.h"

#include <stdio.h>

int main(void) {
    tile_context *ctx;
    if (tile_context_create(NULL, &ctx) != TILE_OK) return 10;
    enum { N = 3000 };
    static float hx[N], hy[N], ho[N];
    for (int i = 0; i < N; i++) hx[i] = (float)i, hy[i] = 0.25f * (float)i, ho[i] = -1.0f;
    tile_devptr x, y, o;
    if (tile_malloc(ctx, sizeof hx, &x) || tile_malloc(ctx, sizeof hy, &y) || tile_malloc(ctx, sizeof ho, &o)) return 11;
    tile_memcpy_htod(ctx, x, hx, sizeof hx);
    tile_memcpy_htod(ctx, y, hy, sizeof hy);
    tile_memcpy_htod(ctx, o, ho, sizeof ho);
    tile_status st = add(ctx, (tile_dim3){(N + 1023) / 1024, 1, 1}, x, y, o, N, NULL);
    if (st != TILE_OK) {
        fprintf(stderr, "%s\n", tile_last_error(ctx));
        return 12;
    }
    tile_memcpy_dtoh(ctx, ho, o, sizeof ho);
    for (int i = 0; i < N; i++)
        if (ho[i] != 1.25f * (float)i) return 13;
    add_aot_unload(ctx);
    tile_context_destroy(ctx);
    puts("aot consumer ok");
    return 0;
}
