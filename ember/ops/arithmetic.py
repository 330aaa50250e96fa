"""Arithmetic ops: add, sub, mul, div, remainder, fmod, pow, atan2, maximum/minimum, logaddexp,
hypot, copysign, heaviside, nextafter, ldexp, gcd and lcm."""
import math
import numpy as np
import ml_dtypes

from .. import _dtype as D
from .._printing import scalar_type_name
from .._tensor import Tensor
from ._pointwise_common import (_cast_like, _c, _check_alpha, _is_tensor, _out, _number_as_tensor,
                                _numbers_only, _promote_to, _is_int_array, unsupported, _zeros,
                                _wrapped, _OTHER_OVERLOADS, _int_pow, _ones, _POW_OVERLOADS,
                                _quiet, _type_name)
from .comparison import _require_tensor
from .pointwise import reciprocal, log, where, isnan
from .registry import COMMON, primitive, FLOAT, check_broadcast
from .creation import ones_like


# ----------------------------------------------------------------------------- arithmetic
def add_scaled(xp, a, b, alpha):
    """a + alpha * b (alpha != 1) as PyTorch's CPU add/sub kernels compute it, alpha in a's
    dtype. For float32 that is a fused multiply-add: one rounding of the exact a + alpha * b.
    Here the product is exact in float64 and the sum is rounded once to float32: the FMA's
    result but for astronomically rare double roundings. float64 keeps NumPy's two roundings
    (NumPy has no fused multiply-add). float16/bfloat16 too: PyTorch fuses them in float32 only
    in its 32-element vector blocks, its scalar tail (all of a small tensor) rounds the product
    and the sum in the half type, as NumPy does here."""
    alpha = _cast_like(alpha, a)
    if getattr(b, "_ember_sparse", False) or getattr(a, "_ember_sparse", False):
        return xp.add(a, xp.multiply(b, alpha))      # (a sparse operand: ember/sparse)
    if xp is np and a.dtype == np.float32:
        b64 = b.astype(np.float64) if isinstance(b, np.ndarray) else np.float64(np.float32(b))
        return (a.astype(np.float64) + np.float64(alpha) * b64).astype(np.float32)
    return xp.add(a, xp.multiply(b, alpha))          # (in the result dtype)


@primitive("add", node="AddBackward0", promote=COMMON)
def _add(xp, self, other, *, alpha=1):
    if alpha != 1:
        return add_scaled(xp, self, other, alpha)
    return xp.add(self, other)


@_add.derivative
def _(ctx, grad):
    return grad, (grad if ctx.alpha == 1 else grad * _c(ctx.alpha))


@primitive("sub", node="SubBackward0", promote=COMMON)
def _sub(xp, self, other, *, alpha=1):
    if alpha != 1 and getattr(self, "dtype", None) == np.float32:
        return add_scaled(xp, self, other, -alpha)                 # (negating alpha is exact)
    if alpha != 1:
        other = xp.multiply(other, _cast_like(alpha, self))     # (in the result dtype)
    return xp.subtract(self, other)


@_sub.derivative
def _(ctx, grad):
    return grad, (-grad if ctx.alpha == 1 else grad * -_c(ctx.alpha))


@primitive("rsub", node="RsubBackward1", promote=None)
def _rsub(xp, self, *, other, alpha=1):
    # other - alpha * self, with `other` a Python number (an option: torch's graph has no edge)
    if alpha != 1 and getattr(self, "dtype", None) == np.float32:
        return add_scaled(xp, xp.asarray(other, self.dtype), self, -alpha)
    if alpha != 1:
        self = xp.multiply(self, _cast_like(alpha, self))
    return xp.subtract(_cast_like(other, self), self)


@_rsub.derivative
def _(ctx, grad):
    return -grad if ctx.alpha == 1 else grad * -_c(ctx.alpha)


def _check_bool_sub(a, b):
    a_bool = getattr(a, "_dtype", None) is D.bool_ or isinstance(a, bool)
    b_bool = getattr(b, "_dtype", None) is D.bool_ or isinstance(b, bool)
    if a_bool and b_bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if a_bool or b_bool:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


def add(input, other, *, alpha=1, out=None):
    if not _is_tensor(input):
        input, other = other, input
    _check_alpha(input, other, alpha)
    return _out(_add(input, other, alpha=alpha), out, "add")


def sub(input, other, *, alpha=1, out=None):
    input = _number_as_tensor(input, other)
    _check_bool_sub(input, other)
    if not _is_tensor(input):            # number - tensor
        return rsub(other, input, alpha=alpha, out=out)
    _check_alpha(input, other, alpha)
    return _out(_sub(input, other, alpha=alpha), out, "sub")


def rsub(input, other, *, alpha=1, out=None):
    """other - alpha * input."""
    _numbers_only("rsub", (input, other), ("Tensor input, Tensor other, *, Number alpha = 1",
                                           "Tensor input, Number other, Number alpha = 1"))
    if _is_tensor(other):
        return sub(other, input, alpha=alpha, out=out)
    _check_bool_sub(input, other)
    _check_alpha(input, other, alpha)
    return _out(_rsub(_promote_to(input, other), other=other, alpha=alpha), out, "rsub")


@primitive("mul", node="MulBackward0", save=("self", "other"), promote=COMMON,
           save_for={"self": "other", "other": "self"}, opmath=True)
def _mul(xp, self, other):
    return xp.multiply(self, other)


@_mul.derivative
def _(ctx, grad):
    needs = ctx.needs_input_grad
    return ((grad * _c(ctx.other) if needs[0] else None),
            (grad * _c(ctx.self) if needs[1] else None))


def mul(input, other, *, out=None):
    if not _is_tensor(input):
        input, other = other, input
    return _out(_mul(input, other), out, "mul")


# A Python number operand through torch's Scalar overloads: one edge, nodes of their own
# (AddBackward1 ...). torch's C++ composites and derivatives (losses, pow's derivative, the
# integrators) use these where Python's `x * 2` (MulBackward0, with an empty second edge) would
# show another graph.
@primitive("add.Scalar", node="AddBackward1")
def _add_scalar(xp, self, *, other):
    return xp.add(self, _cast_like(other, self))


@primitive("sub.Scalar", node="SubBackward1")
def _sub_scalar(xp, self, *, other):
    return xp.subtract(self, _cast_like(other, self))


@primitive("mul.Scalar", node="MulBackward1", opmath=True)
def _mul_scalar(xp, self, *, other):
    return xp.multiply(self, _cast_like(other, self))


@primitive("div.Scalar", node="DivBackward1", opmath=True)
def _div_scalar(xp, self, *, other):
    return xp.true_divide(self, _cast_like(other, self))


_add_scalar.derivative(lambda ctx, grad: grad)
_sub_scalar.derivative(lambda ctx, grad: grad)
_mul_scalar.derivative(lambda ctx, grad: _mul_scalar(grad, other=_c(ctx.other)))
_div_scalar.derivative(lambda ctx, grad: _div_scalar(grad, other=_c(ctx.other)))


@primitive("div", node="DivBackward0", save=("self", "other"), promote=FLOAT,
           save_for={"self": "other"}, opmath=True)
def _div(xp, self, other):
    return xp.true_divide(self, other)


@_div.derivative
def _(ctx, grad):
    needs = ctx.needs_input_grad
    other = ctx.other
    ga = grad / _c(other) if needs[0] else None
    gb = -grad * _c(ctx.self / (other * other)) if needs[1] else None
    return ga, gb


def _check_int_zero(xp, self, other):
    if _is_int_array(self) and _is_int_array(other) and xp.any(xp.asarray(other) == 0):
        raise RuntimeError("ZeroDivisionError")


@primitive("div.rounding", node="DivBackward2", promote=COMMON, opmath=True)
def _div_rounding(xp, self, other, *, rounding_mode):
    unsupported(f"div_{rounding_mode}_cpu", self, "bc", other)
    _check_int_zero(xp, self, other)
    if _is_int_array(self):
        if rounding_mode == "floor":
            return xp.floor_divide(self, other)
        # truncation toward zero: the floor quotient, moved up by one where it was rounded down
        q = xp.floor_divide(self, other)
        inexact = (q * other != self) & ((self < 0) != (xp.asarray(other) < 0))
        return (q + inexact).astype(q.dtype)
    if rounding_mode == "floor":
        # floored from the remainder, not from the rounded quotient: 1 // 0.1 is 9 (as PyTorch)
        return xp.floor_divide(self, other)
    return xp.trunc(xp.true_divide(self, other))


@_div_rounding.derivative
def _(ctx, grad):
    zero = _zeros(grad)
    return zero, zero


def div(input, other, *, rounding_mode=None, out=None):
    input = _number_as_tensor(input, other)
    if rounding_mode is not None:
        if rounding_mode not in ("floor", "trunc"):
            raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or "
                               f"'floor' but found '{rounding_mode}'")
        if not _is_tensor(input):
            input = _wrapped(input, other)
        return _out(_div_rounding(input, other, rounding_mode=rounding_mode), out, "div")
    if not _is_tensor(input):            # number / tensor: PyTorch's graph is reciprocal * number
        return _out(mul(reciprocal(other), input), out, "div")
    return _out(_div(input, other), out, "div")


true_divide = div
subtract = sub
multiply = mul
divide = div


def floor_divide(input, other, *, out=None):
    return div(input, other, rounding_mode="floor", out=out)


@primitive("remainder", node="RemainderBackward1", save=("self", "other"), promote=COMMON)
def _remainder(xp, self, other):
    unsupported("remainder_cpu", self, "bc", other)
    _check_int_zero(xp, self, other)
    return xp.remainder(self, other)


@_remainder.derivative
def _(ctx, grad):
    needs = ctx.needs_input_grad
    return grad, (-grad * div(ctx.self, ctx.other, rounding_mode="floor") if needs[1] else None)


@primitive("remainder.scalar", node="RemainderBackward0", promote=None)
def _remainder_scalar(xp, self, *, other):
    unsupported("remainder_cpu", self, "bc")
    other = _cast_like(other, self)
    _check_int_zero(xp, self, other)
    return xp.remainder(self, other)


@_remainder_scalar.derivative
def _(ctx, grad):
    return grad


def remainder(input, other, *, out=None):
    _numbers_only("remainder", (input, other), _OTHER_OVERLOADS, 1)
    if not _is_tensor(input):
        input = _wrapped(input, other)
    if not _is_tensor(other):
        return _out(_remainder_scalar(_promote_to(input, other), other=other), out, "remainder")
    return _out(_remainder(input, other), out, "remainder")


@primitive("fmod", node="FmodBackward1", save=("self", "other"), promote=COMMON)
def _fmod(xp, self, other):
    unsupported("fmod_cpu", self, "bc", other)
    _check_int_zero(xp, self, other)
    return xp.fmod(self, other)


@_fmod.derivative
def _(ctx, grad):
    needs = ctx.needs_input_grad
    return grad, (-grad * div(ctx.self, ctx.other, rounding_mode="trunc") if needs[1] else None)


@primitive("fmod.scalar", node="FmodBackward0", promote=None)
def _fmod_scalar(xp, self, *, other):
    unsupported("fmod_cpu", self, "bc")
    other = _cast_like(other, self)
    _check_int_zero(xp, self, other)
    return xp.fmod(self, other)


@_fmod_scalar.derivative
def _(ctx, grad):
    return grad


def fmod(input, other, *, out=None):
    _require_tensor("fmod", input, other, True)     # (no number-first overload, unlike remainder)
    if not _is_tensor(other):
        return _out(_fmod_scalar(_promote_to(input, other), other=other), out, "fmod")
    return _out(_fmod(input, other), out, "fmod")


@primitive("pow", node="PowBackward0", save=("self",), promote=None)
def _pow_scalar(xp, self, *, exponent):
    if self.dtype == np.bool_:          # x ** True is x, x ** False is True (NumPy: int8)
        return xp.logical_or(self, not exponent)
    if _is_int_array(self):
        return _int_pow(xp, self, _cast_like(exponent, self))
    if exponent in (3, -2, -0.5) and (self.dtype.kind == "f" or self.dtype == ml_dtypes.bfloat16) \
            and not getattr(self, "_ember_sparse", False):     # (sparse values: their own pow)
        return _pow_special(xp, self, exponent)
    return xp.power(self, _cast_like(exponent, self))


def _pow_special(xp, x, exponent):
    """torch's products for x ** 3, x ** -2 and x ** -0.5 (its pow is a different, vectorised
    function otherwise): x * x * x, 1 / (x * x), 1 / sqrt(x); float16 computes them in float32
    and rounds once, bfloat16 rounds after each step (as NumPy's bfloat16 arithmetic does);
    x ** -0.5 in float16 and bfloat16 is their plain pow."""
    half = x.dtype == np.float16
    if half:
        x = x.astype(np.float32)
    one = x.dtype.type(1)
    if exponent == 3:
        out = x * x
        out *= x
    elif exponent == -2:
        out = x * x
        xp.divide(one, out, out=out)
    elif x.dtype == ml_dtypes.bfloat16 or half:     # (their x ** -0.5 is the plain pow)
        out = xp.power(x, x.dtype.type(exponent))
    else:
        out = xp.sqrt(x)
        xp.divide(one, out, out=out)
    return out.astype(np.float16) if half else out


@_pow_scalar.derivative
def _(ctx, grad):
    e = ctx.exponent
    if e == 0:
        return _zeros(grad)
    return grad * _c(_mul_scalar(ctx.self.pow(e - 1), other=e))


@primitive("pow.tensor", node="PowBackward1", save=("self", "exponent", "result"),
           promote=COMMON)
def _pow_tensor(xp, self, exponent):
    unsupported("pow", self)
    if _is_int_array(self):
        return _int_pow(xp, self, exponent)
    return xp.power(self, exponent)


@_pow_tensor.derivative
def _(ctx, grad):
    needs = ctx.needs_input_grad
    base, exp_ = ctx.self, ctx.exponent
    ga = where(exp_ == 0, _zeros(grad), grad * _c(exp_ * base.pow(exp_ - 1))) \
        if needs[0] else None
    gb = None
    if needs[1]:
        # d/de base**e = result * log(base); PyTorch takes it as 0 where base and result are 0
        safe_log = log(where(base == 0, _ones(base), base))
        nonnegative = (exp_.real if exp_._dtype.is_complex else exp_) >= 0
        gb = where((base == 0) & nonnegative, _zeros(grad), grad * _c(ctx.result * safe_log))
    return ga, gb


@primitive("pow.scalar_base", node="PowBackward2", save=("result",), promote=None)
def _pow_scalar_base(xp, exponent, *, base):
    unsupported("pow", exponent)       # (True ** bool tensor: PyTorch has no Bool kernel)
    if _is_int_array(exponent):
        return _int_pow(xp, xp.full_like(exponent, base), exponent)
    return xp.power(_cast_like(base, exponent), exponent)


@_pow_scalar_base.derivative
def _(ctx, grad):
    if ctx.base == 0:
        return _zeros(grad)
    return grad * _c(ctx.result * math.log(ctx.base))


def pow(input=None, exponent=None, *, out=None, self=None):
    if self is not None:                # torch.pow(self=2, exponent=t): a number base
        input = self
    _numbers_only("pow", (input, exponent), _POW_OVERLOADS)
    if not _is_tensor(input):           # number ** tensor
        return _out(_pow_scalar_base(_promote_to(exponent, input), base=input), out, "pow")
    if _is_tensor(exponent):
        return _out(_pow_tensor(input, exponent), out, "pow")
    if input._dtype._category < 2 and not isinstance(exponent, (float, complex)) and \
            exponent < 0 and \
            D.result_dtype([input, exponent])._category < 2:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return _out(_pow_scalar(_promote_to(input, exponent), exponent=exponent), out, "pow")


def float_power(input, exponent):
    _numbers_only("float_power", (input, exponent), _POW_OVERLOADS)
    return pow(input.double() if _is_tensor(input) else input,
               exponent.double() if _is_tensor(exponent) else exponent)


@primitive("atan2", node="Atan2Backward0", save=("self", "other"), promote=FLOAT)
def _atan2(xp, self, other):
    unsupported("atan2_cpu", self, "c", other)
    return xp.arctan2(self, other)


@_atan2.derivative
def _(ctx, grad):
    a, b = ctx.self, ctx.other
    denom = a * a + b * b
    return grad * b / denom, grad * -a / denom


def atan2(input, other, *, out=None):
    _require_tensor("atan2", input, other, False)
    return _out(_atan2(input, other), out, "atan2")


arctan2 = atan2


def _minmax_derivative(ctx, grad):
    a, b = ctx.self, ctx.other
    pick_a = (a > b) if ctx._op.name == "maximum" else (a < b)
    tie = (a == b)
    ga = where(pick_a, grad, _zeros(grad)) + where(tie, grad / 2, _zeros(grad))
    gb = where(pick_a | tie, _zeros(grad), grad) + where(tie, grad / 2, _zeros(grad))
    return ga, gb


def _no_complex_minmax(name, x):
    if x.dtype.kind == "c":
        raise RuntimeError(f"{name} not implemented for complex tensors.")


@primitive("maximum", node="MaximumBackward0", save=("self", "other"), promote=COMMON)
def _maximum(xp, self, other):
    _no_complex_minmax("maximum", self)
    return xp.maximum(self, other)


@primitive("minimum", node="MinimumBackward0", save=("self", "other"), promote=COMMON)
def _minimum(xp, self, other):
    _no_complex_minmax("minimum", self)
    return xp.minimum(self, other)


_maximum.derivative(_minmax_derivative)
_minimum.derivative(_minmax_derivative)


def maximum(input, other, *, out=None):
    _require_tensor("maximum", input, other, False)
    return _out(_maximum(input, other), out, "maximum")


def minimum(input, other, *, out=None):
    _require_tensor("minimum", input, other, False)
    return _out(_minimum(input, other), out, "minimum")


def _nan_ignoring(name, extreme):
    """fmax/fmin: maximum/minimum where a NaN loses to a number."""
    def public(input, other, *, out=None):
        _require_tensor(name, input, other, False)
        if D.result_dtype([input, other]).is_complex:
            raise RuntimeError(f"{name} not implemented for complex tensors.")
        result = where(isnan(other), input, where(isnan(input), other, extreme(input, other)))
        return _out(result, out, name)
    public.__name__ = name
    return public


fmax = _nan_ignoring("fmax", maximum)
fmin = _nan_ignoring("fmin", minimum)


def square(input, *, out=None):
    return pow(input, 2, out=out)

_LN2 = math.log(2.0)


def _require_tensors(name, input, other, other_name="other"):
    """PyTorch's TypeError for ops that take tensors only (no Python-number overloads)."""
    for value, arg, pos in ((input, "input", 1), (other, other_name, 2)):
        if not isinstance(value, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                            f"{type(value).__name__}")


# ----------------------------------------------------------------------------- logaddexp
@primitive("logaddexp", node="LogaddexpBackward0", save=("self", "other"), promote=COMMON)
def _logaddexp(xp, self, other):
    unsupported("logaddexp_cpu", self, "biu", other)
    if self.dtype.kind == "c":
        # log(e^a + e^b) = m + log1p(e^(n - m)), m the operand with the larger real part
        big = xp.where(self.real >= other.real, self, other)
        small = xp.where(self.real >= other.real, other, self)
        with _quiet(xp):
            return big + xp.log1p(xp.exp(small - big))
    return xp.logaddexp(self, other)


@_logaddexp.derivative
def _(ctx, grad):
    a, b = ctx.self, ctx.other
    # d/da log(e^a + e^b) = 1 / (1 + e^(b - a))
    return grad / _c(1 + (b - a).exp()), grad / _c(1 + (a - b).exp())


@primitive("logaddexp2", node="Logaddexp2Backward0", save=("self", "other"), promote=COMMON)
def _logaddexp2(xp, self, other):
    unsupported("logaddexp2_cpu", self, "biuc", other)
    return xp.logaddexp2(self, other)


@_logaddexp2.derivative
def _(ctx, grad):
    a, b = ctx.self, ctx.other
    return grad / (1 + (b - a).exp2()), grad / (1 + (a - b).exp2())


def logaddexp(input, other, *, out=None):
    _require_tensors("logaddexp", input, other)
    return _out(_logaddexp(input, other), out, "logaddexp")


def logaddexp2(input, other, *, out=None):
    _require_tensors("logaddexp2", input, other)
    return _out(_logaddexp2(input, other), out, "logaddexp2")


# ----------------------------------------------------------------------------- hypot
@primitive("hypot", node="HypotBackward0", save=("self", "other", "result"), promote=COMMON)
def _hypot(xp, self, other):
    unsupported("hypot_cpu", self, "biuc", other)
    return xp.hypot(self, other)


@_hypot.derivative
def _(ctx, grad):
    r = ctx.result
    return grad * ctx.self / r, grad * ctx.other / r


def hypot(input, other, *, out=None):
    _require_tensors("hypot", input, other)
    return _out(_hypot(input, other), out, "hypot")


# ----------------------------------------------------------------------------- copysign
def _copysign_forward(xp, self, other):
    unsupported("copysign_cpu", self, "c", other)
    return xp.copysign(self, other)


_copysign = primitive("copysign", node="CopysignBackward0", save=("self", "result"),
                      promote=FLOAT)(_copysign_forward)
_copysign_scalar = primitive("copysign.scalar", node="CopysignBackward1",
                             save=("self", "result"), promote=FLOAT)(_copysign_forward)


def _copysign_derivative(ctx, grad):
    x = ctx.self
    # result / x is +-1 (the sign flip), 0 where x == 0; `other` gets a zero gradient
    ratio = where(x == 0, _zeros(x), ctx.result / where(x == 0, _ones_like(x), x))
    gx = grad * ratio
    if ctx.needs_input_grad[1]:
        return gx, _zeros(grad)
    return gx, None


def _ones_like(t):
    return ones_like(t)


_copysign.derivative(_copysign_derivative)
_copysign_scalar.derivative(_copysign_derivative)


def copysign(input, other, *, out=None):
    if not isinstance(input, Tensor) or not isinstance(other, (Tensor, int, float, complex)):
        names = [type(v).__name__ if not isinstance(v, Tensor) else "Tensor"
                 for v in (input, other)]
        raise TypeError(f"copysign() received an invalid combination of arguments - got "
                        f"({', '.join(names)}), but expected one of:\n"
                        f" * (Tensor input, Tensor other, *, Tensor out = None)\n"
                        f" * (Tensor input, Number other, *, Tensor out = None)\n")
    op = _copysign if isinstance(other, Tensor) else _copysign_scalar
    return _out(op(input, other), out, "copysign")


def copysign_(self, other):
    op = _copysign if isinstance(other, Tensor) else _copysign_scalar
    return op.inplace(self, other)


# ----------------------------------------------------------------------------- heaviside
@primitive("heaviside", node="torch::autograd::NotImplemented", promote=None)
def _heaviside(xp, self, values):
    if self.dtype.kind == "c" or values.dtype.kind == "c":
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if self.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    # values where input == 0, else (input > 0) (nan > 0 is False: 0)
    return xp.where(self == 0, values, (self > 0).astype(self.dtype))


@_heaviside.derivative
def _(ctx, grad):
    raise RuntimeError("derivative for aten::heaviside is not implemented")


def heaviside(input, values, *, out=None):
    _require_tensors("heaviside", input, values, "values")
    return _out(_heaviside(input, values), out, "heaviside")


# ----------------------------------------------------------------------------- nextafter
@primitive("nextafter", node="NextafterBackward0", promote=COMMON)
def _nextafter(xp, self, other):
    unsupported("nextafter_cpu", self, "biuc", other)
    return xp.nextafter(self, other)


@_nextafter.derivative
def _(ctx, grad):
    return grad, _zeros(grad)


def nextafter(input, other, *, out=None):
    _require_tensors("nextafter", input, other)
    return _out(_nextafter(input, other), out, "nextafter")


# ----------------------------------------------------------------------------- ldexp
@primitive("ldexp", node="LdexpBackward0", save=("other", "result"), promote=FLOAT)
def _ldexp(xp, self, other):
    # input * 2**other (exact for integral exponents; works for complex inputs too)
    return self * xp.exp2(other.real if other.dtype.kind == "c" else other).astype(self.dtype)


@_ldexp.derivative
def _(ctx, grad):
    gx = grad * ctx.other.exp2() if ctx.needs_input_grad[0] else None
    gy = grad * ctx.result * _LN2 if ctx.needs_input_grad[1] else None
    return gx, gy


def _check_ldexp_exponent(input, other):
    # PyTorch computes a float input's 2**other in other's dtype: bool has no kernel for it
    if input._dtype.is_floating_point and other._dtype is D.bool_:
        raise NotImplementedError("\"ldexp_cpu_exp\" not implemented for 'Bool'")


def ldexp(input, other, *, out=None):
    _require_tensors("ldexp", input, other)
    _check_ldexp_exponent(input, other)
    return _out(_ldexp(input, other), out, "ldexp")


def ldexp_(self, other):
    _require_tensors("ldexp_", self, other)
    _check_ldexp_exponent(self, other)
    if self._dtype._category < 2:
        raise RuntimeError(f"ldexp can't be cast to the desired output type "
                           f"{_type_name(self._dtype)}")
    return _ldexp.inplace(self, other)


# ----------------------------------------------------------------------------- gcd / lcm
def _integer_binary(name, fn):
    op = primitive(name, promote=COMMON, differentiable=False)(
        lambda xp, self, other: fn(xp, self, other))

    def check(input, other):
        _require_tensor(name, input, other, False)     # (no Python-number overload)
        # the kernel runs in the result dtype: an int tensor with a bool one is fine
        dtype = D.result_dtype([input, other])
        if dtype._category >= 2 or dtype is D.bool_:
            check_broadcast((input, other))       # (PyTorch reports the shapes first)
            raise NotImplementedError(f'"{name}_cpu" not implemented for '
                                      f"'{scalar_type_name(dtype)}'")

    def public(input, other, *, out=None):
        check(input, other)
        return _out(op(input, other), out, name)

    def inplace(self, other):
        check(self, other)
        return op.inplace(self, other)
    public.__name__, inplace.__name__ = name, name + "_"
    return public, inplace


def _lcm(xp, a, b):
    g = xp.gcd(a, b)
    with np.errstate(all="ignore"):
        out = xp.abs(a // xp.where(g == 0, 1, g) * b)
    return xp.where(g == 0, 0, out).astype(np.result_type(a, b), copy=False)


gcd, gcd_ = _integer_binary("gcd", lambda xp, a, b: xp.gcd(a, b))
lcm, lcm_ = _integer_binary("lcm", _lcm)


__all__ = ['gcd', 'gcd_', 'lcm', 'lcm_', 'gcd_', 'lcm_', 'logaddexp', 'logaddexp2', 'hypot',
               'copysign', 'heaviside', 'nextafter', 'ldexp', 'ldexp_']
