/* test_cuda_emu.c - the library's "cuda" device (runtime/device_cuda.c, runtime/tensor_maps.c) running real kernels
 * over a stand-in CUDA driver backed by the PTX emulator (tests/fake_cuda_emu.c, built as libcuda.so.1 and linked
 * into this program only, so the runtime's dlopen finds it on a machine without a GPU).  The stand-in refuses what
 * the CUDA Driver API documents it refuses, queues launches and registered-memory copies until a synchronization,
 * and counts its refusals and what is alive; each test asserts no refusal and no leak besides its numbers:
 *   - tile_gemm f16 -> f32 and bf16 -> bf16 on compute capability 8.0 (mma.sync), f16 and f8e4m3 with
 *     per-channel scales on 9.0 (wgmma, tensor maps encoded by cuTensorMapEncodeTiled);
 *   - tile_attention_fwd and tile_attention_decode_paged on 8.0;
 *   - a user kernel through tile_launch on 8.0, and a tensor-descriptor matmul on 9.0 (TMA tensor maps built from
 *     its arguments by rt_tmaps_encode, passed as __grid_constant__ parameters);
 *   - streams, events and async copies with registered host memory, in an order only the synchronization makes
 *     right;
 *   - the stand-in's own strictness: cuTensorMapEncodeTiled's documented refusals, a launch past the dynamic
 *     shared memory the function was given, a copy past an allocation.
 * Results against float64 references, outputs poisoned first, sizes not multiples of the tiles.
 * What it does not prove: anything about a GPU's timing, concurrency or hardware (docs/testing.md). */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "include/tile/tile.h"
#include "emu/emu.h"
#include "support/hostfloat.h"
#include "tests/test_rng.h"

void fake_cuda_emu_set_cc(int cc);
void fake_cuda_emu_set_quiet(int quiet);
void fake_cuda_emu_set_driver_version(int v);
void fake_cuda_emu_register_cubin(const void *cubin, size_t size, const char *ptx);
int fake_cuda_emu_refusals(void);
const char *fake_cuda_emu_last_refusal(void);
int fake_cuda_emu_launches(void);
int fake_cuda_emu_tensor_maps(void);
int fake_cuda_emu_capture_breaking(void);
int cuMemcpyDtoH_v2(void *dst, unsigned long long src, size_t bytes);
int cuTensorMapEncodeIm2col(void *map, int dtype, unsigned rank, void *addr, const unsigned long long *dims, const unsigned long long *strides,
                            const int *lower, const int *upper, unsigned channels, unsigned pixels, const unsigned *elem_strides,
                            int interleave, int swizzle, int l2, int fill);
int cuInit(unsigned flags);
int cuDevicePrimaryCtxRetain(void **ctx, int dev);
int cuDevicePrimaryCtxRelease_v2(int dev);
int cuCtxSetCurrent(void *ctx);
int cuMemAlloc_v2(unsigned long long *p, size_t bytes);
int cuMemFree_v2(unsigned long long p);
int cuStreamCreate(void **s, unsigned flags);
int cuStreamDestroy_v2(void *s);
void fake_cuda_emu_live(int out[6]);
int cuMemHostAlloc(void **p, size_t bytes, unsigned flags);
int cuMemFreeHost(void *p);
int cuMemHostGetDevicePointer_v2(unsigned long long *d, void *p, unsigned flags);
int cuTensorMapEncodeTiled(void *map, int dtype, unsigned rank, void *addr, const unsigned long long *dims,
                           const unsigned long long *strides, const unsigned *box, const unsigned *elem_strides, int interleave,
                           int swizzle, int l2, int fill);

/* A context on the stand-in at compute capability cc (the stand-in's device is the only one there). */
static tile_context *open_cuda(int cc) {
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    cr_assert(h && dlsym(h, "fake_cuda_emu_set_cc"), "libcuda.so.1 in this process is not tests/fake_cuda_emu.c");
    fake_cuda_emu_set_cc(cc);
    tile_context *ctx;
    cr_assert_eq(tile_context_create("cuda", &ctx), TILE_OK, "%s", tile_last_error(NULL));
    tile_device_properties p;
    memset(&p, 0x5a, sizeof p);
    cr_assert_eq(tile_context_get_properties(ctx, &p), TILE_OK);
    cr_assert(!p.is_emulator, "the context is on the emulator, not on the cuda device");
    /* the driver's CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT (the stand-in's 4), through tile.h's macro */
    cr_expect_eq(p.multiprocessor_count, 4, "multiprocessor_count %d", p.multiprocessor_count);
    return ctx;
}

/* The context gone: nothing the test made is alive in the driver, and it refused nothing. */
static void close_cuda(tile_context *ctx) {
    tile_context_destroy(ctx);
    int live[6];
    fake_cuda_emu_live(live);
    cr_expect(!live[0] && !live[1] && !live[2] && !live[3] && !live[4] && !live[5],
              "left alive in the driver: %d allocations, %d modules, %d streams, %d events, %d registrations, %d context references",
              live[0], live[1], live[2], live[3], live[4], live[5]);
    cr_expect_eq(fake_cuda_emu_refusals(), 0, "the driver refused: %s", fake_cuda_emu_last_refusal());
}

static tile_devptr dev_alloc(tile_context *ctx, size_t bytes) {
    tile_devptr d;
    cr_assert_eq(tile_malloc(ctx, bytes, &d), TILE_OK, "%s", tile_last_error(ctx));
    return d;
}
static tile_devptr upload(tile_context *ctx, const void *h, size_t bytes) {
    tile_devptr d = dev_alloc(ctx, bytes);
    cr_assert_eq(tile_memcpy_htod(ctx, d, h, bytes), TILE_OK, "%s", tile_last_error(ctx));
    return d;
}

enum { F16, BF16, E4M3 };
static uint16_t to16(int t, double v) { return t == F16 ? f32_to_f16((float)v) : f32_to_bf16((float)v); }
static double from16(int t, uint16_t h) { return t == F16 ? f16_to_d(h) : bf16_to_d(h); }

/* C = A B (+ scales) through tile_gemm at m x n x k with row strides past the row ends, C poisoned; out f32 or the input type;
 * with config (tile_gemm_with_config's, or NULL) on stream st, the result copied back on st. */
static void gemm_case_on(tile_context *ctx, int t, int m, int n, int k, bool out_f32, bool scaled, const char *const *config, tile_stream st) {
    int lda = k + 8, ldb = n + 8;
    size_t es = t == E4M3 ? 1 : 2, oes = out_f32 ? 4 : 2;
    uint8_t *ha = malloc((size_t)m * lda * es), *hb = malloc((size_t)k * ldb * es), *hc = malloc((size_t)m * n * oes);
    double *va = malloc(sizeof(double) * m * lda), *vb = malloc(sizeof(double) * k * ldb);
    for (int i = 0; i < m * lda; i++) {
        if (t == E4M3) ha[i] = (uint8_t)(irand(0x70) | irand(2) << 7), va[i] = f8e4m3_to_d(ha[i]);
        else ((uint16_t *)ha)[i] = to16(t, urand()), va[i] = from16(t, ((uint16_t *)ha)[i]);
    }
    for (int i = 0; i < k * ldb; i++) {
        if (t == E4M3) hb[i] = (uint8_t)(irand(0x70) | irand(2) << 7), vb[i] = f8e4m3_to_d(hb[i]);
        else ((uint16_t *)hb)[i] = to16(t, urand()), vb[i] = from16(t, ((uint16_t *)hb)[i]);
    }
    float *sa = malloc(4 * (size_t)m), *sb = malloc(4 * (size_t)n);
    for (int i = 0; i < m; i++) sa[i] = (float)(0.5 + (urand() + 1));
    for (int j = 0; j < n; j++) sb[j] = (float)(0.01 + (urand() + 1) * 0.05);
    tile_devptr da = upload(ctx, ha, (size_t)m * lda * es), db = upload(ctx, hb, (size_t)k * ldb * es), dc = dev_alloc(ctx, (size_t)m * n * oes);
    tile_devptr dsa = upload(ctx, sa, 4 * (size_t)m), dsb = upload(ctx, sb, 4 * (size_t)n);
    cr_assert_eq(tile_memset(ctx, dc, 0xff, (size_t)m * n * oes), TILE_OK); /* NaN */
    cr_assert_eq(tile_synchronize(ctx), TILE_OK); /* the uploads and the fill, before st (which may order with nothing) */
    tile_dtype in = t == F16 ? TILE_F16 : t == BF16 ? TILE_BF16 : TILE_F8E4M3;
    tile_gemm_args g = {.size = sizeof g, .m = m, .n = n, .k = k, .a = da, .lda = lda, .b = db, .ldb = ldb, .c = dc, .ldc = n,
                        .in_dtype = in, .out_dtype = out_f32 ? TILE_F32 : in, .alpha = 1, .beta = 0, .stream = st};
    if (scaled) g.a_scale = dsa, g.b_scale = dsb, g.scale_mode = TILE_SCALE_CHANNEL;
    int launches = fake_cuda_emu_launches();
    cr_assert_eq(tile_gemm_with_config(ctx, &g, config), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh_async(ctx, hc, dc, (size_t)m * n * oes, st), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_gt(fake_cuda_emu_launches(), launches, "nothing ran on the driver");
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double want = 0, mag = 0;
            for (int p = 0; p < k; p++) {
                double x = va[(size_t)i * lda + p] * vb[(size_t)p * ldb + j] * (scaled ? (double)sa[i] * sb[j] : 1);
                want += x, mag += fabs(x);
            }
            double got = out_f32 ? ((float *)hc)[(size_t)i * n + j] : from16(t, ((uint16_t *)hc)[(size_t)i * n + j]);
            double tol = 1e-5 * mag + (out_f32 ? 1e-6 : fabs(want) * (t == F16 ? 1e-3 : 8e-3)) + 1e-6;
            cr_assert(fabs(got - want) <= tol, "gemm %d (%d x %d x %d) C[%d][%d] = %.8g, want %.8g (seed %llu)", t, m, n, k, i, j, got,
                      want, (unsigned long long)seed);
        }
    tile_free(ctx, da), tile_free(ctx, db), tile_free(ctx, dc), tile_free(ctx, dsa), tile_free(ctx, dsb);
    free(ha), free(hb), free(hc), free(va), free(vb), free(sa), free(sb);
}
static void gemm_case(tile_context *ctx, int t, int m, int n, int k, bool out_f32, bool scaled) {
    gemm_case_on(ctx, t, m, n, k, out_f32, scaled, NULL, NULL);
}

Test(cuda_emu, gemm_cc80, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_cuda(80);
    gemm_case(ctx, F16, 37, 45, 70, true, false);
    gemm_case(ctx, BF16, 29, 70, 40, false, false);
    close_cuda(ctx);
}

Test(cuda_emu, gemm_cc90_tensor_maps, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_cuda(90);
    int maps = fake_cuda_emu_tensor_maps();
    gemm_case(ctx, F16, 70, 72, 48, true, false);
    cr_expect_gt(fake_cuda_emu_tensor_maps(), maps, "no tensor maps: the sm_90a path was not taken");
    gemm_case(ctx, E4M3, 33, 48, 64, true, true);
    gemm_case(ctx, BF16, 200, 264, 136, false, false); /* past one 128 x 128 tile both ways: the large configurations */
    close_cuda(ctx);
}

/* 8.6: 99 KiB of shared memory a block (163 on 8.0): the configurations chosen must fit it. */
Test(cuda_emu, gemm_cc86, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_cuda(86);
    gemm_case(ctx, F16, 130, 136, 200, true, false);
    gemm_case(ctx, BF16, 33, 260, 72, false, false);
    close_cuda(ctx);
}

/* 8.9 (Ada): f8 read natively by mma.sync, no tensor maps. */
Test(cuda_emu, gemm_cc89_f8, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_cuda(89);
    gemm_case(ctx, E4M3, 45, 40, 96, true, true);
    close_cuda(ctx);
}

/* A user kernel through tile_launch: y = a x + y over n elements, n not a multiple of the block. */
static const char axpy_src[] =
    "kernel axpy(x: *f32, y: *f32, a: f32, n: i32, const B: i32 = 128) {\n"
    "    let i = program_id(0) * B + arange(0, B);\n"
    "    store(y + i, a * load(x + i, i < n) + load(y + i, i < n), i < n);\n"
    "}\n";

Test(cuda_emu, user_kernel_cc80) {
    seed_rng();
    tile_context *ctx = open_cuda(80);
    char key[256];
    cr_assert_eq(tile_context_device_key(ctx, key, sizeof key), TILE_OK, "%s", tile_last_error(ctx));
    cr_expect_str_eq(key, "cuda/Emulated GPU sm_80/driver 12080/sm_80", "the tuning key from cuDeviceGetName and cuDriverGetVersion");
    enum { N = 300 };
    float hx[N], hy[N], out[N];
    for (int i = 0; i < N; i++) hx[i] = (float)urand(), hy[i] = (float)urand();
    tile_devptr dx = upload(ctx, hx, sizeof hx), dy = upload(ctx, hy, sizeof hy);
    tile_module *mod;
    cr_assert_eq(tile_module_load_source(ctx, axpy_src, NULL, &mod), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(mod, "axpy", &k), TILE_OK);
    float a = 1.5f;
    int32_t n = N;
    void *args[] = {&dx, &dy, &a, &n};
    cr_assert_eq(tile_launch(k, (tile_dim3){(N + 127) / 128, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, out, dy, sizeof out), TILE_OK, "%s", tile_last_error(ctx));
    for (int i = 0; i < N; i++) /* fused or not */
        cr_assert(fabs(out[i] - ((double)a * hx[i] + hy[i])) <= 1e-6, "y[%d] = %.9g, want %.9g", i, out[i], (double)a * hx[i] + hy[i]);
    tile_module_unload(mod);
    tile_free(ctx, dx), tile_free(ctx, dy);
    close_cuda(ctx);
}

/* A tensor-descriptor matmul compiled for sm_90a: its pipelined loads are tensor-map copies whose maps the
 * launcher encodes from the arguments (cuTensorMapEncodeTiled) and passes as __grid_constant__ parameters. */
static const char desc_src[] =
    "@num_stages(3)\n"
    "kernel dmm(a: *f16, b: *f16, c: *f32, m: i32, n: i32, k: i32, sa: i32, sb: i32,\n"
    "           const BM: i32 = 64, const BN: i32 = 64, const BK: i32 = 32) {\n"
    "    let pm = program_id(0) * BM;\n"
    "    let pn = program_id(1) * BN;\n"
    "    let da = make_tensor_descriptor(a, [m, k], [sa, 1], [BM, BK]);\n"
    "    let db = make_tensor_descriptor(b, [k, n], [sb, 1], [BK, BN]);\n"
    "    let acc = zeros([BM, BN], f32);\n"
    "    for k0 in range(0, k, BK) {\n"
    "        acc = dot(load_tensor_descriptor(da, [pm, k0]), load_tensor_descriptor(db, [k0, pn]), acc);\n"
    "    }\n"
    "    let rm = pm + arange(0, BM);\n"
    "    let rn = pn + arange(0, BN);\n"
    "    store(c + rm[:, None] * n + rn[None, :], acc, (rm[:, None] < m) && (rn[None, :] < n));\n"
    "}\n";

Test(cuda_emu, tensor_descriptor_cc90, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_cuda(90);
    int m = 100, n = 72, k = 80, sa = k + 16, sb = n + 24;
    uint16_t *ha = malloc(2 * (size_t)m * sa), *hb = malloc(2 * (size_t)k * sb);
    float *out = malloc(4 * (size_t)m * n);
    for (int i = 0; i < m * sa; i++) ha[i] = f32_to_f16((float)(irand(7) - 3));
    for (int i = 0; i < k * sb; i++) hb[i] = f32_to_f16((float)(irand(7) - 3));
    tile_devptr da = upload(ctx, ha, 2 * (size_t)m * sa), db = upload(ctx, hb, 2 * (size_t)k * sb), dc = dev_alloc(ctx, 4 * (size_t)m * n);
    tile_memset(ctx, dc, 0xff, 4 * (size_t)m * n);
    static const char *const specs[] = {"sa=16", "sb=16", "k=16", NULL};
    tile_compile_options o = {.size = sizeof o, .specialize = specs};
    tile_module *mod;
    cr_assert_eq(tile_module_load_source_ex(ctx, "dmm.tile", desc_src, &o, &mod), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *kern;
    cr_assert_eq(tile_module_get_kernel(mod, "dmm", &kern), TILE_OK);
    int maps = fake_cuda_emu_tensor_maps();
    int32_t am = m, an = n, ak = k, asa = sa, asb = sb;
    void *args[] = {&da, &db, &dc, &am, &an, &ak, &asa, &asb};
    cr_assert_eq(tile_launch(kern, (tile_dim3){(unsigned)(m + 63) / 64, (unsigned)(n + 63) / 64, 1}, args, NULL), TILE_OK, "%s",
                 tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, out, dc, 4 * (size_t)m * n), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_geq(fake_cuda_emu_tensor_maps(), maps + 2, "the launch encoded no tensor maps: the test proves nothing about them");
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double want = 0;
            for (int p = 0; p < k; p++) want += f16_to_d(ha[(size_t)i * sa + p]) * f16_to_d(hb[(size_t)p * sb + j]);
            cr_assert(out[(size_t)i * n + j] == want, "C[%d][%d] = %g, want %g", i, j, out[(size_t)i * n + j], want);
        }
    /* the same arguments again: the maps come from the kernel's last encodings, the driver is not asked */
    int encoded = fake_cuda_emu_tensor_maps();
    tile_memset(ctx, dc, 0xff, 4 * (size_t)m * n);
    cr_assert_eq(tile_launch(kern, (tile_dim3){(unsigned)(m + 63) / 64, (unsigned)(n + 63) / 64, 1}, args, NULL), TILE_OK, "%s",
                 tile_last_error(ctx));
    float c0 = NAN;
    cr_assert_eq(tile_memcpy_dtoh(ctx, &c0, dc, 4), TILE_OK, "%s", tile_last_error(ctx));
    cr_expect_eq(c0, out[0], "the relaunch gave C[0][0] = %g, want %g", c0, out[0]);
    cr_expect_eq(fake_cuda_emu_tensor_maps(), encoded, "the same arguments' maps were encoded again");
    tile_module_unload(mod);
    tile_free(ctx, da), tile_free(ctx, db), tile_free(ctx, dc);
    free(ha), free(hb), free(out);
    close_cuda(ctx);
}

/* Streams, events, async copies with registered host memory: upload on s1, run on s2 after an event of s1, copy
 * back on s2 into registered memory; only the synchronization makes the host see the result (the stand-in runs
 * queued work when it is waited for). */
Test(cuda_emu, streams_events_async_copies) {
    seed_rng();
    tile_context *ctx = open_cuda(80);
    enum { N = 200 };
    float *hx = aligned_alloc(4096, 4096), *hy = aligned_alloc(4096, 4096), *out = aligned_alloc(4096, 4096);
    for (int i = 0; i < N; i++) hx[i] = (float)urand(), hy[i] = (float)urand(), out[i] = NAN;
    tile_devptr rx, rout;
    cr_assert_eq(tile_register_memory(ctx, hx, 4096, &rx), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_register_memory(ctx, out, 4096, &rout), TILE_OK, "%s", tile_last_error(ctx));
    tile_devptr dx = dev_alloc(ctx, 4 * N), dy = dev_alloc(ctx, 4 * N);
    tile_stream s1, s2;
    tile_event ev, t0, t1;
    cr_assert_eq(tile_stream_create(ctx, &s1), TILE_OK);
    cr_assert_eq(tile_stream_create(ctx, &s2), TILE_OK);
    cr_assert_eq(tile_event_create(ctx, &ev), TILE_OK);
    cr_assert_eq(tile_event_create(ctx, &t0), TILE_OK);
    cr_assert_eq(tile_event_create(ctx, &t1), TILE_OK);
    cr_assert_eq(tile_memcpy_htod_async(ctx, dx, hx, 4 * N, s1), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_htod_async(ctx, dy, hy, 4 * N, s1), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_event_record(ctx, ev, s1), TILE_OK);
    cr_assert_eq(tile_stream_wait_event(ctx, s2, ev), TILE_OK);
    tile_module *mod;
    cr_assert_eq(tile_module_load_source(ctx, axpy_src, NULL, &mod), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(mod, "axpy", &k), TILE_OK);
    float a = -0.5f;
    int32_t n = N;
    void *args[] = {&dx, &dy, &a, &n};
    cr_assert_eq(tile_event_record(ctx, t0, s2), TILE_OK);
    cr_assert_eq(tile_launch(k, (tile_dim3){(N + 127) / 128, 1, 1}, args, s2), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh_async(ctx, out, dy, 4 * N, s2), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_event_record(ctx, t1, s2), TILE_OK);
    cr_assert(isnan(out[0]), "the copy into registered memory finished before anything waited for it");
    float ms = -1; /* waits for both events (the driver answers CUDA_ERROR_NOT_READY before) */
    cr_assert_eq(tile_event_elapsed_ms(ctx, t0, t1, &ms), TILE_OK, "%s", tile_last_error(ctx));
    cr_expect(ms >= 0, "elapsed %g ms", ms);
    cr_assert_eq(tile_event_synchronize(ctx, t1), TILE_OK, "%s", tile_last_error(ctx));
    for (int i = 0; i < N; i++) /* fused or not */
        cr_assert(fabs(out[i] - ((double)a * hx[i] + hy[i])) <= 1e-6, "y[%d] = %.9g, want %.9g", i, out[i], (double)a * hx[i] + hy[i]);
    /* the registered range as a kernel argument: the kernel writes the host's memory in place */
    float prev[N];
    memcpy(prev, out, sizeof prev);
    void *args2[] = {&rx, &rout, &a, &n};
    cr_assert_eq(tile_launch(k, (tile_dim3){(N + 127) / 128, 1, 1}, args2, s1), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_stream_synchronize(ctx, s1), TILE_OK, "%s", tile_last_error(ctx));
    for (int i = 0; i < N; i++) {
        double want = (double)a * hx[i] + prev[i];
        cr_assert(fabs(out[i] - want) <= 1e-6, "registered y[%d] = %.9g, want %.9g", i, out[i], want);
    }
    /* a fill of registered memory on a stream: the host sees it once the stream is waited for */
    float before = out[1];
    cr_assert_eq(tile_memset_async(ctx, rout, 0, 8, s2), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(out[1], before, "the fill finished before anything waited for it");
    cr_assert_eq(tile_stream_synchronize(ctx, s2), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert(out[0] == 0 && out[1] == 0 && out[2] != 0, "the fill: %g %g %g", out[0], out[1], out[2]);
    tile_module_unload(mod);
    tile_event_destroy(ctx, ev), tile_event_destroy(ctx, t0), tile_event_destroy(ctx, t1);
    tile_stream_destroy(ctx, s1), tile_stream_destroy(ctx, s2);
    tile_free(ctx, dx), tile_free(ctx, dy);
    tile_unregister_memory(ctx, rx), tile_unregister_memory(ctx, rout);
    close_cuda(ctx);
    free(hx), free(hy), free(out);
}

/* The stand-in refuses what the driver documents it refuses (each would pass silently on a lax stand-in, and the
 * tests above would prove less): tensor maps, and through the library a copy past an allocation. */
Test(cuda_emu, stand_in_is_strict) {
    tile_context *ctx = open_cuda(90);
    tile_devptr d = dev_alloc(ctx, 1 << 16);
    _Alignas(64) unsigned char map[128];
    void *g = (void *)(uintptr_t)d;
    unsigned long long dims[2] = {64, 64}, strides[1] = {128};
    unsigned box[2] = {64, 16}, es[2] = {1, 1};
    cr_assert_eq(cuTensorMapEncodeTiled(map, 6, 2, g, dims, strides, box, es, 0, 3, 0, 0), 0, "%s", fake_cuda_emu_last_refusal());
    int before = fake_cuda_emu_refusals();
    fake_cuda_emu_set_quiet(1);
    static const struct { int dtype, rank, off, swz, interleave, fill; unsigned long long stride; unsigned box0, box1, es0; } bad[] = {
        {13, 2, 0, 0, 0, 0, 128, 64, 16, 1},  /* no such data type */
        {6, 0, 0, 0, 0, 0, 128, 64, 16, 1},   /* rank 0 */
        {6, 6, 0, 0, 0, 0, 128, 64, 16, 1},   /* rank 6 */
        {6, 2, 8, 0, 0, 0, 128, 64, 16, 1},   /* global address 8 bytes off */
        {6, 2, 0, 0, 0, 0, 120, 64, 16, 1},   /* stride not a multiple of 16 */
        {6, 2, 0, 0, 0, 0, 1ull << 40, 64, 16, 1}, /* stride 2^40 */
        {6, 2, 0, 0, 0, 0, 128, 257, 16, 1},  /* box past 256 */
        {6, 2, 0, 0, 0, 0, 128, 4, 16, 1},    /* inner box 8 bytes */
        {6, 2, 0, 1, 0, 0, 128, 64, 16, 1},   /* 128-byte inner box, 32-byte swizzle */
        {6, 2, 0, 0, 0, 0, 128, 64, 16, 9},   /* element stride 9 */
        {6, 2, 0, 4, 0, 0, 128, 64, 16, 1},   /* swizzle 4 */
        {6, 2, 0, 0, 1, 0, 128, 64, 16, 1},   /* interleave at rank 2 */
        {0, 2, 0, 0, 0, 1, 128, 64, 16, 1},   /* NaN fill of integers */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        unsigned long long st[1] = {bad[i].stride};
        unsigned bx[2] = {bad[i].box0, bad[i].box1}, e[2] = {bad[i].es0, 1};
        int r = cuTensorMapEncodeTiled(map, bad[i].dtype, (unsigned)bad[i].rank, (char *)g + bad[i].off, dims, st, bx, e, bad[i].interleave,
                                       bad[i].swz, 0, bad[i].fill);
        cr_expect_eq(r, 1, "case %zu: CUresult %d, want CUDA_ERROR_INVALID_VALUE", i, r);
    }
    cr_expect_eq(cuTensorMapEncodeTiled(map + 32, 6, 2, g, dims, strides, box, es, 0, 0, 0, 0), 1, "a map 32 bytes off 64");
    /* im2col: rank 3..5, corners within the rank's range, 1..256 channels of 16-byte rows, 1..1024 pixels */
    unsigned long long idims[5] = {16, 8, 8, 8, 2}, istr[4] = {32, 256, 2048, 16384};
    int lo[3] = {-1, -1, -1}, up[3] = {1, 1, 1}, far[3] = {-16, -17, 0};
    unsigned ies[5] = {1, 1, 1, 1, 1};
    cr_assert_eq(cuTensorMapEncodeIm2col(map, 6, 5, g, idims, istr, lo, up, 16, 64, ies, 0, 0, 0, 0), 0, "%s", fake_cuda_emu_last_refusal());
    int ibefore = fake_cuda_emu_refusals();
    cr_expect_eq(cuTensorMapEncodeIm2col(map, 6, 2, g, idims, istr, lo, up, 16, 64, ies, 0, 0, 0, 0), 1, "im2col rank 2");
    cr_expect_eq(cuTensorMapEncodeIm2col(map, 6, 5, g, idims, istr, far, up, 16, 64, ies, 0, 0, 0, 0), 1, "a corner of -17 at rank 5");
    cr_expect_eq(cuTensorMapEncodeIm2col(map, 6, 5, g, idims, istr, lo, up, 0, 64, ies, 0, 0, 0, 0), 1, "no channels");
    cr_expect_eq(cuTensorMapEncodeIm2col(map, 6, 5, g, idims, istr, lo, up, 4, 64, ies, 0, 0, 0, 0), 1, "8-byte channel rows");
    cr_expect_eq(cuTensorMapEncodeIm2col(map, 6, 5, g, idims, istr, lo, up, 16, 1025, ies, 0, 0, 0, 0), 1, "1025 pixels");
    cr_expect_eq(fake_cuda_emu_refusals() - ibefore, 5);
    char buf[64];
    cr_expect_eq(cuMemcpyDtoH_v2(buf, d + (1 << 16) - 32, 64), 1, "a copy past the allocation's end");
    int after = fake_cuda_emu_refusals();
    cr_expect_eq(after - before, (int)(sizeof bad / sizeof *bad) + 7, "refusals counted: %d", after - before);
    tile_free(ctx, d);
    tile_context_destroy(ctx);
}

/* softmax(scale q.K^T) V in float64 for one query row over keys 0..nk-1 (key j's row at kv + j * kstride). */
static void attend(const double *q, const double *k, const double *v, int nk, size_t kstride, int d, double scale, double *o) {
    double mx = -INFINITY, l = 0;
    double *s = malloc(sizeof(double) * (nk ? nk : 1));
    for (int j = 0; j < nk; j++) {
        s[j] = 0;
        for (int c = 0; c < d; c++) s[j] += q[c] * k[j * kstride + c];
        s[j] *= scale;
        if (s[j] > mx) mx = s[j];
    }
    for (int c = 0; c < d; c++) o[c] = 0;
    for (int j = 0; j < nk; j++) {
        double p = exp(s[j] - mx);
        l += p;
        for (int c = 0; c < d; c++) o[c] += p * v[j * kstride + c];
    }
    for (int c = 0; c < d; c++) o[c] /= l;
    free(s);
}

static uint16_t *rand16(size_t n, double *val) {
    uint16_t *h = malloc(2 * n);
    for (size_t i = 0; i < n; i++) h[i] = f32_to_f16((float)urand()), val[i] = f16_to_d(h[i]);
    return h;
}

/* Causal GQA attention, seq_q < seq_k (bottom-right aligned), contiguous [batch, seq, heads, head_dim], o poisoned
 * (on 9.0: wgmma, Q, K and V read through tensor maps of permuted views). */
static void attention_case(int cc) {
    seed_rng();
    tile_context *ctx = open_cuda(cc);
    enum { B = 1, HQ = 2, HK = 1, D = 32, SQ = 19, SK = 37 };
    size_t nq = (size_t)B * SQ * HQ * D, nk = (size_t)B * SK * HK * D;
    double *vq = malloc(8 * nq), *vk = malloc(8 * nk), *vv = malloc(8 * nk), ref[D];
    uint16_t *hq = rand16(nq, vq), *hk = rand16(nk, vk), *hv = rand16(nk, vv), *ho = malloc(2 * nq);
    tile_devptr dq = upload(ctx, hq, 2 * nq), dk = upload(ctx, hk, 2 * nk), dv = upload(ctx, hv, 2 * nk), dout = dev_alloc(ctx, 2 * nq);
    tile_memset(ctx, dout, 0xff, 2 * nq);
    tile_attention_args a = {.size = sizeof a, .dtype = TILE_F16, .batch = B, .heads_q = HQ, .heads_kv = HK, .head_dim = D, .seq_q = SQ,
                             .seq_k = SK, .q = dq, .k = dk, .v = dv, .o = dout, .causal = 1, .window_left = -1, .window_right = -1};
    cr_assert_eq(tile_attention_fwd(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, ho, dout, 2 * nq), TILE_OK, "%s", tile_last_error(ctx));
    for (int i = 0; i < SQ; i++)
        for (int h = 0; h < HQ; h++) {
            int hk = h / (HQ / HK);
            attend(vq + ((size_t)i * HQ + h) * D, vk + (size_t)hk * D, vv + (size_t)hk * D, i + SK - SQ + 1, (size_t)HK * D, D,
                   1 / sqrt((double)D), ref);
            for (int c = 0; c < D; c++) {
                double got = f16_to_d(ho[((size_t)i * HQ + h) * D + c]);
                cr_assert(fabs(got - ref[c]) <= 2e-3 + 2e-3 * fabs(ref[c]), "o[%d][%d][%d] = %g, want %g (seed %llu)", i, h, c, got, ref[c],
                          (unsigned long long)seed);
            }
        }
    tile_free(ctx, dq), tile_free(ctx, dk), tile_free(ctx, dv), tile_free(ctx, dout);
    free(vq), free(vk), free(vv), free(hq), free(hk), free(hv), free(ho);
    close_cuda(ctx);
}
Test(cuda_emu, attention_fwd_cc80, .timeout = 300) { attention_case(80); }
Test(cuda_emu, attention_fwd_cc90, .timeout = 300) {
    int maps = fake_cuda_emu_tensor_maps();
    attention_case(90);
    cr_expect_gt(fake_cuda_emu_tensor_maps(), maps, "no tensor maps: the sm_90a path was not taken");
}

/* Paged decode: two sequences of odd context lengths over shuffled cache blocks, split over the context; on stream
 * st (NULL: the default stream, the workspace allocated by the call) with the caller's workspace, the result copied
 * back on st (its kernels must all be on st for the copy to see them). */
static void paged_case(tile_context *ctx, tile_stream st) {
    enum { S = 2, HQ = 4, HK = 2, D = 32, BS = 16, NB = 20, MAXB = 10 };
    int lens[S] = {71, 150}; /* past one 64-key chunk, so that two splits stay two */
    size_t nq = (size_t)S * HQ * D, nc = (size_t)NB * BS * HK * D;
    double *vq = malloc(8 * nq), *vk = malloc(8 * nc), *vv = malloc(8 * nc), ref[D];
    uint16_t *hq = rand16(nq, vq), *hk = rand16(nc, vk), *hv = rand16(nc, vv), *ho = malloc(2 * nq);
    int32_t tables[S * MAXB], perm[NB];
    for (int i = 0; i < NB; i++) perm[i] = i;
    for (int i = NB - 1; i > 0; i--) {
        int j = irand(i + 1), t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
    for (int i = 0; i < S * MAXB; i++) tables[i] = perm[i];
    tile_devptr dq = upload(ctx, hq, 2 * nq), dk = upload(ctx, hk, 2 * nc), dv = upload(ctx, hv, 2 * nc), dout = dev_alloc(ctx, 2 * nq);
    tile_devptr dt = upload(ctx, tables, sizeof tables), dl = upload(ctx, lens, sizeof lens);
    tile_memset(ctx, dout, 0xff, 2 * nq);
    cr_assert_eq(tile_synchronize(ctx), TILE_OK); /* the fill ran on the default stream: st need not order with it */
    tile_paged_attention_args a = {.size = sizeof a, .dtype = TILE_F16, .num_seqs = S, .heads_q = HQ, .heads_kv = HK, .head_dim = D,
                                   .num_tokens = 1, .block_size = BS, .num_blocks = NB, .q = dq, .o = dout, .k_cache = dk, .v_cache = dv,
                                   .block_tables = dt, .block_table_stride = MAXB, .context_lens = dl, .max_context_len = 150, .num_splits = 2,
                                   .stream = st};
    size_t ws = 0;
    int splits = 0;
    cr_assert_eq(tile_paged_attention_workspace_size(ctx, &a, &ws, &splits), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(splits, 2);
    if (st) a.workspace = dev_alloc(ctx, ws), a.workspace_bytes = ws;
    /* prepared, with the caller's workspace, on a stream: nothing a stream capture (a CUDA graph) cannot hold */
    if (st) cr_assert_eq(tile_attention_decode_paged_prepare(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    int breaking = fake_cuda_emu_capture_breaking();
    cr_assert_eq(tile_attention_decode_paged(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    if (st) cr_expect_eq(fake_cuda_emu_capture_breaking(), breaking, "the prepared call allocated, freed, loaded or synchronized");
    cr_assert_eq(tile_memcpy_dtoh_async(ctx, ho, dout, 2 * nq, st), TILE_OK, "%s", tile_last_error(ctx));
    double *kk = malloc(8 * (size_t)MAXB * BS * D), *vvv = malloc(8 * (size_t)MAXB * BS * D);
    for (int s = 0; s < S; s++)
        for (int h = 0; h < HQ; h++) {
            int hk = h / (HQ / HK);
            for (int j = 0; j < lens[s]; j++) { /* the context's keys gathered through the table */
                size_t at = (((size_t)tables[s * MAXB + j / BS] * BS + j % BS) * HK + hk) * D;
                for (int c = 0; c < D; c++) kk[(size_t)j * D + c] = vk[at + c], vvv[(size_t)j * D + c] = vv[at + c];
            }
            attend(vq + ((size_t)s * HQ + h) * D, kk, vvv, lens[s], D, D, 1 / sqrt((double)D), ref);
            for (int c = 0; c < D; c++) {
                double got = f16_to_d(ho[((size_t)s * HQ + h) * D + c]);
                cr_assert(fabs(got - ref[c]) <= 2e-3 + 2e-3 * fabs(ref[c]), "o[%d][%d][%d] = %g, want %g (seed %llu)", s, h, c, got, ref[c],
                          (unsigned long long)seed);
            }
        }
    tile_free(ctx, dq), tile_free(ctx, dk), tile_free(ctx, dv), tile_free(ctx, dout), tile_free(ctx, dt), tile_free(ctx, dl);
    if (a.workspace) tile_free(ctx, a.workspace);
    free(vq), free(vk), free(vv), free(hq), free(hk), free(hv), free(ho), free(kk), free(vvv);
}
Test(cuda_emu, paged_decode_cc80, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_cuda(80);
    paged_case(ctx, NULL);
    close_cuda(ctx);
}

static void moe_case(tile_context *ctx, tile_stream st);

/* The library's calls on the caller's CU_STREAM_NON_BLOCKING stream, which orders with nothing else: each call's
 * kernels must go on it (the stand-in runs a stream's queue only when that stream is waited for). */
Test(cuda_emu, nonblocking_stream_cc80, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_cuda(80);
    void *cu = NULL, *cs = NULL; /* the caller's stream, made in the device's primary context as the CUDA runtime would */
    cr_assert_eq(cuDevicePrimaryCtxRetain(&cu, 0), 0);
    cr_assert_eq(cuCtxSetCurrent(cu), 0);
    cr_assert_eq(cuStreamCreate(&cs, 1 /* CU_STREAM_NON_BLOCKING */), 0);
    tile_stream ts;
    cr_assert_eq(tile_stream_from_native(ctx, cs, &ts), TILE_OK, "%s", tile_last_error(ctx));
    paged_case(ctx, ts);
    moe_case(ctx, ts);
    static const char *const split[] = {"BM=64", "BN=64", "BK=32", "num_warps=4", "SPLIT_K=2", NULL}; /* C zeroed, then added to */
    gemm_case_on(ctx, F16, 50, 70, 96, true, false, split, ts);
    tile_stream_destroy(ctx, ts);
    cr_assert_eq(cuCtxSetCurrent(cu), 0);
    cr_assert_eq(cuStreamDestroy_v2(cs), 0);
    cr_assert_eq(cuDevicePrimaryCtxRelease_v2(0), 0);
    close_cuda(ctx);
}

/* Static shared memory and dynamic beyond what the 48 KiB default leaves (40 KiB + 16 KiB: 56 KiB, within an
 * sm_80 block's opt-in 163 KiB): the function must have opted in to dynamic shared memory, whatever the dynamic
 * size alone is.  The kernel writes the last word of each and reads them back. */
Test(cuda_emu, static_and_dynamic_shared_cc80) {
    tile_context *ctx = open_cuda(80);
    static const char ptx[] =
        ".version 8.0\n.target sm_80\n.address_size 64\n"
        ".visible .entry k(.param .u64 p)\n{\n"
        "  .shared .align 16 .b8 st[40960];\n  .extern .shared .align 16 .b8 dyn[];\n"
        "  .reg .u64 %rd<3>;\n  .reg .u32 %r<5>;\n"
        "  mov.u32 %r1, 7;\n  mov.u32 %r2, 11;\n  st.shared.u32 [st+40956], %r1;\n  st.shared.u32 [dyn+16380], %r2;\n  bar.sync 0;\n"
        "  ld.shared.u32 %r3, [st+40956];\n  ld.shared.u32 %r4, [dyn+16380];\n  add.u32 %r3, %r3, %r4;\n"
        "  ld.param.u64 %rd1, [p];\n  cvta.to.global.u64 %rd2, %rd1;\n  st.global.u32 [%rd2], %r3;\n  ret;\n}\n";
    tile_module *m;
    tile_kernel *k;
    cr_assert_eq(tile_module_load_ptx(ctx, ptx, &m), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_module_get_kernel(m, "k", &k), TILE_OK, "%s", tile_last_error(ctx));
    tile_devptr d = dev_alloc(ctx, 16);
    tile_memset(ctx, d, 0, 16);
    void *args[] = {&d};
    cr_assert_eq(tile_launch_raw(k, (tile_dim3){1, 1, 1}, (tile_dim3){32, 1, 1}, 16384, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    unsigned v = 0;
    cr_assert_eq(tile_memcpy_dtoh(ctx, &v, d, 4), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(v, 18u, "the kernel wrote %u", v);
    tile_module_unload(m);
    tile_free(ctx, d);
    close_cuda(ctx);
}

/* The caller's own CUDA objects: a context made from the primary CUcontext, a CUstream wrapped, memory from
 * cuMemAlloc (another allocator's, found through cuPointerGetAttribute, its extent from the range attributes:
 * a copy past it is refused by the library before the driver sees it). */
Test(cuda_emu, native_context_stream_and_memory) {
    seed_rng();
    fake_cuda_emu_set_cc(80);
    cr_assert_eq(cuInit(0), 0);
    void *cu = NULL, *cs = NULL;
    cr_assert_eq(cuDevicePrimaryCtxRetain(&cu, 0), 0);
    cr_assert_eq(cuCtxSetCurrent(cu), 0);
    enum { N = 333 };
    unsigned long long px = 0, py = 0;
    cr_assert_eq(cuMemAlloc_v2(&px, 4 * N), 0);
    cr_assert_eq(cuMemAlloc_v2(&py, 4 * N), 0);
    cr_assert_eq(cuStreamCreate(&cs, 0), 0);
    tile_context *ctx;
    cr_assert_eq(tile_context_create_from_native(cu, NULL, &ctx), TILE_OK, "%s", tile_last_error(NULL));
    tile_stream ts;
    cr_assert_eq(tile_stream_from_native(ctx, cs, &ts), TILE_OK, "%s", tile_last_error(ctx));
    float hx[N], hy[N], out[N];
    for (int i = 0; i < N; i++) hx[i] = (float)urand(), hy[i] = (float)urand();
    cr_assert_eq(tile_memcpy_htod(ctx, px, hx, sizeof hx), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_htod_async(ctx, py, hy, sizeof hy, ts), TILE_OK, "%s", tile_last_error(ctx));
    tile_module *mod;
    cr_assert_eq(tile_module_load_source(ctx, axpy_src, NULL, &mod), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(mod, "axpy", &k), TILE_OK);
    float a = 0.25f;
    int32_t n = N;
    tile_devptr dx = px, dy = py;
    void *args[] = {&dx, &dy, &a, &n};
    cr_assert_eq(tile_launch(k, (tile_dim3){(N + 127) / 128, 1, 1}, args, ts), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_stream_synchronize(ctx, ts), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, out, py, sizeof out), TILE_OK, "%s", tile_last_error(ctx));
    for (int i = 0; i < N; i++)
        cr_assert(fabs(out[i] - ((double)a * hx[i] + hy[i])) <= 1e-6, "y[%d] = %.9g, want %.9g", i, out[i], (double)a * hx[i] + hy[i]);
    int refusals = fake_cuda_emu_refusals();
    cr_expect_eq(tile_memcpy_dtoh(ctx, out, py + 4 * N - 8, 16), TILE_ERROR_INVALID_VALUE, "a copy past the foreign allocation");
    cr_expect_eq(fake_cuda_emu_refusals(), refusals, "the library passed a copy past the allocation to the driver");
    tile_module_unload(mod);
    tile_stream_destroy(ctx, ts);
    tile_context_destroy(ctx);
    /* the caller's objects are still the caller's */
    cr_assert_eq(cuCtxSetCurrent(cu), 0);
    cr_expect_eq(cuStreamDestroy_v2(cs), 0, "the library destroyed the caller's stream");
    cr_expect_eq(cuMemFree_v2(px), 0, "the library freed the caller's memory");
    cr_expect_eq(cuMemFree_v2(py), 0);
    cr_assert_eq(cuDevicePrimaryCtxRelease_v2(0), 0, "the library released the caller's context reference");
    int live[6];
    fake_cuda_emu_live(live);
    cr_expect(!live[0] && !live[1] && !live[2] && !live[3] && !live[4] && !live[5], "left alive: %d %d %d %d %d %d", live[0], live[1],
              live[2], live[3], live[4], live[5]);
    cr_expect_eq(fake_cuda_emu_refusals(), 0, "the driver refused: %s", fake_cuda_emu_last_refusal());
}

/* Launches through cuLaunchKernelEx on 9.0: a cluster of 2 (the grid a whole number of clusters), programmatic
 * dependent launch, a cooperative launch, a cluster of 16 (past the portable 8: the function must allow
 * non-portable sizes first); each runs the kernel right. */
Test(cuda_emu, launch_ex_cc90) {
    seed_rng();
    tile_context *ctx = open_cuda(90);
    enum { N = 300 };
    float hx[N], hy[N], out[N];
    for (int i = 0; i < N; i++) hx[i] = (float)urand(), hy[i] = (float)urand();
    tile_devptr dx = upload(ctx, hx, sizeof hx), dy = dev_alloc(ctx, sizeof hy);
    tile_module *mod;
    cr_assert_eq(tile_module_load_source(ctx, axpy_src, NULL, &mod), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(mod, "axpy", &k), TILE_OK);
    float a = 2;
    int32_t n = N;
    void *args[] = {&dx, &dy, &a, &n};
    const tile_launch_options opts[] = {{.size = sizeof(tile_launch_options), .cluster = {2, 1, 1}},
                                        {.size = sizeof(tile_launch_options), .programmatic_dependent_launch = 1},
                                        {.size = sizeof(tile_launch_options), .cooperative = 1},
                                        {.size = sizeof(tile_launch_options), .cluster = {16, 1, 1}}};
    for (int c = 0; c < 4; c++) {
        cr_assert_eq(tile_memcpy_htod(ctx, dy, hy, sizeof hy), TILE_OK);
        int launches = fake_cuda_emu_launches();
        unsigned grid = c == 3 ? 16 : 4;
        cr_assert_eq(tile_launch_ex(k, (tile_dim3){grid, 1, 1}, args, NULL, &opts[c]), TILE_OK, "option %d: %s", c, tile_last_error(ctx));
        cr_assert_eq(tile_memcpy_dtoh(ctx, out, dy, sizeof out), TILE_OK, "%s", tile_last_error(ctx));
        cr_assert_eq(fake_cuda_emu_launches(), launches + 1);
        for (int i = 0; i < N; i++)
            cr_assert(fabs(out[i] - ((double)a * hx[i] + hy[i])) <= 1e-6, "option %d: y[%d] = %.9g", c, i, out[i]);
    }
    tile_module_unload(mod);
    tile_free(ctx, dx), tile_free(ctx, dy);
    close_cuda(ctx);
}

/* A kernel's fault on the GPU surfaces asynchronously: the launch returns, the next synchronization fails with the
 * driver's sticky error (the emulator's memcheck report behind it). */
Test(cuda_emu, kernel_fault_is_asynchronous) {
    tile_context *ctx = open_cuda(80);
    static const char ptx[] = ".version 8.0\n.target sm_80\n.address_size 64\n"
                              ".visible .entry bad(.param .u64 p)\n{\n  .reg .u64 %rd<3>;\n  .reg .u32 %r<2>;\n"
                              "  ld.param.u64 %rd1, [p];\n  cvta.to.global.u64 %rd2, %rd1;\n  mov.u32 %r1, 1;\n"
                              "  st.global.u32 [%rd2+4096], %r1;\n  ret;\n}\n";
    tile_module *m;
    tile_kernel *k;
    cr_assert_eq(tile_module_load_ptx(ctx, ptx, &m), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_module_get_kernel(m, "bad", &k), TILE_OK);
    tile_devptr d = dev_alloc(ctx, 64);
    void *args[] = {&d};
    fake_cuda_emu_set_quiet(1);
    cr_assert_eq(tile_launch_raw(k, (tile_dim3){1, 1, 1}, (tile_dim3){1, 1, 1}, 0, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    tile_status st = tile_synchronize(ctx);
    cr_expect_neq(st, TILE_OK, "the fault did not surface");
    cr_expect(strstr(tile_last_error(ctx), "CUDA_ERROR_ILLEGAL_ADDRESS"), "%s", tile_last_error(ctx));
    cr_expect(strstr(tile_last_error(ctx), "memcheck"), "the driver's error string (the emulator's report) is not in: %s", tile_last_error(ctx));
    const char *tail = "; after launch of 'bad' (grid 1,1,1)", *msg = tile_last_error(ctx); /* the launch log names it (a GPU's words do not) */
    cr_expect(strlen(msg) > strlen(tail) && !strcmp(msg + strlen(msg) - strlen(tail), tail), "%s", msg);
    tile_context_destroy(ctx); /* a faulted context: the driver refuses everything, nothing to check after */
}

/* tile_tensor_map_encode and _im2col on the cuda device: every field reaches the driver as given (the stand-in's
 * encoding decoded again), and a map the library would take but the driver documents as refused comes back as
 * the driver's refusal. */
Test(cuda_emu, tensor_map_marshalling_cc90) {
    tile_context *ctx = open_cuda(90);
    tile_devptr d = dev_alloc(ctx, 1 << 20);
    _Alignas(64) uint8_t map[128];
    uint64_t dims[3] = {40, 33, 7}, strides[2] = {96, 96 * 40};
    uint32_t box[3] = {16, 8, 3}, es[3] = {1, 2, 3};
    cr_assert_eq(tile_tensor_map_encode(ctx, map, TILE_BF16, 3, d + 256, dims, strides, box, es, TILE_SWIZZLE_32B), TILE_OK, "%s",
                 tile_last_error(ctx));
    EmuTensorMap t;
    const char *why = NULL;
    cr_assert(emu_tensor_map_decode(map, &t, &why), "%s", why);
    cr_expect_eq(t.rank, 3);
    cr_expect_eq(t.esize, 2);
    cr_expect_eq(t.addr, d + 256);
    cr_expect_eq(t.swizzle, 1);
    cr_expect_eq(t.im2col, 0);
    for (int i = 0; i < 3; i++) {
        cr_expect_eq(t.dims[i], dims[i], "dims[%d]", i);
        cr_expect_eq(t.box[i], box[i], "box[%d]", i);
        cr_expect_eq(t.elem_strides[i], es[i], "elem_strides[%d]", i);
        if (i < 2) cr_expect_eq(t.strides[i], strides[i], "strides[%d]", i);
    }
    uint64_t idims[4] = {32, 9, 11, 2}, istrides[3] = {64, 64 * 9, 64 * 9 * 11};
    int32_t lower[2] = {-1, -2}, upper[2] = {1, 0};
    uint32_t ies[4] = {1, 2, 1, 1};
    cr_assert_eq(tile_tensor_map_encode_im2col(ctx, map, TILE_F16, 4, d, idims, istrides, lower, upper, 32, 40, ies, TILE_SWIZZLE_64B, 1),
                 TILE_OK, "%s", tile_last_error(ctx));
    cr_assert(emu_tensor_map_decode(map, &t, &why), "%s", why);
    cr_expect_eq(t.im2col, 1);
    cr_expect_eq(t.rank, 4);
    cr_expect_eq(t.channels, 32);
    cr_expect_eq(t.pixels, 40);
    cr_expect_eq(t.fill, 1);
    cr_expect_eq(t.swizzle, 2);
    for (int i = 0; i < 4; i++) {
        cr_expect_eq(t.dims[i], idims[i], "im2col dims[%d]", i);
        if (i < 3) cr_expect_eq(t.strides[i], istrides[i], "im2col strides[%d]", i);
        if (i) cr_expect_eq(t.elem_strides[i], ies[i], "im2col elem_strides[%d]", i);
    }
    for (int i = 0; i < 2; i++) {
        cr_expect_eq(t.lower[i], lower[i], "lower[%d]", i);
        cr_expect_eq(t.upper[i], upper[i], "upper[%d]", i);
    }
    tile_free(ctx, d);
    close_cuda(ctx);
}

/* Another host thread uses the context (no CUDA context is current there until the library makes it so): a GEMM
 * and its copies from that thread. */
typedef struct ThreadArgs {
    tile_context *ctx;
} ThreadArgs;
static void *gemm_thread(void *p) {
    ThreadArgs *t = p;
    gemm_case(t->ctx, F16, 21, 19, 33, true, false);
    return NULL;
}
Test(cuda_emu, another_thread_cc80, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_cuda(80);
    ThreadArgs t = {ctx};
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, gemm_thread, &t), 0);
    pthread_join(th, NULL);
    close_cuda(ctx);
}

/* One MoE layer with given top-k ids and weights (an id outside the experts skipped), its workspace allocated
 * inside the call, on stream st: out[t] = sum_j w[t,j] W2[e] (silu(W1g[e] x) * W1u[e] x), h rounded to f16 on the
 * device; the result copied back on st. */
static void moe_case(tile_context *ctx, tile_stream st) {
    enum { T = 7, H = 32, I = 48, E = 4, K = 2, LDO = H + 5 }; /* out's rows LDO apart: the 2-D fill keeps the gaps */
    size_t nx = (size_t)T * H, n1 = (size_t)E * 2 * I * H, n2 = (size_t)E * H * I;
    double *vx = malloc(8 * nx), *v1 = malloc(8 * n1), *v2 = malloc(8 * n2);
    uint16_t *hx = rand16(nx, vx), *h1 = rand16(n1, v1), *h2 = rand16(n2, v2);
    int32_t ids[T * K];
    float w[T * K], out[T * LDO];
    for (int i = 0; i < T * K; i++) ids[i] = irand(E), w[i] = (float)(0.2 + 0.4 * (urand() + 1));
    ids[3] = E + 1; /* skipped */
    tile_devptr dx = upload(ctx, hx, 2 * nx), d1 = upload(ctx, h1, 2 * n1), d2 = upload(ctx, h2, 2 * n2), dout = dev_alloc(ctx, sizeof out);
    tile_devptr dids = upload(ctx, ids, sizeof ids), dw = upload(ctx, w, sizeof w);
    tile_memset(ctx, dout, 0xff, sizeof out); /* NaN: accumulate 0 zeroes the rows, the gaps stay NaN */
    cr_assert_eq(tile_synchronize(ctx), TILE_OK); /* the fill ran on the default stream: st need not order with it */
    tile_moe_args a = {.size = sizeof a, .tokens = T, .hidden = H, .inter = I, .experts = E, .topk = K, .dtype = TILE_F16, .x = dx,
                       .w1 = d1, .w2 = d2, .out = dout, .ldo = LDO, .topk_ids = dids, .topk_weights = dw, .stream = st};
    if (st) { /* prepared, with the caller's workspace: nothing a stream capture cannot hold */
        cr_assert_eq(tile_moe_workspace_size(&a, &a.workspace_bytes), TILE_OK, "%s", tile_last_error(ctx));
        a.workspace = dev_alloc(ctx, a.workspace_bytes);
        cr_assert_eq(tile_moe_prepare(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    }
    int breaking = fake_cuda_emu_capture_breaking();
    cr_assert_eq(tile_moe_forward(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    if (st) cr_expect_eq(fake_cuda_emu_capture_breaking(), breaking, "the prepared call allocated, freed, loaded or synchronized");
    cr_assert_eq(tile_memcpy_dtoh_async(ctx, out, dout, sizeof out, st), TILE_OK, "%s", tile_last_error(ctx));
    for (int t = 0; t < T; t++) {
        double want[H] = {0}, mag[H] = {0};
        for (int j = 0; j < K; j++) {
            int e = ids[t * K + j];
            if (e < 0 || e >= E) continue;
            for (int r = 0; r < I; r++) {
                double g = 0, u = 0;
                for (int c = 0; c < H; c++) {
                    g += v1[((size_t)e * 2 * I + r) * H + c] * vx[(size_t)t * H + c];
                    u += v1[((size_t)e * 2 * I + I + r) * H + c] * vx[(size_t)t * H + c];
                }
                double hh = g / (1 + exp(-g)) * u;
                for (int c = 0; c < H; c++) {
                    double x = w[t * K + j] * v2[((size_t)e * H + c) * I + r] * hh;
                    want[c] += x, mag[c] += fabs(x);
                }
            }
        }
        for (int c = 0; c < H; c++) {
            double tol = 2e-3 * mag[c] + 1e-5;
            cr_assert(fabs(out[t * LDO + c] - want[c]) <= tol, "out[%d][%d] = %.7g, want %.7g (seed %llu)", t, c, out[t * LDO + c], want[c],
                      (unsigned long long)seed);
        }
        for (int c = H; c < LDO; c++) cr_assert(isnan(out[t * LDO + c]), "out[%d][%d] (between rows) = %g, not kept", t, c, out[t * LDO + c]);
    }
    tile_free(ctx, dx), tile_free(ctx, d1), tile_free(ctx, d2), tile_free(ctx, dout), tile_free(ctx, dids), tile_free(ctx, dw);
    if (a.workspace) tile_free(ctx, a.workspace);
    free(vx), free(v1), free(v2), free(hx), free(h1), free(h2);
}
Test(cuda_emu, moe_forward_cc80, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_cuda(80);
    moe_case(ctx, NULL);
    close_cuda(ctx);
}

/* A cluster launch on compute capability 8.0: the caller's invalid value, said before the driver is asked, with the
 * status an emu:sm_80 context gives it. */
static tile_status cluster_launch(tile_context *ctx) {
    tile_module *mod;
    cr_assert_eq(tile_module_load_source(ctx, axpy_src, NULL, &mod), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(mod, "axpy", &k), TILE_OK);
    tile_devptr d = dev_alloc(ctx, 1024);
    float a = 1;
    int32_t n = 256;
    void *args[] = {&d, &d, &a, &n};
    tile_launch_options o = {.size = sizeof o, .cluster = {2, 1, 1}};
    tile_status st = tile_launch_ex(k, (tile_dim3){2, 1, 1}, args, NULL, &o);
    tile_module_unload(mod);
    tile_free(ctx, d);
    return st;
}
Test(cuda_emu, cluster_refused_cc80) {
    tile_context *ctx = open_cuda(80);
    tile_status st = cluster_launch(ctx);
    cr_expect_eq(st, TILE_ERROR_INVALID_VALUE, "%s: %s", tile_status_string(st), tile_last_error(ctx));
    cr_expect(strstr(tile_last_error(ctx), "9.0"), "%s", tile_last_error(ctx));
    close_cuda(ctx); /* and the driver refused nothing */
    tile_context *emu;
    cr_assert_eq(tile_context_create("emu:sm_80", &emu), TILE_OK);
    tile_status est = cluster_launch(emu);
    cr_expect_eq(est, st, "emu:sm_80 gives %s: %s", tile_status_string(est), tile_last_error(emu));
    tile_context_destroy(emu);
}

/* Dynamic shared memory past what an sm_80 block may use (180 KiB of 163): the caller's invalid value, as on the
 * emulator, said before the driver is asked (not a driver failure). */
Test(cuda_emu, shared_past_the_gpu_cc80) {
    tile_context *ctx = open_cuda(80);
    static const char ptx[] = ".version 8.0\n.target sm_80\n.address_size 64\n"
                              ".visible .entry k(.param .u64 p)\n{\n  .extern .shared .align 16 .b8 dyn[];\n  ret;\n}\n";
    tile_module *m;
    tile_kernel *k;
    cr_assert_eq(tile_module_load_ptx(ctx, ptx, &m), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_module_get_kernel(m, "k", &k), TILE_OK);
    tile_devptr d = dev_alloc(ctx, 16);
    void *args[] = {&d};
    tile_status st = tile_launch_raw(k, (tile_dim3){1, 1, 1}, (tile_dim3){32, 1, 1}, 180 * 1024, args, NULL);
    cr_expect_eq(st, TILE_ERROR_INVALID_VALUE, "%s: %s", tile_status_string(st), tile_last_error(ctx));
    cr_expect(strstr(tile_last_error(ctx), "shared memory"), "%s", tile_last_error(ctx));
    tile_module_unload(m);
    tile_free(ctx, d);
    close_cuda(ctx); /* and the driver refused nothing */
}

/* One host range registered by two tile contexts on one GPU (one primary CUDA context): the driver refuses the
 * second (docs/runtime.md), which the library passes on as the device's error; the first stays usable. */
/* y = a x + y by the axpy kernel on ctx over dx and dy (registered host memory: the results land in the host's bytes). */
static void axpy_registered(tile_context *ctx, tile_devptr dx, tile_devptr dy, float a, int32_t n) {
    tile_module *mod;
    cr_assert_eq(tile_module_load_source(ctx, axpy_src, NULL, &mod), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(mod, "axpy", &k), TILE_OK);
    void *args[] = {&dx, &dy, &a, &n};
    cr_assert_eq(tile_launch(k, (tile_dim3){(unsigned)(n + 127) / 128, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_synchronize(ctx), TILE_OK, "%s", tile_last_error(ctx));
    tile_module_unload(mod);
}

/* y[i] == a x[i] + y0[i] for i < n (the kernel's y in place), and y0 becomes the new y for the next check. */
static void expect_axpy(const float *x, const float *y, float *y0, float a, int n) {
    for (int i = 0; i < n; i++) {
        double want = (double)a * x[i] + y0[i];
        cr_assert(fabs(y[i] - want) <= 1e-5 * (1 + fabs(want)), "y[%d] = %.9g, want %.9g", i, y[i], want);
        y0[i] = y[i];
    }
}

/* Two tile contexts on one GPU share its primary context, where the driver registers a range once
 * (cuMemHostRegister: CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED for the second): the second context uses the
 * first's registration, and the range stays registered until the last of them unregisters it, in either order. */
static void register_twice_case(bool first_goes_first) {
    seed_rng();
    tile_context *a = open_cuda(80), *b;
    cr_assert_eq(tile_context_create("cuda", &b), TILE_OK, "%s", tile_last_error(NULL));
    enum { N = 1000 }; /* not a multiple of the block */
    float *x = aligned_alloc(4096, 8192), *y = aligned_alloc(4096, 8192), y0[N];
    for (int i = 0; i < N; i++) x[i] = (float)urand(), y[i] = y0[i] = (float)urand();
    tile_devptr ax, ay, bx, by;
    fake_cuda_emu_set_quiet(1);
    cr_assert_eq(tile_register_memory(a, x, 8192, &ax), TILE_OK, "%s", tile_last_error(a));
    cr_assert_eq(tile_register_memory(a, y, 8192, &ay), TILE_OK, "%s", tile_last_error(a));
    /* a range only partly registered is still the driver's error */
    tile_devptr bad = 1;
    tile_status st = tile_register_memory(b, (char *)x + 4096, 8192, &bad);
    cr_expect_eq(st, TILE_ERROR_DEVICE, "%s: %s", tile_status_string(st), tile_last_error(b));
    cr_expect(strstr(tile_last_error(b), "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED") && !bad, "%s", tile_last_error(b));
    int refused = fake_cuda_emu_refusals(); /* the driver's 712, and maybe cuMemHostGetDevicePointer's past x's end */
    cr_assert_eq(tile_register_memory(b, x, 8192, &bx), TILE_OK, "%s", tile_last_error(b));
    cr_assert_eq(tile_register_memory(b, y, 4 * N, &by), TILE_OK, "%s", tile_last_error(b)); /* a part of a's range */
    cr_expect_eq(fake_cuda_emu_refusals(), refused + 2, "b's registrations were not the driver's ALREADY_REGISTERED: %s", fake_cuda_emu_last_refusal());
    int live[6];
    fake_cuda_emu_live(live);
    cr_expect_eq(live[4], 2, "%d driver registrations, want a's two", live[4]);
    const float k1 = 1.5f, k2 = -0.75f, k3 = 2.0f;
    axpy_registered(b, bx, by, k1, N);
    expect_axpy(x, y, y0, k1, N);
    tile_context *first = first_goes_first ? a : b, *second = first_goes_first ? b : a;
    tile_devptr fx = first == a ? ax : bx, fy = first == a ? ay : by, sx = second == a ? ax : bx, sy = second == a ? ay : by;
    cr_assert_eq(tile_unregister_memory(first, fx), TILE_OK, "%s", tile_last_error(first));
    cr_assert_eq(tile_unregister_memory(first, fy), TILE_OK, "%s", tile_last_error(first));
    fake_cuda_emu_live(live);
    cr_expect_eq(live[4], 2, "%d driver registrations: the other context still uses both", live[4]);
    axpy_registered(second, sx, sy, k2, N); /* unregistered under it, the kernel would fault */
    expect_axpy(x, y, y0, k2, N);
    cr_assert_eq(tile_unregister_memory(second, sx), TILE_OK, "%s", tile_last_error(second));
    cr_assert_eq(tile_unregister_memory(second, sy), TILE_OK, "%s", tile_last_error(second));
    fake_cuda_emu_live(live);
    cr_expect_eq(live[4], 0, "%d driver registrations left once both contexts let go", live[4]);
    /* registered again afresh: a real registration, not a stale count */
    cr_assert_eq(tile_register_memory(second, x, 8192, &sx), TILE_OK, "%s", tile_last_error(second));
    cr_assert_eq(tile_register_memory(second, y, 8192, &sy), TILE_OK, "%s", tile_last_error(second));
    axpy_registered(second, sx, sy, k3, N);
    expect_axpy(x, y, y0, k3, N);
    tile_context_destroy(b); /* unregisters what is left */
    tile_context_destroy(a);
    fake_cuda_emu_live(live);
    cr_expect(!live[0] && !live[4] && !live[5], "left alive: %d allocations, %d registrations, %d context references", live[0], live[4], live[5]);
    cr_expect_eq(fake_cuda_emu_refusals(), refused + 2, "refusals beyond b's two ALREADY_REGISTERED: %s", fake_cuda_emu_last_refusal());
    free(x), free(y);
}
Test(cuda_emu, register_twice) { register_twice_case(true); }
Test(cuda_emu, register_twice_second_unregisters_first) { register_twice_case(false); }

/* Memory the caller page-locked (cuMemHostAlloc, as cudaHostAlloc and torch's pin_memory() make it) registers
 * through its existing mapping, and tile_unregister_memory leaves it pinned: it is the caller's to free. */
Test(cuda_emu, register_caller_pinned) {
    seed_rng();
    tile_context *ctx = open_cuda(80);
    enum { N = 777, YOFF = 784 }; /* y 16-byte aligned after x */
    float *p = NULL, y0[N];
    void *primary = NULL; /* the caller's own use of the driver, as the CUDA runtime's */
    cr_assert_eq(cuDevicePrimaryCtxRetain(&primary, 0), 0);
    cr_assert_eq(cuCtxSetCurrent(primary), 0);
    cr_assert_eq(cuMemHostAlloc((void **)&p, 4 * (YOFF + N), 0), 0, "%s", fake_cuda_emu_last_refusal());
    float *x = p, *y = p + YOFF;
    for (int i = 0; i < N; i++) x[i] = (float)urand(), y[i] = y0[i] = (float)urand();
    tile_devptr d;
    fake_cuda_emu_set_quiet(1);
    cr_assert_eq(tile_register_memory(ctx, p, 4 * (YOFF + N), &d), TILE_OK, "%s", tile_last_error(ctx));
    cr_expect_eq(fake_cuda_emu_refusals(), 1, "the registration was not the driver's ALREADY_REGISTERED: %s", fake_cuda_emu_last_refusal());
    axpy_registered(ctx, d, d + 4 * YOFF, 3.25f, N);
    expect_axpy(x, y, y0, 3.25f, N);
    cr_assert_eq(tile_unregister_memory(ctx, d), TILE_OK, "%s", tile_last_error(ctx));
    unsigned long long still = 0;
    cr_expect_eq(cuMemHostGetDevicePointer_v2(&still, p, 0), 0, "tile_unregister_memory unpinned the caller's memory");
    cr_assert_eq(cuMemFreeHost(p), 0, "cuMemFreeHost: %s", fake_cuda_emu_last_refusal());
    cr_assert_eq(cuDevicePrimaryCtxRelease_v2(0), 0);
    cr_expect_eq(fake_cuda_emu_refusals(), 1, "%s", fake_cuda_emu_last_refusal());
    fake_cuda_emu_set_quiet(0);
    tile_context_destroy(ctx);
    int live[6];
    fake_cuda_emu_live(live);
    cr_expect(!live[0] && !live[4] && !live[5], "left alive: %d allocations, %d registrations, %d context references", live[0], live[4], live[5]);
}

static void on_cache_key(void *user, const tile_cache_entry_info *e) { snprintf(user, 33, "%s", e->key); }

/* axpy (y updated in place) launched with args, n = N elements, float64-checked against hx, hy, a; the elements
 * past n (poisoned, NaN) stay. */
static void check_axpy_f32(tile_context *ctx, tile_kernel *k, tile_dim3 grid, const tile_dim3 *block) {
    enum { N = 300, PAD = 20 };
    float hx[N + PAD], hy[N + PAD], out[N + PAD];
    memset(hx, 0xff, sizeof hx), memset(hy, 0xff, sizeof hy);
    for (int i = 0; i < N; i++) hx[i] = (float)urand(), hy[i] = (float)urand();
    tile_devptr dx = upload(ctx, hx, sizeof hx), dy = upload(ctx, hy, sizeof hy);
    float a = (float)urand() + 1.25f;
    int32_t n = N;
    void *args[] = {&dx, &dy, &a, &n};
    tile_status st = block ? tile_launch_raw(k, grid, *block, 0, args, NULL) : tile_launch(k, grid, args, NULL);
    cr_assert_eq(st, TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, out, dy, sizeof out), TILE_OK, "%s", tile_last_error(ctx));
    for (int i = 0; i < N; i++)
        cr_assert(fabs(out[i] - ((double)a * hx[i] + hy[i])) <= 2e-6 * (fabs((double)a * hx[i] + hy[i]) + 1), "y[%d] = %.9g, want %.9g",
                  i, out[i], (double)a * hx[i] + hy[i]);
    cr_assert(!memcmp(out + N, hy + N, sizeof(float) * PAD), "written past n");
    tile_free(ctx, dx), tile_free(ctx, dy);
}

/* A cubin on the cuda device: checked whole before the driver sees it (a cut one never reaches it), then handed to
 * cuModuleLoadDataEx, which this stand-in (it runs no machine code) refuses as a driver refuses another GPU's
 * cubin: TILE_ERROR_UNSUPPORTED with the driver's words.  A compile cache entry by its key: its cubin is for
 * this GPU (sm_80 on 8.0), so the driver is asked for it first, and on its refusal the entry's PTX is loaded;
 * the kernel keeps the compile's metadata (tile_launch with its own block) and is float64-checked.  Then the
 * stand-in is told the cubin's machine code is its PTX (fake_cuda_emu_register_cubin): the cubin loads, its
 * kernel's parameter sizes come from cuFuncGetParamInfo, it has no block of its own (tile_launch refuses,
 * tile_launch_raw runs it, float64-checked), and the cache entry now loads from its cubin alone. */
Test(cuda_emu, cubin_and_cache_entry_cc80) {
    seed_rng();
    char cache[] = "/tmp/tile-test-cuda-emu-XXXXXX";
    cr_assert(mkdtemp(cache));
    tile_compile_options o = {.size = sizeof o, .arch = "sm_80", .want_cubin = 1};
    tile_compiled c;
    cr_assert_eq(tile_cache_compile_source(cache, "axpy.tile", axpy_src, &o, &c, NULL), TILE_OK, "%s", c.diagnostics);
    cr_assert(c.cubin, "no cubin (ptxas missing?)");
    tile_context *ctx = open_cuda(80);
    tile_module *m = NULL;
    int loads = fake_cuda_emu_capture_breaking(); /* counts cuModuleLoadDataEx among others */
    cr_expect_eq(tile_module_load_cubin(ctx, c.cubin, c.cubin_size - 1, &m), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "truncated"), "%s", tile_last_error(ctx));
    cr_expect_eq(fake_cuda_emu_capture_breaking(), loads, "the driver was handed a truncated image");
    cr_expect_eq(tile_module_load_cubin(ctx, c.cubin, c.cubin_size, &m), TILE_ERROR_UNSUPPORTED);
    cr_expect(strstr(tile_last_error(ctx), "CUDA_ERROR_NO_BINARY_FOR_GPU") && strstr(tile_last_error(ctx), "runs PTX only"), "%s",
              tile_last_error(ctx));
    cr_expect_eq(fake_cuda_emu_capture_breaking(), loads + 1, "the cubin did not reach the driver");
    cr_expect_null(m);
    char key[33] = "";
    cr_assert_eq(tile_cache_list_ex(cache, on_cache_key, key), TILE_OK);
    loads = fake_cuda_emu_capture_breaking();
    cr_assert_eq(tile_module_load_cache_entry(ctx, cache, key, &m), TILE_OK, "%s", tile_last_error(ctx));
    cr_expect_eq(fake_cuda_emu_capture_breaking(), loads + 2, "not the cubin first, then the PTX");
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(m, "axpy", &k), TILE_OK, "%s", tile_last_error(ctx));
    check_axpy_f32(ctx, k, (tile_dim3){3, 1, 1}, NULL);
    tile_module_unload(m);
    /* the cubin's machine code runs (as its PTX) */
    fake_cuda_emu_register_cubin(c.cubin, c.cubin_size, c.ptx);
    loads = fake_cuda_emu_capture_breaking();
    cr_assert_eq(tile_module_load_cubin(ctx, c.cubin, c.cubin_size, &m), TILE_OK, "%s", tile_last_error(ctx));
    cr_expect_eq(fake_cuda_emu_capture_breaking(), loads + 1);
    cr_assert_eq(tile_module_get_kernel(m, "axpy", &k), TILE_OK, "%s", tile_last_error(ctx));
    const char *const *names; /* machine code: its kernels are the driver's to read */
    int nnames;
    cr_expect_eq(tile_module_get_kernel_names(m, &names, &nnames), TILE_ERROR_UNSUPPORTED);
    cr_expect(strstr(tile_last_error(ctx), "tile_module_get_kernel_names: the module is machine code"), "%s", tile_last_error(ctx));
    tile_kernel_attributes at;
    cr_assert_eq(tile_kernel_get_attributes(k, &at), TILE_OK);
    cr_expect(at.num_params == 4 && !strcmp(at.signature, "b64, b64, b32, b32") && at.block_threads == 0,
              "from cuFuncGetParamInfo: %d params '%s', %u threads", at.num_params, at.signature, at.block_threads);
    float one = 1;
    int32_t four = 4;
    tile_devptr z = 0;
    void *few[] = {&z, &z, &one, &four};
    cr_expect_eq(tile_launch(k, (tile_dim3){1, 1, 1}, few, NULL), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "block size is unknown (raw PTX without .maxntid, or a cubin): use "
                                           "tile_launch_raw, or tile_launch_ex with a block"), "%s", tile_last_error(ctx));
    check_axpy_f32(ctx, k, (tile_dim3){3, 1, 1}, &(tile_dim3){128, 1, 1});
    tile_module_unload(m);
    loads = fake_cuda_emu_capture_breaking();
    cr_assert_eq(tile_module_load_cache_entry(ctx, cache, key, &m), TILE_OK, "%s", tile_last_error(ctx));
    cr_expect_eq(fake_cuda_emu_capture_breaking(), loads + 1, "the entry's cubin was not the one loaded");
    cr_assert_eq(tile_module_get_kernel(m, "axpy", &k), TILE_OK, "%s", tile_last_error(ctx));
    check_axpy_f32(ctx, k, (tile_dim3){3, 1, 1}, NULL);
    tile_module_unload(m);
    tile_compiled_free(&c);
    close_cuda(ctx);
    tile_cache_clear(cache, 1);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", cache);
    cr_expect_eq(system(cmd), 0);
}

/* nvcc's fatbin with uncompressed PTX on the cuda device: the driver (the stand-in JIT-compiles the PTX, as a
 * driver does for a fatbin without machine code for its GPU) loads it; the kernel's parameters and block come
 * from that PTX's .entry; launched with a block (CUDA C's has none of its own) and float64-checked.  Needs nvcc. */
Test(cuda_emu, fatbin_cc80, .timeout = 120) {
    const char *nvcc = "/usr/local/cuda/bin/nvcc";
    if (access(nvcc, X_OK)) cr_skip_test("no %s: the fatbin test needs nvcc", nvcc);
    seed_rng();
    char dir[] = "/tmp/tile-test-cuda-emu-XXXXXX", cmd[1024];
    cr_assert(mkdtemp(dir));
    snprintf(cmd, sizeof cmd,
             "printf 'extern \"C\" __global__ void axpy(const float *x, float *y, float a, int n) {\\n"
             "  int i = blockIdx.x * blockDim.x + threadIdx.x;\\n  if (i < n) y[i] = a * x[i] + y[i];\\n}\\n' > %s/k.cu && "
             "%s -fatbin -arch=sm_80 --no-compress %s/k.cu -o %s/k.fatbin",
             dir, nvcc, dir, dir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    snprintf(cmd, sizeof cmd, "%s/k.fatbin", dir);
    FILE *f = fopen(cmd, "rb");
    cr_assert(f);
    unsigned char img[65536];
    size_t n = fread(img, 1, sizeof img, f);
    fclose(f);
    fake_cuda_emu_set_driver_version(13000); /* the PTX ISA this nvcc writes (9.0) */
    tile_context *ctx = open_cuda(80);
    tile_module *m;
    cr_assert_eq(tile_module_load_cubin(ctx, img, n, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(m, "axpy", &k), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel_attributes at;
    cr_assert_eq(tile_kernel_get_attributes(k, &at), TILE_OK);
    cr_expect(at.num_params == 4 && strstr(at.signature, ", f32, u32"), "%d params: %s", at.num_params, at.signature);
    check_axpy_f32(ctx, k, (tile_dim3){5, 1, 1}, &(tile_dim3){64, 1, 1});
    tile_module_unload(m);
    close_cuda(ctx);
    fake_cuda_emu_set_driver_version(12080);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}
