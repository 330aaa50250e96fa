"""ContinuousBernoulli: the density on [0, 1] proportional to p^x (1 - p)^(1 - x).

Near p = 1/2 the closed forms divide by ~0; there (inside `lims`) Taylor expansions about 1/2
are used instead, as in PyTorch."""
import math

import ember
import ember.nn.functional as F
from . import constraints
from .discrete import _scalar_parameter
from .distribution import (broadcast_all, clamp_probs, lazy_property, logits_to_probs,
                           probs_to_logits)
from .exp_family import ExponentialFamily

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True
    _mean_carrier_measure = 0
    _expand_dims = {"probs": 0, "logits": 0}

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        # (given probabilities are kept off 0 and 1: the logits stay finite)
        batch = _scalar_parameter(self, probs, logits, clamp_probs)
        self._lims = lims
        super().__init__(batch, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._lims = self._lims
        return new

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return (self.probs if "probs" in self.__dict__ else self.logits).size()

    # -------------------------------------------------------------- the unstable region
    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs >= self._lims[1])

    def _cut_probs(self):
        # inside the unstable region a safe stand-in (the closed form there is discarded)
        return ember.where(self._outside_unstable_region(), self.probs,
                           self._lims[0] * ember.ones_like(self.probs))

    def _log_ratio(self, cut):
        return ember.log1p(-cut) - ember.log(cut)

    def _cont_bern_log_norm(self):
        """log C(p), C the normalizing constant 2 atanh(1 - 2p) / (1 - 2p)."""
        cut = self._cut_probs()
        below = ember.where(cut <= 0.5, cut, ember.zeros_like(cut))
        above = ember.where(cut >= 0.5, cut, ember.ones_like(cut))
        log_norm = self._log_ratio(cut).abs().log() - ember.where(
            cut <= 0.5, ember.log1p(-2.0 * below), ember.log(2.0 * above - 1.0))
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return ember.where(self._outside_unstable_region(), log_norm, taylor)

    # -------------------------------------------------------------- moments
    @property
    def mean(self):
        cut = self._cut_probs()
        closed = cut / (2.0 * cut - 1.0) + 1.0 / self._log_ratio(cut)
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return ember.where(self._outside_unstable_region(), closed, taylor)

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def variance(self):
        cut = self._cut_probs()
        closed = (cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2)
                  + 1.0 / self._log_ratio(cut).pow(2))
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return ember.where(self._outside_unstable_region(), closed, taylor)

    # -------------------------------------------------------------- sampling (inverse CDF)
    def sample(self, sample_shape=ember.Size()):
        with ember.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        u = ember.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    # -------------------------------------------------------------- densities
    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return (-F.binary_cross_entropy_with_logits(logits, value, reduction="none")
                + self._cont_bern_log_norm())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        closed = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        inside = ember.where(self._outside_unstable_region(), closed, value)
        return ember.where(value <= 0.0, ember.zeros_like(value),
                           ember.where(value >= 1.0, ember.ones_like(value), inside))

    def icdf(self, value):
        cut = self._cut_probs()
        closed = ((ember.log1p(-cut + value * (2.0 * cut - 1.0)) - ember.log1p(-cut))
                  / (ember.log(cut) - ember.log1p(-cut)))
        return ember.where(self._outside_unstable_region(), closed, value)

    def entropy(self):
        log_q, log_p = ember.log1p(-self.probs), ember.log(self.probs)
        return self.mean * (log_q - log_p) - self._cont_bern_log_norm() - log_q

    # -------------------------------------------------------------- exponential family
    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """log of the integral of exp(x t) over [0, 1]: log((e^x - 1) / x), by a Taylor series
        near x = 0."""
        outside = (x <= self._lims[0] - 0.5) | (x >= self._lims[1] - 0.5)
        cut = ember.where(outside, x, (self._lims[0] - 0.5) * ember.ones_like(x))
        closed = ember.log(ember.expm1(cut).abs()) - ember.log(cut.abs())
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return ember.where(outside, closed, taylor)
