#!/usr/bin/env bash
# Install dependencies, build, and run every test: the whole suite, then the
# front end, IR and fuzz tests again under AddressSanitizer + UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh --asan
echo "== test suite"
ctest --test-dir build --output-on-failure --timeout 900
echo "== install: pkg-config and CMake package consumers"
scripts/check_install.sh
echo "== front end, IR, passes, LLVM lowering (every shipped kernel), the emulator (its tests and the nvcc conformance suite) and fuzz under ASan+UBSan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure --timeout 900 \
  -R 'test_(lang|tir|canonicalize|fuzz|cli|kernels|e2e|stdlib|f8|treesitter|emu|emu_mma|emu_forms|conformance)$'
echo "== bench/gpu/run.sh --device emu: the GPU script's steps on the emulator (suite already run above)"
bash bench/gpu/run.sh --device emu --skip-suite
