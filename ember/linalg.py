"""ember.linalg: the norms and products PyTorch groups under torch.linalg."""
from .ops.reduction import vector_norm
from .ops.linalg import matmul
from .ops.linalg_extra import inv, det, linalg_slogdet as slogdet, solve, LinAlgError
from .ops.linalg_extra import linalg_cholesky as cholesky, linalg_cross as cross


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim)


__all__ = ["vector_norm", "norm", "matmul", "inv", "det", "slogdet", "solve", "LinAlgError",
           "cholesky", "cross"]
