/* test_blockptr.c - Triton's block pointers (make_block_ptr, advance, load and store with
 * boundary_check and padding_option) and the loops that move pointers by carrying them (the
 * tutorial matmul's `a_ptrs += BLOCK_K`), which the induction pass turns into functions of
 * the induction variable so software pipelining takes their loads.  Kernels run through the
 * public API (which specializes arguments divisible by 16, as users' launches do) on the
 * emulator, for sm_80 and for sm_90a (wgmma, tensor maps), against float64 references on
 * fresh random inputs with the outputs poisoned, at sizes that are not multiples of the tiles;
 * tuples carried by loops and merged by `if`s; and the PTX shows the loads pipelined.  Kernel parameters that are
 * several launch arguments: tensor descriptors (`tensor_desc(...)`) and tuples. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tile/tile.h>

#include "support/hostfloat.h"
#include "test_rng.h"

#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

TestSuite(blockptr, .init = seed_rng);

/* C = A B: A m x k (row stride k), B k x n (row stride n), C m x n f32. */
static const char bp_src[] =
    "kernel mm(a: *f16, b: *f16, c: *f32, M: i32, N: i32, K: i32, sam: i32, sak: i32, sbk: i32, sbn: i32,\n"
    "          const BM: i32 = 64, const BN: i32 = 64, const BK: i32 = 32) {\n"
    "    let pm = program_id(0);\n"
    "    let pn = program_id(1);\n"
    "    let ap = make_block_ptr(base=a, shape=(M, K), strides=(sam, sak), offsets=(pm * BM, 0), block_shape=(BM, BK), order=(1, 0));\n"
    "    let bp = make_block_ptr(b, (K, N), (sbk, sbn), (0, pn * BN), (BK, BN), (1, 0));\n"
    "    let acc = zeros((BM, BN), dtype=f32);\n"
    "    for k in range(0, K, BK) {\n"
    "        let x = load(ap, boundary_check=(0, 1), padding_option=\"zero\");\n"
    "        let y = load(bp, boundary_check=(0, 1));\n"
    "        acc = dot(x, y, acc);\n"
    "        ap = advance(ap, (0, BK));\n"
    "        bp = advance(bp, [BK, 0]);\n"
    "    }\n"
    "    let cp = make_block_ptr(base=c, shape=(M, N), strides=(N, 1), offsets=(pm * BM, pn * BN), block_shape=(BM, BN), order=(1, 0));\n"
    "    store(cp, acc, boundary_check=(0, 1));\n"
    "}\n";

/* The Triton tutorial's form: pointer tiles carried through the loop and advanced. */
static const char carried_src[] =
    "kernel mm(a: *f16, b: *f16, c: *f32, M: i32, N: i32, K: i32, sam: i32, sak: i32, sbk: i32, sbn: i32,\n"
    "          const BM: i32 = 64, const BN: i32 = 64, const BK: i32 = 32) {\n"
    "    let rm = program_id(0) * BM + arange(0, BM);\n"
    "    let rn = program_id(1) * BN + arange(0, BN);\n"
    "    let rk = arange(0, BK);\n"
    "    let a_ptrs = a + rm[:, None] * sam + rk[None, :] * sak;\n"
    "    let b_ptrs = b + rk[:, None] * sbk + rn[None, :] * sbn;\n"
    "    let acc = zeros((BM, BN), dtype=f32);\n"
    "    for k in range(0, K, BK) {\n"
    "        let x = load(a_ptrs, (rm[:, None] < M) && (rk[None, :] < K - k), 0.0);\n"
    "        let y = load(b_ptrs, (rk[:, None] < K - k) && (rn[None, :] < N), 0.0);\n"
    "        acc = dot(x, y, acc);\n"
    "        a_ptrs += BK * sak;\n"
    "        b_ptrs += BK * sbk;\n"
    "    }\n"
    "    store(c + rm[:, None] * N + rn[None, :], acc, (rm[:, None] < M) && (rn[None, :] < N));\n"
    "}\n";

static tile_context *open_ctx(const char *dev) {
    tile_context *ctx;
    tile_status st = tile_context_create(dev, &ctx);
    cr_assert_eq(st, TILE_OK, "%s: %s", dev, tile_status_string(st));
    return ctx;
}

/* Small integers: every product and sum is exact in f32, so the result must equal float64's. */
static void run_mm(const char *src, const char *dev, int m, int n, int k) {
    tile_context *ctx = open_ctx(dev);
    size_t na = (size_t)m * k, nb = (size_t)k * n, nc = (size_t)m * n;
    uint16_t *ha = malloc(na * 2), *hb = malloc(nb * 2);
    int *va = malloc(na * sizeof *va), *vb = malloc(nb * sizeof *vb);
    float *out = malloc(nc * 4);
    for (size_t i = 0; i < na; i++) va[i] = (int)(rnext() % 9) - 4, ha[i] = f32_to_f16((float)va[i]);
    for (size_t i = 0; i < nb; i++) vb[i] = (int)(rnext() % 9) - 4, hb[i] = f32_to_f16((float)vb[i]);
    tile_devptr da, db, dc;
    cr_assert_eq(tile_malloc(ctx, na * 2, &da), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, nb * 2, &db), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, nc * 4 + 4096, &dc), TILE_OK);
    tile_memcpy_htod(ctx, da, ha, na * 2);
    tile_memcpy_htod(ctx, db, hb, nb * 2);
    tile_memset(ctx, dc, 0xFF, nc * 4 + 4096); /* NaN, past the end too */
    tile_module *mod;
    cr_assert_eq(tile_module_load_source_ex(ctx, "mm.tile", src, &(tile_compile_options){0}, &mod), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *kern;
    cr_assert_eq(tile_module_get_kernel(mod, "mm", &kern), TILE_OK);
    int32_t sam = k, sak = 1, sbk = n, sbn = 1;
    void *args[] = {&da, &db, &dc, &m, &n, &k, &sam, &sak, &sbk, &sbn};
    tile_dim3 grid = {(unsigned)((m + 63) / 64), (unsigned)((n + 63) / 64), 1};
    cr_assert_eq(tile_launch(kern, grid, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, out, dc, nc * 4), TILE_OK);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double want = 0;
            for (int kk = 0; kk < k; kk++) want += (double)va[(size_t)i * k + kk] * vb[(size_t)kk * n + j];
            cr_assert(out[(size_t)i * n + j] == want, "%s on %s, %dx%dx%d (seed %llu): (%d, %d) = %g, want %g", src == bp_src ? "block pointers" : "carried pointers",
                      dev, m, n, k, (unsigned long long)seed, i, j, out[(size_t)i * n + j], want);
        }
    uint32_t tail;
    cr_assert_eq(tile_memcpy_dtoh(ctx, &tail, dc + nc * 4, 4), TILE_OK);
    cr_assert_eq(tail, 0xFFFFFFFFu, "a store past the end of C");
    tile_module_unload(mod);
    tile_context_destroy(ctx);
    free(ha), free(hb), free(va), free(vb), free(out);
}

/* K a multiple of 16: strides and K are specialized, the loads vectorize and pipeline; 70: neither. */
Test(blockptr, matmul_sm80) {
    run_mm(bp_src, "emu", 100, 80, 96);
    run_mm(bp_src, "emu", 37, 72, 70);
}

Test(blockptr, matmul_sm90a) { run_mm(bp_src, "emu:sm_90a", 100, 80, 96); }

Test(blockptr, carried_pointers_sm80) {
    run_mm(carried_src, "emu", 100, 80, 96);
    run_mm(carried_src, "emu", 37, 72, 70);
}

Test(blockptr, carried_pointers_sm90a) { run_mm(carried_src, "emu:sm_90a", 100, 80, 96); }

/* What a launch with m, n, k divisible by 16 compiles: the loads are copies into shared memory
 * issued iterations ahead (before the induction pass neither form was pipelined). */
static char *ptx_of(const char *src, const char *arch) {
    static const char *const spec[] = {"M=16", "N=16", "K=16", "sam=16", "sak=1", "sbk=16", "sbn=1", NULL};
    tile_compile_options o = {.arch = arch, .specialize = spec};
    tile_compiled c;
    tile_status st = tile_compile_source("mm.tile", src, &o, &c);
    cr_assert_eq(st, TILE_OK, "%s\n%s", tile_status_string(st), c.diagnostics);
    char *ptx = strdup(c.ptx);
    tile_compiled_free(&c);
    return ptx;
}

Test(blockptr, loads_are_pipelined) {
    const char *srcs[] = {bp_src, carried_src};
    for (int s = 0; s < 2; s++) {
        char *p80 = ptx_of(srcs[s], "sm_80"), *p90 = ptx_of(srcs[s], "sm_90a");
        cr_expect(strstr(p80, "cp.async.cg.shared.global") && strstr(p80, "cp.async.wait_group"), "%s: sm_80 loads not pipelined:\n%s",
                  s ? "carried" : "block pointers", p80);
        cr_expect(strstr(p90, "cp.async.bulk.tensor") && strstr(p90, "wgmma.mma_async"), "%s: sm_90a loads not through tensor maps",
                  s ? "carried" : "block pointers");
        free(p80), free(p90);
    }
}

/* boundary_check on some dims only, and padding_option="nan": a block of [16, 32] read at
 * (r0, c0) of an m x n matrix and written whole to a dense 16 x 32 output. */
Test(blockptr, boundary_check_and_padding) {
    static const char src[] =
        "kernel blk(x: *f32, out: *f32, m: i32, n: i32, r0: i32, c0: i32, const CHECK: i32 = 3, const NAN: i1 = false) {\n"
        "    let p = make_block_ptr(x, (m, n), (n, 1), (r0, c0), (16, 32), (1, 0));\n"
        "    let o = make_block_ptr(out, [16, 32], [32, 1], [0, 0], [16, 32]);\n"
        "    if CHECK == 3 {\n"
        "        if NAN { store(o, load(p, boundary_check=(0, 1), padding_option=\"nan\")); }\n"
        "        else { store(o, load(p, boundary_check=(1, 0))); }\n"
        "    } else if CHECK == 1 {\n"
        "        store(o, load(p, boundary_check=(1,)));\n"
        "    } else {\n"
        "        store(o, load(p));\n"
        "    }\n"
        "    debug_barrier();\n" /* every thread's read of p before any write through q */
        "    let q = advance(p, (-r0, 0 - c0));\n"
        "    store(q, load(q, boundary_check=(0, 1)) + 1.0, boundary_check=(0, 1));\n"
        "}\n";
    tile_context *ctx = open_ctx("emu");
    int m = 20, n = 40;
    float *hx = malloc((size_t)m * n * 4), out[16 * 32], back[20 * 40];
    for (int i = 0; i < m * n; i++) hx[i] = (float)(rnext() % 1000) - 500.0f;
    tile_devptr dx, dout;
    cr_assert_eq(tile_malloc(ctx, (size_t)m * n * 4, &dx), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof out, &dout), TILE_OK);
    struct {
        int check, nan, r0, c0;
    } cases[] = {{3, 0, 10, 20}, {3, 1, -3, 25}, {1, 0, 2, 30}, {0, 0, 4, 8}};
    for (size_t t = 0; t < NELEMS(cases); t++) {
        char def_check[32], def_nan[32];
        snprintf(def_check, sizeof def_check, "CHECK=%d", cases[t].check);
        snprintf(def_nan, sizeof def_nan, "NAN=%s", cases[t].nan ? "true" : "false");
        const char *defs[] = {def_check, def_nan, NULL};
        tile_compile_options o = {.defines = defs};
        tile_module *mod;
        cr_assert_eq(tile_module_load_source_ex(ctx, "blk.tile", src, &o, &mod), TILE_OK, "%s", tile_last_error(ctx));
        tile_kernel *k;
        cr_assert_eq(tile_module_get_kernel(mod, "blk", &k), TILE_OK);
        tile_memcpy_htod(ctx, dx, hx, (size_t)m * n * 4);
        tile_memset(ctx, dout, 0x7F, sizeof out); /* a large finite poison */
        int r0 = cases[t].r0, c0 = cases[t].c0;
        void *args[] = {&dx, &dout, &m, &n, &r0, &c0};
        cr_assert_eq(tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
        cr_assert_eq(tile_memcpy_dtoh(ctx, out, dout, sizeof out), TILE_OK);
        cr_assert_eq(tile_memcpy_dtoh(ctx, back, dx, sizeof back), TILE_OK);
        for (int i = 0; i < 16; i++)
            for (int j = 0; j < 32; j++) {
                int r = r0 + i, c = c0 + j;
                bool in = r >= 0 && r < m && c >= 0 && c < n;
                float got = out[i * 32 + j];
                if (in) cr_assert(got == hx[r * n + c], "case %zu (%d, %d): %g, want %g", t, i, j, got, hx[r * n + c]);
                else if (cases[t].check == 3) cr_assert(cases[t].nan ? isnan(got) : got == 0.0f, "case %zu (%d, %d) outside: %g", t, i, j, got);
                else if (cases[t].check == 1 && c >= n && r < m) cr_assert(got == 0.0f, "case %zu (%d, %d) past the columns: %g", t, i, j, got);
            }
        /* the block at (0, 0), advanced back there, incremented in place under its bounds */
        for (int r = 0; r < m; r++)
            for (int c = 0; c < n; c++) {
                float want = hx[r * n + c] + (r < 16 && c < 32 ? 1.0f : 0.0f);
                cr_assert(back[r * n + c] == want, "case %zu: x[%d][%d] = %g after the in-place store, want %g", t, r, c, back[r * n + c], want);
            }
        tile_module_unload(mod);
    }
    tile_context_destroy(ctx);
    free(hx);
}

/* Loops that carry pointers and integers advanced by fixed steps from a start that is not 0,
 * by a step that is not a power of two, and tuples carried by loops and merged by ifs. */
Test(blockptr, carried_values_and_tuples) {
    static const char src[] =
        "fn fib(n: i32) {\n"
        "    let st = (0, 1);\n"
        "    for i in range(0, n) {\n"
        "        let (a, b) = st;\n"
        "        st = (b, a + b);\n"
        "    }\n"
        "    let (r, s) = st;\n"
        "    return r;\n"
        "}\n"
        "kernel k(x: *i32, out: *i32, lo: i32, hi: i32, flag: i32) {\n"
        "    let p = x + 1;\n"
        "    let idx = lo * 7;\n"
        "    let acc = zeros([4], i32);\n"
        "    let w = 5 * flag;\n"
        "    for i in range(lo, hi, 3) {\n"
        "        acc += load(p + arange(0, 4)) * (idx - i);\n"
        "        p += w + 2;\n"
        "        idx += 7;\n"
        "    }\n"
        "    store(out + arange(0, 4), acc);\n"
        "    let pair = (lo, hi);\n"
        "    if flag > 0 { pair = (hi, lo + 100); }\n"
        "    let (u, v) = pair;\n"
        "    store(out + 4, u);\n"
        "    store(out + 5, v);\n"
        "    store(out + 6, fib(hi));\n"
        "    let t = (0, 3);\n"
        "    let n = 0;\n"
        "    while n < flag {\n"
        "        let (a, b) = t;\n"
        "        t = (a + 1, b * 2);\n"
        "        n += 1;\n"
        "    }\n"
        "    let (ta, tb) = t;\n"
        "    store(out + 7, ta * 1000 + tb);\n"
        "}\n";
    tile_context *ctx = open_ctx("emu");
    int nx = 4096;
    int32_t *hx = malloc((size_t)nx * 4), out[8];
    for (int i = 0; i < nx; i++) hx[i] = (int32_t)(rnext() % 201) - 100;
    tile_devptr dx, dout;
    cr_assert_eq(tile_malloc(ctx, (size_t)nx * 4, &dx), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof out, &dout), TILE_OK);
    tile_memcpy_htod(ctx, dx, hx, (size_t)nx * 4);
    tile_module *mod;
    cr_assert_eq(tile_module_load_source_ex(ctx, "k.tile", src, &(tile_compile_options){0}, &mod), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(mod, "k", &k), TILE_OK);
    struct {
        int lo, hi, flag;
    } cases[] = {{2, 40, 1}, {5, 6, 0}, {7, 7, 1}, {-4, 30, 3}};
    for (size_t t = 0; t < NELEMS(cases); t++) {
        int lo = cases[t].lo, hi = cases[t].hi, flag = cases[t].flag;
        tile_memset(ctx, dout, 0x55, sizeof out);
        void *args[] = {&dx, &dout, &lo, &hi, &flag};
        cr_assert_eq(tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
        cr_assert_eq(tile_memcpy_dtoh(ctx, out, dout, sizeof out), TILE_OK);
        int64_t want[4] = {0};
        int off = 1, idx = lo * 7;
        for (int i = lo; i < hi; i += 3) {
            for (int e = 0; e < 4; e++) want[e] += (int64_t)hx[off + e] * (idx - i);
            off += 5 * flag + 2;
            idx += 7;
        }
        for (int e = 0; e < 4; e++) cr_assert_eq(out[e], (int32_t)want[e], "case %zu: acc[%d] = %d, want %lld", t, e, out[e], (long long)want[e]);
        cr_assert_eq(out[4], flag > 0 ? hi : lo, "case %zu: the if's tuple", t);
        cr_assert_eq(out[5], flag > 0 ? lo + 100 : hi, "case %zu: the if's tuple", t);
        int32_t a = 0, b = 1;
        for (int i = 0; i < hi; i++) {
            int32_t c = a + b;
            a = b, b = c;
        }
        cr_assert_eq(out[6], a, "case %zu: fib(%d) = %d, want %d", t, hi, out[6], a);
        cr_assert_eq(out[7], flag * 1000 + (3 << flag), "case %zu: the while's tuple", t);
    }
    tile_module_unload(mod);
    tile_context_destroy(ctx);
    free(hx);
}

/* Block pointers and tensor descriptors inside tuples, as Triton's helpers return them: a fn returns
 * (advance(bp, ..), acc) from either of two compile-time branches, a loop carries the pair through
 * a run-time `if`, and a tuple holding a descriptor is merged by an `if` (a block pointer or a
 * descriptor as an element of a tuple was "cannot be used as a value"). */
Test(blockptr, records_in_tuples) {
    static const char src[] =
        "fn step(bp, acc, const DOWN: i1) {\n"
        "    let t = load(bp, boundary_check=(0, 1));\n"
        "    if DOWN { return (advance(bp, (16, 0)), acc - t); }\n"
        "    return (advance(bp, (0, 16)), acc + t);\n"
        "}\n"
        "kernel k(a: *f32, o: *f32, m: i32, n: i32, flag: i32) {\n"
        "    let st = (make_block_ptr(a, (m, n), (n, 1), (0, 0), (16, 16), (1, 0)), zeros([16, 16], f32));\n"
        "    for i in range(0, 4) {\n"
        "        if i % 2 == flag { st = step(st[0], st[1], false); } else { st = step(st[0], st[1], true); }\n"
        "    }\n"
        "    let (bq, acc) = st;\n"
        "    let r = arange(0, 16)[:, None];\n"
        "    let c = arange(0, 16)[None, :];\n"
        "    store(o + r * 16 + c, acc);\n"
        "    let dt = (make_tensor_descriptor(a, [m, n], [n, 1], [16, 16]), 0);\n"
        "    if flag == 1 { dt = (make_tensor_descriptor(a + n, [m - 1, n], [n, 1], [16, 16]), 20); }\n"
        "    let (d, off) = dt;\n"
        "    store(o + 256 + r * 16 + c, load_tensor_descriptor(d, [off, off + 30]) + load(bq, boundary_check=(0, 1)));\n"
        "}\n";
    enum { M = 40, N = 50 };
    tile_context *ctx = open_ctx("emu");
    float ha[M * N], out[512];
    for (int i = 0; i < M * N; i++) ha[i] = (float)((int)(rnext() % 199) - 99);
    tile_devptr da, dout;
    cr_assert_eq(tile_malloc(ctx, sizeof ha, &da), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof out, &dout), TILE_OK);
    tile_memcpy_htod(ctx, da, ha, sizeof ha);
    tile_module *mod;
    cr_assert_eq(tile_module_load_source_ex(ctx, "k.tile", src, &(tile_compile_options){0}, &mod), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(mod, "k", &k), TILE_OK);
#define A(i, j) ((i) >= 0 && (i) < M && (j) >= 0 && (j) < N ? (double)ha[(i) * N + (j)] : 0.0)
    for (int flag = 0; flag < 2; flag++) {
        int m = M, n = N;
        tile_memset(ctx, dout, 0xff, sizeof out);
        void *args[] = {&da, &dout, &m, &n, &flag};
        cr_assert_eq(tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
        cr_assert_eq(tile_memcpy_dtoh(ctx, out, dout, sizeof out), TILE_OK);
        double acc[16][16] = {{0}};
        int oi = 0, oj = 0;
        for (int it = 0; it < 4; it++) {
            bool right = it % 2 == flag;
            for (int i = 0; i < 16; i++)
                for (int j = 0; j < 16; j++) acc[i][j] += right ? A(oi + i, oj + j) : -A(oi + i, oj + j);
            if (right) oj += 16;
            else oi += 16;
        }
        int off = flag ? 20 : 0, row0 = flag ? 1 : 0;
        for (int i = 0; i < 16; i++)
            for (int j = 0; j < 16; j++) {
                cr_expect_eq(out[i * 16 + j], acc[i][j], "flag %d: acc[%d][%d] = %g, want %g", flag, i, j, out[i * 16 + j], acc[i][j]);
                /* the second descriptor starts a row down and has a row fewer */
                double d = off + i < M - row0 ? A(row0 + off + i, off + 30 + j) : 0.0;
                double want = d + A(oi + i, oj + j);
                cr_expect_eq(out[256 + i * 16 + j], want, "flag %d: [%d][%d] = %g, want %g", flag, i, j, out[256 + i * 16 + j], want);
            }
    }
#undef A
    tile_module_unload(mod);
    tile_context_destroy(ctx);
}

/* Mistakes get located errors. */
static void expect_error(const char *src, const char *want) {
    tile_compile_options o = {0};
    tile_compiled c;
    tile_status st = tile_compile_source("e.tile", src, &o, &c);
    cr_expect_neq(st, TILE_OK, "compiled: %s", src);
    cr_expect(c.diagnostics && strstr(c.diagnostics, want), "want '%s' in:\n%s", want, c.diagnostics ? c.diagnostics : "(none)");
    tile_compiled_free(&c);
}

Test(blockptr, errors) {
#define K0 "kernel k(x: *f32, n: i32) {\n    let p = make_block_ptr(x, (n, n), (n, 1), (0, 0), (16, 16), (1, 0));\n"
    expect_error(K0 "    let v = load(p, n > 0);\n}\n", "e.tile:3:21: error: 'load' of a block pointer takes no 'mask'");
    expect_error(K0 "    let v = load(p, other=1.0);\n}\n", "e.tile:3:27: error: 'load' of a block pointer takes no 'other'");
    expect_error(K0 "    store(p, 1.0, n > 0);\n}\n", "takes no 'mask'");
    expect_error(K0 "    let v = load(x + arange(0, 16), boundary_check=(0,));\n}\n",
                 "e.tile:3:52: error: 'boundary_check' of 'load' applies to block pointers (make_block_ptr) only");
    expect_error(K0 "    let v = load(p, boundary_check=(0, 2));\n}\n", "e.tile:3:36: error: 'boundary_check' of 'load' names dim 2");
    expect_error(K0 "    let v = load(p, padding_option=\"inf\");\n}\n", "unknown padding_option \"inf\"");
    expect_error("kernel k(x: *i32, n: i32) {\n    let p = make_block_ptr(x, (n,), (1,), (0,), (16,), (0,));\n"
                 "    let v = load(p, boundary_check=(0,), padding_option=\"nan\");\n}\n",
                 "padding_option \"nan\" of 'load' needs floats");
    expect_error("kernel k(x: *f32, n: i32) {\n    let p = make_block_ptr(x, (n, n), (n, 1), (0, 0), (16, 16), (0, 0));\n}\n",
                 "e.tile:2:65: error: 'order' of 'make_block_ptr' must be a permutation of the 2 dims");
    expect_error("kernel k(x: *f32, n: i32) {\n    let p = make_block_ptr(x, (n, n), (n,), (0, 0), (16, 16));\n}\n",
                 "e.tile:2:39: error: 'make_block_ptr': 1 strides for a block of 2 dims");
    expect_error(K0 "    p = advance(p, (16,));\n}\n", "e.tile:3:20: error: 'advance': 1 offsets for a block pointer of 2 dims");
    expect_error(K0 "    let q = advance(x, (16,));\n}\n", "'advance' expects a block pointer (from make_block_ptr), got 'ptr<f32>'");
    expect_error(K0 "    let v = load_tensor_descriptor(p, [0, 0]);\n}\n", "(a block pointer is read with load(ptr, boundary_check=...))");
    /* a block pointer carried by a loop keeps its block shape */
    expect_error(K0 "    for i in range(0, n) {\n        p = make_block_ptr(x, (n, n), (n, 1), (0, 0), (16, 32), (1, 0));\n    }\n}\n",
                 "e.tile:4:9: error: loop-carried variable 'p' changes from 'block pointer of block [16, 16]' to 'block pointer of block [16, 32]'");
    expect_error(K0 "    let q = p + 1;\n}\n", "e.tile:3:15: error: a block pointer cannot be used as a value");
    /* a tuple's + and * (concatenation, repetition) take no block pointer: the same error as any other use */
    expect_error(K0 "    let q = (1, 2) + p;\n}\n", "e.tile:3:20: error: a block pointer cannot be used as a value");
    expect_error(K0 "    let q = p * 2;\n}\n", "e.tile:3:15: error: a block pointer cannot be used as a value");
    expect_error(K0 "    let (a, b, c, d, e, f, g, h) = p;\n}\n", "cannot unpack 'block pointer of block [16, 16]' into 8 names");
    /* a tuple holding a block pointer keeps its block shape through an if, and says which it had */
    expect_error(K0 "    let t = (p, 1);\n    if n > 0 { t = (make_block_ptr(x, (n, n), (n, 1), (0, 0), (16, 32), (1, 0)), 2); }\n}\n",
                 "'t' is 'tuple (block pointer of block [16, 32], i32)' in one branch of a run-time 'if' and 'tuple (block pointer of block "
                 "[16, 16], i32)' in the other");
    /* tuples nest (a block pointer in a tuple in a tuple, as Triton's); one is still no value */
    expect_error(K0 "    let t = ((p, 1), 2);\n    store(x, t[0]);\n}\n", "e.tile:4:14: error: a tuple of 2 values cannot be used as a value");
    expect_error("kernel k(x: *f32, n: i32) {\n    let t = (1, 2);\n    if n > 0 { t = (3, x); }\n}\n",
                 "element 1 of 't' is a pointer in one branch of 'if' and a number in the other");
#undef K0
}

/* make_tensor_descriptor(..., padding_option="nan"), Triton's: a descriptor's loads read NaN outside the tensor
 * (the default "zero" reads 0), also when a loop carries it; the keyword was an error. */
Test(blockptr, descriptor_padding_option) {
    static const char src[] =
        "kernel k(x: *f32, out: *f32, m: i32, n: i32, r0: i32, c0: i32) {\n"
        "    let dn = make_tensor_descriptor(x, [m, n], [n, 1], [16, 32], padding_option=\"nan\");\n"
        "    let dz = make_tensor_descriptor(x, [m, n], [n, 1], [16, 32], padding_option=\"zero\");\n"
        "    let i = arange(0, 16)[:, None] * 32 + arange(0, 32)[None, :];\n"
        "    for t in range(0, 2) {\n"
        "        store(out + t * 1024 + i, load_tensor_descriptor(dn, [r0, c0]));\n"
        "        store(out + t * 1024 + 512 + i, load_tensor_descriptor(dz, [r0, c0]));\n"
        "        dn = make_tensor_descriptor(x, [m, n], [n, 1], [16, 32], padding_option=\"nan\");\n"
        "    }\n"
        "}\n";
    tile_context *ctx = open_ctx("emu");
    int m = 20, n = 40, r0 = 9, c0 = -3;
    float hx[20 * 40], out[2048];
    for (int i = 0; i < m * n; i++) hx[i] = (float)(rnext() % 1000) - 500.0f;
    tile_devptr dx, dout;
    cr_assert_eq(tile_malloc(ctx, sizeof hx, &dx), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof out, &dout), TILE_OK);
    tile_memcpy_htod(ctx, dx, hx, sizeof hx);
    tile_memset(ctx, dout, 0x7F, sizeof out); /* a large finite poison */
    tile_module *mod;
    cr_assert_eq(tile_module_load_source_ex(ctx, "d.tile", src, &(tile_compile_options){0}, &mod), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(mod, "k", &k), TILE_OK);
    void *args[] = {&dx, &dout, &m, &n, &r0, &c0};
    cr_assert_eq(tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, out, dout, sizeof out), TILE_OK);
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < 16; i++)
            for (int j = 0; j < 32; j++) {
                int r = r0 + i, c = c0 + j;
                bool in = r >= 0 && r < m && c >= 0 && c < n;
                float gn = out[t * 1024 + i * 32 + j], gz = out[t * 1024 + 512 + i * 32 + j];
                if (in) cr_assert(gn == hx[r * n + c] && gz == hx[r * n + c], "iteration %d (%d, %d): %g and %g, want %g", t, i, j, gn, gz,
                                  hx[r * n + c]);
                else cr_assert(isnan(gn) && gz == 0.0f, "iteration %d (%d, %d) outside: %g (want NaN) and %g (want 0)", t, i, j, gn, gz);
            }
    tile_module_unload(mod);
    tile_context_destroy(ctx);
    expect_error("kernel k(x: *f32, n: i32) {\n    let d = make_tensor_descriptor(x, [n], [1], [16], padding_option=\"inf\");\n}\n",
                 "e.tile:2:70: error: unknown padding_option \"inf\" of 'make_tensor_descriptor': expected \"zero\" or \"nan\"");
    expect_error("kernel k(x: *i32, n: i32) {\n    let d = make_tensor_descriptor(x, [n], [1], [16], padding_option=\"nan\");\n}\n",
                 "e.tile:2:70: error: padding_option \"nan\" of 'make_tensor_descriptor' needs floats, the base pointer's are 'i32'");
}

/* A loop whose span passes the signed range (lb = -2^31 + 10, steps of 2^30, a step that is not a power of
 * two): the iteration number of the carried counter and pointer is computed unsigned, so j and p stay exact. */
Test(blockptr, induction_spans_past_i32) {
    static const char src[] =
        "kernel k(out: *i32, lb: i32, ub: i32, const STEP: i32 = 1073741824) {\n"
        "    let j = 0;\n"
        "    let p = out + 16;\n"
        "    for i in range(lb, ub, STEP) {\n"
        "        store(out + 4 + j, i);\n"
        "        store(p, j);\n"
        "        j += 1;\n"
        "        p += 1;\n"
        "    }\n"
        "    store(out, j);\n"
        "}\n";
    tile_context *ctx = open_ctx("emu");
    struct {
        int32_t step, lb, ub;
    } cases[] = {{1073741824, -2147483638, 1073741814}, {1000000001, -2147483643, 1000000000}, {1073741824, -5, 10}};
    for (size_t t = 0; t < NELEMS(cases); t++) {
        char def[32];
        snprintf(def, sizeof def, "STEP=%d", cases[t].step);
        const char *defs[] = {def, NULL};
        tile_compile_options o = {.defines = defs};
        tile_module *mod;
        cr_assert_eq(tile_module_load_source_ex(ctx, "k.tile", src, &o, &mod), TILE_OK, "%s", tile_last_error(ctx));
        tile_kernel *k;
        cr_assert_eq(tile_module_get_kernel(mod, "k", &k), TILE_OK);
        int32_t out[32];
        for (int i = 0; i < 32; i++) out[i] = -7;
        tile_devptr d;
        cr_assert_eq(tile_malloc(ctx, sizeof out, &d), TILE_OK);
        tile_memcpy_htod(ctx, d, out, sizeof out);
        int32_t lb = cases[t].lb, ub = cases[t].ub;
        void *args[] = {&d, &lb, &ub};
        cr_assert_eq(tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL), TILE_OK, "case %zu: %s", t, tile_last_error(ctx));
        cr_assert_eq(tile_memcpy_dtoh(ctx, out, d, sizeof out), TILE_OK);
        int n = 0;
        for (int64_t i = lb; i < ub; i += cases[t].step, n++) {
            cr_assert_eq(out[4 + n], (int32_t)i, "case %zu: iteration %d stored %d, want %lld", t, n, out[4 + n], (long long)i);
            cr_assert_eq(out[16 + n], n, "case %zu: the carried pointer's store %d: %d", t, n, out[16 + n]);
        }
        cr_assert_eq(out[0], n, "case %zu: j = %d, want %d", t, out[0], n);
        tile_free(ctx, d);
        tile_module_unload(mod);
    }
    tile_context_destroy(ctx);
}

/* Strides are i64, as Triton's: a block pointer and a descriptor over rows 2^30 bytes apart read row 2 at
 * 2^31 bytes (the index times an i32 stride wrapped and faulted); a block pointer's offsets are i32, and
 * an i64 one is an error rather than cut. */
Test(blockptr, strides_are_64_bit) {
    static const char src[] =
        "kernel k(x: *i8, out: *i32, rows: i32, stride: i32) {\n"
        "    let bp = make_block_ptr(x, (rows, 32), (stride, 1), (0, 0), (4, 32), (1, 0));\n"
        "    let a = load(bp, boundary_check=(0, 1));\n"
        "    let d = make_tensor_descriptor(x, [rows, 32], [stride, 1], [4, 32]);\n"
        "    let b = load_tensor_descriptor(d, [0, 0]);\n"
        "    let i = arange(0, 4);\n"
        "    let j = arange(0, 32);\n"
        "    store(out + i[:, None] * 32 + j[None, :], a as i32 + (b as i32) * 1000);\n"
        "}\n";
    tile_context *ctx = open_ctx("emu");
    const int32_t stride = 1 << 30, rows = 3;
    tile_devptr x, out;
    size_t bytes = (size_t)2 * stride + 64;
    cr_assert_eq(tile_malloc(ctx, bytes, &x), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_malloc(ctx, 4 * 32 * 4, &out), TILE_OK);
    int8_t row[32];
    for (int r = 0; r < rows; r++) {
        for (int j = 0; j < 32; j++) row[j] = (int8_t)(r * 40 + j);
        cr_assert_eq(tile_memcpy_htod(ctx, x + (tile_devptr)r * stride, row, 32), TILE_OK);
    }
    tile_module *mod;
    cr_assert_eq(tile_module_load_source_ex(ctx, "k.tile", src, &(tile_compile_options){0}, &mod), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(mod, "k", &k), TILE_OK);
    int32_t nrows = rows, s = stride;
    void *args[] = {&x, &out, &nrows, &s};
    cr_assert_eq(tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    int32_t h[4 * 32];
    cr_assert_eq(tile_memcpy_dtoh(ctx, h, out, sizeof h), TILE_OK);
    for (int r = 0; r < 4; r++)
        for (int j = 0; j < 32; j++) {
            int v = r < rows ? r * 40 + j : 0;
            cr_assert_eq(h[r * 32 + j], v + v * 1000, "row %d col %d: %d, want %d", r, j, h[r * 32 + j], v * 1001);
        }
    tile_module_unload(mod);
    tile_context_destroy(ctx);
    tile_compile_options o = {0};
    tile_compiled c;
    cr_assert_neq(tile_compile_source("e.tile",
                                      "kernel k(x: *f32, n: i64) {\n    let p = make_block_ptr(x, (n,), (1,), (n,), (16,));\n}\n", &o, &c),
                  TILE_OK);
    cr_expect(strstr(c.diagnostics, "e.tile:2:43: error: a block pointer's offsets are i32, as Triton's; got an 'i64'"), "%s", c.diagnostics);
    tile_compiled_free(&c);
}

/* ---- tensor descriptor parameters: `d: tensor_desc(T, [B0, B1])`, launched as d, d_shape0, d_shape1,
 * d_stride0, d_stride1 (Triton's host-built TensorDescriptor as a kernel argument) ---- */

static const char desc_mm_src[] =
    "kernel mm(a: tensor_desc(f16, [BM, BK]), b: tensor_desc(f16, [BK, BN]), c: tensor_desc(f32, [BM, BN]), K: i32,\n"
    "          const BM: i32 = 64, const BN: i32 = 64, const BK: i32 = 32) {\n"
    "    let pm = program_id(0) * BM;\n"
    "    let pn = program_id(1) * BN;\n"
    "    let acc = zeros((BM, BN), dtype=f32);\n"
    "    for k in range(0, K, BK) {\n"
    "        acc = dot(load_tensor_descriptor(a, [pm, k]), load_tensor_descriptor(b, [k, pn]), acc);\n"
    "    }\n"
    "    store_tensor_descriptor(c, [pm, pn], acc);\n"
    "}\n";

/* C = A B through three descriptor parameters; C is poisoned and has a padded row stride (ldc = n + 5), so a
 * store outside [m, n) would land in the padding or past the end. */
static void run_desc_mm(const char *dev, int m, int n, int k) {
    tile_context *ctx = open_ctx(dev);
    int ldc = n + 5;
    size_t na = (size_t)m * k, nb = (size_t)k * n, nc = (size_t)m * ldc;
    uint16_t *ha = malloc(na * 2), *hb = malloc(nb * 2);
    int *va = malloc(na * sizeof *va), *vb = malloc(nb * sizeof *vb);
    float *out = malloc(nc * 4);
    for (size_t i = 0; i < na; i++) va[i] = (int)(rnext() % 9) - 4, ha[i] = f32_to_f16((float)va[i]);
    for (size_t i = 0; i < nb; i++) vb[i] = (int)(rnext() % 9) - 4, hb[i] = f32_to_f16((float)vb[i]);
    tile_devptr da, db, dc;
    cr_assert_eq(tile_malloc(ctx, na * 2, &da), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, nb * 2, &db), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, nc * 4 + 4096, &dc), TILE_OK);
    tile_memcpy_htod(ctx, da, ha, na * 2);
    tile_memcpy_htod(ctx, db, hb, nb * 2);
    tile_memset(ctx, dc, 0xFF, nc * 4 + 4096);
    tile_module *mod;
    cr_assert_eq(tile_module_load_source_ex(ctx, "mm.tile", desc_mm_src, &(tile_compile_options){0}, &mod), TILE_OK, "%s",
                 tile_last_error(ctx));
    tile_kernel *kern;
    cr_assert_eq(tile_module_get_kernel(mod, "mm", &kern), TILE_OK);
    int32_t one = 1;
    void *args[] = {&da, &m, &k, &k, &one, &db, &k, &n, &n, &one, &dc, &m, &n, &ldc, &one, &k};
    tile_dim3 grid = {(unsigned)((m + 63) / 64), (unsigned)((n + 63) / 64), 1};
    cr_assert_eq(tile_launch(kern, grid, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, out, dc, nc * 4), TILE_OK);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < ldc; j++) {
            float got = out[(size_t)i * ldc + j];
            if (j >= n) {
                cr_assert(isnan(got), "descriptor parameters on %s: the padding (%d, %d) was written: %g", dev, i, j, got);
                continue;
            }
            double want = 0;
            for (int kk = 0; kk < k; kk++) want += (double)va[(size_t)i * k + kk] * vb[(size_t)kk * n + j];
            cr_assert(got == want, "descriptor parameters on %s, %dx%dx%d (seed %llu): (%d, %d) = %g, want %g", dev, m, n, k,
                      (unsigned long long)seed, i, j, got, want);
        }
    uint32_t tail;
    cr_assert_eq(tile_memcpy_dtoh(ctx, &tail, dc + nc * 4, 4), TILE_OK);
    cr_assert_eq(tail, 0xFFFFFFFFu, "a store past the end of C");
    tile_module_unload(mod);
    tile_context_destroy(ctx);
    free(ha), free(hb), free(va), free(vb), free(out);
}

Test(blockptr, descriptor_parameters_matmul) {
    run_desc_mm("emu", 37, 72, 70);
    run_desc_mm("emu:sm_90a", 100, 80, 96);
}

/* Loads and stores of blocks that straddle every edge (negative offsets too) through descriptor parameters of
 * ranks 1, 2 and 3, f32 and f16, a transposed view among them: outside elements load as zero and are not stored. */
Test(blockptr, descriptor_parameters_edges) {
    static const char src[] =
        "kernel k(x: tensor_desc(f32, [16, 32]), y: tensor_desc(f32, [16, 32]), h: tensor_desc(f16, [8, 4, 16]),\n"
        "         v: tensor_desc(f32, [64]), out: *f32, r0: i32, c0: i32, r1: i32, c1: i32) {\n"
        "    store_tensor_descriptor(y, [r1, c1], load_tensor_descriptor(x, [r0, c0]) * 2.0);\n"
        "    let t = load_tensor_descriptor(h, [r0 - 4, -1, c0]);\n"
        "    store(out + arange(0, 8)[:, None, None] * 64 + arange(0, 4)[None, :, None] * 16 + arange(0, 16)[None, None, :], t);\n"
        "    store(out + 512 + arange(0, 64), load_tensor_descriptor(v, [c0 * 2]));\n"
        "    store_tensor_descriptor(v, [c1 - 40], arange(0, 64) as f32);\n"
        "}\n";
    const char *devs[] = {"emu", "emu:sm_90a"};
    for (int di = 0; di < 2; di++) {
        tile_context *ctx = open_ctx(devs[di]);
        /* x: 21 x 30 read through a transposed view of a 30 x 21 array (strides 1, 21); y: 19 x 45 in a row stride of 47;
         * h: 6 x 3 x 13 f16, dense; v: 50 f32 */
        enum { XM = 21, XN = 30, YM = 19, YN = 45, YS = 47, H0 = 6, H1 = 3, H2 = 13, VN = 50 };
        float hx[XN * XM], hy[YM * YS], hv[VN], out[576], got_y[YM * YS], got_v[VN];
        uint16_t hh[H0 * H1 * H2];
        float hhv[H0 * H1 * H2];
        for (int i = 0; i < XN * XM; i++) hx[i] = (float)(rnext() % 1000) - 500.0f;
        for (int i = 0; i < YM * YS; i++) hy[i] = -7777.0f;
        for (int i = 0; i < VN; i++) hv[i] = (float)(rnext() % 100);
        for (int i = 0; i < H0 * H1 * H2; i++) hhv[i] = (float)((int)(rnext() % 200) - 100) / 4.0f, hh[i] = f32_to_f16(hhv[i]);
        int r0 = 9 + di, c0 = -3 - di, r1 = 8 - 2 * di, c1 = 20 + di;
        tile_devptr dx, dy, dh, dv, dout;
        cr_assert_eq(tile_malloc(ctx, sizeof hx, &dx), TILE_OK);
        cr_assert_eq(tile_malloc(ctx, sizeof hy, &dy), TILE_OK);
        cr_assert_eq(tile_malloc(ctx, sizeof hh, &dh), TILE_OK);
        cr_assert_eq(tile_malloc(ctx, sizeof hv, &dv), TILE_OK);
        cr_assert_eq(tile_malloc(ctx, sizeof out, &dout), TILE_OK);
        tile_memcpy_htod(ctx, dx, hx, sizeof hx);
        tile_memcpy_htod(ctx, dy, hy, sizeof hy);
        tile_memcpy_htod(ctx, dh, hh, sizeof hh);
        tile_memcpy_htod(ctx, dv, hv, sizeof hv);
        tile_memset(ctx, dout, 0x7F, sizeof out);
        tile_module *mod;
        cr_assert_eq(tile_module_load_source_ex(ctx, "d.tile", src, &(tile_compile_options){0}, &mod), TILE_OK, "%s", tile_last_error(ctx));
        tile_kernel *k;
        cr_assert_eq(tile_module_get_kernel(mod, "k", &k), TILE_OK);
        int32_t xm = XM, xn = XN, xs0 = 1, xs1 = XM, ym = YM, yn = YN, ys0 = YS, one = 1, h0 = H0, h1 = H1, h2 = H2, hs0 = H1 * H2,
                hs1 = H2, vn = VN;
        void *args[] = {&dx, &xm, &xn, &xs0, &xs1, &dy, &ym, &yn, &ys0, &one, &dh, &h0, &h1, &h2, &hs0, &hs1, &one,
                        &dv, &vn, &one, &dout, &r0, &c0, &r1, &c1};
        cr_assert_eq(tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
        cr_assert_eq(tile_memcpy_dtoh(ctx, got_y, dy, sizeof got_y), TILE_OK);
        cr_assert_eq(tile_memcpy_dtoh(ctx, out, dout, sizeof out), TILE_OK);
        cr_assert_eq(tile_memcpy_dtoh(ctx, got_v, dv, sizeof got_v), TILE_OK);
        for (int i = 0; i < YM; i++)
            for (int j = 0; j < YS; j++) {
                int bi = i - r1, bj = j - c1, xr = r0 + bi, xc = c0 + bj;
                double want = -7777.0;
                if (j < YN && bi >= 0 && bi < 16 && bj >= 0 && bj < 32)
                    want = xr >= 0 && xr < XM && xc >= 0 && xc < XN ? 2.0 * hx[xc * XM + xr] : 0.0;
                cr_assert(got_y[i * YS + j] == want, "%s: y(%d, %d) = %g, want %g", devs[di], i, j, got_y[i * YS + j], want);
            }
        for (int a = 0; a < 8; a++)
            for (int b = 0; b < 4; b++)
                for (int c = 0; c < 16; c++) {
                    int i0 = r0 - 4 + a, i1 = b - 1, i2 = c0 + c;
                    double want = i0 >= 0 && i0 < H0 && i1 >= 0 && i1 < H1 && i2 >= 0 && i2 < H2 ? hhv[(i0 * H1 + i1) * H2 + i2] : 0.0;
                    cr_assert(out[a * 64 + b * 16 + c] == want, "%s: rank 3 (%d, %d, %d) = %g, want %g", devs[di], a, b, c,
                              out[a * 64 + b * 16 + c], want);
                }
        for (int i = 0; i < 64; i++) {
            int s = c0 * 2 + i;
            double want = s >= 0 && s < VN ? hv[s] : 0.0;
            cr_assert(out[512 + i] == want, "%s: rank 1 load [%d] = %g, want %g", devs[di], i, out[512 + i], want);
        }
        for (int i = 0; i < VN; i++) {
            int b = i - (c1 - 40);
            double want = b >= 0 && b < 64 ? b : hv[i];
            cr_assert(got_v[i] == want, "%s: rank 1 store v[%d] = %g, want %g", devs[di], i, got_v[i], want);
        }
        tile_module_unload(mod);
        tile_context_destroy(ctx);
    }
}

/* On sm_90a with the strides specialized to multiples of 16, the pipelined loads of descriptor parameters go
 * through tensor maps, as those of an in-kernel descriptor over kernel arguments do. */
Test(blockptr, descriptor_parameters_use_tma) {
    static const char *const spec[] = {"a_shape0=16", "a_shape1=16", "a_stride0=16", "a_stride1=1", "b_shape0=16", "b_shape1=16",
                                       "b_stride0=16", "b_stride1=1", "K=16", NULL};
    tile_compile_options o = {.arch = "sm_90a", .specialize = spec};
    tile_compiled c;
    tile_status st = tile_compile_source("mm.tile", desc_mm_src, &o, &c);
    cr_assert_eq(st, TILE_OK, "%s\n%s", tile_status_string(st), c.diagnostics);
    cr_expect(strstr(c.ptx, "cp.async.bulk.tensor") && strstr(c.ptx, "wgmma.mma_async"), "descriptor parameters' loads not through tensor maps");
    tile_compiled_free(&c);
}

Test(blockptr, descriptor_parameter_errors) {
    expect_error("fn f(d: tensor_desc(f32, [16])) {}\nkernel k(x: *f32) {\n    f(x);\n}\n",
                 "e.tile:1:6: error: parameter 'd': 'tensor_desc(...)' is a kernel's parameter type; a fn takes a descriptor untyped ('fn f(d)')");
    expect_error("kernel k(const d: tensor_desc(f32, [16])) {}\n",
                 "e.tile:1:16: error: const parameter 'd': a tensor descriptor is a run-time parameter (remove the 'const')");
    expect_error("kernel k(d: tensor_desc(f32, [n]), n: i32) {}\n",
                 "e.tile:1:31: error: 'n' is a run-time parameter: a tensor_desc parameter's block shape is compile-time");
    expect_error("kernel k(d: tensor_desc(f32, (16, 0.5))) {}\n",
                 "e.tile:1:30: error: the block shape of tensor descriptor parameter 'd' must be a compile-time shape such as [64, 64]");
    expect_error("kernel k(d: tensor_desc(*f32, [16])) {}\n", "the element type of tensor descriptor parameter 'd' must be a number type");
    expect_error("kernel k(d: tensor_desc(f32, [16, 8]), d_stride1: i32) {}\n",
                 "e.tile:1:40: error: parameter 'd_stride1' has the name of an element of tensor descriptor parameter 'd'");
    expect_error("kernel k(d: tensor_desc(f32, [16, 8])) {\n    let v = load_tensor_descriptor(d, [0]);\n}\n",
                 "'load_tensor_descriptor': 1 offsets for a descriptor of 2 dims");
}

/* ---- tuple parameters: `ptrs: (*f32, *f16)`, launched as ptrs_0, ptrs_1 (a nested tuple's as sc_1_0, ...),
 * Triton's tuple arguments ---- */
Test(blockptr, tuple_parameters) {
    static const char src[] =
        "kernel k(ptrs: (*f32, *f16), sc: (f32, (i32, f32)), out: *f32, n: i32) {\n"
        "    let i = program_id(0) * 64 + arange(0, 64);\n"
        "    let m = i < n;\n"
        "    static_assert(len(ptrs) == 2 && len(sc) == 2 && len(sc[1]) == 2, \"len\");\n"
        "    let acc = zeros([64], f32);\n"
        "    for p in ptrs {\n"
        "        acc = acc + load(p + i, m, 0.0) as f32;\n"
        "    }\n"
        "    let (s, (a, b)) = sc;\n"
        "    store(out + i, acc * s + (a as f32) * b + load(ptrs[1] + i, m, 0.0) as f32, m);\n"
        "}\n";
    tile_context *ctx = open_ctx("emu");
    enum { N = 100 };
    float ha[N], out[N + 28];
    uint16_t hb[N];
    int vb[N];
    for (int i = 0; i < N; i++) ha[i] = (float)((int)(rnext() % 101) - 50), vb[i] = (int)(rnext() % 101) - 50, hb[i] = f32_to_f16((float)vb[i]);
    tile_devptr da, db, dout;
    cr_assert_eq(tile_malloc(ctx, sizeof ha, &da), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof hb, &db), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof out, &dout), TILE_OK);
    tile_memcpy_htod(ctx, da, ha, sizeof ha);
    tile_memcpy_htod(ctx, db, hb, sizeof hb);
    tile_memset(ctx, dout, 0xFF, sizeof out);
    tile_module *mod;
    cr_assert_eq(tile_module_load_source_ex(ctx, "t.tile", src, &(tile_compile_options){0}, &mod), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(mod, "k", &k), TILE_OK);
    float s = 0.5f, b = 0.25f;
    int32_t a = 3 + (int32_t)(rnext() % 5), n = N;
    void *args[] = {&da, &db, &s, &a, &b, &dout, &n};
    cr_assert_eq(tile_launch(k, (tile_dim3){2, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, out, dout, sizeof out), TILE_OK);
    for (int i = 0; i < N; i++) {
        double want = ((double)ha[i] + vb[i]) * 0.5 + a * 0.25 + vb[i];
        cr_assert(out[i] == want, "out[%d] = %g, want %g", i, out[i], want);
    }
    for (int i = N; i < N + 28; i++) cr_assert(isnan(out[i]), "out[%d] written past n", i);
    tile_module_unload(mod);
    tile_context_destroy(ctx);
    expect_error("kernel k(t: (*f32, 3)) {}\n",
                 "e.tile:1:13: error: the type of tuple parameter 't' must be a tuple of types such as (*f32, i32), nested 8 deep at "
                 "most; an element is i32");
    expect_error("kernel k(t: (i32)) {}\n", "e.tile:1:14: error: the type of tuple parameter 't' must be a tuple of types such as "
                 "(*f32, i32), got one type in parentheses (a tuple of one is written (T,))");
    expect_error("kernel k(t: (*f32, (i32, f32)), t_1_0: i32) {}\n",
                 "e.tile:1:33: error: parameter 't_1_0' has the name of an element of tuple parameter 't'");
}
