"""Triton's tutorials 04, 05, 06 (backward), 08 and 09 written as a Triton user ports them (the
tutorials' kernels and launches, in this language's spelling), run on the emulator against float64
NumPy references, with odd sizes (no multiple of the blocks where the tutorial masks) and poisoned outputs.

What the ports needed: 05, a clear TypeError for Triton's launch keywords of constexprs, and
triton.next_power_of_2 on the host; 09, the SM count for a persistent grid (Device.num_sms) and
num_sms() in tile.compile's own check agreeing with it; 08, tl.pointer_type (pointer_type(f16)).
04 checks the seeded dropout bit for bit against a NumPy Philox and its kept fraction against the
binomial bound; 06's backward found nothing and stays as a check of its masks and loops."""
import os
import unittest

import numpy as np

import tile

rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))
DEVICES = ("emu", "emu:sm_90a")

LAYER_NORM_BWD = r"""
// tutorial 05: dx per row; the row's dw/db partial sums added to one of GROUP_SIZE_M buffers under
// a spin lock (Lock: GROUP_SIZE_M locks, then as many counts); a second kernel sums the buffers.
@num_warps(4)
kernel _layer_norm_bwd_dx_fused(DX: *f16, DY: *f16, DW: *f16, DB: *f16, X: *f16, W: *f16,
        Mean: *f32, Rstd: *f32, Lock: *i32, stride: i32, N: i32,
        const GROUP_SIZE_M: i32, const BLOCK_SIZE_N: i32) {
    let row = program_id(0);
    let cols = arange(0, BLOCK_SIZE_N);
    let mask = cols < N;
    X += row * stride;
    DY += row * stride;
    DX += row * stride;
    let lock_id = row % GROUP_SIZE_M;
    Lock += lock_id;
    let Count = Lock + GROUP_SIZE_M;
    DW = DW + lock_id * N + cols;
    DB = DB + lock_id * N + cols;
    let x = load(X + cols, mask=mask, other=0) as f32;
    let dy = load(DY + cols, mask=mask, other=0) as f32;
    let w = load(W + cols, mask=mask) as f32;
    let mean = load(Mean + row);
    let rstd = load(Rstd + row);
    let xhat = (x - mean) * rstd;
    let wdy = w * dy;
    xhat = where(mask, xhat, 0.);
    wdy = where(mask, wdy, 0.);
    let c1 = sum(xhat * wdy, axis=0) / N;
    let c2 = sum(wdy, axis=0) / N;
    let dx = (wdy - (xhat * c1 + c2)) * rstd;
    store(DX + cols, dx, mask=mask);
    let partial_dw = (dy * xhat) as dtype_of(w);
    let partial_db = dy as dtype_of(w);
    while atomic_cas(Lock, 0, 1) == 1 {
        pass;
    }
    let count = load(Count);
    if count == 0 {
        atomic_xchg(Count, 1);
    } else {
        partial_dw += load(DW, mask=mask);
        partial_db += load(DB, mask=mask);
    }
    store(DW, partial_dw, mask=mask);
    store(DB, partial_db, mask=mask);
    debug_barrier();
    atomic_xchg(Lock, 0);
}

kernel _layer_norm_bwd_dwdb(DW: *f16, DB: *f16, FINAL_DW: *f16, FINAL_DB: *f16, M: i32, N: i32,
        const BLOCK_SIZE_M: i32, const BLOCK_SIZE_N: i32) {
    let pid = program_id(0);
    let cols = pid * BLOCK_SIZE_N + arange(0, BLOCK_SIZE_N);
    let dw = zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=f32);
    let db = zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=f32);
    for i in range(0, M, BLOCK_SIZE_M) {
        let rows = i + arange(0, BLOCK_SIZE_M);
        let mask = (rows[:, None] < M) & (cols[None, :] < N);
        let offs = rows[:, None] * N + cols[None, :];
        dw += load(DW + offs, mask=mask, other=0.);
        db += load(DB + offs, mask=mask, other=0.);
    }
    store(FINAL_DW + cols, sum(dw, axis=0), mask=cols < N);
    store(FINAL_DB + cols, sum(db, axis=0), mask=cols < N);
}
"""

PERSISTENT_MATMUL = r"""
// tutorial 09: NUM_SMS programs, each looping over output tiles with a step of the program count,
// in grouped order; the tile's index for the store is counted separately, as the tutorial does.
fn _compute_pid(tile_id, num_pid_in_group, num_pid_m, const GROUP_SIZE_M, const NUM_SMS) {
    let group_id = tile_id / num_pid_in_group;
    let first_pid_m = group_id * GROUP_SIZE_M;
    let group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M);
    let pid_m = first_pid_m + (tile_id % group_size_m);
    let pid_n = (tile_id % num_pid_in_group) / group_size_m;
    return pid_m, pid_n;
}

kernel matmul_kernel_persistent(a_ptr: *f16, b_ptr: *f16, c_ptr: *f16, M: i32, N: i32, K: i32,
        stride_am: i32, stride_ak: i32, stride_bk: i32, stride_bn: i32, stride_cm: i32, stride_cn: i32,
        const BLOCK_SIZE_M: i32, const BLOCK_SIZE_N: i32, const BLOCK_SIZE_K: i32,
        const GROUP_SIZE_M: i32, const NUM_SMS: i32) {
    static_assert(num_sms() == NUM_SMS, "the device's SM count, as Device.num_sms gives it");
    let start_pid = program_id(axis=0);
    let num_pid_m = cdiv(M, BLOCK_SIZE_M);
    let num_pid_n = cdiv(N, BLOCK_SIZE_N);
    let k_tiles = cdiv(K, BLOCK_SIZE_K);
    let num_tiles = num_pid_m * num_pid_n;
    let tile_id_c = start_pid - NUM_SMS;
    let offs_k_for_mask = arange(0, BLOCK_SIZE_K);
    let num_pid_in_group = GROUP_SIZE_M * num_pid_n;
    for tile_id in range(start_pid, num_tiles, NUM_SMS, flatten=true) {
        let pid_m, pid_n = _compute_pid(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M, NUM_SMS);
        let offs_am = pid_m * BLOCK_SIZE_M + arange(0, BLOCK_SIZE_M);
        let offs_bn = pid_n * BLOCK_SIZE_N + arange(0, BLOCK_SIZE_N);
        offs_am = where(offs_am < M, offs_am, 0);
        offs_bn = where(offs_bn < N, offs_bn, 0);
        let accumulator = zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=f32);
        for ki in range(k_tiles) {
            let offs_k = ki * BLOCK_SIZE_K + arange(0, BLOCK_SIZE_K);
            let a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak);
            let b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn);
            let a = load(a_ptrs, mask=offs_k_for_mask[None, :] < K - ki * BLOCK_SIZE_K, other=0.0);
            let b = load(b_ptrs, mask=offs_k_for_mask[:, None] < K - ki * BLOCK_SIZE_K, other=0.0);
            accumulator = dot(a, b, accumulator);
        }
        tile_id_c += NUM_SMS;
        pid_m, pid_n = _compute_pid(tile_id_c, num_pid_in_group, num_pid_m, GROUP_SIZE_M, NUM_SMS);
        let offs_cm = pid_m * BLOCK_SIZE_M + arange(0, BLOCK_SIZE_M);
        let offs_cn = pid_n * BLOCK_SIZE_N + arange(0, BLOCK_SIZE_N);
        let c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N);
        store(c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :], accumulator as f16, mask=c_mask);
    }
}
"""

GROUPED_GEMM = r"""
// tutorial 08: NUM_SM programs walk the tiles of every problem in turn; each problem's operands
// come from tables of addresses (i64) cast to pointers, its sizes and leading dimensions from i32 tables.
kernel grouped_matmul_kernel(group_a_ptrs: *i64, group_b_ptrs: *i64, group_c_ptrs: *i64,
        group_gemm_sizes: *i32, g_lds: *i32, group_size: i32,
        const NUM_SM: i32, const BLOCK_SIZE_M: i32, const BLOCK_SIZE_N: i32, const BLOCK_SIZE_K: i32) {
    let tile_idx = program_id(0);
    let last_problem_end = 0;
    for g in range(group_size) {
        let gm = load(group_gemm_sizes + g * 3);
        let gn = load(group_gemm_sizes + g * 3 + 1);
        let gk = load(group_gemm_sizes + g * 3 + 2);
        let num_n_tiles = cdiv(gn, BLOCK_SIZE_N);
        let num_tiles = cdiv(gm, BLOCK_SIZE_M) * num_n_tiles;
        while (tile_idx >= last_problem_end && tile_idx < last_problem_end + num_tiles) {
            let lda = load(g_lds + g * 3);
            let ldb = load(g_lds + g * 3 + 1);
            let ldc = load(g_lds + g * 3 + 2);
            let a_ptr = load(group_a_ptrs + g) as pointer_type(f16);
            let b_ptr = load(group_b_ptrs + g) as pointer_type(f16);
            let c_ptr = load(group_c_ptrs + g) as pointer_type(f16);
            let tile_idx_in_gemm = tile_idx - last_problem_end;
            let offs_am = (tile_idx_in_gemm / num_n_tiles) * BLOCK_SIZE_M + arange(0, BLOCK_SIZE_M);
            let offs_bn = (tile_idx_in_gemm % num_n_tiles) * BLOCK_SIZE_N + arange(0, BLOCK_SIZE_N);
            let offs_k = arange(0, BLOCK_SIZE_K);
            let a_ptrs = a_ptr + offs_am[:, None] * lda + offs_k[None, :];
            let b_ptrs = b_ptr + offs_k[:, None] * ldb + offs_bn[None, :];
            let accumulator = zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=f32);
            for kk in range(0, cdiv(gk, BLOCK_SIZE_K)) {
                let kmask = offs_k < gk - kk * BLOCK_SIZE_K;
                let a = load(a_ptrs, mask=(offs_am[:, None] < gm) & kmask[None, :], other=0.0);
                let b = load(b_ptrs, mask=kmask[:, None] & (offs_bn[None, :] < gn), other=0.0);
                accumulator += dot(a, b);
                a_ptrs += BLOCK_SIZE_K;
                b_ptrs += BLOCK_SIZE_K * ldb;
            }
            store(c_ptr + ldc * offs_am[:, None] + offs_bn[None, :], accumulator as f16,
                  mask=(offs_am[:, None] < gm) & (offs_bn[None, :] < gn));
            tile_idx += NUM_SM;
        }
        last_problem_end = last_problem_end + num_tiles;
    }
}
"""

DROPOUT = r"""
// tutorial 04: the mask drawn from (seed, offset) alone, so nothing is stored for the backward pass.
kernel _seeded_dropout(x_ptr: *f32, output_ptr: *f32, n_elements: i32, p: f32, seed: i32, const BLOCK_SIZE: i32) {
    let pid = program_id(axis=0);
    let offsets = pid * BLOCK_SIZE + arange(0, BLOCK_SIZE);
    let mask = offsets < n_elements;
    let x = load(x_ptr + offsets, mask=mask);
    let random = rand(seed, offsets);
    let x_keep = random > p;
    store(output_ptr + offsets, where(x_keep, x / (1 - p), 0.0), mask=mask);
}
kernel _randint(out: *u32, n: i32, seed: i32, const BLOCK_SIZE: i32) {
    let offsets = program_id(0) * BLOCK_SIZE + arange(0, BLOCK_SIZE);
    store(out + offsets, randint(seed, offsets), mask=offsets < n);
}
"""

ATTENTION_BWD = r"""
// tutorial 06's backward: Delta = rowsum(o * do); per key block dk, dv over the query blocks (the diagonal ones
// masked, in slices of BLOCK_M1 / BLK_SLICE_FACTOR), then per query block dq over the key blocks, the same way.
kernel _attn_bwd_preprocess(O: *f16, DO: *f16, Delta: *f32, Z: i32, H: i32, N_CTX: i32,
        const BLOCK_M: i32, const HEAD_DIM: i32) {
    let off_m = program_id(0) * BLOCK_M + arange(0, BLOCK_M);
    let off_hz = program_id(1);
    let off_n = arange(0, HEAD_DIM);
    let o = load(O + off_hz * HEAD_DIM * N_CTX + off_m[:, None] * HEAD_DIM + off_n[None, :]);
    let do = load(DO + off_hz * HEAD_DIM * N_CTX + off_m[:, None] * HEAD_DIM + off_n[None, :]) as f32;
    let delta = sum(o * do, axis=1);
    store(Delta + off_hz * N_CTX + off_m, delta);
}

fn _attn_bwd_dkdv(dk, dv, Q, k, v, sm_scale, DO, M, D, stride_tok, stride_d, H, N_CTX,
        const BLOCK_M1, const BLOCK_N1, const HEAD_DIM, start_n, start_m, num_steps, const MASK) {
    let offs_m = start_m + arange(0, BLOCK_M1);
    let offs_n = start_n + arange(0, BLOCK_N1);
    let offs_k = arange(0, HEAD_DIM);
    let qT_ptrs = Q + offs_m[None, :] * stride_tok + offs_k[:, None] * stride_d;
    let do_ptrs = DO + offs_m[:, None] * stride_tok + offs_k[None, :] * stride_d;
    static_assert(BLOCK_N1 % BLOCK_M1 == 0);
    let curr_m = start_m;
    let step_m = BLOCK_M1;
    for blk_idx in range(num_steps) {
        let qT = load(qT_ptrs);
        offs_m = curr_m + arange(0, BLOCK_M1);
        let m = load(M + offs_m);
        let qkT = dot(k, qT);
        let pT = exp2(qkT - m[None, :]);
        if MASK {
            let mask = (offs_m[None, :] >= offs_n[:, None]);
            pT = where(mask, pT, 0.0);
        }
        let do = load(do_ptrs);
        let ppT = pT;
        ppT = ppT as f16;
        dv += dot(ppT, do);
        let Di = load(D + offs_m);
        let dpT = dot(v, trans(do)) as f32;
        let dsT = pT * (dpT - Di[None, :]);
        dsT = dsT as f16;
        dk += dot(dsT, trans(qT));
        curr_m += step_m;
        qT_ptrs += step_m * stride_tok;
        do_ptrs += step_m * stride_tok;
    }
    return dk, dv;
}

fn _attn_bwd_dq(dq, q, K, V, do, m, D, stride_tok, stride_d, H, N_CTX,
        const BLOCK_M2, const BLOCK_N2, const HEAD_DIM, start_m, start_n, num_steps, const MASK) {
    let offs_m = start_m + arange(0, BLOCK_M2);
    let offs_n = start_n + arange(0, BLOCK_N2);
    let offs_k = arange(0, HEAD_DIM);
    let kT_ptrs = K + offs_n[None, :] * stride_tok + offs_k[:, None] * stride_d;
    let vT_ptrs = V + offs_n[None, :] * stride_tok + offs_k[:, None] * stride_d;
    let Di = load(D + offs_m);
    static_assert(BLOCK_M2 % BLOCK_N2 == 0);
    let curr_n = start_n;
    let step_n = BLOCK_N2;
    for blk_idx in range(num_steps) {
        let kT = load(kT_ptrs);
        let vT = load(vT_ptrs);
        let qk = dot(q, kT);
        let p = exp2(qk - m);
        if MASK {
            offs_n = curr_n + arange(0, BLOCK_N2);
            let mask = (offs_m[:, None] >= offs_n[None, :]);
            p = where(mask, p, 0.0);
        }
        let dp = dot(do, vT) as f32;
        let ds = p * (dp - Di[:, None]);
        ds = ds as f16;
        dq += dot(ds, trans(kT));
        curr_n += step_n;
        kT_ptrs += step_n * stride_tok;
        vT_ptrs += step_n * stride_tok;
    }
    return dq;
}

kernel _attn_bwd(Q: *f16, K: *f16, V: *f16, sm_scale: f32, DO: *f16, DQ: *f16, DK: *f16, DV: *f16,
        M: *f32, D: *f32, stride_z: i32, stride_h: i32, stride_tok: i32, stride_d: i32, H: i32, N_CTX: i32,
        const BLOCK_M1: i32, const BLOCK_N1: i32, const BLOCK_M2: i32, const BLOCK_N2: i32,
        const BLK_SLICE_FACTOR: i32, const HEAD_DIM: i32, const CAUSAL: i1) {
    let LN2: constexpr = 0.6931471824645996;
    let bhid = program_id(2);
    let off_chz = (bhid * N_CTX) as i64;
    let adj = (stride_h * (bhid % H) + stride_z * (bhid / H)) as i64;
    let pid = program_id(0);
    Q += adj;
    K += adj;
    V += adj;
    DO += adj;
    DQ += adj;
    DK += adj;
    DV += adj;
    M += off_chz;
    D += off_chz;
    let offs_k = arange(0, HEAD_DIM);
    let start_n = pid * BLOCK_N1;
    let start_m = 0;
    let MASK_BLOCK_M1: constexpr = BLOCK_M1 / BLK_SLICE_FACTOR;
    let offs_n = start_n + arange(0, BLOCK_N1);
    let dv = zeros([BLOCK_N1, HEAD_DIM], dtype=f32);
    let dk = zeros([BLOCK_N1, HEAD_DIM], dtype=f32);
    let k = load(K + offs_n[:, None] * stride_tok + offs_k[None, :] * stride_d);
    let v = load(V + offs_n[:, None] * stride_tok + offs_k[None, :] * stride_d);
    let num_steps = 0;
    if CAUSAL {
        start_m = start_n;
        num_steps = BLOCK_N1 / MASK_BLOCK_M1;
        dk, dv = _attn_bwd_dkdv(dk, dv, Q, k, v, sm_scale, DO, M, D, stride_tok, stride_d, H, N_CTX,
                                MASK_BLOCK_M1, BLOCK_N1, HEAD_DIM, start_n, start_m, num_steps, MASK=true);
        start_m += num_steps * MASK_BLOCK_M1;
    }
    num_steps = (N_CTX - start_m) / BLOCK_M1;
    dk, dv = _attn_bwd_dkdv(dk, dv, Q, k, v, sm_scale, DO, M, D, stride_tok, stride_d, H, N_CTX,
                            BLOCK_M1, BLOCK_N1, HEAD_DIM, start_n, start_m, num_steps, MASK=false);
    let dv_ptrs = DV + offs_n[:, None] * stride_tok + offs_k[None, :] * stride_d;
    store(dv_ptrs, dv);
    dk *= sm_scale;
    let dk_ptrs = DK + offs_n[:, None] * stride_tok + offs_k[None, :] * stride_d;
    store(dk_ptrs, dk);

    start_m = pid * BLOCK_M2;
    let end_n = start_m + BLOCK_M2;
    let MASK_BLOCK_N2: constexpr = BLOCK_N2 / BLK_SLICE_FACTOR;
    let offs_m = start_m + arange(0, BLOCK_M2);
    let q = load(Q + offs_m[:, None] * stride_tok + offs_k[None, :] * stride_d);
    let dq = zeros([BLOCK_M2, HEAD_DIM], dtype=f32);
    let do = load(DO + offs_m[:, None] * stride_tok + offs_k[None, :] * stride_d);
    let m = load(M + offs_m);
    m = m[:, None];
    if CAUSAL {
        num_steps = BLOCK_M2 / MASK_BLOCK_N2;
        dq = _attn_bwd_dq(dq, q, K, V, do, m, D, stride_tok, stride_d, H, N_CTX,
                          BLOCK_M2, MASK_BLOCK_N2, HEAD_DIM, start_m, end_n - num_steps * MASK_BLOCK_N2, num_steps, MASK=true);
        end_n -= num_steps * MASK_BLOCK_N2;
    } else {
        end_n = N_CTX;
    }
    num_steps = end_n / BLOCK_N2;
    let start_n2 = end_n - num_steps * BLOCK_N2;
    dq = _attn_bwd_dq(dq, q, K, V, do, m, D, stride_tok, stride_d, H, N_CTX,
                      BLOCK_M2, BLOCK_N2, HEAD_DIM, start_m, start_n2, num_steps, MASK=false);
    let dq_ptrs = DQ + offs_m[:, None] * stride_tok + offs_k[None, :] * stride_d;
    dq *= LN2;
    store(dq_ptrs, dq);
}
"""


def philox_word0(seed, offsets, rounds=10):
    """Philox 4x32 (Salmon et al.) of the counter (offset, 0, 0, 0) and key (seed's two words): the first word."""
    m32 = np.uint64(0xFFFFFFFF)
    c0, c1 = offsets.astype(np.uint64) & m32, np.zeros(offsets.shape, np.uint64)
    c2, c3 = np.zeros_like(c0), np.zeros_like(c0)
    k0, k1 = np.uint64(seed & 0xFFFFFFFF), np.uint64((seed >> 32) & 0xFFFFFFFF)
    for _ in range(rounds):
        p0, p1 = np.uint64(0xD2511F53) * c0, np.uint64(0xCD9E8D57) * c2
        c0, c1, c2, c3 = (p1 >> np.uint64(32)) ^ c1 ^ k0, p1 & m32, (p0 >> np.uint64(32)) ^ c3 ^ k1, p0 & m32
        k0, k1 = (k0 + np.uint64(0x9E3779B9)) & m32, (k1 + np.uint64(0xBB67AE85)) & m32
    return c0.astype(np.uint32)


def check(test, name, got, want, atol, rtol):
    got = np.asarray(got, np.float64)
    test.assertFalse(np.isnan(got).any(), "%s: NaN left (an element never written)" % name)
    err, bound = np.abs(got - want), atol + rtol * np.abs(want)
    test.assertTrue((err <= bound).all(), "%s: max error %g (bound at it %g)" % (name, err.max(), bound.flat[np.argmax(err - bound)]))


class TritonTutorials(unittest.TestCase):
    def test_layer_norm_backward(self):
        M, N, GROUP = 37, 203, 8
        x = (rng.standard_normal((M, N)) * 1.5 + 0.3).astype(np.float16)
        w = (rng.random(N) + 0.5).astype(np.float16)
        dy = (0.1 * rng.standard_normal((M, N))).astype(np.float16)
        xd = x.astype(np.float64)
        mean = xd.mean(1).astype(np.float32)
        rstd = (1 / np.sqrt(((xd - xd.mean(1)[:, None]) ** 2).mean(1) + 1e-5)).astype(np.float32)
        xhat = (xd - mean[:, None]) * rstd[:, None].astype(np.float64)
        wdy = w.astype(np.float64) * dy
        dx_ref = (wdy - (xhat * (xhat * wdy).mean(1)[:, None] + wdy.mean(1)[:, None])) * rstd[:, None]
        for name in DEVICES:
            dev = tile.device(name)
            dx_mod = tile.compile(LAYER_NORM_BWD, kernel="_layer_norm_bwd_dx_fused", GROUP_SIZE_M=GROUP,
                                  BLOCK_SIZE_N=tile.next_power_of_2(N),
                                  device=dev)
            dwdb_mod = tile.compile(LAYER_NORM_BWD, kernel="_layer_norm_bwd_dwdb", BLOCK_SIZE_M=8, BLOCK_SIZE_N=32, device=dev)
            dx = np.full((M, N), np.nan, np.float16)
            _dw, _db = np.zeros((GROUP, N), np.float16), np.zeros((GROUP, N), np.float16)
            locks = np.zeros(2 * GROUP, np.int32)
            dx_mod._layer_norm_bwd_dx_fused[(M,)](dx, dy, _dw, _db, x, w, mean, rstd, locks, N, N)
            dw, db = np.full(N, np.nan, np.float16), np.full(N, np.nan, np.float16)
            grid = lambda meta: (tile.cdiv(N, meta["BLOCK_SIZE_N"]),)
            dwdb_mod._layer_norm_bwd_dwdb[grid](_dw, _db, dw, db, GROUP, N)
            check(self, name + " dx", dx, dx_ref, 2e-3, 4e-3)
            # the partial sums are f16 (the tutorial's buffers take x's type): a row's share rounds each time
            check(self, name + " dw", dw, (dy * xhat).sum(0), 2e-2, 1e-2)
            check(self, name + " db", db, dy.astype(np.float64).sum(0), 2e-2, 1e-2)
            np.testing.assert_array_equal(locks, [0] * GROUP + [1] * GROUP)  # every lock released, every group counted
            # Triton passes constexprs at the launch; here they are compiled in, and the error says so
            with self.assertRaisesRegex(TypeError, r"'BLOCK_SIZE_M' is not a launch argument: it is fixed when the kernel is "
                                                   r"compiled \(BLOCK_SIZE_M=8 here\); give it to tile.compile\(\.\.\., BLOCK_SIZE_M=\.\.\.\)"):
                dwdb_mod._layer_norm_bwd_dwdb[grid](_dw, _db, dw, db, GROUP, N, BLOCK_SIZE_M=32, BLOCK_SIZE_N=128)
            with self.assertRaisesRegex(TypeError, r"'num_warps' is not a launch argument"):
                dwdb_mod._layer_norm_bwd_dwdb[grid](_dw, _db, dw, db, GROUP, N, num_warps=8)

    def test_next_power_of_2(self):
        def triton_bit_trick(n):  # triton.next_power_of_2's own computation
            n -= 1
            for shift in (1, 2, 4, 8, 16, 32):
                n |= n >> shift
            return n + 1
        for n in list(range(-3, 70)) + [203, 2**31 - 1, 2**31, 2**40 + 1, np.int32(1000)]:
            self.assertEqual(tile.next_power_of_2(n), triton_bit_trick(int(n)), n)
        with self.assertRaises(TypeError):
            tile.next_power_of_2(3.5)

    def test_persistent_matmul(self):
        M, N, K = 77, 53, 45
        a = rng.standard_normal((M, K)).astype(np.float16)
        b = rng.standard_normal((K, N)).astype(np.float16)
        ref = a.astype(np.float64) @ b.astype(np.float64)
        for name in ("emu:sms=5", "emu:sm_90a:sms=3"):
            dev = tile.device(name)
            self.assertEqual(dev.num_sms, int(name.rsplit("=", 1)[1]))
            mod = tile.compile(PERSISTENT_MATMUL, BLOCK_SIZE_M=32, BLOCK_SIZE_N=16, BLOCK_SIZE_K=16, GROUP_SIZE_M=2,
                               NUM_SMS=dev.num_sms, device=dev)
            grid = lambda meta: (min(meta["NUM_SMS"], tile.cdiv(M, meta["BLOCK_SIZE_M"]) * tile.cdiv(N, meta["BLOCK_SIZE_N"])),)
            for bb in (b, np.ascontiguousarray(b.T).T):  # B row-major, then column-major
                c = np.full((M, N), np.nan, np.float16)
                mod.matmul_kernel_persistent[grid](a, bb, c, M, N, K, *(s // 2 for s in a.strides + bb.strides + c.strides))
                check(self, name, c, ref, 1e-2, 2e-3)
        self.assertEqual(tile.device("emu").num_sms, 132)  # the emulator's default

    def test_grouped_gemm(self):
        shapes = [(33, 17, 40), (16, 48, 16), (50, 31, 23)]
        for name in DEVICES:
            dev = tile.device(name)
            A = [rng.standard_normal((m, k)).astype(np.float16) for m, n, k in shapes]
            B = [rng.standard_normal((k, n)).astype(np.float16) for m, n, k in shapes]
            C = [np.full((m, n), np.nan, np.float16) for m, n, k in shapes]
            ptrs = [np.array([tile.data_ptr(t, device=dev) for t in ts], np.int64) for ts in (A, B, C)]
            sizes = np.array(shapes, np.int32).ravel()
            lds = np.array([[a.shape[1], b.shape[1], c.shape[1]] for a, b, c in zip(A, B, C)], np.int32).ravel()
            mod = tile.compile(GROUPED_GEMM, NUM_SM=4, BLOCK_SIZE_M=32, BLOCK_SIZE_N=16, BLOCK_SIZE_K=16, device=dev)
            mod.grouped_matmul_kernel[lambda meta: (meta["NUM_SM"],)](*ptrs, sizes, lds, len(shapes))
            for a, b, c in zip(A, B, C):
                check(self, "%s %s" % (name, c.shape), c, a.astype(np.float64) @ b.astype(np.float64), 1e-2, 2e-3)

    def test_attention_backward(self):
        Z, H, N_CTX, HD, sm_scale = 1, 3, 128, 16, 0.5
        RCP_LN2 = 1.4426950408889634
        q, k, v, do = (rng.standard_normal((Z, H, N_CTX, HD)).astype(np.float16) * np.float16(0.5) for _ in range(4))
        qd, kd, vd, dod = (t.astype(np.float64) for t in (q, k, v, do))
        for name, causal in (("emu", True), ("emu:sm_90a", False)):
            s = qd @ kd.transpose(0, 1, 3, 2) * sm_scale
            if causal:
                s = np.where(np.tril(np.ones((N_CTX, N_CTX), bool)), s, -np.inf)
            mx = s.max(-1, keepdims=True)
            p = np.exp(s - mx)
            l = p.sum(-1, keepdims=True)
            p /= l
            o = (p @ vd).astype(np.float16)
            lse2 = ((mx + np.log(l)) * RCP_LN2)[..., 0].astype(np.float32)  # the forward's M: log2 of the row sums
            delta = (o.astype(np.float64) * dod).sum(-1)
            ds = p * (dod @ vd.transpose(0, 1, 3, 2) - delta[..., None])
            mod = tile.compile(ATTENTION_BWD, BLOCK_M=16, HEAD_DIM=HD, BLOCK_M1=32, BLOCK_N1=64, BLOCK_M2=64, BLOCK_N2=32,
                               BLK_SLICE_FACTOR=2, CAUSAL=causal, device=name)
            Delta = np.full((Z, H, N_CTX), np.nan, np.float32)
            mod._attn_bwd_preprocess[(N_CTX // 16, Z * H)](o, do, Delta, Z, H, N_CTX)
            check(self, name + " delta", Delta, delta, 1e-6, 1e-6)
            arg_k = (k.astype(np.float32) * np.float32(sm_scale * RCP_LN2)).astype(np.float16)  # the tutorial scales k first
            dq, dk, dv = (np.full_like(q, np.nan) for _ in range(3))
            mod._attn_bwd[(N_CTX // 64, 1, Z * H)](q, arg_k, v, sm_scale, do, dq, dk, dv, lse2, Delta,
                                                    *(st // 2 for st in q.strides), H, N_CTX)
            # f16 operands of each dot (p, ds and the scaled k rounded): a few f16 ulps of the largest gradient
            check(self, name + " dq", dq, ds @ kd * sm_scale, 2e-3, 4e-3)
            check(self, name + " dk", dk, ds.transpose(0, 1, 3, 2) @ qd * sm_scale, 2e-3, 4e-3)
            check(self, name + " dv", dv, p.transpose(0, 1, 3, 2) @ dod, 2e-3, 4e-3)

    def test_seeded_dropout(self):
        n, p, B = 30011, 0.3, 1024
        x = (rng.random(n) + 0.5).astype(np.float32)
        seed = int(rng.integers(0, 2**31))
        mod = tile.compile(DROPOUT, BLOCK_SIZE=B)
        words = np.zeros(n, np.uint32)
        mod._randint[(tile.cdiv(n, B),)](words, n, seed)
        np.testing.assert_array_equal(words, philox_word0(seed, np.arange(n)))
        outs = []
        for s in (seed, seed, seed + 1):
            out = np.full(n, np.nan, np.float32)
            mod._seeded_dropout[(tile.cdiv(n, B),)](x, out, n, p, s)
            outs.append(out)
        np.testing.assert_array_equal(outs[0], outs[1])  # the same seed and offsets draw the same mask
        # Triton's uint_to_uniform_float of those words decides which elements are kept
        u = words.view(np.int32).astype(np.int64)
        keep = (np.where(u < 0, -u - 1, u) * 4.6566127342e-10).astype(np.float32) > np.float32(p)
        np.testing.assert_array_equal(outs[0] != 0, keep)
        check(self, "kept", outs[0][keep], x[keep].astype(np.float64) / (1 - p), 0, 2e-7)
        # the kept count is Binomial(n, 1 - p): 6 standard deviations fail a correct kernel about once in 5e8 runs
        sd = np.sqrt(n * p * (1 - p))
        for out in (outs[0], outs[2]):
            self.assertLess(abs(int((out != 0).sum()) - n * (1 - p)), 6 * sd)
        # another seed draws another mask: agreement beyond chance (p^2 + (1-p)^2 of the elements) would be a bug
        agree = ((outs[0] != 0) == (outs[2] != 0)).mean()
        self.assertLess(abs(agree - (p * p + (1 - p) ** 2)), 6 * np.sqrt(0.25 / n))


if __name__ == "__main__":
    unittest.main()
