"""Shape ops that are not plain views: broadcast_to, atleast_*, meshgrid, repeat_interleave,
repeat, tile, flip, roll, rot90, tril/triu, diag/diag_embed/diagflat, block_diag,
cartesian_prod, combinations, the tri indices, ravel and the splits (hsplit, unsafe_split, ...)."""
import numpy as np
import warnings

from .. import _dtype as D
from .._layout import contiguous_format
from .._tensor import Tensor
from . import views as V
from ._utils import REQUIRED, require, wrap_dims, wrap_dim, as_shape
from .indexing import _is_int, _long, _scalar_name
from .registry import primitive, COMMON
from .tensor_info import _as_int64
from .creation import copy_strides, strided_empty, _sizes, _check_sizes, tensor, ones, zeros
from .joining import stack


# ----------------------------------------------------------------------------- reshuffles
@primitive("flip", node="FlipBackward0")
def _flip(xp, self, *, dims):
    # (the result is laid out in memory as the input is, as PyTorch's copies are)
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
    if not sizes:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    reps = as_shape(sizes)
    if len(reps) < self._data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    shape = (1,) * (len(reps) - self._data.ndim) + self._data.shape
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
    return expanded.clone(memory_format=contiguous_format).view(out_shape)


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
        return zeros(1, 0)
    return _block_diag(*tensors)


def cartesian_prod(*tensors):
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
    return tensor(np.stack([r, c]).astype(np.int64), dtype=dtype)


def triu_indices(row, col, offset=0, *, dtype=D.int64, device=None, layout=None):
    return _tri_indices(row, col, lambda m: np.triu(m, offset), dtype)


def tril_indices(row, col, offset=0, *, dtype=D.int64, device=None, layout=None):
    return _tri_indices(row, col, lambda m: np.tril(m, offset), dtype)


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
    return stack([input.index_select(0, _as_int64(row)) for row in chosen], 1)


def vander(x, N=None, increasing=False):
    if x._data.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    if N is None:
        N = x._data.shape[0]
    if N < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = x._dtype if x._dtype._category >= 2 else D.int64     # integer powers are int64
    out = ones((x._data.shape[0], N), dtype=dtype, device=x._device)
    if N > 1:
        out[:, 1:] = x.unsqueeze(1).expand(x._data.shape[0], N - 1).to(dtype).cumprod(1)
    return out if increasing else out.flip(1)


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


def ravel(input):
    return input.ravel()


def split_with_sizes(input, split_sizes, dim=0):
    return input.split_with_sizes(split_sizes, dim)


def adjoint(input):
    return input.adjoint()


__all__ = ['combinations', 'vander', 'unsafe_split', 'unsafe_split_with_sizes', 'unsafe_chunk',
               'ravel', 'split_with_sizes', 'adjoint', 'broadcast_to', 'atleast_1d', 'atleast_2d',
               'atleast_3d', 'meshgrid', 'repeat_interleave', 'rot90', 'block_diag',
               'cartesian_prod', 'triu_indices', 'tril_indices', 'diag_embed', 'diagflat',
               'hsplit', 'vsplit', 'dsplit']
