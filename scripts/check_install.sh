#!/usr/bin/env bash
# Install build/ into a temporary prefix and check what a user gets:
#   1. both shared libraries export the public tile_* API and nothing else,
#      and libtile_rt needs no LLVM (nor xxHash);
#   2. a program builds against the install with pkg-config (tile) and with
#      CMake's find_package(tile) (tile::tile), and compiles a kernel;
#   3. a `tile aot` export builds with `pkg-config --libs tile-rt` alone and
#      runs on the emulator, and a find_package(tile) consumer of tile::rt builds;
#      the export and a tile.h client build as C99, C11 and C17 with -Wall
#      -Wextra -Wpedantic -Werror, and a C++ program (tests/install/consumer_cxx.c, C that is also C++, compiled with c++ -x c++:
#      tile.h and the export's header, C++11 to C++20, same flags) builds and
#      runs on the emulator when c++ is installed (else the summary says it
#      did not run);
#   4. the install is relocatable: moved to another folder and run with a bare
#      environment (env -i, no LD_LIBRARY_PATH) from outside the source tree,
#      bin/tile finds libtile through its RUNPATH, imports of the standard
#      library resolve to the moved prefix's share/tile/stdlib (a marker
#      function added there must be found), a copy of gemm.tile compiles, and
#      a pkg-config client prints the gemm.tile the library resolved, which
#      must be the moved prefix's (the source tree still exists here, so a
#      library that fell back to it would be caught), and checks tile_gemm on
#      the emulator against a float64 loop.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$(pwd -P)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
cmake --install build --prefix "$prefix" >/dev/null
test -x "$prefix/bin/tile"
lib=$(ls -d "$prefix"/lib*/ | head -n 1)
for so in libtile.so libtile_rt.so; do
  test -e "$lib/$so" || { echo "install check: $so is not installed"; exit 1; }
  leaked=$(nm -D --defined-only "$lib/$so" | awk '{print $3}' | grep -v '^tile_' || true)
  if [ -n "$leaked" ]; then echo "install check: $so exports non-API symbols:"; echo "$leaked" | head; exit 1; fi
done
if ldd "$lib/libtile_rt.so" | grep -E 'libLLVM|libxxhash'; then echo "install check: libtile_rt.so depends on a compiler library"; exit 1; fi
export PKG_CONFIG_PATH="$lib/pkgconfig"
cc tests/install/consumer.c $(pkg-config --cflags --libs tile) -o "$prefix/consumer-pc"
LD_LIBRARY_PATH="$lib" "$prefix/consumer-pc"
cmake -S tests/install -B "$prefix/consumer-build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/consumer-build" >/dev/null
LD_LIBRARY_PATH="$lib" "$prefix/consumer-build/consumer"
# an ahead-of-time export, linked with the runtime alone
TILE_CACHE_DIR="$prefix/cache" LD_LIBRARY_PATH="$lib" "$prefix/bin/tile" aot kernels/add.tile --kernel add -o "$prefix/add_aot" >/dev/null
cc -std=c17 -I"$prefix" tests/install/aot_main.c "$prefix/add_aot.c" $(pkg-config --cflags --libs tile-rt) -o "$prefix/aot-pc"
if ldd "$prefix/aot-pc" | grep -E 'libLLVM|libxxhash|libtile\.so'; then echo "install check: the AOT program loads a compiler library"; exit 1; fi
TILE_DEVICE=emu LD_LIBRARY_PATH="$lib" "$prefix/aot-pc"
# the public header and the export as C99/C11/C17 with -Wpedantic -Werror, and from C++ when a C++ compiler is installed
for std in c99 c11 c17; do
  cc -std=$std -Wall -Wextra -Wpedantic -Werror $(pkg-config --cflags tile-rt) -I"$prefix" -c "$prefix/add_aot.c" -o "$prefix/add_aot.o"
  cc -std=$std -Wall -Wextra -Wpedantic -Werror $(pkg-config --cflags tile) -c tests/install/consumer.c -o "$prefix/consumer.o"
done
if command -v c++ >/dev/null 2>&1; then
  for std in c++11 c++14 c++17 c++20; do
    c++ -x c++ -std=$std -Wall -Wextra -Wpedantic -Werror -I"$prefix" tests/install/consumer_cxx.c -x none "$prefix/add_aot.o" \
      $(pkg-config --cflags --libs tile-rt) -o "$prefix/consumer-cpp"
    LD_LIBRARY_PATH="$lib" "$prefix/consumer-cpp" >/dev/null
  done
  cxx_result="a C++ consumer (tile.h and the export's header, C++11 to C++20, -Wpedantic -Werror) built and ran"
else
  cxx_result="the C++ consumer was NOT RUN: no c++ compiler"
fi
# the build tree's own tile-rt.pc: the build's libraries and the source tree's headers (it pointed above the build tree)
cc -std=c17 -I"$prefix" tests/install/aot_main.c "$prefix/add_aot.c" $(PKG_CONFIG_PATH="$src/build" pkg-config --cflags --libs tile-rt) \
  -o "$prefix/aot-build-pc"
TILE_DEVICE=emu LD_LIBRARY_PATH="$src/build" "$prefix/aot-build-pc"
cmake -S tests/install -B "$prefix/consumer-build" -DCMAKE_PREFIX_PATH="$prefix" -DAOT_SOURCE="$prefix/add_aot.c" >/dev/null
cmake --build "$prefix/consumer-build" >/dev/null
TILE_DEVICE=emu LD_LIBRARY_PATH="$lib" "$prefix/consumer-build/aot_consumer"

# 4. move the prefix; from here on nothing may point into the source tree or the old prefix
moved="$work/elsewhere/tile-moved"
mkdir -p "$work/elsewhere" "$work/home" "$work/run"
mv "$prefix" "$moved"
moved=$(cd "$moved" && pwd -P)
cache_var() { sed -n "s/^$1:[A-Z]*=//p" build/CMakeCache.txt; }
libdir=$(cache_var CMAKE_INSTALL_LIBDIR) datadir=$(cache_var CMAKE_INSTALL_DATADIR) bindir=$(cache_var CMAKE_INSTALL_BINDIR)
datadir=${datadir:-$(cache_var CMAKE_INSTALL_DATAROOTDIR)} # GNUInstallDirs leaves DATADIR empty: it follows DATAROOTDIR
lib="$moved/$libdir"
runpath="\$ORIGIN/$(realpath -m --relative-to="/$bindir" "/$libdir")"
if ! readelf -d "$moved/$bindir/tile" | grep -E '\(RUNPATH\)' | grep -qF "[$runpath]"; then
  echo "install check: bin/tile has no RUNPATH $runpath:"; readelf -d "$moved/$bindir/tile" | grep -E 'RPATH|RUNPATH' || true; exit 1
fi
bare() { (cd "$work/run" && env -i PATH=/usr/bin:/bin HOME="$work/home" "$@"); }
bare "$moved/$bindir/tile" --version >/dev/null || { echo "install check: the moved bin/tile does not start without LD_LIBRARY_PATH"; exit 1; }
# the standard library is the moved prefix's: a marker function only it has
data="$moved/$datadir/tile"
test -f "$data/stdlib/math.tile" || { echo "install check: $data/stdlib/math.tile is not installed"; exit 1; }
printf '\nfn install_check_marker(x) {\n    return x + 1.0;\n}\n' >>"$data/stdlib/math.tile"
if grep -q install_check_marker "$src/stdlib/math.tile"; then echo "install check: the source tree's math.tile has the marker"; exit 1; fi
cat >"$work/run/marker.tile" <<'TILE'
import "math.tile";
kernel k(x: *f32) { store(x + arange(0, 128), install_check_marker(zeros([128], f32))); }
TILE
if ! bare "$moved/$bindir/tile" compile marker.tile -o marker.ptx; then
  echo "install check: the moved bin/tile did not import math.tile from $data/stdlib"; exit 1
fi
cp "$src/kernels/gemm/gemm.tile" "$work/run/gemm.tile"
bare "$moved/$bindir/tile" compile gemm.tile -o gemm.ptx
# a pkg-config client: where the library finds its kernels, and tile_gemm on the emulator
cc -std=c17 tests/install/datadir_client.c $(PKG_CONFIG_PATH="$lib/pkgconfig" pkg-config --cflags --libs tile) \
  -Wl,-rpath,"$lib" -lm -o "$work/run/datadir-client"
resolved=$(bare ./datadir-client)
if [ "$resolved" != "$data/kernels/gemm/gemm.tile" ]; then
  echo "install check: the moved libtile resolves gemm.tile to '$resolved', not '$data/kernels/gemm/gemm.tile'"; exit 1
fi
echo "install check: exports are tile_* only, libtile_rt has no LLVM; pkg-config and find_package consumers of tile::tile and tile::rt (a tile aot export) built and ran;"
echo "  tile.h and the export built as C99/C11/C17 with -Wpedantic -Werror; $cxx_result;"
echo "  moved to $moved and run with env -i from outside the tree: RUNPATH found libtile, stdlib and kernels came from the moved share/tile, tile_gemm on emu matched float64"
