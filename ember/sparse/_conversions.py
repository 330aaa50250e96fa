"""Making sparse COO tensors and taking them apart: sparse_coo_tensor, to_sparse, to_dense,
coalesce, indices/values, each an op with torch's node so gradients flow through them."""
import numpy as np

from .. import _dtype as D
from .._device import as_device
from .._tensor import Tensor
from ..ops.registry import primitive
from ..ops import creation as _creation
from ._coo import COOArrays, invariants_checked as _invariants_checked
from . import _compressed


def is_sparse(t):
    return getattr(t._data, "_ember_sparse", False)


def _index_tensors(coo):
    """The entries' indices as int64 tensors, one per sparse dim (for indexing a dense grad)."""
    return tuple(Tensor._make(row) for row in coo.indices)


# ---------------------------------------------------------------------- sparse_coo_tensor
@primitive("sparse_coo_tensor", node="SparseCooTensorWithDimsAndTensorsBackward0")
def _from_values(xp, values, *, indices, size, coalesced):
    return COOArrays(indices, values, size, coalesced)


@_from_values.derivative
def _(ctx, grad):
    # each entry's value reached the result at its index: its gradient is the gradient there
    # (for a sparse gradient, the sum of its entries at that index, as torch coalesces it)
    if is_sparse(grad):
        return Tensor._make(_values_at(grad._data.coalesce(), ctx.indices), grad._dtype,
                            grad._device)
    rows = tuple(Tensor._make(r) for r in ctx.indices)
    return grad[rows]


def _values_at(coalesced, indices):
    """A coalesced sparse array's values at each of `indices` (zero where it has no entry),
    found by binary search on the entries' linear positions (never a dense array)."""
    xp = coalesced.xp
    n = indices.shape[1]
    out = xp.zeros((n,) + coalesced.values.shape[1:], dtype=coalesced.dtype)
    if n == 0 or coalesced.nnz == 0:
        return out
    keys = coalesced.linear_index()
    wanted = COOArrays(indices, out, coalesced.shape).linear_index()
    at = xp.minimum(xp.searchsorted(keys, wanted), coalesced.nnz - 1)
    found = keys[at] == wanted
    out[found] = coalesced.values[at[found]]
    return out


def _check_indices(indices, values, size):
    k = indices.shape[0] if indices.ndim else 0
    if size is not None and len(size) != k + values.ndim - 1:
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) "
                           f"= {len(size)}, sparse_dim = {k}, dense_dim = {values.ndim - 1}")
    if indices.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: "
                           f"{list(indices.shape)}")
    if values.ndim == 0 or values.shape[0] != indices.shape[1]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{indices.shape[1]}, nnz from values: "
                           f"{values.shape[0] if values.ndim else 1}")


def _check_invariants(coo):
    """torch's check_invariants=True checks: indices inside the size."""
    xp = coo.xp
    if coo.nnz == 0:
        return
    if int(coo.indices.min()) < 0:
        dim = int(xp.argmax((coo.indices < 0).any(axis=1)))
        raise RuntimeError(f"found negative index {int(coo.indices.min())} for dim {dim}")
    for d in range(coo.sparse_dim):
        top = int(coo.indices[d].max())
        if top >= coo.shape[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                               f"{coo.shape[d]} but found index {top}")


_NO_VALUES = object()


def sparse_coo_tensor(indices, values=_NO_VALUES, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """torch.sparse_coo_tensor: a COO tensor from its indices (sparse_dim, nnz) and values
    (nnz, *dense_shape); the size, when not given, is the smallest that holds every index.
    `sparse_coo_tensor(size)` is an empty one of that size. (torch's warning that invariant
    checks are implicitly off comes from here; its legacy constructors and torch.load, which
    do not warn, call make_coo_tensor.)"""
    _compressed.warn_unchecked(check_invariants)
    return make_coo_tensor(indices, values, size, dtype=dtype, device=device,
                           requires_grad=requires_grad, check_invariants=check_invariants,
                           is_coalesced=is_coalesced)


def make_coo_tensor(indices, values=_NO_VALUES, size=None, *, dtype=None, device=None,
                    requires_grad=False, check_invariants=None, is_coalesced=None):
    """sparse_coo_tensor without its warning."""
    if values is _NO_VALUES:
        size = tuple(indices)
        dtype = dtype if dtype is not None else D.get_default_dtype()
        empty = Tensor._make(COOArrays(np.zeros((len(size), 0), np.int64),
                                       np.zeros((0,), dtype.np), size, True), dtype)
        return empty.requires_grad_(requires_grad) if requires_grad else empty
    if not isinstance(indices, Tensor):
        indices = _creation.tensor(indices, dtype=D.int64, device=device)
    if not isinstance(values, Tensor):
        values = _creation.tensor(values, dtype=dtype, device=device)
    if indices._dtype is not D.int64:
        indices = indices.to(D.int64)       # (torch converts any indices, floats too)
    if dtype is not None and values._dtype is not dtype:
        values = values.to(dtype)
    if device is not None and values._device != as_device(device):
        values = values.to(as_device(device))
        indices = indices.to(as_device(device))
    idx = indices._data
    _check_indices(idx, values._data, size)
    if size is None:
        if idx.shape[1]:
            sparse_sizes = tuple(int(m) + 1 for m in idx.max(axis=1))
        else:
            sparse_sizes = (0,) * idx.shape[0]
        size = sparse_sizes + tuple(values.shape[1:])
    else:
        size = tuple(int(s) for s in size)
        dense = size[idx.shape[0]:]
        if tuple(values.shape[1:]) != dense:
            raise RuntimeError(f"values has incorrect size, expected "
                               f"{[idx.shape[1], *dense]}, got {list(values.shape)}")
    # (one entry or none is coalesced by definition, and torch marks it so)
    coalesced = bool(is_coalesced) or idx.shape[1] <= 1 and is_coalesced is None
    result = _from_values(values, indices=idx, size=size, coalesced=coalesced)
    if check_invariants if check_invariants is not None else _invariants_checked[0]:
        _check_invariants(result._data)
    if requires_grad:
        if result._dtype._category < 2:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        result.requires_grad_(True)
    return result




# ---------------------------------------------------------------------- to_dense / to_sparse
@primitive("to_dense", node="ToDenseBackward0", save=("self",))
def _to_dense(xp, self, *, masked_grad=None):
    return self.to_dense()


@_to_dense.derivative
def _(ctx, grad):
    # the gradient of a sparse input lives only where it has entries (once each)
    return sparse_mask(grad, ctx.self, coalesce_mask=True)


def to_dense(self, dtype=None, *, masked_grad=None):
    if _compressed.is_compressed(self):
        out = _compressed.to_dense(self)
        return out if dtype is None else out.to(dtype)
    if not is_sparse(self):
        return self if dtype is None else self.to(dtype)
    out = _to_dense(self)
    return out if dtype is None else out.to(dtype)


@primitive("sparse_mask", node="SparseMaskBackward0", save=("mask",))
def _sparse_mask(xp, self, mask, *, coalesce_mask=False):
    # the mask's entries as they are (Tensor.sparse_mask), or its coalesced pattern (the
    # gradient of torch.sparse.mm's sparse operand); either keeps the mask's coalesced flag
    pattern = mask.coalesce() if coalesce_mask else mask
    dense = self.to_dense() if self.__class__ is COOArrays else self
    picked = xp.broadcast_to(dense, pattern.shape)[tuple(pattern.indices)]
    return COOArrays(pattern.indices, picked.astype(pattern.dtype, copy=False), pattern.shape,
                     mask.coalesced)


@_sparse_mask.derivative
def _(ctx, grad):
    return grad.to_dense(), None


def sparse_mask(self, mask, coalesce_mask=False):
    """Tensor.sparse_mask: self's values at mask's entries, as a sparse tensor."""
    if not is_sparse(mask):
        raise RuntimeError(f"sparse_mask(): expected mask to be a sparse COO tensor, but got "
                           f"{mask.layout}")
    return _sparse_mask(self, mask.detach(), coalesce_mask=coalesce_mask)


def _nonzero_entries(xp, dense, sparse_dim):
    """The indices and values of the entries of `dense` (a slice over its dense dims counts
    when any of its elements is non-zero)."""
    shape = dense.shape
    lead = dense.reshape(shape[:sparse_dim] + (-1,)) if sparse_dim < dense.ndim else \
        dense.reshape(shape + (1,))
    mask = (lead != 0).any(axis=-1)
    idx = xp.stack(xp.nonzero(mask)).astype(np.int64) if sparse_dim else \
        xp.zeros((0, int(mask)), dtype=np.int64)
    if sparse_dim == 0:
        values = dense.reshape((1,) + shape)[: int(mask)]
    else:
        values = dense[tuple(idx)]
    return idx.reshape(sparse_dim, -1), values


@primitive("to_sparse", node="ToSparseBackward1")
def _to_sparse(xp, self):
    idx, values = _nonzero_entries(xp, self, self.ndim)
    return COOArrays(idx, values.copy(), self.shape, True)


@primitive("to_sparse_dim", node="ToSparseBackward0")
def _to_sparse_dim(xp, self, *, sparse_dim):
    idx, values = _nonzero_entries(xp, self, sparse_dim)
    return COOArrays(idx, values.copy(), self.shape, True)


@_to_sparse.derivative
def _(ctx, grad):
    return grad.to_dense()


@_to_sparse_dim.derivative
def _(ctx, grad):
    return grad.to_dense()


def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    if layout in _compressed.LAYOUTS:
        return _compressed.to_layout(self, layout, blocksize)
    if layout is not None and str(layout) not in ("torch.sparse_coo",):
        raise NotImplementedError(f"to_sparse: layout {layout} is not supported by ember")
    if _compressed.is_compressed(self):
        return _compressed.to_sparse(self)
    if is_sparse(self):
        if sparse_dim is not None and sparse_dim != self.sparse_dim():
            raise RuntimeError("to_sparse: conversion from Sparse to Sparse with sparse_dim "
                               "argument !=self.sparse_dim() is not supported")
        return self
    if sparse_dim is None:
        return _to_sparse(self)
    if sparse_dim == 0 and self.dim() > 0:
        raise RuntimeError("dense_to_sparse: sparse_dim argument must be in >0 when "
                           "self.dim()>0")
    if not 0 <= sparse_dim <= self.dim():
        raise RuntimeError(f"dense_to_sparse: sparse_dim argument must be in [0,{self.dim()}] "
                           f"range, but "
                           f"{sparse_dim} is given")
    return _to_sparse_dim(self, sparse_dim=sparse_dim)


# ---------------------------------------------------------------------- coalesce, values
@primitive("coalesce", node="CoalesceBackward0")
def _coalesce(xp, self):
    return self.coalesce()


@_coalesce.derivative
def _(ctx, grad):
    return grad


def coalesce(self):
    _require_sparse(self, "coalesce")
    if self._data.coalesced:
        return self
    return _coalesce(self)


@primitive("values", node="ValuesBackward0", save=("self",))
def _values_op(xp, self):
    return self.values


@_values_op.derivative
def _(ctx, grad):
    coo = ctx.self._data
    return Tensor._make(COOArrays(coo.indices, grad._data, coo.shape, coo.coalesced),
                        grad._dtype, grad._device)


def _require_sparse(self, name):
    if not is_sparse(self):
        raise RuntimeError(f"{name} expected sparse coordinate tensor layout but got "
                           f"{_compressed.layout_name(self)}")


def values(self):
    if _compressed.is_compressed(self):
        return _compressed.values(self)
    _require_sparse(self, "values")
    if not self._data.coalesced:
        raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                           ".coalesce() first")
    return _values_op(self)


def indices(self):
    _require_sparse(self, "indices")
    if not self._data.coalesced:
        raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call "
                           ".coalesce() first")
    return Tensor._make(self._data.indices, D.int64, self._device)


def _values(self):
    _require_sparse(self, "_values")
    return Tensor._make(self._data.values, self._dtype, self._device)


def _indices(self):
    _require_sparse(self, "_indices")
    return Tensor._make(self._data.indices, D.int64, self._device)


def is_coalesced(self):
    _require_sparse(self, "is_coalesced")
    return self._data.coalesced


def _coalesced_(self, coalesced):
    _require_sparse(self, "_coalesced_")
    self._data.coalesced = bool(coalesced)
    return self


def sparse_dim(self):
    if _compressed.is_compressed(self):
        return 2
    return self._data.sparse_dim if is_sparse(self) else 0


def dense_dim(self):
    if _compressed.is_compressed(self):
        return 0
    return self._data.dense_dim if is_sparse(self) else self.dim()


def _nnz(self):
    if _compressed.is_compressed(self):
        return self._data.nnz
    _require_sparse(self, "_nnz")
    return self._data.nnz
