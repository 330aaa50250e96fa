"""Statistics: median, mode, quantile, histc, histogram, histogramdd, bincount, cov, corrcoef."""
import builtins
import numpy as np
import warnings

from .. import _dtype as D
from .._printing import scalar_type_name
from .._tensor import Tensor
from ._pointwise_common import _out
from ._utils import wrap_dim, return_type as _return_type, return_type
from .indexing import _scalar_name
from .reduction import _parsed, _values_indices, evenly_distribute, _tname
from .registry import primitive
from .creation import tensor, linspace
from .pointwise import where
from .views import index_fill_grad


# ----------------------------------------------------------------------------- median
def _median_along(xp, x, dim, keepdim, ignore_nan):
    """(values, indices) of the lower median along dim; NaN propagates unless ignore_nan."""
    if x.ndim == 0:
        return x.copy(), xp.zeros((), xp.int64)
    order = xp.argsort(x, axis=dim, kind="stable")           # NaNs sort last
    n = x.shape[dim]
    nan = xp.isnan(x) if x.dtype.kind in "fV" else xp.zeros(x.shape, bool)
    if ignore_nan:
        valid = n - nan.sum(axis=dim, keepdims=True)
        k = xp.maximum(valid - 1, 0) // 2
    else:
        k = xp.full(nan.sum(axis=dim, keepdims=True).shape, (n - 1) // 2)
        # a row with a NaN: its median is the (first) NaN
        k = xp.where(nan.any(axis=dim, keepdims=True), n - nan.sum(axis=dim, keepdims=True), k)
    idx = xp.take_along_axis(order, k.astype(xp.int64), axis=dim)
    values = xp.take_along_axis(x, idx, axis=dim)
    if not keepdim:
        values, idx = values.squeeze(dim), idx.squeeze(dim)
    return values, idx.astype(xp.int64)


def _median_all_fn(xp, x, ignore_nan):
    if x.size == 0:
        # an empty median is NaN converted to the dtype as PyTorch's kernel converts it: True,
        # the lowest int64 for int64, the lowest int32 wrapped for the narrower integers
        if x.dtype.kind in "iu":
            wide = np.int64 if x.dtype.itemsize == 8 else np.int32
            return xp.asarray(np.iinfo(wide).min, wide).astype(x.dtype)
        return xp.asarray(np.nan).astype(x.dtype)
    return _median_along(xp, x.reshape(-1), 0, False, ignore_nan)[0]


def _median_ops(name, ignore_nan):
    node = "NanmedianBackward" if ignore_nan else "MedianBackward"
    all_op = primitive(name, node=node + "0", save=("self", "result"))(
        lambda xp, self: _median_all_fn(xp, self, ignore_nan))

    # ties share the gradient evenly (NaN results pick the NaNs)
    all_op.derivative(lambda ctx, grad: evenly_distribute(grad, ctx.self, ctx.result))

    dim_op = primitive(name + ".dim", node=node + "1", n_outputs=2, differentiable_outputs=1,
                       save=("result1",))(
        lambda xp, self, *, dim, keepdim: _median_along(xp, self, dim, keepdim, ignore_nan))

    @dim_op.derivative
    def _(ctx, grad):
        return index_fill_grad(grad, ctx.result1, ctx.input_shape(), ctx.dim, ctx.keepdim)

    @_parsed(name, "Tensor input",
             "Tensor input, int dim, bool keepdim=False, *, Tensor[2]? out=None", takes_out=True)
    def public(which, input, dim=None, keepdim=False, out=None):
        if which == 0:                  # the median of all (of none: no kernel, no check)
            if input._data.size:
                _no_complex("median_cpu", input, bool_too=True)
            return all_op(input)
        d = wrap_dim(dim, input._data.ndim)
        if input._data.ndim and input.shape[d] == 0:
            # (nanmedian's message says median() too)
            raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
        if out is not None:
            _check_median_out(out, input._dtype)
        _no_complex("median_out", input, bool_too=True)
        v, i = dim_op(input, dim=d, keepdim=keepdim)
        return _values_indices(name, v, i, out)
    return public


def _legacy_type_name(dtype):
    """A dtype as PyTorch's checks of a legacy type print it: ember.FloatTensor for the eight
    classic types, CPUBoolType, CPUComplexFloatType, ... for the others."""
    name = _tname(dtype)
    if dtype in (D.uint8, D.int8, D.int16, D.int32, D.int64, D.float16, D.float32, D.float64):
        return f"ember.{name}Tensor"
    return f"CPU{name}Type"


def _check_median_out(out, dtype):
    """median's and nanmedian's out=(values, indices): indices int64, values of the input's
    dtype (checked in that order, each message saying median)."""
    if out[1]._dtype is not D.int64:
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have scalar type Long; "
                           f"but got {_legacy_type_name(out[1]._dtype)} instead (while checking "
                           f"arguments for median)")
    if out[0]._dtype is not dtype:
        raise RuntimeError(f"Expected tensor for 'values' to have the same type as tensor for "
                           f"argument #2 'self'; but type {_legacy_type_name(out[0]._dtype)} "
                           f"does not equal {_legacy_type_name(dtype)} (while checking "
                           f"arguments for median)")


def _no_complex(kernel, input, bool_too=False):
    if input._dtype.is_complex or (bool_too and input._dtype is D.bool_):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_tname(input._dtype)}'")


median = _median_ops("median", False)
nanmedian = _median_ops("nanmedian", True)


# ----------------------------------------------------------------------------- mode
def _mode_along(xp, x, dim, keepdim):
    """The most frequent value along dim (the smallest on ties) and its last index."""
    if x.ndim == 0:
        return x.copy(), xp.zeros((), xp.int64)
    moved = xp.moveaxis(x, dim, -1)
    lead, n = moved.shape[:-1], moved.shape[-1]
    rows = moved.reshape(-1, n)
    s = xp.sort(rows, axis=-1)
    # runs of equal values in each sorted row: a run id per element, counted with one bincount
    differs = s[:, 1:] != s[:, :-1]
    if s.dtype.kind in "fV":                                  # NaNs count as one value
        differs &= ~(xp.isnan(s[:, 1:]) & xp.isnan(s[:, :-1]))
    new_run = xp.concatenate([xp.ones((rows.shape[0], 1), bool), differs], -1)
    run = xp.cumsum(new_run, axis=-1) - 1
    flat = (run + xp.arange(rows.shape[0])[:, None] * n).reshape(-1)
    counts = xp.bincount(flat, minlength=rows.size).reshape(rows.shape)[
        xp.arange(rows.shape[0])[:, None], run]
    best = xp.argmax(counts, axis=-1)                         # first = smallest value
    values = s[xp.arange(rows.shape[0]), best]
    hit = rows == values[:, None]
    if s.dtype.kind in "fV":
        hit |= xp.isnan(rows) & xp.isnan(values)[:, None]
    idx = n - 1 - xp.argmax(hit[:, ::-1], axis=-1)
    values, idx = values.reshape(lead), idx.reshape(lead)
    if keepdim:
        values, idx = xp.expand_dims(values, dim), xp.expand_dims(idx, dim)
    return values, idx.astype(xp.int64)


def _constant(array, like):
    """A tensor of `array` with the dtype and device of `like` (no graph)."""
    return Tensor._make(np.asarray(array, like._dtype.np), like._dtype, like._device)


@primitive("mode", node="ModeBackward0", n_outputs=2, differentiable_outputs=1,
           save=("result1",))
def _mode(xp, self, *, dim, keepdim):
    return _mode_along(xp, self, dim, keepdim)


@_mode.derivative
def _(ctx, grad):
    return index_fill_grad(grad, ctx.result1, ctx.input_shape(), ctx.dim, ctx.keepdim)


@_parsed("mode", "Tensor input, int dim=-1, bool keepdim=False, *, Tensor[2]? out=None",
         takes_out=True)
def mode(which, input, dim=-1, keepdim=False, out=None):
    if out is not None:     # (checked first: values, then indices)
        for t, dtype, what in ((out[0], input._dtype, "values"), (out[1], D.int64, "indices")):
            if t._dtype is not dtype:
                raise RuntimeError(f"expected scalar type '{_tname(dtype)}' but got "
                                   f"'{_tname(t._dtype)}' for {what} output")
    d = wrap_dim(dim, input._data.ndim)
    if input._data.ndim and input.shape[d] == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    _no_complex("mode_cpu", input)
    v, i = _mode(input, dim=d, keepdim=keepdim)
    return _values_indices("mode", v, i, out)


# ----------------------------------------------------------------------------- quantile
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan, out):
    """Composed of ember ops (sort, gather, lerp), so the gradient comes for free. (Its errors,
    in PyTorch's order, all say quantile(), nanquantile's too.)"""
    scalar_q = not isinstance(q, Tensor)
    if scalar_q and not 0 <= q <= 1:
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q:g}")
    if not scalar_q and q._data.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if input._dtype not in (D.float32, D.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    qt = tensor(q, dtype=input._dtype) if scalar_q else q
    if qt._dtype is not input._dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    if out is not None and out._dtype is not input._dtype:
        raise RuntimeError("quantile() out tensor must be same dtype as the input tensor")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"quantile() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if input._data.size == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    ndim = input._data.ndim
    if dim is None:
        x, d = input.reshape(-1), 0
        out_shape = [1] * ndim if keepdim else []
    else:
        d = wrap_dim(dim, ndim)
        x = input.reshape(1) if ndim == 0 else input
        out_shape = list(input.shape)
        if keepdim:
            out_shape[d] = 1
        elif ndim:
            del out_shape[d]
    if ((qt._data < 0) | (qt._data > 1)).any():
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    s = x.sort(d).values.movedim(d, -1)                       # NaNs last
    n = s.shape[-1]
    nan = s.isnan()
    count = (n - nan.sum(-1, keepdim=True)) if ignore_nan else \
        tensor(float(n), dtype=input._dtype).expand(*s.shape[:-1], 1)
    count = count.to(input._dtype)
    qv = qt.reshape(-1)                                      # (Q,)
    rank = qv * (count - 1).clamp(min=0)                     # (..., Q)
    if interpolation == "lower":
        rank = rank.floor()
    elif interpolation == "higher":
        rank = rank.ceil()
    elif interpolation == "nearest":
        rank = rank.round()                                   # (round half to even, as torch)
    lo = rank.floor().to(D.int64).clamp(0, n - 1)
    hi = rank.ceil().to(D.int64).clamp(0, n - 1)
    below, above = s.gather(-1, lo), s.gather(-1, hi)
    weight = tensor(0.5, dtype=input._dtype) if interpolation == "midpoint" else rank - lo
    if interpolation == "midpoint":
        weight = where(lo == hi, tensor(0.0, dtype=input._dtype), weight)
    result = below.lerp(above, weight)
    # a NaN in the row (quantile), or a row of NaNs (nanquantile): the result is NaN
    bad = (count == 0) if ignore_nan else nan.any(-1, keepdim=True)
    result = where(bad, tensor(float("nan"), dtype=input._dtype), result)
    result = result.movedim(-1, 0).reshape([qv.shape[0]] + out_shape)
    return result.squeeze(0) if scalar_q or qt._data.ndim == 0 else result


def _quantile_op(name, ignore_nan):
    rest = 'int? dim=None, bool keepdim=False, *, str interpolation="linear", Tensor? out=None'

    @_parsed(name, f"Tensor input, Tensor q, {rest}", f"Tensor input, float q, {rest}",
             takes_out=True)
    def public(which, input, q, dim=None, keepdim=False, interpolation="linear", out=None):
        return _out(_quantile(input, q, dim, keepdim, interpolation, ignore_nan, out), out,
                    name)
    return public


quantile = _quantile_op("quantile", False)
nanquantile = _quantile_op("nanquantile", True)


# ----------------------------------------------------------------------------- bincount / histc
def bincount(input, weights=None, minlength=0):
    x = input._data
    if input._dtype._category != 1:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for "
                                  f"'{_tname(input._dtype)}'")
    if x.ndim != 1 or (x.size and x.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        counts = np.bincount(x, minlength=minlength).astype(np.int64)
        return Tensor._make(counts, D.int64, input._device)
    if weights._data.ndim != 1 or weights._data.shape[0] != x.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    dtype = D.float32 if weights._dtype is D.float32 else D.float64
    counts = np.bincount(x, weights=weights._data.astype(np.float64), minlength=minlength)
    return Tensor._make(counts.astype(dtype.np), dtype, input._device)


def histc(input, bins=100, min=0, max=0, *, out=None):
    x = input._data
    if input._dtype._category < 2:
        # (bool fails earlier in torch, making the bin edges)
        kernel = "linspace_cpu" if input._dtype is D.bool_ else "histogram_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{_tname(input._dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    if lo == hi and x.size:
        lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    flat = x.reshape(-1)
    inside = flat[(flat >= lo) & (flat <= hi)].astype(np.float64)
    pos = ((inside - lo) * bins / (hi - lo)).astype(np.int64)
    pos = np.minimum(pos, bins - 1)                           # the max value: last bin
    counts = np.bincount(pos, minlength=bins).astype(x.dtype)
    return _out(Tensor._make(counts, input._dtype, input._device), out, "histc")


# ----------------------------------------------------------------------------- statistics
_COV_DOF_WARNING = ("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                    "than the number of observations. (Triggered internally at "
                    "/__w/pytorch/pytorch/aten/src/ATen/native/Correlation.cpp:129.)")


def _check_weights(name, w, n, integral):
    if w.dim() > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {w.dim()} dimensions")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w.numel()} != {n}")
    if integral and w._dtype._category != 1:
        raise RuntimeError(f"cov(): expected {name} to have integral dtype but got {name} "
                           f"with {_scalar_name(w._dtype)} dtype")
    if not integral and w._dtype._category != 2:
        raise RuntimeError(f"cov(): expected {name} to have floating point dtype but got "
                           f"{name} with {_scalar_name(w._dtype)} dtype")
    if (w._data < 0).any():
        raise RuntimeError(f"cov(): {name} cannot be negative")


def cov(input, *, correction=1, fweights=None, aweights=None):
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.dim()} dimensions")
    x = input.reshape(1, -1) if input.dim() < 2 else input
    if x._dtype._category < 2:
        x = x.to(D.get_default_dtype())
    n = x.shape[1]
    # observation weights: fweights (counts) times aweights (importance)
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, n, True)
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, n, False)
        w = aweights if w is None else w * aweights
    if w is None:
        avg = x.mean(1)
        norm_factor = n - correction
    else:
        w = w.to(x._dtype) if w._dtype._category < 2 else w
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
        if aweights is not None and correction != 0:
            norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
        else:
            norm_factor = w_sum - correction
        norm_factor = float(norm_factor.item())
    if norm_factor <= 0:
        warnings.warn(_COV_DOF_WARNING, UserWarning, stacklevel=2)
        norm_factor = 0
    centred = x - avg.unsqueeze(1)
    weighted = centred if w is None else centred * w
    c = centred.mm(weighted.t().conj()) / norm_factor
    return c.squeeze()


def corrcoef(input):
    c = cov(input)
    if c.dim() == 0:
        return c / c
    std = c.diagonal().sqrt()
    c = c / std.unsqueeze(1)
    c = c / std.unsqueeze(0)
    return c.clamp(-1, 1)


# ----------------------------------------------------------------------------- histogram
_histogram_tuple = _return_type("histogram", ["hist", "bin_edges"])


def histogram(input, bins, *, range=None, weight=None, density=False):
    dtype = input._dtype
    if dtype not in (D.float32, D.float64):
        raise NotImplementedError(f'"histogramdd" not implemented for '
                                  f"'{scalar_type_name(dtype)}'")
    data = input._data.reshape(-1)
    if isinstance(bins, Tensor):
        if bins._dtype is not dtype:
            raise RuntimeError(f"torch.histogram: input tensor and bins tensors should have the "
                               f"same dtype, but got input {dtype.name} and bins "
                               f"{bins._dtype.name}")
        edges = bins._data.reshape(-1)
    else:
        if bins <= 0:
            raise RuntimeError("torch.histogram(): bins must be > 0, but got "
                               f"{bins} for dimension 0")
        if range is not None:
            lo, hi = range
        elif data.size:
            lo, hi = data.min().item(), data.max().item()
        else:
            lo, hi = 0.0, 1.0                # torch's range for no data
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                               f"{lo:g} max {hi:g} for dimension 0")
        if lo == hi:                         # an empty range widens to one unit, as torch
            lo, hi = lo - 0.5, hi + 0.5
        edges = linspace(lo, hi, bins + 1, dtype=dtype)._data
    weights = None if weight is None else weight._data.reshape(-1)
    inside = (data >= edges[0]) & (data <= edges[-1])
    # bin k holds edges[k] <= v < edges[k+1]; the last bin also holds its right edge
    index = np.clip(np.searchsorted(edges, data, side="right") - 1, 0, edges.size - 2)
    w = inside.astype(dtype.np) if weights is None else np.where(inside, weights, 0)
    hist = np.bincount(index[inside], w[inside], minlength=edges.size - 1).astype(dtype.np)
    if density:
        hist = (hist / (hist.sum() * np.diff(edges))).astype(dtype.np)
    return _histogram_tuple(Tensor._make(hist, dtype, input._device),
                            Tensor._make(np.array(edges, dtype.np), dtype, input._device))


# ----------------------------------------------------------------------------- histogramdd
_histogramdd_tuple = return_type("histogramdd", ["hist", "bin_edges"])


def histogramdd(input, bins, *, range=None, weight=None, density=False):
    """The histogram of the points input[..., :] (D coordinates each) over a D-dim grid of
    bins: each dim binned as torch.histogram bins its values."""
    n = input.shape[-1]
    points = input.reshape(-1, n)
    if isinstance(bins, int):
        bins = [bins] * n
    if len(bins) != n:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    edges = [histogram(points[:, d], bins[d], range=None if range is None else
                       range[2 * d:2 * d + 2]).bin_edges for d in builtins.range(n)]
    data = points._data
    inside = np.ones(len(data), bool)
    index = []
    for d, e in enumerate(edges):
        e = e._data
        inside &= (data[:, d] >= e[0]) & (data[:, d] <= e[-1])
        index.append(np.clip(np.searchsorted(e, data[:, d], side="right") - 1, 0, e.size - 2))
    shape = tuple(e.shape[0] - 1 for e in edges)
    flat = np.ravel_multi_index(tuple(i[inside] for i in index), shape) if n else []
    w = None if weight is None else weight._data.reshape(-1)[inside]
    hist = np.bincount(flat, w, minlength=int(np.prod(shape))).reshape(shape)
    if density:
        widths = np.ix_(*[np.diff(e._data) for e in edges])
        hist = hist / (hist.sum() * np.prod(np.broadcast_arrays(*widths), axis=0))
    return _histogramdd_tuple(_constant(hist, input), tuple(edges))


__all__ = ['histogramdd', 'histogram', 'median', 'nanmedian', 'mode', 'quantile',
               'nanquantile', 'bincount', 'histc', 'cov', 'corrcoef']
