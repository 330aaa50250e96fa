"""Gather/scatter ops against torch: index_reduce, put, masked_scatter, scatter_reduce and the *_scatter ops: values, gradients and errors.
"""
import warnings
import pytest
from differential import same, catch, warnings_of


def _node(t):
    return type(t.grad_fn).__name__ if t.grad_fn is not None else None


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
