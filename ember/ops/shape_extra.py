"""More shape, indexing and product ops: broadcast_to, atleast_nd, meshgrid, repeat_interleave,
take, index_fill/copy, rot90, kron, tensordot, addmv/addr/baddbmm/addbmm, block_diag, cdist,
cov, ...

Most are composites of existing ember ops, so their graphs show the parts' nodes, as PyTorch's
do for them. Where PyTorch shows a node of its own (take, index_fill, index_copy, rot90,
diag_embed, addmv, addr, baddbmm, addbmm, block_diag, cdist, dist) the op is a primitive here
with PyTorch's node name and a derivative in ember ops.
"""
import warnings

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
from ._utils import wrap_dim
from .registry import primitive, COMMON
from . import views as V


def _long(a):
    return Tensor._make(a, D.int64)


def _tensors_of(tensors):
    """f(a, b) and f([a, b]) both mean the tensors a and b."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(tensors[0])
    return tuple(tensors)


# ----------------------------------------------------------------------------- shapes
def broadcast_to(input, size):
    return input.expand(size)


def _atleast(tensors, fix):
    single = len(tensors) == 1 and isinstance(tensors[0], Tensor)
    out = tuple(fix(t) for t in _tensors_of(tensors))
    return out[0] if single else out


def atleast_1d(*tensors):
    return _atleast(tensors, lambda t: t.reshape(1) if t.dim() == 0 else t)


def atleast_2d(*tensors):
    def fix(t):
        if t.dim() == 0:
            return t.reshape(1, 1)
        return t.unsqueeze(0) if t.dim() == 1 else t
    return _atleast(tensors, fix)


def atleast_3d(*tensors):
    def fix(t):
        n = t.dim()
        if n == 0:
            return t.reshape(1, 1, 1)
        if n == 1:
            return t.unsqueeze(0).unsqueeze(-1)
        return t.unsqueeze(-1) if n == 2 else t
    return _atleast(tensors, fix)


_MESHGRID_WARNING = ("torch.meshgrid: in an upcoming release, it will be required to pass the "
                     "indexing argument. (Triggered internally at "
                     "/__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4215.)")


def meshgrid(*tensors, indexing=None):
    tensors = _tensors_of(tensors)
    if indexing is None:
        warnings.warn(_MESHGRID_WARNING, UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got: {t}")
    for t in tensors[1:]:
        if t._dtype is not tensors[0]._dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    order = list(tensors)
    swap = indexing == "xy" and len(order) >= 2
    if swap:                      # "xy": the first two axes trade places
        order[0], order[1] = order[1], order[0]
    shape = tuple(t.numel() for t in order)
    grids = []
    for i, t in enumerate(order):
        view_shape = [1] * len(order)
        view_shape[i] = -1
        grids.append(t.view(view_shape).expand(shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


# ----------------------------------------------------------------------------- repeats
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    if repeats is None:                  # torch.repeat_interleave(counts): the indices
        counts = input
        if counts.dim() > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        return _long(np.repeat(np.arange(counts.numel(), dtype=np.int64),
                               counts._data.astype(np.int64)))
    if dim is None:
        input = input.reshape(-1)
        dim = 0
    d = wrap_dim(dim, input.dim())
    if input.dim() == 0:    # a dim given for a scalar: PyTorch's errors (its int path unsqueezes)
        if isinstance(repeats, Tensor):
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got "
                         f"{d + 1})")
    size = input.shape[d]
    if isinstance(repeats, Tensor):
        if repeats.dim() > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if repeats._dtype not in (D.int32, D.int64):
            raise NotImplementedError(f'"repeat_interleave_cpu" not implemented for '
                                      f"'{_scalar_name(repeats._dtype)}'")
        counts = repeats._data.reshape(-1).astype(np.int64)
        if counts.size == 1:                    # one count for every slice
            counts = np.broadcast_to(counts, (size,))
        else:
            if repeats.numel() != size:
                raise RuntimeError(f"repeats must have the same size as input along dim, but "
                                   f"got repeats.size(0) = {repeats.numel()} and input.size({d})"
                                   f" = {size}")
        if (counts < 0).any():
            raise RuntimeError("repeats can not be negative")
        index = np.repeat(np.arange(size, dtype=np.int64), counts)
        if output_size is not None and output_size != index.size:
            raise RuntimeError("allocated size does not match required size")
        return input.index_select(d, _long(index))
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    if output_size is not None and output_size != size * repeats:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {size * repeats} "
                           f"but got {output_size}")
    # an int count: each slice along d is expanded, then the pair of dims flattened
    shape = list(input.shape)
    expanded = input.unsqueeze(d + 1).expand(shape[:d + 1] + [repeats] + shape[d + 1:])
    # (PyTorch's graph: ViewBackward0 over CloneBackward0 over the expand; a clone even where
    # the expansion is already contiguous, so the result never views the input)
    out_shape = shape[:d] + [shape[d] * repeats] + shape[d + 1:]
    from .. import contiguous_format
    return expanded.clone(memory_format=contiguous_format).view(out_shape)


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
    from .creation import zeros
    flat = zeros(int(np.prod(ctx.input_shape())), dtype=grad._dtype)
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
    from .._printing import scalar_type_name
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


# ----------------------------------------------------------------------------- diagonals
def fill_diagonal_(self, fill_value, wrap=False):
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.dim() > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    # the diagonal is a strided view; filling it in place records CopySlices, as in PyTorch
    n, step = min(self.shape), sum(self.stride())
    self.as_strided((n,), (step,), self.storage_offset()).fill_(fill_value)
    rows, cols = self.shape[0], self.shape[1] if self.dim() == 2 else 0
    if wrap and self.dim() == 2 and rows > cols + 1 and self.is_contiguous():
        # a tall matrix's diagonal starts again every (cols + 1) rows
        start = (cols + 1) * cols
        count = len(range(start, rows * cols, cols + 1))
        self.as_strided((count,), (cols + 1,), self.storage_offset() + start).fill_(fill_value)
    return self


@primitive("diag_embed", node="DiagEmbedBackward0")
def _diag_embed(xp, self, *, offset, dim1, dim2):
    n = self.shape[-1] + abs(offset)
    shape = list(self.shape[:-1])
    for d in sorted((dim1, dim2)):
        shape.insert(d, n)
    out = xp.zeros(shape, self.dtype)
    V._diagonal.forward(xp, out, offset=offset, dim1=dim1, dim2=dim2)[...] = self
    return out


@_diag_embed.derivative
def _(ctx, grad):
    return grad.diagonal(ctx.offset, ctx.dim1, ctx.dim2)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    n = input.dim() + 1
    d1, d2 = wrap_dim(dim1, n), wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return _diag_embed(input, offset=offset, dim1=d1, dim2=d2)


def diagflat(input, offset=0):
    return _diag_embed(input.reshape(-1), offset=offset, dim1=0, dim2=1)


# ----------------------------------------------------------------------------- rot90
@primitive("rot90", node="Rot90Backward0")
def _rot90(xp, self, *, k, dims):
    # laid out as PyTorch's: a contiguous copy (k = 0), or a flip (laid out as the input) that
    # an odd k then transposes in place
    from .indexing import _flip
    if k == 0:
        return xp.array(self, order="C", copy=True)
    flipped = _flip.forward(xp, self, dims=(dims[1],) if k == 1 else
                            (dims[0],) if k == 3 else dims)
    return flipped if k == 2 else xp.swapaxes(flipped, *dims)


@_rot90.derivative
def _(ctx, grad):
    return _rot90(grad, k=-ctx.k % 4, dims=ctx.dims)


def rot90(input, k=1, dims=(0, 1)):
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    n = input.dim()
    if n < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
    d0, d1 = wrap_dim(dims[0], n), wrap_dim(dims[1], n)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} "
                           f"and dim1 = {dims[1]}")
    return _rot90(input, k=k % 4, dims=(d0, d1))


# ----------------------------------------------------------------------------- products
def kron(input, other):
    n = max(input.dim(), other.dim())
    a = input.reshape((1,) * (n - input.dim()) + tuple(input.shape))
    b = other.reshape((1,) * (n - other.dim()) + tuple(other.shape))
    # a's dims interleaved with b's: (a0, 1, a1, 1, ...) * (1, b0, 1, b1, ...)
    a_shape, b_shape = [], []
    for sa, sb in zip(a.shape, b.shape):
        a_shape += [sa, 1]
        b_shape += [1, sb]
    prod = V._unsafe_view(a, shape=tuple(a_shape)) * V._unsafe_view(b, shape=tuple(b_shape))
    return V._unsafe_view(prod, shape=tuple(sa * sb for sa, sb in zip(a.shape, b.shape)))


def tensordot(a, b, dims=2, out=None):
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.dim() or dims > b.dim():
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a = list(range(a.dim() - dims, a.dim()))
        dims_b = list(range(dims))
    else:
        dims_a, dims_b = dims
        dims_a = [dims_a] if isinstance(dims_a, int) else list(dims_a)
        dims_b = [dims_b] if isinstance(dims_b, int) else list(dims_b)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    dims_a = [wrap_dim(d, a.dim()) for d in dims_a]
    dims_b = [wrap_dim(d, b.dim()) for d in dims_b]
    for da, db in zip(dims_a, dims_b):
        if a.shape[da] != b.shape[db]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[da]} in dim {da} and second has size {b.shape[db]} in "
                               f"dim {db}")
    free_a = [d for d in range(a.dim()) if d not in dims_a]
    free_b = [d for d in range(b.dim()) if d not in dims_b]
    size = int(np.prod([a.shape[d] for d in dims_a]))
    left = a.permute(free_a + dims_a).reshape(-1, size)
    right = b.permute(dims_b + free_b).reshape(size, -1)
    result = left.mm(right).reshape([a.shape[d] for d in free_a] + [b.shape[d] for d in free_b])
    from .pointwise import _out
    return _out(result, out, "tensordot")


def inner(input, other, *, out=None):
    if input.dim() == 0 or other.dim() == 0:
        result = input * other
    else:
        if input._dtype is not other._dtype:
            raise RuntimeError("both inputs should have same dtype")
        if input.shape[-1] != other.shape[-1]:
            raise RuntimeError(f"inner() the last dimension must match on both input tensors "
                               f"but got shapes {list(input.shape)} and {list(other.shape)}")
        result = tensordot(input, other, ([-1], [-1]))
    from .pointwise import _out
    return _out(result, out, "inner")


def _scaled(t, factor):
    return t if factor == 1 else t * factor


def _add_product_backward(ctx, grad, product_grads):
    """(self, a, b) gradients of beta * self + alpha * product(a, b)."""
    needs = ctx.needs_input_grad
    g_self = None
    if needs[0]:
        g_self = grad * 0 if ctx.beta == 0 else _scaled(grad, ctx.beta)
    ga, gb = product_grads(_scaled(grad, ctx.alpha), needs)
    return g_self, ga, gb


def _add_product(xp, self, product, beta, alpha):
    dtype = product.dtype
    if alpha != 1:
        product = product * dtype.type(alpha)
    if beta == 0:                       # self is ignored, even its nan/inf (as in PyTorch)
        return xp.broadcast_to(product, np.broadcast_shapes(self.shape, product.shape)).copy()
    return (product + (self if beta == 1 else self * dtype.type(beta))).astype(dtype, copy=False)


def _product(xp, a, b):
    from .linalg import _product as product
    return product(xp, a, b)


@primitive("addmv", node="AddmvBackward0", save=("mat", "vec"))
def _addmv(xp, self, mat, vec, *, beta, alpha):
    return _add_product(xp, self, _product(xp, mat, vec), beta, alpha)


@_addmv.derivative
def _(ctx, grad):
    def grads(g, needs):
        return (g.unsqueeze(1) * ctx.vec.unsqueeze(0) if needs[1] else None,
                ctx.mat.t().mv(g) if needs[2] else None)
    return _add_product_backward(ctx, grad, grads)


@primitive("addr", node="AddrBackward0", save=("vec1", "vec2"))
def _addr(xp, self, vec1, vec2, *, beta, alpha):
    return _add_product(xp, self, xp.multiply.outer(vec1, vec2), beta, alpha)


@_addr.derivative
def _(ctx, grad):
    def grads(g, needs):
        return (g.mv(ctx.vec2) if needs[1] else None,
                g.t().mv(ctx.vec1) if needs[2] else None)
    return _add_product_backward(ctx, grad, grads)


@primitive("baddbmm", node="BaddbmmBackward0", save=("batch1", "batch2"))
def _baddbmm(xp, self, batch1, batch2, *, beta, alpha):
    return _add_product(xp, self, _product(xp, batch1, batch2), beta, alpha)


@_baddbmm.derivative
def _(ctx, grad):
    def grads(g, needs):
        return (g.bmm(ctx.batch2.transpose(1, 2)) if needs[1] else None,
                ctx.batch1.transpose(1, 2).bmm(g) if needs[2] else None)
    return _add_product_backward(ctx, grad, grads)


@primitive("addbmm", node="AddbmmBackward0", save=("batch1", "batch2"))
def _addbmm(xp, self, batch1, batch2, *, beta, alpha):
    return _add_product(xp, self, _product(xp, batch1, batch2).sum(0), beta, alpha)


@_addbmm.derivative
def _(ctx, grad):
    def grads(g, needs):
        g = g.unsqueeze(0).expand(ctx.input_shape(1)[0], *g.shape)
        return (g.bmm(ctx.batch2.transpose(1, 2)) if needs[1] else None,
                ctx.batch1.transpose(1, 2).bmm(g) if needs[2] else None)
    return _add_product_backward(ctx, grad, grads)


def _check_same_dtype(*tensors):
    first = tensors[0]._dtype
    for t in tensors[1:]:
        if t._dtype is not first:
            raise RuntimeError(f"expected scalar type {_scalar_name(first)} but found "
                               f"{_scalar_name(t._dtype)}")


def _check_scalars(t, beta, alpha, strict=False):
    """(beta, alpha) for t's dtype: for integer tensors PyTorch truncates float factors
    (addmm, addmv, baddbmm, addbmm) or refuses them (strict: addr)."""
    if t._dtype._category < 2:
        for name, v in (("beta", beta), ("alpha", alpha)):
            if isinstance(v, float) and strict:
                raise RuntimeError(f"For integral input tensors, argument {name} must not be a "
                                   f"floating point number.")
        beta, alpha = (int(v) if isinstance(v, float) else v for v in (beta, alpha))
    return beta, alpha


def _check_broadcasts(input, shape, op):
    try:
        ok = np.broadcast_shapes(tuple(input.shape), tuple(shape)) == tuple(shape)
    except ValueError:
        ok = False
    if not ok:
        input.expand(shape)         # raises PyTorch's expand error
        raise RuntimeError(f"{op}: input shape {list(input.shape)} cannot broadcast to "
                           f"{list(shape)}")


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None, _inplace=False):
    if mat.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.dim()}, {mat.dim()}, "
                           f"{vec.dim()}")
    if mat.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0] if input.dim() else 1}), "
                           f"mat ({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})")
    if not input._dtype is mat._dtype is vec._dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{_scalar_name(input._dtype)}, {_scalar_name(mat._dtype)}, and "
                           f"{_scalar_name(vec._dtype)}")
    beta, alpha = _check_scalars(mat, beta, alpha)
    _check_broadcasts(input, (mat.shape[0],), "addmv")
    from .pointwise import _out
    if _inplace:
        return _addmv.inplace(input, mat, vec, beta=beta, alpha=alpha)
    return _out(_addmv(input, mat, vec, beta=beta, alpha=alpha), out, "addmv")


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None, _inplace=False):
    if vec1.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.dim()}-D"
                           if vec1.dim() != 1 else
                           f"addr: Expected 1-D argument vec2, but got {vec2.dim()}-D")
    _check_same_dtype(input, vec1, vec2)
    _check_scalars(vec1, beta, alpha, strict=True)
    _check_broadcasts(input, (vec1.shape[0], vec2.shape[0]), "addr")
    from .pointwise import _out
    if _inplace:
        return _addr.inplace(input, vec1, vec2, beta=beta, alpha=alpha)
    return _out(_addr(input, vec1, vec2, beta=beta, alpha=alpha), out, "addr")


def _check_batches(batch1, batch2):
    if batch1.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0] or batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{batch1.shape[0]}, {batch1.shape[2]}] but got: "
                           f"[{batch2.shape[0]}, {batch2.shape[1]}].")


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None, _inplace=False):
    if input._dtype is not batch1._dtype:        # (checked before the shapes)
        from .pointwise import CPP_NAMES
        raise RuntimeError(f"Input dtypes must be the same, got: input "
                           f"{CPP_NAMES[input._dtype.name]}, batch1: "
                           f"{CPP_NAMES[batch1._dtype.name]}, batch2: "
                           f"{CPP_NAMES[batch2._dtype.name]}")
    _check_batches(batch1, batch2)
    _check_same_dtype(input, batch1, batch2)
    beta, alpha = _check_scalars(batch1, beta, alpha)
    _check_broadcasts(input, (batch1.shape[0], batch1.shape[1], batch2.shape[2]), "baddbmm")
    from .pointwise import _out
    if _inplace:
        return _baddbmm.inplace(input, batch1, batch2, beta=beta, alpha=alpha)
    return _out(_baddbmm(input, batch1, batch2, beta=beta, alpha=alpha), out, "baddbmm")


def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None, _inplace=False):
    _check_batches(batch1, batch2)
    from .linalg import check_addmm_dtypes
    check_addmm_dtypes(input, batch1, batch2)
    beta, alpha = _check_scalars(batch1, beta, alpha)
    _check_broadcasts(input, (batch1.shape[1], batch2.shape[2]), "addbmm")
    from .pointwise import _out
    if _inplace:
        return _addbmm.inplace(input, batch1, batch2, beta=beta, alpha=alpha)
    return _out(_addbmm(input, batch1, batch2, beta=beta, alpha=alpha), out, "addbmm")


def matrix_power(input, n):
    if input.dim() < 2 or input.shape[-1] != input.shape[-2]:
        if input.dim() < 2:
            raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 "
                               "dimensions.")
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but "
                           f"they are {input.shape[-2]} by {input.shape[-1]} matrices")
    if n == 0:
        from .creation import eye
        # PyTorch copies the identity into a clone of input (CopyBackwards: a zero gradient)
        return input.clone().copy_(eye(input.shape[-1], dtype=input._dtype).expand(input.shape))
    if n < 0:
        from .linalg_extra import inverse
        input, n = inverse(input), -n
    # binary powering: the squares of input, multiplied in where n has a one bit
    result, square = None, input
    while n:
        if n & 1:
            result = square if result is None else result.matmul(square)
        n >>= 1
        if n:
            square = square.matmul(square)
    return result.clone() if result is input else result


# ----------------------------------------------------------------------------- assembling
def _as_block(shape):
    return (1, 1) if len(shape) == 0 else (1, shape[0]) if len(shape) == 1 else tuple(shape)


@primitive("block_diag", node="BlockDiagBackward0", promote=COMMON)
def _block_diag(xp, *tensors):
    blocks = [t.reshape(_as_block(t.shape)) for t in tensors]
    out = xp.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)),
                   blocks[0].dtype if blocks else np.float32)
    r = c = 0
    for b in blocks:
        out[r:r + b.shape[0], c:c + b.shape[1]] = b
        r, c = r + b.shape[0], c + b.shape[1]
    return out


@_block_diag.derivative
def _(ctx, grad):
    grads, r, c = [], 0, 0
    for i, needs in enumerate(ctx.needs_input_grad):
        shape = ctx.input_shape(i)
        rows, cols = _as_block(shape)
        if needs:
            grads.append(grad[r:r + rows, c:c + cols].reshape(shape))
        else:
            grads.append(None)
        r, c = r + rows, c + cols
    return tuple(grads)


def block_diag(*tensors):
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t.dim()} dimensions")
    if not tensors:
        from .creation import zeros
        return zeros(1, 0)
    return _block_diag(*tensors)


def cartesian_prod(*tensors):
    from .joining import stack
    tensors = _tensors_of(tensors)
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.flatten() for g in grids], 1)


def _tri_indices(rows, cols, pick, dtype):
    if rows < 0:
        raise RuntimeError(f"row must be non-negative, got{rows}")
    if cols < 0:
        raise RuntimeError(f"col must be non-negative, got{cols}")
    r, c = np.nonzero(pick(np.ones((rows, cols), dtype=bool)))
    from .creation import tensor
    return tensor(np.stack([r, c]).astype(np.int64), dtype=dtype)


def triu_indices(row, col, offset=0, *, dtype=D.int64, device=None, layout=None):
    return _tri_indices(row, col, lambda m: np.triu(m, offset), dtype)


def tril_indices(row, col, offset=0, *, dtype=D.int64, device=None, layout=None):
    return _tri_indices(row, col, lambda m: np.tril(m, offset), dtype)


# ----------------------------------------------------------------------------- distances
def _pnorm(xp, diff, p):
    """The p-norm over the last axis of an array of differences."""
    a = xp.abs(diff)
    if p == 0:
        return (a != 0).sum(-1).astype(diff.dtype)
    if p == np.inf:
        return a.max(-1, initial=0)
    if p == 1:
        return a.sum(-1)
    if p == 2:
        return xp.sqrt((a * a).sum(-1))
    return (a ** p).sum(-1) ** (1 / p)


def _pnorm_grad(diff, norm, grad, p, split_ties=False):
    """d norm_p(diff) / d diff times grad (grad and norm over the last dim, unsqueezed):
    sign(diff) |diff|^(p-1) / norm^(p-1), and zero where the norm is zero (as PyTorch).
    p = 0 has no gradient (None, as PyTorch leaves it undefined); for p = inf every element
    at the maximum gets the gradient, shared among them with split_ties (PyTorch's dist does,
    its cdist does not)."""
    from .pointwise import where
    if p == 0:
        return None
    if p == 1:
        return grad * diff.sign()
    if p == np.inf:
        hit = (diff.abs() == norm).to(diff._dtype)
        if split_ties:
            hit = hit / hit.sum()
        return where(norm == 0, 0.0, grad * diff.sign() * hit)
    safe = where(norm == 0, 1.0, norm)
    if p == 2:
        return where(norm == 0, 0.0, grad * diff / safe)
    ratio = diff.abs() / safe
    return where(norm == 0, 0.0, grad * diff.sign() * ratio ** (p - 1))


@primitive("cdist", node="CdistBackward0", save=("x1", "x2", "result"))
def _cdist(xp, x1, x2, *, p):
    return _pnorm(xp, x1[..., :, None, :] - x2[..., None, :, :], p)


@_cdist.derivative
def _(ctx, grad):
    diff = ctx.x1.unsqueeze(-2) - ctx.x2.unsqueeze(-3)
    g = _pnorm_grad(diff, ctx.result.unsqueeze(-1), grad.unsqueeze(-1), ctx.p)
    needs = ctx.needs_input_grad
    if g is None:
        return None, None
    return (g.sum(-2) if needs[0] else None, -g.sum(-3) if needs[1] else None)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    if x1.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {x2.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if x1._dtype._category < 2 or x2._dtype._category < 2:
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: "
                           f"{_scalar_name(x1._dtype)}" if x1._dtype._category < 2 else
                           f"cdist only supports floating-point dtypes, X2 got: "
                           f"{_scalar_name(x2._dtype)}")
    return _cdist(x1, x2, p=float(p))


@primitive("dist", node="DistBackward0", save=("self", "other", "result"), promote=COMMON)
def _dist(xp, self, other, *, p):
    diff = xp.subtract(self, other).reshape(-1)
    return xp.asarray(_pnorm(xp, diff, p))


@_dist.derivative
def _(ctx, grad):
    g = _pnorm_grad(ctx.self - ctx.other, ctx.result, grad, ctx.p, split_ties=True)
    needs = ctx.needs_input_grad
    if g is None:
        return None, None
    return (g if needs[0] else None, -g if needs[1] else None)


def dist(input, other, p=2):
    # PyTorch's dist is norm(input - other): the subtraction's bool error, then norm's dtype one
    from .pointwise import _check_bool_sub
    if D.bool_ in (input._dtype, other._dtype):
        _check_bool_sub(input, other)
    dtype = D.result_dtype([input, other])
    if dtype._category < 2:
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {_scalar_name(dtype)} instead.")
    return _dist(input, other, p=float(p))


# ----------------------------------------------------------------------------- splits
def _split_dim(name, input, sections, dim, need):
    if input.dim() < need:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {need} dimension, but "
                           f"got a tensor with {input.dim()} dimensions!")
    if isinstance(sections, int):
        size = input.shape[dim]
        if sections == 0 or size % sections:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but "
                               f"the size of the dimension {size} is not divisible by the "
                               f"split_size {sections}!")
    return input.tensor_split(sections, dim)


def hsplit(input, indices_or_sections):
    if input.dim() < 1:
        raise RuntimeError("torch.hsplit requires a tensor with at least 1 dimension, but got a "
                           "tensor with 0 dimensions!")
    return _split_dim("hsplit", input, indices_or_sections, 1 if input.dim() > 1 else 0, 1)


def vsplit(input, indices_or_sections):
    return _split_dim("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input, indices_or_sections):
    return _split_dim("dsplit", input, indices_or_sections, 2, 3)


# ----------------------------------------------------------------------------- statistics
_COV_DOF_WARNING = ("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                    "than the number of observations. (Triggered internally at "
                    "/__w/pytorch/pytorch/aten/src/ATen/native/Correlation.cpp:129.)")


def _check_weights(name, w, n, integral):
    if w.dim() > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {w.dim()} dimensions")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w.numel()} != {n}")
    if integral and w._dtype._category != 1:
        raise RuntimeError(f"cov(): expected {name} to have integral dtype but got {name} "
                           f"with {_scalar_name(w._dtype)} dtype")
    if not integral and w._dtype._category != 2:
        raise RuntimeError(f"cov(): expected {name} to have floating point dtype but got "
                           f"{name} with {_scalar_name(w._dtype)} dtype")
    if (w._data < 0).any():
        raise RuntimeError(f"cov(): {name} cannot be negative")


def cov(input, *, correction=1, fweights=None, aweights=None):
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.dim()} dimensions")
    x = input.reshape(1, -1) if input.dim() < 2 else input
    if x._dtype._category < 2:
        x = x.to(D.get_default_dtype())
    n = x.shape[1]
    # observation weights: fweights (counts) times aweights (importance)
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, n, True)
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, n, False)
        w = aweights if w is None else w * aweights
    if w is None:
        avg = x.mean(1)
        norm_factor = n - correction
    else:
        w = w.to(x._dtype) if w._dtype._category < 2 else w
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
        if aweights is not None and correction != 0:
            norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
        else:
            norm_factor = w_sum - correction
        norm_factor = float(norm_factor.item())
    if norm_factor <= 0:
        warnings.warn(_COV_DOF_WARNING, UserWarning, stacklevel=2)
        norm_factor = 0
    centred = x - avg.unsqueeze(1)
    weighted = centred if w is None else centred * w
    c = centred.mm(weighted.t().conj()) / norm_factor
    return c.squeeze()


def corrcoef(input):
    c = cov(input)
    if c.dim() == 0:
        return c / c
    std = c.diagonal().sqrt()
    c = c / std.unsqueeze(1)
    c = c / std.unsqueeze(0)
    return c.clamp(-1, 1)


__all__ = ["broadcast_to", "atleast_1d", "atleast_2d", "atleast_3d", "meshgrid",
           "repeat_interleave", "take", "take_along_dim", "index_fill", "index_copy", "rot90",
           "kron", "tensordot", "inner", "addmv", "addr", "baddbmm", "addbmm", "block_diag",
           "cartesian_prod", "triu_indices", "tril_indices", "diag_embed", "diagflat", "cdist",
           "dist", "hsplit", "vsplit", "dsplit", "matrix_power", "cov", "corrcoef"]


def _inplace_product(fn):
    """x.addmv_(...): the op's own check and node, written into x (Op.inplace)."""
    def method(self, *args, **kwargs):
        return fn(self, *args, _inplace=True, **kwargs)
    return method
