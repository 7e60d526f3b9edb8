/* test_emu_mma.h - what the tensor-core tests of the emulator share (test_emu_mma.c, test_emu_mma_fast.c): an sm_80
 * emulator device (or one of a given device string), loading a kernel that ptxas (when installed) must accept for
 * the target it names, a xorshift generator and the f32/f16/bf16 bit casts; buffers from test_dev_buffers.h. */
#ifndef TILE_TEST_EMU_MMA_H
#define TILE_TEST_EMU_MMA_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "runtime/device.h"
#include "test_dev_buffers.h"
#include "test_ptxas.h"

#ifndef TILE_SOURCE_DIR
#define TILE_SOURCE_DIR "."
#endif

#define PTX_HEAD ".version 7.8\n.target sm_80\n.address_size 64\n"

static inline TileDevice *open_emu_as(const char *name, bool racecheck) {
    TileDevice *d = NULL;
    char *err = NULL;
    DevOptions o = {.emu_racecheck = racecheck, .emu_host_threads = 2};
    cr_assert_eq(dev_open(name, &o, &d, &err), DEV_OK, "dev_open(%s): %s", name, err ? err : "");
    return d;
}
static inline TileDevice *open_emu(bool racecheck) { return open_emu_as("emu", racecheck); }

/* ptxas (when installed) must accept every kernel here, so the forms the
 * emulator is tested on are ones the real toolchain takes (for the target the
 * kernel names: the f8 forms are sm_89's). */
static inline void check_ptxas(const char *ptx) {
    check_ptxas_arch(ptx, strstr(ptx, ".target sm_89") ? "sm_89" : strstr(ptx, ".target sm_90") ? "sm_90" : "sm_80");
}

static inline TileDevFunction *load(TileDevice *d, const char *ptx, const char *name, TileDevModule **mod) {
    check_ptxas(ptx);
    cr_assert_eq(dev_module_load_ptx(d, ptx, mod), DEV_OK, "load: %s\n%s", dev_last_error(d), ptx);
    TileDevFunction *f = NULL;
    cr_assert_eq(dev_module_get_function(*mod, name, &f), DEV_OK, "get_function: %s", dev_last_error(d));
    return f;
}

#define TEST_RNG_SEED 0x2545F4914F6CDD1Dull /* these programs' inputs */
#include "emu_rng.h"
static inline uint16_t f16_bits(float f) { _Float16 h = (_Float16)f; uint16_t u; memcpy(&u, &h, 2); return u; }
static inline float f16_val(uint16_t u) { _Float16 h; memcpy(&h, &u, 2); return (float)h; }
static inline float bf16_val(uint16_t u) { return u2f((uint32_t)u << 16); }

#endif
