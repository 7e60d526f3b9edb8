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
inc=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
if [ ! -f "$inc/Python.h" ]; then
  echo "test_python.sh: $python has no development headers ($inc/Python.h): install python3-dev" >&2
  exit 1
fi
rm -rf "$venv"
"$python" -m venv "$venv" || { echo "test_python.sh: '$python -m venv' failed: install python3-venv" >&2; exit 1; }
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet numpy pytest
"$venv/bin/python" -m pip install --quiet "$root/python"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
TILE_DEVICE=emu "$venv/bin/python" -m pytest -q "$root/python/tests" "$@"
# the launch benchmark, briefly, so it keeps running (its numbers: docs/python.md)
"$venv/bin/python" "$root/bench/python_launch.py" --iters 200 --repeat 1 >/dev/null
