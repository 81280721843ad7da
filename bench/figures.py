#!/usr/bin/python3
"""Figures for compiled programs: bash-free, run as `make bench-figures`.

For each model (small generated conv net, transformer and MLP, and the bundled
examples), compile with mncc for mncore2, run the model.app on random inputs with
mnemu --json, and print: compile time by pass (ms), emulated cycles, the roofline lower
bound, the ratio cycles / bound, the vector units' issue rate, and DRAM bytes moved.

Roofline lower bound = max(FLOPs / peak, compulsory DRAM bytes / bandwidth), in cycles:
  FLOPs    2 M N K for MatMul and Gemm, 2 per multiply-add of Conv and ConvTranspose,
           one per output element of every other node (from ONNX shape inference);
  peak     the float matrix unit: 64 FLOP per cycle per MAB (8 x 8 at 8 x 4 a cycle,
           docs/vsm.md 5.3) on all MABs;
  bytes    graph inputs, outputs and initializers, once;
  bandwidth  bandwidth_lw_per_cycle.dram_l2bm_per_group x 8 bytes x groups.
The ratio is the number to drive down.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper as nh
from onnx import shape_inference

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MNCC = os.environ.get("MNCC", os.path.join(ROOT, "build", "mncc"))
MNEMU = os.environ.get("MNEMU", os.path.join(ROOT, "build", "mnemu"))
MACHINE = json.load(open(os.path.join(ROOT, "presets", "machines", "mncore2.json")))
H = MACHINE["hierarchy"]
MABS = H["groups"] * H["l2b_per_group"] * H["l1b_per_l2b"] * H["mab_per_l1b"]
PEAK = 64 * MABS
BW = MACHINE["bandwidth_lw_per_cycle"]["dram_l2bm_per_group"] * 8 * H["groups"]
BYTES = {onnx.TensorProto.FLOAT: 4, onnx.TensorProto.DOUBLE: 8, onnx.TensorProto.FLOAT16: 2, onnx.TensorProto.INT64: 8, onnx.TensorProto.INT32: 4}


def shape_of(vi):
    return [d.dim_value for d in vi.type.tensor_type.shape.dim]


def flops(m):
    m = shape_inference.infer_shapes(m)
    shapes = {vi.name: shape_of(vi) for vi in list(m.graph.value_info) + list(m.graph.input) + list(m.graph.output)}
    for t in m.graph.initializer:
        shapes[t.name] = list(t.dims)
    total = 0
    for n in m.graph.node:
        out = shapes.get(n.output[0], [])
        numel = int(np.prod(out)) if out else 1
        if n.op_type in ("MatMul", "Gemm"):
            a = shapes.get(n.input[0], [])
            trans = any(at.name == "transA" and at.i for at in n.attribute)
            k = (a[-2] if trans else a[-1]) if a else 1
            total += 2 * numel * k
        elif n.op_type in ("Conv", "ConvTranspose"):
            w = shapes.get(n.input[1], [])
            per = int(np.prod(w[1:])) if w else 1
            total += 2 * (numel if n.op_type == "Conv" else int(np.prod(shapes.get(n.input[0], [1])))) * per
        else:
            total += numel
    return total


def gathered_rows(m):
    """tables read only by Gathers along axis 0 with indices known at run time (embeddings):
    name -> the rows those Gathers can read at most (one an index)"""
    inits = {t.name for t in m.graph.initializer}
    shapes = {vi.name: shape_of(vi) for vi in m.graph.input}
    rows, other = {}, set()
    for n in m.graph.node:
        for k, x in enumerate(n.input):
            axis = next((a.i for a in n.attribute if a.name == "axis"), 0)
            if n.op_type == "Gather" and k == 0 and axis == 0 and n.input[1] not in inits and n.input[1] in shapes:
                rows[x] = rows.get(x, 0) + int(np.prod(shapes[n.input[1]]))
            elif x in inits:
                other.add(x)
    return {t: r for t, r in rows.items() if t not in other}


def compulsory(m):
    inits = {t.name for t in m.graph.initializer}
    rows = gathered_rows(m)
    b = 0
    for t in m.graph.initializer:
        whole = int(np.prod(t.dims))
        if t.name in rows and t.dims:  # an embedding's table: the rows its indices can reach
            whole = min(whole, rows[t.name] * whole // t.dims[0])
        b += whole * BYTES.get(t.data_type, 4)
    for vi in list(m.graph.input) + list(m.graph.output):
        if vi.name not in inits:
            b += int(np.prod(shape_of(vi))) * BYTES.get(vi.type.tensor_type.elem_type, 4)
    return b


def example_input(m, vi, rng):
    """a seeded random input for graph input vi: floats from a standard normal; integers
    below the row count of the table a Gather indexes by them (else 0 or 1)"""
    dims = shape_of(vi)
    et = vi.type.tensor_type.elem_type
    if et not in (onnx.TensorProto.INT64, onnx.TensorProto.INT32):
        return rng.standard_normal(dims).astype(np.float32)
    tables = {t.name: list(t.dims) for t in m.graph.initializer}
    high = 2
    for n in m.graph.node:
        if n.op_type == "Gather" and len(n.input) > 1 and n.input[1] == vi.name and n.input[0] in tables:
            axis = next((a.i for a in n.attribute if a.name == "axis"), 0)
            high = tables[n.input[0]][axis]
    return rng.integers(0, high, dims).astype(np.int64 if et == onnx.TensorProto.INT64 else np.int32)


def feed_of(name, x):
    """python/mncc/ort_ref.js's form of an input"""
    kind = {np.dtype(np.int64): "int64", np.dtype(np.int32): "int32"}.get(x.dtype, "float32")
    return dict(name=name, dims=list(x.shape), type=kind, data=x.ravel().tolist())


# models with dynamic dims: the shapes they are compiled for (as `make demo` does)
SHAPES = {"mlp": {"x": [4, 4, 4]}}


def load_with_inputs(path, name, ind):
    """the model, its dynamic dims bound as SHAPES says, and seeded random inputs written
    to ind/input_K.pb (graph-input order, initializers skipped)"""
    m = onnx.load(path)
    bind = SHAPES.get(name, {})
    for vi in m.graph.input:
        if vi.name in bind:
            for d, n in zip(vi.type.tensor_type.shape.dim, bind[vi.name]):
                d.dim_value = n
    os.makedirs(ind, exist_ok=True)
    rng = np.random.default_rng(0)
    inits = {t.name for t in m.graph.initializer}
    k = 0
    for vi in m.graph.input:
        if vi.name in inits:
            continue
        x = example_input(m, vi, rng)
        open(os.path.join(ind, "input_%d.pb" % k), "wb").write(nh.from_array(x, vi.name).SerializeToString())
        k += 1
    return m


def run(name, path, tmp):
    cg = os.path.join(tmp, name)
    bind = SHAPES.get(name, {})
    extra = sum((["--input-shape", "%s=%s" % (k, ",".join(map(str, v)))] for k, v in bind.items()), [])
    ind = os.path.join(tmp, name + "_in")
    m = load_with_inputs(path, name, ind)
    got = {}
    for link, opt in (("concat", "link=concat"), ("merge", "link=merge"), ("fast", "simulation_mode=fast")):
        d = cg + "_" + link
        r = subprocess.run([MNCC, path, "-o", d, "--machine", "mncore2", "--cache-dir", "none", "-O", opt] + extra, capture_output=True, text=True)
        if r.returncode:
            return print("%-14s compile failed: %s" % (name, r.stderr.strip().splitlines()[-1:]))
        rep = json.load(open(os.path.join(d, "report.json")))
        passes = " ".join("%s=%.1f" % (p["name"], p["wall_ms"]) for p in rep["passes"])
        if not os.path.exists(os.path.join(d, "model.app")):
            return print("%-14s no model.app (%s)\n  passes (ms): %s" % (name, rep.get("model_app", "")[:120], passes))
        out = os.path.join(tmp, name + "_out_" + link)
        r = subprocess.run([MNEMU, os.path.join(d, "model.app"), "--inputs", ind, "-o", out, "--json"], capture_output=True, text=True)
        if r.returncode:
            return print("%-14s mnemu failed (link=%s): %s" % (name, link, r.stderr.strip()[-200:]))
        outs = tuple(open(os.path.join(out, f), "rb").read() for f in sorted(os.listdir(out)))
        got[link] = (json.loads(r.stdout.strip().splitlines()[-1]), passes, rep, outs)
    st, passes, rep, outs = got["concat"]
    f, b = flops(m), compulsory(m)
    lb = max(f / PEAK, b / BW, 1)
    issue = (st["insns"]["alu"] + st["insns"]["mau"]) / max(st["steps"], 1)
    print("%-14s nodes %4d  cycles %10d  bound %8.0f  ratio %9.1f  ALU+MAU per step %.2f  DRAM %11d B (compulsory %d)"
          % (name, len(m.graph.node), st["cycles"], lb, st["cycles"] / lb, issue, st["dram_bytes"], b))
    ms, _, mrep, mouts = got["merge"]
    fig = {}
    for p in mrep["passes"]:
        fig.update(p.get("figures", {}))
    print("  link=merge: cycles %d (%.1f%% fewer than concat, ratio %.1f), %s transfer nodes merged, outputs %s"
          % (ms["cycles"], 100.0 * (st["cycles"] - ms["cycles"]) / st["cycles"], ms["cycles"] / lb, fig.get("link_merged_pairs", "?"),
             "identical" if mouts == outs else "DIFFERENT"))
    fs, _, frep, _ = got["fast"]
    sfig = {}
    for p in rep["passes"]:
        sfig.update(p.get("figures", {}))
    wall = lambda r: [p["wall_ms"] for p in r["passes"] if p["name"] == "node_simulation"][0]
    print("  simulation_mode=fast (estimates only): cycles %d (%+.1f%% against default, whose Node Simulation timed %s nodes from their code"
          " in %.1f ms against %.1f)" % (fs["cycles"], 100.0 * (fs["cycles"] - st["cycles"]) / st["cycles"], sfig.get("nodes_timed_from_code", "?"),
                                         wall(rep), wall(frep)))
    for k, (s2, _, _, _) in got.items():
        if s2["cycles"] != s2.get("model_cycles"):
            print("  %s: mnemu's timing model predicts %s cycles, the run took %d" % (k, s2.get("model_cycles"), s2["cycles"]))
    print("  passes (ms): " + passes)


def main():
    tmp = tempfile.mkdtemp()
    models = []
    for kind in ("convnet", "transformer", "mlp"):
        p = os.path.join(tmp, kind + ".onnx")
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "bench", "gen_graph.py"), kind, "60", p], check=True, capture_output=True)
        models.append((kind + "_60", p))
    for f in sorted(os.listdir(os.path.join(ROOT, "examples"))):
        if f.endswith(".onnx"):
            models.append((f[:-5], os.path.join(ROOT, "examples", f)))
    real = os.path.join(ROOT, "build", "real", "node_modules", "openwakeword-js", "models")  # fetched by make real
    if os.path.isdir(real):
        models += [(f[:-5], os.path.join(real, f)) for f in sorted(os.listdir(real)) if f.endswith(".onnx")]
    print("figures: mncore2, peak %d FLOP/cycle (float matrix unit), DRAM %d B/cycle" % (PEAK, BW))
    if not os.path.isdir(real):
        print("(the wake-word models of openwakeword-js are measured too once make real has fetched them)")
    for name, p in models:
        run(name, p, tmp)
    subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    sys.exit(main())
