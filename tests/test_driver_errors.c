/* test_driver_errors.c - the statuses the runtime gives for a CUDA driver's refusals of PTX, against a stand-in driver
 * (tests/fake_libcuda.c, linked into this program as libcuda.so.1, so that runtime/device_cuda.c's dlopen finds it on
 * any machine, with a GPU or without):
 *   - tile_module_load_ptx, the caller's PTX: the driver's JIT refusing it (CUDA_ERROR_INVALID_PTX) or its .version
 *     (CUDA_ERROR_UNSUPPORTED_PTX_VERSION) is TILE_ERROR_COMPILE with the driver's JIT log in the message; other
 *     driver errors keep their own status (out of memory; anything else TILE_ERROR_DEVICE);
 *   - a module tile compiled itself (tile_module_load_source): the driver refusing that PTX is tile's bug,
 *     TILE_ERROR_INTERNAL with the log, unless it holds the source's inline_asm_elementwise text (then the source's
 *     error, TILE_ERROR_COMPILE, on the emulator too); a driver older than the PTX ISA tile writes is TILE_ERROR_UNSUPPORTED (update
 *     the driver); anything else TILE_ERROR_DEVICE.
 * The emulator's side of tile_module_load_ptx is test_runtime's load_ptx_errors. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "include/tile/tile.h"

void fake_cuda_set_module_load(int result, const char *log);
int fake_cuda_module_load_calls(void);

static const char *const jit_log = "ptxas application ptx input, line 7; error   : Unknown symbol 'frobnicate'";

static tile_context *open_fake(void) {
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    cr_assert(h && dlsym(h, "fake_cuda_set_module_load"), "libcuda.so.1 in this process is not tests/fake_libcuda.c");
    tile_context *ctx;
    cr_assert_eq(tile_context_create("cuda", &ctx), TILE_OK, "%s", tile_last_error(NULL));
    return ctx;
}

typedef struct Refusal {
    int result;          /* the CUresult cuModuleLoadDataEx returns */
    tile_status want;    /* the status the runtime gives */
    const char *say[2];  /* in the message (NULL: nothing more) */
} Refusal;

static const char plain_src[] = "kernel k(x: *f32) { store(x + arange(0, 32), 1.0); }\n";
/* the source's own PTX in the module: what the device refuses may be that */
static const char asm_src[] =
    "kernel k(o: *i32) {\n    let c = arange(0, 32);\n    store(o + c, inline_asm_elementwise(\"mov.b32 $0, $1;\", \"=r,r\", [c], i32));\n}\n";

/* Each refusal of r in turn for the caller's PTX (src NULL) or for src compiled, then a load that succeeds. */
static void expect_refusals(tile_context *ctx, const Refusal *r, int n, const char *src) {
    static const char ptx[] = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n  ret;\n}\n";
    bool compiled = src != NULL;
    for (int i = 0; i < n; i++) {
        fake_cuda_set_module_load(r[i].result, jit_log);
        int calls = fake_cuda_module_load_calls();
        tile_module *m = (tile_module *)1;
        tile_status st = compiled ? tile_module_load_source(ctx, src, NULL, &m) : tile_module_load_ptx(ctx, ptx, &m);
        const char *msg = tile_last_error(ctx);
        cr_expect_eq(fake_cuda_module_load_calls(), calls + 1, "CUresult %d: the driver was not asked", r[i].result);
        cr_expect_eq(st, r[i].want, "CUresult %d: %s (want %s): %s", r[i].result, tile_status_string(st),
                     tile_status_string(r[i].want), msg);
        cr_expect_null(m, "CUresult %d: a module came back", r[i].result);
        for (int j = 0; j < 2 && r[i].say[j]; j++)
            cr_expect(strstr(msg, r[i].say[j]), "CUresult %d: '%s' is not in: %s", r[i].result, r[i].say[j], msg);
    }
    fake_cuda_set_module_load(0, NULL); /* and a driver that takes it loads it */
    tile_module *m = NULL;
    tile_status st = compiled ? tile_module_load_source(ctx, src, NULL, &m) : tile_module_load_ptx(ctx, ptx, &m);
    cr_expect_eq(st, TILE_OK, "%s", tile_last_error(ctx));
    cr_expect_not_null(m);
    tile_module_unload(m);
}

Test(driver_errors, caller_ptx_refused) {
    tile_context *ctx = open_fake();
    const Refusal r[] = {
        {218, TILE_ERROR_COMPILE, {"tile_module_load_ptx: cuda: cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (218)", jit_log}},
        {222, TILE_ERROR_COMPILE, {"CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222)", jit_log}},
        {2, TILE_ERROR_OUT_OF_MEMORY, {"CUDA_ERROR_OUT_OF_MEMORY", NULL}},
        {999, TILE_ERROR_DEVICE, {"CUDA_ERROR_UNKNOWN (999)", NULL}},
    };
    expect_refusals(ctx, r, (int)(sizeof r / sizeof *r), NULL);
    tile_context_destroy(ctx);
}

Test(driver_errors, compiled_ptx_refused) {
    tile_context *ctx = open_fake();
    const Refusal r[] = {
        {218, TILE_ERROR_INTERNAL, {"loading the compiled PTX: the device refused the PTX tile made for it (a bug in tile", jit_log}},
        {222, TILE_ERROR_UNSUPPORTED, {"the driver is older than the PTX ISA version tile writes (update the driver)",
                                        "CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222)"}},
        {2, TILE_ERROR_OUT_OF_MEMORY, {"CUDA_ERROR_OUT_OF_MEMORY", NULL}},
        {999, TILE_ERROR_DEVICE, {"loading the compiled PTX", "CUDA_ERROR_UNKNOWN (999)"}},
    };
    expect_refusals(ctx, r, (int)(sizeof r / sizeof *r), plain_src);
    tile_context_destroy(ctx);
}

/* A compiled module holding the source's inline_asm_elementwise text: the device refusing it as PTX may be refusing
 * the source's PTX, so it is the source's error (TILE_ERROR_COMPILE), as tile_module_load_ptx's is, on the driver and
 * on the emulator (whose message names the PTX line) */
Test(driver_errors, compiled_ptx_with_the_sources_asm_refused) {
    tile_context *ctx = open_fake();
    const Refusal r[] = {
        {218, TILE_ERROR_COMPILE, {"loading the compiled PTX: the device refused it, and it holds the source's inline_asm_elementwise PTX",
                                   jit_log}},
        {222, TILE_ERROR_UNSUPPORTED, {"update the driver", NULL}},
    };
    expect_refusals(ctx, r, (int)(sizeof r / sizeof *r), asm_src);
    tile_context_destroy(ctx);
    cr_assert_eq(tile_context_create("emu:sm_80", &ctx), TILE_OK, "%s", tile_last_error(NULL));
    static const char bad_asm[] =
        "kernel k(o: *i32) {\n    let c = arange(0, 32);\n    store(o + c, inline_asm_elementwise(\"f32\", \"=r,r\", [c], i32));\n}\n";
    tile_module *m = (tile_module *)1;
    cr_expect_eq(tile_module_load_source(ctx, bad_asm, NULL, &m), TILE_ERROR_COMPILE, "%s", tile_last_error(ctx));
    cr_expect(strstr(tile_last_error(ctx), "inline_asm_elementwise PTX: ptx:"), "%s", tile_last_error(ctx));
    cr_expect(strstr(tile_last_error(ctx), "unsupported instruction 'f32'"), "%s", tile_last_error(ctx));
    cr_expect_null(m);
    tile_context_destroy(ctx);
}
