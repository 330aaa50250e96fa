"""Elementwise ops: arithmetic, math functions, comparisons, logic, clamping, selection.

Each is a primitive (forward on arrays, derivative in ember ops). Ops whose PyTorch graph shows
another op's node (`1 / x` is MulBackward0 over ReciprocalBackward0) are written from primitives.
"""
import math

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
from .registry import primitive, COMMON, FLOAT


def _special():
    from . import special       # the special functions module (erf, lgamma, ...)
    return special


def _is_tensor(x):
    return isinstance(x, Tensor)


def _check_number(x, name):
    if not isinstance(x, (Tensor, int, float, complex, bool, np.number, np.bool_)):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(x).__name__}")


# ----------------------------------------------------------------------------- arithmetic
@primitive("add", node="AddBackward0", promote=COMMON)
def _add(xp, self, other, *, alpha=1):
    if alpha != 1:
        other = xp.multiply(other, alpha)
    return xp.add(self, other)


@_add.derivative
def _(ctx, grad):
    return grad, (grad if ctx.alpha == 1 else grad * ctx.alpha)


@primitive("sub", node="SubBackward0", promote=COMMON)
def _sub(xp, self, other, *, alpha=1):
    if alpha != 1:
        other = xp.multiply(other, alpha)
    return xp.subtract(self, other)


@_sub.derivative
def _(ctx, grad):
    return grad, (-grad if ctx.alpha == 1 else grad * -ctx.alpha)


@primitive("rsub", node="RsubBackward1", promote=COMMON)
def _rsub(xp, self, other, *, alpha=1):
    # other - alpha * self, with `other` a Python number
    return xp.subtract(other, self if alpha == 1 else xp.multiply(self, alpha))


@_rsub.derivative
def _(ctx, grad):
    return (-grad if ctx.alpha == 1 else grad * -ctx.alpha), None


def _check_bool_sub(a, b):
    if getattr(a, "_dtype", None) is D.bool_ and (getattr(b, "_dtype", None) is D.bool_ or
                                                  isinstance(b, bool)):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")


def add(input, other, *, alpha=1, out=None):
    if not _is_tensor(input):
        return _out(_add(other, input) if alpha == 1 else _add(other * alpha, input), out)
    return _out(_add(input, other, alpha=alpha), out)


def sub(input, other, *, alpha=1, out=None):
    _check_bool_sub(input, other)
    if not _is_tensor(input):
        return _out(_rsub(other, input, alpha=alpha), out)
    return _out(_sub(input, other, alpha=alpha), out)


def rsub(input, other, *, alpha=1):
    if _is_tensor(other):
        return sub(other, input, alpha=alpha)
    return _rsub(input, other, alpha=alpha)


@primitive("mul", node="MulBackward0", save=("self", "other"), promote=COMMON)
def _mul(xp, self, other):
    return xp.multiply(self, other)


@_mul.derivative
def _(ctx, grad):
    needs = ctx.needs_input_grad
    return (grad * ctx.other if needs[0] else None), (grad * ctx.self if needs[1] else None)


def mul(input, other, *, out=None):
    if not _is_tensor(input):
        input, other = other, input
    return _out(_mul(input, other), out)


@primitive("div", node="DivBackward0", save=("self", "other"), promote=FLOAT)
def _div(xp, self, other):
    return xp.true_divide(self, other)


@_div.derivative
def _(ctx, grad):
    needs = ctx.needs_input_grad
    other = ctx.other
    ga = grad / other if needs[0] else None
    gb = -grad * ctx.self / (other * other) if needs[1] else None
    return ga, gb


@primitive("div.rounding", node="DivBackward2", promote=COMMON)
def _div_rounding(xp, self, other, *, rounding_mode):
    if xp.issubdtype(xp.result_type(self), xp.integer) and _has_zero(xp, other):
        raise RuntimeError("ZeroDivisionError")
    if rounding_mode == "floor":
        if xp.issubdtype(xp.result_type(self), xp.floating):
            return xp.floor(xp.true_divide(self, other)).astype(xp.result_type(self))
        return xp.floor_divide(self, other)
    q = xp.true_divide(self, other)
    out = xp.trunc(q)
    return out.astype(xp.result_type(self, other)) if xp.ndim(out) else \
        xp.asarray(out).astype(xp.result_type(self))


@_div_rounding.derivative
def _(ctx, grad):
    return grad * 0, None


def _has_zero(xp, x):
    return bool(xp.any(xp.asarray(x) == 0))


def div(input, other, *, rounding_mode=None, out=None):
    if rounding_mode is not None:
        if rounding_mode not in ("floor", "trunc"):
            raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or "
                               f"'floor' but found '{rounding_mode}'")
        if not _is_tensor(input):
            from .creation import scalar_tensor
            input = scalar_tensor(input, other)
        return _out(_div_rounding(input, other, rounding_mode=rounding_mode), out)
    if not _is_tensor(input):
        return _out(mul(reciprocal(other), input), out)
    return _out(_div(input, other), out)


true_divide = div
subtract = sub
multiply = mul
divide = div


def floor_divide(input, other, *, out=None):
    return div(input, other, rounding_mode="floor", out=out)


@primitive("remainder", node="RemainderBackward0", promote=COMMON)
def _remainder(xp, self, other):
    if xp.issubdtype(xp.result_type(self), xp.integer) and _has_zero(xp, other):
        raise RuntimeError("ZeroDivisionError")
    return xp.remainder(self, other)


@_remainder.derivative
def _(ctx, grad):
    return grad, None


def remainder(input, other, *, out=None):
    if not _is_tensor(input):
        from .creation import scalar_tensor
        input = scalar_tensor(input, other)
    return _out(_remainder(input, other), out)


@primitive("fmod", node="FmodBackward0", promote=COMMON)
def _fmod(xp, self, other):
    if xp.issubdtype(xp.result_type(self), xp.integer) and _has_zero(xp, other):
        raise RuntimeError("ZeroDivisionError")
    return xp.fmod(self, other)


@_fmod.derivative
def _(ctx, grad):
    return grad, None


def fmod(input, other, *, out=None):
    return _out(_fmod(input, other), out)


@primitive("pow", node="PowBackward0", save=("self", "exponent"), promote=COMMON)
def _pow_scalar(xp, self, exponent):
    if xp.issubdtype(self.dtype, xp.integer) and not isinstance(exponent, float) and \
            exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return xp.power(self, exponent)


@_pow_scalar.derivative
def _(ctx, grad):
    e = ctx.exponent
    if e == 0:
        return grad * 0, None
    return grad * e * ctx.self.pow(e - 1), None


@primitive("pow.tensor", node="PowBackward1", save=("self", "exponent", "result"),
           promote=COMMON)
def _pow_tensor(xp, self, exponent):
    return xp.power(self, exponent)


@_pow_tensor.derivative
def _(ctx, grad):
    needs = ctx.needs_input_grad
    base, exp_ = ctx.self, ctx.exponent
    ga = grad * exp_ * base.pow(exp_ - 1) if needs[0] else None
    gb = None
    if needs[1]:
        safe_log = where(base == 0, base * 0, log(where(base == 0, base * 0 + 1, base)))
        gb = grad * ctx.result * safe_log
    return ga, gb


@primitive("pow.scalar_base", node="PowBackward2", save=("exponent", "self", "result"),
           promote=COMMON)
def _pow_scalar_base(xp, exponent, self):
    return xp.power(self, exponent)


@_pow_scalar_base.derivative
def _(ctx, grad):
    return grad * ctx.result * math.log(ctx.self), None


def pow(input, exponent, *, out=None):
    if not _is_tensor(input):
        return _out(_pow_scalar_base(exponent, input), out)
    if _is_tensor(exponent):
        return _out(_pow_tensor(input, exponent), out)
    return _out(_pow_scalar(input, exponent), out)


def float_power(input, exponent):
    return pow(input.double() if _is_tensor(input) else input,
               exponent.double() if _is_tensor(exponent) else exponent)


@primitive("atan2", node="Atan2Backward0", save=("self", "other"), promote=FLOAT)
def _atan2(xp, self, other):
    return xp.arctan2(self, other)


@_atan2.derivative
def _(ctx, grad):
    a, b = ctx.self, ctx.other
    denom = a * a + b * b
    return grad * b / denom, grad * -a / denom


def atan2(input, other, *, out=None):
    return _out(_atan2(input, other), out)


arctan2 = atan2


def _minmax_derivative(ctx, grad):
    a, b = ctx.self, ctx.other
    pick_a = (a > b) if ctx._op.name == "maximum" else (a < b)
    tie = (a == b)
    ga = where(pick_a, grad, grad * 0) + where(tie, grad / 2, grad * 0)
    gb = where(pick_a | tie, grad * 0, grad) + where(tie, grad / 2, grad * 0)
    return ga, gb


@primitive("maximum", node="MaximumBackward0", save=("self", "other"), promote=COMMON)
def _maximum(xp, self, other):
    return xp.maximum(self, other)


@primitive("minimum", node="MinimumBackward0", save=("self", "other"), promote=COMMON)
def _minimum(xp, self, other):
    return xp.minimum(self, other)


_maximum.derivative(_minmax_derivative)
_minimum.derivative(_minmax_derivative)


def maximum(input, other, *, out=None):
    return _out(_maximum(input, other), out)


def minimum(input, other, *, out=None):
    return _out(_minimum(input, other), out)


def fmax(input, other):
    return where(isnan(other), input, where(isnan(input), other, maximum(input, other)))


def fmin(input, other):
    return where(isnan(other), input, where(isnan(input), other, minimum(input, other)))


# ----------------------------------------------------------------------------- unary
def _unary(name, node, forward, derivative, save=("self",), promote=FLOAT):
    """Declare a one-input op from an array function and a derivative `f(ctx, grad)`."""
    op = primitive(name, node=node, save=save, promote=promote)(
        lambda xp, self: forward(xp, self))
    op.derivative(lambda ctx, grad: derivative(ctx, grad))

    def public(input, *, out=None):
        return _out(op(input), out)
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


abs = _unary("abs", "AbsBackward0", lambda xp, x: xp.abs(x),
             lambda ctx, g: g * ctx.self.sgn(), promote=None)
absolute = abs
sign = _unary("sign", "SignBackward0", lambda xp, x: xp.sign(x) if x.dtype != np.bool_ else x,
              lambda ctx, g: g * 0, save=(), promote=None)
sgn = _unary("sgn", "SgnBackward0",
             lambda xp, x: xp.sign(x) if not xp.iscomplexobj(x) else
             xp.where(x == 0, 0, x / xp.where(x == 0, 1, xp.abs(x))).astype(x.dtype),
             lambda ctx, g: g * 0, save=(), promote=None)
reciprocal = _unary("reciprocal", "ReciprocalBackward0", lambda xp, x: xp.reciprocal(x),
                    lambda ctx, g: -g * ctx.result * ctx.result, save=("result",))
sqrt = _unary("sqrt", "SqrtBackward0", lambda xp, x: xp.sqrt(x),
              lambda ctx, g: g / (2 * ctx.result), save=("result",))
rsqrt = _unary("rsqrt", "RsqrtBackward0", lambda xp, x: xp.reciprocal(xp.sqrt(x)),
               lambda ctx, g: g * -0.5 * ctx.result.pow(3), save=("result",))
square = None  # defined below as a composite (PyTorch: PowBackward0)
exp = _unary("exp", "ExpBackward0", lambda xp, x: xp.exp(x),
             lambda ctx, g: g * ctx.result, save=("result",))
exp2 = _unary("exp2", "Exp2Backward0", lambda xp, x: xp.exp2(x),
              lambda ctx, g: g * ctx.result * math.log(2.0), save=("result",))
expm1 = _unary("expm1", "Expm1Backward0", lambda xp, x: xp.expm1(x),
               lambda ctx, g: g * (ctx.result + 1), save=("result",))
log = _unary("log", "LogBackward0", lambda xp, x: xp.log(x), lambda ctx, g: g / ctx.self)
log2 = _unary("log2", "Log2Backward0", lambda xp, x: xp.log2(x),
              lambda ctx, g: g / (ctx.self * math.log(2.0)))
log10 = _unary("log10", "Log10Backward0", lambda xp, x: xp.log10(x),
               lambda ctx, g: g / (ctx.self * math.log(10.0)))
log1p = _unary("log1p", "Log1PBackward0", lambda xp, x: xp.log1p(x),
               lambda ctx, g: g / (ctx.self + 1))
sin = _unary("sin", "SinBackward0", lambda xp, x: xp.sin(x), lambda ctx, g: g * ctx.self.cos())
cos = _unary("cos", "CosBackward0", lambda xp, x: xp.cos(x), lambda ctx, g: g * -ctx.self.sin())
tan = _unary("tan", "TanBackward0", lambda xp, x: xp.tan(x),
             lambda ctx, g: g * (1 + ctx.result * ctx.result), save=("result",))
asin = _unary("asin", "AsinBackward0", lambda xp, x: xp.arcsin(x),
              lambda ctx, g: g * (1 - ctx.self * ctx.self).rsqrt())
acos = _unary("acos", "AcosBackward0", lambda xp, x: xp.arccos(x),
              lambda ctx, g: -g * (1 - ctx.self * ctx.self).rsqrt())
atan = _unary("atan", "AtanBackward0", lambda xp, x: xp.arctan(x),
              lambda ctx, g: g / (1 + ctx.self * ctx.self))
sinh = _unary("sinh", "SinhBackward0", lambda xp, x: xp.sinh(x),
              lambda ctx, g: g * ctx.self.cosh())
cosh = _unary("cosh", "CoshBackward0", lambda xp, x: xp.cosh(x),
              lambda ctx, g: g * ctx.self.sinh())
tanh = _unary("tanh", "TanhBackward0", lambda xp, x: xp.tanh(x),
              lambda ctx, g: g * (1 - ctx.result * ctx.result), save=("result",))
asinh = _unary("asinh", "AsinhBackward0", lambda xp, x: xp.arcsinh(x),
               lambda ctx, g: g * (ctx.self * ctx.self + 1).rsqrt())
acosh = _unary("acosh", "AcoshBackward0", lambda xp, x: xp.arccosh(x),
               lambda ctx, g: g * (ctx.self * ctx.self - 1).rsqrt())
atanh = _unary("atanh", "AtanhBackward0", lambda xp, x: xp.arctanh(x),
               lambda ctx, g: g / (1 - ctx.self * ctx.self))
arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh
sigmoid = _unary("sigmoid", "SigmoidBackward0", lambda xp, x: _special().sigmoid(xp, x),
                 lambda ctx, g: g * ctx.result * (1 - ctx.result), save=("result",))
erf = _unary("erf", "ErfBackward0", lambda xp, x: _special().erf(xp, x),
             lambda ctx, g: g * (2 / math.sqrt(math.pi)) * (-(ctx.self * ctx.self)).exp())
erfc = _unary("erfc", "ErfcBackward0", lambda xp, x: _special().erfc(xp, x),
              lambda ctx, g: g * (-2 / math.sqrt(math.pi)) * (-(ctx.self * ctx.self)).exp())
erfinv = _unary("erfinv", "ErfinvBackward0", lambda xp, x: _special().erfinv(xp, x),
                lambda ctx, g: g * (math.sqrt(math.pi) / 2) * (ctx.result * ctx.result).exp(),
                save=("result",))
relu = _unary("relu", "ReluBackward0", lambda xp, x: xp.maximum(x, 0).astype(x.dtype),
              lambda ctx, g: g * (ctx.result > 0), save=("result",), promote=None)
floor = _unary("floor", "FloorBackward0", lambda xp, x: _keep_int(xp, xp.floor, x),
               lambda ctx, g: g * 0, save=(), promote=None)
ceil = _unary("ceil", "CeilBackward0", lambda xp, x: _keep_int(xp, xp.ceil, x),
              lambda ctx, g: g * 0, save=(), promote=None)
trunc = _unary("trunc", "TruncBackward0", lambda xp, x: _keep_int(xp, xp.trunc, x),
               lambda ctx, g: g * 0, save=(), promote=None)
fix = trunc
frac = _unary("frac", "FracBackward0", lambda xp, x: x - xp.trunc(x),
              lambda ctx, g: g, save=(), promote=None)
isnan = _unary("isnan", None, lambda xp, x: xp.isnan(x), None, save=(), promote=None)
isinf = _unary("isinf", None, lambda xp, x: xp.isinf(x), None, save=(), promote=None)
isfinite = _unary("isfinite", None, lambda xp, x: xp.isfinite(x), None, save=(), promote=None)
isposinf = _unary("isposinf", None, lambda xp, x: xp.isposinf(x), None, save=(), promote=None)
isneginf = _unary("isneginf", None, lambda xp, x: xp.isneginf(x), None, save=(), promote=None)
signbit = _unary("signbit", None, lambda xp, x: xp.signbit(x), None, save=(), promote=None)
for _f in (isnan, isinf, isfinite, isposinf, isneginf, signbit):
    _f.op.differentiable = False
    _f.op.node_cls = None


def _keep_int(xp, fn, x):
    return x.copy() if x.dtype.kind in "iub" else fn(x)


def square(input):
    return pow(input, 2)


@primitive("round", node="RoundBackward0", promote=None)
def _round(xp, self, *, decimals=0):
    if decimals == 0:
        return xp.round(self) if self.dtype.kind not in "iub" else self.copy()
    return xp.round(self, decimals)


@_round.derivative
def _(ctx, grad):
    return grad * 0


def round(input, *, decimals=0, out=None):
    return _out(_round(input, decimals=decimals), out)


@primitive("logit", node="LogitBackward0", save=("self",), promote=FLOAT)
def _logit(xp, self, *, eps=None):
    if eps is not None:
        self = xp.clip(self, eps, 1 - eps)
    return xp.log(self / (1 - self))


@_logit.derivative
def _(ctx, grad):
    x = ctx.self
    g = grad / (x * (1 - x))
    if ctx.eps is not None:
        g = where((x < ctx.eps) | (x > 1 - ctx.eps), g * 0, g)
    return g


def logit(input, eps=None, *, out=None):
    return _out(_logit(input, eps=eps), out)


@primitive("nan_to_num", node="NanToNumBackward0", promote=None)
def _nan_to_num(xp, self, *, nan, posinf, neginf):
    if self.dtype.kind not in "fc":
        return self.copy()
    info = np.finfo(self.dtype) if self.dtype.kind == "f" else None
    big = info.max if info is not None else None
    return xp.nan_to_num(self, nan=nan, posinf=big if posinf is None else posinf,
                         neginf=-big if neginf is None else neginf)


@_nan_to_num.derivative
def _(ctx, grad):
    return grad * 0 + grad  # d/dx is 1 where finite; torch also passes 0 at non-finite inputs


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    return _out(_nan_to_num(input, nan=nan, posinf=posinf, neginf=neginf), out)


# ----------------------------------------------------------------------------- clamp
@primitive("clamp", node="ClampBackward1", save=("self",), promote=COMMON)
def _clamp(xp, self, *, min, max):
    if min is not None and max is not None and min > max:
        return xp.full_like(self, max)
    return xp.clip(self, min, max).astype(self.dtype, copy=False)


@_clamp.derivative
def _(ctx, grad):
    x = ctx.self
    mask = None
    if ctx.min is not None:
        mask = x >= ctx.min
    if ctx.max is not None:
        upper = x <= ctx.max
        mask = upper if mask is None else mask & upper
    return where(mask, grad, grad * 0)


@primitive("clamp.tensor", node="ClampBackward0", save=("self", "min", "max"), promote=COMMON)
def _clamp_tensor(xp, self, min, max):
    out = self
    if min is not None:
        out = xp.maximum(out, min)
    if max is not None:
        out = xp.minimum(out, max)
    return out


@_clamp_tensor.derivative
def _(ctx, grad):
    x, lo, hi = ctx.self, ctx.min, ctx.max
    mask = (x >= lo) & (x <= hi)
    return where(mask, grad, grad * 0), where(x < lo, grad, grad * 0), \
        where(x > hi, grad, grad * 0)


def clamp(input, min=None, max=None, *, out=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if _is_tensor(min) or _is_tensor(max):
        lo = min if min is not None else full_like_scalar(input, -math.inf)
        hi = max if max is not None else full_like_scalar(input, math.inf)
        return _out(_clamp_tensor(input, lo, hi), out)
    # the result dtype follows promotion with the bounds (int tensor clamped by 0.5 -> float)
    probe = [input] + [b for b in (min, max) if b is not None]
    dtype = D.result_dtype(probe)
    if dtype is not input._dtype:
        input = input.to(dtype)
    return _out(_clamp(input, min=min, max=max), out)


def full_like_scalar(t, value):
    from .creation import full_like
    return full_like(t, value)


clip = clamp


def clamp_min(input, min):
    return clamp(input, min=min)


def clamp_max(input, max):
    return clamp(input, max=max)


# ----------------------------------------------------------------------------- ternary
@primitive("where", node="WhereBackward0", save=("condition",))
def _where(xp, condition, self, other):
    return xp.where(condition, self, other)


@_where.derivative
def _(ctx, grad):
    c = ctx.condition
    zero = grad * 0
    return None, where(c, grad, zero), where(c, zero, grad)


def where(condition, input=None, other=None, *, out=None):
    if input is None and other is None:
        from .indexing import nonzero
        return nonzero(condition, as_tuple=True)
    if condition._dtype is not D.bool_:
        if condition._dtype is D.uint8:
            condition = condition.to(D.bool_)
        else:
            raise RuntimeError(f"where expected condition to be a boolean tensor, but got a "
                               f"tensor with dtype {_type_name(condition._dtype)}")
    dtype = D.result_dtype([x for x in (input, other)])
    from .creation import as_operand
    input, other = as_operand(input, dtype, condition), as_operand(other, dtype, condition)
    return _out(_where(condition, input, other), out)


def _type_name(dtype):
    from .._printing import scalar_type_name
    return scalar_type_name(dtype)


@primitive("masked_fill", node="MaskedFillBackward0", save=("mask",))
def _masked_fill(xp, self, mask, *, value):
    return xp.where(mask, xp.asarray(value, dtype=self.dtype), self)


@_masked_fill.derivative
def _(ctx, grad):
    return where(ctx.mask, grad * 0, grad), None


@primitive("masked_fill.tensor", node="MaskedFillBackward1", save=("mask",))
def _masked_fill_tensor(xp, self, mask, value):
    return xp.where(mask, value.astype(self.dtype), self)


@_masked_fill_tensor.derivative
def _(ctx, grad):
    m = ctx.mask
    return where(m, grad * 0, grad), None, where(m, grad, grad * 0).sum()


def masked_fill(input, mask, value):
    if mask._dtype is not D.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_type_name(mask._dtype).lower()}")
    if _is_tensor(value):
        if value._data.ndim != 0:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value._data.ndim} dimension(s).")
        return _masked_fill_tensor(input, mask, value)
    return _masked_fill(input, mask, value=value)


@primitive("lerp", node="LerpBackward0", promote=COMMON)
def _lerp(xp, self, end, *, weight):
    return self + weight * (end - self)


@_lerp.derivative
def _(ctx, grad):
    w = ctx.weight
    return grad * (1 - w), grad * w


@primitive("lerp.tensor", node="LerpBackward1", save=("self", "end", "weight"), promote=COMMON)
def _lerp_tensor(xp, self, end, weight):
    return self + weight * (end - self)


@_lerp_tensor.derivative
def _(ctx, grad):
    w = ctx.weight
    return grad * (1 - w), grad * w, grad * (ctx.end - ctx.self)


def lerp(input, end, weight, *, out=None):
    if _is_tensor(weight):
        return _out(_lerp_tensor(input, end, weight), out)
    return _out(_lerp(input, end, weight=weight), out)


@primitive("addcmul", node="AddcmulBackward0", save=("tensor1", "tensor2"), promote=COMMON)
def _addcmul(xp, self, tensor1, tensor2, *, value):
    return self + value * tensor1 * tensor2


@_addcmul.derivative
def _(ctx, grad):
    v = ctx.value
    return grad, grad * ctx.tensor2 * v, grad * ctx.tensor1 * v


@primitive("addcdiv", node="AddcdivBackward0", save=("tensor1", "tensor2"), promote=COMMON)
def _addcdiv(xp, self, tensor1, tensor2, *, value):
    return self + value * tensor1 / tensor2


@_addcdiv.derivative
def _(ctx, grad):
    v, t1, t2 = ctx.value, ctx.tensor1, ctx.tensor2
    return grad, grad * v / t2, -grad * v * t1 / (t2 * t2)


def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    return _out(_addcmul(input, tensor1, tensor2, value=value), out)


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    if tensor1._dtype._category < 2 and tensor2._dtype._category < 2:
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a "
                           "future release addcdiv will perform a true division of tensor1 and "
                           "tensor2. The historic addcdiv behavior can be implemented as "
                           "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) "
                           "for integer inputs and as (input + value * tensor1 / tensor2) for "
                           "float inputs. The future addcdiv behavior is just the latter "
                           "implementation: (input + value * tensor1 / tensor2), for all dtypes.")
    return _out(_addcdiv(input, tensor1, tensor2, value=value), out)


# ----------------------------------------------------------------------------- comparisons, logic
def _predicate(name, fn, promote=COMMON):
    op = primitive(name, differentiable=False, promote=promote)(lambda xp, a, b: fn(xp, a, b))

    def public(input, other, *, out=None):
        if not _is_tensor(input):
            from .creation import scalar_tensor
            input = scalar_tensor(input, other)
        return _out(op(input, other), out)
    public.__name__ = name
    return public


eq = _predicate("eq", lambda xp, a, b: xp.equal(a, b))
ne = _predicate("ne", lambda xp, a, b: xp.not_equal(a, b))
lt = _predicate("lt", lambda xp, a, b: xp.less(a, b))
le = _predicate("le", lambda xp, a, b: xp.less_equal(a, b))
gt = _predicate("gt", lambda xp, a, b: xp.greater(a, b))
ge = _predicate("ge", lambda xp, a, b: xp.greater_equal(a, b))
less, less_equal, greater, greater_equal, not_equal = lt, le, gt, ge, ne
logical_and = _predicate("logical_and", lambda xp, a, b: xp.logical_and(a, b), promote=None)
logical_or = _predicate("logical_or", lambda xp, a, b: xp.logical_or(a, b), promote=None)
logical_xor = _predicate("logical_xor", lambda xp, a, b: xp.logical_xor(a, b), promote=None)
_logical_not = primitive("logical_not", differentiable=False)(lambda xp, a: xp.logical_not(a))


def logical_not(input, *, out=None):
    return _out(_logical_not(input), out)


def _bitwise(name, fn):
    op = primitive(name, differentiable=False, promote=COMMON)(lambda xp, a, b: _int_only(
        xp, fn, a, b, name))

    def public(input, other, *, out=None):
        if not _is_tensor(input):
            from .creation import scalar_tensor
            input = scalar_tensor(input, other)
        return _out(op(input, other), out)
    public.__name__ = name
    return public


def _int_only(xp, fn, a, b, name):
    arr = a if hasattr(a, "dtype") else b
    if arr.dtype.kind in "fc":
        raise RuntimeError(f'"{name}_cpu" not implemented for \''
                           f'{_type_name(D.from_numpy_dtype(arr.dtype))}\'')
    return fn(a, b)


bitwise_and = _bitwise("bitwise_and", lambda a, b: np.bitwise_and(a, b))
bitwise_or = _bitwise("bitwise_or", lambda a, b: np.bitwise_or(a, b))
bitwise_xor = _bitwise("bitwise_xor", lambda a, b: np.bitwise_xor(a, b))
bitwise_left_shift = _bitwise("bitwise_left_shift", lambda a, b: np.left_shift(a, b))
bitwise_right_shift = _bitwise("bitwise_right_shift", lambda a, b: np.right_shift(a, b))
_bitwise_not = primitive("bitwise_not", differentiable=False)(
    lambda xp, a: xp.logical_not(a) if a.dtype == np.bool_ else xp.invert(a))


def bitwise_not(input, *, out=None):
    if input._dtype._category >= 2:
        raise RuntimeError(f'"bitwise_not_cpu" not implemented for '
                           f"'{_type_name(input._dtype)}'")
    return _out(_bitwise_not(input), out)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    if input._dtype is not other._dtype:
        raise RuntimeError(f"{_type_name(input._dtype)} did not match "
                           f"{_type_name(other._dtype)}")
    return Tensor._make(np.isclose(input._data, other._data, rtol=rtol, atol=atol,
                                   equal_nan=equal_nan), D.bool_, input._device)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


def equal(input, other):
    return input.shape == other.shape and bool(np.array_equal(input._data, other._data))


# ----------------------------------------------------------------------------- out=
def _out(result, out):
    """Write a result into a user-supplied `out=` tensor (resized if needed), as PyTorch does."""
    if out is None:
        return result
    if out._requires_grad and _grad_enabled() and result._requires_grad:
        raise RuntimeError("a.out() functions don't support automatic differentiation, however "
                           "one of the arguments requires grad.")
    if not D.can_cast(result._dtype, out._dtype):
        raise RuntimeError(f"result type {_type_name(result._dtype)} can't be cast to the "
                           f"desired output type {_type_name(out._dtype)}")
    if out.shape != result.shape:
        out.resize_(result.shape)
    from .registry import write_into
    write_into(out, result._data)
    return out


def _grad_enabled():
    from ..autograd.grad_mode import state
    return state.enabled
