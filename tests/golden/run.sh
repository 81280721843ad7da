#!/bin/sh
# Golden tests: every X.onnx here is compiled (with the arguments in X.args, if any)
# and must match X.l3ir.txt (the l3ir.txt it writes) or X.err (its one-line error,
# with exit code 1 and a report.json whose status is "error").
#   run.sh MNCC                 check all
#   run.sh MNCC --regen NAME    rewrite the golden of one model, on purpose
set -u
mncc=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
here=$(cd "$(dirname "$0")" && pwd)
regen=""
[ "${2:-}" = "--regen" ] && regen=${3:-}
if [ "${2:-}" = "--regen" ] && [ -z "$regen" ]; then
    echo "usage: make regen-golden NAME=model_name" >&2
    exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
cd "$here" || exit 2
for m in *.onnx; do
    n=${m%.onnx}
    [ -n "$regen" ] && [ "$regen" != "$n" ] && continue
    args=""
    [ -f "$n.args" ] && args=$(cat "$n.args")
    # shellcheck disable=SC2086
    "$mncc" "$m" -o "$tmp/$n" $args >"$tmp/$n.stdout" 2>"$tmp/$n.stderr"
    rc=$?
    if [ -n "$regen" ]; then
        if [ $rc -eq 0 ]; then cp "$tmp/$n/l3ir.txt" "$n.l3ir.txt"; rm -f "$n.err"
        else sed 's/^mncc: error: //' "$tmp/$n.stderr" > "$n.err"; rm -f "$n.l3ir.txt"; fi
        echo "regenerated golden of $n (exit $rc)"
        pass=$((pass + 1))
        continue
    fi
    why=""
    if [ -f "$n.l3ir.txt" ]; then
        if [ $rc -ne 0 ]; then why="exit $rc: $(cat "$tmp/$n.stderr")"
        elif ! cmp -s "$n.l3ir.txt" "$tmp/$n/l3ir.txt"; then why="l3ir.txt differs: $(diff "$n.l3ir.txt" "$tmp/$n/l3ir.txt" | head -5)"
        elif ! grep -q '"status":[[:space:]]*"ok"' "$tmp/$n/report.json"; then why="report.json status is not ok"
        fi
    elif [ -f "$n.err" ]; then
        got=$(sed 's/^mncc: error: //' "$tmp/$n.stderr")
        if [ $rc -ne 1 ]; then why="exit $rc, expected 1: $got"
        elif [ "$(wc -l < "$tmp/$n.stderr")" -ne 1 ]; then why="error is not one line: $got"
        elif [ "$got" != "$(cat "$n.err")" ]; then why="error differs: got '$got', expected '$(cat "$n.err")'"
        elif [ -f "$tmp/$n/l3ir.txt" ]; then why="a failed compile left l3ir.txt"
        elif ! grep -q '"status":[[:space:]]*"error"' "$tmp/$n/report.json"; then why="report.json does not record the error"
        fi
    else
        why="no golden file; run: make regen-golden NAME=$n"
    fi
    if [ -z "$why" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL golden $n: $why"; fi
done
echo "golden: $pass passed, $fail failed"
[ $fail -eq 0 ]
