"""RelaxedBernoulli (the binary Concrete / Gumbel-softmax law on (0, 1)) and
LogitRelaxedBernoulli, the law of its logit."""

import ember
from . import constraints
from .discrete import _scalar_parameter
from .distribution import (Distribution, broadcast_all, clamp_probs, lazy_property,
                           logits_to_probs, probs_to_logits)
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(Distribution):
    """(logit(p) + logistic noise) / temperature."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    _expand_dims = {"probs": 0, "logits": 0}

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        batch = _scalar_parameter(self, probs, logits)
        super().__init__(batch, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new.temperature = self.temperature
        return new

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return (self.probs if "probs" in self.__dict__ else self.logits).size()

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        u = clamp_probs(ember.rand(shape, dtype=probs.dtype, device=probs.device))
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    """sigmoid of a LogitRelaxedBernoulli draw."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs
