"""logaddexp, hypot, xlogy, copysign, lgamma, polygamma, ... against torch: values, dtypes,
gradients, node names, errors."""
import math

import numpy as np
import pytest
import torch

import ember
import types
from ember.ops import arithmetic as _arithmetic, pointwise_math as _pointwise_math
from ember.ops import special as _special_ops
import differential  # its same(); this file's own same() also passes the op namespace
# the ops this file tests, from the modules that hold them now (arithmetic, pointwise_math, special)
_PX_MODULES = (_arithmetic, _pointwise_math, _special_ops)
PX = types.SimpleNamespace(**{n: getattr(m, n) for m in _PX_MODULES for n in m.__all__},
                           __all__=[n for m in _PX_MODULES for n in m.__all__])
from ember.autograd import gradcheck, gradgradcheck
from differential import _to_plain, assert_same, catch
from differential import leaf_grads as _grads


def same(scenario, rtol=1e-5, atol=1e-6):
    """Run `scenario(T, F)` with (torch, torch) and (ember, the module under test) and compare;
    F is where the new ops are looked up (the lead adds them to ember's namespace later)."""
    expected = _to_plain(scenario(torch, torch))
    actual = _to_plain(scenario(ember, PX))
    assert_same(expected, actual, rtol, atol)


def data(shape, seed=0, low=-3.0, high=3.0):
    return np.random.default_rng(seed).uniform(low, high, shape)


BINARY = ["logaddexp", "logaddexp2", "hypot", "xlogy", "copysign", "nextafter", "ldexp"]
UNARY = ["lgamma", "digamma", "deg2rad", "rad2deg", "sinc", "angle"]
SHAPES = [((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((3, 1), (1, 5)), ((), ()), ((), (2, 3)),
          ((0, 3), (3,))]
# inputs where each op is smooth enough for finite differences
POSITIVE_ARGS = {"xlogy", "lgamma", "digamma"}


def binary_inputs(name, T, sa, sb, dtype, seed=0):
    a, b = data(sa, seed), data(sb, seed + 1)
    if name == "xlogy":
        b = np.abs(b) + 0.2
    if name == "ldexp":
        b = np.round(b)
    return T.tensor(a, dtype=dtype), T.tensor(b, dtype=dtype)


# ----------------------------------------------------------------------------- forward
@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_binary_forward(name, shapes, dtype):
    def scenario(T, F):
        a, b = binary_inputs(name, T, *shapes, getattr(T, dtype))
        r = getattr(F, name)(a, b)
        return r, getattr(a, name)(b)
    same(scenario, rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-6)


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("shape", [(3, 4), (), (2, 0), (5,)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "bool"])
def test_unary_forward(name, shape, dtype):
    def scenario(T, F):
        x = data(shape, 3) * (1 if dtype.startswith("float") else 3)
        if name in ("lgamma", "digamma") and shape == (5,):
            x = np.array([0.0, -0.0, -2.0, -1.5, 7.25])      # poles, signed zero, reflection
        t = T.tensor(x).to(getattr(T, dtype))
        return getattr(F, name)(t), getattr(t, name)()
    tol = {"float16": 2e-3, "float32": 1e-5}.get(dtype, 1e-5)
    same(scenario, rtol=tol, atol=tol if dtype == "float16" else 1e-6)


def test_special_values():
    def scenario(T, F):
        inf, nan = math.inf, math.nan
        x = T.tensor([0.0, 0.0, 0.0, 1.0, 2.0, -0.0])
        y = T.tensor([nan, 0.0, -1.0, 0.0, -1.0, 3.0])
        big = T.tensor([inf, -inf, 1e30, -1e30])
        return (F.xlogy(x, y), F.logaddexp(big, big), F.logaddexp2(big, big),
                F.hypot(big, big), F.copysign(x, y), F.heaviside(T.tensor([-1.0, 0.0, 2.0, nan]),
                                                                T.tensor([0.5])),
                F.angle(T.tensor([nan, -0.0, -2.0, 3.0])), F.sinc(T.tensor([0.0, 1.0, -2.5])),
                F.nextafter(T.tensor([0.0, 1.0]), T.tensor([1.0, 0.0])))
    same(scenario, rtol=0, atol=1e-7)


def test_nextafter_is_one_ulp():
    def scenario(T, F):
        x = T.tensor(data((50,), 5))
        return F.nextafter(x, x + 1) - x, F.nextafter(x.float(), T.tensor(-5.0)) - x.float()
    same(scenario, rtol=0, atol=0)


def test_xlogy_scalars_and_heaviside_int():
    def scenario(T, F):
        t = T.tensor(data((2, 3), 7)).abs() + 0.1
        i = T.tensor([[0, 1, 2], [3, 0, -1]])
        return (F.xlogy(t, 2.5), F.xlogy(2, t), F.xlogy(i, 3), F.xlogy(0.0, t),
                F.xlogy(t.half(), 2), F.copysign(i, -2), F.copysign(t, -1.5),
                F.heaviside(i, T.tensor([7])), F.heaviside(i > 0, T.tensor([True])),
                F.ldexp(i, i), F.ldexp(T.tensor([1.0]).half(), T.tensor([3])))
    same(scenario)


# ----------------------------------------------------------------------------- dtypes
@pytest.mark.parametrize("name", BINARY + ["heaviside"])
def test_binary_dtypes_and_errors(name):
    pairs = [("int64", "int64"), ("bool", "bool"), ("int32", "float32"), ("float16", "float32"),
             ("float32", "float64"), ("int64", "float64"), ("complex64", "complex64")]

    def scenario(T, F):
        out = []
        for da, db in pairs:
            a = T.tensor([1, 2, 0]).to(getattr(T, da))
            b = T.tensor([3, 0, 1]).to(getattr(T, db))
            r = catch(getattr(F, name), a, b)
            out.append(r.dtype if isinstance(r, T.Tensor) else r)
        return out
    same(scenario)


@pytest.mark.parametrize("name", [n for n in UNARY if n != "sinc"])    # sinc: below
def test_unary_complex(name):
    def scenario(T, F):
        return catch(getattr(F, name), T.tensor([1 + 2j, -1 - 1j, 0j]))
    same(scenario)


def test_sinc_complex():
    def scenario(T, F):
        z = T.tensor([1 + 2j, -1 - 1j, 0j, 0.5j], dtype=T.complex128, requires_grad=True)
        r = F.sinc(z)
        r.abs().sum().backward()
        return r, z.grad
    same(scenario, rtol=1e-10)


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2", "hypot", "nextafter", "ldexp",
                                  "heaviside"])
def test_tensor_only_errors(name):
    def scenario(T, F):
        t = T.tensor([1.0, 2.0])
        return (catch(getattr(F, name), t, 2), catch(getattr(F, name), 2.5, t),
                catch(getattr(F, name), T.ones(2), T.ones(3)))
    same(scenario)


def test_copysign_argument_errors():
    def scenario(T, F):
        return catch(F.copysign, 2, T.ones(2)), catch(F.copysign, T.ones(2), "a")
    same(scenario)


# ----------------------------------------------------------------------------- in place
@pytest.mark.parametrize("name", ["hypot_", "xlogy_", "copysign_", "nextafter_", "ldexp_",
                                  "heaviside_", "lgamma_", "digamma_", "deg2rad_", "rad2deg_",
                                  "sinc_"])
def test_inplace(name):
    unary = name[:-1] in UNARY

    def scenario(T, F):
        f = T.tensor([[0.5, 1.5, 2.0], [3.0, 0.25, 1.0]])
        g = T.tensor([1.0, 2.0, 3.0])
        x = f.clone()
        r = getattr(x, name)() if unary else getattr(x, name)(g)
        i = T.tensor([1, 2, 3])
        err = catch(getattr(i, name)) if unary else catch(getattr(i, name), i)
        # a leaf's clone that requires grad: the in-place op records its own node
        leaf = f.clone().requires_grad_()
        y = leaf * 1
        if name == "heaviside_":
            node = None
        else:
            z = getattr(y, name)() if unary else getattr(y, name)(g)
            z.sum().backward()
            node = (z.grad_fn.name(), leaf.grad)
        return r is x, x, err, node, x._version
    same(scenario)


def test_inplace_scalars_and_namespace():
    def scenario(T, F):
        x = T.tensor([1.0, 2.0, 0.0])
        x.xlogy_(2.0)
        y = T.tensor([1.0, -2.0, 0.0])
        y.copysign_(-1)
        z = T.tensor([30.0, 90.0])
        F.deg2rad_(z)
        s = T.tensor([0.0, 0.5])
        F.sinc_(s)
        return x, y, z, s, T.tensor([[1.0, 2.0]]).polygamma(1), T.tensor([2.5]).polygamma_(2)
    same(scenario)


# ----------------------------------------------------------------------------- gradients
@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((2, 3), (3,)), ((), (2,))])
def test_binary_backward(name, shapes):
    def scenario(T, F):
        a, b = binary_inputs(name, T, *shapes, T.float32, seed=11)
        a.requires_grad_()
        b.requires_grad_(name != "ldexp")
        r = getattr(F, name)(a, b)
        g = T.tensor(data(r.shape, 2), dtype=T.float32)
        r.backward(g)
        return r.grad_fn.name(), a.grad, b.grad
    same(scenario, rtol=1e-5, atol=1e-5)


def test_scalar_variant_nodes_and_grads():
    def scenario(T, F):
        t = T.tensor([[0.5, 2.0], [0.0, 3.0]], requires_grad=True)
        r1, r2, r3 = F.xlogy(t, 2.5), F.xlogy(2, t + 1), F.copysign(t, -2)
        (r1.sum() + r2.sum() + r3.sum()).backward()
        e = T.tensor([1.0, 2.0], requires_grad=True)
        r4 = F.ldexp(e, T.tensor([1, 3]))
        r4.sum().backward()
        return [r.grad_fn.name() for r in (r1, r2, r3, r4)], t.grad, e.grad
    same(scenario)


@pytest.mark.parametrize("name", UNARY + ["polygamma"])
def test_unary_backward(name):
    def scenario(T, F):
        x = T.tensor(data((3, 4), 13, 0.2, 4.0) if name in POSITIVE_ARGS | {"polygamma"}
                     else data((3, 4), 13), requires_grad=True)
        r = F.polygamma(1, x) if name == "polygamma" else getattr(F, name)(x)
        r.backward(T.ones_like(r) * 0.5)
        return r.grad_fn.name(), r, x.grad
    same(scenario, rtol=2e-5, atol=1e-5)


def test_angle_complex_backward():
    def scenario(T, F):
        z = T.tensor([1 + 2j, -1 - 1j, 0j, 3j], requires_grad=True)
        r = F.angle(z)
        r.sum().backward()
        return r.grad_fn.name(), r, z.grad
    same(scenario)


def test_xlogy_grad_at_zero():
    def scenario(T, F):
        a = T.tensor([0.0, 0.0, 2.0, 0.0, -1.0, 0.0, 0.0], requires_grad=True)
        b = T.tensor([0.5, -0.0, 0.0, math.inf, 0.0, -1.0, math.nan], requires_grad=True)
        F.xlogy(a, b).sum().backward()
        c = T.tensor([0.0, 1.0], requires_grad=True)
        F.xlogy(c, -1.0).sum().backward()
        d = T.tensor([0.0, 1.0], requires_grad=True)
        F.xlogy(d, 0.0).sum().backward()
        return a.grad, b.grad, c.grad, d.grad
    same(scenario)


def test_polygamma_accuracy():
    mpmath = pytest.importorskip("mpmath")
    x = data((30,), 43, 0.05, 80.0)
    for n in (1, 2, 3):
        want = np.array([float(mpmath.psi(n, v)) for v in x])
        got = PX.polygamma(n, ember.tensor(x)).numpy()
        np.testing.assert_allclose(got, want, rtol=5e-15)


def test_logaddexp_complex():
    def scenario(T, F):
        a = T.tensor([1 + 2j, -1 + 0.5j, 3 - 1j], requires_grad=True)
        b = T.tensor([0.5 - 1j, 2 + 3j, 3 + 1j], requires_grad=True)
        r = F.logaddexp(a, b)
        r.abs().sum().backward()
        return r, a.grad, b.grad, F.logaddexp(T.tensor([1 + 2j]), T.tensor([0.5]))
    same(scenario)


def test_polygamma_errors_and_dtypes():
    def scenario(T, F):
        f, i = T.ones(2), T.tensor([1, 2])
        return [catch(F.polygamma, -1, f), catch(F.polygamma, 1.5, f),
                catch(F.polygamma, 1, f + 0j), catch(F.polygamma, 0, f + 0j),
                catch(F.polygamma, 2, f + 0j), F.polygamma(1, i), catch(i.polygamma_, 1),
                F.polygamma(2, f.half()), F.polygamma(0, T.ones(2, requires_grad=True)).grad_fn.name()]
    same(scenario, rtol=1e-3)


def test_out_and_inplace_errors():
    def scenario(T, F):
        x = T.tensor([1.0, 2.0])
        o = T.empty(0, dtype=T.int64)
        o2 = T.empty(2)
        return (catch(F.hypot, x, x, out=o), catch(F.lgamma, x, out=o),
                F.logaddexp(x, x, out=o2), o2, F.sinc(x, out=T.empty(2, dtype=T.float64)),
                catch(x.heaviside_, T.tensor([1.0]).double()),
                catch(x.hypot_, T.ones(2, 2)),
                catch(lambda: F.hypot(x.requires_grad_(), x, out=T.empty(2))))
    same(scenario)


def test_heaviside_has_no_derivative():
    def scenario(T, F):
        a = T.tensor([1.0, 0.0, -1.0], requires_grad=True)
        r = F.heaviside(a, T.tensor([0.5]))
        return r.grad_fn.name(), r.requires_grad, catch(lambda: r.sum().backward())
    same(scenario)


def test_digamma_double_backward_node():
    def scenario(T, F):
        d = T.tensor([1.5, 3.0], requires_grad=True)
        g, = T.autograd.grad(F.digamma(d), d, T.ones(2), create_graph=True)
        gg, = T.autograd.grad(g.sum(), d)
        return g.grad_fn.name(), g.grad_fn.next_functions[1][0].name(), g, gg
    same(scenario, rtol=1e-5)


@pytest.mark.parametrize("name", BINARY)
def test_binary_gradcheck(name):
    a, b = binary_inputs(name, ember, (2, 3), (3,), ember.float64, seed=21)
    a.requires_grad_()
    b.requires_grad_(name not in ("ldexp", "copysign", "nextafter"))
    fn = getattr(PX, name)
    assert gradcheck(fn, (a, b))
    if name != "nextafter":            # nextafter's derivative is a constant: nothing to check
        assert gradgradcheck(fn, (a, b))


@pytest.mark.parametrize("name", UNARY + ["polygamma1", "polygamma2"])
def test_unary_gradcheck(name):
    low = 0.3 if name in POSITIVE_ARGS or name.startswith("polygamma") else -3.0
    x = ember.tensor(data((2, 3), 31, low, 4.0), requires_grad=True)
    fn = (lambda t: PX.polygamma(int(name[-1]), t)) if name.startswith("polygamma") \
        else getattr(PX, name)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_angle_complex_finite_differences():
    # (ember's gradcheck perturbs only real parts): the gradient of a real function of z is
    # dL/dRe(z) + i dL/dIm(z)
    z0 = np.array([1 + 2j, -1.5 - 0.5j, 0.3j])
    z = ember.tensor(z0, requires_grad=True)
    PX.angle(z).sum().backward()
    eps = 1e-7
    want = (np.angle(z0 + eps) - np.angle(z0 - eps)) / (2 * eps) + \
        1j * (np.angle(z0 + 1j * eps) - np.angle(z0 - 1j * eps)) / (2 * eps)
    np.testing.assert_allclose(z.grad.numpy(), want, rtol=1e-6)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_polygamma_values(n):
    def scenario(T, F):
        x = T.tensor(np.concatenate([data((20,), 41, 0.01, 60.0), [-0.5, -2.25, 1e-3]]))
        return F.polygamma(n, x), F.polygamma(0, x)
    same(scenario, rtol=1e-9, atol=0)     # (torch's own trigamma is off by ~1.5e-10 here)
    same(lambda T, F: F.polygamma(n, T.tensor(data((20,), 42, 0.01, 60.0)).float()), rtol=2e-6)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_low_precision(dtype):
    def scenario(T, F):
        dt = getattr(T, dtype)
        a, b = T.tensor(data((4, 3), 51)).to(dt), T.tensor(data((3,), 52)).to(dt)
        out = [getattr(F, n)(a.abs() + 0.5) for n in UNARY]
        out += [getattr(F, n)(a, b.abs() + 0.5) for n in BINARY]
        return out + [F.heaviside(a, b)]
    same(scenario, rtol=1e-2, atol=1e-2)


def test_exports_and_methods():
    for name in PX.__all__:
        assert getattr(torch, name) is not None and callable(getattr(PX, name))
    for base in BINARY + UNARY + ["heaviside", "polygamma"]:
        for name in (base, base + "_"):
            assert hasattr(ember.Tensor, name) == hasattr(torch.Tensor, name), name


# ----------------------------------------------------------------------------- gcd / lcm
def test_gcd_lcm():
    def f(T):
        a = T.tensor([4, 6, 0, -12, 7], dtype=T.int32)
        b = T.tensor([6, -4, 5, 18, 0])
        c = a.clone()
        c.gcd_(T.tensor([2, 2, 2, 2, 2], dtype=T.int32))
        d = b.clone()
        d.lcm_(T.tensor(3))
        return [T.gcd(a, b), T.lcm(a, b), a.gcd(a), a.lcm(T.tensor(4, dtype=T.int32)), c, d,
                T.lcm(T.tensor([0, 3], dtype=T.int8), T.tensor([5, 4], dtype=T.int8)),
                catch(T.gcd, T.tensor([1.0]), T.tensor([2.0])),
                catch(T.lcm, T.tensor([1]), T.tensor([2.0])),
                catch(T.gcd, T.tensor([True]), T.tensor([True]))]
    differential.same(f)


# ----------------------------------------------------------------------------- frexp / i0
def test_frexp():
    def f(T):
        x = T.tensor([0.0, 1.0, -3.5, 1e-3, 1e10, float("inf")], dtype=T.float32)
        m, e = T.frexp(x)
        out, node, grads = _grads(T, lambda T, v: v.frexp().mantissa, (5,))
        return [m, e, x.frexp().exponent, node, grads, out,
                catch(T.frexp, T.tensor([1, 2])), str(T.frexp(T.tensor([2.0]))),
                T.frexp(T.tensor([4.0], dtype=T.float64))[1]]
    differential.same(f)
