"""More reductions, scans, counting and searching: median, mode, quantile, nan-reductions,
aminmax, cummax/cummin, logcumsumexp, diff, unique, bincount, histc, searchsorted, isin."""

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
from ._utils import return_type, wrap_dim
from .reduction import (_named, _parsed, _reduce_dims, _restore_dims, _sum_dtype, _tname,
                        _values_indices, evenly_distribute)
from .pointwise import _check_out_dtype, _out
from .registry import primitive

__all__ = ["median", "nanmedian", "mode", "quantile", "nanquantile", "nanmean", "nansum",
           "aminmax", "cummax", "cummin", "logcumsumexp", "diff", "unique",
           "unique_consecutive", "bincount", "histc", "searchsorted", "bucketize", "isin"]


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
        from .indexing import index_fill_grad
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


@primitive("mode", node="ModeBackward0", n_outputs=2, differentiable_outputs=1,
           save=("result1",))
def _mode(xp, self, *, dim, keepdim):
    return _mode_along(xp, self, dim, keepdim)


@_mode.derivative
def _(ctx, grad):
    from .indexing import index_fill_grad
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
    from .creation import tensor
    from .pointwise import where
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


# ----------------------------------------------------------------------------- nansum / nanmean
@primitive("nansum", node="NansumBackward0", save=("self",))
def _nansum(xp, self, *, dims, keepdim, dtype):
    acc = np.float32 if dtype in (D.float16, D.bfloat16) else dtype.np
    return xp.asarray(xp.nansum(self, axis=dims, keepdims=keepdim, dtype=acc)).astype(dtype.np)


@_nansum.derivative
def _(ctx, grad):
    # a product, not a where: an inf/nan grad at a NaN gives nan, as in PyTorch
    g = _restore_dims(grad, ctx.input_shape(), ctx.dims, ctx.keepdim)
    return g * ctx.self.isnan().logical_not()


_NAN_REDUCE = "Tensor input, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None, " \
    "Tensor? out=None"


def _nansum_of(which, input, dim=None, keepdim=False, dtype=None, out=None):
    if input._dtype.is_complex:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if out is not None:
        # PyTorch sums in out's dtype, which must be floating
        if out._dtype._category < 2:
            raise NotImplementedError(f"\"nansum_cpu\" not implemented for "
                                      f"'{_tname(out._dtype)}'")
        return _out(_nansum_of(which, input, dim, keepdim, dtype), out, "nansum", "any")
    dtype = dtype or _sum_dtype(input._dtype)
    if dtype.is_complex and input._dtype.is_floating_point:   # (ints have no NaNs: a sum)
        raise NotImplementedError(f"\"nansum_cpu\" not implemented for '{_tname(dtype)}'")
    return _nansum(input, dims=_reduce_dims(dim, input._data.ndim), keepdim=keepdim,
                   dtype=dtype)


def _nanmean_of(which, input, dim=None, keepdim=False, dtype=None, out=None):
    if out is not None:
        if out._dtype._category < 2:
            raise NotImplementedError(f"\"nansum_cpu\" not implemented for "
                                      f"'{_tname(out._dtype)}'")
        return _out(_nanmean_of(which, input, dim, keepdim, dtype), out, "nanmean", "any")
    # the input must be floating whatever dtype= says; then dtype= must be too
    if input._dtype._category < 2:
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype "
                           f"but got {_tname(input._dtype)}")
    if dtype is not None and dtype._category < 2:
        raise RuntimeError(f"nanmean(): could not infer output dtype. Optional dtype must be "
                           f"either a floating point or complex dtype. Got: {_tname(dtype)}")
    count = (~input.isnan()).sum(dim, keepdim)
    return _nansum_of(which, input, dim, keepdim, dtype) / count


# (the parsed ops are these functions themselves, called with their arguments as read)
nansum = _parsed("nansum", _NAN_REDUCE, takes_out=True)(_nansum_of)
nanmean = _parsed("nanmean", _NAN_REDUCE, takes_out=True)(_nanmean_of)


# ----------------------------------------------------------------------------- aminmax
_aminmax_tuple = return_type("aminmax", ["min", "max"])
_aminmax_out = return_type("aminmax_out", ["min", "max"])


@primitive("aminmax", node="AminmaxBackward0", n_outputs=2, save=("self", "result0", "result1"))
def _aminmax(xp, self, *, dims, keepdim):
    return (xp.asarray(xp.min(self, axis=dims, keepdims=keepdim)),
            xp.asarray(xp.max(self, axis=dims, keepdims=keepdim)))


@_aminmax.derivative
def _(ctx, grad_min, grad_max):
    # each extreme's gradient is shared evenly among its ties (as amin/amax)
    from .creation import zeros
    shape = ctx.input_shape()
    x = ctx.self
    total = zeros(shape, dtype=x._dtype)
    for g, res in ((grad_min, ctx.result0), (grad_max, ctx.result1)):
        if g is None:
            continue
        r = _restore_dims(Tensor._make(res, x._dtype), shape, ctx.dims, ctx.keepdim)
        mask = x == r
        total = total + mask * (_restore_dims(g, shape, ctx.dims, ctx.keepdim) /
                                mask.sum(dim=ctx.dims, keepdim=True))
    return total


@_parsed("aminmax", "Tensor input, *, int? dim=None, bool keepdim=False, Tensor[2]? out=None",
         takes_out=True)
def aminmax(which, input, dim=None, keepdim=False, out=None):
    ndim = input._data.ndim
    if dim is None:
        if input._data.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as "
                               "the operation has no identity.")
        dims = tuple(range(ndim))
    else:
        d = wrap_dim(dim, ndim)
        if ndim and input.shape[d] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
        dims = (d,) if ndim else ()
    if out is not None:
        # (the shapes are checked first, then out's dtypes (exactly the input's, min's first),
        # then the kernel's)
        for t in out:
            if t._dtype is not input._dtype:
                _check_out_dtype("mm", "aminmax", input._dtype, t._dtype)
    if input._dtype.is_complex:
        raise NotImplementedError(f"\"aminmax_cpu\" not implemented for '{_tname(input._dtype)}'")
    mn, mx = _aminmax(input, dims=dims, keepdim=keepdim)
    if dim is None and keepdim:
        mn, mx = mn.reshape([1] * ndim), mx.reshape([1] * ndim)
    if out is not None:
        return _aminmax_out(_out(mn, out[0], "aminmax", "mm"), _out(mx, out[1], "aminmax", "mm"))
    return _aminmax_tuple(mn, mx)


# ----------------------------------------------------------------------------- cummax / cummin
def _cum_extreme(xp, x, dim, largest):
    """Running max/min along dim and the index of its latest holder (NaN wins and sticks)."""
    if x.ndim == 0:
        return x.copy(), xp.zeros((), xp.int64)
    if x.size == 0:
        return x.copy(), xp.zeros(x.shape, xp.int64)
    acc = xp.maximum if largest else xp.minimum
    values = acc.accumulate(x, axis=dim)
    prev = xp.concatenate([xp.take(x, [0], axis=dim),
                           xp.take(values, xp.arange(x.shape[dim] - 1), axis=dim)], axis=dim)
    takes = (x >= prev) if largest else (x <= prev)
    if x.dtype.kind in "fV":
        takes = takes | xp.isnan(x)
    pos = xp.arange(x.shape[dim]).reshape([-1] + [1] * (x.ndim - 1 - dim))
    idx = xp.maximum.accumulate(xp.where(takes, pos, 0), axis=dim)
    return values, idx.astype(xp.int64)


def _cum_op(name, largest):
    op = primitive(name, node=name.capitalize() + "Backward0", n_outputs=2,
                   differentiable_outputs=1, save=("result1",))(
        lambda xp, self, *, dim: _cum_extreme(xp, self, dim, largest))

    @op.derivative
    def _(ctx, grad):
        from .creation import zeros
        if not len(ctx.input_shape()):
            return grad
        idx = Tensor._make(ctx.result1, D.int64)
        return zeros(ctx.input_shape(), dtype=grad._dtype).scatter_add(ctx.dim, idx, grad)

    @_parsed(name, "Tensor input, int dim, *, Tensor[2]? out=None", takes_out=True)
    def public(which, input, dim, out=None):
        if out is not None:         # (checked first: values, then indices)
            _check_scan_out(out[0], input._dtype)
            _check_scan_out(out[1], D.int64)
        if not input._data.ndim and dim not in (0, -1):
            raise IndexError(f"{name}(): Expected reduction dim -1 or 0 for scalar but got "
                             f"{dim}")
        # an empty input runs no kernel: any dim will do, and no dtype is refused
        d = wrap_dim(dim, input._data.ndim) if input._data.size else 0
        if input._data.size:
            _no_complex(f"{name}_cpu", input)
        v, i = op(input, dim=d)
        return _values_indices(name, v, i, out)
    return public


def _check_scan_out(out, dtype):
    """The scans' out= must have the result's dtype exactly."""
    if out._dtype is not dtype:
        raise RuntimeError(f"expected scalar_type {_tname(dtype)} but found {_tname(out._dtype)}")


cummax = _cum_op("cummax", True)
cummin = _cum_op("cummin", False)


# ----------------------------------------------------------------------------- logcumsumexp
@primitive("logcumsumexp", node="LogcumsumexpBackward0", save=("self", "result"))
def _logcumsumexp(xp, self, *, dim):
    if self.ndim == 0 or self.size == 0:
        return self.copy()
    if self.dtype.kind == "c":
        # no complex logaddexp ufunc to accumulate: a prefix scan that adds in the partial
        # result `step` places back, doubling step (log2(n) whole-array steps)
        out = xp.moveaxis(self, dim, -1).copy()
        step = 1
        while step < out.shape[-1]:
            out[..., step:] = _complex_logaddexp(xp, out[..., step:], out[..., :-step])
            step *= 2
        return xp.moveaxis(out, -1, dim)
    return xp.logaddexp.accumulate(self, axis=dim)


def _complex_logaddexp(xp, a, b):
    """log(e^a + e^b) for complex arrays: m + log1p(e^(n - m)), m the one with the larger real
    part (two -inf real parts give -inf)."""
    first = a.real >= b.real
    big, small = xp.where(first, a, b), xp.where(first, b, a)
    with np.errstate(all="ignore"):
        out = big + xp.log1p(xp.exp(small - big))
    return xp.where(xp.isneginf(big.real), big, out)


@_logcumsumexp.derivative
def _(ctx, grad):
    # d r_j / d x_i = exp(x_i - r_j) for j >= i: grad_x_i = exp(x_i - c) * sum_{j>=i}
    # g_j exp(c - r_j), a reversed cumulative sum. The shift c (each slice's first, smallest r;
    # a constant, as it cancels) keeps both factors in range unless r spans > ~700 in a slice.
    from .pointwise import where
    if grad._data.ndim == 0 or grad._data.size == 0:
        return grad
    d, r = ctx.dim, ctx.result
    c = r.narrow(d, 0, 1).detach()
    c = where(c.isfinite(), c, 0.0)
    # (for complex inputs each factor enters conjugated)
    return (grad * (c - r).exp().conj()).flip(d).cumsum(d).flip(d) * (ctx.self - c).exp().conj()


@_parsed("logcumsumexp", "Tensor input, int dim, *, Tensor? out=None", takes_out=True)
def logcumsumexp(which, input, dim, out=None):
    if out is not None:
        _check_scan_out(out, input._dtype)
    d = wrap_dim(dim, input._data.ndim)
    if input._dtype._category < 2:
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for "
                                  f"'{_tname(input._dtype)}'")
    return _out(_logcumsumexp(input, dim=d), out, "logcumsumexp")


# ----------------------------------------------------------------------------- diff
def diff(input, n=1, dim=-1, prepend=None, append=None):
    from .joining import cat
    ndim = input._data.ndim
    if ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    d = wrap_dim(dim, ndim)
    if prepend is not None or append is not None:
        for name, extra in (("prepend", prepend), ("append", append)):
            if extra is None:
                continue
            if not isinstance(extra, Tensor):
                raise TypeError(f"diff(): argument '{name}' must be Tensor, not "
                                f"{type(extra).__name__}")
            if extra._data.ndim != ndim:            # (a scalar too, unlike NumPy's diff)
                raise RuntimeError("diff expects prepend or append to be the same dimension as "
                                   "input")
            for i in range(ndim):
                if i != d and extra.shape[i] != input.shape[i]:
                    raise RuntimeError(f"diff expects the shape of tensor to prepend or append "
                                       f"to match that of input except along the differencing "
                                       f"dimension; input.size({i}) = {input.shape[i]}, but got "
                                       f"tensor.size({i}) = {extra.shape[i]}")
        input = cat([p for p in (prepend, input, append) if p is not None], d)
    for _ in range(n):
        length = input.shape[d]
        if length == 0:
            break
        a, b = input.narrow(d, 1, length - 1), input.narrow(d, 0, length - 1)
        input = a.logical_xor(b) if input._dtype is D.bool_ else a - b
    return input


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
    if dim is None:
        # (each NaN is its own value, as in PyTorch)
        values, inverse, counts = np.unique(x.reshape(-1), return_inverse=True,
                                            return_counts=True, equal_nan=False)
        inverse = inverse.reshape(x.shape)
    else:
        d = wrap_dim(dim, x.ndim)
        _check_empty_unique_dim(x, d)
        if x.size == 0:
            values, inverse, counts = x, np.zeros(0, np.int64), np.zeros(0, np.int64)
        else:
            values, inverse, counts = np.unique(x, return_inverse=True, return_counts=True,
                                                axis=d)
            inverse = inverse.reshape(-1)
    out = [Tensor._make(np.ascontiguousarray(values), input._dtype, dev)]
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
    if dim is None:
        rows = x.reshape(-1, 1)
        d = 0
    else:
        d = wrap_dim(dim, x.ndim)
        _check_empty_unique_dim(x, d)
        # (the row length spelled out: -1 is ambiguous for an empty x)
        rows = np.moveaxis(x, d, 0).reshape(x.shape[d], int(np.prod(np.delete(x.shape, d))))
    n = rows.shape[0]
    start = np.ones(n, bool)
    if n > 1:
        start[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    keep = np.flatnonzero(start)
    if dim is None:
        values = x.reshape(-1)[keep]
    else:
        values = np.take(x, keep, axis=d)
    out = [Tensor._make(np.ascontiguousarray(values), input._dtype, dev)]
    if return_inverse:
        inverse = np.cumsum(start) - 1
        out.append(Tensor._make(inverse.reshape(x.shape if dim is None else -1).astype(np.int64),
                                D.int64, dev))
    if return_counts:
        out.append(Tensor._make(np.diff(np.append(keep, n)).astype(np.int64), D.int64, dev))
    return out[0] if len(out) == 1 else tuple(out)


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


# ----------------------------------------------------------------------------- searching
def _binary_search(seq, vals, right):
    """Each row of vals searched in the same row of seq (rows, n), by PyTorch's bisection: a
    step goes right unless seq[mid] > val (right) or >= val (left), so NaNs (which compare
    false) give the positions PyTorch gives. All values step together: log2(n) steps."""
    n = seq.shape[-1]
    start = np.zeros(vals.shape, np.int64)
    if n == 0:
        return start
    end = np.full(vals.shape, n, np.int64)
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
    vals = np.asarray(input) if scalar else input._data
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
    return _out(Tensor._make(np.asarray(result, dtype=dtype.np), dtype, sorted_sequence._device),
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
