/* test_lang_run.c - language features compiled from inline sources and run on
 * the PTX emulator with exact (integer) or tight references: tuples returned from functions,
 * debug_barrier, identical loads merged, casts and bit patterns, cache hints, tensor descriptors,
 * reductions with their indices, thousands of names (atomics: test_lang_sync.c; while loops,
 * break/continue and spin locks: test_lang_control.c). */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "include/tile/tile.h"
#include "runtime/device.h"
#include "support/hostfloat.h"
#include "support/support.h"

#include "tests/test_ptxas.h"
#include "tests/lang_run.h"

/* ---- tuples from functions ---- */

/* Flash-attention's inner step written once as a `fn` returning (acc, m, l), called in a
 * loop through a tuple assignment; a `let` unpacks a second function's tuple. */
Test(lang_run, tuple_attention_step) {
    K k;
    load_src(&k,
             "fn attn_step(acc, m, l, q, k, v) {\n"
             "    let s = dot(q, trans(k));\n"
             "    let m_new = maximum(m, max(s, axis=1));\n"
             "    let p = exp(s - m_new[:, None]);\n"
             "    let alpha = exp(m - m_new);\n"
             "    return (acc * alpha[:, None] + dot(p, v), m_new, l * alpha + sum(p, axis=1));\n"
             "}\n"
             "fn tile_ptrs(base, row0) {\n"
             "    let r = row0 + arange(0, 16);\n"
             "    return (base + r[:, None] * 16 + arange(0, 16)[None, :], r);\n"
             "}\n"
             "@num_warps(4)\n"
             "kernel attn(q: *f32, k: *f32, v: *f32, out: *f32, n: i32) {\n"
             "    let (qp, rows) = tile_ptrs(q, 0);\n"
             "    let qt = load(qp);\n"
             "    let acc = zeros([16, 16], f32);\n"
             "    let m = full([16], -1.0 / 0.0, f32);\n"
             "    let l = zeros([16], f32);\n"
             "    for j in range(0, n, 16) {\n"
             "        let (kp, _r) = tile_ptrs(k, j);\n"
             "        (acc, m, l) = attn_step(acc, m, l, qt, load(kp), load(v + (j + rows)[:, None] * 16 + arange(0, 16)[None, :]));\n"
             "    }\n"
             "    let (op, _rows) = tile_ptrs(out, 0);\n"
             "    store(op, acc / l[:, None]);\n"
             "}\n",
             "attn");
    enum { N = 64, D = 16 };
    float q[16 * D], kk[N * D], v[N * D], out[16 * D];
    for (int i = 0; i < 16 * D; i++) q[i] = (float)((i * 37 % 23) - 11) / 16.0f;
    for (int i = 0; i < N * D; i++) kk[i] = (float)((i * 53 % 29) - 14) / 16.0f, v[i] = (float)((i * 17 % 31) - 15) / 8.0f;
    uint64_t dq = upload(&k, q, sizeof q), dk = upload(&k, kk, sizeof kk), dv = upload(&k, v, sizeof v), dout = upload(&k, out, sizeof out);
    int n = N;
    void *params[] = {&dq, &dk, &dv, &dout, &n};
    launch(&k, 1, params);
    download(&k, out, dout, sizeof out);
    for (int i = 0; i < 16; i++) {
        double s[N], mx = -INFINITY, l = 0;
        for (int j = 0; j < N; j++) {
            s[j] = 0;
            for (int d = 0; d < D; d++) s[j] += (double)q[i * D + d] * kk[j * D + d];
            if (s[j] > mx) mx = s[j];
        }
        for (int j = 0; j < N; j++) l += exp(s[j] - mx);
        for (int d = 0; d < D; d++) {
            double o = 0;
            for (int j = 0; j < N; j++) o += exp(s[j] - mx) * v[j * D + d];
            o /= l;
            cr_expect(fabs(out[i * D + d] - o) <= 1e-4 + 1e-4 * fabs(o), "out[%d][%d] = %.7g, want %.7g", i, d, out[i * D + d], o);
        }
    }
    unload(&k);
}

/* ---- debug_barrier ---- */

/* debug_barrier orders global writes of one program before its reads of other threads'. */
Test(lang_run, debug_barrier) {
    K k;
    load_src(&k,
             "@num_warps(4)\n"
             "kernel k(x: *i32, out: *i32) {\n"
             "    let i = arange(0, 512);\n"
             "    store(x + i, i * 3);\n"
             "    debug_barrier();\n"
             "    store(out + i, load(x + 511 - i));\n"
             "}\n",
             "k");
    static int32_t x[512], out[512];
    uint64_t dx = upload(&k, x, sizeof x), dout = upload(&k, out, sizeof out);
    void *params[] = {&dx, &dout};
    launch(&k, 1, params);
    download(&k, out, dout, sizeof out);
    for (int i = 0; i < 512; i++) cr_expect_eq(out[i], (511 - i) * 3, "out[%d] = %d", i, out[i]);
    unload(&k);
}

/* ---- identical loads merged (pass merge_loads) ---- */

/* x loaded four times, as a layer norm and inlined helpers do: for the statistics, again (merged: only
 * pure ops between), then after a store to another buffer (kept: nothing says z is not x), and again
 * (merged with the third).  So two loads of x per thread in the PTX, four before the pass. */
static const char *dup_load_src = "fn row(p, c, m) { return load(p + c, m, 0.0); }\n"
                                  "@num_warps(4)\n"
                                  "kernel k(x: *f32, y: *f32, z: *f32, n: i32) {\n"
                                  "    let c = program_id(0) * 128 + arange(0, 128);\n"
                                  "    let m = c < n;\n"
                                  "    let mu = sum(load(x + c, m, 0.0), axis=0) / 128.0;\n"
                                  "    let a = row(x, c, m);\n"
                                  "    store(z + c, a * 2.0, m);\n"
                                  "    let d = row(x, c, m) - mu;\n"
                                  "    store(y + c, d * d + row(x, c, m), m);\n"
                                  "}\n";

static int count_substr(const char *s, const char *sub) {
    int n = 0;
    for (const char *p = strstr(s, sub); p; p = strstr(p + 1, sub)) n++;
    return n;
}

Test(lang_run, dup_load_ptx_count) {
    const char *archs[] = {"sm_80", "sm_90a"};
    for (int a = 0; a < 2; a++) {
        char *ptx = compile_ptx(dup_load_src, archs[a]);
        cr_expect_eq(count_substr(ptx, "ld.global"), 2, "%s: %d global loads, want 2\n%s", archs[a],
                     count_substr(ptx, "ld.global"), ptx);
        free(ptx);
    }
}

Test(lang_run, dup_load_store_between_float64) {
    K k;
    load_src(&k, dup_load_src, "k");
    enum { N = 300, G = 3, T = G * 128 };
    unsigned seed = (unsigned)getpid();
    float x[T], y[T], z[T];
    for (int i = 0; i < T; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = (float)((int)(seed >> 8) % 20001 - 10000) / 1000.0f;
    }
    uint64_t dx = upload(&k, x, sizeof x), dy = poisoned(&k, sizeof y), dz = poisoned(&k, sizeof z);
    int32_t n = N;
    void *params[] = {&dx, &dy, &dz, &n};
    launch(&k, G, params);
    download(&k, y, dy, sizeof y);
    download(&k, z, dz, sizeof z);
    for (int g = 0; g < G; g++) {
        double mu = 0;
        for (int i = g * 128; i < (g + 1) * 128 && i < N; i++) mu += x[i];
        mu /= 128.0;
        for (int i = g * 128; i < (g + 1) * 128; i++) {
            if (i >= N) {
                cr_expect(isnan(y[i]) && isnan(z[i]), "element %d past n was written", i);
                continue;
            }
            double d = x[i] - mu, want = d * d + x[i];
            cr_expect_eq(z[i], 2.0f * x[i], "z[%d] = %g, want %g", i, z[i], 2.0 * x[i]);
            cr_expect(fabs(y[i] - want) <= 1e-5 * (fabs(want) + 1), "y[%d] = %.9g, want %.9g", i, y[i], want);
        }
    }
    unload(&k);
}

/* ---- masks and `other` broadcast to the pointers' shape; where on integer conditions ---- */

/* A [64, 32] tile under a column mask [1, 32], a row mask [64, 1] and an `other` of [64, 1];
 * an atomic under the column mask; where() choosing by i32 values (non-zero is true). */
Test(lang_run, mask_other_broadcast_and_int_where) {
    K k;
    load_src(&k,
             "@num_warps(4)\n"
             "kernel k(x: *f32, y: *f32, acc: *f32, colflag: *i32, sel: *i32, s: *i32, rows: i32) {\n"
             "    let r = arange(0, 64);\n"
             "    let c = arange(0, 32);\n"
             "    let p = x + r[:, None] * 32 + c[None, :];\n"
             "    let f = load(colflag + c);\n"
             "    let cm = (f != 0)[None, :];\n"
             "    let rm = r[:, None] < rows;\n"
             "    let v = load(p, cm, -1.0);\n"
             "    let w = load(p, mask=rm, other=(r as f32)[:, None]);\n"
             "    store(y + r[:, None] * 32 + c[None, :], v + w, rm);\n"
             "    atomic_add(acc + c[None, :] + zeros([64, 32], i32), v, cm, sem=\"relaxed\");\n"
             "    store(sel + c, where(f, c, -c));\n"
             "    store(s, where(rows - 50, 7, 9));\n"
             "}\n",
             "k");
    enum { R = 64, C = 32 };
    static float x[R * C], y[R * C], acc[C];
    int32_t flag[C], sel[C], sv = 0;
    for (int i = 0; i < R * C; i++) x[i] = (float)(i % 13) - 6.0f, y[i] = 1234.0f;
    for (int j = 0; j < C; j++) flag[j] = (j * 7) % 3 - 1, acc[j] = 0.5f; /* -1, 1, 0, ... */
    uint64_t dx = upload(&k, x, sizeof x), dy = upload(&k, y, sizeof y), dacc = upload(&k, acc, sizeof acc);
    uint64_t dflag = upload(&k, flag, sizeof flag), dsel = upload(&k, sel, sizeof sel), ds = upload(&k, &sv, 4);
    for (int rows = 37; rows <= 50; rows += 13) {
        void *params[] = {&dx, &dy, &dacc, &dflag, &dsel, &ds, &rows};
        launch(&k, 1, params);
        download(&k, y, dy, sizeof y);
        download(&k, sel, dsel, sizeof sel);
        download(&k, &sv, ds, 4);
        for (int i = 0; i < R; i++)
            for (int j = 0; j < C; j++) {
                float v = flag[j] ? x[i * C + j] : -1.0f, w = i < rows ? x[i * C + j] : (float)i;
                if (i < rows) cr_expect_eq(y[i * C + j], v + w, "rows %d: y[%d][%d] = %g, want %g", rows, i, j, y[i * C + j], v + w);
                else cr_expect_eq(y[i * C + j], 1234.0f, "rows %d: y[%d][%d] written", rows, i, j);
            }
        for (int j = 0; j < C; j++) cr_expect_eq(sel[j], flag[j] ? j : -j, "sel[%d]", j);
        cr_expect_eq(sv, rows == 50 ? 9 : 7, "scalar where: %d", sv);
    }
    download(&k, acc, dacc, sizeof acc);
    for (int j = 0; j < C; j++) {
        float want = 0.5f;
        for (int pass = 0; pass < 2; pass++)
            for (int i = 0; i < R; i++) want += flag[j] ? x[i * C + j] : 0.0f;
        cr_expect_eq(acc[j], want, "acc[%d] = %g, want %g", j, acc[j], want);
    }
    unload(&k);
}

/* ---- precision of exp/exp2 (docs/language.md, "Precision of math functions") ---- */

static double ulps32(float got, double want) {
    if (got == want) return 0;
    int e;
    frexp(want, &e);
    double ulp = ldexp(1.0, (e - 1 < -126 ? -126 : e - 1) - 23);
    return fabs((double)got - want) / ulp;
}

/* f32 exp/exp2 flush subnormal results to zero (ex2.approx.ftz); `exact=true` keeps them
 * and, for exp, corrects the rounding of x*log2(e), so large |x| stays within 3 ulp. */
Test(lang_run, exp_ftz_and_exact) {
    K k;
    const char *src = "@num_warps(1)\n"
                      "kernel k(x: *f32, o: *f32) {\n"
                      "    let i = arange(0, 32);\n"
                      "    let v = load(x + i);\n"
                      "    store(o + i, exp2(v));\n"
                      "    store(o + 32 + i, exp2(v, exact=true));\n"
                      "    store(o + 64 + i, exp(v));\n"
                      "    store(o + 96 + i, exp(v, exact=true));\n"
                      "}\n";
    tile_compile_options opt = {0};
    tile_compiled c;
    cr_assert_eq(tile_compile_source("t.tile", src, &opt, &c), TILE_OK, "%s", c.diagnostics);
    cr_expect(strstr(c.ptx, "ex2.approx.ftz.f32"), "default exp2 uses the .ftz form");
    cr_expect(strstr(c.ptx, "ex2.approx.f32"), "exact=true uses the full-range form");
    tile_compiled_free(&c);
    load_src(&k, src, "k");
    float x[32], o[128];
    for (int i = 0; i < 32; i++) x[i] = i < 4 ? -130.0f - (float)i : (float)(i - 4) * 6.2f - 85.0f; /* -85 .. 82.4 */
    uint64_t dx = upload(&k, x, sizeof x), dout = upload(&k, o, sizeof o);
    void *params[] = {&dx, &dout};
    launch(&k, 1, params);
    download(&k, o, dout, sizeof o);
    for (int i = 0; i < 32; i++) {
        double w2 = exp2((double)x[i]), we = exp((double)x[i]);
        if (i < 4) { /* 2^-130 .. 2^-133 and e^-130..: subnormal or zero in f32 */
            cr_expect_eq(o[i], 0.0f, "exp2(%g) = %g, want 0 (flushed)", x[i], o[i]);
            cr_expect(ulps32(o[32 + i], w2) <= 2, "exp2(%g, exact=true) = %g, want %g", x[i], o[32 + i], w2);
            continue;
        }
        cr_expect(ulps32(o[i], w2) <= 2, "exp2(%g) = %.9g, want %.9g", x[i], o[i], w2);
        cr_expect(ulps32(o[32 + i], w2) <= 2, "exp2(%g, exact=true) = %.9g", x[i], o[32 + i]);
        if (we > 0x1p-126) cr_expect(fabs(o[64 + i] - we) <= 0x1p-16 * we, "exp(%g) = %.9g, want %.9g", x[i], o[64 + i], we);
        cr_expect(ulps32(o[96 + i], we) <= 3, "exp(%g, exact=true) = %.9g, want %.9g (%.1f ulp)", x[i], o[96 + i], we,
                  ulps32(o[96 + i], we));
    }
    /* past the overflow threshold (88.72) and at the infinities: inf and 0, never NaN (the correction's
     * inf * err + inf was NaN for a negative err: 120.23, 1000, 3e38, +inf) */
    static const float big[] = {88.8f, 100.0f, 120.23f, 1000.0f, 3e38f, INFINITY, -INFINITY, -1000.0f};
    for (int i = 0; i < 32; i++) x[i] = big[i % 8] + (float)(i / 8) * (i % 8 < 5 ? 0.37f : 0.0f);
    dx = upload(&k, x, sizeof x);
    launch(&k, 1, params);
    download(&k, o, dout, sizeof o);
    for (int i = 0; i < 32; i++) {
        float want = x[i] > 0 ? INFINITY : 0.0f;
        cr_expect(o[96 + i] == want, "exp(%g, exact=true) = %g, want %g", x[i], o[96 + i], want);
        double w2 = exp2((double)x[i]);
        cr_expect(w2 > FLT_MAX ? o[32 + i] == INFINITY : ulps32(o[32 + i], w2) <= 2, "exp2(%g, exact=true) = %g, want %g", x[i], o[32 + i], w2);
    }
    unload(&k);
}

/* ---- casts: bits and addresses ---- */
/* The golden tests/lang/casts.tile run: addresses computed as integers and back, the bits of
 * f32 and f16 values, a pointer cast to another element type, pointer types as arguments of cast and bitcast; n = 13 of the 16-element tile,
 * outputs poisoned first. */
Test(lang_run, casts_bits_and_addresses) {
    char path[512];
    snprintf(path, sizeof path, "%s/tests/lang/casts.tile", TILE_SOURCE_DIR);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    static char src[4096];
    size_t len = fread(src, 1, sizeof src - 1, f);
    fclose(f);
    src[len] = 0;
    K k;
    load_src(&k, src, "casts");
    enum { N = 13, T = 32 };
    float x[T], x0[T];
    int32_t bits[T];
    uint16_t h[T];
    for (int i = 0; i < T; i++) x0[i] = x[i] = (float)sin(i * 1.7) * 1000.0f;
    memset(bits, 0xff, sizeof bits);
    memset(h, 0xff, sizeof h);
    uint64_t dx = upload(&k, x, sizeof x), db = upload(&k, bits, sizeof bits), dh = upload(&k, h, sizeof h);
    int32_t n = N;
    void *params[] = {&dx, &db, &dh, &n};
    launch(&k, 1, params);
    download(&k, x, dx, sizeof x);
    download(&k, bits, db, sizeof bits);
    download(&k, h, dh, sizeof h);
    for (int i = 0; i < 16; i++) {
        float twice = x0[i] * 2.0f;
        _Float16 hv = (_Float16)x0[i];
        uint32_t want_x, got_x, want_b;
        uint16_t want_h;
        memcpy(&want_x, i < N ? &twice : &x0[i], 4);
        memcpy(&got_x, &x[i], 4);
        memcpy(&want_b, &x0[i], 4);
        memcpy(&want_h, &hv, 2);
        if (i >= N) want_b = ~0u, want_h = 0xffff;
        cr_expect_eq(got_x, want_x, "x[%d] bits %#x, want %#x", i, got_x, want_x);
        cr_expect_eq((uint32_t)bits[i], want_b, "bits[%d] = %#x, want %#x", i, bits[i], want_b);
        cr_expect_eq(h[i], want_h, "h[%d] = %#x, want %#x", i, h[i], want_h);
    }
    /* (bits as u64 + 64) as *i32: bits[16] = n, the rest untouched */
    cr_expect_eq(bits[16], N);
    /* through cast(h as i64, *u16, bitcast=true) then bitcast(.. + 32, *u16): h[16 + i] = h[i] for i < n */
    for (int i = 0; i < 16; i++) cr_expect_eq(h[16 + i], i < N ? h[i] : 0xffff, "h[%d] = %#x, want %#x", 16 + i, h[16 + i], i < N ? h[i] : 0xffff);
    for (int i = 17; i < T; i++) cr_expect_eq(bits[i], -1, "bits[%d] = %d, untouched", i, bits[i]);
    unload(&k);
}

/* ---- cache hints: the PTX qualifiers, and the same results on the emulator ---- */
static const char *cache_src =
    "kernel k(x: *f32, y: *f32, z: *f32, n: i32) {\n"
    "    let o = program_id(0) * 256 + arange(0, 256);\n"
    "    let a = load(x + o, o < n, cache_modifier=\".cg\");\n"
    "    let b = load(y + o, o < n, 0.0, eviction_policy=\"evict_last\");\n"
    "    let c = load(x + o, o < n, volatile=true);\n"
    "    store(z + o, a * b + c, o < n, cache_modifier=\".cs\");\n"
    "    store(y + o, a - b, o < n, eviction_policy=\"evict_first\");\n"
    "    store(x + o, 2.0 * a, o < n, cache_modifier=\".wt\");\n"
    "}\n";

Test(lang_run, cache_hints) {
    char *ptx = compile_ptx(cache_src, "sm_80");
    const char *want[] = {"ld.global.cg.", "ld.global.L1::evict_last.", "ld.volatile.global.", "st.global.cs.",
                          "st.global.L1::evict_first.", "st.global.wt."};
    for (size_t k = 0; k < sizeof want / sizeof *want; k++) cr_expect(strstr(ptx, want[k]), "PTX lacks %s", want[k]);
    free(ptx);
    /* L1 eviction priorities need PTX ISA 7.4: sm_80 and sm_86 modules that use one are written in 7.4 (they were
     * 7.0 and 7.1, which ptxas and the emulator refuse); one without stays at the target's own version */
    const char *archs[] = {"sm_80", "sm_86"}, *own[] = {".version 7.0\n", ".version 7.1\n"};
    for (int a = 0; a < 2; a++) {
        ptx = compile_ptx(cache_src, archs[a]);
        cr_expect(strstr(ptx, ".version 7.4\n"), "%s: %.200s", archs[a], ptx);
        check_ptxas_arch(ptx, archs[a]);
        free(ptx);
        ptx = compile_ptx("kernel k(x: *f32, n: i32) {\n    let o = arange(0, 128);\n"
                          "    store(x + o, load(x + o, o < n, cache_modifier=\".cg\") + 1.0, o < n);\n}\n",
                          archs[a]);
        cr_expect(strstr(ptx, own[a]), "%s: %.200s", archs[a], ptx);
        free(ptx);
    }
    K k;
    load_src(&k, cache_src, "k");
    enum { N = 300, T = 512 };
    float x[T], y[T], z[T], x0[T], y0[T];
    for (int i = 0; i < T; i++) x0[i] = x[i] = (float)(i % 17) - 3.5f, y0[i] = y[i] = (float)(i % 5) * 0.25f;
    for (int i = 0; i < T; i++) memset(&z[i], 0xff, 4);
    uint64_t dx = upload(&k, x, sizeof x), dy = upload(&k, y, sizeof y), dz = upload(&k, z, sizeof z);
    int32_t n = N;
    void *params[] = {&dx, &dy, &dz, &n};
    launch(&k, 2, params);
    download(&k, x, dx, sizeof x);
    download(&k, y, dy, sizeof y);
    download(&k, z, dz, sizeof z);
    for (int i = 0; i < T; i++) {
        if (i < N) {
            cr_expect_eq(z[i], x0[i] * y0[i] + x0[i], "z[%d] = %g", i, z[i]);
            cr_expect_eq(y[i], x0[i] - y0[i], "y[%d] = %g", i, y[i]);
            cr_expect_eq(x[i], 2 * x0[i], "x[%d] = %g", i, x[i]);
        } else {
            cr_expect(isnan(z[i]) && x[i] == x0[i] && y[i] == y0[i], "element %d past n was written", i);
        }
    }
    unload(&k);
}

/* ---- tensor descriptors: blocks at offsets, out-of-bounds zero on loads and skipped on stores ---- */

/* A 45 x 37 f32 matrix (row stride 40) read through a descriptor of 16 x 8 blocks at offsets
 * shifted by (-3, +2) and written through another (row stride 39) at the block's own place:
 * out[i][j] = 2 a[i-3][j+2] + 1 where that element exists, 1 where it does not (zero padding),
 * and nothing written outside the 45 x 37 region (poisoned gaps stay).  An f32 block stored through an f16
 * descriptor converts as `store` converts it (rounded to nearest even): out16[i][j] = f16(0.3 a[i-3][j+2]). */
Test(lang_run, tensor_descriptor_load_store) {
    K k;
    load_src(&k,
             "@num_warps(4)\n"
             "kernel k(a: *f32, out: *f32, out16: *f16, m: i32, n: i32, sa: i32, so: i32, const BM: i32 = 16, const BN: i32 = 8) {\n"
             "    let da = make_tensor_descriptor(a, [m, n], [sa, 1], [BM, BN]);\n"
             "    let dout = make_tensor_descriptor(base=out, shape=[m, n], strides=[so, 1], block_shape=[BM, BN]);\n"
             "    let tn = (n + BN - 1) / BN;\n"
             "    let pm = program_id(0) / tn * BM;\n"
             "    let pn = program_id(0) % tn * BN;\n"
             "    let t = load_tensor_descriptor(da, [pm - 3, pn + 2]);\n"
             "    store_tensor_descriptor(dout, [pm, pn], t * 2.0 + 1.0);\n"
             "    store_tensor_descriptor(make_tensor_descriptor(out16, [m, n], [so, 1], [BM, BN]), [pm, pn], t * 0.3);\n"
             "}\n",
             "k");
    enum { M = 45, N = 37, SA = 40, SO = 39, BM = 16, BN = 8 };
    static float a[M * SA], out[(M + 2) * SO];
    static uint16_t out16[(M + 2) * SO];
    for (int i = 0; i < M * SA; i++) a[i] = (float)((i * 37) % 101) - 50.0f;
    for (int i = 0; i < (M + 2) * SO; i++) out[i] = NAN, out16[i] = 0xffff;
    uint64_t da = upload(&k, a, sizeof a), dout = upload(&k, out, sizeof out), dout16 = upload(&k, out16, sizeof out16);
    int32_t m = M, n = N, sa = SA, so = SO;
    void *params[] = {&da, &dout, &dout16, &m, &n, &sa, &so};
    launch(&k, ((M + BM - 1) / BM) * ((N + BN - 1) / BN), params);
    download(&k, out, dout, sizeof out);
    download(&k, out16, dout16, sizeof out16);
    for (int i = 0; i < M + 2; i++)
        for (int j = 0; j < SO; j++) {
            float got = out[i * SO + j];
            if (i >= M || j >= N) {
                cr_assert(isnan(got) && out16[i * SO + j] == 0xffff, "(%d, %d) outside the tensor was written: %g", i, j, got);
                continue;
            }
            int si = i - 3, sj = j + 2;
            float want = (si >= 0 && sj < N) ? 2.0f * a[si * SA + sj] + 1.0f : 1.0f;
            cr_assert_eq(got, want, "(%d, %d): %g, want %g", i, j, got, want);
            uint16_t want16 = f32_to_f16((si >= 0 && sj < N) ? a[si * SA + sj] * 0.3f : 0.0f);
            cr_assert_eq(out16[i * SO + j], want16, "f16 (%d, %d): 0x%04x, want 0x%04x", i, j, out16[i * SO + j], want16);
        }
    unload(&k);
}

/* Descriptor atomics: blocks of 16 x 8 at offsets shifted by (-3, -6) over a 45 x 37 matrix (row stride
 * 40) that holds values beforehand; add, max and xor of the block's values into the elements inside the
 * tensor, each once (the blocks tile it exactly), nothing written outside it; relaxed `red` in the PTX. */
Test(lang_run, tensor_descriptor_atomics) {
    static const char *src = "@num_warps(4)\n"
                             "kernel k(o1: *i32, o2: *i32, o3: *f32, m: i32, n: i32, so: i32, const BM: i32 = 16, const BN: i32 = 8) {\n"
                             "    let tn = (n + 6 + BN - 1) / BN;\n"
                             "    let pm = program_id(0) / tn * BM - 3;\n"
                             "    let pn = program_id(0) % tn * BN - 6;\n"
                             "    let v = (pm + arange(0, BM))[:, None] * 100 + (pn + arange(0, BN))[None, :];\n"
                             "    atomic_add_tensor_descriptor(make_tensor_descriptor(o1, [m, n], [so, 1], [BM, BN]), [pm, pn], v);\n"
                             "    atomic_max_tensor_descriptor(make_tensor_descriptor(o2, [m, n], [so, 1], [BM, BN]), [pm, pn], v);\n"
                             "    atomic_add_tensor_descriptor(make_tensor_descriptor(o3, [m, n], [so, 1], [BM, BN]), [pm, pn], v as f32);\n"
                             "}\n";
    char *ptx = compile_ptx(src, NULL);
    const char *want[] = {"red.relaxed.gpu.global.add.s32", "red.relaxed.gpu.global.max.s32", "red.relaxed.gpu.global.add.f32"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) cr_expect_not_null(strstr(ptx, want[i]), "no %s", want[i]);
    free(ptx);
    K k;
    load_src(&k, src, "k");
    enum { M = 45, N = 37, SO = 40, BM = 16, BN = 8 };
    static int32_t o1[(M + 2) * SO], o2[(M + 2) * SO];
    static float o3[(M + 2) * SO];
    for (int i = 0; i < (M + 2) * SO; i++) o1[i] = i % 7 - 3, o2[i] = (i * 31) % 5000 - 100, o3[i] = (float)(i % 11);
    static int32_t i1[(M + 2) * SO], i2[(M + 2) * SO];
    static float i3[(M + 2) * SO];
    memcpy(i1, o1, sizeof o1), memcpy(i2, o2, sizeof o2), memcpy(i3, o3, sizeof o3);
    uint64_t d1 = upload(&k, o1, sizeof o1), d2 = upload(&k, o2, sizeof o2), d3 = upload(&k, o3, sizeof o3);
    int32_t m = M, n = N, so = SO;
    void *params[] = {&d1, &d2, &d3, &m, &n, &so};
    /* blocks from row -3 and column -6: cdiv(M + 3, BM) x cdiv(N + 6, BN) of them cover the tensor */
    int tm = (M + 3 + BM - 1) / BM, tn = (N + 6 + BN - 1) / BN;
    launch(&k, (unsigned)(tm * tn), params);
    download(&k, o1, d1, sizeof o1);
    download(&k, o2, d2, sizeof o2);
    download(&k, o3, d3, sizeof o3);
    for (int i = 0; i < M + 2; i++)
        for (int j = 0; j < SO; j++) {
            int at = i * SO + j;
            bool in = i < M && j < N;
            int32_t v = i * 100 + j;
            cr_assert_eq(o1[at], in ? i1[at] + v : i1[at], "add (%d, %d): %d", i, j, o1[at]);
            cr_assert_eq(o2[at], in && v > i2[at] ? v : i2[at], "max (%d, %d): %d", i, j, o2[at]);
            cr_assert_eq(o3[at], in ? i3[at] + (float)v : i3[at], "f32 add (%d, %d): %g", i, j, o3[at]);
        }
    unload(&k);
}

/* Errors: a non-descriptor, the wrong number of offsets, lists of different lengths, an atomic the type lacks. */
Test(lang_run, tensor_descriptor_errors) {
    static const struct {
        const char *body, *msg;
    } cases[] = {
        {"let t = load_tensor_descriptor(a, [0, 0]);", "expects a tensor descriptor"},
        {"let d = make_tensor_descriptor(a, [n, n], [n, 1], [16, 16]);\n    let t = load_tensor_descriptor(d, [0]);",
         "1 offsets for a descriptor of 2 dims"},
        {"let d = make_tensor_descriptor(a, [n], [n, 1], [16, 16]);", "t.tile:2:39: error: 'make_tensor_descriptor': 1 shape elements for a block of 2 dims ([16, 16]): one per dim"},
        {"let d = make_tensor_descriptor(a, [n, 1.5], [n, 1], [16, 16]);", "must be integer scalars"},
        {"let d = make_tensor_descriptor(a, n, [n, 1], [16, 16]);", "must be a list such as [m, n]"},
        {"let d = make_tensor_descriptor(a, [n, n], [n, 1], [16, 16]);\n    atomic_xor_tensor_descriptor(d, [0, 0], 1.0);",
         "'atomic_xor_tensor_descriptor' is not supported on"},
        {"atomic_add_tensor_descriptor(a, [0, 0], 1.0);", "expects a tensor descriptor"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char src[512];
        snprintf(src, sizeof src, "kernel k(a: *f32, n: i32) {\n    %s\n}\n", cases[i].body);
        tile_compile_options o = {0};
        tile_compiled c;
        cr_assert_eq(tile_compile_source("t.tile", src, &o, &c), TILE_ERROR_COMPILE, "case %zu compiled:\n%s", i, src);
        cr_expect(strstr(c.diagnostics, cases[i].msg), "case %zu: diagnostics lack '%s':\n%s", i, cases[i].msg, c.diagnostics);
        cr_expect(strstr(c.diagnostics, "t.tile:"), "case %zu: no location:\n%s", i, c.diagnostics);
        tile_compiled_free(&c);
    }
}

/* Float literals are exact until they take a type: with f64 values 0.1 is the double 0.1 (not f32's
 * 0.10000000149011612), 1e40 finite, 3.0000000001 not 3; a typed f64 const, `0.1 as f64`, full(.., f64)
 * alike; compile-time arithmetic is done in double (0.1 + 0.2 folded, then rounded once where used);
 * with f32 values the same literals round to f32 (1e40: inf).  Before: every float literal was rounded
 * to f32 where it was written. */
/* A negative i32 argument and negative i32 indices widened to i64 (cross-entropy's ignore_index = -100,
 * a -1 "no adapter" id): LLVM folds the sext into `ld.param.s32 %rd` / `ld.global.s32 %rd`, which the
 * emulator's fast loads zero-extended (4294967196 for -100). */
Test(lang_run, negative_i32_widened_to_i64) {
    K k;
    load_src(&k,
             "kernel k(labels: *i64, ids: *i32, out: *i64, ig: i32) {\n"
             "    let c = arange(0, 16);\n"
             "    let y = load(labels + c);\n"
             "    store(out + c, where(y == ig as i64, 1, 0) as i64);\n"
             "    let id = load(ids + 3);\n"
             "    store(out + 16, id as i64);\n"
             "    store(out + 17, ig as i64);\n"
             "    if id < 0 { store(out + 18, 5 as i64); }\n"
             "}\n",
             "k");
    int64_t labels[16], o[19];
    int32_t ids[4] = {4, 5, 6, -1};
    for (int i = 0; i < 16; i++) labels[i] = i % 3 == 0 ? -100 : i;
    memset(o, 0xff, sizeof o);
    uint64_t dl = upload(&k, labels, sizeof labels), di = upload(&k, ids, sizeof ids), d_o = upload(&k, o, sizeof o);
    int32_t ig = -100;
    void *params[] = {&dl, &di, &d_o, &ig};
    launch(&k, 1, params);
    download(&k, o, d_o, sizeof o);
    for (int i = 0; i < 16; i++) cr_assert_eq(o[i], i % 3 == 0, "labels[%d] == -100: %lld", i, (long long)o[i]);
    cr_assert_eq(o[16], -1, "ids[3] as i64: %lld", (long long)o[16]);
    cr_assert_eq(o[17], -100, "ig as i64: %lld", (long long)o[17]);
    cr_assert_eq(o[18], 5, "id < 0 taken: %lld", (long long)o[18]);
    unload(&k);
}

/* Reductions as Triton's: sum/cumsum of narrow integers accumulate in i32/u32 (Triton's _pick_sum_dtype),
 * dtype= accumulates in the type given, keep_dims= keeps the axis, max(.., return_indices=true) is
 * (max, argmax).  Before: sum of i8 wrapped in i8 (128 x 100 gave 0).  An f16 sum (and each cumsum prefix) is
 * added in f32 and rounded once, as docs/language.md says: multiples of 2^-10 below 1, whose f32 sums are exact. */
Test(lang_run, reductions_as_triton) {
    K k;
    load_src(&k,
             "kernel k(c: *i8, u: *u8, h: *f16, x: *f32, oi: *i32, ou: *u32, of: *f32, h2: *f16, oh: *f16) {\n"
             "    let r = arange(0, 128);\n"
             "    let a = load(c + r);\n"
             "    store(oi, sum(a, axis=0));\n"
             "    store(oi + 1, max(cumsum(a, 0), 0));\n"
             "    store(ou, sum(load(u + r)));\n"
             "    store(of, sum(load(h + r), 0, dtype=f32));\n"
             "    let m = reshape(load(x + r), [8, 16]);\n"
             "    let s = sum(m, 1, keep_dims=true);\n"
             "    store(of + 1 + arange(0, 8)[:, None] + arange(0, 1)[None, :], s);\n"
             "    let (v, i) = max(m, 1, return_indices=true);\n"
             "    store(of + 9 + arange(0, 8), v);\n"
             "    store(oi + 2 + arange(0, 8), i);\n"
             "    let t = sum(m, keep_dims=true);\n"
             "    store(of + 17 + arange(0, 1)[:, None] + arange(0, 1)[None, :], t);\n"
             "    store(oi + 10 + arange(0, 8), reshape(argmin(m, 1, keep_dims=true), [8]));\n"
             "    let w = load(h2 + r);\n"
             "    store(oh, sum(w));\n"
             "    store(oh + 1 + r, cumsum(w));\n"
             "}\n",
             "k");
    int8_t c[128];
    uint8_t u[128];
    uint16_t h[128];
    float x[128], of[18];
    int32_t oi[18];
    uint32_t ou[1];
    for (int i = 0; i < 128; i++) c[i] = 100, u[i] = 200, h[i] = 0x5BD0 /* 250.0 */, x[i] = (float)((i * 37) % 101) - 50.0f;
    memset(of, 0xff, sizeof of), memset(oi, 0xff, sizeof oi), memset(ou, 0xff, sizeof ou);
    uint64_t dc = upload(&k, c, sizeof c), du = upload(&k, u, sizeof u), dh = upload(&k, h, sizeof h), dx = upload(&k, x, sizeof x);
    uint64_t doi = upload(&k, oi, sizeof oi), dou = upload(&k, ou, sizeof ou), dof = upload(&k, of, sizeof of);
    uint16_t h2[128], oh[129];
    unsigned seed = 12345;
    for (int i = 0; i < 128; i++) seed = seed * 1103515245u + 12345u, h2[i] = f32_to_f16((float)((seed >> 16) % 1024u) / 1024.0f);
    uint64_t dh2 = upload(&k, h2, sizeof h2), doh = poisoned(&k, sizeof oh);
    void *params[] = {&dc, &du, &dh, &dx, &doi, &dou, &dof, &dh2, &doh};
    launch(&k, 1, params);
    download(&k, oh, doh, sizeof oh);
    float prefix = 0; /* exact: multiples of 2^-10 below 128 */
    for (int i = 0; i < 128; i++) {
        prefix += (float)f16_to_d(h2[i]);
        cr_assert_eq(oh[1 + i], f32_to_f16(prefix), "f16 cumsum[%d]: 0x%04x, want 0x%04x (%.10g rounded once)", i, oh[1 + i],
                     f32_to_f16(prefix), prefix);
    }
    cr_assert_eq(oh[0], f32_to_f16(prefix), "f16 sum: 0x%04x, want 0x%04x (%.10g rounded once)", oh[0], f32_to_f16(prefix), prefix);
    download(&k, oi, doi, sizeof oi);
    download(&k, ou, dou, sizeof ou);
    download(&k, of, dof, sizeof of);
    cr_assert_eq(oi[0], 12800, "sum of 128 i8 100s: %d", oi[0]);
    cr_assert_eq(oi[1], 12800, "max of the i8 cumsum: %d", oi[1]);
    cr_assert_eq(ou[0], 25600u, "sum of 128 u8 200s: %u", ou[0]);
    cr_assert_eq(of[0], 32000.0f, "sum of 128 f16 250s in f32: %g", of[0]);
    double total = 0;
    for (int row = 0; row < 8; row++) {
        double rs = 0, mx = -1e30, mn = 1e30;
        int im = 0, in = 0;
        for (int j = 0; j < 16; j++) {
            float v = x[row * 16 + j];
            rs += v;
            if (v > mx) mx = v, im = j;
            if (v < mn) mn = v, in = j;
        }
        total += rs;
        cr_assert_eq(of[1 + row], (float)rs, "row %d sum keep_dims: %g, want %g", row, of[1 + row], rs);
        cr_assert_eq(of[9 + row], (float)mx, "row %d max: %g", row, of[9 + row]);
        cr_assert_eq(oi[2 + row], im, "row %d argmax: %d, want %d", row, oi[2 + row], im);
        cr_assert_eq(oi[10 + row], in, "row %d argmin keep_dims: %d, want %d", row, oi[10 + row], in);
    }
    cr_assert_eq(of[17], (float)total, "sum of everything keep_dims: %g, want %g", of[17], total);
    unload(&k);
}

Test(lang_run, float_literals_exact_until_typed) {
    K k;
    load_src(&k,
             "const C64: f64 = 0.1;\n"
             "kernel k(x: *f64, y: *f32, o: *f64, p: *f32, const S: f64 = 0.1) {\n"
             "    let c = arange(0, 16);\n"
             "    let a = load(x + c);\n"
             "    let b = load(y + c);\n"
             "    store(o + c, a * 0.1);\n"
             "    store(o + 16 + c, a * C64 + a * (0.1 as f64) + full([16], 0.1, f64) * a + a * S);\n"
             "    store(o + 32 + c, a * 3.0000000001);\n"
             "    store(o + 48 + c, a * 1e40);\n"
             "    store(o + 64 + c, a * (0.1 + 0.2));\n"
             "    store(p + c, b * 0.1);\n"
             "    store(p + 16 + c, b * 1e40);\n"
             "    store(p + 32 + c, b * (0.1 + 0.2));\n"
             "    store(p + 48 + c, b * (0.1 as f32 as f64 as f32));\n"
             "}\n",
             "k");
    double x[16], o[80];
    float y[16], p[64];
    for (int i = 0; i < 16; i++) x[i] = 1.0 + i, y[i] = 1.0f + (float)i;
    memset(o, 0xff, sizeof o), memset(p, 0xff, sizeof p);
    uint64_t dx = upload(&k, x, sizeof x), dy = upload(&k, y, sizeof y), d_o = upload(&k, o, sizeof o), dp = upload(&k, p, sizeof p);
    void *params[] = {&dx, &dy, &d_o, &dp};
    launch(&k, 1, params);
    download(&k, o, d_o, sizeof o);
    download(&k, p, dp, sizeof p);
    for (int i = 0; i < 16; i++) {
        double a = x[i];
        float b = y[i];
        cr_assert_eq(o[i], a * 0.1, "f64 * 0.1 [%d]: %.17g, want %.17g", i, o[i], a * 0.1);
        cr_assert(fabs(o[16 + i] - 4 * a * 0.1) <= 4e-16 * a, "typed f64 constants [%d]: %.17g, want %.17g", i, o[16 + i], 4 * a * 0.1);
        cr_assert_eq(o[32 + i], a * 3.0000000001, "f64 * 3.0000000001 [%d]: %.17g", i, o[32 + i]);
        cr_assert_eq(o[48 + i], a * 1e40, "f64 * 1e40 [%d]: %.17g", i, o[48 + i]);
        cr_assert_eq(o[64 + i], a * (0.1 + 0.2), "f64 * (0.1 + 0.2) [%d]: %.17g, want %.17g", i, o[64 + i], a * (0.1 + 0.2));
        cr_assert_eq(p[i], b * 0.1f, "f32 * 0.1 [%d]: %.9g", i, p[i]);
        cr_assert(isinf(p[16 + i]) && p[16 + i] > 0, "f32 * 1e40 [%d]: %.9g", i, p[16 + i]);
        cr_assert_eq(p[32 + i], b * (float)(0.1 + 0.2), "f32 * (0.1 + 0.2) [%d]: %.9g, want %.9g", i, p[32 + i], b * (float)(0.1 + 0.2));
        cr_assert_eq(p[48 + i], b * 0.1f, "f32 * (0.1 as f32 as f64 as f32) [%d]: %.9g", i, p[48 + i]);
    }
    unload(&k);
}

/* A dot in a loop over an i64 range (K or BK typed i64, as for bounds near i32's limit): the software
 * pipeline's stage counters take the induction variable's type, and the shared-memory offsets built from
 * them were an i64 times an i32 in the LLVM IR ("internal error: generated LLVM IR is invalid", probe Z F15).
 * A is [K, 16] row-major, K = 40 (two and a half blocks); C = sum over blocks T T of its 16 x 16 blocks (rows
 * past K zero), f16 operands of small integers: exact in f32. */
Test(lang_run, dot_in_an_i64_loop) {
    static const char *src =
        "kernel k(a: *f16, out: *f32, K: i64, const BK: i64 = 16) {\n"
        "    let r = arange(0, 16);\n"
        "    let c = arange(0, BK);\n"
        "    let acc = zeros([16, 16], f32);\n"
        "    for k0 in range(0, K, BK) {\n"
        "        let kk = k0 + c;\n"
        "        let t = load(a + kk[:, None] * 16 + r[None, :], kk[:, None] < K, 0.0);\n"
        "        acc = dot(t, t, acc);\n"
        "    }\n"
        "    store(out + r[:, None] * 16 + r[None, :], acc);\n"
        "}\n";
    char *ptx = compile_ptx(src, "sm_80");
    cr_expect(strstr(ptx, "cp.async"), "the dot's operand is pipelined (the case that failed):\n%s", ptx);
    free(ptx);
    free(compile_ptx(src, "sm_90a")); /* through tensor maps there (their launch needs the runtime's maps: compiled only) */
    K k;
    load_src_on(&k, src, "k", "sm_80", "emu");
    enum { KD = 40 };
    uint16_t a[KD * 16];
    float o[256];
    int av[KD * 16];
    for (int i = 0; i < KD * 16; i++) av[i] = (i * 7) % 5 - 2, a[i] = f16_from((float)av[i]);
    for (int i = 0; i < 256; i++) o[i] = NAN;
    uint64_t da = upload(&k, a, sizeof a), d_o = upload(&k, o, sizeof o);
    int64_t kd = KD;
    void *params[] = {&da, &d_o, &kd};
    launch(&k, 1, params);
    download(&k, o, d_o, sizeof o);
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++) {
            int want = 0;
            for (int k0 = 0; k0 < KD; k0 += 16)
                for (int m = 0; m < 16; m++) {
                    int x = k0 + i < KD ? av[(k0 + i) * 16 + m] : 0, y = k0 + m < KD ? av[(k0 + m) * 16 + j] : 0;
                    want += x * y;
                }
            cr_assert_eq(o[i * 16 + j], (float)want, "C[%d][%d] = %g, want %d", i, j, o[i * 16 + j], want);
        }
    unload(&k);
}

/* 64-bit bit patterns: a literal above i64 is a u64 (0xFFFFFFFFFFFFFFFF was "too large"), and
 * -9223372036854775808 is i64's least value (probe Z F13). */
Test(lang_run, u64_literals) {
    K k;
    load_src(&k,
             "kernel k(x: *u64, y: *i64) {\n"
             "    store(x, 0xFFFFFFFFFFFFFFFF);\n"
             "    store(x + 1, load(x + 2) & 0x8000000000000000);\n"
             "    store(y, -9223372036854775808);\n"
             "    store(y + 1, 9223372036854775807);\n"
             "}\n",
             "k");
    uint64_t x[3] = {0, 0, 0xC000000000000123ull};
    int64_t y[2] = {0, 0};
    uint64_t dx = upload(&k, x, sizeof x), dy = upload(&k, y, sizeof y);
    void *params[] = {&dx, &dy};
    launch(&k, 1, params);
    download(&k, x, dx, sizeof x);
    download(&k, y, dy, sizeof y);
    cr_expect_eq(x[0], UINT64_MAX);
    cr_expect_eq(x[1], 0x8000000000000000ull);
    cr_expect_eq(y[0], INT64_MIN);
    cr_expect_eq(y[1], INT64_MAX);
    unload(&k);
}

/* A shift of a run-time value by a constant amount of the width or more, or a negative one, gives what the run-time
 * shift gives (PTX clamps the amount): 0, or the sign's fill for >> of a signed value.  It stored LLVM's poison, an
 * unwritten register (probe C C0); the same amounts given at run time are the reference. */
Test(lang_run, constant_shift_out_of_range) {
    K k;
    load_src(&k,
             "kernel k(x: *i32, s: *i32, r: *i32) {\n"
             "    let v = load(x);\n"
             "    let i = arange(0, 2);\n"
             "    let w = load(x + i);\n"
             "    store(r, v >> 40);\n"
             "    store(r + 1, v >> load(s));\n"
             "    store(r + 2, v << 32);\n"
             "    store(r + 3, v << load(s));\n"
             "    store(r + 4, ((v as u32) >> 33) as i32);\n"
             "    store(r + 5, ((v as u32) >> load(s + 1) as u32) as i32);\n"
             "    store(r + 6, v >> -1);\n"
             "    store(r + 7, ((v as i64 * 4294967296) >> 64) as i32);\n"
             "    store(r + 8, ((v as i16) >> 16) as i32);\n"
             "    store(r + 9, ((v as u8) << 8) as i32);\n"
             "    store(r + 10 + i, w >> 33);\n"
             "}\n",
             "k");
    int32_t x[2] = {-5, 12345}, s[2] = {40, 33}, r[12];
    for (int i = 0; i < 12; i++) r[i] = 7;
    uint64_t dx = upload(&k, x, sizeof x), ds = upload(&k, s, sizeof s), dr = upload(&k, r, sizeof r);
    void *params[] = {&dx, &ds, &dr};
    launch(&k, 1, params);
    download(&k, r, dr, sizeof r);
    int32_t want[12] = {-1, -1, 0, 0, 0, 0, -1, -1, -1, 0, -1, 0};
    for (int i = 0; i < 12; i++) cr_expect_eq(r[i], want[i], "result %d: %d, want %d", i, r[i], want[i]);
    unload(&k);
}

/* ---- names: thousands of functions, constants and variables (found through hash maps) ---- */

/* 4000 functions and 4000 constants, each constant defined from the one before; 600 variables in one scope,
 * 40 of them `let`s that hide an earlier one of the same name; a run-time `if` whose early `return` makes the
 * statements after it run in both branches, where a `let t` of the first branch must not be seen by the
 * second (whose `t` is still the one before the `if`). */
Test(lang_run, many_names_and_shadowing) {
    enum { NF = 4000, NV = 600, P = 6 };
    Str s = {0};
    for (int i = 0; i < NF; i++) str_printf(&s, "fn h_%d(x) { return x + %d; }\n", i, i % 7);
    str_puts(&s, "const C_0: i32 = 1;\n");
    for (int i = 1; i < NF; i++) str_printf(&s, "const C_%d: i32 = C_%d + %d;\n", i, i - 1, i % 3);
    str_puts(&s, "@num_warps(1)\nkernel k(out: *i32) {\n    let pid = program_id(0);\n    let t = pid * 10;\n");
    for (int i = 0; i < NV; i++) str_printf(&s, "    let v_%d = pid + %d;\n", i, i);
    for (int i = 0; i < 40; i++) str_printf(&s, "    let v_%d = v_%d * 2 + v_%d;\n", i * 7, i * 7, i * 7 + 1);
    str_puts(&s, "    if pid < 3 {\n        if pid == 0 { store(out, -5); return; }\n        t = t + 1000;\n    }\n"
                 "    let t = t + 1;\n    let u = t * 3;\n");
    str_printf(&s, "    store(out + pid, h_%d(C_%d) + h_17(v_7) + v_%d + t + u);\n}\n", NF - 1, NF - 1, NV - 1);
    K k;
    load_src(&k, s.buf, "k");
    str_free(&s);
    int64_t c = 1, hf = (NF - 1) % 7;
    for (int i = 1; i < NF; i++) c += i % 3;
    int32_t out[P];
    for (int i = 0; i < P; i++) out[i] = 0x7f7f7f7f;
    uint64_t dout = upload(&k, out, sizeof out);
    void *params[] = {&dout};
    launch(&k, P, params);
    download(&k, out, dout, sizeof out);
    for (int pid = 0; pid < P; pid++) {
        int64_t t = pid * 10 + (pid < 3 ? 1000 : 0) + 1, v7 = (int64_t)(pid + 7) * 2 + (pid + 8);
        int64_t want = pid == 0 ? -5 : c + hf + v7 + 17 % 7 + (pid + NV - 1) + t + 3 * t;
        cr_expect_eq(out[pid], want, "program %d: %d, want %lld", pid, out[pid], (long long)want);
    }
    unload(&k);
}

/* ---- max/min(x, axis, return_indices=true): the value is the element at the index ---- */

typedef struct RiType {
    const char *name;
    int size;
    bool fp;
} RiType;

static void ri_put(const RiType *t, void *buf, int i, double v) {
    char *p = (char *)buf + (size_t)i * (size_t)t->size;
    if (!strcmp(t->name, "f32")) {
        float f = (float)v;
        memcpy(p, &f, 4);
    } else if (!strcmp(t->name, "f64")) {
        memcpy(p, &v, 8);
    } else if (!strcmp(t->name, "f16") || !strcmp(t->name, "bf16")) {
        uint16_t h = !strcmp(t->name, "f16") ? f32_to_f16((float)v) : f32_to_bf16((float)v);
        memcpy(p, &h, 2);
    } else {
        int64_t n = (int64_t)v;
        memcpy(p, &n, (size_t)t->size); /* little-endian: the low bytes */
    }
}

static double ri_get(const RiType *t, const void *buf, int i) {
    const char *p = (const char *)buf + (size_t)i * (size_t)t->size;
    if (!strcmp(t->name, "f32")) {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    if (!strcmp(t->name, "f64")) {
        double d;
        memcpy(&d, p, 8);
        return d;
    }
    if (t->size == 2 && t->fp) {
        uint16_t h;
        memcpy(&h, p, 2);
        return !strcmp(t->name, "f16") ? f16_to_d(h) : bf16_to_d(h);
    }
    if (!strcmp(t->name, "u8")) return *(const uint8_t *)p;
    if (!strcmp(t->name, "i8")) return *(const int8_t *)p;
    if (t->size == 4) {
        int32_t n;
        memcpy(&n, p, 4);
        return n;
    }
    int64_t n;
    memcpy(&n, p, 8);
    return (double)n;
}

/* A NaN of sign `neg` with the low bits of `payload` in its mantissa (a quiet NaN of each float type). */
static void ri_put_nan(const RiType *t, void *buf, int i, bool neg, unsigned payload) {
    char *p = (char *)buf + (size_t)i * (size_t)t->size;
    if (t->size == 8) {
        uint64_t b = (neg ? 1ull << 63 : 0) | 0x7ff8000000000000ull | payload;
        memcpy(p, &b, 8);
    } else if (t->size == 4) {
        uint32_t b = (neg ? 1u << 31 : 0) | 0x7fc00000u | (payload & 0x3fffffu);
        memcpy(p, &b, 4);
    } else {
        uint16_t b = (uint16_t)((neg ? 0x8000u : 0) | (!strcmp(t->name, "f16") ? 0x7e00u | (payload & 0x1ffu) : 0x7fc0u | (payload & 0x3fu)));
        memcpy(p, &b, 2);
    }
}

/* Triton's combine of (value, index) pairs, ties to the left, with docs/language.md's NaN rule: the
 * first NaN of a row wins, else the first of the largest (smallest) values, +0.0 and -0.0 equal. */
static int ri_ref(const RiType *t, const void *x, int base, int stride, int n, bool max) {
    int best = 0;
    for (int j = 1; j < n; j++) {
        double v = ri_get(t, x, base + j * stride), b = ri_get(t, x, base + best * stride);
        if (isnan(b)) break;
        if (isnan(v) || (max ? v > b : v < b)) best = j;
    }
    return best;
}

/* Rows of n elements (axis 1: rows of x; axis 0: columns of x viewed [n, rows]) reduced as a [M, N] (axis 1) or
 * [N, M] (axis 0) tile per program, N >= n: the columns past n repeat element n - 1, a tie the lower index wins,
 * and the rows past `rows` repeat the last row, not stored.  Each row is one of: random small values (ties),
 * only signed zeros, the extreme a signed zero planted twice with opposite signs, NaNs of either sign with
 * payloads (floats), the extreme at
 * the row's ends.  Before: the value came from a second plain max/min reduction, so a row with -0.0 then +0.0
 * gave (+0.0, 0): the maximum's value with argmax's index; and an f16/bf16 NaN, compared as f32, came back as the
 * canonical NaN 0x7fff, not the element's bits. */
static void return_indices_case(const RiType *t, int M, int N, int n, int warps, int axis, const char *arch) {
    char src[2048];
    const char *idx = axis == 1 ? "r[:, None] * n + minimum(c, n - 1)[None, :]" : "r[None, :] + minimum(c, n - 1)[:, None] * rows";
    snprintf(src, sizeof src,
             "@num_warps(%d)\n"
             "kernel k(x: *%s, ov: *%s, oi: *i32, rows: i32, n: i32) {\n"
             "    let r = minimum(program_id(0) * %d + arange(0, %d), rows - 1);\n"
             "    let c = arange(0, %d);\n"
             "    let v = load(x + %s);\n"
             "    let (a, ia) = max(v, %d, return_indices=true);\n"
             "    let (b, ib) = min(v, %d, return_indices=true);\n"
             "    let o = program_id(0) * %d + arange(0, %d);\n"
             "    let m = o < rows;\n"
             "    store(ov + o, a, m);\n"
             "    store(ov + rows + o, b, m);\n"
             "    store(oi + o, ia, m);\n"
             "    store(oi + rows + o, ib, m);\n"
             "    store(oi + 2 * rows + o, argmax(v, %d), m);\n"
             "    store(oi + 3 * rows + o, argmin(v, %d), m);\n"
             "}\n",
             warps, t->name, t->name, M, M, N, idx, axis, axis, M, M, axis, axis);
    K k;
    load_src_on(&k, src, "k", arch, NULL);
    int progs = 3, rows = progs * M - 1;
    size_t xn = (size_t)rows * (size_t)n;
    void *x = calloc(xn, (size_t)t->size), *ov = malloc(2 * (size_t)rows * (size_t)t->size);
    int32_t *oi = malloc(4 * (size_t)rows * sizeof(int32_t));
    cr_assert(x && ov && oi);
    unsigned seed = (unsigned)(M * 131 + N * 7 + warps + axis * 1000 + t->size * 17);
    bool uns = !strcmp(t->name, "u8");
    for (int row = 0; row < rows; row++) {
        int base = axis == 1 ? row * n : row, stride = axis == 1 ? 1 : rows, kind = row % 5;
        if (!t->fp && (kind == 1 || kind == 3)) kind = 0;
        for (int j = 0; j < n; j++) {
            seed = seed * 1103515245u + 12345u;
            int s = (int)((seed >> 16) % 7u);
            double v = t->fp ? (s - 3) * 0.5 : uns ? s : s - 3;
            if (kind == 1) v = (seed >> 9) & 1 ? 0.0 : -0.0;
            if (kind == 2) v = t->fp ? -(s + 1) * 0.5 : uns ? s + 1 : -(s + 1); /* below the planted zeros */
            ri_put(t, x, base + j * stride, v);
        }
        seed = seed * 1103515245u + 12345u;
        int p = (int)((seed >> 8) % (unsigned)n), q = (int)((seed >> 20) % (unsigned)n);
        if (kind == 2) { /* max: two zeros of opposite signs, the first of them -0.0 on odd rows */
            int lo = p < q ? p : q, hi = p < q ? q : p;
            ri_put(t, x, base + lo * stride, t->fp && (row & 1) ? -0.0 : 0.0);
            ri_put(t, x, base + hi * stride, t->fp && (row & 1) ? 0.0 : -0.0);
        } else if (kind == 3) { /* NaNs of either sign with payloads, which the value keeps */
            ri_put_nan(t, x, base + p * stride, (row & 2) != 0, 5u + (unsigned)row);
            if (row & 1) ri_put_nan(t, x, base + q * stride, (row & 2) == 0, 9u + (unsigned)row);
        } else if (kind == 4) {
            double top = t->fp ? 7.5 : uns ? 200 : 100, bot = t->fp ? -7.5 : uns ? 0 : -100;
            ri_put(t, x, base + (n - 1) * stride, top);
            ri_put(t, x, base + p * stride, top);
            ri_put(t, x, base, bot);
            ri_put(t, x, base + q * stride, bot);
        }
    }
    memset(ov, 0xff, 2 * (size_t)rows * (size_t)t->size);
    memset(oi, 0xff, 4 * (size_t)rows * sizeof(int32_t));
    uint64_t dx = upload(&k, x, xn * (size_t)t->size), dov = upload(&k, ov, 2 * (size_t)rows * (size_t)t->size);
    uint64_t doi = upload(&k, oi, 4 * (size_t)rows * sizeof(int32_t));
    int32_t rows32 = rows, n32 = n;
    void *params[] = {&dx, &dov, &doi, &rows32, &n32};
    launch(&k, (unsigned)progs, params);
    download(&k, ov, dov, 2 * (size_t)rows * (size_t)t->size);
    download(&k, oi, doi, 4 * (size_t)rows * sizeof(int32_t));
    for (int row = 0; row < rows; row++)
        for (int mx = 0; mx < 2; mx++) {
            int base = axis == 1 ? row * n : row, stride = axis == 1 ? 1 : rows;
            int want = ri_ref(t, x, base, stride, n, mx == 0), got = oi[mx * rows + row], plain = oi[(2 + mx) * rows + row];
            const char *what = mx == 0 ? "max" : "min";
            cr_assert_eq(got, want, "%s %s [%d, %d] n %d warps %d axis %d %s row %d (kind %d): index %d, want %d", what, t->name,
                         M, N, n, warps, axis, arch, row, row % 5, got, want);
            cr_assert_eq(plain, want, "arg%s %s [%d, %d] warps %d axis %d row %d: %d, want %d", what, t->name, M, N, warps, axis,
                         row, plain, want);
            const char *gv = (const char *)ov + (size_t)(mx * rows + row) * (size_t)t->size;
            const char *xv = (const char *)x + (size_t)(base + want * stride) * (size_t)t->size;
            /* bit for bit, a NaN's sign and payload too (f16/bf16 are compared as f32) */
            cr_assert(!memcmp(gv, xv, (size_t)t->size), "%s %s [%d, %d] n %d warps %d axis %d %s row %d (kind %d): value %g%s is not "
                      "x[%d] = %g%s, bit for bit", what, t->name, M, N, n, warps, axis, arch, row, row % 5, ri_get(t, ov, mx * rows + row),
                      signbit(ri_get(t, ov, mx * rows + row)) ? " (sign set)" : "", want, ri_get(t, x, base + want * stride),
                      signbit(ri_get(t, x, base + want * stride)) ? " (sign set)" : "");
        }
    free(x);
    free(ov);
    free(oi);
    unload(&k);
}

/* keep_dims=true keeps the axis on both results; a tuple of which only the index, or only the value, is used
 * still gives the pair of one reduction.  Rows of 45 small integers (ties) in a [8, 64] tile over 4 warps, the
 * padding -inf for max and +inf for min.  Each max/min with indices is one reduction of (value, index) pairs in
 * the Tile IR: one argmax (argmin) reduce with two results, the index and the value.  Before: two reduces, the
 * index's and the value's, each a whole (value, index) reduction.  An argmax before the max of the same tile, and
 * the second min of the same tile, are that same reduction (canonicalize's CSE; they were a reduction each). */
Test(lang_run, return_indices_keep_dims_one_result_used) {
    const char *src =
             "kernel k(x: *f32, ov: *f32, oi: *i32, n: i32) {\n"
             "    let r = arange(0, 8);\n"
             "    let c = arange(0, 64);\n"
             "    let in = (c < n)[None, :];\n"
             "    let m = load(x + r[:, None] * n + c[None, :], in, -1.0 / 0.0);\n"
             "    store(oi + 16 + r, argmax(m, 1));\n"
             "    let (v, i) = max(m, 1, return_indices=true, keep_dims=true);\n"
             "    store(ov + r[:, None] + arange(0, 1)[None, :], v);\n"
             "    store(oi + r[:, None] + arange(0, 1)[None, :], i);\n"
             "    let m2 = where(in, m, 1.0 / 0.0);\n"
             "    let (w, j) = min(m2, 1, return_indices=true);\n"
             "    store(oi + 8 + r, j);\n"
             "    let (w2, j2) = min(m2, 1, return_indices=true);\n"
             "    store(ov + 8 + r, w2);\n"
             "}\n";
    tile_compile_options o = {.tir_only = 1};
    tile_compiled c;
    cr_assert_eq(tile_compile_source("t.tile", src, &o, &c), TILE_OK, "%s", c.diagnostics);
    int pairs = 0, reduces = 0;
    for (const char *p = c.tir; (p = strstr(p, " reduce ")); p++) {
        reduces++;
        pairs += !strncmp(p - 4, ":2 =", 4) && (!strncmp(p + 8, "%", 1)) &&
                 (strstr(p, "kind=argmax") == strstr(p, "kind=") || strstr(p, "kind=argmin") == strstr(p, "kind="));
    }
    cr_assert(reduces == 2 && pairs == 2, "2 reduces of (index, value) pairs expected, found %d reduces, %d of them pairs:\n%s",
              reduces, pairs, c.tir);
    tile_compiled_free(&c);
    K k;
    load_src(&k, src, "k");
    enum { R = 8, N = 45 };
    float x[R * N], ov[16];
    int32_t oi[24];
    unsigned seed = 12345;
    for (int e = 0; e < R * N; e++) {
        seed = seed * 1103515245u + 12345u;
        x[e] = (float)((int)((seed >> 16) % 7u) - 3);
    }
    x[3 * N + 44] = 9.0f; /* the last element of a row, next to the padding */
    x[5 * N + 44] = -9.0f;
    memset(ov, 0xff, sizeof ov), memset(oi, 0xff, sizeof oi);
    uint64_t dx = upload(&k, x, sizeof x), dov = upload(&k, ov, sizeof ov), doi = upload(&k, oi, sizeof oi);
    int32_t n = N;
    void *params[] = {&dx, &dov, &doi, &n};
    launch(&k, 1, params);
    download(&k, ov, dov, sizeof ov);
    download(&k, oi, doi, sizeof oi);
    for (int row = 0; row < R; row++) {
        int im = 0, in = 0;
        for (int j = 1; j < N; j++) {
            if (x[row * N + j] > x[row * N + im]) im = j;
            if (x[row * N + j] < x[row * N + in]) in = j;
        }
        cr_assert_eq(oi[row], im, "row %d argmax (keep_dims): %d, want %d", row, oi[row], im);
        cr_assert_eq(oi[16 + row], im, "row %d argmax before the max: %d, want %d", row, oi[16 + row], im);
        cr_assert_eq(ov[row], x[row * N + im], "row %d max (keep_dims): %g, want %g", row, ov[row], x[row * N + im]);
        cr_assert_eq(oi[8 + row], in, "row %d argmin (index used alone): %d, want %d", row, oi[8 + row], in);
        cr_assert_eq(ov[8 + row], x[row * N + in], "row %d min (value used alone): %g, want %g", row, ov[8 + row], x[row * N + in]);
    }
    unload(&k);
}

Test(lang_run, return_indices_value_at_index) {
    static const RiType types[] = {{"f32", 4, true}, {"f16", 2, true}, {"bf16", 2, true}, {"f64", 8, true},
                                   {"i32", 4, false}, {"i8", 1, false},  {"u8", 1, false},    {"i64", 8, false}};
    /* in-thread and across lanes; across 2, 4 and 8 warps; one long row; along axis 0; odd row lengths across
     * warps (the row's padding repeats its last element, so the tie with it must keep the lower index) */
    static const struct { int M, N, n, warps, axis; } cfg[] = {
        {4, 64, 50, 1, 1},  {2, 256, 203, 4, 1}, {1, 1024, 1000, 8, 1}, {8, 128, 97, 4, 0},
        {16, 16, 16, 4, 1}, {4, 128, 77, 8, 1},  {16, 64, 45, 8, 0},    {1, 256, 131, 2, 1},
    };
    for (size_t c = 0; c < ARRAY_LEN(cfg); c++)
        for (size_t d = 0; d < ARRAY_LEN(types); d++)
            return_indices_case(&types[d], cfg[c].M, cfg[c].N, cfg[c].n, cfg[c].warps, cfg[c].axis, "sm_80");
    for (size_t c = 0; c < ARRAY_LEN(cfg); c++) return_indices_case(&types[c % 4], cfg[c].M, cfg[c].N, cfg[c].n, cfg[c].warps, cfg[c].axis, "sm_90a");
}

/* The devices lang_run.h opens have the test helpers' launch budget (tests/emu_budget.h): TILE_EMU_TIMEOUT's
 * seconds when it is set, so a kernel that never ends (a poll of a flag no one sets) fails at the budget with
 * the emulator's timeout report instead of holding the program until ctest's timeout; without the variable
 * the budget is TEST_EMU_BUDGET_SECONDS, not the device layer's 600 s. */
static const char *const hang_src = "@num_warps(1)\n"
                                    "kernel k(flag: *i32, out: *i32) {\n"
                                    "    let s = atomic_poll(flag, 1);\n"
                                    "    store(out + arange(0, 32), (s as i32) + arange(0, 32) * 0);\n"
                                    "}\n";

Test(lang_run, a_hung_kernel_stops_at_tile_emu_timeout) {
    setenv("TILE_EMU_TIMEOUT", "0.3", 1); /* read once, at the process's first rt_options() */
    cr_assert_eq(test_emu_budget(), 0.3);
    K k;
    load_src(&k, hang_src, "k");
    int32_t flag = 0;
    uint64_t df = upload(&k, &flag, 4), d_o = poisoned(&k, 32 * 4);
    void *params[] = {&df, &d_o};
    DevStatus st = dev_launch(k.fn, 1, 1, 1, (unsigned)k.threads, 1, 1, k.dyn_smem, NULL, params);
    if (st == DEV_OK) st = dev_synchronize(k.dev);
    cr_expect_neq(st, DEV_OK, "a poll of a flag no one sets ended");
    const char *e = dev_last_error(k.dev);
    cr_expect(e && strstr(e, "timeout") && strstr(e, "ran longer than 0.3 s"), "%s", e ? e : "(none)");
    unload(&k);
}

Test(lang_run, test_devices_have_a_budget_without_tile_emu_timeout) {
    unsetenv("TILE_EMU_TIMEOUT");
    cr_expect_eq(test_emu_budget(), TEST_EMU_BUDGET_SECONDS);
    cr_expect_eq(racecheck_options().emu_timeout_seconds, TEST_EMU_BUDGET_SECONDS);
}
