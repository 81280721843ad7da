"""mncc.compile: a model (torch module or function, ONNX file, onnx.ModelProto) through
the mncc program into a codegen directory, as a CompiledModel.

The compile is `mncc MODEL -o DIR --preset P --machine M --if-changed` with every
keyword option as -O key=value: a directory that already holds a finished compile of the
same model bytes, options, machine and compiler is kept as it is (.reused). Without a
codegen_dir the directory is named by a hash of the model's bytes and the command line,
under $XDG_CACHE_HOME/mncc/compiled (else ~/.cache/mncc/compiled), so that compiling an
unchanged model again costs one hash. Dynamic dims of an ONNX model's inputs are bound
to the example inputs' shapes (--input-shape); a torch model is exported with exactly
those shapes."""
import hashlib
import os
import shutil
import subprocess
import tempfile
import time

from . import _tensors, _tools
from ._model import CompiledModel, CompileError


def _examples(example_inputs):
    if example_inputs is None:
        return ()
    if isinstance(example_inputs, (tuple, list)):
        return tuple(example_inputs)
    return (example_inputs,)


def _shape_args(proto, examples):
    """--input-shape for every graph input with a dim the model leaves open, from the examples"""
    inits = {t.name for t in proto.graph.initializer}
    ins = [vi for vi in proto.graph.input if vi.name not in inits]
    if len(ins) != len(examples):
        raise ValueError("mncc.compile: the model takes %d inputs (%s), %d examples given" % (
            len(ins), ", ".join(vi.name for vi in ins), len(examples)))
    args = []
    for k, (vi, x) in enumerate(zip(ins, examples)):
        shape = list(_tensors.to_numpy(x).shape)
        dims = vi.type.tensor_type.shape.dim
        declared = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else None for d in dims]
        if len(declared) != len(shape) or any(d is not None and d != s for d, s in zip(declared, shape)):
            raise ValueError("mncc.compile: example %d ('%s') has shape %s, the model declares %s" % (
                k, vi.name, shape, [d if d is not None else "?" for d in declared]))
        if None in declared:
            args += ["--input-shape", "%s=%s" % (vi.name, ",".join(str(s) for s in shape))]
    return args


def _option_args(options):
    args = []
    for k in sorted(options):
        v = options[k]
        args += ["-O", "%s=%s" % (k, ("true" if v else "false") if isinstance(v, bool) else v)]
    return args


def _default_dir(model_path, cmd):
    h = hashlib.sha256()
    with open(model_path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    h.update("\0".join(cmd).encode())
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(root, "mncc", "compiled", h.hexdigest()[:20])


def compile(model, example_inputs=None, codegen_dir=None, preset="O2", machine="mncore2", *, opset=17,
            input_names=None, output_names=None, cache_dir=None, **options):
    """Compiles model for machine and returns a CompiledModel.

    model: a torch.nn.Module or a function of tensors (exported with torch.onnx at opset, on example_inputs, which it
    needs), a path to an ONNX file, or an onnx.ModelProto. example_inputs: a tuple of arrays or tensors (one may be
    given alone); for ONNX models they bind the inputs' dynamic dims. preset: a name under presets/ or a path.
    cache_dir: Node Simulation's cache (mncc --cache-dir; "none" for no cache). Every other keyword is a compiler
    option (mncc --help lists them), e.g. scheduler="spill_opt", float_dtype="mixed".
    Raises CompileError (with mncc's one-line reason and the codegen_dir) when mncc refuses the model."""
    examples = _examples(example_inputs)
    tmp = tempfile.mkdtemp(prefix="mncc-py-")
    try:
        module, shape_args = None, []
        if isinstance(model, (str, os.PathLike)):
            path = os.fspath(model)
            if examples:
                import onnx
                shape_args = _shape_args(onnx.load(path, load_external_data=False), examples)
        elif hasattr(model, "graph") and hasattr(model, "SerializeToString"):  # an onnx.ModelProto
            import onnx
            path = os.path.join(tmp, "model.onnx")
            onnx.save(model, path)
            if examples:
                shape_args = _shape_args(model, examples)
        elif callable(model):
            if not examples:
                raise ValueError("mncc.compile: a torch model needs example_inputs (their shapes are the model's)")
            from ._export import export_torch
            path, module = os.path.join(tmp, "model.onnx"), model
            export_torch(model, examples, path, opset, input_names, output_names)
        else:
            raise TypeError("mncc.compile: a torch.nn.Module, a function, an ONNX path or an onnx.ModelProto, not %s"
                            % type(model).__name__)
        cmd = ["--preset", preset, "--machine", machine] + shape_args + _option_args(options)
        if cache_dir is not None:
            cmd += ["--cache-dir", os.fspath(cache_dir)]
        out = os.path.abspath(codegen_dir) if codegen_dir else _default_dir(path, cmd)
        report = os.path.join(out, "report.json")
        before = os.stat(report).st_mtime_ns if os.path.exists(report) else None
        t0 = time.monotonic()
        r = subprocess.run([_tools.program("mncc"), path, "-o", out, "--if-changed", "--quiet"] + cmd,
                           capture_output=True, text=True)
        seconds = time.monotonic() - t0
        if r.returncode:
            lines = r.stderr.strip().splitlines() or ["mncc: exit %d" % r.returncode]
            msg = next((ln for ln in reversed(lines) if ln.startswith("mncc: error: ")), lines[-1])
            msg = msg.replace("mncc: error: ", "", 1)
            if path.startswith(tmp):  # the model the caller gave, as mncc copied it: the temporary export is gone
                msg = msg.replace(path, os.path.join(out, "model.onnx"))
            raise CompileError(msg, out, r.stderr, seconds)
        reused = before is not None and os.stat(report).st_mtime_ns == before
        return CompiledModel(out, torch_module=module, compile_seconds=seconds, reused=reused)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
