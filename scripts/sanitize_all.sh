#!/usr/bin/env bash
# The whole test suite under ASan+UBSan+LeakSanitizer, the ptxas-bound test_kernels_ptxas included
# (scripts/test.sh, CI's job, leaves that one to the plain run to stay within its time).
# Needs scripts/setup.sh once.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh --asan
jobs=$(nproc 2>/dev/null || echo 2)
TILE_TEST_TOOL_CACHE="$PWD/build/tool-cache" ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:malloc_context_size=2 LSAN_OPTIONS=suppressions="$PWD/tests/lsan.supp" \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure --timeout 1800 -j"$jobs" "$@"
