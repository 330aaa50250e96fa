"""Joining tensors: cat and stack."""
from .. import _dtype as D
from .._tensor import Tensor
from ._utils import wrap_dim
from .registry import primitive, COMMON


@primitive("cat", node="CatBackward0", promote=COMMON)
def _cat(xp, *tensors, dim):
    return xp.concatenate(tensors, axis=dim)


@_cat.derivative
def _(ctx, grad):
    out, start = [], 0
    for i in range(len(ctx._input_meta)):
        size = ctx.input_shape(i)[ctx.dim] if len(ctx.input_shape(i)) else 0
        out.append(grad.narrow(ctx.dim, start, size) if size or len(ctx.input_shape(i)) else None)
        start += size
    return tuple(out)


def cat(tensors, dim=0, *, out=None, axis=None):
    if axis is not None:
        dim = axis
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    # legacy: 1-D empty tensors are skipped
    kept = [t for t in tensors if not (t._data.ndim == 1 and t._data.shape[0] == 0)]
    if not kept:
        return tensors[0].clone()
    ref = kept[0]
    n = ref._data.ndim
    if n == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
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
    result = _cat(kept, dim=d)
    from .pointwise import _out
    return _out(result, out)


concat = concatenate = cat


@primitive("stack", node="StackBackward0", promote=COMMON)
def _stack(xp, *tensors, dim):
    return xp.stack(tensors, axis=dim)


@_stack.derivative
def _(ctx, grad):
    return tuple(grad.unbind(ctx.dim))


def stack(tensors, dim=0, *, out=None):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    ref = tensors[0].shape
    for i, t in enumerate(tensors):
        if t.shape != ref:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"[{', '.join(map(str, ref))}] at entry 0 and "
                               f"[{', '.join(map(str, t.shape))}] at entry {i}")
    result = _stack(tensors, dim=wrap_dim(dim, len(ref) + 1))
    from .pointwise import _out
    return _out(result, out)


def hstack(tensors):
    tensors = [t if t._data.ndim else t.reshape(1) for t in tensors]
    return cat(tensors, 0 if tensors[0]._data.ndim == 1 else 1)


def vstack(tensors):
    return cat([t.reshape(1, -1) if t._data.ndim < 2 else t for t in tensors], 0)


def dstack(tensors):
    return cat([t.reshape(1, -1, 1) if t._data.ndim == 1 else
                (t.unsqueeze(-1) if t._data.ndim == 2 else t) for t in tensors], 2)


def column_stack(tensors):
    return cat([t.reshape(-1, 1) if t._data.ndim <= 1 else t for t in tensors], 1)
