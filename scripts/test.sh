#!/usr/bin/env bash
# Install dependencies, build, and run every test: the whole suite, then the
# whole suite again under AddressSanitizer + UBSan + LeakSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh --asan
jobs=$(nproc 2>/dev/null || echo 2)
echo "== test suite"
ctest --test-dir build --output-on-failure --timeout 900 -j"$jobs"
echo "== the Python package: a fresh venv, pip install ./python, python/tests on the emulator"
scripts/test_python.sh
echo "== install: exported symbols, libtile_rt without LLVM, pkg-config and CMake package consumers"
scripts/check_install.sh
echo "== the test suite again under ASan+UBSan+LeakSanitizer, but test_kernels_ptxas (label ptxas: its time is"
echo "   ptxas's, and the compiles it assembles run sanitized in test_kernels); all of it: scripts/sanitize_all.sh"
# TILE_TEST_TOOL_CACHE: nvcc's and ptxas's answers to the plain run's programs, asked again by the same
# programs here (tests/tool_cache.h)
TILE_TEST_TOOL_CACHE="$PWD/build/tool-cache" ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:malloc_context_size=2 LSAN_OPTIONS=suppressions="$PWD/tests/lsan.supp" \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure --timeout 1800 -j"$jobs" -LE ptxas
echo "== bench/gpu/run.sh --device emu: the GPU script's steps on the emulator (suite already run above)"
bash bench/gpu/run.sh --device emu --skip-suite
