#!/bin/sh
# The small CNN of examples/cnn (examples/make_cnn.py: stem, max pool, a residual block,
# a stride-2 stage, global average pooling, a classifier) compiled for mncore2 and l1b
# and run under mnemu --strict, its output against PyTorch's (mnemu --expect); the same
# on 1, 2 and 3 emulator threads; and --expect itself must catch a wrong reference.
#   run.sh BUILD_DIR
set -u
b=$1
here=$(cd "$(dirname "$0")/../.." && pwd)/examples/cnn
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok cnn $1"; }
bad() { fail=$((fail + 1)); echo "FAIL cnn $1: $2"; }
for m in mncore2 l1b; do
    if ! "$b/mncc" "$here/model.onnx" -o "$tmp/$m" --machine "$m" --cache-dir none >"$tmp/err" 2>&1; then
        bad "$m" "$(cat "$tmp/err")"
        continue
    fi
    if "$b/mnemu" "$tmp/$m/model.app" --strict --inputs "$here" --expect "$here" >"$tmp/out" 2>&1 && grep -q ": agrees" "$tmp/out"
    then ok "$m $(cut -d: -f2 "$tmp/out" | head -1)"
    else bad "$m" "$(cat "$tmp/out")"; fi
done
# the emulator's threads change nothing: outputs byte for byte and every figure but the wall time, for 1, 2 and
# 3 threads (3 parts that do not split the MABs evenly), plain and --strict
for st in "" --strict; do
    for t in 1 2 3; do
        "$b/mnemu" "$tmp/mncore2/model.app" $st --inputs "$here" -o "$tmp/th$t$st" --json --threads $t 2>"$tmp/err" |
            tail -1 | sed 's/"wall_seconds": [0-9.e+-]*//' >"$tmp/th$t$st.json" || bad "threads-$t$st" "$(cat "$tmp/err")"
    done
    if cmp -s "$tmp/th1$st/output_0.pb" "$tmp/th2$st/output_0.pb" && cmp -s "$tmp/th1$st/output_0.pb" "$tmp/th3$st/output_0.pb" &&
        cmp -s "$tmp/th1$st.json" "$tmp/th2$st.json" && cmp -s "$tmp/th1$st.json" "$tmp/th3$st.json" &&
        grep -q '"cycles": [1-9]' "$tmp/th1$st.json"
    then ok "threads-same$st"
    else bad "threads-same$st" "$(cat "$tmp/th1$st.json" "$tmp/th3$st.json")"; fi
done
# a reference off by 1 in its first element is caught
mkdir -p "$tmp/wrong"
/usr/bin/python3 - "$here/output_0.pb" "$tmp/wrong/output_0.pb" <<'PY'
import sys
import onnx
from onnx import numpy_helper as nh
t = nh.to_array(onnx.load_tensor(sys.argv[1])).copy()
t.flat[0] += 1
open(sys.argv[2], "wb").write(nh.from_array(t, "logits").SerializeToString())
PY
"$b/mnemu" "$tmp/mncore2/model.app" --inputs "$here" --expect "$tmp/wrong" >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "DISAGREES" "$tmp/out" && ok expect-catches || bad expect-catches "exit $rc: $(cat "$tmp/out")"
echo "cnn: $pass passed, $fail failed"
[ $fail -eq 0 ]
