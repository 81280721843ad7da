#!/usr/bin/python3
"""docs/conformance.md's table, from run.py's JSON files: per ONNX op (every op a
test's model uses counts that test), how many tests pass, fail or are rejected, per
configuration.

Usage: table.py [--passing] DATA_ROOT CONF.json [CONF.json ...]
  DATA_ROOT: the libonnx-testdata data dir; --passing: only ops some test passes with
  (docs/conformance.md's table; the full one is build/conformance_table.md)
"""
import collections
import json
import os
import sys

import onnx


def ops_of(path):
    try:
        m = onnx.load(path, load_external_data=False)
    except Exception:
        return set()
    return {n.op_type for n in m.graph.node} or {"(none)"}


def main():
    args = sys.argv[1:]
    passing = args[:1] == ["--passing"]
    if passing:
        args = args[1:]
    root, confs = args[0], args[1:]
    runs = [json.load(open(c)) for c in confs]
    names = ["%s%s" % (r["machine"], "".join(" " + o for o in r["options"])) for r in runs]
    ops = {}
    for t in runs[0]["tests"]:
        ops[t["test"]] = ops_of(os.path.join(root, t["test"], "model.onnx"))
    per = collections.defaultdict(lambda: [[0, 0, 0] for _ in runs])
    for i, r in enumerate(runs):
        for t in r["tests"]:
            col = 0 if t["result"] == "passed" else 1 if t["result"] in ("failed", "crashed") else 2
            for op in ops.get(t["test"], ()):
                per[op][i][col] += 1
    print("| op | " + " | ".join("%s: passed / failed / rejected" % n for n in names) + " |")
    print("|---|" + "---|" * len(runs))
    for op in sorted(per, key=lambda o: (-per[o][0][0], o)):
        if passing and not any(c[0] for c in per[op]):
            continue
        print("| %s | %s |" % (op, " | ".join("%d / %d / %d" % tuple(c) for c in per[op])))
    tot = ["%d / %d / %d" % tuple(sum(t["result"] == k or (k == "failed" and t["result"] == "crashed") for t in r["tests"]) for k in ("passed", "failed", "rejected"))
           for r in runs]
    print("| **all tests** | %s |" % " | ".join(tot))


if __name__ == "__main__":
    main()
