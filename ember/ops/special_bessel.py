"""Bessel and Airy functions: i0, i0e, i1, i1e, bessel_j0/j1/y0/y1, the modified and spherical
Bessel functions and airy_ai."""
import math
import numpy as np

from .._printing import scalar_type_name
from . import pointwise as P
from ._pointwise_common import _out, _horner, _float_function, unsupported
from .pointwise import where
from .registry import FLOAT, primitive
from .special import _unary


def _bessel_i1(xp, x):
    """The modified Bessel function I1: its power series for |x| <= 30, the asymptotic
    series above (both accurate to double precision there: the series has no cancellation,
    and the asymptotic one's error is about e^(-2|x|))."""
    a = xp.abs(x).astype(np.float64)
    small = xp.minimum(a, _I1_SWITCH) / 2.0
    term = small.copy()
    total = small.copy()
    sq = small * small
    for k in range(1, 75):                  # a fixed number of terms, over the whole array
        term = term * sq / (k * (k + 1))
        total = total + term
    big = xp.maximum(a, _I1_SWITCH)
    coeff, series = 1.0, 1.0
    for k in range(1, 50):                  # (its terms still shrink up to k = 2 * 30)
        coeff *= -(4.0 - (2 * k - 1) ** 2) / (k * 8.0)
        series = series + coeff / big ** k
    with np.errstate(all="ignore"):
        asymptotic = xp.exp(big) / xp.sqrt(2 * math.pi * big) * series
    out = xp.where(a <= _I1_SWITCH, total, asymptotic)
    return (xp.sign(x) * out).astype(x.dtype, copy=False)


_I1_SWITCH = 30.0


@primitive("i0", node="I0Backward0", save=("self",), promote=FLOAT)
def _i0(xp, self):
    return xp.i0(self.astype(np.float64)).astype(self.dtype, copy=False)


_i1 = primitive("special_i1", node="SpecialI1Backward0", save=("self", "result"),
                promote=FLOAT)(lambda xp, self: _bessel_i1(xp, self))


@_i0.derivative
def _(ctx, grad):
    return grad * _i1(ctx.self)


@_i1.derivative
def _(ctx, grad):
    # I1'(x) = I0(x) - I1(x) / x, which is 1/2 at x = 0
    x = ctx.self
    zero = x == 0
    ratio = P.where(zero, 0.5, ctx.result / P.where(zero, 1.0, x))
    return grad * (_i0(x) - ratio)


def i0(input, *, out=None):
    if input._dtype.is_complex:
        raise NotImplementedError("\"i0_vml_cpu\" not implemented for "
                                  f"'{scalar_type_name(input._dtype)}'")
    return _out(_i0(input), out, "i0")


def i0_(self):
    return _i0.inplace(self)


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
    return _horner(xp, 1.0 / a, coeffs) / xp.sqrt(2 * math.pi * a)


def _scaled_bessel(unscaled, nu):
    def kernel(xp, x, wide):
        a = xp.abs(x)
        near = a <= _BIG_BESSEL
        direct = xp.exp(-a) * unscaled(xp, xp.where(near, x, 0.0))
        far = xp.sign(x) ** nu * _bessel_scaled_asymptotic(xp, xp.maximum(a, _BIG_BESSEL), nu)
        return xp.where(near, direct, xp.where(xp.isinf(x), 0.0 * far, far))
    return _float_function(kernel)


_i0e_kernel = _scaled_bessel(lambda xp, x: xp.i0(x), 0)
_i1e_kernel = _scaled_bessel(_bessel_i1, 1)


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
    return _out(_i1(input), out, "special_i1")


# ----------------------------------------------------------------------------- spherical_bessel_j0
@_float_function
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
        return _horner(xp, inv2, p_coeffs), _horner(xp, inv2, q_coeffs) / w
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
    return _float_function(kernel)


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
    return _float_function(kernel)


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
    return _horner(xp, 1.0 / x, _hankel_coefficients(nu)) * xp.sqrt(math.pi / (2.0 * x))


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
    return _float_function(kernel)


def _modified_bessel(name, kernel, param="input"):
    return _unary(name, None, lambda xp, x: kernel(xp, x), None, save=(), halves=False,
                  param=param)


modified_bessel_i0 = _modified_bessel("special_modified_bessel_i0", _float_function(
    lambda xp, x, wide: xp.where(xp.isinf(x), np.nan, xp.i0(x))))
modified_bessel_i1 = _modified_bessel("special_modified_bessel_i1", _float_function(
    lambda xp, x, wide: xp.where(xp.isinf(x), np.nan, _bessel_i1(xp, x))))
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


@_float_function
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


__all__ = ['i0', 'i0_', 'i0_']
