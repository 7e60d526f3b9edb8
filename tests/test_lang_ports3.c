/* test_lang_ports3.c - a third batch of kernels from inference and training code, written from docs/language.md the
 * way a Triton user ports them (Triton's names and idioms, the doc's forms for the rest), compiled for sm_80 and (where
 * a dot is involved, and mostly elsewhere too) sm_90a, and run on the emulator against float64 (or exact integer)
 * references at sizes that are not multiples of the tiles, outputs poisoned first.  What they exercise beyond the
 * first two batches (test_lang_ports.c, test_lang_ports_more.c): a Welford layer norm whose per-lane (mean, m2, count)
 * states are merged by `reduce` of a 3-tuple with a combine fn, the output type a `const` type parameter; per-token
 * int8 quantization, symmetric and with a zero point (rint, clamp, saturating casts, i64 row offsets, constexpr
 * branches declaring names); a GPTQ-style w4a16 GEMM that unpacks 4-bit weights and zero points by shifts inside the
 * k loop (a group size that is not a power of two) and feeds `dot`; an argsort of float rows through `sort` of packed
 * i64 keys (floats made monotone integers, the index in the low word, ascending and descending, stable) beside
 * `topk(..., return_indices=true)`; a bincount with `histogram` merged by atomics, weighted bins by f32 atomics and a
 * counting sort's slots from the old values that `atomic_add` returns; FlashAttention-2's causal backward (a delta
 * pre-pass, dK/dV per key block and dQ per query block, transposed dots); decode attention over an fp8 (e4m3)
 * KV cache with per-tensor scales, grouped query heads padded for `dot`, a `while` loop over a per-sequence length;
 * a block-pointer GEMM with a column-major operand (also launched through the C API with tensor maps); a w8a8 int8
 * GEMM; a multi-tensor AdamW step reading tensors' addresses from device tables; a persistent GEMM fed by an atomic
 * tile queue; MXFP4 quantization (reshape/split packing) feeding dot_scaled; and a CSR SpMM whose loop bounds come from
 * memory.  The GEMMs and the attention
 * backward also run with 64-row tiles, which sm_90a computes with warpgroup (wgmma) dots. */
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

static const char *const archs[] = {"sm_80", "sm_90a"};

/* ---- layer norm forward with Welford statistics (Inductor's welford_reduce / FlagGems' layer_norm): each lane keeps
 * (mean, m2, count) over the column chunks it sees; the lanes are merged by reduce() of the 3-tuple with Chan's
 * combine; mean and rstd are outputs (for the backward).  Rows have a large common offset, where a one-pass sum of
 * squares would cancel. ---- */
static const char *welford_src =
    "fn welford_combine(mean_1, m2_1, weight_1, mean_2, m2_2, weight_2) {\n"
    "    let delta = mean_2 - mean_1;\n"
    "    let new_weight = weight_1 + weight_2;\n"
    "    let w2_over_w = where(new_weight == 0.0, 0.0, weight_2 / new_weight);\n"
    "    return (mean_1 + delta * w2_over_w, m2_1 + m2_2 + delta * delta * weight_1 * w2_over_w, new_weight);\n"
    "}\n"
    "\n"
    "kernel layer_norm_fwd(X: *f32, Y: *OT, W: *f32, B: *f32, Mean: *f32, Rstd: *f32, stride: i64, N: i32, eps: f32,\n"
    "                      const OT = f32, const BLOCK_N: i32 = 128) {\n"
    "    let row = program_id(0);\n"
    "    let x_row = X + row * stride;\n"
    "    let mean = zeros([BLOCK_N], f32);\n"
    "    let m2 = zeros([BLOCK_N], f32);\n"
    "    let weight = zeros([BLOCK_N], f32);\n"
    "    for off in range(0, N, BLOCK_N) {\n"
    "        let cols = off + arange(0, BLOCK_N);\n"
    "        let mask = cols < N;\n"
    "        let x = load(x_row + cols, mask, 0.0);\n"
    "        let w_new = weight + 1.0;\n"
    "        let delta = x - mean;\n"
    "        let mean_new = mean + delta / w_new;\n"
    "        m2 = where(mask, m2 + delta * (x - mean_new), m2);\n"
    "        mean = where(mask, mean_new, mean);\n"
    "        weight = where(mask, w_new, weight);\n"
    "    }\n"
    "    let mu, s2, cnt = reduce((mean, m2, weight), 0, welford_combine);\n"
    "    let rstd = 1.0 / sqrt(s2 / cnt + eps);\n"
    "    store(Mean + row, mu);\n"
    "    store(Rstd + row, rstd);\n"
    "    for off in range(0, N, BLOCK_N) {\n"
    "        let cols = off + arange(0, BLOCK_N);\n"
    "        let mask = cols < N;\n"
    "        let x = load(x_row + cols, mask, 0.0);\n"
    "        let y = (x - mu) * rstd * load(W + cols, mask) + load(B + cols, mask);\n"
    "        store(Y + row * stride + cols, y as OT, mask);\n"
    "    }\n"
    "}\n";

Test(lang_ports3, welford_layer_norm_forward) {
    seed_rng();
    enum { R = 5, N = 300, S = 320 };
    static float x[R * S], w[N], b[N], y32[R * S];
    static uint16_t y16[R * S];
    float mean[R], rstd[R];
    for (int i = 0; i < R * S; i++) x[i] = (float)(1000.0 + urand() * (1 + i % 3));
    for (int i = 0; i < N; i++) w[i] = (float)(1 + 0.5 * urand()), b[i] = (float)urand();
    float eps = 1e-5f;
    for (int a = 0; a < 2; a++)
        for (int bf = 0; bf < 3; bf++) { /* f32 out; bf16 out; bf16 out from a 512 block over 8 warps (one chunk, 212 lanes
                                            * of weight 0 merged across warps) */
            K k;
            const char *defs[] = {bf ? "OT=bf16" : "OT=f32", bf == 2 ? "BLOCK_N=512" : "BLOCK_N=128", bf == 2 ? "num_warps=8" : "num_warps=4",
                                  NULL};
            load_with(&k, welford_src, "layer_norm_fwd", archs[a], defs, NULL);
            uint64_t dx = upload(&k, x, sizeof x), dw = upload(&k, w, sizeof w), db = upload(&k, b, sizeof b),
                     dy = poisoned(&k, bf ? sizeof y16 : sizeof y32), dm = poisoned(&k, sizeof mean), dr = poisoned(&k, sizeof rstd);
            int64_t stride = S;
            int n = N;
            launch3(&k, NULL, R, 1, 1, (void *[]){&dx, &dy, &dw, &db, &dm, &dr, &stride, &n, &eps});
            if (bf) download(&k, y16, dy, sizeof y16);
            else download(&k, y32, dy, sizeof y32);
            download(&k, mean, dm, sizeof mean);
            download(&k, rstd, dr, sizeof rstd);
            for (int r = 0; r < R; r++) {
                double mu = 0, var = 0;
                for (int j = 0; j < N; j++) mu += x[r * S + j];
                mu /= N;
                for (int j = 0; j < N; j++) var += (x[r * S + j] - mu) * (x[r * S + j] - mu);
                var /= N;
                double rs = 1 / sqrt(var + eps);
                /* f32 Welford: the mean within a few ulp of 1000; m2's terms are O(1) products, each exact to 2^-24 */
                cr_assert(fabs(mean[r] - mu) <= 4e-7 * fabs(mu), "%s mean[%d] = %.9g, want %.9g (seed %llu)", archs[a], r, mean[r], mu,
                          (unsigned long long)seed);
                /* x - mean loses the digits of 1000 (2^-14 absolute on deviations of ~1): rstd to ~1e-4 relative */
                cr_assert(fabs(rstd[r] - rs) <= 2e-4 * rs, "%s rstd[%d] = %.9g, want %.9g (seed %llu)", archs[a], r, rstd[r], rs,
                          (unsigned long long)seed);
                for (int j = 0; j < N; j++) {
                    double want = (x[r * S + j] - mu) * rs * w[j] + b[j];
                    double got = bf ? bf16_to_d(y16[r * S + j]) : y32[r * S + j];
                    /* bf16's half ulp; the mean's error (bounded above) times rstd * w; rstd's relative error on the
                     * normalized term */
                    double tol = (bf ? 0x1p-8 : 1e-6) * fabs(want) + 4e-7 * fabs(mu) * rs * fabs(w[j]) +
                                 2e-4 * fabs((x[r * S + j] - mu) * rs * w[j]) + 1e-6;
                    cr_assert(fabs(got - want) <= tol, "%s %s %s y[%d][%d] = %.9g, want %.9g (seed %llu)", archs[a], defs[0], defs[1], r, j, got,
                              want, (unsigned long long)seed);
                }
                for (int j = N; j < S && bf; j++) cr_assert_eq(y16[r * S + j], 0xffff, "padding written");
            }
            unload(&k);
        }
}

/* ---- per-token int8 quantization (vLLM's dynamic_scaled_int8_quant and its azp form): a row's absmax (or min and
 * max) over column chunks, then q = clamp(rint(x / scale) [+ azp], -128, 127) as i8.  The scale's division and the
 * rounding are IEEE operations, so the kernel is bit-exact against the same f32 steps in C; the float64 check is that
 * every code is the nearest one to x / scale (within half a step, plus an ulp of the quotient). ---- */
static const char *quant_src =
    "kernel quant_int8(x_ptr: *f16, q_ptr: *i8, scale_ptr: *f32, azp_ptr: *i32, stride: i64, n: i32,\n"
    "                  const SYMMETRIC: i1 = true, const BLOCK: i32 = 256) {\n"
    "    let row = program_id(0) as i64;\n"
    "    let x_row = x_ptr + row * stride;\n"
    "    let q_row = q_ptr + row * n;\n"
    "    let cols = arange(0, BLOCK);\n"
    "    if SYMMETRIC {\n"
    "        let amax = zeros([BLOCK], f32);\n"
    "        for off in range(0, n, BLOCK) {\n"
    "            let x = load(x_row + off + cols, mask=off + cols < n, other=0.0) as f32;\n"
    "            amax = maximum(amax, abs(x));\n"
    "        }\n"
    "        let scale = max(amax) / 127.0;\n"
    "    } else {\n"
    "        let lo = full([BLOCK], 1.0 / 0.0, f32);\n"
    "        let hi = full([BLOCK], -1.0 / 0.0, f32);\n"
    "        for off in range(0, n, BLOCK) {\n"
    "            let m = off + cols < n;\n"
    "            let x = load(x_row + off + cols, m) as f32;\n"
    "            lo = where(m, minimum(lo, x), lo);\n"
    "            hi = where(m, maximum(hi, x), hi);\n"
    "        }\n"
    "        let x_min = min(lo, axis=0);\n"
    "        let scale = (max(hi, axis=0) - x_min) / 255.0;\n"
    "        let azp = rint(-128.0 - x_min / scale) as i32;\n"
    "        store(azp_ptr + row, azp);\n"
    "    }\n"
    "    store(scale_ptr + row, scale);\n"
    "    for off in range(0, n, BLOCK) {\n"
    "        let m = off + cols < n;\n"
    "        let x = load(x_row + off + cols, m) as f32;\n"
    "        if SYMMETRIC {\n"
    "            let q = clamp(rint(x / scale), -128.0, 127.0) as i8;\n"
    "        } else {\n"
    "            let q = clamp(rint(x / scale) as i32 + azp, -128, 127) as i8;\n"
    "        }\n"
    "        store(q_row + off + cols, q, m);\n"
    "    }\n"
    "}\n";

Test(lang_ports3, per_token_int8_quantization) {
    seed_rng();
    enum { R = 6, N = 700, S = 768 };
    static uint16_t x[R * S];
    static int8_t q[R * N];
    float scale[R];
    int32_t azp[R];
    for (int r = 0; r < R; r++) {
        double mag = 0.01 * (1 << (2 * r)), shift = r % 2 ? 0.7 * mag : 0; /* asymmetric rows for the azp form */
        for (int j = 0; j < S; j++) x[r * S + j] = f32_to_f16((float)(shift + mag * urand()));
    }
    for (int a = 0; a < 2; a++)
        for (int sym = 0; sym < 2; sym++) {
            K k;
            const char *defs[] = {sym ? "SYMMETRIC=true" : "SYMMETRIC=false", NULL};
            load_with(&k, quant_src, "quant_int8", archs[a], defs, NULL);
            uint64_t dx = upload(&k, x, sizeof x), dq = poisoned(&k, sizeof q), ds = poisoned(&k, sizeof scale),
                     dz = poisoned(&k, sizeof azp);
            int64_t stride = S;
            int n = N;
            launch3(&k, NULL, R, 1, 1, (void *[]){&dx, &dq, &ds, &dz, &stride, &n});
            download(&k, q, dq, sizeof q);
            download(&k, scale, ds, sizeof scale);
            download(&k, azp, dz, sizeof azp);
            for (int r = 0; r < R; r++) {
                float lo = INFINITY, hi = -INFINITY, amax = 0;
                for (int j = 0; j < N; j++) {
                    float v = (float)f16_to_d(x[r * S + j]);
                    lo = fminf(lo, v), hi = fmaxf(hi, v), amax = fmaxf(amax, fabsf(v));
                }
                float s = sym ? amax / 127.0f : (hi - lo) / 255.0f;
                int32_t z = sym ? 0 : (int32_t)rintf(-128.0f - lo / s);
                cr_assert_eq(scale[r], s, "%s %s scale[%d] = %.9g, want %.9g", archs[a], defs[0], r, scale[r], s);
                if (!sym) cr_assert_eq(azp[r], z, "%s azp[%d] = %d, want %d", archs[a], r, azp[r], z);
                else cr_assert_eq(azp[r], -1, "azp written by the symmetric form");
                for (int j = 0; j < N; j++) {
                    float v = (float)f16_to_d(x[r * S + j]);
                    float t = rintf(v / s) + (float)z;
                    int want = t < -128 ? -128 : t > 127 ? 127 : (int)t;
                    cr_assert_eq(q[r * N + j], want, "%s %s q[%d][%d] = %d, want %d (x %.9g, seed %llu)", archs[a], defs[0], r, j,
                                 q[r * N + j], want, v, (unsigned long long)seed);
                    /* float64: the code is the nearest to x / scale + azp, clamped */
                    double exact = (double)v / s + z;
                    double c = exact < -128 ? -128 : exact > 127 ? 127 : exact;
                    cr_assert(fabs(q[r * N + j] - c) <= 0.5 + 1e-6 * fabs(exact), "%s q[%d][%d] = %d for %.9g", archs[a], r, j,
                              q[r * N + j], exact);
                }
            }
            unload(&k);
        }
}

/* ---- a w4a16 GEMM in GPTQ's layout (the Triton kernels of AutoGPTQ / GPTQ-for-LLaMa): B's 4-bit codes are packed
 * eight to an i32 along K ([K/8, N]), the zero points eight to an i32 along N ([K/G, N/8]), one f16 scale per
 * (group, column).  Inside the k loop each packed word is loaded once per K row it covers and its nibble shifted
 * out, the group of each k row found by division (G = 40, not a power of two, and not a multiple of BK), the codes
 * dequantized to f16 and fed to dot with the f16 activations.  M, N and K are not multiples of the tiles. ---- */
static const char *w4a16_src =
    "@num_warps(4)\n"
    "kernel w4a16_gemm(a_ptr: *f16, b_ptr: *i32, c_ptr: *f32, scales_ptr: *f16, zeros_ptr: *i32,\n"
    "                  M: i32, N: i32, K: i32, const G: i32 = 40,\n"
    "                  const BLOCK_M: i32 = 32, const BLOCK_N: i32 = 32, const BLOCK_K: i32 = 32) {\n"
    "    let pid_m = program_id(0);\n"
    "    let pid_n = program_id(1);\n"
    "    let offs_m = pid_m * BLOCK_M + arange(0, BLOCK_M);\n"
    "    let offs_n = pid_n * BLOCK_N + arange(0, BLOCK_N);\n"
    "    let mask_n = offs_n < N;\n"
    "    let zero_shift = (offs_n % 8) * 4;\n"
    "    let acc = zeros([BLOCK_M, BLOCK_N], dtype=f32);\n"
    "    for k0 in range(0, K, BLOCK_K) {\n"
    "        let offs_k = k0 + arange(0, BLOCK_K);\n"
    "        let mask_k = offs_k < K;\n"
    "        let a = load(a_ptr + offs_m[:, None] * K + offs_k[None, :],\n"
    "                     mask=(offs_m[:, None] < M) & mask_k[None, :], other=0.0);\n"
    "        let bmask = mask_k[:, None] & mask_n[None, :];\n"
    "        let packed = load(b_ptr + (offs_k[:, None] / 8) * N + offs_n[None, :], mask=bmask, other=0);\n"
    "        let codes = (packed >> ((offs_k[:, None] % 8) * 4)) & 0xF;\n"
    "        let g = offs_k / G;\n"
    "        let scales = load(scales_ptr + g[:, None] * N + offs_n[None, :], mask=bmask, other=0.0);\n"
    "        let zp = load(zeros_ptr + g[:, None] * (N / 8) + (offs_n / 8)[None, :], mask=bmask, other=0);\n"
    "        let zeros_ = (zp >> zero_shift[None, :]) & 0xF;\n"
    "        let b = (codes - zeros_) as f16 * scales;\n"
    "        acc = dot(a, b, acc);\n"
    "    }\n"
    "    let c_mask = (offs_m[:, None] < M) & mask_n[None, :];\n"
    "    store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=c_mask);\n"
    "}\n";

Test(lang_ports3, w4a16_gptq_gemm) {
    seed_rng();
    enum { M = 37, N = 72, Kd = 200, G = 40, NG = Kd / G };
    static uint16_t a[M * Kd], sc[NG * N];
    static int32_t bq[Kd / 8 * N], zq[NG * N / 8];
    static uint8_t code[Kd * N], zero[NG * N];
    static float c[M * N];
    static double bd[Kd * N];
    for (int i = 0; i < M * Kd; i++) a[i] = f32_to_f16((float)urand());
    for (int i = 0; i < Kd * N; i++) code[i] = (uint8_t)irand(16);
    for (int i = 0; i < NG * N; i++) zero[i] = (uint8_t)irand(16), sc[i] = f32_to_f16((float)(0.01 + 0.02 * fabs(urand())));
    memset(bq, 0, sizeof bq), memset(zq, 0, sizeof zq);
    for (int kk = 0; kk < Kd; kk++)
        for (int n = 0; n < N; n++) bq[kk / 8 * N + n] = (int32_t)((uint32_t)bq[kk / 8 * N + n] | (uint32_t)code[kk * N + n] << (kk % 8 * 4));
    for (int g = 0; g < NG; g++)
        for (int n = 0; n < N; n++) zq[g * N / 8 + n / 8] = (int32_t)((uint32_t)zq[g * N / 8 + n / 8] | (uint32_t)zero[g * N + n] << (n % 8 * 4));
    /* the dequantized weight as the kernel forms it: (code - zero) * scale, a product of f16s rounded to f16 */
    for (int kk = 0; kk < Kd; kk++)
        for (int n = 0; n < N; n++)
            bd[kk * N + n] = f16_to_d(f32_to_f16((float)((code[kk * N + n] - zero[kk / G * N + n]) * f16_to_d(sc[kk / G * N + n]))));
    for (int cfg = 0; cfg < 4; cfg++) { /* 32 and 64 tiles (warpgroup dots on sm_90a) */
        K k;
        int ar = cfg & 1, blk = cfg & 2 ? 64 : 32;
        const char *defs[] = {blk == 64 ? "BLOCK_M=64" : "BLOCK_M=32", blk == 64 ? "BLOCK_N=64" : "BLOCK_N=32",
                              blk == 64 ? "BLOCK_K=64" : "BLOCK_K=32", NULL};
        load_with(&k, w4a16_src, "w4a16_gemm", archs[ar], defs, NULL);
        uint64_t da = upload(&k, a, sizeof a), db = upload(&k, bq, sizeof bq), dc = poisoned(&k, sizeof c), ds = upload(&k, sc, sizeof sc),
                 dz = upload(&k, zq, sizeof zq);
        int m = M, n = N, kd = Kd;
        launch3(&k, NULL, (unsigned)((M + blk - 1) / blk), (unsigned)((N + blk - 1) / blk), 1, (void *[]){&da, &db, &dc, &ds, &dz, &m, &n, &kd});
        download(&k, c, dc, sizeof c);
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double want = 0, mag = 0;
                for (int kk = 0; kk < Kd; kk++) {
                    want += f16_to_d(a[i * Kd + kk]) * bd[kk * N + j];
                    mag += fabs(f16_to_d(a[i * Kd + kk]) * bd[kk * N + j]);
                }
                /* exact products (f16 x f16), f32 accumulation over K = 200: a few ulp of the magnitude per add */
                cr_assert(fabs(c[i * N + j] - want) <= Kd * 0x1p-24 * mag + 1e-7, "%s %s c[%d][%d] = %.9g, want %.9g (seed %llu)", archs[ar], defs[0], i, j,
                          c[i * N + j], want, (unsigned long long)seed);
            }
        unload(&k);
    }
}

/* ---- argsort of float rows (the packed-key argsort of Triton ports such as FlagGems' sort): each float becomes an
 * integer with the same order (negative ones' magnitude bits flipped), shifted into the high word of an i64 whose low
 * word is the column, so one sort of the keys sorts values and carries indices, stably (equal values keep their
 * columns' order; descending keys take BLOCK - 1 - column, so that equal values still come lowest column first);
 * the padding sorts last.  Beside it topk(..., return_indices=true) of the same row.  Rows hold repeats, -0.0 and
 * +0.0, infinities. ---- */
static const char *argsort_src =
    "kernel argsort_rows(x_ptr: *f32, vals_ptr: *f32, idx_ptr: *i32, top_v: *f32, top_i: *i32, n: i32,\n"
    "                    const BLOCK: i32 = 128, const DESC: i1 = false, const TOPK: i32 = 8) {\n"
    "    let row = program_id(0);\n"
    "    let cols = arange(0, BLOCK);\n"
    "    let mask = cols < n;\n"
    "    let x = load(x_ptr + row * n + cols, mask=mask, other=0.0);\n"
    "    let bits = bitcast(x, i32);\n"
    "    let key = where(bits < 0, bits ^ 0x7FFFFFFF, bits);\n"
    "    const PAD = -2147483648 if DESC else 2147483647;\n"
    "    key = where(mask, key, PAD);\n"
    "    let low = BLOCK - 1 - cols if DESC else cols;\n"
    "    let packed = (key as i64 << 32) | low as i64;\n"
    "    let sorted = sort(packed, descending=DESC);\n"
    "    let s_low = (sorted & 0xFFFFFFFF) as i32;\n"
    "    let s_key = (sorted >> 32) as i32;\n"
    "    let s_idx = BLOCK - 1 - s_low if DESC else s_low;\n"
    "    let s_val = bitcast(where(s_key < 0, s_key ^ 0x7FFFFFFF, s_key), f32);\n"
    "    store(vals_ptr + row * n + cols, s_val, mask=mask);\n"
    "    store(idx_ptr + row * n + cols, s_idx, mask=mask);\n"
    "    let (tv, ti) = topk(where(mask, x, -1.0 / 0.0), TOPK, return_indices=true);\n"
    "    let t = arange(0, TOPK);\n"
    "    store(top_v + row * TOPK + t, tv);\n"
    "    store(top_i + row * TOPK + t, ti);\n"
    "}\n";

/* IEEE totalOrder of two non-NaN floats (-0.0 before +0.0) */
static int total_cmp(float a, float b) {
    if (a < b) return -1;
    if (a > b) return 1;
    return (int)!signbit(a) - (int)!signbit(b);
}
static const float *sort_keys;
static int sort_desc;
static int by_value_then_index(const void *pa, const void *pb) {
    int ia = *(const int *)pa, ib = *(const int *)pb;
    int c = total_cmp(sort_keys[ia], sort_keys[ib]);
    if (sort_desc) c = -c;
    return c ? c : (ia > ib) - (ia < ib);
}

Test(lang_ports3, argsort_by_packed_keys_and_topk) {
    seed_rng();
    enum { R = 4, NMAX = 1000, T = 8 };
    static float x[R * NMAX], vals[R * NMAX], tv[R * T];
    static int32_t idx[R * NMAX], ti[R * T];
    static int order[NMAX];
    /* a row of 100 in a 128 block over 4 warps, and one of 1000 in a 1024 block over 8 warps (partners in other warps
     * exchanged through shared memory for more of the stages; two rows, ascending on sm_80 and descending on sm_90a) */
    for (int size = 0; size < 2; size++) {
        int N = size ? 1000 : 100, rows = size ? 2 : R;
        for (int i = 0; i < R * N; i++) {
            int kind = irand(10);
            x[i] = kind == 0 ? 0.0f : kind == 1 ? -0.0f : kind == 2 ? (float)(irand(5) - 2) : (float)urand() * 100;
        }
        x[3] = INFINITY, x[N + 7] = -INFINITY, x[2 * N + 9] = 1e-42f, x[2 * N + 10] = -1e-42f; /* subnormals keep their order */
        for (int a = 0; a < 2; a++)
            for (int desc = 0; desc < 2; desc++) {
                if (size && desc != a) continue;
                K k;
                const char *defs[] = {desc ? "DESC=true" : "DESC=false", size ? "BLOCK=1024" : "BLOCK=128", size ? "num_warps=8" : "num_warps=4",
                                      NULL};
                load_with(&k, argsort_src, "argsort_rows", archs[a], defs, NULL);
                size_t bytes = (size_t)R * N * 4;
                uint64_t dx = upload(&k, x, bytes), dv = poisoned(&k, bytes), di = poisoned(&k, bytes), dtv = poisoned(&k, sizeof tv),
                         dti = poisoned(&k, sizeof ti);
                int n = N;
                launch3(&k, NULL, (unsigned)rows, 1, 1, (void *[]){&dx, &dv, &di, &dtv, &dti, &n});
                download(&k, vals, dv, bytes);
                download(&k, idx, di, bytes);
                download(&k, tv, dtv, sizeof tv);
                download(&k, ti, dti, sizeof ti);
                for (int r = 0; r < rows; r++) {
                    for (int j = 0; j < N; j++) order[j] = j;
                    sort_keys = x + r * N, sort_desc = desc;
                    qsort(order, (size_t)N, sizeof *order, by_value_then_index);
                    for (int j = 0; j < N; j++) {
                        cr_assert_eq(idx[r * N + j], order[j], "%s %s %s row %d rank %d: index %d, want %d (seed %llu)", archs[a], defs[0],
                                     defs[1], r, j, idx[r * N + j], order[j], (unsigned long long)seed);
                        cr_assert(!memcmp(&vals[r * N + j], &x[r * N + order[j]], 4), "%s row %d rank %d: %g, want %g", archs[a], r, j,
                                  vals[r * N + j], x[r * N + order[j]]);
                    }
                    /* topk: the largest first, equal values the lower index first (as the descending stable order) */
                    sort_desc = 1;
                    qsort(order, (size_t)N, sizeof *order, by_value_then_index);
                    for (int j = 0; j < T; j++) {
                        cr_assert_eq(tv[r * T + j], x[r * N + order[j]], "%s %s row %d top %d: %g, want %g", archs[a], defs[1], r, j,
                                     tv[r * T + j], x[r * N + order[j]]);
                        cr_assert_eq(ti[r * T + j], order[j], "%s %s row %d top %d: index %d, want %d (value %g)", archs[a], defs[1], r, j,
                                     ti[r * T + j], order[j], tv[r * T + j]);
                    }
                }
                unload(&k);
            }
    }
}

/* ---- bincount three ways (torch.bincount's Triton lowering, and the scatter of a counting sort as MoE's
 * token permutation does it): each program's histogram() of its block merged into the global bins by a relaxed
 * atomic_add of the whole [NB] tile; weighted bins by f32 atomics per element; and each element's slot within its bin
 * from the old value its atomic_add of 1 returns (the slots of a bin must be 0 .. count - 1, each once).  Values
 * outside [0, NB) and the tail past n are not counted. ---- */
static const char *bincount_src =
    "kernel bincount(x_ptr: *i32, w_ptr: *f32, hist_ptr: *i32, whist_ptr: *f32, fill_ptr: *i32, slot_ptr: *i32, n: i32,\n"
    "                const NB: i32 = 64, const BLOCK: i32 = 256) {\n"
    "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    let mask = offs < n;\n"
    "    let v = load(x_ptr + offs, mask=mask, other=-1);\n"
    "    let h = histogram(v, NB, mask=mask);\n"
    "    atomic_add(hist_ptr + arange(0, NB), h, sem=\"relaxed\");\n"
    "    let ok = mask & (v >= 0) & (v < NB);\n"
    "    atomic_add(whist_ptr + v, load(w_ptr + offs, mask=mask, other=0.0), mask=ok, sem=\"relaxed\");\n"
    "    let slot = atomic_add(fill_ptr + v, 1, mask=ok);\n"
    "    store(slot_ptr + offs, where(ok, slot, -1), mask=mask);\n"
    "}\n";

Test(lang_ports3, bincount_histogram_atomics) {
    seed_rng();
    enum { N = 1000, NB = 64 };
    static int32_t x[N], slot[N];
    static float w[N];
    int32_t hist[NB], fill[NB];
    float whist[NB];
    for (int i = 0; i < N; i++) x[i] = irand(10) == 0 ? irand(200) - 100 : irand(NB) / (1 + irand(2)), w[i] = (float)urand();
    for (int a = 0; a < 2; a++) {
        K k;
        load_with(&k, bincount_src, "bincount", archs[a], NULL, NULL);
        memset(hist, 0, sizeof hist), memset(fill, 0, sizeof fill), memset(whist, 0, sizeof whist);
        uint64_t dx = upload(&k, x, sizeof x), dw = upload(&k, w, sizeof w), dh = upload(&k, hist, sizeof hist),
                 dwh = upload(&k, whist, sizeof whist), df = upload(&k, fill, sizeof fill), ds = poisoned(&k, sizeof slot);
        int n = N;
        launch3(&k, NULL, (N + 255) / 256, 1, 1, (void *[]){&dx, &dw, &dh, &dwh, &df, &ds, &n});
        download(&k, hist, dh, sizeof hist);
        download(&k, whist, dwh, sizeof whist);
        download(&k, fill, df, sizeof fill);
        download(&k, slot, ds, sizeof slot);
        for (int b = 0; b < NB; b++) {
            int want = 0;
            double ws = 0, wabs = 0;
            char seen[N] = {0};
            for (int i = 0; i < N; i++)
                if (x[i] == b) {
                    cr_assert(slot[i] >= 0 && slot[i] < N && !seen[slot[i]], "%s x[%d] = %d: slot %d repeated or out of range", archs[a], i, b,
                              slot[i]);
                    seen[slot[i]] = 1, want++, ws += w[i], wabs += fabs(w[i]);
                }
            cr_assert_eq(hist[b], want, "%s hist[%d] = %d, want %d (seed %llu)", archs[a], b, hist[b], want, (unsigned long long)seed);
            cr_assert_eq(fill[b], want, "%s fill[%d] = %d, want %d", archs[a], b, fill[b], want);
            for (int s = 0; s < want; s++) cr_assert(seen[s], "%s bin %d: slot %d missing", archs[a], b, s);
            /* f32 atomics in any order: each add rounds once, by at most 2^-24 of the running magnitude */
            cr_assert(fabs(whist[b] - ws) <= want * 0x1p-24 * wabs + 1e-7, "%s whist[%d] = %.9g, want %.9g", archs[a], b, whist[b], ws);
        }
        for (int i = 0; i < N; i++)
            if (x[i] < 0 || x[i] >= NB) cr_assert_eq(slot[i], -1, "%s slot[%d] of out-of-range %d", archs[a], i, x[i]);
        unload(&k);
    }
}

/* ---- FlashAttention-2's backward (the structure of Triton's fused-attention tutorial backward, without its
 * tutorial-specific stage split): a pre-pass delta_i = sum_d O_id dO_id; dK and dV per key block, looping over the
 * query blocks that see it (from the diagonal when causal), P rebuilt from the forward's log-sum-exp; dQ per query
 * block, looping over the key blocks up to the diagonal; or, in one kernel, dQ accumulated from the dK/dV loop by
 * relaxed f32 atomics of [BM, D] tiles (ATOMIC_DQ).  P and dS go to f16 for the transposed dots, as in the
 * original.  Two (batch, head) pairs, i64 offsets; L = 50 is not a multiple of the blocks. ---- */
static const char *fa2_bwd_src =
    "kernel attn_bwd_preprocess(o_ptr: *f16, do_ptr: *f16, delta_ptr: *f32, L: i32, const D: i32 = 32, const BM: i32 = 16) {\n"
    "    let pid_m = program_id(0);\n"
    "    let bh = program_id(1);\n"
    "    let base = bh as i64 * L * D;\n"
    "    let offs_m = pid_m * BM + arange(0, BM);\n"
    "    let offs_d = arange(0, D);\n"
    "    let ptrs = base + offs_m[:, None] * D + offs_d[None, :];\n"
    "    let o = load(o_ptr + ptrs, mask=offs_m[:, None] < L, other=0.0) as f32;\n"
    "    let do = load(do_ptr + ptrs, mask=offs_m[:, None] < L, other=0.0) as f32;\n"
    "    store(delta_ptr + bh * L + offs_m, sum(o * do, axis=1), mask=offs_m < L);\n"
    "}\n"
    "\n"
    "fn rebuild_p(q, k, lse, offs_m, offs_n, L, sm_scale, const CAUSAL) {\n"
    "    let qk = dot(q, trans(k));\n"
    "    let p = exp(qk * sm_scale - lse[:, None]);\n"
    "    let keep = (offs_m[:, None] < L) & (offs_n[None, :] < L);\n"
    "    if CAUSAL { keep = keep & (offs_m[:, None] >= offs_n[None, :]); }\n"
    "    return where(keep, p, 0.0);\n"
    "}\n"
    "\n"
    "kernel attn_bwd_dkdv(q_ptr: *f16, k_ptr: *f16, v_ptr: *f16, do_ptr: *f16, lse_ptr: *f32, delta_ptr: *f32,\n"
    "                     dk_ptr: *f32, dv_ptr: *f32, dq_ptr: *f32, L: i32, sm_scale: f32,\n"
    "                     const D: i32 = 32, const BM: i32 = 16, const BN: i32 = 16, const CAUSAL: i1 = true,\n"
    "                     const ATOMIC_DQ: i1 = false) {\n"
    "    static_assert(BM == BN, \"the causal start assumes square blocks\");\n"
    "    let pid_n = program_id(0);\n"
    "    let bh = program_id(1);\n"
    "    let base = bh as i64 * L * D;\n"
    "    let offs_n = pid_n * BN + arange(0, BN);\n"
    "    let offs_d = arange(0, D);\n"
    "    let kv_ptrs = base + offs_n[:, None] * D + offs_d[None, :];\n"
    "    let k = load(k_ptr + kv_ptrs, mask=offs_n[:, None] < L, other=0.0);\n"
    "    let v = load(v_ptr + kv_ptrs, mask=offs_n[:, None] < L, other=0.0);\n"
    "    let dk = zeros([BN, D], f32);\n"
    "    let dv = zeros([BN, D], f32);\n"
    "    let start_m = pid_n * BN if CAUSAL else 0;\n"
    "    for start in range(start_m, L, BM) {\n"
    "        let offs_m = start + arange(0, BM);\n"
    "        let mask_m = offs_m < L;\n"
    "        let q_ptrs = base + offs_m[:, None] * D + offs_d[None, :];\n"
    "        let q = load(q_ptr + q_ptrs, mask=mask_m[:, None], other=0.0);\n"
    "        let do = load(do_ptr + q_ptrs, mask=mask_m[:, None], other=0.0);\n"
    "        let lse = load(lse_ptr + bh * L + offs_m, mask=mask_m, other=0.0);\n"
    "        let delta = load(delta_ptr + bh * L + offs_m, mask=mask_m, other=0.0);\n"
    "        let p = rebuild_p(q, k, lse, offs_m, offs_n, L, sm_scale, CAUSAL);\n"
    "        dv = dot(trans(p as f16), do, dv);\n"
    "        let dp = dot(do, trans(v));\n"
    "        let ds = p * (dp - delta[:, None]);\n"
    "        dk = dot(trans(ds as f16), q, dk);\n"
    "        if ATOMIC_DQ {\n"
    "            atomic_add(dq_ptr + q_ptrs, dot(ds as f16, k) * sm_scale, mask=mask_m[:, None], sem=\"relaxed\");\n"
    "        }\n"
    "    }\n"
    "    store(dk_ptr + kv_ptrs, dk * sm_scale, mask=offs_n[:, None] < L);\n"
    "    store(dv_ptr + kv_ptrs, dv, mask=offs_n[:, None] < L);\n"
    "}\n"
    "\n"
    "kernel attn_bwd_dq(q_ptr: *f16, k_ptr: *f16, v_ptr: *f16, do_ptr: *f16, lse_ptr: *f32, delta_ptr: *f32,\n"
    "                   dq_ptr: *f32, L: i32, sm_scale: f32,\n"
    "                   const D: i32 = 32, const BM: i32 = 16, const BN: i32 = 16, const CAUSAL: i1 = true) {\n"
    "    let pid_m = program_id(0);\n"
    "    let bh = program_id(1);\n"
    "    let base = bh as i64 * L * D;\n"
    "    let offs_m = pid_m * BM + arange(0, BM);\n"
    "    let offs_d = arange(0, D);\n"
    "    let mask_m = offs_m < L;\n"
    "    let q_ptrs = base + offs_m[:, None] * D + offs_d[None, :];\n"
    "    let q = load(q_ptr + q_ptrs, mask=mask_m[:, None], other=0.0);\n"
    "    let do = load(do_ptr + q_ptrs, mask=mask_m[:, None], other=0.0);\n"
    "    let lse = load(lse_ptr + bh * L + offs_m, mask=mask_m, other=0.0);\n"
    "    let delta = load(delta_ptr + bh * L + offs_m, mask=mask_m, other=0.0);\n"
    "    let dq = zeros([BM, D], f32);\n"
    "    let end_n = minimum((pid_m + 1) * BM, L) if CAUSAL else L;\n"
    "    for start in range(0, end_n, BN) {\n"
    "        let offs_n = start + arange(0, BN);\n"
    "        let kv_ptrs = base + offs_n[:, None] * D + offs_d[None, :];\n"
    "        let k = load(k_ptr + kv_ptrs, mask=offs_n[:, None] < L, other=0.0);\n"
    "        let v = load(v_ptr + kv_ptrs, mask=offs_n[:, None] < L, other=0.0);\n"
    "        let p = rebuild_p(q, k, lse, offs_m, offs_n, L, sm_scale, CAUSAL);\n"
    "        let dp = dot(do, trans(v));\n"
    "        let ds = p * (dp - delta[:, None]);\n"
    "        dq = dot(ds as f16, k, dq);\n"
    "    }\n"
    "    store(dq_ptr + q_ptrs, dq * sm_scale, mask=mask_m[:, None]);\n"
    "}\n";

Test(lang_ports3, flash_attention2_backward) {
    seed_rng();
    enum { BH = 2, L = 100, D = 32, NE = BH * L * D };
    static uint16_t q[NE], kk[NE], v[NE], o[NE], dO[NE];
    static float lse[BH * L], delta[BH * L], dq[NE], dq2[NE], dk[NE], dv[NE];
    static double P[BH][L][L], dP[BH][L][L], mag[BH][L][L], dl[BH][L];
    const float sm_scale = 0.17677669529663687f; /* 1 / sqrt(32) */
    for (int i = 0; i < NE; i++)
        q[i] = f32_to_f16((float)(2 * urand())), kk[i] = f32_to_f16((float)(2 * urand())), v[i] = f32_to_f16((float)urand()),
        dO[i] = f32_to_f16((float)urand());
#define E(a, b, i, d) f16_to_d(a[((b) * L + (i)) * D + (d)])
    for (int causal = 1; causal >= 0; causal--) {
        /* the forward in float64: P, the LSE the kernels get (as f32) and O (as f16), then delta, dP and the magnitudes the
         * f16 roundings of P and dS scale with */
        for (int b = 0; b < BH; b++)
            for (int i = 0; i < L; i++) {
                double s[L], mx = -INFINITY, se = 0;
                for (int j = 0; j < L; j++) {
                    s[j] = 0;
                    for (int d = 0; d < D; d++) s[j] += E(q, b, i, d) * E(kk, b, j, d);
                    s[j] *= sm_scale;
                    if (!causal || j <= i) mx = fmax(mx, s[j]);
                }
                for (int j = 0; j < L; j++) se += !causal || j <= i ? exp(s[j] - mx) : 0;
                lse[b * L + i] = (float)(mx + log(se));
                for (int j = 0; j < L; j++) P[b][i][j] = !causal || j <= i ? exp(s[j] - mx) / se : 0;
                for (int d = 0; d < D; d++) {
                    double acc = 0;
                    for (int j = 0; j < L; j++) acc += P[b][i][j] * E(v, b, j, d);
                    o[(b * L + i) * D + d] = f32_to_f16((float)acc);
                }
                dl[b][i] = 0;
                for (int d = 0; d < D; d++) dl[b][i] += E(o, b, i, d) * E(dO, b, i, d);
                for (int j = 0; j < L; j++) {
                    double a = 0, aa = 0;
                    for (int d = 0; d < D; d++) a += E(dO, b, i, d) * E(v, b, j, d), aa += fabs(E(dO, b, i, d) * E(v, b, j, d));
                    dP[b][i][j] = a;
                    mag[b][i][j] = P[b][i][j] * (aa + fabs(dl[b][i]));
                }
            }
        for (int cfg = 0; cfg < 3; cfg++) { /* sm_80 and sm_90a with 16-row blocks, sm_90a with 64 (warpgroup dots) */
            K k;
            int a = cfg ? 1 : 0, blk = cfg == 2 ? 64 : 16;
            /* the atomic dQ on the 16-row sm_80 and the 64-row sm_90a configurations */
            const char *defs[] = {causal ? "CAUSAL=true" : "CAUSAL=false", cfg == 2 ? "BM=64" : "BM=16", cfg == 2 ? "BN=64" : "BN=16",
                                  cfg == 1 ? "ATOMIC_DQ=false" : "ATOMIC_DQ=true", NULL};
            bool atomic_dq = cfg != 1;
            load_with(&k, fa2_bwd_src, "attn_bwd_preprocess", archs[a], defs, NULL);
            uint64_t d_q = upload(&k, q, sizeof q), d_k = upload(&k, kk, sizeof kk), d_v = upload(&k, v, sizeof v),
                     d_o = upload(&k, o, sizeof o), d_do = upload(&k, dO, sizeof dO), d_lse = upload(&k, lse, sizeof lse),
                     d_delta = poisoned(&k, sizeof delta), d_dq = poisoned(&k, sizeof dq), d_dk = poisoned(&k, sizeof dk),
                     d_dq2 = upload(&k, memset(dq2, 0, sizeof dq2), sizeof dq2),
                     d_dv = poisoned(&k, sizeof dv);
            int l = L;
            float sc = sm_scale;
            unsigned nb = (unsigned)((L + blk - 1) / blk);
            launch3(&k, NULL, nb, BH, 1, (void *[]){&d_o, &d_do, &d_delta, &l});
            launch3(&k, fn_of(&k, "attn_bwd_dkdv"), nb, BH, 1, (void *[]){&d_q, &d_k, &d_v, &d_do, &d_lse, &d_delta, &d_dk, &d_dv, &d_dq2, &l, &sc});
            launch3(&k, fn_of(&k, "attn_bwd_dq"), nb, BH, 1, (void *[]){&d_q, &d_k, &d_v, &d_do, &d_lse, &d_delta, &d_dq, &l, &sc});
            download(&k, delta, d_delta, sizeof delta);
            download(&k, dq, d_dq, sizeof dq);
            download(&k, dq2, d_dq2, sizeof dq2);
            download(&k, dk, d_dk, sizeof dk);
            download(&k, dv, d_dv, sizeof dv);
            unload(&k);
            for (int b = 0; b < BH; b++)
                for (int i = 0; i < L; i++) {
                    cr_assert(fabs(delta[b * L + i] - dl[b][i]) <= 1e-6 * (1 + fabs(dl[b][i])), "%s delta[%d][%d] = %.9g, want %.9g",
                              archs[a], b, i, delta[b * L + i], dl[b][i]);
                    for (int d = 0; d < D; d++) {
                        /* dQ_id = scale sum_j dS_ij K_jd; dK_id = scale sum_j dS_ji Q_jd; dV_id = sum_j P_ji dO_jd: each product's
                         * f16 operand (P or dS) rounds by 2^-11, dS also carries dP's f32 error: 1e-3 of the magnitude */
                        double wq = 0, tq = 0, wk = 0, tk = 0, wv = 0, tv = 0;
                        for (int j = 0; j < L; j++) {
                            double ds_ij = P[b][i][j] * (dP[b][i][j] - dl[b][i]), ds_ji = P[b][j][i] * (dP[b][j][i] - dl[b][j]);
                            wq += sm_scale * ds_ij * E(kk, b, j, d), tq += sm_scale * mag[b][i][j] * fabs(E(kk, b, j, d));
                            wk += sm_scale * ds_ji * E(q, b, j, d), tk += sm_scale * mag[b][j][i] * fabs(E(q, b, j, d));
                            wv += P[b][j][i] * E(dO, b, j, d), tv += P[b][j][i] * fabs(E(dO, b, j, d));
                        }
                        int at = (b * L + i) * D + d;
                        cr_assert(fabs(dq[at] - wq) <= 1e-3 * tq + 1e-6, "%s %s %s dq[%d][%d][%d] = %.9g, want %.9g (seed %llu)", archs[a],
                                  defs[0], defs[1], b, i, d, dq[at], wq, (unsigned long long)seed);
                        if (atomic_dq) /* the same sums in another order, each rounded once more by its atomic */
                            cr_assert(fabs(dq2[at] - wq) <= 1e-3 * tq + 1e-6, "%s %s %s atomic dq[%d][%d][%d] = %.9g, want %.9g (seed %llu)",
                                      archs[a], defs[0], defs[1], b, i, d, dq2[at], wq, (unsigned long long)seed);
                        else cr_assert_eq(dq2[at], 0.0f, "dq accumulated without ATOMIC_DQ");
                        cr_assert(fabs(dk[at] - wk) <= 1e-3 * tk + 1e-6, "%s %s %s dk[%d][%d][%d] = %.9g, want %.9g (seed %llu)", archs[a],
                                  defs[0], defs[1], b, i, d, dk[at], wk, (unsigned long long)seed);
                        cr_assert(fabs(dv[at] - wv) <= 1e-3 * tv + 1e-6, "%s %s %s dv[%d][%d][%d] = %.9g, want %.9g (seed %llu)", archs[a],
                                  defs[0], defs[1], b, i, d, dv[at], wv, (unsigned long long)seed);
                    }
                }
        }
    }
#undef E
}

/* ---- decode attention over an fp8 (e4m3) KV cache with per-tensor scales (vLLM's fp8 kv-cache path): one program
 * per (sequence, kv head) holds that head's GROUP query heads, padded to 16 rows for dot; K and V are loaded as e4m3
 * (K fed to the dot as it is, beside the f16 queries; V widened to f16 by a cast), the scales applied once to the scores (k_scale * sm_scale) and once to the output
 * (v_scale); an online softmax over the blocks of a per-sequence length, walked by a while loop. ---- */
static const char *fp8_decode_src =
    "kernel decode_fp8(q_ptr: *f16, k_cache: *f8e4m3, v_cache: *f8e4m3, seq_lens: *i32, out_ptr: *f32,\n"
    "                  k_scale: f32, v_scale: f32, sm_scale: f32, max_len: i32, num_kv_heads: i32,\n"
    "                  const D: i32 = 64, const GROUP: i32 = 4, const BLOCK_H: i32 = 16, const BLOCK_N: i32 = 32) {\n"
    "    let seq = program_id(0);\n"
    "    let kvh = program_id(1);\n"
    "    let heads = arange(0, BLOCK_H);\n"
    "    let d = arange(0, D);\n"
    "    let hmask = heads < GROUP;\n"
    "    let q_row = (seq * num_kv_heads + kvh) * GROUP + heads;\n"
    "    let q = load(q_ptr + q_row[:, None] * D + d[None, :], mask=hmask[:, None], other=0.0);\n"
    "    let seq_len = load(seq_lens + seq);\n"
    "    let kv_base = (seq as i64 * num_kv_heads + kvh) * max_len * D;\n"
    "    let m_i = full([BLOCK_H], -1.0 / 0.0, f32);\n"
    "    let l_i = zeros([BLOCK_H], f32);\n"
    "    let acc = zeros([BLOCK_H, D], f32);\n"
    "    let qk_scale = k_scale * sm_scale;\n"
    "    let start = 0;\n"
    "    while start < seq_len {\n"
    "        let n = start + arange(0, BLOCK_N);\n"
    "        let nmask = n < seq_len;\n"
    "        let kv = kv_base + n[:, None] * D + d[None, :];\n"
    "        let k = load(k_cache + kv, mask=nmask[:, None], other=0.0);\n"
    "        let v = load(v_cache + kv, mask=nmask[:, None], other=0.0) as f16;\n"
    "        let s = dot(q, trans(k)) * qk_scale;\n"
    "        s = where(nmask[None, :], s, -1.0 / 0.0);\n"
    "        let m_new = maximum(m_i, max(s, axis=1));\n"
    "        let alpha = exp(m_i - m_new);\n"
    "        let p = exp(s - m_new[:, None]);\n"
    "        l_i = l_i * alpha + sum(p, axis=1);\n"
    "        acc = dot(p as f16, v, acc * alpha[:, None]);\n"
    "        m_i = m_new;\n"
    "        start += BLOCK_N;\n"
    "    }\n"
    "    let o = acc * v_scale / l_i[:, None];\n"
    "    store(out_ptr + q_row[:, None] * D + d[None, :], o, mask=hmask[:, None]);\n"
    "}\n";

Test(lang_ports3, fp8_kv_cache_decode_attention) {
    seed_rng();
    enum { NS = 3, KVH = 2, G = 4, D = 64, MAXL = 96, NQ = NS * KVH * G };
    static uint16_t q[NQ * D];
    static uint8_t kc[NS * KVH * MAXL * D], vc[NS * KVH * MAXL * D];
    static float out[NQ * D];
    int32_t lens[NS] = {77, 32, 1 + irand(MAXL)};
    const float k_scale = 0.05f, v_scale = 0.02f, sm_scale = 0.125f;
    for (int i = 0; i < NQ * D; i++) q[i] = f32_to_f16((float)urand());
    for (size_t i = 0; i < sizeof kc; i++) kc[i] = d_to_f8(40 * urand(), 0), vc[i] = d_to_f8(50 * urand(), 0);
    for (int a = 0; a < 2; a++) {
        K k;
        load_with(&k, fp8_decode_src, "decode_fp8", archs[a], NULL, NULL);
        uint64_t dq = upload(&k, q, sizeof q), dk = upload(&k, kc, sizeof kc), dv = upload(&k, vc, sizeof vc),
                 dl = upload(&k, lens, sizeof lens), d_o = poisoned(&k, sizeof out);
        float ks = k_scale, vs = v_scale, ss = sm_scale;
        int maxl = MAXL, kvh = KVH;
        launch3(&k, NULL, NS, KVH, 1, (void *[]){&dq, &dk, &dv, &dl, &d_o, &ks, &vs, &ss, &maxl, &kvh});
        download(&k, out, d_o, sizeof out);
        for (int s = 0; s < NS; s++)
            for (int h = 0; h < KVH; h++)
                for (int g = 0; g < G; g++) {
                    int row = (s * KVH + h) * G + g;
                    size_t base = (size_t)(s * KVH + h) * MAXL * D;
                    double sc[MAXL], mx = -INFINITY, se = 0;
                    for (int n = 0; n < lens[s]; n++) {
                        sc[n] = 0;
                        for (int d = 0; d < D; d++) sc[n] += f16_to_d(q[row * D + d]) * f8e4m3_to_d(kc[base + n * D + d]) * k_scale;
                        sc[n] *= sm_scale;
                        mx = fmax(mx, sc[n]);
                    }
                    for (int n = 0; n < lens[s]; n++) se += exp(sc[n] - mx);
                    for (int d = 0; d < D; d++) {
                        double want = 0, m = 0;
                        for (int n = 0; n < lens[s]; n++) {
                            double pv = exp(sc[n] - mx) / se * f8e4m3_to_d(vc[base + n * D + d]) * v_scale;
                            want += pv, m += fabs(pv);
                        }
                        /* P rounded to f16 for the PV dot (2^-11), the rescaling by alpha and the f32 sums: 1e-3 of sum |p v| */
                        cr_assert(fabs(out[row * D + d] - want) <= 1e-3 * m + 1e-6, "%s out[%d][%d] = %.9g, want %.9g (len %d, seed %llu)",
                                  archs[a], row, d, out[row * D + d], want, lens[s], (unsigned long long)seed);
                    }
                }
        unload(&k);
    }
}

/* ---- a GEMM through block pointers with a transposed operand (a weight-gradient GEMM, dW = X^T dY, as the Triton
 * kernels of training libraries write it): A is stored [K, M] and read as an [M, K] block pointer with strides
 * (1, lda) and order (0, 1); B row-major; boundary_check on both dims pads the edges with zeros, advance walks K;
 * the f32 result goes out through a third block pointer, rounded to f16 by the store (Triton's store casts). ---- */
static const char *bp_gemm_src =
    "@num_warps(4)\n"
    "kernel gemm_at_b(a_ptr: *f16, b_ptr: *f16, c_ptr: *f16, M: i32, N: i32, K: i32, stride_ak: i32, stride_bk: i32,\n"
    "                 stride_cm: i32, const BLOCK_M: i32 = 32, const BLOCK_N: i32 = 32, const BLOCK_K: i32 = 32) {\n"
    "    let pid_m = program_id(axis=0);\n"
    "    let pid_n = program_id(axis=1);\n"
    "    let a_bp = make_block_ptr(base=a_ptr, shape=(M, K), strides=(1, stride_ak), offsets=(pid_m * BLOCK_M, 0),\n"
    "                              block_shape=(BLOCK_M, BLOCK_K), order=(0, 1));\n"
    "    let b_bp = make_block_ptr(base=b_ptr, shape=(K, N), strides=(stride_bk, 1), offsets=(0, pid_n * BLOCK_N),\n"
    "                              block_shape=(BLOCK_K, BLOCK_N), order=(1, 0));\n"
    "    let acc = zeros((BLOCK_M, BLOCK_N), dtype=f32);\n"
    "    for k in range(0, K, BLOCK_K) {\n"
    "        let a = load(a_bp, boundary_check=(0, 1), padding_option=\"zero\");\n"
    "        let b = load(b_bp, boundary_check=(0, 1));\n"
    "        acc = dot(a, b, acc);\n"
    "        a_bp = advance(a_bp, (0, BLOCK_K));\n"
    "        b_bp = advance(b_bp, (BLOCK_K, 0));\n"
    "    }\n"
    "    let c_bp = make_block_ptr(c_ptr, (M, N), (stride_cm, 1), (pid_m * BLOCK_M, pid_n * BLOCK_N), (BLOCK_M, BLOCK_N), (1, 0));\n"
    "    store(c_bp, acc, boundary_check=(0, 1));\n"
    "}\n";

/* C [m][ldc] f16 = A^T B with A [k][lda] (column-major M x K) and B [k][ldb] f16: columns past n untouched
 * (0xffff), the rest against float64: f32 accumulation of exact products, then one rounding to f16 (half an
 * ulp: 2^-11 relative) */
static void check_colmajor_a_gemm(const uint16_t *c, const uint16_t *a, const uint16_t *b, int m, int n, int kd, int lda,
                                  int ldb, int ldc, const char *arch, const char *what, uint64_t seed) {
    for (int i = 0; i < m; i++)
        for (int j = 0; j < ldc; j++) {
            if (j >= n) {
                cr_assert_eq(c[i * ldc + j], 0xffff, "%s %s c[%d][%d] past N written", arch, what, i, j);
                continue;
            }
            double want = 0, mag = 0;
            for (int kk = 0; kk < kd; kk++) {
                double p = f16_to_d(a[kk * lda + i]) * f16_to_d(b[kk * ldb + j]);
                want += p, mag += fabs(p);
            }
            double got = f16_to_d(c[i * ldc + j]);
            cr_assert(fabs(got - want) <= 0x1p-11 * fabs(want) + kd * 0x1p-24 * mag + 0x1p-24, "%s %s c[%d][%d] = %.9g, want %.9g (seed %llu)",
                      arch, what, i, j, got, want, (unsigned long long)seed);
        }
}

Test(lang_ports3, block_pointer_transposed_gemm) {
    seed_rng();
    enum { M = 45, N = 70, Kd = 83, LDA = 48, LDB = 72, LDC = 72 };
    static uint16_t a[Kd * LDA], b[Kd * LDB], c[M * LDC];
    for (int i = 0; i < Kd * LDA; i++) a[i] = f32_to_f16((float)urand());
    for (int i = 0; i < Kd * LDB; i++) b[i] = f32_to_f16((float)urand());
    for (int cfg = 0; cfg < 4; cfg++) { /* 32 and 64 tiles (warpgroup dots on sm_90a) */
        K k;
        int ar = cfg & 1, blk = cfg & 2 ? 64 : 32;
        const char *defs[] = {blk == 64 ? "BLOCK_M=64" : "BLOCK_M=32", blk == 64 ? "BLOCK_N=64" : "BLOCK_N=32",
                              blk == 64 ? "BLOCK_K=64" : "BLOCK_K=32", NULL};
        load_with(&k, bp_gemm_src, "gemm_at_b", archs[ar], defs, NULL);
        uint64_t da = upload(&k, a, sizeof a), db = upload(&k, b, sizeof b), dc = poisoned(&k, sizeof c);
        int m = M, n = N, kd = Kd, lda = LDA, ldb = LDB, ldc = LDC;
        launch3(&k, NULL, (unsigned)((M + blk - 1) / blk), (unsigned)((N + blk - 1) / blk), 1, (void *[]){&da, &db, &dc, &m, &n, &kd, &lda, &ldb, &ldc});
        download(&k, c, dc, sizeof c);
        check_colmajor_a_gemm(c, a, b, M, N, Kd, LDA, LDB, LDC, archs[ar], defs[0], seed);
        unload(&k);
    }
}

/* ---- w8a8 int8 GEMM with per-token and per-channel scales (vLLM's triton_scaled_mm): i8 x i8 dots accumulate
 * in i32 (exact), the epilogue scales by scale_a[m] * scale_b[n], adds an optional bias (a const branch) and stores
 * f16. ---- */
static const char *scaled_mm_src =
    "kernel scaled_mm(a_ptr: *i8, b_ptr: *i8, scale_a: *f32, scale_b: *f32, c_ptr: *f16, bias_ptr: *f16,\n"
    "                 M: i32, N: i32, K: i32, const HAS_BIAS: i1 = true,\n"
    "                 const BLOCK_M: i32 = 32, const BLOCK_N: i32 = 32, const BLOCK_K: i32 = 32) {\n"
    "    let offs_m = program_id(0) * BLOCK_M + arange(0, BLOCK_M);\n"
    "    let offs_n = program_id(1) * BLOCK_N + arange(0, BLOCK_N);\n"
    "    let acc = zeros([BLOCK_M, BLOCK_N], dtype=i32);\n"
    "    for k in range(0, cdiv(K, BLOCK_K)) {\n"
    "        let offs_k = k * BLOCK_K + arange(0, BLOCK_K);\n"
    "        let a = load(a_ptr + offs_m[:, None] * K + offs_k[None, :], mask=(offs_m[:, None] < M) & (offs_k[None, :] < K), other=0);\n"
    "        let b = load(b_ptr + offs_k[:, None] * N + offs_n[None, :], mask=(offs_k[:, None] < K) & (offs_n[None, :] < N), other=0);\n"
    "        acc = dot(a, b, acc, out_dtype=i32);\n"
    "    }\n"
    "    let sa = load(scale_a + offs_m, mask=offs_m < M, other=0.0);\n"
    "    let sb = load(scale_b + offs_n, mask=offs_n < N, other=0.0);\n"
    "    let c = acc as f32 * sa[:, None] * sb[None, :];\n"
    "    if HAS_BIAS { c = c + load(bias_ptr + offs_n, mask=offs_n < N, other=0.0)[None, :]; }\n"
    "    store(c_ptr + offs_m[:, None] * N + offs_n[None, :], c, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N));\n"
    "}\n";

Test(lang_ports3, w8a8_int8_scaled_mm) {
    seed_rng();
    enum { M = 41, N = 50, Kd = 150 };
    static int8_t a[M * Kd], b[Kd * N];
    static float sa[M], sb[N];
    static uint16_t bias[N], c[M * N];
    for (int i = 0; i < M * Kd; i++) a[i] = (int8_t)(irand(255) - 127);
    for (int i = 0; i < Kd * N; i++) b[i] = (int8_t)(irand(255) - 127);
    for (int i = 0; i < M; i++) sa[i] = (float)(1e-3 * (1 + fabs(urand())));
    for (int i = 0; i < N; i++) sb[i] = (float)(1e-2 * (1 + fabs(urand()))), bias[i] = f32_to_f16((float)urand());
    for (int cfg = 0; cfg < 4; cfg++)
        for (int hb = 0; hb < 2; hb++) {
            K k;
            int ar = cfg & 1, blk = cfg & 2 ? 64 : 32;
            const char *defs[] = {hb ? "HAS_BIAS=true" : "HAS_BIAS=false", blk == 64 ? "BLOCK_M=64" : "BLOCK_M=32",
                                  blk == 64 ? "BLOCK_N=64" : "BLOCK_N=32", blk == 64 ? "BLOCK_K=64" : "BLOCK_K=32", NULL};
            load_with(&k, scaled_mm_src, "scaled_mm", archs[ar], defs, NULL);
            uint64_t da = upload(&k, a, sizeof a), db = upload(&k, b, sizeof b), dsa = upload(&k, sa, sizeof sa), dsb = upload(&k, sb, sizeof sb),
                     dc = poisoned(&k, sizeof c), dbias = upload(&k, bias, sizeof bias);
            int m = M, n = N, kd = Kd;
            launch3(&k, NULL, (unsigned)((M + blk - 1) / blk), (unsigned)((N + blk - 1) / blk), 1, (void *[]){&da, &db, &dsa, &dsb, &dc, &dbias, &m, &n, &kd});
            download(&k, c, dc, sizeof c);
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) {
                    int64_t acc = 0;
                    for (int kk = 0; kk < Kd; kk++) acc += a[i * Kd + kk] * b[kk * N + j];
                    double scaled = (double)acc * sa[i] * sb[j], want = scaled + (hb ? f16_to_d(bias[j]) : 0);
                    /* acc is exact in i32 and in f32 (|acc| < 2^24); two f32 products and the bias add (maybe an fma): a few
                     * ulp; the f16 store: half an ulp */
                    double got = f16_to_d(c[i * N + j]);
                    cr_assert(fabs(got - want) <= 0x1p-11 * fabs(want) + 4 * 0x1p-24 * (fabs(scaled) + 1) + 0x1p-25, "%s %s %s c[%d][%d] = %.9g, want %.9g (seed %llu)",
                              archs[ar], defs[0], defs[1], i, j, got, want, (unsigned long long)seed);
                }
            unload(&k);
        }
}

/* ---- a multi-tensor AdamW step (PyTorch's fused/foreach Adam and Apex's multi_tensor_apply, as Triton ports do
 * it): one launch updates a list of tensors of different sizes; the host lists (tensor, start) per chunk, and each
 * program finds its tensor's addresses in device tables: params and grads as i64 addresses cast to pointers, the
 * moments through **f32 tables (a pointer loaded from memory); i64 element offsets; bias corrections by pow of the
 * run-time step. ---- */
static const char *adam_src =
    "kernel adamw_multi(param_addrs: *i64, grad_addrs: *i64, exp_avgs: **f32, exp_avg_sqs: **f32, sizes: *i64,\n"
    "                   chunk_tensor: *i32, chunk_start: *i64, lr: f32, beta1: f32, beta2: f32, eps: f32,\n"
    "                   weight_decay: f32, step: i32, const CHUNK: i32 = 384, const BLOCK: i32 = 128) {\n"
    "    static_assert(CHUNK % BLOCK == 0, \"a chunk is whole blocks\");\n"
    "    let c = program_id(0);\n"
    "    let t = load(chunk_tensor + c);\n"
    "    let start = load(chunk_start + c);\n"
    "    let n = load(sizes + t);\n"
    "    let p_ptr = load(param_addrs + t) as *f32;\n"
    "    let g_ptr = load(grad_addrs + t) as *f32;\n"
    "    let m_ptr = load(exp_avgs + t);\n"
    "    let v_ptr = load(exp_avg_sqs + t);\n"
    "    let bc1 = 1.0 - pow(beta1, step as f32);\n"
    "    let bc2 = 1.0 - pow(beta2, step as f32);\n"
    "    for off in range(0, CHUNK, BLOCK) {\n"
    "        let i = start + off + arange(0, BLOCK);\n"
    "        let mask = i < n;\n"
    "        let p = load(p_ptr + i, mask=mask);\n"
    "        let g = load(g_ptr + i, mask=mask);\n"
    "        let m = beta1 * load(m_ptr + i, mask=mask) + (1.0 - beta1) * g;\n"
    "        let v = beta2 * load(v_ptr + i, mask=mask) + (1.0 - beta2) * g * g;\n"
    "        let denom = sqrt(v / bc2) + eps;\n"
    "        p = p * (1.0 - lr * weight_decay) - lr * (m / bc1) / denom;\n"
    "        store(p_ptr + i, p, mask=mask);\n"
    "        store(m_ptr + i, m, mask=mask);\n"
    "        store(v_ptr + i, v, mask=mask);\n"
    "    }\n"
    "}\n";

Test(lang_ports3, multi_tensor_adamw) {
    seed_rng();
    enum { NT = 3, CH = 384 };
    const int64_t size[NT] = {1000, 384, 1 + irand(700)};
    const float lr = 1e-2f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f, wd = 0.01f;
    const int step = 3;
    for (int a = 0; a < 2; a++) {
        K k;
        load_with(&k, adam_src, "adamw_multi", archs[a], NULL, NULL);
        float *host[NT][4];
        uint64_t dev[NT][4];
        int32_t ct[16];
        int64_t cs[16];
        int nch = 0;
        for (int t = 0; t < NT; t++) {
            for (int j = 0; j < 4; j++) {
                host[t][j] = malloc((size_t)size[t] * 4);
                for (int64_t i = 0; i < size[t]; i++)
                    host[t][j][i] = (float)(j == 3 ? 1e-3 * fabs(urand()) : j == 1 ? 1e-2 * urand() : urand());
                dev[t][j] = upload(&k, host[t][j], (size_t)size[t] * 4);
            }
            for (int64_t s = 0; s < size[t]; s += CH) ct[nch] = t, cs[nch++] = s;
        }
        int64_t pa[NT], ga[NT], sz[NT];
        uint64_t ma[NT], va[NT];
        for (int t = 0; t < NT; t++) pa[t] = (int64_t)dev[t][0], ga[t] = (int64_t)dev[t][1], ma[t] = dev[t][2], va[t] = dev[t][3], sz[t] = size[t];
        uint64_t dpa = upload(&k, pa, sizeof pa), dga = upload(&k, ga, sizeof ga), dma = upload(&k, ma, sizeof ma), dva = upload(&k, va, sizeof va),
                 dsz = upload(&k, sz, sizeof sz), dct = upload(&k, ct, sizeof ct), dcs = upload(&k, cs, sizeof cs);
        float l = lr, x1 = b1, x2 = b2, e = eps, w = wd;
        int st = step;
        launch3(&k, NULL, (unsigned)nch, 1, 1, (void *[]){&dpa, &dga, &dma, &dva, &dsz, &dct, &dcs, &l, &x1, &x2, &e, &w, &st});
        double bc1 = 1 - pow(b1, step), bc2 = 1 - pow(b2, step);
        for (int t = 0; t < NT; t++) {
            float *got[3];
            for (int j = 0; j < 3; j++) {
                int col = j == 0 ? 0 : j + 1;
                got[j] = malloc((size_t)size[t] * 4);
                download(&k, got[j], dev[t][col], (size_t)size[t] * 4);
            }
            for (int64_t i = 0; i < size[t]; i++) {
                double p = host[t][0][i], g = host[t][1][i];
                double m = (double)b1 * host[t][2][i] + (1 - (double)b1) * g, v = (double)b2 * host[t][3][i] + (1 - (double)b2) * g * g;
                double r = (m / bc1) / (sqrt(v / bc2) + eps), want = p * (1 - (double)lr * wd) - lr * r;
                /* a few f32 roundings each; bc1 = 1 - 0.729 triples pow's error, bc2 = 1 - 0.997 multiplies it by ~300 under
                 * the square root (halved): 1e-4 of the step lr * r */
                cr_assert(fabs(got[1][i] - m) <= 4 * 0x1p-24 * (fabs(m) + fabs(g)), "%s m[%d][%lld] = %.9g, want %.9g", archs[a], t, (long long)i,
                          got[1][i], m);
                cr_assert(fabs(got[2][i] - v) <= 4 * 0x1p-24 * v + 1e-12, "%s v[%d][%lld] = %.9g, want %.9g", archs[a], t, (long long)i, got[2][i], v);
                cr_assert(fabs(got[0][i] - want) <= 4 * 0x1p-24 * fabs(p) + 1e-4 * lr * fabs(r), "%s p[%d][%lld] = %.9g, want %.9g (seed %llu)",
                          archs[a], t, (long long)i, got[0][i], want, (unsigned long long)seed);
            }
            for (int j = 0; j < 3; j++) free(got[j]);
            for (int j = 0; j < 4; j++) free(host[t][j]);
        }
        unload(&k);
    }
}

/* ---- a persistent GEMM fed by a dynamic tile queue (the atomic-counter scheduler of persistent Triton GEMMs): a
 * few programs take tile numbers from a scalar atomic_add (every thread gets the old value) until the queue is empty,
 * map each to a grouped (pid_m, pid_n) by grid.tile's swizzle2d, and run a k loop of dots for it inside the while
 * loop; each program counts its tiles.  Every tile must be done once: C right everywhere, the counts summing to the
 * number of tiles, the counter past it by one per program. ---- */
static const char *queue_src =
    "@num_warps(4)\n"
    "kernel gemm_queue(a: *f16, b: *f16, c: *f32, counter: *i32, done: *i32, M: i32, N: i32, K: i32,\n"
    "                  const BLOCK_M: i32 = 32, const BLOCK_N: i32 = 32, const BLOCK_K: i32 = 32, const GROUP_M: i32 = 2) {\n"
    "    let tiles_m = cdiv(M, BLOCK_M);\n"
    "    let tiles_n = cdiv(N, BLOCK_N);\n"
    "    let num_tiles = tiles_m * tiles_n;\n"
    "    let tile = atomic_add(counter, 1);\n"
    "    let mine = 0;\n"
    "    while tile < num_tiles {\n"
    "        let pid_m, pid_n = swizzle2d(tile / tiles_n, tile % tiles_n, tiles_m, tiles_n, GROUP_M);\n"
    "        let rm = pid_m * BLOCK_M + arange(0, BLOCK_M);\n"
    "        let rn = pid_n * BLOCK_N + arange(0, BLOCK_N);\n"
    "        let acc = zeros([BLOCK_M, BLOCK_N], f32);\n"
    "        for k0 in range(0, K, BLOCK_K) {\n"
    "            let rk = k0 + arange(0, BLOCK_K);\n"
    "            let x = load(a + rm[:, None] * K + rk[None, :], (rm[:, None] < M) & (rk[None, :] < K), 0.0);\n"
    "            let y = load(b + rk[:, None] * N + rn[None, :], (rk[:, None] < K) & (rn[None, :] < N), 0.0);\n"
    "            acc = dot(x, y, acc);\n"
    "        }\n"
    "        store(c + rm[:, None] * N + rn[None, :], acc, (rm[:, None] < M) & (rn[None, :] < N));\n"
    "        mine += 1;\n"
    "        tile = atomic_add(counter, 1);\n"
    "    }\n"
    "    store(done + program_id(0), mine);\n"
    "}\n";

Test(lang_ports3, persistent_gemm_tile_queue) {
    seed_rng();
    enum { M = 90, N = 75, Kd = 70, P = 3 };
    static uint16_t a[M * Kd], b[Kd * N];
    static float c[M * N];
    int32_t done[P];
    for (int i = 0; i < M * Kd; i++) a[i] = f32_to_f16((float)urand());
    for (int i = 0; i < Kd * N; i++) b[i] = f32_to_f16((float)urand());
    for (int cfg = 0; cfg < 4; cfg++) {
        K k;
        int ar = cfg & 1, blk = cfg & 2 ? 64 : 32, tiles = ((M + blk - 1) / blk) * ((N + blk - 1) / blk);
        const char *defs[] = {blk == 64 ? "BLOCK_M=64" : "BLOCK_M=32", blk == 64 ? "BLOCK_N=64" : "BLOCK_N=32", NULL};
        load_with(&k, queue_src, "gemm_queue", archs[ar], defs, NULL);
        int32_t zero = 0, counter;
        uint64_t da = upload(&k, a, sizeof a), db = upload(&k, b, sizeof b), dc = poisoned(&k, sizeof c), dcnt = upload(&k, &zero, 4),
                 ddone = poisoned(&k, sizeof done);
        int m = M, n = N, kd = Kd;
        launch3(&k, NULL, P, 1, 1, (void *[]){&da, &db, &dc, &dcnt, &ddone, &m, &n, &kd});
        download(&k, c, dc, sizeof c);
        download(&k, done, ddone, sizeof done);
        download(&k, &counter, dcnt, 4);
        cr_assert_eq(counter, tiles + P, "%s %s counter %d, want %d", archs[ar], defs[0], counter, tiles + P);
        int sum = 0;
        for (int p = 0; p < P; p++) {
            cr_assert(done[p] >= 0 && done[p] <= tiles, "%s done[%d] = %d", archs[ar], p, done[p]);
            sum += done[p];
        }
        cr_assert_eq(sum, tiles, "%s %s tiles done %d, want %d", archs[ar], defs[0], sum, tiles);
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double want = 0, mag = 0;
                for (int kk = 0; kk < Kd; kk++) {
                    double p = f16_to_d(a[i * Kd + kk]) * f16_to_d(b[kk * N + j]);
                    want += p, mag += fabs(p);
                }
                cr_assert(fabs(c[i * N + j] - want) <= Kd * 0x1p-24 * mag + 1e-7, "%s %s c[%d][%d] = %.9g, want %.9g (seed %llu)", archs[ar],
                          defs[0], i, j, c[i * N + j], want, (unsigned long long)seed);
            }
        unload(&k);
    }
}

/* The same block-pointer GEMM as a user launches it through the C API on sm_90a with its strides specialized to
 * multiples of 16 elements: the block pointers' loads become tensor-map copies (A's column-major tile included) and,
 * with @warp_specialize, a producer warpgroup issues them; 64-row tiles feed wgmma.  The launch builds the maps. */
Test(lang_ports3, block_pointer_transposed_gemm_tensor_maps) {
    seed_rng();
    enum { M = 45, N = 70, Kd = 83, LDA = 48, LDB = 80, LDC = 80 };
    static uint16_t a[Kd * LDA], b[Kd * LDB], c[M * LDC];
    for (int i = 0; i < Kd * LDA; i++) a[i] = f32_to_f16((float)urand());
    for (int i = 0; i < Kd * LDB; i++) b[i] = f32_to_f16((float)urand());
    for (int ws = 0; ws < 2; ws++) {
        const char *defs[] = {"BLOCK_M=64", "BLOCK_N=64", ws ? "warp_specialize=1" : "warp_specialize=0", NULL};
        const char *spec[] = {"stride_ak=16", "stride_bk=16", "stride_cm=16", NULL};
        tile_compile_options o = {.arch = "sm_90a", .defines = defs, .specialize = spec};
        tile_compiled cc;
        cr_assert_eq(tile_compile_source("t.tile", bp_gemm_src, &o, &cc), TILE_OK, "%s", cc.diagnostics);
        cr_assert(cc.kernels[0].tensor_maps && *cc.kernels[0].tensor_maps, "no tensor maps");
        cr_assert(strstr(cc.ptx, "cp.async.bulk.tensor") && strstr(cc.ptx, "wgmma.mma_async"), "no TMA copies or wgmma");
        cr_assert_eq(cc.kernels[0].num_warps, ws ? 8 : 4, "warps %d", cc.kernels[0].num_warps);
        tile_compiled_free(&cc);
        tile_context_options co = {.device = "emu:sm_90a", .emu_racecheck = 1};
        tile_context *ctx;
        cr_assert_eq(tile_context_create_ex(&co, &ctx), TILE_OK);
        tile_devptr da, db, dc;
        cr_assert_eq(tile_malloc(ctx, sizeof a, &da), TILE_OK);
        cr_assert_eq(tile_malloc(ctx, sizeof b, &db), TILE_OK);
        cr_assert_eq(tile_malloc(ctx, sizeof c, &dc), TILE_OK);
        tile_memcpy_htod(ctx, da, a, sizeof a);
        tile_memcpy_htod(ctx, db, b, sizeof b);
        tile_memset(ctx, dc, 0xFF, sizeof c);
        tile_module *mod;
        o.arch = NULL;
        cr_assert_eq(tile_module_load_source_ex(ctx, "t.tile", bp_gemm_src, &o, &mod), TILE_OK, "%s", tile_last_error(ctx));
        tile_kernel *kern;
        cr_assert_eq(tile_module_get_kernel(mod, "gemm_at_b", &kern), TILE_OK);
        int m = M, n = N, kd = Kd, lda = LDA, ldb = LDB, ldc = LDC;
        void *args[] = {&da, &db, &dc, &m, &n, &kd, &lda, &ldb, &ldc};
        tile_dim3 grid = {(M + 63) / 64, (N + 63) / 64, 1};
        cr_assert_eq(tile_launch(kern, grid, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
        cr_assert_eq(tile_memcpy_dtoh(ctx, c, dc, sizeof c), TILE_OK, "%s", tile_last_error(ctx));
        check_colmajor_a_gemm(c, a, b, M, N, Kd, LDA, LDB, LDC, "sm_90a", ws ? "warp-specialized" : "plain", seed);
        tile_module_unload(mod);
        tile_context_destroy(ctx);
    }
}

/* ---- MXFP4 quantization of activations and a GEMM that consumes them (the microscaling path of MoE kernels,
 * triton_kernels' mxfp4 quantize beside dot_scaled): per block of 32 values along K, the shared exponent is amax's
 * exponent minus 2 (e2m1's largest is 6 = 1.5 * 2^2), read from amax's bits (an e8m0 code, clamped at 0); each value
 * times 2^-exponent, built from bits too, is rounded to the nearest e2m1 value, ties to the even code, saturating at
 * 6 (the code picked by comparisons); the codes of a [BM, BK] tile are packed two to a byte by reshape to
 * [BM, BK/2, 2] and split, the first in the low nibble.  The block amaxes come from a reshape to [BM, BK/32, 32] and
 * max along the last axis.  A second kernel multiplies the packed codes and scales by a bf16 B through dot_scaled.
 * The quantizer is checked byte for byte against the same rule in C, and every code is the nearest in float64;
 * the GEMM against float64 over the decoded values. ---- */
static const char *mxfp4_src =
    "kernel quant_mxfp4(x_ptr: *bf16, q_ptr: *u8, s_ptr: *u8, M: i32, K: i32, const BM: i32 = 16, const BK: i32 = 64) {\n"
    "    let rm = program_id(0) * BM + arange(0, BM);\n"
    "    let rk = program_id(1) * BK + arange(0, BK);\n"
    "    let x = load(x_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0) as f32;\n"
    "    let amax = max(reshape(abs(x), [BM, BK / 32, 32]), axis=2);\n"
    "    let e = ((bitcast(amax, i32) >> 23) & 255) - 2;\n"
    "    e = maximum(e, 0);\n"
    "    let inv = bitcast((254 - e) << 23, f32);\n"
    "    let q = reshape(reshape(x, [BM, BK / 32, 32]) * inv[:, :, None], [BM, BK]);\n"
    "    let a = abs(q);\n"
    "    let code = (a > 0.25) as i32 + (a >= 0.75) as i32 + (a > 1.25) as i32 + (a >= 1.75) as i32\n"
    "             + (a > 2.5) as i32 + (a >= 3.5) as i32 + (a > 5.0) as i32;\n"
    "    code = code | where(q < 0.0, 8, 0);\n"
    "    let lo, hi = split(reshape(code, [BM, BK / 2, 2]));\n"
    "    let packed = (lo | (hi << 4)) as u8;\n"
    "    let rp = program_id(1) * (BK / 2) + arange(0, BK / 2);\n"
    "    store(q_ptr + rm[:, None] * (K / 2) + rp[None, :], packed, mask=(rm[:, None] < M) & (rp[None, :] < K / 2));\n"
    "    let rs = program_id(1) * (BK / 32) + arange(0, BK / 32);\n"
    "    store(s_ptr + rm[:, None] * (K / 32) + rs[None, :], e as u8, mask=(rm[:, None] < M) & (rs[None, :] < K / 32));\n"
    "}\n"
    "\n"
    "kernel mx_gemm(q_ptr: *u8, s_ptr: *u8, b_ptr: *bf16, c_ptr: *f32, M: i32, N: i32, K: i32,\n"
    "               const BM: i32 = 16, const BN: i32 = 32, const BK: i32 = 64) {\n"
    "    let rm = program_id(0) * BM + arange(0, BM);\n"
    "    let rn = program_id(1) * BN + arange(0, BN);\n"
    "    let acc = zeros([BM, BN], f32);\n"
    "    for k0 in range(0, K, BK) {\n"
    "        let rp = k0 / 2 + arange(0, BK / 2);\n"
    "        let rs = k0 / 32 + arange(0, BK / 32);\n"
    "        let rk = k0 + arange(0, BK);\n"
    "        let a = load(q_ptr + rm[:, None] * (K / 2) + rp[None, :], mask=(rm[:, None] < M) & (rp[None, :] < K / 2), other=0);\n"
    "        let sa = load(s_ptr + rm[:, None] * (K / 32) + rs[None, :], mask=(rm[:, None] < M) & (rs[None, :] < K / 32), other=127);\n"
    "        let b = load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0);\n"
    "        acc = dot_scaled(a, sa, \"e2m1\", b, None, \"bf16\", acc=acc);\n"
    "    }\n"
    "    store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N));\n"
    "}\n";

static const double e2m1_values[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};

Test(lang_ports3, mxfp4_quantize_and_dot_scaled) {
    seed_rng();
    enum { M = 37, N = 50, Kd = 160 };
    static uint16_t x[M * Kd], b[Kd * N];
    static uint8_t q[M * Kd / 2], sc[M * Kd / 32];
    static float c[M * N];
    for (int i = 0; i < M * Kd; i++) x[i] = f32_to_bf16((float)(urand() * ldexp(1, irand(12) - 6)));
    for (int i = 0; i < 64; i++) x[irand(M * Kd)] = f32_to_bf16(0.0f);
    for (int j = 0; j < 32; j++) x[5 * Kd + 32 + j] = f32_to_bf16(0.0f); /* an all-zero block: code 0, scale clamped */
    for (int i = 0; i < Kd * N; i++) b[i] = f32_to_bf16((float)urand());
    for (int a = 0; a < 2; a++) {
        K k;
        load_with(&k, mxfp4_src, "quant_mxfp4", archs[a], NULL, NULL);
        uint64_t dx = upload(&k, x, sizeof x), dq = poisoned(&k, sizeof q), ds = poisoned(&k, sizeof sc), db = upload(&k, b, sizeof b),
                 dc = poisoned(&k, sizeof c);
        int m = M, n = N, kd = Kd;
        launch3(&k, NULL, (M + 15) / 16, (Kd + 63) / 64, 1, (void *[]){&dx, &dq, &ds, &m, &kd});
        launch3(&k, fn_of(&k, "mx_gemm"), (M + 15) / 16, (N + 31) / 32, 1, (void *[]){&dq, &ds, &db, &dc, &m, &n, &kd});
        download(&k, q, dq, sizeof q);
        download(&k, sc, ds, sizeof sc);
        download(&k, c, dc, sizeof c);
        static double deq[M * Kd];
        for (int i = 0; i < M; i++)
            for (int blk = 0; blk < Kd / 32; blk++) {
                double amax = 0;
                for (int j = 0; j < 32; j++) amax = fmax(amax, fabs(bf16_to_d(x[i * Kd + blk * 32 + j])));
                int ex = amax == 0 ? 0 : ilogb(amax) + 127 - 2; /* bf16 values here are normal: the exponent field */
                if (ex < 0) ex = 0;
                cr_assert_eq(sc[i * Kd / 32 + blk], ex, "%s scale[%d][%d] = %d, want %d", archs[a], i, blk, sc[i * Kd / 32 + blk], ex);
                for (int j = 0; j < 32; j++) {
                    int kk = blk * 32 + j;
                    double v = bf16_to_d(x[i * Kd + kk]) * ldexp(1, 127 - ex), av = fabs(v);
                    int code = (av > 0.25) + (av >= 0.75) + (av > 1.25) + (av >= 1.75) + (av > 2.5) + (av >= 3.5) + (av > 5.0);
                    code |= v < 0 ? 8 : 0;
                    int got = (q[i * Kd / 2 + kk / 2] >> (kk % 2 * 4)) & 15;
                    cr_assert_eq(got, code, "%s code[%d][%d] = %d, want %d (x %g, scale %d, seed %llu)", archs[a], i, kk, got, code,
                                 bf16_to_d(x[i * Kd + kk]), ex, (unsigned long long)seed);
                    /* float64: the nearest e2m1 value, or 6 past it */
                    double dv = e2m1_values[got & 7];
                    for (int c2 = 0; c2 < 8; c2++) cr_assert(fabs(av - dv) <= fabs(av - e2m1_values[c2]) || av > 6, "%s code[%d][%d] not nearest", archs[a], i, kk);
                    deq[i * Kd + kk] = (got & 8 ? -dv : dv) * ldexp(1, ex - 127);
                }
            }
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double want = 0, mag = 0;
                for (int kk = 0; kk < Kd; kk++) want += deq[i * Kd + kk] * bf16_to_d(b[kk * N + j]), mag += fabs(deq[i * Kd + kk] * bf16_to_d(b[kk * N + j]));
                /* the decoded operands are exact in bf16: products exact, f32 sums */
                cr_assert(fabs(c[i * N + j] - want) <= Kd * 0x1p-24 * mag + 1e-30, "%s c[%d][%d] = %.9g, want %.9g (seed %llu)", archs[a], i, j, c[i * N + j],
                          want, (unsigned long long)seed);
            }
        unload(&k);
    }
}

/* ---- CSR sparse x dense (SpMM, as GNN libraries' Triton kernels compute a message-passing sum): one program per
 * sparse row and column block; the row's nonzeros are [rowptr[r], rowptr[r + 1]), loop bounds loaded from memory
 * (empty rows included), int64 as PyTorch's CSR indices are, so the loop counts in i64; each chunk of nonzeros gathers the dense rows its column indices name and reduces them,
 * weighted, along axis 0.  Also a segment max over the same rows (-inf for an empty one, as torch_scatter's
 * "max" leaves it before filling). ---- */
static const char *spmm_src =
    "kernel csr_spmm(rowptr: *i64, colidx: *i64, vals: *f32, dense: *f32, out: *f32, out_max: *f32, N: i32,\n"
    "                const BLOCK_NNZ: i32 = 16, const BLOCK_N: i32 = 32) {\n"
    "    let row = program_id(0);\n"
    "    let rn = program_id(1) * BLOCK_N + arange(0, BLOCK_N);\n"
    "    let nmask = rn < N;\n"
    "    let start = load(rowptr + row);\n"
    "    let end = load(rowptr + row + 1);\n"
    "    let acc = zeros([BLOCK_N], f32);\n"
    "    let mx = full([BLOCK_N], -1.0 / 0.0, f32);\n"
    "    for off in range(start, end, BLOCK_NNZ) {\n"
    "        let e = off + arange(0, BLOCK_NNZ);\n"
    "        let emask = e < end;\n"
    "        let cols = load(colidx + e, mask=emask, other=0);\n"
    "        let w = load(vals + e, mask=emask, other=0.0);\n"
    "        let m2 = emask[:, None] & nmask[None, :];\n"
    "        let rows = load(dense + cols[:, None] * N + rn[None, :], mask=m2, other=0.0);\n"
    "        acc += sum(w[:, None] * rows, axis=0);\n"
    "        mx = maximum(mx, max(where(m2, rows, -1.0 / 0.0), axis=0));\n"
    "    }\n"
    "    store(out + row * N + rn, acc, mask=nmask);\n"
    "    store(out_max + row * N + rn, mx, mask=nmask);\n"
    "}\n";

Test(lang_ports3, csr_spmm_and_segment_max) {
    seed_rng();
    enum { R = 9, NCOL = 40, N = 45, MAXNNZ = R * 40 };
    int64_t rowptr[R + 1], colidx[MAXNNZ];
    static float vals[MAXNNZ], dense[NCOL * N], out[R * N], omax[R * N];
    rowptr[0] = 0;
    for (int r = 0; r < R; r++) {
        int cnt = r == 2 || r == 6 ? 0 : r == 4 ? 37 : irand(20); /* empty rows, and one longer than two chunks */
        for (int e = 0; e < cnt; e++) colidx[rowptr[r] + e] = irand(NCOL), vals[rowptr[r] + e] = (float)urand();
        rowptr[r + 1] = rowptr[r] + cnt;
    }
    for (int i = 0; i < NCOL * N; i++) dense[i] = (float)urand();
    for (int a = 0; a < 2; a++) {
        K k;
        load_with(&k, spmm_src, "csr_spmm", archs[a], NULL, NULL);
        uint64_t drp = upload(&k, rowptr, sizeof rowptr), dci = upload(&k, colidx, sizeof colidx), dv = upload(&k, vals, sizeof vals),
                 dd = upload(&k, dense, sizeof dense), d_o = poisoned(&k, sizeof out), dm = poisoned(&k, sizeof omax);
        int n = N;
        launch3(&k, NULL, R, (N + 31) / 32, 1, (void *[]){&drp, &dci, &dv, &dd, &d_o, &dm, &n});
        download(&k, out, d_o, sizeof out);
        download(&k, omax, dm, sizeof omax);
        for (int r = 0; r < R; r++)
            for (int j = 0; j < N; j++) {
                double want = 0, mag = 0, m = -INFINITY;
                for (int64_t e = rowptr[r]; e < rowptr[r + 1]; e++) {
                    double t = (double)vals[e] * dense[colidx[e] * N + j];
                    want += t, mag += fabs(t), m = fmax(m, dense[colidx[e] * N + j]);
                }
                /* f32 products and sums: an ulp of each term and of the running sum */
                cr_assert(fabs(out[r * N + j] - want) <= (rowptr[r + 1] - rowptr[r] + 1) * 0x1p-23 * mag, "%s out[%d][%d] = %.9g, want %.9g (seed %llu)",
                          archs[a], r, j, out[r * N + j], want, (unsigned long long)seed);
                cr_assert(omax[r * N + j] == (float)m, "%s max[%d][%d] = %g, want %g", archs[a], r, j, omax[r * N + j], m);
            }
        unload(&k);
    }
}
