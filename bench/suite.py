#!/usr/bin/python3
"""The benchmark suite: `make bench` (figures, not pass/fail; no test is timed).

Six tables, from one run on this machine, also written to build/bench/suite.json:

 1. compile   every bench and real model at O0, O2 and O3: wall time and peak RSS of the
              mncc process (/usr/bin/time -v), and the wall time of each pass group
              (report.json).
 2. ort       mncc at O2 against onnxruntime's session creation with all graph
              optimisations (npm onnxruntime-node) on the same models, ORT_ROUNDS fresh
              processes of each, alternating: `first` is the session a fresh process
              creates (the runtime's one-time set-up included), `warm` the median of the
              sessions after the first process's first. ratio = median mncc / median
              onnxruntime; below 1 means mncc is faster.
 3. scaling   generated graphs of 1k, 10k and 100k nodes at O2; the growth exponent is
              the slope of log(time) against log(nodes), least squares (target <= 1.15).
 4. schedule  every scheduler on the small models: emulated cycles over the roofline
              lower bound (bench/figures.py), DRAM bytes moved against always_from_dram's,
              and LM peak / LOAD per bank.
 5. emulator  PE-element operations per second of mnemu: on the schedule runs and on a
              long synthetic vector program.
 6. sim       Node Simulation's estimate against the emitted code's emulated cycles, per
              node kind, over the ONNX test data, examples/ and the bench nets
              (bench/sim_check.py; the target is every kind within 25 %).

usage: suite.py [--quick | --zoo]   (--quick: 60-node and 1k models only, 1k/10k scaling;
       --zoo: table 2 alone, on the zoo's models in build/zoo/models (make zoo-compile; ZOO_ONLY: name prefixes),
       ZOO_ROUNDS rounds, default 3)
Environment: MNCC, MNEMU (default build/), ORT_NODE_DIR (default build/real, where
`make real` installs onnxruntime-node; without it table 2 says so).
"""
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figures  # noqa: E402  (the roofline bound and the input shapes of the examples)

ROOT = figures.ROOT
MNCC, MNEMU = figures.MNCC, figures.MNEMU
PY = "/usr/bin/python3"
DIR = os.path.join(ROOT, "build", "bench")
ORT_DIR = os.environ.get("ORT_NODE_DIR", os.path.join(ROOT, "build", "real"))
QUICK = "--quick" in sys.argv[1:]
ZOO = "--zoo" in sys.argv[1:]
GROUPS = [("load", ["load"]), ("shapes", ["static_shapes", "dce", "conv_lowering"]),
          ("plan", ["dtype", "location_initial", "layout", "location", "time_slice", "location_sliced"]),
          ("sim", ["node_simulation"]), ("sched", ["schedule"]), ("addr", ["address"]), ("emit", ["emit"])]
SCHEDULERS = ["always_from_dram", "reuse_consecutive", "spill_opt", "auto_recompute_sa"]
results = {}


def gen(kind, n):
    label = "%dk" % (n // 1000) if n % 1000 == 0 else str(n)
    path = os.path.join(DIR, "%s_%s.onnx" % (kind, label))
    if not os.path.exists(path):
        subprocess.run([PY, os.path.join(ROOT, "bench", "gen_graph.py"), kind, str(n), path + ".tmp"], check=True, capture_output=True)
        os.rename(path + ".tmp", path)
    return "%s_%s" % (kind, label), path


def shape_args(name):
    return sum((["--input-shape", "%s=%s" % (k, ",".join(map(str, v)))] for k, v in figures.SHAPES.get(name, {}).items()), [])


def compile_once(name, path, out, args, rss=True):
    """mncc under /usr/bin/time -v (rss=False: alone, as table 2 times it: time -v's own process
    added 3 to 10 ms): wall s (this process's clock), peak MiB, exit code, report.json or None"""
    tv = out + ".time"
    t0 = time.perf_counter()
    r = subprocess.run((["/usr/bin/time", "-v", "-o", tv] if rss else []) + [MNCC, path, "-o", out, "--cache-dir", "none"] + shape_args(name) + args,
                       capture_output=True, text=True)
    wall = time.perf_counter() - t0  # time -v counts in 10 ms steps: too coarse for the small models
    peak = None
    for line in open(tv) if rss else []:
        if "Maximum resident set size" in line:
            peak = int(line.split(":")[1]) / 1024
    rep = None
    try:
        rep = json.load(open(os.path.join(out, "report.json")))
    except (OSError, ValueError):
        pass
    return {"wall_s": wall, "peak_mib": peak, "exit": r.returncode, "report": rep, "stderr": r.stderr.strip().splitlines()[-1:] if r.returncode else [],
            "app": os.path.exists(os.path.join(out, "model.app"))}


def models():
    ms = [gen(k, 60) for k in ("convnet", "transformer", "mlp")]
    ms += [gen(k, 1000) for k in ("convnet", "transformer", "mlp")]
    ex = os.path.join(ROOT, "examples")
    ms += [(f[:-5], os.path.join(ex, f)) for f in sorted(os.listdir(ex)) if f.endswith(".onnx")]
    real = os.path.join(ORT_DIR, "node_modules", "openwakeword-js", "models")
    if os.path.isdir(real):
        ms += [(f[:-5], os.path.join(real, f)) for f in sorted(os.listdir(real)) if f.endswith(".onnx")]
    return ms


def nodes(path):
    return len(onnx.load(path, load_external_data=False).graph.node)


def passes(rep):
    ms = {p["name"]: p["wall_ms"] for p in rep["passes"]} if rep else {}
    return [sum(ms.get(p, 0) for p in ps) for _, ps in GROUPS]


def table(title, head, rows, note=""):
    print("\n== %s" % title)
    w = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h)) for i, h in enumerate(head)]
    print("  ".join(str(h).rjust(w[i]) if i else str(h).ljust(w[i]) for i, h in enumerate(head)))
    for r in rows:
        print("  ".join(str(c).rjust(w[i]) if i else str(c).ljust(w[i]) for i, c in enumerate(r)))
    if note:
        print(note)


def status(c):
    if c["exit"]:
        return "exit %d" % c["exit"]
    return "ok" if c["app"] else "no app"


def compile_table(ms):
    rows, res = [], {}
    for name, path in ms:
        n = nodes(path)
        for preset in ("O0", "O2", "O3"):
            c = compile_once(name, path, os.path.join(DIR, "c_%s_%s" % (name, preset)), ["--preset", preset])
            res[(name, preset)] = c
            rows.append([name, n, preset, "%.3f" % c["wall_s"], "%.0f" % c["peak_mib"], status(c)] + ["%.0f" % x for x in passes(c["report"])])
    table("1. compile time per model and pass (ms), mncore2, --cache-dir none",
          ["model", "nodes", "preset", "wall_s", "peak_MiB", "result"] + [g for g, _ in GROUPS], rows,
          "   shapes = static_shapes+dce+conv_lowering; plan = dtype+location_initial+layout+location+time_slice+location_sliced;\n"
          "   emit = Code Emit with linking and the artifacts. 'no app': the emitter does not cover some node yet (report.json names them).")
    results["compile"] = [dict(zip(["model", "nodes", "preset", "wall_s", "peak_mib", "result"] + [g for g, _ in GROUPS], r)) for r in rows]
    return res


# fresh processes per side and model: one run of either varies by half on this VM (the zoo's
# large models take seconds a round: fewer)
ORT_ROUNDS = int(os.environ.get("ZOO_ROUNDS", "3")) if ZOO else 5


def ort_run(js, path, reps, env):
    r = subprocess.run(["node", js, str(reps), path], capture_output=True, text=True, env=env)  # a process per run: each pays the set-up
    try:
        return json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": (r.stderr.strip().splitlines() or ["no output"])[-1]}


def ort_table(ms):
    js = os.path.join(ROOT, "bench", "ort_session.js")
    if not os.path.isdir(os.path.join(ORT_DIR, "node_modules", "onnxruntime-node")):
        print("\n== 2. against onnxruntime: onnxruntime-node is not in %s (make real installs it)" % ORT_DIR)
        return
    rows, env = [], dict(os.environ, ORT_NODE_DIR=ORT_DIR)
    for name, path in ms:
        walls, firsts, warm, err = [], [], [], None
        for k in range(ORT_ROUNDS):  # alternating, so that both sides see the same state of the machine
            c = compile_once(name, path, os.path.join(DIR, "o_%s_O2" % name), ["--preset", "O2"], rss=False)
            if c["exit"]:
                err = "mncc: exit %d" % c["exit"]
                break
            walls.append(c["wall_s"])
            o = ort_run(js, path, 7 if k == 0 else 0, env)
            if "error" in o:
                err = "onnxruntime: " + o["error"][:60]
                break
            firsts.append(o["first_ms"])
            warm += o["warm_ms"]
        if err:
            rows.append([name] + ["-"] * 7 + [err])
            continue
        mw, of, ow = statistics.median(walls) * 1e3, statistics.median(firsts), statistics.median(warm)
        rf, rw = mw / of, mw / ow
        rows.append([name, "%.1f" % (min(walls) * 1e3), "%.1f" % mw, "%.1f" % min(firsts), "%.1f" % of, "%.1f" % ow, "%.2f" % rf, "%.2f" % rw,
                     "mncc faster" if rw < 1 else ("faster than first only" if rf < 1 else "onnxruntime faster")])
    table("2. mncc -O2 (whole process) against onnxruntime session creation, graphOptimizationLevel all; %d alternating fresh processes each" % ORT_ROUNDS,
          ["model", "mncc_min_ms", "mncc_med_ms", "ort_first_min", "ort_first_med", "ort_warm_med", "ratio_first", "ratio_warm", "verdict"], rows,
          "   ratio = median mncc wall / median onnxruntime session creation (goal: below 1 on every model). mncc's time\n"
          "   includes process start, reading the model and writing every artifact; onnxruntime's excludes node's start.")
    results["ort"] = rows


def scaling_table():
    sizes = [1000, 10000] if QUICK else [1000, 10000, 100000]
    rows, fits = [], []
    for kind in ("convnet", "transformer", "mlp"):
        pts = []
        for n in sizes:
            name, path = gen(kind, n)
            c = compile_once(name, path, os.path.join(DIR, "s_" + name), ["--preset", "O2", "-O", "memory_limit_mb=0"])  # 100k MLP: ~10 GiB
            rows.append([name, n, "%.2f" % c["wall_s"], "%.0f" % c["peak_mib"], status(c)] + ["%.0f" % x for x in passes(c["report"])])
            if not c["exit"] and c["app"]:  # a compile that emitted no program did less work: not a point of the fit
                pts.append((n, c["wall_s"], c["peak_mib"]))
        if len(pts) >= 2:
            x = [math.log(p[0]) for p in pts]
            kt = np.polyfit(x, [math.log(p[1]) for p in pts], 1)[0]
            km = np.polyfit(x, [math.log(p[2]) for p in pts], 1)[0]
            fits.append([kind, len(pts), "%.2f" % kt, "%.2f" % km, "met" if kt <= 1.15 else "NOT met"])
        else:
            fits.append([kind, len(pts), "-", "-", "too few full compiles"])
    table("3. scaling at O2 (memory_limit_mb=0: the 100k-node MLP needs more than the default 8 GiB)", ["model", "nodes", "wall_s", "peak_MiB", "result"] + [g for g, _ in GROUPS], rows)
    table("   growth exponents (time ~ nodes^k; target k <= 1.15)", ["kind", "points", "k_time", "k_memory", "target"], fits,
          "   only compiles that wrote a model.app are fitted: 'no app' means some node was not emitted (less work).")
    results["scaling"] = {"rows": rows, "fits": fits}


def schedule_table(ms, emu_rows):
    rows = []
    for name, path in ms:
        ind = os.path.join(DIR, "in_" + name)
        m = figures.load_with_inputs(path, name, ind)
        bound = max(figures.flops(m) / figures.PEAK, figures.compulsory(m) / figures.BW, 1)
        base = None
        for s in SCHEDULERS:
            out = os.path.join(DIR, "q_%s_%s" % (name, s))
            c = compile_once(name, path, out, ["--preset", "O2", "-O", "scheduler=" + s])
            if c["exit"] or not c["app"]:
                rows.append([name, s, status(c)] + ["-"] * 6)
                continue
            r = subprocess.run([MNEMU, os.path.join(out, "model.app"), "--inputs", ind, "-o", out + "_out", "--json"], capture_output=True, text=True)
            if r.returncode:
                rows.append([name, s, "mnemu exit %d" % r.returncode] + ["-"] * 6)
                continue
            st = json.loads(r.stdout.strip().splitlines()[-1])
            f = next(p for p in c["report"]["passes"] if p["name"] == "schedule")["figures"]
            if s == "always_from_dram":
                base = st["dram_bytes"]
            emu_rows.append([name + " " + s, st["steps"], st["pe_element_ops"], st["wall_seconds"]])
            rows.append([name, s, "ok", st["cycles"], "%.0f" % bound, "%.1f" % (st["cycles"] / bound), st["dram_bytes"],
                         "%.2f" % (st["dram_bytes"] / base) if base else "-",
                         "%d/%d %d/%d" % (f["lm0_peak_lw"], f["lm0_load_lw"], f["lm1_peak_lw"], f["lm1_load_lw"])])
    table("4. schedule quality per scheduler (O2, mncore2, emulated on seeded random inputs)",
          ["model", "scheduler", "result", "cycles", "bound", "cyc/bound", "dram_bytes", "vs_always", "LM0,LM1 peak/LOAD"], rows,
          "   bound = max(FLOPs / %d FLOP per cycle, compulsory bytes / %d B per cycle) (bench/figures.py);\n"
          "   vs_always = DRAM bytes moved / always_from_dram's on the same model." % (figures.PEAK, figures.BW))
    results["schedule"] = rows


def synthetic_emu(emu_rows):
    prog = os.path.join(DIR, "emu_speed.vsm")
    with open(prog, "w") as f:  # float FMA, float add and 32-bit integer add on every PE
        for i in range(2000):
            a = (i * 8) % 2000
            f.write("fvfma $lm%dv $ln%dv $lr0v $ls%dv\nfvadd $lm%dv $ln%dv $ls%dv\niadd $lr8v $lm4000v $lr24v\n" % (a, a, (i % 32) * 8, a, a, (i % 32) * 8))
    for mach in ("mncore2", "l1b"):
        r = subprocess.run([MNEMU, "--vsm", prog, "--machine", mach, "--json"], capture_output=True, text=True)
        if r.returncode == 0:
            d = json.loads(r.stdout.strip().splitlines()[-1])
            emu_rows.append(["synthetic vector program on " + mach, d["steps"], d["pe_element_ops"], d["wall_seconds"]])


def emu_table(emu_rows):
    rows = [[n, s, o, "%.3f" % w, "%.3g" % (o / w if w > 0 else 0)] for n, s, o, w in emu_rows]
    table("5. emulator throughput", ["run", "steps", "PE_element_ops", "wall_s", "ops_per_s"], rows)
    results["emulator"] = rows


def main():
    os.makedirs(DIR, exist_ok=True)
    for tool in (MNCC, MNEMU, "/usr/bin/time"):
        if not os.access(tool, os.X_OK):
            sys.exit("bench: %s not found (make; Debian package 'time')" % tool)
    r = subprocess.run([MNCC, "--version"], capture_output=True, text=True)
    print("mncc bench: %s; %s; %d CPUs" % (r.stdout.strip(), os.uname().machine, os.cpu_count()))
    if ZOO:
        zd = os.path.join(ROOT, "build", "zoo", "models")
        if not os.path.isdir(zd):
            sys.exit("bench: no %s (make zoo exports the models)" % zd)
        only = os.environ.get("ZOO_ONLY", "").split()  # model name prefixes (all when empty)
        ort_table([(f[:-5], os.path.join(zd, f)) for f in sorted(os.listdir(zd))
                   if f.endswith(".onnx") and (not only or any(f.startswith(o) for o in only))])
        json.dump(results, open(os.path.join(DIR, "zoo_compile.json"), "w"), indent=1)
        return
    ms = models()
    comp = compile_table(ms)
    ort_table(ms)
    scaling_table()
    emu_rows = []
    schedule_table([m for m in ms if m[0].endswith("_60") or m[0] in figures.SHAPES], emu_rows)
    synthetic_emu(emu_rows)
    emu_table(emu_rows)
    print("\n== 6. Node Simulation against the emitted code (bench/sim_check.py%s)" % (" --quick" if QUICK else ""))
    sys.stdout.flush()
    subprocess.run([PY, os.path.join(ROOT, "bench", "sim_check.py")] + (["--quick"] if QUICK else []), check=True)
    json.dump(results, open(os.path.join(DIR, "suite.json"), "w"), indent=1)
    print("\n(figures in %s)" % os.path.relpath(os.path.join(DIR, "suite.json"), ROOT))


if __name__ == "__main__":
    main()
