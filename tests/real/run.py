#!/usr/bin/env python3
"""Real models against a reference runtime: every .onnx under the model directories is
compiled by mncc, run by mnemu on seeded random inputs (integers: indices below the table's
rows, bench/figures.py), and compared with onnxruntime's
outputs for the same inputs (python/mncc/ort_ref.js; rtol 1e-3, atol 1e-5, as the conformance run for
float). A model mncc rejects, or whose program does not match, is a failure: these are the
models we claim to compile.

usage: run.py MNCC MNEMU NODE_DIR [MODEL_DIR...]   (NODE_DIR holds node_modules)"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper as nh

HERE0 = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE0)), "bench"))
import figures  # noqa: E402  (the example inputs)

MNCC, MNEMU, NODE_DIR = sys.argv[1:4]
dirs = sys.argv[4:] or [os.path.join(NODE_DIR, "node_modules", "openwakeword-js", "models")]
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
tmp = tempfile.mkdtemp()
passed = failed = 0


def report(name, ok, why=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok real " + name + (" " + why if why else ""))
    else:
        failed += 1
        print("FAIL real %s: %s" % (name, why))


def one(path):
    name = os.path.relpath(path, os.path.dirname(os.path.dirname(path)))
    m = onnx.load(path)
    inits = {i.name for i in m.graph.initializer}
    rng = np.random.default_rng(1234)
    d = os.path.join(tmp, name.replace("/", "_"))
    os.makedirs(os.path.join(d, "in"))
    feeds = []
    for k, i in enumerate(x for x in m.graph.input if x.name not in inits):
        tt = i.type.tensor_type
        if tt.elem_type not in (onnx.TensorProto.FLOAT, onnx.TensorProto.INT64, onnx.TensorProto.INT32):
            return report(name, False, "input '%s' is neither float nor an integer" % i.name)
        for dd in tt.shape.dim:
            if dd.dim_value <= 0:
                dd.dim_value = 1
        x = figures.example_input(m, i, rng)
        with open(os.path.join(d, "in", "input_%d.pb" % k), "wb") as f:
            f.write(nh.from_array(x, i.name).SerializeToString())
        feeds.append(figures.feed_of(i.name, x))
    with open(os.path.join(d, "inputs.json"), "w") as f:
        json.dump(feeds, f)
    env = dict(os.environ, NODE_PATH=os.path.join(NODE_DIR, "node_modules"))
    r = subprocess.run(["node", os.path.join(ROOT, "python", "mncc", "ort_ref.js"), path, os.path.join(d, "inputs.json"), os.path.join(d, "ref.json")], capture_output=True,
                       text=True, env=env)
    if r.returncode:
        return report(name, False, "reference: " + r.stderr.strip()[-300:])
    r = subprocess.run([MNCC, path, "-o", os.path.join(d, "cg"), "--machine", "mncore2", "--cache-dir", "none"], capture_output=True, text=True)
    if r.returncode:
        return report(name, False, "mncc: " + r.stderr.strip()[-300:])
    app = os.path.join(d, "cg", "model.app")
    if not os.path.exists(app):
        rep = json.load(open(os.path.join(d, "cg", "report.json")))
        return report(name, False, "no model.app: %s" % str(rep.get("artifacts", rep)).strip()[:300])
    r = subprocess.run([MNEMU, app, "--inputs", os.path.join(d, "in"), "-o", os.path.join(d, "res")], capture_output=True, text=True)
    if r.returncode:
        return report(name, False, "mnemu: " + r.stderr.strip()[-300:])
    worst = 0.0
    for k, ref in enumerate(json.load(open(os.path.join(d, "ref.json")))):
        want = np.array(ref["data"], np.float32).reshape(ref["dims"])
        got = nh.to_array(onnx.load_tensor(os.path.join(d, "res", "output_%d.pb" % k)))
        if got.shape != want.shape or not np.allclose(got, want, rtol=1e-3, atol=1e-5):
            return report(name, False, "output %s: max error %g" % (ref["name"], float(np.max(np.abs(got.astype(np.float64) - want))) if got.shape == want.shape else -1))
        worst = max(worst, float(np.max(np.abs(got.astype(np.float64) - want))) if want.size else 0.0)
    report(name, True, "(max error %.3g)" % worst)


models = sorted(os.path.join(dd, f) for dd in dirs for f in os.listdir(dd) if f.endswith(".onnx"))
if not models:
    print("real: no models under " + " ".join(dirs))
    sys.exit(1)
for p in models:
    one(p)
subprocess.run(["rm", "-rf", tmp])
print("real: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
