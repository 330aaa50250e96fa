"""Dropout: dropout, its feature (channel) forms and alpha dropout."""
import math
import warnings

import numpy as np

from ...ops.creation import zeros
from ...ops.random import bernoulli_mask
from ._utils import _const, _on_device
from .activation import _SELU_ALPHA, _SELU_SCALE


# ============================================================================ dropout
def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _keep_mask(input, p, shape, feature=False):
    """torch's noise: bernoulli_(1 - p) on a fresh tensor of input's dtype (laid out like
    input; a feature dropout's (N, C, 1, ...) noise is a plain contiguous one), divided by
    1 - p (in that dtype), as a constant tensor."""
    dt = input._dtype.np
    mask = bernoulli_mask(shape, 1 - p, like=None if feature else input._data)
    if input._dtype._half:           # (torch divides the half types in float32, rounds once)
        mask = (mask.astype(np.float32) / np.float32(1 - p)).astype(dt)
    else:
        mask = mask.astype(dt)
        mask /= dt.type(1 - p)
    return _const(_on_device(mask, input), input)


def _drop_all(input, inplace):
    """p = 1: everything dropped, without drawing (as torch)."""
    zero = zeros((), dtype=input.dtype, device=input.device)
    return input.mul_(zero) if inplace else input * zero


def dropout(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    if not training or p == 0:
        return input
    if p == 1:
        return _drop_all(input, inplace)
    mask = _keep_mask(input, p, input.shape)
    return input.mul_(mask) if inplace else input * mask


def _feature_dropout(input, p, training, inplace, batched):
    _check_p(p)
    if not training or p == 0:
        return input
    if batched and input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = input.shape[:2] + (1,) * (input.dim() - 2) if batched else \
        input.shape[:1] + (1,) * (input.dim() - 1)
    if p == 1:
        return _drop_all(input, inplace)
    mask = _keep_mask(input, p, shape, feature=True)
    return input.mul_(mask) if inplace else input * mask


def dropout1d(input, p=0.5, training=True, inplace=False):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D "
                           f"input. Note that dropout1d exists to provide channel-wise dropout "
                           f"on inputs with 1 spatial dimension, a channel dimension, and an "
                           f"optional batch dimension (i.e. 2D or 3D inputs).")
    return _feature_dropout(input, p, training, inplace, input.dim() == 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    dim = input.dim()
    if dim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {dim}-D input to dropout2d, which is deprecated "
                      f"and will result in an error in a future release. To retain the "
                      f"behavior and silence this warning, please use dropout instead. Note "
                      f"that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      f"spatial dimensions, a channel dimension, and an optional batch "
                      f"dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if dim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                      "channel-wise 1D dropout behavior is desired - input is interpreted as "
                      "shape (N, C, L), where C is the channel dim. This behavior will change "
                      "in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise "
                      "dropout behavior, please switch to using dropout1d instead.",
                      stacklevel=2)
    return _feature_dropout(input, p, training, inplace, True)


def dropout3d(input, p=0.5, training=True, inplace=False):
    dim = input.dim()
    if dim not in (4, 5):
        warnings.warn(f"dropout3d: Received a {dim}-D input to dropout3d, which is deprecated "
                      f"and will result in an error in a future release. To retain the "
                      f"behavior and silence this warning, please use dropout instead. Note "
                      f"that dropout3d exists to provide channel-wise dropout on inputs with 3 "
                      f"spatial dimensions, a channel dimension, and an optional batch "
                      f"dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    if dim != 5:            # unbatched (C, D, H, W): drop whole channels of the one sample
        return _feature_dropout(input.unsqueeze(0), p, training, inplace, True).squeeze(0)
    return _feature_dropout(input, p, training, inplace, True)


# Alpha dropout keeps SELU's self-normalisation: a dropped element takes SELU's negative
# saturation value -alpha (alpha = SELU's scale * alpha), then a * x + b restores zero mean and
# unit variance.
_SELU_SATURATION = _SELU_ALPHA * _SELU_SCALE


def _alpha_dropout(input, p, training, inplace, feature):
    _check_p(p)
    if p == 0 or not training or input.numel() == 0:
        return input
    if feature and input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if p == 1:
        return _drop_all(input, inplace)
    shape = input.shape[:2] + (1,) * (input.dim() - 2) if feature else input.shape
    keep = bernoulli_mask(shape, 1 - p, like=None if feature else input._data) \
        .astype(input._dtype.np)
    alpha = _SELU_SATURATION
    a = 1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
    scale = _const(_on_device(keep * input._dtype.np.type(a), input), input)
    # kept: + alpha a p; dropped: - alpha a (1 - p)
    shift = _const(_on_device(((keep - 1) * (alpha * a) + alpha * a * p)
                              .astype(input._dtype.np), input), input)
    if inplace:
        return input.mul_(scale).add_(shift)
    return input * scale + shift


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _alpha_dropout(input, p, training, inplace, feature=False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels (dim 1)."""
    return _alpha_dropout(input, p, training, inplace, feature=True)
