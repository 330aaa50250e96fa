"""The raw arrays of a sparse COO tensor, and what the ops may do with them.

A sparse tensor is an ordinary ember Tensor whose `_data` is a `COOArrays` instead of an
array: an int64 `indices` array (sparse_dim, nnz), a `values` array (nnz,) + dense shape, the
full shape and whether the entries are known to be coalesced (sorted, no repeated index).
Being a Tensor, it goes through the same registry, graph and engine as a dense one; an op's
forward receives the COOArrays where it would receive an array, and NumPy hands the ufuncs it
calls to `__array_ufunc__` here. The ufuncs torch runs on sparse tensors (add, sub, mul, div,
neg, mm through matmul, and zero-preserving unary functions) are computed on the arrays;
anything else raises torch's "Could not run ... SparseCPU" error. Everything is written with
the array module `xp` of the values, so CuPy arrays work the same.
"""
import math

import numpy as np

from .. import _dtype as D
from .._backend import of as _backend_of
from .._cpu import mkl_fuses
from .._device import as_device
from .._layout import not_supported
from .._tensor import Tensor
from ._kernels import RowPlan, cached, fma_rows, xp_of


# NumPy's ufunc names that differ from torch's op names (for the error above)
_TORCH_NAMES = {"true_divide": "div", "divide": "div", "multiply": "mul", "subtract": "sub",
                "negative": "neg",
                "absolute": "abs", "power": "pow", "arcsin": "asin", "arctan": "atan",
                "arcsinh": "asinh", "arctanh": "atanh", "maximum": "maximum",
                "minimum": "minimum", "greater": "gt", "less": "lt", "equal": "eq",
                "not_equal": "ne", "greater_equal": "ge", "less_equal": "le",
                "conjugate": "conj", "rint": "round", "reciprocal": "reciprocal"}

# unary ufuncs with f(0) == 0, computed on the values of the coalesced tensor (torch coalesces
# first where f is not linear: f(a) + f(b) != f(a + b))
_ZERO_PRESERVING = {"absolute", "sqrt", "sin", "tan", "tanh", "sinh", "arcsin", "arctan",
                    "arcsinh", "arctanh", "expm1", "log1p", "sign", "ceil", "floor", "trunc",
                    "rint", "square", "deg2rad", "rad2deg", "signbit", "isnan", "isinf"}


# set once any sparse tensor exists: until then the optimizers skip looking for sparse grads
made = [False]

# torch.sparse.check_sparse_tensor_invariants' global switch (off by default), and whether it
# was ever set (None until then: torch warns at the first constructor that it is off)
invariants_checked = [False, None]


class SparseArrays:
    """What a sparse tensor's arrays answer as an array would (the COO and the compressed
    layouts' holders both have `values` and `shape`)."""
    __slots__ = ()

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)


class COOArrays(SparseArrays):
    """A COO tensor's arrays; the `_data` of a sparse ember Tensor (see the module doc)."""
    # origin: (the index array this pattern's rows are taken from, which of its rows each
    # sparse dim is): a transpose keeps its parent's, so both find the same cached plans.
    # mkl: these are the elements of a compressed matrix (CompressedArrays.coo()), which torch
    # multiplies with MKL's sparse kernels, not its own COO kernel: their sums round as the CPU's
    # vendor has MKL round them (see fma_product); a transpose keeps it too
    __slots__ = ("indices", "values", "shape", "coalesced", "origin", "mkl")
    _ember_sparse = True            # (what the few sparse-aware places of ember test)
    __array_priority__ = 2000       # NumPy defers to us for `array + coo`

    def __init__(self, indices, values, shape, coalesced=False, origin=None, mkl=False):
        made[0] = True
        self.indices = indices
        self.values = values
        self.shape = tuple(shape)
        self.coalesced = coalesced
        self.origin = origin if origin is not None else (indices, tuple(range(indices.shape[0])))
        self.mkl = mkl

    # ------------------------------------------------------------------ what an array has
    @property
    def strides(self):
        return (0,) * len(self.shape)       # (torch reports zero strides for a sparse tensor)

    @property
    def sparse_dim(self):
        return self.indices.shape[0]

    @property
    def dense_dim(self):
        return self.values.ndim - 1

    @property
    def nnz(self):
        return self.indices.shape[1]

    @property
    def xp(self):
        return xp_of(self.values)

    def with_values(self, values, coalesced=None):
        """The same pattern with other values."""
        return COOArrays(self.indices, values, self.shape,
                         self.coalesced if coalesced is None else coalesced, self.origin,
                         self.mkl)

    def astype(self, dtype, copy=True, **_):
        return self.with_values(self.values.astype(dtype, copy=copy))

    def copy(self, order=None):
        return COOArrays(self.indices.copy(), self.values.copy(), self.shape, self.coalesced)

    def tolist(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    @property
    def nbytes(self):
        raise RuntimeError("nbytes is not defined for sparse tensors.  If you want the size of "
                           "the constituent tensors, add the nbytes of the indices and values.  "
                           "If you want the size of the  equivalent dense tensor, multiply "
                           "numel() by element_size()")

    def __getattr__(self, name):
        # an array method an op's forward called on us: torch has no sparse kernel for it
        if name.startswith("__"):
            raise AttributeError(name)
        raise not_supported(name)

    def __array__(self, dtype=None, copy=None):
        raise not_supported("_to_dense")

    def __len__(self):
        return self.shape[0]

    # ------------------------------------------------------------------ the arithmetic
    def linear_index(self):
        """Each entry's position among the sparse dims, as one int64 (row-major)."""
        xp = self.xp
        sizes = self.shape[:self.sparse_dim]
        key = xp.zeros(self.nnz, dtype=np.int64)
        for d, n in enumerate(sizes):
            key = key * n + self.indices[d]
        return key

    def coalesce(self):
        """Entries sorted by index, repeated indices summed in the order they appear."""
        if self.coalesced:
            return self
        xp = self.xp
        if self.nnz == 0:
            return COOArrays(self.indices, self.values, self.shape, True)
        base, rows = self.origin
        order, slot, indices = cached(base, ("coalesce", rows, self.shape[:self.sparse_dim]),
                                      self._merge_plan)
        values = xp.zeros((indices.shape[1],) + self.values.shape[1:], dtype=self.values.dtype)
        _backend_of(xp).scatter_add(values, slot, self.values[order])
        return COOArrays(indices.copy(), values, self.shape, True)

    def _merge_plan(self):
        """How coalesce merges this pattern (made once per pattern, see cached): the entries
        in index order (repeated ones in the order they appear), each one's slot in the
        result, and the result's indices."""
        xp = self.xp
        key = self.linear_index()
        if math.prod(self.shape[:self.sparse_dim]) * self.nnz < 2 ** 62:
            # (a sort of distinct keys is quicker than a stable one, and orders alike)
            order = xp.argsort(key * self.nnz + xp.arange(self.nnz))
        else:
            order = xp.argsort(key, kind="stable")
        sorted_key = key[order]
        first = xp.ones(self.nnz, dtype=bool)
        first[1:] = sorted_key[1:] != sorted_key[:-1]
        slot = xp.cumsum(first) - 1
        return order, slot, self.indices[:, order][:, first]

    def to_dense(self):
        xp = self.xp
        out = xp.zeros(self.shape, dtype=self.values.dtype)
        if self.nnz:
            _backend_of(xp).scatter_add(out, tuple(self.indices), self.values)
        return out

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        name = ufunc.__name__
        if method != "__call__" or kwargs.get("out") is not None:
            raise not_supported(_TORCH_NAMES.get(name, name))
        if name in ("add", "subtract"):
            return _add(*inputs, negate=name == "subtract")
        if name in ("multiply", "divide", "true_divide") and len(inputs) == 2:
            return _multiply(*inputs, divide=name != "multiply")
        if name == "negative":
            return self.with_values(-self.values)
        if name == "matmul":
            return _matmul(*inputs)
        if name == "power" and len(inputs) == 2 and inputs[0] is self and \
                np.ndim(inputs[1]) == 0 and inputs[1] > 0:
            # x ** p (p > 0) keeps zeros zero: on the coalesced values
            c = self.coalesce()
            return c.with_values(ufunc(c.values, inputs[1]))
        if name in _ZERO_PRESERVING and len(inputs) == 1:
            c = self.coalesce()
            return c.with_values(ufunc(c.values, **kwargs))
        raise not_supported(_TORCH_NAMES.get(name, name))

    def __array_function__(self, func, types, args, kwargs):
        name = func.__name__
        if name == "transpose" and args[0] is self:
            return self.permute(kwargs.get("axes", args[1] if len(args) > 1 else None))
        if name == "copy" and args[0] is self:
            return self.copy()
        if name == "zeros_like" and args[0] is self:
            # (zero_(): no entries left, as torch empties a sparse tensor)
            xp = self.xp
            return COOArrays(xp.zeros((self.sparse_dim, 0), dtype=np.int64),
                             xp.zeros((0,) + self.values.shape[1:], dtype=self.dtype),
                             self.shape, True)
        if name == "sum" and args[0] is self and kwargs.get("axis") is None and len(args) == 1:
            # (Tensor.sum() of a sparse tensor: the dense total of its coalesced values)
            values = self.coalesce().values
            return self.xp.asarray(values.sum(dtype=kwargs.get("dtype")))
        raise not_supported(name)

    def addmm(self, start, dense, beta, alpha):
        """beta * start + alpha * (self @ dense), as torch's CPU kernel computes it: the
        scaled start, then each entry adds (alpha * value) * its row of `dense`."""
        xp = self.xp
        dtype = dense.dtype
        shape = (self.shape[0], dense.shape[1])
        if beta == 0:
            out = xp.zeros(shape, dtype=dtype)
        else:
            scaled = start if beta == 1 else start * dtype.type(beta)
            out = xp.array(xp.broadcast_to(scaled, shape), dtype=dtype)
        coef = self.values if alpha == 1 else self.values * dtype.type(alpha)
        return self.fma_product(out, coef, dense)

    def plan(self, out_dim):
        """The cached RowPlan that sums this matrix's entries into the rows of its dim
        `out_dim` (0: self @ dense, 1: dense @ self, as self.T @ dense.T)."""
        base, rows = self.origin
        other = 1 - out_dim
        return cached(base, (rows[out_dim], rows[other], self.shape[out_dim]),
                      lambda: RowPlan(self.indices[out_dim], self.shape[out_dim],
                                      self.indices[other]))

    def fma_product(self, out, coef, dense, out_dim=0):
        """out += (this matrix with values `coef`) @ dense, in torch's rounding (out_dim 0);
        out_dim 1: out += self.T @ dense, entry by entry likewise. torch's COO kernel fuses
        each step's multiply-add, and so do MKL's kernels for a compressed matrix on an Intel
        CPU; elsewhere MKL rounds each product before adding it (_cpu.mkl_fuses)."""
        if self.nnz == 0:
            return out
        plan = self.plan(out_dim)
        return fma_rows(out, plan, coef, dense, fused=not self.mkl or mkl_fuses())

    def permute(self, dims):
        """The tensor with its dims reordered (sparse dims only, as torch permits)."""
        if dims is None:
            dims = tuple(range(self.ndim))[::-1]
        dims = tuple(dims)
        k = self.sparse_dim
        if any(d >= k for d in dims[:k]):
            raise not_supported("permute")
        shape = tuple(self.shape[d] for d in dims)
        base, rows = self.origin
        return COOArrays(self.indices[list(dims[:k])], self.values, shape, False,
                         (base, tuple(rows[d] for d in dims[:k])), self.mkl)


def rebuild_sparse(indices, values, shape, coalesced, device, requires_grad):
    """A pickled sparse tensor back (Tensor.__reduce_ex__)."""
    t = Tensor._make(COOArrays(indices, values, shape, coalesced),
                     D.from_numpy_dtype(values.dtype), as_device(device))
    t._requires_grad = requires_grad
    return t


def _is_coo(x):
    return x.__class__ is COOArrays


def _same_size(a, b):
    if a.shape != b.shape:
        raise RuntimeError(f"add: expected sizes of 'self' and 'other' to match, but "
                           f"{list(a.shape)} != {list(b.shape)}")


def _add(a, b, negate=False):
    """a + b or a - b with a sparse operand: sparse + sparse is sparse (torch's merge, see
    `_merge`, or when the values of either are not contiguous in memory, the entries of both
    side by side, as torch's kernel for that case gives); dense + sparse is dense."""
    if _is_coo(a) and _is_coo(b):
        _same_size(a, b)
        b = b.with_values(-b.values) if negate else b
        if not (a.values.flags.c_contiguous and b.values.flags.c_contiguous):
            return concatenate(a, b)
        return _merge(a, b)
    if _is_coo(a):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    # dense + sparse: the dense operand with the sparse entries added in (or taken away)
    xp = b.xp
    a = xp.asarray(a)
    shape = np.broadcast_shapes(a.shape, b.shape)
    if shape != b.shape:
        raise RuntimeError(f"The size of tensor a ({a.shape[-1] if a.ndim else 1}) must match "
                           f"the size of tensor b ({b.shape[-1]}) at non-singleton dimension "
                           f"{len(shape) - 1}")
    dtype = np.result_type(a.dtype, b.dtype)
    out = xp.array(xp.broadcast_to(a, shape), dtype=dtype, copy=True)
    if b.nnz:
        values = -b.values if negate else b.values
        _backend_of(xp).scatter_add(out, tuple(b.indices), values.astype(dtype, copy=False))
    return out


def _merge(a, b):
    """a + b for two sparse operands as torch's CPU kernel adds them: one pass over both entry
    lists in step, taking the smaller index first and adding the two values where the indices
    are equal. For coalesced operands that is a sorted merge (vectorised here, the result
    coalesced); uncoalesced ones are walked entry by entry, as torch does, which interleaves
    them in its own way (the result is then not coalesced)."""
    xp = a.xp
    dtype = np.result_type(a.values.dtype, b.values.dtype)
    ka, kb = a.linear_index(), b.linear_index()
    if a.coalesced and b.coalesced:
        # equal indices meet side by side after a stable sort (a's first): they are summed
        key = xp.concatenate([ka, kb])
        order = xp.argsort(key, kind="stable")
        both = COOArrays(xp.concatenate([a.indices, b.indices], axis=1)[:, order],
                         xp.concatenate([a.values.astype(dtype), b.values.astype(dtype)])[order],
                         a.shape, False)
        return both.coalesce()
    # the walk: for each output entry, which entry of a and of b it takes (-1: none)
    la, lb = ka.tolist(), kb.tolist()
    take_a, take_b = [], []
    i = j = 0
    while i < len(la) and j < len(lb):
        if la[i] < lb[j]:
            take_a.append(i), take_b.append(-1)
            i += 1
        elif lb[j] < la[i]:
            take_a.append(-1), take_b.append(j)
            j += 1
        else:
            take_a.append(i), take_b.append(j)
            i += 1
            j += 1
    take_a += list(range(i, len(la))) + [-1] * (len(lb) - j)
    take_b += [-1] * (len(la) - i) + list(range(j, len(lb)))
    ta, tb = xp.asarray(take_a, dtype=np.int64), xp.asarray(take_b, dtype=np.int64)
    has_a, has_b = ta >= 0, tb >= 0
    values = xp.zeros((len(take_a),) + a.values.shape[1:], dtype=dtype)
    values[has_a] = a.values[ta[has_a]]
    values[has_b & ~has_a] = b.values[tb[has_b & ~has_a]]
    both = has_a & has_b
    values[both] = values[both] + b.values[tb[both]].astype(dtype)
    indices = xp.where(has_a, a.indices[:, xp.maximum(ta, 0)],
                       b.indices[:, xp.maximum(tb, 0)]) if len(take_a) else a.indices[:, :0]
    return COOArrays(indices, values, a.shape, False)


def concatenate(a, b):
    """The entries of a, then those of b (how torch's AccumulateGrad adds a sparse gradient
    into a sparse .grad: nothing summed, nothing reordered)."""
    xp = a.xp
    return COOArrays(xp.concatenate([a.indices, b.indices], axis=1),
                     xp.concatenate([a.values, b.values.astype(a.values.dtype)]), a.shape, False)


def _multiply(a, b, divide=False):
    """a * b or a / b with a sparse operand: a scalar (or zero-dim array) scales the values; a
    dense operand is read at the sparse entries; two sparse operands keep the entries they
    share."""
    if _is_coo(a) and _is_coo(b):
        if divide:
            raise not_supported("div")
        _same_size(a, b)
        return _intersect(a.coalesce(), b.coalesce())
    if not _is_coo(a):
        if divide:
            raise not_supported("div")
        a, b = b, a
    xp = a.xp
    if np.ndim(b) == 0:
        values = xp.true_divide(a.values, b) if divide else xp.multiply(a.values, b)
        return a.with_values(values)
    if divide:
        raise not_supported("div")
    # sparse * dense: the dense operand, broadcast to the full shape, at each entry
    dense = xp.broadcast_to(xp.asarray(b), a.shape)
    picked = dense[tuple(a.indices)]
    return a.with_values(xp.multiply(a.values, picked))


def _intersect(a, b):
    xp = a.xp
    ka, kb = a.linear_index(), b.linear_index()
    pos = xp.searchsorted(kb, ka)
    pos_ok = xp.minimum(pos, max(b.nnz - 1, 0))
    shared = (pos < b.nnz) & (kb[pos_ok] == ka) if b.nnz else xp.zeros(a.nnz, dtype=bool)
    values = xp.multiply(a.values[shared], b.values[pos_ok[shared]])
    return COOArrays(a.indices[:, shared], values, a.shape, True)


def _matmul(a, b):
    """A matrix product with a sparse operand (2 sparse dims, no dense ones), as torch's CPU
    kernel sums it: sparse @ dense (matrix or vector) adds, entry by entry, value * the
    dense operand's row into the entry's output row; dense @ sparse is (sparse.T @
    dense.T).T, given back as that transposed view (torch's strides)."""
    if _is_coo(a) == _is_coo(b):
        raise not_supported("mm")
    sparse, dense = (a, b) if _is_coo(a) else (b, a)
    if sparse.sparse_dim != 2 or sparse.dense_dim != 0:
        raise not_supported("mm")
    xp = sparse.xp
    dense = xp.asarray(dense)
    dtype = np.result_type(sparse.values.dtype, dense.dtype)
    coef = sparse.values.astype(dtype, copy=False)
    dense = dense.astype(dtype, copy=False)
    if _is_coo(a):
        out = xp.zeros((a.shape[0],) + dense.shape[1:], dtype=dtype)
        return a.fma_product(out, coef, dense)
    out = xp.zeros((b.shape[1], dense.shape[0]), dtype=dtype)
    return b.fma_product(out, coef, dense.T, out_dim=1).T
