"""Matrix linear algebra: inv, det, slogdet/logdet, solve, trace, diag, cholesky, cross.

Forwards call the array module's `linalg` (NumPy's LAPACK, or CuPy's), never `np` directly.
Derivatives are written in ember ops so that they are differentiable again (double backward);
they are those of real matrices (complex inputs compute, but their gradients are untested).
Singular matrices raise `LinAlgError` (PyTorch's `torch._C._LinAlgError`, a RuntimeError) with
PyTorch's message, which names the first zero pivot of the LU factorisation.
"""

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
from .._device import CPU
from ._utils import return_type
from .registry import primitive


class _LinAlgError(RuntimeError):
    """A matrix that LAPACK could not factor (PyTorch's torch._C._LinAlgError)."""


_LinAlgError.__module__ = "ember._C"
LinAlgError = _LinAlgError


def _tname(dtype):
    from .._printing import scalar_type_name
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


# ---------------------------------------------------------------------------- inv
def _inverse_or_zeros(xp, a):
    """The inverse of each matrix; a matrix that is exactly singular gets zeros (det's
    gradient multiplies it by a determinant of zero)."""
    try:
        return xp.linalg.inv(a)
    except xp.linalg.LinAlgError:
        pass
    n = a.shape[-1]
    flat = a.reshape((-1, n, n))
    out = xp.zeros_like(flat)
    for i in range(flat.shape[0]):      # the rare singular batch: matrix by matrix
        try:
            out[i] = xp.linalg.inv(flat[i])
        except xp.linalg.LinAlgError:
            pass
    return out.reshape(a.shape)


@primitive("linalg_inv", node="LinalgInvExBackward0", save=("result",))
def _inv(xp, A, *, check=True):
    if A.size == 0:
        return A.copy()
    if not check:
        return _inverse_or_zeros(xp, A)
    try:
        return xp.linalg.inv(A)
    except xp.linalg.LinAlgError:
        raise _singular_error("linalg.inv", xp, A, _INV_SINGULAR) from None


@_inv.derivative
def _(ctx, grad):
    inv_h = ctx.result.mH        # the conjugate transpose: mT for real inputs
    return -(inv_h @ grad @ inv_h)


def inv(A):
    _check_square("linalg.inv", A)
    return _inv(A)


def inverse(input):
    return inv(input)


# ---------------------------------------------------------------------------- det
@primitive("linalg_det", node="LinalgDetBackward0", save=("A", "result"))
def _det(xp, A):
    return xp.asarray(xp.linalg.det(A))


@_det.derivative
def _(ctx, grad):
    # d det / dA = det * A^{-T}, conjugated for complex inputs; for a singular A this gives
    # zeros, as PyTorch does
    return (grad * ctx.result.conj())[..., None, None] * _inv(ctx.A, check=False).mH


def det(A):
    _check_square("linalg.det", A, low_precision="lu_cpu")
    return _det(A)


# ---------------------------------------------------------------------------- slogdet / logdet
_LinalgSlogdet = return_type("linalg_slogdet", ["sign", "logabsdet"])
_Slogdet = return_type("slogdet", ["sign", "logabsdet"])


@primitive("linalg_slogdet", node="LinalgSlogdetBackward0", save=("A", "result"),
           n_outputs=2)
def _slogdet(xp, A):
    sign, logabsdet = xp.linalg.slogdet(A)
    return xp.asarray(sign), xp.asarray(logabsdet)


@_slogdet.derivative
def _(ctx, grad_sign, grad_logabsdet):
    # d log det = tr(A^{-1} dA): its real part moves log|det|, its imaginary part the phase
    # of a complex sign (ctx.result[0]); the sign of a real matrix is piecewise constant
    grad = grad_logabsdet
    if grad_sign is not None and ctx.A.is_complex():
        phase = 1j * (grad_sign * ctx.result[0].conj()).imag
        grad = phase if grad is None else grad + phase
    if grad is None:
        return None
    return grad[..., None, None] * _inv(ctx.A, check=False).mH


def linalg_slogdet(A):
    _check_square("linalg.slogdet", A)
    return _LinalgSlogdet(*_slogdet(A))


def slogdet(input):
    """torch.slogdet: linalg.slogdet under the name of its own result type."""
    return _Slogdet(*linalg_slogdet(input))


def logdet(input):
    _check_square("logdet", input)
    from .pointwise import where
    sign, logabsdet = _slogdet(input)
    if input.is_complex():              # log det = log|det| + i arg(det)
        return logabsdet + sign.log()
    return where(sign < 0, float("nan"), logabsdet)   # log of a negative determinant


# ---------------------------------------------------------------------------- solve
@primitive("linalg_solve", node="LinalgSolveExBackward0", save=("A", "result"))
def _solve(xp, A, B, *, vector=False):
    if vector:
        B = B[..., None]
    shape = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    A = xp.broadcast_to(A, shape + A.shape[-2:])
    B = xp.broadcast_to(B, shape + B.shape[-2:])
    try:
        X = xp.linalg.solve(A, B)
    except xp.linalg.LinAlgError:
        raise _singular_error("torch.linalg.solve", xp, A, _SOLVE_SINGULAR) from None
    return X[..., 0] if vector else X


@_solve.derivative
def _(ctx, grad):
    needs, vector = ctx.needs_input_grad, ctx.vector
    grad_B = _solve(ctx.A.mH, grad, vector=vector)      # A^{-H} grad (A^{-T} when real)
    grad_A = None
    if needs[0]:
        X = ctx.result
        grad_A = -(grad_B[..., :, None] * X[..., None, :].conj() if vector
                   else grad_B @ X.mH)
    return grad_A, grad_B if needs[1] else None


def solve(A, B, *, left=True):
    _check_square("linalg.solve", A, low_precision="lu_cpu")
    if A._dtype is not B._dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found "
                           f"A of type {_tname(A._dtype)} and B of type {_tname(B._dtype)} "
                           f"instead")
    a, b = A._data.shape, B._data.shape
    # B is a (batch of) vector(s) when 1-D, or when it is A's shape less the last dim
    vector = len(b) == 1 or (len(b) == len(a) - 1 and b == a[:-1])
    rows, cols = (b[-1], 1) if vector else (b[-2], b[-1])
    if (rows if left else cols) != a[-1]:
        equation = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{equation} ({a[-2]}x{a[-1]} and {rows}x{cols})")
    _check_batches_broadcast(b[:-1] if vector else b[:-2], a[:-2])
    if left:
        return _solve(A, B, vector=vector)
    if vector:                          # only for 1x1 A: x a = b  <=>  a^T x = b
        return _solve(A.mT, B, vector=True)
    return _solve(A.mT, B.mT).mT        # X A = B  <=>  A^T X^T = B^T


def _check_batches_broadcast(batch_b, batch_a):
    """PyTorch's broadcast error for batch shapes (B's batch is "tensor a")."""
    from .registry import check_broadcast
    check_broadcast([Tensor._make(np.empty(batch_b + (0,)), D.float32, CPU),
                     Tensor._make(np.empty(batch_a + (0,)), D.float32, CPU)])


# ---------------------------------------------------------------------------- trace
@primitive("trace", node="TraceBackward0")
def _trace(xp, self):
    a = self
    if a.dtype.kind in "iub":
        a = a.astype(np.int64)       # integer traces are int64, as integer sums are
    return xp.asarray(xp.trace(a), dtype=a.dtype)


@_trace.derivative
def _(ctx, grad):
    from .creation import eye
    n, m = ctx.input_shape(0)
    return eye(n, m, dtype=grad.dtype, device=grad.device) * grad


def trace(input):
    if input._data.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim "
                           f"{input._data.ndim}")
    if input._dtype is D.bool_:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    return _trace(input)


# ---------------------------------------------------------------------------- diag
@primitive("diag_embed", node="DiagEmbedBackward0")
def _diag_embed(xp, self, *, offset):
    n = self.shape[0] + abs(offset)
    out = xp.zeros((n, n), dtype=self.dtype)
    rows = xp.arange(self.shape[0])
    out[rows + max(-offset, 0), rows + max(offset, 0)] = self
    return out


@_diag_embed.derivative
def _(ctx, grad):
    return grad.diagonal(ctx.offset)


@primitive("diagonal_copy", node="DiagonalBackward0_copy")
def _diagonal_copy(xp, self, *, offset):
    return xp.diagonal(self, offset).copy()


@_diagonal_copy.derivative
def _(ctx, grad):
    from .indexing import diagonal_backward
    return diagonal_backward(grad, ctx.input_shape(), ctx.offset, 0, 1)


def diag(input, diagonal=0):
    """A 1-D input becomes the `diagonal`-th diagonal of a square matrix; a 2-D input gives
    a copy of its `diagonal`-th diagonal."""
    ndim = input._data.ndim
    if ndim == 1:
        return _diag_embed(input, offset=diagonal)
    if ndim == 2:
        return _diagonal_copy(input, offset=diagonal)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {ndim}D")


# ---------------------------------------------------------------------------- cholesky
_NOT_POSITIVE_DEFINITE = ("The factorization could not be completed because the input is not "
                          "positive-definite (the leading minor of order {k} is not "
                          "positive-definite).")


def _failed_minor(xp, a):
    """(flat batch index, order) of the first leading minor where Cholesky (LAPACK potrf,
    column by column) meets a pivot that is not positive, or None. Error path only."""
    n = a.shape[-1]
    l = xp.tril(a.reshape((-1, n, n)))        # in a's dtype, as LAPACK computes it
    first = xp.zeros(l.shape[0], dtype=np.int64)
    for k in range(n):
        pivot = l[:, k, k] - xp.sum(l[:, k, :k] ** 2, axis=1)
        bad = ~(pivot > 0)                              # also NaN
        first = xp.where(bad & (first == 0), k + 1, first)
        root = xp.sqrt(xp.where(bad, 1, pivot))
        l[:, k, k] = root
        l[:, k + 1:, k] = (l[:, k + 1:, k] - xp.einsum("bij,bj->bi", l[:, k + 1:, :k],
                                                       l[:, k, :k])) / root[:, None]
    bad = xp.nonzero(first)[0]
    if len(bad) == 0:
        return None
    return int(bad[0]), int(first[bad[0]])


def _cholesky_forward(xp, A, upper, fn):
    try:
        L = xp.linalg.cholesky(A)        # reads the lower triangle, as PyTorch does
        failed = not bool(xp.all(xp.diagonal(L, 0, -2, -1) > 0))    # NaN gets past NumPy
    except xp.linalg.LinAlgError:
        failed = True
    if failed:
        where = _failed_minor(xp, A)
        batch, k = where if where is not None else (0, A.shape[-1])
        prefix = f"{fn}: (Batch element {batch}): " if A.ndim > 2 else f"{fn}: "
        raise _LinAlgError(prefix + _NOT_POSITIVE_DEFINITE.format(k=k)) from None
    # U = L^H (the conjugate transpose: complex inputs are Hermitian)
    return xp.conj(xp.swapaxes(L, -1, -2)) if upper else L


def _cholesky_backward(ctx, grad):
    """A = L L^H: grad_A = L^{-H} Phi L^{-1} with P = tril(L^H grad_L) and
    Phi = (P + tril(P, -1)^H) / 2: Hermitian off the diagonal, the diagonal halved but kept
    complex, so a complex grad_A is not exactly Hermitian (as in PyTorch); for real inputs
    this is the symmetrised gradient."""
    L, grad_L = ctx.result, grad
    if ctx.upper:
        L, grad_L = L.mH, grad_L.mH
    P = (L.mH @ grad_L).tril()
    phi = 0.5 * (P + P.tril(-1).mH)
    L_inv = _inv(L)
    return L_inv.mH @ phi @ L_inv


@primitive("linalg_cholesky", node="LinalgCholeskyExBackward0", save=("result",))
def _linalg_cholesky(xp, A, *, upper=False):
    return _cholesky_forward(xp, A, upper, "linalg.cholesky")


@primitive("cholesky", node="CholeskyBackward0", save=("result",))
def _cholesky_deprecated(xp, A, *, upper=False):
    return _cholesky_forward(xp, A, upper, "cholesky")


_linalg_cholesky.derivative(_cholesky_backward)
_cholesky_deprecated.derivative(_cholesky_backward)


def linalg_cholesky(A, *, upper=False):
    _check_square("linalg.cholesky", A, low_precision="cholesky_cpu")
    return _linalg_cholesky(A, upper=upper)


def cholesky(input, upper=False):
    """torch.cholesky, deprecated in favour of torch.linalg.cholesky (it warns once)."""
    if not _cholesky_warned:
        import warnings
        warnings.warn(_CHOLESKY_DEPRECATED, UserWarning, stacklevel=2)
        _cholesky_warned.append(True)
    if input._data.ndim < 2:
        raise RuntimeError("cholesky: The input tensor A must have at least 2 dimensions.")
    n, m = input._data.shape[-2:]
    if n != m:
        raise RuntimeError(f"cholesky: A must be batches of square matrices, but they are {n} "
                           f"by {m} matrices")
    _check_kernel_dtype(input)
    return _cholesky_deprecated(input, upper=upper)


def _check_kernel_dtype(A):
    if A._dtype._category < 2 or A._data.dtype.itemsize < 4:
        raise NotImplementedError(f"\"cholesky_cpu\" not implemented for '{_tname(A._dtype)}'")


_cholesky_warned = []
_CHOLESKY_DEPRECATED = (
    "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
    "future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\n"
    "L = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be replaced "
    "with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce equivalent results for "
    "all valid (symmetric positive definite) inputs. (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp:1765.)")


# ---------------------------------------------------------------------------- cross
@primitive("linalg_cross", node="LinalgCrossBackward0", save=("input", "other"))
def _cross(xp, input, other, *, dim):
    return xp.cross(input, other, axis=dim)


@_cross.derivative
def _(ctx, grad):
    needs, dim = ctx.needs_input_grad, ctx.dim       # (conj: no-op for real inputs)
    return (_cross(ctx.other.conj(), grad, dim=dim) if needs[0] else None,
            _cross(grad, ctx.input.conj(), dim=dim) if needs[1] else None)


def linalg_cross(input, other, *, dim=-1):
    from ._utils import wrap_dim
    if input._data.ndim != other._data.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if input._dtype is not other._dtype:
        raise RuntimeError(f"expected scalar type {_tname(input._dtype)} but found "
                           f"{_tname(other._dtype)}")
    if input._dtype is D.bool_:
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    axis = wrap_dim(dim, input._data.ndim)
    n, m = input._data.shape[axis], other._data.shape[axis]
    if n != 3 or m != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {n} "
                           f"and {m}")
    _check_batches_broadcast(input._data.shape, other._data.shape)
    return _cross(input, other, dim=axis)


def cross(input, other, dim=None):
    """torch.cross: without `dim`, the first dimension of size 3 of `input` (deprecated)."""
    if dim is None:
        if not _cross_warned:
            import warnings
            warnings.warn(_CROSS_NO_DIM, UserWarning, stacklevel=2)
            _cross_warned.append(True)
        sizes = input._data.shape
        if 3 not in sizes:
            raise RuntimeError("no dimension of size 3 in input")
        dim = sizes.index(3)
    return linalg_cross(input, other, dim=dim)


_cross_warned = []
_CROSS_NO_DIM = (
    "Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the "
    "dim explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to "
    "agree with that of linalg.cross in a future release. (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/Cross.cpp:63.)")
