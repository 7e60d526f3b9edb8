"""refcommon.py - what bench/gpu/attention_ref.py and moe_ref.py share: the timer.

time_ms(fn, rep_ms): one call, synchronize, then triton.testing.do_bench (CUDA events, the
median; it clears the L2 before each call) when Triton imports, else CUDA events around each
call for at least rep_ms and 10 calls, the median.  Needs torch with a GPU.
"""
import statistics

import torch

try:
    from triton.testing import do_bench
except Exception:  # noqa: BLE001 - Triton is optional
    do_bench = None

TIMER = "triton.testing.do_bench (CUDA events, median)" if do_bench else "CUDA events around each call (median)"


def time_ms(fn, rep_ms):
    """Median milliseconds per call of fn."""
    fn()
    torch.cuda.synchronize()
    if do_bench is not None:
        return do_bench(fn, warmup=25, rep=rep_ms, return_mode="median")
    times, total = [], 0.0
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    while total < rep_ms or len(times) < 10:
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
        total += times[-1]
        if len(times) >= 1000:
            break
    return statistics.median(times)
