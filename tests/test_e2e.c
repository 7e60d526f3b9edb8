/* test_e2e.c - every shipped kernel, compiled by tile and run by the PTX
 * emulator, against a float64 C reference: fresh random inputs each run
 * (the seed is printed on failure), outputs poisoned with NaN before the
 * launch, sizes that are not multiples of the block. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/test_rng.h"
#include "include/tile/tile.h"
#include "runtime/device.h"

/* the emulator also checks shared memory for races between barriers */
static const DevOptions racecheck = {.emu_racecheck = true};


typedef struct K {
    TileDevice *dev;
    TileDevModule *mod;
    TileDevFunction *fn;
    int threads;
} K;

static void load_kernel(K *k, const char *file, const char *name, const char **defines, const char **specs) {
    tile_compile_options o = {.defines = defines, .specialize = specs};
    tile_compiled c;
    char path[512];
    snprintf(path, sizeof path, TILE_SOURCE_DIR "/kernels/%s", file);
    tile_status st = tile_compile_file(path, &o, &c);
    cr_assert_eq(st, TILE_OK, "%s: %s\n%s", file, tile_status_string(st), c.diagnostics);
    char *err = NULL;
    cr_assert_eq(dev_open(getenv("TILE_TEST_DEVICE") ? getenv("TILE_TEST_DEVICE") : "emu", &racecheck, &k->dev, &err), DEV_OK, "%s", err ? err : "?");
    cr_assert_eq(dev_module_load_ptx(k->dev, c.ptx, &k->mod), DEV_OK, "%s", dev_last_error(k->dev));
    cr_assert_eq(dev_module_get_function(k->mod, name, &k->fn), DEV_OK, "%s", dev_last_error(k->dev));
    k->threads = 32 * c.kernels[0].num_warps;
    tile_compiled_free(&c);
}

static void unload(K *k) {
    dev_module_unload(k->mod);
    dev_close(k->dev);
}

static uint64_t upload(K *k, const float *h, size_t n) {
    uint64_t d;
    cr_assert_eq(dev_malloc(k->dev, n * sizeof(float), &d), DEV_OK);
    cr_assert_eq(dev_memcpy_htod(k->dev, d, h, n * sizeof(float)), DEV_OK);
    return d;
}

static uint64_t poisoned(K *k, size_t n) {
    float *h = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) h[i] = NAN;
    uint64_t d = upload(k, h, n);
    free(h);
    return d;
}

static float *download(K *k, uint64_t d, size_t n) {
    float *h = malloc(n * sizeof(float));
    cr_assert_eq(dev_memcpy_dtoh(k->dev, h, d, n * sizeof(float)), DEV_OK);
    return h;
}

static void launch(K *k, unsigned gx, unsigned gy, void **params) {
    DevStatus st = dev_launch(k->fn, gx, gy, 1, (unsigned)k->threads, 1, 1, 0, NULL, params);
    cr_assert_eq(st, DEV_OK, "launch: %s", dev_last_error(k->dev));
    cr_assert_eq(dev_synchronize(k->dev), DEV_OK, "%s", dev_last_error(k->dev));
}

static float *randv(size_t n) {
    float *h = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) h[i] = (float)urand();
    return h;
}

/* |got - want| <= atol + rtol * |want|; NaN never matches */
static void check(const char *what, const float *got, const double *want, size_t n, double atol, double rtol) {
    for (size_t i = 0; i < n; i++) {
        double g = got[i], w = want[i];
        cr_assert(fabs(g - w) <= atol + rtol * fabs(w), "%s[%zu]: got %.9g, want %.9g (seed %llu)", what, i, g, w,
                  (unsigned long long)seed);
    }
}

static void add_case(int n, const char **defines, const char **specs) {
    K k;
    load_kernel(&k, "add.tile", "add", defines, specs);
    float *x = randv((size_t)n), *y = randv((size_t)n);
    uint64_t dx = upload(&k, x, (size_t)n), dy = upload(&k, y, (size_t)n), dout = poisoned(&k, (size_t)n + 64);
    int block = 1024;
    for (const char **d = defines; d && *d; d++)
        if (!strncmp(*d, "BLOCK=", 6)) block = atoi(*d + 6);
    void *params[] = {&dx, &dy, &dout, &n};
    launch(&k, (unsigned)((n + block - 1) / block), 1, params);
    float *out = download(&k, dout, (size_t)n + 64);
    double *want = malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < n; i++) want[i] = (double)x[i] + (double)y[i];
    check("add", out, want, (size_t)n, 1e-6, 1e-6);
    for (int i = n; i < n + 64; i++) cr_assert(isnan(out[i]), "add wrote past n at %d", i);
    free(x), free(y), free(out), free(want);
    unload(&k);
}

Test(e2e, add) {
    seed_rng();
    add_case(1000, NULL, NULL);
    add_case(5000, NULL, NULL);
    const char *d256[] = {"BLOCK=256", NULL};
    add_case(777, d256, NULL);
    const char *spec[] = {"n=16", NULL};
    add_case(4112, NULL, spec); /* vectorized path: n % 16 == 0 */
}

/* Big tiles: add.tile at BLOCK=32768 (256 elements a thread) runs against float64; its LLVM IR keeps no large
 * group of `or disjoint x, C` (NVPTX's strength reduction was quadratic over them: 3 s to emit, BLOCK=262144
 * over 100 s; as `add nuw nsw` 0.1 s and 1 s).  A tile of more than 2048 registers a thread is an error at its
 * place (a 1024 x 1024 f32 accumulator did not finish compiling in 100 s). */
Test(e2e, big_tiles, .timeout = 300) {
    seed_rng();
    const char *big[] = {"BLOCK=32768", NULL};
    add_case(70001, big, NULL);
    char path[512];
    snprintf(path, sizeof path, "%s/kernels/add.tile", TILE_SOURCE_DIR);
    tile_compile_options o = {.defines = big, .want_llvm_ir = 1};
    tile_compiled c;
    cr_assert_eq(tile_compile_file(path, &o, &c), TILE_OK, "%s", c.diagnostics);
    int ors = 0;
    for (const char *p = c.llvm_ir; (p = strstr(p, "or disjoint i32 %")); p++) {
        const char *comma = strchr(p, ',');
        if (comma && (comma[2] == '-' || (comma[2] >= '0' && comma[2] <= '9'))) ors++;
    }
    cr_expect_lt(ors, 64, "%d `or disjoint x, C` left in the LLVM IR", ors);
    tile_compiled_free(&c);
    const char *huge[] = {"BLOCK=1048576", NULL};
    o = (tile_compile_options){.defines = huge};
    cr_assert_eq(tile_compile_file(path, &o, &c), TILE_ERROR_COMPILE);
    cr_expect(strstr(c.diagnostics, "add.tile:5:30: error: a tile of 1048576 i32 elements takes 8192 registers in each of the 128 "
                                    "threads, more than the 2048"),
              "%s", c.diagnostics);
    tile_compiled_free(&c);
}

/* A kernel whose values, summed over its operations, hold more than 2^18 registers' worth in each thread is
 * refused before LLVM sees it, at the operation that crosses the budget: each tile is within the 2048
 * registers a thread, the unrolled whole is not (300 fmas over a 1024-register tile; before, LLVM took about a
 * minute on it, and with 4096 iterations was past 1.3 GB after 90 s).  A store's operand counts although the
 * store has no result, and an `if` its blocks.  A kernel well under it still compiles. */
Test(e2e, kernel_too_large_for_llvm, .timeout = 120) {
    static const struct {
        const char *src, *where;
    } bad[] = {
        {"kernel k(p: *f32) { let o = arange(0, 131072); let x = load(p + o); let y = x;\n"
         "  for a in static_range(0, 300) { y = y * x + 1.0; }\n  store(p + o, y); }\n",
         "t.tile:2:41: error: kernel 'k' too large after inlining and unrolling: its operations hold more than 262144 "
         "registers' worth of values in each thread"},
        {"kernel k(p: *f32) { let o = arange(0, 131072); let x = load(p + o);\n"
         "  for a in static_range(0, 300) { store(p + o, x); }\n}\n",
         "t.tile:2:43: error: kernel 'k' too large after inlining and unrolling"},
    };
    /* both are refused on the front end's output, before the passes (lower/budget.c): also when only the Tile IR is
     * asked for (the passes, no LLVM), which compiled them; 200 iterations (409,600 registers' worth before the
     * passes, 204,800 fmas' after) pass that check */
    tile_compile_options tir = {.size = sizeof tir, .tir_only = 1};
    for (size_t c = 0; c < sizeof bad / sizeof *bad; c++) {
        tile_compiled out;
        cr_expect_eq(tile_compile_source("t.tile", bad[c].src, &tir, &out), TILE_ERROR_COMPILE, "tir_only case %zu", c);
        cr_expect(out.diagnostics && strstr(out.diagnostics, bad[c].where), "tir_only case %zu: %s", c, out.diagnostics);
        tile_compiled_free(&out);
    }
    {
        tile_compiled out;
        const char *k200 = "kernel k(p: *f32) { let o = arange(0, 131072); let x = load(p + o); let y = x;\n"
                           "  for a in static_range(0, 200) { y = y * x + 1.0; }\n  store(p + o, y); }\n";
        cr_expect_eq(tile_compile_source("t.tile", k200, &tir, &out), TILE_OK, "%s", out.diagnostics ? out.diagnostics : "");
        tile_compiled_free(&out);
    }
    for (size_t c = 0; c < sizeof bad / sizeof *bad; c++) {
        tile_compiled out;
        cr_assert_eq(tile_compile_source("t.tile", bad[c].src, NULL, &out), TILE_ERROR_COMPILE, "case %zu: %s", c,
                     out.diagnostics ? out.diagnostics : "");
        cr_expect(strstr(out.diagnostics, bad[c].where), "case %zu: %s", c, out.diagnostics);
        tile_compiled_free(&out);
    }
    /* 12,500 run-time `if`s in a row, about 6 registers' worth each: an `if` counts 16 more for its blocks (LLVM
     * took 21 s on 10,000 such `if`s, 81 s on 20,000 and 253 s on 40,000) */
    enum { IFS = 12500 };
    size_t cap = 64 + (size_t)IFS * 40, len = 0;
    char *ifs = malloc(cap);
    cr_assert_not_null(ifs);
    len += (size_t)snprintf(ifs + len, cap - len, "kernel k(p: *i32) {\n    let a = program_id(0);\n");
    for (int i = 0; i < IFS; i++) len += (size_t)snprintf(ifs + len, cap - len, "    if a > %d { a = a + 1; }\n", i);
    snprintf(ifs + len, cap - len, "    store(p, a);\n}\n");
    tile_compiled out;
    cr_assert_eq(tile_compile_source("t.tile", ifs, NULL, &out), TILE_ERROR_COMPILE, "%s", out.diagnostics ? out.diagnostics : "");
    cr_expect(strstr(out.diagnostics, "error: kernel 'k' too large after inlining and unrolling"), "%.2000s", out.diagnostics);
    tile_compiled_free(&out);
    free(ifs);
    tile_compiled ok;
    const char *under = "kernel k(p: *f32) { let o = arange(0, 1024); let x = load(p + o); let y = x;\n"
                        "  for a in static_range(0, 64) { y = y * x + 1.0; }\n  store(p + o, y); }\n";
    cr_assert_eq(tile_compile_source("t.tile", under, NULL, &ok), TILE_OK, "%s", ok.diagnostics ? ok.diagnostics : "");
    tile_compiled_free(&ok);
}

/* The LLVM IR handed to NVPTX's code generation addresses a thread's elements of a tile as one base and
 * constant byte offsets from it: `x + offs` at BLOCK=1024 (8 elements a thread, 128 floats apart) is one
 * `getelementptr float` per pointer and seven `getelementptr i8 ..., i64 C` off it.  Before, each element had its
 * own `getelementptr float` (an `or disjoint` index), which code generation split into copies of the same base
 * that straight-line strength reduction then compared pairwise (70% of gemm.tile's PTX emission).  The values
 * are checked by e2e/add. */
Test(e2e, addresses_share_a_base) {
    char path[512];
    snprintf(path, sizeof path, "%s/kernels/add.tile", TILE_SOURCE_DIR);
    tile_compile_options o = {.want_llvm_ir = 1};
    tile_compiled c;
    cr_assert_eq(tile_compile_file(path, &o, &c), TILE_OK, "%s", c.diagnostics);
    const char *args[] = {"x", "y", "out"};
    for (int a = 0; a < 3; a++) {
        char base[64];
        snprintf(base, sizeof base, "getelementptr float, ptr addrspace(1) %%%s, i64 ", args[a]);
        int n = 0;
        for (const char *p = c.llvm_ir; (p = strstr(p, base)); p++) n++;
        cr_expect_eq(n, 1, "%d `%s...` in the LLVM IR, want 1", n, base);
    }
    int offsets = 0; /* getelementptr i8, ptr addrspace(1) %v, i64 <constant> */
    for (const char *p = c.llvm_ir; (p = strstr(p, "getelementptr i8, ptr addrspace(1) %")); p++) {
        const char *q = strstr(p, ", i64 ");
        const char *eol = strchr(p, '\n');
        if (q && (!eol || q < eol) && q[6] >= '0' && q[6] <= '9') offsets++;
    }
    cr_expect_eq(offsets, 3 * 7, "%d constant-offset addresses, want 21", offsets);
    tile_compiled_free(&c);
}

/* A launch passes every argument's bits, so the kernel's parameters are noundef (as clang marks a CUDA
 * kernel's): LLVM's strength reduction then need not prove them free of poison (cheaper code generation) */
Test(e2e, kernel_arguments_are_noundef) {
    char path[512];
    snprintf(path, sizeof path, "%s/kernels/add.tile", TILE_SOURCE_DIR);
    tile_compile_options o = {.want_llvm_ir = 1};
    tile_compiled c;
    cr_assert_eq(tile_compile_file(path, &o, &c), TILE_OK, "%s", c.diagnostics);
    const char *def = strstr(c.llvm_ir, "define ptx_kernel void @add(");
    cr_assert(def, "no kernel add in the LLVM IR");
    const char *eol = strchr(def, '\n');
    cr_assert(eol);
    const char *args[] = {"%x", "%y", "%out", "%n"};
    for (int a = 0; a < 4; a++) {
        const char *p = strstr(def, args[a]);
        cr_assert(p && p < eol, "no parameter %s in `%.*s`", args[a], (int)(eol - def), def);
        const char *start = p;
        while (start > def && start[-1] != '(' && start[-1] != ',') start--;
        char param[256];
        snprintf(param, sizeof param, "%.*s", (int)(p - start), start);
        cr_expect(strstr(param, "noundef"), "parameter %s is not noundef: `%s`", args[a], param);
    }
    tile_compiled_free(&c);
}

Test(e2e, softmax) {
    seed_rng();
    K k;
    load_kernel(&k, "softmax.tile", "softmax", NULL, NULL);
    int rows = 7, cols = 781, in_stride = 800, out_stride = 790;
    float *x = randv((size_t)rows * in_stride);
    for (size_t i = 0; i < (size_t)rows * in_stride; i++) x[i] *= 8;
    uint64_t din = upload(&k, x, (size_t)rows * in_stride), dout = poisoned(&k, (size_t)rows * out_stride);
    void *params[] = {&dout, &din, &in_stride, &out_stride, &cols};
    launch(&k, (unsigned)rows, 1, params);
    float *out = download(&k, dout, (size_t)rows * out_stride);
    for (int r = 0; r < rows; r++) {
        double mx = -INFINITY, s = 0, want[1024];
        for (int c = 0; c < cols; c++) mx = fmax(mx, x[r * in_stride + c]);
        for (int c = 0; c < cols; c++) s += exp(x[r * in_stride + c] - mx);
        for (int c = 0; c < cols; c++) want[c] = exp(x[r * in_stride + c] - mx) / s;
        check("softmax", out + r * out_stride, want, (size_t)cols, 1e-6, 1e-4);
        for (int c = cols; c < out_stride; c++) cr_assert(isnan(out[r * out_stride + c]), "softmax wrote a masked column");
    }
    free(x), free(out);
    unload(&k);
}

Test(e2e, layernorm) {
    seed_rng();
    K k;
    load_kernel(&k, "layernorm.tile", "layernorm", NULL, NULL);
    int rows = 5, n = 2500, stride = 2600;
    float eps = 1e-5f;
    float *x = randv((size_t)rows * stride), *w = randv((size_t)n), *b = randv((size_t)n);
    for (int i = 0; i < rows * stride; i++) x[i] = x[i] * 3 + 0.5f;
    uint64_t dx = upload(&k, x, (size_t)rows * stride), dw = upload(&k, w, (size_t)n), db = upload(&k, b, (size_t)n);
    uint64_t dy = poisoned(&k, (size_t)rows * stride), dm = poisoned(&k, (size_t)rows), dr = poisoned(&k, (size_t)rows);
    void *params[] = {&dx, &dy, &dw, &db, &dm, &dr, &stride, &n, &eps};
    launch(&k, (unsigned)rows, 1, params);
    float *y = download(&k, dy, (size_t)rows * stride), *mean = download(&k, dm, (size_t)rows), *rstd = download(&k, dr, (size_t)rows);
    double *want = malloc(sizeof(double) * (size_t)n);
    for (int r = 0; r < rows; r++) {
        double mu = 0, var = 0;
        for (int c = 0; c < n; c++) mu += x[r * stride + c];
        mu /= n;
        for (int c = 0; c < n; c++) var += (x[r * stride + c] - mu) * (x[r * stride + c] - mu);
        var /= n;
        double rs_ = 1 / sqrt(var + eps);
        check("mean", &mean[r], &mu, 1, 1e-5, 1e-4);
        check("rstd", &rstd[r], &rs_, 1, 1e-5, 1e-4);
        for (int c = 0; c < n; c++) want[c] = (x[r * stride + c] - mu) * rs_ * w[c] + b[c];
        check("layernorm", y + r * stride, want, (size_t)n, 1e-4, 1e-4);
    }
    free(x), free(w), free(b), free(y), free(mean), free(rstd), free(want);
    unload(&k);
}

Test(e2e, rmsnorm) {
    seed_rng();
    K k;
    load_kernel(&k, "rmsnorm.tile", "rmsnorm", NULL, NULL);
    int rows = 3, n = 1500, stride = 1536;
    float eps = 1e-6f;
    float *x = randv((size_t)rows * stride), *w = randv((size_t)n);
    uint64_t dx = upload(&k, x, (size_t)rows * stride), dw = upload(&k, w, (size_t)n), dy = poisoned(&k, (size_t)rows * stride);
    void *params[] = {&dx, &dy, &dw, &stride, &n, &eps};
    launch(&k, (unsigned)rows, 1, params);
    float *y = download(&k, dy, (size_t)rows * stride);
    double *want = malloc(sizeof(double) * (size_t)n);
    for (int r = 0; r < rows; r++) {
        double ss = 0;
        for (int c = 0; c < n; c++) ss += (double)x[r * stride + c] * x[r * stride + c];
        double rr = 1 / sqrt(ss / n + eps);
        for (int c = 0; c < n; c++) want[c] = x[r * stride + c] * rr * w[c];
        check("rmsnorm", y + r * stride, want, (size_t)n, 1e-5, 1e-4);
    }
    free(x), free(w), free(y), free(want);
    unload(&k);
}

Test(e2e, row_sum_atomics) {
    seed_rng();
    K k;
    load_kernel(&k, "row_sum.tile", "row_sum", NULL, NULL);
    int m = 50, n = 300, stride = 310;
    float *x = randv((size_t)m * stride);
    float *zero = calloc((size_t)m + 16, sizeof(float));
    for (int i = m; i < m + 16; i++) zero[i] = NAN; /* past the end must stay untouched */
    uint64_t dx = upload(&k, x, (size_t)m * stride), dout = upload(&k, zero, (size_t)m + 16);
    void *params[] = {&dx, &dout, &m, &n, &stride};
    launch(&k, (unsigned)((m + 31) / 32), (unsigned)((n + 127) / 128), params);
    float *out = download(&k, dout, (size_t)m + 16);
    double want[64];
    for (int r = 0; r < m; r++) {
        want[r] = 0;
        for (int c = 0; c < n; c++) want[r] += x[r * stride + c];
    }
    check("row_sum", out, want, (size_t)m, 1e-4, 1e-4);
    for (int i = m; i < m + 16; i++) cr_assert(isnan(out[i]), "row_sum wrote past m at %d", i);
    free(x), free(zero), free(out);
    unload(&k);
}

Test(e2e, matmul) {
    seed_rng();
    K k;
    load_kernel(&k, "matmul.tile", "matmul", NULL, NULL);
    int m = 70, n = 45, kk = 50, sa = 53, sb = 47, sc = 49;
    float *a = randv((size_t)m * sa), *b = randv((size_t)kk * sb);
    uint64_t da = upload(&k, a, (size_t)m * sa), db = upload(&k, b, (size_t)kk * sb), dc = poisoned(&k, (size_t)m * sc);
    void *params[] = {&da, &db, &dc, &m, &n, &kk, &sa, &sb, &sc};
    launch(&k, (unsigned)((m + 63) / 64), (unsigned)((n + 63) / 64), params);
    float *c = download(&k, dc, (size_t)m * sc);
    for (int i = 0; i < m; i++) {
        double want[64];
        for (int j = 0; j < n; j++) {
            want[j] = 0;
            for (int p = 0; p < kk; p++) want[j] += (double)a[i * sa + p] * b[p * sb + j];
        }
        check("matmul", c + i * sc, want, (size_t)n, 1e-5, 1e-5);
        for (int j = n; j < sc; j++) cr_assert(isnan(c[i * sc + j]), "matmul wrote a masked column");
    }
    free(a), free(b), free(c);
    unload(&k);
}

Test(e2e, transpose) {
    seed_rng();
    K k;
    load_kernel(&k, "transpose.tile", "transpose", NULL, NULL);
    int m = 70, n = 45, is = 47, os = 72;
    float *x = randv((size_t)m * is);
    uint64_t din = upload(&k, x, (size_t)m * is), dout = poisoned(&k, (size_t)n * os);
    void *params[] = {&dout, &din, &m, &n, &is, &os};
    launch(&k, (unsigned)((m + 31) / 32), (unsigned)((n + 31) / 32), params);
    float *out = download(&k, dout, (size_t)n * os);
    for (int j = 0; j < n; j++) {
        double want[72];
        for (int i = 0; i < m; i++) want[i] = x[i * is + j];
        check("transpose", out + j * os, want, (size_t)m, 0, 0);
        for (int i = m; i < os; i++) cr_assert(isnan(out[j * os + i]), "transpose wrote a masked element");
    }
    free(x), free(out);
    unload(&k);
}
