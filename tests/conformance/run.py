#!/usr/bin/python3
"""Conformance: compile ONNX backend test models with mncc, run every test_data_set_N
with mnemu, and compare every output_K.pb with the reference.

Usage: run.py [--mncc PATH] [--mnemu PATH] [--machine NAME] [-O KEY=VALUE ...]
              [--json OUT.json] [--only REGEX] [--table] DIR [DIR ...]

Each DIR holds test directories (model.onnx + test_data_set_N/). A test is
  passed    every output of every data set matches (rtol 1e-3, atol 1e-7 with
            float_dtype=float; rtol 2e-2, atol 1e-3 with mixed, whose products are half);
  failed    some output differs (a wrong answer);
  rejected  mncc refuses the model cleanly (an unsupported op or dtype, too large for
            the machine, or ops the code emitter does not cover yet: no model.app),
            with the reason;
  crashed   mncc or mnemu died, or reported an internal error.
With --freeze, a test rejected only because some input must be known at compile time
(mncc needs static shapes: a Reshape's shape, a Trilu's k) is tried again with every
small integer graph input (at most 16 elements) frozen to its data set's value
(`mncc --input-value`, one compile per data set): such a test is "frozen-passed" or
"failed", counted apart from passed.
The last line is "conformance: N passed, M failed" with M = failed + crashed (rejected are
counted apart).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper


def load(path):
    return numpy_helper.to_array(onnx.load_tensor(path))


def close(got, want, rtol, atol):
    if got.shape != want.shape:
        return False, "shape %s, expected %s" % (got.shape, want.shape)
    if want.dtype.kind in "fc":
        g, w = got.astype(np.float64), want.astype(np.float64)
        ok = np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        return ok, "" if ok else "max abs error %.3g" % np.nanmax(np.abs(g - w))
    ok = np.array_equal(got, want)
    return ok, "" if ok else "values differ"


FREEZE_WHY = ("must be computable at compile time", "computed at run time")


def frozen_inputs(model):
    """the graph inputs --freeze binds: tensors of at most 16 integers or booleans (a Loop's
    trip count and condition), or of floats that only give a Resize its scales or region of
    interest (what shapes depend on)"""
    g = onnx.load(model, load_external_data=False).graph
    inits = {i.name for i in g.initializer}
    ints = {onnx.TensorProto.INT32, onnx.TensorProto.INT64, onnx.TensorProto.BOOL}
    uses = {}
    for n in g.node:
        for k, x in enumerate(n.input):
            uses.setdefault(x, []).append(n.op_type in ("Resize", "Upsample") and k >= 1)
    shape_floats = {x for x, u in uses.items() if all(u)}
    names = []
    for k, i in enumerate(v for v in g.input if v.name not in inits):
        t = i.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else -1 for d in t.shape.dim]
        shaping = t.elem_type in ints or (t.elem_type == onnx.TensorProto.FLOAT and i.name in shape_floats)
        if shaping and all(x >= 0 for x in dims) and int(np.prod(dims)) <= 16:
            names.append((k, i.name))
    return names


def run_frozen(args, d, tmp):
    """the test again with the small integer inputs frozen, one compile per data set"""
    model = os.path.join(d, "model.onnx")
    fz = frozen_inputs(model)
    if not fz:
        return None
    sets = sorted(s for s in os.listdir(d) if s.startswith("test_data_set_"))
    for s in sets:
        sd = os.path.join(tmp, "frozen_" + s)
        os.makedirs(os.path.join(sd, "in"))
        extra, skip = [], {k for k, _ in fz}
        for k, name in fz:
            extra += ["--input-value", "%s=%s" % (name, os.path.join(d, s, "input_%d.pb" % k))]
        j, k = 0, 0
        while os.path.exists(os.path.join(d, s, "input_%d.pb" % k)):  # the others, numbered again
            if k not in skip:
                shutil.copyfile(os.path.join(d, s, "input_%d.pb" % k), os.path.join(sd, "in", "input_%d.pb" % j))
                j += 1
            k += 1
        cls, why = run_test(args, d, sd, extra, [s], os.path.join(sd, "in"))
        if cls != "passed":
            return cls, "frozen %s: %s" % (", ".join(n for _, n in fz), why)
    return "frozen-passed", "frozen " + ", ".join(n for _, n in fz)


def run_test(args, d, tmp, extra=(), sets=None, inputs=None):
    model = os.path.join(d, "model.onnx")
    out = os.path.join(tmp, "cg")
    cmd = [args.mncc, model, "-o", out, "--machine", args.machine, "--cache-dir", os.path.join(tmp, "..", "simcache")] + list(extra)
    for o in args.O:
        cmd += ["-O", o]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        msg = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "exit %d" % p.returncode
        if p.returncode != 1 or "internal error" in msg:
            return "crashed", msg
        return "rejected", msg.replace(model, "model.onnx")
    rep = json.load(open(os.path.join(out, "report.json")))
    if not os.path.exists(os.path.join(out, "model.app")):
        return "rejected", "no model.app: " + rep.get("model_app", "?")
    mixed = any(o == "float_dtype=mixed" for o in args.O)
    rtol, atol = (2e-2, 1e-3) if mixed else (1e-3, 1e-7)
    sets = sets or sorted(s for s in os.listdir(d) if s.startswith("test_data_set_"))
    for s in sets:
        res = os.path.join(tmp, "out_" + s)
        e = subprocess.run([args.mnemu, os.path.join(out, "model.app"), "--inputs", inputs or os.path.join(d, s), "-o", res], capture_output=True, text=True)
        if e.returncode != 0:
            return "crashed", "mnemu: " + (e.stderr.strip().splitlines()[-1] if e.stderr.strip() else "exit %d" % e.returncode)
        k = 0
        while os.path.exists(os.path.join(d, s, "output_%d.pb" % k)):
            ok, why = close(load(os.path.join(res, "output_%d.pb" % k)), load(os.path.join(d, s, "output_%d.pb" % k)), rtol, atol)
            if not ok:
                return "failed", "%s output %d: %s" % (s, k, why)
            k += 1
    return "passed", ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mncc", default="build/mncc")
    ap.add_argument("--mnemu", default="build/mnemu")
    ap.add_argument("--machine", default="mncore2")
    ap.add_argument("-O", action="append", default=[])
    ap.add_argument("--json")
    ap.add_argument("--only")
    ap.add_argument("--freeze", action="store_true", help="try tests that need an input at compile time with it frozen")
    ap.add_argument("--table", action="store_true", help="print a line per test")
    ap.add_argument("dirs", nargs="+")
    args = ap.parse_args()
    only = re.compile(args.only) if args.only else None
    results = []
    with tempfile.TemporaryDirectory() as top:
        for root in args.dirs:
            for t in sorted(os.listdir(root)):
                d = os.path.join(root, t)
                if not os.path.isfile(os.path.join(d, "model.onnx")) or (only and not only.search(t)):
                    continue
                tmp = os.path.join(top, "t")
                os.makedirs(tmp, exist_ok=True)
                cls, why = run_test(args, d, tmp)
                if args.freeze and cls == "rejected" and any(w in why for w in FREEZE_WHY):
                    cls, why = run_frozen(args, d, tmp) or (cls, why)
                subprocess.run(["rm", "-rf", tmp])
                results.append({"test": os.path.join(os.path.basename(root), t), "result": cls, "reason": why})
                if args.table or cls in ("failed", "crashed"):
                    print("%-9s %s %s" % (cls, results[-1]["test"], why))
    count = {k: sum(r["result"] == k for r in results) for k in ("passed", "failed", "rejected", "crashed", "frozen-passed")}
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": args.machine, "options": args.O, "counts": count, "tests": results}, f, indent=1)
    print("conformance (%s%s): %d passed, %d failed, %d crashed, %d rejected" % (args.machine, "".join(" -O " + o for o in args.O), count["passed"],
          count["failed"], count["crashed"], count["rejected"]) + (", %d passed with inputs frozen" % count["frozen-passed"] if args.freeze else ""))
    print("conformance: %d passed, %d failed" % (count["passed"], count["failed"] + count["crashed"]))
    return 0 if count["failed"] + count["crashed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
