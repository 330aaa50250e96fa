"""The one-family submodules torch.distributions has (torch.distributions.normal, ...) where
ember keeps several families in one file: light modules exposing each family under the name
PyTorch uses (importable as ember.distributions.normal and so on)."""
import sys
import types

# submodule name -> the family (an attribute of the package) it holds
_ALIASES = {"bernoulli": "Bernoulli", "beta": "Beta", "binomial": "Binomial",
            "categorical": "Categorical", "cauchy": "Cauchy", "chi2": "Chi2",
            "exponential": "Exponential", "gamma": "Gamma", "geometric": "Geometric",
            "gumbel": "Gumbel", "half_cauchy": "HalfCauchy", "half_normal": "HalfNormal",
            "independent": "Independent", "kumaraswamy": "Kumaraswamy", "laplace": "Laplace",
            "log_normal": "LogNormal", "logistic_normal": "LogisticNormal",
            "multinomial": "Multinomial", "multivariate_normal": "MultivariateNormal",
            "negative_binomial": "NegativeBinomial", "normal": "Normal", "pareto": "Pareto",
            "poisson": "Poisson", "studentT": "StudentT", "uniform": "Uniform",
            "weibull": "Weibull"}


def install(package_name):
    package = sys.modules[package_name]
    for module_name, family in _ALIASES.items():
        full_name = f"{package_name}.{module_name}"
        module = types.ModuleType(full_name, f"{package_name}.{family}'s module.")
        cls = getattr(package, family)
        setattr(module, family, cls)
        cls.__module__ = full_name       # (its printed name is torch's: ...normal.Normal)
        module.__all__ = [family]
        sys.modules[full_name] = module
        setattr(package, module_name, module)
