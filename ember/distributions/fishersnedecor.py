"""FisherSnedecor (the F distribution): (X1 / df1) / (X2 / df2) for independent chi-squared
X1, X2 with df1, df2 degrees of freedom."""
import ember
from . import constraints
from .continuous import Gamma, _all_numbers
from .distribution import Distribution, broadcast_all

__all__ = ["FisherSnedecor"]


def _nan_where(condition, value):
    return ember.where(condition, float("nan"), value)


class FisherSnedecor(Distribution):
    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True
    _expand_dims = {"df1": 0, "df2": 0}

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)    # X1 / df1, X2 / df2
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        batch = ember.Size() if _all_numbers(df1, df2) else self.df1.size()
        super().__init__(batch, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        return new

    @property
    def mean(self):
        return _nan_where(self.df2 <= 2, self.df2 / (self.df2 - 2))

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return _nan_where(self.df1 <= 2, mode)

    @property
    def variance(self):
        df1, df2 = self.df1, self.df2
        var = 2 * df2.pow(2) * (df1 + df2 - 2) / (df1 * (df2 - 2).pow(2) * (df2 - 4))
        return _nan_where(df2 <= 4, var)

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        x1 = self._gamma1.rsample(sample_shape).view(shape)
        x2 = self._gamma2.rsample(sample_shape).view(shape)
        tiny = ember.finfo(x2.dtype).tiny
        x2 = x2.clamp(min=tiny)
        return (x1 / x2).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        half1, half2 = self.df1 * 0.5, self.df2 * 0.5
        ratio = self.df1 / self.df2
        log_beta = ember.lgamma(half1 + half2) - ember.lgamma(half1) - ember.lgamma(half2)
        return (log_beta + half1 * ratio.log() + (half1 - 1) * ember.log(value)
                - (half1 + half2) * ember.log1p(ratio * value))
