/* test_lang_triton.c - Triton's language features, compiled from inline sources and run on the
 * emulator against exact references: the axis hints and assume, static_range and range's keywords,
 * the volatile-load wait, atomic_load/atomic_store, reduce_or and squeeze, software pipelining,
 * batched dot, broadcast_to/expand_dims spellings, dims as separate arguments, trailing commas, a constexpr
 * branch in a loop, the conditional expression, the compile-time shape and type queries, dots with M or N below
 * 16, tutorial 09's
 * descriptor GEMM with its split epilogue (against float64)
 * (test_lang_python.c: Python's forms in Triton code; test_lang_triton_values.c: Triton's value and type
 * rules; test_lang_sync.c: waits across programs and launches). */
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

/* Triton's hints: multiple_of/max_contiguous/max_constancy raise the axis analysis' facts so that
 * accesses through run-time offsets vectorize; the values stay what they were, and assume() is
 * llvm.assume.  A row of `stride` floats per program: without the hint the row start is known
 * divisible by nothing, so the load is one float per instruction. */
static const char *hint_src =
    "kernel k(x: *f32, out: *f32, stride: i32, n: i32, const HINT: i1 = true) {\n"
    "    let row = program_id(0);\n"
    "    let base = row * stride;\n"
    "    if HINT { base = multiple_of(base, 16); assume(stride > 0); }\n"
    "    let offs = max_contiguous(multiple_of(arange(0, 256), 256), 256);\n"
    "    let c = max_constancy(offs / 4 * 0 + row, [256]);\n"
    "    let v = load(x + base + offs);\n"
    "    store(out + base + offs, v * 2.0 + c as f32);\n"
    "}\n";

Test(lang_triton, triton_hints) {
    char *with = compile_ptx(hint_src, "sm_80");
    cr_expect_not_null(strstr(with, "ld.global.v2.b32"), "the hinted row start vectorizes the load:\n%s", with);
    free(with);
    /* assume(x >= 0) lets LLVM take x % 16 as a mask, without the fixup for negative x */
    char *rem = compile_ptx("kernel k(out: *i32, x: i32) {\n    assume(x >= 0);\n    store(out, x % 16);\n}\n", "sm_80");
    cr_expect_null(strstr(rem, "shr.s32"), "x %% 16 with x >= 0 assumed needs no sign fixup:\n%s", rem);
    cr_expect_not_null(strstr(rem, "and.b32"), "x %% 16 is x & 15:\n%s", rem);
    free(rem);
    char *src = strdup(hint_src), *p = strstr(src, "= true");
    memcpy(p, "=false", 6);
    char *without = compile_ptx(src, "sm_80");
    cr_expect_null(strstr(without, "ld.global.v2"), "no vector load without the hint:\n%s", without);
    free(without);
    K k;
    load_src(&k, hint_src, "k");
    enum { ROWS = 5, STRIDE = 272 };
    float x[ROWS * STRIDE], o[ROWS * STRIDE];
    for (int i = 0; i < ROWS * STRIDE; i++) x[i] = (float)((i * 7919) % 1000) / 7.0f, o[i] = NAN;
    uint64_t dx = upload(&k, x, sizeof x), d_o = upload(&k, o, sizeof o);
    int32_t stride = STRIDE, n = 256;
    void *params[] = {&dx, &d_o, &stride, &n};
    launch(&k, ROWS, params);
    download(&k, o, d_o, sizeof o);
    for (int r = 0; r < ROWS; r++)
        for (int i = 0; i < STRIDE; i++) {
            float want = i < 256 ? x[r * STRIDE + i] * 2.0f + (float)r : NAN;
            if (i < 256) cr_assert_eq(o[r * STRIDE + i], want, "row %d col %d: %g, want %g", r, i, o[r * STRIDE + i], want);
            else cr_assert(isnan(o[r * STRIDE + i]), "row %d col %d written past the row", r, i);
        }
    free(src);
    unload(&k);
    /* max_constancy of a mask (triton_kernels' swiglu: max_constancy(packed_mask_n, [16])): runs of equal mask bits
     * let the masked load and store go wide, where `offs < n` alone is known constant over no run; n = 100 keeps
     * the hint true, the elements from n on keep their poison */
    const char *mask_src = "kernel k(x: *f32, out: *f32, n: i32, const HINT: i1 = true) {\n"
                           "    let offs = arange(0, 256);\n"
                           "    let m = offs < n;\n"
                           "    if HINT { m = max_constancy(m, [4]); }\n"
                           "    store(out + offs, load(x + offs, m, 0.0) * 2.0, m);\n"
                           "}\n";
    char *mw = compile_ptx(mask_src, "sm_80");
    cr_expect(strstr(mw, "ld.global.v2.b32") && strstr(mw, "st.global.v2.b32"), "the hinted mask vectorizes:\n%s", mw);
    free(mw);
    load_src(&k, mask_src, "k");
    float mx[256], mo[256];
    for (int i = 0; i < 256; i++) mx[i] = (float)((i * 7919) % 1000) / 7.0f, mo[i] = NAN;
    uint64_t dmx = upload(&k, mx, sizeof mx), dmo = upload(&k, mo, sizeof mo);
    int32_t mn = 100;
    launch(&k, 1, (void *[]){&dmx, &dmo, &mn});
    download(&k, mo, dmo, sizeof mo);
    for (int i = 0; i < 256; i++)
        if (i < mn) cr_assert_eq(mo[i], mx[i] * 2.0f, "[%d] = %g", i, mo[i]);
        else cr_assert(isnan(mo[i]), "[%d] written past n", i);
    unload(&k);
}

/* for i in static_range(...): the body unrolled with i a compile-time int, so `if i % 2 == 0` picks
 * code and shapes may depend on i; counting down; nested in a run-time loop; assignments carry
 * from one copy to the next. */
Test(lang_triton, static_range) {
    K k;
    load_src(&k,
             "kernel k(x: *f32, out: *f32, n: i32) {\n"
             "    let offs = arange(0, 128);\n"
             "    let acc = zeros([128], f32);\n"
             "    for i in static_range(4) {\n"
             "        if i % 2 == 0 { acc += load(x + i * 128 + offs, offs < n, 0.0); }\n"
             "        else { acc -= 2.0 * load(x + i * 128 + offs, offs < n, 0.0); }\n"
             "    }\n"
             "    let t = 0;\n"
             "    for j in range(0, 3) {\n"
             "        for i in static_range(3, 0, -1) { t += i * j; }\n"
             "    }\n"
             "    for s in static_range(0, 2) {\n"
             "        let w = arange(0, 32 * (s + 1));\n"
             "        store(out + 128 + 32 * s + w, full([32 * (s + 1)], (s + 1) as f32), w < 32);\n"
             "    }\n"
             "    store(out + offs, acc + t as f32, offs < n);\n"
             "}\n",
             "k");
    float x[512], o[192];
    for (int i = 0; i < 512; i++) x[i] = (float)((i * 37) % 23) - 11.0f;
    for (int i = 0; i < 192; i++) o[i] = NAN;
    uint64_t dx = upload(&k, x, sizeof x), d_o = upload(&k, o, sizeof o);
    int32_t n = 100;
    void *params[] = {&dx, &d_o, &n};
    launch(&k, 1, params);
    download(&k, o, d_o, sizeof o);
    for (int i = 0; i < 128; i++) {
        if (i >= n) {
            cr_assert(isnan(o[i]), "o[%d] written past n", i);
            continue;
        }
        double want = (double)x[i] - 2.0 * x[128 + i] + x[256 + i] - 2.0 * x[384 + i] + 18.0; /* t = 6 * (0+1+2) */
        cr_assert_eq(o[i], (float)want, "o[%d] = %g, want %g", i, o[i], want);
    }
    for (int i = 0; i < 32; i++) cr_assert_eq(o[128 + i], 1.0f, "first copy's store at %d: %g", i, o[128 + i]);
    for (int i = 0; i < 32; i++) cr_assert_eq(o[160 + i], 2.0f, "second copy's store at %d: %g", i, o[160 + i]);
    unload(&k);
}

/* range(..., num_stages=S), as Triton's tl.range: this loop's pipeline depth instead of the kernel's
 * (@num_stages(1) here, which pipelines nothing); the other keywords are accepted. */
static const char *range_stages_src =
    "@num_stages(1)\n"
    "kernel mm(a: *f16, b: *f16, c: *f32, K: i32, const ST: i32 = 4) {\n"
    "    let rm = arange(0, 64);\n"
    "    let rn = arange(0, 64);\n"
    "    let rk = arange(0, 32);\n"
    "    let acc = zeros([64, 64], f32);\n"
    "    for k in range(0, K, 32, num_stages=ST, loop_unroll_factor=2, flatten=false, warp_specialize=false) {\n"
    "        let x = load(a + rm[:, None] * K + (k + rk)[None, :], (k + rk)[None, :] < K, 0.0);\n"
    "        let y = load(b + (k + rk)[:, None] * 64 + rn[None, :], (k + rk)[:, None] < K, 0.0);\n"
    "        acc = dot(x, y, acc);\n"
    "    }\n"
    "    store(c + rm[:, None] * 64 + rn[None, :], acc);\n"
    "}\n";

Test(lang_triton, range_num_stages) {
    char *four = compile_ptx(range_stages_src, "sm_80");
    cr_expect_not_null(strstr(four, "cp.async.wait_group 2"), "4 stages: the loop waits until 2 groups are pending:\n%s", four);
    free(four);
    char *src = strdup(range_stages_src);
    char *st = strstr(src, "= 4)");
    st[2] = '0';
    char *none = compile_ptx(src, "sm_80");
    cr_expect_null(strstr(none, "cp.async"), "num_stages=0: no pipeline:\n%s", none);
    free(none);
    /* the kernel's num_stages takes the loop's range: 0 (Triton's AMD configs) pipelines nothing, up to 16 */
    char *k0 = strdup(src), *k12 = malloc(strlen(src) + 2); /* one character longer */
    cr_assert(k0 && k12);
    strcpy(k12, src);
    memcpy(strstr(k0, "@num_stages(1)"), "@num_stages(0)", 14);
    memcpy(strstr(k0, "num_stages=ST,"), "              ", 14);
    char *none0 = compile_ptx(k0, "sm_80");
    cr_expect_null(strstr(none0, "cp.async"), "@num_stages(0): no pipeline:\n%s", none0);
    free(none0);
    char *twelve = strstr(k12, "@num_stages(1)\n");
    memmove(twelve + 15, twelve + 14, strlen(twelve + 14) + 1);
    memcpy(twelve, "@num_stages(12)", 15);
    memcpy(strstr(k12, "num_stages=ST,"), "              ", 14);
    char *deep = compile_ptx(k12, "sm_80");
    cr_expect_not_null(strstr(deep, "cp.async.wait_group 10"), "@num_stages(12): 10 groups pending:\n%s", deep);
    free(deep);
    free(k0), free(k12);
    BadSource bad[] = {{"@num_stages(17)\nkernel k() { }\n", "t.tile:1:13: error: num_stages must be between 0 and 16, got 17"},
                       {"@num_stages(-1)\nkernel k() { }\n", "t.tile:1:13: error: num_stages must be between 0 and 16, got -1"}};
    expect_compile_errors(bad, sizeof bad / sizeof *bad);
    st[2] = '3';
    K k;
    load_src(&k, src, "mm");
    enum { KK = 80 };
    uint16_t a[64 * KK], b[KK * 64];
    float c[64 * 64];
    for (int i = 0; i < 64 * KK; i++) a[i] = f32_to_f16((float)((i * 7) % 9 - 4)), b[i] = f32_to_f16((float)((i * 5) % 7 - 3));
    for (int i = 0; i < 64 * 64; i++) c[i] = NAN;
    uint64_t da = upload(&k, a, sizeof a), db = upload(&k, b, sizeof b), dc = upload(&k, c, sizeof c);
    int32_t kk = KK;
    void *params[] = {&da, &db, &dc, &kk};
    launch(&k, 1, params);
    download(&k, c, dc, sizeof c);
    for (int i = 0; i < 64; i++)
        for (int j = 0; j < 64; j++) {
            double want = 0;
            for (int q = 0; q < KK; q++) want += f16_to_d(a[i * KK + q]) * f16_to_d(b[q * 64 + j]);
            cr_assert_eq(c[i * 64 + j], (float)want, "c[%d][%d] = %g, want %g", i, j, c[i * 64 + j], want);
        }
    free(src);
    unload(&k);
}

/* The documented wait idiom: program 0 spins on a volatile load of a flag that program 1 sets
 * after writing the data.  The loop has no other effect; it used to be removed as dead code
 * (out was 0), as was a loop holding only an unused volatile load. */
Test(lang_triton, volatile_flag_wait) {
    K k;
    load_src(&k,
             "@num_warps(1)\n"
             "kernel k(flag: *i32, data: *i32, out: *i32, n: i32) {\n"
             "    if program_id(0) == 0 {\n"
             "        while load(flag, volatile=true) == 0 {}\n"
             "        store(out, load(data));\n"
             "        for i in range(0, n) { let v = load(flag + 1, volatile=true); }\n"
             "    } else {\n"
             "        store(data, 42);\n"
             "        atomic_xchg(flag, 1, sem=\"release\");\n"
             "    }\n"
             "}\n",
             "k");
    int32_t flag[2] = {0, 0}, data = 0, out = -1, n = 3;
    uint64_t df = upload(&k, flag, sizeof flag), dd = upload(&k, &data, 4), d_o = upload(&k, &out, 4);
    void *params[] = {&df, &dd, &d_o, &n};
    launch(&k, 2, params);
    download(&k, &out, d_o, 4);
    cr_expect_eq(out, 42, "program 0 read %d before program 1's write", out);
    unload(&k);
    char *ptx = compile_ptx("kernel k(flag: *i32, n: i32) {\n    for i in range(0, n) { let v = load(flag, volatile=true); }\n}\n",
                            "sm_80");
    cr_expect_not_null(strstr(ptx, "ld.volatile.global"), "the unused volatile loads in a loop stay:\n%s", ptx);
    free(ptx);
}

/* Triton's tutorial 05 accumulation under a lock, verbatim: `count = load(Count)`, then thread 0's
 * atomic_xchg(Count, 1) in the branch taken when it was 0, else a read of what the last program
 * stored, then the lock released.  A scalar atomic is the program's one access: the barrier before
 * it keeps it after every thread's load of the count (without it, threads the emulator ran after
 * thread 0's exchange read 1, took the other branch, and added the poisoned buffer), and the
 * release after every thread's store. */
Test(lang_triton, scalar_atomic_after_the_programs_loads) {
    for (int warps = 1; warps <= 4; warps *= 4) {
        char src[1024];
        snprintf(src, sizeof src,
                 "@num_warps(%d)\n"
                 "kernel acc(x: *f32, dw: *f32, lock: *i32, count: *i32, n: i32, const B: i32 = 256) {\n"
                 "    let cols = arange(0, B);\n    let m = cols < n;\n"
                 "    let v = load(x + program_id(0) * n + cols, m, 0.0);\n"
                 "    while atomic_cas(lock, 0, 1) == 1 {}\n"
                 "    let c = load(count);\n"
                 "    if c == 0 { atomic_xchg(count, 1); } else { v += load(dw + cols, m, 0.0); }\n"
                 "    store(dw + cols, v, m);\n"
                 "    atomic_xchg(lock, 0);\n"
                 "}\n",
                 warps);
        K k;
        load_src(&k, src, "acc");
        enum { P = 37, N = 201 };
        static float x[P * N], dw[N];
        uint64_t r = 0x9e3779b97f4a7c15ull + (uint64_t)warps;
        for (int i = 0; i < P * N; i++) {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            x[i] = (float)((double)(r >> 11) / 9007199254740992.0 * 2 - 1);
        }
        int32_t zero2[2] = {0, 0};
        uint64_t dx = upload(&k, x, sizeof x), ddw = poisoned(&k, sizeof dw), dl = upload(&k, zero2, 4), dc = upload(&k, zero2 + 1, 4);
        int n = N;
        void *params[] = {&dx, &ddw, &dl, &dc, &n};
        launch(&k, P, params);
        download(&k, dw, ddw, sizeof dw);
        int32_t lock, count;
        download(&k, &lock, dl, 4);
        download(&k, &count, dc, 4);
        cr_expect(lock == 0 && count == 1, "warps %d: lock %d count %d", warps, lock, count);
        for (int j = 0; j < N; j++) {
            double want = 0;
            for (int p = 0; p < P; p++) want += x[p * N + j];
            cr_assert(fabs(dw[j] - want) <= 1e-5 * P, "warps %d: dw[%d] = %g, want %g", warps, j, dw[j], want);
        }
        unload(&k);
    }
}

/* atomic_load / atomic_store, Triton's: program 0 waits with an acquire load for program 1's release
 * store of a flag, then reads what program 1's threads wrote before the barrier ahead of it; masked tensors of atomic accesses, one
 * ld/st.SEM.SCOPE a element, with the sems and scopes asked for (a masked-off element loads 0). */
Test(lang_triton, atomic_load_store) {
    K k;
    load_src(&k,
             "@num_warps(2)\n"
             "kernel k(flag: *i32, data: *i32, out: *i32, n: i32) {\n"
             "    let o = arange(0, 64);\n"
             "    if program_id(0) == 0 {\n"
             "        while atomic_load(flag) == 0 {}\n"
             "        let v = atomic_load(data + o, o < n, sem=\"relaxed\", scope=\"cta\");\n"
             "        atomic_store(out + o, v * 3 + 1, o < n + 2, sem=\"relaxed\");\n"
             "    } else {\n"
             "        store(data + o, o * o + 5, o < n);\n"
             "        debug_barrier();\n" /* every thread's data before the one thread's release */
             "        atomic_store(flag, 1);\n"
             "    }\n"
             "}\n",
             "k");
    int32_t flag = 0, data[64], out[64], n = 45;
    for (int i = 0; i < 64; i++) data[i] = -1000, out[i] = -7;
    uint64_t df = upload(&k, &flag, 4), dd = upload(&k, data, sizeof data), d_o = upload(&k, out, sizeof out);
    void *params[] = {&df, &dd, &d_o, &n};
    launch(&k, 2, params);
    download(&k, out, d_o, sizeof out);
    for (int i = 0; i < 64; i++) {
        int32_t want = i < n ? (i * i + 5) * 3 + 1 : i < n + 2 ? 1 : -7;
        cr_expect_eq(out[i], want, "out[%d] = %d, want %d", i, out[i], want);
    }
    unload(&k);
    char *ptx = compile_ptx("kernel k(p: *f32, q: *i64, f: *u32) {\n"
                            "    let o = arange(0, 128);\n"
                            "    atomic_store(q + o, atomic_load(q + o, sem=\"acquire\", scope=\"sys\"), sem=\"release\", scope=\"cta\");\n"
                            "    atomic_store(p + o, atomic_load(p + o, sem=\"relaxed\") * 2.0, sem=\"relaxed\", scope=\"gpu\");\n"
                            "    atomic_store(f, 1);\n"
                            "}\n",
                            "sm_80");
    static const char *const want[] = {"ld.acquire.sys.global.b64", "st.release.cta.global.b64", "ld.relaxed.gpu.global.b32",
                                       "st.relaxed.gpu.global.b32", "st.release.gpu.global.b32"};
    for (int i = 0; i < 5; i++) cr_expect_not_null(strstr(ptx, want[i]), "no %s in\n%s", want[i], ptx);
    cr_expect_null(strstr(ptx, ".v2."), "atomic accesses are one element an instruction:\n%s", ptx);
    free(ptx);
    /* a sem the access cannot have */
    tile_compile_options o = {0};
    tile_compiled c;
    cr_expect_eq(tile_compile_source("t.tile", "kernel k(p: *i32) { let v = atomic_load(p, sem=\"release\"); }\n", &o, &c), TILE_ERROR_COMPILE);
    cr_expect_not_null(strstr(c.diagnostics, "t.tile:1:48: error: unknown memory ordering \"release\" of 'atomic_load': expected \"acquire\" or \"relaxed\""),
                       "%s", c.diagnostics);
    tile_compiled_free(&c);
}

/* reduce_or (Triton's: integers, i1 an `any`, every element when the axis is None), squeeze and
 * unsqueeze, against exact references. */
Test(lang_triton, reduce_or_squeeze) {
    K k;
    load_src(&k,
             "kernel k(x: *u32, out: *u32, n: i32) {\n"
             "    let o = arange(0, 256);\n"
             "    let v = load(x + o, o < n, 0);\n"
             "    let rows = reshape(v, [16, 16]);\n"
             "    store(out + arange(0, 16), reduce_or(rows, 1));\n"
             "    store(out + 16 + arange(0, 16), reduce_or(rows, axis=0));\n"
             "    store(out + 32, reduce_or(v, None));\n"
             "    let hit = (rows & 0xff) == 0x5a;\n"
             "    store(out + 33 + arange(0, 16), cast(reduce_or(hit, 1), u32));\n"
             "    let back = squeeze(unsqueeze(arange(0, 16), 1), 1);\n"
             "    store(out + 49 + back, cast(back * 2, u32));\n"
             "    store(out + 65, cast(squeeze(arange(3, 4), 0) + 9, u32));\n"
             "    store(out + 66 + arange(0, 16), squeeze(reduce_or(rows, 1, keep_dims=true), 1));\n"
             "}\n",
             "k");
    seed_rng();
    uint32_t x[256], out[82];
    int32_t n = 243;
    for (int i = 0; i < 256; i++) {
        x[i] = (uint32_t)rnext() & (uint32_t)rnext() & (uint32_t)rnext() & (uint32_t)rnext() & 0x7fffff00u;
        if (irand(5) == 0) x[i] |= 0x5a;
        else x[i] |= (uint32_t)irand(0x5a);
    }
    for (int i = 0; i < 82; i++) out[i] = 0xdeadbeefu;
    uint64_t dx = upload(&k, x, sizeof x), d_o = upload(&k, out, sizeof out);
    void *params[] = {&dx, &d_o, &n};
    launch(&k, 1, params);
    download(&k, out, d_o, sizeof out);
    uint32_t all = 0;
    for (int r = 0; r < 16; r++) {
        uint32_t row = 0, col = 0, hit = 0;
        for (int c = 0; c < 16; c++) {
            uint32_t vr = r * 16 + c < n ? x[r * 16 + c] : 0, vc = c * 16 + r < n ? x[c * 16 + r] : 0;
            row |= vr, col |= vc, hit |= (vr & 0xff) == 0x5a;
        }
        all |= row;
        cr_expect_eq(out[r], row, "row %d: %#x, want %#x (seed %llu)", r, out[r], row, (unsigned long long)seed);
        cr_expect_eq(out[16 + r], col, "column %d: %#x, want %#x", r, out[16 + r], col);
        cr_expect_eq(out[33 + r], hit, "any of row %d: %u, want %u", r, out[33 + r], hit);
        cr_expect_eq(out[49 + r], (uint32_t)(2 * r), "squeeze(unsqueeze) [%d] = %u", r, out[49 + r]);
        cr_expect_eq(out[66 + r], row, "keep_dims row %d: %#x, want %#x", r, out[66 + r], row);
    }
    cr_expect_eq(out[32], all, "all: %#x, want %#x", out[32], all);
    cr_expect_eq(out[65], 12u, "squeeze of a [1] tensor: %u", out[65]);
    unload(&k);
    tile_compile_options o = {0};
    tile_compiled c;
    cr_expect_eq(tile_compile_source("t.tile", "kernel k(p: *f32) { let v = reduce_or(load(p + arange(0, 4)), 0); }\n", &o, &c), TILE_ERROR_COMPILE);
    cr_expect_not_null(strstr(c.diagnostics, "'reduce_or' expects integers, got 'f32'"), "%s", c.diagnostics);
    tile_compiled_free(&c);
    cr_expect_eq(tile_compile_source("t.tile", "kernel k(p: *f32) { let v = squeeze(load(p + arange(0, 4)), 0); }\n", &o, &c), TILE_ERROR_COMPILE);
    cr_expect_not_null(strstr(c.diagnostics, "dimension 0 of [4] has length 4"), "%s", c.diagnostics);
    tile_compiled_free(&c);
}

/* Software pipelining issues a dot operand's loads iterations ahead; a load through a pointer the
 * loop also stores through must stay after the store: an RNN step h_{i+1} = h_i W through global
 * memory, and a tile stored, fenced with debug_barrier() and read back in the same iteration.  W is
 * a signed permutation, so every value is exact in f16 (with the loads hoisted, blocks read before
 * they were written came back as zeros). */
Test(lang_triton, pipelined_loads_wait_for_stores) {
    static const char src[] =
        "kernel rnn(h: *f16, w: *f16, T: i32, const D: i32 = 32, const BM: i32 = 16) {\n"
        "    let r = arange(0, BM);\n"
        "    let d = arange(0, D);\n"
        "    let wt = load(w + d[:, None] * D + d[None, :]);\n"
        "    for i in range(0, T) {\n"
        "        let x = load(h + (i * BM + r[:, None]) * D + d[None, :]);\n"
        "        store(h + ((i + 1) * BM + r[:, None]) * D + d[None, :], dot(x, wt) as f16);\n"
        "        debug_barrier();\n"
        "    }\n"
        "}\n"
        "kernel again(src: *f16, buf: *f16, w: *f16, c: *f32, T: i32, const BM: i32 = 16, const D: i32 = 32) {\n"
        "    let r = arange(0, BM);\n"
        "    let d = arange(0, D);\n"
        "    let wt = load(w + d[:, None] * D + d[None, :]);\n"
        "    let acc = zeros([BM, D], f32);\n"
        "    for i in range(0, T) {\n"
        "        let t = load(src + (i * BM + r[:, None]) * D + d[None, :]);\n"
        "        store(buf + (i * BM + r[:, None]) * D + d[None, :], t * 2.0);\n"
        "        debug_barrier();\n"
        "        acc = dot(load(buf + (i * BM + r[:, None]) * D + d[None, :]), wt, acc);\n"
        "    }\n"
        "    store(c + r[:, None] * D + d[None, :], acc);\n"
        "}\n";
    enum { D = 32, BM = 16, T = 6 };
    int perm[D], sign[D];
    for (int i = 0; i < D; i++) perm[i] = (i * 7 + 3) % D, sign[i] = i % 3 ? 1 : -1;
    uint16_t w[D * D];
    for (int i = 0; i < D * D; i++) w[i] = f32_to_f16(0.0f);
    for (int i = 0; i < D; i++) w[i * D + perm[i]] = f32_to_f16((float)sign[i]); /* (x W)[j] = sign[i] x[i] where perm[i] = j */
    static float h0[(T + 1) * BM * D];
    uint16_t h[(T + 1) * BM * D];
    for (int i = 0; i < (T + 1) * BM * D; i++) h0[i] = (float)((i * 37) % 101 - 50), h[i] = f32_to_f16(i < BM * D ? h0[i] : NAN);
    /* the reference: block b = block b-1 permuted */
    for (int b = 1; b <= T; b++)
        for (int rr = 0; rr < BM; rr++)
            for (int i = 0; i < D; i++) h0[(b * BM + rr) * D + perm[i]] = sign[i] * h0[((b - 1) * BM + rr) * D + i];
    K k;
    load_src(&k, src, "rnn");
    uint64_t dh = upload(&k, h, sizeof h), dw = upload(&k, w, sizeof w);
    int32_t t = T;
    void *params[] = {&dh, &dw, &t};
    launch(&k, 1, params);
    download(&k, h, dh, sizeof h);
    for (int i = BM * D; i < (T + 1) * BM * D; i++)
        cr_assert_eq(f16_to_d(h[i]), h0[i], "rnn: block %d element %d = %g, want %g", i / (BM * D), i % (BM * D), f16_to_d(h[i]), h0[i]);
    unload(&k);

    load_src(&k, src, "again");
    uint16_t s[T * BM * D], buf[T * BM * D];
    float c[BM * D];
    for (int i = 0; i < T * BM * D; i++) s[i] = f32_to_f16((float)((i * 13) % 17 - 8)), buf[i] = f32_to_f16(NAN);
    uint64_t ds = upload(&k, s, sizeof s), db = upload(&k, buf, sizeof buf), dw2 = upload(&k, w, sizeof w), dc = upload(&k, c, sizeof c);
    void *p2[] = {&ds, &db, &dw2, &dc, &t};
    launch(&k, 1, p2);
    download(&k, c, dc, sizeof c);
    for (int rr = 0; rr < BM; rr++)
        for (int i = 0; i < D; i++) {
            double want = 0;
            for (int b = 0; b < T; b++) want += 2.0 * sign[i] * f16_to_d(s[(b * BM + rr) * D + i]);
            cr_assert_eq(c[rr * D + perm[i]], want, "again: (%d, %d) = %g, want %g", rr, perm[i], c[rr * D + perm[i]], want);
        }
    unload(&k);
}

/* Triton's batched dot: [B, M, K] x [B, K, N] + acc [B, M, N], for f16 (tensor cores) and i8; small
 * integers, so every product and sum is exact and the result must equal the float64 reference. */
Test(lang_triton, batched_dot) {
    static const char src[] =
        "kernel k(a: *f16, b: *f16, c: *f32, a8: *i8, b8: *i8, c8: *i32, const B: i32 = 4, const M: i32 = 16, const K: i32 = 32,\n"
        "         const N: i32 = 32) {\n"
        "    let ib = arange(0, B);\n"
        "    let im = arange(0, M);\n"
        "    let ik = arange(0, K);\n"
        "    let inn = arange(0, N);\n"
        "    let pa = ib[:, None, None] * M * K + im[None, :, None] * K + ik[None, None, :];\n"
        "    let pb = ib[:, None, None] * K * N + ik[None, :, None] * N + inn[None, None, :];\n"
        "    let pc = ib[:, None, None] * M * N + im[None, :, None] * N + inn[None, None, :];\n"
        "    store(c + pc, dot(load(a + pa), load(b + pb), load(c + pc)));\n"
        "    store(c8 + pc, dot(load(a8 + pa), load(b8 + pb)));\n"
        "}\n";
    enum { NB = 4, NM = 16, NK = 32, NN = 32 };
    static uint16_t a[NB * NM * NK], b[NB * NK * NN];
    static int8_t a8[NB * NM * NK], b8[NB * NK * NN];
    static float c[NB * NM * NN], c0[NB * NM * NN];
    static int32_t c8[NB * NM * NN];
    for (int i = 0; i < NB * NM * NK; i++) a8[i] = (int8_t)((i * 7) % 11 - 5), a[i] = f32_to_f16((float)a8[i]);
    for (int i = 0; i < NB * NK * NN; i++) b8[i] = (int8_t)((i * 5) % 13 - 6), b[i] = f32_to_f16((float)b8[i]);
    for (int i = 0; i < NB * NM * NN; i++) c0[i] = c[i] = (float)(i % 9), c8[i] = -1;
    K k;
    load_src(&k, src, "k");
    uint64_t da = upload(&k, a, sizeof a), db = upload(&k, b, sizeof b), dc = upload(&k, c, sizeof c);
    uint64_t da8 = upload(&k, a8, sizeof a8), db8 = upload(&k, b8, sizeof b8), dc8 = upload(&k, c8, sizeof c8);
    void *params[] = {&da, &db, &dc, &da8, &db8, &dc8};
    launch(&k, 1, params);
    download(&k, c, dc, sizeof c), download(&k, c8, dc8, sizeof c8);
    for (int z = 0; z < NB; z++)
        for (int i = 0; i < NM; i++)
            for (int j = 0; j < NN; j++) {
                double want = 0;
                for (int kk = 0; kk < NK; kk++) want += (double)a8[(z * NM + i) * NK + kk] * b8[(z * NK + kk) * NN + j];
                int at = (z * NM + i) * NN + j;
                cr_assert_eq(c[at], want + c0[at], "f16 batch %d (%d, %d): %g, want %g", z, i, j, c[at], want + c0[at]);
                cr_assert_eq(c8[at], (int32_t)want, "i8 batch %d (%d, %d): %d, want %g", z, i, j, c8[at], want);
            }
    unload(&k);
}

/* Triton's tl.dot takes M and N below 16 (its NVIDIA backend's least dot is (1, 1, 16)): a GQA group of 4 query heads
 * against a key block (native-sparse-attention's [G, BK] x [BK, BC]), a decode GEMV's 1 row.  Tiles smaller than one
 * tensor-core instruction go to the FMA path, and N = 8 with M >= 16 is mma.sync's (and wgmma's) own n8; each in a
 * pipelined K loop (50 = 3 blocks of 16 and a masked 2) on sm_80 and sm_90a, f16 against float64 and i8 exactly.
 * They were "dot: M, N and K must be at least 16".  K below 16 too (Triton's least K is 8 for f32 and 4 for f64; any K
 * here): blocks of 8, 4, 2 and 1 of f32, f64, f16 and i8 (the f16 inputs' values, exact in each type). */
Test(lang_triton, dot_with_m_or_n_below_16) {
    static const char src[] =
        "kernel k(a_ptr: *T, b_ptr: *T, c_ptr: *OT, M: i32, N: i32, K: i32, const BM: i32 = 4, const BN: i32 = 16,\n"
        "         const T = f16, const OT = f32, const BK: i32 = 16) {\n"
        "    let rm = arange(0, BM);\n"
        "    let rn = program_id(0) * BN + arange(0, BN);\n"
        "    let rk = arange(0, BK);\n"
        "    let acc = zeros([BM, BN], OT);\n"
        "    for k0 in range(0, K, BK) {\n"
        "        let a = load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :], (rm[:, None] < M) & ((k0 + rk)[None, :] < K), 0);\n"
        "        let b = load(b_ptr + (k0 + rk)[:, None] * N + rn[None, :], ((k0 + rk)[:, None] < K) & (rn[None, :] < N), 0);\n"
        "        acc = dot(a, b, acc);\n"
        "    }\n"
        "    store(c_ptr + rm[:, None] * N + rn[None, :], acc, (rm[:, None] < M) & (rn[None, :] < N));\n"
        "}\n";
    static const struct {
        const char *bm, *bn, *t, *ot, *warps, *bk;
        int m;
    } cases[] = {{"BM=4", "BN=16", "T=f16", "OT=f32", "num_warps=4", "BK=16", 3},    {"BM=1", "BN=32", "T=f16", "OT=f32", "num_warps=1", "BK=16", 1},
                 {"BM=64", "BN=8", "T=f16", "OT=f32", "num_warps=4", "BK=16", 61}, {"BM=16", "BN=1", "T=f16", "OT=f32", "num_warps=4", "BK=16", 16},
                 {"BM=2", "BN=16", "T=i8", "OT=i32", "num_warps=4", "BK=16", 2},   {"BM=32", "BN=16", "T=f32", "OT=f32", "num_warps=4", "BK=8", 29},
                 {"BM=16", "BN=8", "T=f64", "OT=f64", "num_warps=2", "BK=4", 9},   {"BM=16", "BN=16", "T=f16", "OT=f32", "num_warps=4", "BK=2", 13},
                 {"BM=8", "BN=32", "T=i8", "OT=i32", "num_warps=2", "BK=1", 5},    {"BM=16", "BN=16", "T=f32", "OT=f32", "num_warps=4", "BK=1", 16}};
    enum { N = 37, KD = 50, MMAX = 64 };
    static const char *const archs[] = {"sm_80", "sm_90a"};
    seed_rng();
    static uint16_t a[MMAX * KD], b[KD * N];
    static int8_t a8[MMAX * KD], b8[KD * N];
    static float c[MMAX * N], a32[MMAX * KD], b32[KD * N];
    static double c64[MMAX * N], a64[MMAX * KD], b64[KD * N];
    static int32_t c8[MMAX * N];
    for (int i = 0; i < MMAX * KD; i++) a8[i] = (int8_t)(irand(255) - 127), a[i] = f32_to_f16((float)urand()), a64[i] = a32[i] = (float)f16_to_d(a[i]);
    for (int i = 0; i < KD * N; i++) b8[i] = (int8_t)(irand(255) - 127), b[i] = f32_to_f16((float)urand()), b64[i] = b32[i] = (float)f16_to_d(b[i]);
    for (size_t x = 0; x < sizeof cases / sizeof *cases; x++)
        for (int ar = 0; ar < 2; ar++) {
            bool i8 = cases[x].t[2] == 'i', f32 = !strcmp(cases[x].t, "T=f32"), f64 = !strcmp(cases[x].t, "T=f64");
            int m = cases[x].m, bn = atoi(cases[x].bn + 3), n = N, kd = KD;
            const char *defs[] = {cases[x].bm, cases[x].bn, cases[x].t, cases[x].ot, cases[x].warps, cases[x].bk, NULL};
            K k;
            load_with(&k, src, "k", archs[ar], defs, NULL);
            uint64_t da = i8 ? upload(&k, a8, sizeof a8) : f32 ? upload(&k, a32, sizeof a32) : f64 ? upload(&k, a64, sizeof a64) : upload(&k, a, sizeof a);
            uint64_t db = i8 ? upload(&k, b8, sizeof b8) : f32 ? upload(&k, b32, sizeof b32) : f64 ? upload(&k, b64, sizeof b64) : upload(&k, b, sizeof b);
            uint64_t dc = poisoned(&k, sizeof c64);
            launch3(&k, NULL, (unsigned)((N + bn - 1) / bn), 1, 1, (void *[]){&da, &db, &dc, &m, &n, &kd});
            if (i8) download(&k, c8, dc, sizeof c8);
            else if (f64) {
                download(&k, c64, dc, sizeof c64);
                for (int i = 0; i < MMAX * N; i++) c[i] = (float)c64[i];
            } else download(&k, c, dc, sizeof c);
            for (int i = 0; i < m; i++)
                for (int j = 0; j < N; j++) {
                    double want = 0, mag = 0;
                    for (int kk = 0; kk < KD; kk++) {
                        double p = i8 ? (double)a8[i * KD + kk] * b8[kk * N + j] : f16_to_d(a[i * KD + kk]) * f16_to_d(b[kk * N + j]);
                        want += p, mag += fabs(p);
                    }
                    if (i8) cr_assert_eq(c8[i * N + j], (int32_t)want, "%s %s %s c[%d][%d] = %d, want %.0f", archs[ar], cases[x].bm,
                                         cases[x].bn, i, j, c8[i * N + j], want);
                    else cr_assert(fabs(c[i * N + j] - want) <= 4e-6 * mag + 1e-7, "%s %s %s c[%d][%d] = %.9g, want %.9g (seed %llu)",
                                   archs[ar], cases[x].bm, cases[x].bn, i, j, c[i * N + j], want, (unsigned long long)seed);
                }
            unload(&k);
        }
}

/* A pipelined loop near the top of the i32 range (ub = 2^31 - 41, four stages of 32): whether iteration
 * iv + 3 * 32 runs is decided in i64 (in i32 it wrapped negative, passed for one that runs, and the copies
 * read past the operands' end: the emulator's memcheck fails the launch). */
Test(lang_triton, pipeline_near_the_top_of_i32) {
    static const char src[] =
        "kernel mm(a: *f16, b: *f16, c: *f32, lb: i32, ub: i32) {\n"
        "    let rm = arange(0, 32);\n"
        "    let rn = arange(0, 32);\n"
        "    let rk = arange(0, 32);\n"
        "    let acc = zeros([32, 32], f32);\n"
        "    for k in range(lb, ub, 32, num_stages=4) {\n"
        "        let kk = k - lb;\n"
        "        acc = dot(load(a + rm[:, None] * 128 + (kk + rk)[None, :]), load(b + (kk + rk)[:, None] * 32 + rn[None, :]), acc);\n"
        "    }\n"
        "    store(c + rm[:, None] * 32 + rn[None, :], acc);\n"
        "}\n";
    static uint16_t a[32 * 128], b[128 * 32];
    static int va[32 * 128], vb[128 * 32];
    float c[32 * 32];
    for (int i = 0; i < 32 * 128; i++) va[i] = (i * 7) % 9 - 4, a[i] = f32_to_f16((float)va[i]);
    for (int i = 0; i < 128 * 32; i++) vb[i] = (i * 5) % 7 - 3, b[i] = f32_to_f16((float)vb[i]);
    K k;
    load_src(&k, src, "mm");
    uint64_t da = upload(&k, a, sizeof a), db = upload(&k, b, sizeof b), dc = upload(&k, c, sizeof c);
    int32_t ub = 2147483647 - 40, lb = ub - 128;
    void *params[] = {&da, &db, &dc, &lb, &ub};
    launch(&k, 1, params);
    download(&k, c, dc, sizeof c);
    for (int i = 0; i < 32; i++)
        for (int j = 0; j < 32; j++) {
            double want = 0;
            for (int kk = 0; kk < 128; kk++) want += (double)va[i * 128 + kk] * vb[kk * 32 + j];
            cr_assert_eq(c[i * 32 + j], want, "(%d, %d): %g, want %g", i, j, c[i * 32 + j], want);
        }
    unload(&k);
}

/* range(..., loop_unroll_factor=U): the loop body U times per trip (LLVM's unroller, asked through the back
 * edge's llvm.loop.unroll.count), plus the remainder's copy; the sums stay exact for a trip count U does not
 * divide.  Without it LLVM unrolls this loop 8 times. */
Test(lang_triton, loop_unroll_factor) {
    static const char src[] =
        "kernel k(x: *f32, out: *f32, n: i32, const U: i32 = 0) {\n"
        "    let acc = zeros([128], f32);\n"
        "    for i in range(0, n, loop_unroll_factor=U) {\n"
        "        acc += load(x + i * 128 + arange(0, 128));\n"
        "    }\n"
        "    store(out + arange(0, 128), acc);\n"
        "}\n";
    for (int u = 2; u <= 3; u++) {
        char def[16], *p;
        snprintf(def, sizeof def, "U=%d", u);
        const char *defs[] = {def, NULL};
        tile_compile_options o = {.arch = "sm_80", .defines = defs};
        tile_compiled c;
        cr_assert_eq(tile_compile_source("t.tile", src, &o, &c), TILE_OK, "%s", c.diagnostics);
        int loads = 0;
        for (p = c.ptx; (p = strstr(p, "ld.global")); p++) loads++;
        cr_expect_eq(loads, u + 1, "U=%d: %d loads of x (U in the unrolled body, one in the remainder)", u, loads);
        cr_expect(strstr(c.tir, "{unroll=") != NULL, "the loop's unroll in the Tile IR:\n%s", c.tir);
        tile_compiled_free(&c);
    }
    K k;
    char *src3 = strdup(src);
    char *u0 = strstr(src3, "U: i32 = 0");
    u0[9] = '3';
    load_src(&k, src3, "k");
    free(src3);
    static float x[7 * 128], out[128];
    for (int i = 0; i < 7 * 128; i++) x[i] = (float)(i % 13) - 6.0f;
    uint64_t dx = upload(&k, x, sizeof x), dout = upload(&k, out, sizeof out);
    int32_t n = 7;
    void *params[] = {&dx, &dout, &n};
    launch(&k, 1, params);
    download(&k, out, dout, sizeof out);
    for (int j = 0; j < 128; j++) {
        float want = 0;
        for (int i = 0; i < 7; i++) want += x[i * 128 + j];
        cr_assert_eq(out[j], want, "out[%d] = %g, want %g", j, out[j], want);
    }
    unload(&k);
}

/* Triton's broadcast_to(x, 4, 8, 2) with the shape as separate arguments, and expand_dims with a tuple of axes,
 * each an axis of the result (negative from its end): expand_dims(v, (0, 2)) of a [8] is [1, 8, 1] (both were
 * errors).  v loads 7 of 8 elements (the last is the other value), the outputs are poisoned. */
Test(lang_triton, broadcast_to_and_expand_dims_spellings) {
    K k;
    load_src(&k,
             "kernel k(x: *f32, y: *f32, z: *f32, n: i32) {\n"
             "    let i = arange(0, 8);\n"
             "    let v = load(x + i, i < n, -1.0);\n"
             "    let a = broadcast_to(expand_dims(v, (0, 2)), 4, 8, 2);\n"
             "    let b = broadcast_to(expand_dims(v, (-1,)), 8, 4);\n"
             "    store(y + arange(0, 64), reshape(a, 64));\n"
             "    store(z + arange(0, 32), reshape(b, 32));\n"
             "}\n",
             "k");
    float x[8], y[64], z[32];
    for (int i = 0; i < 8; i++) x[i] = (float)(irand(2001) - 1000) / 8;
    int32_t n = 7;
    uint64_t dx = upload(&k, x, sizeof x), dy = poisoned(&k, sizeof y), dz = poisoned(&k, sizeof z);
    launch(&k, 1, (void *[]){&dx, &dy, &dz, &n});
    download(&k, y, dy, sizeof y), download(&k, z, dz, sizeof z);
    for (int i = 0; i < 64; i++) {
        int j = i / 2 % 8; /* a[p][j][q] = v[j] */
        float want = j < n ? x[j] : -1.0f;
        cr_expect_eq(y[i], want, "a flat [%d] = %g, want v[%d] = %g", i, y[i], j, want);
    }
    for (int i = 0; i < 32; i++) {
        int j = i / 4; /* b[j][q] = v[j] */
        float want = j < n ? x[j] : -1.0f;
        cr_expect_eq(z[i], want, "b flat [%d] = %g, want v[%d] = %g", i, z[i], j, want);
    }
    unload(&k);
}

/* Triton's spellings with the dimensions as separate arguments: trans(x, 1, 0), permute(x, 2, 0, 1),
 * reshape(x, 2, 4, 16), and the keywords reshape(..., can_reorder=) and dot(..., max_num_imprecise_acc=)
 * (accepted; tile never reorders a reshape, and its f8 dots accumulate every product in f32).  Checked
 * against the same moves computed here (they were "'trans' expects 1 to 2 arguments, got 3", probe U). */
Test(lang_triton, dims_as_separate_arguments) {
    K k;
    load_src(&k,
             "kernel k(x: *f32, y: *f32, a: *f16, b: *f16, c: *f32) {\n"
             "    let t = load(x + arange(0, 16)[:, None] * 8 + arange(0, 8)[None, :]);\n"
             "    let p = permute(reshape(trans(t, 1, 0), 2, 4, 16), 2, 0, 1);\n"
             "    store(y + arange(0, 16)[:, None] * 8 + arange(0, 8)[None, :], reshape(p, [16, 8], can_reorder=false));\n"
             "    let r = arange(0, 16);\n"
             "    let d = dot(load(a + r[:, None] * 16 + r[None, :]), load(b + r[:, None] * 16 + r[None, :]), max_num_imprecise_acc=32);\n"
             "    store(c + r[:, None] * 16 + r[None, :], d);\n"
             "}\n",
             "k");
    float x[128], y[128], c[256];
    uint16_t a[256], b[256];
    for (int i = 0; i < 128; i++) x[i] = (float)i, y[i] = NAN;
    for (int i = 0; i < 256; i++) a[i] = 0x3C00 + (uint16_t)(i % 3), b[i] = i % 17 == 0 ? 0x4000 : 0x3C00, c[i] = NAN; /* ~1, 2 */
    uint64_t dx = upload(&k, x, sizeof x), dy = upload(&k, y, sizeof y), da = upload(&k, a, sizeof a), db = upload(&k, b, sizeof b),
             dc = upload(&k, c, sizeof c);
    launch(&k, 1, (void *[]){&dx, &dy, &da, &db, &dc});
    download(&k, y, dy, sizeof y);
    download(&k, c, dc, sizeof c);
    /* t[i][j] = 8i + j; u = trans: u[j][i]; v = reshape [2,4,16]: v[p][q][r] = u flat (64p + 16q + r); w = permute(2, 0, 1):
     * w[r][p][q] = v[p][q][r]; y = w flat */
    for (int r = 0; r < 16; r++)
        for (int p = 0; p < 2; p++)
            for (int q = 0; q < 4; q++) {
                int f = 64 * p + 16 * q + r, j = f / 16, i = f % 16; /* u flat index f is u[j][i] */
                float want = (float)(8 * i + j);
                cr_assert_eq(y[8 * r + 4 * p + q], want, "y[%d] = %g, want %g", 8 * r + 4 * p + q, y[8 * r + 4 * p + q], want);
            }
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++) {
            double want = 0;
            for (int l = 0; l < 16; l++) {
                double av = 1.0 + (double)((i * 16 + l) % 3) / 1024, bv = (l * 16 + j) % 17 == 0 ? 2.0 : 1.0;
                want += av * bv;
            }
            cr_assert(fabs(c[i * 16 + j] - want) < 1e-4, "c[%d][%d] = %g, want %g", i, j, c[i * 16 + j], want);
        }
    unload(&k);
}

/* Python's trailing commas, as black writes Triton code one argument a line: after the last
 * parameter of a kernel and a fn, the last argument of a call (keyword or not), the last element
 * of a list and range's last argument.  A comma alone is still an error. */
Test(lang_triton, trailing_commas) {
    K k;
    load_src(&k,
             "fn axpy(\n    a,\n    x,\n    y,\n) {\n    return a * x + y;\n}\n"
             "kernel k(\n    x: *f32,\n    out: *f32,\n    n: i32,\n    const BLOCK: i32 = 128,\n) {\n"
             "    let offs = program_id(0) * BLOCK + arange(0, BLOCK,);\n"
             "    let acc = zeros([BLOCK,], f32);\n"
             "    for i in range(0, 3, 1,) {\n"
             "        acc += axpy(2.0, load(x + offs, mask=offs < n, other=0.0,), 1.0,);\n"
             "    }\n"
             "    store(\n        out + offs,\n        acc,\n        mask=offs < n,\n    );\n"
             "}\n",
             "k");
    enum { N = 300 };
    float x[N], o[N];
    for (int i = 0; i < N; i++) x[i] = (float)i / 8;
    uint64_t dx = upload(&k, x, sizeof x), d_o = poisoned(&k, sizeof o);
    int32_t n = N;
    launch(&k, 3, (void *[]){&dx, &d_o, &n});
    download(&k, o, d_o, sizeof o);
    for (int i = 0; i < N; i++) cr_assert_eq(o[i], 3 * (2 * x[i] + 1), "out[%d] = %g, want %g", i, o[i], 3 * (2 * x[i] + 1));
    unload(&k);
    const char *bad[] = {
        "kernel k(x: *f32, ,) {}\n",
        "kernel k(x: *f32) { store(x, maximum(,)); }\n",
        "kernel k(x: *f32) { let a = zeros([,], f32); }\n",
        "kernel k(x: *f32) { for i in range(,) {} }\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tile_compile_options opt = {0};
        tile_compiled c;
        tile_status st = tile_compile_source("t.tile", bad[i], &opt, &c);
        cr_expect_neq(st, TILE_OK, "a lone comma compiled: %s", bad[i]);
        cr_expect_not_null(strstr(c.diagnostics, "found ','"), "%s: %s", bad[i], c.diagnostics);
        tile_compiled_free(&c);
    }
}

/* A name bound only under a constexpr, as Triton writes it (`if HAS_W: dw = zeros(...)` before a
 * loop, `if HAS_W: dw += ...` in it): with HAS_W false the loop assigns nothing to the None, so it
 * is no loop-carried value (it was "'dw' holds a compile-time None and cannot be reassigned in a
 * loop").  A condition the loop can change still counts both branches. */
static const char *constexpr_loop_src =
    "kernel k(x: *f32, out: *f32, dw_out: *f32, n_rows: i32, const HAS_W: i1 = false) {\n"
    "    let cols = arange(0, 32);\n"
    "    let dw = None;\n"
    "    if HAS_W { dw = zeros([32], f32); }\n"
    "    for r in range(0, n_rows) {\n"
    "        let v = load(x + r * 32 + cols);\n"
    "        if HAS_W { dw += v; }\n"
    "        if !HAS_W { store(out + r * 32 + cols, v * 2.0); } else { dw = dw + 1.0; }\n"
    "    }\n"
    "    if HAS_W { store(dw_out + cols, dw); }\n"
    "}\n";

Test(lang_triton, constexpr_branch_in_loop) {
    enum { ROWS = 3 };
    float x[ROWS * 32], o[ROWS * 32], dw[32];
    for (int i = 0; i < ROWS * 32; i++) x[i] = (float)i / 4;
    for (int has = 0; has < 2; has++) {
        char *src = strdup(constexpr_loop_src);
        if (has) memcpy(strstr(src, "= false"), "= true ", 7);
        K k;
        load_src(&k, src, "k");
        uint64_t dx = upload(&k, x, sizeof x), d_o = poisoned(&k, sizeof o), d_w = poisoned(&k, sizeof dw);
        int32_t rows = ROWS;
        launch(&k, 1, (void *[]){&dx, &d_o, &d_w, &rows});
        download(&k, o, d_o, sizeof o);
        download(&k, dw, d_w, sizeof dw);
        for (int i = 0; i < ROWS * 32; i++) {
            if (has) cr_assert(isnan(o[i]), "out[%d] written with HAS_W", i);
            else cr_assert_eq(o[i], 2 * x[i], "out[%d] = %g, want %g", i, o[i], 2 * x[i]);
        }
        for (int c = 0; c < 32; c++) {
            float want = 0;
            for (int r = 0; r < ROWS; r++) want += x[r * 32 + c] + 1;
            if (has) cr_assert_eq(dw[c], want, "dw[%d] = %g, want %g", c, dw[c], want);
            else cr_assert(isnan(dw[c]), "dw[%d] written without HAS_W", c);
        }
        unload(&k);
        free(src);
    }
    /* conditions the loop changes, or a name the body binds itself, still count both branches */
    const char *bad[] = {
        "kernel k(x: *f32, n: i32) {\n    let flag = false;\n    let d = None;\n"
        "    for i in range(0, n) {\n        if flag { d = 1.0; }\n        flag = true;\n    }\n}\n",
        "const C = false;\nkernel k(x: *f32, n: i32) {\n    let d = None;\n"
        "    for i in range(0, n) {\n        let C = true;\n        if C { d = 1.0; }\n    }\n}\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tile_compile_options opt = {0};
        tile_compiled c;
        tile_status st = tile_compile_source("t.tile", bad[i], &opt, &c);
        cr_expect_neq(st, TILE_OK, "compiled: %s", bad[i]);
        cr_expect_not_null(strstr(c.diagnostics, "'d' holds a compile-time None and cannot be reassigned in a loop"), "%s: %s", bad[i],
                           c.diagnostics);
        tile_compiled_free(&c);
    }
}

/* Python's conditional expression, `a if cond else b`: a compile-time cond (a const, a string compare)
 * generates only its side (the other loads through a pointer the kernel does not have: it need not
 * compile), a run-time tensor cond is where(), a run-time scalar one runs only its side (test_lang_control's
 * ternary_runs_only_its_side); nested to the right; over several lines inside
 * parentheses, as black writes a long one; the `if` of a statement
 * on the next line after a missing ';' is still that statement's (the error is the ';'), and a missing
 * `else` is a located error. */
Test(lang_triton, conditional_expression) {
    static const char *src =
        "kernel k(x: *f32, out: *f32, n: i32, const SCALE: f32 = 2.0, const ACT = \"leaky\", const HAS_B: i1 = false) {\n"
        "    let i = program_id(0) * 64 + arange(0, 64);\n"
        "    let m = i < n;\n"
        "    let v = load(x + i, m, 0.0);\n"
        "    let bias = load(undefined_pointer + i, m) if HAS_B else 0.5;\n"
        "    let slope = SCALE if ACT == \"leaky\" else 0.0;\n"
        "    let w = v if v > 0.0 else v * slope;\n"
        "    let t = 1.0 if n > 100 else -1.0 if n > 50 else 3.0;\n"
        "    store(out + i, (\n        (w + bias) * t\n        if n > 0\n        else w\n    ), m);\n"
        "}\n";
    for (int ni = 0; ni < 3; ni++) {
        int32_t n = (int32_t[]){150, 77, 30}[ni];
        float t = n > 100 ? 1.0f : n > 50 ? -1.0f : 3.0f;
        K k;
        load_src(&k, src, "k");
        float x[150], o[150];
        for (int i = 0; i < n; i++) x[i] = (float)(i % 13) - 6.5f;
        uint64_t dx = upload(&k, x, sizeof x), d_o = poisoned(&k, sizeof o);
        launch(&k, 3, (void *[]){&dx, &d_o, &n});
        download(&k, o, d_o, sizeof o);
        for (int i = 0; i < n; i++) {
            float want = ((x[i] > 0 ? x[i] : x[i] * 2.0f) + 0.5f) * t;
            cr_assert_eq(o[i], want, "n = %d: out[%d] = %g, want %g", n, i, o[i], want);
        }
        for (int i = n; i < 150; i++) cr_assert(isnan(o[i]), "n = %d: out[%d] = %g written", n, i, o[i]);
        unload(&k);
    }
    const struct {
        const char *src, *msg;
    } bad[] = {
        {"kernel k(x: *f32) {\n    let a = 1.0\n    if a > 0.0 { store(x, a); }\n}\n", "expected ';'"},
        {"kernel k(x: *f32) { let a = 1.0 if true; }\n", "expected 'else' in a conditional expression"},
        /* a float condition is true when non-zero, as an `if`'s (test_lang_run number_conditions), a scalar pointer when
         * not null (test_lang_ports); a tile of pointers is none */
        {"kernel k(x: *f32) { let a = load(x + arange(0, 4)) if x + arange(0, 4) else 2.0; }\n",
         "condition of 'where' must be i1, an integer or a float, got 'tensor<4xptr<f32>>'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tile_compile_options opt = {0};
        tile_compiled c;
        tile_status st = tile_compile_source("t.tile", bad[i].src, &opt, &c);
        cr_expect_neq(st, TILE_OK, "compiled: %s", bad[i].src);
        cr_expect_not_null(strstr(c.diagnostics, bad[i].msg), "%s: %s", bad[i].src, c.diagnostics);
        cr_expect_not_null(strstr(c.diagnostics, "t.tile:"), "no location: %s", c.diagnostics);
        tile_compiled_free(&c);
    }
}

/* Triton's x.shape, x.numel, len(x.shape), T.is_floating(), T.is_int(), T.is_int_signed(), T.is_fp8(), T.primitive_bitwidth,
 * tl.core.get_int_dtype (the f32 row through its signed integer bits, as Inductor's sort handles any dtype) and
 * p.dtype.element_ty as compile-time functions: an `if` on one picks code at compile time (the other side would not
 * compile for that type), static_assert checks them, shape_of(x) is a shape argument.  One generic fn instantiated
 * on f32, i32 and u8 rows; each output poisoned first, n not a multiple of the block. */
Test(lang_triton, shape_and_type_queries) {
    const char *src =
        "fn twice_or_clip(x) {\n"
        "    if is_float(x) { return x * 2.0 + bitwidth(dtype_of(x)) as f32; }\n"
        "    static_assert(is_int(dtype_of(x)) && !is_float(x), \"numbers are floats or integers\");\n"
        "    if is_signed(x) { return maximum(x, 0) + bitwidth(x); }\n"
        "    return x / 2 + bitwidth(x);\n"
        "}\n"
        "kernel k(xf: *f32, xi: *i32, xu: *u8, of: *f32, oi: *i32, ou: *u8, n: i32, const B: i32 = 64) {\n"
        "    let o = arange(0, B);\n"
        "    let m = o < n;\n"
        "    let v = load(xf + o, m, 0.0);\n"
        "    static_assert(numel(v) == B && rank(v) == 1 && shape_of(v, 0) == B && shape_of(v, -1) == 64, \"x.shape\");\n"
        "    static_assert(numel(v[:, None] * v[None, :]) == B * B && rank(program_id(0)) == 0 && numel(1.5) == 1, \"numel\");\n"
        "    static_assert(is_ptr(xf + o) && !is_ptr(v) && is_float(element_type(xf)) && element_type(xi) == i32, \"pointers\");\n"
        "    static_assert(is_ptr(pointer_type(f16)) && element_type(pointer_type(u8)) == u8 && !is_float(pointer_type(f32)) &&\n"
        "                  bitwidth(pointer_type(i8)) == 64, \"tl.pointer_type\");\n"
        "    static_assert(element_type(make_block_ptr(xu, (n,), (1,), (0,), (B,), (0,))) == u8 &&\n"
        "                  element_type(make_tensor_descriptor(xi, [n], [1], [B])) == i32, \"a record's element type\");\n"
        "    static_assert(!is_signed(i1) && is_int(i1) && !is_signed(u32) && !is_signed(f64) && is_float(f8e5m2), \"kinds\");\n"
        "    static_assert(bitwidth(i1) == 1 && bitwidth(f8e4m3) == 8 && bitwidth(bf16) == 16 && bitwidth(xf) == 64, \"bits\");\n"
        "    static_assert(is_fp8(f8e4m3) && is_fp8(f8e5m2) && !is_fp8(f16) && !is_fp8(u8) && !is_fp8(v) && !is_fp8(xf), \"fp8\");\n"
        "    static_assert(get_int_dtype(bitwidth(v), true) == i32 && get_int_dtype(8, signed=false) == u8 &&\n"
        "                  get_int_dtype(bitwidth=1, signed=true) == i1 && get_int_dtype(64, 0) == u64, \"tl.core.get_int_dtype\");\n"
        "    let z = zeros(shape_of(v), element_type(of));\n"
        "    let t: element_type(xf) = 0.25;\n"
        "    let sq = reshape(v, shape_of(zeros([8, 8])));\n"
        "    let back = reshape(sq, shape_of(v));\n"
        "    let bits = cast(back, get_int_dtype(bitwidth(back), signed=true), bitcast=true) ^ (1 << 31);\n"
        "    store(of + o, twice_or_clip(-cast(bits, dtype_of(back), bitcast=true)) + z + t, m);\n"
        "    store(oi + o, twice_or_clip(load(xi + o, m, 0)), m);\n"
        "    store(ou + o, twice_or_clip(load(xu + o, m, 0)), m);\n"
        "}\n";
    K k;
    load_src(&k, src, "k");
    enum { B = 64 };
    int32_t n = 45;
    float xf[B], of[B];
    int32_t xi[B], oi[B];
    uint8_t xu[B], ou[B];
    for (int i = 0; i < B; i++) xf[i] = (float)(i % 11) - 5.5f, xi[i] = i * 37 % 29 - 14, xu[i] = (uint8_t)(i * 13 % 200);
    uint64_t dxf = upload(&k, xf, sizeof xf), dxi = upload(&k, xi, sizeof xi), dxu = upload(&k, xu, sizeof xu);
    uint64_t dof = poisoned(&k, sizeof of), doi = poisoned(&k, sizeof oi), dou = poisoned(&k, sizeof ou);
    launch(&k, 1, (void *[]){&dxf, &dxi, &dxu, &dof, &doi, &dou, &n});
    download(&k, of, dof, sizeof of);
    download(&k, oi, doi, sizeof oi);
    download(&k, ou, dou, sizeof ou);
    for (int i = 0; i < n; i++) {
        cr_assert_eq(of[i], xf[i] * 2.0f + 32.0f + 0.25f, "f32 [%d] = %g", i, of[i]);
        cr_assert_eq(oi[i], (xi[i] > 0 ? xi[i] : 0) + 32, "i32 [%d] = %d", i, oi[i]);
        cr_assert_eq(ou[i], xu[i] / 2 + 8, "u8 [%d] = %d", i, ou[i]);
    }
    for (int i = n; i < B; i++) cr_assert(isnan(of[i]) && oi[i] == -1 && ou[i] == 0xff, "[%d] written past n", i);
    unload(&k);
}

/* Triton's tutorial 09, its tensor-descriptor persistent GEMM as a port keeps it: descriptors made in the kernel
 * (B stored [N, K], read as trans(b)), a range over tiles with flatten=, the tile's position found again for the
 * epilogue, and EPILOGUE_SUBTILE's epilogue: the accumulator reshaped to [BM, 2, BN / 2], permuted to
 * [BM, BN / 2, 2] and split into its two column halves, each stored through a half-width descriptor.  Sizes not
 * multiples of the tiles (the descriptors' bounds drop the rest), fewer programs than tiles, both epilogues, f16
 * against float64 products; sm_80 and sm_90a. */
Test(lang_triton, descriptor_persistent_gemm_epilogue_subtile) {
    const char *src =
        "fn tile_pos(tile_id, num_pid_in_group, num_pid_m, const GROUP_SIZE_M) {\n"
        "    let group_id = tile_id / num_pid_in_group;\n"
        "    let first_pid_m = group_id * GROUP_SIZE_M;\n"
        "    let group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M);\n"
        "    return first_pid_m + tile_id % group_size_m, (tile_id % num_pid_in_group) / group_size_m;\n"
        "}\n"
        "kernel gemm(a_ptr: *f16, b_ptr: *f16, c_ptr: *f16, M: i32, N: i32, K: i32, const BM: i32 = 32,\n"
        "            const BN: i32 = 32, const BK: i32 = 16, const GROUP_SIZE_M: i32 = 2, const PROGRAMS: i32 = 3,\n"
        "            const EPILOGUE_SUBTILE: i1 = true) {\n"
        "    let start_pid = program_id(axis=0);\n"
        "    let num_pid_m = cdiv(M, BM);\n"
        "    let num_tiles = num_pid_m * cdiv(N, BN);\n"
        "    let a_desc = make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK]);\n"
        "    let b_desc = make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK]);\n"
        "    let c_desc = make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1],\n"
        "                                        block_shape=[BM, BN / 2 if EPILOGUE_SUBTILE else BN]);\n"
        "    let tile_id_c = start_pid - PROGRAMS;\n"
        "    let num_pid_in_group = GROUP_SIZE_M * cdiv(N, BN);\n"
        "    for tile_id in range(start_pid, num_tiles, PROGRAMS, flatten=true) {\n"
        "        let pid_m, pid_n = tile_pos(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M);\n"
        "        let acc = zeros((BM, BN), dtype=f32);\n"
        "        for ki in range(cdiv(K, BK)) {\n"
        "            let a = load_tensor_descriptor(a_desc, [pid_m * BM, ki * BK]);\n"
        "            let b = load_tensor_descriptor(b_desc, [pid_n * BN, ki * BK]);\n"
        "            acc = dot(a, trans(b), acc);\n"
        "        }\n"
        "        tile_id_c += PROGRAMS;\n"
        "        pid_m, pid_n = tile_pos(tile_id_c, num_pid_in_group, num_pid_m, GROUP_SIZE_M);\n"
        "        if EPILOGUE_SUBTILE {\n"
        "            let halves = permute(reshape(acc, (BM, 2, BN / 2)), (0, 2, 1));\n"
        "            let acc0, acc1 = split(halves);\n"
        "            store_tensor_descriptor(c_desc, [pid_m * BM, pid_n * BN], acc0 as f16);\n"
        "            store_tensor_descriptor(c_desc, [pid_m * BM, pid_n * BN + BN / 2], acc1 as f16);\n"
        "        } else {\n"
        "            store_tensor_descriptor(c_desc, [pid_m * BM, pid_n * BN], acc as f16);\n"
        "        }\n"
        "    }\n"
        "}\n";
    seed_rng();
    enum { GM = 45, GN = 38, GK = 40 };
    static uint16_t a[GM * GK], b[GN * GK], c[GM * GN];
    static double want[GM * GN];
    for (int i = 0; i < GM * GK; i++) a[i] = f32_to_f16((float)urand());
    for (int i = 0; i < GN * GK; i++) b[i] = f32_to_f16((float)urand());
    for (int i = 0; i < GM; i++)
        for (int j = 0; j < GN; j++) {
            double s = 0;
            for (int q = 0; q < GK; q++) s += f16_to_d(a[i * GK + q]) * f16_to_d(b[j * GK + q]);
            want[i * GN + j] = s;
        }
    static const char *const archs[] = {"sm_80", "sm_90a"};
    for (int arch = 0; arch < 2; arch++)
        for (int sub = 0; sub < 2; sub++) {
            const char *defs[] = {sub ? "EPILOGUE_SUBTILE=true" : "EPILOGUE_SUBTILE=false", NULL};
            K k;
            load_with(&k, src, "gemm", archs[arch], defs, NULL);
            int32_t m = GM, n = GN, kk = GK;
            uint64_t da = upload(&k, a, sizeof a), db = upload(&k, b, sizeof b), dc = poisoned(&k, sizeof c);
            launch3(&k, NULL, 3, 1, 1, (void *[]){&da, &db, &dc, &m, &n, &kk});
            download(&k, c, dc, sizeof c);
            for (int i = 0; i < GM * GN; i++)
                cr_assert(fabs(f16_to_d(c[i]) - want[i]) <= 2e-3 * fabs(want[i]) + 2e-3, "%s subtile=%d c[%d][%d] = %g, want %g",
                          archs[arch], sub, i / GN, i % GN, f16_to_d(c[i]), want[i]);
            unload(&k);
        }
}

/* Python's float() of a string, as PyTorch Inductor writes its reductions' start (tmp = tl.full([XBLOCK, R], float("-inf"),
 * tl.float32), then tmp = tl.where(mask, maximum(tmp, x), tmp)): the infinities and NaN in Python's spellings, a
 * compile-time float.  Inputs are all negative, so a start or a masked-off `other` of 0 would win the max; n = 45 of a
 * 64-wide tile, the output poisoned first; a row none of whose elements passes the mask stays -inf. */
Test(lang_triton, python_float_of_string) {
    K k;
    load_src(&k,
             "const NEG = float(\"-inf\");\n"
             "kernel k(x: *f32, out: *f32, n: i32) {\n"
             "    static_assert(float(\"inf\") > 1e308 && -float(\"Infinity\") == NEG && float(\"nan\") != float(\"nan\"));\n"
             "    let o = arange(0, 64);\n"
             "    let m = o < n;\n"
             "    let v = load(x + o, m, float(\"-inf\"));\n"
             "    let acc = full([64], float(\"-inf\"), f32);\n"
             "    acc = where(m, maximum(acc, v), acc);\n"
             "    store(out, max(v, 0));\n"
             "    store(out + 1, max(acc, 0));\n"
             "    store(out + 2, max(where(m & (v > 0.0), v, NEG), 0));\n"
             "    store(out + 3, float(\" +INF \"));\n"
             "    store(out + 4, float('NaN'));\n"
             "    store(out + 5, -float(\"-infinity\") * 0.5);\n"
             "}\n",
             "k");
    seed_rng();
    float x[64], out[6];
    int32_t n = 45;
    double want = -INFINITY;
    for (int i = 0; i < n; i++) x[i] = -(float)(irand(1000) + 1) / 8.0f;
    for (int i = 45; i < 64; i++) x[i] = 1e30f; /* past n: a max that reads them is wrong */
    for (int i = 0; i < n; i++) want = fmax(want, x[i]);
    uint64_t dx = upload(&k, x, sizeof x), d_o = poisoned(&k, sizeof out);
    launch(&k, 1, (void *[]){&dx, &d_o, &n});
    download(&k, out, d_o, sizeof out);
    cr_expect_eq((double)out[0], want, "max of a load whose other is float(\"-inf\"): %g, want %g (seed %llu)", out[0], want,
                 (unsigned long long)seed);
    cr_expect_eq((double)out[1], want, "max from a float(\"-inf\") start: %g, want %g", out[1], want);
    cr_expect(isinf(out[2]) && out[2] < 0, "max of nothing: %g, want -inf", out[2]);
    cr_expect(isinf(out[3]) && out[3] > 0, "float(\" +INF \"): %g", out[3]);
    cr_expect(isnan(out[4]), "float('NaN'): %g", out[4]);
    cr_expect(isinf(out[5]) && out[5] > 0, "-float(\"-infinity\") * 0.5: %g", out[5]);
    unload(&k);
    static const BadSource bad[] = {
        {"kernel k(p: *f32) { store(p, float(\"1.5\")); }\n", "t.tile:1:36: error: 'float' of the string \"1.5\": only Python's"},
        {"kernel k(p: *f32) { store(p, float(\"-nanx\")); }\n", "t.tile:1:36: error: 'float' of the string \"-nanx\""},
    };
    expect_compile_errors(bad, sizeof bad / sizeof *bad);
}
