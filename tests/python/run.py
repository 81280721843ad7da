#!/usr/bin/python3
"""The Python entry point (python/mncc) without torch: ONNX models built with onnx.helper
compiled through mncc.compile and run through CompiledModel on the build's mncc and
mnemu, their outputs against numpy's (and onnxruntime's with --ort, which make real
gives it). usage: run.py BUILD_DIR [--ort]   Ends with `N passed, M failed`."""
import os
import shutil
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
import mncc  # noqa: E402

BUILD = sys.argv[1]
ORT = "--ort" in sys.argv[2:]
os.environ["MNCC"], os.environ["MNEMU"] = os.path.join(BUILD, "mncc"), os.path.join(BUILD, "mnemu")
tmp = tempfile.mkdtemp(prefix="mncc-pytest-")
os.environ["XDG_CACHE_HOME"] = os.path.join(tmp, "cache")  # default codegen dirs and Node Simulation's cache
rng = np.random.default_rng(7)
W1, B1 = rng.standard_normal((16, 32)).astype(np.float32) / 4, rng.standard_normal(32).astype(np.float32)
W2, B2 = rng.standard_normal((32, 10)).astype(np.float32) / 4, rng.standard_normal(10).astype(np.float32)
TABLE = rng.standard_normal((100, 32)).astype(np.float32)
passed = failed = 0


def mlp():
    """x [N, 16] -> hidden relu(x W1 + b1) [N, 32] and softmax(hidden W2 + b2) [N, 10]: a dynamic batch"""
    nodes = [h.make_node("MatMul", ["x", "W1"], ["m1"], name="mm1"), h.make_node("Add", ["m1", "b1"], ["a1"]),
             h.make_node("Relu", ["a1"], ["hidden"], name="relu"), h.make_node("MatMul", ["hidden", "W2"], ["m2"]),
             h.make_node("Add", ["m2", "b2"], ["a2"]), h.make_node("Softmax", ["a2"], ["probs"], axis=-1)]
    inits = [nh.from_array(a, n) for a, n in ((W1, "W1"), (B1, "b1"), (W2, "W2"), (B2, "b2"))]
    g = h.make_graph(nodes, "mlp", [h.make_tensor_value_info("x", T.FLOAT, ["N", 16])],
                     [h.make_tensor_value_info("probs", T.FLOAT, ["N", 10]),
                      h.make_tensor_value_info("hidden", T.FLOAT, ["N", 32])], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def mlp_ref(x):
    hid = np.maximum(x.astype(np.float64) @ W1 + B1, 0)
    z = hid @ W2 + B2
    e = np.exp(z - z.max(-1, keepdims=True))
    return [e / e.sum(-1, keepdims=True), hid]


def embedding():
    """token ids [2, 5] (int64) -> rows of a 100-row table, scaled by s [2, 5, 1]"""
    nodes = [h.make_node("Gather", ["table", "ids"], ["rows"], name="embed"), h.make_node("Mul", ["rows", "s"], ["y"])]
    g = h.make_graph(nodes, "embedding", [h.make_tensor_value_info("ids", T.INT64, [2, 5]),
                                          h.make_tensor_value_info("s", T.FLOAT, [2, 5, 1])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2, 5, 32])], [nh.from_array(TABLE, "table")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def unsupported():
    g = h.make_graph([h.make_node("NoSuchOp", ["x"], ["y"], name="weird")], "bad",
                     [h.make_tensor_value_info("x", T.FLOAT, [2])], [h.make_tensor_value_info("y", T.FLOAT, [2])])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def case(name, fn):
    global passed, failed
    try:
        fn()
        passed += 1
        print("ok python " + name, flush=True)
    except Exception as e:  # a failed assertion or an unexpected exception: the case fails, with its reason
        failed += 1
        print("FAIL python %s: %s: %s" % (name, type(e).__name__, e), flush=True)


def close(got, want, what):
    assert len(got) == len(want), "%s: %d outputs, want %d" % (what, len(got), len(want))
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, "%s: output %d shape %s, want %s" % (what, k, g.shape, w.shape)
        assert np.allclose(g, w, rtol=1e-3, atol=1e-4), "%s: output %d off by %g" % (what, k, np.abs(g - w).max())


X = rng.standard_normal((3, 16)).astype(np.float32)
D = os.path.join(tmp, "mlp")


def t_compile_run():
    m = mncc.compile(mlp(), (X,), codegen_dir=D)
    assert m.inputs == [{"name": "x", "dtype": "FLOAT32", "shape": [3, 16]}], m.inputs
    assert [o["name"] for o in m.outputs] == ["probs", "hidden"], m.outputs
    assert m.report["status"] == "ok" and m.report["input_shapes"] == {"x": [3, 16]}, m.report["input_shapes"]
    assert m.reused is False and os.path.exists(m.app_path)
    probs, hid = m(X)
    close([probs, hid], mlp_ref(X), "mlp")
    assert probs.dtype == np.float32 and m.cycles > 0 and m.stats["cycles"] == m.cycles, m.stats
    close(list(m(X[::-1].copy())), mlp_ref(X[::-1]), "mlp, other inputs")  # the program, not a stored answer
    cycles = m.cycles
    one = m.run(X, threads=1)  # mnemu on one thread: the same outputs and cycles
    assert all(np.array_equal(a, b) for a, b in zip(one, m(X))) and m.cycles == cycles, (m.cycles, cycles)


def t_check():
    m = mncc.CompiledModel(D)  # a finished compile, opened again
    c = m.check(X, reference=mlp_ref)
    assert c and c.ok and c.reference == "mlp_ref" and len(c.outputs) == 2, c
    bad = m.check(X, reference=lambda x: [r + 0.01 for r in mlp_ref(x)])
    assert not bad and "DISAGREES" in str(bad), bad


def t_reuse():
    a = os.stat(os.path.join(D, "model.app")).st_mtime_ns
    m = mncc.compile(mlp(), (X,), codegen_dir=D)
    assert m.reused and os.stat(m.app_path).st_mtime_ns == a, "an unchanged compile was redone"
    m = mncc.compile(mlp(), (X,), codegen_dir=D, scheduler="always_from_dram")
    assert not m.reused and m.report["options"]["scheduler"]["value"] == "always_from_dram"
    close(list(m(X)), mlp_ref(X), "mlp, always_from_dram")
    shutil.copytree(D, D + "2")
    m = mncc.compile(mlp(), (X[:2],), codegen_dir=D + "2", scheduler="always_from_dram")  # another batch
    assert not m.reused and m.inputs[0]["shape"] == [2, 16]
    close(list(m(X[:2])), mlp_ref(X[:2]), "mlp, batch 2")


def t_path_and_default_dir():
    p = os.path.join(tmp, "mlp.onnx")
    onnx.save(mlp(), p)
    m = mncc.compile(p, X, preset="O1")  # one example alone; no codegen_dir: one under XDG_CACHE_HOME
    assert m.codegen_dir.startswith(os.path.join(tmp, "cache", "mncc", "compiled")), m.codegen_dir
    close(list(m(X)), mlp_ref(X), "mlp from a path")
    again = mncc.compile(p, X, preset="O1")
    assert again.reused and again.codegen_dir == m.codegen_dir
    other = mncc.compile(p, X, preset="O2")
    assert other.codegen_dir != m.codegen_dir and not other.reused


def t_embedding():
    ids = [[1, 99, 0, 42, 7], [5, 5, 63, 64, 98]]  # a list: numpy's int64
    s = rng.standard_normal((2, 5, 1)).astype(np.float32)
    m = mncc.compile(embedding(), codegen_dir=os.path.join(tmp, "embed"))
    assert m.inputs[0]["dtype"] == "INT64"
    y = m.run(ids, s, strict=True)
    close([y], [TABLE[np.array(ids)] * s], "embedding")


def t_errors():
    try:
        mncc.compile(unsupported(), codegen_dir=os.path.join(tmp, "bad"))
        raise AssertionError("no CompileError")
    except mncc.CompileError as e:
        assert "NoSuchOp" in e.message and "'weird'" in e.message and "\n" not in e.message, e.message
        assert e.codegen_dir == os.path.join(tmp, "bad") and os.path.join(tmp, "bad", "model.onnx") in e.message
    m = mncc.CompiledModel(D)
    for args, kind in (((X[:, :8],), ValueError), ((X.astype(np.int32),), TypeError), ((X, X), TypeError)):
        try:
            m(*args)
            raise AssertionError("no %s" % kind.__name__)
        except kind:
            pass
    try:
        mncc.compile(embedding(), (np.zeros((2, 6), np.int64), np.zeros((2, 6, 1), np.float32)))
        raise AssertionError("no ValueError for examples of other shapes than the model's")
    except ValueError as e:
        assert "'ids'" in str(e), e


def t_onnxruntime():
    m = mncc.CompiledModel(D)
    c = m.check(X, reference="onnxruntime")
    assert c and c.reference == "onnxruntime", c


for name, fn in (("compile-run", t_compile_run), ("check", t_check), ("reuse", t_reuse),
                 ("path-default-dir", t_path_and_default_dir), ("embedding", t_embedding), ("errors", t_errors)):
    case(name, fn)
if ORT:
    case("onnxruntime", t_onnxruntime)
shutil.rmtree(tmp, ignore_errors=True)
print("python: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
