"""ember.distributions: torch.distributions' core (parameterised distributions with sampling
from ember's random stream, differentiable log_prob/entropy/moments, transforms and
transformed distributions, and KL divergences)."""
from . import constraints, transforms
from .distribution import Distribution
from .continuous import Beta, Exponential, Gamma, Laplace, Normal, Uniform
from .counts import Binomial, Geometric, Multinomial, NegativeBinomial, Poisson
from .dirichlet import Dirichlet
from .discrete import Bernoulli, Categorical, OneHotCategorical
from .multivariate import Independent, MultivariateNormal
from .more_continuous import Cauchy, Chi2, StudentT
from .transformed_distribution import TransformedDistribution
from .transformed import (Gumbel, HalfCauchy, HalfNormal, Kumaraswamy, LogisticNormal,
                          LogNormal, Pareto, Weibull)
from .transforms import (AbsTransform, AffineTransform, ComposeTransform, ExpTransform,
                         PowerTransform, SigmoidTransform, SoftmaxTransform,
                         StickBreakingTransform, TanhTransform, Transform)
from .kl import kl_divergence, register_kl

__all__ = ["AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "Categorical",
           "Cauchy", "Chi2", "ComposeTransform", "Dirichlet", "Distribution", "ExpTransform",
           "Exponential", "Gamma", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal",
           "Independent", "Kumaraswamy", "Laplace", "LogisticNormal", "LogNormal", "Multinomial",
           "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical", "Pareto",
           "Poisson", "PowerTransform", "SigmoidTransform", "SoftmaxTransform",
           "StickBreakingTransform", "StudentT",
           "TanhTransform", "Transform", "TransformedDistribution", "Uniform", "Weibull",
           "constraints", "kl_divergence", "register_kl", "transforms"]
