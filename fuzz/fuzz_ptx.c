/* fuzz_ptx.c - libFuzzer target for the emulator's PTX parser, through the public API.
 *
 * One emulator context is made in LLVMFuzzerInitialize; each input is PTX
 * text, loaded with tile_module_load_ptx and unloaded at once.  Nothing is
 * launched (a fuzzed kernel can loop forever): this exercises the lexer,
 * the decoder, module finalization (globals allocated in device memory and
 * initialised) and unloading, so memory errors, leaks and unbounded
 * allocations surface.  A rejected input must come back as a status with a
 * message, never as an internal error; a breach aborts so libFuzzer keeps it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/tile/tile.h"

static tile_context *fuzz_ctx;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    if (tile_context_create("emu", &fuzz_ctx) != TILE_OK) {
        fprintf(stderr, "fuzz_ptx: cannot create the emulator context\n");
        abort();
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* the API takes a C string: the input up to its first NUL */
    char *ptx = malloc(size + 1);
    if (!ptx) return 0;
    memcpy(ptx, data, size);
    ptx[size] = 0;
    tile_module *m = NULL;
    tile_status st = tile_module_load_ptx(fuzz_ctx, ptx, &m);
    if (st == TILE_OK) tile_module_unload(m);
    else if (st == TILE_ERROR_INTERNAL || !*tile_last_error(fuzz_ctx)) {
        fprintf(stderr, "fuzz_ptx: load failed with %s and message '%s'\n", tile_status_string(st), tile_last_error(fuzz_ctx));
        abort();
    }
    free(ptx);
    return 0;
}
