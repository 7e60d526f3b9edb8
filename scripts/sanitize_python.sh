#!/usr/bin/env bash
# The Python package under ASan+UBSan+LeakSanitizer: the extension and the libtile inside its wheel built
# with the sanitizers into a venv of its own (build/pyvenv-asan), python/tests run with libasan preloaded
# (the interpreter is not instrumented).  CPython leaks on purpose at exit, so LeakSanitizer's reports go to
# files (not the exit status), and only a leak whose allocation stack passes through libtile or the
# extension fails the run; any ASan or UBSan error does.
# Not part of CI (about 10 minutes on 2 cores).  Needs scripts/setup.sh once; extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
venv=$root/build/pyvenv-asan
python=${PYTHON:-python3}
flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -g -O1"
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet numpy pytest
"$venv/bin/python" -m pip install --quiet "$root/python" -C cmake.build-type=Debug -C "cmake.define.CMAKE_C_FLAGS=$flags"
asan=$(cc -print-file-name=libasan.so)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/logs"
cd "$work"
rc=0
LD_PRELOAD=$asan TILE_DEVICE=emu \
  ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:fast_unwind_on_malloc=0:malloc_context_size=30:log_path=$work/logs/asan" \
  LSAN_OPTIONS=exitcode=0 \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$work/logs/ubsan" \
  "$venv/bin/python" -m pytest -q -p no:cacheprovider "$root/python/tests" "$@" || rc=$?
# every report but CPython's own leaks fails: an ASan/UBSan error (pytest fails too), or a leak through tile
"$python" - "$work/logs" <<'PY' || rc=1
import os, re, sys
bad = 0
for name in sorted(os.listdir(sys.argv[1])):
    text = open(os.path.join(sys.argv[1], name), errors="replace").read()
    if "ERROR: AddressSanitizer" in text or "runtime error" in text:
        print(text[:8000], "\n")
        bad += 1
        continue
    for block in re.split(r"\n(?=\S)", text):
        if block.startswith(("Direct leak", "Indirect leak")) and ("libtile" in block or "_tile.abi3" in block):
            print(block[:4000], "\n")
            bad += 1
print(f"sanitize_python: {bad} report(s) from tile's code", file=sys.stderr)
sys.exit(1 if bad else 0)
PY
exit $rc
