"""attention_ref.py - the PyTorch side of bench/attention_gpu.c: the same prefill and decode
shapes through torch.nn.functional.scaled_dot_product_attention (and flash_attn when it can be
imported), timed in the same run of bench/gpu/run.sh.

  python3 bench/gpu/attention_ref.py [--prefill B:S:H:D:CAUSAL,...] [--decode B:CTX:HQ:HKV:D:BLOCK,...]
                                     [--dtype bf16|f16] [--rep-ms 200]

Shapes are those of attention_gpu (run.sh passes the same lists to both).  Layout as tile's:
q, k, v [batch, seq, heads, head_dim], handed to SDPA as .transpose(1, 2) views (what
models do); flash_attn takes that layout as it is.

Prefill: each shape checked first (the last 128 query rows of batch 0, heads 0 and the last,
against float32 math on the same inputs; max |error| within 1.6e-2 for bf16, 2e-3 for f16), then
timed; TFLOP/s = 4 B H S^2 D / t, halved when causal (as attention_gpu).

Decode: PyTorch has no paged-KV attention, so SDPA runs on a contiguous cache
[B, HKV, CTX, D] with q [B, HQ, 1, D] and enable_gqa=True (the same bytes to read, no block
table); flash_attn_with_kvcache likewise on [B, CTX, HKV, D] (its paged mode needs blocks of
256 tokens, not the 16 measured here).  Several caches are rotated so that at least 512 MB
are read between two reads of one cache (as attention_gpu's block-table sets).  GB/s =
(K and V once, q, o) / t.  The device-to-device copy bandwidth (bytes read + written, 1 GiB) is
printed first: the ceiling for decode.

Timing: triton.testing.do_bench (CUDA events, median; it also clears the L2 before each call)
when Triton imports, else CUDA events around each call, median.

Lines for run.sh's table:
  @@ prefill D S CAUSAL sdpa|flash_attn TFLOPS MS
  @@ decode B CTX sdpa|flash_attn GBPS MS
  @@ copy torch GBPS
Exit status 3 when torch or a GPU is missing (nothing measured), 1 when a check fails.
"""
import argparse
import math
import sys

try:
    import torch
    import torch.nn.functional as F
except Exception as e:  # noqa: BLE001 - any import failure means "no torch here"
    print(f"attention_ref: torch cannot be imported ({e}): the PyTorch columns are skipped")
    sys.exit(3)
from refcommon import TIMER, time_ms  # noqa: E402 - after the torch check

try:
    import flash_attn  # noqa: F401
    from flash_attn import flash_attn_func, flash_attn_with_kvcache
except Exception:  # noqa: BLE001 - optional
    flash_attn_func = flash_attn_with_kvcache = None

DEFAULT_PREFILL = ("16:1024:32:64:0,16:1024:32:64:1,4:4096:32:64:0,4:4096:32:64:1,1:16384:32:64:0,1:16384:32:64:1,"
                   "16:1024:16:128:0,16:1024:16:128:1,4:4096:16:128:0,4:4096:16:128:1,1:16384:16:128:0,1:16384:16:128:1")
DEFAULT_DECODE = ("1:1024:32:8:128:16,1:32768:32:8:128:16,16:8192:32:8:128:16,64:4096:32:8:128:16,256:1024:32:8:128:16,"
                  "256:4096:32:8:128:16")


def uniform(shape, dtype):
    return torch.empty(shape, device="cuda", dtype=dtype).uniform_(-1, 1)


def prefill(shapes, dtype, rep_ms):
    ok = True
    tol = 2e-3 if dtype == torch.float16 else 1.6e-2
    for (b, s, h, d, causal) in shapes:
        torch.manual_seed(s * 131 + d + causal)
        q, k, v = (uniform((b, s, h, d), dtype) for _ in range(3))
        flop = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)

        def sdpa():
            return F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=bool(causal))
        out = sdpa().transpose(1, 2)
        # check: the last 128 rows of batch 0 for heads 0 and h-1 in float32
        err = 0.0
        rows = min(128, s)
        for hh in {0, h - 1}:
            qq = q[0, s - rows:, hh].float()
            kk, vv = k[0, :, hh].float(), v[0, :, hh].float()
            sc = (qq @ kk.T) / math.sqrt(d)
            if causal:
                i = torch.arange(s - rows, s, device="cuda")[:, None]
                j = torch.arange(s, device="cuda")[None, :]
                sc = sc.masked_fill(j > i, float("-inf"))
            ref = torch.softmax(sc, -1) @ vv
            err = max(err, (out[0, s - rows:, hh].float() - ref).abs().max().item())
        good = err <= tol
        ok &= good
        name = f"b{b} s{s} h{h} d{d} {'causal' if causal else 'full'}"
        if not good:
            print(f"  prefill {name}: sdpa check FAILED (max |err| {err:.2e}, tolerance {tol:.1e})")
            continue
        ms = time_ms(sdpa, rep_ms)
        print(f"  prefill {name}: sdpa check ok (max |err| {err:.2e}); {ms:.3f} ms = {flop / ms * 1e-9:.1f} TFLOP/s")
        print(f"@@ prefill {d} {s} {causal} sdpa {flop / ms * 1e-9:.2f} {ms:.4f}")
        if flash_attn_func is not None:
            try:
                def fa():
                    return flash_attn_func(q, k, v, causal=bool(causal))
                e2 = (fa().float() - out.float()).abs().max().item()
                ms = time_ms(fa, rep_ms)
                print(f"  prefill {name}: flash_attn {flash_attn.__version__} (max |diff| from sdpa {e2:.2e}); {ms:.3f} ms = "
                      f"{flop / ms * 1e-9:.1f} TFLOP/s")
                print(f"@@ prefill {d} {s} {causal} flash_attn {flop / ms * 1e-9:.2f} {ms:.4f}")
            except Exception as e:  # noqa: BLE001 - report and go on
                print(f"  prefill {name}: flash_attn failed: {type(e).__name__}: {e}")
        sys.stdout.flush()
        del q, k, v, out
        torch.cuda.empty_cache()
    return ok


def decode(shapes, dtype, rep_ms):
    ok = True
    tol = 2e-3 if dtype == torch.float16 else 1.6e-2
    es = torch.tensor([], dtype=dtype).element_size()
    for (b, ctx, hq, hk, d, bs) in shapes:
        torch.manual_seed(b * 7 + ctx)
        kv_bytes = 2.0 * b * ctx * hk * d * es
        nsets = max(1, min(64, math.ceil(512e6 / kv_bytes)))
        ks = [uniform((b, ctx, hk, d), dtype) for _ in range(nsets)]
        vs = [uniform((b, ctx, hk, d), dtype) for _ in range(nsets)]
        q = uniform((b, 1, hq, d), dtype)
        nbytes = kv_bytes + 2.0 * q.numel() * es
        name = f"b{b} ctx{ctx} h{hq}/{hk} d{d}"
        it = [0]

        def sdpa():
            i = it[0] = (it[0] + 1) % nsets
            return F.scaled_dot_product_attention(q.transpose(1, 2), ks[i].transpose(1, 2), vs[i].transpose(1, 2), enable_gqa=True)
        try:
            it[0] = nsets - 1  # the next call uses set 0
            out = sdpa().transpose(1, 2)
        except Exception as e:  # noqa: BLE001 - enable_gqa needs torch >= 2.5
            print(f"  decode {name}: sdpa failed: {type(e).__name__}: {e}")
            ok = False
            continue
        # check: sequence 0 and the last, every query head, in float32
        err = 0.0
        for sq in {0, b - 1}:
            kk = ks[0][sq].float().repeat_interleave(hq // hk, dim=1)  # [ctx, hq, d]
            vv = vs[0][sq].float().repeat_interleave(hq // hk, dim=1)
            sc = torch.einsum("hd,chd->hc", q[sq, 0].float(), kk) / math.sqrt(d)
            ref = torch.einsum("hc,chd->hd", torch.softmax(sc, -1), vv)
            err = max(err, (out[sq, 0].float() - ref).abs().max().item())
        if err > tol:
            print(f"  decode {name}: sdpa check FAILED (max |err| {err:.2e}, tolerance {tol:.1e})")
            ok = False
            continue
        ms = time_ms(sdpa, rep_ms)
        print(f"  decode {name}: sdpa (contiguous cache, {nsets} rotated) check ok (max |err| {err:.2e}); {ms:.4f} ms = "
              f"{nbytes / ms * 1e-6:.1f} GB/s")
        print(f"@@ decode {b} {ctx} sdpa {nbytes / ms * 1e-6:.1f} {ms:.4f}")
        if flash_attn_with_kvcache is not None:
            try:
                lens = torch.full((b,), ctx, dtype=torch.int32, device="cuda")

                def fa():
                    i = it[0] = (it[0] + 1) % nsets
                    return flash_attn_with_kvcache(q, ks[i], vs[i], cache_seqlens=lens)
                ms = time_ms(fa, rep_ms)
                print(f"  decode {name}: flash_attn_with_kvcache {ms:.4f} ms = {nbytes / ms * 1e-6:.1f} GB/s")
                print(f"@@ decode {b} {ctx} flash_attn {nbytes / ms * 1e-6:.1f} {ms:.4f}")
            except Exception as e:  # noqa: BLE001
                print(f"  decode {name}: flash_attn failed: {type(e).__name__}: {e}")
        sys.stdout.flush()
        del ks, vs, q, out
        torch.cuda.empty_cache()
    return ok


def parse(lst, n):
    out = []
    for item in filter(None, lst.split(",")):
        f = [int(x) for x in item.split(":")]
        if len(f) != n:
            raise SystemExit(f"attention_ref: bad shape '{item}' (expected {n} fields)")
        out.append(tuple(f))
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--prefill", default=DEFAULT_PREFILL)
    p.add_argument("--decode", default=DEFAULT_DECODE)
    p.add_argument("--dtype", default="bf16", choices=["bf16", "f16"])
    p.add_argument("--rep-ms", type=int, default=200)
    a = p.parse_args()
    if not torch.cuda.is_available():
        print("attention_ref: torch sees no GPU: the PyTorch columns are skipped")
        return 3
    dtype = torch.bfloat16 if a.dtype == "bf16" else torch.float16
    fa = f"flash_attn {flash_attn.__version__}" if flash_attn_func is not None else "flash_attn not importable"
    print(f"attention_ref: torch {torch.__version__}, {torch.cuda.get_device_name()}, {a.dtype}; {fa}; timing with {TIMER}")
    n = 1 << 30
    src, dst = torch.empty(n, dtype=torch.uint8, device="cuda").fill_(7), torch.empty(n, dtype=torch.uint8, device="cuda")
    ms = time_ms(lambda: dst.copy_(src), a.rep_ms)
    print(f"  copy (torch, 1 GiB, read + written): {2 * n / ms * 1e-6:.1f} GB/s")
    print(f"@@ copy torch {2 * n / ms * 1e-6:.1f}")
    del src, dst
    torch.cuda.empty_cache()
    ok = prefill(parse(a.prefill, 5), dtype, a.rep_ms)
    ok &= decode(parse(a.decode, 6), dtype, a.rep_ms)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
