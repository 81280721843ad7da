#!/usr/bin/python3
"""Generate a large static-shape ONNX graph for benchmarking mncc.

Usage: /usr/bin/python3 bench/gen_graph.py KIND NODES OUT.onnx [--weights N]

KIND is convnet, transformer or mlp; the graph has exactly NODES nodes (whole
blocks, then Relu nodes to make up the count).  Weights are small
deterministic tensors; the blocks cycle through a pool of N distinct weight
sets (default 256, 0 = a distinct set for every block) so that the file stays
a few MB at 100k nodes.  Weights are scaled down so that activations stay
finite through thousands of residual blocks.

  convnet      x[1,4,8,8]; block = Conv3x3 -> BatchNormalization -> Relu ->
               Conv3x3 -> BatchNormalization -> Add(residual) -> Relu (7 nodes)
  mlp          x[64,64]; block = MatMul(64x64) -> Add(bias) -> Relu (3 nodes)
  transformer  x[1,4,8] (seq 4, dim 8, 2 heads, ffn 16); block = LayerNorm
               from primitives, Q/K/V MatMul, Reshape/Transpose to heads,
               MatMul, Div, Softmax, MatMul, Transpose, Reshape, output
               MatMul, residual Add, LayerNorm, MatMul/Add/Relu/MatMul/Add
               feed-forward, residual Add (41 nodes)
"""
import argparse
import sys
import time

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, helper, numpy_helper


def ints_attr(name, values):
    a = AttributeProto(name=name, type=AttributeProto.INTS)
    a.ints.extend(values)
    return a


def int_attr(name, value):
    return AttributeProto(name=name, type=AttributeProto.INT, i=value)


def float_attr(name, value):
    return AttributeProto(name=name, type=AttributeProto.FLOAT, f=value)


class Builder:
    def __init__(self, graph):
        self.graph = graph
        self.count = 0
        self.vals = 0

    def val(self):
        self.vals += 1
        return "v%d" % self.vals

    def node(self, op, inputs, attrs=(), out=None):
        n = self.graph.node.add()
        n.op_type = op
        n.name = "n%d" % self.count
        self.count += 1
        n.input.extend(inputs)
        out = out or self.val()
        n.output.append(out)
        for a in attrs:
            n.attribute.append(a)
        return out

    def init(self, name, arr):
        self.graph.initializer.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name


def weights(seed, shape, scale):
    """Deterministic small values: a fixed-seed generator per weight set."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def pool_index(block, pool):
    return block if pool == 0 else block % pool


BLOCK_NODES = {"convnet": 7, "transformer": 41, "mlp": 3}


def build_convnet(b, nodes, pool):
    C, H, W = 4, 8, 8
    pads = ints_attr("pads", [1, 1, 1, 1])
    kernel = ints_attr("kernel_shape", [3, 3])
    eps = float_attr("epsilon", 1e-5)
    made = {}

    def wset(i):
        if i not in made:
            p = "w%d_" % i
            names = {}
            for j in (0, 1):
                names["cw%d" % j] = b.init(p + "cw%d" % j, weights(i * 10 + j, [C, C, 3, 3], 0.02))
                names["cb%d" % j] = b.init(p + "cb%d" % j, weights(i * 10 + 2 + j, [C], 0.01))
                names["s%d" % j] = b.init(p + "s%d" % j, np.full([C], 0.05, np.float32))
                names["b%d" % j] = b.init(p + "b%d" % j, weights(i * 10 + 4 + j, [C], 0.01))
                names["m%d" % j] = b.init(p + "m%d" % j, weights(i * 10 + 6 + j, [C], 0.01))
                names["v%d" % j] = b.init(p + "v%d" % j, np.full([C], 1.0, np.float32))
            made[i] = names
        return made[i]

    cur = "x"
    blocks = nodes // BLOCK_NODES["convnet"]
    for k in range(blocks):
        w = wset(pool_index(k, pool))
        t = cur
        for j in (0, 1):
            t = b.node("Conv", [t, w["cw%d" % j], w["cb%d" % j]], [kernel, pads])
            t = b.node("BatchNormalization", [t, w["s%d" % j], w["b%d" % j], w["m%d" % j], w["v%d" % j]], [eps])
            if j == 0:
                t = b.node("Relu", [t])
        t = b.node("Add", [t, cur])
        cur = b.node("Relu", [t])
    return cur, [1, C, H, W]


def build_mlp(b, nodes, pool):
    B, D = 64, 64
    made = {}

    def wset(i):
        if i not in made:
            made[i] = (b.init("w%d_w" % i, weights(i * 2, [D, D], 0.5 / np.sqrt(D))), b.init("w%d_b" % i, weights(i * 2 + 1, [D], 0.01)))
        return made[i]

    cur = "x"
    for k in range(nodes // BLOCK_NODES["mlp"]):
        w, bias = wset(pool_index(k, pool))
        cur = b.node("Relu", [b.node("Add", [b.node("MatMul", [cur, w]), bias])])
    return cur, [B, D]


def build_transformer(b, nodes, pool):
    S, D, NH, DH, F = 4, 8, 2, 4, 16
    axes_last = ints_attr("axes", [-1])
    keep = int_attr("keepdims", 1)
    perm_q = ints_attr("perm", [0, 2, 1, 3])
    perm_k = ints_attr("perm", [0, 2, 3, 1])
    smax = int_attr("axis", -1)
    heads = b.init("heads_shape", np.array([1, S, NH, DH], np.int64))
    model_shape = b.init("model_shape", np.array([1, S, D], np.int64))
    eps = b.init("eps", np.array(1e-5, np.float32))
    two = b.init("two", np.array(2.0, np.float32))
    sqrt_dk = b.init("sqrt_dk", np.array(np.sqrt(DH), np.float32))
    made = {}

    def wset(i):
        if i not in made:
            p = "w%d_" % i
            s = i * 20
            made[i] = {
                "q": b.init(p + "q", weights(s + 0, [D, D], 0.3)),
                "k": b.init(p + "k", weights(s + 1, [D, D], 0.3)),
                "v": b.init(p + "v", weights(s + 2, [D, D], 0.3)),
                "o": b.init(p + "o", weights(s + 3, [D, D], 0.02)),
                "g1": b.init(p + "g1", 1.0 + weights(s + 4, [D], 0.05)),
                "b1": b.init(p + "b1", weights(s + 5, [D], 0.05)),
                "g2": b.init(p + "g2", 1.0 + weights(s + 6, [D], 0.05)),
                "b2": b.init(p + "b2", weights(s + 7, [D], 0.05)),
                "f1": b.init(p + "f1", weights(s + 8, [D, F], 0.3)),
                "fb1": b.init(p + "fb1", weights(s + 9, [F], 0.05)),
                "f2": b.init(p + "f2", weights(s + 10, [F, D], 0.02)),
                "fb2": b.init(p + "fb2", weights(s + 11, [D], 0.01)),
            }
        return made[i]

    def layernorm(t, g, beta):  # 9 nodes
        mu = b.node("ReduceMean", [t], [axes_last, keep])
        d = b.node("Sub", [t, mu])
        d2 = b.node("Pow", [d, two])
        var = b.node("ReduceMean", [d2], [axes_last, keep])
        ve = b.node("Add", [var, eps])
        sd = b.node("Sqrt", [ve])
        n = b.node("Div", [d, sd])
        n = b.node("Mul", [n, g])
        return b.node("Add", [n, beta])

    cur = "x"
    blocks = nodes // BLOCK_NODES["transformer"]
    for k in range(blocks):
        w = wset(pool_index(k, pool))
        ln = layernorm(cur, w["g1"], w["b1"])
        q = b.node("MatMul", [ln, w["q"]])
        kk = b.node("MatMul", [ln, w["k"]])
        v = b.node("MatMul", [ln, w["v"]])
        q = b.node("Transpose", [b.node("Reshape", [q, heads])], [perm_q])
        kk = b.node("Transpose", [b.node("Reshape", [kk, heads])], [perm_k])
        v = b.node("Transpose", [b.node("Reshape", [v, heads])], [perm_q])
        sc = b.node("MatMul", [q, kk])
        sc = b.node("Div", [sc, sqrt_dk])
        pr = b.node("Softmax", [sc], [smax])
        ctx = b.node("MatMul", [pr, v])
        ctx = b.node("Transpose", [ctx], [perm_q])
        ctx = b.node("Reshape", [ctx, model_shape])
        att = b.node("MatMul", [ctx, w["o"]])
        res = b.node("Add", [cur, att])
        ln = layernorm(res, w["g2"], w["b2"])
        h = b.node("MatMul", [ln, w["f1"]])
        h = b.node("Add", [h, w["fb1"]])
        h = b.node("Relu", [h])
        h = b.node("MatMul", [h, w["f2"]])
        h = b.node("Add", [h, w["fb2"]])
        cur = b.node("Add", [res, h])
    return cur, [1, S, D]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kind", choices=sorted(BLOCK_NODES))
    ap.add_argument("nodes", type=int)
    ap.add_argument("out")
    ap.add_argument("--weights", type=int, default=256, help="distinct weight sets (0: one per block)")
    a = ap.parse_args()
    if a.nodes < 1 or a.weights < 0:
        ap.error("NODES must be >= 1 and --weights >= 0")

    t0 = time.time()
    m = onnx.ModelProto(ir_version=7, producer_name="mncc-bench-gen")
    m.opset_import.add(domain="", version=13)
    m.graph.name = "%s_%d" % (a.kind, a.nodes)
    b = Builder(m.graph)
    build = {"convnet": build_convnet, "transformer": build_transformer, "mlp": build_mlp}[a.kind]
    cur, shape = build(b, a.nodes, a.weights)
    while b.count < a.nodes:  # make up the exact node count
        cur = b.node("Relu", [cur])
    b.graph.node[-1].output[0] = "y"  # rename the last value to the graph output
    b.graph.input.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, shape))
    b.graph.output.append(helper.make_tensor_value_info("y", TensorProto.FLOAT, shape))

    onnx.checker.check_model(m, full_check=False)
    data = m.SerializeToString()
    with open(a.out, "wb") as f:
        f.write(data)
    print(
        "%s: %d nodes, %d initializers, %.1f MB, %.1f s"
        % (a.out, len(m.graph.node), len(m.graph.initializer), len(data) / 1e6, time.time() - t0),
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
