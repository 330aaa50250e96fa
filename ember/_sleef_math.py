"""torch's vectorised CPU math, bit for bit, for the samplers that need it (not ember's general
pow/cos ops): torch 2.13's AVX-512 kernels call SLEEF's u10 functions, whose results differ
from the C library's and NumPy's in the last bit for a few values in a thousand.

- `pow_tensor(x, y)`: x.pow(tensor) for float32/float64 (InverseGamma's PowerTransform).

(torch.cos of float64, which VonMises's sampler calls, is not SLEEF's on this build but Intel
MKL's VML vdCos: bit-equal with vdCos called from torch's own library over 300000 values, while
SLEEF's cos_u10 differs in ~2% of them. MKL's algorithm is not published, so it is not
reproduced; see docs/random_streams.md.)

Written from SLEEF's published algorithm (sleefsimdsp.c / sleefsimddp.c, the AVX-512 build:
exponent and mantissa by getexp/getmant, multiply-adds fused): values are carried as unevaluated
sums of two floats (hi, lo), the "double-float" / "double-double" arithmetic. Each step below
names the step of the algorithm it is; fused multiply-adds are exact emulations
(_random_recipes.fma32 / fma64).

Which elements take the vectorised path was found by experiment against torch (see
tests/test_distributions_sleef.py): torch's elementwise loop takes 2 vectors at a time (32
float32 or 16 float64 values on AVX-512) and hands what is left over at the end of its range to
the scalar function (the C library's powf / pow); a tensor of 32768 elements or more is
first split into one range per thread (ceil(n / threads) elements each), each with its own tail.
"""
import ctypes
import ctypes.util
import math

import numpy as np

from ._cpu import aten_vector_bytes
from ._random_recipes import fma32, fma64
from ._threads import get_num_threads

F32, F64 = np.float32, np.float64
GRAIN = 32768                         # torch's elementwise loops split per thread from here


# ----------------------------------------------------------------------------- double-word sums
class _Arith:
    """(hi, lo) arithmetic in one float type (float32 or float64) with an exact fma."""

    def __init__(self, ftype, fma):
        self.f, self.fma = ftype, fma

    def c(self, v):
        return self.f(v)

    # sums
    def add_ss(self, x, y):                 # two numbers, |x| >= |y|
        s = x + y
        return s, (x - s) + y

    def add2_ss(self, x, y):                # two numbers, any order (Knuth's two-sum)
        s = x + y
        v = s - x
        return s, (x - (s - v)) + (y - v)

    def add_ps(self, x, y):                 # pair + number, |x| >= |y|
        s = x[0] + y
        return s, ((x[0] - s) + y) + x[1]

    def add2_ps(self, x, y):                # pair + number, any order
        s = x[0] + y
        v = s - x[0]
        return s, ((x[0] - (s - v)) + (y - v)) + x[1]

    def add_sp(self, x, y):                 # number + pair, |x| >= |y|
        s = x + y[0]
        return s, ((x - s) + y[0]) + y[1]

    def add_pp(self, x, y):                 # pair + pair, |x| >= |y|
        s = x[0] + y[0]
        return s, (((x[0] - s) + y[0]) + x[1]) + y[1]

    def add2_pp(self, x, y):                # pair + pair, any order
        s = x[0] + y[0]
        v = s - x[0]
        t = (x[0] - (s - v)) + (y[0] - v)
        return s, t + (x[1] + y[1])

    def normalize(self, t):
        s = t[0] + t[1]
        return s, (t[0] - s) + t[1]

    def scale(self, x, k):
        return x[0] * k, x[1] * k

    # products (the fma gives each product's exact rounding error)
    def mul_ps(self, x, y):                 # pair * number
        s = x[0] * y
        return s, self.fma(x[1], y, self.fma(x[0], y, -s))

    def mul_pp(self, x, y):                 # pair * pair
        s = x[0] * y[0]
        fma = self.fma
        return s, fma(x[0], y[1], fma(x[1], y[0], fma(x[0], y[0], -s)))

    def mul_pp_single(self, x, y):          # pair * pair, rounded to one number
        fma = self.fma
        return fma(x[0], y[0], fma(x[1], y[0], x[0] * y[1]))

    def square(self, x):
        s = x[0] * x[0]
        fma = self.fma
        return s, fma(x[0] + x[0], x[1], fma(x[0], x[0], -s))

    def div(self, n, d):                    # pair / pair
        fma, one = self.fma, self.c(1)
        t = one / d[0]
        s = n[0] * t
        u = fma(t, n[0], -s)
        v = fma(-d[1], t, fma(-d[0], t, one))
        return s, fma(s, v, fma(n[1], t, u))

    def poly(self, x, coefs):
        """Horner's rule with fused steps (coefs from the highest power)."""
        u = self.c(coefs[0])
        for k in coefs[1:]:
            u = self.fma(u, x, self.c(k))
        return u


_S = _Arith(F32, fma32)
_D = _Arith(F64, fma64)


def _estrin4(A, x, x2, c3, c2, c1, c0):
    return A.fma(x2, A.fma(x, A.c(c3), A.c(c2)), A.fma(x, A.c(c1), A.c(c0)))


def _estrin8(A, x, x2, x4, c):
    """c7..c0 (c[0] the highest) as SLEEF's POLY8: two 4-term halves joined by x**4."""
    return A.fma(x4, _estrin4(A, x, x2, *c[:4]), _estrin4(A, x, x2, *c[4:]))


def _exponent_mantissa(d, ftype):
    """AVX-512's getexp(d * (1 / 0.75)) and getmant(d) into [0.75, 1.5) for positive d:
    e = floor(log2(d / 0.75)) as computed, m = d's significand in [1, 2), halved when it is
    1.5 or more (the two are computed separately, as SLEEF does)."""
    with np.errstate(all="ignore"):
        scaled = d * ftype(1 / 0.75)
        _, ex = np.frexp(scaled)
        e = (ex - 1).astype(ftype)
        e = np.where(np.isinf(scaled), ftype(128 if ftype is F32 else 1024), e)
        frac, _ = np.frexp(d)                      # frac in [0.5, 1)
        m = np.where(frac >= ftype(0.75), frac, frac * ftype(2)).astype(ftype)
    return e, m


def _pow2(k, ftype):
    return np.ldexp(ftype(1), k).astype(ftype)


# ----------------------------------------------------------------------------- float32 pow
def _log_pair_f32(d):
    """log(d) for positive float32 d as a (hi, lo) pair."""
    A = _S
    e, m = _exponent_mantissa(d, F32)
    x = A.div(A.add2_ss(F32(-1), m), A.add2_ss(F32(1), m))
    x2 = A.square(x)
    t = A.poly(x2[0], (0.240320354700088500976562, 0.285112679004669189453125,
                       0.400007992982864379882812))
    c = (F32(0.66666662693023681640625), F32(3.69183861259614332084311e-09))
    s = A.mul_ps((F32(0.69314718246459960938), F32(-1.904654323148236017e-09)), e)
    s = A.add_pp(s, A.scale(x, F32(2)))
    return A.add_pp(s, A.mul_pp(A.mul_pp(x2, x), A.add2_pp(A.mul_ps(x2, t), c)))


def _ldexp_f32(x, q):
    """x * 2**q as SLEEF's float ldexp: the scale split into four equal powers and a rest,
    so that very large or small q still scale in steps."""
    q = q.astype(np.int32)
    m = q >> 31
    m = (((m + q) >> 6) - m) << 4
    q = q - (m << 2)
    m = m + 127
    m = np.where(m > 0, m, 0)
    m = np.where(m > 255, 255, m)
    u = (m.astype(np.int32) << 23).view(F32)
    x = x * u * u * u * u
    return x * ((q + 127).astype(np.int32) << 23).view(F32)


def _exp_pair_f32(d):
    """exp of a (hi, lo) float32 pair."""
    A = _S
    u = (d[0] + d[1]) * F32(1.442695040888963407359924681001892137426645954152985934135449406931)
    q = np.rint(u)
    s = A.add2_ps(d, q * F32(-0.693145751953125))
    s = A.add2_ps(s, q * F32(-1.428606765330187045e-06))
    s = A.normalize(s)
    u = A.poly(s[0], (0.00136324646882712841033936, 0.00836596917361021041870117,
                      0.0416710823774337768554688, 0.166665524244308471679688,
                      0.499999850988388061523438))
    t = A.add_pp(s, A.mul_ps(A.square(s), u))
    t = A.add_sp(F32(1), t)
    with np.errstate(over="ignore", under="ignore"):
        out = _ldexp_f32(t[0] + t[1], q.astype(np.int32))
    return np.where(d[0] < F32(-104), F32(0), out)


# ----------------------------------------------------------------------------- float64 pow
_LOG_COEFS = (0.116255524079935043668677, 0.103239680901072952701192,
              0.117754809412463995466069, 0.13332981086846273921509,
              0.153846227114512262845736, 0.181818180850050775676507,
              0.222222222230083560345903, 0.285714285714249172087875,
              0.400000000000000077715612)
_EXP_COEFS = (2.51069683420950419527139e-08, 2.76286166770270649116855e-07,
              2.75572496725023574143864e-06, 2.48014973989819794114153e-05,
              0.000198412698809069797676111, 0.0013888888939977128960529,
              0.00833333333332371417601081, 0.0416666666665409524128449,
              0.166666666666666740681535, 0.500000000000000999200722)


def _log_pair_f64(d):
    """log(d) for positive float64 d as a (hi, lo) pair."""
    A = _D
    e, m = _exponent_mantissa(d, F64)
    x = A.div(A.add2_ss(-1.0, m), A.add2_ss(1.0, m))
    x2 = A.square(x)
    x4 = x2[0] * x2[0]
    x8 = x4 * x4
    x16 = x8 * x8
    # POLY9 over x2: the top coefficient by x**16 on an 8-term Estrin sum
    t = A.fma(x16, _LOG_COEFS[0], _estrin8(A, x2[0], x4, x8, _LOG_COEFS[1:]))
    c = (0.666666666666666629659233, 3.80554962542412056336616e-17)
    s = A.mul_ps((0.693147180559945286226764, 2.319046813846299558417771e-17), e)
    s = A.add_pp(s, A.scale(x, 2.0))
    x = A.mul_pp(x2, x)
    s = A.add_pp(s, A.mul_pp(x, c))
    x = A.mul_pp(x2, x)
    return A.add_pp(s, A.mul_ps(x, t))


def _exp_pair_f64(d):
    """exp of a (hi, lo) float64 pair."""
    A = _D
    u = (d[0] + d[1]) * 1.442695040888963407359924681001892137426645954152985934135449406931
    dq = np.rint(u)
    s = A.add2_ps(d, dq * -.69314718055966295651160180568695068359375)
    s = A.add2_ps(s, dq * -.28235290563031577122588448175013436025525412068e-12)
    s = A.normalize(s)
    s2 = s[0] * s[0]
    s4 = s2 * s2
    s8 = s4 * s4
    # POLY10: the top two coefficients by s**8 on an 8-term Estrin sum
    u = A.fma(s8, A.fma(s[0], _EXP_COEFS[0], _EXP_COEFS[1]),
              _estrin8(A, s[0], s2, s4, _EXP_COEFS[2:]))
    t = A.add_sp(1.0, s)
    t = A.add_pp(t, A.mul_ps(A.square(s), u))
    q = dq.astype(np.int64)
    half = q >> 1
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        out = (t[0] + t[1]) * _pow2(half, F64) * _pow2(q - half, F64)
    return np.where(d[0] < -1000, 0.0, out)


def _pow_vector(x, y, ftype):
    """SLEEF's pow (u10) on float arrays of one shape, special values included."""
    with np.errstate(all="ignore"):
        ax = np.abs(x)
        if ftype is F32:
            d = _S.mul_ps(_log_pair_f32(ax), y)
            r = _exp_pair_f32(d)
            r = np.where(np.isnan(r), ftype(np.inf), r)
            big = ftype(1 << 24)
        else:
            d = _D.mul_ps(_log_pair_f64(ax), y)
            r = _exp_pair_f64(d)
            r = np.where(d[0] > 709.782712893383996843, np.inf, r)
            big = ftype(2.0 ** 53)
        ty = np.trunc(y)
        yisint = (ty == y) | (np.abs(y) > big)
        yisodd = yisint & (np.abs(y) < big) & (np.fmod(np.where(np.isfinite(ty), ty, 0), 2) != 0)
        sign = np.where(x > 0, ftype(1), np.where(yisint, np.where(yisodd, ftype(-1), ftype(1)),
                                                  ftype(np.nan)))
        r = (r * sign).astype(ftype)
        efx = ax - ftype(1)
        efx = np.where(np.signbit(y), -efx, efx)
        r = np.where(np.isinf(y), np.where(efx < 0, ftype(0),
                                           np.where(efx == 0, ftype(1), ftype(np.inf))), r)
        edge = np.where(np.signbit(y) ^ (x == 0), ftype(0), ftype(np.inf))
        edge = np.where(np.signbit(np.where(yisodd, x, ftype(1))), -edge, edge)
        r = np.where(np.isinf(x) | (x == 0), edge, r)
        r = np.where(np.isnan(x) | np.isnan(y), ftype(np.nan), r)
        r = np.where((y == 0) | (x == 1), ftype(1), r)
    return r.astype(ftype)


# ----------------------------------------------------------------------------- scalar tails
def _libm():
    name = ctypes.util.find_library("m")
    try:
        lib = ctypes.CDLL(name or "libm.so.6")
    except OSError:
        return None
    lib.powf.restype = ctypes.c_float
    lib.powf.argtypes = (ctypes.c_float, ctypes.c_float)
    return lib


_LIBM = _libm()


def _pow_scalar(x, y, ftype):
    """The C library's powf / pow, one element at a time (the loop's scalar tail)."""
    if ftype is F64:
        fn = math.pow
    elif _LIBM is not None:
        fn = _LIBM.powf
    else:                        # (no C library to call: pow in float64, rounded once)
        def fn(a, b):
            return float(F32(math.pow(a, b)))
    out = np.empty(x.shape, ftype)
    for i, (a, b) in enumerate(zip(x.tolist(), y.tolist())):
        try:
            out[i] = fn(a, b)
        except (OverflowError, ValueError):
            out[i] = np.power(ftype(a), ftype(b))
    return out


def _vector_mask(n, width):
    """Which of n elements (torch's elementwise loop over a contiguous range) go through the
    vector function: per thread's range, all but the last (length % (2 * width))."""
    mask = np.ones(n, bool)
    parts = 1 if n < GRAIN else max(1, min(get_num_threads(), -(-n // GRAIN)))
    step = -(-n // parts)
    for begin in range(0, n, step):
        end = min(n, begin + step)
        tail = (end - begin) % (2 * width)
        mask[end - tail:end] = False
    return mask


VECTOR_BYTES = aten_vector_bytes()     # (the width of torch's CPU vectors here)


def _split(fn_vec, fn_scalar, arrays, itemsize):
    n = arrays[0].size
    flat = [np.ascontiguousarray(a).reshape(-1) for a in arrays]
    mask = _vector_mask(n, VECTOR_BYTES // itemsize) if VECTOR_BYTES else np.zeros(n, bool)
    out = np.empty(n, flat[0].dtype)
    if mask.any():
        out[mask] = fn_vec(*[a[mask] for a in flat])
    if not mask.all():
        out[~mask] = fn_scalar(*[a[~mask] for a in flat])
    return out.reshape(arrays[0].shape)


def pow_tensor(x, y):
    """torch's x.pow(y) with a tensor exponent, on the CPU, for float32 or float64 arrays
    (broadcast to one shape; elements in C order, as a contiguous output is filled)."""
    x, y = np.broadcast_arrays(np.asarray(x), np.asarray(y))
    ftype = F32 if x.dtype == np.float32 else F64
    x, y = x.astype(ftype), y.astype(ftype)
    return _split(lambda a, b: _pow_vector(a, b, ftype),
                  lambda a, b: _pow_scalar(a, b, ftype), (x, y), np.dtype(ftype).itemsize)
