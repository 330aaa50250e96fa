"""Cauchy, Chi2 (a Gamma with rate 1/2, as in PyTorch) and StudentT."""
import math

import ember
from . import constraints
from .continuous import Gamma, _LocationScale
from .distribution import Distribution, broadcast_all


class Cauchy(_LocationScale):
    """No mean or variance: PyTorch reports them as nan and inf."""

    @property
    def mean(self):
        return ember.full(self._extended_shape(), float("nan"), dtype=self.loc.dtype,
                          device=self.loc.device)

    @property
    def variance(self):
        return ember.full(self._extended_shape(), float("inf"), dtype=self.loc.dtype,
                          device=self.loc.device)

    def rsample(self, sample_shape=ember.Size()):
        # the standard Cauchy by its inverse CDF, tan(pi (u - 1/2))
        shape = self._extended_shape(sample_shape)
        u = ember.rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + ember.tan(math.pi * (u - 0.5)) * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (-math.log(math.pi) - self.scale.log()
                - ((value - self.loc) / self.scale).pow(2).log1p())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ember.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return ember.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()


class Chi2(Gamma):
    """Chi2(df) = Gamma(df / 2, 1 / 2)."""
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    @property
    def df(self):
        return self.concentration * 2


class StudentT(Distribution):
    """loc + scale * X / sqrt(V / df) for X standard normal and V ~ Chi2(df)."""
    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _expand_dims = {"df": 0, "loc": 0, "scale": 0}

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    @property
    def mean(self):
        return ember.where(self.df > 1, self.loc, float("nan"))

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        finite = self.scale.pow(2) * df / (df - 2)
        return ember.where(df > 2, finite,
                           ember.where(df > 1, float("inf"), float("nan"))).to(df.dtype)

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        x = ember.randn(shape, dtype=self.df.dtype, device=self.df.device)
        v = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * x * ember.rsqrt(v / self.df)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        half_df = 0.5 * self.df
        log_norm = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
                    + ember.lgamma(half_df) - ember.lgamma(half_df + 0.5))
        return -0.5 * (self.df + 1.0) * ember.log1p(y.pow(2) / self.df) - log_norm

    def entropy(self):
        half_df = 0.5 * self.df
        log_beta = (ember.lgamma(half_df) + math.lgamma(0.5) - ember.lgamma(half_df + 0.5))
        return (self.scale.log()
                + (half_df + 0.5) * (ember.digamma(half_df + 0.5) - ember.digamma(half_df))
                + 0.5 * self.df.log() + log_beta)
