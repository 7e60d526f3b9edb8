/* test_tree_decode.c - tree-shaped draft tokens in tile_attention_decode_paged
 * (tile_paged_attention_args.tree_mask; kernels/attention/paged_attention.tile,
 * paged_attention_tree_*) on the emulator against ref_paged_decode with the
 * same mask.
 *
 * Each sequence's num_tokens new tokens form a random tree (token j's parent
 * a random earlier token, or none: a child of the context); token t sees the
 * context before the new tokens and its ancestors and itself, as speculative
 * decoding with a token tree verifies them.  Fresh random inputs (TILE_TEST_SEED
 * repeats one), shuffled block tables, gapped strides, odd context lengths,
 * GQA, f16 and bf16 and an f8 cache, split-KV on and off, outputs poisoned
 * with NaN and the gaps checked untouched.  Tolerances as
 * tests/test_attention_api.c: 2e-3 (f16), 1.6e-2 (bf16) absolute with |V| <= 1.
 * Also: a causal mask gives the bits of the call without a mask; a row that
 * sees no key (context == num_tokens, no bit set) is 0; bits at or above
 * num_tokens are ignored (random ones, bit 31 among them, give the output of
 * the mask without them, bit for bit); a caller's size that
 * stops before tree_mask means no mask; the mask pointer is checked like the
 * other tensors. */
#include <criterion/criterion.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test_rng.h"
#include "ref/ref.h"
#include "support/hostfloat.h"
#include "include/tile/tile.h"
#include "tests/test_ctx_buffers.h"

static uint16_t to_dt(tile_dtype t, double v) { return t == TILE_F16 ? f32_to_f16((float)v) : f32_to_bf16((float)v); }
static double from_dt(tile_dtype t, uint16_t h) { return t == TILE_F16 ? f16_to_d(h) : bf16_to_d(h); }
static const uint16_t POISON16 = 0x7e00; /* NaN in f16 and in bf16 */

static void fill16(tile_dtype t, size_t n, uint16_t *h, double *v) {
    for (size_t i = 0; i < n; i++) {
        h[i] = to_dt(t, urand());
        v[i] = from_dt(t, h[i]);
    }
}
static void fill8(size_t n, uint8_t *h, double *v) {
    for (size_t i = 0; i < n; i++) {
        uint8_t c;
        do c = (uint8_t)rnext();
        while ((c & 0x7f) > 0x40); /* |value| <= 2 */
        h[i] = c;
        v[i] = f8e4m3_to_d(c);
    }
}


/* How the mask of a case is made */
typedef enum { MASK_TREE, MASK_CAUSAL, MASK_NONE_NEW, MASK_TREE_HIGH_BITS } MaskKind;

typedef struct TreeCase {
    tile_dtype dt;
    bool f8;
    int num_seqs, heads_q, heads_kv, num_tokens, head_dim, block_size;
    const int *ctx;
    int num_splits; /* 0: automatic */
    MaskKind mask;
} TreeCase;

/* A random tree over T tokens: bit j of mask[t] when j is t or an ancestor of t */
static void random_tree(int T, int32_t *mask) {
    int parent[32];
    for (int t = 0; t < T; t++) {
        parent[t] = t == 0 || irand(4) == 0 ? -1 : irand(t);
        mask[t] = (int32_t)(1u << t);
        if (parent[t] >= 0) mask[t] |= mask[parent[t]];
    }
}

/* The problem's device buffers and host values */
typedef struct Run {
    int S, Hq, Hk, T, D, bs, num_blocks, sbt, max_ctx;
    int skh, sks, skb, svh, svs, svb, sqh, sqt, sqs, soh, sot, sos;
    size_t nk, nv, nq, no;
    int *table;
    int32_t *mask;
    double *vk, *vv, *vq;
    tile_devptr dk, dv, dq, dtable, dctx, dmask;
    float k_scale, v_scale;
} Run;

static void run_setup(tile_context *ctx, const TreeCase *c, Run *r) {
    memset(r, 0, sizeof *r);
    r->S = c->num_seqs, r->Hq = c->heads_q, r->Hk = c->heads_kv, r->T = c->num_tokens, r->D = c->head_dim, r->bs = c->block_size;
    int max_blocks = 0, used = 0;
    for (int s = 0; s < r->S; s++) {
        int nb = (c->ctx[s] + r->bs - 1) / r->bs;
        max_blocks = nb > max_blocks ? nb : max_blocks;
        r->max_ctx = c->ctx[s] > r->max_ctx ? c->ctx[s] : r->max_ctx;
        used += nb;
    }
    r->num_blocks = used + 3, r->sbt = max_blocks + 2;
    int *perm = malloc(sizeof(int) * (size_t)r->num_blocks);
    r->table = malloc(sizeof(int) * (size_t)r->S * r->sbt);
    for (int i = 0; i < r->num_blocks; i++) perm[i] = i;
    for (int i = r->num_blocks - 1; i > 0; i--) {
        int j = (int)(rnext() % (uint64_t)(i + 1)), x = perm[i];
        perm[i] = perm[j], perm[j] = x;
    }
    for (int s = 0, next = 0; s < r->S; s++)
        for (int i = 0; i < r->sbt; i++) r->table[s * r->sbt + i] = i < (c->ctx[s] + r->bs - 1) / r->bs ? perm[next++] : 1 << 29;
    free(perm);
    int D = r->D, Hk = r->Hk, Hq = r->Hq, T = r->T;
    r->skh = D + 16, r->sks = Hk * r->skh, r->skb = r->bs * r->sks + 64, r->svh = D + 32, r->svs = Hk * r->svh + 16, r->svb = r->bs * r->svs;
    r->sqh = D + 8, r->sqt = Hq * r->sqh + 16, r->sqs = T * r->sqt + 32, r->soh = D + 16, r->sot = Hq * r->soh, r->sos = T * r->sot + 8;
    r->nk = (size_t)r->num_blocks * r->skb, r->nv = (size_t)r->num_blocks * r->svb, r->nq = (size_t)r->S * r->sqs, r->no = (size_t)r->S * r->sos;
    size_t kes = c->f8 ? 1 : 2;
    void *hk = malloc(r->nk * kes), *hv = malloc(r->nv * kes);
    uint16_t *hq = malloc(r->nq * 2);
    r->vk = malloc(r->nk * 8), r->vv = malloc(r->nv * 8), r->vq = malloc(r->nq * 8);
    r->k_scale = c->f8 ? 0.375f : 0, r->v_scale = c->f8 ? 0.5f : 0;
    if (c->f8) fill8(r->nk, hk, r->vk), fill8(r->nv, hv, r->vv);
    else fill16(c->dt, r->nk, hk, r->vk), fill16(c->dt, r->nv, hv, r->vv);
    fill16(c->dt, r->nq, hq, r->vq);
    r->mask = malloc(sizeof(int32_t) * (size_t)r->S * T);
    for (int s = 0; s < r->S; s++) {
        int32_t *m = r->mask + (size_t)s * T;
        if (c->mask == MASK_TREE || c->mask == MASK_TREE_HIGH_BITS) random_tree(T, m);
        for (int t = 0; t < T; t++) {
            if (c->mask == MASK_CAUSAL) m[t] = (int32_t)((2u << t) - 1);
            if (c->mask == MASK_NONE_NEW) m[t] = 0;
            /* bits at or above num_tokens, bit 31 always among them: random, which the call ignores */
            if (c->mask == MASK_TREE_HIGH_BITS) m[t] |= (int32_t)(((uint32_t)rnext() | 0x80000000u) & ~((1u << T) - 1));
        }
    }
    r->dk = upload(ctx, hk, r->nk * kes), r->dv = upload(ctx, hv, r->nv * kes), r->dq = upload(ctx, hq, r->nq * 2);
    r->dtable = upload(ctx, r->table, sizeof(int) * (size_t)r->S * r->sbt), r->dctx = upload(ctx, c->ctx, sizeof(int) * (size_t)r->S);
    r->dmask = upload(ctx, r->mask, sizeof(int32_t) * (size_t)r->S * T);
    free(hk), free(hv), free(hq);
}

static void run_free(tile_context *ctx, Run *r) {
    tile_devptr b[] = {r->dk, r->dv, r->dq, r->dtable, r->dctx, r->dmask};
    for (size_t i = 0; i < sizeof b / sizeof b[0]; i++) tile_free(ctx, b[i]);
    free(r->table), free(r->mask), free(r->vk), free(r->vv), free(r->vq);
}

/* One call: O (poisoned first) into ho[no]; with_mask false leaves tree_mask 0; size: the struct size to pass */
static void run_call(tile_context *ctx, const TreeCase *c, const Run *r, bool with_mask, size_t size, uint16_t *ho) {
    for (size_t i = 0; i < r->no; i++) ho[i] = POISON16;
    tile_devptr dout = upload(ctx, ho, r->no * 2);
    tile_paged_attention_args a = {.size = size, .dtype = c->dt, .kv_dtype = c->f8 ? TILE_F8E4M3 : c->dt, .k_scale = r->k_scale,
                                   .v_scale = r->v_scale, .num_seqs = r->S, .heads_q = r->Hq, .heads_kv = r->Hk, .head_dim = r->D,
                                   .num_tokens = r->T, .block_size = r->bs, .num_blocks = r->num_blocks, .q = r->dq, .o = dout,
                                   .q_stride = {r->sqs, r->sqt, r->sqh}, .o_stride = {r->sos, r->sot, r->soh}, .k_cache = r->dk,
                                   .v_cache = r->dv, .k_stride = {r->skb, r->sks, r->skh}, .v_stride = {r->svb, r->svs, r->svh},
                                   .block_tables = r->dtable, .block_table_stride = r->sbt, .context_lens = r->dctx,
                                   .max_context_len = r->max_ctx, .num_splits = c->num_splits, .check_tables = 1,
                                   .tree_mask = with_mask ? r->dmask : 0};
    tile_status st = tile_attention_decode_paged(ctx, &a);
    cr_assert_eq(st, TILE_OK, "tile_attention_decode_paged: %s: %s", tile_status_string(st), tile_last_error(ctx));
    cr_assert_eq(tile_synchronize(ctx), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, ho, dout, r->no * 2), TILE_OK);
    tile_free(ctx, dout);
}

static void run_tree(tile_context *ctx, const TreeCase *c) {
    Run r;
    run_setup(ctx, c, &r);
    uint16_t *ho = malloc(r.no * 2);
    run_call(ctx, c, &r, true, sizeof(tile_paged_attention_args), ho);
    double *ro = malloc(r.no * 8);
    ref_paged_args ra = {.num_seqs = r.S, .heads_q = r.Hq, .heads_kv = r.Hk, .head_dim = r.D, .num_tokens = r.T, .block_size = r.bs,
                         .num_blocks = r.num_blocks, .q = r.vq, .q_stride = {r.sqs, r.sqt, r.sqh}, .o = ro,
                         .o_stride = {r.sos, r.sot, r.soh}, .k_cache = r.vk, .v_cache = r.vv, .k_stride = {r.skb, r.sks, r.skh},
                         .v_stride = {r.svb, r.svs, r.svh}, .k_scale = r.k_scale, .v_scale = r.v_scale, .block_tables = r.table,
                         .block_table_stride = r.sbt, .context_lens = c->ctx, .tree_mask = r.mask};
    cr_assert(ref_paged_decode(&ra), "ref_paged_decode rejected the case");
    double tol = c->dt == TILE_F16 ? 2e-3 : 1.6e-2;
    bool *written = calloc(r.no, 1);
    for (int s = 0; s < r.S; s++)
        for (int t = 0; t < r.T; t++)
            for (int h = 0; h < r.Hq; h++) {
                size_t orow = (size_t)s * r.sos + (size_t)t * r.sot + (size_t)h * r.soh;
                for (int d = 0; d < r.D; d++) {
                    double want = ro[orow + d], got = from_dt(c->dt, ho[orow + d]);
                    written[orow + d] = true;
                    cr_assert(fabs(got - want) <= tol,
                              "s=%d t=%d h=%d d=%d (ctx %d, T %d, mask 0x%x, splits %d%s): O = %.6g, want %.6g (seed %llu)", s, t, h, d,
                              c->ctx[s], r.T, (unsigned)r.mask[s * r.T + t], c->num_splits, c->f8 ? ", f8 cache" : "", got, want,
                              (unsigned long long)seed);
                }
            }
    for (size_t i = 0; i < r.no; i++)
        if (!written[i]) cr_assert(ho[i] == POISON16, "O written outside the tensor at element %zu", i);
    if (c->mask == MASK_CAUSAL) { /* the causal mask is the call without one, bit for bit */
        uint16_t *h2 = malloc(r.no * 2);
        run_call(ctx, c, &r, false, sizeof(tile_paged_attention_args), h2);
        cr_assert(memcmp(ho, h2, r.no * 2) == 0, "a causal tree mask differs from no mask");
        free(h2);
    }
    if (c->mask == MASK_TREE_HIGH_BITS) { /* the same tree without its high bits: the same output, bit for bit */
        int32_t *clean = malloc(sizeof(int32_t) * (size_t)r.S * r.T);
        bool had_high = false;
        for (int i = 0; i < r.S * r.T; i++) {
            clean[i] = (int32_t)((uint32_t)r.mask[i] & ((1u << r.T) - 1));
            had_high |= clean[i] != r.mask[i];
        }
        cr_assert(had_high);
        cr_assert_eq(tile_memcpy_htod(ctx, r.dmask, clean, sizeof(int32_t) * (size_t)r.S * r.T), TILE_OK);
        uint16_t *h2 = malloc(r.no * 2);
        run_call(ctx, c, &r, true, sizeof(tile_paged_attention_args), h2);
        cr_assert(memcmp(ho, h2, r.no * 2) == 0, "bits at or above num_tokens changed the output");
        free(h2), free(clean);
    }
    free(written), free(ro), free(ho);
    run_free(ctx, &r);
}

Test(tree_decode, trees, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    static const int c3[] = {8, 37, 301}, c2[] = {5, 130};
    /* GQA 4:1 with 8 tokens (a 32-row Q tile), split and not */
    run_tree(ctx, &(TreeCase){TILE_F16, false, 3, 8, 2, 8, 64, 16, c3, 1, MASK_TREE});
    run_tree(ctx, &(TreeCase){TILE_BF16, false, 3, 8, 2, 8, 64, 16, c3, 3, MASK_TREE});
    /* 5 tokens, head_dim 128, block size 32, automatic splits */
    run_tree(ctx, &(TreeCase){TILE_BF16, false, 2, 4, 1, 5, 128, 32, c2, 0, MASK_TREE});
    /* an f8 cache */
    run_tree(ctx, &(TreeCase){TILE_F16, true, 2, 2, 2, 4, 64, 16, c2, 2, MASK_TREE});
    tile_context_destroy(ctx);
}

Test(tree_decode, causal_mask_and_empty_rows, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    static const int c2[] = {6, 97}, c1[] = {4};
    run_tree(ctx, &(TreeCase){TILE_F16, false, 2, 4, 2, 6, 64, 16, c2, 1, MASK_CAUSAL});
    run_tree(ctx, &(TreeCase){TILE_BF16, false, 2, 4, 2, 6, 64, 16, c2, 2, MASK_CAUSAL});
    /* context == num_tokens and no bit: every row sees no key, O = 0 */
    run_tree(ctx, &(TreeCase){TILE_F16, false, 1, 2, 1, 4, 64, 16, c1, 1, MASK_NONE_NEW});
    /* bits at or above num_tokens (bit 31 included) name no new token: ignored (the reference reads bits below
     * num_tokens only, and the output equals the call with them cleared) */
    run_tree(ctx, &(TreeCase){TILE_F16, false, 2, 4, 2, 6, 64, 16, c2, 1, MASK_TREE_HIGH_BITS});
    tile_context_destroy(ctx);
}

/* A caller built before tree_mask existed passes a shorter size: the field reads as zero (causal) */
Test(tree_decode, older_size_ignores_the_mask, .timeout = 300) {
    seed_rng();
    tile_context *ctx = open_ctx();
    static const int c2[] = {6, 50};
    TreeCase c = {TILE_F16, false, 2, 4, 2, 6, 64, 16, c2, 1, MASK_NONE_NEW};
    Run r;
    run_setup(ctx, &c, &r);
    uint16_t *a = malloc(r.no * 2), *b = malloc(r.no * 2);
    run_call(ctx, &c, &r, true, offsetof(tile_paged_attention_args, tree_mask), a);
    run_call(ctx, &c, &r, false, sizeof(tile_paged_attention_args), b);
    cr_assert(memcmp(a, b, r.no * 2) == 0, "a size before tree_mask still read the mask");
    run_call(ctx, &c, &r, true, sizeof(tile_paged_attention_args), a);
    cr_assert(memcmp(a, b, r.no * 2) != 0, "the mask (no new token visible) changed nothing");
    free(a), free(b);
    run_free(ctx, &r);
    tile_context_destroy(ctx);
}

/* tree_mask is checked like the other tensors: inside an allocation, aligned, room for [num_seqs, num_tokens] */
Test(tree_decode, mask_checked, .timeout = 120) {
    seed_rng();
    tile_context *ctx = open_ctx();
    static const int c2[] = {6, 50};
    TreeCase c = {TILE_F16, false, 2, 4, 2, 6, 64, 16, c2, 1, MASK_TREE};
    Run r;
    run_setup(ctx, &c, &r);
    tile_devptr small, out;
    cr_assert_eq(tile_malloc(ctx, 4 * 6, &small), TILE_OK); /* one sequence's mask, two needed */
    cr_assert_eq(tile_malloc(ctx, r.no * 2, &out), TILE_OK);
    tile_paged_attention_args a = {.size = sizeof a, .dtype = c.dt, .num_seqs = r.S, .heads_q = r.Hq, .heads_kv = r.Hk, .head_dim = r.D,
                                   .num_tokens = r.T, .block_size = r.bs, .num_blocks = r.num_blocks, .q = r.dq, .o = out,
                                   .q_stride = {r.sqs, r.sqt, r.sqh}, .o_stride = {r.sos, r.sot, r.soh}, .k_cache = r.dk, .v_cache = r.dv,
                                   .k_stride = {r.skb, r.sks, r.skh}, .v_stride = {r.svb, r.svs, r.svh}, .block_tables = r.dtable,
                                   .block_table_stride = r.sbt, .context_lens = r.dctx, .max_context_len = r.max_ctx, .num_splits = 1,
                                   .tree_mask = small};
    cr_assert_eq(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE);
    cr_assert(strstr(tile_last_error(ctx), "tree_mask"), "%s", tile_last_error(ctx));
    a.tree_mask = r.dmask + 2; /* not aligned to its i32 elements */
    cr_assert_eq(tile_attention_decode_paged(ctx, &a), TILE_ERROR_INVALID_VALUE);
    cr_assert(strstr(tile_last_error(ctx), "tree_mask"), "%s", tile_last_error(ctx));
    a.tree_mask = r.dmask;
    cr_assert_eq(tile_attention_decode_paged_prepare(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_attention_decode_paged(ctx, &a), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_synchronize(ctx), TILE_OK);
    tile_free(ctx, small), tile_free(ctx, out);
    run_free(ctx, &r);
    tile_context_destroy(ctx);
}
