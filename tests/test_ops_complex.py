"""Complex-number ops against torch: real/imag/conj, polar, vdot, isreal and the complex cases of other ops.
"""
import pytest
from differential import catch, same, warnings_of


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
