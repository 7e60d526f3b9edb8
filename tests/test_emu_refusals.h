/* test_emu_refusals.h - the emulator's load against ptxas's, form by form (test_emu_refuse, test_emu_diff):
 * each bad PTX text is refused at load with `want` in the message and refused by ptxas too (when installed);
 * each good one loads and assembles. */
#ifndef TILE_TEST_EMU_REFUSALS_H
#define TILE_TEST_EMU_REFUSALS_H

#include <criterion/criterion.h>
#include <string.h>

#include "test_emu_util.h"
#include "test_ptxas.h"

typedef struct Bad {
    const char *ptx, *want;
} Bad;

static inline void expect_refused(const Bad *bad, size_t nbad, const char *const *good, size_t ngood, const char *arch) {
    TileDevice *d = open_emu(false);
    for (size_t i = 0; i < nbad; i++) {
        TileDevModule *m = NULL;
        cr_expect_eq(dev_module_load_ptx(d, bad[i].ptx, &m), DEV_ERR_PTX, "loaded:\n%s", bad[i].ptx);
        cr_expect(strstr(dev_last_error(d), bad[i].want), "'%s' not in: %s\n%s", bad[i].want, dev_last_error(d), bad[i].ptx);
        cr_expect(ptxas_refuses(bad[i].ptx, arch), "ptxas takes what the emulator refuses:\n%s", bad[i].ptx);
        if (m) dev_module_unload(m);
    }
    for (size_t i = 0; i < ngood; i++) {
        TileDevModule *m = NULL;
        cr_expect_eq(dev_module_load_ptx(d, good[i], &m), DEV_OK, "%s\n%s", dev_last_error(d), good[i]);
        check_ptxas_arch(good[i], arch);
        if (m) dev_module_unload(m);
    }
    dev_close(d);
}

#endif
