"""LowRankMultivariateNormal(loc, cov_factor, cov_diag): covariance W W^T + diag(D) for a
thin W (n x m). Densities go through the m x m capacitance matrix I + W^T D^-1 W (Woodbury
and the matrix determinant lemma), never an n x n factorisation."""
import math

import ember
from . import constraints
from .distribution import Distribution, lazy_property
from .multivariate import _solve_lower

__all__ = ["LowRankMultivariateNormal"]


def _capacitance_tril(W, D):
    """The Cholesky factor of I + W^T D^-1 W."""
    m = W.size(-1)
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    K = Wt_Dinv @ W
    return ember.linalg.cholesky(K + ember.eye(m, dtype=W.dtype, device=W.device))


def _lowrank_logdet(W, D, capacitance_tril):
    """log det(W W^T + D) = log det(capacitance) + log det(D)."""
    return (2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
            + D.log().sum(-1))


def _lowrank_mahalanobis(W, D, x, capacitance_tril):
    """x^T (W W^T + D)^-1 x = x^T D^-1 x - |C^-1 W^T D^-1 x|^2, C the capacitance factor."""
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    Wt_Dinv_x = (Wt_Dinv @ x.unsqueeze(-1)).squeeze(-1)
    batch = ember.broadcast_shapes(capacitance_tril.shape[:-2], Wt_Dinv_x.shape[:-1])
    m = capacitance_tril.size(-1)
    solved = _solve_lower(capacitance_tril.expand(batch + (m, m)),
                          Wt_Dinv_x.expand(batch + (m,)).unsqueeze(-1)).squeeze(-1)
    return (x.pow(2) / D).sum(-1) - solved.pow(2).sum(-1)


class LowRankMultivariateNormal(Distribution):
    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True
    # (with the lazily computed matrices, should they have been)
    _expand_dims = {"loc": 1, "cov_factor": 2, "cov_diag": 1, "variance": 1, "scale_tril": 2,
                    "covariance_matrix": 2, "precision_matrix": 2}

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape "
                             f"{event_shape[0]} x m")
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_, self.cov_factor, cov_diag_ = ember.broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except RuntimeError:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                             f"{cov_factor.shape}, cov_diag {cov_diag.shape}") from None
        self.loc, self.cov_diag = loc_[..., 0], cov_diag_[..., 0]
        batch_shape = self.loc.shape[:-1]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        for name in ("_unbroadcasted_cov_factor", "_unbroadcasted_cov_diag",
                     "_capacitance_tril"):
            setattr(new, name, getattr(self, name))
        return new

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape + self._event_shape

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return ((self._unbroadcasted_cov_factor.pow(2).sum(-1)
                 + self._unbroadcasted_cov_diag).expand(self._batch_shape + self._event_shape))

    @lazy_property
    def scale_tril(self):
        # D^(1/2) chol(I + D^(-1/2) W W^T D^(-1/2)), factoring W W^T + D
        n = self._event_shape[0]
        sqrt_d = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        scaled = self._unbroadcasted_cov_factor / sqrt_d
        K = scaled @ scaled.mT + ember.eye(n, dtype=scaled.dtype, device=scaled.device)
        return (sqrt_d * ember.linalg.cholesky(K)).expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        W = self._unbroadcasted_cov_factor
        return (W @ W.mT + ember.diag_embed(self._unbroadcasted_cov_diag)).expand(
            self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        # Woodbury: D^-1 - D^-1 W C^-T C^-1 W^T D^-1
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        A = _solve_lower(self._capacitance_tril, W.mT / D.unsqueeze(-2))
        return (ember.diag_embed(D.reciprocal()) - A.mT @ A).expand(self._matrix_shape())

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        W = self._unbroadcasted_cov_factor
        eps_w = ember.randn(shape[:-1] + W.shape[-1:], dtype=self.loc.dtype,
                            device=self.loc.device)
        eps_d = ember.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return (self.loc + (W @ eps_w.unsqueeze(-1)).squeeze(-1)
                + self._unbroadcasted_cov_diag.sqrt() * eps_d)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        M = _lowrank_mahalanobis(W, D, value - self.loc, self._capacitance_tril)
        log_det = _lowrank_logdet(W, D, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + M)

    def entropy(self):
        log_det = _lowrank_logdet(self._unbroadcasted_cov_factor,
                                  self._unbroadcasted_cov_diag, self._capacitance_tril)
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        return h if len(self._batch_shape) == 0 else h.expand(self._batch_shape)
