"""ExponentialFamily: densities p(x) = h(x) exp(<t(x), theta> - A(theta)); the entropy and the
KL divergence within one family follow from the log normalizer A by its gradient."""
import abc

import ember
from .distribution import Distribution
from .continuous import Beta, Exponential, Gamma, Normal
from .counts import Poisson
from .dirichlet import Dirichlet
from .discrete import Bernoulli

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution, metaclass=abc.ABCMeta):
    """Subclasses give `_natural_params` (a tuple of tensors), `_log_normalizer(*params)` and
    `_mean_carrier_measure` (E[log h(x)])."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        """H = A(theta) - <theta, grad A(theta)> - E[log h(x)], the gradient (= E[t(x)])
        taken by autograd (kept differentiable)."""
        params = [p.detach().requires_grad_() for p in self._natural_params]
        log_norm = self._log_normalizer(*params)
        grads = ember.autograd.grad(log_norm.sum(), params, create_graph=True)
        result = log_norm - self._mean_carrier_measure
        for param, grad in zip(params, grads):
            result = result - (param * grad).reshape(self._batch_shape + (-1,)).sum(-1)
        return result


def _register_virtual_subclasses():
    # the families PyTorch derives from ExponentialFamily that ember defines elsewhere (their
    # own entropies are used); isinstance / issubclass answer as in PyTorch
    for cls in (Bernoulli, Beta, Dirichlet, Exponential, Gamma, Normal, Poisson):
        ExponentialFamily.register(cls)


_register_virtual_subclasses()
