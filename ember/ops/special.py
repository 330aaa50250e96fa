"""Special functions on arrays: sigmoid, erf, erfc, erfinv, lgamma, digamma.

Every public function takes `xp` (numpy or a numpy-compatible module such as cupy) and an array
`x`, and returns an array of the same shape and dtype. The work is done in float64 whatever the
input: float32 results are the float64 result rounded once, and float16/bfloat16 results are
rounded to float32 first and then to the small type, the way PyTorch computes them in float32.
Accuracy of the float64 kernels (measured against mpmath at 50 digits, see
tests/test_special_functions.py):

    sigmoid  <= 2 ulp
    erf      <= 2 ulp           erfc   <= 4 ulp relative, all the way down to the underflow
    erfinv   <= 3 ulp           (relative to the answer; the tail is solved in terms of 1 - |x|)
    lgamma   <= 3 ulp for x > 0 (relative, including next to the zeros at 1 and 2)
    digamma  <= 2 ulp for x > 0 (relative, including next to the zero at 1.4616...)

For x < 0 both gamma functions use the reflection formula, which is accurate in absolute terms
(about 1e-16 times the size of the terms) but not relative to the result next to their zeros.

Only array operations that numpy and cupy share are used: each series is a short fixed loop of
whole-array operations, and each branch of a piecewise definition is evaluated only on the
elements that take it (boolean-mask indexing, see `_branches`).
"""
import math
import numpy as np

from decimal import Decimal, localcontext
from fractions import Fraction

from .. import _dtype as D
from .._tensor import Tensor
from ._pointwise_common import (_float_function, _horner, _branches, _quiet, unsupported, _zeros,
                                _out, _wrapped, _promote_to)
from ._utils import int_arg
from .arithmetic import _ones_like, _add_scalar, _mul_scalar, _require_tensors
from .pointwise import where
from .registry import FLOAT, primitive, COMMON
from .creation import arange, _type_name
from . import pointwise as _pointwise
from . import pointwise_math as _pointwise_math


# Constants, to 17+ significant digits (Python rounds the literals correctly).
_PI = math.pi
_TWO_OVER_SQRT_PI = 1.1283791670955125739         # 2 / sqrt(pi)
_SQRT_PI_OVER_TWO = 0.88622692545275801365        # sqrt(pi) / 2
_INV_SQRT_PI = 0.56418958354775628695             # 1 / sqrt(pi)
_HALF_LOG_2PI = 0.91893853320467274178            # log(2 pi) / 2
_EULER_GAMMA = "0.57721566490153286060651209008240243104215933593992"
_LOG_MAX = {64: 709.782712893384, 32: 88.72283905206835}   # log of the largest finite float

# Bernoulli numbers B_2, B_4, ..., B_18 (for the Stirling series and Euler-Maclaurin sums).
_BERNOULLI = [Fraction(1, 6), Fraction(-1, 30), Fraction(1, 42), Fraction(-1, 30),
              Fraction(5, 66), Fraction(-691, 2730), Fraction(7, 6), Fraction(-3617, 510),
              Fraction(43867, 798)]


# ----------------------------------------------------------------------------- sigmoid
@_float_function
def sigmoid(xp, x, wide):
    # 1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) for x < 0: e^-|x| never overflows, and each
    # form is within 2 ulp (three roundings, no cancellation). PyTorch evaluates 1 / (1 + exp(-x))
    # directly, so its result is exactly 0 once exp(-x) overflows in the working precision (float64
    # for float64 input, float32 otherwise); do the same.
    e = xp.exp(-xp.abs(x))
    y = xp.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    return xp.where(x < -_LOG_MAX[64 if wide else 32], 0.0, y)


# ----------------------------------------------------------------------------- erf and erfc
# erf(x) = 2/sqrt(pi) * sum_n (-1)^n x^(2n+1) / (n! (2n+1)), used for |x| < 1/2. Fourteen terms:
# the first one left out is below 1e-19 of the sum there.
_ERF_TAYLOR = [_TWO_OVER_SQRT_PI * (-1) ** n / (math.factorial(n) * (2 * n + 1))
               for n in range(14)]

# For 1/2 <= x < 10: erfc(x) = (2x/pi) e^(-x^2) * integral_0^inf e^(-t^2) / (t^2 + x^2) dt.
# The trapezoidal rule with step h on this analytic integrand is exact up to (a) the pole of the
# integrand at t = ix, whose contribution is exactly -2 / (e^(2 pi x / h) - 1) in erfc, and
# (b) an error of order e^(-pi^2/h^2) = 1e-69 for h = 1/4. (a) is exact only while x is well
# below pi/h = 12.6 (beyond, the neglected part grows like e^(x^2 - 8 pi x) relative to erfc),
# hence the switch at x = 10. The terms e^(-n^2 h^2) fall below 1e-17 after n = 25. Sums of
# positive terms only, so the result is good to a few ulps.
_TRAP_H = 0.25
_TRAP_TERMS = [(math.exp(-(n * _TRAP_H) ** 2), (n * _TRAP_H) ** 2) for n in range(1, 28)]

# For x >= 10: the asymptotic series erfc(x) = e^(-x^2)/(x sqrt(pi)) sum_n (-1)^n (2n-1)!!/(2x^2)^n;
# at x = 10 the first term left out (n = 15) is 2e-19 of the sum.
_ERFC_ASYMPTOTIC = [(-1) ** n * math.prod(range(1, 2 * n, 2)) / 2.0 ** n for n in range(15)]


def _exp_neg_square(xp, x):
    """e^(-x^2) without the rounding error of x^2 (which would be 1e-13 relative at x = 27).

    Split x = hi + lo with hi a multiple of 2^-20 (so hi^2 is exact for |x| < 32), then
    e^(-x^2) = e^(-hi^2) * (1 + expm1(-(x - hi)(x + hi))), about 1 ulp. Callers pass 0 <= x <= 40.
    """
    hi = xp.rint(x * 1048576.0) / 1048576.0
    e_hi = xp.exp(-hi * hi)
    return e_hi + e_hi * xp.expm1(-(x - hi) * (x + hi))


def _erfc_trapezoid(xp, a):
    a2 = a * a
    s = xp.zeros_like(a)
    for weight, t2 in reversed(_TRAP_TERMS):     # smallest terms first
        s = s + weight / (t2 + a2)
    s = s + 0.5 / a2
    pole = 2.0 / xp.expm1(2.0 * _PI * a / _TRAP_H)
    return (2.0 * _TRAP_H / _PI) * a * _exp_neg_square(xp, a) * s - pole


def _erfc_asymptotic(xp, a):
    series = _horner(xp, 1.0 / (a * a), _ERFC_ASYMPTOTIC)
    return _exp_neg_square(xp, a) * (series * _INV_SQRT_PI / a)


def _erfc_tail(xp, a):
    """erfc(a) for a >= 1/2 (smaller a are treated as 1/2)."""
    a = xp.clip(a, 0.5, 40.0)      # erfc(40) underflows to 0; nan stays nan
    return _branches(xp, a < 10.0, lambda v: _erfc_trapezoid(xp, v),
                     lambda v: _erfc_asymptotic(xp, v), a)


def _erf_small(xp, x):
    """erf(x) for |x| < 1/2 (Taylor series); keeps the sign of x, including -0."""
    return x * _horner(xp, x * x, _ERF_TAYLOR)


@_float_function
def erf(xp, x, wide):
    # Taylor series below 1/2, 1 - erfc(|x|) (with the sign of x) above.
    return _branches(xp, xp.abs(x) < 0.5, lambda v: _erf_small(xp, v),
                     lambda v: xp.copysign(1.0 - _erfc_tail(xp, xp.abs(v)), v), x)


def _erfc_outer(xp, x):
    tail = _erfc_tail(xp, xp.abs(x))
    return xp.where(x >= 0, tail, 2.0 - tail)


@_float_function
def erfc(xp, x, wide):
    # 1 - erf(x) below 1/2 (erfc > 0.47 there, nothing cancels), erfc(|x|) or 2 - erfc(|x|) above.
    return _branches(xp, xp.abs(x) < 0.5, lambda v: 1.0 - _erf_small(xp, v),
                     lambda v: _erfc_outer(xp, v), x)


# ----------------------------------------------------------------------------- erfinv
def _erfinv_guess(xp, a, q):
    """Starting point for erfinv(a), 0 <= a < 1, q = 1 - a: within 0.2% (relative).

    a < 0.3: the series erfinv(a) = sqrt(pi)/2 (a + pi a^3/12 + 7 pi^2 a^5/480 + ...), 7e-5.
    a >= 0.3: erf(y)^2 ~ 1 - exp(-y^2 (4/pi + k y^2) / (1 + k y^2)) with k = 0.147 (Winitzki's
    approximation) is a quadratic in y^2; with l = log(1 - a^2) = log(q (1 + a)), its root is
    y^2 = sqrt(t^2 - l/k) - t, t = 2/(pi k) + l/2. Within 0.2% all the way to a = 1 - 2^-53.
    """
    a2 = a * a
    small = _SQRT_PI_OVER_TWO * a * (1.0 + a2 * (_PI / 12 + a2 * (7 * _PI ** 2 / 480)))
    k = 0.147
    log_1ma2 = xp.log(xp.where(a < 0.3, 1.0, q * (1.0 + a)))
    t = 2.0 / (_PI * k) + 0.5 * log_1ma2
    big = xp.sqrt(xp.sqrt(t * t - log_1ma2 / k) - t)
    return xp.where(a < 0.3, small, big)


def _erfinv_residual_tail(xp, y, a, q):
    """erf(y) - a for y >= 1/2, as (1 - a) - erfc(y) when 1 - a is exact (a >= 1/2)."""
    tail = _erfc_tail(xp, y)
    return xp.where(a < 0.5, (1.0 - tail) - a, q - tail)


@_float_function
def erfinv(xp, x, wide):
    # Halley's method on erf(y) = a (a = |x|), cubically convergent: y <- y - d / (1 + y d) with
    # d = (erf(y) - a) / erf'(y), since erf''/erf' = -2y. For a >= 1/2 the residual is written
    # as (1 - a) - erfc(y): 1 - a is exact there, so the tail keeps full relative accuracy in
    # 1 - a (erfinv(1 - 2^-53) is found to a few ulps). From the 0.2% guess the error goes
    # 2e-3 -> 1e-8 -> 1e-23, so three steps reach the limit of erf/erfc's own accuracy.
    a = xp.abs(x)
    q = 1.0 - a
    inside = a < 1.0
    a_in = xp.where(inside, a, 0.0)
    q_in = 1.0 - a_in
    y = _erfinv_guess(xp, a_in, q_in)
    for _ in range(3):
        residual = _branches(xp, y < 0.5, lambda v, a, q: _erf_small(xp, v) - a,
                             lambda v, a, q: _erfinv_residual_tail(xp, v, a, q), y, a_in, q_in)
        d = residual / (_TWO_OVER_SQRT_PI * xp.exp(-y * y))
        y = y - d / (1.0 + xp.maximum(y * d, -0.5))
    y = xp.where(inside, y, xp.where(q == 0.0, xp.inf, xp.nan))
    return xp.copysign(y, x)          # nan stays nan; erfinv(-0) = -0


# ----------------------------------------------------------------------------- gamma family
def _zeta_minus_one(k):
    """zeta(k) - 1 = sum_{n>=2} n^-k to 30 digits (Decimal arithmetic).

    Direct sum for n < N = 100, then the Euler-Maclaurin tail
    sum_{n>=N} n^-k = N^(1-k)/(k-1) + N^-k/2 + sum_j B_2j/(2j)! k(k+1)..(k+2j-2) N^(-k-2j+1),
    whose first omitted term is below 1e-36 for every k >= 2.
    """
    n_cut = 100
    with localcontext() as ctx:
        ctx.prec = 40
        total = sum(Decimal(n) ** -k for n in range(2, n_cut))
        total += Decimal(n_cut) ** (1 - k) / (k - 1) + Decimal(n_cut) ** -k / 2
        rising = Decimal(k)
        for j, b in enumerate(_BERNOULLI[:8], start=1):
            coeff = Decimal(b.numerator) / Decimal(b.denominator) / math.factorial(2 * j)
            total += coeff * rising * Decimal(n_cut) ** (-k - 2 * j + 1)
            rising *= (k + 2 * j - 1) * (k + 2 * j)
        return total


def _one_minus_gamma():
    with localcontext() as ctx:
        ctx.prec = 40
        return 1 - Decimal(_EULER_GAMMA)


# Around 2 (|z| < 2):  lgamma(2 + z) = (1 - gamma) z + sum_{k>=2} (-1)^k (zeta(k) - 1) z^k / k
#                      digamma(2 + z) = (1 - gamma) + sum_{k>=2} (-1)^k (zeta(k) - 1) z^(k-1).
# zeta(k) - 1 ~ 2^-k, so for |z| <= 0.8 the terms shrink like 0.4^k; 50 terms leave < 1e-19.
_SERIES_TERMS = 52
_ZM1 = {k: _zeta_minus_one(k) for k in range(2, 100)}     # more for _digamma_quotient's P0
_LGAMMA_AT_2 = [0.0, float(_one_minus_gamma())] + [
    float((-1) ** k * _ZM1[k] / k) for k in range(2, _SERIES_TERMS)]

# Stirling: lgamma(x) = (x - 1/2) log x - x + log(2 pi)/2 + sum_k B_2k / (2k (2k-1) x^(2k-1)),
#           digamma(x) = log x - 1/(2x) - sum_k B_2k / (2k x^2k).
# Used for x >= 10, where the first omitted terms (k = 9) are below 1e-18.
_STIRLING_LGAMMA = [float(b / (2 * k * (2 * k - 1))) for k, b in enumerate(_BERNOULLI[:8], 1)]
_STIRLING_DIGAMMA = [float(b / (2 * k)) for k, b in enumerate(_BERNOULLI[:8], 1)]
_STIRLING_FROM = 10.0
# Below that, x is moved into [1.2, 2.5) (z = x - 2 in [-0.8, 0.5)) by the recurrences, an
# interval that holds lgamma's zero at 2, its minimum at 1.46 and digamma's zero at 1.46
# (lgamma's zero at 1 comes from lgamma(x) = lgamma(x + 1) - log(x), which keeps 3 ulp there).


def _shift_products(xp, x):
    """For 0 < x < 10 write x = m + 2 + z with z in [-0.8, 0.5) and m an integer in [-2, 8].

    Returns m, z, up = (x-1)(x-2)...(x-m) (m > 0, else 1) and down = x(x+1)...(x-m-1) (m < 0,
    else 1), so that Gamma(x) = Gamma(2 + z) * up / down. z is exact except for x in [0.2, 0.5),
    where the rounding of x - 1 is far below the size of the result.
    """
    m = xp.where(x >= 2.5, xp.floor(x - 1.5),
                 xp.where(x >= 1.2, 0.0, xp.where(x >= 0.2, -1.0, -2.0)))
    z = x - (m + 2.0)
    up = xp.ones_like(x)
    down = xp.ones_like(x)
    for k in range(1, 9):
        up = up * xp.where(m >= k, x - k, 1.0)
    for k in range(0, 2):
        down = down * xp.where(m <= -k - 1, x + k, 1.0)
    return m, z, up, down


def _lgamma_positive(xp, x):
    """lgamma(x) for x > 0 (other values give finite junk that callers discard)."""
    x = xp.where(x > 0, x, 1.0)
    return _branches(xp, x < _STIRLING_FROM, lambda v: _lgamma_shifted(xp, v),
                     lambda v: _lgamma_stirling(xp, v), x)


def _lgamma_shifted(xp, x):
    _, z, up, down = _shift_products(xp, x)
    return z * _horner(xp, z, _LGAMMA_AT_2[1:]) + xp.log(up) - xp.log(down)


def _lgamma_stirling(xp, x):
    log_x = xp.log(x)
    inv = 1.0 / x
    series = inv * _horner(xp, inv * inv, _STIRLING_LGAMMA)
    # (x - 1/2) log x - x, written so that nothing overflows before the result does
    y = x * (log_x - 1.0) - 0.5 * log_x + _HALF_LOG_2PI + series
    return xp.where(x == xp.inf, xp.inf, y)


def _reduce(xp, x):
    """r = x - round(x) in [-1/2, 1/2], exact: sin(pi x) = +-sin(pi r), cot(pi x) = cot(pi r)."""
    return x - xp.rint(x)


def _log_sinc_pi(xp, r):
    """log(sin(pi r) / (pi r)) for |r| <= 1/2; 0 for |r| < 1e-100 (pi r could be subnormal)."""
    tiny = xp.abs(r) < 1e-100
    r = xp.where(tiny, 0.5, r)
    return xp.where(tiny, 0.0, xp.log(xp.sin(_PI * r) / (_PI * r)))


@_float_function
def lgamma(xp, x, wide):
    # x > 0: Stirling for x >= 10, otherwise the series around 2 after moving x into [1.2, 2.5)
    # with Gamma(x+1) = x Gamma(x). x < 0: reflection Gamma(x) Gamma(1-x) = pi / sin(pi x).
    # Poles (0, negative integers, -inf) give +inf like PyTorch. Overflow happens where the
    # result overflows (x = 2.5563e305 in float64, 4.085e36 in float32); PyTorch's CPU kernel
    # gives inf a little earlier (from 2.556348164e305 and 4.0371103e36).
    # log(pi / |sin(pi x)|) = -log|r| - log(sinc), which never forms pi r for subnormal r.
    r = _reduce(xp, x)
    positive = _lgamma_positive(xp, xp.where(x > 0, x, 1.0 - x))     # lgamma(x) or lgamma(1-x)
    reflected = -xp.log(xp.abs(r)) - _log_sinc_pi(xp, r) - positive
    y = xp.where(x > 0, positive, reflected)
    pole = (x <= 0) & ((r == 0) | xp.isinf(x))
    return xp.where(pole, xp.inf, y)


# digamma's positive zero x0 = 1.4616321449683623412626595...; X0_HI is the double nearest.
_X0 = Decimal("1.4616321449683623412626595423257213284681962040064463513")
_X0_HI = float(_X0)


def _digamma_quotient():
    """Coefficients of Q in digamma(2 + z) = P0 + (z - Z0) Q(z), and P0 = digamma(X0_HI).

    P(z) = (1 - gamma) + sum_{k>=2} a_k z^(k-1), a_k = (-1)^k (zeta(k) - 1), is divided by
    (z - Z0) by synthetic division (Horner's scheme at Z0), in 40-digit Decimal arithmetic:
    q_j = a_(j+2) + Z0 q_(j+1), and P0 = P(Z0) = (1 - gamma) + Z0 q_0. Z0 = X0_HI - 2 is exact.
    """
    with localcontext() as ctx:
        ctx.prec = 40
        z0 = Decimal(_X0_HI - 2.0)
        q = [Decimal(0)] * (_SERIES_TERMS - 2)
        carry = Decimal(0)
        for j in reversed(range(_SERIES_TERMS - 2)):
            carry = (-1) ** (j + 2) * _ZM1[j + 2] + z0 * carry
            q[j] = carry
        # P0 ~ -9e-17 is wanted to full relative precision: sum its series to 1e-45.
        p0 = _one_minus_gamma() + sum((-1) ** k * _ZM1[k] * z0 ** (k - 1) for k in range(2, 100))
        return [float(c) for c in q], float(p0)


_DIGAMMA_Q, _DIGAMMA_AT_X0_HI = _digamma_quotient()


def _digamma_near_two(xp, z):
    """digamma(2 + z) for z in [-0.8, 0.5), accurate relative to the result even at the zero.

    Written as P0 + (z - Z0) Q(z): near the zero z - Z0 is exact (Sterbenz) and P0 ~ -1e-17 is
    the tiny value at the double nearest the zero, so nothing cancels.
    """
    return (z - (_X0_HI - 2.0)) * _horner(xp, z, _DIGAMMA_Q) + _DIGAMMA_AT_X0_HI


def _digamma_positive(xp, x):
    """digamma(x) for x > 0 (other values give finite junk that callers discard)."""
    x = xp.where(x > 0, x, 1.0)
    return _branches(xp, x < _STIRLING_FROM, lambda v: _digamma_shifted(xp, v),
                     lambda v: _digamma_stirling(xp, v), x)


def _digamma_shifted(xp, x):
    m, z, _, _ = _shift_products(xp, x)
    y = _digamma_near_two(xp, z)
    for k in range(1, 9):          # digamma(x) = digamma(x - 1) + 1 / (x - 1)
        y = y + xp.where(m >= k, 1.0 / (x - k), 0.0)
    for k in range(0, 2):          # digamma(x) = digamma(x + 1) - 1 / x
        y = y - xp.where(m <= -k - 1, 1.0 / (x + k), 0.0)
    return y


def _digamma_stirling(xp, x):
    inv2 = 1.0 / (x * x)
    return xp.log(x) - 0.5 / x - inv2 * _horner(xp, inv2, _STIRLING_DIGAMMA)


def _pi_cot_pi(xp, r):
    """pi cot(pi r) for r in [-1/2, 1/2]: near r = +-1/2 use cot(t) = -tan(t -+ pi/2), whose
    argument is then small and exact (r -+ 1/2 is exact), instead of tan of a rounded pi r;
    for |r| < 1e-100, 1/r (pi r could be subnormal)."""
    return xp.where(xp.abs(r) < 1e-100, 1.0 / r,
                    xp.where(xp.abs(r) <= 0.25, _PI / xp.tan(_PI * r),
                             -_PI * xp.tan(_PI * (r - xp.copysign(0.5, r)))))


@_float_function
def digamma(xp, x, wide):
    # x > 0: asymptotic series for x >= 10, otherwise recurrences into [1.2, 2.5) and the series
    # around 2. x < 0: reflection digamma(x) = digamma(1 - x) - pi cot(pi x). Like PyTorch:
    # digamma(+0) = -inf, digamma(-0) = +inf, negative integers and -inf give nan.
    r = _reduce(xp, x)
    positive = _digamma_positive(xp, xp.where(x > 0, x, 1.0 - x))   # digamma(x) or (1-x)
    y = xp.where(x > 0, positive, positive - _pi_cot_pi(xp, r))
    y = xp.where((x < 0) & ((r == 0) | xp.isinf(x)), xp.nan, y)
    return xp.where(x == 0, xp.copysign(xp.inf, -x), y)


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
        with _quiet(xp):
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
    for k in range(len(_BERNOULLI), 0, -1):        # Horner-like: smallest terms first
        coeff = float(_BERNOULLI[k - 1] * Fraction(math.factorial(2 * k + n - 1),
                                                       math.factorial(2 * k)))
        series = series + coeff * inv ** (2 * k + n)
    series = series + math.factorial(n - 1) * inv ** n + fact / 2 * inv ** (n + 1)
    return sign * (fact * acc + series)


@primitive("polygamma", node="PolygammaBackward0", save=("self",), promote=FLOAT)
def _polygamma(xp, self, *, n):
    unsupported({0: "digamma", 1: "trigamma"}.get(n, "polygamma"), self, "c")
    if n == 0:
        return digamma(xp, self)
    x = self.astype(xp.float64)
    with _quiet(xp):
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
    with _quiet(xp):
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
        pole = 2.0 * xp.exp(v * v - 2.0 * _PI * v / _TRAP_H) / \
            -xp.expm1(-2.0 * _PI * v / _TRAP_H)
        s = xp.zeros_like(v)
        for weight, t2 in reversed(_TRAP_TERMS):
            s = s + weight / (t2 + v * v)
        s = s + 0.5 / (v * v)
        return (2.0 * _TRAP_H / _PI) * v * s - pole

    def asymptotic(v):
        return _horner(xp, 1.0 / (v * v), _ERFC_ASYMPTOTIC) * (_INV_SQRT_PI / v)
    return _branches(xp, a < 10.0, trapezoid, asymptotic, a)


def _erfcx64(xp, x):
    """erfcx in float64 (x float64)."""
    a = xp.abs(x)
    small = a < 0.5
    # |x| < 1/2: e^(x^2) erfc(x) directly; x <= -1/2: 2 e^(x^2) - erfcx(|x|) (inf below -26.6)
    direct = xp.exp(x * x) * erfc(xp, xp.where(small, x, 0.0))
    tail = _erfcx_positive(xp, a)
    reflected = 2.0 / _exp_neg_square(xp, xp.minimum(a, 40.0)) - tail
    return xp.where(small, direct, xp.where(x > 0, tail, reflected))


@_float_function
def _erfcx_kernel(xp, x, wide):
    return _erfcx64(xp, x)


def _erfcx_derivative(ctx, grad):
    # d/dx e^(x^2) erfc(x) = 2 x erfcx(x) - 2 / sqrt(pi)
    return grad * (2 * ctx.self * ctx.result - _TWO_OVER_SQRT_PI)


erfcx = _unary("special_erfcx", "SpecialErfcxBackward0", lambda xp, x: _erfcx_kernel(xp, x),
               _erfcx_derivative, save=("self", "result"), halves=False)


# ----------------------------------------------------------------------------- ndtr family
def ndtr(input, *, out=None):
    # PyTorch composes it (its graph shows MulBackward1 <- AddBackward1 <- ErfBackward0 <- ...)
    scaled = _mul_scalar(_promote_to(input, _SQRT_HALF), other=_SQRT_HALF)
    # (pointwise's erf op: this module's own `erf` is an array kernel)
    return _out(_mul_scalar(_add_scalar(_pointwise.erf(scaled), other=1), other=0.5), out,
                "special_ndtr")


@_float_function
def _log_ndtr_kernel(xp, x, wide):
    # left tail: ndtr(x) = erfcx(t) e^(-t^2) / 2 with t = -x / sqrt(2), so no underflow
    left = x < -1.0
    t = xp.where(left, -x * _SQRT_HALF, 0.0)
    tail = xp.log(_erfcx64(xp, t) / 2.0) - x * x * 0.5
    body = xp.log1p(-erfc(xp, xp.where(left, 0.0, x) * _SQRT_HALF) / 2.0)
    return xp.where(left, tail, body)


def _log_ndtr_derivative(ctx, grad):
    # d/dx log(ndtr(x)) = phi(x) / ndtr(x) = exp(-x^2/2 - log_ndtr(x)) / sqrt(2 pi)
    x = ctx.self
    return grad * ((-(x * x) * 0.5 - ctx.result).exp() * _INV_SQRT_2PI)


log_ndtr = _unary("special_log_ndtr", "SpecialLogNdtrBackward0",
                  lambda xp, x: _log_ndtr_kernel(xp, x), _log_ndtr_derivative,
                  save=("self", "result"), halves=False)


@_float_function
def _ndtri_kernel(xp, p, wide):
    # Solve ndtr(x) = u for x <= 0 with u = min(p, 1 - p) (1 - p is exact for p >= 1/2), then
    # flip the sign for p > 1/2. Start from erfinv's 0.2% guess (given u directly, so it works
    # down to the smallest u), then Newton on log(ndtr(x)) - log(u), whose slope
    # phi(x) / ndtr(x) = sqrt(2/pi) / erfcx(-x / sqrt 2) never underflows: 2e-3 -> 1e-11 -> 1e-22.
    inside = (p > 0) & (p < 1)
    u = xp.where(inside, xp.minimum(p, 1.0 - p), 0.25)
    x = -np.sqrt(2.0) * _erfinv_guess(xp, 1.0 - 2.0 * u, 2.0 * u)
    for _ in range(4):
        ex = _erfcx64(xp, -x * _SQRT_HALF)
        f = (xp.log(ex / 2.0) - x * x * 0.5) - xp.log(u)
        x = x - f * ex / _SQRT_TWO_OVER_PI
    x = xp.where(p > 0.5, -x, x)
    # the middle, where log(ndtr(x)) - log(u) cancels: sqrt(2) erfinv(2p - 1), 2p - 1 exact
    middle = (p >= 0.25) & (p <= 0.75)
    x = xp.where(middle, np.sqrt(2.0) * erfinv(xp, xp.where(middle, 2.0 * p - 1.0, 0.0)), x)
    edge = xp.where(p == 0, -np.inf, xp.where(p == 1, np.inf, np.nan))
    return xp.where(inside, x, edge)


def _ndtri_derivative(ctx, grad):
    # 1 / phi(ndtri(p)) = sqrt(2 pi) exp(ndtri(p)^2 / 2)
    return grad * ((ctx.result * ctx.result * 0.5).exp() * _SQRT_2PI)


ndtri = _unary("special_ndtri", "SpecialNdtriBackward0", lambda xp, x: _ndtri_kernel(xp, x),
               _ndtri_derivative, save=("result",), halves=False)


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
    for j, b in enumerate(_BERNOULLI, start=1):
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
    with _quiet(xp):
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
    return a * xp.log(x) - x - lgamma(xp, a)


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
    return (-xp.expm1(log_x_a - lgamma(xp, a + 1.0))
            - xp.exp(log_x_a - lgamma(xp, a)) * total)


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
    with _quiet(xp):
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
        with _quiet(xp):
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


# ----------------------------------------------------------------------------- mvlgamma
@primitive("mvlgamma", node="MvlgammaBackward0", save=("self",))
def _mvlgamma(xp, self, *, p):
    shifted = self[..., None] - xp.arange(p, dtype=self.dtype) / 2
    log_pi = p * (p - 1) / 4 * math.log(math.pi)
    return (lgamma(xp, shifted).sum(-1) + log_pi).astype(self.dtype, copy=False)


@_mvlgamma.derivative
def _(ctx, grad):
    p = ctx.p
    shifted = ctx.self.unsqueeze(-1) - arange(p, dtype=ctx.self._dtype) / 2
    return grad * _pointwise_math.digamma(shifted).sum(-1)


def _mvlgamma_check(input, p):
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    # (torch 2.13 no longer rejects elements <= (p-1)/2: they give lgamma's values, or inf)
    return input if input._dtype._category >= 2 else input.to(D._default[0])


def multigammaln(name, input, p):
    """mvlgamma under the name its errors carry (torch.mvlgamma, torch.special.multigammaln)."""
    p = int_arg(name, "p", p, 2)
    return _mvlgamma(_mvlgamma_check(input, p), p=p)


def mvlgamma(input, p):
    return multigammaln("mvlgamma", input, p)


def mvlgamma_method(self, p):
    """Tensor.mvlgamma: as a method, p is the first argument (PyTorch's errors count so)."""
    return mvlgamma(self, int_arg("mvlgamma", "p", p, 1))


def mvlgamma_(self, p):
    p = int_arg("mvlgamma_", "p", p, 1)       # a method only: p is its first argument
    _mvlgamma_check(self, p)
    return _mvlgamma.inplace(self, p=p)



# ----------------------------------------------------------------------------- igamma / igammac
def _method_other(name, other):
    """A method's tensor-only argument: PyTorch counts it as position 1 (self is not counted)."""
    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(other).__name__}")


def _igamma_public(name, op):
    def public(input, other, *, out=None):
        _require_tensors(name, input, other)
        return _out(op(input, other), out, name)

    def method(self, other):
        _method_other(name, other)
        return op(self, other)

    def inplace(self, other):
        _method_other(name + "_", other)
        return op.inplace(self, other)
    public.__name__, method.__name__, inplace.__name__ = name, name, name + "_"
    return public, method, inplace


igamma, _igamma_method, igamma_ = _igamma_public("igamma", _igamma)
igammac, _igammac_method, igammac_ = _igamma_public("igammac", _igammac)


__all__ = ['mvlgamma', 'igamma', 'igammac', 'xlogy', 'xlogy_', 'polygamma']
