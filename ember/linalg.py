"""ember.linalg: the norms and products PyTorch groups under torch.linalg."""
from .ops.reduction import vector_norm
from .ops.linalg import matmul


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim)


__all__ = ["vector_norm", "norm", "matmul"]
