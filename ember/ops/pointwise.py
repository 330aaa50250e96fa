"""Elementwise ops: arithmetic, math functions, comparisons, logic, clamping, selection.

Each is a primitive (forward on arrays, derivative in ember ops). Ops whose PyTorch graph shows
another op's node (`1 / x` is MulBackward0 over ReciprocalBackward0) are written from primitives.
"""
import math
import numpy as np

from .. import _dtype as D, _fast_kernels, _nn_kernels
from .._tensor import Tensor
from ._pointwise_common import (_out, unsupported, _zeros, _c, _special, _is_int_array, _cast_like,
                                _is_tensor, _wrapped, _promote_to, _py_number, _type_name, _BF16,
                                CPP_NAMES)
from .registry import FLOAT, primitive, COMMON, check_broadcast
from .creation import scalar_tensor
from .indexing import nonzero
import ml_dtypes


# ----------------------------------------------------------------------------- unary
def _unary(name, node, forward, derivative, save=("self",), promote=FLOAT, out_rule=None):
    """Declare a one-input op from an array function and a derivative `f(ctx, grad)`."""
    op = primitive(name, node=node, save=save, promote=promote)(
        lambda xp, self: forward(xp, self))
    op.derivative(lambda ctx, grad: derivative(ctx, grad))
    # an op that keeps its input's dtype wants an out= of that dtype exactly
    out_rule = out_rule or ("clamp" if promote is None else "cast")

    def public(input, *, out=None):
        return _out(op(input), out, name, out_rule)
    public.__name__ = name
    public.op = op
    return public


neg = _unary("neg", "NegBackward0", lambda xp, x: _checked_neg(xp, x),
             lambda ctx, g: -g, save=(), promote=None)
negative = neg


def _checked_neg(xp, x):
    if x.dtype == np.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    return xp.negative(x)


abs = _unary("abs", "AbsBackward0", lambda xp, x: unsupported("abs_cpu", x) or xp.abs(x),
             lambda ctx, g: g * ctx.self.sgn(), promote=None)
absolute = abs
sign = _unary("sign", "SignBackward0", lambda xp, x: _sign(xp, x),
              lambda ctx, g: _zeros(g), save=(), promote=None)
sgn = _unary("sgn", "SgnBackward0",
             lambda xp, x: _sign(xp, x) if not xp.iscomplexobj(x) else
             xp.where(x == 0, 0, x / xp.where(x == 0, 1, xp.abs(x))).astype(x.dtype),
             lambda ctx, g: _sgn_grad(ctx, g), save=("self", "result"), promote=None)


def _sgn_grad(ctx, g):
    """sgn(z) = z/|z|: zero almost everywhere for reals; for complex z, the part of the
    gradient tangent to the unit circle, divided by |z| (nothing at z = 0)."""
    x, s = ctx.self, ctx.result
    if not x._dtype.is_complex:
        return _zeros(g)
    r = x.abs()
    return where(r == 0, 0., (g - s * (g * s.conj()).real) / r)
reciprocal = _unary("reciprocal", "ReciprocalBackward0", lambda xp, x: xp.reciprocal(x),
                    lambda ctx, g: -g * _c(ctx.result * ctx.result), save=("result",))
sqrt = _unary("sqrt", "SqrtBackward0", lambda xp, x: xp.sqrt(x),
              lambda ctx, g: g / _c(2 * ctx.result), save=("result",))
rsqrt = _unary("rsqrt", "RsqrtBackward0", lambda xp, x: xp.reciprocal(xp.sqrt(x)),
               lambda ctx, g: g * _c(-0.5 * ctx.result.pow(3)), save=("result",))
exp = _unary("exp", "ExpBackward0", lambda xp, x: xp.exp(x),
             lambda ctx, g: g * _c(ctx.result), save=("result",))
exp2 = _unary("exp2", "Exp2Backward0", lambda xp, x: xp.exp2(x),
              lambda ctx, g: g * _c(ctx.result * math.log(2.0)), save=("result",))
expm1 = _unary("expm1", "Expm1Backward0", lambda xp, x: xp.expm1(x),
               lambda ctx, g: g * _c(ctx.result + 1), save=("result",))
log = _unary("log", "LogBackward0", lambda xp, x: xp.log(x), lambda ctx, g: g / _c(ctx.self))
log2 = _unary("log2", "Log2Backward0", lambda xp, x: xp.log2(x),
              lambda ctx, g: g / _c(ctx.self * math.log(2.0)))
log10 = _unary("log10", "Log10Backward0", lambda xp, x: xp.log10(x),
               lambda ctx, g: g / _c(ctx.self * math.log(10.0)))
log1p = _unary("log1p", "Log1PBackward0", lambda xp, x: xp.log1p(x),
               lambda ctx, g: g / _c(ctx.self + 1))
sin = _unary("sin", "SinBackward0", lambda xp, x: xp.sin(x), lambda ctx, g: g * _c(ctx.self.cos()))
cos = _unary("cos", "CosBackward0", lambda xp, x: xp.cos(x), lambda ctx, g: g * _c(-ctx.self.sin()))
tan = _unary("tan", "TanBackward0", lambda xp, x: xp.tan(x),
             lambda ctx, g: g * _c(1 + ctx.result * ctx.result), save=("result",))
asin = _unary("asin", "AsinBackward0", lambda xp, x: xp.arcsin(x),
              lambda ctx, g: g * _c((1 - ctx.self * ctx.self).rsqrt()))
acos = _unary("acos", "AcosBackward0", lambda xp, x: xp.arccos(x),
              lambda ctx, g: -g * _c((1 - ctx.self * ctx.self).rsqrt()))
atan = _unary("atan", "AtanBackward0", lambda xp, x: xp.arctan(x),
              lambda ctx, g: g / _c(1 + ctx.self * ctx.self))
sinh = _unary("sinh", "SinhBackward0", lambda xp, x: xp.sinh(x),
              lambda ctx, g: g * _c(ctx.self.cosh()))
cosh = _unary("cosh", "CoshBackward0", lambda xp, x: xp.cosh(x),
              lambda ctx, g: g * _c(ctx.self.sinh()))
tanh = _unary("tanh", "TanhBackward0", lambda xp, x: xp.tanh(x),
              lambda ctx, g: _tanh_backward(g, ctx.result) if not g._dtype.is_complex else
              g * _c(1 - ctx.result * ctx.result), save=("result",))
asinh = _unary("asinh", "AsinhBackward0", lambda xp, x: xp.arcsinh(x),
               lambda ctx, g: g * _c((ctx.self * ctx.self + 1).rsqrt()))
acosh = _unary("acosh", "AcoshBackward0", lambda xp, x: xp.arccosh(x),
               lambda ctx, g: g * _c((ctx.self * ctx.self - 1).rsqrt()))
atanh = _unary("atanh", "AtanhBackward0", lambda xp, x: xp.arctanh(x),
               lambda ctx, g: g / _c(1 - ctx.self * ctx.self))
arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh
sigmoid = _unary("sigmoid", "SigmoidBackward0",
                 lambda xp, x: _sigmoid(xp, x),
                 lambda ctx, g: _sigmoid_backward(g, ctx.result) if not g._dtype.is_complex
                 else g * _c(ctx.result * (1 - ctx.result)), save=("result",))
erf = _unary("erf", "ErfBackward0",
             lambda xp, x: unsupported("erf_vml_cpu", x, "c") or _special().erf(xp, x),
             lambda ctx, g: g * (2 / math.sqrt(math.pi)) * (-(ctx.self * ctx.self)).exp())
erfc = _unary("erfc", "ErfcBackward0",
              lambda xp, x: unsupported("erfc_vml_cpu", x, "c") or _special().erfc(xp, x),
              lambda ctx, g: g * (-2 / math.sqrt(math.pi)) * (-(ctx.self * ctx.self)).exp())
erfinv = _unary("erfinv", "ErfinvBackward0",
                lambda xp, x: unsupported("erfinv_vml_cpu", x, "c") or _special().erfinv(xp, x),
                lambda ctx, g: g * (math.sqrt(math.pi) / 2) * (ctx.result * ctx.result).exp(),
                save=("result",))
_relu_out = _unary("relu", "ReluBackward0", lambda xp, x: _relu(xp, x),
                   lambda ctx, g: _threshold_backward(g, ctx.result, threshold=0),
                   save=("result",), promote=None)


def relu(input):
    return _relu_out.op(input)          # (torch.relu takes no out=)


relu.op = _relu_out.op
floor = _unary("floor", "FloorBackward0", lambda xp, x: _keep_int(xp, xp.floor, x, "floor"),
               lambda ctx, g: _zeros(g), save=(), promote=None)
ceil = _unary("ceil", "CeilBackward0", lambda xp, x: _keep_int(xp, xp.ceil, x, "ceil"),
              lambda ctx, g: _zeros(g), save=(), promote=None)
trunc = _unary("trunc", "TruncBackward0", lambda xp, x: _keep_int(xp, xp.trunc, x, "trunc"),
               lambda ctx, g: _zeros(g), save=(), promote=None)
fix = trunc
frac = _unary("frac", "FracBackward0",
              lambda xp, x: unsupported("frac_cpu", x, "biuc") or x - xp.trunc(x),
              lambda ctx, g: g, save=(), promote=None)
def _without_out(public):
    """An op PyTorch declares with no out= argument (passing one is a TypeError)."""
    def op(input):
        return public(input)
    op.__name__ = op.__qualname__ = public.__name__     # (named in the TypeError)
    op.op = public.op
    return op


isnan = _without_out(_unary("isnan", None, lambda xp, x: xp.isnan(x), None, save=(),
                            promote=None))
isinf = _without_out(_unary("isinf", None, lambda xp, x: xp.isinf(x), None, save=(),
                            promote=None))
isfinite = _without_out(_unary("isfinite", None, lambda xp, x: xp.isfinite(x), None, save=(),
                               promote=None))
isposinf = _unary("isposinf", None, lambda xp, x: xp.isposinf(x), None, save=(), promote=None,
                  out_rule="bool")
isneginf = _unary("isneginf", None, lambda xp, x: xp.isneginf(x), None, save=(), promote=None,
                  out_rule="bool")
signbit = _unary("signbit", None, lambda xp, x: _no_complex_signbit(x) or xp.signbit(x), None,
                 save=(), promote=None,
                 out_rule="bool")
for _f in (isnan, isinf, isfinite, isposinf, isneginf, signbit):
    _f.op.differentiable = False
    _f.op.node_cls = None


def _keep_int(xp, fn, x, name):
    unsupported(f"{name}_vml_cpu", x)
    if x.dtype.kind == "c":
        raise NotImplementedError(f"{name} is not supported for complex inputs")
    return x.copy() if x.dtype.kind in "iu" else fn(x)


def _sign(xp, x):
    if x.dtype.kind == "c":
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex "
                                  "numbers. Please use torch.sgn instead.")
    if x.dtype == np.bool_:
        return x.copy()
    if x.dtype.kind in "fV":
        # (x > 0) - (x < 0), as PyTorch: NaN and -0.0 give +0.0 (NumPy keeps them)
        return ((x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)).astype(x.dtype)
    return xp.sign(x)


def _no_complex_signbit(x):
    if x.dtype.kind == "c":
        raise NotImplementedError("signbit is not implemented for complex tensors.")


def _no_complex_clamp(x):
    if x.dtype.kind == "c":
        raise NotImplementedError("clamp is not supported for complex types")


def _relu(xp, x):
    if x.dtype == np.bool_:
        raise RuntimeError("Boolean inputs not supported for relu")
    _no_complex_clamp(x)
    if xp is np:
        out = _nn_kernels.relu(x)               # large float arrays: on ember's threads
        if out is not None:
            return out
    return xp.maximum(x, 0).astype(x.dtype, copy=False)


# Fused backward primitives: one pass each instead of three ops, with their own derivatives
# (so double backward works, and shows PyTorch's ...BackwardBackward0 nodes).
@primitive("tanh_backward", node="TanhBackwardBackward0", save=("grad_output", "output"))
def _tanh_backward(xp, grad_output, output):
    return grad_output * (1 - output * output)


@_tanh_backward.derivative
def _(ctx, gg):
    # out = g * (1 - y^2): d/dg = 1 - y^2, d/dy = -2 g y
    y = ctx.output
    return _tanh_backward(gg, y), gg * ctx.grad_output * y * -2


def _sigmoid(xp, x):
    if x.dtype.kind == "c":
        return 1 / (1 + xp.exp(-x))
    if xp is np and x.dtype == np.float32:      # float32 math, as PyTorch's CPU kernel
        return _fast_kernels.sigmoid_f32(x)
    return _special().sigmoid(xp, x)


@primitive("sigmoid_backward", node="SigmoidBackwardBackward0",
           save=("grad_output", "output"))
def _sigmoid_backward(xp, grad_output, output):
    if xp is np:            # (in cache-sized blocks over ember's threads: _fast_kernels)
        out = _fast_kernels.sigmoid_backward_into(grad_output, output)
        if out is not None:
            return out
    return grad_output * (output * (1 - output))


@_sigmoid_backward.derivative
def _(ctx, gg):
    # out = g * y (1 - y): d/dg = y (1 - y), d/dy = g (1 - 2 y)
    y = ctx.output
    return _sigmoid_backward(gg, y), gg * ctx.grad_output * (1 - 2 * y)


@primitive("threshold_backward", node="ThresholdBackwardBackward0", save=("self",))
def _threshold_backward(xp, grad_output, self, *, threshold):
    """relu's (and threshold's) backward: the gradient except where self <= threshold."""
    if xp is np and isinstance(threshold, (int, float)):
        out = _nn_kernels.threshold_backward(grad_output, self, threshold)   # (threaded)
        if out is not None:
            return out
    # (not `self > threshold`: where self is NaN torch keeps the gradient)
    return masked_keep(xp, ~(self <= threshold), grad_output)


def masked_keep(xp, mask, x):
    """x where mask, exact zeros elsewhere. Multiplying by the mask is branch-free (~15x faster
    than where() on a random mask), but would turn an inf or nan outside it into nan: such
    values (rare; a sum of x shows them) take the where() path. On a GPU where() is as fast,
    and the check would cost a sync."""
    if xp is not np:
        return xp.where(mask, x, xp.zeros((), x.dtype))
    if xp.isfinite(xp.sum(x)):
        return xp.multiply(x, mask, dtype=x.dtype)
    return xp.where(mask, x, xp.zeros((), x.dtype))


@_threshold_backward.derivative
def _(ctx, grad):
    # piecewise constant in self: its gradient is zero (but self stays in the graph, as in torch)
    return _threshold_backward(grad, ctx.self, threshold=ctx.threshold), _zeros(grad)


@primitive("round", node="RoundBackward0", promote=None)
def _round(xp, self):
    unsupported("round_vml_cpu", self, "bc")
    return xp.round(self) if not _is_int_array(self) else self.copy()


@_round.derivative
def _(ctx, grad):
    return _zeros(grad)


@primitive("round.decimals", node="RoundBackward1", promote=None)
def _round_decimals(xp, self, *, decimals):
    unsupported("round_cpu", self, "biuc")
    # scale, round half to even, unscale: in float32 at least, as PyTorch computes it
    wide = self.astype(np.float32) if self.dtype.itemsize < 4 else self
    ten = wide.dtype.type(10.0)
    if decimals >= 0:
        scale = ten ** decimals
        out = xp.round(wide * scale) / scale
    else:
        scale = ten ** -decimals
        out = xp.round(wide / scale) * scale
    return out.astype(self.dtype)


@_round_decimals.derivative
def _(ctx, grad):
    return _zeros(grad)


def round(input, *, decimals=None, out=None):
    if decimals is None:
        return _out(_round(input), out, "round", "clamp")
    return _out(_round_decimals(input, decimals=decimals), out, "round", "clamp")


@primitive("logit", node="LogitBackward0", save=("self",), promote=FLOAT)
def _logit(xp, self, *, eps=None):
    unsupported("logit_cpu", self, "c")
    if eps is not None:
        # below eps -> eps, else above 1 - eps -> 1 - eps: unlike a clip, an eps over 0.5
        # sends every x below eps to eps
        lo, hi = _cast_like(eps, self), _cast_like(1 - eps, self)
        self = xp.where(self < lo, lo, xp.where(self > hi, hi, self))
    return xp.log(self / (1 - self))


@_logit.derivative
def _(ctx, grad):
    x = ctx.self
    g = grad / (x * (1 - x))
    if ctx.eps is None or ctx.eps < 0:      # no clamping: outside [0, 1] there is no logit
        return where((x < 0) | (x > 1), _zeros(g) * math.nan, g)
    return where((x < ctx.eps) | (x > 1 - ctx.eps), _zeros(g), g)


def logit(input, eps=None, *, out=None):
    return _out(_logit(input, eps=eps), out, "logit")


@primitive("nan_to_num", node="NanToNumBackward0", save=("self",), promote=None)
def _nan_to_num(xp, self, *, nan, posinf, neginf):
    if self.dtype.kind not in "fcV":
        return self.copy()
    if self.dtype.kind == "c":
        return xp.nan_to_num(self, nan=nan, posinf=posinf, neginf=neginf)
    big = float(ml_dtypes.finfo(self.dtype).max)
    hi = _cast_like(big if posinf is None else posinf, self)
    lo = _cast_like(-big if neginf is None else neginf, self)
    out = xp.where(xp.isnan(self), _cast_like(nan, self), self)
    return xp.where(out == xp.inf, hi, xp.where(out == -xp.inf, lo, out)).astype(self.dtype)


@_nan_to_num.derivative
def _(ctx, grad):
    # the values replaced (nan, +-inf) do not depend on the input; PyTorch multiplies by the
    # mask (so an inf upstream gradient there gives nan, not 0)
    return grad * isfinite(ctx.self)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    return _out(_nan_to_num(input, nan=nan, posinf=posinf, neginf=neginf), out, "nan_to_num",
                "nan_to_num")


# ----------------------------------------------------------------------------- clamp
@primitive("clamp", node="ClampBackward1", save=("self",), promote=None)
def _clamp(xp, self, *, min, max):
    _no_complex_clamp(self)
    unsupported("clamp_scalar_cpu" if min is not None and max is not None else
                "clamp_min_scalar_cpu" if min is not None else "clamp_max_scalar_cpu", self)
    # the bounds are cast to the tensor's dtype first (uint8 clamped at -1 has min 255)
    lo = _cast_like(min, self) if min is not None else None
    hi = _cast_like(max, self) if max is not None else None
    if lo is not None and hi is not None and lo > hi:
        # every value becomes max, but a NaN stays NaN
        return xp.where(self != self, self, hi).astype(self.dtype, copy=False)
    return xp.clip(self, lo, hi).astype(self.dtype, copy=False)


@_clamp.derivative
def _(ctx, grad):
    x = ctx.self
    mask = None
    if ctx.min is not None:
        mask = x >= ctx.min
    if ctx.max is not None:
        upper = x <= ctx.max
        mask = upper if mask is None else mask & upper
    return where(mask, grad, _zeros(grad))


@primitive("clamp.tensor", node="ClampBackward0", save=("self", "min", "max"), promote=COMMON)
def _clamp_tensor(xp, self, min, max, *, has_min, has_max):
    _no_complex_clamp(self)
    if has_min and has_max:          # (one bound alone is a maximum/minimum, bool included)
        unsupported("clamp_cpu", self)
    # a missing bound arrives as a zero-dim placeholder (no edge), and is not applied
    out = self
    if has_min:
        out = xp.maximum(out, min)
    if has_max:
        out = xp.minimum(out, max)
    return out


@_clamp_tensor.derivative
def _(ctx, grad):
    x, lo, hi = ctx.self, ctx.min, ctx.max
    zero = _zeros(grad)
    keep = None
    g_lo = g_hi = None
    if ctx.has_min:
        keep = x >= lo
        g_lo = where(x < lo, grad, zero)
    if ctx.has_max:
        keep = (x <= hi) if keep is None else keep & (x <= hi)
        g_hi = where(x > hi, grad, zero)
    return where(keep, grad, zero), g_lo, g_hi


def _clamp_bound(bound, input):
    """A bound of the tensor form of clamp: a tensor; a number, wrapped; None, a zero-dim
    placeholder of input's dtype (so it does not change the result dtype; it is not applied)."""
    if _is_tensor(bound):
        return bound
    if bound is None:
        return scalar_tensor(0, input, input._dtype)
    return _wrapped(bound, input)


def _check_clamp_bounds(name, min, max):
    # PyTorch has a (Tensor, Tensor) and a (Number, Number) overload, none mixing the two
    if None not in (min, max) and _is_tensor(min) != _is_tensor(max):
        got = ", ".join("Tensor" if _is_tensor(x) else type(x).__name__ for x in (min, max))
        raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, "
                        f"{got}), but expected one of:\n"
                        f" * (Tensor input, Tensor min = None, Tensor max = None, *, Tensor out "
                        f"= None)\n"
                        f" * (Tensor input, Number min = None, Number max = None, *, Tensor out "
                        f"= None)\n")


def clamp(input, min=None, max=None, *, out=None, _name="clamp"):
    _check_clamp_bounds(_name, min, max)
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    min, max = _py_number(min), _py_number(max)
    if _is_tensor(min) or _is_tensor(max):
        lo = _clamp_bound(min, input)
        hi = _clamp_bound(max, input)
        return _out(_clamp_tensor(input, lo, hi, has_min=min is not None,
                                  has_max=max is not None), out, "clamp", "clamp")
    # the result dtype follows promotion with the bounds (int tensor clamped by 0.5 -> float)
    bounds = [b for b in (min, max) if b is not None]
    return _out(_clamp(_promote_to(input, *bounds), min=min, max=max), out, "clamp", "clamp")


def clip(input, min=None, max=None, *, out=None):
    return clamp(input, min, max, out=out, _name="clip")


# clamp with one Python-number bound is its own op in torch's graph; same forward and derivative
_clamp_min = primitive("clamp_min", node="ClampMinBackward0", save=("self",), promote=None)(
    _clamp.forward)
_clamp_min.derivative(_clamp.derivative_fn)
_clamp_max = primitive("clamp_max", node="ClampMaxBackward0", save=("self",), promote=None)(
    _clamp.forward)
_clamp_max.derivative(_clamp.derivative_fn)


# ... and so is clamp_min/clamp_max with one tensor bound (clamp(min=tensor) is ClampBackward0)
@primitive("clamp_min.Tensor", node="ClampMinBackward1", save=("self", "min"), promote=COMMON)
def _clamp_min_tensor(xp, self, min):
    return _clamp_tensor.forward(xp, self, min, None, has_min=True, has_max=False)


@primitive("clamp_max.Tensor", node="ClampMaxBackward1", save=("self", "max"), promote=COMMON)
def _clamp_max_tensor(xp, self, max):
    return _clamp_tensor.forward(xp, self, None, max, has_min=False, has_max=True)


@_clamp_min_tensor.derivative
def _(ctx, grad):
    zero = _zeros(grad)
    return where(ctx.self >= ctx.min, grad, zero), where(ctx.self < ctx.min, grad, zero)


@_clamp_max_tensor.derivative
def _(ctx, grad):
    zero = _zeros(grad)
    return where(ctx.self <= ctx.max, grad, zero), where(ctx.self > ctx.max, grad, zero)


def clamp_min(input, min, *, out=None):
    min = _py_number(min)
    if isinstance(min, Tensor):
        return _out(_clamp_min_tensor(input, min), out, "clamp_min", "clamp")
    return _out(_clamp_min(_promote_to(input, min), min=min, max=None), out, "clamp_min",
                "clamp")


def clamp_max(input, max, *, out=None):
    max = _py_number(max)
    if isinstance(max, Tensor):
        return _out(_clamp_max_tensor(input, max), out, "clamp_max", "clamp")
    return _out(_clamp_max(_promote_to(input, max), min=None, max=max), out, "clamp_max",
                "clamp")


# ----------------------------------------------------------------------------- ternary
# The condition of where() and the mask of masked_fill() are options, not operands: PyTorch's
# graph has no edge for them.
@primitive("where", node="WhereBackward0", promote=COMMON)
def _where(xp, self, other, *, condition):
    return xp.where(condition._data, self, other)


@_where.derivative
def _(ctx, grad):
    c = ctx.condition
    zero = _zeros(grad)
    return where(c, grad, zero), where(c, zero, grad)


def where(condition, input=None, other=None, *, out=None):
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if condition._dtype is not D.bool_:
        if condition._dtype is D.uint8:
            condition = condition.to(D.bool_)
        else:
            raise RuntimeError(f"where expected condition to be a boolean tensor, but got a "
                               f"tensor with dtype {_type_name(condition._dtype)}")
    input, other = _py_number(input), _py_number(other)
    if not _is_tensor(input) and not _is_tensor(other):
        dtype = D.result_dtype([input, other])
        input = scalar_tensor(input, condition, dtype)
    if not _is_tensor(input):
        input = _wrapped(input, other)
    if not _is_tensor(other):
        other = _wrapped(other, input)
    if not condition._data.shape == input._data.shape == other._data.shape:
        # PyTorch broadcasts the condition first: its message names the operands in that order
        check_broadcast((condition, input, other))
    return _out(_where(input, other, condition=condition), out, "where", "where")


_C_TYPE = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
           "int64": "int64_t", "float16": "c10::Half", "bfloat16": "c10::BFloat16"}


def _check_fill_value(value, dtype):
    """PyTorch refuses a fill value that overflows the tensor's dtype."""
    name = _C_TYPE.get(dtype.name)
    if name is None or isinstance(value, complex):
        return
    if dtype._category == 1:
        info = np.iinfo(dtype.np)
        ok = info.min <= value <= info.max if math.isfinite(value) else False
    else:
        big = float(ml_dtypes.finfo(dtype.np).max)
        ok = not math.isfinite(value) or -big <= value <= big
    if not ok:
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")


@primitive("masked_fill", node="MaskedFillBackward0", promote=None)
def _masked_fill(xp, self, *, mask, value):
    return xp.where(mask._data, _cast_like(value, self), self)


@_masked_fill.derivative
def _(ctx, grad):
    return where(ctx.mask, _zeros(grad), grad)


@primitive("masked_fill.tensor", node="MaskedFillBackward1", promote=None)
def _masked_fill_tensor(xp, self, value, *, mask):
    return xp.where(mask._data, value.astype(self.dtype), self)


@_masked_fill_tensor.derivative
def _(ctx, grad):
    m = ctx.mask
    return where(m, _zeros(grad), grad), where(m, grad, _zeros(grad)).sum()


def masked_fill(input, mask, value):
    value = _py_number(value)
    if mask._dtype is not D.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_type_name(mask._dtype).lower()}")
    if _is_tensor(value):
        if value._data.ndim != 0:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value._data.ndim} dimension(s).")
    else:
        _check_fill_value(value, input._dtype)
    try:
        if _is_tensor(value):
            return _masked_fill_tensor(input, value, mask=mask)
        return _masked_fill(input, mask=mask, value=value)
    except ValueError:
        check_broadcast((mask, input))        # PyTorch's message names the mask first
        raise


def _lerp_forward(xp, start, end, weight):
    """PyTorch's form: exact at both ends (weight 0 gives start, weight 1 gives end). For
    float32 and the half floats its kernel works in float32 with fused multiply-adds:
    diff = end - start rounded, then w * diff + start (|w| < 0.5) or (w - 1) * diff + end,
    rounded once; a float32 product is exact in float64, so float64 arithmetic gives that."""
    dtype = xp.result_type(start, end)
    if dtype.kind == "f" and dtype.itemsize <= 4 or dtype == _BF16:
        f32 = np.float32
        diff = (xp.asarray(end, f32) - xp.asarray(start, f32)).astype(np.float64)
        w = xp.asarray(weight, f32)
        small = xp.abs(w) < 0.5
        scale = xp.where(small, w, w - f32(1)).astype(np.float64)
        base = xp.where(small, start, end).astype(np.float64)
        return (scale * diff + base).astype(f32).astype(dtype, copy=False)
    diff = end - start
    return xp.where(xp.abs(weight) < 0.5, start + weight * diff,
                    end - diff * (1 - weight)).astype(dtype)


@primitive("lerp", node="LerpBackward0", promote=COMMON)
def _lerp(xp, self, end, *, weight):
    unsupported("lerp_kernel_scalar", self, "biu")
    # (for the half floats the kernel reads a number weight as float32: _lerp_forward does,
    # where rounding it to the half type first would differ)
    half = self.dtype.kind == "f" and self.dtype.itemsize < 4 or self.dtype == _BF16
    return _lerp_forward(xp, self, end, weight if half else _cast_like(weight, self))


@_lerp.derivative
def _(ctx, grad):
    w = _c(ctx.weight)
    return grad * (1 - w), grad * w


@primitive("lerp.tensor", node="LerpBackward1", save=("self", "end", "weight"), promote=COMMON)
def _lerp_tensor(xp, self, end, weight):
    unsupported("lerp_kernel_tensor", self, "biu")
    return _lerp_forward(xp, self, end, weight)


@_lerp_tensor.derivative
def _(ctx, grad):
    w = _c(ctx.weight)
    return grad * (1 - w), grad * w, grad * _c(ctx.end - ctx.self)


def _check_lerp_dtypes(input, end, weight):
    # PyTorch does not promote: end (and a weight tensor with dims) must have input's dtype
    named = [("end", end)] + ([("weight", weight)] if _is_tensor(weight) and weight._data.ndim
                              else [])
    for name, t in named:
        if _is_tensor(t) and t._dtype is not input._dtype:
            raise RuntimeError(f"expected dtype {CPP_NAMES[input._dtype.name]} for `{name}` but "
                               f"got dtype {CPP_NAMES[t._dtype.name]}")


def lerp(input, end, weight, *, out=None):
    weight = _py_number(weight)
    _check_lerp_dtypes(input, end, weight)
    if _is_tensor(weight):
        return _out(_lerp_tensor(input, end, weight), out, "lerp")
    return _out(_lerp(input, end, weight=weight), out, "lerp")


@primitive("addcmul", node="AddcmulBackward0", save=("tensor1", "tensor2"), promote=COMMON,
           opmath=True)
def _addcmul(xp, self, tensor1, tensor2, *, value):
    unsupported("addcmul_cpu_out", self)
    return self + _cast_like(value, self) * tensor1 * tensor2


@_addcmul.derivative
def _(ctx, grad):
    v = _c(ctx.value)
    return grad, grad * _c(ctx.tensor2) * v, grad * _c(ctx.tensor1) * v


@primitive("addcdiv", node="AddcdivBackward0", save=("tensor1", "tensor2"), promote=COMMON,
           opmath=True)
def _addcdiv(xp, self, tensor1, tensor2, *, value):
    return self + _cast_like(value, self) * tensor1 / tensor2


@_addcdiv.derivative
def _(ctx, grad):
    v, t1, t2 = _c(ctx.value), _c(ctx.tensor1), _c(ctx.tensor2)
    return grad, grad * v / t2, -grad * v * t1 / (t2 * t2)


def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    return _out(_addcmul(input, tensor1, tensor2, value=value), out, "addcmul")


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    _check_addcdiv_dtypes(tensor1, tensor2)
    return _out(_addcdiv(input, tensor1, tensor2, value=value), out, "addcdiv")


def addcdiv_(self, tensor1, tensor2, *, value=1):
    _check_addcdiv_dtypes(tensor1, tensor2)
    return _addcdiv.inplace(self, tensor1, tensor2, value=value)


def _check_addcdiv_dtypes(tensor1, tensor2):
    if tensor1._dtype._category < 2 and tensor2._dtype._category < 2:
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a "
                           "future  release addcdiv will perform a true division of tensor1 and "
                           "tensor2. The historic addcdiv behavior can be implemented as "
                           "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) "
                           "for integer inputs and as (input + value * tensor1 / tensor2) for "
                           "float inputs. The future addcdiv behavior is just the latter "
                           "implementation: (input + value * tensor1 / tensor2), for all dtypes.")
