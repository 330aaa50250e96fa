"""F.pdist (and the distance functions) against torch: values, degenerate gradients, double backward and edge cases.
"""
import numpy as np
import pytest
from differential import catch, same, warnings_of
from opinfo import graph_names
from nn_helpers import F, _observe


RNG = np.random.default_rng(11)


def randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# ---------------------------------------------------------------- pdist
PDIST_ROWS = np.array([[1.0, 2, 3], [1, 0, 1], [2, 3, 3], [1, 2, 3], [-1, 0.5, 2]])


@pytest.mark.parametrize("p", [0, 0.5, 1, 1.5, 2, 3, float("inf")])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pdist_matches_torch(p, dtype):
    # the rows have equal rows, equal components and ties for the largest component
    same(lambda T: _observe(T, lambda T, x: F(T).pdist(x, p), PDIST_ROWS.astype(dtype)))
    x = randn(6, 4, dtype=dtype)
    same(lambda T: _observe(T, lambda T, t: T.pdist(t, p), x), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape", [(1, 3), (3, 0), (2, 1)])
def test_pdist_degenerate_gradients(shape):
    x = np.ones(shape, dtype=np.float32)
    same(lambda T: _observe(T, lambda T, t: F(T).pdist(t), x))


def test_pdist_double_backward_is_not_implemented_as_in_torch():
    x = randn(4, 3, dtype=np.float64)

    def scenario(T):
        t = T.tensor(x, requires_grad=True)
        (g,) = T.autograd.grad(F(T).pdist(t).sum(), t, create_graph=True)
        return g, graph_names(g.grad_fn), catch(lambda: g.sum().backward())
    same(scenario)


@pytest.mark.parametrize("make", [
    lambda T: F(T).pdist(T.zeros(2, 3, 4)),
    lambda T: F(T).pdist(T.zeros(4, 3), p=-1),
    lambda T: F(T).pdist(T.zeros(4, 3, dtype=T.int32)),
    lambda T: F(T).pdist(T.zeros(4, 3, dtype=T.float16)),
    lambda T: F(T).pdist(T.zeros(4, 3, dtype=T.bfloat16)),
    lambda T: F(T).pdist(T.zeros(4, 3, dtype=T.complex64)),
    lambda T: F(T).pdist(T.zeros(1, 3)),
    lambda T: F(T).pdist(T.zeros(0, 3)),
    lambda T: F(T).pdist(T.zeros(4, 0)),
])
def test_pdist_edge_cases(make):
    same(lambda T: catch(make, T))
