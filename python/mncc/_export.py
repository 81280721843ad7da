"""A torch.nn.Module, or a plain function of tensors, as an ONNX file (torch.onnx), the
shapes static: those of the example inputs; and torch's outputs, the reference
CompiledModel.check can take.

The module is exported in eval mode (torch.onnx's default), after running once on the
examples (in eval mode, without gradients) to count its outputs: they are named output_0,
output_1, ... unless the caller names them. The inputs take the names of forward's
parameters where it has them. torch is imported here only: the rest of the package works
without it."""
import inspect

import numpy as np

from ._tensors import is_torch


def _torch():
    try:
        import torch
    except ImportError as e:
        raise ImportError("mncc.compile: a torch model needs torch (Debian: python3-torch)") from e
    return torch


def _as_module(torch, fn):
    if isinstance(fn, torch.nn.Module):
        return fn

    class Function(torch.nn.Module):  # a plain function: a module without parameters
        def forward(self, *args):
            return fn(*args)

    return Function()


def _flat(torch, out):
    """the output tensors of a forward, in the order torch.onnx lays them out"""
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(torch, o)]
    raise TypeError("mncc.compile: the model returns %s; it may return a tensor or a tuple or list of tensors"
                    % type(out).__name__)


def _names(fn, n):
    try:
        ps = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        ps = []
    names = [p.name for p in ps if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return names[:n] if len(names) >= n else ["input_%d" % k for k in range(n)]


def _args(torch, inputs):
    return tuple(x if is_torch(x) else torch.from_numpy(np.ascontiguousarray(np.asarray(x))) for x in inputs)


def _forward(torch, module, args):
    """the output tensors of module on args, in eval mode and without gradients (the mode restored after)"""
    training = module.training
    module.eval()
    try:
        with torch.no_grad():
            return _flat(torch, module(*args))
    finally:
        module.train(training)


def torch_outputs(model, inputs):
    """torch's outputs of model (a module or function) on inputs, as numpy arrays"""
    torch = _torch()
    return [o.detach().cpu().numpy() for o in _forward(torch, _as_module(torch, model), _args(torch, inputs))]


def export_torch(model, example_inputs, path, opset=17, input_names=None, output_names=None):
    """writes model as ONNX to path; returns (input names, output names)"""
    torch = _torch()
    module = _as_module(torch, model)
    args = _args(torch, example_inputs)
    outs = _forward(torch, module, args)
    inames = list(input_names) if input_names else _names(module.forward if module is model else model, len(args))
    onames = list(output_names) if output_names else ["output_%d" % k for k in range(len(outs))]
    # (not under no_grad: some modules, an encoder layer above all, then take a fused kernel with no ONNX form)
    torch.onnx.export(module, args, path, opset_version=opset, input_names=inames, output_names=onames,
                      do_constant_folding=True)
    return inames, onames
