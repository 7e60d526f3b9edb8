/* test_runtime.c - the launcher API on the emulator: misuse errors with
 * messages, modules and launches, tile_gemm against a float64 reference
 * (every type pair, transposes, odd shapes, epilogue), the tuning database
 * read by tile_gemm.  Each test uses its own temporary cache folder. */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/hostfloat.h"
#include "include/tile/tile.h"

static char cache_dir[64];

static tile_context *open_emu_as(const char *device) {
    snprintf(cache_dir, sizeof cache_dir, "/tmp/tile-test-rt-XXXXXX"); /* (mkdtemp's template) */
    cr_assert(mkdtemp(cache_dir));
    tile_context_options o = {.device = device, .cache_dir = cache_dir, .emu_host_threads = 2};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK);
    return ctx;
}

static tile_context *open_emu(void) { return open_emu_as("emu"); }

static void close_emu(tile_context *ctx) {
    tile_context_destroy(ctx);
    tile_cache_clear(cache_dir, 1);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", cache_dir);
    cr_assert_eq(system(cmd), 0);
}

#define ASSERT_ERR(call, status, needle)                                                                     \
    do {                                                                                                     \
        tile_status st_ = (call);                                                                            \
        cr_assert_eq(st_, status, "%s: got %s (%s)", #call, tile_status_string(st_), tile_last_error(ctx));  \
        cr_assert(strstr(tile_last_error(ctx), needle), "%s: message '%s' lacks '%s'", #call, tile_last_error(ctx), needle); \
    } while (0)

/* tile.h's TILE_VERSION_* agree with CMake's project(VERSION) and with tile_version() */
Test(runtime, version_macros) {
    char want[64];
    snprintf(want, sizeof want, "%d.%d.%d", TILE_VERSION_MAJOR, TILE_VERSION_MINOR, TILE_VERSION_PATCH);
    cr_expect_str_eq(want, TILE_PROJECT_VERSION, "tile.h says %s, CMakeLists.txt project(VERSION) %s", want, TILE_PROJECT_VERSION);
    cr_expect_str_eq(tile_version(), want);
}

Test(runtime, misuse_errors) {
    tile_context *ctx = open_emu();
    tile_context *bad = NULL;
    cr_assert_eq(tile_context_create("gpu7", &bad), TILE_ERROR_INVALID_VALUE);
    cr_assert_null(bad);
    cr_assert_eq(tile_context_create("emu", NULL), TILE_ERROR_INVALID_VALUE);
    cr_assert_eq(tile_malloc(NULL, 16, NULL), TILE_ERROR_INVALID_VALUE);
    tile_devptr p, q;
    ASSERT_ERR(tile_malloc(ctx, 0, &p), TILE_ERROR_INVALID_VALUE, "size is 0");
    cr_assert_eq(tile_malloc(ctx, 256, &p), TILE_OK);
    char buf[512] = {0};
    ASSERT_ERR(tile_memcpy_htod(ctx, p, buf, 512), TILE_ERROR_INVALID_VALUE, "run past the end");
    ASSERT_ERR(tile_memcpy_htod(ctx, p + 4096 * 1024, buf, 4), TILE_ERROR_INVALID_VALUE, "not allocated with tile_malloc");
    ASSERT_ERR(tile_memcpy_dtoh(ctx, NULL, p, 4), TILE_ERROR_INVALID_VALUE, "dst is NULL");
    ASSERT_ERR(tile_free(ctx, p + 8), TILE_ERROR_INVALID_VALUE, "not the start");
    cr_assert_eq(tile_memcpy_htod(ctx, p + 16, buf, 240), TILE_OK);

    /* a pointer of another context */
    tile_context *other;
    cr_assert_eq(tile_context_create("emu", &other), TILE_OK);
    cr_assert_eq(tile_malloc(other, 1 << 20, &q), TILE_OK);
    tile_gemm_args g = {.m = 4, .n = 4, .k = 4, .a = q, .lda = 4, .b = p, .ldb = 4, .c = p, .ldc = 4, .in_dtype = TILE_F16,
                        .out_dtype = TILE_F32, .alpha = 1};
    /* each emulated device has its own address range, so another context's pointer is never one of ours */
    ASSERT_ERR(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE, "A (");
    ASSERT_ERR(tile_memcpy_htod(ctx, q, buf, 16), TILE_ERROR_INVALID_VALUE, "not allocated with tile_malloc");
    ASSERT_ERR(tile_free(ctx, q), TILE_ERROR_INVALID_VALUE, "is not the start of an allocation of this context");
    cr_assert_eq(tile_memcpy_htod(other, q, buf, 16), TILE_OK, "%s", tile_last_error(other));
    tile_context_destroy(other);

    /* gemm argument checks never reach the device */
    g.a = p;
    g.m = -1;
    ASSERT_ERR(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE, "negative size");
    g.m = (int64_t)1 << 40;
    ASSERT_ERR(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE, "fit in 32 bits");
    g.m = 4, g.lda = 3;
    ASSERT_ERR(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE, "ldA = 3 is less than the 4 columns");
    int64_t k_was = g.k;
    g.k = 0, g.lda = 0;
    ASSERT_ERR(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE, "ldA = 0: a leading dimension is at least 1");
    g.k = k_was;
    g.lda = 4, g.c = 0;
    ASSERT_ERR(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE, "C is a null device pointer");
    g.c = p, g.m = 64;
    ASSERT_ERR(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE, "run past the end");
    g.m = 4, g.trans_a = 7;
    ASSERT_ERR(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE, "trans_a = 7, trans_b = 0: each is 0 or 1");
    g.trans_a = 0, g.a = p + 1; /* f16 elements on an odd address */
    ASSERT_ERR(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE, "A (0x");
    ASSERT_ERR(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE, "is not aligned to its 2-byte elements");
    g.a = p, g.c = p + 2; /* f32 output on a 2-byte boundary */
    ASSERT_ERR(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE, "C (0x");
    g.c = p, g.bias = p + 1;
    ASSERT_ERR(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE, "bias (0x");
    g.bias = 0;
    g.m = 4, g.in_dtype = TILE_I8, g.out_dtype = TILE_F16;
    ASSERT_ERR(tile_gemm(ctx, &g), TILE_ERROR_UNSUPPORTED, "no kernel for i8 inputs with f16 output");
    {
        tile_gemm_args bad = g;
        bad.in_dtype = (tile_dtype)99; /* no type at all: a bad argument, not an unsupported pair */
        ASSERT_ERR(tile_gemm(ctx, &bad), TILE_ERROR_INVALID_VALUE, "in_dtype = 99, out_dtype = ");
    }
    g.in_dtype = TILE_F16, g.out_dtype = TILE_F32, g.bias = p + 250;
    ASSERT_ERR(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE, "bias");
    g.bias = 0, g.activation = (tile_activation)9;
    ASSERT_ERR(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE, "unknown activation");
    cr_assert_eq(tile_gemm(NULL, &g), TILE_ERROR_INVALID_VALUE);
    ASSERT_ERR(tile_gemm(ctx, NULL), TILE_ERROR_INVALID_VALUE, "args is NULL");

    /* modules and kernels */
    tile_module *m;
    ASSERT_ERR(tile_module_load_source(ctx, "kernel k(x: *f32) { store(x, 1.0 +); }", NULL, &m), TILE_ERROR_COMPILE, "error");
    ASSERT_ERR(tile_module_load_file(ctx, "/nonexistent.tile", NULL, &m), TILE_ERROR_IO, "cannot read");
    ASSERT_ERR(tile_module_load_ptx(ctx, "this is not ptx", &m), TILE_ERROR_COMPILE, "tile_module_load_ptx: ptx:1: ");
    cr_assert_eq(tile_module_load_source(ctx, "kernel k(x: *f32, n: i32) { store(x + program_id(0), 1.0, n > 0); }", NULL, &m), TILE_OK,
                 "%s", tile_last_error(ctx));
    tile_kernel *k;
    ASSERT_ERR(tile_module_get_kernel(m, "nope", &k), TILE_ERROR_NOT_FOUND, "has no kernel 'nope' (it has: k)");
    cr_assert_eq(tile_module_get_kernel(m, "k", &k), TILE_OK);
    tile_kernel_attributes at;
    cr_assert_eq(tile_kernel_get_attributes(k, &at), TILE_OK);
    cr_assert_eq(at.num_params, 2);
    cr_assert_eq(at.block_threads, 128);
    int n = 1;
    void *args[] = {&p, &n};
    ASSERT_ERR(tile_launch(k, (tile_dim3){0, 1, 1}, args, NULL), TILE_ERROR_INVALID_VALUE, "must be non-zero");
    ASSERT_ERR(tile_launch(k, (tile_dim3){1, 70000, 1}, args, NULL), TILE_ERROR_INVALID_VALUE, "exceeds");
    ASSERT_ERR(tile_launch(k, (tile_dim3){1, 1, 1}, NULL, NULL), TILE_ERROR_INVALID_VALUE, "args is NULL but it takes 2 parameters");
    void *args1[] = {&p, NULL};
    ASSERT_ERR(tile_launch(k, (tile_dim3){1, 1, 1}, args1, NULL), TILE_ERROR_INVALID_VALUE, "args[1] (argument 2 'n') is NULL");
    ASSERT_ERR(tile_launch_raw(k, (tile_dim3){1, 1, 1}, (tile_dim3){2048, 1, 1}, 0, args, NULL), TILE_ERROR_INVALID_VALUE, "at most 1024");
    cr_assert_eq(tile_launch(k, (tile_dim3){8, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    float out[8];
    cr_assert_eq(tile_memcpy_dtoh(ctx, out, p, sizeof out), TILE_OK);
    for (int i = 0; i < 8; i++) cr_assert_eq(out[i], 1.0f);
    /* a pointer the kernel assumed 16-byte aligned: refused before the launch */
    tile_devptr end = p + 252;
    void *args2[] = {&end, &n};
    ASSERT_ERR(tile_launch(k, (tile_dim3){2, 1, 1}, args2, NULL), TILE_ERROR_INVALID_VALUE, "multiple of 16");
    /* the address in hex, the parameter named and called a pointer (not "argument 1 is 87960930222332") */
    char want[160];
    snprintf(want, sizeof want, "argument 1 'x' (0x%llx) is not a multiple of 16, but the kernel was compiled assuming this pointer is "
             "16-byte aligned", (unsigned long long)end);
    cr_expect(strstr(tile_last_error(ctx), want), "%s", tile_last_error(ctx));
    /* out of bounds on the device: reported, not a crash (from the last aligned 16 bytes, program 4
     * writes one float past the end) */
    end = p + 240;
    void *args3[] = {&end, &n};
    cr_assert_eq(tile_launch(k, (tile_dim3){5, 1, 1}, args3, NULL), TILE_ERROR_LAUNCH);
    cr_assert(strstr(tile_last_error(ctx), "memcheck"), "%s", tile_last_error(ctx));
    tile_module_unload(m);
    cr_assert_eq(tile_free(ctx, p), TILE_OK);
    close_emu(ctx);
}

/* tile_gemm's lda, ldb, ldc are BLAS leading dimensions (docs/runtime.md, "tile_gemm"): 0 is refused for each
 * operand, as stored (trans_a, trans_b), with a message saying that 0 is not "contiguous" here, as it is for the
 * row strides of the other calls; refused before any pointer is read, by tile_gemm and tile_gemm_prepare alike. */
Test(runtime, lda_zero_is_refused) {
    tile_context *ctx;
    cr_assert_eq(tile_context_create("emu", &ctx), TILE_OK);
    tile_devptr p;
    cr_assert_eq(tile_malloc(ctx, 4096, &p), TILE_OK);
    static const char *const ZERO = "; tile_gemm's leading dimensions are BLAS ones, 0 does not mean contiguous here";
    const struct {
        int which, trans; /* 0 lda, 1 ldb, 2 ldc; trans_a or trans_b on its operand */
        const char *want;
    } cases[] = {{0, 0, "ldA = 0 is less than the 7 columns of A (m x k)"}, {0, 1, "ldA = 0 is less than the 5 columns of A (k x m, trans_a)"},
                 {1, 0, "ldB = 0 is less than the 6 columns of B (k x n)"}, {1, 1, "ldB = 0 is less than the 7 columns of B (n x k, trans_b)"},
                 {2, 0, "ldC = 0 is less than the 6 columns of C (m x n)"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tile_gemm_args g = {.size = sizeof g, .m = 5, .n = 6, .k = 7, .a = p, .lda = 8, .b = p, .ldb = 8, .c = p + 2048, .ldc = 8,
                            .in_dtype = TILE_F16, .out_dtype = TILE_F32, .alpha = 1};
        int64_t *ld = cases[i].which == 0 ? &g.lda : cases[i].which == 1 ? &g.ldb : &g.ldc;
        *ld = 0;
        if (cases[i].which == 0) g.trans_a = cases[i].trans;
        if (cases[i].which == 1) g.trans_b = cases[i].trans;
        char want[256];
        snprintf(want, sizeof want, "tile_gemm: %s%s", cases[i].want, ZERO);
        ASSERT_ERR(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE, want);
        snprintf(want, sizeof want, "tile_gemm_prepare: %s%s", cases[i].want, ZERO);
        ASSERT_ERR(tile_gemm_prepare(ctx, &g), TILE_ERROR_INVALID_VALUE, want);
        *ld = 3; /* too short, not 0: no word about contiguity */
        ASSERT_ERR(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE, " = 3 is less than the ");
        cr_expect(!strstr(tile_last_error(ctx), "contiguous"), "%s", tile_last_error(ctx));
    }
    tile_context_destroy(ctx);
}

Test(runtime, module_cache_and_raw_ptx) {
    tile_context *ctx = open_emu();
    const char *src = "kernel fill(x: *f32, v: f32, const B: i32 = 64) { store(x + arange(0, B), v); }";
    const char *d32[] = {"B=32", NULL};
    tile_module *m1, *m2, *m3;
    cr_assert_eq(tile_module_load_source(ctx, src, NULL, &m1), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_module_load_source(ctx, src, NULL, &m2), TILE_OK);
    cr_assert_eq(m1, m2, "a second load is answered from memory");
    cr_assert_eq(tile_module_load_source(ctx, src, d32, &m3), TILE_OK);
    cr_assert_neq(m1, m3, "defines are part of the key");
    tile_context_stats s;
    cr_assert_eq(tile_context_get_stats(ctx, &s), TILE_OK);
    cr_assert_eq(s.memory_hits, 1);
    cr_assert_eq(s.compiles, 2);
    tile_module_unload(m1);
    tile_module_unload(m2);
    tile_module_unload(m3);

    /* raw PTX: block size from .maxntid, parameters from the entry */
    tile_compile_options o = {0};
    tile_compiled c;
    cr_assert_eq(tile_compile_source("fill.tile", src, &o, &c), TILE_OK);
    tile_module *mp;
    cr_assert_eq(tile_module_load_ptx(ctx, c.ptx, &mp), TILE_OK, "%s", tile_last_error(ctx));
    tile_compiled_free(&c);
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(mp, "fill", &k), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel_attributes at;
    tile_kernel_get_attributes(k, &at);
    cr_assert_eq(at.num_params, 2);
    cr_assert_eq(at.block_threads, 128);
    tile_devptr x;
    cr_assert_eq(tile_malloc(ctx, 64 * 4, &x), TILE_OK);
    float v = 2.5f, out[64];
    void *args[] = {&x, &v};
    cr_assert_eq(tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_synchronize(ctx), TILE_OK);
    tile_memcpy_dtoh(ctx, out, x, sizeof out);
    for (int i = 0; i < 64; i++) cr_assert_eq(out[i], 2.5f);
    /* a .ptr parameter is checked against the context's memory, as a compiled kernel's pointers are */
    tile_devptr bogus = 0xdead0000;
    void *bad_args[] = {&bogus, &v};
    cr_expect_eq(tile_launch(k, (tile_dim3){1, 1, 1}, bad_args, NULL), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "argument 1 '") && /* raw PTX: named by its .param */
              strstr(tile_last_error(ctx), "_param_0' (0xdead0000) is a pointer into no allocation of this context"), "%s",
              tile_last_error(ctx));
    /* its PTX says .reqntid 128: another block (it left elements unwritten) is refused, raw or compiled */
    cr_expect_neq(tile_launch_raw(k, (tile_dim3){1, 1, 1}, (tile_dim3){64, 1, 1}, 0, args, NULL), TILE_OK);
    cr_expect(strstr(tile_last_error(ctx), ".reqntid 128"), "%s", tile_last_error(ctx));
    tile_module *mc;
    tile_kernel *kc;
    cr_assert_eq(tile_module_load_source(ctx, src, NULL, &mc), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_module_get_kernel(mc, "fill", &kc), TILE_OK, "%s", tile_last_error(ctx));
    cr_expect_eq(tile_launch_raw(kc, (tile_dim3){1, 1, 1}, (tile_dim3){96, 1, 1}, 0, args, NULL), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "block (96,1,1), but the kernel was compiled for 128 threads"), "%s", tile_last_error(ctx));
    cr_expect_eq(tile_launch_raw(kc, (tile_dim3){1, 1, 1}, (tile_dim3){128, 1, 1}, 0, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    tile_module_unload(mc);
    tile_module_unload(mp);
    close_emu(ctx);
}

/* PTX the device cannot load is the caller's source with an error: TILE_ERROR_COMPILE with the PTX line (not
 * TILE_ERROR_DEVICE: nothing failed in the device), and the context loads good PTX after it. */
Test(runtime, load_ptx_errors) {
    tile_context *ctx = open_emu();
    static const char good[] = ".version 8.0\n.target sm_80\n.address_size 64\n"
                               ".visible .entry k(.param .u64 p)\n{\n  .reg .b64 %rd<2>;\n  ld.param.u64 %rd1, [p];\n  ret;\n}\n";
    static const char bad_ins[] = ".version 8.0\n.target sm_80\n.address_size 64\n"
                                  ".visible .entry k(.param .u64 p)\n{\n  .reg .b64 %rd<2>;\n  frobnicate.u64 %rd1, [p];\n  ret;\n}\n";
    static const char unclosed[] = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry broken( {\n";
    tile_module *m = (tile_module *)1;
    ASSERT_ERR(tile_module_load_ptx(ctx, bad_ins, &m), TILE_ERROR_COMPILE, "tile_module_load_ptx: ptx:7: ");
    cr_expect(strstr(tile_last_error(ctx), "frobnicate"), "%s", tile_last_error(ctx));
    cr_expect_null(m);
    ASSERT_ERR(tile_module_load_ptx(ctx, unclosed, &m), TILE_ERROR_COMPILE, "tile_module_load_ptx: ptx:4: ");
    cr_assert_eq(tile_module_load_ptx(ctx, good, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_module_unload(m);
    ASSERT_ERR(tile_module_load_ptx(ctx, NULL, &m), TILE_ERROR_INVALID_VALUE, "ptx is NULL"); /* an argument, not a source */
    close_emu(ctx);
    /* a newer GPU's PTX on an older device: a source this device cannot compile, as the driver's JIT refuses it */
    cr_assert_eq(tile_context_create("emu:sm_80", &ctx), TILE_OK);
    static const char hopper[] = ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n  ret;\n}\n";
    ASSERT_ERR(tile_module_load_ptx(ctx, hopper, &m), TILE_ERROR_COMPILE, "tile_module_load_ptx: emu:sm_80 cannot load PTX for .target sm_90a");
    tile_context_destroy(ctx);
}

/* Raw PTX as nvcc and Triton write it: qualified pointers, a struct passed by value, a 2-D .reqntid that
 * tile_launch uses as it is (a flattened block would run the tid.y rows as x). */
/* .reqntid dimensions whose product passes 2^64 (2^22 * 2^22 * 2^20 wrapped to 0 threads, 10^9 cubed named
 * 11515845246265065472): the attributes saturate and the launch is refused naming the block. */
Test(runtime, raw_ptx_block_product_overflow) {
    tile_context *ctx = open_emu();
    static const char *const dims[] = {"4194304, 4194304, 1048576", "1000000000, 1000000000, 1000000000"};
    static const char *const want[] = {"block (4194304,4194304,1048576) of more than 2^64 threads (at most 1024)",
                                       "block (1000000000,1000000000,1000000000) of more than 2^64 threads (at most 1024)"};
    for (int i = 0; i < 2; i++) {
        char ptx[256];
        snprintf(ptx, sizeof ptx, ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry big(.param .u32 a)\n.reqntid %s\n{ ret; }\n",
                 dims[i]);
        tile_module *m;
        cr_assert_eq(tile_module_load_ptx(ctx, ptx, &m), TILE_OK, "%s", tile_last_error(ctx));
        tile_kernel *k;
        cr_assert_eq(tile_module_get_kernel(m, "big", &k), TILE_OK, "%s", tile_last_error(ctx));
        tile_kernel_attributes at;
        tile_kernel_get_attributes(k, &at);
        cr_expect_eq(at.block_threads, 2147483647u, "%s: %u threads", dims[i], at.block_threads);
        uint32_t a = 0;
        void *args[] = {&a};
        cr_expect_eq(tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL), TILE_ERROR_INVALID_VALUE);
        cr_expect(strstr(tile_last_error(ctx), want[i]), "%s", tile_last_error(ctx));
        tile_module_unload(m);
    }
    tile_context_destroy(ctx);
}

Test(runtime, raw_ptx_header) {
    tile_context *ctx = open_emu();
    const char *ptx =
        ".version 8.0\n.target sm_80\n.address_size 64\n"
        ".visible .entry scale2d_long(.param .u32 a) { ret; }\n"
        ".visible .entry scale2d(\n"
        "\t.param .u64 .ptr .global .align 1 scale2d_param_0,\n"
        "\t.param .align 8 .b8 scale2d_param_1[16],\n"
        "\t.param .f32 scale2d_param_2\n"
        ")\n.reqntid 8, 4, 1\n{\n"
        "\t.reg .b32 %r<8>; .reg .b64 %rd<8>; .reg .f32 %f<4>;\n"
        "\tld.param.u64 %rd1, [scale2d_param_0];\n"
        "\tld.param.u32 %r1, [scale2d_param_1];\n"     /* the struct's row stride */
        "\tld.param.u32 %r2, [scale2d_param_1+8];\n"   /* its offset */
        "\tld.param.f32 %f1, [scale2d_param_2];\n"
        "\tmov.u32 %r3, %tid.x; mov.u32 %r4, %tid.y;\n"
        "\tmad.lo.s32 %r5, %r4, %r1, %r3;\n"
        "\tadd.s32 %r5, %r5, %r2;\n"
        "\tcvt.rn.f32.u32 %f2, %r5; mul.f32 %f3, %f2, %f1;\n"
        "\tmul.wide.u32 %rd2, %r5, 4; add.s64 %rd3, %rd1, %rd2;\n"
        "\tst.global.f32 [%rd3], %f3;\n\tret;\n}\n";
    tile_module *m;
    cr_assert_eq(tile_module_load_ptx(ctx, ptx, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(m, "scale2d", &k), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel_attributes at;
    tile_kernel_get_attributes(k, &at);
    cr_assert_eq(at.num_params, 3);
    cr_assert_str_eq(at.signature, "ptr, b8[16], f32");
    cr_assert_eq(at.block_threads, 32);
    cr_assert_eq(at.num_warps, 1);
    tile_kernel *kl;
    cr_assert_eq(tile_module_get_kernel(m, "scale2d_long", &kl), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel_get_attributes(kl, &at);
    cr_assert_str_eq(at.signature, "u32", "the entry whose name extends another's is its own");
    cr_assert_eq(at.block_threads, 0);
    /* the name read as the emulator's lexer reads it: right after ".entry" ("%k", found by fuzz_ptx: the
     * launcher then had no parameters to show, -1) or past a newline */
    tile_module *mw;
    cr_assert_eq(tile_module_load_ptx(ctx, ".version 8.0\n.target sm_80\n.address_size 64\n"
                                           ".visible .entry%k(.param .u64 .ptr a) .maxntid 64 { ret; }\n"
                                           ".visible .entry\n\tnl\n(.param .f32 b, .param .u16 c) { ret; }\n", &mw),
                 TILE_OK, "%s", tile_last_error(ctx));
    const char *wn[] = {"%k", "nl"}, *wsig[] = {"ptr", "f32, u16"};
    for (int i = 0; i < 2; i++) {
        tile_kernel *kw;
        cr_assert_eq(tile_module_get_kernel(mw, wn[i], &kw), TILE_OK, "%s", tile_last_error(ctx));
        cr_assert_eq(tile_kernel_get_attributes(kw, &at), TILE_OK);
        cr_assert_eq(at.num_params, i + 1, "%s", wn[i]);
        cr_assert_str_eq(at.signature, wsig[i]);
        cr_assert_eq(at.block_threads, i ? 0 : 64);
    }
    tile_module_unload(mw);
    /* comments are no header: an old entry of the same name, a parameter and a .maxntid commented out (they were read as
     * the kernel's: four parameters and 256 threads), a "/" "*" inside a .file name opening no comment; and the module's
     * entries listed in order, as the Python package lists them */
    tile_module *mc;
    cr_assert_eq(tile_module_load_ptx(ctx, ".version 8.0\n.target sm_80\n.address_size 64\n.file 1 \"/src/*/k.cu\"\n"
                                           "// .visible .entry cm(.param .u32 old) .maxntid 512\n"
                                           "/* .visible .entry gone(.param .u32 g) { ret; } */\n"
                                           ".visible .entry cm(.param .u64 .ptr a, // .param .u32 was,\n"
                                           "  /* .param .f64 dropped, */ .param .f32 b)\n// .maxntid 256\n.reqntid 32 { ret; }\n"
                                           ".visible .entry second() { ret; }\n", &mc),
                 TILE_OK, "%s", tile_last_error(ctx));
    const char *const *names;
    int nnames;
    cr_assert_eq(tile_module_get_kernel_names(mc, &names, &nnames), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(nnames, 2);
    cr_expect_str_eq(names[0], "cm");
    cr_expect_str_eq(names[1], "second");
    cr_expect_null(names[2]);
    tile_kernel *kc;
    cr_assert_eq(tile_module_get_kernel(mc, "cm", &kc), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel_get_attributes(kc, &at);
    cr_expect_str_eq(at.signature, "ptr, f32");
    cr_expect_eq(at.block_threads, 32);
    cr_expect_eq(tile_module_get_kernel(mc, "gone", &kc), TILE_ERROR_NOT_FOUND);
    cr_expect(strstr(tile_last_error(ctx), "the kernels of its PTX: cm, second"), "%s", tile_last_error(ctx));
    cr_expect_eq(tile_module_get_kernel_names(mc, NULL, &nnames), TILE_ERROR_INVALID_VALUE);
    tile_module_unload(mc);
    cr_expect_eq(tile_module_get_kernel_names(mc, &names, &nnames), TILE_ERROR_INVALID_VALUE, "an unloaded module");
    /* ptxas takes .reqntid 65536, 65536 (no GPU launches it): the count saturates, it did not wrap to 0 threads */
    tile_module *mbig;
    cr_assert_eq(tile_module_load_ptx(ctx, ".version 8.0\n.target sm_80\n.address_size 64\n"
                                           ".visible .entry big(.param .u64 a) .reqntid 65536, 65536, 1 { ret; }\n", &mbig),
                 TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *kb;
    cr_assert_eq(tile_module_get_kernel(mbig, "big", &kb), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel_get_attributes(kb, &at);
    cr_assert_eq(at.block_threads, INT32_MAX);
    tile_devptr none = 0;
    void *bargs[] = {&none};
    cr_assert_neq(tile_launch(kb, (tile_dim3){1, 1, 1}, bargs, NULL), TILE_OK, "a block of 2^32 threads launched");
    tile_module_unload(mbig);

    tile_devptr x;
    cr_assert_eq(tile_malloc(ctx, 64 * 4, &x), TILE_OK);
    cr_assert_eq(tile_memset(ctx, x, 0xff, 64 * 4), TILE_OK);
    struct { uint32_t stride, pad; uint32_t offset, pad2; } geo = {10, 0, 3, 0};
    float f = 0.5f, out[64];
    void *args[] = {&x, &geo, &f};
    cr_assert_eq(tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_synchronize(ctx), TILE_OK);
    tile_memcpy_dtoh(ctx, out, x, sizeof out);
    bool written[64] = {0};
    for (int ty = 0; ty < 4; ty++)
        for (int tx = 0; tx < 8; tx++) {
            int i = ty * 10 + tx + 3;
            written[i] = true;
            cr_assert_eq(out[i], 0.5f * (float)i, "element %d (tid %d,%d): %g", i, tx, ty, out[i]);
        }
    for (int i = 0; i < 64; i++)
        if (!written[i]) cr_assert(isnan(out[i]), "element %d was written: %g", i, out[i]);
    tile_module_unload(m);
    close_emu(ctx);
}

/* ---- tile_gemm against a float64 reference ---- */
static uint64_t rs = 88172645463325252ull;
static double urand(void) {
    rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
    return (double)(rs >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}
static uint16_t to_half(float f, int bf) { return bf ? f32_to_bf16(f) : f32_to_f16(f); }
static double from_half(uint16_t h, int bf) { return bf ? bf16_to_d(h) : f16_to_d(h); }
static int dsize(tile_dtype t) { return t == TILE_I8 ? 1 : t == TILE_F16 || t == TILE_BF16 ? 2 : 4; }
static void put(tile_dtype t, void *buf, size_t i, double v, double *exact) {
    switch (t) {
    case TILE_F16: case TILE_BF16:
        ((uint16_t *)buf)[i] = to_half((float)v, t == TILE_BF16);
        *exact = from_half(((uint16_t *)buf)[i], t == TILE_BF16);
        break;
    case TILE_F32: ((float *)buf)[i] = (float)v, *exact = (float)v; break;
    case TILE_I8: ((int8_t *)buf)[i] = (int8_t)floor(v * 100), *exact = ((int8_t *)buf)[i]; break;
    default: ((int32_t *)buf)[i] = (int32_t)(v * 100), *exact = ((int32_t *)buf)[i]; break;
    }
}
static double get(tile_dtype t, const void *buf, size_t i) {
    switch (t) {
    case TILE_F16: case TILE_BF16: return from_half(((const uint16_t *)buf)[i], t == TILE_BF16);
    case TILE_F32: return ((const float *)buf)[i];
    default: return ((const int32_t *)buf)[i];
    }
}

static void gemm_case(tile_context *ctx, tile_dtype in, tile_dtype out, int m, int n, int k, int ta, int tb, float alpha, float beta,
                      int bias, tile_activation act) {
    int64_t lda = (ta ? m : k) + 3, ldb = (tb ? k : n) + 1, ldc = n + 2;
    size_t an = (size_t)(ta ? k : m) * lda, bn = (size_t)(tb ? n : k) * ldb, cn = (size_t)m * ldc;
    void *ha = malloc(an * dsize(in)), *hb = malloc(bn * dsize(in)), *hc = malloc(cn * dsize(out)), *hbias = malloc((size_t)n * dsize(out));
    double *va = malloc(an * 8), *vb = malloc(bn * 8), *vc = malloc(cn * 8), *vbias = malloc((size_t)n * 8);
    for (size_t i = 0; i < an; i++) put(in, ha, i, urand(), &va[i]);
    for (size_t i = 0; i < bn; i++) put(in, hb, i, urand(), &vb[i]);
    for (size_t i = 0; i < cn; i++) put(out, hc, i, urand(), &vc[i]);
    for (int i = 0; i < n; i++) put(out, hbias, (size_t)i, urand(), &vbias[i]);
    tile_devptr da, db, dc, dbias;
    cr_assert_eq(tile_malloc(ctx, an * dsize(in), &da), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, bn * dsize(in), &db), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, cn * dsize(out), &dc), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, (size_t)n * dsize(out), &dbias), TILE_OK);
    tile_memcpy_htod(ctx, da, ha, an * dsize(in));
    tile_memcpy_htod(ctx, db, hb, bn * dsize(in));
    tile_memcpy_htod(ctx, dc, hc, cn * dsize(out));
    tile_memcpy_htod(ctx, dbias, hbias, (size_t)n * dsize(out));
    tile_gemm_args g = {.m = m, .n = n, .k = k, .a = da, .lda = lda, .trans_a = ta, .b = db, .ldb = ldb, .trans_b = tb, .c = dc,
                        .ldc = ldc, .in_dtype = in, .out_dtype = out, .alpha = alpha, .beta = beta, .bias = bias ? dbias : 0,
                        .activation = act};
    cr_assert_eq(tile_gemm(ctx, &g), TILE_OK, "%s", tile_last_error(ctx));
    tile_memcpy_dtoh(ctx, hc, dc, cn * dsize(out));
    double tol_rel = in == TILE_F32 ? 4e-3 : 1e-5, out_rel = out == TILE_F16 ? 1.0 / 1024 : out == TILE_BF16 ? 1.0 / 128 : 0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < ldc; j++) {
            double got = get(out, hc, (size_t)i * ldc + j);
            if (j >= n) {
                cr_assert_eq(got, vc[(size_t)i * ldc + j], "column %d past n=%d was written", j, n);
                continue;
            }
            double s = 0, mag = 0;
            for (int p = 0; p < k; p++) {
                double x = va[ta ? (size_t)p * lda + i : (size_t)i * lda + p], y = vb[tb ? (size_t)j * ldb + p : (size_t)p * ldb + j];
                s += x * y, mag += fabs(x * y);
            }
            double want = alpha * s + beta * vc[(size_t)i * ldc + j] + (bias ? vbias[j] : 0);
            mag = fabs(alpha) * mag + fabs(beta * vc[(size_t)i * ldc + j]) + (bias ? fabs(vbias[j]) : 0);
            if (act == TILE_ACT_RELU) want = want > 0 ? want : 0;
            if (act == TILE_ACT_SILU) want = want / (1 + exp(-want));
            if (out == TILE_I32) want = trunc(want);
            double tol = out == TILE_I32 ? (alpha == 1 && beta == 0 && !act ? 0 : 1) : tol_rel * mag + out_rel * fabs(want) + 1e-5 + (act ? 1e-5 * (1 + mag) : 0);
            cr_assert(fabs(got - want) <= tol, "%s %dx%dx%d ta=%d tb=%d C[%d][%d]=%.8g want %.8g", "gemm", m, n, k, ta, tb, i, j, got, want);
        }
    tile_free(ctx, da), tile_free(ctx, db), tile_free(ctx, dc), tile_free(ctx, dbias);
    free(ha), free(hb), free(hc), free(hbias), free(va), free(vb), free(vc), free(vbias);
}

Test(runtime, gemm_types_and_transposes, .timeout = 240) {
    tile_context *ctx = open_emu();
    gemm_case(ctx, TILE_F16, TILE_F32, 17, 33, 65, 0, 0, 1, 0, 0, TILE_ACT_NONE);
    gemm_case(ctx, TILE_F16, TILE_F16, 32, 48, 16, 0, 0, 1, 0, 0, TILE_ACT_NONE);
    gemm_case(ctx, TILE_BF16, TILE_F32, 21, 19, 40, 1, 0, 1, 0, 0, TILE_ACT_NONE);
    gemm_case(ctx, TILE_BF16, TILE_BF16, 21, 19, 40, 0, 1, 1, 0, 0, TILE_ACT_NONE);
    gemm_case(ctx, TILE_F32, TILE_F32, 9, 30, 20, 1, 1, 1, 0, 0, TILE_ACT_NONE);
    gemm_case(ctx, TILE_I8, TILE_I32, 13, 17, 70, 0, 0, 1, 0, 0, TILE_ACT_NONE);
    gemm_case(ctx, TILE_F16, TILE_F32, 1, 1, 1, 0, 0, 1, 0, 0, TILE_ACT_NONE);
    close_emu(ctx);
}

Test(runtime, gemm_epilogue_and_variants, .timeout = 240) {
    tile_context *ctx = open_emu();
    gemm_case(ctx, TILE_F16, TILE_F32, 20, 24, 30, 0, 0, 0.5f, 2.0f, 1, TILE_ACT_RELU);
    gemm_case(ctx, TILE_BF16, TILE_F32, 20, 24, 30, 0, 0, 1.0f, 0.0f, 0, TILE_ACT_SILU);
    gemm_case(ctx, TILE_F16, TILE_F32, 20, 24, 30, 0, 0, 1.0f, 0.0f, 0, TILE_ACT_NONE);
    tile_gemm_info gi;
    cr_assert_eq(tile_gemm_last_info(ctx, &gi), TILE_OK);
    cr_assert_str_eq(gi.kernel, "gemm_f16_f32");
    cr_assert(strstr(gi.specialize, "sak=1") && strstr(gi.specialize, "sbn=1"), "%s", gi.specialize);
    cr_assert_eq(gi.grid.x, 1);
    /* the same variant again: loaded, not compiled */
    gemm_case(ctx, TILE_F16, TILE_F32, 20, 24, 30, 0, 0, 1.0f, 0.0f, 0, TILE_ACT_NONE);
    tile_gemm_last_info(ctx, &gi);
    cr_assert_eq(gi.source, 0);
    /* an explicit configuration, and split-K (f32 output, nothing else in the epilogue) */
    tile_devptr a, b, c;
    tile_malloc(ctx, 64 * 64 * 2, &a), tile_malloc(ctx, 64 * 64 * 2, &b), tile_malloc(ctx, 64 * 64 * 4, &c);
    tile_memset(ctx, a, 0x3c, 64 * 64 * 2); /* 0x3c3c: f16 1.06 */
    tile_memset(ctx, b, 0x3c, 64 * 64 * 2);
    const char *cfg[] = {"BM=64", "BN=64", "BK=32", "SPLIT_K=2", "num_warps=4", NULL};
    tile_gemm_args g = {.m = 64, .n = 64, .k = 64, .a = a, .lda = 64, .b = b, .ldb = 64, .c = c, .ldc = 64, .in_dtype = TILE_F16,
                        .out_dtype = TILE_F32, .alpha = 1};
    cr_assert_eq(tile_gemm_with_config(ctx, &g, cfg), TILE_OK, "%s", tile_last_error(ctx));
    tile_gemm_last_info(ctx, &gi);
    cr_assert_eq(gi.grid.y, 2, "%s", gi.config);
    cr_assert(strstr(gi.specialize, "m=16"), "%s", gi.specialize);
    float out[64 * 64];
    tile_memcpy_dtoh(ctx, out, c, sizeof out);
    double h = from_half(0x3c3c, 0);
    for (int i = 0; i < 64 * 64; i++) cr_assert_float_eq(out[i], 64 * h * h, 1e-3);
    close_emu(ctx);
}

Test(runtime, tuning_database_read_by_gemm, .timeout = 120) {
    tile_context *ctx = open_emu();
    char id[33];
    cr_assert_eq(tile_kernel_id_file(tile_gemm_source_path(), "gemm_bf16_f32", id), TILE_OK);
    tile_device_properties props;
    cr_assert_eq(tile_context_get_properties(ctx, &props), TILE_OK);
    char dev[160];
    snprintf(dev, sizeof dev, "%s/%s", props.name, props.arch);
    cr_assert_eq(tile_tune_record(cache_dir, id, dev, "m=32,n=64,k=32", "BM=128 BN=128 BK=32 num_warps=4 num_stages=3", 1e-3), TILE_OK);
    cr_assert_eq(tile_tune_record(cache_dir, id, dev, "m=32,n=64,k=32", "BM=64 BN=64 BK=32 num_warps=4 num_stages=4", 1e-4), TILE_OK);
    char cfg[256];
    cr_assert_eq(tile_tune_lookup(cache_dir, id, dev, "m=32,n=64,k=32", cfg, sizeof cfg), TILE_OK);
    cr_assert_str_eq(cfg, "BM=64 BN=64 BK=32 num_warps=4 num_stages=4", "the last record wins");
    cr_assert_eq(tile_tune_lookup(cache_dir, id, dev, "m=64,n=64,k=32", cfg, sizeof cfg), TILE_ERROR_NOT_FOUND);
    cr_assert_eq(tile_tune_bucket(30), 32);
    cr_assert_eq(tile_tune_bucket(64), 64);
    cr_assert_eq(tile_tune_bucket(0), 1);
    /* bucket m=32,n=64,k=32 with sizes and leading dimensions multiples of 16: the tuned configuration */
    tile_devptr a, b, c;
    cr_assert_eq(tile_malloc(ctx, 32 * 32 * 2, &a), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 32 * 64 * 2, &b), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 32 * 64 * 4, &c), TILE_OK);
    tile_memset(ctx, a, 0x3f, 32 * 32 * 2); /* 0x3f3f: bf16 0.746 */
    tile_memset(ctx, b, 0x3f, 32 * 64 * 2);
    tile_memset(ctx, c, 0xff, 32 * 64 * 4); /* poisoned */
    tile_gemm_args g = {.m = 32, .n = 64, .k = 32, .a = a, .lda = 32, .b = b, .ldb = 64, .c = c, .ldc = 64, .in_dtype = TILE_BF16,
                        .out_dtype = TILE_F32, .alpha = 1};
    cr_assert_eq(tile_gemm(ctx, &g), TILE_OK, "%s", tile_last_error(ctx));
    tile_gemm_info gi;
    tile_gemm_last_info(ctx, &gi);
    cr_assert(gi.tuned, "%s", gi.config);
    cr_assert(strstr(gi.config, "BM=64") && strstr(gi.config, "num_stages=4"), "%s", gi.config);
    cr_assert_eq(gi.block.x, 128);
    float out[32 * 64];
    cr_assert_eq(tile_memcpy_dtoh(ctx, out, c, sizeof out), TILE_OK);
    double h = 0.74609375; /* 0x3f3f */
    for (int i = 0; i < 32 * 64; i++) cr_assert_float_eq(out[i], 32 * h * h, 1e-3, "out[%d] = %g", i, out[i]);
    /* the layout is part of the key: a record for the plain layout is not applied to a transposed one, and one
     * for trans_a (",trans_a=1", what tile tune gemm --trans-a stores) only to trans_a */
    cr_assert_eq(tile_tune_record(cache_dir, id, dev, "m=32,n=64,k=32,trans_a=1", "BM=128 BN=64 BK=32 num_warps=4 num_stages=3", 1e-4),
                 TILE_OK);
    for (int t = 0; t < 3; t++) { /* trans_b: untuned; trans_a: its own record; plain: still its own */
        tile_gemm_args gt = g;
        gt.trans_b = t == 0, gt.ldb = t == 0 ? 32 : 64; /* B n x k */
        gt.trans_a = t == 1;                            /* A k x m: lda m = 32 */
        tile_memset(ctx, c, 0xff, 32 * 64 * 4);
        cr_assert_eq(tile_gemm(ctx, &gt), TILE_OK, "%s", tile_last_error(ctx));
        tile_gemm_last_info(ctx, &gi);
        if (t == 0) cr_assert(!gi.tuned && strstr(gi.config, "BM=128 BN=128"), "trans_b: %s", gi.config);
        if (t == 1) cr_assert(gi.tuned && strstr(gi.config, "BM=128 BN=64 "), "trans_a: %s", gi.config);
        if (t == 2) cr_assert(gi.tuned && strstr(gi.config, "BM=64 BN=64 "), "plain: %s", gi.config);
        cr_assert_eq(tile_memcpy_dtoh(ctx, out, c, sizeof out), TILE_OK);
        for (int i = 0; i < 32 * 64; i++) cr_assert_float_eq(out[i], 32 * h * h, 1e-3, "layout %d: out[%d] = %g", t, i, out[i]);
    }
    tile_free(ctx, a), tile_free(ctx, b), tile_free(ctx, c);
    /* the same bucket with odd leading dimensions: read element by element, the tuned tile is set aside
     * for the scalar configuration (kernels/gemm/gemm.c: 8 warps) */
    gemm_case(ctx, TILE_BF16, TILE_F32, 30, 50, 17, 0, 0, 1, 0, 0, TILE_ACT_NONE);
    tile_gemm_last_info(ctx, &gi);
    cr_assert(!gi.tuned, "%s", gi.config);
    cr_assert(strstr(gi.config, "BM=128 BN=128 BK=32 num_warps=8"), "%s", gi.config);
    cr_assert_eq(gi.block.x, 256);

    tile_tune_space sp;
    char *err = NULL;
    cr_assert_eq(tile_tune_space_file(tile_gemm_source_path(), "gemm_bf16_f32", &sp, &err), TILE_OK, "%s", err ? err : "");
    cr_assert_geq(sp.nconfigs, 2);
    cr_assert_str_eq(sp.configs[0][0], "BM=128");
    cr_assert_eq(sp.nkeys, 3);
    cr_assert_str_eq(sp.keys[2], "k");
    tile_tune_space_free(&sp);
    cr_assert_eq(tile_tune_space_file(tile_gemm_source_path(), "nope", &sp, &err), TILE_ERROR_COMPILE);
    cr_assert(err && strstr(err, "no kernel named 'nope'"), "%s", err ? err : "");
    free(err);
    /* from source text: the same space; a malformed @config is located in the text */
    const char *text = "@config(B=64, num_warps=2)\n@config(B=128, flag=true)\n@tune_key(n, m)\n"
                       "kernel k(x: *f32, n: i32, m: i32, const B: i32, const flag: i1 = false) {}\n";
    cr_assert_eq(tile_tune_space_source("t.tile", text, "k", &sp, &err), TILE_OK, "%s", err ? err : "");
    cr_assert_eq(sp.nconfigs, 2);
    cr_assert_str_eq(sp.configs[0][1], "num_warps=2");
    cr_assert_str_eq(sp.configs[1][1], "flag=true");
    cr_assert_null(sp.configs[1][2]);
    cr_assert_eq(sp.nkeys, 2);
    cr_assert_str_eq(sp.keys[1], "m");
    tile_tune_space_free(&sp);
    cr_assert_eq(tile_tune_space_source(NULL, "@config(B=1 + 1)\nkernel k(const B: i32) {}\n", "k", &sp, &err), TILE_ERROR_COMPILE);
    cr_assert(err && strstr(err, "<source>:1:") && strstr(err, "literal value"), "%s", err ? err : "");
    free(err);
    cr_assert_eq(tile_tune_space_source(NULL, NULL, "k", &sp, &err), TILE_ERROR_INVALID_VALUE);
    free(err);
    close_emu(ctx);
}

/* tile_gemm 48 x 48 x 32 (the bucket m=64,n=64,k=32; sizes and leading dimensions multiples of 16:
 * tuned configurations are taken only where A and B are read in 16-byte vectors, kernels/gemm/gemm.c)
 * checked, and what it chose */
static tile_gemm_info gemm_after_tune(tile_context *ctx) {
    tile_devptr a, b, c;
    cr_assert_eq(tile_malloc(ctx, 48 * 32 * 2, &a), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 32 * 48 * 2, &b), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 48 * 48 * 4, &c), TILE_OK);
    tile_memset(ctx, a, 0x3c, 48 * 32 * 2); /* 0x3c3c: f16 1.05859375 */
    tile_memset(ctx, b, 0x3c, 32 * 48 * 2);
    tile_memset(ctx, c, 0xff, 48 * 48 * 4);
    tile_gemm_args g = {.m = 48, .n = 48, .k = 32, .a = a, .lda = 32, .b = b, .ldb = 48, .c = c, .ldc = 48, .in_dtype = TILE_F16,
                        .out_dtype = TILE_F32, .alpha = 1};
    cr_assert_eq(tile_gemm(ctx, &g), TILE_OK, "%s", tile_last_error(ctx));
    tile_gemm_info gi;
    tile_gemm_last_info(ctx, &gi);
    float out[48 * 48];
    cr_assert_eq(tile_memcpy_dtoh(ctx, out, c, sizeof out), TILE_OK);
    for (int i = 0; i < 48 * 48; i++) cr_assert_float_eq(out[i], 32 * 1.05859375 * 1.05859375, 1e-3, "out[%d] = %g", i, out[i]);
    tile_free(ctx, a), tile_free(ctx, b), tile_free(ctx, c);
    return gi;
}

/* tile tune gemm stores what tile_gemm reads: a shape tile_gemm reads element by element (m = 40) runs its
 * defaults whatever the database says, so tuning it stores nothing and says why (a record for its bucket would
 * have given 48x48x32, read in vectors, a winner timed on the other path); 48x48x32 is stored and read. */
Test(runtime, tune_cli_then_gemm, .timeout = 120) {
    tile_context *ctx = open_emu();
    char cmd[512], path[600], log[8192] = "";
    snprintf(cmd, sizeof cmd, "TILE_CACHE_DIR=%s %s tune gemm --m 40 --n 48 --k 32 --dtype f16 --reps 1 --warmup 0 > %s/log 2>&1", cache_dir,
             TILE_CLI, cache_dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(path, sizeof path, "%s/log", cache_dir);
    FILE *lf = fopen(path, "r");
    cr_assert(lf);
    log[fread(log, 1, sizeof log - 1, lf)] = 0;
    fclose(lf);
    cr_assert(strstr(log, "nothing stored: m = 40 is not a multiple of 16") && !strstr(log, "stored: gemm"), "%s", log);
    tile_cache_stats st;
    cr_assert_eq(tile_cache_get_stats(cache_dir, &st), TILE_OK);
    cr_assert_eq(st.tuning_records, 0);
    tile_context *before;
    tile_context_options bo = {.device = "emu", .cache_dir = cache_dir, .emu_host_threads = 2};
    cr_assert_eq(tile_context_create_ex(&bo, &before), TILE_OK); /* its own: tile_gemm reads a bucket once per context */
    cr_assert(!gemm_after_tune(before).tuned);
    tile_context_destroy(before);
    snprintf(cmd, sizeof cmd, "TILE_CACHE_DIR=%s %s tune gemm --m 48 --n 48 --k 32 --dtype f16 --reps 1 --warmup 0 > %s/log 2>&1", cache_dir,
             TILE_CLI, cache_dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(tile_cache_get_stats(cache_dir, &st), TILE_OK);
    cr_assert_eq(st.tuning_records, 1);
    tile_gemm_info gi = gemm_after_tune(ctx);
    cr_assert(gi.tuned, "tile_gemm reads what tile tune stored: %s", gi.config);
    close_emu(ctx);
}

/* tile tune gemm on an emulated Hopper: every configuration is timed warp-specialized and persistent
 * (as tile_gemm launches the winner there), the database keeps the @config's text, and tile_gemm on
 * sm_90a then launches it with both added. */
Test(runtime, tune_cli_then_gemm_sm90a, .timeout = 300) {
    tile_context *ctx = open_emu_as("emu:sm_90a");
    char cmd[512];
    snprintf(cmd, sizeof cmd, "TILE_CACHE_DIR=%s %s tune gemm --device emu:sm_90a --m 48 --n 48 --k 32 --dtype f16 --reps 1 --warmup 0 "
             "> %s/log 2>&1", cache_dir, TILE_CLI, cache_dir);
    cr_assert_eq(system(cmd), 0);
    /* every configuration ran: the ones past 48 KiB of shared memory too (tile_launch opts in; the
     * properties say the dynamic limit) */
    tile_device_properties props;
    cr_assert_eq(tile_context_get_properties(ctx, &props), TILE_OK);
    cr_assert_eq(props.max_shared_per_block, 227 * 1024);
    char path[600], log[8192] = "";
    snprintf(path, sizeof path, "%s/log", cache_dir);
    FILE *lf = fopen(path, "r");
    cr_assert(lf);
    size_t nl = fread(log, 1, sizeof log - 1, lf);
    log[nl] = 0;
    fclose(lf);
    cr_assert(!strstr(log, "skipped") && strstr(log, "BM=128 BN=128"), "%s", log);
    tile_gemm_info gi = gemm_after_tune(ctx);
    cr_assert(gi.tuned && strstr(gi.config, "warp_specialize=1") && strstr(gi.config, "PERSISTENT=1"), "%s", gi.config);
    close_emu(ctx);
}

/* A kernel over 48 KiB of shared memory: tile_launch passes its dynamic shared memory. */
Test(runtime, launch_big_shared_memory) {
    tile_context *ctx;
    cr_assert_eq(tile_context_create("emu", &ctx), TILE_OK);
    const char *src = "@num_stages(4)\n"
                      "kernel mm(a: *f16, b: *f16, c: *f32, const K: i32 = 64) {\n"
                      "  let r = arange(0, 128);\n  let rk = arange(0, 32);\n"
                      "  let acc = zeros([128, 128], f32);\n"
                      "  for k0 in range(0, K, 32) {\n"
                      "    acc = dot(load(a + r[:, None] * K + (k0 + rk)[None, :]), load(b + (k0 + rk)[:, None] * 128 + r[None, :]), acc);\n"
                      "  }\n"
                      "  store(c + r[:, None] * 128 + r[None, :], acc);\n}\n";
    const char *defs[] = {NULL};
    tile_module *m;
    cr_assert_eq(tile_module_load_source(ctx, src, defs, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *kn;
    cr_assert_eq(tile_module_get_kernel(m, "mm", &kn), TILE_OK);
    tile_kernel_attributes at;
    cr_assert_eq(tile_kernel_get_attributes(kn, &at), TILE_OK);
    cr_assert_gt(at.shared_bytes, 48 * 1024, "the test needs a kernel past 48 KiB, got %u", at.shared_bytes);
    tile_devptr a, b, c;
    cr_assert_eq(tile_malloc(ctx, 128 * 64 * 2, &a), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 64 * 128 * 2, &b), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 128 * 128 * 4, &c), TILE_OK);
    uint16_t one = 0x3c00, h[128 * 64];
    for (int i = 0; i < 128 * 64; i++) h[i] = one;
    tile_memcpy_htod(ctx, a, h, sizeof h);
    tile_memcpy_htod(ctx, b, h, sizeof h);
    void *args[] = {&a, &b, &c};
    cr_assert_eq(tile_launch(kn, (tile_dim3){1, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_synchronize(ctx), TILE_OK, "%s", tile_last_error(ctx));
    static float hc[128 * 128];
    tile_memcpy_dtoh(ctx, hc, c, sizeof hc);
    for (int i = 0; i < 128 * 128; i++) cr_assert_eq(hc[i], 64.0f, "C[%d] = %g", i, hc[i]);
    tile_module_unload(m);
    tile_context_destroy(ctx);
}

/* What the code was specialized for is checked at every launch: a misaligned pointer, or an
 * integer that breaks its =16 specialization, is refused with a message. */
Test(runtime, launch_checks_specialization) {
    tile_context *ctx;
    cr_assert_eq(tile_context_create("emu", &ctx), TILE_OK);
    const char *src = "kernel k(x: *f32, n: i32) {\n  let o = arange(0, 128);\n  store(x + o, o as f32, o < n);\n}\n";
    const char *specs[] = {"n=16", NULL};
    tile_compile_options o = {.specialize = specs};
    tile_module *m;
    cr_assert_eq(tile_module_load_source_ex(ctx, "k.tile", src, &o, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *kn;
    cr_assert_eq(tile_module_get_kernel(m, "k", &kn), TILE_OK);
    tile_devptr x;
    cr_assert_eq(tile_malloc(ctx, 1024, &x), TILE_OK);
    int n = 64;
    void *args[] = {&x, &n};
    cr_assert_eq(tile_launch(kn, (tile_dim3){1, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    tile_devptr off = x + 4;
    void *bad_ptr[] = {&off, &n};
    cr_assert_eq(tile_launch(kn, (tile_dim3){1, 1, 1}, bad_ptr, NULL), TILE_ERROR_INVALID_VALUE);
    cr_assert(strstr(tile_last_error(ctx), "argument 1 'x' (0x") && strstr(tile_last_error(ctx), "multiple of 16"), "%s", tile_last_error(ctx));
    int odd = 17;
    void *bad_n[] = {&x, &odd};
    cr_assert_eq(tile_launch(kn, (tile_dim3){1, 1, 1}, bad_n, NULL), TILE_ERROR_INVALID_VALUE);
    cr_assert(strstr(tile_last_error(ctx), "argument 2 'n' is 17"), "%s", tile_last_error(ctx));
    tile_module_unload(m);
    tile_context_destroy(ctx);
}

/* The public dtype table: names, sizes and the round trip, and nothing for a value that is no type. */
Test(runtime, dtype_table) {
    static const struct {
        tile_dtype t;
        const char *name;
        size_t size;
    } want[] = {{TILE_F32, "f32", 4}, {TILE_F16, "f16", 2},   {TILE_BF16, "bf16", 2}, {TILE_F8E4M3, "f8e4m3", 1},
                {TILE_F8E5M2, "f8e5m2", 1}, {TILE_I8, "i8", 1}, {TILE_I32, "i32", 4},   {TILE_I16, "i16", 2},
                {TILE_I64, "i64", 8},   {TILE_U8, "u8", 1},     {TILE_U16, "u16", 2},   {TILE_U32, "u32", 4},
                {TILE_U64, "u64", 8},   {TILE_F64, "f64", 8}};
    cr_assert_eq(sizeof want / sizeof want[0], (size_t)TILE_DTYPE_COUNT);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        cr_expect_str_eq(tile_dtype_name(want[i].t), want[i].name);
        cr_expect_eq(tile_dtype_size(want[i].t), want[i].size, "%s", want[i].name);
        tile_dtype back = TILE_DTYPE_COUNT;
        cr_expect_eq(tile_dtype_from_name(want[i].name, &back), TILE_OK);
        cr_expect_eq(back, want[i].t, "%s", want[i].name);
    }
    tile_dtype t;
    cr_expect_eq(tile_dtype_from_name("i1", &t), TILE_ERROR_NOT_FOUND, "i1 is an IR type only");
    cr_expect_eq(tile_dtype_from_name("ptr", &t), TILE_ERROR_NOT_FOUND);
    cr_expect_eq(tile_dtype_from_name("f17", &t), TILE_ERROR_NOT_FOUND);
    /* its failures say why in tile_last_error(NULL) (they came back without a message) */
    cr_expect(strstr(tile_last_error(NULL), "tile_dtype_from_name: \"f17\" is no type (f32, f16, bf16, "), "%s", tile_last_error(NULL));
    cr_expect(strstr(tile_last_error(NULL), ", f64)"), "%s", tile_last_error(NULL));
    cr_expect_eq(tile_dtype_from_name(NULL, &t), TILE_ERROR_INVALID_VALUE);
    cr_expect_str_eq(tile_last_error(NULL), "tile_dtype_from_name: name is NULL");
    cr_expect_eq(tile_dtype_from_name("f32", NULL), TILE_ERROR_INVALID_VALUE);
    cr_expect_str_eq(tile_last_error(NULL), "tile_dtype_from_name: out is NULL");
    cr_expect_null(tile_dtype_name(TILE_DTYPE_COUNT));
    cr_expect_null(tile_dtype_name((tile_dtype)-1));
    cr_expect_eq(tile_dtype_size(TILE_DTYPE_COUNT), 0);
}

/* A context for each target compiles for it and runs the result on the emulator; an unknown target is refused. */
Test(runtime, context_per_target) {
    for (int i = 0; tile_target_name(i); i++) {
        snprintf(cache_dir, sizeof cache_dir, "/tmp/tile-test-rt-XXXXXX");
        cr_assert(mkdtemp(cache_dir));
        tile_context_options o = {.device = "emu", .cache_dir = cache_dir, .arch = tile_target_name(i)};
        tile_context *ctx;
        cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK, "%s", tile_target_name(i));
        tile_device_properties p;
        cr_assert_eq(tile_context_get_properties(ctx, &p), TILE_OK);
        cr_expect_str_eq(p.arch, tile_target_name(i));
        enum { N = 1000 };
        float x[N], y[N], out[N];
        for (int j = 0; j < N; j++) x[j] = (float)j * 0.5f, y[j] = 3.0f - (float)j, out[j] = NAN;
        tile_devptr dx, dy, dout;
        cr_assert_eq(tile_malloc(ctx, sizeof x, &dx), TILE_OK);
        cr_assert_eq(tile_malloc(ctx, sizeof y, &dy), TILE_OK);
        cr_assert_eq(tile_malloc(ctx, sizeof out, &dout), TILE_OK);
        cr_assert_eq(tile_memcpy_htod(ctx, dx, x, sizeof x), TILE_OK);
        cr_assert_eq(tile_memcpy_htod(ctx, dy, y, sizeof y), TILE_OK);
        cr_assert_eq(tile_memcpy_htod(ctx, dout, out, sizeof out), TILE_OK);
        tile_module *m;
        const char *defs[] = {"BLOCK=256", NULL};
        cr_assert_eq(tile_module_load_file(ctx, TILE_SOURCE_DIR "/kernels/add.tile", defs, &m), TILE_OK, "%s", tile_last_error(ctx));
        tile_kernel *k;
        cr_assert_eq(tile_module_get_kernel(m, "add", &k), TILE_OK);
        int n = N;
        void *args[] = {&dx, &dy, &dout, &n};
        cr_assert_eq(tile_launch(k, (tile_dim3){(N + 255) / 256, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
        cr_assert_eq(tile_memcpy_dtoh(ctx, out, dout, sizeof out), TILE_OK);
        for (int j = 0; j < N; j++) cr_assert_eq(out[j], x[j] + y[j], "%s: out[%d] = %g", tile_target_name(i), j, out[j]);
        tile_module_unload(m);
        close_emu(ctx);
    }
    tile_context_options bad = {.device = "emu", .arch = "sm_70"};
    tile_context *ctx;
    cr_expect_eq(tile_context_create_ex(&bad, &ctx), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(NULL), "unknown arch 'sm_70' (expected sm_80, sm_86, sm_89 or sm_90a)"), "%s", tile_last_error(NULL));
    bad.arch = "sm_90";
    cr_expect_eq(tile_context_create_ex(&bad, &ctx), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(NULL), "unknown arch 'sm_90'; did you mean 'sm_90a'?"), "%s", tile_last_error(NULL));
    bad.arch = "sm80"; /* the number names the target: without the '_' too */
    cr_expect_eq(tile_context_create_ex(&bad, &ctx), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(NULL), "unknown arch 'sm80'; did you mean 'sm_80'?"), "%s", tile_last_error(NULL));

    /* a module's arch that the device cannot load is refused before it is compiled; the plain emulator
     * loads every target's code */
    const char *src = "kernel k(x: *i32) { store(x, 7); }";
    tile_compile_options o = {.size = sizeof o, .arch = "sm_90a"};
    tile_module *m = NULL;
    ctx = open_emu_as("emu:sm_80");
    cr_expect_eq(tile_module_load_source_ex(ctx, NULL, src, &o, &m), TILE_ERROR_INVALID_VALUE);
    /* the message names the function called and the module (it said "loading a module") */
    cr_expect_str_eq(tile_last_error(ctx), "tile_module_load_source_ex: <source>: opt->arch: emu:sm_80 cannot load code for sm_90a (a newer GPU's)");
    cr_expect_eq(tile_module_load_source_ex(ctx, "mine.tile", src, &o, &m), TILE_ERROR_INVALID_VALUE);
    cr_expect_str_eq(tile_last_error(ctx), "tile_module_load_source_ex: mine.tile: opt->arch: emu:sm_80 cannot load code for sm_90a (a newer GPU's)");
    cr_expect_eq(tile_module_load_file_ex(ctx, "no/such.tile", &o, &m), TILE_ERROR_INVALID_VALUE);
    cr_expect_str_eq(tile_last_error(ctx), "tile_module_load_file_ex: no/such.tile: opt->arch: emu:sm_80 cannot load code for sm_90a (a newer GPU's)");
    cr_expect_eq(tile_module_load_file_ex(ctx, NULL, &o, &m), TILE_ERROR_INVALID_VALUE);
    cr_expect_str_eq(tile_last_error(ctx), "tile_module_load_file_ex: path is NULL");
    cr_expect_eq(tile_module_load_file(ctx, NULL, NULL, &m), TILE_ERROR_INVALID_VALUE);
    cr_expect_str_eq(tile_last_error(ctx), "tile_module_load_file: path is NULL");
    cr_expect_eq(tile_context_get_properties_ex(ctx, NULL, 64), TILE_ERROR_INVALID_VALUE);
    cr_expect_str_eq(tile_last_error(ctx), "tile_context_get_properties_ex: out is NULL");
    cr_expect_eq((tile_context_get_properties)(ctx, NULL), TILE_ERROR_INVALID_VALUE); /* the exported function */
    cr_expect_str_eq(tile_last_error(ctx), "tile_context_get_properties: out is NULL");
    cr_expect_eq(tile_context_get_properties(ctx, NULL), TILE_ERROR_INVALID_VALUE); /* tile.h's macro: the _ex */
    cr_expect_str_eq(tile_last_error(ctx), "tile_context_get_properties_ex: out is NULL");
    tile_context_stats st;
    cr_assert_eq(tile_context_get_stats(ctx, &st), TILE_OK);
    cr_expect_eq(st.compiles + st.disk_hits, 0, "compiled code it could not load");
    o.arch = "sm_80";
    cr_expect_eq(tile_module_load_source_ex(ctx, NULL, src, &o, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_module_unload(m);
    close_emu(ctx);
    ctx = open_emu();
    o.arch = "sm_90a";
    cr_expect_eq(tile_module_load_source_ex(ctx, NULL, src, &o, &m), TILE_OK, "%s", tile_last_error(ctx));
    /* the memory level keys on the module's arch, not the context's: a load asking another arch got the module an
     * earlier load had made for the context's (and an arch no compiler knows got it too, TILE_OK) */
    tile_module *m80, *m86, *again;
    o.arch = NULL;
    cr_assert_eq(tile_module_load_source_ex(ctx, NULL, src, &o, &m80), TILE_OK, "%s", tile_last_error(ctx));
    cr_expect_neq(m80, m, "the sm_80 load got the sm_90a module");
    o.arch = "sm_86";
    cr_assert_eq(tile_module_load_source_ex(ctx, NULL, src, &o, &m86), TILE_OK, "%s", tile_last_error(ctx));
    cr_expect_neq(m86, m80, "the sm_86 load got the sm_80 module");
    o.arch = "sm_8x";
    cr_expect_eq(tile_module_load_source_ex(ctx, NULL, src, &o, &again), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "unknown arch 'sm_8x'"), "%s", tile_last_error(ctx));
    o.arch = "sm_80";
    cr_expect_eq(tile_module_load_source_ex(ctx, NULL, src, &o, &again), TILE_OK, "%s", tile_last_error(ctx));
    cr_expect_eq(again, m80, "an arch named is the context's own: the same module");
    tile_module_unload(again), tile_module_unload(m86), tile_module_unload(m80);
    tile_module_unload(m);
    close_emu(ctx);
    /* "" is no arch, as NULL: the context's (emu:sm_90a's), not tile_target_default() */
    ctx = open_emu_as("emu:sm_90a");
    o.arch = "";
    cr_assert_eq(tile_module_load_source_ex(ctx, NULL, src, &o, &m), TILE_OK, "%s", tile_last_error(ctx));
    o.arch = "sm_90a";
    cr_expect_eq(tile_module_load_source_ex(ctx, NULL, src, &o, &again), TILE_OK, "%s", tile_last_error(ctx));
    cr_expect_eq(again, m, "arch \"\" compiled for another target than the context's sm_90a");
    tile_module_unload(again), tile_module_unload(m);
    close_emu(ctx);
}

/* A define whose value is wrong for its name is the caller's mistake, as an unknown name is:
 * TILE_ERROR_INVALID_VALUE with the diagnostic at "<-D NAME>" (it was TILE_ERROR_COMPILE). */
/* An empty source name is the default name, as NULL is (line info refused it: "internal error: generated LLVM
 * IR is invalid: invalid filename", probe Z F9). */
Test(runtime, empty_source_name) {
    tile_compile_options o = {.size = sizeof o};
    tile_compiled c;
    cr_assert_eq(tile_compile_source("", "kernel k(x: *i32) { store(x, num_sms()); }", &o, &c), TILE_OK, "%s", c.diagnostics);
    cr_expect(strstr(c.ptx, "<source>"), "%s", c.ptx);
    tile_compiled_free(&c);
    cr_assert_eq(tile_compile_source("", "kernel k(x: *i32) { store(x, zz); }", &o, &c), TILE_ERROR_COMPILE);
    cr_expect(strstr(c.diagnostics, "<source>:1:30: error: unknown name 'zz'"), "%s", c.diagnostics);
    tile_compiled_free(&c);
    /* a negative num_sms was taken as the default (probe Z F10) */
    o.num_sms = -3;
    cr_assert_eq(tile_compile_source("t.tile", "kernel k(x: *i32) { store(x, num_sms()); }", &o, &c), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(c.diagnostics, "num_sms is -3"), "%s", c.diagnostics);
    tile_compiled_free(&c);
}

Test(runtime, bad_define_values) {
    const char *src = "kernel k(x: *f32, const B: i32 = 16) { store(x + arange(0, B), 1.0); }";
    const char *const bad[][2] = {{"B=banana", "<-D B>:1:1: error: 'B' is i32, but its value is the string \"banana\""},
                                  {"B=2.5", "'B' is i32, but its value 2.5 is not an integer"},
                                  {"NOPE=1", "-D NOPE: no kernel of"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *defs[] = {bad[i][0], NULL};
        tile_compile_options o = {.size = sizeof o, .defines = defs};
        tile_compiled c;
        cr_assert_eq(tile_compile_source("t.tile", src, &o, &c), TILE_ERROR_INVALID_VALUE, "%s", bad[i][0]);
        cr_assert(c.diagnostics && strstr(c.diagnostics, bad[i][1]), "%s: %s", bad[i][0], c.diagnostics ? c.diagnostics : "(none)");
        tile_compiled_free(&c);
    }
    const char *good[] = {"B=32", NULL};
    tile_compile_options o = {.size = sizeof o, .defines = good};
    tile_compiled c;
    cr_assert_eq(tile_compile_source("t.tile", src, &o, &c), TILE_OK, "%s", c.diagnostics ? c.diagnostics : "");
    tile_compiled_free(&c);
}

/* NULL source or path: TILE_ERROR_INVALID_VALUE with a message in the diagnostics (there is no context to ask). */
Test(runtime, null_source_and_path_say_so) {
    tile_compiled c;
    cr_assert_eq(tile_compile_source("t.tile", NULL, NULL, &c), TILE_ERROR_INVALID_VALUE);
    cr_assert(c.diagnostics && strstr(c.diagnostics, "the source is NULL"), "%s", c.diagnostics ? c.diagnostics : "(none)");
    tile_compiled_free(&c);
    cr_assert_eq(tile_cache_compile_source(NULL, "t.tile", NULL, NULL, &c, NULL), TILE_ERROR_INVALID_VALUE);
    cr_assert(c.diagnostics && strstr(c.diagnostics, "the source is NULL"), "%s", c.diagnostics ? c.diagnostics : "(none)");
    tile_compiled_free(&c);
    cr_assert_eq(tile_compile_file(NULL, NULL, &c), TILE_ERROR_INVALID_VALUE);
    cr_assert(c.diagnostics && strstr(c.diagnostics, "the path is NULL"), "%s", c.diagnostics ? c.diagnostics : "(none)");
    tile_compiled_free(&c);
    cr_assert_eq(tile_cache_compile_file(NULL, NULL, NULL, &c, NULL), TILE_ERROR_INVALID_VALUE);
    cr_assert(c.diagnostics && strstr(c.diagnostics, "the path is NULL"), "%s", c.diagnostics ? c.diagnostics : "(none)");
    tile_compiled_free(&c);    /* a file that is not there: TILE_ERROR_IO naming it and why, from both entry points (from_cache cleared) */
    cr_assert_eq(tile_compile_file("/nonexistent/k.tile", NULL, &c), TILE_ERROR_IO);
    cr_assert(c.diagnostics && strstr(c.diagnostics, "cannot read '/nonexistent/k.tile': "), "%s", c.diagnostics ? c.diagnostics : "(none)");
    cr_assert_null(c.ptx);
    tile_compiled_free(&c);
    int hit = 7;
    cr_assert_eq(tile_cache_compile_file(NULL, "/nonexistent/k.tile", NULL, &c, &hit), TILE_ERROR_IO);
    cr_assert(c.diagnostics && strstr(c.diagnostics, "cannot read '/nonexistent/k.tile': "), "%s", c.diagnostics ? c.diagnostics : "(none)");
    cr_assert_eq(hit, 0);
    tile_compiled_free(&c);
}

/* A launch the emulator refuses before running names the kernel once ("launch of 'k': clusters ...", not
 * "launch of 'k': emu: launch of 'k': ..."). */
Test(runtime, launch_refusal_names_the_kernel_once) {
    tile_context *ctx;
    cr_assert_eq(tile_context_create("emu:sm_80", &ctx), TILE_OK, "%s", tile_last_error(NULL));
    tile_module *m;
    cr_assert_eq(tile_module_load_source(ctx, "kernel k(x: *f32) { store(x + arange(0, 32), 1.0); }", NULL, &m), TILE_OK, "%s",
                 tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(m, "k", &k), TILE_OK);
    tile_devptr x;
    cr_assert_eq(tile_malloc(ctx, 256, &x), TILE_OK);
    void *args[] = {&x};
    tile_launch_options o = {.size = sizeof o, .cluster = {2, 1, 1}};
    cr_assert_eq(tile_launch_ex(k, (tile_dim3){2, 1, 1}, args, NULL, &o), TILE_ERROR_INVALID_VALUE);
    const char *msg = tile_last_error(ctx);
    cr_assert(!strncmp(msg, "launch of 'k': clusters of 2 CTAs need sm_90 or later", 53) && !strstr(msg + 1, "launch of 'k'"), "%s", msg);
    tile_module_unload(m);
    tile_context_destroy(ctx);
}

/* The library is reentrant (docs/runtime.md): four threads compile, load and launch at once, two sharing
 * one context (the same source and defines, so both may compile the same key together, and a kernel of
 * their own), two with a context each over one disk cache folder (the same key written and read by both).
 * Each checks y = x * a + b against a float64 reference on fresh random x, y poisoned first, n not a
 * multiple of the block. */
typedef struct ThreadJob {
    tile_context *ctx;
    int id;
    char failure[256]; /* empty: every round was right */
} ThreadJob;

static void *thread_job(void *p) {
    ThreadJob *j = p;
    static const char *src = "@num_warps(1) kernel axpb(x: *f32, y: *f32, n: i32, a: f32, const B: i32 = 64, const K: i32 = 0) {\n"
                             "    let o = program_id(0) * B + arange(0, B);\n"
                             "    store(y + o, load(x + o, o < n, 0.0) * a + (K + 1), o < n);\n"
                             "}\n";
    unsigned seed = 0x9e3779b9u * (unsigned)(j->id + 1);
    for (int round = 0; round < 3 && !j->failure[0]; round++) {
        /* rounds 0 and 2: the key every thread shares; round 1: the thread's own */
        char b[16], kd[16];
        snprintf(b, sizeof b, "B=%d", round == 1 ? 32 << (j->id % 3) : 64);
        snprintf(kd, sizeof kd, "K=%d", round == 1 ? j->id + 1 : 0);
        const char *defs[] = {b, kd, NULL};
        int block = round == 1 ? 32 << (j->id % 3) : 64, kk = round == 1 ? j->id + 1 : 0;
        int n = 1000 + 37 * j->id + round;
        float a = 0.5f + (float)j->id, *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
        for (int i = 0; i < n; i++) x[i] = (float)((seed = seed * 1664525u + 1013904223u) >> 8) / (float)(1 << 24) - 0.5f;
        tile_module *m = NULL;
        tile_kernel *k;
        tile_devptr dx = 0, dy = 0;
        tile_status st = tile_module_load_source(j->ctx, src, defs, &m);
        if (st == TILE_OK) st = tile_module_get_kernel(m, "axpb", &k);
        if (st == TILE_OK) st = tile_malloc(j->ctx, n * sizeof *x, &dx);
        if (st == TILE_OK) st = tile_malloc(j->ctx, n * sizeof *y, &dy);
        if (st == TILE_OK) st = tile_memcpy_htod(j->ctx, dx, x, n * sizeof *x);
        if (st == TILE_OK) st = tile_memset(j->ctx, dy, 0xff, n * sizeof *y); /* NaN */
        void *args[] = {&dx, &dy, &n, &a};
        if (st == TILE_OK) st = tile_launch(k, (tile_dim3){(unsigned)((n + block - 1) / block), 1, 1}, args, NULL);
        if (st == TILE_OK) st = tile_memcpy_dtoh(j->ctx, y, dy, n * sizeof *y);
        if (st != TILE_OK)
            snprintf(j->failure, sizeof j->failure, "thread %d round %d: %s: %s", j->id, round, tile_status_string(st),
                     tile_last_error(j->ctx));
        for (int i = 0; i < n && !j->failure[0]; i++) {
            double want = (double)x[i] * a + (kk + 1);
            if (!(fabs(y[i] - want) <= 1e-5 * fabs(want) + 1e-6))
                snprintf(j->failure, sizeof j->failure, "thread %d round %d: y[%d] = %g, want %g", j->id, round, i, y[i], want);
        }
        tile_free(j->ctx, dx), tile_free(j->ctx, dy);
        tile_module_unload(m);
        free(x), free(y);
    }
    return NULL;
}

Test(runtime, threads_compile_and_launch, .timeout = 240) {
    tile_context *shared = open_emu(); /* its cache_dir is the folder the other two contexts share */
    tile_context *own[2];
    for (int i = 0; i < 2; i++) {
        tile_context_options o = {.device = "emu", .cache_dir = cache_dir, .emu_host_threads = 1};
        cr_assert_eq(tile_context_create_ex(&o, &own[i]), TILE_OK, "%s", tile_last_error(NULL));
    }
    ThreadJob jobs[4] = {{.ctx = shared, .id = 0}, {.ctx = shared, .id = 1}, {.ctx = own[0], .id = 2}, {.ctx = own[1], .id = 3}};
    pthread_t t[4];
    for (int i = 0; i < 4; i++) cr_assert_eq(pthread_create(&t[i], NULL, thread_job, &jobs[i]), 0);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < 4; i++) cr_expect_str_empty(jobs[i].failure, "%s", jobs[i].failure);
    tile_context_stats s;
    cr_assert_eq(tile_context_get_stats(shared, &s), TILE_OK);
    cr_expect_eq(s.launches, 6, "the shared context ran %llu launches", (unsigned long long)s.launches);
    tile_context_destroy(own[0]);
    tile_context_destroy(own[1]);
    close_emu(shared);
}

/* The calls that take no context say why they refuse, in tile_last_error(NULL); a dead or NULL context given
 * to a load says so too. */
#define ASSERT_NOCTX(call, status, needle)                                                                                   \
    do {                                                                                                                     \
        tile_status st_ = (call);                                                                                            \
        cr_expect_eq(st_, status, "%s: got %s (%s)", #call, tile_status_string(st_), tile_last_error(NULL));                 \
        cr_expect(strstr(tile_last_error(NULL), needle), "%s: message '%s' lacks '%s'", #call, tile_last_error(NULL), needle); \
    } while (0)

static void list_nothing(void *user, const tile_cache_entry_info *e) { (void)user, (void)e; }

Test(runtime, context_free_calls_say_why) {
    char dir[64] = "/tmp/tile-test-noctx-XXXXXX", file[96], path[96];
    cr_assert(mkdtemp(dir));
    snprintf(file, sizeof file, "%s/a-file", dir);
    snprintf(path, sizeof path, "%s/k.tile", dir);
    FILE *f = fopen(file, "w");
    fclose(f);
    f = fopen(path, "w");
    fputs("kernel k(x: *f32) { store(x + arange(0, 32), 1.0); }\n", f);
    fclose(f);
    tile_module *m;
    ASSERT_NOCTX(tile_module_load_source(NULL, "kernel k() {}", NULL, &m), TILE_ERROR_INVALID_VALUE, "tile_module_load_source: the tile_context is NULL");
    ASSERT_NOCTX(tile_module_load_file(NULL, path, NULL, &m), TILE_ERROR_INVALID_VALUE, "tile_module_load_file: the tile_context is NULL");
    tile_context *ctx;
    cr_assert_eq(tile_context_create("emu", &ctx), TILE_OK);
    tile_context_destroy(ctx);
    ASSERT_NOCTX(tile_module_load_source(ctx, "kernel k() {}", NULL, &m), TILE_ERROR_INVALID_VALUE, "tile_module_load_source: not a live tile_context");
    /* each entry point names itself, not the one it shares a body with (the _ex calls said the plain names) */
    ASSERT_NOCTX(tile_module_load_file_ex(NULL, path, NULL, &m), TILE_ERROR_INVALID_VALUE, "tile_module_load_file_ex: the tile_context is NULL");
    ASSERT_NOCTX(tile_module_load_source_ex(ctx, "n", "kernel k() {}", NULL, &m), TILE_ERROR_INVALID_VALUE,
                 "tile_module_load_source_ex: not a live tile_context");
    ASSERT_NOCTX(tile_compile_source("a", "kernel k() {}", NULL, NULL), TILE_ERROR_INVALID_VALUE, "tile_compile_source: out is NULL");
    ASSERT_NOCTX(tile_compile_file(path, NULL, NULL), TILE_ERROR_INVALID_VALUE, "tile_compile_file: out is NULL");
    ASSERT_NOCTX(tile_cache_compile_source(dir, "a", "kernel k() {}", NULL, NULL, NULL), TILE_ERROR_INVALID_VALUE, "out is NULL");
    ASSERT_NOCTX(tile_cache_compile_file(dir, path, NULL, NULL, NULL), TILE_ERROR_INVALID_VALUE, "out is NULL");
    tile_cache_stats st;
    ASSERT_NOCTX(tile_cache_get_stats(dir, NULL), TILE_ERROR_INVALID_VALUE, "tile_cache_get_stats: out is NULL");
    ASSERT_NOCTX(tile_cache_list_ex(dir, NULL, NULL), TILE_ERROR_INVALID_VALUE, "tile_cache_list_ex: fn is NULL");
    ASSERT_NOCTX(tile_cache_list(dir, NULL, NULL), TILE_ERROR_INVALID_VALUE, "tile_cache_list: fn is NULL");
    /* an _ex and its plain call share a body; each message names the one called */
    ASSERT_NOCTX(tile_context_create("emu", NULL), TILE_ERROR_INVALID_VALUE, "tile_context_create: out is NULL");
    ASSERT_NOCTX(tile_context_create_ex(NULL, NULL), TILE_ERROR_INVALID_VALUE, "tile_context_create_ex: out is NULL");
    tile_context_options bad_arch = {.size = sizeof bad_arch, .device = "emu", .arch = "sm_70"};
    ASSERT_NOCTX(tile_context_create_ex(&bad_arch, &ctx), TILE_ERROR_INVALID_VALUE, "tile_context_create_ex: unknown arch 'sm_70'");
    tile_device_properties props;
    /* the exported function (what a program built before the header's macro calls); the macro is the _ex */
    ASSERT_NOCTX((tile_context_get_properties)(NULL, &props), TILE_ERROR_INVALID_VALUE, "tile_context_get_properties: the tile_context is NULL");
    ASSERT_NOCTX(tile_context_get_properties(NULL, &props), TILE_ERROR_INVALID_VALUE, "tile_context_get_properties_ex: the tile_context is NULL");
    ASSERT_NOCTX(tile_context_get_properties_ex(NULL, &props, sizeof props), TILE_ERROR_INVALID_VALUE,
                 "tile_context_get_properties_ex: the tile_context is NULL");
    ASSERT_NOCTX(tile_launch_raw(NULL, (tile_dim3){1, 1, 1}, (tile_dim3){32, 1, 1}, 0, NULL, NULL), TILE_ERROR_INVALID_VALUE,
                 "tile_launch_raw: the tile_kernel is NULL");
    char want_list[160];
    snprintf(want_list, sizeof want_list, "tile_cache_list_ex: %s is not a cache folder this user can use", file);
    ASSERT_NOCTX(tile_cache_list_ex(file, list_nothing, NULL), TILE_ERROR_IO, want_list);
    /* a folder that is a file: refused, and the message names it (the warning on stderr says it once per process) */
    char want[160];
    snprintf(want, sizeof want, "tile_cache_get_stats: %s is not a cache folder this user can use", file);
    ASSERT_NOCTX(tile_cache_get_stats(file, &st), TILE_ERROR_IO, want);
    snprintf(want, sizeof want, "tile_cache_clear: %s is not a cache folder this user can use", file);
    ASSERT_NOCTX(tile_cache_clear(file, 1), TILE_ERROR_IO, want);
    snprintf(want, sizeof want, "tile_tune_record: cannot use the cache folder %s", file);
    ASSERT_NOCTX(tile_tune_record(file, "id", "dev", "1", "BM=64", 1.0), TILE_ERROR_IO, want);
    ASSERT_NOCTX(tile_tune_record(dir, NULL, "dev", "1", "BM=64", 1.0), TILE_ERROR_INVALID_VALUE, "kernel_id is NULL");
    ASSERT_NOCTX(tile_tune_record(dir, "id", "", "1", "BM=64", 1.0), TILE_ERROR_INVALID_VALUE, "device is empty");
    ASSERT_NOCTX(tile_tune_record(dir, "id", "dev", "1\n2", "BM=64", 1.0), TILE_ERROR_INVALID_VALUE, "key_bucket is not one line");
    ASSERT_NOCTX(tile_tune_record(dir, "id", "dev", "1", "BM=64", -1.0), TILE_ERROR_INVALID_VALUE, "seconds = -1 is not a time");
    ASSERT_NOCTX(tile_tune_record(dir, "id", "dev", "1", "banana", 1.0), TILE_ERROR_INVALID_VALUE, "config 'banana'");
    char cfg[64], id[33];
    ASSERT_NOCTX(tile_tune_lookup(dir, "id", NULL, "1", cfg, sizeof cfg), TILE_ERROR_INVALID_VALUE, "tile_tune_lookup: device is NULL");
    ASSERT_NOCTX(tile_tune_lookup_file(dir, path, "k", "dev", "1", cfg, 0), TILE_ERROR_INVALID_VALUE, "config_size is 0");
    ASSERT_NOCTX(tile_kernel_id_file(path, NULL, id), TILE_ERROR_INVALID_VALUE, "tile_kernel_id_file: kernel is NULL");
    ASSERT_NOCTX(tile_kernel_id_file(file, "k", id), TILE_ERROR_NOT_FOUND, "declares no kernel 'k'");
    ASSERT_NOCTX(tile_kernel_id_file("/nonexistent/k.tile", "k", id), TILE_ERROR_IO, "cannot read '/nonexistent/k.tile'");
    cr_expect_str_empty(id);
    tile_tune_space sp;
    char *err = NULL;
    ASSERT_NOCTX(tile_tune_space_source("a", NULL, "k", &sp, &err), TILE_ERROR_INVALID_VALUE, "tile_tune_space_source: source is NULL");
    cr_expect(err && !strcmp(err, "tile_tune_space_source: source is NULL"), "%s", err ? err : "(null)");
    free(err);
    ASSERT_NOCTX(tile_tune_space_file(path, "k", NULL, NULL), TILE_ERROR_INVALID_VALUE, "tile_tune_space_file: out is NULL");
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

/* tile_tune_space_file (and so `tile tune FILE`) reads its file as the compiler reads sources: a FIFO
 * without a writer or a device is refused at once (it blocked forever on the FIFO and read /dev/zero
 * without end). */
Test(runtime, tune_space_file_reads_only_regular_files, .timeout = 20) {
    tile_tune_space sp;
    char *err = NULL;
    cr_assert_eq(tile_tune_space_file("/dev/zero", "k", &sp, &err), TILE_ERROR_IO);
    cr_assert(err && strstr(err, "cannot read '/dev/zero': not a regular file"), "%s", err ? err : "");
    free(err);
    /* and in tile_last_error(NULL), named, as the calls without a context say why (it was another call's message) */
    cr_expect_str_eq(tile_last_error(NULL), "tile_tune_space_file: cannot read '/dev/zero': not a regular file");
    char dir[] = "/tmp/tile-test-tunefifo-XXXXXX";
    cr_assert(mkdtemp(dir));
    char fifo[64];
    snprintf(fifo, sizeof fifo, "%s/f.tile", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    err = NULL;
    cr_assert_eq(tile_tune_space_file(fifo, "k", &sp, &err), TILE_ERROR_IO);
    cr_assert(err && strstr(err, "not a regular file"), "%s", err ? err : "");
    free(err);
    unlink(fifo);
    rmdir(dir);
}
