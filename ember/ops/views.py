"""View ops: results share memory and the version counter with their input.

Also the machinery for in-place writes through views: CopySlices (the base's history after a
view of it was written in place) and the regeneration of a view's grad_fn from its base.
"""
import numpy as np

from .._tensor import Tensor
from ..autograd.graph import Node
from ._utils import wrap_dim, as_shape
from .registry import primitive, xp_of


# ----------------------------------------------------------------------------- geometry
def geometry(t):
    """(shape, element strides, element offset) of a tensor within its base's memory."""
    return (t._data.shape, t.stride(), t.storage_offset())


def strided_view(data, shape, strides, offset):
    """A view of an array's memory with the given element geometry (offset from its start)."""
    item = data.itemsize
    flat = np.lib.stride_tricks.as_strided(data, shape=(max(_extent(shape, strides, offset), 1),),
                                           strides=(item,))
    return np.lib.stride_tricks.as_strided(flat[offset:], shape=shape,
                                           strides=tuple(s * item for s in strides))


def _extent(shape, strides, offset):
    if any(s == 0 for s in shape):
        return offset
    return offset + sum((n - 1) * s for n, s in zip(shape, strides)) + 1


# ----------------------------------------------------------------------------- primitives
@primitive("view", node="ViewBackward0", view=True)
def _view(xp, self, *, shape):
    try:
        return xp.reshape(self, shape, copy=False)
    except ValueError:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                           "least one dimension spans across two contiguous subspaces). Use "
                           ".reshape(...) instead.") from None


@_view.derivative
def _(ctx, grad):
    return grad.reshape(ctx.input_shape())


@primitive("_unsafe_view", node="UnsafeViewBackward0")
def _unsafe_view(xp, self, *, shape):
    return xp.reshape(self, shape)


@_unsafe_view.derivative
def _(ctx, grad):
    return grad.reshape(ctx.input_shape())


def infer_shape(shape, numel):
    """Resolve a single -1 in a requested shape, with PyTorch's errors."""
    shape = list(shape)
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for s in shape:
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s}")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if unknown:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of "
                               f"size {numel}")
        shape[unknown[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of size "
                           f"{numel}")
    return tuple(shape)


def view(self, *shape):
    if len(shape) == 1 and not isinstance(shape[0], (tuple, list, int)) and \
            not hasattr(shape[0], "__index__"):
        return self.to(shape[0]) if shape[0] is self._dtype else _view_dtype(self, shape[0])
    return _view(self, shape=infer_shape(as_shape(shape), self._data.size))


def _view_dtype(self, dtype):
    if dtype.itemsize != self._dtype.itemsize:
        raise RuntimeError("view(dtype) with a different element size is not supported")
    t = self._make_view(self._data.view(dtype.np))
    t._dtype = dtype
    return t


def reshape(self, *shape):
    shape = infer_shape(as_shape(shape), self._data.size)
    try:
        np.reshape(self._data, shape, copy=False)
    except ValueError:
        return _unsafe_view(self.clone(), shape=shape)
    return _view(self, shape=shape)


def view_as(self, other):
    return view(self, other.shape)


def reshape_as(self, other):
    return reshape(self, other.shape)


def flatten(self, start_dim=0, end_dim=-1):
    n = self._data.ndim
    if n == 0:
        return reshape(self, 1)
    s, e = wrap_dim(start_dim, n), wrap_dim(end_dim, n)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return self
    shape = self._data.shape
    return reshape(self, shape[:s] + (-1,) + shape[e + 1:])


def unflatten(self, dim, sizes):
    d = wrap_dim(dim, self._data.ndim)
    shape = self._data.shape
    sizes = infer_shape(tuple(sizes), shape[d])
    return view(self, shape[:d] + sizes + shape[d + 1:])


@primitive("squeeze", node="SqueezeBackward0", view=True)
def _squeeze_all(xp, self):
    return xp.reshape(self, tuple(s for s in self.shape if s != 1))


@primitive("squeeze.dim", node="SqueezeBackward1", view=True)
def _squeeze_dim(xp, self, *, dim):
    return xp.squeeze(self, dim) if self.shape[dim] == 1 else self[...]


@primitive("squeeze.dims", node="SqueezeBackward2", view=True)
def _squeeze_dims(xp, self, *, dims):
    dims = tuple(d for d in dims if self.shape[d] == 1)
    return xp.squeeze(self, dims) if dims else self[...]


def _squeeze_derivative(ctx, grad):
    return grad.reshape(ctx.input_shape())


for _op in (_squeeze_all, _squeeze_dim, _squeeze_dims):
    _op.derivative(_squeeze_derivative)


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
    return xp.expand_dims(self, dim)


@_unsqueeze.derivative
def _(ctx, grad):
    return grad.squeeze(ctx.dim)


def unsqueeze(self, dim):
    return _unsqueeze(self, dim=wrap_dim(dim, self._data.ndim + 1))


@primitive("permute", node="PermuteBackward0", view=True)
def _permute(xp, self, *, dims):
    return xp.transpose(self, dims)


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
    src = [wrap_dim(d, n) for d in (source if isinstance(source, (tuple, list)) else [source])]
    dst = [wrap_dim(d, n) for d in (destination if isinstance(destination, (tuple, list))
                                    else [destination])]
    order = [None] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(n) if i not in src)
    order = [o if o is not None else next(rest) for o in order]
    return _permute(self, dims=tuple(order))


@primitive("transpose", node="TransposeBackward0", view=True)
def _transpose(xp, self, *, dim0, dim1):
    return xp.swapaxes(self, dim0, dim1)


@_transpose.derivative
def _(ctx, grad):
    return grad.transpose(ctx.dim0, ctx.dim1)


def transpose(self, dim0, dim1):
    n = self._data.ndim
    return _transpose(self, dim0=wrap_dim(dim0, n), dim1=wrap_dim(dim1, n))


@primitive("t", node="TBackward0", view=True)
def _t(xp, self):
    return self.T


@_t.derivative
def _(ctx, grad):
    return grad.t()


def t(self):
    if self._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{self._data.ndim}D")
    return _t(self)


def T(self):
    return _permute(self, dims=tuple(range(self._data.ndim))[::-1])


def mT(self):
    if self._data.ndim < 2:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got "
                           f"{self._data.ndim}-D tensor.")
    return transpose(self, -2, -1)


@primitive("expand", node="ExpandBackward0", view=True)
def _expand(xp, self, *, shape):
    return xp.broadcast_to(self, shape)


@_expand.derivative
def _(ctx, grad):
    from .reduction import sum_to_size
    return sum_to_size(grad, ctx.input_shape())


def expand(self, *sizes):
    sizes = as_shape(sizes)
    shape = self._data.shape
    n = len(sizes)
    if n < len(shape):
        raise RuntimeError(f"expand(torch.FloatTensor{{[{', '.join(map(str, shape))}]}}, "
                           f"size=[{', '.join(map(str, sizes))}]): the number of sizes provided "
                           f"({n}) must be greater or equal to the number of dimensions in the "
                           f"tensor ({len(shape)})")
    padded = (1,) * (n - len(shape)) + shape
    target = []
    for i, (want, have) in enumerate(zip(sizes, padded)):
        if want == -1:
            if i < n - len(shape):
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
            want = have
        elif have != 1 and want != have:
            raise RuntimeError(f"The expanded size of the tensor ({want}) must match the "
                               f"existing size ({have}) at non-singleton dimension {i}.  "
                               f"Target sizes: [{', '.join(map(str, sizes))}].  Tensor sizes: "
                               f"[{', '.join(map(str, shape))}]")
        target.append(want)
    return _expand(self, shape=tuple(target))


def expand_as(self, other):
    return expand(self, other.shape)


@primitive("select", node="SelectBackward0", view=True)
def _select(xp, self, *, dim, index):
    return self[(slice(None),) * dim + (index, Ellipsis)]


@_select.derivative
def _(ctx, grad):
    from .indexing import select_backward
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
                         f"[{', '.join(map(str, self._data.shape))}] at dimension {dim}")
    return _select(self, dim=d, index=index + size if index < 0 else index)


@primitive("slice", node="SliceBackward0", view=True)
def _slice(xp, self, *, dim, start, stop, step):
    return self[(slice(None),) * dim + (slice(start, stop, step),)]


@_slice.derivative
def _(ctx, grad):
    from .indexing import slice_backward
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
    d = wrap_dim(dim, n)
    size = self._data.shape[d]
    if hasattr(start, "__index__"):
        start = start.__index__()
    if start < -size or start > size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    if start < 0:
        start += size
    if start + length > size or length < 0:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    return _slice(self, dim=d, start=start, stop=start + length, step=1)


@primitive("unbind", node="UnbindBackward0", view=True, n_outputs=None)
def _unbind(xp, self, *, dim):
    return [self[(slice(None),) * dim + (i, Ellipsis)] for i in range(self.shape[dim])]


@_unbind.derivative
def _(ctx, *grads):
    from .joining import stack
    from .creation import zeros
    shape = list(ctx.input_shape())
    del shape[ctx.dim]
    parts = [g if g is not None else zeros(shape, dtype=ctx.input_dtype()) for g in grads]
    return stack(parts, ctx.dim)


def unbind(self, dim=0):
    return _unbind(self, dim=wrap_dim(dim, self._data.ndim))


def _split_pieces(xp, self, dim, sizes):
    out, start = [], 0
    for s in sizes:
        out.append(self[(slice(None),) * dim + (slice(start, start + s),)])
        start += s
    return out


@primitive("split", node="SplitBackward0", view=True, n_outputs=None)
def _split(xp, self, *, dim, sizes):
    return _split_pieces(xp, self, dim, sizes)


@primitive("split_with_sizes", node="SplitWithSizesBackward0", view=True, n_outputs=None)
def _split_with_sizes(xp, self, *, dim, sizes):
    return _split_pieces(xp, self, dim, sizes)


def _split_derivative(ctx, *grads):
    from .joining import cat
    from .creation import zeros
    parts = []
    for g, size in zip(grads, ctx.sizes):
        if g is None:
            shape = list(ctx.input_shape())
            shape[ctx.dim] = size
            g = zeros(shape, dtype=ctx.input_dtype())
        parts.append(g)
    return cat(parts, ctx.dim)


_split.derivative(_split_derivative)
_split_with_sizes.derivative(_split_derivative)


def split(self, split_size_or_sections, dim=0):
    d = wrap_dim(dim, self._data.ndim)
    size = self._data.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = tuple(int(s) for s in split_size_or_sections)
        if sum(sizes) != size:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} "
                               f"(input tensor's size at dimension {d}), but got "
                               f"split_sizes=[{', '.join(map(str, sizes))}]")
        return _split_with_sizes(self, dim=d, sizes=sizes)
    step = int(split_size_or_sections)
    if step <= 0 and size:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                           f"dimension size of {size}")
    sizes = tuple(min(step, size - i) for i in range(0, size, step)) if size else (0,)
    return _split(self, dim=d, sizes=sizes)


def chunk(self, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    size = self._data.shape[wrap_dim(dim, self._data.ndim)]
    step = -(-size // chunks) if size else 1
    return split(self, max(step, 1), dim)


def tensor_split(self, indices_or_sections, dim=0):
    d = wrap_dim(dim, self._data.ndim)
    size = self._data.shape[d]
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        base, extra = divmod(size, n)
        sizes = [base + 1] * extra + [base] * (n - extra)
    else:
        bounds = [0] + [min(int(i), size) for i in indices_or_sections] + [size]
        sizes = [max(b - a, 0) for a, b in zip(bounds, bounds[1:])]
    return _split_with_sizes(self, dim=d, sizes=tuple(sizes))


@primitive("diagonal", node="DiagonalBackward0", view=True)
def _diagonal(xp, self, *, offset, dim1, dim2):
    return xp.diagonal(self, offset, dim1, dim2)


@_diagonal.derivative
def _(ctx, grad):
    from .indexing import diagonal_backward
    return diagonal_backward(grad, ctx.input_shape(), ctx.offset, ctx.dim1, ctx.dim2)


def diagonal(self, offset=0, dim1=0, dim2=1):
    n = self._data.ndim
    d1, d2 = wrap_dim(dim1, n), wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return _diagonal(self, offset=offset, dim1=d1, dim2=d2)


@primitive("unfold", node="UnfoldBackward0", view=True)
def _unfold(xp, self, *, dimension, size, step):
    windows = np.lib.stride_tricks.sliding_window_view(self, size, axis=dimension,
                                                       writeable=True)
    return windows[(slice(None),) * dimension + (slice(None, None, step),)]


@_unfold.derivative
def _(ctx, grad):
    from .indexing import unfold_backward
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


@primitive("as_strided", node="AsStridedBackward0", view=True)
def _as_strided(xp, self, *, size, stride, storage_offset, base_offset):
    return strided_view(self, size, stride, storage_offset - base_offset)


@_as_strided.derivative
def _(ctx, grad):
    from .indexing import as_strided_backward
    return as_strided_backward(grad, ctx.input_shape(), ctx.size, ctx.stride,
                               ctx.storage_offset - ctx.base_offset)


def as_strided(self, size, stride, storage_offset=None):
    offset = self.storage_offset() if storage_offset is None else storage_offset
    return _as_strided(self, size=tuple(size), stride=tuple(stride), storage_offset=offset,
                       base_offset=self.storage_offset())


# ----------------------------------------------------------------------------- in place via views
class CopySlices(Node):
    """The history of a base after one of its views was written in place.

    Its first input is the base's previous history; the others are those of the in-place op
    `fn`. Backward: the gradient of the base, with the view's region replaced by what `fn`'s
    derivative sends to its `self` input.
    """
    __slots__ = ("fn", "view_geometry", "base_shape", "base_strides", "_n_outputs")

    @classmethod
    def rebase(cls, base, view_tensor, fn):
        node = cls.__new__(cls)
        Node.__init__(node, (base._edge(),) + fn.next_functions[1:])
        node.fn = fn
        node._n_outputs = 1
        node.view_geometry = geometry(view_tensor)
        node.base_shape = base._data.shape
        node.base_strides = base.stride()
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
        from .creation import empty_strided
        result = empty_strided(self.base_shape, self.base_strides, dtype=grad._dtype)
        result.copy_(grad)
        shape, strides, offset = self.view_geometry
        region = result.as_strided(shape, strides, offset)
        fn_needs = (True,) + tuple(needs[1:])
        fn_grads = self.fn.apply((region.clone(),), fn_needs)
        if fn_grads[0] is not None:
            region.copy_(fn_grads[0])
        else:
            region.zero_()
        return (result,) + tuple(fn_grads[1:])


def regenerate_view_grad_fn(view_tensor):
    """Point a view's grad_fn at its base's current history (AsStridedBackward0)."""
    base = view_tensor._base
    shape, strides, offset = geometry(view_tensor)
    node = _as_strided.node_cls.__new__(_as_strided.node_cls)
    Node.__init__(node, (base._edge(),))
    node._op = _as_strided
    node._params = {"size": shape, "stride": strides, "storage_offset": offset,
                    "base_offset": 0}
    node._saved = {}
    node._input_meta = ((base._data.shape, base._dtype),)
    node.needs_input_grad = ()
    view_tensor._grad_fn = node
    view_tensor._output_nr = 0
    view_tensor._requires_grad = True
    view_tensor._fn_version = view_tensor._version.value
