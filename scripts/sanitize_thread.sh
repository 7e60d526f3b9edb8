#!/usr/bin/env bash
# The test programs that start threads or processes, under ThreadSanitizer (outside CI, like
# sanitize_all.sh): a Debug build at -O1 in build-tsan/ (-DTILE_SANITIZE=thread), the programs built
# against tests/tsan's stand-in for Criterion's runner (Criterion cannot start under TSan), each test in
# a forked child.  Any race or lock-order report fails the test that made it (TSan's exit code 66), and
# the reports are kept in build-tsan/tsan-logs/.  Arguments go to every program (--filter 'suite/*').
# Needs scripts/setup.sh once.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
programs="test_streams test_graph_safe test_handles test_runtime test_cache test_cache_safety test_foreign test_emu_forms test_emu_stop test_lang_map test_aot"
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=-g -O1" -DTILE_SANITIZE=thread >/dev/null
# shellcheck disable=SC2086
cmake --build build-tsan -j"$jobs" --target tile_cli $programs
logs=build-tsan/tsan-logs
rm -rf "$logs" && mkdir -p "$logs"
export TILE_CACHE_DIR="$PWD/build-tsan/test-cache"
export TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1 log_path=$PWD/$logs/tsan ${TSAN_OPTIONS:-}"
failed=0
for p in $programs; do
  echo "== $p"
  args=("$@")
  # its 0.5 s budget ends before TSan's slowed emulator has started all 64 threads the report names
  if [ $# -eq 0 ] && [ "$p" = test_emu_stop ]; then args=(--filter '!(stop/infinite_loop_times_out)'); fi
  "build-tsan/tests/$p" "${args[@]}" > "$logs/$p.out" 2>&1 || true
  grep -E '^\[(FAIL|SKIP)\]|^Synthesis' "$logs/$p.out" || true
  if grep -q '^\[FAIL\]' "$logs/$p.out" || ! grep -q '^Synthesis' "$logs/$p.out"; then failed=1; fi
done
if ls "$logs"/tsan.* >/dev/null 2>&1; then
  echo "ThreadSanitizer reports (in $logs):"
  grep -h '^SUMMARY' "$logs"/tsan.* | sort | uniq -c
  failed=1
fi
exit $failed
