#!/usr/bin/env bash
# Install build/ into a temporary prefix and check what a user gets:
#   1. both shared libraries export the public tile_* API and nothing else,
#      and libtile_rt needs no LLVM (nor xxHash);
#   2. a program builds against the install with pkg-config (tile) and with
#      CMake's find_package(tile) (tile::tile), and compiles a kernel;
#   3. a `tile aot` export builds with `pkg-config --libs tile-rt` alone and
#      runs on the emulator, and a find_package(tile) consumer of tile::rt builds.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
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
cc -std=c17 -I"$prefix" tests/install/aot_main.c "$prefix/add_aot.c" $(pkg-config --cflags --libs tile-rt) -lpthread -o "$prefix/aot-pc"
if ldd "$prefix/aot-pc" | grep -E 'libLLVM|libxxhash|libtile\.so'; then echo "install check: the AOT program loads a compiler library"; exit 1; fi
TILE_DEVICE=emu LD_LIBRARY_PATH="$lib" "$prefix/aot-pc"
cmake -S tests/install -B "$prefix/consumer-build" -DCMAKE_PREFIX_PATH="$prefix" -DAOT_SOURCE="$prefix/add_aot.c" >/dev/null
cmake --build "$prefix/consumer-build" >/dev/null
TILE_DEVICE=emu LD_LIBRARY_PATH="$lib" "$prefix/consumer-build/aot_consumer"
echo "install check: exports are tile_* only, libtile_rt has no LLVM; pkg-config and find_package consumers of tile::tile and tile::rt (a tile aot export) built and ran"
