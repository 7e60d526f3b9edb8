#!/bin/sh
# check-generated.sh - run the generator's own tests (test/generate_test.py),
# regenerate src/ from grammar.js and fail when the committed files differ
# (run by hand or in a job that has node; the build and the test suite need
# neither node nor the generator).
#
#   lang/tree-sitter-tile/check-generated.sh            # check
#   lang/tree-sitter-tile/check-generated.sh --write    # regenerate in place
set -eu
here=$(cd "$(dirname "$0")" && pwd)
python3 "$here/test/generate_test.py"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
node "$here/dsl.js" "$here/grammar.js" > "$out/grammar.json"
python3 "$here/generate.py" "$out"
if [ "${1:-}" = "--write" ]; then
    cp "$out/grammar.json" "$out/parser.c" "$out/node-types.json" "$here/src/"
    echo "regenerated $here/src"
    exit 0
fi
status=0
for f in grammar.json parser.c node-types.json; do
    if ! cmp -s "$out/$f" "$here/src/$f"; then
        echo "src/$f is not what grammar.js generates; run $0 --write" >&2
        status=1
    fi
done
[ $status -eq 0 ] && echo "src/ is up to date with grammar.js"
exit $status
