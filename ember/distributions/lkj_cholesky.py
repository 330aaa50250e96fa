"""LKJCholesky(dim, concentration): the law of the Cholesky factor L of a correlation matrix
L L^T with density proportional to det(L L^T)^(concentration - 1). Draws by the onion method
(not reparameterised)."""
import math

import ember
from . import constraints
from .continuous import Beta
from .distribution import Distribution, broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        self._beta = self._row_radii(self.concentration)
        super().__init__(batch_shape, ember.Size((dim, dim)), validate_args=validate_args)

    def _row_radii(self, concentration):
        """The Beta laws of the squared norms of the rows' off-diagonal parts (the first row
        has none: its draw is unused)."""
        offset = ember.arange(self.dim - 1, dtype=concentration.dtype,
                              device=concentration.device)
        offset = ember.cat([offset.new_zeros((1,)), offset])
        marginal = concentration + 0.5 * (self.dim - 2)
        return Beta(offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)

    def expand(self, batch_shape, _instance=None):
        new = _instance if _instance is not None else type(self).__new__(type(self))
        batch_shape = ember.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=ember.Size()):
        with ember.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            normal = ember.randn(self._extended_shape(sample_shape), dtype=y.dtype,
                                 device=y.device).tril(-1)
            # a uniform direction in each row's strict lower part (none in the first row)
            direction = normal / normal.norm(dim=-1, keepdim=True)
            direction[..., 0, :] = 0
            w = y.sqrt() * direction
            diagonal = (1 - w.pow(2).sum(-1)).clamp(min=ember.finfo(w.dtype).tiny).sqrt()
            return w + ember.diag_embed(diagonal)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # det(L L^T)^(c - 1) times the Jacobian of L -> L L^T: the i-th diagonal entry (i from
        # 2) to the power 2 (c - 1) + dim - i
        diagonal = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = ember.arange(2, self.dim + 1, dtype=self.concentration.dtype,
                             device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diagonal.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalizer = (0.5 * dm1 * math.log(math.pi) + ember.mvlgamma(alpha - 0.5, dm1)
                      - ember.lgamma(alpha) * dm1)
        return unnormalized - normalizer
