"""Joining tensors: cat and stack."""
import numpy as np

from .._tensor import Tensor
from ._utils import wrap_dim
from ._pointwise_common import _out, warn_resize
from .registry import primitive, COMMON


def _legacy_empty(shape):
    # PyTorch still accepts (and skips) 1-D empty tensors of any other shape in cat
    return len(shape) == 1 and shape[0] == 0


@primitive("cat", node="CatBackward0", promote=COMMON)
def _cat(xp, *tensors, dim):
    kept = [t for t in tensors if not _legacy_empty(t.shape)]
    if not kept:
        return tensors[0].copy()
    return xp.concatenate(kept, axis=dim)


@_cat.derivative
def _(ctx, grad):
    out, start = [], 0
    for i in range(len(ctx._input_meta)):
        shape = ctx.input_shape(i)
        if _legacy_empty(shape) and grad._data.ndim != 1:
            out.append(grad.reshape(-1).narrow(0, 0, 0))    # (0,), still on grad's graph
            continue
        size = shape[ctx.dim]
        out.append(grad.narrow(ctx.dim, start, size))
        start += size
    return tuple(out)


def _tensor_list(name, tensors):
    """PyTorch's TypeError for a tensors argument that is no list or tuple."""
    if not isinstance(tensors, (list, tuple)):      # (not any iterable: a generator, a set)
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type(tensors).__name__}")
    return list(tensors)


def cat(tensors, dim=0, *, out=None, axis=None):
    if axis is not None:
        dim = axis
    tensors = _tensor_list("cat", tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    for i, t in enumerate(tensors):
        if t._data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               f"concatenated")
    kept = [t for t in tensors if not _legacy_empty(t._data.shape)]
    if not kept:
        kept = tensors
    ref = kept[0]
    n = ref._data.ndim
    d = wrap_dim(dim, n)
    for i, t in enumerate(kept):
        if t._data.ndim != n:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {n} and "
                               f"{t._data.ndim}")
        for k in range(n):
            if k != d and t.shape[k] != ref.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {ref.shape[k]} but got size {t.shape[k]} for "
                                   f"tensor number {i} in the list.")
    if out is not None and any(np.may_share_memory(out._data, t._data) for t in tensors):
        # (PyTorch resizes out, with its warning, before it finds the overlap)
        size = sum(t.shape[d] for t in kept if not _legacy_empty(t._data.shape))
        warn_resize(out, ref.shape[:d] + (size,) + ref.shape[d + 1:])
        raise RuntimeError("unsupported operation: some elements of the input tensor and the "
                           "written-to tensor refer to a single memory location. Please clone() "
                           "the tensor before performing the operation.")
    result = _cat(tensors, dim=d)
    return _out(result, out, "cat", "cat")


def concat(tensors, dim=0, *, out=None, axis=None):
    return cat(_tensor_list("concat", tensors), dim, out=out, axis=axis)


def concatenate(tensors, dim=0, *, out=None, axis=None):
    return cat(_tensor_list("concatenate", tensors), dim, out=out, axis=axis)


@primitive("stack", node="StackBackward0", promote=COMMON)
def _stack(xp, *tensors, dim):
    return xp.stack(tensors, axis=dim)


@_stack.derivative
def _(ctx, grad):
    return tuple(grad.unbind(ctx.dim))


def stack(tensors, dim=0, *, out=None):
    tensors = _tensor_list("stack", tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    ref = tensors[0].shape
    for i, t in enumerate(tensors):
        if t.shape != ref:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"[{', '.join(map(str, ref))}] at entry 0 and "
                               f"[{', '.join(map(str, t.shape))}] at entry {i}")
    result = _stack(tensors, dim=wrap_dim(dim, len(ref) + 1))
    return _out(result, out, "stack", "cat")


def _non_empty(name, tensors):
    tensors = _tensor_list(name, tensors)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


def hstack(tensors):
    tensors = _non_empty("hstack", tensors)
    tensors = [t if t._data.ndim else t.reshape(1) for t in tensors]
    return cat(tensors, 0 if tensors[0]._data.ndim == 1 else 1)


def vstack(tensors):
    tensors = _non_empty("vstack", tensors)
    return cat([t.reshape(1, -1) if t._data.ndim < 2 else t for t in tensors], 0)


def dstack(tensors):
    tensors = _non_empty("dstack", tensors)
    return cat([t.reshape(1, -1, 1) if t._data.ndim <= 1 else
                (t.unsqueeze(-1) if t._data.ndim == 2 else t) for t in tensors], 2)


def column_stack(tensors):
    tensors = _non_empty("column_stack", tensors)
    return cat([t.reshape(-1, 1) if t._data.ndim <= 1 else t for t in tensors], 1)


def row_stack(tensors):
    return vstack(_tensor_list("row_stack", tensors))
