"""ember.lobpcg: a few extreme eigenpairs of a symmetric positive definite (generalized) problem
A x = lambda B x, by LOBPCG (Knyazev's locally optimal block preconditioned conjugate gradient).

Each step searches the span of the current block X, its preconditioned residuals W and the
previous step's direction P, and keeps the Rayleigh-Ritz vectors of that span with the largest
(or smallest) values. A B other than the identity is removed first: with B = L L^T (Cholesky),
the problem becomes the standard one for L^-1 A L^-T, whose eigenvectors are L^T x. The span's
orthonormal basis comes from an SVD that drops the directions the block's columns no longer add
(which is what makes method="ortho" robust); method="basic" keeps the same iteration without
the previous directions' re-orthonormalization against X.

Gradients (A only, as torch: B must be the identity) are the exact derivatives of the k
eigenpairs of the symmetrized A (see _LOBPCG.backward).
"""
import numpy as np

from . import _dtype as D
from ._tensor import Tensor
from .autograd.function import Function
from .ops.creation import tensor as _tensor
from .ops.random import randn


class _Worker:
    """What a `tracker` sees at each step, under torch's names: ivars/fvars/bvars/tvars and the
    iteration's tensors A, B, iK, E, X, S, R."""

    def __init__(self, A, B, iK, iparams, fparams, bparams, method):
        self.A, self.B, self.iK = A, B, iK
        self.iparams, self.fparams, self.bparams = iparams, fparams, bparams
        self.method = method
        self.ivars = {"istep": 0, "converged_count": 0, "converged_end": 0,
                      "iterations_left": iparams["niter"]}
        self.fvars = {"_": 0.0}
        self.bvars = {"_": False}
        self.tvars = {}
        self.E = self.X = self.S = self.R = None

    def __str__(self):
        return f"LOBPCG(method={self.method!r}, istep={self.ivars['istep']})"


def _basis(S, eps):
    """An orthonormal basis of the columns of S (dependent directions dropped)."""
    U, s, _ = np.linalg.svd(S, full_matrices=False)
    keep = s > s[0] * eps * S.shape[0] if s.size and s[0] > 0 else s > 0
    return U[:, keep]


def _pick(w, C, n, largest):
    order = np.argsort(w)[::-1][:n] if largest else np.argsort(w)[:n]
    return w[order], C[:, order]


def _solve_standard(A, X, iK, k, n, largest, niter, tol, method, worker, tracker, wrap):
    """LOBPCG on a standard (B = I) symmetric problem, arrays of one matrix."""
    eps = np.finfo(A.dtype).eps
    A_norm = np.linalg.norm(A, 2)
    worker.fvars.update(A_norm=float(A_norm), B_norm=1.0)
    X = _basis(X, eps)
    if X.shape[1] < n:                  # (a rank-deficient start: filled with unit vectors)
        X = _basis(np.concatenate([X, np.eye(A.shape[0], n, dtype=A.dtype)], 1), eps)[:, :n]
    _, C = _pick(*np.linalg.eigh(X.T @ A @ X), n, largest)
    X = X @ C
    E = np.zeros(n, A.dtype)        # (as torch: no values until the first step's update)
    P = None
    istep = 0
    while True:
        R = A @ X - X * E
        rerr = np.linalg.norm(R, axis=0) / ((A_norm + np.abs(E)) * np.linalg.norm(X, axis=0))
        ok = rerr < tol
        count = int(np.argmin(ok)) if not ok.all() else n      # leading converged pairs
        istep += 1
        worker.ivars.update(istep=istep, converged_count=count, converged_end=count,
                            iterations_left=-1 if niter <= 0 else max(niter - istep, 0))
        worker.fvars["X_norm"] = float(np.linalg.norm(X))
        worker.tvars["rerr"] = wrap(rerr)
        worker.E, worker.X, worker.R = wrap(E), wrap(X), wrap(R)
        if tracker is not None:
            tracker(worker)
        if count >= k or worker.bvars.get("force_stop") or 0 < niter <= istep:
            return E, X
        W = R[:, count:] if iK is None else iK @ R[:, count:]
        if method == "ortho":
            W = W - X @ (X.T @ W)       # (the residual directions against the block, twice)
            W = W - X @ (X.T @ W)
        blocks = [X, W] if P is None else [X, W, P]
        S = _basis(np.concatenate(blocks, 1), eps)
        worker.S = wrap(S)
        E_new, C = _pick(*np.linalg.eigh(S.T @ A @ S), n, largest)
        X_new = S @ C
        P = X_new - X @ (X.T @ X_new)   # the step's direction, outside the old block
        X, E = X_new, E_new


def _lobpcg_arrays(A, B, X, iK, k, n, largest, niter, tol, method, worker, tracker, wrap):
    """One matrix: B's Cholesky factor turns the generalized problem into a standard one."""
    if B is None:
        return _solve_standard(A, X, iK, k, n, largest, niter, tol, method, worker, tracker,
                               wrap)
    L = np.linalg.cholesky(B)
    Linv = np.linalg.inv(L)
    A_std = Linv @ A @ Linv.T
    A_std = (A_std + A_std.T) / 2
    iK_std = None if iK is None else L.T @ iK @ L
    E, Y = _solve_standard(A_std, L.T @ X, iK_std, k, n, largest, niter, tol, method, worker,
                           tracker, wrap)
    return E, Linv.T @ Y


class LOBPCGAutogradFunction(Function):
    """The forward runs the iteration; the backward is the derivative of the k eigenpairs."""

    @staticmethod
    def forward(ctx, A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams,
                ortho_fparams, ortho_bparams):
        E, V = _run(A, k, B, X, n, iK, niter, tol, largest, method, tracker)
        ctx.save_for_backward(A, E, V)
        ctx.has_B = B is not None
        return E, V

    @staticmethod
    def backward(ctx, gE, gX):
        if ctx.has_B:
            raise ValueError("lobpcg.backward does not support backward with B != I yet.")
        A, E, V = ctx.saved_tensors
        a, e, v = A.detach()._data, E.detach()._data, V.detach()._data
        ge = np.zeros_like(e) if gE is None else gE._data
        gv = np.zeros_like(v) if gX is None else gX._data
        out = np.empty_like(a)
        for idx in np.ndindex(a.shape[:-2]):
            out[idx] = _eigenpairs_vjp(a[idx], e[idx], v[idx], ge[idx], gv[idx])
        return (_tensor(out, dtype=A.dtype),) + (None,) * 13


def _eigenpairs_vjp(A, E, V, gE, gV):
    """dL/dA for L(E, V), E/V some eigenpairs of symmetric A: the eigenvalues' part
    V diag(gE) V^T, and for each eigenvector x_i (unit, of value e_i) the part -z_i x_i^T with
    z_i = (A - e_i I)^+ (I - x_i x_i^T) gV_i (the pseudo-inverse over the other eigenvalues)."""
    w, Q = np.linalg.eigh(A)
    out = (V * gE) @ V.T
    scale = np.abs(w).max() if w.size else 1.0
    for i in range(V.shape[1]):
        x, g = V[:, i], gV[:, i]
        g = g - x * (x @ g)
        gap = w - E[i]
        inv = np.where(np.abs(gap) > scale * np.finfo(A.dtype).eps * A.shape[0] * 10,
                       1.0 / np.where(gap == 0, 1.0, gap), 0.0)
        z = Q @ (inv * (Q.T @ g))
        out -= np.outer(z, x)
    return out


def _run(A, k, B, X, n, iK, niter, tol, largest, method, tracker):
    """The forward on tensors: the batch's matrices one by one."""
    a = A.detach()._data
    b = None if B is None else B.detach()._data
    x = X.detach()._data
    ik = None if iK is None else iK.detach()._data
    iparams = {"k": k, "n": n, "niter": niter}
    fparams = {"tol": tol}
    bparams = {"largest": largest}
    worker = _Worker(A, B, iK, iparams, fparams, bparams, method)

    def wrap(arr):
        return Tensor._make(np.array(arr, dtype=a.dtype), A._dtype)

    batch = a.shape[:-2]
    E = np.empty(batch + (k,), a.dtype)
    V = np.empty(batch + (a.shape[-1], k), a.dtype)
    for idx in np.ndindex(batch):
        e, v = _lobpcg_arrays(a[idx], None if b is None else b[idx], x[idx],
                              None if ik is None else ik[idx], k, n, largest, niter, tol,
                              method, worker, tracker, wrap)
        E[idx], V[idx] = e[:k], v[:, :k]
    return Tensor._make(E, A._dtype), Tensor._make(V, A._dtype)


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None,
           method=None, tracker=None, ortho_iparams=None, ortho_fparams=None,
           ortho_bparams=None):
    """The k largest (or smallest) eigenvalues and eigenvectors of A x = lambda B x, for
    symmetric positive definite A (and B): (E of shape (*, k), X of shape (*, m, k))."""
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and B.shape != A.shape:
        raise AssertionError(f"A and B must have the same shapes, got {A.shape} and {B.shape}")
    if not (A._dtype.is_floating_point and A._dtype in (D.float32, D.float64)):
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_c_type(A._dtype)} != float")
    m = A.shape[-1]
    if X is None:
        k = 1 if k is None else k
        n = k if n is None else n
        X = randn(*A.shape[:-2], m, n, dtype=A.dtype, device=A.device)
    else:
        n = X.shape[-1]
        k = n if k is None else k
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m}) "
                         f"is smaller than 3 x the number of requested eigenpairs (={n})")
    method = "ortho" if method is None else method     # (as torch: any other name is basic)
    niter = 1000 if niter is None else niter      # (0 or -1: until converged, as torch)
    tol = float(np.finfo(A._dtype.np).eps) ** 0.5 if tol is None else tol
    largest = True if largest is None else largest
    if A.requires_grad:
        A = (A + A.mT) / 2          # as torch: the gradient of the symmetric part
        return LOBPCGAutogradFunction.apply(A, k, B, X, n, iK, niter, tol, largest, method,
                                            tracker, ortho_iparams, ortho_fparams,
                                            ortho_bparams)
    return _run(A, k, B, X, n, iK, niter, tol, largest, method, tracker)


def _c_type(dtype):
    return {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "bool": "bool", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16"}.get(dtype.name, dtype.name)
