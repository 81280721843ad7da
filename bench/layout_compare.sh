#!/bin/sh
# Layout planners side by side: switches inserted and their estimated cost (cycles),
# lpz against naive, on the generated conv net and transformer (10k nodes), plus the
# time of the whole compile. Run from the repo root after make (bench/suite.py makes the
# models; this script makes them if missing).
set -u
dir=build/bench
mkdir -p "$dir"
for kind in convnet transformer; do
    m=$dir/${kind}_10k.onnx
    [ -f "$m" ] || /usr/bin/python3 bench/gen_graph.py "$kind" 10000 "$m" || exit 1
    for lp in lpz naive; do
        out=$dir/layout_${kind}_$lp
        start=$(date +%s.%N)
        build/mncc "$m" -o "$out" -O layout_planner=$lp || exit 1
        end=$(date +%s.%N)
        /usr/bin/python3 - "$out/report.json" "$kind" "$lp" "$start" "$end" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
f = next(p for p in r["passes"] if p["name"] == "layout")["figures"]
print("%-12s %-6s switches %6d  switch cycles %9d  gene hints %5d  compile %.2f s" % (sys.argv[2], sys.argv[3], f["layout_switches"],
      f["layout_switch_cycles"], f["gene_hints_granted"], float(sys.argv[5]) - float(sys.argv[4])))
PY
    done
done
