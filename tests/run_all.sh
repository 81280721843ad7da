#!/bin/sh
# make check's runner: every suite against one build directory, then one total line.
#   run_all.sh BUILD_DIR
set -u
b=${1:-build}
log=$(mktemp)
XDG_CACHE_HOME=$(mktemp -d) # compiles that write a codegen dir cache Node Simulation here, not in ~/.cache
export XDG_CACHE_HOME
trap 'rm -f "$log"; rm -rf "$XDG_CACHE_HOME"' EXIT
total_pass=0 total_fail=0
run() { # name, command...
    name=$1; shift
    "$@" >"$log" 2>&1
    rc=$?
    grep -v '^ok ' "$log" | grep -v '^$' | tail -n 40
    line=$(grep -E '[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
    p=$(echo "$line" | sed -nE 's/.* ([0-9]+) passed, ([0-9]+) failed.*/\1/p')
    f=$(echo "$line" | sed -nE 's/.* ([0-9]+) passed, ([0-9]+) failed.*/\2/p')
    [ -z "$p" ] && p=0 && f=1 && echo "$name: no result line (exit $rc)"
    [ $rc -ne 0 ] && [ "$f" -eq 0 ] && f=1 && echo "$name: exit $rc"
    total_pass=$((total_pass + p)); total_fail=$((total_fail + f))
}
data=/usr/share/libonnx-testdata/data
run format sh tests/format/run.sh
run unit "$b/unit_tests"
run golden sh tests/golden/run.sh "$b/mncc"
run cli sh tests/cli/run.sh "$b/mncc"
run python /usr/bin/python3 tests/python/run.py "$b"
run sweep "$b/load_sweep" --json "$b/sweep.json" "$data/node" "$data/pytorch-converted" "$data/pytorch-operator" "$data/simple"
run mutate "$b/mutate" tests/golden/ok_*.onnx examples/mlp.onnx
run roundtrip "$b/vsm_roundtrip" $(ls tests/vsm/*.vsm tests/app/*.vsm 2>/dev/null)
run app sh tests/app/run.sh "$b"
[ -f tests/vsm/run.sh ] && run vsm sh tests/vsm/run.sh "$b/mnemu"
run timing /usr/bin/python3 tests/vsm/timing.py "$b/mnemu"
run emit /usr/bin/python3 tests/emit/run.py "$b/mncc" "$b/mnemu"
run cnn sh tests/cnn/run.sh "$b"
run dashboard sh tests/dashboard/run.sh "$b/mncc"
run replay sh tests/fuzz/replay.sh "$b"
# compiled models against the ONNX references, through mncc and mnemu: mncore2 in the
# plain build; under the sanitizers the 16-PE machine (slicing, spilling) and one L1B
# (where the most ops are emitted); a test that needs an input at compile time is tried
# with it frozen (--input-value), counted apart
case $b in *san*) cmachs="tiny l1b" ;; *) cmachs=mncore2 ;; esac
for cmach in $cmachs; do
    run conformance-$cmach /usr/bin/python3 tests/conformance/run.py --mncc "$b/mncc" --mnemu "$b/mnemu" --machine $cmach --freeze \
        --json "$b/conformance_check_$cmach.json" "$data/node" "$data/pytorch-converted" "$data/pytorch-operator" "$data/simple"
done
# the merge linker: the same tests, transfers interleaved with their compute neighbours
case $b in *san*) ;; *)
    run conformance-mncore2-merge /usr/bin/python3 tests/conformance/run.py --mncc "$b/mncc" --mnemu "$b/mnemu" --machine mncore2 -O link=merge \
        --json "$b/conformance_check_merge.json" "$data/node" "$data/pytorch-converted" "$data/pytorch-operator" "$data/simple" ;;
esac
echo "$b: $total_pass passed, $total_fail failed"
[ $total_fail -eq 0 ]
