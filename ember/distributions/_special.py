"""Float64 NumPy kernels the samplers' gradients need: the regularized incomplete beta function
and the implicit reparameterisation gradient of a Beta draw."""
import numpy as np

from ..ops import special as _sp

_BETAINC_EPS = 1e-15
_BETAINC_MAX_STEPS = 20000


def _lbeta(a, b):
    return _sp.lgamma(np, a) + _sp.lgamma(np, b) - _sp.lgamma(np, a + b)


def _betainc_fraction(a, b, x, y):
    """I_x(a, b) = x^a y^b / (a B(a, b)) / (1 + d1 / (1 + d2 / (1 + ...))) (y = 1 - x), by
    Lentz's method; converges quickly for x below (a + 1) / (a + b + 2)."""
    tiny = 1e-300

    def guard(v):
        return np.where(np.abs(v) < tiny, tiny, v)

    c = np.ones_like(x)
    d = 1.0 / guard(1.0 - (a + b) * x / (a + 1.0))
    h = d.copy()
    for m in range(1, _BETAINC_MAX_STEPS):
        even = m * (b - m) * x / ((a + 2 * m - 1.0) * (a + 2 * m))
        odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1.0))
        for coeff in (even, odd):
            d = 1.0 / guard(1.0 + coeff * d)
            c = guard(1.0 + coeff / c)
            h = h * d * c
        if not np.any(np.abs(d * c - 1.0) > _BETAINC_EPS):
            break
    return np.exp(a * np.log(x) + b * np.log(y) - _lbeta(a, b)) / a * h


def betainc64(a, b, x):
    """The regularized incomplete beta function I_x(a, b) for a, b > 0 and 0 < x < 1."""
    a, b, x = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (a, b, x)))
    y = 1.0 - x
    flip = x > (a + 1.0) / (a + b + 2.0)     # there I_x(a, b) = 1 - I_y(b, a) converges fast
    with np.errstate(all="ignore"):
        direct = _betainc_fraction(np.where(flip, b, a), np.where(flip, a, b),
                                   np.where(flip, y, x), np.where(flip, x, y))
    return np.where(flip, 1.0 - direct, direct)


def beta_sample_grad64(x, a, b):
    """d x / d a for a draw x of Beta(a, b), b held fixed: -(dI_x(a, b)/da) / pdf(x), the
    derivative of the CDF by a central difference."""
    x, a, b = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (x, a, b)))
    h = 1e-5 * np.maximum(a, 1e-3)
    with np.errstate(all="ignore"):
        dcdf_da = (betainc64(a + h, b, x) - betainc64(a - h, b, x)) / (2 * h)
        log_pdf = (a - 1) * np.log(x) + (b - 1) * np.log1p(-x) - _lbeta(a, b)
        return -dcdf_da / np.exp(log_pdf)
