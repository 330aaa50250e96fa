"""Discrete distributions: Bernoulli, Categorical, OneHotCategorical.

Each takes exactly one of `probs` and `logits`; the other is derived lazily on first use."""
import numbers

import ember
import ember.nn.functional as F
from . import constraints
from .distribution import (Distribution, broadcast_all, lazy_property, logits_to_probs,
                           probs_to_logits)


def _one_of(probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


def _scalar_parameter(dist, probs, logits, transform_probs=None):
    """The one given of `probs`/`logits` of a distribution with one probability per batch
    element, broadcast to a tensor and stored (the other is derived lazily); returns the batch
    shape. `transform_probs`, applied to given probabilities (e.g. to keep them off 0 and 1)."""
    _one_of(probs, logits)
    given = probs if probs is not None else logits
    (param,) = broadcast_all(given)
    if probs is not None and transform_probs is not None:
        param = transform_probs(param)
    dist.__dict__["probs" if probs is not None else "logits"] = param
    return ember.Size() if isinstance(given, numbers.Number) else param.size()


class Bernoulli(Distribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _expand_dims = {"probs": 0, "logits": 0}

    def __init__(self, probs=None, logits=None, validate_args=None):
        batch = _scalar_parameter(self, probs, logits)
        super().__init__(batch, validate_args=validate_args)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs)
        return ember.where(self.probs == 0.5, float("nan"), mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=ember.Size()):
        with ember.no_grad():
            return ember.bernoulli(self.probs.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = ember.arange(2, dtype=self.probs.dtype, device=self.probs.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values


class Categorical(Distribution):
    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True
    _expand_dims = {"probs": 1, "logits": 1}

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = param = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = param = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._num_events = param.size()[-1]
        batch = param.size()[:-1] if param.dim() > 1 else ember.Size()
        super().__init__(batch, validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return (self.probs if "probs" in self.__dict__ else self.logits).size()

    @property
    def mean(self):
        return ember.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype,
                          device=self.probs.device)

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return self.mean

    def sample(self, sample_shape=ember.Size()):
        # as torch: multinomial with replacement over the rows of probs, numel(sample_shape)
        # draws per row (rows first), transposed to sample-major
        sample_shape = ember.Size(sample_shape)
        probs_2d = self.probs.reshape(-1, self._num_events)
        with ember.no_grad():
            draws = ember.multinomial(probs_2d, sample_shape.numel(), True).T
        return draws.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = ember.broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        # -inf logits (zero probabilities) contribute 0, not nan
        logits = self.logits.clamp(min=ember.finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = ember.arange(self._num_events, dtype=ember.long, device=self.probs.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values


class _OverCategories(Distribution):
    """A distribution over category counts or one-hot vectors, built on a Categorical whose
    parameters it shows as its own."""

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape


class OneHotCategorical(_OverCategories):
    """A Categorical whose samples are one-hot vectors (event shape: the number of classes)."""
    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits, validate_args=validate_args)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self))
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, ember.Size(batch_shape), self._event_shape,
                              validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        return F.one_hot(self.probs.argmax(dim=-1), self._event_shape[0]).to(self.probs)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=ember.Size()):
        indices = self._categorical.sample(sample_shape)
        return F.one_hot(indices, self._event_shape[0]).to(self.probs)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.max(-1)[1])

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self._event_shape[0]
        values = ember.eye(n, dtype=self.probs.dtype, device=self.probs.device)
        values = values.view((n,) + (1,) * len(self._batch_shape) + (n,))
        return values.expand((n,) + tuple(self._batch_shape) + (n,)) if expand else values
