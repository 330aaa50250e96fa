"""Linear solvers: inv, det, slogdet, solve, triangular and Cholesky solves, pinv, lstsq and the
*_ex variants; LinAlgError and the argument checks the linalg modules share."""
import numpy as np

from .._tensor import Tensor
from ._linalg_common import (_INV_SINGULAR, _singular_error, _check_square, _SOLVE_SINGULAR,
                             _check_batches_broadcast, _tname, _check_square_kernel, _with_out,
                             _TriangularSolve, _warn_once, _check_kernel, _check_same_dtype,
                             _eye_like, _LinalgLstsq, _check_matrix)
from ._utils import return_type, wrap_dim
from .registry import primitive, COMMON
from .pointwise import where


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


# ---------------------------------------------------------------------------- triangular solve
def _substitute(xp, A, B, upper, unitriangular=False):
    """X with A X = B for triangular A (batches broadcast): forward or back substitution, one
    row of X at a time, vectorised over the batch and B's columns."""
    n = A.shape[-1]
    shape = np.broadcast_shapes(A.shape[:-2], B.shape[:-2]) + B.shape[-2:]
    X = xp.zeros(shape, np.result_type(A.dtype, B.dtype))
    for i in (range(n - 1, -1, -1) if upper else range(n)):
        known = slice(i + 1, n) if upper else slice(0, i)
        row = B[..., i, :] - (A[..., i:i + 1, known] @ X[..., known, :])[..., 0, :]
        X[..., i, :] = row if unitriangular else row / A[..., i, i, None]
    return X


def _triangular(xp, A, B, upper, left, unitriangular):
    if left:
        return _substitute(xp, A, B, upper, unitriangular)
    # X A = B  <=>  A^T X^T = B^T, and A^T is triangular the other way
    At, Bt = xp.swapaxes(A, -1, -2), xp.swapaxes(B, -1, -2)
    return xp.swapaxes(_substitute(xp, At, Bt, not upper, unitriangular), -1, -2)


def _keep_triangle(G, upper, unitriangular):
    """The part of a gradient that reaches a triangular factor (its strict part if unit)."""
    offset = 1 if unitriangular else 0
    return G.triu(offset) if upper else G.tril(-offset)


@primitive("linalg_solve_triangular", node="LinalgSolveTriangularBackward0",
           save=("A", "result"), promote=COMMON)
def _solve_triangular(xp, A, B, *, upper, left=True, unitriangular=False):
    return _triangular(xp, A, B, upper, left, unitriangular)


def _solve_triangular_grads(A, X, grad, need_A, upper, left, unitriangular, transpose=False):
    """(grad_A, grad_B) of X = op(A)^{-1} B (left) or B op(A)^{-1} (right), where op(A) is A
    or, with transpose, A^T."""
    At = A.mT if transpose else A
    t_upper = upper != transpose                     # op(A) is upper triangular
    grad_B = _solve_triangular(At.mH, grad, upper=not t_upper, left=left,
                               unitriangular=unitriangular)
    grad_A = None
    if need_A:
        grad_At = -(grad_B @ X.mH) if left else -(X.mH @ grad_B)
        grad_A = _keep_triangle(grad_At.mT if transpose else grad_At, upper, unitriangular)
    return grad_A, grad_B


@_solve_triangular.derivative
def _(ctx, grad):
    grad_A, grad_B = _solve_triangular_grads(ctx.A, ctx.result, grad, ctx.needs_input_grad[0],
                                             ctx.upper, ctx.left, ctx.unitriangular)
    return grad_A, grad_B if ctx.needs_input_grad[1] else None


@_with_out("linalg.solve_triangular")
def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    for name, M in (("A", A), ("B", B)):
        if M._data.ndim < 2:
            raise RuntimeError(f"linalg.solve_triangular: The input tensor {name} must have at "
                               f"least 2 dimensions.")
    _check_square_kernel("linalg.solve_triangular", A, "triangular_solve_cpu")
    n, b = A._data.shape[-1], B._data.shape
    if (b[-2] if left else b[-1]) != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the "
                           f"equation {'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{b[-2]}x{b[-1]})")
    _check_batches_broadcast(b[:-2], A._data.shape[:-2])
    return _solve_triangular(A, B, upper=upper, left=left, unitriangular=unitriangular)


@primitive("triangular_solve", node="TriangularSolveBackward0", save=("A", "result"),
           n_outputs=2)
def _triangular_solve(xp, B, A, *, upper, transpose, unitriangular):
    At = xp.swapaxes(A, -1, -2) if transpose else A
    shape = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    X = _substitute(xp, At, B, upper != transpose, unitriangular)
    return X, xp.broadcast_to(A, shape + A.shape[-2:]).copy()


@_triangular_solve.derivative
def _(ctx, grad_X, grad_clone):
    # inputs (B, A), in torch.triangular_solve's order; the copy of A passes its gradient on
    need_B, need_A = ctx.needs_input_grad
    grad_B = grad_A = None
    if grad_X is not None:
        grad_A, grad_B = _solve_triangular_grads(ctx.A, ctx.result[0], grad_X, need_A,
                                                 ctx.upper, True, ctx.unitriangular,
                                                 ctx.transpose)
    if grad_clone is not None and need_A:
        grad_A = grad_clone if grad_A is None else grad_A + grad_clone
    return grad_B if need_B else None, grad_A


_triangular_solve_warned = []


def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False):
    """torch.triangular_solve (deprecated): solves A X = input; returns X and a copy of A."""
    _warn_once(_triangular_solve_warned, _TRIANGULAR_SOLVE_DEPRECATED)
    for M in (input, A):
        if M._data.ndim < 2:
            raise RuntimeError(f"torch.triangular_solve: Expected b to have at least 2 "
                               f"dimensions, but it has {input._data.ndim} dimensions instead"
                               if M is input else
                               f"torch.triangular_solve: Expected A to have at least 2 "
                               f"dimensions, but it has {A._data.ndim} dimensions instead")
    if input._dtype is not A._dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_tname(input._dtype)} and A of type {_tname(A._dtype)} instead.")
    return _TriangularSolve(*_triangular_solve(input, A, upper=upper, transpose=transpose,
                                               unitriangular=unitriangular))


_TRIANGULAR_SOLVE_DEPRECATED = (
    "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be "
    "removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its arguments "
    "reversed and does not return a copy of one of the inputs.\nX = torch.triangular_solve(B, "
    "A).solution\nshould be replaced with\nX = torch.linalg.solve_triangular(A, B). (Triggered "
    "internally at /__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp:2273.)")


# ---------------------------------------------------------------------------- cholesky solve
def _cholesky_factor_grad(grad_A, C, upper):
    """Gradient reaching the Cholesky factor C of A = C C^H (or C^H C when upper) from A's;
    as PyTorch, the whole matrix, though only a triangle of C is read."""
    sym = grad_A + grad_A.mH
    return C @ sym if upper else sym @ C


@primitive("cholesky_solve", node="CholeskySolveBackward0", save=("input2", "result"))
def _cholesky_solve(xp, input, input2, *, upper):
    C = input2
    Ch = xp.conj(xp.swapaxes(C, -1, -2))
    lower, upper_ = (Ch, C) if upper else (C, Ch)       # A = lower @ upper_
    return _substitute(xp, upper_, _substitute(xp, lower, input, False), True)


@_cholesky_solve.derivative
def _(ctx, grad):
    needs, C, X = ctx.needs_input_grad, ctx.input2, ctx.result
    grad_B = _cholesky_solve(grad, C, upper=ctx.upper)       # A is Hermitian: A^{-H} = A^{-1}
    grad_C = None
    if needs[1]:
        grad_C = _cholesky_factor_grad(-(grad_B @ X.mH), C, ctx.upper)
    return grad_B if needs[0] else None, grad_C


@_with_out("cholesky_solve")
def cholesky_solve(input, input2, upper=False):
    for name, M in (("b", input), ("u", input2)):
        if M._data.ndim < 2:
            raise RuntimeError(f"{name} should have at least 2 dimensions, but has "
                               f"{M._data.ndim} dimensions instead")
    _check_same_dtype("cholesky_solve", input, input2, "b", "A")
    n, b = input2._data.shape[-1], input._data.shape
    if input2._data.shape[-2] != n or b[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is "
                           f"{input2._data.shape[-2]} by {n} but each b matrix is {b[-2]} by "
                           f"{b[-1]}")
    _check_kernel("cholesky_solve_cpu", input)
    return _cholesky_solve(input, input2, upper=upper)


@primitive("cholesky_inverse", node="CholeskyInverseBackward0", save=("input", "result"))
def _cholesky_inverse(xp, input, *, upper):
    n = input.shape[-1]
    C_inv = _substitute(xp, input, xp.eye(n, dtype=input.dtype), upper)
    C_inv_h = xp.conj(xp.swapaxes(C_inv, -1, -2))
    # A^{-1} = (C C^H)^{-1} = C^{-H} C^{-1}; with upper, A = C^H C: A^{-1} = C^{-1} C^{-H}
    return C_inv @ C_inv_h if upper else C_inv_h @ C_inv


@_cholesky_inverse.derivative
def _(ctx, grad):
    R = ctx.result
    return _cholesky_factor_grad(-(R.mH @ grad @ R.mH), ctx.input, ctx.upper)


@_with_out("cholesky_inverse")
def cholesky_inverse(input, upper=False):
    _check_square_kernel("cholesky_inverse", input, "cholesky_inverse_out_cpu")
    return _cholesky_inverse(input, upper=upper)


# ---------------------------------------------------------------------------- pinv / lstsq
def _tolerance(a, s_max, atol, rtol):
    """PyTorch's cutoff for singular values: max(atol, rtol * s_max); rtol defaults to
    eps * max(m, n), or to zero when only a positive atol is given."""
    def value(t):
        return t._data if isinstance(t, Tensor) else t
    atol_v = 0.0 if atol is None else value(atol)
    if rtol is None:
        positive = atol is not None and bool(np.all(np.asarray(atol_v) > 0))
        rtol_v = 0.0 if positive else np.finfo(a.dtype).eps * max(a.shape[-2:])
    else:
        rtol_v = value(rtol)
    return np.maximum(np.asarray(atol_v)[..., None] if np.ndim(atol_v) else atol_v,
                      (np.asarray(rtol_v)[..., None] if np.ndim(rtol_v) else rtol_v) * s_max)


def _pinv_array(xp, A, atol, rtol, hermitian):
    if hermitian:
        L, V = xp.linalg.eigh(A)
        size = xp.abs(L)
        cutoff = _tolerance(A, size.max(-1, keepdims=True, initial=0), atol, rtol)
        inv = xp.where(size > cutoff, 1 / xp.where(size > cutoff, L, 1), 0)
        return (V * inv[..., None, :].astype(V.dtype)) @ xp.conj(xp.swapaxes(V, -1, -2))
    U, S, Vh = xp.linalg.svd(A, full_matrices=False)
    cutoff = _tolerance(A, S[..., :1], atol, rtol)
    inv = xp.where(S > cutoff, 1 / xp.where(S > cutoff, S, 1), 0).astype(A.dtype)
    return (xp.conj(xp.swapaxes(Vh, -1, -2)) * inv[..., None, :]) @ \
        xp.conj(xp.swapaxes(U, -1, -2))


@primitive("linalg_pinv", node="LinalgPinvBackward0", save=("A", "result"))
def _pinv(xp, A, *, atol=None, rtol=None, hermitian=False):
    return _pinv_array(xp, A, atol, rtol, hermitian)


def _pinv_backward(A, P, grad_P):
    """Gradient of P = pinv(A) (at constant rank):
    -P^H gP P^H + (I - A P)^H... written out: with R = I - A P and Q = I - P A,
    grad_A = -P^H gP P^H + R gP^H P P^H + P^H P gP^H Q."""
    Ph = P.mH
    R = _eye_like(A, A.shape[-2]) - A @ P
    Q = _eye_like(A, A.shape[-1]) - P @ A
    return -(Ph @ grad_P @ Ph) + R @ grad_P.mH @ P @ Ph + Ph @ P @ grad_P.mH @ Q


@_pinv.derivative
def _(ctx, grad):
    return _pinv_backward(ctx.A, ctx.result, grad)


@_with_out("linalg.pinv")
def pinv(A, *, atol=None, rtol=None, hermitian=False):
    if A._data.ndim < 2 or A._dtype._category < 2 or A._data.dtype.itemsize < 4:
        raise RuntimeError(f"linalg.pinv({_tname(A._dtype)}{{{list(A._data.shape)}}}): expected a "
                           f"tensor with 2 or more dimensions of float, double, cfloat or "
                           f"cdouble types")
    return _pinv(A, atol=atol, rtol=rtol, hermitian=hermitian)


def pinverse(input, rcond=1e-15):
    return pinv(input, rtol=rcond)


_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


@primitive("linalg_lstsq", node="LinalgLstsqBackward0", save=("self", "b", "result"), n_outputs=4,
           differentiable_outputs=2)
def _lstsq(xp, self, b, *, rcond, driver, vector):
    A, B = self, (b[..., None] if vector else b)
    m, n = A.shape[-2:]
    shape = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    U, S, Vh = xp.linalg.svd(A, full_matrices=False)
    cutoff = _tolerance(A, S[..., :1], None, rcond)
    keep = S > cutoff
    inv = xp.where(keep, 1 / xp.where(keep, S, 1), 0).astype(A.dtype)
    P = (xp.conj(xp.swapaxes(Vh, -1, -2)) * inv[..., None, :]) @ xp.conj(xp.swapaxes(U, -1, -2))
    X = xp.broadcast_to(P @ B, shape + (n, B.shape[-1]))
    rank = keep.sum(-1).astype(np.int64)
    real = S.dtype
    # residuals: squared norms of B - A X, only for tall A of full rank and not with gelsy
    if driver != "gelsy" and m > n and bool(xp.all(rank == n)):
        residuals = (xp.abs(xp.broadcast_to(B, shape + B.shape[-2:]) - A @ X) ** 2).sum(-2)
        residuals = residuals.astype(real)
    else:
        residuals = xp.empty((0,), real)
    if driver == "gels":
        rank = xp.empty((0,), np.int64)
    singular_values = S if driver in ("gelsd", "gelss") else xp.empty((0,), real)
    return (X[..., 0] if vector else X), residuals, rank, singular_values


@_lstsq.derivative
def _(ctx, grad_X, grad_residuals):
    """X = pinv(A) B: grad_B = pinv(A)^H gX, and A's gradient through pinv. The residuals
    |B - A X|^2 (at the optimum X) add 2 r g to B's gradient and -2 r g X^H to A's."""
    needs, A, B = ctx.needs_input_grad, ctx.self, ctx.b
    X = ctx.result[0]
    if ctx.vector:
        B, X = B[..., None], X[..., None]
        grad_X = None if grad_X is None else grad_X[..., None]
    grad_A = grad_B = None
    if grad_X is not None:
        P = _pinv(A)
        grad_A = _pinv_backward(A, P, grad_X @ B.mH) if needs[0] else None
        grad_B = P.mH @ grad_X
    if grad_residuals is not None and grad_residuals.numel():
        scaled_r = 2 * (B - A @ X) * grad_residuals[..., None, :]
        if needs[0]:
            grad_A = -(scaled_r @ X.mH) if grad_A is None else grad_A - scaled_r @ X.mH
        grad_B = scaled_r if grad_B is None else grad_B + scaled_r
    if not needs[1]:
        grad_B = None
    elif ctx.vector and grad_B is not None:
        grad_B = grad_B[..., 0]
    return grad_A, grad_B


def lstsq(A, B, rcond=None, *, driver=None):
    for name, M in (("A", A), ("B", B)):
        if M._data.ndim < 2 and (name == "A" or M._data.ndim < 1):
            raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    _check_float_or_double(A)
    _check_matrix("torch.linalg.lstsq", A)
    if A._dtype is not B._dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {_tname(A._dtype)} and other's dtype "
                           f"{_tname(B._dtype)}")
    if driver is not None and driver not in _LSTSQ_DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, "
                           "gelsy, gelsd, gelss)")
    vector = B._data.ndim == A._data.ndim - 1
    rows = B._data.shape[-1] if vector else B._data.shape[-2]
    if rows != A._data.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-1)"
                           if vector else "torch.linalg.lstsq: input.size(-2) should match "
                           "other.size(-2)")
    return _LinalgLstsq(*_lstsq(A, B, rcond=rcond, driver=driver or "gelsy", vector=vector))


def _check_float_or_double(A):
    if A._dtype._category < 2 or A._data.dtype.itemsize < 4:
        raise RuntimeError("This function doesn't handle types other than float and double")


@_with_out("linalg.tensorinv")
def tensorinv(A, ind=2):
    if ind <= 0:
        raise RuntimeError("Expected a strictly positive integer for 'ind', but got " + str(ind))
    out_shape, in_shape = tuple(A.shape[ind:]), tuple(A.shape[:ind])
    rows, cols = int(np.prod(in_shape)), int(np.prod(out_shape))
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    return inv(A.reshape(rows, cols)).reshape(out_shape + in_shape)


@_with_out("linalg.tensorsolve")
def tensorsolve(A, B, dims=None):
    if dims is not None:
        moved = [wrap_dim(d, A.dim()) for d in dims]
        A = A.movedim(moved, list(range(A.dim() - len(moved), A.dim())))
    result_shape = tuple(A.shape[B.dim():])
    rows, cols = B.numel(), int(np.prod(result_shape))
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim"
                           f":]) == prod(self.shape[:other.ndim]), but got {cols} != {rows}")
    return solve(A.reshape(rows, cols), B.reshape(rows)).reshape(result_shape)
