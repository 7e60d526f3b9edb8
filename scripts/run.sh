#!/usr/bin/env bash
# Install dependencies, build, and compile every shipped kernel for sm_80 and
# sm_90a, printing what came out: kernels, signature, registers, spills,
# shared memory, PTX size, and where the PTX and cubin went.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
out=build/kernels
mkdir -p "$out"
tile=build/tile
emit=cubin
if ! command -v ptxas >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/ptxas ]; then
  echo "ptxas not found: emitting PTX only (no register/spill numbers)"
  emit=ptx
fi
for arch in sm_80 sm_90a; do
  echo "== $arch"
  for k in kernels/*.tile kernels/*/*.tile; do
    name=$(basename "$k" .tile)
    "$tile" compile "$k" --arch "$arch" --emit ptx -o "$out/$name.$arch.ptx"
    if [ "$emit" = cubin ]; then
      "$tile" compile "$k" --arch "$arch" --emit cubin -o "$out/$name.$arch.cubin" -v 2>&1 | grep '^kernel ' | sed 's/^/  /'
    else
      "$tile" compile "$k" --arch "$arch" --emit ptx -o /dev/null -v 2>&1 | grep '^kernel ' | sed 's/^/  /'
    fi
    printf '    -> %s (%s lines of PTX)\n' "$out/$name.$arch.ptx" "$(wc -l < "$out/$name.$arch.ptx")"
  done
done
# The launcher library: tile_gemm compiles the shipped GEMM for the default
# device (the emulator without a GPU), caches it, launches it and checks it
# against a float64 reference.  The second run starts a new process and
# loads the kernel from the disk cache instead of compiling it.
echo "== tile_gemm demo (cache: ${TILE_CACHE_DIR:-~/.cache/tile})"
"$tile" run gemm --m 96 --n 80 --k 64 --dtype bf16 --reps 3
"$tile" run gemm --m 96 --n 80 --k 64 --dtype bf16 --reps 3 | grep -E 'first call|check'
"$tile" cache stats
