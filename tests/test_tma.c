/* test_tma.c - tensor-map loads on sm_90a (lower/tma.c, lower/llvm_tma.c, the launcher's
 * tensor maps), run on the emulated Hopper (emu:sm_90a):
 *   1. a batched matmul through make_tensor_descriptor: its pipelined tiles become
 *      cp.async.bulk.tensor on mbarriers with a third (batch) dim from the base offset; float64
 *      reference at sizes that are not multiples of the tile, output poisoned; the same with
 *      no_tma (per-thread cp.async) gives the same bits;
 *   2. the same kernel written with pointers and masks (Triton's form) takes tensor maps too;
 *   3. launch errors: a negative stride, or one of 2^40 bytes or more, is refused with a message, nothing
 *      launched. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tile/tile.h>

#include "test_rng.h"

/* C[b] = A[b] @ B[b]: A m x k (row stride sa, batch stride sab), B k x n (sb, sbb), C m x n (dense) */
static const char desc_src[] =
    "@num_warps(4)\n"
    "@num_stages(3)\n"
    "kernel bmm(a: *f16, b: *f16, c: *f32, m: i32, n: i32, k: i32, sa: i32, sab: i32, sb: i32, sbb: i32,\n"
    "           const BM: i32 = 64, const BN: i32 = 64, const BK: i32 = 32) {\n"
    "    let tn = (n + BN - 1) / BN;\n"
    "    let pm = program_id(0) / tn * BM;\n"
    "    let pn = program_id(0) % tn * BN;\n"
    "    let z = program_id(1);\n"
    "    let da = make_tensor_descriptor(a + z * sab, [m, k], [sa, 1], [BM, BK]);\n"
    "    let db = make_tensor_descriptor(b + z * sbb, [k, n], [sb, 1], [BK, BN]);\n"
    "    let acc = zeros([BM, BN], f32);\n"
    "    for k0 in range(0, k, BK) {\n"
    "        acc = dot(load_tensor_descriptor(da, [pm, k0]), load_tensor_descriptor(db, [k0, pn]), acc);\n"
    "    }\n"
    "    let rm = pm + arange(0, BM);\n"
    "    let rn = pn + arange(0, BN);\n"
    "    store(c + z * m * n + rm[:, None] * n + rn[None, :], acc, (rm[:, None] < m) && (rn[None, :] < n));\n"
    "}\n";

static const char ptr_src[] =
    "@num_warps(4)\n"
    "@num_stages(3)\n"
    "kernel bmm(a: *f16, b: *f16, c: *f32, m: i32, n: i32, k: i32, sa: i32, sab: i32, sb: i32, sbb: i32,\n"
    "           const BM: i32 = 64, const BN: i32 = 64, const BK: i32 = 32) {\n"
    "    let tn = (n + BN - 1) / BN;\n"
    "    let rm = program_id(0) / tn * BM + arange(0, BM);\n"
    "    let rn = program_id(0) % tn * BN + arange(0, BN);\n"
    "    let z = program_id(1);\n"
    "    let acc = zeros([BM, BN], f32);\n"
    "    for k0 in range(0, k, BK) {\n"
    "        let kk = k0 + arange(0, BK);\n"
    "        let ta = load(a + z * sab + rm[:, None] * sa + kk[None, :], (rm[:, None] < m) && (kk[None, :] < k), 0);\n"
    "        let tb = load(b + z * sbb + kk[:, None] * sb + rn[None, :], (kk[:, None] < k) && (rn[None, :] < n), 0);\n"
    "        acc = dot(ta, tb, acc);\n"
    "    }\n"
    "    store(c + z * m * n + rm[:, None] * n + rn[None, :], acc, (rm[:, None] < m) && (rn[None, :] < n));\n"
    "}\n";

/* emu:sm_90a with racecheck: the kernels' mbarrier waits, proxy fences and stage refills are checked too */
static tile_context *open_ctx(void) {
    tile_context_options o = {.device = "emu:sm_90a", .emu_racecheck = 1};
    tile_context *ctx = NULL;
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK);
    return ctx;
}

static uint16_t f16_of(int v) { /* small integers are exact in f16 */
    if (!v) return 0;
    uint16_t s = v < 0 ? 0x8000 : 0;
    unsigned a = (unsigned)abs(v);
    int e = 0;
    while ((a >> e) > 1) e++;
    return (uint16_t)(s | ((e + 15) << 10) | (((a << 10) >> e) & 0x3ff));
}

/* n random integers in [-r, r], as f16 (exact) on the device; the values in *vals (the caller frees). */
static tile_devptr upload_ints(tile_context *ctx, size_t n, int r, int **vals) {
    uint16_t *h = malloc(n * 2);
    int *v = malloc(n * sizeof *v);
    cr_assert(h && v);
    for (size_t i = 0; i < n; i++) v[i] = irand(2 * r + 1) - r, h[i] = f16_of(v[i]);
    tile_devptr d;
    cr_assert_eq(tile_malloc(ctx, n * 2, &d), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, d, h, n * 2), TILE_OK);
    free(h);
    *vals = v;
    return d;
}

typedef struct Run {
    int m, n, k, batch, sa, sb;
    int ws_warps; /* 0: as written; 4 or 8: @warp_specialize with that many computing warps (BM 128 at 8) */
} Run;

/* src with @warp_specialize and the run's computing warps (8: two warpgroups of 64 rows) */
static char *ws_source(const char *src, int warps) {
    size_t n = strlen(src) + 64;
    char *out = malloc(n);
    const char *w = strstr(src, "@num_warps(4)"), *bm = strstr(src, "BM: i32 = 64");
    cr_assert(w && bm);
    snprintf(out, n, "@warp_specialize(1)\n%.*s@num_warps(%d)%.*sBM: i32 = %d%s", (int)(w - src), src, warps,
             (int)(bm - (w + 13)), w + 13, warps == 8 ? 128 : 64, bm + 12);
    return out;
}

/* k a multiple of 16 (not of BK): with an unspecialized k the K mask allows only element-wise
 * loads, which software pipelining leaves alone on every target */
static const char *const specs[] = {"sa=16", "sab=16", "sb=16", "sbb=16", "k=16", NULL};

/* Compile src for sm_90a (tensor maps unless no_tma), run it on emu:sm_90a, check against float64;
 * the output (m * n * batch floats) into out. */
static void run(const char *src0, const Run *r, bool no_tma, uint64_t seed, float *out) {
    char *src = r->ws_warps && !no_tma ? ws_source(src0, r->ws_warps) : strdup(src0);
    int bm = r->ws_warps == 8 && !no_tma ? 128 : 64;
    tile_compile_options o = {.size = sizeof o, .arch = "sm_90a", .specialize = specs, .no_tma = no_tma};
    tile_compiled c;
    cr_assert_eq(tile_compile_source("bmm.tile", src, &o, &c), TILE_OK, "%s", c.diagnostics);
    bool maps = c.kernels[0].tensor_maps && *c.kernels[0].tensor_maps;
    cr_assert_eq(maps, !no_tma, "tensor maps '%s'", c.kernels[0].tensor_maps);
    cr_assert_eq(strstr(c.ptx, "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes") != NULL, !no_tma,
                 "3-d tensor copies");
    cr_assert_eq(strstr(c.ptx, "cp.async.cg.shared.global") != NULL, no_tma, "per-thread cp.async");
    if (!no_tma) {
        /* A: [k, m, batch] with strides sa, sab; B: [n, k, batch] with sb, sbb; 64 x 32 and 32 x 64 boxes */
        char amap[96];
        snprintf(amap, sizeof amap, "base $0, esize 2, swizzle 64, box [32, %d, 1], dims [$5, $3, ?], strides [$6, $7]", bm);
        cr_expect(strstr(c.kernels[0].tensor_maps, amap), "A's map: %s", c.kernels[0].tensor_maps);
        cr_expect(strstr(c.kernels[0].tensor_maps, "base $1, esize 2, swizzle 128, box [64, 32, 1], dims [$4, $5, ?], strides [$8, $9]"),
                  "B's map: %s", c.kernels[0].tensor_maps);
        cr_expect(strstr(c.ptx, "mbarrier.try_wait.parity.shared::cta.b64") && strstr(c.ptx, "mbarrier.arrive.expect_tx"), "mbarriers");
    }
    if (r->ws_warps && !no_tma) {
        /* a producer warpgroup after the computing warps; their barriers count them only; consumers
         * release stages through mbarriers; two computing warpgroups take registers from the producer */
        cr_expect_eq(c.kernels[0].num_warps, r->ws_warps + 4);
        char bar[32];
        snprintf(bar, sizeof bar, "bar.sync \t1, %d;", 32 * r->ws_warps);
        cr_expect(strstr(c.ptx, bar), "named barrier '%s'", bar);
        cr_expect(strstr(c.ptx, "mbarrier.arrive.shared::cta.b64 _"), "consumer release");
        cr_expect_eq(strstr(c.ptx, "setmaxnreg.inc.sync.aligned.u32 232;") != NULL, r->ws_warps == 8);
        cr_expect_eq(strstr(c.ptx, "setmaxnreg.dec.sync.aligned.u32 40;") != NULL, r->ws_warps == 8);
    }
    tile_compiled_free(&c);

    tile_context *ctx;
    ctx = open_ctx();
    size_t na = (size_t)r->sa * r->m * r->batch + 64, nb = (size_t)r->sb * r->k * r->batch + 64, nc = (size_t)r->m * r->n * r->batch;
    uint16_t *ha = calloc(na, 2), *hb = calloc(nb, 2);
    int *va = calloc(na, sizeof *va), *vb = calloc(nb, sizeof *vb);
    /* everything, padding included, random: padding read as data shows up in the result */
    uint64_t x = seed | 1; /* the same inputs for both forms of one case */
#define NEXT (x ^= x << 13, x ^= x >> 7, x ^= x << 17, (int)((x >> 33) % 9) - 4)
    for (size_t i = 0; i < na; i++) va[i] = NEXT, ha[i] = f16_of(va[i]);
    for (size_t i = 0; i < nb; i++) vb[i] = NEXT, hb[i] = f16_of(vb[i]);
#undef NEXT
    tile_devptr da, db, dc;
    cr_assert_eq(tile_malloc(ctx, na * 2, &da), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, nb * 2, &db), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, nc * 4, &dc), TILE_OK);
    tile_memcpy_htod(ctx, da, ha, na * 2);
    tile_memcpy_htod(ctx, db, hb, nb * 2);
    tile_memset(ctx, dc, 0xFF, nc * 4); /* NaN */
    tile_module *mod;
    o.arch = NULL;
    cr_assert_eq(tile_module_load_source_ex(ctx, "bmm.tile", src, &o, &mod), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *kern;
    cr_assert_eq(tile_module_get_kernel(mod, "bmm", &kern), TILE_OK);
    int32_t m = r->m, n = r->n, k = r->k, sa = r->sa, sab = r->sa * r->m, sb = r->sb, sbb = r->sb * r->k;
    void *args[] = {&da, &db, &dc, &m, &n, &k, &sa, &sab, &sb, &sbb};
    tile_dim3 grid = {(unsigned)(((m + bm - 1) / bm) * ((n + 63) / 64)), (unsigned)r->batch, 1};
    cr_assert_eq(tile_launch(kern, grid, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, out, dc, nc * 4), TILE_OK);
    for (int z = 0; z < r->batch; z++)
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                double want = 0;
                for (int kk = 0; kk < k; kk++)
                    want += (double)va[(size_t)z * sab + (size_t)i * sa + kk] * vb[(size_t)z * sbb + (size_t)kk * sb + j];
                float got = out[((size_t)z * m + i) * n + j];
                cr_assert(got == want, "batch %d (%d, %d): %g, want %g (%s)", z, i, j, got, want, no_tma ? "cp.async" : "tensor maps");
            }
    /* a negative stride: the tensor map cannot say it; refused with a message */
    if (!no_tma) {
        int32_t neg = -sa;
        void *bad[] = {&da, &db, &dc, &m, &n, &k, &neg, &sab, &sb, &sbb};
        cr_assert_eq(tile_launch(kern, grid, bad, NULL), TILE_ERROR_INVALID_VALUE);
        cr_expect(strstr(tile_last_error(ctx), "tensor map") && strstr(tile_last_error(ctx), "no_tma"), "%s", tile_last_error(ctx));
    }
    tile_module_unload(mod);
    tile_context_destroy(ctx);
    free(ha), free(hb), free(va), free(vb), free(src);
}

static void both(const char *src, const Run *r) {
    size_t nc = (size_t)r->m * r->n * r->batch;
    float *x = malloc(nc * 4), *y = malloc(nc * 4);
    uint64_t seed = rnext();
    run(src, r, false, seed, x);
    run(src, r, true, seed, y);
    for (size_t i = 0; i < nc; i++) cr_assert(x[i] == y[i], "element %zu: tensor maps %g, cp.async %g", i, x[i], y[i]);
    free(x), free(y);
}

Test(tma, descriptor_bmm_odd_sizes, .timeout = 600) {
    seed_rng();
    /* m, n not multiples of 64, k not of 32 (a partial last K tile), padded rows */
    both(desc_src, &(Run){.m = 100, .n = 72, .k = 80, .batch = 3, .sa = 96, .sb = 80});
    /* fewer K iterations than stages */
    both(desc_src, &(Run){.m = 40, .n = 130, .k = 16, .batch = 2, .sa = 32, .sb = 144});
}

Test(tma, pointer_bmm_odd_sizes, .timeout = 600) {
    seed_rng();
    both(ptr_src, &(Run){.m = 70, .n = 100, .k = 112, .batch = 2, .sa = 128, .sb = 112});
}

/* @warp_specialize: the same results from a producer warpgroup issuing the copies, with one and
 * two computing warpgroups; more K tiles than stages, so the producer waits for released stages */
Test(tma, warp_specialized_bmm, .timeout = 600) {
    seed_rng();
    both(desc_src, &(Run){.m = 100, .n = 72, .k = 208, .batch = 2, .sa = 224, .sb = 80, .ws_warps = 4});
    both(ptr_src, &(Run){.m = 70, .n = 100, .k = 112, .batch = 1, .sa = 128, .sb = 112, .ws_warps = 4});
    both(desc_src, &(Run){.m = 130, .n = 40, .k = 16, .batch = 2, .sa = 32, .sb = 48, .ws_warps = 8});
    both(desc_src, &(Run){.m = 150, .n = 72, .k = 176, .batch = 1, .sa = 176, .sb = 80, .ws_warps = 8});
}

/* A persistent matmul: each program loops over output tiles t = program_id, program_id + grid, ..
 * with the K loop inside (C = A @ B, A m x k with row stride sa, B k x n with sb, C m x n). */
static const char persistent_src[] =
    "@num_stages(3)\n"
    "kernel pmm(a: *f16, b: *f16, c: *f32, m: i32, n: i32, k: i32, sa: i32, sb: i32,\n"
    "           const BM: i32 = 64, const BN: i32 = 64, const BK: i32 = 32) {\n"
    "    let tm = (m + BM - 1) / BM;\n"
    "    let tn = (n + BN - 1) / BN;\n"
    "    let da = make_tensor_descriptor(a, [m, k], [sa, 1], [BM, BK]);\n"
    "    let db = make_tensor_descriptor(b, [k, n], [sb, 1], [BK, BN]);\n"
    "    for t in range(program_id(0), tm * tn, num_programs(0)) {\n"
    "        let pm = t / tn * BM;\n"
    "        let pn = t % tn * BN;\n"
    "        let acc = zeros([BM, BN], f32);\n"
    "        for k0 in range(0, k, BK) {\n"
    "            acc = dot(load_tensor_descriptor(da, [pm, k0]), load_tensor_descriptor(db, [k0, pn]), acc);\n"
    "        }\n"
    "        let rm = pm + arange(0, BM);\n"
    "        let rn = pn + arange(0, BN);\n"
    "        store(c + rm[:, None] * n + rn[None, :], acc, (rm[:, None] < m) && (rn[None, :] < n));\n"
    "    }\n"
    "}\n";

/* Runs the persistent matmul on emu:sm_90a with `programs` programs (fewer than the tiles), with
 * @warp_specialize(ws) on `warps` computing warps (BM 128 at 8; ws 2: @num_consumer_groups(warps / 4)
 * instead); exact against float64 (small integers), output NaN-poisoned. */
static void persistent_case(int m, int n, int k, int programs, int ws, int warps) {
    static const char *const pspecs[] = {"sa=16", "sb=16", "k=16", NULL};
    char src[2048];
    if (ws == 2) snprintf(src, sizeof src, "@num_consumer_groups(%d)\n%s", warps / 4, persistent_src); /* the same, said so */
    else snprintf(src, sizeof src, "@warp_specialize(%d)\n@num_warps(%d)\n%s", ws, warps, persistent_src);
    char bm_def[16];
    snprintf(bm_def, sizeof bm_def, "BM=%d", warps == 8 ? 128 : 64);
    const char *defs[] = {bm_def, NULL};
    tile_compile_options o = {.size = sizeof o, .arch = "sm_90a", .specialize = pspecs, .defines = defs};
    tile_compiled c;
    cr_assert_eq(tile_compile_source("pmm.tile", src, &o, &c), TILE_OK, "%s", c.diagnostics);
    cr_assert(strstr(c.ptx, "cp.async.bulk.tensor.2d"), "tensor copies");
    cr_assert_eq(c.kernels[0].num_warps, warps + (ws ? 4 : 0));
    if (ws) {
        cr_expect(strstr(c.ptx, "mbarrier.arrive.shared::cta.b64 _"), "consumer release");
        /* the wgmma stays in flight, so each iteration releases the previous one's stage, carried: the
         * first iteration's on one more "empty" mbarrier than there are stages, which no copy waits for */
        int rings[2] = {0, 0}, nr = 0;
        for (const char *p = c.tir; nr < 2 && (p = strstr(p, "x1x1xi64")); p++) {
            const char *q = p;
            while (q > c.tir && q[-1] >= '0' && q[-1] <= '9') q--;
            rings[nr++] = atoi(q);
        }
        cr_expect(nr == 2 && abs(rings[0] - rings[1]) == 1, "full and empty mbarriers %d and %d:\n%s", rings[0], rings[1], c.tir);
    }
    tile_compiled_free(&c);
    tile_context *ctx;
    ctx = open_ctx();
    int sa = k + 16, sb = n + (16 - n % 16) % 16 + 16;
    size_t na = (size_t)m * sa + 64, nb = (size_t)k * sb + 64, nc = (size_t)m * n; /* (+ 64: no zero-byte allocations at k = 0) */
    int *va, *vb;
    float *out = malloc(nc * 4);
    tile_devptr da = upload_ints(ctx, na, 4, &va), db = upload_ints(ctx, nb, 4, &vb), dc;
    cr_assert_eq(tile_malloc(ctx, nc * 4, &dc), TILE_OK);
    tile_memset(ctx, dc, 0xFF, nc * 4);
    tile_module *mod;
    o.arch = NULL;
    cr_assert_eq(tile_module_load_source_ex(ctx, "pmm.tile", src, &o, &mod), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *kern;
    cr_assert_eq(tile_module_get_kernel(mod, "pmm", &kern), TILE_OK);
    int32_t am = m, an = n, ak = k, asa = sa, asb = sb;
    void *args[] = {&da, &db, &dc, &am, &an, &ak, &asa, &asb};
    /* twice: the second launch reads another A, of another shape (the launcher's tensor maps are
     * encoded again, not taken from the first launch); a third through tile_launch_raw, which
     * passes the maps too */
    tile_kernel_attributes ka;
    cr_assert_eq(tile_kernel_get_attributes(kern, &ka), TILE_OK);
    for (int round = 0; round < 3; round++) {
        if (round == 2) {
            tile_memset(ctx, dc, 0xFF, nc * 4);
            cr_assert_eq(tile_launch_raw(kern, (tile_dim3){(unsigned)programs, 1, 1}, (tile_dim3){ka.block_threads, 1, 1}, ka.shared_bytes > 48 * 1024 ? ka.shared_bytes : 0,
                                         args, NULL),
                         TILE_OK, "%s", tile_last_error(ctx));
        } else if (round) {
            am = m - 37, ak = k - 16;
            free(va);
            da = upload_ints(ctx, na, 4, &va);
            tile_memset(ctx, dc, 0xFF, nc * 4);
        }
        if (round < 2)
            cr_assert_eq(tile_launch(kern, (tile_dim3){(unsigned)programs, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
        cr_assert_eq(tile_memcpy_dtoh(ctx, out, dc, nc * 4), TILE_OK);
        for (int i = 0; i < am; i++)
            for (int j = 0; j < n; j++) {
                double want = 0;
                for (int kk = 0; kk < ak; kk++) want += (double)va[(size_t)i * sa + kk] * vb[(size_t)kk * sb + j];
                cr_assert(out[(size_t)i * n + j] == want, "(%d, %d): %g, want %g (ws %d, %d warps, %d programs, launch %d)", i, j,
                          out[(size_t)i * n + j], want, ws, warps, programs, round);
            }
    }
    tile_module_unload(mod);
    tile_context_destroy(ctx);
    free(va), free(vb), free(out);
}

/* Persistent: several tiles a program, with and without a producer warpgroup (which runs
 * ahead into the next tile's stages while the computing warps store this one), K loops longer
 * and shorter than the ring, a program count that does not divide the tiles. */
Test(tma, persistent_matmul, .timeout = 600) {
    seed_rng();
    persistent_case(200, 136, 208, 3, 0, 4);
    persistent_case(200, 136, 208, 3, 1, 4);
    persistent_case(130, 72, 48, 2, 1, 4);
    persistent_case(260, 100, 176, 2, 2, 8);
    /* one K step a tile (the release after the loop is its only one), more programs than tiles
     * (a program with none: both loops run zero times), no K at all (nothing issued or waited for) */
    persistent_case(150, 130, 16, 2, 1, 4);
    persistent_case(100, 60, 64, 5, 1, 4);
    persistent_case(70, 40, 0, 2, 1, 4);
}

/* An attention-shaped loop: S = Q K^T, then O += relu(S) V, with K and V streamed by a producer
 * warpgroup (Q m x D, K and V n x D, row strides sq, sk, sv; O m x D dense). */
static const char twodot_src[] =
    "@warp_specialize(1)\n"
    "@num_warps(8)\n"
    "@num_stages(2)\n"
    "kernel twodot(q: *f16, k: *f16, v: *f16, o: *f32, m: i32, n: i32, sq: i32, sk: i32, sv: i32,\n"
    "              const BM: i32 = 128, const BN: i32 = 64, const D: i32 = 64) {\n"
    "    let rm = program_id(0) * BM + arange(0, BM);\n"
    "    let rd = arange(0, D);\n"
    "    let tq = load(q + rm[:, None] * sq + rd[None, :], rm[:, None] < m, 0);\n"
    "    let acc = zeros([BM, D], f32);\n"
    "    for j in range(0, n, BN) {\n"
    "        let rn = j + arange(0, BN);\n"
    "        let tk = load(k + rn[:, None] * sk + rd[None, :], rn[:, None] < n, 0);\n"
    "        let s = dot(tq, trans(tk));\n"
    "        let tv = load(v + rn[:, None] * sv + rd[None, :], rn[:, None] < n, 0);\n"
    "        acc = dot(maximum(s, 0.0) as f16, tv, acc);\n"
    "    }\n"
    "    store(o + rm[:, None] * D + rd[None, :], acc, rm[:, None] < m);\n"
    "}\n";

/* Runs twodot with pingpong=pp, overlap=ov (and warp_specialize=ws) on emu:sm_90a; exact against
 * float64 (small integers: every S, relu(S) in f16 and sum is exact), output NaN-poisoned. */
static void twodot_case(int m, int n, int pp, int ws, int ov) {
    static const char *const tspecs[] = {"sq=16", "sk=16", "sv=16", NULL};
    char ppdef[16], wsdef[24], ovdef[16];
    snprintf(ppdef, sizeof ppdef, "pingpong=%d", pp);
    snprintf(wsdef, sizeof wsdef, "warp_specialize=%d", ws);
    snprintf(ovdef, sizeof ovdef, "overlap=%d", ov);
    const char *defs[] = {ppdef, wsdef, ovdef, NULL};
    tile_compile_options o = {.size = sizeof o, .arch = "sm_90a", .specialize = tspecs, .defines = defs};
    tile_compiled c;
    cr_assert_eq(tile_compile_source("twodot.tile", twodot_src, &o, &c), TILE_OK, "%s", c.diagnostics);
    cr_assert(strstr(c.ptx, "cp.async.bulk.tensor.2d") && strstr(c.ptx, "wgmma.mma_async"), "tensor copies and wgmma");
    /* the turns: warpgroup g waits at barrier 2 + g, passes at the next one's; the last starts */
    bool turns = pp && ws;
    cr_expect_eq(strstr(c.ptx, "bar.arrive") != NULL, turns, "turns passed (pingpong %d, warp_specialize %d)", pp, ws);
    if (turns) cr_expect(strstr(c.ptx, "bar.sync \t%r") && strstr(c.ptx, ", 256;"), "turns waited for");
    /* overlap: relu(S) V of one block issued with S of the next, S waited for with that group pending */
    cr_expect_eq(strstr(c.ptx, "wgmma.wait_group.sync.aligned 1;") != NULL, ov && ws, "overlap %d, warp_specialize %d", ov, ws);
    tile_compiled_free(&c);
    tile_context *ctx;
    ctx = open_ctx();
    enum { D = 64 };
    int sq = D + 16, sk = D + 32, sv = D;
    size_t nq = (size_t)m * sq, nk = (size_t)n * sk + 64, nv = (size_t)n * sv + 64, no = (size_t)m * D;
    int *vq, *vk, *vv;
    float *out = malloc(no * 4);
    tile_devptr dq = upload_ints(ctx, nq, 2, &vq), dk = upload_ints(ctx, nk, 2, &vk), dv = upload_ints(ctx, nv, 2, &vv), dout;
    cr_assert_eq(tile_malloc(ctx, no * 4, &dout), TILE_OK);
    tile_memset(ctx, dout, 0xFF, no * 4);
    tile_module *mod;
    o.arch = NULL;
    cr_assert_eq(tile_module_load_source_ex(ctx, "twodot.tile", twodot_src, &o, &mod), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *kern;
    cr_assert_eq(tile_module_get_kernel(mod, "twodot", &kern), TILE_OK);
    int32_t am = m, an = n, asq = sq, ask = sk, asv = sv;
    void *args[] = {&dq, &dk, &dv, &dout, &am, &an, &asq, &ask, &asv};
    cr_assert_eq(tile_launch(kern, (tile_dim3){(unsigned)((m + 127) / 128), 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, out, dout, no * 4), TILE_OK);
    double *p = malloc((size_t)n * sizeof *p);
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int d = 0; d < D; d++) s += (double)vq[(size_t)i * sq + d] * vk[(size_t)j * sk + d];
            p[j] = s > 0 ? s : 0;
        }
        for (int d = 0; d < D; d++) {
            double want = 0;
            for (int j = 0; j < n; j++) want += p[j] * vv[(size_t)j * sv + d];
            cr_assert(out[(size_t)i * D + d] == want, "(%d, %d): %g, want %g (pingpong %d, overlap %d, m %d, n %d)", i, d,
                      out[(size_t)i * D + d], want, pp, ov, m, n);
        }
    }
    tile_module_unload(mod);
    tile_context_destroy(ctx);
    free(vq), free(vk), free(vv), free(out), free(p);
}

/* @pingpong: the two computing warpgroups take turns issuing S = Q K^T (named barriers, bar.arrive):
 * the same results as without, over more K/V blocks than stages and with a partial last block;
 * without a producer warpgroup the hint changes nothing. */
Test(tma, pingpong_two_dots, .timeout = 600) {
    seed_rng();
    twodot_case(200, 300, 1, 1, 0);
    twodot_case(100, 40, 1, 1, 0);
    twodot_case(130, 200, 0, 1, 0);
    twodot_case(130, 72, 1, 0, 0);
}

/* @overlap: each computing warpgroup issues relu(S) V of one block with S of the next (the accumulator
 * carried as it is, not rescaled): the same results with and without pingpong, over many blocks, one
 * whole block and a partial one (the steady loop runs once or not at all), no blocks at all; without a
 * producer warpgroup the hint changes nothing. */
Test(tma, overlap_two_dots, .timeout = 600) {
    seed_rng();
    twodot_case(200, 300, 1, 1, 1);
    twodot_case(130, 456, 0, 1, 1);
    twodot_case(100, 100, 1, 1, 1);
    twodot_case(70, 64, 0, 1, 1);
    twodot_case(60, 0, 1, 1, 1);
    twodot_case(130, 72, 1, 0, 1);
}

/* Epilogue stores through tensor maps: a persistent matmul (optionally warp-specialized) whose C
 * (row stride sc, a multiple of 16) is stored as f32 or f16 by a tma_store of a shared tile. */
#define EPI_SRC(NAME, CTY, STORE)                                                                    \
    "@num_stages(3)\n"                                                                               \
    "kernel " NAME "(a: *f16, b: *f16, c: *" CTY ", m: i32, n: i32, k: i32, sa: i32, sb: i32, sc: i32,\n" \
    "           const BM: i32 = 64, const BN: i32 = 64, const BK: i32 = 32) {\n"                     \
    "    let tm = (m + BM - 1) / BM;\n"                                                              \
    "    let tn = (n + BN - 1) / BN;\n"                                                              \
    "    let da = make_tensor_descriptor(a, [m, k], [sa, 1], [BM, BK]);\n"                           \
    "    let db = make_tensor_descriptor(b, [k, n], [sb, 1], [BK, BN]);\n"                           \
    "    for t in range(program_id(0), tm * tn, num_programs(0)) {\n"                                \
    "        let pm = t / tn * BM;\n"                                                                \
    "        let pn = t % tn * BN;\n"                                                                \
    "        let acc = zeros([BM, BN], f32);\n"                                                      \
    "        for k0 in range(0, k, BK) {\n"                                                          \
    "            acc = dot(load_tensor_descriptor(da, [pm, k0]), load_tensor_descriptor(db, [k0, pn]), acc);\n" \
    "        }\n"                                                                                    \
    "        let rm = pm + arange(0, BM);\n"                                                         \
    "        let rn = pn + arange(0, BN);\n"                                                         \
    STORE                                                                                            \
    "    }\n"                                                                                        \
    "}\n"

#define PTR_STORE(CAST) "        store(c + rm[:, None] * sc + rn[None, :], acc" CAST ", (rm[:, None] < m) && (rn[None, :] < n));\n"
static const char epi_src[] =
    EPI_SRC("epi32", "f32", PTR_STORE(""))
    EPI_SRC("epi16", "f16", PTR_STORE(" as f16"))
    EPI_SRC("epid", "f32", "        store_tensor_descriptor(make_tensor_descriptor(c, [m, n], [sc, 1], [BM, BN]), [pm, pn], acc);\n");

/* f16 bits of a small integer (exact) back to a double */
static double f16_int(uint16_t h) {
    int e = (h >> 10) & 31, mnt = h & 1023;
    double v = e ? (1024 + mnt) * ldexp(1, e - 25) : mnt * ldexp(1, -24);
    return h & 0x8000 ? -v : v;
}

/* Loads src's kernel on ctx and launches it with (a, b, c, m, n, k, sa, sb, sc) on `programs` programs; the
 * module, for the caller to unload. */
static tile_module *launch_epi(tile_context *ctx, const char *src, const tile_compile_options *o, const char *kernel,
                               const tile_devptr abc[3], const int sizes[6], int programs) {
    tile_module *mod;
    cr_assert_eq(tile_module_load_source_ex(ctx, "epi.tile", src, o, &mod), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *kern;
    cr_assert_eq(tile_module_get_kernel(mod, kernel, &kern), TILE_OK);
    tile_devptr p[3] = {abc[0], abc[1], abc[2]};
    int32_t v[6];
    for (int i = 0; i < 6; i++) v[i] = sizes[i];
    void *args[] = {&p[0], &p[1], &p[2], &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]};
    cr_assert_eq(tile_launch(kern, (tile_dim3){(unsigned)programs, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    return mod;
}

static void epilogue_case(const char *kernel, int m, int n, int k, int programs, int ws, int warps) {
    static const char *const especs[] = {"sa=16", "sb=16", "sc=16", "k=16", NULL};
    bool half = !strcmp(kernel, "epi16");
    /* every kernel gets the attributes */
    char src[12288], attrs[64];
    snprintf(attrs, sizeof attrs, "@warp_specialize(%d)\n@num_warps(%d)\n@num_stages(3)\n", ws, warps);
    src[0] = 0;
    for (const char *p = epi_src, *q; *p; p = q) {
        q = strstr(p + 1, "@num_stages(3)\n");
        if (!q) q = p + strlen(p);
        snprintf(src + strlen(src), sizeof src - strlen(src), "%s%.*s", attrs, (int)(q - p - 15), p + 15);
    }
    char bm_def[16];
    snprintf(bm_def, sizeof bm_def, "BM=%d", warps == 8 ? 128 : 64);
    const char *defs[] = {bm_def, NULL};
    tile_compile_options o = {.size = sizeof o, .arch = "sm_90a", .specialize = especs, .defines = defs, .kernel = kernel};
    tile_compiled c;
    cr_assert_eq(tile_compile_source("epi.tile", src, &o, &c), TILE_OK, "%s", c.diagnostics);
    /* C through its own tensor map: stored from shared memory by one thread, waited for before the
     * buffer is written again and before the kernel returns */
    cr_expect(strstr(c.ptx, "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group") && strstr(c.ptx, "cp.async.bulk.commit_group") &&
                  strstr(c.ptx, "cp.async.bulk.wait_group.read 0"),
              "%s: tensor-map store", kernel);
    cr_expect(strstr(c.kernels[0].tensor_maps, half ? "base $2, esize 2" : "base $2, esize 4"), "C's map: %s", c.kernels[0].tensor_maps);
    /* an f16 tile goes into the buffer by stmatrix (the accumulator's fragments are its matrices) */
    cr_expect_eq(strstr(c.ptx, "stmatrix.sync.aligned.m8n8.x4.shared.b16") != NULL, half, "%s: stmatrix", kernel);
    cr_expect(!strstr(c.ptx, half ? "st.global.b16" : "st.global.f32") && !strstr(c.ptx, "st.global.v"), "%s: per-thread stores left", kernel);
    tile_compiled_free(&c);
    tile_context *ctx;
    ctx = open_ctx();
    int sa = k + 16, sb = n + (16 - n % 16) % 16, sc = n + (16 - n % 16) % 16 + 16, es = half ? 2 : 4;
    size_t na = (size_t)m * sa + 64, nb = (size_t)k * sb + 64, nc = (size_t)(m + 8) * sc; /* rows past m: must stay untouched */
    int *va, *vb;
    uint8_t *out = malloc(nc * (size_t)es);
    tile_devptr da = upload_ints(ctx, na, 4, &va), db = upload_ints(ctx, nb, 4, &vb), dc;
    cr_assert_eq(tile_malloc(ctx, nc * (size_t)es, &dc), TILE_OK);
    tile_memset(ctx, dc, 0xFF, nc * (size_t)es); /* NaN */
    o.arch = NULL;
    tile_module *mod = launch_epi(ctx, src, &o, kernel, (tile_devptr[]){da, db, dc}, (int[]){m, n, k, sa, sb, sc}, programs);
    cr_assert_eq(tile_memcpy_dtoh(ctx, out, dc, nc * (size_t)es), TILE_OK);
    for (int i = 0; i < m + 8; i++)
        for (int j = 0; j < sc; j++) {
            size_t at = (size_t)i * sc + j;
            bool in = i < m && j < n;
            double got = half ? f16_int(((uint16_t *)out)[at]) : ((float *)out)[at];
            bool poisoned = half ? ((uint16_t *)out)[at] == 0xFFFF : isnan(((float *)out)[at]);
            if (!in) {
                cr_assert(poisoned, "%s: C[%d][%d] outside %d x %d written (%g)", kernel, i, j, m, n, got);
                continue;
            }
            double want = 0;
            for (int kk = 0; kk < k; kk++) want += (double)va[(size_t)i * sa + kk] * vb[(size_t)kk * sb + j];
            cr_assert(got == want, "%s (%d, %d): %g, want %g (ws %d, %d warps, %d programs)", kernel, i, j, got, want, ws, warps, programs);
        }
    tile_module_unload(mod);
    tile_context_destroy(ctx);
    free(va), free(vb), free(out);
}

/* Tiles that straddle m and n (the map's bounds keep the copy inside C), several tiles a program
 * (the buffer is reused once the previous store has read it), with and without a producer
 * warpgroup, one and two computing warpgroups, f32 and f16 out. */
Test(tma, epilogue_store, .timeout = 600) {
    seed_rng();
    epilogue_case("epi32", 150, 100, 64, 2, 0, 4);
    epilogue_case("epi16", 150, 100, 64, 2, 1, 4);
    epilogue_case("epi32", 260, 72, 48, 2, 1, 8);
    epilogue_case("epi16", 70, 136, 32, 3, 1, 8);
    epilogue_case("epid", 150, 100, 64, 2, 1, 4); /* store_tensor_descriptor */
}

/* Epilogue reductions through tensor maps: the same persistent matmul adding (or taking the
 * maximum of) its tile into C, which holds values beforehand.  A relaxed atomic whose old values
 * nothing reads becomes a tensor reduction (cp.reduce.async.bulk.tensor) with C's element type in
 * the map; one with the default acq_rel ordering stays per-thread atomics. */
#define RED_STORE(F, CAST, SEM) \
    "        " F "(c + rm[:, None] * sc + rn[None, :], acc" CAST ", (rm[:, None] < m) && (rn[None, :] < n)" SEM ");\n"
static const char red_src[] =
    EPI_SRC("red32", "f32", RED_STORE("atomic_add", "", ", sem=\"relaxed\""))
    EPI_SRC("red16", "f16", RED_STORE("atomic_add", " as f16", ", sem=\"relaxed\""))
    EPI_SRC("redmax", "i32", RED_STORE("atomic_max", " as i32", ", sem=\"relaxed\", scope=\"cta\""))
    EPI_SRC("redxor", "i32", RED_STORE("atomic_xor", " as i32", ", sem=\"relaxed\""))
    EPI_SRC("redrel", "f32", RED_STORE("atomic_add", "", ""))
    EPI_SRC("reddesc", "f32", "        atomic_add_tensor_descriptor(make_tensor_descriptor(c, [m, n], [sc, 1], [BM, BN]), [pm, pn], acc);\n");

static void reduce_case(const char *kernel, int m, int n, int k, int programs, int ws) {
    static const char *const rspecs[] = {"sa=16", "sb=16", "sc=16", "k=16", NULL};
    enum { F32, F16, I32 } ct = !strcmp(kernel, "red16") ? F16 : strstr(kernel, "max") || strstr(kernel, "xor") ? I32 : F32;
    bool tensor = strcmp(kernel, "redrel") != 0, mx = strstr(kernel, "max") != NULL, xr = strstr(kernel, "xor") != NULL;
    char src[16384];
    src[0] = 0;
    for (const char *p = red_src, *q; *p; p = q) {
        q = strstr(p + 1, "@num_stages(3)\n");
        if (!q) q = p + strlen(p);
        snprintf(src + strlen(src), sizeof src - strlen(src), "@warp_specialize(%d)\n@num_warps(4)\n%.*s", ws, (int)(q - p), p);
    }
    tile_compile_options o = {.size = sizeof o, .arch = "sm_90a", .specialize = rspecs, .kernel = kernel};
    tile_compiled c;
    cr_assert_eq(tile_compile_source("red.tile", src, &o, &c), TILE_OK, "%s", c.diagnostics);
    const char *op = mx ? "cp.reduce.async.bulk.tensor.2d.global.shared::cta.max.tile.bulk_group"
                     : xr ? "cp.reduce.async.bulk.tensor.2d.global.shared::cta.xor.tile.bulk_group"
                          : "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group";
    cr_expect_eq(strstr(c.ptx, op) != NULL, tensor, "%s: tensor reduction", kernel);
    cr_expect_eq(strstr(c.ptx, "\tatom.") != NULL || strstr(c.ptx, "\tred.") != NULL, !tensor, "%s: per-thread atomics", kernel);
    const char *map = ct == F16 ? "base $2, esize 2, elem f16," : ct == F32 ? "base $2, esize 4, elem f32," : mx ? "base $2, esize 4, elem i32,"
                                                                                                            : "base $2, esize 4, elem u32,";
    cr_expect_eq(strstr(c.kernels[0].tensor_maps, map) != NULL, tensor, "%s: C's map: %s", kernel, c.kernels[0].tensor_maps);
    tile_compiled_free(&c);
    tile_context *ctx;
    ctx = open_ctx();
    int sa = k + 16, sb = n + (16 - n % 16) % 16, sc = n + (16 - n % 16) % 16 + 16, es = ct == F16 ? 2 : 4;
    size_t na = (size_t)m * sa + 64, nb = (size_t)k * sb + 64, nc = (size_t)(m + 8) * sc; /* rows past m: must stay as they were */
    int *va, *vb;
    uint8_t *init = malloc(nc * (size_t)es), *out = malloc(nc * (size_t)es);
    int *cv = malloc(nc * sizeof *cv);
    cr_assert(init && out && cv);
    tile_devptr da = upload_ints(ctx, na, 4, &va), db = upload_ints(ctx, nb, 4, &vb), dc;
    for (size_t i = 0; i < nc; i++) {
        cv[i] = irand(201) - 100;
        if (ct == F16) ((uint16_t *)init)[i] = f16_of(cv[i]);
        else if (ct == F32) ((float *)init)[i] = (float)cv[i];
        else ((int32_t *)init)[i] = cv[i];
    }
    cr_assert_eq(tile_malloc(ctx, nc * (size_t)es, &dc), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, dc, init, nc * (size_t)es), TILE_OK);
    o.arch = NULL;
    tile_module *mod = launch_epi(ctx, src, &o, kernel, (tile_devptr[]){da, db, dc}, (int[]){m, n, k, sa, sb, sc}, programs);
    cr_assert_eq(tile_memcpy_dtoh(ctx, out, dc, nc * (size_t)es), TILE_OK);
    for (int i = 0; i < m + 8; i++)
        for (int j = 0; j < sc; j++) {
            size_t at = (size_t)i * sc + j;
            double got = ct == F16 ? f16_int(((uint16_t *)out)[at]) : ct == F32 ? ((float *)out)[at] : ((int32_t *)out)[at];
            double want = cv[at];
            if (i < m && j < n) {
                double d = 0;
                for (int kk = 0; kk < k; kk++) d += (double)va[(size_t)i * sa + kk] * vb[(size_t)kk * sb + j];
                want = mx ? fmax(want, d) : xr ? (double)(cv[at] ^ (int32_t)d) : want + d;
            }
            cr_assert(got == want, "%s (%d, %d): %g, want %g (%d x %d, ws %d, %d programs)", kernel, i, j, got, want, m, n, ws, programs);
        }
    tile_module_unload(mod);
    tile_context_destroy(ctx);
    free(va), free(vb), free(init), free(out), free(cv);
}

/* Tiles that straddle m and n (elements outside C keep their values), several tiles a program, with
 * and without a producer warpgroup; add on f32 and f16, max and xor on i32, the descriptor form; acq_rel stays
 * atomics. */
Test(tma, epilogue_reduction, .timeout = 600) {
    seed_rng();
    reduce_case("red32", 150, 100, 64, 2, 0);
    reduce_case("red16", 70, 136, 32, 3, 1);
    reduce_case("redmax", 130, 72, 48, 2, 1);
    reduce_case("redxor", 66, 80, 32, 1, 0);
    reduce_case("redrel", 70, 40, 32, 2, 0);
    reduce_case("reddesc", 150, 100, 64, 2, 1); /* atomic_add_tensor_descriptor */
}

/* A tensor store or reduction completes asynchronously, so one is made only where nothing after it touches the
 * memory it writes: a tile stored to C and read back from C (to store twice it into D) stays per-thread stores
 * while the loads still stream through tensor maps; with the read from another argument the store is a tensor
 * store.  Values checked on emu:sm_90a. */
Test(tma, store_then_reload) {
    static const char *const body[2] = {
        "    let back = load(c + rm[:, None] * sc + rn[None, :], cm, 0.0);\n",
        "    let back = load(e + rm[:, None] * sc + rn[None, :], cm, 0.0) + acc;\n"};
    for (int v = 0; v < 2; v++) {
        char src[2048];
        snprintf(src, sizeof src,
                 "@num_warps(4)\n@num_stages(3)\n"
                 "kernel rb(a: *f16, b: *f16, c: *f32, d: *f32, e: *f32, m: i32, n: i32, k: i32, sa: i32, sb: i32, sc: i32) {\n"
                 "    let rm = program_id(0) * 64 + arange(0, 64);\n"
                 "    let rn = program_id(1) * 64 + arange(0, 64);\n"
                 "    let cm = (rm[:, None] < m) && (rn[None, :] < n);\n"
                 "    let acc = zeros([64, 64], f32);\n"
                 "    for k0 in range(0, k, 32) {\n"
                 "        let kk = k0 + arange(0, 32);\n"
                 "        acc = dot(load(a + rm[:, None] * sa + kk[None, :], (rm[:, None] < m) && (kk[None, :] < k), 0),\n"
                 "                  load(b + kk[:, None] * sb + rn[None, :], (kk[:, None] < k) && (rn[None, :] < n), 0), acc);\n"
                 "    }\n"
                 "    store(c + rm[:, None] * sc + rn[None, :], acc, cm);\n"
                 "    debug_barrier();\n" /* the other threads' elements of C: stored before they are read back */
                 "%s"
                 "    store(d + rm[:, None] * sc + rn[None, :], back * 2.0, cm);\n"
                 "}\n",
                 body[v]);
        static const char *const pspecs[] = {"sa=16", "sb=16", "sc=16", "k=16", NULL};
        tile_compile_options o = {.size = sizeof o, .arch = "sm_90a", .specialize = pspecs};
        tile_compiled cc;
        cr_assert_eq(tile_compile_source("rb.tile", src, &o, &cc), TILE_OK, "%s", cc.diagnostics);
        cr_expect(strstr(cc.ptx, "cp.async.bulk.tensor.2d.shared::cluster.global"), "variant %d: tensor-map loads", v);
        /* C's store and D's: tensor stores of two 128-byte panels each where allowed (D's always: nothing follows it) */
        int copies = 0;
        for (const char *p = cc.ptx; (p = strstr(p, "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group")); p++) copies++;
        cr_expect_eq(copies, v ? 4 : 2, "variant %d: %d tensor-store copies", v, copies);
        tile_compiled_free(&cc);
        if (v) continue;
        seed_rng();
        tile_context *ctx;
        ctx = open_ctx();
        int M = 100, N = 72, K = 48, sa = 64, sb = 80, sc = 80;
        int *va, *vb;
        tile_devptr da = upload_ints(ctx, (size_t)M * sa, 4, &va), db = upload_ints(ctx, (size_t)K * sb, 4, &vb), dc, dd;
        size_t nc = (size_t)(M + 4) * sc;
        float *hd = malloc(nc * 4);
        cr_assert_eq(tile_malloc(ctx, nc * 4, &dc), TILE_OK);
        cr_assert_eq(tile_malloc(ctx, nc * 4, &dd), TILE_OK);
        tile_memset(ctx, dc, 0xFF, nc * 4), tile_memset(ctx, dd, 0xFF, nc * 4);
        tile_module *mod;
        o.arch = NULL;
        cr_assert_eq(tile_module_load_source_ex(ctx, "rb.tile", src, &o, &mod), TILE_OK, "%s", tile_last_error(ctx));
        tile_kernel *kern;
        cr_assert_eq(tile_module_get_kernel(mod, "rb", &kern), TILE_OK);
        int32_t am = M, an = N, ak = K, asa = sa, asb = sb, asc = sc;
        void *args[] = {&da, &db, &dc, &dd, &dd, &am, &an, &ak, &asa, &asb, &asc};
        cr_assert_eq(tile_launch(kern, (tile_dim3){(M + 63) / 64, (N + 63) / 64, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
        cr_assert_eq(tile_memcpy_dtoh(ctx, hd, dd, nc * 4), TILE_OK);
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double want = 0;
                for (int kk = 0; kk < K; kk++) want += (double)va[(size_t)i * sa + kk] * vb[(size_t)kk * sb + j];
                cr_assert(hd[(size_t)i * sc + j] == 2 * want, "d[%d][%d] = %g, want %g", i, j, hd[(size_t)i * sc + j], 2 * want);
            }
        tile_module_unload(mod);
        tile_context_destroy(ctx);
        free(va), free(vb), free(hd);
    }
}

/* @warp_specialize on 32 computing warps: a producer warpgroup would make 36 warps, past a block's
 * 1024 threads, so the kernel stays as it is (and still streams through tensor maps). */
Test(tma, no_producer_past_1024_threads) {
    char src[4096];
    snprintf(src, sizeof src, "@warp_specialize(1)\n@num_warps(32)\n%s", persistent_src);
    static const char *const pspecs[] = {"sa=16", "sb=16", "k=16", NULL};
    const char *defs[] = {"BM=512", "BN=64", NULL};
    tile_compile_options o = {.size = sizeof o, .arch = "sm_90a", .specialize = pspecs, .defines = defs};
    tile_compiled c;
    cr_assert_eq(tile_compile_source("pmm.tile", src, &o, &c), TILE_OK, "%s", c.diagnostics);
    cr_expect_eq(c.kernels[0].num_warps, 32);
    cr_expect(strstr(c.ptx, "cp.async.bulk.tensor.2d") && !strstr(c.ptx, "mbarrier.arrive.shared::cta.b64 _"), "no producer");
    tile_compiled_free(&c);
}

/* A store whose rows are 2 KiB (512 f32: 16 panels of 128 bytes, each its own box) beside a
 * tensor-map loop: every panel is copied, the map's bounds clip rows and columns. */
Test(tma, wide_store_every_panel) {
    static const char src[] =
        "@num_stages(2)\n"
        "kernel wide(a: *f16, b: *f16, c: *f32, w: *f32, m: i32, n: i32, k: i32, sa: i32, sb: i32, sw: i32) {\n"
        "    let da = make_tensor_descriptor(a, [64, k], [sa, 1], [64, 32]);\n"
        "    let db = make_tensor_descriptor(b, [k, 64], [sb, 1], [32, 64]);\n"
        "    let acc = zeros([64, 64], f32);\n"
        "    for k0 in range(0, k, 32) {\n"
        "        acc = dot(load_tensor_descriptor(da, [0, k0]), load_tensor_descriptor(db, [k0, 0]), acc);\n"
        "    }\n"
        "    let r = arange(0, 64);\n"
        "    store(c + r[:, None] * 64 + r[None, :], acc);\n"
        "    let rr = program_id(0) * 16 + arange(0, 16);\n"
        "    let cc = arange(0, 512);\n"
        "    store(w + rr[:, None] * sw + cc[None, :], (rr[:, None] * 1000 + cc[None, :]) as f32, (rr[:, None] < m) && (cc[None, :] < n));\n"
        "}\n";
    static const char *const wspecs[] = {"sa=16", "sb=16", "sw=16", "k=16", NULL};
    tile_compile_options o = {.size = sizeof o, .arch = "sm_90a", .specialize = wspecs};
    tile_compiled c;
    cr_assert_eq(tile_compile_source("wide.tile", src, &o, &c), TILE_OK, "%s", c.diagnostics);
    int copies = 0;
    for (const char *p = c.ptx; (p = strstr(p, "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group")); p++) copies++;
    cr_expect_eq(copies, 16 + 2, "one copy per 128-byte panel: 16 for w, 2 for c");
    tile_compiled_free(&c);
    tile_context *ctx;
    ctx = open_ctx();
    int m = 20, n = 500, k = 32, sw = 512;
    int *va, *vb;
    tile_devptr da = upload_ints(ctx, 64 * 32, 1, &va), db = upload_ints(ctx, 32 * 64, 1, &vb), dc, dw;
    size_t nw = (size_t)32 * sw;
    cr_assert_eq(tile_malloc(ctx, 64 * 64 * 4, &dc), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, nw * 4, &dw), TILE_OK);
    tile_memset(ctx, dw, 0xFF, nw * 4);
    tile_module *mod;
    o.arch = NULL;
    cr_assert_eq(tile_module_load_source_ex(ctx, "wide.tile", src, &o, &mod), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *kern;
    cr_assert_eq(tile_module_get_kernel(mod, "wide", &kern), TILE_OK);
    int32_t sa = 32, sb = 64;
    void *args[] = {&da, &db, &dc, &dw, &m, &n, &k, &sa, &sb, &sw};
    cr_assert_eq(tile_launch(kern, (tile_dim3){2, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    float *hw = malloc(nw * 4);
    cr_assert_eq(tile_memcpy_dtoh(ctx, hw, dw, nw * 4), TILE_OK);
    for (int i = 0; i < 32; i++)
        for (int j = 0; j < sw; j++) {
            float got = hw[(size_t)i * sw + j];
            if (i < m && j < n) cr_assert(got == (float)(i * 1000 + j), "w[%d][%d] = %g", i, j, got);
            else cr_assert(isnan(got), "w[%d][%d] outside %d x %d written (%g)", i, j, m, n, got);
        }
    tile_module_unload(mod);
    tile_context_destroy(ctx);
    free(va), free(vb), free(hw);
}

/* A tile stored before the pipelined loop (C initialized) and one after it: both through tensor maps, the first
 * buffer allocated where it is stored and living beside the loop's ring (counted when deciding that it fits),
 * the second in the ring's dead space; the elements outside m x n stay NaN. */
Test(tma, stores_before_and_after_the_loop) {
    static const char src[] =
        "@num_warps(4)\n@num_stages(3)\n"
        "kernel pre(a: *f16, b: *f16, c: *f32, d: *f32, m: i32, n: i32, k: i32, sa: i32, sb: i32, sc: i32) {\n"
        "    let rm = program_id(0) * 64 + arange(0, 64);\n"
        "    let rn = program_id(1) * 64 + arange(0, 64);\n"
        "    let cm = (rm[:, None] < m) && (rn[None, :] < n);\n"
        "    store(d + rm[:, None] * sc + rn[None, :], zeros([64, 64], f32) + 1.0, cm);\n"
        "    let acc = zeros([64, 64], f32);\n"
        "    for k0 in range(0, k, 32) {\n"
        "        let kk = k0 + arange(0, 32);\n"
        "        acc = dot(load(a + rm[:, None] * sa + kk[None, :], (rm[:, None] < m) && (kk[None, :] < k), 0),\n"
        "                  load(b + kk[:, None] * sb + rn[None, :], (kk[:, None] < k) && (rn[None, :] < n), 0), acc);\n"
        "    }\n"
        "    store(c + rm[:, None] * sc + rn[None, :], acc, cm);\n"
        "}\n";
    static const char *const pspecs[] = {"sa=16", "sb=16", "sc=16", "k=16", NULL};
    tile_compile_options o = {.size = sizeof o, .arch = "sm_90a", .specialize = pspecs};
    tile_compiled cc;
    cr_assert_eq(tile_compile_source("pre.tile", src, &o, &cc), TILE_OK, "%s", cc.diagnostics);
    int copies = 0;
    for (const char *p = cc.ptx; (p = strstr(p, "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group")); p++) copies++;
    cr_expect_eq(copies, 4, "two stores of two 128-byte panels each: %d copies", copies);
    tile_compiled_free(&cc);
    seed_rng();
    tile_context *ctx;
    ctx = open_ctx();
    int M = 100, N = 72, K = 48, sa = 64, sb = 80, sc = 80;
    int *va, *vb;
    tile_devptr da = upload_ints(ctx, (size_t)M * sa, 4, &va), db = upload_ints(ctx, (size_t)K * sb, 4, &vb), dc, dd;
    size_t nc = (size_t)(M + 4) * sc;
    cr_assert_eq(tile_malloc(ctx, nc * 4, &dc), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, nc * 4, &dd), TILE_OK);
    tile_memset(ctx, dc, 0xFF, nc * 4);
    tile_memset(ctx, dd, 0xFF, nc * 4);
    tile_module *mod;
    o.arch = NULL;
    cr_assert_eq(tile_module_load_source_ex(ctx, "pre.tile", src, &o, &mod), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *kern;
    cr_assert_eq(tile_module_get_kernel(mod, "pre", &kern), TILE_OK);
    int32_t m = M, n = N, k = K, a1 = sa, b1 = sb, c1 = sc;
    void *args[] = {&da, &db, &dc, &dd, &m, &n, &k, &a1, &b1, &c1};
    cr_assert_eq(tile_launch(kern, (tile_dim3){2, 2, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    float *c = malloc(nc * 4), *d = malloc(nc * 4);
    cr_assert_eq(tile_memcpy_dtoh(ctx, c, dc, nc * 4), TILE_OK);
    cr_assert_eq(tile_memcpy_dtoh(ctx, d, dd, nc * 4), TILE_OK);
    for (int i = 0; i < M + 4; i++)
        for (int j = 0; j < sc; j++) {
            float gc = c[(size_t)i * sc + j], gd = d[(size_t)i * sc + j];
            if (i >= M || j >= N) {
                cr_assert(isnan(gc) && isnan(gd), "(%d, %d) outside %d x %d written: %g, %g", i, j, M, N, gc, gd);
                continue;
            }
            double want = 0;
            for (int q = 0; q < K; q++) want += (double)va[(size_t)i * sa + q] * vb[(size_t)q * sb + j];
            cr_assert(gc == want && gd == 1.0f, "(%d, %d): C %g (want %g), D %g (want 1)", i, j, gc, want, gd);
        }
    tile_module_unload(mod);
    tile_context_destroy(ctx);
    free(va), free(vb), free(c), free(d);
}

/* A bound of 0 or less: the map's dim is encoded as 1, and the kernel moves its coordinates outside the
 * map, so a group of 0 rows (m = 0, its C the next group's first row) writes nothing, a K of 0 reads zeros,
 * and a reduction of an empty tile adds nothing; an empty tensor's NULL pointer is accepted. */
Test(tma, empty_bounds_touch_nothing, .timeout = 600) {
    seed_rng();
    static const char src[] =
        "@num_warps(4)\n"
        "kernel mm(a: *f16, b: *f16, c: *f32, m: i32, n: i32, k: i32, sa: i32, sb: i32, const RED: i1 = false,\n"
        "          const BM: i32 = 64, const BN: i32 = 64, const BK: i32 = 32, const KP: i32 = 64) {\n"
        "    let da = make_tensor_descriptor(a, [m, k], [sa, 1], [BM, BK]);\n"
        "    let db = make_tensor_descriptor(b, [k, n], [sb, 1], [BK, BN]);\n"
        "    let acc = zeros([BM, BN], f32);\n"
        "    for k0 in range(0, KP, BK) {\n"
        "        acc = dot(load_tensor_descriptor(da, [0, k0]), load_tensor_descriptor(db, [k0, 0]), acc);\n"
        "    }\n"
        "    let dc = make_tensor_descriptor(c, [m, n], [n, 1], [BM, BN]);\n"
        "    if RED { atomic_add_tensor_descriptor(dc, [0, 0], acc); } else { store_tensor_descriptor(dc, [0, 0], acc); }\n"
        "}\n";
    static const char *const sp[] = {"sa=16", "sb=16", "n=16", NULL};
    tile_context *ctx = open_ctx();
    for (int red = 0; red < 2; red++) {
        const char *defs[] = {red ? "RED=true" : "RED=false", NULL};
        tile_compile_options o = {.size = sizeof o, .arch = "sm_90a", .specialize = sp, .defines = defs};
        tile_compiled c;
        cr_assert_eq(tile_compile_source("mm.tile", src, &o, &c), TILE_OK, "%s", c.diagnostics);
        cr_assert(c.kernels[0].tensor_maps && strstr(c.kernels[0].tensor_maps, "base $2"), "C through a tensor map: '%s'",
                  c.kernels[0].tensor_maps);
        cr_assert(strstr(c.kernels[0].tensor_maps, "base $0"), "A through a tensor map: '%s'", c.kernels[0].tensor_maps);
        tile_compiled_free(&c);
        o.arch = NULL;
        tile_module *mod;
        cr_assert_eq(tile_module_load_source_ex(ctx, "mm.tile", src, &o, &mod), TILE_OK, "%s", tile_last_error(ctx));
        tile_kernel *kern;
        cr_assert_eq(tile_module_get_kernel(mod, "mm", &kern), TILE_OK);
        int *va, *vb;
        tile_devptr da = upload_ints(ctx, 64 * 64, 3, &va), db = upload_ints(ctx, 64 * 64, 3, &vb), dc;
        enum { NC = 2 * 64 * 64 };
        float *hc = malloc(NC * 4);
        cr_assert_eq(tile_malloc(ctx, NC * 4, &dc), TILE_OK);
        struct {
            int m, n, k;
            bool null_a;
        } cases[] = {{0, 64, 64, false}, {0, 64, 64, true}, {-5, 64, 64, false}, {40, 64, 0, false}, {40, 64, -3, false}, {40, 64, 20, false}};
        for (size_t t = 0; t < sizeof cases / sizeof *cases; t++) {
            for (int i = 0; i < NC; i++) hc[i] = -7.0f;
            cr_assert_eq(tile_memcpy_htod(ctx, dc, hc, NC * 4), TILE_OK);
            int32_t m = cases[t].m, n = cases[t].n, k = cases[t].k, sa = 64, sb = 64;
            tile_devptr a = cases[t].null_a ? 0 : da;
            void *args[] = {&a, &db, &dc, &m, &n, &k, &sa, &sb};
            cr_assert_eq(tile_launch(kern, (tile_dim3){1, 1, 1}, args, NULL), TILE_OK, "case %zu: %s", t, tile_last_error(ctx));
            cr_assert_eq(tile_memcpy_dtoh(ctx, hc, dc, NC * 4), TILE_OK);
            for (int i = 0; i < NC; i++) {
                int r = i / n, col = i % n;
                double want = -7.0;
                if (m > 0 && r < m && i < m * n) {
                    double dotv = 0;
                    for (int kk = 0; kk < (k > 0 ? k : 0); kk++) dotv += (double)va[r * 64 + kk] * vb[kk * 64 + col];
                    want = red ? want + dotv : dotv;
                }
                cr_assert(hc[i] == want, "%s, case %zu (m %d, k %d): C[%d] = %g, want %g", red ? "reduction" : "store", t, m, k, i, hc[i], want);
            }
        }
        tile_module_unload(mod);
        free(va), free(vb), free(hc);
    }
    tile_context_destroy(ctx);
}

/* docs/runtime.md: a tensor map holds strides below 2^40 bytes, so tile_launch refuses an argument that gives one
 * of 2^40 or more (with a message naming no_tma, nothing launched) and takes the largest multiple of 16 bytes below.
 * A row stride of i64 elements (specialized =16); one row of A (m = 1), so a huge stride reads nothing past it: the
 * rows at or past m are outside the map and zero-filled. */
Test(tma, stride_limit_2_40) {
    static const char src[] =
        "@num_warps(4)\n"
        "kernel mm(a: *f16, b: *f16, c: *f32, m: i32, n: i32, k: i32, sa: i64, sb: i64,\n"
        "          const BM: i32 = 64, const BN: i32 = 64, const BK: i32 = 32) {\n"
        "    let rm = arange(0, BM);\n"
        "    let rn = arange(0, BN);\n"
        "    let acc = zeros([BM, BN], f32);\n"
        "    for k0 in range(0, k, BK) {\n"
        "        let kk = k0 + arange(0, BK);\n"
        "        let ta = load(a + rm[:, None] * sa + kk[None, :], (rm[:, None] < m) && (kk[None, :] < k), 0);\n"
        "        let tb = load(b + kk[:, None] * sb + rn[None, :], (kk[:, None] < k) && (rn[None, :] < n), 0);\n"
        "        acc = dot(ta, tb, acc);\n"
        "    }\n"
        "    store(c + rm[:, None] * n + rn[None, :], acc, (rm[:, None] < m) && (rn[None, :] < n));\n"
        "}\n";
    static const char *const sp[] = {"sa=16", "sb=16", NULL};
    seed_rng();
    tile_context *ctx = open_ctx();
    tile_compile_options o = {.size = sizeof o, .specialize = sp};
    tile_module *mod;
    cr_assert_eq(tile_module_load_source_ex(ctx, "mm.tile", src, &o, &mod), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *kern;
    cr_assert_eq(tile_module_get_kernel(mod, "mm", &kern), TILE_OK);
    enum { K = 64, N = 64 };
    int *va, *vb;
    tile_devptr da = upload_ints(ctx, K, 3, &va), db = upload_ints(ctx, K * N, 3, &vb), dc;
    cr_assert_eq(tile_malloc(ctx, N * 4, &dc), TILE_OK);
    const int64_t below = ((int64_t)1 << 39) - 16, at_limit = (int64_t)1 << 39; /* f16 elements: 2^40 - 32 and 2^40 bytes */
    const int64_t sas[] = {below, at_limit, at_limit + 16};
    for (int t = 0; t < 3; t++) {
        float hc[N];
        for (int j = 0; j < N; j++) hc[j] = -7.0f;
        cr_assert_eq(tile_memcpy_htod(ctx, dc, hc, sizeof hc), TILE_OK);
        int32_t m = 1, n = N, k = K;
        int64_t sa = sas[t], sb = N;
        void *args[] = {&da, &db, &dc, &m, &n, &k, &sa, &sb};
        tile_status st = tile_launch(kern, (tile_dim3){1, 1, 1}, args, NULL);
        cr_assert_eq(tile_memcpy_dtoh(ctx, hc, dc, sizeof hc), TILE_OK);
        if (t == 0) {
            cr_assert_eq(st, TILE_OK, "a stride of 2^40 - 32 bytes: %s", tile_last_error(ctx));
            for (int j = 0; j < N; j++) {
                double want = 0;
                for (int kk = 0; kk < K; kk++) want += (double)va[kk] * vb[kk * N + j];
                cr_assert(hc[j] == want, "C[%d] = %g, want %g", j, hc[j], want);
            }
        } else {
            cr_assert_eq(st, TILE_ERROR_INVALID_VALUE, "a stride of %lld bytes must be refused", (long long)(sa * 2));
            cr_expect(strstr(tile_last_error(ctx), "below 2^40") && strstr(tile_last_error(ctx), "no_tma") &&
                      strstr(tile_last_error(ctx), "tensor map 0 (the tiles of argument 1 'a')"), "%s", tile_last_error(ctx));
            for (int j = 0; j < N; j++) cr_assert(hc[j] == -7.0f, "refused, yet C[%d] was written: %g", j, hc[j]);
        }
    }
    /* a NULL tensor (not empty) has no tiles to map: refused, naming it */
    tile_devptr null = 0;
    int32_t m1 = 1, n1 = N, k1 = K;
    int64_t sa1 = K, sb1 = N;
    void *nargs[] = {&da, &null, &dc, &m1, &n1, &k1, &sa1, &sb1};
    cr_expect_eq(tile_launch(kern, (tile_dim3){1, 1, 1}, nargs, NULL), TILE_ERROR_INVALID_VALUE);
    cr_expect(strstr(tile_last_error(ctx), "launch of 'mm': argument 2 'b' is NULL but the kernel reads or writes its tiles through a "
                     "tensor map"), "%s", tile_last_error(ctx));
    tile_module_unload(mod);
    free(va), free(vb);
    tile_context_destroy(ctx);
}

/* What a tensor store or copy must not cross: a tile stored through a tensor map completes
 * asynchronously, so a later ordered atomic (a flag another program waits for) keeps the store
 * generic; and memory the kernel wrote with generic stores is read back through the generic proxy
 * (a tensor copy would need a proxy fence to see it), so the loop reading it keeps cp.async. */
Test(tma, ordering_keeps_generic_accesses) {
    static const char src[] =
        "@num_warps(4)\n"
        "kernel mm(a: *f16, b: *f16, c: *f32, flag: *i32, z: *f16, m: i32, n: i32, k: i32, sa: i32, sb: i32,\n"
        "          const SEM: i32 = 0, const ZERO_A: i1 = false, const BM: i32 = 64, const BN: i32 = 64, const BK: i32 = 32) {\n"
        "    if ZERO_A { store(a + arange(0, 64), zeros([64], f16)); } else { store(z + arange(0, 64), zeros([64], f16)); }\n"
        "    let da = make_tensor_descriptor(a, [m, k], [sa, 1], [BM, BK]);\n"
        "    let db = make_tensor_descriptor(b, [k, n], [sb, 1], [BK, BN]);\n"
        "    let acc = zeros([BM, BN], f32);\n"
        "    for k0 in range(0, k, BK) {\n"
        "        acc = dot(load_tensor_descriptor(da, [0, k0]), load_tensor_descriptor(db, [k0, 0]), acc);\n"
        "    }\n"
        "    store_tensor_descriptor(make_tensor_descriptor(c, [m, n], [n, 1], [BM, BN]), [0, 0], acc);\n"
        "    if SEM == 1 { atomic_xchg(flag, 1, sem=\"relaxed\"); } else if SEM == 2 { atomic_xchg(flag, 1, sem=\"release\"); }\n"
        "}\n";
    static const char *const sp[] = {"sa=16", "sb=16", "n=16", "k=16", NULL};
    struct {
        const char *sem, *zero;
        bool c_map, a_map;
    } cases[] = {{"SEM=0", "ZERO_A=false", true, true},
                 {"SEM=1", "ZERO_A=false", true, true},
                 {"SEM=2", "ZERO_A=false", false, true},
                 {"SEM=0", "ZERO_A=true", true, false}};
    for (size_t t = 0; t < sizeof cases / sizeof *cases; t++) {
        const char *defs[] = {cases[t].sem, cases[t].zero, NULL};
        tile_compile_options o = {.size = sizeof o, .arch = "sm_90a", .specialize = sp, .defines = defs};
        tile_compiled c;
        cr_assert_eq(tile_compile_source("mm.tile", src, &o, &c), TILE_OK, "%s", c.diagnostics);
        const char *tm = c.kernels[0].tensor_maps ? c.kernels[0].tensor_maps : "";
        cr_expect_eq(strstr(tm, "base $2") != NULL, cases[t].c_map, "%s %s: C's map in '%s'", cases[t].sem, cases[t].zero, tm);
        cr_expect_eq(strstr(tm, "base $0") != NULL, cases[t].a_map, "%s %s: A's map in '%s'", cases[t].sem, cases[t].zero, tm);
        cr_expect(strstr(tm, "base $1"), "%s %s: B's map in '%s'", cases[t].sem, cases[t].zero, tm);
        tile_compiled_free(&c);
    }
}
