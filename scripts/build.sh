#!/usr/bin/env bash
# Configure and build into build/ (and build-asan/ with --asan; build-asan/ alone with --asan-only).
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in "" | --asan | --asan-only) ;; *) echo "usage: scripts/build.sh [--asan | --asan-only]" >&2; exit 2 ;; esac
jobs=$(nproc 2>/dev/null || echo 2)
if [ "${1:-}" != "--asan-only" ]; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build -j"$jobs"
fi
if [ "${1:-}" = "--asan" ] || [ "${1:-}" = "--asan-only" ]; then
  # -O1: AddressSanitizer's recommended level; the emulator-bound tests run 2-3x faster than at -O0
  # (asserts stay: a Debug build without NDEBUG).  -g1: line tables and functions, inlined ones included, so
  # every frame of a sanitizer's report keeps its file:line, without the local variables' locations, whose
  # tracking was a third of gcc's CPU on this build (41.8 s against 28.1 s on a sample of 9 of its files)
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=-g1 -O1" -DTILE_SANITIZE=ON >/dev/null
  cmake --build build-asan -j"$jobs"
fi
