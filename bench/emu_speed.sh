#!/bin/sh
# Emulator speed: PE-element operations per second on a large vector program
# (float FMA, float add and 32-bit integer add over every PE of mncore2).
#   bash bench/emu_speed.sh [STEPS]      (from the repo root, after make)
set -u
steps=${1:-6000}
dir=build/bench
mkdir -p "$dir"
prog=$dir/emu_speed.vsm
awk -v n="$steps" 'BEGIN {
    for (i = 0; i < n / 3; i++) {
        a = (i * 8) % 2000
        printf "fvfma $lm%dv $ln%dv $lr0v $ls%dv\n", a, a, (i % 32) * 8
        printf "fvadd $lm%dv $ln%dv $ls%dv\n", a, a, (i % 32) * 8
        printf "iadd $lr8v $lm4000v $lr24v\n"
    }
}' > "$prog"
for m in mncore2 l1b; do
    out=$(build/mnemu --vsm "$prog" --machine $m --json) || exit 1
    echo "$out" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
print("%-8s %6d steps  %12d PE-element ops  %.3f s  %.3g ops/s" % (d["machine"], d["steps"], d["pe_element_ops"], d["wall_seconds"],
      d["pe_element_ops"] / d["wall_seconds"]))'
done
