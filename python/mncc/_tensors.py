"""Values in and out of a compiled model: numpy arrays or torch tensors on the caller's
side, numpy arrays of the graph's element types on mnemu's (input_K.pb / output_K.pb).

An input is converted to the element type the graph declares when it is of the same kind
(a float64 array for a float input, a Python int list for an int64 one); any other
mismatch, and every shape mismatch, raises, naming the input: the program was compiled
for one shape and would read garbage from another."""
import numpy as np

# report.json's element type names (core/dtypes.h) -> numpy
DTYPES = {"FLOAT32": np.float32, "FLOAT16": np.float16, "DOUBLE": np.float64, "INT8": np.int8, "UINT8": np.uint8,
          "INT16": np.int16, "UINT16": np.uint16, "INT32": np.int32, "UINT32": np.uint32, "INT64": np.int64,
          "UINT64": np.uint64, "BOOL": np.bool_}


def is_torch(x):
    t = type(x)
    return t.__module__.split(".")[0] == "torch" and t.__name__ in ("Tensor", "Parameter")


def to_numpy(x):
    """a numpy array of x (a torch tensor is detached and moved to the CPU)"""
    if is_torch(x):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def conform(x, want, index):
    """x as the numpy array graph input `want` (report.json's {name, dtype, shape}) takes"""
    a = to_numpy(x)
    dt = np.dtype(DTYPES.get(want["dtype"], np.float32))
    if a.dtype != dt:
        kinds = {"f": "f", "i": "i", "u": "i", "b": "b"}
        if kinds.get(a.dtype.kind) != kinds.get(dt.kind):
            raise TypeError("input %d ('%s'): %s given, the model takes %s" % (index, want["name"], a.dtype,
                                                                             want["dtype"].lower()))
        a = a.astype(dt)
    if list(a.shape) != list(want.get("shape", a.shape)):
        raise ValueError("input %d ('%s'): shape %s given, the model was compiled for %s" % (
            index, want["name"], list(a.shape), want["shape"]))
    return np.ascontiguousarray(a)


def like_inputs(outs, inputs):
    """outs as torch tensors when any input was one, else as they are"""
    if not any(is_torch(x) for x in inputs):
        return outs
    import torch
    return [torch.from_numpy(np.array(o)) for o in outs]
