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
import functools
import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np

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


# ----------------------------------------------------------------------------- dtype plumbing
def _quiet(xp):
    """Silence floating-point warnings (overflow to inf, 0/0 in branches `where` discards)."""
    errstate = getattr(xp, "errstate", None) or np.errstate
    return errstate(all="ignore")


def _float_function(kernel):
    """Turn `kernel(xp, x64, wide)` (float64 in and out) into a dtype-preserving function.

    `wide` tells the kernel whether PyTorch would evaluate in float64 (True) or in float32
    (False: float32, float16 and bfloat16 inputs); only sigmoid's overflow limit depends on it.
    """
    @functools.wraps(kernel)
    def fn(xp, x):
        x = xp.asarray(x)
        dtype = x.dtype
        with _quiet(xp):
            y = kernel(xp, x.astype(xp.float64), dtype == xp.float64)
            if dtype == xp.float64:
                return xp.asarray(y, dtype=xp.float64)
            y = xp.asarray(y).astype(xp.float32)
            if dtype.kind == "f" or dtype.name == "bfloat16":
                y = y.astype(dtype)
            return y
    return fn


def _branches(xp, cond, if_true, if_false, *arrays):
    """where(cond, if_true(*arrays), if_false(*arrays)), calling each function only on the
    elements that it decides (the arrays share cond's shape)."""
    out = xp.empty_like(arrays[0])
    out[cond] = if_true(*(a[cond] for a in arrays))
    rest = ~cond
    out[rest] = if_false(*(a[rest] for a in arrays))
    return out


def _horner(xp, t, coeffs):
    """sum(c_k t^k) for a list of Python floats, lowest degree first."""
    acc = xp.full_like(t, coeffs[-1])
    for c in reversed(coeffs[:-1]):
        acc = acc * t + c
    return acc


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
