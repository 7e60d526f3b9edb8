/* emu_budget.h - the launch budget of the emulated devices the test helpers open through the device layer
 * (lang_run.h, test_emu_util.h, emu_isa_family.h).
 *
 * The device layer's own default is 600 s, ctest's timeout: a kernel that never ends (a lost barrier, a
 * spin on a flag no one sets) held its program until ctest killed it, with no word of where it was.  These
 * helpers give each launch TILE_EMU_TIMEOUT's seconds when it is set (read by runtime/options.c, as a
 * context reads it: `inf` is no budget), else TEST_EMU_BUDGET_SECONDS, so a hang fails in a minute with the
 * emulator's report of where each thread waits.  The budget is far above any launch of these programs (the
 * longest take a few seconds under the sanitizers on a loaded machine: docs/testing.md). */
#ifndef TILE_TESTS_EMU_BUDGET_H
#define TILE_TESTS_EMU_BUDGET_H

#include <criterion/criterion.h>

#include "runtime/rt.h"

#define TEST_EMU_BUDGET_SECONDS 60

/* The seconds a launch on an emulated device opened by the test helpers may run. */
static inline double test_emu_budget(void) {
    const RtOptions *o = rt_options();
    cr_assert_not(o->emu_timeout_bad, "TILE_EMU_TIMEOUT is set but not a positive number of seconds");
    return o->emu_timeout_seconds > 0 ? o->emu_timeout_seconds : TEST_EMU_BUDGET_SECONDS;
}

#endif
