/* emu_dev.h - what the tests of hand-written PTX on the emulator's device layer share
 * (test_emu_forms.c, test_emu_calls.c): HEAD, a device with a time budget, loading a kernel or
 * checking that PTX does not load, buffers, and launches that must succeed or fail with a report. */
#ifndef TILE_TESTS_EMU_DEV_H
#define TILE_TESTS_EMU_DEV_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "runtime/device.h"

#define HEAD ".version 8.0\n.target sm_80\n.address_size 64\n"

static inline TileDevice *open_dev(double timeout) {
    TileDevice *d = NULL;
    char *err = NULL;
    DevOptions o = {.emu_host_threads = 2, .emu_timeout_seconds = timeout};
    cr_assert_eq(dev_open("emu", &o, &d, &err), DEV_OK, "dev_open(emu): %s", err ? err : "");
    return d;
}

static inline TileDevFunction *load(TileDevice *d, const char *ptx, const char *name, TileDevModule **mod) {
    cr_assert_eq(dev_module_load_ptx(d, ptx, mod), DEV_OK, "load: %s\n%s", dev_last_error(d), ptx);
    TileDevFunction *f = NULL;
    cr_assert_eq(dev_module_get_function(*mod, name, &f), DEV_OK, "get_function: %s", dev_last_error(d));
    return f;
}

/* The PTX does not load, and the message has `needle`. */
static inline void load_fails(TileDevice *d, const char *ptx, const char *needle) {
    TileDevModule *m = NULL;
    cr_assert_eq(dev_module_load_ptx(d, ptx, &m), DEV_ERR_PTX, "loaded: %s", ptx);
    cr_assert(strstr(dev_last_error(d), needle), "message '%s' lacks '%s'", dev_last_error(d), needle);
}

static inline uint64_t buffer(TileDevice *d, const void *init, size_t n) {
    uint64_t a;
    cr_assert_eq(dev_malloc(d, n, &a), DEV_OK);
    if (init) cr_assert_eq(dev_memcpy_htod(d, a, init, n), DEV_OK);
    else cr_assert_eq(dev_memset_d8(d, a, 0xEE, n), DEV_OK);
    return a;
}

static inline void launch_ok(TileDevice *d, TileDevFunction *f, unsigned grid, unsigned block, void **params) {
    cr_assert_eq(dev_launch(f, grid, 1, 1, block, 1, 1, 0, NULL, params), DEV_OK, "launch: %s", dev_last_error(d));
}

/* The launch fails with `st`, and the report has every needle (NULL-terminated). */
static inline void launch_fails(TileDevice *d, TileDevFunction *f, const unsigned grid[3], const unsigned block[3], unsigned smem,
                         void **params, DevStatus st, const char *const *needles) {
    DevStatus got = dev_launch(f, grid[0], grid[1], grid[2], block[0], block[1], block[2], smem, NULL, params);
    cr_assert_eq(got, st, "launch gave %s, not %s: %s", dev_status_string(got), dev_status_string(st), dev_last_error(d));
    for (const char *const *n = needles; *n; n++)
        cr_assert(strstr(dev_last_error(d), *n), "report lacks '%s':\n%s", *n, dev_last_error(d));
}

#endif
