"""tutorials.py - Triton's tutorial-style kernels, their PTX run unmodified on tile's emulator from Python.

    PYTHON bench/triton_ref/tutorials.py [--arch 80,89,90] [--only NAME] [--keep DIR] [--racecheck]

PYTHON imports triton and the tile package (pip install ./python into the same venv, e.g.
/work/venv-triton).  Each kernel is compiled with triton.compile for capability 80, 89 and 90, its PTX
loaded with tile.load_ptx on emu:sm_80 / emu:sm_89 / emu:sm_90a and launched with NumPy arrays
(Triton's two trailing scratch pointers: a global scratch buffer when the kernel asks for one, else
None), then checked against float64 NumPy on fresh random inputs, outputs poisoned first, sizes
that are not multiples of the blocks:

  add            masked vector add
  softmax        row softmax (max, exp, sum), a row per program
  layernorm      forward (mean, variance, rstd), a loop over the row's blocks
  layernorm_bwd  backward dx with the partial dw/db accumulated under a spin lock (atomic_cas,
                 atomic_xchg) per group of rows, then their column sums
  dropout        tl.rand (Philox 4x32-10, checked bit for bit against a NumPy Philox)
  cumsum / sort / argmax / histogram   tl.cumsum (int32), tl.sort, tl.argmax, tl.atomic_add
  math           exp, log, sqrt, rsqrt, sin, cos, erf, tanh, pow (libdevice calls), sigmoid
  fp8            f32 -> float8e4nv -> f32 (software on sm_80, cvt.rn.satfinite on sm_90)
  dot            int8 x int8 -> int32 tl.dot; f32 tl.dot with input_precision="ieee"; e4m3 x e4m3 -> f32
                 (capability 89: mma.sync e4m3; 90: wgmma e4m3)

Prints one line per kernel and arch and exits 1 when one disagrees or cannot run, 3 when triton or
tile cannot be imported.  No GPU; not run in CI (Triton is an optional tool).  tutorials_more.py runs
28 more kernels (attention backward, grouped and stream-K GEMM, dot_scaled, scans, atomics, ...) on
this harness's helpers.  At this commit (Triton 3.9.0) every kernel here agrees on sm_80, sm_86, sm_89
and sm_90."""
import argparse
import os
import sys

os.environ.setdefault("TILE_DEVICE", "emu")
try:
    import numpy as np
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.language.extra.cuda import libdevice
    import tile
except Exception as e:  # noqa: BLE001 - any import failure means "not here"
    print("cannot import numpy, triton and tile with %s: %s" % (sys.executable, e), file=sys.stderr)
    sys.exit(3)

rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))


# ---- the kernels ----

@triton.jit
def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


@triton.jit
def softmax_kernel(out, inp, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(inp + row * in_stride + cols, mask=cols < n_cols, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out + row * out_stride + cols, num / tl.sum(num, axis=0), mask=cols < n_cols)


@triton.jit
def layernorm_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        acc += x * x
    rstd = 1 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        m = cols < N
        x = tl.load(X + cols, mask=m, other=0.).to(tl.float32)
        tl.store(Y + cols, (x - mean) * rstd * tl.load(W + cols, mask=m) + tl.load(B + cols, mask=m), mask=m)


@triton.jit
def layernorm_bwd_dx(DX, DY, DW, DB, X, W, Mean, Rstd, Lock, stride, N, GROUP: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    lock_id = row % GROUP
    Lock += lock_id
    Count = Lock + GROUP
    DW = DW + lock_id * N + cols
    DB = DB + lock_id * N + cols
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = tl.where(mask, (x - mean) * rstd, 0.)
    wdy = tl.where(mask, w * dy, 0.)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    tl.store(DX + cols, (wdy - (xhat * c1 + c2)) * rstd, mask=mask)
    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = dy.to(w.dtype)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    if count == 0:
        tl.atomic_xchg(Count, 1)
    else:
        partial_dw += tl.load(DW, mask=mask)
        partial_db += tl.load(DB, mask=mask)
    tl.store(DW, partial_dw, mask=mask)
    tl.store(DB, partial_db, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(Lock, 0)


@triton.jit
def layernorm_bwd_dwdb(DW, DB, FINAL_DW, FINAL_DB, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BN + tl.arange(0, BN)
    dw = tl.zeros((BM, BN), dtype=tl.float32)
    db = tl.zeros((BM, BN), dtype=tl.float32)
    for i in range(0, M, BM):
        rows = i + tl.arange(0, BM)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW + offs, mask=mask, other=0.)
        db += tl.load(DB + offs, mask=mask, other=0.)
    tl.store(FINAL_DW + cols, tl.sum(dw, axis=0), mask=cols < N)
    tl.store(FINAL_DB + cols, tl.sum(db, axis=0), mask=cols < N)


@triton.jit
def dropout_kernel(x, out, n, p, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m)
    r = tl.rand(seed, offs)
    tl.store(out + offs, tl.where(r > p, v / (1 - p), 0.0), mask=m)


@triton.jit
def rows_kernel(x, cs, srt, am, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    v = tl.load(x + row * n_cols + cols, mask=m, other=0)
    tl.store(cs + row * n_cols + cols, tl.cumsum(v, axis=0), mask=m)
    f = tl.where(m, v.to(tl.float32), float("inf"))
    tl.store(srt + row * BLOCK + cols, tl.sort(f, dim=0))
    tl.store(am + row, tl.argmax(tl.where(m, (v * 7919) % 1013, -1), axis=0))


@triton.jit
def histogram_kernel(x, bins, n, NB: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m, other=0)
    tl.atomic_add(bins + (v % NB), 1, mask=m)


@triton.jit
def math_kernel(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m, other=1.0)
    a = tl.abs(v) + 0.5
    tl.store(out + offs, tl.exp(v), mask=m)
    tl.store(out + n + offs, tl.log(a), mask=m)
    tl.store(out + 2 * n + offs, tl.sqrt(a), mask=m)
    tl.store(out + 3 * n + offs, tl.rsqrt(a), mask=m)
    tl.store(out + 4 * n + offs, tl.sin(v), mask=m)
    tl.store(out + 5 * n + offs, tl.cos(v), mask=m)
    tl.store(out + 6 * n + offs, libdevice.erf(v), mask=m)
    tl.store(out + 7 * n + offs, libdevice.tanh(v), mask=m)
    tl.store(out + 8 * n + offs, libdevice.pow(a, v), mask=m)
    tl.store(out + 9 * n + offs, tl.sigmoid(v), mask=m)


@triton.jit
def fp8_kernel(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m)
    tl.store(out + offs, v.to(tl.float8e4nv).to(tl.float32), mask=m)


@triton.jit
def dot_kernel(a, b, c, M, N, K, IEEE: tl.constexpr, INT: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.int32 if INT else tl.float32)
    for k0 in range(0, K, BK):
        ka = k0 + rk
        ta = tl.load(a + rm[:, None] * K + ka[None, :], mask=(rm[:, None] < M) & (ka[None, :] < K))
        tb = tl.load(b + ka[:, None] * N + rn[None, :], mask=(ka[:, None] < K) & (rn[None, :] < N))
        ta = tl.where((rm[:, None] < M) & (ka[None, :] < K), ta, tl.zeros_like(ta))  # masked-off lanes: 0
        tb = tl.where((ka[:, None] < K) & (rn[None, :] < N), tb, tl.zeros_like(tb))
        if IEEE:
            acc = tl.dot(ta, tb, acc, input_precision="ieee")
        else:
            acc = tl.dot(ta, tb, acc)
    tl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


# ---- compiling, launching ----

def compile_ptx(fn, sig, consts, cap, warps=4, stages=3):
    sig = dict(sig)
    for c in consts:
        sig[c] = "constexpr"
    k = triton.compile(ASTSource(fn=fn, signature=sig, constexprs=consts),
                       target=GPUTarget("cuda", cap, 32), options={"num_warps": warps, "num_stages": stages})
    return k.asm["ptx"], k.metadata


class Run:
    def __init__(self, cap, dev, keep):
        self.cap, self.dev, self.keep = cap, dev, keep

    def launch(self, fn, sig, consts, grid, args, warps=4, stages=3):
        ptx, md = compile_ptx(fn, sig, consts, self.cap, warps, stages)
        if self.keep:
            with open(os.path.join(self.keep, "%s_sm%d.ptx" % (md.name, self.cap)), "w") as f:
                f.write(ptx)
        k = tile.load_ptx(ptx, device=self.dev)[md.name]
        nprog = grid[0] * (grid[1] if len(grid) > 1 else 1)
        scratch = np.zeros(max(1, md.global_scratch_size * nprog), np.uint8) if md.global_scratch_size else None
        k[grid](*args, scratch, None, shared=md.shared)


def check(name, got, want, rtol=0.0, atol=0.0):
    got = np.asarray(got, np.float64)
    if np.isnan(got).any() and not np.isnan(want).any():
        raise AssertionError("%s: NaN left in the output (an element never written)" % name)
    err = np.abs(got - want)
    bound = atol + rtol * np.abs(want)
    if not (err <= bound).all():
        i = np.unravel_index(np.argmax(err - bound), err.shape)
        raise AssertionError("%s: max error %g at %s: got %r, want %r" % (name, err[i], i, got[i], want[i]))


def philox4(seed, offs):
    """Philox 4x32-10 in NumPy of counter (offs, 0, 0, 0), key (seed lo, seed hi): its four words (tl.randint4x)."""
    m32 = np.uint64(0xFFFFFFFF)
    c0 = offs.astype(np.uint64)
    c1 = np.zeros_like(c0)
    c2 = np.zeros_like(c0)
    c3 = np.zeros_like(c0)
    k0 = np.uint64(seed & 0xFFFFFFFF)
    k1 = np.uint64((seed >> 32) & 0xFFFFFFFF)
    A, B = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
    for _ in range(10):
        _c0, _c2 = c0, c2
        c0 = (((B * _c2) >> np.uint64(32)) ^ c1 ^ k0) & m32
        c2 = (((A * _c0) >> np.uint64(32)) ^ c3 ^ k1) & m32
        c1 = (B * _c2) & m32
        c3 = (A * _c0) & m32
        k0 = (k0 + np.uint64(0x9E3779B9)) & m32
        k1 = (k1 + np.uint64(0xBB67AE85)) & m32
    return [c.astype(np.uint32) for c in (c0, c1, c2, c3)]


def philox_rand(seed, offs):
    """tl.rand(seed, offs) in NumPy: the first word of philox4, as a float in [0, 1)."""
    x = philox4(seed, offs)[0].view(np.int32).astype(np.int64)
    x = np.where(x < 0, -x - 1, x).astype(np.int32)
    return x.astype(np.float32) * np.float32(4.6566127342e-10)


def e4m3_decode(u):
    """float8e4nv bit patterns (uint8) to float64."""
    e = (u.astype(np.int64) >> 3) & 15
    m = (u & 7).astype(np.float64)
    v = np.where(e > 0, (8 + m) * 2.0 ** (e - 10), m * 2.0 ** -9)
    return np.where(u & 0x80, -v, v)


def f8e4m3_round(v):
    """f32 to float8e4nv (round to nearest even) and back, for |v| < 448."""
    out = np.zeros_like(v, dtype=np.float64)
    for i, x in enumerate(v.astype(np.float64)):
        if x == 0:
            continue
        e = max(int(np.floor(np.log2(abs(x)))), -6)
        q = np.round(abs(x) / 2.0 ** (e - 3))  # NumPy rounds half to even
        out[i] = np.sign(x) * q * 2.0 ** (e - 3)
    return out


# ---- the checks ----

class Skip(Exception):
    pass


def t_add(r):
    n = 1000
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    r.launch(add_kernel, {"x": "*fp32", "y": "*fp32", "out": "*fp32", "n": "i32"}, {"BLOCK": 256}, (4,), [x, y, out, n])
    check("add", out, (x + y).astype(np.float64))  # one f32 rounding


def t_softmax(r):
    rows, cols = 37, 781
    x = rng.standard_normal((rows, cols)).astype(np.float32) * 3
    out = np.full((rows, cols), np.nan, np.float32)
    r.launch(softmax_kernel, {"out": "*fp32", "inp": "*fp32", "in_stride": "i32", "out_stride": "i32", "n_cols": "i32"},
             {"BLOCK": 1024}, (rows,), [out, x, cols, cols, cols], warps=8)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    check("softmax", out, e / e.sum(axis=1, keepdims=True), rtol=2e-6, atol=1e-9)


def t_layernorm(r):
    M, N = 19, 1151
    x = rng.standard_normal((M, N)).astype(np.float32)
    w, b = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    y = np.full((M, N), np.nan, np.float32)
    mean, rstd = np.full(M, np.nan, np.float32), np.full(M, np.nan, np.float32)
    sig = {"X": "*fp32", "Y": "*fp32", "W": "*fp32", "B": "*fp32", "Mean": "*fp32", "Rstd": "*fp32", "stride": "i32",
           "N": "i32", "eps": "fp32"}
    r.launch(layernorm_fwd, sig, {"BLOCK": 512}, (M,), [x, y, w, b, mean, rstd, N, N, 1e-5])
    xd = x.astype(np.float64)
    mu = xd.mean(axis=1)
    rs = 1 / np.sqrt(((xd - mu[:, None]) ** 2).mean(axis=1) + 1e-5)
    check("layernorm mean", mean, mu, atol=1e-6)
    check("layernorm rstd", rstd, rs, rtol=1e-5)
    check("layernorm y", y, (xd - mu[:, None]) * rs[:, None] * w + b, rtol=1e-4, atol=1e-5)


def t_layernorm_bwd(r):
    M, N, GROUP = 45, 301, 8
    x = rng.standard_normal((M, N)).astype(np.float32)
    dy = rng.standard_normal((M, N)).astype(np.float32)
    w = rng.standard_normal(N).astype(np.float32)
    xd = x.astype(np.float64)
    mu = xd.mean(axis=1).astype(np.float32)
    rs = (1 / np.sqrt(((xd - mu[:, None]) ** 2).mean(axis=1) + 1e-5)).astype(np.float32)
    dx = np.full((M, N), np.nan, np.float32)
    dw_part = np.zeros((GROUP, N), np.float32)
    db_part = np.zeros((GROUP, N), np.float32)
    lock = np.zeros(2 * GROUP, np.int32)
    sig = {"DX": "*fp32", "DY": "*fp32", "DW": "*fp32", "DB": "*fp32", "X": "*fp32", "W": "*fp32", "Mean": "*fp32",
           "Rstd": "*fp32", "Lock": "*i32", "stride": "i32", "N": "i32"}
    r.launch(layernorm_bwd_dx, sig, {"GROUP": GROUP, "BLOCK": 512}, (M,), [dx, dy, dw_part, db_part, x, w, mu, rs, lock, N, N])
    dw, db = np.full(N, np.nan, np.float32), np.full(N, np.nan, np.float32)
    r.launch(layernorm_bwd_dwdb, {"DW": "*fp32", "DB": "*fp32", "FINAL_DW": "*fp32", "FINAL_DB": "*fp32", "M": "i32", "N": "i32"},
             {"BM": 32, "BN": 128}, ((N + 127) // 128,), [dw_part, db_part, dw, db, GROUP, N])
    xhat = (xd - mu[:, None].astype(np.float64)) * rs[:, None].astype(np.float64)
    wdy = w.astype(np.float64) * dy
    c1 = (xhat * wdy).sum(axis=1, keepdims=True) / N
    c2 = wdy.sum(axis=1, keepdims=True) / N
    check("layernorm_bwd dx", dx, (wdy - (xhat * c1 + c2)) * rs[:, None], rtol=1e-4, atol=1e-4)
    check("layernorm_bwd dw", dw, (dy.astype(np.float64) * xhat).sum(axis=0), rtol=1e-4, atol=1e-4)
    check("layernorm_bwd db", db, dy.astype(np.float64).sum(axis=0), rtol=1e-4, atol=1e-4)
    if (lock[:GROUP] != 0).any() or (lock[GROUP:] != 1).any():
        raise AssertionError("layernorm_bwd: locks %s, counts %s after the kernel" % (lock[:GROUP], lock[GROUP:]))


def t_dropout(r):
    n, p, seed = 3001, 0.3, 0x1234567890ABCDEF & 0x7FFFFFFFFFFFFFFF
    x = rng.standard_normal(n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    r.launch(dropout_kernel, {"x": "*fp32", "out": "*fp32", "n": "i32", "p": "fp32", "seed": "i64"}, {"BLOCK": 1024},
             ((n + 1023) // 1024,), [x, out, n, p, seed])
    keep = philox_rand(seed, np.arange(n)) > np.float32(p)
    got_keep = out != 0
    if (keep != got_keep).any():
        i = int(np.argmax(keep != got_keep))
        raise AssertionError("dropout: element %d kept=%s, Philox says %s (%d of %d differ)" % (i, got_keep[i], keep[i],
                                                                                          int((keep != got_keep).sum()), n))
    check("dropout values", out, np.where(keep, x.astype(np.float64) / (1 - np.float32(p)), 0.0), rtol=3e-7)


def t_rows(r):
    rows, cols, B = 9, 187, 256
    x = rng.integers(-1000, 1000, (rows, cols)).astype(np.int32)
    cs = np.full((rows, cols), -7, np.int32)
    srt = np.full((rows, B), np.nan, np.float32)
    am = np.full(rows, -7, np.int32)
    r.launch(rows_kernel, {"x": "*i32", "cs": "*i32", "srt": "*fp32", "am": "*i32", "n_cols": "i32"}, {"BLOCK": B},
             (rows,), [x, cs, srt, am, cols])
    check("cumsum", cs, np.cumsum(x.astype(np.int64), axis=1))
    f = x.astype(np.float32)
    want = np.sort(np.concatenate([f, np.full((rows, B - cols), np.inf, np.float32)], axis=1), axis=1)
    if not np.array_equal(srt, want):
        raise AssertionError("sort: row %d differs" % int(np.argmax((srt != want).any(axis=1))))
    key = np.fmod(x.astype(np.int64) * 7919, 1013)  # Triton's % on integers is C's (the dividend's sign)
    want_am = np.argmax(key, axis=1)  # first of equal maxima, as tl.argmax
    check("argmax", am, want_am)


def t_histogram(r):
    n, NB = 5003, 37
    x = rng.integers(0, 1 << 20, n).astype(np.int32)
    bins = np.zeros(NB, np.int32)
    r.launch(histogram_kernel, {"x": "*i32", "bins": "*i32", "n": "i32"}, {"NB": NB, "BLOCK": 512}, ((n + 511) // 512,),
             [x, bins, n])
    check("histogram", bins, np.bincount(x % NB, minlength=NB))


def t_math(r):
    n = 777
    x = (rng.standard_normal(n) * 3).astype(np.float32)
    out = np.full((10, n), np.nan, np.float32)
    r.launch(math_kernel, {"x": "*fp32", "out": "*fp32", "n": "i32"}, {"BLOCK": 256}, ((n + 255) // 256,), [x, out, n])
    xd = x.astype(np.float64)
    a = np.abs(xd) + 0.5
    import math
    want = [np.exp(xd), np.log(a), np.sqrt(a), 1 / np.sqrt(a), np.sin(xd), np.cos(xd),
            np.array([math.erf(v) for v in xd]), np.tanh(xd), a ** xd, 1 / (1 + np.exp(-xd))]
    names = ["exp", "log", "sqrt", "rsqrt", "sin", "cos", "erf", "tanh", "pow", "sigmoid"]
    for i in range(10):
        check("math " + names[i], out[i], want[i], rtol=4e-6, atol=2e-6)


def t_fp8(r):
    if r.cap < 89:
        raise Skip("float8e4nv needs capability 89 in Triton")
    n = 1003
    x = (rng.standard_normal(n) * 40).astype(np.float32)
    x[:5] = [0.0, -0.0, 0.001953125, 240.0, -1.5]
    out = np.full(n, np.nan, np.float32)
    r.launch(fp8_kernel, {"x": "*fp32", "out": "*fp32", "n": "i32"}, {"BLOCK": 256}, ((n + 255) // 256,), [x, out, n])
    check("fp8 round trip", out, f8e4m3_round(x))


def t_dot(r):
    M, N, K = 77, 70, 93
    a = rng.integers(-128, 128, (M, K)).astype(np.int8)
    b = rng.integers(-128, 128, (K, N)).astype(np.int8)
    c = np.full((M, N), -7, np.int32)
    sig = {"a": "*i8", "b": "*i8", "c": "*i32", "M": "i32", "N": "i32", "K": "i32"}
    r.launch(dot_kernel, sig, {"IEEE": False, "INT": True, "BM": 64, "BN": 64, "BK": 32}, ((M + 63) // 64, (N + 63) // 64), [a, b, c, M, N, K])
    check("dot_i8", c, a.astype(np.int64) @ b.astype(np.int64))
    af = rng.standard_normal((M, K)).astype(np.float32)
    bf = rng.standard_normal((K, N)).astype(np.float32)
    cf = np.full((M, N), np.nan, np.float32)
    sig = {"a": "*fp32", "b": "*fp32", "c": "*fp32", "M": "i32", "N": "i32", "K": "i32"}
    r.launch(dot_kernel, sig, {"IEEE": True, "INT": False, "BM": 32, "BN": 32, "BK": 32}, ((M + 31) // 32, (N + 31) // 32), [af, bf, cf, M, N, K])
    check("dot_ieee", cf, af.astype(np.float64) @ bf, rtol=1e-5, atol=1e-4)
    if r.cap >= 89:  # e4m3 operands (bit patterns in uint8; NaN codes 0x7f/0xff left out): mma e4m3 / wgmma e4m3
        a8 = rng.integers(0, 256, (M, K)).astype(np.uint8)
        b8 = rng.integers(0, 256, (K, N)).astype(np.uint8)
        a8[(a8 & 0x7F) == 0x7F] = 0x38
        b8[(b8 & 0x7F) == 0x7F] = 0x38
        cf[:] = np.nan
        sig = {"a": "*fp8e4nv", "b": "*fp8e4nv", "c": "*fp32", "M": "i32", "N": "i32", "K": "i32"}
        r.launch(dot_kernel, sig, {"IEEE": False, "INT": False, "BM": 64, "BN": 64, "BK": 64}, ((M + 63) // 64, (N + 63) // 64),
                 [a8, b8, cf, M, N, K])
        ad, bd = e4m3_decode(a8), e4m3_decode(b8)
        bound = 2.0 ** -20 * (np.abs(ad) @ np.abs(bd))  # f32 accumulation in some order: relative to the terms' sizes
        err = np.abs(cf - ad @ bd)
        if np.isnan(cf).any() or not (err <= bound).all():
            i = np.unravel_index(np.argmax(err - bound), err.shape)
            raise AssertionError("dot_e4m3: error %g at %s (bound %g): got %r" % (err[i], i, bound[i], cf[i]))


TESTS = [("add", t_add), ("softmax", t_softmax), ("layernorm", t_layernorm), ("layernorm_bwd", t_layernorm_bwd),
         ("dropout", t_dropout), ("rows", t_rows), ("histogram", t_histogram), ("math", t_math), ("fp8", t_fp8),
         ("dot", t_dot)]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--arch", default="80,89,90", help="capabilities: 80 runs on emu:sm_80, 89 on emu:sm_89, 90 on emu:sm_90a")
    p.add_argument("--only", help="one test by name")
    p.add_argument("--keep", help="keep the PTX files in this directory")
    p.add_argument("--racecheck", action="store_true", help="run with the emulator's race checks")
    a = p.parse_args()
    if a.keep:
        os.makedirs(a.keep, exist_ok=True)
    print("triton %s, tile %s" % (triton.__version__, tile.version()))
    bad = 0
    for cap in (int(c) for c in a.arch.split(",")):
        devname = ("emu:sm_90a" if cap == 90 else "emu:sm_%d" % cap) + (":racecheck" if a.racecheck else "")
        r = Run(cap, tile.Device(devname), a.keep)
        for name, fn in TESTS:
            if a.only and a.only != name:
                continue
            try:
                fn(r)
                verdict = "ok"
            except Skip as e:
                verdict = "skipped: %s" % e
            except Exception as e:  # noqa: BLE001 - report and go on
                verdict = "FAIL: %s" % (str(e).strip().splitlines() or [type(e).__name__])[0][:300]
                bad += 1
            print("%-14s sm_%-3d %s" % (name, cap, verdict), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
