#!/usr/bin/python3
"""docs/usage.md's preset table, from the files in presets/: one row per preset with what it
sets, after the presets it builds on ("base"). `make readme-presets` prints it; the CLI
test checks that docs/usage.md carries exactly these rows."""
import json
import os
import sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "presets")


def load(name, depth=0):
    with open(os.path.join(root, name + ".json")) as f:
        p = json.load(f)
    opts = {}
    if "base" in p:
        if depth > 8:
            sys.exit("presets: base chain too deep at " + name)
        opts.update(load(p["base"], depth + 1)[0])
    opts.update(p.get("options", {}))
    return opts, p


def value(v):
    return "true" if v is True else "false" if v is False else str(v)


names = sorted(f[:-5] for f in os.listdir(root) if f.endswith(".json"))
print("| preset | builds on | sets | what it is for |")
print("|---|---|---|---|")
for n in names:
    opts, p = load(n)
    sets = ", ".join("`%s=%s`" % (k, value(v)) for k, v in sorted(opts.items()))
    print("| %s | %s | %s | %s |" % (n, p.get("base", ""), sets, p.get("description", "")))
