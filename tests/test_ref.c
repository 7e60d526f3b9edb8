/* test_ref.c - ref/ (the float64 references) on its own, no device: the promises of
 * ref/ref.h that the kernel tests do not show (contiguous strides, empty rows, the
 * paged layout against the dense one and one paged row against the whole call, the
 * router's tie rules and argument checks, the weight-row callback and given h, the
 * scale layouts) and the f8 decoders of support/hostfloat.h.  Hand-computed values where they are short; otherwise two
 * entry points that must agree bit for bit. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test_rng.h"
#include "ref/ref.h"
#include "support/hostfloat.h"

Test(ref, f8_decoders) {
    cr_expect_eq(f8e4m3_to_d(0x7e), 448);
    cr_expect_eq(f8e4m3_to_d(0x38), 1);
    cr_expect_eq(f8e4m3_to_d(0x01), ldexp(1, -9));
    cr_expect_eq(f8e4m3_to_d(0xc0), -2);
    cr_expect(isnan(f8e4m3_to_d(0x7f)) && isnan(f8e4m3_to_d(0xff)));
    cr_expect_eq(f8e5m2_to_d(0x7b), 57344);
    cr_expect_eq(f8e5m2_to_d(0x3c), 1);
    cr_expect_eq(f8e5m2_to_d(0x01), ldexp(1, -16));
    cr_expect_eq(f8e5m2_to_d(0xfc), -INFINITY);
    cr_expect(isnan(f8e5m2_to_d(0x7d)));
}

Test(ref, gemm_epilogue) {
    /* A = [1 2; 3 4], B = [5 6; 7 8] stored transposed, C = 1, bias [0.5, -100] */
    double a[] = {1, 2, 3, 4}, bt[] = {5, 7, 6, 8}, c[] = {1, 1, 1, 1}, bias[] = {0.5, -100}, out[4], mag[4];
    ref_gemm_args g = {.m = 2, .n = 2, .k = 2, .a = a, .lda = 2, .b = bt, .ldb = 2, .trans_b = true, .alpha = 2, .beta = -1, .c = c, .ldc = 2,
                       .bias = bias, .activation = TILE_ACT_RELU};
    ref_gemm(&g, out, 2, mag);
    cr_expect_eq(out[0], 2 * 19 - 1 + 0.5);
    cr_expect_eq(out[1], 0); /* 2 * 22 - 1 - 100 < 0 */
    cr_expect_eq(out[3], 0); /* 2 * 50 - 1 - 100 */
    cr_expect_eq(mag[1], 2 * 22 + 1 + 100);
    g.beta = 0, g.c = NULL, g.bias = NULL, g.activation = TILE_ACT_NONE;
    cr_expect_eq(ref_gemm_at(&g, 1, 0, NULL), 2 * (3 * 5 + 4 * 7));
    cr_expect_eq(ref_activation(TILE_ACT_SILU, 0), 0);
    cr_expect(fabs(ref_activation(TILE_ACT_GELU, 1) - 0.8413447460685429) < 1e-15);
}

Test(ref, attention_keys) {
    int64_t b, e;
    ref_attention_keys(0, 4, 10, true, -1, -1, &b, &e); /* bottom-right: query 0 sees keys 0..6 */
    cr_expect(b == 0 && e == 7);
    ref_attention_keys(2, 10, 4, true, -1, -1, &b, &e); /* more queries than keys: the first rows see nothing */
    cr_expect_eq(b, e);
    ref_attention_keys(5, 10, 10, false, 2, 1, &b, &e);
    cr_expect(b == 3 && e == 7);
    ref_attention_keys(9, 10, 10, true, 100, -1, &b, &e);
    cr_expect(b == 0 && e == 10);
}

/* the same problem with contiguous (all 0) and explicit strides; an empty row; one key */
Test(ref, attention_strides_and_empty_rows) {
    seed_rng();
    enum { B = 2, S_Q = 5, S_K = 3, HQ = 4, HK = 2, D = 8 };
    static double q[B * S_Q * HQ * D], k[B * S_K * HK * D], v[B * S_K * HK * D], o1[B * S_Q * HQ * D], o2[B * S_Q * HQ * D];
    double l1[B * HQ * S_Q], l2[B * HQ * S_Q];
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) q[i] = urand();
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) k[i] = urand(), v[i] = urand();
    ref_attention_args a = {.batch = B, .heads_q = HQ, .heads_kv = HK, .head_dim = D, .seq_q = S_Q, .seq_k = S_K, .q = q, .k = k, .v = v,
                            .o = o1, .lse = l1, .causal = true, .window_left = -1, .window_right = -1};
    cr_assert(ref_attention(&a));
    a.o = o2, a.lse = l2;
    a.q_stride[0] = S_Q * HQ * D, a.q_stride[1] = HQ * D, a.q_stride[2] = D;
    a.k_stride[0] = a.v_stride[0] = S_K * HK * D, a.k_stride[1] = a.v_stride[1] = HK * D, a.k_stride[2] = a.v_stride[2] = D;
    a.o_stride[0] = S_Q * HQ * D, a.o_stride[1] = HQ * D, a.o_stride[2] = D;
    a.scale = 1 / sqrt((double)D);
    cr_assert(ref_attention(&a));
    cr_expect(!memcmp(o1, o2, sizeof o1) && !memcmp(l1, l2, sizeof l1), "contiguous and explicit strides differ");
    /* query 0 of 5 against 3 keys sees none; query 2 sees key 0 only */
    for (int d = 0; d < D; d++) cr_expect_eq(o1[d], 0);
    cr_expect_eq(l1[0], -INFINITY);
    int h = 3, g = h / (HQ / HK);
    for (int d = 0; d < D; d++) cr_expect_eq(o1[(2 * HQ + h) * D + d], v[g * D + d]);
    double s = 0;
    for (int d = 0; d < D; d++) s += q[(2 * HQ + h) * D + d] * k[g * D + d];
    cr_expect_eq(l1[h * S_Q + 2], s * a.scale);
    a.heads_q = 3;
    cr_expect(!ref_attention(&a), "heads_q not a multiple of heads_kv");
}

/* a paged cache with a shuffled table equals the dense causal problem with T queries */
Test(ref, paged_matches_dense) {
    seed_rng();
    enum { CTX = 37, T = 3, HQ = 4, HK = 2, D = 16, BS = 8, NB = 6 };
    static double q[T * HQ * D], kd[CTX * HK * D], vd[CTX * HK * D], kc[NB * BS * HK * D], vc[NB * BS * HK * D], od[T * HQ * D], op[T * HQ * D];
    int32_t table[NB] = {4, 0, 5, 2, 1, 3}, ctx[1] = {CTX};
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) q[i] = urand();
    for (int j = 0; j < CTX; j++)
        for (int i = 0; i < HK * D; i++) {
            kd[j * HK * D + i] = urand(), vd[j * HK * D + i] = urand();
            kc[(table[j / BS] * BS + j % BS) * HK * D + i] = kd[j * HK * D + i] / 0.25;
            vc[(table[j / BS] * BS + j % BS) * HK * D + i] = vd[j * HK * D + i] / 0.5;
        }
    ref_attention_args a = {.batch = 1, .heads_q = HQ, .heads_kv = HK, .head_dim = D, .seq_q = T, .seq_k = CTX, .q = q, .k = kd, .v = vd,
                            .o = od, .causal = true, .window_left = -1, .window_right = -1};
    cr_assert(ref_attention(&a));
    ref_paged_args p = {.num_seqs = 1, .heads_q = HQ, .heads_kv = HK, .head_dim = D, .num_tokens = T, .block_size = BS, .num_blocks = NB,
                        .q = q, .o = op, .k_cache = kc, .v_cache = vc, .k_scale = 0.25, .v_scale = 0.5, .block_tables = table,
                        .block_table_stride = NB, .context_lens = ctx};
    cr_assert(ref_paged_decode(&p));
    for (int i = 0; i < T * HQ * D; i++) cr_expect(fabs(od[i] - op[i]) <= 1e-14, "O[%d] = %.17g paged, %.17g dense", i, op[i], od[i]);
    table[3] = NB;
    cr_expect(!ref_paged_decode(&p), "a table entry past num_blocks");
    table[3] = 2, ctx[0] = T - 1;
    cr_expect(!ref_paged_decode(&p), "a context shorter than num_tokens");
}

/* one row of paged decode (what `tile run decode` samples) is the whole call's row, bit
 * for bit, with strided Q and caches; out-of-range rows and bad tables are refused */
Test(ref, paged_row_matches_whole) {
    seed_rng();
    enum { S = 2, CTX = 29, T = 2, HQ = 4, HK = 2, D = 8, BS = 4, NBS = 8, NB = S * NBS, QST = HQ * D + 3 };
    static double q[S * T * QST], kc[NB * BS * HK * D], vc[NB * BS * HK * D], o[S * T * HQ * D], row[D];
    int32_t table[S * NBS], ctx[S] = {CTX, 21};
    for (int i = 0; i < NB; i++) table[i] = (int32_t)((i * 5 + 3) % NB); /* a permutation: 5 and 16 are coprime */
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) q[i] = urand();
    for (size_t i = 0; i < sizeof kc / sizeof kc[0]; i++) kc[i] = urand(), vc[i] = urand();
    ref_paged_args p = {.num_seqs = S, .heads_q = HQ, .heads_kv = HK, .head_dim = D, .num_tokens = T, .block_size = BS, .num_blocks = NB,
                        .q = q, .q_stride = {T * QST, QST, D}, .o = o, .k_cache = kc, .v_cache = vc, .k_scale = 0.25, .v_scale = 2,
                        .block_tables = table, .block_table_stride = NBS, .context_lens = ctx};
    cr_assert(ref_paged_decode(&p));
    for (int s = 0; s < S; s++)
        for (int t = 0; t < T; t++)
            for (int h = 0; h < HQ; h++) {
                for (int d = 0; d < D; d++) row[d] = NAN;
                cr_assert(ref_paged_decode_row(&p, s, t, h, row), "row (%d, %d, %d)", s, t, h);
                for (int d = 0; d < D; d++) {
                    double w = o[((s * T + t) * HQ + h) * D + d];
                    cr_expect(row[d] == w, "O[%d, %d, %d, %d] = %.17g by row, %.17g whole", s, t, h, d, row[d], w);
                }
            }
    cr_expect(!ref_paged_decode_row(&p, S, 0, 0, row), "a sequence past num_seqs");
    cr_expect(!ref_paged_decode_row(&p, 0, T, 0, row), "a token past num_tokens");
    cr_expect(!ref_paged_decode_row(&p, 0, 0, -1, row), "a negative head");
    cr_expect(!ref_paged_decode_row(&p, 0, 0, 0, NULL), "no output row");
    table[NBS + 2] = NB; /* sequence 1's third block: it holds tokens 8..11 of 21 */
    cr_expect(!ref_paged_decode_row(&p, 1, 0, 0, row), "a table entry past num_blocks");
    cr_expect(ref_paged_decode_row(&p, 0, 0, 0, row), "sequence 0 does not read sequence 1's table");
}

Test(ref, router_rules) {
    double l[16], w[8], bias[16] = {0};
    int32_t ids[8];
    bool near;
    for (int e = 0; e < 16; e++) l[e] = 0.5;
    /* equal logits: experts 0..K-1, equal weights */
    ref_moe_router r = {.experts = 16, .topk = 4, .renormalize = true, .routed_scale = 2, .tie_eps = 1e-5};
    cr_assert(ref_moe_route(&r, l, ids, w, &near));
    cr_expect(!near);
    for (int j = 0; j < 4; j++) cr_expect(ids[j] == j && w[j] == 0.5, "rank %d: expert %d weight %g", j, ids[j], w[j]);
    /* grouped, equal: the first experts of groups 0 and 1 (4 groups of 4, keep 2) */
    r.n_group = 4, r.topk_group = 2, r.topk = 8, r.scoring = TILE_MOE_SIGMOID, r.group_top2 = true;
    cr_assert(ref_moe_route(&r, l, ids, w, &near));
    for (int j = 0; j < 8; j++) cr_expect_eq(ids[j], j);
    /* a bias moves the choice, not the weight; close values from different inputs are a near tie */
    r = (ref_moe_router){.experts = 16, .topk = 1, .score_bias = bias, .tie_eps = 1e-5};
    bias[9] = 1;
    cr_assert(ref_moe_route(&r, l, ids, w, &near));
    cr_expect(ids[0] == 9 && w[0] == 1.0 / 16 && !near);
    l[3] = 1.5 + 1e-7;
    cr_assert(ref_moe_route(&r, l, ids, w, &near));
    cr_expect(ids[0] == 3 && near);
    r.tie_eps = 0;
    cr_assert(ref_moe_route(&r, l, ids, w, &near));
    cr_expect(!near);
    r.n_group = 5, r.topk_group = 1;
    cr_expect(!ref_moe_route(&r, l, ids, w, NULL), "16 experts in 5 groups");
    r = (ref_moe_router){.experts = 4, .topk = 5};
    cr_expect(!ref_moe_route(&r, l, ids, w, NULL), "topk > experts");
}

typedef struct Dense {
    const double *w1, *w2;
    int64_t h, i;
    double row[64];
} Dense;
static const double *dense_row(void *u, int which, int64_t e, int64_t r) {
    Dense *d = u;
    const double *src = which == 1 ? d->w1 + (e * 2 * d->i + r) * d->h : d->w2 + (e * d->h + r) * d->i;
    memcpy(d->row, src, sizeof(double) * (size_t)(which == 1 ? d->h : d->i));
    return d->row;
}

/* the weight-row callback equals the dense weights; h given equals h computed; dropped slots add nothing */
Test(ref, moe_forward_entry_points) {
    seed_rng();
    enum { T = 5, E = 4, K = 2, H = 24, I = 40 };
    static double x[T * H], w1[E * 2 * I * H], w2[E * H * I], h[T * K * I], o1[T * H], o2[T * H], o3[T * H], m1[T * H], m2[T * H];
    int32_t ids[T * K] = {0, 3, 2, -1, 1, 1, 3, 7, 0, 2};
    double tw[T * K];
    for (int i = 0; i < T * H; i++) x[i] = urand();
    for (int i = 0; i < E * 2 * I * H; i++) w1[i] = urand() / 4;
    for (int i = 0; i < E * H * I; i++) w2[i] = urand() / 4;
    for (int s = 0; s < T * K; s++) tw[s] = fabs(urand());
    ref_moe_args a = {.tokens = T, .hidden = H, .inter = I, .experts = E, .topk = K, .x = x, .w1 = w1, .w2 = w2, .topk_ids = ids,
                      .topk_weights = tw};
    cr_assert(ref_moe_forward(&a, o1, H, m1));
    Dense d = {w1, w2, H, I, {0}};
    ref_moe_args b = a;
    b.w1 = b.w2 = NULL, b.weight_row = dense_row, b.user = &d;
    for (int t = 0; t < T; t++) cr_assert(ref_moe_token(&b, t, o2 + t * H, m2 + t * H));
    cr_expect(!memcmp(o1, o2, sizeof o1) && !memcmp(m1, m2, sizeof m1), "the callback changed the result");
    for (int s = 0; s < T * K; s++)
        for (int i = 0; i < I && ids[s] >= 0 && ids[s] < E; i++) {
            double g = ref_dot(H, x + s / K * H, 1, w1 + (ids[s] * 2 * I + i) * H, 1, NULL);
            double u = ref_dot(H, x + s / K * H, 1, w1 + (ids[s] * 2 * I + I + i) * H, 1, NULL);
            h[s * I + i] = g / (1 + exp(-g)) * u;
        }
    b = a, b.h = h;
    cr_assert(ref_moe_forward(&b, o3, H, NULL));
    cr_expect(!memcmp(o1, o3, sizeof o1), "the given h changed the result");
    /* token 3: slot 7 (expert 7) is out of range, only slot 6 counts */
    double one[H] = {0};
    ids[7] = -1;
    cr_assert(ref_moe_token(&a, 3, one, NULL));
    cr_expect(!memcmp(one, o1 + 3 * H, sizeof one));
    a.ldx = H - 1;
    cr_expect(!ref_moe_forward(&a, o1, H, NULL), "ldx < hidden");
}

Test(ref, moe_scale_layouts) {
    /* W1 of inter 136, hidden 320: gate rows 0..135 in row blocks 0-1, up rows in 2-3; 3 column blocks */
    cr_expect_eq(ref_moe_scale_count(TILE_MOE_SCALES_BLOCK128, 2, 272, 320, 136), 2 * 4 * 3);
    cr_expect_eq(ref_moe_scale_index(TILE_MOE_SCALES_BLOCK128, 272, 320, 136, 0, 135, 300), 1 * 3 + 2);
    cr_expect_eq(ref_moe_scale_index(TILE_MOE_SCALES_BLOCK128, 272, 320, 136, 0, 136, 0), 2 * 3);
    cr_expect_eq(ref_moe_scale_index(TILE_MOE_SCALES_BLOCK128, 272, 320, 136, 1, 271, 128), (4 + 3) * 3 + 1);
    cr_expect_eq(ref_moe_scale_count(TILE_MOE_SCALES_CHANNEL, 2, 272, 320, 136), 544);
    cr_expect_eq(ref_moe_scale_index(TILE_MOE_SCALES_CHANNEL, 272, 320, 136, 1, 5, 300), 277);
    cr_expect_eq(ref_moe_scale_count(TILE_MOE_SCALES_NONE, 2, 272, 320, 136), 0);
}

Test(ref, norm_and_gated) {
    /* rmsnorm of (3, 4) with eps 0: rms = sqrt(12.5), y = z / rms * w */
    double z[2] = {3, 4}, w[2] = {1, 2}, y[2];
    ref_rmsnorm(2, z, w, 0, y);
    cr_assert(fabs(y[0] - 3 / sqrt(12.5)) < 1e-15 && fabs(y[1] - 8 / sqrt(12.5)) < 1e-15);
    ref_rmsnorm(2, (double[]){0, 0}, w, 1e-6, y); /* a zero row stays zero */
    cr_assert(y[0] == 0 && y[1] == 0);
    /* layernorm of (3, 4): mean 3.5, var 0.25, (z - mean) / 0.5 = (-1, 1), times w, plus b */
    ref_layernorm(2, z, w, (double[]){10, 20}, 0, y);
    cr_assert(y[0] == 9 && y[1] == 22, "%g %g", y[0], y[1]);
    ref_layernorm(2, z, w, NULL, 0, y);
    cr_assert(y[0] == -1 && y[1] == 2);
    cr_assert(fabs(ref_gated(TILE_GATED_SILU, 1, 2) - 2 / (1 + exp(-1.0))) < 1e-15);
    cr_assert(fabs(ref_gated(TILE_GATED_GELU, 1, 2) - 0.8413447460685429 * 2) < 1e-14); /* Phi(1) */
    cr_assert(fabs(ref_gated(TILE_GATED_GELU_TANH, 1, 2) - 0.8411919906082768 * 2) < 1e-14);
    cr_assert(ref_quant_scale(127, 127) == 1 && ref_quant_scale(0, 448) == 1 / (448.0 * 512));
}
