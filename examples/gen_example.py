#!/usr/bin/python3
"""Writes examples/mlp.onnx, the model `make demo` compiles: a 3-layer MLP on a
dynamic batch, with the Shape -> Gather -> Concat -> Reshape flatten that PyTorch
exports, so the demo shows shape binding and constant folding. Deterministic."""
import os, sys
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

rng = np.random.default_rng(1234)
def w(name, *shape):
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.1).astype(np.float32), name)

inits = [w("W1", 16, 64), w("b1", 64), w("W2", 64, 64), w("b2", 64), w("W3", 64, 10), w("b3", 10),
         numpy_helper.from_array(np.array([0], np.int64), "zero"),
         numpy_helper.from_array(np.array([-1], np.int64), "minus1")]
nodes = [
    helper.make_node("Shape", ["x"], ["xs"], name="shape"),
    helper.make_node("Gather", ["xs", "zero"], ["batch"], name="batch", axis=0),
    helper.make_node("Concat", ["batch", "minus1"], ["flat_shape"], name="flat_shape", axis=0),
    helper.make_node("Reshape", ["x", "flat_shape"], ["xf"], name="flatten"),
    helper.make_node("MatMul", ["xf", "W1"], ["h1m"], name="fc1"),
    helper.make_node("Add", ["h1m", "b1"], ["h1b"], name="fc1_bias"),
    helper.make_node("Relu", ["h1b"], ["h1"], name="relu1"),
    helper.make_node("MatMul", ["h1", "W2"], ["h2m"], name="fc2"),
    helper.make_node("Add", ["h2m", "b2"], ["h2b"], name="fc2_bias"),
    helper.make_node("Relu", ["h2b"], ["h2"], name="relu2"),
    helper.make_node("MatMul", ["h2", "W3"], ["h3m"], name="fc3"),
    helper.make_node("Add", ["h3m", "b3"], ["logits"], name="fc3_bias"),
    helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
]
g = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4, 4])],
                      [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", 10])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="mncc-example")
m.ir_version = 8
onnx.checker.check_model(m, full_check=True)
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "mlp.onnx")
onnx.save(m, out)
