/* fuzz_ptx.c - libFuzzer target for the emulator's PTX parser, through the public API.
 *
 * One emulator context is made in LLVMFuzzerInitialize; each input is PTX
 * text, loaded with tile_module_load_ptx and unloaded at once.  Unless the first
 * byte asks for launches (below), nothing runs: this exercises the lexer,
 * the decoder, module finalization (globals allocated in device memory and
 * initialised), the launcher's reading of each entry's parameters and block
 * (tile_module_get_kernel, for the entries the text names) and unloading, so memory errors, leaks and unbounded
 * allocations surface.  A rejected input must come back as a status with a
 * message, never as an internal error; a breach aborts so libFuzzer keeps it.
 *
 * A first byte 0x01 is dropped and also launches what loaded: each entry the
 * text names (the first 4), one block of its .reqntid/.maxntid or 32 threads,
 * pointer-sized parameters a zeroed 64 KiB buffer, others 37, under a 50 ms
 * time budget (an endless loop ends there), so the interpreter, memcheck and
 * the fault reports are fuzzed too.  A failed launch must have a message and
 * no internal error, and the context must run the next launch. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/tile/tile.h"

static tile_context *fuzz_ctx;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    tile_context_options co = {.size = sizeof co, .device = "emu", .no_disk_cache = 1, .emu_host_threads = 1,
                               .emu_timeout_seconds = 0.05};
    if (tile_context_create_ex(&co, &fuzz_ctx) != TILE_OK) {
        fprintf(stderr, "fuzz_ptx: cannot create the emulator context\n");
        abort();
    }
    return 0;
}

static void breach(const char *what, const char *name) {
    fprintf(stderr, "fuzz_ptx: %s of '%s': %s\n", what, name, tile_last_error(fuzz_ctx));
    abort();
}

/* One launch of k: arguments from its raw-PTX signature ("ptr, u32, f32, b8[24]"). */
static void launch_one(tile_kernel *k, const tile_kernel_attributes *at, const char *name) {
    enum { MAXP = 64, BUF = 1 << 16 };
    if (at->num_params > MAXP) return;
    unsigned char store[MAXP][64];
    void *args[MAXP];
    tile_devptr bufs[MAXP];
    int nbufs = 0;
    const char *s = at->signature ? at->signature : "";
    memset(store, 0, sizeof store);
    for (int i = 0; i < at->num_params; i++) {
        while (*s == ' ' || *s == ',') s++;
        args[i] = store[i];
        if (!strncmp(s, "ptr", 3) || !strncmp(s, "u64", 3) || !strncmp(s, "b64", 3) || !strncmp(s, "s64", 3)) {
            tile_devptr p = 0;
            if (tile_malloc(fuzz_ctx, BUF, &p) == TILE_OK) {
                tile_memset(fuzz_ctx, p, 0, BUF);
                bufs[nbufs++] = p;
            }
            memcpy(store[i], &p, 8);
        } else if (strncmp(s, "b8[", 3)) {
            store[i][0] = 37;
        }
        while (*s && *s != ',') s++;
    }
    tile_launch_options lo = {.size = sizeof lo}; /* block zero: the kernel's .reqntid/.maxntid */
    if (!at->block_threads) lo.block = (tile_dim3){32, 1, 1};
    tile_status st = tile_launch_ex(k, (tile_dim3){1, 1, 1}, at->num_params ? args : NULL, NULL, &lo);
    if (st == TILE_ERROR_INTERNAL || (st != TILE_OK && !*tile_last_error(fuzz_ctx))) breach("launch", name);
    if (st != TILE_OK && (strstr(tile_last_error(fuzz_ctx), "internal error") || strstr(tile_last_error(fuzz_ctx), "unreachable")))
        breach("launch", name);
    for (int i = 0; i < nbufs; i++) tile_free(fuzz_ctx, bufs[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int run = size && data[0] == 1;
    if (run) data++, size--;
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
        for (const char *e = strstr(ptx, ".entry"); e && tries < (run ? 4 : 8); e = strstr(e + 6, ".entry")) {
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
            if (run && tile_module_get_kernel(m, name, &k) == TILE_OK && tile_kernel_get_attributes(k, &at) == TILE_OK)
                launch_one(k, &at, name);
        }
        tile_module_unload(m);
    } else if (st == TILE_ERROR_INTERNAL || !*tile_last_error(fuzz_ctx)) {
        fprintf(stderr, "fuzz_ptx: load failed with %s and message '%s'\n", tile_status_string(st), tile_last_error(fuzz_ctx));
        abort();
    }
    free(ptx);
    return 0;
}
