/* test_pipeline.c - software pipelining of gathered dot operands and of plain loads (lower/software_pipeline.c):
 * a tile whose rows are looked up each iteration through an index load (a paged cache's block
 * table, a gather's row ids) is copied with cp.async stages ahead, its index loaded one
 * iteration before its copies.  Run on emu:sm_80 and emu:sm_90a against float64 at sizes that
 * are not multiples of the tile, the output poisoned first:
 *   1. the index load masked (k not a multiple of BK);
 *   2. the index load unmasked, its loop bound alone keeping it inside the index array (sized
 *      exactly k): the copies and index loads issued ahead for iterations that do not run must
 *      be masked off, or the emulator's memcheck reports a read past the array;
 *   3. a loop that also stores to global memory: its index load might read what it wrote, so
 *      the gathered tile is not pipelined (plain loads), and the result is still right;
 *   4. a B that reaches its dot through a widening cast (f8e4m3 or i8 weights as f16): its bytes are
 *      pipelined and read back into registers (local_load) to be widened;
 *   5. B's K blocks looked up in a block table by a scalar index load (a paged weight pool): the
 *      index is loaded an iteration ahead; on sm_90a the blocks are tensor-map copies whose
 *      coordinate is that index;
 *   6. loops without a dot (a norm's column loops) given num_stages: their loads, rank 1 and rank 2, with a
 *      zero or a nonzero `other` and beside a store through another pointer, streamed 2, 3 and 4 stages deep;
 *   7. a loop whose load reads what the iteration before stored through the same pointer: not
 *      pipelined, and its result is the sequential one. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tile/tile.h>

#include "test_rng.h"

/* C = A @ B[idx]: A m x k (row stride sa), B rows gathered by idx[0..k) (row stride sb), C m x n */
#define GATHER_SRC(INDEX_LOAD, EXTRA)                                                                     \
    "@num_warps(4)\n"                                                                                      \
    "@num_stages(3)\n"                                                                                     \
    "kernel gather_mm(a: *f16, b: *f16, idx: *i32, c: *f32, m: i32, n: i32, k: i32, sa: i32, sb: i32,\n"  \
    "                 const BM: i32 = 64, const BN: i32 = 64, const BK: i32 = 32) {\n"                     \
    "    let tn = (n + BN - 1) / BN;\n"                                                                   \
    "    let rm = program_id(0) / tn * BM + arange(0, BM);\n"                                             \
    "    let rn = program_id(0) % tn * BN + arange(0, BN);\n"                                             \
    "    let acc = zeros([BM, BN], f32);\n"                                                               \
    "    for k0 in range(0, k, BK) {\n"                                                                   \
    "        let kk = k0 + arange(0, BK);\n"                                                              \
    "        let rows = " INDEX_LOAD ";\n"                                                                \
    "        let ta = load(a + rm[:, None] * sa + kk[None, :], (rm[:, None] < m) && (kk[None, :] < k), 0);\n" \
    "        let tb = load(b + rows[:, None] * sb + rn[None, :], (kk[:, None] < k) && (rn[None, :] < n), 0);\n" \
    "        acc = dot(ta, tb, acc);\n" EXTRA                                                             \
    "    }\n"                                                                                             \
    "    store(c + rm[:, None] * n + rn[None, :], acc, (rm[:, None] < m) && (rn[None, :] < n));\n"        \
    "}\n"

static const char masked_src[] = GATHER_SRC("load(idx + kk, kk < k)", "");
static const char unmasked_src[] = GATHER_SRC("load(idx + kk)", "");
/* the loop writes global memory (a running count per program, stored each iteration) */
static const char writing_src[] =
    GATHER_SRC("load(idx + kk, kk < k)", "        store(c + program_id(0), (k0 / BK) as f32, program_id(0) < 0);\n");

static uint16_t f16_of(int v) { /* small integers are exact in f16 */
    if (!v) return 0;
    uint16_t s = v < 0 ? 0x8000 : 0;
    unsigned a = (unsigned)abs(v);
    int e = 0;
    while ((a >> e) > 1) e++;
    return (uint16_t)(s | ((e + 15) << 10) | (((a << 10) >> e) & 0x3ff));
}

/* vector accesses (cp.async copies 4, 8 or 16 bytes): k and n multiples of 16 */
static const char *const specs[] = {"sa=16", "sb=16", "k=16", "n=16", NULL};

/* b_rows rows of B; idx[i] a random row, so rows repeat and come in any order */
static void gather_case(const char *src, const char *device, const char *arch, int m, int n, int k, int b_rows,
                        bool pipelined) {
    tile_compile_options o = {.size = sizeof o, .arch = arch, .specialize = specs};
    tile_compiled cc;
    cr_assert_eq(tile_compile_source("gather.tile", src, &o, &cc), TILE_OK, "%s", cc.diagnostics);
    /* A is staged always (a tensor map on sm_90a); the gathered B, through cp.async where it is
     * pipelined, else by 16-byte register loads */
    bool tma = strstr(cc.ptx, "cp.async.bulk.tensor") != NULL, cp = strstr(cc.ptx, "cp.async.cg.shared.global") != NULL,
         plain = strstr(cc.ptx, "ld.global.v4") != NULL;
    cr_expect_eq(tma, strcmp(arch, "sm_90a") == 0, "%s: A through a tensor map", arch);
    cr_expect(pipelined ? cp && !plain : plain, "%s: gathered B %s", arch, pipelined ? "in cp.async stages" : "loaded in registers");
    tile_compiled_free(&cc);

    tile_context *ctx;
    cr_assert_eq(tile_context_create(device, &ctx), TILE_OK);
    int sa = (k + 15) / 16 * 16 + 16, sb = (n + 15) / 16 * 16;
    size_t na = (size_t)m * sa, nb = (size_t)b_rows * sb, nc = (size_t)m * n;
    uint16_t *ha = malloc(na * 2), *hb = malloc(nb * 2);
    int *va = malloc(na * sizeof *va), *vb = malloc(nb * sizeof *vb), *hi = malloc((size_t)k * 4);
    float *out = malloc(nc * 4);
    cr_assert(ha && hb && va && vb && hi && out);
    for (size_t i = 0; i < na; i++) va[i] = irand(9) - 4, ha[i] = f16_of(va[i]);
    for (size_t i = 0; i < nb; i++) vb[i] = irand(9) - 4, hb[i] = f16_of(vb[i]);
    for (int i = 0; i < k; i++) hi[i] = irand(b_rows);
    tile_devptr da, db, di, dc;
    cr_assert_eq(tile_malloc(ctx, na * 2, &da), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, nb * 2, &db), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, (size_t)k * 4, &di), TILE_OK); /* exactly k: a read past it is a memcheck error */
    cr_assert_eq(tile_malloc(ctx, nc * 4, &dc), TILE_OK);
    tile_memcpy_htod(ctx, da, ha, na * 2);
    tile_memcpy_htod(ctx, db, hb, nb * 2);
    tile_memcpy_htod(ctx, di, hi, (size_t)k * 4);
    tile_memset(ctx, dc, 0xFF, nc * 4); /* NaN */
    tile_module *mod;
    o.arch = NULL;
    cr_assert_eq(tile_module_load_source_ex(ctx, "gather.tile", src, &o, &mod), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *kern;
    cr_assert_eq(tile_module_get_kernel(mod, "gather_mm", &kern), TILE_OK);
    int32_t m32 = m, n32 = n, k32 = k, sa32 = sa, sb32 = sb;
    void *args[] = {&da, &db, &di, &dc, &m32, &n32, &k32, &sa32, &sb32};
    tile_dim3 grid = {(unsigned)(((m + 63) / 64) * ((n + 63) / 64)), 1, 1};
    cr_assert_eq(tile_launch(kern, grid, args, NULL), TILE_OK, "%s: %s", device, tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, out, dc, nc * 4), TILE_OK);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double want = 0;
            for (int kk = 0; kk < k; kk++) want += (double)va[(size_t)i * sa + kk] * vb[(size_t)hi[kk] * sb + j];
            float got = out[(size_t)i * n + j];
            cr_assert(got == want, "%s m %d n %d k %d: (%d, %d) = %g, want %g (seed %llu)", device, m, n, k, i, j, got, want,
                      (unsigned long long)seed);
        }
    tile_module_unload(mod);
    tile_context_destroy(ctx);
    free(ha), free(hb), free(va), free(vb), free(hi), free(out);
}

static const struct {
    const char *device, *arch;
} targets[] = {{"emu:sm_80", "sm_80"}, {"emu:sm_90a", "sm_90a"}};

Test(pipeline, gather_masked_index, .timeout = 600) {
    seed_rng();
    for (int t = 0; t < 2; t++) {
        gather_case(masked_src, targets[t].device, targets[t].arch, 70, 80, 208, 300, true); /* 6.5 K tiles */
        gather_case(masked_src, targets[t].device, targets[t].arch, 33, 48, 16, 5, true);    /* fewer K tiles than stages */
    }
}

Test(pipeline, gather_unmasked_index, .timeout = 600) {
    seed_rng();
    for (int t = 0; t < 2; t++) {
        gather_case(unmasked_src, targets[t].device, targets[t].arch, 70, 80, 160, 97, true); /* k a multiple of BK */
        gather_case(unmasked_src, targets[t].device, targets[t].arch, 20, 16, 32, 7, true);   /* one K tile */
    }
}

Test(pipeline, loop_that_writes_keeps_its_loads, .timeout = 600) {
    seed_rng();
    for (int t = 0; t < 2; t++) gather_case(writing_src, targets[t].device, targets[t].arch, 70, 80, 208, 300, false);
}

/* C = A @ float(B): B of type T ([k][n], row stride sb; with nk, [n][k] as weights are, loaded K-contiguous),
 * widened to f16 in registers before the dot */
static char *dequant_src(const char *ty, bool nk) {
    char *out = malloc(2048);
    cr_assert(out);
    snprintf(out, 2048,
             "@num_warps(4)\n@num_stages(3)\n"
             "kernel dequant_mm(a: *f16, b: *%s, c: *f32, m: i32, n: i32, k: i32, sa: i32, sb: i32,\n"
             "                  const BM: i32 = 64, const BN: i32 = 64, const BK: i32 = 32) {\n"
             "    let tn = (n + BN - 1) / BN;\n"
             "    let rm = program_id(0) / tn * BM + arange(0, BM);\n"
             "    let rn = program_id(0) %% tn * BN + arange(0, BN);\n"
             "    let acc = zeros([BM, BN], f32);\n"
             "    for k0 in range(0, k, BK) {\n"
             "        let kk = k0 + arange(0, BK);\n"
             "        let ta = load(a + rm[:, None] * sa + kk[None, :], (rm[:, None] < m) && (kk[None, :] < k), 0);\n"
             "        let tb = load(b + %s, (kk[:, None] < k) && (rn[None, :] < n), 0);\n"
             "        acc = dot(ta, tb as f16, acc);\n"
             "    }\n"
             "    store(c + rm[:, None] * n + rn[None, :], acc, (rm[:, None] < m) && (rn[None, :] < n));\n"
             "}\n",
             ty, nk ? "rn[None, :] * sb + kk[:, None]" : "kk[:, None] * sb + rn[None, :]");
    return out;
}

static uint8_t e4m3_of(int v) { /* small integers (|v| <= 15) are exact in e4m3 */
    if (!v) return 0;
    unsigned a = (unsigned)abs(v), e = 0;
    while ((a >> e) > 1) e++;
    return (uint8_t)((v < 0 ? 0x80 : 0) | ((e + 7) << 3) | (((a << 3) >> e) & 7));
}

static void dequant_case(bool f8, bool nk, const char *device, const char *arch, int m, int n, int k) {
    char *src = dequant_src(f8 ? "f8e4m3" : "i8", nk);
    tile_compile_options o = {.size = sizeof o, .arch = arch, .specialize = specs};
    tile_compiled cc;
    cr_assert_eq(tile_compile_source("dequant.tile", src, &o, &cc), TILE_OK, "%s", cc.diagnostics);
    /* B's bytes go through stages (cp.async, or a tensor map on sm_90a): no 16-byte register loads left */
    cr_expect(!strstr(cc.ptx, "ld.global.v4"), "%s: B is loaded into registers, not pipelined", arch);
    cr_expect(strstr(cc.ptx, strcmp(arch, "sm_90a") ? "cp.async.cg.shared.global" : "cp.async.bulk.tensor"), "%s: no copies", arch);
    tile_compiled_free(&cc);
    tile_context *ctx;
    cr_assert_eq(tile_context_create(device, &ctx), TILE_OK);
    int sa = (k + 15) / 16 * 16 + 16, sb = ((nk ? k : n) + 15) / 16 * 16 + 16;
    size_t na = (size_t)m * sa, nb = (size_t)(nk ? n : k) * sb, nc = (size_t)m * n;
    uint16_t *ha = malloc(na * 2);
    uint8_t *hb = malloc(nb);
    int *va = malloc(na * sizeof *va), *vb = malloc(nb * sizeof *vb);
    float *out = malloc(nc * 4);
    cr_assert(ha && hb && va && vb && out);
    for (size_t i = 0; i < na; i++) va[i] = irand(9) - 4, ha[i] = f16_of(va[i]);
    for (size_t i = 0; i < nb; i++) vb[i] = f8 ? irand(31) - 15 : irand(255) - 127, hb[i] = f8 ? e4m3_of(vb[i]) : (uint8_t)(int8_t)vb[i];
    tile_devptr da, db, dc;
    cr_assert_eq(tile_malloc(ctx, na * 2, &da), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, nb, &db), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, nc * 4, &dc), TILE_OK);
    tile_memcpy_htod(ctx, da, ha, na * 2);
    tile_memcpy_htod(ctx, db, hb, nb);
    tile_memset(ctx, dc, 0xFF, nc * 4); /* NaN */
    tile_module *mod;
    o.arch = NULL;
    cr_assert_eq(tile_module_load_source_ex(ctx, "dequant.tile", src, &o, &mod), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *kern;
    cr_assert_eq(tile_module_get_kernel(mod, "dequant_mm", &kern), TILE_OK);
    int32_t m32 = m, n32 = n, k32 = k, sa32 = sa, sb32 = sb;
    void *args[] = {&da, &db, &dc, &m32, &n32, &k32, &sa32, &sb32};
    tile_dim3 grid = {(unsigned)(((m + 63) / 64) * ((n + 63) / 64)), 1, 1};
    cr_assert_eq(tile_launch(kern, grid, args, NULL), TILE_OK, "%s: %s", device, tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, out, dc, nc * 4), TILE_OK);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double want = 0;
            for (int kk = 0; kk < k; kk++) want += (double)va[(size_t)i * sa + kk] * vb[nk ? (size_t)j * sb + kk : (size_t)kk * sb + j];
            float got = out[(size_t)i * n + j];
            cr_assert(got == want, "%s %s m %d n %d k %d: (%d, %d) = %g, want %g (seed %llu)", device, f8 ? "f8e4m3" : "i8", m, n, k,
                      i, j, got, want, (unsigned long long)seed);
        }
    tile_module_unload(mod);
    tile_context_destroy(ctx);
    free(ha), free(hb), free(va), free(vb), free(out), free(src);
}

Test(pipeline, dequantizing_cast, .timeout = 600) {
    seed_rng();
    for (int t = 0; t < 2; t++) {
        dequant_case(true, false, targets[t].device, targets[t].arch, 70, 80, 208);
        dequant_case(false, false, targets[t].device, targets[t].arch, 33, 48, 80);
        dequant_case(true, true, targets[t].device, targets[t].arch, 70, 80, 208); /* B [n][k]: read K-contiguous */
        dequant_case(false, true, targets[t].device, targets[t].arch, 50, 16, 48);
    }
}

/* C = A @ B, K block kb of B being block table[kb] of a pool of BK-row blocks (row stride sb) */
static const char paged_src[] =
    "@num_warps(4)\n@num_stages(3)\n"
    "kernel paged_mm(a: *f16, pool: *f16, table: *i32, c: *f32, m: i32, n: i32, nkb: i32, sa: i32, sb: i32,\n"
    "                const BM: i32 = 64, const BN: i32 = 64, const BK: i32 = 32) {\n"
    "    let tn = (n + BN - 1) / BN;\n"
    "    let rm = program_id(0) / tn * BM + arange(0, BM);\n"
    "    let rn = program_id(0) % tn * BN + arange(0, BN);\n"
    "    let rk = arange(0, BK);\n"
    "    let acc = zeros([BM, BN], f32);\n"
    "    for kb in range(0, nkb) {\n"
    "        let blk = load(table + kb);\n"
    "        let kk = kb * BK + rk;\n"
    "        let ta = load(a + rm[:, None] * sa + kk[None, :], rm[:, None] < m, 0);\n"
    "        let tb = load(pool + (blk * BK + rk)[:, None] * sb + rn[None, :], rn[None, :] < n, 0);\n"
    "        acc = dot(ta, tb, acc);\n"
    "    }\n"
    "    store(c + rm[:, None] * n + rn[None, :], acc, (rm[:, None] < m) && (rn[None, :] < n));\n"
    "}\n";

static void paged_case(const char *device, const char *arch, int m, int n, int nkb, int pool_blocks, bool ws) {
    static const char *const pspecs[] = {"sa=16", "sb=16", "n=16", NULL};
    tile_compile_options o = {.size = sizeof o, .arch = arch, .specialize = pspecs};
    tile_compiled cc;
    char src[2048];
    snprintf(src, sizeof src, "%s%s", ws ? "@warp_specialize(1)\n" : "", paged_src); /* a producer warpgroup loads the table */
    cr_assert_eq(tile_compile_source("paged.tile", src, &o, &cc), TILE_OK, "%s", cc.diagnostics);
    if (ws) cr_expect_eq(cc.kernels[0].num_warps, 8, "a producer warpgroup beside the 4 computing warps");
    cr_expect(!strstr(cc.ptx, "ld.global.v4"), "%s: the pool's blocks are loaded into registers, not pipelined", arch);
    cr_expect(strstr(cc.ptx, strcmp(arch, "sm_90a") ? "cp.async.cg.shared.global" : "cp.async.bulk.tensor"), "%s: no copies", arch);
    tile_compiled_free(&cc);
    tile_context *ctx;
    cr_assert_eq(tile_context_create(device, &ctx), TILE_OK);
    int BK = 32, k = nkb * BK, sa = k + 16, sb = (n + 15) / 16 * 16 + 16;
    size_t na = (size_t)m * sa, nb = (size_t)pool_blocks * BK * sb, nc = (size_t)m * n;
    uint16_t *ha = malloc(na * 2), *hb = malloc(nb * 2);
    int *va = malloc(na * sizeof *va), *vb = malloc(nb * sizeof *vb), *tab = malloc((size_t)nkb * 4);
    float *out = malloc(nc * 4);
    cr_assert(ha && hb && va && vb && tab && out);
    for (size_t i = 0; i < na; i++) va[i] = irand(9) - 4, ha[i] = f16_of(va[i]);
    for (size_t i = 0; i < nb; i++) vb[i] = irand(9) - 4, hb[i] = f16_of(vb[i]);
    for (int i = 0; i < nkb; i++) tab[i] = irand(pool_blocks);
    tile_devptr da, db, dt, dc;
    cr_assert_eq(tile_malloc(ctx, na * 2, &da), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, nb * 2, &db), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, (size_t)nkb * 4, &dt), TILE_OK); /* exactly nkb entries */
    cr_assert_eq(tile_malloc(ctx, nc * 4, &dc), TILE_OK);
    tile_memcpy_htod(ctx, da, ha, na * 2);
    tile_memcpy_htod(ctx, db, hb, nb * 2);
    tile_memcpy_htod(ctx, dt, tab, (size_t)nkb * 4);
    tile_memset(ctx, dc, 0xFF, nc * 4);
    tile_module *mod;
    o.arch = NULL;
    cr_assert_eq(tile_module_load_source_ex(ctx, "paged.tile", src, &o, &mod), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *kern;
    cr_assert_eq(tile_module_get_kernel(mod, "paged_mm", &kern), TILE_OK);
    int32_t m32 = m, n32 = n, nkb32 = nkb, sa32 = sa, sb32 = sb;
    void *args[] = {&da, &db, &dt, &dc, &m32, &n32, &nkb32, &sa32, &sb32};
    tile_dim3 grid = {(unsigned)(((m + 63) / 64) * ((n + 63) / 64)), 1, 1};
    cr_assert_eq(tile_launch(kern, grid, args, NULL), TILE_OK, "%s: %s", device, tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, out, dc, nc * 4), TILE_OK);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double want = 0;
            for (int kk = 0; kk < k; kk++)
                want += (double)va[(size_t)i * sa + kk] * vb[((size_t)tab[kk / BK] * BK + kk % BK) * sb + j];
            float got = out[(size_t)i * n + j];
            cr_assert(got == want, "%s m %d n %d blocks %d: (%d, %d) = %g, want %g (seed %llu)", device, m, n, nkb, i, j, got, want,
                      (unsigned long long)seed);
        }
    tile_module_unload(mod);
    tile_context_destroy(ctx);
    free(ha), free(hb), free(va), free(vb), free(tab), free(out);
}

Test(pipeline, block_table_scalar_index, .timeout = 600) {
    seed_rng();
    for (int t = 0; t < 2; t++) {
        paged_case(targets[t].device, targets[t].arch, 70, 80, 7, 11, false);
        paged_case(targets[t].device, targets[t].arch, 20, 48, 1, 3, false); /* one block: fewer than the stages */
    }
    paged_case("emu:sm_90a", "sm_90a", 70, 80, 7, 11, true);
    paged_case("emu:sm_90a", "sm_90a", 20, 48, 2, 3, true);
}

/* Plain loads (step 1c): loops without a dot whose loads are streamed through cp.async stages and read
 * back into their registers.  Row r of x (m x n, row stride `stride`), w of n:
 *   s[r] = sum over the column blocks of x[r][c] (0 past n) + w[c] (2.5 past n: a nonzero `other`);
 *   y[r][c] = x[r][c] * w[c] (a loop storing through another pointer: still pipelined);
 *   t[r] = sum over rows r .. r+R-1 (< m) and column blocks of x (-1 where masked off), a rank-2 tile (on
 *   sm_90a 8 rows of 256 bytes: a tensor map's copies). */
static char *plain_src(int stages) {
    char *out = malloc(2048);
    cr_assert(out);
    snprintf(out, 2048,
             "@num_warps(4)\n"
             "kernel plain(x: *f32, w: *f32, y: *f32, s: *f32, t: *f32, m: i32, n: i32, stride: i32,\n"
             "             const BLOCK: i32 = 64, const R: i32 = 8) {\n"
             "    let row = program_id(0);\n"
             "    let cols = arange(0, BLOCK);\n"
             "    let acc = zeros([BLOCK], f32);\n"
             "    for off in range(0, n, BLOCK, num_stages=%d) {\n"
             "        let c = off + cols;\n"
             "        acc += load(x + row * stride + c, c < n, 0.0) + load(w + c, c < n, 2.5);\n"
             "    }\n"
             "    store(s + row, sum(acc, axis=0));\n"
             "    for off in range(0, n, BLOCK, num_stages=%d) {\n"
             "        let c = off + cols;\n"
             "        let k = c < n;\n"
             "        store(y + row * stride + c, load(x + row * stride + c, k, 0.0) * load(w + c, k, 0.0), k);\n"
             "    }\n"
             "    let rr = row + arange(0, R);\n"
             "    let acc2 = zeros([R, BLOCK], f32);\n"
             "    for off in range(0, n, BLOCK, num_stages=%d) {\n"
             "        let c = off + cols;\n"
             "        acc2 += load(x + rr[:, None] * stride + c[None, :], (rr[:, None] < m) && (c[None, :] < n), -1.0);\n"
             "    }\n"
             "    store(t + row, sum(sum(acc2, axis=1), axis=0));\n"
             "}\n",
             stages, stages, stages);
    return out;
}

/* x[r][c + BLOCK] = x[r][c] + 1, block after block: each iteration reads what the one before wrote through
 * the same pointer, so its load must not be issued ahead (not pipelined) */
static const char carry_src[] = "@num_warps(4)\n"
                                "kernel carry(x: *f32, n: i32, stride: i32, const BLOCK: i32 = 64) {\n"
                                "    let c0 = arange(0, BLOCK);\n"
                                "    for off in range(0, n - BLOCK, BLOCK, num_stages=3) {\n"
                                "        let c = off + c0;\n"
                                "        let v = load(x + program_id(0) * stride + c, c + BLOCK < n, 0.0);\n"
                                "        store(x + program_id(0) * stride + c + BLOCK, v + 1.0, c + BLOCK < n);\n"
                                "    }\n"
                                "}\n";

static void plain_case(int stages, const char *device, const char *arch, int m, int n) {
    static const char *const pspecs[] = {"stride=16", NULL};
    char *src = plain_src(stages);
    tile_compile_options o = {.size = sizeof o, .arch = arch, .specialize = pspecs};
    tile_compiled cc;
    cr_assert_eq(tile_compile_source("plain.tile", src, &o, &cc), TILE_OK, "%s", cc.diagnostics);
    cr_expect(strstr(cc.ptx, "cp.async.") && strstr(cc.ptx, "cp.async.wait_group"), "%s stages %d: plain loads not pipelined", arch,
              stages);
    cr_expect(!strstr(cc.ptx, "ld.global"), "%s stages %d: a load left in registers", arch, stages);
    cr_expect_eq(strstr(cc.ptx, "cp.async.bulk.tensor") != NULL, strcmp(arch, "sm_90a") == 0, "%s stages %d: the rank-2 tile %s", arch,
                 stages, strcmp(arch, "sm_90a") ? "through a tensor map" : "not through a tensor map");
    tile_compiled_free(&cc);
    tile_context *ctx;
    cr_assert_eq(tile_context_create(device, &ctx), TILE_OK);
    int stride = (n + 15) / 16 * 16 + 16, R = 8, BLOCK = 64;
    size_t nx = (size_t)m * stride;
    float *hx = malloc(nx * 4), *hw = malloc((size_t)n * 4), *hy = malloc(nx * 4), *hs = malloc((size_t)m * 4),
          *ht = malloc((size_t)m * 4);
    cr_assert(hx && hw && hy && hs && ht);
    for (size_t i = 0; i < nx; i++) hx[i] = (float)(irand(17) - 8); /* small integers: every sum exact */
    for (int i = 0; i < n; i++) hw[i] = (float)(irand(9) - 4);
    tile_devptr dx, dw, dy, ds, dt;
    cr_assert_eq(tile_malloc(ctx, nx * 4, &dx), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, (size_t)n * 4, &dw), TILE_OK); /* exactly n: a copy past it is a memcheck error */
    cr_assert_eq(tile_malloc(ctx, nx * 4, &dy), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, (size_t)m * 4, &ds), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, (size_t)m * 4, &dt), TILE_OK);
    tile_memcpy_htod(ctx, dx, hx, nx * 4);
    tile_memcpy_htod(ctx, dw, hw, (size_t)n * 4);
    tile_memset(ctx, dy, 0xFF, nx * 4); /* NaN */
    tile_memset(ctx, ds, 0xFF, (size_t)m * 4);
    tile_memset(ctx, dt, 0xFF, (size_t)m * 4);
    tile_module *mod;
    o.arch = NULL;
    cr_assert_eq(tile_module_load_source_ex(ctx, "plain.tile", src, &o, &mod), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *kern;
    cr_assert_eq(tile_module_get_kernel(mod, "plain", &kern), TILE_OK);
    int32_t m32 = m, n32 = n, st32 = stride;
    void *args[] = {&dx, &dw, &dy, &ds, &dt, &m32, &n32, &st32};
    cr_assert_eq(tile_launch(kern, (tile_dim3){(unsigned)m, 1, 1}, args, NULL), TILE_OK, "%s: %s", device, tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, hy, dy, nx * 4), TILE_OK);
    cr_assert_eq(tile_memcpy_dtoh(ctx, hs, ds, (size_t)m * 4), TILE_OK);
    cr_assert_eq(tile_memcpy_dtoh(ctx, ht, dt, (size_t)m * 4), TILE_OK);
    int lanes = (n + BLOCK - 1) / BLOCK * BLOCK; /* columns the loops cover */
    for (int r = 0; r < m; r++) {
        double s = 2.5 * (lanes - n), t = 0;
        for (int c = 0; c < n; c++) {
            s += (double)hx[(size_t)r * stride + c] + hw[c];
            double y = (double)hx[(size_t)r * stride + c] * hw[c];
            cr_assert(hy[(size_t)r * stride + c] == y, "%s stages %d: y[%d][%d] = %g, want %g (seed %llu)", device, stages, r, c,
                      hy[(size_t)r * stride + c], y, (unsigned long long)seed);
        }
        for (int q = r; q < r + R; q++)
            for (int c = 0; c < lanes; c++) t += q < m && c < n ? (double)hx[(size_t)q * stride + c] : -1.0;
        cr_assert(hs[r] == s, "%s stages %d m %d n %d: s[%d] = %g, want %g (seed %llu)", device, stages, m, n, r, hs[r], s,
                  (unsigned long long)seed);
        cr_assert(ht[r] == t, "%s stages %d m %d n %d: t[%d] = %g, want %g (seed %llu)", device, stages, m, n, r, ht[r], t,
                  (unsigned long long)seed);
    }
    tile_module_unload(mod);
    tile_context_destroy(ctx);
    free(hx), free(hw), free(hy), free(hs), free(ht), free(src);
}

/* the kernel's num_stages alone leaves a dot-free loop's loads as written */
static const char unasked_src[] = "@num_warps(4)\n@num_stages(3)\n"
                                  "kernel unasked(x: *f32, s: *f32, n: i32, const BLOCK: i32 = 64) {\n"
                                  "    let acc = zeros([BLOCK], f32);\n"
                                  "    for off in range(0, n, BLOCK) {\n"
                                  "        acc += load(x + off + arange(0, BLOCK), off + arange(0, BLOCK) < n, 0.0);\n"
                                  "    }\n"
                                  "    store(s, sum(acc, axis=0));\n"
                                  "}\n";

Test(pipeline, plain_loads, .timeout = 600) {
    seed_rng();
    tile_compile_options o = {.size = sizeof o, .arch = "sm_80"};
    tile_compiled cc;
    cr_assert_eq(tile_compile_source("unasked.tile", unasked_src, &o, &cc), TILE_OK, "%s", cc.diagnostics);
    cr_expect(!strstr(cc.ptx, "cp.async") && strstr(cc.ptx, "ld.global"), "a loop without its own num_stages was pipelined");
    tile_compiled_free(&cc);
    /* nor one asked to unroll (LLVM unrolls no loop with a barrier) */
    char *unroll = strdup(unasked_src);
    cr_assert(unroll);
    char *at = strstr(unroll, "BLOCK) {");
    cr_assert(at);
    char text[2048];
    snprintf(text, sizeof text, "%.*sBLOCK, num_stages=3, loop_unroll_factor=2%s", (int)(at - unroll), unroll, at + 5);
    free(unroll);
    cr_assert_eq(tile_compile_source("unroll.tile", text, &o, &cc), TILE_OK, "%s", cc.diagnostics);
    cr_expect(!strstr(cc.ptx, "cp.async") && strstr(cc.ptx, "ld.global"), "a loop asked to unroll was pipelined:\n%s", text);
    tile_compiled_free(&cc);
    for (int t = 0; t < 2; t++)
        for (int stages = 2; stages <= 4; stages++) plain_case(stages, targets[t].device, targets[t].arch, 5, stages == 3 ? 40 : 333);
}

Test(pipeline, plain_load_after_its_store_is_not_pipelined, .timeout = 600) {
    seed_rng();
    for (int t = 0; t < 2; t++) {
        tile_compile_options o = {.size = sizeof o, .arch = targets[t].arch};
        tile_compiled cc;
        cr_assert_eq(tile_compile_source("carry.tile", carry_src, &o, &cc), TILE_OK, "%s", cc.diagnostics);
        cr_expect(!strstr(cc.ptx, "cp.async"), "%s: a load after a store through its pointer was pipelined", targets[t].arch);
        tile_compiled_free(&cc);
        tile_context *ctx;
        cr_assert_eq(tile_context_create(targets[t].device, &ctx), TILE_OK);
        int m = 3, n = 300, stride = 304;
        size_t nx = (size_t)m * stride;
        float *hx = malloc(nx * 4), *out = malloc(nx * 4);
        cr_assert(hx && out);
        for (size_t i = 0; i < nx; i++) hx[i] = (float)(irand(17) - 8);
        tile_devptr dx;
        cr_assert_eq(tile_malloc(ctx, nx * 4, &dx), TILE_OK);
        tile_memcpy_htod(ctx, dx, hx, nx * 4);
        tile_module *mod;
        o.arch = NULL;
        cr_assert_eq(tile_module_load_source_ex(ctx, "carry.tile", carry_src, &o, &mod), TILE_OK, "%s", tile_last_error(ctx));
        tile_kernel *kern;
        cr_assert_eq(tile_module_get_kernel(mod, "carry", &kern), TILE_OK);
        int32_t n32 = n, st32 = stride;
        void *args[] = {&dx, &n32, &st32};
        cr_assert_eq(tile_launch(kern, (tile_dim3){(unsigned)m, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
        cr_assert_eq(tile_memcpy_dtoh(ctx, out, dx, nx * 4), TILE_OK);
        for (int r = 0; r < m; r++)
            for (int c = 0; c < stride; c++) {
                double want = c < n ? (double)hx[(size_t)r * stride + c % 64] + c / 64 : hx[(size_t)r * stride + c];
                cr_assert(out[(size_t)r * stride + c] == want, "%s: x[%d][%d] = %g, want %g (seed %llu)", targets[t].device, r, c,
                          out[(size_t)r * stride + c], want, (unsigned long long)seed);
            }
        tile_module_unload(mod);
        tile_context_destroy(ctx);
        free(hx), free(out);
    }
}

/* A body whose values are each used twice over (`o = o + o`, forty times): the pass's walks over an address's
 * slice (does it vary with the loop, is it pure, which index loads) visit each value once; walking every path
 * took 2^40 steps (the compile did not end).  The address that varies is pipelined, the one that does not is not. */
Test(pipeline, address_slices_walked_once, .timeout = 600) {
    for (int varies = 0; varies < 2; varies++) {
        char src[2048];
        int len = snprintf(src, sizeof src,
                           "kernel deep(x: *f32, y: *f32, n: i32) {\n    let acc = zeros([64], f32);\n"
                           "    for i in range(0, n, 1, num_stages=3) {\n        let o = arange(0, 64)%s;\n",
                           varies ? " + i" : "");
        for (int k = 0; k < 40; k++) len += snprintf(src + len, sizeof src - (size_t)len, "        o = o + o;\n");
        snprintf(src + len, sizeof src - (size_t)len, "        acc += load(x + (o & 255));\n    }\n    store(y + arange(0, 64), acc);\n}\n");
        tile_compile_options o = {.size = sizeof o, .arch = "sm_80"};
        tile_compiled cc;
        cr_assert_eq(tile_compile_source("deep.tile", src, &o, &cc), TILE_OK, "%s", cc.diagnostics);
        cr_expect(!strstr(cc.ptx, "cp.async") == !varies, "an address that %s with the loop was %s", varies ? "varies" : "does not vary",
                  varies ? "not pipelined" : "pipelined");
        tile_compiled_free(&cc);
    }
    /* the same on sm_90a through a dot's operand rows (lower/tma.c reads each address's form for a tensor map:
     * there a bound on the walk, 2^40 steps before) */
    char src[2048];
    int len = snprintf(src, sizeof src, "kernel deep(x: *f16, y: *f32, n: i32, s: i32) {\n    let acc = zeros([64, 64], f32);\n"
                                        "    for i in range(0, n, 64) {\n        let r = arange(0, 64) + i;\n");
    for (int k = 0; k < 40; k++) len += snprintf(src + len, sizeof src - (size_t)len, "        r = r + r;\n");
    snprintf(src + len, sizeof src - (size_t)len,
             "        let a = load(x + r[:, None] * s + arange(0, 64)[None, :]);\n"
             "        let b = load(x + arange(0, 64)[:, None] * s + arange(0, 64)[None, :] + i);\n"
             "        acc = dot(a, b, acc);\n    }\n    store(y + arange(0, 64)[:, None] * 64 + arange(0, 64)[None, :], acc);\n}\n");
    tile_compile_options o = {.size = sizeof o, .arch = "sm_90a"};
    tile_compiled cc;
    cr_assert_eq(tile_compile_source("deep.tile", src, &o, &cc), TILE_OK, "%s", cc.diagnostics);
    cr_expect(strstr(cc.ptx, "wgmma.mma_async"), "the dot is no wgmma");
    tile_compiled_free(&cc);
}
