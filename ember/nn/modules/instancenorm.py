"""Instance normalization layers: InstanceNorm1d/2d/3d and LazyInstanceNorm1d/2d/3d.

As in PyTorch, a lazy instance norm defaults to affine=True and track_running_stats=True (unlike
the eager InstanceNorm), and reads num_features from dim 1 of the first input even when that
input has no batch dim.
"""
import warnings

from .. import functional as F
from .batchnorm import _NormBase, _LazyNormBase


class _InstanceNorm(_NormBase):
    """Normalizes each (sample, channel) over its spatial dims. Unlike batch norm: no affine
    parameters and no running stats by default, and an input without a batch dim is accepted."""
    _spatial_dims = None        # spatial dims of an input without a batch dim: 1, 2 or 3

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def _check_input_dim(self, input):
        dims = self._spatial_dims + 1
        if input.dim() not in (dims, dims + 1):
            raise ValueError(f"expected {dims}D or {dims + 1}D input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.dim() - self._spatial_dims - 1
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You "
                          f"can silence this warning by not passing in num_features, which is "
                          f"not used because affine=False", stacklevel=2)
        if feature_dim == 0:
            return self._normalize(input.unsqueeze(0)).squeeze(0)
        return self._normalize(input)

    def _normalize(self, input):
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight,
                               self.bias, self.training or not self.track_running_stats,
                               0.0 if self.momentum is None else self.momentum, self.eps)


class InstanceNorm1d(_InstanceNorm):
    _spatial_dims = 1


class InstanceNorm2d(_InstanceNorm):
    _spatial_dims = 2


class InstanceNorm3d(_InstanceNorm):
    _spatial_dims = 3


class LazyInstanceNorm1d(_LazyNormBase, InstanceNorm1d):
    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyNormBase, InstanceNorm2d):
    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyNormBase, InstanceNorm3d):
    cls_to_become = InstanceNorm3d
