"""Clip gradients by their total norm or by value, in place.

The common case (2-norm, NumPy gradients of one float dtype) runs on the raw arrays: each
gradient's sum of squares by BLAS dot products over chunks (see _sum_of_squares), then one
scaling per gradient, where the op-by-op path cost a few ember ops per gradient. The values
are vector_norm's: sqrt of the sum of squares per gradient (|x| for a one-element one), then
the 2-norm of those norms.
"""
import warnings

import numpy as np

from ..._tensor import Tensor
from ...optim.optimizer import bump_versions
from ...autograd.grad_mode import no_grad
from ...ops.norms import vector_norm
from ...ops.joining import stack
from ...ops.creation import tensor


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


@no_grad()
def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    tensors = list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return tensor(0.0)
    total = _total_2_norm(tensors) if norm_type == 2.0 else None
    if total is None:
        norms = [vector_norm(t, norm_type) for t in tensors]
        total = vector_norm(stack(norms), norm_type)
    if error_if_nonfinite and (total.isnan() | total.isinf()).item():
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           f"`parameters` is non-finite, so it cannot be clipped. To disable "
                           f"this error and scale the gradients by the non-finite norm anyway, "
                           f"set `error_if_nonfinite=False`")
    return total


def _numpy_arrays(tensors):
    """The tensors' arrays when all are NumPy arrays of float32 or float64 (one dtype), else
    None."""
    arrays = [t._data for t in tensors]
    dtype = arrays[0].dtype
    if dtype not in (np.float32, np.float64) or any(
            type(a) is not np.ndarray or a.dtype != dtype for a in arrays):
        return None
    return arrays


# a dot product of at most this many elements runs on one thread in OpenBLAS (its sdot/ddot
# split longer vectors over threads, which would make the sum depend on the thread count)
_DOT_CHUNK = 8192


def _sum_of_squares(a):
    """sum(a * a) of a float array: BLAS dot products of chunks of at most _DOT_CHUNK
    elements (one pass, no squared copy; ~4x faster than squaring and summing), the chunks'
    sums added pairwise. The same bits on any number of threads."""
    flat = a.reshape(-1)
    if flat.size <= _DOT_CHUNK:
        return np.dot(flat, flat)
    parts = np.array([np.dot(c, c) for c in (flat[i:i + _DOT_CHUNK]
                                             for i in range(0, flat.size, _DOT_CHUNK))])
    return np.add.reduce(parts)


def _total_2_norm(tensors):
    """vector_norm(stack([vector_norm(t) for t in tensors])) on the raw arrays, or None."""
    if not all(isinstance(t, Tensor) for t in tensors):
        return None
    arrays = _numpy_arrays(tensors)
    if arrays is None:
        return None
    dtype = arrays[0].dtype
    sums = np.array([_sum_of_squares(a) for a in arrays], dtype)
    norms = np.sqrt(sums)
    for i, a in enumerate(arrays):      # one element: PyTorch's norm is |x| (no x * x)
        if a.size == 1:
            norms[i] = abs(a.reshape(-1)[0])
    total = norms[0] if len(norms) == 1 else np.sqrt(np.add.reduce(norms * norms))
    return Tensor._make(np.asarray(total, dtype))


@no_grad()
def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    grads = _grads(parameters)
    if not grads:
        return
    coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
    arrays = _numpy_arrays(grads)
    if arrays is None:
        for g in grads:
            g.mul_(coef.to(g.dtype))
        return
    c = coef._data.astype(arrays[0].dtype)
    if c != 1:                          # (times one changes no value: only the versions)
        for a in arrays:
            np.multiply(a, c, out=a)
    bump_versions(grads)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Scale all gradients together so that their total norm is at most max_norm; return
    the total norm from before clipping."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    parameters = list(parameters)
    total = get_total_norm(_grads(parameters), norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                   foreach=None):
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@no_grad()
def clip_grad_value_(parameters, clip_value, foreach=None):
    clip_value = float(clip_value)
    for g in _grads(parameters):
        g.clamp_(-clip_value, clip_value)
