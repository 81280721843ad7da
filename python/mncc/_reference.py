"""What a compiled model's outputs are compared with (CompiledModel.check).

onnxruntime runs the very ONNX file mncc compiled (codegen_dir/model.onnx): through its
Python module when that is installed, else through onnxruntime-node (ort_ref.js, the
reference of the project's own test suites). A model that came from torch can instead be
compared with torch's forward on the same inputs. "auto" takes the first of these that
is available, in that order. A Comparison holds, per output, the largest absolute
difference and whether every element is within rtol and atol (numpy.allclose's rule)."""
import json
import os
import subprocess
import tempfile

import numpy as np

from . import _tools

# numpy -> onnxruntime-node's tensor type names (ort_ref.js)
_ORT_JS_TYPES = {"float32": "float32", "float64": "float64", "int8": "int8", "uint8": "uint8", "int16": "int16",
                 "uint16": "uint16", "int32": "int32", "uint32": "uint32", "int64": "int64", "bool": "bool"}


def _ort_python():
    try:
        import onnxruntime
    except ImportError:
        return None
    return onnxruntime


def available(torch_module):
    """the references that can run here, in the order "auto" tries them"""
    have = []
    if _ort_python() or _tools.node_runner():
        have.append("onnxruntime")
    if torch_module is not None:
        have.append("torch")
    return have


def onnxruntime_outputs(onnx_path, names, inputs):
    ort = _ort_python()
    if ort:
        s = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
        return s.run(None, dict(zip(names, inputs)))
    runner = _tools.node_runner()
    if not runner:
        raise RuntimeError("mncc: no onnxruntime here (neither the Python module nor node with onnxruntime-node; "
                           "set MNCC_NODE_MODULES to a node_modules holding it)")
    node, modules = runner
    feeds = []
    for n, x in zip(names, inputs):
        kind = _ORT_JS_TYPES.get(x.dtype.name)
        if not kind:
            raise TypeError("mncc: onnxruntime-node takes no %s input ('%s')" % (x.dtype, n))
        feeds.append(dict(name=n, dims=list(x.shape), type=kind, data=x.ravel().tolist()))
    with tempfile.TemporaryDirectory(prefix="mncc-ref-") as d:
        fi, fo = os.path.join(d, "inputs.json"), os.path.join(d, "ref.json")
        with open(fi, "w") as f:
            json.dump(feeds, f)
        r = subprocess.run([node, _tools.ORT_REF_JS, onnx_path, fi, fo], capture_output=True, text=True,
                           env=dict(os.environ, NODE_PATH=modules))
        if r.returncode:
            raise RuntimeError("mncc: onnxruntime failed: " + (r.stderr.strip().splitlines() or ["?"])[-1])
        outs = json.load(open(fo))
    return [np.array(o["data"], dtype=o.get("type", "float32") if o.get("type") in _ORT_JS_TYPES else np.float32)
            .reshape(o["dims"]) for o in outs]


class Comparison:
    """mncc's outputs (.values, numpy) against a reference's: truthy when every output agrees; .outputs holds each
    one's name, max_abs_error and ok"""

    def __init__(self, reference, names, got, want, rtol, atol, cycles):
        self.reference, self.rtol, self.atol, self.cycles = reference, rtol, atol, cycles
        self.values = list(got)
        self.outputs = []
        for n, g, w in zip(names, got, want):
            g, w = np.asarray(g), np.asarray(w)
            if g.shape != w.shape:
                self.outputs.append(dict(name=n, ok=False, max_abs_error=None,
                                         why="shape %s, %s %s" % (list(g.shape), reference, list(w.shape))))
                continue
            gd, wd = g.astype(np.float64), w.astype(np.float64)
            err = float(np.max(np.abs(gd - wd))) if g.size else 0.0
            ok = bool(np.allclose(gd, wd, rtol=rtol, atol=atol, equal_nan=True))
            self.outputs.append(dict(name=n, ok=ok, max_abs_error=err, why=None))
        if len(got) != len(want):
            self.outputs.append(dict(name="(count)", ok=False, max_abs_error=None,
                                     why="%d outputs, %s %d" % (len(got), reference, len(want))))
        self.ok = all(o["ok"] for o in self.outputs)

    def __bool__(self):
        return self.ok

    def __str__(self):
        head = "%s against %s (rtol %g, atol %g), %s cycles" % (
            "agrees" if self.ok else "DISAGREES", self.reference, self.rtol, self.atol, self.cycles)
        lines = ["  %s %s: %s" % ("ok  " if o["ok"] else "FAIL", o["name"],
                                  o["why"] or "max |error| %.3g" % o["max_abs_error"]) for o in self.outputs]
        return "\n".join([head] + lines)

    __repr__ = __str__
