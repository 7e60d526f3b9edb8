"""Kernels that inference and training engines run, written as a Triton user writes them and ported line
by line to this language (one kernel source per port, each test naming what it checks).  Each runs on
the emulator (sm_80 and sm_90a) against float64 NumPy references at sizes that are no multiple of the
blocks, with the outputs poisoned first."""
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


if __name__ == "__main__":
    unittest.main()
