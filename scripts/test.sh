#!/usr/bin/env bash
# Install dependencies, build, and run every test: the whole suite, then the
# whole suite again under AddressSanitizer + UBSan + LeakSanitizer.
#
# On CI's 2 cores the phases that leave a core idle (pip's downloads, the install check's one-file
# compiles, a build's configure and last links) run beside the ones that do not: the sanitized build
# beside the plain suite, the Python package and the install check beside both.  A phase run beside
# writes its output to build/ci-logs/<phase>.log, printed whole when the script waits for it; any
# failure fails the script.  The benchmarks run last, alone, so that their timings are the machine's.
# Each phase ends with "== time: <phase>: <wall> s wall, <cpu> s CPU" (its processes' user + system).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
tick=$(getconf CLK_TCK 2>/dev/null || echo 100)
# cpu_now: CPU := the CPU seconds this shell's finished children used
cpu_now() { local st; read -r -a st </proc/$BASHPID/stat; CPU=$(((st[15] + st[16]) / tick)); }
# phase NAME CMD...: run CMD, then say how long it took
phase() {
  local name=$1 t0=$SECONDS c0
  shift
  cpu_now; c0=$CPU
  "$@"
  cpu_now
  echo "== time: $name: $((SECONDS - t0)) s wall, $((CPU - c0)) s CPU"
}
logs=build/ci-logs
# beside NAME CMD...: start phase NAME in the background, its output to $logs/NAME.log (spaces as -); its pid in
# $beside_pid
beside() {
  local name=$1
  shift
  mkdir -p "$logs"
  echo "== $name: started beside, output in $logs/${name// /-}.log"
  (phase "$name" "$@") >"$logs/${name// /-}.log" 2>&1 &
  beside_pid=$!
}
# await_beside PID NAME: wait for a phase started beside, print its output, stop here if it failed
await_beside() {
  local rc=0
  wait "$1" || rc=$?
  echo "== $2 (ran beside; $logs/${2// /-}.log):"
  cat "$logs/${2// /-}.log"
  if [ "$rc" != 0 ]; then echo "== $2 FAILED (exit status $rc)"; exit "$rc"; fi
}
# a failure in the foreground waits for the phases beside (no orphans left running)
trap 'wait' EXIT
T0=$SECONDS
scripts/setup.sh
phase "build" scripts/build.sh

echo "== beside the suites: the Python package (a fresh venv, pip install ./python, python/tests on the emulator),"
echo "   then the install (exported symbols, libtile_rt without LLVM, pkg-config and CMake package consumers)"
python_and_install() {
  phase "python" scripts/test_python.sh
  phase "install check" scripts/check_install.sh
}
beside "python and install" python_and_install
side=$beside_pid
# the sanitized build: -O1 -g1, only the benchmarks test_cli and test_docs run (scripts/build.sh, docs/testing.md); 281 s of
# CPU on 2 cores, 362 s with -g and every benchmark.  The test helpers' emulated devices stop a hung launch at
# TILE_EMU_TIMEOUT, else 60 s (tests/emu_budget.h), so a hang fails its program long before ctest's timeout.
beside "build ASan" scripts/build.sh --asan-only
asan_build=$beside_pid

echo "== test suite"
phase "ctest" ctest --test-dir build --output-on-failure --timeout 900 -j"$jobs"
await_beside "$asan_build" "build ASan"

echo "== the test suite again under ASan+UBSan+LeakSanitizer, but test_kernels_ptxas (label ptxas: its time is"
echo "   ptxas's, and the compiles it assembles run sanitized in test_kernels); all of it: scripts/sanitize_all.sh"
# TILE_TEST_TOOL_CACHE: nvcc's and ptxas's answers to the plain run's programs, asked again by the same
# programs here (tests/tool_cache.h)
TILE_TEST_TOOL_CACHE="$PWD/build/tool-cache" ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:malloc_context_size=2 LSAN_OPTIONS=suppressions="$PWD/tests/lsan.supp" \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  phase "ctest ASan" ctest --test-dir build-asan --output-on-failure --timeout 1800 -j"$jobs" -LE ptxas
await_beside "$side" "python and install"

echo "== bench/gpu/run.sh --device emu: the GPU script's steps on the emulator (suite already run above)"
phase "bench/gpu/run.sh" bash bench/gpu/run.sh --device emu --skip-suite
cpu_now
echo "== time: scripts/test.sh: $((SECONDS - T0)) s wall, $CPU s CPU"
