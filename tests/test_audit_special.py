"""Differential audit of torch.special edge cases against torch: vector_norm's dtype= checks
and its empty-dimension message, logit's eps clamping and gradient, polygamma's poles and
infinities, sinc in half precision, the argument errors of multigammaln / special.softmax, the
special kernels that have no float16 / bfloat16 version, and zeta's edge values."""
import math

import pytest

from differential import same, catch

INF, NAN = math.inf, math.nan


@pytest.mark.parametrize("dtype", ["int64", "bool", "float32", "float64", "float16", "bfloat16",
                                   "complex64", "complex128"])
@pytest.mark.parametrize("make", [
    lambda T: T.ones(3), lambda T: T.ones(3, dtype=T.float64), lambda T: T.ones(3, dtype=T.half),
    lambda T: T.ones(3, dtype=T.complex64), lambda T: T.zeros(3, 0)])
@pytest.mark.parametrize("fn", [lambda T: T.linalg.vector_norm, lambda T: T.linalg.norm,
                                lambda T: T.norm])
def test_vector_norm_dtype_argument(fn, make, dtype):
    same(lambda T: catch(fn(T), make(T), dtype=getattr(T, dtype)))


@pytest.mark.parametrize("dim", [-1, 1, (-1,), (1, -2), (-2, -1), (0, -1), None])
@pytest.mark.parametrize("ord", [-1, INF, -INF, -0.5])
def test_vector_norm_empty_dimension_message(ord, dim):
    same(lambda T: catch(T.linalg.vector_norm, T.zeros(3, 0), ord, dim=dim))
    same(lambda T: catch(T.linalg.vector_norm, T.zeros(0, 2, 0), ord, dim=dim))
    same(lambda T: catch(T.linalg.vector_norm, T.zeros(3, 0), ord, dim=dim, dtype=T.int32))


LOGIT_X = [0.3, 0.7, 0.5, 0.0, 1.0, -0.2, 1.2, 0.1, 0.9, NAN]


@pytest.mark.parametrize("eps", [None, -0.1, 0.0, 0.2, 0.5, 0.6, 1.0])
def test_logit_eps_value_and_gradient(eps):
    def f(T):
        x = T.tensor(LOGIT_X, requires_grad=True)
        y = T.special.logit(x, eps=eps)
        y.sum().backward()
        return y, x.grad, T.logit(T.tensor(LOGIT_X, dtype=T.float64), eps)
    same(f)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_polygamma_poles_and_infinities(n, dtype):
    vals = [INF, -INF, 0.0, -0.0, 1e-30, -1e-30, 1.0, -1.0, -2.0, -2.5, NAN, 1e30, -1e30, 3.7]
    same(lambda T: T.polygamma(n, T.tensor(vals, dtype=getattr(T, dtype))), rtol=1e-5)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_trigamma_low_precision_reflection(dtype):
    vals = [-1.0, -2.0, -0.5, -1e-30, -3.3, 0.0, 2.0]
    same(lambda T: T.polygamma(1, T.tensor(vals, dtype=getattr(T, dtype))))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_sinc_half_precision_in_float32(dtype):
    vals = [-1.0, 1.0, 0.0, -2.0, 0.5, 3.0, -3.0, 1e-4, 100.0, INF, NAN]
    same(lambda T: T.special.sinc(T.tensor(vals, dtype=getattr(T, dtype))), atol=0)


@pytest.mark.parametrize("p", [2.0, True, None, 0.5, 0, 2])
def test_multigammaln_p_type(p):
    same(lambda T: catch(T.special.multigammaln, T.tensor([3.0, 4.0]), p))
    same(lambda T: catch(T.mvlgamma, T.tensor([3.0, 4.0]), p))
    same(lambda T: catch(lambda: T.tensor([3.0, 4.0]).mvlgamma_(p)))


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_special_softmax_dim_required(fn):
    x = [[1.0, 2.0], [3.0, 5.0]]
    same(lambda T: catch(getattr(T.special, fn), T.tensor(x)))
    same(lambda T: catch(getattr(T.special, fn), T.tensor(x), dtype=T.float64))
    same(lambda T: catch(getattr(T.special, fn), T.tensor(x), None))
    same(lambda T: catch(getattr(T.special, fn), T.tensor(x), 1.0))
    same(lambda T: catch(getattr(T.special, fn), T.tensor(x), 1))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("fn", ["erfcx", "log_ndtr", "ndtri", "bessel_j0", "bessel_j1",
                                "spherical_bessel_j0", "entr", "i0e", "i1e", "ndtr"])
def test_special_kernels_half_precision(fn, dtype):
    same(lambda T: catch(getattr(T.special, fn),
                         T.tensor([-0.7, 0.1, 0.9, 2.5], dtype=getattr(T, dtype))), rtol=1e-2)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_zeta_half_precision(dtype):
    same(lambda T: catch(T.special.zeta, T.tensor([2.0, 3.0], dtype=getattr(T, dtype)), 1.5))
    same(lambda T: catch(T.special.zeta, T.tensor([2.0, 3.0], dtype=getattr(T, dtype)),
                         T.tensor(1.5, dtype=T.float64)))


@pytest.mark.parametrize("q", [-1.0, 0.0, -0.0, 1.0, -2.5, INF, -INF, 1e-300, 2.0, NAN, -3.0])
def test_zeta_edge_values(q):
    s = [0.0, 1.0, 2.0, 0.5, -1.0, INF, -INF, NAN, 3.0, 1.0001, -0.5, -2.0]
    same(lambda T: T.special.zeta(T.tensor(s, dtype=T.float64), T.tensor(q, dtype=T.float64)),
         rtol=1e-10)


def test_mvlgamma_method_counts_p_as_its_first_argument():
    def scenario(T):
        x = T.tensor([3.])
        return [catch(x.mvlgamma, 2.0), x.mvlgamma(2), catch(x.mvlgamma, True)]
    same(scenario)
