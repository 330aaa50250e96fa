"""nn.utils.parametrizations.orthogonal: keep a weight matrix (or batch of them) orthogonal
(unitary) by computing it from an unconstrained tensor.

The tensor X (the stored "original") maps to an orthogonal Q of X's shape (transposed
internally so that Q is tall, n >= k):
  * matrix_exp / cayley: the lower triangle of X, padded to n x n, gives the skew matrix
    A = X - X^H; Q is exp(A), or the Cayley transform (I - A/2)^-1 (I + A/2), cut to k columns;
  * householder: the strictly lower part of X holds k reflectors v_i (unit diagonal implied),
    each with tau_i = 2 / |v_i|^2 (an exact reflection); Q is their product, each column's sign
    set by X's diagonal.
With use_trivialization (the default), Q is further multiplied by a stored orthogonal `base`:
assigning a weight sets base to it (completed to n x n, or a random orthogonal matrix when the
given one is not orthogonal) and the original to -I, which the maps send to the identity, so the
weight starts as the one assigned. Without it, only householder can be assigned (via geqrf).
"""
from enum import Enum

from ..._dtype import finfo
from ..._tensor import Tensor
from ...autograd import grad_mode
from ...ops.creation import eye, zeros, zeros_like
from ...ops.joining import cat
from ...ops.linalg_decompositions import householder_product, matrix_exp, geqrf
from ...ops.random import randn
from ..modules.module import Module
from . import parametrize
from ... import linalg

__all__ = ["orthogonal"]


class _OrthMaps(Enum):
    matrix_exp = 0
    cayley = 1
    householder = 2


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex "
                             "tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                X = cat([X, zeros(*X.shape[:-1], n - k, dtype=X.dtype, device=X.device)], -1)
            A = X - X.mH
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = matrix_exp(A)
            else:
                Id = eye(n, dtype=A.dtype, device=A.device)
                Q = linalg.solve(Id - A * 0.5, Id + A * 0.5)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(-2))
            Q = householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base.matmul(Q)
        return Q.mT if transposed else Q

    @grad_mode.no_grad()
    def right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.shape[-2], Q.shape[-1]
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError("It is not possible to assign to the matrix "
                                          "exponential or the Cayley parametrizations when "
                                          "use_trivialization=False.")
            # the reflectors of Q's QR factorization, each sign recorded on the diagonal
            A, tau = geqrf(Q)
            diag = A.diagonal(dim1=-2, dim2=-1)
            # (a zero tau, an identity reflection, is recorded by a flipped sign)
            diag.copy_(diag.sign() * (1 - 2 * (tau == 0.0).to(diag.dtype)))
            return A.mT if transpose else A
        if n == k:
            if not _is_orthogonal(Q):
                Q = _random_orthogonal(Q)
            else:
                Q = Q.clone()
        else:
            # complete Q's columns to an orthogonal basis (Q's own columns first, unchanged
            # when they are orthonormal)
            N = randn(*(Q.shape[:-2] + (n, n - k)), dtype=Q.dtype, device=Q.device)
            Q = _sign_fixed_q(cat([Q, N], -1))
        self.base = Q
        neg_id = zeros_like(Q_init)
        neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_id


def _is_orthogonal(Q):
    n, k = Q.shape[-2], Q.shape[-1]
    Id = eye(k, dtype=Q.dtype, device=Q.device)
    eps = 10 * n * finfo(Q.dtype).eps
    return bool((Q.mH.matmul(Q) - Id).abs().max() <= eps) if Q.numel() else True


def _sign_fixed_q(A):
    """The Q of A's QR factorization with R's diagonal made non-negative (a unique Q)."""
    Q, R = linalg.qr(A)
    d = R.diagonal(dim1=-2, dim2=-1).sgn()
    d = d + (d == 0).to(d.dtype)
    return Q * d.unsqueeze(-2)


def _random_orthogonal(Q):
    return _sign_fixed_q(randn(*Q.shape, dtype=Q.dtype, device=Q.device))


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of "
                         f"{weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.size(-2) == weight.size(-1) or \
            weight.is_complex() else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None) if isinstance(orthogonal_map, str) \
        else None
    if orth_enum is None:
        raise ValueError(f'orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
