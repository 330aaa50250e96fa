"""Dirichlet, reparameterised: draws are normalised Gamma draws, differentiated implicitly."""
import numpy as np

import ember
from .. import _random_recipes as _R
from .._generator import default_generator
from . import constraints
from ._special import beta_sample_grad64
from .distribution import Distribution


def _row_sums(x):
    """Sums along the last dimension (kept) in torch's CPU order for a float64 row of up to
    7 values, found by experiment against torch.sum: the values from the fifth on, left to
    right, then the first four added to that one by one. From 8 values on torch's vectorised
    order is not found yet: NumPy's pairwise sum, which can differ in the last bit."""
    k = x.shape[-1]
    if k > 7:
        return x.sum(-1, keepdims=True)
    if k <= 4:
        order = range(k)
    else:
        order = list(range(4, k)) + [0, 1, 2, 3]
    total = None
    for i in order:
        total = x[..., i].copy() if total is None else total + x[..., i]
    return total[..., None]


class _Dirichlet(ember.autograd.Function):
    """Dirichlet(alpha) draws (Gamma(alpha, 1) draws over their sum) whose gradient is PyTorch's
    implicit one: with g_i = dx_i/dalpha_i of x_i's marginal Beta(alpha_i, total - alpha_i)
    (total - alpha_i fixed) over 1 - x_i, dalpha_i = g_i (dx_i - sum_j x_j dx_j)."""

    @staticmethod
    def forward(ctx, alpha):
        finfo = ember.finfo(alpha.dtype)
        # as torch._sample_dirichlet: float64 Gamma draws (each at least the smallest normal
        # double) over their sum along the last dimension, rounded to alpha's dtype
        gammas = _R.standard_gamma(default_generator, alpha.detach().numpy().astype(np.float64))
        draws = gammas / _row_sums(gammas)
        sample = ember.tensor(draws, dtype=alpha.dtype, device=alpha.device)
        # off 0 and off 1 (the float just below it), as PyTorch's draws are
        sample = sample.clamp(min=finfo.tiny, max=1 - finfo.eps / 2)
        ctx.save_for_backward(alpha, sample)
        return sample

    @staticmethod
    def backward(ctx, grad):
        alpha, x = (t.detach() for t in ctx.saved_tensors)
        a, xs = alpha.numpy().astype(np.float64), x.numpy().astype(np.float64)
        rest = a.sum(-1, keepdims=True) - a
        g = beta_sample_grad64(xs, a, rest) / (1 - xs)
        g = ember.tensor(g, dtype=grad.dtype, device=grad.device)
        return g * (grad - (x * grad).sum(-1, keepdim=True))


class Dirichlet(Distribution):
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True
    _expand_dims = {"concentration": 1}

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        excess = (self.concentration - 1).clamp(min=0)
        mode = excess / excess.sum(-1, keepdim=True)
        # every concentration below 1: the density peaks at a corner, PyTorch picks the first
        corner = ember.zeros_like(mode)
        corner[..., 0] = 1
        return ember.where((self.concentration < 1).all(-1, keepdim=True), corner, mode)

    @property
    def variance(self):
        total = self.concentration.sum(-1, keepdim=True)
        return (self.concentration * (total - self.concentration)
                / (total.pow(2) * (total + 1)))

    def rsample(self, sample_shape=ember.Size()):
        return _Dirichlet.apply(self.concentration.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (ember.xlogy(c - 1.0, value).sum(-1) + ember.lgamma(c.sum(-1))
                - ember.lgamma(c).sum(-1))

    def entropy(self):
        c = self.concentration
        k, total = c.shape[-1], c.sum(-1)
        return (ember.lgamma(c).sum(-1) - ember.lgamma(total) - (k - total) * ember.digamma(total)
                - ((c - 1.0) * ember.digamma(c)).sum(-1))
