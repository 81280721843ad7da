"""mncc from Python: compile a PyTorch or ONNX model for the MN-Core-style accelerator
and run it on the emulator, in a few lines.

    import mncc, torch, torchvision
    net = torchvision.models.resnet18().eval()
    x = torch.randn(1, 3, 224, 224)
    m = mncc.compile(net, (x,))          # torch.onnx export, then mncc -O2 for mncore2
    y = m(x)                             # runs model.app on mnemu; a torch tensor, as x is
    print(m.cycles, m.check(x))          # emulated cycles; agreement with onnxruntime or torch

The package drives the mncc and mnemu programs (see _tools for where it finds them); it
needs numpy and onnx, and torch only for torch models."""
from ._compile import compile  # noqa: F401  (the package's API)
from ._export import export_torch  # noqa: F401
from ._model import CompiledModel, CompileError, RunError  # noqa: F401
from ._reference import Comparison  # noqa: F401

__all__ = ["compile", "export_torch", "CompiledModel", "CompileError", "RunError", "Comparison"]
