/* Kernels configured at compile time, as Triton's constexprs: generic over dtype (a type position may
 * name a compile-time constant whose value is a type, `x: *T` with `const T = f16`), string constants
 * (`const ACT = "relu"`, `if ACT == "relu"`) and type comparisons (`if T == f16`), set per compile by
 * defines; checked on the emulator against a float64 reference, and the errors of misuse. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/tile/tile.h"
#include "test_rng.h"

/* Each row of x scaled by s / max|row| (in f32), stored as OT; T, OT and the accumulator are names. */
static const char *generic_src =
    "const ACC = f32;\n"
    "fn load_acc(p: *T, offs, mask, const T) { return cast(load(p + offs, mask, 0), ACC); }\n"
    "@num_warps(2)\n"
    "kernel scale_rows(x: *T, out: *OT, n: i32, ld: i32, s: f32, const T = f16, const OT = T, const B: i32 = 128) {\n"
    "    let row = program_id(0);\n"
    "    let c = arange(0, B);\n"
    "    let m = c < n;\n"
    "    let v: ACC = load_acc(x + row * ld, c, m, T);\n"
    "    let mx = max(where(m, abs(v), 0.0), axis=0);\n"
    "    let r: OT = cast(v * s / mx, OT);\n"
    "    store(out + row * ld + c, r, m);\n"
    "}\n";

static size_t dt_size(const char *dt) { return !strcmp(dt, "f64") ? 8 : !strcmp(dt, "f32") ? 4 : 2; }

static double to_double(const char *dt, const void *p) {
    if (!strcmp(dt, "f64")) return *(const double *)p;
    if (!strcmp(dt, "f32")) return *(const float *)p;
    uint16_t h = *(const uint16_t *)p;
    if (!strcmp(dt, "bf16")) {
        uint32_t u = (uint32_t)h << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    int e = h >> 10 & 0x1f, m = h & 0x3ff;
    if (e == 31) return m ? NAN : h & 0x8000 ? -INFINITY : INFINITY;
    double v = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
    return h & 0x8000 ? -v : v;
}

/* d rounded to nearest even in dt, stored at p */
static void from_double(const char *dt, double d, void *p) {
    if (!strcmp(dt, "f64")) *(double *)p = d;
    else if (!strcmp(dt, "f32")) *(float *)p = (float)d;
    else if (!strcmp(dt, "bf16")) {
        float f = (float)d;
        uint32_t u;
        memcpy(&u, &f, 4);
        *(uint16_t *)p = (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
    } else { /* f16, nearest even: normal, subnormal (a product of random inputs near 0), zero, or infinity past the range */
        int e;
        double fr = frexp(fabs(d), &e); /* |d| = fr 2^e, fr in [0.5, 1) */
        uint16_t h;
        if (fabs(d) < 0x1p-14) h = (uint16_t)nearbyint(ldexp(fabs(d), 24)); /* units of 2^-24; 1024 is the least normal */
        else {
            double mant = nearbyint(ldexp(fr, 11)); /* 11 significant bits */
            if (mant == 2048) mant = 1024, e++;
            h = e + 14 >= 31 ? 0x7c00 : (uint16_t)((e + 14) << 10 | ((int)mant - 1024));
        }
        *(uint16_t *)p = signbit(d) ? h | 0x8000 : h;
    }
}

static double tolerance(const char *dt) { return !strcmp(dt, "bf16") ? 8e-3 : !strcmp(dt, "f16") ? 1e-3 : 2e-6; }

static void generic_case(tile_context *ctx, const char *t, const char *ot, int rows, int n, int ld) {
    char dt_def[32], ot_def[32];
    snprintf(dt_def, sizeof dt_def, "T=%s", t);
    snprintf(ot_def, sizeof ot_def, "OT=%s", ot);
    const char *defines[] = {dt_def, ot_def, NULL};
    tile_module *m;
    cr_assert_eq(tile_module_load_source(ctx, generic_src, defines, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(m, "scale_rows", &k), TILE_OK);
    size_t ts = dt_size(t), os = dt_size(ot), count = (size_t)rows * (size_t)ld;
    unsigned char *hx = malloc(count * ts), *hout = malloc(count * os);
    double *xv = malloc(count * sizeof *xv);
    for (size_t i = 0; i < count; i++) {
        from_double(t, 4 * urand(), hx + i * ts);
        xv[i] = to_double(t, hx + i * ts); /* the value the kernel reads */
    }
    memset(hout, 0xff, count * os); /* poison: a NaN in every float type */
    tile_devptr dx, dout;
    cr_assert_eq(tile_malloc(ctx, count * ts, &dx), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, count * os, &dout), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, dx, hx, count * ts), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, dout, hout, count * os), TILE_OK);
    float s = 1.5f;
    void *args[] = {&dx, &dout, &n, &ld, &s};
    cr_assert_eq(tile_launch(k, (tile_dim3){(unsigned)rows, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, hout, dout, count * os), TILE_OK);
    double tol = tolerance(ot);
    for (int r = 0; r < rows; r++) {
        double mx = 0;
        for (int c = 0; c < n; c++) mx = fmax(mx, fabs(xv[(size_t)r * ld + c]));
        for (int c = 0; c < ld; c++) {
            size_t i = (size_t)r * ld + c;
            double got = to_double(ot, hout + i * os);
            if (c >= n) { /* past the row: untouched */
                cr_expect(isnan(got), "%s->%s [%d][%d] written past n: %g", t, ot, r, c, got);
                continue;
            }
            double want = xv[i] * 1.5 / mx;
            cr_expect(fabs(got - want) <= tol * fmax(fabs(want), 1e-2), "%s->%s [%d][%d] = %.9g, want %.9g", t, ot, r, c, got, want);
        }
    }
    tile_free(ctx, dx);
    tile_free(ctx, dout);
    free(hx);
    free(hout);
    free(xv);
    tile_module_unload(m);
}

Test(lang_generic, one_source_every_dtype) {
    tile_context_options o = {.device = "emu", .emu_host_threads = 2};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK);
    seed_rng();
    cr_log_info("seed %llu (TILE_TEST_SEED replays it)", (unsigned long long)seed);
    static const char *const pairs[][2] = {{"f16", "f16"}, {"bf16", "f32"}, {"f32", "bf16"}, {"f64", "f64"}, {"f32", "f16"}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) generic_case(ctx, pairs[i][0], pairs[i][1], 3, 77, 83);
    tile_context_destroy(ctx);
}

/* The compiled signature follows the define: the same source, three pointer types. */
Test(lang_generic, signature_follows_the_define) {
    static const char *const want[] = {"f16", "bf16", "i8"};
    for (int i = 0; i < 3; i++) {
        char def[16];
        snprintf(def, sizeof def, "DT=%s", want[i]);
        const char *defines[] = {def, NULL};
        tile_compile_options o = {.defines = defines, .tir_only = 1};
        tile_compiled c;
        tile_status st = tile_compile_source("t.tile", "const DT = f32;\nkernel k(p: *DT, v: DT) { store(p, v); }\n", &o, &c);
        cr_assert_eq(st, TILE_OK, "%s", c.diagnostics);
        char sig[64];
        snprintf(sig, sizeof sig, "%%p: ptr<%s>", want[i]);
        cr_expect(strstr(c.tir, sig), "no '%s' in\n%s", sig, c.tir);
        snprintf(sig, sizeof sig, "%%v: %s)", want[i]);
        cr_expect(strstr(c.tir, sig), "no '%s' in\n%s", sig, c.tir);
        tile_compiled_free(&c);
    }
}

static void expect_error(const char *src, const char *where, const char *what) {
    tile_compile_options o = {0};
    tile_compiled c;
    tile_status st = tile_compile_source("t.tile", src, &o, &c);
    cr_expect_eq(st, TILE_ERROR_COMPILE, "compiled:\n%s", src);
    cr_expect(c.diagnostics && strstr(c.diagnostics, where), "no '%s' in\n%s", where, c.diagnostics);
    cr_expect(c.diagnostics && strstr(c.diagnostics, what), "no '%s' in\n%s", what, c.diagnostics);
    tile_compiled_free(&c);
}

Test(lang_generic, names_that_are_not_types) {
    expect_error("kernel k(x: *N, const N: i32 = 4) { }\n", "t.tile:1:14", "'N' is used as a type, but it is a compile-time i32");
    expect_error("kernel k(x: *Q) { }\n", "t.tile:1:14", "unknown type 'Q'");
    expect_error("const T = \"x\";\nkernel k(x: *T) { }\n", "t.tile:2:14", "'T' is used as a type, but it is the string \"x\"");
    /* a call giving a type stands for it (dtype_of(v), probe Z F12); one giving a value is an error at the call */
    expect_error("kernel k(x: *f32) { let v = load(x); let c = v as abs(v); }\n", "t.tile:1:51",
                 "this call is used as a type, but it gives f32");
    tile_compile_options o = {.tir_only = 1};
    tile_compiled c;
    cr_assert_eq(tile_compile_source("t.tile", "kernel k(x: *f16, y: *f32) {\n    let v = load(y);\n    let a = load(x) as dtype_of(v);\n"
                                     "    let b: dtype_of(v) = 1.5;\n    store(y, a + b);\n}\n", &o, &c), TILE_OK, "%s", c.diagnostics);
    cr_expect(strstr(c.tir, "cast") && strstr(c.tir, ": f32"), "%s", c.tir);
    tile_compiled_free(&c);
    expect_error("fn f() { }\nkernel k(x: *f) { }\n", "t.tile:2:14", "'f' is a function, not a type");
    expect_error("kernel k(x: *f32) { let y: S = 1; }\n", "t.tile:1:28", "unknown type 'S'");
    /* a function's parameter type may name another parameter; a non-type there is reported at the type */
    expect_error("fn f(p: *T, const T) { }\nkernel k(x: *f32) { f(x, 3); }\n", "t.tile:1:10", "'T' is used as a type, but it is a compile-time i32");
}

/* Triton's matmul tutorial picks its activation by a string constexpr; types compare as constexprs do. */
static const char *act_src =
    "const SEM = \"relaxed\";\n"
    "fn act(x, const ACT) {\n"
    "    if ACT == \"leaky_relu\" { return where(x >= 0.0, x, 0.01 * x); }\n"
    "    if ACT == \"relu\" { return maximum(x, 0.0); }\n"
    "    static_assert(ACT == \"none\", \"unknown activation\");\n"
    "    return x;\n"
    "}\n"
    "kernel k(x: *T, out: *f32, count: *i32, n: i32, const T = f32, const ACT = \"none\", const B: i32 = 128) {\n"
    "    let o = program_id(0) * B + arange(0, B);\n"
    "    let v = cast(load(x + o, o < n, 0), f32);\n"
    "    if T != f32 { v = v * 2.0; }\n"
    "    store(out + o, act(v, ACT), o < n);\n"
    "    atomic_add(count, 1, sem=SEM);\n"
    "}\n";

Test(lang_generic, string_and_type_constants) {
    tile_context_options co = {.device = "emu", .emu_host_threads = 2};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&co, &ctx), TILE_OK);
    seed_rng();
    static const char *const acts[] = {"ACT=none", "ACT=relu", "ACT=\"leaky_relu\""};
    enum { N = 301 };
    float hx[N], hout[N];
    uint16_t hh[N];
    for (int i = 0; i < N; i++) {
        from_double("f16", 8 * urand(), &hh[i]);
        hx[i] = (float)to_double("f16", &hh[i]);
    }
    for (int a = 0; a < 3; a++)
        for (int half = 0; half < 2; half++) {
            const char *defines[] = {acts[a], half ? "T=f16" : "T=f32", NULL};
            tile_module *m;
            cr_assert_eq(tile_module_load_source(ctx, act_src, defines, &m), TILE_OK, "%s", tile_last_error(ctx));
            tile_kernel *k;
            cr_assert_eq(tile_module_get_kernel(m, "k", &k), TILE_OK);
            tile_devptr dx, dout, dc;
            int32_t n = N, count = 0;
            cr_assert_eq(tile_malloc(ctx, sizeof hx, &dx), TILE_OK);
            cr_assert_eq(tile_malloc(ctx, sizeof hout, &dout), TILE_OK);
            cr_assert_eq(tile_malloc(ctx, 4, &dc), TILE_OK);
            cr_assert_eq(tile_memcpy_htod(ctx, dx, half ? (const void *)hh : (const void *)hx, half ? sizeof hh : sizeof hx), TILE_OK);
            memset(hout, 0xff, sizeof hout);
            cr_assert_eq(tile_memcpy_htod(ctx, dout, hout, sizeof hout), TILE_OK);
            cr_assert_eq(tile_memcpy_htod(ctx, dc, &count, 4), TILE_OK);
            void *args[] = {&dx, &dout, &dc, &n};
            cr_assert_eq(tile_launch(k, (tile_dim3){3, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
            cr_assert_eq(tile_memcpy_dtoh(ctx, hout, dout, sizeof hout), TILE_OK);
            cr_assert_eq(tile_memcpy_dtoh(ctx, &count, dc, 4), TILE_OK);
            cr_expect_eq(count, 3, "%s: one atomic a program, got %d", acts[a], count);
            for (int i = 0; i < N; i++) {
                float v = hx[i] * (half ? 2.0f : 1.0f);
                float want = a == 0 ? v : a == 1 ? fmaxf(v, 0.0f) : v >= 0 ? v : 0.01f * v;
                cr_expect(fabsf(hout[i] - want) <= 1e-6f * fabsf(want), "%s %s [%d] = %.9g, want %.9g (seed %llu)", acts[a],
                          defines[1], i, hout[i], want, (unsigned long long)seed);
            }
            tile_free(ctx, dx);
            tile_free(ctx, dout);
            tile_free(ctx, dc);
            tile_module_unload(m);
        }
    /* a string const names the atomic's ordering */
    const char *d1[] = {"ACT=relu", NULL};
    tile_compile_options o = {.defines = d1, .arch = "sm_80"};
    tile_compiled c;
    cr_assert_eq(tile_compile_source("t.tile", act_src, &o, &c), TILE_OK, "%s", c.diagnostics);
    cr_expect(strstr(c.ptx, "red.relaxed.gpu.global.add"), "%s", c.ptx);
    tile_compiled_free(&c);
    /* an activation the kernel does not know: its static_assert, at the assert */
    const char *d2[] = {"ACT=gelu", NULL};
    o.defines = d2;
    cr_expect_eq(tile_compile_source("t.tile", act_src, &o, &c), TILE_ERROR_COMPILE);
    cr_expect(strstr(c.diagnostics, "t.tile:5:5: error: static_assert failed: unknown activation"), "%s", c.diagnostics);
    tile_compiled_free(&c);
    tile_context_destroy(ctx);
}

/* A const given a fn's name calls that fn, as Triton's activation passed as a JIT-function constexpr (xformers'
 * dropout kernels' `ACTIVATION(x)`): the default, a define, None (not called); the name stays a string beside
 * (`ACT == "leaky"`), and one that names no fn is an error saying so. */
static const char *fn_const_src =
    "fn relu_act(x) { return where(x >= 0.0, x, 0.0); }\n"
    "fn leaky(x) { return where(x >= 0.0, x, 0.01 * x); }\n"
    "kernel k(x: *f32, out: *f32, n: i32, const ACT = \"relu_act\") {\n"
    "    let o = program_id(0) * 128 + arange(0, 128);\n"
    "    let v = load(x + o, o < n, 0.0);\n"
    "    if ACT is not None { v = ACT(v); }\n"
    "    if ACT == \"leaky\" { v = v + 1.0; }\n"
    "    store(out + o, v, o < n);\n"
    "}\n";

Test(lang_generic, const_naming_a_fn) {
    tile_context_options co = {.device = "emu", .emu_host_threads = 2};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&co, &ctx), TILE_OK);
    seed_rng();
    enum { N = 200 };
    float hx[N], hout[N];
    for (int i = 0; i < N; i++) hx[i] = (float)(4 * urand());
    static const char *const acts[] = {NULL, "ACT=leaky", "ACT=None"};
    for (int a = 0; a < 3; a++) {
        const char *defines[] = {acts[a], NULL};
        tile_module *m;
        cr_assert_eq(tile_module_load_source(ctx, fn_const_src, a ? defines : NULL, &m), TILE_OK, "%s", tile_last_error(ctx));
        tile_kernel *k;
        cr_assert_eq(tile_module_get_kernel(m, "k", &k), TILE_OK);
        tile_devptr dx, dout;
        int32_t n = N;
        cr_assert_eq(tile_malloc(ctx, sizeof hx, &dx), TILE_OK);
        cr_assert_eq(tile_malloc(ctx, sizeof hout, &dout), TILE_OK);
        cr_assert_eq(tile_memcpy_htod(ctx, dx, hx, sizeof hx), TILE_OK);
        memset(hout, 0xff, sizeof hout);
        cr_assert_eq(tile_memcpy_htod(ctx, dout, hout, sizeof hout), TILE_OK);
        void *args[] = {&dx, &dout, &n};
        cr_assert_eq(tile_launch(k, (tile_dim3){2, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
        cr_assert_eq(tile_memcpy_dtoh(ctx, hout, dout, sizeof hout), TILE_OK);
        for (int i = 0; i < N; i++) {
            float v = hx[i], want = a == 0 ? fmaxf(v, 0.0f) : a == 1 ? (v >= 0 ? v : 0.01f * v) + 1.0f : v;
            cr_expect(fabsf(hout[i] - want) <= 1e-6f * fabsf(want), "%s [%d] = %.9g, want %.9g", a ? acts[a] : "default", i, hout[i],
                      want);
        }
        tile_free(ctx, dx);
        tile_free(ctx, dout);
        tile_module_unload(m);
    }
    tile_context_destroy(ctx);
    const char *bad[] = {"ACT=gelu_act", NULL};
    tile_compile_options o = {.defines = bad};
    tile_compiled c;
    cr_expect_eq(tile_compile_source("t.tile", fn_const_src, &o, &c), TILE_ERROR_COMPILE);
    cr_expect(strstr(c.diagnostics, "t.tile:6:30: error: 'ACT' holds the string \"gelu_act\", which names no fn of this file"), "%s",
              c.diagnostics);
    tile_compiled_free(&c);
}

/* Triton spellings that compile here: a const string naming a fn as reduce's and associative_scan's combine_fn
 * and map_elementwise's scalar_fn (as `OP(a, b)` calls it), `!x` of numbers (`x == 0`: an i32 tile, an f32 tile with
 * a NaN, which is not zero, and a scalar), a const both branches of a run-time `if` declare with one value (a const
 * after it: a shape), `_log2` with constexpr lets run at compile time, and `assert cond, msg`. */
static const char *porting_src =
    "fn add(a, b) { return a + b; }\n"
    "fn mx(a, b) { return maximum(a, b); }\n"
    "fn zero_flag(v) { return (!v) as i32; }\n"
    "fn _log2(const i) {\n"
    "    let log2: constexpr = 0;\n"
    "    let n: constexpr = i;\n"
    "    while n > 1 { n >>= 1; log2 += 1; }\n"
    "    return log2;\n"
    "}\n"
    "@num_warps(2)\n"
    "kernel k(x: *i32, f: *f32, out: *i32, sums: *i32, n: i32, const OP = \"add\", const FN = \"zero_flag\") {\n"
    "    let pid = program_id(0);\n"
    "    if n > 1 { const W = 64; } else { const W = 64; }\n"
    "    let o = pid * W + arange(0, 1 << _log2(W));\n"
    "    let m = o < n;\n"
    "    let v = load(x + o, m, 0);\n"
    "    assert n > 0, \"n must be positive\";\n"
    "    let c = associative_scan(v, 0, OP);\n"
    "    let flags = (!v) as i32 + (!load(f + o, m, 1.0)) as i32 * 2 + map_elementwise(FN, v) * 4 + (!pid) as i32 * 8;\n"
    "    store(out + o, c * 16 + flags, m);\n"
    "    store(sums + pid, reduce(v, 0, OP));\n"
    "}\n";

Test(lang_generic, const_string_combine_fn_and_not_of_numbers) {
    tile_context_options co = {.device = "emu", .emu_host_threads = 2};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&co, &ctx), TILE_OK);
    seed_rng();
    enum { N = 150, P = 3 };
    int32_t hx[N], hout[N], hs[P];
    float hf[N];
    for (int i = 0; i < N; i++) {
        hx[i] = (int32_t)(rnext() % 3);
        hf[i] = rnext() % 4 == 0 ? 0.0f : (float)urand();
    }
    hf[7] = NAN;
    hf[8] = -0.0f;
    for (int a = 0; a < 2; a++) {
        const char *defines[] = {"OP=mx", NULL};
        tile_module *mod;
        cr_assert_eq(tile_module_load_source(ctx, porting_src, a ? defines : NULL, &mod), TILE_OK, "%s", tile_last_error(ctx));
        tile_kernel *k;
        cr_assert_eq(tile_module_get_kernel(mod, "k", &k), TILE_OK);
        tile_devptr dx, df, dout, ds;
        int32_t n = N;
        cr_assert_eq(tile_malloc(ctx, sizeof hx, &dx), TILE_OK);
        cr_assert_eq(tile_malloc(ctx, sizeof hf, &df), TILE_OK);
        cr_assert_eq(tile_malloc(ctx, sizeof hout, &dout), TILE_OK);
        cr_assert_eq(tile_malloc(ctx, sizeof hs, &ds), TILE_OK);
        cr_assert_eq(tile_memcpy_htod(ctx, dx, hx, sizeof hx), TILE_OK);
        cr_assert_eq(tile_memcpy_htod(ctx, df, hf, sizeof hf), TILE_OK);
        memset(hout, 0xff, sizeof hout);
        memset(hs, 0xff, sizeof hs);
        cr_assert_eq(tile_memcpy_htod(ctx, dout, hout, sizeof hout), TILE_OK);
        cr_assert_eq(tile_memcpy_htod(ctx, ds, hs, sizeof hs), TILE_OK);
        void *args[] = {&dx, &df, &dout, &ds, &n};
        cr_assert_eq(tile_launch(k, (tile_dim3){P, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
        cr_assert_eq(tile_memcpy_dtoh(ctx, hout, dout, sizeof hout), TILE_OK);
        cr_assert_eq(tile_memcpy_dtoh(ctx, hs, ds, sizeof hs), TILE_OK);
        for (int p = 0; p < P; p++) {
            int32_t acc = 0;
            for (int j = 0; j < 64; j++) {
                int i = p * 64 + j;
                int32_t v = i < N ? hx[i] : 0;
                acc = a ? (v > acc ? v : acc) : acc + v;
                if (i >= N) continue;
                int32_t flags = (v == 0) + (hf[i] == 0.0f) * 2 + (v == 0) * 4 + (p == 0) * 8;
                cr_expect_eq(hout[i], acc * 16 + flags, "%s [%d] = %d, want %d (x %d, f %g)", a ? "mx" : "add", i, hout[i],
                             acc * 16 + flags, v, hf[i]);
            }
            cr_expect_eq(hs[p], acc, "%s sums[%d] = %d, want %d", a ? "mx" : "add", p, hs[p], acc);
        }
        tile_free(ctx, dx);
        tile_free(ctx, df);
        tile_free(ctx, dout);
        tile_free(ctx, ds);
        tile_module_unload(mod);
    }
    tile_context_destroy(ctx);
}

Test(lang_generic, strings_and_types_misused) {
    expect_error("const A = \"x\";\nkernel k(p: *i32) { store(p, A); }\n", "t.tile:2:30", "a string (\"x\") is not a value");
    expect_error("const A = \"x\";\nkernel k(p: *i32) { if A + 1 { } }\n", "t.tile:2:26", "strings only compare with == and != to strings");
    expect_error("kernel k(p: *i32) { if f16 < f32 { } }\n", "t.tile:1:28", "types only compare with == and != to types");
    expect_error("kernel k(p: *i32) { if \"a\" == 1 { } }\n", "t.tile:1:28", "strings only compare with == and != to strings (here 'string' == 'i32')");
    /* xformers' `internal_dtype == "f32"` where the define made internal_dtype the type f32: the way to each */
    expect_error("kernel k(p: *i32, const DT = f32) { if DT == \"f32\" { } }\n", "t.tile:1:43",
                 "(here the type 'f32' == the string \"f32\"): a define or a keyword of compile() of a type's name (-D NAME=f32, "
                 "NAME=\"f32\") is that type; give the string quoted (NAME='\"f32\"'), or compare with the type (== f32)");
    tile_compile_options o = {.defines = (const char *const[]){"A=-x", NULL}};
    tile_compiled c;
    cr_expect_eq(tile_compile_source("t.tile", "const A = 1;\nkernel k(p: *i32) { }\n", &o, &c), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(c.diagnostics, "expected a number, true, false, None, a type name (or a pointer type, *f16) or a string"), "%s",
              c.diagnostics);
    tile_compiled_free(&c);
}

/* -D A=inf, -inf, nan (Python's float("inf") as a constexpr): floats, which compile-time code can test; "inf"
 * quoted stays a string. */
Test(lang_generic, define_inf_nan) {
    const char *src = "kernel k(p: *i32, const A: f64 = 0.0) {\n    static_assert(A != A || A > 1e308 || A < -1e308);\n    store(p, 1);\n}\n";
    const char *vals[] = {"A=inf", "A=-inf", "A=nan"};
    for (int i = 0; i < 3; i++) {
        tile_compile_options o = {.defines = (const char *const[]){vals[i], NULL}};
        tile_compiled c;
        cr_expect_eq(tile_compile_source("t.tile", src, &o, &c), TILE_OK, "%s: %s", vals[i], c.diagnostics);
        tile_compiled_free(&c);
    }
    tile_compile_options o = {.defines = (const char *const[]){"A=1.5", NULL}};
    tile_compiled c;
    cr_expect_eq(tile_compile_source("t.tile", src, &o, &c), TILE_ERROR_COMPILE, "a finite value passed the assert");
    tile_compiled_free(&c);
}

/* -D A=nan is a positive NaN, as Python's float("nan") (which tile.compile passes as "nan"), and -D A=-nan a
 * negative one: the define's NaN was x86's 0.0 / 0.0, whose sign bit is set, so `copysign(1.0, A)` was -1. */
Test(lang_generic, define_nan_sign) {
    const char *src = "kernel k(p: *f32, const A: f32 = 0.0) {\n    static_print(A, -A);\n    store(p, A);\n}\n";
    const char *vals[] = {"A=nan", "A=-nan"}, *want[] = {"static_print: nan -nan", "static_print: -nan nan"};
    for (int i = 0; i < 2; i++) {
        tile_compile_options o = {.defines = (const char *const[]){vals[i], NULL}, .tir_only = 1};
        tile_compiled c;
        cr_assert_eq(tile_compile_source("t.tile", src, &o, &c), TILE_OK, "%s: %s", vals[i], c.diagnostics);
        cr_expect(strstr(c.diagnostics, want[i]), "%s: want '%s' in\n%s", vals[i], want[i], c.diagnostics);
        tile_compiled_free(&c);
    }
}

/* static_print writes a compile-time float as Python's repr does (Triton's static_print is Python's print): the
 * shortest digits that read back as the value, so 0.1 is "0.1", not %.17g's "0.10000000000000001"; a computed one
 * keeps the digits it needs (1.0 / 3.0).  Also the note's other parts: a string, a type (a pointer type with its
 * pointee, as a run-time pointer prints), a shape, a run-time value. */
Test(lang_generic, static_print_floats_as_python) {
    const char *src = "kernel k(p: *f32, n: i32) {\n"
                      "    static_print(\"v\", 0.1, 2.7, 1e300, 1.0 / 3.0, 2.5e-8, 3.0, -0.0, f16, pointer_type(bf16), [2, 3], n);\n"
                      "    store(p, 1.0);\n"
                      "}\n";
    tile_compile_options o = {.tir_only = 1};
    tile_compiled c;
    cr_assert_eq(tile_compile_source("t.tile", src, &o, &c), TILE_OK, "%s", c.diagnostics);
    const char *want = "t.tile:2:5: note: static_print: v 0.1 2.7 1e+300 0.3333333333333333 2.5e-08 3 -0 f16 ptr<bf16> [2, 3] i32";
    cr_expect(strstr(c.diagnostics, want), "want '%s' in\n%s", want, c.diagnostics);
    tile_compiled_free(&c);
}

/* A declared integer type takes every value it holds, its largest included: `const X: i64 = 9223372036854775807`,
 * `let m: u64 = 0xFFFFFFFFFFFFFFFF` and -D Z=18446744073709551615 for a u64 (the range check compared doubles, and
 * i64's and u64's largest values round up to 2^63 and 2^64, so they "did not fit"); one past the range still errs. */
Test(lang_generic, declared_integer_types_take_their_extremes) {
    const char *src = "const X: i64 = 9223372036854775807;\n"
                      "const N: i64 = -9223372036854775808;\n"
                      "const U: u32 = 4294967295;\n"
                      "kernel k(p: *u64, const Z: u64 = 0, const B: i8 = 0) {\n"
                      "    let m: u64 = 0xFFFFFFFFFFFFFFFF;\n"
                      "    static_print(X, N, U, Z, m, B);\n"
                      "    store(p, m);\n"
                      "}\n";
    tile_compile_options o = {.defines = (const char *const[]){"Z=18446744073709551615", "B=-128", NULL}, .tir_only = 1};
    tile_compiled c;
    cr_assert_eq(tile_compile_source("t.tile", src, &o, &c), TILE_OK, "%s", c.diagnostics);
    cr_expect(strstr(c.diagnostics, "static_print: 9223372036854775807 -9223372036854775808 4294967295 18446744073709551615 "
                                    "18446744073709551615 -128"), "%s", c.diagnostics);
    tile_compiled_free(&c);
    const char *bad[][2] = {{"Z=-1", "'Z' is u64, but its value -1 does not fit"},
                            {"B=128", "'B' is i8, but its value 128 does not fit"},
                            {"B=-129", "'B' is i8, but its value -129 does not fit"}};
    for (int i = 0; i < 3; i++) {
        tile_compile_options ob = {.defines = (const char *const[]){bad[i][0], NULL}, .tir_only = 1};
        cr_expect_neq(tile_compile_source("t.tile", src, &ob, &c), TILE_OK, "%s compiled", bad[i][0]);
        cr_expect(strstr(c.diagnostics, bad[i][1]), "%s: %s", bad[i][0], c.diagnostics);
        tile_compiled_free(&c);
    }
    expect_error("const X: i64 = 9223372036854775808;\nkernel k(p: *i64) { store(p, X); }\n", "t.tile:1:16",
                 "'X' is i64, but its value 9223372036854775808 does not fit");
    expect_error("kernel k(p: *u32) { let u: u32 = 4294967296; store(p, u); }\n", "t.tile:1:34",
                 "'u' is u32, but its value 4294967296 does not fit");
}

/* -D NAME=None (Python's constexpr None): the const is None, so `NAME is None` picks code at compile time. */
Test(lang_generic, define_none) {
    const char *src = "kernel k(p: *i32, const ACT = 1) {\n    if ACT is None { store(p, 7); } else { store(p, ACT + 40); }\n}\n";
    for (int none = 0; none < 2; none++) {
        tile_compile_options o = {.defines = none ? (const char *const[]){"ACT=None", NULL} : NULL, .tir_only = 1};
        tile_compiled c;
        cr_assert_eq(tile_compile_source("t.tile", src, &o, &c), TILE_OK, "%s", c.diagnostics);
        cr_expect(strstr(c.tir, none ? "value=7" : "value=41") && !strstr(c.tir, none ? "value=41" : "value=7"), "%s", c.tir);
        tile_compiled_free(&c);
    }
}

/* A tuple holds None, types and strings beside values, as Python's does (they were "'None' cannot be used as a
 * value"): Triton's `for p in (x_ptr, b_ptr)` with b_ptr passed as None, and a loop-carried tuple whose None, type
 * and string elements stay its skeleton.  out = (x[:n] + x[n:2n]) * 3, n not a multiple of the block. */
Test(lang_generic, tuple_holds_none_type_string) {
    static const char *src = "kernel k(x: *f32, b: *f32, out: *f32, n: i32, const B: i32 = 32) {\n"
                             "    let o = arange(0, B);\n"
                             "    let acc = zeros([B], f32);\n"
                             "    let cfg = (0.0, None, f16, \"sum\");\n"
                             "    for i in range(0, 3) { cfg = (cfg[0] + 1.0, cfg[1], f16, \"sum\"); }\n"
                             "    for p in (x, b, x + n) { if p is not None { acc += load(p + o, o < n, 0.0); } }\n"
                             "    static_assert(cfg[1] is None && cfg[2] == f16, \"skeleton\");\n"
                             "    if cfg[3] == \"sum\" { store(out + o, acc * cfg[0], o < n); }\n"
                             "}\n";
    tile_context_options co = {.device = "emu", .emu_host_threads = 2};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&co, &ctx), TILE_OK);
    tile_compile_options o = {.specialize = (const char *const[]){"b=None", NULL}};
    tile_module *m;
    cr_assert_eq(tile_module_load_source_ex(ctx, "t.tile", src, &o, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(m, "k", &k), TILE_OK);
    enum { N = 29 };
    float x[2 * N], out[32];
    for (int i = 0; i < 2 * N; i++) x[i] = (float)urand();
    memset(out, 0xff, sizeof out);
    tile_devptr dx, dout, none = 0;
    cr_assert_eq(tile_malloc(ctx, sizeof x, &dx), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof out, &dout), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, dx, x, sizeof x), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, dout, out, sizeof out), TILE_OK);
    int32_t n = N;
    void *args[] = {&dx, &none, &dout, &n};
    cr_assert_eq(tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, out, dout, sizeof out), TILE_OK);
    for (int i = 0; i < 32; i++) {
        double want = i < N ? ((double)x[i] + (double)x[N + i]) * 3.0 : NAN;
        if (i < N) cr_expect(fabs(out[i] - want) <= 1e-6 * (1 + fabs(want)), "out[%d] = %g, want %g", i, out[i], want);
        else cr_expect(isnan(out[i]), "out[%d] = %g past n was written", i, out[i]);
    }
    tile_free(ctx, dx);
    tile_free(ctx, dout);
    tile_module_unload(m);
    tile_context_destroy(ctx);
}

/* A parameter that is a number or a pointer by a define, as flash-attention's rotary kernel takes SEQLEN_OFFSETS
 * ("this could be int or a pointer", IS_SEQLEN_OFFSETS_TENSOR picks): `-D OT=*i32` makes `off: OT` a pointer
 * (the define was an error: a type name only), `-D OT=i32` a number.  Rows of 5 offsets, 7 programs. */
Test(lang_generic, pointer_type_define) {
    static const char *src = "kernel k(out: *i32, off: OT, const IS_PTR: i1 = false, const OT = i32) {\n"
                             "    let o = arange(0, 8);\n"
                             "    let pid = program_id(0);\n"
                             "    if IS_PTR { store(out + pid * 5 + o, o + load(off + pid), o < 5); }\n"
                             "    else { store(out + pid * 5 + o, o + off, o < 5); }\n"
                             "}\n";
    tile_context_options co = {.device = "emu", .emu_host_threads = 2};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&co, &ctx), TILE_OK);
    int32_t offs[7], out[35];
    for (int i = 0; i < 7; i++) offs[i] = (int32_t)(rnext() % 1000) - 500;
    for (int ptr = 0; ptr < 2; ptr++) {
        const char *defines[] = {ptr ? "OT=*i32" : "OT=i32", ptr ? "IS_PTR=true" : "IS_PTR=false", NULL};
        tile_module *m;
        cr_assert_eq(tile_module_load_source(ctx, src, defines, &m), TILE_OK, "%s", tile_last_error(ctx));
        tile_kernel *k;
        cr_assert_eq(tile_module_get_kernel(m, "k", &k), TILE_OK);
        tile_devptr dout, doff;
        cr_assert_eq(tile_malloc(ctx, sizeof out, &dout), TILE_OK);
        cr_assert_eq(tile_malloc(ctx, sizeof offs, &doff), TILE_OK);
        cr_assert_eq(tile_memcpy_htod(ctx, doff, offs, sizeof offs), TILE_OK);
        memset(out, 0xff, sizeof out);
        cr_assert_eq(tile_memcpy_htod(ctx, dout, out, sizeof out), TILE_OK);
        int32_t scalar = 40;
        void *args[] = {&dout, ptr ? (void *)&doff : (void *)&scalar};
        cr_assert_eq(tile_launch(k, (tile_dim3){7, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
        cr_assert_eq(tile_memcpy_dtoh(ctx, out, dout, sizeof out), TILE_OK);
        for (int r = 0; r < 7; r++)
            for (int c = 0; c < 5; c++) {
                int32_t want = c + (ptr ? offs[r] : 40);
                cr_assert_eq(out[r * 5 + c], want, "%s: out[%d][%d] = %d, want %d", defines[0], r, c, out[r * 5 + c], want);
            }
        tile_free(ctx, dout);
        tile_free(ctx, doff);
        tile_module_unload(m);
    }
    tile_context_destroy(ctx);
}
