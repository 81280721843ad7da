#!/usr/bin/python3
"""Shared bandwidth in mnemu's timing (docs/vsm.md 5.6), checked on the cycles it reports.

The expected figures are worked out from the document's port table on mncore2 (DRAM 16,
PDM 16, L2BM MV side 32, a link between groups 8 long words a cycle; latency 400 with
DRAM, 100 without; one MV every 4 steps of 4 cycles), not taken from mnemu:
  - one parallel mvp of 4096 LW: 4096 / 16 + 400 = 656 cycles;
  - k of them issued back to back on one DRAM take k times one's transfer time;
  - a single mvp across groups runs at the link's 8 LW a cycle, within a group at 16;
  - a broadcast from one PDM (mvb) is held by the links (N / 8), an all-gather from the
    DRAMs (mvb $d) by the L2BM side (N / 32);
  - every run's cycles are at least each group's DRAM busy time, and that busy time is
    at least the group's DRAM long words / 16 (no program beats the bandwidth);
  - the model's count (vsm_program_cycles) equals the run's.
    timing.py MNEMU    ends with "timing: N passed, M failed"
"""
import json
import subprocess
import sys
import tempfile

MNEMU = sys.argv[1]
passed = failed = 0


def run(lines):
    with tempfile.NamedTemporaryFile("w", suffix=".vsm") as f:
        f.write("\n".join(lines) + "\n")
        f.flush()
        r = subprocess.run([MNEMU, "--machine", "mncore2", "--json", "--vsm", f.name], capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(r.stderr.strip())
    return json.loads(r.stdout.strip().splitlines()[-1])


def check(name, ok, detail):
    global passed, failed
    if ok:
        passed += 1
        print("ok", name)
    else:
        failed += 1
        print("FAIL timing %s: %s" % (name, detail))


def bandwidth_bounds(name, st):
    """cycles >= each DRAM's busy time >= its long words / 16; the model agrees with the run"""
    for g, grp in enumerate(st["groups"]):
        lw = grp["dram_bytes"] // 8
        check("%s-busy-g%d" % (name, g), grp["dram_busy_cycles"] * 16 >= lw and st["cycles"] >= grp["dram_busy_cycles"],
              "group %d: %d LW, busy %d, cycles %d" % (g, lw, grp["dram_busy_cycles"], st["cycles"]))
    check(name + "-model", st["cycles"] == st["model_cycles"], "run %d, model %d" % (st["cycles"], st["model_cycles"]))


one = run(["mvp/n4096i01 $d0 $lc0@.0", "nop; wait i01"])
check("one-mvp", one["cycles"] == 656, "one parallel mvp/n4096: %d cycles, expected 656" % one["cycles"])
bandwidth_bounds("one-mvp", one)

for k in (2, 4, 8):
    st = run(["mvp/n4096i%02x $d%d $lc%d@.0" % (i + 1, 4096 * i, 4096 * i) for i in range(k)] +
             ["nop; wait i%02x" % (i + 1) for i in range(k)])
    transfer = st["cycles"] - 400
    check("concurrent-%d" % k, transfer == k * 256, "%d mvp/n4096 on one DRAM: %d cycles after latency, expected %d" % (k, transfer, k * 256))
    bandwidth_bounds("concurrent-%d" % k, st)

# across groups at the link's rate, within at the memories'
cross = run(["mvp/n4096i01 $p0@0 $lc0@1.0", "nop; wait i01"])
check("single-cross-group", cross["cycles"] == 100 + 4096 // 8, "mvp $p@0 -> $lc@1: %d cycles, expected %d" % (cross["cycles"], 100 + 512))
same = run(["mvp/n4096i01 $p0@1 $lc0@1.0", "nop; wait i01"])
check("single-same-group", same["cycles"] == 100 + 4096 // 16, "mvp $p@1 -> $lc@1: %d cycles, expected %d" % (same["cycles"], 100 + 256))
# two single mvps from different groups into different groups share nothing: as fast as one
two = run(["mvp/n4096i01 $p0@0 $lc0@1.0", "mvp/n4096i02 $p0@2 $lc0@3.0", "nop; wait i01", "nop; wait i02"])
check("disjoint-links", two["cycles"] == 16 + 100 + 512, "two disjoint cross-group mvps: %d cycles, expected %d" % (two["cycles"], 628))
# the same link twice: twice the time
twice = run(["mvp/n4096i01 $p0@0 $lc0@1.0", "mvp/n4096i02 $p4096@0 $lc4096@1.1", "nop; wait i01", "nop; wait i02"])
check("shared-link", twice["cycles"] == 100 + 2 * 512, "two mvps over one link: %d cycles, expected %d" % (twice["cycles"], 1124))

mvb = run(["mvb/n4096i01 $p0@0 $lc0", "nop; wait i01"])
check("mvb-pdm", mvb["cycles"] == 100 + 4096 // 8, "mvb $p@0: %d cycles, expected %d" % (mvb["cycles"], 612))
gather = run(["mvb/n4096i01 $d0 $lc0", "nop; wait i01"])
check("mvb-dram", gather["cycles"] == 400 + 4096 // 32, "mvb $d: %d cycles, expected %d" % (gather["cycles"], 528))
bandwidth_bounds("mvb-dram", gather)

# a DRAM-bound round trip in every group: four downloads in flight at once into both
# L2BMs (the whole of each), then four uploads; the DRAM, not the L2BMs or the issue
# spacing, holds them (transfers that did not share it took about a fifth of the bound)
lines = ["mvp/n8192i%02x $d%d $lc%d@.%d" % (i + 1, 8192 * i, 8192 * (i // 2), i % 2) for i in range(4)] + ["nop; wait i%02x" % (i + 1) for i in range(4)]
lines += ["mvp/n8192i%02x $lc%d@.%d $d%d" % (i + 5, 8192 * (i // 2), i % 2, 65536 + 8192 * i) for i in range(4)] + ["nop; wait i%02x" % (i + 5) for i in range(4)]
rt = run(lines)
lw = 2 * 4 * 8192
check("round-trip-bound", rt["cycles"] >= lw // 16 and rt["dram_bytes"] == 8 * lw * 4,
      "%d LW a group in %d cycles (bound %d), %d bytes" % (lw, rt["cycles"], lw // 16, rt["dram_bytes"]))
bandwidth_bounds("round-trip", rt)

print("timing: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
