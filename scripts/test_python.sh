#!/usr/bin/env bash
# The Python package: a fresh venv under build/pyvenv, numpy and pytest from
# PyPI, `pip install ./python` (scikit-build-core builds libtile and the
# extension from this checkout in a temporary folder: nothing of build/ is
# reused), then python/tests on the emulator from outside the source tree,
# so the package is found only where pip installed it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
venv=$root/build/pyvenv
python=${PYTHON:-python3}
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc 2>/dev/null || echo 2)}
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet numpy pytest
"$venv/bin/python" -m pip install --quiet "$root/python"
cd "$(mktemp -d)"
TILE_DEVICE=emu "$venv/bin/python" -m pytest -q "$root/python/tests" "$@"
