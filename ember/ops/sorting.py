"""Sorting and searching: sort, argsort, msort, topk, kthvalue, unique, searchsorted, bucketize,
isin."""
import numpy as np

from .. import _dtype as D
from .._backend import backend
from .._tensor import Tensor
from ._pointwise_common import _out
from ._utils import wrap_dim, int_arg
from .reduction import _tname, _named
from .registry import primitive, xp_of
from .statistics import _no_complex
from .views import index_fill_grad
from .creation import zeros


# ----------------------------------------------------------------------------- sorting
@primitive("sort", node="SortBackward0", n_outputs=2, differentiable_outputs=1,
           save=("result1",))
def _sort(xp, self, *, dim, descending, stable):
    if self.ndim == 0:
        return self.copy(), xp.zeros((), xp.int64)
    key = self
    if descending:
        idx = xp.flip(xp.argsort(xp.flip(key, axis=dim), axis=dim, kind="stable"), axis=dim)
        idx = (self.shape[dim] - 1) - idx
    else:
        idx = xp.argsort(key, axis=dim, kind="stable")
    return xp.take_along_axis(self, idx, axis=dim), idx.astype(xp.int64)


@_sort.derivative
def _(ctx, grad):
    if not len(ctx.input_shape()):
        return grad
    idx = Tensor._make(ctx.result1, D.int64)
    return zeros(ctx.input_shape(), dtype=grad._dtype, device=grad._device).scatter(
        ctx.dim, idx, grad)


def check_sort_dim(name, dim, descending, method=False):
    """PyTorch's TypeError for a dim that is no int: sort(x, True) matches no signature. (The
    arguments are listed as given positionally, PyTorch lists keywords as name=type.)"""
    if not isinstance(dim, bool) and hasattr(dim, "__index__"):
        return
    got = [type(dim).__name__] + ([type(descending).__name__] if descending is not False else [])
    first = "" if method else "Tensor input, "
    out = "" if method else ", Tensor out = None" if name == "argsort" else \
        ", tuple of Tensors out = None"
    out2 = "" if method or name == "argsort" else ", *, tuple of Tensors out = None"
    raise TypeError(f"{name}() received an invalid combination of arguments - got "
                    f"({', '.join(([] if method else ['Tensor']) + got)}), but expected one of:\n"
                    f" * ({first}*, bool stable, int dim = -1, bool descending = False{out})\n"
                    f" * ({first}int dim = -1, bool descending = False{out2})\n")


def _no_complex_sort(input):
    if input._dtype.is_complex:
        raise RuntimeError(" Sort does not support complex dtypes on CPU")


def sort(input, dim=-1, descending=False, stable=False, *, out=None):
    check_sort_dim("sort", dim, descending)
    _no_complex_sort(input)
    v, i = _sort(input, dim=wrap_dim(dim, input._data.ndim), descending=descending,
                 stable=stable)
    return _named("sort")(v, i)


def argsort(input, dim=-1, descending=False, stable=False):
    check_sort_dim("argsort", dim, descending)
    return sort(input, dim, descending, stable)[1]


def msort(input):
    return sort(input, 0)[0]


@primitive("topk", node="TopkBackward0", n_outputs=2, differentiable_outputs=1,
           save=("result1",))
def _topk(xp, self, *, k, dim, largest, sorted):
    if self.ndim == 0:
        return self.copy(), xp.zeros((), xp.int64)
    if largest:
        idx = xp.flip(xp.argsort(xp.flip(self, axis=dim), axis=dim, kind="stable"), axis=dim)
        idx = (self.shape[dim] - 1) - idx
    else:
        idx = xp.argsort(self, axis=dim, kind="stable")
    idx = xp.take(idx, xp.arange(k), axis=dim)
    return xp.take_along_axis(self, idx, axis=dim), idx.astype(xp.int64)


_topk.derivative(_sort.derivative_fn)


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    d = wrap_dim(int_arg("topk", "dim", dim, 3), input._data.ndim)
    size = input.shape[d] if input._data.ndim else 1
    if k < 0 or k > size:
        raise RuntimeError("selected index k out of range")
    if input._dtype is D.bool_ or input._dtype.is_complex:     # (no CPU kernel for these)
        raise RuntimeError(f"{'' if input._dtype is D.bool_ else ' '}topk does not support "
                           f"{'bool' if input._dtype is D.bool_ else 'complex'} dtypes on CPU")
    v, i = _topk(input, k=k, dim=d, largest=largest, sorted=sorted)
    return _named("topk")(v, i)


@primitive("kthvalue", node="KthvalueBackward0", n_outputs=2, differentiable_outputs=1,
           save=("result1",))
def _kthvalue(xp, self, *, k, dim, keepdim):
    if self.ndim == 0:
        return self.copy(), xp.zeros((), xp.int64)
    idx = xp.argsort(self, axis=dim, kind="stable")
    idx = xp.take(idx, [k - 1], axis=dim)
    values = xp.take_along_axis(self, idx, axis=dim)
    if not keepdim:
        values, idx = xp.squeeze(values, dim), xp.squeeze(idx, dim)
    # (copies, not ascontiguousarray: that would make a 0-d result 1-d)
    return values.copy(), idx.astype(xp.int64)


@_kthvalue.derivative
def _(ctx, grad):
    return index_fill_grad(grad, ctx.result1, ctx.input_shape(), ctx.dim, ctx.keepdim)


def kthvalue(input, k, dim=-1, keepdim=False):
    d = wrap_dim(dim, input._data.ndim)
    size = input._data.shape[d] if input._data.ndim else 1
    if size == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if input._data.ndim:                            # (a scalar needs no kernel)
        _no_complex("kthvalue_cpu", input, bool_too=True)
    v, i = _kthvalue(input, k=k, dim=d, keepdim=keepdim)
    return _named("kthvalue")(v, i)


# ----------------------------------------------------------------------------- unique
def _no_dim_of_scalar(input, dim):
    if dim is not None and not input._data.ndim:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")


def _check_empty_unique_dim(x, d):
    """unique along dim d of an empty x: d must be its one zero-sized dim."""
    if x.size == 0:
        if x.shape[d] != 0:
            raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so "
                               "unique cannot be applied")
        if x.shape.count(0) > 1:
            raise RuntimeError("Number of zero sized dimensions is more than one, so unique "
                               "cannot be applied ")


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    _no_dim_of_scalar(input, dim)
    _no_complex("unique" if dim is None else "unique_dim", input)
    x = input._data
    dev = input._device
    xp = xp_of(dev)
    if dim is None:
        # (each NaN is its own value, as in PyTorch)
        values, inverse, counts = np.unique(x.reshape(-1), return_inverse=True,
                                            return_counts=True, equal_nan=False)
        inverse = inverse.reshape(x.shape)
    else:
        d = wrap_dim(dim, x.ndim)
        _check_empty_unique_dim(x, d)
        if x.size == 0:
            values, inverse, counts = x, xp.zeros(0, np.int64), xp.zeros(0, np.int64)
        else:
            values, inverse, counts = np.unique(x, return_inverse=True, return_counts=True,
                                                axis=d)
            inverse = inverse.reshape(-1)
    out = [Tensor._make(xp.ascontiguousarray(values), input._dtype, dev)]
    if return_inverse:
        out.append(Tensor._make(inverse.astype(np.int64), D.int64, dev))
    if return_counts:
        out.append(Tensor._make(counts.astype(np.int64), D.int64, dev))
    return out[0] if len(out) == 1 else tuple(out)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    _no_dim_of_scalar(input, dim)
    _no_complex("unique", input)
    x = input._data
    dev = input._device
    xp = xp_of(dev)
    if dim is None:
        rows = x.reshape(-1, 1)
        d = 0
    else:
        d = wrap_dim(dim, x.ndim)
        _check_empty_unique_dim(x, d)
        # (the row length spelled out: -1 is ambiguous for an empty x)
        rows = np.moveaxis(x, d, 0).reshape(x.shape[d], int(np.prod(np.delete(x.shape, d))))
    n = rows.shape[0]
    start = xp.ones(n, bool)
    if n > 1:
        start[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    keep = np.flatnonzero(start)
    if dim is None:
        values = x.reshape(-1)[keep]
    else:
        values = np.take(x, keep, axis=d)
    out = [Tensor._make(xp.ascontiguousarray(values), input._dtype, dev)]
    if return_inverse:
        inverse = np.cumsum(start) - 1
        out.append(Tensor._make(inverse.reshape(x.shape if dim is None else -1).astype(np.int64),
                                D.int64, dev))
    if return_counts:
        out.append(Tensor._make(np.diff(np.append(keep, n)).astype(np.int64), D.int64, dev))
    return out[0] if len(out) == 1 else tuple(out)


# ----------------------------------------------------------------------------- searching
def _binary_search(seq, vals, right):
    """Each row of vals searched in the same row of seq (rows, n), by PyTorch's bisection: a
    step goes right unless seq[mid] > val (right) or >= val (left), so NaNs (which compare
    false) give the positions PyTorch gives. All values step together: log2(n) steps."""
    n = seq.shape[-1]
    xp = np if seq.__class__ is np.ndarray else backend("cuda").xp
    start = xp.zeros(vals.shape, np.int64)
    if n == 0:
        return start
    end = xp.full(vals.shape, n, np.int64)
    while True:
        active = start < end
        if not active.any():
            return start
        mid = start + (end - start) // 2
        mid_val = np.take_along_axis(seq, np.minimum(mid, n - 1), axis=-1)
        stop = (mid_val > vals) if right else (mid_val >= vals)
        start = np.where(active & ~stop, mid + 1, start)
        end = np.where(active & stop, mid, end)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None, out=None):
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    scalar = not isinstance(input, Tensor)
    seq = sorted_sequence._data
    vals = xp_of(sorted_sequence._device).asarray(input) if scalar else input._data
    if seq.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension")
    if sorter is not None:
        if sorter.shape != sorted_sequence.shape:
            raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same "
                               f"size, but got boundary tensor {list(sorted_sequence.shape)}"
                               f"and got sorter tensor {list(sorter.shape)}")
        seq = np.take_along_axis(seq, sorter._data, axis=-1)
    if seq.ndim > 1 and (scalar or seq.shape[:-1] != vals.shape[:-1] or
                         vals.ndim != seq.ndim):
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or "
                           f"the first N-1 dimensions of boundaries tensor and input value "
                           f"tensor must match, but we got boundaries tensor "
                           f"{list(sorted_sequence.shape)} and input value tensor "
                           f"{list(() if scalar else input.shape)}")
    # one row of boundaries for every value, or a row per leading index
    rows = seq.reshape(int(np.prod(seq.shape[:-1])), seq.shape[-1])
    flat = vals.reshape(rows.shape[0], vals.shape[-1]) if seq.ndim > 1 else vals.reshape(1, -1)
    result = _binary_search(rows, flat, right).reshape(vals.shape)
    dtype = D.int32 if out_int32 else D.int64
    if out is not None and out._dtype is not dtype:
        raise RuntimeError(f"torch.searchsorted(): output tensor's dtype is wrong, it can only "
                           f"be Int(int32) or Long(int64) depending on whether out_int32 flag "
                           f"is True, but we got output tensor's dtype {_tname(out._dtype)} and "
                           f"out_int32 flag is {out_int32}")
    return _out(Tensor._make(result.astype(dtype.np, copy=False), dtype, sorted_sequence._device),
                out, "searchsorted")


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    if boundaries._data.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries._data.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() expected at least one Tensor argument")
    ref = elements if isinstance(elements, Tensor) else test_elements
    a = elements._data if isinstance(elements, Tensor) else np.asarray(elements)
    b = test_elements._data if isinstance(test_elements, Tensor) else np.asarray(test_elements)
    result = np.isin(a, b, invert=invert)
    return Tensor._make(np.asarray(result, dtype=bool), D.bool_, ref._device)


__all__ = ['unique', 'unique_consecutive', 'searchsorted', 'bucketize', 'isin']
