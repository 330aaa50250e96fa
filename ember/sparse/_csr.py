"""Sparse CSR matrices (torch.sparse_csr): a tensor whose `_data` is a `CSRArrays` (row
pointers `crow`, column indices `col`, values, shape), made by torch.sparse_csr_tensor or
Tensor.to_sparse_csr, read by crow_indices/col_indices/values, turned back by to_dense and
to_sparse, printed as torch prints it, and multiplied into a dense matrix as torch does.

A product converts the matrix once to COO arrays (kept on the CSRArrays, so the product's
cached plan is found again: ember/sparse/_kernels.py) and goes through the COO kernel, which
sums each row in torch's order. Only 2-D matrices without dense dimensions are supported;
CSR tensors carry no autograd history of their own (a product's dense operand gets its
gradient). Written with the array module of the arrays, so CuPy arrays work the same.
"""
import numpy as np

from .. import _dtype as D
from .._printing import _PREFIX, _OPTS, _default_dtype_names, _inner_repr, scalar_type_name
from .._backend import backend as _backend
from .._tensor import Tensor
from ..ops import creation as _creation
from ._coo import COOArrays, _TORCH_NAMES, invariants_checked
from ._kernels import xp_of


def not_supported(op):
    return NotImplementedError(
        f"Could not run 'aten::{op}' with arguments from the 'SparseCsrCPU' backend. This "
        f"could be because the operator doesn't exist for this backend, or was omitted during "
        f"the selective/custom build process (if using custom build). If you are a Facebook "
        f"employee using PyTorch on mobile, please visit https://fburl.com/ptmfixes for "
        f"possible resolutions.")


class CSRArrays:
    """A CSR matrix's arrays; the `_data` of an ember Tensor with layout sparse_csr."""
    __slots__ = ("crow", "col", "values", "shape", "_coo")
    _ember_csr = True               # (what the few CSR-aware places of ember test)
    __array_priority__ = 2000

    def __init__(self, crow, col, values, shape):
        self.crow, self.col, self.values = crow, col, values
        self.shape = tuple(shape)
        self._coo = None

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape))

    @property
    def nnz(self):
        return self.col.shape[-1]

    @property
    def strides(self):
        raise RuntimeError("Sparse CSR tensors do not have strides")

    @property
    def xp(self):
        return xp_of(self.values)

    def astype(self, dtype, copy=True, **_):
        return CSRArrays(self.crow, self.col, self.values.astype(dtype, copy=copy), self.shape)

    def copy(self, order=None):
        return CSRArrays(self.crow.copy(), self.col.copy(), self.values.copy(), self.shape)

    def coo(self):
        """The same entries as COO arrays (made once: their pattern keeps its cached plans)."""
        if self._coo is None:
            xp = self.xp
            rows = xp.repeat(xp.arange(self.shape[0], dtype=np.int64), xp.diff(self.crow))
            indices = xp.stack([rows, self.col.astype(np.int64, copy=False)])
            self._coo = COOArrays(indices, self.values, self.shape, True)
        return self._coo

    def to_dense(self):
        return self.coo().to_dense()

    def __getattr__(self, name):
        # an array method an op's forward called on us: torch has no CSR kernel for it
        # (a private name is ember asking what kind of array this is: the answer is no)
        if name.startswith("_"):
            raise AttributeError(name)
        raise not_supported(name)

    def __array__(self, dtype=None, copy=None):
        raise not_supported("_to_dense")

    def __len__(self):
        return self.shape[0]

    @staticmethod
    def tensor_repr(t):
        return csr_repr(t)          # (ember/_printing.py asks the arrays: no import cycle)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        name = ufunc.__name__
        if name == "matmul" and method == "__call__" and len(inputs) == 2:
            a, b = (x.coo() if isinstance(x, CSRArrays) else x for x in inputs)
            return np.matmul(a, b)          # (the COO kernel, _coo._matmul)
        raise not_supported(_TORCH_NAMES.get(name, name))

    def __array_function__(self, func, types, args, kwargs):
        raise not_supported(func.__name__)


def is_csr(t):
    return getattr(type(t._data), "_ember_csr", False)


def _make(crow, col, values, shape, dtype, device):
    return Tensor._make(CSRArrays(crow, col, values, shape), dtype, device)


# ---------------------------------------------------------------------- construction
def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None,
                      pin_memory=False, requires_grad=False, check_invariants=None):
    """torch.sparse_csr_tensor: a CSR matrix from its row pointers, column indices and
    values; the size, when not given, is (rows, the largest column index + 1)."""
    crow, col, vals = (x if isinstance(x, Tensor) else _creation.tensor(x, device=device)
                       for x in (crow_indices, col_indices, values))
    if dtype is not None and vals._dtype is not dtype:
        vals = vals.to(dtype)
    for index in (crow, col):
        if index._dtype not in (D.int32, D.int64):
            raise NotImplementedError(f'"estimate_sparse_compressed_tensor_size" not '
                                      f"implemented for '{scalar_type_name(index._dtype)}'")
    if crow._dtype is not col._dtype:
        crow, col = crow.to(D.int64), col.to(D.int64)      # (torch takes mixed widths)
    c, k, v = crow._data, col._data, vals._data
    if c.ndim != 1 or k.ndim != 1 or v.ndim != 1:
        raise NotImplementedError("ember: sparse_csr_tensor supports 2-D matrices without "
                                  "batch or dense dimensions only")
    if size is None:
        size = (c.shape[0] - 1, int(k.max()) + 1 if k.shape[0] else 0)
    size = tuple(int(s) for s in size)
    if len(size) != 2:
        raise NotImplementedError("ember: sparse_csr_tensor supports 2-D matrices only")
    if check_invariants if check_invariants is not None else invariants_checked[0]:
        _check_invariants(c, k, v, size)
    out = _make(c, k, v, size, vals._dtype, vals._device)
    if requires_grad:
        out.requires_grad_(True)
    return out


def _check_invariants(crow, col, values, size):
    """torch's check_invariants=True checks of a CSR matrix (the common ones)."""
    nnz = col.shape[0]
    if crow.shape[0] != size[0] + 1:
        raise RuntimeError(f"crow_indices.shape[-1] must be equal to the number of rows + 1 "
                           f"(={size[0] + 1}), but got {crow.shape[0]}")
    if int(crow[0]) != 0:
        raise RuntimeError("`crow_indices[..., 0] == 0` is not satisfied.")
    if int(crow[-1]) != nnz:
        raise RuntimeError("`crow_indices[..., -1] == nnz` is not satisfied.")
    steps = np.diff(np.asarray(crow))
    if (steps < 0).any() or (steps > size[1]).any():
        raise RuntimeError("`0 <= crow_indices[..., 1:] - crow_indices[..., :-1] <= ncols` "
                           "is not satisfied.")
    if nnz and (int(col.min()) < 0 or int(col.max()) >= size[1]):
        raise RuntimeError("`0 <= col_indices < ncols` is not satisfied.")


def to_sparse_csr(self, dense_dim=None):
    """Tensor.to_sparse_csr: a 2-D dense or COO matrix as CSR (a CSR one as it is)."""
    if is_csr(self):
        return self
    if dense_dim is not None:
        raise NotImplementedError("ember: to_sparse_csr supports dense_dim=None only")
    if self.is_sparse:
        coo = self._data.coalesce()
        if coo.ndim != 2 or coo.sparse_dim != 2:
            raise NotImplementedError("ember: to_sparse_csr supports 2-D matrices only")
        rows, cols, values = coo.indices[0], coo.indices[1], coo.values
    else:
        if self.dim() == 1:
            raise IndexError(f"select(): index 1 out of range for tensor of size "
                             f"[{self.shape[0]}, 1] at dimension 1")
        if self.dim() != 2:
            raise NotImplementedError("ember: to_sparse_csr supports 2-D matrices only")
        data = self._data
        xp = xp_of(data)
        rows, cols = xp.nonzero(data)
        values = data[rows, cols]
    xp = xp_of(values)
    counts = xp.bincount(rows, minlength=self.shape[0])
    crow = xp.concatenate([xp.zeros(1, dtype=np.int64), xp.cumsum(counts)]).astype(np.int64)
    return _make(crow, cols.astype(np.int64), values.copy(), tuple(self.shape), self._dtype,
                 self._device)


# ---------------------------------------------------------------------- reading it
def _require_csr(self, name, what="sparse row compressed"):
    if not is_csr(self):
        layout = "Sparse" if self.is_sparse else "Strided"
        raise RuntimeError(f"{name} expected {what} tensor layout but got {layout}")


def crow_indices(self):
    _require_csr(self, "crow_indices")
    return Tensor._make(self._data.crow, D.from_numpy_dtype(self._data.crow.dtype),
                        self._device)


def col_indices(self):
    _require_csr(self, "col_indices")
    return Tensor._make(self._data.col, D.from_numpy_dtype(self._data.col.dtype),
                        self._device)


def values(self):
    return Tensor._make(self._data.values, self._dtype, self._device)


def to_dense(self):
    return Tensor._make(self._data.to_dense(), self._dtype, self._device)


def to_sparse(self):
    """CSR -> COO (torch marks the result coalesced: its entries are in row order)."""
    coo = self._data.coo()
    return Tensor._make(COOArrays(coo.indices.copy(), coo.values.copy(), coo.shape, True),
                        self._dtype, self._device)


def refuse_coo_method(name):
    """What a COO-only method says of a CSR tensor (torch's words)."""
    return RuntimeError(f"{name} expected sparse coordinate tensor layout but got SparseCsr")


# ---------------------------------------------------------------------- printing
def csr_repr(t):
    """torch's repr of a CSR matrix: crow_indices, col_indices, values, then size, nnz, dtype,
    layout and grad, each added to the last line while it fits (torch counts that line one
    character longer than it is)."""
    csr = t._data
    host = _backend(t._device.type).to_host
    pad = " " * len(_PREFIX)
    text = ""
    for k, (name, array, dtype) in enumerate([
            ("crow_indices=", csr.crow, D.from_numpy_dtype(csr.crow.dtype)),
            ("col_indices=", csr.col, D.from_numpy_dtype(csr.col.dtype)),
            ("values=", csr.values, t._dtype)]):
        head = (_PREFIX if k == 0 else ",\n" + pad) + name
        text += head + _inner_repr(host(array), dtype, len(pad) + len(name) + len(pad))
    suffixes = [f"size={tuple(csr.shape)}", f"nnz={csr.nnz}"]
    if t._device.type != "cpu":
        suffixes.insert(0, f"device='{t._device}'")
    if csr.nnz == 0 and t._dtype is not D.get_default_dtype() or \
            csr.nnz and t._dtype.name not in _default_dtype_names():
        suffixes.append(f"dtype=ember.{t._dtype.name}")
    suffixes.append("layout=ember.sparse_csr")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name().rsplit('::', 1)[-1]}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    line = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if line + len(suffix) + 2 > _OPTS.linewidth:
            text += ",\n" + pad + suffix
            line = len(pad) + len(suffix)
        else:
            text += ", " + suffix
            line += len(suffix) + 2
    return text + ")"
