"""Indexing: __getitem__/__setitem__, gather/scatter, selection, sorting, and reshuffles.

Also the derivatives of the view ops: each places a gradient into zeros of the input's shape
through the same view (`_embed`), which is itself differentiable (its derivative is the view).
"""
import collections.abc
import numbers
import operator

import numpy as np

from .. import _backend, _dtype as D, _dtype_kernels
from .._backend import backend
from .._tensor import Tensor, _type_name as _argument_type_name
from ..autograd import forward_ad as _forward_ad
from . import views as V
from ._utils import wrap_dim
from .registry import primitive, write_into, check_broadcast, xp_of
from .tensor_info import _as_int64
import warnings
from .._printing import legacy_type_name, scalar_type_name
from .views import diagonal_backward
from . import creation as _creation


# ----------------------------------------------------------------------------- advanced index
@primitive("index", node="IndexBackward0")
def _index(xp, self, *, indices):
    # PyTorch's result is a fresh contiguous tensor; NumPy may lay it out otherwise
    return xp.ascontiguousarray(self[indices])


@_index.derivative
def _(ctx, grad):
    return _index_put(_creation.zeros(ctx.input_shape(), dtype=grad._dtype, device=grad._device), grad,
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
    from .reduction import sum_to_size  # (cycle: ops.reduction -> ops.pointwise -> this module)
    return g_self, sum_to_size(g_values, ctx.input_shape(1)) if \
        g_values.shape != ctx.input_shape(1) else g_values


_INVALID_INDEX = ("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                  "Variables are valid indices (got {})")


def _index_array(item):
    """An advanced index (tensor, list, array, bool) as a NumPy int64 or bool array."""
    if isinstance(item, Tensor):
        if item._dtype not in (D.int64, D.int32, D.uint8, D.bool_):
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        a = item._data              # kept on its device (see _advanced_tuple)
        if a.dtype == np.uint8:
            warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                          "torch.bool instead. (Triggered internally at "
                          "/pytorch/aten/src/ATen/native/IndexingUtils.h:37.)", UserWarning,
                          stacklevel=4)
            return a.astype(bool)
        return a if a.dtype == np.bool_ else a.astype(np.int64, copy=False)
    if isinstance(item, (bool, np.bool_)):
        return np.array(bool(item))
    if isinstance(item, np.ndarray) and item.dtype == np.uint8 and item.ndim:
        return _index_array(_creation.tensor(item))   # a uint8 mask, with PyTorch's warning
    if isinstance(item, (list, tuple)) and not item:
        return np.zeros(0, np.int64)
    a = np.asarray(item) if not isinstance(item, str) else None
    if a is None or a.dtype == object or a.dtype.kind in "cUSV":
        return _index_array(_creation.tensor(item))
    # a list (or array) of numbers becomes a long index: floats are truncated, as in PyTorch
    return a if a.dtype == np.bool_ else a.astype(np.int64, copy=False)


def _is_sequence(obj):
    """Python's sequence protocol as PyTorch's index parsing sees it (ranges, strings and
    NumPy arrays count; sets and dicts do not)."""
    return isinstance(obj, (collections.abc.Sequence, np.ndarray, memoryview, bytearray))


def _as_index_tuple(index):
    """PyTorch's reading of an index: a tuple of items. A short non-tuple sequence (a list, a
    range, ...) holding a sequence, tensor, slice, None or Ellipsis also counts as a tuple,
    with PyTorch's deprecation warning; a tensor or a NumPy array never does."""
    if isinstance(index, tuple):
        return index
    if _is_sequence(index) and not isinstance(index, np.ndarray) and len(index) < 32 and any(
            isinstance(i, (Tensor, slice)) or _is_sequence(i) or i is None or i is Ellipsis
            for i in index):
        warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated "
                      "and will be changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. "
                      "In pytorch 2.9 this will be interpreted as tensor index, "
                      "x[torch.tensor(seq)], which will result either in an error or a "
                      "different result (Triggered internally at "
                      "/pytorch/torch/csrc/autograd/python_variable_indexing.cpp:349.)",
                      UserWarning, stacklevel=4)
        return tuple(index)
    return (index,)


def _type_name(obj):
    """The type's name as PyTorch's messages print it (CPython's tp_name): a class defined in
    Python by its bare name, a built-in or extension type (NumPy's) with its module."""
    cls = type(obj)
    if cls.__flags__ & (1 << 9) or cls.__module__ == "builtins":   # Py_TPFLAGS_HEAPTYPE
        return cls.__name__
    return f"{cls.__module__}.{cls.__name__}"


def _index_item(item):
    """One item of an index, in the forms the rest of indexing handles: None, Ellipsis, a
    slice, an int, a bool, a tensor, a NumPy array or a (nested) list. NumPy integers and
    objects with __index__ become ints; a 0-d uint8 tensor or array is a mask like a 0-d bool
    (PyTorch does not warn for it); ranges and tuples become lists."""
    if item is None or item is Ellipsis or isinstance(item, (slice, int, list)):
        return item                      # (bool is an int)
    if isinstance(item, Tensor):
        if item._dtype is D.uint8 and item._data.ndim == 0:
            return np.asarray(item._host(), dtype=bool)
        return item
    if isinstance(item, np.ndarray):
        if item.ndim == 0 and item.dtype.kind in "iu" and item.dtype != np.uint8:
            return int(item)
        return item.astype(bool) if item.ndim == 0 and item.dtype == np.uint8 else item
    if isinstance(item, (range, tuple)):
        return list(item)
    if isinstance(item, (str, bytes)):
        return item
    if isinstance(item, np.integer):
        return int(item)
    if not isinstance(item, (np.bool_, numbers.Real, numbers.Complex)) and \
            hasattr(type(item), "__index__"):
        return operator.index(item)
    raise IndexError(_INVALID_INDEX.format(_type_name(item)))


def _is_int(item):
    return isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_)) or (
        isinstance(item, Tensor) and item._data.ndim == 0 and item._dtype._category == 1)


def _is_uint8_mask(item):
    return (isinstance(item, Tensor) and item._dtype is D.uint8 or
            isinstance(item, np.ndarray) and item.dtype == np.uint8) and item.ndim > 0


def _apply_index(self, index, scalar_fill=False):
    """Apply the basic part of an index as views (ints select, slices slice, None unsqueezes)
    and collect the advanced part: (view, {dim of the view: index array}).

    As in PyTorch, integers are applied first, so they never take part in advanced-index
    broadcasting. `scalar_fill`: the index is being assigned a scalar, which PyTorch does with
    masked_fill_ when the only advanced item is a mask, and that refuses a uint8 one.
    """
    items = tuple(_index_item(i) for i in _as_index_tuple(index))
    if scalar_fill and any(_is_uint8_mask(i) for i in items) and sum(
            isinstance(i, (Tensor, list, np.ndarray, str, bytes)) and not _is_int(i)
            for i in items) == 1:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           "unsigned char")
    consumed = 0
    for item in items:
        if item is None or item is Ellipsis or isinstance(item, bool):
            continue
        if isinstance(item, Tensor) and item._dtype in (D.bool_, D.uint8) or \
                isinstance(item, np.ndarray) and item.dtype in (np.bool_, np.uint8):
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
        elif isinstance(item, (Tensor, list, np.ndarray, bool, str, bytes)):
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
            raise IndexError(_INVALID_INDEX.format(_type_name(item)))
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
    on_cpu = t._device.type == "cpu"
    for k, (dim, a) in enumerate(sorted(advanced.items())):
        if isinstance(a, np.ndarray) != on_cpu:
            if on_cpu:
                raise RuntimeError("indices should be either on cpu or on the same device as "
                                   "the indexed tensor (cpu)")
            a = backend(t._device.type).from_host(a, t._device.index)   # CPU indices
        if a.dtype == np.bool_:
            for j in range(a.ndim):
                if a.shape[j] != shape[dim + j]:
                    raise IndexError(f"The shape of the mask {V._dims(a.shape)} at index {j} "
                                     f"does not match the shape of the indexed tensor "
                                     f"{V._dims(shape)} at index {dim + j}")
            index[dim] = a
            for j in range(1, a.ndim):
                index[dim + j] = None
            int_shapes.append((int(a.sum()),) if a.ndim else ())
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
    scalar = isinstance(value, numbers.Number) or isinstance(value, Tensor) and not value.ndim
    target, advanced, _ = _apply_index(self, index, scalar_fill=scalar)
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
    _creation.copy_(target, value)


_CPP_NAMES = {"int64": "int64_t", "int32": "int", "int16": "int16_t", "int8": "int8_t",
              "uint8": "uint8_t", "float32": "float", "float64": "double",
              "float16": "double", "bfloat16": "double", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>"}


def _value_tensor(self, value):
    """The right-hand side of `x[i] = value` as a tensor, with PyTorch's checks for numbers."""
    if isinstance(value, Tensor):
        return value
    # (NumPy's integers count as Python ints; its bool, float32 and complex64 as no number)
    if isinstance(value, (bool, int, float, complex, np.integer)):
        _check_fits(value, self._dtype)
        return _creation.scalar_tensor(checked_number(value, self._dtype), self, self._dtype)
    raise TypeError(f"can't assign a {_argument_type_name(value)} to a "
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
    if dtype is D.complex32:     # (a complex number rounded to float16 parts: see _dtype.py)
        return complex(D.as_complex64(D.as_complex32(np.asarray(value)))[()])
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


@primitive("index_select", node="IndexSelectBackward0")
def _index_select(xp, self, *, dim, index):
    return xp.take(self, index, axis=dim) if self.ndim else self.copy()


@_index_select.derivative
def _(ctx, grad):
    out = _creation.zeros(ctx.input_shape(), dtype=grad._dtype, device=grad._device)
    if not len(ctx.input_shape()):
        return grad
    return index_add(out, ctx.dim, Tensor._make(ctx.index, D.int64, grad._device), grad)


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
    idx = Tensor._make(ctx.index, D.int64, grad._device)
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
    return _index_put(_creation.zeros(ctx.input_shape(), dtype=grad._dtype, device=grad._device), grad,
                      indices=ctx.indices, accumulate=True)


def nonzero(input, *, as_tuple=False, out=None):
    _dtype_kernels.check("nonzero", input._dtype)
    xp = xp_of(input._device)
    idx = xp.nonzero(input._data) if input._data.ndim else \
        ((xp.zeros(1, np.int64),) if input._data.item() else (xp.zeros(0, np.int64),))
    if as_tuple:
        return tuple(Tensor._make(i.astype(np.int64), D.int64, input._device) for i in idx)
    stacked = xp.stack(idx, axis=1) if input._data.ndim else \
        xp.zeros((len(idx[0]), 0), np.int64)
    return Tensor._make(stacked.astype(np.int64), D.int64, input._device)


def argwhere(input):
    return nonzero(input)


# ---------------------------------------------------------------------------- diag
@primitive("diag_embed", node="DiagEmbedBackward0")
def _diag_embed(xp, self, *, offset):
    n = self.shape[0] + abs(offset)
    out = xp.zeros((n, n), dtype=self.dtype)
    rows = xp.arange(self.shape[0])
    out[rows + max(-offset, 0), rows + max(offset, 0)] = self
    return out


@_diag_embed.derivative
def _(ctx, grad):
    return grad.diagonal(ctx.offset)


@primitive("diagonal_copy", node="DiagonalBackward0_copy")
def _diagonal_copy(xp, self, *, offset):
    return xp.diagonal(self, offset).copy()


@_diagonal_copy.derivative
def _(ctx, grad):
    return diagonal_backward(grad, ctx.input_shape(), ctx.offset, 0, 1)


def diag(input, diagonal=0):
    """A 1-D input becomes the `diagonal`-th diagonal of a square matrix; a 2-D input gives
    a copy of its `diagonal`-th diagonal."""
    ndim = input._data.ndim
    if ndim == 1:
        return _diag_embed(input, offset=diagonal)
    if ndim == 2:
        return _diagonal_copy(input, offset=diagonal)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {ndim}D")


def _long(a):
    return Tensor._make(a, D.int64)


# ----------------------------------------------------------------------------- take
def take(input, index):
    if index._dtype is not D.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{_scalar_name(index._dtype)}")
    n = input.numel()
    bad = (index._data >= n) | (index._data < -n)
    if bad.any() and not n:
        raise IndexError("take(): tried to take from an empty tensor")
    if bad.any():
        raise IndexError(f"out of range: tried to access index {int(index._data[bad][0])} on a "
                         f"tensor of {n} elements.")
    return _take(input, index=np.where(index._data < 0, index._data + n, index._data))


@primitive("take", node="TakeBackward0")
def _take(xp, self, *, index):
    return self.reshape(-1)[index]


@_take.derivative
def _(ctx, grad):
    flat = _creation.zeros(int(np.prod(ctx.input_shape())), dtype=grad._dtype, device=grad._device)
    return flat.index_add(0, _long(ctx.index.reshape(-1)), grad.reshape(-1)).reshape(
        ctx.input_shape())


def take_along_dim(input, indices, dim=None):
    if indices._dtype is not D.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{_scalar_name(indices._dtype)}")
    if dim is None:
        return input.reshape(-1).gather(0, indices.reshape(-1))
    d = wrap_dim(dim, input.dim())
    if not input.dim():
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    if input.dim() != indices.dim():
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {input.dim()} dimensions for input, "
                           f"and {indices.dim()} dimensions for indices")
    in_shape, idx_shape = list(input.shape), list(indices.shape)
    in_shape[d] = idx_shape[d] = 1
    batch = list(np.broadcast_shapes(tuple(in_shape), tuple(idx_shape)))
    want_in, want_idx = list(batch), list(batch)
    want_in[d], want_idx[d] = input.shape[d], indices.shape[d]
    if input.shape[d]:          # along a dim, PyTorch wraps every index into range
        indices = indices.remainder(input.shape[d])
    return input.expand(want_in).gather(d, indices.expand(want_idx))


def _scalar_name(dtype):
    return scalar_type_name(dtype)


# ----------------------------------------------------------------------------- index_fill/copy
def _along(dim, index, ndim):
    return (slice(None),) * dim + (index,) + (slice(None),) * (ndim - dim - 1)


@primitive("index_fill", node="IndexFillBackward0")
def _index_fill(xp, self, *, dim, index, value):
    out = self.copy()
    if out.ndim:
        out[_along(dim, index, out.ndim)] = value
    elif index.size:
        out[...] = value
    return out


@_index_fill.derivative
def _(ctx, grad):
    return _index_fill(grad, dim=ctx.dim, index=ctx.index, value=0)


@primitive("index_fill.Tensor", node="IndexFillBackward1")
def _index_fill_tensor(xp, self, value, *, dim, index):
    return _index_fill.forward(xp, self, dim=dim, index=index, value=value)


@_index_fill_tensor.derivative
def _(ctx, grad):
    g_self = _index_fill(grad, dim=ctx.dim, index=ctx.index, value=0)
    if grad.dim():
        g_value = grad.index_select(ctx.dim, _long(ctx.index)).sum()
    else:
        g_value = grad * float(len(ctx.index) > 0)
    return g_self, g_value


def _check_index(fn, self, dim, index):
    if index._dtype is not D.int64:
        if fn == "index_fill_":
            raise IndexError("index_fill_(): Expected dtype int64 for index.")
        raise IndexError(f"{fn}(): Expected a long tensor for index, but got "
                         f"{_scalar_name(index._dtype)}")
    if index.dim() > 1:
        raise IndexError(f"{fn}(): Index is supposed to be a vector")
    d = wrap_dim(dim, self.dim())
    size = self.shape[d] if self.dim() else 1
    idx = index._data.reshape(-1)
    bad = (idx >= size) | (idx < -size)
    if bad.any():       # (index_copy_'s message names it)
        raise IndexError(f"{fn + '(): ' if fn == 'index_copy_' else ''}index "
                         f"{int(idx[bad][0])} is out of bounds for dimension {d} with size {size}")
    return d, np.where(idx < 0, idx + size, idx)


def _fill_args(self, dim, index, value):
    d, idx = _check_index("index_fill_", self, dim, index)
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value.dim()} dimension(s).")
    return d, idx, value


def index_fill(input, dim, index, value):
    d, idx, value = _fill_args(input, dim, index, value)
    if isinstance(value, Tensor):
        return _index_fill_tensor(input, value.to(input._dtype), dim=d, index=idx)
    return _index_fill(input, dim=d, index=idx, value=value)


def index_fill_(self, dim, index, value):
    d, idx, value = _fill_args(self, dim, index, value)
    if isinstance(value, Tensor):
        return _index_fill_tensor.inplace(self, value.to(self._dtype), dim=d, index=idx)
    return _index_fill.inplace(self, dim=d, index=idx, value=value)


@primitive("index_copy", node="IndexCopyBackward0")
def _index_copy(xp, self, source, *, dim, index):
    out = self.copy()
    if out.ndim:
        out[_along(dim, index, out.ndim)] = source
    else:
        out[...] = source.reshape(())
    return out


@_index_copy.derivative
def _(ctx, grad):
    needs = ctx.needs_input_grad
    g_self = _index_fill(grad, dim=ctx.dim, index=ctx.index, value=0) if needs[0] else None
    g_source = None
    if needs[1]:
        g_source = grad.index_select(ctx.dim, _long(ctx.index)) if grad.dim() else grad
        g_source = g_source.reshape(ctx.input_shape(1))
    return g_self, g_source


def _copy_args(self, dim, index, source):
    d, idx = _check_index("index_copy_", self, dim, index)
    n_src = source.shape[d] if source.dim() else 1
    if not source.dim() and idx.size != 1:
        raise IndexError(f"index_copy_(): When source is scalar, index should have one element "
                         f"(got {idx.size})")
    if idx.size != n_src:
        raise IndexError(f"index_copy_(): Number of indices ({idx.size}) should be equal to "
                         f"source.size(dim) ({n_src})")
    if source._dtype is not self._dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, "
                           f"but got (self) {_scalar_name(self._dtype)} and (source) "
                           f"{_scalar_name(source._dtype)}")
    return d, idx


def index_copy(input, dim, index, source):
    d, idx = _copy_args(input, dim, index, source)
    return _index_copy(input, source, dim=d, index=idx)


def index_copy_(self, dim, index, source):
    d, idx = _copy_args(self, dim, index, source)
    return _index_copy.inplace(self, source, dim=d, index=idx)


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
    return tuple(_as_int64(c) for c in reversed(coords))


def nonzero_static(input, *, size, fill_value=-1):
    """The indices of the first `size` nonzero elements, as nonzero(), padded with fill_value
    rows up to `size`."""
    if not isinstance(size, int) or size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    _dtype_kernels.check("nonzero", input._dtype)
    found = np.argwhere(input._data)[:size]
    out = np.full((size, input._data.ndim), fill_value, np.int64)
    out[:len(found)] = found
    return Tensor._make(out, D.int64, input._device)


__all__ = ['unravel_index', 'nonzero_static', 'take', 'take_along_dim', 'index_fill',
               'index_copy']
