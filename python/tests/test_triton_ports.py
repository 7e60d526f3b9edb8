"""Kernels that inference and training engines run, written as a Triton user writes them and ported line
by line to this language (one kernel source per port, each test naming what it checks).  Each runs on
the emulator (sm_80 and sm_90a, the slow-compiling sorts on one of them) against float64 NumPy
references at sizes that are no multiple of the blocks, with the outputs poisoned first.

What the ports needed: histogram of 1024 or 2048 values over 256 bins (one [n, bins] compare tile was
past the register limit: now counted by one-hot dots, or a slice of the bins at a time); AWQ's parameter
named zeros beside the zeros() call (a variable of a built-in's name hid it); and, in the diagnostics a
port meets first, Python's annotated assignment and module-level constexprs, a tuple of new names
without let, BLOCK: constexpr parameters and const ACT: str (tests/test_lang_diag*.c, test_lang_python.c)."""
import os
import unittest

import numpy as np

import tile

rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))
DEVICES = ("emu", "emu:sm_90a")


def check(test, name, got, want, atol, rtol):
    got = np.asarray(got, np.float64)
    test.assertFalse(np.isnan(got).any(), "%s: NaN left (an element never written)" % name)
    err, bound = np.abs(got - want), atol + rtol * np.abs(want)
    test.assertTrue((err <= bound).all(), "%s: max error %g (bound at it %g)" % (name, err.max(), bound.flat[np.argmax(err - bound)]))


CROSS_ENTROPY = r"""
// One program per row of logits: an online logsumexp over vocabulary blocks (the running max m and the
// sum d of exp(x - m)), then a second pass that writes the gradient of the mean loss over the rows that
// are not ignored in place of the logits.  A row whose label is ignore_index gets a zero gradient and loss.
// With label smoothing eps = ls / V every class's target gets eps and the label's 1 - ls more.
kernel cross_entropy_fwd_bwd(X_ptr: *f16, X_stride: i64, Y_ptr: *i64, loss_ptr: *f32, n_cols: i32,
        n_non_ignore: i32, ignore_index: i32, const label_smoothing: f32, const BLOCK_SIZE: i32) {
    let program_id = program_id(0) as i64;
    Y_ptr += program_id;
    let y = load(Y_ptr);
    X_ptr += program_id * X_stride;
    loss_ptr += program_id;
    if y == ignore_index {
        for i in range(0, n_cols, BLOCK_SIZE) {
            let X_offsets = i + arange(0, BLOCK_SIZE);
            store(X_ptr + X_offsets, 0.0, mask=X_offsets < n_cols);
        }
        store(loss_ptr, 0.0);
        return;
    }
    let m = -1.0 / 0.0;
    let d = 0.0;
    let ori_X_y = load(X_ptr + y) as f32;
    let scaled_x_sum = 0.0;
    let eps = label_smoothing / n_cols;
    for i in range(0, n_cols, BLOCK_SIZE) {
        let X_offsets = i + arange(0, BLOCK_SIZE);
        let X_block = load(X_ptr + X_offsets, mask=X_offsets < n_cols, other=-1.0 / 0.0) as f32;
        let block_max = max(X_block);
        if label_smoothing > 0 {
            scaled_x_sum += sum(where(X_offsets < n_cols, -eps * X_block, 0.0));
        }
        let m_new = maximum(m, block_max);
        d = d * exp(m - m_new) + sum(exp(X_block - m_new));
        m = m_new;
    }
    let lse = m + log(d);
    for i in range(0, n_cols, BLOCK_SIZE) {
        let X_offsets = i + arange(0, BLOCK_SIZE);
        let X_block = load(X_ptr + X_offsets, mask=X_offsets < n_cols, other=-1.0 / 0.0) as f32;
        X_block = (exp(X_block - m) / d - eps) / n_non_ignore;
        X_block = where(X_offsets != y, X_block, X_block - (1 - label_smoothing) / n_non_ignore);
        store(X_ptr + X_offsets, X_block, mask=X_offsets < n_cols);
    }
    let loss = lse - ori_X_y;
    if label_smoothing > 0 {
        let smooth_loss = scaled_x_sum + label_smoothing * lse;
        loss = loss * (1 - label_smoothing) + smooth_loss;
    }
    store(loss_ptr, loss / n_non_ignore);
}

// The older form: the gradient stored block by block without the label's term, then, after a barrier that makes
// the program's stores visible to all its threads, the label's element read back and corrected in place; the label
// checked in range with device_assert (compiled in with the debug option).
kernel cross_entropy_barrier(X_ptr: *f32, Y_ptr: *i64, loss_ptr: *f32, n_cols: i32, n_non_ignore: i32,
        const BLOCK_SIZE: i32) {
    let program_id = program_id(0) as i64;
    let y = load(Y_ptr + program_id);
    device_assert((y >= 0) & (y < n_cols), "label out of range");
    X_ptr += program_id * n_cols;
    let ori_X_y = load(X_ptr + y);
    let m = -1.0 / 0.0;
    let d = 0.0;
    for i in range(0, n_cols, BLOCK_SIZE) {
        let X_offsets = i + arange(0, BLOCK_SIZE);
        let X_block = load(X_ptr + X_offsets, mask=X_offsets < n_cols, other=-1.0 / 0.0);
        let m_new = maximum(m, max(X_block));
        d = d * exp(m - m_new) + sum(exp(X_block - m_new));
        m = m_new;
    }
    for i in range(0, n_cols, BLOCK_SIZE) {
        let X_offsets = i + arange(0, BLOCK_SIZE);
        let X_block = load(X_ptr + X_offsets, mask=X_offsets < n_cols, other=-1.0 / 0.0);
        store(X_ptr + X_offsets, exp(X_block - m) / d / n_non_ignore, mask=X_offsets < n_cols);
    }
    debug_barrier();
    let X_y = load(X_ptr + y);
    X_y += -1.0 / n_non_ignore;
    store(X_ptr + y, X_y);
    store(loss_ptr + program_id, (m + log(d) - ori_X_y) / n_non_ignore);
}
"""

RMS_NORM = r"""
// Forward: one program per row, y = x * rstd * (offset + w) with rstd = 1 / sqrt(mean(x^2) + eps), rstd kept
// for the backward.  Backward: a persistent grid, each program a run of rows_per_program rows: dx per row,
// and the program's partial dw summed in f32 over its rows, stored to its own row of dW; a second kernel
// sums the partial rows by column blocks.
kernel _rms_norm_forward(Y_ptr: *T, Y_row_stride: i32, X_ptr: *T, X_row_stride: i32, W_ptr: *T,
        RSTD_ptr: *f32, n_cols: i32, eps: f32, offset: f32, const BLOCK_SIZE: i32, const T = f16) {
    let row_idx = program_id(0);
    let col_offsets = arange(0, BLOCK_SIZE);
    let mask = col_offsets < n_cols;
    Y_ptr += row_idx * Y_row_stride;
    X_ptr += row_idx * X_row_stride;
    RSTD_ptr += row_idx;
    let X_row = load(X_ptr + col_offsets, mask=mask, other=0);
    let X_row_dtype = dtype_of(X_row);
    let W_row = load(W_ptr + col_offsets, mask=mask, other=0);
    X_row = X_row as f32;
    let mean_square = sum(X_row * X_row, axis=0) / n_cols;
    let rstd = rsqrt(mean_square + eps);
    store(RSTD_ptr, rstd);
    X_row = X_row * rstd;
    let Y_row = X_row * (offset + W_row);
    store(Y_ptr + col_offsets, Y_row as X_row_dtype, mask=mask);
}

kernel _rms_norm_backward(dY_ptr: *T, dY_row_stride: i32, dX_ptr: *T, dX_row_stride: i32, X_ptr: *T,
        X_row_stride: i32, W_ptr: *T, RSTD_ptr: *f32, dW_ptr: *f32, dW_row_stride: i32, n_rows: i32,
        n_cols: i32, offset: f32, const rows_per_program: i32, const BLOCK_SIZE: i32, const T = f16) {
    let row_block_id = program_id(0);
    let row_start = row_block_id * rows_per_program;
    let row_end = min((row_block_id + 1) * rows_per_program, n_rows);
    let col_offsets = arange(0, BLOCK_SIZE);
    let mask = col_offsets < n_cols;
    let dW_row = zeros((BLOCK_SIZE,), dtype=f32);
    dY_ptr += row_start * dY_row_stride;
    dX_ptr += row_start * dX_row_stride;
    X_ptr += row_start * X_row_stride;
    RSTD_ptr += row_start;
    let W_row = load(W_ptr + col_offsets, mask=mask, other=0.0);
    W_row = W_row + offset;
    for _ in range(row_start, row_end) {
        let dY_row = load(dY_ptr + col_offsets, mask=mask, other=0.0);
        let X_row = load(X_ptr + col_offsets, mask=mask, other=0.0);
        let rstd_row = load(RSTD_ptr);
        X_row = X_row as f32;
        let m = (dY_row * W_row) as f32;
        let dX_row = rstd_row * m;
        dX_row += rstd_row * (-(1.0 / n_cols) * rstd_row * rstd_row * sum(m * X_row, axis=0) * X_row);
        dW_row += dY_row * (X_row * rstd_row) as T;
        store(dX_ptr + col_offsets, dX_row as T, mask=mask);
        dY_ptr += dY_row_stride;
        dX_ptr += dX_row_stride;
        X_ptr += X_row_stride;
        RSTD_ptr += 1;
    }
    store(dW_ptr + row_block_id * dW_row_stride + col_offsets, dW_row, mask=mask);
}

kernel _sum_rows(P_ptr: *f32, out_ptr: *T, n_rows: i32, n_cols: i32, const BLOCK_M: i32, const BLOCK_N: i32, const T = f16) {
    let cols = program_id(0) * BLOCK_N + arange(0, BLOCK_N);
    let acc = zeros((BLOCK_M, BLOCK_N), dtype=f32);
    for r in range(0, n_rows, BLOCK_M) {
        let rows = r + arange(0, BLOCK_M);
        let mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols);
        acc += load(P_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=0.0);
    }
    store(out_ptr + cols, sum(acc, axis=0), mask=cols < n_cols);
}
"""

GLU = r"""
// SwiGLU c = silu(a) * b and GeGLU c = gelu(a) * b (the tanh approximation, or erf's exact form), one
// program per row; the backward writes da and db in place of a and b.
fn silu(x) {
    return x * sigmoid(x);
}

fn gelu_parts(a_row, const APPROX) {
    // gelu(a) and its derivative
    if APPROX == "geglu_tanh" {
        let sqrt_2_over_pi = 0.7978845608028654;
        let a_cubed = a_row * a_row * a_row;
        let tanh_arg = sqrt_2_over_pi * (a_row + 0.044715 * a_cubed);
        let tanh_result = tanh(tanh_arg, exact=true);
        let geglu_a = 0.5 * a_row * (1 + tanh_result);
        let term1 = 0.5 * (1 + tanh_result);
        let tanh_sq = tanh_result * tanh_result;
        let term2 = 0.5 * a_row * (1 - tanh_sq) * (sqrt_2_over_pi * (1 + 3 * 0.044715 * a_row * a_row));
        return geglu_a, term1 + term2;
    }
    let inv_sqrt2 = 0.7071067811865476;
    let cdf = 0.5 * (1.0 + erf(a_row * inv_sqrt2));
    let pdf = exp(-0.5 * a_row * a_row) * 0.3989422804014327;
    return a_row * cdf, cdf + a_row * pdf;
}

kernel _glu_forward_kernel(a_ptr: *T, b_ptr: *T, c_ptr: *T, stride: i32, const n_cols: i32,
        const BLOCK_SIZE: i32, const ACT = "swiglu", const T = f16) {
    let program_id = program_id(0) as i64;
    a_ptr += program_id * stride;
    b_ptr += program_id * stride;
    c_ptr += program_id * stride;
    let col_offsets = arange(0, BLOCK_SIZE);
    let mask = col_offsets < n_cols;
    let a_row = load(a_ptr + col_offsets, mask=mask, other=0) as f32;
    let b_row = load(b_ptr + col_offsets, mask=mask, other=0);
    let c_row = b_row;
    if ACT == "swiglu" {
        c_row = (silu(a_row) as dtype_of(b_row)) * b_row;
    } else {
        let (g, _) = gelu_parts(a_row, ACT);
        c_row = (g * b_row) as dtype_of(b_row);
    }
    store(c_ptr + col_offsets, c_row, mask=mask);
}

kernel _glu_backward_kernel(dc_ptr: *T, a_ptr: *T, b_ptr: *T, stride: i32, const n_cols: i32,
        const BLOCK_SIZE: i32, const ACT = "swiglu", const T = f16) {
    let program_id = program_id(0) as i64;
    dc_ptr += program_id * stride;
    a_ptr += program_id * stride;
    b_ptr += program_id * stride;
    let col_offsets = arange(0, BLOCK_SIZE);
    let mask = col_offsets < n_cols;
    let dc_row = load(dc_ptr + col_offsets, mask=mask, other=0) as f32;
    let a_row = load(a_ptr + col_offsets, mask=mask, other=0) as f32;
    let b_row = load(b_ptr + col_offsets, mask=mask, other=0) as f32;
    let da_row = a_row;
    let db_row = b_row;
    if ACT == "swiglu" {
        let sig_a = sigmoid(a_row);
        let silu_a = a_row * sig_a;
        db_row = dc_row * silu_a;
        da_row = dc_row * (silu_a * (1 - sig_a) + sig_a) * b_row;
    } else {
        let (g, dg) = gelu_parts(a_row, ACT);
        db_row = dc_row * g;
        da_row = dc_row * b_row * dg;
    }
    store(a_ptr + col_offsets, da_row, mask=mask);
    store(b_ptr + col_offsets, db_row, mask=mask);
}
"""

QUANT = r"""
// Per-token dynamic quantization: one program per row, scale = max(absmax, 1e-10) / qmax, the row divided
// by it, clamped and rounded to e4m3 (round to nearest even by the cast, or by PTX's saturating pair
// conversion cvt.rn.satfinite.e4m3x2.f32 through inline assembly, as sm_89+ kernels do) or to int8
// (rounded half away from zero, libdevice's round); the scale per row stored as f32.
const fp8_max = 448.0;
const fp8_min = -448.0;

kernel _per_token_quant_fp8(x_ptr: *T, xq_ptr: *f8e4m3, scale_ptr: *f32, stride_x: i32, stride_xq: i32, N: i32,
        const BLOCK: i32, const ASM: i1 = false, const T = bf16) {
    let row_id = program_id(0);
    x_ptr += row_id * stride_x;
    xq_ptr += row_id * stride_xq;
    let cols = arange(0, BLOCK);
    let mask = cols < N;
    let x = load(x_ptr + cols, mask=mask, other=0.0) as f32;
    let absmax = maximum(max(abs(x)), 1e-10);
    let scale_x = absmax / fp8_max;
    let x_q = x * (1 / scale_x);
    if ASM {
        x_q = inline_asm_elementwise("cvt.rn.satfinite.e4m3x2.f32 $0, $2, $1;", "=h,r,r", [x_q], dtype=f8e4m3,
                                     is_pure=true, pack=2);
    } else {
        x_q = clamp(x_q, fp8_min, fp8_max) as element_type(xq_ptr);
    }
    store(xq_ptr + cols, x_q, mask=mask);
    store(scale_ptr + row_id, scale_x);
}

kernel _per_token_quant_int8(x_ptr: *T, xq_ptr: *i8, scale_ptr: *f32, stride_x: i32, stride_xq: i32, N: i32,
        const BLOCK: i32, const T = bf16) {
    let row_id = program_id(0);
    x_ptr += row_id * stride_x;
    xq_ptr += row_id * stride_xq;
    let cols = arange(0, BLOCK);
    let mask = cols < N;
    let x = load(x_ptr + cols, mask=mask, other=0.0) as f32;
    let absmax = maximum(max(abs(x)), 1e-10);
    let scale_x = absmax / 127;
    let x_q = x * (127 / absmax);
    let q = round(x_q) as i8;
    store(xq_ptr + cols, q, mask=mask);
    store(scale_ptr + row_id, scale_x);
}
"""


def e4m3_values():
    """The 256 codes of E4M3FN as float64 (NaN at 0x7f and 0xff)."""
    c = np.arange(256)
    s, e, m = c >> 7, (c >> 3) & 15, c & 7
    v = np.where(e == 0, m / 8 * 2.0 ** -6, (1 + m / 8) * 2.0 ** (e - 7))
    v = np.where(s == 1, -v, v)
    return np.where((c & 0x7F) == 0x7F, np.nan, v)


def to_e4m3(x):
    """x (float64) rounded to nearest even E4M3FN code, saturating at +-448."""
    vals = e4m3_values()
    codes = np.arange(256)
    ok = ~np.isnan(vals) & ~((vals == 0) & (codes == 0x80))
    fv, fc = vals[ok], codes[ok]
    order = np.argsort(fv)
    fv, fc = fv[order], fc[order]
    xs = np.clip(x, fv[0], fv[-1])
    hi = np.clip(np.searchsorted(fv, xs), 1, len(fv) - 1)
    lo = hi - 1
    dlo, dhi = xs - fv[lo], fv[hi] - xs
    pick = np.where(dlo < dhi, lo, np.where(dhi < dlo, hi, np.where(fc[lo] % 2 == 0, lo, hi)))
    out = fc[pick]
    return np.where((out == 0) & (x < 0), 0x80, out).astype(np.uint8)

SCAN = r"""
// Prefix sums along rows longer than a block: each block's cumsum plus the carry of the blocks before it;
// and the first-order linear recurrence h[t] = a[t] * h[t-1] + b[t] of state-space models, each block
// an associative scan of (a, b) pairs whose combine composes two affine maps, its result then shifted
// by the product of the block's a's times the carried h.
fn first_order_op(fl, xl, fr, xr) {
    let f = fr * fl;
    let x = fr * xl + xr;
    return f, x;
}

kernel cumsum_rows(X: *f32, Y: *f32, L: i32, const BLOCK: i32) {
    let pid = program_id(0);
    let offs = arange(0, BLOCK);
    let carry = 0.0;
    for start in range(0, L, BLOCK) {
        let mask = start + offs < L;
        let x = load(X + pid * L + start + offs, mask=mask, other=0.0);
        let y = cumsum(x, axis=0) + carry;
        store(Y + pid * L + start + offs, y, mask=mask);
        carry += sum(x, axis=0);
    }
}

kernel linear_recurrence(A: *f32, B: *f32, H: *f32, L: i32, const BLOCK: i32) {
    let pid = program_id(0);
    let offs = arange(0, BLOCK);
    let h0 = 0.0;
    for start in range(0, L, BLOCK) {
        let mask = start + offs < L;
        let a = load(A + pid * L + start + offs, mask=mask, other=1.0);
        let b = load(B + pid * L + start + offs, mask=mask, other=0.0);
        let a_prod, h = associative_scan((a, b), axis=0, combine_fn=first_order_op);
        h = h + a_prod * h0;
        store(H + pid * L + start + offs, h, mask=mask);
        h0 = sum(where(offs == BLOCK - 1, h, 0.0), axis=0);
    }
}

// A tile of rows at once: the exclusive prefix sum of integer counts along axis 1, in reverse too.
kernel exclusive_cumsum_2d(C: *i32, OUT: *i32, OUT_REV: *i32, M: i32, N: i32, const BM: i32, const BN: i32) {
    let rows = program_id(0) * BM + arange(0, BM);
    let cols = arange(0, BN);
    let mask = (rows[:, None] < M) & (cols[None, :] < N);
    let c = load(C + rows[:, None] * N + cols[None, :], mask=mask, other=0);
    store(OUT + rows[:, None] * N + cols[None, :], cumsum(c, axis=1) - c, mask=mask);
    store(OUT_REV + rows[:, None] * N + cols[None, :], cumsum(c, axis=1, reverse=true) - c, mask=mask);
}
"""

SELECT = r"""
// Greedy sampling's argmax over a vocabulary, block by block (a block's max with its index, kept when it
// beats the running one, so the first of equal maxima wins), and with argmax on each block; and a
// mixture-of-experts router: top-k experts per token by sorting 64-bit keys (an order-preserving
// encoding of the logit above the expert's index, reversed so that equal logits keep the lower index
// first), then a softmax over the k chosen logits.
kernel argmax_rows(logits: *f16, out: *i64, out2: *i32, V: i32, stride: i64, const BLOCK: i32) {
    let row = program_id(0) as i64;
    let best_val = -1.0 / 0.0;
    let best_idx = 0;
    let best2 = -1.0 / 0.0;
    let idx2 = 0;
    for start in range(0, V, BLOCK, num_stages=2) {
        let offs = start + arange(0, BLOCK);
        let x = load(logits + row * stride + offs, mask=offs < V, other=-1.0 / 0.0, eviction_policy="evict_first") as f32;
        let blk_val, blk_idx = max(x, axis=0, return_indices=true);
        if blk_val > best_val {
            best_val = blk_val;
            best_idx = blk_idx + start;
        }
        let i = argmax(x, 0);
        let v = max(x, 0);
        if v > best2 {
            best2 = v;
            idx2 = i + start;
        }
    }
    store(out + row, best_idx);
    store(out2 + row, idx2);
}

kernel topk_router(logits: *f32, topk_w: *f32, topk_ids: *i32, n_tokens: i32, const E: i32, const K: i32,
        const BLOCK_T: i32) {
    let tok = program_id(0) * BLOCK_T + arange(0, BLOCK_T);
    let e = arange(0, E);
    let x = load(logits + tok[:, None] * E + e[None, :], mask=(tok < n_tokens)[:, None], other=-1.0 / 0.0);
    let bits = cast(x, u32, bitcast=true);
    let key = where((bits >> 31) != 0, ~bits, bits | 0x80000000);
    let packed = ((key as u64) << 32) | ((E - 1 - e) as u64);
    let top = topk(packed, K, dim=1);
    let ids = (E - 1 - (top & 0xFFFFFFFF)) as i32;
    let key_top = (top >> 32) as u32;
    let vals = cast(where((key_top >> 31) != 0, key_top & 0x7FFFFFFF, ~key_top), f32, bitcast=true);
    let w = exp(vals - max(vals, axis=1)[:, None]);
    w = w / sum(w, axis=1)[:, None];
    let k = arange(0, K);
    let out_mask = (tok < n_tokens)[:, None] & (k[None, :] < K);
    store(topk_w + tok[:, None] * K + k[None, :], w, mask=out_mask);
    store(topk_ids + tok[:, None] * K + k[None, :], ids, mask=out_mask);
    let sorted = sort(x, dim=1, descending=true);
    static_assert(shape_of(sorted) == [BLOCK_T, E]);
}
"""

HISTOGRAM = r"""
// Tokens per expert for a mixture-of-experts dispatch: each program's histogram of expert ids, added to
// the global counts with relaxed atomics; then one program pads each count to a multiple of BLOCK_M and
// takes the exclusive prefix sum, the first row of each expert's padded segment.
kernel count_experts(ids: *i32, counts: *i32, n: i32, const NUM_EXPERTS: i32, const BLOCK: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < n;
    let e = load(ids + offs, mask=mask, other=0);
    let h = histogram(e, NUM_EXPERTS, mask=mask);
    atomic_add(counts + arange(0, NUM_EXPERTS), h, sem="relaxed");
}

// A byte histogram of a block (a radix sort's digit counts): 1024 values over 256 bins at once.
kernel byte_histogram(x: *u8, counts: *i32, n: i32, const NUM_BINS: i32 = 256, const BLOCK: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let v = load(x + offs, mask=offs < n, other=0);
    atomic_add(counts + arange(0, NUM_BINS), histogram(v, NUM_BINS, mask=offs < n), sem="relaxed");
}

kernel expert_offsets(counts: *i32, offsets: *i32, const NUM_EXPERTS: i32, const BLOCK_M: i32) {
    let c = load(counts + arange(0, NUM_EXPERTS));
    let padded = cdiv(c, BLOCK_M) * BLOCK_M;
    store(offsets + arange(0, NUM_EXPERTS), cumsum(padded, 0) - padded);
    store(offsets + NUM_EXPERTS, sum(padded, 0));
}
"""

LINEAR_CROSS_ENTROPY = r"""
// Fused linear cross-entropy: the logits x @ W^T of a block of BLOCK_M tokens are made one vocabulary
// block at a time and never stored.  Pass 1 keeps each row's running max and sum of exponentials (the
// log-sum-exp); pass 2 makes the logits again, turns them into the gradient of the mean loss,
// (softmax - onehot) / n, and accumulates dX = G @ W in registers and dW += G^T @ X with atomics.
@num_warps(4)
kernel fused_linear_ce(X: *f16, W: *f16, Y: *i32, loss: *f32, dX: *f32, dW: *f32, n_tokens: i32, V: i32,
        H: i32, const BLOCK_M: i32, const BLOCK_V: i32, const BLOCK_H: i32) {
    let pid = program_id(0);
    let rows = pid * BLOCK_M + arange(0, BLOCK_M);
    let row_mask = rows < n_tokens;
    let offs_h = arange(0, BLOCK_H);
    let h_mask = offs_h < H;
    let x = load(X + rows[:, None] * H + offs_h[None, :], mask=row_mask[:, None] & h_mask[None, :], other=0.0);
    let y = load(Y + rows, mask=row_mask, other=0);
    let m = full((BLOCK_M,), -1.0 / 0.0, dtype=f32);
    let d = zeros((BLOCK_M,), dtype=f32);
    let x_y = zeros((BLOCK_M,), dtype=f32);
    for v0 in range(0, V, BLOCK_V) {
        let offs_v = v0 + arange(0, BLOCK_V);
        let w = load(W + offs_v[:, None] * H + offs_h[None, :], mask=(offs_v[:, None] < V) & h_mask[None, :], other=0.0);
        let logits = dot(x, trans(w));
        logits = where(offs_v[None, :] < V, logits, -1.0 / 0.0);
        x_y += sum(where(offs_v[None, :] == y[:, None], logits, 0.0), axis=1);
        let m_new = maximum(m, max(logits, axis=1));
        d = d * exp(m - m_new) + sum(exp(logits - m_new[:, None]), axis=1);
        m = m_new;
    }
    let lse = m + log(d);
    store(loss + rows, (lse - x_y) / n_tokens, mask=row_mask);
    let dx = zeros((BLOCK_M, BLOCK_H), dtype=f32);
    for v0 in range(0, V, BLOCK_V) {
        let offs_v = v0 + arange(0, BLOCK_V);
        let w_mask = (offs_v[:, None] < V) & h_mask[None, :];
        let w = load(W + offs_v[:, None] * H + offs_h[None, :], mask=w_mask, other=0.0);
        let logits = dot(x, trans(w));
        let g = exp(logits - lse[:, None]) - where(offs_v[None, :] == y[:, None], 1.0, 0.0);
        g = where(row_mask[:, None] & (offs_v[None, :] < V), g / n_tokens, 0.0);
        dx = dot(g as f16, w, dx);
        let dw = dot(trans(g as f16), x);
        atomic_add(dW + offs_v[:, None] * H + offs_h[None, :], dw, mask=w_mask, sem="relaxed");
    }
    store(dX + rows[:, None] * H + offs_h[None, :], dx, mask=row_mask[:, None] & h_mask[None, :]);
}
"""

ROPE = r"""
// Rotary embeddings of q in place, one program per token, every head at once as a [heads, head_dim / 2]
// tile: NeoX's halves (x1 = x[:d/2], x2 = x[d/2:]) by two loads, GPT-J's interleaved pairs by
// reshape to [.., d/2, 2] and split, the rotated pairs put back with interleave.
kernel rope_neox(q_ptr: *f16, q_row_stride: i32, cos: *f32, sin: *f32, cos_row_stride: i32, sl: i32,
        const n_qh: i32, const hd: i32, const pad_n_qh: i32, const pad_hd: i32) {
    let pid = program_id(0) as i64;
    q_ptr = q_ptr + pid * q_row_stride;
    let cos_row_idx = pid % sl;
    cos = cos + cos_row_idx * cos_row_stride;
    sin = sin + cos_row_idx * cos_row_stride;
    let cos_offsets = arange(0, pad_hd / 2);
    let cos_mask = cos_offsets < hd / 2;
    let cos_row = load(cos + cos_offsets, mask=cos_mask, other=0);
    let sin_row = load(sin + cos_offsets, mask=cos_mask, other=0);
    let first_half_q_offsets = arange(0, pad_n_qh)[:, None] * hd + arange(0, pad_hd / 2)[None, :];
    let first_q_mask = (arange(0, pad_n_qh)[:, None] < n_qh) & (arange(0, pad_hd / 2)[None, :] < hd / 2);
    let q_tile_1 = load(q_ptr + first_half_q_offsets, mask=first_q_mask, other=0) as dtype_of(sin_row);
    let second_half_q_offsets = first_half_q_offsets + (hd / 2);
    let q_tile_2 = load(q_ptr + second_half_q_offsets, mask=first_q_mask, other=0) as dtype_of(sin_row);
    let new_q_tile_1 = q_tile_1 * cos_row - q_tile_2 * sin_row;
    store(q_ptr + first_half_q_offsets, new_q_tile_1, mask=first_q_mask);
    let new_q_tile_2 = q_tile_2 * cos_row + q_tile_1 * sin_row;
    store(q_ptr + second_half_q_offsets, new_q_tile_2, mask=first_q_mask);
}

kernel rope_gptj(q_ptr: *f16, q_row_stride: i32, cos: *f32, sin: *f32, cos_row_stride: i32, sl: i32,
        const n_qh: i32, const hd: i32, const pad_n_qh: i32) {
    static_assert(hd == next_power_of_2(hd), "the head is one tile");
    let pid = program_id(0) as i64;
    q_ptr += pid * q_row_stride;
    let c = load(cos + (pid % sl) * cos_row_stride + arange(0, hd / 2));
    let s = load(sin + (pid % sl) * cos_row_stride + arange(0, hd / 2));
    let heads = arange(0, pad_n_qh);
    let offs = heads[:, None] * hd + arange(0, hd)[None, :];
    let mask = (heads < n_qh)[:, None];
    let q = load(q_ptr + offs, mask=mask, other=0.0) as f32;
    let x1, x2 = split(reshape(q, (pad_n_qh, hd / 2, 2)));
    let o1 = x1 * c[None, :] - x2 * s[None, :];
    let o2 = fma(x1, s[None, :], x2 * c[None, :]);
    store(q_ptr + offs, interleave(o1, o2), mask=mask);
}
"""

DEQUANT = r"""
// 4-bit weights with a 16-entry code book (NF4): two codes a byte, the first in the high nibble; each
// block of QBLOCK values has its own absmax scale.  The codes are looked up with gather and the two
// nibbles of each byte put back in order with interleave.  And a division by a run-time constant with
// a precomputed magic number: q = umulhi(n, magic) >> shift, r = n - q * d.
kernel dequant_nf4(packed: *u8, code: *f32, absmax: *f32, out: *f16, n_bytes: i32, const QBLOCK: i32,
        const BLOCK: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < n_bytes;
    let b = load(packed + offs, mask=mask, other=0);
    let lut = load(code + arange(0, 16));
    let hi = gather(lut, (b >> 4) as i32, 0);
    let lo = gather(lut, (b & 0xF) as i32, 0);
    let vals = interleave(hi, lo);
    let out_offs = program_id(0) * 2 * BLOCK + arange(0, 2 * BLOCK);
    let scale = load(absmax + out_offs / QBLOCK, mask=out_offs < 2 * n_bytes, other=0.0);
    store(out + out_offs, vals * scale, mask=out_offs < 2 * n_bytes);
}

kernel fast_divmod(n_ptr: *u32, q_ptr: *u32, r_ptr: *u32, n: i32, d: u32, magic: u32, shift: u32,
        const BLOCK: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < n;
    let v = load(multiple_of(n_ptr, 16) + offs, mask=mask, other=0, cache_modifier=".cg");
    let q = umulhi(v, magic) >> shift;
    store(q_ptr + offs, q, mask=mask, eviction_policy="evict_first");
    store(r_ptr + offs, v - q * d, mask=mask, cache_modifier=".cs");
}
"""

AWQ_GEMM = r"""
// AWQ's 4-bit GEMM: each i32 of B holds 8 weights along N in the order 0 2 4 6 1 3 5 7, the zero points packed
// the same way, one scale and zero point per group of G rows of K.  A tile of B is widened by three interleaves
// of itself and shifted by the reversed order times 4; c = a @ ((w - z) * s).  The zero points' parameter is
// named zeros, as Triton kernels may name one: the tl.zeros call beside it is the built-in.
kernel awq_gemm_kernel(a_ptr: *f16, b_ptr: *i32, c_ptr: *f32, zeros: *i32, scales_ptr: *f16, M: i32, N: i32, K: i32,
        group_size: i32, const BLOCK_SIZE_M: i32, const BLOCK_SIZE_N: i32, const BLOCK_SIZE_K: i32) {
    let pid_m = program_id(0);
    let pid_n = program_id(1);
    let offs_am = pid_m * BLOCK_SIZE_M + arange(0, BLOCK_SIZE_M);
    let offs_bn = pid_n * (BLOCK_SIZE_N / 8) + arange(0, BLOCK_SIZE_N / 8);
    let offs_k = arange(0, BLOCK_SIZE_K);
    let reverse_awq_order_tensor = reshape((arange(0, 2) * 4)[None, :] + arange(0, 4)[:, None], (8,));
    let shifts = reverse_awq_order_tensor * 4;
    shifts = broadcast_to(shifts[None, :], (BLOCK_SIZE_K * (BLOCK_SIZE_N / 8), 8));
    shifts = reshape(shifts, (BLOCK_SIZE_K, BLOCK_SIZE_N));
    let zshifts = reshape(broadcast_to((reverse_awq_order_tensor * 4)[None, :], (BLOCK_SIZE_N / 8, 8)), (BLOCK_SIZE_N,));
    let accumulator = zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=f32);
    let offs_cn = pid_n * BLOCK_SIZE_N + arange(0, BLOCK_SIZE_N);
    for k in range(0, cdiv(K, BLOCK_SIZE_K)) {
        let kk = k * BLOCK_SIZE_K + offs_k;
        let a = load(a_ptr + offs_am[:, None] * K + kk[None, :], mask=(offs_am[:, None] < M) & (kk[None, :] < K), other=0.0);
        let b = load(b_ptr + kk[:, None] * (N / 8) + offs_bn[None, :], mask=(kk[:, None] < K) & (offs_bn[None, :] < N / 8), other=0);
        b = interleave(b, b);
        b = interleave(b, b);
        b = interleave(b, b);
        b = (b >> shifts) & 0xF;
        let group = (k * BLOCK_SIZE_K) / group_size;
        let z = load(zeros + group * (N / 8) + offs_bn, mask=offs_bn < N / 8, other=0);
        z = interleave(z, z);
        z = interleave(z, z);
        z = interleave(z, z);
        z = (z >> zshifts) & 0xF;
        let s = load(scales_ptr + group * N + offs_cn, mask=offs_cn < N, other=0.0);
        let w = ((b - z[None, :]) as f16) * s[None, :];
        accumulator = dot(a, w, accumulator);
    }
    store(c_ptr + offs_am[:, None] * N + offs_cn[None, :], accumulator,
          mask=(offs_am[:, None] < M) & (offs_cn[None, :] < N));
}
"""

SAMPLING = r"""
// Sampling from a vocabulary row: top-p keeps the most probable tokens whose probabilities before them sum to
// less than p (the row sorted descending by 64-bit keys, the probability's bits above the reversed index, so
// equal probabilities keep the lower token first; its exclusive cumsum; written back through the indices);
// Gumbel-max draws argmax(logits / T + g), g = -log(-log(u)) from Philox uniforms.
kernel top_p_mask(probs: *f32, keep: *i8, V: i32, p: f32, const BV: i32) {
    let row = program_id(0) as i64;
    let offs = arange(0, BV);
    let x = load(probs + row * V + offs, mask=offs < V, other=0.0);
    let key = ((bitcast(x, i32) as i64) << 32) | ((BV - 1 - offs) as i64);
    let sorted = sort(key, descending=true);
    let sp = bitcast((sorted >> 32) as i32, f32);
    let sidx = BV - 1 - (sorted & 0xFFFFFFFF) as i32;
    let kept = cumsum(sp, 0) - sp < p;
    store(keep + row * V + sidx, kept as i8, mask=sidx < V);
}

kernel gumbel_sample(logits: *f32, out: *i32, V: i32, seed: i32, T: f32, const BV: i32) {
    let row = program_id(0);
    let offs = arange(0, BV);
    let x = load(logits + row * V + offs, mask=offs < V, other=-1.0 / 0.0);
    let u = rand(seed, row * V + offs);
    let g = -log(-log(u + 1e-10) + 1e-10);
    store(out + row, argmax(x / T + g, axis=0));
}
"""

SSD_CHUNK = r"""
// Mamba-2's chunked scan (SSD) within one chunk: the decays a_t = dt_t * A summed along the chunk, the masked
// segment-sum matrix exp(cs_i - cs_j) for j <= i, and y = ((C B^T) * L * dt_j) x, plus the chunk's final state
// B^T (x * dt * exp(cs_last - cs_j)).
kernel ssd_chunk(x_ptr: *f32, dt_ptr: *f32, B_ptr: *f32, C_ptr: *f32, y_ptr: *f32, st_ptr: *f32, A: f32, seqlen: i32,
        const CHUNK: i32, const P: i32, const N: i32) {
    let c = program_id(0);
    let offs_l = c * CHUNK + arange(0, CHUNK);
    let lmask = offs_l < seqlen;
    let offs_p = arange(0, P);
    let offs_n = arange(0, N);
    let dt = load(dt_ptr + offs_l, mask=lmask, other=0.0);
    let a_cs = cumsum(dt * A, axis=0);
    let x = load(x_ptr + offs_l[:, None] * P + offs_p[None, :], mask=lmask[:, None], other=0.0);
    let Bm = load(B_ptr + offs_l[:, None] * N + offs_n[None, :], mask=lmask[:, None], other=0.0);
    let Cm = load(C_ptr + offs_l[:, None] * N + offs_n[None, :], mask=lmask[:, None], other=0.0);
    let i = arange(0, CHUNK);
    let causal = i[:, None] >= i[None, :];
    let seg = where(causal, exp(a_cs[:, None] - a_cs[None, :]), 0.0);
    let scores = dot(Cm, trans(Bm), input_precision="ieee") * seg * dt[None, :];
    let y = dot(scores, x, input_precision="ieee");
    store(y_ptr + offs_l[:, None] * P + offs_p[None, :], y, mask=lmask[:, None]);
    let last = sum(where(i == CHUNK - 1, a_cs, 0.0), axis=0);
    let w = exp(last - a_cs) * dt;
    let state = dot(trans(Bm), x * w[:, None], input_precision="ieee");
    store(st_ptr + c * N * P + offs_n[:, None] * P + offs_p[None, :], state);
}
"""

PAGED_DECODE = r"""
// Paged decode attention, split over the sequence: program (b, h, s) walks its slice of the sequence page by page
// through the block table, keeps the online max and sum, and stores its partial output and log-sum-exp; the second
// kernel combines the splits.
kernel decode_stage1(q: *f16, k_cache: *f16, v_cache: *f16, block_table: *i32, seq_lens: *i32, mid_o: *f32,
        mid_lse: *f32, sm_scale: f32, max_blocks: i32, const H: i32, const D: i32, const PAGE: i32,
        const NUM_SPLITS: i32, const BLOCK_N: i32) {
    let b = program_id(0);
    let h = program_id(1);
    let split = program_id(2);
    let seq_len = load(seq_lens + b);
    let per_split = cdiv(cdiv(seq_len, NUM_SPLITS), PAGE) * PAGE;
    let start = split * per_split;
    let end = min(start + per_split, seq_len);
    let offs_d = arange(0, D);
    let qv = load(q + (b * H + h) * D + offs_d) as f32;
    let m = -1.0 / 0.0;
    let l = 0.0;
    let acc = zeros((D,), dtype=f32);
    for n0 in range(start, end, BLOCK_N) {
        let offs_n = n0 + arange(0, BLOCK_N);
        let nmask = offs_n < end;
        let page = load(block_table + b * max_blocks + offs_n / PAGE, mask=nmask, other=0);
        let slot = (page as i64) * PAGE + offs_n % PAGE;
        let kv_offs = (slot[:, None] * H + h) * D + offs_d[None, :];
        let kt = load(k_cache + kv_offs, mask=nmask[:, None], other=0.0) as f32;
        let s = sum(qv[None, :] * kt, axis=1) * sm_scale;
        s = where(nmask, s, -1.0 / 0.0);
        let m_new = maximum(m, max(s, axis=0));
        let p = exp(s - m_new);
        let alpha = exp(m - m_new);
        let vt = load(v_cache + kv_offs, mask=nmask[:, None], other=0.0) as f32;
        acc = acc * alpha + sum(p[:, None] * vt, axis=0);
        l = l * alpha + sum(p, axis=0);
        m = m_new;
    }
    let base = (b * H + h) * NUM_SPLITS + split;
    if end > start {
        store(mid_o + base * D + offs_d, acc / l);
        store(mid_lse + base, m + log(l));
    } else {
        store(mid_o + base * D + offs_d, zeros((D,), dtype=f32));
        store(mid_lse + base, -1.0 / 0.0);
    }
}

kernel decode_stage2(mid_o: *f32, mid_lse: *f32, out: *f16, const H: i32, const D: i32, const NUM_SPLITS: i32) {
    let bh = program_id(0);
    let sp = arange(0, NUM_SPLITS);
    let lse = load(mid_lse + bh * NUM_SPLITS + sp);
    let mx = max(lse, axis=0);
    let w = exp(lse - mx);
    let o = load(mid_o + (bh * NUM_SPLITS + sp)[:, None] * D + arange(0, D)[None, :]);
    store(out + bh * D + arange(0, D), (sum(w[:, None] * o, axis=0) / sum(w, axis=0)) as f16);
}
"""

GROUPED_TOPK = r"""
// DeepSeek-V3's router: sigmoid scores plus a per-expert bias choose; the experts in N_GROUPS groups, each group
// scored by the sum of its two best biased scores, the TOPK_GROUP best groups kept, the TOP_K best experts among
// them taken (their indices packed below the biased score's bits for the sort), weighted by their unbiased scores
// normalized to one and scaled.
kernel grouped_topk(logits: *f32, bias: *f32, w_out: *f32, id_out: *i32, n_tokens: i32, scale: f32,
        const E: i32, const N_GROUPS: i32, const TOPK_GROUP: i32, const TOP_K: i32, const BLOCK_T: i32) {
    let tok = program_id(0) * BLOCK_T + arange(0, BLOCK_T);
    let tmask = tok < n_tokens;
    let e = arange(0, E);
    let scores = sigmoid(load(logits + tok[:, None] * E + e[None, :], mask=tmask[:, None], other=0.0));
    let choice = scores + load(bias + e)[None, :];
    const PER_GROUP = E / N_GROUPS;
    let grouped = reshape(choice, (BLOCK_T, N_GROUPS, PER_GROUP));
    let group_scores = sum(topk(grouped, 2, dim=2), axis=2);
    let g = arange(0, N_GROUPS);
    let gkey = (bitcast(group_scores, i32) as i64 << 32) | ((N_GROUPS - 1 - g) as i64)[None, :];
    let best_groups = N_GROUPS - 1 - (topk(gkey, TOPK_GROUP, dim=1) & 0xFFFFFFFF) as i32;
    let keep = zeros((BLOCK_T, N_GROUPS), dtype=i1);
    for i in static_range(TOPK_GROUP) {
        let gi = sum(where(arange(0, TOPK_GROUP)[None, :] == i, best_groups, 0), axis=1);
        keep = keep | (g[None, :] == gi[:, None]);
    }
    let masked = where(reshape(broadcast_to(keep[:, :, None], (BLOCK_T, N_GROUPS, PER_GROUP)), (BLOCK_T, E)), choice, -1.0 / 0.0);
    let bits = bitcast(masked, u32);
    let key = where((bits >> 31) != 0, ~bits, bits | 0x80000000);
    let packed = ((key as u64) << 32) | ((E - 1 - e) as u64)[None, :];
    let ids = (E - 1 - (topk(packed, TOP_K, dim=1) & 0xFFFFFFFF)) as i32;
    let w = gather(scores, ids, axis=1);
    w = w / sum(w, axis=1, keep_dims=true) * scale;
    let k = arange(0, TOP_K);
    store(w_out + tok[:, None] * TOP_K + k[None, :], w, mask=tmask[:, None]);
    store(id_out + tok[:, None] * TOP_K + k[None, :], ids, mask=tmask[:, None]);
}
"""

KV_LAYOUT = r"""
// A KV cache written in the layout [heads, tokens, dim] from a projection's [tokens, heads, dim]: a [BT, H, D] tile
// permuted to [H, BT, D]; the keys rotated first as complex pairs (re, im) = split, times (cos + i sin), joined back.
kernel kv_to_head_major(k: *f16, cache: *f16, cos: *f32, sin: *f32, n_tokens: i32, cache_stride_h: i32,
        const H: i32, const D: i32, const BT: i32) {
    let t = program_id(0) * BT + arange(0, BT);
    let tmask = t < n_tokens;
    let offs = (t[:, None, None] * H + arange(0, H)[None, :, None]) * D + arange(0, D)[None, None, :];
    let x = load(k + offs, mask=tmask[:, None, None], other=0.0) as f32;
    let re, im = split(reshape(x, (BT, H, D / 2, 2)));
    let c = load(cos + t[:, None, None] * (D / 2) + arange(0, D / 2)[None, None, :], mask=tmask[:, None, None], other=1.0);
    let s = load(sin + t[:, None, None] * (D / 2) + arange(0, D / 2)[None, None, :], mask=tmask[:, None, None], other=0.0);
    let rot = reshape(join(re * c - im * s, re * s + im * c), (BT, H, D));
    let y = permute(rot, (1, 0, 2));
    let out = arange(0, H)[:, None, None] * cache_stride_h + t[None, :, None] * D + arange(0, D)[None, None, :];
    store(cache + out, y, mask=tmask[None, :, None]);
}
"""


class TritonPorts(unittest.TestCase):
    def test_cross_entropy(self):
        rows, V, ignore = 7, 1000, -100
        for name, ls in zip(DEVICES, (0.0, 0.1)):
            x = (rng.standard_normal((rows, V)) * 3).astype(np.float16)
            y = rng.integers(0, V, rows).astype(np.int64)
            y[2] = ignore
            y[5] = V - 1
            keep = y != ignore
            n = int(keep.sum())
            xd = x.astype(np.float64)
            lse = np.log(np.exp(xd - xd.max(1, keepdims=True)).sum(1)) + xd.max(1)
            p = np.exp(xd - lse[:, None])
            target = np.full((rows, V), ls / V)
            target[np.arange(rows), np.where(keep, y, 0)] += 1 - ls
            loss_ref = np.where(keep, (target * (lse[:, None] - xd)).sum(1) / n, 0)
            grad_ref = np.where(keep[:, None], (p - target) / n, 0)
            mod = tile.compile(CROSS_ENTROPY, label_smoothing=ls, BLOCK_SIZE=256, device=name)
            loss = np.full(rows, np.nan, np.float32)
            mod.cross_entropy_fwd_bwd[(rows,)](x, V, y, loss, V, n, ignore)
            check(self, name + " loss", loss, loss_ref, 2e-6, 2e-5)
            check(self, name + " grad", x, grad_ref, 1e-7, 2e-3)
        x = rng.standard_normal((rows, V)).astype(np.float32)
        y = rng.integers(0, V, rows).astype(np.int64)
        xd = x.astype(np.float64)
        lse = np.log(np.exp(xd).sum(1))
        grad_ref = np.exp(xd - lse[:, None])
        grad_ref[np.arange(rows), y] -= 1
        mod = tile.compile(CROSS_ENTROPY, kernel="cross_entropy_barrier", BLOCK_SIZE=256, device="emu", debug=True)
        loss = np.full(rows, np.nan, np.float32)
        mod.cross_entropy_barrier[(rows,)](x, y, loss, V, rows)
        check(self, "barrier loss", loss, (lse - xd[np.arange(rows), y]) / rows, 1e-7, 1e-5)
        check(self, "barrier grad", x, grad_ref / rows, 1e-8, 1e-5)
        y[3] = V
        with self.assertRaisesRegex(tile.Error, r"<source>:\d+:\d+ in kernel 'cross_entropy_barrier'(.|\n)*label out of range"):
            mod.cross_entropy_barrier[(rows,)](x, y, loss, V, rows)

    def test_rms_norm(self):
        M, N, eps, offset = 29, 301, 1e-6, 1.0
        for name, T, npT in (("emu", "f16", np.float16), ("emu:sm_90a", "f32", np.float32)):
            x = (rng.standard_normal((M, N)) * 2).astype(npT)
            w = (0.1 * rng.standard_normal(N)).astype(npT)
            dy = rng.standard_normal((M, N)).astype(npT)
            xd, wd, dyd = (t.astype(np.float64) for t in (x, w, dy))
            rstd_ref = 1 / np.sqrt((xd * xd).mean(1) + eps)
            mods = {k: tile.compile(RMS_NORM, kernel=k, BLOCK_SIZE=512, rows_per_program=4, BLOCK_M=8, BLOCK_N=64,
                                    T=T, device=name) for k in ("_rms_norm_forward", "_rms_norm_backward", "_sum_rows")}
            y, rstd = np.full((M, N), np.nan, npT), np.full(M, np.nan, np.float32)
            mods["_rms_norm_forward"]._rms_norm_forward[(M,)](y, N, x, N, w, rstd, N, eps, offset)
            tol = 2e-3 if npT == np.float16 else 2e-6
            check(self, name + " rstd", rstd, rstd_ref, 0, 2e-6)
            check(self, name + " y", y, xd * rstd_ref[:, None] * (offset + wd), tol, tol)
            programs = tile.cdiv(M, 4)
            dx, dw_part = np.full((M, N), np.nan, npT), np.full((programs, N), np.nan, np.float32)
            mods["_rms_norm_backward"]._rms_norm_backward[(programs,)](dy, N, dx, N, x, N, w, rstd, dw_part, N, M, N, offset)
            dw = np.full(N, np.nan, npT)
            mods["_sum_rows"]._sum_rows[(tile.cdiv(N, 64),)](dw_part, dw, programs, N)
            r = rstd.astype(np.float64)[:, None]
            m = dyd * (wd + offset)
            dx_ref = r * m - r ** 3 * (m * xd).mean(1, keepdims=True) * xd
            check(self, name + " dx", dx, dx_ref, tol, 2 * tol)
            check(self, name + " dw", dw, (dyd * xd * r).sum(0), 10 * tol, 2 * tol)

    def test_glu(self):
        from math import erf
        M, N = 9, 203
        erf_v = np.vectorize(erf)
        for name in DEVICES:
            for act in ("swiglu", "geglu_tanh", "geglu"):
                a = rng.standard_normal((M, N)).astype(np.float32)
                b = rng.standard_normal((M, N)).astype(np.float32)
                dc = rng.standard_normal((M, N)).astype(np.float32)
                ad, bd, dcd = (t.astype(np.float64) for t in (a, b, dc))
                if act == "swiglu":
                    s = 1 / (1 + np.exp(-ad))
                    g, dg = ad * s, s * (1 + ad * (1 - s))
                elif act == "geglu_tanh":
                    k = np.sqrt(2 / np.pi)
                    t = np.tanh(k * (ad + 0.044715 * ad ** 3))
                    g = 0.5 * ad * (1 + t)
                    dg = 0.5 * (1 + t) + 0.5 * ad * (1 - t * t) * k * (1 + 3 * 0.044715 * ad * ad)
                else:
                    cdf = 0.5 * (1 + erf_v(ad / np.sqrt(2)))
                    g, dg = ad * cdf, cdf + ad * np.exp(-0.5 * ad * ad) / np.sqrt(2 * np.pi)
                kw = dict(n_cols=N, BLOCK_SIZE=256, ACT=act, T="f32", device=name)
                fwd = tile.compile(GLU, kernel="_glu_forward_kernel", **kw)
                bwd = tile.compile(GLU, kernel="_glu_backward_kernel", **kw)
                c = np.full((M, N), np.nan, np.float32)
                fwd._glu_forward_kernel[(M,)](a, b, c, N)
                check(self, "%s %s c" % (name, act), c, g * bd, 1e-6, 2e-5)
                bwd._glu_backward_kernel[(M,)](dc, a, b, N)
                check(self, "%s %s da" % (name, act), a, dcd * bd * dg, 1e-6, 2e-5)
                check(self, "%s %s db" % (name, act), b, dcd * g, 1e-6, 2e-5)

    def bf16(self, shape, scale):
        """bf16 inputs as uint16 bits, and their float64 values."""
        f = (rng.standard_normal(shape) * scale).astype(np.float32)
        bits = (f.view(np.uint32) >> 16).astype(np.uint16)
        return bits, (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)

    def test_per_token_quant(self):
        M, N = 11, 333
        for name in DEVICES:
            x, xd = self.bf16((M, N), 3.0)
            xd[4] = 0
            x[4] = 0  # an all-zero row: the 1e-10 floor keeps its scale finite
            absmax = np.maximum(np.abs(xd).max(1).astype(np.float32), np.float32(1e-10))  # f32, as the kernel
            for asm in (False, True) if name != "emu" else (False,):  # e4m3x2 needs sm_89 and PTX 7.8
                mod = tile.compile(QUANT, kernel="_per_token_quant_fp8", BLOCK=512, ASM=asm, device=name)
                xq, scale = np.full((M, N), 0x7F, np.uint8), np.full(M, np.nan, np.float32)
                mod._per_token_quant_fp8[(M,)](x, xq, scale, N, N, N)
                scale_ref = absmax / np.float32(448.0)
                np.testing.assert_array_equal(scale, scale_ref)
                q_in = xd.astype(np.float32) * (np.float32(1) / scale_ref[:, None])
                np.testing.assert_array_equal(xq, to_e4m3(q_in.astype(np.float64)), "%s asm=%s" % (name, asm))
                self.assertEqual(e4m3_values()[xq].max(), 448.0)  # every row's largest element reaches the top
            mod = tile.compile(QUANT, kernel="_per_token_quant_int8", BLOCK=512, device=name)
            xq, scale = np.full((M, N), -128, np.int8), np.full(M, np.nan, np.float32)
            mod._per_token_quant_int8[(M,)](x, xq, scale, N, N, N)
            np.testing.assert_array_equal(scale, absmax / np.float32(127))
            q_in = (xd.astype(np.float32) * (np.float32(127) / absmax)[:, None]).astype(np.float64)
            want = np.sign(q_in) * np.floor(np.abs(q_in) + 0.5)
            np.testing.assert_array_equal(xq, want.astype(np.int8), name)
            self.assertEqual(np.abs(xq.astype(np.int32)).max(1).min(), 0)
            self.assertTrue((np.abs(xq.astype(np.int32)).max(1)[np.arange(M) != 4] == 127).all())

    def test_scans(self):
        R, L = 5, 300
        for name in DEVICES:
            mod = tile.compile(SCAN, BLOCK=128, BM=4, BN=64, device=name)
            x = rng.standard_normal((R, L)).astype(np.float32)
            y = np.full((R, L), np.nan, np.float32)
            mod.cumsum_rows[(R,)](x, y, L)
            check(self, name + " cumsum", y, np.cumsum(x.astype(np.float64), 1), 1e-5, 1e-5)
            a = rng.uniform(0.5, 1.0, (R, L)).astype(np.float32)
            b = rng.standard_normal((R, L)).astype(np.float32)
            h = np.full((R, L), np.nan, np.float32)
            mod.linear_recurrence[(R,)](a, b, h, L)
            ref, acc = np.zeros((R, L)), np.zeros(R)
            for t in range(L):
                acc = a[:, t] * acc + b[:, t]
                ref[:, t] = acc
            check(self, name + " recurrence", h, ref, 1e-5, 1e-5)
            M, N = 7, 45
            c = rng.integers(0, 1000, (M, N)).astype(np.int32)
            out, rev = np.full((M, N), -1, np.int32), np.full((M, N), -1, np.int32)
            mod.exclusive_cumsum_2d[(tile.cdiv(M, 4),)](c, out, rev, M, N)
            np.testing.assert_array_equal(out, np.cumsum(c, 1) - c)
            np.testing.assert_array_equal(rev, np.cumsum(c[:, ::-1], 1)[:, ::-1] - c)

    def test_argmax_topk(self):
        R, V = 6, 777
        T, E, K = 37, 64, 8
        for name in DEVICES:
            mod = tile.compile(SELECT, kernel="argmax_rows", BLOCK=128, E=E, K=K, BLOCK_T=16, device=name)
            logits = rng.integers(-50, 50, (R, V)).astype(np.float16)  # many equal maxima
            logits[3, 700] = 60
            out, out2 = np.full(R, -1, np.int64), np.full(R, -1, np.int32)
            mod.argmax_rows[(R,)](logits, out, out2, V, V)
            np.testing.assert_array_equal(out, logits.argmax(1))
            np.testing.assert_array_equal(out2, logits.argmax(1))
            if name != "emu":
                continue  # the sort compiles slowly: sm_90a's sorts run in test_grouped_topk_router
            mod = tile.compile(SELECT, kernel="topk_router", BLOCK=128, E=E, K=K, BLOCK_T=16, device=name)
            x = rng.standard_normal((T, E)).astype(np.float32)
            x[5, 10] = x[5, 3] = x[5].max() + 1  # a tie at the top: the lower expert first
            x[6] = -np.abs(x[6])
            w, ids = np.full((T, K), np.nan, np.float32), np.full((T, K), -1, np.int32)
            mod.topk_router[(tile.cdiv(T, 16),)](x, w, ids, T)
            want_ids = np.argsort(-x, axis=1, kind="stable")[:, :K]
            np.testing.assert_array_equal(ids, want_ids)
            v = np.take_along_axis(x, want_ids, 1).astype(np.float64)
            p = np.exp(v - v.max(1, keepdims=True))
            check(self, name + " router weights", w, p / p.sum(1, keepdims=True), 1e-7, 1e-6)

    def test_histogram(self):
        n, E, BM = 3001, 16, 64
        for name in DEVICES:
            kw = dict(NUM_EXPERTS=E, BLOCK=512, BLOCK_M=BM, device=name)
            mod = tile.compile(HISTOGRAM, kernel="count_experts", **kw)
            ids = rng.integers(0, E, n).astype(np.int32)
            ids[ids == 7] = 3  # an expert without tokens
            counts = np.zeros(E, np.int32)
            mod.count_experts[(tile.cdiv(n, 512),)](ids, counts, n)
            np.testing.assert_array_equal(counts, np.bincount(ids, minlength=E))
            offsets = np.full(E + 1, -1, np.int32)
            mod = tile.compile(HISTOGRAM, kernel="expert_offsets", **kw)
            mod.expert_offsets[(1,)](counts, offsets)
            padded = (counts + BM - 1) // BM * BM
            np.testing.assert_array_equal(offsets, np.concatenate([[0], np.cumsum(padded)]))
            nb = 2000
            data = rng.integers(0, 256, nb).astype(np.uint8)
            # 64 bins and more: counted by dots of one-hot tiles (64: of a [16, 16] product's first 64); 32: 16 bins at a time
            for bins, block in ((256, 1024), (32, 2048)) if name == "emu" else ((64, 1024),):
                h = np.zeros(bins, np.int32)
                mod = tile.compile(HISTOGRAM, kernel="byte_histogram", NUM_BINS=bins, BLOCK=block, device=name)
                mod.byte_histogram[(tile.cdiv(nb, block),)](data, h, nb)
                np.testing.assert_array_equal(h, np.bincount(data, minlength=256)[:bins], "%s %d bins" % (name, bins))

    def test_fused_linear_cross_entropy(self):
        N, H, V = 37, 48, 300
        for name in DEVICES[:1]:  # one target: sm_90a's dots run in the AWQ and SSD ports
            x = (rng.standard_normal((N, H)) * 0.5).astype(np.float16)
            w = (rng.standard_normal((V, H)) * 0.5).astype(np.float16)
            y = rng.integers(0, V, N).astype(np.int32)
            xd, wd = x.astype(np.float64), w.astype(np.float64)
            z = xd @ wd.T
            lse = np.log(np.exp(z - z.max(1, keepdims=True)).sum(1)) + z.max(1)
            g = np.exp(z - lse[:, None])
            g[np.arange(N), y] -= 1
            g /= N
            mod = tile.compile(LINEAR_CROSS_ENTROPY, BLOCK_M=16, BLOCK_V=64, BLOCK_H=64, device=name)
            loss, dx = np.full(N, np.nan, np.float32), np.full((N, H), np.nan, np.float32)
            dw = np.zeros((V, H), np.float32)
            mod.fused_linear_ce[(tile.cdiv(N, 16),)](x, w, y, loss, dx, dw, N, V, H)
            check(self, name + " loss", loss, (lse - z[np.arange(N), y]) / N, 1e-6, 1e-5)
            # the gradient goes through f16 on its way into the dots (Triton's g.to(x.dtype))
            check(self, name + " dX", dx, g @ wd, 2e-5, 2e-3)
            check(self, name + " dW", dw, g.T @ xd, 2e-5, 2e-3)

    def test_rope(self):
        T, NH, HD, SL = 7, 5, 64, 4
        inv = 1.0 / 10000 ** (np.arange(0, HD, 2) / HD)
        ang = np.arange(SL)[:, None] * inv[None, :]
        cos, sin = np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)
        cd, sd = cos.astype(np.float64)[np.arange(T) % SL][:, None, :], sin.astype(np.float64)[np.arange(T) % SL][:, None, :]
        for name in DEVICES:
            mod = tile.compile(ROPE, n_qh=NH, hd=HD, pad_n_qh=8, pad_hd=64, device=name)
            q = rng.standard_normal((T, NH, HD)).astype(np.float16)
            qd = q.astype(np.float64)
            x1, x2 = qd[..., :HD // 2], qd[..., HD // 2:]
            out = q.copy()
            mod.rope_neox[(T,)](out, NH * HD, cos, sin, HD // 2, SL)
            check(self, name + " neox", out, np.concatenate([x1 * cd - x2 * sd, x2 * cd + x1 * sd], -1), 1e-3, 1e-3)
            x1, x2 = qd[..., 0::2], qd[..., 1::2]
            want = np.stack([x1 * cd - x2 * sd, x2 * cd + x1 * sd], -1).reshape(T, NH, HD)
            out = q.copy()
            mod.rope_gptj[(T,)](out, NH * HD, cos, sin, HD // 2, SL)
            check(self, name + " gptj", out, want, 1e-3, 1e-3)

    def test_dequant_and_divmod(self):
        nb, QB = 301, 64
        code = np.sort(rng.uniform(-1, 1, 16)).astype(np.float32)
        for name in DEVICES:
            mod = tile.compile(DEQUANT, QBLOCK=QB, BLOCK=128, device=name)
            packed = rng.integers(0, 256, nb).astype(np.uint8)
            absmax = rng.uniform(0.5, 2, tile.cdiv(2 * nb, QB)).astype(np.float32)
            out = np.full(2 * nb, np.nan, np.float16)
            mod.dequant_nf4[(tile.cdiv(nb, 128),)](packed, code, absmax, out, nb)
            codes = np.stack([packed >> 4, packed & 15], 1).ravel()
            check(self, name + " nf4", out, code[codes].astype(np.float64) * absmax[np.arange(2 * nb) // QB], 0, 1e-3)
            n = 1000
            v = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
            for d in (7, 641, 1000003):
                # magic = ceil(2^(32+l) / d) with 2^l < d <= 2^(l+1) fits 32 bits, and its error e < d keeps
                # umulhi(n, magic) >> l exact for n < 2^31 (n * e < 2^(32+l))
                l = int(d - 1).bit_length() - 1
                magic = ((1 << (32 + l)) + d - 1) // d
                vs = v >> np.uint32(1)
                q, r = np.full(n, 7, np.uint32), np.full(n, 7, np.uint32)
                mod.fast_divmod[(tile.cdiv(n, 128),)](vs, q, r, n, d, magic, l)
                np.testing.assert_array_equal(q, vs // np.uint32(d))
                np.testing.assert_array_equal(r, vs % np.uint32(d))

    def test_awq_gemm(self):
        M, N, K, G = 20, 128, 96, 32
        order = [0, 2, 4, 6, 1, 3, 5, 7]

        def pack(t):
            r = np.zeros((t.shape[0], t.shape[1] // 8), np.int64)
            for j in range(8):
                r |= t[:, np.arange(t.shape[1] // 8) * 8 + order[j]].astype(np.int64) << (4 * j)
            return r.astype(np.uint32).view(np.int32)
        for name in DEVICES:
            mod = tile.compile(AWQ_GEMM, BLOCK_SIZE_M=16, BLOCK_SIZE_N=64, BLOCK_SIZE_K=32, device=name)
            a = (rng.standard_normal((M, K)) * 0.5).astype(np.float16)
            q, z = rng.integers(0, 16, (K, N)), rng.integers(0, 16, (K // G, N))
            s = (rng.random((K // G, N)) * 0.1).astype(np.float16)
            c = np.full((M, N), np.nan, np.float32)
            mod.awq_gemm_kernel[(tile.cdiv(M, 16), N // 64)](a, pack(q), c, pack(z), s, M, N, K, G)
            w = ((q - np.repeat(z, G, 0)) * np.repeat(s.astype(np.float64), G, 0)).astype(np.float16)  # f16, as the kernel's
            check(self, name + " awq", c, a.astype(np.float64) @ w.astype(np.float64), 1e-5, 1e-5)

    def test_sampling(self):
        from test_triton_tutorials import philox_word0
        R, V = 5, 500
        for name in DEVICES[:1]:  # the sort compiles slowly: one target
            mod = tile.compile(SAMPLING, BV=512, device=name)
            probs = rng.random((R, V)) ** 8
            probs[2, :10] = probs[2, 10]  # equal probabilities: the lower token first
            probs = (probs / probs.sum(1, keepdims=True)).astype(np.float32)
            keep = np.full((R, V), 7, np.int8)
            mod.top_p_mask[(R,)](probs, keep, V, 0.9)
            order = np.argsort(-probs, 1, kind="stable")
            sp = np.take_along_axis(probs, order, 1).astype(np.float64)
            want = np.zeros((R, V), np.int8)
            np.put_along_axis(want, order, ((np.cumsum(sp, 1) - sp) < 0.9).astype(np.int8), 1)
            # the kernel sums in f32: a token at the boundary may differ, none elsewhere
            np.testing.assert_array_less(np.abs(keep.astype(int) - want).sum(1), 2)
            logits = (rng.standard_normal((R, V)) * 3).astype(np.float32)
            seed, T = int(rng.integers(0, 2**31)), 0.7
            out = np.full(R, -1, np.int32)
            mod.gumbel_sample[(R,)](logits, out, V, seed, T)
            w = philox_word0(seed, np.arange(R * V)).view(np.int32).astype(np.int64)
            u = (np.where(w < 0, -w - 1, w) * 4.6566127342e-10).reshape(R, V)
            score = logits / T - np.log(-np.log(u + 1e-10) + 1e-10)
            got = score[np.arange(R), out]
            self.assertTrue((got >= score.max(1) - 1e-3).all(), "%s: drawn %s, best %s" % (name, got, score.max(1)))

    def test_ssd_chunk(self):
        L, P, N, CH, A = 75, 32, 16, 32, -1.5
        nc = tile.cdiv(L, CH)
        for name in DEVICES:
            mod = tile.compile(SSD_CHUNK, CHUNK=CH, P=P, N=N, device=name)
            x, B, C = (rng.standard_normal((L, d)).astype(np.float32) for d in (P, N, N))
            dt = (rng.random(L) * 0.1).astype(np.float32)
            y, st = np.full((L, P), np.nan, np.float32), np.full((nc, N, P), np.nan, np.float32)
            mod.ssd_chunk[(nc,)](x, dt, B, C, y, st, A, L)
            y_ref, st_ref = np.zeros((L, P)), np.zeros((nc, N, P))
            for c in range(nc):
                s = slice(c * CH, min(L, (c + 1) * CH))
                xd, dd, Bd, Cd = (t[s].astype(np.float64) for t in (x, dt, B, C))
                cs = np.cumsum(dd * A)  # the padded steps of the last chunk have dt 0: its last sum is the same
                seg = np.where(np.tril(np.ones((len(dd),) * 2, bool)), np.exp(cs[:, None] - cs[None, :]), 0)
                y_ref[s] = ((Cd @ Bd.T) * seg * dd[None, :]) @ xd
                st_ref[c] = Bd.T @ (xd * (np.exp(cs[-1] - cs) * dd)[:, None])
            check(self, name + " y", y, y_ref, 1e-5, 1e-5)
            check(self, name + " state", st, st_ref, 1e-5, 1e-5)

    def test_paged_decode(self):
        B, H, D, PAGE, NS, max_blocks, n_pages = 3, 2, 64, 16, 4, 8, 30
        seq = np.array([37, 100, 5], np.int32)  # the last one leaves splits empty
        for name in DEVICES:
            mod = tile.compile(PAGED_DECODE, H=H, D=D, PAGE=PAGE, NUM_SPLITS=NS, BLOCK_N=32, device=name)
            table = rng.permutation(n_pages)[: B * max_blocks].reshape(B, max_blocks).astype(np.int32)
            kc, vc = (rng.standard_normal((n_pages * PAGE, H, D)).astype(np.float16) for _ in range(2))
            q = rng.standard_normal((B, H, D)).astype(np.float16)
            mid_o, mid_lse = np.full((B, H, NS, D), np.nan, np.float32), np.full((B, H, NS), np.nan, np.float32)
            mod.decode_stage1[(B, H, NS)](q, kc, vc, table, seq, mid_o, mid_lse, 0.125, max_blocks)
            out = np.full((B, H, D), np.nan, np.float16)
            mod.decode_stage2[(B * H,)](mid_o, mid_lse, out)
            ref = np.zeros((B, H, D))
            for b in range(B):
                slots = table[b, np.arange(seq[b]) // PAGE] * PAGE + np.arange(seq[b]) % PAGE
                for h in range(H):
                    s = kc[slots, h].astype(np.float64) @ q[b, h].astype(np.float64) * 0.125
                    p = np.exp(s - s.max())
                    ref[b, h] = p @ vc[slots, h].astype(np.float64) / p.sum()
            check(self, name + " decode", out, ref, 1e-3, 2e-3)  # f16 output

    def test_grouped_topk_router(self):
        T, E, G, TG, K, scale = 37, 64, 8, 4, 8, 2.5
        for name in DEVICES[1:]:  # the sorts compile slowly: one target (the other's sorts run in test_argmax_topk)
            mod = tile.compile(GROUPED_TOPK, E=E, N_GROUPS=G, TOPK_GROUP=TG, TOP_K=K, BLOCK_T=16, device=name)
            logits = rng.standard_normal((T, E)).astype(np.float32)
            bias = (rng.standard_normal(E) * 0.1).astype(np.float32)
            w, ids = np.full((T, K), np.nan, np.float32), np.full((T, K), -1, np.int32)
            mod.grouped_topk[(tile.cdiv(T, 16),)](logits, bias, w, ids, T, scale)
            s = 1 / (1 + np.exp(-logits.astype(np.float64)))
            choice = s + bias
            group_scores = np.sort(choice.reshape(T, G, E // G), -1)[:, :, -2:].sum(-1)
            keep = np.zeros((T, G), bool)
            np.put_along_axis(keep, np.argsort(-group_scores, 1, kind="stable")[:, :TG], True, 1)
            want = np.argsort(-np.where(np.repeat(keep, E // G, 1), choice, -np.inf), 1, kind="stable")[:, :K]
            np.testing.assert_array_equal(ids, want, name)
            ws = np.take_along_axis(s, want, 1)
            check(self, name + " weights", w, ws / ws.sum(1, keepdims=True) * scale, 1e-6, 1e-5)

    def test_kv_layout(self):
        T, H, D, BT = 21, 4, 32, 8
        for name in DEVICES:
            mod = tile.compile(KV_LAYOUT, H=H, D=D, BT=BT, device=name)
            k = rng.standard_normal((T, H, D)).astype(np.float16)
            ang = rng.random((T, D // 2)) * 6
            cos, sin = np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)
            cache = np.full((H, T, D), np.nan, np.float16)
            mod.kv_to_head_major[(tile.cdiv(T, BT),)](k, cache, cos, sin, T, T * D)
            z = k.astype(np.float64).reshape(T, H, D // 2, 2)
            r = (z[..., 0] + 1j * z[..., 1]) * (cos.astype(np.float64) + 1j * sin)[:, None, :]
            check(self, name + " cache", cache, np.stack([r.real, r.imag], -1).reshape(T, H, D).transpose(1, 0, 2), 1e-3, 1e-3)


if __name__ == "__main__":
    unittest.main()
