"""ember.linalg: the decompositions, solvers, norms and products PyTorch groups under
torch.linalg."""
from .ops.reduction import linalg_vector_norm as vector_norm
from .ops.linalg import matmul
from .ops.linalg_extra import inv, det, linalg_slogdet as slogdet, solve, LinAlgError
from .ops.linalg_extra import linalg_cholesky as cholesky, linalg_cross as cross
from .ops.shape_extra import matrix_power
from .ops.linalg_decomp import (svd, svdvals, qr, eigh, eigvalsh, eig, eigvals, pinv, lstsq,
                                matrix_rank, matrix_norm, norm, cond, matrix_exp,
                                solve_triangular, lu_factor, lu_factor_ex, lu, lu_solve,
                                inv_ex, solve_ex, cholesky_ex, multi_dot, vecdot, vander,
                                diagonal, tensorinv, tensorsolve, householder_product)

__all__ = ["vector_norm", "norm", "matmul", "inv", "det", "slogdet", "solve", "LinAlgError",
           "cholesky", "cross", "matrix_power", "svd", "svdvals", "qr", "eigh", "eigvalsh",
           "eig", "eigvals", "pinv", "lstsq", "matrix_rank", "matrix_norm", "cond",
           "matrix_exp", "solve_triangular", "lu_factor", "lu_factor_ex", "lu", "lu_solve",
           "inv_ex", "solve_ex", "cholesky_ex", "multi_dot", "vecdot", "vander", "diagonal",
           "tensorinv", "tensorsolve", "householder_product"]
