"""VonMises(loc, concentration): the circular normal, density exp(k cos(x - loc)) / (2 pi
I0(k)) on [-pi, pi). Draws are torch's: Best and Fisher's rejection sampler as torch runs it
(ember._random_recipes.von_mises; not reparameterised)."""
import math

import numpy as np

import ember
from .. import _random_recipes as _R
from .._generator import default_generator
from . import constraints
from .continuous import _all_numbers
from .distribution import Distribution, broadcast_all

__all__ = ["VonMises"]


# Abramowitz and Stegun's polynomial approximations (9.8.1 - 9.8.4) of I0 and I1, as PyTorch
# evaluates them: in t^2 = (x / 3.75)^2 below x = 3.75, in 3.75 / x above
_I_SMALL = {0: [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813],
            1: [0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411]}
_I_LARGE = {0: [0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706,
                0.02635537, -0.01647633, 0.00392377],
            1: [0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555, 0.02282967,
                -0.02895312, 0.01787654, -0.00420059]}


def _polynomial(coefficients, x):
    result = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        result = result * x + c
    return result


def _log_modified_bessel(x, order):
    """log I_order(x) for x > 0, order 0 or 1."""
    y = (x / 3.75).pow(2)
    small = _polynomial(_I_SMALL[order], y).log()
    if order == 1:
        small = x.log() + small
    large = x - 0.5 * x.log() + _polynomial(_I_LARGE[order], 3.75 / x).log()
    return ember.where(x < 3.75, small, large)


class VonMises(Distribution):
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False
    _expand_dims = {"loc": 0, "concentration": 0}

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        batch = ember.Size() if _all_numbers(loc, concentration) else self.loc.size()
        super().__init__(batch, validate_args=validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        k = self.concentration
        return (k * ember.cos(value - self.loc) - math.log(2 * math.pi)
                - _log_modified_bessel(k, 0))

    def sample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        kappa = self.concentration.detach().double().expand(shape).numpy().copy()
        loc = self.loc.detach().double().expand(shape).numpy()
        angle = ember.tensor(_R.von_mises(default_generator, loc, kappa), dtype=ember.float64)
        return angle.to(self.loc.dtype)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        """1 - I1(k) / I0(k), the circular variance."""
        k = self.concentration
        return 1 - (_log_modified_bessel(k, 1) - _log_modified_bessel(k, 0)).exp()
