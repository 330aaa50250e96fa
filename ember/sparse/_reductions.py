"""torch.sparse.sum, softmax and log_softmax on COO tensors."""
import numpy as np

from .._backend import of as _backend_of
from .._tensor import Tensor
from ..ops.registry import primitive
from ._coo import COOArrays
from ._conversions import is_sparse
from ._compressed import is_compressed, refuse_coo_method


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
    if is_compressed(input):
        raise refuse_coo_method(input, "coalesce")      # (torch.sparse.sum is COO's)
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


# ---------------------------------------------------------------------- softmax
def _groups(coo, dim):
    """For a softmax over `dim`: each entry's group (the entries sharing every other sparse
    index), as consecutive numbers, and their count."""
    xp = coo.xp
    key = xp.zeros(coo.nnz, dtype=np.int64)
    for d in range(coo.sparse_dim):
        if d != dim:
            key = key * coo.shape[d] + coo.indices[d]
    _, group = xp.unique(key, return_inverse=True)
    return group.reshape(-1), int(group.max()) + 1 if coo.nnz else 0


def _group_sum(xp, values, group, n):
    out = xp.zeros((n,) + values.shape[1:], dtype=values.dtype)
    _backend_of(xp).scatter_add(out, group, values)
    return out


def _softmax_arrays(coo, dim, log):
    """softmax (or log_softmax) of a coalesced tensor's values over `dim`: along a dense dim
    within each entry, along a sparse dim among the entries sharing the other indices (the
    missing ones count as -inf, so they take no share)."""
    xp = coo.xp
    v = coo.values
    if dim >= coo.sparse_dim:
        axis = dim - coo.sparse_dim + 1
        shifted = v - v.max(axis=axis, keepdims=True)
        total = xp.exp(shifted).sum(axis=axis, keepdims=True)
    else:
        group, n = _groups(coo, dim)
        top = xp.full((n,) + v.shape[1:], -np.inf, dtype=v.dtype)
        if xp is np:
            np.maximum.at(top, group, v)
        else:
            import cupyx            # (a GPU array: CuPy is there)
            cupyx.scatter_max(top, group, v)
        shifted = v - top[group]
        total = _group_sum(xp, xp.exp(shifted), group, n)[group]
    return shifted - xp.log(total) if log else xp.exp(shifted) / total


def _softmax_forward(self, dim, log):
    c = self.coalesce()
    return COOArrays(c.indices, _softmax_arrays(c, dim, log), c.shape, True)


def _softmax_backward(ctx, grad, log):
    coo = ctx.self._data.coalesce()
    xp = coo.xp
    y = _softmax_arrays(coo, ctx.dim, log)
    g = (grad.to_dense() if is_sparse(grad) else grad)._data[tuple(coo.indices)]
    if ctx.given_dim < 0:
        # (torch's backward takes a negative dim as it comes: each value is then alone)
        summed = lambda a: a                                    # noqa: E731
    elif ctx.dim >= coo.sparse_dim:
        axis = ctx.dim - coo.sparse_dim + 1
        summed = lambda a: a.sum(axis=axis, keepdims=True)     # noqa: E731
    else:
        group, n = _groups(coo, ctx.dim)
        summed = lambda a: _group_sum(xp, a, group, n)[group]  # noqa: E731
    values = g - xp.exp(y) * summed(g) if log else y * (g - summed(g * y))
    return Tensor._make(COOArrays(coo.indices, values, coo.shape, True), grad._dtype,
                        grad._device)


@primitive("sparse_softmax", node="SparseSoftmaxBackward0", save=("self",))
def _softmax(xp, self, *, dim, given_dim):
    return _softmax_forward(self, dim, False)


@_softmax.derivative
def _(ctx, grad):
    return _softmax_backward(ctx, grad, False)


@primitive("sparse_log_softmax", node="SparseLogSoftmaxBackward0", save=("self",))
def _log_softmax(xp, self, *, dim, given_dim):
    return _softmax_forward(self, dim, True)


@_log_softmax.derivative
def _(ctx, grad):
    return _softmax_backward(ctx, grad, True)


def _softmax_call(input, dim, dtype, log):
    if dtype is not None:
        input = input.to(dtype)
    n = input.dim()
    if not -n <= dim < n:
        _bad_dim(dim, n)
    op = _log_softmax if log else _softmax
    return op(input, dim=dim % n, given_dim=dim)


def softmax(input, dim, *, dtype=None):
    """torch.sparse.softmax: over the specified entries only (the others count as -inf)."""
    return _softmax_call(input, dim, dtype, False)


def log_softmax(input, dim, *, dtype=None):
    """torch.sparse.log_softmax: the log of sparse.softmax, computed directly."""
    return _softmax_call(input, dim, dtype, True)
