#!/bin/sh
# GPFNApp end to end: `mncc asm` builds an app from a VSM kernel and its IO.json,
# mnemu runs it on inputs made with numpy and the outputs are checked against numpy;
# flatc decodes every app and must agree with `mndump --json`; corrupt and truncated
# apps must be refused cleanly by mndump and mnemu.
#   run.sh BUILD_DIR
set -u
b=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok $1"; }
bad() { fail=$((fail + 1)); echo "FAIL app $1: $2"; }
py=/usr/bin/python3

# inputs and the parameter
$py - "$tmp" <<'PY'
import sys, numpy as np
from onnx import numpy_helper
d = sys.argv[1]
import os
os.makedirs(d + "/in", exist_ok=True)
x = np.linspace(-3, 3, 512).astype(np.float32)
w = (np.arange(512) % 7 - 3).astype(np.float32) * np.float32(0.25)
open(d + "/in/input_0.pb", "wb").write(numpy_helper.from_array(x, "x").SerializeToString())
open(d + "/axwb.w.pb", "wb").write(numpy_helper.from_array(w, "w").SerializeToString())
open(d + "/bad/input_0.pb" if os.path.isdir(d + "/bad") else d + "/wrong.pb", "wb").write(numpy_helper.from_array(x[:10], "x").SerializeToString())
PY
cp "$here/axwb.vsm" "$here/axwb.io.json" "$here/axpb.vsm" "$here/axpb.io.json" "$here/axpb_pdm.vsm" "$here/axpb_pdm.io.json" "$tmp/"

for k in axpb axwb; do
    if "$b/mncc" asm "$tmp/$k.vsm" --io "$tmp/$k.io.json" --machine l1b -o "$tmp/$k.app" 2>"$tmp/err"; then ok "asm-$k"; else bad "asm-$k" "$(cat "$tmp/err")"; continue; fi
    if "$b/mnemu" "$tmp/$k.app" --inputs "$tmp/in" -o "$tmp/out_$k" 2>"$tmp/err"; then ok "run-$k"; else bad "run-$k" "$(cat "$tmp/err")"; continue; fi
    if $py - "$tmp" "$k" <<'PY'
import sys, numpy as np, onnx
from onnx import numpy_helper
d, k = sys.argv[1], sys.argv[2]
x = numpy_helper.to_array(onnx.load_tensor(d + "/in/input_0.pb"))
y = numpy_helper.to_array(onnx.load_tensor(d + "/out_%s/output_0.pb" % k))
if k == "axpb":
    ref = np.float32(2) * x + np.float32(1)
else:
    w = numpy_helper.to_array(onnx.load_tensor(d + "/axwb.w.pb"))
    ref = (x.astype(np.float64) * w + 1).astype(np.float32)
sys.exit(0 if y.shape == ref.shape and np.array_equal(y, ref) else 1)
PY
    then ok "values-$k"; else bad "values-$k" "emulated output differs from numpy"; fi
    # flatc must decode the app, and agree with mndump --json
    if command -v flatc >/dev/null && flatc --json --raw-binary --defaults-json --strict-json -o "$tmp" "$root/proto/gpfnapp.fbs" -- "$tmp/$k.app" 2>"$tmp/err" &&
        "$b/mndump" --json "$tmp/$k.app" > "$tmp/$k.mndump.json" &&
        $py -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1])) == json.load(open(sys.argv[2])) else 1)' "$tmp/$k.json" "$tmp/$k.mndump.json"; then
        ok "flatc-$k"
    else bad "flatc-$k" "flatc failed or disagrees with mndump --json: $(head -c 200 "$tmp/err")"; fi
done

# host I/O through the PDMs of two groups on mncore2: the app says where, mnemu places and
# reads there, mndump shows it, and the values are those of the DRAM kernel
if "$b/mncc" asm "$tmp/axpb_pdm.vsm" --io "$tmp/axpb_pdm.io.json" --machine mncore2 -o "$tmp/axpb_pdm.app" 2>"$tmp/err" &&
    "$b/mnemu" --strict "$tmp/axpb_pdm.app" --inputs "$tmp/in" -o "$tmp/out_pdm" 2>"$tmp/err" &&
    cmp -s "$tmp/out_pdm/output_0.pb" "$tmp/out_axpb/output_0.pb"; then ok pdm-io; else bad pdm-io "$(cat "$tmp/err")"; fi
"$b/mndump" "$tmp/axpb_pdm.app" > "$tmp/pdm.dump" 2>&1
grep -q "in PDM group 2 at LW 4096" "$tmp/pdm.dump" && grep -q "in PDM group 3 at LW 0" "$tmp/pdm.dump" && ok pdm-mndump ||
    bad pdm-mndump "mndump does not show the PDM placements: $(grep -i pdm "$tmp/pdm.dump" | head -3)"

# --strict: a clean kernel passes, one that leaves output undefined does not
"$b/mnemu" --strict "$tmp/axwb.app" --inputs "$tmp/in" -o "$tmp/out_s" 2>"$tmp/err" && ok strict-clean || bad strict-clean "$(cat "$tmp/err")"
cp "$here/half.vsm" "$tmp/" && "$b/mncc" asm "$tmp/half.vsm" --io "$tmp/axpb.io.json" --machine l1b -o "$tmp/half.app" &&
    "$b/mnemu" "$tmp/half.app" --inputs "$tmp/in" -o "$tmp/out_h" 2>"$tmp/err" && ok lax-half || bad lax-half "$(cat "$tmp/err")"
"$b/mnemu" --strict "$tmp/half.app" --inputs "$tmp/in" -o "$tmp/out_h2" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "strict: output y: element 128 (DRAM long word 1088) was never written" "$tmp/err" && ok strict-undefined-output ||
    bad strict-undefined-output "$(cat "$tmp/err")"

# statistics and the trace-event file
"$b/mnemu" "$tmp/axwb.app" --inputs "$tmp/in" -o "$tmp/out_t" --json --trace "$tmp/trace.json" > "$tmp/stats.json" 2>"$tmp/err" &&
    $py -c '
import json, sys
s = json.load(open(sys.argv[1])); t = json.load(open(sys.argv[2]))
ev = t["traceEvents"]
ok = s["dram_bytes"] == 3 * 256 * 8 and s["lm0_peak_lw"] == 4 and s["lm1_peak_lw"] == 4 and s["insns"]["mv"] == 3 and s["cycles"] >= 4 * s["steps"]
ok = ok and any(e["name"] == "mvp transfer" for e in ev) and all(e["ph"] == "X" and e["dur"] > 0 for e in ev)
sys.exit(0 if ok else 1)' "$tmp/stats.json" "$tmp/trace.json" && ok stats-trace || bad stats-trace "$(cat "$tmp/err" "$tmp/stats.json")"

# the same app on another machine through --machine
"$b/mnemu" "$tmp/axpb.app" --inputs "$tmp/in" -o "$tmp/out_m" --machine mncore2 2>"$tmp/err" && ok machine-override || bad machine-override "$(cat "$tmp/err")"

# an input of the wrong shape is refused with one line
mkdir -p "$tmp/wrong" && mv "$tmp/wrong.pb" "$tmp/wrong/input_0.pb"
"$b/mnemu" "$tmp/axpb.app" --inputs "$tmp/wrong" -o "$tmp/o2" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "does not match input x" "$tmp/err" && ok wrong-input || bad wrong-input "$(cat "$tmp/err")"

# corrupt and truncated apps: exit 1 with a message, never a crash
len=$(wc -c < "$tmp/axwb.app")
crash=0 accepted=0 n=0
for cut in 0 4 8 12 16 40 100 500 1000 2000 $((len - 1)); do
    head -c "$cut" "$tmp/axwb.app" > "$tmp/cut.app"
    "$b/mndump" "$tmp/cut.app" >/dev/null 2>"$tmp/err"; rc=$?
    n=$((n + 1))
    [ $rc -eq 1 ] || { [ $rc -eq 0 ] && accepted=$((accepted + 1)) || crash=$((crash + 1)); }
    "$b/mnemu" "$tmp/cut.app" --inputs "$tmp/in" -o "$tmp/o3" >/dev/null 2>&1; rc=$?
    [ $rc -le 1 ] || crash=$((crash + 1))
done
$py - "$tmp/axwb.app" "$tmp" <<'PY'
import sys, random
data = bytearray(open(sys.argv[1], "rb").read())
rnd = random.Random(7)
for i in range(60):
    d = bytearray(data)
    for _ in range(rnd.randint(1, 4)):
        d[rnd.randrange(len(d))] = rnd.randrange(256)
    open("%s/flip%02d.app" % (sys.argv[2], i), "wb").write(d)
PY
for f in "$tmp"/flip*.app; do
    "$b/mndump" "$f" >/dev/null 2>&1; rc=$?
    [ $rc -le 1 ] || crash=$((crash + 1))
    "$b/mnemu" "$f" --inputs "$tmp/in" -o "$tmp/o4" >/dev/null 2>&1; rc=$?
    [ $rc -le 1 ] || crash=$((crash + 1))
done
[ $crash -eq 0 ] && [ $accepted -eq 0 ] && ok corrupt-apps || bad corrupt-apps "$crash crashes, $accepted truncated files accepted"
"$b/mndump" "$tmp/cut.app" 2>&1 >/dev/null | grep -q "corrupt file\|not a MNAP file\|too short" && ok corrupt-message || bad corrupt-message "$("$b/mndump" "$tmp/cut.app" 2>&1)"

echo "app: $pass passed, $fail failed"
[ $fail -eq 0 ]
