"""compile.py - compile the Triton counterparts of tile's shipped kernels for
one GPU target, without a GPU, for bench/sass_report.py.

    PYTHON bench/triton_ref/compile.py --arch 80 --out DIR [--only NAME,...]
    PYTHON bench/triton_ref/compile.py --list

PYTHON is a Python that imports triton (e.g. a venv: `python3 -m venv
/work/venv-triton && /work/venv-triton/bin/pip install triton`).

  1. Each configuration below names a kernel of kernels.py, its argument
     types, constexprs, the arguments specialized as a launch would (`div16`:
     Triton's tt.divisibility 16 on pointers and on integers divisible by 16;
     `one`: integers equal to 1 become constexpr 1, as Triton specializes
     them), num_warps and num_stages: those of the tile kernel it stands
     beside (kernels/*/*.c launch code, @num_warps/@num_stages, the
     --specialize list of sass_report.py).
  2. triton.compile(ASTSource(...), target=GPUTarget("cuda", ARCH, 32)) runs
     Triton's whole pipeline down to a cubin; capability 90 assembles for
     sm_90a (Triton's choice for 9.0).  Triton's cache is bypassed so its
     ptxas runs and its -v log (captured through TRITON_DUMP_PTXAS_LOG) gives
     registers and spill bytes (stores + loads, as tile reports them);
     shared memory is Triton's metadata (dynamic shared memory).
  3. One JSON object per line on stdout: {"name", "arch", "registers",
     "spill", "smem", "cubin"} or {"name", "arch", "error"}; the first line
     is {"triton": version, "ptxas": path, "ptxas_version": ...}.
--mma-sync sets DISABLE_MMA_V3=1: on sm_90a Triton's dots then use mma.sync
instead of wgmma.
Exit status 3 when triton cannot be imported."""
import argparse
import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile

# Before triton is imported: its knobs read the environment once.
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # Triton's default (fusion on); set to silence its warning
os.environ["TRITON_DUMP_PTXAS_LOG"] = "1"
os.environ["TRITON_ALWAYS_COMPILE"] = "1"
if "--mma-sync" in sys.argv:  # Triton's switch off of wgmma (MMAv3) on Hopper: its dots stay mma.sync
    os.environ["DISABLE_MMA_V3"] = "1"

try:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
except Exception as e:  # noqa: BLE001 - any import failure means "no Triton here"
    print("triton cannot be imported by %s: %s" % (sys.executable, e), file=sys.stderr)
    sys.exit(3)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels as K  # noqa: E402


def cfg(name, fn, args, consts, div16=(), one=(), warps=4, stages=3):
    """args: [(param, type)] in order; consts: constexpr values; div16/one: param names."""
    return dict(name=name, fn=fn, args=args, consts=consts, div16=set(div16), one=set(one), warps=warps,
                stages=stages)


def gemm(name, ab, cty, bm, bn, bk, warps, precision="tf32", spec="all", stages=3):
    """spec: "all" as tile's GEMM_SPECS (sak = sbn = 1, the sizes and leading strides divisible by 16);
    "unit": only the unit strides (matmul.tile has no inner strides); "none": run-time strides."""
    args = [("a", "*" + ab), ("b", "*" + ab), ("c", "*" + cty)] + \
           [(p, "i32") for p in ("M", "N", "K", "sam", "sak", "sbk", "sbn", "scm")]
    consts = dict(BM=bm, BN=bn, BK=bk, GROUP_M=8, PRECISION=precision)
    div16 = ["a", "b", "c"] + (["M", "N", "K", "sam", "sbk", "scm"] if spec == "all" else [])
    return cfg(name, K.matmul, args, consts, div16, ["sak", "sbn"] if spec != "none" else [], warps, stages)


ATTN_STRIDES = ["sqb", "sqs", "sqh", "skb", "sks", "skh", "svb", "svs", "svh", "sob", "sos", "soh", "slb", "slh"]


def attention(name, hd, bm, bn, causal, warps, key_mask=1):
    args = [("q", "*fp16"), ("k", "*fp16"), ("v", "*fp16"), ("o", "*fp16"), ("lse", "*fp32")] + \
           [(p, "i32") for p in ["seq_q", "seq_k", "heads_q", "group"] + ATTN_STRIDES] + [("scale", "fp32")]
    consts = dict(HEAD_DIM=hd, BM=bm, BN=bn, CAUSAL=causal, WRITE_LSE=1, KEY_MASK=key_mask)
    return cfg(name, K.attention, args, consts, ["q", "k", "v", "o", "lse"] + ATTN_STRIDES, (), warps)


def paged(name, kv):
    args = [("q", "*fp16"), ("kc", "*" + kv), ("vc", "*" + kv), ("o", "*fp16"), ("block_tables", "*i32"),
            ("context_lens", "*i32")] + \
           [(p, "i32") for p in ("num_tokens", "group", "sqs", "sqt", "sqh", "skb", "sks", "skh", "svb", "svs",
                                 "svh", "sos", "sot", "soh", "sbt")] + [("scale", "fp32")]
    consts = dict(HEAD_DIM=128, BLOCK_SIZE=16, BM=16, BN=64)  # paged_attention_f16's defaults, as launched
    # tile_attention_decode_paged specializes every stride divisible by 16; so does a Triton launch
    return cfg(name, K.paged, args, consts, [p for p, t in args if t.startswith("*") or p.startswith("s")])


def moe(name, down, f8_block=False):
    ptrs = ["h", "w2", "out", "topk_w"] if down else ["x", "w1", "w1s", "h"]
    types = {"h": "*fp16", "w2": "*fp16", "out": "*fp32", "topk_w": "*fp32", "x": "*fp16",
             "w1": "*fp8e4nv" if f8_block else "*fp16", "w1s": "*fp32"}
    args = [(p, types[p]) for p in ptrs] + [("sorted_ids", "*i32"), ("expert_ids", "*i32"), ("total", "*i32")] + \
           [(p, "i32") for p in ("n_slots", "topk", "hidden", "inter", "so" if down else "sx")]
    # moe.c specializes hidden, inter and the row stride (divisible by 16); BM 64 BN 64 BK 32 w4 s3
    consts = dict(BM=64, BN=64, BK=32) if down else dict(BM=64, BN=64, BK=32, BLOCK_SCALES=int(f8_block))
    return cfg(name, K.moe_down if down else K.moe_gate_up, args, consts,
               [p for p, t in args if t.startswith("*") or p in ("hidden", "inter", "so", "sx")])


CONFIGS = [
    gemm("gemm_f16_f32", "fp16", "fp32", 128, 128, 32, 4),
    gemm("gemm_bf16_bf16", "bf16", "bf16", 128, 128, 32, 4),
    gemm("gemm_tf32_f32", "fp32", "fp32", 128, 128, 16, 8),
    gemm("gemm_i8_i32", "i8", "i32", 128, 128, 64, 4),
    gemm("gemm_e4m3_f32", "fp8e4nv", "fp32", 128, 128, 32, 4),
    gemm("gemm_f16_f32_unspecialized", "fp16", "fp32", 128, 128, 32, 4, spec="none"),
    gemm("matmul_f32_ieee", "fp32", "fp32", 64, 64, 32, 4, precision="ieee", spec="unit"),
]
for _hd in (64, 128, 256):
    for _causal in (0, 1):
        _bn = 64 if _hd <= 64 else 32
        _w = 8 if _hd > 128 else 4
        CONFIGS.append(attention("attention_hd%d_bm64_bn%d_w%d%s" % (_hd, _bn, _w, "_causal" if _causal else ""),
                                 _hd, 64, _bn, _causal, _w))
for _hd in (64, 128):
    for _causal in (0, 1):
        CONFIGS.append(attention("attention_hd%d_bm128_bn64_w4%s" % (_hd, "_causal" if _causal else ""),
                                 _hd, 128, 64, _causal, 4))
    CONFIGS.append(attention("attention_hd%d_bm128_bn64_w4_nomask" % _hd, _hd, 128, 64, 0, 4, key_mask=0))
CONFIGS += [
    paged("paged_hd128", "fp16"),
    paged("paged_hd128_kv_f8", "fp8e4nv"),
    moe("moe_gate_up_f16", False),
    moe("moe_down_f16", True),
    moe("moe_gate_up_f16_e4m3_block", False, f8_block=True),
    # moe_router_f32's defaults: K 2, BT 16, BE 64, 4 warps; not specialized (moe.c passes the strides as they are)
    cfg("router_f32", K.router, [("logits", "*fp32"), ("topk_ids", "*i32"), ("topk_w", "*fp32"),
                                 ("tokens", "i32"), ("experts", "i32"), ("sl", "i32"), ("scale", "fp32")],
        dict(K=2, KP=2, BT=16, BE=64), ["logits", "topk_ids", "topk_w"]),
    cfg("add_rmsnorm_f16", K.add_rmsnorm,
        [("x", "*fp16"), ("res", "*fp16"), ("w", "*fp16"), ("out", "*fp16")] +
        [(p, "i32") for p in ("hidden", "sx", "sr", "so")] + [("eps", "fp32")],
        dict(BLOCK=1024), ["x", "res", "w", "out", "hidden", "sx", "sr", "so"]),
    cfg("silu_mul_f16", K.silu_mul, [("x", "*fp16"), ("out", "*fp16")] + [(p, "i32") for p in ("d", "sx", "so")],
        dict(BLOCK=1024), ["x", "out", "d", "sx", "so"]),
]
# Triton's tutorial matmul (bench/gpu/triton_matmul.py: M/N wrapped modulo, only K masked) at tile's default tile
try:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "gpu"))
    import triton_matmul as _tut  # noqa: E402

    CONFIGS.append(cfg("tutorial_matmul_f16", _tut.matmul_kernel,
                       [("a_ptr", "*fp16"), ("b_ptr", "*fp16"), ("c_ptr", "*fp16")] +
                       [(p, "i32") for p in ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn",
                                             "stride_cm", "stride_cn")],
                       dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=32, GROUP_SIZE_M=8),
                       ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm"],
                       ["stride_ak", "stride_bn", "stride_cn"]))
except Exception as _e:  # noqa: BLE001 - the tutorial row is optional
    print("tutorial matmul not available: %s" % _e, file=sys.stderr)

BY_NAME = {c["name"]: c for c in CONFIGS}


def source(c):
    sig, consts, attrs = {}, dict(c["consts"]), {}
    names = [p for p, _ in c["args"]]
    for i, (p, ty) in enumerate(c["args"]):
        if p in c["one"]:
            sig[p] = "constexpr"
            consts[p] = 1
            continue
        sig[p] = ty
        if p in c["div16"]:
            attrs[(i,)] = [["tt.divisibility", 16]]
    for p in c["consts"]:
        sig[p] = "constexpr"
    order = c["fn"].arg_names
    missing = [p for p in order if p not in sig]
    if missing:
        raise ValueError("configuration %s does not give %s" % (c["name"], ", ".join(missing)))
    sig = {p: sig[p] for p in order}
    # attrs are keyed by the position in the kernel's own parameter list
    attrs = {(order.index(names[i[0]]),): v for i, v in attrs.items()}
    return ASTSource(fn=c["fn"], signature=sig, constexprs=consts, attrs=attrs)


def ptxas_info(log, kernel):
    regs = re.search(r"Used (\d+) registers", log)
    st = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log)
    return (int(regs.group(1)) if regs else -1), (int(st.group(1)) + int(st.group(2)) if st else -1)


def ptxas_version(arch):
    try:
        from triton.backends.nvidia.compiler import get_ptxas
        p = get_ptxas(arch)
        path = p.path if hasattr(p, "path") else str(p)
        v = subprocess.run([path, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
        return path, (v[-1] if v else "?")
    except Exception as e:  # noqa: BLE001 - the helper moved between Triton versions
        return "?", str(e)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", type=int, default=80, help="compute capability: 80, 90 (sm_90a), ...")
    ap.add_argument("--out", help="folder for the cubins")
    ap.add_argument("--only", default="", help="comma-separated configuration names")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--mma-sync", action="store_true", help="no wgmma on sm_90a (DISABLE_MMA_V3=1)")
    a = ap.parse_args()
    if a.list:
        for c in CONFIGS:
            print(c["name"])
        return 0
    if not a.out:
        ap.error("--out is required")
    os.makedirs(a.out, exist_ok=True)
    path, ver = ptxas_version(a.arch)
    print(json.dumps(dict(triton=triton.__version__, ptxas=path, ptxas_version=ver)), flush=True)
    want = [n for n in a.only.split(",") if n] or [c["name"] for c in CONFIGS]
    target = GPUTarget("cuda", a.arch, 32)
    with tempfile.TemporaryDirectory() as cache:
        os.environ["TRITON_CACHE_DIR"] = cache
        try:
            triton.knobs.cache.dir = cache
        except Exception:  # noqa: BLE001 - older Triton reads the environment only
            pass
        for n in want:
            rec = dict(name=n, arch=a.arch)
            c = BY_NAME.get(n)
            if c is None:
                rec["error"] = "no such configuration (--list names them)"
                print(json.dumps(rec), flush=True)
                continue
            log = io.StringIO()
            try:
                with contextlib.redirect_stdout(log):
                    k = triton.compile(source(c), target=target,
                                       options=dict(num_warps=c["warps"], num_stages=c["stages"]))
                cubin = os.path.join(a.out, "%s_%d.cubin" % (n, a.arch))
                with open(cubin, "wb") as f:
                    f.write(k.asm["cubin"])
                regs, spill = ptxas_info(log.getvalue(), k.metadata.name)
                rec.update(registers=regs, spill=spill, smem=int(k.metadata.shared), cubin=cubin,
                           kernel=k.metadata.name)
            except Exception as e:  # noqa: BLE001 - one row fails, the rest still compile
                lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]  # Triton's last line says why
                rec["error"] = "%s: %s" % (type(e).__name__, lines[-1][:300] if lines else "")
            print(json.dumps(rec), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
