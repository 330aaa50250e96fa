"""Matrix decompositions: Cholesky, SVD, QR, eigh, eig, Householder, LU, matrix_exp, the low-rank
SVD/PCA and vander, diagonal, tensorinv, tensorsolve."""
import builtins
import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
from ._linalg_common import (_LinAlgError, _check_square, _tname, _eye_like, _off_diagonal,
                             _check_kernel, _check_matrix, _LinalgSvd, _with_out, _real_dtype,
                             _recording, _Svd, _LinalgQr, _Qr, _warn_once, _LinalgEigh,
                             _complex_np, _LinalgEig, _LinalgLuFactorEx, _LinalgLuFactor,
                             _LinalgLu, _LuUnpack, _check_same_dtype, _LinalgInvEx, _LinalgSolveEx,
                             _LinalgCholeskyEx)
from ._utils import return_type as _return_type
from .linalg_solvers import _inv, _solve_triangular, _solve, _substitute, solve
from .registry import primitive, xp_of
import warnings
from .creation import zeros_like, eye, full_like, zeros
from .joining import cat, stack
from .random import randn


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
        m, n = input._data.shape[-2:]
        batch = tuple(input._data.shape[:-2])
        S = svdvals(input)
        return _Svd(zeros(batch + (m, m), dtype=input._dtype),
                    S, zeros(batch + (n, n), dtype=input._dtype))
    U, S, Vh = _svd(input, full_matrices=not some)
    return _Svd(U, S, Vh.mH)


def _xp(A):
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
    grad_Q = zeros_like(Q) if grad_Q is None else grad_Q
    grad_R = zeros_like(R) if grad_R is None else grad_R
    if m >= n:
        return _qr_backward_tall(Q, R, grad_Q, grad_R)
    # A = [X | Y] with X = Q R1 square: Y = Q R2 feeds gQ, then X's QR takes the rest
    A = ctx.input
    Y = A[..., m:]
    grad_Q = grad_Q + Y @ grad_R[..., m:].mH
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
        X = solve(A, B, left=left)
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
    return _LinalgCholeskyEx(full_like(A, float("nan")),
                             _info_tensor(info.reshape(A._data.shape[:-2]), A))


def vander(x, N=None):
    if x._dtype is D.bool_:
        raise RuntimeError("linalg.vander supports floating point, complex, and integer "
                           "tensors, but got Bool")
    n = (x.shape[-1] if x.dim() else 1) if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    ones = x.new_ones(tuple(x.shape) + (1,))
    powers = x.unsqueeze(-1).expand(tuple(x.shape) + (n - 1,)).cumprod(-1)
    return cat([ones, powers], -1)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return A.diagonal(offset, dim1, dim2)


# ----------------------------------------------------------------------------- low-rank
def _approximate_basis(A, q, niter, M=None):
    """An orthonormal (m, q) basis approximately spanning A's columns (A - M when M is given):
    a random projection sharpened by `niter` power iterations (Halko et al., 2009)."""
    X = A if M is None else A - M
    Q = qr(X @ randn(*A.shape[:-2], A.shape[-1], q, dtype=A.dtype)).Q
    for _ in builtins.range(niter):
        Q = qr(X.mH @ Q).Q
        Q = qr(X @ Q).Q
    return Q


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) with A ~ U diag(S) V^H, of rank q, from a randomized range finder."""
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)
    if m < n:       # (the basis of the smaller side)
        U, S, V = svd_lowrank(A.mH, q, niter, None if M is None else M.mH)
        return V, S, U
    Q = _approximate_basis(A, q, 2 if niter is None else niter, M)
    B = Q.mH @ (A if M is None else A - M)
    U, S, Vh = svd(B, full_matrices=False)
    return Q @ U, S, Vh.mH


def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V): the principal directions (V), of the centered columns when `center`."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (isinstance(q, int) and 0 <= q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not (isinstance(niter, int) and niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if center:
        return svd_lowrank(A - A.mean(-2, keepdim=True), q, niter)
    return svd_lowrank(A, q, niter)


__all__ = ['svd_lowrank', 'pca_lowrank']
