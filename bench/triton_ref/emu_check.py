"""emu_check.py - Triton's own sm_90 PTX, run unmodified on tile's emulated Hopper against float64.

    PYTHON bench/triton_ref/emu_check.py [--foreign build/bench/foreign_ptx] [--device emu:sm_90a] [--keep DIR]

PYTHON imports triton (e.g. /work/venv-triton/bin/python); no GPU is needed.  Each kernel below is
compiled with triton.compile(..., target=GPUTarget("cuda", 90, 32)) and its PTX handed to
build/bench/foreign_ptx (bench/foreign_ptx.c), which runs it on the device with the emulator's race
checks on (--racecheck: Triton's barriers, mbarrier waits and proxy fences must satisfy them) and checks it:

  tutorial_matmul f16 / bf16   the tutorial matmul (bench/gpu/triton_matmul.py): cp.async, wgmma
  desc_matmul                  tensor descriptors made in the kernel: tensormap.replace and
                               tensormap.cp_fenceproxy, TMA loads on mbarriers, wgmma, a TMA store
  desc_matmul_persistent       the same as a persistent loop over tiles (4 programs)
  desc_matmul_splitk           split-K over 3 programs along y, the partial tiles added into an f32 C by
                               the descriptor's atomic_add: cp.reduce.async.bulk.tensor
  desc_matmul_ws               the persistent loop with tl.range(..., warp_specialize=True)
  desc_matmul_persistent e4m3  the persistent one on e4m3 inputs: wgmma m64n128k32 e4m3
  attention hd64 causal/hd128  bench/triton_ref/kernels.py's attention: wgmma with P from registers
  tutorial_matmul f16 ctas2 /  num_ctas=2: each program a cluster of two CTAs (.reqnctapercluster 2,
  desc_matmul ctas2            %cluster_ctarank, barrier.cluster), launched as twice the programs along x

Prints one line per kernel (its PTX's Hopper instructions and foreign_ptx's verdict) and exits 1 when
one does not match or cannot run, 3 when triton cannot be imported.  What it shows is also a check
by hand in the issue notes: nothing here runs in CI (Triton is an optional tool)."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
try:
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
except Exception as e:  # noqa: BLE001 - any import failure means "no Triton here"
    print("triton cannot be imported by %s: %s" % (sys.executable, e), file=sys.stderr)
    sys.exit(3)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "gpu"))
import kernels as K  # noqa: E402
import triton_matmul as TM  # noqa: E402


@triton.jit
def desc_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    npn = tl.cdiv(N, BN)
    pm = pid // npn
    pn = pid % npn
    da = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    db = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    dc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        acc = tl.dot(da.load([pm * BM, k * BK]), db.load([k * BK, pn * BN]), acc)
    dc.store([pm * BM, pn * BN], acc.to(tl.float16))


@triton.jit
def desc_matmul_persistent(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                           PROGRAMS: tl.constexpr, WS: tl.constexpr):
    npm = tl.cdiv(M, BM)
    npn = tl.cdiv(N, BN)
    da = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    db = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    dc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    for tile in tl.range(tl.program_id(0), npm * npn, PROGRAMS, flatten=True, warp_specialize=WS):
        pm = tile // npn
        pn = tile % npn
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(tl.cdiv(K, BK)):
            acc = tl.dot(da.load([pm * BM, k * BK]), db.load([k * BK, pn * BN]), acc)
        dc.store([pm * BM, pn * BN], acc.to(tl.float16))


@triton.jit
def desc_matmul_splitk(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                       SPLIT: tl.constexpr):
    pid = tl.program_id(0)
    ks = tl.program_id(1)
    npn = tl.cdiv(N, BN)
    pm = pid // npn
    pn = pid % npn
    da = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    db = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    dc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    nk = tl.cdiv(K, BK)
    per = tl.cdiv(nk, SPLIT)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(ks * per, tl.minimum(nk, (ks + 1) * per)):
        acc = tl.dot(da.load([pm * BM, k * BK]), db.load([k * BK, pn * BN]), acc)
    dc.atomic_add([pm * BM, pn * BN], acc)


def compile90(fn, sig, consts, div16, warps, stages, ctas=1):
    names = list(sig)
    attrs = {(names.index(n),): [["tt.divisibility", 16]] for n in div16}
    for c in consts:
        sig[c] = "constexpr"
    k = triton.compile(ASTSource(fn=fn, signature=sig, constexprs=consts, attrs=attrs),
                       target=GPUTarget("cuda", 90, 32), options={"num_warps": warps, "num_stages": stages, "num_ctas": ctas})
    return k.asm["ptx"], k.metadata


def cases():
    mm = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"}
    out = []
    for dt, ty in (("f16", "fp16"), ("bf16", "bf16")):
        sig = {"a_ptr": "*" + ty, "b_ptr": "*" + ty, "c_ptr": "*" + ty}
        for n in ["M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm", "stride_cn"]:
            sig[n] = "i32"
        consts = {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8, "stride_ak": 1,
                  "stride_bn": 1, "stride_cn": 1}
        out.append(("tutorial_matmul " + dt, TM.matmul_kernel, sig, consts,
                    ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm"], 4, 3,
                    ["matmul", "--args", "tutorial", "--dtype", dt, "--m", "208", "--n", "144", "--k", "112"]))
        if dt == "f16":
            out.append(("tutorial_matmul f16 ctas2",) + out[-1][1:7] + (out[-1][7] + ["--ctas", "2"],))
    out.append(("desc_matmul", desc_matmul, dict(mm), {"BM": 128, "BN": 128, "BK": 64}, list(mm), 4, 3,
                ["matmul", "--args", "desc", "--m", "208", "--n", "144", "--k", "112"]))
    out.append(("desc_matmul ctas2", desc_matmul, dict(mm), {"BM": 128, "BN": 128, "BK": 64}, list(mm), 4, 3,
                ["matmul", "--args", "desc", "--m", "208", "--n", "144", "--k", "112", "--ctas", "2"]))
    out.append(("desc_matmul_splitk", desc_matmul_splitk, dict(mm, c_ptr="*fp32"), {"BM": 128, "BN": 128, "BK": 64, "SPLIT": 3},
                list(mm), 4, 3, ["matmul", "--args", "desc", "--split", "3", "--m", "208", "--n", "144", "--k", "400"]))
    out.append(("desc_matmul_persistent", desc_matmul_persistent, dict(mm), {"BM": 128, "BN": 128, "BK": 64, "PROGRAMS": 4, "WS": False},
                list(mm), 4, 3, ["matmul", "--args", "desc", "--grid", "4", "--m", "400", "--n", "272", "--k", "208"]))
    out.append(("desc_matmul_ws", desc_matmul_persistent, dict(mm), {"BM": 128, "BN": 128, "BK": 64, "PROGRAMS": 4, "WS": True},
                list(mm), 4, 3, ["matmul", "--args", "desc", "--grid", "4", "--m", "400", "--n", "272", "--k", "208"]))
    out.append(("desc_matmul_persistent e4m3", desc_matmul_persistent, dict(mm, a_ptr="*fp8e4nv", b_ptr="*fp8e4nv"),
                {"BM": 128, "BN": 128, "BK": 64, "PROGRAMS": 4, "WS": False}, list(mm), 4, 3,
                ["matmul", "--args", "desc", "--dtype", "e4m3", "--grid", "4", "--m", "400", "--n", "272", "--k", "208"]))
    names = ["q", "k", "v", "o", "lse", "seq_q", "seq_k", "heads_q", "group", "sqb", "sqs", "sqh", "skb", "sks", "skh",
             "svb", "svs", "svh", "sob", "sos", "soh", "slb", "slh", "scale"]
    for hd, causal, warps in ((64, 1, 4), (128, 0, 8)):
        sig = {n: ("*fp16" if n in "qkvo" else "*fp32" if n == "lse" else "fp32" if n == "scale" else "i32") for n in names}
        div = [n for n in names if n in ("q", "k", "v", "o", "lse") or (n[0] == "s" and n not in ("seq_q", "seq_k", "scale"))]
        consts = dict(HEAD_DIM=hd, BM=128, BN=64, CAUSAL=causal, WRITE_LSE=1, KEY_MASK=1)
        out.append(("attention hd%d%s" % (hd, " causal" if causal else ""), K.attention, sig, consts, div, warps, 2,
                    ["attention", "--head-dim", str(hd)] + (["--causal"] if causal else [])))
    return out


def main():
    p = argparse.ArgumentParser()
    root = os.path.normpath(os.path.join(HERE, "..", ".."))
    p.add_argument("--foreign", default=os.path.join(root, "build", "bench", "foreign_ptx"))
    p.add_argument("--device", default="emu:sm_90a")
    p.add_argument("--keep", help="keep the PTX files in this directory")
    a = p.parse_args()
    if not os.access(a.foreign, os.X_OK):
        print("%s not built: cmake --build build --target bench_foreign_ptx" % a.foreign, file=sys.stderr)
        return 2
    print("triton %s, PTX for sm_90 (capability 90), run on %s" % (triton.__version__, a.device))
    bad = 0
    outdir = a.keep or tempfile.mkdtemp(prefix="tile-emu-check-")
    os.makedirs(outdir, exist_ok=True)
    for label, fn, sig, consts, div, warps, stages, args in cases():
        try:
            ctas = int(args[args.index("--ctas") + 1]) if "--ctas" in args else 1
            ptx, md = compile90(fn, dict(sig), consts, div, warps, stages, ctas)
        except Exception as e:  # noqa: BLE001 - report the one that Triton refused and go on
            print("%-28s triton failed: %s" % (label, str(e).splitlines()[0] if str(e) else type(e).__name__))
            bad += 1
            continue
        path = os.path.join(outdir, re.sub(r"\W+", "_", label) + ".ptx")
        with open(path, "w") as f:
            f.write(ptx)
        feats = [w for w in ("wgmma.mma_async", "cp.async.bulk.tensor", "cp.reduce.async.bulk.tensor", "tensormap.replace",
                             "mbarrier", "stmatrix", "cp.async.cg",
                             "barrier.cluster", "mapa", "multicast::cluster")
                 if w in ptx]
        cmd = [a.foreign, args[0], path, "--kernel", md.name, "--warps", str(md.num_warps), "--smem", str(md.shared),
               "--device", a.device, "--racecheck"] + args[1:]
        r = subprocess.run(cmd, capture_output=True, text=True)
        verdict = (r.stdout.strip().splitlines() or [""])[-1] if r.returncode in (0, 1) else r.stderr.strip()
        print("%-28s [%s] %s" % (label, ", ".join(feats), verdict))
        bad += r.returncode != 0
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
