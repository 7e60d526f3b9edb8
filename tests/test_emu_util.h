/* test_emu_util.h - what test_emu.c, test_emu_limits.c and test_emu_instr.c share: an emulator device, PTX loading
 * (and a kernel that reads at an offset), device buffers (a poisoned one), a xorshift generator and bit casts, and
 * host f16/bf16 rounding. */
#ifndef TILE_TEST_EMU_UTIL_H
#define TILE_TEST_EMU_UTIL_H
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/device.h"
#include "emu_budget.h"
#include "support/support.h"
#include "test_dev_buffers.h"

#ifndef TILE_SOURCE_DIR
#define TILE_SOURCE_DIR "."
#endif

static inline TileDevice *open_emu(bool racecheck) {
    TileDevice *d = NULL;
    char *err = NULL;
    DevOptions o = {.emu_racecheck = racecheck, .emu_host_threads = 2, .emu_timeout_seconds = test_emu_budget()};
    DevStatus st = dev_open("emu", &o, &d, &err);
    cr_assert_eq(st, DEV_OK, "dev_open(emu): %s", err ? err : "");
    cr_assert_str_eq(dev_backend_name(d), "emu");
    return d;
}

static inline char *fixture(const char *name) {
    char path[512];
    snprintf(path, sizeof path, "%s/tests/emu/%s", TILE_SOURCE_DIR, name);
    size_t len;
    char *s = read_file(path, &len);
    cr_assert(s, "cannot read %s", path);
    return s;
}

static inline TileDevFunction *load(TileDevice *d, const char *ptx, const char *name, TileDevModule **mod) {
    DevStatus st = dev_module_load_ptx(d, ptx, mod);
    cr_assert_eq(st, DEV_OK, "load: %s", dev_last_error(d));
    TileDevFunction *f = NULL;
    st = dev_module_get_function(*mod, name, &f);
    cr_assert_eq(st, DEV_OK, "get_function: %s", dev_last_error(d));
    return f;
}

/* rd(p, off): loads the u32 at p + off through a generic address and stores it to p[0] (memcheck's reports). */
static inline const char *mem_read_ptx(void) {
    return ".version 7.8\n.target sm_80\n.address_size 64\n"
           ".visible .entry rd(.param .u64 p, .param .u64 off)\n{\n"
           " .reg .b32 %r<4>;\n .reg .b64 %rd<4>;\n"
           " ld.param.u64 %rd1, [p];\n ld.param.u64 %rd2, [off];\n add.s64 %rd3, %rd1, %rd2;\n"
           " ld.u32 %r1, [%rd3];\n st.global.u32 [%rd1], %r1;\n ret;\n}\n";
}

#include "emu_rng.h"
static inline uint64_t d2u(double f) { uint64_t u; memcpy(&u, &f, 8); return u; }
static inline double u2d(uint64_t u) { double f; memcpy(&f, &u, 8); return f; }

/* host f16/bf16 rounding (to nearest even; NaN to the canonical 0x7FFF) */
static inline uint16_t ref_f16(float f) { _Float16 h = (_Float16)f; uint16_t u; memcpy(&u, &h, 2); return isnan(f) ? 0x7FFF : u; }
static inline float ref_from_f16(uint16_t u) { _Float16 h; memcpy(&h, &u, 2); return (float)h; }
static inline uint16_t ref_bf16(float f) {
    uint32_t u = f2u(f);
    if (isnan(f)) return 0x7FFF;
    return (uint16_t)((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}

#endif
