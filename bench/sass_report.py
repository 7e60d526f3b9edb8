#!/usr/bin/env python3
"""sass_report.py - what ptxas made of every shipped kernel: registers, spills,
shared memory, and the main loop's SASS instructions per iteration by class,
with Triton's numbers for the same problem and tiles beside them (issue 13).

    python3 bench/sass_report.py [--tile build/tile] [--arch sm_80 --arch sm_90a]
                                 [--nvdisasm PATH] [--filter TEXT] [--json]
                                 [--triton PYTHON | --no-triton] [--triton-mma-sync]

For each configuration below (the kernel, its consts and the run-time
specializations the C API launches it with):
  1. `tile compile --emit cubin -v --no-cache` gives the cubin and ptxas's
     registers, spill bytes (stores + loads) and shared memory;
  2. nvdisasm (the `nvidia-cuda-nvdisasm` wheel, or PATH; optional: without
     it only step 1 is printed) disassembles it;
  3. loops are found as a label and a later backward branch to it; the main
     loop is the one with the most tensor-core instructions (HMMA, IMMA, QMMA,
     HGMMA), the first of them in code order when several tie: the steady
     state that lower/peel.c puts before the masked remainder; a loop around
     such loops (a persistent kernel's over tiles) is not a candidate; a
     loop that runs two bodies a trip (an exit between them: a wgmma's A
     registers in flight) is counted per iteration, its counts halved;
  4. its instructions are counted by class: mma, ldsm (LDSM), copies
     (LDGSTS, UTMALDG, LDG, STS), fp32 (FFMA FMUL FADD FSEL FMNMX FSETP and
     the conversions F2F F2FP), mufu (MUFU), int (IMAD IADD3 ISETP LOP3 SEL
     SHF LEA PRMT IMNMX), local (LDL STL), other; `sel` counts the select
     and compare instructions (FSEL SEL ISETP FSETP), the mask arithmetic;
  5. a static ceiling (MMA_RATE and PIPE_CYCLES below): the cycles one
     iteration keeps each pipe of an SM sub-partition busy per warp,
        cyc = max(mma FLOP / tensor FLOP per cycle, instructions (issue),
                  fp32 * c_fp32, int * c_int, mufu * 8, shared/L1 bytes / 32)
     with `bound` the pipe that gives the max and tc = tensor cycles / cyc,
     the tensor cores' best possible use.  A bound from the instruction mix
     alone (no latency, no dependencies, no DRAM): compare kernels and
     versions with it, not GPUs;
  6. Triton: bench/triton_ref/compile.py, run by a Python that imports
     triton (--triton, $TILE_TRITON_PYTHON, /work/venv-triton/bin/python, or
     this Python), compiles each configuration's Triton counterparts (the
     last field of CONFIGS) for the same capability (sm_90a: Triton's
     GPUTarget 90, which it assembles for sm_90a) with Triton's own ptxas;
     their cubins go through steps 2-5 and print as `triton NAME` rows under
     tile's.  A counterpart that Triton cannot compile prints its reason.
     --triton-mma-sync adds, on sm_90a, `triton/mma.sync` rows compiled with
     DISABLE_MMA_V3=1 (Triton without wgmma): what mma.sync costs there,
     beside tile's dots that are still mma.sync on sm_90a (tf32, 8 warps).
Exit status 1 when a configuration does not compile, 2 without build/tile."""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

GEMM_SPECS = ["sak=1", "sbn=1", "m=16", "n=16", "k=16", "sam=16", "sbk=16", "scm=16"]
# B as a [n][k] weight (trans_b: K contiguous), as tile_gemm's f8 GEMMs take it
GEMM_T_SPECS = ["sak=1", "sbk=1", "m=16", "n=16", "k=16", "sam=16", "sbn=16", "scm=16"]
# A as a [k][m] tile (trans_a: M contiguous)
GEMM_TA_SPECS = ["sam=1", "sbn=1", "m=16", "n=16", "k=16", "sak=16", "sbk=16", "scm=16"]
# both transposed (trans_a and trans_b)
GEMM_TT_SPECS = ["sam=1", "sbk=1", "m=16", "n=16", "k=16", "sak=16", "sbn=16", "scm=16"]
GATE_SPECS = ["hidden=16", "inter=16", "sx=16"]
DOWN_SPECS = ["hidden=16", "inter=16", "so=16"]
# tile_attention_fwd specializes every stride divisible by 16 (contiguous [batch, seq, heads, 64k] tensors)
ATTN_SPECS = [s + "=16" for s in ("sqb", "sqs", "sqh", "skb", "sks", "skh", "svb", "svs", "svh", "sob", "sos", "soh",
                                  "slb", "slh")]

# tile_attention_decode_paged: every q/o/k/v stride and the block-table stride divisible by 16
PAGED_SPECS = [s + "=16" for s in ("sqs", "sqt", "sqh", "sos", "sot", "soh", "skb", "sks", "skh", "svb", "svs", "svh",
                                   "sbt")]
NORM_SPECS = ["hidden=16", "sx=16", "sr=16", "so=16"]  # tile_fused_add_rmsnorm on contiguous [tokens, hidden]
ACT_SPECS = ["d=16", "sx=16", "so=16"]  # tile_silu_and_mul and friends on contiguous rows

# tile_gemm's vector configuration (the first @config: m, n, k and leading dimensions multiples of 16)
W4 = ["BM=128", "BN=128", "BK=32", "num_warps=4", "num_stages=3"]

# (file, kernel, defines, specializations, label, Triton counterparts: names in bench/triton_ref/compile.py)
CONFIGS = [
    ("gemm/gemm.tile", "gemm_f16_f32", W4, GEMM_SPECS, "gemm f16->f32 128x128x32 w4 s3",
     ["gemm_f16_f32", "tutorial_matmul_f16"]),
    ("gemm/gemm.tile", "gemm_bf16_bf16", W4, GEMM_SPECS, "gemm bf16->bf16", ["gemm_bf16_bf16"]),
    ("gemm/gemm.tile", "gemm_tf32_f32", ["BM=128", "BN=128", "BK=16", "num_warps=8", "num_stages=3"], GEMM_SPECS, "gemm tf32->f32 128x128x16 w8", ["gemm_tf32_f32"]),
    ("gemm/gemm.tile", "gemm_i8_i32", ["BM=128", "BN=128", "BK=64", "num_warps=4", "num_stages=3"], GEMM_SPECS, "gemm i8->i32 128x128x64", ["gemm_i8_i32"]),
    ("gemm/gemm.tile", "gemm_e4m3_f32", W4, GEMM_SPECS, "gemm e4m3->f32", ["gemm_e4m3_f32"]),
    ("gemm/gemm.tile", "gemm_f16_f32", W4 + ["warp_specialize=1", "PERSISTENT=1"], GEMM_SPECS,
     "gemm f16->f32 128x128x32 w4 s3 ws persistent (sm_90a launch)",
     ["gemm_f16_f32", "tutorial_matmul_f16"]),
    ("gemm/gemm.tile", "gemm_f16_f32", ["BM=128", "BN=256", "BK=64", "num_warps=8", "num_stages=3"], GEMM_SPECS,
     "gemm f16->f32 128x256x64 w8", []),
    ("gemm/gemm.tile", "gemm_f16_f32", ["BM=128", "BN=256", "BK=64", "num_warps=8", "num_stages=3", "warp_specialize=1",
                                         "PERSISTENT=1"], GEMM_SPECS, "gemm f16->f32 128x256x64 w8 ws persistent (sm_90a launch)", []),
    ("gemm/gemm.tile", "gemm_tf32_f32", ["BM=128", "BN=128", "BK=16", "num_warps=8", "num_stages=3", "warp_specialize=1",
                                          "PERSISTENT=1"], GEMM_SPECS, "gemm tf32->f32 128x128x16 w8 ws persistent (sm_90a launch)", []),
    # A transposed (tile_gemm's trans_a) as tile_gemm launches it: sm_80's, sm_90a's 128 x 128 and 128 x 256
    ("gemm/gemm.tile", "gemm_f16_f32", W4, GEMM_TA_SPECS, "gemm f16->f32 trans_a 128x128x32 w4 s3", []),
    ("gemm/gemm.tile", "gemm_f16_f32", W4 + ["warp_specialize=1", "PERSISTENT=1"], GEMM_TA_SPECS,
     "gemm f16->f32 trans_a 128x128x32 w4 s3 ws persistent (sm_90a launch)", []),
    ("gemm/gemm.tile", "gemm_f16_f32", ["BM=128", "BN=256", "BK=64", "num_warps=8", "num_stages=3", "warp_specialize=1",
                                         "PERSISTENT=1"], GEMM_TA_SPECS,
     "gemm f16->f32 trans_a 128x256x64 w8 ws persistent (sm_90a launch)", []),
    # tf32 and f8 with A transposed on sm_90a: the wgmma's A registers loaded from the pipelined [k][m] stage
    ("gemm/gemm.tile", "gemm_tf32_f32", ["BM=128", "BN=128", "BK=16", "num_warps=8", "num_stages=3", "warp_specialize=1",
                                          "PERSISTENT=1"], GEMM_TT_SPECS,
     "gemm tf32->f32 trans_a trans_b 128x128x16 w8 ws persistent (sm_90a launch)", []),
    ("gemm/gemm.tile", "gemm_e4m3_f32", ["BM=128", "BN=128", "BK=128", "num_warps=8", "num_stages=3", "warp_specialize=1",
                                         "PERSISTENT=1", "SCALE=1", "FAST_ACCUM=0"], GEMM_TT_SPECS,
     "gemm e4m3 trans_a trans_b 128x128x128 w8 ws persistent promoted (sm_90a launch)", []),
    # f8 as tile_gemm launches it on sm_90a (B as a [n][k] weight, per-tensor scales): two-level accumulation by
    # default, and FAST_ACCUM=1 at 128 x 256 (what run.sh times beside it)
    ("gemm/gemm.tile", "gemm_e4m3_f32", ["BM=128", "BN=128", "BK=128", "num_warps=8", "num_stages=3", "warp_specialize=1",
                                         "PERSISTENT=1", "SCALE=1", "FAST_ACCUM=0"], GEMM_T_SPECS,
     "gemm e4m3 128x128x128 w8 ws persistent promoted (sm_90a launch)", []),
    ("gemm/gemm.tile", "gemm_e4m3_f32", ["BM=128", "BN=256", "BK=128", "num_warps=8", "num_stages=3", "warp_specialize=1",
                                         "PERSISTENT=1", "SCALE=1", "FAST_ACCUM=1"], GEMM_T_SPECS,
     "gemm e4m3 128x256x128 w8 ws persistent fast accum (sm_90a)", []),
    # 8-bit B as a [k][n] tile on sm_90a (the dot restages each stage K-major): i8 and f8 as tile_gemm launches them
    ("gemm/gemm.tile", "gemm_i8_i32", ["BM=128", "BN=128", "BK=64", "num_warps=4", "num_stages=3", "warp_specialize=1",
                                       "PERSISTENT=1"], GEMM_SPECS, "gemm i8->i32 B [k][n] 128x128x64 ws persistent (sm_90a launch)", []),
    ("gemm/gemm.tile", "gemm_e4m3_f32", ["BM=128", "BN=128", "BK=128", "num_warps=8", "num_stages=3", "warp_specialize=1",
                                         "PERSISTENT=1", "SCALE=1", "FAST_ACCUM=0"], GEMM_SPECS,
     "gemm e4m3 B [k][n] 128x128x128 w8 ws persistent promoted (sm_90a launch)", []),
    ("gemm/gemm.tile", "gemm_e4m3_f32", ["BM=128", "BN=128", "BK=128", "num_warps=8", "num_stages=3", "warp_specialize=1",
                                         "PERSISTENT=1", "SCALE=1", "FAST_ACCUM=1"], GEMM_SPECS,
     "gemm e4m3 B [k][n] 128x128x128 w8 ws persistent fast accum (sm_90a)", []),
    ("gemm/gemm.tile", "gemm_f16_f32", [], [], "gemm f16 unspecialized", ["gemm_f16_f32_unspecialized"]),
    ("matmul.tile", "matmul", [], [], "matmul f32 64x64x32 (masked)", ["matmul_f32_ieee"]),
]
for hd in (64, 128, 256):
    for causal in (0, 1):
        bd = hd
        bn = 64 if hd <= 64 else 32
        warps = 8 if hd > 128 else 4  # as tile_attention_fwd launches it
        CONFIGS.append(("attention/attention.tile", "attention_fwd_f16",
                        ["HEAD_DIM=%d" % hd, "BLOCK_D=%d" % bd, "BM=64", "BN=%d" % bn, "CAUSAL=%d" % causal,
                         "num_warps=%d" % warps], ATTN_SPECS,
                        "attention hd%d BM64 BN%d w%d%s" % (hd, bn, warps, " causal" if causal else ""),
                        ["attention_hd%d_bm64_bn%d_w%d%s" % (hd, bn, warps, "_causal" if causal else "")]))
for hd in (64, 128):
    for causal in (0, 1):
        CONFIGS.append(("attention/attention.tile", "attention_fwd_f16",
                        ["HEAD_DIM=%d" % hd, "BLOCK_D=%d" % hd, "BM=128", "BN=64", "CAUSAL=%d" % causal], ATTN_SPECS,
                        "attention hd%d BM128 BN64 w4%s" % (hd, " causal" if causal else ""),
                        ["attention_hd%d_bm128_bn64_w4%s" % (hd, "_causal" if causal else "")] +
                        ([] if causal else ["attention_hd%d_bm128_bn64_w4_nomask" % hd])))
for hd in (64, 128):  # a producer warpgroup issuing the tensor-map loads (@warp_specialize), one computing warpgroup
    for causal in (0, 1):
        CONFIGS.append(("attention/attention.tile", "attention_fwd_f16",
                        ["HEAD_DIM=%d" % hd, "BLOCK_D=%d" % hd, "BM=128", "BN=64", "CAUSAL=%d" % causal, "warp_specialize=1"], ATTN_SPECS,
                        "attention hd%d BM128 BN64 w4 ws%s" % (hd, " causal" if causal else ""),
                        ["attention_hd%d_bm128_bn64_w4%s" % (hd, "_causal" if causal else "")]))
for hd in (64, 128, 256):  # as tile_attention_fwd launches it on sm_90a: two warpgroups of 64 query rows and a producer
    # (taking turns at Q K^T up to head_dim 128: pingpong; each issuing P V of a block with Q K^T of the next: overlap)
    for causal in (0, 1):
        bn, st = (128, 3) if hd <= 128 else (64, 2)
        CONFIGS.append(("attention/attention.tile", "attention_fwd_f16",
                        ["HEAD_DIM=%d" % hd, "BLOCK_D=%d" % hd, "BM=128", "BN=%d" % bn, "num_warps=8", "num_stages=%d" % st,
                         "CAUSAL=%d" % causal, "warp_specialize=1", "overlap=1"] + (["pingpong=1"] if hd <= 128 else []), ATTN_SPECS,
                        "attention hd%d BM128 BN%d w8 s%d ws%s%s (sm_90a launch)" % (hd, bn, st, " pp" if hd <= 128 else "",
                                                                                  " causal" if causal else ""), []))
CONFIGS += [
    ("attention/paged_attention.tile", "paged_attention_f16", ["BN=64"], PAGED_SPECS, "paged decode hd128 BM16 BN64", ["paged_hd128"]),
    ("attention/paged_attention.tile", "paged_attention_f16_kv8", ["BN=64"], PAGED_SPECS, "paged decode hd128 kv f8",
     ["paged_hd128_kv_f8"]),
    ("moe/experts.tile", "moe_gate_up_f16", [], GATE_SPECS, "moe gate_up f16 64x64x32 (sm_80 launch)", ["moe_gate_up_f16"]),
    ("moe/experts.tile", "moe_down_f16", [], DOWN_SPECS, "moe down f16 64x64x32 (sm_80 launch)", ["moe_down_f16"]),
    # as tile_moe_forward launches them on sm_90a (moe.c expert_tiles): a producer warpgroup for the weights' tensor
    # maps; BM 16 (decode) with K steps of 128; K steps of 64 with BM 64 on one computing warpgroup, BM 128 (from 256
    # slots an expert on average) on two
    ("moe/experts.tile", "moe_gate_up_f16", ["BM=16", "BN=64", "BK=128", "num_stages=3", "warp_specialize=1"],
     GATE_SPECS, "moe gate_up f16 16x64x128 ws (sm_90a decode launch)", []),
    ("moe/experts.tile", "moe_down_f16", ["BM=16", "BN=64", "BK=128", "num_stages=3", "warp_specialize=1"],
     DOWN_SPECS, "moe down f16 16x64x128 ws (sm_90a decode launch)", []),
    ("moe/experts.tile", "moe_gate_up_f16", ["BM=64", "BN=64", "BK=64", "num_warps=4", "num_stages=3", "warp_specialize=1"],
     GATE_SPECS, "moe gate_up f16 64x64x64 ws (sm_90a launch)", []),
    ("moe/experts.tile", "moe_down_f16", ["BM=64", "BN=128", "BK=64", "num_warps=4", "num_stages=3", "warp_specialize=1"],
     DOWN_SPECS, "moe down f16 64x128x64 ws (sm_90a launch)", []),
    ("moe/experts.tile", "moe_gate_up_f16", ["BM=128", "BN=64", "BK=64", "num_warps=8", "num_stages=3", "warp_specialize=1"],
     GATE_SPECS, "moe gate_up f16 128x64x64 w8 ws (sm_90a launch)", []),
    ("moe/experts.tile", "moe_down_f16", ["BM=128", "BN=256", "BK=64", "num_warps=8", "num_stages=3", "warp_specialize=1"],
     DOWN_SPECS, "moe down f16 128x256x64 w8 ws (sm_90a launch)", []),
    ("moe/experts.tile", "moe_gate_up_f16_e4m3_block", [], GATE_SPECS, "moe gate_up e4m3 block", ["moe_gate_up_f16_e4m3_block"]),
    ("moe/router.tile", "moe_router_f32", [], [], "moe router (softmax top-2)", ["router_f32"]),
    ("moe/align.tile", "moe_align_scan", [], [], "moe align scan", []),
    ("norm/norm.tile", "norm_f16", [], NORM_SPECS, "norm f16 (add + rmsnorm)", ["add_rmsnorm_f16"]),
    ("norm/act.tile", "act_f16", [], ACT_SPECS, "gated activation f16 (silu)", ["silu_mul_f16"]),
]

CLASSES = [
    ("mma", ("HMMA", "IMMA", "QMMA", "HGMMA", "QGMMA", "IGMMA")),
    ("ldsm", ("LDSM",)),
    ("copy", ("LDGSTS", "UTMALDG", "UBLKCP", "LDG", "STG", "STS", "LDS")),
    ("fp32", ("FFMA", "FMUL", "FADD", "FSEL", "FMNMX", "FSETP", "F2F", "F2FP", "FCHK")),
    ("mufu", ("MUFU",)),
    ("int", ("IMAD", "IADD3", "ISETP", "LOP3", "SEL", "SHF", "LEA", "PRMT", "IMNMX", "IABS", "MOV")),
    ("local", ("LDL", "STL")),
]
SELECTS = ("FSEL", "SEL", "ISETP", "FSETP")
INSTR = re.compile(r"/\*[0-9a-f]+\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*)(\.[A-Za-z0-9_.]*)?\s*([^;]*);")
LABEL = re.compile(r"^\s*(\.L_x_\d+):")
BRANCH = re.compile(r"\bBRA\b[^;]*?(\.L_x_\d+)")


def find_nvdisasm(given):
    if given:
        return given if os.access(given, os.X_OK) else None
    hit = shutil.which("nvdisasm")
    if hit:
        return hit
    for base in sys.path:
        for p in glob.glob(os.path.join(base, "nvidia", "*", "bin", "nvdisasm")):
            return p
    return None


def compile_cfg(tile, root, cfg, arch, out):
    path, kernel, defines, specs = cfg[:4]
    cmd = [tile, "compile", os.path.join(root, "kernels", path), "--arch", arch, "--emit", "cubin", "-o", out, "-v",
           "--no-cache"]
    if kernel:
        cmd += ["--kernel", kernel]
    for d in defines:
        cmd += ["-D", d]
    for s in specs:
        cmd += ["--specialize", s]
    r = subprocess.run(cmd, capture_output=True, text=True)
    meta = {}
    for m in re.finditer(r"kernel (\S+)\(.*?registers=(-?\d+) spill_bytes=(-?\d+)", r.stderr):
        meta.setdefault("registers", int(m.group(2)))
        meta.setdefault("spill", int(m.group(3)))
        meta["registers"] = max(meta["registers"], int(m.group(2)))
        meta["spill"] = max(meta["spill"], int(m.group(3)))
    m = re.search(r"smem=(\d+)", r.stderr)
    meta["smem"] = int(m.group(1)) if m else -1
    return r.returncode, meta, r.stderr


def loops(sass_lines):
    """(start, end) line ranges of the loops: a label and a later branch back to it."""
    where = {}
    found = []
    for n, line in enumerate(sass_lines):
        m = LABEL.match(line)
        if m:
            where[m.group(1)] = n
        b = BRANCH.search(line)
        if b and b.group(1) in where and where[b.group(1)] < n:
            found.append((where[b.group(1)], n))
    return found


# The static ceiling's machine model: per SM sub-partition (one warp scheduler, a quarter of the SM), the
# cycles one warp-instruction keeps each pipe busy, from the public peak rates (NVIDIA's A100 and H100
# whitepapers, the CUDA guide's arithmetic-instruction throughput table):
#   mma    dense tensor-core FLOP per cycle per sub-partition, by operand type: A100 312 TFLOP/s f16 at
#          1.41 GHz on 108 SMs = 2048 per SM = 512 per sub-partition; H100 SXM 989 TFLOP/s at 1.83 GHz
#          on 132 SMs = 1024.  An mma.sync m16n8k16 (2*16*8*16 = 4096 FLOP per warp) is 8 cycles on
#          sm_80 and 4 on sm_90 (mma.sync is known to reach less than that on Hopper: not modelled);
#          a warpgroup HGMMA 64xNxK is 2*64*N*K / 4 FLOP for each of its 4 warps.
#   fp32   FFMA/FMUL/FADD and the rest of the fp32 class: 64 lanes per SM on sm_80 (16 per
#          sub-partition: 2 cycles a warp-instruction), 128 on sm_90 (1 cycle)
#   int    the int class (IMAD, IADD3, LOP3, ...): 64 lanes per SM on both (2 cycles)
#   mufu   MUFU (ex2, rcp, rsqrt, ...): 16 lanes per SM (8 cycles)
#   lsu    shared memory and L1 wavefronts: 128 bytes per cycle per SM, shared by the 4 sub-partitions
#          running the same loop, so a warp-instruction moving B bytes costs B / 32 cycles (LDSM .x4
#          512 B = 16, LDS/STS/LDGSTS/LDG/STG/LDL/STL .128 512 B, .64 256 B, narrower 128 B = 4)
#   issue  one instruction per cycle
# ceiling cycles = max over the pipes of the loop's busy cycles; tc = mma cycles / that (the tensor
# pipe's best possible use).  No latency, no dependencies, no global memory bandwidth, no TMA.
MMA_RATE = {  # dense FLOP (or int8 op) per cycle per sub-partition
    "sm_80": {"f16": 512, "tf32": 256, "i8": 1024, "f8": 1024},  # f8: sm_89's QMMA, twice f16 as on Hopper
    "sm_90": {"f16": 1024, "tf32": 512, "i8": 2048, "f8": 2048},
}
PIPE_CYCLES = {"sm_80": {"fp32": 2, "int": 2, "mufu": 8}, "sm_90": {"fp32": 1, "int": 2, "mufu": 8}}
LSU_OPS = ("LDSM", "LDS", "STS", "LDGSTS", "LDG", "STG", "LDL", "STL")


def arch_family(arch):
    """sm_80, sm_86, sm_89 -> the sm_80 model; sm_90, sm_90a -> sm_90 (the two tables above)."""
    m = re.match(r"sm_(\d+)", arch)
    return "sm_90" if m and int(m.group(1)) >= 90 else "sm_80"


def mma_work(op, mods):
    """(operand kind, FLOP per warp) of one tensor-core instruction, from its SASS shape modifier."""
    if op in ("HGMMA", "QGMMA", "IGMMA"):  # .64x128x16: a warpgroup instruction, a quarter per warp
        m = re.search(r"\.(\d+)x(\d+)x(\d+)", mods)
        mm, n, k = (int(x) for x in m.groups()) if m else (64, 64, 16)
        kind = {"QGMMA": "f8", "IGMMA": "i8"}.get(op, "tf32" if "TF32" in mods else "f16")
        return kind, 2 * mm * n * k / 4
    m = re.match(r"\.(16)(8)(\d+)", mods)  # .16816 = m16 n8 k16, .1688 = m16 n8 k8, .16832 = m16 n8 k32
    mm, n, k = (16, 8, int(m.group(3))) if m else (16, 8, 16)
    kind = {"IMMA": "i8", "QMMA": "f8"}.get(op, "tf32" if "TF32" in mods else "f16")
    return kind, 2 * mm * n * k


def lsu_bytes(op, mods):
    """Bytes one warp-instruction moves through shared memory / L1 (a 32-bit wavefront at least)."""
    parts = mods.split(".")
    if op == "LDSM":
        return {"4": 512, "2": 256}.get(parts[-1], 128)
    if "128" in parts:
        return 512
    if "64" in parts:
        return 256
    return 128


def count(lines):
    c = {k: 0 for k, _ in CLASSES}
    c.update(total=0, other=0, sel=0, mma_flop={}, lsu_bytes=0)
    for line in lines:
        m = INSTR.search(line)
        if not m:
            continue
        op, mods = m.group(1), m.group(2) or ""
        c["total"] += 1
        if op in SELECTS:
            c["sel"] += 1
        if op in CLASSES[0][1]:
            kind, flop = mma_work(op, mods)
            c["mma_flop"][kind] = c["mma_flop"].get(kind, 0) + flop
        if op in LSU_OPS:
            c["lsu_bytes"] += lsu_bytes(op, mods)
        for name, ops in CLASSES:
            if op in ops:
                c[name] += 1
                break
        else:
            c["other"] += 1
    return c


def bodies(lines, s, e):
    """Iterations one trip of the loop lines[s..e] runs: 1, plus 1 for each branch inside it to the label
    right after its back branch (an exit between bodies: lower/llvm_codegen.c's emit_loop runs two bodies a
    trip where a wgmma's A registers stay in flight)."""
    m = LABEL.match(lines[e + 1]) if e + 1 < len(lines) else None
    if not m:
        return 1
    return 1 + sum(1 for l in lines[s:e] if (b := BRANCH.search(l)) and b.group(1) == m.group(1))


def main_loop(sass):
    lines = sass.splitlines()
    best = None
    found = loops(lines)
    for s, e in found:
        # a branch back from past the EXIT is an out-of-line retry (the mbarrier wait's), not a loop
        if any("EXIT" in l for l in lines[s:e + 1]):
            continue
        c = count(lines[s:e + 1])
        # a loop around loops with tensor-core instructions (a persistent kernel's loop over tiles)
        # is not the main loop: its inner ones are
        if any(s <= s2 and e2 <= e and (s2, e2) != (s, e) and count(lines[s2:e2 + 1])["mma"] for s2, e2 in found):
            continue
        if best is None or c["mma"] > best[0]["mma"]:
            best = (c, s)
            n = bodies(lines, s, e)
            if n > 1:  # per iteration: a trip's counts over its bodies
                for k, v in c.items():
                    c[k] = {a: x / n for a, x in v.items()} if isinstance(v, dict) else (v / n if v % n else v // n)
                c["bodies"] = n
    return (best[0] if best else None), len(found)


def ceiling(c, arch):
    """(cycles, bounding pipe, tensor-pipe fraction or None, every pipe's cycles) of one main-loop
    iteration per warp on its sub-partition; None without a loop."""
    if not c:
        return None
    fam = arch_family(arch)
    rate, cyc = MMA_RATE[fam], PIPE_CYCLES[fam]
    pipes = {
        "mma": sum(flop / rate.get(kind, rate["f16"]) for kind, flop in c["mma_flop"].items()),
        "issue": c["total"],
        "fp32": cyc["fp32"] * c["fp32"],
        "int": cyc["int"] * c["int"],
        "mufu": cyc["mufu"] * c["mufu"],
        "lsu": c["lsu_bytes"] / 32,
    }
    bound = max(pipes, key=lambda p: pipes[p])
    total = pipes[bound]
    tc = pipes["mma"] / total if c["mma"] and total else None
    return total, bound, tc, pipes


def find_triton_python(given):
    """The Python that imports triton: --triton, $TILE_TRITON_PYTHON, /work/venv-triton, this Python."""
    if given:
        return given
    env = os.environ.get("TILE_TRITON_PYTHON")
    if env:
        return env
    for p in ("/work/venv-triton/bin/python", sys.executable):
        if os.path.exists(p) and subprocess.run([p, "-c", "import triton"], capture_output=True).returncode == 0:
            return p
    return None


def triton_compile(python, root, arch, names, out, mma_sync=False):
    """{name: record} from bench/triton_ref/compile.py for arch (sm_80 -> capability 80, sm_90a -> 90), and
    (versions, why): why is the reason nothing came back."""
    m = re.match(r"sm_(\d+)", arch)
    if not m:
        return {}, None, "no capability in %s" % arch
    cmd = [python, os.path.join(root, "bench", "triton_ref", "compile.py"), "--arch", m.group(1), "--out", out,
           "--only", ",".join(names)] + (["--mma-sync"] if mma_sync else [])
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=1200)
    except (OSError, subprocess.TimeoutExpired) as e:
        return {}, None, "%s: %s" % (" ".join(cmd[:2]), e)
    recs, versions = {}, None
    for line in r.stdout.splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if "triton" in rec:
            versions = rec
        elif "name" in rec:
            recs[rec["name"]] = rec
    why = None
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["exit status %d" % r.returncode])[-1]
        why = "%s failed: %s" % (os.path.basename(cmd[1]), last)
    return recs, versions, why


HEADER = ("%-54s %-6s %4s %5s %6s %5s %4s %4s %5s %5s %4s %4s %5s %3s %6s %-5s %4s %3s" %
          ("kernel", "arch", "regs", "spill", "smem", "instr", "mma", "ldsm", "copy", "fp32", "mufu", "int",
           "local", "sel", "cyc", "bound", "tc", "lps"))


def row(label, arch, regs, spill, smem, c, nloops):
    cc = c or {}
    g = lambda k: str(cc[k]) if k in cc else "-"  # noqa: E731
    ce = ceiling(c, arch)
    return ("%-54s %-6s %4d %5d %6d %5s %4s %4s %5s %5s %4s %4s %5s %3s %6s %-5s %4s %3d" %
            (label[:54], arch, regs, spill, smem, g("total"), g("mma"), g("ldsm"), g("copy"), g("fp32"), g("mufu"),
             g("int"), g("local"), g("sel"), "%.0f" % ce[0] if ce else "-", ce[1] if ce else "-",
             "%.0f%%" % (100 * ce[2]) if ce and ce[2] is not None else "-", nloops))


def jline(**fields):
    """One JSON Lines object, led by "bench" as every bench program's (docs/benchmarks.md)."""
    return json.dumps(dict(bench="sass_report", **fields))


def record(who, label, arch, regs, spill, smem, c, nloops, **extra):
    ce = ceiling(c, arch)
    loop = None
    if c:
        loop = {k: v for k, v in c.items() if k not in ("mma_flop", "lsu_bytes")}
    rec = dict(bench="sass_report", who=who, kernel=label, arch=arch, registers=regs, spill=spill, smem=smem, loops=nloops,
               main_loop=loop, ceiling_cycles=round(ce[0], 1) if ce else None, bound=ce[1] if ce else None,
               tensor_fraction=round(ce[2], 3) if ce and ce[2] is not None else None,
               pipes={k: round(v, 1) for k, v in ce[3].items()} if ce else None)
    rec.update(extra)
    return rec


def disassemble(nvd, cubin):
    if not nvd:
        return None, 0
    d = subprocess.run([nvd, "-c", cubin], capture_output=True, text=True)
    if d.returncode != 0:
        return None, 0
    return main_loop(d.stdout)


def main():
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tile", default=None)
    ap.add_argument("--arch", action="append")
    ap.add_argument("--nvdisasm")
    ap.add_argument("--filter", default="")
    ap.add_argument("--triton", metavar="PYTHON", help="a Python that imports triton (default: $TILE_TRITON_PYTHON, "
                    "/work/venv-triton/bin/python, or this Python if it imports triton)")
    ap.add_argument("--no-triton", action="store_true")
    ap.add_argument("--triton-mma-sync", action="store_true",
                    help="on sm_90 and later also Triton without wgmma (DISABLE_MMA_V3=1): its mma.sync code")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    tile = a.tile or os.path.join(root, "build", "tile")
    if not os.path.exists(tile):
        print("sass_report: %s not found: build first (cmake --build build) or give --tile" % tile, file=sys.stderr)
        return 2
    archs = a.arch or ["sm_80", "sm_90a"]
    nvd = find_nvdisasm(a.nvdisasm)
    configs = [cfg for cfg in CONFIGS if not a.filter or a.filter in cfg[4]]
    notes = []
    if not nvd:
        notes.append("%s (pip install nvidia-cuda-nvdisasm, or --nvdisasm PATH): ptxas numbers only" %
                     ("no nvdisasm at " + a.nvdisasm if a.nvdisasm else "no nvdisasm"))
    python = None
    if a.no_triton:
        notes.append("triton: skipped (--no-triton)")
    else:
        python = find_triton_python(a.triton)
        if not python:
            notes.append("triton: skipped: no Python that imports triton (give --triton PYTHON or "
                         "TILE_TRITON_PYTHON; python3 -m venv /work/venv-triton && "
                         "/work/venv-triton/bin/pip install triton)")
    if a.json:
        for n in notes:
            print(jline(note=n))
    else:
        print("SASS report: main loop per iteration (cyc: static ceiling in cycles per warp, bound: its pipe, "
              "tc: tensor-pipe share)")
        for n in notes:
            print(n)
        print(HEADER)
    rc = 0
    with tempfile.TemporaryDirectory() as tmp:
        for arch in archs:
            names = [n for cfg in configs for n in cfg[5]]
            variants = [("triton", False)]  # (row label, mma_sync)
            if a.triton_mma_sync and arch_family(arch) == "sm_90":
                variants.append(("triton/mma.sync", True))
            tri = {}
            for who, mma_sync in variants if python and names else []:
                recs, versions, why = triton_compile(python, root, arch, names,
                                                     os.path.join(tmp, who.replace("/", "_")), mma_sync)
                tri[who] = (recs, why)
                if versions and who == "triton":
                    v = "triton %s, its ptxas %s (%s)" % (versions.get("triton"), versions.get("ptxas_version"),
                                                          versions.get("ptxas"))
                    print(jline(note=v, arch=arch) if a.json else "%s: %s" % (arch, v))
                if why:
                    print(jline(note="%s: %s" % (who, why), arch=arch) if a.json else
                          "%s: %s: %s" % (arch, who, why))
            for cfg in configs:
                if ("(sm_90a launch)" in cfg[4] or "(sm_90a)" in cfg[4]) and arch != "sm_90a":
                    continue  # a configuration only sm_90a launches or times (too much shared memory elsewhere)
                out = os.path.join(tmp, "k.cubin")
                code, meta, err = compile_cfg(tile, root, cfg, arch, out)
                if code != 0:
                    print("%s %s: compile failed:\n%s" % (cfg[4], arch, err), file=sys.stderr)
                    rc = 1
                    continue
                c, nloops = disassemble(nvd, out)
                args = (cfg[4], arch, meta.get("registers", -1), meta.get("spill", -1), meta.get("smem", -1), c,
                        nloops)
                print(json.dumps(record("tile", *args)) if a.json else row(*args))
                for who, (recs, why) in tri.items():
                    if not recs and why:  # nothing compiled: the reason was printed once above
                        continue
                    for n in cfg[5]:
                        t = recs.get(n)
                        label = "  %s %s" % (who, n)
                        if t is None or "error" in t:
                            msg = t["error"] if t else (why or "no result")
                            print(jline(who=who, kernel=n, arch=arch, skipped=msg) if a.json else
                                  "%-54s %-6s %s" % (label[:54], arch, msg[:160]))
                            continue
                        c, nloops = disassemble(nvd, t["cubin"])
                        args = (label, arch, t["registers"], t["spill"], t["smem"], c, nloops)
                        print(json.dumps(record(who, n, *args[1:])) if a.json else row(*args))
    return rc


if __name__ == "__main__":
    sys.exit(main())
