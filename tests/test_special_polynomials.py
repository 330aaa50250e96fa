"""The orthogonal polynomials of torch.special (Chebyshev T/U/V/W and shifted, Hermite H/He, Laguerre, Legendre) against torch: recurrences in float64 and float32, large n, degrees, NaN x, arguments, out= and grad.
"""
import numpy as np
import pytest
import torch
import ember
import ember.special
from differential import same, catch, _to_plain, assert_same


INF, NAN = float("inf"), float("nan")


CHEBYSHEV = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
             "chebyshev_polynomial_w"]


SHIFTED = ["shifted_" + name for name in CHEBYSHEV]


OTHER_POLYNOMIALS = ["hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
                     "legendre_polynomial_p"]


POLYNOMIALS = CHEBYSHEV + SHIFTED + OTHER_POLYNOMIALS


def _both(name, *args, dtype=torch.float64):
    """torch's and ember's results (as compared by `assert_same`) on the given arrays."""
    t = getattr(torch.special, name)(*[torch.tensor(a, dtype=dtype) for a in args])
    e = getattr(ember.special, name)(*[ember.tensor(a, dtype=getattr(ember, str(dtype)[6:]))
                                       for a in args])
    return _to_plain(t), _to_plain(e)


def _compare(name, *args, dtype=torch.float64, rtol=2e-15, atol=0.0):
    assert_same(*_both(name, *args, dtype=dtype), rtol=rtol, atol=max(atol, 1e-300))


# ----------------------------------------------------------------------------- polynomials
XS_POLY = np.concatenate([np.linspace(-2.5, 2.5, 101),
                          [-1.0, 1.0, 0.0, -0.0, 0.5, 1e-8, 1 - 1e-12, -1 + 1e-12, 0.99999,
                           1e-5, 1e30, -1e30, INF, -INF]])


SMALL_N = np.arange(-2, 21, dtype=np.float64)


def _grid(xs, ns):
    x, n = np.meshgrid(xs, ns)
    return x, n


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_recurrence_float64(name):
    # the recurrence with PyTorch's fused multiply-adds: equal to the last bit almost
    # everywhere; only the Chebyshev families' trigonometric form (n > 4..8 inside the
    # domain) differs, by NumPy's acos against C's (1 ulp, times n in the phase)
    x, n = _grid(XS_POLY, SMALL_N)
    if name in CHEBYSHEV + SHIFTED:
        _compare(name, x, n, rtol=1e-13, atol=1e-14)
    else:
        _compare(name, x, n, rtol=4e-16)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_recurrence_float32(name):
    # float32 arithmetic as torch's; the trigonometric form is rounded from float64 (C's
    # float acos differs from the correctly rounded one by an ulp: times n in the phase)
    x, n = _grid(XS_POLY.astype(np.float32), SMALL_N.astype(np.float32))
    if name in CHEBYSHEV + SHIFTED:
        _compare(name, x, n, dtype=torch.float32, rtol=2e-5, atol=2e-5)
    else:
        _compare(name, x, n, dtype=torch.float32, rtol=2e-7)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_large_n(name):
    # overflow to +-inf and then nan past it as torch's loop has it (|x| > 1), and the
    # trigonometric form for |x| < 1 (its phase error grows with n: absolute 1e-12 at n = 1000)
    xs = np.array([-2.0, -1.5, -1.0, -0.7, -0.3, 0.0, 0.2, 0.5, 0.9, 1.0, 1.1, 3.0, 1e10])
    x, n = _grid(xs, np.array([25.0, 64.0, 65.0, 100.0, 500.0, 1000.0]))
    _compare(name, x, n, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_degrees(name):
    # n truncated towards zero; negative, nan, inf and n beyond int64 give 0
    ns = np.array([-0.5, 2.9, -1.5, 3.5, NAN, INF, -INF, 1e20, -1e20, 0.0, 1.0, -1.0])
    x, n = _grid(np.array([0.3, -0.6, 1.7, 0.0, 1.0, -1.0]), ns)
    _compare(name, x, n, rtol=1e-14, atol=1e-15)
    _compare(name, x.astype(np.float32), n.astype(np.float32), dtype=torch.float32, rtol=1e-6)


@pytest.mark.parametrize("name", ["chebyshev_polynomial_t", "chebyshev_polynomial_v",
                                  "shifted_chebyshev_polynomial_t",
                                  "shifted_chebyshev_polynomial_v", "hermite_polynomial_h",
                                  "hermite_polynomial_he"])
def test_polynomial_nan_x(name):
    # (torch's U, W, Laguerre and Legendre kernels return an uninitialised value for a nan x
    # and n >= 2, whatever the neighbouring elements left behind: not compared)
    x, n = _grid(np.array([NAN]), np.arange(0, 6.0))
    _compare(name, x, n)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_arguments(name):
    def scenario(T):
        f = getattr(T.special, name)
        x = T.tensor([0.25, -0.5, 1.5])
        return [f(x, 3), f(x, 3.7), f(x, True), f(x, -2), f(0.5, T.tensor([1.0, 4.0])),
                f(2, T.tensor([1, 2])), f(x=x, n=T.tensor(2)),
                # broadcasting x against n
                f(T.tensor([0.5, 0.2]), T.tensor([[1], [2], [7]])),
                f(x, T.tensor([[0.0], [5.0]], dtype=T.float64)),
                # dtypes: integers and bools to float32, a 0-dim n does not widen x
                f(T.tensor([1, 2]), T.tensor([2, 3])), f(T.tensor([1, 2]), 2.5),
                f(x, T.tensor(2.0, dtype=T.float64)), f(x.double(), T.tensor(2)),
                f(x, T.tensor([2.0], dtype=T.float64)), f(T.tensor([True, False]), 3),
                f(x, T.tensor([1.0, 2.0, 3.0], dtype=T.float16)),
                catch(f, 2, 3), catch(f, 2.0, 3.0),
                catch(f, T.ones(2, dtype=T.float16), 2),
                catch(f, T.ones(2, dtype=T.bfloat16), T.ones(2, dtype=T.bfloat16)),
                catch(f, T.tensor([1, 2]), T.ones(2, dtype=T.float16)),
                catch(f, T.ones(2, dtype=T.complex64), 2),
                catch(f, T.ones(2), T.ones(2, dtype=T.complex64)),
                catch(f, T.ones(2), T.ones(3)),
                f(T.zeros(0), 3)]
    same(scenario)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_out_and_grad(name):
    def scenario(T):
        f = getattr(T.special, name)
        x = T.tensor([0.25, -0.5, 1.5])
        wide = T.empty(3, dtype=T.float64)
        r = f(x, 4, out=wide)
        resized = T.empty(0)
        f(x, T.tensor([[2.0], [3.0]]), out=resized)
        bad = catch(f, x, 2, out=T.empty(3, dtype=T.int64))
        narrow = catch(f, x.double(), 2, out=T.empty(3))
        g = T.tensor([0.5, 1.5], requires_grad=True)
        n = T.tensor([2.0, 3.0], requires_grad=True)
        y = f(g, n)
        return [r is wide, wide, resized, bad, narrow, y.requires_grad, y.grad_fn is None,
                catch(lambda: y.sum().backward())]
    same(scenario)
