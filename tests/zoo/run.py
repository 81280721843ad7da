#!/usr/bin/python3
"""make zoo: torchvision's CNNs and a transformer encoder (tests/zoo/export.py) through mncc and mnemu on mncore2,
against onnxruntime's outputs for the same inputs.

usage: run.py MNCC MNEMU NODE_DIR MODEL_DIR [NAME...]   (NODE_DIR holds node_modules;
       names: a subset of the models, by prefix)

Per model: compile at O2 on mncore2, run model.app under `mnemu --strict` on seeded
random inputs, compare every output with onnxruntime's (rtol 1e-3, atol 1e-4). The table
gives the node count, compile time (and onnxruntime's session creation on the same model,
one run each: a rough ratio, see make bench for medians), model.app size, emulated
cycles, the roofline bound (bench/figures.py: FLOPs on the float matrix units or
compulsory DRAM bytes, whichever is larger) and the ratio, the matrix units' utilisation (the
model's FLOPs against the float peak over the cycles run), the DRAM bytes moved against the
compulsory ones, the share of cycles stalled on transfers, and the largest error. A model
that gets no program, or whose outputs disagree, fails, with mncc's or mnemu's reason."""
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import numpy_helper as nh

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import figures  # noqa: E402  (the roofline bound)

MNCC, MNEMU, NODE_DIR, MODELS = sys.argv[1:5]
only = sys.argv[5:]
tmp = tempfile.mkdtemp(prefix="mncc-zoo-")
rows = []
fails = []
runs = {}  # sha256 of a model.app and its inputs -> (the result directory, mnemu's figures, the model)


def row(name, nodes, **k):
    rows.append(dict(name=name, nodes=nodes, **k))


def one(name, path):
    m = onnx.load(path, load_external_data=False)
    nodes = len(m.graph.node)
    d = os.path.join(tmp, name)
    ind = os.path.join(d, "in")
    os.makedirs(ind)
    inits = {t.name for t in m.graph.initializer}
    rng = np.random.default_rng(1234)
    feeds = []
    for k, vi in enumerate(x for x in m.graph.input if x.name not in inits):
        x = figures.example_input(m, vi, rng)
        with open(os.path.join(ind, "input_%d.pb" % k), "wb") as f:
            f.write(nh.from_array(x, vi.name).SerializeToString())
        feeds.append(figures.feed_of(vi.name, x))
    with open(os.path.join(d, "inputs.json"), "w") as f:
        json.dump(feeds, f)
    # onnxruntime first: its outputs are the reference, and its session creation is timed
    # on every model, so that compile times compare even where mncc fails
    env = dict(os.environ, NODE_PATH=os.path.join(NODE_DIR, "node_modules"))
    ref = subprocess.run(["node", os.path.join(ROOT, "tests", "real", "ref.js"), path, os.path.join(d, "inputs.json"),
                          os.path.join(d, "ref.json")], capture_output=True, text=True, env=env)
    ort_ms = json.loads(ref.stdout.strip().splitlines()[-1]).get("session_ms") if ref.stdout.strip() else None
    cg = os.path.join(d, "cg")
    t0 = time.monotonic()
    r = subprocess.run([MNCC, path, "-o", cg, "--machine", "mncore2", "--preset", "O2", "--cache-dir", "none"],
                       capture_output=True, text=True)
    cms = 1000 * (time.monotonic() - t0)
    app = os.path.join(cg, "model.app")
    why = None
    if r.returncode:
        why = (r.stderr.strip().splitlines() or ["mncc: exit %d" % r.returncode])[-1].replace("mncc: error: ", "mncc: ")
    elif not os.path.exists(app):
        rep = json.load(open(os.path.join(cg, "report.json")))
        why = "no model.app: " + str(rep.get("model_app", "?"))
    if why:
        return row(name, nodes, compile_ms=cms, ort_ms=ort_ms, why=why)
    if ref.returncode:
        return row(name, nodes, compile_ms=cms, why="reference: " + ref.stderr.strip()[-200:])
    # the same program on the same inputs (an export at two opsets often compiles to one) runs once: the
    # emulator is deterministic, so its outputs and cycles are those of the first run
    h = hashlib.sha256(open(app, "rb").read())
    for k in range(len(feeds)):
        h.update(open(os.path.join(ind, "input_%d.pb" % k), "rb").read())
    res, same = os.path.join(d, "res"), runs.get(h.hexdigest())
    if same:
        res, st = same[0], same[1]
    else:
        r = subprocess.run([MNEMU, app, "--strict", "--inputs", ind, "-o", res, "--json"], capture_output=True, text=True)
        if r.returncode:
            return row(name, nodes, compile_ms=cms, ort_ms=ort_ms, why="mnemu: " + r.stderr.strip()[-200:])
        st = json.loads(r.stdout.strip().splitlines()[-1])
        runs[h.hexdigest()] = (res, st, name)
    worst, bad = 0.0, None
    for k, rf in enumerate(json.load(open(os.path.join(d, "ref.json")))):
        want = np.array(rf["data"], np.float32).reshape(rf["dims"])
        got = nh.to_array(onnx.load_tensor(os.path.join(res, "output_%d.pb" % k)))
        if got.shape != want.shape:
            bad = "output %s: shape %s, onnxruntime %s" % (rf["name"], got.shape, want.shape)
            break
        err = float(np.max(np.abs(got.astype(np.float64) - want))) if want.size else 0.0
        worst = max(worst, err)
        if not np.allclose(got, want, rtol=1e-3, atol=1e-4):
            bad = "output %s: max error %.3g" % (rf["name"], err)
    bound = max(figures.flops(m) / figures.PEAK, figures.compulsory(m) / figures.BW, 1)
    # the matrix unit's share of its float peak spent on the model's FLOPs, the DRAM bytes moved against the
    # compulsory ones, and the share of cycles the PEs stood waiting (MV waits and issue spacing)
    row(name, nodes, compile_ms=cms, ort_ms=ort_ms, app_mb=os.path.getsize(app) / 1e6, cycles=st["cycles"],
        bound=bound, err=worst, why=bad, same=same[2] if same else None,
        mau=100 * figures.flops(m) / figures.PEAK / max(st["cycles"], 1),
        dram=st["dram_bytes"] / max(figures.compulsory(m), 1), stall=100 * st["stall_cycles"] / max(st["cycles"], 1))


names = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "export.py"), MODELS], capture_output=True, text=True,
                       check=True).stdout.split()
names = [n for n in names if not only or any(n.startswith(o) for o in only)]
f = lambda v, fmt: fmt % v if v is not None else "-"


def table_row(r):
    ratio = r["cycles"] / r["bound"] if r.get("cycles") else None
    return "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        r["name"], r["nodes"], f(r.get("compile_ms"), "%.0f"), f(r.get("ort_ms"), "%.0f"), f(r.get("app_mb"), "%.1f"),
        f(r.get("cycles"), "%d"), f(r.get("bound"), "%.0f"), f(ratio, "%.1f"), f(r.get("mau"), "%.1f"),
        f(r.get("dram"), "%.2f"), f(r.get("stall"), "%.0f"), f(r.get("err"), "%.2g"))


for n in names:  # each model's row as it finishes too (a run of all of them takes hours)
    one(n, os.path.join(MODELS, n + ".onnx"))
    r = rows[-1]
    print("%s %s%s%s   %s" % ("FAIL" if r.get("why") else "ok", n, ": " + r["why"] if r.get("why") else "",
                             " (the program of %s: run once)" % r["same"] if r.get("same") else "", table_row(r)),
          flush=True)

print("\n| model | nodes | compile ms | ort session ms | model.app MB | cycles | roofline | ratio | MAU % | DRAM / compulsory |"
      " stall % | max error |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in rows:
    print(table_row(r))
passed = sum(1 for r in rows if not r.get("why"))
subprocess.run(["rm", "-rf", tmp])
print("zoo: %d passed, %d failed" % (passed, len(rows) - passed))
sys.exit(1 if passed < len(rows) else 0)
