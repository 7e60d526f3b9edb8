#!/usr/bin/env python3
"""sass_report.py - what ptxas made of every shipped kernel: registers, spills,
shared memory, and the main loop's SASS instructions per iteration by class.

    python3 bench/sass_report.py [--tile build/tile] [--arch sm_80 --arch sm_90a]
                                 [--nvdisasm PATH] [--filter TEXT] [--json]

For each configuration below (the kernel, its consts and the run-time
specializations the C API launches it with; the whole launched set, with
ptxas's registers and spills only, is tests/test_kernels.c
launched_configs_no_spills, which prints it as a table):
  1. `tile compile --emit cubin -v --no-cache` gives the cubin and ptxas's
     registers, spill bytes and shared memory;
  2. nvdisasm (the `nvidia-cuda-nvdisasm` wheel, or PATH; optional: without
     it only step 1 is printed) disassembles it;
  3. loops are found as a label and a later backward branch to it; the main
     loop is the one with the most tensor-core instructions (HMMA, IMMA,
     HGMMA), the first of them in code order when several tie: the steady
     state that lower/peel.c puts before the masked remainder;
  4. its instructions are counted by class: mma, ldsm (LDSM), copies
     (LDGSTS, UTMALDG, LDG, STS), fp32 (FFMA FMUL FADD FSEL FMNMX FSETP and
     the conversions F2F F2FP), mufu (MUFU), int (IMAD IADD3 ISETP LOP3 SEL
     SHF LEA PRMT IMNMX), local (LDL STL), other; `sel` counts the select
     and compare instructions (FSEL SEL ISETP FSETP), the mask arithmetic;
  5. a static ceiling of tensor-core use, from a per-warp issue model of
     one SM sub-partition: an mma.sync m16n8k16 keeps the tensor pipe busy
     8 cycles, every instruction takes an issue cycle, an FP32 instruction
     2 cycles of the FP32 pipe, a MUFU 8 cycles of the MUFU pipe:
        ceiling = 8 * mma / max(8 * mma, instructions, 2 * fp32, 8 * mufu).
     It is an upper bound from the instruction mix alone (no latency, no
     memory); compare kernels and versions with it, not GPUs.
Triton's numbers for the same tiles (issue 13's table) are compiled with
Triton's own tools when a venv has it; this script prints tile's side.
Exit status 1 when a configuration does not compile."""
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
GATE_SPECS = ["hidden=16", "inter=16", "sx=16"]
DOWN_SPECS = ["hidden=16", "inter=16", "so=16"]
# tile_attention_fwd specializes every stride divisible by 16 (contiguous [batch, seq, heads, 64k] tensors)
ATTN_SPECS = [s + "=16" for s in ("sqb", "sqs", "sqh", "skb", "sks", "skh", "svb", "svs", "svh", "sob", "sos", "soh",
                                  "slb", "slh")]

# tile_gemm's two defaults (kernels/gemm/gemm.c): the vector one (the first @config) when m, n, k, lda, ldb
# are multiples of 16 and the pointers aligned, the scalar one (the const defaults) otherwise
GEMM_VEC = ["BM=128", "BN=128", "BK=32", "num_warps=4", "num_stages=3"]
GEMM_ODD = ["sak=1", "sbn=1"]

# (file, kernel, defines, specializations, label); "NOALIGN" among the specializations: --no-align-ptrs
CONFIGS = [
    ("gemm/gemm.tile", "gemm_f16_f32", GEMM_VEC, GEMM_SPECS, "gemm f16->f32 128x128x32 w4 s3"),
    ("gemm/gemm.tile", "gemm_bf16_bf16", GEMM_VEC, GEMM_SPECS, "gemm bf16->bf16"),
    ("gemm/gemm.tile", "gemm_tf32_f32", [], GEMM_SPECS, "gemm tf32->f32"),
    ("gemm/gemm.tile", "gemm_i8_i32", ["BK=64", "num_warps=4"], GEMM_SPECS, "gemm i8->i32"),
    ("gemm/gemm.tile", "gemm_e4m3_f32", GEMM_VEC, GEMM_SPECS, "gemm e4m3->f32"),
    ("gemm/gemm.tile", "gemm_f16_f32", ["HAS_BETA=true", "ACT=2"], GEMM_SPECS, "gemm f16 w8 beta gelu (scalar cfg)"),
    ("gemm/gemm.tile", "gemm_f16_f32", [], GEMM_ODD + ["NOALIGN"], "gemm f16 odd lda, unaligned (scalar cfg)"),
    ("gemm/gemm.tile", "gemm_i8_i32", [], GEMM_ODD + ["NOALIGN"], "gemm i8 odd lda, unaligned (scalar cfg)"),
    ("gemm/gemm.tile", "gemm_f16_f32", [], [], "gemm f16 unspecialized"),
    ("gemm/gemm.tile", "gemm_i8_i32", [], [], "gemm i8 unspecialized"),
    ("matmul.tile", "matmul", [], [], "matmul (masked)"),
]
for hd in (64, 128, 256):
    for causal in (0, 1):
        bd = hd
        bn = 64 if hd <= 64 else 32
        warps = 8 if hd > 128 else 4  # as tile_attention_fwd launches it
        CONFIGS.append(("attention/attention.tile", "attention_fwd_f16",
                        ["HEAD_DIM=%d" % hd, "BLOCK_D=%d" % bd, "BM=64", "BN=%d" % bn, "CAUSAL=%d" % causal,
                         "num_warps=%d" % warps], ATTN_SPECS,
                        "attention hd%d BM64 BN%d w%d%s" % (hd, bn, warps, " causal" if causal else "")))
for hd in (64, 128):
    CONFIGS.append(("attention/attention.tile", "attention_fwd_f16",
                    ["HEAD_DIM=%d" % hd, "BLOCK_D=%d" % hd, "BM=128", "BN=64"], ATTN_SPECS,
                    "attention hd%d BM128 BN64 (Triton's tile)" % hd))
CONFIGS += [
    ("attention/paged_attention.tile", "paged_attention_f16", [], [], "paged decode hd128"),
    ("attention/paged_attention.tile", "paged_attention_f16_kv8", [], [], "paged decode hd128 kv f8"),
    ("moe/experts.tile", "moe_gate_up_f16", ["BN=64"], GATE_SPECS, "moe gate_up f16"),
    ("moe/experts.tile", "moe_gate_up_f16", [], ["NOALIGN"], "moe gate_up f16 odd sizes BN32"),
    ("moe/experts.tile", "moe_down_f16", [], DOWN_SPECS, "moe down f16"),
    ("moe/experts.tile", "moe_gate_up_f16_e4m3_block", ["BN=64"], GATE_SPECS, "moe gate_up e4m3 block"),
    ("moe/router.tile", "moe_router_f32", [], [], "moe router"),
    ("moe/router.tile", "moe_router_f32", ["K=8", "KP=8", "BE=256", "BT=8", "GROUPED=true", "GROUP_TOP2=true"], [],
     "moe router 256 experts grouped"),
    ("moe/router.tile", "moe_router_f32", ["K=1", "KP=8", "BE=1024", "BT=1", "GROUPED=true", "GROUP_TOP2=true"], [],
     "moe router 1024 experts grouped top1"),
    ("moe/align.tile", "moe_align_scan", [], [], "moe align scan"),
    ("moe/align.tile", "moe_align_scan", ["BE=256", "BC=4", "NB=8", "PJ=4"], [], "moe align scan 256 experts"),
    ("norm/norm.tile", None, [], [], "norm"),
    ("norm/act.tile", "act_f16", [], [], "gated activation"),
]

CLASSES = [
    ("mma", ("HMMA", "IMMA", "HGMMA", "QGMMA", "IGMMA")),
    ("ldsm", ("LDSM",)),
    ("copy", ("LDGSTS", "UTMALDG", "UBLKCP", "LDG", "STG", "STS", "LDS")),
    ("fp32", ("FFMA", "FMUL", "FADD", "FSEL", "FMNMX", "FSETP", "F2F", "F2FP", "FCHK")),
    ("mufu", ("MUFU",)),
    ("int", ("IMAD", "IADD3", "ISETP", "LOP3", "SEL", "SHF", "LEA", "PRMT", "IMNMX", "IABS", "MOV")),
    ("local", ("LDL", "STL")),
]
SELECTS = ("FSEL", "SEL", "ISETP", "FSETP")
INSTR = re.compile(r"/\*[0-9a-f]+\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*)(\.[A-Z0-9_.]*)?\s*([^;]*);")
LABEL = re.compile(r"^\s*(\.L_x_\d+):")
BRANCH = re.compile(r"\bBRA\b[^;]*?(\.L_x_\d+)")


def find_nvdisasm(given):
    if given:
        return given
    hit = shutil.which("nvdisasm")
    if hit:
        return hit
    for base in sys.path:
        for p in glob.glob(os.path.join(base, "nvidia", "*", "bin", "nvdisasm")):
            return p
    return None


def compile_cfg(tile, root, cfg, arch, out):
    path, kernel, defines, specs, _ = cfg
    cmd = [tile, "compile", os.path.join(root, "kernels", path), "--arch", arch, "--emit", "cubin", "-o", out, "-v",
           "--no-cache"]
    if kernel:
        cmd += ["--kernel", kernel]
    for d in defines:
        cmd += ["-D", d]
    for s in specs:
        cmd += ["--no-align-ptrs"] if s == "NOALIGN" else ["--specialize", s]
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


def count(lines):
    c = {k: 0 for k, _ in CLASSES}
    c.update(total=0, other=0, sel=0)
    for line in lines:
        m = INSTR.search(line)
        if not m:
            continue
        op = m.group(1)
        c["total"] += 1
        if op in SELECTS:
            c["sel"] += 1
        for name, ops in CLASSES:
            if op in ops:
                c[name] += 1
                break
        else:
            c["other"] += 1
    return c


def main_loop(sass):
    lines = sass.splitlines()
    best = None
    for s, e in loops(lines):
        c = count(lines[s:e + 1])
        if best is None or c["mma"] > best[0]["mma"]:
            best = (c, s)
    nloops = len(loops(lines))
    return (best[0] if best else None), nloops


def ceiling(c):
    if not c or not c["mma"]:
        return None
    busy = 8 * c["mma"]
    return busy / max(busy, c["total"], 2 * c["fp32"], 8 * c["mufu"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tile", default=None)
    ap.add_argument("--arch", action="append")
    ap.add_argument("--nvdisasm")
    ap.add_argument("--filter", default="")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    tile = a.tile or os.path.join(root, "build", "tile")
    archs = a.arch or ["sm_80", "sm_90a"]
    nvd = find_nvdisasm(a.nvdisasm)
    if not a.json:
        print("SASS report: main loop per iteration%s" % ("" if nvd else " (no nvdisasm: ptxas numbers only)"))
        print("%-44s %-6s %4s %5s %6s %5s %4s %4s %5s %5s %4s %4s %5s %3s %5s %4s" %
              ("kernel", "arch", "regs", "spill", "smem", "instr", "mma", "ldsm", "copy", "fp32", "mufu", "int",
               "local", "sel", "ceil", "lps"))
    rc = 0
    with tempfile.TemporaryDirectory() as tmp:
        for arch in archs:
            for cfg in CONFIGS:
                if a.filter and a.filter not in cfg[4]:
                    continue
                out = os.path.join(tmp, "k.cubin")
                code, meta, err = compile_cfg(tile, root, cfg, arch, out)
                if code != 0:
                    print("%s %s: compile failed:\n%s" % (cfg[4], arch, err), file=sys.stderr)
                    rc = 1
                    continue
                c, nloops = None, 0
                if nvd:
                    d = subprocess.run([nvd, "-c", out], capture_output=True, text=True)
                    if d.returncode == 0:
                        c, nloops = main_loop(d.stdout)
                ceil = ceiling(c)
                rec = dict(kernel=cfg[4], arch=arch, registers=meta.get("registers", -1), spill=meta.get("spill", -1),
                           smem=meta.get("smem", -1), loops=nloops, main_loop=c, ceiling=ceil)
                if a.json:
                    print(json.dumps(rec))
                    continue
                cc = c or {}
                g = lambda k: str(cc[k]) if k in cc else "-"
                print("%-44s %-6s %4d %5d %6d %5s %4s %4s %5s %5s %4s %4s %5s %3s %5s %4d" %
                      (cfg[4][:44], arch, rec["registers"], rec["spill"], rec["smem"], g("total"), g("mma"), g("ldsm"),
                       g("copy"), g("fp32"), g("mufu"), g("int"), g("local"), g("sel"),
                       "%.0f%%" % (100 * ceil) if ceil is not None else "-", nloops))
    return rc


if __name__ == "__main__":
    sys.exit(main())
