"""The orthogonal polynomials of torch.special: Chebyshev (and shifted), Hermite, Laguerre,
Legendre."""
import numpy as np

from ._pointwise_common import _quiet, unsupported
from .creation import _fused_multiply_add
from .special import _binary, _no_half


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
        with _quiet(xp):
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
