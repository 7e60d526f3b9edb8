/* test_lang_ports_more.c - a second batch of kernels from serving engines and training libraries, written from what
 * they compute the way a Triton user writes them (Triton's names and idioms, the forms docs/language.md gives for the
 * rest), compiled for sm_80 and sm_90a and run on the emulator against float64 (or exact integer) references at sizes
 * that are not multiples of the tiles, outputs poisoned first.  Each exercises what test_lang_ports.c does not:
 * merging two attention states by their log-sum-exps (a loop unpacking (pointer, lse) pairs), a grammar's token bitmask
 * applied in place by persistent programs (bits unpacked by shifts of a 2-D tile), Mamba's selective state update
 * (a 3-D grid, optional tensors as None specializations, softplus), a causal depthwise conv1d (static_range over
 * shifted windows), KL divergence and the generalized Jensen-Shannon divergence with their gradients (NaN-free
 * where over log(0), a fn returning under compile-time ifs on a float const), RMSNorm's backward (rows per program,
 * partial dW reduced by a second kernel along axis 0), a two-level i64 prefix sum forward and reversed, embedding
 * forward and backward (row gathers, f32 and bf16 atomics on repeated ids), a fused-MoE GEMM over sorted token ids
 * (gathered A rows, a per-block expert, routed weights, an early return), chunked linear attention through block
 * pointers (a transposed one, a causal mask, a carried [K, V] state through dots, element_type of a block pointer),
 * a gated linear recurrence by associative_scan of pairs carried across chunks, a MoE router's softmax top-k
 * (max with indices in a static_range), and paged decode attention split over the KV length in two kernels (grouped
 * query heads padded for dot, slots through req_to_token, an online softmax, splits merged by their LSEs),
 * FlagGems' masked_select (a byte mask compacted by cumsum) and Liger's GEGLU (libdevice's tanh as tanh(x, exact=true)). */
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

static bool close_to(double got, double want, double rel, double abs_tol) {
    return fabs(got - want) <= rel * fabs(want) + abs_tol;
}

/* ---- merge_state (sglang): two partial attention outputs over disjoint keys merged by their log-sum-exps; an
 * lse of +inf marks a side with no keys (it becomes -inf, weight 0); HEAD not a power of two ---- */
static const char *merge_src =
    "kernel merge_state(out: *f32, out_lse: *f32, va: *f32, sa: *f32, vb: *f32, sb: *f32,\n"
    "                   const HEAD: i32 = 80, const OUTPUT_LSE: i1 = true) {\n"
    "    let t = program_id(0);\n"
    "    let h = program_id(1);\n"
    "    let nh = num_programs(1);\n"
    "    let la = load(sa + t * nh + h);\n"
    "    let lb = load(sb + t * nh + h);\n"
    "    la = -1.0 / 0.0 if la == 1.0 / 0.0 else la;\n"
    "    lb = -1.0 / 0.0 if lb == 1.0 / 0.0 else lb;\n"
    "    let mx = maximum(la, lb);\n"
    "    let se = exp(la - mx) + exp(lb - mx);\n"
    "    if OUTPUT_LSE { store(out_lse + t * nh + h, log(se) + mx); }\n"
    "    const PAD = next_power_of_2(HEAD);\n"
    "    let d = arange(0, PAD);\n"
    "    let off = (t * nh + h) * HEAD + d;\n"
    "    let acc = zeros([PAD], f32);\n"
    "    for (src, lse) in ((va, la), (vb, lb)) {\n"
    "        acc += load(src + off, mask=d < HEAD) * (exp(lse - mx) / se);\n"
    "    }\n"
    "    store(out + off, acc, mask=d < HEAD);\n"
    "}\n";

Test(lang_ports_more, merge_attention_states) {
    seed_rng();
    enum { T = 3, H = 5, D = 80 };
    static float va[T * H * D], vb[T * H * D], o[T * H * D];
    float sa[T * H], sb[T * H], so[T * H];
    for (int i = 0; i < T * H * D; i++) va[i] = (float)urand(), vb[i] = (float)urand();
    for (int i = 0; i < T * H; i++) sa[i] = (float)(urand() * 3), sb[i] = (float)(urand() * 3);
    sa[2] = INFINITY, sb[7] = INFINITY; /* one side empty */
    for (int a = 0; a < 2; a++)
        for (int ol = 0; ol < 2; ol++) {
            K k;
            const char *defs[] = {ol ? "OUTPUT_LSE=true" : "OUTPUT_LSE=false", NULL};
            load_with(&k, merge_src, "merge_state", archs[a], defs, NULL);
            uint64_t dva = upload(&k, va, sizeof va), dsa = upload(&k, sa, sizeof sa), dvb = upload(&k, vb, sizeof vb),
                     dsb = upload(&k, sb, sizeof sb), d_o = poisoned(&k, sizeof o), dso = poisoned(&k, sizeof so);
            launch3(&k, NULL, T, H, 1, (void *[]){&d_o, &dso, &dva, &dsa, &dvb, &dsb});
            download(&k, o, d_o, sizeof o);
            download(&k, so, dso, sizeof so);
            for (int i = 0; i < T * H; i++) {
                double la = isinf(sa[i]) ? -INFINITY : sa[i], lb = isinf(sb[i]) ? -INFINITY : sb[i], mx = fmax(la, lb);
                double wa = exp(la - mx), wb = exp(lb - mx), se = wa + wb;
                if (ol) cr_assert(close_to(so[i], log(se) + mx, 1e-5, 1e-5), "%s lse[%d] = %g, want %g", archs[a], i, so[i], log(se) + mx);
                else cr_assert(isnan(so[i]), "%s lse[%d] written without OUTPUT_LSE", archs[a], i);
                for (int j = 0; j < D; j++) {
                    double want = va[i * D + j] * wa / se + vb[i * D + j] * wb / se;
                    cr_assert(close_to(o[i * D + j], want, 1e-5, 1e-6), "%s out[%d][%d] = %g, want %g (seed %llu)", archs[a], i, j,
                              o[i * D + j], want, (unsigned long long)seed);
                }
            }
            unload(&k);
        }
}

/* ---- a grammar's token bitmask applied in place (xgrammar, as vLLM and sglang ship it): persistent programs walk
 * (row, block) work items; each packed i32 of the mask is unpacked into 32 bits by a shift of a 2-D tile, a 0 bit
 * making the logit -inf; rows named by an index list, the others untouched ---- */
static const char *bitmask_src =
    "kernel apply_bitmask(logits: *f32, bitmask: *i32, indices: *i32, num_rows: i32, vocab: i32, lstride: i32,\n"
    "                     bstride: i32, const NUM_SMS: i32 = 3, const BLOCK: i32 = 256) {\n"
    "    let pid = program_id(0);\n"
    "    let nblocks = cdiv(vocab, BLOCK);\n"
    "    for w in range(pid, num_rows * nblocks, NUM_SMS) {\n"
    "        let off = (w % nblocks) * BLOCK;\n"
    "        let row = load(indices + w / nblocks);\n"
    "        let offs = off + arange(0, BLOCK);\n"
    "        let boffs = off / 32 + arange(0, BLOCK / 32);\n"
    "        let packed = load(bitmask + row * bstride + boffs, mask=boffs < bstride);\n"
    "        let masked = ((packed[:, None] >> arange(0, 32)[None, :]) & 1) == 0;\n"
    "        store(logits + row * lstride + offs, -1.0 / 0.0, mask=(offs < vocab) & reshape(masked, [BLOCK]));\n"
    "    }\n"
    "}\n";

Test(lang_ports_more, token_bitmask_in_place) {
    seed_rng();
    enum { R = 4, V = 1000, LS = 1003, BS = 32 };
    static float lg[R * LS], o[R * LS];
    static int32_t bm[R * BS];
    int32_t idx[3] = {2, 0, 3}; /* row 1 is not constrained */
    for (int i = 0; i < R * LS; i++) lg[i] = (float)urand();
    for (int i = 0; i < R * BS; i++) bm[i] = (int32_t)(uint32_t)rnext();
    for (int a = 0; a < 2; a++) {
        K k;
        load_with(&k, bitmask_src, "apply_bitmask", archs[a], NULL, NULL);
        uint64_t dl = upload(&k, lg, sizeof lg), db = upload(&k, bm, sizeof bm), di = upload(&k, idx, sizeof idx);
        int32_t nr = 3, v = V, ls = LS, bs = BS;
        launch3(&k, NULL, 3, 1, 1, (void *[]){&dl, &db, &di, &nr, &v, &ls, &bs});
        download(&k, o, dl, sizeof o);
        for (int r = 0; r < R; r++)
            for (int j = 0; j < LS; j++) {
                bool constrained = r != 1 && j < V, bit = (((uint32_t)bm[r * BS + j / 32]) >> (j % 32)) & 1;
                float want = constrained && !bit ? -INFINITY : lg[r * LS + j];
                cr_assert(o[r * LS + j] == want, "%s logits[%d][%d] = %g, want %g (seed %llu)", archs[a], r, j, o[r * LS + j], want,
                          (unsigned long long)seed);
            }
        unload(&k);
    }
}

/* ---- Mamba's selective state update (vLLM's mamba ops): one decode step of the SSM on state [B, H, DIM, DSTATE],
 * heads sharing B and C in groups, dt through softplus with a bias; D, z and dt_bias optional (Triton's heuristics
 * `x is not None`, here a None specialization); grid (dim blocks, batch, heads) ---- */
static const char *ssu_src =
    "fn softplus_(dt) { return where(dt <= 20.0, log(exp(dt) + 1.0), dt); }\n"
    "kernel ssu(state: *f32, x: *f32, dt: *f32, dt_bias: *f32, A: *f32, B: *f32, C: *f32, D: *f32, z: *f32, out: *f32,\n"
    "           dim: i32, dstate: i32, ratio: i32, const DT_SOFTPLUS: i1 = true, const BM: i32 = 16, const BDS: i32 = 16) {\n"
    "    const HAS_DT_BIAS = dt_bias is not None;\n"
    "    const HAS_D = D is not None;\n"
    "    const HAS_Z = z is not None;\n"
    "    let pid_m = program_id(0);\n"
    "    let b = program_id(1);\n"
    "    let h = program_id(2);\n"
    "    let nh = num_programs(2);\n"
    "    let rows = pid_m * BM + arange(0, BM);\n"
    "    let cols = arange(0, BDS);\n"
    "    let rm = rows < dim;\n"
    "    let m2 = rm[:, None] & (cols < dstate)[None, :];\n"
    "    let bh = b * nh + h;\n"
    "    let sp = state + (bh * dim + rows[:, None]) * dstate + cols[None, :];\n"
    "    let s = load(sp, mask=m2, other=0.0);\n"
    "    let xv = load(x + bh * dim + rows, mask=rm, other=0.0);\n"
    "    let dtv = load(dt + bh * dim + rows, mask=rm, other=0.0);\n"
    "    if HAS_DT_BIAS { dtv += load(dt_bias + h * dim + rows, mask=rm, other=0.0); }\n"
    "    if DT_SOFTPLUS { dtv = softplus_(dtv); }\n"
    "    let a = load(A + (h * dim + rows[:, None]) * dstate + cols[None, :], mask=m2, other=0.0);\n"
    "    let g = b * (nh / ratio) + h / ratio;\n"
    "    let bv = load(B + g * dstate + cols, mask=cols < dstate, other=0.0);\n"
    "    let cv = load(C + g * dstate + cols, mask=cols < dstate, other=0.0);\n"
    "    s = s * exp(a * dtv[:, None]) + bv[None, :] * dtv[:, None] * xv[:, None];\n"
    "    store(sp, s, mask=m2);\n"
    "    let o = sum(s * cv[None, :], axis=1);\n"
    "    if HAS_D { o += xv * load(D + h * dim + rows, mask=rm, other=0.0); }\n"
    "    if HAS_Z {\n"
    "        let zv = load(z + bh * dim + rows, mask=rm, other=0.0);\n"
    "        o *= zv * sigmoid(zv);\n"
    "    }\n"
    "    store(out + bh * dim + rows, o, mask=rm);\n"
    "}\n";

Test(lang_ports_more, mamba_selective_state_update) {
    seed_rng();
    enum { NB = 2, H = 4, G = 2, DIM = 20, DS = 12 };
    static float st[NB * H * DIM * DS], st2[NB * H * DIM * DS], x[NB * H * DIM], dt[NB * H * DIM], dtb[H * DIM], A[H * DIM * DS],
        Bm[NB * G * DS], Cm[NB * G * DS], Dv[H * DIM], z[NB * H * DIM], o[NB * H * DIM];
    for (size_t i = 0; i < sizeof st / 4; i++) st[i] = (float)urand();
    for (int i = 0; i < NB * H * DIM; i++) x[i] = (float)urand(), dt[i] = (float)(urand() * 2), z[i] = (float)(urand() * 2);
    for (int i = 0; i < H * DIM; i++) dtb[i] = (float)(urand() * 0.5), Dv[i] = (float)urand();
    for (int i = 0; i < H * DIM * DS; i++) A[i] = (float)-exp(urand());
    for (int i = 0; i < NB * G * DS; i++) Bm[i] = (float)urand(), Cm[i] = (float)urand();
    dt[3] = 25.0f; /* past softplus's threshold: dt itself */
    for (int a = 0; a < 2; a++)
        for (int opt = 0; opt < 2; opt++) { /* opt 1: dt_bias, D and z are None */
            K k;
            const char *spec[] = {"dt_bias=None", "D=None", "z=None", NULL};
            load_with(&k, ssu_src, "ssu", archs[a], NULL, opt ? spec : NULL);
            uint64_t ds = upload(&k, st, sizeof st), dx = upload(&k, x, sizeof x), ddt = upload(&k, dt, sizeof dt),
                     ddb = opt ? 0 : upload(&k, dtb, sizeof dtb), dA = upload(&k, A, sizeof A), dB = upload(&k, Bm, sizeof Bm),
                     dC = upload(&k, Cm, sizeof Cm), dD = opt ? 0 : upload(&k, Dv, sizeof Dv), dz = opt ? 0 : upload(&k, z, sizeof z),
                     d_o = poisoned(&k, sizeof o);
            int32_t dim = DIM, dstate = DS, ratio = H / G;
            launch3(&k, NULL, 2, NB, H, (void *[]){&ds, &dx, &ddt, &ddb, &dA, &dB, &dC, &dD, &dz, &d_o, &dim, &dstate, &ratio});
            download(&k, st2, ds, sizeof st2);
            download(&k, o, d_o, sizeof o);
            for (int b = 0; b < NB; b++)
                for (int h = 0; h < H; h++)
                    for (int r = 0; r < DIM; r++) {
                        int bh = b * H + h, g = b * G + h / (H / G);
                        double d = dt[bh * DIM + r] + (opt ? 0 : dtb[h * DIM + r]);
                        d = d <= 20 ? log(exp(d) + 1) : d;
                        double xv = x[bh * DIM + r], out = 0;
                        for (int c = 0; c < DS; c++) {
                            int si = (bh * DIM + r) * DS + c;
                            double s = st[si] * exp(A[(h * DIM + r) * DS + c] * d) + Bm[g * DS + c] * d * xv;
                            cr_assert(close_to(st2[si], s, 2e-5, 2e-5), "%s opt %d state[%d] = %g, want %g (seed %llu)", archs[a], opt, si,
                                      st2[si], s, (unsigned long long)seed);
                            out += s * Cm[g * DS + c];
                        }
                        if (!opt) {
                            double zv = z[bh * DIM + r];
                            out = (out + xv * Dv[h * DIM + r]) * zv / (1 + exp(-zv));
                        }
                        cr_assert(close_to(o[bh * DIM + r], out, 1e-4, 1e-4), "%s opt %d out[%d][%d][%d] = %g, want %g", archs[a], opt, b,
                                  h, r, o[bh * DIM + r], out);
                    }
            unload(&k);
        }
}

/* ---- causal depthwise conv1d (vLLM's mamba causal_conv1d): out[b, d, t] = silu(bias[d] + sum_k w[d, k] x[b, d, t - W + 1
 * + k]), the window before the sequence reading zeros; a static_range over the taps, each a shifted masked load ---- */
static const char *conv_src =
    "kernel conv1d(x: *f16, w: *f32, bias: *f32, out: *f16, dim: i32, seqlen: i32,\n"
    "              const W: i32 = 4, const BD: i32 = 16, const BL: i32 = 32, const SILU: i1 = true) {\n"
    "    let b = program_id(2);\n"
    "    let ds = program_id(0) * BD + arange(0, BD);\n"
    "    let ts = program_id(1) * BL + arange(0, BL);\n"
    "    let dm = ds < dim;\n"
    "    let acc = zeros([BD, BL], f32) + load(bias + ds, mask=dm, other=0.0)[:, None];\n"
    "    let xb = x + b * dim * seqlen + ds[:, None] * seqlen;\n"
    "    for k in static_range(W) {\n"
    "        let t = ts - (W - 1) + k;\n"
    "        let xv = load(xb + t[None, :], mask=dm[:, None] & ((t >= 0) & (t < seqlen))[None, :], other=0.0) as f32;\n"
    "        acc += xv * load(w + ds * W + k, mask=dm, other=0.0)[:, None];\n"
    "    }\n"
    "    if SILU { acc = acc * sigmoid(acc); }\n"
    "    store(out + b * dim * seqlen + ds[:, None] * seqlen + ts[None, :], acc, mask=dm[:, None] & (ts < seqlen)[None, :]);\n"
    "}\n";

Test(lang_ports_more, causal_conv1d) {
    seed_rng();
    enum { NB = 2, DIM = 20, L = 50, W = 4 };
    static uint16_t x[NB * DIM * L], o[NB * DIM * L];
    float w[DIM * W], bias[DIM];
    for (int i = 0; i < NB * DIM * L; i++) x[i] = f32_to_f16((float)urand());
    for (int i = 0; i < DIM * W; i++) w[i] = (float)urand();
    for (int i = 0; i < DIM; i++) bias[i] = (float)(urand() * 0.5);
    for (int a = 0; a < 2; a++) {
        K k;
        load_with(&k, conv_src, "conv1d", archs[a], NULL, NULL);
        uint64_t dx = upload(&k, x, sizeof x), dw = upload(&k, w, sizeof w), db = upload(&k, bias, sizeof bias), d_o = poisoned(&k, sizeof o);
        int32_t dim = DIM, l = L;
        launch3(&k, NULL, 2, 2, NB, (void *[]){&dx, &dw, &db, &d_o, &dim, &l});
        download(&k, o, d_o, sizeof o);
        for (int b = 0; b < NB; b++)
            for (int d = 0; d < DIM; d++)
                for (int t = 0; t < L; t++) {
                    double acc = bias[d];
                    for (int q = 0; q < W; q++) {
                        int tt = t - (W - 1) + q;
                        if (tt >= 0) acc += w[d * W + q] * f16_to_d(x[(b * DIM + d) * L + tt]);
                    }
                    acc = acc / (1 + exp(-acc));
                    double got = f16_to_d(o[(b * DIM + d) * L + t]);
                    cr_assert(close_to(got, acc, 2e-3, 1e-3), "%s out[%d][%d][%d] = %g, want %g (seed %llu)", archs[a], b, d, t, got, acc,
                              (unsigned long long)seed);
                }
        unload(&k);
    }
}

/* ---- KL divergence (Liger's kl_div): per-row sum of y (log y - x) over vocabulary chunks, a zero target giving 0
 * where log(0) * 0 is NaN, or with log targets e^y (y - x); the gradient -y (or -e^y) written in the same pass ---- */
static const char *kl_src =
    "kernel kldiv(y_pred: *f32, y_true: *f32, loss: *f32, grad: *f32, n: i32, stride: i32,\n"
    "             const LOG_TARGET: i1 = false, const B: i32 = 256) {\n"
    "    let row = program_id(0);\n"
    "    let acc = zeros([B], f32);\n"
    "    for off in range(0, n, B) {\n"
    "        let c = off + arange(0, B);\n"
    "        let m = c < n;\n"
    "        let yp = load(y_pred + row * stride + c, mask=m, other=0.0);\n"
    "        let y = load(y_true + row * stride + c, mask=m, other=0.0);\n"
    "        if LOG_TARGET {\n"
    "            acc += where(m, exp(y) * (y - yp), 0.0);\n"
    "            store(grad + row * stride + c, -exp(y), mask=m);\n"
    "        } else {\n"
    "            acc += where(y > 0.0, y * (log(y) - yp), 0.0);\n"
    "            store(grad + row * stride + c, -y, mask=m);\n"
    "        }\n"
    "    }\n"
    "    store(loss + row, sum(acc));\n"
    "}\n";

Test(lang_ports_more, kl_divergence) {
    seed_rng();
    enum { M = 4, V = 700, S = 704 };
    static float xp[M * S], yt[M * S], yl[M * S], g[M * S];
    float loss[M];
    for (int i = 0; i < M * S; i++) {
        xp[i] = (float)(urand() * 3 - 4);
        double p = (urand() + 1) / V;
        yt[i] = irand(4) == 0 ? 0.0f : (float)p; /* a quarter of the targets are exact zeros */
        yl[i] = (float)log(p);
    }
    for (int a = 0; a < 2; a++)
        for (int lt = 0; lt < 2; lt++) {
            K k;
            const char *defs[] = {lt ? "LOG_TARGET=true" : "LOG_TARGET=false", NULL};
            load_with(&k, kl_src, "kldiv", archs[a], defs, NULL);
            const float *y = lt ? yl : yt;
            uint64_t dx = upload(&k, xp, sizeof xp), dy = upload(&k, y, sizeof yt), dl = poisoned(&k, sizeof loss), dg = poisoned(&k, sizeof g);
            int32_t n = V, s = S;
            launch3(&k, NULL, M, 1, 1, (void *[]){&dx, &dy, &dl, &dg, &n, &s});
            download(&k, loss, dl, sizeof loss);
            download(&k, g, dg, sizeof g);
            for (int r = 0; r < M; r++) {
                double want = 0, mag = 0;
                for (int j = 0; j < V; j++) {
                    double yv = y[r * S + j], x = xp[r * S + j], t = lt ? exp(yv) * (yv - x) : yv > 0 ? yv * (log(yv) - x) : 0;
                    want += t, mag += fabs(t);
                    double gw = lt ? -exp(yv) : -yv;
                    cr_assert(close_to(g[r * S + j], gw, 1e-5, 1e-9), "%s lt %d grad[%d][%d] = %g, want %g", archs[a], lt, r, j, g[r * S + j], gw);
                }
                for (int j = V; j < S; j++) cr_assert(isnan(g[r * S + j]), "%s grad[%d][%d] past the row was written", archs[a], r, j);
                cr_assert(fabs(loss[r] - want) <= 1e-5 * mag + 1e-6, "%s lt %d loss[%d] = %g, want %g (seed %llu)", archs[a], lt, r, loss[r],
                          want, (unsigned long long)seed);
            }
            unload(&k);
        }
}

/* ---- generalized Jensen-Shannon divergence (Liger's jsd): X the student's and Y the teacher's log-probabilities,
 * M = beta P + (1 - beta) Q; beta 0 and 1 are the forward and reverse KL (a fn returning its terms under compile-time
 * ifs on a float const); rows whose label is ignore_index give zero loss and gradient; sums over non-ignored rows ---- */
static const char *jsd_src =
    "fn jsd_terms(x, y, const BETA) {\n"
    "    if BETA == 0.0 {\n"
    "        let p = exp(y);\n"
    "        return (p * (y - x), -p);\n"
    "    }\n"
    "    if BETA == 1.0 {\n"
    "        let q = exp(x);\n"
    "        return (q * (x - y), q * (x - y) + q);\n"
    "    }\n"
    "    let q = exp(x);\n"
    "    let p = exp(y);\n"
    "    let mm = BETA * p + (1.0 - BETA) * q;\n"
    "    let lm = log(mm);\n"
    "    return (BETA * p * y + (1.0 - BETA) * q * x - mm * lm, (1.0 - BETA) * q * (x - lm));\n"
    "}\n"
    "kernel jsd(X: *f32, Y: *f32, loss: *f32, dX: *f32, labels: *i64, n_cols: i32, stride: i32, n_non_ignore: f32,\n"
    "           ignore_index: i32, const BETA: f32 = 0.5, const B: i32 = 256) {\n"
    "    let row = program_id(0);\n"
    "    if load(labels + row) == ignore_index {\n"
    "        for off in range(0, n_cols, B) {\n"
    "            let c = off + arange(0, B);\n"
    "            store(dX + row * stride + c, 0.0, mask=c < n_cols);\n"
    "        }\n"
    "        store(loss + row, 0.0);\n"
    "        return;\n"
    "    }\n"
    "    let acc = zeros([B], f32);\n"
    "    for off in range(0, n_cols, B) {\n"
    "        let c = off + arange(0, B);\n"
    "        let m = c < n_cols;\n"
    "        let x = load(X + row * stride + c, mask=m, other=-1.0 / 0.0);\n"
    "        let y = load(Y + row * stride + c, mask=m, other=-1.0 / 0.0);\n"
    "        let (l, dx) = jsd_terms(x, y, BETA);\n"
    "        acc += where(m, l, 0.0);\n"
    "        store(dX + row * stride + c, dx / n_non_ignore, mask=m);\n"
    "    }\n"
    "    store(loss + row, sum(acc) / n_non_ignore);\n"
    "}\n";

static void log_softmax_row(float *out, int n) {
    double v[1024], mx = -INFINITY, s = 0;
    for (int j = 0; j < n; j++) v[j] = urand() * 4, mx = fmax(mx, v[j]);
    for (int j = 0; j < n; j++) s += exp(v[j] - mx);
    for (int j = 0; j < n; j++) out[j] = (float)(v[j] - mx - log(s));
}

Test(lang_ports_more, jensen_shannon_divergence) {
    seed_rng();
    enum { M = 4, V = 700, S = 704 };
    static float X[M * S], Y[M * S], dX[M * S];
    float loss[M];
    int64_t labels[M] = {5, -100, 7, 1};
    for (int r = 0; r < M; r++) log_softmax_row(X + r * S, V), log_softmax_row(Y + r * S, V);
    static const char *betas[] = {"BETA=0.0", "BETA=1.0", "BETA=0.3"};
    const double bv[] = {0.0, 1.0, 0.3};
    for (int a = 0; a < 2; a++)
        for (int bi = 0; bi < 3; bi++) {
            K k;
            const char *defs[] = {betas[bi], NULL};
            load_with(&k, jsd_src, "jsd", archs[a], defs, NULL);
            uint64_t dx = upload(&k, X, sizeof X), dy = upload(&k, Y, sizeof Y), dl = poisoned(&k, sizeof loss), dg = poisoned(&k, sizeof dX),
                     dlab = upload(&k, labels, sizeof labels);
            int32_t n = V, s = S, ign = -100;
            float nn = 3;
            launch3(&k, NULL, M, 1, 1, (void *[]){&dx, &dy, &dl, &dg, &dlab, &n, &s, &nn, &ign});
            download(&k, loss, dl, sizeof loss);
            download(&k, dX, dg, sizeof dX);
            double beta = bv[bi];
            for (int r = 0; r < M; r++) {
                double want = 0, mag = 0;
                for (int j = 0; j < V; j++) {
                    double x = X[r * S + j], y = Y[r * S + j], q = exp(x), p = exp(y), l, g;
                    if (beta == 0) l = p * (y - x), g = -p;
                    else if (beta == 1) l = q * (x - y), g = q * (x - y) + q;
                    else {
                        double mm = beta * p + (1 - beta) * q;
                        l = beta * p * y + (1 - beta) * q * x - mm * log(mm), g = (1 - beta) * q * (x - log(mm));
                    }
                    if (r == 1) l = g = 0;
                    want += l / 3, mag += fabs(l) / 3;
                    cr_assert(close_to(dX[r * S + j], g / 3, 1e-4, 1e-8), "%s beta %g dX[%d][%d] = %g, want %g (seed %llu)", archs[a], beta,
                              r, j, dX[r * S + j], g / 3, (unsigned long long)seed);
                }
                cr_assert(fabs(loss[r] - want) <= 1e-5 * mag + 1e-7, "%s beta %g loss[%d] = %g, want %g (seed %llu)", archs[a], beta, r,
                          loss[r], want, (unsigned long long)seed);
                for (int j = V; j < S; j++) cr_assert(isnan(dX[r * S + j]), "%s dX[%d][%d] past the row was written", archs[a], r, j);
            }
            unload(&k);
        }
}

/* ---- RMSNorm backward (Liger's rms_norm): each program takes rows_per_program rows (the last fewer; Python's min of
 * two scalars), writes dX and keeps its share of dW in registers, stored as one row of partial sums that a second
 * kernel reduces along axis 0 of a masked [P, BN] tile; Gemma's offset added to the weight ---- */
static const char *rms_bwd_src =
    "kernel rms_bwd(dY: *f32, X: *f32, W: *f32, rstd: *f32, dX: *f32, dW_part: *f32, n_rows: i32, n_cols: i32,\n"
    "               stride: i32, rows_per_program: i32, offset: f32, const B: i32 = 512) {\n"
    "    let pid = program_id(0);\n"
    "    let row_start = pid * rows_per_program;\n"
    "    let row_end = min(row_start + rows_per_program, n_rows);\n"
    "    let c = arange(0, B);\n"
    "    let m = c < n_cols;\n"
    "    let w = load(W + c, mask=m, other=0.0) + offset;\n"
    "    let dw = zeros([B], f32);\n"
    "    for row in range(row_start, row_end) {\n"
    "        let dy = load(dY + row * stride + c, mask=m, other=0.0);\n"
    "        let x = load(X + row * stride + c, mask=m, other=0.0);\n"
    "        let r = load(rstd + row);\n"
    "        let m1 = dy * w;\n"
    "        store(dX + row * stride + c, r * m1 - r * r * r / n_cols * sum(m1 * x) * x, mask=m);\n"
    "        dw += dy * (x * r);\n"
    "    }\n"
    "    store(dW_part + pid * n_cols + c, dw, mask=m);\n"
    "}\n"
    "kernel sum_rows(part: *f32, out: *f32, P: i32, n: i32, const BP: i32 = 4, const BN: i32 = 64) {\n"
    "    let cols = program_id(0) * BN + arange(0, BN);\n"
    "    let rows = arange(0, BP);\n"
    "    let t = load(part + rows[:, None] * n + cols[None, :], mask=(rows < P)[:, None] & (cols < n)[None, :], other=0.0);\n"
    "    store(out + cols, sum(t, axis=0), mask=cols < n);\n"
    "}\n";

Test(lang_ports_more, rms_norm_backward) {
    seed_rng();
    enum { M = 7, N = 300, S = 310, P = 3, RPP = 3 };
    static float dy[M * S], x[M * S], dx[M * S], part[P * N], dw[N];
    float w[N], rs[M];
    for (int i = 0; i < M * S; i++) dy[i] = (float)urand(), x[i] = (float)urand();
    for (int i = 0; i < N; i++) w[i] = (float)urand();
    for (int r = 0; r < M; r++) {
        double ms = 0;
        for (int j = 0; j < N; j++) ms += (double)x[r * S + j] * x[r * S + j];
        rs[r] = (float)(1 / sqrt(ms / N + 1e-6));
    }
    for (int a = 0; a < 2; a++) {
        K k;
        load_with(&k, rms_bwd_src, "rms_bwd", archs[a], NULL, NULL);
        uint64_t ddy = upload(&k, dy, sizeof dy), dxx = upload(&k, x, sizeof x), dwt = upload(&k, w, sizeof w), drs = upload(&k, rs, sizeof rs),
                 ddx = poisoned(&k, sizeof dx), dpart = poisoned(&k, sizeof part), ddw = poisoned(&k, sizeof dw);
        int32_t m = M, n = N, s = S, rpp = RPP, np = P;
        float off = 1.0f;
        launch3(&k, NULL, P, 1, 1, (void *[]){&ddy, &dxx, &dwt, &drs, &ddx, &dpart, &m, &n, &s, &rpp, &off});
        launch3(&k, fn_of(&k, "sum_rows"), (N + 63) / 64, 1, 1, (void *[]){&dpart, &ddw, &np, &n});
        download(&k, dx, ddx, sizeof dx);
        download(&k, dw, ddw, sizeof dw);
        for (int r = 0; r < M; r++) {
            double dot = 0, rr = rs[r];
            for (int j = 0; j < N; j++) dot += (double)dy[r * S + j] * (w[j] + 1.0) * x[r * S + j];
            for (int j = 0; j < N; j++) {
                double want = rr * dy[r * S + j] * (w[j] + 1.0) - rr * rr * rr / N * dot * x[r * S + j];
                cr_assert(close_to(dx[r * S + j], want, 1e-4, 1e-5), "%s dX[%d][%d] = %g, want %g (seed %llu)", archs[a], r, j,
                          dx[r * S + j], want, (unsigned long long)seed);
            }
            for (int j = N; j < S; j++) cr_assert(isnan(dx[r * S + j]), "%s dX[%d][%d] past the row was written", archs[a], r, j);
        }
        for (int j = 0; j < N; j++) {
            double want = 0;
            for (int r = 0; r < M; r++) want += (double)dy[r * S + j] * x[r * S + j] * rs[r];
            cr_assert(close_to(dw[j], want, 1e-5, 1e-5), "%s dW[%d] = %g, want %g (seed %llu)", archs[a], j, dw[j], want, (unsigned long long)seed);
        }
        unload(&k);
    }
}

/* ---- a prefix sum over a long vector in two passes (FlagGems' cumsum; reversed, as flash-linear-attention's
 * chunk_local_cumsum): each block scans itself in i64 (sums past 2^31) and writes its total; a second kernel adds the
 * totals of the blocks before it (after it, reversed), picked by a conditional expression on a const ---- */
static const char *scan_src =
    "kernel scan_blocks(x: *i32, out: *i64, partial: *i64, n: i32, const B: i32 = 128, const REVERSE: i1 = false) {\n"
    "    let pid = program_id(0);\n"
    "    let o = pid * B + arange(0, B);\n"
    "    let v = load(x + o, mask=o < n, other=0) as i64;\n"
    "    store(out + o, cumsum(v, axis=0, reverse=REVERSE), mask=o < n);\n"
    "    store(partial + pid, sum(v));\n"
    "}\n"
    "kernel add_carry(out: *i64, partial: *i64, n: i32, nblocks: i32, const B: i32 = 128, const PB: i32 = 16,\n"
    "                 const REVERSE: i1 = false) {\n"
    "    let pid = program_id(0);\n"
    "    let i = arange(0, PB);\n"
    "    let p = load(partial + i, mask=i < nblocks, other=0);\n"
    "    let carry = sum(where(i > pid if REVERSE else i < pid, p, 0));\n"
    "    let o = pid * B + arange(0, B);\n"
    "    store(out + o, load(out + o, mask=o < n) + carry, mask=o < n);\n"
    "}\n";

Test(lang_ports_more, two_level_prefix_sum) {
    seed_rng();
    enum { N = 1000, B = 128, NB = (N + B - 1) / B };
    static int32_t x[N];
    static int64_t o[N + 8];
    for (int i = 0; i < N; i++) x[i] = (int32_t)(rnext() >> 33) - (1 << 29); /* sums pass 2^31 */
    for (int a = 0; a < 2; a++)
        for (int rev = 0; rev < 2; rev++) {
            K k;
            const char *defs[] = {rev ? "REVERSE=true" : "REVERSE=false", NULL};
            load_with(&k, scan_src, "scan_blocks", archs[a], defs, NULL);
            uint64_t dx = upload(&k, x, sizeof x), d_o = poisoned(&k, sizeof o), dp = poisoned(&k, NB * 8);
            int32_t n = N, nb = NB;
            launch3(&k, NULL, NB, 1, 1, (void *[]){&dx, &d_o, &dp, &n});
            launch3(&k, fn_of(&k, "add_carry"), NB, 1, 1, (void *[]){&d_o, &dp, &n, &nb});
            download(&k, o, d_o, sizeof o);
            int64_t acc = 0;
            for (int j = 0; j < N; j++) {
                int i = rev ? N - 1 - j : j;
                acc += x[i];
                cr_assert_eq(o[i], acc, "%s rev %d out[%d] = %lld, want %lld (seed %llu)", archs[a], rev, i, (long long)o[i], (long long)acc,
                             (unsigned long long)seed);
            }
            for (int i = N; i < N + 8; i++) cr_assert_eq(o[i], -1, "%s out[%d] past n was written", archs[a], i);
            unload(&k);
        }
}

/* ---- embedding forward and backward (FlagGems' embedding): rows gathered by i64 ids into [BT, BD] tiles; the backward
 * adds each token's gradient row into its id's row with relaxed atomics, ids repeated (integer-valued floats, so every
 * order of the adds gives the exact sum) ---- */
static const char *emb_src =
    "kernel emb_fwd(ids: *i64, weight: *f32, out: *f32, n_tokens: i32, dim: i32, const BT: i32 = 8, const BD: i32 = 64) {\n"
    "    let t = program_id(0) * BT + arange(0, BT);\n"
    "    let d = program_id(1) * BD + arange(0, BD);\n"
    "    let m = (t < n_tokens)[:, None] & (d < dim)[None, :];\n"
    "    let id = load(ids + t, mask=t < n_tokens, other=0);\n"
    "    store(out + t[:, None] * dim + d[None, :], load(weight + id[:, None] * dim + d[None, :], mask=m), mask=m);\n"
    "}\n"
    "kernel emb_bwd(ids: *i64, gout: *f32, gw: *f32, n_tokens: i32, dim: i32, const BT: i32 = 8, const BD: i32 = 64) {\n"
    "    let t = program_id(0) * BT + arange(0, BT);\n"
    "    let d = program_id(1) * BD + arange(0, BD);\n"
    "    let m = (t < n_tokens)[:, None] & (d < dim)[None, :];\n"
    "    let id = load(ids + t, mask=t < n_tokens, other=0);\n"
    "    atomic_add(gw + id[:, None] * dim + d[None, :], load(gout + t[:, None] * dim + d[None, :], mask=m), mask=m, sem=\"relaxed\");\n"
    "}\n"
    "kernel emb_bwd_bf16(ids: *i64, gout: *bf16, gw: *bf16, n_tokens: i32, dim: i32, const BT: i32 = 8, const BD: i32 = 64) {\n"
    "    let t = program_id(0) * BT + arange(0, BT);\n"
    "    let d = program_id(1) * BD + arange(0, BD);\n"
    "    let m = (t < n_tokens)[:, None] & (d < dim)[None, :];\n"
    "    let id = load(ids + t, mask=t < n_tokens, other=0);\n"
    "    atomic_add(gw + id[:, None] * dim + d[None, :], load(gout + t[:, None] * dim + d[None, :], mask=m), mask=m, sem=\"relaxed\");\n"
    "}\n";

Test(lang_ports_more, embedding_forward_backward) {
    seed_rng();
    enum { V = 30, T = 21, D = 100 };
    static float w[V * D], o[T * D], go[T * D], gw[V * D];
    int64_t ids[T];
    for (int i = 0; i < V * D; i++) w[i] = (float)urand();
    for (int i = 0; i < T * D; i++) go[i] = (float)(irand(200) - 100);
    for (int i = 0; i < T; i++) ids[i] = irand(V / 3) * 3; /* repeats, and rows never used */
    for (int a = 0; a < 2; a++) {
        K k;
        load_with(&k, emb_src, "emb_fwd", archs[a], NULL, NULL);
        memset(gw, 0, sizeof gw);
        uint64_t di = upload(&k, ids, sizeof ids), dw = upload(&k, w, sizeof w), d_o = poisoned(&k, sizeof o), dgo = upload(&k, go, sizeof go),
                 dgw = upload(&k, gw, sizeof gw);
        int32_t t = T, d = D;
        launch3(&k, NULL, (T + 7) / 8, (D + 63) / 64, 1, (void *[]){&di, &dw, &d_o, &t, &d});
        launch3(&k, fn_of(&k, "emb_bwd"), (T + 7) / 8, (D + 63) / 64, 1, (void *[]){&di, &dgo, &dgw, &t, &d});
        download(&k, o, d_o, sizeof o);
        download(&k, gw, dgw, sizeof gw);
        for (int i = 0; i < T; i++)
            for (int j = 0; j < D; j++)
                cr_assert(o[i * D + j] == w[ids[i] * D + j], "%s out[%d][%d] = %g, want %g", archs[a], i, j, o[i * D + j], w[ids[i] * D + j]);
        /* bf16 gradients (a 16-bit compare-and-swap loop before sm_90, atom.add.bf16 on sm_90a): values of at most 8 in
         * magnitude, so every partial sum of a row (at most T = 21 of them, below 256) is an integer bf16 holds exactly */
        static uint16_t gob[T * D], gwb[V * D];
        for (int i = 0; i < T * D; i++) gob[i] = f32_to_bf16((float)(irand(17) - 8));
        memset(gwb, 0, sizeof gwb);
        uint64_t dgob = upload(&k, gob, sizeof gob), dgwb = upload(&k, gwb, sizeof gwb);
        launch3(&k, fn_of(&k, "emb_bwd_bf16"), (T + 7) / 8, (D + 63) / 64, 1, (void *[]){&di, &dgob, &dgwb, &t, &d});
        download(&k, gwb, dgwb, sizeof gwb);
        for (int v = 0; v < V; v++)
            for (int j = 0; j < D; j++) {
                double want = 0, wantb = 0;
                for (int i = 0; i < T; i++)
                    if (ids[i] == v) want += go[i * D + j], wantb += bf16_to_d(gob[i * D + j]);
                cr_assert(gw[v * D + j] == want, "%s grad_weight[%d][%d] = %g, want %g (seed %llu)", archs[a], v, j, gw[v * D + j], want,
                          (unsigned long long)seed);
                cr_assert(bf16_to_d(gwb[v * D + j]) == wantb, "%s bf16 grad_weight[%d][%d] = %g, want %g (seed %llu)", archs[a], v, j,
                          bf16_to_d(gwb[v * D + j]), wantb, (unsigned long long)seed);
            }
        unload(&k);
    }
}

/* ---- fused MoE GEMM (vLLM's fused_moe_kernel): token-expert pairs sorted by expert into blocks of BM (padded with the
 * sentinel num_valid), each block one expert; A's rows gathered by pair / top_k, B the expert's [N, K] weight read
 * transposed, dot over K (not a multiple of BK), the routed weight multiplied in, rows scattered back; blocks past
 * num_tokens_post_padded leave at once ---- */
static const char *moe_src =
    "kernel fused_moe(A: *f16, Bw: *f16, C: *f16, topk_w: *f32, sorted_ids: *i32, expert_ids: *i32, num_post: *i32,\n"
    "                 N: i32, K: i32, num_valid: i32, const TOPK: i32 = 2, const MUL_W: i1 = true,\n"
    "                 const BM: i32 = 16, const BN: i32 = 32, const BK: i32 = 32) {\n"
    "    let pid_m = program_id(0);\n"
    "    let pid_n = program_id(1);\n"
    "    if pid_m * BM >= load(num_post) { return; }\n"
    "    let tok = load(sorted_ids + pid_m * BM + arange(0, BM));\n"
    "    let tmask = tok < num_valid;\n"
    "    let e = load(expert_ids + pid_m);\n"
    "    let cn = pid_n * BN + arange(0, BN);\n"
    "    let k = arange(0, BK);\n"
    "    let ap = A + (tok / TOPK)[:, None] * K + k[None, :];\n"
    "    let bp = Bw + e * N * K + cn[None, :] * K + k[:, None];\n"
    "    let acc = zeros([BM, BN], f32);\n"
    "    for k0 in range(0, K, BK) {\n"
    "        let a = load(ap, mask=tmask[:, None] & (k[None, :] < K - k0), other=0.0);\n"
    "        let b = load(bp, mask=(k[:, None] < K - k0) & (cn[None, :] < N), other=0.0);\n"
    "        acc = dot(a, b, acc);\n"
    "        ap += BK;\n"
    "        bp += BK;\n"
    "    }\n"
    "    if MUL_W { acc = acc * load(topk_w + tok, mask=tmask, other=0.0)[:, None]; }\n"
    "    store(C + tok[:, None] * N + cn[None, :], acc as f16, mask=tmask[:, None] & (cn < N)[None, :]);\n"
    "}\n";

Test(lang_ports_more, fused_moe_gemm) {
    seed_rng();
    enum { M = 5, TOPK = 2, E = 4, KD = 70, N = 40, BM = 16, MAXB = (M * TOPK + E * (BM - 1)) / BM + 1 };
    static uint16_t A[M * KD], Bw[E * N * KD], C[M * TOPK * N];
    float tw[M * TOPK];
    int32_t topk_ids[M * TOPK], sorted[MAXB * BM], eids[MAXB], npost = 0;
    for (int i = 0; i < M * KD; i++) A[i] = f32_to_f16((float)urand());
    for (int i = 0; i < E * N * KD; i++) Bw[i] = f32_to_f16((float)urand());
    for (int t = 0; t < M; t++) {
        int e0 = irand(E), e1 = (e0 + 1 + irand(E - 1)) % E;
        topk_ids[t * TOPK] = e0, topk_ids[t * TOPK + 1] = e1;
        double u = (urand() + 1) / 2;
        tw[t * TOPK] = (float)u, tw[t * TOPK + 1] = (float)(1 - u);
    }
    for (int e = 0; e < E; e++) { /* moe_align_block_size: each expert's pairs, padded to a block */
        int cnt = 0;
        for (int p = 0; p < M * TOPK; p++)
            if (topk_ids[p] == e) sorted[npost + cnt++] = p;
        if (!cnt) continue;
        int padded = (cnt + BM - 1) / BM * BM;
        for (int j = cnt; j < padded; j++) sorted[npost + j] = M * TOPK;
        for (int b = 0; b < padded / BM; b++) eids[npost / BM + b] = e;
        npost += padded;
    }
    for (int a = 0; a < 2; a++) {
        K kk;
        load_with(&kk, moe_src, "fused_moe", archs[a], NULL, NULL);
        uint64_t dA = upload(&kk, A, sizeof A), dB = upload(&kk, Bw, sizeof Bw), dC = poisoned(&kk, sizeof C), dw = upload(&kk, tw, sizeof tw),
                 ds = upload(&kk, sorted, sizeof sorted), de = upload(&kk, eids, sizeof eids), dn = upload(&kk, &npost, 4);
        int32_t n = N, k = KD, nv = M * TOPK;
        launch3(&kk, NULL, MAXB, (N + 31) / 32, 1, (void *[]){&dA, &dB, &dC, &dw, &ds, &de, &dn, &n, &k, &nv});
        download(&kk, C, dC, sizeof C);
        for (int p = 0; p < M * TOPK; p++)
            for (int j = 0; j < N; j++) {
                double acc = 0;
                for (int q = 0; q < KD; q++) acc += f16_to_d(A[(p / TOPK) * KD + q]) * f16_to_d(Bw[(topk_ids[p] * N + j) * KD + q]);
                acc *= tw[p];
                double got = f16_to_d(C[p * N + j]);
                cr_assert(close_to(got, acc, 2e-3, 2e-3), "%s C[%d][%d] = %g, want %g (seed %llu)", archs[a], p, j, got, acc,
                          (unsigned long long)seed);
            }
        unload(&kk);
    }
}

/* ---- chunked linear attention (flash-linear-attention's chunk form, written with its block pointers): per (batch, head)
 * a loop over chunks of BT tokens; k read through a transposed block pointer ([K, T] with strides (1, K), order (0, 1));
 * inside a chunk the causal part (q k masked by row >= col) times v, across chunks q times the state h = sum k v, an f32
 * [K, V] tile carried through dot's accumulator; the matrices cast to q's type for the tensor cores and the output to
 * the block pointer's element type (Triton's p_o.dtype.element_ty), both written as fla writes them ---- */
static const char *lin_attn_src =
    "kernel chunk_linear_attn(q: *f16, k: *f16, v: *f16, o: *f16, T: i32, scale: f32,\n"
    "                         const K: i32 = 32, const V: i32 = 32, const BT: i32 = 16) {\n"
    "    let i_bh = program_id(0);\n"
    "    let r = arange(0, BT);\n"
    "    let b_h = zeros([K, V], f32);\n"
    "    for i_t in range(0, cdiv(T, BT)) {\n"
    "        let p_q = make_block_ptr(q + i_bh * T * K, (T, K), (K, 1), (i_t * BT, 0), (BT, K), (1, 0));\n"
    "        let p_k = make_block_ptr(k + i_bh * T * K, (K, T), (1, K), (0, i_t * BT), (K, BT), (0, 1));\n"
    "        let p_v = make_block_ptr(v + i_bh * T * V, (T, V), (V, 1), (i_t * BT, 0), (BT, V), (1, 0));\n"
    "        let p_o = make_block_ptr(o + i_bh * T * V, (T, V), (V, 1), (i_t * BT, 0), (BT, V), (1, 0));\n"
    "        let b_q = load(p_q, boundary_check=(0, 1));\n"
    "        let b_k = load(p_k, boundary_check=(0, 1));\n"
    "        let b_v = load(p_v, boundary_check=(0, 1));\n"
    "        let b_s = where(r[:, None] >= r[None, :], dot(b_q, b_k) * scale, 0.0);\n"
    "        let b_o = dot(b_s as dtype_of(b_q), b_v) + dot(b_q, b_h as dtype_of(b_q)) * scale;\n"
    "        store(p_o, b_o as element_type(p_o), boundary_check=(0, 1));\n"
    "        b_h = dot(b_k, b_v, b_h);\n"
    "    }\n"
    "}\n";

Test(lang_ports_more, chunked_linear_attention) {
    seed_rng();
    enum { BH = 3, T = 50, D = 32 };
    static uint16_t q[BH * T * D], k[BH * T * D], v[BH * T * D], o[BH * T * D + 8];
    for (int i = 0; i < BH * T * D; i++) q[i] = f32_to_f16((float)urand()), k[i] = f32_to_f16((float)urand()), v[i] = f32_to_f16((float)urand());
    float scale = 0.25f;
    for (int a = 0; a < 2; a++) {
        K kk;
        load_with(&kk, lin_attn_src, "chunk_linear_attn", archs[a], NULL, NULL);
        uint64_t dq = upload(&kk, q, sizeof q), dk = upload(&kk, k, sizeof k), dv = upload(&kk, v, sizeof v), d_o = poisoned(&kk, sizeof o);
        int32_t t = T;
        launch3(&kk, NULL, BH, 1, 1, (void *[]){&dq, &dk, &dv, &d_o, &t, &scale});
        download(&kk, o, d_o, sizeof o);
        for (int b = 0; b < BH; b++)
            for (int i = 0; i < T; i++)
                for (int j = 0; j < D; j++) {
                    double want = 0, mag = 0; /* o_i = scale sum_{s <= i} (q_i . k_s) v_s */
                    for (int s2 = 0; s2 <= i; s2++) {
                        double qk = 0;
                        for (int c = 0; c < D; c++) qk += f16_to_d(q[(b * T + i) * D + c]) * f16_to_d(k[(b * T + s2) * D + c]);
                        double term = scale * qk * f16_to_d(v[(b * T + s2) * D + j]);
                        want += term, mag += fabs(term);
                    }
                    double got = f16_to_d(o[(b * T + i) * D + j]);
                    cr_assert(fabs(got - want) <= 4e-3 * mag + 2e-3, "%s o[%d][%d][%d] = %g, want %g (seed %llu)", archs[a], b, i, j, got, want,
                              (unsigned long long)seed);
                }
        for (int i = BH * T * D; i < BH * T * D + 8; i++) cr_assert_eq(o[i], 0xffff, "%s o past the end was written", archs[a]);
        unload(&kk);
    }
}

/* ---- a MoE router's softmax top-k (vLLM's topk_softmax, sglang's routing): softmax over E experts (not a power of
 * two), then TOPK rounds of max with its index in a static_range, each winner's probability removed, the chosen
 * weights renormalized ---- */
static const char *topk_src =
    "kernel topk_softmax(logits: *f32, weights: *f32, ids: *i32, E: i32, const BE: i32 = 64, const TOPK: i32 = 4,\n"
    "                    const RENORM: i1 = true) {\n"
    "    let row = program_id(0);\n"
    "    let e = arange(0, BE);\n"
    "    let x = load(logits + row * E + e, mask=e < E, other=-1.0 / 0.0);\n"
    "    let p = exp(x - max(x, 0));\n"
    "    p = p / sum(p, 0);\n"
    "    let k = arange(0, TOPK);\n"
    "    let wsel = zeros([TOPK], f32);\n"
    "    let isel = zeros([TOPK], i32);\n"
    "    let total = 0.0;\n"
    "    for j in static_range(TOPK) {\n"
    "        let (v, i) = max(p, 0, return_indices=true);\n"
    "        wsel = where(k == j, v, wsel);\n"
    "        isel = where(k == j, i, isel);\n"
    "        total += v;\n"
    "        p = where(e == i, -1.0, p);\n"
    "    }\n"
    "    if RENORM { wsel = wsel / total; }\n"
    "    store(weights + row * TOPK + k, wsel);\n"
    "    store(ids + row * TOPK + k, isel);\n"
    "}\n";

Test(lang_ports_more, moe_router_topk_softmax) {
    seed_rng();
    enum { M = 5, E = 60, TOPK = 4 };
    float lg[M * E], w[M * TOPK];
    int32_t ids[M * TOPK];
    for (int i = 0; i < M * E; i++) lg[i] = (float)(urand() * 4);
    for (int a = 0; a < 2; a++) {
        K k;
        load_with(&k, topk_src, "topk_softmax", archs[a], NULL, NULL);
        uint64_t dl = upload(&k, lg, sizeof lg), dw = poisoned(&k, sizeof w), di = poisoned(&k, sizeof ids);
        int32_t e = E;
        launch3(&k, NULL, M, 1, 1, (void *[]){&dl, &dw, &di, &e});
        download(&k, w, dw, sizeof w);
        download(&k, ids, di, sizeof ids);
        for (int r = 0; r < M; r++) {
            double p[E], mx = -INFINITY, s = 0, tot = 0;
            bool used[E] = {0};
            for (int j = 0; j < E; j++) mx = fmax(mx, lg[r * E + j]);
            for (int j = 0; j < E; j++) p[j] = exp(lg[r * E + j] - mx), s += p[j];
            int pick[TOPK];
            for (int t = 0; t < TOPK; t++) {
                int best = -1;
                for (int j = 0; j < E; j++)
                    if (!used[j] && (best < 0 || p[j] > p[best])) best = j;
                used[best] = true, pick[t] = best, tot += p[best] / s;
            }
            for (int t = 0; t < TOPK; t++) {
                cr_assert_eq(ids[r * TOPK + t], pick[t], "%s ids[%d][%d] = %d, want %d (seed %llu)", archs[a], r, t, ids[r * TOPK + t], pick[t],
                             (unsigned long long)seed);
                double want = p[pick[t]] / s / tot;
                cr_assert(close_to(w[r * TOPK + t], want, 1e-5, 1e-7), "%s w[%d][%d] = %g, want %g", archs[a], r, t, w[r * TOPK + t], want);
            }
        }
        unload(&k);
    }
}

/* ---- a gated linear recurrence h_t = e^(g_t) h_(t-1) + x_t (flash-linear-attention's HGRN) in chunks of BT steps:
 * inside a chunk an associative_scan of (gate, value) pairs along the time axis of a [BT, BD] tile with the
 * first-order combine (a1, b1) . (a2, b2) = (a1 a2, b1 a2 + b2), the state entering the chunk added through the
 * running gate product, the chunk's last row carried out (padded steps have gate 1 and value 0); h0 optional ---- */
static const char *hgrn_src =
    "fn first_order(a1, b1, a2, b2) { return (a1 * a2, b1 * a2 + b2); }\n"
    "kernel hgrn_fwd(x: *f32, g: *f32, o: *f32, h0: *f32, T: i32, D: i32, const BT: i32 = 16, const BD: i32 = 32) {\n"
    "    const USE_H0 = h0 is not None;\n"
    "    let i_b = program_id(1);\n"
    "    let d = program_id(0) * BD + arange(0, BD);\n"
    "    let dm = d < D;\n"
    "    let h = zeros([BD], f32);\n"
    "    if USE_H0 { h = load(h0 + i_b * D + d, mask=dm, other=0.0); }\n"
    "    let t = arange(0, BT);\n"
    "    for t0 in range(0, T, BT) {\n"
    "        let m = (t0 + t < T)[:, None] & dm[None, :];\n"
    "        let off = (i_b * T + t0 + t)[:, None] * D + d[None, :];\n"
    "        let gt = exp(load(g + off, mask=m, other=0.0));\n"
    "        let xt = load(x + off, mask=m, other=0.0);\n"
    "        let (ga, hb) = associative_scan((gt, xt), axis=0, combine_fn=first_order);\n"
    "        let ht = hb + ga * h[None, :];\n"
    "        store(o + off, ht, mask=m);\n"
    "        h = sum(where(t[:, None] == BT - 1, ht, 0.0), axis=0);\n"
    "    }\n"
    "}\n";

Test(lang_ports_more, gated_linear_recurrence_scan) {
    seed_rng();
    enum { NB = 2, T = 50, D = 40 };
    static float x[NB * T * D], g[NB * T * D], o[NB * T * D], h0[NB * D];
    for (int i = 0; i < NB * T * D; i++) x[i] = (float)urand(), g[i] = (float)((urand() - 1) * 0.25);
    for (int i = 0; i < NB * D; i++) h0[i] = (float)urand();
    for (int a = 0; a < 2; a++)
        for (int use_h0 = 0; use_h0 < 2; use_h0++) {
            K k;
            const char *spec[] = {"h0=None", NULL};
            load_with(&k, hgrn_src, "hgrn_fwd", archs[a], NULL, use_h0 ? NULL : spec);
            uint64_t dx = upload(&k, x, sizeof x), dg = upload(&k, g, sizeof g), d_o = poisoned(&k, sizeof o), dh = use_h0 ? upload(&k, h0, sizeof h0) : 0;
            int32_t t = T, d = D;
            launch3(&k, NULL, 2, NB, 1, (void *[]){&dx, &dg, &d_o, &dh, &t, &d});
            download(&k, o, d_o, sizeof o);
            for (int b = 0; b < NB; b++)
                for (int j = 0; j < D; j++) {
                    double h = use_h0 ? h0[b * D + j] : 0, mag = fabs(h);
                    for (int i = 0; i < T; i++) {
                        int at = (b * T + i) * D + j;
                        h = exp(g[at]) * h + x[at], mag = exp(g[at]) * mag + fabs(x[at]);
                        cr_assert(fabs(o[at] - h) <= 1e-5 * mag + 1e-6, "%s h0 %d o[%d][%d][%d] = %g, want %g (seed %llu)", archs[a], use_h0, b,
                                  i, j, o[at], h, (unsigned long long)seed);
                    }
                }
            unload(&k);
        }
}

/* ---- paged decode attention split over the KV length (sglang's grouped decode kernels): stage 1 per (sequence, KV head,
 * split) takes the query heads of the KV head's group (padded to BH rows, dot needing 16), reads the split's token
 * slots through the request's row of req_to_token, runs an online softmax over BN-token blocks with two dots and
 * writes the split's normalized output and log-sum-exp (an empty split writes nothing); stage 2 merges a head's
 * splits by their LSEs, skipping the empty ones ---- */
static const char *decode_src =
    "kernel decode_stage1(Q: *f16, K_buf: *f16, V_buf: *f16, sm_scale: f32, req_to_token: *i32, b_req_idx: *i32,\n"
    "                     b_seqlen: *i32, att_out: *f32, att_lse: *f32, stride_req: i32, kv_heads: i32, kv_group_num: i32,\n"
    "                     num_kv_splits: i32, const D: i32 = 64, const BH: i32 = 16, const BN: i32 = 16) {\n"
    "    let b = program_id(0);\n"
    "    let kvh = program_id(1);\n"
    "    let split = program_id(2);\n"
    "    let q_heads = kv_heads * kv_group_num;\n"
    "    let hi = arange(0, BH);\n"
    "    let heads = kvh * kv_group_num + hi;\n"
    "    let hmask = hi < kv_group_num;\n"
    "    let d = arange(0, D);\n"
    "    let seqlen = load(b_seqlen + b);\n"
    "    let req = load(b_req_idx + b);\n"
    "    let per_split = cdiv(seqlen, num_kv_splits);\n"
    "    let start = per_split * split;\n"
    "    let end = min(start + per_split, seqlen);\n"
    "    let q = load(Q + (b * q_heads + heads)[:, None] * D + d[None, :], mask=hmask[:, None], other=0.0);\n"
    "    let e_max = full([BH], -1.0 / 0.0, f32);\n"
    "    let e_sum = zeros([BH], f32);\n"
    "    let acc = zeros([BH, D], f32);\n"
    "    if end > start {\n"
    "        for n0 in range(start, end, BN) {\n"
    "            let offs_n = n0 + arange(0, BN);\n"
    "            let nm = offs_n < end;\n"
    "            let loc = load(req_to_token + req * stride_req + offs_n, mask=nm, other=0);\n"
    "            let k = load(K_buf + (loc * kv_heads + kvh)[None, :] * D + d[:, None], mask=nm[None, :], other=0.0);\n"
    "            let qk = where(hmask[:, None] & nm[None, :], dot(q, k) * sm_scale, -1.0 / 0.0);\n"
    "            let v = load(V_buf + (loc * kv_heads + kvh)[:, None] * D + d[None, :], mask=nm[:, None], other=0.0);\n"
    "            let n_max = maximum(max(qk, 1), e_max);\n"
    "            let re = exp(e_max - n_max);\n"
    "            let p = exp(qk - n_max[:, None]);\n"
    "            acc = acc * re[:, None] + dot(p as f16, v);\n"
    "            e_sum = e_sum * re + sum(p, 1);\n"
    "            e_max = n_max;\n"
    "        }\n"
    "        let row = (b * q_heads + heads) * num_kv_splits + split;\n"
    "        store(att_out + row[:, None] * D + d[None, :], acc / e_sum[:, None], mask=hmask[:, None]);\n"
    "        store(att_lse + row, e_max + log(e_sum), mask=hmask);\n"
    "    }\n"
    "}\n"
    "kernel decode_stage2(att_out: *f32, att_lse: *f32, O: *f16, b_seqlen: *i32, num_kv_splits: i32, const D: i32 = 64) {\n"
    "    let b = program_id(0);\n"
    "    let h = program_id(1);\n"
    "    let row = (b * num_programs(1) + h) * num_kv_splits;\n"
    "    let seqlen = load(b_seqlen + b);\n"
    "    let d = arange(0, D);\n"
    "    let e_sum = 0.0;\n"
    "    let e_max = -1.0 / 0.0;\n"
    "    let acc = zeros([D], f32);\n"
    "    let per_split = cdiv(seqlen, num_kv_splits);\n"
    "    for s in range(0, num_kv_splits) {\n"
    "        if min(per_split * (s + 1), seqlen) > per_split * s {\n"
    "            let tv = load(att_out + (row + s) * D + d);\n"
    "            let tlse = load(att_lse + row + s);\n"
    "            let n_max = maximum(tlse, e_max);\n"
    "            let old = exp(e_max - n_max);\n"
    "            let ex = exp(tlse - n_max);\n"
    "            acc = acc * old + ex * tv;\n"
    "            e_sum = e_sum * old + ex;\n"
    "            e_max = n_max;\n"
    "        }\n"
    "    }\n"
    "    store(O + (b * num_programs(1) + h) * D + d, acc / e_sum);\n"
    "}\n";

Test(lang_ports_more, paged_split_kv_decode_attention) {
    seed_rng();
    enum { NB = 3, KVH = 2, G = 4, QH = KVH * G, D = 64, SLOTS = 200, STRIDE = 64, SPLITS = 4 };
    static uint16_t q[NB * QH * D], kb[SLOTS * KVH * D], vb[SLOTS * KVH * D], o[NB * QH * D];
    static float ao[NB * QH * SPLITS * D], al[NB * QH * SPLITS];
    int32_t r2t[3 * STRIDE], req_idx[NB] = {2, 0, 1}, seqlen[NB] = {37, 5, 60};
    for (int i = 0; i < NB * QH * D; i++) q[i] = f32_to_f16((float)urand());
    for (int i = 0; i < SLOTS * KVH * D; i++) kb[i] = f32_to_f16((float)urand()), vb[i] = f32_to_f16((float)urand());
    int perm[SLOTS];
    for (int i = 0; i < SLOTS; i++) perm[i] = i;
    for (int i = SLOTS - 1; i > 0; i--) {
        int j = irand(i + 1), t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
    for (int i = 0; i < 3 * STRIDE; i++) r2t[i] = perm[i]; /* each request's tokens in slots of its own, scattered */
    float scale = 0.125f;
    for (int a = 0; a < 2; a++) {
        K k;
        load_with(&k, decode_src, "decode_stage1", archs[a], NULL, NULL);
        uint64_t dq = upload(&k, q, sizeof q), dk = upload(&k, kb, sizeof kb), dv = upload(&k, vb, sizeof vb), dr = upload(&k, r2t, sizeof r2t),
                 dri = upload(&k, req_idx, sizeof req_idx), dsl = upload(&k, seqlen, sizeof seqlen), dao = poisoned(&k, sizeof ao),
                 dal = poisoned(&k, sizeof al), d_o = poisoned(&k, sizeof o);
        int32_t stride = STRIDE, kvh = KVH, g = G, ns = SPLITS;
        launch3(&k, NULL, NB, KVH, SPLITS, (void *[]){&dq, &dk, &dv, &scale, &dr, &dri, &dsl, &dao, &dal, &stride, &kvh, &g, &ns});
        launch3(&k, fn_of(&k, "decode_stage2"), NB, QH, 1, (void *[]){&dao, &dal, &d_o, &dsl, &ns});
        download(&k, o, d_o, sizeof o);
        download(&k, al, dal, sizeof al);
        for (int b = 0; b < NB; b++)
            for (int h = 0; h < QH; h++) {
                int n = seqlen[b], kh = h / G;
                double sc[64], mx = -INFINITY, sum = 0;
                for (int t = 0; t < n; t++) {
                    int slot = r2t[req_idx[b] * STRIDE + t];
                    double dt = 0;
                    for (int c = 0; c < D; c++) dt += f16_to_d(q[(b * QH + h) * D + c]) * f16_to_d(kb[(slot * KVH + kh) * D + c]);
                    sc[t] = dt * scale, mx = fmax(mx, sc[t]);
                }
                for (int t = 0; t < n; t++) sum += exp(sc[t] - mx);
                for (int c = 0; c < D; c++) {
                    double want = 0;
                    for (int t = 0; t < n; t++) want += exp(sc[t] - mx) / sum * f16_to_d(vb[(r2t[req_idx[b] * STRIDE + t] * KVH + kh) * D + c]);
                    double got = f16_to_d(o[(b * QH + h) * D + c]);
                    cr_assert(close_to(got, want, 4e-3, 2e-3), "%s out[%d][%d][%d] = %g, want %g (seed %llu)", archs[a], b, h, c, got, want,
                              (unsigned long long)seed);
                }
                int per = (n + SPLITS - 1) / SPLITS;
                for (int s = 0; s < SPLITS; s++) /* an empty split's LSE is left as it was */
                    if (per * s >= n) cr_assert(isnan(al[(b * QH + h) * SPLITS + s]), "%s empty split %d of seq %d was written", archs[a], s, b);
            }
        unload(&k);
    }
}

/* ---- masked_select (FlagGems): stream compaction by one program walking the input in blocks; a bool mask (bytes)
 * counted by cumsum into each kept element's place after those of the earlier blocks, the count carried across
 * blocks and stored at the end ---- */
static const char *masked_select_src =
    "kernel masked_select(x: *f32, m: *i1, out: *f32, n_out: *i32, n: i32, const B: i32 = 128) {\n"
    "    let base = 0;\n"
    "    for off in range(0, n, B) {\n"
    "        let o = off + arange(0, B);\n"
    "        let keep = load(m + o, mask=o < n, other=false);\n"
    "        let pos = base + cumsum(keep as i32, axis=0) - 1;\n"
    "        store(out + pos, load(x + o, mask=keep), mask=keep);\n"
    "        base += sum(keep as i32);\n"
    "    }\n"
    "    store(n_out, base);\n"
    "}\n";

Test(lang_ports_more, masked_select_compaction) {
    seed_rng();
    enum { N = 1000 };
    static float x[N], o[N];
    static uint8_t m[N];
    int32_t cnt;
    for (int i = 0; i < N; i++) x[i] = (float)urand(), m[i] = irand(3) == 0 ? (uint8_t)(1 + irand(255)) : 0; /* any non-zero byte is true */
    for (int a = 0; a < 2; a++) {
        K k;
        load_with(&k, masked_select_src, "masked_select", archs[a], NULL, NULL);
        uint64_t dx = upload(&k, x, sizeof x), dm = upload(&k, m, sizeof m), d_o = poisoned(&k, sizeof o), dc = poisoned(&k, 4);
        int32_t n = N;
        launch3(&k, NULL, 1, 1, 1, (void *[]){&dx, &dm, &d_o, &dc, &n});
        download(&k, o, d_o, sizeof o);
        download(&k, &cnt, dc, 4);
        int j = 0;
        for (int i = 0; i < N; i++)
            if (m[i]) {
                cr_assert(o[j] == x[i], "%s out[%d] = %g, want x[%d] = %g (seed %llu)", archs[a], j, o[j], i, x[i], (unsigned long long)seed);
                j++;
            }
        cr_assert_eq(cnt, j, "%s count %d, want %d", archs[a], cnt, j);
        for (int i = j; i < N; i++) cr_assert(isnan(o[i]), "%s out[%d] past the count was written", archs[a], i);
        unload(&k);
    }
}

/* ---- GEGLU forward and backward (Liger's geglu): the tanh form of GELU on a times b, its gradient in place over the
 * inputs; Liger calls libdevice's tanh, the accurate one, which is tanh(x, exact=true) here (plain tanh is tanh.approx,
 * 2^-11 off, which the tolerance below catches: geglu_tolerance_holds_at_the_isa_error runs both on emu:approx=bound,
 * where tanh.approx is moved by up to the PTX ISA's documented error) ---- */
static const char *geglu_src =
    "const SQRT_2_OVER_PI: f32 = 0.7978845608028654;\n"
    "fn gelu_tanh_parts(a) {\n"
    "    let t = tanh(SQRT_2_OVER_PI * (a + 0.044715 * a * a * a), exact=true);\n"
    "    return (0.5 * a * (1.0 + t), t);\n"
    "}\n"
    "kernel geglu_fwd(a: *f32, b: *f32, c: *f32, stride: i32, n_cols: i32, const B: i32 = 256) {\n"
    "    let row = program_id(0);\n"
    "    let o = arange(0, B);\n"
    "    let m = o < n_cols;\n"
    "    let av = load(a + row * stride + o, mask=m, other=0.0);\n"
    "    let (g, t) = gelu_tanh_parts(av);\n"
    "    store(c + row * stride + o, g * load(b + row * stride + o, mask=m, other=0.0), mask=m);\n"
    "}\n"
    "kernel geglu_bwd(dc: *f32, a: *f32, b: *f32, stride: i32, n_cols: i32, const B: i32 = 256) {\n"
    "    let row = program_id(0);\n"
    "    let o = arange(0, B);\n"
    "    let m = o < n_cols;\n"
    "    let d = load(dc + row * stride + o, mask=m, other=0.0);\n"
    "    let av = load(a + row * stride + o, mask=m, other=0.0);\n"
    "    let bv = load(b + row * stride + o, mask=m, other=0.0);\n"
    "    let (g, t) = gelu_tanh_parts(av);\n"
    "    let dt = (1.0 - t * t) * SQRT_2_OVER_PI * (1.0 + 3.0 * 0.044715 * av * av);\n"
    "    store(a + row * stride + o, d * bv * (0.5 * (1.0 + t) + 0.5 * av * dt), mask=m);\n"
    "    store(b + row * stride + o, d * g, mask=m);\n"
    "}\n";

/* GEGLU of src on device (NULL: TILE_TEST_DEVICE) for both archs against float64: the number of outputs past the
 * tolerance, the first of them described in why. */
static int geglu_run(const char *src, const char *device, char *why, size_t cap) {
    seed_rng();
    enum { M = 3, N = 200, S = 203 };
    static float a[M * S], b[M * S], dc[M * S], c[M * S], da[M * S], db[M * S];
    for (int i = 0; i < M * S; i++) a[i] = (float)(urand() * 4), b[i] = (float)urand(), dc[i] = (float)urand();
    int bad = 0;
    for (int ar = 0; ar < 2; ar++) {
        K k;
        load_with_on(&k, src, "geglu_fwd", archs[ar], NULL, NULL, device);
        uint64_t dA = upload(&k, a, sizeof a), dB = upload(&k, b, sizeof b), dC = poisoned(&k, sizeof c), dD = upload(&k, dc, sizeof dc);
        int32_t s = S, n = N;
        launch3(&k, NULL, M, 1, 1, (void *[]){&dA, &dB, &dC, &s, &n});
        launch3(&k, fn_of(&k, "geglu_bwd"), M, 1, 1, (void *[]){&dD, &dA, &dB, &s, &n});
        download(&k, c, dC, sizeof c);
        download(&k, da, dA, sizeof da);
        download(&k, db, dB, sizeof db);
        for (int r = 0; r < M; r++)
            for (int j = 0; j < S; j++) {
                int i = r * S + j;
                if (j >= N) {
                    cr_assert(isnan(c[i]) && da[i] == a[i] && db[i] == b[i], "%s element %d past the row was written", archs[ar], i);
                    continue;
                }
                double x = a[i], k0 = 0.7978845608028654, t = tanh(k0 * (x + 0.044715 * x * x * x)), g = 0.5 * x * (1 + t);
                double dt = (1 - t * t) * k0 * (1 + 3 * 0.044715 * x * x), wda = dc[i] * b[i] * (0.5 * (1 + t) + 0.5 * x * dt);
                /* the sum cancels for negative a, and 1 - t^2 in f32 near |t| = 1 is good to f32's ulp of 1 only: the bound is
                 * relative to the terms' sizes with 1 - t^2 taken as 1 */
                double mag = fabs(dc[i] * b[i]) * (0.5 * (1 + t) + fabs(0.5 * x * k0 * (1 + 3 * 0.044715 * x * x)));
                const char *what = !close_to(c[i], g * b[i], 2e-6, 1e-7)       ? "c"
                                   : !(fabs(da[i] - wda) <= 4e-6 * mag + 1e-7) ? "da"
                                   : !close_to(db[i], dc[i] * g, 2e-6, 1e-7)   ? "db"
                                                                               : NULL;
                if (what && !bad++)
                    snprintf(why, cap, "%s %s[%d]: c = %.9g (want %.9g), da = %.9g (want %.9g), db = %.9g (want %.9g), seed %llu",
                             archs[ar], what, i, c[i], g * b[i], da[i], wda, db[i], dc[i] * g, (unsigned long long)seed);
            }
        unload(&k);
    }
    return bad;
}

Test(lang_ports_more, geglu_forward_backward) {
    char why[512] = "";
    cr_assert_eq(geglu_run(geglu_src, NULL, why, sizeof why), 0, "%s", why);
}

/* The tolerance above holds at the PTX ISA's documented error (emu:approx=bound moves every tanh.approx, ex2.approx,
 * ... result by up to that error, half the time all of it) with tanh(x, exact=true), and catches plain tanh (tanh.approx, 2^-11 relative),
 * which the emulator's exact default would let through. */
Test(lang_ports_more, geglu_tolerance_holds_at_the_isa_error) {
    char why[512] = "";
    cr_assert_eq(geglu_run(geglu_src, "emu:approx=bound", why, sizeof why), 0, "%s", why);
    char *plain = strdup(geglu_src), *at = strstr(plain, ", exact=true");
    cr_assert(at);
    memmove(at, at + strlen(", exact=true"), strlen(at + strlen(", exact=true")) + 1);
    cr_assert_eq(geglu_run(plain, "emu:approx=exact", why, sizeof why), 0, "%s", why);
    int bad = geglu_run(plain, "emu:approx=bound", why, sizeof why);
    cr_assert_gt(bad, 0, "tanh.approx at its documented error passed GEGLU's tolerance");
    cr_log_info("plain tanh on emu:approx=bound: %d outputs past the tolerance, the first %s", bad, why);
    free(plain);
}

/* ---- a helper's const parameter given a tensor (SageAttention's `_attn_fwd_inner(..., offs_m: tl.constexpr,
 * offs_n: tl.constexpr)` given `start_m * BLOCK_M + tl.arange(0, BLOCK_M)`): Triton ignores the annotation there, and
 * so does a `fn` here (a run-time value the body may assign); a compile-time BLOCK beside it stays one ---- */
static const char *const_tensor_src =
    "fn scaled_at(p, n, const offs, const BLOCK) {\n"
    "    let v = load(p + offs, mask=offs < n, other=0.0) * BLOCK;\n"
    "    offs += BLOCK;\n"
    "    return v + load(p + offs, mask=offs < n, other=0.0);\n"
    "}\n"
    "kernel k(x: *f32, out: *f32, n: i32, const BLOCK: i32 = 32) {\n"
    "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    store(out + offs, scaled_at(x, n, offs, BLOCK), mask=offs < n);\n"
    "}\n";

Test(lang_ports_more, const_helper_parameter_given_a_tensor) {
    seed_rng();
    enum { N = 100 };
    static float x[N], o[N];
    for (int i = 0; i < N; i++) x[i] = (float)urand();
    for (int a = 0; a < 2; a++) {
        K k;
        load_with(&k, const_tensor_src, "k", archs[a], NULL, NULL);
        uint64_t dx = upload(&k, x, sizeof x), d_o = poisoned(&k, sizeof o);
        int n = N;
        launch3(&k, NULL, (N + 31) / 32, 1, 1, (void *[]){&dx, &d_o, &n});
        download(&k, o, d_o, sizeof o);
        for (int i = 0; i < N; i++) {
            double want = 32.0 * x[i] + (i + 32 < N ? x[i + 32] : 0.0);
            cr_assert(close_to(o[i], want, 1e-6, 1e-6), "%s out[%d] = %g, want %g (seed %llu)", archs[a], i, o[i], want,
                      (unsigned long long)seed);
        }
        unload(&k);
    }
}

/* ---- a file-level name bound to a function (lmdeploy's `fast_expf = tl.math.exp`, `tl_round =
 * tl.extra.cuda.libdevice.round`): `const NAME = function;` is called as that built-in or fn, through an alias of an
 * alias, and is passed on as a fn; as a value it is an error naming the built-in ---- */
static const char *alias_src =
    "const fast_expf = exp;\n"
    "const tl_round = fast_round;\n"
    "const fast_round = round;\n"
    "fn twice(x) { return x * 2.0; }\n"
    "const dbl = twice;\n"
    "fn apply(x, const f) { return f(x); }\n"
    "kernel silu_round(x: *f32, out: *f32, n: i32, const BLOCK: i32 = 64) {\n"
    "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    let v = load(x + offs, mask=offs < n, other=0.0);\n"
    "    let s = v / (1 + fast_expf(-v));\n"
    "    store(out + offs, tl_round(apply(s, dbl)) + dbl(0.25), mask=offs < n);\n"
    "}\n";

Test(lang_ports_more, function_aliases_at_file_level) {
    seed_rng();
    enum { N = 150 };
    static float x[N], o[N];
    for (int i = 0; i < N; i++) x[i] = (float)(urand() * 8 - 4);
    for (int a = 0; a < 2; a++) {
        K k;
        load_with(&k, alias_src, "silu_round", archs[a], NULL, NULL);
        uint64_t dx = upload(&k, x, sizeof x), d_o = poisoned(&k, sizeof o);
        int n = N;
        launch3(&k, NULL, (N + 63) / 64, 1, 1, (void *[]){&dx, &d_o, &n});
        download(&k, o, d_o, sizeof o);
        for (int i = 0; i < N; i++) {
            double s2 = 2.0 * x[i] / (1 + exp(-(double)x[i])), r = round(s2);
            /* exp is the hardware's approximation: a value within 1e-5 of a half may round either way */
            bool near_half = fabs(fabs(s2 - floor(s2)) - 0.5) < 1e-5;
            cr_assert(o[i] == r + 0.5 || (near_half && fabs(o[i] - r - 0.5) == 1.0), "%s out[%d] = %g, want %g (seed %llu)", archs[a],
                      i, o[i], r + 0.5, (unsigned long long)seed);
        }
        unload(&k);
    }
    const BadSource bad[] = {
        {"const fast_expf = exp;\nkernel k(p: *f32) {\n    let a = fast_expf;\n}\n",
         "t.tile:3:13: error: 'fast_expf' names the built-in 'exp', which can be called but is no value"},
    };
    expect_compile_errors(bad, sizeof bad / sizeof *bad);
}
