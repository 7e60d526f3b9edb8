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
 * The emulator's side of tile_module_load_ptx is test_runtime's load_ptx_errors.
 * And a kernel's fault, which a GPU reports only at a later call (the sticky error, naming no kernel): the message
 * names the launches since the last synchronization that could have made it (runtime/launch_log.c); the driver's
 * refusal of a launch says what it was asked, and a raw PTX module asked for a kernel it lacks says what it has. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "include/tile/tile.h"

void fake_cuda_set_module_load(int result, const char *log);
int fake_cuda_module_load_calls(void);
void fake_cuda_set_fault(int result);
void fake_cuda_set_launch_result(int result);

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

/* ======================= a kernel's fault, reported later ======================= */

#define LONG_NAME "a_kernel_whose_name_runs_past_what_the_launch_log_keeps_of_it_by_some_way"
static const char fault_src[] = "kernel first(x: *f32) { store(x + arange(0, 32), 1.0); }\n"
                                "kernel second(x: *f32, n: i32) { store(x + arange(0, 32), 2.0); }\n"
                                "kernel " LONG_NAME "(x: *f32) { store(x + arange(0, 32), 3.0); }\n";

/* The call st fails with TILE_ERROR_DEVICE, the driver's words, then exactly `tail`. */
static void expect_fault(tile_context *ctx, tile_status st, const char *head, const char *tail) {
    const char *msg = tile_last_error(ctx);
    cr_expect_eq(st, TILE_ERROR_DEVICE, "%s: %s", tile_status_string(st), msg);
    char want[1024];
    snprintf(want, sizeof want, "%s failed: CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal memory access was encountered%s", head, tail);
    cr_expect(strstr(msg, want) && !strcmp(strstr(msg, want), want), "got:  %s\nwant: ...%s", msg, want);
}

/* A clean context again: the fault ends (a real driver's never does: the test goes on) and a synchronization succeeds. */
static void recover(tile_context *ctx) {
    fake_cuda_set_fault(0);
    cr_assert_eq(tile_synchronize(ctx), TILE_OK, "%s", tile_last_error(ctx));
}

Test(driver_errors, fault_names_the_launches_since_the_last_synchronization) {
    tile_context *ctx = open_fake();
    tile_module *m;
    cr_assert_eq(tile_module_load_source(ctx, fault_src, NULL, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k1, *k2, *kl;
    cr_assert_eq(tile_module_get_kernel(m, "first", &k1), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_module_get_kernel(m, "second", &k2), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_module_get_kernel(m, LONG_NAME, &kl), TILE_OK, "%s", tile_last_error(ctx));
    tile_devptr x;
    cr_assert_eq(tile_malloc(ctx, 256, &x), TILE_OK);
    int32_t n = 7;
    void *a1[] = {&x}, *a2[] = {&x, &n};
    tile_stream s;
    cr_assert_eq(tile_stream_create(ctx, &s), TILE_OK);
    char sp[64];
    snprintf(sp, sizeof sp, "%p", (void *)s);

    /* a launch synchronized without a fault is no candidate: the one after it is named, at the stream's synchronization
     * and at the next launch, which the sticky error fails too */
    cr_assert_eq(tile_launch(k1, (tile_dim3){3, 1, 1}, a1, NULL), TILE_OK);
    cr_assert_eq(tile_synchronize(ctx), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_launch(k2, (tile_dim3){2, 5, 1}, a2, s), TILE_OK);
    fake_cuda_set_fault(700);
    expect_fault(ctx, tile_stream_synchronize(ctx, s), "tile_stream_synchronize: cuda: cuStreamSynchronize",
                 "; after launch of 'second' (grid 2,5,1)");
    expect_fault(ctx, tile_launch(k1, (tile_dim3){1, 1, 1}, a1, NULL), "launch of 'first': cuda: cuLaunchKernel",
                 "; after launch of 'second' (grid 2,5,1)");
    recover(ctx);

    /* two candidates on two streams, oldest first, each stream named; a long name cut */
    cr_assert_eq(tile_launch(k1, (tile_dim3){1, 1, 1}, a1, NULL), TILE_OK);
    cr_assert_eq(tile_launch(kl, (tile_dim3){4, 1, 1}, a1, s), TILE_OK);
    fake_cuda_set_fault(700);
    char tail[512];
    snprintf(tail, sizeof tail, "; after one of the last 2 launches: 'first' (grid 1,1,1, default stream), '%.60s...' (grid 4,1,1, stream %s)",
             LONG_NAME, sp);
    expect_fault(ctx, tile_synchronize(ctx), "tile_synchronize: cuda: cuCtxSynchronize", tail);
    recover(ctx);

    /* a stream's synchronization clears its launches only; a tile_memcpy_dtoh the default stream's */
    cr_assert_eq(tile_launch(k1, (tile_dim3){1, 1, 1}, a1, s), TILE_OK);
    cr_assert_eq(tile_launch(k2, (tile_dim3){6, 1, 1}, a2, NULL), TILE_OK);
    cr_assert_eq(tile_stream_synchronize(ctx, s), TILE_OK, "%s", tile_last_error(ctx));
    fake_cuda_set_fault(700);
    expect_fault(ctx, tile_synchronize(ctx), "tile_synchronize: cuda: cuCtxSynchronize",
                 "; after launch of 'second' (grid 6,1,1)");
    recover(ctx);
    float host[4];
    cr_assert_eq(tile_launch(k2, (tile_dim3){1, 2, 1}, a2, NULL), TILE_OK);
    cr_assert_eq(tile_launch(k1, (tile_dim3){1, 1, 3}, a1, s), TILE_OK);
    cr_assert_eq(tile_memcpy_dtoh(ctx, host, x, sizeof host), TILE_OK, "%s", tile_last_error(ctx));
    fake_cuda_set_fault(700);
    expect_fault(ctx, tile_synchronize(ctx), "tile_synchronize: cuda: cuCtxSynchronize", "; after launch of 'first' (grid 1,1,3)");
    recover(ctx);

    /* more launches than the log holds: the last 8, saying there were more */
    for (unsigned i = 1; i <= 11; i++) cr_assert_eq(tile_launch(k1, (tile_dim3){i, 1, 1}, a1, NULL), TILE_OK);
    fake_cuda_set_fault(700);
    int at = snprintf(tail, sizeof tail, "; after one of the launches since the last synchronization, the last 8 recorded: ");
    for (unsigned i = 4; i <= 11; i++) at += snprintf(tail + at, sizeof tail - (size_t)at, "%s'first' (grid %u,1,1)", i > 4 ? ", " : "", i);
    expect_fault(ctx, tile_memcpy_dtoh(ctx, host, x, sizeof host), "tile_memcpy_dtoh: cuda: cuMemcpyDtoH_v2", tail);
    recover(ctx);

    /* none since: the fault is not this context's launches' */
    fake_cuda_set_fault(700);
    expect_fault(ctx, tile_synchronize(ctx), "tile_synchronize: cuda: cuCtxSynchronize",
                 "; no launch of this context since its last synchronization (another library's kernel on the same CUDA context?)");
    recover(ctx);
    tile_module_unload(m);
    tile_context_destroy(ctx);
}

/* A shipped call's launch: the fault names its kernel and the call */
Test(driver_errors, fault_names_the_shipped_call) {
    tile_context *ctx = open_fake();
    enum { H = 40 };
    tile_devptr x, w, out;
    cr_assert_eq(tile_malloc(ctx, 2 * H * 2, &x), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, H * 2, &w), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 2 * H * 2, &out), TILE_OK);
    tile_norm_args a = {.size = sizeof a, .dtype = TILE_F16, .tokens = 2, .hidden = H, .x = x, .weight = w, .eps = 1e-6f, .out = out};
    cr_assert_eq(tile_fused_add_rmsnorm(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    fake_cuda_set_fault(700);
    cr_expect_eq(tile_synchronize(ctx), TILE_ERROR_DEVICE);
    const char *msg = tile_last_error(ctx), *at = strstr(msg, "; after launch of 'norm_f16");
    cr_expect(at && strstr(at, "' (tile_fused_add_rmsnorm, grid 2,1,1)"), "%s", msg);
    recover(ctx);
    tile_context_destroy(ctx);
}

/* The driver refusing a launch (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: too many registers for the block) names no kernel and
 * no configuration: the message says both, and the refused launch is no candidate for a later fault */
Test(driver_errors, launch_refusal_says_what_was_asked) {
    tile_context *ctx = open_fake();
    tile_module *m;
    cr_assert_eq(tile_module_load_source(ctx, fault_src, NULL, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k2, *k1;
    cr_assert_eq(tile_module_get_kernel(m, "second", &k2), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_module_get_kernel(m, "first", &k1), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel_attributes at;
    cr_assert_eq(tile_kernel_get_attributes(k2, &at), TILE_OK);
    tile_devptr x;
    cr_assert_eq(tile_malloc(ctx, 256, &x), TILE_OK);
    int32_t n = 7;
    void *a2[] = {&x, &n};
    fake_cuda_set_launch_result(701);
    cr_expect_eq(tile_launch(k2, (tile_dim3){3, 2, 1}, a2, NULL), TILE_ERROR_DEVICE);
    char want[256];
    snprintf(want, sizeof want, "launch of 'second' (grid 3,2,1, block %u,1,1, 0 bytes of dynamic shared memory): cuda: cuLaunchKernel "
             "failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (701): too many resources requested for launch", at.block_threads);
    cr_expect_str_eq(tile_last_error(ctx), want);
    fake_cuda_set_launch_result(0);
    fake_cuda_set_fault(700);
    expect_fault(ctx, tile_synchronize(ctx), "tile_synchronize: cuda: cuCtxSynchronize",
                 "; no launch of this context since its last synchronization (another library's kernel on the same CUDA context?)");
    recover(ctx);
    tile_module_unload(m);
    tile_context_destroy(ctx);
}

/* A kernel a raw PTX module lacks: its PTX's entries in the message, as a compiled module's names its kernels, on the
 * driver and on the emulator */
Test(driver_errors, raw_ptx_module_without_the_kernel_says_what_it_has) {
    static const char ptx[] = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry alpha()\n{\n  ret;\n}\n"
                              ".visible .entry beta(.param .u64 p)\n{\n  ret;\n}\n";
    for (int emu = 0; emu < 2; emu++) {
        tile_context *ctx;
        if (emu) cr_assert_eq(tile_context_create("emu:sm_80", &ctx), TILE_OK, "%s", tile_last_error(NULL));
        else ctx = open_fake();
        tile_module *m;
        cr_assert_eq(tile_module_load_ptx(ctx, ptx, &m), TILE_OK, "%s", tile_last_error(ctx));
        tile_kernel *k;
        cr_expect_eq(tile_module_get_kernel(m, "gamma", &k), TILE_ERROR_NOT_FOUND);
        const char *msg = tile_last_error(ctx), *tail = "; the kernels of its PTX: alpha, beta";
        cr_expect(!strncmp(msg, "tile_module_get_kernel: ", 24) && strstr(msg, "'gamma'"), "%s", msg);
        cr_expect(strlen(msg) > strlen(tail) && !strcmp(msg + strlen(msg) - strlen(tail), tail), "%s", msg);
        cr_expect_eq(tile_module_get_kernel(m, "beta", &k), TILE_OK, "%s", tile_last_error(ctx));
        tile_module_unload(m);
        tile_context_destroy(ctx);
    }
}
