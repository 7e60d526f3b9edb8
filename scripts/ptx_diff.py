#!/usr/bin/env python3
"""ptx_diff.py - differential check of the emulator's PTX loader against ptxas (not a test; docs/testing.md).

The emulator promises to load what ptxas accepts and to refuse, at load, what ptxas refuses (docs/emulator.md).
This takes a corpus of valid PTX, makes single-statement mutations that stay plausible, runs `ptxas -arch=<the
file's .target>` and the emulator's load (build/bench/ptx_check) on each, and reports every disagreement:

  ptxas-only  ptxas accepts, the emulator refuses (a form the emulator should load, or list as unsupported)
  emu-only    ptxas refuses, the emulator loads (a form the emulator would run with a meaning of its own)

Mutations, one per file (each changes one line): drop, duplicate or swap a modifier of an instruction, change a
type suffix, add a modifier from a pool, change a vector width, change an operand's register to one of another
class or width, an immediate for a register and back, the state space of a named variable (its declaration or an
instruction's space), add or remove a guard predicate, lower .version or change .target.  A mutation is tried once
per (opcode, mutation) form, so long kernels do not repeat themselves.

  scripts/ptx_diff.py [--build build] [--out DIR] [--max N] [--jobs J] [--seed S] [--corpus default|FILES...]

The default corpus: tests/emu/*.ptx, the shipped kernels' PTX for sm_80 and sm_90a (build/tile compile) and
tests/conformance/*.cu through nvcc -ptx (sm_80, sm_90a), written to OUT/corpus.  Results: OUT/report.txt
(disagreements by class, an example each), OUT/disagreements.tsv (all of them) and OUT/all.tsv (every mutation with
both answers).  --loader names another ptx_check, e.g. one built against an older libtile_rt, to compare.
"""
import argparse
import collections
import concurrent.futures
import glob
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CUDA = os.environ.get("CUDA_HOME", "/usr/local/cuda")
PTXAS = shutil.which("ptxas") or os.path.join(CUDA, "bin", "ptxas")
NVCC = shutil.which("nvcc") or os.path.join(CUDA, "bin", "nvcc")

TYPES = ["b8", "b16", "b32", "b64", "b128", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "f16", "f16x2",
         "bf16", "bf16x2", "f32", "f64", "tf32", "e4m3", "e5m2", "pred", "u16x2", "s16x2"]
TYPE_SET = set(TYPES)
# modifiers to add: each a word some instruction takes
POOL = ["ftz", "sat", "rn", "rz", "rm", "rp", "rni", "rzi", "approx", "full", "relaxed", "acquire", "release", "acq_rel",
        "volatile", "weak", "cta", "gpu", "sys", "cluster", "nc", "wide", "lo", "hi", "uni", "aligned", "sync", "ca", "cg",
        "cs", "lu", "cv", "wb", "wt", "global", "shared", "local", "const", "param", "shared::cta", "shared::cluster",
        "L1::evict_last", "L2::evict_first", "L2::128B", "L2::cache_hint", "v2", "v4", "noftz", "NaN", "xorsign", "relu",
        "satfinite", "trans", "x4", "row", "col", "clamp", "wrap", "cc", "and", "or", "eq", "ne", "lt", "ge", "ltu",
        "shiftamt", "mmio", "unified", "f32", "u32", "s32", "b32"]
SPACES = ["global", "shared", "local", "const", "param"]
VERSIONS = ["6.0", "6.4", "7.0", "7.4", "7.8", "8.0", "8.3", "8.5", "8.7"]
TARGETS = ["sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"]

INS_RE = re.compile(r"^(\s*)(@!?%?\w+\s+)?([a-z][\w.:]*)(\s+[^;]*)?;(\s*(//.*)?)$")
REG_DECL_RE = re.compile(r"\.reg\s+(?:\.v\d\s+)?\.(\w+)\s+(%\w+?)<(\d+)>")
REG_RE = re.compile(r"%[a-zA-Z_]\w*")
IMM_RE = re.compile(r"(?<![\w%.])(-?\d+)(?![\w.])")


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def file_target(text):
    m = re.search(r"^\s*\.target\s+(sm_\w+)", text, re.M)
    return m.group(1) if m else "sm_80"


def build_corpus(build, outdir):
    """The default corpus, written to outdir/corpus; returns the paths."""
    cdir = os.path.join(outdir, "corpus")
    os.makedirs(cdir, exist_ok=True)
    paths = sorted(glob.glob(os.path.join(ROOT, "tests", "emu", "*.ptx")))
    tile = os.path.join(build, "tile")
    for src in sorted(glob.glob(os.path.join(ROOT, "kernels", "**", "*.tile"), recursive=True)):
        for arch in ("sm_80", "sm_90a"):
            dst = os.path.join(cdir, "%s.%s.ptx" % (os.path.relpath(src, os.path.join(ROOT, "kernels"))[:-5].replace("/", "_"), arch))
            if not os.path.exists(dst):
                r = run([tile, "compile", src, "--arch", arch, "-o", dst])
                if r.returncode:
                    print("ptx_diff: %s --arch %s: %s" % (src, arch, r.stdout.strip()[:200]), file=sys.stderr)
                    continue
            paths.append(dst)
    for src in sorted(glob.glob(os.path.join(ROOT, "tests", "conformance", "*.cu"))):
        for arch in ("sm_80", "sm_90a"):
            dst = os.path.join(cdir, "%s.%s.ptx" % (os.path.basename(src)[:-3], arch))
            if not os.path.exists(dst):
                r = run([NVCC, "-ptx", "-O3", "-arch=" + arch, "-I" + os.path.join(ROOT, "tests", "conformance"), src, "-o", dst])
                if r.returncode:
                    continue  # some need sm_90 or another architecture
            paths.append(dst)
    return [p for p in paths if os.path.exists(p)]


class Func:
    """What a mutation needs to know of the function a line is in: its registers by class."""

    def __init__(self):
        self.regs = {}  # type -> [names]

    def add(self, ty, prefix, n):
        names = ["%s%d" % (prefix, i) for i in range(min(n, 4))]
        self.regs.setdefault(ty, []).extend(names)


def scan(lines):
    """Per line: the function (Func) it is in or None; declarations seen before the line count."""
    funcs, cur, depth = [], None, 0
    for ln in lines:
        if cur is None and re.search(r"\.(entry|func)\b", ln):
            cur = Func()
        if cur is not None:
            for m in REG_DECL_RE.finditer(ln):
                cur.add(m.group(1), m.group(2), int(m.group(3)))
            depth += ln.count("{") - ln.count("}")
        funcs.append(cur)
        if cur is not None and depth <= 0 and "}" in ln:
            cur, depth = None, 0
    return funcs


def reg_type(func, name):
    for ty, names in func.regs.items():
        if name in names:
            return ty
    m = re.match(r"(%\w*?)\d+$", name)
    if m:
        for ty, names in func.regs.items():
            if names and re.match(r"(%\w*?)\d+$", names[0]).group(1) == m.group(1):
                return ty
    return None


def mutations(lines, rng):
    """Yield (line index, new line, kind, form) for the plausible single-line mutations of a file."""
    funcs = scan(lines)
    for i, ln in enumerate(lines):
        s = ln.strip()
        if s.startswith(".version"):
            for v in VERSIONS:
                if v not in s:
                    yield i, ".version %s" % v, "version", v
            continue
        if s.startswith(".target"):
            for t in TARGETS:
                if not re.search(r"\b%s\b" % t, s):
                    yield i, re.sub(r"sm_\w+", t, ln, count=1), "target", t
            continue
        f = funcs[i]
        if f is None:
            m = re.match(r"^(\s*(?:\.visible\s+|\.extern\s+)?)\.(global|shared|const)\b(.*)$", ln)
            if m:
                for sp in SPACES:
                    if sp != m.group(2):
                        yield i, "%s.%s%s" % (m.group(1), sp, m.group(3)), "var-space", "%s->%s" % (m.group(2), sp)
            continue
        m = re.match(r"^(\s*)\.(shared|local|global|const)\b(.*)$", ln)
        if m:
            for sp in SPACES:
                if sp != m.group(2):
                    yield i, "%s.%s%s" % (m.group(1), sp, m.group(3)), "var-space", "%s->%s" % (m.group(2), sp)
            continue
        m = INS_RE.match(ln)
        if not m or s.startswith("."):
            continue
        indent, guard, opc, ops = m.group(1), m.group(2) or "", m.group(3), m.group(4) or ""
        words = opc.split(".")
        base = words[0]
        if base in ("ret", "exit", "bra", "call") and len(words) == 1:
            continue

        def mk(new_opc=opc, new_ops=ops, new_guard=guard):
            return "%s%s%s%s;" % (indent, new_guard, new_opc, new_ops)

        mods = words[1:]
        for k, w in enumerate(mods):
            yield i, mk(".".join([base] + mods[:k] + mods[k + 1:])), "drop-mod", "%s -.%s" % (opc, w)
            yield i, mk(".".join([base] + mods[:k + 1] + [w] + mods[k + 1:])), "dup-mod", "%s +.%s" % (opc, w)
            if k + 1 < len(mods) and mods[k + 1] != w:
                sw = mods[:k] + [mods[k + 1], w] + mods[k + 2:]
                yield i, mk(".".join([base] + sw)), "swap-mod", "%s %s<->%s" % (opc, w, mods[k + 1])
            if w in TYPE_SET:
                for t in rng.sample(TYPES, 5):
                    if t != w:
                        yield i, mk(".".join([base] + mods[:k] + [t] + mods[k + 1:])), "type", "%s .%s->.%s" % (opc, w, t)
            if w in ("v2", "v4", "v8"):
                for v in ("v2", "v4", "v8"):
                    if v != w:
                        yield i, mk(".".join([base] + mods[:k] + [v] + mods[k + 1:])), "vec", "%s .%s->.%s" % (opc, w, v)
            if w in SPACES or w.startswith("shared::"):
                for sp in SPACES + ["shared::cta", "shared::cluster"]:
                    if sp != w:
                        yield i, mk(".".join([base] + mods[:k] + [sp] + mods[k + 1:])), "ins-space", "%s .%s->.%s" % (opc, w, sp)
        for w in rng.sample(POOL, 6):
            if w not in mods:
                pos = rng.randint(0, len(mods))
                yield i, mk(".".join([base] + mods[:pos] + [w] + mods[pos:])), "add-mod", "%s +.%s" % (opc, w)
        # operands: another register class, an immediate for a register, a register for an immediate
        regs = [r for r in REG_RE.findall(ops) if not r.startswith(("%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%warpid",
                                                                         "%clock", "%globaltimer", "%smid", "%nsmid", "%cluster",
                                                                         "%is_explicit", "%dynamic_smem", "%total_smem",
                                                                         "%aggr_smem", "%lanemask", "%envreg", "%gridid",
                                                                         "%nwarpid", "%pm", "%reserved", "%current_graph"))]
        seen = set()
        for r in regs:
            if r in seen:
                continue
            seen.add(r)
            rt = reg_type(f, r)
            others = [t for t in f.regs if t != rt and f.regs[t]]
            for t in rng.sample(others, min(2, len(others))):
                new = re.sub(re.escape(r) + r"(?!\w)", f.regs[t][-1], ops, count=1)
                yield i, mk(new_ops=new), "reg-class", "%s %s(.%s)->.%s" % (opc, "op", rt, t)
            new = re.sub(r"(?<![\[\w])" + re.escape(r) + r"(?![\w\]+])", "1", ops, count=1)
            if new != ops:
                yield i, mk(new_ops=new), "reg->imm", "%s .%s" % (opc, rt)
        for im in list(IMM_RE.finditer(ops))[:2]:
            cands = [t for t in ("b32", "u32", "s32", "b64", "u64", "f32") if f.regs.get(t)]
            if cands:
                t = rng.choice(cands)
                new = ops[:im.start()] + f.regs[t][-1] + ops[im.end():]
                yield i, mk(new_ops=new), "imm->reg", "%s .%s" % (opc, t)
        if guard:
            yield i, mk(new_guard=""), "pred", "%s -guard" % opc
        elif f.regs.get("pred"):
            yield i, mk(new_guard="@%s " % f.regs["pred"][-1]), "pred", "%s +guard" % opc


def ptxas_ok(path, arch):
    try:
        r = run([PTXAS, "-arch=" + arch, path, "-o", os.devnull], timeout=120)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    return r.returncode == 0, r.stdout.strip().replace("\n", " ")[:300]


def emu_check(loader, paths):
    r = subprocess.run([loader], input="\n".join(paths) + "\n", stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = {}
    for ln in r.stdout.splitlines():
        if ln.startswith("ok "):
            out[ln[3:]] = (True, "")
        elif ln.startswith("refused "):
            p, _, msg = ln[8:].partition(": ")
            out[p] = (False, msg[:300])
    for p in paths:  # a crash of the loader: what it did not answer
        out.setdefault(p, (False, "ptx_check crashed: %s" % r.stderr.strip()[-200:]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=None)
    ap.add_argument("--max", type=int, default=2000, help="mutations to try (default 2000)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batch", type=int, default=200)
    ap.add_argument("--loader", default=None, help="another ptx_check (one built against an older libtile_rt, to compare)")
    ap.add_argument("corpus", nargs="*")
    a = ap.parse_args()
    loader = a.loader or os.path.join(a.build, "bench", "ptx_check")
    if not os.path.exists(loader):
        sys.exit("ptx_diff: %s missing (cmake --build %s --target bench_ptx_check)" % (loader, a.build))
    out = a.out or tempfile.mkdtemp(prefix="ptx_diff.")
    os.makedirs(out, exist_ok=True)
    corpus = a.corpus or build_corpus(a.build, out)
    rng = random.Random(a.seed)
    mdir = os.path.join(out, "mutants")
    os.makedirs(mdir, exist_ok=True)

    # the originals: both must take them
    base = {}
    orig_ok = emu_check(loader, corpus)
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        px = dict(zip(corpus, ex.map(lambda p: ptxas_ok(p, file_target(open(p).read())), corpus)))
    for p in corpus:
        if not px[p][0] or not orig_ok[p][0]:
            print("ptx_diff: skipping %s (ptxas: %s, emulator: %s)" % (p, px[p][1][:120] or "ok", orig_ok[p][1][:120] or "ok"),
                  file=sys.stderr)
            continue
        base[p] = open(p).read()

    # all mutations, one per (kind, form), shuffled across files
    cands, forms = [], set()
    for p, text in base.items():
        lines = text.split("\n")
        for i, new, kind, form in mutations(lines, rng):
            key = (kind, re.sub(r"\d+", "N", form) if kind in ("reg-class", "imm->reg") else form)
            if key in forms:
                continue
            forms.add(key)
            cands.append((p, i, new, kind, form))
    rng.shuffle(cands)
    cands = cands[:a.max]
    print("ptx_diff: %d files, %d mutation forms, trying %d" % (len(base), len(forms), len(cands)), file=sys.stderr)

    results = []
    for b0 in range(0, len(cands), a.batch):
        batch = []
        for n, (p, i, new, kind, form) in enumerate(cands[b0:b0 + a.batch], b0):
            lines = base[p].split("\n")
            old = lines[i]
            lines[i] = new
            text = "\n".join(lines)
            mp = os.path.join(mdir, "m%05d.ptx" % n)
            with open(mp, "w") as fh:
                fh.write(text)
            batch.append((mp, p, i + 1, old.strip(), new.strip(), kind, form, file_target(text)))
        emu = emu_check(loader, [b[0] for b in batch])
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
            pt = list(ex.map(lambda b: ptxas_ok(b[0], b[7]), batch))
        for b, (pok, plog) in zip(batch, pt):
            eok, emsg = emu[b[0]]
            results.append(b + (pok, plog, eok, emsg))
        print("ptx_diff: %d/%d" % (len(results), len(cands)), file=sys.stderr)

    with open(os.path.join(out, "all.tsv"), "w") as fh:  # every mutation and both answers
        fh.write("mutant\tfile\tline\told\tnew\tkind\tform\ttarget\tptxas\tptxas_log\temu\temu_msg\n")
        for r in results:
            fh.write("\t".join(str(x).replace("\t", " ") for x in r) + "\n")
    dis = [r for r in results if r[8] is not None and r[8] != r[10]]
    by = collections.defaultdict(list)
    for r in dis:
        kind, form = r[5], r[6]
        direction = "ptxas-only" if r[8] else "emu-only"
        by[(direction, kind, form.split(" ")[0].split(".")[0])].append(r)
    with open(os.path.join(out, "disagreements.tsv"), "w") as fh:
        fh.write("mutant\tfile\tline\told\tnew\tkind\tform\ttarget\tptxas\tptxas_log\temu\temu_msg\n")
        for r in dis:
            fh.write("\t".join(str(x).replace("\t", " ") for x in r) + "\n")
    with open(os.path.join(out, "report.txt"), "w") as fh:
        fh.write("%d mutations tried, %d disagreements (%d ptxas-only, %d emu-only), %d classes\n\n" % (
            len(results), len(dis), sum(1 for r in dis if r[8]), sum(1 for r in dis if not r[8]), len(by)))
        for key in sorted(by, key=lambda k: (-len(by[k]), k)):
            r = by[key][0]
            fh.write("%-10s %-9s %-16s %4d  e.g. %s (line %d of %s)\n      %s\n      ptxas: %s\n      emu:   %s\n" % (
                key[0], key[1], key[2], len(by[key]), r[4], r[2], os.path.basename(r[1]), r[0], r[9][:200] or "ok",
                r[11][:200] or "ok"))
    print(open(os.path.join(out, "report.txt")).read().split("\n")[0])
    print("ptx_diff: report in %s/report.txt" % out)


if __name__ == "__main__":
    main()
