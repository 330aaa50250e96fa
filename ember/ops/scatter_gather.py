"""Gather and scatter: gather, scatter(_add/_reduce), put, masked_scatter, index_reduce and the
*_scatter ops that write a source into a view of a copy."""
import builtins
import numpy as np

from .. import _dtype as D, _backend
from .._printing import scalar_type_name
from .._tensor import Tensor
from . import pointwise as P, indexing as I, views as V, creation
from ._pointwise_common import _out
from ._utils import wrap_dim
from .indexing import _index_of, _index_put, _scalar_name
from .registry import primitive, COMMON
from .spectral import _warn_once
from .tensor_info import _as_int64
from .views import _array_view
import warnings
from .creation import zeros
from .joining import cat


def _check_bounds(index, size, dim):
    """PyTorch's gather/scatter check: every index in [0, size) (no negative indices), the
    first bad one (in index order) reported."""
    bad = (index < 0) | (index >= size)
    if bad.any():
        raise RuntimeError(f"index {int(index[bad].flat[0])} is out of bounds for dimension "
                           f"{dim} with size {size}")


def _full_indices(xp, index, dim):
    """The advanced-index tuple addressing, for each index element, its target position:
    `index` along `dim`, each element's own position along the other dims (broadcast ranges,
    made on index's device)."""
    grids = [xp.arange(n).reshape((1,) * d + (n,) + (1,) * (index.ndim - d - 1))
             for d, n in enumerate(index.shape)]
    grids[dim] = index
    return tuple(grids)


@primitive("gather", node="GatherBackward0")
def _gather(xp, self, *, dim, index):
    if not self.ndim:           # a scalar gathers as a one-element vector
        return _gather.forward(xp, self.reshape(1), dim=0, index=index.reshape(-1)).reshape(
            index.shape)
    _check_bounds(index, self.shape[dim], dim)
    return self[_full_indices(xp, index, dim)]


@_gather.derivative
def _(ctx, grad):
    idx = Tensor._make(ctx.index, D.int64, grad._device)
    return zeros(ctx.input_shape(), dtype=grad._dtype, device=grad._device).scatter_add(
        ctx.dim, idx, grad)


def gather(input, dim, index, *, sparse_grad=False, out=None):
    d = wrap_dim(dim, input._data.ndim)
    if index._data.ndim != input._data.ndim and not (index._data.ndim <= 1 and
                                                      input._data.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input "
                           "tensor")
    return _gather(input, dim=d, index=_index_of(index, "gather"))


@primitive("scatter", node="ScatterBackward0")
def _scatter(xp, self, src, *, dim, index, reduce=None):
    if not self.ndim:           # a scalar is scattered into as a one-element vector
        return _scatter.forward(xp, self.reshape(1), src.reshape(-1) if src.ndim else src,
                                dim=0, index=index.reshape(-1), reduce=reduce).reshape(())
    _check_bounds(index, self.shape[dim], dim)
    out = self.copy()
    where = _full_indices(xp, index, dim)
    values = src[tuple(slice(0, s) for s in index.shape)] if src.ndim else src
    if reduce is None:
        out[where] = values
    elif reduce == "add":
        _backend.of(xp).scatter_add(out, where, values)
    elif reduce == "multiply":
        _backend.of(xp).scatter_multiply(out, where, values)
    return out


@primitive("scatter.value", node="ScatterBackward1")
def _scatter_value(xp, self, *, dim, index, value, reduce=None):
    return _scatter.forward(xp, self, xp.asarray(value, dtype=self.dtype), dim=dim, index=index,
                            reduce=reduce)


@_scatter_value.derivative
def _(ctx, grad):
    return grad.scatter(ctx.dim, Tensor._make(ctx.index, D.int64, grad._device), 0.0)


@_scatter.derivative
def _(ctx, grad):
    idx = Tensor._make(ctx.index, D.int64, grad._device)
    g_self = grad.scatter(ctx.dim, idx, 0.0)
    g_src = grad.gather(ctx.dim, idx)
    return g_self, _pad_to(g_src, ctx.input_shape(1))


def _pad_to(g, shape):
    if tuple(g.shape) == tuple(shape) or not len(shape):
        return g if len(shape) else g.sum()
    out = zeros(shape, dtype=g._dtype, device=g._device)
    region = tuple(slice(0, s) for s in g.shape)
    return _index_put(out, g, indices=region, accumulate=False)


@primitive("scatter_add", node="ScatterAddBackward0")
def _scatter_add(xp, self, src, *, dim, index):
    if not self.ndim:           # (as _scatter)
        return _scatter_add.forward(xp, self.reshape(1), src.reshape(-1), dim=0,
                                    index=index.reshape(-1)).reshape(())
    _check_bounds(index, self.shape[dim], dim)
    out = self.copy()
    values = src[tuple(slice(0, s) for s in index.shape)]
    _backend.of(xp).scatter_add(out, _full_indices(xp, index, dim), values)
    return out


@_scatter_add.derivative
def _(ctx, grad):
    idx = Tensor._make(ctx.index, D.int64, grad._device)
    return grad, _pad_to(grad.gather(ctx.dim, idx), ctx.input_shape(1))


_warned_scatter_reduce = []


def _check_reduce(reduce):
    if reduce not in (None, "add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")


def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    idx = _index_of(index, "scatter")
    if src is None:
        src = value
    d = wrap_dim(dim, input._data.ndim)
    if not isinstance(src, Tensor):
        _check_reduce(reduce)
        return _scatter_value(input, dim=d, index=idx, value=src, reduce=reduce)
    if src._dtype is not input._dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if reduce is not None and not _warned_scatter_reduce:
        _warned_scatter_reduce.append(True)             # PyTorch warns once per process
        warnings.warn("The reduce argument of ember.scatter with Tensor src is deprecated and "
                      "will be removed in a future PyTorch release. Use ember.scatter_reduce "
                      "instead for more reduction options. (Triggered internally at "
                      "/pytorch/aten/src/ATen/native/TensorAdvancedIndexing.cpp:230.)",
                      UserWarning, stacklevel=3)
    _check_reduce(reduce)                               # (PyTorch warns first)
    return _scatter(input, src, dim=d, index=idx, reduce=reduce)


def scatter_add(input, dim, index, src):
    return _scatter_add(input, src, dim=wrap_dim(dim, input._data.ndim),
                        index=_index_of(index, "scatter"))


def scatter_(self, dim, index, src=None, value=None, *, reduce=None):
    if src is None:
        src = value
    idx, d = _index_of(index, "scatter"), wrap_dim(dim, self._data.ndim)
    _check_reduce(reduce)
    if not isinstance(src, Tensor):
        return _scatter_value.inplace(self, dim=d, index=idx, value=src, reduce=reduce)
    return _scatter.inplace(self, src, dim=d, index=idx, reduce=reduce)


def scatter_add_(self, dim, index, src):
    return _scatter_add.inplace(self, src, dim=wrap_dim(dim, self._data.ndim),
                                index=_index_of(index, "scatter"))


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
    index = _as_int64(ctx.index)
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
    g_source = cat([chosen, zeros(size - chosen.numel(), dtype=grad._dtype, device=grad._device)])
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
    _check_bounds(index, self.shape[dim], dim)
    reduce = _ALIASES.get(reduce, reduce)
    out = self.copy()
    where = _full_indices(xp, index, dim)
    values = src[tuple(slice(0, s) for s in index.shape)]
    if not include_self:
        out[where] = _reduction_identity(out.dtype, reduce)
    if reduce in ("sum", "mean"):
        _backend.of(xp).scatter_add(out, where, values)
    elif reduce == "prod":
        _backend.of(xp).scatter_multiply(out, where, values)
    elif reduce == "amax":
        _backend.of(xp).scatter_max(out, where, values)
    else:
        _backend.of(xp).scatter_min(out, where, values)
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
    index = _as_int64(ctx.index)
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
    return g_self, _pad_to(g_src, ctx.input_shape(1))


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
    return _out(result, out, "scatter_reduce")


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
    _array_view(xp, out, kind, args)[...] = src
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


# ----------------------------------------------------------------------------- index_reduce
@primitive("index_reduce", node="IndexReduceBackward0", save=("self", "src", "result"))
def _index_reduce(xp, self, src, *, dim, index, reduce, include_self):
    # the scatter_reduce of src with each index repeated across src's other dims
    if self.ndim == 0:                      # (scatter_reduce works on one dim at least)
        return _index_reduce.forward(xp, self.reshape(1), src.reshape(1), dim=0,
                                     index=index.reshape(1), reduce=reduce,
                                     include_self=include_self).reshape(())
    return _scatter_reduce.forward(xp, self, src, dim=dim, index=index, reduce=reduce,
                                       include_self=include_self)


_index_reduce.derivative(lambda ctx, grad: _scatter_reduce.derivative_fn(ctx, grad))


def _index_reduce_args(self, dim, index, source, reduce, include_self):
    fn = "index_reduce_()"
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    _warn_once("index_reduce() is in beta and the API may change at any time.")
    ndim = self._data.ndim
    d = wrap_dim(dim, ndim)
    if index._dtype not in (D.int32, D.int64):
        raise RuntimeError(f"{fn}: Expected dtype int32/int64 for index but got: "
                           f"{_scalar_name(index._dtype)}")
    if index._data.ndim > 1:
        raise IndexError(f"{fn}: Index is supposed to be a vector, but got dim: "
                         f"{index._data.ndim} with type: {_scalar_name(index._dtype)} and size: "
                         f"{list(index.shape)}")
    if source._dtype is not self._dtype:
        raise RuntimeError(f"{fn}: self ({_scalar_name(self._dtype)}) and source "
                           f"({_scalar_name(source._dtype)}) must have the same scalar type")
    idx = index._data.reshape(-1).astype(np.int64)
    n_src = source._data.shape[d] if source._data.ndim else 1
    if idx.size != n_src:
        raise RuntimeError(f"{fn}: Number of indices ({idx.size}) should be equal to "
                           f"source.size(dim): ({n_src}), for dim: {d}")
    shape, src_shape = list(self.shape), list(source.shape)
    if ndim and (len(src_shape) != ndim or shape[:d] + shape[d + 1:] !=
                 src_shape[:d] + src_shape[d + 1:]):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {shape} source.shape = "
                           f"{src_shape}")
    size = shape[d] if ndim else 1
    if ((idx < 0) | (idx >= size)).any():
        raise IndexError("index out of range in self")
    # each index, along dim, at every position of source
    full = np.broadcast_to(idx.reshape([-1 if i == d else 1 for i in builtins.range(ndim)]),
                           source._data.shape) if ndim else idx.reshape(())
    return dict(dim=d, index=np.array(full), reduce=reduce,
                include_self=include_self)


def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None):
    result = _index_reduce(input, source, **_index_reduce_args(input, dim, index, source, reduce,
                                                               include_self))
    return _out(result, out, "index_reduce")


def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    return _index_reduce.inplace(self, source, **_index_reduce_args(self, dim, index, source,
                                                                    reduce, include_self))


# ----------------------------------------------------------------------------- as_strided_scatter
@primitive("as_strided_scatter", node="AsStridedScatterBackward0")
def _as_strided_scatter(xp, self, src, *, size, stride, storage_offset):
    out = xp.array(self, order="C", copy=True)
    V.strided_view(out, size, stride, storage_offset)[...] = src
    return out


@_as_strided_scatter.derivative
def _(ctx, grad):
    grad = grad.contiguous()
    window = grad.as_strided(ctx.size, ctx.stride, ctx.storage_offset)
    # the source's gradient is grad inside the window; PyTorch (2.13) gives the input that same
    # window of grad and zeros outside it (not grad outside the window): so does ember
    grad_self = _as_strided_scatter(creation.zeros_like(grad), window, size=ctx.size,
                                    stride=ctx.stride, storage_offset=ctx.storage_offset)
    return grad_self, window.clone()


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    window = V.as_strided(input.contiguous(), size, stride, storage_offset)  # (its checks)
    if tuple(src.shape) != tuple(window.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(window.shape)}")
    return _as_strided_scatter(input, src, size=tuple(window.shape), stride=window.stride(),
                               storage_offset=window.storage_offset())


__all__ = ['as_strided_scatter', 'put', 'masked_scatter', 'scatter_reduce', 'select_scatter',
               'slice_scatter', 'diagonal_scatter', 'index_reduce']
