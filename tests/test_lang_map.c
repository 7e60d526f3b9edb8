/* test_lang_map.c - map_elementwise (Triton's tl.map_elementwise): a fn applied on scalars to each
 * element of one or more tensors, with run-time branches and loops per element, tuples of results,
 * broadcast operands, and pack= (several elements of a thread per call).  Run on the emulator
 * (sm_80, and sm_90a where a dot's accumulator is a wgmma fragment) against float64 and exact
 * integer references, outputs poisoned first, at sizes that are not multiples of the block. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "tests/lang_run.h"
#include "tests/test_rng.h"
#include "support/hostfloat.h"

static void launch2(K *k, unsigned gx, unsigned gy, void **params) {
    DevStatus st = dev_launch(k->fn, gx, gy, 1, (unsigned)k->threads, 1, 1, 0, NULL, params);
    cr_assert_eq(st, DEV_OK, "launch: %s", dev_last_error(k->dev));
    cr_assert_eq(dev_synchronize(k->dev), DEV_OK, "%s", dev_last_error(k->dev));
}

/* ---- branches and loops per element ---- */

static const char *branchy_src =
    "fn selu(x, alpha) {\n"
    "    let r = x;\n"
    "    if x <= 0.0 { r = alpha * (exp(x) - 1.0); }\n"
    "    return r;\n"
    "}\n"
    "fn collatz(v) {\n" /* steps to reach 1, and the value reached (1): a loop whose trip count is the element's */
    "    let steps = 0;\n"
    "    while v > 1 {\n"
    "        if v % 2 == 0 { v = v / 2; } else { v = 3 * v + 1; }\n"
    "        steps += 1;\n"
    "    }\n"
    "    return (steps, v);\n"
    "}\n"
    "kernel k(x: *f32, y: *f32, s: *i32, n: i32, alpha: f32, const BLOCK: i32) {\n"
    "    let i = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    let m = i < n;\n"
    "    let v = load(x + i, mask=m, other=0.0);\n"
    "    store(y + i, map_elementwise(selu, v, alpha), mask=m);\n"
    "    let (st, last) = map_elementwise(collatz, i + 1);\n"
    "    store(s + i, st * 10 + last, mask=m);\n"
    "}\n";

static int collatz_steps(int v) {
    int s = 0;
    for (; v > 1; s++) v = v % 2 ? 3 * v + 1 : v / 2;
    return s;
}

static void branchy(int block, int warps) {
    seed_rng();
    /* the kernel with @num_warps and BLOCK as its default */
    const char *kp = strstr(branchy_src, "kernel"), *bp = strstr(branchy_src, "const BLOCK: i32)");
    cr_assert(kp && bp);
    char src[2300];
    snprintf(src, sizeof src, "%.*s@num_warps(%d)\n%.*sconst BLOCK: i32 = %d)%s", (int)(kp - branchy_src), branchy_src, warps,
             (int)(bp - kp), kp, block, bp + strlen("const BLOCK: i32)"));
    K k;
    load_src(&k, src, "k");
    enum { N = 1001 };
    float x[N], y[N];
    int32_t s[N];
    for (int i = 0; i < N; i++) x[i] = (float)(3 * urand());
    float alpha = 1.6732632f;
    uint64_t dx = upload(&k, x, sizeof x), dy = poisoned(&k, sizeof y), ds = poisoned(&k, sizeof s);
    int n = N;
    void *params[] = {&dx, &dy, &ds, &n, &alpha};
    launch(&k, (N + block - 1) / block, params);
    download(&k, y, dy, sizeof y);
    download(&k, s, ds, sizeof s);
    int bad = 0;
    for (int i = 0; i < N && bad < 8; i++) {
        double want = x[i] > 0 ? x[i] : alpha * (exp((double)x[i]) - 1.0);
        if (!(fabs(y[i] - want) <= 2e-6 * (1 + fabs(want)))) {
            cr_expect(0, "selu[%d](%g) = %g, want %g (seed %llu)", i, x[i], y[i], want, (unsigned long long)seed);
            bad++;
        }
        int ws = collatz_steps(i + 1) * 10 + 1;
        if (s[i] != ws) {
            cr_expect(0, "collatz[%d] = %d, want %d", i + 1, s[i], ws);
            bad++;
        }
    }
    unload(&k);
}

Test(lang_map, branches_and_loops_per_element) {
    branchy(128, 4); /* one element a thread */
    branchy(256, 1); /* eight a thread: the region emitted eight times */
    branchy(64, 2);
}

/* A function with an `if` mapped over 256 elements on one warp is emitted 8 times a thread; each emission but
 * the last lost the register arrays of the values inside the `if`.  A leak only LeakSanitizer sees: under it
 * the compile runs on a thread of its own (so that tests/lsan.supp's Criterion rule cannot match it even with
 * whole allocation stacks) and the leak check must find nothing; elsewhere the compile is only checked to succeed. */
#include <pthread.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif
static void *compile_map_with_if(void *arg) {
    const char *src = "fn sq(v) {\n    let r = 0.0;\n    if v > 0.0 { r = v * v; }\n    return r;\n}\n"
                      "@num_warps(1)\nkernel k(x: *f32, y: *f32) {\n    let i = arange(0, 256);\n"
                      "    store(y + i, map_elementwise(sq, load(x + i)));\n}\n";
    tile_compile_options o = {0};
    tile_compiled c;
    *(tile_status *)arg = tile_compile_source("t.tile", src, &o, &c);
    tile_compiled_free(&c);
    return NULL;
}

Test(lang_map, emitted_again_leaks_nothing) {
    tile_status st = TILE_ERROR_INTERNAL;
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, compile_map_with_if, &st), 0);
    cr_assert_eq(pthread_join(th, NULL), 0);
    cr_assert_eq(st, TILE_OK);
#if defined(__SANITIZE_ADDRESS__)
    cr_expect_eq(__lsan_do_recoverable_leak_check(), 0, "the compile leaked (LeakSanitizer's report above)");
#endif
}

/* ---- a dot's accumulator, broadcast operands, f16, pack ---- */

static const char *dot_src =
    "fn clip(v, lo: f32, hi) {\n"
    "    let r = v;\n"
    "    if v < lo { r = lo; }\n"
    "    if v > hi { r = hi; }\n"
    "    return r;\n"
    "}\n"
    /* pack=P: P elements of each operand, then P of each result; element-local, so the result does not depend
     * on which elements the layout groups (the last group of a thread repeats its last element) */
    "fn fma2(a0, a1, b0, b1) { return (a0 * b0 + 1.0, a1 * b1 + 1.0, a0 - b0, a1 - b1); }\n"
    "fn sq3(a0, a1, a2) { return (a0 * a0, a1 * a1, a2 * a2); }\n"
    "fn twice(h) { return h * 2.0; }\n"
    "kernel k(a: *f16, b: *f16, c: *f32, d: *f32, e: *f32, f: *f32, h: *f16, M: i32, N: i32, K: i32,\n"
    "         const BM: i32 = 64, const BN: i32 = 64, const BK: i32 = 32) {\n"
    "    let rm = program_id(0) * BM + arange(0, BM);\n"
    "    let rn = program_id(1) * BN + arange(0, BN);\n"
    "    let rk = arange(0, BK);\n"
    "    let acc = zeros([BM, BN], f32);\n"
    "    for k0 in range(0, K, BK) {\n"
    "        let ta = load(a + rm[:, None] * K + k0 + rk[None, :], mask=(rm[:, None] < M) & (k0 + rk[None, :] < K), other=0.0);\n"
    "        let tb = load(b + (k0 + rk[:, None]) * N + rn[None, :], mask=(k0 + rk[:, None] < K) & (rn[None, :] < N), other=0.0);\n"
    "        acc = dot(ta, tb, acc);\n"
    "    }\n"
    "    let cm = (rm[:, None] < M) & (rn[None, :] < N);\n"
    "    let off = rm[:, None] * N + rn[None, :];\n"
    "    let cl = map_elementwise(clip, acc, -0.5, rn[None, :] * 0.01);\n"
    "    store(c + off, cl, mask=cm);\n"
    "    let (p, q) = map_elementwise(fma2, acc, cl, pack=2);\n"
    "    store(d + off, p, mask=cm);\n"
    "    store(e + off, q, mask=cm);\n"
    "    store(f + off, map_elementwise(sq3, acc, pack=3), mask=cm);\n"
    "    let hv = load(h + off, mask=cm, other=0.0);\n"
    "    store(h + off, map_elementwise(twice, hv), mask=cm);\n"
    "}\n";

static void on_dot(const char *arch, int warps) {
    seed_rng();
    const char *kp = strstr(dot_src, "kernel");
    char src[4096];
    snprintf(src, sizeof src, "%.*s@num_warps(%d)\n%s", (int)(kp - dot_src), dot_src, warps, kp);
    K k;
    load_src_on(&k, src, "k", arch, NULL);
    enum { M = 83, N = 77, KK = 45 };
    uint16_t *a = malloc(sizeof(uint16_t) * M * KK), *b = malloc(sizeof(uint16_t) * KK * N), *h = malloc(sizeof(uint16_t) * M * N),
             *h0 = malloc(sizeof(uint16_t) * M * N);
    float *out[4];
    for (int j = 0; j < 4; j++) out[j] = malloc(sizeof(float) * M * N);
    for (int i = 0; i < M * KK; i++) a[i] = f32_to_f16((float)(0.4 * urand()));
    for (int i = 0; i < KK * N; i++) b[i] = f32_to_f16((float)(0.4 * urand()));
    for (int i = 0; i < M * N; i++) h[i] = h0[i] = f32_to_f16((float)(8 * urand()));
    uint64_t da = upload(&k, a, sizeof(uint16_t) * M * KK), db = upload(&k, b, sizeof(uint16_t) * KK * N),
             dh = upload(&k, h, sizeof(uint16_t) * M * N), dout[4];
    for (int j = 0; j < 4; j++) dout[j] = poisoned(&k, sizeof(float) * M * N);
    int m = M, n = N, kk = KK;
    void *params[] = {&da, &db, &dout[0], &dout[1], &dout[2], &dout[3], &dh, &m, &n, &kk};
    launch2(&k, (M + 63) / 64, (N + 63) / 64, params);
    for (int j = 0; j < 4; j++) download(&k, out[j], dout[j], sizeof(float) * M * N);
    download(&k, h, dh, sizeof(uint16_t) * M * N);
    int bad = 0;
    for (int i = 0; i < M && bad < 8; i++)
        for (int j = 0; j < N && bad < 8; j++) {
            double acc = 0;
            for (int t = 0; t < KK; t++) acc += f16_to_d(a[i * KK + t]) * f16_to_d(b[t * N + j]);
            double hi = j * 0.01, cl = acc < -0.5 ? -0.5 : acc;
            if (acc > hi) cl = hi;
            double want[4] = {cl, acc * cl + 1.0, acc - cl, acc * acc};
            for (int w = 0; w < 4; w++) {
                double got = out[w][i * N + j];
                if (!(fabs(got - want[w]) <= 1e-4 * (1 + fabs(want[w])))) {
                    cr_expect(0, "%s output %d [%d][%d] = %g, want %g (seed %llu)", arch ? arch : "sm_80", w, i, j, got, want[w],
                              (unsigned long long)seed);
                    bad++;
                }
            }
            if (f16_to_d(h[i * N + j]) != 2 * f16_to_d(h0[i * N + j])) {
                cr_expect(0, "twice(%g) = %g", f16_to_d(h0[i * N + j]), f16_to_d(h[i * N + j]));
                bad++;
            }
        }
    free(a), free(b), free(h), free(h0);
    for (int j = 0; j < 4; j++) free(out[j]);
    unload(&k);
}

Test(lang_map, on_a_dot_accumulator_with_pack, .timeout = 300) {
    on_dot(NULL, 4);
    on_dot("sm_90a", 4); /* wgmma's accumulator fragments */
}

/* ---- the IR: one map_fn per call, its region on scalars ---- */

Test(lang_map, tir_shape) {
    tile_compile_options o = {0};
    tile_compiled c;
    const char *src =
        "fn f(a0, a1, b0, b1) { let r = a0; if a0 < b0 { r = b0; } return (r, a1, a0 + b0, a1 + b1); }\n"
        "kernel k(p: *f32, q: *i32) {\n"
        "    let i = arange(0, 64);\n"
        "    let (x, y) = map_elementwise(f, load(p + i), 2.0, pack=2);\n"
        "    store(p + i, x + y);\n"
        "}\n";
    tile_status st = tile_compile_source("t.tile", src, &o, &c);
    cr_assert_eq(st, TILE_OK, "%s", c.diagnostics);
    cr_assert(c.tir && strstr(c.tir, "map_fn") && strstr(c.tir, "{pack=2}"), "%s", c.tir ? c.tir : "(no tir)");
    cr_assert(strstr(c.tir, "^(%") && strstr(c.tir, ": f32, %"), "scalar region arguments:\n%s", c.tir);
    tile_compiled_free(&c);
    /* the loop of a mapped fn stays a loop, per element: its back edge is a branch in the PTX */
    char *ptx = compile_ptx("fn halve(v) { while v > 1 { v = v / 2; } return v; }\n"
                            "kernel k(q: *i32) { let i = arange(0, 128); store(q + i, map_elementwise(halve, load(q + i))); }\n",
                            NULL);
    cr_assert(strstr(ptx, "bra"), "%s", ptx);
    free(ptx);
}

/* ---- errors, at the place that is wrong ---- */

static void expect_error(const char *src, const char *msg) {
    tile_compile_options o = {0};
    tile_compiled c;
    tile_status st = tile_compile_source("e.tile", src, &o, &c);
    cr_expect_eq(st, TILE_ERROR_COMPILE, "compiled: %s", src);
    cr_expect(c.diagnostics && strstr(c.diagnostics, msg), "want '%s' in:\n%s", msg, c.diagnostics ? c.diagnostics : "");
    tile_compiled_free(&c);
}

Test(lang_map, errors) {
    const char *pre = "fn one(a) { return a * 2.0; }\n"
                      "fn three(a, b) { return (a, b, a); }\n"
                      "fn tens(a) { return a + sum(arange(0, 4), axis=0); }\n"
                      "kernel k(p: *f32, n: i32) {\n"
                      "    let i = arange(0, 16);\n"
                      "    let x = load(p + i);\n";
    char src[1024];
#define E(body, msg)                                       \
    snprintf(src, sizeof src, "%s    %s\n}\n", pre, body); \
    expect_error(src, msg);
    E("store(p + i, map_elementwise(nothing, x));", "e.tile:7:34: error: the first argument of 'map_elementwise' must name a fn");
    E("store(p + i, map_elementwise(one));", "e.tile:7:18: error: 'map_elementwise' needs a fn and at least one tensor");
    E("store(p + i, map_elementwise(one, p + i));", "e.tile:7:39: error: 'map_elementwise' of pointers");
    E("store(p + i, map_elementwise(tens, x));", "e.tile:3:29: error: 'map_elementwise': function 'tens' makes a tensor here");
    E("store(p + i, map_elementwise(one, x, pack=n));", "e.tile:7:47: error: 'pack' of 'map_elementwise' must be a compile-time constant");
    E("store(p + i, map_elementwise(one, x, pack=17));", "'pack' of 'map_elementwise' must be 1 to 16, got 17");
    E("store(p + i, map_elementwise(three, x, pack=2));", "function 'three' returns 3 values, not a multiple of pack=2");
    E("store(p + i, map_elementwise(one, x, bogus=1));", "e.tile:7:48: error: 'map_elementwise' has no parameter 'bogus'");
    E("store(p + i, map_elementwise(one, x, x));", "'one' takes 1 parameter but is given 2 values");
    E("store(p + i, map_elementwise(one, x, arange(0, 8)));", "e.tile:7:42: error: shapes [16] and [8] do not broadcast");
#undef E
}

/* ---- a fn given to a fn (Triton's JIT function passed as a constexpr argument): called through the parameter,
 * passed on, and given to reduce, associative_scan and map_elementwise from inside the helper ---- */

static const char *fn_arg_src =
    "fn add(a, b) { return a + b; }\n"
    "fn mx(a, b) { return maximum(a, b); }\n"
    "fn sq(v) { return v * v; }\n"
    "fn red(x, const f) { return reduce(x, 0, f); }\n"
    "fn scan_with(x, f = add) { return associative_scan(x, 0, f, reverse=true); }\n"
    "fn apply(f, a, b) { return f(a, b); }\n"
    "fn twice(f, g, x) { let h = g; return apply(f, map_elementwise(h, x), x); }\n"
    "@num_warps(2)\n"
    "kernel k(x: *f32, o: *f32, n: i32, const B: i32 = 128) {\n"
    "    let i = arange(0, B);\n"
    "    let m = i < n;\n"
    "    let v = load(x + i, m, 0.0);\n"
    "    store(o, red(v, add));\n"
    "    store(o + 1, red(where(m, v, -1.0 / 0.0), f=mx));\n"
    "    store(o + 2 + i, scan_with(v), m);\n"
    "    store(o + 2 + B + i, twice(add, sq, v), m);\n"
    "}\n";

Test(lang_map, fn_as_argument) {
    seed_rng();
    K k;
    load_src(&k, fn_arg_src, "k");
    enum { N = 100, B = 128 };
    float x[N], o[2 + 2 * B];
    for (int i = 0; i < N; i++) x[i] = (float)urand();
    uint64_t dx = upload(&k, x, sizeof x), dout = poisoned(&k, sizeof o);
    int n = N;
    void *params[] = {&dx, &dout, &n};
    launch(&k, 1, params);
    download(&k, o, dout, sizeof o);
    double s = 0, mx = -INFINITY, suffix[N];
    for (int i = 0; i < N; i++) s += x[i], mx = fmax(mx, x[i]);
    for (int i = N - 1; i >= 0; i--) suffix[i] = x[i] + (i + 1 < N ? suffix[i + 1] : 0.0);
    cr_expect(fabs(o[0] - s) <= 1e-5 * (1 + fabs(s)), "reduce(x, 0, f) through a parameter: %g, want %g", o[0], s);
    cr_expect_eq(o[1], (float)mx, "reduce with f=mx: %g, want %g", o[1], mx);
    for (int i = 0; i < N; i++) {
        cr_expect(fabs(o[2 + i] - suffix[i]) <= 1e-5 * (1 + fabs(suffix[i])), "reverse scan [%d] = %g, want %g", i, o[2 + i], suffix[i]);
        double w = (double)x[i] * x[i] + x[i];
        cr_expect(fabs(o[2 + B + i] - w) <= 1e-6 * (1 + fabs(w)), "apply(add, map(sq)) [%d] = %g, want %g", i, o[2 + B + i], w);
    }
    unload(&k);
    /* a fn is no value: used as one inside the helper, or given to a typed parameter */
    expect_error("fn add(a, b) { return a + b; }\nfn f(g) { return g + 1.0; }\nkernel k(o: *f32) {\n    store(o, f(add));\n}\n",
                 "e.tile:2:20: error: function 'add' cannot be used as a value: a fn parameter holding it may be called, or passed "
                 "to a fn or as a built-in's combine_fn");
    expect_error("fn add(a, b) { return a + b; }\nfn f(x: f32) { return x; }\nkernel k(o: *f32) {\n    store(o, f(add));\n}\n",
                 "e.tile:4:16: error: function 'add' cannot be used as a value");
    expect_error("fn r(f) { return f(f); }\nkernel k(o: *f32) {\n    store(o, r(r));\n}\n", "e.tile:1:18: error: recursive call to 'r'");
}

/* ---- in a software-pipelined loop: on a dot operand as loaded, and on the loop-carried accumulator ---- */

static const char *loop_src =
    "fn relu_sq(v) {\n"
    "    let r = zeros_like(v);\n"
    "    if v > 0.0 { r = v * v; }\n"
    "    return r;\n"
    "}\n"
    "@num_warps(4)\n"
    "kernel k(a: *f16, b: *f16, c: *f32, M: i32, N: i32, K: i32, const BM: i32 = 64, const BN: i32 = 64, const BK: i32 = 32) {\n"
    "    let rm = program_id(0) * BM + arange(0, BM);\n"
    "    let rn = program_id(1) * BN + arange(0, BN);\n"
    "    let rk = arange(0, BK);\n"
    "    let acc = zeros([BM, BN], f32);\n"
    "    for k0 in range(0, K, BK) {\n"
    "        let ta = load(a + rm[:, None] * K + k0 + rk[None, :], mask=(rm[:, None] < M) & (k0 + rk[None, :] < K), other=0.0);\n"
    "        let tb = load(b + (k0 + rk[:, None]) * N + rn[None, :], mask=(k0 + rk[:, None] < K) & (rn[None, :] < N), other=0.0);\n"
    "        acc = map_elementwise(relu_sq, dot(map_elementwise(relu_sq, ta), tb, acc));\n"
    "    }\n"
    "    store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N));\n"
    "}\n";

static void in_loop(const char *arch) {
    seed_rng();
    K k;
    load_src_on(&k, loop_src, "k", arch, NULL);
    enum { M = 70, N = 45, KK = 100 };
    static uint16_t a[M * KK], b[KK * N];
    static float c[M * N];
    static double sq[M * KK], acc[M * N];
    for (int i = 0; i < M * KK; i++) {
        a[i] = f32_to_f16((float)(0.5 * urand()));
        double v = f16_to_d(a[i]);
        sq[i] = f16_to_d(f32_to_f16((float)(v > 0 ? v * v : 0))); /* relu_sq in f16, as the kernel computes it */
    }
    for (int i = 0; i < KK * N; i++) b[i] = f32_to_f16((float)(0.1 * urand()));
    uint64_t da = upload(&k, a, sizeof a), db = upload(&k, b, sizeof b), dc = poisoned(&k, sizeof c);
    int m = M, n = N, kk = KK;
    void *params[] = {&da, &db, &dc, &m, &n, &kk};
    launch2(&k, (M + 63) / 64, (N + 63) / 64, params);
    download(&k, c, dc, sizeof c);
    memset(acc, 0, sizeof acc);
    for (int k0 = 0; k0 < KK; k0 += 32)
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double s = acc[i * N + j];
                for (int t = k0; t < k0 + 32 && t < KK; t++) s += sq[i * KK + t] * f16_to_d(b[t * N + j]);
                acc[i * N + j] = s > 0 ? s * s : 0;
            }
    int bad = 0;
    for (int i = 0; i < M * N && bad < 8; i++)
        if (!(fabs(c[i] - acc[i]) <= 1e-5 * (1 + fabs(acc[i])))) {
            cr_expect(0, "%s c[%d][%d] = %g, want %g (seed %llu)", arch ? arch : "sm_80", i / N, i % N, c[i], acc[i],
                      (unsigned long long)seed);
            bad++;
        }
    unload(&k);
}

Test(lang_map, in_a_pipelined_loop, .timeout = 300) {
    in_loop(NULL);
    in_loop("sm_90a");
}
