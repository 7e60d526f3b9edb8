#!/usr/bin/env python3
"""How compile time grows with the size of a generated program: each shape at three sizes, timed
through `tile compile --time-passes` (one cold compile each, --no-cache).

    python bench/compile_scaling.py [--tile build/tile] [--sizes 10000,50000,100000]
                                    [--shapes fns,consts,lets,rt_lets,stmts,ifs,lets_ifs]
    python bench/compile_scaling.py --shapes loads,same_loads,rand --sizes 100,250,500,1000

Shapes (n is the size):
  fns      n functions `fn h_i(x) { return x + i; }`, the kernel calling 1000 of them
  consts   n file-level consts, each defined from the one before
  lets     n compile-time `let`s in one scope
  rt_lets  n run-time `let`s (each calling program_id: a name looked up among all the `let`s before it)
  stmts    n run-time assignments `a = a + 1;`
  ifs      n run-time `if`s in a row, each assigning one variable
  lets_ifs n run-time `let`s, then n run-time `if`s (each `if` keeps aside what its branches assign)
  loads    one sum of n masked loads `load(p + offs + i, mask=m)` of a 1024-element tile (8 a thread)
  same_loads  the same with n identical terms `load(p + offs, mask=m)` (CSE leaves one load)
  rand     n terms `dropout(v, p, seed, offs) + rand(seed, offs)` (random.tile: one Philox loop each
           before CSE; equal loops are one)
  loops    n loops in a row, each summing a masked load through a carried pointer (advanced by BLOCK) into
           its own carried accumulator, then a scalar atomic_add of the sum whose old value the kernel adds up
           (broadcast to every thread)
  body     one loop whose body is n run-time assignments to 8 carried tensors
  atomics  n tensor atomic_adds in a row, each old value (replicated: 64 elements, 128 threads) added up
Each line: the shape, n, the stages' milliseconds (front end, Tile IR passes, LLVM, whole) and the
whole time per 1000 units of n; a near-constant last column across sizes is linear growth (LLVM's own
time on 50000 blocks is most of `ifs`: try --sizes 2500,5000,10000 there).  --by-pass prints, for each
shape, the milliseconds of every Tile IR pass (and of the verifier run after each) at each size, compiling
to Tile IR only and keeping the least of --repeat runs (wall times: on a loaded machine a pass's time may
jump in one size), then the ratio of the last size's time to the first's: a pass whose ratio is far above
the sizes' own grows faster than linearly, e.g.

    python bench/compile_scaling.py --shapes loops,body,atomics --sizes 100,200,400,800 --by-pass [--repeat 3]"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def gen(shape, n):
    if shape == "fns":
        calls = "\n".join(f"    a = h_{i}(a);" for i in range(0, n, max(1, n // 1000)))
        return "".join(f"fn h_{i}(x) {{ return x + {i}; }}\n" for i in range(n)) + \
            f"kernel k(p: *i32) {{\n    let a = program_id(0);\n{calls}\n    store(p, a);\n}}\n"
    if shape == "consts":
        return "const C_0: i32 = 1;\n" + "".join(f"const C_{i}: i32 = C_{i - 1} + 1;\n" for i in range(1, n)) + \
            f"kernel k(p: *i32) {{ store(p, C_{n - 1}); }}\n"
    if shape in ("lets", "rt_lets"):
        v = "program_id(0) + " if shape == "rt_lets" else ""
        body = "".join(f"    let v_{i} = {v}{i};\n" for i in range(n))
        return f"kernel k(p: *i32) {{\n{body}    store(p, v_{n - 1} + v_0);\n}}\n"
    if shape == "stmts":
        body = "    a = a + 1;\n" * n
        return f"kernel k(p: *i32) {{\n    let a = program_id(0);\n{body}    store(p, a);\n}}\n"
    if shape == "ifs":
        body = "".join(f"    if a > {i} {{ a = a + 1; }}\n" for i in range(n))
        return f"kernel k(p: *i32) {{\n    let a = program_id(0);\n{body}    store(p, a);\n}}\n"
    if shape == "lets_ifs":
        lets = "".join(f"    let v_{i} = a + {i};\n" for i in range(n))
        body = "".join(f"    if v_{i} > 7 {{ a = a + v_{i}; }}\n" for i in range(n))
        return f"kernel k(p: *i32) {{\n    let a = program_id(0);\n{lets}{body}    store(p, a);\n}}\n"
    if shape in ("loads", "same_loads"):
        terms = " + ".join(f"load(p + offs{'' if shape == 'same_loads' else f' + {i}'}, mask=m)" for i in range(n))
        return ("kernel k(p: *f32, out: *f32, n: i32, const BLOCK: i32 = 1024) {\n"
                "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n    let m = offs < n;\n"
                f"    let t = {terms};\n    store(out + offs, t, m);\n}}\n")
    if shape == "rand":
        terms = " + ".join(["dropout(v, p, seed, offs) + rand(seed, offs)"] * n)
        return ('import "random.tile";\n'
                "kernel k(x: *f32, out: *f32, n: i32, seed: i32, p: f32, const BLOCK: i32 = 64) {\n"
                "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n    let mask = offs < n;\n"
                "    let v = load(x + offs, mask, 0.0);\n"
                f"    let d = {terms};\n    store(out + offs, d, mask);\n}}\n")
    if shape == "loops":
        body = "".join(f"    let acc_{i} = zeros([BLOCK], f32);\n    let p_{i} = x + cols;\n"
                       f"    for off in range(0, n, BLOCK) {{\n"
                       f"        acc_{i} += load(p_{i}, off + cols < n, 0.0) * {i + 1}.0;\n        p_{i} += BLOCK;\n    }}\n"
                       f"    t = t + atomic_add(out + {i % 64}, sum(acc_{i}, axis=0));\n" for i in range(n))
        return ("@num_warps(4)\nkernel k(x: *f32, out: *f32, n: i32, const BLOCK: i32 = 128) {\n"
                f"    let cols = arange(0, BLOCK);\n    let t = 0.0;\n{body}    store(out + 64, t);\n}}\n")
    if shape == "body":
        lines = "".join(f"        a{i % 8} = a{i % 8} * v + a{(i + 3) % 8} * {i % 13 + 1}.0;\n" for i in range(n))
        init = "".join(f"    let a{j} = zeros([BLOCK], f32);\n" for j in range(8))
        out = " + ".join(f"a{j}" for j in range(8))
        return ("@num_warps(4)\nkernel k(x: *f32, out: *f32, n: i32, const BLOCK: i32 = 128) {\n"
                f"    let cols = arange(0, BLOCK);\n{init}"
                f"    for off in range(0, n, BLOCK) {{\n        let c = off + cols;\n        let v = load(x + c, c < n, 0.0);\n"
                f"{lines}    }}\n    store(out + cols, {out});\n}}\n")
    if shape == "atomics":
        body = "".join(f"    s = s + atomic_add(out + cols + {i % 16 * 64}, v * {i % 7 + 1}.0, m);\n" for i in range(n))
        return ("@num_warps(4)\nkernel k(x: *f32, out: *f32, n: i32, const BLOCK: i32 = 64) {\n"
                "    let cols = arange(0, BLOCK);\n    let m = cols < n;\n    let v = load(x + cols, m, 0.0);\n"
                f"    let s = zeros([BLOCK], f32);\n{body}    store(x + cols, s, m);\n}}\n")
    raise SystemExit(f"unknown shape {shape}")


def stage(text, name):
    m = re.search(r"^" + re.escape(name) + r"\s+([0-9.]+) ms", text, re.M)
    return float(m.group(1)) if m else 0.0


PASS_LINE = re.compile(r"^(\S+(?: \S+)?)\s+([0-9.]+) ms$", re.M)
NOT_PASSES = ("frontend", "passes total", "source to tir", "llvm codegen", "llvm O3", "ptx emission", "source to ptx", "ptxas")


def compile_timed(a, path, *extra):
    stdlib = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "stdlib")
    return subprocess.run([a.tile, "compile", path, "--no-cache", "--time-passes", "-I", stdlib, "-o", os.devnull, *extra],
                          capture_output=True, text=True)


def by_pass(a, d, shape, sizes):
    """One table per shape: a row per pass (its milliseconds summed over the pipeline's runs of it), the
    verifier (the passes' total less their sum), then the ratio of the last size to the first."""
    cols = []
    for n in sizes:
        path = os.path.join(d, f"{shape}{n}.tile")
        with open(path, "w") as f:
            f.write(gen(shape, n))
        best = {}
        for _ in range(a.repeat):  # the least of each: a loaded machine's pauses land in one run, not in all
            r = compile_timed(a, path, "--emit", "tir")  # the passes only: LLVM is timed by the table without --by-pass
            if r.returncode:
                print(f"{shape} {n} failed: {r.stderr.strip().splitlines()[:1]}")
                return
            for k, v in PASS_LINE.findall(r.stderr):
                best[k] = min(best.get(k, float("inf")), float(v))
        cols.append(best)
    names = [k for k in cols[0] if k not in NOT_PASSES]
    for c in cols:
        c["verify"] = c["passes total"] - sum(c[k] for k in names)
    rows = names + ["verify", "passes total", "frontend"]
    grow = sizes[-1] / sizes[0]
    print(f"{shape}: ms by pass (x{grow:g} in size: a ratio well above {grow:g} grows faster than linearly)")
    print(f"  {'pass':18}" + "".join(f"{n:>10}" for n in sizes) + f"{'ratio':>8}")
    for k in rows:
        v = [c.get(k, 0.0) for c in cols]
        ratio = f"{v[-1] / v[0]:8.1f}" if v[0] >= 0.05 else f"{'-':>8}"
        print(f"  {k:18}" + "".join(f"{x:10.1f}" for x in v) + ratio)
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tile", default=os.path.join(os.path.dirname(__file__), "..", "build", "tile"))
    ap.add_argument("--sizes", default="10000,50000,100000")
    ap.add_argument("--shapes", default="fns,consts,lets,rt_lets,stmts,ifs,lets_ifs")
    ap.add_argument("--by-pass", action="store_true", help="the milliseconds of each Tile IR pass at each size")
    ap.add_argument("--repeat", type=int, default=3, help="with --by-pass: compiles of each size, the least time kept")
    a = ap.parse_args()
    if a.by_pass:
        with tempfile.TemporaryDirectory() as d:
            for shape in a.shapes.split(","):
                by_pass(a, d, shape, [int(x) for x in a.sizes.split(",")])
        return
    print(f"{'shape':8} {'n':>7} {'front end':>10} {'passes':>9} {'llvm':>9} {'whole':>9} {'ms/1000':>8}")
    with tempfile.TemporaryDirectory() as d:
        for shape in a.shapes.split(","):
            for n in (int(x) for x in a.sizes.split(",")):
                path = os.path.join(d, f"{shape}{n}.tile")
                with open(path, "w") as f:
                    f.write(gen(shape, n))
                r = compile_timed(a, path)
                if r.returncode:
                    print(f"{shape:8} {n:>7} failed: {r.stderr.strip().splitlines()[:1]}")
                    continue
                fe, ps = stage(r.stderr, "frontend"), stage(r.stderr, "passes total")
                llvm = stage(r.stderr, "llvm codegen") + stage(r.stderr, "llvm O3") + stage(r.stderr, "ptx emission")
                whole = fe + ps + llvm
                print(f"{shape:8} {n:>7} {fe:>10.1f} {ps:>9.1f} {llvm:>9.1f} {whole:>9.1f} {whole / n * 1000:>8.1f}")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
