"""CompiledModel: a codegen directory with a model.app, run on mnemu like a function.

Calling it writes the inputs as input_K.pb (graph-input order, the element types and the
shapes report.json records for the compiled graph), runs `mnemu model.app` on them and
reads output_K.pb back: numpy arrays, or torch tensors when an input was one; one output
as itself, several as a tuple. Each run leaves its emulated cycles in .cycles and
mnemu's figures (steps, stalls, DRAM bytes ...) in .stats. The directory is read, never
written: a CompiledModel can be made again from any finished compile."""
import json
import os
import subprocess
import tempfile

import onnx
from onnx import numpy_helper

from . import _reference, _tensors, _tools


class CompileError(Exception):
    """mncc refused the model: .message is its one-line reason, .codegen_dir the directory whose report.json tells
    more, .compile_seconds how long mncc ran"""

    def __init__(self, message, codegen_dir, stderr="", compile_seconds=None):
        super().__init__("%s (codegen_dir %s)" % (message, codegen_dir))
        self.message, self.codegen_dir, self.stderr = message, codegen_dir, stderr
        self.compile_seconds = compile_seconds


class RunError(Exception):
    """mnemu stopped: .message is its reason"""

    def __init__(self, message):
        super().__init__(message)
        self.message = message


class CompiledModel:
    def __init__(self, codegen_dir, torch_module=None, compile_seconds=None, reused=None):
        self.codegen_dir = os.path.abspath(codegen_dir)
        self.app_path = os.path.join(self.codegen_dir, "model.app")
        self.onnx_path = os.path.join(self.codegen_dir, "model.onnx")
        with open(os.path.join(self.codegen_dir, "report.json")) as f:
            self.report = json.load(f)
        if self.report.get("status") != "ok":
            err = self.report.get("error", {}).get("message", "status " + str(self.report.get("status")))
            raise CompileError(err, self.codegen_dir)
        if not os.path.exists(self.app_path):
            raise CompileError("no model.app: " + str(self.report.get("model_app", "?")), self.codegen_dir)
        self.inputs = self.report["graph"]["inputs"]
        self.outputs = self.report["graph"]["outputs"]
        self.torch_module = torch_module  # the module a torch model came from: check's torch reference
        self.compile_seconds, self.reused = compile_seconds, reused
        self.cycles, self.stats = None, None

    def __repr__(self):
        sig = lambda vs: ", ".join("%s: %s%s" % (v["name"], v["dtype"].lower(), v.get("shape", "?")) for v in vs)
        return "<mncc.CompiledModel (%s) -> (%s) in %s>" % (sig(self.inputs), sig(self.outputs), self.codegen_dir)

    def __call__(self, *inputs):
        return self.run(*inputs)

    def _arrays(self, inputs):
        if len(inputs) != len(self.inputs):
            raise TypeError("mncc: the model takes %d inputs (%s), %d given" % (
                len(self.inputs), ", ".join(v["name"] for v in self.inputs), len(inputs)))
        return [_tensors.conform(x, want, k) for k, (x, want) in enumerate(zip(inputs, self.inputs))]

    def run_arrays(self, arrays, strict=False, threads=None):
        """the outputs (numpy, a list) of the program on arrays, which are as the graph's inputs declare"""
        with tempfile.TemporaryDirectory(prefix="mncc-run-") as d:
            ind, outd = os.path.join(d, "in"), os.path.join(d, "out")
            os.makedirs(ind)
            for k, (a, want) in enumerate(zip(arrays, self.inputs)):
                with open(os.path.join(ind, "input_%d.pb" % k), "wb") as f:
                    f.write(numpy_helper.from_array(a, want["name"]).SerializeToString())
            cmd = [_tools.program("mnemu"), self.app_path, "--inputs", ind, "-o", outd, "--json"]
            cmd += (["--strict"] if strict else []) + (["--threads", str(int(threads))] if threads is not None else [])
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode:
                raise RunError((r.stderr.strip().splitlines() or ["mnemu: exit %d" % r.returncode])[-1])
            self.stats = json.loads(r.stdout.strip().splitlines()[-1])
            self.cycles = self.stats["cycles"]
            return [numpy_helper.to_array(onnx.load_tensor(os.path.join(outd, "output_%d.pb" % k)))
                    for k in range(len(self.outputs))]

    def run(self, *inputs, strict=False, threads=None):
        """the outputs on inputs (numpy arrays, torch tensors or what numpy.asarray takes); strict=True runs mnemu
        --strict (memory starts undefined; a run stops where undefined data reaches an output); threads: mnemu's
        --threads (default one per core; the results are the same for any count)"""
        outs = _tensors.like_inputs(self.run_arrays(self._arrays(inputs), strict, threads), inputs)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def check(self, *inputs, rtol=1e-3, atol=1e-4, reference="auto", strict=True, threads=None):
        """runs the model on inputs and compares every output with a reference's: "onnxruntime", "torch" (a model
        compiled from torch), "auto" (the first of those available) or a function taking and returning numpy arrays.
        Returns a Comparison, truthy when all agree (numpy.allclose with rtol and atol)."""
        arrays = self._arrays(inputs)
        got = self.run_arrays(arrays, strict, threads)
        if callable(reference):
            want, name = reference(*arrays), getattr(reference, "__name__", "reference")
            want = list(want) if isinstance(want, (tuple, list)) else [want]
        else:
            have = _reference.available(self.torch_module)
            name = have[0] if reference == "auto" and have else reference
            if name not in have:
                raise RuntimeError("mncc: no %s reference here (available: %s)" % (reference, ", ".join(have) or
                                                                                   "none"))
            if name == "onnxruntime":
                want = _reference.onnxruntime_outputs(self.onnx_path, [v["name"] for v in self.inputs], arrays)
            else:
                from ._export import torch_outputs
                want = torch_outputs(self.torch_module, arrays)
        return _reference.Comparison(name, [v["name"] for v in self.outputs], got, want, rtol, atol, self.cycles)
