/* test_lang_batched_dot.c - Triton's batched dot, [B, M, K] x [B, K, N] (+ acc [B, M, N]): one 2-D dot per
 * batch, on 2-D loads where the operands are loaded (canonicalize splits the [B, M, K] loads), else on operands
 * unstacked through shared memory (cases marked whole), the results stored per batch or stacked back.  Each case runs on fresh
 * random inputs against float64, outputs poisoned first, the loads masked at sizes that are not multiples
 * of the tile (m, n, k below M, N, K), on sm_80 (emu) and sm_90a (emu:sm_90a, where a 64-row dot is wgmma):
 * f16, bf16, f32 (ieee, tf32, tf32x3), f64, i8, f8e4m3, out_dtype=f16, with and without acc, and batches
 * past what the old composition (one [B·M, K] x [K, B·N] dot) could hold.  Then the work itself: the PTX
 * of a batched dot has B times the tensor-core (or FMA) instructions of one 2-D dot of its size, not B². */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/tile/tile.h"
#include "runtime/device.h"
#include "support/hostfloat.h"

#include "tests/lang_run.h"
#include "tests/test_rng.h"

typedef enum { IN_F16, IN_BF16, IN_F32, IN_F64, IN_I8, IN_F8 } InKind;

typedef struct Case {
    InKind in;
    const char *extra; /* more arguments of dot: "" or ", input_precision=\"tf32\"" ... */
    bool acc, out_f16;
    int B, M, N, K;    /* the tile */
    int m, n, k;       /* the data: loads and the store masked to these */
    double tol;        /* of sum |a b| (+ |acc|) */
    bool whole;        /* a and b also stored back whole, the result read whole: the stacks stay (shared memory) */
} Case;

static const char *in_name(InKind k) {
    static const char *names[] = {"f16", "bf16", "f32", "f64", "i8", "f8e4m3"};
    return names[k];
}

static int in_bytes(InKind k) { return k == IN_F64 ? 8 : k == IN_F32 ? 4 : k == IN_I8 || k == IN_F8 ? 1 : 2; }

static const char *out_name(const Case *c) {
    return c->out_f16 ? "f16" : c->in == IN_F64 ? "f64" : c->in == IN_I8 ? "i32" : "f32";
}

static int out_bytes(const Case *c) { return c->out_f16 ? 2 : c->in == IN_F64 ? 8 : 4; }

/* A random input element: written to p[i] in the input type, its exact value returned. */
static double put_in(InKind k, void *p, size_t i) {
    double v = urand() * 2.0;
    switch (k) {
    case IN_F16: ((uint16_t *)p)[i] = f32_to_f16((float)v); return f16_to_d(((uint16_t *)p)[i]);
    case IN_BF16: ((uint16_t *)p)[i] = f32_to_bf16((float)v); return bf16_to_d(((uint16_t *)p)[i]);
    case IN_F32: ((float *)p)[i] = (float)v; return (float)v;
    case IN_F64: ((double *)p)[i] = v; return v;
    case IN_I8: ((int8_t *)p)[i] = (int8_t)(irand(255) - 127); return ((int8_t *)p)[i];
    case IN_F8: ((uint8_t *)p)[i] = d_to_f8(v, 0); return f8e4m3_to_d(((uint8_t *)p)[i]);
    }
    return 0;
}

static double put_out(const Case *c, void *p, size_t i) {
    double v = urand() * 4.0;
    if (c->out_f16) return ((uint16_t *)p)[i] = f32_to_f16((float)v), f16_to_d(((uint16_t *)p)[i]);
    if (c->in == IN_F64) return ((double *)p)[i] = v;
    if (c->in == IN_I8) return ((int32_t *)p)[i] = irand(20001) - 10000;
    return ((float *)p)[i] = (float)v;
}

static double get_out(const Case *c, const void *p, size_t i) {
    if (c->out_f16) return f16_to_d(((const uint16_t *)p)[i]);
    if (c->in == IN_F64) return ((const double *)p)[i];
    if (c->in == IN_I8) return ((const int32_t *)p)[i];
    return ((const float *)p)[i];
}

static void run_case(const Case *c, const char *arch, const char *device) {
    char src[3072];
    const char *T = in_name(c->in), *R = out_name(c);
    snprintf(src, sizeof src,
             "kernel k(a: *%s, b: *%s, c: *%s, o: *%s, m: i32, n: i32, kk: i32, const B: i32 = %d, const M: i32 = %d,\n"
             "         const N: i32 = %d, const K: i32 = %d) {\n"
             "    let ib = arange(0, B)[:, None, None];\n"
             "    let im = arange(0, M)[None, :, None];\n"
             "    let ik = arange(0, K);\n"
             "    let inn = arange(0, N)[None, None, :];\n"
             "    let x = load(a + ib * m * kk + im * kk + ik[None, None, :], (ib < B) & (im < m) & (ik[None, None, :] < kk), 0);\n"
             "    let y = load(b + ib * kk * n + ik[None, :, None] * n + inn, (ib < B) & (ik[None, :, None] < kk) & (inn < n), 0);\n"
             "    let pc = ib * m * n + im * n + inn;\n"
             "    let mc = (ib < B) & (im < m) & (inn < n);\n"
             "    let r = dot(x, y%s%s);\n"
             "%s"
             "}\n",
             T, T, R, R, c->B, c->M, c->N, c->K, c->acc ? ", load(c + pc, mc, 0)" : "", c->extra,
             c->whole ? "    store(a + ib * m * kk + im * kk + ik[None, None, :], x, (ib < B) & (im < m) & (ik[None, None, :] < kk));\n"
                        "    store(b + ib * kk * n + ik[None, :, None] * n + inn, y, (ib < B) & (ik[None, :, None] < kk) & (inn < n));\n"
                        "    store(o + pc, (r + r) - r, mc);\n"
                      : "    store(o + pc, r, mc);\n");
    size_t na = (size_t)c->B * c->m * c->k, nb = (size_t)c->B * c->k * c->n, nc = (size_t)c->B * c->m * c->n;
    size_t guard = 64; /* past the last element: the masked store must leave it poisoned */
    void *ha = malloc(na * in_bytes(c->in)), *hb = malloc(nb * in_bytes(c->in)), *hc = malloc(nc * out_bytes(c));
    void *ho = malloc((nc + guard) * out_bytes(c));
    double *va = malloc(na * sizeof(double)), *vb = malloc(nb * sizeof(double)), *vc = malloc(nc * sizeof(double));
    cr_assert(ha && hb && hc && ho && va && vb && vc);
    for (size_t i = 0; i < na; i++) va[i] = put_in(c->in, ha, i);
    for (size_t i = 0; i < nb; i++) vb[i] = put_in(c->in, hb, i);
    for (size_t i = 0; i < nc; i++) vc[i] = c->acc ? put_out(c, hc, i) : 0;
    K k;
    load_src_on(&k, src, "k", arch, device);
    uint64_t da = upload(&k, ha, na * in_bytes(c->in)), db = upload(&k, hb, nb * in_bytes(c->in));
    uint64_t dc = upload(&k, hc, nc * out_bytes(c)), d_o = poisoned(&k, (nc + guard) * out_bytes(c));
    int32_t m = c->m, n = c->n, kk = c->k;
    void *params[] = {&da, &db, &dc, &d_o, &m, &n, &kk};
    launch(&k, 1, params);
    download(&k, ho, d_o, (nc + guard) * out_bytes(c));
    int bad = 0;
    for (int z = 0; z < c->B; z++)
        for (int i = 0; i < c->m; i++)
            for (int j = 0; j < c->n; j++) {
                size_t at = ((size_t)z * c->m + i) * c->n + j;
                double want = vc[at], mag = fabs(vc[at]);
                for (int q = 0; q < c->k; q++) {
                    double p = va[((size_t)z * c->m + i) * c->k + q] * vb[((size_t)z * c->k + q) * c->n + j];
                    want += p, mag += fabs(p);
                }
                double got = get_out(c, ho, at);
                if (!(fabs(got - want) <= c->tol * mag) && bad++ < 5)
                    cr_expect(false, "%s x %s%s%s on %s, B=%d tile %dx%dx%d data %dx%dx%d: batch %d (%d, %d) = %.9g, want %.9g (seed %#llx)", T,
                              T, c->acc ? " + acc" : "", c->extra, arch ? arch : "sm_80", c->B, c->M, c->N, c->K, c->m, c->n, c->k, z, i, j,
                              got, want, (unsigned long long)seed);
            }
    const uint8_t *tail = (const uint8_t *)ho + nc * out_bytes(c);
    for (size_t i = 0; i < guard * out_bytes(c); i++)
        if (tail[i] != 0xff) {
            cr_expect(false, "%s: byte %zu past the output was written", T, i);
            break;
        }
    cr_expect_eq(bad, 0, "%d wrong elements", bad);
    unload(&k);
    free(ha), free(hb), free(hc), free(ho), free(va), free(vb), free(vc);
}


/* Tensor-core types and the FMA ones, with and without acc, odd data sizes in the tile. */
static const Case cases[] = {
    {IN_F16, "", false, false, 2, 32, 32, 32, 29, 23, 19, 1e-5, false},
    {IN_F16, "", true, false, 4, 16, 32, 32, 13, 30, 27, 1e-5, false},
    {IN_BF16, "", true, false, 4, 32, 16, 64, 31, 11, 50, 1e-5, false},
    {IN_F32, "", false, false, 2, 16, 16, 32, 15, 16, 31, 1e-5, false},
    {IN_F32, "", true, false, 4, 32, 16, 16, 21, 9, 16, 1e-5, false},
    {IN_F32, ", input_precision=\"tf32\"", true, false, 2, 32, 32, 32, 30, 25, 29, 2e-3, false},
    {IN_F32, ", input_precision=\"tf32x3\"", false, false, 4, 16, 32, 16, 16, 17, 13, 1e-5, false},
    {IN_F64, "", true, false, 2, 16, 16, 32, 11, 14, 23, 1e-13, false},
    {IN_I8, "", false, false, 4, 32, 32, 32, 27, 31, 30, 0, false},
    {IN_I8, "", true, false, 2, 16, 32, 64, 16, 19, 47, 0, false},
    {IN_F8, "", false, false, 2, 32, 32, 32, 25, 32, 21, 1e-5, false},
    {IN_F16, ", out_dtype=f16", false, true, 2, 16, 16, 32, 14, 13, 27, 1e-2, false},
    {IN_F16, ", out_dtype=f16", true, true, 4, 16, 32, 16, 9, 30, 16, 1e-2, false},
    {IN_F16, "", true, false, 1, 16, 16, 16, 16, 9, 13, 1e-5, false},
    /* operands and result that other ops read whole: split and stacked through shared memory */
    {IN_F16, "", true, false, 4, 16, 32, 32, 13, 30, 27, 1e-5, true},
    {IN_F32, "", false, false, 2, 16, 16, 32, 15, 16, 31, 1e-5, true},
    {IN_I8, "", true, false, 2, 16, 32, 64, 16, 19, 47, 0, true},
    {IN_F8, "", false, false, 2, 32, 32, 32, 25, 32, 21, 1e-5, true},
    {IN_F64, "", true, false, 2, 16, 16, 32, 11, 14, 23, 1e-13, true},
};

Test(lang_batched_dot, dtypes_sm80, .timeout = 600) {
    seed_rng();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i], NULL, NULL);
}

/* sm_90a: a batch of 64-row tiles runs on wgmma, 32-row ones on mma.sync; f8 operands natively where wgmma takes them. */
static const Case hopper[] = {
    {IN_F16, "", true, false, 2, 64, 64, 32, 61, 50, 29, 1e-5, false},
    {IN_BF16, "", false, false, 4, 64, 32, 64, 64, 31, 37, 1e-5, false},
    {IN_F16, "", false, false, 2, 32, 32, 32, 29, 23, 19, 1e-5, false},
    {IN_I8, "", true, false, 2, 64, 32, 64, 57, 32, 63, 0, false},
    {IN_F8, "", true, false, 2, 64, 64, 64, 60, 33, 64, 1e-5, false},
    {IN_F32, ", input_precision=\"tf32\"", false, false, 2, 64, 32, 32, 63, 17, 30, 2e-3, false},
    {IN_F32, "", true, false, 2, 32, 16, 16, 21, 9, 16, 1e-5, false},
    {IN_F16, ", out_dtype=f16", true, true, 2, 64, 32, 32, 40, 32, 31, 1e-2, false},
    {IN_F16, "", true, false, 2, 64, 64, 32, 61, 50, 29, 1e-5, true},
    {IN_F8, "", true, false, 2, 64, 64, 64, 60, 33, 64, 1e-5, true},
};

Test(lang_batched_dot, dtypes_sm90a, .timeout = 600) {
    seed_rng();
    for (size_t i = 0; i < sizeof hopper / sizeof hopper[0]; i++) run_case(&hopper[i], "sm_90a", "emu:sm_90a");
}

/* Batches the old composition could not hold: it built a [B·M, B·N] product (B = 32 of 16 x 16 is a
 * 512 x 512 one, 1 MiB of f32 through shared memory; B = 16 of 32 x 32 likewise), refused at compile
 * time as more shared memory than a block has. */
Test(lang_batched_dot, many_batches, .timeout = 600) {
    seed_rng();
    static const Case big[] = {
        {IN_F16, "", true, false, 32, 16, 16, 16, 15, 16, 11, 1e-5, false},
        {IN_I8, "", false, false, 16, 32, 32, 32, 31, 29, 32, 0, false},
        {IN_F16, "", true, false, 32, 16, 16, 16, 15, 16, 11, 1e-5, true},
    };
    run_case(&big[0], NULL, NULL);
    run_case(&big[1], NULL, NULL);
    run_case(&big[2], NULL, NULL);
    run_case(&big[0], "sm_90a", "emu:sm_90a");
}

/* Stacks past 64 KiB go through shared memory in chunks of slabs (smem_stack_chunk): a [16, 64, 64] f32 result read
 * whole (summed over the batch, 256 KiB) and a [16, 64, 64] f32 operand made by a cumsum (unstacked, 256 KiB) were
 * refused as more shared memory than a block has.  f32 inputs against float64, the loads and the store masked at
 * 61 x 59 x 57 of the 64 x 64 x 64 tiles, on sm_80 and sm_90a. */
static void chunked_stacks(const char *arch, const char *device) {
    enum { B = 16, S = 64, M = 61, N = 59, KK = 57 };
    K k;
    load_src_on(&k,
                "kernel k(a: *f32, b: *f32, o: *f32, s: *f32, m: i32, n: i32, kk: i32) {\n"
                "    let ib = arange(0, 16)[:, None, None];\n"
                "    let im = arange(0, 64)[None, :, None];\n"
                "    let ik = arange(0, 64)[None, None, :];\n"
                "    let x = cumsum(load(a + ib * m * kk + im * kk + ik, (im < m) & (ik < kk), 0.0), 2);\n"
                "    let y = load(b + ib * kk * n + im * n + ik, (im < kk) & (ik < n), 0.0);\n"
                "    let c = dot(x, y);\n"
                "    store(o + ib * m * n + im * n + ik, c, (im < m) & (ik < n));\n"
                "    store(s + arange(0, 64), sum(sum(c, 2), 0), arange(0, 64) < m);\n"
                "}\n",
                "k", arch, device);
    static float ha[B * M * KK], hb[B * KK * N], ho[B * M * N + 64], hs[S];
    static double cs[B * M * KK];
    for (int i = 0; i < B * M * KK; i++) ha[i] = (float)urand();
    for (int i = 0; i < B * KK * N; i++) hb[i] = (float)urand();
    for (int z = 0; z < B; z++)
        for (int i = 0; i < M; i++)
            for (int q = 0; q < KK; q++) { /* the kernel's cumsum, in f32 as it adds (exact sums of f32 are not) */
                size_t at = ((size_t)z * M + i) * KK + q;
                cs[at] = q ? (double)(float)(cs[at - 1] + ha[at]) : ha[at];
            }
    uint64_t da = upload(&k, ha, sizeof ha), db = upload(&k, hb, sizeof hb), d_o = poisoned(&k, sizeof ho), ds = poisoned(&k, sizeof hs);
    int32_t m = M, n = N, kk = KK;
    void *params[] = {&da, &db, &d_o, &ds, &m, &n, &kk};
    launch(&k, 1, params);
    download(&k, ho, d_o, sizeof ho);
    download(&k, hs, ds, sizeof hs);
    int bad = 0;
    double rows[M] = {0}, rmag[M] = {0};
    for (int z = 0; z < B; z++)
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double want = 0, mag = 0;
                for (int q = 0; q < KK; q++) {
                    double p = cs[((size_t)z * M + i) * KK + q] * hb[((size_t)z * KK + q) * N + j];
                    want += p, mag += fabs(p);
                }
                rows[i] += want, rmag[i] += mag;
                float got = ho[((size_t)z * M + i) * N + j];
                if (!(fabs(got - want) <= 1e-5 * mag) && bad++ < 5)
                    cr_expect(false, "chunked stacks on %s: batch %d (%d, %d) = %.9g, want %.9g (seed %#llx)", arch, z, i, j, got, want,
                              (unsigned long long)seed);
            }
    for (int i = 0; i < M; i++)
        if (!(fabs(hs[i] - rows[i]) <= 1e-5 * rmag[i]) && bad++ < 10)
            cr_expect(false, "chunked stacks on %s: row sum %d = %.9g, want %.9g (seed %#llx)", arch, i, hs[i], rows[i], (unsigned long long)seed);
    for (int i = M; i < S; i++) cr_expect(isnan(hs[i]), "row sum %d written past m", i);
    for (int i = 0; i < 64; i++) cr_expect(isnan(ho[B * M * N + i]), "written past the end");
    cr_expect_eq(bad, 0, "%d wrong elements", bad);
    unload(&k);
}

Test(lang_batched_dot, chunked_stacks, .timeout = 600) {
    seed_rng();
    chunked_stacks("sm_80", NULL);
    chunked_stacks("sm_90a", "emu:sm_90a");
}

/* A batched GEMM: the accumulator [B, M, N] carried through a K loop, K = 100 in steps of 32 with the last
 * step masked, f16 and f32 on sm_80 and sm_90a; padded (aligned rows, K = 96): the loads of [B, M, K] tiles
 * split into 2-D ones the software pipeliner takes (cp.async, tensor maps on sm_90a), plain, warp-specialized,
 * with pingpong (two computing warpgroups) and with overlap: what the kernel computes must not change. */
static void batched_gemm(const char *T, bool padded, const char *attrs, const char *arch, const char *device) {
    enum { B = 2, M = 61, N = 27, LDA = 128, LDB = 32 };
    /* padded: rows of a and b at constant strides of 128 and 32 elements (aligned: the loop is pipelined,
     * cp.async on sm_80, tensor maps on sm_90a); else packed at the run-time strides kk and n */
    int KK = padded ? 96 : 100, lda = padded ? LDA : KK, ldb = padded ? LDB : N;
    char src[2048], sa[64], sb[64], kl[16];
    snprintf(kl, sizeof kl, padded ? "%d" : "kk", KK); /* padded: K known (96), so the K mask folds away */
    snprintf(sa, sizeof sa, padded ? "ib * %d + im * %d" : "ib * m * kk + im * kk", M * LDA, LDA);
    snprintf(sb, sizeof sb, padded ? "ib * %d + kb * %d" : "ib * kk * n + kb * n", KK * LDB, LDB);
    snprintf(src, sizeof src,
             "%skernel k(a: *%s, b: *%s, o: *f32, m: i32, n: i32, kk: i32) {\n"
             "    let ib = arange(0, 2)[:, None, None];\n"
             "    let im = arange(0, 64)[None, :, None];\n"
             "    let ik = arange(0, 32);\n"
             "    let inn = arange(0, 32)[None, None, :];\n"
             "    let acc = zeros([2, 64, 32], f32);\n"
             "    for k0 in range(0, %s, 32) {\n"
             "        let ka = k0 + ik[None, None, :];\n"
             "        let kb = k0 + ik[None, :, None];\n"
             "        let x = load(a + %s + ka, (im < m) & (ka < %s), 0);\n"
             "        let y = load(b + %s + inn, (kb < %s) & (inn < n), 0);\n"
             "        acc = dot(x, y, acc);\n"
             "    }\n"
             "    store(o + ib * m * n + im * n + inn, acc, (ib < 2) & (im < m) & (inn < n));\n"
             "}\n",
             attrs, T, T, kl, sa, kl, sb, kl);
    bool f16 = !strcmp(T, "f16");
    if (padded) {
        char *ptx = compile_ptx(src, arch);
        cr_expect(strstr(ptx, "cp.async") != NULL, "%s on %s: the batched K loop is not pipelined (no cp.async)", T, arch ? arch : "sm_80");
        free(ptx);
    }
    size_t na = (size_t)B * M * lda, nb = (size_t)B * KK * ldb, nc = (size_t)B * M * N;
    void *ha = malloc(na * 4), *hb = malloc(nb * 4);
    double *va = malloc(na * sizeof(double)), *vb = malloc(nb * sizeof(double));
    float *ho = malloc(nc * sizeof(float));
    cr_assert(ha && hb && va && vb && ho);
    for (size_t i = 0; i < na; i++) va[i] = put_in(f16 ? IN_F16 : IN_F32, ha, i);
    for (size_t i = 0; i < nb; i++) vb[i] = put_in(f16 ? IN_F16 : IN_F32, hb, i);
    /* through tile_launch: on sm_90a the pipelined loop reads tensor maps the launcher builds */
    tile_context_options co = {.device = device ? device : "emu", .emu_racecheck = 1};
    tile_context *ctx = NULL;
    cr_assert_eq(tile_context_create_ex(&co, &ctx), TILE_OK);
    tile_devptr da, db, d_o;
    cr_assert_eq(tile_malloc(ctx, na * (f16 ? 2 : 4), &da), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, nb * (f16 ? 2 : 4), &db), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, nc * sizeof(float), &d_o), TILE_OK);
    tile_memcpy_htod(ctx, da, ha, na * (f16 ? 2 : 4));
    tile_memcpy_htod(ctx, db, hb, nb * (f16 ? 2 : 4));
    tile_memset(ctx, d_o, 0xFF, nc * sizeof(float)); /* NaN */
    tile_compile_options o = {.size = sizeof o, .arch = arch};
    tile_module *mod;
    cr_assert_eq(tile_module_load_source_ex(ctx, "t.tile", src, &o, &mod), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *kern;
    cr_assert_eq(tile_module_get_kernel(mod, "k", &kern), TILE_OK);
    int32_t m = M, n = N, kk = KK;
    void *params[] = {&da, &db, &d_o, &m, &n, &kk};
    cr_assert_eq(tile_launch(kern, (tile_dim3){1, 1, 1}, params, NULL), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, ho, d_o, nc * sizeof(float)), TILE_OK);
    int bad = 0;
    for (int z = 0; z < B; z++)
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double want = 0, mag = 0;
                for (int q = 0; q < KK; q++) {
                    double p = va[((size_t)z * M + i) * lda + q] * vb[((size_t)z * KK + q) * ldb + j];
                    want += p, mag += fabs(p);
                }
                float got = ho[((size_t)z * M + i) * N + j];
                if (!(fabs(got - want) <= 1e-5 * mag) && bad++ < 5)
                    cr_expect(false, "%s gemm%s on %s: batch %d (%d, %d) = %.9g, want %.9g (seed %#llx)", T, padded ? " (padded)" : "",
                              arch ? arch : "sm_80", z, i, j, got, want, (unsigned long long)seed);
            }
    cr_expect_eq(bad, 0, "%d wrong elements", bad);
    tile_module_unload(mod);
    tile_context_destroy(ctx);
    free(ha), free(hb), free(va), free(vb), free(ho);
}

Test(lang_batched_dot, k_loop, .timeout = 600) {
    seed_rng();
    batched_gemm("f16", false, "", NULL, NULL);
    batched_gemm("f32", false, "", NULL, NULL);
    batched_gemm("f16", false, "", "sm_90a", "emu:sm_90a");
    batched_gemm("f16", true, "", NULL, NULL);
    batched_gemm("f16", true, "", "sm_90a", "emu:sm_90a");
    batched_gemm("f16", true, "@warp_specialize(1)\n", "sm_90a", "emu:sm_90a");
    batched_gemm("f16", true, "@num_warps(8)\n@warp_specialize(1)\n@pingpong(1)\n", "sm_90a", "emu:sm_90a");
    batched_gemm("f16", true, "@warp_specialize(1)\n@overlap(1)\n", "sm_90a", "emu:sm_90a");
}

static int count(const char *ptx, const char *what) {
    int n = 0;
    for (const char *p = ptx; (p = strstr(p, what)); p++) n++;
    return n;
}

/* The work: a batched dot of B tiles of M x N x K has B times the mma.sync / wgmma / fma instructions of one
 * 2-D dot of M x N x K (the old composition had B² times). */
Test(lang_batched_dot, work_is_b_dots) {
    static const char *one = "kernel k(a: *%s, b: *%s, o: *%s) {\n"
                             "    let i = arange(0, %d);\n"
                             "    let j = arange(0, %d);\n"
                             "    store(o + i[:, None] * %d + j[None, :], dot(load(a + i[:, None] * %d + j[None, :]), load(b + i[:, None] * %d + j[None, :])));\n"
                             "}\n";
    static const char *batched = "kernel k(a: *%s, b: *%s, o: *%s) {\n"
                                 "    let z = arange(0, %d)[:, None, None];\n"
                                 "    let i = arange(0, %d)[None, :, None];\n"
                                 "    let j = arange(0, %d)[None, None, :];\n"
                                 "    store(o + z * %d + i * %d + j, dot(load(a + z * %d + i * %d + j), load(b + z * %d + i * %d + j)));\n"
                                 "}\n";
    static const struct {
        const char *in, *out, *arch, *instr;
        int B, S;
    } w[] = {
        {"f16", "f32", NULL, "mma.sync", 4, 32},   {"f16", "f32", NULL, "mma.sync", 8, 64},
        {"f32", "f32", NULL, "fma.rn.f32", 4, 32}, {"f16", "f32", "sm_90a", "wgmma.mma_async", 4, 64},
        {"i8", "i32", NULL, "mma.sync", 2, 32},
        /* f8 operands stay f8 through the unstack, so each batch's dot reads them natively */
        {"f8e4m3", "f32", "sm_90a", "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3", 2, 64},
    };
    for (size_t t = 0; t < sizeof w / sizeof w[0]; t++) {
        char s1[1024], sb[1024];
        int S = w[t].S, B = w[t].B;
        snprintf(s1, sizeof s1, one, w[t].in, w[t].in, w[t].out, S, S, S, S, S);
        snprintf(sb, sizeof sb, batched, w[t].in, w[t].in, w[t].out, B, S, S, S * S, S, S * S, S, S * S, S);
        char *p1 = compile_ptx(s1, w[t].arch), *pb = compile_ptx(sb, w[t].arch);
        int n1 = count(p1, w[t].instr), nb = count(pb, w[t].instr);
        cr_expect(n1 > 0, "%s: no %s in the 2-D dot", w[t].in, w[t].instr);
        cr_expect_eq(nb, B * n1, "%s B=%d %d^3 on %s: %d %s, want %d x %d", w[t].in, B, S, w[t].arch ? w[t].arch : "sm_80", nb, w[t].instr,
                     B, n1);
        /* the moves: the B dots' own shared-memory stores, and a, b and the result through shared memory
         * once each, in accesses of 8 bytes or more (slabs read in a layout of 16 bytes a thread, not one
         * element at a time: 88 stores instead of 32 at f16 B=4 32^3) */
        int eb_in = !strcmp(w[t].in, "f16") ? 2 : !strcmp(w[t].in, "f32") ? 4 : 1;
        int moved = (B * S * S * (2 * eb_in + 4)) / (128 * 8);
        int st1 = count(p1, "st.shared"), stb = count(pb, "st.shared");
        cr_expect(stb <= B * st1 + moved, "%s B=%d %d^3 on %s: %d st.shared, more than %d x %d + %d", w[t].in, B, S,
                  w[t].arch ? w[t].arch : "sm_80", stb, B, st1, moved);
        free(p1), free(pb);
    }
}

/* Shapes that do not fit: located errors. */
Test(lang_batched_dot, errors) {
    static const BadSource bad[] = {
        {"kernel k(a: *f16) {\n"
         "    let x = load(a + arange(0, 2)[:, None, None] + arange(0, 16)[None, :, None] + arange(0, 16)[None, None, :]);\n"
         "    let y = load(a + arange(0, 4)[:, None, None] + arange(0, 16)[None, :, None] + arange(0, 16)[None, None, :]);\n"
         "    let r = dot(x, y);\n"
         "}\n",
         "t.tile:4:13: error: dot: batched operands must be [B, M, K] and [B, K, N], got [2, 16, 16] and [4, 16, 16]"},
        {"kernel k(a: *f16) {\n"
         "    let x = load(a + arange(0, 2)[:, None, None] + arange(0, 16)[None, :, None] + arange(0, 16)[None, None, :]);\n"
         "    let c = zeros([2, 16, 32], f32);\n"
         "    let r = dot(x, x, c);\n"
         "}\n",
         "t.tile:4:23: error: dot: accumulator shape [2, 16, 32] does not match [2, 16, 16]"},
        {"kernel k(a: *f16) {\n"
         "    let x = load(a + arange(0, 2)[:, None, None] + arange(0, 16)[None, :, None] + arange(0, 16)[None, None, :]);\n"
         "    let r = dot(x, x, out_dtype=i32);\n"
         "}\n",
         "t.tile:3:33: error: dot: out_dtype 'i32' does not suit 'f16' inputs"},
        /* a result read whole whose layout spreads its 4 slabs over the warps goes through shared memory at once (it
         * cannot be chunked): past a block's shared memory the error is at the kernel, and a note at the dot says
         * which tile it is (the error alone named only the kernel) */
        {"kernel k(a: *f32, o: *f32) {\n"
         "    let z = arange(0, 4)[:, None, None];\n"
         "    let i = arange(0, 128)[None, :, None];\n"
         "    let j = arange(0, 128)[None, None, :];\n"
         "    let c = dot(load(a + z * 16384 + i * 128 + j), load(a + z * 16384 + j * 128 + i));\n"
         "    store(o + arange(0, 128), sum(sum(c, 0), 0));\n"
         "}\n",
         "t.tile:5:13: note: the largest buffer, 262144 bytes, is this batched dot's [4, 128, 128] f32 result, stacked whole "
         "through shared memory"},
    };
    expect_compile_errors(bad, sizeof bad / sizeof bad[0]);
}

/* A batched dot whose result is read whole by a cumsum (the result stacked through shared memory, then scanned):
 * along the batch (axis 0, across the warps that hold the batches), the rows and the columns, forward and
 * reverse, f16 on the tensor cores and f32 on FMA, the loads and the store masked at odd sizes inside the tile,
 * on sm_80 and sm_90a (64-row batches on wgmma), against a float64 dot and prefix sum. */
typedef struct DotScan {
    InKind in;
    int B, M, N, K, m, n, k, axis;
    bool reverse;
} DotScan;

static void dot_cumsum(const DotScan *c, const char *arch, const char *device) {
    char src[2048];
    const char *T = in_name(c->in);
    snprintf(src, sizeof src,
             "kernel k(a: *%s, b: *%s, o: *f32, m: i32, n: i32, kk: i32) {\n"
             "    let ib = arange(0, %d)[:, None, None];\n"
             "    let im = arange(0, %d)[None, :, None];\n"
             "    let ik = arange(0, %d);\n"
             "    let inn = arange(0, %d)[None, None, :];\n"
             "    let x = load(a + ib * m * kk + im * kk + ik[None, None, :], (im < m) & (ik[None, None, :] < kk), 0);\n"
             "    let y = load(b + ib * kk * n + ik[None, :, None] * n + inn, (ik[None, :, None] < kk) & (inn < n), 0);\n"
             "    let s = cumsum(dot(x, y), %d%s);\n"
             "    store(o + ib * m * n + im * n + inn, s, (im < m) & (inn < n));\n"
             "}\n",
             T, T, c->B, c->M, c->K, c->N, c->axis, c->reverse ? ", reverse=true" : "");
    size_t na = (size_t)c->B * c->m * c->k, nb = (size_t)c->B * c->k * c->n, nc = (size_t)c->B * c->m * c->n, guard = 64;
    void *ha = malloc(na * in_bytes(c->in)), *hb = malloc(nb * in_bytes(c->in));
    float *ho = malloc((nc + guard) * sizeof(float));
    double *va = malloc(na * sizeof(double)), *vb = malloc(nb * sizeof(double));
    double *dot = calloc(nc, sizeof(double)), *mag = calloc(nc, sizeof(double));
    cr_assert(ha && hb && ho && va && vb && dot && mag);
    for (size_t i = 0; i < na; i++) va[i] = put_in(c->in, ha, i) - 1.0; /* signed: the sums cancel */
    for (size_t i = 0; i < na; i++) {                                      /* keep the stored value the one read */
        if (c->in == IN_F16) ((uint16_t *)ha)[i] = f32_to_f16((float)va[i]), va[i] = f16_to_d(((uint16_t *)ha)[i]);
        else ((float *)ha)[i] = (float)va[i], va[i] = (float)va[i];
    }
    for (size_t i = 0; i < nb; i++) vb[i] = put_in(c->in, hb, i);
    for (int z = 0; z < c->B; z++)
        for (int i = 0; i < c->m; i++)
            for (int j = 0; j < c->n; j++)
                for (int q = 0; q < c->k; q++) {
                    double p = va[((size_t)z * c->m + i) * c->k + q] * vb[((size_t)z * c->k + q) * c->n + j];
                    dot[((size_t)z * c->m + i) * c->n + j] += p, mag[((size_t)z * c->m + i) * c->n + j] += fabs(p);
                }
    /* the prefix sums, in place: along `axis` of the [B, m, n] data (the masked-off elements are zeros) */
    int ext[3] = {c->B, c->m, c->n};
    size_t stride[3] = {(size_t)c->m * c->n, (size_t)c->n, 1};
    for (int z = 0; z < c->B; z++)
        for (int i = 0; i < c->m; i++)
            for (int j = 0; j < c->n; j++) {
                int at[3] = {z, i, j};
                if (at[c->axis]) continue; /* one line per start */
                size_t base = (size_t)z * stride[0] + (size_t)i * stride[1] + (size_t)j;
                for (int s = 1; s < ext[c->axis]; s++) {
                    int from = c->reverse ? ext[c->axis] - s : s - 1, to = c->reverse ? ext[c->axis] - 1 - s : s;
                    dot[base + to * stride[c->axis]] += dot[base + from * stride[c->axis]];
                    mag[base + to * stride[c->axis]] += mag[base + from * stride[c->axis]];
                }
            }
    K k;
    load_src_on(&k, src, "k", arch, device);
    uint64_t da = upload(&k, ha, na * in_bytes(c->in)), db = upload(&k, hb, nb * in_bytes(c->in));
    uint64_t d_o = poisoned(&k, (nc + guard) * sizeof(float));
    int32_t m = c->m, n = c->n, kk = c->k;
    void *params[] = {&da, &db, &d_o, &m, &n, &kk};
    launch(&k, 1, params);
    download(&k, ho, d_o, (nc + guard) * sizeof(float));
    int bad = 0;
    for (size_t i = 0; i < nc; i++)
        if (!(fabs(ho[i] - dot[i]) <= 1e-5 * mag[i] + 1e-30) && bad++ < 5)
            cr_expect(false, "cumsum(dot) %s axis %d%s on %s, B=%d tile %dx%dx%d data %dx%dx%d: element %zu = %.9g, want %.9g (seed %#llx)",
                      T, c->axis, c->reverse ? " reverse" : "", arch, c->B, c->M, c->N, c->K, c->m, c->n, c->k, i, ho[i], dot[i],
                      (unsigned long long)seed);
    for (size_t i = 0; i < guard; i++)
        if (!isnan(ho[nc + i])) {
            cr_expect(false, "cumsum(dot) %s axis %d: element %zu past the output was written", T, c->axis, nc + i);
            break;
        }
    cr_expect_eq(bad, 0, "%d wrong elements", bad);
    unload(&k);
    free(ha), free(hb), free(ho), free(va), free(vb), free(dot), free(mag);
}

Test(lang_batched_dot, dot_then_cumsum, .timeout = 600) {
    seed_rng();
    static const DotScan sm80[] = {
        {IN_F16, 4, 16, 32, 16, 13, 29, 11, 0, false},
        {IN_F16, 4, 16, 32, 16, 13, 29, 11, 1, true},
        {IN_F32, 4, 16, 16, 16, 15, 9, 13, 2, false},
        {IN_F32, 2, 32, 16, 16, 31, 16, 7, 0, true},
    };
    for (size_t i = 0; i < sizeof sm80 / sizeof sm80[0]; i++) dot_cumsum(&sm80[i], "sm_80", NULL);
    static const DotScan sm90[] = {
        {IN_F16, 16, 64, 32, 16, 61, 29, 13, 0, false}, /* 16 batches of 64 rows: wgmma, the scan across warps */
        {IN_F32, 4, 16, 16, 16, 15, 9, 13, 2, true},
    };
    for (size_t i = 0; i < sizeof sm90 / sizeof sm90[0]; i++) dot_cumsum(&sm90[i], "sm_90a", "emu:sm_90a");
}
