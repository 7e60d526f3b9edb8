/* test_lang_control.c - control flow on the PTX emulator against host values: loops over u64 bounds, the
 * constants a run-time `if` merges (their types kept), numbers as conditions. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/tile/tile.h"
#include "runtime/device.h"

#include "tests/lang_run.h"

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

/* Conditions of `if` and `while` that are numbers, not i1: non-zero is true (NaN too), as Triton's
 * cond.to(int1): a const 0/1 flag (`if HAS_BIAS`), a run-time i32 countdown (`while m`, also with a break, whose
 * next test is the loop's own), an f32, also of `a if c else b` (it was "condition of 'if' must be 'i1', got 'i32'",
 * and "condition of 'where' must be i1 or an integer, got 'f32'"). */
Test(lang_run, number_conditions) {
    K k;
    load_src(&k,
             "@num_warps(1)\n"
             "kernel k(x: *i32, f: *f32, out: *i32, const HAS: i32 = 1, const NONE = 0) {\n"
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
             "    store(out + pid, r + 1000 * t);\n"
             "}\n",
             "k");
    enum { P = 12 };
    int32_t x[P], out[P];
    float f[P];
    const float fs[] = {0.0f, -0.0f, 0.5f, NAN, -2.0f, 1e30f};
    for (int i = 0; i < P; i++) x[i] = (i * 5) % 9, f[i] = fs[i % 6], out[i] = -1;
    uint64_t dx = upload(&k, x, sizeof x), df = upload(&k, f, sizeof f), dout = upload(&k, out, sizeof out);
    void *params[] = {&dx, &df, &dout};
    launch(&k, P, params);
    download(&k, out, dout, sizeof out);
    for (int i = 0; i < P; i++) {
        int r = 1 + (x[i] ? 2 : 0) + (f[i] != 0.0f || isnan(f[i]) ? 4 : 0) + (f[i] - 0.5f != 0.0f || isnan(f[i]) ? 16 : 32), t = x[i];
        for (int q = x[i]; q; q--)
            if ((t += 10) > 60) break;
        cr_expect_eq(out[i], r + 1000 * t, "x %d f %g: %d, want %d", x[i], f[i], out[i], r + 1000 * t);
    }
    unload(&k);
}
