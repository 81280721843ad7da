#!/usr/bin/python3
"""A conv net whose tail of Pad+Slice pairs, each with other pads, makes gather tables
(new graph values) late in Code Emit, after the linker's workers have taken parts.
    late_tables.py CONV_NODES PAIRS OUT.onnx"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import numpy as np, onnx
from onnx import helper, TensorProto
from gen_graph import Builder, build_convnet

nodes, pairs, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
m = onnx.ModelProto(ir_version=7, producer_name="mncc-tsan")
m.opset_import.add(domain="", version=13)
m.graph.name = "late_tables"
b = Builder(m.graph)
cur, shape = build_convnet(b, nodes, 256)
for i in range(pairs):
    pads = b.init("pads%d" % i, np.array([0, 0, i % 3 + 1, (i // 3) % 3, 0, 0, (i // 9) % 3, 1], np.int64))
    padded = b.node("Pad", [cur, pads])
    starts = b.init("starts%d" % i, np.array([0, 0, i % 3 + 1, (i // 3) % 3], np.int64))
    ends = b.init("ends%d" % i, np.array([1, 4, i % 3 + 9, (i // 3) % 3 + 8], np.int64))
    cur = b.node("Slice", [padded, starts, ends])
b.node("Relu", [cur])
b.graph.node[-1].output[0] = "y"
b.graph.input.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, shape))
b.graph.output.append(helper.make_tensor_value_info("y", TensorProto.FLOAT, shape))
onnx.save(m, out)
