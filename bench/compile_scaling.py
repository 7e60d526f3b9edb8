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
Each line: the shape, n, the stages' milliseconds (front end, Tile IR passes, LLVM, whole) and the
whole time per 1000 units of n; a near-constant last column across sizes is linear growth (LLVM's own
time on 50000 blocks is most of `ifs`: try --sizes 2500,5000,10000 there)."""
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
    raise SystemExit(f"unknown shape {shape}")


def stage(text, name):
    m = re.search(r"^" + re.escape(name) + r"\s+([0-9.]+) ms", text, re.M)
    return float(m.group(1)) if m else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tile", default=os.path.join(os.path.dirname(__file__), "..", "build", "tile"))
    ap.add_argument("--sizes", default="10000,50000,100000")
    ap.add_argument("--shapes", default="fns,consts,lets,rt_lets,stmts,ifs,lets_ifs")
    a = ap.parse_args()
    print(f"{'shape':8} {'n':>7} {'front end':>10} {'passes':>9} {'llvm':>9} {'whole':>9} {'ms/1000':>8}")
    with tempfile.TemporaryDirectory() as d:
        for shape in a.shapes.split(","):
            for n in (int(x) for x in a.sizes.split(",")):
                path = os.path.join(d, f"{shape}{n}.tile")
                with open(path, "w") as f:
                    f.write(gen(shape, n))
                stdlib = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "stdlib")
                r = subprocess.run([a.tile, "compile", path, "--no-cache", "--time-passes", "-I", stdlib, "-o", os.devnull],
                                   capture_output=True, text=True)
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
