"""torch.sparse.sum and torch.sparse.softmax on COO tensors."""
from .._tensor import Tensor
from ..ops.registry import primitive
from ._coo import COOArrays
from ._conversions import is_sparse


@primitive("sparse_sum_all", node="SumBackward0", save=("self",))
def _sum_all(xp, self):
    return xp.asarray(self.values.sum(dtype=self.values.dtype))


@_sum_all.derivative
def _(ctx, grad):
    return grad.expand(ctx.self.shape)


def _sum_dims(coo, dims):
    """The COO arrays summed over `dims`: a sparse result while sparse dims remain, else the
    dense sum of the values."""
    xp = coo.xp
    k = coo.sparse_dim
    sparse_dims = [d for d in dims if d < k]
    dense_axes = tuple(d - k + 1 for d in dims if d >= k)
    values = coo.values.sum(axis=dense_axes) if dense_axes else coo.values
    keep = [d for d in range(k) if d not in sparse_dims]
    shape = tuple(s for d, s in enumerate(coo.shape) if d not in dims)
    if not keep:
        return xp.asarray(values.sum(axis=0))
    out = COOArrays(coo.indices[keep], values, shape, False)
    return out.coalesce()


@primitive("sparse_sum", node="SparseSumBackward0", save=("self",))
def _sum(xp, self, *, dims):
    return _sum_dims(self, dims)


@_sum.derivative
def _(ctx, grad):
    # each entry of the input (its coalesced pattern) gets the gradient of the output
    # element it was summed into
    given = ctx.self._data
    coo = given.coalesce()
    k = coo.sparse_dim
    dims = ctx.dims
    keep = [d for d in range(k) if d not in dims]
    garr = (grad.to_dense() if is_sparse(grad) else grad)._data
    xp = coo.xp
    # the summed dense dims come back with size one, so the gradient broadcasts over them
    kept_dense = iter(garr.shape[len(keep):])
    dense = tuple(1 if d in dims else next(kept_dense) for d in range(k, coo.ndim))
    garr = garr.reshape(garr.shape[:len(keep)] + dense)
    picked = garr[tuple(coo.indices[keep])] if keep else garr[None]
    values = xp.broadcast_to(picked, coo.values.shape).copy()
    return Tensor._make(COOArrays(coo.indices, values, coo.shape, given.coalesced),
                        grad._dtype, grad._device)


def sum(input, dim=None, dtype=None):
    """torch.sparse.sum: all entries (a dense scalar), or over `dim` (sparse while sparse dims
    remain)."""
    if dtype is not None:
        input = input.to(dtype)
    if not is_sparse(input):
        return input.sum() if dim is None else input.sum(dim)
    if dim is None:
        return _sum_all(input)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    n = input.dim()
    dims = tuple(sorted(d % n if -n <= d < n else _bad_dim(d, n) for d in dims))
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {dims[0]} appears multiple times in the list of dims")
    return _sum(input, dims=dims)


def _bad_dim(d, n):
    raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                     f"but got {d})")
