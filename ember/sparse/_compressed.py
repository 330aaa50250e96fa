"""Sparse compressed matrices: torch.sparse_csr, sparse_csc, sparse_bsr and sparse_bsc.

Such a tensor's `_data` is a `CompressedArrays`: its layout, the compressed indices (row
pointers `crow_indices` for CSR/BSR, column pointers `ccol_indices` for CSC/BSC), the plain
indices (`col_indices` / `row_indices`), the values ((nnz,) for CSR/CSC, (nnz, R, C) blocks
for BSR/BSC) and the shape. They are made by torch.sparse_{csr,csc,bsr,bsc}_tensor,
sparse_compressed_tensor and Tensor.to_sparse_{csr,csc,bsr,bsc}, read by the index methods and
values(), turned back by to_dense and to_sparse, printed as torch prints them, and multiplied
with a dense matrix where torch has a kernel for it.

A product goes through the COO kernel (ember/sparse/_kernels.py) on the matrix's elements in
row order (`coo()`, made once and kept, so the product's cached plan is found again), which
sums each output row in torch's order. torch's kernels for these layouts are MKL's, whose
rounding depends on the CPU's vendor (ember/_cpu.py: mkl_fuses): on an Intel CPU they fuse
each multiply-add (and sum a float32 row @ vector in 16 lanes, and blocks as _block_product
says); elsewhere they round each product before adding it, each row in order (a row @ vector
in an order of MKL's choosing, not reproduced: ember's is the same to rounding). Gradients
reach the values of a matrix made from them (node SparseCompressedTensorBackward0) through
to_dense, values() and the products, as torch's do. Only 2-D matrices without batch or dense
dimensions are supported. Written with the array module of the arrays, so CuPy arrays work
the same.
"""
import warnings

import numpy as np

from .. import _dtype as D
from .._layout import sparse_csr, sparse_csc, sparse_bsr, sparse_bsc, strided
from .._printing import _PREFIX, _inner_repr, scalar_type_name, sparse_repr_tail
from .._backend import backend as _backend
from .._cpu import mkl_fuses
from .._tensor import Tensor
from ..ops import creation as _creation
from ..ops.registry import primitive
from ._coo import COOArrays, SparseArrays, _TORCH_NAMES, _ZERO_PRESERVING, invariants_checked
from ._kernels import RowPlan, fma_rows, scatter_fma, xp_of

LAYOUTS = (sparse_csr, sparse_csc, sparse_bsr, sparse_bsc)
# torch's names of the layouts in its messages
_TORCH_NAME = {sparse_csr: "SparseCsr", sparse_csc: "SparseCsc", sparse_bsr: "SparseBsr",
               sparse_bsc: "SparseBsc"}
_ROW_MAJOR = (sparse_csr, sparse_bsr)
_TRANSPOSED = {sparse_csr: sparse_csc, sparse_csc: sparse_csr, sparse_bsr: sparse_bsc,
               sparse_bsc: sparse_bsr}
_BLOCKED = (sparse_bsr, sparse_bsc)


def not_supported(op, layout=sparse_csr):
    return NotImplementedError(
        f"Could not run 'aten::{op}' with arguments from the '{_TORCH_NAME[layout]}CPU' "
        f"backend. This could be because the operator doesn't exist for this backend, or was "
        f"omitted during the selective/custom build process (if using custom build). If you "
        f"are a Facebook employee using PyTorch on mobile, please visit "
        f"https://fburl.com/ptmfixes for possible resolutions.")


def layout_name(t):
    """torch's name of a tensor's layout in its messages (Strided, Sparse, SparseCsr, ...)."""
    if is_compressed(t):
        return _TORCH_NAME[t._data.layout]
    return "Sparse" if t.is_sparse else "Strided"


class CompressedArrays(SparseArrays):
    """A compressed matrix's arrays; the `_data` of an ember Tensor of layout sparse_csr,
    sparse_csc, sparse_bsr or sparse_bsc (see the module doc)."""
    __slots__ = ("layout", "compressed", "plain", "values", "shape", "_coo")
    _ember_csr = True       # (any compressed layout: what the few places of ember that know
    __array_priority__ = 2000  # of them test)

    def __init__(self, layout, compressed, plain, values, shape):
        self.layout = layout
        self.compressed, self.plain, self.values = compressed, plain, values
        self.shape = tuple(shape)
        self._coo = None

    @property
    def nnz(self):
        return self.plain.shape[-1]

    @property
    def row_major(self):
        return self.layout in _ROW_MAJOR

    @property
    def blocksize(self):
        return tuple(self.values.shape[1:3]) if self.layout in _BLOCKED else (1, 1)

    @property
    def strides(self):
        raise RuntimeError(f"Sparse {_TORCH_NAME[self.layout][6:].upper()} tensors do not have "
                           f"strides")

    @property
    def xp(self):
        return xp_of(self.values)

    def with_values(self, values):
        return CompressedArrays(self.layout, self.compressed, self.plain, values, self.shape)

    def astype(self, dtype, copy=True, **_):
        return self.with_values(self.values.astype(dtype, copy=copy))

    def copy(self, order=None):
        return CompressedArrays(self.layout, self.compressed.copy(), self.plain.copy(),
                                self.values.copy(), self.shape)

    def elements(self):
        """(rows, cols) of every element the values hold, in the values' order (blocks in
        storage order, each block's elements row by row): the order of torch's to_sparse."""
        xp = self.xp
        r, c = self.blocksize
        n_compressed = self.compressed.shape[0] - 1
        outer = xp.repeat(xp.arange(n_compressed, dtype=np.int64), xp.diff(self.compressed))
        inner = self.plain.astype(np.int64, copy=False)
        block_rows, block_cols = (outer, inner) if self.row_major else (inner, outer)
        if (r, c) == (1, 1):
            return block_rows, block_cols
        rows = block_rows[:, None, None] * r + xp.arange(r)[None, :, None]
        cols = block_cols[:, None, None] * c + xp.arange(c)[None, None, :]
        shape = (block_rows.shape[0], r, c)
        return xp.broadcast_to(rows, shape).reshape(-1), xp.broadcast_to(cols, shape).reshape(-1)

    def coo(self):
        """The elements as coalesced COO arrays, in row order (made once: their pattern keeps
        its cached product plans; `values` read anew, as a cast or an in-place write leaves
        the pattern as it was)."""
        xp = self.xp
        if self._coo is None:
            rows, cols = self.elements()
            order = None if self.layout is sparse_csr else \
                xp.lexsort(xp.stack([cols, rows]))
            if order is not None:
                rows, cols = rows[order], cols[order]
            self._coo = (COOArrays(xp.stack([rows, cols]), None, self.shape, True), order)
        pattern, order = self._coo
        flat = self.values.reshape(-1)
        # (mkl: torch multiplies a compressed matrix with MKL's kernels, see COOArrays)
        return COOArrays(pattern.indices, flat if order is None else flat[order], self.shape,
                         True, pattern.origin, mkl=True)

    def to_dense(self):
        xp = self.xp
        out = xp.zeros(self.shape, dtype=self.dtype)
        rows, cols = self.elements()
        out[rows, cols] = self.values.reshape(-1)
        return out

    def at_elements(self, dense):
        """A dense matrix read at this matrix's elements, shaped as its values."""
        rows, cols = self.elements()
        return dense[rows, cols].reshape(self.values.shape)

    def __getattr__(self, name):
        # an array method an op's forward called on us: torch has no kernel for it here
        # (a private name is ember asking what kind of array this is: the answer is no)
        if name.startswith("_"):
            raise AttributeError(name)
        raise not_supported(name, self.layout)

    def __array__(self, dtype=None, copy=None):
        raise not_supported("_to_dense", self.layout)

    def __len__(self):
        return self.shape[0]

    @staticmethod
    def tensor_repr(t):
        return compressed_repr(t)       # (ember/_printing.py asks the arrays: no import cycle)

    def transposed(self):
        """The transpose: CSR <-> CSC and BSR <-> BSC over the same index arrays (a block's
        values transposed)."""
        values = self.values if self.layout not in _BLOCKED else self.values.transpose(0, 2, 1)
        return CompressedArrays(_TRANSPOSED[self.layout], self.compressed, self.plain, values,
                                self.shape[::-1])

    def addmm(self, start, dense, beta, alpha):
        """beta * start + alpha * (self @ dense) (torch.addmm, torch.sparse.mm/addmm)."""
        if self.layout is sparse_bsc:
            raise RuntimeError("addmm: computation on CPU is not implemented for Strided + "
                               "SparseBsc @ Strided")
        if self.blocksize[0] != self.blocksize[1]:
            raise RuntimeError("MKL Sparse doesn't support matrices with non-square blocks.")
        if self.layout is sparse_bsr and self.blocksize != (1, 1):
            product = _block_product(self, dense)
            dtype = product.dtype
            scaled = product if alpha == 1 else product * dtype.type(alpha)
            if beta == 0:
                return scaled
            return scaled + (start if beta == 1 else start * dtype.type(beta))
        return self.coo().addmm(start, dense, beta, alpha)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        name = ufunc.__name__
        if method == "__call__" and not kwargs.get("out"):
            # what keeps zeros zero: a product with a scalar, negation, and the unary
            # functions with f(0) == 0, on the values (torch refuses a quotient or a power)
            if name in ("divide", "true_divide", "power", "float_power"):
                raise RuntimeError(f"unsupported tensor layout: {_TORCH_NAME[self.layout]}")
            if name == "multiply" and len(inputs) == 2 and \
                    np.ndim(inputs[1 if inputs[0] is self else 0]) == 0:
                scalar = inputs[1 if inputs[0] is self else 0]
                return self.with_values(ufunc(self.values, scalar))
            if len(inputs) == 1 and (name == "negative" or name in _ZERO_PRESERVING):
                return self.with_values(ufunc(self.values, **kwargs))
        if name == "matmul" and method == "__call__" and len(inputs) == 2:
            if inputs[0] is self and getattr(inputs[1], "ndim", 2) == 1:
                _check_mv(self)             # (matrix @ vector: torch.mv's kernel)
                if self.layout in (sparse_csr, sparse_csc) and mkl_fuses() and \
                        self.dtype == np.float32 and inputs[1].dtype == np.float32:
                    return _lanes_mv(self, inputs[1])
            if inputs[0] is self and self.layout is sparse_bsr and self.blocksize != (1, 1):
                return _block_product(self, inputs[1])
            a, b = (x.coo() if isinstance(x, CompressedArrays) else x for x in inputs)
            return np.matmul(a, b)          # (the COO kernel, _coo._matmul)
        raise not_supported(_TORCH_NAMES.get(name, name), self.layout)

    def __array_function__(self, func, types, args, kwargs):
        name = func.__name__
        if name == "transpose" and args[0] is self:
            return self.transposed()        # (a matrix: its one permutation)
        if name == "copy" and args[0] is self:
            return self.copy()
        if name == "iscomplexobj":
            return self.values.dtype.kind == "c"
        if name == "sum" and args[0] is self and kwargs.get("axis") is None and len(args) == 1:
            return self.xp.asarray(self.values.sum(dtype=kwargs.get("dtype")))
        raise not_supported(name, self.layout)


def _block_product(arrays, dense):
    """BSR @ dense as torch's CPU kernel (MKL's) rounds it, for blocks larger than 1x1 (those
    sum as CSR does). On an Intel CPU, each block row times the dense rows it meets is summed
    on its own (its first product rounded, then one fused multiply-add per further column of
    the block), and each output row adds those partial sums, block by block, in storage order.
    Elsewhere MKL rounds each product, and sums the blocks of 2, 3, 4 and 8 columns likewise
    (their partial sums as _MKL_BLOCK_TREES says), while for other sizes it adds each product
    straight into its output row, in the order of the elements (CSR's sum over the blocks'
    elements). (A vector operand is summed in another order by torch's kernel: the same to
    rounding.)"""
    xp = arrays.xp
    dtype = np.result_type(arrays.values.dtype, dense.dtype)
    values = arrays.values.astype(dtype, copy=False)
    flat = dense.astype(dtype, copy=False).reshape(dense.shape[0], -1)
    r, c = arrays.blocksize
    nnz = values.shape[0]
    out = xp.zeros((arrays.shape[0], flat.shape[1]), dtype=dtype)
    first_col = arrays.plain.astype(np.int64) * c
    if mkl_fuses():
        # (float32 sums step in float64, the FMA's exact product, as the kernels do)
        wide = np.float64 if dtype.kind == "f" and dtype.itemsize >= 4 else dtype
        partial = values[:, :, :1] * flat[first_col][:, None, :]
        for j in range(1, c):
            step = values[:, :, j:j + 1].astype(wide) * \
                flat[first_col + j][:, None, :].astype(wide)
            partial = (partial.astype(wide) + step).astype(dtype)
    elif c in _MKL_BLOCK_TREES:
        # each block's column j times the dense row it meets, (nnz, r, width), rounded
        products = [values[:, :, j:j + 1] * flat[first_col + j][:, None, :] for j in range(c)]
        partial = _partial_sums(products, c, flat.shape[1], dtype)
    else:
        rows, cols = arrays.elements()
        fma_rows(out, RowPlan(rows, out.shape[0], cols), values.reshape(-1), flat, fused=False)
        return out.reshape(-1) if dense.ndim == 1 else out
    block_rows = xp.repeat(xp.arange(arrays.compressed.shape[0] - 1, dtype=np.int64),
                           xp.diff(arrays.compressed))
    rows = (block_rows[:, None] * r + xp.arange(r)[None, :]).reshape(-1)
    scatter_fma(out, rows, xp.ones(nnz * r, dtype=dtype), partial.reshape(nnz * r, out.shape[1]))
    return out.reshape(-1) if dense.ndim == 1 else out


# How MKL sums a block's products on a CPU other than Intel's (each product rounded, then each
# add), for the block sizes it has kernels of its own for: a tree, whose tuples add their parts
# left to right and whose ints are the products of those columns of the block. Blocks of 2 and
# 3 columns add them in order; those of 4 and 8 in pairs, the output's columns a vector
# register (16 bytes) at a time, and the columns left over (fewer than a register's worth)
# take the second tree.
_MKL_BLOCK_TREES = {
    2: ((0, 1), (0, 1)),
    3: ((0, 1, 2), (0, 1, 2)),
    4: (((0, 1), (2, 3)), ((0, 2), (1, 3))),
    8: ((((0, 1), (2, 3)), ((4, 5), 6), 7), (((0, 4), (2, 6)), ((1, 5), (3, 7)))),
}


def _tree_sum(tree, products):
    """The products summed as `tree` says (each add rounded in their dtype)."""
    if isinstance(tree, int):
        return products[tree]
    parts = [_tree_sum(part, products) for part in tree]
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return total


def _partial_sums(products, c, width, dtype):
    """Each block row's partial sum of its `c` products (each (nnz, r, width), rounded), as
    MKL adds them on a CPU other than Intel's (see _MKL_BLOCK_TREES)."""
    full_tree, rest_tree = _MKL_BLOCK_TREES[c]
    per_register = max(1, 16 // dtype.itemsize)
    full = width - width % per_register
    if full == width:
        return _tree_sum(full_tree, products)
    if full == 0:
        return _tree_sum(rest_tree, products)
    return xp_of(products[0]).concatenate(
        [_tree_sum(full_tree, [p[..., :full] for p in products]),
         _tree_sum(rest_tree, [p[..., full:] for p in products])], axis=-1)


# torch's float32 CSR @ vector kernel sums each row in this many lanes (one vector register)
_LANES = 16


def _lanes_mv(arrays, vector):
    """A float32 CSR or CSC matrix @ vector as torch's CPU kernel (MKL's, on an Intel CPU)
    rounds it: a row's k-th entry goes to lane k % 16, each lane a chain of fused
    multiply-adds in entry order, and the 16 lanes are added by halves (lane i + lane i + 8,
    then + 4, + 2, + 1)."""
    xp = arrays.xp
    coo = arrays.coo()
    rows, cols = coo.indices[0], coo.indices[1]
    n = arrays.shape[0]
    # each entry's rank in its row (the entries are in row order)
    starts = xp.searchsorted(rows, rows, side="left")
    lane = (xp.arange(rows.shape[0]) - starts) % _LANES
    acc = xp.zeros((n * _LANES, 1), dtype=np.float32)
    scatter_fma(acc, rows * _LANES + lane, coo.values, vector[cols].reshape(-1, 1))
    acc = acc.reshape(n, _LANES)
    width = _LANES
    while width > 1:
        width //= 2
        acc = acc[:, :width] + acc[:, width:2 * width]
    return acc.reshape(n)


def _check_mv(arrays):
    if arrays.layout is sparse_bsc:
        raise RuntimeError("torch.addmv: operation not supported for mat with SparseBsc layout")
    r, c = arrays.blocksize
    if r != c:
        raise RuntimeError("MKL Sparse doesn't support matrices with non-square blocks.")


def is_compressed(t):
    return getattr(type(t._data), "_ember_csr", False)


# ---------------------------------------------------------------------- torch's warnings
# torch warns once per process: that a compressed layout is in beta (naming the first one
# made), and, at the first sparse constructor without check_invariants while the global
# switch was never set, that the checks are off
_warned = set()
_INVARIANTS_WARNING = (
    "Sparse invariant checks are implicitly disabled. Memory errors (e.g. SEGFAULT) will occur "
    "when operating on a sparse tensor which violates the invariants, but checks incur "
    "performance overhead. To silence this warning, explicitly opt in or out. See "
    "`torch.sparse.check_sparse_tensor_invariants.__doc__` for guidance.  (Triggered "
    "internally at /__w/pytorch/pytorch/aten/src/ATen/Context.cpp:816.)")


def _warn_once(key, message, stacklevel):
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, UserWarning, stacklevel=stacklevel + 1)


def warn_beta(layout, stacklevel=3):
    name = _TORCH_NAME[layout][6:].upper()
    _warn_once("beta", f"Sparse {name} tensor support is in beta state. If you miss a "
                       f"functionality in the sparse tensor support, please submit a feature "
                       f"request to https://github.com/pytorch/pytorch/issues. (Triggered "
                       f"internally at /__w/pytorch/pytorch/aten/src/ATen/"
                       f"SparseCsrTensorImpl.cpp:49.)", stacklevel)


def warn_unchecked(check_invariants, stacklevel=3):
    """The warning of a constructor called without check_invariants, the switch never set."""
    if check_invariants is None and invariants_checked[1] is None:
        _warn_once("invariants", _INVARIANTS_WARNING, stacklevel)


# ---------------------------------------------------------------------- construction
@primitive("sparse_compressed_tensor", node="SparseCompressedTensorBackward0")
def _from_values(xp, values, *, layout, compressed, plain, size, blocksize):
    return CompressedArrays(layout, compressed, plain, values, size)


@_from_values.derivative
def _(ctx, grad):
    # each value reached the matrix at its elements: its gradient is the gradient there
    if is_compressed(grad):
        return Tensor._make(grad._data.values, grad._dtype, grad._device)
    shape = (ctx.plain.shape[0],) + tuple(ctx.blocksize)
    # (a pattern only: values of the right shape that hold nothing)
    xp = xp_of(ctx.plain)
    pattern = CompressedArrays(ctx.layout, ctx.compressed, ctx.plain,
                               xp.broadcast_to(xp.zeros((), np.int8), shape), ctx.size)
    rows, cols = pattern.elements()
    picked = grad[Tensor._make(rows), Tensor._make(cols)]
    return picked.reshape(shape) if ctx.layout in _BLOCKED else picked


def _tensor_of(x, device):
    return x if isinstance(x, Tensor) else _creation.tensor(x, device=device)


def _make_compressed(layout, compressed_indices, plain_indices, values, size, dtype, device,
                     requires_grad, check_invariants):
    """torch.sparse_{csr,csc,bsr,bsc}_tensor and sparse_compressed_tensor."""
    comp, plain, vals = (_tensor_of(x, device)
                         for x in (compressed_indices, plain_indices, values))
    if dtype is not None and vals._dtype is not dtype:
        vals = vals.to(dtype)
    for index in (comp, plain):
        if index._dtype not in (D.int32, D.int64):
            raise NotImplementedError(f'"estimate_sparse_compressed_tensor_size" not '
                                      f"implemented for '{scalar_type_name(index._dtype)}'")
    if comp._dtype is not plain._dtype:
        comp, plain = comp.to(D.int64), plain.to(D.int64)      # (torch takes mixed widths)
    c, k, v = comp._data, plain._data, vals._data
    blocked = layout in _BLOCKED
    if blocked and v.ndim < 3:
        raise RuntimeError(f"values must have dimensionality > sum of batch and block "
                           f"dimensionalities (=0 + 2) but got {v.ndim}")
    if c.ndim != 1 or k.ndim != 1 or v.ndim != (3 if blocked else 1):
        raise NotImplementedError("ember: sparse compressed tensors are supported as 2-D "
                                  "matrices without batch or dense dimensions only")
    r, cb = (v.shape[1], v.shape[2]) if blocked else (1, 1)
    if size is None:
        n_compressed, n_plain = c.shape[0] - 1, int(k.max()) + 1 if k.shape[0] else 0
        size = (n_compressed * r, n_plain * cb) if layout in _ROW_MAJOR else \
            (n_plain * r, n_compressed * cb)
    size = tuple(int(s) for s in size)
    if len(size) != 2:
        raise NotImplementedError("ember: sparse compressed tensors are supported as 2-D "
                                  "matrices only")
    warn_unchecked(check_invariants, stacklevel=4)
    if check_invariants if check_invariants is not None else invariants_checked[0]:
        _check_invariants(layout, c, k, v, size)
    warn_beta(layout, stacklevel=4)
    out = _from_values(vals, layout=layout, compressed=c, plain=k, size=size,
                       blocksize=(r, cb) if blocked else ())
    if requires_grad:
        out.requires_grad_(True)
    return out


def _check_invariants(layout, compressed, plain, values, size):
    """torch's check_invariants=True checks of a compressed matrix (the common ones)."""
    row_major = layout in _ROW_MAJOR
    cname, pname = ("crow_indices", "col_indices") if row_major else \
        ("ccol_indices", "row_indices")
    if layout in _BLOCKED:
        for d in (0, 1):
            if size[d] % values.shape[1 + d]:
                raise RuntimeError(f"tensor shape[{d}] (={size[d]}) must be divisible with "
                                   f"blocksize[{d}] (={values.shape[1 + d]}) as defined by "
                                   f"values shape")
        blocks = (size[0] // values.shape[1], size[1] // values.shape[2])
    else:
        blocks = size
    n_compressed, n_plain = blocks if row_major else blocks[::-1]
    what, limit = ("rows", "ncols") if row_major else ("columns", "nrows")
    if layout in _BLOCKED:
        what = what[:-1] + " blocks"
    nnz = plain.shape[0]
    if compressed.shape[0] != n_compressed + 1:
        raise RuntimeError(f"{cname}.shape[-1] must be equal to the number of {what} + 1 "
                           f"(={n_compressed + 1}), but got {compressed.shape[0]}")
    if int(compressed[0]) != 0:
        raise RuntimeError(f"`{cname}[..., 0] == 0` is not satisfied.")
    if int(compressed[-1]) != nnz:
        raise RuntimeError(f"`{cname}[..., -1] == nnz` is not satisfied.")
    if nnz and (int(plain.min()) < 0 or int(plain.max()) >= n_plain):
        raise RuntimeError(f"`0 <= {pname} < {limit}` is not satisfied.")
    steps = xp_of(compressed).diff(compressed)
    if (steps < 0).any() or (steps > n_plain).any():
        raise RuntimeError(f"`0 <= {cname}[..., 1:] - {cname}[..., :-1] <= {limit}` is not "
                           f"satisfied.")


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None,
                      pin_memory=False, requires_grad=False, check_invariants=None):
    return _make_compressed(sparse_csr, crow_indices, col_indices, values, size, dtype, device,
                            requires_grad, check_invariants)


def sparse_csc_tensor(ccol_indices, row_indices, values, size=None, *, dtype=None, device=None,
                      pin_memory=False, requires_grad=False, check_invariants=None):
    return _make_compressed(sparse_csc, ccol_indices, row_indices, values, size, dtype, device,
                            requires_grad, check_invariants)


def sparse_bsr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None,
                      pin_memory=False, requires_grad=False, check_invariants=None):
    return _make_compressed(sparse_bsr, crow_indices, col_indices, values, size, dtype, device,
                            requires_grad, check_invariants)


def sparse_bsc_tensor(ccol_indices, row_indices, values, size=None, *, dtype=None, device=None,
                      pin_memory=False, requires_grad=False, check_invariants=None):
    return _make_compressed(sparse_bsc, ccol_indices, row_indices, values, size, dtype, device,
                            requires_grad, check_invariants)


def sparse_compressed_tensor(compressed_indices, plain_indices, values, size=None, *,
                             dtype=None, layout=None, device=None, pin_memory=False,
                             requires_grad=False, check_invariants=None):
    if layout not in LAYOUTS:
        got = "none" if layout is None else ("Strided" if layout is strided else
                                             "Sparse")
        raise RuntimeError(f"sparse_compressed_tensor expected sparse compressed tensor layout "
                           f"but got {got}")
    return _make_compressed(layout, compressed_indices, plain_indices, values, size, dtype,
                            device, requires_grad, check_invariants)


# ---------------------------------------------------------------------- conversions
def _pack(layout, rows, cols, values, shape, blocksize):
    """Compressed arrays of the entries (rows, cols) -> values (blocks: rows, cols count
    blocks and values are (nnz, R, C)), which are in the layout's order already."""
    xp = xp_of(values)
    if layout in _BLOCKED:
        shape_c = (shape[0] // blocksize[0], shape[1] // blocksize[1])
    else:
        shape_c = shape
    outer, inner, n = (rows, cols, shape_c[0]) if layout in _ROW_MAJOR else \
        (cols, rows, shape_c[1])
    counts = xp.bincount(outer, minlength=n) if outer.shape[0] else xp.zeros(n, np.int64)
    compressed = xp.concatenate([xp.zeros(1, dtype=np.int64), xp.cumsum(counts)])
    return CompressedArrays(layout, compressed.astype(np.int64),
                            inner.astype(np.int64, copy=False), values, shape)


def _from_dense_arrays(xp, data, layout, blocksize):
    """The compressed arrays of a dense matrix in `layout` (its non-zero elements, or blocks
    with a non-zero element)."""
    if layout in _BLOCKED:
        r, c = blocksize
        blocks = data.reshape(data.shape[0] // r, r, data.shape[1] // c, c).transpose(0, 2, 1, 3)
        mask = (blocks != 0).any(axis=(2, 3))
        if layout is sparse_bsr:
            rows, cols = xp.nonzero(mask)
        else:
            cols, rows = xp.nonzero(mask.T)
        return _pack(layout, rows, cols, blocks[rows, cols].copy(), data.shape, blocksize)
    if layout is sparse_csr:
        rows, cols = xp.nonzero(data)
    else:
        cols, rows = xp.nonzero(data.T)
    return _pack(layout, rows, cols, data[rows, cols], data.shape, None)


_TO_NODES = {sparse_csr: "ToSparseCsrBackward0", sparse_csc: "ToSparseCscBackward0",
             sparse_bsr: "ToSparseBsrBackward0", sparse_bsc: "ToSparseBscBackward0"}


def _convert_arrays(xp, data, layout, blocksize):
    """The compressed arrays of a dense matrix, COO arrays or another compressed layout's
    arrays in `layout`. A sparse source keeps its entries (explicit zeros too, and a block
    for each), in the layout's order; a dense one its non-zero elements or blocks."""
    if isinstance(data, xp.ndarray):
        return _from_dense_arrays(xp, data, layout, blocksize)
    if isinstance(data, CompressedArrays):
        rows, cols = data.elements()
        values = data.values.reshape(-1)
    else:
        coo = data.coalesce()
        rows, cols, values = coo.indices[0], coo.indices[1], coo.values
    r, c = blocksize or (1, 1)
    block_rows, block_cols = rows // r, cols // c
    n_block_cols = data.shape[1] // c
    n_block_rows = data.shape[0] // r
    # each entry's block, numbered in the layout's order (row-major for CSR/BSR)
    key = block_rows * n_block_cols + block_cols if layout in _ROW_MAJOR else \
        block_cols * n_block_rows + block_rows
    blocks, which = xp.unique(key, return_inverse=True)
    if layout in _ROW_MAJOR:
        first_rows, first_cols = blocks // n_block_cols, blocks % n_block_cols
    else:
        first_cols, first_rows = blocks // n_block_rows, blocks % n_block_rows
    if layout in _BLOCKED:
        block_values = xp.zeros((blocks.shape[0], r, c), dtype=values.dtype)
        block_values[which.reshape(-1), rows % r, cols % c] = values
    else:
        block_values = xp.zeros(blocks.shape[0], dtype=values.dtype)
        block_values[which.reshape(-1)] = values
    return _pack(layout, first_rows, first_cols, block_values, data.shape, blocksize)


_TO_NODES = {sparse_csr: "ToSparseCsrBackward0", sparse_csc: "ToSparseCscBackward0",
             sparse_bsr: "ToSparseBsrBackward0", sparse_bsc: "ToSparseBscBackward0"}


def _converter(layout):
    @primitive(f"to_{layout[len('torch.'):]}", node=_TO_NODES[layout])
    def convert(xp, self, *, blocksize, source):
        return _convert_arrays(xp, self, layout, blocksize)

    @convert.derivative
    def _(ctx, grad):
        if ctx.source in (sparse_csr, sparse_csc) and layout in _BLOCKED:
            # (torch turns the blocked gradient back into the source's layout: refused)
            raise RuntimeError(f"sparse_compressed_to_{ctx.source[len('torch.'):]}: expected "
                               f"SparseCsr or SparseCsc layout but got {_TORCH_NAME[layout]}")
        return grad if grad.layout is strided else grad.to_dense()
    return convert


_CONVERT = {layout: _converter(layout) for layout in LAYOUTS}


def _check_blocksize(blocksize, layout):
    if layout in _BLOCKED:
        if blocksize is None:
            raise TypeError(f'to_sparse_{layout[13:]}() missing 1 required positional '
                            f'arguments: "blocksize"')
        if isinstance(blocksize, int):
            blocksize = (blocksize, blocksize)
        return tuple(int(b) for b in blocksize)
    return None


def convert(self, layout, blocksize=None, dense_dim=None):
    """Tensor.to_sparse_{csr,csc,bsr,bsc}: a dense, COO or compressed matrix in `layout`."""
    blocksize = _check_blocksize(blocksize, layout)
    name = layout[len("torch."):]
    if dense_dim is not None:
        raise NotImplementedError(f"ember: to_{name} supports dense_dim=None only")
    if is_compressed(self):
        source = self._data.layout
        if source is layout:
            if blocksize is not None and source in _BLOCKED and \
                    blocksize != self._data.blocksize:
                raise RuntimeError(f"to_{name}: conversion from {_TORCH_NAME[source]} to "
                                   f"{_TORCH_NAME[layout]} with blocksize changed from "
                                   f"{list(self._data.blocksize)} to {list(blocksize)} is not "
                                   f"supported")
            return self
        if layout in _BLOCKED and source in _BLOCKED and blocksize != self._data.blocksize:
            raise RuntimeError(f"sparse_compressed_to_{name}: conversion from "
                               f"{_TORCH_NAME[source]} to {_TORCH_NAME[layout]} with blocksize "
                               f"changed from {list(self._data.blocksize)} to {list(blocksize)} "
                               f"is not supported")
        if layout not in _BLOCKED and source in _BLOCKED:
            raise RuntimeError(f"sparse_compressed_to_{name}: expected SparseCsr or SparseCsc "
                               f"layout but got {_TORCH_NAME[source]}")
    elif self.is_sparse and (self._data.ndim != 2 or self._data.sparse_dim != 2):
        raise NotImplementedError(f"ember: to_{name} supports 2-D matrices only")
    shape = tuple(self.shape)
    if len(shape) != 2:
        if len(shape) == 1:
            if layout is sparse_csr:
                raise IndexError(f"select(): index 1 out of range for tensor of size "
                                 f"[{shape[0]}, 1] at dimension 1")
            raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], "
                             f"but got {1 if layout is sparse_csc else -2})")
        raise NotImplementedError(f"ember: to_{name} supports 2-D matrices only")
    if blocksize is not None and (shape[0] % blocksize[0] or shape[1] % blocksize[1]):
        raise RuntimeError(f"dense_to_{name}: tensor sparse size ({shape[0]},{shape[1]}) must "
                           f"be divisible by given blocksize ({blocksize[0]},{blocksize[1]})")
    warn_beta(layout, stacklevel=4)
    source = self._data.layout if is_compressed(self) else None
    return _CONVERT[layout](self, blocksize=blocksize, source=source)


def to_sparse_csr(self, dense_dim=None):
    return convert(self, sparse_csr, None, dense_dim)


def to_sparse_csc(self, dense_dim=None):
    return convert(self, sparse_csc, None, dense_dim)


def to_sparse_bsr(self, blocksize=None, dense_dim=None):
    return convert(self, sparse_bsr, blocksize, dense_dim)


def to_sparse_bsc(self, blocksize=None, dense_dim=None):
    return convert(self, sparse_bsc, blocksize, dense_dim)


def to_layout(self, layout, blocksize):
    """Tensor.to_sparse(layout=...) for a compressed layout (torch's checks of blocksize)."""
    needs = layout in _BLOCKED
    if (blocksize is not None) != needs:
        source = layout_name(self)
        given = "with" if blocksize is not None else "without"
        raise RuntimeError(f"{'dense_to_sparse' if source == 'Strided' else 'to_sparse'}: "
                           f"conversion from {source} to {_TORCH_NAME[layout]} {given} "
                           f"blocksize argument given is not supported")
    return convert(self, layout, blocksize)


# ---------------------------------------------------------------------- reading it
def _require(self, name, row_major):
    if not is_compressed(self) or self._data.row_major != row_major:
        what = "sparse row compressed" if row_major else "sparse column compressed"
        raise RuntimeError(f"{name} expected {what} tensor layout but got {layout_name(self)}")


def _index_tensor(self, array):
    return Tensor._make(array, D.from_numpy_dtype(array.dtype), self._device)


def crow_indices(self):
    _require(self, "crow_indices", True)
    return _index_tensor(self, self._data.compressed)


def col_indices(self):
    _require(self, "col_indices", True)
    return _index_tensor(self, self._data.plain)


def ccol_indices(self):
    _require(self, "ccol_indices", False)
    return _index_tensor(self, self._data.compressed)


def row_indices(self):
    _require(self, "row_indices", False)
    return _index_tensor(self, self._data.plain)


@primitive("compressed_values", node="ValuesBackward0", save=("self",))
def _values_op(xp, self):
    return self.values


@_values_op.derivative
def _(ctx, grad):
    return Tensor._make(ctx.self._data.with_values(grad._data), grad._dtype, grad._device)


def values(self):
    return _values_op(self)


@primitive("compressed_to_dense", node="ToDenseBackward0", save=("self",))
def _to_dense(xp, self, *, masked_grad=None):
    return self.to_dense()


@_to_dense.derivative
def _(ctx, grad):
    # the gradient of a compressed input lives only at its elements
    pattern = ctx.self._data
    return Tensor._make(pattern.with_values(pattern.at_elements(grad._data)), grad._dtype,
                        grad._device)


def to_dense(self):
    return _to_dense(self)


@primitive("compressed_to_sparse", node="ToSparseBackward1")
def _to_coo(xp, self):
    rows, cols = self.elements()
    return COOArrays(xp.stack([rows, cols]), self.values.reshape(-1).copy(), self.shape,
                     self.layout is sparse_csr)


@_to_coo.derivative
def _(ctx, grad):
    return grad.to_dense()          # (read at the elements by what made the matrix)


def to_sparse(self):
    """A compressed matrix as COO: its elements in storage order (marked coalesced for CSR
    only, as torch marks them)."""
    return _to_coo(self)


def refuse_coo_method(self, name):
    """What a COO-only method says of a compressed tensor (torch's words)."""
    return RuntimeError(f"{name} expected sparse coordinate tensor layout but got "
                        f"{layout_name(self)}")


# ---------------------------------------------------------------------- printing
def compressed_repr(t):
    """torch's repr of a compressed matrix: its compressed and plain indices, values, then
    size, nnz, dtype, layout and grad, each added to the last line while it fits (torch counts
    that line one character longer than it is)."""
    arrays = t._data
    host = _backend(t._device.type).to_host
    pad = " " * len(_PREFIX)
    text = ""
    names = ("crow_indices=", "col_indices=") if arrays.row_major else \
        ("ccol_indices=", "row_indices=")
    for k, (name, array, dtype) in enumerate([
            (names[0], arrays.compressed, D.from_numpy_dtype(arrays.compressed.dtype)),
            (names[1], arrays.plain, D.from_numpy_dtype(arrays.plain.dtype)),
            ("values=", arrays.values, t._dtype)]):
        head = (_PREFIX if k == 0 else ",\n" + pad) + name
        text += head + _inner_repr(host(array), dtype, len(pad) + len(name) + len(pad))
    return sparse_repr_tail(t, text, [f"size={tuple(arrays.shape)}", f"nnz={arrays.nnz}"],
                            arrays.nnz, arrays.layout[len("torch."):],
                            len(text) - text.rfind("\n") + 1)
