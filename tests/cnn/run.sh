#!/bin/sh
# The small CNN of examples/cnn (examples/make_cnn.py: stem, max pool, a residual block,
# a stride-2 stage, global average pooling, a classifier) compiled for mncore2 and l1b
# and run under mnemu --strict, its output against PyTorch's (mnemu --expect); and
# --expect itself must catch a wrong reference.
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
