"""triton_matmul.py - Triton's tutorial matmul (python/tutorials/03-matrix-multiplication.py),
compiled ahead of time or timed on the GPU, as the reference for kernels/gemm/gemm.tile.

  python3 bench/gpu/triton_matmul.py ptx --bm 128 --bn 128 --bk 32 --warps 4 --stages 3 \
          --arch 80 --out FILE.ptx           # writes FILE.ptx and FILE.ptx.info (key=value lines)
  python3 bench/gpu/triton_matmul.py bench --sizes 4096,8192 [--configs N] [--fp8] [--trans-a]   # TFLOP/s (needs a GPU)

`ptx` needs no GPU: triton.compile with an explicit GPUTarget runs the whole
pipeline down to PTX and cubin.  The kernel is the tutorial's (grouped
program order, masked K tail, fp32 accumulator, result cast to the output
type), written out here so the comparison does not depend on the tutorials
being installed.  Exit status 3 when Triton is missing or cannot compile.
"""
import argparse
import os
import statistics
import sys

try:
    import triton
    import triton.language as tl
except Exception as e:  # noqa: BLE001 - any import failure means "no Triton here"
    print(f"triton not available: {e}", file=sys.stderr)
    sys.exit(3)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                  GROUP_SIZE_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c = accumulator.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


# The tutorial's CUDA autotuning configurations: (BM, BN, BK, GROUP_M, stages, warps).
TUTORIAL_CONFIGS = [
    (128, 256, 64, 8, 3, 8), (64, 256, 32, 8, 4, 4), (128, 128, 32, 8, 4, 4), (128, 64, 32, 8, 4, 4),
    (64, 128, 32, 8, 4, 4), (128, 32, 32, 8, 4, 4), (64, 32, 32, 8, 5, 2), (32, 64, 32, 8, 5, 2),
]

DTYPES = {"bf16": "bf16", "f16": "fp16"}


def ptxas_path():
    """Triton's own ptxas (the one it assembles with), else the toolkit's."""
    try:
        from triton.backends.nvidia.compiler import get_ptxas
        p = get_ptxas()
        return p.path if hasattr(p, "path") else str(p)
    except Exception:  # noqa: BLE001 - the helper moved between Triton versions
        pass
    here = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas")
    return here if os.path.exists(here) else "ptxas"


def cmd_ptx(a):
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    ty = DTYPES[a.dtype]
    sig = {"a_ptr": "*" + ty, "b_ptr": "*" + ty, "c_ptr": "*" + ty}
    for name in ["M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm", "stride_cn"]:
        sig[name] = "i32"
    consts = {"BLOCK_SIZE_M": a.bm, "BLOCK_SIZE_N": a.bn, "BLOCK_SIZE_K": a.bk, "GROUP_SIZE_M": a.group_m}
    for name in consts:
        sig[name] = "constexpr"
    # As the tutorial is specialized when launched on row-major 4096^3 inputs: pointers 16-byte
    # aligned, sizes and leading strides multiples of 16, unit strides equal to 1.
    attrs = {(i,): [["tt.divisibility", 16]] for i in [0, 1, 2, 3, 4, 5, 6, 8, 10]}
    consts.update({"stride_ak": 1, "stride_bn": 1, "stride_cn": 1})
    src = ASTSource(fn=matmul_kernel, signature=sig, constexprs=consts, attrs=attrs)
    target = GPUTarget("cuda", a.arch, 32)
    k = triton.compile(src, target=target, options={"num_warps": a.warps, "num_stages": a.stages})
    with open(a.out, "w") as f:
        f.write(k.asm["ptx"])
    md = k.metadata
    with open(a.out + ".info", "w") as f:
        f.write(f"name={md.name}\nshared={md.shared}\nnum_warps={md.num_warps}\nnum_stages={md.num_stages}\n")
        f.write(f"triton={triton.__version__}\nptxas={ptxas_path()}\n")
    return 0


def cmd_bench(a):
    import torch
    from triton.testing import do_bench
    if not torch.cuda.is_available():
        print("no GPU: the torch/triton GEMM benchmark was skipped")
        return 3
    print(f"torch {torch.__version__}, triton {triton.__version__}, {torch.cuda.get_device_name()}")
    print(f"{'size':>6} {'torch.matmul TFLOP/s':>21} {'triton tutorial TFLOP/s':>24} {'triton config':>28}")
    for n in [int(s) for s in a.sizes.split(",")]:
        torch.manual_seed(n)
        x = torch.randn((n, n), device="cuda", dtype=torch.bfloat16)
        y = torch.randn((n, n), device="cuda", dtype=torch.bfloat16)
        flop = 2.0 * n * n * n
        ref = torch.matmul(x, y)
        t_torch = do_bench(lambda: torch.matmul(x, y), warmup=100, rep=a.rep_ms, return_mode="median")
        best = None
        for (bm, bn, bk, gm, st, nw) in TUTORIAL_CONFIGS[:a.configs]:  # the tutorial's autotuning, by hand
            c = torch.empty((n, n), device="cuda", dtype=torch.bfloat16)
            grid = (triton.cdiv(n, bm) * triton.cdiv(n, bn),)

            def run(c=c, bm=bm, bn=bn, bk=bk, gm=gm, st=st, nw=nw, grid=grid):
                matmul_kernel[grid](x, y, c, n, n, n, x.stride(0), x.stride(1), y.stride(0), y.stride(1),
                                    c.stride(0), c.stride(1), BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn,
                                    BLOCK_SIZE_K=bk, GROUP_SIZE_M=gm, num_stages=st, num_warps=nw)
            try:
                run()
                torch.cuda.synchronize()
            except Exception as e:  # noqa: BLE001 - a config that does not fit is skipped, as autotune does
                print(f"  config {bm}x{bn}x{bk} w{nw} s{st}: {e}", file=sys.stderr)
                continue
            err = ((c.float() - ref.float()).norm() / ref.float().norm()).item()
            if not err < 1e-2:
                print(f"  config {bm}x{bn}x{bk} w{nw} s{st}: relative error {err:.3g}, skipped", file=sys.stderr)
                continue
            t = do_bench(run, warmup=25, rep=max(25, a.rep_ms // 4), return_mode="median")
            if best is None or t < best[0]:
                best = (t, f"{bm}x{bn}x{bk} w{nw} s{st}", run)
        t_triton = do_bench(best[2], warmup=100, rep=a.rep_ms, return_mode="median") if best else float("nan")
        cfg = best[1] if best else "none ran"
        print(f"{n:>6} {flop / t_torch / 1e9:>21.1f} {flop / t_triton / 1e9:>24.1f} {cfg:>28}")
        print(f"@@ gemm {n} torch {flop / t_torch / 1e9:.1f}")
        print(f"@@ gemm {n} triton {flop / t_triton / 1e9:.1f} {cfg.replace(' ', '_')}")
        sys.stdout.flush()
    if a.fp8:
        fp8_bench(a)
    if a.trans_a:
        trans_a_bench(a)
    return 0


def trans_a_bench(a):
    """cuBLAS on a transposed A, the layouts of bench/gemm_gpu --api --trans-a: A stored [k][m] and passed
    as its transpose (a view: cuBLAS gets it as an op, nothing is copied).  bf16 at every size (B [k][n]);
    at the first size tf32 (f32 in and out, B a weight [n][k]: gemm_gpu --dtype tf32 --trans-a --trans-b)
    and f8e4m3 through torch._scaled_mm (B a weight [n][k]), which may refuse a column-major A."""
    import torch
    from triton.testing import do_bench
    sizes = [int(s) for s in a.sizes.split(",")]
    for n in sizes:
        torch.manual_seed(n + 1)
        xt = torch.randn((n, n), device="cuda", dtype=torch.bfloat16)  # [k][m]
        y = torch.randn((n, n), device="cuda", dtype=torch.bfloat16)
        t = do_bench(lambda: torch.matmul(xt.t(), y), warmup=100, rep=a.rep_ms, return_mode="median")
        print(f"{n:>6} bf16 trans_a torch.matmul (cuBLAS) {2.0 * n * n * n / t / 1e9:.1f} TFLOP/s")
        print(f"@@ gemm_ta {n} torch {2.0 * n * n * n / t / 1e9:.1f}")
        sys.stdout.flush()
    n = sizes[0]
    flop = 2.0 * n * n * n
    torch.manual_seed(n + 2)
    xt = torch.rand((n, n), device="cuda") * 2 - 1  # [k][m]
    w = torch.rand((n, n), device="cuda") * 2 - 1  # [n][k]
    old = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        t = do_bench(lambda: torch.matmul(xt.t(), w.t()), warmup=100, rep=a.rep_ms, return_mode="median")
        print(f"{n:>6} tf32 trans_a trans_b torch.matmul (cuBLAS) {flop / t / 1e9:.1f} TFLOP/s")
        print(f"@@ gemm_tf32_ta_tb {n} torch {flop / t / 1e9:.1f}")
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old
    if not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
        print("torch has no _scaled_mm: the fp8 trans_a cuBLAS column is skipped")
        return
    xt8 = (torch.rand((n, n), device="cuda") * 4 - 2).to(torch.float8_e4m3fn)  # [k][m]
    w8 = (torch.rand((n, n), device="cuda") * 4 - 2).to(torch.float8_e4m3fn)  # [n][k]
    sa = torch.tensor(0.75, device="cuda")
    sb = torch.tensor(1.25, device="cuda")
    try:
        torch._scaled_mm(xt8.t(), w8.t(), scale_a=sa, scale_b=sb, out_dtype=torch.float32)
        t = do_bench(lambda: torch._scaled_mm(xt8.t(), w8.t(), scale_a=sa, scale_b=sb, out_dtype=torch.float32),
                     warmup=100, rep=a.rep_ms, return_mode="median")
    except Exception as e:  # noqa: BLE001 - cuBLASLt's f8 GEMM wants A row-major: report and go on
        print(f"fp8 trans_a {n}: torch._scaled_mm refused a column-major A: {type(e).__name__}: {(str(e).splitlines() or [''])[0]}")
        return
    print(f"{n:>6} fp8 e4m3 trans_a torch._scaled_mm (cuBLAS) {flop / t / 1e9:.1f} TFLOP/s")
    print(f"@@ gemm_f8e4m3_ta {n} torch {flop / t / 1e9:.1f}")
    sys.stdout.flush()


def fp8_bench(a):
    """cuBLAS's f8e4m3 GEMM through torch._scaled_mm: A [n][k], B a weight [n][k] (passed transposed,
    as _scaled_mm wants it column-major), per-tensor f32 scales, f32 output; the same problem as
    bench/gemm_gpu --api --dtype f8e4m3."""
    import torch
    from triton.testing import do_bench
    if not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
        print("torch has no _scaled_mm: the fp8 cuBLAS column is skipped")
        return
    for n in [int(s) for s in a.sizes.split(",")]:
        torch.manual_seed(n)
        x = (torch.rand((n, n), device="cuda") * 4 - 2).to(torch.float8_e4m3fn)
        w = (torch.rand((n, n), device="cuda") * 4 - 2).to(torch.float8_e4m3fn)
        sa = torch.tensor(0.75, device="cuda")
        sb = torch.tensor(1.25, device="cuda")
        flop = 2.0 * n * n * n
        try:
            out = torch._scaled_mm(x, w.t(), scale_a=sa, scale_b=sb, out_dtype=torch.float32)
            ref = (x.double() @ w.double().t()) * (0.75 * 1.25) if n <= 4096 else None
            if ref is not None:
                err = ((out.double() - ref).norm() / ref.norm()).item()
                print(f"  fp8 {n}: torch._scaled_mm relative error {err:.2e}")
            t = do_bench(lambda: torch._scaled_mm(x, w.t(), scale_a=sa, scale_b=sb, out_dtype=torch.float32),
                         warmup=100, rep=a.rep_ms, return_mode="median")
        except Exception as e:  # noqa: BLE001 - report and go on
            print(f"  fp8 {n}: torch._scaled_mm failed: {type(e).__name__}: {e}")
            continue
        print(f"{n:>6} fp8 e4m3 torch._scaled_mm (cuBLAS) {flop / t / 1e9:.1f} TFLOP/s")
        print(f"@@ gemm_f8e4m3 {n} torch {flop / t / 1e9:.1f}")
        sys.stdout.flush()


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    q = sub.add_parser("ptx")
    q.add_argument("--bm", type=int, default=128)
    q.add_argument("--bn", type=int, default=128)
    q.add_argument("--bk", type=int, default=32)
    q.add_argument("--group-m", type=int, default=8)
    q.add_argument("--warps", type=int, default=4)
    q.add_argument("--stages", type=int, default=3)
    q.add_argument("--arch", type=int, default=80)
    q.add_argument("--dtype", default="bf16", choices=sorted(DTYPES))
    q.add_argument("--out", required=True)
    b = sub.add_parser("bench")
    b.add_argument("--sizes", default="4096,8192")
    b.add_argument("--rep-ms", type=int, default=400)
    b.add_argument("--configs", type=int, default=len(TUTORIAL_CONFIGS),
                   help="try the first N of the tutorial's configurations (default all)")
    b.add_argument("--fp8", action="store_true", help="also time cuBLAS's f8e4m3 GEMM (torch._scaled_mm)")
    b.add_argument("--trans-a", action="store_true",
                   help="also time cuBLAS on a transposed A: bf16 at every size, tf32 and f8e4m3 at the first")
    a = p.parse_args()
    try:
        return cmd_ptx(a) if a.cmd == "ptx" else cmd_bench(a)
    except Exception as e:  # noqa: BLE001 - report and let the caller print "skipped"
        print(f"triton {a.cmd} failed: {type(e).__name__}: {e}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
