"""Normalization: batch, layer, group, instance, RMS and local response norms."""
import math

import numpy as np

from ... import _dtype as D, _fast_kernels
from ...autograd import grad_mode
from ...ops.registry import primitive, write_into
from ._memory_format import as_input, as_input_tensor, laid_out, suggested_format
from ._utils import _const, _add_scalar, _xp
from .padding import pad
from .pooling import avg_pool2d, avg_pool3d


# ============================================================================ normalization
def _normalize_array(xp, x, axes, eps, mean=None, var=None):
    """(x - mean) / sqrt(var + eps) with the biased variance over `axes` (or the given stats)."""
    if mean is None:
        mean = x.mean(axis=axes, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    return ((x - mean) / xp.sqrt(var + eps)).astype(x.dtype)


def _normalize_grad(x, gy, axes, eps):
    """Gradient w.r.t. x of xhat = normalize(x) over `axes`, given gy = dL/dxhat; also xhat.

    Written in ember ops from x itself, so the batch statistics are differentiated too and
    the result can be differentiated again.
    """
    xc = x - x.mean(axes, keepdim=True)
    invstd = ((xc * xc).mean(axes, keepdim=True) + eps).rsqrt()
    xhat = xc * invstd
    gx = invstd * (gy - gy.mean(axes, keepdim=True) - xhat * (gy * xhat).mean(axes, keepdim=True))
    return gx, xhat


def _channel_shape(ndim):
    return (1, -1) + (1,) * (ndim - 2)


# Batch and group norm give their output and input gradient the input's memory format
# (channels-last for a channels-last input); layer norm gives contiguous ones.
@primitive("native_batch_norm", node="NativeBatchNormBackward0", save=("self", "weight"))
def _batch_norm(xp, self, weight, bias, *, mean, var, eps, use_batch_stats):
    shape = _channel_shape(self.ndim)
    y = _normalize_array(xp, self, None, eps, mean.reshape(shape), var.reshape(shape))
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    # (an input both contiguous and channels-last, as unit dims make it, counts as contiguous
    # here; its gradient is channels-last nonetheless)
    fmt = None if self.flags.c_contiguous else suggested_format(self)
    return laid_out(xp, y.astype(self.dtype, copy=False), fmt)


@_batch_norm.derivative
def _(ctx, g):
    x, w = ctx.self, ctx.weight
    shape = _channel_shape(x.dim())
    axes = tuple(i for i in range(x.dim()) if i != 1)
    gy = g * w.reshape(shape) if w is not None else g
    if ctx.use_batch_stats:
        gx, xhat = _normalize_grad(x, gy, axes, ctx.eps)
    else:
        mean = _const(ctx.mean.reshape(shape), x)
        invstd = _const((1 / (ctx.var + ctx.eps) ** 0.5).reshape(shape).astype(ctx.var.dtype), x)
        xhat = (x - mean) * invstd
        gx = gy * invstd
    needs = ctx.needs_input_grad
    gw = (g * xhat).sum(axes) if len(needs) > 1 and needs[1] else None
    gb = g.sum(axes) if len(needs) > 2 and needs[2] else None
    return as_input_tensor(gx, x) if needs[0] else None, gw, gb


def _check_channel_dim(input):
    if input.dim() < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(input.dim(), 1)}, {max(input.dim(), 1) - 1}], but got 1)")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-05):
    # nn.functional refuses a single value per channel in training; torch.batch_norm does not
    if training and input.shape[0] * math.prod(input.shape[2:]) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input "
                         f"size {input.shape}")
    return _native_batch_norm(input, running_mean, running_var, weight, bias, training,
                              momentum, eps)


def _native_batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps):
    """Normalize over every dim but the channel dim 1; in training, update the running stats
    in place with the batch mean and the unbiased batch variance (NaN from a single value per
    channel; an empty batch leaves them as they are)."""
    _check_channel_dim(input)
    if not training:
        if running_mean is None:
            raise RuntimeError("running_mean must be defined in evaluation mode")
        if running_var is None:
            raise RuntimeError("running_var must be defined in evaluation mode")
    for name, stat in (("running_mean", running_mean), ("running_var", running_var)):
        if stat is not None and stat.numel() != input.shape[1]:
            raise RuntimeError(f"{name} should contain {input.shape[1]} elements not "
                               f"{stat.numel()}")
    data = input._data
    axes = tuple(i for i in range(data.ndim) if i != 1)
    use_batch_stats = training
    if use_batch_stats:
        count = data.size // data.shape[1] if data.shape[1] else 0
        if count == 0:      # nothing to normalize, no statistics to update
            mean = var = np.zeros(data.shape[1], dtype=data.dtype)
        else:
            mean = data.mean(axis=axes)
            var = ((data - mean.reshape(_channel_shape(data.ndim))) ** 2).mean(axis=axes)
        m = momentum
        if count and running_mean is not None:
            write_into(running_mean, running_mean._data * (1 - m) + mean * m)
        if count and running_var is not None:
            unbiased = var * (count / (count - 1)) if count > 1 else np.full_like(var, np.nan)
            write_into(running_var, running_var._data * (1 - m) + unbiased * m)
    else:
        mean, var = running_mean._data, running_var._data
    return _batch_norm(input, weight, bias, mean=mean.astype(data.dtype),
                       var=var.astype(data.dtype), eps=eps, use_batch_stats=use_batch_stats)


@primitive("native_layer_norm", node="NativeLayerNormBackward0", save=("self", "weight"))
def _layer_norm(xp, self, weight, bias, *, axes, eps):
    if _layer_norm_fast(xp, self, weight, bias):
        n = math.prod(self.shape[axes[0]:])
        # (with grad on, the kernel keeps its centred rows and deviations for the backward)
        y = _fast_kernels.layer_norm_rows(
            self.reshape(-1, n), None if weight is None else weight.reshape(-1),
            None if bias is None else bias.reshape(-1), eps,
            keep=self if grad_mode.state.enabled else None)
        return y.reshape(self.shape)
    y = _normalize_array(xp, self, axes, eps)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return xp.ascontiguousarray(y.astype(self.dtype, copy=False))


@_layer_norm.derivative
def _(ctx, g):
    x, w = ctx.self, ctx.weight
    xp = _xp(g)
    if not grad_mode.is_grad_enabled() and g._dtype == x._dtype and \
            _layer_norm_fast(xp, x._data, None if w is None else w._data, None):
        # no graph to record (no create_graph): the whole backward on arrays, few passes
        n = math.prod(x.shape[ctx.axes[0]:])
        gx, gw, gb = _fast_kernels.layer_norm_backward_rows(
            g._data.reshape(-1, n), x._data.reshape(-1, n),
            None if w is None else w._data.reshape(-1), ctx.eps, key=x._data)
        needs = ctx.needs_input_grad
        # (reshaped only where the shape differs: a fresh array, not a view, becomes .grad
        # without a copy)
        return (_const(_shaped(gx, x.shape), g) if needs[0] else None,
                _const(_shaped(gw, w.shape), g) if needs[1] else None,
                _const(_shaped(gb, w.shape if w is not None else x.shape[ctx.axes[0]:]), g)
                if needs[2] else None)
    gx, xhat = _normalize_grad(x, g * w if w is not None else g, ctx.axes, ctx.eps)
    needs = ctx.needs_input_grad
    # the registry sums these full-shape gradients down to the (trailing) parameter shape
    gw = g * xhat if needs[1] else None
    gb = g if needs[2] else None
    return gx.contiguous() if needs[0] else None, gw, gb


def _shaped(a, shape):
    return a if a.shape == tuple(shape) else a.reshape(shape)


def _layer_norm_fast(xp, x, weight, bias):
    """Whether the array kernels of _fast_kernels do this layer norm: NumPy float32/float64
    arrays, weight and bias (if any) of the same dtype, something to normalize."""
    return xp is np and x.dtype in (np.float32, np.float64) and x.size > 0 and \
        all(a is None or a.dtype == x.dtype for a in (weight, bias))


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    normalized_shape = _normalized_shape(normalized_shape)
    n = len(normalized_shape)
    if n == 0 or tuple(input.shape[input.dim() - n:]) != normalized_shape or input.dim() < n:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input "
                           f"with shape [*, {', '.join(map(str, normalized_shape))}], but got "
                           f"input of size{list(input.shape)}")
    axes = tuple(range(input.dim() - n, input.dim()))
    return _layer_norm(input, weight, bias, axes=axes, eps=eps)


@primitive("native_group_norm", node="NativeGroupNormBackward0", save=("self", "weight"))
def _group_norm(xp, self, weight, bias, *, groups, eps):
    n, c = self.shape[:2]
    y = _normalize_array(xp, self.reshape(n, groups, -1), 2, eps).reshape(self.shape)
    shape = _channel_shape(self.ndim)
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return as_input(xp, y.astype(self.dtype, copy=False), self)


@_group_norm.derivative
def _(ctx, g):
    x, w = ctx.self, ctx.weight
    shape = x.shape
    n = shape[0]
    gy = g * w.reshape(_channel_shape(x.dim())) if w is not None else g
    gx, xhat = _normalize_grad(x.reshape(n, ctx.groups, -1), gy.reshape(n, ctx.groups, -1),
                               (2,), ctx.eps)
    xhat = xhat.reshape(shape)
    axes = tuple(i for i in range(x.dim()) if i != 1)
    needs = ctx.needs_input_grad
    gw = (g * xhat).sum(axes) if needs[1] else None
    gb = g.sum(axes) if needs[2] else None
    return as_input_tensor(gx.reshape(shape), x) if needs[0] else None, gw, gb


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    if input.shape[1] % num_groups != 0:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    channels = input.shape[1]
    # torch's bias message quotes the weight's shape ([0] without a weight), not the bias's
    weight_shape = list(weight.shape) if weight is not None else [0]
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != channels):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {weight_shape} and "
                               f"input of shape {list(input.shape)}")
    return _group_norm(input, weight, bias, groups=num_groups, eps=eps)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-05):
    # nn.functional refuses a single spatial element; torch.instance_norm does not
    if use_input_stats and math.prod(input.shape[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                         f"{input.shape}")
    return _native_instance_norm(input, running_mean, running_var, weight, bias,
                                 use_input_stats, momentum, eps)


def _native_instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                          momentum, eps):
    """Normalize each (sample, channel) over its spatial dims: batch norm of the input seen as
    one sample of N*C channels, as torch computes it. Running stats (one per channel) are
    updated with the batch average of the per-sample statistics."""
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither "
                         "be None")
    if not use_input_stats and running_mean is None:
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    _check_channel_dim(input)
    n, c = input.shape[:2]
    flat = input.reshape(1, n * c, *input.shape[2:])
    weight = weight.repeat(n) if weight is not None else None
    bias = bias.repeat(n) if bias is not None else None
    mean = running_mean.repeat(n) if running_mean is not None else None
    var = running_var.repeat(n) if running_var is not None else None
    out = _native_batch_norm(flat, mean, var, weight, bias, use_input_stats, momentum, eps)
    if mean is not None and use_input_stats:
        write_into(running_mean, mean._data.reshape(n, c).mean(0))
        write_into(running_var, var._data.reshape(n, c).mean(0))
    return out.view(input.shape)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """x / (k + alpha * mean of x^2 over `size` neighbouring channels) ^ beta: the mean is an
    average pool over the channel dim of the zero-padded squares."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input "
                         f"(got {dim} dimensions)")
    if input.numel() == 0:
        return input
    before, after = size // 2, (size - 1) // 2
    square = input * input
    if dim == 3:
        square = pad(square.unsqueeze(1), (0, 0, before, after))
        div = avg_pool2d(square, (size, 1), stride=1).squeeze(1)
    else:
        n, c = input.shape[:2]
        square = pad(square.view(n, 1, c, input.shape[2], -1), (0, 0, 0, 0, before, after))
        div = avg_pool3d(square, (size, 1, 1), stride=1).squeeze(1).view(input.shape)
    return input / (div * alpha + k).pow(beta)


def _normalized_shape(normalized_shape):
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    return tuple(normalized_shape)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean of x^2 over the trailing normalized_shape dims + eps), times weight."""
    if isinstance(normalized_shape, int):
        raise TypeError("rms_norm(): argument 'normalized_shape' (position 2) must be tuple of "
                        "ints, not int")
    shape = tuple(normalized_shape)
    n = len(shape)
    if n == 0 or input.dim() < n or tuple(input.shape[input.dim() - n:]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*{', '.join(map(str, shape))}], but got input of size"
                           f"{list(input.shape)}")
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got "
                           f"weight of shape {list(weight.shape)} and normalized_shape = "
                           f"{list(shape)}")
    dims = tuple(range(input.dim() - n, input.dim()))
    low_precision = input._dtype in (D.float16, D.bfloat16)
    x = input.float() if low_precision else input      # half inputs are computed in float32
    if eps is None:
        eps = D.finfo(x._dtype).eps                    # (float32's eps for them too)
    out = x * _add_scalar(x.pow(2).mean(dims, keepdim=True), other=eps).rsqrt()
    if weight is not None:
        out = out * weight
    return out.to(input.dtype) if low_precision else out
