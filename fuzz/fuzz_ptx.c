/* fuzz_ptx.c - libFuzzer target for the emulator's PTX parser, through the public API.
 *
 * One emulator context is made in LLVMFuzzerInitialize; each input is PTX
 * text, loaded with tile_module_load_ptx and unloaded at once.  Nothing is
 * launched (a fuzzed kernel can loop forever): this exercises the lexer,
 * the decoder, module finalization (globals allocated in device memory and
 * initialised), the launcher's reading of each entry's parameters and block
 * (tile_module_get_kernel, for the entries the text names) and unloading, so memory errors, leaks and unbounded
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
    if (st == TILE_OK) {
        /* each entry the text names (the first 8): the launcher reads its parameters and block from the
         * header itself (tile_module_get_kernel), a second reader of the same text */
        int tries = 0;
        for (const char *e = strstr(ptx, ".entry"); e && tries < 8; e = strstr(e + 6, ".entry")) {
            const char *s = e + 6;
            while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
            size_t len = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$%");
            if (!len || len > 255) continue;
            char name[256];
            memcpy(name, s, len);
            name[len] = 0;
            tries++;
            tile_kernel *k;
            tile_kernel_attributes at;
            if (tile_module_get_kernel(m, name, &k) == TILE_OK && tile_kernel_get_attributes(k, &at) == TILE_OK &&
                (at.num_params < 0 || !at.signature)) {
                fprintf(stderr, "fuzz_ptx: kernel '%s': %d parameters, signature %s\n", name, at.num_params, at.signature ? at.signature : "NULL");
                abort();
            }
        }
        tile_module_unload(m);
    } else if (st == TILE_ERROR_INTERNAL || !*tile_last_error(fuzz_ctx)) {
        fprintf(stderr, "fuzz_ptx: load failed with %s and message '%s'\n", tile_status_string(st), tile_last_error(fuzz_ctx));
        abort();
    }
    free(ptx);
    return 0;
}
