/* common.c - the parts of the API both libraries carry: status strings,
 * the version, tile_dtype_from_name, freeing a tile_compiled (modules keep compiled metadata). */
#include "include/tile/tile.h"
#include "runtime/rt.h"
#include "support/dtype.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *tile_status_string(tile_status s) {
    switch (s) {
    case TILE_OK: return "ok";
    case TILE_ERROR_INVALID_VALUE: return "invalid value";
    case TILE_ERROR_COMPILE: return "compile error";
    case TILE_ERROR_IO: return "i/o error";
    case TILE_ERROR_PTXAS: return "ptxas error";
    case TILE_ERROR_INTERNAL: return "internal error";
    case TILE_ERROR_NO_DEVICE: return "no such device";
    case TILE_ERROR_DEVICE: return "device error";
    case TILE_ERROR_OUT_OF_MEMORY: return "out of memory";
    case TILE_ERROR_NOT_FOUND: return "not found";
    case TILE_ERROR_LAUNCH: return "launch failed";
    case TILE_ERROR_UNSUPPORTED: return "unsupported";
    }
    return "unknown status";
}

const char *tile_version(void) { return TILE_VERSION_STRING; }

/* Here, not in support/dtype.c with the other tile_dtype_* calls: its failures carry a message
 * (tile_last_error(NULL)), and support/ sits below the runtime that keeps messages. */
tile_status tile_dtype_from_name(const char *name, tile_dtype *out) {
    if (out) *out = TILE_DTYPE_COUNT; /* no type until one is found: a failed call leaves no earlier value */
    if (!name || !out) return rt_fail(NULL, TILE_ERROR_INVALID_VALUE, "tile_dtype_from_name: %s is NULL", !name ? "name" : "out");
    if (dtype_to_public(dtype_from_name(name, strlen(name)), out)) return TILE_OK;
    char names[256] = "";
    for (int t = 0; t < TILE_DTYPE_COUNT; t++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", t ? ", " : "", tile_dtype_name((tile_dtype)t));
    return rt_fail(NULL, TILE_ERROR_NOT_FOUND, "tile_dtype_from_name: \"%.64s\" is no type (%s)", name, names);
}

void tile_compiled_free(tile_compiled *c) {
    if (!c) return;
    free(c->tir);
    free(c->llvm_ir);
    free(c->ptx);
    free(c->cubin);
    free(c->diagnostics);
    free(c->dump);
    free(c->timing);
    free(c->ptxas_log);
    for (int k = 0; k < c->nkernels; k++) {
        free(c->kernels[k].name);
        free(c->kernels[k].signature);
        free(c->kernels[k].tensor_maps);
    }
    free(c->kernels);
    memset(c, 0, sizeof *c);
}
