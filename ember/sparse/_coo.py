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
import numpy as np

from .. import _dtype as D
from .._backend import of as _backend_of
from .._device import as_device
from .._layout import not_supported
from .._tensor import Tensor


def xp_of(array):
    """The array module an array belongs to (NumPy, or CuPy for a GPU array)."""
    if isinstance(array, np.ndarray):
        return np
    import cupy         # (only reached for a GPU array: CuPy is optional)
    return cupy


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


class COOArrays:
    """A COO tensor's arrays; the `_data` of a sparse ember Tensor (see the module doc)."""
    __slots__ = ("indices", "values", "shape", "coalesced")
    _ember_sparse = True            # (what the few sparse-aware places of ember test)
    __array_priority__ = 2000       # NumPy defers to us for `array + coo`

    def __init__(self, indices, values, shape, coalesced=False):
        made[0] = True
        self.indices = indices
        self.values = values
        self.shape = tuple(shape)
        self.coalesced = coalesced

    # ------------------------------------------------------------------ what an array has
    @property
    def dtype(self):
        return self.values.dtype

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

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
                         self.coalesced if coalesced is None else coalesced)

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
        key = self.linear_index()
        order = xp.argsort(key, kind="stable")
        sorted_key = key[order]
        first = xp.ones(self.nnz, dtype=bool)
        first[1:] = sorted_key[1:] != sorted_key[:-1]
        slot = xp.cumsum(first) - 1
        n = int(slot[-1]) + 1
        values = xp.zeros((n,) + self.values.shape[1:], dtype=self.values.dtype)
        _backend_of(xp).scatter_add(values, slot, self.values[order])
        indices = self.indices[:, order][:, first]
        return COOArrays(indices, values, self.shape, True)

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
        return scatter_fma(out, self.indices[0], coef, dense[self.indices[1]])

    def permute(self, dims):
        """The tensor with its dims reordered (sparse dims only, as torch permits)."""
        if dims is None:
            dims = tuple(range(self.ndim))[::-1]
        dims = tuple(dims)
        k = self.sparse_dim
        if any(d >= k for d in dims[:k]):
            raise not_supported("permute")
        shape = tuple(self.shape[d] for d in dims)
        return COOArrays(self.indices[list(dims[:k])], self.values, shape, False)


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


def scatter_fma(out, index, coef, rows):
    """out[index[k]] += coef[k] * rows[k] for each entry k in turn, each step one fused
    multiply-add rounded once, as torch's CPU kernels accumulate sparse products (axpy). The
    entries go in rounds (the first entry of every output row, then the second, ...), so each
    round is one vectorised step over distinct rows. float32 and float16 steps are exact
    through float64 (the product of two float32 numbers fits in it); a float64 step rounds
    twice, which can differ from an FMA in the last bit."""
    xp = xp_of(out)
    n = index.shape[0]
    if n == 0:
        return out
    # each entry's rank among the entries of its output row (0 for the first, ...)
    order = xp.argsort(index, kind="stable")
    sorted_index = index[order]
    first = xp.ones(n, dtype=bool)
    first[1:] = sorted_index[1:] != sorted_index[:-1]
    starts = xp.nonzero(first)[0]
    rank = xp.arange(n) - starts[xp.cumsum(first) - 1]       # (in sorted order)
    # the entries grouped by rank, each round a slice; the products once, exact in float64
    by_round = order[xp.argsort(rank, kind="stable")]
    bounds = xp.searchsorted(xp.sort(rank), xp.arange(int(rank.max()) + 2)).tolist()
    wide = np.float64 if out.dtype.kind == "f" else out.dtype
    coef = coef[by_round].astype(wide).reshape((-1,) + (1,) * (rows.ndim - 1))
    products = coef * rows[by_round].astype(wide)
    at_all = index[by_round]
    for r in range(len(bounds) - 1):
        lo, hi = bounds[r], bounds[r + 1]
        at = at_all[lo:hi]
        out[at] = (out[at] + products[lo:hi]).astype(out.dtype)
    return out


def _matmul(a, b):
    """sparse (2 sparse dims) @ dense matrix or vector, as torch's CPU kernel sums it: each
    entry in turn adds value * row of the dense operand to its output row (scatter_fma)."""
    if not _is_coo(a) or _is_coo(b) or a.sparse_dim != 2 or a.dense_dim != 0:
        raise not_supported("mm")
    xp = a.xp
    b = xp.asarray(b)
    rows, cols = a.indices[0], a.indices[1]
    dtype = np.result_type(a.values.dtype, b.dtype)
    out = xp.zeros((a.shape[0],) + b.shape[1:], dtype=dtype)
    scatter_fma(out, rows, a.values.astype(dtype, copy=False), b[cols].astype(dtype, copy=False))
    return out
