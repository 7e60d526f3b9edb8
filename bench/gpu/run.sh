#!/usr/bin/env bash
# bench/gpu/run.sh - everything that needs a GPU, in one run, ending in one table.
#
#   bash bench/gpu/run.sh [--device cuda|emu] [--skip-suite] [--prebuilt] [--build-dir DIR] [--log-dir DIR]
#
# On a machine with an NVIDIA GPU (H100/H200) and the CUDA toolkit, within
# 8 minutes (each step has a time limit; the whole run a deadline):
#   1. checks the build dependencies; when one is missing, unpacks the
#      prebuilt build that bench/gpu/pack.sh made (.gpu-carry/, carried to
#      the machine) if there is one, else runs scripts/setup.sh (the lent
#      GPU machines reach no package registry and have no LLVM 22);
#   2. builds (cmake, all cores) into build/ (or --build-dir);
#   3. runs the whole test suite with TILE_TEST_DEVICE and TILE_DEVICE set to
#      the device, so the end-to-end tests (test_e2e, test_gemm) launch on it;
#   4. bench/compare_devices: every shipped kernel on the device and on the
#      emulator, compared (integers bitwise, floats within tolerance), PTX
#      for sm_80 and for sm_90a;
#   4b. on a GPU with nvcc: bench/gpu/hw_facts.cu, what the GPU does where the PTX
#      ISA is silent and the emulator had to choose (the sign of a saturated -0);
#   5. bench/gemm_report: registers, spills, shared memory and main-loop
#      instruction mix per GEMM configuration, Triton's tutorial matmul
#      beside it where Triton is installed;
#   6. bf16 GEMM at 4096^3 and 8192^3 and f8e4m3 GEMM at 8192^3: bench/gemm_gpu --api
#      (tile_gemm: on an H100/H200 the warp-specialized, persistent, tensor-map kernel)
#      next to torch.matmul and torch._scaled_mm (cuBLAS) and Triton's tutorial matmul
#      (bench/gpu/triton_matmul.py, its first 3 configurations), in the same run;
#   6a. a transposed A (tile_gemm's trans_a): bf16 at 4096^3 and 8192^3, tf32 (B [n][k] too) and
#      f8e4m3 at 4096^3, next to cuBLAS on the same layout (torch.matmul of a transposed view,
#      torch._scaled_mm where it takes a column-major A) and tile's own row-major rows;
#   7. attention (issue 7): bench/attention_gpu (tile_attention_fwd at
#      head_dim 64 and 128, seq 1k-16k, causal and not; tile_attention_decode_paged
#      at batch 1-256, context 1k-32k) next to PyTorch's SDPA (and flash_attn
#      when importable) and the device's copy bandwidth (bench/gpu/attention_ref.py);
#   8. MoE (issue 8): bench/moe_gpu (tile_moe_forward, Mixtral-like and
#      DeepSeek-V3-like, 1, 64 and 4096 tokens, next to tile_gemm on the dense
#      GEMMs of the same work) next to PyTorch's per-expert loop,
#      torch._grouped_mm and torch.matmul (bench/gpu/moe_ref.py);
#   8a. on a GPU with --skip-suite: the test programs that launch on TILE_TEST_DEVICE
#      (gemm, attention, MoE, norm, rope, sampling, e2e, ...), at most 100 s;
#   8b. tile run rope (tile_rope_kv_append, issue 19): Llama-3-8B heads at
#      1, 256 and 4096 tokens (bf16, and an f8 cache), GB/s; on emu small checks;
#   8c. tile run layer (a decoder layer from the C API: prefill, paged decode
#      steps, dense and MoE, checked against float64 and for graph safety),
#      small, then at Llama-3-8B and Mixtral-8x7B-like sizes (per-step seconds);
#   8d. sampling and speculative decoding (issue 19): `tile run sample` and
#      `tile run spec` at a Llama-3 vocabulary (128256), every row checked (with --probs also
#      against the draw from the probabilities written, to 2e-6);
#   8e. fused residual add + RMSNorm/LayerNorm and gated activations (issue 19): `tile run norm`
#      and `tile run act` at Llama-3-8B widths, unquantized and f8/i8 per token or per group, GB/s;
#   8f. tree attention of speculative decoding (issue 19): `tile run decode --tree` (8 new tokens per
#      sequence as a token tree) next to the same call causal, Llama-3-8B heads, GB/s;
#   9. bench/emu_speed and bench/compile_time (CPU-only: skipped on a GPU);
#   5 (gemm_report: static) is skipped on a GPU too; TILE_GPU_DEADLINE (seconds)
#   replaces the 8-minute deadline;
# then prints one summary table.  Full logs go to --log-dir (default
# BUILD/gpu-run; set it to $OUT on a lent device machine to get them back).
#
# --device emu runs on a machine without a GPU: the same steps, with the
# suite on the emulator, compare_devices comparing two emulator contexts
# (1 and 4 host threads), and the GPU timings replaced by small emulator
# runs of gemm_gpu, attention_gpu and moe_gpu that only exercise their
# checks (the Python references then say they are skipped).  scripts/test.sh runs this
# mode with --skip-suite (it has just run the suite itself).
#
# --prebuilt uses .gpu-carry/prebuilt.tar.xz even when the dependencies are
# there (to try the packed build).
#
# Exit status: 0 when every step that ran passed (skipped steps say why),
# 1 when one failed, 2 on a usage error.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)

device=""
skip_suite=0
force_prebuilt=0
build="${TILE_BUILD_DIR:-build}"
logdir=""
# value OPTION ARGS...: the value after OPTION, or a usage error (a bare `shift 2` at the end would loop for ever)
value() {
  if [ $# -lt 3 ] || [ -z "$3" ]; then echo "run.sh: $1 needs a value (see --help)" >&2; exit 2; fi
  printf '%s' "$3"
}
while [ $# -gt 0 ]; do
  case "$1" in
    --device) device=$(value "$1" "$@") || exit 2; shift 2 ;;
    --skip-suite) skip_suite=1; shift ;;
    --prebuilt) force_prebuilt=1; shift ;;
    --build-dir) build=$(value "$1" "$@") || exit 2; shift 2 ;;
    --log-dir) logdir=$(value "$1" "$@") || exit 2; shift 2 ;;
    -h|--help) sed -n "2,/^[^#]/{/^#/p;}" "$0"; exit 0 ;;  # the comment above, to its end
    *) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [ -z "$device" ]; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then device=cuda; else device=emu; fi
fi
case "$device" in cuda|emu) ;; cuda:*[!0-9]*|cuda:) echo "run.sh: --device must be cuda, cuda:N or emu" >&2; exit 2 ;; cuda:*) ;; *) echo "run.sh: --device must be cuda, cuda:N or emu" >&2; exit 2 ;; esac
case "${TILE_GPU_DEADLINE:-480}" in
  ''|*[!0-9]*) echo "run.sh: TILE_GPU_DEADLINE must be a whole number of seconds, got '${TILE_GPU_DEADLINE}'" >&2; exit 2 ;;
esac
on_gpu=0
[ "$device" != emu ] && on_gpu=1
logdir="${logdir:-$build/gpu-run}"
mkdir -p "$logdir"
jobs=$(nproc 2>/dev/null || echo 2)
start=$(date +%s)
deadline=$((start + ${TILE_GPU_DEADLINE:-480})) # 8 minutes unless TILE_GPU_DEADLINE (seconds) says otherwise

summary=()
failed=0
row() { summary+=("$(printf '%-40s %-6s %s' "$1" "$2" "$3")"); [ "$2" = FAIL ] && failed=1; return 0; }
# limit SECONDS: a step's time limit, cut to what is left of the deadline
limit() {
  local left=$((deadline - $(date +%s) - 5))
  [ "$left" -lt 10 ] && left=10
  [ "$1" -lt "$left" ] && echo "$1" || echo "$left"
}
# step NAME LOG SECONDS CMD...: run with a time limit, tee to LOG; sets rc and secs
step() {
  local name="$1" log="$2" lim
  lim=$(limit "$3")
  shift 3
  echo
  echo "== $name (limit ${lim}s)"
  local t0=$(date +%s)
  timeout --kill-after=10 "$lim" "$@" 2>&1 | tee "$logdir/$log"
  rc=${PIPESTATUS[0]}
  secs=$(( $(date +%s) - t0 ))
  [ "$rc" = 124 ] && echo "** $name: stopped after ${lim}s"
  return 0
}

echo "bench/gpu/run.sh: device $device, build $build, logs $logdir, $(date -u +%FT%TZ)"
echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
if [ "$on_gpu" = 1 ]; then
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
  command -v nvcc >/dev/null 2>&1 && nvcc --version | tail -1 | sed 's/^/cuda toolkit: /'
fi

# ---- 1. dependencies ----
have_deps() {
  { command -v llvm-config-22 >/dev/null 2>&1 || [ -x /usr/lib/llvm-22/bin/llvm-config ]; } &&
    pkg-config --exists criterion libxxhash 2>/dev/null && command -v cmake >/dev/null 2>&1 && command -v cc >/dev/null 2>&1
}
# C programs run through cenv: it adds the carried libraries of a prebuilt build (below).
cenv=(env)
prebuilt=""
if { [ "$force_prebuilt" = 1 ] || ! have_deps; } && [ -f .gpu-carry/prebuilt.tar.xz ]; then
  # A build made elsewhere by bench/gpu/pack.sh, with its shared libraries.
  pre=/tmp/tile-prebuilt
  rm -rf "$pre" && mkdir -p "$pre" && tar -C "$pre" -xJf .gpu-carry/prebuilt.tar.xz
  src=$(cat "$pre/source_dir")
  if [ "$src" != "$root" ] && [ ! -e "$src" ]; then mkdir -p "$(dirname "$src")" && ln -s "$root" "$src"; fi
  mkdir -p "$build" && cp -a "$pre/build/." "$build/"
  cenv=(env LD_LIBRARY_PATH="$pre/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
  prebuilt="prebuilt by bench/gpu/pack.sh at commit $(tr '\n' ' ' <"$pre/commit")in $src"
  [ "$src" != "$root" ] && [ "$(readlink -f "$src")" != "$root" ] && prebuilt="$prebuilt (WARNING: $src is not this checkout: kernels come from there)"
elif ! have_deps; then
  echo "== dependencies: something is missing; running scripts/setup.sh"
  bash scripts/setup.sh 2>&1 | tail -5
fi
if [ -z "$prebuilt" ] && ! have_deps; then
  row "dependencies" FAIL "LLVM 22 (llvm-config-22), libcriterion-dev, libxxhash-dev, cmake or a C compiler missing, scripts/setup.sh could not install them, and there is no .gpu-carry/prebuilt.tar.xz (bench/gpu/pack.sh)"
  printf '\n== summary (device %s)\n' "$device"; printf '%s\n' "${summary[@]}"
  exit 1
fi

# ---- 2. build ----
if [ -n "$prebuilt" ]; then
  row "build" skip "$prebuilt"
else
  step "build" build.log 300 bash -c "cmake -S . -B '$build' -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && cmake --build '$build' -j$jobs"
  if [ "$rc" != 0 ]; then
    row "build" FAIL "see $logdir/build.log"
    printf '\n== summary (device %s)\n' "$device"; printf '%s\n' "${summary[@]}"
    exit 1
  fi
  warnings=$(grep -c 'warning:' "$logdir/build.log" || true)
  row "build" ok "${secs}s, $warnings compiler warnings"
fi

# ---- 3. test suite ----
if [ "$skip_suite" = 1 ]; then
  row "test suite" skip "--skip-suite given (scripts/test.sh ran the suite just before)"
else
  step "test suite (TILE_TEST_DEVICE=$device)" suite.log 300 \
    "${cenv[@]}" TILE_TEST_DEVICE="$device" TILE_DEVICE="$device" ctest --test-dir "$build" -j"$jobs" --output-on-failure --timeout 280
  res=$(grep -E 'tests passed' "$logdir/suite.log" | tail -1)
  if [ "$rc" = 0 ]; then row "test suite ($device)" ok "${res:-passed}, ${secs}s"
  else row "test suite ($device)" FAIL "${res:-rc $rc}, ${secs}s: see $logdir/suite.log"; fi
fi

# ---- 4. compare devices ----
for arch in sm_80 sm_90a; do
  step "compare_devices ($arch)" "compare_$arch.log" 90 "${cenv[@]}" "$build/bench/compare_devices" --device "$device" --arch "$arch" --quiet
  res=$(grep -E 'kernels agree' "$logdir/compare_$arch.log" | tail -1)
  what="cuda vs emu"
  [ "$on_gpu" = 0 ] && what="emu 1 vs 4 host threads"
  if [ "$rc" = 0 ]; then row "compare $what ($arch)" ok "$res"
  else row "compare $what ($arch)" FAIL "${res:-rc $rc}: see $logdir/compare_$arch.log"; fi
done

# ---- 4b. hardware facts the emulator had to choose (bench/gpu/hw_facts.cu), where nvcc is there ----
if [ "$on_gpu" = 1 ]; then
  if command -v nvcc >/dev/null 2>&1; then
    step "hw_facts" hw_facts.log 60 bash -c 'nvcc -arch=sm_90 -o /tmp/tile_hw_facts bench/gpu/hw_facts.cu && /tmp/tile_hw_facts'
    ndiff=$(grep -c 'DIFFERENT' "$logdir/hw_facts.log")
    nfact=$(grep -c '^fact ' "$logdir/hw_facts.log")
    if [ "$rc" = 0 ]; then row "hardware facts (hw_facts.cu)" ok "$nfact asked, $ndiff differ from the emulator: see $logdir/hw_facts.log"
    else row "hardware facts (hw_facts.cu)" FAIL "rc $rc: see $logdir/hw_facts.log"; fi
  else
    row "hardware facts" skip "no nvcc on this machine"
  fi
fi

# ---- 5. gemm report ----
# Static (ptxas and the SASS, no launch): the same on any machine, so on a GPU it gives way to the timings.
if [ "$on_gpu" = 1 ]; then
  row "gemm report" skip "static (ptxas, SASS): run without a GPU (--device emu, scripts/test.sh)"
else
step "gemm_report" gemm_report.log 150 "${cenv[@]}" "$build/bench/gemm_report"
tri=$(grep -c ' triton ' "$logdir/gemm_report.log" | tr -d ' ')
tri_skip=$(grep -m1 '^triton: skipped' "$logdir/gemm_report.log" | sed 's/^triton: //')
def=$(grep -m1 -E '^gemm_bf16_bf16 +128x128x32 w4 s3 +sm_80 +tile' "$logdir/gemm_report.log" | awk '{print $7" regs, "$8" B spilled, "$9" B smem"}')
nfail=$(grep -m1 -E '^[0-9]+ compilations failed' "$logdir/gemm_report.log" | awk '{print $1}')
if [ "$rc" = 0 ]; then row "gemm report" ok "default bf16 sm_80: ${def:-?}; triton rows: ${tri_skip:-$tri}${nfail:+; $nfail configurations did not compile}"
else row "gemm report" FAIL "rc $rc: see $logdir/gemm_report.log"; fi
fi

# ---- 6. GEMM speed ----
if [ "$on_gpu" = 1 ]; then
  step "gemm_gpu (tile_gemm bf16 4096^3 and 8192^3, f8e4m3 8192^3)" gemm_gpu.log 150 "${cenv[@]}" bash -c '"$0" --api --device "$1" --sizes 4096,8192; a=$?
    "$0" --api --device "$1" --dtype f8e4m3 --sizes 8192; b=$?
    "$0" --api --device "$1" --dtype f8e4m3 --sizes 8192 --config "BM=128 BN=256 BK=128 num_warps=8 num_stages=3 warp_specialize=1 PERSISTENT=1 FAST_ACCUM=1"
    exit $((a | b | $?))' "$build/bench/gemm_gpu" "$device"
  tile_rc=$rc
  # 6a. a transposed A (trans_a: cp.async/wgmma-pipelined, docs/architecture.md): bf16 with B [k][n]; tf32 with
  # B [n][k] (both operands through the ring, A into the wgmma's registers); f8e4m3 with B [n][k] as above
  step "gemm_gpu trans_a (bf16 4096^3 and 8192^3, tf32 and f8e4m3 4096^3)" gemm_gpu_ta.log 90 "${cenv[@]}" bash -c '"$0" --api --device "$1" --trans-a --sizes 4096,8192; a=$?
    "$0" --api --device "$1" --dtype tf32 --trans-a --trans-b --sizes 4096; b=$?
    "$0" --api --device "$1" --dtype f8e4m3 --trans-a --sizes 4096
    exit $((a | b | $?))' "$build/bench/gemm_gpu" "$device"
  ta_rc=$rc
  if python3 -c 'import torch, triton' >/dev/null 2>&1; then
    # Triton: the tutorial's first 3 configurations (its best on Hopper is the first, 128x256x64 w8)
    step "torch.matmul, torch._scaled_mm and Triton tutorial matmul" gemm_torch.log 150 env PYTHONUNBUFFERED=1 python3 bench/gpu/triton_matmul.py bench --sizes 4096,8192 --configs 3 --fp8 --trans-a --rep-ms 200
    py_note=""
    [ "$rc" != 0 ] && py_note="torch/triton rc $rc: see $logdir/gemm_torch.log"
  else
    echo "torch or triton cannot be imported: cuBLAS and Triton columns skipped" | tee "$logdir/gemm_torch.log"
    py_note="torch/triton not importable: their columns were skipped"
  fi
  for n in 4096 8192; do
    t=$(awk -v n=$n '$1=="@@" && $2=="gemm" && $3==n && $4=="tile" {print $5}' "$logdir/gemm_gpu.log")
    c=$(awk -v n=$n '$1=="@@" && $2=="gemm" && $3==n && $4=="torch" {print $5}' "$logdir/gemm_torch.log")
    tr=$(awk -v n=$n '$1=="@@" && $2=="gemm" && $3==n && $4=="triton" {print $5" ("$6")"}' "$logdir/gemm_torch.log")
    pct=""
    [ -n "$t" ] && [ -n "$c" ] && pct=$(awk -v a="$t" -v b="$c" 'BEGIN{ if (b > 0) printf "tile = %.0f%% of cuBLAS", 100*a/b }')
    status=ok
    [ "$tile_rc" != 0 ] && status=FAIL
    row "bf16 gemm ${n}^3 TFLOP/s" "$status" "tile ${t:-n/a} | torch.matmul ${c:-n/a} | triton ${tr:-n/a} ${pct:+| $pct}${py_note:+ | $py_note}"
  done
  t=$(awk '$1=="@@" && $2=="gemm_f8e4m3" && $3==8192 && $4=="tile" {print $5}' "$logdir/gemm_gpu.log")
  tf=$(awk '$1=="@@" && $2=="gemm_f8e4m3_config" && $3==8192 && $4=="tile" {print $5}' "$logdir/gemm_gpu.log")
  c=$(awk '$1=="@@" && $2=="gemm_f8e4m3" && $3==8192 && $4=="torch" {print $5}' "$logdir/gemm_torch.log")
  pct=""
  [ -n "$t" ] && [ -n "$c" ] && pct=$(awk -v a="$t" -v b="$c" 'BEGIN{ if (b > 0) printf "tile = %.0f%% of cuBLAS", 100*a/b }')
  # the sampled relative errors of the two 8192^3 f8 checks, in order (default, then FAST_ACCUM=1)
  errs=$(grep -E '^  8192x8192x8192 f8e4m3: tile_gemm check' "$logdir/gemm_gpu.log" | sed -n 's/.*relative error \([0-9.e+-]*\).*/\1/p' | tr '\n' ' ')
  set -- $errs
  row "f8e4m3 gemm 8192^3 TFLOP/s" "$status" "tile ${t:-n/a} (two-level accumulation, error ${1:-?}) | tile 128x256 FAST_ACCUM=1 ${tf:-n/a} (error ${2:-?}) | torch._scaled_mm ${c:-n/a} ${pct:+| $pct}${py_note:+ | $py_note}"
  # 6a's rows: KEY N DTYPE; tile and cuBLAS on the transposed layout, tile's row-major row (KEY's base) beside them
  if [ "$ta_rc" = 0 ]; then ta_status=ok; else ta_status=FAIL; fi
  ta_why=""
  [ "$ta_rc" = 124 ] && ta_why=" | stopped after its limit"
  [ "$ta_rc" != 0 ] && [ "$ta_rc" != 124 ] && ta_why=" | rc $ta_rc: see $logdir/gemm_gpu_ta.log"
  for key_n in "gemm_ta 4096 bf16" "gemm_ta 8192 bf16" "gemm_tf32_ta_tb 4096 tf32" "gemm_f8e4m3_ta 4096 f8e4m3"; do
    set -- $key_n
    key=$1 n=$2 dt=$3
    t=$(awk -v k=$key -v n=$n '$1=="@@" && $2==k && $3==n && $4=="tile" {print $5}' "$logdir/gemm_gpu_ta.log")
    c=$(awk -v k=$key -v n=$n '$1=="@@" && $2==k && $3==n && $4=="torch" {print $5}' "$logdir/gemm_torch.log")
    plain=$(awk -v k="${key%%_ta*}" -v n=$n '$1=="@@" && $2==k && $3==n && $4=="tile" {print $5}' "$logdir/gemm_gpu.log")
    err=$(grep -E "^  ${n}x${n}x${n} ${dt}_ta(_tb)?: tile_gemm check" "$logdir/gemm_gpu_ta.log" | sed -n 's/.*relative error \([0-9.e+-]*\).*/\1/p' | head -1)
    pct=""
    [ -n "$t" ] && [ -n "$c" ] && pct=$(awk -v a="$t" -v b="$c" 'BEGIN{ if (b > 0) printf "tile = %.0f%% of cuBLAS", 100*a/b }')
    [ -n "$t" ] && [ -n "$plain" ] && pct="${pct:+$pct | }$(awk -v a="$t" -v b="$plain" 'BEGIN{ if (b > 0) printf "%.0f%% of tile with A row-major (%s)", 100*a/b, b }')"
    cname="torch.matmul"
    [ "$dt" = f8e4m3 ] && cname="torch._scaled_mm"
    cnote=""
    [ "$dt" = f8e4m3 ] && [ -z "$c" ] && grep -q '^fp8 trans_a .*refused' "$logdir/gemm_torch.log" && cnote=" (refuses a column-major A)"
    layout="trans_a"
    [ "$dt" = tf32 ] && layout="trans_a trans_b"
    row "$dt gemm ${n}^3 $layout TFLOP/s" "$ta_status" "tile ${t:-n/a} (error ${err:-?}) | $cname ${c:-n/a}$cnote${pct:+ | $pct}$ta_why${py_note:+ | $py_note}"
  done
else
  row "bf16 gemm 4096^3, 8192^3" skip "no GPU (--device emu): nothing to time"
  # the GPU's options too (6a: --trans-a, --dtype tf32, --trans-b), at 128^3: a bad option or layout fails here first
  step "gemm_gpu logic check on the emulator (not a measurement)" gemm_gpu.log 90 "${cenv[@]}" bash -c '"$0" --device emu --sizes 128,256 --samples 3 &&
    "$0" --api --device emu:sm_90a --sizes 256 --samples 1 && "$0" --api --device emu:sm_90a --trans-a --sizes 128 --samples 1 &&
    "$0" --api --device emu:sm_90a --dtype tf32 --trans-a --trans-b --sizes 128 --samples 1 &&
    "$0" --api --device emu:sm_90a --dtype f8e4m3 --trans-a --sizes 128 --samples 1' "$build/bench/gemm_gpu"
  if [ "$rc" = 0 ]; then row "gemm_gpu on emu (checks only)" ok "$(grep -c 'check ok' "$logdir/gemm_gpu.log") sizes checked"
  else row "gemm_gpu on emu (checks only)" FAIL "rc $rc: see $logdir/gemm_gpu.log"; fi
fi

# ---- 7. attention: tile next to torch SDPA / flash_attn ----
# Shapes: prefill B:S:H:D:CAUSAL (FlashAttention-2's benchmark: 16k tokens,
# width 2048), decode B:CTX:HQ:HKV:D:BLOCK (Llama-3-8B heads); the same lists
# go to both programs.
if [ "$on_gpu" = 1 ]; then
  attn_prefill="" attn_decode=""
  for d in 64 128; do
    for s in 1024 4096 16384; do
      for c in 0 1; do attn_prefill="$attn_prefill${attn_prefill:+,}$((16384 / s)):$s:$((2048 / d)):$d:$c"; done
    done
  done
  for bc in 1:1024 1:32768 16:8192 64:4096 256:1024 256:4096; do attn_decode="$attn_decode${attn_decode:+,}$bc:32:8:128:16"; done
  attn_args=(--prefill "$attn_prefill" --decode "$attn_decode")
  attn_lim=$(limit 90)
  step "attention_gpu (tile prefill and paged decode)" attention_gpu.log "$attn_lim" \
    "${cenv[@]}" "$build/bench/attention_gpu" --device "$device" "${attn_args[@]}" --max-seconds $((attn_lim - 15))
else
  attn_args=(--prefill "1:64:2:64:0,1:64:2:64:1,1:48:1:128:1" --decode "2:40:4:2:64:16,1:300:4:1:64:16")
  step "attention_gpu checks on the emulator (not a measurement)" attention_gpu.log 20 \
    "${cenv[@]}" "$build/bench/attention_gpu" --device emu "${attn_args[@]}" --samples 3
fi
attn_rc=$rc attn_secs=$secs
step "attention_ref.py (torch SDPA, flash_attn)" attention_ref.log 60 env PYTHONUNBUFFERED=1 python3 bench/gpu/attention_ref.py "${attn_args[@]}"
ref_rc=$rc
ref_note=""
case "$ref_rc" in
  0) ;;
  3) ref_note="torch columns skipped: $(grep -m1 -E '^attention_ref: ' "$logdir/attention_ref.log" | sed -e 's/^attention_ref: //' -e 's/: the PyTorch columns are skipped$//')" ;;
  *) ref_note="attention_ref.py rc $ref_rc: see $logdir/attention_ref.log" ;;
esac
# at  KIND KEY... NAME: the value after NAME in the "@@ KIND KEY..." line of a log
at() { local log="$1"; shift; awk -v key="$*" '$1=="@@" { k=""; for (i=2;i<=NF;i++) { if (k==key) { print $i; exit } k=k (k==""?"":" ") $i } }' "$log" 2>/dev/null; }
if [ "$attn_rc" = 0 ]; then attn_status=ok; else attn_status=FAIL; fi
attn_why=""
[ "$attn_rc" = 124 ] && attn_why="stopped after its limit"
[ "$attn_rc" != 0 ] && [ "$attn_rc" != 124 ] && attn_why="rc $attn_rc: see $logdir/attention_gpu.log"
grep -q 'skipped: --max-seconds' "$logdir/attention_gpu.log" 2>/dev/null && attn_why="${attn_why:+$attn_why; }$(grep -m1 'skipped: --max-seconds' "$logdir/attention_gpu.log" | sed 's/^attention_gpu: //')"
if [ "$on_gpu" = 1 ]; then
  tcopy=$(at "$logdir/attention_gpu.log" copy tile)
  pcopy=$(at "$logdir/attention_ref.log" copy torch)
  for d in 64 128; do
    for c in 0 1; do
      det=""
      for s in 1024 4096 16384; do
        t=$(at "$logdir/attention_gpu.log" prefill $d $s $c tile)
        p=$(at "$logdir/attention_ref.log" prefill $d $s $c sdpa)
        f=$(at "$logdir/attention_ref.log" prefill $d $s $c flash_attn)
        det="$det${det:+; }s$s tile ${t:-n/a} | sdpa ${p:-n/a}${f:+ | flash_attn $f}"
      done
      row "attn prefill d$d $([ $c = 1 ] && echo causal || echo full) TFLOP/s" "$attn_status" "$det${attn_why:+ ($attn_why)}${ref_note:+ ($ref_note)}"
    done
  done
  row "copy bandwidth GB/s (read + written)" "$attn_status" "tile copy kernel ${tcopy:-n/a} | torch copy_ ${pcopy:-n/a} (the ceiling for decode)"
  for bc in 1:1024 1:32768 16:8192 64:4096 256:1024 256:4096; do
    b=${bc%%:*} c=${bc##*:}
    t=$(at "$logdir/attention_gpu.log" decode $b $c tile)
    sp=$(awk -v b=$b -v c=$c '$1=="@@" && $2=="decode" && $3==b && $4==c && $5=="tile" {print $8}' "$logdir/attention_gpu.log")
    p=$(at "$logdir/attention_ref.log" decode $b $c sdpa)
    f=$(at "$logdir/attention_ref.log" decode $b $c flash_attn)
    pct=""
    [ -n "$t" ] && [ -n "$pcopy" ] && pct=$(awk -v a="$t" -v b="$pcopy" 'BEGIN{ if (b > 0) printf "tile = %.0f%% of torch copy", 100*a/b }')
    row "attn decode b$b ctx$c GB/s" "$attn_status" "tile ${t:-n/a}${sp:+ ($sp splits)} | sdpa (contiguous) ${p:-n/a}${f:+ | flash_attn $f}${pct:+ | $pct}${attn_why:+ ($attn_why)}${ref_note:+ ($ref_note)}"
  done
else
  row "attention on emu (checks only)" "$attn_status" "$(grep -c 'check ok' "$logdir/attention_gpu.log") of $(grep -cE '^  (prefill|decode) ' "$logdir/attention_gpu.log") shapes checked, ${attn_secs}s${attn_why:+; $attn_why}${ref_note:+; $ref_note}"
fi

# ---- 8. MoE: tile_moe_forward next to tile_gemm and PyTorch ----
if [ "$on_gpu" = 1 ]; then
  moe_args=(--models "mixtral:8:2:4096:14336,deepseek:256:8:7168:2048" --tokens 1,64,4096)
  moe_lim=$(limit 100)
  step "moe_gpu (tile_moe_forward, tile_gemm dense)" moe_gpu.log "$moe_lim" \
    "${cenv[@]}" "$build/bench/moe_gpu" --device "$device" "${moe_args[@]}" --max-seconds $((moe_lim - 20))
else
  moe_args=(--models "mixtral-tiny:8:2:64:128,deepseek-tiny:16:8:64:32" --tokens 1,16)
  step "moe_gpu checks on the emulator (not a measurement)" moe_gpu.log 20 \
    "${cenv[@]}" "$build/bench/moe_gpu" --device emu "${moe_args[@]}" --samples 3
fi
moe_rc=$rc moe_secs=$secs
step "moe_ref.py (torch per-expert loop, torch._grouped_mm, torch.matmul)" moe_ref.log 75 env PYTHONUNBUFFERED=1 python3 bench/gpu/moe_ref.py "${moe_args[@]}"
ref_rc=$rc
ref_note=""
case "$ref_rc" in
  0) ;;
  3) ref_note="torch columns skipped: $(grep -m1 -E '^moe_ref: ' "$logdir/moe_ref.log" | sed -e 's/^moe_ref: //' -e 's/: the PyTorch columns are skipped$//')" ;;
  *) ref_note="moe_ref.py rc $ref_rc: see $logdir/moe_ref.log" ;;
esac
if [ "$moe_rc" = 0 ]; then moe_status=ok; else moe_status=FAIL; fi
moe_why=""
[ "$moe_rc" = 124 ] && moe_why="stopped after its limit"
[ "$moe_rc" != 0 ] && [ "$moe_rc" != 124 ] && moe_why="rc $moe_rc: see $logdir/moe_gpu.log"
grep -q 'skipped: --max-seconds' "$logdir/moe_gpu.log" 2>/dev/null && moe_why="${moe_why:+$moe_why; }$(grep -m1 'skipped: --max-seconds' "$logdir/moe_gpu.log" | sed 's/^moe_gpu: //')"
if [ "$on_gpu" = 1 ]; then
  for m in mixtral deepseek; do
    for T in 1 64 4096; do
      t=$(at "$logdir/moe_gpu.log" moe $m $T tile)
      wg=$(awk -v m=$m -v T=$T '$1=="@@" && $2=="moe" && $3==m && $4==T && $5=="tile" {print $8}' "$logdir/moe_gpu.log")
      g=$(at "$logdir/moe_gpu.log" moe $m $T dense)
      l=$(at "$logdir/moe_ref.log" moe $m $T loop)
      gm=$(at "$logdir/moe_ref.log" moe $m $T grouped_mm)
      dn=$(at "$logdir/moe_ref.log" moe $m $T dense)
      pct=""
      [ -n "$t" ] && [ -n "$g" ] && pct=$(awk -v a="$t" -v b="$g" 'BEGIN{ if (b > 0) printf "tile moe = %.0f%% of tile dense", 100*a/b }')
      row "moe $m T=$T TFLOP/s" "$moe_status" "tile ${t:-n/a}${wg:+ (weights at $wg GB/s)} | tile_gemm dense ${g:-n/a} | torch loop ${l:-n/a} | grouped_mm ${gm:-n/a} | torch dense ${dn:-n/a}${pct:+ | $pct}${moe_why:+ ($moe_why)}${ref_note:+ ($ref_note)}"
    done
  done
else
  row "moe on emu (checks only)" "$moe_status" "$(grep -c 'check ok' "$logdir/moe_gpu.log") of $(grep -cE '^  [a-z-]+ T=' "$logdir/moe_gpu.log") shapes checked, $(grep -c '^@@ moe .* dense ' "$logdir/moe_gpu.log") dense tile_gemm rows, ${moe_secs}s${moe_why:+; $moe_why}${ref_note:+; $ref_note}"
fi

# ---- 8a. the device-using test programs on the GPU (at most 100 s: 120 until 6a's transposed-A GEMMs took an estimated 20 s) ----
# (--skip-suite on a GPU: the whole suite is mostly emulator and compiler work, run without a GPU by CI;
# these programs launch on TILE_TEST_DEVICE, each checking against float64.  4 programs of 4 workers:
# each worker process holds a CUDA context.)
if [ "$on_gpu" = 1 ] && [ "$skip_suite" = 1 ]; then
  dev_tests='^test_(gemm|attention|attention_api|moe|moe_f8|norm|rope|tree_decode|sample|e2e|graph_safe|foreign|conformance|examples|lang_shape)$'
  left=$((deadline - $(date +%s) - 15))
  [ "$left" -gt 100 ] && left=100
  if [ "$left" -ge 30 ]; then
    step "device test programs (TILE_TEST_DEVICE=$device)" device_tests.log "$left" \
      "${cenv[@]}" TILE_TEST_DEVICE="$device" TILE_DEVICE="$device" CRITERION_JOBS=4 ctest --test-dir "$build" -R "$dev_tests" -j4 --output-on-failure --timeout "$((left - 5))"
    res=$(grep -E 'tests passed' "$logdir/device_tests.log" | tail -1)
    passed=$(grep -cE 'Test +#[0-9]+: [a-z_0-9]+ \.+ +Passed' "$logdir/device_tests.log")
    nbad=$(grep -cE '\*\*\*(Failed|Exception)' "$logdir/device_tests.log")
    if [ "$rc" = 0 ]; then row "device test programs ($device)" ok "${res:-passed}, ${secs}s"
    elif [ "$rc" = 124 ] && [ "$nbad" = 0 ]; then row "device test programs ($device)" part "$passed passed before the deadline, none failed: see $logdir/device_tests.log"
    else row "device test programs ($device)" FAIL "${res:-rc $rc}, ${secs}s: see $logdir/device_tests.log"; fi
  else
    row "device test programs" skip "only ${left}s left of the deadline"
  fi
fi

# ---- 8b. RoPE + paged KV append (tile run rope, issue 19) ----
# GPU: Llama-3-8B heads (32 query, 8 KV, head_dim 128) for a decode batch of 1 and 256 tokens and a
# 4096-token prefill chunk, bf16 and an f8e4m3 cache; emu: small shapes, checks only.
if [ "$on_gpu" = 1 ]; then
  rope_shapes="1:auto 256:auto 4096:auto 256:f8e4m3"
  rope_dims=(--heads-q 32 --heads-kv 8 --head-dim 128 --reps 20)
else
  rope_shapes="7:auto 37:f8e4m3"
  rope_dims=(--heads-q 4 --heads-kv 2 --head-dim 64 --reps 1)
fi
: >"$logdir/rope.log"
rope_ok=0 rope_n=0 rope_det=""
for sh in $rope_shapes; do
  t=${sh%%:*} kv=${sh##*:}
  step "tile run rope --tokens $t --kv-dtype $kv" rope_one.log 40 "${cenv[@]}" "$build/tile" run rope --device "$device" --tokens "$t" --kv-dtype "$kv" "${rope_dims[@]}" --json
  cat "$logdir/rope_one.log" >>"$logdir/rope.log"
  rope_n=$((rope_n + 1))
  [ "$rc" = 0 ] && rope_ok=$((rope_ok + 1))
  gbs=$(sed -n 's/.*"gbytes_per_second":\([0-9.e+-]*\).*/\1/p' "$logdir/rope_one.log" | head -1)
  [ "$on_gpu" = 1 ] && rope_det="$rope_det${rope_det:+; }T=$t $kv ${gbs:-n/a} GB/s"
done
if [ "$rope_ok" = "$rope_n" ]; then rope_status=ok; else rope_status=FAIL; fi
row "rope + kv append$([ "$on_gpu" = 1 ] && echo ' GB/s' || echo ' on emu (checks only)')" "$rope_status" "$rope_ok of $rope_n shapes checked${rope_det:+: $rope_det} (see $logdir/rope.log)"

# ---- 8c. a whole decoder layer from the C API (tile run layer, docs/engine.md) ----
# Prefill of 8 prompts, then decode steps, dense (f8 KV cache; f16 with 3 speculative tokens per step)
# and MoE, every step checked against float64 and every decode step checked graph-safe.  emu: small.
if [ "$on_gpu" = 1 ]; then
  layer_runs=("--hidden 1024 --heads 16 --heads-kv 4 --head-dim 128 --inter 2816 --prompts 8 --steps 16 --kv-dtype f8e4m3"
              "--hidden 1024 --heads 16 --heads-kv 4 --head-dim 128 --inter 2816 --prompts 8 --steps 8 --spec-tokens 3 --dtype f16"
              "--hidden 1024 --heads 16 --heads-kv 4 --head-dim 128 --inter 512 --prompts 8 --steps 8 --moe --experts 16 --topk 4"
              # one layer of Llama-3-8B and of a Mixtral-8x7B-like MoE: one short prompt, then decode steps
              # (the float64 reference on the host bounds the prompt; the decode step's time is the number)
              "--hidden 4096 --heads 32 --heads-kv 8 --head-dim 128 --inter 14336 --prompts 1 --steps 3"
              "--hidden 4096 --heads 32 --heads-kv 8 --head-dim 128 --inter 14336 --prompts 1 --steps 3 --moe --experts 8 --topk 2")
else
  layer_runs=("--hidden 128 --heads 4 --heads-kv 2 --head-dim 32 --inter 192 --prompts 3 --steps 2"
              "--hidden 128 --heads 4 --heads-kv 1 --head-dim 64 --inter 64 --prompts 2 --steps 2 --moe --experts 6 --spec-tokens 3")
fi
: >"$logdir/layer.log"
layer_ok=0 layer_n=0
for la in "${layer_runs[@]}"; do
  # shellcheck disable=SC2086
  step "tile run layer $la" layer_one.log 120 "${cenv[@]}" "$build/tile" run layer --device "$device" $la --json
  cat "$logdir/layer_one.log" >>"$logdir/layer.log"
  layer_n=$((layer_n + 1))
  [ "$rc" = 0 ] && layer_ok=$((layer_ok + 1))
done
if [ "$layer_ok" = "$layer_n" ]; then layer_status=ok; else layer_status=FAIL; fi
row "decoder layer (tile run layer)" "$layer_status" "$layer_ok of $layer_n runs: every step within tolerance of float64, decode steps graph-safe (see $logdir/layer.log)"

# ---- 8d. sampling and speculative decoding (issue 19): tile run sample / spec, each row checked ----
if [ "$on_gpu" = 1 ]; then
  samp_runs=("sample --batch 64 --vocab 128256 --top-k 0 --top-p 1" "sample --batch 64 --vocab 128256 --top-k 50 --top-p 0.9"
             "sample --batch 256 --vocab 128256 --top-k 0 --top-p 0.95 --min-p 0.05 --dtype bf16"
             "sample --batch 64 --vocab 128256 --top-k 0 --top-p 0.9 --probs"
             "spec --batch 64 --drafts 4 --vocab 128256" "spec --batch 64 --drafts 4 --vocab 128256 --greedy")
  samp_reps=20
else
  samp_runs=("sample --batch 4 --vocab 1000 --top-k 0 --top-p 1" "sample --batch 4 --vocab 1000 --top-k 50 --top-p 0.9"
             "sample --batch 4 --vocab 1000 --top-k 0 --top-p 0.95 --min-p 0.05 --dtype bf16"
             "sample --batch 4 --vocab 1000 --top-k 0 --top-p 0.9 --probs"
             "spec --batch 4 --drafts 4 --vocab 1000" "spec --batch 4 --drafts 4 --vocab 1000 --greedy")
  samp_reps=1
fi
: >"$logdir/sampling.log"
for r in "${samp_runs[@]}"; do
  # shellcheck disable=SC2086
  step "tile run $r" sampling_one.log 60 "${cenv[@]}" "$build/tile" run $r --device "$device" --reps "$samp_reps" --json
  cat "$logdir/sampling_one.log" >>"$logdir/sampling.log"
  j=$(grep -m1 '^{' "$logdir/sampling_one.log")
  ms=$(printf '%s' "$j" | sed -n 's/.*"median_seconds":\([0-9.e+-]*\).*/\1/p' | awk '{printf "%.3f", $1 * 1e3}')
  bad=$(printf '%s' "$j" | sed -n 's/.*"mismatches":\([0-9]*\).*/\1/p')
  if [ "$rc" = 0 ] && printf '%s' "$j" | grep -q '"ok":true'; then st=ok; else st=FAIL; fi
  row "${r%% *} ${r#* }" "$st" "${ms:-n/a} ms per call, ${bad:-?} mismatches against float64 (rc $rc)"
done
# ---- 8e. fused norms and gated activations (issue 19): tile run norm / act, every row checked ----
# GPU: Llama-3-8B widths (hidden 4096, intermediate 14336) at 1, 256 and 4096 tokens, unquantized and
# quantized to f8e4m3 per token and per 128-column group (what the block-scaled GEMM reads); emu: small
# odd shapes, checks only.
if [ "$on_gpu" = 1 ]; then
  na_runs=("norm --tokens 1 --hidden 4096" "norm --tokens 256 --hidden 4096" "norm --tokens 4096 --hidden 4096"
           "norm --tokens 4096 --hidden 4096 --quant f8e4m3" "norm --tokens 4096 --hidden 4096 --quant f8e4m3 --group 128"
           "norm --tokens 4096 --hidden 4096 --layernorm"
           "act --tokens 1 --d 14336" "act --tokens 256 --d 14336" "act --tokens 4096 --d 14336"
           "act --tokens 4096 --d 14336 --quant f8e4m3" "act --tokens 4096 --d 14336 --quant f8e4m3 --group 128"
           "act --tokens 4096 --d 14336 --act gelu-tanh --quant i8")
  na_reps=20
else
  na_runs=("norm --tokens 3 --hidden 333 --quant f8e4m3 --group 128" "norm --tokens 3 --hidden 333 --layernorm --quant i8"
           "act --tokens 3 --d 333 --act gelu --quant f8e4m3 --group 128")
  na_reps=1
fi
: >"$logdir/norm_act.log"
for r in "${na_runs[@]}"; do
  # shellcheck disable=SC2086
  step "tile run $r" norm_act_one.log 40 "${cenv[@]}" "$build/tile" run $r --device "$device" --reps "$na_reps" --json
  cat "$logdir/norm_act_one.log" >>"$logdir/norm_act.log"
  j=$(grep -m1 '^{' "$logdir/norm_act_one.log")
  gbs=$(printf '%s' "$j" | sed -n 's/.*"gbytes_per_second":\([0-9.e+-]*\).*/\1/p' | awk '{printf "%.1f", $1}')
  if [ "$rc" = 0 ] && printf '%s' "$j" | grep -q '"ok":true'; then st=ok; else st=FAIL; fi
  if [ "$on_gpu" = 1 ]; then row "${r%% *} ${r#* }" "$st" "${gbs:-n/a} GB/s, every row within tolerance of float64 (rc $rc)"
  else row "${r%% *} ${r#* }" "$st" "every row within tolerance of float64 on emu (checks only; rc $rc)"; fi
done
# ---- 8f. speculative decoding's tree attention (issue 19): tile run decode --tree ----
# GPU: Llama-3-8B heads (32 query, 8 KV, head_dim 128), 64 sequences of 4096 tokens, 8 new tokens each as a
# random token tree (tree_mask), next to the same call with the 8 tokens causal; emu: a small check.
if [ "$on_gpu" = 1 ]; then
  tree_runs=("--batch 64 --context 4096 --heads 32 --heads-kv 8 --head-dim 128 --tokens 8 --tree"
             "--batch 64 --context 4096 --heads 32 --heads-kv 8 --head-dim 128 --tokens 8")
  tree_reps=20
else
  tree_runs=("--batch 2 --context 45 --heads 4 --heads-kv 2 --head-dim 64 --tokens 5 --tree")
  tree_reps=1
fi
: >"$logdir/tree_decode.log"
for r in "${tree_runs[@]}"; do
  # shellcheck disable=SC2086
  step "tile run decode $r" tree_one.log 60 "${cenv[@]}" "$build/tile" run decode $r --device "$device" --reps "$tree_reps" --json
  cat "$logdir/tree_one.log" >>"$logdir/tree_decode.log"
  j=$(grep -m1 '^{' "$logdir/tree_one.log")
  gbs=$(printf '%s' "$j" | sed -n 's/.*"kv_gbps":\([0-9.e+-]*\).*/\1/p' | awk '{printf "%.1f", $1}')
  if [ "$rc" = 0 ] && printf '%s' "$j" | grep -q '"ok":true'; then st=ok; else st=FAIL; fi
  label="decode 8 tokens$(case "$r" in *--tree*) echo ' as a tree';; *) echo ' causal';; esac)"
  if [ "$on_gpu" = 1 ]; then row "$label" "$st" "KV cache read at ${gbs:-n/a} GB/s, rows within tolerance of float64 (rc $rc)"
  else row "decode --tree on emu" "$st" "rows within tolerance of float64 (checks only; rc $rc)"; fi
done
# ---- 9. emulator speed, compile time ----
# CPU-only: on a GPU they give way to the device's own steps (scripts/test.sh runs them without one).
if [ "$on_gpu" = 1 ]; then
  row "emulator speed, compile time" skip "CPU-only: measured by scripts/test.sh without a GPU"
  printf '\n== summary (device %s, %ss, logs in %s)\n' "$device" "$(( $(date +%s) - start ))" "$logdir"
  printf '%-40s %-6s %s\n' "step" "result" "details"
  printf '%s\n' "${summary[@]}"
  exit "$failed"
fi
step "emu_speed" emu_speed.log 120 "${cenv[@]}" "$build/bench/emu_speed" --reps 3 # medians: one launch is a sample of the load too
if [ "$rc" = 0 ]; then
  # one host thread: per second of CPU time too (steadier on a loaded machine than the wall clock's)
  row "emulator speed (M thread-instr/s)" ok "$(awk '/M instr\/s/ {cpu = ""; if (match($0, /CPU [0-9.]+ s, +[0-9.]+ M\/s/)) { split(substr($0, RSTART, RLENGTH), w, " "); cpu = " (" w[4] " per CPU s)" }
    printf "%s%s %s %s%s", sep, $2, ($7=="1") ? "1 host thread" : "all cores", $(NF-2), cpu; sep="; "}' "$logdir/emu_speed.log")"
else row "emulator speed" FAIL "rc $rc: see $logdir/emu_speed.log"; fi
# the median of 3 cold compiles without a GPU too (about 14 s a repetition on 2 cores, all 21 files): one sample swung 2x
# with the machine's load between two runs of the same code
reps=5
[ "$on_gpu" = 0 ] && reps=3
step "compile_time" compile_time.log 150 "${cenv[@]}" "$build/bench/compile_time" --reps "$reps"
if [ "$rc" = 0 ]; then
  g=$(awk '$1=="gemm.tile" {print "gemm.tile src->ptx "$7" ms, ptxas "$8" ms (CPU "$10" / "$11" ms)"}' "$logdir/compile_time.log")
  row "compile time (sm_80)" ok "$(tail -1 "$logdir/compile_time.log"); $g"
else row "compile time" FAIL "rc $rc: see $logdir/compile_time.log"; fi

# ---- the table ----
printf '\n== summary (device %s, %ss, logs in %s)\n' "$device" "$(( $(date +%s) - start ))" "$logdir"
printf '%-40s %-6s %s\n' "step" "result" "details"
printf '%s\n' "${summary[@]}"
exit "$failed"
