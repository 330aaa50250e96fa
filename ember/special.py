"""ember.special: the torch.special namespace.

Most entries are ember's existing ops under their SciPy-style names (expit is sigmoid, gammaln is
lgamma, multigammaln is mvlgamma, ...); the functions torch.* lacks are in ops/special.py,
ops/special_bessel.py and ops/special_polynomials.py.
"""
from .ops.special import (xlogy, polygamma, entr, erfcx, ndtr, ndtri, log_ndtr, xlog1py, zeta,
                          gammainc, gammaincc, multigammaln as _multigammaln)
from .ops.special_bessel import (i0, i0e, i1, i1e, spherical_bessel_j0, bessel_j0, bessel_j1,
                                 bessel_y0, bessel_y1, modified_bessel_i0, modified_bessel_i1,
                                 modified_bessel_k0, modified_bessel_k1, scaled_modified_bessel_k0,
                                 scaled_modified_bessel_k1, airy_ai)
from .ops.special_polynomials import (chebyshev_polynomial_t, chebyshev_polynomial_u,
                                      chebyshev_polynomial_v, chebyshev_polynomial_w,
                                      shifted_chebyshev_polynomial_t,
                                      shifted_chebyshev_polynomial_u,
                                      shifted_chebyshev_polynomial_v,
                                      shifted_chebyshev_polynomial_w, hermite_polynomial_h,
                                      hermite_polynomial_he, laguerre_polynomial_l,
                                      legendre_polynomial_p)
# the entries that are torch.* ops under their SciPy-style names
from .ops.pointwise import (erf, erfc, erfinv, exp2, expm1, log1p, logit, sigmoid as expit,
                            round as _round)
from .ops.pointwise_math import lgamma as gammaln, digamma, digamma as psi, sinc
from .ops.reduction import special_logsumexp as logsumexp
from .ops import softmax as _softmax
from .ops._pointwise_common import _out
from .ops._utils import REQUIRED, int_arg


def multigammaln(input, p, *, out=None):
    return _out(_multigammaln("special_multigammaln", input, p), out, "special_multigammaln")


def round(input, *, decimals=0, out=None):
    # always the decimals overload (RoundBackward1), as torch.special.round
    return _round(input, decimals=decimals, out=out)


def softmax(input, dim=REQUIRED, *, dtype=None):
    # (dim is required: unlike torch.softmax's, None is not accepted)
    return _softmax.softmax(input, int_arg("special_softmax", "dim", dim, 2), dtype)


def log_softmax(input, dim=REQUIRED, *, dtype=None):
    return _softmax.log_softmax(input, int_arg("special_log_softmax", "dim", dim, 2), dtype)


__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
           "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
           "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1",
           "gammainc", "gammaincc", "gammaln", "hermite_polynomial_h", "hermite_polynomial_he",
           "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l", "legendre_polynomial_p", "log1p",
           "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0",
           "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "multigammaln",
           "ndtr", "ndtri", "polygamma", "psi", "round", "scaled_modified_bessel_k0",
           "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t",
           "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0",
           "xlog1py", "xlogy", "zeta"]
