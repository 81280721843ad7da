#!/bin/sh
# The VSM test suite: every tests/vsm/NAME.vsm runs on mnemu and is checked against
#   NAME.out  its exact expected stdout (the program must exit 0), or
#   NAME.err  a substring (the file's first line) that must appear in stderr, with exit 1.
# A first line "# machine: NAME" picks the machine (default l1b).
# Expected values come from docs/vsm.md, not from mnemu: a mismatch is a finding, and
# an .out file is never to be rewritten just to make a test pass.
#   run.sh MNEMU                 run every test
#   run.sh MNEMU --regen NAME    rewrite NAME.out from the current mnemu (on purpose only)
set -u
if [ $# -lt 1 ]; then
    echo "usage: run.sh MNEMU [--regen NAME]" >&2
    exit 2
fi
mnemu=$1
shift
dir=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

machine_of() { # the "# machine: NAME" of a test's first line, else l1b
    m=$(sed -n '1s/^#[[:space:]]*machine:[[:space:]]*\([A-Za-z0-9_.-]*\).*$/\1/p' "$1")
    echo "${m:-l1b}"
}

if [ $# -ge 1 ]; then
    if [ "$1" != --regen ] || [ $# -ne 2 ]; then
        echo "usage: run.sh MNEMU [--regen NAME]" >&2
        exit 2
    fi
    name=${2%.vsm}
    name=${name##*/}
    t=$dir/$name
    if [ ! -f "$t.vsm" ]; then
        echo "run.sh: no test $t.vsm" >&2
        exit 2
    fi
    if [ -f "$t.err" ]; then
        echo "run.sh: $name is an error test ($name.err); there is no .out to rewrite" >&2
        exit 2
    fi
    "$mnemu" --vsm "$t.vsm" --machine "$(machine_of "$t.vsm")" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ $rc -ne 0 ]; then
        echo "run.sh: $name exits $rc: $(head -c 300 "$tmp/err")" >&2
        exit 1
    fi
    cp "$tmp/out" "$t.out"
    echo "rewrote $name.out ($(wc -l <"$t.out") lines)"
    exit 0
fi

pass=0 fail=0
bad() { fail=$((fail + 1)); echo "FAIL vsm $1: $2"; }
for t in "$dir"/*.vsm; do
    [ -f "$t" ] || continue
    name=$(basename "$t" .vsm)
    base=${t%.vsm}
    "$mnemu" --vsm "$t" --machine "$(machine_of "$t")" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ -f "$base.out" ] && [ -f "$base.err" ]; then
        bad "$name" "has both $name.out and $name.err"
    elif [ -f "$base.out" ]; then
        if [ $rc -ne 0 ]; then
            bad "$name" "exit $rc, expected 0: $(head -c 300 "$tmp/err")"
        elif cmp -s "$tmp/out" "$base.out"; then
            pass=$((pass + 1))
            echo "ok $name"
        else
            line=$(diff "$base.out" "$tmp/out" | sed -n '1p;2p;3p;4p' | tr '\n' ' ')
            bad "$name" "stdout differs from $name.out: $line"
        fi
    elif [ -f "$base.err" ]; then
        want=$(head -n 1 "$base.err")
        if [ $rc -ne 1 ]; then
            bad "$name" "exit $rc, expected 1 with \"$want\""
        elif [ -z "$want" ]; then
            bad "$name" "$name.err is empty"
        elif grep -qF -- "$want" "$tmp/err"; then
            pass=$((pass + 1))
            echo "ok $name"
        else
            bad "$name" "stderr lacks \"$want\": $(head -c 300 "$tmp/err")"
        fi
    else
        bad "$name" "neither $name.out nor $name.err"
    fi
done
echo "vsm: $pass passed, $fail failed"
[ $fail -eq 0 ]
