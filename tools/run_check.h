/* run_check.h - random inputs and the checks of `tile run` and `tile tune gemm`.
 *
 * Everything the CLI needs to check a result lives here, apart from the
 * commands (which allocate, launch, copy back and print): the random
 * inputs in the device's format together with their exact values, and the
 * comparison of an output with the float64 references of ref/ (GEMM,
 * attention prefill and paged decode, the MoE router and layer, RMSNorm and
 * gated activations) under the
 * CLI's tolerances, each returning its worst error.  No reference math is
 * written here: this file only widens the device's outputs, hands ref/ the
 * exact inputs and compares.
 *
 * The generator is a xorshift64 with a fixed seed: a command draws its
 * inputs in a fixed order, so two runs see the same data. */
#ifndef TILE_TOOLS_RUN_CHECK_H
#define TILE_TOOLS_RUN_CHECK_H

#include "include/tile/tile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- random inputs ---- */
typedef struct CheckRng {
    uint64_t s;
} CheckRng;

void check_rng_init(CheckRng *r);
double check_urand(CheckRng *r);     /* uniform in [-1, 1) */
uint8_t check_rng_byte(CheckRng *r); /* the next draw's bits 24..31: a random f8 code */

/* Bytes of one element as the CLI stores it (f8 and i32 inputs: see check_fill). */
/* Store v in buf[i] in type t and return the value stored (i8 and i32 hold floor(v * 100)). */
double check_fill(tile_dtype t, void *buf, size_t i, double v);
double check_get(tile_dtype t, const void *buf, size_t i);

/* ---- GEMM: C = op(A) op(B) ---- */
typedef struct CheckGemm {
    int64_t m, n, k;
    int trans_a, trans_b;
    tile_dtype in, out;
    const double *a, *b; /* exact values of A [m,k] (trans_a: [k,m]) and B [k,n] (trans_b: [n,k]) */
} CheckGemm;

/* max over C (row-major [m,n] of type out) of |error| / tolerance: > 1 fails, NaN counts as worst. */
double check_gemm(const CheckGemm *g, const void *c);

/* ---- attention ---- */
/* Tolerance on |error| of an attention output of this type. */
double check_attention_tolerance(tile_dtype t);

typedef struct CheckAttention {
    int64_t batch, seq_q, seq_k, heads, heads_kv, head_dim;
    int causal;
    tile_dtype dtype;
    const double *q, *k, *v; /* exact values: q [b, seq_q, heads, d], k and v [b, seq_k, heads_kv, d] */
} CheckAttention;

/* Max |error| over up to 256 rows spread over batch, heads and sequence of
 * `o` (same layout as q, type dtype); *checked: the rows compared. */
double check_attention(const CheckAttention *a, const void *o, int64_t *checked);

typedef struct CheckDecode {
    int64_t seqs, tokens, heads, heads_kv, head_dim;
    int64_t block_size, num_blocks, table_stride;
    tile_dtype dtype;
    const double *q;          /* [seqs, tokens, heads, d] */
    const double *k, *v;      /* the paged cache: [block, slot, heads_kv, d]; an f8 cache's code values */
    double k_scale, v_scale;  /* a key is k * k_scale, a value v * v_scale (1 without f8) */
    const int32_t *table;     /* [seqs, table_stride] block numbers */
    const int32_t *lens;      /* [seqs] context lengths; the new tokens are each sequence's last `tokens` */
    const int32_t *tree_mask; /* NULL: the new tokens causal among themselves; else [seqs, tokens] (tree_mask) */
} CheckDecode;

/* Max |error| over up to 256 rows of `o` (layout of q, type dtype). */
double check_decode(const CheckDecode *a, const void *o, int64_t *checked);

/* ---- mixture of experts ---- */
/* One weight matrix [E, R, C] (R split into segments of `seg` rows for block
 * scales): 16-bit values, or random f8e4m3 codes times random scales. */
typedef struct CheckMoeWeights {
    void *w;
    float *s;     /* laid out as ref_moe_scale_index says */
    size_t n, ns; /* elements, scales */
    int64_t R, C, seg;
    tile_dtype t;
    tile_moe_scales sc;
} CheckMoeWeights;

/* 0, or 3 when out of host memory (maximum |w| about `amp`). */
int check_moe_weights_make(CheckMoeWeights *m, CheckRng *r, tile_dtype t, tile_moe_scales sc, int64_t E, int64_t R, int64_t C,
                           int64_t seg, double amp);
double check_moe_weight(const CheckMoeWeights *m, int64_t e, int64_t r, int64_t c); /* dequantized [e, r, c] */
void check_moe_weights_free(CheckMoeWeights *m);

typedef struct CheckMoe {
    int64_t tokens, experts, topk, hidden, inter;
    tile_dtype act;
    const double *x;      /* exact activations [tokens, hidden] */
    const float *logits;  /* [tokens, experts] */
    const CheckMoeWeights *w1, *w2; /* gate and up [E, 2 inter, hidden]; down [E, hidden, inter] */
    int check_tokens;     /* at most this many tokens, spread over the batch */
} CheckMoe;

/* Softmax routing renormalized over the top-k, SiLU(gate) * up, down: the
 * routing `ids` [tokens, topk] must be a top-k of the logits, in any order,
 * an exact tie going either way (else *routing_ok = 0 and INFINITY); returns
 * the max over `out` [tokens, hidden] of |error| / tolerance (> 1 fails). */
double check_moe(const CheckMoe *m, const int32_t *ids, const float *out, int *routing_ok, int64_t *checked);

/* ---- RMSNorm and gated activations (docs/kernels.md) ---- */
typedef struct CheckRows {
    int64_t tokens, n;  /* out is [tokens, n], contiguous */
    tile_dtype dtype;   /* f16 or bf16: out's type when not quantized */
    tile_dtype quant;   /* TILE_F32 (none), TILE_F8E4M3 or TILE_I8: out's codes, with scales [tokens] */
    int64_t group;      /* 0, or quantized per group of columns: scales [tokens, cdiv(n, group)] */
} CheckRows;

/* RMSNorm (layer: LayerNorm, bias b [n] or NULL) of z [tokens, n] (exact; the residual sum already
 * rounded) with weight w [n]: max over out of its error past its own rounding (half a step of the output)
 * as a fraction of the f32 arithmetic's allowance, and over the scales of their error as a fraction of
 * 1e-4 relative (> 1 fails, NaN counts as worst; run_check.c, rows_row_error). */
double check_norm(const CheckRows *c, bool layer, const double *z, const double *w, const double *b, double eps, const void *out,
                  const float *scales);
/* act(gate) * up of x [tokens, 2 n] (exact): as check_rmsnorm. */
double check_gated(const CheckRows *c, tile_gated_act act, const double *x, const void *out, const float *scales);

#endif
