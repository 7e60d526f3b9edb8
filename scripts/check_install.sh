#!/usr/bin/env bash
# Install build/ into a temporary prefix and build a program against it twice:
# with pkg-config and with CMake's find_package(tile).  Both must compile a kernel.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install build --prefix "$prefix" >/dev/null
test -x "$prefix/bin/tile"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
cc tests/install/consumer.c $(pkg-config --cflags --libs tile) -o "$prefix/consumer-pc"
LD_LIBRARY_PATH="$prefix/lib" "$prefix/consumer-pc"
cmake -S tests/install -B "$prefix/consumer-build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/consumer-build" >/dev/null
LD_LIBRARY_PATH="$prefix/lib" "$prefix/consumer-build/consumer"
echo "install check: pkg-config and find_package(tile) consumers built and ran"
