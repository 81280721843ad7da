#!/usr/bin/python3
"""Node Simulation against the emitted code: estimate / emulated cycles per node kind.

For every model of the corpus (the ONNX backend test data, examples/, the generated
bench nets) that gets a model.app on the machine, mncc compiles it (options as given,
the preset O2 by default) and mnemu times the linked program (model.vsm; timing does not
depend on data) with --trace. Each node's emulated cycles run from the first line of its
code to the first line of the next node's (waits and MV stalls included; model.vsm has a
`# Op name` line per node); its estimate is the cycles the schedule took for it
(trace.json, the variant it chose). Per kind: nodes, the sums of both, their ratio
(estimate / emulated), and the median and the extremes of the per-node ratios. A kind
whose ratio of sums lies outside [0.75, 1.25] is marked '!'.
    sim_check.py [--machine M] [--quick] [-O KEY=VALUE ...]   (figures; no pass/fail)
"""
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MNCC = os.environ.get("MNCC", os.path.join(ROOT, "build", "mncc"))
MNEMU = os.environ.get("MNEMU", os.path.join(ROOT, "build", "mnemu"))
DATA = "/usr/share/libonnx-testdata/data"
NODE_LINE = re.compile(r"^# (\S+) (\S+)$")


def corpus(quick, tmp):
    models = [(os.path.join(ROOT, "examples", "mlp.onnx"), ["--input-shape", "x=4,4,4"])]
    for kind in ("convnet", "transformer", "mlp"):
        p = os.path.join(tmp, "bench_%s.onnx" % kind)
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "bench", "gen_graph.py"), kind, "60", p], check=True, capture_output=True)
        models.append((p, []))
    dirs = ["node", "pytorch-converted", "pytorch-operator", "simple"]
    tests = sorted(glob.glob(os.path.join(DATA, "*", "*", "model.onnx")))
    tests = [t for t in tests if t.split(os.sep)[-3] in dirs]
    if quick:
        tests = tests[::8]
    return models + [(t, []) for t in tests]


def node_cycles(vsm, trace):
    """emulated cycles per node: from its first executed line to the next node's"""
    owner, names = {}, []
    with open(vsm) as f:
        for i, line in enumerate(f, 1):
            m = NODE_LINE.match(line.rstrip("\n"))
            if m:
                names.append((m.group(1), m.group(2)))
            elif names:
                owner[i] = len(names) - 1
    first = {}
    for ev in json.load(open(trace))["traceEvents"]:
        line = ev.get("args", {}).get("line")
        if line in owner:
            k = owner[line]
            if k not in first or ev["ts"] < first[k]:
                first[k] = ev["ts"]
    return names, first


def one(path, extra, opts, machine, tmp):
    name = os.path.relpath(path, DATA) if path.startswith(DATA) else os.path.basename(path)
    out = os.path.join(tmp, re.sub(r"[^A-Za-z0-9_.-]", "_", name))
    r = subprocess.run([MNCC, path, "-o", out, "--quiet", "--machine", machine, "--cache-dir", "none"] + extra + opts, capture_output=True, text=True)
    if r.returncode or not os.path.exists(os.path.join(out, "model.app")):
        return None
    trace = os.path.join(out, "emu_trace.json")
    r = subprocess.run([MNEMU, "--vsm", os.path.join(out, "model.vsm"), "--machine", machine, "--json", "--trace", trace], capture_output=True, text=True)
    if r.returncode:
        return None
    st = json.loads(r.stdout.strip().splitlines()[-1])
    mhz = json.load(open(os.path.join(ROOT, "presets", "machines", machine + ".json")))["clock_mhz"]
    names, first = node_cycles(os.path.join(out, "model.vsm"), trace)
    est = {}
    try:
        events = json.load(open(os.path.join(out, "trace.json")))["traceEvents"]
    except ValueError as err:
        sys.exit("sim_check: %s: trace.json: %s" % (name, err))
    for ev in events:
        if ev.get("ph") == "X" and "cycles" in ev.get("args", {}):
            est[ev["name"]] = ev["args"]["cycles"]
    starts = sorted((first[k], k) for k in first)
    rows = []
    for i, (ts, k) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else st["cycles"] / mhz
        op, node = names[k]
        if op == "MNCoreForget" or node not in est:
            continue
        rows.append((op, node, est[node], (end - ts) * mhz))
    return rows


def main():
    args = sys.argv[1:]
    machine, quick, opts = "mncore2", False, ["--preset", "O2"]
    while args:
        a = args.pop(0)
        if a == "--machine":
            machine = args.pop(0)
        elif a == "--quick":
            quick = True
        elif a == "-O":
            opts += ["-O", args.pop(0)]
        else:
            sys.exit("usage: sim_check.py [--machine M] [--quick] [-O KEY=VALUE ...]")
    with tempfile.TemporaryDirectory() as tmp:
        models = corpus(quick, tmp)
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
            results = list(ex.map(lambda m: one(m[0], m[1], opts, machine, tmp), models))
    per = {}
    napps = 0
    for rows in results:
        if rows is None:
            continue
        napps += 1
        for op, node, e, c in rows:
            per.setdefault(op, []).append((e, c))
    print("Node Simulation against the emitted code on %s (%s): %d of %d models with a model.app" % (machine, " ".join(opts), napps, len(models)))
    print("%-24s %6s %12s %12s %7s %7s %7s %7s" % ("kind", "nodes", "estimate", "emulated", "ratio", "median", "min", "max"))
    off = 0
    for op in sorted(per):
        v = per[op]
        se, sc = sum(e for e, _ in v), sum(c for _, c in v)
        rs = [e / c for e, c in v if c > 0]
        ratio = se / sc if sc else float("inf")
        bad = not 0.75 <= ratio <= 1.25
        off += bad
        print("%-24s %6d %12d %12d %7.2f %7.2f %7.2f %7.2f %s" % (op, len(v), se, round(sc), ratio, statistics.median(rs) if rs else 0,
                                                              min(rs) if rs else 0, max(rs) if rs else 0, "!" if bad else ""))
    print("sim_check: %d kinds, %d outside [0.75, 1.25]" % (len(per), off))


if __name__ == "__main__":
    main()
