#!/usr/bin/env bash
# bench/gpu/pack.sh - pack a prebuilt build for a GPU machine that cannot
# install LLVM 22 and Criterion (the lent device machines reach no package
# registry).  Run here, then carry the folder to the device machine:
#
#   bash bench/gpu/pack.sh                 # builds into build/, writes .gpu-carry/prebuilt.tar.xz (~40 MB)
#   device run, carry [".gpu-carry"]:  bash bench/gpu/run.sh --device cuda --log-dir $OUT
#
# What goes in: build/libtile.so*, build/tile, the test and bench programs,
# the CTest files, and every shared library they load except the C
# library's own (libc, libm, libstdc++, libgcc_s, ...: the device machine's
# are newer), plus the source folder they were built in (the programs find
# kernels/ and stdlib/ there) and the commit.  run.sh unpacks it when the
# build dependencies are missing, links the recorded source folder to the
# checkout if that folder does not exist, and runs the programs with
# LD_LIBRARY_PATH pointing at the carried libraries.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
scripts/build.sh
out=.gpu-carry
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$out" "$stage/lib" "$stage/build/tests" "$stage/build/bench"
progs=(build/tile build/tests/test_* build/bench/*)
for p in "${progs[@]}" build/libtile.so.0; do [ -f "$p" ] && [ -x "$p" ] && ldd "$p"; done | awk '/=>/ {print $3}' | sort -u |
  grep -vE '/(libc|libm|libpthread|libdl|librt|libresolv|libutil|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so' |
  while read -r lib; do cp -L "$lib" "$stage/lib/"; done
cp -P build/libtile.so* "$stage/build/"
cp build/tile build/CTestTestfile.cmake "$stage/build/"
for t in build/tests/test_*; do [ -f "$t" ] && [ -x "$t" ] && cp "$t" "$stage/build/tests/"; done
cp build/tests/CTestTestfile.cmake "$stage/build/tests/"
for b in build/bench/*; do [ -f "$b" ] && [ -x "$b" ] && cp "$b" "$stage/build/bench/"; done
# debug info off the copies (RelWithDebInfo's -g doubles the size; the carry limit is 64 MiB)
find "$stage" -type f \( -name '*.so*' -o -perm -u+x \) -exec strip --strip-debug {} + 2>/dev/null || true
echo "$root" >"$stage/source_dir"
git rev-parse --short HEAD >"$stage/commit" 2>/dev/null || echo unknown >"$stage/commit"
git diff --quiet 2>/dev/null || echo "(with uncommitted changes)" >>"$stage/commit"
tar -C "$stage" -cf - . | xz -T0 -6 >"$out/prebuilt.tar.xz"
mkdir -p .git/info
grep -qx '/.gpu-carry/' .git/info/exclude 2>/dev/null || echo '/.gpu-carry/' >>.git/info/exclude
echo "wrote $out/prebuilt.tar.xz ($(du -h "$out/prebuilt.tar.xz" | cut -f1)), $(ls "$stage/lib" | wc -l) libraries, commit $(head -1 "$stage/commit")"
