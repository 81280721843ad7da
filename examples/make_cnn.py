#!/usr/bin/python3
"""Writes examples/cnn/: the small CNN `make demo` and `make check` run (model.onnx,
input_0.pb, and output_0.pb, PyTorch's own output for that input, the reference).

A torchvision-style net in miniature: a stride-2 3x3 stem with BatchNorm and ReLU, a
max pool, one residual basic block (two 3x3 convolutions, the skip added before the
last ReLU), a stride-2 stage with a squeeze-excitation block (as MobileNetV3 has them:
global average pool, two 1x1 convolutions, hard sigmoid, a broadcast Mul), global
average pooling and a linear classifier. Random
weights (torch.manual_seed(0)), BatchNorm statistics made non-trivial, exported with
torch.onnx at opset 13 in eval mode. Needs Debian's python3-torch (make zoo-deps); the
files it writes are committed, so building and testing do not."""
import os
import sys

import numpy as np
import torch
from onnx import numpy_helper as nh

SIZE = int(sys.argv[1]) if len(sys.argv) > 1 else 64
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cnn")


def cbr(cin, cout, stride):
    return [torch.nn.Conv2d(cin, cout, 3, stride, 1, bias=False), torch.nn.BatchNorm2d(cout), torch.nn.ReLU()]


class Block(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.a = torch.nn.Sequential(*cbr(c, c, 1))
        self.b = torch.nn.Sequential(torch.nn.Conv2d(c, c, 3, 1, 1, bias=False), torch.nn.BatchNorm2d(c))

    def forward(self, x):
        return torch.relu(self.b(self.a(x)) + x)


class SqueezeExcite(torch.nn.Module):
    def __init__(self, c, r=4):
        super().__init__()
        self.down = torch.nn.Conv2d(c, c // r, 1)
        self.up = torch.nn.Conv2d(c // r, c, 1)

    def forward(self, x):
        w = torch.nn.functional.adaptive_avg_pool2d(x, 1)
        return x * torch.nn.functional.hardsigmoid(self.up(torch.relu(self.down(w))))


class Net(torch.nn.Module):
    def __init__(self, c=16, classes=10):
        super().__init__()
        self.features = torch.nn.Sequential(*cbr(3, c, 2), torch.nn.MaxPool2d(3, 2, 1), Block(c), *cbr(c, 2 * c, 2),
                                            SqueezeExcite(2 * c), torch.nn.AdaptiveAvgPool2d(1))
        self.fc = torch.nn.Linear(2 * c, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.features(x), 1))


torch.manual_seed(0)
net = Net()
for m in net.modules():  # statistics as a trained net has them, so that folding them matters
    if isinstance(m, torch.nn.BatchNorm2d):
        m.running_mean.uniform_(-0.5, 0.5)
        m.running_var.uniform_(0.5, 2.0)
        m.weight.data.uniform_(0.5, 1.5)
        m.bias.data.uniform_(-0.2, 0.2)
net.eval()
x = torch.randn(1, 3, SIZE, SIZE)
os.makedirs(OUT, exist_ok=True)
with torch.no_grad():
    torch.onnx.export(net, x, os.path.join(OUT, "model.onnx"), opset_version=13, input_names=["image"],
                      output_names=["logits"])
    y = net(x)
open(os.path.join(OUT, "input_0.pb"), "wb").write(nh.from_array(x.numpy().astype(np.float32), "image").SerializeToString())
open(os.path.join(OUT, "output_0.pb"), "wb").write(nh.from_array(y.numpy().astype(np.float32), "logits").SerializeToString())
