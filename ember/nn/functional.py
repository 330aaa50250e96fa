"""ember.nn.functional: activations, dropout, normalization, embedding, distances and losses.

Each op that PyTorch's graph shows as its own node (GeluBackward0, NllLossBackward0,
NativeBatchNormBackward0, ...) is a primitive here: a forward on raw arrays and a derivative
written in ember ops, so gradients of gradients work. Ops that PyTorch shows as a composite
(softsign, l1_loss, kl_div, ...) are written from other ember ops, so the graphs match.
"""
import math
import warnings

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
from ..ops.registry import primitive, COMMON, write_into
from ..ops import norms as _norms, softmax as _softmax
from ..ops import pointwise as P, arithmetic as _arith, _pointwise_common as _pointwise
from ..ops.blas import addmm, matmul
from ..ops.creation import zeros
from ..ops.random import _rng
from ..ops.special import xlogy as _special_xlogy
from ..autograd import grad_mode
from ._layout import as_input, as_input_tensor, laid_out, suggested_format

sigmoid = P.sigmoid
tanh = P.tanh


def _special():
    from ..ops import special
    return special


def _const(array, like):
    """Wrap an array of constants (a mask, a coefficient) as a tensor on `like`'s device."""
    return Tensor._make(array, D.from_numpy_dtype(array.dtype), like._device)


def _xp(t):
    """The array module (numpy or cupy) of a tensor's device."""
    from ..ops.registry import xp_of
    return xp_of(t._device)


def _dtype_word(dtype):
    from .._printing import scalar_type_name
    return scalar_type_name(dtype)


# ============================================================================ linear
def linear(input, weight, bias=None):
    """y = x W^T + b. A 2-D input with a bias is one addmm, as in PyTorch's graph."""
    if bias is None:
        return matmul(input, weight.t())
    if input.dim() == 2:
        return addmm(bias, input, weight.t())
    flat = input.reshape(-1, input.shape[-1])
    out = addmm(bias, flat, weight.t())
    return out.view(*input.shape[:-1], out.shape[-1])


@primitive("_trilinear", node="TrilinearBackward0", save=("i1", "i2", "i3"))
def _trilinear(xp, i1, i2, i3):
    """out[b, o] = sum_ij i1[b, i] i2[o, i, j] i3[b, j]: bilinear's product, one node in torch's
    graph (its `_trilinear`, here only in the layout bilinear uses)."""
    n_out, n1, n2 = i2.shape
    # (i1 W_o) for every output o at once, then the inner product with i3
    t = xp.matmul(i1, i2.transpose(1, 0, 2).reshape(n1, n_out * n2)).reshape(-1, n_out, n2)
    return (t * i3[:, None, :]).sum(-1).astype(i1.dtype, copy=False)


@_trilinear.derivative
def _(ctx, g):
    x1, w, x2 = ctx.i1, ctx.i2, ctx.i3
    n_out, n1, n2 = w.shape
    needs = ctx.needs_input_grad
    g1 = gw = g2 = None
    if needs[0]:      # sum_oj g[b, o] w[o, i, j] x2[b, j]
        gx2 = (g.unsqueeze(2) * x2.unsqueeze(1)).reshape(-1, n_out * n2)
        g1 = gx2.matmul(w.permute(1, 0, 2).reshape(n1, n_out * n2).t())
    if needs[1]:      # sum_b g[b, o] x1[b, i] x2[b, j]
        outer = (x1.unsqueeze(2) * x2.unsqueeze(1)).reshape(-1, n1 * n2)
        gw = g.t().matmul(outer).reshape(n_out, n1, n2)
    if needs[2]:      # sum_oi g[b, o] x1[b, i] w[o, i, j]
        g2 = (g.unsqueeze(2) * x1.unsqueeze(1)).reshape(-1, n_out * n1).matmul(
            w.reshape(n_out * n1, n2))
    return g1, gw, g2


def _check_bilinear(input1, input2, weight, bias):
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and "
                           f"{input2.dim()}")
    for i, (a, b) in enumerate(zip(input1.shape[:-1], input2.shape[:-1])):
        if a != b:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: "
                               f"got {a} and {b}")
    for name, x, dim in (("input1", input1, 1), ("input2", input2, 2)):
        if weight.dim() > dim and x.shape[-1] != weight.shape[dim]:
            raise RuntimeError(f"bilinear(): {name} size does not match weight size: got "
                               f"{x.shape[-1]} but expected {weight.shape[dim]}")
    if bias is not None and bias.shape[-1] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[-1]} but expected {weight.shape[0]}")


def bilinear(input1, input2, weight, bias=None):
    """y_o = x1^T W_o x2 + b_o over the last dims (leading dims are batch dims)."""
    _check_bilinear(input1, input2, weight, bias)
    out = _trilinear(input1.reshape(-1, input1.shape[-1]), weight,
                     input2.reshape(-1, input2.shape[-1]))
    out = out.view(*input1.shape[:-1], weight.shape[0])
    return out + bias if bias is not None else out


def _elementwise(name, node, forward, derivative, save=("self",)):
    """A one-input primitive with options: forward(xp, x, **opts), derivative(ctx, grad).
    Half-precision inputs are computed in float32 and rounded once, as torch's kernels do."""
    op = primitive(name, node=node, save=save, opmath=True)(forward)
    op.derivative(derivative)
    return op


# ============================================================================ scalar operands
# torch's C++ composites (losses, distances, attention) call some ops with a Python number
# operand, and its graph shows those as nodes of their own with a single edge: `x + eps` there
# is AddBackward1, where Python's `x + eps` (torch's and ember's) is AddBackward0 with a second,
# empty edge. Those ops (declared in ops/pointwise.py) make ember's composites show torch's graphs.
_add_scalar, _sub_scalar = _arith._add_scalar, _arith._sub_scalar
_mul_scalar, _div_scalar = _arith._mul_scalar, _arith._div_scalar
# torch.norm(x, p, dim): linalg.vector_norm's forward and derivative, own node
_norm = primitive("norm.ScalarOpt_dim", node="NormBackward1", save=("self", "result"))(
    _norms._vector_norm.forward)
_norm.derivative(_norms._vector_norm.derivative_fn)


def _clamp_min_scalar(input, min):
    return P._clamp_min(input, min=min, max=None)       # (ClampMinBackward0, as torch's)


def _scalar_minus(value, tensor):
    """value - tensor as torch's C++ writes it: a filled tensor minus tensor (SubBackward0 with
    an empty first edge; Python's `value - tensor` is RsubBackward1)."""
    from ..ops.creation import full_like
    return full_like(tensor, value) - tensor


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
        return backward(grad, ctx.self, slope=ctx.slope), _pointwise._zeros(ctx.self)

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
    cdf = 0.5 * (1 + _special().erf(xp, self * (1 / math.sqrt(2.0))))
    return (self * cdf).astype(self.dtype)


def _gelu_derivative(ctx, g):
    x = ctx.self
    if ctx.approximate == "tanh":
        t = ((x + x * x * x * _GELU_C) * _SQRT_2_OVER_PI).tanh()
        inner_grad = (x * x * (3 * _GELU_C) + 1) * _SQRT_2_OVER_PI
        return g * ((t + 1) * 0.5 + x * 0.5 * (1 - t * t) * inner_grad)
    cdf = ((x * (1 / math.sqrt(2.0))).erf() + 1) * 0.5
    pdf = (x * x * -0.5).exp() * (1 / math.sqrt(2 * math.pi))
    return g * (cdf + x * pdf)


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


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    x = input._data
    if training:
        slopes = _on_device(_rng(None).uniform(lower, upper, x.shape), input)
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
    from ..ops.joining import cat
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


# ============================================================================ dropout
def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _on_device(array, like):
    """A host array (random draws come from the CPU generator) on `like`'s device."""
    return array if like._device.type == "cpu" else _xp(like).asarray(array)


def _keep_mask(input, p, shape):
    """Bernoulli(1 - p) mask scaled by 1 / (1 - p), as a constant tensor of input's dtype."""
    keep = _rng(None).random(shape) >= p
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    mask = keep.astype(input._dtype.np) * input._dtype.np.type(scale)
    return _const(_on_device(mask, input), input)


def dropout(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    if not training or p == 0:
        return input
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
    mask = _keep_mask(input, p, shape)
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
        zero = zeros((), dtype=input.dtype, device=input.device)
        return input.mul_(zero) if inplace else input * zero
    shape = input.shape[:2] + (1,) * (input.dim() - 2) if feature else input.shape
    keep = (_rng(None).random(shape) >= p).astype(input._dtype.np)
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
    y = _normalize_array(xp, self, axes, eps)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return xp.ascontiguousarray(y.astype(self.dtype, copy=False))


@_layer_norm.derivative
def _(ctx, g):
    x, w = ctx.self, ctx.weight
    gx, xhat = _normalize_grad(x, g * w if w is not None else g, ctx.axes, ctx.eps)
    needs = ctx.needs_input_grad
    # the registry sums these full-shape gradients down to the (trailing) parameter shape
    gw = g * xhat if needs[1] else None
    gb = g if needs[2] else None
    return gx.contiguous() if needs[0] else None, gw, gb


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


# ============================================================================ channel shuffles
def _pixel_shuffle_array(xp, x, r):
    """(*, C r^2, H, W) -> (*, C, H r, W r): each group of r^2 channels fills r x r blocks."""
    *batch, c, h, w = x.shape
    nb = len(batch)
    x = x.reshape(*batch, c // (r * r), r, r, h, w)
    perm = tuple(range(nb)) + (nb, nb + 3, nb + 1, nb + 4, nb + 2)
    return xp.ascontiguousarray(x.transpose(perm)).reshape(*batch, c // (r * r), h * r, w * r)


def _pixel_unshuffle_array(xp, x, r):
    """The inverse: (*, C, H r, W r) -> (*, C r^2, H, W)."""
    *batch, c, h, w = x.shape
    nb = len(batch)
    x = x.reshape(*batch, c, h // r, r, w // r, r)
    perm = tuple(range(nb)) + (nb, nb + 2, nb + 4, nb + 1, nb + 3)
    return xp.ascontiguousarray(x.transpose(perm)).reshape(*batch, c * r * r, h // r, w // r)


@primitive("pixel_shuffle", node="PixelShuffleBackward0")
def _pixel_shuffle(xp, self, *, factor):
    return _pixel_shuffle_array(xp, self, factor)


@primitive("pixel_unshuffle", node="PixelUnshuffleBackward0")
def _pixel_unshuffle(xp, self, *, factor):
    return _pixel_unshuffle_array(xp, self, factor)


@_pixel_shuffle.derivative
def _(ctx, g):
    return _pixel_unshuffle(g, factor=ctx.factor)


@_pixel_unshuffle.derivative
def _(ctx, g):
    return _pixel_shuffle(g, factor=ctx.factor)


def _check_pixel_shuffle(name, input, factor, factor_name):
    if input.dim() < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input "
                           f"with {input.dim()} dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {factor_name}, but got {factor}")


def pixel_shuffle(input, upscale_factor):
    _check_pixel_shuffle("pixel_shuffle", input, upscale_factor, "upscale_factor")
    c = input.shape[-3]
    if c % (upscale_factor * upscale_factor):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {upscale_factor * upscale_factor}")
    return _pixel_shuffle(input, factor=upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    _check_pixel_shuffle("pixel_unshuffle", input, downscale_factor, "downscale_factor")
    for what, dim in (("height", -2), ("width", -1)):
        if input.shape[dim] % downscale_factor:
            raise RuntimeError(f"pixel_unshuffle expects {what} to be divisible by "
                               f"downscale_factor, but input.size({dim})={input.shape[dim]} is "
                               f"not divisible by {downscale_factor}")
    return _pixel_unshuffle(input, factor=downscale_factor)


@primitive("channel_shuffle", node="ChannelShuffleBackward0")
def _channel_shuffle(xp, self, *, groups):
    """Channels (g, C/g) read as (C/g, g): channel i of group k moves to position i g + k."""
    n, c = self.shape[:2]
    x = self.reshape(n, groups, c // groups, *self.shape[2:]).swapaxes(1, 2)
    return xp.ascontiguousarray(x).reshape(self.shape)


@_channel_shuffle.derivative
def _(ctx, g):
    # shuffling C/g groups undoes shuffling g groups
    return _channel_shuffle(g, groups=ctx.input_shape()[1] // ctx.groups)


def channel_shuffle(input, groups):
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    c = input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    return _channel_shuffle(input, groups=groups)


# ============================================================================ embedding
@primitive("embedding", node="EmbeddingBackward0")
def _embedding(xp, weight, *, indices, padding_idx, scale_grad_by_freq):
    return weight[indices]


@_embedding.derivative
def _(ctx, g):
    num, dim = ctx.input_shape()
    flat = ctx.indices.reshape(-1)
    rows = g.reshape(-1, dim)
    keep = None
    if ctx.padding_idx is not None:
        keep = (flat != ctx.padding_idx)
    if ctx.scale_grad_by_freq:
        counts = _xp(g).bincount(flat, minlength=num)[flat]
        keep = (1.0 / counts) if keep is None else keep / counts
    if keep is not None:
        rows = rows * _const(keep.astype(g._dtype.np)[:, None], g)
    index = _const(flat.astype(np.int64), g)
    return zeros(num, dim, dtype=g.dtype, device=g.device).index_add(0, index, rows)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    if input._dtype not in (D.int64, D.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"{input.type().replace('torch.', 'ember.')} instead (while checking "
                           f"arguments for embedding)")
    num = weight.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < num, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -num, "Padding_idx must be within num_embeddings"
            padding_idx = num + padding_idx
    indices = input._data
    if indices.size and (indices.min() < 0 or indices.max() >= num):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        embedding_renorm_(weight, input, max_norm, norm_type)
    return _embedding(weight, indices=indices, padding_idx=padding_idx,
                      scale_grad_by_freq=scale_grad_by_freq)


def embedding_renorm_(weight, input, max_norm, norm_type):
    """Rescale (in place, untracked) the referenced rows whose norm exceeds max_norm."""
    xp = _xp(weight)
    rows = xp.unique(input._data.reshape(-1))
    data = weight._data
    # the vector p-norm of each row (max |w| for p = inf)
    norms = xp.linalg.norm(data[rows], ord=float(norm_type), axis=1)
    scale = xp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).astype(data.dtype)
    data[rows] = data[rows] * scale[:, None]
    weight._version_counter.bump()
    return weight


def one_hot(tensor, num_classes=-1):
    if tensor._dtype is not D.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    data = tensor._data
    if data.size and data.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        if not data.size:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(data.max()) + 1
    elif data.size and data.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = (data[..., None] == _xp(tensor).arange(num_classes)).astype(np.int64)
    return Tensor._make(out, D.int64, tensor._device)


# ============================================================================ distances
def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    denom = _clamp_min_scalar(_norms.vector_norm(input, p, dim, True), eps).expand_as(input)
    return input / denom if out is None else _arith.div(input, denom, out=out)


def cosine_similarity(x1, x2, dim=1, eps=1e-08):
    x1, x2 = _broadcast(x1, x2)
    n1 = _norms.vector_norm(x1, 2, dim, True).clone()
    n2 = _norms.vector_norm(x2, 2, dim, True).clone()
    # torch floors the norms at eps outside the graph: the gradient flows as if unclamped
    with grad_mode.no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-06, keepdim=False):
    dim = max(x1.dim(), x2.dim(), 1) - 1
    return _norm(_add_scalar(x1 - x2, other=eps), ord=float(p), dims=(dim,), keepdim=keepdim)


def _broadcast(a, b):
    if a.shape == b.shape:
        return a, b
    n = max(a.dim(), b.dim())
    sa = (1,) * (n - a.dim()) + tuple(a.shape)
    sb = (1,) * (n - b.dim()) + tuple(b.shape)
    for i in reversed(range(n)):
        if sa[i] != sb[i] and sa[i] != 1 and sb[i] != 1:
            raise RuntimeError(f"The size of tensor a ({sa[i]}) must match the size of tensor b "
                               f"({sb[i]}) at non-singleton dimension {i}")
    shape = tuple(max(x, y) for x, y in zip(sa, sb))
    return a.expand(shape), b.expand(shape)


# ============================================================================ losses
def _legacy_reduction(size_average, reduce, emit_warning=True):
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "none" if not reduce else ("mean" if size_average else "sum")
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use "
                      f"reduction='{ret}' instead.", stacklevel=3)
    return ret


def _reduction(reduction, size_average=None, reduce=None):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _reduce_array(xp, loss, reduction):
    if reduction == "mean":
        if loss.size == 0:      # torch's mean of nothing is nan, without NumPy's warning
            return xp.asarray(xp.nan, dtype=loss.dtype)
        return loss.mean(dtype=loss.dtype)
    if reduction == "sum":
        return loss.sum(dtype=loss.dtype)
    return loss


def _reduced_grad(ctx, g):
    """The incoming gradient spread back over the elements of an elementwise loss."""
    if ctx.reduction == "mean":
        n = 1
        for s in ctx.input_shape():
            n *= s
        return g / n
    return g


def _warn_size(input, target):
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input "
                      f"size ({input.shape}). This will likely lead to incorrect results due to "
                      f"broadcasting. Please ensure they have the same size.", stacklevel=3)


def _pointwise_loss(op, input, target, reduction, **options):
    _warn_size(input, target)
    input, target = _broadcast(input, target)
    return op(input, target, reduction=reduction, **options)


def _both_grads(ctx, g_input):
    needs = ctx.needs_input_grad
    return (g_input if needs[0] else None), (-g_input if needs[1] else None)


@primitive("mse_loss", node="MseLossBackward0", save=("self", "target"), promote=COMMON)
def _mse_loss(xp, self, target, *, reduction):
    d = self - target
    return _reduce_array(xp, d * d, reduction)


@_mse_loss.derivative
def _(ctx, g):
    return _both_grads(ctx, _reduced_grad(ctx, g) * 2 * (ctx.self - ctx.target))


def _check_weight(weight, input):
    if weight is not None and weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")


def _weighted_reduce(loss, weight, reduction):
    """A pointwise loss times per-element weights, reduced; 'mean' is the weighted mean."""
    loss = loss * weight
    if reduction == "mean":
        return loss.sum() / weight.sum()
    return _reduce(loss, reduction)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = _reduction(reduction, size_average, reduce)
    if weight is not None:
        _check_weight(weight, input)
        _warn_size(input, target)
        return _weighted_reduce((input - target) ** 2, weight, reduction)
    return _pointwise_loss(_mse_loss, input, target, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = _reduction(reduction, size_average, reduce)
    _check_weight(weight, input)
    _warn_size(input, target)
    loss = (input - target).abs()
    return _weighted_reduce(loss, weight, reduction) if weight is not None else \
        _reduce(loss, reduction)


def _smooth_l1_forward(xp, self, target, *, reduction, beta):
    d = xp.abs(self - target)
    loss = xp.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta).astype(d.dtype)
    return _reduce_array(xp, loss, reduction)


_smooth_l1_loss = primitive("smooth_l1_loss", node="SmoothL1LossBackward0",
                            save=("self", "target"), promote=COMMON)(_smooth_l1_forward)


@_smooth_l1_loss.derivative
def _(ctx, g):
    d = ctx.self - ctx.target
    beta = ctx.beta
    slope = P.where(d < -beta, -1.0, P.where(d > beta, 1.0, d / beta)).to(d.dtype)
    return _both_grads(ctx, _reduced_grad(ctx, g) * slope)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    reduction = _reduction(reduction, size_average, reduce)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0.0:
        return l1_loss(input, target, reduction=reduction)
    return _pointwise_loss(_smooth_l1_loss, input, target, reduction, beta=beta)


@primitive("huber_loss", node="HuberLossBackward0", save=("self", "target"), promote=COMMON)
def _huber_loss(xp, self, target, *, reduction, delta):
    d = xp.abs(self - target)
    loss = xp.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)).astype(d.dtype)
    return _reduce_array(xp, loss, reduction)


@_huber_loss.derivative
def _(ctx, g):
    d = ctx.self - ctx.target
    delta = ctx.delta
    slope = P.where(d < -delta, -delta, P.where(d > delta, delta, d)).to(d.dtype)
    return _both_grads(ctx, _reduced_grad(ctx, g) * slope)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    reduction = _reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is not None:
        # torch weighs the unreduced loss, then reduces it as usual (a plain mean)
        _check_weight(weight, input)
        loss = _pointwise_loss(_huber_loss, input, target, "none", delta=delta)
        return _reduce(loss * weight, reduction)
    return _pointwise_loss(_huber_loss, input, target, reduction, delta=delta)


# ---------------------------------------------------------------------------- binary
def _no_grad_argument(tensor, argument, function):
    """torch's error for a tensor argument its function is not differentiable for (weights):
    such an argument is an option of the op, with no edge in the graph."""
    if tensor is not None and tensor.requires_grad and grad_mode.is_grad_enabled():
        raise RuntimeError(f"The function '{function}' is not differentiable with respect to "
                           f"argument '{argument}'. This input cannot have requires_grad True.")
    return None if tensor is None else tensor._data


def _const_or_none(array, like):
    return None if array is None else _const(array, like)


@primitive("binary_cross_entropy", node="BinaryCrossEntropyBackward0", save=("self", "target"))
def _bce(xp, self, target, *, weight, reduction):
    # written so that nan is out of range too
    if not xp.all((self >= 0) & (self <= 1)):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if not xp.all((target >= 0) & (target <= 1)):
        raise RuntimeError("all elements of target should be between 0 and 1")
    # PyTorch clamps each log at -100 so that a saturated prediction costs 100, not inf
    log_p = xp.maximum(xp.log(self), -100)
    log_q = xp.maximum(xp.log1p(-self), -100)
    loss = -(target * log_p + (1 - target) * log_q)
    if weight is not None:
        loss = loss * weight
    return _reduce_array(xp, loss.astype(self.dtype), reduction)


@_bce.derivative
def _(ctx, g):
    x, t, w = ctx.self, ctx.target, _const_or_none(ctx.weight, g)
    g = _reduced_grad(ctx, g)
    if w is not None:
        g = g * w
    needs = ctx.needs_input_grad
    gx = g * (x - t) / (x * (1 - x)).clamp_min(1e-12) if needs[0] else None
    gt = None
    if needs[1]:
        gt = g * ((-x).log1p() - x.log())        # unclamped, as torch's target gradient
    return gx, gt


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the "
                         f"input size ({input.shape}) is deprecated. Please ensure they have "
                         f"the same size.")
    if weight is not None and weight.shape != input.shape:
        # torch expands the weight to the target's size (naming the first bad dim from the
        # right), then writes the loss into a tensor of the input's shape
        for i in range(1, min(weight.dim(), target.dim()) + 1):
            if weight.shape[-i] not in (1, target.shape[-i]):
                raise RuntimeError(f"Attempting to broadcast a dimension of length "
                                   f"{weight.shape[-i]} at -{i}! Mismatching argument at index "
                                   f"1 had {weight.shape}; but expected shape should be "
                                   f"broadcastable to {list(target.shape)}")
        shape = _broadcast(weight, target)[0].shape
        if shape != input.shape:
            raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the "
                               f"broadcast shape {list(shape)}")
        weight = weight.expand(input.shape)
    if target.dtype != input.dtype:
        raise RuntimeError(f"Found dtype {_dtype_word(target.dtype)} but expected "
                           f"{_dtype_word(input.dtype)}")
    return _bce(input, target, weight=_no_grad_argument(weight, "weight", "binary_cross_entropy"),
                reduction=reduction)


@primitive("binary_cross_entropy_with_logits", node="BinaryCrossEntropyWithLogitsBackward0",
           save=("self", "target"))
def _bce_logits(xp, self, target, *, weight, pos_weight, reduction):
    # (1 - t) x + l (log(1 + e^-|x|) + max(-x, 0)),  l = 1 + (pos_weight - 1) t
    softplus_neg = xp.log1p(xp.exp(-xp.abs(self))) + xp.maximum(-self, 0)
    scale = 1 if pos_weight is None else 1 + (pos_weight - 1) * target
    loss = (1 - target) * self + scale * softplus_neg
    if weight is not None:
        loss = loss * weight
    # torch builds the loss on the target, so it has the target's dtype
    return _reduce_array(xp, loss.astype(target.dtype), reduction)


@_bce_logits.derivative
def _(ctx, g):
    x, t = ctx.self, ctx.target
    w, pw = _const_or_none(ctx.weight, g), _const_or_none(ctx.pos_weight, g)
    g = _reduced_grad(ctx, g)
    if w is not None:
        g = g * w
    needs = ctx.needs_input_grad
    gx = gt = None
    if needs[0]:
        if pw is None:
            gx = g * (x.sigmoid() - t)
        else:
            scale = (pw - 1) * t + 1
            gx = g * ((1 - t) - scale * (-x).sigmoid())
    if needs[1]:
        gt = -g * x if pw is None else g * ((pw - 1) * softplus(-x) - x)
    return gx, gt


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction="mean", pos_weight=None):
    reduction = _reduction(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    # the shape errors torch's broadcasting products give (pos_weight * target, loss * weight)
    if pos_weight is not None:
        _broadcast(pos_weight, target)
    if weight is not None:
        _broadcast(input, weight)
    name = "binary_cross_entropy_with_logits"
    return _bce_logits(input, target, weight=_no_grad_argument(weight, "weight", name),
                       pos_weight=_no_grad_argument(pos_weight, "pos_weight", name),
                       reduction=reduction)


# ---------------------------------------------------------------------------- classification
def _nll_weights(xp, target, weight, ignore_index, n_classes, dtype):
    """(safe targets, per-target weights or None for all ones) of an NLL loss.

    Ignored targets read class 0 with weight 0; an out-of-range target is torch's IndexError.
    The common case (no class weights, nothing ignored) makes no weight array at all."""
    ignored = target == ignore_index
    any_ignored = bool(ignored.any())
    safe = xp.where(ignored, 0, target) if any_ignored else target
    if ((safe < 0) | (safe >= n_classes)).any():
        bad = (safe < 0) | (safe >= n_classes)
        raise IndexError(f"Target {int(target[bad].reshape(-1)[0])} is out of bounds.")
    if weight is None and not any_ignored:
        return safe, None
    w = xp.ones(safe.shape, dtype) if weight is None else weight[safe].astype(dtype)
    return safe, (xp.where(ignored, 0, w).astype(dtype) if any_ignored else w)


def _pick(xp, a, index, cdim):
    """a's entries at `index` along the class dim cdim (index has a's shape without cdim)."""
    if a.ndim == 2 and cdim == 1:
        return a[xp.arange(a.shape[0]), index]
    return xp.take_along_axis(a, xp.expand_dims(index, cdim), cdim).squeeze(cdim)


def _nll_forward(xp, self, *, target, weight, ignore_index, reduction):
    cdim = 0 if self.ndim == 1 else 1
    safe, w = _nll_weights(xp, target, weight, ignore_index, self.shape[cdim], self.dtype)
    picked = self[safe] if self.ndim == 1 else _pick(xp, self, safe, cdim)
    losses = -picked if w is None else -picked * w
    if reduction == "none":
        return xp.asarray(losses, dtype=self.dtype)
    total = losses.sum(dtype=self.dtype)
    if reduction == "sum":
        return total
    count = self.dtype.type(safe.size) if w is None else w.sum(dtype=self.dtype)
    return xp.asarray(total / count, dtype=self.dtype)


def _nll_derivative(ctx, g):
    """-w[t] (/ total weight for 'mean') at each target's class, zero elsewhere: a constant
    coefficient times the incoming gradient, so this is differentiable again."""
    shape, dtype = ctx.input_shape(), ctx.input_dtype()
    cdim = 0 if len(shape) == 1 else 1
    xp = _xp(g)
    safe, w = _nll_weights(xp, ctx.target, ctx.weight, ctx.ignore_index, shape[cdim],
                           dtype.np)
    minus_w = xp.full(safe.shape, -1, dtype.np) if w is None else -w
    if ctx.reduction == "mean":
        total = safe.size if w is None else w.sum(dtype=dtype.np)
        if total != 0:                 # all targets ignored: torch's gradient is all zeros
            minus_w = (minus_w / total).astype(dtype.np)
    # -w at each target's class, zero elsewhere
    coef = xp.zeros(shape, dtype.np)
    if len(shape) == 1:
        coef[safe] = minus_w
    elif len(shape) == 2:
        coef[xp.arange(shape[0]), safe] = minus_w
    else:
        xp.put_along_axis(coef, xp.expand_dims(safe, cdim), xp.expand_dims(minus_w, cdim),
                          cdim)
    if ctx.reduction == "none":
        g = g.unsqueeze(cdim)
    return g * _const(coef, g)


_nll_loss = primitive("nll_loss", node="NllLossBackward0")(_nll_forward)
_nll_loss.derivative(_nll_derivative)
_nll_loss2d = primitive("nll_loss2d", node="NllLoss2DBackward0")(_nll_forward)
_nll_loss2d.derivative(_nll_derivative)


def _check_target_dtype(target):
    if target._dtype not in (D.int64, D.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{_dtype_word(target._dtype)}")


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    dim = input.dim()
    if dim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {dim})")
    if dim != 1 and (target.dim() == 0 or input.shape[0] != target.shape[0]):
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({target.shape[0] if target.dim() else 0}).")
    n_classes = input.shape[0 if dim == 1 else 1]
    if dim <= 2:
        if target.dim() > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    elif dim == 4:
        if target.dim() != 3 or target.shape != input.shape[:1] + input.shape[2:]:
            raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: "
                               f"{list(target.shape)}")
    elif target.shape != input.shape[:1] + input.shape[2:]:
        raise RuntimeError(f"Expected target size {list(input.shape[:1] + input.shape[2:])}, "
                           f"got {list(target.shape)}")
    _check_target_dtype(target)
    if weight is not None and weight.numel() != n_classes:
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} classes "
                           f"or no classes but got weight tensor of shape: "
                           f"{list(weight.shape)}")
    if weight is not None and weight._dtype is not input._dtype:
        raise RuntimeError(f"expected scalar type {_dtype_word(input._dtype)} but found "
                           f"{_dtype_word(weight._dtype)}")
    options = dict(weight=None if weight is None else weight._data,
                   ignore_index=ignore_index, reduction=reduction)
    if dim <= 2:
        return _nll_loss(input, target=target._data, **options)
    if dim == 4:
        return _nll_loss2d(input, target=target._data, **options)
    # other ranks go through the 4-D kernel: (N, C, d1) as (N, C, d1, 1), higher as (N, C, 1, -1)
    n, c = input.shape[:2]
    shape4 = (n, c, input.shape[2], 1) if dim == 3 else (n, c, 1, -1)
    flat_target = target._data.reshape((n,) + shape4[2:] if dim == 3 else (n, 1, -1))
    out = _nll_loss2d(input.reshape(shape4), target=flat_target, **options)
    return out.reshape(target.shape) if reduction == "none" else out


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    reduction = _reduction(reduction, size_average, reduce)
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    if not label_smoothing > 0.0:       # torch smooths nothing for a negative (or nan) amount
        label_smoothing = 0.0
    cdim = 0 if input.dim() == 1 else 1
    logp = log_softmax(input, cdim)
    n_classes = input.shape[cdim]
    if target.shape == input.shape and target.is_floating_point():
        if ignore_index != -100:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _cross_entropy_probs(logp, target, weight, reduction, label_smoothing, cdim)
    loss = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing == 0.0:
        return loss
    # mix in the loss against the uniform distribution: -mean over classes of log p
    wshape = [1] * input.dim()
    wshape[cdim] = n_classes
    smooth = -(logp * weight.reshape(wshape)).sum(cdim) if weight is not None else \
        -logp.sum(cdim)
    ignored = target == ignore_index
    smooth = smooth.masked_fill(ignored, 0.0)
    if reduction == "mean":
        kept = target._data[~ignored._data]
        total = weight._data[kept].sum() if weight is not None else kept.size
        smooth = smooth.sum() / total
    elif reduction == "sum":
        smooth = smooth.sum()
    return _mul_scalar(loss, other=1 - label_smoothing) + _mul_scalar(
        smooth, other=label_smoothing / n_classes)


def _cross_entropy_probs(logp, target, weight, reduction, label_smoothing, cdim):
    n_classes = logp.shape[cdim]
    if label_smoothing > 0:
        target = _add_scalar(_mul_scalar(target, other=1 - label_smoothing),
                             other=label_smoothing / n_classes)
    terms = logp * target
    if weight is not None:
        wshape = [1] * logp.dim()
        wshape[cdim] = n_classes
        terms = terms * weight.reshape(wshape)
    if reduction == "none":
        return -terms.sum(cdim)
    total = -terms.sum()
    if reduction == "sum":
        return total
    return _div_scalar(total, other=logp.numel() // n_classes)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns "
                      "with the KL div math definition.'mean' will be changed to behave the "
                      "same as 'batchmean' in the next major release.", stacklevel=2)
    if reduction not in ("none", "mean", "sum", "batchmean"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = _special_xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() != 0 else loss.sum()
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                          reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    eps = 1e-12
    dim = input1.dim() - 1
    dot = (input1 * input2).sum(dim)
    mag1 = _add_scalar((input1 * input1).sum(dim), other=eps)
    mag2 = _add_scalar((input2 * input2).sum(dim), other=eps)
    cos = dot / (mag1 * mag2).sqrt()
    zero = zeros((), dtype=cos.dtype)
    pos = P.where(target == 1, _scalar_minus(1, cos), zero)
    neg = P.where(target == -1, _clamp_min_scalar(_sub_scalar(cos, other=margin), 0), zero)
    return _reduce(pos + neg, reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    if not (input1.dim() == input2.dim() == target.dim()):
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.shape}, input2: {input2.shape}, "
                           f"target: {target.shape} ")
    return _reduce(_clamp_min_scalar(_add_scalar(-target * (input1 - input2), other=margin), 0),
                   reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    zero = zeros((), dtype=input.dtype)
    margin_clamp = _clamp_min_scalar(_scalar_minus(margin, input), 0)
    loss = P.where(target != 1, margin_clamp, zero) + P.where(target != -1, input, zero)
    return _reduce(loss, reduction)


@primitive("soft_margin_loss", node="SoftMarginLossBackward0", save=("self",))
def _soft_margin_loss(xp, self, *, target, reduction):
    # log(1 + exp(-t x)), without overflow
    return _reduce_array(xp, _softplus_array(xp, -target * self).astype(self.dtype), reduction)


@_soft_margin_loss.derivative
def _(ctx, g):
    t = _const(ctx.target, g)
    return _reduced_grad(ctx, g) * -t * (-t * ctx.self).sigmoid()


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    if target.shape != input.shape:
        # torch writes the loss into a tensor of the input's shape
        shape = _broadcast(input, target)[0].shape
        if shape != input.shape:
            raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the "
                               f"broadcast shape {list(shape)}")
    target = _no_grad_argument(target, "target", "soft_margin_loss")
    return _soft_margin_loss(input, target=target.astype(input._dtype.np, copy=False),
                             reduction=reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-08,
                     reduce=None, reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * _add_scalar(input, other=eps).log()
    if full:
        stirling = target * target.log() - target + _mul_scalar(
            _mul_scalar(target, other=2 * math.pi).log(), other=0.5)
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _arith.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce(_clamp_min_scalar(_add_scalar(d_pos, other=margin) - d_neg, 0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)) with any distance d
    (pairwise_distance by default); swap uses d(positive, negative) when smaller."""
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dims = (anchor.dim(), positive.dim(), negative.dim())
    if len(set(dims)) != 1:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {dims[0]}D, positive "
                           f"{dims[1]}D, and negative {dims[2]}D inputs")
    distance = pairwise_distance if distance_function is None else distance_function
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = _arith.minimum(d_neg, distance(positive, negative))
    loss = _clamp_min_scalar(margin + d_pos - d_neg, 0)
    return _reduce(loss, _reduction(reduction))


def gaussian_nll_loss(input, target, var, full=False, eps=1e-06, reduction="mean"):
    """0.5 (log var + (input - target)^2 / var) (+ 0.5 log 2 pi when full), with var floored
    at eps outside the graph. var may have input's shape, or lack (or have 1 as) its last dim."""
    if not isinstance(var, Tensor):
        var = input.new_full(input.shape, var)     # a number: one variance for every element
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (input.shape[:-1] == var.shape[:-1] and var.shape[-1] == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not valid")
    if bool((var._data < 0).any()):
        raise ValueError("var has negative entry/entries")
    var = var.clone()
    with grad_mode.no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """Binary cross entropy of each class's logit, averaged over the classes (last dim)."""
    reduction = _reduction(reduction, size_average, reduce)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    return _reduce(loss, reduction)


def _as_rows(input):
    """A (C,) or (N, C) input as (N, C), or torch's error for any other shape."""
    if input.dim() > 2 or (input.numel() == 0 and input.dim() != 2):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, "
                           f"but got: {list(input.shape)}")
    return input._data.reshape(-1, input.shape[-1] if input.dim() else 1)


def _reduce_rows(xp, losses, reduction, shape):
    """Per-sample losses reduced; 'none' keeps the batch shape (none for a 1-D input)."""
    if reduction == "none":
        return losses.reshape(shape)
    if losses.size == 0:
        return xp.zeros((), losses.dtype)      # (torch leaves this one uninitialized)
    return _reduce_array(xp, losses, reduction)


def _row_grad(ctx, g, n_rows):
    """The incoming gradient of a per-sample loss, as one value per row (N, 1)."""
    if ctx.reduction == "none":
        return g.reshape(-1, 1)
    return (g / n_rows if ctx.reduction == "mean" else g).reshape(1, 1)


# ---------------------------------------------------------------------------- multi margin
# loss(x, y) = sum over classes j != y of w[y] max(0, margin - x[y] + x[j])^p / C
@primitive("multi_margin_loss", node="MultiMarginLossBackward0", save=("self",))
def _multi_margin_loss(xp, self, *, target, p, margin, weight, reduction):
    x = self.reshape(-1, self.shape[-1] if self.ndim else 1)
    onehot = (xp.arange(x.shape[1]) == target.reshape(-1, 1)).astype(x.dtype)
    z = x - (x * onehot).sum(1, keepdims=True) + margin
    z = xp.where(onehot > 0, 0, xp.maximum(z, 0))
    terms = z if p == 1 else z * z
    if weight is not None:
        terms = terms * weight[target.reshape(-1)][:, None]
    losses = (terms.sum(1) / x.shape[1]).astype(self.dtype)
    return _reduce_rows(xp, losses, reduction, self.shape[:-1] if self.ndim == 2 else ())


@_multi_margin_loss.derivative
def _(ctx, g):
    x = ctx.self
    shape = x.shape
    rows = x.reshape(-1, shape[-1] if len(shape) else 1)
    n, c = rows.shape
    xp = _xp(g)
    target = ctx.target.reshape(-1)
    onehot = _const((xp.arange(c) == target[:, None]).astype(g._dtype.np), g)
    z = rows - (rows * onehot).sum(1, keepdim=True) + ctx.margin
    active = _const(((z._data > 0) & (onehot._data == 0)).astype(g._dtype.np), g)
    coef = active if ctx.p == 1 else z * active * 2     # d/dx[j] of each class's term
    if ctx.weight is not None:
        coef = coef * _const(ctx.weight[target][:, None].astype(g._dtype.np), g)
    coef = coef / c
    # x[j] enters its own term with +coef; x[y] enters every term with -coef
    grad_rows = coef - onehot * coef.sum(1, keepdim=True)
    # (torch's multi_margin_loss_backward has no derivative)
    return _not_implemented_backward((grad_rows * _row_grad(ctx, g, n)).reshape(shape), x,
                                     backward="multi_margin_loss_backward")


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    rows = _as_rows(input)
    n, c = rows.shape
    if target.dim() > 1 or target.numel() != n:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to "
                           f"the number of input samples (batch size). Expected target size "
                           f"[{n}], but got {list(target.shape)}. Input has shape "
                           f"{list(input.shape)}.")
    if target._dtype is not D.int64:
        raise RuntimeError(f"expected scalar type Long but found {_dtype_word(target._dtype)}")
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got "
                           f"{list(weight.shape)}")
    t = target._data
    if t.size and (t.min() < 0 or t.max() >= c):
        raise RuntimeError("target out of range")
    return _multi_margin_loss(input, target=t, p=p, margin=margin,
                              weight=None if weight is None else
                              weight._data.astype(input._dtype.np),
                              reduction=reduction)


# ---------------------------------------------------------------------------- multilabel margin
# Each row's target lists class indices up to its first -1. loss = sum over listed classes j and
# unlisted classes i of max(0, 1 - (x[j] - x[i])) / C.
def _multilabel_pairs(xp, x, target):
    """(hinge terms (N, T, C) for target entry t against class i, one-hot of each target
    entry's class (N, T, C), active pairs (N, T, C))."""
    c = x.shape[1]
    listed = xp.cumprod(target >= 0, axis=1).astype(bool)       # before the first -1
    longest = int(listed.sum(1).max()) if listed.size else 0
    listed, target = listed[:, :longest], target[:, :longest]   # T: the longest list
    safe = xp.where(listed, target, 0)
    entry_class = (safe[:, :, None] == xp.arange(c)) & listed[:, :, None]
    is_target = entry_class.any(1)
    z = 1 - xp.take_along_axis(x, safe, 1)[:, :, None] + x[:, None, :]
    active = listed[:, :, None] & ~is_target[:, None, :] & (z > 0)
    return z, entry_class, active


@primitive("multilabel_margin_loss", node="MultilabelMarginLossBackward0", save=("self",))
def _multilabel_margin_loss(xp, self, *, target, reduction):
    x = self.reshape(-1, self.shape[-1] if self.ndim else 1)
    z, _, active = _multilabel_pairs(xp, x, target.reshape(x.shape))
    losses = (xp.where(active, z, 0).sum((1, 2)) / x.shape[1]).astype(self.dtype)
    return _reduce_rows(xp, losses, reduction, self.shape[:-1] if self.ndim == 2 else ())


@_multilabel_margin_loss.derivative
def _(ctx, g):
    # piecewise linear in x: the gradient is g times a constant coefficient per element
    shape = ctx.input_shape()
    xp = _xp(g)
    x = ctx.self._data
    rows = x.reshape(-1, shape[-1] if len(shape) else 1)
    n, c = rows.shape
    _, entry_class, active = _multilabel_pairs(xp, rows, ctx.target.reshape(rows.shape))
    active = active.astype(rows.dtype)
    # +1 for each unlisted class i per active pair, -1 for the listed class of the entry
    coef = active.sum(1) - (active.sum(2)[:, :, None] * entry_class).sum(1)
    coef = _const((coef / c).astype(rows.dtype), g)
    return (coef * _row_grad(ctx, g, n)).reshape(shape)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    rows = _as_rows(input)
    if target.shape != input.shape and not (input.dim() <= 1 and target.dim() <= 1 and
                                            target.numel() == rows.size):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    if target._dtype is not D.int64:
        raise RuntimeError(f"expected scalar type Long but found {_dtype_word(target._dtype)}")
    t = target._data
    if t.size and (t.min() < -1 or t.max() >= rows.shape[1]):
        raise RuntimeError("argument #2 'target' is out of range")
    return _multilabel_margin_loss(input, target=t, reduction=reduction)


# ============================================================================ convolution & co
# written by the convolution/pooling/attention module; re-exported here as torch does
from ._conv import (conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d,  # noqa: E402
                    max_pool1d, max_pool2d, max_pool3d, avg_pool1d, avg_pool2d, avg_pool3d,
                    adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d,
                    adaptive_max_pool1d, adaptive_max_pool2d, unfold, fold, interpolate, pad,
                    scaled_dot_product_attention)
from ._conv import conv_transpose3d, _not_implemented_backward  # noqa: E402


def _deprecated_upsample(name):
    warnings.warn(f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` "
                  f"instead.", stacklevel=3)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    _deprecated_upsample("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    _deprecated_upsample("upsample_nearest")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    _deprecated_upsample("upsample_bilinear")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ============================================================================ more pooling, pdist, gumbel
from ._pool_extra import (max_pool1d_with_indices, max_pool2d_with_indices,  # noqa: E402
                          max_pool3d_with_indices, adaptive_max_pool1d_with_indices,
                          adaptive_max_pool2d_with_indices, adaptive_max_pool3d_with_indices,
                          adaptive_max_pool3d, max_unpool1d, max_unpool2d, max_unpool3d,
                          lp_pool1d, lp_pool2d, lp_pool3d)
from ._fractional_pool import (fractional_max_pool2d, fractional_max_pool3d,  # noqa: E402
                               fractional_max_pool2d_with_indices,
                               fractional_max_pool3d_with_indices)
from ._functional_extra import pdist, gumbel_softmax  # noqa: E402
from ._sampling import grid_sample, affine_grid  # noqa: E402
from ._embedding_bag import embedding_bag  # noqa: E402
from ._ctc import ctc_loss  # noqa: E402
from ._linear_cross_entropy import linear_cross_entropy  # noqa: E402
from ._functional_compat import conv_tbc, multi_head_attention_forward  # noqa: E402
from . import grad  # noqa: E402,F401
