/* test_lang_ports.c - kernels of a serving engine, written from what they compute the way a Triton user writes them
 * (Triton's names and idioms, the forms docs/language.md gives for the rest), compiled for sm_80 and sm_90a and run on
 * the emulator against float64 (or exact integer) references at sizes that are not multiples of the tiles, outputs
 * poisoned first: fused residual add + RMSNorm in place, rotary embedding in both layouts (NeoX halves and GPT-J
 * pairs through join/split), cross-entropy with label smoothing and its gradient in one pass over vocabulary chunks,
 * per-group fp8 quantization, AWQ 4-bit dequantization (interleave and nibble shifts), a w8a8 GEMM on fp8 with
 * per-block scales, a top-k / top-p renormalization through a full sort with indices, SwiGLU forward and backward,
 * LayerNorm's backward (dw and db by atomics), a paged KV-cache append, bias + dropout + residual on Triton's
 * Philox stream, a radix sort's order-preserving keys with their digit histogram (FlagGems' sort), a batch norm
 * whose weight and bias pointers may be null or None (Triton's `if weight_pointer:`), and multinomial sampling by a
 * binary search of the CDF (Python's repeated `_` in an unpacking). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "include/tile/tile.h"
#include "runtime/device.h"
#include "support/hostfloat.h"
#include "tests/lang_run.h"
#include "tests/test_rng.h"

static const char *const archs[] = {"sm_80", "sm_90a"};

/* ---- fused residual add + RMSNorm (bf16 in, f32 math, the sum written back as the next residual) ---- */
static const char *rmsnorm_src =
    "@num_warps(4)\n"
    "kernel fused_add_rmsnorm(x_ptr: *bf16, res_ptr: *bf16, w_ptr: *bf16, out_ptr: *bf16, stride: i32, n_cols: i32, eps: f32,\n"
    "                         const BLOCK_N: i32 = 1024) {\n"
    "    let row = program_id(0);\n"
    "    let cols = arange(0, BLOCK_N);\n"
    "    let mask = cols < n_cols;\n"
    "    let x = load(x_ptr + row * stride + cols, mask=mask, other=0.0) as f32;\n"
    "    x += load(res_ptr + row * stride + cols, mask=mask, other=0.0) as f32;\n"
    "    store(res_ptr + row * stride + cols, x, mask=mask);\n"
    "    let rstd = 1.0 / sqrt(sum(x * x, axis=0) / n_cols + eps);\n"
    "    let w = load(w_ptr + cols, mask=mask) as f32;\n"
    "    store(out_ptr + row * stride + cols, x * rstd * w, mask=mask);\n"
    "}\n";

Test(lang_ports, fused_add_rmsnorm) {
    seed_rng();
    enum { M = 5, N = 700, S = 712 };
    uint16_t *x = malloc(M * S * 2), *r = malloc(M * S * 2), *w = malloc(N * 2), *o = malloc(M * S * 2), *r2 = malloc(M * S * 2);
    for (int i = 0; i < M * S; i++) x[i] = f32_to_bf16((float)urand() * 2), r[i] = f32_to_bf16((float)urand() * 2);
    for (int i = 0; i < N; i++) w[i] = f32_to_bf16((float)urand());
    for (int a = 0; a < 2; a++) {
        K k;
        load_src_on(&k, rmsnorm_src, "fused_add_rmsnorm", archs[a], NULL);
        uint64_t dx = upload(&k, x, M * S * 2), dr = upload(&k, r, M * S * 2), dw = upload(&k, w, N * 2), d_o = poisoned(&k, M * S * 2);
        int32_t stride = S, n = N;
        float eps = 1e-6f;
        launch(&k, M, (void *[]){&dx, &dr, &dw, &d_o, &stride, &n, &eps});
        download(&k, o, d_o, M * S * 2);
        download(&k, r2, dr, M * S * 2);
        for (int i = 0; i < M; i++) {
            double h[N], ms = 0;
            for (int j = 0; j < N; j++) h[j] = bf16_to_d(x[i * S + j]) + bf16_to_d(r[i * S + j]), ms += h[j] * h[j];
            double rs = 1 / sqrt(ms / N + 1e-6);
            for (int j = 0; j < N; j++) {
                double want = h[j] * rs * bf16_to_d(w[j]), got = bf16_to_d(o[i * S + j]);
                cr_assert(fabs(got - want) <= 8e-3 * fabs(want) + 1e-6, "%s out[%d][%d] = %g, want %g", archs[a], i, j, got, want);
                cr_assert(fabs(bf16_to_d(r2[i * S + j]) - h[j]) <= 4e-3 * fabs(h[j]), "%s residual[%d][%d]", archs[a], i, j);
            }
            for (int j = N; j < S; j++) cr_assert_eq(o[i * S + j], 0xffff, "%s out[%d][%d] past the row was written", archs[a], i, j);
        }
        unload(&k);
    }
    free(x), free(r), free(w), free(o), free(r2);
}

/* ---- rotary embedding in place on q [T, H, D] at per-token positions; NeoX rotates the halves, GPT-J the pairs ---- */
static const char *rope_src =
    "kernel rope(q: *f16, cos_p: *f32, sin_p: *f32, pos_p: *i64, n_heads: i32, stride_t: i32, stride_h: i32,\n"
    "            const ROT: i32 = 32, const NEOX: i1 = true, const BH: i32 = 4) {\n"
    "    let t = program_id(0);\n"
    "    let pos = load(pos_p + t);\n"
    "    const HALF = ROT / 2;\n"
    "    let heads = program_id(1) * BH + arange(0, BH);\n"
    "    let hmask = (heads < n_heads)[:, None];\n"
    "    let i = arange(0, HALF);\n"
    "    let c = load(cos_p + pos * HALF + i)[None, :];\n"
    "    let s = load(sin_p + pos * HALF + i)[None, :];\n"
    "    let base = q + t * stride_t + heads[:, None] * stride_h;\n"
    "    if NEOX {\n"
    "        let x1 = load(base + i[None, :], hmask, 0.0) as f32;\n"
    "        let x2 = load(base + HALF + i[None, :], hmask, other=0.0) as f32;\n"
    "        store(base + i[None, :], x1 * c - x2 * s, hmask);\n"
    "        store(base + HALF + i[None, :], x2 * c + x1 * s, hmask);\n"
    "    } else {\n"
    "        let pe = base + 2 * i[None, :];\n"
    "        let x = load(reshape(join(pe, pe + 1), [BH, ROT]), hmask);\n"
    "        let (x1, x2) = split(reshape(x as f32, [BH, HALF, 2]));\n"
    "        store(reshape(join(pe, pe + 1), [BH, ROT]), reshape(join(x1 * c - x2 * s, x2 * c + x1 * s), [BH, ROT]), hmask);\n"
    "    }\n"
    "}\n";

Test(lang_ports, rotary_embedding_neox_and_gptj) {
    seed_rng();
    enum { T = 3, H = 5, D = 64, ROT = 32, HALF = ROT / 2, MAXP = 10, ST = H * D + 3 };
    uint16_t q[T * ST], o[T * ST];
    float cs[MAXP * HALF], sn[MAXP * HALF];
    int64_t pos[T] = {7, 2, 9};
    for (int p = 0; p < MAXP; p++)
        for (int j = 0; j < HALF; j++) {
            double f = p * pow(10000.0, -2.0 * j / ROT);
            cs[p * HALF + j] = (float)cos(f), sn[p * HALF + j] = (float)sin(f);
        }
    for (int i = 0; i < T * ST; i++) q[i] = f32_to_f16((float)urand());
    for (int a = 0; a < 2; a++)
        for (int neox = 0; neox < 2; neox++) {
            K k;
            char src[4096]; /* the kernel with NEOX's default false for GPT-J */
            const char *flag = strstr(rope_src, "NEOX: i1 = true");
            snprintf(src, sizeof src, "%.*sNEOX: i1 = %s%s", (int)(flag - rope_src), rope_src, neox ? "true" : "false", flag + 15);
            load_src_on(&k, src, "rope", archs[a], NULL);
            uint64_t dq = upload(&k, q, sizeof q), dc = upload(&k, cs, sizeof cs), ds = upload(&k, sn, sizeof sn), dp = upload(&k, pos, sizeof pos);
            int32_t nh = H, st = ST, sh = D;
            DevStatus s2 = dev_launch(k.fn, T, 2, 1, (unsigned)k.threads, 1, 1, 0, NULL, (void *[]){&dq, &dc, &ds, &dp, &nh, &st, &sh});
            cr_assert_eq(s2, DEV_OK, "%s", dev_last_error(k.dev));
            cr_assert_eq(dev_synchronize(k.dev), DEV_OK, "%s", dev_last_error(k.dev));
            download(&k, o, dq, sizeof o);
            for (int t = 0; t < T; t++)
                for (int h = 0; h < H; h++)
                    for (int j = 0; j < HALF; j++) {
                        int b = t * ST + h * D, a1 = neox ? b + j : b + 2 * j, a2 = neox ? b + HALF + j : b + 2 * j + 1;
                        double c = cs[pos[t] * HALF + j], s = sn[pos[t] * HALF + j], x1 = f16_to_d(q[a1]), x2 = f16_to_d(q[a2]);
                        double w1 = x1 * c - x2 * s, w2 = x2 * c + x1 * s;
                        cr_assert(fabs(f16_to_d(o[a1]) - w1) <= 2e-3 && fabs(f16_to_d(o[a2]) - w2) <= 2e-3, "%s neox=%d t %d h %d j %d",
                                  archs[a], neox, t, h, j);
                    }
            for (int t = 0; t < T; t++) /* the dims past ROT and the padding after the heads are left alone */
                for (int i = 0; i < ST; i++) {
                    int h = i / D, d = i % D;
                    if (h >= H || d >= ROT) cr_assert_eq(o[t * ST + i], q[t * ST + i], "%s neox=%d: element %d of token %d changed", archs[a], neox, i, t);
                }
            unload(&k);
        }
}

/* ---- cross-entropy with label smoothing: the loss per row and the gradient written over the logits, in chunks of
 * the vocabulary with an online log-sum-exp; a row whose label is ignore_index gets zeros and leaves early ---- */
static const char *ce_src =
    "kernel ce_fwd_bwd(logits: *f32, stride: i64, labels: *i64, loss: *f32, n_cols: i32, ignore_index: i32,\n"
    "                  label_smoothing: f32, const BLOCK: i32 = 128) {\n"
    "    let row = program_id(0) as i64;\n"
    "    let lp = logits + row * stride;\n"
    "    let y = load(labels + row) as i32;\n"
    "    if y == ignore_index {\n"
    "        for off in range(0, n_cols, BLOCK) {\n"
    "            let c = off + arange(0, BLOCK);\n"
    "            store(lp + c, 0.0, c < n_cols);\n"
    "        }\n"
    "        store(loss + row, 0.0);\n"
    "        return;\n"
    "    }\n"
    "    let m = -1.0 / 0.0;\n"
    "    let d = 0.0;\n"
    "    let ori_y = load(lp + y);\n"
    "    let scaled_sum = 0.0;\n"
    "    let eps = label_smoothing / n_cols;\n"
    "    for off in range(0, n_cols, BLOCK) {\n"
    "        let c = off + arange(0, BLOCK);\n"
    "        let x = load(lp + c, c < n_cols, -1.0 / 0.0);\n"
    "        if label_smoothing > 0.0 { scaled_sum += sum(where(c < n_cols, -eps * x, 0.0)); }\n"
    "        let m_new = maximum(m, max(x, 0));\n"
    "        d = d * exp(m - m_new) + sum(exp(x - m_new));\n"
    "        m = m_new;\n"
    "    }\n"
    "    let lse = m + log(d);\n"
    "    for off in range(0, n_cols, BLOCK) {\n"
    "        let c = off + arange(0, BLOCK);\n"
    "        let x = load(lp + c, c < n_cols, -1.0 / 0.0);\n"
    "        let g = exp(x - m) / d - eps;\n"
    "        store(lp + c, where(c == y, g - (1.0 - label_smoothing), g), c < n_cols);\n"
    "    }\n"
    "    let l = lse - ori_y;\n"
    "    if label_smoothing > 0.0 { l = l * (1.0 - label_smoothing) + scaled_sum + label_smoothing * lse; }\n"
    "    store(loss + row, l);\n"
    "}\n";

Test(lang_ports, cross_entropy_label_smoothing) {
    seed_rng();
    enum { M = 5, V = 1000 };
    float *x = malloc(M * V * 4), *g = malloc(M * V * 4), loss[M];
    int64_t labels[M] = {3, 999, -100, 0, 517};
    for (int i = 0; i < M * V; i++) x[i] = (float)(urand() * 5);
    for (int a = 0; a < 2; a++)
        for (int si = 0; si < 2; si++) {
            float ls = si ? 0.1f : 0.0f;
            K k;
            load_src_on(&k, ce_src, "ce_fwd_bwd", archs[a], NULL);
            uint64_t dx = upload(&k, x, M * V * 4), dl = upload(&k, labels, sizeof labels), dloss = poisoned(&k, sizeof loss);
            int64_t stride = V;
            int32_t n = V, ign = -100;
            launch(&k, M, (void *[]){&dx, &stride, &dl, &dloss, &n, &ign, &ls});
            download(&k, g, dx, M * V * 4);
            download(&k, loss, dloss, sizeof loss);
            for (int i = 0; i < M; i++) {
                const float *row = x + i * V;
                if (labels[i] == -100) {
                    cr_assert_eq(loss[i], 0.0f);
                    for (int j = 0; j < V; j++) cr_assert_eq(g[i * V + j], 0.0f, "%s ignored row %d: grad[%d] = %g", archs[a], i, j, g[i * V + j]);
                    continue;
                }
                double mx = -INFINITY, s = 0, tot = 0;
                for (int j = 0; j < V; j++) mx = fmax(mx, row[j]);
                for (int j = 0; j < V; j++) s += exp(row[j] - mx), tot += row[j];
                double lse = mx + log(s), eps = (double)ls / V;
                double want = (lse - row[labels[i]]) * (1 - ls) + ls * lse - eps * tot;
                cr_assert(fabs(loss[i] - want) <= 1e-4 * fabs(want) + 1e-5, "%s ls %g loss[%d] = %.9g, want %.9g", archs[a], ls, i, loss[i], want);
                for (int j = 0; j < V; j++) {
                    double gw = exp(row[j] - lse) - eps - (j == labels[i] ? 1 - (double)ls : 0);
                    cr_assert(fabs(g[i * V + j] - gw) <= 1e-5 * fabs(gw) + 1e-7, "%s ls %g grad[%d][%d] = %.9g, want %.9g", archs[a], ls, i, j,
                              g[i * V + j], gw);
                }
            }
            unload(&k);
        }
    free(x), free(g);
}

/* ---- per-group fp8 quantization: groups of G along each row, scale = amax / 448, the quotient clamped and rounded to
 * e4m3 (to nearest even, once), scales [M, N / G] ---- */
static const char *quant_src =
    "kernel quant_per_group(x: *bf16, q: *f8e4m3, scale: *f32, n: i32, M: i32, const G: i32 = 128, const BM: i32 = 4) {\n"
    "    let rows = program_id(0) * BM + arange(0, BM);\n"
    "    let gi = program_id(1);\n"
    "    let c = gi * G + arange(0, G);\n"
    "    let m = (rows < M)[:, None] & (c < n)[None, :];\n"
    "    let xf = load(x + rows[:, None] * n + c[None, :], m, 0.0) as f32;\n"
    "    let s = maximum(max(abs(xf), axis=1, keep_dims=true), 1e-10) / 448.0;\n"
    "    store(q + rows[:, None] * n + c[None, :], cast(clamp(xf / s, -448.0, 448.0), f8e4m3), m);\n"
    "    store(scale + rows[:, None] * cdiv(n, G) + gi, s, (rows < M)[:, None]);\n"
    "}\n";

Test(lang_ports, fp8_quantization_per_group) {
    seed_rng();
    enum { M = 5, N = 700, G = 128, NG = (N + G - 1) / G };
    uint16_t *x = malloc(M * N * 2);
    uint8_t *q = malloc(M * N);
    float sc[M * NG];
    for (int i = 0; i < M * N; i++) x[i] = f32_to_bf16((float)(urand() * 3));
    for (int a = 0; a < 2; a++) {
        K k;
        load_src_on(&k, quant_src, "quant_per_group", archs[a], NULL);
        uint64_t dx = upload(&k, x, M * N * 2), dq = poisoned(&k, M * N), ds = poisoned(&k, sizeof sc);
        int32_t n = N, m = M;
        DevStatus st = dev_launch(k.fn, (M + 3) / 4, NG, 1, (unsigned)k.threads, 1, 1, 0, NULL, (void *[]){&dx, &dq, &ds, &n, &m});
        cr_assert_eq(st, DEV_OK, "%s", dev_last_error(k.dev));
        cr_assert_eq(dev_synchronize(k.dev), DEV_OK, "%s", dev_last_error(k.dev));
        download(&k, q, dq, M * N);
        download(&k, sc, ds, sizeof sc);
        for (int i = 0; i < M; i++)
            for (int gi = 0; gi < NG; gi++) {
                double amax = 0;
                for (int j = gi * G; j < N && j < (gi + 1) * G; j++) amax = fmax(amax, fabs(bf16_to_d(x[i * N + j])));
                float s = (float)(fmax(amax, 1e-10) / 448.0);
                cr_assert_eq(sc[i * NG + gi], s, "%s scale[%d][%d] = %.9g, want %.9g", archs[a], i, gi, sc[i * NG + gi], s);
                for (int j = gi * G; j < N && j < (gi + 1) * G; j++) {
                    float quot = (float)bf16_to_d(x[i * N + j]) / s; /* f32's division, as the kernel's */
                    uint8_t want = d_to_f8(fmin(fmax(quot, -448.0), 448.0), 0);
                    cr_assert_eq(q[i * N + j], want, "%s q[%d][%d] = 0x%02x, want 0x%02x (%g)", archs[a], i, j, q[i * N + j], want, quot);
                }
            }
        unload(&k);
    }
    free(x), free(q);
}

/* ---- AWQ dequantization (vLLM's kernel): i32 words of eight 4-bit weights in AWQ's order, zeros packed alike, f16
 * scales per group of rows; interleave three times, then each column's nibble by a shift ---- */
static const char *awq_src =
    "kernel awq_dequant(qweight: *i32, scales: *f16, zeros: *i32, result: *f16, group_size: i32, num_cols: i32, num_rows: i32,\n"
    "                   const BY: i32 = 4, const BX: i32 = 4) {\n"
    "    let pid_x = program_id(0);\n"
    "    let pid_y = program_id(1);\n"
    "    let oy = pid_y * BY + arange(0, BY);\n"
    "    let ox = pid_x * BX + arange(0, BX);\n"
    "    let iw = load(qweight + num_cols * oy[:, None] + ox[None, :], (oy[:, None] < num_rows) & (ox[None, :] < num_cols), 0);\n"
    "    iw = interleave(iw, iw);\n"
    "    iw = interleave(iw, iw);\n"
    "    iw = interleave(iw, iw);\n"
    "    let reverse_awq_order = reshape((arange(0, 2) * 4)[None, :] + arange(0, 4)[:, None], [8]);\n"
    "    let shifts = reshape(broadcast_to((reverse_awq_order * 4)[None, :], [BY * BX, 8]), [BY, BX * 8]);\n"
    "    iw = (iw >> shifts) & 0xF;\n"
    "    let zy = pid_y * BY / group_size + arange(0, 1);\n"
    "    let z = load(zeros + num_cols * zy[:, None] + ox[None, :], (zy[:, None] < num_rows / group_size) & (ox[None, :] < num_cols), 0);\n"
    "    z = interleave(z, z);\n"
    "    z = interleave(z, z);\n"
    "    z = interleave(z, z);\n"
    "    z = (broadcast_to(z, [BY, BX * 8]) >> shifts) & 0xF;\n"
    "    let sx = pid_x * BX * 8 + arange(0, BX * 8);\n"
    "    let s = load(scales + zy[:, None] * num_cols * 8 + sx[None, :], (zy[:, None] < num_rows / group_size) & (sx[None, :] < num_cols * 8), 0.0);\n"
    "    store(result + oy[:, None] * num_cols * 8 + sx[None, :], ((iw - z) as f16) * broadcast_to(s, [BY, BX * 8]),\n"
    "          (oy[:, None] < num_rows) & (sx[None, :] < num_cols * 8));\n"
    "}\n";

Test(lang_ports, awq_dequantize) {
    seed_rng();
    enum { R = 16, C = 5, G = 4, W = C * 8 };
    static const int nibble[8] = {0, 4, 1, 5, 2, 6, 3, 7}; /* logical column j of a word sits in nibble nibble[j] (AWQ's order 0 2 4 6 1 3 5 7, reversed) */
    int wv[R][W], zv[R / G][W];
    int32_t qw[R * C], qz[R / G * C];
    uint16_t sc[R / G * W], out[R * W];
    for (int r = 0; r < R; r++)
        for (int c = 0; c < W; c++) wv[r][c] = irand(16);
    for (int r = 0; r < R / G; r++)
        for (int c = 0; c < W; c++) zv[r][c] = irand(16), sc[r * W + c] = f32_to_f16((float)(0.055 + 0.045 * urand()));
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++) {
            uint32_t u = 0, uz = 0;
            for (int j = 0; j < 8; j++) {
                u |= (uint32_t)wv[r][c * 8 + j] << (4 * nibble[j]);
                if (r < R / G) uz |= (uint32_t)zv[r][c * 8 + j] << (4 * nibble[j]);
            }
            qw[r * C + c] = (int32_t)u;
            if (r < R / G) qz[r * C + c] = (int32_t)uz;
        }
    for (int a = 0; a < 2; a++) {
        K k;
        load_src_on(&k, awq_src, "awq_dequant", archs[a], NULL);
        uint64_t dq = upload(&k, qw, sizeof qw), ds = upload(&k, sc, sizeof sc), dz = upload(&k, qz, sizeof qz), d_o = poisoned(&k, sizeof out);
        int32_t g = G, nc = C, nr = R;
        DevStatus st = dev_launch(k.fn, (C + 3) / 4, (R + 3) / 4, 1, (unsigned)k.threads, 1, 1, 0, NULL, (void *[]){&dq, &ds, &dz, &d_o, &g, &nc, &nr});
        cr_assert_eq(st, DEV_OK, "%s", dev_last_error(k.dev));
        cr_assert_eq(dev_synchronize(k.dev), DEV_OK, "%s", dev_last_error(k.dev));
        download(&k, out, d_o, sizeof out);
        for (int r = 0; r < R; r++)
            for (int c = 0; c < W; c++) {
                uint16_t want = f32_to_f16((float)(wv[r][c] - zv[r / G][c]) * (float)f16_to_d(sc[r / G * W + c])); /* exact product, rounded once */
                cr_assert_eq(out[r * W + c], want, "%s out[%d][%d] = %g, want %g", archs[a], r, c, f16_to_d(out[r * W + c]), f16_to_d(want));
            }
        unload(&k);
    }
}

/* ---- w8a8 GEMM on fp8 with block scales (DeepSeek-V3's): A [M, K] e4m3 with a scale per row and 128 columns, B
 * [N, K] e4m3 with a scale per 128 x 128 block; each K step's dot is scaled before it is accumulated ---- */
static const char *w8a8_src =
    "@num_warps(4)\n"
    "kernel w8a8_block_fp8(A: *f8e4m3, B: *f8e4m3, C: *bf16, As: *f32, Bs: *f32, M: i32, N: i32, K: i32,\n"
    "                      stride_am: i32, stride_bn: i32, stride_cm: i32, stride_as_m: i32, stride_bs_n: i32,\n"
    "                      const GROUP_N: i32 = 128, const GROUP_K: i32 = 128, const BM: i32 = 32, const BN: i32 = 64, const BK: i32 = 128) {\n"
    "    let offs_am = (program_id(0) * BM + arange(0, BM)) % M;\n"
    "    let offs_bn = (program_id(1) * BN + arange(0, BN)) % N;\n"
    "    let offs_k = arange(0, BK);\n"
    "    let a_ptrs = A + offs_am[:, None] * stride_am + offs_k[None, :];\n"
    "    let b_ptrs = B + offs_k[:, None] + offs_bn[None, :] * stride_bn;\n"
    "    let as_ptrs = As + offs_am * stride_as_m;\n"
    "    let bs_ptrs = Bs + (offs_bn / GROUP_N) * stride_bs_n;\n"
    "    let acc = zeros((BM, BN), dtype=f32);\n"
    "    for k in range(0, cdiv(K, BK)) {\n"
    "        let a = load(a_ptrs, mask=offs_k[None, :] < K - k * BK, other=0.0);\n"
    "        let b = load(b_ptrs, mask=offs_k[:, None] < K - k * BK, other=0.0);\n"
    "        let ks = k * BK / GROUP_K;\n"
    "        acc += dot(a, b) * load(as_ptrs + ks)[:, None] * load(bs_ptrs + ks)[None, :];\n"
    "        a_ptrs += BK;\n"
    "        b_ptrs += BK;\n"
    "    }\n"
    "    let offs_cm = program_id(0) * BM + arange(0, BM);\n"
    "    let offs_cn = program_id(1) * BN + arange(0, BN);\n"
    "    store(C + stride_cm * offs_cm[:, None] + offs_cn[None, :], acc as bf16, (offs_cm[:, None] < M) & (offs_cn[None, :] < N));\n"
    "}\n";

static uint8_t f8_finite(void) {
    uint8_t b = (uint8_t)irand(256);
    return (b & 0x7f) == 0x7f ? 0 : b; /* no NaN */
}

Test(lang_ports, w8a8_block_fp8_gemm) {
    seed_rng();
    enum { M = 40, N = 200, KD = 300, KG = (KD + 127) / 128, NG = (N + 127) / 128 };
    uint8_t *A = malloc(M * KD), *B = malloc(N * KD);
    float As[M * KG], Bs[NG * KG];
    uint16_t *C = malloc(M * N * 2);
    for (int i = 0; i < M * KD; i++) A[i] = f8_finite();
    for (int i = 0; i < N * KD; i++) B[i] = f8_finite();
    for (int i = 0; i < M * KG; i++) As[i] = (float)(1.5e-3 + 5e-4 * urand());
    for (int i = 0; i < NG * KG; i++) Bs[i] = (float)(1.5e-3 + 5e-4 * urand());
    for (int a = 0; a < 2; a++) {
        K kk;
        load_src_on(&kk, w8a8_src, "w8a8_block_fp8", archs[a], NULL);
        uint64_t da = upload(&kk, A, M * KD), db = upload(&kk, B, N * KD), dc = poisoned(&kk, M * N * 2), das = upload(&kk, As, sizeof As),
                 dbs = upload(&kk, Bs, sizeof Bs);
        int32_t m = M, n = N, k = KD, sam = KD, sbn = KD, scm = N, sasm = KG, sbsn = KG;
        DevStatus st = dev_launch(kk.fn, (M + 31) / 32, (N + 63) / 64, 1, (unsigned)kk.threads, 1, 1, kk.dyn_smem, NULL,
                                  (void *[]){&da, &db, &dc, &das, &dbs, &m, &n, &k, &sam, &sbn, &scm, &sasm, &sbsn});
        cr_assert_eq(st, DEV_OK, "%s", dev_last_error(kk.dev));
        cr_assert_eq(dev_synchronize(kk.dev), DEV_OK, "%s", dev_last_error(kk.dev));
        download(&kk, C, dc, M * N * 2);
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double want = 0, mag = 0;
                for (int g = 0; g < KG; g++) {
                    double part = 0, pm = 0;
                    for (int q = g * 128; q < KD && q < (g + 1) * 128; q++) {
                        double p = f8e4m3_to_d(A[i * KD + q]) * f8e4m3_to_d(B[j * KD + q]);
                        part += p, pm += fabs(p);
                    }
                    want += part * As[i * KG + g] * Bs[(j / 128) * KG + g];
                    mag += pm * As[i * KG + g] * Bs[(j / 128) * KG + g];
                }
                double got = bf16_to_d(C[i * N + j]);
                cr_assert(fabs(got - want) <= 4e-3 * fabs(want) + 1e-6 * mag, "%s C[%d][%d] = %g, want %g", archs[a], i, j, got, want);
            }
        unload(&kk);
    }
    free(A), free(B), free(C);
}

/* ---- top-k / top-p renormalization of a row of logits at a temperature: a descending sort with indices, softmax,
 * the cumulative mass; kept tokens (at most TOPK, until the mass before them reaches top_p) renormalized and
 * scattered back to vocabulary order, the others 0 ---- */
static const char *top_p_src =
    "kernel top_p_renorm(logits: *f32, out: *f32, n: i32, top_p: f32, temperature: f32, const V: i32 = 1024, const TOPK: i32 = 16) {\n"
    "    let row = program_id(0);\n"
    "    let c = arange(0, V);\n"
    "    let x = load(logits + row * n + c, c < n, -1.0 / 0.0) / temperature;\n"
    "    let (sx, si) = topk(x, V, return_indices=true);\n"
    "    let p = exp(sx - max(sx, 0));\n"
    "    p = p / sum(p, 0);\n"
    "    let keep = ((cumsum(p, 0) - p) < top_p) & (arange(0, V) < TOPK);\n"
    "    let kept = where(keep, p, 0.0);\n"
    "    store(out + row * n + si, kept / sum(kept, axis=0), si < n);\n"
    "}\n";

static int cmp_desc(const void *a, const void *b, void *x) {
    const float *v = x;
    int i = *(const int *)a, j = *(const int *)b;
    return v[i] > v[j] ? -1 : v[i] < v[j] ? 1 : i - j;
}

Test(lang_ports, top_k_top_p_renormalize) {
    seed_rng();
    enum { M = 3, N = 1000, TOPK = 16 };
    float *x = malloc(M * N * 4), *o = malloc(M * N * 4), top_p = 0.3f, temp = 0.7f;
    for (int i = 0; i < M * N; i++) x[i] = (float)(urand() * 3);
    for (int a = 0; a < 2; a++) {
        K k;
        load_src_on(&k, top_p_src, "top_p_renorm", archs[a], NULL);
        uint64_t dx = upload(&k, x, M * N * 4), d_o = poisoned(&k, M * N * 4);
        int32_t n = N;
        launch(&k, M, (void *[]){&dx, &d_o, &n, &top_p, &temp});
        download(&k, o, d_o, M * N * 4);
        for (int i = 0; i < M; i++) {
            float r[N];
            int order[N];
            for (int j = 0; j < N; j++) r[j] = x[i * N + j] / temp, order[j] = j;
            qsort_r(order, N, sizeof *order, cmp_desc, r);
            double z = 0, cum = 0, kz = 0, p[N], want[N] = {0};
            for (int t = 0; t < N; t++) z += exp((double)r[order[t]] - r[order[0]]);
            int kept = 0;
            for (int t = 0; t < N; t++) {
                p[t] = exp((double)r[order[t]] - r[order[0]]) / z;
                if (cum < top_p && t < TOPK) kz += p[t], kept++;
                cum += p[t];
            }
            for (int t = 0; t < kept; t++) want[order[t]] = p[t] / kz;
            cr_assert(kept >= 1 && kept <= TOPK, "kept %d", kept);
            for (int j = 0; j < N; j++)
                cr_assert(fabs(o[i * N + j] - want[j]) <= 1e-5 * want[j] + 1e-7, "%s row %d token %d: %.9g, want %.9g", archs[a], i, j,
                          o[i * N + j], want[j]);
        }
        unload(&k);
    }
    free(x), free(o);
}

/* ---- SwiGLU forward and backward over [M, 2N] rows (gate, then up): y = silu(g) u; dg = dy u s (1 + g (1 - s)),
 * du = dy silu(g), s = sigmoid(g) ---- */
static const char *swiglu_src =
    "kernel swiglu_fwd(x: *bf16, out: *bf16, n: i32, stride: i32, const B: i32 = 256) {\n"
    "    let row = program_id(0);\n"
    "    let cols = program_id(1) * B + arange(0, B);\n"
    "    let m = cols < n;\n"
    "    let g = load(x + row * stride + cols, m, 0.0) as f32;\n"
    "    let u = load(x + row * stride + n + cols, m, 0.0) as f32;\n"
    "    store(out + row * n + cols, g * sigmoid(g) * u, m);\n"
    "}\n"
    "kernel swiglu_bwd(x: *bf16, dy: *bf16, dx: *bf16, n: i32, stride: i32, const B: i32 = 256) {\n"
    "    let row = program_id(0);\n"
    "    let cols = program_id(1) * B + arange(0, B);\n"
    "    let m = cols < n;\n"
    "    let g = load(x + row * stride + cols, m, 0.0) as f32;\n"
    "    let u = load(x + row * stride + n + cols, m, 0.0) as f32;\n"
    "    let d = load(dy + row * n + cols, m, 0.0) as f32;\n"
    "    let s = sigmoid(g);\n"
    "    store(dx + row * stride + cols, d * u * s * (1.0 + g * (1.0 - s)), m);\n"
    "    store(dx + row * stride + n + cols, d * g * s, m);\n"
    "}\n";

Test(lang_ports, swiglu_forward_and_backward) {
    seed_rng();
    enum { M = 3, N = 300 };
    uint16_t x[M * 2 * N], dy[M * N], y[M * N], dx[M * 2 * N];
    for (int i = 0; i < M * 2 * N; i++) x[i] = f32_to_bf16((float)(urand() * 4));
    for (int i = 0; i < M * N; i++) dy[i] = f32_to_bf16((float)urand());
    for (int a = 0; a < 2; a++) {
        K k;
        load_src_on(&k, swiglu_src, "swiglu_fwd", archs[a], NULL);
        uint64_t d_x = upload(&k, x, sizeof x), d_y = poisoned(&k, sizeof y), d_dy = upload(&k, dy, sizeof dy), d_dx = poisoned(&k, sizeof dx);
        int32_t n = N, stride = 2 * N;
        DevStatus st = dev_launch(k.fn, M, 2, 1, (unsigned)k.threads, 1, 1, 0, NULL, (void *[]){&d_x, &d_y, &n, &stride});
        cr_assert_eq(st, DEV_OK, "%s", dev_last_error(k.dev));
        cr_assert_eq(dev_module_get_function(k.mod, "swiglu_bwd", &k.fn), DEV_OK);
        st = dev_launch(k.fn, M, 2, 1, (unsigned)k.threads, 1, 1, 0, NULL, (void *[]){&d_x, &d_dy, &d_dx, &n, &stride});
        cr_assert_eq(st, DEV_OK, "%s", dev_last_error(k.dev));
        cr_assert_eq(dev_synchronize(k.dev), DEV_OK, "%s", dev_last_error(k.dev));
        download(&k, y, d_y, sizeof y);
        download(&k, dx, d_dx, sizeof dx);
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double g = bf16_to_d(x[i * 2 * N + j]), u = bf16_to_d(x[i * 2 * N + N + j]), d = bf16_to_d(dy[i * N + j]), s = 1 / (1 + exp(-g));
                double wy = g * s * u, wg = d * u * s * (1 + g * (1 - s)), wu = d * g * s;
                cr_assert(fabs(bf16_to_d(y[i * N + j]) - wy) <= 8e-3 * fabs(wy) + 1e-6, "%s y[%d][%d] = %g, want %g", archs[a], i, j,
                          bf16_to_d(y[i * N + j]), wy);
                cr_assert(fabs(bf16_to_d(dx[i * 2 * N + j]) - wg) <= 8e-3 * fabs(wg) + 1e-6, "%s dg[%d][%d]", archs[a], i, j);
                cr_assert(fabs(bf16_to_d(dx[i * 2 * N + N + j]) - wu) <= 8e-3 * fabs(wu) + 1e-6, "%s du[%d][%d]", archs[a], i, j);
            }
        unload(&k);
    }
}

/* ---- LayerNorm backward: dx per row, and dw, db summed over the rows each program takes, added with atomics
 * (relaxed, and the default acq_rel) ---- */
static const char *ln_bwd_src =
    "kernel ln_bwd(x: *f32, dy: *f32, w: *f32, mean: *f32, rstd: *f32, dx: *f32, dw: *f32, db: *f32, M: i32, N: i32,\n"
    "              const BN: i32 = 256, const ROWS: i32 = 3) {\n"
    "    let cols = arange(0, BN);\n"
    "    let cm = cols < N;\n"
    "    let w_ = load(w + cols, cm, 0.0);\n"
    "    let dw_acc = zeros([BN], f32);\n"
    "    let db_acc = zeros_like(dw_acc);\n"
    "    for r in range(0, ROWS) {\n"
    "        let row = program_id(0) * ROWS + r;\n"
    "        if row < M {\n"
    "            let x_ = load(x + row * N + cols, cm, 0.0);\n"
    "            let dy_ = load(dy + row * N + cols, cm, 0.0);\n"
    "            let rs = load(rstd + row);\n"
    "            let xhat = where(cm, (x_ - load(mean + row)) * rs, 0.0);\n"
    "            let wdy = w_ * dy_;\n"
    "            let c1 = sum(xhat * wdy, axis=0) / N;\n"
    "            let c2 = sum(wdy, axis=0) / N;\n"
    "            store(dx + row * N + cols, (wdy - (xhat * c1 + c2)) * rs, cm);\n"
    "            dw_acc += dy_ * xhat;\n"
    "            db_acc += dy_;\n"
    "        }\n"
    "    }\n"
    "    atomic_add(dw + cols, dw_acc, cm, sem=\"relaxed\");\n"
    "    atomic_add(db + cols, db_acc, mask=cm);\n"
    "}\n";

Test(lang_ports, layer_norm_backward) {
    seed_rng();
    enum { M = 10, N = 200 };
    float x[M * N], dy[M * N], w[N], mu[M], rs[M], dx[M * N], dw[N], db[N];
    for (int i = 0; i < M * N; i++) x[i] = (float)urand(), dy[i] = (float)urand();
    for (int j = 0; j < N; j++) w[j] = (float)urand();
    for (int i = 0; i < M; i++) {
        double s = 0, v = 0;
        for (int j = 0; j < N; j++) s += x[i * N + j];
        for (int j = 0; j < N; j++) v += (x[i * N + j] - s / N) * (x[i * N + j] - s / N);
        mu[i] = (float)(s / N), rs[i] = (float)(1 / sqrt(v / N + 1e-5));
    }
    for (int a = 0; a < 2; a++) {
        K k;
        load_src_on(&k, ln_bwd_src, "ln_bwd", archs[a], NULL);
        float zero[N] = {0};
        uint64_t d_x = upload(&k, x, sizeof x), d_dy = upload(&k, dy, sizeof dy), d_w = upload(&k, w, sizeof w), d_mu = upload(&k, mu, sizeof mu),
                 d_rs = upload(&k, rs, sizeof rs), d_dx = poisoned(&k, sizeof dx), d_dw = upload(&k, zero, sizeof zero), d_db = upload(&k, zero, sizeof zero);
        int32_t m = M, n = N;
        launch(&k, (M + 2) / 3, (void *[]){&d_x, &d_dy, &d_w, &d_mu, &d_rs, &d_dx, &d_dw, &d_db, &m, &n});
        download(&k, dx, d_dx, sizeof dx);
        download(&k, dw, d_dw, sizeof dw);
        download(&k, db, d_db, sizeof db);
        double wdw[N] = {0}, wdb[N] = {0};
        for (int i = 0; i < M; i++) {
            double xh[N], wd[N], c1 = 0, c2 = 0;
            for (int j = 0; j < N; j++) xh[j] = ((double)x[i * N + j] - mu[i]) * rs[i], wd[j] = (double)w[j] * dy[i * N + j], c1 += xh[j] * wd[j], c2 += wd[j];
            c1 /= N, c2 /= N;
            for (int j = 0; j < N; j++) {
                double want = (wd[j] - (xh[j] * c1 + c2)) * rs[i];
                cr_assert(fabs(dx[i * N + j] - want) <= 1e-4 * fabs(want) + 1e-5, "%s dx[%d][%d] = %g, want %g (seed %llu)", archs[a], i, j,
                          dx[i * N + j], want, (unsigned long long)seed);
                wdw[j] += dy[i * N + j] * xh[j], wdb[j] += dy[i * N + j];
            }
        }
        for (int j = 0; j < N; j++) {
            cr_assert(fabs(dw[j] - wdw[j]) <= 1e-4 * fabs(wdw[j]) + 1e-5, "%s dw[%d] = %g, want %g", archs[a], j, dw[j], wdw[j]);
            cr_assert(fabs(db[j] - wdb[j]) <= 1e-4 * fabs(wdb[j]) + 1e-5, "%s db[%d] = %g, want %g", archs[a], j, db[j], wdb[j]);
        }
        unload(&k);
    }
}

/* ---- paged KV-cache append: token t's K and V heads go to slot slot_mapping[t] (block slot / BLOCK_SIZE, row
 * slot % BLOCK_SIZE) of the caches; a slot of -1 (a padding token) writes nothing ---- */
static const char *kv_src =
    "kernel kv_append(k: *f16, v: *f16, k_cache: *f16, v_cache: *f16, slot_mapping: *i64, stride_kt: i32, stride_kh: i32,\n"
    "                 stride_cb: i64, stride_cs: i32, stride_ch: i32, n_heads: i32,\n"
    "                 const BLOCK_SIZE: i32 = 16, const HD: i32 = 64, const BH: i32 = 2) {\n"
    "    let t = program_id(0);\n"
    "    let slot = load(slot_mapping + t);\n"
    "    if slot < 0 { return; }\n"
    "    let blk = slot / BLOCK_SIZE;\n"
    "    let off = (slot % BLOCK_SIZE) as i32;\n"
    "    let h = program_id(1) * BH + arange(0, BH);\n"
    "    let d = arange(0, HD);\n"
    "    let mask = (h < n_heads)[:, None];\n"
    "    let src = t * stride_kt + h[:, None] * stride_kh + d[None, :];\n"
    "    let dst = blk * stride_cb + off * stride_cs + h[:, None] * stride_ch + d[None, :];\n"
    "    store(k_cache + dst, load(k + src, mask), mask);\n"
    "    store(v_cache + dst, load(v + src, mask), mask);\n"
    "}\n";

Test(lang_ports, paged_kv_cache_append) {
    seed_rng();
    enum { T = 6, H = 3, HD = 64, BS = 16, NB = 5, CS = NB * BS * H * HD };
    static uint16_t kk[T * H * HD], vv[T * H * HD], kc[CS], vc[CS];
    int64_t slots[T] = {17, 3, -1, 79, 40, 0};
    for (int i = 0; i < T * H * HD; i++) kk[i] = f32_to_f16((float)urand()), vv[i] = f32_to_f16((float)urand());
    for (int a = 0; a < 2; a++) {
        K k;
        load_src_on(&k, kv_src, "kv_append", archs[a], NULL);
        uint64_t dk = upload(&k, kk, sizeof kk), dv = upload(&k, vv, sizeof vv), dkc = poisoned(&k, sizeof kc), dvc = poisoned(&k, sizeof vc),
                 ds = upload(&k, slots, sizeof slots);
        int32_t skt = H * HD, skh = HD, scs = H * HD, sch = HD, nh = H;
        int64_t scb = BS * H * HD;
        DevStatus st = dev_launch(k.fn, T, 2, 1, (unsigned)k.threads, 1, 1, 0, NULL,
                                  (void *[]){&dk, &dv, &dkc, &dvc, &ds, &skt, &skh, &scb, &scs, &sch, &nh});
        cr_assert_eq(st, DEV_OK, "%s", dev_last_error(k.dev));
        cr_assert_eq(dev_synchronize(k.dev), DEV_OK, "%s", dev_last_error(k.dev));
        download(&k, kc, dkc, sizeof kc);
        download(&k, vc, dvc, sizeof vc);
        static uint16_t wk[CS], wv[CS];
        memset(wk, 0xff, sizeof wk), memset(wv, 0xff, sizeof wv);
        for (int t = 0; t < T; t++)
            if (slots[t] >= 0)
                for (int i = 0; i < H * HD; i++) wk[slots[t] * H * HD + i] = kk[t * H * HD + i], wv[slots[t] * H * HD + i] = vv[t * H * HD + i];
        for (int i = 0; i < CS; i++) {
            cr_assert_eq(kc[i], wk[i], "%s k_cache[%d] = 0x%04x, want 0x%04x", archs[a], i, kc[i], wk[i]);
            cr_assert_eq(vc[i], wv[i], "%s v_cache[%d] = 0x%04x, want 0x%04x", archs[a], i, vc[i], wv[i]);
        }
        unload(&k);
    }
}

/* ---- fused bias + dropout + residual with Triton's Philox stream (rand(seed, offsets)): the kept fraction scaled
 * by 1 / (1 - p); the mask checked against a Philox 4x32-10 of the host ---- */
static const char *dropout_src =
    "kernel dropout_res(x: *f32, res: *f32, bias: *f32, out: *f32, n: i32, n_cols: i32, p: f32, seed: i32, const B: i32 = 512) {\n"
    "    let offs = program_id(0) * B + arange(0, B);\n"
    "    let m = offs < n;\n"
    "    let x_ = load(x + offs, m) + load(bias + offs % n_cols, m);\n"
    "    let keep = rand(seed, offs) > p;\n"
    "    store(out + offs, where(keep, x_ / (1.0 - p), 0.0) + load(res + offs, m), m);\n"
    "}\n";

static float philox_uniform(uint32_t seed, uint32_t offset) {
    uint32_t c0 = offset, c1 = 0, c2 = 0, c3 = 0, k0 = seed, k1 = 0;
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c1 = (uint32_t)p1, c3 = (uint32_t)p0, c0 = n0, c2 = n2;
        k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
    }
    int32_t i = (int32_t)c0;
    if (i < 0) i = -i - 1;
    return (float)i * 4.6566127342e-10f;
}

Test(lang_ports, dropout_residual_philox) {
    seed_rng();
    enum { N = 1500, NC = 300 };
    float x[N], res[N], bias[NC], out[N], p = 0.25f;
    int32_t seedv = 1234 + irand(1000);
    for (int i = 0; i < N; i++) x[i] = (float)urand(), res[i] = (float)urand();
    for (int i = 0; i < NC; i++) bias[i] = (float)urand();
    for (int a = 0; a < 2; a++) {
        K k;
        load_src_on(&k, dropout_src, "dropout_res", archs[a], NULL);
        uint64_t dx = upload(&k, x, sizeof x), dr = upload(&k, res, sizeof res), db = upload(&k, bias, sizeof bias), d_o = poisoned(&k, sizeof out);
        int32_t n = N, nc = NC;
        launch(&k, (N + 511) / 512, (void *[]){&dx, &dr, &db, &d_o, &n, &nc, &p, &seedv});
        download(&k, out, d_o, sizeof out);
        int kept = 0;
        for (int i = 0; i < N; i++) {
            bool keep = philox_uniform((uint32_t)seedv, (uint32_t)i) > p;
            kept += keep;
            float want = (keep ? (x[i] + bias[i % NC]) / (1.0f - p) : 0.0f) + res[i];
            cr_assert(fabsf(out[i] - want) <= 1e-6f * fabsf(want) + 1e-7f, "%s out[%d] = %.9g, want %.9g (seed %d)", archs[a], i, out[i], want, seedv);
        }
        cr_assert(kept > N * 0.7 && kept < N * 0.8, "kept %d of %d at p = 0.25", kept, N);
        unload(&k);
    }
}

/* ---- a radix sort's first pass (FlagGems' compute_global_hist): each key made an unsigned integer of its width
 * whose order is the values' (floats by the sign-bit trick, signed integers by flipping the sign bit; descending
 * flips the rest), then a digit histogram counted by comparing a [bins, n] tile against the digits under a 1-D mask
 * (where(mask, bins[:, None] == key, false), whose mask broadcast to the 2-D tile was refused: the shorter shape was
 * read after the result had been written over it).  The key's types come from bitwidth(); 64-bit keys' sign mask is
 * (1 as u64) << 63 (Triton's Python int 1 << 63). ---- */
static const char *radix_src =
    "fn uint_of(const nbits, const signed) {\n"
    "    if signed { return i8 if nbits == 8 else i16 if nbits == 16 else i32 if nbits == 32 else i64; }\n"
    "    return u8 if nbits == 8 else u16 if nbits == 16 else u32 if nbits == 32 else u64;\n"
    "}\n"
    "fn floating_to_uint(x, const descending) {\n"
    "    const num_bits = bitwidth(x);\n"
    "    const sdtype = uint_of(num_bits, true);\n"
    "    const udtype = uint_of(num_bits, false);\n"
    "    let sx = cast(x, sdtype, bitcast=true);\n"
    "    let ux = cast(x, udtype, bitcast=true);\n"
    "    let sign_bit_mask = full((), (1 as u64) << (num_bits - 1), udtype);\n"
    "    let rshift_bits = full((), num_bits - 1, sdtype);\n"
    "    let mask = sign_bit_mask | cast(sx >> rshift_bits, udtype, bitcast=true);\n"
    "    static_assert(dtype_of(mask) == udtype, \"type mismatch\");\n"
    "    return ux ^ (~mask) if descending else ux ^ mask;\n"
    "}\n"
    "fn int_to_uint(x, const descending) {\n"
    "    const num_bits = bitwidth(x);\n"
    "    const udtype = uint_of(num_bits, false);\n"
    "    let ux = cast(x, udtype, bitcast=true);\n"
    "    if descending { return ux ^ full((), ((1 as u64) << (num_bits - 1)) - 1, udtype); }\n"
    "    return ux ^ full((), (1 as u64) << (num_bits - 1), udtype);\n"
    "}\n"
    "fn to_key(x, const descending) {\n"
    "    if is_float(x) { return floating_to_uint(x, descending); }\n"
    "    return int_to_uint(x, descending);\n"
    "}\n"
    "kernel global_hist(arr: *T, keys: *U, hist: *i64, n: i32, bit_offset: i32, const T = f32, const U = u32,\n"
    "                   const TILE_N: i32 = 64, const TILE_R: i32 = 16, const k_bits: i32 = 4, const descending: i1 = false) {\n"
    "    const bfe_mask = (1 << k_bits) - 1;\n"
    "    let bins = arange(0, TILE_R);\n"
    "    let acc = zeros((TILE_R, TILE_N), dtype=i64);\n"
    "    for n_start in range(0, n, TILE_N) {\n"
    "        let offs = n_start + arange(0, TILE_N);\n"
    "        let mask = offs < n;\n"
    "        let a = to_key(load(arr + offs, mask=mask), descending);\n"
    "        store(keys + offs, a, mask=mask);\n"
    "        let key = (a >> bit_offset) & bfe_mask;\n"
    "        acc += where(mask, bins[:, None] == key, false);\n"
    "    }\n"
    "    store(hist + bins, sum(acc, axis=1));\n"
    "}\n";

Test(lang_ports, radix_sort_keys_and_digit_histogram) {
    seed_rng();
    enum { N = 333, R = 16 };
    static const struct { const char *arch, *t, *u; int desc; } runs[] = {
        {"sm_80", "f32", "u32", 0}, {"sm_90a", "f32", "u32", 1}, {"sm_80", "i64", "u64", 1}, {"sm_90a", "i64", "u64", 0}};
    float xf[N];
    int64_t xi[N];
    for (int i = 0; i < N; i++) xf[i] = (float)(urand() * 100), xi[i] = (int64_t)rnext();
    xf[0] = 0.0f, xf[1] = -0.0f, xf[2] = INFINITY, xf[3] = -INFINITY;
    for (int r = 0; r < 4; r++) {
        bool is_f = runs[r].t[0] == 'f';
        int bit_offset = is_f ? 4 + irand(24) : 4 + irand(56);
        char dt[16], du[16], dd[24];
        snprintf(dt, sizeof dt, "T=%s", runs[r].t), snprintf(du, sizeof du, "U=%s", runs[r].u);
        snprintf(dd, sizeof dd, "descending=%s", runs[r].desc ? "true" : "false");
        const char *defs[] = {dt, du, dd, NULL};
        K k;
        load_with(&k, radix_src, "global_hist", runs[r].arch, defs, NULL);
        size_t kb = is_f ? 4 : 8;
        uint64_t dx = is_f ? upload(&k, xf, sizeof xf) : upload(&k, xi, sizeof xi), dk = poisoned(&k, N * kb);
        uint64_t dh = poisoned(&k, R * 8);
        int32_t n = N, off = bit_offset;
        launch(&k, 1, (void *[]){&dx, &dk, &dh, &n, &off});
        uint64_t keys[N], want_hist[R] = {0};
        int64_t hist[R];
        uint32_t k32[N];
        if (is_f) download(&k, k32, dk, sizeof k32);
        else download(&k, keys, dk, sizeof keys);
        download(&k, hist, dh, sizeof hist);
        for (int i = 0; i < N; i++) {
            uint64_t want;
            if (is_f) {
                uint32_t u;
                memcpy(&u, &xf[i], 4);
                uint32_t key = (u & 0x80000000u) ? ~u : u | 0x80000000u;
                want = runs[r].desc ? (uint32_t)~key : key;
                keys[i] = k32[i];
            } else {
                uint64_t u = (uint64_t)xi[i];
                want = runs[r].desc ? u ^ 0x7FFFFFFFFFFFFFFFull : u ^ 0x8000000000000000ull;
            }
            cr_assert_eq(keys[i], want, "%s %s desc %d key[%d] = %#llx, want %#llx", runs[r].arch, runs[r].t, runs[r].desc, i,
                         (unsigned long long)keys[i], (unsigned long long)want);
            want_hist[(want >> bit_offset) & (R - 1)]++;
        }
        for (int b = 0; b < R; b++)
            cr_assert_eq((uint64_t)hist[b], want_hist[b], "%s %s hist[%d] = %lld, want %llu (bit offset %d, seed %llu)",
                         runs[r].arch, runs[r].t, b, (long long)hist[b], (unsigned long long)want_hist[b], bit_offset,
                         (unsigned long long)seed);
        unload(&k);
    }
}

/* ---- batch norm forward over [N, C, HW] (FlagGems' batch_norm_forward_kernel): one program per channel, per-lane
 * running means and M2 over [BLOCK_M, BLOCK_N] tiles merged at the end, the running statistics updated in training,
 * and Triton's `if weight_pointer:` and `... if bias_pointer else 0.0` on pointers that may be null (a run-time test,
 * the load not run) or passed as None (the branch dropped).  The lanes' means divide by each lane's own count (upstream divides by the step number,
 * which is the count only when every tile is full). ---- */
static const char *batch_norm_src =
    "kernel batch_norm_forward(input_pointer: *f16, weight_pointer: *f32, bias_pointer: *f32, mean_pointer: *f32,\n"
    "        inv_std_pointer: *f32, output_pointer: *f16, running_mean_pointer: *f32, running_var_pointer: *f32,\n"
    "        batch_dim: i32, spatial_dim: i32, input_batch_stride: i32, input_feat_stride: i32, input_spatial_stride: i32,\n"
    "        momentum: f32, eps: f32, const is_train: i1, const BLOCK_M: i32 = 4, const BLOCK_N: i32 = 16) {\n"
    "    let feat_pid = program_id(axis=0);\n"
    "    if is_train {\n"
    "        let mean = zeros((BLOCK_M, BLOCK_N), dtype=f32);\n"
    "        let var = zeros((BLOCK_M, BLOCK_N), dtype=f32);\n"
    "        let cnt = zeros((BLOCK_M, BLOCK_N), dtype=i32);\n"
    "        let m_num_steps = cdiv(batch_dim, BLOCK_M);\n"
    "        let n_num_steps = cdiv(spatial_dim, BLOCK_N);\n"
    "        for m_step in range(0, m_num_steps) {\n"
    "            for n_step in range(0, n_num_steps) {\n"
    "                let spatial_offset = n_step * BLOCK_N + arange(0, BLOCK_N);\n"
    "                let batch_offset = m_step * BLOCK_M + arange(0, BLOCK_M);\n"
    "                let curr_input_pointer = input_pointer + input_feat_stride * feat_pid\n"
    "                    + input_batch_stride * batch_offset[:, None] + input_spatial_stride * spatial_offset[None, :];\n"
    "                let mask = (batch_offset < batch_dim)[:, None] & (spatial_offset < spatial_dim)[None, :];\n"
    "                let curr_input = load(curr_input_pointer, mask=mask) as f32;\n"
    "                let step = maximum(cnt + mask, 1);\n"
    "                let new_mean = where(mask, mean + (curr_input - mean) / step, mean);\n"
    "                let new_var = where(mask, var + (curr_input - new_mean) * (curr_input - mean), var);\n"
    "                cnt += mask as i32;\n"
    "                mean = new_mean;\n"
    "                var = new_var;\n"
    "            }\n"
    "        }\n"
    "        let final_mean = sum(mean * cnt) / (batch_dim * spatial_dim);\n"
    "        var = sum(var + cnt * (mean - final_mean) * (mean - final_mean)) / (batch_dim * spatial_dim);\n"
    "        let inv_std = rsqrt(var + eps);\n"
    "        mean = final_mean;\n"
    "        store(feat_pid + mean_pointer, mean);\n"
    "        store(feat_pid + inv_std_pointer, inv_std);\n"
    "        running_mean_pointer += feat_pid;\n"
    "        running_var_pointer += feat_pid;\n"
    "        let n = batch_dim * spatial_dim;\n"
    "        store(running_mean_pointer, (1 - momentum) * load(running_mean_pointer) + momentum * mean);\n"
    "        store(running_var_pointer, (1 - momentum) * load(running_var_pointer) + momentum * var * n / (n - 1));\n"
    "    } else {\n"
    "        let mean = load(feat_pid + running_mean_pointer);\n"
    "        let inv_std = rsqrt(load(feat_pid + running_var_pointer) + eps);\n"
    "    }\n"
    "    let weight = 1.0;\n"
    "    if weight_pointer { weight = load(feat_pid + weight_pointer) as f32; }\n"
    "    let bias = load(feat_pid + bias_pointer) as f32 if bias_pointer else 0.0;\n"
    "    for m_step in range(0, cdiv(batch_dim, BLOCK_M)) {\n"
    "        for n_step in range(0, cdiv(spatial_dim, BLOCK_N)) {\n"
    "            let batch_offset = m_step * BLOCK_M + arange(0, BLOCK_M);\n"
    "            let spatial_offset = n_step * BLOCK_N + arange(0, BLOCK_N);\n"
    "            let off = input_feat_stride * feat_pid + input_batch_stride * batch_offset[:, None]\n"
    "                + input_spatial_stride * spatial_offset[None, :];\n"
    "            let mask = (batch_offset < batch_dim)[:, None] & (spatial_offset < spatial_dim)[None, :];\n"
    "            let curr_input = load(input_pointer + off, mask=mask) as f32;\n"
    "            store(output_pointer + off, weight * (curr_input - mean) * inv_std + bias, mask=mask);\n"
    "        }\n"
    "    }\n"
    "}\n";

Test(lang_ports, batch_norm_forward_optional_pointers) {
    seed_rng();
    enum { NB = 5, C = 3, HW = 47, E = NB * C * HW };
    uint16_t x[E], o[E];
    float w[C], b[C], rm0[C], rv0[C];
    for (int i = 0; i < E; i++) x[i] = f32_to_f16((float)(urand() * 2 + 3));
    for (int c = 0; c < C; c++) w[c] = (float)urand(), b[c] = (float)urand(), rm0[c] = (float)urand(), rv0[c] = (float)(1.25 + urand() / 2);
    for (int r = 0; r < 2; r++) {
        bool train = r == 0; /* training: weight given, bias a null pointer; inference: weight None, bias given */
        const char *defs[] = {train ? "is_train=true" : "is_train=false", NULL}, *spec[] = {"weight_pointer=None", NULL};
        K k;
        load_with(&k, batch_norm_src, "batch_norm_forward", train ? "sm_80" : "sm_90a", defs, train ? NULL : spec);
        float rm[C], rv[C], mean[C], istd[C];
        memcpy(rm, rm0, sizeof rm), memcpy(rv, rv0, sizeof rv);
        uint64_t dx = upload(&k, x, sizeof x), dw = train ? upload(&k, w, sizeof w) : 0, db = train ? 0 : upload(&k, b, sizeof b);
        uint64_t dm = poisoned(&k, sizeof mean), di = poisoned(&k, sizeof istd), d_o = poisoned(&k, sizeof o);
        uint64_t drm = upload(&k, rm, sizeof rm), drv = upload(&k, rv, sizeof rv);
        int32_t bd = NB, sd = HW, sb = C * HW, sf = HW, ss = 1;
        float mom = 0.1f, eps = 1e-5f;
        launch(&k, C, (void *[]){&dx, &dw, &db, &dm, &di, &d_o, &drm, &drv, &bd, &sd, &sb, &sf, &ss, &mom, &eps});
        download(&k, o, d_o, sizeof o);
        download(&k, rm, drm, sizeof rm), download(&k, rv, drv, sizeof rv);
        if (train) download(&k, mean, dm, sizeof mean), download(&k, istd, di, sizeof istd);
        for (int c = 0; c < C; c++) {
            double s = 0, ss2 = 0, n = NB * HW;
            for (int i = 0; i < NB; i++)
                for (int j = 0; j < HW; j++) s += f16_to_d(x[(i * C + c) * HW + j]);
            double mu = s / n;
            for (int i = 0; i < NB; i++)
                for (int j = 0; j < HW; j++) ss2 += pow(f16_to_d(x[(i * C + c) * HW + j]) - mu, 2);
            double var = ss2 / n, m_use = train ? mu : rm0[c], v_use = train ? var : rv0[c];
            if (train) {
                cr_assert(fabs(mean[c] - mu) <= 1e-5 * fabs(mu) + 1e-6, "mean[%d] = %.9g, want %.9g", c, mean[c], mu);
                cr_assert(fabs(istd[c] - 1 / sqrt(var + 1e-5)) <= 1e-5, "inv_std[%d] = %.9g, want %.9g", c, istd[c], 1 / sqrt(var + 1e-5));
                cr_assert(fabs(rm[c] - (0.9 * rm0[c] + 0.1 * mu)) <= 1e-5, "running_mean[%d] = %.9g", c, rm[c]);
                cr_assert(fabs(rv[c] - (0.9 * rv0[c] + 0.1 * var * n / (n - 1))) <= 1e-5, "running_var[%d] = %.9g", c, rv[c]);
            } else {
                cr_assert(rm[c] == rm0[c] && rv[c] == rv0[c], "inference changed the running statistics of channel %d", c);
            }
            for (int i = 0; i < NB; i++)
                for (int j = 0; j < HW; j++) {
                    int at = (i * C + c) * HW + j;
                    double want = (train ? w[c] : 1.0) * (f16_to_d(x[at]) - m_use) / sqrt(v_use + 1e-5) + (train ? 0.0 : b[c]);
                    double got = f16_to_d(o[at]);
                    cr_assert(fabs(got - want) <= 2e-3 * fabs(want) + 2e-3, "%s out[%d][%d][%d] = %g, want %g (seed %llu)",
                              train ? "train" : "eval", i, c, j, got, want, (unsigned long long)seed);
                }
        }
        unload(&k);
    }
}

/* ---- multinomial sampling with replacement (FlagGems' multinomial_with_replacement): one Philox uniform per sample,
 * Python's `rv, _, _, _ = ...` keeping the first of rand4x's four words (a repeated `_` was "'_' appears twice"), then
 * a binary search of each row's CDF for the leftmost entry >= u, log2(K) + 1 steps of a run-time trip count. ---- */
static const char *multinomial_src =
    "import \"random.tile\";\n"
    "kernel multinomial_with_replacement(cdf_ptr: *f32, out_ptr: *i64, u_ptr: *f32, K: i32, N: i32, philox_seed: i64,\n"
    "                                    philox_offset: i64, const NBLOCK: i32 = 128) {\n"
    "    let y_off = program_id(1) * N;\n"
    "    let n = program_id(0) * NBLOCK + arange(0, NBLOCK);\n"
    "    let rv, _, _, _ = rand4x(philox_seed, philox_offset + (y_off + n));\n"
    "    rv += 0.0001;\n"
    "    rv = where(rv > 0.9999, 0.9999, rv);\n"
    "    store(u_ptr + y_off + n, rv, mask=n < N);\n"
    "    cdf_ptr += program_id(1) * K;\n"
    "    let start = zeros((NBLOCK,), dtype=i32);\n"
    "    let end = zeros((NBLOCK,), dtype=i32) + K - 1;\n"
    "    let steps = log2(K as f32) as i32 + 1;\n"
    "    for _ in range(steps) {\n"
    "        let mid = start + (end - start) / 2;\n"
    "        let x = load(cdf_ptr + mid, mask=n < N);\n"
    "        start = where(x < rv, mid + 1, start);\n"
    "        end = where(x < rv, end, mid);\n"
    "    }\n"
    "    start = where(start >= K, K - 1, start);\n"
    "    store(out_ptr + y_off + n, start, mask=n < N);\n"
    "}\n";

Test(lang_ports, multinomial_with_replacement) {
    seed_rng();
    enum { D = 3, KC = 37, NS = 300 };
    float cdf[D * KC], u[D * NS];
    int64_t out[D * NS];
    for (int d = 0; d < D; d++) {
        double p[KC], s = 0;
        for (int j = 0; j < KC; j++) p[j] = j == 5 ? 0 : urand() + 1.0, s += p[j];
        double c = 0;
        for (int j = 0; j < KC; j++) c += p[j] / s, cdf[d * KC + j] = (float)c;
    }
    int64_t seedv = 1000 + irand(100000), offset = irand(1 << 20);
    K k;
    load_src_on(&k, multinomial_src, "multinomial_with_replacement", "sm_80", NULL);
    uint64_t dc = upload(&k, cdf, sizeof cdf), d_o = poisoned(&k, sizeof out), du = poisoned(&k, sizeof u);
    int32_t kc = KC, ns = NS;
    launch3(&k, k.fn, (NS + 127) / 128, D, 1, (void *[]){&dc, &d_o, &du, &kc, &ns, &seedv, &offset});
    download(&k, out, d_o, sizeof out), download(&k, u, du, sizeof u);
    for (int d = 0; d < D; d++)
        for (int i = 0; i < NS; i++) {
            float want_u = philox_uniform((uint32_t)seedv, (uint32_t)(offset + d * NS + i)) + 0.0001f;
            if (want_u > 0.9999f) want_u = 0.9999f;
            /* within an ulp: the uniform's scaling and the + 0.0001 may be fused into one fma on either side */
            float uk = u[d * NS + i];
            cr_assert(fabsf(uk - want_u) <= 6e-8f, "u[%d][%d] = %.9g, want %.9g", d, i, uk, want_u);
            int64_t want = 0;
            while (want < KC - 1 && cdf[d * KC + want] < uk) want++;
            cr_assert_eq(out[d * NS + i], want, "sample[%d][%d] = %lld, want %lld (u %.9g, seed %llu)", d, i,
                         (long long)out[d * NS + i], (long long)want, uk, (unsigned long long)seed);
        }
    unload(&k);
}
