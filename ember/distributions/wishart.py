"""Wishart(df, covariance_matrix | precision_matrix | scale_tril): the law of sum_i x_i x_i^T
for df normal vectors x_i of covariance Sigma (df real, > p - 1). Reparameterised draws by the
Bartlett decomposition."""
import math
import numbers
import warnings

import ember
from . import constraints
from .exp_family import ExponentialFamily
from .continuous import Chi2
from .multivariate import _FromScaleTril, _half_log_det, _precision_to_scale_tril

__all__ = ["Wishart"]


def _mvdigamma(a, p):
    """sum_{i < p} digamma(a - i / 2)."""
    shifts = ember.arange(p, dtype=a.dtype, device=a.device) / 2
    return ember.digamma(a.unsqueeze(-1) - shifts).sum(-1)


class Wishart(_FromScaleTril, ExponentialFamily):
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0
    _expand_dims = {"df": 0, "covariance_matrix": 2, "precision_matrix": 2, "scale_tril": 2}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        given = [(n, m) for n, m in (("covariance_matrix", covariance_matrix),
                                     ("precision_matrix", precision_matrix),
                                     ("scale_tril", scale_tril)) if m is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        name, matrix = given[0]
        if matrix.dim() < 2:
            # (PyTorch names scale_tril whichever was given)
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, numbers.Number):
            batch_shape = matrix.shape[:-2]
            self.df = ember.tensor(df, dtype=matrix.dtype, device=matrix.device)
        else:
            batch_shape = ember.broadcast_shapes(matrix.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = matrix.shape[-2:]
        p = event_shape[-1]
        if bool(self.df.le(p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        if bool(self.df.lt(p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur "
                          "for ndim - 1 < df < ndim.")
        self.__dict__[name] = matrix.expand(batch_shape + (-1, -1))
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = scale_tril
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = ember.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        # the Bartlett factor's squared diagonal: chi-squared with df, df - 1, ... df - p + 1
        self._dist_chi2 = Chi2(self.df.unsqueeze(-1) - ember.arange(
            p, dtype=self.df.dtype, device=self.df.device))

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        new._dist_chi2 = self._dist_chi2.expand(ember.Size(batch_shape)
                                                + self._event_shape[-1:])
        return new

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self._event_shape[-1] - 1)}

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape


    @property
    def mean(self):
        return self.df.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self._event_shape[-1] - 1
        factor = ember.where(factor <= 0, float("nan"), factor)
        return factor.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diagonal = V.diagonal(dim1=-2, dim2=-1)
        return self.df.view(self._batch_shape + (1, 1)) * (
            V.pow(2) + diagonal.unsqueeze(-1) * diagonal.unsqueeze(-2))

    def _bartlett_sample(self, sample_shape):
        """X = (L A)(L A)^T, A lower triangular: on its diagonal the square roots of
        chi-squared draws with df, df - 1, ... df - p + 1 degrees of freedom (kept at or
        above eps), below it standard normals drawn row by row (as torch draws them)."""
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        chi = self._dist_chi2.rsample(sample_shape).sqrt()
        chi = chi.clamp(min=ember.finfo(chi.dtype).eps)
        noise = ember.diag_embed(chi)
        rows, cols = ember.tril_indices(p, p, -1, device=L.device)
        noise[..., rows, cols] = ember.randn(
            ember.Size(sample_shape) + self._batch_shape + (p * (p - 1) // 2,),
            dtype=L.dtype, device=L.device)
        factor = L @ noise
        return factor @ factor.mT

    def _flagged(self, sample, batch_dims):
        """Which draws torch 2.13 draws again: those that pass its positive-definite check
        (any matrix of the batch), as its singular-sample correction does."""
        ok = self.support.check(sample)
        return ok.amax(batch_dims) if batch_dims else ok

    def rsample(self, sample_shape=ember.Size(), max_try_correction=None):
        """Bartlett draws, then torch 2.13's singular-sample correction as it behaves (found
        by experiment): when a draw passes the positive-definite check it warns once and
        draws again for those draws only, up to max_try_correction times (10 by default),
        each round drawing one new sample per draw still flagged; a new draw that fails the
        check keeps its place flagged for the next round."""
        sample_shape = ember.Size(sample_shape)
        sample = self._bartlett_sample(sample_shape)
        batch = tuple(range(-len(self._batch_shape), 0))
        flagged = self._flagged(sample, batch)
        if bool(flagged.any()):
            warnings.warn("Singular sample detected.")
            for _ in range(10 if max_try_correction is None else max_try_correction):
                new = self._bartlett_sample(ember.Size((int(flagged.sum()),)))
                sample[flagged] = new
                still = ~self.support.check(new)
                # (a new mask: the assignment above keeps this one for its gradient)
                flagged, was = flagged.clone(), flagged
                flagged[was] = still.amax(batch) if batch else still
                if not bool(flagged.any()):
                    break
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        # tr(Sigma^-1 X) (by cholesky_solve, whose gradient reaches all of L, as PyTorch's)
        trace = ember.cholesky_solve(value, L).diagonal(dim1=-2, dim2=-1).sum(-1)
        log_det_x = 2 * _half_log_det(ember.linalg.cholesky(value))
        return (0.5 * (nu - p - 1) * log_det_x - 0.5 * trace - 0.5 * nu * p * math.log(2)
                - nu * _half_log_det(L) - ember.mvlgamma(0.5 * nu, p))

    def entropy(self):
        nu, p = self.df, self._event_shape[-1]
        return ((p + 1) * _half_log_det(self._unbroadcasted_scale_tril)
                + 0.5 * p * (p + 1) * math.log(2) + ember.mvlgamma(0.5 * nu, p)
                - 0.5 * (nu - p - 1) * _mvdigamma(0.5 * nu, p) + 0.5 * nu * p)

    @property
    def _natural_params(self):
        nu, p = self.df, self._event_shape[-1]
        return -0.5 * self.precision_matrix, 0.5 * (nu - p - 1)

    def _log_normalizer(self, x, y):
        # nu / 2 = y + (p + 1) / 2 and Sigma = (-2 x)^-1
        p = self._event_shape[-1]
        half_nu = y + 0.5 * (p + 1)
        log_det_sigma = -2 * _half_log_det(ember.linalg.cholesky(-2 * x))
        return half_nu * (log_det_sigma + p * math.log(2)) + ember.mvlgamma(half_nu, p)
