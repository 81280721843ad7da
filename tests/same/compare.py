#!/usr/bin/python3
"""Do two builds of mncc write the same artifacts? The guard of a restructuring.

  compare.py BASE [--head MNCC] [--quick] [--keep]

BASE is a git revision: its tree is exported into build/same/src-<sha> and built there
(once; kept for the next run). HEAD is this tree's build/mncc (or --head). Both compile
the same models with the same options (no Node Simulation cache, so each times its own
nodes):
  - every model of the ONNX backend test data (node, pytorch-converted,
    pytorch-operator, simple) on mncore2, and a quarter of them on tiny;
  - the bench graphs (bench/gen_graph.py: convnet, transformer, mlp at 60 nodes), and
    examples/mlp.onnx;
  - torchvision's resnet18 and mobilenet_v2 at 1x3x224x224 (random weights, seed 0),
    exported once with Debian's python3-torch when it is installed (make zoo-deps).
Every file of every codegen directory must be byte-identical, except the fields that
hold timings (wall_ms and the like, in report.json and dashboard.html), the hash of the
compiler binary in compile.stamp and Node Simulation's cache keys (a hash of the
estimator's source) in simulation_result.json. --quick takes
every eighth test model. Prints one line per difference and ends "N same, M differ";
exit 1 when any differs.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = "/usr/share/libonnx-testdata/data"
SUITES = ["node", "pytorch-converted", "pytorch-operator", "simple"]
TIMING = re.compile(r'("(?:wall_ms|[a-z_]*_ms|seconds|[a-z_]*_seconds|time_s)"\s*:\s*)-?[0-9.eE+-]+')


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def build_base(rev, out):
    sha = sh(["git", "-C", ROOT, "rev-parse", rev], capture_output=True, text=True).stdout.strip()
    src = os.path.join(out, "src-" + sha[:12])
    mncc = os.path.join(src, "build", "mncc")
    if not os.path.exists(mncc):
        shutil.rmtree(src, ignore_errors=True)
        os.makedirs(src)
        arch = subprocess.Popen(["git", "-C", ROOT, "archive", sha], stdout=subprocess.PIPE)
        sh(["tar", "-x", "-C", src], stdin=arch.stdout)
        if arch.wait():
            sys.exit("compare: git archive %s failed" % rev)
        sh(["make", "-C", src, "-j2", "build/mncc"], stdout=subprocess.DEVNULL)
    return mncc, sha[:12]


def torch_models(out):
    """resnet18 and mobilenet_v2 exported once; [] without torch"""
    d = os.path.join(out, "models")
    os.makedirs(d, exist_ok=True)
    want = [os.path.join(d, n + ".onnx") for n in ("resnet18", "mobilenet_v2")]
    if all(os.path.exists(p) for p in want):
        return want
    code = (
        "import sys, torch, torchvision\n"
        "torch.manual_seed(0)\n"
        "for name in ('resnet18', 'mobilenet_v2'):\n"
        "    m = getattr(torchvision.models, name)(weights=None).eval()\n"
        "    torch.onnx.export(m, torch.randn(1, 3, 224, 224), sys.argv[1] + '/' + name + '.onnx', opset_version=13)\n"
    )
    r = subprocess.run(["/usr/bin/python3", "-c", code, d], capture_output=True, text=True)
    if r.returncode:
        print("compare: no torchvision exports (python3-torch missing? make zoo-deps): %s" % r.stderr.strip().splitlines()[-1:])
        return []
    return want


def model_list(out, quick):
    lines = []
    tests = []
    for s in SUITES:
        tests += sorted(glob.glob(os.path.join(DATA, s, "*", "model.onnx")))
    step = 8 if quick else 1
    for i, p in enumerate(tests[::step]):
        name = p.split("/")[-3] + "__" + p.split("/")[-2]
        lines.append("%s --name %s" % (p, name))
        if i % 4 == 0:
            lines.append("%s --machine tiny --name %s__tiny" % (p, name))
    gen = os.path.join(out, "models")
    os.makedirs(gen, exist_ok=True)
    for k in ("convnet", "transformer", "mlp"):
        p = os.path.join(gen, "%s_60.onnx" % k)
        if not os.path.exists(p):
            sh(["/usr/bin/python3", os.path.join(ROOT, "bench", "gen_graph.py"), k, "60", p], stdout=subprocess.DEVNULL)
        lines.append("%s --name bench_%s_60" % (p, k))
    lines.append("%s --input-shape x=4,4,4 --name example_mlp" % os.path.join(ROOT, "examples", "mlp.onnx"))
    for p in torch_models(out):
        lines.append("%s --name tv_%s" % (p, os.path.basename(p)[:-5]))
    return lines


def compile_all(mncc, lines, out):
    lst = out + ".list"
    with open(lst, "w") as f:
        f.write("\n".join(lines) + "\n")
    shutil.rmtree(out, ignore_errors=True)
    # failed compiles are part of what is compared: batch's exit status is not
    subprocess.run([mncc, "batch", lst, "-o", out, "-j", "2", "--quiet", "--cache-dir", "none", "--timeout", "900"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def normal(path, tree):
    """the file's bytes, with the timings zeroed and the build's source tree (where its
    machine files are found) named as this tree"""
    data = open(path, "rb").read().replace(tree.encode(), ROOT.encode())
    if os.path.basename(path) == "compile.stamp":  # its first line names the compiler binary (--if-changed)
        data = data.split(b"\n", 1)[-1]
    if os.path.basename(path) == "simulation_result.json":  # Node Simulation's cache keys hash the estimator's source
        data = re.sub(rb'"key": "[0-9a-f]+"', b'"key": ""', data)
    if path.endswith((".json", ".html")):
        return TIMING.sub(lambda m: m.group(1) + "0", data.decode("utf-8", "replace")).encode()
    return data


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base")
    ap.add_argument("--head", default=os.path.join(ROOT, "build", "mncc"))
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    out = os.path.join(ROOT, "build", "same")
    os.makedirs(out, exist_ok=True)
    base, sha = build_base(a.base, out)
    lines = model_list(out, a.quick)
    print("compare: %d compiles with %s (base %s) and %s" % (len(lines), base, sha, a.head), flush=True)
    compile_all(base, lines, os.path.join(out, "base"))
    compile_all(a.head, lines, os.path.join(out, "head"))
    same = differ = 0
    tree0 = os.path.dirname(os.path.dirname(base))
    for ln in lines:
        name = ln.split("--name ")[1].split()[0]
        d0, d1 = os.path.join(out, "base", name), os.path.join(out, "head", name)
        f0 = sorted(os.listdir(d0)) if os.path.isdir(d0) else []
        f1 = sorted(os.listdir(d1)) if os.path.isdir(d1) else []
        why = None
        if f0 != f1:
            why = "files differ: %s" % sorted(set(f0) ^ set(f1))
        else:
            for f in f0:
                if normal(os.path.join(d0, f), tree0) != normal(os.path.join(d1, f), ROOT):
                    why = "%s differs" % f
                    break
        if why:
            differ += 1
            print("DIFF %s: %s" % (name, why))
        else:
            same += 1
    print("compare: %d same, %d differ" % (same, differ))
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
