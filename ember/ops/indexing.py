"""Indexing: __getitem__/__setitem__, gather/scatter, selection, sorting, and reshuffles.

Also the derivatives of the view ops: each places a gradient into zeros of the input's shape
through the same view (`_embed`), which is itself differentiable (its derivative is the view).
"""
import numbers

import numpy as np

from .. import _backend
from .. import _dtype as D
from .._tensor import Tensor
from ._utils import REQUIRED, int_arg, require, wrap_dim, wrap_dims
from .registry import check_broadcast, primitive, write_into
from ..autograd import forward_ad as _forward_ad
from . import views as V


# ----------------------------------------------------------------------------- view derivatives
def _array_view(xp, a, kind, args):
    """The (writable) view of array `a` that a view op of this kind and args makes."""
    if kind == "select":
        return a[(slice(None),) * args["dim"] + (args["index"], Ellipsis)]
    if kind == "slice":
        return a[(slice(None),) * args["dim"] + (slice(args["start"], args["stop"],
                                                       args["step"]),)]
    if kind == "diagonal":
        return V._diagonal.forward(xp, a, **args)
    raise AssertionError(kind)


def _embed_forward(xp, grad, *, shape, kind, args):
    out = xp.zeros(shape, grad.dtype)
    if kind == "unfold":
        # windows may overlap: accumulate through flat positions
        positions = _positions(xp, shape, kind, args)
        flat = xp.zeros(int(np.prod(shape)), grad.dtype)
        _backend.of(xp).scatter_add(flat, positions.reshape(-1),
                                                           grad.reshape(-1))
        return flat.reshape(shape)
    view = _array_view(xp, out, kind, args)
    view[...] = grad
    return out


def _positions(xp, shape, kind, args):
    ids = xp.arange(int(np.prod(shape)), dtype=xp.int64).reshape(shape)
    if kind == "unfold":
        windows = _backend.of(xp).windows(ids, args["size"], args["dimension"])
        return windows[(slice(None),) * args["dimension"] +
                       (slice(None, None, args["step"]),)]


def _embed_derivative(ctx, grad):
    kind, a = ctx.kind, ctx.args
    if kind == "select":
        return grad.select(a["dim"], a["index"])
    if kind == "slice":
        return V._slice(grad, dim=a["dim"], start=a["start"], stop=a["stop"], step=a["step"])
    if kind == "diagonal":
        return grad.diagonal(a["offset"], a["dim1"], a["dim2"])
    return grad.unfold(a["dimension"], a["size"], a["step"])


# one op per view kind, as each is its own node in torch's graph (SelectBackwardBackward0, ...)
_EMBEDS = {}
for _kind in ("select", "slice", "diagonal", "unfold"):
    _EMBEDS[_kind] = primitive(f"{_kind}_backward",
                               node=f"{_kind.capitalize()}BackwardBackward0")(_embed_forward)
    _EMBEDS[_kind].derivative(_embed_derivative)


def _embed(grad, *, shape, kind, args):
    return _EMBEDS[kind](grad, shape=shape, kind=kind, args=args)


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


def as_strided_backward(grad, out_geometry, in_geometry):
    """The gradient of an as_strided view: through the memory both geometries address. Input
    elements that share memory (an expanded input) share that memory's gradient equally."""
    return _restride(grad, src=out_geometry, dst=in_geometry, share="dst")


def _storage_positions(xp, geometry):
    """For each element of a (shape, strides, offset) geometry, its index in memory."""
    shape, strides, offset = geometry
    pos = xp.full((), offset, dtype=xp.int64)
    for d, (n, st) in enumerate(zip(shape, strides)):
        pos = pos + (xp.arange(n, dtype=xp.int64) * st).reshape((n,) + (1,) * (len(shape) - d - 1))
    return xp.broadcast_to(pos, shape)


@primitive("_restride", node="AsStridedScatterBackward0")
def _restride(xp, grad, *, src, dst, share=None):
    """Sum the elements of `grad` (laid out in memory as `src`) into memory, then read that
    memory as `dst`. `share` names the side whose elements divide a memory location's value
    among themselves when several of them address it. Linear; its adjoint swaps src and dst
    (and the side that shares)."""
    src_pos, dst_pos = _storage_positions(xp, src), _storage_positions(xp, dst)
    size = 1 + max(int(src_pos.max()) if src_pos.size else 0,
                   int(dst_pos.max()) if dst_pos.size else 0)
    if share == "src":
        grad = grad / xp.bincount(src_pos.reshape(-1), minlength=size)[src_pos]
    memory = xp.zeros(size, grad.dtype)
    _backend.of(xp).scatter_add(memory, src_pos.reshape(-1),
                                                       grad.reshape(-1))
    out = memory[dst_pos]
    if share == "dst":
        out = out / xp.bincount(dst_pos.reshape(-1), minlength=size)[dst_pos]
    return out.astype(grad.dtype, copy=False)


@_restride.derivative
def _(ctx, grad):
    share = {"src": "dst", "dst": "src"}.get(ctx.share)
    return _restride(grad, src=ctx.dst, dst=ctx.src, share=share)


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
@primitive("index", node="IndexBackward0")
def _index(xp, self, *, indices):
    # PyTorch's result is a fresh contiguous tensor; NumPy may lay it out otherwise
    return xp.ascontiguousarray(self[indices])


@_index.derivative
def _(ctx, grad):
    from .creation import zeros
    return _index_put(zeros(ctx.input_shape(), dtype=grad._dtype), grad,
                      indices=ctx.indices, accumulate=True)


@primitive("index_put", node="IndexPutBackward0")
def _index_put(xp, self, values, *, indices, accumulate):
    out = self.copy()
    if accumulate:
        _backend.of(xp).scatter_add(out, indices, xp.broadcast_to(values, out[indices].shape))
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


_INVALID_INDEX = ("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                  "Variables are valid indices (got {})")


def _index_array(item):
    """An advanced index (tensor, list, array, bool) as a NumPy int64 or bool array."""
    if isinstance(item, Tensor):
        if item._dtype._category >= 2:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        a = item._host()
        if a.dtype == np.uint8:
            import warnings
            warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                          "torch.bool instead. (Triggered internally at "
                          "/pytorch/aten/src/ATen/native/IndexingUtils.h:37.)", UserWarning,
                          stacklevel=4)
            return a.astype(bool)
        return a if a.dtype == np.bool_ else a.astype(np.int64, copy=False)
    if isinstance(item, (bool, np.bool_)):
        return np.array(bool(item))
    if isinstance(item, (list, tuple)) and not item:
        return np.zeros(0, np.int64)
    a = np.asarray(item) if not isinstance(item, str) else None
    if a is None or a.dtype == object or a.dtype.kind in "cUSV":
        from .creation import tensor
        return _index_array(tensor(item))
    # a list (or array) of numbers becomes a long index: floats are truncated, as in PyTorch
    return a if a.dtype == np.bool_ else a.astype(np.int64, copy=False)


def _as_index_tuple(index):
    """PyTorch's reading of an index: a tuple of items (a list of sequences counts as a tuple,
    with PyTorch's deprecation warning)."""
    if isinstance(index, tuple):
        return index
    if isinstance(index, list) and len(index) < 32 and any(
            isinstance(i, (Tensor, list, tuple, slice)) or i is None or i is Ellipsis
            for i in index):
        import warnings
        warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated "
                      "and will be changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. "
                      "In pytorch 2.9 this will be interpreted as tensor index, "
                      "x[torch.tensor(seq)], which will result either in an error or a "
                      "different result (Triggered internally at "
                      "/pytorch/torch/csrc/autograd/python_variable_indexing.cpp:349.)",
                      UserWarning, stacklevel=4)
        return tuple(index)
    return (index,)


def _is_int(item):
    return isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_)) or (
        isinstance(item, Tensor) and item._data.ndim == 0 and item._dtype._category == 1)


def _apply_index(self, index):
    """Apply the basic part of an index as views (ints select, slices slice, None unsqueezes)
    and collect the advanced part: (view, {dim of the view: index array}).

    As in PyTorch, integers are applied first, so they never take part in advanced-index
    broadcasting.
    """
    items = _as_index_tuple(index)
    consumed = 0
    for item in items:
        if item is None or item is Ellipsis or isinstance(item, (bool, np.bool_)):
            continue
        if isinstance(item, Tensor) and item._dtype is D.bool_ or \
                isinstance(item, np.ndarray) and item.dtype == np.bool_:
            consumed += max(item.ndim, 0)
        else:
            consumed += 1
    ndim = self._data.ndim
    if consumed > ndim:
        if ndim == 0 and isinstance(index, slice):      # (a lone slice, not in a tuple)
            raise IndexError("slice() cannot be applied to a 0-dim tensor.")
        if ndim == 0 and len(items) == 1 and _is_int(items[0]):
            if items[0] != 0:   # (only a 0 is taken for an attempt to read the number)
                raise IndexError(f"index {int(items[0])} is out of bounds for dimension 0 with "
                                 f"size 0")
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                             "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    out, dim, advanced = self, 0, {}
    # a lone slice (x[a:b], not in a tuple) is always applied; in a tuple a full one is not
    skip_full = not isinstance(index, slice)
    for position, item in enumerate(items):
        if item is None:
            out = _unsqueeze_item(out, dim)
            dim += 1
        elif item is Ellipsis:
            dim += ndim - consumed      # (each `...` does: a second one runs past the end)
        elif isinstance(item, slice):
            out = _slice_item(out, dim, item, skip_full)
            dim += 1
        elif _is_int(item):
            i = int(item.item() if isinstance(item, Tensor) else item)
            out = _select_item(out, dim, i, position)
        elif isinstance(item, (Tensor, list, tuple, np.ndarray, bool, np.bool_, str)):
            a = _index_array(item)
            if a.dtype == np.bool_ and a.ndim == 0:
                # x[True] / x[False]: a new dim of size 1 or 0
                out = V._unsqueeze(out, dim=dim)
                advanced[dim] = a.reshape(1)
                dim += 1
            else:
                advanced[dim] = a
                dim += a.ndim if a.dtype == np.bool_ else 1
        else:
            raise IndexError(_INVALID_INDEX.format(type(item).__name__))
    return out, advanced, items


def _slice_item(t, dim, item, skip_full=True):
    """`t` sliced by `item` along `dim`. A slice in a tuple index that is full as written
    (start 0 or none, step 1 or none, stop none or past the end) is no op of its own, as in
    PyTorch: `x[:, -3:]` still slices though it takes the whole dim."""
    step = 1 if item.step is None else int(item.step)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if step < 0:
        raise ValueError("step must be greater than zero")
    size = _size_at(t, dim)
    if skip_full and item.start in (None, 0) and step == 1 and (
            item.stop is None or int(item.stop) >= size):
        return t
    _check_dim(t, dim)
    start, stop, _ = slice(item.start, item.stop, 1).indices(size)
    return V._slice(t, dim=dim, start=start, stop=max(stop, start), step=step)


def _size_at(t, dim):
    """The size PyTorch's indexing reads for dim `dim` of `t`. Past the last dim (after a
    second `...`) it reads its small inline size/stride store unchecked: 0 for the first 5
    slots, then the strides."""
    n = t._data.ndim
    if dim < n:
        return t._data.shape[dim]
    if dim < 5:
        return 0
    return V.element_strides(t._data)[dim - 5] if dim - 5 < n else 0


def _check_dim(t, dim):
    n = t._data.ndim
    if dim >= n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(n, 1)}, "
                         f"{max(n, 1) - 1}], but got {dim})")


def _select_item(t, dim, i, position):
    """`t[..., i]` at `dim`, for the item at `position` of the index (PyTorch's messages name
    the position, not the dim)."""
    size = _size_at(t, dim)
    if i < -size or i >= size:
        raise IndexError(f"index {i} is out of bounds for dimension {position} with size "
                         f"{size}")
    _check_dim(t, dim)
    return V._select(t, dim=dim, index=i + size if i < 0 else i)


def _unsqueeze_item(t, dim):
    n = t._data.ndim
    if dim > n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n - 1}, {n}], "
                         f"but got {dim})")
    return V._unsqueeze(t, dim=dim)


def _check_index_bounds(a, size, k):
    """An advanced integer index `a` (the k-th) into a dim of `size`, PyTorch's message."""
    bad = (a >= size) | (a < -size)
    if bad.any():
        if not size:
            raise IndexError("index is out of bounds for dimension with size 0")
        raise IndexError(f"index {int(a[bad].flat[0])} is out of bounds for dimension {k} with "
                         f"size {size}")


def _advanced_tuple(t, advanced):
    """The NumPy index for the advanced part, with PyTorch's checks and messages."""
    shape = t._data.shape
    index = [slice(None)] * t._data.ndim
    int_shapes = []
    for k, (dim, a) in enumerate(sorted(advanced.items())):
        if a.dtype == np.bool_:
            for j in range(a.ndim):
                if a.shape[j] != shape[dim + j]:
                    raise IndexError(f"The shape of the mask {V._dims(a.shape)} at index {j} "
                                     f"does not match the shape of the indexed tensor "
                                     f"{V._dims(shape)} at index {dim + j}")
            index[dim] = a
            for j in range(1, a.ndim):
                index[dim + j] = None
            int_shapes.append((a.sum(),) if a.ndim else ())
        else:
            _check_index_bounds(a, shape[dim], k)
            index[dim] = a
            int_shapes.append(a.shape)
    try:
        np.broadcast_shapes(*int_shapes)
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with "
                         "shapes " + ", ".join(V._dims(s) for s in int_shapes)) from None
    return tuple(i for i in index if i is not None)


def getitem(self, index):
    out, advanced, items = _apply_index(self, index)
    if advanced:
        return _index(out, indices=_advanced_tuple(out, advanced))
    if out is self:
        return V._alias(self)      # x[...], x[:, :]: still a new tensor (x[:] is a slice)
    return out


def setitem(self, index, value):
    target, advanced, _ = _apply_index(self, index)
    if value.__class__ in (int, float, bool) and not advanced and not self._requires_grad \
            and not _forward_ad._levels:
        # the common `x[i] = number` outside autograd: write straight into the target
        _check_fits(value, self._dtype)
        write_into(target, checked_number(value, self._dtype))
        return
    value = _value_tensor(self, value)
    if advanced:
        indices = _advanced_tuple(target, advanced)
        result_shape = np.empty(target._data.shape, bool)[indices].shape
        try:
            np.broadcast_shapes(value._data.shape, result_shape)
        except ValueError:
            raise RuntimeError(f"shape mismatch: value tensor of shape "
                               f"{V._dims(value._data.shape)} cannot be broadcast to indexing "
                               f"result of shape {V._dims(result_shape)}") from None
        index_put_(target, indices, value)
        return
    # PyTorch drops the value's leading size-one dims, then expands it to the target
    shape = value._data.shape
    lead = 0
    while lead < len(shape) and shape[lead] == 1:
        lead += 1
    if lead:
        value = V._view(value, shape=shape[lead:])
    if value._data.shape != target._data.shape:
        value = V.expand(value, target._data.shape)
    from .creation import copy_
    copy_(target, value)


_CPP_NAMES = {"int64": "int64_t", "int32": "int", "int16": "int16_t", "int8": "int8_t",
              "uint8": "uint8_t", "float32": "float", "float64": "double",
              "float16": "double", "bfloat16": "double", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>"}


def _value_tensor(self, value):
    """The right-hand side of `x[i] = value` as a tensor, with PyTorch's checks for numbers."""
    if isinstance(value, Tensor):
        return value
    from .creation import scalar_tensor
    # (NumPy's integers count as Python ints; its bool, float32 and complex64 as no number)
    if isinstance(value, (bool, int, float, complex, np.integer)):
        _check_fits(value, self._dtype)
        return scalar_tensor(checked_number(value, self._dtype), self, self._dtype)
    from .._printing import legacy_type_name
    from .creation import _type_name
    raise TypeError(f"can't assign a {_type_name(value)} to a "
                    f"torch.{legacy_type_name(self._dtype, self._device)}")


def _check_fits(value, dtype):
    """PyTorch's overflow check for a Python number written into a tensor of `dtype`: an
    integer dtype takes integers in its range (uint8 also the negatives down to -255, which
    wrap) and floats in its range (no negative ones for uint8); float32 and complex64 take
    finite values in their range; only a complex dtype (or bool) takes a nonzero imaginary
    part."""
    if dtype is D.bool_:
        return
    if isinstance(value, (complex, np.complexfloating)):
        bad = not dtype.is_complex and value.imag != 0
        parts = (value.real, value.imag) if dtype.is_complex else (float(value.real),)
    else:
        bad, parts = False, (value,)
    for v in parts:
        if dtype._category == 1:
            info = np.iinfo(dtype.np)
            if isinstance(v, (bool, np.bool_)):
                continue
            if isinstance(v, (numbers.Integral)):
                low = -int(info.max) if dtype is D.uint8 else int(info.min)
                bad |= not low <= int(v) <= info.max
            else:
                bad |= not (info.min <= v <= info.max)      # (NaN fails too)
        elif dtype in (D.float32, D.complex64):   # (half types round big values to inf)
            bad |= abs(v) != float("inf") and abs(v) > float(np.finfo(np.float32).max)
    if bad:
        raise RuntimeError(f"value cannot be converted to type {_CPP_NAMES[dtype.name]} without "
                           f"overflow")


def checked_number(value, dtype):
    """A Python number (already past _check_fits) as a NumPy scalar of `dtype`: negative
    integers wrap into uint8, floats truncate into integer dtypes."""
    if isinstance(value, (complex, np.complexfloating)) and not dtype.is_complex:
        value = value.real if dtype is not D.bool_ else bool(value)
    if dtype is D.uint8 and isinstance(value, numbers.Integral) and value < 0:
        value = int(value) % 256
    return np.asarray(value).astype(dtype.np)[()]


def index_put_(self, indices, values, accumulate=False):
    if isinstance(indices, (tuple, list)) and all(
            isinstance(i, Tensor) and i._dtype is not D.bool_ for i in indices):
        # integer tensors, one per dim from the first (masks have their own checks)
        if len(indices) > self._data.ndim:
            raise IndexError(f"too many indices for tensor of dimension {self._data.ndim} "
                             f"(got {len(indices)})")
        # (checked where the indexed region has elements, or the dim has none)
        region = np.broadcast_shapes(*(i._data.shape for i in indices)) + \
            self._data.shape[len(indices):]
        for k, i in enumerate(indices):
            if all(region) or not self._data.shape[k]:
                _check_index_bounds(i._data, self._data.shape[k], k)
        if not all(region):
            return self                     # nothing to write
    if isinstance(indices, (tuple, list)) and indices and any(
            isinstance(i, Tensor) for i in indices):
        indices = tuple(_index_array(i) for i in indices)
    if values._dtype is not self._dtype:
        values = values.to(self._dtype)
    return _index_put.inplace(self, values, indices=indices, accumulate=accumulate)


def index_put(self, indices, values, accumulate=False):
    return index_put_(self.clone(), indices, values, accumulate)


# ----------------------------------------------------------------------------- gather / scatter
def _index_of(index, name, words="int32/int64"):
    """An index tensor's array as int64, after PyTorch's dtype check."""
    if index._dtype is not D.int64 and index._dtype is not D.int32:
        raise RuntimeError(f"{name}(): Expected dtype {words} for index")
    return index._data.astype(np.int64, copy=False)


def _check_bounds(index, size, dim):
    """PyTorch's gather/scatter check: every index in [0, size) (no negative indices), the
    first bad one (in index order) reported."""
    bad = (index < 0) | (index >= size)
    if bad.any():
        raise RuntimeError(f"index {int(index[bad].flat[0])} is out of bounds for dimension "
                           f"{dim} with size {size}")


def _full_indices(index, dim):
    """numpy advanced-index tuple addressing, for each index element, its target position."""
    grids = list(np.indices(index.shape, sparse=True))
    grids[dim] = index
    return tuple(grids)


@primitive("gather", node="GatherBackward0")
def _gather(xp, self, *, dim, index):
    if not self.ndim:           # a scalar gathers as a one-element vector
        return _gather.forward(xp, self.reshape(1), dim=0, index=index.reshape(-1)).reshape(
            index.shape)
    _check_bounds(index, self.shape[dim], dim)
    return self[_full_indices(index, dim)]


@_gather.derivative
def _(ctx, grad):
    from .creation import zeros
    idx = Tensor._make(ctx.index, D.int64)
    return zeros(ctx.input_shape(), dtype=grad._dtype).scatter_add(ctx.dim, idx, grad)


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
    where = _full_indices(index, dim)
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
    return grad.scatter(ctx.dim, Tensor._make(ctx.index, D.int64), 0.0)


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
    if not self.ndim:           # (as _scatter)
        return _scatter_add.forward(xp, self.reshape(1), src.reshape(-1), dim=0,
                                    index=index.reshape(-1)).reshape(())
    _check_bounds(index, self.shape[dim], dim)
    out = self.copy()
    values = src[tuple(slice(0, s) for s in index.shape)]
    _backend.of(xp).scatter_add(out, _full_indices(index, dim), values)
    return out


@_scatter_add.derivative
def _(ctx, grad):
    idx = Tensor._make(ctx.index, D.int64)
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
        import warnings
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
    idx = _index_of(index, "index_select", "int32 or int64")
    if index._data.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = wrap_dim(dim, input._data.ndim)
    if not input._data.ndim and idx.size != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                           f"{idx.size} value(s)")
    size = input.shape[d] if input._data.ndim else 1
    bad = (idx < 0) | (idx >= size)                 # (negative indices are out of range too)
    if bad.any():
        if input._data.ndim > 1 and not size:
            raise RuntimeError("index_select(): self indexing axis dim should be positive")
        if input._data.ndim > 1 and (d == 1 or not input._data.size):
            # (PyTorch's kernel for dim 1, and for an empty input, says this)
            raise RuntimeError(f"INDICES element is out of DATA bounds, id="
                               f"{int(idx[bad].flat[0])} axis_dim={size}")
        raise IndexError("index out of range in self")
    return _index_select(input, dim=d, index=idx.reshape(-1))


@primitive("index_add", node="IndexAddBackward0")
def _index_add(xp, self, source, *, dim, index, alpha):
    out = self.copy()
    if not out.size:            # (an empty input runs no kernel: its indices go unchecked)
        return out
    moved = xp.moveaxis(out, dim, 0)
    _backend.of(xp).scatter_add(moved, index, xp.moveaxis(source, dim, 0) * alpha)
    return out


@_index_add.derivative
def _(ctx, grad):
    idx = Tensor._make(ctx.index, D.int64)
    g_src = grad.index_select(ctx.dim, idx)
    return grad, g_src * ctx.alpha if ctx.alpha != 1 else g_src


def index_add(input, dim, index, source, *, alpha=1):
    d = wrap_dim(dim, input._data.ndim)
    _check_index_add(input, d, index, source)
    if not input._data.ndim:    # a scalar is added into as a one-element vector
        return _index_add(input.reshape(1), source.reshape(1), dim=0,
                          index=index._data.reshape(-1), alpha=alpha).reshape(())
    return _index_add(input, source, dim=d, index=index._data.reshape(-1), alpha=alpha)


def _check_index_add(input, d, index, source):
    """index_add's argument checks, in PyTorch's order."""
    from .._printing import scalar_type_name
    if index._data.ndim > 1:
        raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: "
                         f"{index._data.ndim} with type: {scalar_type_name(index._dtype)} and "
                         f"size: {V._dims(index.shape)}")
    if index._dtype not in (D.int32, D.int64):
        raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: "
                           f"{scalar_type_name(index._dtype)}")
    if source._dtype is not input._dtype:
        raise RuntimeError(f"index_add_(): self ({scalar_type_name(input._dtype)}) and source "
                           f"({scalar_type_name(source._dtype)}) must have the same scalar type")
    n = index._data.size
    if not source._data.ndim and n != 1:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    along = source.shape[d] if source._data.ndim else 1
    if n != along:
        raise RuntimeError(f"index_add_(): Number of indices ({n}) should be equal to "
                           f"source.size(dim): ({along}), for dim: {d}")
    others = [s for i, s in enumerate(input.shape) if i != d]
    if source._data.ndim != input._data.ndim or \
            [s for i, s in enumerate(source.shape) if i != d] != others:
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {V._dims(input.shape)} "
                           f"source.shape = {V._dims(source.shape)}")
    size = input.shape[d] if input._data.ndim else 1
    bad = (index._data < 0) | (index._data >= size)
    if bad.any() and input._data.size:
        raise RuntimeError(f"index {int(index._data[bad].flat[0])} is out of bounds for "
                           f"dimension {d} with size {size}")
    if bad.any() and input._data.ndim == 1:    # (an empty input is checked only when 1-dim)
        raise IndexError("index out of range in self")


def masked_select(input, mask):
    if mask._dtype is not D.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    check_broadcast([mask, input])
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
    from .reduction import _named
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
    from .reduction import _named
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
        from .reduction_extra import _no_complex
        _no_complex("kthvalue_cpu", input, bool_too=True)
    from .reduction import _named
    v, i = _kthvalue(input, k=k, dim=d, keepdim=keepdim)
    return _named("kthvalue")(v, i)


# ----------------------------------------------------------------------------- reshuffles
@primitive("flip", node="FlipBackward0")
def _flip(xp, self, *, dims):
    # (the result is laid out in memory as the input is, as PyTorch's copies are)
    from .creation import copy_strides, strided_empty
    flipped = xp.flip(self, axis=dims) if dims else self
    strides = copy_strides(self)
    if strides is None:
        return flipped.copy()
    out = strided_empty(xp, self.shape, strides, self.dtype)
    out[...] = flipped
    return out


@_flip.derivative
def _(ctx, grad):
    return grad.flip(ctx.dims)


def _flip_dims(args, dims, position, name="flip"):
    """flip's (or tile's, `name`) dims as PyTorch's parser takes them: given positionally (ints,
    or one sequence, parsed as a size is; at `position`) or as the keyword `dims` (a sequence
    only)."""
    from .creation import _sizes
    if args and dims is not REQUIRED:
        raise TypeError(f"{name}() got multiple values for argument 'dims'")
    if not args:
        require(name, "dims", dims, position)
        if not isinstance(dims, (tuple, list)) or not all(_is_int(d) for d in dims):
            raise TypeError(f"{name}(): argument 'dims' must be tuple of ints, not "
                            f"{type(dims).__name__}")
        return tuple(d.__index__() for d in dims)
    if position == 2 and not isinstance(args[0], (tuple, list)):   # torch.flip(x, 0)
        raise TypeError(f"{name}(): argument 'dims' (position 2) must be tuple of ints, not "
                        f"{type(args[0]).__name__}")
    try:
        return _sizes(name, args, "dims")
    except TypeError as e:                          # (_sizes' messages are for position 1)
        raise TypeError(str(e).replace("(position 1)", f"(position {position})")) from None


def _flip_public(input, dims):
    return _flip(input, dims=wrap_dims(dims, input._data.ndim))  # (repeated dims: an error)


def flip(input, *args, dims=REQUIRED):
    """torch.flip(input, dims): dims is a sequence."""
    if len(args) > 1:
        raise TypeError(f"flip() takes 2 positional arguments but {len(args) + 1} were given")
    return _flip_public(input, _flip_dims(args, dims, 2))


def flip_method(self, *args, dims=REQUIRED):
    """Tensor.flip(*dims): ints, one sequence, or the keyword dims."""
    return _flip_public(self, _flip_dims(args, dims, 1))


def fliplr(input):
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input):
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


@primitive("roll", node="RollBackward0")
def _roll(xp, self, *, shifts, dims):
    if dims is None:
        return xp.roll(self.reshape(-1), shifts).reshape(self.shape)
    return V.contiguous_array(xp, xp.roll(self, shifts, axis=dims))   # (PyTorch's is contiguous)


@_roll.derivative
def _(ctx, grad):
    s = ctx.shifts
    neg = tuple(-x for x in s) if isinstance(s, tuple) else -s
    return grad.roll(neg, ctx.dims)


def roll(input, shifts, dims=None):
    shifts = tuple(shifts) if isinstance(shifts, (tuple, list)) else (shifts,)
    dims = () if dims is None else tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims and len(shifts) == 1:               # no dims: roll the flattened tensor
        return _roll(input, shifts=shifts[0], dims=None)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    if not input._data.ndim:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    return _roll(input, shifts=shifts, dims=tuple(wrap_dim(d, input._data.ndim) for d in dims))


@primitive("repeat", node="RepeatBackward0")
def _repeat(xp, self, *, repeats):
    pad = len(repeats) - self.ndim
    # (contiguous as PyTorch's, even where NumPy copies the input's layout)
    return V.contiguous_array(xp, xp.tile(self.reshape((1,) * pad + self.shape), repeats))


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
    if not sizes:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    reps = as_shape(sizes)
    if len(reps) < self._data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    shape = (1,) * (len(reps) - self._data.ndim) + self._data.shape
    from .creation import _check_sizes
    _check_sizes([r * s for r, s in zip(reps, shape)])      # (the result's size)
    # (a negative repeat of an empty dim is fine: the result is empty there either way)
    return _repeat(self, repeats=tuple(max(r, 0) for r in reps))


def tile(input, *args, dims=REQUIRED):
    """torch.tile(input, dims): dims is a sequence."""
    if len(args) > 1:
        raise TypeError(f"tile() takes 2 positional arguments but {len(args) + 1} were given")
    return _tile(input, _flip_dims(args, dims, 2, "tile"))


def tile_method(self, *args, dims=REQUIRED):
    """Tensor.tile(*dims): ints, one sequence, or the keyword dims."""
    return _tile(self, _flip_dims(args, dims, 1, "tile"))


def _tile(input, dims):
    # tile is repeat with dims padded by leading 1s to the input's rank
    return repeat(input, (1,) * (input._data.ndim - len(dims)) + dims)


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
