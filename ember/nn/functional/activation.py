"""Activations (relu, gelu, softmax, glu, ...) and gumbel_softmax.

Each op that PyTorch's graph shows as its own node (GeluBackward0, ...) is a primitive here: a
forward on raw arrays and a derivative written in ember ops, so gradients of gradients work. Ops
that PyTorch shows as a composite (softsign, ...) are written from other ember ops, so the graphs
match.
"""
import math
import warnings

import numpy as np

from ... import _dtype as D, _fast_kernels
from ..._tensor import Tensor
from ...autograd import grad_mode
from ...ops.registry import backward_records_nothing, primitive
from ...ops import reduction as R
from ...ops import pointwise as P
from ...ops.creation import empty_like, zeros_like
from ... import _random_recipes as R_
from ...ops.random import _gen
from ...ops import softmax as _softmax
from ._utils import _special, _xp, _dtype_word, _on_device, _not_implemented_backward
from ...ops.joining import cat

sigmoid = P.sigmoid
tanh = P.tanh


def _elementwise(name, node, forward, derivative, save=("self",)):
    """A one-input primitive with options: forward(xp, x, **opts), derivative(ctx, grad).
    Half-precision inputs are computed in float32 and rounded once, as torch's kernels do."""
    op = primitive(name, node=node, save=save, opmath=True)(forward)
    op.derivative(derivative)
    return op


# ============================================================================ activations
# torch names the in-place form of some activations' nodes differently (elu_ records
# EluBackward1): such an op has an in-place twin, the same forward and derivative under that name.
_INPLACE_TWINS = {}


def _inplace_twin(op, node):
    twin = primitive(op.name + "_", node=node, save=op.save, opmath=op.opmath)(op.forward)
    twin.derivative(op.derivative_fn)
    _INPLACE_TWINS[op] = twin
    return twin


def _apply(op, input, inplace, **options):
    if inplace:
        return _INPLACE_TWINS.get(op, op).inplace(input, **options)
    return op(input, **options)


def _slope_backward(name, node):
    """The backward of a piecewise-linear activation as a node of its own, as torch records
    it: grad_output times the slope at self (`slope`: a bool mask or an array of slopes).
    self stays an input, so a gradient of the gradient reaches self (as zeros, the slope being
    piecewise constant) and the gradient can be differentiated in grad_output."""
    @primitive(name, node=node, save=("self",))
    def backward(xp, grad_output, self, *, slope):
        if slope.dtype == bool:
            return P.masked_keep(xp, slope, grad_output)
        return (grad_output * slope).astype(grad_output.dtype)

    @backward.derivative
    def _(ctx, grad):
        return backward(grad, ctx.self, slope=ctx.slope), P._zeros(ctx.self)

    return backward


def relu(input, inplace=False):
    return _apply(P.relu.op, input, inplace)


def relu_(input):
    return relu(input, inplace=True)


_hardtanh_backward = _slope_backward("hardtanh_backward", "HardtanhBackwardBackward0")
_hardtanh = _elementwise(
    "hardtanh", "HardtanhBackward0",
    lambda xp, self, *, min_val, max_val: xp.clip(self, min_val, max_val).astype(self.dtype),
    lambda ctx, g: _hardtanh_backward(g, ctx.self, slope=(ctx.self._data > ctx.min_val) &
                                      (ctx.self._data < ctx.max_val)))


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _apply(_hardtanh, input, inplace, min_val=min_val, max_val=max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def _leaky_relu_derivative(ctx, g):
    x = ctx.self._data
    slope = _xp(g).where(x > 0, 1, ctx.negative_slope).astype(x.dtype)
    return _leaky_relu_backward(g, ctx.self, slope=slope)


_leaky_relu_backward = _slope_backward("leaky_relu_backward", "LeakyReluBackwardBackward0")
_leaky_relu = _elementwise(
    "leaky_relu", "LeakyReluBackward0",
    lambda xp, self, *, negative_slope: xp.where(self > 0, self, self * negative_slope)
    .astype(self.dtype), _leaky_relu_derivative)
_inplace_twin(_leaky_relu, "LeakyReluBackward1")


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _apply(_leaky_relu, input, inplace, negative_slope=negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, inplace=True)


def _elu_forward(xp, self, *, alpha, scale, input_scale):
    neg = xp.expm1(xp.minimum(self, 0) * input_scale) * (alpha * scale)
    return xp.where(self > 0, self * scale, neg).astype(self.dtype)


def _elu_derivative(ctx, g):
    x = ctx.self
    neg = (x * ctx.input_scale).exp() * (ctx.input_scale * ctx.alpha * ctx.scale)
    return g * P.where(x > 0, ctx.scale, neg)


_elu = _elementwise("elu", "EluBackward0", _elu_forward, _elu_derivative)
_inplace_twin(_elu, "EluBackward1")
def _celu_derivative(ctx, g):
    # torch's CeluBackward0 takes 1 / alpha of alpha rounded to float32, even in float64
    x = ctx.self
    input_scale = 1.0 / float(np.float32(ctx.alpha))
    return g * P.where(x > 0, 1.0, (x * input_scale).exp() * (input_scale * ctx.alpha))


_celu = _elementwise("celu", "CeluBackward0", _elu_forward, _celu_derivative)
_inplace_twin(_celu, "CeluBackward1")
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def elu(input, alpha=1.0, inplace=False):
    return _apply(_elu, input, inplace, alpha=alpha, scale=1.0, input_scale=1.0)


def elu_(input, alpha=1.0):
    return elu(input, alpha, inplace=True)


def selu(input, inplace=False):
    return _apply(_elu, input, inplace, alpha=_SELU_ALPHA, scale=_SELU_SCALE, input_scale=1.0)


def selu_(input):
    return selu(input, inplace=True)


def celu(input, alpha=1.0, inplace=False):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _apply(_celu, input, inplace, alpha=alpha, scale=1.0, input_scale=1.0 / alpha)


def celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_GELU_C = 0.044715


def _gelu_forward(xp, self, *, approximate):
    if approximate == "tanh":
        inner = _SQRT_2_OVER_PI * (self + _GELU_C * self * self * self)
        return (0.5 * self * (1 + xp.tanh(inner))).astype(self.dtype)
    if xp is np and self.dtype == np.float32:       # (half precision arrives as float32)
        # (with grad on, the kernel keeps 1 / Phi(x) for its backward)
        return _fast_kernels.gelu_f32(self, keep=grad_mode.state.enabled)
    cdf = 0.5 * (1 + _special().erf(xp, self * (1 / math.sqrt(2.0))))
    return (self * cdf).astype(self.dtype)


def _gelu_derivative(ctx, g):
    x = ctx.self
    if ctx.approximate == "tanh":
        t = ((x + x * x * x * _GELU_C) * _SQRT_2_OVER_PI).tanh()
        inner_grad = (x * x * (3 * _GELU_C) + 1) * _SQRT_2_OVER_PI
        return g * ((t + 1) * 0.5 + x * 0.5 * (1 - t * t) * inner_grad)
    if backward_records_nothing() and g._dtype is x._dtype is D.float32 and \
            g._data.__class__ is x._data.__class__ is np.ndarray and g.shape == x.shape:
        # the float32 kernel straight on the arrays (the op call below runs the same one)
        return Tensor._make(_fast_kernels.gelu_backward_f32(g._data, x._data), D.float32,
                            g._device)
    return _gelu_backward(g, x)


@primitive("gelu_backward", node="GeluBackwardBackward0", save=("grad_output", "self"),
           opmath=True)
def _gelu_backward(xp, grad_output, self):
    """grad * gelu'(x) = grad * (Phi(x) + x phi(x)) of the exact (erf) GELU."""
    if xp is np and self.dtype == np.float32:
        return _fast_kernels.gelu_backward_f32(grad_output, self)
    cdf = 0.5 * (1 + _special().erf(xp, self * (1 / math.sqrt(2.0))))
    pdf = xp.exp(self * self * -0.5) * (1 / math.sqrt(2 * math.pi))
    return (grad_output * (cdf + self * pdf)).astype(self.dtype, copy=False)


@_gelu_backward.derivative
def _(ctx, gg):
    # out = g * gelu'(x): d/dg = gelu'(x); d/dx = g * gelu''(x) = g * phi(x) * (2 - x^2)
    x, g = ctx.self, ctx.grad_output
    pdf = (x * x * -0.5).exp() * (1 / math.sqrt(2 * math.pi))
    return _gelu_backward(gg, x), gg * g * pdf * (2 - x * x)


_gelu = _elementwise("gelu", "GeluBackward0", _gelu_forward, _gelu_derivative)


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return _gelu(input, approximate=approximate)


def _silu_derivative(ctx, g):
    s = ctx.self.sigmoid()
    return g * (s * (1 + ctx.self * (1 - s)))


_silu = _elementwise("silu", "SiluBackward0",
                     lambda xp, self: self * _special().sigmoid(xp, self), _silu_derivative)


def silu(input, inplace=False):
    return _apply(_silu, input, inplace)


def _softplus_array(xp, x):
    """log(1 + exp(x)) without overflow."""
    return xp.maximum(x, 0) + xp.log1p(xp.exp(-xp.abs(x)))


def _mish_forward(xp, self):
    return (self * xp.tanh(_softplus_array(xp, self))).astype(self.dtype)


def _mish_derivative(ctx, g):
    x = ctx.self
    t = softplus(x).tanh()
    return g * (t + x * x.sigmoid() * (1 - t * t))


_mish = _elementwise("mish", "MishBackward0", _mish_forward, _mish_derivative)


def mish(input, inplace=False):
    return _apply(_mish, input, inplace)


def _softplus_forward(xp, self, *, beta, threshold):
    bx = self * beta
    return xp.where(bx > threshold, self, _softplus_array(xp, bx) / beta).astype(self.dtype)


def _softplus_derivative(ctx, g):
    bx = ctx.self * ctx.beta
    return g * P.where(bx > ctx.threshold, 1.0, bx.sigmoid()).to(g.dtype)


_softplus = _elementwise("softplus", "SoftplusBackward0", _softplus_forward,
                         _softplus_derivative)


def softplus(input, beta=1.0, threshold=20.0):
    return _softplus(input, beta=beta, threshold=threshold)


_log_sigmoid = _elementwise(
    "log_sigmoid", "LogSigmoidBackward0",
    lambda xp, self: (-_softplus_array(xp, -self)).astype(self.dtype),
    lambda ctx, g: g * (-ctx.self).sigmoid())


def logsigmoid(input):
    return _log_sigmoid(input)


def softsign(input):
    return input / (input.abs() + 1)


_hardsigmoid = _elementwise(
    "hardsigmoid", "HardsigmoidBackward0",
    lambda xp, self: (xp.clip(self + 3, 0, 6) / 6).astype(self.dtype),
    # torch's kernel multiplies by the float32 constant 1/6, also in float64; its backward
    # has no derivative
    lambda ctx, g: _not_implemented_backward(
        g * ((ctx.self > -3) & (ctx.self < 3)) * _ONE_SIXTH_F32, ctx.self,
        backward="hardsigmoid_backward"))
_ONE_SIXTH_F32 = float(np.float32(1 / 6))


def hardsigmoid(input, inplace=False):
    return _apply(_hardsigmoid, input, inplace)


def _hardswish_derivative(ctx, g):
    x = ctx.self
    middle = x / 3 + 0.5
    return g * P.where(x < -3, 0.0, P.where(x <= 3, middle, 1.0)).to(g.dtype)


_hardswish = _elementwise(
    "hardswish", "HardswishBackward0",
    lambda xp, self: (self * xp.clip(self + 3, 0, 6) / 6).astype(self.dtype),
    _hardswish_derivative)


def hardswish(input, inplace=False):
    return _apply(_hardswish, input, inplace)


@primitive("prelu", node="PreluKernelBackward0", save=("self", "weight"))
def _prelu(xp, self, weight):
    return xp.where(self > 0, self, weight * self).astype(self.dtype)


@_prelu.derivative
def _(ctx, g):
    x, w = ctx.self, ctx.weight
    positive = x > 0
    gx = P.where(positive, g, g * w) if ctx.needs_input_grad[0] else None
    gw = P.where(positive, 0.0, g * x).to(g.dtype) if ctx.needs_input_grad[1] else None
    return gx, gw


def prelu(input, weight):
    """max(0, x) + weight * min(0, x), with one weight per channel (dim 1) or one in all."""
    if weight.numel() != 1:
        if input.dim() < 2 or weight.numel() != input.shape[1]:
            channels = input.shape[1] if input.dim() >= 2 else 1
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {weight.numel()} and channel size = "
                               f"{channels}.")
        weight = weight.reshape((-1,) + (1,) * (input.dim() - 2))
    return _prelu(input, weight)


_threshold = _elementwise(
    "threshold", "ThresholdBackward0",
    lambda xp, self, *, threshold, value: xp.where(self > threshold, self, value)
    .astype(self.dtype),
    lambda ctx, g: P._threshold_backward(g, ctx.self, threshold=ctx.threshold))
_inplace_twin(_threshold, "ThresholdBackward1")


def threshold(input, threshold, value, inplace=False):
    return _apply(_threshold, input, inplace, threshold=threshold, value=value)


def threshold_(input, threshold, value):
    return _apply(_threshold, input, True, threshold=threshold, value=value)


def tanhshrink(input):
    return input - input.tanh()


def _outside(x, lambd):
    """Where |x| > lambd (written as two comparisons: a negative lambd keeps everything)."""
    return (x > lambd) | (x < -lambd)


_hardshrink_backward = _slope_backward("hardshrink_backward", "HardshrinkBackwardBackward0")
_hardshrink = _elementwise(
    "hardshrink", "HardshrinkBackward0",
    lambda xp, self, *, lambd: xp.where(_outside(self, lambd), self, 0).astype(self.dtype),
    lambda ctx, g: _hardshrink_backward(g, ctx.self, slope=_outside(ctx.self._data, ctx.lambd)))


def _check_floating(input, kernel):
    if not input.is_floating_point():
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{_dtype_word(input._dtype)}'")


def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, else 0."""
    _check_floating(input, "hardshrink_cpu")
    return _hardshrink(input, lambd=lambd)


_softshrink_backward = _slope_backward("softshrink_backward", "SoftshrinkBackwardBackward0")
_softshrink = _elementwise(
    "softshrink", "SoftshrinkBackward0",
    lambda xp, self, *, lambd: xp.where(self > lambd, self - lambd,
                                        xp.where(self < -lambd, self + lambd, 0))
    .astype(self.dtype),
    lambda ctx, g: _softshrink_backward(g, ctx.self, slope=_outside(ctx.self._data, ctx.lambd)))


def softshrink(input, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, 0 between."""
    _check_floating(input, "softshrink_check")
    if lambd < 0:
        top = D.finfo(input._dtype).max
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype "
                           f"{_dtype_word(input._dtype)}, but found {lambd:g}")
    return _softshrink(input, lambd=lambd)


# rrelu: x where x > 0, else x times a slope: drawn per element from U(lower, upper) while
# training, (lower + upper) / 2 otherwise. The slopes (1 where x > 0) are the op's `noise`.
_rrelu_backward = _slope_backward("rrelu_with_noise_backward", "RreluWithNoiseBackwardBackward0")
_rrelu = _elementwise("rrelu_with_noise", "RreluWithNoiseBackward0",
                      lambda xp, self, *, noise: (self * noise).astype(self.dtype),
                      lambda ctx, g: _rrelu_backward(g, ctx.self, slope=ctx.noise))
_inplace_twin(_rrelu, "RreluWithNoiseBackward1")


def _rrelu_slopes(x, lower, upper):
    """torch's training-mode noise: for each element <= 0 (or NaN), in order, one float64
    uniform u (a 64-bit draw), slope u * (upper - lower) + lower (not fused), with the bounds
    first rounded to the input's compute type (float32 below float64); the others get 1."""
    if x.dtype != np.float64:
        lower, upper = float(np.float32(lower)), float(np.float32(upper))
    neg = ~(x > 0)
    u = R_.uniform01_double(_gen(None), int(np.count_nonzero(neg)))
    slopes = np.ones(x.shape, np.float64)
    slopes[neg] = u * (upper - lower) + lower
    return slopes


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    x = input._data
    if training and input._dtype.name == "float16":      # (torch's CPU kernel has no Half)
        raise NotImplementedError("\"rrelu_with_noise_out_cpu\" not implemented for 'Half'")
    if training:
        slopes = _on_device(_rrelu_slopes(np.asarray(x), lower, upper), input)
    else:
        slopes = (lower + upper) / 2
    # (in eval mode torch's slope is read in the kernel's float32 for the half types)
    noise_dtype = np.float32 if input._dtype._half and not training else x.dtype
    noise = _xp(input).where(x > 0, 1, slopes).astype(noise_dtype)
    return _apply(_rrelu, input, inplace, noise=noise)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, inplace=True)


def _softmax_dim(name, ndim):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  f"to include dim=X as an argument.", stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("softmax", input.dim())
    return _softmax.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim())
    return _softmax.log_softmax(input, dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("softmin", input.dim())
    if dtype is not None:
        input = input.to(dtype)
    return _softmax.softmax(-input, dim)


@primitive("glu", node="GluBackward0", save=("self",), opmath=True)
def _glu(xp, self, *, dim):
    a, b = xp.split(self, 2, axis=dim)
    return (a * _special().sigmoid(xp, b)).astype(self.dtype)


@_glu.derivative
def _(ctx, g):
    a, b = ctx.self.chunk(2, ctx.dim)
    s = b.sigmoid()
    return cat([g * s, g * a * s * (1 - s)], ctx.dim)


def glu(input, dim=-1):
    """a * sigmoid(b) for the two halves a, b of input along dim."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    dim = dim % input.dim()
    if input.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size "
                           f"{input.shape[dim]}")
    return _glu(input, dim=dim)


# ============================================================================ gumbel softmax
def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    # Gumbel(0, 1) noise, drawn into a contiguous tensor whatever logits' layout (as torch)
    gumbels = -empty_like(logits, memory_format="torch.contiguous_format").exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = zeros_like(logits).scatter_(dim, index, 1.0)
    # straight through: the values of the one-hot sample, the gradient of the soft one
    return y_hard - y_soft.detach() + y_soft
