"""The torch.special functions that have no torch.* counterpart: entr, erfcx, ndtri, log_ndtr,
i0e, i1e, xlog1py, zeta, spherical_bessel_j0, bessel_j0, bessel_j1, gammainc,
gammaincc.

Each is a primitive with PyTorch's node name (SpecialEntrBackward0, ...) and a derivative in ember
ops. The kernels work in float64 (`_sp._float_function` rounds the result to the input's dtype)
and are built from the accurate erf/erfc/lgamma kernels of `special.py`; NumPy only.
"""
import math

import numpy as np

from .._tensor import Tensor
from . import special as _sp
from . import misc_extra as _misc
from .creation import _fused_multiply_add
from .pointwise import (_out, _wrapped, _zeros, _promote_to, _add_scalar, _mul_scalar,
                        unsupported, where)
from .pointwise_extra import _require_tensors, x_times_log
from .registry import primitive, COMMON, FLOAT

_SQRT_HALF = 0.70710678118654752440          # 1 / sqrt(2)
_SQRT_TWO_OVER_PI = 0.79788456080286535588   # sqrt(2 / pi)
_INV_SQRT_2PI = 0.39894228040143267794       # 1 / sqrt(2 pi)
_SQRT_2PI = 2.5066282746310005024            # sqrt(2 pi)


def _no_half(kernel_name, x):
    """PyTorch's error for the kernels that have no float16 / bfloat16 version."""
    if x.dtype.itemsize == 2:          # (integers were promoted to float before this)
        unsupported(kernel_name, x, x.dtype.kind)


def _unary(name, node, kernel, derivative, save=("self",), halves=True, param="input"):
    """A one-input primitive (integers compute in the default float dtype; complex raises
    PyTorch's error, and so do float16 / bfloat16 where `halves` is False) and its public
    form, whose argument PyTorch calls `param`."""
    kernel_name = name.replace("special_", "") + "_cpu"

    def forward(xp, self):
        unsupported(kernel_name, self, "c")
        if not halves:
            _no_half(kernel_name, self)
        return kernel(xp, self)
    op = primitive(name, node=node, save=save, promote=FLOAT,
                   differentiable=derivative is not None)(forward)
    if derivative is not None:
        op.derivative(derivative)

    if param == "x":                    # (PyTorch's name for a few of them)
        def public(x, *, out=None):
            if not isinstance(x, Tensor):
                from .creation import _type_name
                raise TypeError(f"{name}(): argument 'x' (position 1) must be Tensor, not "
                                f"{_type_name(x)}")
            return _out(op(x), out, name)
    else:
        def public(input, *, out=None):
            return _out(op(input), out, name)
    public.__name__ = name.replace("special_", "")
    public.__qualname__ = name          # (named so in Python's argument-count errors)
    public.op = op
    return public


# ----------------------------------------------------------------------------- entr
def _entr_kernel(xp, x):
    with _sp._quiet(xp):
        y = -x * xp.log(x)
    # 0 at x == 0 (0 * log 0), -inf for x < 0; nan stays nan
    y = xp.where(x == 0, xp.zeros_like(y), y)
    return xp.where(x < 0, xp.full_like(y, -np.inf), y)


entr = _unary("special_entr", "SpecialEntrBackward0", _entr_kernel,
              lambda ctx, grad: grad * -(1 + ctx.self.log()))


# ----------------------------------------------------------------------------- erfcx
def _erfcx_positive(xp, a):
    """exp(a^2) erfc(a) for a >= 1/2 (smaller a are treated as 1/2): the trapezoid sum and the
    asymptotic series of `special.py` without their factor e^(-a^2), which would underflow."""
    a = xp.clip(a, 0.5, np.inf)

    def trapezoid(v):
        # erfc = e^(-v^2) * S(v) - pole(v), so erfcx = S(v) - e^(v^2) * pole(v)
        pole = 2.0 * xp.exp(v * v - 2.0 * _sp._PI * v / _sp._TRAP_H) / \
            -xp.expm1(-2.0 * _sp._PI * v / _sp._TRAP_H)
        s = xp.zeros_like(v)
        for weight, t2 in reversed(_sp._TRAP_TERMS):
            s = s + weight / (t2 + v * v)
        s = s + 0.5 / (v * v)
        return (2.0 * _sp._TRAP_H / _sp._PI) * v * s - pole

    def asymptotic(v):
        return _sp._horner(xp, 1.0 / (v * v), _sp._ERFC_ASYMPTOTIC) * (_sp._INV_SQRT_PI / v)
    return _sp._branches(xp, a < 10.0, trapezoid, asymptotic, a)


def _erfcx64(xp, x):
    """erfcx in float64 (x float64)."""
    a = xp.abs(x)
    small = a < 0.5
    # |x| < 1/2: e^(x^2) erfc(x) directly; x <= -1/2: 2 e^(x^2) - erfcx(|x|) (inf below -26.6)
    direct = xp.exp(x * x) * _sp.erfc(xp, xp.where(small, x, 0.0))
    tail = _erfcx_positive(xp, a)
    reflected = 2.0 / _sp._exp_neg_square(xp, xp.minimum(a, 40.0)) - tail
    return xp.where(small, direct, xp.where(x > 0, tail, reflected))


@_sp._float_function
def _erfcx_kernel(xp, x, wide):
    return _erfcx64(xp, x)


def _erfcx_derivative(ctx, grad):
    # d/dx e^(x^2) erfc(x) = 2 x erfcx(x) - 2 / sqrt(pi)
    return grad * (2 * ctx.self * ctx.result - _sp._TWO_OVER_SQRT_PI)


erfcx = _unary("special_erfcx", "SpecialErfcxBackward0", lambda xp, x: _erfcx_kernel(xp, x),
               _erfcx_derivative, save=("self", "result"), halves=False)


# ----------------------------------------------------------------------------- ndtr family
def ndtr(input, *, out=None):
    # PyTorch composes it (its graph shows MulBackward1 <- AddBackward1 <- ErfBackward0 <- ...)
    from .pointwise import erf
    scaled = _mul_scalar(_promote_to(input, _SQRT_HALF), other=_SQRT_HALF)
    return _out(_mul_scalar(_add_scalar(erf(scaled), other=1), other=0.5), out, "special_ndtr")


@_sp._float_function
def _log_ndtr_kernel(xp, x, wide):
    # left tail: ndtr(x) = erfcx(t) e^(-t^2) / 2 with t = -x / sqrt(2), so no underflow
    left = x < -1.0
    t = xp.where(left, -x * _SQRT_HALF, 0.0)
    tail = xp.log(_erfcx64(xp, t) / 2.0) - x * x * 0.5
    body = xp.log1p(-_sp.erfc(xp, xp.where(left, 0.0, x) * _SQRT_HALF) / 2.0)
    return xp.where(left, tail, body)


def _log_ndtr_derivative(ctx, grad):
    # d/dx log(ndtr(x)) = phi(x) / ndtr(x) = exp(-x^2/2 - log_ndtr(x)) / sqrt(2 pi)
    x = ctx.self
    return grad * ((-(x * x) * 0.5 - ctx.result).exp() * _INV_SQRT_2PI)


log_ndtr = _unary("special_log_ndtr", "SpecialLogNdtrBackward0",
                  lambda xp, x: _log_ndtr_kernel(xp, x), _log_ndtr_derivative,
                  save=("self", "result"), halves=False)


@_sp._float_function
def _ndtri_kernel(xp, p, wide):
    # Solve ndtr(x) = u for x <= 0 with u = min(p, 1 - p) (1 - p is exact for p >= 1/2), then
    # flip the sign for p > 1/2. Start from erfinv's 0.2% guess (given u directly, so it works
    # down to the smallest u), then Newton on log(ndtr(x)) - log(u), whose slope
    # phi(x) / ndtr(x) = sqrt(2/pi) / erfcx(-x / sqrt 2) never underflows: 2e-3 -> 1e-11 -> 1e-22.
    inside = (p > 0) & (p < 1)
    u = xp.where(inside, xp.minimum(p, 1.0 - p), 0.25)
    x = -np.sqrt(2.0) * _sp._erfinv_guess(xp, 1.0 - 2.0 * u, 2.0 * u)
    for _ in range(4):
        ex = _erfcx64(xp, -x * _SQRT_HALF)
        f = (xp.log(ex / 2.0) - x * x * 0.5) - xp.log(u)
        x = x - f * ex / _SQRT_TWO_OVER_PI
    x = xp.where(p > 0.5, -x, x)
    # the middle, where log(ndtr(x)) - log(u) cancels: sqrt(2) erfinv(2p - 1), 2p - 1 exact
    middle = (p >= 0.25) & (p <= 0.75)
    x = xp.where(middle, np.sqrt(2.0) * _sp.erfinv(xp, xp.where(middle, 2.0 * p - 1.0, 0.0)), x)
    edge = xp.where(p == 0, -np.inf, xp.where(p == 1, np.inf, np.nan))
    return xp.where(inside, x, edge)


def _ndtri_derivative(ctx, grad):
    # 1 / phi(ndtri(p)) = sqrt(2 pi) exp(ndtri(p)^2 / 2)
    return grad * ((ctx.result * ctx.result * 0.5).exp() * _SQRT_2PI)


ndtri = _unary("special_ndtri", "SpecialNdtriBackward0", lambda xp, x: _ndtri_kernel(xp, x),
               _ndtri_derivative, save=("result",), halves=False)


# ----------------------------------------------------------------------------- i0e, i1e
_BIG_BESSEL = 700.0      # below, e^-|x| I(x) is computed directly (I(700) ~ 1e302 is finite)


def _hankel_coefficients(n, terms=30):
    """a_k(n) = (4n^2 - 1^2)(4n^2 - 3^2)...(4n^2 - (2k-1)^2) / (k! 8^k), k = 0 .. terms - 1."""
    out, a = [], 1.0
    for k in range(terms):
        out.append(a)
        a *= (4.0 * n * n - (2 * k + 1) ** 2) / ((k + 1) * 8.0)
    return out


def _bessel_scaled_asymptotic(xp, a, nu):
    """e^-a I_nu(a) for large a: (2 pi a)^(-1/2) sum_k (-1)^k a_k(nu) / a^k, used from a = 700
    up, where ten terms are far beyond double precision."""
    coeffs = [(-1) ** k * c for k, c in enumerate(_hankel_coefficients(nu, 10))]
    return _sp._horner(xp, 1.0 / a, coeffs) / xp.sqrt(2 * math.pi * a)


def _scaled_bessel(unscaled, nu):
    def kernel(xp, x, wide):
        a = xp.abs(x)
        near = a <= _BIG_BESSEL
        direct = xp.exp(-a) * unscaled(xp, xp.where(near, x, 0.0))
        far = xp.sign(x) ** nu * _bessel_scaled_asymptotic(xp, xp.maximum(a, _BIG_BESSEL), nu)
        return xp.where(near, direct, xp.where(xp.isinf(x), 0.0 * far, far))
    return _sp._float_function(kernel)


_i0e_kernel = _scaled_bessel(lambda xp, x: xp.i0(x), 0)
_i1e_kernel = _scaled_bessel(_misc._bessel_i1, 1)


def _i0e_derivative(ctx, grad):
    # d/dx e^-|x| I0(x) = I1e(x) - sgn(x) I0e(x)
    x = ctx.self
    return grad * (i1e.op(x) - x.sign() * ctx.result)


def _i1e_derivative(ctx, grad):
    # d/dx e^-|x| I1(x) = I0e(x) - I1e(x) (sgn(x) + 1/x), which is 1/2 at x = 0
    x = ctx.self
    zero = x == 0
    ratio = ctx.result / where(zero, 1.0, x)
    d = i0e.op(x) - ctx.result * x.sign() - ratio
    return grad * where(zero, 0.5, d)


i0e = _unary("special_i0e", "SpecialI0EBackward0", lambda xp, x: _i0e_kernel(xp, x),
             _i0e_derivative, save=("self", "result"))
i1e = _unary("special_i1e", "SpecialI1EBackward0", lambda xp, x: _i1e_kernel(xp, x),
             _i1e_derivative, save=("self", "result"))


def i1(input, *, out=None):
    unsupported("i1_cpu", input._data, "c")
    return _out(_misc._i1(input), out, "special_i1")


# ----------------------------------------------------------------------------- spherical_bessel_j0
@_sp._float_function
def _spherical_j0_kernel(xp, x, wide):
    # sin(x) / x, 1 at 0 and 0 at +-inf (where sin is nan)
    y = xp.sin(x) / xp.where(x == 0, 1.0, x)
    return xp.where(x == 0, 1.0, xp.where(xp.isinf(x), 0.0, y))


spherical_bessel_j0 = _unary("special_spherical_bessel_j0", None,
                             lambda xp, x: _spherical_j0_kernel(xp, x), None, save=(),
                             halves=False, param="x")


# ----------------------------------------------------------------------------- bessel_j0, bessel_j1
# |x| < 25: J0(x) = 1/(2 pi) integral_0^2pi cos(x sin t) dt and J1(x) = 1/(2 pi) integral_0^2pi
# sin(t) sin(x sin t) dt (parts of cos(n t - x sin t)), by the trapezoidal rule on
# _BESSEL_POINTS points, exact for these periodic integrands up to J_(points - n)(x) < 1e-25.
# |x| >= 25: Hankel's expansion J_n(x) = sqrt(2 / (pi x)) (P cos(x - phase) - Q sin(x - phase))
# with phase (2n + 1) pi / 4 (subtracted in float64, as PyTorch's kernel does), whose terms
# a_k(n) / x^k are below 1e-20 by k = 30. Accurate to about 1e-16 in absolute terms (PyTorch
# 2.13's own kernel is off by up to 4e-7 for 5 < |x| < 25).
_BESSEL_SWITCH = 25.0
_BESSEL_POINTS = 80
_BESSEL_ANGLES = [2.0 * math.pi * (k + 0.5) / _BESSEL_POINTS for k in range(_BESSEL_POINTS)]


def _hankel_sums(n):
    """(P, Q) of Hankel's expansion for order n as functions of w: J_n(w) = sqrt(2 / (pi w))
    (P cos(w - phase) - Q sin(w - phase)) and Y_n(w) = sqrt(2 / (pi w)) (P sin(w - phase)
    + Q cos(w - phase)), phase = (2n + 1) pi / 4."""
    hankel = _hankel_coefficients(n)
    p_coeffs = [(-1) ** k * c for k, c in enumerate(hankel[0::2])]     # in 1/w^2
    q_coeffs = [(-1) ** k * c for k, c in enumerate(hankel[1::2])]     # times 1/w, in 1/w^2

    def sums(xp, w):
        inv2 = 1.0 / (w * w)
        return _sp._horner(xp, inv2, p_coeffs), _sp._horner(xp, inv2, q_coeffs) / w
    return sums


def _bessel_j_kernel(n):
    hankel = _hankel_sums(n)

    def kernel(xp, x, wide):
        a = xp.abs(x)
        near = a < _BESSEL_SWITCH
        v = xp.where(near, a, 0.0)
        total = xp.zeros_like(v)
        for t in _BESSEL_ANGLES:        # (the integrand's odd part, which sums to 0, left out)
            total = total + (xp.cos(v * math.sin(t)) if n == 0 else
                             math.sin(t) * xp.sin(v * math.sin(t)))
        inner = total / _BESSEL_POINTS
        w = xp.maximum(a, _BESSEL_SWITCH)
        phase = w - (2 * n + 1) * math.pi / 4
        p_sum, q_sum = hankel(xp, w)
        outer = xp.sqrt(2.0 / (math.pi * w)) * (p_sum * xp.cos(phase) - q_sum * xp.sin(phase))
        y = xp.where(near, inner, outer)
        return y if n % 2 == 0 else xp.where(xp.signbit(x), -y, y)     # J1 is odd (J1(-0) = -0)
    return _sp._float_function(kernel)


_bessel_j0_kernel = _bessel_j_kernel(0)
_bessel_j1_kernel = _bessel_j_kernel(1)
bessel_j0 = _unary("special_bessel_j0", None, lambda xp, x: _bessel_j0_kernel(xp, x), None,
                   save=(), halves=False)
bessel_j1 = _unary("special_bessel_j1", None, lambda xp, x: _bessel_j1_kernel(xp, x), None,
                   save=(), halves=False)


# ----------------------------------------------------------------------------- bessel_y0, bessel_y1
# x < 25: Neumann's series Y0(x) = (2/pi) (log(x/2) + gamma) J0(x) - (4/pi) sum_k (-1)^k J_2k(x) / k
# and its derivative Y1 = -Y0' (with J0' = -J1), every J_m by the trapezoidal rule of J0's
# integral cos(m t - x sin t), summed over k first (the weights _NEUMANN_A, _NEUMANN_B below):
# J_2k(x) / k is below 1e-30 by 2k = 80, and the rule on 160 points is exact for these orders
# (its first error is J_(160 - 80)). x >= 25: Hankel's expansion, as for J. Accurate to about
# 1e-16 in absolute terms.
_NEUMANN_POINTS = 160
_NEUMANN_TERMS = 40
_NEUMANN_ANGLES = [2.0 * math.pi * (j + 0.5) / _NEUMANN_POINTS for j in range(_NEUMANN_POINTS)]
# sum_k (-1)^k cos(2k t) / k and sum_k (-1)^k sin(2k t) / k at each angle
_NEUMANN_A = [math.fsum((-1) ** k * math.cos(2 * k * t) / k for k in range(1, _NEUMANN_TERMS + 1))
              for t in _NEUMANN_ANGLES]
_NEUMANN_B = [math.fsum((-1) ** k * math.sin(2 * k * t) / k for k in range(1, _NEUMANN_TERMS + 1))
              for t in _NEUMANN_ANGLES]
_EULER_GAMMA = 0.57721566490153286061


def _bessel_y_kernel(n):
    hankel = _hankel_sums(n)

    def kernel(xp, x, wide):
        near = x < _BESSEL_SWITCH
        v = xp.where(near & (x > 0), x, 1.0)
        j0 = j1 = s = ds = xp.zeros_like(v)
        for t, a, b in zip(_NEUMANN_ANGLES, _NEUMANN_A, _NEUMANN_B):
            # cos(m t - phi) with phi = v sin t: J_m's integrand
            phi = v * math.sin(t)
            c, si = xp.cos(phi), xp.sin(phi)
            j0 = j0 + c
            j1 = j1 + (math.cos(t) * c + math.sin(t) * si)
            s = s + (a * c + b * si)                              # sum (-1)^k J_2k / k
            ds = ds + math.sin(t) * (b * c - a * si)              # its derivative in v
        j0, j1, s, ds = (u / _NEUMANN_POINTS for u in (j0, j1, s, ds))
        log_term = xp.log(v / 2.0) + _EULER_GAMMA
        if n == 0:
            inner = (2.0 / math.pi) * log_term * j0 - (4.0 / math.pi) * s
        else:
            inner = -(2.0 / math.pi) * (j0 / v - log_term * j1) + (4.0 / math.pi) * ds
        w = xp.maximum(x, _BESSEL_SWITCH)
        phase = w - (2 * n + 1) * math.pi / 4
        p_sum, q_sum = hankel(xp, w)
        outer = xp.sqrt(2.0 / (math.pi * w)) * (p_sum * xp.sin(phase) + q_sum * xp.cos(phase))
        y = xp.where(near, inner, outer)
        # -inf at 0, nan below and at +inf (as PyTorch's kernel has them)
        y = xp.where(x == 0, -np.inf, y)
        return xp.where((x < 0) | xp.isposinf(x), np.nan, y)
    return _sp._float_function(kernel)


_bessel_y0_kernel = _bessel_y_kernel(0)
_bessel_y1_kernel = _bessel_y_kernel(1)
bessel_y0 = _unary("special_bessel_y0", None, lambda xp, x: _bessel_y0_kernel(xp, x), None,
                   save=(), halves=False)
bessel_y1 = _unary("special_bessel_y1", None, lambda xp, x: _bessel_y1_kernel(xp, x), None,
                   save=(), halves=False)


# ----------------------------------------------------------------------------- modified Bessel
# I0, I1: the kernels of i0 and i1 (nan at +-inf, as PyTorch's modified_bessel_i0/i1 give).
# K0, K1 (and e^x K): for x <= 1 their power series (which cancel above); beyond,
# e^x K_nu(x) = integral_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt by the trapezoidal rule (step
# 1/20 up to t = 6: the integrand is analytic and even, and below 1e-20 of the sum beyond) up to
# x = 25, and Hankel's expansion sqrt(pi / (2x)) sum_k a_k(nu) / x^k from there. Airy's Ai
# shares the integral (nu = 1/3).
_K_STEP = 0.05
_K_NODES = [j * _K_STEP for j in range(1, 121)]
_K_SERIES_TERMS = 20          # (x^2/4)^k / k!^2 at x = 1: below 1e-40 by k = 20


def _scaled_k_integral(xp, x, nu):
    """e^x K_nu(x) for x from about 1/4 (to 25 for double precision)."""
    total = xp.full_like(x, 0.5)
    for t in _K_NODES:
        total = total + xp.exp(-x * (math.cosh(t) - 1.0)) * math.cosh(nu * t)
    return total * _K_STEP


def _scaled_k_asymptotic(xp, x, nu):
    return _sp._horner(xp, 1.0 / x, _hankel_coefficients(nu)) * xp.sqrt(math.pi / (2.0 * x))


def _k_series(xp, x, n):
    """K_n(x), n = 0 or 1, for 0 < x <= 1 from the power series in t = x^2 / 4:
    K0 = -(log(x/2) + gamma) I0 + sum_k H_k t^k / k!^2 and
    K1 = 1/x + log(x/2) I1 - (x/4) sum_k (psi(k+1) + psi(k+2)) t^k / (k! (k+1)!)."""
    t = x * x / 4.0
    log_half = xp.log(x / 2.0)
    term = xp.ones_like(x)                  # t^k / (k! (k+n)!)
    i_sum = term.copy()
    harmonic = 0.0                          # H_k
    if n == 0:
        rest = xp.zeros_like(x)
        for k in range(1, _K_SERIES_TERMS):
            term = term * t / (k * k)
            harmonic += 1.0 / k
            i_sum = i_sum + term
            rest = rest + harmonic * term
        return -(log_half + _EULER_GAMMA) * i_sum + rest
    rest = xp.full_like(x, 1.0 - 2.0 * _EULER_GAMMA)     # psi(1) + psi(2)
    for k in range(1, _K_SERIES_TERMS):
        term = term * t / (k * (k + 1))
        harmonic += 1.0 / k
        i_sum = i_sum + term
        # psi(k+1) + psi(k+2) = 2 H_k + 1/(k+1) - 2 gamma
        rest = rest + (2.0 * harmonic + 1.0 / (k + 1) - 2.0 * _EULER_GAMMA) * term
    return 1.0 / x + log_half * (x / 2.0) * i_sum - (x / 4.0) * rest


def _modified_k_kernel(n, scaled):
    def kernel(xp, x, wide):
        small = x <= 1.0
        inner = x < _BESSEL_SWITCH
        v = xp.where((x > 0) & small, x, 1.0)
        series = _k_series(xp, v, n)
        series = series * xp.exp(v) if scaled else series
        w = xp.where(inner & ~small, x, 2.0)
        integral = _scaled_k_integral(xp, w, n)
        big = xp.where(inner, _BESSEL_SWITCH, x)
        far = _scaled_k_asymptotic(xp, xp.where(xp.isfinite(big), big, _BESSEL_SWITCH), n)
        y = xp.where(small, series, xp.where(inner, integral, far))
        if not scaled:
            y = xp.where(small, y, y * xp.exp(-xp.where(small, 1.0, x)))
        # inf at 0, nan below (and at nan), 0 at +inf
        y = xp.where(xp.isposinf(x), 0.0, xp.where(x == 0, np.inf, y))
        return xp.where((x < 0) | xp.isnan(x), np.nan, y)
    return _sp._float_function(kernel)


def _modified_bessel(name, kernel, param="input"):
    return _unary(name, None, lambda xp, x: kernel(xp, x), None, save=(), halves=False,
                  param=param)


modified_bessel_i0 = _modified_bessel("special_modified_bessel_i0", _sp._float_function(
    lambda xp, x, wide: xp.where(xp.isinf(x), np.nan, xp.i0(x))))
modified_bessel_i1 = _modified_bessel("special_modified_bessel_i1", _sp._float_function(
    lambda xp, x, wide: xp.where(xp.isinf(x), np.nan, _misc._bessel_i1(xp, x))))
modified_bessel_k0 = _modified_bessel("special_modified_bessel_k0", _modified_k_kernel(0, False))
modified_bessel_k1 = _modified_bessel("special_modified_bessel_k1", _modified_k_kernel(1, False))
scaled_modified_bessel_k0 = _modified_bessel("special_scaled_modified_bessel_k0",
                                             _modified_k_kernel(0, True), param="x")
scaled_modified_bessel_k1 = _modified_bessel("special_scaled_modified_bessel_k1",
                                             _modified_k_kernel(1, True), param="x")


# ----------------------------------------------------------------------------- airy_ai
# |x| <= 1: the Maclaurin series Ai(x) = Ai(0) f(x) + Ai'(0) g(x) with
# f = sum 3^k (1/3)_k x^3k / (3k)! and g = sum 3^k (2/3)_k x^(3k+1) / (3k+1)!.
# x > 1: Ai(x) = sqrt(x / 3) K_(1/3)(zeta) / pi with zeta = 2/3 x^(3/2), by modified_bessel_k0's
# integral and expansion. x < -1: Ai(x) = sqrt(|x|) (J_(1/3)(zeta) + J_(-1/3)(zeta)) / 3 with
# J_(1/3) + J_(-1/3) = 2/pi integral_0^pi cos(s/3) cos(zeta sin s) ds
# + sqrt(3)/pi integral_0^inf exp(-zeta sinh t) sinh(t/3) dt, both by Gauss-Legendre quadrature
# (the second over t up to asinh(50 / zeta)), below zeta = 25, and by Hankel's expansion above.
_AI0 = 0.35502805388781723926          # Ai(0)
_AI1 = -0.25881940379280679840         # Ai'(0)
_AIRY_SERIES_TERMS = 20                # |x|^3k / (3k)! at |x| = 1: below 1e-80 by k = 20
_AIRY_MAX = 103.892                    # Ai is 0 beyond (PyTorch's cutoff; Ai(103.892) ~ 1e-308)
_GAUSS_NODES, _GAUSS_WEIGHTS = np.polynomial.legendre.leggauss(100)


def _airy_series(xp, x):
    cube = x * x * x
    f_term, g_term = xp.ones_like(x), x.copy()
    f, g = f_term, g_term
    for k in range(1, _AIRY_SERIES_TERMS):
        f_term = f_term * cube / ((3 * k - 1) * (3 * k))
        g_term = g_term * cube / ((3 * k) * (3 * k + 1))
        f, g = f + f_term, g + g_term
    return _AI0 * f + _AI1 * g


def _airy_oscillating(xp, zeta):
    """J_(1/3)(zeta) + J_(-1/3)(zeta) for 2/3 <= zeta < 25 (see above)."""
    first = xp.zeros_like(zeta)
    top = xp.arcsinh(50.0 / zeta)          # exp(-zeta sinh t) < e^-50 beyond
    second = xp.zeros_like(zeta)
    for u, weight in zip(_GAUSS_NODES, _GAUSS_WEIGHTS):
        s = math.pi * (u + 1.0) / 2.0
        first = first + weight * math.cos(s / 3.0) * xp.cos(zeta * math.sin(s))
        t = top * (u + 1.0) / 2.0
        second = second + weight * xp.exp(-zeta * xp.sinh(t)) * xp.sinh(t / 3.0)
    return first + (math.sqrt(3.0) / (2.0 * math.pi)) * top * second     # (pi/2 * 2/pi = 1)


_airy_hankel = _hankel_sums(1.0 / 3.0)


@_sp._float_function
def _airy_ai_kernel(xp, x, wide):
    a = xp.abs(x)
    near = a <= 1.0
    series = _airy_series(xp, xp.where(near, x, 0.0))
    zeta = 2.0 / 3.0 * xp.where(near | ~xp.isfinite(x), 1.0, a) ** 1.5
    inner = zeta < _BESSEL_SWITCH
    # x > 1
    scaled_k = xp.where(inner, _scaled_k_integral(xp, xp.where(inner, zeta, 1.0), 1.0 / 3.0),
                        _scaled_k_asymptotic(xp, xp.where(inner, _BESSEL_SWITCH, zeta),
                                             1.0 / 3.0))
    right = xp.sqrt(a / 3.0) / math.pi * xp.exp(-zeta) * scaled_k
    # x < -1
    w = xp.where(inner, _BESSEL_SWITCH, zeta)
    p_sum, q_sum = _airy_hankel(xp, w)
    phase = w - math.pi / 4
    far = math.sqrt(3.0) * xp.sqrt(2.0 / (math.pi * w)) * (p_sum * xp.cos(phase)
                                                             - q_sum * xp.sin(phase))
    oscillating = xp.where(inner, _airy_oscillating(xp, xp.where(inner, zeta, 1.0)), far)
    left = xp.sqrt(a) / 3.0 * oscillating
    y = xp.where(near, series, xp.where(x > 0, right, left))
    y = xp.where(x > _AIRY_MAX, 0.0, y)
    return xp.where(xp.isinf(x), np.nan, y)


airy_ai = _unary("special_airy_ai", None, lambda xp, x: _airy_ai_kernel(xp, x), None, save=(),
                 halves=False, param="x")


# ----------------------------------------------------------------------------- binary ops
def _binary(name, nodes, forward, derivative, params=("input", "other")):
    """A two-operand primitive in PyTorch's three forms (tensor-tensor, number-tensor and
    tensor-number, nodes ...Backward0/1/2) and its public form; with no derivative (and nodes
    None) its results never require grad. `params`: the operands' names in PyTorch's errors."""
    differentiable = derivative is not None
    ops = [primitive(f"{name}{suffix}", node=node, promote=FLOAT, differentiable=differentiable,
                     save=("self", "other") if differentiable else ())(forward)
           for suffix, node in zip(("", ".self_scalar", ".other_scalar"), nodes)]
    for op in ops if differentiable else ():
        op.derivative(derivative)
    a, b = params

    def call(input, other, out):
        if not isinstance(input, Tensor):
            if not isinstance(other, Tensor):
                raise TypeError(
                    f"{name}() received an invalid combination of arguments - got "
                    f"({type(input).__name__}, {type(other).__name__}), but expected one of:\n"
                    f" * (Tensor {a}, Tensor {b}, *, Tensor out = None)\n"
                    f" * (Number {'self' if a == 'input' else a}, Tensor {b}, *, "
                    f"Tensor out = None)\n"
                    f" * (Tensor {a}, Number {b}, *, Tensor out = None)\n")
            op, input = ops[1], _wrapped(input, other)
        else:
            op = ops[0] if isinstance(other, Tensor) else ops[2]
        return _out(op(input, other), out, name)

    if params == ("x", "n"):            # (so that keyword calls use PyTorch's names)
        def public(x, n, *, out=None):
            return call(x, n, out)
    else:
        def public(input, other, *, out=None):
            return call(input, other, out)
    public.__name__ = name.replace("special_", "")
    public.__qualname__ = name
    return public


def _as_float64(xp, v):
    return xp.asarray(v, dtype=np.float64)


_xlog1py_forward = x_times_log("xlog1py_cpu", "log1p")


def _xlog1py_derivative(ctx, grad):
    x, y = ctx.self, ctx.other
    gx = gy = None
    if ctx.needs_input_grad[0]:
        if isinstance(y, Tensor):
            # taken as 0 where x == 0 and y <= -1 (there the forward is the constant 0)
            masked = (x == 0) & (y <= -1)
            log1p_y = where(masked, 0.0, y).log1p()
            gx = grad * where(masked, _zeros(log1p_y), log1p_y)
        else:
            gx = grad * (math.log1p(y) if y > -1 else (-math.inf if y == -1 else math.nan))
            if y <= -1:
                gx = where(x == 0, _zeros(gx), gx)
    if ctx.needs_input_grad[1]:
        gy = grad * x / (1 + y)
    return gx, gy


xlog1py = _binary("special_xlog1py", ("SpecialXlog1PyBackward0", "SpecialXlog1PyBackward1",
                                      "SpecialXlog1PyBackward2"),
                  _xlog1py_forward, _xlog1py_derivative)


# Hurwitz zeta by Euler-Maclaurin: sum_{k<N} (q+k)^-s + (q+N)^(1-s)/(s-1) + (q+N)^-s / 2
# + sum_j B_2j / (2j)! s (s+1) ... (s+2j-2) (q+N)^(-s-2j+1), with N = 12 and the nine Bernoulli
# numbers of special.py: the first term left out is below 1e-17 of the sum for s >= 1, q >= 0.
_ZETA_N = 12
_ZETA_MAX_SHIFTS = 10000


def _zeta64(xp, s, q):
    q0 = q
    s, q = xp.broadcast_arrays(s, q)
    total = xp.zeros(s.shape)
    # a negative q is first shifted up to q >= 0 by zeta(s, q) = q^-s + zeta(s, q + 1), one
    # whole-array step per unit (at most _ZETA_MAX_SHIFTS; q below that is reported as nan)
    lowest = float(xp.min(xp.where(xp.isfinite(q), q, 0.0))) if q.size else 0.0
    for _ in range(min(max(0, math.ceil(-lowest)), _ZETA_MAX_SHIFTS)):
        low = q < 0
        total = total + xp.where(low, q ** -s, 0.0)
        q = xp.where(low, q + 1.0, q)
    for k in range(_ZETA_N):
        total = total + (q + k) ** -s
    w = q + _ZETA_N
    total = total + w ** (1.0 - s) / (s - 1.0) + 0.5 * w ** -s
    rising = s.copy()                      # s (s+1) ... (s+2j-2)
    power = w ** (-s - 1.0)
    for j, b in enumerate(_sp._BERNOULLI, start=1):
        total = total + float(b) / math.factorial(2 * j) * rising * power
        rising = rising * (s + 2 * j - 1) * (s + 2 * j)
        power = power / (w * w)
    # the edges, as PyTorch's kernel has them: s == 1 is the pole, s < 1 is outside its domain,
    # q a non-positive integer is a pole, and a negative non-integer q needs an integer s
    out = xp.where((s < 1.0) | (q < 0), np.nan, total)      # (q < 0: shifted too little)
    q = q0
    pole_q = (q <= 0) & (q == xp.floor(q))
    out = xp.where((q < 0) & ~pole_q & (s != xp.floor(s)), np.nan, out)
    # zeta(inf, q) = q^-inf: 1 at q == 1, inf below; PyTorch's kernel gives nan above
    out = xp.where(xp.isposinf(s), xp.where(q == 1, 1.0, xp.where(q < 1, np.inf, np.nan)), out)
    out = xp.where(xp.isposinf(q), np.nan, out)
    # (at a pole of q an s below 1 stays nan)
    return xp.where((s == 1.0) | pole_q & ~(s < 1.0), np.inf, out)


def _zeta_forward(xp, self, other):
    unsupported("zeta_cpu", self, "c")
    _no_half("zeta_cpu", self)
    dtype = self.dtype
    with _sp._quiet(xp):
        return _zeta64(xp, _as_float64(xp, self), _as_float64(xp, other)).astype(dtype)


def _zeta_derivative(ctx, grad):
    if ctx.needs_input_grad[0]:
        raise NotImplementedError("the derivative for 'zeta' is not implemented.")
    # d/dq zeta(s, q) = -s zeta(s + 1, q)
    s = ctx.self
    return None, grad * -s * zeta(s + 1, ctx.other)


zeta = _binary("special_zeta", ("SpecialZetaBackward0", "SpecialZetaBackward1",
                                "SpecialZetaBackward2"), _zeta_forward, _zeta_derivative)


# ----------------------------------------------------------------------------- gammainc
# The regularized incomplete gamma functions P(a, x) (gammainc) and Q(a, x) = 1 - P (gammaincc),
# each computed directly where it is the small one, so neither loses relative accuracy to 1 - ...:
#   x > 1.1 and x >= a: Q by its continued fraction;
#   x <= 1.1 and a small (below -0.4 / log x for x <= 1/2, below 1.1 x above): Q by its series;
#   elsewhere: P by its series.
# The prefactor x^a e^-x / Gamma(a) is exp(a log x - x - lgamma(a)), whose rounding grows with
# the size of those terms: about 1e-15 relative for a ~ 10, 1e-12 for a ~ 1e4.
_IGAMMA_EPS = 1e-17
_IGAMMA_MAX_STEPS = 5000


def _log_prefactor(xp, a, x):
    return a * xp.log(x) - x - _sp.lgamma(xp, a)


def _igamma_p_series(xp, a, x):
    """P = x^a e^-x / Gamma(a) * sum_n x^n / (a (a+1) ... (a+n)), for x below about a."""
    term = 1.0 / a
    total = term.copy()
    for n in range(1, _IGAMMA_MAX_STEPS):
        term = term * x / (a + n)
        total = total + term
        if n % 8 == 0 and not xp.any(term > total * _IGAMMA_EPS):
            break
    return xp.exp(_log_prefactor(xp, a, x)) * total


def _igamma_q_series(xp, a, x):
    """Q for x <= 1.1: 1 - x^a / Gamma(a+1) + x^a / Gamma(a) * sum_{n>=1} -(-x)^n / (n! (a+n)),
    with 1 - x^a / Gamma(a+1) as -expm1(...) (thirty terms: 1.1^30 / 30! is below 1e-30)."""
    fac = xp.ones_like(x)
    total = xp.zeros_like(x)
    for n in range(1, 30):
        fac = fac * -x / n
        total = total + fac / (a + n)
    log_x_a = a * xp.log(x)
    return (-xp.expm1(log_x_a - _sp.lgamma(xp, a + 1.0))
            - xp.exp(log_x_a - _sp.lgamma(xp, a)) * total)


def _igamma_q_fraction(xp, a, x):
    """Q = x^a e^-x / Gamma(a) / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / ...)), for
    x > 1.1 and x >= a, evaluated forwards by Lentz's method."""
    tiny = 1e-300
    b = x + 1.0 - a
    c = xp.full_like(x, 1.0 / tiny)
    d = 1.0 / b
    h = d.copy()
    for i in range(1, _IGAMMA_MAX_STEPS):
        an = -i * (i - a)
        b = b + 2.0
        d = an * d + b
        d = 1.0 / xp.where(xp.abs(d) < tiny, tiny, d)
        c = b + an / c
        c = xp.where(xp.abs(c) < tiny, tiny, c)
        delta = d * c
        h = h * delta
        if not xp.any(xp.abs(delta - 1.0) > _IGAMMA_EPS * 4):
            break
    return xp.exp(_log_prefactor(xp, a, x)) * h


def _igamma64(xp, a, x, upper):
    """P(a, x) (upper=False) or Q(a, x) (upper=True) in float64."""
    a, x = xp.broadcast_arrays(a, x)
    inner = (a > 0) & (x > 0) & xp.isfinite(a) & xp.isfinite(x)
    a_in, x_in = a[inner], x[inner]
    q_fraction = (x_in > 1.1) & (x_in >= a_in)
    with _sp._quiet(xp):
        small_a = xp.where(x_in <= 0.5, a_in < -0.4 / xp.log(x_in), a_in < 1.1 * x_in)
    q_series = (x_in <= 1.1) & small_a
    p_series = ~(q_fraction | q_series)
    value = xp.empty_like(a_in)            # P or Q, whichever each method gives
    value[q_fraction] = _igamma_q_fraction(xp, a_in[q_fraction], x_in[q_fraction])
    value[q_series] = _igamma_q_series(xp, a_in[q_series], x_in[q_series])
    value[p_series] = _igamma_p_series(xp, a_in[p_series], x_in[p_series])
    gives_q = ~p_series
    value = xp.where(gives_q == upper, value, 1.0 - value)
    # the edges, as PyTorch's kernel has them: P is 0 at x = 0 or a = inf and 1 at a = 0 or
    # x = inf (nan where both hold or either is negative or nan)
    zero_p = ((x == 0) & (a > 0)) | (xp.isposinf(a) & xp.isfinite(x) & (x >= 0))
    one_p = ((a == 0) & (x > 0)) | (xp.isposinf(x) & xp.isfinite(a) & (a >= 0))
    out = xp.full(a.shape, np.nan)
    out[inner] = value
    out = xp.where(zero_p, 1.0 if upper else 0.0, out)
    return xp.where(one_p, 0.0 if upper else 1.0, out)


def _igamma_forward(name, upper):
    def forward(xp, self, other):
        unsupported(f"{name}_cpu", self, "biuc", other)
        with _sp._quiet(xp):
            y = _igamma64(xp, self.astype(np.float64), other.astype(np.float64), upper)
        return y.astype(self.dtype)
    return forward


def _igamma_derivative(name, sign):
    def derivative(ctx, grad):
        if ctx.needs_input_grad[0]:
            raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")
        # d/dx P(a, x) = x^(a-1) e^-x / Gamma(a); Q's is its negative
        a, x = ctx.self, ctx.other
        return None, grad * (sign * ((a - 1) * x.log() - x - a.lgamma()).exp())
    return derivative


_igamma = primitive("igamma", node="IgammaBackward0", save=("self", "other"), promote=COMMON)(
    _igamma_forward("igamma", False))
_igamma.derivative(_igamma_derivative("igamma", 1))
_igammac = primitive("igammac", node="IgammacBackward0", save=("self", "other"),
                     promote=COMMON)(_igamma_forward("igammac", True))
_igammac.derivative(_igamma_derivative("igammac", -1))


def gammainc(input, other, *, out=None):
    _require_tensors("special_gammainc", input, other)
    return _out(_igamma(input, other), out, "special_gammainc")


def gammaincc(input, other, *, out=None):
    _require_tensors("special_gammaincc", input, other)
    return _out(_igammac(input, other), out, "special_gammaincc")


# ----------------------------------------------------------------------------- polynomials
# f(x, n) for the classical orthogonal polynomials, as PyTorch's kernels evaluate them: in the
# operands' common dtype (float32 arithmetic for float32), with n truncated to an integer (nan,
# inf and n beyond int64 count as negative: the result is 0), by the three-term recurrence
# p_m = (a p_(m-1) - c p_(m-2)) / d, whose a p_(m-1) - (c p_(m-2)) PyTorch's build fuses into one
# multiply-add, except for the closed forms it takes at the edges of the Chebyshev families'
# domain and, for large n inside it, in trigonometric form. So the results round as PyTorch's
# do. No derivatives.
def _degree(xp, n):
    """n as the integer degree C's conversion gives (anything it cannot convert: -1)."""
    fits = xp.isfinite(n) & (xp.abs(n) < 2.0 ** 63)
    return xp.where(fits, n, -1.0).astype(np.int64)


def _libm(fn, v):
    """fn(v) correctly rounded to v's dtype, as C's float functions give it (NumPy's float32
    ones are less accurate): computed in float64 for float32."""
    return fn(v.astype(np.float64)).astype(v.dtype) if v.dtype != np.float64 else fn(v)


def _recurrence(xp, k, x, q, coefficients):
    """p_k for each element, from p_0 = 1, p_1 = q and p_m = (a p_(m-1) - c p_(m-2)) / d with
    (a, c, d) = coefficients(x, j) for j = m - 1 (in x's dtype; d None: no division), all
    elements stepping together up to the largest k, each keeping its own p_k (p_1 where k < 2).
    Stops early once every element still stepping is nan (nan then stays nan; PyTorch's loop
    stops at a nan too)."""
    p = xp.ones_like(q)
    top = int(k.max()) if k.size else 0
    for m in range(2, top + 1):
        a, c, d = coefficients(x, x.dtype.type(m - 1))
        c_p = (c * p).astype(np.float64)
        r = _fused_multiply_add(a, q, -c_p, x.dtype)
        # (the emulated fma cannot take infinities, nor values near overflow: there the plain
        # a q - c p, whose infinities and nans are the fused one's)
        r = xp.where(xp.isfinite(r), r, (a * q.astype(np.float64) - c_p).astype(x.dtype))
        if d is not None:
            r = r / d
        live = k >= m
        p, q = xp.where(live, q, p), xp.where(live, r, q)
        if m % 64 == 0 and not xp.any(live & ~xp.isnan(q)):
            break
    return q


def _polynomial(name, first, coefficients, edges=lambda xp, x, k: []):
    """A polynomial f(x, n): `first(x)` is p_1 and `coefficients` its recurrence (see
    `_recurrence`); `edges(xp, x, k)` gives [(mask, value)] overriding it, the first that holds
    winning, with value a function called on the masked elements (x, k, k in x's dtype)."""
    kernel_name = name.replace("special_", "") + "_cpu"

    def forward(xp, x, n):
        unsupported(kernel_name, x, "c")
        _no_half(kernel_name, x)
        x, n = xp.broadcast_arrays(x, n)
        k = _degree(xp, n)
        with _sp._quiet(xp):
            rules = [(k < 0, lambda x, k, kf: xp.zeros_like(x)),
                     (k == 0, lambda x, k, kf: xp.ones_like(x))] + edges(xp, x, k)
            out = xp.empty_like(x)
            todo = xp.ones(x.shape, dtype=bool)
            for mask, value in rules:
                mask = mask & todo
                out[mask] = value(x[mask], k[mask], k[mask].astype(x.dtype))
                todo &= ~mask
            x = x[todo]
            out[todo] = _recurrence(xp, k[todo], x, first(x), coefficients)
        return out
    return _binary(name, (None, None, None), forward, None, params=("x", "n"))


def _alternating(k, v):
    """v for even k, -v for odd k."""
    return np.where(k % 2 == 0, v, -v)


def _chebyshev(name, first, trig_from, at_one, at_minus_one, trig, shifted=False):
    """A Chebyshev family: p_m = 2y p_(m-1) - p_(m-2) with y = x (2x - 1 shifted), at_one(kf)
    and at_minus_one(k, kf) its values at y = 1 and -1 (taken at x = 1 and x = 0 shifted), and
    trig(t, k, kf) its value at y = cos(t) for k above trig_from."""
    def y_of(x):
        return x + x - 1 if shifted else x

    def edges(xp, x, k):
        y = y_of(x)
        top, bottom = (x == 1, x == 0) if shifted else (y == 1, y == -1)
        return [(top, lambda x, k, kf: at_one(kf)),
                (bottom, lambda x, k, kf: at_minus_one(k, kf)),
                ((k > trig_from) & (xp.abs(y) < 1),
                 lambda x, k, kf: trig(_libm(np.arccos, y_of(x)), k, kf))]
    return _polynomial(name, first, lambda x, j: (y_of(x) + y_of(x), 1, None), edges)


def _t_trig(t, k, kf):
    return _libm(np.cos, kf * t)


def _u_trig(t, k, kf):
    # sin((k+1) t) / sin(t), and its limit where sin(t) rounds to 0
    s = _libm(np.sin, t)
    return np.where(s != 0, _libm(np.sin, (kf + 1) * t) / s,
                    (kf + 1) * _libm(np.cos, (kf + 1) * t))


def _v_trig(t, k, kf):
    half = t / 2
    return np.where(_libm(np.sin, half) != 1, _libm(np.cos, (kf + 0.5) * t) / _libm(np.cos, half),
                    _alternating(k, kf + kf + 1))


def _w_trig(t, k, kf):
    half = t / 2
    return np.where(_libm(np.cos, half) != 1,
                    _libm(np.sin, (kf + 0.5) * t) / _libm(np.sin, half), kf + kf + 1)


def _one(kf):
    return np.ones_like(kf)


chebyshev_polynomial_t = _chebyshev(
    "special_chebyshev_polynomial_t", lambda x: x, 6, _one,
    lambda k, kf: _alternating(k, _one(kf)), _t_trig)
chebyshev_polynomial_u = _chebyshev(
    "special_chebyshev_polynomial_u", lambda x: x + x, 8, lambda kf: kf + 1,
    lambda k, kf: _alternating(k, kf + 1), _u_trig)
chebyshev_polynomial_v = _chebyshev(
    "special_chebyshev_polynomial_v", lambda x: x + x - 1, 8, _one,
    lambda k, kf: _alternating(k, kf + kf + 1), _v_trig)
chebyshev_polynomial_w = _chebyshev(
    "special_chebyshev_polynomial_w", lambda x: x + x + 1, 8, lambda kf: kf + kf + 1,
    lambda k, kf: _alternating(k, _one(kf)), _w_trig)
shifted_chebyshev_polynomial_t = _chebyshev(
    "special_shifted_chebyshev_polynomial_t", lambda x: x + x - 1, 6, _one,
    lambda k, kf: _alternating(k, _one(kf)), _t_trig, shifted=True)
shifted_chebyshev_polynomial_u = _chebyshev(
    "special_shifted_chebyshev_polynomial_u", lambda x: x + x - 1 + (x + x - 1), 6,
    lambda kf: kf + 1, lambda k, kf: _alternating(k, kf + 1), _u_trig, shifted=True)
shifted_chebyshev_polynomial_v = _chebyshev(
    "special_shifted_chebyshev_polynomial_v", lambda x: x + x - 1 + (x + x - 1) - 1, 6, _one,
    lambda k, kf: _alternating(k, kf + kf + 1), _v_trig, shifted=True)
shifted_chebyshev_polynomial_w = _chebyshev(
    "special_shifted_chebyshev_polynomial_w", lambda x: x + x - 1 + (x + x - 1) + 1, 4,
    lambda kf: kf + kf + 1, lambda k, kf: _alternating(k, _one(kf)), _w_trig, shifted=True)

# H_m = 2x H_(m-1) - 2j H_(m-2), He_m = x He_(m-1) - j He_(m-2), (j+1) L_m = (2j + 1 - x) L_(m-1)
# - j L_(m-2), (j+1) P_m = (2j+1) x P_(m-1) - j P_(m-2), with j = m - 1
hermite_polynomial_h = _polynomial("special_hermite_polynomial_h", lambda x: x + x,
                                   lambda x, j: (x + x, j + j, None))
hermite_polynomial_he = _polynomial("special_hermite_polynomial_he", lambda x: x,
                                    lambda x, j: (x, j, None))
laguerre_polynomial_l = _polynomial(
    "special_laguerre_polynomial_l", lambda x: 1 - x, lambda x, j: ((j + j) + (1 - x), j, j + 1),
    lambda xp, x, k: [(x == 0, lambda x, k, kf: xp.ones_like(x))])
legendre_polynomial_p = _polynomial(
    "special_legendre_polynomial_p", lambda x: x, lambda x, j: ((j + j + 1) * x, j, j + 1),
    lambda xp, x, k: [(xp.abs(x) == 1,
                       lambda x, k, kf: xp.where(x > 0, 1.0, _alternating(k, 1.0)))])
