"""Indexing: __getitem__/__setitem__, gather/scatter, selection, sorting, and reshuffles.

Also the derivatives of the view ops: each places a gradient into zeros of the input's shape
through the same view (`_embed`), which is itself differentiable (its derivative is the view).
"""
import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
from ._utils import wrap_dim
from .registry import primitive, xp_of
from . import views as V


# ----------------------------------------------------------------------------- view derivatives
def _array_view(a, kind, args):
    if kind == "select":
        return a[(slice(None),) * args["dim"] + (args["index"], Ellipsis)]
    if kind == "slice":
        return a[(slice(None),) * args["dim"] + (slice(args["start"], args["stop"],
                                                       args["step"]),)]
    if kind == "diagonal":
        return np.diagonal(a, args["offset"], args["dim1"], args["dim2"])
    if kind == "as_strided":
        return V.strided_view(a, args["size"], args["stride"], args["offset"])
    raise AssertionError(kind)


@primitive("_embed", node="EmbedBackward0")
def _embed(xp, grad, *, shape, kind, args):
    out = xp.zeros(shape, grad.dtype)
    if kind == "as_strided" or kind == "unfold":
        # windows may overlap (as_strided, unfold): accumulate through flat positions
        positions = _positions(xp, shape, kind, args)
        flat = xp.zeros(int(np.prod(shape)), grad.dtype)
        np.add.at(flat, positions.reshape(-1), grad.reshape(-1))
        return flat.reshape(shape)
    view = _array_view(out, kind, args)
    if kind == "diagonal":
        view = np.lib.stride_tricks.as_strided(view, view.shape, view.strides, writeable=True)
    view[...] = grad
    return out


def _positions(xp, shape, kind, args):
    ids = xp.arange(int(np.prod(shape)), dtype=xp.int64).reshape(shape)
    if kind == "unfold":
        windows = np.lib.stride_tricks.sliding_window_view(ids, args["size"],
                                                           axis=args["dimension"])
        return windows[(slice(None),) * args["dimension"] +
                       (slice(None, None, args["step"]),)]
    return V.strided_view(ids, args["size"], args["stride"], args["offset"])


@_embed.derivative
def _(ctx, grad):
    kind, a = ctx.kind, ctx.args
    if kind == "select":
        return grad.select(a["dim"], a["index"])
    if kind == "slice":
        return V._slice(grad, dim=a["dim"], start=a["start"], stop=a["stop"], step=a["step"])
    if kind == "diagonal":
        return grad.diagonal(a["offset"], a["dim1"], a["dim2"])
    if kind == "unfold":
        return grad.unfold(a["dimension"], a["size"], a["step"])
    return grad.contiguous().as_strided(a["size"], a["stride"], a["offset"])


def select_backward(grad, shape, dim, index):
    return _embed(grad, shape=shape, kind="select", args={"dim": dim, "index": index})


def slice_backward(grad, shape, dim, start, stop, step):
    return _embed(grad, shape=shape, kind="slice",
                  args={"dim": dim, "start": start, "stop": stop, "step": step})


def diagonal_backward(grad, shape, offset, dim1, dim2):
    return _embed(grad, shape=shape, kind="diagonal",
                  args={"offset": offset, "dim1": dim1, "dim2": dim2})


def unfold_backward(grad, shape, dimension, size, step):
    return _embed(grad, shape=shape, kind="unfold",
                  args={"dimension": dimension, "size": size, "step": step})


def as_strided_backward(grad, shape, size, stride, offset):
    return _embed(grad, shape=shape, kind="as_strided",
                  args={"size": tuple(size), "stride": tuple(stride), "offset": offset})


def index_fill_grad(grad, indices, shape, dim, keepdim):
    """Gradient of max/min along dim: `grad` placed at the chosen indices, zeros elsewhere."""
    if not keepdim and len(shape):
        grad = grad.unsqueeze(dim)
        indices = np.expand_dims(indices, dim)
    if not len(shape):
        return grad
    from .creation import zeros
    idx = Tensor._make(indices, D.int64)
    return zeros(shape, dtype=grad._dtype).scatter(dim, idx, grad)


# ----------------------------------------------------------------------------- advanced index
def _numpy_error(exc, shape):
    msg = str(exc)
    if "out of bounds" in msg:
        msg = msg.replace("axis", "dimension")
        return IndexError(msg)
    if "boolean index did not match" in msg:
        return IndexError(msg)
    return IndexError(msg)


@primitive("index", node="IndexBackward0")
def _index(xp, self, *, indices):
    try:
        return self[indices]
    except IndexError as exc:
        raise _numpy_error(exc, self.shape) from None


@_index.derivative
def _(ctx, grad):
    from .creation import zeros
    return _index_put(zeros(ctx.input_shape(), dtype=grad._dtype), grad,
                      indices=ctx.indices, accumulate=True)


@primitive("index_put", node="IndexPutBackward0")
def _index_put(xp, self, values, *, indices, accumulate):
    out = self.copy()
    if accumulate:
        from .._backend import backend
        np.add.at(out, indices, np.broadcast_to(values, out[indices].shape))
    else:
        out[indices] = values
    return out


@_index_put.derivative
def _(ctx, grad):
    g_self = grad if ctx.accumulate else _index_put(grad, grad.new_zeros(()),
                                                    indices=ctx.indices, accumulate=False)
    g_values = _index(grad, indices=ctx.indices)
    from .reduction import sum_to_size
    return g_self, sum_to_size(g_values, ctx.input_shape(1)) if \
        g_values.shape != ctx.input_shape(1) else g_values


def _to_index_array(x, device):
    if isinstance(x, Tensor):
        if x._dtype._category >= 2:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        a = x._data
        return a if a.dtype == np.bool_ or a.dtype.kind == "i" else a.astype(np.int64) \
            if a.dtype != np.uint8 else a.astype(bool)
    if isinstance(x, np.ndarray):
        return x
    a = np.asarray(x)
    if a.dtype.kind == "f":
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return a


def _normalise_index(index):
    if not isinstance(index, tuple):
        index = (index,)
    return index


def _is_basic(item):
    return item is None or item is Ellipsis or isinstance(item, (int, slice, np.integer)) \
        and not isinstance(item, bool)


def getitem(self, index):
    index = _normalise_index(index)
    if all(_is_basic(i) or (isinstance(i, Tensor) and i._data.ndim == 0 and
                            i._dtype._category == 1) for i in index):
        return _basic_getitem(self, tuple(i.item() if isinstance(i, Tensor) else i
                                          for i in index))
    arrays = tuple(_to_index_array(i, self._device) if not (_is_basic(i)) else i
                   for i in index)
    return _index(self, indices=arrays)


def _basic_getitem(t, index):
    n_specified = sum(1 for i in index if i is not None and i is not Ellipsis)
    if n_specified > t._data.ndim:
        raise IndexError(f"too many indices for tensor of dimension {t._data.ndim}")
    dim = 0
    out = t
    result_is_view = False
    for item in index:
        if item is None:
            out = V._unsqueeze(out, dim=dim)
            dim += 1
        elif item is Ellipsis:
            dim += out._data.ndim - dim - (n_specified - _count_before(index, item))
        elif isinstance(item, slice):
            size = out._data.shape[dim]
            step = 1 if item.step is None else item.step
            if step <= 0:
                raise ValueError("step must be greater than zero")
            start, stop, _ = slice(item.start, item.stop, 1).indices(size)
            if not (start == 0 and stop >= size and step == 1):
                out = V._slice(out, dim=dim, start=start, stop=max(stop, start), step=step)
                result_is_view = True
            dim += 1
        else:
            out = V.select(out, dim, int(item))
    if out is t:
        # x[:] and x[...] still return a new view, as in PyTorch
        out = V._slice(t, dim=0, start=0, stop=t.shape[0], step=1) if t._data.ndim else \
            V._view(t, shape=())
    return out


def _count_before(index, ellipsis):
    count = 0
    for i in index:
        if i is ellipsis:
            break
        if i is not None:
            count += 1
    return count


def setitem(self, index, value):
    index = _normalise_index(index)
    if not isinstance(value, Tensor):
        from .creation import scalar_tensor
        value = scalar_tensor(value, self, self._dtype if not isinstance(value, (list, tuple))
                              else None) if not isinstance(value, (list, tuple)) else \
            __import__("ember").tensor(value, dtype=self._dtype)
    if all(_is_basic(i) or (isinstance(i, Tensor) and i._data.ndim == 0 and
                            i._dtype._category == 1) for i in index):
        target = _basic_getitem(self, tuple(i.item() if isinstance(i, Tensor) else i
                                            for i in index))
        from .creation import copy_
        copy_(target, value)
        return
    arrays = tuple(_to_index_array(i, self._device) if not _is_basic(i) else i for i in index)
    index_put_(self, arrays, value)


def index_put_(self, indices, values, accumulate=False):
    if isinstance(indices, tuple) and indices and isinstance(indices[0], Tensor):
        indices = tuple(_to_index_array(i, self._device) for i in indices)
    if values._dtype is not self._dtype:
        values = values.to(self._dtype)
    return _index_put.inplace(self, values, indices=indices, accumulate=accumulate)


def index_put(self, indices, values, accumulate=False):
    return index_put_(self.clone(), indices, values, accumulate)


# ----------------------------------------------------------------------------- gather / scatter
def _check_index(index, name):
    if index._dtype is not D.int64:
        raise RuntimeError(f"{name}(): Expected dtype int64 for index")


def _full_indices(index, dim):
    """numpy advanced-index tuple addressing, for each index element, its target position."""
    grids = list(np.indices(index.shape, sparse=True))
    grids[dim] = index
    return tuple(grids)


@primitive("gather", node="GatherBackward0")
def _gather(xp, self, *, dim, index):
    if index.size and (index.max() >= self.shape[dim] or index.min() < -self.shape[dim]):
        bad = int(index.max() if index.max() >= self.shape[dim] else index.min())
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size "
                           f"{self.shape[dim]}")
    return self[_full_indices(index, dim)]


@_gather.derivative
def _(ctx, grad):
    from .creation import zeros
    idx = Tensor._make(ctx.index, D.int64)
    return zeros(ctx.input_shape(), dtype=grad._dtype).scatter_add(ctx.dim, idx, grad)


def gather(input, dim, index, *, sparse_grad=False, out=None):
    _check_index(index, "gather")
    d = wrap_dim(dim, input._data.ndim)
    if index._data.ndim != input._data.ndim and not (index._data.ndim <= 1 and
                                                      input._data.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input "
                           "tensor")
    return _gather(input, dim=d, index=index._data)


@primitive("scatter", node="ScatterBackward0")
def _scatter(xp, self, src, *, dim, index, reduce=None):
    out = self.copy()
    where = _full_indices(index, dim)
    values = src[tuple(slice(0, s) for s in index.shape)] if src.ndim else src
    if reduce is None:
        out[where] = values
    elif reduce == "add":
        np.add.at(out, where, values)
    elif reduce == "multiply":
        np.multiply.at(out, where, values)
    return out


@_scatter.derivative
def _(ctx, grad):
    idx = Tensor._make(ctx.index, D.int64)
    g_self = grad.scatter(ctx.dim, idx, 0.0)
    g_src = grad.gather(ctx.dim, idx)
    return g_self, _pad_to(g_src, ctx.input_shape(1))


def _pad_to(g, shape):
    if tuple(g.shape) == tuple(shape) or not len(shape):
        return g if len(shape) else g.sum()
    from .creation import zeros
    out = zeros(shape, dtype=g._dtype)
    region = tuple(slice(0, s) for s in g.shape)
    return _index_put(out, g, indices=region, accumulate=False)


@primitive("scatter_add", node="ScatterAddBackward0")
def _scatter_add(xp, self, src, *, dim, index):
    out = self.copy()
    values = src[tuple(slice(0, s) for s in index.shape)]
    np.add.at(out, _full_indices(index, dim), values)
    return out


@_scatter_add.derivative
def _(ctx, grad):
    idx = Tensor._make(ctx.index, D.int64)
    return grad, _pad_to(grad.gather(ctx.dim, idx), ctx.input_shape(1))


def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    _check_index(index, "scatter")
    if src is None:
        src = value
    d = wrap_dim(dim, input._data.ndim)
    if not isinstance(src, Tensor):
        from .creation import scalar_tensor
        src = scalar_tensor(src, input, input._dtype)
    elif src._dtype is not input._dtype:
        raise RuntimeError(f"scatter(): Expected self.dtype to be equal to src.dtype")
    return _scatter(input, src, dim=d, index=index._data, reduce=reduce)


def scatter_add(input, dim, index, src):
    _check_index(index, "scatter_add")
    return _scatter_add(input, src, dim=wrap_dim(dim, input._data.ndim), index=index._data)


def scatter_(self, dim, index, src=None, value=None, *, reduce=None):
    if src is None:
        src = value
    if not isinstance(src, Tensor):
        from .creation import scalar_tensor
        src = scalar_tensor(src, self, self._dtype)
    return _scatter.inplace(self, src, dim=wrap_dim(dim, self._data.ndim), index=index._data,
                            reduce=reduce)


def scatter_add_(self, dim, index, src):
    return _scatter_add.inplace(self, src, dim=wrap_dim(dim, self._data.ndim),
                                index=index._data)


@primitive("index_select", node="IndexSelectBackward0")
def _index_select(xp, self, *, dim, index):
    return xp.take(self, index, axis=dim) if self.ndim else self.copy()


@_index_select.derivative
def _(ctx, grad):
    from .creation import zeros
    out = zeros(ctx.input_shape(), dtype=grad._dtype)
    if not len(ctx.input_shape()):
        return grad
    return index_add(out, ctx.dim, Tensor._make(ctx.index, D.int64), grad)


def index_select(input, dim, index, *, out=None):
    if index._data.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    size = input.shape[wrap_dim(dim, input._data.ndim)] if input._data.ndim else 1
    if index._data.size and (index._data.max() >= size or index._data.min() < -size):
        raise IndexError(f"index out of range in self")
    return _index_select(input, dim=wrap_dim(dim, input._data.ndim),
                         index=index._data.reshape(-1))


@primitive("index_add", node="IndexAddBackward0")
def _index_add(xp, self, source, *, dim, index, alpha):
    out = self.copy()
    moved = np.moveaxis(out, dim, 0)
    np.add.at(moved, index, np.moveaxis(source, dim, 0) * alpha)
    return out


@_index_add.derivative
def _(ctx, grad):
    idx = Tensor._make(ctx.index, D.int64)
    g_src = grad.index_select(ctx.dim, idx)
    return grad, g_src * ctx.alpha if ctx.alpha != 1 else g_src


def index_add(input, dim, index, source, *, alpha=1):
    return _index_add(input, source, dim=wrap_dim(dim, input._data.ndim), index=index._data,
                      alpha=alpha)


def masked_select(input, mask):
    if mask._dtype is not D.bool_:
        raise RuntimeError(f"masked_select: expected BoolTensor for mask")
    shape = np.broadcast_shapes(input.shape, mask.shape)
    x = input.expand(shape) if tuple(input.shape) != shape else input
    m = np.broadcast_to(mask._data, shape)
    return _masked_select(x, indices=(m,))


@primitive("masked_select", node="MaskedSelectBackward0")
def _masked_select(xp, self, *, indices):
    return self[indices]


@_masked_select.derivative
def _(ctx, grad):
    from .creation import zeros
    return _index_put(zeros(ctx.input_shape(), dtype=grad._dtype), grad,
                      indices=ctx.indices, accumulate=True)


def nonzero(input, *, as_tuple=False, out=None):
    idx = np.nonzero(input._data) if input._data.ndim else \
        ((np.zeros(1, np.int64),) if input._data.item() else (np.zeros(0, np.int64),))
    if as_tuple:
        return tuple(Tensor._make(i.astype(np.int64), D.int64, input._device) for i in idx)
    stacked = np.stack(idx, axis=1) if input._data.ndim else \
        np.zeros((len(idx[0]), 0), np.int64)
    return Tensor._make(stacked.astype(np.int64), D.int64, input._device)


def argwhere(input):
    return nonzero(input)


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
    from .creation import zeros
    if not len(ctx.input_shape()):
        return grad
    idx = Tensor._make(ctx.result1, D.int64)
    return zeros(ctx.input_shape(), dtype=grad._dtype).scatter(ctx.dim, idx, grad)


def sort(input, dim=-1, descending=False, stable=False, *, out=None):
    from .reduction import _named
    v, i = _sort(input, dim=wrap_dim(dim, input._data.ndim), descending=descending,
                 stable=stable)
    return _named("sort")(v, i)


def argsort(input, dim=-1, descending=False, stable=False):
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
    d = wrap_dim(dim, input._data.ndim)
    size = input.shape[d] if input._data.ndim else 1
    if k < 0 or k > size:
        raise RuntimeError("selected index k out of range")
    from .reduction import _named
    v, i = _topk(input, k=k, dim=d, largest=largest, sorted=sorted)
    return _named("topk")(v, i)


def kthvalue(input, k, dim=-1, keepdim=False):
    v, i = sort(input, dim)
    d = wrap_dim(dim, input._data.ndim)
    v, i = v.narrow(d, k - 1, 1), i.narrow(d, k - 1, 1)
    if not keepdim:
        v, i = v.squeeze(d), i.squeeze(d)
    from .reduction import _named
    return _named("kthvalue")(v, i)


# ----------------------------------------------------------------------------- reshuffles
@primitive("flip", node="FlipBackward0")
def _flip(xp, self, *, dims):
    return xp.flip(self, axis=dims).copy() if dims else self.copy()


@_flip.derivative
def _(ctx, grad):
    return grad.flip(ctx.dims)


def flip(input, dims):
    if isinstance(dims, int):
        dims = (dims,)
    return _flip(input, dims=tuple(wrap_dim(d, input._data.ndim) for d in dims))


def fliplr(input):
    return flip(input, (1,))


def flipud(input):
    return flip(input, (0,))


@primitive("roll", node="RollBackward0")
def _roll(xp, self, *, shifts, dims):
    if dims is None:
        return xp.roll(self.reshape(-1), shifts).reshape(self.shape)
    return xp.roll(self, shifts, axis=dims)


@_roll.derivative
def _(ctx, grad):
    s = ctx.shifts
    neg = tuple(-x for x in s) if isinstance(s, tuple) else -s
    return grad.roll(neg, ctx.dims)


def roll(input, shifts, dims=None):
    if dims is not None:
        dims = tuple(wrap_dim(d, input._data.ndim) for d in
                     (dims if isinstance(dims, (tuple, list)) else (dims,)))
        shifts = tuple(shifts) if isinstance(shifts, (tuple, list)) else (shifts,)
    elif isinstance(shifts, (tuple, list)):
        shifts = shifts[0]
    return _roll(input, shifts=shifts, dims=dims)


@primitive("repeat", node="RepeatBackward0")
def _repeat(xp, self, *, repeats):
    pad = len(repeats) - self.ndim
    return xp.tile(self.reshape((1,) * pad + self.shape), repeats)


@_repeat.derivative
def _(ctx, grad):
    shape = ctx.input_shape()
    reps = ctx.repeats
    pad = len(reps) - len(shape)
    full = (1,) * pad + tuple(shape)
    # split each dim into (repeat, size) and sum over the repeat axes
    split = []
    for r, s in zip(reps, full):
        split += [r, s]
    g = grad.reshape(split).sum(tuple(range(0, 2 * len(full), 2)))
    return g.reshape(shape)


def repeat(self, *sizes):
    from ._utils import as_shape
    reps = as_shape(sizes)
    if len(reps) < self._data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    return _repeat(self, repeats=reps)


def tile(input, dims):
    dims = tuple(dims)
    if len(dims) < input._data.ndim:
        dims = (1,) * (input._data.ndim - len(dims)) + dims
    return _repeat(input, repeats=dims)


def _tri(name, node, fn):
    op = primitive(name, node=node)(lambda xp, self, *, diagonal: fn(self, diagonal))

    @op.derivative
    def _(ctx, grad):
        return getattr(grad, name)(ctx.diagonal)

    def public(input, diagonal=0, *, out=None):
        if input._data.ndim < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        return op(input, diagonal=diagonal)
    return public


tril = _tri("tril", "TrilBackward0", lambda a, k: np.tril(a, k))
triu = _tri("triu", "TriuBackward0", lambda a, k: np.triu(a, k))


def masked_scatter(input, mask, source):
    out = input.clone()
    m = np.broadcast_to(mask._data, input.shape)
    n = int(m.sum())
    out[Tensor._make(m.copy(), D.bool_)] = source.reshape(-1)[:n]
    return out
