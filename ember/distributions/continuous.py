"""Univariate continuous distributions: Normal, Uniform, Exponential, Laplace, Gamma, Beta, Cauchy,
Chi2 (a Gamma with rate 1/2, as in PyTorch) and StudentT."""
import math
import numbers

import numpy as np

import ember
from .. import _random_recipes as _R
from .._generator import default_generator
from ..ops.special import _igamma64
from ..special import gammainc
from . import constraints
from .dirichlet import Dirichlet
from .distribution import Distribution, broadcast_all


def _batch_of(param, scalar):
    return ember.Size() if scalar else param.size()


def _all_numbers(*values):
    return all(isinstance(v, numbers.Number) for v in values)


class _StandardGamma(ember.autograd.Function):
    """Gamma(alpha, 1) draws, torch's (torch._standard_gamma's recipe on the global stream), with the implicit reparameterisation gradient dx/dalpha = -dP(alpha, x)/dalpha /
    pdf(x), P being the regularized lower incomplete gamma function (the Gamma CDF)."""

    @staticmethod
    def forward(ctx, alpha):
        # (torch's float32/float64 kernel; a half alpha is not something torch samples)
        draws = _R.standard_gamma(default_generator, alpha.detach().numpy())
        sample = ember.tensor(draws, dtype=alpha.dtype, device=alpha.device)
        ctx.save_for_backward(alpha, sample)
        return sample

    @staticmethod
    def backward(ctx, grad):
        alpha, sample = (t.detach().double() for t in ctx.saved_tensors)
        a, x = alpha.numpy(), sample.numpy()
        h = 1e-4 * np.maximum(a, 1e-3)             # central difference of P in alpha
        with np.errstate(all="ignore"):
            dp_da = (_igamma64(np, a + h, x, False) - _igamma64(np, a - h, x, False)) / (2 * h)
        log_pdf = (alpha - 1) * sample.log() - sample - alpha.lgamma()
        dx_da = -ember.tensor(dp_da, dtype=ember.float64) / log_pdf.exp()
        return grad * dx_da.to(grad.dtype)


def _clamp_tiny_in_place(value):
    # keep a sample off 0 without recording the clamp (its gradient stays the sample's)
    value.detach().clamp_(min=ember.finfo(value.dtype).tiny)
    return value


class _LocationScale(Distribution):
    """What Normal and Laplace share: a real location (the mean and the mode) and a positive
    scale, broadcast together."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _expand_dims = {"loc": 0, "scale": 0}

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(_batch_of(self.loc, _all_numbers(loc, scale)),
                         validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc


class Normal(_LocationScale):
    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def sample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        with ember.no_grad():
            return ember.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        eps = ember.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (-((value - self.loc) ** 2) / (2 * self.variance) - self.scale.log()
                - math.log(math.sqrt(2 * math.pi)))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ember.erf((value - self.loc) * self.scale.reciprocal()
                                    / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * ember.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + ember.log(self.scale)


class Uniform(Distribution):
    has_rsample = True
    _expand_dims = {"low": 0, "high": 0}

    @property
    def arg_constraints(self):
        return {"low": constraints.less_than(self.high),
                "high": constraints.greater_than(self.low)}

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        super().__init__(_batch_of(self.low, _all_numbers(low, high)),
                         validate_args=validate_args)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return float("nan") * self.high

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        rand = ember.rand(shape, dtype=self.low.dtype, device=self.low.device)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        inside = self.low.le(value).type_as(self.low) * self.high.gt(value).type_as(self.low)
        return ember.log(inside) - ember.log(self.high - self.low)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return ember.log(self.high - self.low)


class Exponential(Distribution):
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _expand_dims = {"rate": 0}

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(_batch_of(self.rate, _all_numbers(rate)), validate_args=validate_args)

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return ember.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        draws = ember.empty(shape, dtype=self.rate.dtype, device=self.rate.device).exponential_()
        return draws / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - ember.exp(-self.rate * value)

    def icdf(self, value):
        return -ember.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - ember.log(self.rate)


class Laplace(_LocationScale):
    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return 2 ** 0.5 * self.scale

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        eps = ember.finfo(self.loc.dtype).eps      # keeps log1p(-|u|) finite
        u = ember.empty(shape, dtype=self.loc.dtype, device=self.loc.device).uniform_(eps - 1, 1)
        return self.loc - self.scale * u.sign() * ember.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -ember.log(2 * self.scale) - ember.abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * ember.expm1(
            -(value - self.loc).abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * ember.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + ember.log(2 * self.scale)


class Gamma(Distribution):
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _expand_dims = {"concentration": 0, "rate": 0}

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(_batch_of(self.concentration, _all_numbers(concentration, rate)),
                         validate_args=validate_args)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        draws = _StandardGamma.apply(self.concentration.expand(shape))
        return _clamp_tiny_in_place(draws / self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = ember.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        return (ember.xlogy(self.concentration, self.rate)
                + ember.xlogy(self.concentration - 1, value)
                - self.rate * value - ember.lgamma(self.concentration))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return gammainc(self.concentration, self.rate * value)

    def entropy(self):
        c = self.concentration
        return c - ember.log(self.rate) + ember.lgamma(c) + (1.0 - c) * ember.digamma(c)


class Beta(Distribution):
    """Beta(concentration1, concentration0): as in PyTorch, the first coordinate of a
    Dirichlet over (x, 1 - x), which it wraps (so its repr shows no parameters: `Beta()`)."""
    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        both = ember.stack(broadcast_all(concentration1, concentration0), -1)
        self._dirichlet = Dirichlet(both, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self))
        new._dirichlet = self._dirichlet.expand(batch_shape)
        Distribution.__init__(new, ember.Size(batch_shape), validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=ember.Size()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._dirichlet.log_prob(ember.stack([value, 1.0 - value], -1))

    def entropy(self):
        return self._dirichlet.entropy()


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
        # the standard Cauchy from cauchy_ (torch's draw: one float64 uniform per element,
        # whatever the dtype), then shifted and scaled
        shape = self._extended_shape(sample_shape)
        eps = ember.empty(shape, dtype=self.loc.dtype, device=self.loc.device).cauchy_()
        return self.loc + eps * self.scale

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
        return self.loc + self.scale * (x * ember.rsqrt(v / self.df))

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
