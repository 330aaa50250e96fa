"""torch.sparse.mm and torch.sparse.addmm: sparse @ dense products whose gradient for the
sparse operand keeps its pattern (torch.mm on a sparse operand gives a dense one instead)."""
from ..ops.creation import zeros
from ..ops.registry import primitive
from ._conversions import is_sparse, sparse_mask


@primitive("sparse_addmm", node="SparseAddmmBackward0", save=("mat1", "mat2"))
def _sparse_addmm(xp, self, mat1, mat2, *, beta, alpha):
    return mat1.addmm(self, mat2, beta, alpha)


@_sparse_addmm.derivative
def _(ctx, grad):
    needs = ctx.needs_input_grad
    g_self = (grad if ctx.beta == 1 else grad * ctx.beta) if needs[0] else None
    g1 = g2 = None
    if needs[1]:
        g1 = sparse_mask(grad.mm(ctx.mat2.t()), ctx.mat1, coalesce_mask=True)
        if ctx.alpha != 1:
            g1 = g1 * ctx.alpha
    if needs[2]:
        g2 = ctx.mat1.t().mm(grad)
        if ctx.alpha != 1:
            g2 = g2 * ctx.alpha
    return g_self, g1, g2


def _check_mm(mat1, mat2, name):
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
    """torch.sparse.mm(sparse, dense): a dense product; the sparse operand's gradient is
    sparse, on its own entries."""
    if reduce != "sum":
        raise NotImplementedError("torch.sparse.mm: ember supports reduce='sum' only")
    _check_mm(mat1, mat2, "sparse.mm")
    base = zeros((mat1.shape[0], mat2.shape[1]), dtype=mat2.dtype, device=mat2.device)
    return _sparse_addmm(base, mat1, mat2, beta=0, alpha=1)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    _check_mm(mat1, mat2, "sparse.addmm")
    return _sparse_addmm(mat, mat1, mat2, beta=beta, alpha=alpha)
