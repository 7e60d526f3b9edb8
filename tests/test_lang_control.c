/* test_lang_control.c - control flow on the PTX emulator against host values: loops over u64 bounds and over
 * run-time i32/i64 ranges at the edges, pointer offsets past 2^31 bytes, 3-D grids, the
 * constants a run-time `if` merges (their types kept), numbers as conditions; while loops (Collatz, scalar and
 * per element), break/continue, a spin lock on atomic_cas/atomic_xchg, u32 range bounds. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/tile/tile.h"
#include "runtime/device.h"

#include "tests/lang_run.h"
#include "tests/test_rng.h"
#include "support/hostfloat.h"

/* A loop over a u64 bound counts in u64 and compares unsigned: in i64, a bound of 2^63 and up was negative, so
 * range(n - 3, n) with n = 2^63 + 1 ran nothing.  A negative constant step or start, or a signed run-time step,
 * is an error there. */
Test(lang_run, range_of_u64_bounds) {
    K k;
    load_src(&k,
             "@num_warps(1)\n"
             "kernel k(out: *u64, n: u64, s: u64) {\n"
             "    let c = 0;\n"
             "    let last: u64 = 0;\n"
             "    for i in range(n - 3, n) { static_assert(dtype_of(i) == u64, \"u64\"); c += 1; last = i; }\n"
             "    store(out, c as u64);\n"
             "    store(out + 1, last);\n"
             "    let d: u64 = 0;\n"
             "    for i in range(n - 10, n - 2, s) { d = d * 10 + (i - (n - 10)); }\n"
             "    store(out + 2, d);\n"
             "    let e = 0;\n"
             "    for i in range(n, n - 1) { e += 1; }\n"
             "    store(out + 3, e as u64);\n"
             "}\n",
             "k");
    uint64_t ns[] = {(1ull << 63) + 1, (1ull << 63) - 1, 18446744073709551615ull, 12};
    for (int t = 0; t < 4; t++) {
        uint64_t n = ns[t], s = 3;
        uint64_t dout = poisoned(&k, 4 * sizeof(uint64_t));
        void *params[] = {&dout, &n, &s};
        launch(&k, 1, params);
        uint64_t out[4];
        download(&k, out, dout, sizeof out);
        uint64_t d = 0;
        for (uint64_t i = n - 10; i < n - 2; i += s) d = d * 10 + (i - (n - 10));
        cr_expect_eq(out[0], 3, "n = %llu: range(n - 3, n) ran %llu times, want 3", (unsigned long long)n, (unsigned long long)out[0]);
        cr_expect_eq(out[1], n - 1, "n = %llu: last %llu", (unsigned long long)n, (unsigned long long)out[1]);
        cr_expect_eq(out[2], d, "n = %llu: range(n - 10, n - 2, 3) gave %llu, want %llu", (unsigned long long)n, (unsigned long long)out[2],
                     (unsigned long long)d);
        cr_expect_eq(out[3], 0, "n = %llu: range(n, n - 1) ran %llu times", (unsigned long long)n, (unsigned long long)out[3]);
    }
    unload(&k);
    static const BadSource bad[] = {
        {"kernel k(n: u64) {\n    for i in range(0, n, -1) {}\n}\n",
         "t.tile:2:26: error: 'range' over a u64 bound counts up in u64: its step cannot be -1"},
        {"kernel k(n: u64) {\n    for i in range(-1, n) {}\n}\n",
         "t.tile:2:20: error: 'range' over a u64 bound counts up in u64: its start cannot be -1"},
        {"kernel k(n: u64, j: i32) {\n    for i in range(0, n, j) {}\n}\n",
         "t.tile:2:26: error: 'range' over a u64 bound counts up in u64: its step must be unsigned or a positive constant"},
    };
    expect_compile_errors(bad, sizeof bad / sizeof *bad);
}

/* Constants merged by a run-time `if`: a float variable takes an integer constant, two float constants stay a
 * float, and the branch not taken keeps the value before the `if` (an integer variable given a float is an error:
 * test_lang_diag.c's if_keeps_an_integer_constant_type). */
Test(lang_run, if_merges_constants) {
    K k;
    load_src(&k,
             "@num_warps(1)\n"
             "kernel k(out: *f32, c: i32) {\n"
             "    let x = 0.5;\n"
             "    if c > 0 { x = 3; }\n"
             "    let y = 0;\n"
             "    if c > 1 { y = 1.25; } else { y = 2.75; }\n"
             "    let t = (0.25, 7);\n"
             "    if c > 2 { t = (5, 9); }\n"
             "    store(out, x);\n"
             "    store(out + 1, y);\n"
             "    store(out + 2, t[0]);\n"
             "    store(out + 3, t[1] as f32);\n"
             "    let v = c as i8;\n"
             "    if c > 0 { v = 100; } else { v = 4; }\n"
             "    store(out + 4, (v * 2) as f32);\n"
             "}\n",
             "k");
    for (int32_t c = 0; c < 4; c++) {
        uint64_t dout = poisoned(&k, 5 * sizeof(float));
        void *params[] = {&dout, &c};
        launch(&k, 1, params);
        /* v stays an i8 (both branches give constants): 100 * 2 wraps to -56 */
        float out[5], want[5] = {c > 0 ? 3.0f : 0.5f, c > 1 ? 1.25f : 2.75f, c > 2 ? 5.0f : 0.25f, c > 2 ? 9.0f : 7.0f, c > 0 ? -56.0f : 8.0f};
        download(&k, out, dout, sizeof out);
        for (int i = 0; i < 5; i++) cr_expect_eq(out[i], want[i], "c = %d: out[%d] = %g, want %g", c, i, out[i], want[i]);
    }
    unload(&k);
}

/* Conditions of `if`, `while` and `where` that are numbers, not i1: non-zero is true (NaN too), as Triton's
 * cond.to(int1): a const 0/1 flag (`if HAS_BIAS`), a run-time i32 countdown (`while m`, also with a break, whose
 * next test is the loop's own), an f32, also of `a if c else b` (it was "condition of 'if' must be 'i1', got 'i32'",
 * and "condition of 'where' must be i1 or an integer, got 'f32'"), and of `where` on an f32 scalar and an f32 tile
 * (it refused a float, unlike `if`). */
Test(lang_run, number_conditions) {
    K k;
    load_src(&k,
             "@num_warps(1)\n"
             "kernel k(x: *i32, f: *f32, out: *i32, tiles: *i32, const HAS: i32 = 1, const NONE = 0) {\n"
             "    let pid = program_id(0);\n"
             "    let n = load(x + pid);\n"
             "    let v = load(f + pid);\n"
             "    let r = 0;\n"
             "    if HAS { r += 1; }\n"
             "    if NONE { r += 100; }\n"
             "    if n { r += 2; }\n"
             "    if v { r += 4; }\n"
             "    r += 16 if v - 0.5 else 32;\n"
             "    let m = n;\n"
             "    let t = 0;\n"
             "    while m { m -= 1; t += 1; }\n"
             "    let q = n as u8;\n"
             "    while q { q -= 1; t += 10; if t > 60 { break; } }\n"
             "    r += where(v, 64, 128);\n"
             "    let o = arange(0, 8);\n"
             "    store(tiles + pid * 8 + o, where(load(f + (pid + o) % 12), o, -1 - o));\n"
             "    store(out + pid, r + 1000 * t);\n"
             "}\n",
             "k");
    enum { P = 12 };
    int32_t x[P], out[P], tiles[P * 8];
    float f[P];
    const float fs[] = {0.0f, -0.0f, 0.5f, NAN, -2.0f, 1e30f};
    for (int i = 0; i < P; i++) x[i] = (i * 5) % 9, f[i] = fs[i % 6], out[i] = -1;
    for (int i = 0; i < P * 8; i++) tiles[i] = 99;
    uint64_t dx = upload(&k, x, sizeof x), df = upload(&k, f, sizeof f), dout = upload(&k, out, sizeof out);
    uint64_t dtiles = upload(&k, tiles, sizeof tiles);
    void *params[] = {&dx, &df, &dout, &dtiles};
    launch(&k, P, params);
    download(&k, out, dout, sizeof out);
    download(&k, tiles, dtiles, sizeof tiles);
    for (int i = 0; i < P * 8; i++) {
        float c = f[(i / 8 + i % 8) % P];
        int want = c != 0.0f || isnan(c) ? i % 8 : -1 - i % 8;
        cr_expect_eq(tiles[i], want, "where(%g, ...) in program %d, element %d: %d, want %d", c, i / 8, i % 8, tiles[i], want);
    }
    for (int i = 0; i < P; i++) {
        int r = 1 + (x[i] ? 2 : 0) + (f[i] != 0.0f || isnan(f[i]) ? 4 + 64 : 128) + (f[i] - 0.5f != 0.0f || isnan(f[i]) ? 16 : 32),
            t = x[i];
        for (int q = x[i]; q; q--)
            if ((t += 10) > 60) break;
        cr_expect_eq(out[i], r + 1000 * t, "x %d f %g: %d, want %d", x[i], f[i], out[i], r + 1000 * t);
    }
    unload(&k);
}

/* `!p` of a scalar pointer is true when it is null (Triton's `if not ptr`), the converse of `if p`, at run time for
 * each combination of null and given pointers; with b specialized None, `!b` is a compile-time true (as Python's
 * `not None`) and the branch that loads through b is dropped.  `p is None` of a run-time pointer is false. */
Test(lang_run, not_pointer_is_null_test) {
    const char *src = "@num_warps(1)\n"
                      "kernel k(a: *i32, b: *f32, out: *i32) {\n"
                      "    let pid = program_id(0);\n"
                      "    let r = 0;\n"
                      "    if !a { r += 1; } else { r += 10 * load(a + pid); }\n"
                      "    let nb = !b;\n"
                      "    r += 100 if !b else 1000;\n"
                      "    if !a && nb { r += 10000; }\n"
                      "    if a is not None && !(b is None) { r += 100000; }\n"
                      "    if !nb { r += 1000000 * load(b + pid) as i32; }\n"
                      "    store(out + pid, r);\n"
                      "}\n";
    enum { P = 5 };
    int32_t a[P];
    float b[P];
    for (int i = 0; i < P; i++) a[i] = 1 + irand(9), b[i] = (float)(1 + irand(9));
    for (int run = 0; run < 5; run++) {
        bool none = run == 4, has_a = run & 1, has_b = !none && (run & 2);
        const char *spec[] = {"b=None", NULL};
        K k;
        load_with(&k, src, "k", NULL, NULL, none ? spec : NULL);
        int32_t out[P];
        uint64_t da = has_a ? upload(&k, a, sizeof a) : 0, db = has_b ? upload(&k, b, sizeof b) : 0;
        uint64_t dout = poisoned(&k, sizeof out);
        launch(&k, P, (void *[]){&da, &db, &dout});
        download(&k, out, dout, sizeof out);
        for (int i = 0; i < P; i++) {
            int want = (has_a ? 10 * a[i] : 1) + (has_b ? 1000 : 100) + (!has_a && !has_b ? 10000 : 0) + (none ? 0 : 100000) +
                       (has_b ? 1000000 * (int)b[i] : 0);
            cr_expect_eq(out[i], want, "a %s, b %s, program %d: %d, want %d", has_a ? "given" : "null",
                         none ? "None" : has_b ? "given" : "null", i, out[i], want);
        }
        unload(&k);
    }
}

/* Python's `x in t` and `x not in t`: a compile-time tuple or list (written out, or a file-level const; strings, types,
 * negative numbers, empty), against compile-time and run-time scalars and a tile; four define sets against the host's
 * membership, poisoned output past n. */
Test(lang_run, in_and_not_in) {
    const char *src = "const SMALL = (1, 3, 5);\n"
                      "@num_warps(2)\n"
                      "kernel k(x: *i32, out: *i32, n: i32, r: i32, const MODE: i32 = 2, const ACT = \"gelu\", const DT = f16) {\n"
                      "    let offs = arange(0, 64);\n"
                      "    let v = load(x + offs, offs < n, 0);\n"
                      "    let c = 0;\n"
                      "    if MODE in (1, 2, 3) { c += 1; }\n"
                      "    if MODE not in [1, 2] { c += 2; }\n"
                      "    if ACT in (\"relu\", \"gelu\") { c += 4; }\n"
                      "    if DT in (f16, bf16) { c += 8; }\n"
                      "    if MODE in () { c += 16; }\n"
                      "    if MODE not in () { c += 32; }\n"
                      "    if r in (-4, 7) { c += 64; }\n"
                      "    if !(r in SMALL) { c += 128; }\n"
                      "    static_assert(MODE in (1, 2, 3, 4) && !(MODE in (5, 6)), \"in\");\n"
                      "    let w = where(v in (2, 5, -1), 1, 0) + where(v not in SMALL, 10, 0);\n"
                      "    store(out + offs, w + c * 100, offs < n);\n"
                      "}\n";
    static const struct { int mode; const char *act, *dt; int r; } cs[] = {
        {2, "ACT=\"gelu\"", "DT=f16", 7}, {4, "ACT=\"relu\"", "DT=f32", -4}, {1, "ACT=\"silu\"", "DT=bf16", 3}, {3, "ACT=\"x\"", "DT=i8", 0}};
    enum { N = 50 };
    int32_t x[64];
    for (int i = 0; i < 64; i++) x[i] = irand(9) - 2;
    for (int t = 0; t < 4; t++) {
        char mode[16];
        snprintf(mode, sizeof mode, "MODE=%d", cs[t].mode);
        const char *defs[] = {mode, cs[t].act, cs[t].dt, NULL};
        K k;
        load_with(&k, src, "k", NULL, defs, NULL);
        int32_t out[64], n = N, r = cs[t].r;
        uint64_t dx = upload(&k, x, sizeof x), dout = poisoned(&k, sizeof out);
        launch(&k, 1, (void *[]){&dx, &dout, &n, &r});
        download(&k, out, dout, sizeof out);
        int m = cs[t].mode;
        bool act = strstr(cs[t].act, "relu") || strstr(cs[t].act, "gelu"), dt = strstr(cs[t].dt, "f16") != NULL;
        int c = (m >= 1 && m <= 3) + 2 * (m != 1 && m != 2) + 4 * act + 8 * dt + 32 + 64 * (r == -4 || r == 7) +
                128 * (r != 1 && r != 3 && r != 5);
        for (int i = 0; i < N; i++) {
            int v = x[i], want = (v == 2 || v == 5 || v == -1) + 10 * (v != 1 && v != 3 && v != 5) + 100 * c;
            cr_expect_eq(out[i], want, "case %d, x[%d] = %d: %d, want %d", t, i, v, out[i], want);
        }
        for (int i = N; i < 64; i++) cr_expect_eq((uint32_t)out[i], 0xFFFFFFFFu, "out[%d] past n written: %d", i, out[i]);
        unload(&k);
    }
}

/* Triton's target queries (triton.language.target_info): cuda_capability_geq(M, m) of the target compiled for, folded
 * at compile time (static_assert against each target's capability), is_cuda(), is_hip(); a branch on one picks code,
 * run on emu for sm_80 and sm_90a. */
Test(lang_run, target_queries) {
    const char *src = "@num_warps(1)\n"
                      "kernel k(out: *i32, const CC: i32 = 80) {\n"
                      "    static_assert(cuda_capability_geq(9) == (CC >= 90) && cuda_capability_geq(8, 9) == (CC >= 89), \"cc\");\n"
                      "    static_assert(cuda_capability_geq(8, 6) == (CC >= 86) && cuda_capability_geq(8) && !cuda_capability_geq(10), \"cc\");\n"
                      "    static_assert(is_cuda() && !is_hip(), \"cuda\");\n"
                      "    let v = 1 if cuda_capability_geq(major=9, minor=0) else 2;\n"
                      "    if cuda_capability_geq(8, 9) { v += 10; }\n"
                      "    store(out, v);\n"
                      "}\n";
    static const struct { const char *arch, *cc; int want; } ts[] = {
        {"sm_80", "CC=80", 2}, {"sm_86", "CC=86", 2}, {"sm_89", "CC=89", 12}, {"sm_90a", "CC=90", 11}};
    for (int t = 0; t < 4; t++) {
        const char *defs[] = {ts[t].cc, NULL};
        if (t == 1 || t == 2) { /* compiled only: static_assert checks the folding */
            tile_compile_options o = {.arch = ts[t].arch, .defines = defs};
            tile_compiled c;
            cr_expect_eq(tile_compile_source("t.tile", src, &o, &c), TILE_OK, "%s: %s", ts[t].arch, c.diagnostics);
            tile_compiled_free(&c);
            continue;
        }
        K k;
        char dev[32];
        snprintf(dev, sizeof dev, "emu:%s", ts[t].arch);
        load_with_on(&k, src, "k", ts[t].arch, defs, NULL, dev);
        int32_t out = 0;
        uint64_t d = poisoned(&k, sizeof out);
        launch(&k, 1, (void *[]){&d});
        download(&k, &out, d, sizeof out);
        cr_expect_eq(out, ts[t].want, "%s: %d, want %d", ts[t].arch, out, ts[t].want);
        unload(&k);
    }
}

static const char *const archs[] = {"sm_80", "sm_90a"};
static const char *const devs[] = {"emu:sm_80", "emu:sm_90a"};

/* `for` over run-time i32 bounds: zero, one and negative trip counts, negative steps and steps that do not divide the
 * range, bounds near the i32 limits (at most one step from them, as the doc allows), and the same loop over i64 bounds;
 * the count and the order of the values against the host's, on sm_80 and sm_90a. */
Test(lang_run, range_trip_counts) {
    const char *src =
        "@num_warps(1)\n"
        "kernel k(out: *i64, a: i32, b: i32, s: i32) {\n"
        "    let c = 0;\n"
        "    let h = 0 as i64;\n"
        "    for i in range(a, b, s) { c += 1; h = h * 31 + i as i64; }\n"
        "    store(out, c as i64);\n"
        "    store(out + 1, h);\n"
        "    let c2 = 0;\n"
        "    for i in range(a, b) { c2 += 1; }\n"
        "    store(out + 2, c2 as i64);\n"
        "    let c3 = 0 as i64;\n"
        "    for i in range(a as i64, b as i64 + 10, s) { c3 += i; }\n"
        "    store(out + 3, c3);\n"
        "}\n";
    for (int ai = 0; ai < 2; ai++) {
        K k;
        load_src_on(&k, src, "k", archs[ai], devs[ai]);
        int32_t cases[][3] = {{0, 0, 1}, {0, 1, 1}, {5, 0, 1}, {5, 0, -1}, {5, 0, -2}, {0, 10, 3}, {-7, 8, 4}, {10, -10, -7},
                              {2147483640, 2147483647, 1}, {2147483640, 2147483647, 1}, {2147483641, 2147483647, 2}, {2147483640, 2147483646, 3}, {-2147483647, -2147483640, 3},
                              {-2147483640, -2147483648, -1}, {3, 3, -1}, {0, 100000, 99999}};
        for (size_t t = 0; t < sizeof cases / sizeof *cases; t++) {
            int32_t a = cases[t][0], b = cases[t][1], s = cases[t][2];
            uint64_t d = poisoned(&k, 4 * 8);
            void *p[] = {&d, &a, &b, &s};
            launch(&k, 1, p);
            int64_t o[4];
            download(&k, o, d, sizeof o);
            int64_t c = 0, h = 0, c2 = 0, c3 = 0;
            if (s > 0) for (int64_t i = a; i < b; i += s) c++, h = (int64_t)((uint64_t)h * 31 + (uint64_t)i); /* the kernel's i64 wraps */
            else for (int64_t i = a; i > b; i += s) c++, h = (int64_t)((uint64_t)h * 31 + (uint64_t)i); /* the kernel's i64 wraps */
            for (int64_t i = a; i < b; i++) c2++;
            if (s > 0) for (int64_t i = a; i < (int64_t)b + 10; i += s) c3 += i;
            else for (int64_t i = a; i > (int64_t)b + 10; i += s) c3 += i;
            cr_expect_eq(o[0], c, "%s %d %d %d: count %lld want %lld", archs[ai], a, b, s, (long long)o[0], (long long)c);
            cr_expect_eq(o[1], h, "%s %d %d %d: hash", archs[ai], a, b, s);
            cr_expect_eq(o[2], c2, "%s %d %d %d: c2 %lld want %lld", archs[ai], a, b, s, (long long)o[2], (long long)c2);
            cr_expect_eq(o[3], c3, "%s %d %d %d: c3 %lld want %lld", archs[ai], a, b, s, (long long)o[3], (long long)c3);
        }
        unload(&k);
    }
}

/* nested break/continue inside ifs, early return inside if */

/* Pointer offsets are widened to 64 bits (i32 sign-extended, u32 zero-extended) and scaled by the element size in
 * 64 bits (docs/language.md, Pointers): an i32 element offset past 2^31 bytes, a u32 one past 2^31, an i64 one, a
 * negative i32 one from a pointer past 2^31, and an i32 pid * stride (below 2^31 elements, past 2^31 bytes) load and
 * store where they should, and `pid as i64 * stride` past 2^31 elements too.  The 3 GiB buffer costs only the
 * pages written: the emulator's device memory is calloc'd. */
Test(lang_run, offsets_past_2_31_bytes) {
    const char *src =
        "@num_warps(4)\n"
        "kernel k(x: *f32, xb: *u8, out: *f32, ob: *u8, off: i32, uoff: u32, loff: i64, boff: i32, neg: i32, st: i32, st2: i32) {\n"
        "    let pid = program_id(0);\n"
        "    let o = arange(0, 64);\n"
        "    if pid == 0 {\n"
        "    let v = load(x + off + o);\n"
        "    store(out + o, v + 1.0);\n"
        "    store(out + 64, load(x + off + 5));\n"
        "    store(x + off + 64 + o, v * 2.0);\n"
        "    let w = load(xb + uoff + o);\n"
        "    store(ob + o, w + 1);\n"
        "    let w2 = load(xb + loff + o);\n"
        "    store(ob + 64 + o, w2 + 2);\n"
        "    let w3 = load(xb + (boff + o));\n"
        "    store(ob + 128 + o, w3 + 3);\n"
        "    let base = xb + loff;\n"
        "    let w4 = load(base + neg + o);\n"
        "    store(ob + 192 + o, w4 + 4);\n"
        "    }\n"
        "    let w5 = load(x + pid * st + o);\n"
        "    store(out + 128 + pid * 64 + o, w5);\n"
        "    store(ob + 256 + pid * 64 + o, load(xb + (pid as i64) * st2 + o) + 5);\n"
        "}\n";
    const size_t BIG = 3ull << 30;
    int32_t off = 600000000, boff = 2147483000, neg = -2000000000, st = 290000000, st2 = 1100000000;
    uint32_t uoff = 3000000000u;
    int64_t loff = (1ll << 31) + 12345;
    size_t pos[] = {(size_t)off * 4, uoff, (size_t)loff, (size_t)boff, (size_t)(loff + neg), (size_t)st * 4, (size_t)st * 8, (size_t)st2, (size_t)st2 * 2};
    uint8_t pat[9][256];
    seed_rng();
    for (int i = 0; i < 9; i++) for (int j = 0; j < 256; j++) pat[i][j] = (uint8_t)(irand(100));
    /* f32 values at off and at pid * st: small integers */
    float fv[3][64];
    for (int i = 0; i < 3; i++) for (int j = 0; j < 64; j++) fv[i][j] = (float)(irand(1000));
    for (int ai = 0; ai < 2; ai++) {
        K k;
        load_src_on(&k, src, "k", archs[ai], devs[ai]);
        uint64_t dx;
        cr_assert_eq(dev_malloc(k.dev, BIG, &dx), DEV_OK);
        for (int i = 1; i < 9; i += i == 4 ? 3 : 1) cr_assert_eq(dev_memcpy_htod(k.dev, dx + pos[i], pat[i], 64), DEV_OK);
        cr_assert_eq(dev_memcpy_htod(k.dev, dx + pos[0], fv[0], 256), DEV_OK);
        cr_assert_eq(dev_memcpy_htod(k.dev, dx + pos[5], fv[1], 256), DEV_OK);
        cr_assert_eq(dev_memcpy_htod(k.dev, dx + pos[6], fv[2], 256), DEV_OK);
        uint64_t dout = poisoned(&k, 4 * (128 + 3 * 64)), dob = poisoned(&k, 448);
        void *p[] = {&dx, &dx, &dout, &dob, &off, &uoff, &loff, &boff, &neg, &st, &st2};
        launch(&k, 3, p);
        float out[128 + 3 * 64], back[64];
        uint8_t ob[448];
        download(&k, out, dout, sizeof out);
        download(&k, ob, dob, sizeof ob);
        cr_assert_eq(dev_memcpy_dtoh(k.dev, back, dx + pos[0] + 256, 256), DEV_OK);
        for (int j = 0; j < 64; j++) {
            cr_expect_eq(out[j], fv[0][j] + 1, "%s i32 off f32 %d: %g want %g", archs[ai], j, out[j], fv[0][j] + 1);
            cr_expect_eq(back[j], fv[0][j] * 2, "%s store at i32 off %d: %g", archs[ai], j, back[j]);
            cr_expect_eq(ob[j], pat[1][j] + 1, "%s u32 off %d: %d want %d", archs[ai], j, ob[j], pat[1][j] + 1);
            cr_expect_eq(ob[64 + j], pat[2][j] + 2, "%s i64 off %d", archs[ai], j);
            cr_expect_eq(ob[128 + j], pat[3][j] + 3, "%s i32 tensor off %d: %d want %d", archs[ai], j, ob[128 + j], pat[3][j] + 3);
            cr_expect_eq(ob[192 + j], pat[4][j] + 4, "%s neg off %d: %d want %d", archs[ai], j, ob[192 + j], pat[4][j] + 4);
            cr_expect_eq(out[128 + j], 0.0f, "%s pid0 %d", archs[ai], j);
            cr_expect_eq(ob[256 + j], 5, "%s pid0 * st2 %d", archs[ai], j);
            for (int q = 1; q < 3; q++)
                cr_expect_eq(ob[256 + q * 64 + j], pat[6 + q][j] + 5, "%s pid%d as i64 * st2, %d: %d want %d", archs[ai], q, j, ob[256 + q * 64 + j],
                             pat[6 + q][j] + 5);
            cr_expect_eq(out[192 + j], fv[1][j], "%s pid1*st %d: %g want %g", archs[ai], j, out[192 + j], fv[1][j]);
            cr_expect_eq(out[256 + j], fv[2][j], "%s pid2*st %d: %g want %g", archs[ai], j, out[256 + j], fv[2][j]);
        }
        cr_expect_eq(out[64], fv[0][5], "%s scalar %g", archs[ai], out[64]);
        unload(&k);
    }
}

/* program_id and num_programs on all three axes of a 3 x 5 x 2 grid, one-element loads and stores under a scalar
 * mask, and a `fn` returning a tuple with a `const` parameter and defaults (given by position and keyword). */
Test(lang_run, grid_3d_masked_scalars_fn_defaults) {
    const char *src =
        "fn pick(a, b, const SW: i32 = 0, scale = 2) { if SW { return (b * scale, a); } return (a * scale, b); }\n"
        "@num_warps(1)\n"
        "kernel k(x: *i32, out: *i32, n: i32) {\n"
        "    let px = program_id(0); let py = program_id(1); let pz = program_id(2);\n"
        "    let nx = num_programs(0); let ny = num_programs(1); let nz = num_programs(2);\n"
        "    let lin = (pz * ny + py) * nx + px;\n"
        "    let v = load(x + lin, lin < n, -7);\n"
        "    let (a, b) = pick(v, lin);\n"
        "    let (c, d) = pick(v, lin, 1, scale=3);\n"
        "    store(out + 4 * lin, a, lin % 2 == 0);\n"
        "    store(out + 4 * lin + 1, b);\n"
        "    store(out + 4 * lin + 2, c + d);\n"
        "    store(out + 4 * lin + 3, nx * 10000 + ny * 100 + nz);\n"
        "}\n";
    enum { GX = 3, GY = 5, GZ = 2, P = GX * GY * GZ };
    int32_t x[P];
    seed_rng();
    for (int i = 0; i < P; i++) x[i] = irand(1000);
    for (int ai = 0; ai < 2; ai++) {
        K k;
        load_src_on(&k, src, "k", archs[ai], devs[ai]);
        int32_t n = 17;
        uint64_t dx = upload(&k, x, sizeof x), d = poisoned(&k, 4 * 4 * P);
        void *p[] = {&dx, &d, &n};
        launch3(&k, NULL, GX, GY, GZ, p);
        int32_t o[4 * P];
        download(&k, o, d, sizeof o);
        for (int l = 0; l < P; l++) {
            int v = l < n ? x[l] : -7;
            cr_expect_eq(o[4 * l], l % 2 == 0 ? v * 2 : -1, "%s a %d", archs[ai], l);
            cr_expect_eq(o[4 * l + 1], l, "%s b %d", archs[ai], l);
            cr_expect_eq(o[4 * l + 2], l * 3 + v, "%s cd %d", archs[ai], l);
            cr_expect_eq(o[4 * l + 3], GX * 10000 + GY * 100 + GZ, "%s n %d", archs[ai], l);
        }
        unload(&k);
    }
}


/* Software-pipelined dot loops (num_stages 4, and 3 with loop_unroll_factor 2 counting down) over run-time bounds
 * with zero, one and a few trips, a start past the end and a tail that is not a whole step, the loads of the
 * counting-down loop under an `if`: the prologue must load nothing a trip does not reach, the epilogue must add
 * every trip's product once. */
Test(lang_run, pipelined_loops_run_time_trips) {
    const char *src =
        "@num_warps(4)\n"
        "kernel k(a: *f16, b: *f16, out: *f32, lo: i32, hi: i32, K: i32) {\n"
        "    let r = arange(0, 16);\n"
        "    let c = arange(0, 32);\n"
        "    let acc = zeros([16, 16], f32);\n"
        "    for k0 in range(lo, hi, 32, num_stages=4) {\n"
        "        let m = (k0 + c) < K;\n"
        "        let ta = load(a + r[:, None] * K + k0 + c[None, :], m[None, :], 0.0);\n"
        "        let tb = load(b + (k0 + c)[:, None] * 16 + r[None, :], m[:, None], 0.0);\n"
        "        acc = dot(ta, tb, acc);\n"
        "    }\n"
        "    let acc2 = zeros([16, 16], f32);\n"
        "    for k0 in range(hi - 32, lo - 32, -32, num_stages=3, loop_unroll_factor=2) {\n"
        "        let m = (k0 + c) < K;\n"
        "        if k0 >= 0 {\n"
        "            let ta = load(a + r[:, None] * K + k0 + c[None, :], m[None, :], 0.0);\n"
        "            let tb = load(b + (k0 + c)[:, None] * 16 + r[None, :], m[:, None], 0.0);\n"
        "            acc2 = dot(ta, tb, acc2);\n"
        "        }\n"
        "    }\n"
        "    store(out + r[:, None] * 16 + r[None, :], acc);\n"
        "    store(out + 256 + r[:, None] * 16 + r[None, :], acc2);\n"
        "}\n";
    enum { KD = 200 };
    static double fa[16][KD], fb[KD][16];
    static uint16_t ha[16 * KD], hb[KD * 16];
    seed_rng();
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < KD; j++) ha[i * KD + j] = f32_to_f16((float)urand()), fa[i][j] = f16_to_d(ha[i * KD + j]);
    for (int i = 0; i < KD; i++)
        for (int j = 0; j < 16; j++) hb[i * 16 + j] = f32_to_f16((float)urand()), fb[i][j] = f16_to_d(hb[i * 16 + j]);
    static const int cases[][2] = {{0, 0}, {0, 1}, {0, 32}, {0, 33}, {32, 96}, {64, 200}, {0, 200}, {100, 50}, {96, 224}};
    for (int ai = 0; ai < 2; ai++) {
        K k;
        load_src_on(&k, src, "k", archs[ai], devs[ai]);
        uint64_t da = upload(&k, ha, sizeof ha), db = upload(&k, hb, sizeof hb);
        for (size_t t = 0; t < sizeof cases / sizeof *cases; t++) {
            int32_t lo = cases[t][0], hi = cases[t][1], kk = KD;
            uint64_t dout = poisoned(&k, 512 * 4);
            void *p[] = {&da, &db, &dout, &lo, &hi, &kk};
            launch(&k, 1, p);
            float o[512];
            download(&k, o, dout, sizeof o);
            static double r1[16][16], r2[16][16];
            memset(r1, 0, sizeof r1);
            memset(r2, 0, sizeof r2);
            for (int k0 = lo; k0 < hi; k0 += 32)
                for (int i = 0; i < 16; i++)
                    for (int j = 0; j < 16; j++)
                        for (int q = k0; q < k0 + 32 && q < KD; q++) r1[i][j] += fa[i][q] * fb[q][j];
            for (int k0 = hi - 32; k0 > lo - 32; k0 -= 32)
                if (k0 >= 0)
                    for (int i = 0; i < 16; i++)
                        for (int j = 0; j < 16; j++)
                            for (int q = k0; q < k0 + 32 && q < KD; q++) r2[i][j] += fa[i][q] * fb[q][j];
            for (int i = 0; i < 16; i++)
                for (int j = 0; j < 16; j++) {
                    cr_expect(fabs(o[i * 16 + j] - r1[i][j]) < 1e-4, "%s range(%d, %d, 32): acc[%d][%d] = %g, want %g (seed %llu)", archs[ai], lo,
                              hi, i, j, o[i * 16 + j], r1[i][j], (unsigned long long)seed);
                    cr_expect(fabs(o[256 + i * 16 + j] - r2[i][j]) < 1e-4, "%s range(%d, %d, -32): acc2[%d][%d] = %g, want %g (seed %llu)",
                              archs[ai], hi - 32, lo - 32, i, j, o[256 + i * 16 + j], r2[i][j], (unsigned long long)seed);
                }
        }
        unload(&k);
    }
}

/* ---- while, break, continue ---- */

static int collatz_steps(int n) {
    int s = 0;
    while (n != 1) n = n % 2 == 0 ? n / 2 : 3 * n + 1, s++;
    return s;
}

/* One element per program, a scalar loop whose trip count differs per program. */
Test(lang_run, while_collatz_scalar) {
    K k;
    load_src(&k,
             "@num_warps(1)\n"
             "kernel collatz(x: *i32, out: *i32) {\n"
             "    let pid = program_id(0);\n"
             "    let n = load(x + pid);\n"
             "    let steps = 0;\n"
             "    while n != 1 {\n"
             "        if n % 2 == 0 { n = n / 2; } else { n = 3 * n + 1; }\n"
             "        steps += 1;\n"
             "    }\n"
             "    store(out + pid, steps);\n"
             "}\n",
             "collatz");
    enum { P = 40 };
    int32_t x[P], out[P];
    for (int i = 0; i < P; i++) x[i] = 1 + i * 7;
    uint64_t dx = upload(&k, x, sizeof x), dout = upload(&k, out, sizeof out);
    void *params[] = {&dx, &dout};
    launch(&k, P, params);
    download(&k, out, dout, sizeof out);
    for (int i = 0; i < P; i++) cr_expect_eq(out[i], collatz_steps(x[i]), "collatz(%d): %d, want %d", x[i], out[i], collatz_steps(x[i]));
    unload(&k);
}

/* A `while` over compile-time constants runs at compile time (Triton's `_log2`, whose names are `tl.constexpr`s): as a
 * fn whose result is a shape and a static_assert's operand, inline, and one with `continue` and `break` under
 * compile-time conditions around run-time work (unrolled: four copies of the load).  A `while` whose condition a load
 * makes run-time in its body stays a run-time loop (a different count per program), and so does a plain `let i = 0`
 * counter under a const bound (Triton's `i = 0` is a tensor): one load in a loop, not N copies. */
Test(lang_run, while_compile_time) {
    K k;
    const char *src = "fn _log2(const i: i32) {\n"
                      "    let log2: constexpr = 0;\n"
                      "    let n: constexpr = i;\n"
                      "    while n > 1 { n >>= 1; log2 += 1; }\n"
                      "    return log2;\n"
                      "}\n"
                      "@num_warps(1)\n"
                      "kernel k(x: *f32, out: *f32, cnt: *i32, y: *f32, const N: i32 = 40) {\n"
                      "    let pid = program_id(0);\n"
                      "    const n = N;\n"
                      "    const lg = 0;\n"
                      "    while n > 1 { n >>= 1; lg += 1; }\n"
                      "    static_assert(lg == _log2(N) && lg == 5);\n"
                      "    let o = arange(0, 1 << _log2(N));\n"
                      "    let acc = zeros([1 << lg], f32);\n"
                      "    const k = 0;\n"
                      "    while k < 8 {\n"
                      "        k += 1;\n"
                      "        if k % 3 == 0 { continue; }\n"
                      "        if k == 7 { break; }\n"
                      "        let v = load(x + pid * 80 + o * 2 + k);\n"
                      "        acc += where(v > 0.0, v * k, -v);\n"
                      "    }\n"
                      "    store(out + pid * 32 + o, acc);\n"
                      "    let t = 0;\n"
                      "    let steps = 0;\n"
                      "    while t < 100 { t += load(cnt + pid); steps += 1; }\n"
                      "    store(cnt + 8 + pid, steps * 1000 + k);\n"
                      "    let i = 0;\n"
                      "    let s = 0.0;\n"
                      "    while i < N { s += load(x + pid * 80 + 2 * i + 1) * i; i += 1; }\n"
                      "    store(y + pid, s);\n"
                      "}\n";
    tile_compile_options o = {.dump_after = "frontend", .tir_only = 1};
    tile_compiled c;
    cr_assert_eq(tile_compile_source("t.tile", src, &o, &c), TILE_OK, "%s", c.diagnostics);
    int loads = 0, whiles = 0;
    for (const char *p = c.dump; (p = strstr(p, " = load ")); p++) loads++;
    for (const char *p = c.dump; (p = strstr(p, " = while ")); p++) whiles++;
    cr_expect_eq(loads, 6, "the unrolled loop's 4 loads and the run-time loops' 2, got %d:\n%s", loads, c.dump);
    cr_expect_eq(whiles, 2, "two run-time whiles, got %d:\n%s", whiles, c.dump);
    tile_compiled_free(&c);
    load_src(&k, src, "k");
    enum { P = 8 };
    float x[P * 80], out[P * 32], y[P];
    int32_t cnt[2 * P];
    for (int i = 0; i < P * 80; i++) x[i] = (float)urand();
    for (int i = 0; i < P; i++) cnt[i] = 1 + irand(40), cnt[P + i] = -1;
    uint64_t dx = upload(&k, x, sizeof x), dout = poisoned(&k, sizeof out), dcnt = upload(&k, cnt, sizeof cnt),
             dy = poisoned(&k, sizeof y);
    void *params[] = {&dx, &dout, &dcnt, &dy};
    launch(&k, P, params);
    download(&k, out, dout, sizeof out);
    download(&k, cnt, dcnt, sizeof cnt);
    download(&k, y, dy, sizeof y);
    for (int p = 0; p < P; p++) {
        for (int e = 0; e < 32; e++) {
            double want = 0;
            for (int j = 1; j <= 5; j++) {
                if (j == 3) continue;
                double v = x[p * 80 + e * 2 + j];
                want += v > 0 ? v * j : -v;
            }
            cr_expect(fabs(out[p * 32 + e] - want) <= 1e-5 * (1 + fabs(want)), "program %d element %d: %g, want %g", p, e,
                      out[p * 32 + e], want);
        }
        int steps = (100 + cnt[p] - 1) / cnt[p];
        cr_expect_eq(cnt[P + p], steps * 1000 + 7, "program %d (step %d): %d, want %d", p, cnt[p], cnt[P + p], steps * 1000 + 7);
        double want = 0;
        for (int i = 0; i < 40; i++) want += (double)x[p * 80 + 2 * i + 1] * i;
        cr_expect(fabs(y[p] - want) <= 1e-5 * (1 + fabs(want)), "program %d: the counted loop gave %g, want %g", p, y[p], want);
    }
    unload(&k);
}

/* A tensor of sequences: loop while any is unfinished; `continue` skips the counting of
 * finished ones' iterations (none are counted), `break` stops at a cap. */
Test(lang_run, while_collatz_tensor_break_continue) {
    K k;
    load_src(&k,
             "@num_warps(2)\n"
             "kernel collatz(x: *i32, out: *i32, iters: *i32, cap: i32) {\n"
             "    let i = arange(0, 64);\n"
             "    let n = load(x + i);\n"
             "    let steps = zeros([64], i32);\n"
             "    let it = 0;\n"
             "    while true {\n"
             "        if it == cap { break; }\n"
             "        it += 1;\n"
             "        let live = n != 1;\n"
             "        if sum(live) == 0 { break; }\n"
             "        n = where(live, where(n % 2 == 0, n / 2, 3 * n + 1), n);\n"
             "        steps += where(live, 1, 0);\n"
             "        if it % 2 == 1 { continue; }\n"
             "        steps += 0 * steps;\n"
             "    }\n"
             "    store(out + i, steps);\n"
             "    store(iters + arange(0, 1), it + zeros([1], i32));\n"
             "}\n",
             "collatz");
    int32_t x[64], out[64], iters = -1;
    int maxs = 0;
    for (int i = 0; i < 64; i++) {
        x[i] = 1 + i * 3;
        if (collatz_steps(x[i]) > maxs) maxs = collatz_steps(x[i]);
    }
    for (int cap = 1000; cap >= 10; cap = cap == 1000 ? 10 : 0) {
        uint64_t dx = upload(&k, x, sizeof x), dout = upload(&k, out, sizeof out), di = upload(&k, &iters, 4);
        void *params[] = {&dx, &dout, &di, &cap};
        launch(&k, 1, params);
        download(&k, out, dout, sizeof out);
        download(&k, &iters, di, 4);
        int want_it = cap == 1000 ? maxs + 1 : cap;
        cr_expect_eq(iters, want_it, "cap %d: %d iterations, want %d", cap, iters, want_it);
        for (int i = 0; i < 64; i++) {
            int s = collatz_steps(x[i]);
            int w = s < cap ? s : cap;
            cr_expect_eq(out[i], w, "cap %d: collatz(%d): %d, want %d", cap, x[i], out[i], w);
        }
    }
    unload(&k);
}

/* `continue` and `break` in a `for`: sum the odd elements until the first negative one. */
Test(lang_run, for_break_continue) {
    K k;
    load_src(&k,
             "@num_warps(1)\n"
             "kernel k(x: *i32, n: i32, out: *i32) {\n"
             "    let s = 0;\n"
             "    let last = -1;\n"
             "    for i in range(0, n) {\n"
             "        let v = load(x + i);\n"
             "        if v < 0 { break; }\n"
             "        last = i;\n"
             "        if v % 2 == 0 { continue; }\n"
             "        s += v;\n"
             "    }\n"
             "    store(out, s);\n"
             "    store(out + 1, last);\n"
             "}\n",
             "k");
    int32_t x[50], out[2];
    for (int i = 0; i < 50; i++) x[i] = i * 5 % 17;
    x[37] = -3;
    uint64_t dx = upload(&k, x, sizeof x), dout = upload(&k, out, sizeof out);
    int n = 50;
    void *params[] = {&dx, &n, &dout};
    launch(&k, 1, params);
    download(&k, out, dout, sizeof out);
    int s = 0;
    for (int i = 0; i < 37; i++)
        if (x[i] % 2) s += x[i];
    cr_expect_eq(out[0], s, "sum %d, want %d", out[0], s);
    cr_expect_eq(out[1], 36, "last %d, want 36", out[1]);
    unload(&k);
}

/* A loop over u32 bounds counts in i64, which holds every u32: in i32 a bound past 2^31 was negative,
 * so range(0, n) ran nothing and range(n - 3, n) ran from a negative start. */
Test(lang_run, range_of_u32_bounds) {
    K k;
    load_src(&k,
             "@num_warps(1)\n"
             "kernel k(out: *i64, n: u32) {\n"
             "    let c = 0;\n"
             "    for i in range(0 as u32, n, 1000000007) { static_assert(dtype_of(i) == i64, \"i64\"); c += 1; }\n"
             "    store(out, c as i64);\n"
             "    let s = 0 as i64;\n"
             "    for i in range(n - 3, n) { s = s * 10 + i % 10; }\n"
             "    store(out + 1, s);\n"
             "    let d = 0 as i64;\n"
             "    for i in range(n, n - 5, -2) { d = d * 10 + i % 10; }\n"
             "    store(out + 2, d);\n"
             "}\n",
             "k");
    uint32_t ns[] = {3000000005u, 7u, 4294967295u};
    for (int t = 0; t < 3; t++) {
        uint32_t n = ns[t];
        uint64_t dout = poisoned(&k, 3 * sizeof(int64_t));
        void *params[] = {&dout, &n};
        launch(&k, 1, params);
        int64_t out[3];
        download(&k, out, dout, sizeof out);
        int64_t c = ((int64_t)n + 1000000006) / 1000000007, s = 0, d = 0;
        for (int64_t i = (int64_t)(uint32_t)(n - 3); i < n; i++) s = s * 10 + i % 10;
        for (int64_t i = n; i > (int64_t)(uint32_t)(n - 5); i -= 2) d = d * 10 + i % 10;
        cr_expect_eq(out[0], c, "n = %u: %lld iterations, want %lld", n, (long long)out[0], (long long)c);
        cr_expect_eq(out[1], s, "n = %u: range(n - 3, n) gave %lld, want %lld", n, (long long)out[1], (long long)s);
        cr_expect_eq(out[2], d, "n = %u: range(n, n - 5, -2) gave %lld, want %lld", n, (long long)out[2], (long long)d);
    }
    unload(&k);
}

/* A spin lock: the programs take turns in a critical section that increments a plain
 * (non-atomic) counter. */
Test(lang_run, while_spin_lock) {
    K k;
    load_src(&k,
             "@num_warps(2)\n"
             "kernel k(lock: *i32, counter: *i32, order: *i32) {\n"
             "    while atomic_cas(lock, 0, 1) == 1 {}\n"
             "    let c = load(counter);\n"
             "    store(order + c, program_id(0));\n"
             "    store(counter, c + 1);\n"
             "    atomic_xchg(lock, 0);\n"
             "}\n",
             "k");
    enum { P = 12 };
    int32_t lock = 0, counter = 0, order[P];
    memset(order, 0xff, sizeof order);
    uint64_t dl = upload(&k, &lock, 4), dc = upload(&k, &counter, 4), dord = upload(&k, order, sizeof order);
    void *params[] = {&dl, &dc, &dord};
    launch(&k, P, params);
    download(&k, &lock, dl, 4), download(&k, &counter, dc, 4), download(&k, order, dord, sizeof order);
    cr_expect_eq(counter, P, "counter %d, want %d", counter, P);
    cr_expect_eq(lock, 0, "the lock is still held");
    bool seen[P] = {0};
    for (int i = 0; i < P; i++) {
        cr_assert(order[i] >= 0 && order[i] < P && !seen[order[i]], "order[%d] = %d", i, order[i]);
        seen[order[i]] = true;
    }
    unload(&k);
}

/* `a if c else b` on a run-time scalar c runs only the side it picks, as Triton's scf.if: a side that would load past
 * the end of its buffer is not run (memcheck reported the load when both sides ran as where's), nor is an atomic on
 * the other side; nested, with a tile on each side, and in a loop whose carried values both sides read.  Inputs
 * random, outputs poisoned, a float64 reference. */
Test(lang_run, ternary_runs_only_its_side) {
    seed_rng();
    K k;
    load_src(&k,
             "@num_warps(1)\n"
             "kernel guarded(x: *f32, y: *f32, out: *f32, rows: *f32, n: i32, m: i32) {\n"
             "    let pid = program_id(0);\n"
             "    let v = load(x + pid) * 2.0 if pid < n else -1.5;\n"
             "    let w = load(x + pid) if pid < n else (load(y + (pid - n)) + 0.25 if pid < n + m else 7.0);\n"
             "    let o = arange(0, 8);\n"
             "    let r = load(x + pid * 8 + o) if pid < n / 8 else full([8], 0.5, f32);\n"
             "    store(out + pid * 2, v);\n"
             "    store(out + pid * 2 + 1, w);\n"
             "    store(rows + pid * 8 + o, r);\n"
             "}\n"
             "fn bump(p) { store(p, load(p) + 1); return 5; }\n"
             "@num_warps(1)\n"
             "kernel counted(cnt: *i32, out: *i32, n: i32) {\n"
             "    let pid = program_id(0);\n"
             "    store(out + pid, atomic_add(cnt, 1) if pid < n else atomic_add(cnt + 1, 10) + 1000);\n"
             "    store(out + num_programs(0) + pid, bump(cnt + 2) if pid == 3 else pid);\n"
             "}\n"
             "@num_warps(1)\n"
             "kernel looped(x: *f32, d: *i32, out: *f32, outc: *i32, n: i32, m: i32) {\n"
             "    let acc = 0.0;\n"
             "    let c = 0;\n"
             "    for i in range(0, m) {\n"
             "        acc = acc * 0.5 + load(x + i) if i < n else acc - 1.0;\n"
             "        c = c * 3 - load(d + i) if i < n else c + i;\n"
             "    }\n"
             "    store(out, acc);\n"
             "    store(outc, c);\n"
             "}\n",
             "guarded");
    enum { N = 45, M = 9, P = 61, NL = 37, ML = 53 };
    float x[N], y[M], out[2 * P], rows[8 * P];
    for (int i = 0; i < N; i++) x[i] = (float)urand();
    for (int i = 0; i < M; i++) y[i] = (float)urand();
    int32_t n = N, m = M;
    uint64_t dx = upload(&k, x, sizeof x), dy = upload(&k, y, sizeof y), dout = poisoned(&k, sizeof out), drows = poisoned(&k, sizeof rows);
    void *params[] = {&dx, &dy, &dout, &drows, &n, &m};
    launch(&k, P, params);
    download(&k, out, dout, sizeof out), download(&k, rows, drows, sizeof rows);
    for (int p = 0; p < P; p++) {
        double v = p < N ? 2.0 * x[p] : -1.5, w = p < N ? x[p] : p < N + M ? (double)y[p - N] + 0.25 : 7.0;
        cr_expect(fabs(out[2 * p] - v) <= 1e-6 * (1 + fabs(v)), "program %d: v = %g, want %g", p, out[2 * p], v);
        cr_expect(fabs(out[2 * p + 1] - w) <= 1e-6 * (1 + fabs(w)), "program %d: w = %g, want %g", p, out[2 * p + 1], w);
        for (int e = 0; e < 8; e++) {
            double r = p < N / 8 ? x[p * 8 + e] : 0.5;
            cr_expect_eq(rows[p * 8 + e], (float)r, "program %d row[%d] = %g, want %g", p, e, rows[p * 8 + e], r);
        }
    }

    k.fn = fn_of(&k, "counted");
    for (int t = 0; t < 2; t++) {
        int32_t cn = t ? P + 5 : 23, cnt[3] = {0, 0, 40}, outc[2 * P];
        uint64_t dcnt = upload(&k, cnt, sizeof cnt), doutc = poisoned(&k, sizeof outc);
        void *cparams[] = {&dcnt, &doutc, &cn};
        launch(&k, P, cparams);
        download(&k, cnt, dcnt, sizeof cnt), download(&k, outc, doutc, sizeof outc);
        int lo = cn < P ? cn : P;
        cr_expect_eq(cnt[0], lo, "n = %d: the first atomic ran %d times, want %d", cn, cnt[0], lo);
        cr_expect_eq(cnt[1], 10 * (P - lo), "n = %d: the second atomic added %d, want %d", cn, cnt[1], 10 * (P - lo));
        cr_expect_eq(cnt[2], 41, "n = %d: the store in bump ran %d times, want once", cn, cnt[2] - 40);
        for (int p = 0; p < P; p++) cr_expect_eq(outc[P + p], p == 3 ? 5 : p, "n = %d: program %d got %d", cn, p, outc[P + p]);
        bool seen[P] = {0};
        for (int p = 0; p < P; p++) { /* each side's old values: 0 .. lo - 1, and 1000 + 10 k */
            int j = p < lo ? outc[p] : (outc[p] - 1000) / 10;
            bool ok = p < lo ? outc[p] >= 0 && outc[p] < lo : outc[p] >= 1000 && outc[p] % 10 == 0 && j < P - lo;
            cr_expect(ok && !seen[p < lo ? j : lo + j], "n = %d: program %d got %d", cn, p, outc[p]);
            if (ok) seen[p < lo ? j : lo + j] = true;
        }
    }

    k.fn = fn_of(&k, "looped");
    float xl[NL], acc;
    int32_t dl[NL], c, nl = NL, ml = ML;
    for (int i = 0; i < NL; i++) xl[i] = (float)urand(), dl[i] = irand(7) - 3;
    uint64_t dxl = upload(&k, xl, sizeof xl), ddl = upload(&k, dl, sizeof dl), dacc = poisoned(&k, 4), dc = poisoned(&k, 4);
    void *lparams[] = {&dxl, &ddl, &dacc, &dc, &nl, &ml};
    launch(&k, 1, lparams);
    download(&k, &acc, dacc, 4), download(&k, &c, dc, 4);
    double racc = 0;
    uint32_t rc = 0; /* i32 arithmetic wraps */
    for (int i = 0; i < ML; i++) {
        racc = i < NL ? racc * 0.5 + xl[i] : racc - 1.0;
        rc = i < NL ? rc * 3u - (uint32_t)dl[i] : rc + (uint32_t)i;
    }
    cr_expect(fabs(acc - racc) <= 1e-5 * (1 + fabs(racc)), "loop: acc = %g, want %g", acc, racc);
    cr_expect_eq(c, (int32_t)rc, "loop: c = %d, want %d", c, (int32_t)rc);
    unload(&k);
}

/* A side with a dot on it is computed only where the condition picks it (an `if`, not both dots and a select:
 * lang_ir/ternary_runs_only_its_side checks the IR): each program multiplies its own r x c tile (13 x 11, not the
 * 16 x 16 of the dot) by b, or b by it and halves that.  Inputs random, output poisoned, a float64 reference. */
Test(lang_run, ternary_dot_sides) {
    seed_rng();
    K k;
    load_src(&k,
             "@num_warps(1)\n"
             "kernel pick(a: *f32, b: *f32, out: *f32, n: i32, r: i32, c: i32) {\n"
             "    let pid = program_id(0);\n"
             "    let i = arange(0, 16);\n"
             "    let m = (i < r)[:, None] && (i < c)[None, :];\n"
             "    let o = i[:, None] * 16 + i[None, :];\n"
             "    let ta = load(a + pid * 256 + o, m, 0.0);\n"
             "    let tb = load(b + o, m, 0.0);\n"
             "    store(out + pid * 256 + o, dot(ta, tb) if pid < n else dot(tb, ta) * 0.5, m);\n"
             "}\n",
             "pick");
    enum { P = 5, R = 13, C = 11 };
    static float a[P * 256], b[256], out[P * 256];
    for (int i = 0; i < P * 256; i++) a[i] = (float)urand();
    for (int i = 0; i < 256; i++) b[i] = (float)urand();
    int32_t n = 3, r = R, c = C;
    uint64_t da = upload(&k, a, sizeof a), db = upload(&k, b, sizeof b), dout = poisoned(&k, sizeof out);
    void *params[] = {&da, &db, &dout, &n, &r, &c};
    launch(&k, P, params);
    download(&k, out, dout, sizeof out);
    for (int p = 0; p < P; p++)
        for (int i = 0; i < 16; i++)
            for (int j = 0; j < 16; j++) {
                float got = out[p * 256 + i * 16 + j];
                if (i >= R || j >= C) { /* masked off: still the poison */
                    cr_expect(isnan(got), "program %d [%d][%d] = %g, want untouched", p, i, j, got);
                    continue;
                }
                double want = 0; /* masked-off elements load as 0 */
                for (int q = 0; q < 16; q++) {
                    double x = p < n ? (q < C ? a[p * 256 + i * 16 + q] : 0) : (q < C ? b[i * 16 + q] : 0);
                    double y = p < n ? (q < R ? b[q * 16 + j] : 0) : (q < R ? a[p * 256 + q * 16 + j] : 0);
                    want += x * y;
                }
                if (p >= n) want *= 0.5;
                cr_expect(fabs(got - want) <= 1e-5 * (1 + fabs(want)), "program %d [%d][%d] = %g, want %g", p, i, j, got, want);
            }
    unload(&k);
}

/* `a if c else b` between tuples of one skeleton chooses leaf by leaf, as between values: on a run-time scalar c, sides
 * that are cheap and pure selected (scalars, and tiles of 8), sides that load in an `if` (the load of y past its n
 * elements not run), nested tuples with a constant leaf; on a tile c element-wise (the larger and the smaller of two
 * tiles).  Inputs random, m not a multiple of the tile, outputs poisoned (masked-off elements stay so), a float64
 * reference. */
Test(lang_run, ternary_between_tuples) {
    seed_rng();
    K k;
    load_src(&k,
             "@num_warps(1)\n"
             "kernel tup(x: *f32, y: *f32, out: *f32, idx: *i32, rows: *f32, n: i32, m: i32) {\n"
             "    let pid = program_id(0);\n"
             "    let a = load(x + pid % n);\n"
             "    let (s, t) = (a * 2.0, a + 1.0) if pid % 3 == 0 else (a - 1.0, 0.5);\n"
             "    let (u, (j, w)) = (load(x + pid), (pid * 2, load(y + pid) + 0.25)) if pid < n else (-1.5, (7, a));\n"
             "    store(out + pid * 4, s);\n"
             "    store(out + pid * 4 + 1, t);\n"
             "    store(out + pid * 4 + 2, u);\n"
             "    store(out + pid * 4 + 3, w);\n"
             "    let o = arange(0, 8);\n"
             "    let g = pid * 8 + o;\n"
             "    let mk = g < m;\n"
             "    let v = load(x + g, mk, 0.0);\n"
             "    let z = load(x + (m - 1 - g), mk, 0.0);\n"
             "    let (hi, lo) = (v, z) if v > z else (z, v);\n"
             "    let (r1, r2) = (hi * 2.0, lo) if pid % 2 == 0 else (full([8], 0.5, f32), hi - lo);\n"
             "    let (r3, q) = (load(y + g, g < n, 0.0) * 3.0, pid) if pid < n / 8 else (lo, -pid);\n"
             "    store(rows + g, r1, mk);\n"
             "    store(rows + 8 * num_programs(0) + g, r2, mk);\n"
             "    store(rows + 16 * num_programs(0) + g, r3, mk);\n"
             "    store(idx + pid * 2, j);\n"
             "    store(idx + pid * 2 + 1, q);\n"
             "}\n",
             "tup");
    enum { P = 23, N = 17, X = 8 * P, M = X - 5 };
    float x[X], y[N], out[4 * P], rows[3 * X];
    int32_t idx[2 * P];
    for (int i = 0; i < X; i++) x[i] = (float)urand();
    for (int i = 0; i < N; i++) y[i] = (float)urand();
    int32_t n = N, m = M;
    uint64_t dx = upload(&k, x, sizeof x), dy = upload(&k, y, sizeof y), dout = poisoned(&k, sizeof out),
             didx = poisoned(&k, sizeof idx), drows = poisoned(&k, sizeof rows);
    void *params[] = {&dx, &dy, &dout, &didx, &drows, &n, &m};
    launch(&k, P, params);
    download(&k, out, dout, sizeof out), download(&k, idx, didx, sizeof idx), download(&k, rows, drows, sizeof rows);
    for (int p = 0; p < P; p++) {
        double a = x[p % N];
        double want[4] = {p % 3 == 0 ? a * 2.0 : a - 1.0, p % 3 == 0 ? a + 1.0 : 0.5, p < N ? x[p] : -1.5,
                          p < N ? (double)y[p] + 0.25 : a};
        for (int e = 0; e < 4; e++)
            cr_expect(fabs(out[p * 4 + e] - want[e]) <= 1e-6 * (1 + fabs(want[e])), "program %d: value %d = %g, want %g", p, e,
                      out[p * 4 + e], want[e]);
        cr_expect_eq(idx[p * 2], p < N ? 2 * p : 7, "program %d: j = %d", p, idx[p * 2]);
        cr_expect_eq(idx[p * 2 + 1], p < N / 8 ? p : -p, "program %d: q = %d", p, idx[p * 2 + 1]);
        for (int e = 0; e < 8; e++) {
            int g = p * 8 + e;
            if (g >= M) { /* masked off: still the poison */
                for (int r = 0; r < 3; r++) cr_expect(isnan(rows[r * X + g]), "rows %d [%d] = %g, want untouched", r, g, rows[r * X + g]);
                continue;
            }
            double v = x[g], z = x[M - 1 - g], hi = v > z ? v : z, lo = v > z ? z : v;
            double want_r[3] = {p % 2 == 0 ? hi * 2.0 : 0.5, p % 2 == 0 ? lo : hi - lo, p < N / 8 ? (g < N ? y[g] : 0.0) * 3.0 : lo};
            for (int r = 0; r < 3; r++)
                cr_expect(fabs(rows[r * X + g] - want_r[r]) <= 1e-6 * (1 + fabs(want_r[r])), "program %d: rows %d [%d] = %g, want %g", p,
                          r, g, rows[r * X + g], want_r[r]);
        }
    }
    unload(&k);
}

/* `return` inside run-time `if`s of device functions (not in loops), as Triton's branches return: an early return,
 * an if/else that both return, nested ifs, an else-if chain, a tuple, no value, constants of both paths merged into one
 * run-time value; called inside a loop and from map_elementwise's scalar fn (branching per element). */
Test(lang_run, fn_return_in_run_time_if) {
    const char *src =
        "fn pick(x, n) { if n > 3 { return x * 2.0; } return x + 1.0; }\n"
        "fn act(x, kind) { if kind == 1 { return maximum(x, 0.0); } else { return x; } }\n"
        "fn nest(x, a, b) {\n"
        "    if a > 0 {\n"
        "        if b > 0 { return (x * 3.0, 1); }\n"
        "        return (x - 1.0, 2);\n"
        "    }\n"
        "    let y = x * x;\n"
        "    if b > 5 { return (y, 3); } else if b < 0 { pass; } else { y += 0.5; }\n"
        "    return (y, 4);\n"
        "}\n"
        "fn put(p, v, m, skip) { if skip == 0 { return; } store(p, v, mask=m); }\n"
        "fn clampv(v) { if v < 0.0 { return 0.0; } if v > 1.0 { return 1.0; } return v; }\n"
        "fn sgn(v) { if v < 0.0 { return -1; } return 1; }\n"
        "fn viafn(v) { return clampv(v) * 2.0 + sgn(v); }\n"
        "@num_warps(2)\n"
        "kernel k(x: *f32, y: *f32, w: *f32, z: *i32, u: *f32, n: i32, kind: i32, a: i32, b: i32, skip: i32) {\n"
        "    let i = program_id(0) * 64 + arange(0, 64);\n"
        "    let m = i < n;\n"
        "    let v = load(x + i, mask=m, other=0.0);\n"
        "    let acc = zeros([64], f32);\n"
        "    for j in range(0, 2) { acc += act(pick(v, j + b), kind); }\n"
        "    store(y + i, acc, mask=m);\n"
        "    let (t, c) = nest(v, a, b);\n"
        "    store(w + i, t, mask=m);\n"
        "    store(z + i, c, mask=m);\n"
        "    put(u + i, map_elementwise(viafn, v), m, skip);\n"
        "}\n";
    enum { N = 203 };
    static const int32_t cases[][4] = {{1, 1, 1, 1}, {0, 1, 3, 0}, {2, 0, 7, 1}, {1, -1, 2, 1}, {0, 0, -2, 1}}; /* kind, a, b, skip */
    float x[N], y[N], w[N], u[N];
    int32_t z[N];
    seed_rng();
    for (int i = 0; i < N; i++) x[i] = (float)(1.5 * urand());
    K k;
    load_src(&k, src, "k");
    uint64_t dx = upload(&k, x, sizeof x);
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        int32_t n = N, kind = cases[ci][0], a = cases[ci][1], b = cases[ci][2], skip = cases[ci][3];
        uint64_t dy = poisoned(&k, sizeof y), dw = poisoned(&k, sizeof w), dz = poisoned(&k, sizeof z), du = poisoned(&k, sizeof u);
        void *p[] = {&dx, &dy, &dw, &dz, &du, &n, &kind, &a, &b, &skip};
        launch(&k, (N + 63) / 64, p);
        download(&k, y, dy, sizeof y);
        download(&k, w, dw, sizeof w);
        download(&k, z, dz, sizeof z);
        download(&k, u, du, sizeof u);
        int bad = 0;
        for (int i = 0; i < N && bad < 8; i++) {
            double v = x[i], acc = 0;
            for (int j = 0; j < 2; j++) {
                double pk = j + b > 3 ? v * 2.0 : v + 1.0;
                acc += kind == 1 ? fmax(pk, 0.0) : pk;
            }
            double t = a > 0 ? (b > 0 ? v * 3.0 : v - 1.0) : (b > 5 || b < 0 ? v * v : v * v + 0.5);
            int c = a > 0 ? (b > 0 ? 1 : 2) : (b > 5 ? 3 : 4);
            double uu = (v < 0 ? 0.0 : v > 1 ? 1.0 : v) * 2.0 + (v < 0 ? -1 : 1);
            uint32_t ub;
            memcpy(&ub, &u[i], 4);
            bool ok = fabs(y[i] - acc) <= 1e-6 * (1 + fabs(acc)) && fabs(w[i] - t) <= 1e-6 * (1 + fabs(t)) && z[i] == c &&
                      (skip ? fabs(u[i] - uu) <= 1e-6 * (1 + fabs(uu)) : ub == 0xffffffffu);
            if (!ok) {
                cr_expect(0, "case %zu [%d] x=%g: y %g (want %g) w %g (%g) z %d (%d) u %g (%g) (seed %llu)", ci, i, v, y[i], acc, w[i],
                          t, z[i], c, u[i], skip ? uu : NAN, (unsigned long long)seed);
                bad++;
            }
        }
    }
    unload(&k);
}

/* A fn's `return`s inside run-time `if`s whose branches may both go on (`if s > t { if s < u { return ..; } ... }`):
 * the statements after such an `if` are generated once, after it, where no path returned (they were copied into
 * both branches, so 12 such ifs made 80,000 lines of Tile IR and 14 hit the size bound).  early_steps(k): k in a
 * row, returning a tuple whose constant element says which returned; early_deep(d): nested d deep, each level
 * with statements after its inner level; the kernel's own `return` so.  Against host values per program (s per
 * program: paths differ), and the front end's Tile IR of 20 in a row within 3 times that of 10 (it doubled with
 * each). */
static void early_steps_src(char *buf, size_t cap, int k) {
    size_t n = (size_t)snprintf(buf, cap, "fn early_steps(x, s) {\n");
    for (int i = 0; i < k; i++)
        n += (size_t)snprintf(buf + n, cap - n, "    if s > %d.0 { if s < %d.5 { return (x * %d.0, %d); } s = s - 0.125; }\n"
                              "    x = x + s;\n", i, i, i + 2, i);
    snprintf(buf + n, cap - n, "    return (x, -1);\n}\n");
}

static void early_deep_src(char *buf, size_t cap, int d) {
    size_t n = (size_t)snprintf(buf, cap, "fn early_deep(x, s) {\n");
    for (int i = 0; i < d; i++)
        n += (size_t)snprintf(buf + n, cap - n, "if s > %d.0 {\n if s < %d.25 { return x * %d.0; }\n x = x + s;\n", i, i, i + 2);
    n += (size_t)snprintf(buf + n, cap - n, "x = x * 0.5;\n");
    for (int i = 0; i < d; i++) n += (size_t)snprintf(buf + n, cap - n, "x = x - 1.0;\n}\n");
    snprintf(buf + n, cap - n, "return x;\n}\n");
}

/* the host's early_deep from level i of d (1: returned, *x its value; 0: *x goes on) */
static int early_deep_ref(int i, int d, double *x, float s) {
    if (i == d) {
        *x *= 0.5;
        return 0;
    }
    if (!(s > (float)i)) return 0;
    if (s < (float)i + 0.25f) {
        *x *= i + 2;
        return 1;
    }
    *x += s;
    if (early_deep_ref(i + 1, d, x, s)) return 1;
    *x -= 1.0;
    return 0;
}

static size_t src_frontend_lines(const char *src) {
    tile_compile_options o = {.dump_after = "frontend", .tir_only = 1};
    tile_compiled c;
    tile_status st = tile_compile_source("t.tile", src, &o, &c);
    cr_assert_eq(st, TILE_OK, "%s\n%s", tile_status_string(st), c.diagnostics);
    size_t lines = 0;
    for (const char *p = c.dump; p && *p; p++) lines += *p == '\n';
    tile_compiled_free(&c);
    return lines;
}

static size_t frontend_lines(const char *fn_src) {
    char src[8192];
    snprintf(src, sizeof src, "%skernel k(p: *f32, q: *i32, s: f32) { let (y, c) = early_steps(load(p + arange(0, 16)), s); "
             "store(p + arange(0, 16), y); store(q, c); }\n", fn_src);
    return src_frontend_lines(src);
}

Test(lang_run, fn_early_returns_stay_linear) {
    enum { KS = 20, D = 8, N = 16 * 48 - 5, P = (N + 15) / 16 };
    char steps[4096], deep[4096], src[12288];
    early_steps_src(steps, sizeof steps, KS);
    early_deep_src(deep, sizeof deep, D);
    snprintf(src, sizeof src,
             "%s%s@num_warps(1)\n"
             "kernel k(px: *f32, ps: *f32, py: *f32, pc: *i32, pz: *f32, pw: *i32, n: i32) {\n"
             "    let pid = program_id(0);\n"
             "    let i = pid * 16 + arange(0, 16);\n"
             "    let m = i < n;\n"
             "    let x = load(px + i, mask=m, other=0.0);\n"
             "    let s = load(ps + pid);\n"
             "    let (y, c) = early_steps(x, s);\n"
             "    store(py + i, y, mask=m);\n"
             "    store(pc + pid, c);\n"
             "    store(pz + i, early_deep(x, s), mask=m);\n"
             "    let w = 2;\n"
             "    if s > 3.0 { if s < 9.0 { return; } w = 3; }\n"
             "    store(pw + pid, w);\n"
             "}\n",
             steps, deep);
    static float x[N], s[P], y[N], z[N];
    static int32_t c[P], w[P];
    seed_rng();
    for (int i = 0; i < N; i++) x[i] = (float)urand();
    for (int p = 0; p < P; p++) /* a whole number from -1 to 21 and eighths: the windows of the steps and the levels */
        s[p] = (float)((int)((urand() + 1.0) * 11.0) - 1) + (float)((int)((urand() + 1.0) * 4.0)) * 0.125f;
    for (int p = 0; p < D; p++) s[3 * p] = (float)p + 0.125f; /* early_deep returns at each level */
    K k;
    load_src(&k, src, "k");
    uint64_t dx = upload(&k, x, sizeof x), ds = upload(&k, s, sizeof s);
    uint64_t dy = poisoned(&k, sizeof y), dc = poisoned(&k, sizeof c), dz = poisoned(&k, sizeof z);
    uint64_t dw = poisoned(&k, sizeof w);
    int32_t n = N;
    void *prm[] = {&dx, &ds, &dy, &dc, &dz, &dw, &n};
    launch(&k, P, prm);
    download(&k, y, dy, sizeof y);
    download(&k, c, dc, sizeof c);
    download(&k, z, dz, sizeof z);
    download(&k, w, dw, sizeof w);
    unload(&k);
    int bad = 0, returned[2] = {0, 0};
    for (int p = 0; p < P && bad < 8; p++) {
        float sp = s[p];
        int want_c = -1, j = 0;
        for (; j < KS; j++) { /* which step returns, and s after those that did not */
            if (sp > (float)j && sp < (float)j + 0.5f) break;
            if (sp > (float)j) sp -= 0.125f;
        }
        if (j < KS) want_c = j;
        returned[0] += want_c >= 0;
        cr_expect_eq(c[p], want_c, "program %d (s = %g): returned at step %d, want %d (seed %llu)", p, s[p], c[p], want_c,
                     (unsigned long long)seed);
        int want_w = s[p] > 3.0f ? (s[p] < 9.0f ? -1 : 3) : 2; /* -1: the poison, the program returned */
        cr_expect_eq(w[p], want_w, "program %d (s = %g): w = %d, want %d", p, s[p], w[p], want_w);
        for (int e = 0; e < 16 && p * 16 + e < N; e++) {
            int g = p * 16 + e;
            double v = x[g], want_y, want_z = v;
            float sq = s[p];
            for (int i = 0; i < KS; i++) { /* early_steps on the host */
                if (sq > (float)i) {
                    if (sq < (float)i + 0.5f) break;
                    sq -= 0.125f;
                }
                v += sq;
            }
            want_y = want_c >= 0 ? v * (want_c + 2) : v;
            returned[1] += e == 0 && early_deep_ref(0, D, &want_z, s[p]);
            if (e != 0) early_deep_ref(0, D, &want_z, s[p]);
            if (fabs(y[g] - want_y) > 1e-5 * (1 + fabs(want_y)) || fabs(z[g] - want_z) > 1e-5 * (1 + fabs(want_z))) {
                cr_expect(0, "program %d [%d] (s = %g, x = %g): y %g (want %g) z %g (want %g) (seed %llu)", p, e, s[p], x[g], y[g],
                          want_y, z[g], want_z, (unsigned long long)seed);
                bad++;
            }
        }
    }
    cr_expect(returned[0] > 0 && returned[0] < P && returned[1] > 0 && returned[1] < P,
              "programs returning early: %d and %d of %d (both paths wanted)", returned[0], returned[1], P);
    char s10[4096];
    early_steps_src(s10, sizeof s10, 10);
    size_t l10 = frontend_lines(s10), l20 = frontend_lines(steps);
    cr_expect(l20 < 3 * l10 && l20 > l10, "Tile IR of 20 early-return ifs: %zu lines, of 10: %zu (want linear growth)", l20, l10);
}

/* A loop body of k steps, each a run-time `if` that may `continue` and may go on (so the rest of the body follows
 * it once, under the hidden flag of whether the path jumped, not copied into both branches: 2^k copies). */
static void jump_steps_src(char *buf, size_t cap, int k) {
    size_t n = (size_t)snprintf(buf, cap, "@num_warps(1)\n"
                                "kernel k(px: *f32, ps: *f32, py: *f32, trips: i32, n: i32) {\n"
                                "    let pid = program_id(0);\n"
                                "    let i = pid * 16 + arange(0, 16);\n"
                                "    let m = i < n;\n"
                                "    let x = load(px + i, mask=m, other=0.0);\n"
                                "    let s = load(ps + pid);\n"
                                "    let acc = x * 0.0;\n"
                                "    for t in range(trips) {\n");
    for (int j = 0; j < k; j++)
        n += (size_t)snprintf(buf + n, cap - n, "        if s > %d.0 { if (t + %d) %% %d == 0 { continue; } acc = acc + x * %d.0; }\n"
                              "        acc = acc * 0.75;\n", j, j, j % 5 + 2, j + 1);
    snprintf(buf + n, cap - n, "        acc = acc + 1.0;\n    }\n    store(py + i, acc, mask=m);\n}\n");
}

/* Loop bodies whose run-time `if`s may break or continue and may go on: 16 in a row in a `for`, and 6 nested
 * `break`s in a `while` (the rest of each level after a deeper `if` that may break), against the host; their Tile
 * IR grows linearly. */
Test(lang_run, loop_jumps_stay_linear) {
    enum { KS = 16, D = 6, TRIPS = 7, N = 16 * 14 - 5, P = (N + 15) / 16 };
    static char steps[8192], deep[8192];
    jump_steps_src(steps, sizeof steps, KS);
    size_t n = (size_t)snprintf(deep, sizeof deep, "@num_warps(1)\n"
                                "kernel k(px: *f32, ps: *f32, pl: *i32, py: *f32, pt: *i32, n: i32) {\n"
                                "    let pid = program_id(0);\n"
                                "    let i = pid * 16 + arange(0, 16);\n"
                                "    let m = i < n;\n"
                                "    let x = load(px + i, mask=m, other=0.0);\n"
                                "    let s = load(ps + pid);\n"
                                "    let lim = load(pl + pid);\n"
                                "    let acc = x * 0.0;\n"
                                "    let last = -1;\n"
                                "    let t = -1;\n"
                                "    while t < %d {\n"
                                "        t += 1;\n"
                                "        last = t;\n", TRIPS - 1);
    for (int j = 0; j < D; j++)
        n += (size_t)snprintf(deep + n, sizeof deep - n, "if s > %d.0 {\n if t == lim - %d { break; }\n acc = acc + x * %d.0;\n", j, j, j + 1);
    n += (size_t)snprintf(deep + n, sizeof deep - n, "acc = acc * 0.5;\n");
    for (int j = 0; j < D; j++) n += (size_t)snprintf(deep + n, sizeof deep - n, "acc = acc - 0.25;\n}\n");
    snprintf(deep + n, sizeof deep - n, "        acc = acc + 1.0;\n    }\n    store(py + i, acc, mask=m);\n    store(pt + pid, last);\n}\n");
    static float x[N], s[P], y[N], z[N];
    static int32_t lim[P], last[P];
    seed_rng();
    for (int i = 0; i < N; i++) x[i] = (float)urand();
    for (int p = 0; p < P; p++) { /* s from -1 to 17 (how many steps or levels apply), lim from 0 to 9 */
        s[p] = (float)((urand() + 1.0) * 9.0 - 1.0);
        lim[p] = (int32_t)((urand() + 1.0) * 5.0);
    }
    s[0] = 20.0f, s[1] = -1.0f, lim[0] = TRIPS + D, lim[1] = 2; /* every step and level, and none */
    int32_t trips = TRIPS, nn = N;
    K k;
    load_src(&k, steps, "k");
    uint64_t dx = upload(&k, x, sizeof x), ds = upload(&k, s, sizeof s), dy = poisoned(&k, sizeof y);
    void *prm[] = {&dx, &ds, &dy, &trips, &nn};
    launch(&k, P, prm);
    download(&k, y, dy, sizeof y);
    unload(&k);
    load_src(&k, deep, "k");
    dx = upload(&k, x, sizeof x), ds = upload(&k, s, sizeof s);
    uint64_t dl = upload(&k, lim, sizeof lim), dz = poisoned(&k, sizeof z), dt = poisoned(&k, sizeof last);
    void *prm2[] = {&dx, &ds, &dl, &dz, &dt, &nn};
    launch(&k, P, prm2);
    download(&k, z, dz, sizeof z);
    download(&k, last, dt, sizeof last);
    unload(&k);
    int bad = 0, broke = 0;
    for (int p = 0; p < P && bad < 8; p++) {
        int want_last = -1;
        for (int e = 0; e < 16 && p * 16 + e < N; e++) {
            int g = p * 16 + e;
            double a = 0, b = 0;
            for (int t = 0; t < TRIPS; t++) { /* the steps on the host */
                int j = 0;
                for (; j < KS; j++) {
                    if (s[p] > (float)j) {
                        if ((t + j) % (j % 5 + 2) == 0) break;
                        a += (double)x[g] * (j + 1);
                    }
                    a *= 0.75;
                }
                if (j == KS) a += 1.0;
            }
            int t = 0;
            for (; t < TRIPS; t++) { /* the levels on the host */
                int d = 0;
                while (d < D && s[p] > (float)d) d++; /* how many levels apply */
                int brk = 0;
                for (int j = 0; j < d && !brk; j++) {
                    if (t == lim[p] - j) brk = 1;
                    else b += (double)x[g] * (j + 1);
                }
                if (brk) break;
                b = (d == D ? b * 0.5 : b) - 0.25 * d + 1.0; /* halved inside the deepest level only */
            }
            want_last = t < TRIPS ? t : TRIPS - 1;
            broke += e == 0 && t < TRIPS;
            if (fabs(y[g] - a) > 1e-4 * (1 + fabs(a)) || fabs(z[g] - b) > 1e-4 * (1 + fabs(b))) {
                cr_expect(0, "program %d [%d] (s = %g, lim = %d, x = %g): steps %g (want %g), levels %g (want %g) (seed %llu)", p, e,
                          s[p], lim[p], x[g], y[g], a, z[g], b, (unsigned long long)seed);
                bad++;
            }
        }
        cr_expect_eq(last[p], want_last, "program %d (s = %g, lim = %d): last trip %d, want %d (seed %llu)", p, s[p], lim[p], last[p],
                     want_last, (unsigned long long)seed);
    }
    cr_expect(broke > 0 && broke < P, "programs that broke: %d of %d (both wanted)", broke, P);
    static char s8[8192];
    jump_steps_src(s8, sizeof s8, 8);
    size_t l8 = src_frontend_lines(s8), l16 = src_frontend_lines(steps);
    cr_expect(l16 < 3 * l8 && l16 > l8, "Tile IR of 16 ifs that may continue: %zu lines, of 8: %zu (want linear growth)", l16, l8);
}
