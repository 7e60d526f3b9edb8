/* compare_devices.c - every shipped kernel on two devices, results compared.
 *
 *   build/bench/compare_devices [--device DEVICE] [--arch TARGET] [--seed N] [--quiet]
 *
 * --device cuda (the default when a GPU is present): each kernel runs on the
 * GPU and on the emulator (racecheck on) from the same PTX and the same
 * inputs.  --device emu (no GPU needed): each kernel runs on two emulator
 * contexts, one host thread with racecheck against four host threads, which
 * checks that the emulator's result does not depend on how blocks are spread
 * over host threads.  The device string is taken whole (cuda:1, emu:sm_90a, emu:sms=8): both emulator runs
 * emulate the device it names.
 *
 * The cases: add, softmax, layernorm, rmsnorm, row_sum, matmul, transpose;
 * gemm for each type pair, with bias+gelu, split-K and f8 (e4m3, e5m2), and with
 * a transposed A (bf16; tf32 and e4m3 with B transposed too) specialized as
 * tile_gemm compiles it, so its cp.async-pipelined kernel;
 * attention forward (f16, bf16 causal); paged attention decode (f16 with
 * GQA; bf16 queries on an f8e4m3 cache, 3 tokens, in 3 splits; the merge
 * of the splits); MoE (the grouped router, the three alignment kernels, and
 * the gate_up and down expert GEMMs with f16 weights and with f8e4m3 weights
 * under 128 x 128 block scales).  The shapes are small and odd (sizes not
 * a multiple of the tile, several sequences of different lengths, padded
 * rows); the defines and specializations are those the launchers
 * (kernels/attention/attention.c, kernels/moe/moe.c) pick for sm_80 at
 * these shapes, whatever the --arch.
 *
 * How each case goes:
 *   1. compile the kernel once (tile_compile_file, the given arch);
 *   2. draw the inputs once from the seed: floats uniform in [-1, 1) (rounded
 *      to f16/bf16/f8 where the kernel takes those), i8 over its whole range;
 *      index tables, which must hold valid indices, are built on the host
 *      from the same stream by the case's host_fill (paged block tables from
 *      a random permutation of the physical blocks; MoE routing: random
 *      top-k experts laid out as kernels/moe/align.tile lays them out);
 *      outputs are poisoned (NaN, or 0x80000001 for i32) so an element one
 *      device writes and the other does not shows up; accumulated outputs
 *      (atomics) start at zero;
 *   3. on each device: upload, launch, synchronize, download every output;
 *   4. compare element by element.  Integer outputs must match bitwise.
 *      Float outputs must match bitwise where both devices must round the
 *      same way (pure data movement, one correctly rounded op, or two
 *      emulator runs without atomics); otherwise within atol + rtol * |x|
 *      (approximate instructions such as ex2.approx and rsqrt.approx,
 *      tensor-core accumulation order, and Hopper's f8 wgmma, which keeps
 *      fewer bits of its f32 sums; float atomics in any order).  Two
 *      NaNs are equal.
 * One row per case as it finishes, then the table again at the end, with
 * the emulator's speed on each kernel (executed thread-instructions per
 * second of device B, which runs on 4 host threads).  Exit
 * status 0 when every case matched, 1 otherwise. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support/hostfloat.h"
#include "include/tile/tile.h"
#include "runtime/device.h"
#include "tools/json.h"

static bool json; /* --json: one JSON object per kernel (the final table) and one for the summary */

typedef enum Dt { F32, F16, BF16, I8, I32, E4M3, E5M2 } Dt;
typedef enum Init {
    RAND,
    ZERO,
    POISON,
    HOST, /* written by the case's host_fill (index tables that must hold valid indices); zero before it */
} Init;

static const int dt_size[] = {4, 2, 2, 1, 4, 1, 1};
static const char *dt_name[] = {"f32", "f16", "bf16", "i8", "i32", "e4m3", "e5m2"};

typedef struct Buf {
    Dt dt;
    size_t n;
    Init init;
    bool out; /* downloaded and compared */
} Buf;

typedef struct Arg {
    char kind; /* 'b' buffer, 'i' i32, 'f' f32 */
    int buf;
    int32_t i;
    float f;
} Arg;

typedef enum Cmp {
    CMP_TOL,     /* within tolerance on any pair of devices */
    CMP_EXACT,   /* bitwise on any pair of devices */
    CMP_ATOMICS, /* float atomics: within tolerance even between two emulator runs */
} Cmp;

typedef struct Case {
    const char *label;
    const char *file;
    const char *kernel;
    const char *defines[12];
    Buf bufs[8];
    Arg args[32];
    unsigned grid[3];
    Cmp cmp;
    double atol, rtol;
    const char *specialize[16];            /* "ARG=16" where the launcher specializes (kernels/shipped.c) */
    void (*host_fill)(void *const host[8]); /* fills the HOST buffers, drawing from the seed */
} Case;

#define B(dt, n, init, out) {dt, (size_t)(n), init, out}
#define AB(b) {'b', b, 0, 0}
#define AI(v) {'i', 0, v, 0}
#define AF(v) {'f', 0, 0, v}

/* The gemm arguments: a, b, c, bias, m, n, k, sam, sak, sbk, sbn, scm, alpha,
 * beta; A m x k and B k x n row-major with padded leading dimensions. */
#define GEMM_ARGS(m, n, k) \
    {AB(0), AB(1), AB(2), AB(3), AI(m), AI(n), AI(k), AI((k) + 8), AI(1), AI((n) + 8), AI(1), AI((n) + 4), AF(1.0f), AF(0.0f)}
#define GEMM_BUFS(in, out, m, n, k, cinit) \
    {B(in, (size_t)(m) * ((k) + 8), RAND, false), B(in, (size_t)(k) * ((n) + 8), RAND, false), \
     B(out, (size_t)(m) * ((n) + 4), cinit, true), B(out, (n), RAND, false)}
#define GEMM_GRID(m, n) {(unsigned)((((m) + 127) / 128) * (((n) + 127) / 128)), 1, 1}
/* f8 GEMM: the above and the two scale pointers (unread at SCALE=0) */
#define GEMM_F8_ARGS(m, n, k) \
    {AB(0), AB(1), AB(2), AB(3), AI(m), AI(n), AI(k), AI((k) + 8), AI(1), AI((n) + 8), AI(1), AI((n) + 4), AF(1.0f), AF(0.0f), AB(4), AB(5)}
#define GEMM_F8_BUFS(in, m, n, k) \
    {B(in, (size_t)(m) * ((k) + 8), RAND, false), B(in, (size_t)(k) * ((n) + 8), RAND, false), \
     B(F32, (size_t)(m) * ((n) + 4), POISON, true), B(F32, (n), RAND, false), B(F32, 1, RAND, false), B(F32, 1, RAND, false)}

/* A transposed A as tile_gemm's trans_a passes it (A stored k x m: sam 1, sak its leading dimension), with B
 * k x n or, TB, n x k (a weight: sbk 1); m, n, k multiples of 16 but not of the tiles, every leading dimension a
 * multiple of 16, specialized as tile_gemm specializes such a call (GEMM_TA_SPEC): the cp.async-pipelined kernel,
 * A read back by ldmatrix.trans on mma.sync, and on sm_90a by wgmma's transpose bit (16-bit) or loaded from its
 * stage into the wgmma's A registers (tf32, f8). */
#define GT_M 144
#define GT_N 80
#define GT_K 176
#define GEMM_TA_ARGS(tb) \
    AB(0), AB(1), AB(2), AB(3), AI(GT_M), AI(GT_N), AI(GT_K), AI(1), AI(GT_M + 16), AI((tb) ? 1 : GT_N + 16), AI((tb) ? GT_K + 16 : 1), \
        AI(GT_N + 16), AF(1.0f), AF(0.0f)
#define GEMM_TA_BUFS(in, tb) \
    B(in, (size_t)GT_K * (GT_M + 16), RAND, false), B(in, (tb) ? (size_t)GT_N * (GT_K + 16) : (size_t)GT_K * (GT_N + 16), RAND, false), \
        B(F32, (size_t)GT_M * (GT_N + 16), POISON, true), B(F32, GT_N, RAND, false)
#define GEMM_TA_SPEC(tb) {"sam=1", "sak=16", (tb) ? "sbk=1" : "sbn=1", (tb) ? "sbn=16" : "sbk=16", "m=16", "n=16", "k=16", "scm=16", 0}

/* Attention forward, q k v o [1][S][H][D] (S 100, H 2, D 64), lse [1][H][S]: q, k, v, o, lse, cu_q, cu_k (unread
 * without VARLEN), seq_q, seq_k, heads_q, group, then the strides of q, k, v, o (batch, sequence, head) and of lse
 * (batch, head), scale, window_left, window_right. */
#define ATT_S 100
#define ATT_H 2
#define ATT_D 64
#define ATT_BUFS(dt) \
    {B(dt, ATT_S * ATT_H * ATT_D, RAND, false), B(dt, ATT_S * ATT_H * ATT_D, RAND, false), B(dt, ATT_S * ATT_H * ATT_D, RAND, false), \
     B(dt, ATT_S * ATT_H * ATT_D, POISON, true), B(F32, ATT_H * ATT_S, POISON, true), B(I32, 2, ZERO, false), B(I32, 2, ZERO, false)}
#define ATT_STRIDES AI(ATT_S * ATT_H * ATT_D), AI(ATT_H * ATT_D), AI(ATT_D)
#define ATT_ARGS \
    {AB(0), AB(1), AB(2), AB(3), AB(4), AB(5), AB(6), AI(ATT_S), AI(ATT_S), AI(ATT_H), AI(1), ATT_STRIDES, ATT_STRIDES, ATT_STRIDES, \
     ATT_STRIDES, AI(ATT_H * ATT_S), AI(ATT_S), AF(0.125f), AI(-1), AI(-1)}
#define ATT_GRID {(ATT_S + 63) / 64, ATT_H, 1}

/* ---- the seed's stream (inputs and host fills draw from it) ---- */

static uint64_t rng;
static uint64_t next_u64(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static float frand(void) { return (float)((double)(next_u64() >> 11) / 9007199254740992.0 * 2.0 - 1.0); }
static int rand_below(int n) { return (int)(next_u64() % (uint64_t)n); }

/* Paged attention decode (kernels/attention/paged_attention.tile) as tile_attention_decode_paged launches it
 * (kernels/attention/attention.c): q, k_cache, v_cache, o, o_part, lse_part, block_tables, context_lens,
 * num_tokens, group, heads_q, the strides of q (sequence, token, head), of K and V (block, slot, head) and of
 * o, the block table's row stride, scale [, v_scale]; grid (heads_kv, sequences, splits).  q and o are
 * [S][T][HQ][D], each cache [NB][BS][HK][D]; sequence s holds LENS[s] tokens in blocks drawn from a random
 * permutation of the NB physical blocks (host_fill), its table row padded with -1 (never read).  Buffers:
 * 0 block tables, 1 context lengths, then q, k, v, o (and o_part, lse_part with splits).
 * PA1: f16, decode (T 1), GQA 3 (6 query heads on 2), head_dim 80 (BLOCK_D 128, so BN 32), blocks of 16,
 * contexts 7, 45, 100.  PA2: bf16 queries on an f8e4m3 cache (_kv8), 3 tokens (causal among them), GQA 4,
 * head_dim 64, blocks of 32, contexts 3, 70, 161, in 3 splits of whole BN = 64 chunks (some empty). */
#define PA1_S 3
#define PA1_T 1
#define PA1_HQ 6
#define PA1_HK 2
#define PA1_D 80
#define PA1_BS 16
#define PA1_NB 16
#define PA1_SBT 7 /* cdiv(100, 16) */
#define PA1_LENS {7, 45, 100}
#define PA2_S 3
#define PA2_T 3
#define PA2_HQ 8
#define PA2_HK 2
#define PA2_D 64
#define PA2_BS 32
#define PA2_NB 12
#define PA2_SBT 6 /* cdiv(161, 32) */
#define PA2_LENS {3, 70, 161}
#define PA2_SPLITS 3
#define PA_QN(g) ((g##_S) * (g##_T) * (g##_HQ) * (g##_D))
#define PA_KVN(g) ((g##_NB) * (g##_BS) * (g##_HK) * (g##_D))
#define PA_PARTS(g) ((g##_S) * (g##_HQ) * (g##_T) * (g##_SPLITS)) /* o_part rows, lse_part entries */
#define PA_STRIDES(g) \
    AI((g##_T) * (g##_HQ) * (g##_D)), AI((g##_HQ) * (g##_D)), AI(g##_D) /* q's and o's */
#define PA_KV_STRIDES(g) AI((g##_BS) * (g##_HK) * (g##_D)), AI((g##_HK) * (g##_D)), AI(g##_D)
#define PA_ARGS(g, o_part, lse_part) \
    AB(2), AB(3), AB(4), AB(5), AB(o_part), AB(lse_part), AB(0), AB(1), AI(g##_T), AI((g##_HQ) / (g##_HK)), AI(g##_HQ), \
        PA_STRIDES(g), PA_KV_STRIDES(g), PA_KV_STRIDES(g), PA_STRIDES(g), AI(g##_SBT)
/* every stride is a multiple of 16 in both geometries (the table's row stride is not) */
#define PA_SPEC16 \
    {"sqs=16", "sqt=16", "sqh=16", "skb=16", "sks=16", "skh=16", "svb=16", "svs=16", "svh=16", "sos=16", "sot=16", "soh=16", 0}

typedef struct PagedGeom {
    int seqs, block_size, blocks, table_stride, lens[4];
} PagedGeom;

/* block_tables (host[0]) and context_lens (host[1]): each sequence's blocks taken in turn from one random
 * permutation of the physical blocks, so no two sequences share one and the order is scrambled. */
static void paged_fill(const PagedGeom *g, void *const host[8]) {
    int32_t *tables = host[0], *lens = host[1], perm[64];
    int need = 0;
    for (int s = 0; s < g->seqs; s++) need += (g->lens[s] + g->block_size - 1) / g->block_size;
    if (need > g->blocks || g->blocks > 64) {
        fprintf(stderr, "compare_devices: a paged geometry needs %d blocks of its %d\n", need, g->blocks);
        exit(2);
    }
    for (int i = 0; i < g->blocks; i++) perm[i] = i;
    for (int i = g->blocks - 1; i > 0; i--) {
        int j = rand_below(i + 1), t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
    int used = 0;
    for (int s = 0; s < g->seqs; s++) {
        lens[s] = g->lens[s];
        int nb = (g->lens[s] + g->block_size - 1) / g->block_size;
        for (int i = 0; i < g->table_stride; i++) tables[s * g->table_stride + i] = i < nb ? perm[used++] : -1;
    }
}
static void pa1_fill(void *const host[8]) { paged_fill(&(PagedGeom){PA1_S, PA1_BS, PA1_NB, PA1_SBT, PA1_LENS}, host); }
static void pa2_fill(void *const host[8]) { paged_fill(&(PagedGeom){PA2_S, PA2_BS, PA2_NB, PA2_SBT, PA2_LENS}, host); }

/* MoE (kernels/moe/) as tile_moe_forward launches it (kernels/moe/moe.c), with the routing built here as
 * align.tile builds it: T tokens, each sent to K distinct experts of E (a slot s = t * K + j; about one in
 * 16 is dropped, expert -1, as for an expert on another rank), the slots grouped by expert in increasing s,
 * each expert's segment padded to BM rows with the sentinel n_slots; expert_ids of the blocks past the
 * padded total are -1, and their rows the sentinel too.  The expert GEMMs take buffers 0-2: sorted slots,
 * block experts, padded total.
 * MG: f16 GEMMs, 90 tokens, top-2 of 5 (36 slots an expert on average: BM 64), hidden 96, inter 80, x and
 * out rows 112 apart; down's out gets two atomic adds an element onto zero, which commute exactly (only
 * three or more could round differently by order).  MQ: f8e4m3 weights with 128 x 128 block scales, 19
 * tokens, top-2 of 4 (BM 16), hidden 160 and inter 144 (two scale blocks each way).  MA: the alignment
 * kernels, 150 tokens, top-3 of 12 (BM 64), 8 chunks of 64 slots. */
#define MG_T 90
#define MG_K 2
#define MG_E 5
#define MG_BM 64
#define MG_H 96
#define MG_I 80
#define MG_LD 112
#define MQ_T 19
#define MQ_K 2
#define MQ_E 4
#define MQ_BM 16
#define MQ_H 160
#define MQ_I 144
#define MA_T 150
#define MA_K 3
#define MA_E 12
#define MA_BM 64
#define MOE_CHUNK 64 /* moe_align_count's and moe_align_scatter's BN */
#define MOE_SLOTS(g) ((g##_T) * (g##_K))
#define MOE_CHUNKS(g) ((MOE_SLOTS(g) + MOE_CHUNK - 1) / MOE_CHUNK)
/* moe.c's blocks_of: every expert's last block may be padding (E <= slots here) */
#define MOE_BLOCKS(g) ((MOE_SLOTS(g) + (g##_E) * ((g##_BM) - 1) + (g##_BM) - 1) / (g##_BM))
#define MOE_ROUTE_BUFS(g) B(I32, MOE_BLOCKS(g) * (g##_BM), HOST, 0), B(I32, MOE_BLOCKS(g), HOST, 0), B(I32, 1, HOST, 0)
#define MOE_ROUTE_ARGS(g) AB(0), AB(1), AB(2), AI(MOE_SLOTS(g)), AI(g##_K), AI(g##_H), AI(g##_I)
#define QB(n) (((n) + 127) / 128) /* 128-wide scale blocks */

typedef struct MoeGeom {
    int tokens, topk, experts, bm;
} MoeGeom;

/* Draw a routing and lay it out as moe_align_{count,scan,scatter} do; every output may be NULL.  ids
 * [slots]; counts and base [chunks][experts]; sorted [max_blocks * bm]; block_experts [max_blocks]; total [1].
 * At most 64 experts. */
static void moe_route(const MoeGeom *g, int32_t *ids, int32_t *counts, int32_t *base, int32_t *sorted, int32_t *block_experts,
                      int32_t *total) {
    int n = g->tokens * g->topk, E = g->experts, bm = g->bm, chunks = (n + MOE_CHUNK - 1) / MOE_CHUNK;
    int max_blocks = (n + E * (bm - 1) + bm - 1) / bm;
    int32_t *id = malloc((size_t)n * 4), *cnt = calloc((size_t)chunks * E, 4), *at = calloc((size_t)chunks * E, 4);
    int order[64], tot[64] = {0}, seg_end[64];
    for (int t = 0; t < g->tokens; t++) { /* the first topk of a random permutation of the experts */
        for (int e = 0; e < E; e++) order[e] = e;
        for (int j = 0; j < g->topk; j++) {
            int k = j + rand_below(E - j), x = order[j];
            order[j] = order[k], order[k] = x;
            id[t * g->topk + j] = rand_below(16) ? order[j] : -1;
        }
    }
    for (int s = 0; s < n; s++)
        if (id[s] >= 0) cnt[s / MOE_CHUNK * E + id[s]]++, tot[id[s]]++;
    int padded_total = 0;
    for (int e = 0; e < E; e++) seg_end[e] = padded_total += (tot[e] + bm - 1) / bm * bm;
    for (int e = 0; e < E; e++) /* where each chunk's slots of each expert begin */
        for (int c = 0, run = seg_end[e] - (tot[e] + bm - 1) / bm * bm; c < chunks; run += cnt[c * E + e], c++) at[c * E + e] = run;
    if (ids) memcpy(ids, id, (size_t)n * 4);
    if (counts) memcpy(counts, cnt, (size_t)chunks * E * 4);
    if (base) memcpy(base, at, (size_t)chunks * E * 4);
    if (sorted) {
        for (int i = 0; i < max_blocks * bm; i++) sorted[i] = n;
        for (int s = 0; s < n; s++)
            if (id[s] >= 0) sorted[at[s / MOE_CHUNK * E + id[s]]++] = s; /* stable: increasing s */
    }
    for (int b = 0; block_experts && b < max_blocks; b++) {
        int e = 0;
        while (e < E && seg_end[e] <= b * bm) e++;
        block_experts[b] = b * bm < padded_total ? e : -1;
    }
    if (total) *total = padded_total;
    free(id), free(cnt), free(at);
}
#define MOE_GEOM(g) (&(MoeGeom){g##_T, g##_K, g##_E, g##_BM})
static void mg_fill(void *const host[8]) { moe_route(MOE_GEOM(MG), NULL, NULL, NULL, host[0], host[1], host[2]); }
static void mq_fill(void *const host[8]) { moe_route(MOE_GEOM(MQ), NULL, NULL, NULL, host[0], host[1], host[2]); }
static void ma_ids_fill(void *const host[8]) { moe_route(MOE_GEOM(MA), host[0], NULL, NULL, NULL, NULL, NULL); }
static void ma_counts_fill(void *const host[8]) { moe_route(MOE_GEOM(MA), NULL, host[0], NULL, NULL, NULL, NULL); }
static void ma_base_fill(void *const host[8]) { moe_route(MOE_GEOM(MA), host[0], NULL, host[1], NULL, NULL, NULL); }

/* A case leaves out the fields it does not need at the end (specialize, host_fill): zero. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const Case cases[] = {
    {"add", "add.tile", "add", {0}, {B(F32, 5000, RAND, 0), B(F32, 5000, RAND, 0), B(F32, 5064, POISON, 1)},
     {AB(0), AB(1), AB(2), AI(5000)}, {5, 1, 1}, CMP_EXACT, 0, 0},
    {"softmax", "softmax.tile", "softmax", {0}, {B(F32, 7 * 790, POISON, 1), B(F32, 7 * 800, RAND, 0)},
     {AB(0), AB(1), AI(800), AI(790), AI(781)}, {7, 1, 1}, CMP_TOL, 1e-7, 1e-5},
    {"layernorm", "layernorm.tile", "layernorm", {0},
     {B(F32, 5 * 2600, RAND, 0), B(F32, 5 * 2600, POISON, 1), B(F32, 2500, RAND, 0), B(F32, 2500, RAND, 0),
      B(F32, 5, POISON, 1), B(F32, 5, POISON, 1)},
     {AB(0), AB(1), AB(2), AB(3), AB(4), AB(5), AI(2600), AI(2500), AF(1e-5f)}, {5, 1, 1}, CMP_TOL, 1e-5, 1e-5},
    {"rmsnorm", "rmsnorm.tile", "rmsnorm", {0}, {B(F32, 3 * 1536, RAND, 0), B(F32, 3 * 1536, POISON, 1), B(F32, 1500, RAND, 0)},
     {AB(0), AB(1), AB(2), AI(1536), AI(1500), AF(1e-6f)}, {3, 1, 1}, CMP_TOL, 1e-5, 1e-5},
    {"row_sum", "row_sum.tile", "row_sum", {0}, {B(F32, 50 * 310, RAND, 0), B(F32, 66, ZERO, 1)},
     {AB(0), AB(1), AI(50), AI(300), AI(310)}, {2, 3, 1}, CMP_ATOMICS, 1e-5, 1e-5},
    {"matmul", "matmul.tile", "matmul", {0}, {B(F32, 70 * 53, RAND, 0), B(F32, 50 * 47, RAND, 0), B(F32, 70 * 49, POISON, 1)},
     {AB(0), AB(1), AB(2), AI(70), AI(45), AI(50), AI(53), AI(47), AI(49)}, {2, 1, 1}, CMP_TOL, 1e-5, 1e-5},
    {"transpose", "transpose.tile", "transpose", {0}, {B(F32, 70 * 47, POISON, 1), B(F32, 70 * 47, RAND, 0)},
     /* out is n x os with os = 72 >= m, in is m x is */
     {AB(0), AB(1), AI(70), AI(45), AI(47), AI(72)}, {3, 2, 1}, CMP_EXACT, 0, 0},
    {"gemm f16->f32", "gemm/gemm.tile", "gemm_f16_f32", {0}, GEMM_BUFS(F16, F32, 130, 70, 96, POISON), GEMM_ARGS(130, 70, 96),
     GEMM_GRID(130, 70), CMP_TOL, 1e-4, 1e-4},
    {"gemm f16->f16", "gemm/gemm.tile", "gemm_f16_f16", {0}, GEMM_BUFS(F16, F16, 130, 70, 96, POISON), GEMM_ARGS(130, 70, 96),
     GEMM_GRID(130, 70), CMP_TOL, 2e-3, 2e-3},
    {"gemm bf16->f32", "gemm/gemm.tile", "gemm_bf16_f32", {0}, GEMM_BUFS(BF16, F32, 130, 70, 96, POISON), GEMM_ARGS(130, 70, 96),
     GEMM_GRID(130, 70), CMP_TOL, 1e-4, 1e-4},
    {"gemm bf16->bf16", "gemm/gemm.tile", "gemm_bf16_bf16", {0}, GEMM_BUFS(BF16, BF16, 130, 70, 96, POISON),
     GEMM_ARGS(130, 70, 96), GEMM_GRID(130, 70), CMP_TOL, 1.6e-2, 1.6e-2},
    {"gemm tf32->f32", "gemm/gemm.tile", "gemm_tf32_f32", {0}, GEMM_BUFS(F32, F32, 130, 70, 96, POISON), GEMM_ARGS(130, 70, 96),
     GEMM_GRID(130, 70), CMP_TOL, 1e-3, 1e-3},
    {"gemm i8->i32", "gemm/gemm.tile", "gemm_i8_i32", {0}, GEMM_BUFS(I8, I32, 130, 70, 200, POISON), GEMM_ARGS(130, 70, 200),
     GEMM_GRID(130, 70), CMP_EXACT, 0, 0},
    {"gemm bf16 bias+gelu", "gemm/gemm.tile", "gemm_bf16_f32", {"HAS_BIAS=true", "ACT=2", 0},
     GEMM_BUFS(BF16, F32, 130, 70, 96, POISON), GEMM_ARGS(130, 70, 96), GEMM_GRID(130, 70), CMP_TOL, 1e-4, 1e-4},
    {"gemm bf16 split-K 3", "gemm/gemm.tile", "gemm_bf16_f32", {"SPLIT_K=3", 0}, GEMM_BUFS(BF16, F32, 130, 70, 300, ZERO),
     GEMM_ARGS(130, 70, 300), {2, 3, 1}, CMP_ATOMICS, 1e-4, 1e-4},
    {"gemm e4m3->f32", "gemm/gemm.tile", "gemm_e4m3_f32", {0}, GEMM_F8_BUFS(E4M3, 130, 70, 96), GEMM_F8_ARGS(130, 70, 96),
     GEMM_GRID(130, 70), CMP_TOL, 1e-3, 1e-3},
    {"gemm e5m2->f32", "gemm/gemm.tile", "gemm_e5m2_f32", {0}, GEMM_F8_BUFS(E5M2, 130, 70, 96), GEMM_F8_ARGS(130, 70, 96),
     GEMM_GRID(130, 70), CMP_TOL, 1e-3, 1e-3},
    {"gemm bf16 trans_a", "gemm/gemm.tile", "gemm_bf16_f32", {0}, {GEMM_TA_BUFS(BF16, 0)}, {GEMM_TA_ARGS(0)}, GEMM_GRID(GT_M, GT_N),
     CMP_TOL, 1e-4, 1e-4, .specialize = GEMM_TA_SPEC(0)},
    {"gemm tf32 trans_a+b", "gemm/gemm.tile", "gemm_tf32_f32", {0}, {GEMM_TA_BUFS(F32, 1)}, {GEMM_TA_ARGS(1)}, GEMM_GRID(GT_M, GT_N),
     CMP_TOL, 1e-3, 1e-3, .specialize = GEMM_TA_SPEC(1)},
    /* FAST_ACCUM=false: tile_gemm's sm_90a default (each K step's product added in f32) */
    {"gemm e4m3 trans_a+b", "gemm/gemm.tile", "gemm_e4m3_f32", {"FAST_ACCUM=false", 0},
     {GEMM_TA_BUFS(E4M3, 1), B(F32, 1, RAND, false), B(F32, 1, RAND, false)}, {GEMM_TA_ARGS(1), AB(4), AB(5)}, GEMM_GRID(GT_M, GT_N),
     CMP_TOL, 1e-3, 1e-3, .specialize = GEMM_TA_SPEC(1)},
    {"attention f16", "attention/attention.tile", "attention_fwd_f16", {0}, ATT_BUFS(F16), ATT_ARGS, ATT_GRID, CMP_TOL, 2e-3, 2e-3},
    {"attention bf16 causal", "attention/attention.tile", "attention_fwd_bf16", {"CAUSAL=true", 0}, ATT_BUFS(BF16), ATT_ARGS,
     ATT_GRID, CMP_TOL, 1.6e-2, 1.6e-2},
    {"paged attn f16 GQA", "attention/paged_attention.tile", "paged_attention_f16",
     {"HEAD_DIM=80", "BLOCK_D=128", "BLOCK_SIZE=16", "BM=16", "BN=32", "SPLIT=false", 0},
     {B(I32, PA1_S * PA1_SBT, HOST, 0), B(I32, PA1_S, HOST, 0), B(F16, PA_QN(PA1), RAND, 0), B(F16, PA_KVN(PA1), RAND, 0),
      B(F16, PA_KVN(PA1), RAND, 0), B(F16, PA_QN(PA1), POISON, 1)},
     /* unsplit: o_part and lse_part are o, as the launcher passes them (unread) */
     {PA_ARGS(PA1, 5, 5), AF(0.1118034f)}, {PA1_HK, PA1_S, 1}, CMP_TOL, 2e-3, 2e-3, .specialize = PA_SPEC16, .host_fill = pa1_fill},
    {"paged bf16 kv8 split3", "attention/paged_attention.tile", "paged_attention_bf16_kv8",
     {"HEAD_DIM=64", "BLOCK_D=64", "BLOCK_SIZE=32", "BM=16", "BN=64", "SPLIT=true", 0},
     {B(I32, PA2_S * PA2_SBT, HOST, 0), B(I32, PA2_S, HOST, 0), B(BF16, PA_QN(PA2), RAND, 0), B(E4M3, PA_KVN(PA2), RAND, 0),
      B(E4M3, PA_KVN(PA2), RAND, 0), B(BF16, PA_QN(PA2), POISON, 0), B(F32, PA_PARTS(PA2) * PA2_D, POISON, 1),
      B(F32, PA_PARTS(PA2), POISON, 1)},
     /* scale: 1/8 times a k_scale of 1.5; v_scale 0.75 */
     {PA_ARGS(PA2, 6, 7), AF(0.1875f), AF(0.75f)}, {PA2_HK, PA2_S, PA2_SPLITS}, CMP_TOL, 1.6e-2, 1.6e-2, .specialize = PA_SPEC16,
     .host_fill = pa2_fill},
    /* the merge of PA2's splits, from random partial outputs and log-sum-exps: o, o_part, lse_part, num_tokens,
     * heads_q, num_splits, o's strides; grid (heads_q * T, sequences) */
    {"paged merge bf16", "attention/paged_attention.tile", "paged_attention_merge_bf16",
     {"HEAD_DIM=64", "BLOCK_D=64", "BLOCK_S=4", 0},
     {B(BF16, PA_QN(PA2), POISON, 1), B(F32, PA_PARTS(PA2) * PA2_D, RAND, 0), B(F32, PA_PARTS(PA2), RAND, 0)},
     {AB(0), AB(1), AB(2), AI(PA2_T), AI(PA2_HQ), AI(PA2_SPLITS), PA_STRIDES(PA2)}, {PA2_HQ * PA2_T, PA2_S, 1}, CMP_TOL, 1.6e-2,
     1.6e-2, .specialize = {"sos=16", "sot=16", "soh=16", 0}},
    /* DeepSeek-style routing: logits, bias, topk_ids, topk_w, tokens, experts, row stride, n_group, topk_group, scale;
     * 37 tokens, 24 experts in 4 groups (the best 2 by their top-2 sums kept), top-4, softmax (the choice is the
     * logit plus the bias: exact, so the ids compare bitwise), renormalized; grid cdiv(tokens, BT) */
    {"moe router grouped", "moe/router.tile", "moe_router_f32",
     {"K=4", "KP=4", "BE=32", "BT=16", "SCORING=0", "RENORM=true", "GROUPED=true", "GROUP_TOP2=true", "HAS_BIAS=true", 0},
     {B(F32, 37 * 27, RAND, 0), B(F32, 24, RAND, 0), B(I32, 37 * 4, POISON, 1), B(F32, 37 * 4, POISON, 1)},
     {AB(0), AB(1), AB(2), AB(3), AI(37), AI(24), AI(27), AI(4), AI(2), AF(2.5f)}, {3, 1, 1}, CMP_TOL, 1e-7, 1e-5},
    /* topk_ids, counts, n_slots, experts; grid chunks */
    {"moe align count", "moe/align.tile", "moe_align_count", {"BN=64", "BE=64", 0},
     {B(I32, MOE_SLOTS(MA), HOST, 0), B(I32, MOE_CHUNKS(MA) * MA_E, POISON, 1)},
     {AB(0), AB(1), AI(MOE_SLOTS(MA)), AI(MA_E)}, {MOE_CHUNKS(MA), 1, 1}, CMP_EXACT, 0, 0, .host_fill = ma_ids_fill},
    /* counts, base, sorted (only the padding slots written), expert_ids, total, n_chunks, n_slots, experts,
     * max_blocks; one program; BE 16 and BC, NB, PJ as moe.c takes them */
    {"moe align scan", "moe/align.tile", "moe_align_scan", {"BM=64", "BE=16", "BC=16", "NB=64", "PJ=64", 0},
     {B(I32, MOE_CHUNKS(MA) * MA_E, HOST, 0), B(I32, MOE_CHUNKS(MA) * MA_E, POISON, 1), B(I32, MOE_BLOCKS(MA) * MA_BM, POISON, 1),
      B(I32, MOE_BLOCKS(MA), POISON, 1), B(I32, 1, POISON, 1)},
     {AB(0), AB(1), AB(2), AB(3), AB(4), AI(MOE_CHUNKS(MA)), AI(MOE_SLOTS(MA)), AI(MA_E), AI(MOE_BLOCKS(MA))}, {1, 1, 1}, CMP_EXACT,
     0, 0, .host_fill = ma_counts_fill},
    /* topk_ids, base, sorted (the routed slots written), n_slots, experts; grid chunks */
    {"moe align scatter", "moe/align.tile", "moe_align_scatter", {"BN=64", 0},
     {B(I32, MOE_SLOTS(MA), HOST, 0), B(I32, MOE_CHUNKS(MA) * MA_E, HOST, 0), B(I32, MOE_BLOCKS(MA) * MA_BM, POISON, 1)},
     {AB(0), AB(1), AB(2), AI(MOE_SLOTS(MA)), AI(MA_E)}, {MOE_CHUNKS(MA), 1, 1}, CMP_EXACT, 0, 0, .host_fill = ma_base_fill},
    /* x, w1, h, routing, sx; grid (max_blocks, cdiv(inter, BN)); the sm_80 launcher's tile (vector loads) */
    {"moe gate_up f16", "moe/experts.tile", "moe_gate_up_f16", {"BM=64", "BN=64", "BK=32", 0},
     {MOE_ROUTE_BUFS(MG), B(F16, MG_T * MG_LD, RAND, 0), B(F16, MG_E * 2 * MG_I * MG_H, RAND, 0),
      B(F16, MOE_SLOTS(MG) * MG_I, POISON, 1)},
     {AB(3), AB(4), AB(5), MOE_ROUTE_ARGS(MG), AI(MG_LD)}, {MOE_BLOCKS(MG), (MG_I + 63) / 64, 1}, CMP_TOL, 2e-3, 2e-3,
     .specialize = {"hidden=16", "inter=16", "sx=16", 0}, .host_fill = mg_fill},
    /* h, w2, out, topk_w, routing, so; grid (max_blocks, cdiv(hidden, BN)) */
    {"moe down f16", "moe/experts.tile", "moe_down_f16", {"BM=64", "BN=64", "BK=32", 0},
     {MOE_ROUTE_BUFS(MG), B(F16, MOE_SLOTS(MG) * MG_I, RAND, 0), B(F16, MG_E * MG_H * MG_I, RAND, 0),
      B(F32, MG_T * MG_LD, ZERO, 1), B(F32, MOE_SLOTS(MG), RAND, 0)},
     {AB(3), AB(4), AB(5), AB(6), MOE_ROUTE_ARGS(MG), AI(MG_LD)}, {MOE_BLOCKS(MG), (MG_H + 63) / 64, 1}, CMP_TOL, 1e-4, 1e-4,
     .specialize = {"hidden=16", "inter=16", "so=16", 0}, .host_fill = mg_fill},
    /* x, w1, w1_scale [E][2 cdiv(I, 128)][cdiv(H, 128)], h, routing, sx */
    {"moe gate_up e4m3 blk", "moe/experts.tile", "moe_gate_up_f16_e4m3_block", {"BM=16", "BN=64", "BK=32", 0},
     {MOE_ROUTE_BUFS(MQ), B(F16, MQ_T * MQ_H, RAND, 0), B(E4M3, MQ_E * 2 * MQ_I * MQ_H, RAND, 0),
      B(F32, MQ_E * 2 * QB(MQ_I) * QB(MQ_H), RAND, 0), B(F16, MOE_SLOTS(MQ) * MQ_I, POISON, 1)},
     {AB(3), AB(4), AB(5), AB(6), MOE_ROUTE_ARGS(MQ), AI(MQ_H)}, {MOE_BLOCKS(MQ), (MQ_I + 63) / 64, 1}, CMP_TOL, 2e-3, 2e-3,
     .specialize = {"hidden=16", "inter=16", "sx=16", 0}, .host_fill = mq_fill},
    /* h, w2, w2_scale [E][cdiv(H, 128)][cdiv(I, 128)], out, topk_w, routing, so */
    {"moe down e4m3 blk", "moe/experts.tile", "moe_down_f16_e4m3_block", {"BM=16", "BN=64", "BK=32", 0},
     {MOE_ROUTE_BUFS(MQ), B(F16, MOE_SLOTS(MQ) * MQ_I, RAND, 0), B(E4M3, MQ_E * MQ_H * MQ_I, RAND, 0),
      B(F32, MQ_E * QB(MQ_H) * QB(MQ_I), RAND, 0), B(F32, MQ_T * MQ_H, ZERO, 1), B(F32, MOE_SLOTS(MQ), RAND, 0)},
     {AB(3), AB(4), AB(5), AB(6), AB(7), MOE_ROUTE_ARGS(MQ), AI(MQ_H)}, {MOE_BLOCKS(MQ), (MQ_H + 63) / 64, 1}, CMP_TOL, 1e-4, 1e-4,
     .specialize = {"hidden=16", "inter=16", "so=16", 0}, .host_fill = mq_fill},
};
#pragma GCC diagnostic pop
enum { NCASES = sizeof cases / sizeof cases[0] };

/* ---- host numerics ---- */

static double value_at(Dt dt, const void *p, size_t i) {
    switch (dt) {
    case F32: return ((const float *)p)[i];
    case F16: return f16_to_d(((const uint16_t *)p)[i]);
    case BF16: return bf16_to_d(((const uint16_t *)p)[i]);
    case I8: return ((const int8_t *)p)[i];
    case I32: return ((const int32_t *)p)[i];
    case E4M3: return f8e4m3_to_d(((const uint8_t *)p)[i]);
    case E5M2: return f8e5m2_to_d(((const uint8_t *)p)[i]);
    }
    return 0;
}

static void fill(const Buf *b, void *p) {
    if (b->init == HOST) { /* the case's host_fill writes it next */
        memset(p, 0, b->n * (size_t)dt_size[b->dt]);
        return;
    }
    for (size_t i = 0; i < b->n; i++) {
        switch (b->dt) {
        case F32: ((float *)p)[i] = b->init == RAND ? frand() : b->init == ZERO ? 0.0f : NAN; break;
        case F16: ((uint16_t *)p)[i] = b->init == RAND ? f32_to_f16(frand()) : b->init == ZERO ? 0 : 0x7e00; break;
        case BF16: ((uint16_t *)p)[i] = b->init == RAND ? f32_to_bf16(frand()) : b->init == ZERO ? 0 : 0x7fc0; break;
        case I8: ((int8_t *)p)[i] = b->init == RAND ? (int8_t)(next_u64() >> 56) : b->init == ZERO ? 0 : (int8_t)0x80; break;
        case I32:
            ((int32_t *)p)[i] = b->init == RAND ? (int32_t)(next_u64() >> 54) - 512 : b->init == ZERO ? 0 : (int32_t)0x80000001;
            break;
        case E4M3: /* a value in [-1, 1) rounded to the format (no NaN code) */
        case E5M2: ((uint8_t *)p)[i] = b->init == RAND ? d_to_f8(frand(), b->dt == E5M2) : b->init == ZERO ? 0 : 0x7f; break;
        }
    }
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---- one case on one device ---- */

typedef struct Run {
    void *out[8]; /* downloaded outputs, by buffer index */
    double ms;    /* launch to synchronize */
    uint64_t instructions; /* emu: executed thread-instructions */
    char err[512];
} Run;

/* dyn_smem: the kernel's shared memory when it is dynamic (past the static 48 KiB), else 0 */
static bool run_case(TileDevice *dev, const Case *c, const char *ptx, unsigned threads, unsigned dyn_smem, void *const host[8],
                     int nbufs, Run *r) {
    TileDevModule *mod = NULL;
    TileDevFunction *fn = NULL;
    uint64_t d[8] = {0};
    bool ok = false;
    memset(r, 0, sizeof *r);
    if (dev_module_load_ptx(dev, ptx, &mod) || dev_module_get_function(mod, c->kernel, &fn)) {
        snprintf(r->err, sizeof r->err, "load: %s", dev_last_error(dev));
        goto done;
    }
    for (int i = 0; i < nbufs; i++) {
        size_t bytes = c->bufs[i].n * (size_t)dt_size[c->bufs[i].dt];
        if (dev_malloc(dev, bytes, &d[i]) || dev_memcpy_htod(dev, d[i], host[i], bytes)) {
            snprintf(r->err, sizeof r->err, "upload: %s", dev_last_error(dev));
            goto done;
        }
    }
    void *params[32];
    int np = 0;
    for (; np < 32 && c->args[np].kind; np++)
        params[np] = c->args[np].kind == 'b' ? (void *)&d[c->args[np].buf]
                     : c->args[np].kind == 'i' ? (void *)&c->args[np].i
                                               : (void *)&c->args[np].f;
    double t0 = now_s();
    if (dev_launch(fn, c->grid[0], c->grid[1], c->grid[2], threads, 1, 1, dyn_smem, NULL, params) || dev_synchronize(dev)) {
        snprintf(r->err, sizeof r->err, "launch: %s", dev_last_error(dev));
        goto done;
    }
    r->ms = (now_s() - t0) * 1e3;
    DevLaunchStats ls;
    if (dev_last_launch_stats(dev, &ls) == DEV_OK) r->instructions = ls.instructions;
    for (int i = 0; i < nbufs; i++) {
        if (!c->bufs[i].out) continue;
        size_t bytes = c->bufs[i].n * (size_t)dt_size[c->bufs[i].dt];
        r->out[i] = malloc(bytes);
        if (dev_memcpy_dtoh(dev, r->out[i], d[i], bytes)) {
            snprintf(r->err, sizeof r->err, "download: %s", dev_last_error(dev));
            goto done;
        }
    }
    ok = true;
done:
    for (int i = 0; i < nbufs; i++)
        if (d[i]) dev_free(dev, d[i]);
    if (mod) dev_module_unload(mod);
    return ok;
}

/* ---- comparison ---- */

typedef struct Result {
    const char *label;
    size_t elems, equal_bits, mismatches;
    double max_abs, max_rel;
    const char *mode;
    double ms_a, ms_b;
    double b_mips; /* the emulator B's executed thread-instructions per second, millions */
    char status[600];
    bool pass;
} Result;

static void compare(const Case *c, Cmp cmp, const Run *a, const Run *b, int nbufs, Result *res) {
    for (int i = 0; i < nbufs; i++) {
        const Buf *bf = &c->bufs[i];
        if (!bf->out) continue;
        int sz = dt_size[bf->dt];
        bool integer = bf->dt == I8 || bf->dt == I32;
        for (size_t e = 0; e < bf->n; e++) {
            const char *pa = (const char *)a->out[i] + e * (size_t)sz, *pb = (const char *)b->out[i] + e * (size_t)sz;
            res->elems++;
            bool same_bits = !memcmp(pa, pb, (size_t)sz);
            res->equal_bits += same_bits;
            if (same_bits) continue;
            double x = value_at(bf->dt, a->out[i], e), y = value_at(bf->dt, b->out[i], e);
            if (isnan(x) && isnan(y)) continue; /* two NaNs, different payloads */
            double ad = fabs(x - y), rd = ad / fmax(fabs(x), fabs(y));
            if (!isnan(ad)) {
                res->max_abs = fmax(res->max_abs, ad);
                res->max_rel = fmax(res->max_rel, rd);
            }
            bool ok = !integer && cmp != CMP_EXACT && ad <= c->atol + c->rtol * fmax(fabs(x), fabs(y));
            if (!ok) {
                if (!res->mismatches)
                    snprintf(res->status, sizeof res->status, "first mismatch: output %d (%s) [%zu]: %.9g vs %.9g", i,
                             dt_name[bf->dt], e, x, y);
                res->mismatches++;
            }
        }
    }
    res->pass = res->mismatches == 0;
}

static void print_header(void) {
    printf("%-22s %-8s %8s %-18s %8s %10s %10s %9s %10s %10s %9s  %s\n", "kernel", "out", "elements", "compare", "bitwise%",
           "max|diff|", "max rel", "mismatch", "A ms", "B ms", "B Minst/s", "result");
}

static void print_row(const Result *r, const Case *c) {
    char status[161];
    size_t len = strnlen(r->status, sizeof status - 1); /* one line, at most 160 characters */
    memcpy(status, r->status, len);
    status[len] = 0;
    for (char *p = status; *p; p++)
        if (*p == '\n') *p = ' ';
    const char *out = "?";
    for (int i = 0; i < 8; i++)
        if (c->bufs[i].n && c->bufs[i].out) {
            out = dt_name[c->bufs[i].dt];
            break;
        }
    if (json) {
        JsonOut j;
        json_begin(&j, stdout);
        json_str(&j, "bench", "compare_devices");
        json_str(&j, "kernel", r->label);
        json_str(&j, "out", out);
        json_uint(&j, "elements", r->elems);
        json_str(&j, "compare", r->mode);
        json_num(&j, "bitwise_pct", r->elems ? 100.0 * (double)r->equal_bits / (double)r->elems : 0.0);
        json_num(&j, "max_abs_diff", r->max_abs);
        json_num(&j, "max_rel_diff", r->max_rel);
        json_uint(&j, "mismatches", r->mismatches);
        json_num(&j, "a_ms", r->ms_a);
        json_num(&j, "b_ms", r->ms_b);
        json_num(&j, "b_m_thread_instr_per_s", r->b_mips);
        json_str(&j, "result", r->pass ? "ok" : "FAIL");
        if (r->status[0]) json_str(&j, "status", r->status);
        json_end(&j);
        return;
    }
    printf("%-22s %-8s %8zu %-18s %7.2f%% %10.3g %10.3g %9zu %10.3f %10.3f %9.1f  %s%s%s\n", r->label, out, r->elems, r->mode,
           r->elems ? 100.0 * (double)r->equal_bits / (double)r->elems : 0.0, r->max_abs, r->max_rel, r->mismatches, r->ms_a,
           r->ms_b, r->b_mips, r->pass ? "ok" : "FAIL", status[0] ? ": " : "", status);
    fflush(stdout);
}

int main(int argc, char **argv) {
    const char *device = NULL, *arch = tile_target_default();
    uint64_t seed = (uint64_t)time(NULL);
    bool quiet = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--device") && i + 1 < argc) device = argv[++i];
        else if (!strcmp(argv[i], "--arch") && i + 1 < argc) {
            /* a target of the table ("" the default): an unknown one failed every kernel's compile, a run with status 1 */
            arch = argv[++i];
            bool known = !*arch;
            for (int t = 0; !known && tile_target_name(t); t++) known = !strcmp(arch, tile_target_name(t));
            if (!known) {
                fprintf(stderr, "compare_devices: --arch: unknown target '%s' (expected one of", arch);
                for (int t = 0; tile_target_name(t); t++) fprintf(stderr, " %s", tile_target_name(t));
                fprintf(stderr, ")\n");
                return 2;
            }
            if (!*arch) arch = tile_target_default();
        } else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
            /* a whole number: "x" was seed 0 */
            const char *v = argv[++i];
            char *end;
            errno = 0;
            seed = strtoull(v, &end, 0);
            if (!*v || *v == '-' || *end || errno) {
                fprintf(stderr, "compare_devices: --seed: '%s' is not a non-negative whole number\n", v);
                return 2;
            }
        }
        else if (!strcmp(argv[i], "--quiet")) quiet = true;
        else if (!strcmp(argv[i], "--json")) json = true;
        else {
            fprintf(stderr, "usage: %s [--device cuda[:N]|emu[:OPTIONS]] [--arch TARGET] [--seed N] [--quiet] [--json]\n", argv[0]);
            return 2;
        }
    }
    DevBackend backend;
    int ordinal;
    char *err = NULL;
    if (dev_parse_device(device, &backend, &ordinal, &err)) {
        fprintf(stderr, "compare_devices: %s\n", err);
        free(err);
        return 2;
    }
    bool on_gpu = backend == DEV_BACKEND_CUDA;
    /* A: the device under test; B: the emulator reference. */
    DevOptions oa = {.emu_host_threads = 1, .emu_racecheck = true}, ob = {.emu_host_threads = 4, .emu_racecheck = on_gpu};
    TileDevice *da = NULL, *db = NULL;
    /* the device string as given, options and all (emu:sm_90a, emu:sms=8, cuda:1): with an emulator under test both
     * runs take it, so both emulate the device asked for; a GPU is compared with the emulator's defaults */
    const char *dev_a = device && *device ? device : on_gpu ? "cuda" : "emu", *dev_b = on_gpu ? "emu" : dev_a;
    if (dev_open(dev_a, &oa, &da, &err)) {
        fprintf(stderr, "compare_devices: device A: %s\n", err);
        return 1;
    }
    if (dev_open(dev_b, &ob, &db, &err)) {
        fprintf(stderr, "compare_devices: device B: %s\n", err);
        return 1;
    }
    if (json) quiet = true; /* each kernel's object comes once, with the final table */
    fprintf(json ? stderr : stdout, "compare_devices: A = %s%s, B = %s (%s), PTX for %s, seed %llu\n", dev_a,
           on_gpu ? "" : " (1 host thread, racecheck)", dev_b, on_gpu ? "racecheck" : "4 host threads", arch,
           (unsigned long long)seed);
    if (!quiet) print_header();

    Result results[NCASES];
    int failed = 0;
    for (int ci = 0; ci < NCASES; ci++) {
        const Case *c = &cases[ci];
        Result *res = &results[ci];
        memset(res, 0, sizeof *res);
        res->label = c->label;
        Cmp cmp = c->cmp;
        /* two emulator runs: everything but float atomics must agree bitwise */
        if (!on_gpu && cmp == CMP_TOL) cmp = CMP_EXACT;
        static char modes[NCASES][32];
        if (cmp == CMP_EXACT) snprintf(modes[ci], sizeof modes[ci], "bitwise");
        else snprintf(modes[ci], sizeof modes[ci], "tol %.0e/%.0e", c->atol, c->rtol);
        res->mode = modes[ci];

        char path[1024];
        snprintf(path, sizeof path, TILE_SOURCE_DIR "/kernels/%s", c->file);
        tile_compile_options o = {.size = sizeof o, .arch = arch, .kernel = c->kernel, .defines = c->defines,
                                  .specialize = c->specialize, .no_tma = 1};
        tile_compiled comp;
        tile_status st = tile_compile_file(path, &o, &comp);
        int nbufs = 0;
        while (nbufs < 8 && c->bufs[nbufs].n) nbufs++;
        void *host[8] = {0};
        Run ra, rb;
        memset(&ra, 0, sizeof ra);
        memset(&rb, 0, sizeof rb);
        if (st != TILE_OK) {
            snprintf(res->status, sizeof res->status, "compile: %s %.400s", tile_status_string(st), comp.diagnostics);
        } else {
            unsigned threads = 32u * (unsigned)comp.kernels[0].num_warps;
            unsigned dyn = comp.kernels[0].smem_dynamic ? (unsigned)comp.kernels[0].smem_bytes : 0;
            rng = (seed ^ (0x9E3779B97F4A7C15ull * (uint64_t)(ci + 1))) | 1;
            for (int i = 0; i < nbufs; i++) {
                host[i] = malloc(c->bufs[i].n * (size_t)dt_size[c->bufs[i].dt]);
                fill(&c->bufs[i], host[i]);
            }
            if (c->host_fill) c->host_fill(host);
            if (!run_case(da, c, comp.ptx, threads, dyn, host, nbufs, &ra))
                snprintf(res->status, sizeof res->status, "A: %.500s", ra.err);
            else if (!run_case(db, c, comp.ptx, threads, dyn, host, nbufs, &rb))
                snprintf(res->status, sizeof res->status, "B: %.500s", rb.err);
            else compare(c, cmp, &ra, &rb, nbufs, res);
            res->ms_a = ra.ms;
            res->ms_b = rb.ms;
            if (rb.ms > 0) res->b_mips = (double)rb.instructions / (rb.ms * 1e-3) / 1e6;
        }
        tile_compiled_free(&comp);
        for (int i = 0; i < 8; i++) free(host[i]), free(ra.out[i]), free(rb.out[i]);
        failed += !res->pass;
        if (!quiet) print_row(res, c);
    }
    dev_close(da);
    dev_close(db);

    if (json) {
        for (int ci = 0; ci < NCASES; ci++) print_row(&results[ci], &cases[ci]);
        char note[160];
        snprintf(note, sizeof note, "%d of %d kernels agree%s", NCASES - failed, NCASES, failed ? " (FAILURES above)" : "");
        JsonOut j;
        json_begin(&j, stdout);
        json_str(&j, "bench", "compare_devices");
        json_str(&j, "note", note);
        json_str(&j, "a", dev_a), json_str(&j, "b", dev_b);
        json_str(&j, "arch", arch);
        json_uint(&j, "seed", seed);
        json_int(&j, "agree", NCASES - failed);
        json_int(&j, "kernels", NCASES);
        json_end(&j);
        return failed ? 1 : 0;
    }
    printf("\n== device comparison (A = %s%s, B = %s), %s, seed %llu\n", dev_a, on_gpu ? "" : ", 1 host thread", dev_b, arch,
           (unsigned long long)seed);
    print_header();
    for (int ci = 0; ci < NCASES; ci++) print_row(&results[ci], &cases[ci]);
    printf("%d of %d kernels agree%s\n", NCASES - failed, NCASES, failed ? " (FAILURES above)" : "");
    return failed ? 1 : 0;
}
