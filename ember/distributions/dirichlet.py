"""Dirichlet, reparameterised: draws are normalised Gamma draws, differentiated implicitly."""
import numpy as np

import ember
from .. import _random_recipes as _R
from .._generator import default_generator
from . import constraints
from ._special import beta_sample_grad64
from .distribution import Distribution


def _row_sums(x):
    """Sums along the last dimension (kept) in torch's CPU order for float64 rows, found by
    experiment against torch.sum (rows of 1 to 70000 values, and one of 2**20 + 53):

    - four accumulators of 4-wide vectors take each 16 values in turn (values 0-3 the
      first, 4-7 the second, ...); the running sums are kept in levels: every 16 chunks of
      16 values the first level is added into the second and restarted, every 16 of those
      the second into the third, and so on (4 levels); the levels are then added up, the
      first level first (L3 + (L2 + (L1 + L0)));
    - the 4-wide vectors left after the last 16 values go into the first accumulator, and
      the accumulators are added up as a3 + (a2 + (a1 + a0));
    - the values after the last whole vector are summed left to right, and the four lanes
      added to that one by one, lane 0 first.
    (Found with torch's AVX-512 CPU kernels; another build's vector width could sum in
    another order.)"""
    k = x.shape[-1]
    rows = x.reshape(-1, k)
    nvec = k // 4
    chunks = nvec // 4
    blocks = rows[:, :16 * chunks].reshape(len(rows), chunks, 4, 4)  # chunk, accumulator, lane
    levels = [None] * 4
    for c in range(chunks):
        levels[0] = blocks[:, c].copy() if levels[0] is None else levels[0] + blocks[:, c]
        done, level = c + 1, 0
        while level < 3 and done % 16 == 0:
            up = levels[level + 1]
            levels[level + 1] = levels[level] if up is None else up + levels[level]
            levels[level] = None
            done //= 16
            level += 1
    acc = None
    for part in levels:
        if part is not None:
            acc = part if acc is None else part + acc
    accs = [None] * 4 if acc is None else [acc[:, i] for i in range(4)]
    for v in range(4 * chunks, nvec):
        vec = rows[:, 4 * v:4 * v + 4]
        accs[0] = vec.copy() if accs[0] is None else accs[0] + vec
    lanes = accs[0]
    for a in accs[1:]:
        if a is not None:
            lanes = a + lanes
    total = None
    for i in range(4 * nvec, k):
        total = rows[:, i].copy() if total is None else total + rows[:, i]
    if lanes is not None:
        for j in range(4):
            total = lanes[:, j].copy() if total is None else lanes[:, j] + total
    return total.reshape(x.shape[:-1] + (1,))


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
