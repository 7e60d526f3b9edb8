#!/bin/sh
# Regenerates the PTX fixtures from their sources: the LLVM IR (*.ll) with LLVM 22's NVPTX backend,
# the exact backend the compiler uses, and the CUDA (*.cu) with nvcc -arch=sm_80 -ptx, as nvcc
# writes PTX for CUDA code.  The tests read the committed .ptx files and need neither llc nor nvcc.
set -e
cd "$(dirname "$0")"
LLC=${LLC:-/usr/lib/llvm-22/bin/llc}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
for ll in *.ll; do
  "$LLC" -march=nvptx64 -mcpu=sm_80 -O3 "$ll" -o "${ll%.ll}.ptx"
done
for cu in *.cu; do
  ptx=${cu%.cu}.ptx
  "$NVCC" -arch=sm_80 -ptx "$cu" -o "$ptx.tmp"
  { echo "// $ptx: written by nvcc -arch=sm_80 -ptx $cu ($("$NVCC" --version | sed -n 's/.*\(release [0-9.]*\).*/\1/p')), through tests/emu/regen.sh"
    cat "$ptx.tmp"; } > "$ptx"
  rm -f "$ptx.tmp"
done
