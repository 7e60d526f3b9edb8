#!/bin/sh
# Regenerates the PTX fixtures from their LLVM IR sources with LLVM 22's
# NVPTX backend, the exact backend the compiler uses.  The tests read the
# committed .ptx files and need no llc.
set -e
cd "$(dirname "$0")"
LLC=${LLC:-/usr/lib/llvm-22/bin/llc}
for ll in *.ll; do
  "$LLC" -march=nvptx64 -mcpu=sm_80 -O3 "$ll" -o "${ll%.ll}.ptx"
done
