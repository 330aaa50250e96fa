"""Reductions over dims (int, tuple, negative; keepdim), scans, and softmax."""
import builtins
import math
import numpy as np

from .. import _dtype as D, _dtype_kernels
from .._tensor import Tensor
from . import views as _views
from ._pointwise_common import _out, unsupported, _check_out_dtype
from ._utils import return_type, Overloads, with_method, wrap_dim, wrap_dims
from .registry import primitive
import warnings
from .._printing import scalar_type_name
from .arithmetic import maximum, minimum
from .creation import ones, zeros, eye, zeros_like, ones_like
from .joining import cat
from .pointwise import where
from .views import index_fill_grad


values_indices = {}


def _named(name):
    if name not in values_indices:
        values_indices[name] = return_type(name, ["values", "indices"])
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


def _acc(dtype):
    """The NumPy dtype to accumulate `dtype` in: float16/bfloat16 in float32, as PyTorch does."""
    return np.float32 if dtype in (D.float16, D.bfloat16) else dtype.np


def _acc_np(np_dtype):
    """_acc for a NumPy dtype: float16/bfloat16 arrays are computed in float32."""
    return np.float32 if np_dtype.itemsize == 2 and np_dtype.kind in "fV" else np_dtype


class _Unset:
    """Default of `dim` where PyTorch distinguishes "no dim" from an explicit dim=None (the
    latter picks the dim overload: SumBackward1, a kept (1, 1, ...) shape with keepdim)."""
    def __repr__(self):
        return "None"


UNSET = _Unset()


def _parsed(name, *signatures, out_rule="cast", takes_out=False):
    """The op `impl(which, input, **arguments)` read as PyTorch's parser reads its overloads
    (`signatures`, see _utils.Overloads; `which` is the index of the one that accepted the
    arguments), both as a function and as a Tensor method (without out=). The result is written
    into out= by the rule of pointwise._out (a function of out: its rule), unless `takes_out`."""
    function_form = Overloads(name, *signatures)
    method_form = Overloads(name, *signatures, method=True)

    def decorate(impl):
        def function(*args, **kwargs):
            which, arguments = function_form.parse(args, kwargs)
            if takes_out:
                return impl(which, **arguments)
            out = arguments.pop("out", None)
            return _out(impl(which, **arguments), out, name,
                        out_rule(out) if callable(out_rule) else out_rule)

        bare = []       # x.op() with no arguments: how it was read (the hot case, x.sum())

        def method(self, *args, **kwargs):
            if not args and not kwargs and bare:
                return impl(bare[0], self, **bare[1])
            which, arguments = method_form.parse(args, kwargs)
            if not args and not kwargs:
                bare[:] = which, arguments
            return impl(which, self, **arguments)
        function.__name__ = method.__name__ = name
        function.__doc__ = impl.__doc__
        return with_method(function, method)
    return decorate


# the overloads of the ops below, as PyTorch lists them (its hidden named-dim ones left out)
_DIM_LIST = "Tensor input, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, " \
    "Tensor? out=None"
_VAR = ("Tensor input, int[1]? dim, bool unbiased=True, bool keepdim=False, *, Tensor? out=None",
        "Tensor input, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False, "
        "Tensor? out=None",
        "Tensor input, bool unbiased=True")
_EXTREME = ("Tensor input, *, Tensor? out=None", "Tensor input, Tensor other, *, Tensor? out=None",
            "Tensor input, int dim, bool keepdim=False, *, Tensor[2]? out=None")
_LOGICAL = ("Tensor input, *, Tensor? out=None",
            "Tensor input, int[]? dim=None, bool keepdim=False, *, Tensor? out=None",
            "Tensor input, int dim, bool keepdim=False, *, Tensor? out=None")


def _reduce_dims(dim, ndim, ranges_first=True):
    """The dims a reduction runs over: None, () and [] mean all of them. PyTorch's reductions
    check the dims in one of two orders: every dim's range before repeats (sum, mean, amax,
    ...), or dim by dim (std, var, vector_norm)."""
    if dim is None or dim is UNSET or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    if ranges_first:
        for d in dims:
            wrap_dim(d, ndim)        # (a scalar has dims 0 and -1)
    seen = []
    for d in dims:
        w = wrap_dim(d, ndim)
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.append(w)
    return tuple(sorted(seen)) if ndim else ()


# ----------------------------------------------------------------------------- sum / mean
# float32 sums with at least this many terms added one after another accumulate in float64
SERIAL_SUM_TERMS = 2048


def _sum_np(xp, x, dims, keepdim, acc):
    """xp.sum accumulated in `acc`, as accurate as PyTorch's cascade sum. NumPy sums the run of
    innermost reduced dims pairwise (accurate), but adds along a reduced dim ahead of them one
    term at a time: 30,000 float32 terms of 1/30,000 then sum to 0.9997. Past
    SERIAL_SUM_TERMS such terms, a float32 sum accumulates in float64 and rounds once."""
    if acc == np.float32 and dims is not None:
        inner = x.ndim
        while inner > 0 and inner - 1 in dims:
            inner -= 1                          # dims inner.. are the pairwise-summed run
        serial = math.prod(x.shape[d] for d in dims if d < inner)
        if serial >= SERIAL_SUM_TERMS:
            return xp.sum(x, axis=dims, keepdims=keepdim, dtype=np.float64).astype(np.float32)
    return xp.sum(x, axis=dims, keepdims=keepdim, dtype=acc)


def _mean_np(xp, x, dims, keepdim, dtype):
    """Mean as sum / count (an empty mean is 0/0 = nan, without NumPy's warning), accumulated
    in float32 at least."""
    dtype = np.dtype(dtype)
    acc = np.float32 if dtype.itemsize < 4 and dtype.kind != "c" else dtype
    total = _sum_np(xp, x, dims, keepdim, acc)
    count = x.size if dims is None else _count(x.shape, dims)
    return xp.asarray(total / count if count else total * np.nan).astype(dtype, order="C")


def _narrowed(x, dtype):
    """PyTorch converts the input to a narrower float dtype= before reducing: each element is
    rounded to it first (the sum itself is still accumulated wide)."""
    npd = np.dtype(dtype.np)
    if x.dtype.kind == "f" and npd.kind in "fV" and npd.itemsize < x.dtype.itemsize:
        return x.astype(npd)
    return x


@primitive("sum", node="SumBackward0")
def _sum_all(xp, self, *, dtype):
    return xp.asarray(xp.sum(_narrowed(self, dtype), dtype=_acc(dtype))).astype(dtype.np)


def _spread(grad, shape):
    """The zero-dim gradient of a full reduction seen at every element of `shape`: the
    expand of torch's graph (ExpandBackward0), without the argument checks of `expand`."""
    return _views._expand(grad, shape=shape, strides=(0,) * len(shape))


@_sum_all.derivative
def _(ctx, grad):
    return _spread(grad, ctx.input_shape())


@primitive("sum.dim", node="SumBackward1")
def _sum_dim(xp, self, *, dims, keepdim, dtype):
    return xp.asarray(_sum_np(xp, _narrowed(self, dtype), dims, keepdim, _acc(dtype))).astype(
        dtype.np,
                                                                             order="C")


@_sum_dim.derivative
def _(ctx, grad):
    return _restore_dims(grad, ctx.input_shape(), ctx.dims, ctx.keepdim).expand(
        ctx.input_shape())


@_parsed("sum", "Tensor input, *, ScalarType? dtype=None", _DIM_LIST, out_rule="any")
def sum(which, input, dim=UNSET, keepdim=False, dtype=None):
    dtype = dtype or _sum_dtype(input._dtype)
    if dim is UNSET:
        return _sum_all(input, dtype=dtype)
    return _sum_dim(input, dims=_reduce_dims(dim, input._data.ndim), keepdim=keepdim,
                    dtype=dtype)


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
    return _mean_np(xp, self, None, False, dtype.np)


@_mean_all.derivative
def _(ctx, grad):
    n = math.prod(ctx.input_shape())
    # expand, then divide, as PyTorch: over an empty input the double backward is then
    # a sum of nothing (0), not 0 / 0
    return _spread(grad, ctx.input_shape()) / n


@primitive("mean.dim", node="MeanBackward1")
def _mean_dim(xp, self, *, dims, keepdim, dtype):
    return _mean_np(xp, self, dims, keepdim, dtype.np)


@_mean_dim.derivative
def _(ctx, grad):
    shape = ctx.input_shape()
    n = math.prod(shape[d] for d in ctx.dims)
    return _restore_dims(grad, shape, ctx.dims, ctx.keepdim).expand(shape) / n


@_parsed("mean", "Tensor input, *, ScalarType? dtype=None, Tensor? out=None", _DIM_LIST)
def mean(overload, input, dim=UNSET, keepdim=False, dtype=None):
    which = "Optional" if dtype is not None else "Input"
    dtype = dtype or input._dtype
    if dtype._category < 2:
        raise RuntimeError(f"mean(): could not infer output dtype. {which} dtype must be either "
                           f"a floating point or complex dtype. Got: {_tname(dtype)}")
    if dim is UNSET:
        return _mean_all(input, dtype=dtype)
    return _mean_dim(input, dims=_reduce_dims(dim, input._data.ndim), keepdim=keepdim,
                     dtype=dtype)


def _tname(dtype):
    return scalar_type_name(dtype)


# ----------------------------------------------------------------------------- prod
@primitive("prod", node="ProdBackward0", save=("self", "result"))
def _prod_all(xp, self, *, dtype):
    return xp.asarray(xp.prod(_narrowed(self, dtype), dtype=_acc(dtype))).astype(dtype.np)


@_prod_all.derivative
def _(ctx, grad):
    return _prod_grad(grad, ctx.self, ctx.result, None)


@primitive("prod.dim", node="ProdBackward1", save=("self", "result"))
def _prod_dim(xp, self, *, dim, keepdim, dtype):
    # along a dim, PyTorch multiplies float16/bfloat16 in their own precision (rounding after
    # each step), not in float32 as its full product and its sums do
    acc = dtype.np if dtype in (D.float16, D.bfloat16) else _acc(dtype)
    return xp.asarray(xp.prod(_narrowed(self, dtype), axis=dim, keepdims=keepdim,
                              dtype=acc)).astype(dtype.np)


@_prod_dim.derivative
def _(ctx, grad):
    return _prod_grad(grad, ctx.self, ctx.result, ctx.dim, ctx.keepdim)


def _prod_grad(grad, x, result, dim, keepdim=False):
    """d prod / dx_i = the product of the other elements: result / x_i where no element of x is
    zero (as PyTorch, NaN then reaches every element of a slice holding one), else computed
    without dividing."""
    if x._data.ndim == 0:
        return grad
    if dim is not None and not keepdim:
        grad, result = grad.unsqueeze(dim), result.unsqueeze(dim)
    if not (x._data == 0).any():
        return grad * (result / x).conj()
    if dim is None:
        return (grad * _exclusive_prod(x.reshape(-1), 0).conj()).reshape(x.shape)
    return grad * _exclusive_prod(x, dim).conj()


def _exclusive_prod(x, dim):
    """For each position along dim, the product of all the other elements along dim:
    (product of those before) * (product of those after), from two cumulative products."""
    n = x.shape[dim]
    if n <= 1:
        return ones_like(x)
    ones_shape = list(x.shape)
    ones_shape[dim] = 1
    one = ones(ones_shape, dtype=x._dtype, device=x._device)
    before = cat([one, x.narrow(dim, 0, n - 1).cumprod(dim)], dim)
    after = cat([x.flip(dim).narrow(dim, 0, n - 1).cumprod(dim).flip(dim), one], dim)
    return before * after


@_parsed("prod", "Tensor input, *, ScalarType? dtype=None",
         "Tensor input, int dim, bool keepdim=False, *, ScalarType? dtype=None, Tensor? out=None",
         out_rule="any")
def prod(which, input, dim=None, keepdim=False, dtype=None):
    dtype = dtype or _sum_dtype(input._dtype)
    if dim is None:
        return _prod_all(input, dtype=dtype)
    return _prod_dim(input, dim=wrap_dim(dim, input._data.ndim), keepdim=keepdim, dtype=dtype)


# ----------------------------------------------------------------------------- max / min
def _extreme_all(name, node, fn):
    op = primitive(name, node=node, save=("self", "result"))(
        lambda xp, self: _nonempty(_complex_unsupported(fn, f"{name}_all"), self, name))

    op.derivative(lambda ctx, grad: evenly_distribute(grad, ctx.self, ctx.result))
    return op


def evenly_distribute(grad, x, result):
    """The gradient of max()/min()/median() of all elements: shared evenly by the elements
    equal to the result (by the NaNs when it is NaN); the others get exact zeros, even where
    the gradient is not finite."""
    mask = x.isnan() if result.isnan().item() else x == result
    return where(mask, grad / mask.sum(), zeros_like(x))


def _complex_unsupported(fn, kernel):
    """fn, refusing complex input with PyTorch's error for its kernel."""
    def checked(x, **kw):
        unsupported(kernel, x, "c")
        return fn(x, **kw)
    return checked


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
        lambda xp, self, *, dim, keepdim: _dim_extreme(xp, arg, self, dim, keepdim,
                                                       name.split(".")[0]))

    @op.derivative
    def _(ctx, grad):
        return index_fill_grad(grad, ctx.result1, ctx.input_shape(), ctx.dim, ctx.keepdim)
    return op


def _dim_extreme(xp, arg, x, dim, keepdim, name):
    """(values, indices) of the max/min along dim; NaN wins (the first one), as in PyTorch."""
    if x.ndim and x.shape[dim] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")
    if x.dtype.kind == "c":
        raise RuntimeError(f"{name}(): does not support complex input")
    if x.ndim == 0:
        return x.copy(), xp.zeros((), xp.int64)
    if x.size == 0:                      # another dim is empty: an empty result
        shape = list(x.shape)
        if keepdim:
            shape[dim] = 1
        else:
            del shape[dim]
        return xp.empty(shape, x.dtype), xp.empty(shape, xp.int64)
    idx = arg(x, axis=dim, keepdims=True)
    if x.dtype.kind in "fV":
        nan = xp.isnan(x)
        idx = xp.where(nan.any(axis=dim, keepdims=True), xp.argmax(nan, axis=dim, keepdims=True),
                       idx)
    values = xp.take_along_axis(x, idx, axis=dim)
    if not keepdim:
        values, idx = values.squeeze(dim), idx.squeeze(dim)
    return values, idx.astype(xp.int64)


_max_dim = _extreme_dim("max.dim", "MaxBackward0", np.argmax)
_min_dim = _extreme_dim("min.dim", "MinBackward0", np.argmin)


def _extreme(name, everything, along_dim, elementwise):
    """max / min: of all elements, elementwise with another tensor, or along a dim."""
    @_parsed(name, *_EXTREME, takes_out=True)
    def extreme(which, input, other=None, dim=None, keepdim=False, out=None):
        if which == 1:
            return elementwise(input, other, out=out)
        if which == 0:
            return _out(everything(input), out, name, "mm")
        v, i = along_dim(input, dim=wrap_dim(dim, input._data.ndim), keepdim=keepdim)
        return _values_indices(name, v, i, out)
    return extreme


def _maximum(*args, **kwargs):
    return maximum(*args, **kwargs)


def _minimum(*args, **kwargs):
    return minimum(*args, **kwargs)


max = _extreme("max", _max_all, _max_dim, _maximum)
min = _extreme("min", _min_all, _min_dim, _minimum)


def _values_indices(name, values, indices, out):
    """The (values, indices) named tuple; with out=(values, indices), written into those."""
    if out is None:
        return _named(name)(values, indices)
    # both must have the result's dtype exactly (values' is checked first)
    return _named(name + "_out")(_out(values, out[0], name, "mm"),
                                 _out(indices, out[1], name, "mm"))


def _check_reduce_nonempty(name, shape, dims, all_dims):
    """PyTorch's errors for a max-like reduction over nothing."""
    if all_dims:
        if int(np.prod(shape)) == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                               f"input.numel() == 0. Specify the reduction dim with the 'dim' "
                               f"argument.")
        return
    for d in dims:
        if shape and shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _amax_like(name, node, fn):
    kernel = f"{name[1:]}_values_cpu"          # amax: "max_values_cpu"
    op = primitive(name, node=node, save=("self", "result"))(
        lambda xp, self, *, dims, keepdim: (unsupported(kernel, self, "c") if self.size else
                                            None) or fn(self, axis=dims, keepdims=keepdim))

    @op.derivative
    def _(ctx, grad):
        # ties share the gradient evenly
        shape = ctx.input_shape()
        res = _restore_dims(ctx.result, shape, ctx.dims, ctx.keepdim)
        g = _restore_dims(grad, shape, ctx.dims, ctx.keepdim)
        mask = (ctx.self == res)
        count = mask.sum(dim=ctx.dims, keepdim=True)
        return mask * (g / count)

    @_parsed(name, "Tensor input, int[1] dim=[], bool keepdim=False, *, Tensor? out=None",
             out_rule="amax")
    def public(which, input, dim=(), keepdim=False):
        ndim = input._data.ndim
        all_dims = dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0)
        if not all_dims:         # PyTorch checks each dim in turn: range, then size
            for d in (dim if isinstance(dim, (tuple, list)) else (dim,)):
                if input.shape and input.shape[wrap_dim(d, ndim)] == 0:
                    # (the message names the dim as given, as PyTorch's does)
                    raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero "
                                     f"size.")
        dims = _reduce_dims(dim, ndim)
        _check_reduce_nonempty(name, input.shape, dims, all_dims)
        return op(input, dims=dims, keepdim=keepdim)
    return public


amax = _amax_like("amax", "AmaxBackward0", np.max)
amin = _amax_like("amin", "AminBackward0", np.min)


def _arg(name, fn):
    op = primitive(name, differentiable=False)(
        lambda xp, self, *, dim, keepdim: _argfn(xp, fn, self, dim, keepdim, name))

    @_parsed(name, "Tensor input, int? dim=None, bool keepdim=False, *, Tensor? out=None",
             out_rule="mm")
    def public(which, input, dim=None, keepdim=False):
        if input._dtype is D.bool_ or input._dtype.is_complex:
            kind = "bool" if input._dtype is D.bool_ else "complex"
            raise RuntimeError(f"{name}(): does not support {kind} input")
        if dim is None:
            if input._data.size == 0:
                raise IndexError(f"{name}(): Expected reduction dim to be specified for "
                                 f"input.numel() == 0.")
            return op(input, dim=None, keepdim=keepdim)
        return op(input, dim=wrap_dim(dim, input._data.ndim), keepdim=keepdim)
    return public


def _argfn(xp, fn, x, dim, keepdim, name):
    if dim is None:
        flat = x.reshape(-1)
        if flat.dtype.kind in "fV" and xp.isnan(flat).any():
            r = xp.argmax(xp.isnan(flat))
        else:
            r = fn(flat)
        r = xp.asarray(r, dtype=xp.int64)
        return r.reshape((1,) * x.ndim) if keepdim else r
    return _dim_extreme(xp, fn, x, dim, keepdim, name)[1]


argmax = _arg("argmax", np.argmax)
argmin = _arg("argmin", np.argmin)


# ----------------------------------------------------------------------------- var / std
def _count(shape, dims):
    return int(np.prod([shape[d] for d in dims])) if dims else 1


def _dof(count, correction):
    """n - correction as a float: the divisor of var's derivative (as in PyTorch, not clamped
    at 0 there when dims are given, unlike the forward's divisor: a correction above n flips
    the gradient's sign)."""
    return float(count - correction)


def _var_np(xp, x, dims, correction, keepdim, root=False):
    """The variance (its square root with `root`: std), computed wide and rounded once."""
    n = _count(x.shape, dims)
    # accumulated in double, as PyTorch's CPU kernel: (1e38 - mean) ** 2 overflows float32
    wide = x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)
    mean = _mean_np(xp, wide, dims, True, wide.dtype)
    centered = wide - mean
    sq = (centered * centered.conj()).real if x.dtype.kind == "c" else centered * centered
    # no degrees of freedom left: divide by 0 (inf/nan), as PyTorch does
    out = xp.sum(sq, axis=dims, keepdims=keepdim) / builtins.max(n - correction, 0)
    if not n:
        out = out * np.nan                                              # empty: nan
    if root:        # before rounding to a half-precision result, as PyTorch: sqrt of the wide var
        out = xp.sqrt(out)
    # in x's real dtype, C-contiguous as PyTorch's results are (NumPy keeps x's memory order)
    return xp.asarray(out).astype(_real_dtype(x), order="C")


def _real_dtype(x):
    return x.real.dtype if x.dtype.kind == "c" else x.dtype


# `count` is the n of the derivative's n - correction, None for the variance of all elements
# with no dim given (see _var_args)
@primitive("var", node="VarBackward0", save=("self",))
def _var(xp, self, *, dims, correction, keepdim, count):
    return _var_np(xp, self, dims, correction, keepdim)


def _var_grad(ctx, grad):
    x = ctx.self
    shape = ctx.input_shape()
    g = _restore_dims(grad, shape, ctx.dims, ctx.keepdim)
    mean = x.mean(dim=ctx.dims, keepdim=True)
    dof = _dof(x._data.size if ctx.count is None else ctx.count, ctx.correction)
    if ctx.count is None and dof <= 0:
        # no dim and no degrees left: PyTorch's gradient is infinite where an element differs
        # from the mean (a NaN does) and NaN where it equals it, whatever its sign
        return g * (x != mean) * math.inf
    return g * (x - mean) * (2.0 / dof if dof else math.inf)  # as PyTorch: no degrees left: inf


_var.derivative(_var_grad)


@primitive("std", node="StdBackward0", save=("self", "result"))
def _std(xp, self, *, dims, correction, keepdim, count):
    return _var_np(xp, self, dims, correction, keepdim, root=True)


def _std_grad(ctx, grad, result):
    # d std = d var / (2 std), where a zero std sends no gradient (as PyTorch; divided by a 1
    # there instead, so that the double backward of those lanes is 0 too)
    zero = result == 0
    return _var_grad(ctx, where(zero, zeros_like(grad),
                                grad / (where(zero, ones_like(result), result) * 2)))


_std.derivative(lambda ctx, grad: _std_grad(ctx, grad, ctx.result))


def _welford_mean(xp, x, dims, keepdim):
    """var_mean's and std_mean's mean, as PyTorch's running (Welford) mean comes out: an
    infinite value followed by any other value in its slice makes it NaN (inf - inf)."""
    mean = xp.asarray(_mean_np(xp, x, dims, keepdim, x.dtype), order="C")
    if x.dtype.kind != "f" or not x.size:
        return mean
    kept = [d for d in range(x.ndim) if d not in dims]
    flat = x.transpose(kept + list(dims)).reshape([x.shape[d] for d in kept] + [-1])
    early_inf = xp.isinf(flat[..., :-1]).any(-1).reshape(mean.shape)
    return xp.where(early_inf, xp.asarray(np.nan, x.dtype), mean) if early_inf.any() else mean


@primitive("var_mean", node="VarMeanBackward0", save=("self",), n_outputs=2)
def _var_mean(xp, self, *, dims, correction, keepdim, count):
    return (_var_np(xp, self, dims, correction, keepdim), _welford_mean(xp, self, dims, keepdim))


@_var_mean.derivative
def _(ctx, grad_var, grad_mean):
    shape = ctx.input_shape()
    out = None
    if grad_var is not None:
        out = _var_grad(ctx, grad_var)
    if grad_mean is not None:
        g = _restore_dims(grad_mean, shape, ctx.dims, ctx.keepdim) / _count(shape, ctx.dims)
        g = g.expand(shape)
        out = g if out is None else out + g
    return out


@primitive("std_mean", node="StdMeanBackward0", save=("self", "result"), n_outputs=2)
def _std_mean(xp, self, *, dims, correction, keepdim, count):
    return (_var_np(xp, self, dims, correction, keepdim, root=True),
            _welford_mean(xp, self, dims, keepdim))


@_std_mean.derivative
def _(ctx, grad_std, grad_mean):
    shape = ctx.input_shape()
    out = None
    if grad_std is not None:
        out = _std_grad(ctx, grad_std, ctx.result[0])
    if grad_mean is not None:
        g = _restore_dims(grad_mean, shape, ctx.dims, ctx.keepdim) / _count(shape, ctx.dims)
        g = g.expand(shape)
        out = g if out is None else out + g
    return out


def _var_args(input, dim, unbiased, correction, keepdim, name="std and var"):
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    if input._dtype._category < 2:
        raise RuntimeError(f"{name} only support floating point and complex dtypes")
    dims = _reduce_dims(dim, input._data.ndim, ranges_first=False)
    # dim=[] reduces every dim, yet PyTorch's derivative then takes n = 1 (no dim listed): the
    # gradient of var(x, []) is 2 (x - mean) / (1 - correction), inf / nan by default
    count = 1 if isinstance(dim, (list, tuple)) and not dim else _count(input.shape, dims)
    if dim is None or not input._data.ndim:
        count = None
    return dims, correction, keepdim, count


def _warn_dof(name, input, dims, correction):
    # PyTorch's reduction factor: input numel / output numel
    out_numel = _count(input.shape, [d for d in range(input._data.ndim) if d not in dims])
    if input._data.size // builtins.max(out_numel, 1) - correction <= 0:
        # (PyTorch reduces a complex input's real and imaginary parts apart: it warns twice)
        for _ in range(2 if input._dtype.is_complex else 1):
            warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be "
                          f"strictly less than the reduction factor (input numel divided by "
                          f"output numel).", UserWarning, stacklevel=4)


def _variance(name, op, signatures, error_name="std and var"):
    """var, std, var_mean, std_mean: over dims, with unbiased= or correction= (not both)."""
    @_parsed(name, *signatures)
    def public(which, input, dim=None, unbiased=True, keepdim=False, correction=None):
        dims, corr, keepdim, count = _var_args(input, dim, unbiased, correction, keepdim,
                                               error_name)
        _warn_dof(name, input, dims, corr)
        return op(input, dims=dims, correction=corr, keepdim=keepdim, count=count)
    return public


var = _variance("var", _var, _VAR)
std = _variance("std", _std, _VAR)
# (these two have no out=)
var_mean = _variance("var_mean", _var_mean, [s.replace(", *, Tensor? out=None", "").replace(
    ", Tensor? out=None", "") for s in _VAR], "var_mean")
std_mean = _variance("std_mean", _std_mean, [s.replace(", *, Tensor? out=None", "").replace(
    ", Tensor? out=None", "") for s in _VAR], "std_mean")


# ----------------------------------------------------------------------------- logsumexp, softmax
@primitive("logsumexp", node="LogsumexpBackward0", save=("self", "result"))
def _logsumexp(xp, self, *, dims, keepdim):
    if self.size == 0:
        m = xp.zeros((), self.dtype)
    else:
        m = xp.max(self, axis=dims, keepdims=True)
        m = xp.where(xp.isfinite(m), m, 0)     # all -inf (or inf) rows: no shift
    s = xp.log(xp.sum(xp.exp(self - m), axis=dims, keepdims=True)) + m
    return (s if keepdim else xp.squeeze(s, dims)).astype(self.dtype)


@_logsumexp.derivative
def _(ctx, grad):
    shape = ctx.input_shape()
    g = _restore_dims(grad, shape, ctx.dims, ctx.keepdim)
    r = _restore_dims(ctx.result, shape, ctx.dims, ctx.keepdim)
    return g * (ctx.self - r).exp().conj()


def _logsumexp_out_rule(out):
    return "float_out" if out is not None and out._dtype._category < 2 else "cast"


_LOGSUMEXP = "Tensor input, int[1] dim, bool keepdim=False, *, Tensor? out=None"


def _logsumexp_of(which, input, dim, keepdim=False):
    if input._dtype._category < 2:
        input = input.to(D.get_default_dtype())
    if isinstance(dim, (tuple, list)) and not dim and not keepdim and input._data.ndim and \
            input._data.size:
        # PyTorch reduces every dim for dim=() but then fails writing the kept-dims sum
        raise RuntimeError(f"output with shape [] doesn't match the broadcast shape "
                           f"[{', '.join(['1'] * input._data.ndim)}]")
    return _logsumexp(input, dims=_reduce_dims(dim, input._data.ndim), keepdim=keepdim)


logsumexp = _parsed("logsumexp", _LOGSUMEXP, out_rule=_logsumexp_out_rule)(_logsumexp_of)
# (torch.special's is its own op: its errors name it special_logsumexp)
special_logsumexp = _parsed("special_logsumexp", _LOGSUMEXP,
                            out_rule=_logsumexp_out_rule)(_logsumexp_of)


# ----------------------------------------------------------------------------- all / any
_all = primitive("all", differentiable=False)(
    lambda xp, self, *, dims, keepdim: xp.all(self, axis=dims, keepdims=keepdim))
_any = primitive("any", differentiable=False)(
    lambda xp, self, *, dims, keepdim: xp.any(self, axis=dims, keepdims=keepdim))


def _logical_dims(dim, ndim):
    # unlike sum's, all's and any's empty dim list reduces nothing (each value is tested alone)
    empty = isinstance(dim, (tuple, list)) and len(dim) == 0
    return () if empty else _reduce_dims(dim, ndim)


def _logical_out_rule(out):
    # all/any write into a bool or uint8 out (whatever the input's dtype), nothing else
    return "any" if out is None or out._dtype in (D.bool_, D.uint8) else "logical"


@_parsed("all", *_LOGICAL, out_rule=_logical_out_rule)
def all(which, input, dim=None, keepdim=False):
    r = _all(input, dims=_logical_dims(dim, input._data.ndim), keepdim=keepdim)
    return r if input._dtype is not D.uint8 else r.to(D.uint8)


@_parsed("any", *_LOGICAL, out_rule=_logical_out_rule)
def any(which, input, dim=None, keepdim=False):
    r = _any(input, dims=_logical_dims(dim, input._data.ndim), keepdim=keepdim)
    return r if input._dtype is not D.uint8 else r.to(D.uint8)


@_parsed("count_nonzero", "Tensor input, int? dim=None", "Tensor input, int[] dim")
def count_nonzero(which, input, dim=None):
    # (an empty dim list counts over every dim, as None does)
    dims = wrap_dims(dim, input._data.ndim) if dim is not None and dim != () and dim != [] \
        else None
    if dims is None:        # (torch's kernel over all elements; counting along a dim is served)
        _dtype_kernels.check("count_nonzero", input._dtype)
    return Tensor._make(np.asarray(np.count_nonzero(input._data, axis=dims), dtype=np.int64),
                        D.int64, input._device)


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


# ---------------------------------------------------------------------------- trace
@primitive("trace", node="TraceBackward0")
def _trace(xp, self):
    a = self
    if a.dtype.kind in "iub":
        a = a.astype(np.int64)       # integer traces are int64, as integer sums are
    return xp.asarray(xp.trace(a), dtype=a.dtype)


@_trace.derivative
def _(ctx, grad):
    n, m = ctx.input_shape(0)
    return eye(n, m, dtype=grad.dtype, device=grad.device) * grad


def trace(input):
    if input._data.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim "
                           f"{input._data.ndim}")
    if input._dtype is D.bool_:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    return _trace(input)


__all__ = ['nanmean', 'nansum', 'aminmax']
