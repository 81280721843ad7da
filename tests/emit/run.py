#!/usr/bin/python3
"""Emitter regression cases: small models built here, compiled with mncc, run with mnemu
and compared with numpy. Each case is one the code emitter once got wrong.

Usage: run.py MNCC MNEMU [NAME...]   (ends with "emit: N passed, M failed"; names: a subset, by prefix)
"""
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MNCC, MNEMU = sys.argv[1], sys.argv[2]
ONLY = sys.argv[3:]  # (names by prefix: a subset of the cases, while working on one)
tmp = tempfile.mkdtemp()
passed = failed = 0


def check(name, ok, why=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok emit " + name)
    else:
        failed += 1
        print("FAIL emit %s: %s" % (name, why))


def case(name, nodes, inputs, outputs, feeds, ref, inits=(), machine="tiny", opts=(), expect_app=True, rtol=1e-5, atol=1e-6, types=None, on_matrix=False, sliced=False,
         opset=13, stencil=False, tiles=False, need=()):
    if ONLY and not any(name.startswith(o) for o in ONLY):
        return
    d = os.path.join(tmp, name)
    os.makedirs(os.path.join(d, "in"))
    ty = lambda n: (types or {}).get(n, T.FLOAT)
    g = h.make_graph(nodes, name, [h.make_tensor_value_info(n, ty(n), s) for n, s in inputs],
                     [h.make_tensor_value_info(n, ty(n), s) for n, s in outputs], initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(m, os.path.join(d, "model.onnx"))
    for i, (n, _) in enumerate(inputs):
        with open(os.path.join(d, "in", "input_%d.pb" % i), "wb") as f:
            f.write(nh.from_array(feeds[n], n).SerializeToString())
    cmd = [MNCC, os.path.join(d, "model.onnx"), "-o", os.path.join(d, "cg"), "--verify", "--cache-dir", "none", "--machine", machine]
    for o in opts:
        cmd += ["-O", o]
    r = subprocess.run(cmd, capture_output=True, text=True)
    app = os.path.join(d, "cg", "model.app")
    # a compile that gets no program fails: exit 1, one line saying why, no model.app
    no_program = r.returncode == 1 and ": no program: " in r.stderr and len(r.stderr.strip().splitlines()) == 1
    if expect_app is False:
        return check(name, no_program and not os.path.exists(app),
                     "a model.app was written for a program the emitter cannot express, or no one-line error: " +
                     r.stderr.strip()[-300:])
    if expect_app is None and no_program and not os.path.exists(app):
        return check(name, True, "")  # rejected is fine; a program must be right
    if r.returncode:
        return check(name, False, "mncc: " + r.stderr.strip()[-300:])
    if not os.path.exists(app):
        return check(name, False, "no model.app")
    figs = {}
    for p in json.load(open(os.path.join(d, "cg", "report.json")))["passes"]:
        figs.update(p.get("figures", {}))
    if sliced and not figs.get("slices"):  # the case is about Time-Slice pieces: the planner must have cut something
        return check(name, False, "nothing was time-sliced")
    if stencil and not figs.get("stencils"):  # the pools were laid out in bands (planners/stencil_plan.c)
        return check(name, False, "no stencil")
    if tiles and not figs.get("convolutions_on_tiles"):  # planners/tile_plan.c
        return check(name, False, "no convolution on tiles")
    for f in need:  # report.json figures the case is about (a lowering that must have fired)
        if not figs.get(f):
            return check(name, False, "figure %s is 0" % f)
    r = subprocess.run([MNEMU, app, "--inputs", os.path.join(d, "in"), "-o", os.path.join(d, "res"), "--json"], capture_output=True, text=True)
    if r.returncode:
        return check(name, False, "mnemu: " + r.stderr.strip()[-300:])
    st = json.loads(r.stdout.strip().splitlines()[-1])
    if st["cycles"] != st["model_cycles"]:  # Node Simulation's best mode times code with the model alone
        return check(name, False, "the timing model predicts %d cycles, the run took %d" % (st["model_cycles"], st["cycles"]))
    mfile = machine if os.sep in machine else os.path.join(ROOT, "presets", "machines", machine + ".json")
    rate = json.load(open(mfile))["bandwidth_lw_per_cycle"]["dram_l2bm_per_group"]
    for g, grp in enumerate(st.get("groups", [])):  # shared bandwidth: no group's DRAM beats its rate (docs/vsm.md 5.6)
        lw = grp["dram_bytes"] // 8
        if st["cycles"] < grp["dram_busy_cycles"] or grp["dram_busy_cycles"] * rate < lw:
            return check(name, False, "group %d: %d DRAM long words in %d busy cycles of a run of %d" % (g, lw, grp["dram_busy_cycles"], st["cycles"]))
    if on_matrix and not st["insns"]["mwrite"]:  # the run loaded the MAB matrix registers
        return check(name, False, "the products did not run on the matrix unit")
    for i, (n, _) in enumerate(outputs):
        got = nh.to_array(onnx.load_tensor(os.path.join(d, "res", "output_%d.pb" % i)))
        if not np.allclose(got, ref[n], rtol=rtol, atol=atol, equal_nan=True):
            return check(name, False, "%s: max error %g" % (n, np.nanmax(np.abs(got - ref[n]))))
    check(name, True)


rng = np.random.default_rng(7)
f32 = lambda *s: rng.standard_normal(s).astype(np.float32)

# values of 2 long words next to each other in LM: 4-long-word steps must not write past
# them (an in-place Neg once negated its neighbour)
a, b, c = f32(8), f32(8), f32(8)
case("tail-mask-neighbours", [h.make_node("Abs", ["a"], ["t0"]), h.make_node("Add", ["t0", "t0"], ["t1"]), h.make_node("Sub", ["t1", "b"], ["t2"]),
                              h.make_node("Neg", ["a"], ["y1"]), h.make_node("Mul", ["t2", "c"], ["y0"])],
     [("a", [8]), ("b", [8]), ("c", [8])], [("y0", [8]), ("y1", [8])], dict(a=a, b=b, c=c), dict(y0=(2 * np.abs(a) - b) * c, y1=-a),
     opts=["scheduler=spill_opt"])
# an output broadcast over levels its input is not: not a plain copy (rejected until a
# gather exists, or right)
a6, b6 = f32(6, 1), f32(6, 40)
# (on tiny it compiles, and must be right; on mncore2 either)
for mach, app in (("tiny", True), ("mncore2", None)):
    case("replicated-output-" + mach, [h.make_node("Neg", ["a"], ["n"]), h.make_node("Add", ["b", "n"], ["y"])], [("a", [6, 1]), ("b", [6, 40])],
         [("y", [6, 40])], dict(a=a6, b=b6), dict(y=b6 - a6), machine=mach, expect_app=app)
# a constant numerator: immediate and temporary must not share a GRF read port
y = (rng.random(16).astype(np.float32) + 0.5)
two = nh.from_array(np.array(2.0, np.float32), "two")
case("div-constant-numerator", [h.make_node("Div", ["two", "y"], ["z"])], [("y", [16])], [("z", [16])], dict(y=y), dict(z=2 / y), inits=[two])
# x ** 0.5 is NaN below 0; Softplus does not overflow for large x
p = np.linspace(-2, 2, 16).astype(np.float32)
half = nh.from_array(np.array(0.5, np.float32), "half")
with np.errstate(invalid="ignore"):
    case("pow-half-negative", [h.make_node("Pow", ["p", "half"], ["z"])], [("p", [16])], [("z", [16])], dict(p=p), dict(z=np.power(p, 0.5)), inits=[half])
big = np.array([-100, -20, -1, 0, 1, 20, 100, 88.5], np.float32)
case("softplus-large", [h.make_node("Softplus", ["x"], ["z"])], [("x", [8])], [("z", [8])], dict(x=big), dict(z=np.logaddexp(0, big.astype(np.float64)).astype(np.float32)),
     rtol=1e-5, atol=1e-5)
# a machine whose L2B moves less than 64 long words per transfer: no program
cfg = open(os.path.join(ROOT, "presets", "machines", "tiny.json")).read().replace('"mab_per_l1b": 4', '"mab_per_l1b": 2')
mpath = os.path.join(tmp, "tiny2mab.json")
with open(mpath, "w") as f:
    f.write(cfg)
x8 = f32(8)
case("machine-without-transfers", [h.make_node("Relu", ["x"], ["z"])], [("x", [8])], [("z", [8])], dict(x=x8), dict(z=np.maximum(x8, 0)), machine=mpath,
     expect_app=False)
# a machine whose LM needs more steps between a write and a read than the emitter spaces
# for: no program (mnemu would stop at the first hazard)
cfg = open(os.path.join(ROOT, "presets", "machines", "tiny.json")).read().replace('"lm_read_after_write_steps": 2', '"lm_read_after_write_steps": 3')
spath = os.path.join(tmp, "tinyslow.json")
with open(spath, "w") as f:
    f.write(cfg)
case("machine-slower-lm", [h.make_node("Relu", ["x"], ["z"])], [("x", [8])], [("z", [8])], dict(x=x8), dict(z=np.maximum(x8, 0)), machine=spath,
     expect_app=False)
# a value of several chunks (more long words per PE than one L1BM transfer holds)
xl = f32(16, 2000)
case("multi-chunk", [h.make_node("Sigmoid", ["x"], ["z"])], [("x", [16, 2000])], [("z", [16, 2000])], dict(x=xl), dict(z=1 / (1 + np.exp(-xl))), machine="mncore2",
     rtol=1e-5, atol=1e-6)

# elements that move between PEs of an L1B: the gather (combine, broadcast, T-indirect
# picks through an index table)
x4 = f32(4, 10)
shp = nh.from_array(np.array([10, 4], np.int64), "shp")
case("gather-reshape", [h.make_node("Reshape", ["x", "shp"], ["r"]), h.make_node("Relu", ["r"], ["y"])], [("x", [4, 10])], [("y", [10, 4])], dict(x=x4),
     dict(y=np.maximum(x4.reshape(10, 4), 0)), inits=[shp], machine="mncore2")
x46 = f32(4, 6)
case("gather-transpose", [h.make_node("Transpose", ["x"], ["t"], perm=[1, 0]), h.make_node("Neg", ["t"], ["y"])], [("x", [4, 6])], [("y", [6, 4])],
     dict(x=x46), dict(y=-x46.T), machine="mncore2")
x3 = f32(2, 3, 5)
case("gather-transpose-3d", [h.make_node("Transpose", ["x"], ["y"], perm=[2, 0, 1])], [("x", [2, 3, 5])], [("y", [5, 2, 3])], dict(x=x3),
     dict(y=np.transpose(x3, (2, 0, 1))), machine="l1b")

xt = f32(2, 3)
reps = nh.from_array(np.array([2, 3], np.int64), "reps")
case("gather-tile", [h.make_node("Tile", ["x", "reps"], ["y"])], [("x", [2, 3])], [("y", [4, 9])], dict(x=xt), dict(y=np.tile(xt, (2, 3))), inits=[reps],
     machine="l1b")
xg = f32(5, 4)
ind = nh.from_array(np.array([[0, 4], [-1, 2]], np.int64), "ind")
case("gather-gather", [h.make_node("Gather", ["x", "ind"], ["y"], axis=0)], [("x", [5, 4])], [("y", [2, 2, 4])], dict(x=xg), dict(y=xg[[[0, 4], [4, 2]]]),
     inits=[ind], machine="l1b")
xe = f32(3, 1)
eshape = nh.from_array(np.array([2, 3, 4], np.int64), "eshape")
case("gather-expand", [h.make_node("Expand", ["x", "eshape"], ["y"])], [("x", [3, 1])], [("y", [2, 3, 4])], dict(x=xe), dict(y=np.broadcast_to(xe, (2, 3, 4))),
     inits=[eshape], machine="l1b")

xa, xb = f32(2, 3), f32(2, 5)
case("gather-concat", [h.make_node("Concat", ["a", "b"], ["y"], axis=1)], [("a", [2, 3]), ("b", [2, 5])], [("y", [2, 8])], dict(a=xa, b=xb),
     dict(y=np.concatenate([xa, xb], axis=1)), machine="l1b")

# window ops (emitter/window.c)
# an outer product with 256 output words per PE: more than one 128-word batch
ao, bo = f32(128, 1), f32(1, 128)
case("window-multi-batch", [h.make_node("MatMul", ["a", "b"], ["y"])], [("a", [128, 1]), ("b", [1, 128])], [("y", [128, 128])], dict(a=ao, b=bo),
     dict(y=ao @ bo), machine="l1b")
# Softmax of values far below 0 and LogSumExp far above: the maximum must come off first
xs = (f32(3, 7) - 1000).astype(np.float32)
case("window-softmax-offset", [h.make_node("Softmax", ["x"], ["y"], axis=1)], [("x", [3, 7])], [("y", [3, 7])], dict(x=xs),
     dict(y=(np.exp(xs - xs.max(1, keepdims=True)) / np.exp(xs - xs.max(1, keepdims=True)).sum(1, keepdims=True)).astype(np.float32)), machine="l1b", rtol=1e-4)
xl2 = (f32(4, 6) + 100).astype(np.float32)
case("window-logsumexp-large", [h.make_node("ReduceLogSumExp", ["x"], ["y"], axes=[1], keepdims=1)], [("x", [4, 6])], [("y", [4, 1])], dict(x=xl2),
     dict(y=np.log(np.exp(xl2.astype(np.float64)).sum(1, keepdims=True)).astype(np.float32)), machine="l1b", rtol=1e-5)
# ReduceL2 of zeros is 0 (1/rsqrt, not x * rsqrt(x))
xz = np.zeros((3, 4), np.float32)
xz[1] = f32(4)
case("window-l2-zero", [h.make_node("ReduceL2", ["x"], ["y"], axes=[1], keepdims=0)], [("x", [3, 4])], [("y", [3])], dict(x=xz),
     dict(y=np.sqrt((xz * xz).sum(1))), machine="l1b")
# MaxPool of negative values with padding: the padding is -inf, not 0
xm = (-np.abs(f32(1, 2, 5, 5)) - 1).astype(np.float32)
pm = np.full((1, 2, 7, 7), -np.inf, np.float32)
pm[:, :, 1:6, 1:6] = xm
case("window-maxpool-negative-pad", [h.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])], [("x", [1, 2, 5, 5])],
     [("y", [1, 2, 5, 5])], dict(x=xm), dict(y=np.array([[[[pm[0, c, i:i + 3, j:j + 3].max() for j in range(5)] for i in range(5)] for c in range(2)]], np.float32)),
     machine="l1b")
# AveragePool without count_include_pad: corners divide by 4, edges by 6
xa2 = f32(1, 1, 4, 4)
pa = np.zeros((6, 6), np.float32)
pa[1:5, 1:5] = xa2[0, 0]
ca = np.zeros((6, 6), np.float32)
ca[1:5, 1:5] = 1
case("window-avgpool-counts", [h.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])], [("x", [1, 1, 4, 4])],
     [("y", [1, 1, 4, 4])], dict(x=xa2),
     dict(y=np.array([[[[pa[i:i + 3, j:j + 3].sum() / ca[i:i + 3, j:j + 3].sum() for j in range(4)] for i in range(4)]]], np.float32)), machine="l1b")


# pools as stencils (bands of rows, halos from the neighbouring PEs): the max pool of a
# ResNet stem at 112x112 over 64 channels, ceil mode, dilation, odd widths, averages
def pool_ref(x, op, k, s, p, d=1, ceil=False, inc=False):
    N, C, H, W = x.shape
    osz = lambda n: (-(-(n + 2 * p - (k - 1) * d - 1) // s) if ceil else (n + 2 * p - (k - 1) * d - 1) // s) + 1
    oh, ow = osz(H), osz(W)
    y = np.zeros((N, C, oh, ow), np.float32)
    for i in range(oh):
        for j in range(ow):
            rs = [r for r in range(i * s - p, i * s - p + (k - 1) * d + 1, d) if 0 <= r < H]
            cs = [c for c in range(j * s - p, j * s - p + (k - 1) * d + 1, d) if 0 <= c < W]
            win = x[:, :, rs][:, :, :, cs]
            y[:, :, i, j] = win.max((2, 3)) if op == "MaxPool" else win.sum((2, 3)) / (k * k if inc else len(rs) * len(cs))
    return y


for nm, op, shape, k, s, p, d, ceil, inc, mach in (("stem", "MaxPool", (1, 64, 112, 112), 3, 2, 1, 1, 0, 0, "mncore2"),
                                                  ("dilated-ceil", "MaxPool", (1, 8, 30, 30), 3, 2, 0, 2, 1, 0, "mncore2"),
                                                  ("batch-odd", "MaxPool", (2, 5, 17, 9), 2, 2, 0, 1, 0, 0, "l1b"),
                                                  ("avg", "AveragePool", (1, 16, 56, 56), 2, 2, 0, 1, 0, 0, "mncore2"),
                                                  ("avg-pads-counted", "AveragePool", (1, 8, 14, 14), 3, 1, 1, 1, 0, 1, "l1b")):
    xp = f32(*shape)
    at = dict(kernel_shape=[k, k], strides=[s, s], pads=[p] * 4)
    if op == "MaxPool":
        at["dilations"] = [d, d]
    if ceil:
        at["ceil_mode"] = 1
    if inc:
        at["count_include_pad"] = 1
    yp = pool_ref(xp, op, k, s, p, d, ceil, inc)
    case("stencil-" + nm, [h.make_node(op, ["x"], ["y"], **at)], [("x", list(shape))], [("y", list(yp.shape))], dict(x=xp), dict(y=yp),
         machine=mach, stencil=True)


# convolutions on tiles (planners/tile_plan.c): a small ResNet-style stem and stages over
# the whole of mncore2 (halos between MABs, L1Bs and L2Bs; stride-2 nodes following the
# tiles of the node before), pools and a global average pool on the same tiles
def conv_nchw(x, w, b, s, p):
    n, _, hh, ww = x.shape
    k = w.shape[2]
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    oh, ow = (hh + 2 * p - k) // s + 1, (ww + 2 * p - k) // s + 1
    y = np.zeros((n, w.shape[0], oh, ow), np.float64)
    for i in range(k):
        for j in range(k):
            y += np.einsum("nchw,oc->nohw", xp[:, :, i:i + s * oh:s, j:j + s * ow:s], w[:, :, i, j])
    return (y + b[None, :, None, None]).astype(np.float32)


def tiled_net(n, hw, c0):
    x = f32(n, c0, hw, hw)
    ws = [(f32(16, c0, 7, 7) * 0.1, f32(16), 2, 3), (f32(16, 16, 3, 3) * 0.1, f32(16), 1, 1), (f32(32, 16, 3, 3) * 0.1, f32(32), 2, 1)]
    nodes, inits, t = [], [], x
    for i, (w, b, st, pd) in enumerate(ws):
        inits += [nh.from_array(w, "w%d" % i), nh.from_array(b, "b%d" % i)]
        nodes += [h.make_node("Conv", ["a%d" % i if i else "x", "w%d" % i, "b%d" % i], ["c%d" % i], strides=[st, st], pads=[pd] * 4),
                  h.make_node("Relu", ["c%d" % i], ["r%d" % i])]
        t = np.maximum(conv_nchw(t, w, b, st, pd), 0)
        if i == 0:
            nodes.append(h.make_node("MaxPool", ["r0"], ["a1"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
            t = pool_ref(t, "MaxPool", 3, 2, 1)
        elif i == 1:
            nodes.append(h.make_node("Add", ["r1", "a1"], ["a2"]))
            t = t + tp
        tp = t
    nodes.append(h.make_node("GlobalAveragePool", ["r2"], ["y"]))
    return nodes, inits, x, t.mean((2, 3), keepdims=True)


for nm, n, hw, c0 in (("stem-64", 1, 64, 3), ("batch2-odd", 2, 40, 5)):
    nodes, inits, xt, yt = tiled_net(n, hw, c0)
    case("tiles-" + nm, nodes, [("x", list(xt.shape))], [("y", list(yt.shape))], dict(x=xt), dict(y=yt), inits=inits,
         machine="mncore2", rtol=1e-4, atol=1e-5, tiles=True)

# depthwise convolutions on tiles: an inverted-residual block's expand 1x1, depthwise
# (weights streamed a chunk of channels at a time, the largest in several chunks) and
# squeeze-excitation, as MobileNetV3 and EfficientNet have them
def dw_ref(x, w, b, s, p):
    k = w.shape[2]
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    oh = (x.shape[2] + 2 * p - k) // s + 1
    y = np.zeros((x.shape[0], x.shape[1], oh, oh), np.float64)
    for i in range(k):
        for j in range(k):
            y += xp[:, :, i:i + s * oh:s, j:j + s * oh:s] * w[None, :, 0, i, j, None, None]
    return (y + b[None, :, None, None]).astype(np.float32)


for nm, n, c, hw, k, s, p in (("small", 1, 16, 24, 3, 2, 1), ("chunks", 1, 576, 14, 5, 1, 2)):
    x = f32(n, 8, hw, hw)
    we, be, wd, bd = f32(c, 8, 1, 1) * 0.3, f32(c), f32(c, 1, k, k) * 0.3, f32(c)
    ws1, bs1, ws2, bs2 = f32(8, c, 1, 1) * 0.1, f32(8), f32(c, 8, 1, 1) * 0.1, f32(c)
    e = np.maximum(conv_nchw(x, we, be, 1, 0), 0)
    d = dw_ref(e, wd, bd, s, p)
    sq = np.maximum(conv_nchw(d.mean((2, 3), keepdims=True), ws1, bs1, 1, 0), 0)
    yv = d * (1 / (1 + np.exp(-conv_nchw(sq, ws2, bs2, 1, 0))))
    nodes = [h.make_node("Conv", ["x", "we", "be"], ["e0"]), h.make_node("Relu", ["e0"], ["e1"]),
             h.make_node("Conv", ["e1", "wd", "bd"], ["d"], group=c, kernel_shape=[k, k], strides=[s, s], pads=[p] * 4),
             h.make_node("GlobalAveragePool", ["d"], ["g"]), h.make_node("Conv", ["g", "ws1", "bs1"], ["q0"]),
             h.make_node("Relu", ["q0"], ["q1"]), h.make_node("Conv", ["q1", "ws2", "bs2"], ["q2"]),
             h.make_node("Sigmoid", ["q2"], ["q3"]), h.make_node("Mul", ["q3", "d"], ["y"])]
    inits = [nh.from_array(a, nm2) for a, nm2 in ((we, "we"), (be, "be"), (wd, "wd"), (bd, "bd"), (ws1, "ws1"), (bs1, "bs1"),
                                                  (ws2, "ws2"), (bs2, "bs2"))]
    case("tiles-depthwise-" + nm, nodes, [("x", list(x.shape))], [("y", list(yv.shape))], dict(x=x), dict(y=yv), inits=inits,
         machine="mncore2", rtol=1e-4, atol=1e-5, tiles=True)

# a channel Concat of tiled values (SqueezeNet's fire module): the expand 1x1 and 3x3
# outputs' channel blocks side by side on every pixel, then a ceil-mode max pool
x = f32(1, 16, 30, 30)
wsq, bsq, we1, be1, we3, be3 = f32(8, 16, 1, 1) * 0.3, f32(8), f32(16, 8, 1, 1) * 0.3, f32(16), f32(24, 8, 3, 3) * 0.2, f32(24)
sq = np.maximum(conv_nchw(x, wsq, bsq, 1, 0), 0)
cat = np.maximum(np.concatenate([conv_nchw(sq, we1, be1, 1, 0), conv_nchw(sq, we3, be3, 1, 1)], 1), 0)
yv = pool_ref(cat, "MaxPool", 3, 2, 0, ceil=True)
nodes = [h.make_node("Conv", ["x", "wsq", "bsq"], ["s0"]), h.make_node("Relu", ["s0"], ["s1"]),
         h.make_node("Conv", ["s1", "we1", "be1"], ["e1"]), h.make_node("Conv", ["s1", "we3", "be3"], ["e3"], pads=[1] * 4),
         h.make_node("Concat", ["e1", "e3"], ["c"], axis=1), h.make_node("Relu", ["c"], ["r"]),
         h.make_node("MaxPool", ["r"], ["y"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)]
inits = [nh.from_array(a, nm2) for a, nm2 in ((wsq, "wsq"), (bsq, "bsq"), (we1, "we1"), (be1, "be1"), (we3, "we3"), (be3, "be3"))]
case("tiles-concat-fire", nodes, [("x", list(x.shape))], [("y", list(yv.shape))], dict(x=x), dict(y=yv), inits=inits,
     machine="mncore2", rtol=1e-4, atol=1e-5, tiles=True)

# a DenseNet transition on tiles: BatchNormalization as a scale and shift per channel, a
# 1x1 convolution, a Pad of zero pads (an Identity) and a 2x2 average pool; and a
# grouped convolution as a block-diagonal ungrouped one (RegNet's)
x = f32(1, 16, 28, 28)
bs, bb, bm, bv = f32(16), f32(16), f32(16), np.abs(f32(16)) + 0.5
wt, bt, wg, bg = f32(16, 16, 1, 1) * 0.3, f32(16), f32(32, 4, 3, 3) * 0.3, f32(32)
nv = np.maximum((x - bm[None, :, None, None]) / np.sqrt(bv[None, :, None, None] + 1e-5) * bs[None, :, None, None] +
                bb[None, :, None, None], 0)
tv = pool_ref(conv_nchw(nv, wt, bt, 1, 0), "AveragePool", 2, 2, 0)
wgd = np.zeros((32, 16, 3, 3), np.float32)
for o in range(32):
    wgd[o, o // 8 * 4:o // 8 * 4 + 4] = wg[o]
yv = conv_nchw(tv, wgd, bg, 1, 1)
pads0 = nh.from_array(np.zeros(8, np.int64), "pads0")
nodes = [h.make_node("BatchNormalization", ["x", "bs", "bb", "bm", "bv"], ["n0"]), h.make_node("Relu", ["n0"], ["n1"]),
         h.make_node("Conv", ["n1", "wt", "bt"], ["t0"]), h.make_node("Pad", ["t0", "pads0"], ["t1"]),
         h.make_node("AveragePool", ["t1"], ["t2"], kernel_shape=[2, 2], strides=[2, 2]),
         h.make_node("Conv", ["t2", "wg", "bg"], ["y"], group=4, pads=[1] * 4)]
inits = [nh.from_array(a, nm2) for a, nm2 in ((bs, "bs"), (bb, "bb"), (bm, "bm"), (bv, "bv"), (wt, "wt"), (bt, "bt"), (wg, "wg"),
                                               (bg, "bg"))] + [pads0]
case("tiles-transition-grouped", nodes, [("x", list(x.shape))], [("y", list(yv.shape))], dict(x=x), dict(y=yv), inits=inits,
     machine="mncore2", rtol=1e-4, atol=1e-5, tiles=True)

# ShuffleNet's channel moves on tiles, channel counts not a multiple of 8: a Concat of
# two 12-channel branches, the channel shuffle (Reshape, Transpose, Reshape: a Gather of
# the channels), the split into halves (Slice), each channel moving between the PEs of
# its pixel's MAB
x = f32(1, 8, 20, 20)
wa, ba, wb, bb, wc, bc = f32(12, 8, 1, 1) * 0.3, f32(12), f32(12, 8, 3, 3) * 0.2, f32(12), f32(16, 12, 1, 1) * 0.3, f32(16)
cat = np.concatenate([conv_nchw(x, wa, ba, 1, 0), conv_nchw(x, wb, bb, 1, 1)], 1)
shuf = cat.reshape(1, 2, 12, 20, 20).transpose(0, 2, 1, 3, 4).reshape(1, 24, 20, 20)
yv = conv_nchw(shuf[:, :12] + shuf[:, 12:] * 2, wc, bc, 1, 0)
i64s = lambda nm, v: nh.from_array(np.array(v, np.int64), nm)
nodes = [h.make_node("Conv", ["x", "wa", "ba"], ["ca"]), h.make_node("Conv", ["x", "wb", "bb"], ["cb"], pads=[1] * 4),
         h.make_node("Concat", ["ca", "cb"], ["cat"], axis=1), h.make_node("Reshape", ["cat", "s5"], ["r5"]),
         h.make_node("Transpose", ["r5"], ["t5"], perm=[0, 2, 1, 3, 4]), h.make_node("Reshape", ["t5", "s4"], ["sh"]),
         h.make_node("Slice", ["sh", "z", "h12", "one"], ["lo"]), h.make_node("Slice", ["sh", "h12", "h24", "one"], ["hi"]),
         h.make_node("Mul", ["hi", "two"], ["hi2"]), h.make_node("Add", ["lo", "hi2"], ["sum"]), h.make_node("Conv", ["sum", "wc", "bc"], ["y"])]
inits = [nh.from_array(a, nm2) for a, nm2 in ((wa, "wa"), (ba, "ba"), (wb, "wb"), (bb, "bb"), (wc, "wc"), (bc, "bc"))] + [
    i64s("s5", [1, 2, 12, 20, 20]), i64s("s4", [1, 24, 20, 20]), i64s("z", [0]), i64s("h12", [12]), i64s("h24", [24]),
    i64s("one", [1]), nh.from_array(np.array(2, np.float32), "two")]
case("tiles-channel-shuffle", nodes, [("x", list(x.shape))], [("y", list(yv.shape))], dict(x=x), dict(y=yv), inits=inits,
     machine="mncore2", rtol=1e-4, atol=1e-5, tiles=True)

# Resize on tiles (a decoder's upsampling): each output tile where its input tile is,
# twice as large. Nearest as PyTorch exports it (asymmetric, floor); linear half_pixel
# (split into one axis at a time), whose terms at the image's edge read the edge row and
# column, on a 21 x 19 image whose tiles reach past it. Numpy references.
def up_linear(x, axis, f=2):
    n = x.shape[axis]
    o = (np.arange(n * f) + 0.5) / f - 0.5
    i0 = np.floor(o).astype(int)
    w = (o - i0).astype(np.float32)
    a, b = np.clip(i0, 0, n - 1), np.clip(i0 + 1, 0, n - 1)
    sh = [1] * x.ndim
    sh[axis] = -1
    return np.take(x, a, axis) * (1 - w).reshape(sh) + np.take(x, b, axis) * w.reshape(sh)


for nm, mode, hw in (("nearest", "nearest", (16, 24)), ("linear", "linear", (21, 19))):
    x = f32(1, 12, *hw)
    wa, ba, wb, bb = f32(16, 12, 3, 3) * 0.2, f32(16), f32(8, 16, 3, 3) * 0.2, f32(8)
    a = np.maximum(conv_nchw(x, wa, ba, 1, 1), 0)
    u = a.repeat(2, 2).repeat(2, 3) if mode == "nearest" else up_linear(up_linear(a, 2), 3)
    yv = conv_nchw(u, wb, bb, 1, 1)
    attrs = dict(mode=mode, coordinate_transformation_mode="asymmetric", nearest_mode="floor") if mode == "nearest" else \
        dict(mode=mode)
    nodes = [h.make_node("Conv", ["x", "wa", "ba"], ["a0"], pads=[1] * 4), h.make_node("Relu", ["a0"], ["a1"]),
             h.make_node("Resize", ["a1", "", "sc"], ["u"], **attrs), h.make_node("Conv", ["u", "wb", "bb"], ["y"], pads=[1] * 4)]
    inits = [nh.from_array(v, k) for v, k in ((wa, "wa"), (ba, "ba"), (wb, "wb"), (bb, "bb"))] + \
        [nh.from_array(np.array([1, 1, 2, 2], np.float32), "sc")]
    case("tiles-resize-" + nm, nodes, [("x", list(x.shape))], [("y", list(yv.shape))], dict(x=x), dict(y=yv), inits=inits,
         machine="mncore2", rtol=1e-4, atol=1e-5, tiles=True, need=("resizes_on_tiles",))

# ConvTranspose as a convolution of every phase and a DepthToSpace, both on tiles (a
# decoder's learned upsampling): kernel 4 stride 2 pad 1 with 12 output channels (not
# whole blocks: sliced off after the DepthToSpace), and kernel 2 stride 2 with 8
def convt_ref(x, w, b, s, p):
    n, c, hh, ww = x.shape
    k, oc = w.shape[2], w.shape[1]
    full = np.zeros((n, oc, (hh - 1) * s + k, (ww - 1) * s + k), np.float32)
    for i in range(hh):
        for j in range(ww):
            full[:, :, i * s:i * s + k, j * s:j * s + k] += np.einsum("nc,cokl->nokl", x[:, :, i, j], w)
    return full[:, :, p:full.shape[2] - p, p:full.shape[3] - p] + b[None, :, None, None]


for nm, k, p, oc in (("k4-oc12", 4, 1, 12), ("k2-oc8", 2, 0, 8)):
    x = f32(1, 12, 24, 20)
    wa, ba, wt, bt, wb, bb = f32(16, 12, 3, 3) * 0.2, f32(16), f32(16, oc, k, k) * 0.2, f32(oc), f32(8, oc, 3, 3) * 0.2, f32(8)
    a = np.maximum(conv_nchw(x, wa, ba, 1, 1), 0)
    yv = conv_nchw(convt_ref(a, wt, bt, 2, p), wb, bb, 1, 1)
    nodes = [h.make_node("Conv", ["x", "wa", "ba"], ["a0"], pads=[1] * 4), h.make_node("Relu", ["a0"], ["a1"]),
             h.make_node("ConvTranspose", ["a1", "wt", "bt"], ["u"], kernel_shape=[k, k], strides=[2, 2], pads=[p] * 4),
             h.make_node("Conv", ["u", "wb", "bb"], ["y"], pads=[1] * 4)]
    inits = [nh.from_array(v, kn) for v, kn in ((wa, "wa"), (ba, "ba"), (wt, "wt"), (bt, "bt"), (wb, "wb"), (bb, "bb"))]
    case("tiles-convtranspose-" + nm, nodes, [("x", list(x.shape))], [("y", list(yv.shape))], dict(x=x), dict(y=yv),
         inits=inits, machine="mncore2", rtol=1e-4, atol=1e-5, tiles=True, need=("transposed_convolutions_lowered",))

# A decoder meets its skip connections on other grids of tiles: at 64 x 64 a tile has one
# row and 4 columns, the pools' outputs sit on every other, 4th, 8th row place and from 8
# columns on every other MAB, and each Resize's tiles there are twice as large; the
# Concat follows the input with the finest tiles, the upsampled one is switched onto that
# grid (emitter/tile_retile.c: rows between row places, columns between MABs), with the
# upsampled value first or second
def unet_case(name, levels, up_first):
    ch = [8, 16, 16, 24][:levels + 1]
    x = f32(1, 4, 64, 64)
    ws, nodes, inits, skips = {}, [], [], []
    v, cur, cin = x, "x", 4
    for lv in range(levels + 1):
        if lv:
            v = pool_ref(v, "MaxPool", 2, 2, 0)
            nodes.append(h.make_node("MaxPool", [cur], ["p%d" % lv], kernel_shape=[2, 2], strides=[2, 2]))
            cur = "p%d" % lv
        w, b = f32(ch[lv], cin, 3, 3) * 0.2, f32(ch[lv])
        v = np.maximum(conv_nchw(v, w, b, 1, 1), 0)
        inits += [nh.from_array(w, "we%d" % lv), nh.from_array(b, "be%d" % lv)]
        nodes += [h.make_node("Conv", [cur, "we%d" % lv, "be%d" % lv], ["c%d" % lv], pads=[1] * 4),
                  h.make_node("Relu", ["c%d" % lv], ["e%d" % lv])]
        cur, cin = "e%d" % lv, ch[lv]
        skips.append((v, cur, cin))
    for lv in reversed(range(levels)):
        u = v.repeat(2, 2).repeat(2, 3)
        nodes.append(h.make_node("Resize", [cur, "", "sc"], ["u%d" % lv], mode="nearest",
                                 coordinate_transformation_mode="asymmetric", nearest_mode="floor"))
        sv, sn, sc = skips[lv]
        cat = np.concatenate([u, sv] if up_first else [sv, u], 1)
        nodes.append(h.make_node("Concat", ["u%d" % lv, sn] if up_first else [sn, "u%d" % lv], ["k%d" % lv], axis=1))
        w, b = f32(ch[lv], cin + sc, 3, 3) * 0.15, f32(ch[lv])
        v = np.maximum(conv_nchw(cat, w, b, 1, 1), 0)
        inits += [nh.from_array(w, "wd%d" % lv), nh.from_array(b, "bd%d" % lv)]
        nodes += [h.make_node("Conv", ["k%d" % lv, "wd%d" % lv, "bd%d" % lv], ["d%d" % lv], pads=[1] * 4),
                  h.make_node("Relu", ["d%d" % lv], ["r%d" % lv])]
        cur, cin = "r%d" % lv, ch[lv]
    nodes[-1].output[0] = "y"
    inits.append(nh.from_array(np.array([1, 1, 2, 2], np.float32), "sc"))
    case(name, nodes, [("x", list(x.shape))], [("y", list(v.shape))], dict(x=x), dict(y=v), inits=inits,
         machine="mncore2", rtol=1e-4, atol=1e-5, tiles=True, need=("resizes_on_tiles",))


unet_case("tiles-retile-rows", 1, True)
unet_case("tiles-retile-rows-columns", 3, False)

# PixelShuffle as PyTorch exports it (DepthToSpace, CRD) with 3 output channels: a channel
# Gather into the DCR order (8 channels a phase), a DCR DepthToSpace on tiles, the extra
# channels sliced off
x = f32(1, 8, 48, 40)
wa, ba = f32(12, 8, 3, 3) * 0.2, f32(12)
a = conv_nchw(x, wa, ba, 1, 1)
yv = a.reshape(1, 3, 2, 2, 48, 40).transpose(0, 1, 4, 2, 5, 3).reshape(1, 3, 96, 80)
nodes = [h.make_node("Conv", ["x", "wa", "ba"], ["a"], pads=[1] * 4),
         h.make_node("DepthToSpace", ["a"], ["y"], blocksize=2, mode="CRD")]
case("tiles-pixel-shuffle", nodes, [("x", list(x.shape))], [("y", list(yv.shape))], dict(x=x), dict(y=yv),
     inits=[nh.from_array(wa, "wa"), nh.from_array(ba, "ba")], machine="mncore2", rtol=1e-4, atol=1e-5, tiles=True,
     need=("depth_to_space_lowered",))

# A dilated convolution whose tiles have one pixel and whose halo spans 4 tiles each way
# (FCN's and DeepLab's backbones at stride 8): the tile with its halos for all 128
# channels would not fit the scratch, so the product runs over a few channel blocks at a
# time, each adding to the output's sums
def conv_dil(x, w, b, d, p):
    n, _, hh, ww = x.shape
    k = w.shape[2]
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    out = np.zeros((n, w.shape[0], hh + 2 * p - d * (k - 1), ww + 2 * p - d * (k - 1)), np.float32)
    for i in range(k):
        for j in range(k):
            out += np.einsum("nchw,oc->nohw", xp[:, :, i * d:i * d + out.shape[2], j * d:j * d + out.shape[3]], w[:, :, i, j])
    return out + b[None, :, None, None]


x = f32(1, 16, 32, 32)
wa, ba, wd, bd = f32(128, 16, 3, 3) * 0.2, f32(128), f32(32, 128, 3, 3) * 0.05, f32(32)
a = np.maximum(conv_nchw(x, wa, ba, 2, 1), 0)
yv = conv_dil(a, wd, bd, 4, 4)
nodes = [h.make_node("Conv", ["x", "wa", "ba"], ["a0"], pads=[1] * 4, strides=[2, 2]), h.make_node("Relu", ["a0"], ["a1"]),
         h.make_node("Conv", ["a1", "wd", "bd"], ["y"], pads=[4] * 4, dilations=[4, 4])]
inits = [nh.from_array(v, kn) for v, kn in ((wa, "wa"), (ba, "ba"), (wd, "wd"), (bd, "bd"))]
case("tiles-dilated-channel-chunks", nodes, [("x", list(x.shape))], [("y", list(yv.shape))], dict(x=x), dict(y=yv),
     inits=inits, machine="mncore2", rtol=1e-4, atol=1e-5, tiles=True)

# An atrous convolution of rate 12 on a 14 x 14 image (DeepLab's ASPP): tiles of one pixel
# whose halos reach 12 tiles each way would need a scratch of 25 x 25 pixels, so the
# product runs one kernel row at a time, each reading the band of rows it needs from the
# tiles' own rows (and a few channel blocks at a time)
x = f32(1, 16, 14, 14)
wa, ba, wd, bd = f32(64, 16, 3, 3) * 0.2, f32(64), f32(16, 64, 3, 3) * 0.1, f32(16)
a = np.maximum(conv_nchw(x, wa, ba, 1, 1), 0)
yv = conv_dil(a, wd, bd, 12, 12)
nodes = [h.make_node("Conv", ["x", "wa", "ba"], ["a0"], pads=[1] * 4), h.make_node("Relu", ["a0"], ["a1"]),
         h.make_node("Conv", ["a1", "wd", "bd"], ["y"], pads=[12] * 4, dilations=[12, 12])]
inits = [nh.from_array(v, kn) for v, kn in ((wa, "wa"), (ba, "ba"), (wd, "wd"), (bd, "bd"))]
case("tiles-atrous-row-passes", nodes, [("x", list(x.shape))], [("y", list(yv.shape))], dict(x=x), dict(y=yv),
     inits=inits, machine="mncore2", rtol=1e-4, atol=1e-5, tiles=True)

# DeepLab's ASPP pooling branch: a global pool, a 1x1 convolution on its one pixel (held
# on every MAB), and a bilinear Resize back to the image size, which lands on the tiles of
# the branch it is concatenated with (every output pixel is the one pixel)
x = f32(1, 16, 20, 24)
wa, ba, wp, bp, wc, bc = f32(32, 16, 3, 3) * 0.2, f32(32), f32(8, 32, 1, 1) * 0.3, f32(8), f32(8, 40, 1, 1) * 0.3, f32(8)
a = np.maximum(conv_nchw(x, wa, ba, 1, 1), 0)
pv = np.maximum(conv_nchw(a.mean(axis=(2, 3), keepdims=True), wp, bp, 1, 0), 0)
yv = conv_nchw(np.concatenate([a, np.broadcast_to(pv, (1, 8, 20, 24))], 1), wc, bc, 1, 0)
nodes = [h.make_node("Conv", ["x", "wa", "ba"], ["a0"], pads=[1] * 4), h.make_node("Relu", ["a0"], ["a1"]),
         h.make_node("GlobalAveragePool", ["a1"], ["g"]), h.make_node("Conv", ["g", "wp", "bp"], ["p0"]),
         h.make_node("Relu", ["p0"], ["p1"]),
         h.make_node("Resize", ["p1", "", "", "sz"], ["u"], mode="linear"),
         h.make_node("Concat", ["a1", "u"], ["k"], axis=1), h.make_node("Conv", ["k", "wc", "bc"], ["y"])]
inits = [nh.from_array(v, kn) for v, kn in ((wa, "wa"), (ba, "ba"), (wp, "wp"), (bp, "bp"), (wc, "wc"), (bc, "bc"))] + \
    [nh.from_array(np.array([1, 8, 20, 24], np.int64), "sz")]
case("tiles-aspp-pooling-broadcast", nodes, [("x", list(x.shape))], [("y", list(yv.shape))], dict(x=x), dict(y=yv),
     inits=inits, machine="mncore2", rtol=1e-4, atol=1e-5, tiles=True, need=("resizes_on_tiles",))

# Sin, Cos, Erf, Asinh and Atan as sequences, over a wide range (Sin and Cos reduce x to [-pi, pi)
# by multiples of 2 pi first) and through 0; a math.erf reference
xs = np.concatenate([np.linspace(-60, 60, 241), np.linspace(-4, 4, 81), [0.0, -0.0, 1e-8, -1e-8]]).astype(np.float32)
erf_ref = np.array([math.erf(float(v)) for v in xs], np.float32)
for op, ref in (("Sin", np.sin(xs)), ("Cos", np.cos(xs)), ("Erf", erf_ref), ("Asinh", np.arcsinh(xs)),
                ("Atan", np.arctan(xs))):
    case("seq-" + op.lower() + "-wide", [h.make_node(op, ["x"], ["y"])], [("x", [len(xs)])], [("y", [len(xs)])], dict(x=xs),
         dict(y=ref.astype(np.float32)), rtol=1e-4, atol=2e-5)

xa = np.concatenate([np.linspace(-1, 1, 201), [-0.0, 0.9999999, -0.9999999]]).astype(np.float32)
for op, ref in (("Asin", np.arcsin(xa)), ("Acos", np.arccos(xa)), ("Tan", np.tan(xa * 1.5))):
    xv = xa * 1.5 if op == "Tan" else xa  # Tan over (-1.5, 1.5), near its poles
    case("seq-" + op.lower() + "-range", [h.make_node(op, ["x"], ["y"])], [("x", [len(xa)])], [("y", [len(xa)])],
         dict(x=xv.astype(np.float32)), dict(y=ref.astype(np.float32)), rtol=1e-4, atol=2e-5)


# Round: ties to even, -0 kept, and from 2^23 on (where every float is whole) x itself; Mish over a wide
# range (x clipped at 20 inside); Gelu (opset 20) in both its forms, against math.erf and the tanh formula
xr = np.concatenate([np.arange(-6, 6.01, 0.25), [0.5, 1.5, 2.5, -0.5, -2.5, -0.0, 0.49999997, 4194304.5, 8388607.5,
                     8388609, 16777215, 3e9, -3e9, np.inf, -np.inf]]).astype(np.float32)
case("seq-round-ties-even", [h.make_node("Round", ["x"], ["y"])], [("x", [len(xr)])], [("y", [len(xr)])], dict(x=xr),
     dict(y=np.round(xr)), atol=0, rtol=0, opset=11)
xm = np.concatenate([np.linspace(-40, 40, 161), np.linspace(-3, 3, 61), [0.0, 25, 90]]).astype(np.float32)
xm64 = xm.astype(np.float64)
case("seq-mish-wide", [h.make_node("Mish", ["x"], ["y"])], [("x", [len(xm)])], [("y", [len(xm)])], dict(x=xm),
     dict(y=(xm64 * np.tanh(np.log1p(np.exp(np.minimum(xm64, 60))))).astype(np.float32)), rtol=1e-4, atol=2e-5, opset=18)
gelu_erf = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in xm64], np.float32)
gelu_tanh = (0.5 * xm64 * (1 + np.tanh(math.sqrt(2 / math.pi) * (xm64 + 0.044715 * xm64 ** 3)))).astype(np.float32)
for form, ref in (("none", gelu_erf), ("tanh", gelu_tanh)):
    case("seq-gelu-" + form, [h.make_node("Gelu", ["x"], ["y"], approximate=form)], [("x", [len(xm)])], [("y", [len(xm)])],
         dict(x=xm), dict(y=ref), rtol=1e-4, atol=2e-5, opset=20)

# IsNaN and IsInf (each side alone too): bools from floats on the window path
xi = np.array([np.nan, np.inf, -np.inf, 0, -0.0, 3.4e38, -3.4e38, 1, -1, np.nan, np.inf, 2], np.float32)
case("win-isnan", [h.make_node("IsNaN", ["x"], ["y"])], [("x", [12])], [("y", [12])], dict(x=xi), dict(y=np.isnan(xi)),
     types={"y": T.BOOL}, atol=0, rtol=0)
for pos, neg in ((1, 1), (1, 0), (0, 1)):
    ref = (np.isposinf(xi) & bool(pos)) | (np.isneginf(xi) & bool(neg))
    case("win-isinf-%d%d" % (pos, neg), [h.make_node("IsInf", ["x"], ["y"], detect_positive=pos, detect_negative=neg)], [("x", [12])],
         [("y", [12])], dict(x=xi), dict(y=ref), types={"y": T.BOOL}, atol=0, rtol=0, opset=10)

# Where on floats (the window path: the bool read as an integer): a broadcast condition, a -inf
# constant (masked_fill's form), infinities and -0 passed through exactly
cw = rng.random([3, 1, 6]) < 0.5
xw = f32(3, 4, 6)
xw.flat[:4] = [np.inf, -np.inf, -0.0, np.nan]
yw = f32(4, 6)
case("win-where-broadcast", [h.make_node("Where", ["c", "x", "y"], ["z"])], [("c", [3, 1, 6]), ("x", [3, 4, 6]), ("y", [4, 6])],
     [("z", [3, 4, 6])], dict(c=cw, x=xw, y=yw), dict(z=np.where(cw, xw, yw)), types={"c": T.BOOL}, atol=0, rtol=0, machine="l1b")
case("win-where-masked-fill", [h.make_node("Where", ["c", "ninf", "y"], ["z"])], [("c", [4, 6]), ("y", [3, 4, 6])],
     [("z", [3, 4, 6])], dict(c=cw[0, 0] | np.eye(4, 6, dtype=bool), y=xw),
     dict(z=np.where(cw[0, 0] | np.eye(4, 6, dtype=bool), np.float32(-np.inf), xw)),
     inits=[nh.from_array(np.array(-np.inf, np.float32), "ninf")], types={"c": T.BOOL}, atol=0, rtol=0, machine="l1b")

# LRN as AlexNet has it (size 5 over 64 channels of a 27x27 image): the window's squares summed by a 1x1
# convolution on tiles, the power by beta through Log and Exp; a float64 reference
xl5 = f32(1, 64, 27, 27) * 4
sq = np.pad(xl5.astype(np.float64) ** 2, ((0, 0), (2, 2), (0, 0), (0, 0)))
lrn_ref = xl5 / (2.0 + 1e-4 / 5 * sum(sq[:, i:i + 64] for i in range(5))) ** 0.75
case("lrn-alexnet", [h.make_node("LRN", ["x"], ["y"], size=5, alpha=1e-4, beta=0.75, bias=2.0)], [("x", list(xl5.shape))],
     [("y", list(xl5.shape))], dict(x=xl5), dict(y=lrn_ref.astype(np.float32)), machine="mncore2", rtol=1e-4, atol=1e-5,
     tiles=True)

# A zero Pad before an AveragePool (Inception's pooling branch) and before a Conv: the node's own padding,
# on tiles (the pool then counts the padded zeros, as the explicit Pad made it)
xp = f32(1, 16, 20, 20)
xpp = np.pad(xp, ((0, 0), (0, 0), (1, 1), (1, 1)))
avg_ref = sum(xpp[:, :, i:i + 20, j:j + 20] for i in range(3) for j in range(3)) / 9
wp3 = f32(8, 16, 3, 3) * 0.2
xpc = np.pad(xp, ((0, 0), (0, 0), (2, 0), (1, 1)))
conv_ref = sum(np.einsum("nchw,oc->nohw", xpc[:, :, i:i + 20, j:j + 20], wp3[:, :, i, j]) for i in range(3) for j in range(3))
case("pad-folded-into-pool", [h.make_node("Pad", ["x", "pa"], ["xa"]), h.make_node("AveragePool", ["xa"], ["ya"], kernel_shape=[3, 3])],
     [("x", [1, 16, 20, 20])], [("ya", [1, 16, 20, 20])], dict(x=xp), dict(ya=avg_ref.astype(np.float32)),
     inits=[i64s("pa", [0, 0, 1, 1, 0, 0, 1, 1])], machine="mncore2", rtol=1e-4, atol=1e-5, need=("pads_folded",))
case("pad-folded-into-conv", [h.make_node("Pad", ["x", "pc"], ["xc"]), h.make_node("Conv", ["xc", "w"], ["yc"], kernel_shape=[3, 3])],
     [("x", [1, 16, 20, 20])], [("yc", [1, 8, 20, 20])], dict(x=xp), dict(yc=conv_ref.astype(np.float32)),
     inits=[i64s("pc", [0, 0, 2, 1, 0, 0, 0, 1]), nh.from_array(wp3, "w")], machine="mncore2", rtol=1e-4, atol=1e-5, tiles=True,
     need=("pads_folded",))

# A classifier over a flattened image (AlexNet's form): the product becomes a Conv whose kernel is the whole
# image, its one pixel sent from tile 0 to every MAB; Gemm with transB and a bias, and MatMul by (K, N)
xf = f32(1, 16, 12, 12)
wf = f32(32, 16, 3, 3) * 0.2
xfp = np.pad(xf, ((0, 0), (0, 0), (1, 1), (1, 1)))
feat = np.maximum(sum(np.einsum("nchw,oc->nohw", xfp[:, :, i:i + 12, j:j + 12], wf[:, :, i, j]) for i in range(3)
                      for j in range(3)), 0).reshape(1, -1)
wg, bg, wm = f32(10, 32 * 144) * 0.05, f32(10), f32(32 * 144, 24) * 0.05
conv_relu = [h.make_node("Conv", ["x", "wf"], ["c"], kernel_shape=[3, 3], pads=[1] * 4), h.make_node("Relu", ["c"], ["r"]),
             h.make_node("Flatten", ["r"], ["fl"])]
case("fc-flattened-gemm", conv_relu + [h.make_node("Gemm", ["fl", "wg", "bg"], ["y"], transB=1)], [("x", [1, 16, 12, 12])],
     [("y", [1, 10])], dict(x=xf), dict(y=(feat @ wg.T + bg).astype(np.float32)),
     inits=[nh.from_array(wf, "wf"), nh.from_array(wg, "wg"), nh.from_array(bg, "bg")], machine="mncore2", rtol=1e-4,
     atol=1e-4, tiles=True, need=("products_of_flattened_images",))
case("fc-flattened-matmul", conv_relu + [h.make_node("MatMul", ["fl", "wm"], ["y"])], [("x", [1, 16, 12, 12])],
     [("y", [1, 24])], dict(x=xf), dict(y=(feat @ wm).astype(np.float32)),
     inits=[nh.from_array(wf, "wf"), nh.from_array(wm, "wm")], machine="mncore2", rtol=1e-4, atol=1e-4, tiles=True,
     need=("products_of_flattened_images",))

# PyTorch's MaxPool1d(k, stride=d, dilation=d) over a long signal (the form of pytorch-converted's
# MaxPool1d_stride_padding_dilation): the host lays the signal out as rows of d samples (an I/O view), the
# grid's column is picked on tiles of one column per MAB, the window is a chain of 2-tap pools on the tiles,
# and the host reads the output rows back as the signal they are
sig = f32(1, 2, 24000)
k1, d1, p1 = 40, 8, 16
ol1 = (24000 + 2 * p1 - d1 * (k1 - 1) - 1) // d1 + 1
sigp = np.pad(sig, ((0, 0), (0, 0), (p1, p1)), constant_values=-np.inf)
pool1_ref = np.max([sigp[:, :, i * d1:i * d1 + d1 * (ol1 - 1) + 1:d1] for i in range(k1)], axis=0)
case("io-view-maxpool1d-dilated", [h.make_node("MaxPool", ["x"], ["y"], kernel_shape=[k1], strides=[d1], dilations=[d1],
                                               pads=[p1, p1])],
     [("x", [1, 2, 24000])], [("y", [1, 2, ol1])], dict(x=sig), dict(y=pool1_ref), machine="mncore2", atol=0, rtol=0,
     need=("io_views", "dilated_pools_lowered"))

# A product whose B is a graph input too large to copy to every MAB: the host writes it in the streamed panels'
# layout as it writes a constant B, and the product streams it from DRAM
ar, br = f32(64, 512), f32(512, 256)
case("matmul-runtime-b-streamed", [h.make_node("MatMul", ["a", "b"], ["y"])], [("a", [64, 512]), ("b", [512, 256])],
     [("y", [64, 256])], dict(a=ar, b=br), dict(y=(ar.astype(np.float64) @ br).astype(np.float32)), machine="mncore2",
     rtol=1e-4, atol=1e-4, on_matrix=True, need=("products_streaming_b",))

# Rows that change L2B: a batch-first (B, S, D) sequence to seq-first (S, B, D) and back, the batch spread
# over the L2Bs one way and not the other (rowmove.c's exchange form: L2BM to PDM to L2BM by mvp)
xs4 = f32(4, 64, 512)
sig = lambda v: 1 / (1 + np.exp(-v.astype(np.float64)))
case("rowmove-exchange-transpose", [h.make_node("Relu", ["x"], ["r"]), h.make_node("Transpose", ["r"], ["t"], perm=[1, 0, 2]),
                                    h.make_node("Sigmoid", ["t"], ["s"]),
                                    h.make_node("Transpose", ["s"], ["y"], perm=[1, 0, 2])],
     [("x", [4, 64, 512])], [("y", [4, 64, 512])], dict(x=xs4), dict(y=sig(np.maximum(xs4, 0)).astype(np.float32)),
     machine="mncore2", rtol=1e-6, atol=1e-6)

# ViT's class token: a Gather of token 0 from tokens spread over the L1Bs, then the head; the gather's scratch
# takes only the blocks the token's row lies in (the whole input would not fit the L1BM)
xt, wt, bt = f32(1, 17, 128), f32(10, 128) * 0.1, f32(10)
case("gather-class-token", [h.make_node("Relu", ["x"], ["r"]), h.make_node("Gather", ["r", "i0"], ["c"], axis=1),
                            h.make_node("Gemm", ["c", "w", "b"], ["y"], transB=1)],
     [("x", [1, 17, 128])], [("y", [1, 10])], dict(x=xt),
     dict(y=(np.maximum(xt[:, 0], 0).astype(np.float64) @ wt.T + bt).astype(np.float32)),
     inits=[nh.from_array(np.array(0, np.int64), "i0"), nh.from_array(wt, "w"), nh.from_array(bt, "b")],
     machine="mncore2", rtol=1e-5, atol=1e-5)

# ViT's stem at 224 x 224 (emitter/blockmove.c): the patch convolution on tiles, its pixels as a sequence (a
# Reshape laid out so that the Transpose after it keeps every element where it is), the class token before them
# (every token one MAB on, across L1Bs and L2Bs), position embeddings, and the class token's row to a linear head:
# each token's packed channels move whole between MABs, L1Bs and L2Bs
Dv = 64
xv, wv, cbv = f32(1, 3, 224, 224), f32(Dv, 3, 16, 16) * 0.05, f32(Dv)
clsv, posv, whv, bhv = f32(1, 1, Dv), f32(1, 197, Dv), f32(10, Dv) * 0.1, f32(10)
patches = xv.astype(np.float64).reshape(3, 14, 16, 14, 16).transpose(1, 3, 0, 2, 4).reshape(196, 768)
seqv = np.concatenate([clsv.reshape(1, Dv), patches @ wv.reshape(Dv, 768).T + cbv]) + posv.reshape(197, Dv)
case("vit-stem-blockmove", [h.make_node("Conv", ["x", "w", "cb"], ["c"], kernel_shape=[16, 16], strides=[16, 16]),
                            h.make_node("Reshape", ["c", "shp"], ["r"]),
                            h.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1]),
                            h.make_node("Concat", ["cls", "t"], ["s"], axis=1), h.make_node("Add", ["s", "pos"], ["a"]),
                            h.make_node("Gather", ["a", "i0"], ["g"], axis=1),
                            h.make_node("Gemm", ["g", "wh", "bh"], ["y"], transB=1)],
     [("x", [1, 3, 224, 224])], [("y", [1, 10])], dict(x=xv),
     dict(y=(seqv[0] @ whv.T + bhv).reshape(1, 10).astype(np.float32)),
     inits=[nh.from_array(wv, "w"), nh.from_array(cbv, "cb"), nh.from_array(np.array([1, Dv, 196], np.int64), "shp"),
            nh.from_array(clsv, "cls"), nh.from_array(posv, "pos"), nh.from_array(np.array(0, np.int64), "i0"),
            nh.from_array(whv, "wh"), nh.from_array(bhv, "bh")],
     machine="mncore2", rtol=1e-4, atol=1e-4, tiles=True, need=("blocks_moved_between_mabs",))

# Embeddings (planners/embed_plan.c, emitter/embed.c): a Gather of rows of a table too large for LM by indices
# given at run time (negative ones counted from the end) reads each row from DRAM through the DAR; tokens on one
# L2B's L1Bs and MABs, then more tokens than an L2B holds (over the L2Bs and as addresses)
for nm_, ishape in (("embedding-dar", [1, 40]), ("embedding-dar-spread", [3, 200])):
    tab = f32(3000, 64)
    ids = rng.integers(-3000, 3000, ishape).astype(np.int64)
    posb = f32(*ishape, 64)
    case(nm_, [h.make_node("Gather", ["tab", "ids"], ["g"], axis=0), h.make_node("Add", ["g", "pos"], ["y"])],
         [("ids", ishape)], [("y", ishape + [64])], dict(ids=ids), dict(y=tab[ids % 3000] + posb),
         inits=[nh.from_array(tab, "tab"), nh.from_array(posb, "pos")], types={"ids": T.INT64}, machine="mncore2",
         rtol=1e-6, atol=1e-6, need=("embeddings_from_dram", "embeddings_through_the_dar"))
# a small table, of more rows than the vector unit's gather tells apart, and a few tokens (the output alike on every
# L1B: each fetches the rows; index cycles no token is in computed from zeros, not the unwritten words)
tab = f32(100, 32)
ids = rng.integers(-100, 100, [2, 5]).astype(np.int64)
case("embedding-dar-small", [h.make_node("Gather", ["tab", "ids"], ["y"], axis=0)], [("ids", [2, 5])],
     [("y", [2, 5, 32])], dict(ids=ids), dict(y=tab[ids % 100]), inits=[nh.from_array(tab, "tab")],
     types={"ids": T.INT64}, machine="mncore2", rtol=1e-6, atol=1e-6,
     need=("embeddings_from_dram", "embeddings_through_the_dar"))

# Reductions over axes spread over the tree (emitter/treereduce.c): a sequence's mean over its tokens (on the MABs,
# L1Bs and L2Bs, 197 of 256 places: the padding masked), a max over tokens on the MABs and L2Bs with the batch on
# the L1Bs (side by side in the L2BM), a sum kept as an axis of 1
for nm_, op, shp, keep in (("reduce-tree-mean-tokens", "ReduceMean", [1, 197, 96], 0),
                           ("reduce-tree-max-batch", "ReduceMax", [4, 64, 128], 1),
                           ("reduce-tree-sum", "ReduceSum", [8, 128, 64], 1)):
    xr = f32(*shp)
    rr = np.maximum(xr, 0).astype(np.float64)
    ref = {"ReduceMean": rr.mean(1, keepdims=bool(keep)), "ReduceMax": rr.max(1, keepdims=bool(keep)),
           "ReduceSum": rr.sum(1, keepdims=bool(keep))}[op].astype(np.float32)
    red = h.make_node(op, ["r", "ax"], ["y"], keepdims=keep) if op == "ReduceSum" else \
        h.make_node(op, ["r"], ["y"], axes=[1], keepdims=keep)  # (opset 13: ReduceSum's axes an input)
    case(nm_, [h.make_node("Relu", ["x"], ["r"]), red], [("x", shp)], [("y", list(ref.shape))], dict(x=xr), dict(y=ref),
         inits=[nh.from_array(np.array([1], np.int64), "ax")] if op == "ReduceSum" else [], machine="mncore2",
         rtol=1e-5, atol=1e-5, need=("reductions_over_the_tree",))

# Softmax and LogSoftmax over an axis other than the last (planners/softmax_lower.c): its function body, the
# reductions over the tokens on the tree (the graph input laid out for them)
xsm = f32(4, 64, 96)
esm = np.exp(xsm.astype(np.float64) - xsm.max(1, keepdims=True))
for nm_, op, ref in (("softmax-across-tokens", "Softmax", esm / esm.sum(1, keepdims=True)),
                     ("logsoftmax-across-tokens", "LogSoftmax", np.log(esm / esm.sum(1, keepdims=True)))):
    case(nm_, [h.make_node(op, ["x"], ["y"], axis=1)], [("x", [4, 64, 96])], [("y", [4, 64, 96])], dict(x=xsm),
         dict(y=ref.astype(np.float32)), machine="mncore2", rtol=1e-5, atol=1e-5,
         need=("softmaxes_across_axes_lowered", "reductions_over_the_tree"))

# Transposes that make another axis the packed one (planners/turn_plan.c, emitter/turn.c, emitter/quadmove.c): 8 x 8
# blocks turned in every MAB's matrix register; around them, layout switches that move single addresses of a MAB
# between MABs, L1Bs, L2Bs and groups (by output rows and by input rows, with the PDM exchange): a graph input laid
# out for the turn, Softmax rows on both sides, 197 tokens (padding) over 8 L2Bs, an input alike on every L2B
def sm_rows(v):
    e = np.exp(v - v.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


for nm_, shp, perm, first, last in (("transpose-turned", [256, 256], [1, 0], "Relu", "Relu"),
                                    ("transpose-quadmoves", [4, 64, 512], [0, 2, 1], "Softmax", "Softmax"),
                                    ("transpose-quadmoves-tokens", [1, 197, 768], [0, 2, 1], "Softmax", "Relu"),
                                    ("transpose-quadmoves-alike", [128, 512], [1, 0], "Softmax", "Softmax")):
    xq = f32(*shp)
    f = {"Relu": lambda v: np.maximum(v, 0), "Softmax": sm_rows}
    refq = f[last](f[first](xq.astype(np.float64)).transpose(perm)).astype(np.float32)
    mk_ = lambda op, a, b: h.make_node(op, [a], [b], axis=-1) if op == "Softmax" else h.make_node(op, [a], [b])
    case(nm_, [mk_(first, "x", "r"), h.make_node("Transpose", ["r"], ["t"], perm=perm), mk_(last, "t", "y")],
         [("x", shp)], [("y", list(refq.shape))], dict(x=xq), dict(y=refq), machine="mncore2", rtol=1e-5, atol=1e-6,
         need=("transposes_turned_in_mabs",) + (("quads_moved_between_mabs",) if first == "Softmax" else ()))

# 196 tokens on 256 places: the switch after the turn assembles each output row from rows whose quads past the
# last token are padding (their patterns agree where both name a quad)
xq = f32(1, 256, 196)
refq = sm_rows(np.maximum(xq.astype(np.float64), 0).transpose(0, 2, 1)).astype(np.float32)
case("transpose-quadmoves-padded", [h.make_node("Relu", ["x"], ["r"]), h.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1]),
                                    h.make_node("Softmax", ["t"], ["y"], axis=-1)],
     [("x", [1, 256, 196])], [("y", [1, 196, 256])], dict(x=xq), dict(y=refq), machine="mncore2", rtol=1e-5, atol=1e-6,
     need=("transposes_turned_in_mabs", "quads_moved_between_mabs"))


# Convolutions over one axis (planners/conv1d_lower.c): as a 2-D one on an image of one row, on tiles; the rows back
# to a sequence a view turned into the packed steps (a switch that turns blocks, step 3 of the layout planner); and
# a conformer's convolution module: tokens to channels (Transpose), the Conv1d, back, a residual Add
def conv1d(x, w, b, pad):
    n, c, l = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad)))
    k = w.shape[2]
    cols = np.stack([xp[:, :, i:i + l + 2 * pad - k + 1] for i in range(k)], 3)  # n, c, ol, k
    return np.einsum("ncok,dck->ndo", cols, w) + b[None, :, None]


xc, wc, bc = f32(1, 256, 100), f32(256, 256, 3) * 0.05, f32(256)
case("conv1d-lowered", [h.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3], pads=[1, 1]),
                        h.make_node("Relu", ["c"], ["y"])],
     [("x", [1, 256, 100])], [("y", [1, 256, 100])], dict(x=xc),
     dict(y=np.maximum(conv1d(xc.astype(np.float64), wc, bc, 1), 0).astype(np.float32)),
     inits=[nh.from_array(wc, "w"), nh.from_array(bc, "b")], machine="mncore2", rtol=1e-4, atol=1e-4, tiles=True,
     need=("one_d_convolutions_lowered",))
xt2 = f32(1, 100, 256)
yt2 = xt2 + conv1d(xt2.astype(np.float64).transpose(0, 2, 1), wc, bc, 1).transpose(0, 2, 1)
case("conv1d-conformer", [h.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1]),
                          h.make_node("Conv", ["t", "w", "b"], ["c"], kernel_shape=[3], pads=[1, 1]),
                          h.make_node("Transpose", ["c"], ["u"], perm=[0, 2, 1]), h.make_node("Add", ["x", "u"], ["y"])],
     [("x", [1, 100, 256])], [("y", [1, 100, 256])], dict(x=xt2), dict(y=yt2.astype(np.float32)),
     inits=[nh.from_array(wc, "w"), nh.from_array(bc, "b")], machine="mncore2", rtol=1e-4, atol=1e-4, tiles=True,
     need=("one_d_convolutions_lowered",))

# a convolution module's chain of Conv1d's (conv1d_lower.c pushes the views back to a sequence through the GLU's
# Split, Sigmoid and Mul, where they meet the next convolution's view: one image of one row throughout)
w1, b1 = f32(512, 256, 1) * 0.05, f32(512)
w2, b2 = f32(256, 256, 3) * 0.05, f32(256)
pre = conv1d(xc.astype(np.float64), w1, b1, 0)
glu = pre[:, :256] / (1 + np.exp(-pre[:, 256:]))
case("conv1d-glu-chain", [h.make_node("Conv", ["x", "w1", "b1"], ["c"], kernel_shape=[1]),
                          h.make_node("Split", ["c"], ["a", "g"], axis=1), h.make_node("Sigmoid", ["g"], ["s"]),
                          h.make_node("Mul", ["a", "s"], ["m"]),
                          h.make_node("Conv", ["m", "w2", "b2"], ["y"], kernel_shape=[3], pads=[1, 1])],
     [("x", [1, 256, 100])], [("y", [1, 256, 100])], dict(x=xc), dict(y=conv1d(glu, w2, b2, 1).astype(np.float32)),
     inits=[nh.from_array(w1, "w1"), nh.from_array(b1, "b1"), nh.from_array(w2, "w2"), nh.from_array(b2, "b2")],
     machine="mncore2", rtol=1e-4, atol=1e-4, tiles=True, need=("one_d_convolutions_lowered", "one_d_views_pushed"))

# Products of one row by a constant B (gemv_lower.c): a recurrent step's gate (Gemm with transB, alpha, beta and
# its bias), two MatMuls of rank-3 rows by one B (one B' for both, the sum viewed back), and one on tiny
ag, bg, cg_ = f32(1, 256), f32(256, 256) * 0.1, f32(256)
case("gemv-gate", [h.make_node("Gemm", ["a", "b", "c"], ["y"], transB=1, alpha=0.5, beta=2.0)], [("a", [1, 256])],
     [("y", [1, 256])], dict(a=ag), dict(y=(0.5 * ag @ bg.T + 2 * cg_).astype(np.float32)),
     inits=[nh.from_array(bg, "b"), nh.from_array(cg_, "c")], machine="mncore2", rtol=1e-4, atol=1e-5,
     need=("row_products_on_the_vector_unit",))
a1, a2, bs = f32(1, 1, 128), f32(1, 1, 128), f32(128, 200) * 0.1
case("gemv-shared-b", [h.make_node("MatMul", ["a1", "b"], ["p1"]), h.make_node("MatMul", ["a2", "b"], ["p2"]),
                       h.make_node("Mul", ["p1", "p2"], ["y"])], [("a1", [1, 1, 128]), ("a2", [1, 1, 128])],
     [("y", [1, 1, 200])], dict(a1=a1, a2=a2), dict(y=((a1 @ bs) * (a2 @ bs)).astype(np.float32)),
     inits=[nh.from_array(bs, "b")], machine="mncore2", rtol=1e-4, atol=1e-5, need=("row_products_on_the_vector_unit",))
at, bt = f32(1, 16), f32(16, 12)
case("gemv-tiny", [h.make_node("MatMul", ["a", "b"], ["y"])], [("a", [1, 16])], [("y", [1, 12])], dict(a=at),
     dict(y=(at @ bt).astype(np.float32)), inits=[nh.from_array(bt, "b")], rtol=1e-4, atol=1e-5,
     need=("row_products_on_the_vector_unit",))

# Loop and Scan unrolled (frontend/unroll.c): a Loop of 4 iterations carrying h through a product with an
# outer-scope weight, its input row picked by the iteration number, h stacked as a scan output; a Scan (opset 11)
# over a reversed input with a reversed scan output and a body initializer; a Scan at opset 8 (a batch axis)
xl, wl = f32(4, 16), f32(16, 16) * 0.3
body = h.make_graph([h.make_node("Gather", ["xs", "i"], ["row"], axis=0),
                     h.make_node("MatMul", ["h_in", "w"], ["p"]), h.make_node("Add", ["p", "row"], ["q"]),
                     h.make_node("Tanh", ["q"], ["h_out"]), h.make_node("Identity", ["c_in"], ["c_out"]),
                     h.make_node("Identity", ["h_out"], ["h_scan"])], "body",
                    [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("c_in", T.BOOL, []),
                     h.make_tensor_value_info("h_in", T.FLOAT, [1, 16])],
                    [h.make_tensor_value_info("c_out", T.BOOL, []), h.make_tensor_value_info("h_out", T.FLOAT, [1, 16]),
                     h.make_tensor_value_info("h_scan", T.FLOAT, [1, 16])])
hs, hh = [], np.zeros((1, 16), np.float32)
for i in range(4):
    hh = np.tanh(hh @ wl + xl[i]).astype(np.float32)
    hs.append(hh)
case("loop-carried-and-scanned", [h.make_node("Loop", ["m", "c", "h0"], ["hT", "hall"], body=body)],
     [("xs", [4, 16])], [("hT", [1, 16]), ("hall", [4, 1, 16])], dict(xs=xl), dict(hT=hh, hall=np.stack(hs)),
     inits=[nh.from_array(np.array(4, np.int64), "m"), nh.from_array(np.array(True), "c"),
            nh.from_array(np.zeros((1, 16), np.float32), "h0"), nh.from_array(wl, "w")], rtol=1e-4, atol=1e-5)
xsn = f32(5, 8)
sbody = h.make_graph([h.make_node("Mul", ["s_in", "half"], ["a"]), h.make_node("Add", ["a", "x_t"], ["s_out"]),
                      h.make_node("Relu", ["s_out"], ["r"])], "sbody",
                     [h.make_tensor_value_info("s_in", T.FLOAT, [8]), h.make_tensor_value_info("x_t", T.FLOAT, [8])],
                     [h.make_tensor_value_info("s_out", T.FLOAT, [8]), h.make_tensor_value_info("r", T.FLOAT, [8])],
                     initializer=[nh.from_array(np.array(0.5, np.float32), "half")])
st, rs = np.zeros(8, np.float32), []
for t in range(5):
    st = (st * 0.5 + xsn[4 - t]).astype(np.float32)
    rs.append(np.maximum(st, 0))
case("scan-reversed", [h.make_node("Scan", ["s0", "x"], ["sT", "rall"], body=sbody, num_scan_inputs=1,
                                   scan_input_directions=[1], scan_output_directions=[1])],
     [("x", [5, 8])], [("sT", [8]), ("rall", [5, 8])], dict(x=xsn), dict(sT=st, rall=np.stack(rs[::-1])),
     inits=[nh.from_array(np.zeros(8, np.float32), "s0")], opset=11, rtol=1e-5, atol=1e-6)
xb = f32(2, 3, 4)
s8 = h.make_graph([h.make_node("Add", ["s_in", "x_t"], ["s_out"]), h.make_node("Identity", ["s_out"], ["o"])], "s8",
                  [h.make_tensor_value_info("s_in", T.FLOAT, [4]), h.make_tensor_value_info("x_t", T.FLOAT, [4])],
                  [h.make_tensor_value_info("s_out", T.FLOAT, [4]), h.make_tensor_value_info("o", T.FLOAT, [4])])
case("scan-opset8-batch", [h.make_node("Scan", ["", "s0", "x"], ["sT", "oall"], body=s8, num_scan_inputs=1)],
     [("x", [2, 3, 4])], [("sT", [2, 4]), ("oall", [2, 3, 4])], dict(x=xb),
     dict(sT=xb.sum(axis=1), oall=np.cumsum(xb, axis=1).astype(np.float32)),
     inits=[nh.from_array(np.zeros((2, 4), np.float32), "s0")], opset=8, rtol=1e-5, atol=1e-6)

# Integer casts (cast.c, int_cast): an attention mask of int64 to float (BERT's extended mask), float to int32
# and back (truncation), int64 to int32 and back, float to int64, int64 to bool and back
mk = rng.integers(0, 2, (2, 128)).astype(np.int64)
case("cast-int64-mask-to-float", [h.make_node("Cast", ["m"], ["mf"], to=T.FLOAT), h.make_node("Sub", ["one", "mf"], ["d"]),
                                  h.make_node("Mul", ["d", "big"], ["y"])],
     [("m", [2, 128])], [("y", [2, 128])], dict(m=mk), dict(y=((1 - mk) * -10000.0).astype(np.float32)),
     inits=[nh.from_array(np.array(1, np.float32), "one"), nh.from_array(np.array(-10000, np.float32), "big")],
     types={"m": T.INT64}, machine="mncore2", atol=0, rtol=0)
xi = (f32(64, 96) * 1000).astype(np.float32)
case("cast-float-int32-float", [h.make_node("Cast", ["x"], ["i"], to=T.INT32), h.make_node("Cast", ["i"], ["y"], to=T.FLOAT)],
     [("x", [64, 96])], [("y", [64, 96])], dict(x=xi), dict(y=np.trunc(xi)), machine="mncore2", atol=0, rtol=0)
li = rng.integers(-2**31, 2**31, (3, 50)).astype(np.int64)
case("cast-int64-int32-int64", [h.make_node("Cast", ["x"], ["i"], to=T.INT32), h.make_node("Cast", ["i"], ["y"], to=T.INT64)],
     [("x", [3, 50])], [("y", [3, 50])], dict(x=li), dict(y=li), types={"x": T.INT64, "y": T.INT64}, machine="mncore2",
     atol=0, rtol=0)
case("cast-float-int64", [h.make_node("Cast", ["x"], ["y"], to=T.INT64)], [("x", [64, 96])], [("y", [64, 96])], dict(x=xi),
     dict(y=np.trunc(xi).astype(np.int64)), types={"y": T.INT64}, machine="mncore2", atol=0, rtol=0)
lb = rng.integers(-3, 3, (4, 40)).astype(np.int64)
case("cast-int64-bool-int64", [h.make_node("Cast", ["x"], ["b"], to=T.BOOL), h.make_node("Cast", ["b"], ["y"], to=T.INT64)],
     [("x", [4, 40])], [("y", [4, 40])], dict(x=lb), dict(y=(lb != 0).astype(np.int64)), types={"x": T.INT64, "y": T.INT64},
     machine="mncore2", atol=0, rtol=0)

# Casts between float widths (cast.c): float to half and back (ll reads, fvpassar, then hvpassa into pairs),
# double to float (exact against numpy), and double to half through float in GRF0. The machine's half is
# MN-Core's (9 mantissa bits, not IEEE's 10): a float16 value is within 2^-10 of IEEE's rounding, relatively
xc = (f32(64, 256) * 100).astype(np.float32)
for m in ("mncore2", "l1b"):
    case("cast-float-half-float-" + m, [h.make_node("Cast", ["x"], ["hx"], to=T.FLOAT16), h.make_node("Cast", ["hx"], ["y"], to=T.FLOAT)],
         [("x", [64, 256])], [("y", [64, 256])], dict(x=xc), dict(y=xc.astype(np.float16).astype(np.float32)), machine=m,
         atol=0, rtol=2e-3)
xd = rng.standard_normal((32, 64)) * 1e3
case("cast-double-float", [h.make_node("Cast", ["x"], ["y"], to=T.FLOAT)], [("x", [32, 64])], [("y", [32, 64])], dict(x=xd),
     dict(y=xd.astype(np.float32)), types={"x": T.DOUBLE}, machine="mncore2", atol=0, rtol=0)
case("cast-double-half", [h.make_node("Cast", ["x"], ["y"], to=T.FLOAT16)], [("x", [32, 64])], [("y", [32, 64])], dict(x=xd),
     dict(y=xd.astype(np.float16)), types={"x": T.DOUBLE, "y": T.FLOAT16}, machine="mncore2", atol=0, rtol=2e-3)

# Rows whose length 8 does not divide (ViT's 197 keys, a LayerNorm over 100): the last long word's padding lanes
# take the fold's neutral value first (-inf for the max, 0 for the sums), masked per PE (rows.c)
xs197 = f32(3, 197, 197) * 3
e197 = np.exp(xs197.astype(np.float64) - xs197.max(-1, keepdims=True))
case("rows-softmax-197", [h.make_node("Softmax", ["x"], ["y"], axis=-1)], [("x", [3, 197, 197])], [("y", [3, 197, 197])],
     dict(x=xs197), dict(y=(e197 / e197.sum(-1, keepdims=True)).astype(np.float32)), machine="mncore2", rtol=1e-5, atol=1e-6,
     need=("window_outputs_aligned",))
xl100, gl, bl = f32(64, 100) * 2 + 1, f32(100), f32(100)
ln_ref = (xl100 - xl100.mean(-1, keepdims=True)) / np.sqrt(xl100.var(-1, keepdims=True) + 1e-5) * gl + bl
case("rows-layernorm-100", [h.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1)], [("x", [64, 100])],
     [("y", [64, 100])], dict(x=xl100), dict(y=ln_ref.astype(np.float32)), inits=[nh.from_array(gl, "g"), nh.from_array(bl, "b")],
     machine="mncore2", rtol=1e-4, atol=1e-5, opset=17)

# Products whose K 8 does not divide: the padding lanes of A's last block and of B's are zeroed before the
# products (matmul.c pad_k); a constant B of K 100, and attention's P V over 197 keys with a run-time V
ak, bk = f32(64, 100), f32(100, 32) * 0.1
case("matmul-k100", [h.make_node("MatMul", ["a", "b"], ["y"])], [("a", [64, 100])], [("y", [64, 32])], dict(a=ak),
     dict(y=(ak.astype(np.float64) @ bk).astype(np.float32)), inits=[nh.from_array(bk, "b")], machine="mncore2", rtol=1e-4,
     atol=1e-5, on_matrix=True)
qa, kta, vv = f32(3, 197, 64) * 0.3, f32(3, 64, 197) * 0.3, f32(3, 197, 64)
sa = np.einsum("hqd,hdk->hqk", qa.astype(np.float64), kta)
ea = np.exp(sa - sa.max(-1, keepdims=True))
pv_ref = np.einsum("hqk,hkd->hqd", ea / ea.sum(-1, keepdims=True), vv.astype(np.float64))
case("attention-pv-197", [h.make_node("MatMul", ["q", "kt"], ["s"]), h.make_node("Softmax", ["s"], ["p"], axis=-1),
                          h.make_node("MatMul", ["p", "v"], ["y"])],
     [("q", [3, 197, 64]), ("kt", [3, 64, 197]), ("v", [3, 197, 64])], [("y", [3, 197, 64])], dict(q=qa, kt=kta, v=vv),
     dict(y=pv_ref.astype(np.float32)), machine="mncore2", rtol=1e-4, atol=1e-5, on_matrix=True)

# Attention at batch 4, sequence first (a torch encoder's batch_first input transposed): the batch over the
# L2Bs. The head split and merge keep every element where it is (layout_plan.c: a view's or Transpose's layout
# regrouped from its input's), the merged heads' features packed again for the output projection by a row move
# within each L2B; nothing crosses an L2B but the first Transpose's rows
xa4, wq4, wo4, bo4 = f32(4, 64, 128), f32(128, 128) * 0.1, f32(128, 128) * 0.1, f32(128)
def attn4_ref(x):
    t = np.transpose(x.astype(np.float64), (1, 0, 2)) @ wq4
    qt = np.transpose(t.reshape(64, 16, 32), (1, 0, 2))
    s = qt @ np.transpose(qt, (0, 2, 1))
    e = np.exp(s - s.max(-1, keepdims=True))
    o = (e / e.sum(-1, keepdims=True)) @ qt
    return (np.transpose(o, (1, 0, 2)).reshape(256, 128) @ wo4.T + bo4).astype(np.float32)
case("attention-batch4-seq-first",
     [h.make_node("Transpose", ["x"], ["t"], perm=[1, 0, 2]), h.make_node("MatMul", ["t", "wq"], ["q"]),
      h.make_node("Reshape", ["q", "s3"], ["qh"]), h.make_node("Transpose", ["qh"], ["qt"], perm=[1, 0, 2]),
      h.make_node("Transpose", ["qh"], ["kt"], perm=[1, 2, 0]), h.make_node("MatMul", ["qt", "kt"], ["s"]),
      h.make_node("Softmax", ["s"], ["p"], axis=-1), h.make_node("MatMul", ["p", "qt"], ["o"]),
      h.make_node("Transpose", ["o"], ["ot"], perm=[1, 0, 2]), h.make_node("Reshape", ["ot", "s2"], ["om"]),
      h.make_node("Gemm", ["om", "wo", "bo"], ["y"], transB=1)],
     [("x", [4, 64, 128])], [("y", [256, 128])], dict(x=xa4), dict(y=attn4_ref(xa4)),
     inits=[nh.from_array(wq4, "wq"), nh.from_array(wo4, "wo"), nh.from_array(bo4, "bo"),
            nh.from_array(np.array([64, 16, 32], np.int64), "s3"), nh.from_array(np.array([256, 128], np.int64), "s2")],
     machine="mncore2", rtol=1e-4, atol=1e-5, need=("views_kept_in_place",))

# Recurrent models unrolled (planners/rnn_lower.c): two stacked LSTM layers with constant weights (their
# gates' rows folded into each gate's own product), the second reading the first's steps where they were
# computed (planners/stack_take.c); a bidirectional GRU with linear_before_reset, a cell clip and an initial
# state. Against numpy in float64 (the ONNX equations)
sg = lambda v: 1 / (1 + np.exp(-v))
def lstm_ref(x, w, r, bb, h=None, cst=None):
    H = r.shape[-1]
    h = np.zeros((x.shape[1], H)) if h is None else h
    cst = np.zeros((x.shape[1], H)) if cst is None else cst
    ys = []
    for t in range(x.shape[0]):
        g = x[t] @ w[0].T + h @ r[0].T + bb[0, :4 * H] + bb[0, 4 * H:]
        i, o, f, c = sg(g[:, :H]), sg(g[:, H:2 * H]), sg(g[:, 2 * H:3 * H]), np.tanh(g[:, 3 * H:])
        cst = f * cst + i * c
        h = o * np.tanh(cst)
        ys.append(h)
    return np.stack(ys)[:, None], h[None]
xl = f32(8, 2, 16)
wl1, rl1, bl1 = f32(1, 128, 16) * 0.3, f32(1, 128, 32) * 0.3, f32(1, 256) * 0.1
wl2, rl2, bl2 = f32(1, 128, 32) * 0.3, f32(1, 128, 32) * 0.3, f32(1, 256) * 0.1
y1, _ = lstm_ref(xl.astype(np.float64), wl1, rl1, bl1)
y2, h2 = lstm_ref(y1[:, 0], wl2, rl2, bl2)
case("lstm-two-layers", [h.make_node("LSTM", ["x", "w1", "r1", "b1"], ["y1"], hidden_size=32),
                         h.make_node("Reshape", ["y1", "s3"], ["x2"]),
                         h.make_node("LSTM", ["x2", "w2", "r2", "b2"], ["y", "yh"], hidden_size=32)],
     [("x", [8, 2, 16])], [("y", [8, 1, 2, 32]), ("yh", [1, 2, 32])], dict(x=xl),
     dict(y=y2.astype(np.float32), yh=h2.astype(np.float32)),
     inits=[nh.from_array(v, k) for k, v in dict(w1=wl1, r1=rl1, b1=bl1, w2=wl2, r2=rl2, b2=bl2).items()] +
     [nh.from_array(np.array([8, 2, 32], np.int64), "s3")], machine="mncore2", rtol=1e-4, atol=1e-5,
     need=("recurrent_nodes_unrolled", "stack_takes"))
def gru_ref(x, w, r, bb, h, clip, rev):
    H = r.shape[-1]
    ys = [None] * x.shape[0]
    for t in (range(x.shape[0] - 1, -1, -1) if rev else range(x.shape[0])):
        gx, gh = x[t] @ w.T + bb[:3 * H], h @ r.T + bb[3 * H:]
        z = sg(np.clip(gx[:, :H] + gh[:, :H], -clip, clip))
        rr = sg(np.clip(gx[:, H:2 * H] + gh[:, H:2 * H], -clip, clip))
        hh = np.tanh(np.clip(gx[:, 2 * H:] + rr * gh[:, 2 * H:], -clip, clip))
        h = (1 - z) * hh + z * h
        ys[t] = h
    return np.stack(ys), h
xg, wg, rg, bg, hg = f32(6, 3, 8), f32(2, 48, 8) * 0.5, f32(2, 48, 16) * 0.5, f32(2, 96) * 0.2, f32(2, 3, 16)
yf, hf = gru_ref(xg.astype(np.float64), wg[0], rg[0], bg[0], hg[0], 0.8, False)
yr, hr = gru_ref(xg.astype(np.float64), wg[1], rg[1], bg[1], hg[1], 0.8, True)
case("gru-bidirectional-clip", [h.make_node("GRU", ["x", "w", "r", "b", "", "h0"], ["y", "yh"], hidden_size=16,
                                            direction="bidirectional", linear_before_reset=1, clip=0.8)],
     [("x", [6, 3, 8]), ("h0", [2, 3, 16])], [("y", [6, 2, 3, 16]), ("yh", [2, 3, 16])], dict(x=xg, h0=hg),
     dict(y=np.stack([yf, yr], 1).astype(np.float32), yh=np.stack([hf, hr]).astype(np.float32)),
     inits=[nh.from_array(wg, "w"), nh.from_array(rg, "r"), nh.from_array(bg, "b")], machine="mncore2", rtol=1e-4,
     atol=1e-5)

# A product whose B is made on the machine and too large to copy to every MAB (planners/panel_lower.c): panels of
# N, K in chunks past 512, the panels' outputs side by side on A's rows (emitter/elementwise.c's Concat copy); B as
# the transpose of rows made on the machine (a Gemm's transB, a Transpose before the MatMul): each panel a block of
# the rows turned
for K, N, tb in ((256, 256, 0), (1024, 128, 0), (300, 200, 1), (768, 100, 2)):
    ap, bp, cp = f32(64, K), f32(*((N, K) if tb else (K, N))), f32(N)
    rb = np.maximum(bp, 0).astype(np.float64)
    ref = ap.astype(np.float64) @ (rb.T if tb else rb) + (cp if tb == 1 else 0)
    nodes = [h.make_node("Relu", ["b"], ["rb"])]
    nodes += [h.make_node("Gemm", ["a", "rb", "c"], ["y"], transB=1)] if tb == 1 else \
        [h.make_node("Transpose", ["rb"], ["rbt"]), h.make_node("MatMul", ["a", "rbt"], ["y"])] if tb == 2 else \
        [h.make_node("MatMul", ["a", "rb"], ["y"])]
    case("matmul-runtime-b-panels-%d-%d%s" % (K, N, ["", "-gemm-transb", "-transposed"][tb]), nodes,
         [("a", [64, K]), ("b", list(bp.shape))], [("y", [64, N])], dict(a=ap, b=bp), dict(y=ref.astype(np.float32)),
         inits=[nh.from_array(cp, "c")] if tb == 1 else [], machine="mncore2", rtol=1e-4, atol=1e-4, on_matrix=True,
         need=("products_in_panels",))

# Einsum as transposes, views and one MatMul (planners/einsum_lower.c): attention's forms, a batched product, an
# inner and an outer product, a sum over a subscript one operand alone has, a transpose, a row sum
for eq, shapes in (("bhqd,bhkd->bhqk", [(2, 4, 16, 8), (2, 4, 16, 8)]), ("bij,bjk->bik", [(3, 8, 16), (3, 16, 24)]),
                   ("i,i", [(32,), (32,)]), ("i,j->ij", [(16,), (24,)]), ("bnd,dk->bkn", [(2, 8, 16), (16, 32)]),
                   ("ij,jk->k", [(8, 16), (16, 8)]), ("ij->ji", [(8, 24)]), ("ij->i", [(16, 32)])):
    ops = [f32(*sh) for sh in shapes]
    names = ["x%d" % i for i in range(len(ops))]
    ref = np.einsum(eq, *[o.astype(np.float64) for o in ops])
    case("einsum-" + eq.replace(",", "_").replace("->", "-to-"), [h.make_node("Einsum", names, ["y"], equation=eq)],
         list(zip(names, [list(sh) for sh in shapes])), [("y", list(ref.shape))], dict(zip(names, ops)),
         dict(y=np.asarray(ref, np.float32)), machine="mncore2", rtol=1e-4, atol=1e-4, opset=13,
         need=("einsums_lowered",))

# Mod of 64- and 32-bit integers by long division (the ALU has no integer divide), exact over the whole range:
# C's fmod (x's sign) and Python's (y's sign), signed and unsigned
for bits, ty, npt in ((64, T.INT64, np.int64), (32, T.INT32, np.int32), (64, T.UINT64, np.uint64)):
    info = np.iinfo(npt)
    xm = rng.integers(info.min, info.max, size=(8, 64), dtype=npt, endpoint=True)
    ym = rng.integers(info.min >> (bits // 2), info.max >> (bits // 2), size=(8, 64), dtype=npt, endpoint=True)
    ym[ym == 0] = 7
    ym[0, :4] = np.array([1, 3, 2 ** (bits // 2) + 1, info.max], npt)
    for fm in ((0, 1) if info.min < 0 else (0,)):
        ref = np.fmod(xm, ym) if fm else np.mod(xm, ym)
        case("mod-%s-fmod%d" % (np.dtype(npt).name, fm), [h.make_node("Mod", ["x", "y"], ["z"], fmod=fm)],
             [("x", [8, 64]), ("y", [8, 64])], [("z", [8, 64])], dict(x=xm, y=ym), dict(z=ref), types={"x": ty, "y": ty, "z": ty},
             machine="mncore2", atol=0, rtol=0)

# An image given flat (1, C H W) and reshaped, pooled, flattened to the output: both views are the host's
xv = f32(1, 16 * 16 * 16)
vref = xv.reshape(1, 16, 8, 2, 8, 2).max(axis=(3, 5)).reshape(1, -1)
case("io-view-flat-image", [h.make_node("Reshape", ["x", "sh"], ["img"]),
                            h.make_node("MaxPool", ["img"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
                            h.make_node("Flatten", ["p"], ["y"])],
     [("x", [1, 4096])], [("y", [1, 1024])], dict(x=xv), dict(y=vref), inits=[i64s("sh", [1, 16, 16, 16])],
     machine="mncore2", atol=0, rtol=0, need=("io_views",))

# ConvNeXt's block: a depthwise Conv on tiles, to NHWC (a relabel: the pixel's channels stay packed), a
# LayerNorm over the channels and a product by (C, 4C) and back as rows, to NCHW again, plus the input
xc = f32(1, 32, 16, 16)
wdw = f32(32, 1, 3, 3) * 0.3
g32, b32, w1, w2 = 1 + 0.1 * f32(32), 0.1 * f32(32), f32(32, 128) * 0.1, f32(128, 32) * 0.1
xcp = np.pad(xc, ((0, 0), (0, 0), (1, 1), (1, 1)))
dwo = sum(xcp[:, :, i:i + 16, j:j + 16] * wdw[None, :, 0, i, j, None, None] for i in range(3) for j in range(3))
t = dwo.transpose(0, 2, 3, 1).astype(np.float64)
ln = (t - t.mean(-1, keepdims=True)) / np.sqrt(t.var(-1, keepdims=True) + 1e-6) * g32 + b32
cnx_ref = (np.maximum(ln @ w1, 0) @ w2).transpose(0, 3, 1, 2) + xc
case("tiles-convnext-block",
     [h.make_node("Conv", ["x", "wdw"], ["d"], kernel_shape=[3, 3], pads=[1] * 4, group=32),
      h.make_node("Transpose", ["d"], ["t"], perm=[0, 2, 3, 1]),
      h.make_node("LayerNormalization", ["t", "g", "b"], ["n"], axis=-1, epsilon=1e-6), h.make_node("MatMul", ["n", "w1"], ["m1"]),
      h.make_node("Relu", ["m1"], ["r1"]), h.make_node("MatMul", ["r1", "w2"], ["m2"]),
      h.make_node("Transpose", ["m2"], ["tb"], perm=[0, 3, 1, 2]), h.make_node("Add", ["tb", "x"], ["y"])],
     [("x", [1, 32, 16, 16])], [("y", [1, 32, 16, 16])], dict(x=xc), dict(y=cnx_ref.astype(np.float32)),
     inits=[nh.from_array(wdw, "wdw"), nh.from_array(g32.astype(np.float32), "g"), nh.from_array(b32.astype(np.float32), "b"),
            nh.from_array(w1, "w1"), nh.from_array(w2, "w2")], machine="mncore2", rtol=1e-4, atol=1e-4, opset=17, tiles=True)

# Shrink at its thresholds: exactly +-lambd gives 0 (the inequalities are strict)
xk = np.array([-3, -1.5, -1.4999999, -0.0, 0, 1.5, 1.5000001, 3], np.float32)
case("seq-shrink-at-lambd", [h.make_node("Shrink", ["x"], ["y"], lambd=1.5, bias=0.5)], [("x", [8])], [("y", [8])], dict(x=xk),
     dict(y=np.where(xk > 1.5, xk - 0.5, np.where(xk < -1.5, xk + 0.5, 0)).astype(np.float32)), atol=0, rtol=0)

# Rows on one MAB each (emitter/rows.c): Softmax over 5 long words a row (a whole chunk of
# 4 and one alone), rows of very different sizes so that a wrong max or sum shows; several
# rows per MAB on mncore2 (their bases one after another)
def softmax(x, log=False):
    e = np.exp(x - x.max(-1, keepdims=True))
    s = e.sum(-1, keepdims=True)
    return (x - x.max(-1, keepdims=True) - np.log(s)) if log else e / s
rr = np.random.default_rng(11)  # its own: the cases after keep their data
f32r = lambda *s: rr.standard_normal(s).astype(np.float32)
xr = f32r(3, 5, 40) * np.array([0.1, 3, 30], np.float32)[:, None, None]
case("rows-softmax", [h.make_node("Softmax", ["x"], ["y"], axis=-1)], [("x", [3, 5, 40])], [("y", [3, 5, 40])], dict(x=xr),
     dict(y=softmax(xr)), machine="mncore2", need=("row_reductions_on_mabs",))
xq = f32r(2, 700, 64) * 4
case("rows-logsoftmax-many-rows", [h.make_node("LogSoftmax", ["x"], ["y"], axis=2)], [("x", [2, 700, 64])], [("y", [2, 700, 64])],
     dict(x=xq), dict(y=softmax(xq, True)), machine="mncore2", rtol=1e-5, atol=1e-5, opset=11, need=("row_reductions_on_mabs",))
# LayerNormalization (opset 17) with scale and bias beside every row, rows offset far from 0
# (a one-pass variance would lose them), and without a bias on one L1B
def layernorm(x, s, b, eps):
    c = x - x.mean(-1, keepdims=True)
    return c / np.sqrt((c * c).mean(-1, keepdims=True) + eps) * s + (0 if b is None else b)
xl, sl, bl = f32r(16, 96) + 100, f32r(96), f32r(96)
case("rows-layernorm", [h.make_node("LayerNormalization", ["x", "s", "b"], ["y"], epsilon=1e-3)], [("x", [16, 96])],
     [("y", [16, 96])], dict(x=xl), dict(y=layernorm(xl, sl, bl, 1e-3)), inits=[nh.from_array(sl, "s"), nh.from_array(bl, "b")],
     machine="mncore2", opset=17, rtol=1e-4, atol=1e-4, need=("row_reductions_on_mabs",))
xn, sn = f32r(2, 3, 24), f32r(24)
case("rows-layernorm-no-bias", [h.make_node("LayerNormalization", ["x", "s"], ["y"])], [("x", [2, 3, 24])], [("y", [2, 3, 24])],
     dict(x=xn), dict(y=layernorm(xn, sn, None, 1e-5)), inits=[nh.from_array(sn, "s")], machine="l1b", opset=17, rtol=1e-4,
     atol=1e-5, need=("row_reductions_on_mabs",))

# LayerNormalization as older exporters write it: the means are row reductions whose result
# lands in every word of the row's MAB, where the Sub and Div beside the rows read it
xd = f32r(32, 64) * 3 + 5
nodes = [h.make_node("ReduceMean", ["x"], ["m"], axes=[-1]), h.make_node("Sub", ["x", "m"], ["c"]),
         h.make_node("Mul", ["c", "c"], ["q"]), h.make_node("ReduceMean", ["q"], ["v"], axes=[-1]),
         h.make_node("Add", ["v", "eps"], ["ve"]), h.make_node("Sqrt", ["ve"], ["sd"]), h.make_node("Div", ["c", "sd"], ["y"])]
case("rows-layernorm-decomposed", nodes, [("x", [32, 64])], [("y", [32, 64])], dict(x=xd), dict(y=layernorm(xd, 1, None, 1e-5)),
     inits=[nh.from_array(np.array(1e-5, np.float32), "eps")], machine="mncore2", rtol=1e-4, atol=1e-4, need=("row_reductions_on_mabs",))
xm = f32r(4, 6, 48)
nodes = [h.make_node("ReduceMax", ["x"], ["a"], axes=[2]), h.make_node("ReduceMin", ["x"], ["b"], axes=[2]),
         h.make_node("ReduceSumSquare", ["x"], ["c"], axes=[2])]
case("rows-reduce-max-min-sumsquare", nodes, [("x", [4, 6, 48])], [("a", [4, 6, 1]), ("b", [4, 6, 1]), ("c", [4, 6, 1])], dict(x=xm),
     dict(a=xm.max(2, keepdims=True), b=xm.min(2, keepdims=True), c=(xm * xm).sum(2, keepdims=True)), machine="mncore2",
     rtol=1e-5, atol=1e-5, need=("row_reductions_on_mabs",))

# A MaxPool whose dilation is its stride (PyTorch's MaxPool2d_stride_padding_dilation at a
# tenth of its size): the pixels on the grid picked from each tile, then chains of 2-tap
# pools along the rows and the columns, all on tiles
def box_pool(x, k, d, pads, oh, ow):
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2] + k[0] * d[0]), (pads[1], pads[3] + k[1] * d[1])), constant_values=-np.inf)
    y = np.full(x.shape[:2] + (oh, ow), -np.inf, np.float32)
    for i in range(k[0]):
        for j in range(k[1]):
            y = np.maximum(y, xp[:, :, i * d[0]:i * d[0] + oh * d[0]:d[0], j * d[1]:j * d[1] + ow * d[1]:d[1]])
    return y
xb = f32r(1, 16, 100, 120)
yb = box_pool(xb, (6, 5), (10, 4), (10, 8, 10, 8), 7, 30)
case("tiles-maxpool-dilation-as-stride", [h.make_node("MaxPool", ["x"], ["y"], kernel_shape=[6, 5], strides=[10, 4], dilations=[10, 4],
                                                     pads=[10, 8, 10, 8])],
     [("x", [1, 16, 100, 120])], [("y", [1, 16, 7, 30])], dict(x=xb), dict(y=yb), machine="mncore2", tiles=False,
     need=("dilated_pools_lowered",))

# Batched products with a run-time B on the matrix unit: one B table per batch, each slot
# of rows multiplied by its batch's table; B broadcast over a batch axis; attention's
# scores (4 heads on their own L1Bs, each holding its own K)
for nm, sa, sb, mach in (("batched", (3, 16, 24), (3, 24, 16), "mncore2"), ("batched-broadcast", (2, 3, 16, 16), (3, 16, 8), "l1b"),
                         ("batched-heads", (4, 64, 32), (4, 32, 64), "mncore2")):
    xa, xb2 = f32r(*sa), f32r(*sb)
    yab = np.matmul(xa, xb2)
    case("matrix-" + nm, [h.make_node("MatMul", ["a", "b"], ["y"])], [("a", list(sa)), ("b", list(sb))], [("y", list(yab.shape))],
         dict(a=xa, b=xb2), dict(y=yab), machine=mach, rtol=1e-4, atol=1e-4, on_matrix=True)

# Attention's head split: (S, H*D) -> (S, H, D) -> (H, S, D) with S over the L1Bs and MABs
# and then H over the L1Bs: every row (an address on every PE of an L1B) goes from one
# L1B to another through the L2BM, and back (the heads merged again)
xh = f32r(64, 128)
nodes = [h.make_node("Reshape", ["x", "s1"], ["r"]), h.make_node("Transpose", ["r"], ["t"], perm=[1, 0, 2]),
         h.make_node("Relu", ["t"], ["u"]), h.make_node("Transpose", ["u"], ["v"], perm=[1, 0, 2]),
         h.make_node("Reshape", ["v", "s2"], ["y"])]
case("rows-head-split", nodes, [("x", [64, 128])], [("t", [4, 64, 32]), ("y", [64, 128])], dict(x=xh),
     dict(t=xh.reshape(64, 4, 32).transpose(1, 0, 2), y=np.maximum(xh, 0)),
     inits=[nh.from_array(np.array([64, 4, 32], np.int64), "s1"), nh.from_array(np.array([64, 128], np.int64), "s2")],
     machine="mncore2", atol=0, rtol=0, need=("rows_moved_between_l1bs",))

# Attention's scores Q Kᵀ with K's head split and transpose as one Transpose (perm 1, 2, 0)
# straight into the product's B: each head's K rows gathered from every L1B onto every MAB
# of the head's L1B, 16 MAB blocks of a row to 16 addresses at once
xq, xk = f32r(64, 128), f32r(64, 128)
nodes = [h.make_node("Reshape", ["q", "s1"], ["qr"]), h.make_node("Transpose", ["qr"], ["qt"], perm=[1, 0, 2]),
         h.make_node("Reshape", ["k", "s1"], ["kr"]), h.make_node("Transpose", ["kr"], ["kt"], perm=[1, 2, 0]),
         h.make_node("MatMul", ["qt", "kt"], ["y"])]
yqk = np.matmul(xq.reshape(64, 4, 32).transpose(1, 0, 2), xk.reshape(64, 4, 32).transpose(1, 2, 0))
case("rows-attention-scores", nodes, [("q", [64, 128]), ("k", [64, 128])], [("y", [4, 64, 64])], dict(q=xq, k=xk), dict(y=yqk),
     inits=[nh.from_array(np.array([64, 4, 32], np.int64), "s1")], machine="mncore2", rtol=1e-4, atol=1e-4, on_matrix=True,
     need=("rows_moved_between_l1bs",))

# Attention's P V: V's heads to their L1Bs (a row move), then to the product's B with the
# keys packed: the rows broadcast to every MAB of the head's L1B and each 8 x 8 block
# turned around in the matrix register (fmwrite rows, fmread columns)
xp, xv = f32r(4, 64, 64), f32r(64, 128)
nodes = [h.make_node("Reshape", ["v", "s1"], ["vr"]), h.make_node("Transpose", ["vr"], ["vt"], perm=[1, 0, 2]),
         h.make_node("MatMul", ["p", "vt"], ["y"])]
ypv = np.matmul(xp, xv.reshape(64, 4, 32).transpose(1, 0, 2))
case("rows-attention-values", nodes, [("p", [4, 64, 64]), ("v", [64, 128])], [("y", [4, 64, 32])], dict(p=xp, v=xv), dict(y=ypv),
     inits=[nh.from_array(np.array([64, 4, 32], np.int64), "s1")], machine="mncore2", rtol=1e-4, atol=1e-4, on_matrix=True,
     need=("rows_moved_between_l1bs",))

# ThresholdedRelu keeps x only above alpha: at alpha itself it gives 0
xt = np.array([-3, -0.0, 0.5, 2.0, 2.0000002, 7], np.float32)
case("thresholdedrelu-at-alpha", [h.make_node("ThresholdedRelu", ["x"], ["y"], alpha=2.0)], [("x", [6])], [("y", [6])], dict(x=xt),
     dict(y=np.where(xt > 2, xt, 0).astype(np.float32)), atol=0, rtol=0)

# a grouped, strided, dilated, padded Conv with bias
xc, wc, bc = f32(1, 4, 7, 7), f32(6, 2, 3, 3), f32(6)


def conv_ref(x, w, b, g, s, d, p):
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    co, cg, k = w.shape[0], w.shape[1], w.shape[2]
    oh = (xp.shape[2] - (d * (k - 1) + 1)) // s + 1
    y = np.zeros((1, co, oh, oh), np.float32)
    for m in range(co):
        gi = m // (co // g)
        for i in range(oh):
            for j in range(oh):
                patch = xp[0, gi * cg:(gi + 1) * cg, i * s:i * s + d * (k - 1) + 1:d, j * s:j * s + d * (k - 1) + 1:d]
                y[0, m, i, j] = (patch * w[m]).sum() + b[m]
    return y


yc = conv_ref(xc, wc, bc, 2, 2, 2, 2)
case("window-conv-groups", [h.make_node("Conv", ["x", "w", "b"], ["y"], group=2, strides=[2, 2], dilations=[2, 2], pads=[2, 2, 2, 2])],
     [("x", [1, 4, 7, 7])], [("y", list(yc.shape))], dict(x=xc), dict(y=yc), inits=[nh.from_array(wc, "w"), nh.from_array(bc, "b")], machine="l1b",
     rtol=1e-4, atol=1e-5)
# conv_lowering=im2col: the Conv as an im2col gather (zero columns up to a multiple of
# 8 of C*KH*KW = 27 and 18), a Gemm with its bias on the matrix unit, and a transpose
xi, wi, bi = f32(1, 3, 9, 9), f32(5, 3, 3, 3), f32(5)
yi = conv_ref(xi, wi, bi, 1, 2, 1, 1)
case("conv-im2col-stride-pad", [h.make_node("Conv", ["x", "w", "b"], ["y"], strides=[2, 2], pads=[1, 1, 1, 1])], [("x", [1, 3, 9, 9])],
     [("y", list(yi.shape))], dict(x=xi), dict(y=yi), inits=[nh.from_array(wi, "w"), nh.from_array(bi, "b")], machine="mncore2", rtol=1e-4, atol=1e-5,
     opts=["conv_lowering=im2col"], on_matrix=True)
xj, wj, bj = f32(1, 2, 8, 8), f32(4, 2, 3, 3), np.zeros(4, np.float32)
yj = conv_ref(xj, wj, bj, 1, 1, 2, 2)
case("conv-im2col-dilated-l1b", [h.make_node("Conv", ["x", "w"], ["y"], dilations=[2, 2], pads=[2, 2, 2, 2])], [("x", [1, 2, 8, 8])],
     [("y", list(yj.shape))], dict(x=xj), dict(y=yj), inits=[nh.from_array(wj, "w")], machine="l1b", rtol=1e-4, atol=1e-5,
     opts=["conv_lowering=im2col", "link=merge"], on_matrix=True)
# a Conv whose lowered Reshape/Transpose would not fit a gather's scratch stays a window
# op (review case: the lowering once lost this model's model.app)


def conv_nd(x, w, b, st, dl, pd):
    xp = np.pad(x, ((0, 0), (0, 0), (pd[0], pd[2]), (pd[1], pd[3])))
    n, c, hh, ww = xp.shape
    oc, _, kh, kw = w.shape
    oh, ow = (hh - dl[0] * (kh - 1) - 1) // st[0] + 1, (ww - dl[1] * (kw - 1) - 1) // st[1] + 1
    y = np.zeros((n, oc, oh, ow), np.float64)
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i * dl[0]:i * dl[0] + st[0] * (oh - 1) + 1:st[0], j * dl[1]:j * dl[1] + st[1] * (ow - 1) + 1:st[1]]
            y += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return (y + b.reshape(1, -1, 1, 1)).astype(np.float32)


xk, wk, bk = f32(2, 15, 13, 8), f32(25, 15, 2, 4), f32(25)
yk = conv_nd(xk, wk, bk, (1, 1), (2, 1), (0, 0, 0, 2))
case("conv-im2col-too-big-stays-window", [h.make_node("Conv", ["x", "w", "b"], ["y"], dilations=[2, 1], kernel_shape=[2, 4], pads=[0, 0, 0, 2])],
     [("x", [2, 15, 13, 8])], [("y", list(yk.shape))], dict(x=xk), dict(y=yk), inits=[nh.from_array(wk, "w"), nh.from_array(bk, "b")], machine="l1b",
     rtol=1e-4, atol=1e-4)
# best mode times the Conv alone, index tables and all (kept out of the real graph)
case("window-conv-best", [h.make_node("Conv", ["x", "w", "b"], ["y"], group=2, strides=[2, 2], dilations=[2, 2], pads=[2, 2, 2, 2])],
     [("x", [1, 4, 7, 7])], [("y", list(yc.shape))], dict(x=xc), dict(y=yc), inits=[nh.from_array(wc, "w"), nh.from_array(bc, "b")], machine="l1b",
     rtol=1e-4, atol=1e-5, opts=["simulation_mode=best"])
# review cases: Pad reflecting an axis of one element repeats it; a Pad value computed at
# run time is not a constant the table can name (rejected, never a wrong answer)
xr = f32(3, 1)
case("gather-pad-reflect-one", [h.make_node("Pad", ["x", "pads"], ["y"], mode="reflect")], [("x", [3, 1])], [("y", [3, 3])], dict(x=xr),
     dict(y=np.pad(xr, ((0, 0), (0, 2)), mode="reflect")), inits=[nh.from_array(np.array([0, 0, 0, 2], np.int64), "pads")], machine="l1b")
xp, cvp = f32(2, 3), np.array(7, np.float32)
case("gather-pad-runtime-value", [h.make_node("Pad", ["x", "pads", "cv"], ["y"])], [("x", [2, 3]), ("cv", [])], [("y", [2, 6])], dict(x=xp, cv=cvp),
     dict(y=np.pad(xp, ((0, 0), (1, 2)), constant_values=7)), inits=[nh.from_array(np.array([0, 1, 0, 2], np.int64), "pads")], machine="l1b",
     expect_app=False)

# Pow with a tensor exponent: signs of integer powers of negative bases, NaN for other
# exponents below 0, 0 ** y, x ** 0 = 1 (also 0 ** 0)
# (and 0 ** -1 = inf, infinite exponents, 1 ** nan = 1; (-1) ** inf is NaN here, not 1)
xpw = np.array([-3, -2, -2, -1.5, 0, 0, 0, 2, 0.5, -2, 4, -1, 3, -0.5, 1.5, -4, 0, 0, 2, 0.5, 2, -2, 1, 1], np.float32)
ypw = np.array([3, 2, 0.5, -1, 0, 2.5, -2, -2, 3, 0, 0.5, 7, 1.5, -3, 2, 1.25, -1, -3, np.inf, np.inf, -np.inf, np.inf, np.nan, -np.inf], np.float32)
with np.errstate(invalid="ignore", divide="ignore"):
    case("window-pow-signs", [h.make_node("Pow", ["x", "y"], ["z"])], [("x", [24]), ("y", [24])], [("z", [24])], dict(x=xpw, y=ypw),
         dict(z=np.power(xpw, ypw)))
# a pool whose input is spread over the L2Bs of mncore2: each L1B reads its own elements
# (the output laid out on the L1Bs and L2Bs of its input rows)
xq = f32(20, 16, 50)
case("window-maxpool-l2b-local", [h.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3], strides=[2], pads=[1, 1])], [("x", [20, 16, 50])],
     [("y", [20, 16, 25])], dict(x=xq), dict(y=np.max(np.stack([np.pad(xq, ((0, 0), (0, 0), (1, 1)), constant_values=-np.inf)[:, :, k:k + 50:2] for k in range(3)]), 0)),
     machine="mncore2")

# Gather and GatherElements with indices computed at run time (negative ones count from
# the end), and a 64-bit gather (both words of every element move)
xg2, ig2 = f32(5, 3), np.array([[4, -1], [0, -5], [2, 3]], np.int64)
case("window-gather-runtime", [h.make_node("Gather", ["x", "i"], ["y"], axis=0)], [("x", [5, 3]), ("i", [3, 2])], [("y", [3, 2, 3])], dict(x=xg2, i=ig2),
     dict(y=xg2[ig2]), types=dict(i=T.INT64), machine="l1b")
xe2, ie2 = f32(3, 4), np.array([[3, 0, -1], [1, 1, 2], [0, -4, 3]], np.int32)
case("window-gather-elements-axis1", [h.make_node("GatherElements", ["x", "i"], ["y"], axis=1)], [("x", [3, 4]), ("i", [3, 3])], [("y", [3, 3])],
     dict(x=xe2, i=ie2), dict(y=np.take_along_axis(xe2, np.where(ie2 < 0, ie2 + 4, ie2), 1)), types=dict(i=T.INT32), machine="l1b")
xi64 = (np.arange(24, dtype=np.int64).reshape(2, 3, 4) - 12) * 1000000007
case("gather-transpose-int64", [h.make_node("Transpose", ["x"], ["y"], perm=[2, 0, 1])], [("x", [2, 3, 4])], [("y", [4, 2, 3])], dict(x=xi64),
     dict(y=np.transpose(xi64, (2, 0, 1))), types=dict(x=T.INT64, y=T.INT64), rtol=0, atol=0)

# integer and bool elementwise ops: 64-bit lanes (comparisons near the wrap, where a
# difference overflows), 32-bit lanes, bools
xa64 = np.array([2**62, -2**62, 5, -7, 0, 2**63 - 1, -2**63, 3], np.int64)
xb64 = np.array([-2**62, 2**62, 5, 9, -1, -1, 1, -3], np.int64)
ops64 = [("Add", "ya", np.add), ("Sub", "ys", np.subtract), ("Max", "ymx", np.maximum), ("Min", "ymn", np.minimum), ("Mul", "ymu", np.multiply)]
cmps = [("Greater", "g", np.greater), ("Less", "l", np.less), ("GreaterOrEqual", "ge", np.greater_equal), ("LessOrEqual", "le", np.less_equal),
        ("Equal", "eq", np.equal)]
with np.errstate(over="ignore"):
    case("int64-elementwise", [h.make_node(o, ["a", "b"], [y]) for o, y, _ in ops64 + cmps] + [h.make_node("Neg", ["b"], ["yn"]), h.make_node("Abs", ["b"], ["yb"])],
         [("a", [8]), ("b", [8])], [(y, [8]) for _, y, _ in ops64 + cmps] + [("yn", [8]), ("yb", [8])], dict(a=xa64, b=xb64),
         dict(**{y: f(xa64, xb64) for _, y, f in ops64 + cmps}, yn=-xb64, yb=np.abs(xb64)),
         types=dict(a=T.INT64, b=T.INT64, yn=T.INT64, yb=T.INT64, **{y: T.INT64 for _, y, _ in ops64}, **{y: T.BOOL for _, y, _ in cmps}), rtol=0, atol=0,
         machine="l1b")
ua, ub = np.array([1, 0x80000000, 7, 0xffffffff, 12, 3], np.uint32), np.array([31, 1, 0, 4, 2, 30], np.uint32)
case("uint32-shift-max", [h.make_node("BitShift", ["a", "b"], ["yl"], direction="LEFT"), h.make_node("BitShift", ["a", "b"], ["yr"], direction="RIGHT"),
                          h.make_node("Max", ["a", "b"], ["ym"])], [("a", [6]), ("b", [6])], [("yl", [6]), ("yr", [6]), ("ym", [6])], dict(a=ua, b=ub),
     dict(yl=(ua.astype(np.uint64) << ub.astype(np.uint64)).astype(np.uint32), yr=ua >> ub, ym=np.maximum(ua, ub)),
     types=dict(a=T.UINT32, b=T.UINT32, yl=T.UINT32, yr=T.UINT32, ym=T.UINT32), rtol=0, atol=0, machine="l1b")
ba, bb = np.array([True, True, False, False]), np.array([True, False, True, False])
case("bool-logic", [h.make_node("And", ["a", "b"], ["ya"]), h.make_node("Or", ["a", "b"], ["yo"]), h.make_node("Xor", ["a", "b"], ["yx"]),
                    h.make_node("Not", ["a"], ["yn"]), h.make_node("Equal", ["a", "b"], ["ye"])], [("a", [4]), ("b", [4])],
     [("ya", [4]), ("yo", [4]), ("yx", [4]), ("yn", [4]), ("ye", [4])], dict(a=ba, b=bb), dict(ya=ba & bb, yo=ba | bb, yx=ba ^ bb, yn=~ba, ye=ba == bb),
     types={k: T.BOOL for k in ["a", "b", "ya", "yo", "yx", "yn", "ye"]}, rtol=0, atol=0, machine="l1b")

xi32, yi32 = np.array([46341, -3, 7, 0, -2**31, 123456], np.int32), np.array([46341, 5, -7, 9, -1, -654321], np.int32)
with np.errstate(over="ignore"):
    case("int32-mul", [h.make_node("Mul", ["a", "b"], ["y"])], [("a", [6]), ("b", [6])], [("y", [6])], dict(a=xi32, b=yi32), dict(y=xi32 * yi32),
         types=dict(a=T.INT32, b=T.INT32, y=T.INT32), rtol=0, atol=0, machine="l1b")

# a constant operand too big for the tree's gather (the weight of every MAB's rows):
# its values ride in the index table's spare words
am, wm = f32(4, 64), f32(64, 64)
case("window-matmul-constant-in-table", [h.make_node("MatMul", ["a", "w"], ["y"])], [("a", [4, 64])], [("y", [4, 64])], dict(a=am), dict(y=am @ wm),
     inits=[nh.from_array(wm, "w")], machine="mncore2", rtol=1e-4, atol=1e-5)

# an integer Mul with the constant first, on tiny (32 GRF1 long words: the immediates
# and the sequence's constants must not meet)
xm8 = np.arange(-4, 4, dtype=np.int64)
case("int64-mul-constant-first-tiny", [h.make_node("Mul", ["k", "x"], ["y"])], [("x", [8])], [("y", [8])], dict(x=xm8), dict(y=3 * xm8),
     inits=[nh.from_array(np.array(3, np.int64), "k")], types=dict(x=T.INT64, y=T.INT64), rtol=0, atol=0)


# a constant B too large to replicate on every MAB is streamed from DRAM panel by panel
# (emitter/matmul.c): a wake-word model's first Gemm (2400 x 32, transB, a bias: K in
# runs), three rows, a Gemm before opset 11, an uneven K, a classifier's 1000 columns
# (every K in one panel, N not a multiple of 16), 256 cubed, rank-3 A, and on l1b and tiny.
# Two rows where one would be a row product on the vector unit (gemv_lower.c); on l1b the
# classifier's one row is past that lowering's limit and streams
ak, bk, ck = f32(2, 2400), f32(32, 2400), f32(32)
case("stream-gemm-transb-bias", [h.make_node("Gemm", ["a", "b", "c"], ["y"], transB=1)], [("a", [2, 2400])], [("y", [2, 32])], dict(a=ak),
     dict(y=ak @ bk.T + ck), inits=[nh.from_array(bk, "b"), nh.from_array(ck, "c")], machine="mncore2", rtol=1e-4, atol=1e-4, on_matrix=True)
ar3, br3 = f32(3, 2400), f32(2400, 32)
case("stream-rows3", [h.make_node("MatMul", ["a", "b"], ["y"])], [("a", [3, 2400])], [("y", [3, 32])], dict(a=ar3), dict(y=ar3 @ br3),
     inits=[nh.from_array(br3, "b")], machine="mncore2", rtol=1e-4, atol=1e-4, on_matrix=True)
case("stream-gemm-opset9", [h.make_node("Gemm", ["a", "b", "c"], ["y"], transB=1)], [("a", [2, 2400])], [("y", [2, 32])], dict(a=ak),
     dict(y=ak @ bk.T + ck), inits=[nh.from_array(bk, "b"), nh.from_array(ck, "c")], machine="mncore2", rtol=1e-4, atol=1e-4, on_matrix=True, opset=9)
am, bm = f32(2, 1048), f32(1048, 20)
case("stream-matmul-uneven", [h.make_node("MatMul", ["a", "b"], ["y"])], [("a", [2, 1048])], [("y", [2, 20])], dict(a=am), dict(y=am @ bm),
     inits=[nh.from_array(bm, "b")], machine="mncore2", rtol=1e-4, atol=1e-4, on_matrix=True)
bf, cf = f32(1000, 512), f32(1000)
for mach, rows in (("mncore2", 2), ("l1b", 1)):
    af = f32(rows, 512)
    case("stream-classifier-" + mach, [h.make_node("Gemm", ["a", "b", "c"], ["y"], transB=1)], [("a", [rows, 512])], [("y", [rows, 1000])],
         dict(a=af), dict(y=af @ bf.T + cf), inits=[nh.from_array(bf, "b"), nh.from_array(cf, "c")], machine=mach, rtol=1e-4, atol=1e-4,
         on_matrix=True)
a2, b2 = f32(256, 256), f32(256, 256)
case("stream-256-cubed", [h.make_node("MatMul", ["a", "b"], ["y"])], [("a", [256, 256])], [("y", [256, 256])], dict(a=a2), dict(y=a2 @ b2),
     inits=[nh.from_array(b2, "b")], machine="mncore2", rtol=1e-4, atol=1e-4, on_matrix=True)
a3, b3 = f32(2, 4, 64), f32(64, 40)
case("stream-rank3", [h.make_node("MatMul", ["a", "b"], ["y"])], [("a", [2, 4, 64])], [("y", [2, 4, 40])], dict(a=a3), dict(y=a3 @ b3),
     inits=[nh.from_array(b3, "b")], machine="tiny", rtol=1e-4, atol=1e-4, on_matrix=True)

# A streamed product whose rows are alike on every L2B splits its columns over the L2Bs
# (emitter/matmul.c, allgather.c): each L2B streams and computes its own slice, and an
# all-gather through the PDMs gives every L2B all of them. A transformer's projection (128
# rows of 512, 1024 columns), a rank-3 A with 4 K blocks per panel row and uneven K, and an
# FFN pair whose second product reads the gathered output
for nm, ash, kk, nn in (("proj", [128, 512], 512, 1024), ("rank3-uneven-k", [1, 96, 300], 300, 512)):
    asp, bsp = f32(*ash), f32(kk, nn)
    case("split-l2b-" + nm, [h.make_node("MatMul", ["a", "b"], ["y"])], [("a", ash)], [("y", ash[:-1] + [nn])], dict(a=asp),
         dict(y=asp @ bsp), inits=[nh.from_array(bsp, "b")], machine="mncore2", rtol=1e-4, atol=1e-4, on_matrix=True,
         need=("products_split_over_l2bs",))
ag, bg, cg = f32(96, 384), f32(512, 384), f32(512)
case("split-l2b-gemm-bias-transb", [h.make_node("Gemm", ["a", "b", "c"], ["y"], transB=1)], [("a", [96, 384])], [("y", [96, 512])],
     dict(a=ag), dict(y=ag @ bg.T + cg), inits=[nh.from_array(bg, "b"), nh.from_array(cg, "c")], machine="mncore2", rtol=1e-4,
     atol=1e-4, on_matrix=True, need=("products_split_over_l2bs",))
af1, w1, w2 = f32(64, 256), f32(256, 1024) / 16, f32(1024, 256) / 32
case("split-l2b-ffn", [h.make_node("MatMul", ["a", "w1"], ["t"]), h.make_node("Relu", ["t"], ["r"]), h.make_node("MatMul", ["r", "w2"], ["y"])],
     [("a", [64, 256])], [("y", [64, 256])], dict(a=af1), dict(y=np.maximum(af1 @ w1, 0) @ w2),
     inits=[nh.from_array(w1, "w1"), nh.from_array(w2, "w2")], machine="mncore2", rtol=1e-4, atol=1e-4, on_matrix=True,
     need=("products_split_over_l2bs",))

# Resize and Upsample as weighted sums of input elements (emitter/resize.c): bilinear
# 2x with half-pixel coordinates (torch's interpolate, align_corners=False), nearest 2x
# by sizes, a downsampling bilinear on tiny, and Upsample (opset 9)
def lin_axis(a, axis, out):
    n = a.shape[axis]
    xc = (np.arange(out) + 0.5) * n / out - 0.5
    f = np.floor(xc)
    r = (xc - f).reshape([-1 if d == axis else 1 for d in range(a.ndim)])
    i0, i1 = np.clip(f, 0, n - 1).astype(int), np.clip(f + 1, 0, n - 1).astype(int)
    return (np.take(a, i0, axis) * (1 - r) + np.take(a, i1, axis) * r).astype(np.float32)
xr = f32(1, 3, 6, 8)
roi0, sc2 = nh.from_array(np.zeros(0, np.float32), "roi"), nh.from_array(np.array([1, 1, 2, 2], np.float32), "sc")
case("resize-bilinear-2x", [h.make_node("Resize", ["x", "roi", "sc"], ["y"], mode="linear")], [("x", [1, 3, 6, 8])], [("y", [1, 3, 12, 16])],
     dict(x=xr), dict(y=lin_axis(lin_axis(xr, 2, 12), 3, 16)), inits=[roi0, sc2], machine="mncore2", rtol=1e-5, atol=1e-5)
szn = nh.from_array(np.array([1, 3, 12, 16], np.int64), "sz")
case("resize-nearest-2x-sizes", [h.make_node("Resize", ["x", "", "", "sz"], ["y"], mode="nearest", coordinate_transformation_mode="asymmetric",
                                             nearest_mode="floor")], [("x", [1, 3, 6, 8])], [("y", [1, 3, 12, 16])], dict(x=xr),
     dict(y=xr.repeat(2, axis=2).repeat(2, axis=3)), inits=[szn], machine="mncore2", rtol=0, atol=0)
xd = f32(1, 1, 4, 6)
szd = nh.from_array(np.array([1, 1, 2, 4], np.int64), "sz")
case("resize-bilinear-down-tiny", [h.make_node("Resize", ["x", "", "", "sz"], ["y"], mode="linear")], [("x", [1, 1, 4, 6])], [("y", [1, 1, 2, 4])],
     dict(x=xd), dict(y=lin_axis(lin_axis(xd, 2, 2), 3, 4)), inits=[szd], rtol=1e-5, atol=1e-5)
case("upsample-nearest-opset9", [h.make_node("Upsample", ["x", "sc"], ["y"], mode="nearest")], [("x", [1, 3, 6, 8])], [("y", [1, 3, 12, 16])],
     dict(x=xr), dict(y=xr.repeat(2, axis=2).repeat(2, axis=3)), inits=[sc2], machine="mncore2", rtol=0, atol=0, opset=9)

# a reduction over an empty axis (a slice of none of 40 columns): no model.app and a
# reason, not a crash (review case: it divided by the empty dimension)
xe = f32(2, 40)
case("reduce-empty-axis", [h.make_node("Slice", ["x", "st", "en", "ax"], ["s"]), h.make_node("ReduceSum", ["s", "ra"], ["y"])], [("x", [2, 40])],
     [("y", [2, 1])], dict(x=xe), dict(y=np.zeros((2, 1), np.float32)),
     inits=[nh.from_array(np.array([40], np.int64), "st"), nh.from_array(np.array([48], np.int64), "en"), nh.from_array(np.array([1], np.int64), "ax"),
            nh.from_array(np.array([-1], np.int64), "ra")], machine="mncore2", expect_app=False)

# products on the MAB matrix unit: batched A, transposed B, N not a multiple of 8 (the
# last register block half empty), more rows than GRF0 holds accumulators (tiny), and
# Gemm on the one-L1B machine
ab, bb2 = f32(3, 5, 16), f32(16, 10)
case("matrix-batched-n10", [h.make_node("MatMul", ["a", "b"], ["y"])], [("a", [3, 5, 16])], [("y", [3, 5, 10])], dict(a=ab), dict(y=ab @ bb2),
     inits=[nh.from_array(bb2, "b")], machine="mncore2", rtol=1e-5, atol=1e-5, on_matrix=True)
ag, bg = f32(40, 24), f32(12, 24)
case("matrix-gemm-transb", [h.make_node("Gemm", ["a", "b"], ["y"], transB=1)], [("a", [40, 24])], [("y", [40, 12])], dict(a=ag), dict(y=ag @ bg.T),
     inits=[nh.from_array(bg, "b")], machine="l1b", rtol=1e-5, atol=1e-5, on_matrix=True)
# a Gemm's bias over N (as the wake-word models have) added on the matrix unit's path
ag2, bg2, cg2 = f32(6, 32), f32(24, 32), f32(24)
case("matrix-gemm-bias", [h.make_node("Gemm", ["a", "b", "c"], ["y"], transB=1)], [("a", [6, 32])], [("y", [6, 24])], dict(a=ag2),
     dict(y=ag2 @ bg2.T + cg2), inits=[nh.from_array(bg2, "b"), nh.from_array(cg2, "c")], machine="mncore2", rtol=1e-5, atol=1e-5, on_matrix=True)
at, bt = f32(5000, 16), f32(16, 16)
case("matrix-many-rows-l1b", [h.make_node("MatMul", ["a", "b"], ["t"]), h.make_node("Relu", ["t"], ["y"])], [("a", [5000, 16])], [("y", [5000, 16])],
     dict(a=at), dict(y=np.maximum(at @ bt, 0)), inits=[nh.from_array(bt, "b")], machine="l1b", rtol=1e-5, atol=1e-5, on_matrix=True)
# values larger than tiny's LM, cut over time: the pieces come out of and go back into
# the DRAM image (slices one after another), some through a spill
xs = f32(300, 16)
case("time-slice-split-concat-tiny", [h.make_node("Relu", ["x"], ["t"]), h.make_node("Neg", ["t"], ["u"]), h.make_node("Exp", ["u"], ["y"])],
     [("x", [300, 16])], [("y", [300, 16])], dict(x=xs), dict(y=np.exp(-np.maximum(xs, 0))), sliced=True)


def link_case(name, nodes, inputs, outputs, feeds, ref, inits=(), machine="mncore2", rtol=1e-5, atol=1e-6):
    """The same model linked by concat and by merge: both right, the merge joining at
    least one transfer with a compute node, in fewer cycles and with the same outputs."""
    if ONLY and not any(name.startswith(o) for o in ONLY):
        return
    got = {}
    for link in ("concat", "merge"):
        case(name + "-" + link, nodes, inputs, outputs, feeds, ref, inits=inits, machine=machine, opts=["link=" + link], rtol=rtol, atol=atol)
        d = os.path.join(tmp, name + "-" + link)
        rep = json.load(open(os.path.join(d, "cg", "report.json")))
        fig = {}
        for p in rep["passes"]:
            fig.update(p.get("figures", {}))
        r = subprocess.run([MNEMU, os.path.join(d, "cg", "model.app"), "--inputs", os.path.join(d, "in"), "-o", os.path.join(d, "res2"), "--json"],
                           capture_output=True, text=True)
        outs = [open(os.path.join(d, "res2", f), "rb").read() for f in sorted(os.listdir(os.path.join(d, "res2")))] if not r.returncode else None
        got[link] = (fig.get("link_merged_pairs", 0), json.loads(r.stdout.strip().splitlines()[-1])["cycles"] if not r.returncode else None, outs)
    (pc, cc, oc), (pm, cm, om) = got["concat"], got["merge"]
    check(name + "-merged", pc == 0 and pm > 0 and cc and cm and cm < cc and oc == om,
          "pairs %s/%s, cycles %s/%s (concat/merge), outputs %s" % (pc, pm, cc, cm, "identical" if oc == om else "differ"))


# simulation_mode=best: Node Simulation times every variant from its emitted code
xb, wb = f32(8, 32), f32(32, 16)
case("best-mode", [h.make_node("MatMul", ["x", "w"], ["t"]), h.make_node("Sigmoid", ["t"], ["u"]), h.make_node("Mul", ["u", "t"], ["y"])],
     [("x", [8, 32])], [("y", [8, 16])], dict(x=xb), dict(y=(xb @ wb) / (1 + np.exp(-(xb @ wb)))), inits=[nh.from_array(wb, "w")],
     machine="mncore2", opts=["simulation_mode=best"], rtol=1e-4, atol=1e-5, on_matrix=True)
fig = {}
if os.path.exists(os.path.join(tmp, "best-mode", "cg", "report.json")) or not ONLY:
    for p in json.load(open(os.path.join(tmp, "best-mode", "cg", "report.json")))["passes"]:
        fig.update(p.get("figures", {}))
    check("best-mode-timed", fig.get("nodes_timed_from_code", 0) >= 3,
          "nodes timed from code: %s" % fig.get("nodes_timed_from_code"))

# a DRAM-bound node on the whole machine: its cycles are at least its DRAM long words over
# the DRAM's rate, group by group (the case checks it), and it moves what it must
xr = f32(1024, 1024)
case("dram-bound-relu", [h.make_node("Relu", ["x"], ["y"])], [("x", [1024, 1024])], [("y", [1024, 1024])], dict(x=xr), dict(y=np.maximum(xr, 0)),
     machine="mncore2")

# link=merge: the next weight's download runs beside the Relu before it
xl, w1, w2, w3 = f32(4, 64), f32(64, 64), f32(64, 64), f32(64, 32)
relu = lambda v: np.maximum(v, 0)
link_case("link-mlp", [h.make_node("MatMul", ["x", "w1"], ["a1"]), h.make_node("Relu", ["a1"], ["r1"]), h.make_node("MatMul", ["r1", "w2"], ["a2"]),
                       h.make_node("Relu", ["a2"], ["r2"]), h.make_node("MatMul", ["r2", "w3"], ["y"])],
          [("x", [4, 64])], [("y", [4, 32])], dict(x=xl), dict(y=relu(relu(xl @ w1) @ w2) @ w3),
          inits=[nh.from_array(w1, "w1"), nh.from_array(w2, "w2"), nh.from_array(w3, "w3")], rtol=1e-4, atol=1e-4)

# every claim of `mncc --list-ops` for the elementwise and data-movement ops: one model
# per op and element type, compiled and run against numpy
NP = {"float": (np.float32, T.FLOAT), "double": (np.float64, T.DOUBLE), "int32": (np.int32, T.INT32), "int64": (np.int64, T.INT64),
      "uint32": (np.uint32, T.UINT32), "uint64": (np.uint64, T.UINT64), "bool": (np.bool_, T.BOOL)}
claims = {}
for line in subprocess.run([MNCC, "--list-ops"], capture_output=True, text=True).stdout.splitlines()[1:]:
    f = line.split()
    claims[f[0]] = list(dict.fromkeys(t.strip(";") for t in f[2:] if t.strip(";") in NP)) if len(f) > 2 and not f[2].startswith("-") else []
rng = np.random.default_rng(7)


def data(t, shape, lo=-20, hi=20):
    dt = NP[t][0]
    if t == "bool":
        return rng.random(shape) < 0.5
    if t.startswith("uint"):
        lo = 0
    if t in ("float", "double"):
        return rng.uniform(lo, hi, shape).astype(dt)
    return rng.integers(lo, hi, shape).astype(dt)


def i64(name, v):
    return nh.from_array(np.array(v, np.int64), name)


unary = {"Abs": np.abs, "Neg": np.negative, "Not": np.logical_not, "Identity": lambda v: v}
binary = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Max": np.maximum, "Min": np.minimum, "And": np.logical_and,
          "Or": np.logical_or, "Xor": np.logical_xor, "Equal": np.equal, "Less": np.less, "Greater": np.greater,
          "LessOrEqual": np.less_equal, "GreaterOrEqual": np.greater_equal}
cmp_ops = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"}
S = [2, 4, 8]
for op, fn in unary.items():
    for t in claims.get(op, []):
        x = data(t, S)
        case("claim-%s-%s" % (op, t), [h.make_node(op, ["x"], ["y"])], [("x", S)], [("y", S)], dict(x=x), dict(y=fn(x)),
             types={"x": NP[t][1], "y": NP[t][1]}, atol=0, rtol=0, machine="l1b")
for op, fn in binary.items():
    for t in claims.get(op, []):
        x, y = data(t, S), data(t, S)
        if op in cmp_ops:
            y[0] = x[0]  # equal elements too
        ot = T.BOOL if op in cmp_ops else NP[t][1]
        case("claim-%s-%s" % (op, t), [h.make_node(op, ["x", "y"], ["z"])], [("x", S), ("y", S)], [("z", S)], dict(x=x, y=y), dict(z=fn(x, y)),
             types={"x": NP[t][1], "y": NP[t][1], "z": ot}, atol=0, rtol=0, machine="l1b")
for t in claims.get("BitShift", []):
    x, y = data(t, S, 0, 1000), data(t, S, 0, 8)
    w = 32 if t == "uint32" else 64
    y.flat[:4] = [w, w + 1, w - 1, 2 ** (w - 1)]  # from the width on ONNX (and numpy) give 0
    for dr in ("LEFT", "RIGHT"):
        ref = np.where(y < w, np.left_shift(x, y % w) if dr == "LEFT" else np.right_shift(x, y % w), 0).astype(x.dtype)
        case("claim-BitShift-%s-%s" % (dr, t), [h.make_node("BitShift", ["x", "y"], ["z"], direction=dr)], [("x", S), ("y", S)], [("z", S)],
             dict(x=x, y=y), dict(z=ref), types={"x": NP[t][1], "y": NP[t][1], "z": NP[t][1]}, atol=0, rtol=0, machine="l1b")
# Trilu with a constant k: an and with a mask, exact for infinities and NaNs too
TS = [3, 4, 5]
for t in claims.get("Trilu", []):
    x = data(t, TS)
    if t in ("float", "double"):
        x.flat[:6] = [np.inf, -np.inf, np.nan, np.inf, -0.0, np.nan]
    for upper, k in ((1, 0), (0, -1), (1, 2), (0, 3)):
        ref = np.triu(x, k) if upper else np.tril(x, k)
        case("claim-Trilu-%s-%s%d" % (t, "upper" if upper else "lower", k), [h.make_node("Trilu", ["x", "k"], ["y"], upper=upper)], [("x", TS)], [("y", TS)],
             dict(x=x), dict(y=ref), inits=[i64("k", k)], types={"x": NP[t][1], "y": NP[t][1]}, atol=0, rtol=0, machine="l1b", opset=14)
# on tiny, where x and the mask are time-sliced alike
xs = f32(4, 40, 40)
case("trilu-sliced", [h.make_node("Trilu", ["x", "k"], ["y"])], [("x", [4, 40, 40])], [("y", [4, 40, 40])],
     dict(x=xs), dict(y=np.triu(xs, 1)), inits=[i64("k", 1)], machine="tiny", sliced=True, atol=0, rtol=0, opset=14)
# a mask larger than folding may make is not made: no model.app
case("trilu-mask-bound", [h.make_node("Trilu", ["x"], ["y"])], [("x", [4, 40, 40])], [("y", [4, 40, 40])], dict(x=xs), dict(y=np.triu(xs)),
     machine="mncore2", opts=["fold_max_elems=1000"], expect_app=False, opset=14)
# data movement: each op with constant parameters, as exported models have them
moves = {
    "Transpose": (lambda: [h.make_node("Transpose", ["x"], ["y"], perm=[2, 0, 1])], [], [8, 2, 4], lambda x: x.transpose(2, 0, 1)),
    "Reshape": (lambda: [h.make_node("Reshape", ["x", "s"], ["y"])], [i64("s", [4, 16])], [4, 16], lambda x: x.reshape(4, 16)),
    "Flatten": (lambda: [h.make_node("Flatten", ["x"], ["y"], axis=1)], [], [2, 32], lambda x: x.reshape(2, 32)),
    "Squeeze": (lambda: [h.make_node("Unsqueeze", ["x", "a"], ["u"]), h.make_node("Squeeze", ["u", "a"], ["y"])], [i64("a", [1])], S, lambda x: x),
    "Unsqueeze": (lambda: [h.make_node("Unsqueeze", ["x", "a"], ["y"])], [i64("a", [0])], [1] + S, lambda x: x[None]),
    "Concat": (lambda: [h.make_node("Concat", ["x", "x"], ["y"], axis=1)], [], [2, 8, 8], lambda x: np.concatenate([x, x], 1)),
    "Split": (lambda: [h.make_node("Split", ["x", "p"], ["y", "z"], axis=2)], [i64("p", [3, 5])], [2, 4, 3], lambda x: x[:, :, :3]),
    "Slice": (lambda: [h.make_node("Slice", ["x", "b", "e", "a"], ["y"])], [i64("b", [1]), i64("e", [7]), i64("a", [2])], [2, 4, 6], lambda x: x[:, :, 1:7]),
    "Gather": (lambda: [h.make_node("Gather", ["x", "i"], ["y"], axis=2)], [i64("i", [3, 0, 7])], [2, 4, 3], lambda x: x[:, :, [3, 0, 7]]),
    "Pad": (lambda: [h.make_node("Pad", ["x", "p"], ["y"])], [i64("p", [0, 0, 1, 0, 0, 2])], [2, 4, 11], lambda x: np.pad(x, [(0, 0), (0, 0), (1, 2)])),
    "Expand": (lambda: [h.make_node("Expand", ["x", "s"], ["y"])], [i64("s", [2, 2, 4, 8])], [2, 2, 4, 8], lambda x: np.broadcast_to(x, [2, 2, 4, 8])),
    "Tile": (lambda: [h.make_node("Tile", ["x", "r"], ["y"])], [i64("r", [1, 2, 1])], [2, 8, 8], lambda x: np.tile(x, [1, 2, 1])),
    "DepthToSpace": (lambda: [h.make_node("DepthToSpace", ["x"], ["y"], blocksize=2)], [], [1, 1, 4, 4], None),
    "SpaceToDepth": (lambda: [h.make_node("SpaceToDepth", ["x"], ["y"], blocksize=2)], [], [1, 4, 2, 2], None),
}
for op, (nodes, inits, oshape, fn) in moves.items():
    for t in claims.get(op, []):
        if op in ("DepthToSpace", "SpaceToDepth"):
            ish = [1, 4, 2, 2] if op == "DepthToSpace" else [1, 1, 4, 4]
            x = data(t, ish)
            if op == "DepthToSpace":  # DCR: (b, c, h, w) -> (h*b, w*b)
                ref = x.reshape(1, 2, 2, 1, 2, 2).transpose(0, 3, 4, 1, 5, 2).reshape(1, 1, 4, 4)
            else:
                ref = x.reshape(1, 1, 2, 2, 2, 2).transpose(0, 3, 5, 1, 2, 4).reshape(1, 4, 2, 2)
        else:
            x = data(t, S)
            ref = fn(x)
        outs = [("y", oshape)]
        ty = {"x": NP[t][1], "y": NP[t][1], "z": NP[t][1], "u": NP[t][1]}
        case("claim-%s-%s" % (op, t), nodes(), [("x", list(x.shape))], outs, dict(x=x), dict(y=ref), inits=inits, types=ty, atol=0, rtol=0, machine="l1b")

# Graph optimisations (planners/cse.c, bn_fold.c, gemm_fuse.c): two equal Relus of one input merged, and the two
# Muls reading them and two equal scalar constants with them; a BatchNormalization after a Conv, a grouped
# ConvTranspose and a Gemm folded into their constants (as PaddlePaddle and TensorFlow export them); MatMul + Add as
# a Gemm (a bias (N) and (1, N), read second and first)
x = f32(4, 64)
case("graph-cse", [h.make_node("Relu", ["x"], ["r1"]), h.make_node("Relu", ["x"], ["r2"]),
                   h.make_node("Mul", ["r1", "c1"], ["m1"]), h.make_node("Mul", ["r2", "c2"], ["m2"]),
                   h.make_node("Add", ["m1", "m2"], ["y"])],
     [("x", [4, 64])], [("y", [4, 64])], dict(x=x), dict(y=np.maximum(x, 0) * np.float32(0.75) * 2),
     inits=[nh.from_array(np.array(0.75, np.float32), "c1"), nh.from_array(np.array(0.75, np.float32), "c2")],
     machine="mncore2", need=("cse_nodes_merged",))


def bn_ref(v, sc, bi, mu, var, eps=1e-5):
    sh = (1, -1) + (1,) * (v.ndim - 2)
    return ((v - mu.reshape(sh)) / np.sqrt(var.reshape(sh) + eps) * sc.reshape(sh) + bi.reshape(sh)).astype(np.float32)


def bn_inits(c, tag):
    st = [f32(c), f32(c), f32(c), (rng.random(c) + 0.5).astype(np.float32)]
    return st, [nh.from_array(v, "%s_%s" % (tag, k)) for v, k in zip(st, ("s", "b", "m", "v"))]


def bn_node(xn, yn, tag):
    return h.make_node("BatchNormalization", [xn] + ["%s_%s" % (tag, k) for k in ("s", "b", "m", "v")], [yn])


x = f32(1, 8, 16, 16)
w, b = f32(16, 8, 3, 3) * 0.2, f32(16)
st, bi = bn_inits(16, "bn")
case("graph-bn-fold-conv", [h.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1] * 4), bn_node("c", "n", "bn"),
                            h.make_node("Relu", ["n"], ["y"])],
     [("x", [1, 8, 16, 16])], [("y", [1, 16, 16, 16])], dict(x=x), dict(y=np.maximum(bn_ref(conv_nchw(x, w, b, 1, 1), *st), 0)),
     inits=[nh.from_array(w, "w"), nh.from_array(b, "b")] + bi, machine="mncore2", rtol=1e-4, atol=1e-5,
     need=("batchnorms_folded",))
x = f32(1, 8, 6, 6)
wt = f32(8, 2, 2, 2) * 0.3  # groups 2: input channels 0-3 make outputs 0-1, 4-7 make 2-3
ref = np.concatenate([convt_ref(x[:, :4], wt[:4], np.zeros(2, np.float32), 2, 0),
                      convt_ref(x[:, 4:], wt[4:], np.zeros(2, np.float32), 2, 0)], 1)
st, bi = bn_inits(4, "bt")
case("graph-bn-fold-convtranspose", [h.make_node("ConvTranspose", ["x", "wt"], ["c"], strides=[2, 2], group=2),
                                     bn_node("c", "y", "bt")],
     [("x", [1, 8, 6, 6])], [("y", [1, 4, 12, 12])], dict(x=x), dict(y=bn_ref(ref, *st)),
     inits=[nh.from_array(wt, "wt")] + bi, machine="mncore2", rtol=1e-4, atol=1e-5, need=("batchnorms_folded",))
x, wg, cg = f32(4, 32), f32(24, 32) * 0.3, f32(24)
st, bi = bn_inits(24, "bg")
case("graph-bn-fold-gemm", [h.make_node("Gemm", ["x", "wg", "cg"], ["c"], transB=1, beta=0.5), bn_node("c", "y", "bg")],
     [("x", [4, 32])], [("y", [4, 24])], dict(x=x), dict(y=bn_ref(x @ wg.T + 0.5 * cg, *st)),
     inits=[nh.from_array(wg, "wg"), nh.from_array(cg, "cg")] + bi, machine="mncore2", rtol=1e-4, atol=1e-5,
     need=("batchnorms_folded",))
x, wm, b1, b2 = f32(8, 64), f32(64, 32) * 0.2, f32(32), f32(1, 16)
wm2 = f32(32, 16) * 0.2
case("graph-matmul-add-gemm", [h.make_node("MatMul", ["x", "wm"], ["p"]), h.make_node("Add", ["p", "b1"], ["q"]),
                               h.make_node("Relu", ["q"], ["r"]), h.make_node("MatMul", ["r", "wm2"], ["p2"]),
                               h.make_node("Add", ["b2", "p2"], ["y"])],
     [("x", [8, 64])], [("y", [8, 16])], dict(x=x), dict(y=np.maximum(x @ wm + b1, 0) @ wm2 + b2),
     inits=[nh.from_array(v, k) for v, k in ((wm, "wm"), (b1, "b1"), (wm2, "wm2"), (b2, "b2"))], machine="mncore2",
     rtol=1e-4, atol=1e-5, need=("matmul_adds_as_gemm",))

subprocess.run(["rm", "-rf", tmp]) if not os.environ.get("MNCC_KEEP") else print(tmp)
print("emit: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
