"""Assorted torch functions that complete the API: gcd/lcm, frexp, i0, polar/complex, vdot,
combinations, vander, unravel_index, trapezoid, histogram, renorm, put, scatter_reduce, the
*_scatter ops, mvlgamma, window functions, and small global switches (deterministic algorithms,
warn-always, default tensor type).

Where PyTorch's graph shows a node of its own the op is a primitive with PyTorch's node name and
a derivative in ember ops; the rest are composites whose graphs show their parts, as torch's do.
"""
import math
import warnings

import numpy as np

from .. import _backend
from .. import _dtype as D
from .._tensor import Tensor, is_inference as _is_inference_tensor
from .._printing import scalar_type_name
from ._utils import return_type as _return_type, wrap_dim, int_arg
from .registry import primitive, COMMON, FLOAT
from . import views as V
from .pointwise import _mul_scalar, _div_scalar
from . import indexing as I
from . import pointwise as P
from . import special as _sp


def _long(a):
    return Tensor._make(np.asarray(a, dtype=np.int64), D.int64)


# ----------------------------------------------------------------------------- gcd / lcm
def _integer_binary(name, fn):
    op = primitive(name, promote=COMMON, differentiable=False)(
        lambda xp, self, other: fn(xp, self, other))

    def check(input, other):
        P._require_tensor(name, input, other, False)     # (no Python-number overload)
        # the kernel runs in the result dtype: an int tensor with a bool one is fine
        dtype = D.result_dtype([input, other])
        if dtype._category >= 2 or dtype is D.bool_:
            P.check_broadcast((input, other))       # (PyTorch reports the shapes first)
            raise NotImplementedError(f'"{name}_cpu" not implemented for '
                                      f"'{scalar_type_name(dtype)}'")

    def public(input, other, *, out=None):
        check(input, other)
        return P._out(op(input, other), out, name)

    def inplace(self, other):
        check(self, other)
        return op.inplace(self, other)
    public.__name__, inplace.__name__ = name, name + "_"
    return public, inplace


def _lcm(xp, a, b):
    g = xp.gcd(a, b)
    with np.errstate(all="ignore"):
        out = xp.abs(a // xp.where(g == 0, 1, g) * b)
    return xp.where(g == 0, 0, out).astype(np.result_type(a, b), copy=False)


gcd, gcd_ = _integer_binary("gcd", lambda xp, a, b: xp.gcd(a, b))
lcm, lcm_ = _integer_binary("lcm", _lcm)


# ----------------------------------------------------------------------------- frexp / i0
_frexp_tuple = _return_type("frexp", ["mantissa", "exponent"])


@primitive("frexp", node="FrexpBackward0", n_outputs=2, differentiable_outputs=1,
           save=("result1",))
def _frexp(xp, self):
    mantissa, exponent = xp.frexp(self)
    return mantissa.astype(self.dtype, copy=False), exponent.astype(np.int32)


@_frexp.derivative
def _(ctx, grad):
    # mantissa = x / 2**exponent, with the exponent piecewise constant
    return grad / Tensor._make(np.ldexp(np.ones((), grad._dtype.np), ctx.result1), grad._dtype)


def frexp(input):
    if input._dtype._category != 2:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    return _frexp_tuple(*_frexp(input))


def _bessel_i1(xp, x):
    """The modified Bessel function I1: its power series for |x| <= 30, the asymptotic
    series above (both accurate to double precision there: the series has no cancellation,
    and the asymptotic one's error is about e^(-2|x|))."""
    a = xp.abs(x).astype(np.float64)
    small = xp.minimum(a, _I1_SWITCH) / 2.0
    term = small.copy()
    total = small.copy()
    sq = small * small
    for k in range(1, 75):                  # a fixed number of terms, over the whole array
        term = term * sq / (k * (k + 1))
        total = total + term
    big = xp.maximum(a, _I1_SWITCH)
    coeff, series = 1.0, 1.0
    for k in range(1, 50):                  # (its terms still shrink up to k = 2 * 30)
        coeff *= -(4.0 - (2 * k - 1) ** 2) / (k * 8.0)
        series = series + coeff / big ** k
    with np.errstate(all="ignore"):
        asymptotic = xp.exp(big) / xp.sqrt(2 * math.pi * big) * series
    out = xp.where(a <= _I1_SWITCH, total, asymptotic)
    return (xp.sign(x) * out).astype(x.dtype, copy=False)


_I1_SWITCH = 30.0


@primitive("i0", node="I0Backward0", save=("self",), promote=FLOAT)
def _i0(xp, self):
    return xp.i0(self.astype(np.float64)).astype(self.dtype, copy=False)


_i1 = primitive("special_i1", node="SpecialI1Backward0", save=("self", "result"),
                promote=FLOAT)(lambda xp, self: _bessel_i1(xp, self))


@_i0.derivative
def _(ctx, grad):
    return grad * _i1(ctx.self)


@_i1.derivative
def _(ctx, grad):
    # I1'(x) = I0(x) - I1(x) / x, which is 1/2 at x = 0
    x = ctx.self
    zero = x == 0
    ratio = P.where(zero, 0.5, ctx.result / P.where(zero, 1.0, x))
    return grad * (_i0(x) - ratio)


def i0(input, *, out=None):
    if input._dtype.is_complex:
        raise NotImplementedError("\"i0_vml_cpu\" not implemented for "
                                  f"'{scalar_type_name(input._dtype)}'")
    return P._out(_i0(input), out, "i0")


def i0_(self):
    return _i0.inplace(self)


# ----------------------------------------------------------------------------- complex
def _check_float_pair(a, b):
    if a._dtype not in (D.float16, D.float32, D.float64) or \
            b._dtype not in (D.float16, D.float32, D.float64):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{scalar_type_name(a._dtype)} and {scalar_type_name(b._dtype)}")
    if a._dtype is not b._dtype:
        raise RuntimeError(f"Expected object of scalar type {scalar_type_name(a._dtype)} but "
                           f"got scalar type {scalar_type_name(b._dtype)} for second argument")


_COMPLEX_OF = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128,
               np.dtype(np.float16): np.complex64}


@primitive("complex", node="ComplexBackward0")
def _complex(xp, real, imag):
    out = xp.empty(np.broadcast_shapes(real.shape, imag.shape), _COMPLEX_OF[real.dtype])
    out.real, out.imag = real, imag
    return out


@_complex.derivative
def _(ctx, grad):
    return grad.real, grad.imag


@primitive("polar", node="PolarBackward0", save=("result",))
def _polar(xp, abs, angle):
    return _complex.forward(xp, abs * xp.cos(angle), abs * xp.sin(angle))


@_polar.derivative
def _(ctx, grad):
    # as torch defines it: abs's gradient follows the result's direction (so a negative abs
    # gets the opposite sign), angle's the result turned by a quarter
    z, g = ctx.result, grad.conj()
    return (g * z.sgn()).real, (g * z * 1j).real


def complex(real, imag, *, out=None):
    _check_float_pair(real, imag)
    return P._out(_complex(real, imag), out, "complex")


def polar(abs, angle, *, out=None):
    _check_float_pair(abs, angle)
    return P._out(_polar(abs, angle), out, "polar")


@primitive("vdot", node="VdotBackward0", save=("self", "other"), promote=None)
def _vdot(xp, self, other):
    return xp.asarray(xp.vdot(self, other))


@_vdot.derivative
def _(ctx, grad):
    g_self = ctx.other * grad.conj() if ctx.needs_input_grad[0] else None
    g_other = ctx.self * grad if ctx.needs_input_grad[1] else None
    return g_self, g_other


def vdot(input, other, *, out=None):
    if input._data.ndim != 1 or other._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input._data.ndim}D and "
                           f"{other._data.ndim}D tensors")
    if input._dtype is not other._dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{scalar_type_name(input._dtype)} and "
                           f"{scalar_type_name(other._dtype)}")
    if input._data.shape != other._data.shape:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.numel()}] and src "
                           f"[{other.numel()}] to have the same number of elements, but got "
                           f"{input.numel()} and {other.numel()} elements respectively")
    return P._out(_vdot(input, other), out, "vdot")


@primitive("conj_physical", node="ConjPhysicalBackward0")
def _conj_physical(xp, self):
    return xp.conj(self)


@_conj_physical.derivative
def _(ctx, grad):
    return _conj_physical(grad)


def conj_physical(input):
    return _conj_physical(input) if input._dtype.is_complex else input


# the in-place form is its own node in torch's graph; same kernel and derivative
_conj_physical_ = primitive("conj_physical_", node="ConjPhysicalBackward1")(
    _conj_physical.forward)
_conj_physical_.derivative(_conj_physical.derivative_fn)


def conj_physical_(self):
    # (recorded for real tensors too, as torch does; the kernel is then the identity)
    return _conj_physical_.inplace(self)


def isreal(input):
    if not input._dtype.is_complex:
        return Tensor._make(np.ones(input._data.shape, np.bool_), D.bool_, input._device)
    return input.imag == 0


# ----------------------------------------------------------------------------- combinatorics
def combinations(input, r=2, with_replacement=False):
    if input._data.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_empty(0)
    n = input._data.shape[0]
    # every r-tuple of positions, kept where they increase (or do not decrease)
    grid = np.indices((n,) * r).reshape(r, -1)
    steps = np.diff(grid, axis=0)
    keep = (steps >= 0 if with_replacement else steps > 0).all(axis=0)
    chosen = grid[:, keep]
    from .joining import stack
    return stack([input.index_select(0, _long(row)) for row in chosen], 1)


def vander(x, N=None, increasing=False):
    if x._data.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    if N is None:
        N = x._data.shape[0]
    if N < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = x._dtype if x._dtype._category >= 2 else D.int64     # integer powers are int64
    from .creation import ones
    out = ones((x._data.shape[0], N), dtype=dtype, device=x._device)
    if N > 1:
        out[:, 1:] = x.unsqueeze(1).expand(x._data.shape[0], N - 1).to(dtype).cumprod(1)
    return out if increasing else out.flip(1)


def unravel_index(indices, shape):
    if indices._dtype._category >= 2 or indices._dtype is D.bool_:
        raise TypeError(f"expected 'indices' to be integer dtype, but got "
                        f"torch.{indices._dtype.name}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got "
                         f"{tuple(shape)}")
    # torch wraps any index (floor modulo per dim, last dim first), without a bounds check
    rest = indices._data.astype(np.int64)
    coords = []
    for size in reversed(shape):
        coords.append(rest % size if size else rest * 0)
        rest = rest // size if size else rest * 0
    return tuple(_long(c) for c in reversed(coords))


# ----------------------------------------------------------------------------- integration
# torch's integrators multiply and divide by a Python number through the Scalar overloads of
# mul and div, whose nodes are MulBackward1 and DivBackward1


def _pair_sum(y, dim):
    """y[1:] + y[:-1] along dim."""
    n = y.shape[dim]
    return y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)


def _spacing(x, y, dim):
    """The spacings of sample points x along dim of y (x 1-D or shaped like y)."""
    if x._data.ndim == 1:
        d = x[1:] - x[:-1]
        shape = [1] * y._data.ndim
        shape[dim] = -1
        return d.view(shape)
    n = x.shape[dim]
    return x.narrow(dim, 1, n - 1) - x.narrow(dim, 0, n - 1)


def _as_float(y):
    return y if y._dtype._category >= 2 else y.to(D._default[0])


def trapezoid(y, x=None, *, dx=None, dim=-1):
    d = wrap_dim(dim, y._data.ndim)
    y = _as_float(y)
    if y.shape[d] == 0:
        return y.sum(d) * 0
    if isinstance(x, Tensor):
        return _div_scalar((_spacing(x, y, d) * _pair_sum(y, d)).sum(d), other=2.0)
    step = 1.0 if dx is None and x is None else (dx if dx is not None else x)
    return _mul_scalar(y.sum(d) - (y.select(d, 0) + y.select(d, -1)) * 0.5, other=step)


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    d = wrap_dim(dim, y._data.ndim)
    y = _as_float(y)
    if isinstance(x, Tensor):
        return _div_scalar((_spacing(x, y, d) * _pair_sum(y, d)).cumsum(d), other=2.0)
    step = 1.0 if dx is None and x is None else (dx if dx is not None else x)
    return (_pair_sum(y, d) * (step / 2.0)).cumsum(d)


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
        from .creation import linspace             # (torch's rounding of the edges)
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


# ----------------------------------------------------------------------------- renorm
@primitive("renorm", node="RenormBackward0", save=("self",))
def _renorm(xp, self, *, p, dim, maxnorm):
    return self * _renorm_factor(xp, self, p, dim, maxnorm)


def _renorm_factor(xp, a, p, dim, maxnorm):
    axes = tuple(d for d in range(a.ndim) if d != dim)
    mag = xp.abs(a)
    if p == math.inf:
        norm = mag.max(axis=axes, keepdims=True) if mag.size else mag.sum(axes, keepdims=True)
    else:
        norm = (mag ** p).sum(axis=axes, keepdims=True) ** (1.0 / p)
    scale = maxnorm / (norm + 1e-7)
    return xp.where(norm > maxnorm, scale, 1.0).astype(a.dtype, copy=False)


@_renorm.derivative
def _(ctx, grad):
    x, p, dim, maxnorm = ctx.self, ctx.p, ctx.dim, ctx.maxnorm
    axes = [d for d in range(x.dim()) if d != dim]
    norm = x.norm(p, axes, keepdim=True)
    over = norm > maxnorm
    factor = P.where(over, maxnorm / (norm + 1e-7), 1.0)
    # d factor / d norm, times d norm / d x (the p-norm's gradient)
    dfactor = P.where(over, -maxnorm / (norm + 1e-7) ** 2, 0.0)
    if p == math.inf:
        peak = (x.abs() == norm).to(x._dtype)
        dnorm = x.sign() * peak / peak.sum(axes, keepdim=True)
    else:
        dnorm = x.sign() * x.abs() ** (p - 1) / norm ** (p - 1)
        dnorm = P.where(norm == 0, 0.0, dnorm)
    return grad * factor + (grad * x).sum(axes, keepdim=True) * dfactor * dnorm


def _renorm_args(input, p, dim, maxnorm):
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {_num(maxnorm)}")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if input._data.ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got "
                           f"{input._data.ndim} dimensions")
    if input._dtype._category < 2:
        raise RuntimeError(f"renorm: expected a floating point or complex tensor as input. "
                           f"Got {scalar_type_name(input._dtype)}")
    return dict(p=float(p), dim=wrap_dim(dim, input._data.ndim), maxnorm=float(maxnorm))


def _num(v):
    return int(v) if float(v).is_integer() else v


def renorm(input, p, dim, maxnorm, *, out=None):
    return P._out(_renorm(input, **_renorm_args(input, p, dim, maxnorm)), out, "renorm")


def renorm_(self, p, dim, maxnorm):
    return _renorm.inplace(self, **_renorm_args(self, p, dim, maxnorm))


# ----------------------------------------------------------------------------- put
@primitive("put", node="PutBackward0")
def _put(xp, self, source, *, index, accumulate):
    out = self.copy()
    flat = out.reshape(-1)
    if accumulate:
        _backend.of(xp).scatter_add(flat, index, source.reshape(-1))
    else:
        flat[index] = source.reshape(-1)
    return out


@_put.derivative
def _(ctx, grad):
    index = _long(ctx.index)
    g_self = grad if ctx.accumulate else _put(grad, grad.new_zeros(index.shape),
                                              index=ctx.index, accumulate=False)
    g_source = grad.reshape(-1)[index].reshape(ctx.input_shape(1))
    return g_self, g_source


def _put_args(self, index, source):
    if index._dtype is not D.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got "
                           f"{scalar_type_name(index._dtype)}")
    if source._dtype is not self._dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {scalar_type_name(self._dtype)} and source.dtype = "
                           f"{scalar_type_name(source._dtype)}")
    if source.numel() != index.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.numel()}, index.numel() = "
                         f"{index.numel()}")
    n = self.numel()
    idx = index._data.reshape(-1)
    bad = (idx >= n) | (idx < -n)
    if bad.any():
        raise IndexError(f"out of range: tried to access index {int(idx[bad][0])} on a tensor "
                         f"of {n} elements.")
    return np.where(idx < 0, idx + n, idx)


def put(input, index, source, accumulate=False):
    return _put(input, source, index=_put_args(input, index, source), accumulate=accumulate)


def put_(self, index, source, accumulate=False):
    return _put.inplace(self, source, index=_put_args(self, index, source),
                        accumulate=accumulate)


# ----------------------------------------------------------------------------- masked_scatter
@primitive("masked_scatter", node="MaskedScatterBackward0")
def _masked_scatter(xp, self, source, *, mask):
    out = self.copy()
    out[mask] = source.reshape(-1)[:int(mask.sum())]
    return out


@_masked_scatter.derivative
def _(ctx, grad):
    mask = Tensor._make(ctx.mask, D.bool_, grad._device)
    g_self = grad.masked_fill(mask, 0)
    chosen = grad[mask]
    size = int(np.prod(ctx.input_shape(1)))
    from .creation import zeros
    from .joining import cat
    g_source = cat([chosen, zeros(size - chosen.numel(), dtype=grad._dtype)])
    return g_self, g_source.reshape(ctx.input_shape(1))


def _masked_scatter_args(self, mask, source, name):
    if mask._dtype is not D.bool_:
        raise RuntimeError(f"{name} only supports boolean masks, but got mask with dtype "
                           f"{scalar_type_name(mask._dtype)}")
    if source._dtype is not self._dtype:
        raise RuntimeError(f"{name}: expected self and source to have same dtypes but got "
                           f"{scalar_type_name(self._dtype)} and "
                           f"{scalar_type_name(source._dtype)}")
    m = np.broadcast_to(mask._data, self._data.shape)
    if int(m.sum()) > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return m


def masked_scatter(input, mask, source):
    shape = np.broadcast_shapes(input._data.shape, mask._data.shape)
    if tuple(input.shape) != shape:
        input = input.expand(shape)
    return _masked_scatter(input, source,
                           mask=_masked_scatter_args(input, mask, source, "masked_scatter_"))


def masked_scatter_(self, mask, source):
    return _masked_scatter.inplace(self, source,
                                   mask=_masked_scatter_args(self, mask, source,
                                                             "masked_scatter_"))


# ----------------------------------------------------------------------------- scatter_reduce
_REDUCES = ("sum", "prod", "mean", "amax", "amin")
_ALIASES = {"max": "amax", "min": "amin"}


def _reduction_identity(dtype, reduce):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind == "f":
        return -np.inf if reduce == "amax" else np.inf
    if dtype.kind == "b":
        return reduce == "amin"
    info = np.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


@primitive("scatter_reduce", node="ScatterReduceBackward0", save=("self", "src", "result"))
def _scatter_reduce(xp, self, src, *, dim, index, reduce, include_self):
    if not self.ndim:           # a scalar is reduced into as a one-element vector
        return _scatter_reduce.forward(
            xp, self.reshape(1), src.reshape(-1), dim=0, index=index.reshape(-1),
            reduce=reduce, include_self=include_self).reshape(())
    I._check_bounds(index, self.shape[dim], dim)
    reduce = _ALIASES.get(reduce, reduce)
    out = self.copy()
    where = I._full_indices(index, dim)
    values = src[tuple(slice(0, s) for s in index.shape)]
    if not include_self:
        out[where] = _reduction_identity(out.dtype, reduce)
    if reduce in ("sum", "mean"):
        _backend.of(xp).scatter_add(out, where, values)
    elif reduce == "prod":
        np.multiply.at(out, where, values)
    elif reduce == "amax":
        np.maximum.at(out, where, values)
    else:
        np.minimum.at(out, where, values)
    if reduce == "mean":
        count = xp.full(out.shape, 1 if include_self else 0, np.int64)
        _backend.of(xp).scatter_add(count, where, xp.ones(values.shape, np.int64))
        count = np.maximum(count, 1)
        out = out // count.astype(out.dtype) if out.dtype.kind in "iub" else \
            (out / count).astype(out.dtype)
    return out


@_scatter_reduce.derivative
def _(ctx, grad):
    dim, reduce, include_self = ctx.dim, ctx.reduce, ctx.include_self
    if reduce not in _REDUCES:
        raise RuntimeError(f"Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', "
                           f"'amin' but got {reduce}.")
    index = _long(ctx.index)
    self, src, result = ctx.self, ctx.src, ctx.result
    if reduce == "sum":
        g_self, g_src = grad, grad.gather(dim, index)
    elif reduce == "mean":
        n = (grad.new_ones(grad.shape) if include_self else grad.new_zeros(grad.shape))
        n = n.scatter_add(dim, index, grad.new_ones(index.shape))
        n = n.masked_fill(n == 0, 1)
        g_self, g_src = grad / n, grad.gather(dim, index) / n.gather(dim, index)
    elif reduce == "prod":
        g_self, g_src = _scatter_prod_grads(grad, self, src, result, dim, index, include_self)
    else:
        value = result.gather(dim, index)
        self_is_result = (self == result).to(grad._dtype)
        src_is_result = (_src_slice(src, index) == value).to(grad._dtype)
        n = self_is_result.scatter_add(dim, index, src_is_result)
        shared = grad / n
        g_self = self_is_result * shared
        g_src = src_is_result * shared.gather(dim, index)
    if not include_self:
        g_self = g_self.scatter(dim, index, 0.0)
    return g_self, I._pad_to(g_src, ctx.input_shape(1))


def _src_slice(src, index):
    """The part of src that index addresses (src may be larger than index)."""
    if tuple(src.shape) == tuple(index.shape):
        return src
    return src[tuple(slice(0, s) for s in index.shape)]


def _scatter_prod_grads(grad, self, src, result, dim, index, include_self):
    """The gradients of a product reduction, exact where one factor is zero."""
    src = _src_slice(src, index)
    args = dict(include_self=include_self)
    masked_self = self.masked_fill(self == 0, 1)
    masked_self_result = scatter_reduce(masked_self, dim, index, src, "prod", **args)
    g_self = grad * masked_self_result / masked_self
    src_zero = src == 0
    zeros_here = self.new_zeros(self.shape).scatter_add(dim, index, src_zero.to(self._dtype))
    single_zero = src_zero & (zeros_here.gather(dim, index) == 1)
    masked_src = src.masked_fill(single_zero, 1)
    masked_src_result = scatter_reduce(self, dim, index, masked_src, "prod", **args)
    g_src = P.where(single_zero, (grad * masked_src_result).gather(dim, index),
                    (grad * result).gather(dim, index) / src.masked_fill(src_zero, 1))
    return g_self, g_src


def _scatter_reduce_args(self, dim, index, src, reduce, include_self):
    # PyTorch's forward also takes "max" and "min" for amax and amin (its backward does not)
    if _ALIASES.get(reduce, reduce) not in _REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    idx = I._index_of(index, "scatter")
    if src._dtype is not self._dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if index._data.ndim != self._data.ndim and self._data.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as self "
                           "tensor")
    return dict(dim=wrap_dim(dim, self._data.ndim), index=idx, reduce=reduce,
                include_self=include_self)


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True, out=None):
    result = _scatter_reduce(input, src, **_scatter_reduce_args(input, dim, index, src, reduce,
                                                                include_self))
    return P._out(result, out, "scatter_reduce")


def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    return _scatter_reduce.inplace(self, src, **_scatter_reduce_args(self, dim, index, src,
                                                                     reduce, include_self))


# ----------------------------------------------------------------------------- *_scatter
def _scatter_into_view(name, node, kind):
    """x.<kind>_scatter(src, ...): a copy of x whose <kind> view holds src (a primitive)."""
    op = primitive(name, node=node, promote=COMMON)(
        lambda xp, self, src, *, args: _write_view(xp, self, src, kind, args))

    @op.derivative
    def _(ctx, grad):
        # self's gradient is grad with the view zeroed; src's is the view of grad
        g_self = op(grad, grad.new_zeros(ctx.input_shape(1)), args=ctx.args)
        return g_self, _view_of(grad, kind, ctx.args)
    return op


def _write_view(xp, self, src, kind, args):
    out = self.copy()
    I._array_view(xp, out, kind, args)[...] = src
    return out


def _view_of(t, kind, a):
    if kind == "select":
        return t.select(a["dim"], a["index"])
    if kind == "slice":
        return V._slice(t, dim=a["dim"], start=a["start"], stop=a["stop"], step=a["step"])
    return t.diagonal(a["offset"], a["dim1"], a["dim2"])


_select_scatter = _scatter_into_view("select_scatter", "SelectScatterBackward0", "select")
_slice_scatter = _scatter_into_view("slice_scatter", "SliceScatterBackward0", "slice")
_diagonal_scatter = _scatter_into_view("diagonal_scatter", "DiagonalScatterBackward0", "diagonal")


def _check_scatter_src(view, src):
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(view.shape)}")


def _same_dtype(input, src):
    return src if src._dtype is input._dtype else src.to(input._dtype)


def select_scatter(input, src, dim, index):
    view = input.select(dim, index)             # (torch's checks and index wrapping)
    d = wrap_dim(dim, input._data.ndim)
    _check_scatter_src(view, src)
    i = index + input.shape[d] if index < 0 else index
    return _select_scatter(input, _same_dtype(input, src), args={"dim": d, "index": i})


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    d = wrap_dim(dim, input._data.ndim)
    start, stop, step = slice(start, end, step).indices(input.shape[d])
    stop = max(stop, start)
    view = V._slice(input.detach(), dim=d, start=start, stop=stop, step=step)
    _check_scatter_src(view, src)
    return _slice_scatter(input, _same_dtype(input, src),
                          args={"dim": d, "start": start, "stop": stop, "step": step})


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    view = input.detach().diagonal(offset, dim1, dim2)
    _check_scatter_src(view, src)
    n = input._data.ndim
    return _diagonal_scatter(input, _same_dtype(input, src), args={
        "offset": offset, "dim1": wrap_dim(dim1, n), "dim2": wrap_dim(dim2, n)})


# ----------------------------------------------------------------------------- mvlgamma
@primitive("mvlgamma", node="MvlgammaBackward0", save=("self",))
def _mvlgamma(xp, self, *, p):
    shifted = self[..., None] - xp.arange(p, dtype=self.dtype) / 2
    log_pi = p * (p - 1) / 4 * math.log(math.pi)
    return (_sp.lgamma(xp, shifted).sum(-1) + log_pi).astype(self.dtype, copy=False)


@_mvlgamma.derivative
def _(ctx, grad):
    from .pointwise_extra import digamma
    from .creation import arange
    p = ctx.p
    shifted = ctx.self.unsqueeze(-1) - arange(p, dtype=ctx.self._dtype) / 2
    return grad * digamma(shifted).sum(-1)


def _mvlgamma_check(input, p):
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    # (torch 2.13 no longer rejects elements <= (p-1)/2: they give lgamma's values, or inf)
    return input if input._dtype._category >= 2 else input.to(D._default[0])


def multigammaln(name, input, p):
    """mvlgamma under the name its errors carry (torch.mvlgamma, torch.special.multigammaln)."""
    p = int_arg(name, "p", p, 2)
    return _mvlgamma(_mvlgamma_check(input, p), p=p)


def mvlgamma(input, p):
    return multigammaln("mvlgamma", input, p)


def mvlgamma_method(self, p):
    """Tensor.mvlgamma: as a method, p is the first argument (PyTorch's errors count so)."""
    return mvlgamma(self, int_arg("mvlgamma", "p", p, 1))


def mvlgamma_(self, p):
    p = int_arg("mvlgamma_", "p", p, 1)       # a method only: p is its first argument
    _mvlgamma_check(self, p)
    return _mvlgamma.inplace(self, p=p)


# ----------------------------------------------------------------------------- windows
def _window(name, weights):
    """A window function: weights(n) gives the symmetric window of n points (n >= 2) as float64;
    a periodic window is the symmetric one of n + 1 points without its last."""
    def window(window_length, periodic=True, *args, dtype=None, layout=None, device=None,
               requires_grad=False, pin_memory=False, **params):
        dtype = D._default[0] if dtype is None else dtype
        if dtype._category != 2:
            raise RuntimeError(f"{name} expects floating point dtypes, got: "
                               f"{_dtype_word(dtype)}")
        if window_length < 0:
            raise RuntimeError(f"{name} requires non-negative window_length, got "
                               f"window_length={window_length}")
        if window_length <= 1:
            values = np.ones(window_length)
        else:
            n = window_length + 1 if periodic else window_length
            values = weights(n, *args, **params)[:window_length]
        from .creation import tensor
        return tensor(values.astype(dtype.np), dtype=dtype, device=device,
                      requires_grad=requires_grad)
    window.__name__ = name
    return window


def _dtype_word(dtype):
    return (f"TensorOptions(dtype={P.CPP_NAMES[dtype.name]}, device=cpu, layout=Strided "
            f"(default), requires_grad=false (default), pinned_memory=false, "
            f"memory_format=(nullopt))")


def _cosine_sum(*coefficients):
    def weights(n):
        k = np.arange(n) * (2 * math.pi / (n - 1))
        return sum(c * np.cos(i * k) * (-1) ** i for i, c in enumerate(coefficients))
    return weights


def _hamming(n, alpha=0.54, beta=0.46):
    return alpha - beta * np.cos(np.arange(n) * (2 * math.pi / (n - 1)))


def _bartlett(n):
    return 1 - np.abs(np.arange(n) * (2.0 / (n - 1)) - 1)


def _kaiser(n, beta=12.0):
    ratio = np.arange(n) * (2.0 / (n - 1)) - 1
    return np.i0(beta * np.sqrt(np.clip(1 - ratio ** 2, 0, None))) / np.i0(beta)


hann_window = _window("hann_window", _cosine_sum(0.5, 0.5))
hamming_window = _window("hamming_window", _hamming)
bartlett_window = _window("bartlett_window", _bartlett)
blackman_window = _window("blackman_window", _cosine_sum(0.42, 0.5, 0.08))
kaiser_window = _window("kaiser_window", _kaiser)


# ----------------------------------------------------------------------------- global switches
_switches = {"deterministic": False, "deterministic_warn_only": False, "warn_always": False}


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Recorded as in torch; ember's NumPy kernels are deterministic anyway."""
    if not isinstance(mode, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be "
                        f"bool, not {type(mode).__name__}")
    if not isinstance(warn_only, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'warn_only' must be bool, "
                        f"not {type(warn_only).__name__}")
    _switches["deterministic"] = mode
    _switches["deterministic_warn_only"] = warn_only if mode else False


def are_deterministic_algorithms_enabled():
    return _switches["deterministic"]


def is_deterministic_algorithms_warn_only_enabled():
    return _switches["deterministic_warn_only"]


def set_warn_always(b):
    if not isinstance(b, bool):
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    _switches["warn_always"] = b


def is_warn_always_enabled():
    return _switches["warn_always"]


def set_default_tensor_type(t):
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives. "
                  "(Triggered internally at /__w/pytorch/pytorch/torch/csrc/tensor/"
                  "python_tensor.cpp:434.)", UserWarning, stacklevel=2)
    from .creation import legacy_type_dtype
    name = t if isinstance(t, str) else "torch." + t.__name__
    dtype = legacy_type_dtype(name)
    if dtype._category != 2:
        raise TypeError("only floating-point types are supported as the default type")
    D.set_default_dtype(dtype)


def typename(obj):
    if isinstance(obj, Tensor):
        return obj.type()
    cls = obj if isinstance(obj, type) else type(obj)
    if cls.__module__ in ("builtins", None):
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def is_nonzero(input):
    return input.is_nonzero()


def is_same_size(input, other):
    return input.is_same_size(other)


def is_signed(input):
    return input.is_signed()


_READONLY_WARNING = (
    "The given buffer is not writable, and PyTorch does not support non-writable tensors. "
    "This means you can write to the underlying (supposedly non-writable) buffer using the "
    "tensor. You may want to copy the buffer to protect its data or make it writable before "
    "converting it to a tensor. This type of warning will be suppressed for the rest of this "
    "program. (Triggered internally at /__w/pytorch/pytorch/torch/csrc/utils/"
    "tensor_new.cpp:1556.)")
_warned_readonly = []


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A tensor sharing the memory of an object with the buffer protocol."""
    view = memoryview(buffer)
    length = view.nbytes
    size = dtype.itemsize
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % size:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({size})")
        count = (length - offset) // size
    elif offset + count * size > length:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    if view.readonly and (_switches["warn_always"] or not _warned_readonly):
        if not _switches["warn_always"]:        # torch's once only counts once-mode warnings
            _warned_readonly.append(True)
        warnings.warn(_READONLY_WARNING, UserWarning, stacklevel=2)
    data = np.frombuffer(view.cast("B"), dtype=dtype.np, count=count, offset=offset)
    if view.readonly:
        data = data.view()
        data.flags.writeable = False
    out = Tensor._make(data, dtype)
    if requires_grad:
        out.requires_grad_(True)
    return out


# ----------------------------------------------------------------------------- unsafe splits
def _unsafe(name, node):
    """unsafe_split(_with_sizes): split's pieces without view tracking (PyTorch's own nodes)."""
    op = primitive(name, node=node, n_outputs=None)(
        lambda xp, self, *, dim, sizes, n_outputs: V._split_pieces(xp, self, dim, sizes))
    op.derivative(V._split_derivative)
    return op


_unsafe_split = _unsafe("unsafe_split", "UnsafeSplitBackward0")
_unsafe_split_with_sizes = _unsafe("unsafe_split_with_sizes", "UnsafeSplitWithSizesBackward0")


def _split_sizes(pieces, dim):
    return tuple(p._data.shape[dim] for p in pieces)


def unsafe_split(input, split_size, dim=0):
    d = wrap_dim(dim, max(input._data.ndim, 1))
    op = _unsafe_split_with_sizes if isinstance(split_size, (list, tuple)) else _unsafe_split
    sizes = _split_sizes(V.split(input.detach(), split_size, dim), d)   # (split's checks)
    return op(input, dim=d, sizes=sizes, n_outputs=len(sizes))


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    return unsafe_split(input, list(split_sizes), dim)


def unsafe_chunk(input, chunks, dim=0):
    d = wrap_dim(dim, max(input._data.ndim, 1))
    sizes = _split_sizes(V.chunk(input.detach(), chunks, dim), d)
    return _unsafe_split(input, dim=d, sizes=sizes, n_outputs=len(sizes))


# ----------------------------------------------------------------------------- small methods
def positive(input):
    return input.positive()


def ravel(input):
    return input.ravel()


def split_with_sizes(input, split_sizes, dim=0):
    return input.split_with_sizes(split_sizes, dim)


def is_conj(input):
    return False        # ember's conj() materialises: no tensor carries a lazy conj bit


def is_neg(input):
    return False        # ... nor a lazy negation bit


def resolve_conj(input):
    return input


def resolve_neg(input):
    return input


def is_inference(input):
    return _is_inference_tensor(input)      # (made in inference mode, or a view of one)


def apply_(self, callable):
    """Apply a Python callable to each element, in place (CPU only, as torch)."""
    if self._requires_grad:
        raise RuntimeError("Can't call apply_() on Variable that requires grad. Use "
                           "var.detach().apply_() instead.")
    data = self._data
    data[...] = np.vectorize(callable, otypes=[data.dtype])(data)
    return self


def map_(self, other, callable):
    """self[i] = callable(self[i], other[i]) with other broadcast to self, in place."""
    if self._requires_grad or other._requires_grad:
        raise RuntimeError("Can't call map_() on Variable that requires grad. Use "
                           "var.detach().map_() instead.")
    data = self._data
    data[...] = np.vectorize(callable, otypes=[data.dtype])(
        data, np.broadcast_to(other._data, data.shape))
    return self


def is_pinned(self, device=None):
    return False


def pin_memory(self, device=None):
    raise RuntimeError("Cannot access accelerator device when none is available.")


def is_shared(self):
    return False


def share_memory_(self):
    return self         # one process: its memory is already where every user can see it


def set_(self, source=None, storage_offset=0, size=None, stride=None):
    """Make self use source's memory (all of it, or a strided window of it), in place."""
    from .registry import check_inplace_allowed
    from ..autograd import grad_mode
    if grad_mode.state.enabled and self._requires_grad:
        check_inplace_allowed(self)
        if self._grad_fn is not None:
            raise RuntimeError("ember: set_() on a tensor with autograd history is not "
                               "supported")
    if source is None:
        data = np.empty(0, self._dtype.np)
    else:
        if source._dtype is not self._dtype:
            raise RuntimeError(f"Could not set tensor of type "
                               f"{P.CPP_NAMES[source._dtype.name]} to a tensor of type "
                               f"{P.CPP_NAMES[self._dtype.name]}")
        data = source._data
        if size is not None:
            if stride is None:
                stride = V.contiguous_strides(tuple(size))
            data = V.as_strided(source.detach(), tuple(size), tuple(stride),
                                storage_offset)._data
    self._data = data
    self._version_counter.bump()
    return self


def as_subclass(self, cls):
    """self's data and history as an instance of a Tensor subclass (an alias, as torch)."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from "
                        "Tensor is not possible. Make sure your class inherits from Tensor.")
    from .._tensor import _copy_into_subclass
    return _copy_into_subclass(object.__new__(cls), V._alias(self))


def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None,
                      requires_grad=False, pin_memory=False):
    from .creation import empty_strided
    return empty_strided(size, stride, dtype=dtype or self._dtype,
                         device=device or self._device, requires_grad=requires_grad)


def fill(input, value):
    from .creation import fill_
    return fill_(input.clone(), value)


__all__ = ["gcd", "gcd_", "lcm", "lcm_", "frexp", "i0", "i0_", "complex", "polar", "vdot",
           "conj_physical", "conj_physical_", "isreal", "combinations", "vander",
           "unravel_index", "trapezoid", "trapz", "cumulative_trapezoid", "histogram", "renorm",
           "put", "masked_scatter", "scatter_reduce", "select_scatter", "slice_scatter",
           "diagonal_scatter", "mvlgamma", "hann_window", "hamming_window", "bartlett_window",
           "blackman_window", "kaiser_window", "use_deterministic_algorithms",
           "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_warn_always",
           "is_warn_always_enabled", "set_default_tensor_type", "typename", "is_nonzero",
           "is_same_size", "is_signed", "frombuffer", "fill", "unsafe_split",
           "unsafe_split_with_sizes", "unsafe_chunk", "positive", "ravel", "split_with_sizes",
           "is_conj", "is_neg", "resolve_conj", "resolve_neg", "is_inference", "gcd_", "lcm_",
           "i0_"]
