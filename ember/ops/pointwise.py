"""Elementwise ops: arithmetic, math functions, comparisons, logic, clamping, selection.

Each is a primitive (forward on arrays, derivative in ember ops). Ops whose PyTorch graph shows
another op's node (`1 / x` is MulBackward0 over ReciprocalBackward0) are written from primitives.
"""
import math

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
from ..autograd import grad_mode
from .registry import primitive, check_broadcast, COMMON, FLOAT

_BF16 = D.bfloat16.np


def _special():
    from . import special       # the special functions module (erf, lgamma, ...)
    return special


def _is_tensor(x):
    return isinstance(x, Tensor)


def _c(x):
    """The complex conjugate of a derivative factor (PyTorch's gradients of complex inputs are
    grad * conj(f'(z))); a no-op for real tensors and numbers."""
    if isinstance(x, Tensor):
        return x.conj() if x._dtype.is_complex else x
    return x.conjugate() if isinstance(x, complex) else x


def _zeros(t):
    """Zeros like t, for derivatives: a constant, where `t * 0` would turn an inf or nan
    gradient into nan (PyTorch's derivatives give exact zeros there)."""
    from .creation import zeros_like
    return zeros_like(t)


def _ones(t):
    from .creation import ones_like
    return ones_like(t)


# ----------------------------------------------------------------------------- helpers
def _cast_like(value, array):
    """A Python number as a NumPy scalar of `array`'s dtype (ints wrap, as PyTorch casts them):
    NumPy would otherwise widen some (bfloat16 * 0.5 -> float32)."""
    dtype = array.dtype
    try:
        return dtype.type(value)
    except (OverflowError, TypeError, ValueError):
        return np.asarray(value).astype(dtype)[()]


def _wrapped(value, like):
    """A Python number as the zero-dim tensor PyTorch wraps it in when an op has no Scalar
    overload: its dtype is the result dtype with `like`, so it never raises the result type."""
    from .creation import scalar_tensor
    dtype = D.result_dtype([like, value])
    return scalar_tensor(np.asarray(value).astype(dtype.np)[()], like, dtype)


def _promote_to(input, *numbers):
    """`input` cast to its result dtype with the Python numbers (an int tensor raised to 2.5 is
    computed in float), for ops that take numbers as options rather than as operands."""
    dtype = D.result_dtype([input, *numbers])
    return input if dtype is input._dtype else input.to(dtype)


def _py_number(x):
    """A NumPy scalar as PyTorch's argument parser reads one given for a Number: an integer as
    int, anything else as float (np.bool_ too; a complex one loses its imaginary part, with
    NumPy's warning). Other values are returned as they are."""
    if isinstance(x, np.generic):
        return int(x) if isinstance(x, np.integer) else float(x)
    return x


def _number_as_tensor(input, other):
    """PyTorch's argument parser takes a number given for a Tensor `input` as a tensor of its
    own (2 -> int64, 2.5 -> the default float dtype) when `other` is a number too:
    torch.sub(2, 3) is tensor(-1)."""
    if _is_tensor(input) or _is_tensor(other):
        return input
    from .creation import tensor
    return tensor(input)


def _numbers_only(name, args, overloads, number_first=None):
    """PyTorch's error for an op without that conversion called with numbers alone
    (torch.pow(2, 3)): `overloads` are its signatures; the one at `number_first` (the
    number-first overload) says which arguments were of the wrong type."""
    if any(_is_tensor(a) for a in args):
        return
    from .creation import _type_name
    names = [_type_name(a) for a in args]
    lines = ""
    for i, sig in enumerate(overloads):
        lines += f" * ({sig})\n"
        if i == number_first:
            bad = ", ".join(f"!{n}!" for n in names)
            lines += (f"      didn't match because some of the arguments have invalid types: "
                      f"({bad})\n")
    raise TypeError(f"{name}() received an invalid combination of arguments - got "
                    f"({', '.join(names)}), but expected one of:\n{lines}")


# the signatures PyTorch lists in those errors
_OTHER_OVERLOADS = ("Tensor input, Tensor other, *, Tensor out = None",
                    "Number self, Tensor other", "Tensor input, Number other, *, Tensor out = None")
_POW_OVERLOADS = ("Tensor input, Tensor exponent, *, Tensor out = None",
                  "Number self, Tensor exponent, *, Tensor out = None",
                  "Tensor input, Number exponent, *, Tensor out = None")


def _check_alpha(input, other, alpha):
    if alpha.__class__ is int and alpha == 1:
        return      # (1.0 and True are checked: torch checks the type, not the value)
    dtype = D.result_dtype([input, other])
    if isinstance(alpha, bool) and dtype is not D.bool_:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if dtype._category < 2 and isinstance(alpha, float):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")


def _int_pow(xp, base, exponent):
    """Integer power as PyTorch computes it: a negative exponent gives 1/base**|e| truncated
    (1 for base 1, +-1 for base -1, else 0) instead of NumPy's error."""
    negative = exponent < 0
    if not xp.any(negative):
        return xp.power(base, exponent)
    out = xp.power(base, xp.where(negative, 0, exponent).astype(base.dtype if hasattr(
        base, "dtype") else exponent.dtype))
    odd = (exponent % 2) != 0
    small = xp.where(base == 1, 1, xp.where(base == -1, xp.where(odd, -1, 1), 0))
    return xp.where(negative, small, out).astype(out.dtype)


def unsupported(kernel, x, kinds="b", other=None):
    """PyTorch's error for a dtype its kernel has no implementation for (kinds: NumPy dtype
    kinds that raise; "b" bool, "iu" integers). `other`: an elementwise kernel's other operand,
    for PyTorch reports shapes that do not broadcast before the dtype (NumPy's ValueError
    here becomes that error in the registry)."""
    if getattr(x, "dtype", None) is not None and x.dtype.kind in kinds:
        if other is not None:
            np.broadcast_shapes(np.shape(x), np.shape(other))
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_type_name(D.from_numpy_dtype(x.dtype))}'")


def _is_int_array(x):
    return getattr(x, "dtype", np.dtype(np.float64)).kind in "iub"


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
    return xp.power(self, _cast_like(exponent, self))


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
                 lambda xp, x: _special().sigmoid(xp, x) if x.dtype.kind != "c" else
                 1 / (1 + xp.exp(-x)),
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


@primitive("sigmoid_backward", node="SigmoidBackwardBackward0",
           save=("grad_output", "output"))
def _sigmoid_backward(xp, grad_output, output):
    return grad_output * (output * (1 - output))


@_sigmoid_backward.derivative
def _(ctx, gg):
    # out = g * y (1 - y): d/dg = y (1 - y), d/dy = g (1 - 2 y)
    y = ctx.output
    return _sigmoid_backward(gg, y), gg * ctx.grad_output * (1 - 2 * y)


@primitive("threshold_backward", node="ThresholdBackwardBackward0", save=("self",))
def _threshold_backward(xp, grad_output, self, *, threshold):
    """relu's (and threshold's) backward: the gradient where self > threshold, else 0."""
    return masked_keep(xp, self > threshold, grad_output)


def masked_keep(xp, mask, x):
    """x where mask, exact zeros elsewhere. Multiplying by the mask is branch-free (~15x faster
    than where() on a random mask), but would turn an inf or nan outside it into nan: such
    values (rare; a sum of x shows them) take the where() path."""
    if xp.isfinite(xp.sum(x)):
        return xp.multiply(x, mask, dtype=x.dtype)
    return xp.where(mask, x, xp.zeros((), x.dtype))


@_threshold_backward.derivative
def _(ctx, grad):
    # piecewise constant in self: its gradient is zero (but self stays in the graph, as in torch)
    return _threshold_backward(grad, ctx.self, threshold=ctx.threshold), _zeros(grad)


def square(input, *, out=None):
    return pow(input, 2, out=out)


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
    import ml_dtypes                     # finfo that knows bfloat16
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
        from .creation import scalar_tensor
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
        from .indexing import nonzero
        return nonzero(condition, as_tuple=True)
    if condition._dtype is not D.bool_:
        if condition._dtype is D.uint8:
            condition = condition.to(D.bool_)
        else:
            raise RuntimeError(f"where expected condition to be a boolean tensor, but got a "
                               f"tensor with dtype {_type_name(condition._dtype)}")
    input, other = _py_number(input), _py_number(other)
    if not _is_tensor(input) and not _is_tensor(other):
        from .creation import scalar_tensor
        dtype = D.result_dtype([input, other])
        input = scalar_tensor(input, condition, dtype)
    if not _is_tensor(input):
        input = _wrapped(input, other)
    if not _is_tensor(other):
        other = _wrapped(other, input)
    try:
        result = _where(input, other, condition=condition)
    except ValueError:
        from .registry import check_broadcast
        check_broadcast((condition, input, other))   # PyTorch's message, the condition included
        raise
    return _out(result, out, "where", "where")


def _type_name(dtype):
    from .._printing import scalar_type_name
    return scalar_type_name(dtype)


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
        import ml_dtypes
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
        from .registry import check_broadcast
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


# ----------------------------------------------------------------------------- comparisons, logic
def _require_tensor(name, input, other, scalar_other):
    """PyTorch's argument errors: `input` must be a Tensor (and `other` too, for logical ops;
    the comparisons, with a Tensor and a Number overload, word theirs differently)."""
    if not _is_tensor(input):
        if scalar_other:
            got = ", ".join(type(x).__name__ if not _is_tensor(x) else "Tensor"
                            for x in (input, other))
            raise TypeError(f"{name}() received an invalid combination of arguments - got "
                            f"({got}), but expected one of:\n"
                            f" * (Tensor input, Tensor other, *, Tensor out = None)\n"
                            f" * (Tensor input, Number other, *, Tensor out = None)\n")
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if not scalar_other and not _is_tensor(other):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")


def _require_tensor_arg(method, other, arg="other"):
    """A Tensor-only method's TypeError for a number `other` (position 1: after self)."""
    if not _is_tensor(other):
        raise TypeError(f"{method}(): argument '{arg}' (position 1) must be Tensor, not "
                        f"{type(other).__name__}")


def _predicate(name, fn, promote=COMMON, scalar_other=True):
    op = primitive(name, differentiable=False, promote=promote)(lambda xp, a, b: fn(xp, a, b))

    def public(input, other, *, out=None):
        _require_tensor(name, input, other, scalar_other)
        return _out(op(input, other), out, name, "any")     # (out may have any dtype)
    public.__name__ = name
    public.kernel = fn
    return public


def _comparison_inplace(predicate, node):
    """`x.eq_(other)` and the other in-place comparisons. On a tensor in a graph PyTorch records
    the comparison as a node (EqBackward0 for a number, EqBackward1 for a tensor) whose
    gradients are zeros: the 0/1 result is constant in its inputs. Without a graph it is the
    plain comparison written into self."""
    kernel, name = predicate.kernel, predicate.__name__
    with_number = primitive(f"{name}_.Scalar", node=f"{node}Backward0")(
        lambda xp, self, *, other: kernel(xp, self, other))
    with_tensor = primitive(f"{name}_.Tensor", node=f"{node}Backward1")(
        lambda xp, self, other: kernel(xp, self, other))
    with_number.derivative(lambda ctx, grad: _zeros(grad))
    with_tensor.derivative(lambda ctx, grad: (_zeros(grad), _zeros(grad)))

    plain = []      # the comparison written into self, made on first use (methods imports us)

    def method(self, other):
        if not (grad_mode.state.enabled and (self._requires_grad or
                                             getattr(other, "_requires_grad", False))):
            if not plain:
                from .methods import _inplace_via
                plain.append(_inplace_via(predicate))
            return plain[0](self, other)
        if _is_tensor(other):
            return with_tensor.inplace(self, other)
        return with_number.inplace(self, other=_py_number(other))
    method.__name__ = f"{name}_"
    return method


eq = _predicate("eq", lambda xp, a, b: xp.equal(a, b))
ne = _predicate("ne", lambda xp, a, b: xp.not_equal(a, b))
lt = _predicate("lt", lambda xp, a, b: unsupported("lt_cpu", a, "c", b) or xp.less(a, b))
le = _predicate("le", lambda xp, a, b: unsupported("le_cpu", a, "c", b) or xp.less_equal(a, b))
gt = _predicate("gt", lambda xp, a, b: unsupported("gt_cpu", a, "c", b) or xp.greater(a, b))
ge = _predicate("ge", lambda xp, a, b: unsupported("ge_cpu", a, "c", b) or xp.greater_equal(a, b))
less, less_equal, greater, greater_equal, not_equal = lt, le, gt, ge, ne
logical_and = _predicate("logical_and", lambda xp, a, b: xp.logical_and(a, b), promote=None,
                         scalar_other=False)
logical_or = _predicate("logical_or", lambda xp, a, b: xp.logical_or(a, b), promote=None,
                        scalar_other=False)
logical_xor = _predicate("logical_xor", lambda xp, a, b: xp.logical_xor(a, b), promote=None,
                         scalar_other=False)
_logical_not = primitive("logical_not", differentiable=False)(lambda xp, a: xp.logical_not(a))


def logical_not(input, *, out=None):
    return _out(_logical_not(input), out, "logical_not", "any")


def _bitwise(name, fn, kernel=None):
    op = primitive(name, differentiable=False, promote=COMMON)(lambda xp, a, b: fn(xp, a, b))
    kernel = kernel or name + "_cpu"

    def public(input, other, *, out=None):
        _numbers_only(name, (input, other), _OTHER_OVERLOADS, 1)
        if not _is_tensor(input):          # a number first (2 & t): wrapped
            input = _wrapped(input, other)
        dtype = D.result_dtype([input, other])
        if dtype._category >= 2:
            check_broadcast((input, other))     # PyTorch reports a bad shape first
            raise NotImplementedError(f'"{kernel}" not implemented for '
                                      f"'{_type_name(dtype)}'")
        return _out(op(input, other), out, name)
    public.__name__ = name
    return public


def _shift(xp, a, b, left):
    # PyTorch: shifting by the bit width or more gives 0 (or -1 for a negative number shifted
    # right); NumPy leaves that to the hardware
    a = xp.asarray(a)
    unsupported("lshift_cpu" if left else "rshift_cpu", a)    # no Bool kernel
    b = xp.asarray(b).astype(a.dtype)
    bits = a.dtype.itemsize * 8
    too_far = (b >= bits) | (b < 0)
    safe = xp.where(too_far, 0, b).astype(a.dtype)
    if left:
        return xp.where(too_far, 0, xp.left_shift(a, safe)).astype(a.dtype)
    fill = xp.where(a < 0, -1, 0) if a.dtype.kind == "i" else 0
    return xp.where(too_far, fill, xp.right_shift(a, safe)).astype(a.dtype)


bitwise_and = _bitwise("bitwise_and", lambda xp, a, b: xp.bitwise_and(a, b))
bitwise_or = _bitwise("bitwise_or", lambda xp, a, b: xp.bitwise_or(a, b))
bitwise_xor = _bitwise("bitwise_xor", lambda xp, a, b: xp.bitwise_xor(a, b))
bitwise_left_shift = _bitwise("bitwise_left_shift", lambda xp, a, b: _shift(xp, a, b, True),
                              "lshift_cpu")
bitwise_right_shift = _bitwise("bitwise_right_shift", lambda xp, a, b: _shift(xp, a, b, False),
                               "rshift_cpu")
_bitwise_not = primitive("bitwise_not", differentiable=False)(
    lambda xp, a: xp.logical_not(a) if a.dtype == np.bool_ else xp.invert(a))


def bitwise_not(input, *, out=None):
    if input._dtype._category >= 2:
        raise NotImplementedError(f'"bitwise_not_cpu" not implemented for '
                                  f"'{_type_name(input._dtype)}'")
    return _out(_bitwise_not(input), out, "bitwise_not", "clamp")


def invert(input):
    """The `~` operator."""
    if input._dtype._category >= 2:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return _bitwise_not(input)


@primitive("isclose", differentiable=False)
def _isclose(xp, self, other, *, rtol, atol, equal_nan):
    if self.dtype.itemsize == 2 and self.dtype.kind not in "iub":     # float16, bfloat16
        self, other = self.astype(np.float32), other.astype(np.float32)
    return xp.isclose(self, other, rtol=rtol, atol=atol, equal_nan=equal_nan)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    if input._dtype is not other._dtype:
        raise RuntimeError(f"{_type_name(input._dtype)} did not match "
                           f"{_type_name(other._dtype)}")
    return _isclose(input, other, rtol=rtol, atol=atol, equal_nan=equal_nan)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


def equal(input, other):
    """Same shape and the same values (NaN is never equal); dtypes may differ."""
    return input.shape == other.shape and bool(eq(input, other).all())


# ----------------------------------------------------------------------------- out=
def _out(result, out, name, dtype_rule="cast"):
    """Write a result into a user-supplied `out=` tensor, as PyTorch does: its dtype must pass
    the op's rule (below), and a mismatched shape is resized (with PyTorch's deprecation warning
    unless `out` was empty). `out=` records no graph, so it refuses inputs that require grad."""
    if out is None:
        return result
    if result._requires_grad and _grad_enabled():
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           f"differentiation, but one of the arguments requires grad.")
    if out._dtype is not result._dtype:
        _check_out_dtype(dtype_rule, name, result._dtype, out._dtype)
    if out.shape != result.shape:
        warn_resize(out, result.shape, stacklevel=4)
        out.resize_(result.shape)
    from .registry import write_into, _forward_ad
    write_into(out, result._data)
    if _forward_ad._levels:
        _forward_ad.check_out(result, out, name)     # (PyTorch writes out first, then refuses)
    return out


def warn_resize(out, shape, stacklevel=3):
    """PyTorch's deprecation warning for an out= with elements resized to another shape."""
    if out._data.size and tuple(out.shape) != tuple(shape):
        import warnings
        warnings.warn(f"An output with one or more elements was resized since it had shape "
                      f"{list(out.shape)}, which does not match the required output shape "
                      f"{list(shape)}. This behavior is deprecated, and in a future "
                      f"PyTorch release outputs will not be resized unless they have zero "
                      f"elements. You can explicitly reuse an out tensor t by resizing it, "
                      f"inplace, to zero elements with t.resize_(0).", UserWarning,
                      stacklevel=stacklevel)


def _check_out_dtype(rule, name, have, want):
    """PyTorch's out= dtype rules, which differ by op: "cast" (the result dtype must cast to
    out's), "any" (out may have any dtype), or the same dtype exactly, with the op's message."""
    t, c = _type_name, CPP_NAMES
    if rule == "any":
        return
    if rule in ("cast", "cat"):
        if D.can_cast(have, want):
            return
        if rule == "cat":
            raise TypeError(f"torch.cat(): input types can't be cast to the desired output type "
                            f"{t(want)}")
        raise RuntimeError(f"result type {t(have)} can't be cast to the desired output type "
                           f"{t(want)}")
    raise RuntimeError({
        "mm": f"Expected out tensor to have dtype {c[have.name]}, but got {c[want.name]} instead",
        "amax": f"Expected the dtype for input and out to match, but got {t(have)} for input's "
                f"dtype and {t(want)} for out's dtype.",
        "clamp": f"Found dtype {t(want)} but expected {t(have)}",
        "where": f"Expected out type to be {t(have)} but got {t(want)}",
        "bool": f"{name} does not support non-boolean outputs.",
        "nan_to_num": f"nan_to_num: dtype of out: {t(want)} should be same as input: {t(have)}",
        "long": f"Expected out tensor to have dtype long int, but got {c[want.name]} instead",
        "logical": f"{name} only supports bool tensor for result, got: {t(want)}",
        "float_out": f"{name}(): Expected floating point type for result tensor, but got: "
                     f"{t(want)}",
    }[rule])


def _grad_enabled():
    from ..autograd.grad_mode import state
    return state.enabled


# ----------------------------------------------------------------------------- in place
# `x.op_(...)` for the differentiable primitives: the op's own in-place form (Op.inplace), so that
# its node saves x as it was before the write, as PyTorch does. Bound as Tensor methods by
# methods.py.
# PyTorch's C++ type names (some of its messages use them instead of ScalarType names)
CPP_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char",
             "int16": "short int", "int32": "int", "int64": "long int",
             "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
             "float64": "double", "complex64": "c10::complex<float>",
             "complex128": "c10::complex<double>"}


def _check_inplace_cast(self, *numbers, cpp_name=False):
    dtype = D.result_dtype([self, *numbers])
    if not D.can_cast(dtype, self._dtype):
        target = CPP_NAMES[self._dtype.name] if cpp_name else _type_name(self._dtype)
        raise RuntimeError(f"result type {_type_name(dtype)} can't be cast to the desired "
                           f"output type {target}")


def float_power_(self, exponent):
    # computed in double: the base must already be double (complex double for complex)
    need = D.complex128 if self._dtype.is_complex or (
        _is_tensor(exponent) and exponent._dtype.is_complex) or isinstance(exponent, complex) \
        else D.float64
    if self._dtype is not need:
        raise RuntimeError(f"the base given to float_power_ has dtype {_type_name(self._dtype)} "
                           f"but the operation's result requires dtype {_type_name(need)}")
    return pow_(self, exponent.double() if _is_tensor(exponent) and need is D.float64
                else exponent)


def pow_(self, exponent):
    if _is_tensor(exponent):
        return _pow_tensor.inplace(self, exponent)
    _check_inplace_cast(self, exponent)
    if self._dtype._category < 2 and not isinstance(exponent, float) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return _pow_scalar.inplace(self, exponent=exponent)


def remainder_(self, other):
    if _is_tensor(other):
        return _remainder.inplace(self, other)
    _check_inplace_cast(self, other)
    return _remainder_scalar.inplace(self, other=other)


def fmod_(self, other):
    if _is_tensor(other):
        return _fmod.inplace(self, other)
    _check_inplace_cast(self, other)
    return _fmod_scalar.inplace(self, other=other)


def floor_divide_(self, other):
    return _div_rounding.inplace(self, other, rounding_mode="floor")


def div_(self, other, *, rounding_mode=None):
    if rounding_mode is None:
        return _div.inplace(self, other)
    if rounding_mode not in ("floor", "trunc"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or "
                           f"'floor' but found '{rounding_mode}'")
    return _div_rounding.inplace(self, other, rounding_mode=rounding_mode)


def clamp_(self, min=None, max=None, *, _op=_clamp):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    min, max = _py_number(min), _py_number(max)
    if _is_tensor(min) or _is_tensor(max):
        lo = _clamp_bound(min, self)
        hi = _clamp_bound(max, self)
        return _clamp_tensor.inplace(self, lo, hi, has_min=min is not None,
                                     has_max=max is not None)
    _check_inplace_cast(self, *[b for b in (min, max) if b is not None], cpp_name=True)
    return _op.inplace(self, min=min, max=max)


def clamp_min_(self, min):
    # torch's own nodes for one bound
    if _is_tensor(min):
        return _clamp_min_tensor.inplace(self, min)
    return clamp_(self, min=min, _op=_clamp_min)


def clamp_max_(self, max):
    if _is_tensor(max):
        return _clamp_max_tensor.inplace(self, max)
    return clamp_(self, max=max, _op=_clamp_max)


def masked_fill_(self, mask, value):
    value = _py_number(value)
    if mask._dtype is not D.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_type_name(mask._dtype).lower()}")
    if _is_tensor(value):
        return _masked_fill_tensor.inplace(self, value, mask=mask)
    _check_fill_value(value, self._dtype)
    return _masked_fill.inplace(self, mask=mask, value=value)


def lerp_(self, end, weight):
    weight = _py_number(weight)
    _check_lerp_dtypes(self, end, weight)
    if _is_tensor(weight):
        return _lerp_tensor.inplace(self, end, weight)
    return _lerp.inplace(self, end, weight=weight)


def round_(self, *, decimals=None):
    if decimals is None:
        return _round.inplace(self)
    return _round_decimals.inplace(self, decimals=decimals)


def _unary_inplace(public):
    def method(self):
        if public is abs and self._dtype.is_complex:     # |z| is real: no complex result to hold
            raise RuntimeError("In-place abs is not supported for complex tensors.")
        return public.op.inplace(self)
    method.__name__ = public.__name__ + "_"
    return method


INPLACE = {
    **{f"{name}_": _comparison_inplace(fn, node) for name, fn, node in [
        ("eq", eq, "Eq"), ("ne", ne, "Ne"), ("lt", lt, "Lt"), ("le", le, "Le"), ("gt", gt, "Gt"),
        ("ge", ge, "Ge")]},
    # square_ is pow_(2) (PowBackward0), whose node saves self as it was before the write
    "pow_": pow_, "square_": lambda self: pow_(self, 2), "float_power_": float_power_, "remainder_": remainder_, "fmod_": fmod_,
    "floor_divide_": floor_divide_,
    "div_": div_, "true_divide_": div_, "divide_": div_,
    "clamp_": clamp_, "clip_": clamp_,
    "clamp_min_": clamp_min_, "clamp_max_": clamp_max_,
    "masked_fill_": masked_fill_, "lerp_": lerp_, "round_": round_,
    "atan2_": lambda self, other: _atan2.inplace(self, other),
    "addcmul_": lambda self, t1, t2, *, value=1: _addcmul.inplace(self, t1, t2, value=value),
    "addcdiv_": addcdiv_,
    "logit_": lambda self, eps=None: _logit.inplace(self, eps=eps),
    "nan_to_num_": lambda self, nan=0.0, posinf=None, neginf=None: _nan_to_num.inplace(
        self, nan=nan, posinf=posinf, neginf=neginf),
}
for _public in (neg, abs, sign, reciprocal, sqrt, rsqrt, exp, exp2, expm1, log, log2, log10,
                log1p, sin, cos, tan, asin, acos, atan, sinh, cosh, tanh,
                sigmoid, erf, erfc, erfinv, relu, floor, ceil, trunc, frac):
    INPLACE[_public.__name__ + "_"] = _unary_inplace(_public)


def _inplace_without_derivative(public, node):
    """public's in-place form, which PyTorch records under a node of its own (`node`) that has
    no derivative: backward through it raises."""
    op = primitive(public.__name__ + "_", node=node, promote=FLOAT)(
        lambda xp, self: public.op.forward(xp, self))

    @op.derivative
    def _(ctx, grad):
        raise NotImplementedError(f"the derivative for 'inplace version of {public.__name__}' "
                                  f"is not implemented.")
    return lambda self: op.inplace(self)


for _public, _node in ((asinh, "AsinhBackward1"), (acosh, "AcoshBackward1"),
                       (atanh, "AtanhBackward1")):
    INPLACE[_public.__name__ + "_"] = _inplace_without_derivative(_public, _node)
for _alias, _name in (("negative_", "neg_"), ("absolute_", "abs_"), ("fix_", "trunc_"),
                      ("arcsin_", "asin_"), ("arccos_", "acos_"), ("arctan_", "atan_"),
                      ("arcsinh_", "asinh_"), ("arccosh_", "acosh_"), ("arctanh_", "atanh_"),
                      ("arctan2_", "atan2_")):
    INPLACE[_alias] = INPLACE[_name]
