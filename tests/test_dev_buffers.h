/* test_dev_buffers.h - device buffers for the emulator tests (test_emu_util.h, test_emu_sm90.h):
 * an upload, a poisoned output (every byte 0xFF: NaN in any float width), a download. */
#ifndef TILE_TEST_DEV_BUFFERS_H
#define TILE_TEST_DEV_BUFFERS_H
#include <criterion/criterion.h>

#include "runtime/device.h"

static inline uint64_t upload(TileDevice *d, const void *p, size_t n) {
    uint64_t a;
    cr_assert_eq(dev_malloc(d, n, &a), DEV_OK);
    cr_assert_eq(dev_memcpy_htod(d, a, p, n), DEV_OK, "%s", dev_last_error(d));
    return a;
}

static inline uint64_t poisoned(TileDevice *d, size_t n) {
    uint64_t a;
    cr_assert_eq(dev_malloc(d, n, &a), DEV_OK);
    cr_assert_eq(dev_memset_d8(d, a, 0xFF, n), DEV_OK);
    return a;
}

static inline void download(TileDevice *d, void *p, uint64_t a, size_t n) {
    cr_assert_eq(dev_memcpy_dtoh(d, p, a, n), DEV_OK, "%s", dev_last_error(d));
}
#endif
