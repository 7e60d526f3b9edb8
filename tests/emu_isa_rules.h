/* emu_isa_rules.h - what the tests of the PTX ISA's rules share (test_emu_isa.c, test_emu_isa_vector.c): module
 * headers, an emulator device of a given target string, loading the kernel k, device buffers (poisoned 0xEE
 * when given no data), and loads and launches that must succeed or fail with given text. */
#ifndef TILE_TESTS_EMU_ISA_RULES_H
#define TILE_TESTS_EMU_ISA_RULES_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "runtime/device.h"

#define HEAD80 ".version 8.0\n.target sm_80\n.address_size 64\n"
#define HEAD90 ".version 8.0\n.target sm_90a\n.address_size 64\n"
#define HEAD83 ".version 8.3\n.target sm_90a\n.address_size 64\n" /* vector atomics, %aggr_smem_size (8.1), .b128 (8.3) */

static inline TileDevice *open_dev(const char *spec) {
    TileDevice *d = NULL;
    char *err = NULL;
    DevOptions o = {.emu_host_threads = 1};
    cr_assert_eq(dev_open(spec, &o, &d, &err), DEV_OK, "dev_open(%s): %s", spec, err ? err : "");
    return d;
}

static inline TileDevFunction *load(TileDevice *d, const char *ptx, TileDevModule **mod) {
    cr_assert_eq(dev_module_load_ptx(d, ptx, mod), DEV_OK, "load: %s\n%s", dev_last_error(d), ptx);
    TileDevFunction *f = NULL;
    cr_assert_eq(dev_module_get_function(*mod, "k", &f), DEV_OK, "get_function: %s", dev_last_error(d));
    return f;
}

static inline uint64_t buffer(TileDevice *d, const void *init, size_t n) {
    uint64_t a;
    cr_assert_eq(dev_malloc(d, n, &a), DEV_OK);
    if (init) cr_assert_eq(dev_memcpy_htod(d, a, init, n), DEV_OK);
    else cr_assert_eq(dev_memset_d8(d, a, 0xEE, n), DEV_OK);
    return a;
}

static inline void launch_ok(TileDevice *d, TileDevFunction *f, unsigned block, void **params) {
    cr_assert_eq(dev_launch(f, 1, 1, 1, block, 1, 1, 0, NULL, params), DEV_OK, "launch: %s", dev_last_error(d));
    cr_assert_eq(dev_synchronize(d), DEV_OK, "%s", dev_last_error(d));
}

static inline void load_fails(const char *spec, const char *ptx, const char *needle) {
    TileDevice *d = open_dev(spec);
    TileDevModule *m = NULL;
    cr_expect_eq(dev_module_load_ptx(d, ptx, &m), DEV_ERR_PTX, "loaded: %s", ptx);
    cr_expect(strstr(dev_last_error(d), needle), "message '%s' lacks '%s'", dev_last_error(d), needle);
    if (m) dev_module_unload(m);
    dev_close(d);
}

static inline void launch_fails(TileDevice *d, TileDevFunction *f, unsigned block, void **params, DevStatus want, const char *needle) {
    DevStatus st = dev_launch(f, 1, 1, 1, block, 1, 1, 0, NULL, params);
    if (st == DEV_OK) st = dev_synchronize(d);
    cr_expect_eq(st, want, "launch: status %d, want %d: %s", st, want, dev_last_error(d));
    cr_expect(strstr(dev_last_error(d), needle), "message '%s' lacks '%s'", dev_last_error(d), needle);
}

#endif
