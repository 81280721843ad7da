#!/bin/sh
# Schedulers side by side: for the generated conv net, transformer block and MLP (1k
# nodes) on mncore2 and on the 16-PE tiny machine, each scheduler's estimated cycles,
# DRAM bytes read and written, spills / reloads / recomputations, and LM peak / LOAD
# per bank; then two golden models that are tight on tiny (Time-Slice makes slices of
# a whole LM); then the time the scheduler takes on the 100k-node graphs with spill_opt.
# Run from the repo root after make. Figures, not pass/fail.
set -u
dir=build/bench
mkdir -p "$dir"
gen() { [ -f "$dir/$1_$2.onnx" ] || /usr/bin/python3 bench/gen_graph.py "$1" "$3" "$dir/$1_$2.onnx" || exit 1; }
printf '%-12s %-8s %-18s %12s %12s %12s %7s %7s %7s %11s %11s\n' model machine scheduler est_cycles dram_read dram_written spills reloads recomp lm0_pk/LOAD lm1_pk/LOAD
row() { # row MODEL LABEL MACHINE
    for s in always_from_dram reuse_consecutive spill_opt auto_recompute_sa; do
        out=$dir/sched_$2_$3_$s
        if ! build/mncc "$1" -o "$out" --machine "$3" -O scheduler=$s --cache-dir "$dir/simcache" 2>"$out.err"; then
            printf '%-12s %-8s %-18s %s\n' "$2" "$3" "$s" "rejected: $(cut -c1-80 "$out.err")"
            continue
        fi
        /usr/bin/python3 - "$out/report.json" "$2" "$3" "$s" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
f = next(p for p in r["passes"] if p["name"] == "schedule")["figures"]
ratio = lambda b: "%d/%d" % (f["lm%d_peak_lw" % b], f["lm%d_load_lw" % b])
print("%-12s %-8s %-18s %12d %12d %12d %7d %7d %7d %11s %11s" % (sys.argv[2], sys.argv[3], sys.argv[4], f["est_cycles"], f["dram_bytes_read"],
      f["dram_bytes_written"], f["spills"], f["reloads"], f["recomputes"], ratio(0), ratio(1)))
PY
    done
}
for kind in convnet transformer mlp; do
    gen "$kind" 1k 1000
    for machine in mncore2 tiny; do row "$dir/${kind}_1k.onnx" "$kind" "$machine"; done
done
for g in ok_time_slice ok_reduce_slice; do row "tests/golden/$g.onnx" "${g#ok_}" tiny; done
echo
for kind in convnet transformer; do
    gen "$kind" 100k 100000
    out=$dir/sched_${kind}_100k
    build/mncc "$dir/${kind}_100k.onnx" -o "$out" -O scheduler=spill_opt --cache-dir "$dir/simcache" || exit 1
    /usr/bin/python3 - "$out/report.json" "$kind" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
t = {p["name"]: p["wall_ms"] for p in r["passes"]}
print("%s_100k spill_opt: node simulation %.2f s, schedule %.2f s, addresses %.2f s" % (sys.argv[2], t["node_simulation"] / 1e3, t["schedule"] / 1e3,
      t["address"] / 1e3))
PY
done
