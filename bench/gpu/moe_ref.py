"""moe_ref.py - the PyTorch side of bench/moe_gpu.c: the same MoE layers in PyTorch, timed in the
same run of bench/gpu/run.sh.

  python3 bench/gpu/moe_ref.py [--models NAME:E:K:H:I,...] [--tokens 1,64,4096] [--rep-ms 200]

Per model W1 [E, 2I, H] (gate rows, then up rows) and W2 [E, H, I] in bf16, as tile_moe_forward
takes them; per token count T, x [T, H] bf16 and router logits [T, E] f32.  Routing as
moe_gpu's: softmax, top-k, renormalized.  Three ways, each timed (whole layer: routing included):
  loop        per-expert matmuls: sort the slots by expert, then for each expert with tokens
              x[rows] @ W1[e]^T, silu(gate) * up, @ W2[e]^T, times the routing weight,
              index_add_ into the f32 output (the token counts go to the host once per call:
              what a plain PyTorch MoE does);
  grouped_mm  torch._grouped_mm (where it exists: PyTorch >= 2.8, Hopper) on the sorted rows with
              the experts' cumulative row offsets, the same epilogue, no host round trip;
  dense       torch.matmul (cuBLAS) on the dense GEMMs of the same work: [T K, H] x [H, 2I] and
              [T K, I] x [I, H] (as moe_gpu's tile_gemm row), timed apart and summed.
TFLOP/s = 2 T K 3 H I / t for all three.  Checked first: the loop against a float32 forward on
two tokens (relative error < 2e-2), grouped_mm against the loop (relative error < 2e-2).

Lines for run.sh's table:
  @@ moe NAME T loop|grouped_mm|dense TFLOPS MS
Exit status 3 when torch or a GPU is missing (nothing measured), 1 when a check fails.
"""
import argparse
import math
import sys

try:
    import torch
    import torch.nn.functional as F
except Exception as e:  # noqa: BLE001 - any import failure means "no torch here"
    print(f"moe_ref: torch cannot be imported ({e}): the PyTorch columns are skipped")
    sys.exit(3)
from refcommon import TIMER, time_ms  # noqa: E402 - after the torch check

DEFAULT_MODELS = "mixtral:8:2:4096:14336,deepseek:256:8:7168:2048"


def route(logits, k):
    w, ids = torch.topk(torch.softmax(logits, -1), k, dim=-1)
    return w / w.sum(-1, keepdim=True), ids


def moe_loop(x, logits, w1, w2, k):
    t, h = x.shape
    e_count, inter = w1.shape[0], w2.shape[2]
    w, ids = route(logits, k)
    flat = ids.flatten()
    order = torch.argsort(flat, stable=True)
    counts = torch.bincount(flat, minlength=e_count).tolist()
    out = torch.zeros(t, h, dtype=torch.float32, device=x.device)
    wf = w.flatten()
    start = 0
    for e, c in enumerate(counts):
        if c == 0:
            continue
        slots = order[start:start + c]
        rows = slots // k
        g = x[rows] @ w1[e].T
        a = F.silu(g[:, :inter]) * g[:, inter:]
        y = a @ w2[e].T
        out.index_add_(0, rows, y.float() * wf[slots, None])
        start += c
    return out


def moe_grouped(x, logits, w1, w2, k):
    t, h = x.shape
    e_count, inter = w1.shape[0], w2.shape[2]
    w, ids = route(logits, k)
    flat = ids.flatten()
    order = torch.argsort(flat, stable=True)
    offs = torch.cumsum(torch.bincount(flat, minlength=e_count), 0).to(torch.int32)
    rows = order // k
    g = torch._grouped_mm(x[rows], w1.transpose(-2, -1), offs=offs)
    a = F.silu(g[:, :inter]) * g[:, inter:]
    y = torch._grouped_mm(a, w2.transpose(-2, -1), offs=offs)
    out = torch.zeros(t, h, dtype=torch.float32, device=x.device)
    return out.index_add_(0, rows, y.float() * w.flatten()[order, None])


def reference_rows(x, logits, w1, w2, k, tokens):
    """float32 forward of the given tokens."""
    inter = w2.shape[2]
    w, ids = route(logits, k)
    rows = []
    for t in tokens:
        acc = torch.zeros(x.shape[1], dtype=torch.float32, device=x.device)
        for j in range(k):
            e = ids[t, j].item()
            g = w1[e].float() @ x[t].float()
            a = F.silu(g[:inter]) * g[inter:]
            acc += w[t, j] * (w2[e].float() @ a)
        rows.append(acc)
    return torch.stack(rows)


def rel(a, b):
    return ((a - b).norm() / b.norm().clamp_min(1e-30)).item()


def bench_model(name, e, k, h, inter, tokens, rep_ms):
    ok = True
    torch.manual_seed(e * 1000 + k)
    w1 = torch.empty(e, 2 * inter, h, dtype=torch.bfloat16, device="cuda").uniform_(-2 / math.sqrt(h), 2 / math.sqrt(h))
    w2 = torch.empty(e, h, inter, dtype=torch.bfloat16, device="cuda").uniform_(-2 / math.sqrt(inter), 2 / math.sqrt(inter))
    print(f"{name}: {e} experts, top-{k}, hidden {h}, intermediate {inter}: {(w1.numel() + w2.numel()) * 2e-9:.2f} GB of bf16 weights")
    has_grouped = hasattr(torch, "_grouped_mm")
    for t in tokens:
        x = torch.empty(t, h, dtype=torch.bfloat16, device="cuda").uniform_(-1, 1)
        logits = torch.empty(t, e, dtype=torch.float32, device="cuda").uniform_(-2, 2)
        flop = 2.0 * t * k * 3 * h * inter
        out = moe_loop(x, logits, w1, w2, k)
        check = sorted({0, t - 1})
        err = rel(out[check], reference_rows(x, logits, w1, w2, k, check))
        if not err < 2e-2:
            print(f"  {name} T={t}: loop check FAILED (relative error {err:.2e} on tokens {check})")
            ok = False
            continue
        ms = time_ms(lambda: moe_loop(x, logits, w1, w2, k), rep_ms)
        print(f"  {name} T={t}: loop (relative error {err:.2e}) {ms:.3f} ms = {flop / ms * 1e-9:.1f} TFLOP/s")
        print(f"@@ moe {name} {t} loop {flop / ms * 1e-9:.2f} {ms:.4f}")
        if has_grouped:
            try:
                og = moe_grouped(x, logits, w1, w2, k)
                eg = rel(og, out)
                if not eg < 2e-2:
                    print(f"  {name} T={t}: grouped_mm check FAILED (relative error {eg:.2e} against the loop)")
                    ok = False
                else:
                    ms = time_ms(lambda: moe_grouped(x, logits, w1, w2, k), rep_ms)
                    print(f"  {name} T={t}: torch._grouped_mm (relative error {eg:.2e}) {ms:.3f} ms = {flop / ms * 1e-9:.1f} TFLOP/s")
                    print(f"@@ moe {name} {t} grouped_mm {flop / ms * 1e-9:.2f} {ms:.4f}")
            except Exception as ex:  # noqa: BLE001 - shapes or GPUs it does not take: say so and go on
                print(f"  {name} T={t}: torch._grouped_mm failed: {type(ex).__name__}: {str(ex).splitlines()[0] if str(ex) else ''}")
        m = t * k
        a1 = torch.empty(m, h, dtype=torch.bfloat16, device="cuda").uniform_(-1, 1)
        a2 = torch.empty(m, inter, dtype=torch.bfloat16, device="cuda").uniform_(-1, 1)
        b1, b2 = w1[0], w2[0]
        ms1 = time_ms(lambda: a1 @ b1.T, rep_ms)
        ms2 = time_ms(lambda: a2 @ b2.T, rep_ms)
        print(f"  {name} T={t}: dense torch.matmul {m}x{2 * inter}x{h} {ms1:.3f} ms + {m}x{h}x{inter} {ms2:.3f} ms = "
              f"{flop / (ms1 + ms2) * 1e-9:.1f} TFLOP/s")
        print(f"@@ moe {name} {t} dense {flop / (ms1 + ms2) * 1e-9:.2f} {ms1 + ms2:.4f}")
        sys.stdout.flush()
        del x, logits, out, a1, a2
    if not has_grouped:
        print(f"  {name}: torch._grouped_mm does not exist in torch {torch.__version__}: its rows are skipped")
    del w1, w2
    torch.cuda.empty_cache()
    return ok


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--models", default=DEFAULT_MODELS)
    p.add_argument("--tokens", default="1,64,4096")
    p.add_argument("--rep-ms", type=int, default=200)
    a = p.parse_args()
    if not torch.cuda.is_available():
        print("moe_ref: torch sees no GPU: the PyTorch columns are skipped")
        return 3
    print(f"moe_ref: torch {torch.__version__}, {torch.cuda.get_device_name()}, bf16; timing with {TIMER}")
    tokens = [int(t) for t in a.tokens.split(",") if t]
    ok = True
    for item in filter(None, a.models.split(",")):
        f = item.split(":")
        if len(f) != 5:
            raise SystemExit(f"moe_ref: bad model '{item}' (expected NAME:E:K:H:I)")
        ok &= bench_model(f[0], *(int(v) for v in f[1:]), tokens, a.rep_ms)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
