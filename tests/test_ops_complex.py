"""Complex-number ops against torch: real/imag/conj, polar, vdot, isreal and the complex cases of other ops.
"""
import pytest
from differential import catch, same, warnings_of
from differential import grad_fn_name as _node, leaf_grads as _grads


NAN, INF = float("nan"), float("inf")


# ----------------------------------------------------------------------------- complex inputs
def _z(T):
    return T.tensor([1 + 2j, -3 + 0j, 0j, complex(NAN, 1)])


COMPLEX = {
    "softmax": lambda T: catch(T.softmax, _z(T), 0),
    "softmax_not_last_dim": lambda T: catch(T.softmax, _z(T).reshape(4, 1), 0),
    "log_softmax": lambda T: catch(T.log_softmax, _z(T), 0),
    "softmax_empty": lambda T: T.softmax(T.ones(0, dtype=T.complex64), 0),
    "nansum": lambda T: catch(T.nansum, _z(T)),
    "nanmean": lambda T: catch(T.nanmean, _z(T)),
    "signbit": lambda T: catch(T.signbit, _z(T)),
    "unique": lambda T: catch(T.unique, _z(T)),
    "unique_dim": lambda T: catch(T.unique, _z(T), dim=0),
    "unique_consecutive": lambda T: catch(T.unique_consecutive, _z(T)),
    "logcumsumexp": lambda T: T.logcumsumexp(T.tensor([1 + 2j, 1000 + 1j, -5 + 3j, 1000 - 1j]),
                                             0),
    "logcumsumexp_2d": lambda T: T.logcumsumexp(T.tensor([[1 + 2j, 3 + 1j], [-5 + 3j, 2 - 1j]],
                                                         dtype=T.complex128), 1),
    "logcumsumexp_grad": lambda T: (lambda x: (T.logcumsumexp(x, 0).abs().sum().backward(),
                                               x.grad.resolve_conj()))(
        T.tensor([1 + 2j, 3 + 1j, -5 + 3j, 2 - 1j], requires_grad=True)),
    "logcumsumexp_real_grad": lambda T: (lambda x: (T.logcumsumexp(x, 0).sum().backward(),
                                                    x.grad))(
        T.tensor([1., 3., -5.], requires_grad=True)),
}


@pytest.mark.parametrize("name", sorted(COMPLEX))
def test_complex(name):
    same(COMPLEX[name])


def test_conj_helpers_and_isreal():
    def f(T):
        x = T.tensor([1.0, 2.0])
        z = T.tensor([1 + 2j, 3 + 0j])
        out = [T.is_conj(x), T.is_neg(x), x.is_conj(), T.resolve_conj(x) is x,
               T.resolve_neg(x) is x, T.conj_physical(x), T.conj_physical(z), T.isreal(z),
               T.isreal(x), z.isreal(), x.conj_physical() is x]
        w = z.clone()
        w.conj_physical_()
        out.append(w)
        zr = z.clone().requires_grad_()
        c = T.conj_physical(zr)
        out.append(_node(c))
        return out
    same(f)


# ----------------------------------------------------------------------------- complex
def test_complex_and_polar():
    def f(T):
        out = []
        for op in (T.complex, T.polar):
            o, node, grads = _grads(T, lambda T, a, b: op(a, b), (3,), (3,))
            out += [o, node, grads]
        out.append(T.complex(T.tensor([1.0]), T.tensor([2.0])).dtype)
        out.append(catch(T.complex, T.tensor([1]), T.tensor([1])))
        out.append(catch(T.polar, T.tensor([1.0], dtype=T.float64), T.tensor([1.0])))
        out.append(T.complex(T.tensor([[1.0], [2.0]]), T.tensor([3.0, 4.0])))
        return out
    same(f)


def test_vdot():
    def f(T):
        o, node, grads = _grads(T, lambda T, a, b: T.vdot(a, b), (4,), (4,))
        a = T.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        b = T.tensor([2 - 1j, 1 + 1j], requires_grad=True)
        c = T.vdot(a, b)
        c.real.backward()
        return [o, node, grads, c, a.grad, b.grad, T.tensor([1.0, 2.0]).vdot(T.tensor([3.0, 4.0])),
                catch(T.vdot, T.ones(2), T.ones(2, dtype=T.float64)),
                catch(T.vdot, T.ones(2, 1), T.ones(2))]
    same(f)
