/* test_emu_sm90.h - what the emulated-Hopper test programs share (test_emu_hopper.c, test_emu_wgmma.c, test_emu_tma.c):
 * an emu:sm_90a device, loading hand-written PTX (checked by ptxas -arch=sm_90a when installed),
 * uploads, poisoned outputs, launches and loads that must fail with given text. */
#ifndef TILE_TEST_EMU_SM90_H
#define TILE_TEST_EMU_SM90_H

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/device.h"
#include "test_dev_buffers.h"
#include "test_ptxas.h"

#define PTX_HEAD ".version 8.4\n.target sm_90a\n.address_size 64\n"

static inline TileDevice *open_emu(bool racecheck) {
    TileDevice *d = NULL;
    char *err = NULL;
    DevOptions o = {.emu_racecheck = racecheck, .emu_host_threads = 2, .emu_timeout_seconds = 60};
    cr_assert_eq(dev_open("emu:sm_90a", &o, &d, &err), DEV_OK, "dev_open(emu:sm_90a): %s", err ? err : "");
    return d;
}

/* ptxas (when installed) must accept every kernel here. */
static inline void check_ptxas(const char *ptx) { check_ptxas_arch(ptx, "sm_90a"); }

static inline TileDevFunction *load(TileDevice *d, const char *ptx, const char *name, TileDevModule **mod) {
    check_ptxas(ptx);
    cr_assert_eq(dev_module_load_ptx(d, ptx, mod), DEV_OK, "load: %s\n%s", dev_last_error(d), ptx);
    TileDevFunction *f = NULL;
    cr_assert_eq(dev_module_get_function(*mod, name, &f), DEV_OK, "get_function: %s", dev_last_error(d));
    return f;
}

/* A launch that must fail: its message must contain every one of the NULL-terminated strings. */
static inline void expect_launch_error(TileDevice *d, TileDevFunction *f, unsigned threads, void **args, ...) {
    DevStatus st = dev_launch(f, 1, 1, 1, threads, 1, 1, 0, NULL, args);
    cr_assert_neq(st, DEV_OK, "the launch succeeded");
    const char *msg = dev_last_error(d);
    if (getenv("HOPPER_TEST_VERBOSE")) fprintf(stderr, "[%s]\n", msg);
    va_list ap;
    va_start(ap, args);
    for (const char *s; (s = va_arg(ap, const char *));) cr_assert(strstr(msg, s), "'%s' not in:\n%s", s, msg);
    va_end(ap);
}

static inline void expect_load_error(TileDevice *d, const char *ptx, const char *what) {
    TileDevModule *m = NULL;
    cr_assert_neq(dev_module_load_ptx(d, ptx, &m), DEV_OK, "loaded:\n%s", ptx);
    cr_assert(strstr(dev_last_error(d), what), "'%s' not in: %s", what, dev_last_error(d));
}

#endif
