#!/bin/sh
# Command-line behaviour of mncc: exit codes, usage errors, the codegen dir's
# atomicity and stale-artifact rules, determinism, option handling, and both paths
# of the dependency installer (mk/deps.sh).
#   run.sh MNCC
set -u
mncc=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
g=$root/tests/golden
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/xdg" # the Node Simulation cache of these compiles: not the user's
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok $1"; }
bad() { fail=$((fail + 1)); echo "FAIL cli $1: $2"; }
# expect NAME RC CMD...: run, compare the exit code, keep stdout/stderr in $tmp/out, $tmp/err
expect() {
    name=$1 want=$2; shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ $rc -eq "$want" ]; then ok "$name"; else bad "$name" "exit $rc, expected $want: $(head -c 300 "$tmp/err")"; fi
}
json_status() { /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"])' "$1" 2>/dev/null; }

expect version 0 "$mncc" --version
grep -q '^mncc [0-9]' "$tmp/out" || bad version-text "$(cat "$tmp/out")"
expect help 0 "$mncc" --help
grep -q 'usage: mncc' "$tmp/out" && grep -q 'fold_max_elems' "$tmp/out" || bad help-text "no usage or option table"
expect list-ops 0 "$mncc" --list-ops
grep -q '^Conv ' "$tmp/out" || bad list-ops-text "Conv missing"
"$mncc" --list-ops | tail -n +2 | sed -E 's/^([^ ]+) +([^ ]+) +(.*)$/| \1 | \2 | \3 |/' > "$tmp/ops"
if grep -qxF -f "$tmp/ops" "$root/docs/ops.md" && [ "$(grep -cxF -f "$tmp/ops" "$root/docs/ops.md")" -eq "$(wc -l < "$tmp/ops")" ]; then
    ok docs-op-table
else bad docs-op-table "docs/ops.md's op table differs from mncc --list-ops"; fi
expect no-args 2 "$mncc"
expect no-output-dir 2 "$mncc" "$g/ok_cnn.onnx"
expect unknown-flag 2 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/d" --frobnicate
expect bad-option-key 2 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/d" -O nosuch=1
grep -q 'valid options: fold_max_elems' "$tmp/err" || bad bad-option-key-text "$(cat "$tmp/err")"
expect bad-option-value 2 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/d" -O fold_max_elems=lots
expect bad-input-shape-syntax 2 "$mncc" "$g/ok_mlp.onnx" -o "$tmp/d" --input-shape x=2,a
expect bad-dump-pass 2 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/d" --dump-after nosuchpass
expect missing-model 1 "$mncc" "$tmp/nope.onnx" -o "$tmp/d"
[ "$(wc -l < "$tmp/err")" -eq 1 ] || bad missing-model-oneline "$(cat "$tmp/err")"
expect input-shape-unknown-name 1 "$mncc" "$g/ok_mlp.onnx" -o "$tmp/d" --input-shape y=2,8
grep -q "not a graph input (inputs: x)" "$tmp/err" || bad input-shape-unknown-name-text "$(cat "$tmp/err")"
expect input-shape-conflict 1 "$mncc" "$g/ok_mlp.onnx" -o "$tmp/d" --input-shape x=2,9
grep -q "fixes it at 8" "$tmp/err" || bad input-shape-conflict-text "$(cat "$tmp/err")"
expect input-shape-rank 1 "$mncc" "$g/ok_mlp.onnx" -o "$tmp/d" --input-shape x=2
expect input-shape-twice 2 "$mncc" "$g/ok_mlp.onnx" -o "$tmp/d" --input-shape x=2,8 --input-shape x=3,8

# a successful compile: every artifact, valid JSON, no temporary files left
expect compile-ok 0 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/a" --summary --dump-after static_shapes
for f in model.onnx report.json out.txt out.json l3ir.txt layout.static_shapes.txt; do
    [ -f "$tmp/a/$f" ] || bad artifacts "missing $f"
done
[ "$(json_status "$tmp/a/report.json")" = ok ] || bad report-ok "status is not ok"
/usr/bin/python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/a/out.json" || bad out-json "not JSON"
cmp -s "$g/ok_cnn.onnx" "$tmp/a/model.onnx" || bad model-copy "model.onnx differs from the input"
[ -z "$(ls -A "$tmp/a" | grep '^\.')" ] || bad no-temp-files "$(ls -A "$tmp/a")"
grep -q 'nodes loaded' "$tmp/out" || bad summary "no summary printed"

# determinism: two compiles give identical artifacts apart from wall times
expect compile-again 0 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/b" --dump-after static_shapes
for f in l3ir.txt layout.static_shapes.txt out.txt out.json model.onnx; do
    cmp -s "$tmp/a/$f" "$tmp/b/$f" || bad determinism "$f differs between two runs"
done
# report.json without the run-dependent parts: wall times and the cache's hit counts
strip_report() {
    /usr/bin/python3 -c '
import json, sys
def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items() if k not in ("wall_ms", "cache")}
    if isinstance(o, list):
        return [strip(v) for v in o]
    return o
print(json.dumps(strip(json.load(open(sys.argv[1]))), indent=1, sort_keys=True))' "$1"
}
strip_report "$tmp/a/report.json" > "$tmp/ra"
strip_report "$tmp/b/report.json" > "$tmp/rb"
cmp -s "$tmp/ra" "$tmp/rb" && ok determinism-report || bad determinism-report "report.json differs beyond wall_ms and cache"
for f in simulation_result.json trace.json l3ir_stripped.onnx model.app model.vsm; do
    cmp -s "$tmp/a/$f" "$tmp/b/$f" || bad determinism "$f differs between two runs"
done
# model.app holds the code, not its text: mndump disassembles it into model.vsm's lines
# (model.vsm adds a comment line per node)
"$(dirname "$mncc")/mndump" "$tmp/a/model.app" > "$tmp/dump" 2>&1 && sed -n '/^code (disassembled):$/,$p' "$tmp/dump" | tail -n +2 > "$tmp/dis" &&
    grep -v '^#' "$tmp/a/model.vsm" | cmp -s - "$tmp/dis" && [ -s "$tmp/dis" ] && ok app-disassembly ||
    bad app-disassembly "mndump's disassembly of model.app differs from model.vsm"
# ... and on another machine: another checkout path, home, time zone, locale, one CPU
# instead of all, malloc filling fresh memory. Every file is compared; report.json and
# the dashboard (which embeds it) without their wall times.
mkdir -p "$tmp/m1/m" "$tmp/m2/x/y/m" "$tmp/h1" "$tmp/h2"
cp "$g/ok_cnn.onnx" "$tmp/m1/m/model.onnx" && cp "$g/ok_cnn.onnx" "$tmp/m2/x/y/m/model.onnx"
(cd "$tmp/m1" && env -i PATH=/usr/bin:/bin HOME="$tmp/h1" TZ=UTC LANG=C "$mncc" m/model.onnx -o out --cache-dir none >/dev/null 2>&1) &&
    (cd "$tmp/m2/x/y" && env -i PATH=/usr/bin:/bin HOME="$tmp/h2" TZ=Pacific/Auckland LC_ALL=de_DE.UTF-8 LANG=ja_JP.UTF-8 MALLOC_PERTURB_=165 \
        taskset -c 0 "$mncc" m/model.onnx -o out --cache-dir none >/dev/null 2>&1) || bad determinism-machines "a compile failed"
n=0
for f in $(cd "$tmp/m1/out" && ls); do
    n=$((n + 1))
    case $f in
    report.json) strip_report "$tmp/m1/out/$f" > "$tmp/r1"; strip_report "$tmp/m2/x/y/out/$f" > "$tmp/r2" ;;
    dashboard.html) sed 's/"wall_ms":[-0-9.e+]*//g' "$tmp/m1/out/$f" > "$tmp/r1"; sed 's/"wall_ms":[-0-9.e+]*//g' "$tmp/m2/x/y/out/$f" > "$tmp/r2" ;;
    *) cp "$tmp/m1/out/$f" "$tmp/r1"; cp "$tmp/m2/x/y/out/$f" "$tmp/r2" 2>/dev/null || : > "$tmp/r2" ;;
    esac
    cmp -s "$tmp/r1" "$tmp/r2" || bad determinism-machines "$f differs"
done
[ "$n" -ge 10 ] && [ -f "$tmp/m1/out/model.app" ] && ok determinism-machines || bad determinism-machines "only $n artifacts"

# ---- Node Simulation, schedulers, address planner ----
fig() { # fig REPORT PASS NAME: a figure of a pass in report.json
    /usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print([p for p in r["passes"] if p["name"] == sys.argv[2]][0].get("figures", {}).get(sys.argv[3], ""))' "$@"
}
cachefig() { /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cache"][sys.argv[2]])' "$@"; }
# trace.json: valid, every complete event on a known track, sorted, no overlap on a track
check_trace() {
    /usr/bin/python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
ev = [e for e in t["traceEvents"] if e["ph"] == "X"]
assert ev, "no events"
assert all(e["tid"] in (1, 2, 3) and e["dur"] >= 0 for e in ev), "bad track or duration"
assert [e["ts"] for e in ev] == sorted(e["ts"] for e in ev), "not sorted"
for tid in (1, 2, 3):
    last = 0.0
    for e in ev:
        if e["tid"] != tid: continue
        assert e["ts"] >= last - 1e-6, "overlap on track %d at %s" % (tid, e["name"])  # 1e-6 us: float rounding of cycles / MHz
        last = e["ts"] + e["dur"]
' "$1"
}
m=$g/ok_time_slice.onnx
for s in always_from_dram reuse_consecutive spill_opt auto_recompute_sa; do
    expect "schedule-$s" 0 "$mncc" "$m" -O plan_only=true -o "$tmp/s_$s" --machine tiny --verify -O scheduler=$s
    check_trace "$tmp/s_$s/trace.json" && ok "trace-$s" || bad "trace-$s" "trace.json is not a valid timeline"
done
ra=$(fig "$tmp/s_always_from_dram/report.json" schedule dram_bytes_read)
rs=$(fig "$tmp/s_spill_opt/report.json" schedule dram_bytes_read)
[ -n "$ra" ] && [ -n "$rs" ] && [ "$rs" -lt "$ra" ] && ok spill-opt-reads-less || bad spill-opt-reads-less "spill_opt $rs bytes, always_from_dram $ra"
sa=$(fig "$tmp/s_auto_recompute_sa/report.json" schedule est_cycles)
sb=$(fig "$tmp/s_auto_recompute_sa/report.json" schedule spill_opt_est_cycles)
[ -n "$sa" ] && [ -n "$sb" ] && [ "$sa" -le "$sb" ] && ok sa-not-worse || bad sa-not-worse "auto_recompute_sa $sa cycles, its spill_opt start $sb"
expect sa-again 0 "$mncc" "$m" -O plan_only=true -o "$tmp/s_sa2" --machine tiny -O scheduler=auto_recompute_sa
cmp -s "$tmp/s_auto_recompute_sa/l3ir.txt" "$tmp/s_sa2/l3ir.txt" && ok sa-deterministic || bad sa-deterministic "two runs with one seed differ"
grep -q '^MNCoreForget(' "$tmp/s_spill_opt/l3ir.txt" && grep -q 'loc=LM[01] addr=[0-9]' "$tmp/s_spill_opt/l3ir.txt" &&
    ok l3ir-scheduled || bad l3ir-scheduled "no Forget nodes or LM banks and addresses in l3ir.txt"
# the cache: a second compile reuses every entry; a corrupt one is recomputed; an
# unwritable cache only costs time; threads and concurrent compiles change nothing
c=$tmp/simcache
expect cache-first 0 "$mncc" "$m" -O plan_only=true -o "$tmp/c1" --machine tiny --cache-dir "$c"
expect cache-second 0 "$mncc" "$m" -O plan_only=true -o "$tmp/c2" --machine tiny --cache-dir "$c"
# two entries per distinct node in the default (best) mode: its estimate and its code's timing
n=$((2 * $(fig "$tmp/c2/report.json" node_simulation distinct_signatures)))
[ "$(cachefig "$tmp/c2/report.json" misses)" = 0 ] && [ "$(cachefig "$tmp/c2/report.json" hits)" = "$n" ] &&
    [ "$(cachefig "$tmp/c1/report.json" misses)" = "$n" ] && [ "$(cachefig "$tmp/c1/report.json" hits)" = 0 ] &&
    ok cache-reused || bad cache-reused "second compile: $(cachefig "$tmp/c2/report.json" hits) hits, $(cachefig "$tmp/c2/report.json" misses) misses for $n nodes"
cmp -s "$tmp/c1/simulation_result.json" "$tmp/c2/simulation_result.json" || bad cache-same "cached results differ"
f=$(find "$c" -name '*.json' | sort | head -n 1)
head -c 20 "$f" > "$f.cut" && mv "$f.cut" "$f"
expect cache-corrupt 0 "$mncc" "$m" -O plan_only=true -o "$tmp/c3" --machine tiny --cache-dir "$c"
[ "$(cachefig "$tmp/c3/report.json" corrupt)" -ge 1 ] && cmp -s "$tmp/c1/simulation_result.json" "$tmp/c3/simulation_result.json" &&
    ok cache-corrupt-detected || bad cache-corrupt-detected "corrupt $(cachefig "$tmp/c3/report.json" corrupt)"
: > "$tmp/notadir"
expect cache-unwritable 0 "$mncc" "$m" -O plan_only=true -o "$tmp/c4" --machine tiny --cache-dir "$tmp/notadir/sim"
[ "$(cachefig "$tmp/c4/report.json" write_failures)" -ge 1 ] && cmp -s "$tmp/c1/l3ir.txt" "$tmp/c4/l3ir.txt" &&
    ok cache-unwritable-same || bad cache-unwritable-same "write_failures $(cachefig "$tmp/c4/report.json" write_failures)"
expect threads-3 0 "$mncc" "$m" -O plan_only=true -o "$tmp/c5" --machine tiny --cache-dir none -O num_threads=3
for f in simulation_result.json l3ir.txt trace.json model.app model.vsm l3ir_stripped.onnx; do
    [ -f "$tmp/c1/$f" ] || [ -f "$tmp/c5/$f" ] || continue
    cmp -s "$tmp/c1/$f" "$tmp/c5/$f" || bad threads-same "$f differs with num_threads=3"
done
# graphs big enough for mncc's threads (the parameter images are made ahead on one, the
# linker's workers take parts of the code while the rest is emitted, the graph's dumps
# are built on one, the large files are written in the background): the same files on 1 and 3
/usr/bin/python3 "$root/bench/gen_graph.py" convnet 400 "$tmp/tconv.onnx" >/dev/null 2>&1
/usr/bin/python3 "$root/bench/gen_graph.py" mlp 300 "$tmp/tmlp.onnx" >/dev/null 2>&1
for k in tconv tmlp; do
    expect threads-$k-1 0 "$mncc" "$tmp/$k.onnx" -o "$tmp/$k.1" --cache-dir none -O num_threads=1
    expect threads-$k-3 0 "$mncc" "$tmp/$k.onnx" -o "$tmp/$k.3" --cache-dir none -O num_threads=3
    differ=
    for f in model.app model.vsm l3ir.txt l3ir_stripped.onnx trace.json simulation_result.json; do
        [ -f "$tmp/$k.1/$f" ] && cmp -s "$tmp/$k.1/$f" "$tmp/$k.3/$f" || differ="$differ $f"
    done
    [ -z "$differ" ] && ok threads-$k-same || bad threads-$k-same "differ or missing:$differ"
done
# the parameter images made ahead of Code Emit (num_threads=3 above) are the ones
# Code Emit takes; param_compression=small entropy-codes them too: the same program
# and the same outputs on mnemu from a smaller model.app
[ "$(fig "$tmp/tmlp.3/report.json" param_images params_ahead)" -gt 0 ] 2>/dev/null && ok params-ahead ||
    bad params-ahead "params_ahead $(fig "$tmp/tmlp.3/report.json" param_images params_ahead)"
expect compression-small 0 "$mncc" "$tmp/tmlp.onnx" -o "$tmp/tmlp.s" --cache-dir none -O param_compression=small
/usr/bin/python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import figures; figures.load_with_inputs(sys.argv[2], "tmlp", sys.argv[3])' \
    "$root/bench" "$tmp/tmlp.onnx" "$tmp/tmlp.in"
for v in 3 s; do "$(dirname "$mncc")/mnemu" "$tmp/tmlp.$v/model.app" --inputs "$tmp/tmlp.in" -o "$tmp/tmlp.out$v" >/dev/null 2>&1 || echo "mnemu failed on tmlp.$v"; done
if cmp -s "$tmp/tmlp.3/model.vsm" "$tmp/tmlp.s/model.vsm" && [ -f "$tmp/tmlp.out3/output_0.pb" ] && cmp -s "$tmp/tmlp.out3/output_0.pb" "$tmp/tmlp.outs/output_0.pb" &&
    [ "$(wc -c < "$tmp/tmlp.s/model.app")" -lt "$(wc -c < "$tmp/tmlp.3/model.app")" ]; then ok compression-small-same
else bad compression-small-same "model.app $(wc -c < "$tmp/tmlp.s/model.app") (small) against $(wc -c < "$tmp/tmlp.3/model.app") bytes, or the program or outputs differ"; fi
# a conv net that keeps LM0 all but full of resident parameters: the schedule makes room
# in LM0 for each gather's scratch while it runs, and every node is emitted (its outputs
# are checked against onnxruntime's by make real)
/usr/bin/python3 "$root/bench/gen_graph.py" convnet 3000 "$tmp/c3k.onnx" >/dev/null 2>&1
expect scratch-kept 0 "$mncc" "$tmp/c3k.onnx" -o "$tmp/c3k" --cache-dir none --preset O2
[ "$(fig "$tmp/c3k/report.json" schedule lm0_scratch_max_lw)" -gt 0 ] 2>/dev/null && [ -f "$tmp/c3k/model.app" ] && ok scratch-kept-app ||
    bad scratch-kept-app "$(fig "$tmp/c3k/report.json" schedule lm0_scratch_max_lw) LW of scratch; $(grep -o '"model_app": "[^"]*"' "$tmp/c3k/report.json")"
rm -rf "$tmp/cc"
"$mncc" "$g/ok_transformer.onnx" -O plan_only=true -o "$tmp/p1" --cache-dir "$tmp/cc" -O num_threads=2 >/dev/null 2>&1 & p1=$!
"$mncc" "$g/ok_transformer.onnx" -O plan_only=true -o "$tmp/p2" --cache-dir "$tmp/cc" -O num_threads=2 >/dev/null 2>&1 & p2=$!
wait $p1 && wait $p2 && cmp -s "$tmp/p1/l3ir.txt" "$tmp/p2/l3ir.txt" && cmp -s "$tmp/p1/simulation_result.json" "$tmp/p2/simulation_result.json" &&
    ok cache-concurrent || bad cache-concurrent "two compiles sharing a cache disagree or failed"
expect cache-dir-empty 2 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/ce" --cache-dir ""
sed 's/"l1bm_pe_distribute": 64/"l1bm_pe_distribute": 0.5/' "$root/presets/machines/tiny.json" > "$tmp/slowtree.json"
expect fractional-bandwidth 0 "$mncc" "$g/ok_opset9.onnx" -O plan_only=true -o "$tmp/fb" --machine "$tmp/slowtree.json" --verify
expect sim-best 0 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/sb" -O simulation_mode=best
[ "$(fig "$tmp/sb/report.json" node_simulation nodes_timed_from_code)" -gt 0 ] && grep -q 'node simulation (timed): [1-9]' "$tmp/sb/out.txt" &&
    ok sim-best-timed || bad sim-best-timed "best mode timed no node from its code"
# per-node code is relative to its values; the linker resolves it and model.app lists
# every relocation (mndump prints them); a program text with one left is refused
expect reloc-app 0 "$mncc" "$root/examples/mlp.onnx" -o "$tmp/rl" --input-shape x=4,4,4
"$(dirname "$mncc")/mndump" "$tmp/rl/model.app" | grep -q '^reloc .* -> W1+0$' && ok reloc-listed || bad reloc-listed "no relocation of W1 in model.app"
printf 'lpassa $lm{3}0v $ln0v\n' > "$tmp/rel.vsm"
expect reloc-unlinked 1 "$(dirname "$mncc")/mnemu" --vsm "$tmp/rel.vsm"
grep -q 'relative to a value' "$tmp/err" || bad reloc-unlinked-text "$(cat "$tmp/err")"
expect sim-fast 0 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/sf" -O simulation_mode=fast --verify
[ "$(fig "$tmp/sf/report.json" node_simulation variants)" -lt "$(fig "$tmp/a/report.json" node_simulation variants)" ] && ok sim-fast-fewer ||
    bad sim-fast-fewer "fast mode does not simulate fewer variants"

# faults: a write that fails halfway (a full disk, injected with MNCC_FAIL_WRITE) is one
# error line, leaves no model.app and no temporary file, and report.json says error
for f in model.app l3ir.txt dashboard.html l3ir_stripped.onnx; do
    MNCC_FAIL_WRITE=$f expect "disk-full-$f" 1 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/df"
    [ "$(wc -l < "$tmp/err")" -eq 1 ] && grep -q "cannot write '$tmp/df/$f': No space left on device" "$tmp/err" && [ ! -f "$tmp/df/model.app" ] &&
        [ -z "$(ls -A "$tmp/df" | grep '^\.')" ] && [ "$(json_status "$tmp/df/report.json")" = error ] && ok "disk-full-$f-clean" ||
        bad "disk-full-$f-clean" "$(cat "$tmp/err"); $(ls -A "$tmp/df" | tr '\n' ' ')"
done
MNCC_FAIL_WRITE=layout.time_slice.txt expect disk-full-dump-before 1 "$mncc" "$g/ok_cnn_tiny.onnx" -o "$tmp/dt" --dump-after time_slice
[ ! -f "$tmp/dt/l3ir.txt" ] && [ "$(json_status "$tmp/dt/report.json")" = error ] && ok disk-full-dump-before-stops || bad disk-full-dump-before-stops "$(ls "$tmp/dt")"
MNCC_FAIL_WRITE=compile.stamp expect disk-full-stamp 1 "$mncc" "$g/ok_cnn_tiny.onnx" -o "$tmp/ds" --if-changed
[ ! -f "$tmp/ds/model.app" ] && [ "$(json_status "$tmp/ds/report.json")" = error ] && ok disk-full-stamp-clean || bad disk-full-stamp-clean "$(ls "$tmp/ds")"
mkdir -p "$tmp/own" && touch "$tmp/own/.notes.tmpl" "$tmp/own/.env.tmp" "$tmp/own/.model.app.tmp4242"
expect own-temp-only 0 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/own"
[ "$(ls -A "$tmp/own" | grep '^\.' | sort | tr '\n' ' ')" = ".env.tmp .notes.tmpl " ] && ok own-temp-only-kept || bad own-temp-only-kept "$(ls -A "$tmp/own" | grep '^\.')"
# --if-changed counts the external data files the model reads
mkdir -p "$tmp/ext" && cp "$g/ok_external_data.onnx" "$g/ok_external_data.bin" "$tmp/ext/"
"$mncc" "$tmp/ext/ok_external_data.onnx" -o "$tmp/exo" --if-changed --quiet
expect ext-same 0 "$mncc" "$tmp/ext/ok_external_data.onnx" -o "$tmp/exo" --if-changed
grep -q "is up to date" "$tmp/err" && ok ext-same-skipped || bad ext-same-skipped "$(cat "$tmp/err")"
printf 'X' | dd of="$tmp/ext/ok_external_data.bin" bs=1 seek=17 conv=notrunc 2>/dev/null
expect ext-changed 0 "$mncc" "$tmp/ext/ok_external_data.onnx" -o "$tmp/exo" --if-changed
grep -q "is up to date" "$tmp/err" && bad ext-changed-recompiled "an edit of the external data was not noticed" || ok ext-changed-recompiled
MNCC_FAIL_WRITE=report.json expect disk-full-report 1 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/dr"
[ ! -f "$tmp/dr/report.json" ] && [ ! -f "$tmp/dr/model.app" ] && ok disk-full-report-absent || bad disk-full-report-absent "$(ls -A "$tmp/dr")"
expect disk-full-then-ok 0 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/df"
[ "$(json_status "$tmp/df/report.json")" = ok ] && [ -f "$tmp/df/model.app" ] && ok disk-full-recovers || bad disk-full-recovers "second compile"
# a compile killed at any moment (SIGKILL) leaves no half-written model.app, and the
# next compile into the same directory succeeds and clears the litter
kill_args="$root/examples/mlp.onnx --input-shape x=64,4,4 --cache-dir none -O scheduler=auto_recompute_sa -O sa_steps=20000 -O simulation_mode=best"
for delay in 0.05 0.2 0.4 0.8; do
    "$mncc" $kill_args -o "$tmp/kill" >/dev/null 2>&1 & kp=$!
    sleep $delay; kill -KILL $kp 2>/dev/null; wait $kp 2>/dev/null
    if [ -f "$tmp/kill/model.app" ] && ! "$(dirname "$mncc")/mndump" "$tmp/kill/model.app" >/dev/null 2>&1; then bad "sigkill-$delay" "a broken model.app was left"
    else ok "sigkill-$delay"; fi
    [ "$(json_status "$tmp/kill/report.json" 2>/dev/null)" = ok ] && [ ! -f "$tmp/kill/model.app" ] && bad "sigkill-$delay-report" "report ok without model.app"
done
touch "$tmp/kill/.model.app.tmp99999"
expect sigkill-recompile 0 "$mncc" $kill_args -o "$tmp/kill"
[ "$(json_status "$tmp/kill/report.json")" = ok ] && [ -f "$tmp/kill/model.app" ] && [ -z "$(ls -A "$tmp/kill" | grep '^\.')" ] && ok sigkill-recompile-clean || bad sigkill-recompile-clean "$(ls -A "$tmp/kill")"

# a failed compile into the same directory removes the stale artifacts
expect compile-fail-same-dir 1 "$mncc" "$g/bad_shape_mismatch.onnx" -o "$tmp/a"
[ ! -f "$tmp/a/l3ir.txt" ] && [ ! -f "$tmp/a/layout.static_shapes.txt" ] && ok stale-removed || bad stale-removed "old artifacts left"
[ "$(json_status "$tmp/a/report.json")" = error ] && ok report-error || bad report-error "status is not error"
grep -q 'cannot be broadcast' "$tmp/a/out.txt" && ok log-error || bad log-error "out.txt lacks the error"

# an output directory that cannot be created
touch "$tmp/file"
expect unwritable-dir 1 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/file/sub"
grep -q "cannot create output directory" "$tmp/err" || bad unwritable-dir-text "$(cat "$tmp/err")"

# the memory limit turns a large model into a clean error
/usr/bin/python3 - "$tmp/big.onnx" <<'PY'
import sys, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
w = numpy_helper.from_array(np.zeros((1024, 1024), np.float32), "w")
g = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "big",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1024, 1024])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1024, 1024])], [w])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
PY
expect memory-limit 1 "$mncc" "$tmp/big.onnx" -o "$tmp/m" -O memory_limit_mb=2
grep -q "memory limit" "$tmp/err" || bad memory-limit-text "$(cat "$tmp/err")"
expect memory-limit-enough 0 "$mncc" "$tmp/big.onnx" -o "$tmp/m" -O memory_limit_mb=64
# ... and counts the whole heap, not only the arena: code text and programs too (a
# 300-node generated conv net's code: its passes before Code Emit take under 2 MiB, its
# code more than 4, its BatchNormalizations folded into the convolutions)
/usr/bin/python3 "$root/bench/gen_graph.py" convnet 300 "$tmp/convnet300.onnx" >/dev/null 2>&1
expect memory-limit-emit 1 "$mncc" "$tmp/convnet300.onnx" -o "$tmp/m" -O memory_limit_mb=3 -O simulation_mode=fast --cache-dir none
grep -q "exceeded the memory limit in emit" "$tmp/err" && [ ! -f "$tmp/m/model.app" ] && [ "$(json_status "$tmp/m/report.json")" = error ] &&
    ok memory-limit-emit-clean || bad memory-limit-emit-clean "$(cat "$tmp/err"; ls "$tmp/m")"

# nesting without bound (graphs in If attributes, sequence types in sequence types) is
# refused before protobuf-c's recursive decoder sees it, not a stack overflow
/usr/bin/python3 - "$tmp" <<'PY'
import sys
def varint(n):
    out = b""
    while True:
        b, n = n & 0x7f, n >> 7
        if n: out += bytes([b | 0x80])
        else: return out + bytes([b])
def field(num, payload): return varint(num << 3 | 2) + varint(len(payload)) + payload
def nest(depth, wrap, core=b""):
    # wrap(n) -> [(head, field number, tail)...] around an inner message of n bytes, outermost
    # first; sizes are computed inside out, then the bytes written once (linear, not quadratic)
    sizes, n = [], len(core)
    for _ in range(depth):
        sizes.append(n)
        for head, num, tail in reversed(wrap):
            n = len(head) + len(varint(num << 3 | 2)) + len(varint(n)) + n + len(tail)
    parts, tails = [], []
    for n in reversed(sizes):
        m = n
        lens = []
        for head, num, tail in reversed(wrap):
            lens.append(m)
            m = len(head) + len(varint(num << 3 | 2)) + len(varint(m)) + m + len(tail)
        for (head, num, tail), ln in zip(wrap, reversed(lens)):
            parts.append(head + varint(num << 3 | 2) + varint(ln))
            tails.append(tail)
    return b"".join(parts) + core + b"".join(reversed(tails))
opset = field(8, field(1, b"") + varint(2 << 3) + varint(13))
# GraphProto.node(1) -> NodeProto.attribute(5) -> AttributeProto.g(6), 200000 deep
attr_head = field(1, b"then_branch") + varint(20 << 3) + varint(5)
g = nest(200000, [(b"", 1, b""), (field(4, b"If"), 5, b""), (attr_head, 6, b"")])
open(sys.argv[1] + "/deep_graph.onnx", "wb").write(varint(1 << 3) + varint(8) + field(7, g) + opset)
# TypeProto.sequence_type(4) -> Sequence.elem_type(1), 200000 deep
t = nest(200000, [(b"", 4, b""), (b"", 1, b"")], field(1, varint(1 << 3) + varint(1)))
vi = field(1, b"x") + field(2, t)
open(sys.argv[1] + "/deep_type.onnx", "wb").write(varint(1 << 3) + varint(8) + field(7, field(11, vi)) + opset)
PY
for k in graph type; do
    expect "deep-$k" 1 "$mncc" "$tmp/deep_$k.onnx" -o "$tmp/deep"
    grep -q "nested more than 64 deep" "$tmp/err" || bad "deep-$k-text" "$(cat "$tmp/err")"
done

# machine descriptions: by name, by path, and clean errors for bad ones
expect machine-tiny 0 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/mt" --machine tiny -O plan_only=true
grep -q '"name":[[:space:]]*"tiny"' "$tmp/mt/report.json" || bad machine-in-report "report.json does not name the machine"
expect machine-unknown 2 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/mu" --machine nosuchmachine
grep -q "unknown machine 'nosuchmachine'.*machines: l1b mncore2 tiny" "$tmp/err" || bad machine-unknown-text "$(cat "$tmp/err")"
expect machine-missing-file 1 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/mu" --machine "$tmp/nosuch.json"
grep -q "cannot read" "$tmp/err" || bad machine-missing-file-text "$(cat "$tmp/err")"
sed 's/"clock_mhz": 750/"clock_mhz": 750, "clock_ghz": 1/' "$root/presets/machines/tiny.json" > "$tmp/badkey.json"
expect machine-bad-key 1 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/mb" --machine "$tmp/badkey.json"
grep -q "unknown key 'clock_ghz'" "$tmp/err" || bad machine-bad-key-text "$(cat "$tmp/err")"
sed 's/"mab_per_l1b": 4/"mab_per_l1b": -4/' "$root/presets/machines/tiny.json" > "$tmp/badval.json"
expect machine-bad-value 1 "$root/build/mnemu" --vsm /dev/null --machine "$tmp/badval.json"
grep -q "hierarchy.mab_per_l1b' must be an integer in" "$tmp/err" || bad machine-bad-value-text "$(cat "$tmp/err")"
sed 's/"lm0": 64,//' "$root/presets/machines/tiny.json" > "$tmp/missing.json"
expect machine-missing-key 1 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/mm" --machine "$tmp/missing.json"
grep -q "missing key 'memory_lw.lm0'" "$tmp/err" || bad machine-missing-key-text "$(cat "$tmp/err")"

# presets and option files: precedence (command line > option file > preset, whatever
# the order), sources in report.json, long flags, errors that list the valid values
opt_of() { /usr/bin/python3 -c 'import json,sys; o=json.load(open(sys.argv[1]))["options"][sys.argv[2]]; print(o["value"], "|", o["source"])' "$1" "$2"; }
expect preset-O3 0 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/p3" --preset O3
opt_of "$tmp/p3/report.json" scheduler | grep -q '^auto_recompute_sa | preset .*/presets/O3.json$' && ok preset-source ||
    bad preset-source "$(opt_of "$tmp/p3/report.json" scheduler)"
opt_of "$tmp/p3/report.json" simulation_mode | grep -q '^default | preset .*/presets/O2.json$' && ok preset-base-source ||
    bad preset-base-source "$(opt_of "$tmp/p3/report.json" simulation_mode)"
printf '{"scheduler": "spill_opt", "seed": 5}\n' > "$tmp/opts.json"
expect preset-override 0 "$mncc" -O scheduler=reuse_consecutive "$g/ok_cnn.onnx" --option-json "$tmp/opts.json" -o "$tmp/po" --preset O3 --sa-steps 7
[ "$(opt_of "$tmp/po/report.json" scheduler)" = "reuse_consecutive | command line" ] &&
    [ "$(opt_of "$tmp/po/report.json" seed)" = "5 | option file $tmp/opts.json" ] &&
    [ "$(opt_of "$tmp/po/report.json" sa_steps)" = "7 | command line" ] &&
    [ "$(opt_of "$tmp/po/report.json" fold_max_elems)" = "4194304 | default" ] && ok preset-precedence ||
    bad preset-precedence "$(opt_of "$tmp/po/report.json" scheduler); $(opt_of "$tmp/po/report.json" seed)"
expect preset-debug 0 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/pd" --preset debug
[ -f "$tmp/pd/layout.emit.txt" ] && [ -f "$tmp/pd/layout.load.txt" ] && [ "$(opt_of "$tmp/pd/report.json" verify)" = "True | preset $root/presets/debug.json" ] &&
    ok preset-debug-dumps || bad preset-debug-dumps "$(ls "$tmp/pd")"
expect preset-unknown 2 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/pu" --preset O9
grep -q "preset 'O9' not found" "$tmp/err" || bad preset-unknown-text "$(cat "$tmp/err")"
printf '{"options": {"link": "glue"}}\n' > "$tmp/badpreset.json"
expect preset-bad-value 2 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/pb" --preset "$tmp/badpreset.json"
grep -q "badpreset.json: option link: 'glue' is not one of concat|merge" "$tmp/err" || bad preset-bad-value-text "$(cat "$tmp/err")"
printf '{"nosuch": 1}\n' > "$tmp/badopts.json"
expect option-json-bad-key 2 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/pb" --option-json "$tmp/badopts.json"
grep -q "unknown option 'nosuch'; valid options: fold_max_elems" "$tmp/err" || bad option-json-bad-key-text "$(cat "$tmp/err")"
expect long-flag-bool-value 2 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/pb" --verify=maybe
expect long-flag-needs-value 2 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/pb" --scheduler
expect preset-twice 2 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/pb" --preset O1 --preset O2
mkdir -p "$tmp/pr"
printf '{"options": {"seed": 11}}\n' > "$tmp/pr/sib.json"
printf '{"base": "sib.json"}\n' > "$tmp/pr/child.json"
expect preset-relative-base 0 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/prb" --preset "$tmp/pr/child.json"
[ "$(opt_of "$tmp/prb/report.json" seed)" = "11 | preset $tmp/pr/sib.json" ] && ok preset-relative-base-value || bad preset-relative-base-value "$(opt_of "$tmp/prb/report.json" seed)"
printf '{"options": {"seed": 3}, "seed": 4}\n' > "$tmp/mixed.json"
expect option-json-mixed 2 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/pb" --option-json "$tmp/mixed.json"
long=$(printf './%.0s' $(seq 1 800)) # a 1600-character path to the same place
printf '{"out_onnx": "%s/%sin.onnx"}\n' "$tmp" "$long" > "$tmp/long.json"
expect option-json-long 0 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/pl" --option-json "$tmp/long.json"
[ -f "$tmp/in.onnx" ] && [ "$(opt_of "$tmp/pl/report.json" out_onnx | cut -d' ' -f1 | wc -c)" -gt 1600 ] && ok option-json-long-value || bad option-json-long-value "value cut short"
expect dump-after-twice 0 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/da" --dump-after dce --dump-after layout -O dump_after=load
[ -f "$tmp/da/layout.dce.txt" ] && [ -f "$tmp/da/layout.layout.txt" ] && [ -f "$tmp/da/layout.load.txt" ] && ok dump-after-adds-up || bad dump-after-adds-up "$(ls "$tmp/da")"
cp "$g/ok_cnn.onnx" "$tmp/self.onnx"
expect out-onnx-is-model 2 "$mncc" "$tmp/self.onnx" -o "$tmp/pb" -O out_onnx="$tmp/self.onnx"
cmp -s "$g/ok_cnn.onnx" "$tmp/self.onnx" && ok out-onnx-kept-model || bad out-onnx-kept-model "the model was overwritten"
expect if-changed-first 0 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/ic" --if-changed
expect if-changed-again 0 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/ic" --if-changed
grep -q "is up to date" "$tmp/err" && ok if-changed-skips || bad if-changed-skips "$(cat "$tmp/err")"
expect if-changed-option 0 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/ic" --if-changed --seed 9
grep -q "is up to date" "$tmp/err" && bad if-changed-option-recompiles "an option change was not noticed" || ok if-changed-option-recompiles
/usr/bin/python3 "$root/mk/presets_table.py" > "$tmp/presets.md"
if [ "$(grep -cxF -f "$tmp/presets.md" "$root/docs/usage.md")" -eq "$(wc -l < "$tmp/presets.md")" ]; then ok docs-preset-table
else bad docs-preset-table "docs/usage.md's preset table differs from mk/presets_table.py (make readme-presets)"; fi

# dumps: the final graph as ONNX (python3-onnx loads and checks it), zstd-compressed on
# request, and the graph entering the planners at out_onnx=PATH
expect dump-onnx 0 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/do" -O out_onnx="$tmp/do_in.onnx"
/usr/bin/python3 - "$tmp/do/l3ir_stripped.onnx" "$tmp/do_in.onnx" "$g/ok_cnn.onnx" >"$tmp/out" 2>&1 <<'PY' && ok dump-onnx-valid || bad dump-onnx-valid "$(tail -3 "$tmp/out")"
import sys, onnx
m = onnx.load(sys.argv[1]); onnx.checker.check_model(m)
assert {o.domain: o.version for o in m.opset_import}.get("mncore") == 1
assert any(n.domain == "mncore" and n.op_type == "MNCoreDownload" for n in m.graph.node)
docs = {v.name: v.doc_string for v in list(m.graph.value_info) + list(m.graph.input) + list(m.graph.output)}
assert all(d.startswith("mncore:") and "layout=PadLayout" in d and "loc=" in d for d in docs.values()), docs
stripped = [v.name for v in m.graph.input if "data stripped" in v.doc_string]
assert stripped and all(t.name not in stripped for t in m.graph.initializer)
assert all(len(t.raw_data) <= 16 * 8 for t in m.graph.initializer)
assert dict((e.key, e.value) for e in m.metadata_props)["mncore.stripped_constants"] == str(len(stripped))
i = onnx.load(sys.argv[2]); onnx.checker.check_model(i)
src = onnx.load(sys.argv[3])
# the model's nodes, but for its BatchNormalization after a Conv, folded into the Conv's constants (bn_folding)
assert [n.op_type for n in i.graph.node] == [n.op_type for n in src.graph.node if n.op_type != "BatchNormalization"], \
    [n.op_type for n in i.graph.node]
assert all(n.domain == "" for n in i.graph.node) and not any(o.domain == "mncore" for o in i.opset_import)
assert sum(len(t.raw_data) for t in i.graph.initializer) > 0  # not stripped
PY
expect dump-onnx-zst 0 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/dz" --compress-dumps
[ -f "$tmp/dz/l3ir_stripped.onnx.zst" ] && [ ! -f "$tmp/dz/l3ir_stripped.onnx" ] &&
/usr/bin/python3 - "$tmp/dz/l3ir_stripped.onnx.zst" "$tmp/do/l3ir_stripped.onnx" >"$tmp/out" 2>&1 <<'PY' && ok dump-onnx-zst-valid || bad dump-onnx-zst-valid "$(tail -3 "$tmp/out")"
import ctypes, sys, onnx
z = ctypes.CDLL("libzstd.so.1")
z.ZSTD_getFrameContentSize.restype = ctypes.c_ulonglong
z.ZSTD_decompress.restype = ctypes.c_size_t
src = open(sys.argv[1], "rb").read()
n = z.ZSTD_getFrameContentSize(src, len(src))
out = ctypes.create_string_buffer(n)
assert z.ZSTD_decompress(out, n, src, len(src)) == n
assert out.raw == open(sys.argv[2], "rb").read()
onnx.checker.check_model(onnx.load_from_string(out.raw))
PY
expect dump-onnx-bad-path 1 "$mncc" "$g/ok_cnn.onnx" -o "$tmp/db" -O out_onnx="$tmp/nodir/x.onnx"
grep -q "cannot write" "$tmp/err" && [ "$(json_status "$tmp/db/report.json")" = error ] && ok dump-onnx-bad-path-text || bad dump-onnx-bad-path-text "$(cat "$tmp/err")"

# (planning only: some of these models get no program yet, which batch-no-program checks)
po='-O plan_only=true'
# mncc batch: a directory and a list, parallel jobs, shards, up-to-date skips, the
# summary and JUnit files; one failing model does not stop the others
mkdir -p "$tmp/zoo/sub"
cp "$g/ok_cnn.onnx" "$g/ok_opset9.onnx" "$tmp/zoo/" && cp "$g/ok_transformer.onnx" "$g/bad_shape_mismatch.onnx" "$tmp/zoo/sub/"
expect batch-dir 1 "$mncc" batch $po "$tmp/zoo" -o "$tmp/bd" -j 2
batch_check() { # batch_check OUTROOT EXPECTED-NAMES-AND-STATUSES
    /usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys, xml.dom.minidom as x
s = json.load(open(sys.argv[1] + "/summary.json"))
got = " ".join("%s=%s" % (r["name"], r["status"].replace(" ", "_")) for r in s["results"])
assert got == sys.argv[2], got
d = x.parse(sys.argv[1] + "/junit.xml")
cases = d.getElementsByTagName("testcase")
assert [c.getAttribute("name") for c in cases] == [r["name"] for r in s["results"]]
fails = [c for c in cases if c.getElementsByTagName("failure")]
assert d.getElementsByTagName("testsuite")[0].getAttribute("failures") == str(len(fails)) == str(s["failed"])
for c, r in zip(cases, s["results"]):
    f = c.getElementsByTagName("failure")
    assert bool(f) == (r["status"] == "failed") and (not f or f[0].getAttribute("message") == r["error"])
PY
}
batch_check "$tmp/bd" "ok_cnn=ok ok_opset9=ok sub_bad_shape_mismatch=failed sub_ok_transformer=ok" && ok batch-summary || bad batch-summary "see above"
grep -q "cannot be broadcast" "$tmp/bd/junit.xml" && [ "$(json_status "$tmp/bd/sub_ok_transformer/report.json")" = ok ] && ok batch-failure-message || bad batch-failure-message "$(cat "$tmp/bd/junit.xml")"
grep -q 'mncc batch: \[[0-9]/4\] failed sub_bad_shape_mismatch' "$tmp/err" && ok batch-progress-lines || bad batch-progress-lines "$(cat "$tmp/err")"
expect batch-again 1 "$mncc" batch $po "$tmp/zoo" -o "$tmp/bd" -j 2
batch_check "$tmp/bd" "ok_cnn=up_to_date ok_opset9=up_to_date sub_bad_shape_mismatch=failed sub_ok_transformer=up_to_date" && ok batch-up-to-date || bad batch-up-to-date "see above"
expect batch-new-options 1 "$mncc" batch $po "$tmp/zoo" -o "$tmp/bd" --quiet -O scheduler=spill_opt
[ ! -s "$tmp/err" ] && batch_check "$tmp/bd" "ok_cnn=ok ok_opset9=ok sub_bad_shape_mismatch=failed sub_ok_transformer=ok" && ok batch-options-recompile || bad batch-options-recompile "$(cat "$tmp/err")"
[ "$(opt_of "$tmp/bd/ok_cnn/report.json" scheduler)" = "spill_opt | command line" ] && ok batch-options-passed || bad batch-options-passed "$(opt_of "$tmp/bd/ok_cnn/report.json" scheduler)"
expect batch-j1 1 "$mncc" batch $po "$tmp/zoo" -o "$tmp/bj" -j 1 -O scheduler=spill_opt
nd=0
for m in ok_cnn ok_opset9 sub_ok_transformer; do
    for f in l3ir.txt model.app model.vsm l3ir_stripped.onnx; do
        [ -f "$tmp/bj/$m/$f" ] || [ -f "$tmp/bd/$m/$f" ] || continue
        cmp -s "$tmp/bj/$m/$f" "$tmp/bd/$m/$f" || { nd=$((nd + 1)); bad batch-deterministic "$m/$f differs between -j 1 and -j 2"; }
    done
done
[ $nd -eq 0 ] && ok batch-deterministic
printf '# a zoo\nok_cnn.onnx --machine tiny\nok_mlp.onnx --input-shape x=2,8 --name mlp2   # per-model options\n\nok_mlp.onnx --input-shape x=3,8 --scheduler spill_opt --name mlp3\n' > "$tmp/zoo/list.txt"
cp "$g/ok_mlp.onnx" "$tmp/zoo/"
expect batch-list 0 "$mncc" batch $po "$tmp/zoo/list.txt" -o "$tmp/bl"
batch_check "$tmp/bl" "ok_cnn=ok mlp2=ok mlp3=ok" && grep -q '"name":[[:space:]]*"tiny"' "$tmp/bl/ok_cnn/report.json" &&
    [ "$(opt_of "$tmp/bl/mlp3/report.json" scheduler)" = "spill_opt | command line" ] && ok batch-list-options || bad batch-list-options "see above"
printf 'ok_mlp.onnx --name a\nok_cnn.onnx --name a\n' > "$tmp/zoo/dup.txt"
expect batch-list-dup 1 "$mncc" batch $po "$tmp/zoo/dup.txt" -o "$tmp/bu"
grep -q "dup.txt:2: model name 'a' used twice" "$tmp/err" || bad batch-list-dup-text "$(cat "$tmp/err")"
all=""
for k in 1 2 3; do
    "$mncc" batch $po "$tmp/zoo" -o "$tmp/bs$k" --shard $k/3 --quiet >/dev/null 2>&1
    all="$all $(/usr/bin/python3 -c 'import json,sys; print(" ".join(r["name"] for r in json.load(open(sys.argv[1]))["results"]))' "$tmp/bs$k/summary.json")"
done
[ "$(echo $all | tr ' ' '\n' | sort | tr '\n' ' ')" = "ok_cnn ok_mlp ok_opset9 sub_bad_shape_mismatch sub_ok_transformer " ] && ok batch-shards || bad batch-shards "shards hold: $all"
# two batch compiles at once on one cache directory, and one whose cache is on a
# read-only file system: every program as a compile without a cache gives it
mkdir -p "$tmp/bz"
cp "$g/ok_cnn.onnx" "$g/ok_opset9.onnx" "$g/ok_transformer.onnx" "$tmp/bz/"
"$mncc" batch $po "$tmp/bz" -o "$tmp/bz1" -j 2 --quiet --cache-dir "$tmp/bzc" >/dev/null 2>&1 & p1=$!
"$mncc" batch $po "$tmp/bz" -o "$tmp/bz2" -j 2 --quiet --cache-dir "$tmp/bzc" >/dev/null 2>&1 & p2=$!
wait $p1; r1=$?
wait $p2; r2=$?
"$mncc" batch $po "$tmp/bz" -o "$tmp/bz3" --quiet --cache-dir /proc/self/mncc-cache >/dev/null 2>&1; r3=$?
"$mncc" batch $po "$tmp/bz" -o "$tmp/bz4" --quiet --cache-dir none >/dev/null 2>&1; r4=$?
nd=0
for m in ok_cnn ok_opset9 ok_transformer; do
    for k in 1 2 3; do
        for f in l3ir.txt simulation_result.json model.vsm; do
            [ -f "$tmp/bz4/$m/$f" ] || continue
            cmp -s "$tmp/bz$k/$m/$f" "$tmp/bz4/$m/$f" || { nd=$((nd + 1)); bad batch-shared-cache "$m/$f of run $k differs from the compile without a cache"; }
        done
    done
done
[ "$r1$r2$r3$r4" = 0000 ] && [ "$nd" -eq 0 ] && [ "$(cachefig "$tmp/bz3/ok_cnn/report.json" write_failures)" -ge 1 ] && ok batch-shared-cache ||
    bad batch-shared-cache "exits $r1 $r2 $r3 $r4, $nd differ"
# on a terminal: one redrawn status line with the running compile's pass
if command -v script >/dev/null; then
    script -qec "'$mncc' batch -O plan_only=true '$tmp/zoo/list.txt' -o '$tmp/bt' -j 1" /dev/null > "$tmp/out" 2>&1
    grep -q "$(printf '\r\033\\[K')\[[0-3]/3\] 0 failed" "$tmp/out" && grep -q "3 models, 3 compiled" "$tmp/out" && ok batch-terminal || bad batch-terminal "$(tr '\r' '\n' < "$tmp/out" | tail -3)"
    script -qec "'$mncc' '$g/ok_cnn.onnx' -o '$tmp/st'" /dev/null > "$tmp/out" 2>&1
    grep -q "mncc: pass [0-9]*/[0-9]* location" "$tmp/out" && ok single-terminal || bad single-terminal "$(od -c "$tmp/out" | head -3)"
    script -qec "'$mncc' '$g/ok_cnn.onnx' -o '$tmp/st' --quiet" /dev/null > "$tmp/out" 2>&1
    [ ! -s "$tmp/out" ] && ok single-terminal-quiet || bad single-terminal-quiet "$(od -c "$tmp/out" | head -3)"
else bad batch-terminal "no script(1) to run a terminal"; fi
# up to date means the same compiler, model, effective options and machine file: an
# edit to a machine file named by -O, or to a preset's base, compiles again
cp "$root/presets/machines/tiny.json" "$tmp/zm.json"
printf '{"options": {"seed": 2}}\n' > "$tmp/zbase.json"
printf '{"base": "zbase.json", "options": {"sa_steps": 3}}\n' > "$tmp/zchild.json"
"$mncc" batch $po "$tmp/zoo/list.txt" -o "$tmp/bz" -O machine="$tmp/zm.json" --preset "$tmp/zchild.json" --quiet
"$mncc" batch $po "$tmp/zoo/list.txt" -o "$tmp/bz" -O machine="$tmp/zm.json" --preset "$tmp/zchild.json" --quiet
batch_check "$tmp/bz" "ok_cnn=up_to_date mlp2=up_to_date mlp3=up_to_date" && ok batch-stamp-same || bad batch-stamp-same "see above"
sed -i 's/"clock_mhz": 750/"clock_mhz": 500/' "$tmp/zm.json"
"$mncc" batch $po "$tmp/zoo/list.txt" -o "$tmp/bz" -O machine="$tmp/zm.json" --preset "$tmp/zchild.json" --quiet
batch_check "$tmp/bz" "ok_cnn=up_to_date mlp2=ok mlp3=ok" && ok batch-stamp-machine || bad batch-stamp-machine "see above (ok_cnn names its own machine)"
printf '{"options": {"seed": 4}}\n' > "$tmp/zbase.json"
"$mncc" batch $po "$tmp/zoo/list.txt" -o "$tmp/bz" -O machine="$tmp/zm.json" --preset "$tmp/zchild.json" --quiet
batch_check "$tmp/bz" "ok_cnn=ok mlp2=ok mlp3=ok" && ok batch-stamp-base-preset || bad batch-stamp-base-preset "see above"
# names: clashes get a suffix from their own path; --name cannot leave OUTROOT; quotes
mkdir -p "$tmp/zc/a/b" "$tmp/zc/a_b" "$tmp/zc/s p"
cp "$g/ok_cnn.onnx" "$tmp/zc/a/b/c.onnx"; cp "$g/ok_cnn.onnx" "$tmp/zc/a_b/c.onnx"; cp "$g/ok_cnn.onnx" "$tmp/zc/a_b_c.onnx"
ln -s .. "$tmp/zc/a/up"
"$mncc" batch $po "$tmp/zc" -o "$tmp/bc" --quiet
/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"]; n=[x["name"] for x in r]; assert len(r)==3 and len(set(n))==3 and all(x["status"]=="ok" for x in r), n' "$tmp/bc/summary.json" &&
    ok batch-name-clash || bad batch-name-clash "$(cat "$tmp/bc/summary.json")"
cp "$g/ok_cnn.onnx" "$tmp/zc/s p/m#1.onnx"
printf '"s p/m#1.onnx" --name spaced # a comment\n' > "$tmp/zc/q.txt"
expect batch-list-quotes 0 "$mncc" batch $po "$tmp/zc/q.txt" -o "$tmp/bq"
batch_check "$tmp/bq" "spaced=ok" && ok batch-list-quotes-name || bad batch-list-quotes-name "see above"
printf 'a_b_c.onnx --name ..\n' > "$tmp/zc/esc.txt"
expect batch-name-escape 1 "$mncc" batch $po "$tmp/zc/esc.txt" -o "$tmp/be"
grep -q "esc.txt:1: --name needs a name without '/'" "$tmp/err" || bad batch-name-escape-text "$(cat "$tmp/err")"
# a compile that hangs is stopped by --timeout; the others finish
printf 'ok_cnn.onnx\nok_mlp.onnx --input-shape x=2,8 --scheduler auto_recompute_sa --sa-steps 100000000000 --name hang\n' > "$tmp/zoo/hang.txt"
expect batch-timeout 1 "$mncc" batch $po "$tmp/zoo/hang.txt" -o "$tmp/bh" --timeout 2
batch_check "$tmp/bh" "ok_cnn=ok hang=failed" && grep -q "timed out after 2 s" "$tmp/bh/junit.xml" && ok batch-timeout-reported || bad batch-timeout-reported "$(cat "$tmp/bh/junit.xml")"
# SIGTERM stops the running compiles, and the summary is still written
"$mncc" batch $po "$tmp/zoo/hang.txt" -o "$tmp/bk" -j 1 --quiet & bpid=$!
sleep 2; kill -TERM $bpid; wait $bpid; rc=$?
sleep 0.2
[ $rc -eq 143 ] && [ -f "$tmp/bk/summary.json" ] && ! pgrep -f "$tmp/bk/hang" >/dev/null && ok batch-sigterm || bad batch-sigterm "exit $rc; $(pgrep -af "$tmp/bk/hang")"
printf 'ok_cnn.onnx -o %s/escaped\n' "$tmp" > "$tmp/zoo/esc-o.txt"
# a model that gets no program fails the batch, with the reason in the JUnit file
mkdir -p "$tmp/np"
/usr/bin/python3 - "$tmp/np/mod.onnx" <<'PY'
import sys
from onnx import TensorProto, helper
g = helper.make_graph([helper.make_node("Add", ["x", "y"], ["z"])], "mod",  # (8-bit integers: no vector code)
                      [helper.make_tensor_value_info(v, TensorProto.UINT8, [1, 8, 4, 4]) for v in "xy"],
                      [helper.make_tensor_value_info("z", TensorProto.UINT8, [1, 8, 4, 4])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
open(sys.argv[1], "wb").write(m.SerializeToString())
PY
expect batch-no-program 1 "$mncc" batch "$tmp/np" -o "$tmp/bnp" --quiet
batch_check "$tmp/bnp" "mod=failed" && grep -q "no program: the code emitter does not cover" "$tmp/bnp/junit.xml" &&
    ok batch-no-program-reported || bad batch-no-program-reported "$(cat "$tmp/bnp/junit.xml")"
expect batch-list-no-o 1 "$mncc" batch $po "$tmp/zoo/esc-o.txt" -o "$tmp/beo"
grep -q "esc-o.txt:1: '-o' in a LIST" "$tmp/err" && [ ! -d "$tmp/escaped" ] && ok batch-list-no-o-text || bad batch-list-no-o-text "$(cat "$tmp/err")"
expect batch-bad-shard 2 "$mncc" batch $po "$tmp/zoo" -o "$tmp/bx" --shard 4/3
expect batch-no-out 2 "$mncc" batch $po "$tmp/zoo"

# make install: the installed mncc finds its presets and machines without the source
# tree (run from elsewhere, MNCC_PRESETS unset); the man page renders without warnings
bdir=$(dirname "$mncc")
if make -s -C "$root" install PREFIX="$tmp/inst" BUILD="$bdir" ${MNCC_SAN:+SAN=1} >"$tmp/out" 2>&1; then ok install
else bad install "$(tail -5 "$tmp/out")"; fi
cp "$g/ok_cnn.onnx" "$tmp/inst/m.onnx"
(cd / && env -u MNCC_PRESETS "$tmp/inst/bin/mncc" "$tmp/inst/m.onnx" -o "$tmp/inst/out" --preset O2 --machine tiny -O plan_only=true >"$tmp/out" 2>&1) &&
    opt_of "$tmp/inst/out/report.json" scheduler | grep -q "^spill_opt | preset $tmp/inst/share/mncc/presets/O2.json$" &&
    grep -q "\"source\":[[:space:]]*\"$tmp/inst/share/mncc/presets/machines/tiny.json\"" "$tmp/inst/out/report.json" 2>/dev/null; r=$?
[ $r -eq 0 ] && ok installed-presets || bad installed-presets "$(cat "$tmp/out") $(opt_of "$tmp/inst/out/report.json" scheduler 2>&1)"
[ -x "$tmp/inst/bin/mnemu" ] && [ -x "$tmp/inst/bin/mndump" ] && ok installed-tools || bad installed-tools "$(ls "$tmp/inst/bin")"
# the installed Python package runs the installed programs (not this tree's), from anywhere
site=$(find "$tmp/inst/lib" -type d -name dist-packages | head -1)
(cd / && env -u MNCC -u MNEMU -u MNCC_PRESETS PYTHONPATH="$site" /usr/bin/python3 -c '
import sys, numpy, mncc, mncc._tools as t
m = mncc.compile(sys.argv[1], codegen_dir=sys.argv[2], machine="l1b")
assert t.program("mncc") == sys.argv[3] + "/mncc" and t.program("mnemu") == sys.argv[3] + "/mnemu"
y = m(*[numpy.ones(v["shape"], numpy.float32) for v in m.inputs])
print(m.report["status"], m.report["machine"]["source"], list(y.shape) == m.outputs[0]["shape"], m.cycles > 0)' \
    "$tmp/inst/m.onnx" "$tmp/inst/py" "$tmp/inst/bin" >"$tmp/out" 2>&1) &&
    grep -q "^ok $tmp/inst/share/mncc/presets/machines/l1b.json True True$" "$tmp/out"; r=$?
[ $r -eq 0 ] && ok installed-python || bad installed-python "$(tail -3 "$tmp/out")"
if groff -man -Tutf8 -ww -z "$tmp/inst/share/man/man1/mncc.1" 2>"$tmp/err" && [ ! -s "$tmp/err" ]; then ok man-page
else bad man-page "$(head -3 "$tmp/err")"; fi

# deps.sh: the path that prints the command, and the path that installs
MNCC_NO_INSTALL=1 MNCC_EXTRA_PKGS=mncc-no-such-package expect deps-print 1 sh "$root/mk/deps.sh"
grep -q 'apt-get install -y --no-install-recommends mncc-no-such-package' "$tmp/err" || bad deps-print-text "$(cat "$tmp/err")"
mkdir -p "$tmp/fake"
printf '#!/bin/sh\necho "$@" >> %s/apt.log\n' "$tmp" > "$tmp/fake/apt-get"
printf '#!/bin/sh\necho 0\n' > "$tmp/fake/id"
chmod +x "$tmp/fake/apt-get" "$tmp/fake/id"
PATH="$tmp/fake:$PATH" MNCC_EXTRA_PKGS=mncc-fake-package expect deps-install 0 sh "$root/mk/deps.sh"
grep -q '^update' "$tmp/apt.log" 2>/dev/null && grep -q 'install -y --no-install-recommends mncc-fake-package' "$tmp/apt.log" &&
    ok deps-install-calls || bad deps-install-calls "apt-get not called as expected: $(cat "$tmp/apt.log" 2>/dev/null)"

echo "cli: $pass passed, $fail failed"
[ $fail -eq 0 ]
