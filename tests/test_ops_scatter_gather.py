"""Gather/scatter ops against torch: index_reduce, put, masked_scatter, scatter_reduce and the *_scatter ops: values, gradients and errors.
"""
import warnings
import pytest
from differential import same, catch, warnings_of
import numpy as np
# ----------------------------------------------------------------------------- property sweeps
from hypothesis import given, settings, strategies as st  # noqa: E402
from differential import grad_fn_name as _node, leaf_grads as _grads


# ----------------------------------------------------------------------------- index_reduce
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_values_and_gradients(reduce, include_self):
    def f(T):
        a = T.tensor([[1., 0, 3], [2, 2, 2], [5, 1, 0]], requires_grad=True)
        b = T.tensor([[2., 0, 3], [2, 4, 1], [0, 1, 2], [1, 1, 1]], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = T.index_reduce(a, 0, T.tensor([0, 0, 2, 1]), b, reduce, include_self=include_self)
        (r * T.arange(9.).reshape(3, 3)).sum().backward()
        return r, a.grad, b.grad, _node(r)
    same(f)


def test_index_reduce_forms_and_errors():
    def f(T):
        x, s, i = T.ones(3, 4), T.arange(8.).reshape(2, 4), T.tensor([0, 2])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outs = [x.index_reduce(0, i, s, "prod"),
                    x.index_reduce(1, T.tensor([0, 0, 1]), T.arange(9.).reshape(3, 3), "amax"),
                    T.ones(3, dtype=T.int64).index_reduce(0, i, T.tensor([5, 7]), "mean"),
                    T.tensor(2.).index_reduce(0, T.tensor([0]), T.tensor(3.), "prod"),
                    x.clone().index_reduce_(0, i, s, "amin"),
                    x.index_reduce(0, T.tensor([0, 0], dtype=T.int32), s, "amin",
                                   include_self=False)]
            errs = [catch(f) for f in [
                lambda: x.index_reduce(0, i, s, "sum"), lambda: x.index_reduce(0, i.float(), s, "prod"),
                lambda: x.index_reduce(0, i, s.double(), "prod"),
                lambda: x.index_reduce(0, T.tensor([0, 5]), s, "prod"),
                lambda: x.index_reduce(0, i, T.ones(3, 4), "prod"),
                lambda: x.index_reduce(0, i[None], s, "prod"), lambda: x.index_reduce(2, i, s, "prod"),
                lambda: x.index_reduce(0, i, T.ones(2, 5), "prod"),
                lambda: x.index_reduce(0, T.tensor([0, -1]), s, "amin"),
                lambda: T.ones(3, requires_grad=True).index_reduce_(0, i, T.ones(2), "amin")]]
        return outs, errs
    same(f)


def test_as_strided_scatter():
    def f(T):
        x = T.zeros(3, 4, requires_grad=True)
        src = T.arange(4.).reshape(2, 2).requires_grad_()
        y = T.as_strided_scatter(x, src, (2, 2), (1, 2), 1)
        z = x.detach().as_strided_scatter(src.detach()[0], (2,), (3,))
        (y * T.arange(12.).reshape(3, 4)).sum().backward()
        return (y, _node(y), z, x.grad, src.grad,
                catch(T.as_strided_scatter, x, T.ones(3), (2, 2), (1, 2)),
                catch(T.as_strided_scatter, x, T.ones(2, 2), (2, 2), (1, 20)))
    same(f)


# ----------------------------------------------------------------------------- put
@pytest.mark.parametrize("accumulate", [False, True])
def test_put(accumulate):
    def f(T):
        idx = T.tensor([[0, -1], [2, 2]])
        o, node, grads = _grads(T, lambda T, a, s: T.put(a * 1, idx, s, accumulate),
                                (2, 3), (2, 2))
        z = T.zeros(2, 3)
        v = int(z._version)
        z.put_(idx, T.tensor([[1.0, 2.0], [3.0, 4.0]]), accumulate=accumulate)
        return [o, node, grads, z, int(z._version) - v,
                T.arange(4.0).put(T.tensor([1]), T.tensor([9.0]))]
    same(f)


def test_put_errors():
    def f(T):
        z = T.zeros(3)
        return [catch(T.put, z, T.tensor([5]), T.tensor([1.0])),
                catch(T.put, z, T.tensor([1], dtype=T.int32), T.tensor([1.0])),
                catch(T.put, z, T.tensor([1]), T.tensor([1.0, 2.0])),
                catch(T.put, z, T.tensor([1]), T.tensor([1.0], dtype=T.float64))]
    same(f)


# ----------------------------------------------------------------------------- masked_scatter
def test_masked_scatter():
    def f(T):
        mask = T.tensor([[True, False, True], [False, True, False]])
        o, node, grads = _grads(T, lambda T, a, s: T.masked_scatter(a, mask, s),
                                (2, 3), (7,))
        o2, node2, grads2 = _grads(T, lambda T, a, s: a.masked_scatter(
            T.tensor([True, False, True]), s), (2, 3), (2, 3))
        z = T.zeros(2, 3)
        v = int(z._version)
        z.masked_scatter_(mask, T.arange(6.0).view(2, 3))
        return [o, node, grads, o2, node2, grads2, z, int(z._version) - v,
                catch(T.masked_scatter, T.zeros(3), T.tensor([True, True, True]), T.ones(2)),
                catch(T.masked_scatter, T.zeros(3), T.tensor([1, 0, 1]), T.ones(3))]
    same(f)


# ----------------------------------------------------------------------------- scatter_reduce
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(reduce, include_self):
    def f(T):
        index = T.tensor([[0, 1, 0, 2], [1, 1, 0, 0]])
        self_values = [[1.0, -2.0, 3.0, 0.5], [2.0, 2.0, -1.0, 4.0], [0.0, 1.5, 2.0, 2.0]]
        src_values = [[3.0, -2.0, 0.0, 1.0], [2.0, 4.0, 4.0, -1.0]]
        o, node, grads = _grads(T, lambda T, a, s: a.scatter_reduce(
            0, index, s, reduce, include_self=include_self), self_values, src_values)
        ints = T.tensor([1, 2, 3]).scatter_reduce(0, T.tensor([0, 0, 1]), T.tensor([4, 5, 7]),
                                                  reduce, include_self=include_self)
        z = T.tensor(self_values)
        z.scatter_reduce_(1, T.tensor([[0, 0], [1, 3], [2, 2]]),
                          T.tensor([[5.0, 6.0], [7.0, 8.0], [1.0, 2.0]]), reduce,
                          include_self=include_self)
        return [o, node, grads, ints, z]
    same(f)


def test_scatter_reduce_prod_with_zeros_and_errors():
    def f(T):
        index = T.tensor([0, 0, 1, 1, 2])
        o, node, grads = _grads(T, lambda T, a, s: T.scatter_reduce(
            a, 0, index, s, "prod"), [2.0, 0.0, 3.0], [0.0, 4.0, 0.0, 0.0, 5.0])
        x = T.zeros(3)
        return [o, grads, catch(T.scatter_reduce, x, 0, T.tensor([0]), T.ones(1), "foo"),
                catch(T.scatter_reduce, x, 0, T.tensor([0]), T.ones(1, dtype=T.float64),
                      "sum")]
    same(f)


# ----------------------------------------------------------------------------- *_scatter
def test_select_slice_diagonal_scatter():
    def f(T):
        out = []
        cases = [
            (lambda T, a, s: T.select_scatter(a, s, 0, -1), (3, 4), (4,)),
            (lambda T, a, s: a.select_scatter(s, 1, 2), (3, 4), (3,)),
            (lambda T, a, s: T.slice_scatter(a, s, 1, 1, 4, 2), (3, 4), (3, 2)),
            (lambda T, a, s: a.slice_scatter(s, start=-2), (3, 4), (2, 4)),
            (lambda T, a, s: T.diagonal_scatter(a, s, 1), (3, 4), (3,)),
            (lambda T, a, s: a.diagonal_scatter(s, -1, 1, 0), (3, 4), (3,)),
            (lambda T, a, s: T.diagonal_scatter(a, s, -1), (3, 4), (2,)),
        ]
        for fn, *shapes in cases:
            out += list(_grads(T, fn, *shapes))
        z = T.zeros(2, 3)
        out.append(T.select_scatter(z, T.ones(3, dtype=T.float64), 0, 0))
        out.append(catch(T.select_scatter, z, T.ones(2), 0, 0))
        out.append(catch(T.slice_scatter, T.zeros(4, 3), T.zeros(2, 3), 0, 1, 2))
        out.append(catch(T.diagonal_scatter, z, T.zeros(3)))
        return out
    same(f)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 4), st.integers(1, 5), st.integers(1, 4),
       st.sampled_from(["sum", "prod", "mean", "amax", "amin"]), st.booleans(),
       st.integers(0, 2 ** 31 - 1))
def test_scatter_reduce_sweep(rows, cols, src_rows, reduce, include_self, seed):
    rng = np.random.default_rng(seed)
    index = rng.integers(0, rows, (src_rows, cols))
    self_values = rng.integers(-3, 4, (rows, cols)).astype(float)     # ties and zeros happen
    src_values = rng.integers(-3, 4, (src_rows, cols)).astype(float)
    ints = rng.integers(-9, 10, (rows, cols))

    def f(T):
        o, node, grads = _grads(T, lambda T, a, s: a.scatter_reduce(
            0, T.tensor(index), s, reduce, include_self=include_self), self_values, src_values)
        i = T.tensor(ints).scatter_reduce(0, T.tensor(index), T.tensor(ints[:src_rows] if
                                          src_rows <= rows else ints[[0] * src_rows]),
                                          reduce, include_self=include_self)
        return [o, grads, i]
    same(f, rtol=1e-9, atol=1e-12)
