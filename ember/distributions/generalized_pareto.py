"""GeneralizedPareto(loc, scale, concentration): survival (1 + c z)^(-1/c) for z = (x - loc) /
scale (exp(-z) at c = 0), on [loc, loc - scale / c] for c < 0, else [loc, inf)."""
import math

import ember
from . import constraints
from .continuous import _all_numbers
from .distribution import Distribution, broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True
    _expand_dims = {"loc": 0, "scale": 0, "concentration": 0}

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        batch = ember.Size() if _all_numbers(loc, scale, concentration) else self.loc.size()
        super().__init__(batch, validate_args=validate_args)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        c = self.concentration
        upper = ember.where(c < 0, self.loc - self.scale / c, math.inf)
        return constraints.interval(self.loc, upper)

    def _z(self, x):
        return (x - self.loc) / self.scale

    def _split(self):
        """(c ~ 0, c with 1 in its place there): there the exponential limit is used."""
        zero = ember.isclose(self.concentration, ember.zeros_like(self.concentration))
        return zero, ember.where(zero, ember.ones_like(self.concentration), self.concentration)

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        u = ember.rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        zero, c = self._split()
        return ember.where(zero, -z, -(1 / c + 1) * ember.log1p(c * z)) - self.scale.log()

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        zero, c = self._split()
        return ember.where(zero, -z, -ember.log1p(c * z) / c)

    def log_cdf(self, value):
        return ember.log1p(-ember.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return ember.exp(self.log_cdf(value))

    def icdf(self, value):
        zero, c = self._split()
        log_tail = ember.log1p(-value)
        return self.loc + self.scale * ember.where(zero, -log_tail, ember.expm1(-c * log_tail) / c)

    @property
    def mean(self):
        c = self.concentration
        return ember.where(c < 1, self.loc + self.scale / (1 - c), float("nan"))

    @property
    def variance(self):
        c = self.concentration
        return ember.where(c < 0.5, self.scale.pow(2) / ((1 - c).pow(2) * (1 - 2 * c)),
                           float("nan"))

    @property
    def mode(self):
        return self.loc

    def entropy(self):
        return self.scale.log() + self.concentration + 1
