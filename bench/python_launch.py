#!/usr/bin/env python3
"""Launch overhead of the Python package: a tight loop of small launches on the emulator.

    python bench/python_launch.py [--iters N] [--json]

The kernel is kernels/add.tile with n = 1 (one program, one live element), so
the launch path dominates.  Reported, in microseconds per launch:
  python_call     k[grid](x, y, out, n) with the launcher bound once (l = k[grid]; l(...))
  python_subscript the same with k[grid] in the loop (Triton's usual spelling)
  python_lambda   k[lambda meta: ...](...) (the grid callable run on every launch)
  python_no_launch k[(0,)](...): the whole Python path, an empty grid launches nothing
  c_launch        the bare C tile_launch of the same converted arguments, timed in C
                  (the emulator running the kernel, plus the runtime's checks)
  overhead        python_call - c_launch: what the Python layer adds (argument
                  conversion, registration cache lookups, specialization key,
                  variant lookup, GIL release)
Each figure is the best of --repeat rounds of --iters launches, the rounds
interleaving the loops.
With --json: one JSON object per line, as the C benchmarks print."""
import argparse
import json
import os
import sys
import time

import numpy as np

import tile


def best(fn, iters, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(iters)
        times.append((time.perf_counter() - t0) / iters)
    return min(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--json", action="store_true", help="one JSON object per result")
    ap.add_argument("--device", default="emu")
    a = ap.parse_args()

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    # one emulator host thread: blocks run in the calling thread, as bench/launch_overhead measures
    dev = tile.Device(a.device, emu_threads=1) if a.device == "emu" else tile.device(a.device)
    k = tile.compile(os.path.join(root, "kernels", "add.tile"), BLOCK=128, device=dev).add
    n = 1
    x = np.ones(16, np.float32)
    y = np.ones(16, np.float32)
    out = np.zeros(16, np.float32)
    launcher = k[(1,)]
    launcher(x, y, out, n)  # compile the variant, register the arrays
    dev.synchronize()
    if out[0] != 2.0:
        sys.exit("python_launch: wrong result %r" % out[0])

    def call(iters):
        for _ in range(iters):
            launcher(x, y, out, n)

    def subscript(iters):
        for _ in range(iters):
            k[(1,)](x, y, out, n)

    grid = lambda meta: (tile.cdiv(n, meta["BLOCK"]),)  # noqa: E731

    def with_lambda(iters):
        for _ in range(iters):
            k[grid](x, y, out, n)

    empty = k[(0,)]

    def no_launch(iters):
        for _ in range(iters):
            empty(x, y, out, n)

    # rounds interleave the measurements, so a noisy machine disturbs them alike; best of the rounds
    loops = {"python_call": call, "python_subscript": subscript, "python_lambda": with_lambda,
             "python_no_launch": no_launch}
    res = {name: float("inf") for name in list(loops) + ["c_launch"]}
    for _ in range(a.repeat):
        for name, fn in loops.items():
            res[name] = min(res[name], best(fn, a.iters, 1))
        res["c_launch"] = min(res["c_launch"], launcher._time_c(a.iters, x, y, out, n))
    res["overhead"] = res["python_call"] - res["c_launch"]
    res["overhead_subscript"] = res["python_subscript"] - res["c_launch"]
    res["overhead_lambda"] = res["python_lambda"] - res["c_launch"]
    for name, v in res.items():
        if a.json:
            print(json.dumps({"bench": "python_launch", "name": name, "us_per_launch": round(v * 1e6, 3),
                              "iters": a.iters, "device": dev.name, "python": sys.version.split()[0]}))
        else:
            print("%-20s %8.3f us/launch" % (name, v * 1e6))


if __name__ == "__main__":
    main()
