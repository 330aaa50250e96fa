"""ember.distributions: torch.distributions' core (parameterised distributions with sampling
from ember's random stream, differentiable log_prob/entropy/moments, transforms and
transformed distributions, and KL divergences)."""
from . import constraints, transforms, utils
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .continuous import Beta, Exponential, Gamma, Laplace, Normal, Uniform
from .counts import Binomial, Geometric, Multinomial, NegativeBinomial, Poisson
from .dirichlet import Dirichlet
from .discrete import Bernoulli, Categorical, OneHotCategorical
from .multivariate import Independent, MultivariateNormal
from .continuous import Cauchy, Chi2, StudentT
from .transformed_distribution import TransformedDistribution
from .transformed import (Gumbel, HalfCauchy, HalfNormal, Kumaraswamy, LogisticNormal,
                          LogNormal, Pareto, Weibull)
from .continuous_bernoulli import ContinuousBernoulli
from .fishersnedecor import FisherSnedecor
from .generalized_pareto import GeneralizedPareto
from .inverse_gamma import InverseGamma
from .lkj_cholesky import LKJCholesky
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .one_hot_categorical import OneHotCategoricalStraightThrough
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .von_mises import VonMises
from .wishart import Wishart
from .transforms import (AbsTransform, AffineTransform, CatTransform, ComposeTransform,
                         CorrCholeskyTransform, CumulativeDistributionTransform, ExpTransform,
                         IndependentTransform, LowerCholeskyTransform,
                         PositiveDefiniteTransform, PowerTransform, ReshapeTransform,
                         SigmoidTransform, SoftmaxTransform, SoftplusTransform, StackTransform,
                         StickBreakingTransform, TanhTransform, Transform, identity_transform)
from .constraint_registry import biject_to, transform_to
from . import constraint_registry
from .kl import kl_divergence, register_kl
from . import _modules

_modules.install(__name__)

__all__ = ["AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "CatTransform",
           "Categorical", "Cauchy", "Chi2", "ComposeTransform", "ContinuousBernoulli",
           "CorrCholeskyTransform", "CumulativeDistributionTransform", "Dirichlet",
           "Distribution", "ExpTransform", "Exponential", "ExponentialFamily",
           "FisherSnedecor", "Gamma", "GeneralizedPareto", "Geometric", "Gumbel",
           "HalfCauchy", "HalfNormal", "Independent", "IndependentTransform", "InverseGamma",
           "Kumaraswamy", "LKJCholesky", "Laplace", "LogNormal", "LogisticNormal",
           "LowRankMultivariateNormal", "LowerCholeskyTransform", "MixtureSameFamily",
           "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal",
           "OneHotCategorical", "OneHotCategoricalStraightThrough", "Pareto", "Poisson",
           "PositiveDefiniteTransform", "PowerTransform", "RelaxedBernoulli",
           "RelaxedOneHotCategorical", "ReshapeTransform", "SigmoidTransform",
           "SoftmaxTransform", "SoftplusTransform", "StackTransform",
           "StickBreakingTransform", "StudentT", "TanhTransform", "Transform",
           "TransformedDistribution", "Uniform", "VonMises", "Weibull", "Wishart",
           "biject_to", "identity_transform", "kl_divergence", "register_kl",
           "transform_to"]
