"""MixtureSameFamily: a Categorical choice among the components a batched distribution holds
along its rightmost batch dim."""
import ember
from . import constraints
from .discrete import Categorical
from .distribution import Distribution

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    arg_constraints = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of "
                             "ember.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution needs to be an instance of "
                             "ember.distributions.Distribution")
        mixture_batch = mixture_distribution.batch_shape
        component_batch = component_distribution.batch_shape[:-1]
        for a, b in zip(reversed(mixture_batch), reversed(component_batch)):
            if a != 1 and b != 1 and a != b:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mixture_batch}) is not "
                                 f"compatible with `component_distribution.batch_shape`"
                                 f"({component_batch})")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(component_batch, component_distribution.event_shape,
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = ember.Size(batch_shape)
        new = _instance if _instance is not None else type(self).__new__(type(self))
        new._component_distribution = self._component_distribution.expand(
            batch_shape + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self):
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    def _pad(self, x):
        """x with a components dim before the event dims (to meet the components)."""
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x):
        """Mixture weights (batch + (K,)) laid out against the components: ones for the
        event dims after K and, as in PyTorch, for missing batch dims between a multi-dim
        mixture batch and K."""
        batch_ndims = len(self._batch_shape)
        mixture_ndims = len(self._mixture_distribution.batch_shape)
        pad = 0 if mixture_ndims == 1 else batch_ndims - mixture_ndims
        shape = x.shape
        return x.reshape(shape[:-1] + (1,) * pad + shape[-1:] + (1,) * self._event_ndims)

    @property
    def mean(self):
        probs = self._pad_mixture_dimensions(self._mixture_distribution.probs)
        return (probs * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        # the law of total variance: E[Var(x | k)] + Var(E[x | k])
        probs = self._pad_mixture_dimensions(self._mixture_distribution.probs)
        dim = -1 - self._event_ndims
        mean_of_variances = (probs * self._component_distribution.variance).sum(dim)
        spread = (self._component_distribution.mean - self._pad(self.mean)).pow(2)
        return mean_of_variances + (probs * spread).sum(dim)

    def cdf(self, x):
        cdf_x = self._component_distribution.cdf(self._pad(x))
        return (cdf_x * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self._component_distribution.log_prob(self._pad(x))
        log_weights = ember.log_softmax(self._mixture_distribution.logits, dim=-1)
        return ember.logsumexp(log_prob_x + log_weights, dim=-1)

    def sample(self, sample_shape=ember.Size()):
        with ember.no_grad():
            gather_dim = len(sample_shape) + len(self._batch_shape)
            choice = self._mixture_distribution.sample(sample_shape)
            draws = self._component_distribution.sample(sample_shape)
            # the chosen component's draw, event dims and all
            index = choice.reshape(choice.shape + (1,) * (self._event_ndims + 1))
            index = index.repeat((1,) * choice.dim() + (1,) + tuple(self._event_shape))
            return ember.gather(draws, gather_dim, index).squeeze(gather_dim)

    def __repr__(self):
        return (f"{type(self).__name__}(\n  {self._mixture_distribution},\n"
                f"  {self._component_distribution})")
