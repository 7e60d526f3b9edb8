"""tutorials_more.py - more of Triton's language, its PTX run unmodified on tile's emulator from Python.

    PYTHON bench/triton_ref/tutorials_more.py [--arch 80,89,90] [--only NAME,...] [--keep DIR] [--racecheck] [--debug]
                                              [--opt KEY=VALUE ...]

The harness of tutorials.py (same PYTHON: triton and the tile package in one venv), over kernels that
reach the corners tutorials.py leaves: each compiled with triton.compile for capability 80, 89 and 90,
loaded with tile.load_ptx on emu:sm_80 / emu:sm_89 / emu:sm_90a, checked against float64 NumPy on
fresh random inputs at sizes that are not multiples of the blocks, outputs poisoned first:

  attn_bwd       attention backward (f16 in, f32 out): dK/dV per key block over the query blocks, dQ
                 added by tensor atomic_add (f32); the forward's logsumexp and delta from NumPy
  grouped_gemm   the grouped GEMM tutorial: a table of device pointers (tile.data_ptr), a loop over
                 groups of different sizes, int64 addresses made into pointers
  persistent     a persistent matmul (a program loops over tiles), num_warps 8 and num_stages 4
  matmul_w16     a matmul with num_warps 16, num_stages 5 (f16) and bf16 with num_warps 8
  dot_scaled     tl.dot_scaled: e4m3 x e4m3 and e2m1 (mxfp4) x e4m3 with e8m0 scales per 32 of K
  scan           tl.associative_scan with a custom combine of a tuple (a first-order linear recurrence),
                 reverse too, and tl.reduce of a (value, index) tuple (argmin, first of equal)
  histogram      tl.histogram (with a mask)
  gather         tl.gather along each axis of a 2-D block
  join_split     tl.join, tl.split, tl.interleave; tl.reshape / tl.permute of the joined block
  inline_asm     tl.inline_asm_elementwise: a funnel shift (3 operands), bytes packed 4 to a register, two results
  print          tl.device_print of ints and floats (vprintf), stdout captured and compared as text
  assert         tl.device_assert (debug=True): holds, then fails in one program (__assertfail: the launch fails)
  int64          int64 offsets (strides as i64 arguments), i64 arithmetic (mulhi, shifts, division)
  atomics        atomic add/max/min/and/or/xor/xchg/cas on i32, u32, i64, f32, f16 with every sem and scope
  e5m2           f32 -> float8e5 -> f32 (round to nearest even, saturation) and a float8e5 tl.dot (89, 90)
  bf16           bf16 loads, bf16 arithmetic and math (exp, sqrt, fma, sigmoid, max) stored as bf16
  libdevice      asin acos atan atan2 sinh cosh asinh acosh atanh log1p expm1 cbrt hypot fmod erfinv
                 lgamma exp2 log2 log10 nextafter ilogb ldexp, f32 and f64
  tensor_desc    tl.make_tensor_descriptor load/store (a transposed copy with bounds), on 80 (plain loads)
                 and 90 (TMA: tensormap.replace in the global scratch, aligned as Triton's allocator aligns it)
  streamk        a stream-K matmul: 7 programs share 40 k-steps of 4 tiles, partial tiles added by atomic_add
                 (8 warps, 4 stages)
  dot2           tl.dot with input_precision tf32 (and checked to be rounded) and tf32x3, an f16 accumulator,
                 int8 on 8 warps and 4 stages (128x64 tiles), e4m3 x e5m2 (89, 90)
  order          tl.sort descending, tl.topk, tl.flip, tl.cat, tl.cumprod, tl.xor_sum
  random         tl.randint4x bit for bit against a NumPy Philox 4x32-10, tl.randn against Box-Muller of it
  rounding       tl.div_rn and tl.sqrt_rn (correctly rounded), tl.fdiv, tl.clamp, f32 -> f16 / bf16 with
                 fp_downcast_rounding="rtz", tl.umulhi
  last_block     the last-program reduction: partial sums by atomic_store(release), a ticket by
                 atomic_add(acq_rel), the last program sums them with atomic_load(acquire)
  desc3          a 3-D tensor descriptor with padding_option="nan" (TMA NaN fill on 90) on 8 warps
  dot3           batched 3-D tl.dot: f16, A loaded transposed (tl.permute), 1 warp with 16x16x16 tiles, f64
                 (mma m8n8k4 f64 on 80+)
  cuda_extra     tl.extra.cuda: globaltimer, smid, num_threads, num_warps, and on 90 gdc_wait /
                 gdc_launch_dependents (griddepcontrol)
  attn_fwd_ws    attention forward through tensor descriptors; on 90 also with tl.range(warp_specialize=True)
                 (setmaxnreg, named barriers, mbarrier hand-offs between the partitions, wgmma)

--opt KEY=VALUE adds a triton.compile option to every kernel.  num_ctas=2 (--arch 90): each program a
cluster of two CTAs (launched with cluster=(2, 1, 1), twice the programs along x, scratch per CTA); Triton
3.9 refuses scan, gather, e5m2, dot2, order and the warp-specialized attention so, the others agree, but
with --racecheck attn_bwd and dot_scaled stop on a race in Triton's PTX: an ld.shared::cluster of the peer
CTA's shared memory ordered after the peer's st.shared by bar.sync alone (no barrier.cluster between).
instrumentation_mode=consan (sm_90 only:
Triton's shared-memory race sanitizer, its state in the profile scratch) runs and agrees too;
instrumentation_mode=fpsan runs, but its integer stand-ins for float arithmetic are not float64's.
--debug compiles every kernel with debug=True: Triton's integer overflow checks and device_assert then
run too (__assertfail on the emulator). At this commit (Triton 3.9.0) every kernel agrees on sm_80,
sm_86, sm_89 and sm_90, with --racecheck and with --debug (dot_scaled is skipped below capability 89;
Triton 3.9 cannot compile the warp-specialized attention with debug=True: "PassManager::run failed").

Prints one line per kernel and arch and exits 1 when one disagrees or cannot run, 3 when triton or
tile cannot be imported.  No GPU; not run in CI (Triton is an optional tool)."""
import argparse
import math
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tutorials as T  # noqa: E402  (exits 3 when triton or tile is missing)
from tutorials import check, Skip, rng, np, tl, triton, tile, libdevice, GPUTarget, ASTSource  # noqa: E402
from triton.language.extra import cuda as tcuda  # noqa: E402


def compile_ptx(fn, sig, consts, cap, warps=4, stages=3, **opts):
    sig = dict(sig)
    for c in consts:
        sig[c] = "constexpr"
    o = {"num_warps": warps, "num_stages": stages}
    o.update(opts)
    k = triton.compile(ASTSource(fn=fn, signature=sig, constexprs=consts), target=GPUTarget("cuda", cap, 32), options=o)
    return k.asm["ptx"], k.metadata


class Run:
    def __init__(self, cap, dev, keep, debug=False, extra=None):
        self.cap, self.dev, self.keep, self.debug, self.extra = cap, dev, keep, debug, extra or {}

    def kernel(self, fn, sig, consts, warps=4, stages=3, **opts):
        if self.debug:
            opts.setdefault("debug", True)
        for k, v in self.extra.items():
            opts.setdefault(k, v)
        ptx, md = compile_ptx(fn, sig, consts, self.cap, warps, stages, **opts)
        if self.keep:
            with open(os.path.join(self.keep, "%s_sm%d.ptx" % (md.name, self.cap)), "w") as f:
                f.write(ptx)
        return tile.load_ptx(ptx, device=self.dev)[md.name], md, ptx

    def scratch(self, size, align, nprog):
        """Triton's global or profile scratch for nprog programs (None when the kernel takes none), aligned as
        Triton's allocator aligns it (a tensor map in it: 128 bytes)."""
        if not size:
            return None
        align = max(align, 128)
        raw = np.zeros(size * nprog + align, np.uint8)
        return raw[(-tile.data_ptr(raw, device=self.dev)) % align:][:size * nprog]

    def launch(self, fn, sig, consts, grid, args, warps=4, stages=3, **opts):
        k, md, ptx = self.kernel(fn, sig, consts, warps, stages, **opts)
        nprog = grid[0] * (grid[1] if len(grid) > 1 else 1) * md.num_ctas  # scratch per CTA
        extra = {}
        if md.num_ctas > 1:  # a program is a cluster of num_ctas CTAs along x (.reqnctapercluster)
            grid = (grid[0] * md.num_ctas,) + tuple(grid[1:])
            extra["cluster"] = (md.num_ctas, 1, 1)
        k[grid](*args, self.scratch(md.global_scratch_size, md.global_scratch_align, nprog),
                self.scratch(md.profile_scratch_size, md.profile_scratch_align, nprog), shared=md.shared, **extra)
        return ptx


def f16(x):
    return np.asarray(x, np.float16)


def bf16_round(x):
    """f32 to bf16 (round to nearest even) as float32 values."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32)


def bf16_bits(x):
    return (bf16_round(x).view(np.uint32) >> 16).astype(np.uint16)


def bf16_value(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


# ---- attention backward ----

@triton.jit
def attn_bwd_kernel(Q, K, V, DO, LSE, DELTA, DQ, DK, DV, N, scale, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    start_n = tl.program_id(0) * BN
    rn = start_n + tl.arange(0, BN)
    rd = tl.arange(0, D)
    kmask = rn[:, None] < N
    k = tl.load(K + rn[:, None] * D + rd[None, :], mask=kmask, other=0.)
    v = tl.load(V + rn[:, None] * D + rd[None, :], mask=kmask, other=0.)
    dk = tl.zeros((BN, D), dtype=tl.float32)
    dv = tl.zeros((BN, D), dtype=tl.float32)
    for start_m in range(0, N, BM):
        rm = start_m + tl.arange(0, BM)
        qmask = rm[:, None] < N
        q = tl.load(Q + rm[:, None] * D + rd[None, :], mask=qmask, other=0.)
        do = tl.load(DO + rm[:, None] * D + rd[None, :], mask=qmask, other=0.)
        lse = tl.load(LSE + rm, mask=rm < N, other=0.)
        delta = tl.load(DELTA + rm, mask=rm < N, other=0.)
        s = tl.dot(q, tl.trans(k)) * scale
        p = tl.exp(s - lse[:, None])
        p = tl.where((rm[:, None] < N) & (rn[None, :] < N), p, 0.)
        dv += tl.dot(tl.trans(p.to(tl.float16)), do)
        dp = tl.dot(do, tl.trans(v))
        ds = p * (dp - delta[:, None]) * scale
        dk += tl.dot(tl.trans(ds.to(tl.float16)), q)
        dq = tl.dot(ds.to(tl.float16), k)
        tl.atomic_add(DQ + rm[:, None] * D + rd[None, :], dq, mask=qmask, sem="relaxed")
    tl.store(DK + rn[:, None] * D + rd[None, :], dk, mask=kmask)
    tl.store(DV + rn[:, None] * D + rd[None, :], dv, mask=kmask)


def t_attn_bwd(r):
    N, D, BM, BN = 83, 64, 32, 32
    scale = 1 / math.sqrt(D)
    q, k, v, do = (f16(rng.standard_normal((N, D)) * 0.5) for _ in range(4))
    qd, kd, vd, dod = (x.astype(np.float64) for x in (q, k, v, do))
    s = qd @ kd.T * scale
    lse = np.log(np.exp(s - s.max(axis=1, keepdims=True)).sum(axis=1)) + s.max(axis=1)
    p = np.exp(s - lse[:, None])
    o = p @ vd
    delta = (o * dod).sum(axis=1)
    dq = np.zeros((N, D), np.float32)  # atomic_add accumulates into it
    dk, dv = np.full((N, D), np.nan, np.float32), np.full((N, D), np.nan, np.float32)
    sig = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "DO": "*fp16", "LSE": "*fp32", "DELTA": "*fp32", "DQ": "*fp32",
           "DK": "*fp32", "DV": "*fp32", "N": "i32", "scale": "fp32"}
    r.launch(attn_bwd_kernel, sig, {"D": D, "BM": BM, "BN": BN}, ((N + BN - 1) // BN,),
             [q, k, v, do, lse.astype(np.float32), delta.astype(np.float32), dq, dk, dv, N, scale])
    dp = dod @ vd.T
    ds = p * (dp - delta[:, None]) * scale
    # P and dS are rounded to f16 before their dots: the bound allows that rounding (2^-11 relative) of each term
    check("attn_bwd dv", dv, p.T @ dod, atol=2e-3 * (p.T @ np.abs(dod)).max() + 1e-6, rtol=2e-3)
    check("attn_bwd dk", dk, ds.T @ qd, atol=2e-3 * (np.abs(ds).T @ np.abs(qd)).max() + 1e-6, rtol=2e-3)
    check("attn_bwd dq", dq, ds @ kd, atol=2e-3 * (np.abs(ds) @ np.abs(kd)).max() + 1e-6, rtol=2e-3)


# ---- grouped GEMM (tables of pointers) ----

@triton.jit
def grouped_gemm_kernel(a_ptrs, b_ptrs, c_ptrs, sizes, lds, G, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    last = 0
    for g in range(G):
        M = tl.load(sizes + g * 3)
        N = tl.load(sizes + g * 3 + 1)
        K = tl.load(sizes + g * 3 + 2)
        tiles = tl.cdiv(M, BM) * tl.cdiv(N, BN)
        while pid >= last and pid < last + tiles:
            t = pid - last
            pm = t // tl.cdiv(N, BN)
            pn = t % tl.cdiv(N, BN)
            a = tl.load(a_ptrs + g).to(tl.pointer_type(tl.float16))
            b = tl.load(b_ptrs + g).to(tl.pointer_type(tl.float16))
            c = tl.load(c_ptrs + g).to(tl.pointer_type(tl.float32))
            lda = tl.load(lds + g * 3)
            ldb = tl.load(lds + g * 3 + 1)
            ldc = tl.load(lds + g * 3 + 2)
            rm = pm * BM + tl.arange(0, BM)
            rn = pn * BN + tl.arange(0, BN)
            rk = tl.arange(0, BK)
            acc = tl.zeros((BM, BN), dtype=tl.float32)
            for k0 in range(0, K, BK):
                ka = k0 + rk
                ta = tl.load(a + rm[:, None] * lda + ka[None, :], mask=(rm[:, None] < M) & (ka[None, :] < K), other=0.)
                tb = tl.load(b + ka[:, None] * ldb + rn[None, :], mask=(ka[:, None] < K) & (rn[None, :] < N), other=0.)
                acc = tl.dot(ta, tb, acc)
            tl.store(c + rm[:, None] * ldc + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))
            pid += nprog
        last += tiles


def t_grouped_gemm(r):
    shapes = [(70, 45, 33), (16, 100, 64), (129, 20, 17)]
    BM = BN = 32
    As = [f16(rng.integers(-3, 4, (m, k))) for m, n, k in shapes]
    Bs = [f16(rng.integers(-3, 4, (k, n))) for m, n, k in shapes]
    Cs = [np.full((m, n), np.nan, np.float32) for m, n, k in shapes]
    ptr = lambda xs: np.array([tile.data_ptr(x, device=r.dev) for x in xs], np.uint64)  # noqa: E731
    sizes = np.array([v for s in shapes for v in s], np.int32)
    lds = np.array([v for m, n, k in shapes for v in (k, n, n)], np.int32)
    pa, pb, pc = ptr(As), ptr(Bs), ptr(Cs)
    sig = {"a_ptrs": "*u64", "b_ptrs": "*u64", "c_ptrs": "*u64", "sizes": "*i32", "lds": "*i32", "G": "i32"}
    r.launch(grouped_gemm_kernel, sig, {"BM": BM, "BN": BN, "BK": 32}, (5,), [pa, pb, pc, sizes, lds, len(shapes)])
    for g in range(len(shapes)):
        check("grouped_gemm group %d" % g, Cs[g], As[g].astype(np.float64) @ Bs[g].astype(np.float64))  # small integers: exact


# ---- persistent matmul, many warps, deep pipelines ----

@triton.jit
def persistent_matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr):
    start = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BM)
    num_pid_n = tl.cdiv(N, BN)
    tiles = num_pid_m * num_pid_n
    for tile_id in tl.range(start, tiles, tl.num_programs(0), flatten=False):
        group_id = tile_id // (GROUP * num_pid_n)
        first_m = group_id * GROUP
        gsize = min(num_pid_m - first_m, GROUP)
        pm = first_m + (tile_id % (GROUP * num_pid_n)) % gsize
        pn = (tile_id % (GROUP * num_pid_n)) // gsize
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            ka = k0 + rk
            ta = tl.load(a + rm[:, None] * K + ka[None, :], mask=(rm[:, None] < M) & (ka[None, :] < K), other=0.)
            tb = tl.load(b + ka[:, None] * N + rn[None, :], mask=(ka[:, None] < K) & (rn[None, :] < N), other=0.)
            acc = tl.dot(ta, tb, acc)
        tl.store(c + rm[:, None] * N + rn[None, :], acc.to(c.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


def t_persistent(r):
    M, N, K = 150, 97, 130
    a, b = f16(rng.integers(-3, 4, (M, K))), f16(rng.integers(-3, 4, (K, N)))
    c = np.full((M, N), np.nan, np.float32)
    sig = {"a": "*fp16", "b": "*fp16", "c": "*fp32", "M": "i32", "N": "i32", "K": "i32"}
    r.launch(persistent_matmul, sig, {"BM": 64, "BN": 64, "BK": 32, "GROUP": 2}, (3,), [a, b, c, M, N, K], warps=8, stages=4)
    check("persistent", c, a.astype(np.float64) @ b.astype(np.float64))


def t_matmul_w16(r):
    M, N, K = 141, 133, 200
    a, b = f16(rng.integers(-3, 4, (M, K))), f16(rng.integers(-3, 4, (K, N)))
    c = np.full((M, N), np.nan, np.float16)
    sig = {"a": "*fp16", "b": "*fp16", "c": "*fp16", "M": "i32", "N": "i32", "K": "i32"}
    r.launch(persistent_matmul, sig, {"BM": 128, "BN": 128, "BK": 32, "GROUP": 1}, (2,), [a, b, c, M, N, K], warps=16, stages=5)
    check("matmul w16 f16", c, a.astype(np.float64) @ b.astype(np.float64))  # |sums| < 2048: exact in f16
    ab = bf16_bits(rng.integers(-3, 4, (M, K)).astype(np.float32))
    bb = bf16_bits(rng.integers(-3, 4, (K, N)).astype(np.float32))
    cf = np.full((M, N), np.nan, np.float32)
    sig = {"a": "*bf16", "b": "*bf16", "c": "*fp32", "M": "i32", "N": "i32", "K": "i32"}
    r.launch(persistent_matmul, sig, {"BM": 64, "BN": 128, "BK": 64, "GROUP": 2}, (4,), [ab, bb, cf, M, N, K], warps=8, stages=4)
    check("matmul w8 bf16", cf, bf16_value(ab).astype(np.float64) @ bf16_value(bb).astype(np.float64))


# ---- tl.dot_scaled ----

@triton.jit
def dot_scaled_kernel(a, sa, b, sb, c, M, N, K, FMT_A: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    PACK: tl.constexpr = 2 if FMT_A == "e2m1" else 1
    rka = tl.arange(0, BK // PACK)
    rk = tl.arange(0, BK)
    rs = tl.arange(0, BK // 32)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        ta = tl.load(a + rm[:, None] * (K // PACK) + (k0 // PACK + rka)[None, :], mask=rm[:, None] < M)
        tb = tl.load(b + (k0 + rk)[:, None] * N + rn[None, :], mask=rn[None, :] < N)
        tsa = tl.load(sa + rm[:, None] * (K // 32) + (k0 // 32 + rs)[None, :], mask=rm[:, None] < M, other=127)
        tsb = tl.load(sb + rn[:, None] * (K // 32) + (k0 // 32 + rs)[None, :], mask=rn[:, None] < N, other=127)
        acc = tl.dot_scaled(ta, tsa, FMT_A, tb, tsb, "e4m3", acc)
    tl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])


def t_dot_scaled(r):
    if r.cap < 89:
        raise Skip("tl.dot_scaled of e4m3 needs capability 89 in Triton")
    M, N, K = 70, 45, 128
    b8 = rng.integers(0, 256, (K, N)).astype(np.uint8)
    b8[(b8 & 0x7F) == 0x7F] = 0x38
    sa = rng.integers(120, 134, (M, K // 32)).astype(np.uint8)
    sb = rng.integers(120, 134, (N, K // 32)).astype(np.uint8)
    bd = T.e4m3_decode(b8) * np.repeat(2.0 ** (sb.astype(np.float64) - 127), 32, axis=1).T
    for fmt in ("e4m3", "e2m1"):
        if fmt == "e4m3":
            a8 = rng.integers(0, 256, (M, K)).astype(np.uint8)
            a8[(a8 & 0x7F) == 0x7F] = 0x38
            ad = T.e4m3_decode(a8)
        else:
            nib = rng.integers(0, 16, (M, K)).astype(np.uint8)
            a8 = (nib[:, 0::2] | (nib[:, 1::2] << 4)).astype(np.uint8)  # element 2j in the low nibble
            ad = E2M1[nib]
        ad = ad * np.repeat(2.0 ** (sa.astype(np.float64) - 127), 32, axis=1)
        c = np.full((M, N), np.nan, np.float32)
        sig = {"a": "*u8" if fmt == "e2m1" else "*fp8e4nv", "sa": "*u8", "b": "*fp8e4nv", "sb": "*u8", "c": "*fp32", "M": "i32",
               "N": "i32", "K": "i32"}
        r.launch(dot_scaled_kernel, sig, {"FMT_A": fmt, "BM": 64, "BN": 64, "BK": 64}, ((M + 63) // 64, (N + 63) // 64),
                 [a8, sa, b8, sb, c, M, N, K])
        want = ad @ bd
        bound = 2.0 ** -20 * (np.abs(ad) @ np.abs(bd)) + 1e-30
        err = np.abs(c - want)
        if np.isnan(c).any() or not (err <= bound).all():
            i = np.unravel_index(np.argmax(err - bound), err.shape)
            raise AssertionError("dot_scaled %s: error %g at %s (bound %g): got %r, want %r" % (fmt, err[i], i, bound[i], c[i], want[i]))


# ---- scans and reductions with custom combines ----

@triton.jit
def lin_combine(a1, b1, a2, b2):
    return a1 * a2, b1 * a2 + b2


@triton.jit
def argmin_combine(v1, i1, v2, i2):
    lt = (v1 < v2) | ((v1 == v2) & (i1 < i2))
    return tl.where(lt, v1, v2), tl.where(lt, i1, i2)


@triton.jit
def scan_kernel(A, B, H, HR, MINV, MINI, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(A + row * n + offs, mask=m, other=1.)
    b = tl.load(B + row * n + offs, mask=m, other=0.)
    _, h = tl.associative_scan((a, b), 0, lin_combine)
    tl.store(H + row * n + offs, h, mask=m)
    _, hr = tl.associative_scan((a, b), 0, lin_combine, reverse=True)
    tl.store(HR + row * n + offs, hr, mask=m)
    key = tl.where(m, (b * 8).to(tl.int32), 1 << 30)
    v, i = tl.reduce((key, offs), 0, argmin_combine)
    tl.store(MINV + row, v)
    tl.store(MINI + row, i)


def t_scan(r):
    rows, n = 5, 203
    a = rng.uniform(0.5, 1.0, (rows, n)).astype(np.float32)
    b = rng.integers(-40, 40, (rows, n)).astype(np.float32) / 8
    h, hr = np.full((rows, n), np.nan, np.float32), np.full((rows, n), np.nan, np.float32)
    mv, mi = np.full(rows, -7, np.int32), np.full(rows, -7, np.int32)
    sig = {"A": "*fp32", "B": "*fp32", "H": "*fp32", "HR": "*fp32", "MINV": "*i32", "MINI": "*i32", "n": "i32"}
    r.launch(scan_kernel, sig, {"BLOCK": 256}, (rows,), [a, b, h, hr, mv, mi, n])
    ad, bd = a.astype(np.float64), b.astype(np.float64)
    want = np.zeros((rows, n))
    wantr = np.zeros((rows, n))
    for i in range(rows):
        acc = 0.0
        for j in range(n):
            acc = acc * ad[i, j] + bd[i, j]
            want[i, j] = acc
        # reverse: the scan of the reversed row (the running value the left operand, as forward)
        accr = 0.0
        for j in range(n - 1, -1, -1):
            accr = accr * ad[i, j] + bd[i, j]
            wantr[i, j] = accr
    check("associative_scan", h, want, rtol=1e-5, atol=1e-5)
    check("associative_scan reverse", hr, wantr, rtol=1e-5, atol=1e-5)
    key = (b * 8).astype(np.int32)
    check("reduce tuple value", mv, key.min(axis=1))
    check("reduce tuple index", mi, key.argmin(axis=1))


# ---- histogram, gather, join/split/interleave ----

@triton.jit
def histogram2_kernel(x, out, n, NB: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs, mask=offs < n, other=0)
    h = tl.histogram(v, NB, mask=offs < n)
    tl.store(out + tl.arange(0, NB), h)


def t_histogram(r):
    n, NB = 1000, 64
    x = rng.integers(0, NB, n).astype(np.int32)
    x[::7] = rng.integers(0, 5, len(x[::7]))
    out = np.full(NB, -7, np.int32)
    r.launch(histogram2_kernel, {"x": "*i32", "out": "*i32", "n": "i32"}, {"NB": NB, "BLOCK": 1024}, (1,), [x, out, n])
    check("histogram", out, np.bincount(x, minlength=NB))


@triton.jit
def gather_kernel(src, idx0, idx1, out0, out1, R: tl.constexpr, C: tl.constexpr):
    rr = tl.arange(0, R)
    rc = tl.arange(0, C)
    s = tl.load(src + rr[:, None] * C + rc[None, :])
    i0 = tl.load(idx0 + rr[:, None] * C + rc[None, :])
    i1 = tl.load(idx1 + rr[:, None] * C + rc[None, :])
    tl.store(out0 + rr[:, None] * C + rc[None, :], tl.gather(s, i0, 0))
    tl.store(out1 + rr[:, None] * C + rc[None, :], tl.gather(s, i1, 1))


def t_gather(r):
    R, C = 32, 64
    src = rng.standard_normal((R, C)).astype(np.float32)
    i0 = rng.integers(0, R, (R, C)).astype(np.int32)
    i1 = rng.integers(0, C, (R, C)).astype(np.int32)
    o0, o1 = np.full((R, C), np.nan, np.float32), np.full((R, C), np.nan, np.float32)
    r.launch(gather_kernel, {"src": "*fp32", "idx0": "*i32", "idx1": "*i32", "out0": "*fp32", "out1": "*fp32"},
             {"R": R, "C": C}, (1,), [src, i0, i1, o0, o1])
    check("gather axis 0", o0, np.take_along_axis(src, i0, 0).astype(np.float64))
    check("gather axis 1", o1, np.take_along_axis(src, i1, 1).astype(np.float64))


@triton.jit
def join_split_kernel(x, y, inter, sa, sb, perm, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m, other=0)
    b = tl.load(y + offs, mask=m, other=0)
    j = tl.join(a, b)  # [BLOCK, 2]
    o2 = offs[:, None] * 2 + tl.arange(0, 2)[None, :]
    tl.store(inter + o2, j, mask=o2 < 2 * n)
    il = tl.interleave(a * 3, b - 1)  # [2 * BLOCK]
    o3 = tl.program_id(0) * 2 * BLOCK + tl.arange(0, 2 * BLOCK)
    tl.store(perm + o3, il, mask=o3 < 2 * n)
    p, q = tl.split(tl.join(b + a, a ^ b))
    tl.store(sa + offs, p, mask=m)
    tl.store(sb + offs, q, mask=m)


def t_join_split(r):
    n, B = 333, 128
    x = rng.integers(-1000, 1000, n).astype(np.int32)
    y = rng.integers(-1000, 1000, n).astype(np.int32)
    inter = np.full(2 * n, -7, np.int32)
    il = np.full(2 * n, -7, np.int32)
    sa, sb = np.full(n, -7, np.int32), np.full(n, -7, np.int32)
    sig = {"x": "*i32", "y": "*i32", "inter": "*i32", "sa": "*i32", "sb": "*i32", "perm": "*i32", "n": "i32"}
    r.launch(join_split_kernel, sig, {"BLOCK": B}, ((n + B - 1) // B,), [x, y, inter, sa, sb, il, n])
    check("join", inter, np.stack([x, y], axis=1).reshape(-1))
    check("interleave", il, np.stack([x * 3, y - 1], axis=1).reshape(-1))
    check("split 0", sa, x + y)
    check("split 1", sb, x ^ y)


# ---- inline asm ----

@triton.jit
def inline_asm_kernel(x, y, z, u8, o1, o2, o3, o4, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m, other=0)
    b = tl.load(y + offs, mask=m, other=0)
    s = tl.load(z + offs, mask=m, other=0)
    f = tl.inline_asm_elementwise("shf.l.wrap.b32 $0, $1, $2, $3;", "=r,r,r,r", [a, b, s], dtype=tl.uint32, is_pure=True, pack=1)
    tl.store(o1 + offs, f, mask=m)
    v = tl.load(u8 + offs, mask=m, other=0)
    # four bytes to a register: each byte's value doubled, saturating (vadd4 with saturation would need sm_90; prmt + shifts)
    g = tl.inline_asm_elementwise("""{
            .reg .b32 t;
            and.b32 t, $1, 0x7f7f7f7f;
            shl.b32 $0, t, 1;
        }""", "=r,r", [v], dtype=tl.uint8, is_pure=True, pack=4)
    tl.store(o2 + offs, g, mask=m)
    lo, hi = tl.inline_asm_elementwise("mul.lo.u32 $0, $2, $3;\n\tmul.hi.u32 $1, $2, $3;", "=r,=r,r,r", [a, b],
                                  dtype=(tl.uint32, tl.uint32), is_pure=True, pack=1)
    tl.store(o3 + offs, lo, mask=m)
    tl.store(o4 + offs, hi, mask=m)


def t_inline_asm(r):
    n, B = 517, 256
    a = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
    s = rng.integers(0, 64, n).astype(np.uint32)
    u = rng.integers(0, 256, n).astype(np.uint8)
    o1, o3, o4 = (np.full(n, 7, np.uint32) for _ in range(3))
    o2 = np.full(n, 7, np.uint8)
    sig = {"x": "*u32", "y": "*u32", "z": "*u32", "u8": "*u8", "o1": "*u32", "o2": "*u8", "o3": "*u32", "o4": "*u32", "n": "i32"}
    r.launch(inline_asm_kernel, sig, {"BLOCK": B}, ((n + B - 1) // B,), [a, b, s, u, o1, o2, o3, o4, n])
    sh = (s & 31).astype(np.uint64)
    wide = (b.astype(np.uint64) << np.uint64(32)) | a.astype(np.uint64)
    want1 = ((wide << sh) >> np.uint64(32)) & np.uint64(0xFFFFFFFF)  # shf.l: the high word of {b:a} << (s & 31)
    check("inline_asm shf.l.wrap", o1, want1)
    check("inline_asm pack 4", o2, ((u & 0x7F).astype(np.int64) * 2))
    p = a.astype(np.uint64) * b.astype(np.uint64)
    check("inline_asm two results lo", o3, p & np.uint64(0xFFFFFFFF))
    check("inline_asm two results hi", o4, p >> np.uint64(32))


# ---- printing and assertions ----

@triton.jit
def print_kernel(x, y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.device_print("ints", tl.load(x + offs))
    tl.device_print("floats ", tl.load(y + offs))


def captured(fn):
    with tempfile.TemporaryFile(mode="w+b") as f:
        sys.stdout.flush()
        saved = os.dup(1)
        os.dup2(f.fileno(), 1)
        try:
            fn()
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)
        f.seek(0)
        return f.read().decode()


def t_print(r):
    B = 8
    x = rng.integers(-100000, 100000, B).astype(np.int32)
    y = (rng.standard_normal(B) * 100).astype(np.float32)
    text = captured(lambda: r.launch(print_kernel, {"x": "*i32", "y": "*fp32"}, {"BLOCK": B}, (2,), [x, y], warps=1))
    lines = [ln for ln in text.splitlines() if ln.strip()]
    # Triton prints "pid (p, 0, 0) idx (i) <prefix>: <value>" per element from each thread that holds it (a block of
    # 8 over 32 threads: each element from 4 threads): every copy must say the same
    got_i, got_f = {}, {}
    for ln in lines:
        head, _, val = ln.rpartition(":")
        pid = int(head.split("pid (")[1].split(",")[0])
        idx = int(head.split("idx (")[1].split(")")[0])
        d = got_i if "ints" in head else got_f
        if d.setdefault((pid, idx), val.strip()) != val.strip():
            raise AssertionError("device_print: two copies of pid %d idx %d differ: %r, %r" % (pid, idx, d[(pid, idx)], val))
    if len(got_i) != 2 * B or len(got_f) != 2 * B or len(lines) % (4 * B):
        raise AssertionError("device_print: %d lines, %d ints, %d floats:\n%s" % (len(lines), len(got_i), len(got_f), text[:500]))
    for p in range(2):
        for i in range(B):
            if int(got_i[(p, i)]) != x[i]:
                raise AssertionError("device_print int pid %d idx %d: %r, want %d" % (p, i, got_i[(p, i)], x[i]))
            if abs(float(got_f[(p, i)]) - float(y[i])) > 1e-5 * abs(float(y[i])) + 1e-6:
                raise AssertionError("device_print float pid %d idx %d: %r, want %r" % (p, i, got_f[(p, i)], float(y[i])))


@triton.jit
def assert_kernel(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m, other=0)
    tl.device_assert(v != 4242, "found the value 4242")
    tl.store(out + offs, v + 1, mask=m)


def t_assert(r):
    n, B = 300, 128
    x = rng.integers(0, 1000, n).astype(np.int32)
    out = np.full(n, -7, np.int32)
    sig = {"x": "*i32", "out": "*i32", "n": "i32"}
    r.launch(assert_kernel, sig, {"BLOCK": B}, ((n + B - 1) // B,), [x, out, n], debug=True)
    check("device_assert holds", out, x + 1)
    x[211] = 4242
    try:
        captured(lambda: r.launch(assert_kernel, sig, {"BLOCK": B}, ((n + B - 1) // B,), [x, out, n], debug=True))
    except Exception as e:  # noqa: BLE001
        if "4242" not in str(e):
            raise AssertionError("device_assert failed with a message that does not name it: %s" % e)
        return
    raise AssertionError("device_assert: the launch with a failing assert succeeded")


# ---- int64 ----

@triton.jit
def int64_kernel(x, out, stride, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    m = offs < n
    v = tl.load(x + offs * stride, mask=m, other=1)
    w = v * 6364136223846793005 + 1442695040888963407
    tl.store(out + offs * 4, w, mask=m)
    tl.store(out + offs * 4 + 1, (w >> 17) ^ (v << 5), mask=m)
    tl.store(out + offs * 4 + 2, v // 1000003 + v % 977, mask=m)
    tl.store(out + offs * 4 + 3, (w.to(tl.uint64) >> 33).to(tl.int64) + tl.where(v < 0, -v, v), mask=m)


def t_int64(r):
    n, B, stride = 301, 128, 3
    x = rng.integers(-2 ** 62, 2 ** 62, n * stride).astype(np.int64)
    out = np.full((n, 4), -7, np.int64)
    r.launch(int64_kernel, {"x": "*i64", "out": "*i64", "stride": "i64", "n": "i64"}, {"BLOCK": B}, ((n + B - 1) // B,),
             [x, out, stride, n])
    v = [int(t) for t in x[::stride][:n]]
    m64 = (1 << 64) - 1

    def s64(t):
        t &= m64
        return t - (1 << 64) if t >> 63 else t
    for i in range(n):
        w = s64(v[i] * 6364136223846793005 + 1442695040888963407)
        q = abs(v[i]) // 1000003 * (1 if v[i] >= 0 else -1)  # C's division truncates
        rem = abs(v[i]) % 977 * (1 if v[i] >= 0 else -1)  # and its remainder has the dividend's sign
        want = [w, s64((w >> 17) ^ (v[i] << 5)), q + rem, s64(((w & m64) >> 33) + abs(v[i]))]
        if list(int(t) for t in out[i]) != want:
            raise AssertionError("int64 row %d: got %s, want %s" % (i, list(out[i]), want))


# ---- atomics: every op, type, sem and scope ----

@triton.jit
def atomics_kernel(i32, u32, i64, f32, f16p, n, SEM: tl.constexpr, SCOPE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = offs % 97 - 40
    z = tl.zeros_like(offs)  # one address for every element: a block of pointers
    tl.atomic_add(i32 + 0 + z, v, mask=m, sem=SEM, scope=SCOPE)
    tl.atomic_max(i32 + 1 + z, v * 3, mask=m, sem=SEM, scope=SCOPE)
    tl.atomic_min(i32 + 2 + z, v * 3, mask=m, sem=SEM, scope=SCOPE)
    tl.atomic_and(i32 + 3 + z, ~(1 << (offs % 31)), mask=m, sem=SEM, scope=SCOPE)
    tl.atomic_or(i32 + 4 + z, 1 << (offs % 29), mask=m, sem=SEM, scope=SCOPE)
    tl.atomic_xor(i32 + 5 + z, offs * 69069, mask=m, sem=SEM, scope=SCOPE)
    tl.atomic_xchg(i32 + 6 + offs % 3, 5, mask=m, sem=SEM, scope=SCOPE)
    tl.atomic_cas(i32 + 9 + offs % 4, z, offs + 1, sem=SEM, scope=SCOPE)
    tl.atomic_max(u32 + 0 + z, (offs * 40503).to(tl.uint32), mask=m, sem=SEM, scope=SCOPE)
    tl.atomic_min(u32 + 1 + z, (offs * 40503 + 1).to(tl.uint32), mask=m, sem=SEM, scope=SCOPE)
    tl.atomic_add(i64 + 0 + z, v.to(tl.int64) * 10000000000, mask=m, sem=SEM, scope=SCOPE)
    tl.atomic_max(i64 + 1 + z, v.to(tl.int64) * -10000000000, mask=m, sem=SEM, scope=SCOPE)
    tl.atomic_add(f32 + offs % 5, v.to(tl.float32) * 0.5, mask=m, sem=SEM, scope=SCOPE)
    tl.atomic_max(f32 + 5 + z, v.to(tl.float32) * 0.25, mask=m, sem=SEM, scope=SCOPE)
    tl.atomic_min(f32 + 6 + z, v.to(tl.float32) * 0.25, mask=m, sem=SEM, scope=SCOPE)
    tl.atomic_add(f16p + offs % 2, (v % 4).to(tl.float16), mask=m, sem=SEM, scope=SCOPE)


def t_atomics(r):
    n, B = 1000, 256
    offs = np.arange(n, dtype=np.int64)
    v = offs % 97 - 40
    for sem in ("relaxed", "acquire", "release", "acq_rel"):
        for scope in ("gpu", "cta", "sys"):
            i32 = np.array([0, -2 ** 31, 2 ** 31 - 1, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0], np.int32)
            u32 = np.array([0, 2 ** 32 - 1], np.uint32)
            i64 = np.array([0, -2 ** 63], np.int64)
            f32 = np.array([0, 0, 0, 0, 0, -np.inf, np.inf], np.float32)
            f16p = np.zeros(2, np.float16)
            sig = {"i32": "*i32", "u32": "*u32", "i64": "*i64", "f32": "*fp32", "f16p": "*fp16", "n": "i32"}
            r.launch(atomics_kernel, sig, {"SEM": sem, "SCOPE": scope, "BLOCK": B}, ((n + B - 1) // B,), [i32, u32, i64, f32, f16p, n])
            where = "atomics %s %s" % (sem, scope)
            andm, orm, x = -1, 0, 0
            for o in range(n):
                andm &= ~(1 << (o % 31))
                orm |= 1 << (o % 29)
                x ^= o * 69069
            want = [v.sum(), (v * 3).max(), (v * 3).min(), np.int32(np.int64(andm & 0xFFFFFFFF).astype(np.uint32).view(np.int32)), orm,
                    np.uint32(x).view(np.int32), 5, 5, 5]
            check(where + " i32", i32[:9], np.array(want, np.float64))
            # cas: each of the 4 slots is taken by one of its offsets (the first to come), never changed after
            for s in range(4):
                if i32[9 + s] == 0 or (i32[9 + s] - 1) % 4 != s or i32[9 + s] > 1024:
                    raise AssertionError("%s cas slot %d: %d" % (where, s, i32[9 + s]))
            check(where + " u32", u32, np.array([((offs * 40503) & 0xFFFFFFFF).max(), ((offs * 40503 + 1) & 0xFFFFFFFF).min()], np.float64))
            if int(i64[0]) != int(v.sum()) * 10000000000 or int(i64[1]) != int((v * -10000000000).max()):
                raise AssertionError("%s i64: %s" % (where, i64))
            check(where + " f32", f32, np.array([(v[offs % 5 == k] * 0.5).sum() for k in range(5)] + [(v * .25).max(), (v * .25).min()]))
            check(where + " f16", f16p, np.array([np.fmod(v[offs % 2 == k], 4).sum() for k in range(2)], np.float64))


# ---- e5m2, bf16 ----

@triton.jit
def e5m2_kernel(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m)
    tl.store(out + offs, v.to(tl.float8e5).to(tl.float32), mask=m)


def e5m2_round(v):
    """f32 -> e5m2 (round to nearest even; past the largest finite, 57344, to inf as Triton's cvt does) -> f64."""
    h = v.astype(np.float16)  # e5m2 is f16's top byte: round f16 bits to 8
    u = h.view(np.uint16).astype(np.uint32)
    u = ((u + 0x7F + ((u >> 8) & 1)) >> 8) << 8
    return u.astype(np.uint16).view(np.float16).astype(np.float64)


def t_e5m2(r):
    n = 1001
    x = (rng.standard_normal(n) * 1000).astype(np.float32)
    x[:6] = [0.0, -0.0, 2.0 ** -16, 57344.0, -1.25, 3.0e-5]
    out = np.full(n, np.nan, np.float32)
    r.launch(e5m2_kernel, {"x": "*fp32", "out": "*fp32", "n": "i32"}, {"BLOCK": 256}, ((n + 255) // 256,), [x, out, n])
    # two roundings (f32 -> f16 -> e5m2) can differ from one at the halfway points: inputs with f16-exact values only
    want = e5m2_round(x)
    exact = x.astype(np.float16).astype(np.float32) == x
    check("e5m2 round trip (f16-exact inputs)", out[exact], want[exact])
    near = np.abs(out - x.astype(np.float64)) <= np.abs(x) * 2.0 ** -3 + 2.0 ** -16
    if not near.all():
        i = int(np.argmax(~near))
        raise AssertionError("e5m2 round trip %d: %r -> %r" % (i, x[i], out[i]))
    if r.cap >= 89:
        M, N, K = 50, 70, 77
        a8 = rng.integers(0, 256, (M, K)).astype(np.uint8)
        b8 = rng.integers(0, 256, (K, N)).astype(np.uint8)
        a8[(a8 & 0x7C) == 0x7C] = 0x3C
        b8[(b8 & 0x7C) == 0x7C] = 0x3C
        dec = lambda u: (u.astype(np.uint16) << 8).view(np.float16).astype(np.float64)  # noqa: E731
        cf = np.full((M, N), np.nan, np.float32)
        sig = {"a": "*fp8e5", "b": "*fp8e5", "c": "*fp32", "M": "i32", "N": "i32", "K": "i32"}
        r.launch(T.dot_kernel, sig, {"IEEE": False, "INT": False, "BM": 64, "BN": 64, "BK": 64}, ((M + 63) // 64, (N + 63) // 64),
                 [a8, b8, cf, M, N, K])
        ad, bd = dec(a8), dec(b8)
        check("dot e5m2", cf, ad @ bd, atol=2.0 ** -20 * (np.abs(ad) @ np.abs(bd)).max())


@triton.jit
def bf16_kernel(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m, other=0.)
    b = tl.load(y + offs, mask=m, other=0.)
    tl.store(out + offs, a + b, mask=m)
    tl.store(out + n + offs, a * b, mask=m)
    tl.store(out + 2 * n + offs, tl.fma(a, b, a), mask=m)
    tl.store(out + 3 * n + offs, tl.maximum(a, b), mask=m)
    tl.store(out + 4 * n + offs, tl.exp(a.to(tl.float32)).to(tl.bfloat16), mask=m)
    tl.store(out + 5 * n + offs, tl.sqrt(tl.abs(b).to(tl.float32)).to(tl.bfloat16), mask=m)
    tl.store(out + 6 * n + offs, tl.sigmoid(a.to(tl.float32)).to(tl.bfloat16), mask=m)
    tl.store(out + 7 * n + offs, (a - b).to(tl.float32).to(tl.bfloat16), mask=m)


def t_bf16(r):
    n = 555
    xb = bf16_bits(rng.standard_normal(n).astype(np.float32) * 2)
    yb = bf16_bits(rng.standard_normal(n).astype(np.float32) * 2)
    out = np.full((8, n), 0x7FC1, np.uint16)
    r.launch(bf16_kernel, {"x": "*bf16", "y": "*bf16", "out": "*bf16", "n": "i32"}, {"BLOCK": 256}, ((n + 255) // 256,),
             [xb, yb, out, n])
    a, b = bf16_value(xb).astype(np.float64), bf16_value(yb).astype(np.float64)
    got = bf16_value(out).astype(np.float64)
    one = lambda w: bf16_round(np.asarray(w, np.float32)).astype(np.float64)  # noqa: E731  (one rounding of the f32 result)
    check("bf16 add", got[0], one(a + b))
    check("bf16 mul", got[1], one(a * b))
    check("bf16 fma", got[2], a * b + a, rtol=2.0 ** -8)  # one rounding (fma.rn.bf16) or f32 then bf16
    check("bf16 max", got[3], np.maximum(a, b))
    check("bf16 exp", got[4], np.exp(a), rtol=2.0 ** -8)
    check("bf16 sqrt", got[5], np.sqrt(np.abs(b)), rtol=2.0 ** -8)
    check("bf16 sigmoid", got[6], 1 / (1 + np.exp(-a)), rtol=2.0 ** -8)
    check("bf16 sub", got[7], one(a - b))


# ---- libdevice's wider set ----

LIBDEVICE = [  # name, float64 reference (None: checked another way), input range; in libdevice_kernel's order
    ("asin", lambda x, y: np.arcsin(x), (-0.99, 0.99)),
    ("acos", lambda x, y: np.arccos(x), (-0.99, 0.99)),
    ("atan", lambda x, y: np.arctan(x), (-20, 20)),
    ("atan2", lambda x, y: np.arctan2(x, y), (-20, 20)),
    ("sinh", lambda x, y: np.sinh(x), (-10, 10)),
    ("cosh", lambda x, y: np.cosh(x), (-10, 10)),
    ("asinh", lambda x, y: np.arcsinh(x), (-50, 50)),
    ("acosh", lambda x, y: np.arccosh(np.abs(x) + 1), (-50, 50)),
    ("atanh", lambda x, y: np.arctanh(x), (-0.99, 0.99)),
    ("log1p", lambda x, y: np.log1p(x), (-0.9, 100)),
    ("expm1", lambda x, y: np.expm1(x), (-5, 5)),
    ("cbrt", lambda x, y: np.cbrt(x), (-1000, 1000)),
    ("hypot", lambda x, y: np.hypot(x, y), (-1000, 1000)),
    ("fmod", lambda x, y: np.fmod(x, y), (-1000, 1000)),
    ("erfinv", None, (-0.99, 0.99)),
    ("lgamma", lambda x, y: np.vectorize(math.lgamma)(np.abs(x) + 0.1), (-20, 20)),
    ("exp2", lambda x, y: np.exp2(x), (-50, 50)),
    ("log2", lambda x, y: np.log2(np.abs(x)), (-1e6, 1e6)),
    ("log10", lambda x, y: np.log10(np.abs(x)), (-1e6, 1e6)),
    ("nextafter", None, (-10, 10)),
]


@triton.jit
def libdevice_kernel(x, y, out, n, WHICH: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m, other=0.5)
    w = tl.load(y + offs, mask=m, other=0.5)
    if WHICH == 0:
        r = libdevice.asin(v)
    elif WHICH == 1:
        r = libdevice.acos(v)
    elif WHICH == 2:
        r = libdevice.atan(v)
    elif WHICH == 3:
        r = libdevice.atan2(v, w)
    elif WHICH == 4:
        r = libdevice.sinh(v)
    elif WHICH == 5:
        r = libdevice.cosh(v)
    elif WHICH == 6:
        r = libdevice.asinh(v)
    elif WHICH == 7:
        r = libdevice.acosh(tl.abs(v) + 1)
    elif WHICH == 8:
        r = libdevice.atanh(v)
    elif WHICH == 9:
        r = libdevice.log1p(v)
    elif WHICH == 10:
        r = libdevice.expm1(v)
    elif WHICH == 11:
        r = libdevice.cbrt(v)
    elif WHICH == 12:
        r = libdevice.hypot(v, w)
    elif WHICH == 13:
        r = libdevice.fmod(v, w)
    elif WHICH == 14:
        r = libdevice.erfinv(v)
    elif WHICH == 15:
        r = libdevice.lgamma(tl.abs(v) + 0.1)
    elif WHICH == 16:
        r = libdevice.exp2(v)
    elif WHICH == 17:
        r = libdevice.log2(tl.abs(v))
    elif WHICH == 18:
        r = libdevice.log10(tl.abs(v))
    else:
        r = libdevice.nextafter(v, w)
    tl.store(out + offs, r, mask=m)


def t_libdevice(r):
    n = 333
    for dt, sigt, rel in ((np.float32, "*fp32", 2e-6), (np.float64, "*fp64", 1e-14)):
        for i, (name, ref, (lo, hi)) in enumerate(LIBDEVICE):
            x = rng.uniform(lo, hi, n).astype(dt)
            y = rng.uniform(lo, hi, n).astype(dt)
            y[np.abs(y) < 1e-3] = 1.5
            out = np.full(n, np.nan, dt)
            r.launch(libdevice_kernel, {"x": sigt, "y": sigt, "out": sigt, "n": "i32"}, {"WHICH": i, "BLOCK": 128},
                     ((n + 127) // 128,), [x, y, out, n])
            xd, yd = x.astype(np.float64), y.astype(np.float64)
            if name == "erfinv":
                got = out.astype(np.float64)
                check("libdevice erfinv %s (erf of it)" % dt.__name__, np.vectorize(math.erf)(got), xd, atol=4 * rel + 1e-15)
                continue
            if name == "nextafter":
                want = np.nextafter(x, y)
                if not np.array_equal(out, want):
                    raise AssertionError("libdevice nextafter %s differs" % dt.__name__)
                continue
            want = ref(xd, yd)
            atol = rel * 4 if name in ("fmod", "atan2", "lgamma", "log2", "log10", "expm1", "log1p", "asin", "atanh") else 0
            if name == "fmod":
                atol = rel * 1000 * 4
            check("libdevice %s %s" % (name, dt.__name__), out, want, rtol=rel * 2, atol=atol)


# ---- tensor descriptors ----

@triton.jit
def desc_copy_kernel(src, dst, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    ds = tl.make_tensor_descriptor(src, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    dd = tl.make_tensor_descriptor(dst, shape=[N, M], strides=[M, 1], block_shape=[BN, BM])
    t = ds.load([pm * BM, pn * BN])
    dd.store([pn * BN, pm * BM], tl.trans(t) * 2)


def t_tensor_desc(r):
    M, N = 76, 52  # TMA wants strides of 16-byte multiples: rows of N * 4 and M * 4 bytes
    src = rng.standard_normal((M, N)).astype(np.float32)
    dst = np.full((N, M), np.nan, np.float32)
    r.launch(desc_copy_kernel, {"src": "*fp32", "dst": "*fp32", "M": "i32", "N": "i32"}, {"BM": 32, "BN": 16},
             ((M + 31) // 32, (N + 15) // 16), [src, dst, M, N])
    check("tensor descriptor transposed copy", dst, src.T.astype(np.float64) * 2)


# ---- stream-K ----

@triton.jit
def streamk_kernel(a, b, c, M, N, K, ITERS, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    npn = tl.cdiv(N, BN)
    k_tiles = tl.cdiv(K, BK)
    total = tl.cdiv(M, BM) * npn * k_tiles
    it = pid * ITERS
    end = min(it + ITERS, total)
    while it < end:
        tile_id = it // k_tiles
        k_first = it % k_tiles
        k_last = min(k_tiles, k_first + (end - it))
        rm = (tile_id // npn) * BM + tl.arange(0, BM)
        rn = (tile_id % npn) * BN + tl.arange(0, BN)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for kt in range(k_first, k_last):
            ka = kt * BK + tl.arange(0, BK)
            ta = tl.load(a + rm[:, None] * K + ka[None, :], mask=(rm[:, None] < M) & (ka[None, :] < K), other=0.)
            tb = tl.load(b + ka[:, None] * N + rn[None, :], mask=(ka[:, None] < K) & (rn[None, :] < N), other=0.)
            acc = tl.dot(ta, tb, acc)
        tl.atomic_add(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N), sem="relaxed")
        it += k_last - k_first


def t_streamk(r):
    M, N, K = 100, 90, 300
    a, b = f16(rng.integers(-3, 4, (M, K))), f16(rng.integers(-3, 4, (K, N)))
    c = np.zeros((M, N), np.float32)  # the partial tiles are added into it
    total = 2 * 2 * ((K + 31) // 32)
    progs = 7
    iters = (total + progs - 1) // progs  # 10 k-steps of 4 tiles over 7 programs: most programs split a tile
    sig = {"a": "*fp16", "b": "*fp16", "c": "*fp32", "M": "i32", "N": "i32", "K": "i32", "ITERS": "i32"}
    r.launch(streamk_kernel, sig, {"BM": 64, "BN": 64, "BK": 32}, (progs,), [a, b, c, M, N, K, iters], warps=8, stages=4)
    check("stream-K", c, a.astype(np.float64) @ b.astype(np.float64))


# ---- more tl.dot forms ----

@triton.jit
def dot2_kernel(a, b, c, M, N, K, PREC: tl.constexpr, OUT16: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float16 if OUT16 else (tl.int32 if a.dtype.element_ty == tl.int8 else tl.float32))
    for k0 in range(0, K, BK):
        ka = k0 + rk
        ma = (rm[:, None] < M) & (ka[None, :] < K)
        mb = (ka[:, None] < K) & (rn[None, :] < N)
        ta = tl.load(a + rm[:, None] * K + ka[None, :], mask=ma)
        tb = tl.load(b + ka[:, None] * N + rn[None, :], mask=mb)
        ta = tl.where(ma, ta, tl.zeros_like(ta))  # masked-off lanes: 0 (no `other` converts to fp8)
        tb = tl.where(mb, tb, tl.zeros_like(tb))
        if PREC == "":
            acc = tl.dot(ta, tb, acc, out_dtype=acc.dtype)
        else:
            acc = tl.dot(ta, tb, acc, input_precision=PREC)
    tl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def t_dot2(r):
    M, N, K = 77, 70, 93
    grid = lambda bm, bn: ((M + bm - 1) // bm, (N + bn - 1) // bn)  # noqa: E731
    af = rng.standard_normal((M, K)).astype(np.float32)
    bf = rng.standard_normal((K, N)).astype(np.float32)
    want = af.astype(np.float64) @ bf.astype(np.float64)
    mag = np.abs(af.astype(np.float64)) @ np.abs(bf.astype(np.float64))
    sig = {"a": "*fp32", "b": "*fp32", "c": "*fp32", "M": "i32", "N": "i32", "K": "i32"}
    for prec, rel in (("tf32", 2.0 ** -10), ("tf32x3", 2.0 ** -20)):
        c = np.full((M, N), np.nan, np.float32)
        r.launch(dot2_kernel, sig, {"PREC": prec, "OUT16": False, "BM": 64, "BN": 64, "BK": 32}, grid(64, 64),
                 [af, bf, c, M, N, K], warps=8)
        err = np.abs(c - want)
        bound = rel * mag + 1e-6
        if np.isnan(c).any() or not (err <= bound).all():
            i = np.unravel_index(np.argmax(err - bound), err.shape)
            raise AssertionError("dot %s: error %g at %s (bound %g)" % (prec, err[i], i, bound[i]))
        if prec == "tf32" and (err <= 2.0 ** -22 * mag).all():
            raise AssertionError("dot tf32: every element as exact as f32: the operands were not rounded to tf32")
    a16, b16 = f16(rng.integers(-3, 4, (M, K))), f16(rng.integers(-3, 4, (K, N)))
    c16 = np.full((M, N), np.nan, np.float16)
    sig16 = {"a": "*fp16", "b": "*fp16", "c": "*fp16", "M": "i32", "N": "i32", "K": "i32"}
    r.launch(dot2_kernel, sig16, {"PREC": "", "OUT16": True, "BM": 64, "BN": 64, "BK": 32}, grid(64, 64),
             [a16, b16, c16, M, N, K])
    check("dot f16 accumulator", c16, a16.astype(np.float64) @ b16.astype(np.float64))  # |partial sums| < 2048: exact
    a8 = rng.integers(-128, 128, (M, K)).astype(np.int8)
    b8 = rng.integers(-128, 128, (K, N)).astype(np.int8)
    ci = np.full((M, N), -7, np.int32)
    sig8 = {"a": "*i8", "b": "*i8", "c": "*i32", "M": "i32", "N": "i32", "K": "i32"}
    r.launch(dot2_kernel, sig8, {"PREC": "", "OUT16": False, "BM": 128, "BN": 64, "BK": 64}, grid(128, 64),
             [a8, b8, ci, M, N, K], warps=8, stages=4)
    check("dot i8 (8 warps)", ci, a8.astype(np.int64) @ b8.astype(np.int64))
    if r.cap >= 89:  # e4m3 x e5m2
        x = rng.integers(0, 256, (M, K)).astype(np.uint8)
        y = rng.integers(0, 256, (K, N)).astype(np.uint8)
        x[(x & 0x7F) == 0x7F] = 0x38
        y[(y & 0x7C) == 0x7C] = 0x3C
        xd = T.e4m3_decode(x)
        yd = (y.astype(np.uint16) << 8).view(np.float16).astype(np.float64)
        cf = np.full((M, N), np.nan, np.float32)
        sigm = {"a": "*fp8e4nv", "b": "*fp8e5", "c": "*fp32", "M": "i32", "N": "i32", "K": "i32"}
        r.launch(dot2_kernel, sigm, {"PREC": "", "OUT16": False, "BM": 64, "BN": 64, "BK": 64}, grid(64, 64),
                 [x, y, cf, M, N, K])
        check("dot e4m3 x e5m2", cf, xd @ yd, atol=2.0 ** -20 * (np.abs(xd) @ np.abs(yd)).max())


# ---- sort, topk, flip, cat, cumprod, xor_sum ----

@triton.jit
def order_kernel(x, desc, top, flp, cat, cp, xs, n, BLOCK: tl.constexpr, KTOP: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + row * n + offs, mask=m, other=-float("inf"))
    tl.store(desc + row * BLOCK + offs, tl.sort(v, dim=0, descending=True))
    tl.store(top + row * KTOP + tl.arange(0, KTOP), tl.topk(v, KTOP, dim=0))
    tl.store(flp + row * BLOCK + offs, tl.flip(v, 0))
    h = tl.arange(0, BLOCK // 2)
    lo = tl.load(x + row * n + h, mask=h < n, other=0.)
    hi = tl.load(x + row * n + BLOCK // 2 + h, mask=BLOCK // 2 + h < n, other=0.)
    tl.store(cat + row * BLOCK + offs, tl.cat(hi, lo, can_reorder=False))
    u = tl.where(m, v, 1.)
    tl.store(cp + row * n + offs, tl.cumprod(tl.where(u > 0, 1.0625, 0.9375), axis=0), mask=m)
    bits = tl.where(m, v.to(tl.int32, bitcast=True), 0)
    tl.store(xs + row, tl.xor_sum(bits, axis=0))


def t_order(r):
    rows, n, B, KT = 4, 201, 256, 16
    x = (rng.standard_normal((rows, n)) * 100).astype(np.float32)
    desc = np.full((rows, B), np.nan, np.float32)
    top = np.full((rows, KT), np.nan, np.float32)
    flp = np.full((rows, B), np.nan, np.float32)
    cat = np.full((rows, B), np.nan, np.float32)
    cp = np.full((rows, n), np.nan, np.float32)
    xs = np.full(rows, 7, np.int32)
    sig = {"x": "*fp32", "desc": "*fp32", "top": "*fp32", "flp": "*fp32", "cat": "*fp32", "cp": "*fp32", "xs": "*i32",
           "n": "i32"}
    r.launch(order_kernel, sig, {"BLOCK": B, "KTOP": KT}, (rows,), [x, desc, top, flp, cat, cp, xs, n])
    padded = np.concatenate([x, np.full((rows, B - n), -np.inf, np.float32)], axis=1)
    if not np.array_equal(desc, -np.sort(-padded, axis=1)):
        raise AssertionError("sort descending differs")
    if not np.array_equal(top, -np.sort(-padded, axis=1)[:, :KT]):
        raise AssertionError("topk differs: %s vs %s" % (top[0][:4], -np.sort(-padded, axis=1)[0, :4]))
    if not np.array_equal(flp, padded[:, ::-1]):
        raise AssertionError("flip differs")
    zp = np.concatenate([x, np.zeros((rows, B - n), np.float32)], axis=1)
    if not np.array_equal(cat, np.concatenate([zp[:, B // 2:], zp[:, :B // 2]], axis=1)):
        raise AssertionError("cat differs")
    f = np.where(x > 0, 1.0625, 0.9375)
    check("cumprod", cp, np.cumprod(f, axis=1), rtol=1e-5)
    check("xor_sum", xs, np.bitwise_xor.reduce(x.view(np.int32), axis=1))


# ---- random numbers ----

@triton.jit
def random_kernel(out, nrm, n, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    r0, r1, r2, r3 = tl.randint4x(seed, offs)
    tl.store(out + offs * 4, r0, mask=m)
    tl.store(out + offs * 4 + 1, r1, mask=m)
    tl.store(out + offs * 4 + 2, r2, mask=m)
    tl.store(out + offs * 4 + 3, r3, mask=m)
    tl.store(nrm + offs, tl.randn(seed, offs), mask=m)


def t_random(r):
    n, seed = 1003, 0x0BADC0DE12345
    out = np.full((n, 4), 7, np.uint32)
    nrm = np.full(n, np.nan, np.float32)
    r.launch(random_kernel, {"out": "*u32", "nrm": "*fp32", "n": "i32", "seed": "i64"}, {"BLOCK": 256}, ((n + 255) // 256,),
             [out, nrm, n, seed])
    want = np.stack(T.philox4(seed, np.arange(n)), axis=1)
    if not np.array_equal(out, want):
        i = int(np.argmax((out != want).any(axis=1)))
        raise AssertionError("randint4x offset %d: %s, want %s" % (i, out[i], want[i]))

    def uni(u):
        x = u.view(np.int32).astype(np.int64)
        return np.where(x < 0, -x - 1, x).astype(np.float64) * 4.6566127342e-10
    u1 = np.maximum(1e-7, uni(want[:, 0]))
    u2 = uni(want[:, 1])
    check("randn", nrm, np.sqrt(-2 * np.log(u1)) * np.cos(6.283185307179586 * u2), rtol=1e-5, atol=1e-5)


# ---- rounding ----

@triton.jit
def rounding_kernel(x, y, o32, o16, ob, ou, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m, other=1.)
    b = tl.load(y + offs, mask=m, other=1.)
    tl.store(o32 + offs * 4, tl.div_rn(a, b), mask=m)
    tl.store(o32 + offs * 4 + 1, tl.sqrt_rn(tl.abs(a)), mask=m)
    tl.store(o32 + offs * 4 + 2, tl.fdiv(a, b), mask=m)
    tl.store(o32 + offs * 4 + 3, tl.clamp(a, -0.5, 0.75), mask=m)
    tl.store(o16 + offs, a.to(tl.float16, fp_downcast_rounding="rtz"), mask=m)
    tl.store(ob + offs, a.to(tl.bfloat16, fp_downcast_rounding="rtz"), mask=m)
    ua = a.to(tl.uint32, bitcast=True)
    ub = b.to(tl.uint32, bitcast=True)
    tl.store(ou + offs, tl.umulhi(ua, ub), mask=m)


def t_rounding(r):
    n = 777
    x = (rng.standard_normal(n) * 1000).astype(np.float32)
    y = (rng.standard_normal(n) * 10).astype(np.float32)
    o32 = np.full((n, 4), np.nan, np.float32)
    o16 = np.full(n, np.nan, np.float16)
    ob = np.full(n, 0x7FC1, np.uint16)
    ou = np.full(n, 7, np.uint32)
    sig = {"x": "*fp32", "y": "*fp32", "o32": "*fp32", "o16": "*fp16", "ob": "*bf16", "ou": "*u32", "n": "i32"}
    r.launch(rounding_kernel, sig, {"BLOCK": 256}, ((n + 255) // 256,), [x, y, o32, o16, ob, ou, n])
    if not np.array_equal(o32[:, 0], x / y):
        raise AssertionError("div_rn is not correctly rounded")
    if not np.array_equal(o32[:, 1], np.sqrt(np.abs(x))):
        raise AssertionError("sqrt_rn is not correctly rounded")
    check("fdiv", o32[:, 2], (x.astype(np.float64) / y), rtol=2.0 ** -22)
    check("clamp", o32[:, 3], np.clip(x, -0.5, 0.75).astype(np.float64))
    h = x.astype(np.float16)  # nearest; toward zero is it or the next f16 toward zero
    toward = np.where(np.abs(h.astype(np.float32)) > np.abs(x), np.nextafter(h, np.float16(0)), h)
    check("f32 -> f16 rtz", o16, toward.astype(np.float64))
    check("f32 -> bf16 rtz", ob, (x.view(np.uint32) >> 16).astype(np.float64))
    p = (x.view(np.uint32).astype(np.uint64) * y.view(np.uint32).astype(np.uint64)) >> np.uint64(32)
    check("umulhi", ou, p.astype(np.float64))


# ---- the last-program reduction: atomic ticket, atomic_load / atomic_store ----

@triton.jit
def last_block_kernel(x, partial, ticket, out, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    s = tl.sum(tl.load(x + offs, mask=offs < n, other=0), axis=0)
    tl.atomic_store(partial + pid, s, sem="release", scope="gpu")
    t = tl.atomic_add(ticket, 1, sem="acq_rel", scope="gpu")
    if t == tl.num_programs(0) - 1:
        total = 0
        for p in range(tl.num_programs(0)):
            total += tl.atomic_load(partial + p, sem="acquire", scope="gpu")
        tl.store(out, total)


def t_last_block(r):
    n, B = 10007, 512
    x = rng.integers(-1000, 1000, n).astype(np.int32)
    progs = (n + B - 1) // B
    partial = np.full(progs, -7, np.int32)
    ticket = np.zeros(1, np.int32)
    out = np.full(1, -7, np.int32)
    r.launch(last_block_kernel, {"x": "*i32", "partial": "*i32", "ticket": "*i32", "out": "*i32", "n": "i32"}, {"BLOCK": B},
             (progs,), [x, partial, ticket, out, n])
    check("last-program sum", out, np.array([x.astype(np.int64).sum()]))
    check("ticket", ticket, np.array([progs]))


# ---- tensor descriptors: 3-D, NaN padding, 8 warps ----

@triton.jit
def desc3_kernel(src, dst, D0, D1, D2, B0: tl.constexpr, B1: tl.constexpr, B2: tl.constexpr):
    p0 = tl.program_id(0)
    p1 = tl.program_id(1)
    ds = tl.make_tensor_descriptor(src, shape=[D0, D1, D2], strides=[D1 * D2, D2, 1], block_shape=[B0, B1, B2],
                                   padding_option="nan")
    dd = tl.make_tensor_descriptor(dst, shape=[D0 + B0, D1 + B1, B2], strides=[(D1 + B1) * B2, B2, 1], block_shape=[B0, B1, B2])
    t = ds.load([p0 * B0, p1 * B1, 0])
    dd.store([p0 * B0, p1 * B1, 0], t + 1)


def t_desc3(r):
    D0, D1, D2, B0, B1, B2 = 5, 37, 24, 2, 16, 32  # the box is wider than D2: its last 8 columns NaN
    src = rng.standard_normal((D0, D1, D2)).astype(np.float32)
    g0, g1 = (D0 + B0 - 1) // B0, (D1 + B1 - 1) // B1
    dst = np.full((D0 + B0, D1 + B1, B2), -7, np.float32)
    r.launch(desc3_kernel, {"src": "*fp32", "dst": "*fp32", "D0": "i32", "D1": "i32", "D2": "i32"},
             {"B0": B0, "B1": B1, "B2": B2}, (g0, g1), [src, dst, D0, D1, D2], warps=8)
    want = np.full((D0 + B0, D1 + B1, B2), -7.0)
    want[:g0 * B0, :g1 * B1, :] = np.nan  # the boxes written: NaN where the load was past the source
    want[:D0, :D1, :D2] = src + 1.0
    same = (dst == want) | (np.isnan(dst) & np.isnan(want))
    if not same.all():
        i = np.unravel_index(np.argmin(same), same.shape)
        raise AssertionError("3-D descriptor copy at %s: got %r, want %r" % (i, dst[i], want[i]))


# ---- batched, transposed, tiny and f64 dots ----

@triton.jit
def dot3_kernel(a, b, c, M, N, K, TRANS_A: tl.constexpr, NB: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                BK: tl.constexpr):
    rb = tl.arange(0, NB)
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((NB, BM, BN), dtype=tl.float64 if a.dtype.element_ty == tl.float64 else tl.float32)
    for k0 in range(0, K, BK):
        ka = k0 + rk
        if TRANS_A:  # A stored [NB, K, M]: loaded as [NB, BK, BM] and transposed
            ta = tl.load(a + rb[:, None, None] * (M * K) + ka[None, :, None] * M + rm[None, None, :],
                         mask=(ka[None, :, None] < K) & (rm[None, None, :] < M), other=0.)
            ta = tl.permute(ta, (0, 2, 1))
        else:
            ta = tl.load(a + rb[:, None, None] * (M * K) + rm[None, :, None] * K + ka[None, None, :],
                         mask=(rm[None, :, None] < M) & (ka[None, None, :] < K), other=0.)
        tb = tl.load(b + rb[:, None, None] * (K * N) + ka[None, :, None] * N + rn[None, None, :],
                     mask=(ka[None, :, None] < K) & (rn[None, None, :] < N), other=0.)
        acc = tl.dot(ta, tb, acc)
    tl.store(c + rb[:, None, None] * (M * N) + rm[None, :, None] * N + rn[None, None, :], acc,
             mask=(rm[None, :, None] < M) & (rn[None, None, :] < N))


def t_dot3(r):
    NB, M, N, K = 2, 37, 45, 50
    for dt, sigt, trans, warps, (BM, BN, BK) in ((np.float16, "*fp16", False, 4, (32, 32, 16)),
                                                  (np.float16, "*fp16", True, 4, (32, 64, 32)),
                                                  (np.float16, "*fp16", False, 1, (16, 16, 16)),
                                                  (np.float64, "*fp64", False, 4, (32, 32, 16)),
                                                  (np.float64, "*fp64", True, 2, (16, 32, 8))):
        a = rng.integers(-3, 4, (NB, M, K)).astype(dt)
        b = rng.integers(-3, 4, (NB, K, N)).astype(dt)
        if dt == np.float64:  # f64: full-precision values, the products exact to 2^-40 of their sizes
            a = a + rng.standard_normal((NB, M, K))
            b = b + rng.standard_normal((NB, K, N))
        cdt = np.float64 if dt == np.float64 else np.float32
        c = np.full((NB, M, N), np.nan, cdt)
        a_in = np.ascontiguousarray(a.transpose(0, 2, 1)) if trans else a
        sig = {"a": sigt, "b": sigt, "c": "*fp64" if dt == np.float64 else "*fp32", "M": "i32", "N": "i32", "K": "i32"}
        r.launch(dot3_kernel, sig, {"TRANS_A": trans, "NB": NB, "BM": BM, "BN": BN, "BK": BK},
                 ((M + BM - 1) // BM, (N + BN - 1) // BN), [a_in, b, c, M, N, K], warps=warps)
        want = np.matmul(a.astype(np.float64), b.astype(np.float64))
        tol = 1e-13 * np.matmul(np.abs(a), np.abs(b)).max() if dt == np.float64 else 0
        check("batched dot %s%s %d warps %dx%dx%d" % (dt.__name__, " A transposed" if trans else "", warps, BM, BN, BK),
              c, want, atol=tol)


# ---- tl.extra.cuda: globaltimer, smid, num_threads, num_warps, griddepcontrol ----

@triton.jit
def cuda_extra_kernel(x, out, info, n, GDC: tl.constexpr, BLOCK: tl.constexpr):
    t0 = tcuda.globaltimer()
    if GDC:
        tcuda.gdc_wait()  # griddepcontrol.wait: the previous grid's memory is visible (no dependency here: returns)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) * 3, mask=m)
    if GDC:
        tcuda.gdc_launch_dependents()
    t1 = tcuda.globaltimer()
    pid = tl.program_id(0)
    tl.store(info + pid * 4, t1 - t0)
    tl.store(info + pid * 4 + 1, tcuda.smid().to(tl.int64))
    tl.store(info + pid * 4 + 2, tl.full((), tcuda.num_threads(), tl.int64))
    tl.store(info + pid * 4 + 3, tl.full((), tcuda.num_warps(), tl.int64))


def t_cuda_extra(r):
    n, B = 1000, 256
    x = rng.standard_normal(n).astype(np.float32)
    for gdc in ((False, True) if r.cap >= 90 else (False,)):
        out = np.full(n, np.nan, np.float32)
        progs = (n + B - 1) // B
        info = np.full((progs, 4), -7, np.int64)
        r.launch(cuda_extra_kernel, {"x": "*fp32", "out": "*fp32", "info": "*i64", "n": "i32"}, {"GDC": gdc, "BLOCK": B},
                 (progs,), [x, out, info, n], warps=8)
        check("cuda extra%s: out" % (" gdc" if gdc else ""), out, (x * np.float32(3)).astype(np.float64))
        if (info[:, 0] < 0).any() or (info[:, 1] < 0).any() or (info[:, 2] != 256).any() or (info[:, 3] != 8).any():
            raise AssertionError("cuda extra: globaltimer delta, smid, num_threads, num_warps per program: %s" % info.tolist())


# ---- attention forward through tensor descriptors, warp-specialized on 90 ----

@triton.jit
def attn_fwd_desc_kernel(Q, K, V, O, N, scale, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, WS: tl.constexpr):
    start_m = tl.program_id(0) * BM
    dq = tl.make_tensor_descriptor(Q, shape=[N, D], strides=[D, 1], block_shape=[BM, D])
    dk = tl.make_tensor_descriptor(K, shape=[N, D], strides=[D, 1], block_shape=[BN, D])
    dv = tl.make_tensor_descriptor(V, shape=[N, D], strides=[D, 1], block_shape=[BN, D])
    do = tl.make_tensor_descriptor(O, shape=[N, D], strides=[D, 1], block_shape=[BM, D])
    q = dq.load([start_m, 0])
    m_i = tl.full((BM,), -float("inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    for start_n in tl.range(0, N, BN, warp_specialize=WS):
        k = dk.load([start_n, 0])
        s = tl.dot(q, tl.trans(k)) * scale
        s = tl.where((start_n + tl.arange(0, BN))[None, :] < N, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = dv.load([start_n, 0])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_new
    do.store([start_m, 0], (acc / l_i[:, None]).to(tl.float16))


def t_attn_fwd_ws(r):
    N, D, BM, BN = 200, 64, 64, 64
    scale = 1 / math.sqrt(D)
    q, k, v = (f16(rng.standard_normal((N, D)) * 0.5) for _ in range(3))
    s = q.astype(np.float64) @ k.astype(np.float64).T * scale
    p = np.exp(s - s.max(axis=1, keepdims=True))
    want = (p / p.sum(axis=1, keepdims=True)) @ v.astype(np.float64)
    for ws in ((False, True) if r.cap >= 90 else (False,)):
        o = np.full((N, D), np.nan, np.float16)
        r.launch(attn_fwd_desc_kernel, {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "O": "*fp16", "N": "i32", "scale": "fp32"},
                 {"D": D, "BM": BM, "BN": BN, "WS": ws}, ((N + BM - 1) // BM,), [q, k, v, o, N, scale], warps=4, stages=2)
        check("attention forward (descriptors%s)" % (", warp-specialized" if ws else ""), o, want, atol=4e-3, rtol=4e-3)


TESTS = [("attn_bwd", t_attn_bwd), ("grouped_gemm", t_grouped_gemm), ("persistent", t_persistent),
         ("matmul_w16", t_matmul_w16), ("dot_scaled", t_dot_scaled), ("scan", t_scan), ("histogram", t_histogram),
         ("gather", t_gather), ("join_split", t_join_split), ("inline_asm", t_inline_asm), ("print", t_print),
         ("assert", t_assert), ("int64", t_int64), ("atomics", t_atomics), ("e5m2", t_e5m2), ("bf16", t_bf16),
         ("libdevice", t_libdevice), ("tensor_desc", t_tensor_desc), ("streamk", t_streamk), ("dot2", t_dot2),
         ("order", t_order), ("random", t_random), ("rounding", t_rounding), ("last_block", t_last_block), ("desc3", t_desc3),
         ("dot3", t_dot3), ("cuda_extra", t_cuda_extra),
         ("attn_fwd_ws", t_attn_fwd_ws)]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--arch", default="80,89,90", help="capabilities: 80 runs on emu:sm_80, 89 on emu:sm_89, 90 on emu:sm_90a")
    p.add_argument("--only", help="tests by name, comma-separated")
    p.add_argument("--keep", help="keep the PTX files in this directory")
    p.add_argument("--racecheck", action="store_true", help="run with the emulator's race checks")
    p.add_argument("--debug", action="store_true", help="compile with debug=True (device_assert, Triton's overflow checks)")
    p.add_argument("--opt", action="append", default=[], metavar="KEY=VALUE",
                   help="one more triton.compile option for every kernel, e.g. instrumentation_mode=consan, maxnreg=64")
    a = p.parse_args()
    extra = {}
    for kv in a.opt:
        k, _, v = kv.partition("=")
        extra[k] = int(v) if v.isdigit() else {"True": True, "False": False}.get(v, v)
    if a.keep:
        os.makedirs(a.keep, exist_ok=True)
    print("triton %s, tile %s" % (triton.__version__, tile.version()))
    only = set(a.only.split(",")) if a.only else None
    bad = 0
    for cap in (int(c) for c in a.arch.split(",")):
        devname = ("emu:sm_90a" if cap == 90 else "emu:sm_%d" % cap) + (":racecheck" if a.racecheck else "")
        r = Run(cap, tile.Device(devname), a.keep, a.debug, extra)
        for name, fn in TESTS:
            if only and name not in only:
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
