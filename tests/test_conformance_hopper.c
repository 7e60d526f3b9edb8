/* test_conformance_hopper.c - the emulator runs what nvcc emits for sm_90a (tests/conformance/hopper.cu,
 * compiled at test time, -O3 and -G; see test_conformance.c for the other topics):
 * CUTLASS-style TMA + mbarrier ring + wgmma with a producer and a consumer warpgroup (labels repeated in
 * inlined { } blocks), wgmma with A in registers, stmatrix, cuda::barrier / cuda::memcpy_async and
 * cuda::ptx bulk and tensor copies, a one-CTA cluster through cooperative groups, clusters of 4 (a
 * distributed-shared-memory histogram) and of 2 (TMA multicast, remote mbarrier arrives), split-K style
 * bulk and tensor reductions: exact.  At -G nvcc reads the accumulators before wgmma.wait_group retires
 * them (undefined in the PTX ISA; ptxas serializes the wgmmas): nothing is reported, the emulator ends the
 * wgmma's group at the read as ptxas's injected wait does (docs/emulator.md, "wgmma asynchrony"), and the
 * results are those of -O3.  Racecheck is on: nvcc's and CUTLASS's mbarrier waits, barriers and proxy fences satisfy the
 * emulator's async-proxy rules (docs/emulator.md).  Without nvcc every test is skipped, and says so. */
#include "test_conformance.h"
#include "support/hostfloat.h"

/* ==== hopper.cu (sm_90a only) ==== */
static void hopper_run(const Variant *v);
Test(hopper, sm_90a_O3) { hopper_run(&V90); }
Test(hopper, sm_90a_G) { hopper_run(&V90G); }

static tile_devptr dev_map(Conf *c, void *map, tile_dtype dt, tile_devptr g, uint64_t d0, uint64_t d1, uint64_t pitch,
                           uint32_t b0, uint32_t b1, tile_tensor_swizzle swz) {
    uint64_t dims[2] = {d0, d1}, strides[1] = {pitch};
    uint32_t box[2] = {b0, b1};
    cr_assert_eq(tile_tensor_map_encode(c->ctx, map, dt, 2, g, dims, strides, box, NULL, swz), TILE_OK, "[%s] %s", c->name,
                 tile_last_error(c->ctx));
    return g;
}

/* C = A B^T through TMA (128B swizzle) and wgmma in a producer/consumer pipeline, at sizes that are not
 * multiples of the 64x64x64 tile (the tensor maps fill the edges with zeros) */
static void hopper_gemm(Conf *c) {
    enum { M = 100, N = 90, K = 200 };
    Rng rng = rng_seed(90);
    static uint16_t A[M * K], B[N * K];
    static int ai[M * K], bi[N * K];
    static float C[M * N];
    for (int i = 0; i < M * K; i++) ai[i] = (int)(rng_next(&rng) % 9) - 4, A[i] = f32_to_f16((float)ai[i]);
    for (int i = 0; i < N * K; i++) bi[i] = (int)(rng_next(&rng) % 9) - 4, B[i] = f32_to_f16((float)bi[i]);
    tile_devptr dA = dev_in(c, A, sizeof A), dB = dev_in(c, B, sizeof B), dC = dev_in(c, NULL, sizeof C);
    _Alignas(64) uint8_t ta[128], tb[128];
    dev_map(c, ta, TILE_F16, dA, K, M, K * 2, 64, 64, TILE_SWIZZLE_128B);
    dev_map(c, tb, TILE_F16, dB, K, N, K * 2, 64, 64, TILE_SWIZZLE_128B);
    int m = M, n = N, k = K;
    tile_kernel *kern;
    cr_assert_eq(tile_module_get_kernel(c->m, "tma_wgmma_gemm", &kern), TILE_OK, "[%s] %s", c->name, tile_last_error(c->ctx));
    tile_status st = tile_launch_raw(kern, (tile_dim3){(M + 63) / 64, (N + 63) / 64, 1}, (tile_dim3){256, 1, 1},
                                     2 * 2 * 64 * 64 * 2 + 1024, (void *[]){ta, tb, &dC, &m, &n, &k}, NULL);
    cr_assert_eq(st, TILE_OK, "[%s] launch of tma_wgmma_gemm: %s", c->name, tile_last_error(c->ctx));
    dev_out(c, C, dC, sizeof C);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            int want = 0;
            for (int q = 0; q < K; q++) want += ai[i * K + q] * bi[j * K + q];
            cr_assert_eq(C[i * N + j], (float)want, "[%s] C[%d][%d]: got %g, want %d", c->name, i, j, C[i * N + j], want);
        }
}

/* C = A B (64x16 by 16x64, bf16; A from registers, B MN-major unswizzled), out through stmatrix as f16 */
static void hopper_rs(Conf *c) {
    Rng rng = rng_seed(91);
    uint16_t A[64 * 16], B[16 * 64], C[64 * 64];
    int ai[64 * 16], bi[16 * 64];
    for (int i = 0; i < 64 * 16; i++) ai[i] = (int)(rng_next(&rng) % 9) - 4, A[i] = (uint16_t)(f2u((float)ai[i]) >> 16);
    for (int i = 0; i < 16 * 64; i++) bi[i] = (int)(rng_next(&rng) % 9) - 4, B[i] = (uint16_t)(f2u((float)bi[i]) >> 16);
    tile_devptr dA = dev_in(c, A, sizeof A), dB = dev_in(c, B, sizeof B), dC = dev_in(c, NULL, sizeof C);
    run(c, "wgmma_rs_stmatrix", 1, 128, 0, (void *[]){&dA, &dB, &dC});
    dev_out(c, C, dC, sizeof C);
    for (int i = 0; i < 64; i++)
        for (int j = 0; j < 64; j++) {
            int want = 0;
            for (int q = 0; q < 16; q++) want += ai[i * 16 + q] * bi[q * 64 + j];
            cr_assert_eq(C[i * 64 + j], f32_to_f16((float)want), "[%s] C[%d][%d]: got 0x%04x, want %d", c->name, i, j, C[i * 64 + j],
                         want);
        }
}

/* out = 2 in + 1 through cuda::memcpy_async (bulk copy, mbarrier) and a cuda::ptx bulk store */
static void hopper_bulk(Conf *c) {
    enum { BLOCKS = 3, NB = 1000 };
    Rng rng = rng_seed(92);
    static float in[BLOCKS * NB], out[BLOCKS * NB];
    for (int i = 0; i < BLOCKS * NB; i++) in[i] = (float)rng_uniform(&rng, -100, 100);
    tile_devptr di = dev_in(c, in, sizeof in), dout = dev_in(c, NULL, sizeof out);
    int n = NB;
    run(c, "bulk_scale", BLOCKS, 128, 0, (void *[]){&di, &dout, &n});
    dev_out(c, out, dout, sizeof out);
    for (int i = 0; i < BLOCKS * NB; i++)
        cr_assert_eq(f2u(out[i]), f2u(2.f * in[i] + 1.f), "[%s] out[%d]: got %g, want %g", c->name, i, out[i], 2.f * in[i] + 1.f);
}

/* out = in + 1 through TMA loads and stores of 8x32 boxes over a 37x70 tensor (rows 72 floats apart):
 * the edge boxes are clipped, the two padding floats of each row are never written */
static void hopper_tma_store(Conf *c) {
    enum { ROWS = 37, COLS = 70, PITCH = 72 };
    Rng rng = rng_seed(93);
    static float in[ROWS * PITCH], out[ROWS * PITCH];
    for (int i = 0; i < ROWS * PITCH; i++) in[i] = (float)((int)(rng_next(&rng) % 2001) - 1000);
    tile_devptr di = dev_in(c, in, sizeof in), dout = dev_in(c, NULL, sizeof out);
    _Alignas(64) uint8_t tin[128], tout[128];
    dev_map(c, tin, TILE_F32, di, COLS, ROWS, PITCH * 4, 32, 8, TILE_SWIZZLE_NONE);
    dev_map(c, tout, TILE_F32, dout, COLS, ROWS, PITCH * 4, 32, 8, TILE_SWIZZLE_NONE);
    tile_kernel *kern;
    cr_assert_eq(tile_module_get_kernel(c->m, "tma_add_one", &kern), TILE_OK, "[%s] %s", c->name, tile_last_error(c->ctx));
    tile_status st = tile_launch_raw(kern, (tile_dim3){(COLS + 31) / 32, (ROWS + 7) / 8, 1}, (tile_dim3){64, 1, 1}, 0,
                                     (void *[]){tin, tout}, NULL);
    cr_assert_eq(st, TILE_OK, "[%s] launch of tma_add_one: %s", c->name, tile_last_error(c->ctx));
    dev_out(c, out, dout, sizeof out);
    for (int r = 0; r < ROWS; r++)
        for (int q = 0; q < PITCH; q++) {
            uint32_t got = f2u(out[r * PITCH + q]), want = q < COLS ? f2u(in[r * PITCH + q] + 1.f) : 0xCDCDCDCDu;
            cr_assert_eq(got, want, "[%s] out[%d][%d]: got 0x%08x, want 0x%08x", c->name, r, q, got, want);
        }
}

/* A one-CTA cluster: rank 0 of 1, map_shared_rank, cluster.sync(), st.async / red.async on an mbarrier */
static void hopper_cluster(Conf *c) {
    enum { BLOCKS = 3 };
    int out[BLOCKS * 320];
    tile_devptr dout = dev_in(c, NULL, sizeof out);
    run(c, "cluster_one", BLOCKS, 64, 0, (void *[]){&dout});
    dev_out(c, out, dout, sizeof out);
    for (int b = 0; b < BLOCKS; b++)
        for (int t = 0; t < 64; t++) {
            const int *o = out + b * 320;
            /* slot t: st.async of 63 - t; 1000 + b; max(t, 40) */
            int w = (63 - t) + 100 * (1000 + b) + 1000000 * (t > 40 ? t : 40);
            cr_assert_eq(o[256 + t], w, "[%s] block %d: st.async/red.async slot %d: got %d, want %d", c->name, b, t, o[256 + t], w);
            cr_assert_eq(o[t], (63 - t) * 3 + b, "[%s] block %d: peer value %d: got %d", c->name, b, t, o[t]);
            cr_assert_eq(o[64 + t], 0, "[%s] block %d thread %d: block_rank %d", c->name, b, t, o[64 + t]);
            cr_assert_eq(o[128 + t], 1, "[%s] block %d thread %d: num_blocks %d", c->name, b, t, o[128 + t]);
            cr_assert_eq(o[192 + t], 0, "[%s] block %d thread %d: block_index %d", c->name, b, t, o[192 + t]);
        }
}

/* Clusters of 4: the distributed-shared-memory histogram of 1000 values over 12 blocks of 64 threads (each
 * cluster counts the values its blocks take), each thread's read of its right neighbour's array; clusters
 * of 2: a 32x8 f32 tile of a 32x20 matrix multicast by TMA to both CTAs (cluster 2's tile runs off the
 * bottom: zeros), each adding its rank. */
static void hopper_clusters(Conf *c) {
    enum { N = 1000, BLOCKS = 12, T = 64 };
    Rng rng = rng_seed(95);
    static int in[N], bins[BLOCKS / 4 * 64], peer[BLOCKS * T];
    for (int i = 0; i < N; i++) in[i] = (int)(rng_next(&rng) % 100000);
    tile_devptr din = dev_in(c, in, sizeof in), dbins = dev_in(c, NULL, sizeof bins), dpeer = dev_in(c, NULL, sizeof peer);
    cr_assert_eq(tile_memset(c->ctx, dbins, 0, sizeof bins), TILE_OK);
    int n = N;
    run(c, "cluster_hist", BLOCKS, T, 0, (void *[]){&din, &n, &dbins, &dpeer});
    dev_out(c, bins, dbins, sizeof bins);
    dev_out(c, peer, dpeer, sizeof peer);
    int want[BLOCKS / 4 * 64] = {0};
    for (int i = 0; i < N; i++) want[(i / T) % BLOCKS / 4 * 64 + (in[i] & 63)]++;
    for (int i = 0; i < BLOCKS / 4 * 64; i++)
        cr_assert_eq(bins[i], want[i], "[%s] cluster %d bin %d: got %d, want %d", c->name, i / 64, i % 64, bins[i], want[i]);
    for (int b = 0; b < BLOCKS; b++)
        for (int t = 0; t < T; t++) {
            int w = (b / 4 * 4 + (b % 4 + 1) % 4) * 100 + (63 - t);
            cr_assert_eq(peer[b * T + t], w, "[%s] block %d thread %d read %d, want %d", c->name, b, t, peer[b * T + t], w);
        }
    enum { ROWS = 20, MB = 6 };
    static float a[ROWS * 32], out[MB * 256];
    for (int i = 0; i < ROWS * 32; i++) a[i] = (float)((int)(rng_next(&rng) % 2001) - 1000) / 4;
    tile_devptr da = dev_in(c, a, sizeof a), dout = dev_in(c, NULL, sizeof out);
    _Alignas(64) uint8_t map[128];
    dev_map(c, map, TILE_F32, da, 32, ROWS, 128, 32, 8, TILE_SWIZZLE_NONE);
    run(c, "tma_multicast", MB, 64, 0, (void *[]){map, &dout});
    dev_out(c, out, dout, sizeof out);
    for (int b = 0; b < MB; b++)
        for (int i = 0; i < 256; i++) {
            int row = b / 2 * 8 + i / 32;
            float w = (row < ROWS ? a[row * 32 + i % 32] : 0.0f) + (float)(b % 2);
            cr_assert_eq(out[b * 256 + i], w, "[%s] block %d element %d: got %g, want %g", c->name, b, i, out[b * 256 + i], w);
        }
}

/* Reductions into global memory: three blocks add their tiles through a TMA reduce into a 5x20 f32
 * tensor (rows 24 floats apart: the box of 8x32 is clipped, the padding untouched), add them into a flat
 * vector and take the min of an i32 vector (blocks run one after another on the emulator; the sums are
 * exact in any order) */
static void hopper_reduce(Conf *c) {
    enum { BLOCKS = 3, ROWS = 5, COLS = 20, PITCH = 24 };
    Rng rng = rng_seed(94);
    static float in[256], acc[ROWS * PITCH], flat[256];
    static int imin[256];
    for (int i = 0; i < 256; i++) in[i] = (float)((int)(rng_next(&rng) % 201) - 100);
    for (int i = 0; i < ROWS * PITCH; i++) acc[i] = (float)((int)(rng_next(&rng) % 21) - 10);
    for (int i = 0; i < 256; i++) flat[i] = (float)i, imin[i] = (int)(rng_next(&rng) % 201) - 100;
    tile_devptr di = dev_in(c, in, sizeof in), dacc = dev_in(c, acc, sizeof acc), dflat = dev_in(c, flat, sizeof flat),
                dmin = dev_in(c, imin, sizeof imin);
    _Alignas(64) uint8_t tacc[128];
    dev_map(c, tacc, TILE_F32, dacc, COLS, ROWS, PITCH * 4, 32, 8, TILE_SWIZZLE_NONE);
    tile_kernel *kern;
    cr_assert_eq(tile_module_get_kernel(c->m, "bulk_reduce", &kern), TILE_OK, "[%s] %s", c->name, tile_last_error(c->ctx));
    tile_status st = tile_launch_raw(kern, (tile_dim3){BLOCKS, 1, 1}, (tile_dim3){64, 1, 1}, 0, (void *[]){tacc, &di, &dflat, &dmin}, NULL);
    cr_assert_eq(st, TILE_OK, "[%s] launch of bulk_reduce: %s", c->name, tile_last_error(c->ctx));
    float acc2[ROWS * PITCH], flat2[256];
    int imin2[256];
    dev_out(c, acc2, dacc, sizeof acc2);
    dev_out(c, flat2, dflat, sizeof flat2);
    dev_out(c, imin2, dmin, sizeof imin2);
    for (int r = 0; r < ROWS; r++)
        for (int q = 0; q < PITCH; q++) {
            float want = acc[r * PITCH + q];
            if (q < COLS) want += BLOCKS * in[r * 32 + q] + (0 + 1 + 2);
            cr_assert_eq(acc2[r * PITCH + q], want, "[%s] acc[%d][%d]: got %g, want %g", c->name, r, q, acc2[r * PITCH + q], want);
        }
    for (int i = 0; i < 256; i++) {
        cr_assert_eq(flat2[i], flat[i] + BLOCKS * in[i] + 3, "[%s] flat[%d]: got %g", c->name, i, flat2[i]);
        int want = imin[i] < (int)in[i] - (BLOCKS - 1) ? imin[i] : (int)in[i] - (BLOCKS - 1);
        cr_assert_eq(imin2[i], want, "[%s] min[%d]: got %d, want %d", c->name, i, imin2[i], want);
    }
}

static void hopper_run(const Variant *v) {
    Conf c;
    conf_open(&c, "hopper", v);
    /* nvcc -G stores an asm statement's outputs as soon as it ends: the wgmma's accumulators are read
     * before wgmma.wait_group retires them (undefined in the PTX ISA), and ptxas serializes the wgmmas
     * for it (info C7519/C7520), as the emulator does: the same results as -O3 */
    hopper_gemm(&c);
    hopper_rs(&c);
    hopper_bulk(&c);
    hopper_tma_store(&c);
    hopper_cluster(&c);
    hopper_clusters(&c);
    hopper_reduce(&c);
    conf_close(&c);
}
