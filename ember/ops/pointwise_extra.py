"""More elementwise math ops: logaddexp, logaddexp2, hypot, xlogy, lgamma, digamma, polygamma,
copysign, heaviside, nextafter, ldexp, deg2rad, rad2deg, sinc, angle.

Each is a primitive (forward on arrays with the `xp` it is given, derivative in ember ops so
that double backward works), with PyTorch's node names, dtype rules and errors. The Tensor
methods (and the in-place `_` forms PyTorch has) are bound at the bottom of this module.
"""
import math
from fractions import Fraction

from .. import _dtype as D
from .._tensor import Tensor
from . import special as _sp
from .pointwise import _zeros, _out, unsupported, where, _type_name, _c, _wrapped
from .registry import primitive, COMMON, FLOAT

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
        with _sp._quiet(xp):
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


# ----------------------------------------------------------------------------- xlogy
def x_times_log(kernel, log):
    """The forward of x * log(y) (xlogy) or x * log1p(y) (xlog1py, `log` names the array
    function): 0 where x == 0, whatever y (even where the log is -inf or nan), but a nan y
    stays nan."""
    def forward(xp, self, other):
        unsupported(kernel, self, "c", other)
        unsupported(kernel, other, "c", self)
        if not hasattr(other, "dtype"):
            other = self.dtype.type(other)      # a Python number: in the tensor's dtype
        with _sp._quiet(xp):
            y = self * getattr(xp, log)(other)
        return xp.where((self == 0) & ~xp.isnan(other), xp.zeros_like(y), y)
    return forward


_xlogy_forward = x_times_log("xlogy_cpu", "log")


_xlogy = primitive("xlogy", node="XlogyBackward0", save=("self", "other"),
                   promote=FLOAT)(_xlogy_forward)
_xlogy_scalar_self = primitive("xlogy.scalar_self", node="XlogyBackward1",
                               save=("self", "other"), promote=FLOAT)(_xlogy_forward)
_xlogy_scalar_other = primitive("xlogy.scalar_other", node="XlogyBackward2",
                                save=("self", "other"), promote=FLOAT)(_xlogy_forward)


def _xlogy_derivative(ctx, grad):
    x, y = ctx.self, ctx.other
    gx = gy = None
    if ctx.needs_input_grad[0]:
        # d/dx = log(y), taken as 0 where x == 0 and y <= 0 (there the forward is the constant 0)
        if isinstance(y, Tensor):
            masked = (x == 0) & (y <= 0)
            log_y = where(masked, _ones_like(y), y).log()     # no log(0) where it is discarded
            gx = grad * where(masked, _zeros(log_y), log_y)
        else:
            log_y = math.log(y) if y > 0 else (-math.inf if y == 0 else math.nan)
            gx = grad * log_y
            if y <= 0:
                gx = where(x == 0, _zeros(gx), gx)
    if ctx.needs_input_grad[1]:
        gy = grad * x / y
    return gx, gy


for _op in (_xlogy, _xlogy_scalar_self, _xlogy_scalar_other):
    _op.derivative(_xlogy_derivative)


def _xlogy_op(input, other):
    if not isinstance(input, Tensor):
        return _xlogy_scalar_self
    return _xlogy if isinstance(other, Tensor) else _xlogy_scalar_other


def xlogy(input, other, *, out=None):
    op = _xlogy_op(input, other)
    if op is _xlogy_scalar_self:
        input = _wrapped(input, other)      # (a number as the first operand: a 0-dim tensor)
    return _out(op(input, other), out, "xlogy")


def xlogy_(self, other):
    return _xlogy_op(self, other).inplace(self, other)


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
    from .creation import ones_like
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


# ----------------------------------------------------------------------------- unary
def _unary(name, node, forward, derivative, save=("self",)):
    """A one-input op whose integer inputs compute in the default float dtype."""
    op = primitive(name, node=node, save=save, promote=FLOAT)(
        lambda xp, self: forward(xp, self))
    op.derivative(lambda ctx, grad: derivative(ctx, grad))

    def public(input, *, out=None):
        return _out(op(input), out, name)

    def inplace(self):
        return op.inplace(self)
    public.__name__, inplace.__name__ = name, name + "_"
    public.op, public.inplace = op, inplace
    return public


def _no_complex(name):
    def check(x):
        if x.dtype.kind == "c":
            raise RuntimeError(f"{name} is not supported for complex tensors.")
    return check


lgamma = _unary("lgamma", "LgammaBackward0",
                lambda xp, x: unsupported("lgamma_vml_cpu", x, "c") or _sp.lgamma(xp, x),
                lambda ctx, g: g * digamma(ctx.self))
digamma = _unary("digamma", "DigammaBackward0",
                 lambda xp, x: unsupported("digamma", x, "c") or _sp.digamma(xp, x),
                 lambda ctx, g: g * polygamma(1, ctx.self))
deg2rad = _unary("deg2rad", "Deg2RadBackward0",
                 lambda xp, x: _no_complex("deg2rad")(x) or x * x.dtype.type(math.pi / 180),
                 lambda ctx, g: g * (math.pi / 180), save=())
rad2deg = _unary("rad2deg", "Rad2DegBackward0",
                 lambda xp, x: _no_complex("rad2deg")(x) or x * x.dtype.type(180 / math.pi),
                 lambda ctx, g: g * (180 / math.pi), save=())


def _sinc_forward(xp, x):
    dtype = x.dtype
    if x.dtype.kind == "f" and x.dtype.itemsize < 4 or dtype.name == "bfloat16":
        x = x.astype(xp.float32)      # half precision is evaluated in float32, then rounded
    px = x * x.dtype.type(math.pi)
    with _sp._quiet(xp):
        y = xp.sin(px) / px
    return xp.where(x == 0, xp.ones_like(y), y).astype(dtype)


def _sinc_derivative(ctx, grad):
    x = ctx.self
    zero = x == 0
    safe = where(zero, _ones_like(x), x)         # no 0/0 in the branch `where` discards
    px = safe * math.pi
    # d/dx sin(pi x) / (pi x) = (pi x cos(pi x) - sin(pi x)) / (pi x^2)
    d = (px * px.cos() - px.sin()) / (px * safe)
    return grad * _c(where(zero, _zeros(d), d))


sinc = _unary("sinc", "SincBackward0", _sinc_forward, _sinc_derivative)


def _angle_forward(xp, x):
    if x.dtype.kind == "c":
        return xp.angle(x)
    # 0 for x >= 0 (also -0), pi for x < 0, nan stays nan
    return xp.where(x < 0, x.dtype.type(math.pi), xp.where(xp.isnan(x), x, x.dtype.type(0)))


def _angle_derivative(ctx, grad):
    z = ctx.self
    if not z._dtype.is_complex:
        return _zeros(grad)
    # angle = atan2(y, x): gradient (-y + i x) / |z|^2 = i z / |z|^2, 0 at z == 0
    zero = z == 0
    safe = where(zero, _ones_like(z), z)
    d = safe * 1j / (safe.abs() ** 2)
    return grad * where(zero, _zeros(d), d)


angle = _unary("angle", "AngleBackward0", _angle_forward, _angle_derivative)


# ----------------------------------------------------------------------------- polygamma
_SHIFT_TO = 20.0          # the asymptotic series is used from here up (error < 1e-25 relative)
_MAX_SHIFTS = 2000        # x below -(_MAX_SHIFTS - _SHIFT_TO) is not shifted far enough


def _polygamma_kernel(xp, n, x):
    """polygamma(n, x) for n >= 1 in float64: psi_n(x) = (-1)^(n+1) n! sum_k 1/(x+k)^(n+1).

    Shift x up to >= 20 with psi_n(x) = psi_n(x + 1) + (-1)^(n+1) n! / x^(n+1) (one whole-array
    step per unit of shift), then the asymptotic series
    psi_n(y) ~ (-1)^(n+1) [(n-1)!/y^n + n!/(2 y^(n+1)) + sum_k B_2k (2k+n-1)!/((2k)! y^(2k+n))].
    """
    sign = 1.0 if n % 2 else -1.0
    fact = float(math.factorial(n))
    # (infinities take no part: they would stop the shifting of every other element)
    lowest = float(xp.min(x, where=xp.isfinite(x), initial=_SHIFT_TO))
    steps = int(min(max(0.0, math.ceil(_SHIFT_TO - lowest)), _MAX_SHIFTS))
    y = x
    acc = xp.zeros_like(x)
    for _ in range(steps):
        low = y < _SHIFT_TO
        acc = acc + xp.where(low, 1.0 / y ** (n + 1), 0.0)
        y = xp.where(low, y + 1.0, y)
    inv = 1.0 / y
    series = 0.0
    for k in range(len(_sp._BERNOULLI), 0, -1):        # Horner-like: smallest terms first
        coeff = float(_sp._BERNOULLI[k - 1] * Fraction(math.factorial(2 * k + n - 1),
                                                       math.factorial(2 * k)))
        series = series + coeff * inv ** (2 * k + n)
    series = series + math.factorial(n - 1) * inv ** n + fact / 2 * inv ** (n + 1)
    return sign * (fact * acc + series)


@primitive("polygamma", node="PolygammaBackward0", save=("self",), promote=FLOAT)
def _polygamma(xp, self, *, n):
    unsupported({0: "digamma", 1: "trigamma"}.get(n, "polygamma"), self, "c")
    if n == 0:
        return _sp.digamma(xp, self)
    x = self.astype(xp.float64)
    with _sp._quiet(xp):
        y = _polygamma_kernel(xp, n, x)
        if n == 1:
            # PyTorch's trigamma reflects x < 0: psi_1(x) = pi^2 / sin^2(pi x) - psi_1(1 - x),
            # so its poles come out as large finite numbers (sin(pi x) in the input's
            # precision, float32 at least)
            low = self.dtype.type if self.dtype.itemsize >= 4 else xp.float32
            sin = xp.sin(self.astype(low) * low(math.pi)).astype(xp.float64)
            y = xp.where(x < 0, math.pi ** 2 / sin ** 2 - _polygamma_kernel(xp, n, 1 - x), y)
        else:
            # psi_n = (-1)^(n+1) n! zeta(n+1, x): at 0, the negative integers and -inf this is
            # a signed infinity (of zeta's +inf), at +inf nan
            pole = (x <= 0) & (x == xp.floor(x))
            y = xp.where(pole, (1 if n % 2 else -1) * math.inf, xp.where(x == math.inf, xp.nan, y))
    return y.astype(self.dtype)


@_polygamma.derivative
def _(ctx, grad):
    return grad * polygamma(ctx.n + 1, ctx.self)


def polygamma(n, input, *, out=None):
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return _out(_polygamma(input, n=n), out, "polygamma")


# torch.xlogy_, torch.ldexp_, ... exist as functions too
deg2rad_, rad2deg_, sinc_ = deg2rad.inplace, rad2deg.inplace, sinc.inplace

__all__ = ["logaddexp", "logaddexp2", "hypot", "xlogy", "xlogy_", "copysign", "heaviside",
           "nextafter", "ldexp", "ldexp_", "lgamma", "digamma", "polygamma", "deg2rad",
           "deg2rad_", "rad2deg", "rad2deg_", "sinc", "sinc_", "angle"]
