"""ember.distributions: torch.distributions' core (parameterised distributions with sampling
from ember's random stream, differentiable log_prob/entropy/moments, and KL divergences)."""
from . import constraints
from .distribution import Distribution
from .continuous import Beta, Exponential, Gamma, Laplace, Normal, Uniform
from .counts import Binomial, Geometric, Multinomial, NegativeBinomial, Poisson
from .dirichlet import Dirichlet
from .discrete import Bernoulli, Categorical, OneHotCategorical
from .multivariate import Independent, MultivariateNormal
from .kl import kl_divergence, register_kl

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Dirichlet", "Distribution",
           "Exponential", "Gamma", "Geometric", "Independent", "Laplace", "Multinomial",
           "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical", "Poisson",
           "Uniform", "constraints", "kl_divergence", "register_kl"]
