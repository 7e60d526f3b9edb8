/* test_lang_python.c - Python's forms in Triton kernels, compiled from inline sources and run on the emulator
 * against exact references: tuples of one and nested tuples, tuple and list elements and their assignment,
 * implied trailing slices, Triton's keyword names (of loads, atomics, math, shape ops, reductions, scans, dot), names that outlive an if, powers and local compile-time
 * constants, tuples without parentheses, constexpr(), `is` of compile-time values, len/int/float/unary plus,
 * unpacking and comparing shapes, reductions along a tuple of axes, tuple concatenation and repetition, loops
 * over a tuple, parenthesized names and lists in tuples, next_power_of_2 (test_lang_triton.c: Triton's language features; test_lang_triton_values.c:
 * its value and type rules). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "include/tile/tile.h"
#include "runtime/device.h"
#include "support/hostfloat.h"
#include "tests/lang_run.h"
#include "tests/test_rng.h"

/* A tuple of one unpacks as `let (a,) = t` and `(a,) = t` (Python's `a, = t`), as Inductor writes a scan:
 * `tmp2, = tl.associative_scan((tmp1,), 1, _triton_helper_fn_add0)`; `(a)` alone is the name, as Python reads it, so
 * `let (a) = (x,)` binds the tuple, and using it as a value says to unpack it.  Rows of 10
 * in a 16-wide block, 3 rows, the output poisoned first. */
Test(lang_python, unpack_tuple_of_one) {
    const char *src = "fn _triton_helper_fn_add0(arg0_0, arg1_0) {\n"
                      "    let tmp0 = arg0_0 + arg1_0;\n"
                      "    return tmp0;\n"
                      "}\n"
                      "kernel triton_per_fused_cumsum_0(in_ptr0: *f32, out_ptr0: *f32, xnumel: i32, const XBLOCK: i32 = 1) {\n"
                      "    let rnumel = 10;\n"
                      "    let RBLOCK = 16;\n"
                      "    let xoffset = program_id(0) * XBLOCK;\n"
                      "    let xindex = xoffset + arange(0, XBLOCK)[:, None];\n"
                      "    let xmask = xindex < xnumel;\n"
                      "    let rindex = arange(0, RBLOCK)[None, :];\n"
                      "    let rmask = rindex < rnumel;\n"
                      "    let tmp0 = load(in_ptr0 + (rindex + 10 * xindex), rmask & xmask, other=0.0);\n"
                      "    let tmp1 = broadcast_to(tmp0, [XBLOCK, RBLOCK]);\n"
                      "    let (tmp2,) = associative_scan((tmp1,), 1, _triton_helper_fn_add0);\n"
                      "    let tmp3 = tmp2;\n"
                      "    (tmp3,) = associative_scan((tmp2 + tmp1,), 1, _triton_helper_fn_add0, reverse=true);\n"
                      "    store(out_ptr0 + (rindex + 10 * xindex), tmp2 * 1000.0 + tmp3, rmask & xmask);\n"
                      "}\n";
    K k;
    load_src(&k, src, "triton_per_fused_cumsum_0");
    enum { ROWS = 3, N = 10 };
    float x[ROWS * N], o[ROWS * N + 4];
    for (int i = 0; i < ROWS * N; i++) x[i] = (float)(i * 7 % 5) - 2.0f;
    int32_t xnumel = ROWS;
    uint64_t dx = upload(&k, x, sizeof x), d_o = poisoned(&k, sizeof o);
    launch(&k, ROWS, (void *[]){&dx, &d_o, &xnumel});
    download(&k, o, d_o, sizeof o);
    for (int r = 0; r < ROWS; r++) {
        double pre[N], suf = 0;
        for (int i = 0; i < N; i++) pre[i] = (i ? pre[i - 1] : 0) + x[r * N + i];
        for (int i = N - 1; i >= 0; i--) {
            suf += pre[i] + x[r * N + i];
            double want = pre[i] * 1000.0 + suf;
            cr_assert_eq(o[r * N + i], (float)want, "row %d [%d] = %g, want %g", r, i, o[r * N + i], want);
        }
    }
    for (int i = ROWS * N; i < ROWS * N + 4; i++) cr_assert(isnan(o[i]), "[%d] written past the rows", i);
    unload(&k);
    static const BadSource bad[] = {
        {"kernel k(x: *f32) {\n    let (a) = (load(x),);\n    store(x, a);\n}\n",
         "t.tile:3:14: error: a tuple of 1 value cannot be used as a value; unpack it: let (a,) = ..."},
        {"kernel k(x: *f32) {\n    let t = (load(x),);\n    store(x, t);\n}\n",
         "t.tile:3:14: error: a tuple of 1 value cannot be used as a value; unpack it: let (a,) = ..."},
        {"kernel k(x: *f32) {\n    let (a,) = (load(x), 1.0);\n}\n", "t.tile:2:9: error: cannot unpack a tuple of 2 values into 1 names"},
    };
    expect_compile_errors(bad, sizeof bad / sizeof *bad);
}

/* Nested tuples, as Triton's: a function returns `(y, (m, r))`, a let or an assignment unpacks it with a nested
 * pattern (`let (y, (m, r)) = ...`, `((lo, hi), cnt) = ...`), `t[1][0]` reads an element of an element, and a loop
 * carries and a run-time if merges a nested tuple leaf by leaf (they were "a tuple of 2 values cannot be used as a
 * value" and "expected a name, found '('").  A row's normalization and its min, max and count against float64. */
Test(lang_python, nested_tuples) {
    const char *src =
                      "fn stats(x, mask) {\n"
                      "    let n = sum(mask as f32, 0);\n"
                      "    let mean = sum(where(mask, x, 0.0), 0) / n;\n"
                      "    let d = where(mask, x - mean, 0.0);\n"
                      "    return (mean, sum(d * d, 0) / n);\n"
                      "}\n"
                      "fn norm_pair(x, mask) {\n"
                      "    let st = stats(x, mask);\n"
                      "    let r = rsqrt(st[1] + 1e-5);\n"
                      "    return ((x - st[0]) * r, (st[0], r));\n"
                      "}\n"
                      "fn step(s, x) {\n"
                      "    let ((lo, hi), cnt) = s;\n"
                      "    return ((minimum(lo, x), maximum(hi, x)), cnt + 1);\n"
                      "}\n"
                      "kernel nested(x: *f32, y: *f32, st: *f32, n: i32, c: i32, const BLOCK: i32 = 128) {\n"
                      "    let row = program_id(0);\n"
                      "    let cols = arange(0, BLOCK);\n"
                      "    let mask = cols < n;\n"
                      "    let xv = load(x + row * n + cols, mask, 0.0);\n"
                      "    let (yv, (m, r)) = norm_pair(xv, mask);\n"
                      "    store(y + row * n + cols, yv, mask);\n"
                      "    let t = norm_pair(xv, mask);\n"
                      "    store(st + 6 * row, t[1][0] - m);\n"
                      "    store(st + 6 * row + 1, r);\n"
                      "    // a nested tuple carried by a loop and merged by an if\n"
                      "    let s = ((1.0 / 0.0, -1.0 / 0.0), 0);\n"
                      "    for i in range(0, n) {\n"
                      "        s = step(s, load(x + row * n + i));\n"
                      "    }\n"
                      "    let ((lo, hi), cnt) = s;\n"
                      "    store(st + 6 * row + 2, lo);\n"
                      "    store(st + 6 * row + 3, hi);\n"
                      "    store(st + 6 * row + 4, cnt as f32);\n"
                      "    let u = (0.0, (1.0, 2.0));\n"
                      "    if c > row { u = (10.0, (hi, lo)); }\n"
                      "    ((lo, hi), cnt) = ((u[1][0], u[1][1]), 0);\n"
                      "    store(st + 6 * row + 5, u[0] + lo * 100.0 + hi);\n"
                      "}\n";
    K k;
    load_src(&k, src, "nested");
    seed_rng();
    enum { ROWS = 4, N = 100 };
    float x[ROWS * N], y[ROWS * N], st[ROWS * 6];
    for (int i = 0; i < ROWS * N; i++) x[i] = (float)(urand() * 3.0);
    int32_t n = N, c = 2;
    uint64_t dx = upload(&k, x, sizeof x), dy = poisoned(&k, sizeof y), dst = poisoned(&k, sizeof st);
    launch(&k, ROWS, (void *[]){&dx, &dy, &dst, &n, &c});
    download(&k, y, dy, sizeof y);
    download(&k, st, dst, sizeof st);
    for (int r = 0; r < ROWS; r++) {
        double m = 0, v = 0, lo = INFINITY, hi = -INFINITY;
        for (int i = 0; i < N; i++) m += x[r * N + i], lo = fmin(lo, x[r * N + i]), hi = fmax(hi, x[r * N + i]);
        m /= N;
        for (int i = 0; i < N; i++) v += (x[r * N + i] - m) * (x[r * N + i] - m);
        double rs = 1.0 / sqrt(v / N + 1e-5);
        for (int i = 0; i < N; i++) {
            double want = (x[r * N + i] - m) * rs;
            cr_expect(fabs(y[r * N + i] - want) < 1e-5 * (1 + fabs(want)), "row %d y[%d] = %g, want %g (seed %llu)", r, i, y[r * N + i], want,
                      (unsigned long long)seed);
        }
        cr_expect_eq(st[6 * r], 0.0f, "row %d: t[1][0] - m = %g", r, st[6 * r]);
        cr_expect(fabs(st[6 * r + 1] - rs) < 1e-5 * rs, "row %d: r = %g, want %g", r, st[6 * r + 1], rs);
        cr_expect_eq(st[6 * r + 2], (float)lo, "row %d: lo = %g, want %g", r, st[6 * r + 2], lo);
        cr_expect_eq(st[6 * r + 3], (float)hi, "row %d: hi = %g, want %g", r, st[6 * r + 3], hi);
        cr_expect_eq(st[6 * r + 4], (float)N, "row %d: count = %g", r, st[6 * r + 4]);
        float want5 = c > r ? 10.0f + (float)hi * 100.0f + (float)lo : 0.0f + 100.0f + 2.0f;
        cr_expect_eq(st[6 * r + 5], want5, "row %d: the merged tuple gives %g, want %g", r, st[6 * r + 5], want5);
    }
    unload(&k);
    static const BadSource bad[] = {
        {"kernel k(x: *f32) {\n    let (a, (b, c)) = (1.0, 2.0);\n}\n",
         "t.tile:2:13: error: cannot unpack 'f32' into the 2 names here: it is not a tuple"},
        {"kernel k(x: *f32) {\n    let (a, (b, c)) = (1.0, (2.0, 3.0, 4.0));\n}\n",
         "t.tile:2:13: error: cannot unpack a tuple of 3 values into 2 names"},
        {"kernel k(x: *f32) {\n    let (a, (b, a)) = (1.0, (2.0, 3.0));\n}\n", "t.tile:2:17: error: 'a' appears twice in the names"},
        {"kernel k(x: *f32) {\n    let t = (1.0, (load(x), 2.0));\n    store(x, t[1]);\n}\n",
         "t.tile:3:14: error: a tuple of 2 values cannot be used as a value"},
        {"kernel k(x: *f32, c: i32) {\n    let t = (1.0, (load(x), 2.0));\n    for i in range(c) { t = (1.0, (2.0, 3.0, 4.0)); }\n}\n",
         "error: loop-carried variable 't' changes from"},
    };
    expect_compile_errors(bad, sizeof bad / sizeof *bad);
}

/* `[]` and `()` are a scalar's shape: zeros((), dtype=f32) and full([], v) are scalars, as Triton's tl.zeros([], ...)
 * that flash-linear-attention's chunk_global_cumsum carries through its loop over chunks (b_z += tl.sum(b_s, 0))
 * and Liger's sparsemax backward's tl.zeros((), dtype=tl.float32); shape_of of a scalar is `[]` too.  Chunks of
 * 16 over n = 37, the output poisoned first. */
Test(lang_python, empty_shape_is_scalar) {
    const char *src = "kernel k(s: *f32, o: *f32, T: i32, const BT: i32 = 16) {\n"
                      "    let b_z = zeros((), dtype=f32);\n"
                      "    let one = full([], 1, i32);\n"
                      "    static_assert(rank(b_z) == 0 && numel(one) == 1, \"scalars\");\n"
                      "    let NT = cdiv(T, BT);\n"
                      "    for i_c in range(NT) {\n"
                      "        let o_t = i_c * BT + arange(0, BT);\n"
                      "        let m_t = o_t < T;\n"
                      "        let b_s = load(s + o_t, mask=m_t, other=0.0);\n"
                      "        let b_o = cumsum(b_s, axis=0) + b_z[None] + zeros(shape_of(T), f32) + one as f32;\n"
                      "        b_z += sum(b_s, 0);\n"
                      "        store(o + o_t, b_o, mask=m_t);\n"
                      "    }\n"
                      "}\n";
    K k;
    load_src(&k, src, "k");
    enum { N = 37 };
    float s[N], o[N + 11];
    for (int i = 0; i < N; i++) s[i] = (float)(i * 5 % 7) - 3.0f;
    int32_t T = N;
    uint64_t ds = upload(&k, s, sizeof s), d_o = poisoned(&k, sizeof o);
    launch(&k, 1, (void *[]){&ds, &d_o, &T});
    download(&k, o, d_o, sizeof o);
    double run = 0;
    for (int i = 0; i < N; i++) {
        run += s[i];
        cr_assert_eq(o[i], (float)(run + 1.0), "o[%d] = %g, want %g", i, o[i], run + 1.0);
    }
    for (int i = N; i < N + 11; i++) cr_assert(isnan(o[i]), "o[%d] written past T", i);
    unload(&k);
    tile_compile_options opt = {0};
    tile_compiled c;
    cr_expect_neq(tile_compile_source("t.tile", "kernel k(x: *f32) {\n    store(x, reshape(load(x + arange(0, 1)), []));\n}\n", &opt, &c),
                  TILE_OK);
    cr_expect_not_null(strstr(c.diagnostics, "t.tile:2:46: error: 'reshape' expects a shape such as [64, 64]"), "%s", c.diagnostics);
    tile_compiled_free(&c);
}

/* t[i] of a tuple (a fn's results, Triton's `out[0]`) and of a list (shape_of(x)[0], Triton's x.shape[0]):
 * a compile-time index, negative from the end; a tensor indexed with a number, an index past the end and
 * a run-time index are located errors. */
Test(lang_python, tuple_and_list_elements) {
    K k;
    load_src(&k,
             "fn stats(x) { return (sum(x, 0), max(x, 0), x * 2.0); }\n"
             "kernel k(x: *f32, out: *f32, n: i32) {\n"
             "    let r = arange(0, 64);\n"
             "    let v = load(x + r, r < n, 0.0);\n"
             "    let s = stats(v);\n"
             "    let sh = shape_of(s[2]);\n"
             "    store(out + r, s[-1] + s[0] + (sh[0] as f32), r < n);\n"
             "    store(out + 64, s[1]);\n"
             "}\n",
             "k");
    float x[64], o[65];
    int32_t n = 50;
    double sum = 0, mx = -1e30;
    for (int i = 0; i < 64; i++) x[i] = (float)((i * 37) % 23) - 11.0f;
    for (int i = 0; i < n; i++) sum += x[i], mx = fmax(mx, x[i]);
    mx = fmax(mx, 0.0); /* masked-off elements load 0 */
    uint64_t dx = upload(&k, x, sizeof x), d_o = poisoned(&k, sizeof o);
    launch(&k, 1, (void *[]){&dx, &d_o, &n});
    download(&k, o, d_o, sizeof o);
    for (int i = 0; i < 64; i++) {
        if (i >= n) {
            cr_assert(isnan(o[i]), "out[%d] = %g written past n", i, o[i]);
            continue;
        }
        float want = x[i] * 2.0f + (float)sum + 64.0f;
        cr_assert_eq(o[i], want, "out[%d] = %g, want %g", i, o[i], want);
    }
    cr_assert_eq(o[64], (float)mx, "max: %g, want %g", o[64], mx);
    unload(&k);
    static const BadSource bad[] = {
        {"kernel k(x: *f32) {\n    let v = load(x + arange(0, 4));\n    store(x, v[0]);\n}\n",
         "t.tile:3:16: error: a tensor is indexed with ':' and 'None' only"},
        {"kernel k(x: *f32) {\n    let t = (1.0, 2.0);\n    store(x, t[2]);\n}\n", "t.tile:3:16: error: index 2 is out of range for a tuple of 2"},
        {"kernel k(x: *f32, i: i32) {\n    let t = (1.0, 2.0);\n    store(x, t[i]);\n}\n", "t.tile:3:16: error:"},
        {"kernel k(x: *f32) {\n    let t = (1.0, 2.0);\n    store(x, t[0, 1]);\n}\n", "t.tile:3:15: error: a tuple takes one index"},
    };
    expect_compile_errors(bad, sizeof bad / sizeof *bad);
}

/* Indexing with fewer ':' than the rank: the dims after the last index are implied ':', as in Triton (whose
 * __getitem__ walks only the indices given) and NumPy: `b[None]` of a [16] is [1, 16], `m[:, None]` of a [4, 8] is
 * [4, 1, 8], `m[:]` is m.  They were "index has 0 ':' but the value has rank 1".  More ':' than dims is an error. */
Test(lang_python, implied_trailing_slices) {
    K k;
    load_src(&k,
             "kernel k(a: *f32, b: *f32, out: *f32) {\n"
             "    let i = arange(0, 16);\n"
             "    let m = reshape(load(a + i), [4, 4]);\n"
             "    let t = m[:, None];\n"
             "    static_assert(rank(t) == 3 && shape_of(t, 0) == 4 && shape_of(t, 1) == 1 && shape_of(t, 2) == 4, \"m[:, None]\");\n"
             "    static_assert(rank(m[None]) == 3 && shape_of(m[None], 0) == 1 && rank(m[:]) == 2, \"m[None], m[:]\");\n"
             "    let o = load(a + i)[:, None] * load(b + i)[None];\n"
             "    store(out + i[:, None] * 16 + i[None], o);\n"
             "    store(out + 256 + i, reshape(sum(t * m[None], 1), [16]));\n"
             "}\n",
             "k");
    float a[16], b[16], o[272];
    for (int i = 0; i < 16; i++) a[i] = (float)(i * 7 % 11) - 5.0f, b[i] = (float)(i * 5 % 13) - 6.0f;
    uint64_t da = upload(&k, a, sizeof a), db = upload(&k, b, sizeof b), d_o = poisoned(&k, sizeof o);
    launch(&k, 1, (void *[]){&da, &db, &d_o});
    download(&k, o, d_o, sizeof o);
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++) cr_expect_eq(o[i * 16 + j], a[i] * b[j], "outer[%d][%d] = %g", i, j, o[i * 16 + j]);
    /* sum over dim 1 of t * m[None] ([4, 4, 4]): out[r][c] = sum_q m[r][c] * m[q][c] */
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++) {
            double want = 0;
            for (int q = 0; q < 4; q++) want += (double)a[r * 4 + c] * a[q * 4 + c];
            cr_expect_eq(o[256 + r * 4 + c], (float)want, "sum[%d][%d] = %g, want %g", r, c, o[256 + r * 4 + c], want);
        }
    unload(&k);
    tile_compile_options opt = {0};
    tile_compiled c;
    cr_expect_neq(tile_compile_source("t.tile", "kernel k(x: *f32) {\n    store(x + arange(0, 4)[:, :], 1.0);\n}\n", &opt, &c), TILE_OK);
    cr_expect_not_null(strstr(c.diagnostics, "t.tile:2:27: error: index has 2 ':' but the value has rank 1"), "%s", c.diagnostics);
    tile_compiled_free(&c);
}

/* Triton's keyword names of the built-ins' parameters, where they differ from the names here: load and store's
 * pointer=, the atomics' pointer= and val=, where's condition=/x=/y=, clamp's min=/max=, maximum's and fma's x=/y=/z=,
 * the reductions' and shape ops' input= (each was "has no parameter named ...").  13 of 16 lanes live. */
Test(lang_python, triton_keyword_names) {
    K k;
    load_src(&k,
             "kernel k(x: *f32, out: *f32, c: *i32) {\n"
             "    let o = arange(0, 16);\n"
             "    let v = load(pointer=x + o, mask=o < 13, other=1.0);\n"
             "    let w = where(condition=v > 0.0, x=v, y=-v);\n"
             "    w = clamp(w, min=0.5, max=2.0) + maximum(x=v, y=0.25) + fma(x=v, y=v, z=1.0);\n"
             "    let t = trans(input=reshape(input=w, shape=[2, 8]));\n"
             "    store(pointer=out + arange(0, 8), value=sum(input=t, axis=1) + max(input=t, axis=1));\n"
             "    store(out + 8 + o, cast(input=cumsum(input=v, axis=0), dtype=f32));\n"
             "    atomic_add(pointer=c + o, val=v as i32, mask=o < 3);\n"
             "    atomic_xchg(c + 16 + o, val=o);\n"
             "}\n",
             "k");
    seed_rng();
    float x[16], out[24];
    int32_t cnt[32];
    for (int i = 0; i < 16; i++) x[i] = (float)(irand(49) - 24) / 4;
    memset(cnt, 0, sizeof cnt);
    uint64_t dx = upload(&k, x, sizeof x), d_o = poisoned(&k, sizeof out), dc = upload(&k, cnt, sizeof cnt);
    void *params[] = {&dx, &d_o, &dc};
    launch(&k, 1, params);
    download(&k, out, d_o, sizeof out);
    download(&k, cnt, dc, sizeof cnt);
    double w[16], run = 0;
    for (int i = 0; i < 16; i++) {
        double v = i < 13 ? x[i] : 1.0, a = fabs(v);
        w[i] = (a < 0.5 ? 0.5 : a > 2.0 ? 2.0 : a) + (v > 0.25 ? v : 0.25) + v * v + 1.0; /* quarters: exact in f32 */
        run += v;
        cr_expect_eq(out[8 + i], (float)run, "cumsum [%d]: %g, want %g", i, out[8 + i], run);
        cr_expect_eq(cnt[i], i < 3 ? (int)v : 0, "atomic_add [%d]: %d", i, cnt[i]);
        cr_expect_eq(cnt[16 + i], i, "atomic_xchg [%d]: %d", i, cnt[16 + i]);
    }
    for (int j = 0; j < 8; j++) { /* t = trans of [2, 8]: row j is (w[j], w[8 + j]) */
        double want = w[j] + w[8 + j] + (w[j] > w[8 + j] ? w[j] : w[8 + j]);
        cr_expect_eq(out[j], (float)want, "row %d: %g, want %g", j, out[j], want);
    }
    unload(&k);
}

/* The rest of Triton's keyword names the doc lists: minimum's x=/y=, dot's input=/other= (and acc=), split's a=,
 * input= of view, permute (dims=), expand_dims, broadcast_to, histogram, argmax/argmin (with tie_break_left=),
 * associative_scan, xor_sum, cumprod, reduce, and max/min with return_indices_tie_break_left=false (any index of
 * the largest is valid then).  53 of 64 lanes live, the output poisoned first. */
static const char *kw_shape_src =
    "fn addi(a, b) { return a + b; }\n"
    "kernel k(x: *i32, y: *i32, out: *i32, n: i32) {\n"
    "    let o = arange(0, 64);\n"
    "    let m = o < n;\n"
    "    let a = load(pointer=x + o, mask=m, other=0);\n"
    "    let b = load(y + o, m, 0);\n"
    "    let r = reshape(a & 3, [8, 8]);\n"
    "    store(out + o, minimum(x=a, y=b), m);\n"
    "    let (s0, s1) = split(a=reshape(a, [32, 2]));\n"
    "    store(out + 64 + arange(0, 32), s1 * 1000 + s0);\n"
    "    store(out + 96 + o, ravel(view(input=r * 5, shape=[8, 8])));\n"
    "    store(out + 160 + o, ravel(permute(input=r, dims=(1, 0))));\n"
    "    store(out + 224 + arange(0, 8), reshape(expand_dims(input=arange(0, 8) * 3, axis=0), [8]));\n"
    "    store(out + 232 + o, ravel(broadcast_to(input=arange(0, 8)[None, :], shape=[8, 8])));\n"
    "    store(out + 296 + arange(0, 4), histogram(input=a & 3, num_bins=4, mask=m));\n"
    "    store(out + 300 + arange(0, 8), argmax(input=r, axis=1, tie_break_left=false));\n"
    "    store(out + 308 + arange(0, 8), argmin(input=r, axis=1, tie_break_left=true));\n"
    "    store(out + 414 + o, ravel(associative_scan(input=reshape(a, [8, 8]), axis=1, combine_fn=addi, reverse=true)));\n"
    "    store(out + 324, xor_sum(input=a, axis=0));\n"
    "    store(out + 325 + arange(0, 8), cumprod(input=arange(1, 9), axis=0));\n"
    "    store(out + 333, reduce(input=a, axis=0, combine_fn=addi));\n"
    "    let (mv, mi) = max(input=r, axis=1, return_indices=true, return_indices_tie_break_left=false);\n"
    "    store(out + 334 + arange(0, 8), mi);\n"
    "    store(out + 342 + arange(0, 8), min(input=r, axis=1) * 100 + mv);\n"
    "    let at = (arange(0, 16)[:, None] * 16 + arange(0, 16)[None, :]) % n;\n"
    "    let fa = cast(load(x + at) & 15, f32) - 7.0;\n"
    "    let fb = cast(load(y + at) & 15, f32) - 7.0;\n"
    "    let d = dot(input=fa, other=fb, acc=full([16, 16], 3.0, f32), input_precision=\"ieee\");\n"
    "    store(out + 478 + arange(0, 256), ravel(cast(d, i32)));\n"
    "}\n";

Test(lang_python, triton_keyword_names_shape_ops) {
    K k;
    load_src(&k, kw_shape_src, "k");
    seed_rng();
    enum { N = 53 };
    int32_t x[64], y[64], out[734], a[64], b[64];
    for (int i = 0; i < 64; i++) {
        x[i] = irand(81) - 40;
        y[i] = (int32_t)(rnext() >> 32);
        a[i] = i < N ? x[i] : 0;
        b[i] = i < N ? y[i] : 0;
    }
    uint64_t dx = upload(&k, x, sizeof x), dy = upload(&k, y, sizeof y), d_o = poisoned(&k, sizeof out);
    int32_t n = N;
    void *params[] = {&dx, &dy, &d_o, &n};
    launch(&k, 1, params);
    download(&k, out, d_o, sizeof out);
    int r[8][8];
    for (int i = 0; i < 64; i++) r[i / 8][i % 8] = a[i] & 3;
    for (int i = 0; i < 64; i++) {
        int32_t want = i < N ? (a[i] < b[i] ? a[i] : b[i]) : -1;
        cr_expect_eq(out[i], want, "minimum(x=, y=) [%d]: %d, want %d", i, out[i], want);
        cr_expect_eq(out[96 + i], 5 * r[i / 8][i % 8], "view(input=) [%d]: %d", i, out[96 + i]);
        cr_expect_eq(out[160 + i], r[i % 8][i / 8], "permute(input=, dims=) [%d]: %d", i, out[160 + i]);
        cr_expect_eq(out[232 + i], i % 8, "broadcast_to(input=) [%d]: %d", i, out[232 + i]);
    }
    for (int i = 0; i < 32; i++) cr_expect_eq(out[64 + i], a[2 * i + 1] * 1000 + a[2 * i], "split(a=) [%d]: %d", i, out[64 + i]);
    int hist[4] = {0}, xs = 0, tot = 0;
    for (int i = 0; i < N; i++) hist[a[i] & 3]++;
    for (int i = 0; i < 64; i++) xs ^= a[i], tot += a[i];
    for (int j = 0; j < 4; j++) cr_expect_eq(out[296 + j], hist[j], "histogram(input=) [%d]: %d, want %d", j, out[296 + j], hist[j]);
    cr_expect_eq(out[324], xs, "xor_sum(input=): %d, want %d", out[324], xs);
    cr_expect_eq(out[333], tot, "reduce(input=): %d, want %d", out[333], tot);
    int fact = 1;
    for (int j = 0; j < 8; j++) {
        int mx = r[j][0], mn = r[j][0], amn = 0, rowsum = 0;
        for (int c = 1; c < 8; c++) {
            if (r[j][c] > mx) mx = r[j][c];
            if (r[j][c] < mn) mn = r[j][c], amn = c;
        }
        fact *= j + 1;
        cr_expect_eq(out[224 + j], 3 * j, "expand_dims(input=) [%d]: %d", j, out[224 + j]);
        int am = out[300 + j], mi = out[334 + j];
        cr_expect(am >= 0 && am < 8 && r[j][am] == mx, "argmax(input=, tie_break_left=false) row %d: %d", j, am);
        cr_expect(mi >= 0 && mi < 8 && r[j][mi] == mx, "max(return_indices_tie_break_left=false) row %d: %d", j, mi);
        cr_expect_eq(out[308 + j], amn, "argmin(input=) row %d: %d, want %d", j, out[308 + j], amn);
        for (int c = 7; c >= 0; c--) { /* reverse: out[c] = x[7] + ... + x[c] */
            rowsum += a[j * 8 + c];
            cr_expect_eq(out[414 + j * 8 + c], rowsum, "associative_scan(input=, reverse=true) [%d, %d]: %d, want %d", j, c, out[414 + j * 8 + c], rowsum);
        }
        cr_expect_eq(out[325 + j], fact, "cumprod(input=) [%d]: %d, want %d", j, out[325 + j], fact);
        cr_expect_eq(out[342 + j], mn * 100 + mx, "min(input=) and max's value row %d: %d", j, out[342 + j]);
    }
    for (int i = 0; i < 16; i++) /* the operands: element (i, j) of each is x's / y's element (16 i + j) % N */
        for (int j = 0; j < 16; j++) {
            int want = 3;
            for (int q = 0; q < 16; q++) want += ((x[(16 * i + q) % N] & 15) - 7) * ((y[(16 * q + j) % N] & 15) - 7);
            cr_expect_eq(out[478 + 16 * i + j], want, "dot(input=, other=, acc=) [%d, %d]: %d, want %d", i, j, out[478 + 16 * i + j], want);
        }
    unload(&k);
}

/* Names bound in an `if` that outlive it, as in Triton: the taken branch of a compile-time `if` (`b`, and `a`
 * of a `let` that hides an outer name, and SHIFT that hides a file-level const, stay the branch's own), and the names both branches of a
 * run-time `if` declare, through an `else if` chain, tuples and a constant in one branch and a run-time
 * value in the other (merged to that value's type), and `sum`, a built-in's name, whose call still calls the
 * built-in.  Rows of 100 per program, in blocks of 128. */
static const char *outlive_src =
    "const SHIFT = 4.0;\n"
    "kernel k(x: *f32, pb: *f32, q: *i32, out: *f32, n: i32, const HAS_B: i1 = false) {\n"
    "    let pid = program_id(0);\n"
    "    let offs = arange(0, 128);\n"
    "    let m = offs < n;\n"
    "    let v = load(x + pid * n + offs, m, 0.0);\n"
    "    if HAS_B {\n"
    "        let b = load(pb + offs, m, 0.0);\n"
    "    }\n"
    "    let a = 1.0;\n"
    "    if HAS_B { let a = 5.0; let SHIFT = 100.0; }\n"
    "    if pid % 3 == 0 {\n"
    "        let s = v * 2.0;\n"
    "        let (lo, hi) = (1, 10);\n"
    "    } else if pid % 3 == 1 {\n"
    "        let s = v + 1.0;\n"
    "        let (lo, hi) = (load(q + pid), 20);\n"
    "    } else {\n"
    "        let s = v - 3.0;\n"
    "        let (lo, hi) = (2, load(q + pid));\n"
    "    }\n"
    "    if pid > 100 { let sum = 1.0; } else { let sum = 3.0; }\n"
    "    let y = s * a + (lo + hi) as f32 + SHIFT + sum + 0.0 * sum(v);\n"
    "    if HAS_B { y = y + b; }\n"
    "    store(out + pid * n + offs, y, m);\n"
    "}\n";

Test(lang_python, names_that_outlive_an_if) {
    enum { ROWS = 7, N = 100 };
    float x[ROWS * N], b[N], o[ROWS * N];
    int32_t q[ROWS];
    for (int i = 0; i < ROWS * N; i++) x[i] = (float)irand(2000) / 8 - 100;
    for (int i = 0; i < N; i++) b[i] = (float)irand(100) / 4;
    for (int i = 0; i < ROWS; i++) q[i] = irand(1000) - 500;
    for (int has = 0; has < 2; has++) {
        char *src = strdup(outlive_src);
        if (has) memcpy(strstr(src, "= false"), "= true ", 7);
        K k;
        load_src(&k, src, "k");
        uint64_t dx = upload(&k, x, sizeof x), dbp = upload(&k, b, sizeof b), dq = upload(&k, q, sizeof q),
                 d_o = poisoned(&k, sizeof o);
        int32_t n = N;
        launch(&k, ROWS, (void *[]){&dx, &dbp, &dq, &d_o, &n});
        download(&k, o, d_o, sizeof o);
        for (int r = 0; r < ROWS; r++)
            for (int c = 0; c < N; c++) {
                double v = x[r * N + c], want = (r % 3 == 0 ? 2 * v + 11 : r % 3 == 1 ? v + 1 + q[r] + 20 : v - 3 + 2 + q[r]) + 4 + 3;
                if (has) want += b[c];
                cr_assert_eq(o[r * N + c], (float)want, "HAS_B=%d out[%d][%d] = %g, want %g", has, r, c, o[r * N + c], want);
            }
        unload(&k);
        free(src);
    }
    /* one branch's name, two of different types or shapes, a loop's: unknown after it, with the note at the `let` */
    const BadSource bad[] = {
        {"kernel k(x: *f32, n: i32) {\n    if n > 0 { let t = 1.0; }\n    store(x, t);\n}\n", "t.tile:3:14: error: unknown name 't'"},
        {"kernel k(x: *f32, n: i32) {\n    if n > 0 { let t = 1.0; } else { let t = n; }\n    store(x, t);\n}\n",
         "t.tile:2:16: note: 't' is declared here, in a block that ends before that use"},
        {"kernel k(x: *f32, n: i32) {\n    if n > 0 { let t = zeros([16], f32); } else { let t = zeros([32], f32); }\n"
         "    store(x + arange(0, 16), t);\n}\n",
         "unknown name 't'"},
        {"const C = false;\nkernel k(x: *f32, n: i32) {\n    if C { let t = 1.0; }\n    store(x, t);\n}\n", "unknown name 't'"},
        {"kernel k(x: *f32, n: i32) {\n    for i in range(0, n) { let t = 1.0; }\n    store(x, t);\n}\n", "unknown name 't'"},
    };
    expect_compile_errors(bad, sizeof bad / sizeof *bad);
}

/* A compile-time `if`'s taken branch that may return or jump keeps its names too, for the statements that follow
 * on the paths that go on (xformers' split-K attention: `if USE_SEQ_LEN: kv_len = tl.load(...)` then
 * `if SPLIT_K_EARLY_EXIT and kv_len == 0: return`, and kv_len read after the `if`): in a kernel, in a fn with a
 * value, and in a loop body with `continue`; names declared after the return are kept as well, and those of such a
 * branch inside it. */
static const char *outlive_return_src =
    "fn scaled(v, s, const USE) {\n"
    "    if USE {\n"
    "        let f = s * 2.0;\n"
    "        if f < 0.0 { return v * 0.0 - 1.0; }\n"
    "        let g = f + 1.0;\n"
    "    } else {\n"
    "        let f = 1.0;\n"
    "        let g = 3.0;\n"
    "    }\n"
    "    return v * f + g;\n"
    "}\n"
    "kernel k(x: *f32, lens: *i32, out: *f32, n: i32, const USE: i1 = false) {\n"
    "    let pid = program_id(0);\n"
    "    if USE {\n"
    "        let kv_len = load(lens + pid);\n"
    "        if USE && kv_len == 0 { return; }\n"
    "        if USE {\n"
    "            let half = kv_len / 2;\n"
    "            if half > 1000 { return; }\n"
    "        }\n"
    "    } else {\n"
    "        let kv_len = n;\n"
    "        let half = 1;\n"
    "    }\n"
    "    let acc = 0.0;\n"
    "    for i in range(0, 4) {\n"
    "        if USE {\n"
    "            let w = (i + 1) as f32;\n"
    "            if i == 2 { continue; }\n"
    "        } else {\n"
    "            let w = 0.5;\n"
    "        }\n"
    "        acc += w;\n"
    "    }\n"
    "    let offs = arange(0, 32);\n"
    "    let v = load(x + pid * 32 + offs, offs < kv_len, 0.0);\n"
    "    store(out + pid * 32 + offs, scaled(v, load(x + pid * 32), USE) + half as f32 + acc, offs < kv_len);\n"
    "}\n";

Test(lang_python, names_that_outlive_a_branch_that_returns) {
    enum { ROWS = 6, N = 32 };
    float x[ROWS * N], o[ROWS * N];
    int32_t lens[ROWS];
    for (int i = 0; i < ROWS * N; i++) x[i] = (float)irand(2000) / 8 - 100;
    for (int r = 0; r < ROWS; r++) lens[r] = r == 1 ? 0 : 1 + irand(N);
    x[2 * N] = -3, x[3 * N] = 5; /* a row whose fn returns early, one that does not */
    for (int use = 0; use < 2; use++) {
        char *src = strdup(outlive_return_src);
        if (use) memcpy(strstr(src, "= false"), "= true ", 7);
        K k;
        load_src(&k, src, "k");
        uint64_t dx = upload(&k, x, sizeof x), dl = upload(&k, lens, sizeof lens), d_o = poisoned(&k, sizeof o);
        int32_t n = 20;
        launch(&k, ROWS, (void *[]){&dx, &dl, &d_o, &n});
        download(&k, o, d_o, sizeof o);
        for (int r = 0; r < ROWS; r++)
            for (int c = 0; c < N; c++) {
                int len = use ? lens[r] : n;
                double s = x[r * N], v = x[r * N + c], want;
                if (use) want = (s * 2 < 0 ? -1 : v * (s * 2) + (s * 2 + 1)) + len / 2 + 7;
                else want = v + 3 + 1 + 2;
                if (c >= len) cr_assert(isnan(o[r * N + c]), "USE=%d out[%d][%d] = %g, want it unwritten", use, r, c, o[r * N + c]);
                else cr_assert_float_eq(o[r * N + c], want, 1e-4 * (1 + fabs(want)), "USE=%d out[%d][%d] = %g, want %g", use, r, c, o[r * N + c], want);
            }
        unload(&k);
        free(src);
    }
}

/* Python's `**` on compile-time numbers, which Triton's constexprs have (`2 ** k_bits` bins, bitonic sort's
 * `[n_outer * 2 ** i, 2, 2 ** (n_dims - i - 1)]` shapes): exact integers (an i64 past i32), floats for a
 * negative exponent or a float operand, right-associative, tighter than `*` and a unary minus on its left.
 * A run-time operand, 0 to a negative power, i64 overflow, f64 overflow and a negative base to a fractional
 * power are errors; `**f32` stays a pointer to pointers. */
static const char *power_src =
    "const BITS = 3;\n"
    "kernel k(out: *f32, outi: *i64, pp: **f32) {\n"
    "    let offs = arange(0, 2 ** (BITS + 1));\n"
    "    let sq = reshape(offs, [2 ** BITS, 2]);\n"
    "    let a = -2 ** 2;\n"
    "    let b = 2 ** -1;\n"
    "    let c = 2 ** 3 ** 2;\n"
    "    let m = 2 ** BITS * 3;\n"
    "    let f = 1.5 ** 2 + 4 ** 0.5;\n"
    "    let h = 2.0 ** BITS;\n"
    "    store(out + offs, reshape(sq, [16]) as f32 * b + (a + c + m) as f32 + f + h);\n"
    "    store(outi + arange(0, 2), (3 ** 39) + (arange(0, 2) as i64) * (2 ** 33 + 2 ** 0));\n"
    "}\n";

Test(lang_python, power_of_constants) {
    K k;
    load_src(&k, power_src, "k");
    float o[17];
    int64_t oi[2];
    uint64_t d_o = poisoned(&k, sizeof o), d_i = poisoned(&k, sizeof oi), none = 0;
    launch(&k, 1, (void *[]){&d_o, &d_i, &none});
    download(&k, o, d_o, sizeof o);
    download(&k, oi, d_i, sizeof oi);
    for (int i = 0; i < 16; i++) {
        float want = (float)i * 0.5f + (float)(-4 + 512 + 24) + 2.25f + 2.0f + 8.0f;
        cr_assert_eq(o[i], want, "out[%d] = %g, want %g", i, o[i], want);
    }
    cr_assert(isnan(o[16]), "out[16] written");
    cr_assert_eq(oi[0], 4052555153018976267LL, "3 ** 39 = %lld", (long long)oi[0]);
    cr_assert_eq(oi[1], 4052555153018976267LL + 8589934593LL, "%lld", (long long)oi[1]);
    unload(&k);
    const BadSource bad[] = {
        {"kernel k(x: *f32) {\n    let v = load(x + arange(0, 16));\n    store(x + arange(0, 16), v ** 2);\n}\n",
         "t.tile:3:32: error: '**' of a run-time value"},
        {"kernel k(x: *f32) {\n    store(x, 0 ** -1);\n}\n", "t.tile:2:16: error: '**': 0 to a negative power"},
        {"kernel k(x: *i64) {\n    store(x, 2 ** 63);\n}\n", "t.tile:2:16: error: '**': 2 ** 63 is past i64's range"},
        {"kernel k(x: *f32) {\n    store(x, (-8.0) ** 0.5);\n}\n", "error: '**': a negative number to a fractional power ((-8) ** 0.5)"},
        /* Python's OverflowError (it was infinity); 10.0 ** -400 underflows to 0.0 there, as here */
        {"kernel k(x: *f64) {\n    store(x, 10.0 ** -400 + 2.0 ** 1024);\n}\n", "t.tile:2:33: error: '**': 2 ** 1024 is past f64's range"},
        {"kernel k(x: *f64) {\n    store(x, (-10) ** 309.0);\n}\n", "error: '**': -10 ** 309 is past f64's range"},
    };
    expect_compile_errors(bad, sizeof bad / sizeof *bad);
}

/* Local compile-time constants, Triton's `x: tl.constexpr = e` in a body: `const x = e;` or `let x: constexpr = e;`.
 * Weak as a file-level const (Triton's constexpr): an i8 plus such a 100 wraps in i8 where a `let`'s typed 100
 * makes an i32, and `/` of two of them floors (-7 / 2 is -4) where a `let`'s truncates (-3); a shape and a
 * static_range bound computed from a fn's const parameters.  A run-time value is an error at it.  `const R: constexpr = e;`
 * (a parameter's spelling, `const N: constexpr`, on a local or file-level const) is the untyped const (it was "unknown
 * type 'constexpr' (... 'const constexpr = f16;')"). */
static const char *local_const_src =
    "const OFF: constexpr = 0;\n"
    "fn halves(v, const N_DIMS) {\n"
    "    const n_outer = numel(v) >> N_DIMS;\n"
    "    let shape: constexpr = [n_outer, 2 ** N_DIMS];\n"
    "    return sum(reshape(v, shape), 1);\n"
    "}\n"
    "kernel k(x: *i8, out: *i32, q: *i32) {\n"
    "    let offs = arange(0, 16);\n"
    "    let v = load(x + offs);\n"
    "    const C = 100;\n"
    "    let c = 100;\n"
    "    store(out + offs, (v + C) as i32);\n"
    "    store(out + 16 + offs, v + c);\n"
    "    let k: constexpr = -7;\n"
    "    let j = -7;\n"
    "    let acc = 0;\n"
    "    const R: constexpr = k / 2 + 5 + OFF;\n"
    "    for i in static_range(0, R) { acc += i; }\n"
    "    store(q + arange(0, 4), halves(offs, 2) + (k / 2) * 1000 + (j / 2) * 100 + acc);\n"
    "}\n";

Test(lang_python, local_compile_time_constants) {
    K k;
    load_src(&k, local_const_src, "k");
    int8_t x[16];
    int32_t o[32], q[4];
    for (int i = 0; i < 16; i++) x[i] = (int8_t)(irand(256) - 128);
    uint64_t dx = upload(&k, x, sizeof x), d_o = poisoned(&k, sizeof o), dq = poisoned(&k, sizeof q);
    launch(&k, 1, (void *[]){&dx, &d_o, &dq});
    download(&k, o, d_o, sizeof o);
    download(&k, q, dq, sizeof q);
    for (int i = 0; i < 16; i++) {
        cr_assert_eq(o[i], (int8_t)(x[i] + 100), "weak: out[%d] = %d, want %d", i, o[i], (int8_t)(x[i] + 100));
        cr_assert_eq(o[16 + i], x[i] + 100, "typed: out[%d] = %d, want %d", 16 + i, o[16 + i], x[i] + 100);
    }
    for (int r = 0; r < 4; r++) {
        int want = 4 * r * 4 + 6 - 4000 - 300 + 0; /* row r of [4, 4] of 0..15 sums to 16r + 6; static_range(0, 1) adds 0 */
        cr_assert_eq(q[r], want, "q[%d] = %d, want %d", r, q[r], want);
    }
    unload(&k);
    const BadSource bad[] = {
        {"kernel k(x: *f32, n: i32) {\n    const z = n + 1;\n    store(x, z as f32);\n}\n",
         "t.tile:2:15: error: 'z' is a compile-time constant, but its value is known only at run time"},
        {"kernel k(x: *f32) {\n    let z: constexpr = load(x);\n    store(x, z);\n}\n",
         "t.tile:2:24: error: 'z' is a compile-time constant, but its value is known only at run time"},
    };
    expect_compile_errors(bad, sizeof bad / sizeof *bad);
}

/* Triton's parameter annotations: `BLOCK: tl.constexpr` (written `BLOCK: constexpr`) is a const parameter, of a fn and of a
 * kernel (untyped, its value's kind: a default or a -D value), and `x: tl.tensor` a fn's untyped parameter (they were
 * "unknown type 'constexpr' (... 'const constexpr = f16;')").  A kernel's `x: tensor` still needs a type. */
static const char *param_annot_src =
    "fn scaled(x: tensor, SCALE: constexpr, const OFF) {\n"
    "    static_assert(SCALE == 3);\n"
    "    return x * SCALE + OFF;\n"
    "}\n"
    "kernel k(out: *i32, n: i32, BLOCK: constexpr = 16, K: constexpr = 2) {\n"
    "    let offs = arange(0, BLOCK);\n"
    "    store(out + offs, scaled(offs, 3, 1000) + K * n, mask=offs < n);\n"
    "}\n";

Test(lang_python, constexpr_and_tensor_parameter_annotations) {
    K k;
    load_src(&k, param_annot_src, "k");
    int32_t o[16];
    int n = 13;
    uint64_t d_o = poisoned(&k, sizeof o);
    launch(&k, 1, (void *[]){&d_o, &n});
    download(&k, o, d_o, sizeof o);
    for (int i = 0; i < 16; i++) {
        int want = i < n ? 3 * i + 1000 + 2 * n : -1;
        cr_assert_eq(o[i], want, "out[%d] = %d, want %d", i, o[i], want);
    }
    unload(&k);
    const BadSource bad[] = {
        {"kernel k(x: *f32, y: tensor) {\n    store(x, 1.0);\n}\n", "t.tile:1:19: error: kernel parameter 'y' needs a type"},
    };
    expect_compile_errors(bad, sizeof bad / sizeof *bad);
}

/* Python's tuples without parentheses, as Triton code writes them: `return x, y`, `let a, b = f(x);` (Triton's
 * `a, b = f(x)`), nested targets `let c, (d, e) = ...`, a swap `a, b = b, a`, a trailing comma for a tuple of
 * one (`return x,` and `let g, = ...`) and a tuple value `let t = c, d;`.  Each element is checked through
 * the sum it adds to: out = 3 x + 11 + 100 i (the swap gives a - b = x; i = 1 for the carried s).  Python's
 * throwaway `_` (`acc, l_i, _ = inner(...)`, `_ = f(x)`) keeps nothing, unless a `let` declared it (then it adds 1). */
static const char *bare_tuple_src =
    "fn pair(x) {\n"
    "    return x, x * 2.0;\n"
    "}\n"
    "fn one(x) {\n"
    "    return x,;\n"
    "}\n"
    "kernel k(x: *f32, out: *f32, n: i32) {\n"
    "    let offs = arange(0, 64);\n"
    "    let v = load(x + offs, offs < n, 0.0);\n"
    "    let a, b = pair(v);\n"
    "    let c, (d, e) = 1.0, (2.0, 3.0);\n"
    "    a, b = b, a;\n"
    "    let g, = one(v);\n"
    "    let t = c, d;\n"
    "    let (p, q) = t;\n"
    "    let s = 0.0;\n"
    "    for i in range(0, 3) { s, c = s + 1.0, c; }\n"
    "    _, c = 1000.0, c;\n"
    "    _ = one(v);\n"
    "    let _ = 0.0;\n"
    "    c, _ = c, 1000.0;\n"
    "    store(out + offs, a - b + c + d + e + g + p + q + 100.0 * (s - 2.0) + _ / 1000.0, offs < n);\n"
    "}\n";

Test(lang_python, tuples_without_parentheses) {
    enum { N = 50 };
    float x[64], o[64];
    for (int i = 0; i < 64; i++) x[i] = (float)irand(1000) / 16 - 30;
    K k;
    load_src(&k, bare_tuple_src, "k");
    uint64_t dx = upload(&k, x, sizeof x), d_o = poisoned(&k, sizeof o);
    int32_t n = N;
    launch(&k, 1, (void *[]){&dx, &d_o, &n});
    download(&k, o, d_o, sizeof o);
    for (int i = 0; i < 64; i++) {
        if (i >= N) {
            cr_assert(isnan(o[i]), "out[%d] written", i);
            continue;
        }
        float want = (2 * x[i] - x[i]) + 1 + 2 + 3 + x[i] + 1 + 2 + 100 + 1;
        cr_assert_eq(o[i], want, "out[%d] = %g, want %g", i, o[i], want);
    }
    unload(&k);
    /* `_` discards only where it names nothing (a `_` declared before is assigned, above): new names beside it are
     * still one error */
    const BadSource bad[] = {
        {"kernel k(x: *f32, n: i32) {\n    lo, _ = 0, n;\n    store(x, lo as f32);\n}\n",
         "t.tile:2:5: error: unknown names: new variables are declared with 'let lo, _ = ...'"},
    };
    expect_compile_errors(bad, sizeof bad / sizeof *bad);
}

/* Triton's tl.constexpr(x), 175 calls in the kernels of four engines (`if tl.constexpr(x.dtype == tl.uint32)`,
 * `_MIN_INT32 = tl.constexpr(...)` at file level): x itself, which must be known at compile time, weak as a
 * constexpr (`constexpr(-7) / 2` floors to -4; an i8 plus `constexpr(100)` stays an i8).  Of a run-time value
 * it is that value, as Triton's wraps a tensor unchanged (xformers' `tl.constexpr(diag_idx - NUM_QUERIES_CAUSAL +
 * kv_len)`), with a warning at the argument. */
static const char *constexpr_call_src =
    "const LIMIT = constexpr(-7);\n"
    "fn pick(v) {\n"
    "    if constexpr(dtype_of(v) == i8) { return v + constexpr(100); }\n"
    "    return v;\n"
    "}\n"
    "kernel k(x: *i8, out: *i8, q: *i32) {\n"
    "    let offs = arange(0, 16);\n"
    "    store(out + offs, pick(load(x + offs)));\n"
    "    store(q, LIMIT / 2 + constexpr((1, 2))[1] * 10 + sum(constexpr(offs * 2 + 1) >= 17));\n"
    "}\n";

Test(lang_python, constexpr_wrapper) {
    K k;
    load_src(&k, constexpr_call_src, "k");
    int8_t x[16], o[16];
    int32_t q;
    for (int i = 0; i < 16; i++) x[i] = (int8_t)(irand(256) - 128);
    uint64_t dx = upload(&k, x, sizeof x), d_o = poisoned(&k, sizeof o), dq = poisoned(&k, sizeof q);
    launch(&k, 1, (void *[]){&dx, &d_o, &dq});
    download(&k, o, d_o, sizeof o);
    download(&k, &q, dq, sizeof q);
    for (int i = 0; i < 16; i++) cr_assert_eq(o[i], (int8_t)(x[i] + 100), "out[%d] = %d, want %d", i, o[i], (int8_t)(x[i] + 100));
    cr_assert_eq(q, -4 + 20 + 8, "q = %d", q);
    unload(&k);
    tile_compiled c;
    tile_compile_options opts = {0};
    cr_assert_eq(tile_compile_source("t.tile", constexpr_call_src, &opts, &c), TILE_OK, "%s", c.diagnostics);
    cr_assert(strstr(c.diagnostics, "t.tile:9:68: warning: 'constexpr' of a value known only at run time is that value"), "%s",
              c.diagnostics);
    tile_compiled_free(&c);
}

/* Python's `is` / `is not` of types and other compile-time values, as FlagGems' argmax picks its accumulator
 * (`acc_type = tl.float32 if dtype is tl.bfloat16 else dtype`): == and != of them (it was "expected 'None' after
 * 'is'").  The bf16 row sums in f32 (exact: 1 + 2^-8 * 64 needs more than bf16's 8 bits), the f16 one in f16;
 * `is` of a run-time value is an error (Python's identity, no compare). */
static const char *is_types_src =
    "fn acc_sum(v, const ACT = \"none\") {\n"
    "    let acc_type = f32 if dtype_of(v) is bf16 else dtype_of(v);\n"
    "    static_assert(ACT is not \"relu\" && (acc_type is f32) == (dtype_of(v) is bf16));\n"
    "    return sum(v as acc_type) as f32;\n"
    "}\n"
    "kernel k(a: *bf16, b: *f16, out: *f32) {\n"
    "    let o = arange(0, 64);\n"
    "    store(out, acc_sum(load(a + o)));\n"
    "    store(out + 1, acc_sum(load(b + o)));\n"
    "}\n";

Test(lang_python, is_of_compile_time_values) {
    K k;
    load_src(&k, is_types_src, "k");
    uint16_t a[64], b[64];
    for (int i = 0; i < 64; i++) a[i] = i ? 0x3b80 : 0x3f80; /* bf16 1.0, then 2^-8 */
    for (int i = 0; i < 64; i++) b[i] = i ? 0x1c00 : 0x3c00; /* f16 1.0, then 2^-8 */
    float o[2];
    uint64_t da = upload(&k, a, sizeof a), db = upload(&k, b, sizeof b), d_o = poisoned(&k, sizeof o);
    launch(&k, 1, (void *[]){&da, &db, &d_o});
    download(&k, o, d_o, sizeof o);
    cr_assert_eq(o[0], 1.0f + 63.0f / 256, "bf16 row summed in f32: %.9g", o[0]);
    cr_assert(o[1] >= 1.0f && o[1] <= 1.25f, "f16 row summed in f16: %.9g", o[1]);
    unload(&k);
    const BadSource bad[] = {
        {"kernel k(x: *f32) {\n    let v = load(x);\n    if v is v { store(x, 1.0); }\n}\n",
         "t.tile:3:10: error: 'is' compares compile-time values"},
    };
    expect_compile_errors(bad, sizeof bad / sizeof *bad);
}

/* Python's len, which Triton evaluates at compile time: of a tuple (a static_range over a tuple of pointers, as
 * multi-tensor kernels loop over theirs), of a shape list (len(x.shape) is rank(x)) and of a string; it was an
 * unknown name.  Of a tensor it is an error naming shape_of(x, 0) and rank(x). */
static const char *len_src =
    "fn weighted(ps, o) {\n"
    "    let acc = zeros([64], f32);\n"
    "    for i in static_range(len(ps)) { acc += load(ps[i] + o) * (i + 1) as f32; }\n"
    "    return acc;\n"
    "}\n"
    "kernel k(a: *f32, b: *f32, c: *f32, out: *f32, const ACT = \"relu\") {\n"
    "    let o = arange(0, 64);\n"
    "    let ps = (a, b, c);\n"
    "    let v = reshape(weighted(ps, o), [8, 8]);\n"
    "    static_assert(len(shape_of(v)) == 2 && len(ps) == 3 && len(ACT) == 4 && len([]) == 0 && len(\"\xc3\xa9t\xc3\xa9\") == 3);\n"
    "    store(out + o, reshape(v, [len(ps) * 21 + 1]) + len((1,)) as f32);\n"
    "}\n";

Test(lang_python, python_len) {
    K k;
    load_src(&k, len_src, "k");
    seed_rng();
    float a[64], b[64], c[64], o[64];
    for (int i = 0; i < 64; i++) a[i] = (float)urand(), b[i] = (float)urand(), c[i] = (float)urand();
    uint64_t da = upload(&k, a, sizeof a), db = upload(&k, b, sizeof b), dc = upload(&k, c, sizeof c), d_o = poisoned(&k, sizeof o);
    launch(&k, 1, (void *[]){&da, &db, &dc, &d_o});
    download(&k, o, d_o, sizeof o);
    for (int i = 0; i < 64; i++) {
        double want = (double)a[i] + 2.0 * b[i] + 3.0 * c[i] + 1.0;
        cr_assert(fabs(o[i] - want) <= 1e-5, "out[%d] = %.9g, want %.9g (seed %llu)", i, o[i], want, (unsigned long long)seed);
    }
    unload(&k);
    const BadSource bad[] = {
        {"kernel k(x: *f32) {\n    let v = load(x + arange(0, 4));\n    store(x, len(v) as f32);\n}\n",
         "t.tile:3:18: error: 'len' expects a tuple or a list, got a tensor of shape [4]: the length of a tensor's first dimension is "
         "shape_of(x, 0), its number of dimensions rank(x)"},
    };
    expect_compile_errors(bad, sizeof bad / sizeof *bad);
}

/* Python's unary plus (Triton's tensor.__pos__): the value itself, of tensors and constants (a sign function's
 * `+1.0`); `+true` is Python's int 1.  It was "expected an expression, found '+'".  Of a pointer it is an error. */
static const char *unary_plus_src =
    "kernel k(x: *f32, out: *f32) {\n"
    "    let o = arange(0, 64);\n"
    "    let v = load(x + o);\n"
    "    let s = where(v > 0.0, +1.0, -1.0);\n"
    "    let one = +true;\n"
    "    static_assert(dtype_of(one) == i32 && one == 1);\n"
    "    store(out + o, s * +v + (+one) as f32 - -+2.0);\n"
    "}\n";

Test(lang_python, unary_plus) {
    K k;
    load_src(&k, unary_plus_src, "k");
    seed_rng();
    float x[64], o[64];
    for (int i = 0; i < 64; i++) x[i] = (float)urand();
    uint64_t dx = upload(&k, x, sizeof x), d_o = poisoned(&k, sizeof o);
    launch(&k, 1, (void *[]){&dx, &d_o});
    download(&k, o, d_o, sizeof o);
    for (int i = 0; i < 64; i++) {
        float want = (fabsf(x[i]) + 1.0f) + 2.0f;
        cr_assert_eq(o[i], want, "out[%d] = %.9g, want %.9g", i, o[i], want);
    }
    unload(&k);
    const BadSource bad[] = {
        {"kernel k(x: *f32) {\n    store(x, load(+x));\n}\n", "t.tile:2:19: error: operand of unary '+' must be a number, got 'ptr<f32>'"},
    };
    expect_compile_errors(bad, sizeof bad / sizeof *bad);
}

/* Python's int() and float() of compile-time numbers, which Triton evaluates at compile time (int(BLOCK * 0.75) as a
 * size); they were unknown names ("a type is named by its width here").  int truncates toward zero and gives an i32
 * where the value fits (i64 beyond), float a weak float; of a run-time value, NaN or an infinity they are errors. */
static const char *int_float_src =
    "kernel k(x: *f32, out: *f32, big: *i64, const B: i32 = 64) {\n"
    "    const H = int(B * 0.75);\n"
    "    static_assert(H == 48 && dtype_of(int(-2.7)) == i32 && int(-2.7) == -2 && int(true) == 1 && dtype_of(int(3e10)) == i64);\n"
    "    let o = arange(0, H / 3);\n"
    "    store(out + o, load(x + o) * float(B) + float(int(7.9)) / 2);\n"
    "    store(big, int(3e10) + int(-1e10));\n"
    "}\n";

Test(lang_python, python_int_and_float) {
    K k;
    load_src(&k, int_float_src, "k");
    seed_rng();
    float x[16], o[16];
    int64_t big;
    for (int i = 0; i < 16; i++) x[i] = (float)urand();
    uint64_t dx = upload(&k, x, sizeof x), d_o = poisoned(&k, sizeof o), db = poisoned(&k, sizeof big);
    launch(&k, 1, (void *[]){&dx, &d_o, &db});
    download(&k, o, d_o, sizeof o);
    download(&k, &big, db, sizeof big);
    for (int i = 0; i < 16; i++) cr_assert_eq(o[i], x[i] * 64.0f + 3.5f, "out[%d] = %.9g, want %.9g", i, o[i], x[i] * 64.0f + 3.5f);
    cr_assert_eq(big, 20000000000LL, "big = %lld", (long long)big);
    unload(&k);
    const BadSource bad[] = {
        {"kernel k(x: *f32) {\n    store(x, int(load(x)) as f32);\n}\n",
         "t.tile:2:18: error: 'int' of a value known only at run time: Python's int() and float() convert compile-time numbers, as in "
         "Triton; convert a run-time value with 'x as i32'"},
        {"kernel k(x: *f32) {\n    store(x, int(0.0 / 0.0) as f32);\n}\n", "t.tile:2:18: error: 'int' of nan: not an integer that fits in i64"},
        {"kernel k(x: *f32) {\n    store(x, float(f16));\n}\n", "t.tile:2:20: error: 'float' of a type: Python's int() and float()"},
    };
    expect_compile_errors(bad, sizeof bad / sizeof *bad);
}

/* Triton's `BM, BN = acc.shape`: a shape list unpacks into names as a tuple does, each size a compile-time i32 (a
 * shape of a tile made from them); it was "cannot unpack 'list' into 2 names: it is not a tuple". */
static const char *unpack_shape_src =
    "fn transpose_tile(acc) {\n"
    "    let BM, BN = shape_of(acc);\n"
    "    let (r, (c, d)) = (arange(0, BN), (BM, BN));\n"
    "    static_assert(BM == 4 && BN == 8 && dtype_of(BM) == i32);\n"
    "    return trans(acc) + zeros([BN, BM], f32) + (r[:, None] * 0 + c * d - 32) as f32;\n"
    "}\n"
    "kernel k(x: *f32, out: *f32) {\n"
    "    let o = arange(0, 4)[:, None] * 8 + arange(0, 8)[None, :];\n"
    "    let t = transpose_tile(load(x + o));\n"
    "    store(out + arange(0, 8)[:, None] * 4 + arange(0, 4)[None, :], t);\n"
    "}\n";

Test(lang_python, unpack_a_shape) {
    K k;
    load_src(&k, unpack_shape_src, "k");
    seed_rng();
    float x[32], o[32];
    for (int i = 0; i < 32; i++) x[i] = (float)urand();
    uint64_t dx = upload(&k, x, sizeof x), d_o = poisoned(&k, sizeof o);
    launch(&k, 1, (void *[]){&dx, &d_o});
    download(&k, o, d_o, sizeof o);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++) cr_assert_eq(o[i * 4 + j], x[j * 8 + i], "out[%d][%d] (seed %llu)", i, j, (unsigned long long)seed);
    unload(&k);
    const BadSource bad[] = {
        {"kernel k(x: *f32) {\n    let (a, b, c) = shape_of(zeros([4, 8], f32));\n}\n",
         "t.tile:2:9: error: cannot unpack a tuple of 2 values into 3 names"},
    };
    expect_compile_errors(bad, sizeof bad / sizeof *bad);
}

/* Triton's `tl.static_assert(a.shape == b.shape)` and `acc.shape == (BM, BN)`: shapes compare with == and != element by
 * element into a compile-time i1 (a list and a tuple of the same sizes are equal), so an `if` on one picks code at
 * compile time; they were "a list cannot be used as a value". */
static const char *shape_compare_src =
    "fn row_or_col_sum(v, const BM: i32) {\n"
    "    static_assert(shape_of(v) == shape_of(v * 2.0) && shape_of(v) != [BM] && (1, 2) != (2, 1));\n"
    "    let r = zeros([BM], f32);\n"
    "    if shape_of(v) == (BM, 2 * BM) { r = sum(v, 1); } else { r = sum(v, 0); }\n"
    "    return r;\n"
    "}\n"
    "kernel k(x: *f32, out: *f32) {\n"
    "    let o = arange(0, 8)[:, None] * 16 + arange(0, 16)[None, :];\n"
    "    let v = load(x + o);\n"
    "    store(out + arange(0, 8), row_or_col_sum(v, 8));\n"
    "    store(out + 8 + arange(0, 8), row_or_col_sum(reshape(v, [16, 8]), 8));\n"
    "}\n";

Test(lang_python, compare_shapes) {
    K k;
    load_src(&k, shape_compare_src, "k");
    seed_rng();
    float x[128], o[16];
    for (int i = 0; i < 128; i++) x[i] = (float)(irand(17) - 8); /* sums of small integers are exact in any order */
    uint64_t dx = upload(&k, x, sizeof x), d_o = poisoned(&k, sizeof o);
    launch(&k, 1, (void *[]){&dx, &d_o});
    download(&k, o, d_o, sizeof o);
    for (int i = 0; i < 8; i++) {
        float rs = 0, cs = 0; /* row i of the [8, 16] tile (the if's branch); column i of reshape(v, [16, 8]) (its else) */
        for (int j = 0; j < 16; j++) rs += x[i * 16 + j], cs += x[j * 8 + i];
        cr_assert_eq(o[i], rs, "row %d: %g, want %g (seed %llu)", i, o[i], rs, (unsigned long long)seed);
        cr_assert_eq(o[8 + i], cs, "column %d: %g, want %g (seed %llu)", i, o[8 + i], cs, (unsigned long long)seed);
    }
    unload(&k);
    const BadSource bad[] = {
        {"kernel k(x: *f32) {\n    static_assert(shape_of(zeros([4, 8], f32)) == 4);\n}\n",
         "t.tile:2:48: error: shapes (lists and tuples of compile-time integers) only compare with == and != to shapes (here 'list' == 'i32')"},
        {"kernel k(x: *f32) {\n    static_assert(shape_of(zeros([4, 8], f32)) == [4, 9], \"mismatch\");\n}\n",
         "t.tile:2:5: error: static_assert failed: mismatch"},
    };
    expect_compile_errors(bad, sizeof bad / sizeof *bad);
}

/* Triton's tuple element assignment (`values[i] = values[i] + 1` in a static_range over len(values), as its own
 * tests write): `t[i] = v;` and `t[i] op= v;` make the variable hold the tuple with element i replaced, carried by a
 * loop like any tuple; it was a parse error.  A tensor's element, a run-time index and one past the end are errors. */
static const char *tuple_element_src =
    "fn incr(values) {\n"
    "    for i in static_range(len(values)) { values[i] = values[i] + 1; }\n"
    "    return values;\n"
    "}\n"
    "kernel k(a: *f32, b: *f32, out: *f32, n: i32) {\n"
    "    let o = arange(0, 64);\n"
    "    let t = (load(a + o), load(b + o), 2.0);\n"
    "    t = incr(t);\n"
    "    t[-1] *= 3.0;\n"
    "    for k in range(0, n) { t[0] += 1.0; }\n"
    "    store(out + o, t[0] + t[1] * t[2]);\n"
    "}\n";

Test(lang_python, tuple_element_assignment) {
    K k;
    load_src(&k, tuple_element_src, "k");
    seed_rng();
    float a[64], b[64], o[64];
    for (int i = 0; i < 64; i++) a[i] = (float)(irand(64) - 32), b[i] = (float)(irand(64) - 32); /* exact sums and products */
    int32_t n = 5;
    uint64_t da = upload(&k, a, sizeof a), db = upload(&k, b, sizeof b), d_o = poisoned(&k, sizeof o);
    launch(&k, 1, (void *[]){&da, &db, &d_o, &n});
    download(&k, o, d_o, sizeof o);
    for (int i = 0; i < 64; i++) {
        float want = (a[i] + 1 + 5) + (b[i] + 1) * 9;
        cr_assert_eq(o[i], want, "out[%d] = %g, want %g (seed %llu)", i, o[i], want, (unsigned long long)seed);
    }
    unload(&k);
    const BadSource bad[] = {
        {"kernel k(x: *f32) {\n    let v = load(x + arange(0, 4));\n    v[0] = 1.0;\n}\n",
         "t.tile:3:10: error: cannot assign to an element of 'v', a 'tensor<4xf32>': tensors are values here"},
        {"kernel k(x: *f32, n: i32) {\n    let t = (1.0, 2.0);\n    t[n] = 1.0;\n}\n", "t.tile:3:7: error: a tuple's index must be a compile-time integer"},
        {"kernel k(x: *f32) {\n    let t = (1.0, 2.0);\n    t[2] = 1.0;\n}\n", "t.tile:3:7: error: index 2 is out of range for a tuple of 2 values"},
    };
    expect_compile_errors(bad, sizeof bad / sizeof *bad);
}

/* Reductions along several axes at once, as Triton's tl.sum(x, axis=(0, 1)): sum, max and min (positional axes too),
 * negative axes, keep_dims, reduce() with a function and xor_sum, on a [2, 8, 16] tile holding a 2 x 7 x 13 block (masked),
 * against float64 sums of small integers (exact in any order). */
static const char *multi_axis_src =
    "fn add(a, b) { return a + b; }\n"
    "kernel k(x: *f32, out: *f32, d1: i32, d2: i32) {\n"
    "    let i = arange(0, 2)[:, None, None];\n"
    "    let j = arange(0, 8)[None, :, None];\n"
    "    let l = arange(0, 16)[None, None, :];\n"
    "    let m = (j < d1) & (l < d2) & (i < 2);\n"
    "    let off = i * (d1 * d2) + j * d2 + l;\n"
    "    let v = load(x + off, mask=m, other=0.0);\n"
    "    let s01 = sum(v, axis=(0, 1));\n"
    "    let m02 = max(load(x + off, mask=m, other=-1e30), axis=(2, 0));\n"
    "    let s20 = sum(v, axis=(-1, 0), keep_dims=true);\n"
    "    static_assert(shape_of(s20) == [1, 8, 1]);\n"
    "    let n21 = min(load(x + off, mask=m, other=1e30), (2, 1));\n"
    "    let r12 = reduce(v, [1, 2], add);\n"
    "    let s012 = sum(v, axis=(0, 1, 2));\n"
    "    let c = arange(0, 16);\n"
    "    store(out + c, s01, mask=c < d2);\n"
    "    let r = arange(0, 8);\n"
    "    store(out + 16 + r, m02, mask=r < d1);\n"
    "    store(out + 24 + r, reshape(s20, [8]), mask=r < d1);\n"
    "    let q = arange(0, 2);\n"
    "    store(out + 32 + q, n21);\n"
    "    store(out + 34 + q, r12);\n"
    "    store(out + 36, s012);\n"
    "    store(out + 37 + r, reshape(cast(xor_sum(cast(v, i32), axis=(0, 2), keep_dims=true), f32), [8]), mask=r < d1);\n"
    "}\n";

Test(lang_python, reduce_several_axes) {
    K k;
    load_src(&k, multi_axis_src, "k");
    seed_rng();
    enum { D0 = 2, D1 = 7, D2 = 13 };
    float x[D0 * D1 * D2], o[45];
    for (int i = 0; i < D0 * D1 * D2; i++) x[i] = (float)(irand(64) - 32);
    int32_t d1 = D1, d2 = D2;
    uint64_t dx = upload(&k, x, sizeof x), d_o = poisoned(&k, sizeof o);
    launch(&k, 1, (void *[]){&dx, &d_o, &d1, &d2});
    download(&k, o, d_o, sizeof o);
#define X(a, b, c) ((double)x[((a) * D1 + (b)) * D2 + (c)])
    double all = 0;
    for (int c = 0; c < D2; c++) {
        double s = 0;
        for (int a = 0; a < D0; a++)
            for (int b = 0; b < D1; b++) s += X(a, b, c);
        all += s;
        cr_assert_eq((double)o[c], s, "sum over (0, 1) [%d] = %g, want %g (seed %llu)", c, o[c], s, (unsigned long long)seed);
    }
    for (int b = 0; b < D1; b++) {
        double mx = -INFINITY, s = 0;
        for (int a = 0; a < D0; a++)
            for (int c = 0; c < D2; c++) mx = fmax(mx, X(a, b, c)), s += X(a, b, c);
        cr_assert_eq((double)o[16 + b], mx, "max over (2, 0) [%d] = %g, want %g (seed %llu)", b, o[16 + b], mx, (unsigned long long)seed);
        cr_assert_eq((double)o[24 + b], s, "sum over (-1, 0) [%d] = %g, want %g (seed %llu)", b, o[24 + b], s, (unsigned long long)seed);
        int32_t xr = 0;
        for (int a = 0; a < D0; a++)
            for (int c = 0; c < D2; c++) xr ^= (int32_t)X(a, b, c);
        cr_assert_eq(o[37 + b], (float)xr, "xor_sum over (0, 2) [%d] = %g, want %d (seed %llu)", b, o[37 + b], xr, (unsigned long long)seed);
    }
    for (int a = 0; a < D0; a++) {
        double mn = INFINITY, s = 0;
        for (int b = 0; b < D1; b++)
            for (int c = 0; c < D2; c++) mn = fmin(mn, X(a, b, c)), s += X(a, b, c);
        cr_assert_eq((double)o[32 + a], mn, "min over (2, 1) [%d] = %g, want %g (seed %llu)", a, o[32 + a], mn, (unsigned long long)seed);
        cr_assert_eq((double)o[34 + a], s, "reduce over [1, 2] [%d] = %g, want %g (seed %llu)", a, o[34 + a], s, (unsigned long long)seed);
    }
#undef X
    cr_assert_eq((double)o[36], all, "sum over (0, 1, 2) = %g, want %g (seed %llu)", o[36], all, (unsigned long long)seed);
    unload(&k);
}

/* Python's tuple arithmetic at compile time: `a + b` concatenates (a list and a tuple into a tuple: x.shape + (1,)),
 * `t * n` and `n * t` repeat, `+=` appends; elements keep their kinds (tensors, floats, ints). */
static const char *tuple_arith_src =
    "kernel k(a: *f32, out: *f32, n: i32) {\n"
    "    let o = arange(0, 64);\n"
    "    let x = load(a + o, mask=o < n, other=0.0);\n"
    "    let t = (x, 2.0) + (x * x,);\n"
    "    let u = (1.5,) * 3;\n"
    "    let w = 2 * (x, 3);\n"
    "    u += (4.0, 5);\n"
    "    static_assert(len(t) == 3);\n"
    "    static_assert(len(u) == 5);\n"
    "    static_assert(len(w) == 4);\n"
    "    static_assert(len((1, 2) * 0) == 0);\n"
    "    static_assert(shape_of(zeros([4] * 2, f32)) == [4, 4]);\n"
    "    let s = shape_of(x) + (1,);\n"
    "    let y = t[0] + t[1] * t[2] + u[2] + u[3] * u[4] + w[2] * w[3];\n"
    "    store(out + o[:, None], reshape(y, s), mask=(o < n)[:, None]);\n"
    "}\n";

Test(lang_python, tuple_concatenation_and_repetition) {
    K k;
    load_src(&k, tuple_arith_src, "k");
    seed_rng();
    float a[61], o[64];
    for (int i = 0; i < 61; i++) a[i] = (float)(irand(64) - 32);
    int32_t n = 61;
    uint64_t da = upload(&k, a, sizeof a), d_o = poisoned(&k, sizeof o);
    launch(&k, 1, (void *[]){&da, &d_o, &n});
    download(&k, o, d_o, sizeof o);
    for (int i = 0; i < 61; i++) {
        double x = a[i], want = x + 2.0 * x * x + 1.5 + 4.0 * 5 + x * 3;
        cr_assert_eq((double)o[i], want, "out[%d] = %g, want %g (seed %llu)", i, o[i], want, (unsigned long long)seed);
    }
    for (int i = 61; i < 64; i++) cr_assert(isnan(o[i]), "out[%d] = %g was written past n", i, o[i]);
    unload(&k);
}

/* for v in a tuple, a list or a list literal: unrolled at compile time as static_range, v each element (a tensor, a
 * float, an int, a type in turn); assignments carry from one copy to the next, and the loop runs over the tuple as it
 * was when the loop began (Python's), though the body reassigns its variable. */
static const char *for_tuple_src =
    "kernel k(a: *f32, out: *f32, n: i32) {\n"
    "    let o = arange(0, 64);\n"
    "    let m = o < n;\n"
    "    let x = load(a + o, mask=m, other=0.0);\n"
    "    let acc = zeros([64], f32);\n"
    "    for v in (x, 2.0, 3) { acc = acc + v; }\n"
    "    for s in [1, 2, 4] { acc = acc + x * s; }\n"
    "    for d in [f16, f32] { acc = acc + cast(x, d); }\n"
    "    let p = 0;\n"
    "    for q in shape_of(zeros([4, 8], f32)) { p = p + q; }\n"
    "    let pair = (x, 10);\n"
    "    for v in pair * 2 { acc = acc + v; }\n"
    "    let tt = (1, 2);\n"
    "    for v in tt { tt = tt + (v * 10,); }\n"
    "    static_assert(len(tt) == 4);\n"
    "    store(out + o, acc + p + tt[3], mask=m);\n"
    "}\n";

Test(lang_python, for_over_tuple) {
    K k;
    load_src(&k, for_tuple_src, "k");
    seed_rng();
    float a[53], o[64];
    for (int i = 0; i < 53; i++) a[i] = (float)(irand(64) - 32);
    int32_t n = 53;
    uint64_t da = upload(&k, a, sizeof a), d_o = poisoned(&k, sizeof o);
    launch(&k, 1, (void *[]){&da, &d_o, &n});
    download(&k, o, d_o, sizeof o);
    for (int i = 0; i < 53; i++) {
        double x = a[i], want = x + 2 + 3 + 7 * x + 2 * x + 12 + 2 * (x + 10) + 20;
        cr_assert_eq((double)o[i], want, "out[%d] = %g, want %g (seed %llu)", i, o[i], want, (unsigned long long)seed);
    }
    for (int i = 53; i < 64; i++) cr_assert(isnan(o[i]), "out[%d] = %g was written past n", i, o[i]);
    unload(&k);
}

/* for (a, b) in pairs and Python's for a, b in pairs: each element unpacked into the names, as a `let` of them would
 * (nested targets too), over Python's zip and enumerate of tuples and lists as well; and a tuple that the program builds with the elements of a tensor descriptor (a list, a
 * pointer, a size and a stride: here by assigning its element) is a tuple: it unpacks, indexes and loops as one, and
 * is no descriptor (records were once known by their shape, and such a tuple loaded as one). */
static const char *for_unpack_src =
    "kernel k(a: *f32, out: *f32, n: i32) {\n"
    "    let o = arange(0, 64);\n"
    "    let m = o < n;\n"
    "    let x = load(a + o, mask=m, other=0.0);\n"
    "    let acc = zeros([64], f32);\n"
    "    let pairs = ((x, 2.0), (x * x, 3));\n"
    "    for (v, s) in pairs { acc = acc + v * s; }\n"
    "    for w, s in [(1.0, 10), (2.0, 100)] { acc = acc + w * s; }\n"
    "    for (i, (p, q)) in ((0, (x, 1.0)), (1, (x, -1.0))) {\n"
    "        if i == 1 { acc = acc + p * q * 5.0; }\n"
    "    }\n"
    "    for i, (p, q) in ((7, (1, 2)),) { acc = acc + i * p * q; }\n"
    "    for (p, s) in zip((a, a), [2, 3]) { acc = acc + load(p + o, mask=m, other=0.0) * s; }\n"
    "    for i, (w, s) in enumerate(zip((0.5, 0.25), [4, 8, 16]), 1) { acc = acc + w * s * i; }\n"
    "    static_assert(len(zip((1, 2, 3), [4, 5])) == 2 && len(enumerate([])) == 0 && zip([1], [2])[0][1] == 2);\n"
    "    let rec = (0, a, n) + (1,);\n"
    "    rec[0] = [64];\n"
    "    let (bs, base, nn, st) = rec;\n"
    "    static_assert(bs == [64] && len(rec) == 4);\n"
    "    let cnt = 0;\n"
    "    for e in rec { cnt += 1; }\n"
    "    store(out + o, acc + (nn + rec[3] + st + cnt) + load(base + o, mask=m, other=0.0), mask=m);\n"
    "}\n";

Test(lang_python, for_unpacking_and_tuples_like_records) {
    K k;
    load_src(&k, for_unpack_src, "k");
    seed_rng();
    float a[45], o[64];
    for (int i = 0; i < 45; i++) a[i] = (float)(irand(64) - 32);
    int32_t n = 45;
    uint64_t da = upload(&k, a, sizeof a), d_o = poisoned(&k, sizeof o);
    launch(&k, 1, (void *[]){&da, &d_o, &n});
    download(&k, o, d_o, sizeof o);
    for (int i = 0; i < 45; i++) {
        double x = a[i], want = 2 * x + 3 * x * x + 210 - 5 * x + 14 + 5 * x + 6 + (45 + 1 + 1 + 4) + x;
        cr_assert_eq((double)o[i], want, "out[%d] = %g, want %g (seed %llu)", i, o[i], want, (unsigned long long)seed);
    }
    for (int i = 45; i < 64; i++) cr_assert(isnan(o[i]), "out[%d] = %g was written past n", i, o[i]);
    unload(&k);
    BadSource bad[] = {
        {"kernel k(p: *f32) { for (i, j) in range(4) { } }", "t.tile:1:25: error: 'range' gives one integer per iteration: "
         "unpacking '(i, j)' is for a loop over a tuple or a list"},
        {"kernel k(p: *f32) { for i, j in static_range(4) { } }", "'static_range' gives one integer per iteration: unpacking 'i, j'"},
        {"kernel k(p: *f32) { for (a, b) in ((1, 2), 3) { } }", "t.tile:1:25: error:"},
        {"kernel k(p: *f32) { for (a, b) in ((1, 2, 3),) { } }", "t.tile:1:25: error:"},
        {"kernel k(p: *f32) { for (x, y) in zip(p, (1,)) { } }", "t.tile:1:39: error: 'zip' expects a tuple or a list, got a ptr<f32>"},
        {"kernel k(p: *f32, n: i32) { for (i, x) in enumerate(n) { } }",
         "'enumerate' expects a tuple or a list, got an i32 (a loop over a run-time count is 'for i in range(n)')"},
        {"kernel k(p: *f32, n: i32) { let e = enumerate((1,), n); }", "t.tile:1:53: error: the start of 'enumerate' must be a compile-time integer"},
        {"kernel k(p: *f32, n: i32) { let d = (0, p, n, 1); d[0] = [16]; let t = load_tensor_descriptor(d, [0]); }",
         "t.tile:1:95: error: 'load_tensor_descriptor' expects a tensor descriptor (from make_tensor_descriptor), got 'tuple of 4 values'"},
        {"kernel k(p: *f32, n: i32) { let d = (0, p, n, 1, 0); d[0] = [16]; let t = load(d, boundary_check=(0,)); }", "t.tile:1:98: error: 'boundary_check' of 'load' applies to block pointers"},
    };
    expect_compile_errors(bad, sizeof bad / sizeof *bad);
}

/* Python's parenthesized name is the name, not a tuple: `for (v) in t`, `for ((i)) in range(..)`, `for (c, (d)) in ..`,
 * `let (e) = ..`, `(e) *= ..`, `let f, (g) = ..` (each was "a tuple of names needs at least two" or "cannot assign to
 * this expression"); and a list in a tuple, assigned (`t[0] = [2, 32]`) or written (`([4], y)`), is Triton's tuple of
 * its sizes, a shape still. */
static const char *paren_names_src =
    "kernel k(a: *f32, out: *f32, n: i32) {\n"
    "    let o = arange(0, 64);\n"
    "    let m = o < n;\n"
    "    let x = load(a + o, mask=m, other=0.0);\n"
    "    let acc = zeros([64], f32);\n"
    "    for (v) in (x, x * x, 1.0) { acc += v; }\n"
    "    for ((i)) in range(0, 3) { acc += i * x; }\n"
    "    for (c, (d)) in ((x, 2.0), (x * x, 3.0)) { acc += c * d; }\n"
    "    for (j) in static_range(2) { acc += (j + 1) * 10.0; }\n"
    "    let (e) = x;\n"
    "    (e) *= 2.0;\n"
    "    let f, (g) = e, 4.0;\n"
    "    ((g)) += 1.0;\n"
    "    let t = (1, x);\n"
    "    t[0] = [2, 32];\n"
    "    let z = zeros(t[0], f32) + 1.0;\n"
    "    static_assert(shape_of(z) == [2, 32] && t[0] == (2, 32) && len(t[0]) == 2);\n"
    "    let r = ([4], t[1]);\n"
    "    static_assert(r[0] == [4]);\n"
    "    acc += f * g + t[0][1] + r[0][0] * r[1] + sum(sum(z, 1), 0);\n"
    "    store(out + o, acc, mask=m);\n"
    "}\n";

Test(lang_python, parenthesized_names_and_lists_in_tuples) {
    K k;
    load_src(&k, paren_names_src, "k");
    seed_rng();
    float a[45], o[64];
    for (int i = 0; i < 45; i++) a[i] = (float)(irand(64) - 32); /* exact sums and products */
    int32_t n = 45;
    uint64_t da = upload(&k, a, sizeof a), d_o = poisoned(&k, sizeof o);
    launch(&k, 1, (void *[]){&da, &d_o, &n});
    download(&k, o, d_o, sizeof o);
    for (int i = 0; i < 45; i++) {
        double x = a[i];
        double want = (x + x * x + 1) + 3 * x + (2 * x + 3 * x * x) + 30 + (2 * x) * 5 + 32 + 4 * x + 64;
        cr_assert_eq((double)o[i], want, "out[%d] = %g, want %g (seed %llu)", i, o[i], want, (unsigned long long)seed);
    }
    for (int i = 45; i < 64; i++) cr_assert(isnan(o[i]), "out[%d] = %g was written past n", i, o[i]);
    unload(&k);
}

/* Python's targets without outer parentheses led by a parenthesized one: `(a), b = ..` is `a, b = ..` and `(a, b), c
 * = ..` unpacks the first element (each was "cannot assign to this expression"), after `let` and `for` too. */
static const char *paren_first_target_src =
    "kernel k(a: *f32, out: *f32, n: i32) {\n"
    "    let o = arange(0, 64);\n"
    "    let m = o < n;\n"
    "    let x = load(a + o, mask=m, other=0.0);\n"
    "    let s = x;\n"
    "    let t = x;\n"
    "    (s), t = x * 2.0, x + 1.0;\n"
    "    let (u, v), w = (s, t), 3.0;\n"
    "    let ((p)), q, = u * v, w;\n"
    "    let acc = p + q;\n"
    "    for (e), f in ((x, 5.0), (t, 7.0)) { acc += e * f; }\n"
    "    for (g, h), r in (((1.0, 2.0), x), ((3.0, 4.0), s)) { acc += g * h * r; }\n"
    "    store(out + o, acc, mask=m);\n"
    "}\n";

Test(lang_python, parenthesized_first_target) {
    K k;
    load_src(&k, paren_first_target_src, "k");
    seed_rng();
    float a[45], o[64];
    for (int i = 0; i < 45; i++) a[i] = (float)(irand(64) - 32); /* exact sums and products */
    int32_t n = 45;
    uint64_t da = upload(&k, a, sizeof a), d_o = poisoned(&k, sizeof o);
    launch(&k, 1, (void *[]){&da, &d_o, &n});
    download(&k, o, d_o, sizeof o);
    for (int i = 0; i < 45; i++) {
        double x = a[i], s = 2 * x, t = x + 1;
        double want = s * t + 3 + 5 * x + 7 * t + 2 * x + 12 * s;
        cr_assert_eq((double)o[i], want, "out[%d] = %g, want %g (seed %llu)", i, o[i], want, (unsigned long long)seed);
    }
    for (int i = 45; i < 64; i++) cr_assert(isnan(o[i]), "out[%d] = %g was written past n", i, o[i]);
    unload(&k);
}

/* next_power_of_2 (triton.next_power_of_2) on compile-time integers: a block size from a size, in a kernel. */
static const char *next_pow2_src =
    "kernel k(a: *f32, out: *f32, const N: i32 = 37) {\n"
    "    const B = next_power_of_2(N);\n"
    "    static_assert(B == 64);\n"
    "    static_assert(next_power_of_2(0) == 0);\n"
    "    static_assert(next_power_of_2(1) == 1);\n"
    "    static_assert(next_power_of_2(64) == 64);\n"
    "    static_assert(next_power_of_2(65) == 128);\n"
    "    static_assert(next_power_of_2(2 ** 40 + 1) == 2 ** 41);\n"
    "    static_assert(dtype_of(next_power_of_2(1 << 30)) == i32);\n"
    "    static_assert(dtype_of(next_power_of_2((1 << 30) + 1)) == i64);\n"
    "    let o = arange(0, B);\n"
    "    store(out + o, load(a + o, mask=o < N, other=0.0) * 2.0, mask=o < N);\n"
    "}\n";

Test(lang_python, next_power_of_2) {
    K k;
    load_src(&k, next_pow2_src, "k");
    seed_rng();
    float a[37], o[64];
    for (int i = 0; i < 37; i++) a[i] = (float)(irand(64) - 32);
    uint64_t da = upload(&k, a, sizeof a), d_o = poisoned(&k, sizeof o);
    launch(&k, 1, (void *[]){&da, &d_o});
    download(&k, o, d_o, sizeof o);
    for (int i = 0; i < 37; i++) cr_assert_eq((double)o[i], 2.0 * a[i], "out[%d] = %g, want %g (seed %llu)", i, o[i], 2.0 * a[i], (unsigned long long)seed);
    for (int i = 37; i < 64; i++) cr_assert(isnan(o[i]), "out[%d] = %g was written past N", i, o[i]);
    unload(&k);
}

/* Python's `*args` in a call, as triton_kernels' matmul_ogs calls its fused activation, ACTIVATION_FN(acc,
 * *activation_fn_args): a tuple's elements (here a run-time and a compile-time one), a list's sizes and a file-level
 * const tuple's elements become
 * positional arguments, before a keyword, through a fn passed as a function too; `*T` of a type stays a pointer type
 * (cast(out, *T, bitcast=true)); None for a string parameter is Triton's default (matmul_ogs passes its weights'
 * cache_modifier=W_CACHE_MODIFIER, None unless a block asks ".cg"; atomics' sem=None and scope=None).  n = 45 of a
 * 64-wide block, random inputs, the output poisoned first; exact against the same f32 steps. */
Test(lang_python, star_args_and_none_strings) {
    const char *src = "const SHIFT = (3.0, 4.0);\n"
                      "fn affine(x, a, b, const SQUARE = false) {\n"
                      "    let y = x * a + b;\n"
                      "    if SQUARE { return y * y; }\n"
                      "    return y;\n"
                      "}\n"
                      "fn apply(const f, x, args) { return f(x, *args); }\n"
                      "kernel k(x: *f32, out: *i32, cnt: *i32, a: f32, n: i32, const T = f32, const CM = None) {\n"
                      "    let offs = arange(0, 64);\n"
                      "    let m = offs < n;\n"
                      "    let v = load(x + offs, m, 0.0, cache_modifier=CM, eviction_policy=None);\n"
                      "    let args = (a, 2.0);\n"
                      "    let lst = [3, 4];\n"
                      "    let r = affine(v, *args) - apply(affine, v, args) * 0.5 + affine(v, *lst, SQUARE=true) + affine(v, *SHIFT);\n"
                      "    store(cast(out, *T, bitcast=true) + offs, r, m, cache_modifier=CM);\n"
                      "    atomic_add(cnt, 1, sem=None, scope=None);\n"
                      "}\n";
    K k;
    load_src(&k, src, "k");
    seed_rng();
    enum { B = 64 };
    int32_t n = 45, cnt = 0;
    float x[B], o[B], a = (float)(irand(64) - 32) / 8.0f;
    for (int i = 0; i < B; i++) x[i] = (float)(irand(200) - 100) / 16.0f;
    uint64_t dx = upload(&k, x, sizeof x), d_o = poisoned(&k, sizeof o), dc = upload(&k, &cnt, sizeof cnt);
    launch(&k, 1, (void *[]){&dx, &d_o, &dc, &a, &n});
    download(&k, o, d_o, sizeof o);
    download(&k, &cnt, dc, sizeof cnt);
    for (int i = 0; i < n; i++) {
        float y = x[i] * a + 2.0f, s = x[i] * 3.0f + 4.0f, want = y - y * 0.5f + s * s + s;
        cr_assert_eq(o[i], want, "out[%d] = %g, want %g (seed %llu)", i, o[i], want, (unsigned long long)seed);
    }
    for (int i = n; i < B; i++) cr_assert(isnan(o[i]), "out[%d] = %g was written past n", i, o[i]);
    cr_assert_eq(cnt, 1, "one atomic add per program, got %d", cnt);
    unload(&k);
}

/* Python's slices of tuples and lists, as Triton's tuples slice: triton_kernels' vpopc reshapes to x.shape[:-1] + [32];
 * t[1:], t[::-1], t[::2], t[-2:] and t[:] of a tuple of values, a list's slice as a shape (shape_of(x)[1:]), bounds past
 * the end clamped as Python's.  Exact: sums of small integers; n = 45 of 64, the output poisoned first. */
Test(lang_python, slices_of_tuples_and_lists) {
    const char *src = "fn sum3(a, b, c) { return a + b * 10 + c * 100; }\n"
                      "kernel k(x: *i32, out: *i32, n: i32) {\n"
                      "    let offs = arange(0, 64);\n"
                      "    let m = offs < n;\n"
                      "    let v = load(x + offs, m, 0);\n"
                      "    let t = (v, v + 1, v + 2, v + 3);\n"
                      "    let r = sum3(*t[1:]) + sum3(*t[::-1][:3]) * 1000;\n"
                      "    let e, o = t[::2], t[1::2];\n"
                      "    static_assert(len(t[-2:]) == 2 && len(t[:]) == 4 && len(t[5:]) == 0 && len(t[-9:2]) == 2, \"bounds\");\n"
                      "    let w = reshape(v, [4, 16]);\n"
                      "    let s = reshape(w, shape_of(w)[:-1] + [2, 8]);\n"
                      "    static_assert(shape_of(s) == [4, 2, 8] && shape_of(w)[1:] == [16] && shape_of(s)[::-1] == [8, 2, 4], \"lists\");\n"
                      "    let back = reshape(s, [64]);\n"
                      "    store(out + offs, r + (e[1] - o[0]) * 1000000 + (back - v), m);\n"
                      "}\n";
    K k;
    load_src(&k, src, "k");
    seed_rng();
    enum { B = 64 };
    int32_t x[B], o[B], n = 45;
    for (int i = 0; i < B; i++) x[i] = irand(100);
    uint64_t dx = upload(&k, x, sizeof x), d_o = poisoned(&k, sizeof o);
    launch(&k, 1, (void *[]){&dx, &d_o, &n});
    download(&k, o, d_o, sizeof o);
    for (int i = 0; i < n; i++) {
        int32_t v = x[i], want = (v + 1) + (v + 2) * 10 + (v + 3) * 100 + ((v + 3) + (v + 2) * 10 + (v + 1) * 100) * 1000 + 1000000;
        cr_assert_eq(o[i], want, "out[%d] = %d, want %d (seed %llu)", i, o[i], want, (unsigned long long)seed);
    }
    for (int i = n; i < B; i++) cr_assert_eq(o[i], -1, "out[%d] = %d was written past n", i, o[i]);
    unload(&k);
}
