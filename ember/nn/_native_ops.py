"""torch's native nn entry points (torch.constant_pad_nd, ...; in nn, as they are built on
nn.functional): constant_pad_nd, convolution, native_layer_norm/batch_norm/
group_norm, native_dropout, native_channel_shuffle, ctc_loss."""
import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
from ..ops._utils import as_shape
from ..ops.random import bernoulli_mask
from ..ops.registry import primitive
from ..ops.statistics import _constant
from . import functional as F
from .functional import normalization as _normalization
from .functional.dropout import _check_p
from ._toplevel_ops import _type_error, _reduction_word


# ----------------------------------------------------------------------------- native nn entries
def constant_pad_nd(input, pad, value=0):
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    return F.pad(input, pad, value=value)


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """The convolution torch.nn.functional's convNd/conv_transposeNd all call."""
    for position, (name, value) in enumerate((("stride", stride), ("padding", padding),
                                              ("dilation", dilation),
                                              ("output_padding", output_padding)), 4):
        if name == "output_padding":
            position = 8
        if not isinstance(value, (list, tuple)):
            raise _type_error("convolution", name, "tuple of ints", value, position)
    n = weight.dim() - 2
    if transposed:
        conv = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[n - 1]
        return conv(input, weight, bias, stride, padding, output_padding, groups, dilation)
    return (F.conv1d, F.conv2d, F.conv3d)[n - 1](input, weight, bias, stride, padding,
                                                  dilation, groups)


def _stats(data, axes, eps):
    """(mean, 1 / sqrt(biased variance + eps)) over `axes`, kept as size-one dims."""
    mean = data.mean(axis=axes, keepdims=True)
    var = ((data - mean) ** 2).mean(axis=axes, keepdims=True)
    return mean, 1 / np.sqrt(var + eps)


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(output, mean, rstd): the statistics over the normalized dims, kept as size-one dims."""
    out = F.layer_norm(input, normalized_shape, weight, bias, eps)
    axes = tuple(range(input.dim() - len(as_shape((normalized_shape,))), input.dim()))
    mean, rstd = _stats(input._data, axes, eps)
    return out, _constant(mean, input), _constant(rstd, input)


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """(output, batch mean, batch 1/std) in training; the statistics are empty in evaluation."""
    axes = tuple(i for i in range(input.dim()) if i != 1)
    if training:
        mean, rstd = (_constant(s.reshape(-1), input) for s in _stats(input._data, axes, eps))
    else:
        mean = rstd = _constant(np.zeros(0), input)
    out = _normalization._native_batch_norm(input, running_mean, running_var, weight, bias,
                                            training, momentum, eps)
    return out, mean, rstd


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(output, mean, rstd), the statistics per (sample, group): shape (N, group)."""
    out = F.group_norm(input, group, weight, bias, eps)
    mean, rstd = _stats(input._data.reshape(N, group, -1), 2, eps)
    return out, _constant(mean.reshape(N, group), input), _constant(rstd.reshape(N, group), input)


@primitive("native_dropout", node="NativeDropoutBackward0")
def _native_dropout(xp, self, *, mask, scale):
    return self * (mask * self.dtype.type(scale)).astype(self.dtype)


@_native_dropout.derivative
def _(ctx, grad):
    return grad * _constant(ctx.mask * ctx.scale, grad)


def native_dropout(input, p, train):
    """(output, the boolean mask of the elements kept)."""
    _check_p(p)
    if train is False:
        mask = np.ones(input.shape, bool)
        return _native_dropout(input, mask=mask, scale=1.0), Tensor._make(mask, D.bool_,
                                                                          input._device)
    mask = bernoulli_mask(input.shape, 1 - p, like=input._data)
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    return (_native_dropout(input, mask=mask, scale=scale),
            Tensor._make(mask, D.bool_, input._device))


def native_channel_shuffle(input, groups):
    return F.channel_shuffle(input, groups)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0,
             zero_infinity=False):
    """torch's native ctc_loss: `reduction` as an int (1 mean, 2 sum, other none; left out,
    none, as torch.ctc_loss does in practice)."""
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      _reduction_word("ctc_loss", reduction), zero_infinity)


__all__ = ['constant_pad_nd', 'convolution', 'native_layer_norm', 'native_batch_norm',
               'native_group_norm', 'native_dropout', 'native_channel_shuffle', 'ctc_loss']
