"""What the linalg modules share: LinAlgError, argument checks, the named-tuple results and out=."""
import functools
import numpy as np

from .. import _dtype as D
from .._device import CPU
from .._tensor import Tensor
from ..autograd import grad_mode
from ._utils import return_type as _return_type
import warnings
from .._printing import scalar_type_name
from ._pointwise_common import _out
from .creation import eye
from .registry import check_broadcast


class _LinAlgError(RuntimeError):
    """A matrix that LAPACK could not factor (PyTorch's torch._C._LinAlgError)."""


_LinAlgError.__module__ = "ember._C"
LinAlgError = _LinAlgError


def _tname(dtype):
    return scalar_type_name(dtype)


# ---------------------------------------------------------------------------- argument checks
def _check_square(fn, A, low_precision=None):
    """PyTorch's checks for ops on batches of square float/complex matrices. float16 and
    bfloat16 are refused by the op itself (low_precision=None) or by its LAPACK kernel
    (low_precision names it, raising NotImplementedError), as PyTorch does."""
    if A._data.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    if A._dtype._category < 2:
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. "
                           f"Got {_tname(A._dtype)}")
    low = A._data.dtype.itemsize < 4                    # float16, bfloat16
    if low and low_precision is None:
        raise RuntimeError(f"{fn}: Low precision dtypes not supported. Got {_tname(A._dtype)}")
    n, m = A._data.shape[-2:]
    if n != m:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are {n} by "
                           f"{m} matrices")
    if low:
        raise NotImplementedError(f"\"{low_precision}\" not implemented for "
                                  f"'{_tname(A._dtype)}'")


def _zero_pivot(xp, a):
    """(flat batch index, 1-based diagonal index) of the first exact zero pivot that LU with
    partial pivoting (LAPACK getrf) meets in the batch of matrices `a`, or None.
    A loop over the n columns, vectorised over the batch; run only on the error path."""
    n = a.shape[-1]
    u = a.reshape((-1, n, n)).copy()          # in a's dtype, as LAPACK computes it
    rows = xp.arange(u.shape[0])
    first = xp.zeros(u.shape[0], dtype=np.int64)        # 0: no zero pivot yet
    for k in range(n):
        p = k + xp.argmax(xp.abs(u[:, k:, k]), axis=1)   # the pivot row of each matrix
        pivot_rows = u[rows, p].copy()
        u[rows, p] = u[:, k]
        u[:, k] = pivot_rows
        pivot = u[:, k, k]
        zero = pivot == 0
        first = xp.where(zero & (first == 0), k + 1, first)
        safe = xp.where(zero, 1, pivot)
        factors = xp.where(zero[:, None], 0, u[:, k + 1:, k] / safe[:, None])
        u[:, k + 1:, k:] -= factors[:, :, None] * u[:, k, None, k:]
    bad = xp.nonzero(first)[0]
    if len(bad) == 0:
        return None
    return int(bad[0]), int(first[bad[0]])


def _singular_error(fn, xp, a, message):
    where = _zero_pivot(xp, a)
    batch, k = where if where is not None else (0, a.shape[-1])
    prefix = f"{fn}: (Batch element {batch}): " if a.ndim > 2 else f"{fn}: "
    return _LinAlgError(prefix + message.format(k=k))


_INV_SINGULAR = ("The diagonal element {k} is zero, the inversion could not be completed "
                 "because the input matrix is singular.")


_SOLVE_SINGULAR = "The solver failed because the input matrix is singular."


def _check_batches_broadcast(batch_b, batch_a):
    """PyTorch's broadcast error for batch shapes (B's batch is "tensor a")."""
    check_broadcast([Tensor._make(np.empty(batch_b + (0,)), D.float32, CPU),
                     Tensor._make(np.empty(batch_a + (0,)), D.float32, CPU)])


_LinalgSvd = _return_type("linalg_svd", ["U", "S", "Vh"])
_Svd = _return_type("svd", ["U", "S", "V"])
_LinalgQr = _return_type("linalg_qr", ["Q", "R"])
_Qr = _return_type("qr", ["Q", "R"])
_LinalgEigh = _return_type("linalg_eigh", ["eigenvalues", "eigenvectors"])
_LinalgEig = _return_type("linalg_eig", ["eigenvalues", "eigenvectors"])
_LinalgLstsq = _return_type("linalg_lstsq", ["solution", "residuals", "rank",
                                             "singular_values"])
_LinalgLuFactor = _return_type("linalg_lu_factor", ["LU", "pivots"])
_LinalgLuFactorEx = _return_type("linalg_lu_factor_ex", ["LU", "pivots", "info"])
_LinalgLu = _return_type("linalg_lu", ["P", "L", "U"])
_LuUnpack = _return_type("lu_unpack", ["P", "L", "U"])
_LinalgInvEx = _return_type("linalg_inv_ex", ["inverse", "info"])
_LinalgSolveEx = _return_type("linalg_solve_ex", ["result", "info"])
_LinalgCholeskyEx = _return_type("linalg_cholesky_ex", ["L", "info"])
_TriangularSolve = _return_type("triangular_solve", ["solution", "cloned_coefficient"])


def _with_out(name):
    """Accept PyTorch's out= (a tensor, or a tuple of them for a tuple result): the result is
    written into it, as pointwise ops do."""
    def wrap(fn):
        @functools.wraps(fn)
        def call(*args, out=None, **kwargs):
            result = fn(*args, **kwargs)
            if out is None:
                return result
            name_ = name.replace(".", "_")          # PyTorch names the aten op here
            if isinstance(result, tuple):        # as linalg_svd_out(U=, S=, Vh=)
                return _out_type(type(result))(*(_out(r, o, name_)
                                                 for r, o in zip(result, out)))
            return _out(result, out, name_)
        return call
    return wrap


_OUT_TYPES = {}


def _out_type(cls):
    if cls not in _OUT_TYPES:
        _OUT_TYPES[cls] = _return_type(cls.__name__ + "_out", cls._fields)
    return _OUT_TYPES[cls]


def _recording(*tensors):
    """Whether an op on these tensors records a graph (then a derivative needs more factors)."""
    return grad_mode.state.enabled and any(t._requires_grad for t in tensors)


def _eye_like(A, n=None):
    return eye(A.shape[-1] if n is None else n, dtype=A._dtype, device=A._device)


def _off_diagonal(X):
    """X with its diagonal set to zero (the last two dims)."""
    return X - X.diagonal(0, -2, -1).diag_embed()


def _check_matrix(fn, A):
    """PyTorch's checks for ops on batches of (not necessarily square) float/complex matrices."""
    if A._data.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    if A._dtype._category < 2:
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. "
                           f"Got {_tname(A._dtype)}")


def _check_kernel(kernel, A):
    """Integers, float16 and bfloat16 reach the LAPACK kernel, which PyTorch has not built
    for them."""
    if A._dtype._category < 2 or A._data.dtype.itemsize < 4:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_tname(A._dtype)}'")


def _check_square_kernel(fn, A, kernel):
    """Checks of ops whose kernel, not the op, refuses integer and low-precision matrices."""
    if A._data.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    n, m = A._data.shape[-2:]
    if n != m:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are {n} by "
                           f"{m} matrices")
    _check_kernel(kernel, A)


def _check_same_dtype(fn, A, B, a="A", b="B"):
    if A._dtype is not B._dtype:
        raise RuntimeError(f"{fn}: Expected {a} and {b} to have the same dtype, but found {a} "
                           f"of type {_tname(A._dtype)} and {b} of type {_tname(B._dtype)} "
                           f"instead")


def _real_dtype(A):
    return A.real.dtype if A._dtype._category == 3 else A._dtype


def _complex_np(a):
    return np.result_type(a.dtype, np.complex64)


def _warn_once(flag, message):
    if not flag:
        warnings.warn(message, UserWarning, stacklevel=3)
        flag.append(True)
