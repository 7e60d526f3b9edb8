/* A program outside the project, built by scripts/check_install.sh with
 * pkg-config against an install that has been moved: prints the gemm.tile
 * the library resolved (the script checks it lies under the moved prefix, not
 * in the source tree), then runs tile_gemm on the emulator and checks C
 * against a float64 loop.  The inputs are multiples of 1/4 below 4: exact in
 * tf32, so every product and sum is exact in f32 too. */
#include <tile/tile.h>

#include <math.h>
#include <stdio.h>

enum { M = 48, N = 40, K = 64 };

int main(void) {
    printf("%s\n", tile_gemm_source_path());
    tile_context_options co = {.device = "emu", .no_disk_cache = 1};
    tile_context *ctx;
    if (tile_context_create_ex(&co, &ctx) != TILE_OK) return 10;
    static float a[M * K], b[K * N], c[M * N];
    for (int i = 0; i < M * K; i++) a[i] = (float)(i * 7 % 13 - 6) * 0.25f;
    for (int i = 0; i < K * N; i++) b[i] = (float)(i * 5 % 11 - 5) * 0.25f;
    tile_devptr da, db, dc;
    if (tile_malloc(ctx, sizeof a, &da) || tile_malloc(ctx, sizeof b, &db) || tile_malloc(ctx, sizeof c, &dc)) return 11;
    tile_memcpy_htod(ctx, da, a, sizeof a);
    tile_memcpy_htod(ctx, db, b, sizeof b);
    tile_gemm_args g = {.m = M, .n = N, .k = K, .a = da, .lda = K, .b = db, .ldb = N, .c = dc, .ldc = N,
                        .in_dtype = TILE_F32, .out_dtype = TILE_F32, .alpha = 1.0f};
    if (tile_gemm(ctx, &g) != TILE_OK) {
        fprintf(stderr, "tile_gemm: %s\n", tile_last_error(ctx));
        return 12;
    }
    if (tile_memcpy_dtoh(ctx, c, dc, sizeof c) != TILE_OK) return 13;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double want = 0;
            for (int k = 0; k < K; k++) want += (double)a[i * K + k] * b[k * N + j];
            if (fabs(c[i * N + j] - want) > 1e-6) {
                fprintf(stderr, "C[%d][%d] = %g, want %g\n", i, j, c[i * N + j], want);
                return 14;
            }
        }
    tile_context_destroy(ctx);
    fprintf(stderr, "gemm %dx%dx%d on emu matches the float64 loop\n", M, N, K);
    return 0;
}
