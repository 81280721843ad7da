#!/bin/sh
# make fuzz's runner: each libFuzzer harness first replays the inputs that once broke it
# (tests/fuzz/regress/TARGET/), then fuzzes for SECONDS from a corpus seeded with the
# project's own test inputs (kept in BUILD/corpus between runs). A crash, leak, hang or
# sanitizer report fails the target; the input that caused it is left in BUILD/crashes/.
#   run.sh BUILD SECONDS TARGET...
set -u
b=$1 secs=$2
shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
data=/usr/share/libonnx-testdata/data
pass=0 fail=0
mkdir -p "$b/crashes"
seed() { # seed TARGET: copy the seed inputs into the corpus
    c=$b/corpus/$1
    mkdir -p "$c"
    case $1 in
    onnx)
        cp "$root"/tests/golden/*.onnx "$root"/examples/*.onnx "$c/" 2>/dev/null
        # the small models of the ONNX test suite, one file each
        find "$data" -name model.onnx -size -16k 2>/dev/null | sort | head -300 | while read -r m; do
            cp "$m" "$c/$(echo "$m" | sed 's|/|_|g')"
        done ;;
    app)
        # apps from the golden models and the hand-written kernels
        if [ -x "$root/build/mncc" ]; then
            for m in "$root"/tests/golden/ok_*.onnx; do
                d=$(mktemp -d)
                "$root/build/mncc" "$m" -o "$d" --quiet --cache-dir none >/dev/null 2>&1 && [ -f "$d/model.app" ] && cp "$d/model.app" "$c/$(basename "$m" .onnx).app"
                rm -rf "$d"
            done
        fi ;;
    vsm)
        cp "$root"/tests/vsm/*.vsm "$root"/tests/app/*.vsm "$c/" 2>/dev/null
        # and their GPFNBin encodings, for the decoder on raw bytes (the code of the app
        # `mncc asm` makes, taken out by flatc)
        if [ -x "$root/build/mncc" ] && command -v flatc >/dev/null; then
            for v in "$root"/tests/vsm/*.vsm; do
                d=$(mktemp -d)
                "$root/build/mncc" asm "$v" -o "$d/k.app" >/dev/null 2>&1 &&
                    flatc --json --strict-json --raw-binary -o "$d" "$root/proto/gpfnapp.fbs" -- "$d/k.app" 2>/dev/null &&
                    /usr/bin/python3 -c 'import json,sys; open(sys.argv[2], "wb").write(bytes(json.load(open(sys.argv[1]))["program"]["code"]))' \
                        "$d/k.json" "$c/$(basename "$v" .vsm).vsmb" 2>/dev/null
                rm -rf "$d"
            done
        fi ;;
    config) cp "$root"/presets/*.json "$root"/presets/machines/*.json "$c/" 2>/dev/null ;;
    esac
}
for t in "$@"; do
    h=$b/fuzz_$t
    if [ ! -x "$h" ]; then
        fail=$((fail + 1)); echo "FAIL fuzz $t: no harness $h"; continue
    fi
    reg=$root/tests/fuzz/regress/$t
    if [ -d "$reg" ] && [ -n "$(ls -A "$reg")" ]; then
        if "$h" -rss_limit_mb=3000 "$reg"/* >"$b/$t.replay.log" 2>&1; then echo "ok fuzz $t: $(ls "$reg" | wc -l) regression inputs replayed"
        else fail=$((fail + 1)); echo "FAIL fuzz $t: a regression input fails again: $(grep -m1 -E 'ERROR|SUMMARY' "$b/$t.replay.log")"; continue; fi
    fi
    seed "$t"
    "$h" -max_total_time="$secs" -timeout=30 -rss_limit_mb=3000 -max_len=65536 -print_final_stats=1 \
        -artifact_prefix="$b/crashes/$t-" "$b/corpus/$t" >"$b/$t.log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$b/$t.log" | tail -1)
    if [ $rc -eq 0 ]; then
        pass=$((pass + 1)); echo "ok fuzz $t: ${execs:-?} runs in ${secs} s, corpus $(ls "$b/corpus/$t" | wc -l) inputs"
    else
        fail=$((fail + 1)); echo "FAIL fuzz $t: $(grep -m1 -E 'ERROR|SUMMARY|deadly' "$b/$t.log") (input in $b/crashes/, log $b/$t.log)"
    fi
done
echo "fuzz: $pass passed, $fail failed"
[ $fail -eq 0 ]
