#!/usr/bin/env bash
# Run the libFuzzer targets of fuzz/ for a chosen time (not part of CI).
#
#   scripts/fuzz.sh [SECONDS] [tile|ptx|both]      (default: 60 seconds each, both)
#
# 1. installs clang when missing; configures build-fuzz/ with clang and
#    TILE_FUZZ=ON (ASan + UBSan + libFuzzer) and builds fuzz_tile, fuzz_ptx;
# 2. makes the seed corpora: build-fuzz/corpus-tile from kernels/, stdlib/,
#    tests/lang/, fuzz/seeds/tile-* and fuzz/regressions/tile-*;
#    build-fuzz/corpus-ptx from tests/emu/*.ptx, fuzz/seeds/ptx-*,
#    fuzz/regressions/ptx-* and, when build/tile exists, the PTX of every
#    shipped kernel and of fuzz/seeds/tile-* for sm_80 and sm_90a.  Inputs the fuzzers
#    find are added to these folders and kept for the next run.  Inputs of
#    bugs reported and not fixed yet wait in fuzz/regressions/open/ (not
#    seeded: each would stop every run at once); the fix moves them up;
# 3. runs each fuzzer in one process with its dictionary for SECONDS; after a
#    crash it starts again for the time left (at most 8 times), so one run can
#    find several bugs.  FUZZ_JOBS=N uses libFuzzer's -fork=N instead (jobs
#    that a timeout ends without ending the run; worth it for fuzz_ptx and long runs:
#    docs/testing.md has the numbers).  Crashes, timeouts, leaks and OOMs are written under
#    build-fuzz/crashes-*, each also minimized (min-*); leaks already reported
#    and not yet fixed are listed in fuzz/lsan.supp.  A corpus input that
#    passes the -timeout ($FUZZ_TIMEOUT, default 10 s) (a seed that is only slow on a loaded machine:
#    a large batched dot, paged attention on the emulator) is moved to
#    build-fuzz/slow-* and its timeout file dropped, so a restart does not
#    replay it and time out again; the slow inputs (kept for later runs too)
#    are run once each at the end with -timeout=$SLOW_TIMEOUT (default 120),
#    and a timeout or crash there is reported as any other (the input copied
#    to crashes-* as timeout-slow-NAME or crash-slow-NAME);
# 4. prints a summary: runs, execs/s, coverage, crash files and, for
#    fuzz_tile, the share of inputs that compile.  Exits 1 when a crash was found.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
which=${2:-both}
case "$which" in tile | ptx | both) ;; *) echo "usage: scripts/fuzz.sh [SECONDS] [tile|ptx|both]" >&2; exit 2 ;; esac
case "$secs" in '' | *[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS] [tile|ptx|both]" >&2; exit 2 ;; esac

# 1. clang and the build
if ! command -v clang >/dev/null; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -o DPkg::Lock::Timeout=300
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -o DPkg::Lock::Timeout=300 clang
fi
CC=clang cmake -S . -B build-fuzz -DTILE_FUZZ=ON -DTILE_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j"$(nproc 2>/dev/null || echo 2)" --target fuzz_tile fuzz_ptx >/dev/null

# 2. seed corpora (regressions first: they are the bugs found before)
B=build-fuzz
timeout=${FUZZ_TIMEOUT:-10}        # seconds per input while fuzzing
fork_jobs=${FUZZ_JOBS:-0}          # libFuzzer -fork=N: N fuzzing jobs at once (0: one process, restarted)
slow_timeout=${SLOW_TIMEOUT:-120}  # seconds per slow input, run once
mkdir -p $B/corpus-tile $B/corpus-ptx $B/crashes-tile $B/crashes-ptx $B/slow-tile $B/slow-ptx
for f in kernels/*.tile kernels/*/*.tile stdlib/*.tile tests/lang/*.tile; do
  n=$(echo "$f" | tr / _)
  cp "$f" "$B/corpus-tile/seed_$n"
  # the variants fuzz_tile selects by a first byte: 0x01 BLOCK=64, 0x02 sm_90a, 0x04 run on the emulator
  grep -q 'const BLOCK' "$f" && { printf '\001'; cat "$f"; } >"$B/corpus-tile/seed1_$n"
  case "$f" in kernels/*) { printf '\002'; cat "$f"; } >"$B/corpus-tile/seed2_$n" ;; esac
  { printf '\004'; cat "$f"; } >"$B/corpus-tile/seed4_$n"
done
for f in tests/emu/*.ptx; do
  cp "$f" "$B/corpus-ptx/seed_$(basename "$f")"
  { printf '\001'; cat "$f"; } >"$B/corpus-ptx/seed1_$(basename "$f")" # fuzz_ptx's variant that also launches
done
# the PTX and .tile sources the test programs and the docs hold (wgmma, TMA,
# mbarriers, clusters; every construct of docs/language.md): fuzz/seeds.py
python3 fuzz/seeds.py $B/corpus-tile $B/corpus-ptx || echo "note: fuzz/seeds.py failed; seeds from files only" >&2
for f in fuzz/regressions/tile-* fuzz/regressions/ptx-*; do
  [ -f "$f" ] || continue
  case "$(basename "$f")" in tile-*) cp "$f" $B/corpus-tile/ ;; ptx-*) cp "$f" $B/corpus-ptx/ ;; esac
done
# hand-written seeds of constructs the files above hold little of (fuzz/seeds/: trans() operands of a pipelined
# dot, pointer_type casts, scans, sort, histogram, join/split, inline asm, BLOCK: constexpr parameters, tensor
# descriptors, merge_loads' patterns, Python's spellings the front end refuses (no .tile suffix: the editor grammar
# does not parse them); ldmatrix .trans, wgmma's transpose bits, TMA with mbarrier waits, a cluster with setmaxnreg
# and stmatrix): .tile ones also for sm_90a (0x02) and run (0x04, 0x06), PTX ones also launched
for f in fuzz/seeds/tile-* fuzz/seeds/ptx-*; do
  [ -f "$f" ] || continue
  n=seed_$(basename "$f")
  case "$n" in
  seed_tile-*) cp "$f" "$B/corpus-tile/$n" && for v in 2 4 6; do { printf "\\00$v"; cat "$f"; } >"$B/corpus-tile/$n.$v"; done ;;
  *) cp "$f" "$B/corpus-ptx/$n" && { printf '\001'; cat "$f"; } >"$B/corpus-ptx/seed1_$(basename "$f")" ;;
  esac
done
if [ -x build/tile ] && [ "$which" != tile ]; then
  for f in kernels/*.tile kernels/*/*.tile fuzz/seeds/tile-*.tile; do # (not the seeds of errors)
    for arch in sm_80 sm_90a; do
      build/tile compile "$f" --arch "$arch" --emit ptx --no-cache -o "$B/corpus-ptx/seed_$(echo "$f" | tr / _)_$arch.ptx" 2>/dev/null ||
        echo "note: build/tile compile $f --arch $arch failed; not a seed" >&2
    done
  done
else
  [ "$which" = tile ] || echo "note: no build/tile (scripts/build.sh): fuzz_ptx seeds are tests/emu/*.ptx only" >&2
fi

# the inputs an earlier run found slow stay out of the corpora (run once, at the end)
for name in tile ptx; do
  for f in $B/slow-$name/*; do [ -f "$f" ] && rm -f "$B/corpus-$name/$(basename "$f")"; done
done

# 3. fuzz; 4. summarize
found=0
summary=()
# a timeout file ART of an input of NAME's corpus (a seed, or one kept earlier, only slow on a loaded machine)
# is not a finding: the input leaves the corpus for $B/slow-NAME/ (run once at the end, and kept out of later
# runs) and ART is dropped; false when ART is no corpus input's
slow_seed() { # NAME ART
  local name=$1 art=$2 sum c moved=""
  sum=$(sha1sum <"$art" | cut -d' ' -f1)
  for c in $B/corpus-$name/*; do
    [ -f "$c" ] && [ "$(sha1sum <"$c" | cut -d' ' -f1)" = "$sum" ] && { mv "$c" $B/slow-$name/; moved=$(basename "$c"); }
  done
  [ -n "$moved" ] || return 1
  rm -f "$art"
  echo "   $moved passed the ${timeout} s timeout: moved to $B/slow-$name/, run once at the end with -timeout=$slow_timeout"
}
run_one() { # NAME DICT MAX_LEN
  local name=$1 dict=$2 maxlen=$3 left=$secs tries=0 runs=0 jobs=0 cov="?" eps=() share="" tmo=0 mode
  local crashes=$B/crashes-$name log before counts=$B/counts-$name.txt art
  before=$(find "$crashes" -maxdepth 1 -type f ! -name 'min-*' ! -name 'slow-unit-*' | wc -l)
  rm -f "$counts"
  # FUZZ_JOBS=N: libFuzzer's fork mode, the fuzzing in child jobs (each from a random sqrt(N) of the corpus,
  # for 1 s, 2 s, ... up to 300 s) that this process merges; a timeout or OOM ends a job, not the run (the
  # input is still written under $crashes/); a crash ends the run.  Without: one process, which a timeout ends
  mode=(-print_final_stats=1)
  [ "$fork_jobs" -gt 0 ] && mode=(-fork="$fork_jobs" -ignore_timeouts=1 -ignore_ooms=1 -ignore_crashes=0)
  while [ "$left" -gt 0 ] && [ $tries -lt 8 ]; do
    tries=$((tries + 1))
    log=$B/fuzz-$name-$tries.log
    local t0=$SECONDS
    echo "== fuzz_$name: ${left}s$([ "$fork_jobs" -gt 0 ] && echo " -fork=$fork_jobs") (log: $log)"
    FUZZ_TILE_COUNTS=$counts ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=fuzz/lsan.supp UBSAN_OPTIONS=print_stacktrace=1 \
      $B/fuzz_$name $B/corpus-$name "${mode[@]}" -dict="$dict" -max_len="$maxlen" -max_total_time="$left" -timeout="$timeout" \
      -rss_limit_mb=4096 -artifact_prefix="$crashes/" >"$log" 2>&1 || true
    local took=$((SECONDS - t0)) st n
    left=$((left - took))
    if [ "$fork_jobs" -gt 0 ]; then # the driver's status lines: "#RUNS: cov: C ft: F corp: N exec/s E oom/timeout/crash: O/T/C time: Ss job: J ..."
      st=$(grep -a '^#[0-9]*: cov: ' "$log" | tail -1 || true)
      n=$(echo "$st" | sed -n 's/^#\([0-9]*\):.*/\1/p' | grep . || echo 0)
      runs=$((runs + n))
      eps+=("$((n / (took > 0 ? took : 1)))")
      [ -n "$st" ] && cov=$(echo "$st" | grep -ao 'cov: [0-9]* ft: [0-9]*')
      jobs=$((jobs + $(echo "$st" | sed -n 's/.* job: \([0-9]*\).*/\1/p' | grep . || echo 0)))
      tmo=$((tmo + $(echo "$st" | sed -n 's/.*oom\/timeout\/crash: [0-9]*\/\([0-9]*\)\/.*/\1/p' | grep . || echo 0)))
    else
      runs=$((runs + $(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1 | grep . || echo 0)))
      eps+=("$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)")
      cov=$(grep -ao 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1 || echo "$cov")
      if grep -aq 'ERROR: libFuzzer: timeout' "$log"; then # a slow corpus input: out of the corpus, start again
        art=$(sed -n 's/^artifact_prefix=.*; Test unit written to //p' "$log" | tail -1)
        [ -n "$art" ] && [ -f "$art" ] && slow_seed "$name" "$art" && continue
      fi
    fi
    if ! grep -aq '^==[0-9]*==ERROR\|^SUMMARY: \|deadly signal\|ERROR: libFuzzer' "$log"; then break; fi
    # what failed and the first frames that are not the fuzzing machinery
    grep -a -m2 '^==[0-9]*==ERROR\|ERROR: libFuzzer\|runtime error:\|^fuzz_[a-z]*: .* failed\|^tile: internal' "$log" || true
    grep -a '^ *#[0-9]* 0x' "$log" | grep -v 'fuzzer::\|__sanitizer\|__asan\|__ubsan\|libc\.so\|/nptl/\|raise\|abort\|in main ' | head -4 || true
  done
  for art in "$crashes"/timeout-*; do # fork mode: the jobs' (and the merge's) timeouts on corpus inputs
    [ -f "$art" ] || continue
    case "$(basename "$art")" in timeout-slow-*) continue ;; esac
    slow_seed "$name" "$art" || true
  done
  local slow=0 f slog kind
  for f in $B/slow-$name/*; do # the slow inputs, each once with the long timeout: a timeout here is a finding
    [ -f "$f" ] || continue
    slow=$((slow + 1))
    slog=$B/fuzz-$name-slow-$(basename "$f").log
    echo "== fuzz_$name: slow input $(basename "$f") (-timeout=$slow_timeout, log: $slog)"
    if ! ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=fuzz/lsan.supp UBSAN_OPTIONS=print_stacktrace=1 \
      $B/fuzz_$name -timeout="$slow_timeout" -rss_limit_mb=4096 -artifact_prefix="$crashes/" "$f" >"$slog" 2>&1; then
      grep -a -m2 '^==[0-9]*==ERROR\|ERROR: libFuzzer\|runtime error:\|^fuzz_[a-z]*: .* failed' "$slog" || true
      # libFuzzer writes no file for an input it was given to run: the input is the finding
      kind=crash
      if grep -aq 'ERROR: libFuzzer: timeout' "$slog"; then kind=timeout; fi
      grep -aq 'Test unit written to' "$slog" || cp "$f" "$crashes/$kind-slow-$(basename "$f")"
    fi
  done
  if [ "$name" = tile ]; then # the counters of each process's last line (fork mode: each job's, FUZZ_TILE_COUNTS), summed
    share=$(if [ "$fork_jobs" -gt 0 ]; then cat "$counts" 2>/dev/null; else
      for l in $B/fuzz-tile-[0-9]*.log; do grep -a '^fuzz_tile: \(progress\|final\):' "$l" | tail -1; done; fi |
      awk '{n += $3; p += $5; f += $7; c += $12; r += $15} END { if (n) printf "%d of %d inputs compiled (%.1f%%), %d parsed, %d through the front end, %d kernel launches on the emulator", c, n, 100 * c / n, p, f, r }')
  fi
  local files=() f
  for f in "$crashes"/*; do
    [ -f "$f" ] || continue
    case "$(basename "$f")" in min-* | slow-unit-*) continue ;; esac
    files+=("$f")
    [ -f "$crashes/min-$(basename "$f")" ] && continue
    case "$(basename "$f")" in *-slow-*) continue ;; esac # a whole slow input: minimizing would rerun it for minutes
    LSAN_OPTIONS=suppressions=fuzz/lsan.supp $B/fuzz_$name -minimize_crash=1 -runs=20000 -max_total_time=30 -timeout=10 -rss_limit_mb=4096 \
      -exact_artifact_path="$crashes/min-$(basename "$f")" "$f" >"$crashes/min-$(basename "$f").log" 2>&1 || true
  done
  local new=$((${#files[@]} - before))
  if [ $new -gt 0 ]; then found=1; fi
  if [ "$fork_jobs" -gt 0 ]; then
    summary+=("fuzz_$name: $runs runs in $tries run(s) of $jobs job(s) (-fork=$fork_jobs), execs/s ${eps[*]}, $cov; $tmo job(s) ended by a timeout; $slow slow input(s) run once from $B/slow-$name/")
  else
    summary+=("fuzz_$name: $runs runs in $tries process(es), execs/s ${eps[*]}, $cov; $slow slow input(s) run once from $B/slow-$name/")
  fi
  if [ -n "$share" ]; then summary+=("  $share"); fi
  summary+=("  crashes: $new new, ${#files[@]} in $crashes/ (minimized: min-*)")
  for f in "${files[@]}"; do summary+=("    $f"); done
  return 0
}
# only this run's logs: once build-fuzz/ is built, "fuzz.sh N tile" and "fuzz.sh N ptx" may run at once (each
# has its own corpus, crashes and logs)
case "$which" in both) rm -f $B/fuzz-*.log ;; *) rm -f "$B/fuzz-$which-"*.log ;; esac
[ "$which" = ptx ] || run_one tile fuzz/tile.dict 65536
[ "$which" = tile ] || run_one ptx fuzz/ptx.dict 262144
echo "== summary"
printf '%s\n' "${summary[@]}"
open=$( (find fuzz/regressions/open -type f 2>/dev/null || true) | wc -l)
if [ "$open" -gt 0 ]; then echo "known open bugs, not seeded: $open input(s) in fuzz/regressions/open/"; fi
exit $found
