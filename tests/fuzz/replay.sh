#!/bin/sh
# make check's replay of the inputs fuzzing once broke (tests/fuzz/regress/TARGET/),
# through the programs a user runs: each must end with a clean error or success (exit
# 0, 1 or 2), never a signal or a sanitizer report.
#   replay.sh BUILD_DIR
set -u
b=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
run() { # run NAME CMD...
    name=$1; shift
    "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ $rc -le 2 ] && ! grep -q 'Sanitizer\|runtime error' "$tmp/err"; then pass=$((pass + 1)); echo "ok replay $name"
    else fail=$((fail + 1)); echo "FAIL replay $name: exit $rc: $(grep -m1 -E 'ERROR|runtime error|error' "$tmp/err")"; fi
}
for f in "$root"/tests/fuzz/regress/onnx/*; do [ -f "$f" ] && run "onnx/$(basename "$f")" "$b/mncc" "$f" -o "$tmp/o" --cache-dir none; done
for f in "$root"/tests/fuzz/regress/vsm/*; do [ -f "$f" ] && run "vsm/$(basename "$f")" "$b/mnemu" --vsm "$f"; done
for f in "$root"/tests/fuzz/regress/app/*; do [ -f "$f" ] && run "app/$(basename "$f")" "$b/mndump" "$f"; done
for f in "$root"/tests/fuzz/regress/config/*; do
    [ -f "$f" ] || continue
    run "config/$(basename "$f")-machine" "$b/mnemu" --vsm /dev/null --machine "$f"
    run "config/$(basename "$f")-preset" "$b/mncc" "$root/tests/golden/ok_cnn.onnx" -o "$tmp/c" --preset "$f" --cache-dir none
    run "config/$(basename "$f")-options" "$b/mncc" "$root/tests/golden/ok_cnn.onnx" -o "$tmp/c" --option-json "$f" --cache-dir none
done
echo "replay: $pass passed, $fail failed"
[ $fail -eq 0 ]
