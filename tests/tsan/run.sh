#!/bin/sh
# ThreadSanitizer over mncc's threads: graphs large enough that the parameter images are
# made on a thread from before Node Simulation on, Node Simulation runs on several
# threads, and Code Emit links parts on workers while it emits, builds the graph's dumps
# on a thread of its own and writes large files in the background; compiles whose disk
# fills mid-way too; and mnemu's threads running the small CNN's program (plain and
# --strict). Any race report fails the check.
#   run.sh MNCC [MNEMU] (-fsanitize=thread builds)
set -u
mncc=$1 mnemu=${2:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok $1"; }
bad() { fail=$((fail + 1)); echo "FAIL tsan $1: $2"; }
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 report_signal_unsafe=0"
/usr/bin/python3 "$root/bench/gen_graph.py" convnet 600 "$tmp/conv.onnx" >/dev/null 2>&1 || bad gen "bench/gen_graph.py convnet failed"
/usr/bin/python3 "$root/bench/gen_graph.py" mlp 400 "$tmp/mlp.onnx" >/dev/null 2>&1 || bad gen "bench/gen_graph.py mlp failed"
/usr/bin/python3 "$root/bench/gen_graph.py" transformer 400 "$tmp/tr.onnx" >/dev/null 2>&1 || bad gen "bench/gen_graph.py transformer failed"
/usr/bin/python3 "$root/tests/tsan/late_tables.py" 680 20 "$tmp/late.onnx" >/dev/null 2>&1 || bad gen "late_tables.py failed"
run() { # name, expected exit, args...
    name=$1 want=$2; shift 2
    "$mncc" "$@" >"$tmp/out" 2>&1
    rc=$?
    if grep -q "ThreadSanitizer" "$tmp/out"; then bad "$name" "$(grep -m1 -A3 'WARNING: ThreadSanitizer' "$tmp/out" | tr '\n' ' ')"
    elif [ $rc -ne "$want" ]; then bad "$name" "exit $rc, expected $want: $(tail -n 1 "$tmp/out")"
    else ok "$name"; fi
}
for m in conv mlp tr; do
    run "$m-3" 0 "$tmp/$m.onnx" -o "$tmp/$m.d" --cache-dir none --preset O2 -O num_threads=3
    run "$m-merge" 0 "$tmp/$m.onnx" -o "$tmp/$m.m" --cache-dir none -O num_threads=2 -O link=merge
done
run late-tables-3 0 "$tmp/late.onnx" -o "$tmp/late.d" --cache-dir none --preset O2 -O num_threads=3 # gather tables made while workers link
run cache-2 0 "$tmp/conv.onnx" -o "$tmp/c.d" --cache-dir "$tmp/cache" -O num_threads=2
run cache-2-again 0 "$tmp/conv.onnx" -o "$tmp/c.d" --cache-dir "$tmp/cache" -O num_threads=2
for f in simulation_result.json model.vsm model.app l3ir.txt; do # the first while the parameter images are made
    MNCC_FAIL_WRITE=$f run "disk-full-$f" 1 "$tmp/mlp.onnx" -o "$tmp/f.d" --cache-dir none -O num_threads=2
done
if [ -n "$mnemu" ]; then
    if "$mncc" "$root/examples/cnn/model.onnx" -o "$tmp/cnn" --cache-dir none >"$tmp/out" 2>&1; then
        for st in "" --strict; do
            "$mnemu" "$tmp/cnn/model.app" $st --inputs "$root/examples/cnn" --expect "$root/examples/cnn" --threads 3 >"$tmp/out" 2>&1
            rc=$?
            if grep -q "ThreadSanitizer" "$tmp/out"; then bad "mnemu-3$st" "$(grep -m1 -A3 'WARNING: ThreadSanitizer' "$tmp/out" | tr '\n' ' ')"
            elif [ $rc -ne 0 ]; then bad "mnemu-3$st" "exit $rc: $(tail -n 1 "$tmp/out")"
            else ok "mnemu-3$st"; fi
        done
    else bad mnemu-compile "$(tail -n 1 "$tmp/out")"; fi
fi
echo "tsan: $pass passed, $fail failed"
[ $fail -eq 0 ]
