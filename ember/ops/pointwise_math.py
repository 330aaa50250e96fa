"""Small pointwise functions: deg2rad, rad2deg, sinc, angle, frexp, positive."""
import math
import numpy as np

from .._tensor import Tensor
from . import special as _sp
from ._pointwise_common import _out, unsupported, _quiet, _c, _zeros
from ._utils import return_type as _return_type
from .arithmetic import _ones_like
from .pointwise import where
from .registry import FLOAT, primitive
from .special import polygamma


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
    with _quiet(xp):
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


# torch.xlogy_, torch.ldexp_, ... exist as functions too
deg2rad_, rad2deg_, sinc_ = deg2rad.inplace, rad2deg.inplace, sinc.inplace


# ----------------------------------------------------------------------------- frexp / i0
_frexp_tuple = _return_type("frexp", ["mantissa", "exponent"])


@primitive("frexp", node="FrexpBackward0", n_outputs=2, differentiable_outputs=1,
           save=("result1",))
def _frexp(xp, self):
    mantissa, exponent = xp.frexp(self)
    return mantissa.astype(self.dtype, copy=False), exponent.astype(np.int32)


@_frexp.derivative
def _(ctx, grad):
    # mantissa = x / 2**exponent, with the exponent piecewise constant
    return grad / Tensor._make(np.ldexp(np.ones((), grad._dtype.np), ctx.result1), grad._dtype)


def frexp(input):
    if input._dtype._category != 2:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    return _frexp_tuple(*_frexp(input))


# ----------------------------------------------------------------------------- small methods
def positive(input):
    return input.positive()


__all__ = ['frexp', 'positive', 'lgamma', 'digamma', 'deg2rad', 'deg2rad_', 'rad2deg',
               'rad2deg_', 'sinc', 'sinc_', 'angle']
