"""The autocast entry of the lower-precision ops (ops/hooks.py autocast_entry): a wrapper
written with the function's own signature, which casts under autocast and passes arguments
straight on outside it."""
import inspect

import numpy as np
import pytest

import ember
from ember.ops import hooks
from differential import same


def _entries():
    F = ember.nn.functional
    return {"linear": F.linear, "mm": ember.mm, "matmul": ember.matmul, "addmm": ember.addmm,
            "bmm": ember.bmm, "conv2d": F.conv2d}


@pytest.mark.parametrize("name", list(_entries()))
def test_the_entry_keeps_the_functions_signature(name):
    f = _entries()[name]
    assert hasattr(f, "__wrapped__")
    assert inspect.signature(f) == inspect.signature(f.__wrapped__)
    assert f.__name__ == f.__wrapped__.__name__ and f.__doc__ == f.__wrapped__.__doc__


def test_every_kind_of_parameter_is_passed_on():
    def f(a, b=2, /, c=3, *args, d, e=5, **kw):
        return a, b, c, args, d, e, kw
    g = hooks._exact_entry(f)
    assert inspect.signature(g) == inspect.signature(f)
    for args, kwargs in [((1,), dict(d=4)), ((1, 2, 3, 4, 5), dict(d=6, z=1)),
                         ((1, 2), dict(c=7, d=8, e=9))]:
        assert g(*args, **kwargs) == f(*args, **kwargs)
    with pytest.raises(TypeError):
        g(1)                                    # d is required
    with pytest.raises(TypeError):
        g(a=1, d=2)                             # a is positional-only


def test_a_function_without_a_python_signature_gets_the_generic_entry():
    g = hooks.autocast_entry(max)
    assert g(3, 5) == 5 and g([1, 4], key=lambda v: -v) == 1


def test_products_cast_under_autocast_and_not_outside():
    def scenario(T):
        rng = np.random.default_rng(0)
        x = T.tensor(rng.standard_normal((4, 3)).astype(np.float32))
        w = T.tensor(rng.standard_normal((5, 3)).astype(np.float32))
        b = T.tensor(rng.standard_normal(5).astype(np.float32))
        out = [T.nn.functional.linear(x, w, b).dtype, T.mm(x, w.t()).dtype]
        with T.autocast("cpu", dtype=T.bfloat16):
            out += [T.nn.functional.linear(x, w, bias=b).dtype,
                    T.nn.functional.linear(x, w, b).float(), T.mm(x, mat2=w.t()).dtype,
                    T.addmm(b, x, w.t(), beta=2).dtype]
        out.append(T.matmul(x, w.t()).dtype)
        return out
    same(scenario, rtol=1e-2, atol=1e-2)
