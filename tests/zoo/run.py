#!/usr/bin/python3
"""make zoo: torchvision's CNNs, transformers, language and recurrent models (tests/zoo/export.py) through the
Python entry point (python/mncc: the torch module exported, compiled by mncc, run on mnemu) on mncore2, against
onnxruntime's outputs for the same inputs.

usage: run.py MNCC MNEMU NODE_DIR [NAME...]   (NODE_DIR holds node_modules; names: a subset of the models, by
       prefix)

Per model: mncc.compile of the module at O2 on mncore2 (its export the same file export.py writes), model.app run
under `mnemu --strict` on seeded random inputs, every output compared with onnxruntime's on the exported file (rtol
1e-3, atol 1e-4). The table
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
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, HERE)
import export  # noqa: E402  (the zoo's modules)
import figures  # noqa: E402  (the roofline bound)
import mncc  # noqa: E402  (the Python entry point)

MNCC, MNEMU, NODE_DIR = sys.argv[1:4]
only = sys.argv[4:]
os.environ["MNCC"], os.environ["MNEMU"] = MNCC, MNEMU  # the programs mncc.compile and CompiledModel run
tmp = tempfile.mkdtemp(prefix="mncc-zoo-")
rows = []
fails = []
runs = {}  # sha256 of a model.app and its inputs -> (the result directory, mnemu's figures, the model)


def row(name, nodes, **k):
    rows.append(dict(name=name, nodes=nodes, **k))


def one(name, net, batch, opset):
    module, x, inames, onames = export.model(net, batch)
    d = os.path.join(tmp, name)
    cg = os.path.join(d, "cg")
    os.makedirs(d)
    # through the Python entry point: the module exported (as export.py writes the zoo's files) and compiled
    try:
        cm = mncc.compile(module, x, codegen_dir=cg, preset="O2", machine="mncore2", opset=opset, input_names=inames,
                          output_names=onames, cache_dir="none")
        why, cms = None, 1000 * cm.compile_seconds
    except mncc.CompileError as e:
        cm, why, cms = None, "mncc: " + e.message, 1000 * (e.compile_seconds or 0)
    path = os.path.join(cg, "model.onnx")  # the export, as mncc copied it
    m = onnx.load(path, load_external_data=False)
    nodes = len(m.graph.node)
    inits = {t.name for t in m.graph.initializer}
    rng = np.random.default_rng(1234)
    inputs = [figures.example_input(m, vi, rng) for vi in m.graph.input if vi.name not in inits]
    with open(os.path.join(d, "inputs.json"), "w") as f:
        json.dump([figures.feed_of(vi.name, a) for vi, a in zip((v for v in m.graph.input if v.name not in inits),
                                                                 inputs)], f)
    # onnxruntime's outputs are the reference; its session creation is timed on every model, so that compile times
    # compare even where mncc fails
    env = dict(os.environ, NODE_PATH=os.path.join(NODE_DIR, "node_modules"))
    ref = subprocess.run(["node", os.path.join(ROOT, "python", "mncc", "ort_ref.js"), path,
                          os.path.join(d, "inputs.json"), os.path.join(d, "ref.json")],
                         capture_output=True, text=True, env=env)
    ort_ms = json.loads(ref.stdout.strip().splitlines()[-1]).get("session_ms") if ref.stdout.strip() else None
    if why:
        return row(name, nodes, compile_ms=cms, ort_ms=ort_ms, why=why)
    if ref.returncode:
        return row(name, nodes, compile_ms=cms, why="reference: " + ref.stderr.strip()[-200:])
    # the same program on the same inputs (an export at two opsets often compiles to one) runs once: the
    # emulator is deterministic, so its outputs and cycles are those of the first run
    h = hashlib.sha256(open(cm.app_path, "rb").read())
    for a in inputs:
        h.update(a.tobytes())
    same = runs.get(h.hexdigest())
    if same:
        outs, st = same[0], same[1]
    else:
        try:
            outs = cm.run_arrays(inputs, strict=True)
        except mncc.RunError as e:
            return row(name, nodes, compile_ms=cms, ort_ms=ort_ms, why="mnemu: " + e.message[-200:])
        st = cm.stats
        runs[h.hexdigest()] = (outs, st, name)
    worst, bad = 0.0, None
    for k, rf in enumerate(json.load(open(os.path.join(d, "ref.json")))):
        want = np.array(rf["data"], np.float32).reshape(rf["dims"])
        got = outs[k]
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
    row(name, nodes, compile_ms=cms, ort_ms=ort_ms, app_mb=os.path.getsize(cm.app_path) / 1e6, cycles=st["cycles"],
        bound=bound, err=worst, why=bad, same=same[2] if same else None,
        mau=100 * figures.flops(m) / figures.PEAK / max(st["cycles"], 1),
        dram=st["dram_bytes"] / max(figures.compulsory(m), 1), stall=100 * st["stall_cycles"] / max(st["cycles"], 1))
    shutil.rmtree(cg, ignore_errors=True)  # (model.app and the export: 0.5 GB for BERT)


zoo = [(export.name_of(*z),) + z for z in export.ZOO]
zoo = [z for z in zoo if not only or any(z[0].startswith(o) for o in only)]
f = lambda v, fmt: fmt % v if v is not None else "-"


def table_row(r):
    ratio = r["cycles"] / r["bound"] if r.get("cycles") else None
    return "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        r["name"], r["nodes"], f(r.get("compile_ms"), "%.0f"), f(r.get("ort_ms"), "%.0f"), f(r.get("app_mb"), "%.1f"),
        f(r.get("cycles"), "%d"), f(r.get("bound"), "%.0f"), f(ratio, "%.1f"), f(r.get("mau"), "%.1f"),
        f(r.get("dram"), "%.2f"), f(r.get("stall"), "%.0f"), f(r.get("err"), "%.2g"))


for n, net, batch, opset in zoo:  # each model's row as it finishes too (a run of all of them takes hours)
    one(n, net, batch, opset)
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
