"""ember.distributions: torch.distributions' core (parameterised distributions with sampling
from ember's random stream, differentiable log_prob/entropy/moments, and KL divergences)."""
from . import constraints
from .distribution import Distribution
from .continuous import Beta, Exponential, Gamma, Laplace, Normal, Uniform
from .discrete import Bernoulli, Categorical, OneHotCategorical
from .multivariate import Independent, MultivariateNormal
from .kl import kl_divergence, register_kl

__all__ = ["Bernoulli", "Beta", "Categorical", "Distribution", "Exponential", "Gamma",
           "Independent", "Laplace", "MultivariateNormal", "Normal", "OneHotCategorical",
           "Uniform", "constraints", "kl_divergence", "register_kl"]
