#!/usr/bin/python3
"""Write the golden ONNX test models for mncc.

Usage: /usr/bin/python3 gen_models.py [OUTDIR]   (default: this script's directory)

Every model is built deterministically (no randomness; weights come from a
fixed formula), so running the script twice yields identical bytes.  A model
NAME.onnx may have a sidecar NAME.args holding extra compiler arguments on one
line.  ok_* models are valid and are run through onnx.checker; bad_* models
each exercise one error and are never checked.  See README.md beside this
script for one line on each model.
"""
import os
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

PRODUCER = "mncc-golden"
OUT = None  # output directory, set in main()
WRITTEN = []  # file names written, for the summary


# ----------------------------------------------------------------------------
# small helpers


def vals(n, scale=0.1, offset=0.0):
    """n deterministic, varied float values in about [-scale*3, scale*3]."""
    i = np.arange(n, dtype=np.float64)
    v = np.sin(i * 1.7 + 0.3) * 3.0 * scale + offset
    return v.astype(np.float32)


def init(name, arr):
    """Initializer from a numpy array (raw_data form, as exporters write it)."""
    return numpy_helper.from_array(np.asarray(arr), name)


def fvals(name, shape, scale=0.1, offset=0.0):
    n = int(np.prod(shape)) if shape else 1
    return init(name, vals(n, scale, offset).reshape(shape))


def i64(name, values):
    return init(name, np.array(values, dtype=np.int64))


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def fvi(name, shape):
    return vi(name, TensorProto.FLOAT, shape)


def node(op, inputs, outputs, name=None, domain=None, **attrs):
    n = helper.make_node(op, inputs, outputs, name=name or outputs[0] + "_node", **attrs)
    if domain is not None:
        n.domain = domain
    return n


def model(graph, opset=13, ir_version=None, extra_opsets=()):
    ops = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    m = helper.make_model(graph, opset_imports=ops, producer_name=PRODUCER)
    if ir_version is None:
        # the lowest IR version that onnx 1.12 accepts for this opset
        ir_version = {9: 4, 13: 7, 17: 8}.get(opset, 8)
    m.ir_version = ir_version
    return m


def write_bytes(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
    WRITTEN.append(name)


def write_args(name, args):
    write_bytes(name + ".args", (args + "\n").encode())


def save_ok(name, m, args=None, check_path=False):
    """Write a valid model, then run the full checker (with shape inference) on it."""
    data = m.SerializeToString()
    write_bytes(name + ".onnx", data)
    if args:
        write_args(name, args)
    path = os.path.join(OUT, name + ".onnx")
    if check_path:
        # a path lets the checker resolve external data beside the model
        onnx.checker.check_model(path, full_check=True)
    else:
        onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
    # strict shape inference must agree with itself and the declared outputs
    onnx.shape_inference.infer_shapes(onnx.load_from_string(data), check_type=True, strict_mode=True)


def save_bad(name, m, args=None):
    data = m if isinstance(m, (bytes, bytearray)) else m.SerializeToString()
    write_bytes(name + ".onnx", bytes(data))
    if args:
        write_args(name, args)


# ----------------------------------------------------------------------------
# valid models


def ok_time_slice():
    """On the tiny machine (64-LW LM) x[256,64] does not fit one LM: Relu, MatMul and Add
    are sliced over the rows and hand their slices on (one split, one concat); W does not
    fit either, so each MatMul slice is also cut along K with partial sums."""
    g = helper.make_graph(
        [node("Relu", ["x"], ["r"]), node("MatMul", ["r", "W"], ["m"]), node("Add", ["m", "b"], ["y"])],
        "ok_time_slice",
        [fvi("x", [256, 64])],
        [fvi("y", [256, 16])],
        [fvals("W", [64, 16], 0.01), fvals("b", [16], 0.0)],
    )
    save_ok("ok_time_slice", model(g), "--machine tiny")


def ok_ksplit():
    """On the tiny machine W[1024,4] does not fit one LM while the product does: the
    MatMul is cut along K and MNCoreOutputSum adds the partial products."""
    g = helper.make_graph(
        [node("MatMul", ["x", "W"], ["y"])],
        "ok_ksplit",
        [fvi("x", [4, 1024])],
        [fvi("y", [4, 4])],
        [fvals("W", [1024, 4], 0.01)],
    )
    save_ok("ok_ksplit", model(g), "--machine tiny")


def ok_conv_window():
    """On the tiny machine a batch-1, one-channel image does not fit one LM (so a cut
    along the output channels, each reading all of it, does not help): Conv and MaxPool
    are cut along the rows, their input pieces overlapping by the window's halo, and
    only the edge slices keep the padding."""
    g = helper.make_graph(
        [
            node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
            node("MaxPool", ["c"], ["y"], kernel_shape=[2, 2], strides=[2, 2]),
        ],
        "ok_conv_window",
        [fvi("x", [1, 1, 64, 64])],
        [fvi("y", [1, 2, 32, 32])],
        [fvals("w", [2, 1, 3, 3], 0.1), fvals("b", [2], 0.0)],
    )
    save_ok("ok_conv_window", model(g), "--machine tiny")


def ok_reduce_slice():
    """On the tiny machine x[256,64] does not fit one LM: ReduceSum over the columns
    (axes a constant input, keepdims) and Softmax over them are cut along the rows."""
    g = helper.make_graph(
        [
            node("Softmax", ["x"], ["s"], axis=1),
            node("ReduceSum", ["s", "axes"], ["y"], keepdims=1),
        ],
        "ok_reduce_slice",
        [fvi("x", [256, 64])],
        [fvi("y", [256, 1])],
        [i64("axes", [1])],
    )
    save_ok("ok_reduce_slice", model(g), "--machine tiny")


def ok_move_slice():
    """On the tiny machine data movement on a large value is sliced too: Transpose maps
    the cut axis through perm, Unsqueeze/Squeeze shift it, Concat cuts every input off
    its joined axis, Reshape keeps the leading dimension and gets a shape per slice, and
    Expand of a small bias input is sliced along the axis it broadcasts."""
    g = helper.make_graph(
        [
            node("Transpose", ["x"], ["t"], perm=[1, 0]),
            node("Unsqueeze", ["t", "ax0"], ["u"]),
            node("Squeeze", ["u", "ax0"], ["s"]),
            node("Concat", ["s", "s"], ["cc"], axis=1),
            node("Reshape", ["cc", "shp"], ["rs"]),
            node("Expand", ["bias", "shp"], ["e"]),
            node("Add", ["rs", "e"], ["y"]),
        ],
        "ok_move_slice",
        [fvi("x", [256, 64]), fvi("bias", [16, 1])],
        [fvi("y", [64, 16, 32])],
        [i64("ax0", [0]), i64("shp", [64, 16, 32])],
    )
    save_ok("ok_move_slice", model(g), "--machine tiny")


def ok_slice_limits():
    """Review regressions on the tiny machine, each a case Time-Slice must not cut the
    obvious way: opset-11 Softmax normalises over every axis from 1 on (only axis 0 may
    be cut); GatherElements with indices narrower than the data (cut off the gathered
    axis, the data in windows as wide as the indices' pieces); a stride-2 Conv whose last
    window is the widest; Gemm with transA (A's axis 0 is K: rows are cut along A's
    columns); a batched ConvTranspose is cut along the batch."""
    g = helper.make_graph(
        [
            node("Softmax", ["x"], ["s"]),
            node("GatherElements", ["d", "i"], ["ge"], axis=0),
            node("Conv", ["img", "cw"], ["cv"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
            node("Gemm", ["a", "gw"], ["gm"], transA=1),
            node("ConvTranspose", ["ct_x", "ct_w"], ["ct"], kernel_shape=[2, 2], strides=[2, 2]),
        ],
        "ok_slice_limits",
        [fvi("x", [2, 32, 64]), fvi("d", [64, 256]), vi("i", TensorProto.INT64, [64, 128]), fvi("img", [1, 1, 64, 64]),
         fvi("a", [16, 256]), fvi("ct_x", [8, 2, 8, 8])],
        [fvi("s", [2, 32, 64]), fvi("ge", [64, 128]), fvi("cv", [1, 1, 32, 32]), fvi("gm", [256, 8]), fvi("ct", [8, 2, 16, 16])],
        [fvals("cw", [1, 1, 3, 3], 0.1), fvals("gw", [16, 8], 0.1), fvals("ct_w", [2, 2, 2, 2], 0.1)],
    )
    save_ok("ok_slice_limits", model(g, opset=11), "--machine tiny")


def ok_trilu():
    """Trilu: a constant input's folds (the causal mask of a decoder), the other becomes a
    bitwise and with a constant mask (mask_lowering); the lower triangle with k = 5 of
    5 columns keeps every element: an Identity."""
    g = helper.make_graph(
        [node("Trilu", ["ones"], ["causal"], upper=0), node("Mul", ["x", "causal"], ["m"]),
         node("Trilu", ["m", "k1"], ["y"]), node("Trilu", ["x", "k5"], ["z"], upper=0)],
        "ok_trilu",
        [fvi("x", [2, 4, 5])],
        [fvi("y", [2, 4, 5]), fvi("z", [2, 4, 5])],
        [init("ones", np.ones([4, 5], np.float32)), i64("k1", 1), i64("k5", 5)],
    )
    save_ok("ok_trilu", model(g, opset=14))


def ok_mlp():
    g = helper.make_graph(
        [
            node("Gemm", ["x", "W1", "b1"], ["h"], transB=1),
            node("Relu", ["h"], ["r"]),
            node("MatMul", ["r", "W2"], ["m"]),
            node("Add", ["m", "b2"], ["a"]),
            node("Softmax", ["a"], ["y"], axis=-1),
        ],
        "ok_mlp",
        [fvi("x", ["batch", 8])],
        [fvi("y", ["batch", 3])],
        [fvals("W1", [4, 8]), fvals("b1", [4], 0.05), fvals("W2", [4, 3], 0.3), fvals("b2", [3], 0.02)],
    )
    save_ok("ok_mlp", model(g), "--input-shape x=2,8")
    save_ok("ok_mlp_mixed", model(g), "--input-shape x=2,8 -O float_dtype=mixed")


def ok_cnn():
    g = helper.make_graph(
        [
            node("Conv", ["x", "cw1", "cb1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]),
            node("BatchNormalization", ["c1", "bn_s", "bn_b", "bn_m", "bn_v"], ["bn"], epsilon=1e-5),
            node("Relu", ["bn"], ["r1"]),
            node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
            node("Conv", ["p1", "cw2"], ["c2"], kernel_shape=[3, 3], group=2),
            node("GlobalAveragePool", ["c2"], ["gap"]),
            node("Flatten", ["gap"], ["flat"], axis=1),
            node("Gemm", ["flat", "fw", "fb"], ["y"], transB=1),
        ],
        "ok_cnn",
        [fvi("x", [1, 3, 8, 8])],
        [fvi("y", [1, 2])],
        [
            fvals("cw1", [4, 3, 3, 3]),
            fvals("cb1", [4], 0.01),
            fvals("bn_s", [4], 0.1, 1.0),
            fvals("bn_b", [4], 0.05),
            fvals("bn_m", [4], 0.02),
            init("bn_v", np.array([0.5, 1.0, 1.5, 2.0], np.float32)),
            fvals("cw2", [4, 2, 3, 3]),
            fvals("fw", [2, 4], 0.3),
            fvals("fb", [2], 0.01),
        ],
    )
    save_ok("ok_cnn", model(g))
    save_ok("ok_cnn_tiny", model(g), "--machine tiny")


def ok_transformer():
    # x[1,4,8]: seq 4, model dim 8, 2 heads of 4
    nodes = [
        # layer norm from primitives
        node("ReduceMean", ["x"], ["mu"], axes=[-1], keepdims=1),
        node("Sub", ["x", "mu"], ["d"]),
        node("Pow", ["d", "two"], ["d2"]),
        node("ReduceMean", ["d2"], ["var"], axes=[-1], keepdims=1),
        node("Add", ["var", "eps"], ["var_e"]),
        node("Sqrt", ["var_e"], ["std"]),
        node("Div", ["d", "std"], ["xn"]),
        node("Mul", ["xn", "gamma"], ["xg"]),
        node("Add", ["xg", "beta"], ["ln"]),
        # attention
        node("MatMul", ["ln", "Wq"], ["q"]),
        node("MatMul", ["ln", "Wk"], ["k"]),
        node("MatMul", ["ln", "Wv"], ["v"]),
        node("Reshape", ["q", "heads_shape"], ["q4"]),
        node("Reshape", ["k", "heads_shape"], ["k4"]),
        node("Reshape", ["v", "heads_shape"], ["v4"]),
        node("Transpose", ["q4"], ["qt"], perm=[0, 2, 1, 3]),
        node("Transpose", ["k4"], ["kt"], perm=[0, 2, 3, 1]),
        node("Transpose", ["v4"], ["vt"], perm=[0, 2, 1, 3]),
        node("MatMul", ["qt", "kt"], ["scores"]),
        node("Div", ["scores", "sqrt_dk"], ["scaled"]),
        node("Softmax", ["scaled"], ["probs"], axis=-1),
        node("MatMul", ["probs", "vt"], ["ctx"]),
        node("Transpose", ["ctx"], ["ctx_t"], perm=[0, 2, 1, 3]),
        node("Reshape", ["ctx_t", "model_shape"], ["attn"]),
        node("Add", ["x", "attn"], ["res"]),
        # gelu from erf: res * 0.5 * (1 + erf(res / sqrt2))
        node("Div", ["res", "sqrt2"], ["g_div"]),
        node("Erf", ["g_div"], ["g_erf"]),
        node("Add", ["g_erf", "one"], ["g_add"]),
        node("Mul", ["res", "half"], ["g_half"]),
        node("Mul", ["g_half", "g_add"], ["y"]),
    ]
    scalar = lambda n, v: init(n, np.array(v, np.float32))
    inits = [
        scalar("two", 2.0),
        scalar("eps", 1e-5),
        fvals("gamma", [8], 0.1, 1.0),
        fvals("beta", [8], 0.05),
        fvals("Wq", [8, 8]),
        fvals("Wk", [8, 8], 0.11),
        fvals("Wv", [8, 8], 0.09),
        i64("heads_shape", [1, 4, 2, 4]),
        i64("model_shape", [1, 4, 8]),
        scalar("sqrt_dk", 2.0),
        scalar("sqrt2", float(np.sqrt(2.0))),
        scalar("one", 1.0),
        scalar("half", 0.5),
    ]
    g = helper.make_graph(nodes, "ok_transformer", [fvi("x", [1, 4, 8])], [fvi("y", [1, 4, 8])], inits)
    save_ok("ok_transformer", model(g))


def ok_pytorch_shapes():
    I = TensorProto.INT64
    cst = lambda out, arr: node("Constant", [], [out], value=numpy_helper.from_array(np.array(arr, np.int64), out))
    nodes = [
        # branch 1: Shape -> Gather(0) -> Unsqueeze -> Concat [-1] -> Reshape  => [batch, 48]
        node("Shape", ["x"], ["shape"]),
        cst("c_zero", 0),
        node("Gather", ["shape", "c_zero"], ["batch"], axis=0),
        cst("c_axes0", [0]),
        node("Unsqueeze", ["batch", "c_axes0"], ["batch_1d"]),
        cst("c_neg1", [-1]),
        node("Concat", ["batch_1d", "c_neg1"], ["flat_shape"], axis=0),
        node("Reshape", ["x", "flat_shape"], ["y_flat"]),
        # branch 2: shape -> float -> int64, Slice -> Concat -> Expand  => [batch,3,4,4]
        node("Cast", ["shape"], ["shape_f"], to=TensorProto.FLOAT),
        node("Cast", ["shape_f"], ["shape_i"], to=I),
        cst("c_s_start", [1]),
        cst("c_s_end", [4]),
        node("Slice", ["shape_i", "c_s_start", "c_s_end", "c_axes0"], ["chw"]),
        node("Concat", ["batch_1d", "chw"], ["full_shape"], axis=0),
        node("Expand", ["chan_bias", "full_shape"], ["bias_x"]),
        node("Add", ["x", "bias_x"], ["y_expand"]),
        # branch 3: ConstantOfShape of [batch, 3]  => [batch, 3]
        cst("c_three", [3]),
        node("Concat", ["batch_1d", "c_three"], ["bc_shape"], axis=0),
        node(
            "ConstantOfShape",
            ["bc_shape"],
            ["ones"],
            value=numpy_helper.from_array(np.array([1.5], np.float32), "value"),
        ),
        # branch 4: Range(0, W) with W from the shape, added along the last axis
        cst("c_three_s", 3),
        node("Gather", ["shape", "c_three_s"], ["width"], axis=0),
        cst("c_r_start", 0),
        cst("c_r_delta", 1),
        node("Range", ["c_r_start", "width", "c_r_delta"], ["ramp"]),
        node("Cast", ["ramp"], ["ramp_f"], to=TensorProto.FLOAT),
        node("Add", ["x", "ramp_f"], ["y_ramp"]),
        # branch 5: int64 arithmetic on shape values: ((C*H*W) / 2 + (C*H*W) / 2)  => 48
        cst("c_one_s", 1),
        cst("c_two_s", 2),
        node("Gather", ["shape", "c_one_s"], ["chan"], axis=0),
        node("Gather", ["shape", "c_two_s"], ["height"], axis=0),
        node("Mul", ["chan", "height"], ["ch"]),
        node("Mul", ["ch", "width"], ["chw_n"]),
        node("Div", ["chw_n", "c_two_s"], ["half_n"]),
        node("Add", ["half_n", "half_n"], ["chw_back"]),
        node("Unsqueeze", ["chw_back", "c_axes0"], ["chw_1d"]),
        node("Concat", ["batch_1d", "chw_1d"], ["flat_shape2"], axis=0),
        node("Reshape", ["x", "flat_shape2"], ["y_flat2"]),
    ]
    g = helper.make_graph(
        nodes,
        "ok_pytorch_shapes",
        [fvi("x", ["batch", 3, 4, 4])],
        [
            fvi("y_flat", ["batch", 48]),
            fvi("y_expand", ["batch", 3, 4, 4]),
            fvi("ones", ["batch", 3]),
            fvi("y_ramp", ["batch", 3, 4, 4]),
            fvi("y_flat2", ["batch", 48]),
        ],
        [fvals("chan_bias", [1, 3, 1, 1], 0.2)],
    )
    # onnx's own shape inference leaves the Expand and Range results partly
    # unknown (it does not evaluate shape values); the output shapes declared
    # above are the true ones, which mncc must compute from --input-shape.
    save_ok("ok_pytorch_shapes", model(g), "--input-shape x=2,3,4,4")


def ok_constant_forms():
    cvalue = numpy_helper.from_array(vals(6, 0.5).reshape(2, 3), "cvalue")
    nodes = [
        node("Constant", [], ["k_tensor"], value=cvalue),
        node("Constant", [], ["k_float"], value_float=2.0),
        node("Constant", [], ["k_floats"], value_floats=[1.0, 2.0, 3.0]),
        node("Constant", [], ["k_int"], value_int=6),
        node("Constant", [], ["k_ints"], value_ints=[3, 2]),
        node("Constant", [], ["k_axes"], value_ints=[0]),
        node("Add", ["x", "k_tensor"], ["a"]),  # [2,3]
        node("Mul", ["a", "k_float"], ["b"]),  # [2,3] * scalar
        node("Add", ["b", "k_floats"], ["c"]),  # [2,3] + [3]
        node("Reshape", ["c", "k_ints"], ["d"]),  # -> [3,2]
        node("Unsqueeze", ["k_int", "k_axes"], ["k_int_1d"]),  # [6]
        node("Reshape", ["d", "k_int_1d"], ["y"]),  # -> [6]
    ]
    g = helper.make_graph(nodes, "ok_constant_forms", [fvi("x", [2, 3])], [fvi("y", [6])])
    save_ok("ok_constant_forms", model(g))


def raw_tensor(name, dtype, np_dtype, values):
    t = TensorProto(name=name, data_type=dtype, dims=[len(values)])
    t.raw_data = np.array(values, dtype=np_dtype).astype(np.dtype(np_dtype).newbyteorder("<")).tobytes()
    return t


def typed_tensor(name, dtype, field, values):
    t = TensorProto(name=name, data_type=dtype, dims=[len(values)])
    getattr(t, field).extend(values)
    return t


def ok_dtypes():
    T = TensorProto
    f16_bits = np.array([1.5, -2.25, 65504.0], np.float16).view(np.uint16).tolist()
    tensors = [
        # typed fields
        typed_tensor("t_float", T.FLOAT, "float_data", [1.5, -2.5, 3.25]),
        typed_tensor("t_int8", T.INT8, "int32_data", [-128, 0, 127]),
        typed_tensor("t_uint16", T.UINT16, "int32_data", [0, 1000, 65535]),
        typed_tensor("t_int32", T.INT32, "int32_data", [-2147483648, -1, 2147483647]),
        typed_tensor("t_int64", T.INT64, "int64_data", [-(2**40), 7, 2**40]),
        typed_tensor("t_bool", T.BOOL, "int32_data", [1, 0, 1]),
        typed_tensor("t_float16", T.FLOAT16, "int32_data", f16_bits),
        typed_tensor("t_double", T.DOUBLE, "double_data", [0.125, -1e10, 3.0]),
        typed_tensor("t_uint32", T.UINT32, "uint64_data", [0, 4000000000, 4294967295]),
        typed_tensor("t_uint64", T.UINT64, "uint64_data", [1, 2**40, 2**64 - 1]),
        # raw_data (little endian)
        raw_tensor("r_uint8", T.UINT8, np.uint8, [0, 128, 255]),
        raw_tensor("r_int16", T.INT16, np.int16, [-32768, -2, 32767]),
        raw_tensor("r_float", T.FLOAT, np.float32, [0.5, -0.75, 1e-3]),
        raw_tensor("r_int64", T.INT64, np.int64, [-(2**62), -3, 2**62]),
        raw_tensor("r_double", T.DOUBLE, np.float64, [2.5, -0.0, 1e-300]),
        raw_tensor("r_float16", T.FLOAT16, np.float16, [0.5, -1.0, 2.0]),
        raw_tensor("r_bool", T.BOOL, np.bool_, [False, True, True]),
        raw_tensor("r_uint64", T.UINT64, np.uint64, [3, 2**63, 5]),
        raw_tensor("r_int8", T.INT8, np.int8, [-1, -100, 100]),
        raw_tensor("r_uint32", T.UINT32, np.uint32, [1, 2**31, 9]),
        raw_tensor("r_uint16", T.UINT16, np.uint16, [1, 40000, 2]),
        raw_tensor("r_int32", T.INT32, np.int32, [-5, 123456, 2**31 - 1]),
    ]
    nodes = []
    acc = "x"
    for i, t in enumerate(tensors):
        nodes.append(node("Cast", [t.name], [t.name + "_f"], to=T.FLOAT))
        out = "y" if i == len(tensors) - 1 else "sum%d" % i
        nodes.append(node("Add", [acc, t.name + "_f"], [out]))
        acc = out
    g = helper.make_graph(nodes, "ok_dtypes", [fvi("x", [3])], [fvi("y", [3])], tensors)
    save_ok("ok_dtypes", model(g))


def ok_broadcast():
    nodes = [
        node("Add", ["a", "b"], ["ab"]),  # [2,1,4] + [3,1] -> [2,3,4]
        node("Mul", ["s", "c"], ["sc"]),  # [] * [2,3,4] -> [2,3,4]
        node("Equal", ["a", "b"], ["eq"]),  # [2,1,4] == [3,1] -> bool [2,3,4]
        node("Where", ["eq", "b", "s"], ["w"]),  # bool[2,3,4], [3,1], [] -> [2,3,4]
        node("Add", ["ab", "sc"], ["t"]),
        node("Add", ["t", "w"], ["y"]),
    ]
    g = helper.make_graph(
        nodes,
        "ok_broadcast",
        [fvi("a", [2, 1, 4]), fvi("b", [3, 1]), fvi("s", []), fvi("c", [2, 3, 4])],
        [fvi("y", [2, 3, 4]), vi("eq", TensorProto.BOOL, [2, 3, 4])],
    )
    save_ok("ok_broadcast", model(g))


def ok_opset9():
    nodes = [
        node("Upsample", ["x", "up_scales"], ["up"], mode="nearest"),  # [1,2,8,8]
        node("Unsqueeze", ["up"], ["us"], axes=[0]),  # [1,1,2,8,8]
        node("Squeeze", ["us"], ["sq"], axes=[0]),  # [1,2,8,8]
        node("Slice", ["sq"], ["sl"], axes=[2, 3], starts=[1, 1], ends=[7, 7]),  # [1,2,6,6]
        node("Pad", ["sl"], ["pd"], mode="constant", pads=[0, 0, 1, 1, 0, 0, 1, 1], value=0.5),  # [1,2,8,8]
        node("Clip", ["pd"], ["cl"], min=-0.25, max=0.75),
        node("Dropout", ["cl"], ["dr"], ratio=0.3),
        node("Split", ["dr"], ["sp0", "sp1"], axis=3, split=[3, 5]),  # [1,2,8,3], [1,2,8,5]
        node("Concat", ["sp1", "sp0"], ["cc"], axis=3),  # [1,2,8,8]
        node("ReduceSum", ["cc"], ["rs"], axes=[3], keepdims=1),  # [1,2,8,1]
        node("Softmax", ["rs"], ["y"]),  # opset<13: default axis 1, coerced to 2-D
    ]
    g = helper.make_graph(
        nodes,
        "ok_opset9",
        [fvi("x", [1, 2, 4, 4])],
        [fvi("y", [1, 2, 8, 1])],
        [init("up_scales", np.array([1, 1, 2, 2], np.float32))],
    )
    save_ok("ok_opset9", model(g, opset=9))


def ok_opset17():
    nodes = [
        node("LayerNormalization", ["x", "ln_s", "ln_b"], ["ln"], axis=-1, epsilon=1e-5),
        node("Split", ["ln", "split"], ["p0", "p1"], axis=-1),  # [2,3,1], [2,3,3]
        node("ReduceSum", ["p1", "rs_axes"], ["rs"], keepdims=1),  # [2,3,1]
        node("Add", ["p0", "rs"], ["y"]),
    ]
    g = helper.make_graph(
        nodes,
        "ok_opset17",
        [fvi("x", [2, 3, 4])],
        [fvi("y", [2, 3, 1])],
        [fvals("ln_s", [4], 0.1, 1.0), fvals("ln_b", [4], 0.05), i64("split", [1, 3]), i64("rs_axes", [-1])],
    )
    save_ok("ok_opset17", model(g, opset=17))


def ok_input_initializer():
    nodes = [node("Add", ["x", "w"], ["y"])]
    g = helper.make_graph(
        nodes,
        "ok_input_initializer",
        [fvi("x", [2, 3]), fvi("w", [2, 3])],  # w is an input and has an initializer (its default)
        [fvi("y", [2, 3])],
        [fvals("w", [2, 3], 0.5)],
    )
    save_ok("ok_input_initializer", model(g, opset=9, ir_version=3))


def ok_value_info():
    nodes = [
        node("Relu", ["x"], ["r"]),
        node("Mul", ["r", "k"], ["m"]),
        node("Transpose", ["m"], ["t"], perm=[1, 0]),
        node("Sigmoid", ["t"], ["y"]),
    ]
    g = helper.make_graph(
        nodes,
        "ok_value_info",
        [fvi("x", [2, 3])],
        [fvi("y", [3, 2])],
        [init("k", np.array(2.0, np.float32))],
        value_info=[fvi("r", [2, 3]), fvi("m", [2, 3]), fvi("t", [3, 2])],
    )
    save_ok("ok_value_info", model(g))


def external_tensor(name, dtype, dims, location, offset, length):
    t = TensorProto(name=name, data_type=dtype, dims=dims)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", str(offset)), ("length", str(length))):
        e = t.external_data.add()
        e.key = k
        e.value = v
    return t


def external_graph(name, location, offset, length):
    t = external_tensor("w", TensorProto.FLOAT, [2, 3], location, offset, length)
    g = helper.make_graph(
        [node("Add", ["x", "w"], ["y"])], name, [fvi("x", [2, 3])], [fvi("y", [2, 3])], [t]
    )
    return model(g)


def ok_external_data():
    w = vals(6, 0.5).astype("<f4").tobytes()  # 24 bytes at offset 16
    b = np.array([0.25, -0.5, 1.0], "<f4").tobytes()  # 12 bytes at offset 64
    blob = b"MNCC-GOLDEN-PAD\n" + w
    blob += b"\0" * (64 - len(blob)) + b
    write_bytes("ok_external_data.bin", blob)
    tw = external_tensor("w", TensorProto.FLOAT, [2, 3], "ok_external_data.bin", 16, len(w))
    tb = external_tensor("b", TensorProto.FLOAT, [3], "ok_external_data.bin", 64, len(b))
    g = helper.make_graph(
        [node("Add", ["x", "w"], ["s"]), node("Mul", ["s", "b"], ["y"])],
        "ok_external_data",
        [fvi("x", [2, 3])],
        [fvi("y", [2, 3])],
        [tw, tb],
    )
    save_ok("ok_external_data", model(g), check_path=True)


def ok_resize_pad():
    nodes = [
        node("Resize", ["x", "", "rs_scales"], ["up"], mode="nearest"),  # [1,2,4,4]
        node("Pad", ["up", "pads", "pad_value"], ["pd"], mode="constant"),  # [1,2,6,6]
        node("Tile", ["pd", "repeats"], ["tl"]),  # [1,4,6,6]
        node("DepthToSpace", ["tl"], ["y"], blocksize=2, mode="DCR"),  # [1,1,12,12]
    ]
    g = helper.make_graph(
        nodes,
        "ok_resize_pad",
        [fvi("x", [1, 2, 2, 2])],
        [fvi("y", [1, 1, 12, 12])],
        [
            init("rs_scales", np.array([1, 1, 2, 2], np.float32)),
            i64("pads", [0, 0, 1, 1, 0, 0, 1, 1]),
            init("pad_value", np.array(-1.0, np.float32)),
            i64("repeats", [1, 2, 1, 1]),
        ],
    )
    save_ok("ok_resize_pad", model(g))


# ----------------------------------------------------------------------------
# invalid models


def simple_graph(name, nodes, inputs, outputs, inits=()):
    return helper.make_graph(nodes, name, inputs, outputs, list(inits))


def pb_varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def pb_key(field, wire):
    return pb_varint((field << 3) | wire)


def pb_len(field, payload):
    return pb_key(field, 2) + pb_varint(len(payload)) + payload


def bad_models():
    F = TensorProto.FLOAT
    save_bad("bad_empty", b"")

    with open(os.path.join(OUT, "ok_mlp.onnx"), "rb") as f:
        mlp = f.read()
    save_bad("bad_truncated", mlp[: len(mlp) // 2])

    save_bad("bad_not_onnx", b"This is a plain text file, not an ONNX model.\nmncc must reject it.\n")

    # ModelProto by hand: ir_version=8 (field 1), opset_import {version 13} (field 8),
    # producer_name (field 2), then graph (field 7, a message) encoded as varint 5.
    opset = pb_key(2, 0) + pb_varint(13)
    raw = pb_key(1, 0) + pb_varint(8) + pb_len(8, opset) + pb_len(2, PRODUCER.encode())
    raw += pb_key(7, 0) + pb_varint(5)
    save_bad("bad_wrong_field_types", raw)

    g = simple_graph(
        "bad_cycle",
        [node("Add", ["x", "b"], ["a"]), node("Relu", ["a"], ["b"])],
        [fvi("x", [2, 3])],
        [fvi("a", [2, 3])],
    )
    save_bad("bad_cycle", model(g))

    g = simple_graph(
        "bad_undefined_value", [node("Add", ["x", "ghost"], ["y"])], [fvi("x", [2, 3])], [fvi("y", [2, 3])]
    )
    save_bad("bad_undefined_value", model(g))

    g = simple_graph(
        "bad_two_producers",
        [node("Relu", ["x"], ["y"], name="first"), node("Sigmoid", ["x"], ["y"], name="second")],
        [fvi("x", [2, 3])],
        [fvi("y", [2, 3])],
    )
    save_bad("bad_two_producers", model(g))

    # Reshape [2,3] to [0,4]: 0 copies dim 0 (2), giving 8 elements for 6
    # (and a literal zero dim would give 0 elements): either way a mismatch.
    g = simple_graph(
        "bad_zero_dim",
        [node("Reshape", ["x", "shape"], ["y"])],
        [fvi("x", [2, 3])],
        [fvi("y", [2, 4])],
        [i64("shape", [0, 4])],
    )
    save_bad("bad_zero_dim", model(g))

    # A grouped Conv on the tiny machine whose filters alone overflow one LM: a cut
    # along the output channels would have to cut X and "group" too, so mncc rejects
    # the model for that machine, naming the node and its operands.
    g = simple_graph(
        "bad_too_large_tiny",
        [node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3], group=2)],
        [fvi("x", [1, 16, 4, 4])],
        [fvi("y", [1, 64, 2, 2])],
        [fvals("w", [64, 8, 3, 3], 0.01)],
    )
    save_bad("bad_too_large_tiny", model(g), "--machine tiny")

    g = simple_graph(
        "bad_negative_dim", [node("Relu", ["x"], ["y"])], [fvi("x", [2, -5])], [fvi("y", [2, -5])]
    )
    save_bad("bad_negative_dim", model(g))

    big = 2**40
    g = simple_graph(
        "bad_overflow_dims", [node("Relu", ["x"], ["y"])], [fvi("x", [big] * 3)], [fvi("y", [big] * 3)]
    )
    save_bad("bad_overflow_dims", model(g))

    g = simple_graph("bad_unknown_tensor_type", [node("Identity", ["x"], ["y"])], [], [fvi("y", [2, 3])])
    x = g.input.add()
    x.name = "x"
    x.type.tensor_type.elem_type = 99
    for d in (2, 3):
        x.type.tensor_type.shape.dim.add().dim_value = d
    save_bad("bad_unknown_tensor_type", model(g))

    sm = node("Softmax", ["x"], ["y"])
    a = sm.attribute.add()
    a.name = "axis"
    a.type = onnx.AttributeProto.FLOAT
    a.f = 1.0
    g = simple_graph("bad_attr_type", [sm], [fvi("x", [2, 3])], [fvi("y", [2, 3])])
    save_bad("bad_attr_type", model(g))

    g = simple_graph("bad_missing_attr", [node("Cast", ["x"], ["y"])], [fvi("x", [2, 3])], [fvi("y", [2, 3])])
    save_bad("bad_missing_attr", model(g))

    # a node without its first output (the fuzzer's find: constant folding wrote to it)
    k = node("Constant", [], ["unused"], name="k_node", value=helper.make_tensor("v", onnx.TensorProto.FLOAT, [], [1.0]))
    del k.output[:]
    g = simple_graph("bad_no_output", [k, node("Relu", ["x"], ["y"])], [fvi("x", [2, 3])], [fvi("y", [2, 3])])
    save_bad("bad_no_output", model(g))

    # external data: each model reads a [2,3] float (24 bytes)
    save_bad("bad_external_escape", external_graph("bad_external_escape", "../escape.bin", 0, 24))
    save_bad("bad_external_absolute", external_graph("bad_external_absolute", "/etc/passwd", 0, 24))
    save_bad(
        "bad_external_missing",
        external_graph("bad_external_missing", "bad_external_missing_does_not_exist.bin", 0, 24),
    )
    write_bytes("bad_external_range.bin", bytes(range(32)))  # 32 bytes; 24 asked at offset 16
    save_bad("bad_external_range", external_graph("bad_external_range", "bad_external_range.bin", 16, 24))

    # several unsupported ops of several types, among supported ones
    nodes = [
        node("Relu", ["boxes"], ["boxes_r"]),
        node("NonMaxSuppression", ["boxes_r", "scores"], ["sel0"], name="nms0"),
        node("NonMaxSuppression", ["boxes", "scores", "max_out"], ["sel1"], name="nms1"),
        node("TopK", ["vec", "k"], ["top_v", "top_i"], name="topk0"),
        node("Det", ["m"], ["e0"], name="det0"),
        node("Det", ["m"], ["e1"], name="det1"),
        node("Det", ["m"], ["e2"], name="det2"),
        node("Add", ["e2", "top_v"], ["y"]),
    ]
    g = simple_graph(
        "bad_unsupported_ops",
        nodes,
        [fvi("boxes", [1, 4, 4]), fvi("scores", [1, 1, 4]), fvi("vec", [4]), fvi("m", [4, 4])],
        [fvi("y", [4]), vi("sel0", TensorProto.INT64, ["n0", 3]), vi("sel1", TensorProto.INT64, ["n1", 3])],
        [i64("max_out", [2]), i64("k", [4])],
    )
    save_bad("bad_unsupported_ops", model(g))

    g = simple_graph(
        "bad_other_domain",
        [
            node("Relu", ["x"], ["r"]),
            node("FusedGelu", ["r"], ["y"], domain="com.microsoft"),
        ],
        [fvi("x", [2, 3])],
        [fvi("y", [2, 3])],
    )
    save_bad("bad_other_domain", model(g, extra_opsets=[("com.microsoft", 1)]))

    g = simple_graph(
        "bad_dynamic_dim", [node("Relu", ["x"], ["y"])], [fvi("x", ["batch", 4])], [fvi("y", ["batch", 4])]
    )
    save_bad("bad_dynamic_dim", model(g))

    g = simple_graph(
        "bad_shape_mismatch",
        [node("Add", ["a", "b"], ["y"])],
        [fvi("a", [2, 3]), fvi("b", [4, 5])],
        [fvi("y", [4, 5])],
    )
    save_bad("bad_shape_mismatch", model(g))

    g = simple_graph(
        "bad_trilu_k",
        [node("Trilu", ["x", "k"], ["y"])],
        [fvi("x", [4, 5])],
        [fvi("y", [4, 5])],
        [init("k", np.array([1.0, 2.0], np.float32))],
    )
    save_bad("bad_trilu_k", model(g, opset=14))

    g = simple_graph("bad_trilu_upper", [node("Trilu", ["x"], ["y"], upper=0.0)], [fvi("x", [4, 5])], [fvi("y", [4, 5])])
    save_bad("bad_trilu_upper", model(g, opset=14))


def main():
    global OUT
    OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    os.makedirs(OUT, exist_ok=True)
    for fn in (
        ok_mlp,
        ok_time_slice,
        ok_ksplit,
        ok_conv_window,
        ok_reduce_slice,
        ok_move_slice,
        ok_slice_limits,
        ok_cnn,
        ok_transformer,
        ok_pytorch_shapes,
        ok_constant_forms,
        ok_dtypes,
        ok_broadcast,
        ok_opset9,
        ok_opset17,
        ok_input_initializer,
        ok_value_info,
        ok_external_data,
        ok_resize_pad,
        ok_trilu,
    ):
        fn()
    bad_models()  # after ok_mlp, which bad_truncated cuts
    print("wrote %d files to %s" % (len(WRITTEN), OUT))


if __name__ == "__main__":
    main()
