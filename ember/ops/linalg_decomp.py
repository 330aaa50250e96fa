"""Matrix decompositions and what is built on them: svd, qr, eigh, eig, lu, triangular and
Cholesky solves, pinv, lstsq, matrix_exp, and torch.linalg's composite functions (matrix_norm,
matrix_rank, cond, multi_dot, vecdot, vander, tensorinv, tensorsolve, the *_ex variants).

Forwards call the array module's `linalg` where it has the decomposition (svd, qr, eigh, eig,
solve, inv); triangular solves, LU with partial pivoting and the matrix exponential are written
here, vectorised over the batch (a loop over the n rows/columns of one matrix, never over the
batch). Derivatives are written in ember ops, so they differentiate again (double backward),
for real and complex matrices (a loss that depends on the free phase of complex singular or
eigen vectors raises, as in PyTorch). Decompositions whose factors are unique only up to signs
(svd, eigh, eig, qr) give LAPACK's choice.
"""
import functools

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
from ..autograd import grad_mode
from .registry import primitive, COMMON
from .linalg_extra import (_check_square, _tname, _solve, _inv, _linalg_cholesky, _LinAlgError,
                           _failed_minor, _check_batches_broadcast)
from . import linalg_extra as _LX
from ._utils import return_type as _return_type


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
            from .pointwise import _out
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
    from .creation import eye
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


def _warn_once(flag, message):
    if not flag:
        import warnings
        warnings.warn(message, UserWarning, stacklevel=3)
        flag.append(True)


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


# ---------------------------------------------------------------------------- svd
@primitive("linalg_svd", node="LinalgSvdBackward0", save=("result",), n_outputs=3)
def _svd(xp, A, *, full_matrices):
    return tuple(xp.linalg.svd(A, full_matrices=full_matrices))


@_svd.derivative
def _(ctx, grad_U, grad_S, grad_Vh):
    U, S, Vh = ctx.result
    k = S.shape[-1]
    if ctx.full_matrices:               # only the first k singular vectors are determined
        U, Vh = U[..., :k], Vh[..., :k, :]
        grad_U = None if grad_U is None else grad_U[..., :k]
        grad_Vh = None if grad_Vh is None else grad_Vh[..., :k, :]
    return _svd_backward(U, S, Vh, grad_U, grad_S, grad_Vh)


def _svd_backward(U, S, Vh, grad_U, grad_S, grad_Vh):
    """Gradient of A = U diag(S) Vh (reduced). With F_ij = 1/(s_j^2 - s_i^2) off the diagonal:
    grad_A = U [skew(U^H gU) F S + S skew(V^H gV) F + diag(gS)] Vh, plus the parts of gU and
    gV outside the spans of U and V for tall or wide A."""
    m, n, k = U.shape[-2], Vh.shape[-1], S.shape[-1]
    if grad_U is None and grad_Vh is None:
        if grad_S is None:
            return None
        return (U * grad_S[..., None, :].to(U.dtype)) @ Vh
    S_ = S.to(U.dtype)
    S2 = S * S
    E = S2[..., None, :] - S2[..., :, None]          # s_j^2 - s_i^2
    E = E + _eye_like(E, k).to(E.dtype)              # (a diagonal of ones: masked off below)
    inner = 0
    if grad_U is not None:
        UhgU = U.mH @ grad_U
        inner = inner + (UhgU - UhgU.mH) * S_[..., None, :]
    if grad_Vh is not None:
        V, grad_V = Vh.mH, grad_Vh.mH
        VhgV = V.mH @ grad_V
        inner = inner + S_[..., :, None] * (VhgV - VhgV.mH)
    inner = _off_diagonal(inner / E.to(U.dtype))
    if grad_S is not None:
        inner = inner + grad_S.to(U.dtype).diag_embed()
    if U.is_complex():
        # the phase of each singular pair is free, so the loss must not depend on it; what
        # is left of the phases' imaginary parts enters the diagonal
        phase_U = UhgU.diagonal(0, -2, -1).imag if grad_U is not None else 0
        phase_V = VhgV.diagonal(0, -2, -1).imag if grad_Vh is not None else 0
        _check_gauge(phase_U + phase_V, [UhgU if grad_U is not None else None,
                                         VhgV if grad_Vh is not None else None], _SVD_PHASE)
        inner = inner + (1j * (phase_U - phase_V) / (2 * S)).diag_embed()
    grad_A = U @ inner @ Vh
    if grad_U is not None and m > k:
        grad_A = grad_A + ((grad_U - U @ UhgU) / S_[..., None, :]) @ Vh
    if grad_Vh is not None and n > k:
        grad_A = grad_A + U @ ((grad_V - V @ VhgV) / S_[..., None, :]).mH
    return grad_A


def _check_gauge(imag_diag, products, message):
    """Raise if a loss depends on the free phases of singular/eigen vectors: the imaginary
    parts of diag(V^H gV) must vanish, up to rounding relative to the products V^H gV."""
    if not isinstance(imag_diag, Tensor):
        return
    scale = max(float(abs(p._data).max(initial=0)) for p in products if p is not None)
    tol = np.sqrt(np.finfo(imag_diag._data.dtype).eps) * max(scale, 1.0)
    if bool((abs(imag_diag._data) > tol).any()):
        raise RuntimeError(message)


_SVD_PHASE = ("svd_backward: The singular vectors in the complex case are specified up to "
              "multiplication by e^{i phi}. The specified loss function depends on this phase "
              "term, making it ill-defined.")


def _check_svd(fn, A):
    _check_matrix(fn, A)
    _check_kernel("linalg_svd_cpu", A)


@_with_out("linalg.svd")
def svd(A, full_matrices=True, *, driver=None):
    """torch.linalg.svd: A = U diag(S) Vh, S descending."""
    _check_svd("linalg.svd", A)
    return _LinalgSvd(*_svd(A, full_matrices=full_matrices))


@_with_out("linalg.svdvals")
def svdvals(A, *, driver=None):
    _check_svd("linalg.svd", A)         # PyTorch names the op it calls
    if _recording(A):                   # the gradient needs the singular vectors
        return _svd(A, full_matrices=False)[1]
    xp = _xp(A)
    return Tensor._make(xp.linalg.svd(A._data, compute_uv=False),
                        _real_dtype(A), A._device)


def svd_old(input, some=True, compute_uv=True):
    """torch.svd (the old API): returns V rather than Vh; without compute_uv, zero U and V."""
    _check_svd("linalg.svd", input)
    if not compute_uv:
        from .creation import zeros
        m, n = input._data.shape[-2:]
        batch = tuple(input._data.shape[:-2])
        S = svdvals(input)
        return _Svd(zeros(batch + (m, m), dtype=input._dtype),
                    S, zeros(batch + (n, n), dtype=input._dtype))
    U, S, Vh = _svd(input, full_matrices=not some)
    return _Svd(U, S, Vh.mH)


def _xp(A):
    from .registry import xp_of
    return xp_of(A._device)


# ---------------------------------------------------------------------------- qr
@primitive("linalg_qr", node="LinalgQrBackward0", save=("input", "result"), n_outputs=2)
def _qr(xp, input, *, mode):
    if mode == "r":
        return xp.empty((0,), input.dtype), xp.linalg.qr(input, mode="r")
    return tuple(xp.linalg.qr(input, mode=mode))


@_qr.derivative
def _(ctx, grad_Q, grad_R):
    Q, R = ctx.result
    m, n = ctx.input_shape()[-2:]
    if ctx.mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                           "when mode='r'. Please use linalg.qr(A, mode='reduced') if you are "
                           "going to differentiate through linalg.qr.")
    if ctx.mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' "
                           "and nrows > ncols.")
    from .creation import zeros_like
    grad_Q = zeros_like(Q) if grad_Q is None else grad_Q
    grad_R = zeros_like(R) if grad_R is None else grad_R
    if m >= n:
        return _qr_backward_tall(Q, R, grad_Q, grad_R)
    # A = [X | Y] with X = Q R1 square: Y = Q R2 feeds gQ, then X's QR takes the rest
    A = ctx.input
    Y = A[..., m:]
    grad_Q = grad_Q + Y @ grad_R[..., m:].mH
    from .joining import cat
    grad_X = _qr_backward_tall(Q, R[..., :m], grad_Q, grad_R[..., :m])
    return cat([grad_X, Q @ grad_R[..., m:]], -1)


def _qr_backward_tall(Q, R, grad_Q, grad_R):
    """A = QR with m >= n: M = R gR^H - gQ^H Q; grad_A = (gQ + Q copyltu(M)) R^{-H}, where
    copyltu mirrors the lower triangle of M onto the upper."""
    M = R @ grad_R.mH - grad_Q.mH @ Q
    lower = M.tril(-1)
    M = lower + lower.mH + M.diagonal(0, -2, -1).real.to(M.dtype).diag_embed()
    B = grad_Q + Q @ M
    return _solve_triangular(R.mH, B, upper=False, left=False)      # B R^{-H}


@_with_out("linalg.qr")
def qr(A, mode="reduced"):
    _check_matrix("linalg.qr", A)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           f"'reduced' (default), 'r', or 'complete'")
    _check_kernel("geqrf_cpu", A)
    return _LinalgQr(*_qr(A, mode=mode))


_qr_warned = []


def qr_old(input, some=True):
    """torch.qr (deprecated for linalg.qr): `some` picks the reduced factorisation."""
    _warn_once(_qr_warned, _QR_DEPRECATED)
    _check_matrix("linalg.qr", input)
    _check_kernel("geqrf_cpu", input)
    return _Qr(*_qr(input, mode="reduced" if some else "complete"))


_QR_DEPRECATED = (
    "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch "
    "release.\nThe boolean parameter 'some' has been replaced with a string parameter 'mode'.\n"
    "Q, R = torch.qr(A, some)\nshould be replaced with\nQ, R = torch.linalg.qr(A, 'reduced' if "
    "some else 'complete') (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
    "BatchLinearAlgebra.cpp:2505.)")


# ---------------------------------------------------------------------------- eigh
@primitive("linalg_eigh", node="LinalgEighBackward0", save=("result",), n_outputs=2)
def _eigh(xp, A, *, UPLO):
    L, V = xp.linalg.eigh(A, UPLO=UPLO)
    return L, V


@_eigh.derivative
def _(ctx, grad_L, grad_V):
    L, V = ctx.result
    if grad_V is None:
        if grad_L is None:
            return None
        return (V * grad_L[..., None, :].to(V.dtype)) @ V.mH
    # grad_A = V (diag(gL) + (V^H gV) / E) V^H, E_ij = l_j - l_i, made Hermitian
    VhgV = V.mH @ grad_V
    if V.is_complex():
        _check_gauge(VhgV.diagonal(0, -2, -1).imag, [VhgV],
                     _EIG_PHASE.replace("eig_", "eigh_"))
    E = L[..., None, :] - L[..., :, None]
    E = E + _eye_like(E, E.shape[-1]).to(E.dtype)
    inner = _off_diagonal(VhgV / E.to(V.dtype))
    if grad_L is not None:
        inner = inner + grad_L.to(V.dtype).diag_embed()
    grad_A = V @ inner @ V.mH
    return 0.5 * (grad_A + grad_A.mH)


def _check_uplo(fn, UPLO):
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")


def _check_hermitian(fn, A):
    """eigh's checks: integer matrices reach its kernel (NotImplementedError), as in PyTorch."""
    if A._dtype._category < 2:
        if A._data.ndim < 2:
            raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
        raise NotImplementedError(f"\"linalg_eigh_cpu\" not implemented for "
                                  f"'{_tname(A._dtype)}'")
    _check_square(fn, A, low_precision="linalg_eigh_cpu")


@_with_out("linalg.eigh")
def eigh(A, UPLO="L"):
    _check_hermitian("linalg.eigh", A)
    _check_uplo("linalg.eigh", UPLO)
    return _LinalgEigh(*_eigh(A, UPLO=UPLO))


@_with_out("linalg.eigvalsh")
def eigvalsh(A, UPLO="L"):
    _check_hermitian("linalg.eigh", A)      # PyTorch names the op it calls
    _check_uplo("linalg.eigvalsh", UPLO)
    if _recording(A):
        return _eigh(A, UPLO=UPLO)[0]
    return Tensor._make(_xp(A).linalg.eigvalsh(A._data, UPLO=UPLO), _real_dtype(A), A._device)


# ---------------------------------------------------------------------------- eig
@primitive("linalg_eig", node="LinalgEigBackward0", save=("result",), n_outputs=2)
def _eig(xp, A):
    L, V = xp.linalg.eig(A)
    c = _complex_np(A)
    return L.astype(c, copy=False), V.astype(c, copy=False)


@_eig.derivative
def _(ctx, grad_L, grad_V):
    # A = V diag(L) V^{-1}, V's columns of unit norm:
    # grad_A = V^{-H} (diag(gL) + conj(F) * (V^H gV - V^H V Re(diag(V^H gV)))) V^H
    L, V = ctx.result
    inner = 0
    if grad_V is not None:
        VhgV = V.mH @ grad_V
        diag = VhgV.diagonal(0, -2, -1)
        _check_gauge(diag.imag, [VhgV], _EIG_PHASE)
        inner = VhgV - (V.mH @ V) * diag.real.to(V.dtype)[..., None, :]
        E = L[..., None, :] - L[..., :, None]
        E = E + _eye_like(E, E.shape[-1])
        inner = _off_diagonal(inner / E.conj())
    if grad_L is not None:
        inner = inner + grad_L.diag_embed()
    grad_A = _solve(V.mH, inner @ V.mH)
    return grad_A.real if ctx.input_dtype()._category < 3 else grad_A       # a real A


_EIG_PHASE = ("linalg_eig_backward: The eigenvectors in the complex case are specified up to "
              "multiplication by e^{i phi}. The specified loss function depends on this "
              "quantity, so it is ill-defined.")


def _check_eig(fn, A):
    if A._dtype._category < 2:
        raise RuntimeError(f"Unknown Complex ScalarType for {_tname(A._dtype)}")
    _check_square(fn, A, low_precision="linalg_eig_out_cpu")


@_with_out("linalg.eig")
def eig(A):
    _check_eig("linalg.eig", A)
    return _LinalgEig(*_eig(A))


@_with_out("linalg.eigvals")
def eigvals(A):
    _check_eig("linalg.eigvals", A)
    if _recording(A):
        return _eig(A)[0]
    a = A._data
    return Tensor._make(_xp(A).linalg.eigvals(a).astype(_complex_np(a), copy=False),
                        D._FROM_NUMPY[_complex_np(a)], A._device)


# ---------------------------------------------------------------------------- householder
_Geqrf = _return_type("geqrf", ["a", "tau"])


@primitive("geqrf", node="GeqrfBackward0", n_outputs=2)
def _geqrf(xp, input):
    h, tau = xp.linalg.qr(input, mode="raw")        # h: LAPACK's packed factor, transposed
    return xp.swapaxes(h, -1, -2).copy(), tau


@_geqrf.derivative
def _(ctx, grad_a, grad_tau):
    raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


@_with_out("geqrf")
def geqrf(input):
    """LAPACK's packed QR: R above the diagonal, the Householder vectors below, and tau."""
    if input._data.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    _check_kernel("geqrf_cpu", input)
    return _Geqrf(*_geqrf(input))


def _reflectors(xp, A, k):
    """The Householder vectors v_i (columns of A below the diagonal, 1 on it), m x k."""
    V = xp.tril(A[..., :, :k], -1)
    V[..., xp.arange(k), xp.arange(k)] = 1
    return V


@primitive("linalg_householder_product", node="LinalgHouseholderProductBackward0",
           save=("input", "tau"))
def _householder_product(xp, input, tau):
    m, n = input.shape[-2:]
    k = tau.shape[-1]
    V = _reflectors(xp, input, k)
    Q = xp.broadcast_to(xp.eye(m, n, dtype=input.dtype), input.shape).copy()
    for i in range(k - 1, -1, -1):              # Q = H_0 (H_1 (... (H_{k-1} E)))
        v = V[..., :, i:i + 1]
        Q -= tau[..., i, None, None] * (v @ (xp.conj(xp.swapaxes(v, -1, -2)) @ Q))
    return Q


@_householder_product.derivative
def _(ctx, grad):
    """Q = H_0 ... H_{k-1} E with H_i = I - tau_i v_i v_i^H. With G_i = P_i^H gQ S_i^H, P_i the
    product before H_i and S_i the one after: g tau_i = -v_i^H G_i v_i and
    g v_i = -(conj(tau_i) G_i v_i + tau_i G_i^H v_i), kept below the diagonal of A."""
    from .joining import stack, cat
    A, tau = ctx.input, ctx.tau
    m, n = A.shape[-2:]
    k = tau.shape[-1]
    V = A[..., :, :k].tril(-1) + _eye_like(A, m)[:, :k]
    eye = _eye_like(A, m)
    H = [eye - tau[..., i, None, None] * (V[..., :, i:i + 1] @ V[..., :, i:i + 1].mH)
         for i in range(k)]
    suffix = [None] * k                          # S_i = H_{i+1} ... H_{k-1} E
    S = eye[:, :n]
    for i in range(k - 1, -1, -1):
        suffix[i] = S
        S = H[i] @ S
    grads_tau, grads_v = [], []
    P = eye
    for i in range(k):
        G = P.mH @ grad @ suffix[i].mH
        v = V[..., :, i:i + 1]
        grads_tau.append(-(v.mH @ G @ v)[..., 0, 0])
        t = tau[..., i, None, None]
        grads_v.append(-(t.conj() * (G @ v) + t * (G.mH @ v))[..., 0])
        P = P @ H[i]
    needs = ctx.needs_input_grad
    grad_A = grad_tau = None
    if needs[0]:
        grad_V = stack(grads_v, -1).tril(-1)
        if n > k:
            grad_V = cat([grad_V, grad_V.new_zeros(tuple(grad_V.shape[:-1]) + (n - k,))], -1)
        grad_A = grad_V
    if needs[1]:
        grad_tau = stack(grads_tau, -1)
    return grad_A, grad_tau


@_with_out("linalg.householder_product")
def householder_product(A, tau):
    fn = "torch.linalg.householder_product"
    if A._data.ndim < 2:
        raise RuntimeError(f"{fn}: input must have at least 2 dimensions.")
    m, n = A._data.shape[-2:]
    if m < n:
        raise RuntimeError(f"{fn}: input.shape[-2] must be greater than or equal to "
                           f"input.shape[-1]")
    if tau._data.ndim != A._data.ndim - 1:
        raise RuntimeError(f"{fn}: Expected tau to have one dimension less than input, but got "
                           f"tau.ndim equal to {tau._data.ndim} and input.ndim is equal to "
                           f"{A._data.ndim}")
    if n < tau._data.shape[-1]:
        raise RuntimeError(f"{fn}: input.shape[-1] must be greater than or equal to "
                           f"tau.shape[-1]")
    if tau._data.shape[:-1] != A._data.shape[:-2]:
        raise RuntimeError(f"{fn}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau._data.shape[:-1])}")
    if tau._dtype is not A._dtype:
        raise RuntimeError(f"{fn}: tau dtype {_tname(tau._dtype)} does not match input dtype "
                           f"{_tname(A._dtype)}")
    _check_kernel("orgqr_cpu", A)
    return _householder_product(A, tau)


def orgqr(input, tau):
    return householder_product(input, tau)


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


# ---------------------------------------------------------------------------- rank, norms, cond
@_with_out("linalg.matrix_rank")
def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None):
    _check_float_or_double(A)
    if A._data.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at "
                           "least 2 dimensions.")
    _check_matrix("torch.linalg.matrix_rank", A)
    if tol is not None:                 # the old spelling of atol
        atol, rtol = tol, 0.0
    xp, a = _xp(A), A._data
    if hermitian:
        S = xp.abs(xp.linalg.eigvalsh(a))
        s_max = S.max(-1, keepdims=True, initial=0)
    else:
        S = xp.linalg.svd(a, compute_uv=False)
        s_max = S[..., :1] if S.shape[-1] else xp.zeros(S.shape[:-1] + (1,), S.dtype)
    rank = (S > _tolerance(a, s_max, atol, rtol)).sum(-1).astype(np.int64)
    return Tensor._make(xp.asarray(rank), D.int64, A._device)


def _check_norm_dtype(fn, A, dtype):
    """The dtype= of a norm: float or complex as A is, and no narrower than A's."""
    if dtype._category < 2:
        raise RuntimeError(f"{fn}: dtype should be floating point or complex, but got "
                           f"{_tname(dtype)}")
    if (dtype._category == 3) != (A._dtype._category == 3):
        kind = "complex" if A._dtype._category == 3 else "real"
        raise RuntimeError(f"{fn}: dtype should be {kind} for {kind} inputs, but got "
                           f"{_tname(dtype)}")
    if D.promote_types(A._dtype, dtype) is not dtype:
        raise RuntimeError(f"{fn}: the dtype of the input ({_tname(A._dtype)}) should be "
                           f"convertible without narrowing to the specified dtype "
                           f"({_tname(dtype)})")


@_with_out("linalg.matrix_norm")
def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    from .reduction import vector_norm
    from ._utils import wrap_dim
    supported = ("fro", "nuc") if isinstance(ord, str) else (1, -1, 2, -2, float("inf"),
                                                            float("-inf"))
    if ord not in supported:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")   # checked first
    _check_matrix("linalg.matrix_norm", A)
    if ord in ("nuc", 2, -2) and A._data.dtype.itemsize < 4:   # these need an SVD
        raise RuntimeError(f"linalg.matrix_norm: Low precision dtypes not supported. Got "
                           f"{_tname(A._dtype)}")
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(map(str, dim))}")
    if dtype is not None:
        _check_norm_dtype("linalg.matrix_norm", A, dtype)
        A = A.to(dtype)
    d0, d1 = (wrap_dim(d, A._data.ndim) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, "
                           f"{dim[1]})")
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        S = svdvals(A.movedim((d0, d1), (-2, -1)))
        if ord == 2 and S.shape[-1] == 0:
            result = S.sum(-1)                      # an empty matrix's norm is 0
        else:
            result = S.sum(-1) if ord == "nuc" else S.amax(-1) if ord == 2 else S.amin(-1)
        if keepdim:
            for d in sorted((d0, d1)):
                result = result.unsqueeze(d)
        return result
    # 1: the largest column sum of |A|; inf: the largest row sum
    summed, picked = (d0, d1) if abs(ord) == 1 else (d1, d0)
    sums = A.abs().sum(summed, keepdim=keepdim)
    if not keepdim and summed < picked:
        picked -= 1
    if ord < 0:
        return sums.amin(picked, keepdim=keepdim)
    # a max of absolute values: 0 (its identity) over an empty dimension, as in PyTorch
    return sums.amax(picked, keepdim=keepdim) if sums.shape[picked] else \
        sums.sum(picked, keepdim=keepdim)


@_with_out("linalg.norm")
def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """torch.linalg.norm: a matrix norm for a string ord, a 2-tuple dim, or a 2-D A with an
    ord; otherwise a vector norm (of the flattened A when dim is None)."""
    from .reduction import vector_norm
    if dim is not None and not isinstance(dim, (tuple, list)):
        dim = (dim,)
    if dim is not None and len(dim) not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. "
                           f"Got {list(dim)}")
    if ord is not None and dim is None and A._data.ndim not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must "
                           f"be 1D or 2D. Got {A._data.ndim}D.")
    matrix = isinstance(ord, str) or (dim is not None and len(dim) == 2) or \
        (dim is None and ord is not None and A._data.ndim == 2)
    if matrix and ord is not None:
        return matrix_norm(A, ord, (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


@_with_out("linalg.cond")
def cond(A, p=None):
    if A._data.ndim < 2:
        where = f"linalg.cond(ord={p}): The input tensor A" if isinstance(p, str) else \
            "linalg.cond: The input tensor"
        raise RuntimeError(f"{where} must have at least 2 dimensions.")
    if A._data.shape[-1] == 0 and A._data.shape[-2] == 0:     # empty matrices: 0, as PyTorch
        from .creation import zeros
        return zeros(A._data.shape[:-2], dtype=_real_dtype(A), device=A.device)
    if p in (None, 2, -2):
        S = svdvals(A)
        return S[..., 0] / S[..., -1] if p != -2 else S[..., -1] / S[..., 0]
    n, m = A._data.shape[-2:]
    if n != m:
        raise RuntimeError(f"linalg.cond(ord={p}): A must be batches of square matrices, but "
                           f"they are {n} by {m} matrices")
    # the dtype checks of the SVD or the inverse it computes
    _check_svd("linalg.svd", A) if p == "nuc" else _check_square("linalg.inv", A)
    try:
        return matrix_norm(A, p) * matrix_norm(_LX.inv(A), p)
    except _LinAlgError:
        pass
    # singular matrices have an infinite condition number
    from .pointwise import where
    inverse, info = inv_ex(A)
    return where(info > 0, float("inf"), matrix_norm(A, p) * matrix_norm(inverse, p))


# ---------------------------------------------------------------------------- matrix_exp
# Pade(13) coefficients and the 1-norm up to which it is accurate in double precision
_PADE13 = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
           129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
           40840800., 960960., 16380., 182., 1.)
_THETA13 = 5.371920351148152


def _expm(xp, A):
    """exp of each matrix by scaling and squaring with a Pade(13) approximant (in float64 or
    complex128), each matrix scaled by its own power of two."""
    a = A.astype(np.result_type(A.dtype, np.float64))
    n = a.shape[-1]
    norm1 = xp.abs(a).sum(-2).max(-1, initial=0)
    finite = xp.isfinite(norm1)
    ratio = xp.where(finite, norm1, 0) / _THETA13
    s = xp.where(ratio > 1, xp.ceil(xp.log2(xp.where(ratio > 1, ratio, 1))), 0).astype(np.int64)
    a = a / (2.0 ** s)[..., None, None]
    b = _PADE13
    eye = xp.eye(n, dtype=a.dtype)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2
             + b[1] * eye)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + \
        b[0] * eye
    r = xp.linalg.solve(v - u, v + u)
    for i in range(int(s.max(initial=0))):
        r = xp.where((s > i)[..., None, None], r @ r, r)
    return xp.where(finite[..., None, None], r, np.nan).astype(A.dtype)


@primitive("linalg_matrix_exp", node="LinalgMatrixExpBackward0", save=("self",))
def _matrix_exp(xp, self):
    if self.size == 0:
        return self.copy()
    return _expm(xp, self)


@_matrix_exp.derivative
def _(ctx, grad):
    # the upper-right block of exp([[A^H, G], [0, A^H]])
    from .joining import cat
    Ah = ctx.self.mH
    n = Ah.shape[-1]
    block = cat([cat([Ah, grad], -1), cat([grad * 0, Ah], -1)], -2)
    return _matrix_exp(block)[..., :n, n:]


def matrix_exp(A):
    """(float16 and bfloat16 are computed in double precision: PyTorch gives NaN and inf.)"""
    _check_matrix("linalg.matrix_exp", A)
    n, m = A._data.shape[-2:]
    if n != m:
        raise RuntimeError(f"linalg.matrix_exp: A must be batches of square matrices, but they "
                           f"are {n} by {m} matrices")
    return _matrix_exp(A)


# ---------------------------------------------------------------------------- lu
def _lu_arrays(xp, A):
    """LU with partial pivoting (LAPACK getrf's choices) of each m x n matrix, vectorised over
    the batch: (LU packed, 1-based int32 pivots, int32 info = first zero pivot or 0)."""
    m, n = A.shape[-2:]
    k = min(m, n)
    batch = A.shape[:-2]
    lu = A.reshape((int(np.prod(batch)), m, n)).copy()
    rows = xp.arange(lu.shape[0])
    pivots = xp.empty((lu.shape[0], k), np.int32)
    info = xp.zeros(lu.shape[0], np.int32)
    for j in range(k):
        column = lu[:, j:, j]
        size = xp.abs(column.real) + xp.abs(column.imag) if column.dtype.kind == "c" else \
            xp.abs(column)                          # LAPACK's |re| + |im| for complex
        p = j + xp.argmax(size, axis=1)
        pivots[:, j] = p + 1
        swapped = lu[rows, p].copy()
        lu[rows, p] = lu[:, j]
        lu[:, j] = swapped
        pivot = lu[:, j, j]
        zero = pivot == 0
        info = xp.where(zero & (info == 0), j + 1, info).astype(np.int32)
        factors = xp.where(zero[:, None], lu[:, j + 1:, j],
                           lu[:, j + 1:, j] / xp.where(zero, 1, pivot)[:, None])
        lu[:, j + 1:, j] = factors
        lu[:, j + 1:, j + 1:] -= factors[:, :, None] * lu[:, j, None, j + 1:]
    return lu.reshape(A.shape), pivots.reshape(batch + (k,)), info.reshape(batch)


def _permutation(xp, pivots, m, dtype):
    """P with A = P L U from LAPACK's sequence of row swaps."""
    k = pivots.shape[-1]
    flat = pivots.reshape((int(np.prod(pivots.shape[:-1])), k)).astype(np.int64) - 1
    rows = xp.arange(flat.shape[0])
    perm = xp.broadcast_to(xp.arange(m), (flat.shape[0], m)).copy()
    for j in range(k):
        target = flat[:, j]
        here = perm[:, j].copy()
        perm[:, j] = perm[rows, target]
        perm[rows, target] = here
    # row i of P^T A is row perm[i] of A, so P[perm[i], i] = 1
    P = xp.zeros((flat.shape[0], m, m), dtype)
    P[rows[:, None], perm, xp.arange(m)] = 1
    return P.reshape(pivots.shape[:-1] + (m, m))


def _unpack_arrays(xp, LU, pivots, unpack_data=True, unpack_pivots=True):
    m, n = LU.shape[-2:]
    k = min(m, n)
    P = _permutation(xp, pivots, m, LU.dtype) if unpack_pivots else xp.empty((0,), LU.dtype)
    if not unpack_data:
        return P, xp.empty((0,), LU.dtype), xp.empty((0,), LU.dtype)
    L = xp.tril(LU[..., :, :k], -1) + xp.eye(m, k, dtype=LU.dtype)
    U = xp.triu(LU[..., :k, :])
    return P, L, U


@primitive("linalg_lu_factor_ex", node="LinalgLuFactorExBackward0", save=("result", "result1"),
           n_outputs=3, differentiable_outputs=1)
def _lu_factor(xp, A, *, pivot=True):
    return _lu_arrays(xp, A)


@_lu_factor.derivative
def _(ctx, grad_LU):
    LU, pivots = ctx.result[0], ctx.result1          # (pivots: an array)
    m, n = LU.shape[-2:]
    k = min(m, n)
    from .creation import eye
    L = LU[..., :, :k].tril(-1) + eye(m, k, dtype=LU._dtype, device=LU._device)
    return _lu_backward(L, LU[..., :k, :].triu(), _perm_tensor(LU, pivots),
                        grad_LU[..., :, :k].tril(-1), grad_LU[..., :k, :].triu())


def _perm_tensor(LU, pivots):
    xp = _xp(LU)
    return Tensor._make(_permutation(xp, pivots, LU.shape[-2], LU._data.dtype), LU._dtype,
                        LU._device)


def _lu_backward(L, U, P, grad_L, grad_U):
    """Gradient of A = P L U, L m x k unit lower, U k x n upper. Square: grad_A =
    P L^{-H} (tril(L^H gL, -1) + triu(gU U^H)) U^{-H}. A wide A = P L [U1 U2] adds
    U2 = L^{-1} P^T A2; a tall A = P [L1; L2] U adds L2 = (P^T A)_2 U^{-1}."""
    from .joining import cat
    m, n = L.shape[-2], U.shape[-1]

    def square(L, U, grad_L, grad_U):               # without P
        inner = (L.mH @ grad_L).tril(-1) + (grad_U @ U.mH).triu()
        inner = _solve_triangular(L.mH, inner, upper=True, unitriangular=True)
        return _solve_triangular(U.mH, inner, upper=False, left=False)
    if m == n:
        return P @ square(L, U, grad_L, grad_U)
    if m < n:
        U1, U2, grad_U2 = U[..., :m], U[..., m:], grad_U[..., m:]
        grad_A2 = _solve_triangular(L.mH, grad_U2, upper=True, unitriangular=True)
        grad_L = grad_L - grad_A2 @ U2.mH
        return P @ cat([square(L, U1, grad_L, grad_U[..., :m]), grad_A2], -1)
    L1, L2, grad_L2 = L[..., :n, :], L[..., n:, :], grad_L[..., n:, :]
    grad_A2 = _solve_triangular(U.mH, grad_L2, upper=False, left=False)
    grad_U = grad_U - L2.mH @ grad_A2
    return P @ cat([square(L1, U, grad_L[..., :n, :], grad_U), grad_A2], -2)


def _lu_factor_ex(A, pivot):
    if A._data.ndim < 2:
        raise RuntimeError(f"torch.lu_factor: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(A._data.shape)} instead")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    _check_kernel("lu_cpu", A)
    return _lu_factor(A, pivot=pivot)


@_with_out("linalg.lu_factor_ex")
def lu_factor_ex(A, *, pivot=True, check_errors=False):
    LU, pivots, info = _lu_factor_ex(A, pivot)
    if check_errors:
        _raise_lu_info("torch.linalg.lu_factor_ex", info)
    return _LinalgLuFactorEx(LU, pivots, info)


def _raise_lu_info(fn, info):
    bad = np.nonzero(np.asarray(info._data).reshape(-1))[0]
    if len(bad):
        k = int(info._data.reshape(-1)[bad[0]])
        prefix = f"{fn}: (Batch element {int(bad[0])}): " if info._data.ndim else f"{fn}: "
        raise RuntimeError(prefix + f"U[{k},{k}] is zero and using it on lu_solve would result "
                           f"in a division by zero. If you still want to perform the "
                           f"factorization, consider calling linalg.lu(A, pivot) or "
                           f"linalg.lu_factor_ex(A, pivot)")


@_with_out("linalg.lu_factor")
def lu_factor(A, *, pivot=True):
    LU, pivots, info = _lu_factor_ex(A, pivot)
    _raise_lu_info("torch.linalg.lu_factor", info)
    return _LinalgLuFactor(LU, pivots)


@primitive("linalg_lu", node="LinalgLuBackward0", save=("result", "result2"), n_outputs=3,
           differentiable_outputs=2)
def _lu(xp, A, *, pivot=True):
    """(L, U, P): P last, as the one output without a gradient."""
    LU, pivots, _ = _lu_arrays(xp, A)
    P, L, U = _unpack_arrays(xp, LU, pivots)
    return L, U, P


@_lu.derivative
def _(ctx, grad_L, grad_U):
    (L, U), P = ctx.result, ctx.result2
    P = Tensor._make(P, L._dtype, L._device)
    grad_L = L * 0 if grad_L is None else grad_L
    grad_U = U * 0 if grad_U is None else grad_U
    return _lu_backward(L, U, P, grad_L, grad_U)


@_with_out("linalg.lu")
def lu(A, *, pivot=True):
    if A._data.ndim < 2:
        raise RuntimeError("linalg.lu: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A._data.shape)} instead")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    _check_kernel("lu_cpu", A)
    L, U, P = _lu(A, pivot=pivot)
    return _LinalgLu(P, L, U)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """P, L, U from a packed LU factorisation (L and U differentiable, through tril/triu)."""
    xp = _xp(LU_data)
    m, n = LU_data._data.shape[-2:]
    k = min(m, n)
    P, _, _ = _unpack_arrays(xp, LU_data._data, LU_pivots._data, False, unpack_pivots)
    P = Tensor._make(P, LU_data._dtype, LU_data._device)
    if not unpack_data:
        empty = Tensor._make(xp.empty((0,), LU_data._data.dtype), LU_data._dtype,
                             LU_data._device)
        return _LuUnpack(P, empty, empty)
    from .creation import eye
    L = LU_data[..., :, :k].tril(-1) + eye(m, k, dtype=LU_data._dtype, device=LU_data._device)
    return _LuUnpack(P, L, LU_data[..., :k, :].triu())


@primitive("linalg_lu_solve", node="LinalgLuSolveBackward0", save=("LU", "pivots", "result"))
def _lu_solve(xp, LU, pivots, B, *, adjoint=False):
    P, L, U = _unpack_arrays(xp, LU, pivots)
    if adjoint:     # A^H X = B with A^H = U^H L^H P^T
        H = lambda M: xp.conj(xp.swapaxes(M, -1, -2))          # noqa: E731
        Y = _substitute(xp, H(L), _substitute(xp, H(U), B, False), True, True)
        return P @ Y
    Y = _substitute(xp, L, xp.swapaxes(P, -1, -2) @ B, False, True)
    return _substitute(xp, U, Y, True)


@_lu_solve.derivative
def _(ctx, grad):
    needs, LU, X = ctx.needs_input_grad, ctx.LU, ctx.result
    pivots = ctx.pivots
    grad_B = _lu_solve(LU, pivots, grad, adjoint=not ctx.adjoint)
    grad_LU = None
    if needs[0]:
        grad_A = -(grad_B @ X.mH) if not ctx.adjoint else -(X @ grad_B.mH)
        P, L, U = _perm_tensor(LU, pivots._data), LU.tril(-1) + _eye_like(LU), LU.triu()
        Pt_grad = P.mT @ grad_A
        grad_LU = (Pt_grad @ U.mH).tril(-1) + (L.mH @ Pt_grad).triu()
    return grad_LU, None, grad_B if needs[2] else None


@_with_out("linalg.lu_solve")
def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    _check_square("linalg.lu_solve", LU)
    _check_same_dtype("linalg.lu_solve", LU, B, "LU", "B")
    n, b = LU._data.shape[-1], B._data.shape
    if (b[-2] if left else b[-1]) != n:
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {b[-2]}x{b[-1]})")
    if left:
        X = _lu_solve(LU, pivots, B, adjoint=adjoint)
    else:           # X A = B  <=>  A^H X^H = B^H
        X = _lu_solve(LU, pivots, B.mH, adjoint=not adjoint).mH
    return X


_lu_solve_warned = []
_lu_warned = []


def lu_solve_old(b, LU_data, LU_pivots):
    """torch.lu_solve (deprecated): arguments in the old order."""
    _warn_once(_lu_solve_warned, _LU_SOLVE_DEPRECATED)
    return lu_solve(LU_data, LU_pivots, b)


def lu_old(A, pivot=True, get_infos=False):
    """torch.lu (deprecated): LU, pivots (and infos)."""
    _warn_once(_lu_warned, _LU_DEPRECATED)
    LU, pivots, info = _lu_factor_ex(A, pivot)
    if get_infos:
        return LU, pivots, info
    _raise_lu_info("torch.linalg.lu_factor_ex", info)
    return LU, pivots


_LU_SOLVE_DEPRECATED = (
    "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a "
    "future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\nX = "
    "torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX = torch.linalg.lu_solve(LU, "
    "pivots, B) (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
    "BatchLinearAlgebra.cpp:2230.)")
_LU_DEPRECATED = (
    "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and "
    "will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\n"
    "should be replaced with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, "
    "pivots, info = torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\nLU, "
    "pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots) (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp:2073.)")


# ---------------------------------------------------------------------------- *_ex variants
def _info_tensor(info, A):
    return Tensor._make(np.asarray(info, np.int32), D.int32, A._device)


@_with_out("linalg.inv_ex")
def inv_ex(A, *, check_errors=False):
    """(inverse, info): info is the 1-based index of U's first zero pivot, 0 if invertible."""
    _check_square("linalg.inv", A)
    try:
        return _LinalgInvEx(_inv(A), _info_tensor(np.zeros(A._data.shape[:-2]), A))
    except _LinAlgError as exc:
        if check_errors:
            raise _LinAlgError(str(exc).replace("linalg.inv:", "linalg.inv_ex:", 1)) from None
    return _LinalgInvEx(*_solve_through_lu(A, _eye_like(A).expand(A.shape), True))


def _solve_through_lu(A, B, left):
    """(X, info) for a batch with singular matrices, as LAPACK's getrf + getrs compute them:
    substitution through a zero pivot gives infinities and NaN. (X A = B is solved as
    A^T X^T = B^T, as PyTorch does.)"""
    if not left:
        X, info = _solve_through_lu(A.mT, B.mT, True)
        return X.mT, info
    LU, pivots, info = _lu_factor(A)
    return lu_solve(LU, pivots, B), info


@_with_out("linalg.solve_ex")
def solve_ex(A, B, *, left=True, check_errors=False):
    """(result, info); a singular system raises only with check_errors, else its info is the
    first zero pivot."""
    try:
        X = _LX.solve(A, B, left=left)
        return _LinalgSolveEx(X, _info_tensor(np.zeros(X._data.shape[:-2] if X._data.ndim > 1
                                                       else ()), A))
    except _LinAlgError:
        if check_errors:
            raise
    a, b = A._data.shape, B._data.shape
    vector = len(b) == 1 or (len(b) == len(a) - 1 and b == a[:-1])     # as linalg.solve
    if vector:
        X, info = _solve_through_lu(A, B.unsqueeze(-1), left)
        return _LinalgSolveEx(X.squeeze(-1), info)
    return _LinalgSolveEx(*_solve_through_lu(A, B, left))


@_with_out("linalg.cholesky_ex")
def cholesky_ex(A, *, upper=False, check_errors=False):
    """(L, info); info is the order of the first leading minor that is not positive-definite.
    Where the factorisation fails, L is NaN (LAPACK leaves a partial factor)."""
    _check_square("linalg.cholesky", A, low_precision="cholesky_cpu")
    try:
        L = _linalg_cholesky(A, upper=upper)
        return _LinalgCholeskyEx(L, _info_tensor(np.zeros(A._data.shape[:-2]), A))
    except _LinAlgError as exc:
        if check_errors:
            raise _LinAlgError(str(exc).replace("linalg.cholesky:", "linalg.cholesky_ex:", 1)) \
                from None
    n = A._data.shape[-1]
    flat = A._data.reshape((-1, n, n))
    info = np.zeros(flat.shape[0], np.int32)
    for i in range(flat.shape[0]):      # error path only: which matrices failed, and where
        where = _failed_minor(_xp(A), flat[i:i + 1])
        info[i] = 0 if where is None else where[1]
    from .creation import full_like
    return _LinalgCholeskyEx(full_like(A, float("nan")),
                             _info_tensor(info.reshape(A._data.shape[:-2]), A))


# ---------------------------------------------------------------------------- products
@_with_out("linalg.multi_dot")
def multi_dot(tensors):
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first_vector, last_vector = tensors[0].dim() == 1, tensors[-1].dim() == 1
    mats = list(tensors)
    if first_vector:
        mats[0] = mats[0].unsqueeze(0)
    if last_vector:
        mats[-1] = mats[-1].unsqueeze(-1)
    for i, t in enumerate(mats):
        if t._dtype is not mats[0]._dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but "
                               f"tensor 0 is {_c10_name(mats[0]._dtype)} and tensor {i} "
                               f"{_c10_name(t._dtype)}")
        if t.dim() != 2:
            which = "first" if i == 0 else "last" if i == n - 1 else None
            if which:
                raise RuntimeError(f"multi_dot(): the {which} tensor must be 1D or 2D but got "
                                   f"{tensors[i].dim()}D")
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.dim()}D")
    for i in range(n - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            a, b = mats[i].shape, mats[i + 1].shape
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(a)} and {list(b)} cannot be multiplied")
    result = mats[0]
    for m in mats[1:]:
        result = result.mm(m)
    if first_vector:
        result = result.squeeze(0)
    if last_vector:
        result = result.squeeze(-1)
    return result


def _c10_name(dtype):
    """A dtype as PyTorch's C++ messages spell it ('float', 'long int', ...)."""
    return {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
            "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}.get(
                str(dtype).split(".")[-1], str(dtype))


_chain_matmul_warned = []


@_with_out("chain_matmul")
def chain_matmul(*matrices):
    _warn_once(_chain_matmul_warned, _CHAIN_MATMUL_DEPRECATED)
    if len(matrices) == 1:
        return matrices[0].clone()
    return multi_dot(matrices)


_CHAIN_MATMUL_DEPRECATED = (
    "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
    "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
    "multiple parameters. (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
    "LinearAlgebra.cpp:1102.)")


@_with_out("linalg.vecdot")
def vecdot(x, y, *, dim=-1):
    if x._dtype._category < 2:
        raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as "
                           f"input. Got {_tname(x._dtype)}")
    if x._dtype is not y._dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found "
                           f"x of type {_tname(x._dtype)} and y of type {_tname(y._dtype)} "
                           f"instead")
    n, m = x._data.shape, y._data.shape
    if len(n) == len(m) == 1 and n != m:        # two vectors go to dot, which never broadcasts
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n[0]}] and src [{m[0]}] "
                           f"to have the same number of elements, but got {n[0]} and {m[0]} "
                           f"elements respectively")
    return (x.conj() * y).sum(dim)


def vander(x, N=None):
    if x._dtype is D.bool_:
        raise RuntimeError("linalg.vander supports floating point, complex, and integer "
                           "tensors, but got Bool")
    n = (x.shape[-1] if x.dim() else 1) if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    from .joining import cat
    ones = x.new_ones(tuple(x.shape) + (1,))
    powers = x.unsqueeze(-1).expand(tuple(x.shape) + (n - 1,)).cumprod(-1)
    return cat([ones, powers], -1)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return A.diagonal(offset, dim1, dim2)


@_with_out("linalg.tensorinv")
def tensorinv(A, ind=2):
    if ind <= 0:
        raise RuntimeError("Expected a strictly positive integer for 'ind', but got " + str(ind))
    out_shape, in_shape = tuple(A.shape[ind:]), tuple(A.shape[:ind])
    rows, cols = int(np.prod(in_shape)), int(np.prod(out_shape))
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    return _LX.inv(A.reshape(rows, cols)).reshape(out_shape + in_shape)


@_with_out("linalg.tensorsolve")
def tensorsolve(A, B, dims=None):
    if dims is not None:
        from ._utils import wrap_dim
        moved = [wrap_dim(d, A.dim()) for d in dims]
        A = A.movedim(moved, list(range(A.dim() - len(moved), A.dim())))
    result_shape = tuple(A.shape[B.dim():])
    rows, cols = B.numel(), int(np.prod(result_shape))
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim"
                           f":]) == prod(self.shape[:other.ndim]), but got {cols} != {rows}")
    return _LX.solve(A.reshape(rows, cols), B.reshape(rows)).reshape(result_shape)
