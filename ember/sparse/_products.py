"""Products with a sparse (COO or compressed) operand: torch.mm / matmul / @ / spmm with a
sparse operand on either side (`product`, node MmBackward0, dense result and dense gradients
as torch's; a compressed matrix made from its values gets its values' gradient at its
elements), and torch.sparse.mm / sparse.addmm (sparse @ dense whose gradient for the sparse
operand keeps its pattern). The arithmetic is in _coo.py, _compressed.py and _kernels.py."""
from .._printing import scalar_type_name
from .._tensor import Tensor
from ..autograd import grad_mode
from ..ops import blas
from ..ops.creation import zeros
from ..ops.registry import primitive
from .._layout import sparse_bsc, sparse_bsr
from ._conversions import is_sparse, sparse_mask
from ._coo import COOArrays, not_supported
from ._compressed import is_compressed
from ._kernels import sampled_dot

# the node that makes a sparse tensor from its values: a gradient bound for it is read at
# the entries only, so the products hand it a sparse gradient (see _operand_grad)
_FROM_VALUES = "SparseCooTensorWithDimsAndTensorsBackward0"
_FROM_COMPRESSED_VALUES = "SparseCompressedTensorBackward0"


@primitive("sparse_mm", node="MmBackward0", save=("self", "mat2"))
def _mm(xp, self, mat2):
    return xp.matmul(self, mat2)            # (COOArrays.__array_ufunc__: _coo._matmul)


@_mm.derivative
def _(ctx, grad):
    needs = ctx.needs_input_grad
    a, b = ctx.self, ctx.mat2
    ga = gb = None
    # (the dense operand's gradient is a product with the transpose: BSR.T is BSC and torch
    # has no kernel for BSC @ dense, nor for dense @ BSR)
    if needs[1] and is_compressed(a) and a._data.layout is sparse_bsr:
        raise RuntimeError("addmm: computation on CPU is not implemented for Strided + "
                           "SparseBsc @ Strided")
    if needs[0] and is_compressed(b) and b._data.layout is sparse_bsc:
        raise RuntimeError("addmm: computation on CPU is not implemented for Strided + "
                           "Strided @ SparseBsr")
    if needs[0] and is_compressed(a):
        ga = _compressed_grad(a, grad, b, left_side=True)
    if needs[1] and is_compressed(b):
        gb = _compressed_grad(b, grad, a, left_side=False)
    a, b = _as_coo(a), _as_coo(b)
    if needs[0] and ga is None:
        ga = _operand_grad(a, grad, b, left_side=True) if is_sparse(a) else grad.mm(b.t())
    if needs[1] and gb is None:
        gb = _operand_grad(b, grad, a, left_side=False) if is_sparse(b) else a.t().mm(grad)
    return ga, gb


def _as_coo(t):
    """A CSR operand as a COO tensor over the same entries (for its gradient formulas)."""
    return Tensor._make(t._data.coo(), t._dtype, t._device) if is_compressed(t) else t


def _operand_grad(sparse, grad, dense, left_side):
    """The gradient of the sparse operand of sparse @ dense (left_side) or dense @ sparse.
    torch's is the dense product (grad @ dense.T, or dense.T @ grad), and so is ours where
    anything but the values' constructor receives it (a sparse leaf's .grad is dense in
    torch). Where the constructor does, which reads it only at the entries, it is computed
    at the entries alone and handed over sparse, on the operand's coalesced pattern."""
    node = sparse.grad_fn
    if grad_mode.state.enabled or node is None or node.name() != _FROM_VALUES:
        return grad.mm(dense.t()) if left_side else dense.t().mm(grad)
    pattern = sparse._data.coalesce()
    rows, cols = pattern.indices[0], pattern.indices[1]
    if left_side:
        values = sampled_dot(grad._data, dense._data, rows, cols)
    else:
        values = sampled_dot(dense._data.T, grad._data.T, rows, cols)
    return Tensor._make(COOArrays(pattern.indices, values, pattern.shape, True),
                        grad._dtype, grad._device)


def _compressed_grad(sparse, grad, dense, left_side):
    """The gradient of a compressed operand of a product: dense, as torch's (a compressed
    leaf's .grad is dense), except where the node that made it from its values receives it:
    that reads it at the elements only, so it is computed there alone, on the pattern."""
    node = sparse.grad_fn
    if grad_mode.state.enabled or node is None or node.name() != _FROM_COMPRESSED_VALUES:
        dense = _as_coo(dense)
        return grad.mm(dense.t()) if left_side else dense.t().mm(grad)
    pattern = sparse._data
    rows, cols = pattern.elements()
    if left_side:
        values = sampled_dot(grad._data, dense._data, rows, cols)
    else:
        values = sampled_dot(dense._data.T, grad._data.T, rows, cols)
    return Tensor._make(pattern.with_values(values.reshape(pattern.values.shape)),
                        grad._dtype, grad._device)


def _check_product(a, b):
    """torch's checks of a product with a sparse operand (torch computes dense @ sparse as
    (sparse.T @ dense.T).T, hence its words)."""
    if is_compressed(a) or is_compressed(b):
        return _check_csr_product(a, b)
    sparse, dense = (a, b) if is_sparse(a) else (b, a)
    if is_sparse(dense):
        raise not_supported("mm")
    if dense.dim() != 2:
        raise RuntimeError(f"addmm: matrices expected, got {dense.dim()}D tensor")
    n, k = sparse.dim(), sparse._data.sparse_dim
    if sparse is b and k < n:
        # (dense @ sparse transposes the sparse operand first: its last two dims)
        raise RuntimeError(f"sparse transpose: transposed dimensions must be sparse Got "
                           f"sparse_dim: {k}, d0: {n - 2}, d1: {n - 1}")
    if sparse is a and n == 2 and k == 1:
        raise RuntimeError("addmm: matrices expected, got 1D tensor")
    # (as sparse @ dense: dense @ sparse is sparse.T @ dense.T)
    shape = tuple(sparse.shape) if sparse is a else \
        tuple(sparse.shape[:-2]) + (sparse.shape[-1], sparse.shape[-2])
    if n > 2 and shape[0] != shape[1]:
        # (torch's kernel broadcasts a start of size [rows, columns] first)
        s0, s1 = shape[0], shape[1]
        d1 = dense.shape[1] if sparse is a else dense.shape[0]
        raise RuntimeError(f"The expanded size of the tensor ({s0}) must match the existing "
                           f"size ({s1}) at non-singleton dimension 0.  Target sizes: "
                           f"[{s0}, {d1}].  Tensor sizes: [{s1}, {d1}]")
    if n != 2:
        raise RuntimeError(f"addmm: matrices expected, got {n}D tensor")
    if sparse._dtype is not dense._dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(sparse._dtype)} but found "
                           f"{scalar_type_name(dense._dtype)}")
    inner, size = (a.shape[1], b.shape[0]) if sparse is a else (b.shape[0], a.shape[1])
    if inner != size:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {inner}, got "
                           f"{size}")


def _check_csr_product(a, b):
    if is_compressed(a) and is_compressed(b) or is_sparse(a) or is_sparse(b):
        raise NotImplementedError("ember: products of two sparse matrices are not supported")
    if a.dim() != 2 or b.dim() != 2:
        raise RuntimeError(f"addmm: matrices expected, got {a.dim() if a.dim() != 2 else b.dim()}D "
                           f"tensor")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x"
                           f"{a.shape[1]} and {b.shape[0]}x{b.shape[1]})")
    sparse, dense = (a, b) if is_compressed(a) else (b, a)
    layout = sparse._data.layout
    if sparse is a and layout is sparse_bsc or sparse is b and layout is sparse_bsr:
        operands = "SparseBsc @ Strided" if sparse is a else "Strided @ SparseBsr"
        raise RuntimeError(f"addmm: computation on CPU is not implemented for Strided + "
                           f"{operands}")
    blocksize = sparse._data.blocksize
    if blocksize[0] != blocksize[1]:
        raise RuntimeError("MKL Sparse doesn't support matrices with non-square blocks.")
    if sparse._dtype is not dense._dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(sparse._dtype)} but found "
                           f"{scalar_type_name(dense._dtype)}")
    if sparse._dtype._category < 2:
        raise NotImplementedError(f'"addmm_out_sparse_csr_impl_mkl" not implemented for '
                                  f"'{scalar_type_name(sparse._dtype)}'")


def product(a, b):
    """torch.mm(a, b) with a sparse operand (a dense result, node MmBackward0)."""
    _check_product(a, b)
    return _mm(a, b)


blas.SPARSE_PRODUCT[0] = product


@primitive("sparse_addmm", node="SparseAddmmBackward0", save=("mat1", "mat2"))
def _sparse_addmm(xp, self, mat1, mat2, *, beta, alpha):
    return mat1.addmm(self, mat2, beta, alpha)


@_sparse_addmm.derivative
def _(ctx, grad):
    needs = ctx.needs_input_grad
    g_self = (grad if ctx.beta == 1 else grad * ctx.beta) if needs[0] else None
    g1 = g2 = None
    if needs[1] and is_compressed(ctx.mat1):
        # (on the matrix's own pattern: its values' gradient)
        pattern = ctx.mat1._data
        full = grad.mm(ctx.mat2.t())
        g1 = Tensor._make(pattern.with_values(pattern.at_elements(full._data)), full._dtype,
                          full._device)
        if ctx.alpha != 1:
            g1 = g1 * ctx.alpha
    elif needs[1]:
        g1 = sparse_mask(grad.mm(ctx.mat2.t()), ctx.mat1, coalesce_mask=True)
        if ctx.alpha != 1:
            g1 = g1 * ctx.alpha
    if needs[2]:
        g2 = ctx.mat1.t().mm(grad)
        if ctx.alpha != 1:
            g2 = g2 * ctx.alpha
    return g_self, g1, g2


def _check_mm(mat1, mat2, name):
    if is_compressed(mat1) and not is_sparse(mat2) and not is_compressed(mat2):
        return _check_csr_product(mat1, mat2)
    if not is_sparse(mat1) or is_sparse(mat2):
        raise NotImplementedError(f"{name}: ember supports a sparse COO first operand with a "
                                  f"dense second one")
    if mat1.dim() != 2 or mat2.dim() != 2:
        raise RuntimeError(f"{name}: Expected dim 0 size to be 2 matrices, got {mat1.dim()}-D "
                           f"and {mat2.dim()}-D")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x"
                           f"{mat1.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})")


def mm(mat1, mat2, reduce="sum"):
    """torch.sparse.mm(sparse, dense) (or dense, sparse): a dense product; the sparse
    operand's gradient is sparse, on its own entries."""
    if reduce != "sum":
        raise NotImplementedError("torch.sparse.mm: ember supports reduce='sum' only")
    if is_compressed(mat1) and not is_compressed(mat2):
        pass                                    # (a compressed matrix @ dense: below)
    elif is_compressed(mat2) and not is_compressed(mat1):
        # dense @ compressed: (compressed.T @ dense.T).T, as torch
        return mm(mat2.transpose(0, 1), mat1.transpose(0, 1)).transpose(0, 1)
    elif not is_sparse(mat1) and not is_sparse(mat2):
        return mat1.mm(mat2)                    # (two dense operands: torch.mm, as torch)
    elif not is_sparse(mat1):
        # dense @ sparse: (sparse.T @ dense.T).T, the sparse gradient on sparse.T's pattern
        return mm(mat2.transpose(0, 1), mat1.transpose(0, 1)).transpose(0, 1)
    _check_mm(mat1, mat2, "sparse.mm")
    base = zeros((mat1.shape[0], mat2.shape[1]), dtype=mat2.dtype, device=mat2.device)
    return _sparse_addmm(base, mat1, mat2, beta=0, alpha=1)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    _check_mm(mat1, mat2, "sparse.addmm")
    return _sparse_addmm(mat, mat1, mat2, beta=beta, alpha=alpha)
