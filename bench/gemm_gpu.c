/* gemm_gpu.c - TFLOP/s of kernels/gemm/gemm.tile (bf16 in, bf16 out, f32
 * accumulation; with --api also tf32 and f8, and a transposed A or B) on
 * square problems, for bench/gpu/run.sh.
 *
 *   build/bench/gemm_gpu [--device cuda|emu] [--sizes 4096,8192] [--arch sm_80|sm_90a]
 *                        [--kernel gemm_bf16_bf16] [-D NAME=VALUE ...] [--samples N]
 *   build/bench/gemm_gpu --api [--dtype bf16|tf32|f8e4m3|f8e5m2] [--trans-a] [--trans-b] [--config "NAME=VALUE ..."]
 *                        [--device D] [--sizes ..] [--samples N]
 *
 * --api calls tile_gemm (what users run: on sm_90a tensor maps, a producer warpgroup and
 * persistent programs), timed with device events (bench/gpu_common.h's bench_time: a batch of
 * back-to-back calls between two events, median over samples); bench/gpu/run.sh measures that.  Without it:
 * Launched through the device layer (runtime/device.h: tile_compile_file,
 * dev_module_load_ptx, dev_launch), not the launcher library's tile_gemm,
 * which was not in the tree when this was written.  The device layer has no
 * events, so the timing is: warm-up launches, then N samples, each a batch
 * of back-to-back launches on the default stream between two
 * dev_synchronize calls timed with clock_gettime (the batch sized to last
 * at least 5 ms, so the one synchronize per batch costs under 1%); the
 * median sample over the batch size is the time per launch.
 *
 * Steps per size:
 *   1. compile gemm.tile's kernel for the arch, specialized as this launch
 *      allows (unit strides 1, sizes and leading strides divisible by 16);
 *   2. random bf16 A and B (never zeros: they run faster and hide bugs), C
 *      poisoned with NaN;
 *   3. one launch, then check: every element of C written (no NaN left),
 *      and 1024 sampled elements against a float64 host reference (ref_dot), error
 *      ||out - ref|| / ||ref|| < 1e-2 (bf16 output);
 *   4. warm up, time, print; one line "@@ gemm N tile TFLOPS" per size for
 *      run.sh's table.
 * Exit status 1 when a check fails. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/numparse.h"
#include "bench/gpu_common.h"
#include "support/hostfloat.h"
#include "include/tile/tile.h"
#include "ref/ref.h"
#include "runtime/device.h"
#include "tools/json.h"

static int json; /* --json: one JSON object per result line, nothing else on stdout */

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint64_t next_u64(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}


static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define CHECK(call, what)                                                        \
    do {                                                                         \
        if ((call) != DEV_OK) {                                                  \
            fprintf(stderr, "gemm_gpu: %s: %s\n", what, dev_last_error(dev));    \
            goto fail;                                                           \
        }                                                                        \
    } while (0)

/* A and B (nn elements each): uniform in [-1, 1) as bf16 (never zeros: they run faster and hide bugs) */
static void random_inputs(uint16_t *ha, uint16_t *hb, size_t nn) {
    for (size_t i = 0; i < nn; i++) {
        ha[i] = f32_to_bf16((float)((double)(next_u64() >> 11) / 9007199254740992.0 * 2.0 - 1.0));
        hb[i] = f32_to_bf16((float)((double)(next_u64() >> 11) / 9007199254740992.0 * 2.0 - 1.0));
    }
}

/* Elements of the n x n bf16 C still NaN (never written), and the relative error of 1024 sampled
 * elements against float64 (arow, bcol: n doubles of scratch). */
static double sampled_error(int n, const uint16_t *ha, const uint16_t *hb, const uint16_t *hc, double *arow, double *bcol,
                            size_t *unwritten) {
    size_t nn = (size_t)n * (size_t)n;
    *unwritten = 0;
    for (size_t i = 0; i < nn; i++) *unwritten += isnan(bf16_to_d(hc[i]));
    double num = 0, den = 0;
    for (int s = 0; s < 1024; s++) {
        size_t i = (size_t)(next_u64() % (uint64_t)n), j = (size_t)(next_u64() % (uint64_t)n);
        for (size_t p = 0; p < (size_t)n; p++) arow[p] = bf16_to_d(ha[i * (size_t)n + p]), bcol[p] = bf16_to_d(hb[p * (size_t)n + j]);
        double ref = ref_dot(n, arow, 1, bcol, 1, NULL), got = bf16_to_d(hc[i * (size_t)n + j]);
        num += (got - ref) * (got - ref);
        den += ref * ref;
    }
    return sqrt(num / (den > 0 ? den : 1));
}

/* One launch and one wait, for the timing loop: false on an error (the callee printed it). */
typedef struct Launcher {
    bool (*launch)(void *ud);
    bool (*wait)(void *ud);
    void *ud;
} Launcher;

/* Warm up for 0.2 s, size a batch to last 5 ms, then t[0..samples) = seconds per launch of each
 * batch, sorted; *batch its size.  False on a launch error. */
static bool time_launches(const Launcher *L, int samples, double *t, int *batch) {
    double t0 = now_s();
    int warm = 0;
    do {
        if (!L->launch(L->ud)) return false;
        if (++warm % 4 == 0 && !L->wait(L->ud)) return false;
    } while (now_s() - t0 < 0.2 || warm < 3);
    if (!L->wait(L->ud)) return false;
    double one = (now_s() - t0) / warm;
    *batch = (int)ceil(0.005 / (one > 1e-7 ? one : 1e-7));
    if (*batch < 1) *batch = 1;
    if (*batch > 1000) *batch = 1000;
    for (int s = 0; s < samples; s++) {
        double a = now_s();
        for (int b = 0; b < *batch; b++)
            if (!L->launch(L->ud)) return false;
        if (!L->wait(L->ud)) return false;
        t[s] = (now_s() - a) / *batch;
    }
    qsort(t, (size_t)samples, sizeof(double), cmp_d);
    return true;
}

/* The device-layer launch of bench_size. */
typedef struct DevLaunch {
    TileDevice *dev;
    TileDevFunction *fn;
    unsigned grid, threads, dyn_smem;
    void **params;
} DevLaunch;
static bool dev_one(void *ud) {
    DevLaunch *d = ud;
    if (dev_launch(d->fn, d->grid, 1, 1, d->threads, 1, 1, d->dyn_smem, NULL, d->params) == DEV_OK) return true;
    fprintf(stderr, "gemm_gpu: launch: %s\n", dev_last_error(d->dev));
    return false;
}
static bool dev_wait(void *ud) {
    DevLaunch *d = ud;
    if (dev_synchronize(d->dev) == DEV_OK) return true;
    fprintf(stderr, "gemm_gpu: synchronize: %s\n", dev_last_error(d->dev));
    return false;
}

/* bm, bn: the tile the defines ask for (-D BM=, -D BN=; 128 without), which sets the grid. */
static int bench_size(TileDevice *dev, const char *arch, const char *kernel, const char **user_defs, int nuser, int bm, int bn,
                      int n, int samples) {
    int rc = 1;
    uint64_t da = 0, db = 0, dc = 0;
    TileDevModule *mod = NULL;
    uint16_t *ha = NULL, *hb = NULL, *hc = NULL;
    double *t = NULL, *arow = NULL, *bcol = NULL;
    tile_compiled comp;
    memset(&comp, 0, sizeof comp);

    /* 1. compile */
    const char *defines[32];
    int nd = 0;
    for (int i = 0; i < nuser && nd < 31; i++) defines[nd++] = user_defs[i];
    defines[nd] = NULL;
    const char *spec[] = {"sak=1", "sbn=1", "m=16", "n=16", "k=16", "sam=16", "sbk=16", "scm=16", NULL};
    /* no_tma: launched through the device layer, which passes no tensor maps (tile_gemm's launches do) */
    tile_compile_options o = {.size = sizeof o, .arch = arch, .kernel = kernel, .defines = defines,
                              .specialize = n % 16 == 0 ? spec : NULL, .no_tma = 1};
    tile_status st = tile_compile_file(TILE_SOURCE_DIR "/kernels/gemm/gemm.tile", &o, &comp);
    if (st != TILE_OK) {
        fprintf(stderr, "gemm_gpu: compile %s: %s\n%s", kernel, tile_status_string(st), comp.diagnostics);
        tile_compiled_free(&comp);
        return 1;
    }
    unsigned threads = 32u * (unsigned)comp.kernels[0].num_warps;
    /* shared memory declared .extern is dynamic: pass its size at launch */
    unsigned dyn_smem = strstr(comp.ptx, ".extern .shared") ? (unsigned)comp.kernels[0].smem_bytes : 0;
    CHECK(dev_module_load_ptx(dev, comp.ptx, &mod), "load");
    TileDevFunction *fn;
    CHECK(dev_module_get_function(mod, kernel, &fn), "get function");

    /* 2. inputs */
    size_t nn = (size_t)n * (size_t)n;
    ha = malloc(nn * 2), hb = malloc(nn * 2), hc = malloc(nn * 2);
    random_inputs(ha, hb, nn);
    CHECK(dev_malloc(dev, nn * 2, &da), "malloc A");
    CHECK(dev_malloc(dev, nn * 2, &db), "malloc B");
    CHECK(dev_malloc(dev, nn * 2, &dc), "malloc C");
    CHECK(dev_memcpy_htod(dev, da, ha, nn * 2), "upload A");
    CHECK(dev_memcpy_htod(dev, db, hb, nn * 2), "upload B");
    CHECK(dev_memset_d8(dev, dc, 0xff, nn * 2), "poison C"); /* 0xffff: a bf16 NaN */

    int m_ = n, n_ = n, k_ = n, sam = n, sak = 1, sbk = n, sbn = 1, scm = n;
    float alpha = 1.0f, beta = 0.0f;
    uint64_t dbias = dc; /* unused without HAS_BIAS */
    void *params[] = {&da, &db, &dc, &dbias, &m_, &n_, &k_, &sam, &sak, &sbk, &sbn, &scm, &alpha, &beta};
    unsigned grid = (unsigned)(((n + bm - 1) / bm) * ((n + bn - 1) / bn));

    /* 3. one launch, checked */
    CHECK(dev_launch(fn, grid, 1, 1, threads, 1, 1, dyn_smem, NULL, params), "launch");
    CHECK(dev_synchronize(dev), "synchronize");
    CHECK(dev_memcpy_dtoh(dev, hc, dc, nn * 2), "download C");
    arow = malloc(sizeof(double) * (size_t)n), bcol = malloc(sizeof(double) * (size_t)n);
    if (!arow || !bcol) {
        fprintf(stderr, "gemm_gpu: out of host memory\n");
        goto fail;
    }
    size_t unwritten;
    double rel = sampled_error(n, ha, hb, hc, arow, bcol, &unwritten);
    bool ok = unwritten == 0 && rel < 1e-2;
    if (json) {
        JsonOut j;
        json_begin(&j, stdout);
        json_str(&j, "bench", "gemm_gpu");
        json_int(&j, "m", n), json_int(&j, "n", n), json_int(&j, "k", n);
        json_str(&j, "check", ok ? "ok" : "FAILED");
        json_uint(&j, "unwritten", unwritten);
        json_num(&j, "sampled_rel_err", rel);
        json_end(&j);
    } else
        printf("  %dx%dx%d: check %s (unwritten %zu, sampled relative error %.2e)\n", n, n, n, ok ? "ok" : "FAILED", unwritten, rel);
    if (!ok) goto fail;

    /* 4. warm up, size the batch, time */
    t = malloc(sizeof(double) * (size_t)samples);
    int batch;
    DevLaunch dl = {dev, fn, grid, threads, dyn_smem, params};
    if (!t || !time_launches(&(Launcher){dev_one, dev_wait, &dl}, samples, t, &batch)) goto fail;
    double med = t[samples / 2], flop = 2.0 * n * (double)n * n;
    if (json) {
        JsonOut j;
        json_begin(&j, stdout);
        json_str(&j, "bench", "gemm_gpu");
        json_int(&j, "m", n), json_int(&j, "n", n), json_int(&j, "k", n);
        json_str(&j, "kernel", kernel);
        json_str(&j, "arch", arch);
        json_uint(&j, "grid", grid);
        json_uint(&j, "threads", threads);
        json_int(&j, "smem_bytes", comp.kernels[0].smem_bytes);
        json_bool(&j, "smem_dynamic", dyn_smem != 0);
        json_num(&j, "median_ms", med * 1e3);
        json_num(&j, "min_ms", t[0] * 1e3);
        json_num(&j, "max_ms", t[samples - 1] * 1e3);
        json_int(&j, "samples", samples);
        json_int(&j, "batch", batch);
        json_num(&j, "tflops", flop / med / 1e12);
        json_end(&j);
    } else {
    printf("  %dx%dx%d: %s %s grid %u x %u threads, smem %d B%s: median %.3f ms (min %.3f, max %.3f) over %d samples of %d "
           "launches = %.4g TFLOP/s\n",
           n, n, n, kernel, arch, grid, threads, comp.kernels[0].smem_bytes, dyn_smem ? " dynamic" : "", med * 1e3, t[0] * 1e3,
           t[samples - 1] * 1e3, samples, batch, flop / med / 1e12);
    printf("@@ gemm %d tile %.4g\n", n, flop / med / 1e12);
    }
    rc = 0;
fail:
    if (da) dev_free(dev, da);
    if (db) dev_free(dev, db);
    if (dc) dev_free(dev, dc);
    if (mod) dev_module_unload(mod);
    free(ha), free(hb), free(hc), free(t), free(arow), free(bcol);
    tile_compiled_free(&comp);
    return rc;
}

/* The tile_gemm call of bench_api. */
typedef struct ApiLaunch {
    tile_context *ctx;
    const tile_gemm_args *g;
    const char *const *config; /* --config: through tile_gemm_with_config */
} ApiLaunch;
static tile_status api_call(void *ud) {
    ApiLaunch *a = ud;
    return a->config ? tile_gemm_with_config(a->ctx, a->g, a->config) : tile_gemm(a->ctx, a->g);
}

/* An element of the --api problem's operand as a double: bf16, f32 (tf32 inputs), or f8 (e5: E5M2) when f8. */
static double api_elem(const void *base, size_t i, tile_dtype in) {
    switch (in) {
    case TILE_F8E4M3: return f8e4m3_to_d(((const uint8_t *)base)[i]);
    case TILE_F8E5M2: return f8e5m2_to_d(((const uint8_t *)base)[i]);
    case TILE_F32: return (double)((const float *)base)[i];
    default: return bf16_to_d(((const uint16_t *)base)[i]);
    }
}

/* --api: the same problem through the public tile_gemm, which chooses its own configuration (on sm_90a:
 * tensor maps, a producer warpgroup and persistent programs); timed the same way with tile_synchronize.
 * bf16: A [n][k], B [k][n], bf16 C.  tf32 (f32 in, tf32 tensor cores): as bf16 with f32 A, B and C.
 * f8 (e4m3 or e5m2): A [n][k] and B as a weight [n][k] (trans_b, the layout f8 GEMMs are run in), f32 C,
 * per-tensor scales (0.75 and 1.25) read from device memory; the reference multiplies by them too.
 * trans_a: A stored [k][n] (tile_gemm's trans_a, lda n); trans_b: B stored [n][k] (f8 always). */
static int bench_api(const char *device, int n, int samples, tile_dtype in, int trans_a, int trans_b, const char *const *config) {
    int rc = 1;
    int f8 = in == TILE_F8E4M3 || in == TILE_F8E5M2, e5 = in == TILE_F8E5M2, tf32 = in == TILE_F32;
    size_t es = f8 ? 1 : tf32 ? 4 : 2, cs = f8 || tf32 ? 4 : 2;
    if (f8) trans_b = 1;
    tile_context *ctx = NULL;
    tile_devptr da = 0, db = 0, dc = 0, dsc = 0;
    uint8_t *ha = NULL, *hb = NULL, *hc = NULL;
    double *arow = NULL, *bcol = NULL;
    if (tile_context_create(device, &ctx) != TILE_OK) {
        fprintf(stderr, "gemm_gpu: %s\n", tile_last_error(NULL));
        return 1;
    }
    size_t nn = (size_t)n * (size_t)n;
    ha = malloc(nn * es), hb = malloc(nn * es), hc = malloc(nn * cs);
    arow = malloc(sizeof(double) * (size_t)n), bcol = malloc(sizeof(double) * (size_t)n);
    if (!ha || !hb || !hc || !arow || !bcol) goto fail;
    if (f8)
        for (size_t i = 0; i < nn; i++) { /* uniform in [-2, 2): never zeros */
            ha[i] = d_to_f8((double)(next_u64() >> 11) / 9007199254740992.0 * 4.0 - 2.0, e5);
            hb[i] = d_to_f8((double)(next_u64() >> 11) / 9007199254740992.0 * 4.0 - 2.0, e5);
        }
    else if (tf32)
        for (size_t i = 0; i < nn; i++) { /* uniform in [-1, 1): never zeros */
            ((float *)ha)[i] = (float)((double)(next_u64() >> 11) / 9007199254740992.0 * 2.0 - 1.0);
            ((float *)hb)[i] = (float)((double)(next_u64() >> 11) / 9007199254740992.0 * 2.0 - 1.0);
        }
    else
        random_inputs((uint16_t *)ha, (uint16_t *)hb, nn);
    const float scales[2] = {0.75f, 1.25f};
#define API(call, what)                                                                   \
    do {                                                                                  \
        if ((call) != TILE_OK) {                                                          \
            fprintf(stderr, "gemm_gpu: %s: %s\n", what, tile_last_error(ctx));            \
            goto fail;                                                                    \
        }                                                                                 \
    } while (0)
    API(tile_malloc(ctx, nn * es, &da), "malloc A");
    API(tile_malloc(ctx, nn * es, &db), "malloc B");
    API(tile_malloc(ctx, nn * cs, &dc), "malloc C");
    API(tile_malloc(ctx, sizeof scales, &dsc), "malloc scales");
    API(tile_memcpy_htod(ctx, da, ha, nn * es), "upload A");
    API(tile_memcpy_htod(ctx, db, hb, nn * es), "upload B");
    API(tile_memcpy_htod(ctx, dsc, scales, sizeof scales), "upload scales");
    API(tile_memset(ctx, dc, 0xff, nn * cs), "poison C"); /* all ones: NaN in bf16 and f32 */
    tile_gemm_args g = {.size = sizeof g, .m = n, .n = n, .k = n, .a = da, .lda = n, .trans_a = trans_a, .b = db, .ldb = n,
                        .trans_b = trans_b, .c = dc, .ldc = n, .in_dtype = in, .out_dtype = f8 || tf32 ? TILE_F32 : TILE_BF16,
                        .alpha = 1};
    if (f8) g.a_scale = dsc, g.b_scale = dsc + sizeof(float), g.scale_mode = TILE_SCALE_TENSOR;
    API(config ? tile_gemm_with_config(ctx, &g, config) : tile_gemm(ctx, &g), "tile_gemm");
    API(tile_synchronize(ctx), "synchronize");
    API(tile_memcpy_dtoh(ctx, hc, dc, nn * cs), "download C");
    tile_gemm_info info;
    API(tile_gemm_last_info(ctx, &info), "tile_gemm_last_info");
    /* every element written (no NaN left), 1024 sampled elements against float64 */
    size_t unwritten = 0;
    for (size_t i = 0; i < nn; i++) unwritten += isnan(cs == 4 ? (double)((const float *)hc)[i] : bf16_to_d(((const uint16_t *)hc)[i]));
    double num = 0, den = 0, scale = f8 ? (double)scales[0] * scales[1] : 1.0;
    for (int s = 0; s < 1024; s++) {
        size_t i = (size_t)(next_u64() % (uint64_t)n), j = (size_t)(next_u64() % (uint64_t)n);
        for (size_t p = 0; p < (size_t)n; p++)
            arow[p] = api_elem(ha, trans_a ? p * (size_t)n + i : i * (size_t)n + p, in),
            bcol[p] = api_elem(hb, trans_b ? j * (size_t)n + p : p * (size_t)n + j, in);
        double ref = scale * ref_dot(n, arow, 1, bcol, 1, NULL);
        double got = cs == 4 ? (double)((const float *)hc)[i * (size_t)n + j] : bf16_to_d(((const uint16_t *)hc)[i * (size_t)n + j]);
        num += (got - ref) * (got - ref);
        den += ref * ref;
    }
    double rel = sqrt(num / (den > 0 ? den : 1));
    /* bf16 output rounds each element (2^-9 relative).  f8: the emulator sums the exact products in f32
     * (about 1e-7 here), but a GPU's f8 wgmma accumulates with about 14 bits (an H200: 1.9e-3 at 8192^3,
     * cuBLAS with its periodic promotion to f32: 1.1e-4 at 4096^3); 1e-2 still fails a wrong kernel.  tf32 rounds
     * A and B to 10-bit mantissas (about 3e-4 here). */
    bool ok = unwritten == 0 && rel < 1e-2;
    const char *dname = f8 ? (e5 ? "f8e5m2" : "f8e4m3") : tf32 ? "tf32" : "bf16";
    /* the layout: "" for the dtype's own (A [m][k]; B [k][n], or [n][k] for f8), else _ta, _tb, _ta_tb */
    const char *lay = trans_a ? (trans_b && !f8 ? "_ta_tb" : "_ta") : trans_b && !f8 ? "_tb" : "";
    if (!json) printf("  %dx%dx%d %s%s: tile_gemm check %s (unwritten %zu, sampled relative error %.2e)\n", n, n, n, dname, lay, ok ? "ok" : "FAILED",
                      unwritten, rel);
    if (!ok) goto fail;
    ApiLaunch al = {ctx, &g, config};
    BenchTiming tm;
    API(bench_time(ctx, api_call, &al, samples, 0.2, 0.005, &tm), "timing");
#undef API
    double med = tm.median_s, flop = 2.0 * n * (double)n * n;
    if (json) {
        JsonOut j;
        json_begin(&j, stdout);
        json_str(&j, "bench", "gemm_gpu");
        json_str(&j, "via", "tile_gemm");
        json_str(&j, "dtype", dname);
        json_bool(&j, "trans_a", trans_a);
        json_bool(&j, "trans_b", trans_b);
        json_int(&j, "m", n), json_int(&j, "n", n), json_int(&j, "k", n);
        json_str(&j, "config", info.config);
        json_uint(&j, "grid", info.grid.x);
        json_uint(&j, "threads", info.block.x);
        json_num(&j, "median_ms", med * 1e3);
        json_num(&j, "tflops", flop / med / 1e12);
        json_end(&j);
    } else {
        printf("  %dx%dx%d %s%s: tile_gemm %s %s, grid %u x %u threads: median %.3f ms (min %.3f, max %.3f) over %d samples of %d "
               "calls (%s) = %.4g TFLOP/s\n",
               n, n, n, dname, lay, info.kernel, info.config, info.grid.x, info.block.x, med * 1e3, tm.min_s * 1e3, tm.max_s * 1e3,
               tm.samples, tm.batch, bench_timing_how(&tm), flop / med / 1e12);
        printf("@@ gemm%s%s%s %d tile %.4g\n", f8 ? (e5 ? "_f8e5m2" : "_f8e4m3") : tf32 ? "_tf32" : "", lay, config ? "_config" : "", n,
               flop / med / 1e12);
    }
    rc = 0;
fail:
    if (da) tile_free(ctx, da);
    if (db) tile_free(ctx, db);
    if (dc) tile_free(ctx, dc);
    if (dsc) tile_free(ctx, dsc);
    tile_context_destroy(ctx);
    free(ha), free(hb), free(hc), free(arow), free(bcol);
    return rc;
}

int main(int argc, char **argv) {
    const char *device = NULL, *arch = tile_target_default(), *kernel = "gemm_bf16_bf16";
    int64_t sizes[16] = {4096, 8192};
    int nsizes = 2;
    const char *defs[32];
    int nd = 0, samples = 30, api = 0, bm = 128, bn = 128, trans_a = 0, trans_b = 0;
    tile_dtype api_dtype = TILE_BF16;
    char cfg_text[512] = "";
    const char *cfg[33] = {NULL};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--device") && i + 1 < argc) device = argv[++i];
        else if (!strcmp(argv[i], "--arch") && i + 1 < argc) arch = argv[++i];
        else if (!strcmp(argv[i], "--kernel") && i + 1 < argc) kernel = argv[++i];
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
            if ((nsizes = cli_option_i64_list("gemm_gpu", argv[i], argv[i + 1], 1, 65536, sizes, 16)) < 0) return 2;
            i++;
        }
        else if (!strcmp(argv[i], "--samples") && i + 1 < argc) {
            if (!cli_option_int("gemm_gpu", argv[i], argv[i + 1], 1, 1000000, &samples)) return 2;
            i++;
        }
        else if (!strcmp(argv[i], "-D") && i + 1 < argc && nd < 31) {
            /* BM and BN are read here too (the grid): numbers, as the compiler will want them */
            const char *d = argv[++i];
            if ((!strncmp(d, "BM=", 3) || !strncmp(d, "BN=", 3)) &&
                !cli_option_int("gemm_gpu", d[1] == 'M' ? "-D BM" : "-D BN", d + 3, 1, 65536, d[1] == 'M' ? &bm : &bn))
                return 2;
            defs[nd++] = d;
        }
        else if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--api")) api = 1;
        else if (!strcmp(argv[i], "--trans-a")) trans_a = 1;
        else if (!strcmp(argv[i], "--trans-b")) trans_b = 1;
        else if (!strcmp(argv[i], "--config") && i + 1 < argc) { /* "NAME=VALUE ..." for tile_gemm_with_config */
            snprintf(cfg_text, sizeof cfg_text, "%s", argv[++i]);
            int nc = 0;
            for (char *w = strtok(cfg_text, " "); w && nc < 32; w = strtok(NULL, " ")) cfg[nc++] = w;
        }
        else if (!strcmp(argv[i], "--dtype") && i + 1 < argc) {
            const char *d = argv[++i];
            if (!strcmp(d, "bf16")) api_dtype = TILE_BF16;
            else if (!strcmp(d, "tf32")) api_dtype = TILE_F32;
            else if (!strcmp(d, "f8e4m3")) api_dtype = TILE_F8E4M3;
            else if (!strcmp(d, "f8e5m2")) api_dtype = TILE_F8E5M2;
            else {
                fprintf(stderr, "gemm_gpu: --dtype takes bf16, tf32, f8e4m3 or f8e5m2 (with --api), not '%s'\n", d);
                return 2;
            }
        }
        else {
            fprintf(stderr, "usage: %s [--device D] [--api [--dtype bf16|tf32|f8e4m3|f8e5m2] [--trans-a] [--trans-b] [--config \"NAME=VALUE ...\"] | --arch A] [--kernel K] [--sizes N,N] [--samples N] [-D NAME=VALUE]... [--json]\n",
                    argv[0]);
            return 2;
        }
    }
    if (samples < 1) samples = 1;
    if (!api && (trans_a || trans_b || api_dtype != TILE_BF16)) { /* the device-layer path times row-major bf16 only */
        fprintf(stderr, "gemm_gpu: --trans-a, --trans-b and --dtype need --api\n");
        return 2;
    }
    if (api) {
        fprintf(json ? stderr : stdout, "gemm_gpu: %s%s%s through tile_gemm on %s; time per call = median over samples of\n"
                "  (batch of back-to-back calls between two tile_synchronize calls, host clock) / batch size\n",
                api_dtype == TILE_BF16 ? "bf16" : api_dtype == TILE_F32 ? "tf32 (f32 in and out)" : api_dtype == TILE_F8E4M3 ? "f8e4m3 (per-tensor scales, B as [n][k])" : "f8e5m2 (per-tensor scales, B as [n][k])",
                trans_a ? ", A as [k][m] (trans_a)" : "", trans_b && api_dtype != TILE_F8E4M3 && api_dtype != TILE_F8E5M2 ? ", B as [n][k] (trans_b)" : "",
                device ? device : "the default device");
        int rc = 0;
        for (int i = 0; i < nsizes; i++) rc |= bench_api(device, (int)sizes[i], samples, api_dtype, trans_a, trans_b, cfg[0] ? cfg : NULL);
        return rc;
    }
    TileDevice *dev;
    char *err = NULL;
    if (dev_open(device, NULL, &dev, &err)) {
        fprintf(stderr, "gemm_gpu: %s\n", err ? err : "cannot open the device");
        return 1;
    }
    fprintf(json ? stderr : stdout, "gemm_gpu: %s on %s; launched through runtime/device.h (not tile_gemm); time per launch = median over samples of\n"
           "  (batch of back-to-back launches between two dev_synchronize calls, host clock) / batch size\n",
           kernel, dev_backend_name(dev));
    int rc = 0;
    for (int i = 0; i < nsizes; i++) rc |= bench_size(dev, arch, kernel, defs, nd, bm, bn, (int)sizes[i], samples);
    dev_close(dev);
    return rc;
}
