/* test_ctx_buffers.h - a context and buffers through the public API (include/tile/tile.h) for the kernel tests
 * that launch through the launcher library: the context on TILE_TEST_DEVICE (the emulator by default) with race
 * checking on, an upload (a zero-byte one still allocates, so a kernel may take its address), a download.
 * The device-layer tests use test_dev_buffers.h instead. */
#ifndef TILE_TEST_CTX_BUFFERS_H
#define TILE_TEST_CTX_BUFFERS_H
#include <criterion/criterion.h>
#include <stdlib.h>

#include "include/tile/tile.h"

static inline tile_context *open_ctx_on(const char *device) {
    tile_context_options o = {.device = device, .emu_racecheck = 1};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK, "%s", tile_last_error(NULL));
    return ctx;
}

static inline tile_context *open_ctx(void) {
    return open_ctx_on(getenv("TILE_TEST_DEVICE") ? getenv("TILE_TEST_DEVICE") : "emu");
}

static inline tile_devptr upload(tile_context *ctx, const void *h, size_t bytes) {
    tile_devptr d;
    cr_assert_eq(tile_malloc(ctx, bytes ? bytes : 16, &d), TILE_OK, "%s", tile_last_error(ctx));
    if (bytes) cr_assert_eq(tile_memcpy_htod(ctx, d, h, bytes), TILE_OK, "%s", tile_last_error(ctx));
    return d;
}

static inline void download(tile_context *ctx, void *h, tile_devptr d, size_t bytes) {
    cr_assert_eq(tile_memcpy_dtoh(ctx, h, d, bytes), TILE_OK, "%s", tile_last_error(ctx));
}
#endif
