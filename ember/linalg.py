"""ember.linalg: the decompositions, solvers, norms and products PyTorch groups under
torch.linalg."""
from .ops.linalg_solvers import (inv, det, linalg_slogdet as slogdet, solve, pinv, lstsq,
                                 solve_triangular, tensorinv, tensorsolve)
from .ops.linalg_decompositions import (linalg_cholesky as cholesky, svd, svdvals, qr, eigh,
                                        eigvalsh, eig, eigvals, matrix_exp, lu_factor,
                                        lu_factor_ex, lu, lu_solve, inv_ex, solve_ex, cholesky_ex,
                                        vander, diagonal, householder_product)
from .ops.linalg_norms import matrix_rank, matrix_norm, norm, cond
from .ops.norms import linalg_vector_norm as vector_norm
from .ops.blas import (matmul, linalg_cross as cross, matrix_power, multi_dot, vecdot)
from .ops._linalg_common import LinAlgError
from .linalg_ldl import ldl_factor, ldl_factor_ex, ldl_solve

__all__ = ["vector_norm", "norm", "matmul", "inv", "det", "slogdet", "solve", "LinAlgError",
           "cholesky", "cross", "matrix_power", "svd", "svdvals", "qr", "eigh", "eigvalsh",
           "eig", "eigvals", "pinv", "lstsq", "matrix_rank", "matrix_norm", "cond",
           "matrix_exp", "solve_triangular", "lu_factor", "lu_factor_ex", "lu", "lu_solve",
           "inv_ex", "solve_ex", "cholesky_ex", "multi_dot", "vecdot", "vander", "diagonal",
           "tensorinv", "tensorsolve", "householder_product", "ldl_factor", "ldl_factor_ex",
           "ldl_solve"]
