"""TransformedDistribution: a base distribution pushed through a chain of transforms."""
import ember
from . import constraints
from .distribution import Distribution, sum_rightmost
from .multivariate import Independent
from .transforms import ComposeTransform, Transform


class TransformedDistribution(Distribution):
    """The law of transforms[-1](...transforms[0](x)) for x drawn from base_distribution."""
    arg_constraints = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError(f"transforms must be a Transform or list, but was {transforms}")
        base_shape = base_distribution.batch_shape + base_distribution.event_shape
        base_event_dim = len(base_distribution.event_shape)
        chain = ComposeTransform(self.transforms)
        if len(base_shape) < chain.domain.event_dim:
            raise ValueError(f"base_distribution needs to have shape with size at least "
                             f"{chain.domain.event_dim}, but got {base_shape}.")
        shape = chain.forward_shape(base_shape)
        # parameters of the transforms may broadcast the base's batch
        expanded_base_shape = chain.inverse_shape(shape)
        if base_shape != expanded_base_shape:
            base_distribution = base_distribution.expand(
                expanded_base_shape[:len(expanded_base_shape) - base_event_dim])
        # dims the transforms read as one event become event dims of the base
        reinterpreted = chain.domain.event_dim - base_event_dim
        if reinterpreted > 0:
            base_distribution = Independent(base_distribution, reinterpreted)
        self.base_dist = base_distribution
        event_dim = max(chain.codomain.event_dim,
                        base_event_dim + chain.codomain.event_dim - chain.domain.event_dim)
        cut = len(shape) - event_dim
        super().__init__(shape[:cut], shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _instance if _instance is not None else type(self).__new__(type(self))
        batch_shape = ember.Size(batch_shape)
        shape = batch_shape + self.event_shape
        for t in reversed(self.transforms):
            shape = t.inverse_shape(shape)
        new.base_dist = self.base_dist.expand(
            shape[:len(shape) - len(self.base_dist.event_shape)])
        new.transforms = self.transforms
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False)
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support, len(self.event_shape) - support.event_dim)
        return support

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    def _push(self, x):
        for t in self.transforms:
            x = t(x)
        return x

    def sample(self, sample_shape=ember.Size()):
        with ember.no_grad():
            return self._push(self.base_dist.sample(sample_shape))

    def rsample(self, sample_shape=ember.Size()):
        return self._push(self.base_dist.rsample(sample_shape))

    def log_prob(self, value):
        """The base's density at the preimage, less each transform's log |det J|, each summed
        over the dims that are part of the event at that stage."""
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        log_prob = 0.0
        y = value
        for t in reversed(self.transforms):
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            log_prob = log_prob - sum_rightmost(t.log_abs_det_jacobian(x, y),
                                                event_dim - t.domain.event_dim)
            y = x
        return log_prob + sum_rightmost(self.base_dist.log_prob(y),
                                        event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value):
        # a decreasing chain turns the base's CDF F into 1 - F
        sign = 1
        for t in self.transforms:
            sign = sign * t.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value):
        for t in self.transforms[::-1]:
            value = t.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value):
        return self._push(self.base_dist.icdf(self._monotonize_cdf(value)))
