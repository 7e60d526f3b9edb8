/* test_gemm.c - kernels/gemm/gemm.tile on the emulator against a float64 reference (ref_gemm_at):
 * every input type, both transposes, sizes that are not multiples of the
 * tile (1x1x1 up to 256x512x64), alpha/beta/bias/activations, split-K, and
 * num_stages 2-4; fresh random inputs, NaN-poisoned outputs. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/test_rng.h"
#include "ref/ref.h"
#include "support/hostfloat.h"
#include "include/tile/tile.h"
#include "runtime/device.h"

/* the emulator also checks shared memory for races between barriers */
static const DevOptions racecheck = {.emu_racecheck = true};



typedef enum { IN_F16, IN_BF16, IN_TF32, IN_I8, IN_E4M3, IN_E5M2 } InT;
typedef enum { OUT_F32, OUT_F16, OUT_BF16, OUT_I32 } OutT;

typedef struct Case {
    InT in;
    OutT out;
    int m, n, k;
    bool ta, tb;         /* A stored k x m, B stored n x k */
    float alpha, beta;
    bool bias;
    int act;             /* 0 none 1 relu 2 gelu 3 silu */
    int split_k;
    int stages;
    const char *tile;    /* extra defines, e.g. "BM=64" */
    bool spec;           /* 16-aligned leading dims and the specializations tile_gemm would pass:
                          * unit inner strides, multiples of 16 (this turns on cp.async pipelining) */
    bool unit_only;      /* only unit inner strides and m/n/k = 16 specialized, leading dims odd:
                          * the compiler must not assume aligned rows */
} Case;

static const char *kernel_name(const Case *c) {
    static const char *names[6][4] = {{"gemm_f16_f32", "gemm_f16_f16", NULL, NULL},
                                      {"gemm_bf16_f32", NULL, "gemm_bf16_bf16", NULL},
                                      {"gemm_tf32_f32", NULL, NULL, NULL},
                                      {NULL, NULL, NULL, "gemm_i8_i32"},
                                      {"gemm_e4m3_f32", NULL, NULL, NULL},
                                      {"gemm_e5m2_f32", NULL, NULL, NULL}};
    return names[c->in][c->out];
}

static int in_bytes(InT t) { return t == IN_I8 || t == IN_E4M3 || t == IN_E5M2 ? 1 : t == IN_TF32 ? 4 : 2; }

static int out_bytes(OutT t) { return t == OUT_F16 || t == OUT_BF16 ? 2 : 4; }

/* Fill n inputs: stores device bytes in buf and the exact value in val. */
static void make_input(InT t, size_t n, void *buf, double *val) {
    for (size_t i = 0; i < n; i++) {
        double r = urand();
        switch (t) {
        case IN_F16: ((uint16_t *)buf)[i] = f32_to_f16((float)r); val[i] = f16_to_d(((uint16_t *)buf)[i]); break;
        case IN_BF16: ((uint16_t *)buf)[i] = f32_to_bf16((float)r); val[i] = bf16_to_d(((uint16_t *)buf)[i]); break;
        case IN_TF32: ((float *)buf)[i] = (float)r; val[i] = (float)r; break;
        case IN_I8: ((int8_t *)buf)[i] = (int8_t)floor(r * 128); val[i] = ((int8_t *)buf)[i]; break;
        case IN_E4M3:
        case IN_E5M2: { /* finite codes of magnitude below 8: no NaN or infinity */
            bool e4 = t == IN_E4M3;
            uint8_t code = (uint8_t)((uint32_t)((r + 1) * 1e6) % (e4 ? 0x50 : 0x48));
            if (r < 0) code |= 0x80;
            ((uint8_t *)buf)[i] = code;
            val[i] = e4 ? f8e4m3_to_d(code) : f8e5m2_to_d(code);
            break;
        }
        }
    }
}

static double out_value(OutT t, const void *buf, size_t i) {
    switch (t) {
    case OUT_F32: return ((const float *)buf)[i];
    case OUT_F16: return f16_to_d(((const uint16_t *)buf)[i]);
    case OUT_BF16: return bf16_to_d(((const uint16_t *)buf)[i]);
    default: return ((const int32_t *)buf)[i];
    }
}

static void run_case(const Case *c) {
    char defs[8][64];
    const char *defines[9] = {0};
    int nd = 0;
    if (c->split_k > 1) snprintf(defs[nd], 64, "SPLIT_K=%d", c->split_k), defines[nd] = defs[nd], nd++;
    if (c->beta != 0) snprintf(defs[nd], 64, "HAS_BETA=true"), defines[nd] = defs[nd], nd++;
    if (c->bias) snprintf(defs[nd], 64, "HAS_BIAS=true"), defines[nd] = defs[nd], nd++;
    if (c->act) snprintf(defs[nd], 64, "ACT=%d", c->act), defines[nd] = defs[nd], nd++;
    if (c->stages) snprintf(defs[nd], 64, "num_stages=%d", c->stages), defines[nd] = defs[nd], nd++;
    if (c->tile) snprintf(defs[nd], 64, "%s", c->tile), defines[nd] = defs[nd], nd++;
    int BM = 128, BN = 128;
    for (int i = 0; i < nd; i++) {
        if (!strncmp(defines[i], "BM=", 3)) BM = atoi(defines[i] + 3);
        if (!strncmp(defines[i], "BN=", 3)) BN = atoi(defines[i] + 3);
    }
    const char *kn = kernel_name(c);
    cr_assert(kn, "no kernel for this type pair");
    int m = c->m, n = c->n, k = c->k;
    /* leading dimensions padded so strides are not the sizes (multiples of 16 when specializing) */
    int lda = (c->ta ? m : k) + (c->spec ? 16 : 3), ldb = (c->tb ? k : n) + (c->spec ? 32 : 5), ldc = n + (c->spec ? 16 : 7);
    if (c->spec) lda &= ~15, ldb &= ~15, ldc &= ~15;
    if (c->spec && lda < (c->ta ? m : k)) lda += 16;
    if (c->spec && ldb < (c->tb ? k : n)) ldb += 16;
    if (c->spec && ldc < n) ldc += 16;
    const char *specs[12] = {0};
    int ns = 0;
    if (c->unit_only) {
        specs[ns++] = c->ta ? "sam=1" : "sak=1";
        specs[ns++] = c->tb ? "sbk=1" : "sbn=1";
        if (m % 16 == 0) specs[ns++] = "m=16";
        if (n % 16 == 0) specs[ns++] = "n=16";
        if (k % 16 == 0) specs[ns++] = "k=16";
    }
    if (c->spec) {
        specs[ns++] = c->ta ? "sam=1" : "sak=1";
        specs[ns++] = c->tb ? "sbk=1" : "sbn=1";
        specs[ns++] = c->ta ? "sak=16" : "sam=16";
        specs[ns++] = c->tb ? "sbn=16" : "sbk=16";
        specs[ns++] = "scm=16";
        if (m % 16 == 0) specs[ns++] = "m=16";
        if (n % 16 == 0) specs[ns++] = "n=16";
        if (k % 16 == 0) specs[ns++] = "k=16";
    }
    /* TILE_TEST_ARCH=sm_90a with TILE_TEST_DEVICE=emu:sm_90a: the same checks on Hopper code (wgmma) */
    /* launched through the device layer, which passes no tensor maps (tile_launch builds them; the
     * tile_gemm tests run the sm_90a tensor-map loads): per-thread cp.async here */
    tile_compile_options o = {.size = sizeof o, .kernel = kn, .defines = defines, .specialize = specs, .arch = getenv("TILE_TEST_ARCH"),
                              .no_tma = 1};
    tile_compiled comp;
    tile_status st = tile_compile_file(TILE_SOURCE_DIR "/kernels/gemm/gemm.tile", &o, &comp);
    cr_assert_eq(st, TILE_OK, "%s: %s\n%s", kn, tile_status_string(st), comp.diagnostics);

    TileDevice *dev;
    char *err = NULL;
    cr_assert_eq(dev_open(getenv("TILE_TEST_DEVICE") ? getenv("TILE_TEST_DEVICE") : "emu", &racecheck, &dev, &err), DEV_OK, "%s", err ? err : "");
    TileDevModule *mod;
    TileDevFunction *fn;
    cr_assert_eq(dev_module_load_ptx(dev, comp.ptx, &mod), DEV_OK, "%s", dev_last_error(dev));
    cr_assert_eq(dev_module_get_function(mod, kn, &fn), DEV_OK, "%s", dev_last_error(dev));

    size_t a_n = (size_t)(c->ta ? k : m) * lda, b_n = (size_t)(c->tb ? n : k) * ldb, c_n = (size_t)m * ldc;
    int ib = in_bytes(c->in), ob = out_bytes(c->out);
    void *ha = malloc(a_n * ib), *hb = malloc(b_n * ib), *hc = malloc(c_n * ob), *hbias = malloc((size_t)n * ob);
    double *va = malloc(sizeof(double) * a_n), *vb = malloc(sizeof(double) * b_n), *vc = calloc(c_n, sizeof(double));
    double *vbias = calloc((size_t)n, sizeof(double));
    make_input(c->in, a_n, ha, va);
    make_input(c->in, b_n, hb, vb);
    /* C: poisoned, or the beta input; zeros for split-K */
    for (size_t i = 0; i < c_n; i++) {
        double r = urand();
        bool poison = c->beta == 0 && c->split_k <= 1;
        switch (c->out) {
        case OUT_F32: ((float *)hc)[i] = poison ? NAN : c->split_k > 1 ? 0.0f : (float)r; break;
        case OUT_F16: ((uint16_t *)hc)[i] = poison ? 0x7e00 : f32_to_f16((float)r); break;
        case OUT_BF16: ((uint16_t *)hc)[i] = poison ? 0x7fc0 : f32_to_bf16((float)r); break;
        case OUT_I32: ((int32_t *)hc)[i] = poison ? (int32_t)0x80000001 : (int32_t)(r * 100); break;
        }
        vc[i] = out_value(c->out, hc, i);
    }
    for (int j = 0; j < n; j++) {
        double r = urand();
        if (c->out == OUT_F32) ((float *)hbias)[j] = (float)r;
        else if (c->out == OUT_F16) ((uint16_t *)hbias)[j] = f32_to_f16((float)r);
        else if (c->out == OUT_BF16) ((uint16_t *)hbias)[j] = f32_to_bf16((float)r);
        else ((int32_t *)hbias)[j] = (int32_t)(r * 100);
        vbias[j] = out_value(c->out, hbias, (size_t)j);
    }
    uint64_t da, db, dc, dbias;
    cr_assert_eq(dev_malloc(dev, a_n * ib, &da), DEV_OK);
    cr_assert_eq(dev_malloc(dev, b_n * ib, &db), DEV_OK);
    cr_assert_eq(dev_malloc(dev, c_n * ob, &dc), DEV_OK);
    cr_assert_eq(dev_malloc(dev, (size_t)n * ob, &dbias), DEV_OK);
    dev_memcpy_htod(dev, da, ha, a_n * ib);
    dev_memcpy_htod(dev, db, hb, b_n * ib);
    dev_memcpy_htod(dev, dc, hc, c_n * ob);
    dev_memcpy_htod(dev, dbias, hbias, (size_t)n * ob);
    int sam = c->ta ? 1 : lda, sak = c->ta ? lda : 1, sbk = c->tb ? 1 : ldb, sbn = c->tb ? ldb : 1;
    float alpha = c->alpha, beta = c->beta;
    void *params[] = {&da, &db, &dc, &dbias, &m, &n, &k, &sam, &sak, &sbk, &sbn, &ldc, &alpha, &beta, &dc, &dc}; /* f8: scales unused */
    unsigned grid = (unsigned)(((m + BM - 1) / BM) * ((n + BN - 1) / BN));
    unsigned smem = comp.kernels[0].smem_bytes > 48 * 1024 ? (unsigned)comp.kernels[0].smem_bytes : 0; /* dynamic beyond 48 KiB */
    DevStatus ls = dev_launch(fn, grid, (unsigned)(c->split_k > 1 ? c->split_k : 1), 1, (unsigned)(32 * comp.kernels[0].num_warps), 1,
                              1, smem, NULL, params);
    cr_assert_eq(ls, DEV_OK, "%s %dx%dx%d: %s", kn, m, n, k, dev_last_error(dev));
    dev_memcpy_dtoh(dev, hc, dc, c_n * ob);

    ref_gemm_args g = {.m = m, .n = n, .k = k, .a = va, .lda = lda, .trans_a = c->ta, .b = vb, .ldb = ldb, .trans_b = c->tb,
                       .alpha = c->alpha, .beta = c->beta, .c = vc, .ldc = ldc, .bias = c->bias ? vbias : NULL,
                       .activation = (tile_activation)c->act};
    double tol_rel = c->in == IN_TF32 ? 4e-3 : 1e-5;
    double out_rel = c->out == OUT_F16 ? 1.0 / 1024 : c->out == OUT_BF16 ? 1.0 / 128 : 0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < ldc; j++) {
            double got = out_value(c->out, hc, (size_t)i * ldc + j);
            if (j >= n) {
                bool untouched = c->out == OUT_I32 ? ((int32_t *)hc)[(size_t)i * ldc + j] == ((int32_t)vc[(size_t)i * ldc + j])
                                                   : (isnan(got) == isnan(vc[(size_t)i * ldc + j]));
                cr_assert(untouched, "%s wrote column %d past n=%d", kn, j, n);
                continue;
            }
            double wmag, want = ref_gemm_at(&g, i, j, &wmag);
            if (c->split_k > 1) want += vc[(size_t)i * ldc + j];
            if (c->out == OUT_I32) want = nearbyint(want); /* the epilogue rounds to nearest even */
            double tol = tol_rel * wmag + out_rel * fabs(want) + 1e-5 + (c->act >= 2 ? 1e-5 * (1 + wmag) : 0);
            /* alpha a power of two and nothing else: the f32 epilogue is exact, so its rounding is the reference's */
            if (c->out == OUT_I32) tol = (c->alpha == 1 || c->alpha == 0.5f) && !c->act && c->beta == 0 && !c->bias ? 0 : 1;
            cr_assert(fabs(got - want) <= tol, "%s %dx%dx%d ta=%d tb=%d: C[%d][%d] = %.8g, want %.8g (tol %.3g, seed %llu)", kn, m,
                      n, k, c->ta, c->tb, i, j, got, want, tol, (unsigned long long)seed);
        }
    dev_module_unload(mod);
    dev_close(dev);
    tile_compiled_free(&comp);
    free(ha), free(hb), free(hc), free(hbias), free(va), free(vb), free(vc), free(vbias);
}

Test(gemm, f16_shapes, .timeout = 300) {
    seed_rng();
    static const int shapes[][3] = {{1, 1, 1}, {17, 33, 65}, {128, 128, 128}, {256, 512, 64}, {100, 7, 300}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        Case c = {IN_F16, OUT_F32, shapes[s][0], shapes[s][1], shapes[s][2], false, false, 1, 0, false, 0, 1, 0, NULL, false, false};
        run_case(&c);
    }
}

Test(gemm, transposes, .timeout = 300) {
    seed_rng();
    for (int t = 0; t < 4; t++) {
        Case c = {IN_BF16, OUT_F32, 70, 90, 80, t & 1, (t >> 1) & 1, 1, 0, false, 0, 1, 0, NULL, false, false};
        run_case(&c);
    }
}

Test(gemm, every_type, .timeout = 300) {
    seed_rng();
    Case cs[] = {
        {IN_F16, OUT_F16, 65, 129, 48, false, false, 1, 0, false, 0, 1, 0, NULL, false, false},
        {IN_BF16, OUT_BF16, 65, 129, 48, false, true, 1, 0, false, 0, 1, 0, NULL, false, false},
        {IN_TF32, OUT_F32, 65, 129, 48, true, false, 1, 0, false, 0, 1, 0, NULL, false, false},
        {IN_I8, OUT_I32, 65, 129, 100, false, false, 1, 0, false, 0, 1, 0, NULL, false, false},
        /* half of an odd sum is a tie: rounded to even, not truncated */
        {IN_I8, OUT_I32, 65, 129, 100, false, false, 0.5f, 0, false, 0, 1, 0, NULL, false, false},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) run_case(&cs[i]);
}

Test(gemm, f8_inputs, .timeout = 300) {
    seed_rng();
    Case cs[] = {
        {IN_E4M3, OUT_F32, 70, 40, 96, false, false, 1, 0, false, 0, 1, 0, NULL, false, false},
        {IN_E5M2, OUT_F32, 33, 64, 64, false, true, 0.25f, 0, true, 0, 1, 0, NULL, false, false},
        {IN_E4M3, OUT_F32, 64, 64, 128, false, false, 1, 0, false, 0, 1, 0, NULL, true, false},
        /* wider K steps (native f8 wgmma reads 64- and 128-byte rows on sm_90a) */
        {IN_E4M3, OUT_F32, 130, 72, 300, false, false, 1, 0, false, 0, 1, 0, "BK=64", true, false},
        {IN_E5M2, OUT_F32, 70, 136, 260, false, true, 1, 0, false, 0, 1, 0, "BK=128", false, false},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) run_case(&cs[i]);
}

Test(gemm, epilogue_and_split_k, .timeout = 300) {
    seed_rng();
    Case cs[] = {
        {IN_F16, OUT_F32, 50, 60, 70, false, false, 0.5f, 2.0f, true, 1, 1, 0, NULL, false, false},
        {IN_F16, OUT_F16, 50, 60, 70, false, false, 1.5f, 0, true, 2, 1, 0, NULL, false, false},
        {IN_BF16, OUT_F32, 50, 60, 70, false, false, 1, 0, false, 3, 1, 0, NULL, false, false},
        {IN_F16, OUT_F32, 40, 50, 300, false, false, 1, 0, false, 0, 3, 0, NULL, false, false},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) run_case(&cs[i]);
}

Test(gemm, stages_and_tiles, .timeout = 300) {
    seed_rng();
    for (int s = 2; s <= 4; s++) {
        Case c = {IN_F16, OUT_F32, 96, 80, 200, false, false, 1, 0, false, 0, 1, s, NULL, false, false};
        run_case(&c);
    }
    Case small = {IN_BF16, OUT_F32, 33, 47, 70, false, false, 1, 0, false, 0, 1, 0, "BM=32", false, false};
    run_case(&small);
    Case wide = {IN_F16, OUT_F32, 33, 47, 70, false, false, 1, 0, false, 0, 1, 0, "BN=64", false, false};
    run_case(&wide);
}

Test(gemm, pipelined, .timeout = 300) {
    seed_rng();
    /* specialized like tile_gemm: 16-byte cp.async into num_stages buffers */
    for (int st = 2; st <= 4; st++) {
        Case c = {IN_F16, OUT_F32, 100, 64, 160, false, false, 1, 0, false, 0, 1, st, NULL, true, false}; /* 4 stages: 64 KiB, dynamic */
        run_case(&c);
    }
    Case cs[] = {
        {IN_BF16, OUT_BF16, 128, 128, 128, false, false, 1, 0, false, 0, 1, 0, NULL, true, false},
        {IN_F16, OUT_F32, 64, 64, 16, false, false, 1, 0, false, 0, 1, 4, NULL, true, false}, /* fewer iterations than stages */
        {IN_F16, OUT_F32, 80, 48, 48, false, false, 1, 0, false, 0, 1, 3, NULL, true, false}, /* a partial last K tile */
        {IN_BF16, OUT_F32, 48, 80, 96, true, false, 1, 0, true, 1, 1, 0, NULL, true, false},
        {IN_F16, OUT_F32, 48, 80, 96, false, true, 1, 0, false, 0, 1, 0, NULL, true, false},
        /* A stored k x m (M contiguous): its stages read with ldmatrix.trans / an M-major wgmma; tf32 with
         * 32-bit loads (on sm_90a into the wgmma's A registers beside a K-major B; through registers beside
         * a [K][N] one), f8 on sm_90a a byte a load into the wgmma's A registers, i8 through registers.
         * f8 beside a K-major B on sm_90a: the wgmma stays in flight, two loop bodies a trip reading A from
         * registers of their own; 3 and 4 full K steps (the loop left between the bodies or at the top),
         * then a partial one or not */
        {IN_F16, OUT_F32, 80, 48, 112, true, true, 1, 0, false, 0, 1, 0, NULL, true, false},
        {IN_TF32, OUT_F32, 48, 64, 48, true, false, 1, 0, false, 0, 1, 0, NULL, true, false},
        {IN_TF32, OUT_F32, 80, 40, 56, true, true, 1, 0, false, 0, 1, 0, NULL, true, false},
        {IN_E4M3, OUT_F32, 48, 40, 96, true, true, 1, 0, false, 0, 1, 0, NULL, true, false},
        {IN_E5M2, OUT_F32, 48, 24, 136, true, true, 1, 0, false, 0, 1, 0, NULL, true, false},
        /* 8-bit B [K][N] at 128-byte K tiles (64 bytes a thread): on sm_90a its stages N-major, copied K-major by
         * the dot each K step; A stored either way, K steps 2 full and a partial one */
        {IN_E5M2, OUT_F32, 48, 72, 300, true, false, 1, 0, false, 0, 1, 0, "BK=128", true, false},
        {IN_I8, OUT_I32, 40, 48, 300, false, false, 1, 0, false, 0, 1, 0, "BK=128", true, false},
        {IN_E5M2, OUT_F32, 80, 24, 160, true, false, 1, 0, false, 0, 1, 0, NULL, true, false},
        {IN_I8, OUT_I32, 48, 64, 96, true, false, 1, 0, false, 0, 1, 0, NULL, true, false},
        {IN_TF32, OUT_F32, 64, 48, 64, false, false, 1, 0, false, 0, 1, 0, NULL, true, false},
        {IN_I8, OUT_I32, 64, 48, 128, false, false, 1, 0, false, 0, 1, 0, NULL, true, false},
        {IN_I8, OUT_I32, 64, 48, 128, false, true, 1, 0, false, 0, 1, 0, NULL, true, false},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) run_case(&cs[i]);
}

Test(gemm, pipelined_ptx) {
    const char *specs[] = {"sak=1", "sbn=1", "m=16", "n=16", "k=16", "sam=16", "sbk=16", "scm=16", NULL};
    tile_compile_options o = {.kernel = "gemm_bf16_f32", .specialize = specs};
    tile_compiled c;
    cr_assert_eq(tile_compile_file(TILE_SOURCE_DIR "/kernels/gemm/gemm.tile", &o, &c), TILE_OK, "%s", c.diagnostics);
    cr_expect(strstr(c.ptx, "mma.sync.aligned.m16n8k16"), "no mma.sync");
    cr_expect(strstr(c.ptx, "ldmatrix.sync.aligned"), "no ldmatrix");
    cr_expect(strstr(c.ptx, "cp.async.cg.shared.global"), "no 16-byte cp.async");
    cr_expect(strstr(c.ptx, "cp.async.wait_group 1"), "3 stages should leave one group in flight");
    tile_compiled_free(&c);
}

/* sm_90a: the same kernel's dots are wgmma.mma_async on descriptors of the pipelined tiles
 * (m64n128k16, B MN-major with imm-trans-b), after fence.proxy.async, waited before the epilogue;
 * i8 reads B K-major; tf32 too (wgmma's only 32-bit form): its [K][N] B is copied element by element
 * (4-byte cp.async) into a K-major stage, A still through a tensor map. */
Test(gemm, pipelined_ptx_sm90a) {
    const char *specs[] = {"sak=1", "sbn=1", "m=16", "n=16", "k=16", "sam=16", "sbk=16", "scm=16", NULL};
    static const struct { const char *kernel, *want, *not_want; } cs[] = {
        {"gemm_bf16_f32", "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16", "mma.sync"},
        {"gemm_f16_f16", "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16", "mma.sync"},
        {"gemm_i8_i32", "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8", "mma.sync"},
        {"gemm_tf32_f32", "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32", "mma.sync"},
        /* f8 natively: no widening to f16 */
        {"gemm_e4m3_f32", "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3", "mma.sync"},
        {"gemm_e5m2_f32", "wgmma.mma_async.sync.aligned.m64n128k32.f32.e5m2.e5m2", "cvt.f16"},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        tile_compile_options o = {.size = sizeof o, .kernel = cs[i].kernel, .specialize = specs, .arch = "sm_90a"};
        tile_compiled c;
        cr_assert_eq(tile_compile_file(TILE_SOURCE_DIR "/kernels/gemm/gemm.tile", &o, &c), TILE_OK, "%s", c.diagnostics);
        cr_expect(strstr(c.ptx, cs[i].want), "%s: no %s", cs[i].kernel, cs[i].want);
        cr_expect(!strstr(c.ptx, cs[i].not_want), "%s: %s in the PTX", cs[i].kernel, cs[i].not_want);
        if (strstr(cs[i].want, "wgmma")) {
            /* A through a tensor map (an mbarrier says it has landed), B too unless the dot re-stages it
             * K-major (i8 and f8 with a [K][N] B: a generic-proxy write, fenced) */
            cr_expect(strstr(c.ptx, "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"),
                      "%s: no tensor-map copy", cs[i].kernel);
            cr_expect(strstr(c.ptx, "mbarrier.try_wait.parity.shared::cta.b64"), "%s: no mbarrier wait", cs[i].kernel);
            cr_expect(strstr(c.ptx, ".param .align 64 .b8 gemm_"), "%s: no tensor-map parameter", cs[i].kernel);
            cr_expect(!strstr(c.ptx, "cp.async.cg.shared.global"), "%s: per-thread cp.async left", cs[i].kernel);
            bool tf32 = strstr(cs[i].kernel, "tf32");
            bool b_restaged = tf32 || strstr(cs[i].kernel, "i8") || strstr(cs[i].kernel, "e4m3") || strstr(cs[i].kernel, "e5m2");
            cr_expect_eq(strstr(c.ptx, "cp.async.ca.shared.global") != NULL && strstr(c.ptx, "], 4, %r") != NULL, tf32,
                         "%s: 4-byte copies of B to its K-major stage", cs[i].kernel);
            cr_expect(strstr(c.kernels[0].tensor_maps, "base $0, esize") &&
                          (b_restaged || strstr(c.kernels[0].tensor_maps, "; base $1, esize")),
                      "%s: tensor maps '%s'", cs[i].kernel, c.kernels[0].tensor_maps);
            cr_expect(strstr(c.ptx, "wgmma.wait_group.sync.aligned 0"), "%s: no wgmma wait", cs[i].kernel);
            cr_expect(strstr(c.ptx, ".align 1024"), "%s: shared tiles not 1024-byte aligned", cs[i].kernel);
        }
        tile_compiled_free(&c);
        /* no_tma: per-thread cp.async, published to wgmma with a proxy fence */
        if (strstr(cs[i].want, "wgmma")) {
            o.no_tma = 1;
            cr_assert_eq(tile_compile_file(TILE_SOURCE_DIR "/kernels/gemm/gemm.tile", &o, &c), TILE_OK, "%s", c.diagnostics);
            cr_expect(strstr(c.ptx, "cp.async.cg.shared.global") && !strstr(c.ptx, "cp.async.bulk.tensor") && !*c.kernels[0].tensor_maps,
                      "%s: no_tma", cs[i].kernel);
            cr_expect(strstr(c.ptx, "fence.proxy.async.shared::cta"), "%s: no proxy fence before wgmma", cs[i].kernel);
            tile_compiled_free(&c);
        }
    }
}

/* A transposed (sam=1: M contiguous), as tile_gemm's trans_a launches it: its tiles go through the
 * cp.async ring like B's (a second shared buffer, no register tile of A staged by the dot each
 * iteration), read back with ldmatrix.trans on sm_80 and by an M-major wgmma (imm-trans-a 1) on
 * sm_90a, whose group then stays in flight across iterations (wait_group 1).  wgmma reads tf32 and f8
 * A from shared memory K-major only: on sm_90a their stages are loaded into the wgmma's A registers
 * (`}, {%r`: A given as four registers), whose group then waits (the next iteration's fragments would
 * overwrite registers it still reads); tf32's B is K-major as loaded with trans_b (sbk=1), f8's [K][N]
 * B is still staged by the dot.  A tf32 [K][N] B is copied into its K-major stage element by element,
 * and beside those copies A keeps the register path (software_pipeline.c: ptxas spilled with both).  i8 keeps A in registers (ldmatrix.trans moves 16-bit elements; wgmma
 * goes through registers only for f8, which assign_layout gives a wgmma form it checked).  The
 * numbers: gemm/pipelined and api_persistent_sm90a. */
/* The innermost PTX loops (a label and a later branch back to it) that issue wgmma.mma_async: how many, and
 * in how many of them `bodies` bodies each commit a group, leaving it in flight (wait_group 1) or not. */
static void wgmma_loops(const char *ptx, int bodies, bool in_flight, int *nloops, int *nmatch) {
    enum { MAXL = 512 };
    const char *lab[MAXL];
    int nlab = 0, nr = 0;
    struct { const char *from, *to; } r[64];
    for (const char *p = ptx; (p = strstr(p, "$L__BB")); p++) {
        size_t len = strspn(p + 6, "0123456789_") + 6;
        if (p[len] == ':' && p[-1] == '\n' && nlab < MAXL) {
            lab[nlab++] = p;
            continue;
        }
        for (int j = 0; j < nlab && nr < 64; j++)
            if (!strncmp(lab[j], p, len) && lab[j][len] == ':') r[nr].from = lab[j], r[nr++].to = p;
    }
    *nloops = *nmatch = 0;
    for (int i = 0; i < nr; i++) {
        size_t n = (size_t)(r[i].to - r[i].from);
        char *body = strndup(r[i].from, n);
        bool inner = strstr(body, "wgmma.mma_async") != NULL;
        for (int j = 0; j < nr && inner; j++)
            if (j != i && r[j].from >= r[i].from && r[j].to <= r[i].to && (r[j].from != r[i].from || r[j].to != r[i].to)) {
                char *sub = strndup(r[j].from, (size_t)(r[j].to - r[j].from));
                inner = !strstr(sub, "wgmma.mma_async");
                free(sub);
            }
        if (inner) {
            int commits = 0, waits = 0;
            for (const char *q = body; (q = strstr(q, "wgmma.commit_group")); q++) commits++;
            for (const char *q = body; (q = strstr(q, "wgmma.wait_group.sync.aligned 1;")); q++) waits++;
            ++*nloops;
            *nmatch += commits == bodies && waits == (in_flight ? bodies : 0);
        }
        free(body);
    }
}

Test(gemm, pipelined_transposed_a_ptx) {
    static const struct { const char *arch, *kernel, *sb; int rings; const char *want, *not_want, *def; } cs[] = {
        {"sm_80", "gemm_f16_f32", "sbn=1", 2, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", "st.shared", NULL},
        {"sm_80", "gemm_bf16_f32", "sbk=1", 2, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", "st.shared", NULL},
        {"sm_80", "gemm_tf32_f32", "sbn=1", 2, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", "st.shared", NULL},
        {"sm_80", "gemm_i8_i32", "sbk=1", 1, "mma.sync.aligned.m16n8k32", NULL, NULL},
        {"sm_90a", "gemm_f16_f32", "sbn=1", 2, "p, 1, 1, 1, 1;", "mma.sync", NULL},
        {"sm_90a", "gemm_bf16_bf16", "sbk=1", 2, "p, 1, 1, 1, 0;", "mma.sync", NULL},
        {"sm_90a", "gemm_tf32_f32", "sbn=1", 1, "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32", NULL, NULL},
        {"sm_90a", "gemm_tf32_f32", "sbk=1", 2, "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32", "st.shared", NULL},
        {"sm_90a", "gemm_e4m3_f32", "sbk=1", 2, "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3", "st.shared", NULL},
        {"sm_90a", "gemm_e5m2_f32", "sbn=1", 1, "wgmma.mma_async.sync.aligned.m64n128k32.f32.e5m2.e5m2", NULL, NULL},
        /* B [K][N] too, 64 bytes of it a thread: pipelined N-major and copied K-major by the dot */
        {"sm_90a", "gemm_e4m3_f32", "sbn=1", 2, "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3", NULL, "BK=128"},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        bool tb = !strcmp(cs[i].sb, "sbk=1");
        const char *specs[] = {"sam=1", cs[i].sb, "sak=16", tb ? "sbn=16" : "sbk=16", "m=16", "n=16", "k=16", "scm=16", NULL};
        const char *defs[] = {cs[i].def, NULL};
        tile_compile_options o = {.size = sizeof o, .kernel = cs[i].kernel, .specialize = specs, .arch = cs[i].arch, .defines = defs};
        tile_compiled c;
        cr_assert_eq(tile_compile_file(TILE_SOURCE_DIR "/kernels/gemm/gemm.tile", &o, &c), TILE_OK, "%s", c.diagnostics);
        int rings = 0, bufs[4]; /* the distinct buffers that copies (cp.async or tensor-map) fill */
        for (int w = 0; w < 2; w++)
            for (const char *p = c.tir; (p = strstr(p, w ? "tma_load %" : "async_copy %")); p++) {
                int b = atoi(strchr(p, '%') + 1), seen = 0;
                for (int j = 0; j < rings; j++) seen |= bufs[j] == b;
                if (!seen && rings < 4) bufs[rings++] = b;
            }
        cr_expect_eq(rings, cs[i].rings, "%s %s: %d pipelined operands, want %d", cs[i].arch, cs[i].kernel, rings, cs[i].rings);
        cr_expect(strstr(c.ptx, cs[i].want), "%s %s: no %s", cs[i].arch, cs[i].kernel, cs[i].want);
        /* the main loop: from its first mbarrier wait (tensor maps) or cp.async.wait_group to the drain after it */
        const char *loop = strstr(c.ptx, "mbarrier.try_wait.parity");
        if (!loop) loop = strstr(c.ptx, "cp.async.wait_group 1");
        const char *end = loop ? strstr(loop, "cp.async.wait_group 0") : NULL;
        if (!end && loop) end = strstr(loop, "wgmma.wait_group.sync.aligned 0");
        cr_assert(loop && end, "%s %s: no main loop found", cs[i].arch, cs[i].kernel);
        if (cs[i].not_want) {
            const char *bad = strstr(loop, cs[i].not_want);
            cr_expect(!bad || bad > end, "%s %s: %s in the main loop", cs[i].arch, cs[i].kernel, cs[i].not_want);
        }
        if (!strcmp(cs[i].arch, "sm_90a")) {
            bool a_regs = strstr(cs[i].kernel, "e4m3") || strstr(cs[i].kernel, "e5m2") || (strstr(cs[i].kernel, "tf32") && cs[i].rings == 2);
            const char *areg = strstr(loop, "}, {%r");
            cr_expect_eq(areg && areg < end, a_regs, "%s %s: the wgmma's A %s registers", cs[i].kernel, cs[i].sb, a_regs ? "not in" : "in");
            /* in flight where both operands are stages of the ring, but for a tf32 A in registers (ptxas spilled
             * with both its register sets live); an f8 A in registers with two bodies a trip, each wgmma
             * reading the A registers of its own */
            /* an 8-bit B kept [K][N] (its stage N-major) is copied K-major by the dot each iteration: 4x4-byte
             * squares transposed with prmt, 16-byte stores; that wgmma waits */
            bool f8 = strstr(cs[i].kernel, "e4m3") || strstr(cs[i].kernel, "e5m2"), restaged = f8 && !tb && cs[i].rings == 2;
            if (restaged) {
                const char *prmt = strstr(loop, "prmt.b32"), *st = strstr(loop, "st.shared.v4.b32");
                cr_expect(prmt && prmt < end && st && st < end, "%s %s: B not transposed with prmt and 16-byte stores", cs[i].kernel,
                          cs[i].sb);
            }
            bool in_flight = cs[i].rings == 2 && !(a_regs && strstr(cs[i].kernel, "tf32")) && !restaged;
            int loops, two, bodies = in_flight && a_regs ? 2 : 1;
            cr_expect_eq(strstr(c.ptx, "wgmma.wait_group.sync.aligned 1") != NULL, in_flight, "%s %s: the wgmma %s in flight",
                         cs[i].kernel, cs[i].sb, in_flight ? "stays" : "does not stay");
            wgmma_loops(c.ptx, bodies, in_flight, &loops, &two);
            cr_expect(loops >= 1 && two == loops, "%s %s: %d of %d wgmma loops with %d bodies a trip", cs[i].kernel, cs[i].sb, two,
                      loops, bodies);
        }
        tile_compiled_free(&c);
    }
}

/* sm_90a's 128 x 256 tiles as tile_gemm launches them (two computing warpgroups, a producer, persistent):
 * the whole C tile does not fit in shared memory beside the ring, so the epilogue goes through tensor maps a
 * column slice at a time (f32: four 64-column slices of two 128-byte panels; 16-bit: two 128-column
 * ones), and no per-thread store of C is left; api_persistent_sm90a checks the numbers (hopper_gemm). */
Test(gemm, wide_tile_sliced_epilogue_sm90a) {
    const char *specs[] = {"sak=1", "sbn=1", "m=16", "n=16", "k=16", "sam=16", "sbk=16", "scm=16", NULL};
    const char *defs[] = {"BM=128", "BN=256", "BK=64", "num_warps=8", "num_stages=3", "warp_specialize=1", "PERSISTENT=1", NULL};
    static const struct { const char *kernel; int copies; } cs[] = {{"gemm_f16_f32", 8}, {"gemm_bf16_bf16", 4}, {"gemm_f16_f16", 4}};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        tile_compile_options o = {.size = sizeof o, .kernel = cs[i].kernel, .specialize = specs, .defines = defs, .arch = "sm_90a"};
        tile_compiled c;
        cr_assert_eq(tile_compile_file(TILE_SOURCE_DIR "/kernels/gemm/gemm.tile", &o, &c), TILE_OK, "%s", c.diagnostics);
        int n = 0;
        for (const char *p = c.ptx; (p = strstr(p, "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group")); p++) n++;
        cr_expect_eq(n, cs[i].copies, "%s: %d tensor-map stores of C, want %d", cs[i].kernel, n, cs[i].copies);
        cr_expect(!strstr(c.ptx, "st.global.v"), "%s: per-thread stores of C left", cs[i].kernel);
        tile_compiled_free(&c);
    }
}

/* Block scales (SCALE=3) at tile_gemm's configurations: sm_90a reads e4m3 natively (a wgmma K block a
 * step), sm_89 too (mma.sync m16n8k32 on the bytes, PTX 8.4), sm_80 widens to f16 for mma.sync; a tile
 * straddling scale blocks is a compile error. */
Test(gemm, block_scales_ptx) {
    const char *specs[] = {"sak=1", "sbk=1", "m=16", "n=16", "k=16", "sam=16", "sbn=16", "scm=16", NULL};
    static const struct { const char *arch, *bk, *want, *not_want; } cs[] = {
        {"sm_90a", "BK=128", "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3", "mma.sync"},
        {"sm_89", "BK=32", "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", "cvt.rn.f16x2.e4m3x2"},
        {"sm_80", "BK=32", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "wgmma"},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const char *defs[] = {"SCALE=3", "BM=128", "BN=128", cs[i].bk, "num_warps=8", NULL};
        tile_compile_options o = {.kernel = "gemm_e4m3_f32", .defines = defs, .specialize = specs, .arch = cs[i].arch};
        tile_compiled c;
        cr_assert_eq(tile_compile_file(TILE_SOURCE_DIR "/kernels/gemm/gemm.tile", &o, &c), TILE_OK, "%s", c.diagnostics);
        cr_expect(strstr(c.ptx, cs[i].want), "%s: no %s", cs[i].arch, cs[i].want);
        cr_expect(!strstr(c.ptx, cs[i].not_want), "%s: %s in the PTX", cs[i].arch, cs[i].not_want);
        if (!strcmp(cs[i].arch, "sm_89")) cr_expect(strstr(c.ptx, ".version 8.4"), "sm_89: f8 mma needs PTX 8.4");
        tile_compiled_free(&c);
    }
    const char *wide[] = {"SCALE=3", "BN=256", NULL};
    tile_compile_options o = {.kernel = "gemm_e4m3_f32", .defines = wide};
    tile_compiled c;
    cr_assert_neq(tile_compile_file(TILE_SOURCE_DIR "/kernels/gemm/gemm.tile", &o, &c), TILE_OK);
    cr_expect(strstr(c.diagnostics, "static_assert failed") && strstr(c.diagnostics, "gemm.tile:"), "%s", c.diagnostics);
    tile_compiled_free(&c);
}

/* dot(a, trans(b)) with b an [N][K] tile: software pipelining copies b's tiles as loaded
 * and the dot reads them K-contiguous (the attention Q.K^T pattern); likewise dot(trans(a), b)
 * with a a [K][M] tile: the dot reads its stages M-contiguous (ldmatrix.trans; sm_90a: imm-trans-a). */
static void pipelined_trans_case(bool ta) {
    const char *src_b = "@num_stages(3)\n"
                        "kernel mmt(a: *f16, b: *f16, c: *f32, k: i32) {\n"
                        "  let rm = arange(0, 64);\n  let rn = arange(0, 64);\n  let rk = arange(0, 32);\n"
                        "  let acc = zeros([64, 64], f32);\n"
                        "  for k0 in range(0, k, 32) {\n"
                        "    let ta = load(a + rm[:, None] * k + (k0 + rk)[None, :]);\n"
                        "    let tb = load(b + rn[:, None] * k + (k0 + rk)[None, :]);\n"
                        "    acc = dot(ta, trans(tb), acc);\n"
                        "  }\n"
                        "  store(c + rm[:, None] * 64 + rn[None, :], acc);\n}\n";
    const char *src_a = "@num_stages(3)\n"
                        "kernel mmt(a: *f16, b: *f16, c: *f32, k: i32) {\n"
                        "  let rm = arange(0, 64);\n  let rn = arange(0, 64);\n  let rk = arange(0, 32);\n"
                        "  let acc = zeros([64, 64], f32);\n"
                        "  for k0 in range(0, k, 32) {\n"
                        "    let ta = load(a + (k0 + rk)[:, None] * 64 + rm[None, :]);\n"
                        "    let tb = load(b + (k0 + rk)[:, None] * 64 + rn[None, :]);\n"
                        "    acc = dot(trans(ta), tb, acc);\n"
                        "  }\n"
                        "  store(c + rm[:, None] * 64 + rn[None, :], acc);\n}\n";
    const char *specs[] = {"k=16", NULL};
    tile_compile_options o = {.size = sizeof o, .specialize = specs, .arch = getenv("TILE_TEST_ARCH"), .no_tma = 1}; /* the device layer passes no tensor maps */
    tile_compiled comp;
    cr_assert_eq(tile_compile_source("mmt.tile", ta ? src_a : src_b, &o, &comp), TILE_OK, "%s", comp.diagnostics);
    int copies = 0;
    for (const char *p = comp.tir; (p = strstr(p, "local_alloc")); p++) copies++;
    cr_assert_eq(copies, 2, "both operands should be pipelined:\n%s", comp.tir);
    cr_assert(!strstr(comp.tir, "trans "), "the trans should be folded into the stage's layout:\n%s", comp.tir);
    TileDevice *dev;
    char *err = NULL;
    cr_assert_eq(dev_open(getenv("TILE_TEST_DEVICE") ? getenv("TILE_TEST_DEVICE") : "emu", &racecheck, &dev, &err), DEV_OK);
    TileDevModule *mod;
    TileDevFunction *fn;
    cr_assert_eq(dev_module_load_ptx(dev, comp.ptx, &mod), DEV_OK, "%s", dev_last_error(dev));
    cr_assert_eq(dev_module_get_function(mod, "mmt", &fn), DEV_OK);
    int k = 96;
    uint16_t ha[64 * 96], hb[64 * 96];
    double va[64 * 96], vb[64 * 96];
    for (int i = 0; i < 64 * 96; i++) {
        ha[i] = f32_to_f16((float)urand()), va[i] = f16_to_d(ha[i]);
        hb[i] = f32_to_f16((float)urand()), vb[i] = f16_to_d(hb[i]);
    }
    uint64_t da, db, dc;
    dev_malloc(dev, sizeof ha, &da);
    dev_malloc(dev, sizeof hb, &db);
    dev_malloc(dev, 64 * 64 * 4, &dc);
    dev_memcpy_htod(dev, da, ha, sizeof ha);
    dev_memcpy_htod(dev, db, hb, sizeof hb);
    dev_memset_d8(dev, dc, 0xff, 64 * 64 * 4);
    void *params[] = {&da, &db, &dc, &k};
    unsigned smem = comp.kernels[0].smem_bytes > 48 * 1024 ? (unsigned)comp.kernels[0].smem_bytes : 0;
    cr_assert_eq(dev_launch(fn, 1, 1, 1, 128, 1, 1, smem, NULL, params), DEV_OK, "%s", dev_last_error(dev));
    float hc[64 * 64];
    dev_memcpy_dtoh(dev, hc, dc, sizeof hc);
    double ref[64 * 64];
    ref_gemm_args g = {.m = 64, .n = 64, .k = k, .a = va, .lda = ta ? 64 : k, .trans_a = ta, .b = vb, .ldb = ta ? 64 : k,
                       .trans_b = !ta, .alpha = 1};
    ref_gemm(&g, ref, 64, NULL);
    for (int i = 0; i < 64; i++)
        for (int j = 0; j < 64; j++) {
            double want = ref[i * 64 + j];
            cr_assert(fabs(hc[i * 64 + j] - want) <= 1e-4 * (1 + fabs(want)), "trans_a=%d: C[%d][%d] = %g, want %g (seed %llu)", ta, i,
                      j, hc[i * 64 + j], want, (unsigned long long)seed);
        }
    dev_module_unload(mod);
    dev_close(dev);
    tile_compiled_free(&comp);
}

Test(gemm, pipelined_transposed_b, .timeout = 120) {
    seed_rng();
    pipelined_trans_case(false);
}

Test(gemm, pipelined_transposed_a, .timeout = 120) {
    seed_rng();
    pipelined_trans_case(true);
}

Test(gemm, unit_strides_odd_rows, .timeout = 120) {
    seed_rng();
    /* rows start at odd element offsets: vector accesses along a row would be misaligned */
    Case c = {IN_F16, OUT_F16, 32, 48, 16, false, false, 1, 0, false, 0, 1, 0, NULL, false, true};
    run_case(&c);
    Case d = {IN_BF16, OUT_F32, 64, 64, 64, false, false, 1, 0, false, 0, 1, 0, NULL, false, true};
    run_case(&d);
}

/* The error an f8 GEMM may have, over the sum of |products|: the emulator accumulates f8 wgmma and
 * mma.sync products exactly in f32 (1e-5: rounding); a GPU's f8 tensor cores keep about 14 bits of
 * what they accumulate (DeepSeek-V3's measurement on an H800).  On an H200 an element was off by about
 * 1e-3 of its value after 128-wide K blocks accumulated in the wgmma (block scales, FAST_ACCUM=1),
 * past 5e-4 of the sum of |products|: 4e-3, which a wrong scale or a lost K step still exceeds. */
static double f8_accum_eps(tile_context *ctx) {
    tile_device_properties p;
    cr_assert_eq(tile_context_get_properties(ctx, &p), TILE_OK);
    return p.is_emulator ? 1e-5 : 4e-3;
}

/* The scale of product term (i, p, j) of an f8 GEMM with scales: one each, per row of A and
 * column of B, or per block (TILE_SCALE_BLOCK: a_scale [m][cdiv(k, 128)]; b_scale per 128 x 128
 * block of B as stored, [cdiv(k, 128)][cdiv(n, 128)] or, trans_b, [cdiv(n, 128)][cdiv(k, 128)]).
 * mutate 1 reads b_scale in the other B layout, 2 the next K block's a_scale: a kernel that
 * indexed the scales that way must fail the checks (scale_case asserts the tests would see it). */
static double scale_at(int mode, const float *sa, const float *sb, int n, int k, int trans_b, int i, int p, int j, int mutate) {
    if (mode == TILE_SCALE_NONE) return 1;
    if (mode == TILE_SCALE_TENSOR) return (double)sa[0] * sb[0];
    if (mode == TILE_SCALE_CHANNEL) return (double)sa[i] * sb[j];
    int nkb = (k + 127) / 128, nnb = (n + 127) / 128, kb = p / 128, cb = j / 128;
    int ka = mutate == 2 ? (kb + 1) % nkb : kb;
    bool tb = mutate == 1 ? !trans_b : trans_b;
    return (double)sa[(size_t)i * nkb + ka] * sb[tb ? (size_t)cb * nkb + kb : (size_t)kb * nnb + cb];
}

/* tile_gemm with f8 inputs and dequantization scales (per tensor, per channel, per 128 x 128
 * block), through the public API: D = alpha * scaled (A x B) + beta C + bias against float64 at
 * odd sizes, A m x k and k x m, B k x n and n x k, outputs NaN-poisoned.  With TILE_TEST_DEVICE=emu:sm_90a
 * (hopper_gemm) the context compiles sm_90a code: native f8 wgmma.  config: tile_gemm_with_config's, or NULL. */
static void api_f8_case(tile_context *ctx, tile_dtype dt, int m, int n, int k, int trans, int mode, float beta, bool bias,
                        const char *const *config) {
    int trans_b = trans & 1, trans_a = trans >> 1; /* trans: bit 0 B stored n x k, bit 1 A stored k x m */
    bool e4 = dt == TILE_F8E4M3;
    bool aligned = m % 16 == 0 && n % 16 == 0 && k % 16 == 0; /* then the 16-byte vector configuration */
    int lda = (trans_a ? m : k) + 16, ldb = (trans_b ? k : n) + 32, ldc = config ? n : n + (aligned ? 16 : 8); /* split-K wants C contiguous */
    int nkb = (k + 127) / 128, nnb = (n + 127) / 128;
    size_t na = (size_t)(trans_a ? k : m) * lda, nb = (size_t)(trans_b ? n : k) * ldb, nc = (size_t)m * ldc;
    size_t nsa = mode == TILE_SCALE_BLOCK ? (size_t)m * nkb : (size_t)m, nsb = mode == TILE_SCALE_BLOCK ? (size_t)nkb * nnb : (size_t)n;
    uint8_t *ha = malloc(na), *hb = malloc(nb);
    float *hc = malloc(nc * 4), *hc0 = malloc(nc * 4), *hsa = malloc(nsa * 4), *hsb = malloc(nsb * 4), *hbias = malloc((size_t)n * 4);
    for (size_t i = 0; i < na; i++) ha[i] = (uint8_t)(irand(0x70) | (irand(2) << 7)); /* finite, below 8 (e4m3) */
    for (size_t i = 0; i < nb; i++) hb[i] = (uint8_t)(irand(0x70) | (irand(2) << 7));
    for (size_t i = 0; i < nc; i++) hc0[i] = (float)urand();
    for (size_t i = 0; i < nsa; i++) hsa[i] = (float)(0.5 + (urand() + 1) * 2);
    for (size_t i = 0; i < nsb; i++) hsb[i] = (float)(0.01 + (urand() + 1) * 0.05);
    for (int i = 0; i < n; i++) hbias[i] = (float)urand();
    tile_devptr da, db, dc, dsa, dsb, dbias;
    cr_assert_eq(tile_malloc(ctx, na, &da), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, nb, &db), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, nc * 4, &dc), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, nsa * 4, &dsa), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, nsb * 4, &dsb), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, (size_t)n * 4, &dbias), TILE_OK);
    tile_memcpy_htod(ctx, da, ha, na);
    tile_memcpy_htod(ctx, db, hb, nb);
    tile_memcpy_htod(ctx, dsa, hsa, nsa * 4);
    tile_memcpy_htod(ctx, dsb, hsb, nsb * 4);
    tile_memcpy_htod(ctx, dbias, hbias, (size_t)n * 4);
    if (beta != 0) tile_memcpy_htod(ctx, dc, hc0, nc * 4);
    else tile_memset(ctx, dc, 0xff, nc * 4); /* NaN */
    float alpha = 0.75f;
    tile_gemm_args g = {.size = sizeof g, .m = m, .n = n, .k = k, .a = da, .lda = lda, .trans_a = trans_a, .b = db, .ldb = ldb, .trans_b = trans_b,
                        .c = dc, .ldc = ldc, .in_dtype = dt, .out_dtype = TILE_F32, .alpha = alpha, .beta = beta,
                        .bias = bias ? dbias : 0, .a_scale = dsa, .b_scale = dsb, .scale_mode = mode};
    cr_assert_eq(tile_gemm_with_config(ctx, &g, config), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_synchronize(ctx), TILE_OK);
    tile_memcpy_dtoh(ctx, hc, dc, nc * 4);
    int caught[3] = {0, 0, 0}; /* elements each mutated reference would fail */
    double eps = f8_accum_eps(ctx);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < ldc; j++) {
            double got = hc[(size_t)i * ldc + j];
            if (j >= n) {
                if (beta == 0) cr_assert(isnan(got), "tile_gemm wrote C[%d][%d] past n=%d", i, j, n);
                continue;
            }
            double s[3] = {0, 0, 0}, mag = 0;
            for (int p = 0; p < k; p++) {
                uint8_t ca = trans_a ? ha[(size_t)p * lda + i] : ha[(size_t)i * lda + p], cb = trans_b ? hb[(size_t)j * ldb + p] : hb[(size_t)p * ldb + j];
                double x = e4 ? f8e4m3_to_d(ca) : f8e5m2_to_d(ca), y = e4 ? f8e4m3_to_d(cb) : f8e5m2_to_d(cb);
                for (int mu = 0; mu < 3; mu++) s[mu] += x * y * scale_at(mode, hsa, hsb, n, k, trans_b, i, p, j, mu);
                mag += fabs(x * y * scale_at(mode, hsa, hsb, n, k, trans_b, i, p, j, 0));
            }
            double rest = (beta != 0 ? beta * hc0[(size_t)i * ldc + j] : 0) + (bias ? hbias[j] : 0);
            double want = alpha * s[0] + rest, tol = eps * (alpha * mag + 1);
            cr_assert(fabs(got - want) <= tol, "tile_gemm %s %dx%dx%d trans_a=%d trans_b=%d scale_mode=%d: C[%d][%d] = %.9g, want %.9g (seed %llu)",
                      e4 ? "e4m3" : "e5m2", m, n, k, trans_a, trans_b, mode, i, j, got, want, (unsigned long long)seed);
            for (int mu = 1; mu < 3; mu++) caught[mu] += fabs(got - (alpha * s[mu] + rest)) > tol;
        }
    /* the checks tell a misplaced scale apart: b_scale in the other layout (n > 128), the wrong K block (k > 128) */
    if (mode == TILE_SCALE_BLOCK && nnb > 1) cr_assert(caught[1] > 0, "a b_scale read in the other layout would pass");
    if (mode == TILE_SCALE_BLOCK && nkb > 1) cr_assert(caught[2] > 0, "a_scale of the wrong K block would pass");
    tile_free(ctx, da), tile_free(ctx, db), tile_free(ctx, dc), tile_free(ctx, dsa), tile_free(ctx, dsb), tile_free(ctx, dbias);
    free(ha), free(hb), free(hc), free(hc0), free(hsa), free(hsb), free(hbias);
}

Test(gemm, api_f8_scales, .timeout = 300) {
    seed_rng();
    tile_context_options o = {.size = sizeof o, .device = getenv("TILE_TEST_DEVICE") ? getenv("TILE_TEST_DEVICE") : "emu"};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK, "%s", tile_last_error(NULL));
    api_f8_case(ctx, TILE_F8E4M3, 131, 72, 200, 1, TILE_SCALE_TENSOR, 0, false, NULL);
    api_f8_case(ctx, TILE_F8E4M3, 70, 136, 96, 0, TILE_SCALE_CHANNEL, 0.5f, true, NULL);
    api_f8_case(ctx, TILE_F8E5M2, 64, 48, 130, 1, TILE_SCALE_CHANNEL, 0, false, NULL);
    api_f8_case(ctx, TILE_F8E5M2, 33, 40, 64, 0, TILE_SCALE_NONE, 0, true, NULL);
    /* errors: scales on non-f8 inputs, a mode without pointers, an unknown mode */
    tile_gemm_args g = {.size = sizeof g, .m = 16, .n = 16, .k = 16, .lda = 16, .ldb = 16, .ldc = 16, .in_dtype = TILE_F16,
                        .out_dtype = TILE_F32, .alpha = 1, .scale_mode = TILE_SCALE_TENSOR, .a_scale = 16, .b_scale = 16};
    cr_assert_eq(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE);
    cr_assert(strstr(tile_last_error(ctx), "scale_mode applies to f8 inputs"), "%s", tile_last_error(ctx));
    g.in_dtype = TILE_F8E4M3, g.a_scale = 0;
    cr_assert_eq(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE);
    cr_assert(strstr(tile_last_error(ctx), "needs a_scale and b_scale"), "%s", tile_last_error(ctx));
    g.scale_mode = 7;
    cr_assert_eq(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE);
    cr_assert(strstr(tile_last_error(ctx), "unknown scale_mode 7"), "%s", tile_last_error(ctx));
    tile_context_destroy(ctx);
}

/* f8's accumulation: on sm_90a tile_gemm adds each 128-wide K step's wgmma product to the f32
 * accumulator itself (FAST_ACCUM=0, the default there); FAST_ACCUM=1 in a configuration accumulates in
 * the tensor cores.  Both give the float64 result within the device's tolerance (f8_accum_eps), at
 * sizes that are no multiple of the tiles; FAST_ACCUM on non-f8 inputs is refused. */
Test(gemm, api_f8_fast_accum, .timeout = 300) {
    seed_rng();
    tile_context_options o = {.size = sizeof o, .device = getenv("TILE_TEST_DEVICE") ? getenv("TILE_TEST_DEVICE") : "emu",
                              .arch = getenv("TILE_TEST_ARCH")};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK, "%s", tile_last_error(NULL));
    tile_device_properties p;
    cr_assert_eq(tile_context_get_properties(ctx, &p), TILE_OK);
    bool hopper = !strcmp(p.arch, "sm_90a");
    api_f8_case(ctx, TILE_F8E4M3, 136, 144, 400, 1, TILE_SCALE_TENSOR, 0, false, NULL);
    tile_gemm_info info;
    cr_assert_eq(tile_gemm_last_info(ctx, &info), TILE_OK);
    cr_assert_eq(strstr(info.config, "FAST_ACCUM=0") != NULL, hopper, "%s: default configuration %s", p.arch, info.config);
    const char *fast[] = {"BM=64", "BN=64", "BK=64", "num_warps=4", "FAST_ACCUM=1", NULL};
    const char *slow[] = {"BM=64", "BN=128", "BK=128", "num_warps=4", "FAST_ACCUM=0", NULL};
    api_f8_case(ctx, TILE_F8E5M2, 100, 72, 330, 1, TILE_SCALE_CHANNEL, 0, true, fast);
    api_f8_case(ctx, TILE_F8E4M3, 70, 136, 300, 0, TILE_SCALE_NONE, 0.5f, false, slow);
    cr_assert_eq(tile_gemm_last_info(ctx, &info), TILE_OK);
    cr_assert(strstr(info.config, "FAST_ACCUM=0"), "%s", info.config);
    /* per-tensor scales 4-byte aligned (b_scale element 1 of an array) keep the vector configuration:
     * the same one as 16-byte aligned scales (they put an H200's 8192^3 f8 GEMM on the element-by-element
     * path, at 48 TFLOP/s); the result is right (the emulator faults on a misaligned vector access) */
    tile_devptr d, ab, cc, sc;
    int M = 64, N = 96, K = 160;
    cr_assert_eq(tile_malloc(ctx, (size_t)(M + N) * K, &ab), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, (size_t)M * N * 4, &cc), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 32, &sc), TILE_OK);
    uint8_t *h8 = malloc((size_t)(M + N) * K);
    for (int i = 0; i < (M + N) * K; i++) h8[i] = d_to_f8(urand() * 2, 0); /* urand: [-1, 1) */
    const float hs[8] = {0.5f, 0.75f, 1.25f, 2.0f, 0.75f, 0, 0, 0};
    cr_assert_eq(tile_memcpy_htod(ctx, ab, h8, (size_t)(M + N) * K), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, sc, hs, sizeof hs), TILE_OK);
    char cfg16[256];
    float *hc = malloc((size_t)M * N * 4);
    for (int off = 0; off < 2; off++) {
        /* a_scale 0.5; b_scale 0.75, at byte 16 (aligned) or byte 4 */
        tile_gemm_args f = {.size = sizeof f, .m = M, .n = N, .k = K, .a = ab, .lda = K, .b = ab + (tile_devptr)M * K, .ldb = K, .trans_b = 1,
                            .c = cc, .ldc = N, .in_dtype = TILE_F8E4M3, .out_dtype = TILE_F32, .alpha = 1, .a_scale = sc,
                            .b_scale = sc + (off ? 4 : 16), .scale_mode = TILE_SCALE_TENSOR};
        cr_assert_eq(tile_memset(ctx, cc, 0xff, (size_t)M * N * 4), TILE_OK);
        cr_assert_eq(tile_gemm(ctx, &f), TILE_OK, "%s", tile_last_error(ctx));
        cr_assert_eq(tile_gemm_last_info(ctx, &info), TILE_OK);
        if (!off) snprintf(cfg16, sizeof cfg16, "%s", info.config);
        else cr_expect_str_eq(info.config, cfg16, "a 4-byte aligned per-tensor scale changed the configuration");
        cr_assert_eq(tile_memcpy_dtoh(ctx, hc, cc, (size_t)M * N * 4), TILE_OK);
        double scale = 0.5 * 0.75;
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double want = 0, mag = 0;
                for (int p = 0; p < K; p++) {
                    double t = f8e4m3_to_d(h8[i * K + p]) * f8e4m3_to_d(h8[(M + j) * K + p]);
                    want += t, mag += fabs(t);
                }
                cr_assert(fabs(hc[i * N + j] - scale * want) <= f8_accum_eps(ctx) * scale * mag + 1e-6, "off %d: C[%d][%d] = %.9g, want %.9g",
                          off, i, j, hc[i * N + j], scale * want);
            }
    }
    free(h8), free(hc);
    tile_free(ctx, ab), tile_free(ctx, cc), tile_free(ctx, sc);
    cr_assert_eq(tile_malloc(ctx, 16 * 16 * 4, &d), TILE_OK);
    tile_gemm_args g = {.size = sizeof g, .m = 16, .n = 16, .k = 16, .a = d, .lda = 16, .b = d, .ldb = 16, .c = d, .ldc = 16,
                        .in_dtype = TILE_F16, .out_dtype = TILE_F32, .alpha = 1};
    cr_assert_eq(tile_gemm_with_config(ctx, &g, fast), TILE_ERROR_INVALID_VALUE);
    cr_assert(strstr(tile_last_error(ctx), "FAST_ACCUM applies to f8 inputs, not f16"), "%s", tile_last_error(ctx));
    tile_free(ctx, d);
    tile_context_destroy(ctx);
}

/* TILE_SCALE_BLOCK through the API: odd sizes (element-by-element reads, the 128 x 64 x 32 block
 * configuration), multiples of 16 (the vector one: on sm_90a 128 x 128 x 128, one wgmma K block a
 * step; elsewhere BK 32, four steps a block), both B layouts and a transposed A, k not a multiple of 128, beta and
 * bias, split-K and smaller tiles through tile_gemm_with_config; then the argument errors. */
Test(gemm, api_f8_block_scales, .timeout = 600) {
    seed_rng();
    tile_context_options o = {.size = sizeof o, .device = getenv("TILE_TEST_DEVICE") ? getenv("TILE_TEST_DEVICE") : "emu"};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK, "%s", tile_last_error(NULL));
    tile_device_properties props;
    cr_assert_eq(tile_context_get_properties(ctx, &props), TILE_OK);
    bool hopper = !strcmp(props.arch, "sm_90a");
    tile_gemm_info info;
    api_f8_case(ctx, TILE_F8E4M3, 131, 200, 300, 1, TILE_SCALE_BLOCK, 0, false, NULL);
    cr_assert_eq(tile_gemm_last_info(ctx, &info), TILE_OK);
    cr_assert(strstr(info.config, "BM=128 BN=64 BK=32 num_warps=8"), "element-by-element block config: %s", info.config);
    api_f8_case(ctx, TILE_F8E5M2, 70, 136, 300, 0, TILE_SCALE_BLOCK, 0.5f, true, NULL);
    api_f8_case(ctx, TILE_F8E4M3, 144, 272, 304, 1, TILE_SCALE_BLOCK, 0, false, NULL);
    cr_assert_eq(tile_gemm_last_info(ctx, &info), TILE_OK);
    cr_assert(strstr(info.config, hopper ? "BM=128 BN=128 BK=128 num_warps=8" : "BM=128 BN=128 BK=32 num_warps=8"), "%s block config: %s",
              props.arch, info.config);
    api_f8_case(ctx, TILE_F8E4M3, 96, 160, 272, 0, TILE_SCALE_BLOCK, 0, true, NULL);
    api_f8_case(ctx, TILE_F8E5M2, 50, 130, 260, 2 | 1, TILE_SCALE_BLOCK, 0, false, NULL); /* A stored k x m too */
    static const char *const split[] = {"BM=64", "BN=64", "BK=64", "num_warps=4", "SPLIT_K=2", NULL};
    api_f8_case(ctx, TILE_F8E4M3, 80, 144, 400, 1, TILE_SCALE_BLOCK, 0, false, split);
    cr_assert_eq(tile_gemm_last_info(ctx, &info), TILE_OK);
    cr_assert_eq(info.grid.y, 2, "split-K: grid %u x %u", info.grid.x, info.grid.y);
    static const char *const small[] = {"BM=64", "BN=32", "BK=128", "num_warps=4", NULL};
    api_f8_case(ctx, TILE_F8E5M2, 64, 200, 160, 1, TILE_SCALE_BLOCK, 0, false, small);
    /* errors: tiles that straddle blocks, scales too short for the blocks */
    tile_devptr buf;
    cr_assert_eq(tile_malloc(ctx, 1 << 16, &buf), TILE_OK);
    tile_gemm_args g = {.size = sizeof g, .m = 16, .n = 16, .k = 16, .a = buf, .lda = 16, .b = buf, .ldb = 16, .c = buf, .ldc = 16,
                        .in_dtype = TILE_F8E4M3, .out_dtype = TILE_F32, .alpha = 1, .scale_mode = TILE_SCALE_BLOCK, .a_scale = buf,
                        .b_scale = buf};
    static const char *const wide[] = {"BN=256", NULL}, *const odd_k[] = {"BK=48", NULL};
    cr_assert_eq(tile_gemm_with_config(ctx, &g, wide), TILE_ERROR_INVALID_VALUE);
    cr_assert(strstr(tile_last_error(ctx), "block scales need BN and BK dividing 128 (BN=256 BK=32)"), "%s", tile_last_error(ctx));
    cr_assert_eq(tile_gemm_with_config(ctx, &g, odd_k), TILE_ERROR_INVALID_VALUE);
    cr_assert(strstr(tile_last_error(ctx), "BK=48"), "%s", tile_last_error(ctx));
    /* GROUP_M=0 wrote nothing and returned TILE_OK, GROUP_M=-1 read before A; SPLIT_K out of range likewise refused */
    static const char *const bad_knobs[][2] = {{"GROUP_M=0", NULL}, {"GROUP_M=-1", NULL}, {"SPLIT_K=0", NULL}, {"SPLIT_K=65", NULL}};
    static const char *const bad_want[] = {"GROUP_M=0 (1 to 65535)", "GROUP_M=-1 (1 to 65535)", "SPLIT_K=0 (1 to 64)", "SPLIT_K=65 (1 to 64)"};
    g.scale_mode = TILE_SCALE_NONE, g.in_dtype = TILE_F16;
    for (size_t i = 0; i < sizeof bad_knobs / sizeof *bad_knobs; i++) {
        cr_expect_eq(tile_gemm_with_config(ctx, &g, bad_knobs[i]), TILE_ERROR_INVALID_VALUE, "%s accepted", bad_knobs[i][0]);
        cr_expect(strstr(tile_last_error(ctx), bad_want[i]), "%s", tile_last_error(ctx));
    }
    g.scale_mode = TILE_SCALE_BLOCK, g.in_dtype = TILE_F8E4M3;
    /* the epilogue is the arguments': a configuration naming it (ACT=1 applied ReLU, HAS_BETA=1 read C) is refused */
    static const char *const epi[][3] = {{"ACT=1", NULL}, {"BM=64", "HAS_BETA=1", NULL}, {"HAS_BIAS=0", NULL}, {"SCALE=0", NULL},
                                         {"BM", NULL}, {"TILE=64", NULL}};
    for (size_t i = 0; i < sizeof epi / sizeof *epi; i++) {
        cr_expect_eq(tile_gemm_with_config(ctx, &g, epi[i]), TILE_ERROR_INVALID_VALUE, "config %zu accepted", i);
        cr_expect(strstr(tile_last_error(ctx), "is not a configuration NAME=VALUE"), "%s", tile_last_error(ctx));
    }
    /* f8 inputs with a size that leaves out the scales (0: the 0.1 layout) ran unscaled */
    const size_t short_sizes[] = {0, offsetof(tile_gemm_args, a_scale), offsetof(tile_gemm_args, scale_mode)};
    for (size_t i = 0; i < sizeof short_sizes / sizeof *short_sizes; i++) {
        g.size = short_sizes[i];
        cr_expect_eq(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE, "f8 with size %zu accepted", short_sizes[i]);
        cr_expect(strstr(tile_last_error(ctx), "f8 inputs need a size that covers"), "%s", tile_last_error(ctx));
    }
    g.size = sizeof g;
    g.m = 16, g.k = 300, g.lda = 300, g.b_scale = buf + (1 << 16) - 8; /* 3 K blocks x 1 column block: 12 bytes */
    cr_assert_eq(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE);
    cr_assert(strstr(tile_last_error(ctx), "b_scale"), "%s", tile_last_error(ctx));
    g.b_scale = buf, g.a_scale = buf + (1 << 16) - 4 * 47; /* 16 rows x 3 K blocks: 48 floats */
    cr_assert_eq(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE);
    cr_assert(strstr(tile_last_error(ctx), "a_scale"), "%s", tile_last_error(ctx));
    tile_free(ctx, buf);
    tile_context_destroy(ctx);
}

/* The per-group quantization (tile_fused_add_rmsnorm, quant_group 128) writes a block-scaled GEMM's A
 * and a_scale as they are (docs/kernels.md): RMSNorm rows quantized to f8e4m3, then tile_gemm with a
 * W[n][k] weight (trans_b) and its [cdiv(n, 128)][cdiv(k, 128)] scales, against float64 of the codes
 * and scales read back. */
Test(gemm, api_f8_block_scales_after_group_quant, .timeout = 300) {
    seed_rng();
    tile_context_options o = {.size = sizeof o, .device = getenv("TILE_TEST_DEVICE") ? getenv("TILE_TEST_DEVICE") : "emu"};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK, "%s", tile_last_error(NULL));
    enum { M = 37, K = 300, N = 150, KB = 3, NB = 2 };
    static uint16_t hx[M * K], hw[K];
    static uint8_t hq[M * K], hb[N * K];
    static float hs[M * KB], hbs[NB * KB], hc[M * N];
    for (int i = 0; i < M * K; i++) hx[i] = f32_to_f16((float)(urand() * 4));
    for (int i = 0; i < K; i++) hw[i] = f32_to_f16((float)(0.5 + urand() * 0.25));
    for (int i = 0; i < N * K; i++) hb[i] = (uint8_t)(irand(0x70) | (irand(2) << 7));
    for (int i = 0; i < NB * KB; i++) hbs[i] = (float)(0.01 + (urand() + 1) * 0.05);
    tile_devptr dx, dw, dq, ds, db, dbs, dc;
    cr_assert_eq(tile_malloc(ctx, sizeof hx, &dx), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof hw, &dw), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof hq, &dq), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof hs, &ds), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof hb, &db), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof hbs, &dbs), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof hc, &dc), TILE_OK);
    tile_memcpy_htod(ctx, dx, hx, sizeof hx);
    tile_memcpy_htod(ctx, dw, hw, sizeof hw);
    tile_memcpy_htod(ctx, db, hb, sizeof hb);
    tile_memcpy_htod(ctx, dbs, hbs, sizeof hbs);
    tile_memset(ctx, dc, 0xff, sizeof hc);
    tile_norm_args na = {.size = sizeof na, .dtype = TILE_F16, .tokens = M, .hidden = K, .x = dx, .weight = dw, .eps = 1e-6f,
                         .out = dq, .quant_dtype = TILE_F8E4M3, .scales = ds, .quant_group = 128};
    cr_assert_eq(tile_fused_add_rmsnorm(ctx, &na), TILE_OK, "%s", tile_last_error(ctx));
    tile_gemm_args g = {.size = sizeof g, .m = M, .n = N, .k = K, .a = dq, .lda = K, .b = db, .ldb = K, .trans_b = 1, .c = dc,
                        .ldc = N, .in_dtype = TILE_F8E4M3, .out_dtype = TILE_F32, .alpha = 1, .a_scale = ds, .b_scale = dbs,
                        .scale_mode = TILE_SCALE_BLOCK};
    cr_assert_eq(tile_gemm(ctx, &g), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_synchronize(ctx), TILE_OK);
    tile_memcpy_dtoh(ctx, hq, dq, sizeof hq);
    tile_memcpy_dtoh(ctx, hs, ds, sizeof hs);
    tile_memcpy_dtoh(ctx, hc, dc, sizeof hc);
    double eps = f8_accum_eps(ctx);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double want = 0, mag = 0;
            for (int p = 0; p < K; p++) {
                double t = f8e4m3_to_d(hq[i * K + p]) * hs[i * KB + p / 128] * f8e4m3_to_d(hb[j * K + p]) * hbs[(j / 128) * KB + p / 128];
                want += t, mag += fabs(t);
            }
            cr_assert(fabs(hc[i * N + j] - want) <= eps * mag + 1e-6, "C[%d][%d] = %.9g, want %.9g (seed %llu)", i, j, hc[i * N + j],
                      want, (unsigned long long)seed);
        }
    tile_free(ctx, dx), tile_free(ctx, dw), tile_free(ctx, dq), tile_free(ctx, ds), tile_free(ctx, db), tile_free(ctx, dbs);
    tile_free(ctx, dc);
    tile_context_destroy(ctx);
}

/* tile_gemm f16/bf16 through the API at sizes where sm_90a takes its 128 x 256 x 64 two-warpgroup
 * tiles (hopper_gemm), float64-checked, outputs poisoned, odd sizes and both layouts of A and B
 * (trans: bit 0 B stored n x k, bit 1 A stored k x m). */
/* tight: the leading dimensions are the sizes (k or m, n or k), else multiples of 16 past them */
static void api_16_case_ld(tile_context *ctx, tile_dtype dt, int m, int n, int k, int trans, const char *const *config, bool tight) {
    int trans_b = trans & 1, trans_a = trans >> 1;
    bool bf = dt == TILE_BF16, f32 = dt == TILE_F32; /* f32: tf32 products */
    bool split = false;
    for (int i = 0; config && config[i]; i++) split |= !strncmp(config[i], "SPLIT_K=", 8) && atoi(config[i] + 8) > 1;
    size_t es = f32 ? 4 : 2;
    /* leading dimensions multiples of 16 past the sizes (split-K wants C contiguous: ldc == n) */
    int k16 = (k + 15) / 16 * 16, lda = (trans_a ? (m + 15) / 16 * 16 : k16) + 16, ldb = (trans_b ? k16 : n) + 16, ldc = split ? n : n + 4;
    if (tight) lda = trans_a ? m : k, ldb = trans_b ? k : n, ldc = n;
    size_t na = (size_t)(trans_a ? k : m) * lda, nb = (size_t)(trans_b ? n : k) * ldb, nc = (size_t)m * ldc;
    uint16_t *ha = malloc(na * es), *hb = malloc(nb * es);
    float *hc = malloc(nc * 4), *fa = (float *)ha, *fb = (float *)hb;
    for (size_t i = 0; i < na; i++) {
        float x = (float)urand();
        if (f32) fa[i] = x;
        else ha[i] = bf ? f32_to_bf16(x) : f32_to_f16(x);
    }
    for (size_t i = 0; i < nb; i++) {
        float x = (float)urand();
        if (f32) fb[i] = x;
        else hb[i] = bf ? f32_to_bf16(x) : f32_to_f16(x);
    }
    tile_devptr da, db, dc;
    cr_assert_eq(tile_malloc(ctx, na * es, &da), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, nb * es, &db), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, nc * 4, &dc), TILE_OK);
    tile_memcpy_htod(ctx, da, ha, na * es);
    tile_memcpy_htod(ctx, db, hb, nb * es);
    tile_memset(ctx, dc, 0xff, nc * 4); /* NaN (split-K zeroes C first) */
    tile_gemm_args g = {.size = sizeof g, .m = m, .n = n, .k = k, .a = da, .lda = lda, .trans_a = trans_a, .b = db, .ldb = ldb,
                        .trans_b = trans_b, .c = dc, .ldc = ldc, .in_dtype = dt, .out_dtype = TILE_F32, .alpha = 1};
    cr_assert_eq(config ? tile_gemm_with_config(ctx, &g, config) : tile_gemm(ctx, &g), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_synchronize(ctx), TILE_OK);
    tile_memcpy_dtoh(ctx, hc, dc, nc * 4);
    /* tf32 keeps 10 of f32's 23 mantissa bits: each product within 2^-10 relative, so 4e-3 of the
     * sum of magnitudes; f16/bf16 products are exact in f32 */
    double tol = f32 ? 4e-3 : 1e-6;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double s = 0, mag = 0;
            for (int p = 0; p < k; p++) {
                size_t ia = trans_a ? (size_t)p * lda + i : (size_t)i * lda + p, ib = trans_b ? (size_t)j * ldb + p : (size_t)p * ldb + j;
                double x = f32 ? fa[ia] : bf ? bf16_to_d(ha[ia]) : f16_to_d(ha[ia]);
                double y = f32 ? fb[ib] : bf ? bf16_to_d(hb[ib]) : f16_to_d(hb[ib]);
                s += x * y, mag += fabs(x * y);
            }
            double got = hc[(size_t)i * ldc + j];
            cr_assert(fabs(got - s) <= tol * mag + 1e-6, "tile_gemm %s %dx%dx%d trans_a=%d trans_b=%d: C[%d][%d] = %.9g, want %.9g",
                      f32 ? "tf32" : bf ? "bf16" : "f16", m, n, k, trans_a, trans_b, i, j, got, s);
        }
    tile_free(ctx, da), tile_free(ctx, db), tile_free(ctx, dc);
    free(ha), free(hb), free(hc);
}

static void api_16_case_cfg(tile_context *ctx, tile_dtype dt, int m, int n, int k, int trans, const char *const *config) {
    api_16_case_ld(ctx, dt, m, n, k, trans, config, false);
}
static void api_16_case(tile_context *ctx, tile_dtype dt, int m, int n, int k, int trans) {
    api_16_case_cfg(ctx, dt, m, n, k, trans, NULL);
}

/* The PTX of the variant tile_gemm last launched: its configuration and specialization compiled again. */
static char *last_gemm_ptx(tile_context *ctx, const char *arch) {
    tile_gemm_info info;
    cr_assert_eq(tile_gemm_last_info(ctx, &info), TILE_OK);
    static char words[2][256];
    const char *defs[24] = {0}, *specs[24] = {0};
    const char *const from[2] = {info.config, info.specialize};
    const char **to[2] = {defs, specs};
    for (int w = 0; w < 2; w++) {
        snprintf(words[w], sizeof words[w], "%s", from[w]);
        int n = 0;
        for (char *t = strtok(words[w], " "); t && n < 23; t = strtok(NULL, " ")) to[w][n++] = t;
    }
    tile_compile_options o = {.size = sizeof o, .arch = arch, .kernel = info.kernel, .defines = defs, .specialize = specs};
    tile_compiled c;
    cr_assert_eq(tile_compile_file(tile_gemm_source_path(), &o, &c), TILE_OK, "%s", c.diagnostics);
    char *ptx = strdup(c.ptx);
    tile_compiled_free(&c);
    return ptx;
}

/* Split-K through tile_gemm_with_config at odd m and K (K not a multiple of BK nor of the split),
 * both B layouts, float64-checked; on sm_90a (hopper_gemm) the shares of K stream through tensor maps
 * and the partial tiles are added into C by tensor reductions (cp.reduce.async.bulk.tensor .add). */
Test(gemm, api_split_k, .timeout = 600) {
    seed_rng();
    tile_context_options o = {.size = sizeof o, .device = getenv("TILE_TEST_DEVICE") ? getenv("TILE_TEST_DEVICE") : "emu"};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK, "%s", tile_last_error(NULL));
    tile_device_properties props;
    cr_assert_eq(tile_context_get_properties(ctx, &props), TILE_OK);
    static const char *const split3[] = {"BM=64", "BN=64", "BK=32", "num_warps=4", "SPLIT_K=3", NULL};
    static const char *const split2[] = {"BM=128", "BN=128", "BK=32", "num_warps=4", "num_stages=3", "SPLIT_K=2", NULL};
    static const struct {
        tile_dtype dt;
        int m, n, k, trans_b;
        const char *const *config;
    } cs[] = {
        {TILE_F16, 130, 144, 333, 0, split3},
        {TILE_BF16, 70, 80, 200, 1, split3},
        {TILE_F16, 150, 160, 290, 1, split2},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        api_16_case_cfg(ctx, cs[i].dt, cs[i].m, cs[i].n, cs[i].k, cs[i].trans_b, cs[i].config);
        tile_gemm_info info;
        cr_assert_eq(tile_gemm_last_info(ctx, &info), TILE_OK);
        cr_assert(strstr(info.config, "SPLIT_K=") && info.grid.y == (unsigned)atoi(strstr(info.config, "SPLIT_K=") + 8), "config %s, grid y %u",
                  info.config, info.grid.y);
        char *ptx = last_gemm_ptx(ctx, props.arch);
        bool hopper = !strcmp(props.arch, "sm_90a");
        cr_expect_eq(strstr(ptx, "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group") != NULL, hopper,
                     "%s: tensor reductions of the partial tiles (%s)", props.arch, info.config);
        cr_expect_eq(strstr(ptx, "cp.async.bulk.tensor.2d.shared::cluster.global") != NULL, hopper, "%s: tensor-map loads", props.arch);
        cr_expect(hopper || strstr(ptx, "red.relaxed.gpu.global.add.f32") || strstr(ptx, "atom.relaxed.gpu.global.add.f32"),
                  "%s: relaxed atomics", props.arch);
        free(ptx);
    }
    tile_context_destroy(ctx);
}

/* The kernel of each type pair, and none for a pair tile_gemm does not take. */
Test(gemm, kernel_names) {
    static const struct {
        tile_dtype in, out;
        const char *name;
    } cs[] = {{TILE_F16, TILE_F32, "gemm_f16_f32"},       {TILE_F16, TILE_F16, "gemm_f16_f16"},   {TILE_BF16, TILE_F32, "gemm_bf16_f32"},
              {TILE_BF16, TILE_BF16, "gemm_bf16_bf16"},   {TILE_F32, TILE_F32, "gemm_tf32_f32"},  {TILE_I8, TILE_I32, "gemm_i8_i32"},
              {TILE_F8E4M3, TILE_F32, "gemm_e4m3_f32"},   {TILE_F8E5M2, TILE_F32, "gemm_e5m2_f32"}, {TILE_F16, TILE_BF16, NULL},
              {TILE_F8E4M3, TILE_F16, NULL},              {TILE_I8, TILE_F32, NULL}};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const char *got = tile_gemm_kernel_name(cs[i].in, cs[i].out);
        if (!cs[i].name) cr_expect_null(got, "%s -> %s: %s", tile_dtype_name(cs[i].in), tile_dtype_name(cs[i].out), got);
        else cr_expect(got && !strcmp(got, cs[i].name), "%s -> %s: %s", tile_dtype_name(cs[i].in), tile_dtype_name(cs[i].out), got ? got : "NULL");
    }
    char id[33]; /* a name the tuning database takes */
    cr_expect_eq(tile_kernel_id_file(tile_gemm_source_path(), tile_gemm_kernel_name(TILE_F8E5M2, TILE_F32), id), TILE_OK);
}

Test(gemm, api_wide_tiles, .timeout = 300) {
    seed_rng();
    tile_context_options o = {.size = sizeof o, .device = getenv("TILE_TEST_DEVICE") ? getenv("TILE_TEST_DEVICE") : "emu"};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK, "%s", tile_last_error(NULL));
    api_16_case(ctx, TILE_F16, 136, 300, 200, 0); /* odd n: the scalar configuration */
    /* multiples of 16 (not of the 128 x 256 tile), aligned: the vector one, on sm_90a the wide tiles */
    api_16_case(ctx, TILE_BF16, 144, 272, 80, 1);
    tile_gemm_info info;
    cr_assert_eq(tile_gemm_last_info(ctx, &info), TILE_OK);
    tile_device_properties props;
    cr_assert_eq(tile_context_get_properties(ctx, &props), TILE_OK);
    if (!strcmp(props.arch, "sm_90a")) {
        cr_assert(strstr(info.config, "BN=256") && !strstr(info.config, "BN=128"), "sm_90a config: %s", info.config);
        cr_assert_eq(info.grid.x, 4u, "2 x 2 tiles of 128 x 256: grid %u", info.grid.x); /* (one program each: 132 SMs) */
    }
    tile_context_destroy(ctx);
}

/* sm_90a's persistent, warp-specialized tile_gemm: on an emulated Hopper of 3 multiprocessors the
 * grid is 3 programs and each walks several output tiles (grouped order), its producer warpgroup
 * loading the next tile's stages while the computing warps store this one; float64-checked at odd
 * tile counts, both B layouts, one and two computing warpgroups (128 x 128 on 4 warps; 128 x 256
 * on 8), and tf32 (wgmma k8, 8 warps), A transposed too. */
Test(gemm, api_persistent_sm90a, .timeout = 600) {
    seed_rng();
    tile_context_options o = {.size = sizeof o, .device = "emu:sm_90a:sms=3"};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK, "%s", tile_last_error(NULL));
    static const struct {
        tile_dtype dt;
        int m, n, k, trans, programs; /* trans: bit 0 B stored n x k, bit 1 A stored k x m */
        const char *tile;
    } cs[] = {
        {TILE_F16, 400, 144, 96, 0, 3, "BN=128"},  /* 4 x 2 tiles of 128 x 128 over 3 programs */
        {TILE_BF16, 272, 528, 80, 1, 3, "BN=256"}, /* 3 x 3 tiles of 128 x 256 */
        {TILE_F16, 144, 112, 48, 1, 2, "BN=128"},  /* 2 tiles: 2 programs */
        /* A stored k x m: its stages through a tensor map, read M-major by the wgmma (imm-trans-a) */
        {TILE_F16, 144, 112, 48, 2, 2, "BN=128"},
        {TILE_BF16, 144, 272, 80, 3, 3, "BN=256"}, /* 2 x 2 tiles of 128 x 256 */
        /* tf32: A through the producer's tensor map, B [K][N] copied by the computing warps element by
         * element into a K-major stage (cp.async beside the producer), and B [N][K] through a map */
        {TILE_F32, 300, 208, 80, 0, 3, "BK=16"},
        {TILE_F32, 130, 144, 48, 1, 3, "BK=16"},
        /* A stored k x m too: its stages through the producer's tensor map, loaded by the computing warps
         * into the wgmma's A registers (wgmma reads 32-bit A from shared memory K-major only) */
        {TILE_F32, 144, 80, 48, 3, 2, "BK=16"},
    };
    /* with B [K][N] (copied element by element into its K-major stage) a transposed tf32 A keeps the register
     * path, so its loads are no tensor-map copies and no producer warpgroup issues them */
    api_16_case(ctx, TILE_F32, 144, 80, 48, 2);
    tile_gemm_info info;
    cr_assert_eq(tile_gemm_last_info(ctx, &info), TILE_OK);
    cr_assert(strstr(info.config, "warp_specialize=0") && strstr(info.config, "BK=16"), "config %s", info.config);
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        api_16_case(ctx, cs[i].dt, cs[i].m, cs[i].n, cs[i].k, cs[i].trans);
        tile_gemm_info info;
        cr_assert_eq(tile_gemm_last_info(ctx, &info), TILE_OK);
        cr_assert(strstr(info.config, "PERSISTENT=1") && strstr(info.config, "warp_specialize=1") && strstr(info.config, cs[i].tile),
                  "config %s", info.config);
        cr_assert_eq(info.grid.x, (unsigned)cs[i].programs, "grid %u", info.grid.x);
        cr_assert_eq(info.block.x, strstr(info.config, "num_warps=8") ? 384u : 256u, "block %u: a producer warpgroup (%s)", info.block.x, info.config);
    }
    /* rows the compiler cannot prove 16-byte aligned (k = 33 halves) load without tensor maps: no
     * producer warpgroup, and the configuration says so */
    api_16_case_ld(ctx, TILE_F16, 100, 77, 33, 0, NULL, true);
    cr_assert_eq(tile_gemm_last_info(ctx, &info), TILE_OK);
    cr_assert(strstr(info.config, "warp_specialize=0") && strstr(info.config, "num_warps=8"), "config %s", info.config);
    cr_assert_eq(info.block.x, 256u, "block %u (%s)", info.block.x, info.config);
    tile_context_destroy(ctx);
}

/* tile_gemm_with_config({"warp_specialize=1"}), num_warps left to the kernel (8): tile_gemm_last_info said
 * warp_specialize=1 where no producer ran (sm_80; rows not provably aligned on sm_90a) and num_warps=12 (the
 * launch's warps, which as a configuration is no valid num_warps) where one did.  It reports the computing
 * warps and whether a producer ran, and the configuration it reports runs again as reported. */
Test(gemm, api_config_reports_producer, .timeout = 300) {
    seed_rng();
    static const char *const ws[] = {"warp_specialize=1", NULL};
    static const struct {
        const char *device;
        int m, n, k;
        bool tight, producer;
    } cs[] = {{"emu:sm_90a", 64, 48, 64, false, true}, {"emu:sm_90a", 40, 24, 33, true, false}, {"emu", 64, 48, 64, false, false}};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        tile_context *ctx;
        cr_assert_eq(tile_context_create(cs[i].device, &ctx), TILE_OK, "%s", tile_last_error(NULL));
        api_16_case_ld(ctx, TILE_F16, cs[i].m, cs[i].n, cs[i].k, 0, ws, cs[i].tight);
        tile_gemm_info info;
        cr_assert_eq(tile_gemm_last_info(ctx, &info), TILE_OK);
        cr_assert(strstr(info.config, cs[i].producer ? "warp_specialize=1" : "warp_specialize=0") && strstr(info.config, "num_warps=8"),
                  "%s: config %s", cs[i].device, info.config);
        cr_assert_eq(info.block.x, cs[i].producer ? 384u : 256u, "%s: block %u (%s)", cs[i].device, info.block.x, info.config);
        /* the reported configuration, given back, runs the same launch */
        char words[256], first[256];
        snprintf(words, sizeof words, "%s", info.config), snprintf(first, sizeof first, "%s", info.config);
        const char *cfg[16] = {0};
        int n = 0;
        for (char *save = NULL, *t = strtok_r(words, " ", &save); t && n < 15; t = strtok_r(NULL, " ", &save)) cfg[n++] = t;
        api_16_case_ld(ctx, TILE_F16, cs[i].m, cs[i].n, cs[i].k, 0, cfg, cs[i].tight);
        cr_assert_eq(tile_gemm_last_info(ctx, &info), TILE_OK);
        cr_assert_str_eq(info.config, first, "%s", cs[i].device);
        cr_assert_eq(info.block.x, cs[i].producer ? 384u : 256u, "%s: block %u (%s)", cs[i].device, info.block.x, info.config);
        tile_context_destroy(ctx);
    }
}

/* C may share no element with what the kernel reads besides C (A, B, the bias, the scales): such a call is
 * TILE_ERROR_INVALID_VALUE naming both, before anything runs.  The check is per element, not per byte range:
 * A in some columns of one buffer and D in the others share nothing and run, against float64, with the
 * columns of C poisoned and A's left as they were. */
Test(gemm, api_c_sharing_inputs, .timeout = 300) {
    seed_rng();
    tile_context_options o = {.size = sizeof o, .device = getenv("TILE_TEST_DEVICE") ? getenv("TILE_TEST_DEVICE") : "emu"};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK, "%s", tile_last_error(NULL));
    const int m = 37, n = 21, k = 19, ld = k + n + 5; /* one f16 buffer: A in columns [0, k), C in [k, k + n) */
    uint16_t *hx = malloc(sizeof *hx * m * ld), *hb = malloc(sizeof *hb * k * n), *hy = malloc(sizeof *hy * m * ld);
    for (int i = 0; i < m * ld; i++) hx[i] = f32_to_f16((float)urand());
    for (int i = 0; i < k * n; i++) hb[i] = f32_to_f16((float)urand());
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) hx[i * ld + k + j] = 0x7e00; /* NaN */
    tile_devptr dx, db, dc;
    cr_assert_eq(tile_malloc(ctx, sizeof *hx * m * ld, &dx), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof *hb * k * n, &db), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 2 * (size_t)(m + 1) * n, &dc), TILE_OK); /* room for a bias after C */
    tile_memcpy_htod(ctx, dx, hx, sizeof *hx * m * ld);
    tile_memcpy_htod(ctx, db, hb, sizeof *hb * k * n);
    tile_gemm_args g = {.size = sizeof g, .m = m, .n = n, .k = k, .a = dx, .lda = ld, .b = db, .ldb = n, .c = dx + 2 * k, .ldc = ld,
                        .in_dtype = TILE_F16, .out_dtype = TILE_F16, .alpha = 1};
    cr_assert_eq(tile_gemm(ctx, &g), TILE_OK, "interleaved columns share no element: %s", tile_last_error(ctx));
    cr_assert_eq(tile_synchronize(ctx), TILE_OK);
    tile_memcpy_dtoh(ctx, hy, dx, sizeof *hy * m * ld);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < ld; j++) {
            if (j < k || j >= k + n) {
                cr_assert_eq(hy[i * ld + j], hx[i * ld + j], "element [%d][%d] outside C changed", i, j);
                continue;
            }
            double want = 0, mag = 0;
            for (int p = 0; p < k; p++) {
                double t = f16_to_d(hx[i * ld + p]) * f16_to_d(hb[p * n + (j - k)]);
                want += t, mag += fabs(t);
            }
            double got = f16_to_d(hy[i * ld + j]);
            cr_assert(fabs(got - want) <= 1e-3 * (mag + 1), "D[%d][%d] = %g, want %g (seed %llu)", i, j - k, got, want,
                      (unsigned long long)seed);
        }
    /* C one element into A's last column; C over B; the bias inside C; C over A transposed */
    g.c = dx + 2 * (k - 1);
    cr_assert_eq(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE);
    cr_assert(strstr(tile_last_error(ctx), "C (0x") && strstr(tile_last_error(ctx), "shares elements with A (0x"), "%s",
              tile_last_error(ctx));
    g.m = k, g.c = db, g.ldc = n;
    cr_assert_eq(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE);
    cr_assert(strstr(tile_last_error(ctx), "shares elements with B (0x"), "%s", tile_last_error(ctx));
    g.m = m, g.c = dc, g.bias = dc + 2 * (size_t)n * (m - 1) + 2 * (n - 1); /* the bias's first element is C's last */
    cr_assert_eq(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE);
    cr_assert(strstr(tile_last_error(ctx), "shares elements with bias (0x"), "%s", tile_last_error(ctx));
    g.bias = dc + 2 * (size_t)n * m - 2 * (n + 1); /* ends one element before C's last row: C's row m - 2 */
    cr_assert_eq(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE);
    g.bias = 0, g.trans_a = 1, g.a = dc, g.lda = m; /* A stored k x m over C's first rows */
    cr_assert_eq(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE);
    cr_assert(strstr(tile_last_error(ctx), "shares elements with A (0x"), "%s", tile_last_error(ctx));
    /* with k = 0 A and B are not read: D = beta C + bias */
    g.k = 0, g.lda = 1, g.ldb = n, g.trans_a = 0, g.b = dc, g.beta = 1;
    cr_assert_eq(tile_gemm(ctx, &g), TILE_OK, "%s", tile_last_error(ctx));
    tile_context_destroy(ctx);
    free(hx), free(hb), free(hy);
}

/* Leading dimensions whose rows start past 2^31 bytes (A f16 with lda near 2^30 elements, C f32 with ldc near 2^29):
 * the kernels scale their 32-bit element offsets to 64-bit addresses, so an operand that spans fewer than 2^31
 * elements is addressed right however many bytes that is (docs/runtime.md); one of 2^31 elements or more is refused.
 * The emulator's device memory is calloc'd: the 4 GiB buffers cost only the rows written. */
Test(gemm, leading_dims_past_2_31_bytes, .timeout = 120) {
    static const char *const devs[] = {"emu:sm_80", "emu:sm_90a"};
    enum { M = 3, N = 24, KK = 40 };
    const int64_t lda = (1ll << 30) - 64, ldc = (1ll << 29) - 32;
    float a[M][KK], b[KK][N];
    uint16_t hb[KK * N];
    seed_rng();
    for (int i = 0; i < M; i++)
        for (int j = 0; j < KK; j++) a[i][j] = (float)f16_to_d(f32_to_f16((float)urand()));
    for (int i = 0; i < KK; i++)
        for (int j = 0; j < N; j++) hb[i * N + j] = f32_to_f16((float)urand()), b[i][j] = (float)f16_to_d(hb[i * N + j]);
    for (int di = 0; di < 2; di++) {
        tile_context *ctx;
        tile_context_options o = {.size = sizeof o, .device = devs[di]};
        cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK, "%s", tile_last_error(NULL));
        tile_devptr da, db, dc;
        cr_assert_eq(tile_malloc(ctx, (size_t)((M - 1) * lda + KK) * 2, &da), TILE_OK);
        cr_assert_eq(tile_malloc(ctx, sizeof hb, &db), TILE_OK);
        cr_assert_eq(tile_malloc(ctx, (size_t)((M - 1) * ldc + N) * 4, &dc), TILE_OK);
        cr_assert_eq(tile_memcpy_htod(ctx, db, hb, sizeof hb), TILE_OK);
        for (int i = 0; i < M; i++) {
            uint16_t row[KK];
            float poison[N];
            for (int j = 0; j < KK; j++) row[j] = f32_to_f16(a[i][j]);
            memset(poison, 0xff, sizeof poison);
            cr_assert_eq(tile_memcpy_htod(ctx, da + (size_t)(i * lda * 2), row, sizeof row), TILE_OK);
            cr_assert_eq(tile_memcpy_htod(ctx, dc + (size_t)(i * ldc * 4), poison, sizeof poison), TILE_OK);
        }
        tile_gemm_args g = {.size = sizeof g, .m = M, .n = N, .k = KK, .a = da, .lda = lda, .b = db, .ldb = N, .c = dc, .ldc = ldc,
                            .in_dtype = TILE_F16, .out_dtype = TILE_F32, .alpha = 1};
        cr_assert_eq(tile_gemm(ctx, &g), TILE_OK, "%s: %s", devs[di], tile_last_error(ctx));
        for (int i = 0; i < M; i++) {
            float c[N];
            cr_assert_eq(tile_memcpy_dtoh(ctx, c, dc + (size_t)(i * ldc * 4), sizeof c), TILE_OK);
            for (int j = 0; j < N; j++) {
                double r = 0;
                for (int q = 0; q < KK; q++) r += (double)a[i][q] * b[q][j];
                cr_expect(fabs(c[j] - r) < 1e-4, "%s: C[%d][%d] = %g, want %g (seed %llu)", devs[di], i, j, c[j], r, (unsigned long long)seed);
            }
        }
        /* 2 * (2^30 + 8) + 40 elements: past 2^31 */
        g.lda = (1ll << 30) + 8;
        cr_expect_eq(tile_gemm(ctx, &g), TILE_ERROR_INVALID_VALUE);
        cr_expect_not_null(strstr(tile_last_error(ctx), "has more than 2^31 elements"), "%s", tile_last_error(ctx));
        tile_context_destroy(ctx);
    }
}
