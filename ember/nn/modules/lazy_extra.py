"""LazyConvTranspose1d/2d/3d and LazyInstanceNorm1d/2d/3d, on the machinery of `lazy.py`.

As in PyTorch, a lazy instance norm defaults to affine=True and track_running_stats=True (unlike
the eager InstanceNorm), and reads num_features from dim 1 of the first input even when that
input has no batch dim.
"""
from .conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .lazy import UninitializedParameter, _LazyConvMixin, _LazyNormBase
from .normalization import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d


class _LazyConvTransposeMixin(_LazyConvMixin):
    """A transposed convolution whose in_channels come from its first input: its weight is
    (in_channels, out_channels // groups, *kernel)."""

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                 dtype=None):
        # skip _LazyConvMixin.__init__ (a plain convolution's argument order)
        super(_LazyConvMixin, self).__init__(0, 0, kernel_size, stride, padding, output_padding,
                                             groups, False, dilation, padding_mode)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def _weight_shape(self):
        # (a transposed convolution's weight is (in, out / groups, *kernel))
        return (self.in_channels, self.out_channels // self.groups, *self.kernel_size)


class LazyConvTranspose1d(_LazyConvTransposeMixin, ConvTranspose1d):
    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTransposeMixin, ConvTranspose2d):
    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTransposeMixin, ConvTranspose3d):
    cls_to_become = ConvTranspose3d


class LazyInstanceNorm1d(_LazyNormBase, InstanceNorm1d):
    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyNormBase, InstanceNorm2d):
    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyNormBase, InstanceNorm3d):
    cls_to_become = InstanceNorm3d
