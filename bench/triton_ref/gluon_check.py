"""gluon_check.py - hand-scheduled Gluon kernels (triton.experimental.gluon) compiled for sm_90, their PTX run
unmodified on tile's emulated Hopper against float64 NumPy.

    PYTHON bench/triton_ref/gluon_check.py [--only NAME,...] [--racecheck] [--keep DIR] [--device DEV]

PYTHON imports triton (3.9), the tile package and ml_dtypes (bf16 and fp8 inputs) in one venv.  Gluon is the
Triton language in which the author places layouts, shared memory, mbarriers, TMA, wgmma and warp-specialized
partitions by hand: the PTX closest to CUTLASS's.  Each kernel is compiled with triton.compile(GluonASTSource(...),
target=GPUTarget("cuda", 90, 32)) (no GPU), loaded with tile.load_ptx on emu:sm_90a (":racecheck" with
--racecheck), launched with NumPy arrays (tensor descriptors made in the kernel, in Triton's global scratch;
num_ctas > 1: clusters of CTAs along x) and checked against float64 on fresh random inputs, outputs poisoned
(NaN) first, sizes that are not multiples of the tiles:

  copy            TMA load -> smem -> registers -> smem -> TMA store (f32, 32x32 boxes)
  ring            a 3-stage mbarrier ring of TMA loads (row sums along K, f16)
  gemm_*          a 3-stage TMA ring feeding async wgmma (one group in flight), C by TMA store: f16, f16 with
                  B^T (8 warps, 128x128), bf16, e4m3 and e5m2 (B K-major), tf32 (B K-major)
  int8            s8 x s8 -> s32 wgmma, checked exactly
  splitk          split-K over 3 programs along z, partial tiles added by the TMA reduction
                  (cp.reduce.async.bulk.tensor .add); A staged by cp.async, fed to wgmma from registers;
                  8 warps as [4, 2]
  ws              a persistent warp-specialized GEMM (gl.warp_specialize): 1-warp TMA producer, wgmma consumer,
                  ready/empty mbarrier rings, f16 C by TMA store (setmaxnreg)
  ws3             three partitions: 8-warp wgmma m64n256 consumer (bf16 A from registers), 1-warp loader,
                  1-warp TMA-store epilogue handed the tile through acc_ready / acc_empty mbarriers
  persistent      a persistent GEMM without warp specialization: the ring carried across tiles, two C buffers
                  so a tile's TMA store overlaps the next (store_wait(1)), bf16 C
  attn            attention forward: Q once, K/V through a 2-stage TMA ring, S = Q K^T by wgmma on a permuted
                  view, online softmax, O += P V with P from registers; masked keys (173 of them)
  edges           TMA boxes hanging off every edge (negative and past-the-end coordinates): zero fill, clipping
  5d              a 5-D tensor descriptor (tiny inner box dims), the box read back flat
  st_async*       st.async registers -> cluster shared memory on an mbarrier's tx-count (2-CTA clusters;
                  replicated and sharded layouts)
  softmax2/4      a row softmax sharded over a cluster of 2 / 4 CTAs (cga_layout): cross-CTA gl.max / gl.sum
                  through distributed shared memory and barrier.cluster
  mcast           a 2-CTA cluster GEMM: A multicast by TMA to both CTAs, each CTA its half of B's columns

Prints one line per kernel and exits 1 when one disagrees or cannot run, 3 when triton, tile, numpy or ml_dtypes
cannot be imported.  Not run in CI (Triton is an optional tool).  At this commit (Triton 3.9.0) every kernel here
agrees, also with --racecheck; the warp-specialized epilogue's acc_empty wait left out of ws3 is reported by
racecheck (shared-memory hazard, write after read, against the TMA store's source)."""
import argparse
import os
import sys

os.environ.setdefault("TILE_DEVICE", "emu")
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
try:
    import ml_dtypes
    import numpy as np
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon._runtime import GluonASTSource
    from triton.experimental.gluon.language.nvidia import hopper
    from triton.experimental.gluon.language.nvidia.ampere import async_copy
    from triton.experimental.gluon.language.nvidia.hopper import (tma, mbarrier, fence_async_shared, warpgroup_mma,
                                                                  warpgroup_mma_wait)
    import tile
except Exception as e:  # noqa: BLE001 - any import failure means "not here"
    print("cannot import numpy, ml_dtypes, triton (with gluon) and tile with %s: %s" % (sys.executable, e), file=sys.stderr)
    sys.exit(3)

rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))
DEV = "emu:sm_90a"
KEEP = None


def compile90(fn, sig, consts, warps=4, div16=(), ctas=1):
    sig = dict(sig)
    names = list(sig)
    attrs = {(names.index(n),): [["tt.divisibility", 16]] for n in div16}
    for c in consts:
        sig[c] = "constexpr"
    k = triton.compile(GluonASTSource(fn=fn, signature=sig, constexprs=consts, attrs=attrs),
                       target=GPUTarget("cuda", 90, 32), options={"num_warps": warps, "num_ctas": ctas})
    return k.asm["ptx"], k.metadata


def launch(fn, sig, consts, grid, args, warps=4, div16=(), ctas=1):
    ptx, md = compile90(fn, sig, consts, warps, div16, ctas)
    if KEEP:
        with open(os.path.join(KEEP, md.name + ".ptx"), "w") as f:
            f.write(ptx)
    k = tile.load_ptx(ptx, device=DEV)[md.name]
    nprog = int(np.prod(grid)) * md.num_ctas
    extra = {}
    if md.num_ctas > 1:  # a program is a cluster of num_ctas CTAs along x (.reqnctapercluster)
        grid = (grid[0] * md.num_ctas,) + tuple(grid[1:])
        extra["cluster"] = (md.num_ctas, 1, 1)
    k[grid](*args, scratch(md.global_scratch_size, md.global_scratch_align, nprog),
            scratch(md.profile_scratch_size, md.profile_scratch_align, nprog), shared=md.shared, **extra)


def scratch(size, align, nprog):
    if not size:
        return None
    align = max(align, 128)
    raw = np.zeros(size * nprog + align, np.uint8)
    return raw[(-tile.data_ptr(raw, device=DEV)) % align:][:size * nprog]


def check(name, got, want, rtol=0.0, atol=0.0):
    got = np.asarray(got, np.float64)
    if np.isnan(got).any() and not np.isnan(want).any():
        raise AssertionError("%s: NaN left in the output (%d elements)" % (name, np.isnan(got).sum()))
    err = np.abs(got - want)
    bound = atol + rtol * np.abs(want)
    if not (err <= bound).all():
        i = np.unravel_index(np.argmax(err - bound), err.shape)
        raise AssertionError("%s: max error %g at %s: got %r, want %r (%d bad)" % (name, err[i], i, got[i], want[i],
                                                                                   (err > bound).sum()))


# ---- 1. TMA load -> smem -> registers -> smem -> TMA store ----
@gluon.jit
def tma_copy(src, dst, M, N, BM: gl.constexpr, BN: gl.constexpr):
    lay: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BN], gl.float32)
    ds = tma.make_tensor_descriptor(src, [M, N], [N, 1], [BM, BN], lay)
    dd = tma.make_tensor_descriptor(dst, [M, N], [N, 1], [BM, BN], lay)
    smem = gl.allocate_shared_memory(gl.float32, [BM, BN], lay)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    pm = gl.program_id(0)
    pn = gl.program_id(1)
    mbarrier.expect(bar, BM * BN * 4)
    tma.async_load(ds, [pm * BM, pn * BN], bar, smem)
    mbarrier.wait(bar, 0)
    mbarrier.invalidate(bar)
    blk: gl.constexpr = gl.BlockedLayout([1, 4], [4, 8], [gl.num_warps(), 1], [1, 0])
    x = smem.load(blk)
    out = gl.allocate_shared_memory(gl.float32, [BM, BN], lay)
    out.store(x * 2 + 1)
    fence_async_shared()
    tma.async_store(dd, [pm * BM, pn * BN], out)
    tma.store_wait(0)


def t_copy():
    M, N = 75, 52
    src = rng.standard_normal((M, N)).astype(np.float32)
    dst = np.full((M, N), np.nan, np.float32)
    launch(tma_copy, {"src": "*fp32", "dst": "*fp32", "M": "i32", "N": "i32"}, {"BM": 32, "BN": 32},
           ((M + 31) // 32, (N + 31) // 32), [src, dst, M, N])
    check("tma copy", dst, src.astype(np.float64) * 2 + 1, rtol=1e-7)


# ---- 2. an mbarrier ring: STAGES TMA loads in flight, summing rows of a [M, K] tile by tile along K ----
@gluon.jit
def tma_ring(src, dst, M, K, BM: gl.constexpr, BK: gl.constexpr, STAGES: gl.constexpr):
    lay: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BK], gl.float16)
    ds = tma.make_tensor_descriptor(src, [M, K], [K, 1], [BM, BK], lay)
    bufs = gl.allocate_shared_memory(gl.float16, [STAGES, BM, BK], lay)
    bars = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(bars.index(i), count=1)
    pm = gl.program_id(0)
    nk = gl.cdiv(K, BK)
    for i in gl.static_range(STAGES - 1):
        if i < nk:
            mbarrier.expect(bars.index(i), BM * BK * 2)
            tma.async_load(ds, [pm * BM, i * BK], bars.index(i), bufs.index(i))
    blk: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
    acc = gl.zeros([BM], gl.float32, gl.SliceLayout(1, blk))
    for k in range(nk):
        nxt = k + STAGES - 1
        if nxt < nk:
            s2 = nxt % STAGES
            mbarrier.expect(bars.index(s2), BM * BK * 2)
            tma.async_load(ds, [pm * BM, nxt * BK], bars.index(s2), bufs.index(s2))
        s = k % STAGES
        mbarrier.wait(bars.index(s), (k // STAGES) & 1)
        x = bufs.index(s).load(blk)
        acc += gl.sum(x.to(gl.float32), axis=1)
        gl.barrier()
    for i in gl.static_range(STAGES):
        mbarrier.invalidate(bars.index(i))
    rows = pm * BM + gl.arange(0, BM, gl.SliceLayout(1, blk))
    gl.store(dst + rows, acc, mask=rows < M)


def t_ring():
    M, K = 150, 344
    src = rng.standard_normal((M, K)).astype(np.float16)
    dst = np.full(M, np.nan, np.float32)
    launch(tma_ring, {"src": "*fp16", "dst": "*fp32", "M": "i32", "K": "i32"}, {"BM": 64, "BK": 32, "STAGES": 3},
           ((M + 63) // 64,), [src, dst, M, K])
    check("tma ring", dst, src.astype(np.float64).sum(1), rtol=1e-4, atol=1e-3)


# ---- 3. wgmma GEMM: a STAGES-deep TMA ring feeding async wgmma (one group in flight), C by TMA store ----
@gluon.constexpr_function
def instr_n(BM, BN, num_warps):
    nrep = max(1, num_warps // max(1, BM // 16))
    n = 256
    while n > max(BN // nrep, 8) or BN % n:
        n -= 8
    return n


@gluon.jit
def wgmma_gemm(a, b, c, M, N, K, BM: gl.constexpr, BN: gl.constexpr, BK: gl.constexpr, STAGES: gl.constexpr,
               TRANS_B: gl.constexpr, PREC: gl.constexpr):
    dt: gl.constexpr = a.dtype.element_ty
    la: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BK], dt)
    if TRANS_B:
        lb: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BN, BK], dt)
        db = tma.make_tensor_descriptor(b, [N, K], [K, 1], [BN, BK], lb)
        bs = gl.allocate_shared_memory(dt, [STAGES, BN, BK], lb)
    else:
        lb: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BK, BN], dt)
        db = tma.make_tensor_descriptor(b, [K, N], [N, 1], [BK, BN], lb)
        bs = gl.allocate_shared_memory(dt, [STAGES, BK, BN], lb)
    lc: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BN], gl.float32)
    da = tma.make_tensor_descriptor(a, [M, K], [K, 1], [BM, BK], la)
    dc = tma.make_tensor_descriptor(c, [M, N], [N, 1], [BM, BN], lc)
    as_ = gl.allocate_shared_memory(dt, [STAGES, BM, BK], la)
    bars = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(bars.index(i), count=1)
    pm = gl.program_id(0)
    pn = gl.program_id(1)
    nk = gl.cdiv(K, BK)
    nbytes: gl.constexpr = (BM * BK + BK * BN) * dt.primitive_bitwidth // 8
    for i in gl.static_range(STAGES - 1):
        if i < nk:
            mbarrier.expect(bars.index(i), nbytes)
            tma.async_load(da, [pm * BM, i * BK], bars.index(i), as_.index(i))
            if TRANS_B:
                tma.async_load(db, [pn * BN, i * BK], bars.index(i), bs.index(i))
            else:
                tma.async_load(db, [i * BK, pn * BN], bars.index(i), bs.index(i))
    mma: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[gl.num_warps(), 1],
                                                  instr_shape=[16, instr_n(BM, BN, gl.num_warps()), 256 // dt.primitive_bitwidth])
    acc = gl.zeros([BM, BN], gl.float32, mma)
    for k in range(nk):
        s = k % STAGES
        mbarrier.wait(bars.index(s), (k // STAGES) & 1)
        if TRANS_B:
            bv = bs.index(s).permute((1, 0))
        else:
            bv = bs.index(s)
        acc = warpgroup_mma(as_.index(s), bv, acc, is_async=True, precision=PREC)
        # keep one wgmma in flight: the one before it is done, so its stage may be refilled
        acc = warpgroup_mma_wait(num_outstanding=1, deps=(acc, ))
        nxt = k + STAGES - 1
        if nxt < nk:
            s2 = nxt % STAGES
            mbarrier.expect(bars.index(s2), nbytes)
            tma.async_load(da, [pm * BM, nxt * BK], bars.index(s2), as_.index(s2))
            if TRANS_B:
                tma.async_load(db, [pn * BN, nxt * BK], bars.index(s2), bs.index(s2))
            else:
                tma.async_load(db, [nxt * BK, pn * BN], bars.index(s2), bs.index(s2))
    acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc, ))
    for i in gl.static_range(STAGES):
        mbarrier.invalidate(bars.index(i))
    cs = gl.allocate_shared_memory(gl.float32, [BM, BN], lc)
    cs.store(acc)
    fence_async_shared()
    tma.async_store(dc, [pm * BM, pn * BN], cs)
    tma.store_wait(0)


def gemm_inputs(dt, M, N, K, trans_b):
    a = rng.standard_normal((M, K))
    b = rng.standard_normal((N, K) if trans_b else (K, N))
    if dt == "fp16":
        return a.astype(np.float16), b.astype(np.float16), 2e-3
    if dt == "bf16":
        return a.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16), 2e-3
    if dt == "fp8e4nv":
        return (a.astype(ml_dtypes.float8_e4m3fn), b.astype(ml_dtypes.float8_e4m3fn), 2e-3)
    if dt == "fp8e5":
        return (a.astype(ml_dtypes.float8_e5m2), b.astype(ml_dtypes.float8_e5m2), 2e-3)
    return a.astype(np.float32), b.astype(np.float32), 3e-3


def run_gemm(dt, trans_b=False, prec="tf32", BM=64, BN=64, BK=None, warps=4, M=150, N=136, K=200):
    eb = {"fp16": 2, "bf16": 2, "fp8e4nv": 1, "fp8e5": 1, "fp32": 4}[dt]
    BK = BK or 128 // eb
    a, b, tol = gemm_inputs(dt, M, N, K, trans_b)
    c = np.full((M, N), np.nan, np.float32)
    launch(wgmma_gemm, {"a": "*" + dt, "b": "*" + dt, "c": "*fp32", "M": "i32", "N": "i32", "K": "i32"},
           {"BM": BM, "BN": BN, "BK": BK, "STAGES": 3, "TRANS_B": trans_b, "PREC": prec},
           ((M + BM - 1) // BM, (N + BN - 1) // BN), [a, b, c, M, N, K], warps=warps)
    af, bf = a.astype(np.float64), b.astype(np.float64)
    want = af @ (bf.T if trans_b else bf)
    check("wgmma gemm %s%s" % (dt, " B^T" if trans_b else ""), c, want, rtol=tol, atol=tol * np.sqrt(K) * 2)


# ---- 4. warp-specialized persistent GEMM: a 1-warp TMA producer, the default partition's wgmma consumer,
# ready/empty mbarrier rings between them, an f16 C by TMA store (previous tile's store awaited first) ----
@gluon.jit
def ws_loader(da, db, as_, bs, ready, empty, M, N, K, BM: gl.constexpr, BN: gl.constexpr, BK: gl.constexpr,
              STAGES: gl.constexpr):
    npn = gl.cdiv(N, BN)
    nk = gl.cdiv(K, BK)
    it = 0
    for t in range(gl.program_id(0), gl.cdiv(M, BM) * npn, gl.num_programs(0)):
        pm = t // npn
        pn = t % npn
        for k in range(nk):
            s = it % STAGES
            mbarrier.wait(empty.index(s), ((it // STAGES) & 1) ^ 1)
            mbarrier.expect(ready.index(s), (BM * BK + BK * BN) * 2)
            tma.async_load(da, [pm * BM, k * BK], ready.index(s), as_.index(s))
            tma.async_load(db, [k * BK, pn * BN], ready.index(s), bs.index(s))
            it += 1


@gluon.jit
def ws_mma(dc, as_, bs, cs, ready, empty, M, N, K, BM: gl.constexpr, BN: gl.constexpr, BK: gl.constexpr,
           STAGES: gl.constexpr):
    npn = gl.cdiv(N, BN)
    nk = gl.cdiv(K, BK)
    mma: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[gl.num_warps(), 1],
                                                  instr_shape=[16, instr_n(BM, BN, gl.num_warps()), 16])
    it = 0
    for t in range(gl.program_id(0), gl.cdiv(M, BM) * npn, gl.num_programs(0)):
        pm = t // npn
        pn = t % npn
        acc = gl.zeros([BM, BN], gl.float32, mma)
        for k in range(nk):
            s = it % STAGES
            mbarrier.wait(ready.index(s), (it // STAGES) & 1)
            acc = warpgroup_mma(as_.index(s), bs.index(s), acc, is_async=True)
            acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc, ))
            mbarrier.arrive(empty.index(s), count=1)
            it += 1
        tma.store_wait(0)
        cs.store(acc.to(gl.float16))
        fence_async_shared()
        tma.async_store(dc, [pm * BM, pn * BN], cs)
    tma.store_wait(0)


@gluon.jit
def ws_gemm(a, b, c, M, N, K, BM: gl.constexpr, BN: gl.constexpr, BK: gl.constexpr, STAGES: gl.constexpr):
    la: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BK], gl.float16)
    lb: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BK, BN], gl.float16)
    lc: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BN], gl.float16)
    da = tma.make_tensor_descriptor(a, [M, K], [K, 1], [BM, BK], la)
    db = tma.make_tensor_descriptor(b, [K, N], [N, 1], [BK, BN], lb)
    dc = tma.make_tensor_descriptor(c, [M, N], [N, 1], [BM, BN], lc)
    as_ = gl.allocate_shared_memory(gl.float16, [STAGES, BM, BK], la)
    bs = gl.allocate_shared_memory(gl.float16, [STAGES, BK, BN], lb)
    cs = gl.allocate_shared_memory(gl.float16, [BM, BN], lc)
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)
        mbarrier.init(empty.index(i), count=1)
    gl.warp_specialize([(ws_mma, (dc, as_, bs, cs, ready, empty, M, N, K, BM, BN, BK, STAGES)),
                        (ws_loader, (da, db, as_, bs, ready, empty, M, N, K, BM, BN, BK, STAGES))], [1], [24])


def t_ws(programs=3, M=200, N=136, K=232):
    BM, BN, BK = 64, 64, 64
    a, b, tol = gemm_inputs("fp16", M, N, K, False)
    c = np.full((M, N), np.nan, np.float16)
    launch(ws_gemm, {"a": "*fp16", "b": "*fp16", "c": "*fp16", "M": "i32", "N": "i32", "K": "i32"},
           {"BM": BM, "BN": BN, "BK": BK, "STAGES": 3}, (programs,), [a, b, c, M, N, K])
    check("ws gemm", c, a.astype(np.float64) @ b.astype(np.float64), rtol=4e-3, atol=2e-2)


# ---- 5. persistent GEMM (no warp specialization): tiles strided over the programs, a K ring carried across
# tiles, two C buffers in shared memory so a tile's TMA store overlaps the next tile (store_wait(1)) ----
@gluon.jit
def persistent_gemm(a, b, c, M, N, K, BM: gl.constexpr, BN: gl.constexpr, BK: gl.constexpr, STAGES: gl.constexpr):
    dt: gl.constexpr = a.dtype.element_ty
    la: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BK], dt)
    lb: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BN, BK], dt)
    lc: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BN], gl.bfloat16)
    da = tma.make_tensor_descriptor(a, [M, K], [K, 1], [BM, BK], la)
    db = tma.make_tensor_descriptor(b, [N, K], [K, 1], [BN, BK], lb)
    dc = tma.make_tensor_descriptor(c, [M, N], [N, 1], [BM, BN], lc)
    as_ = gl.allocate_shared_memory(dt, [STAGES, BM, BK], la)
    bs = gl.allocate_shared_memory(dt, [STAGES, BN, BK], lb)
    cs = gl.allocate_shared_memory(gl.bfloat16, [2, BM, BN], lc)
    bars = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(bars.index(i), count=1)
    mma: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[gl.num_warps(), 1],
                                                  instr_shape=[16, instr_n(BM, BN, gl.num_warps()), 16])
    npn = gl.cdiv(N, BN)
    nk = gl.cdiv(K, BK)
    ld = 0
    used = 0
    j = 0
    for t in range(gl.program_id(0), gl.cdiv(M, BM) * npn, gl.num_programs(0)):
        pm = t // npn
        pn = t % npn
        for i in gl.static_range(STAGES - 1):
            if i < nk:
                s = ld % STAGES
                mbarrier.expect(bars.index(s), (BM + BN) * BK * 2)
                tma.async_load(da, [pm * BM, i * BK], bars.index(s), as_.index(s))
                tma.async_load(db, [pn * BN, i * BK], bars.index(s), bs.index(s))
                ld += 1
        acc = gl.zeros([BM, BN], gl.float32, mma)
        for k in range(nk):
            s = used % STAGES
            mbarrier.wait(bars.index(s), (used // STAGES) & 1)
            acc = warpgroup_mma(as_.index(s), bs.index(s).permute((1, 0)), acc, is_async=True)
            acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc, ))
            used += 1
            if k + STAGES - 1 < nk:
                s2 = ld % STAGES
                mbarrier.expect(bars.index(s2), (BM + BN) * BK * 2)
                tma.async_load(da, [pm * BM, (k + STAGES - 1) * BK], bars.index(s2), as_.index(s2))
                tma.async_load(db, [pn * BN, (k + STAGES - 1) * BK], bars.index(s2), bs.index(s2))
                ld += 1
        buf = cs.index(j % 2)
        tma.store_wait(1)
        buf.store(acc.to(gl.bfloat16))
        fence_async_shared()
        tma.async_store(dc, [pm * BM, pn * BN], buf)
        j += 1
    tma.store_wait(0)
    for i in gl.static_range(STAGES):
        mbarrier.invalidate(bars.index(i))


def t_persistent(programs=4, M=264, N=200, K=184):
    a, b, tol = gemm_inputs("fp16", M, N, K, True)
    c = np.full((M, N), np.nan, ml_dtypes.bfloat16)
    launch(persistent_gemm, {"a": "*fp16", "b": "*fp16", "c": "*bf16", "M": "i32", "N": "i32", "K": "i32"},
           {"BM": 64, "BN": 128, "BK": 64, "STAGES": 3}, (programs,), [a, b, c, M, N, K])
    check("persistent gemm", c, a.astype(np.float64) @ b.astype(np.float64).T, rtol=1e-2, atol=3e-2)


# ---- 6. attention forward: Q by TMA once, K/V through a 2-stage TMA ring, S = Q K^T by wgmma (K^T a permuted
# view), online softmax in registers, O += P V by wgmma with P from registers (a dot-operand layout) ----
@gluon.jit
def attn_fwd(q, k, v, o, SQ, SK, scale, D: gl.constexpr, BM: gl.constexpr, BN: gl.constexpr):
    lq: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, D], gl.float16)
    lk: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BN, D], gl.float16)
    bh = gl.program_id(1)
    dq = tma.make_tensor_descriptor(q + bh * SQ * D, [SQ, D], [D, 1], [BM, D], lq)
    dk = tma.make_tensor_descriptor(k + bh * SK * D, [SK, D], [D, 1], [BN, D], lk)
    dv = tma.make_tensor_descriptor(v + bh * SK * D, [SK, D], [D, 1], [BN, D], lk)
    qs = gl.allocate_shared_memory(gl.float16, [BM, D], lq)
    ks = gl.allocate_shared_memory(gl.float16, [2, BN, D], lk)
    vs = gl.allocate_shared_memory(gl.float16, [2, BN, D], lk)
    qbar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    kv = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    mbarrier.init(qbar, count=1)
    mbarrier.init(kv.index(0), count=1)
    mbarrier.init(kv.index(1), count=1)
    m0 = gl.program_id(0) * BM
    mbarrier.expect(qbar, BM * D * 2)
    tma.async_load(dq, [m0, 0], qbar, qs)
    mbarrier.expect(kv.index(0), 2 * BN * D * 2)
    tma.async_load(dk, [0, 0], kv.index(0), ks.index(0))
    tma.async_load(dv, [0, 0], kv.index(0), vs.index(0))
    s_l: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[gl.num_warps(), 1], instr_shape=[16, BN, 16])
    o_l: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[gl.num_warps(), 1], instr_shape=[16, D, 16])
    p_l: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=o_l, k_width=2)
    m_i = gl.full([BM], float("-inf"), gl.float32, gl.SliceLayout(1, s_l))
    l_i = gl.zeros([BM], gl.float32, gl.SliceLayout(1, s_l))
    acc = gl.zeros([BM, D], gl.float32, o_l)
    mbarrier.wait(qbar, 0)
    nb = gl.cdiv(SK, BN)
    for j in range(nb):
        s = j % 2
        if j + 1 < nb:
            mbarrier.expect(kv.index(1 - s), 2 * BN * D * 2)
            tma.async_load(dk, [(j + 1) * BN, 0], kv.index(1 - s), ks.index(1 - s))
            tma.async_load(dv, [(j + 1) * BN, 0], kv.index(1 - s), vs.index(1 - s))
        mbarrier.wait(kv.index(s), (j // 2) & 1)
        sc = warpgroup_mma(qs, ks.index(s).permute((1, 0)), gl.zeros([BM, BN], gl.float32, s_l), use_acc=False)
        cols = j * BN + gl.arange(0, BN, gl.SliceLayout(0, s_l))
        sc = gl.where((cols < SK)[None, :], sc * scale, float("-inf"))
        m_new = gl.maximum(m_i, gl.max(sc, axis=1))
        alpha = gl.exp(m_i - m_new)
        p = gl.exp(sc - m_new[:, None])
        l_i = l_i * alpha + gl.sum(p, axis=1)
        acc = acc * gl.convert_layout(alpha, gl.SliceLayout(1, o_l))[:, None]
        acc = warpgroup_mma(gl.convert_layout(p.to(gl.float16), p_l), vs.index(s), acc)
        m_i = m_new
        # both wgmmas were synchronous: the stage is free for the load two steps on; all warps must be past it
        gl.barrier()
    out = acc / gl.convert_layout(l_i, gl.SliceLayout(1, o_l))[:, None]
    rows = m0 + gl.arange(0, BM, gl.SliceLayout(1, o_l))
    dcol = gl.arange(0, D, gl.SliceLayout(0, o_l))
    ptr = o + bh * SQ * D + rows[:, None] * D + dcol[None, :]
    gl.store(ptr, out.to(gl.float16), mask=(rows < SQ)[:, None])


def t_attn(B=3, SQ=150, SK=173, D=64):
    q = rng.standard_normal((B, SQ, D)).astype(np.float16)
    k = rng.standard_normal((B, SK, D)).astype(np.float16)
    v = rng.standard_normal((B, SK, D)).astype(np.float16)
    o = np.full((B, SQ, D), np.nan, np.float16)
    scale = 1 / np.sqrt(D)
    launch(attn_fwd, {"q": "*fp16", "k": "*fp16", "v": "*fp16", "o": "*fp16", "SQ": "i32", "SK": "i32", "scale": "fp32"},
           {"D": D, "BM": 64, "BN": 64}, ((SQ + 63) // 64, B), [q, k, v, o, SQ, SK, np.float32(scale)])
    s = np.einsum("bqd,bkd->bqk", q.astype(np.float64), k.astype(np.float64)) * scale
    p = np.exp(s - s.max(-1, keepdims=True))
    want = np.einsum("bqk,bkd->bqd", p / p.sum(-1, keepdims=True), v.astype(np.float64))
    check("attention fwd", o, want, rtol=1e-2, atol=1e-2)


# ---- 7. a split-K GEMM: each (tile, k-slice) program reduces its partial f32 tile into C through the TMA
# reduction (cp.reduce.async.bulk.tensor .add); A is staged by cp.async (async_copy) and fed to wgmma
# from registers; 8 warps as [4, 2] over a 64 x 128 tile ----
@gluon.jit
def splitk_gemm(a, b, c, M, N, K, BM: gl.constexpr, BN: gl.constexpr, BK: gl.constexpr, SPLIT: gl.constexpr,
                WM: gl.constexpr):
    lb: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BK, BN], gl.float16)
    lc: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BN], gl.float32)
    la: gl.constexpr = gl.SwizzledSharedLayout(vec=8, per_phase=1, max_phase=8, order=[1, 0])
    db = tma.make_tensor_descriptor(b, [K, N], [N, 1], [BK, BN], lb)
    dc = tma.make_tensor_descriptor(c, [M, N], [N, 1], [BM, BN], lc)
    as_ = gl.allocate_shared_memory(gl.float16, [BM, BK], la)
    bs = gl.allocate_shared_memory(gl.float16, [BK, BN], lb)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    pm = gl.program_id(0)
    pn = gl.program_id(1)
    ks = gl.program_id(2)
    nk = gl.cdiv(K, BK)
    per = gl.cdiv(nk, SPLIT)
    mma: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[WM, gl.num_warps() // WM],
                                                  instr_shape=[16, BN // (gl.num_warps() // WM), 16])
    a_op: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=mma, k_width=2)
    ld: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
    rows = pm * BM + gl.arange(0, BM, gl.SliceLayout(1, ld))
    acc = gl.zeros([BM, BN], gl.float32, mma)
    phase = 0
    for kb in range(ks * per, gl.minimum(nk, (ks + 1) * per)):
        cols = kb * BK + gl.arange(0, BK, gl.SliceLayout(0, ld))
        async_copy.async_load(as_, a + rows[:, None] * K + cols[None, :],
                              mask=(rows < M)[:, None] & (cols < K)[None, :])
        async_copy.commit_group()
        mbarrier.expect(bar, BK * BN * 2)
        tma.async_load(db, [kb * BK, pn * BN], bar, bs)
        async_copy.wait_group(0)
        mbarrier.wait(bar, phase)
        phase ^= 1
        gl.barrier()
        av = as_.load(a_op)
        acc = warpgroup_mma(av, bs, acc)
        gl.barrier()
    mbarrier.invalidate(bar)
    cs = gl.allocate_shared_memory(gl.float32, [BM, BN], lc)
    cs.store(acc)
    fence_async_shared()
    tma.async_atomic_add(dc, [pm * BM, pn * BN], cs)
    tma.store_wait(0)


def t_splitk(M=100, N=200, K=368, SPLIT=3):
    a, b, tol = gemm_inputs("fp16", M, N, K, False)
    c0 = rng.standard_normal((M, N)).astype(np.float32)
    c = c0.copy()
    BM, BN = 64, 128
    launch(splitk_gemm, {"a": "*fp16", "b": "*fp16", "c": "*fp32", "M": "i32", "N": "i32", "K": "i32"},
           {"BM": BM, "BN": BN, "BK": 32, "SPLIT": SPLIT, "WM": 4}, ((M + BM - 1) // BM, (N + BN - 1) // BN, SPLIT),
           [a, b, c, M, N, K], warps=8, div16=("a", "b", "c", "K"))
    check("split-k gemm", c, c0 + a.astype(np.float64) @ b.astype(np.float64), rtol=2e-3, atol=2e-2)


# ---- 8. int8 x int8 -> int32 wgmma (exact), B K-major ----
@gluon.jit
def int8_gemm(a, b, c, M, N, K, BM: gl.constexpr, BN: gl.constexpr, BK: gl.constexpr):
    la: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BK], gl.int8)
    lb: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BN, BK], gl.int8)
    da = tma.make_tensor_descriptor(a, [M, K], [K, 1], [BM, BK], la)
    db = tma.make_tensor_descriptor(b, [N, K], [K, 1], [BN, BK], lb)
    as_ = gl.allocate_shared_memory(gl.int8, [BM, BK], la)
    bs = gl.allocate_shared_memory(gl.int8, [BN, BK], lb)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    pm = gl.program_id(0)
    pn = gl.program_id(1)
    mma: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[gl.num_warps(), 1], instr_shape=[16, BN, 32])
    acc = gl.zeros([BM, BN], gl.int32, mma)
    phase = 0
    for k in range(0, K, BK):
        mbarrier.expect(bar, (BM + BN) * BK)
        tma.async_load(da, [pm * BM, k], bar, as_)
        tma.async_load(db, [pn * BN, k], bar, bs)
        mbarrier.wait(bar, phase)
        phase ^= 1
        acc = warpgroup_mma(as_, bs.permute((1, 0)), acc)
        gl.barrier()
    rows = pm * BM + gl.arange(0, BM, gl.SliceLayout(1, mma))
    cols = pn * BN + gl.arange(0, BN, gl.SliceLayout(0, mma))
    gl.store(c + rows[:, None] * N + cols[None, :], acc, mask=(rows < M)[:, None] & (cols < N)[None, :])


def t_int8(M=130, N=100, K=208):
    a = rng.integers(-128, 128, (M, K)).astype(np.int8)
    b = rng.integers(-128, 128, (N, K)).astype(np.int8)
    c = np.full((M, N), -7, np.int32)
    launch(int8_gemm, {"a": "*i8", "b": "*i8", "c": "*i32", "M": "i32", "N": "i32", "K": "i32"},
           {"BM": 64, "BN": 64, "BK": 64}, ((M + 63) // 64, (N + 63) // 64), [a, b, c, M, N, K])
    check("int8 gemm", c, a.astype(np.float64) @ b.astype(np.float64).T)


# ---- 9. a row softmax over a cluster: the row sharded across the CTAs (cga_layout), gl.max / gl.sum reduce
# across them through distributed shared memory ----
@gluon.jit
def cluster_softmax(x, out, N, BLOCK: gl.constexpr):
    cga: gl.constexpr = ((1, ), (2, ), (4, ), (8, ))[:gl.num_ctas().bit_length() - 1]
    lay: gl.constexpr = gl.BlockedLayout([2], [32], [gl.num_warps()], [0], cga_layout=cga)
    row = gl.program_id(0)
    offs = gl.arange(0, BLOCK, lay)
    m = offs < N
    v = gl.load(x + row * N + offs, mask=m, other=float("-inf"))
    e = gl.exp(v - gl.max(v, axis=0))
    gl.store(out + row * N + offs, e / gl.sum(e, axis=0), mask=m)


def t_cluster_softmax(ctas=2, R=5, N=1000):
    x = rng.standard_normal((R, N)).astype(np.float32)
    o = np.full((R, N), np.nan, np.float32)
    launch(cluster_softmax, {"x": "*fp32", "out": "*fp32", "N": "i32"}, {"BLOCK": 1024}, (R,), [x, o, N], ctas=ctas)
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    check("cluster softmax ctas%d" % ctas, o, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)


# ---- 10. a 2-CTA cluster GEMM: the A tile multicast by TMA to both CTAs, each CTA its half of B's columns
# (cga layouts on the NVMMA shared layouts and on the wgmma accumulator) ----
@gluon.jit
def mcast_gemm(a, b, c, M, N, K, BM: gl.constexpr, BN: gl.constexpr, BK: gl.constexpr):
    # BN: the cluster's columns; CTA r of the cluster owns columns [r * BN / 2, (r + 1) * BN / 2)
    la: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BK], gl.float16, cga_layout=[[0, 0]])
    lb: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BK, BN], gl.float16, cga_layout=[[0, 1]])
    da = tma.make_tensor_descriptor(a, [M, K], [K, 1], [BM, BK], la)
    db = tma.make_tensor_descriptor(b, [K, N], [N, 1], [BK, BN], lb)
    as_ = gl.allocate_shared_memory(gl.float16, [BM, BK], la)
    bs = gl.allocate_shared_memory(gl.float16, [BK, BN], lb)
    bar = mbarrier.allocate_mbarrier()
    mbarrier.init(bar, count=1)
    pm = gl.program_id(0)
    pn = gl.program_id(1)
    mma: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[gl.num_warps(), 1],
                                                  instr_shape=[16, BN // 2, 16], cga_layout=[[0, 1]])
    acc = gl.zeros([BM, BN], gl.float32, mma)
    phase = 0
    for k in range(0, K, BK):
        mbarrier.expect(bar, da.nbytes_per_cta + db.nbytes_per_cta)
        tma.async_load(da, [pm * BM, k], bar, as_, multicast=True)
        tma.async_load(db, [k, pn * BN], bar, bs)
        mbarrier.wait(bar, phase, deps=[as_, bs])
        phase ^= 1
        acc = warpgroup_mma(as_, bs, acc)
        # the peer's next multicast writes this CTA's A buffer: both CTAs must be done reading it
        gl.barrier(cluster=True)
    rows = pm * BM + gl.arange(0, BM, gl.SliceLayout(1, mma))
    cols = pn * BN + gl.arange(0, BN, gl.SliceLayout(0, mma))
    gl.store(c + rows[:, None] * N + cols[None, :], acc, mask=(rows < M)[:, None] & (cols < N)[None, :])


def t_mcast(M=150, N=200, K=144):
    a, b, tol = gemm_inputs("fp16", M, N, K, False)
    c = np.full((M, N), np.nan, np.float32)
    BM, BN = 64, 128
    launch(mcast_gemm, {"a": "*fp16", "b": "*fp16", "c": "*fp32", "M": "i32", "N": "i32", "K": "i32"},
           {"BM": BM, "BN": BN, "BK": 64}, ((M + BM - 1) // BM, (N + BN - 1) // BN), [a, b, c, M, N, K], ctas=2)
    check("multicast gemm", c, a.astype(np.float64) @ b.astype(np.float64), rtol=2e-3, atol=2e-2)


# ---- 11. st.async: registers to (cluster) shared memory with completion on an mbarrier's transaction count ----
@gluon.jit
def st_async(x, out, BLOCK: gl.constexpr, SHARD: gl.constexpr):
    if SHARD:
        cga: gl.constexpr = [[1]]
    else:
        cga: gl.constexpr = [[0]]
    lay: gl.constexpr = gl.BlockedLayout([1], [32], [gl.num_warps()], [0], cga_layout=cga)
    sl: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, order=[0], cga_layout=cga)
    offs = gl.arange(0, BLOCK, lay)
    v = gl.load(x + gl.program_id(0) * BLOCK + offs) * 3 + 1
    smem = gl.allocate_shared_memory(gl.float32, [BLOCK], sl)
    bar = mbarrier.allocate_mbarrier()
    mbarrier.init(bar, count=1)
    mbarrier.expect(bar, smem.nbytes_per_cta)
    hopper.async_store(smem, v, bar)
    mbarrier.wait(bar, 0, deps=[smem])
    r = smem.load(lay)
    mbarrier.invalidate(bar)
    gl.store(out + gl.program_id(0) * BLOCK + offs, r)


def t_st_async(shard):
    P, BLOCK = 3, 256
    x = rng.standard_normal(P * BLOCK).astype(np.float32)
    o = np.full(P * BLOCK, np.nan, np.float32)
    launch(st_async, {"x": "*fp32", "out": "*fp32"}, {"BLOCK": BLOCK, "SHARD": shard}, (P,), [x, o], ctas=2)
    check("st.async", o, x.astype(np.float64) * 3 + 1, rtol=1e-6)


# ---- 12. TMA boxes hanging off every edge: negative and past-the-end coordinates zero-filled on load and
# clipped on store; a 5-D descriptor (innermost dims tiny) on load ----
@gluon.jit
def tma_edges(src, dst, M, N, SM, SN, BM: gl.constexpr, BN: gl.constexpr):
    lay: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BN], gl.float16)
    ds = tma.make_tensor_descriptor(src, [M, N], [N, 1], [BM, BN], lay)
    dd = tma.make_tensor_descriptor(dst, [M, N], [N, 1], [BM, BN], lay)
    smem = gl.allocate_shared_memory(gl.float16, [BM, BN], lay)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    m0 = gl.program_id(0) * BM - SM
    n0 = gl.program_id(1) * BN - SN
    mbarrier.expect(bar, BM * BN * 2)
    tma.async_load(ds, [m0, n0], bar, smem)
    mbarrier.wait(bar, 0)
    blk: gl.constexpr = gl.BlockedLayout([1, 8], [8, 4], [gl.num_warps(), 1], [1, 0])
    x = smem.load(blk)
    # the loaded box shifted by (SM, SN) is written back unshifted: zero where the source box was outside
    gl.barrier()
    smem.store(x + 1)
    fence_async_shared()
    tma.async_store(dd, [m0 + SM, n0 + SN], smem)
    tma.store_wait(0)
    mbarrier.invalidate(bar)


def t_edges(M=70, N=88, SM=5, SN=11):
    BM, BN = 32, 64
    src = rng.standard_normal((M, N)).astype(np.float16)
    dst = np.full((M, N), np.nan, np.float16)
    launch(tma_edges, {"src": "*fp16", "dst": "*fp16", "M": "i32", "N": "i32", "SM": "i32", "SN": "i32"},
           {"BM": BM, "BN": BN}, ((M + BM - 1) // BM, (N + BN - 1) // BN), [src, dst, M, N, SM, SN])
    sh = np.zeros((M + SM, N + SN))
    sh[SM:, SN:] = src
    want = sh[:M, :N] + 1
    # dst[i, j] = src[i - SM, j - SN] + 1 (0 + 1 outside)
    check("tma edges", dst, want, rtol=1e-3)


@gluon.jit
def tma_5d(src, dst, D0, D1, D2, D3, D4, B0: gl.constexpr, B1: gl.constexpr, B2: gl.constexpr, B3: gl.constexpr,
           B4: gl.constexpr):
    lay: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=0, element_bitwidth=32, rank=5)
    ds = tma.make_tensor_descriptor(src, [D0, D1, D2, D3, D4], [D1 * D2 * D3 * D4, D2 * D3 * D4, D3 * D4, D4, 1],
                                    [B0, B1, B2, B3, B4], lay)
    smem = gl.allocate_shared_memory(gl.float32, [B0, B1, B2, B3, B4], lay)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    p = gl.program_id(0)
    mbarrier.expect(bar, B0 * B1 * B2 * B3 * B4 * 4)
    tma.async_load(ds, [0, p * B1, 1, 0, 0], bar, smem)
    mbarrier.wait(bar, 0)
    flat = smem.reinterpret(gl.float32, [B0 * B1 * B2 * B3 * B4], gl.SwizzledSharedLayout(1, 1, 1, order=[0]))
    lay1: gl.constexpr = gl.BlockedLayout([1], [32], [gl.num_warps()], [0])
    NB: gl.constexpr = B0 * B1 * B2 * B3 * B4
    v = flat.load(lay1)
    gl.store(dst + p * NB + gl.arange(0, NB, lay1), v)
    mbarrier.invalidate(bar)


def t_5d():
    D = (3, 5, 4, 2, 4)
    B = (2, 2, 4, 2, 4)
    src = rng.standard_normal(D).astype(np.float32)
    P = (D[1] + B[1] - 1) // B[1]
    dst = np.full((P,) + B, np.nan, np.float32)
    launch(tma_5d, {"src": "*fp32", "dst": "*fp32", "D0": "i32", "D1": "i32", "D2": "i32", "D3": "i32", "D4": "i32"},
           dict(zip(["B0", "B1", "B2", "B3", "B4"], B)), (P,), [src, dst] + list(D))
    pad = np.zeros((D[0], P * B[1], D[2] + B[2], D[3], D[4]))
    pad[:, :D[1], :D[2]] = src
    want = np.stack([pad[0:B[0], p * B[1]:(p + 1) * B[1], 1:1 + B[2], :, :] for p in range(P)])
    check("tma 5-d", dst, want)


# ---- 13. warp specialization with three partitions: the default partition (8 warps, two warpgroups as [8, 1])
# runs wgmma m64n256 with A from registers (bf16), a 1-warp TMA loader, a 1-warp epilogue that TMA-stores the
# tile handed over through a shared buffer and an acc_ready / acc_empty mbarrier pair ----
@gluon.jit
def ws3_loader(da, db, as_, bs, ready, empty, M, N, K, BM: gl.constexpr, BN: gl.constexpr, BK: gl.constexpr,
               STAGES: gl.constexpr):
    npn = gl.cdiv(N, BN)
    nk = gl.cdiv(K, BK)
    it = 0
    for t in range(gl.program_id(0), gl.cdiv(M, BM) * npn, gl.num_programs(0)):
        for k in range(nk):
            s = it % STAGES
            mbarrier.wait(empty.index(s), ((it // STAGES) & 1) ^ 1)
            mbarrier.expect(ready.index(s), (BM * BK + BK * BN) * 2)
            tma.async_load(da, [(t // npn) * BM, k * BK], ready.index(s), as_.index(s))
            tma.async_load(db, [k * BK, (t % npn) * BN], ready.index(s), bs.index(s))
            it += 1


@gluon.jit
def ws3_store(dc, cs, acc_ready, acc_empty, M, N, BM: gl.constexpr, BN: gl.constexpr):
    npn = gl.cdiv(N, BN)
    j = 0
    for t in range(gl.program_id(0), gl.cdiv(M, BM) * npn, gl.num_programs(0)):
        mbarrier.wait(acc_ready, j & 1)
        tma.async_store(dc, [(t // npn) * BM, (t % npn) * BN], cs)
        tma.store_wait(0)
        mbarrier.arrive(acc_empty, count=1)
        j += 1


@gluon.jit
def ws3_mma(as_, bs, cs, ready, empty, acc_ready, acc_empty, M, N, K, BM: gl.constexpr, BN: gl.constexpr,
            BK: gl.constexpr, STAGES: gl.constexpr):
    npn = gl.cdiv(N, BN)
    nk = gl.cdiv(K, BK)
    mma: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[gl.num_warps(), 1],
                                                  instr_shape=[16, BN, 16])
    a_op: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=mma, k_width=2)
    it = 0
    j = 0
    for t in range(gl.program_id(0), gl.cdiv(M, BM) * npn, gl.num_programs(0)):
        acc = gl.zeros([BM, BN], gl.float32, mma)
        for k in range(nk):
            s = it % STAGES
            mbarrier.wait(ready.index(s), (it // STAGES) & 1)
            acc = warpgroup_mma(as_.index(s).load(a_op), bs.index(s), acc, is_async=True)
            acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc, ))
            mbarrier.arrive(empty.index(s), count=1)
            it += 1
        mbarrier.wait(acc_empty, (j & 1) ^ 1)
        cs.store(acc.to(gl.bfloat16))
        fence_async_shared()
        mbarrier.arrive(acc_ready, count=1)
        j += 1


@gluon.jit
def ws3_gemm(a, b, c, M, N, K, BM: gl.constexpr, BN: gl.constexpr, BK: gl.constexpr, STAGES: gl.constexpr):
    la: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BK], gl.bfloat16)
    lb: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BK, BN], gl.bfloat16)
    lc: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BN], gl.bfloat16)
    da = tma.make_tensor_descriptor(a, [M, K], [K, 1], [BM, BK], la)
    db = tma.make_tensor_descriptor(b, [K, N], [N, 1], [BK, BN], lb)
    dc = tma.make_tensor_descriptor(c, [M, N], [N, 1], [BM, BN], lc)
    as_ = gl.allocate_shared_memory(gl.bfloat16, [STAGES, BM, BK], la)
    bs = gl.allocate_shared_memory(gl.bfloat16, [STAGES, BK, BN], lb)
    cs = gl.allocate_shared_memory(gl.bfloat16, [BM, BN], lc)
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    acc_ready = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    acc_empty = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)
        mbarrier.init(empty.index(i), count=1)
    mbarrier.init(acc_ready, count=1)
    mbarrier.init(acc_empty, count=1)
    gl.warp_specialize([(ws3_mma, (as_, bs, cs, ready, empty, acc_ready, acc_empty, M, N, K, BM, BN, BK, STAGES)),
                        (ws3_loader, (da, db, as_, bs, ready, empty, M, N, K, BM, BN, BK, STAGES)),
                        (ws3_store, (dc, cs, acc_ready, acc_empty, M, N, BM, BN))], [1, 1], [24, 24])


def t_ws3(programs=2, M=300, N=520, K=136):
    a, b, tol = gemm_inputs("bf16", M, N, K, False)
    c = np.full((M, N), np.nan, ml_dtypes.bfloat16)
    launch(ws3_gemm, {"a": "*bf16", "b": "*bf16", "c": "*bf16", "M": "i32", "N": "i32", "K": "i32"},
           {"BM": 128, "BN": 256, "BK": 32, "STAGES": 3}, (programs,), [a, b, c, M, N, K], warps=8)
    check("ws3 gemm", c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-2, atol=5e-2)


TESTS = {
    "copy": t_copy,
    "ring": t_ring,
    "gemm_f16": lambda: run_gemm("fp16"),
    "gemm_f16_bt": lambda: run_gemm("fp16", True, BM=128, BN=128, warps=8, M=200, N=264, K=136),
    "gemm_bf16": lambda: run_gemm("bf16"),
    "gemm_e4m3": lambda: run_gemm("fp8e4nv", True, K=208),  # TMA: rows of K bytes, a multiple of 16
    "gemm_e5m2": lambda: run_gemm("fp8e5", True, K=208),
    "gemm_tf32": lambda: run_gemm("fp32", True),
    "int8": t_int8,
    "splitk": t_splitk,
    "ws": t_ws,
    "ws3": t_ws3,
    "persistent": t_persistent,
    "attn": t_attn,
    "edges": t_edges,
    "5d": t_5d,
    "st_async": lambda: t_st_async(False),
    "st_async_shard": lambda: t_st_async(True),
    "softmax2": t_cluster_softmax,
    "softmax4": lambda: t_cluster_softmax(4),
    "mcast": t_mcast,
}


def main():
    global DEV, KEEP
    p = argparse.ArgumentParser()
    p.add_argument("--only", help="kernels by name, comma-separated")
    p.add_argument("--racecheck", action="store_true", help="run with the emulator's race checks")
    p.add_argument("--keep", help="keep the PTX files in this directory")
    p.add_argument("--device", default="emu:sm_90a")
    a = p.parse_args()
    DEV = a.device + (":racecheck" if a.racecheck else "")
    KEEP = a.keep
    if KEEP:
        os.makedirs(KEEP, exist_ok=True)
    names = a.only.split(",") if a.only else list(TESTS)
    print("triton %s, tile %s, Gluon PTX for sm_90 on %s" % (triton.__version__, tile.__version__, DEV))
    bad = 0
    for n in names:
        try:
            TESTS[n]()
            print("%-16s ok" % n)
        except Exception as e:  # noqa: BLE001 - report the kernel and go on
            bad += 1
            print("%-16s FAIL %s: %s" % (n, type(e).__name__, (str(e).splitlines() or [""])[0]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
