#!/usr/bin/env bash
# ptx_snapshot.sh - the PTX of every shipped kernel and every tests/lang kernel, for sm_80 and sm_90a, into one
# folder, so that a compiler change meant to leave the output alone (a compile-time trim, a refactoring) can be
# shown to: take a snapshot before and one after, and compare the folders.
#
#   scripts/ptx_snapshot.sh [--build DIR] [--arch A]... OUTDIR        # write OUTDIR/<arch>.<path>.ptx
#   scripts/ptx_snapshot.sh --compare BEFORE AFTER                    # diff -r, one line per differing file
#
# Files: kernels/**/*.tile and tests/lang/*.tile (every kernel of a file in one module, as `tile compile` does
# without --kernel), compiled with --no-cache.  Exit status: 0 done (or the folders equal), 1 a compile failed
# (or the folders differ), 2 usage.
set -uo pipefail
cd "$(dirname "$0")/.."
build=build
archs=()
if [ "${1:-}" = --compare ]; then
  [ $# -eq 3 ] || { echo "usage: scripts/ptx_snapshot.sh --compare BEFORE AFTER" >&2; exit 2; }
  if diff -rq "$2" "$3"; then echo "same PTX: $(find "$2" -name '*.ptx' | wc -l) files"; exit 0; fi
  exit 1
fi
while [ $# -gt 1 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --arch) archs+=("$2"); shift 2 ;;
    *) echo "ptx_snapshot.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ $# -eq 1 ] || { echo "usage: scripts/ptx_snapshot.sh [--build DIR] [--arch A]... OUTDIR" >&2; exit 2; }
out=$1
[ ${#archs[@]} -gt 0 ] || archs=(sm_80 sm_90a)
[ -x "$build/tile" ] || { echo "ptx_snapshot.sh: no $build/tile (scripts/build.sh first)" >&2; exit 2; }
mkdir -p "$out"
rc=0
for a in "${archs[@]}"; do
  for f in $(find kernels tests/lang -name '*.tile' | LC_ALL=C sort); do
    n=$(printf '%s' "$f" | tr / _)
    if ! "$build/tile" compile "$f" --arch "$a" --no-cache --emit ptx -o "$out/$a.$n.ptx"; then
      echo "ptx_snapshot.sh: $f ($a) did not compile" >&2
      rc=1
    fi
  done
done
echo "$(find "$out" -name '*.ptx' | wc -l) PTX files in $out"
exit $rc
