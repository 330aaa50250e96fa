"""Reductions over dims (int, tuple, negative; keepdim), scans, and softmax."""
from collections import namedtuple

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
from ._utils import wrap_dim, wrap_dims
from .registry import primitive, FLOAT

values_indices = {}


def _named(name):
    if name not in values_indices:
        cls = namedtuple(name, ["values", "indices"])
        cls.__module__ = "ember.return_types"
        cls.__repr__ = lambda self, n=name: (f"ember.return_types.{n}(\nvalues={self.values!r},"
                                             f"\nindices={self.indices!r})")
        values_indices[name] = cls
    return values_indices[name]


def _restore_dims(grad, shape, dims, keepdim):
    """Re-insert reduced dims as size-1 so that `grad` broadcasts against the input."""
    if keepdim or not dims:
        return grad
    out_shape = list(grad.shape)
    for d in dims:
        out_shape.insert(d, 1)
    return grad.reshape(out_shape)


def _sum_dtype(dtype):
    return D.int64 if dtype._category <= 1 else dtype


# ----------------------------------------------------------------------------- sum / mean
@primitive("sum", node="SumBackward0")
def _sum_all(xp, self, *, dtype):
    return xp.sum(self, dtype=dtype.np)


@_sum_all.derivative
def _(ctx, grad):
    return grad.expand(ctx.input_shape())


@primitive("sum.dim", node="SumBackward1")
def _sum_dim(xp, self, *, dims, keepdim, dtype):
    return xp.sum(self, axis=dims, keepdims=keepdim, dtype=dtype.np)


@_sum_dim.derivative
def _(ctx, grad):
    return _restore_dims(grad, ctx.input_shape(), ctx.dims, ctx.keepdim).expand(
        ctx.input_shape())


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None, axis=None):
    if axis is not None:
        dim = axis
    dtype = dtype or _sum_dtype(input._dtype)
    if dim is None:
        result = _sum_all(input, dtype=dtype)
    else:
        result = _sum_dim(input, dims=wrap_dims(dim, input._data.ndim), keepdim=keepdim,
                          dtype=dtype)
    from .pointwise import _out
    return _out(result, out)


def sum_to_size(t, *shape):
    """Sum a broadcast gradient down to `shape` (the one place unbroadcasting happens)."""
    shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) \
        else tuple(shape)
    have = t._data.shape
    if have == shape:
        return t
    lead = len(have) - len(shape)
    dims = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape)
                                      if s == 1 and have[i + lead] != 1)
    out = _sum_dim(t, dims=dims, keepdim=True, dtype=t._dtype) if dims else t
    return out.reshape(shape) if out.shape != shape else out


@primitive("mean", node="MeanBackward0")
def _mean_all(xp, self, *, dtype):
    return xp.mean(self, dtype=dtype.np).astype(dtype.np)


@_mean_all.derivative
def _(ctx, grad):
    n = int(np.prod(ctx.input_shape()))
    return (grad / n).expand(ctx.input_shape())


@primitive("mean.dim", node="MeanBackward1")
def _mean_dim(xp, self, *, dims, keepdim, dtype):
    return xp.mean(self, axis=dims, keepdims=keepdim, dtype=dtype.np).astype(dtype.np)


@_mean_dim.derivative
def _(ctx, grad):
    shape = ctx.input_shape()
    n = int(np.prod([shape[d] for d in ctx.dims]))
    return (_restore_dims(grad, shape, ctx.dims, ctx.keepdim) / n).expand(shape)


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None, axis=None):
    if axis is not None:
        dim = axis
    dtype = dtype or input._dtype
    if dtype._category < 2:
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {_tname(dtype)}")
    if dim is None:
        result = _mean_all(input, dtype=dtype)
    else:
        result = _mean_dim(input, dims=wrap_dims(dim, input._data.ndim), keepdim=keepdim,
                           dtype=dtype)
    from .pointwise import _out
    return _out(result, out)


def _tname(dtype):
    from .._printing import scalar_type_name
    return scalar_type_name(dtype)


# ----------------------------------------------------------------------------- prod
@primitive("prod", node="ProdBackward0", save=("self", "result"))
def _prod_all(xp, self, *, dtype):
    return xp.prod(self, dtype=dtype.np)


@_prod_all.derivative
def _(ctx, grad):
    return _prod_grad(grad, ctx.self, ctx.result, None)


@primitive("prod.dim", node="ProdBackward1", save=("self", "result"))
def _prod_dim(xp, self, *, dim, keepdim, dtype):
    return xp.prod(self, axis=dim, keepdims=keepdim, dtype=dtype.np)


@_prod_dim.derivative
def _(ctx, grad):
    return _prod_grad(grad, ctx.self, ctx.result, ctx.dim, ctx.keepdim)


def _prod_grad(grad, x, result, dim, keepdim=False):
    """d prod / dx_i = prod of the others; computed without dividing by zeros."""
    from .pointwise import where
    if dim is None:
        flat = x.reshape(-1)
        others = _exclusive_prod(flat, 0)
        return (grad * others).reshape(x.shape)
    if not keepdim:
        grad = grad.unsqueeze(dim)
    return grad * _exclusive_prod(x, dim)


def _exclusive_prod(x, dim):
    # product of all elements but one along dim: prefix products times suffix products
    ones_shape = list(x.shape)
    ones_shape[dim] = 1
    from .creation import ones
    from .joining import cat
    one = ones(ones_shape, dtype=x._dtype)
    n = x.shape[dim]
    prefix = cat([one, x.narrow(dim, 0, n - 1).cumprod(dim)], dim) if n > 1 else one
    suffix = cat([x.flip(dim).narrow(dim, 0, n - 1).cumprod(dim).flip(dim), one], dim) \
        if n > 1 else one
    return prefix * suffix


def prod(input, dim=None, keepdim=False, *, dtype=None):
    dtype = dtype or _sum_dtype(input._dtype)
    if dim is None:
        return _prod_all(input, dtype=dtype)
    return _prod_dim(input, dim=wrap_dim(dim, input._data.ndim), keepdim=keepdim, dtype=dtype)


# ----------------------------------------------------------------------------- max / min
def _extreme_all(name, node, fn):
    op = primitive(name, node=node, save=("self", "result"))(
        lambda xp, self: _nonempty(fn, self, name))

    @op.derivative
    def _(ctx, grad):
        # ties share the gradient evenly, as PyTorch does for max()/min() without dim
        mask = (ctx.self == ctx.result)
        return mask * (grad / mask.sum())
    return op


def _nonempty(fn, x, name, **kw):
    if x.size == 0:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() "
                           f"== 0. Specify the reduction dim with the 'dim' argument.")
    return fn(x, **kw)


_max_all = _extreme_all("max", "MaxBackward1", np.max)
_min_all = _extreme_all("min", "MinBackward1", np.min)


def _extreme_dim(name, node, arg):
    op = primitive(name, node=node, n_outputs=2, differentiable_outputs=1,
                   save=("result1",))(
        lambda xp, self, *, dim, keepdim: _dim_extreme(xp, arg, self, dim, keepdim, name))

    @op.derivative
    def _(ctx, grad):
        from .indexing import index_fill_grad
        return index_fill_grad(grad, ctx.result1, ctx.input_shape(), ctx.dim, ctx.keepdim)
    return op


def _dim_extreme(xp, arg, x, dim, keepdim, name):
    if x.shape and x.shape[dim] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")
    if x.ndim == 0:
        return x.copy(), xp.zeros((), xp.int64)
    idx = arg(x, axis=dim, keepdims=True)
    if x.dtype.kind == "f":
        # NaN propagates: the first NaN wins, as in PyTorch
        nan = xp.isnan(x)
        has_nan = nan.any(axis=dim, keepdims=True)
        idx = xp.where(has_nan, xp.argmax(nan, axis=dim, keepdims=True), idx)
    values = xp.take_along_axis(x, idx, axis=dim)
    if not keepdim:
        values, idx = values.squeeze(dim), idx.squeeze(dim)
    return values, idx.astype(xp.int64)


_max_dim = _extreme_dim("max.dim", "MaxBackward0", np.argmax)
_min_dim = _extreme_dim("min.dim", "MinBackward0", np.argmin)


def max(input, dim=None, keepdim=False, *, out=None):
    if isinstance(dim, Tensor):
        from .pointwise import maximum
        return maximum(input, dim)
    if dim is None:
        return _max_all(input)
    v, i = _max_dim(input, dim=wrap_dim(dim, input._data.ndim), keepdim=keepdim)
    return _named("max")(v, i)


def min(input, dim=None, keepdim=False, *, out=None):
    if isinstance(dim, Tensor):
        from .pointwise import minimum
        return minimum(input, dim)
    if dim is None:
        return _min_all(input)
    v, i = _min_dim(input, dim=wrap_dim(dim, input._data.ndim), keepdim=keepdim)
    return _named("min")(v, i)


def _amax_like(name, node, fn):
    op = primitive(name, node=node, save=("self", "result"))(
        lambda xp, self, *, dims, keepdim: _nonempty(fn, self, name, axis=dims,
                                                     keepdims=keepdim))

    @op.derivative
    def _(ctx, grad):
        shape = ctx.input_shape()
        res = _restore_dims(ctx.result, shape, ctx.dims, ctx.keepdim)
        g = _restore_dims(grad, shape, ctx.dims, ctx.keepdim)
        mask = (ctx.self == res)
        count = mask.sum(dim=ctx.dims, keepdim=True)
        return mask * (g / count)

    def public(input, dim=(), keepdim=False, *, out=None):
        dims = wrap_dims(dim if dim != () else None, input._data.ndim)
        return op(input, dims=dims, keepdim=keepdim)
    return public


amax = _amax_like("amax", "AmaxBackward0", np.max)
amin = _amax_like("amin", "AminBackward0", np.min)


def _arg(name, fn):
    op = primitive(name, differentiable=False)(
        lambda xp, self, *, dim, keepdim: _argfn(xp, fn, self, dim, keepdim, name))

    def public(input, dim=None, keepdim=False):
        if dim is None:
            if input._data.size == 0:
                raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                                   f"input.numel() == 0.")
            return op(input, dim=None, keepdim=keepdim)
        return op(input, dim=wrap_dim(dim, input._data.ndim), keepdim=keepdim)
    return public


def _argfn(xp, fn, x, dim, keepdim, name):
    if dim is None:
        flat = x.reshape(-1)
        if flat.dtype.kind == "f" and xp.isnan(flat).any():
            r = xp.argmax(xp.isnan(flat))
        else:
            r = fn(flat)
        r = xp.asarray(r, dtype=xp.int64)
        return r.reshape((1,) * x.ndim) if keepdim else r
    return _dim_extreme(xp, fn, x, dim, keepdim, name)[1]


argmax = _arg("argmax", np.argmax)
argmin = _arg("argmin", np.argmin)


# ----------------------------------------------------------------------------- var / std
@primitive("var", node="VarBackward0", save=("self",))
def _var(xp, self, *, dims, correction, keepdim):
    return xp.var(self, axis=dims, ddof=correction, keepdims=keepdim).astype(self.dtype)


@_var.derivative
def _(ctx, grad):
    x = ctx.self
    shape = ctx.input_shape()
    dims = ctx.dims if ctx.dims is not None else tuple(range(len(shape)))
    n = int(np.prod([shape[d] for d in dims]))
    g = _restore_dims(grad, shape, dims, ctx.keepdim or ctx.dims is None)
    centered = x - x.mean(dim=dims, keepdim=True)
    return g * centered * (2.0 / (n - ctx.correction))


@primitive("std", node="StdBackward0", save=("self", "result"))
def _std(xp, self, *, dims, correction, keepdim):
    return xp.std(self, axis=dims, ddof=correction, keepdims=keepdim).astype(self.dtype)


@_std.derivative
def _(ctx, grad):
    x = ctx.self
    shape = ctx.input_shape()
    dims = ctx.dims if ctx.dims is not None else tuple(range(len(shape)))
    n = int(np.prod([shape[d] for d in dims]))
    keep = ctx.keepdim or ctx.dims is None
    g = _restore_dims(grad, shape, dims, keep)
    res = _restore_dims(ctx.result, shape, dims, keep)
    centered = x - x.mean(dim=dims, keepdim=True)
    return g * centered / (res * (n - ctx.correction))


def _var_args(input, dim, unbiased, correction, keepdim):
    if isinstance(dim, bool):           # var(unbiased) legacy positional form
        unbiased, dim = dim, None
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    if input._dtype._category < 2:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dims = wrap_dims(dim, input._data.ndim) if dim is not None else None
    return dims, correction, keepdim


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    dims, corr, keepdim = _var_args(input, dim, unbiased, correction, keepdim)
    return _warn_dof(_var(input, dims=dims, correction=corr, keepdim=keepdim), input, dims, corr)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    dims, corr, keepdim = _var_args(input, dim, unbiased, correction, keepdim)
    return _warn_dof(_std(input, dims=dims, correction=corr, keepdim=keepdim), input, dims, corr)


def _warn_dof(result, input, dims, correction):
    n = input._data.size if dims is None else int(np.prod([input.shape[d] for d in dims]))
    if n - correction <= 0:
        import warnings
        warnings.warn("std(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=3)
    return result


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return var(input, dim, unbiased, keepdim, correction=correction), \
        mean(input, dim, keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return std(input, dim, unbiased, keepdim, correction=correction), \
        mean(input, dim, keepdim)


# ----------------------------------------------------------------------------- norms
@primitive("linalg_vector_norm", node="LinalgVectorNormBackward0", save=("self", "result"))
def _vector_norm(xp, self, *, ord, dims, keepdim):
    a = xp.abs(self)
    if ord == float("inf"):
        r = xp.max(a, axis=dims, keepdims=keepdim)
    elif ord == float("-inf"):
        r = xp.min(a, axis=dims, keepdims=keepdim)
    elif ord == 0:
        r = xp.sum(a != 0, axis=dims, keepdims=keepdim).astype(a.dtype)
    elif ord == 1:
        r = xp.sum(a, axis=dims, keepdims=keepdim)
    elif ord == 2:
        r = xp.sqrt(xp.sum(a * a, axis=dims, keepdims=keepdim))
    else:
        r = xp.power(xp.sum(xp.power(a, ord), axis=dims, keepdims=keepdim), 1.0 / ord)
    return xp.asarray(r).astype(a.dtype if a.dtype.kind == "f" else self.real.dtype)


@_vector_norm.derivative
def _(ctx, grad):
    from .pointwise import where
    x, p = ctx.self, ctx.ord
    shape = ctx.input_shape()
    dims = ctx.dims if ctx.dims is not None else tuple(range(len(shape)))
    keep = ctx.keepdim or ctx.dims is None
    g = _restore_dims(grad, shape, dims, keep)
    norm = _restore_dims(ctx.result, shape, dims, keep)
    if p == 0:
        return x * 0
    if p == 1:
        return g * x.sgn()
    if p == 2:
        return where(norm == 0, x * 0, g * x / norm)
    if p in (float("inf"), float("-inf")):
        mask = (x.abs() == norm)
        return g * x.sgn() * mask / mask.sum(dim=dims, keepdim=True)
    scale = x.abs().pow(p - 2) * x / norm.pow(p - 1)
    return where(norm == 0, x * 0, g * scale)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    if x._dtype._category < 2:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor "
                           f"as input. Got {_tname(x._dtype)}")
    dims = wrap_dims(dim, x._data.ndim) if dim is not None else None
    return _vector_norm(x, ord=float(ord), dims=dims, keepdim=keepdim)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None, out=None):
    if p == "fro" or p is None:
        p = 2
    if p == "nuc":
        raise NotImplementedError("nuclear norm is not implemented in ember")
    return vector_norm(input, p, dim, keepdim)


# ----------------------------------------------------------------------------- logsumexp, softmax
@primitive("logsumexp", node="LogsumexpBackward0", save=("self", "result"))
def _logsumexp(xp, self, *, dims, keepdim):
    m = xp.max(self, axis=dims, keepdims=True) if self.size else xp.zeros((), self.dtype)
    m = xp.where(xp.isfinite(m), m, 0)
    s = xp.log(xp.sum(xp.exp(self - m), axis=dims, keepdims=True)) + m
    return s if keepdim else xp.squeeze(s, dims)


@_logsumexp.derivative
def _(ctx, grad):
    shape = ctx.input_shape()
    g = _restore_dims(grad, shape, ctx.dims, ctx.keepdim)
    r = _restore_dims(ctx.result, shape, ctx.dims, ctx.keepdim)
    return g * (ctx.self - r).exp()


def logsumexp(input, dim, keepdim=False, *, out=None):
    if input._dtype._category < 2:
        input = input.to(D.get_default_dtype())
    return _logsumexp(input, dims=wrap_dims(dim, input._data.ndim), keepdim=keepdim)


@primitive("softmax", node="SoftmaxBackward0", save=("result",))
def _softmax(xp, self, *, dim):
    e = xp.exp(self - xp.max(self, axis=dim, keepdims=True))
    return e / xp.sum(e, axis=dim, keepdims=True)


@_softmax.derivative
def _(ctx, grad):
    y = ctx.result
    return y * (grad - (grad * y).sum(ctx.dim, keepdim=True))


@primitive("log_softmax", node="LogSoftmaxBackward0", save=("result",))
def _log_softmax(xp, self, *, dim):
    shifted = self - xp.max(self, axis=dim, keepdims=True)
    return shifted - xp.log(xp.sum(xp.exp(shifted), axis=dim, keepdims=True))


@_log_softmax.derivative
def _(ctx, grad):
    return grad - ctx.result.exp() * grad.sum(ctx.dim, keepdim=True)


def _softmax_input(input, dim, dtype):
    if dtype is not None:
        input = input.to(dtype)
    elif input._dtype._category < 2:
        raise RuntimeError(f'"softmax_lastdim_kernel_impl" not implemented for '
                           f"'{_tname(input._dtype)}'")
    if dim is None:
        import warnings
        warnings.warn("Implicit dimension choice for softmax has been deprecated. Change the "
                      "call to include dim=X as an argument.", UserWarning, stacklevel=3)
        n = input._data.ndim
        dim = 0 if n in (0, 1, 3) else 1
    return input, wrap_dim(dim, input._data.ndim)


def softmax(input, dim=None, dtype=None, *, _stacklevel=3):
    input, dim = _softmax_input(input, dim, dtype)
    return _softmax(input, dim=dim)


def log_softmax(input, dim=None, dtype=None, *, _stacklevel=3):
    input, dim = _softmax_input(input, dim, dtype)
    return _log_softmax(input, dim=dim)


# ----------------------------------------------------------------------------- all / any
_all = primitive("all", differentiable=False)(
    lambda xp, self, *, dims, keepdim: xp.all(self, axis=dims, keepdims=keepdim))
_any = primitive("any", differentiable=False)(
    lambda xp, self, *, dims, keepdim: xp.any(self, axis=dims, keepdims=keepdim))


def all(input, dim=None, keepdim=False, *, out=None):
    dims = wrap_dims(dim, input._data.ndim) if dim is not None else None
    r = _all(input, dims=dims, keepdim=keepdim)
    return r if input._dtype is not D.uint8 else r.to(D.uint8)


def any(input, dim=None, keepdim=False, *, out=None):
    dims = wrap_dims(dim, input._data.ndim) if dim is not None else None
    r = _any(input, dims=dims, keepdim=keepdim)
    return r if input._dtype is not D.uint8 else r.to(D.uint8)


def count_nonzero(input, dim=None):
    dims = wrap_dims(dim, input._data.ndim) if dim is not None else None
    return Tensor._make(np.asarray(np.count_nonzero(input._data, axis=dims), dtype=np.int64),
                        D.int64, input._device)


# ----------------------------------------------------------------------------- scans
@primitive("cumsum", node="CumsumBackward0")
def _cumsum(xp, self, *, dim, dtype):
    return xp.cumsum(self, axis=dim, dtype=dtype.np) if self.ndim else self.astype(dtype.np)


@_cumsum.derivative
def _(ctx, grad):
    if grad._data.ndim == 0:
        return grad
    return grad.flip(ctx.dim).cumsum(ctx.dim).flip(ctx.dim)


def cumsum(input, dim, *, dtype=None, out=None):
    return _cumsum(input, dim=wrap_dim(dim, input._data.ndim),
                   dtype=dtype or _sum_dtype(input._dtype))


@primitive("cumprod", node="CumprodBackward0", save=("self", "result"))
def _cumprod(xp, self, *, dim, dtype):
    return xp.cumprod(self, axis=dim, dtype=dtype.np) if self.ndim else self.astype(dtype.np)


@_cumprod.derivative
def _(ctx, grad):
    # d/dx_k of sum_i g_i prod_{j<=i} x_j, written without dividing by x (zeros are fine):
    # grad_k = sum_{i>=k} g_i * prod_{j<=i, j!=k} x_j
    x, dim = ctx.self, ctx.dim
    if x._data.ndim == 0:
        return grad
    n = x.shape[dim]
    from .creation import ones
    from .joining import stack
    parts = []
    for k in range(n):        # one term per position along dim (vectorised over the rest)
        mask_shape = [1] * x._data.ndim
        mask_shape[dim] = n
        replace = ones(mask_shape, dtype=x._dtype)
        idx = np.zeros(n, bool)
        idx[k] = True
        onehot = Tensor._make(idx.reshape(mask_shape), D.bool_)
        from .pointwise import where
        xk = where(onehot, replace, x)
        prods = xk.cumprod(dim)
        tail = (grad * prods).narrow(dim, k, n - k).sum(dim, keepdim=True)
        parts.append(tail)
    from .joining import cat
    return cat(parts, dim)


def cumprod(input, dim, *, dtype=None, out=None):
    return _cumprod(input, dim=wrap_dim(dim, input._data.ndim),
                    dtype=dtype or _sum_dtype(input._dtype))
