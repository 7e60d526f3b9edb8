#!/usr/bin/env python3
"""Launch overhead of the Python package: a tight loop of small launches on the emulator.

    python bench/python_launch.py [--iters N] [--repeat R] [--json]

The kernel is kernels/add.tile (BLOCK=32, num_warps=1) with n = 1 (one
program of one warp, one live element), on an emulator device with one host
thread, so the launch path dominates.  Reported, in microseconds per launch:
  python_call       launch(x, y, out, n) with launch = k[grid] bound once
  python_subscript  k[grid](x, y, out, n) (Triton's usual spelling)
  python_lambda     k[lambda meta: ...](x, y, out, n) (the grid callable runs every launch)
  python_no_launch  k[(0,)](x, y, out, n): the whole Python path; an empty grid launches nothing
  c_launch_bulk     a C loop of bare tile_launch calls on the converted arguments
  c_launch_in_loop  the same tile_launch timed in C one launch at a time from a Python
                    loop (launch._time_c(1, ...)): slower than the bulk loop, because the
                    interpreter between launches evicts the emulator's caches
  overhead          python_call minus c_launch_in_loop: what a launch from Python adds to its
                    tile_launch (argument conversion, the registration cache, the
                    specialization key, the variant lookup, the call and its Ctrl-C handling)
  prepare_only      the timed loop's time per launch minus its tile_launch time: the argument
                    conversion alone (the part of overhead before tile_launch is called)
  python_call_cpu, c_launch_in_loop_cpu, overhead_cpu
                    python_call, c_launch_in_loop and overhead in the process's CPU time
                    (every thread's): steadier than the wall-clock figures on a loaded machine,
                    and they count work done in other threads (a thread per launch would show)
Each figure is the best of --repeat rounds of --iters launches, the rounds
interleaving the loops.  With --json: one JSON object per line, as the C
benchmarks print."""
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
    # one warp of 32 threads: the emulator's run of the kernel stays small next to the launch path
    k = tile.compile(os.path.join(root, "kernels", "add.tile"), BLOCK=32, num_warps=1, device=dev).add
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

    def call_cpu(iters):
        t0 = time.process_time()
        for _ in range(iters):
            launcher(x, y, out, n)
        return (time.process_time() - t0) / iters

    def in_loop_cpu(iters):
        return sum(launcher._time_c_cpu(1, x, y, out, n) for _ in range(iters)) / iters

    def timed_in_loop(iters):
        inner = 0.0
        t0 = time.perf_counter()
        for _ in range(iters):
            inner += launcher._time_c(1, x, y, out, n)
        return time.perf_counter() - t0, inner

    # rounds interleave the measurements, so a noisy machine disturbs them alike; best of the rounds
    loops = {"python_call": call, "python_subscript": subscript, "python_lambda": with_lambda,
             "python_no_launch": no_launch}
    names = list(loops) + ["c_launch_bulk", "c_launch_in_loop", "overhead", "prepare_only", "python_call_cpu",
                           "c_launch_in_loop_cpu", "overhead_cpu"]
    res = {name: float("inf") for name in names}
    for _ in range(a.repeat):
        for name, fn in loops.items():
            res[name] = min(res[name], best(fn, a.iters, 1))
        res["c_launch_bulk"] = min(res["c_launch_bulk"], launcher._time_c(a.iters, x, y, out, n))
        outer, inner = timed_in_loop(a.iters)
        res["c_launch_in_loop"] = min(res["c_launch_in_loop"], inner / a.iters)
        res["prepare_only"] = min(res["prepare_only"], (outer - inner) / a.iters)
        res["python_call_cpu"] = min(res["python_call_cpu"], call_cpu(a.iters))
        res["c_launch_in_loop_cpu"] = min(res["c_launch_in_loop_cpu"], in_loop_cpu(a.iters))
    res["overhead"] = max(0.0, res["python_call"] - res["c_launch_in_loop"])
    res["overhead_cpu"] = max(0.0, res["python_call_cpu"] - res["c_launch_in_loop_cpu"])
    for name, v in res.items():
        if a.json:
            print(json.dumps({"bench": "python_launch", "name": name, "us_per_launch": round(v * 1e6, 3),
                              "iters": a.iters, "device": dev.name, "python": sys.version.split()[0]}))
        else:
            print("%-20s %8.3f us/launch" % (name, v * 1e6))


if __name__ == "__main__":
    main()
