"""View ops: results share memory and the version counter with their input.

Every view's strides and storage offset follow PyTorch's rules exactly, also for dims of size
one and for empty tensors, where NumPy would choose differently: each forward computes PyTorch's
geometry and lays the result over the input's memory with `restride`.

Also the machinery for in-place writes through views: CopySlices (the base's history after a
view of it was written in place) and the regeneration of a view's grad_fn from its base.
"""
import numpy as np

from .. import _backend, _dtype as D
from .._backend import numpy_backend as _numpy_backend, backend
from .._layout import not_supported
from .._tensor import contiguous_strides, Tensor, _VIEW_MODE
from ..autograd.graph import Node
from ._utils import wrap_dim, as_shape
from .registry import primitive
import warnings
from .._printing import scalar_type_name, legacy_type_name
from .joining import stack, cat
from . import creation as _creation


# ----------------------------------------------------------------------------- geometry
def geometry(t):
    """(shape, element strides, element offset) of a tensor within its base's memory."""
    return (t._data.shape, t.stride(), t.storage_offset())


def element_strides(a):
    """An array's strides in elements, with PyTorch's contiguous strides for an empty array
    whose strides NumPy zeroed."""
    item = a.itemsize
    strides = tuple(s // item for s in a.strides)
    if not a.size and not any(strides):
        strides = contiguous_strides(a.shape)
    return strides


def _plain(a):
    """Non-empty, with exactly the C-contiguous strides (also on its size-one dims)."""
    if not (a.flags.c_contiguous and a.size):
        return False
    expected = a.itemsize
    for size, stride in zip(reversed(a.shape), reversed(a.strides)):
        if stride != expected:
            return False
        expected *= size
    return True


def contiguous_array(xp, a):
    """`a` with exactly PyTorch's contiguous strides (ascontiguousarray leaves odd strides,
    even negative ones, on size-one dims, which a contiguous array may have)."""
    return a if _plain(a) or not a.size else xp.array(a, order="C", copy=True)


def restride(a, shape, strides):
    """The array `a`'s memory (from its first element) seen with another shape and strides."""
    item = a.itemsize
    strides_bytes = tuple([s * item for s in strides])
    if a.__class__ is np.ndarray:
        return _numpy_backend.as_strided(a, tuple(shape), strides_bytes)
    return backend("cuda").as_strided(a, tuple(shape), strides_bytes)


class _Window:
    """Exposes raw memory to NumPy through the array interface, keeping its owner alive."""

    def __init__(self, owner, address, shape, strides_bytes, itemsize):
        self.owner = owner
        self.__array_interface__ = {"data": (address, False), "shape": tuple(shape),
                                    "strides": tuple(strides_bytes),
                                    "typestr": f"|V{itemsize}", "version": 3}


def strided_view(data, shape, strides, offset):
    """A view of `data`'s memory with the given element geometry; `offset` (in elements,
    relative to data's first element) may be negative when `data` is itself a view.
    (CPU memory: NumPy's array interface.)"""
    item = data.itemsize
    if data.__class__ is not np.ndarray:        # device memory: the backend's own view
        return backend("cuda").strided_view(data, shape, [s * item for s in strides],
                                            offset * item)
    address = data.__array_interface__["data"][0] + offset * item
    window = np.asarray(_Window(data, address, shape, [s * item for s in strides], item))
    return window.view(data.dtype)


def _extent(shape, strides, offset):
    """Elements of memory needed (from the storage start) to hold this geometry."""
    if any(s == 0 for s in shape):
        return offset
    return offset + sum((n - 1) * s for n, s in zip(shape, strides)) + 1


def _dims(values):
    return "[" + ", ".join(map(str, values)) + "]"


def view_strides(old_shape, old_strides, new_shape):
    """PyTorch's strides for viewing a geometry as `new_shape`, or None if no view exists."""
    numel = 1
    for s in old_shape:
        numel *= s
    if numel == 0:
        return tuple(old_strides) if tuple(old_shape) == tuple(new_shape) else \
            contiguous_strides(new_shape)
    if not old_shape:
        return (1,) * len(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = old_strides[-1]
    tensor_numel = view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        # a chunk of dims that are laid out contiguously ends here
        if tensor_d == 0 or (old_shape[tensor_d - 1] != 1 and
                             old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_strides[tensor_d - 1]
                tensor_numel = view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)


# ----------------------------------------------------------------------------- view and reshape
@primitive("view", node="ViewBackward0", view=True)
def _view(xp, self, *, shape):
    if _plain(self):
        return self.reshape(shape)       # NumPy's strides are PyTorch's here (the fast path)
    strides = view_strides(self.shape, element_strides(self), shape)
    if strides is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                           "least one dimension spans across two contiguous subspaces). Use "
                           ".reshape(...) instead.")
    return restride(self, shape, strides)


@_view.derivative
def _(ctx, grad):
    return grad.reshape(ctx.input_shape())


# reshape() of a non-contiguous tensor that can still be viewed: PyTorch's node differs
_reshape_alias = primitive("_reshape_alias", node="ReshapeAliasBackward0", view=True)(
    _view.forward)
_reshape_alias.derivative(_view.derivative_fn)


@primitive("_unsafe_view", node="UnsafeViewBackward0")
def _unsafe_view(xp, self, *, shape):
    return xp.reshape(self, shape)


@_unsafe_view.derivative
def _(ctx, grad):
    return grad.reshape(ctx.input_shape())


@primitive("resize", node="ResizeBackward", view=True)
def _resize_view(xp, self, *, shape):
    return _view.forward(xp, self, shape=shape)


@_resize_view.derivative
def _(ctx, grad):
    return grad.reshape(ctx.input_shape())


@primitive("alias", node="AliasBackward0", view=True)
def _alias(xp, self):
    return self.view()


@_alias.derivative
def _(ctx, grad):
    return grad


def infer_shape(shape, numel):
    """Resolve a single -1 in a requested shape, with PyTorch's errors."""
    shape = list(shape)
    unknown = None
    known = 1
    for i, s in enumerate(shape):
        if s == -1:
            if unknown is not None:
                raise RuntimeError("only one dimension can be inferred")
            unknown = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape "
                               f"{_dims(shape)}")
        else:
            known *= s
    if unknown is not None:
        if known == 0:
            if numel == 0:
                raise RuntimeError(f"cannot reshape tensor of 0 elements into shape "
                                   f"{_dims(shape)} because the unspecified dimension size -1 "
                                   f"can be any value and is ambiguous")
            raise RuntimeError(f"shape '{_dims(shape)}' is invalid for input of size {numel}")
        if numel % known:
            raise RuntimeError(f"shape '{_dims(shape)}' is invalid for input of size {numel}")
        shape[unknown] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{_dims(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def view(self, *shape):
    if self.is_sparse:
        raise not_supported("view")
    if len(shape) == 1 and shape[0].__class__.__name__ == "dtype":
        return _view_dtype(self, shape[0])
    return _view(self, shape=infer_shape(_view_size(shape), self._data.size))


def _view_size(args):
    """view()'s size, with PyTorch's errors: view has two overloads (a dtype, a size), so a
    wrong first argument fails them both."""
    from .creation import _sizes, _is_size, arg_kind  # (cycle: ops.creation imports this module)
    first = args[0] if args else None
    items = first if len(args) == 1 and isinstance(first, (tuple, list)) else args
    if not args or items and not _is_size(items[0], first=True):
        got = ", ".join("torch.dtype" if a.__class__.__name__ == "dtype" else type(a).__name__
                        for a in args)
        why = "" if len(args) != 1 else ("\n      didn't match because some of the arguments "
                                        f"have invalid types: ({arg_kind(first)})")
        raise TypeError(f"view() received an invalid combination of arguments - got ({got}), "
                        f"but expected one of:\n * (torch.dtype dtype){why}\n * (tuple of ints "
                        f"size){why}\n")
    return _sizes("view", args)


def _view_dtype(self, dtype):
    """Reinterpret the memory as another dtype (no graph: bits are not differentiable)."""
    old, new = self._dtype.itemsize, dtype.itemsize
    a = self._data
    if old != new:
        what = f"to view {scalar_type_name(self._dtype)} as {scalar_type_name(dtype)} " \
               f"(different element sizes)"
        if a.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        last_stride = element_strides(a)[-1]
        if last_stride != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {last_stride}")
        if new > old and a.shape[-1] % (new // old):
            raise RuntimeError(f"self.size(-1) must be divisible by {new // old} {what}, but "
                               f"got {a.shape[-1]}")
        if new > old and self.storage_offset() % (new // old):
            raise RuntimeError(f"self.storage_offset() must be divisible by {new // old} "
                               f"{what}, but got {self.storage_offset()}")
        strides = element_strides(a)
        if new > old:
            factor = new // old
            shape = a.shape[:-1] + (a.shape[-1] // factor,)
            strides = tuple(s // factor for s in strides[:-1]) + (1,)
        else:
            factor = old // new
            shape = a.shape[:-1] + (a.shape[-1] * factor,)
            strides = tuple(s * factor for s in strides[:-1]) + (1,)
        item = new
        if a.__class__ is not np.ndarray:
            data = backend("cuda").strided_view(a, shape, [s * item for s in strides], 0,
                                                dtype.np)
        else:
            address = a.__array_interface__["data"][0]
            data = np.asarray(_Window(a, address, shape, [s * item for s in strides], item))
            data = data.view(dtype.np)
    else:
        data = a.view(dtype.np)
    # shares memory and the version counter but, as in PyTorch, is no autograd view
    t = Tensor._make(data, dtype, self._device)
    t._version_counter = self._version_counter
    return t


def reshape(self, *shape):
    if self.is_sparse:
        raise RuntimeError("reshape is not implemented for sparse tensors")
    if not shape:
        raise TypeError('reshape() missing 1 required positional arguments: "shape"')
    shape = infer_shape(_creation._sizes("reshape", shape, "shape"), self._data.size)
    if view_strides(self._data.shape, element_strides(self._data), shape) is None:
        return _unsafe_view(self.clone(), shape=shape)
    if not self.is_contiguous():
        return _reshape_alias(self, shape=shape)
    return _view(self, shape=shape)


def view_as(self, other):
    return view(self, other.shape)


def reshape_as(self, other):
    return reshape(self, other.shape)


def flatten(self, start_dim=0, end_dim=-1):
    n = self._data.ndim
    s, e = wrap_dim(start_dim, n), wrap_dim(end_dim, n)     # (a scalar takes -1 and 0)
    if n == 0:
        return reshape(self, 1)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return self
    shape = self._data.shape
    # (the flattened size spelled out: a -1 is ambiguous for an empty tensor)
    return reshape(self, shape[:s] + (int(np.prod(shape[s:e + 1])),) + shape[e + 1:])


def unflatten(self, dim, sizes):
    d = wrap_dim(dim, self._data.ndim)
    shape = self._data.shape
    sizes = tuple(sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    try:
        sizes = infer_shape(sizes, shape[d])
    except RuntimeError:
        if sum(1 for s in sizes if s == -1) > 1:
            raise
        raise RuntimeError(f"unflatten: Provided sizes {_dims(sizes)} don't multiply up to the "
                           f"size of dim {dim} ({shape[d]}) in the input tensor") from None
    return view(self, shape[:d] + sizes + shape[d + 1:])


# ----------------------------------------------------------------------------- squeeze, unsqueeze
def _squeezed(a, dims):
    strides = element_strides(a)
    keep = [i for i in range(a.ndim) if i not in dims]
    return restride(a, [a.shape[i] for i in keep], [strides[i] for i in keep])


@primitive("squeeze", node="SqueezeBackward0", view=True)
def _squeeze_all(xp, self):
    return _squeezed(self, {i for i, s in enumerate(self.shape) if s == 1})


@primitive("squeeze.dim", node="SqueezeBackward1", view=True)
def _squeeze_dim(xp, self, *, dim):
    return _squeezed(self, {dim} if self.shape[dim] == 1 else set())


@primitive("squeeze.dims", node="SqueezeBackward2", view=True)
def _squeeze_dims(xp, self, *, dims):
    return _squeezed(self, {d for d in dims if self.shape[d] == 1})


def _unsqueeze_back(ctx, grad, dims):
    # as torch: unsqueeze each squeezed-away dim, lowest first (its graph shows UnsqueezeBackward0s)
    shape = ctx.input_shape()
    for d in sorted({d for d in dims if shape[d] == 1}):
        grad = grad.unsqueeze(d)
    return grad


_squeeze_all.derivative(lambda ctx, grad: _unsqueeze_back(ctx, grad, range(len(ctx.input_shape()))))
_squeeze_dim.derivative(lambda ctx, grad: _unsqueeze_back(ctx, grad, (ctx.dim,)))
_squeeze_dims.derivative(lambda ctx, grad: _unsqueeze_back(ctx, grad, ctx.dims))


def squeeze(self, dim=None):
    n = self._data.ndim
    if dim is None:
        return _squeeze_all(self)
    if isinstance(dim, (tuple, list)):
        return _squeeze_dims(self, dims=tuple(wrap_dim(d, n) for d in dim) if n else ())
    if n == 0:
        wrap_dim(dim, 0)
        return _squeeze_dims(self, dims=())
    return _squeeze_dim(self, dim=wrap_dim(dim, n))


@primitive("unsqueeze", node="UnsqueezeBackward0", view=True)
def _unsqueeze(xp, self, *, dim):
    if _plain(self):
        return xp.expand_dims(self, dim)  # NumPy's strides are PyTorch's here (the fast path)
    shape, strides = list(self.shape), list(element_strides(self))
    # PyTorch: the new dim's stride spans the dim it is inserted before
    new_stride = shape[dim] * strides[dim] if dim < len(shape) else 1
    shape.insert(dim, 1)
    strides.insert(dim, new_stride)
    return restride(self, shape, strides)


@_unsqueeze.derivative
def _(ctx, grad):
    return grad.squeeze(ctx.dim)


def unsqueeze(self, dim):
    return _unsqueeze(self, dim=wrap_dim(dim, self._data.ndim + 1))


# ----------------------------------------------------------------------------- permutations
@primitive("permute", node="PermuteBackward0", view=True)
def _permute(xp, self, *, dims):
    if self.size:
        return xp.transpose(self, dims)   # NumPy permutes the strides as PyTorch does
    strides = element_strides(self)
    return restride(self, [self.shape[d] for d in dims], [strides[d] for d in dims])


@_permute.derivative
def _(ctx, grad):
    return grad.permute(tuple(int(i) for i in np.argsort(ctx.dims)))


def permute(self, *dims):
    n = self._data.ndim
    dims = as_shape(dims)
    if len(dims) != n:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {n} is not equal to len(dims) = {len(dims)}")
    wrapped = tuple(wrap_dim(d, n) for d in dims)
    if len(set(wrapped)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return _permute(self, dims=wrapped)


def movedim(self, source, destination):
    n = self._data.ndim
    src = list(source) if isinstance(source, (tuple, list)) else [source]
    dst = list(destination) if isinstance(destination, (tuple, list)) else [destination]
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({_dims(src)} "
                           f"dims) should contain the same number of dims as destination "
                           f"({_dims(dst)} dims)")
    src = [wrap_dim(d, n) for d in src]
    dst = [wrap_dim(d, n) for d in dst]
    for name, dims in (("source", src), ("destination", dst)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({_dims(dims)})")
    if n == 0:                      # (an alias: the one dim a scalar has is no dim)
        return _alias(self)
    order = [None] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(n) if i not in src)
    order = [o if o is not None else next(rest) for o in order]
    return _permute(self, dims=tuple(order))


@primitive("transpose", node="TransposeBackward0", view=True)
def _transpose(xp, self, *, dim0, dim1):
    dims = list(range(self.ndim))
    dims[dim0], dims[dim1] = dim1, dim0
    return _permute.forward(xp, self, dims=dims)


@_transpose.derivative
def _(ctx, grad):
    return grad.transpose(ctx.dim0, ctx.dim1)


def transpose(self, dim0, dim1):
    n = self._data.ndim
    return _transpose(self, dim0=wrap_dim(dim0, n), dim1=wrap_dim(dim1, n))


@primitive("t", node="TBackward0", view=True)
def _t(xp, self):
    return _permute.forward(xp, self, dims=tuple(range(self.ndim))[::-1])


@_t.derivative
def _(ctx, grad):
    return grad.t()


def t(self):
    if self._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{self._data.ndim}D")
    return _t(self)


_warned_T = set()


def T(self):
    n = self._data.ndim
    if n != 2 and (n == 0) not in _warned_T:
        _warned_T.add(n == 0)               # PyTorch warns once per process (each message)
        if n == 0:
            warnings.warn("Tensor.T is deprecated on 0-D tensors. This function is the identity "
                          "in these cases. (Triggered internally at "
                          "/pytorch/aten/src/ATen/native/TensorShape.cpp:4321.)", UserWarning,
                          stacklevel=2)
        else:
            warnings.warn("The use of `x.T` on tensors of dimension other than 2 to reverse "
                          "their shape is deprecated and it will throw an error in a future "
                          "release. Consider `x.mT` to transpose batches of matrices or "
                          "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the "
                          "dimensions of a tensor. (Triggered internally at "
                          "/pytorch/aten/src/ATen/native/TensorShape.cpp:4314.)", UserWarning,
                          stacklevel=2)
    return _permute(self, dims=tuple(range(n))[::-1])


_warned_matrix_of_scalar = set()


def _matrix_transpose(self, name, advice, line, shown=None):
    """The checks of mT/mH/adjoint: a 0-dim tensor passes through (with a warning, once per
    process; `shown`: the name the warning gives, by default Tensor.<name>), a 1-dim one is
    refused."""
    n = self._data.ndim
    if n == 0:
        if name not in _warned_matrix_of_scalar:
            _warned_matrix_of_scalar.add(name)
            warnings.warn(f"{shown or 'Tensor.' + name} is deprecated on 0-D tensors. {advice} "
                          f"(Triggered internally at "
                          f"/pytorch/aten/src/ATen/native/TensorShape.cpp:{line}.)",
                          UserWarning, stacklevel=3)
    elif n < 2:
        raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. "
                           f"Got {n}-D tensor.")
    return n


def mT(self):
    if not _matrix_transpose(self, "mT", "This function is the identity in these cases.", 4373):
        return self
    return transpose(self, -2, -1)


def mH(self):
    if not _matrix_transpose(self, "mH", "Consider using x.conj().", 4382):
        return self.conj() if self._dtype.is_complex else self
    return transpose(self, -2, -1).conj()


def adjoint(self):
    if not _matrix_transpose(self, "adjoint()", "Consider using x.conj().", 4390, "adjoint()"):
        return self.conj() if self._dtype.is_complex else self
    return transpose(self, -2, -1).conj()


# ----------------------------------------------------------------------------- expand
@primitive("expand", node="ExpandBackward0", view=True)
def _expand(xp, self, *, shape, strides):
    return restride(self, shape, strides)


@_expand.derivative
def _(ctx, grad):
    from .reduction import sum_to_size  # (cycle: ops.reduction imports this module)
    return sum_to_size(grad, ctx.input_shape())


def expand(self, *sizes):
    if not sizes:
        raise TypeError('expand() missing 1 required positional arguments: "size"')
    sizes = as_shape(sizes)
    shape = self._data.shape
    strides = element_strides(self._data)
    n, lead = len(sizes), len(sizes) - len(shape)
    if lead < 0:
        raise RuntimeError(f"expand(torch.{legacy_type_name(self._dtype, self._device)}"
                           f"{{{_dims(shape)}}}, size={_dims(sizes)}): the number of sizes "
                           f"provided ({n}) must be greater or equal to the number of "
                           f"dimensions in the tensor ({len(shape)})")
    out_shape, out_strides = [0] * n, [0] * n
    for i in range(n - 1, -1, -1):
        have = shape[i - lead] if i >= lead else 1
        # a new leading dim of size one gets the stride that spans the dims after it (0 for
        # the last dim of an expanded 0-dim tensor)
        stride = strides[i - lead] if i >= lead else \
            (out_shape[i + 1] * out_strides[i + 1] if i + 1 < n else 0)
        want = sizes[i]
        if want == -1:
            if i < lead:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
            want = have
        elif have != want:
            if have != 1:
                raise RuntimeError(f"The expanded size of the tensor ({want}) must match the "
                                   f"existing size ({have}) at non-singleton dimension {i}.  "
                                   f"Target sizes: {_dims(sizes)}.  Tensor sizes: "
                                   f"{_dims(shape)}")
            stride = 0
        out_shape[i], out_strides[i] = want, stride
    return _expand(self, shape=tuple(out_shape), strides=tuple(out_strides))


def expand_as(self, other):
    return expand(self, other.shape)


# ----------------------------------------------------------------------------- select and slice
@primitive("select", node="SelectBackward0", view=True)
def _select(xp, self, *, dim, index):
    return self[(slice(None),) * dim + (index, Ellipsis)]    # "..." keeps a 0-d result a view


@_select.derivative
def _(ctx, grad):
    return select_backward(grad, ctx.input_shape(), ctx.dim, ctx.index)


def select(self, dim, index):
    n = self._data.ndim
    if n == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, n)
    size = self._data.shape[d]
    if hasattr(index, "__index__"):
        index = index.__index__()
    if index < -size or index >= size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{_dims(self._data.shape)} at dimension {d}")
    return _select(self, dim=d, index=index + size if index < 0 else index)


@primitive("slice", node="SliceBackward0", view=True)
def _slice(xp, self, *, dim, start, stop, step):
    out = self[(slice(None),) * dim + (slice(start, stop, step),)]
    if not out.size and isinstance(self, np.ndarray):
        # NumPy drops an empty slice's offset and strides; keep PyTorch's
        strides = list(element_strides(self))
        offset = start * strides[dim]
        strides[dim] *= step
        return strided_view(self, out.shape, strides, offset)
    return out


@_slice.derivative
def _(ctx, grad):
    return slice_backward(grad, ctx.input_shape(), ctx.dim, ctx.start, ctx.stop, ctx.step)


def slice_dim(self, dim, start, stop, step=1):
    """x[..., start:stop:step, ...] along `dim`, clamped as Python slicing clamps."""
    if step <= 0:
        raise ValueError("step must be greater than zero")
    size = self._data.shape[dim]
    start, stop, _ = slice(start, stop, 1).indices(size)
    stop = max(stop, start)
    return _slice(self, dim=dim, start=start, stop=stop, step=step)


def narrow(self, dim, start, length):
    n = self._data.ndim
    if n == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    d = wrap_dim(dim, n)
    size = self._data.shape[d]
    if hasattr(start, "__index__"):
        start = start.__index__()
    if start < -size or start > size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    return _slice(self, dim=d, start=start, stop=start + length, step=1)


# ----------------------------------------------------------------------------- unbind and split
MULTI_OUTPUT = "multi_output"        # view modes (_tensor._VIEW_MODE) PyTorch refuses to write
CUSTOM_FUNCTION = "custom_function"  # in place: see mark_unwritable_views


def mark_unwritable_views(outs, mode):
    """Mark tracked views that PyTorch will not let be written in place (nor read the grad_fn
    of once their base was written): the outputs of a function returning several views
    (MULTI_OUTPUT: unbind, split, chunk...; their one node cannot be rebased for one output)
    and a view a custom Function returns (CUSTOM_FUNCTION: rebasing would bypass its backward).
    The in-place check (check_inplace_allowed) raises view_mode_error for them, as for views
    made in no_grad mode; views of them inherit the mark (Tensor._make_view)."""
    for t in outs:
        if isinstance(t, Tensor) and t._base is not None and t._grad_fn is not None:
            t._get_extra()[_VIEW_MODE] = mode
    return outs


@primitive("unbind", node="UnbindBackward0", view=True, n_outputs=None)
def _unbind(xp, self, *, dim, n_outputs):
    return [self[(slice(None),) * dim + (i, Ellipsis)] for i in range(n_outputs)]


@_unbind.derivative
def _(ctx, *grads):
    shape = list(ctx.input_shape())
    del shape[ctx.dim]
    device = next(g for g in grads if g is not None)._device
    parts = [g if g is not None else _creation.zeros(shape, dtype=ctx.input_dtype(), device=device)
             for g in grads]
    return stack(parts, ctx.dim)


def unbind(self, dim=0):
    if self._data.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, self._data.ndim)
    return mark_unwritable_views(_unbind(self, dim=d, n_outputs=self._data.shape[d]),
                                 MULTI_OUTPUT)


def _split_pieces(xp, self, dim, sizes):
    out, start = [], 0
    for s in sizes:
        out.append(_slice.forward(xp, self, dim=dim, start=start, stop=start + s, step=1))
        start += s
    return out


@primitive("split", node="SplitBackward0", view=True, n_outputs=None)
def _split(xp, self, *, dim, sizes, n_outputs):
    return _split_pieces(xp, self, dim, sizes)


@primitive("split_with_sizes", node="SplitWithSizesBackward0", view=True, n_outputs=None)
def _split_with_sizes(xp, self, *, dim, sizes, n_outputs):
    return _split_pieces(xp, self, dim, sizes)


def _split_derivative(ctx, *grads):
    parts = []
    for g, size in zip(grads, ctx.sizes):
        if g is None:
            shape = list(ctx.input_shape())
            shape[ctx.dim] = size
            g = _creation.zeros(shape, dtype=ctx.input_dtype())
        parts.append(g)
    return cat(parts, ctx.dim)


_split.derivative(_split_derivative)
_split_with_sizes.derivative(_split_derivative)


def split(self, split_size_or_sections, dim=0):
    if self._data.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, self._data.ndim)
    size = self._data.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = tuple(int(s) for s in split_size_or_sections)
        if sum(sizes) != size or any(s < 0 for s in sizes):
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} "
                               f"(input tensor's size at dimension {dim}), but got "
                               f"split_sizes={_dims(sizes)}")
        return mark_unwritable_views(
            _split_with_sizes(self, dim=d, sizes=sizes, n_outputs=len(sizes)), MULTI_OUTPUT)
    step = int(split_size_or_sections)
    if step < 0 or (step == 0 and size):
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                           f"dimension size of {size}")
    sizes = tuple(min(step, size - i) for i in range(0, size, step)) if size else (0,)
    return mark_unwritable_views(_split(self, dim=d, sizes=sizes, n_outputs=len(sizes)),
                                 MULTI_OUTPUT)


def chunk(self, chunks, dim=0):
    if self._data.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    d = wrap_dim(dim, self._data.ndim)
    size = self._data.shape[d]
    if size == 0:
        # PyTorch splits an empty dim into `chunks` empty pieces
        return mark_unwritable_views(
            _split_with_sizes(self, dim=d, sizes=(0,) * chunks, n_outputs=chunks), MULTI_OUTPUT)
    return split(self, -(-size // chunks), dim)


def tensor_split(self, indices_or_sections, dim=0):
    """Pieces as slices (PyTorch shows SliceBackward0 for each)."""
    if self._data.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    d = wrap_dim(dim, self._data.ndim)
    size = self._data.shape[d]
    if isinstance(indices_or_sections, Tensor):
        indices_or_sections = indices_or_sections.tolist()
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        base, extra = divmod(size, n)
        bounds = [0]
        for i in range(n):
            bounds.append(bounds[-1] + base + (1 if i < extra else 0))
        pieces = list(zip(bounds, bounds[1:]))
    else:
        cuts = [int(i) for i in indices_or_sections]
        starts = [0] + cuts
        stops = cuts + [size]
        pieces = list(zip(starts, stops))
    out = []
    for start, stop in pieces:
        # as Python slicing: a negative index counts from the end, then clamped
        start, stop = (min(max(i + size if i < 0 else i, 0), size) for i in (start, stop))
        out.append(_slice(self, dim=d, start=start, stop=max(start, stop), step=1))
    return tuple(out)


# ----------------------------------------------------------------------------- diagonal, unfold
@primitive("diagonal", node="DiagonalBackward0", view=True)
def _diagonal(xp, self, *, offset, dim1, dim2):
    shape, strides = list(self.shape), list(element_strides(self))
    # the diagonal's length
    if offset >= 0:
        length = max(min(shape[dim1], shape[dim2] - offset), 0)
    else:
        length = max(min(shape[dim1] + offset, shape[dim2]), 0)
    step = strides[dim1] + strides[dim2]
    keep = [d for d in range(self.ndim) if d not in (dim1, dim2)]
    # a writable window (NumPy's own diagonal is read-only) from the diagonal's first element
    first = [slice(None)] * self.ndim
    if length:
        first[dim1 if offset < 0 else dim2] = slice(abs(offset), None)
    return restride(self[tuple(first)], [shape[d] for d in keep] + [length],
                    [strides[d] for d in keep] + [step])


@_diagonal.derivative
def _(ctx, grad):
    return diagonal_backward(grad, ctx.input_shape(), ctx.offset, ctx.dim1, ctx.dim2)


def diagonal(self, offset=0, dim1=0, dim2=1):
    n = self._data.ndim
    d1, d2 = wrap_dim(dim1, n), wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return _diagonal(self, offset=offset, dim1=d1, dim2=d2)


@primitive("unfold", node="UnfoldBackward0", view=True)
def _unfold(xp, self, *, dimension, size, step):
    if self.ndim == 0:
        return restride(self, (size,), (1,))
    shape, strides = list(self.shape), list(element_strides(self))
    count = (shape[dimension] - size) // step + 1
    new_stride = strides[dimension]
    shape[dimension], strides[dimension] = count, strides[dimension] * step
    return restride(self, shape + [size], strides + [new_stride])


@_unfold.derivative
def _(ctx, grad):
    if not len(ctx.input_shape()):
        return grad.reshape(())
    return unfold_backward(grad, ctx.input_shape(), ctx.dimension, ctx.size, ctx.step)


def unfold(self, dimension, size, step):
    d = wrap_dim(dimension, self._data.ndim)
    length = self._data.shape[d] if self._data.ndim else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {length} but size is "
                           f"{size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return _unfold(self, dimension=d, size=size, step=step)


# ----------------------------------------------------------------------------- as_strided
@primitive("as_strided", node="AsStridedBackward0", view=True)
def _as_strided(xp, self, *, size, stride, storage_offset, base_offset, base_stride=None):
    return strided_view(self, size, stride, storage_offset - base_offset)


@_as_strided.derivative
def _(ctx, grad):
    shape = ctx.input_shape()
    # (an as_strided node made before base_stride was recorded: a contiguous input)
    in_strides = getattr(ctx, "base_stride", None) or contiguous_strides(shape)
    return as_strided_backward(grad, (tuple(ctx.size), tuple(ctx.stride), ctx.storage_offset),
                               (tuple(shape), tuple(in_strides), ctx.base_offset))


def storage_numel(t):
    """Elements in the memory a tensor's root owns (its "storage")."""
    root = t._storage_root()
    return _extent(root._data.shape, element_strides(root._data), 0)


def as_strided(self, size, stride, storage_offset=None):
    size, stride = tuple(as_shape((size,))), tuple(as_shape((stride,)))
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={_dims(size)} and "
                           f"strides={_dims(stride)}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {_dims(stride)}")
    offset = self.storage_offset() if storage_offset is None else int(storage_offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    needed, have = _extent(size, stride, offset), storage_numel(self)
    if needed > have and all(size):     # (an empty view may start anywhere)
        item = self._dtype.itemsize
        raise RuntimeError(f"setStorage: sizes {_dims(size)}, strides {_dims(stride)}, storage "
                           f"offset {offset}, and itemsize {item} requiring a storage size of "
                           f"{needed * item} are out of bounds for storage of size {have * item}")
    return _as_strided(self, size=size, stride=stride, storage_offset=offset,
                       base_offset=self.storage_offset(), base_stride=self.stride())


# ----------------------------------------------------------------------------- in place via views
class CopySlices(Node):
    """The history of a base after one of its views was written in place.

    Its first input is the base's previous history; the others are those of the in-place op
    `fn`. Backward: the gradient of the base, with the view's region replaced by what `fn`'s
    derivative sends to its `self` input.
    """
    __slots__ = ("fn", "view_geometry", "base_shape", "base_strides", "real_view", "_n_outputs")
    __module__ = "builtins"      # PyTorch's C++ nodes show as <class 'CopySlices'>

    @classmethod
    def rebase(cls, base, view_tensor, fn):
        node = cls.__new__(cls)
        Node.__init__(node, (base._edge(),) + fn.next_functions[1:])
        node.fn = fn
        node._n_outputs = 1
        node.view_geometry = geometry(view_tensor)
        node.base_shape = base._data.shape
        node.base_strides = base.stride()
        node.real_view = view_tensor._dtype is not base._dtype     # e.g. .real of a complex base
        base._grad_fn = node
        base._output_nr = 0
        base._requires_grad = True
        view_tensor._fn_version = -1          # regenerate from the base on next access

    def name(self):
        return "torch::autograd::CopySlices"

    def release(self):
        self.fn.release()

    def apply(self, grads, needs):
        grad = grads[0]
        result = _creation.empty_strided(self.base_shape, self.base_strides, dtype=grad._dtype,
                                device=grad._device)
        result.copy_(grad)
        shape, strides, offset = self.view_geometry
        if self.real_view:          # the view's geometry counts real elements
            from .complex import view_as_real  # (cycle: ops.complex imports this module)
            region = _as_strided(view_as_real(result), size=shape, stride=strides,
                                 storage_offset=offset, base_offset=0)
        else:
            region = result.as_strided(shape, strides, offset)
        if needs is None:                       # every input that has a node needs its grad
            needs = [child is not None for child, _ in self.next_functions]
        fn_needs = (True,) + tuple(needs[1:])
        fn_grads = self.fn.apply((region.clone(),), fn_needs)
        if fn_grads[0] is not None:
            region.copy_(fn_grads[0])
        else:
            region.zero_()
        return (result,) + tuple(fn_grads[1:])


def _view_node(op, edge, meta, params):
    """The node of view op `op` on the input behind `edge`, made without running the op."""
    node = op.node_cls.__new__(op.node_cls)
    Node.__init__(node, (edge,))
    node._op = op
    node._n_outputs = 1
    node._params = params
    node._saved = ()
    node._input_meta = (meta,)
    node.needs_input_grad = (edge[0] is not None,)
    return node


def regenerate_view_grad_fn(view_tensor):
    """Point a view's grad_fn at its base's current history (AsStridedBackward0; for a real
    view of a complex base, over a ViewAsRealBackward0 as in PyTorch)."""
    base = view_tensor._base
    shape, strides, offset = geometry(view_tensor)
    edge, meta = base._edge(), (base._data.shape, base._dtype.np)
    # the base's own strides: its gradient maps through the memory the base addresses, which
    # need not be contiguous (an elementwise result keeps a permuted input's layout)
    base_strides = base.stride()
    if view_tensor._dtype is not base._dtype:
        from .complex import _view_as_real  # (cycle: ops.complex imports this module)
        edge = (_view_node(_view_as_real, edge, meta, {}), 0)
        meta = (base._data.shape + (2,), view_tensor._dtype.np)
        base_strides = tuple(2 * s for s in base_strides) + (1,)
    view_tensor._grad_fn = _view_node(_as_strided, edge, meta, {
        "size": shape, "stride": strides, "storage_offset": offset, "base_offset": 0,
        "base_stride": base_strides})
    view_tensor._output_nr = 0
    view_tensor._requires_grad = True
    view_tensor._fn_version = view_tensor._version_counter.value


# ----------------------------------------------------------------------------- view derivatives
def _array_view(xp, a, kind, args):
    """The (writable) view of array `a` that a view op of this kind and args makes."""
    if kind == "select":
        return a[(slice(None),) * args["dim"] + (args["index"], Ellipsis)]
    if kind == "slice":
        return a[(slice(None),) * args["dim"] + (slice(args["start"], args["stop"],
                                                       args["step"]),)]
    if kind == "diagonal":
        return _diagonal.forward(xp, a, **args)
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
        return _slice(grad, dim=a["dim"], start=a["start"], stop=a["stop"], step=a["step"])
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
    idx = Tensor._make(indices, D.int64)
    return _creation.zeros(shape, dtype=grad._dtype, device=grad._device).scatter(dim, idx, grad)
