"""Count distributions: Poisson, Binomial, Geometric, NegativeBinomial, Multinomial.

As in PyTorch, those with a success probability take exactly one of `probs` and `logits` (the
other is derived lazily), and a `total_count` is broadcast with it and takes its dtype."""
import math
import numbers

import ember
import ember.nn.functional as F
from . import constraints
from .continuous import Gamma
from .discrete import Categorical, _OverCategories, _one_of, _scalar_parameter
from .distribution import (Distribution, broadcast_all, lazy_property, logits_to_probs,
                           probs_to_logits)


def _batch_of(given, param):
    return ember.Size() if isinstance(given, numbers.Number) else param.size()


class _ProbsOrLogits(Distribution):
    """What the families with a success probability share: `probs` in [0, 1] or `logits`,
    one given and the other derived on first use."""

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)


class _CountedTrials(_ProbsOrLogits):
    """Binomial and NegativeBinomial: a `total_count` broadcast with the probability, which
    also names the batch (`param_shape`)."""
    _expand_dims = {"total_count": 0, "probs": 0, "logits": 0, "_param": 0}

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        name = "probs" if probs is not None else "logits"
        total_count, param = broadcast_all(total_count, probs if probs is not None else logits)
        self.total_count = total_count.type_as(param)
        self.__dict__[name] = self._param = param
        super().__init__(param.size(), validate_args=validate_args)

    @property
    def param_shape(self):
        return self._param.size()


class Poisson(Distribution):
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer
    _expand_dims = {"rate": 0}

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(_batch_of(rate, self.rate), validate_args=validate_args)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=ember.Size()):
        with ember.no_grad():
            return ember.poisson(self.rate.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return ember.xlogy(value, rate) - rate - (value + 1).lgamma()


class Binomial(_CountedTrials):
    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        super().__init__(total_count, probs, logits, validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        with ember.no_grad():
            return ember.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        # max(logits, 0) with the gradient 1/2 at 0
        positive_part = (logits.clamp(min=0) + logits - logits.clamp(max=0)) / 2
        log_normaliser = (n * positive_part + n * ember.log1p(ember.exp(-logits.abs()))
                          - ember.lgamma(n + 1))
        return (value * logits - ember.lgamma(value + 1) - ember.lgamma(n - value + 1)
                - log_normaliser)

    def _homogeneous_count(self, what):
        total = int(self.total_count.max())
        if not self.total_count.min() == total:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return total

    def entropy(self):
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(ember.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total = self._homogeneous_count("enumerate_support")
        values = ember.arange(1 + total, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values


class Geometric(_ProbsOrLogits):
    """The number of failures before the first success."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer
    _expand_dims = {"probs": 0, "logits": 0}

    def __init__(self, probs=None, logits=None, validate_args=None):
        super().__init__(_scalar_parameter(self, probs, logits), validate_args=validate_args)
        if self._validate_args and probs is not None:
            positive = self.probs > 0
            if not bool(positive.all()):
                raise ValueError(
                    f"Expected parameter probs (Tensor of shape {tuple(self.probs.shape)}) of "
                    f"distribution {self!r} to be positive but found invalid values:\n"
                    f"{self.probs.detach()[~positive]}")

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return ember.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        tiny = ember.finfo(self.probs.dtype).tiny
        with ember.no_grad():
            u = ember.empty(shape, dtype=self.probs.dtype, device=self.probs.device)
            u = u.uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # a sure success and no failures: probability 1 (not 0 * log 0)
        probs = ember.where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs,
                                                  reduction="none") / self.probs


class NegativeBinomial(_CountedTrials):
    """The number of successes before `total_count` failures (success probability `probs`)."""
    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    @property
    def mean(self):
        return self.total_count * ember.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / ember.sigmoid(-self.logits)

    def sample(self, sample_shape=ember.Size()):
        # a Poisson draw whose rate is a Gamma draw
        with ember.no_grad():
            rate = Gamma(self.total_count, ember.exp(-self.logits),
                         validate_args=False).sample(sample_shape)
            return ember.poisson(rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        unnormalised = n * F.logsigmoid(-self.logits) + value * F.logsigmoid(self.logits)
        log_norm = -ember.lgamma(n + value) + ember.lgamma(1.0 + value) + ember.lgamma(n)
        return unnormalised - log_norm.masked_fill(n + value == 0.0, 0.0)


class Multinomial(_OverCategories):
    """Counts of `total_count` Categorical draws (event shape: the number of classes)."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        # (as in PyTorch, set here only: an expanded Multinomial has no entropy)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self))
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, ember.Size(batch_shape), self._event_shape,
                              validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=ember.Size()):
        draws = self._categorical.sample(ember.Size((self.total_count,)) + ember.Size(sample_shape))
        counts = F.one_hot(draws, self._event_shape[0]).sum(0)
        return counts.reshape(self._extended_shape(sample_shape)).type_as(self.probs)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        # a class never drawn contributes nothing, even where its probability is 0
        logits = ember.where((value == 0) & (logits == -math.inf), 0.0, logits)
        return (ember.lgamma(value.sum(-1) + 1) - ember.lgamma(value + 1).sum(-1)
                + (logits * value).sum(-1))

    def entropy(self):
        n = ember.tensor(self.total_count)
        term1 = n * self._categorical.entropy() - ember.lgamma(n + 1)
        # E[sum_k log(x_k!)], each count x_k being Binomial(n, p_k)
        counts = self._binomial.enumerate_support(expand=False)[1:]
        weights = ember.exp(self._binomial.log_prob(counts))
        return term1 + (weights * ember.lgamma(counts + 1)).sum([0, -1])
