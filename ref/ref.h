/* ref.h - float64 references for the shipped kernels (GEMM, attention, paged decode,
 * MoE router and expert MLP, RMSNorm, LayerNorm, gated activations, RoPE), for the tests, the benchmarks and `tile run`.
 *
 * Plain doubles in, doubles out: the caller widens its f16/bf16/f8 data exactly
 * (support/hostfloat.h) and compares the device's result with what comes back,
 * under a tolerance of its own.  Where a tolerance needs the size of the terms
 * that were summed, the functions also return `mag` (the sum of their absolute
 * values).  Sums run in index order, so a result does not depend on which
 * entry point computed it.
 *
 * Problems too large to widen whole (a benchmark's 16k-token prefill, 22 GB of
 * expert weights) are checked a row at a time: ref_attention_row and the MoE
 * functions read their operands through a callback that returns one row.
 * Checks that sample a few rows of a large output (`tile run`) compute just
 * those: ref_attention_keys with ref_attention_row, ref_paged_decode_row,
 * ref_gemm_at, ref_moe_token.
 *
 * Nothing here allocates but the MoE functions (a little scratch, freed); no
 * global state.  The whole-tensor functions check what they can see (sizes that
 * fit together, sequence offsets, block-table entries, context lengths) and
 * return false instead of reading past it; buffer lengths are the caller's. */
#ifndef TILE_REF_H
#define TILE_REF_H

#include <stdbool.h>
#include <stdint.h>

#include "include/tile/tile.h"

/* ================================ GEMM ================================ */

/* act(x) as the GEMM epilogue computes it: relu, gelu (erf form), silu = x / (1 + e^-x) */
double ref_activation(tile_activation act, double x);

/* sum_p x[p * incx] y[p * incy] in order of p; *mag (if mag) = sum |x y| */
double ref_dot(int64_t n, const double *x, int64_t incx, const double *y, int64_t incy, double *mag);

typedef struct ref_gemm_args {
    int64_t m, n, k;
    const double *a; int64_t lda; bool trans_a; /* A(i, p) = a[i * lda + p]; with trans_a a[p * lda + i] */
    const double *b; int64_t ldb; bool trans_b; /* B(p, j) = b[p * ldb + j]; with trans_b b[j * ldb + p] */
    double alpha, beta;
    const double *c; int64_t ldc;               /* C(i, j) = c[i * ldc + j]; not read when beta == 0 (may be NaN or NULL) */
    const double *bias;                         /* [n], or NULL */
    tile_activation activation;
} ref_gemm_args;

/* D(i, j) = act(alpha * (A B)(i, j) + beta * C(i, j) + bias[j]); *mag (if mag) = the
 * magnitude of what goes into act: |alpha| sum |A B| + |beta C| + |bias| */
double ref_gemm_at(const ref_gemm_args *g, int64_t i, int64_t j, double *mag);
/* every D(i, j) into out[i * ldo + j], and its magnitude into mag[i * ldo + j] (mag may be NULL) */
void ref_gemm(const ref_gemm_args *g, double *out, int64_t ldo, double *mag);

/* ============================== attention ============================== */

/* Keys visible to query i of a sequence of len_q queries and len_k keys: [*begin, *end)
 * (empty: begin == end).  The diagonal is bottom-right aligned, i + len_k - len_q;
 * causal hides keys past it; window_left / window_right (-1: unbounded) hide keys
 * further than that before / after it. */
void ref_attention_keys(int64_t i, int64_t len_q, int64_t len_k, bool causal, int64_t window_left, int64_t window_right,
                        int64_t *begin, int64_t *end);

/* Row j of K (value == 0) or V (value == 1) of one (sequence, KV head): head_dim doubles.
 * The pointer is read before the next call, so one scratch row may serve both. */
typedef const double *(*ref_kv_row_fn)(void *user, int64_t j, int value);

/* One query row: o[d] = sum_j p_j V(j)[d] / sum_j p_j over the keys j in [begin, end),
 * p_j = exp(scale q.K(j) - max); returns the row's log-sum-exp (natural log, scale
 * included).  A row without keys gets o = 0 and -INFINITY. */
double ref_attention_row(int64_t head_dim, const double *q, double scale, int64_t begin, int64_t end, ref_kv_row_fn row, void *user,
                         double *o);

/* tile_attention_args with host tensors: O = softmax(scale Q K^T + mask) V and the LSE */
typedef struct ref_attention_args {
    int64_t batch, heads_q, heads_kv, head_dim; /* heads_q a multiple of heads_kv: query head h reads KV head h / (heads_q / heads_kv) */
    int64_t seq_q, seq_k;                       /* tokens per sequence (unused with cu_seqlens) */
    const int32_t *cu_seqlens_q, *cu_seqlens_k; /* both NULL, or [batch + 1] token offsets of packed sequences */
    const double *q, *k, *v;                    /* [batch, seq, heads, head_dim] */
    double *o;
    int64_t q_stride[3], k_stride[3], v_stride[3], o_stride[3]; /* batch, token, head; all three 0: contiguous.
                                                                    The batch stride is unused with cu_seqlens */
    double *lse;                                /* NULL, or [batch, heads_q, seq_q]; with cu_seqlens [heads_q, total_q] */
    double scale;                               /* 0: 1 / sqrt(head_dim) */
    bool causal;                                /* bottom-right: key j visible to query i when j <= i + len_k - len_q */
    int64_t window_left, window_right;          /* -1: unbounded */
} ref_attention_args;
/* Every row of O (and LSE); false (nothing written) when the sizes do not fit together. */
bool ref_attention(const ref_attention_args *a);

/* tile_paged_attention_args with host tensors: the num_tokens newest tokens of each
 * sequence attend to its context through the block table, causal among themselves
 * (token t of T sees the keys 0 .. context_lens[s] - T + t), or with a tree mask: every key
 * before the new tokens, and the new tokens its mask bits name. */
typedef struct ref_paged_args {
    int64_t num_seqs, heads_q, heads_kv, head_dim, num_tokens, block_size;
    int64_t num_blocks;                         /* blocks in each cache: every table entry read is checked against it */
    const double *q; int64_t q_stride[3];       /* [num_seqs, num_tokens, heads_q, head_dim]: sequence, token, head */
    double *o; int64_t o_stride[3];             /* likewise */
    const double *k_cache, *v_cache;            /* [num_blocks, block_size, heads_kv, head_dim] */
    int64_t k_stride[3], v_stride[3];           /* block, slot, head */
    double k_scale, v_scale;                    /* a key is k_cache * k_scale, a value v_cache * v_scale
                                                   (f8 caches: the codes' values and their scales); 0 means 1 */
    const int32_t *block_tables;                /* [num_seqs, block_table_stride] */
    int64_t block_table_stride;
    const int32_t *context_lens;                /* [num_seqs], each at least num_tokens */
    double scale;                               /* 0: 1 / sqrt(head_dim) */
    const int32_t *tree_mask;                   /* NULL: causal among the new tokens; else [num_seqs, num_tokens]:
                                                   token t sees new token j when bit j of its entry is set */
} ref_paged_args;
/* Every row of O; false (nothing written) when sizes, lengths or table entries are out of range. */
bool ref_paged_decode(const ref_paged_args *a);
/* One row of O, (seq, token, head), into o[head_dim] (a->o is not read), for checks that
 * sample rows; the same bits as ref_paged_decode's.  False (nothing written) when the
 * row is out of range or its sequence's length or table entries are. */
bool ref_paged_decode_row(const ref_paged_args *a, int64_t seq, int64_t token, int64_t head, double *o);

/* ================================= MoE ================================= */

/* The router of tile_moe_args (docs/moe.md) for one token */
typedef struct ref_moe_router {
    int64_t experts, topk;
    tile_moe_scoring scoring;
    bool renormalize;
    int64_t n_group, topk_group; /* grouped top-k when n_group > 1 */
    bool group_top2;             /* a group's score: its best two choice values (or its best) */
    const double *score_bias;    /* [experts] added to the choice value, or NULL */
    double routed_scale;         /* 0 means 1 */
    double tie_eps;              /* see ref_moe_route; 0: never */
} ref_moe_router;

/* ids[topk] and weights[topk] in rank order.  The choice value is the logit (softmax)
 * or the sigmoid, plus the bias; the weights are the unbiased scores (softmax over all
 * experts, or sigmoids), renormalized over the selection and scaled.  Ties go to the
 * lowest expert and the lowest group.  *near_tie (if near_tie) is set when a decision
 * compared values closer than tie_eps that come from different (logit, bias) inputs:
 * rounding on the device may take either side.  False on inconsistent sizes. */
bool ref_moe_route(const ref_moe_router *r, const double *logits, int32_t *ids, double *weights, bool *near_tie);

/* Row r of W1[e] ([hidden]; which == 1) or W2[e] ([inter]; which == 2), read before the next call */
typedef const double *(*ref_weight_row_fn)(void *user, int which, int64_t e, int64_t r);

/* The expert MLP of tile_moe_args, from dequantized weights (f8 code * scale) */
typedef struct ref_moe_args {
    int64_t tokens, hidden, inter, experts, topk;
    const double *x; int64_t ldx;                        /* [tokens, hidden], row stride ldx (0: hidden) */
    const double *w1, *w2;                               /* [experts, 2 * inter, hidden] (gate rows, then up rows), [experts, hidden, inter] */
    ref_weight_row_fn weight_row; void *user;            /* instead of w1 and w2 when set */
    const int32_t *topk_ids; const double *topk_weights; /* [tokens, topk]; ids outside [0, experts) are skipped */
    const double *h;                                     /* NULL, or [tokens * topk, inter]: each slot's h as given
                                                            (the device's, to check the down projection alone) */
} ref_moe_args;
/* Token t: adds sum_j w_j (W2[e_j] h_j)[c], h_j = silu(W1g[e_j] x_t) * (W1u[e_j] x_t), to
 * out[c] and sum_j |w_j| sum_i |h_j[i] W2[e_j][c][i]| to mag[c] (if mag), c < hidden.
 * False when the sizes are inconsistent or memory runs out. */
bool ref_moe_token(const ref_moe_args *a, int64_t t, double *out, double *mag);
/* Every token, added to out[t * ldo + c] and mag[t * ldo + c] (mag may be NULL) */
bool ref_moe_forward(const ref_moe_args *a, double *out, int64_t ldo, double *mag);

/* The f8 weights' scales (tile_moe_scales) of a matrix [experts, rows, cols] whose rows
 * are blocked in segments of `seg` (W1: inter, gate and up apart; W2: rows): how many,
 * and which one weight [e, r, c] is multiplied by. */
int64_t ref_moe_scale_count(tile_moe_scales layout, int64_t experts, int64_t rows, int64_t cols, int64_t seg);
int64_t ref_moe_scale_index(tile_moe_scales layout, int64_t rows, int64_t cols, int64_t seg, int64_t e, int64_t r, int64_t c);

/* ====================== normalization, gated activations ====================== */

/* RMSNorm of one row: y[i] = z[i] / sqrt(mean(z^2) + eps) * w[i], i < n.  (The fused
 * residual add is the caller's: z = x + residual rounded to the storage type.) */
void ref_rmsnorm(int64_t n, const double *z, const double *w, double eps, double *y);
/* LayerNorm of one row: y[i] = (z[i] - mean) / sqrt(var + eps) * w[i] + (b ? b[i] : 0), var the mean
 * of squared deviations. */
void ref_layernorm(int64_t n, const double *z, const double *w, const double *b, double eps, double *y);
/* act(gate) * up as tile_gated_activation: silu, gelu (erf), gelu_tanh */
double ref_gated(tile_gated_act act, double gate, double up);
/* Per-token dynamic quantization scale of a row whose largest |y| is amax:
 * max(amax / qmax, 1 / (qmax * 512)), qmax 448 (f8e4m3) or 127 (i8). */
double ref_quant_scale(double amax, double qmax);
/* x rounded to f8e4m3 as the kernels' casts round: the nearest finite value, ties to the even code,
 * saturating at +-448 (NaN stays NaN).  The value, not the code. */
double ref_round_f8e4m3(double x);

/* ================================ RoPE ================================ */

/* Rotary embedding of one head as tile_rope_kv_append computes it: pair i < rot_dim / 2 is the
 * columns (i, i + rot_dim / 2) (TILE_ROPE_NEOX) or (2 i, 2 i + 1) (TILE_ROPE_GPTJ), rotated to
 * x1 cos[i] - x2 sin[i] and x2 cos[i] + x1 sin[i]; columns rot_dim .. head_dim are copied.  y may
 * not be x.  mag[d] (if mag) = |x1 cos| + |x2 sin| of column d's sum (|x[d]| for a copied one). */
void ref_rope(tile_rope_style style, int64_t head_dim, int64_t rot_dim, const double *x, const double *cos, const double *sin, double *y,
              double *mag);

/* ================= sampling, speculative decoding (ref/sample.c) ================= */

/* Philox-4x32-10 (Salmon et al.; Random123's philox4x32_10): out = the 4 words of counter ctr under key. */
void ref_philox4x32(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);
/* Words 0 and 1 of the draws of tile_sample / tile_spec_verify: key (seed lo, seed hi), counter
 * (offset lo, offset hi, stream, draw). */
void ref_sample_words(uint64_t seed, uint64_t offset, uint32_t stream, uint32_t draw, uint32_t w[2]);
/* The uniform of a word: (w >> 8) * 2^-24, in [0, 1). */
double ref_unit(uint32_t w);

/* argmax of x[0 .. n), ties to the lowest index */
int64_t ref_argmax(int64_t n, const double *x);

typedef struct ref_sample_params {
    double temperature; /* > 0 (greedy is ref_argmax) */
    int64_t top_k;      /* 0 or >= vocab: off */
    double top_p;       /* 1: off */
    double min_p;       /* 0: off */
    double eps;         /* min_p and top_p decisions closer than eps (relative to min_p, to the mass) are flagged */
} ref_sample_params;
/* tile_sample's distribution of one row: probs[i] = the filtered, renormalized probability of token i
 * (0 outside the kept set): softmax(x / T); min_p keeps e_i = exp((x_i - max x) / T) >= min_p; top_k keeps
 * x_i >= the k-th largest x; top_p the smallest set {x_i >= t} of those holding top_p of their mass.
 * Returns the number kept; *near (if near) is set when a min_p or top_p decision was within eps (then the
 * device, in f32, may keep a slightly different set).  Allocates an index array (false: out of memory). */
bool ref_sample_probs(int64_t vocab, const double *x, const ref_sample_params *p, double *probs, int64_t *kept, bool *near);
/* The token drawn by u in [0, 1): the first i whose running sum of probs exceeds u (the last token with
 * probs > 0 when rounding leaves u above the total).  *lo, *hi: the tokens the draw would give for u - eps
 * and u + eps (equal to the result unless u lies within eps of a boundary). */
int64_t ref_sample_pick(int64_t vocab, const double *probs, double u, double eps, int64_t *lo, int64_t *hi);

/* tile_spec_verify on one sequence: draft[nd], q [nd][vocab], p [nd + 1][vocab]; out[nd + 1] gets the
 * accepted drafts, the replacement or bonus, then -1; returns the accepted count.  *near is set when an
 * acceptance test or a draw was within eps of going the other way (u q vs p, or a CDF boundary). */
int64_t ref_spec_verify(int64_t nd, int64_t vocab, const int32_t *draft, const double *q, const double *p, bool greedy,
                        uint64_t seed, uint64_t offset, uint32_t stream, double eps, int32_t *out, bool *near);

#endif
