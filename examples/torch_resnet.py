#!/usr/bin/python3
"""torchvision's resnet18 from PyTorch to the emulated machine in three calls: mncc.compile
(torch.onnx export, mncc -O2 for mncore2), the compiled model run on an image (mnemu), and
its check against torch's own forward on the same image.

usage: examples/torch_resnet.py [--batch N] [--machine NAME] [--codegen-dir DIR]
Random weights (seed 0); the emulator takes a few minutes for the 4.5 million cycles."""
import argparse
import os
import sys

import torch
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
import mncc  # noqa: E402  (from this source tree; an installed one needs no path)

ap = argparse.ArgumentParser()
ap.add_argument("--batch", type=int, default=1)
ap.add_argument("--machine", default="mncore2")
ap.add_argument("--codegen-dir", default=None, help="default: a directory under ~/.cache/mncc/compiled")
a = ap.parse_args()

torch.manual_seed(0)
net = torchvision.models.resnet18(weights=None).eval()
x = torch.randn(a.batch, 3, 224, 224)

model = mncc.compile(net, x, codegen_dir=a.codegen_dir, machine=a.machine)
print(model, "(compiled in %.1f s%s)" % (model.compile_seconds, ", the directory reused" if model.reused else ""))
result = model.check(x, reference="torch")  # one run on mnemu, its outputs beside torch's
logits = result.values[0]
print("top-5 classes of image 0:", logits[0].argsort()[::-1][:5].tolist())
print("%d emulated cycles" % model.cycles)
print(result)
sys.exit(0 if result else 1)
