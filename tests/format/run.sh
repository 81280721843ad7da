#!/bin/sh
# Every C file of the tree as clang-format (Debian's, with .clang-format: 120 columns)
# would write it: one check per file.
#   run.sh
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
pass=0 fail=0
if ! command -v clang-format >/dev/null; then
    echo "FAIL format clang-format: not installed (Debian package clang-format; make check installs it)"
    echo "format: 0 passed, 1 failed"
    exit 1
fi
for f in $(find core isa frontend emu planners scheduler emitter driver cmd tests -name '*.[ch]' | sort); do
    if clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL format $f: not as clang-format writes it (run: clang-format -i $f)"
    fi
done
echo "format: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
