"""ember.special against torch.special: values (float32/float64, edges), dtypes, gradients and
node names, gradcheck, errors."""
import numpy as np
import pytest
import torch

import ember
import ember.special
from ember.autograd import gradcheck, gradgradcheck
from differential import same, catch, _to_plain, assert_same

INF, NAN = float("inf"), float("nan")
EDGES = [0.0, -0.0, 1e-300, -1e-300, 1e-8, -1e-8, 1e3, -1e3, 1e300, -1e300, INF, -INF, NAN,
         750.0, -750.0, 701.0, -701.0]
XS = np.concatenate([np.linspace(-40, 40, 321), EDGES])
PS = np.concatenate([np.linspace(0, 1, 401), [1e-300, 1e-20, 5e-324, 1 - 1e-16, 0.25, 0.75,
                                              -1.0, 2.0, NAN, 1e-310]])

UNARY = ["entr", "erfcx", "ndtr", "log_ndtr", "i0e", "i1e", "i1", "i0", "spherical_bessel_j0",
         "expit", "gammaln", "erf", "erfc", "exp2", "expm1", "log1p", "sinc", "round", "digamma",
         "psi"]
# float64 relative tolerance where torch's own kernel is less accurate than ember's (erfcx's
# reflection for x < -20 loses 5e-14 in torch) and the gamma functions' reflection formula
# (accurate in absolute terms) next to their zeros
LOOSE = {"erfcx": 1e-13, "gammaln": 1e-14, "digamma": 1e-13,
         "psi": 1e-13}
ABS64 = {"gammaln": 1e-15, "digamma": 1e-15, "psi": 1e-15}


def _compare(name, args, dtype, rtol, atol=0.0):
    t = getattr(torch.special, name)(*[torch.tensor(a, dtype=dtype) for a in args])
    e = getattr(ember.special, name)(*[ember.tensor(a, dtype=getattr(ember, str(dtype)[6:]))
                                       for a in args])
    assert_same(_to_plain(t), _to_plain(e), rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", UNARY)
def test_unary_float64_values(name):
    xs = XS[np.abs(XS) < 150] if name in ("digamma", "psi", "gammaln") else XS
    if name in ("digamma", "psi"):
        xs = xs[xs != np.round(xs)]          # (poles: torch's finite garbage there)
    _compare(name, [xs], torch.float64, LOOSE.get(name, 2e-15), atol=ABS64.get(name, 1e-300))


@pytest.mark.parametrize("name", UNARY)
def test_unary_float32_values(name):
    xs = XS[np.abs(XS) < 30] if name in ("digamma", "psi") else XS
    if name in ("digamma", "psi"):
        xs = xs[xs != np.round(xs)]
    # (torch's float32 digamma is computed in float32: 2e-7 off next to its zeros)
    atol = 1e-6 if name in ("digamma", "psi") else 1e-40
    if name == "ndtr":
        # torch's float32 ndtr is (1 + erf(x / sqrt 2)) / 2: in the left tail it cancels, so
        # its result is known to an ulp of 1 (2**-24, halved), and which way erf's last ulp
        # rounds there depends on the CPU's vector kernel (AVX2 and AVX-512 differ)
        atol = 2.0 ** -25
    _compare(name, [xs.astype(np.float32)], torch.float32, 1e-5, atol=atol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_ndtri_values(dtype):
    _compare("ndtri", [PS], dtype, 1e-5 if dtype == torch.float32 else 2e-15)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_binary_values(dtype):
    rtol = 1e-5 if dtype == torch.float32 else 2e-15
    q = np.abs(XS[np.isfinite(XS) & (np.abs(XS) < 1e5)]) + 0.01
    s = np.linspace(1.0001, 40, q.size)
    _compare("zeta", [s, q], dtype, rtol, atol=1e-40)
    # zeta's edges: the pole s = 1, s < 1, q poles, negative q, infinities, nan
    s = [1, 0.5, -1, INF, INF, INF, 2, 2, 3, 3, NAN, 2, 2, 4, 2, 2, 2, 2.5, 2, 2]
    q = [2, 2, 2, 2, 1, 0.5, 1, 0.5, 1e10, 0, 2, -1, -1.5, -7.5, -20.5, 1e-5, INF, -1.5, -INF, NAN]
    _compare("zeta", [s, q], dtype, rtol, atol=1e-40)
    x = np.concatenate([XS, [0.0, 0.0, 0.0, 0.0, 2.0]])
    y = np.concatenate([np.abs(XS) - 1, [-1.0, -2.0, NAN, INF, -1.0]])
    _compare("xlog1py", [x, y], dtype, rtol)
    _compare("xlogy", [x, y + 1], dtype, rtol)


def test_other_wrappers():
    def scenario(T):
        S = T.special
        x = T.tensor([[0.3, -1.2, 2.5], [4.0, 0.0, -3.0]], dtype=T.float64)
        return [S.logit(T.tensor([0.0, 0.2, 0.9, 1.0]), eps=1e-3), S.logit(T.tensor([0.2, 1.5])),
                S.softmax(x, 1), S.log_softmax(x, 0), S.softmax(T.tensor([1, 2]), 0,
                                                                  dtype=T.float64),
                S.logsumexp(x, 1), S.logsumexp(x, (0, 1), keepdim=True),
                S.multigammaln(x.abs() + 2, 3), S.polygamma(2, x.abs() + 0.5),
                S.round(T.tensor([1.25, 2.5, -0.5]), decimals=1), S.round(T.tensor([1.5, 2.5])),
                S.xlogy(2.0, T.tensor([3.0])), S.xlogy(T.tensor([3.0]), 2.0),
                S.erfinv(T.tensor([-1.0, -0.5, 0.0, 0.999, 1.0]))]
    same(scenario, rtol=1e-12, atol=1e-15)


def test_integer_and_bool_inputs_promote():
    def scenario(T):
        S = T.special
        i, b = T.tensor([0, 1, 2, 5]), T.tensor([True, False])
        out = [getattr(S, n)(i) for n in ("entr", "erfcx", "ndtr", "log_ndtr", "ndtri", "i0e",
                                          "i1e", "i1", "spherical_bessel_j0", "expit", "gammaln")]
        out += [S.i0e(b), S.i1e(b), S.entr(b), S.spherical_bessel_j0(b), S.ndtr(b),
                S.zeta(T.tensor([2, 3]), T.tensor([1, 2])), S.xlog1py(i, i), S.zeta(i + 2, 1.5),
                S.xlog1py(2, i), S.zeta(T.tensor([2.0], dtype=T.float64), T.tensor([1]))]
        with T.no_grad():
            out.append(S.ndtr(T.tensor([1.0], dtype=T.float16)))
        return out
    same(scenario, rtol=1e-6)


def test_out_argument():
    def scenario(T):
        S = T.special
        x = T.tensor([0.5, 1.5])
        outs = [T.empty(2) for _ in range(6)]
        S.entr(x, out=outs[0]); S.erfcx(x, out=outs[1]); S.ndtr(x, out=outs[2])
        S.zeta(x + 1, x, out=outs[3]); S.i1(x, out=outs[4]); S.multigammaln(x + 2, 2, out=outs[5])
        return outs
    same(scenario, rtol=1e-6)


def _graph(T, fn, *args):
    y = fn(*args)
    grads = T.autograd.grad(y.sum(), [a for a in args if isinstance(a, T.Tensor)
                                      and a.requires_grad])
    return type(y.grad_fn).__name__, list(grads)


GRAD_UNARY = ["entr", "erfcx", "log_ndtr", "i0e", "i1e", "i1", "ndtr", "expit", "gammaln", "psi",
              "i0", "erf", "sinc", "exp2", "round"]


@pytest.mark.parametrize("name", GRAD_UNARY)
def test_unary_gradients_and_nodes(name):
    def scenario(T):
        x = T.tensor([0.3, 1.5, -2.5, 0.0, 20.0, -30.0], dtype=T.float64, requires_grad=True)
        if name in ("entr", "gammaln", "psi"):
            x = T.tensor([0.3, 1.5, 0.0, 20.0], dtype=T.float64, requires_grad=True)
        return _graph(T, getattr(T.special, name), x)
    # torch's trigamma (psi's derivative) is 1e-10 off; ember's agrees with mpmath
    same(scenario, rtol=1e-9 if name == "psi" else 1e-12, atol=1e-15)


def test_ndtr_graph():
    def scenario(T):
        g, names = T.special.ndtr(T.tensor([0.5], requires_grad=True)).grad_fn, []
        while g is not None:
            names.append(type(g).__name__)
            g = g.next_functions[0][0] if g.next_functions else None
        return names
    assert same(scenario)[0] == "MulBackward1"


def test_ndtri_and_binary_gradients():
    def scenario(T):
        S = T.special
        p = T.tensor([0.01, 0.3, 0.5, 0.97, 1e-30], dtype=T.float64, requires_grad=True)
        x = T.tensor([0.0, 1.5, -0.5, 0.0], dtype=T.float64, requires_grad=True)
        y = T.tensor([-1.0, 2.0, 0.5, 3.0], dtype=T.float64, requires_grad=True)
        s = T.tensor([2.0, 3.5, 5.0, 2.0], dtype=T.float64)
        q = T.tensor([0.5, 1.5, 3.0, 10.0], dtype=T.float64, requires_grad=True)
        return [_graph(T, S.ndtri, p), _graph(T, S.xlog1py, x, y), _graph(T, S.xlog1py, 2.0, y),
                _graph(T, S.xlog1py, x, 2.0), _graph(T, S.xlog1py, x, -1.0),
                _graph(T, S.zeta, s, q), _graph(T, S.zeta, 2.0, q),
                type(S.zeta(q, 2.0).grad_fn).__name__]
    same(scenario, rtol=1e-12, atol=1e-15)


def test_not_differentiable():
    def scenario(T):
        x = T.tensor([0.5, 2.0], requires_grad=True)
        y = T.special.spherical_bessel_j0(x)
        z = T.special.zeta(x + 1, x.detach())         # the derivative in s is missing in torch
        return [y.requires_grad, y.grad_fn is None, type(z.grad_fn).__name__,
                catch(lambda: z.sum().backward())]
    same(scenario)


@pytest.mark.parametrize("name", ["entr", "erfcx", "log_ndtr", "i0e", "i1e", "ndtri"])
def test_gradcheck_unary(name):
    fn = getattr(ember.special, name)
    if name == "ndtri":
        x = ember.tensor([0.02, 0.3, 0.55, 0.9], dtype=ember.float64, requires_grad=True)
    elif name == "entr":
        x = ember.tensor([0.2, 1.3, 4.0], dtype=ember.float64, requires_grad=True)
    else:
        x = ember.tensor([-3.1, -0.4, 0.7, 2.2, 9.0], dtype=ember.float64, requires_grad=True)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_gradcheck_binary():
    x = ember.tensor([0.4, -1.3, 2.0], dtype=ember.float64, requires_grad=True)
    y = ember.tensor([0.5, 1.5, -0.3], dtype=ember.float64, requires_grad=True)
    assert gradcheck(ember.special.xlog1py, (x, y))
    assert gradgradcheck(ember.special.xlog1py, (x, y))
    s = ember.tensor([2.5, 3.0, 4.5], dtype=ember.float64)
    q = ember.tensor([0.7, 1.5, 4.0], dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda q: ember.special.zeta(s, q), (q,))
    assert gradgradcheck(lambda q: ember.special.zeta(s, q), (q,))


def test_errors():
    def scenario(T):
        S = T.special
        c = T.tensor([1 + 1j])
        return [catch(S.i1, c), catch(S.i1e, c), catch(S.i0e, c), catch(S.ndtr, c),
                catch(S.spherical_bessel_j0, c), catch(S.entr, c), catch(S.erfcx, c),
                catch(S.log_ndtr, c), catch(S.ndtri, c),
                catch(S.xlog1py, c, c), catch(S.zeta, c, c), catch(S.zeta, 2.0, 3.0),
                catch(S.polygamma, -1, T.tensor([1.0])), catch(S.multigammaln, T.tensor([3.0]), 0),
                catch(S.softmax, T.tensor([1, 2]), 0)]
    same(scenario)


def test_namespace():
    import ember.special as S
    assert S.__name__ == "ember.special" and ember.special is S
    # the aliases are distinct functions, as torch's (its TypeErrors name each its own way)
    same(lambda T: [T.special.expit is T.sigmoid, T.special.gammaln is T.lgamma,
                    T.special.psi is T.special.digamma])
    assert set(S.__all__) <= {n for n in dir(torch.special) if not n.startswith("_")}
    assert all(callable(getattr(S, n)) for n in S.__all__)


@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_gammainc_values(name):
    rng = np.random.default_rng(0)
    a = 10 ** rng.uniform(-4, 3, 2000)
    x = 10 ** rng.uniform(-5, 3.2, 2000)
    # torch switches to a uniform asymptotic expansion for a > 20 with x near a, good to only
    # about 1e-9 there (ember's series and continued fraction agree with mpmath to 1e-14)
    near = (a > 20) & (np.abs(x - a) < 0.3 * a)
    _compare(name, [a[~near], x[~near]], torch.float64, 1e-12, atol=1e-290)
    _compare(name, [a[near], x[near]], torch.float64, 1e-8)
    # torch computes float32 in float32, which loses about a * 1e-7 relative in x^a e^-x, and
    # some of its small Q are 1 - P (absolute accuracy)
    small = a < 10
    _compare(name, [a[small].astype(np.float32), x[small].astype(np.float32)], torch.float32,
             1e-4, atol=1e-7)
    edge_a = [0, 0, 0, 1, 1, -1, 1, 2, INF, INF, 1, NAN, 1, 0.5, 2, 3, 1e-3, 0.3]
    edge_x = [0, 1, INF, 0, -1, 1, INF, INF, 1, INF, NAN, 1, -0.0, 0, 0, 1e-320, 1e-8, 0.7]
    _compare(name, [edge_a, edge_x], torch.float64, 1e-13)


def test_gammainc_dtypes_gradients_errors():
    def scenario(T):
        S = T.special
        a = T.tensor([2.0, 3.0, 0.5], dtype=T.float64)
        x = T.tensor([1.0, 2.0, 4.0], dtype=T.float64, requires_grad=True)
        p, q = S.gammainc(a, x), S.gammaincc(a, x)
        a_grad = a.clone().requires_grad_()
        return [_graph(T, S.gammainc, a, x), _graph(T, S.gammaincc, a, x),
                S.gammainc(T.tensor([2.0]), T.tensor([2.0], dtype=T.float64)),
                S.gammaincc(T.tensor([2.0]), T.tensor([3])).dtype,
                S.gammainc(T.tensor([2.0], dtype=T.float16), T.tensor([2.0], dtype=T.float16)),
                catch(S.gammainc, T.tensor([2]), T.tensor([3])),
                catch(S.gammainc, T.tensor([2.0]), 3.0), catch(S.gammaincc, 2.0, T.tensor([3.0])),
                catch(lambda: S.gammainc(a_grad, x).sum().backward()),
                catch(lambda: S.gammaincc(a_grad, x).sum().backward()),
                type(p.grad_fn).__name__, type(q.grad_fn).__name__]
    same(scenario, rtol=1e-12, atol=1e-15)


def test_gammainc_gradcheck():
    a = ember.tensor([0.5, 2.0, 7.5], dtype=ember.float64)
    x = ember.tensor([0.3, 2.5, 9.0], dtype=ember.float64, requires_grad=True)
    for fn in (ember.special.gammainc, ember.special.gammaincc):
        assert gradcheck(lambda x: fn(a, x), (x,))
        assert gradgradcheck(lambda x: fn(a, x), (x,))


@pytest.mark.parametrize("name", ["bessel_j0", "bessel_j1"])
def test_bessel_j_values(name):
    xs = np.concatenate([np.linspace(-60, 60, 481), [0.0, -0.0, 1e-300, -1e-20, 24.999, 25.0,
                                                     1e3, 1e5, 1e10, 1e300, INF, -INF, NAN]])
    # torch 2.13's kernel is itself off by up to 4e-7 between 5 and 25 (checked against mpmath
    # below), so the comparison with it is absolute
    _compare(name, [xs], torch.float64, 1e-12, atol=5e-7)
    small = xs[np.abs(xs) < 1e3]
    _compare(name, [small.astype(np.float32)], torch.float32, 1e-5, atol=5e-7)
    # signs of zeros, exactly
    t = getattr(torch.special, name)(torch.tensor([0.0, -0.0], dtype=torch.float64)).numpy()
    e = getattr(ember.special, name)(ember.tensor([0.0, -0.0], dtype=ember.float64)).numpy()
    assert np.array_equal(np.signbit(t), np.signbit(e)) and np.array_equal(t, e)


@pytest.mark.parametrize("n", [0, 1])
def test_bessel_j_accuracy_against_mpmath(n):
    mpmath = pytest.importorskip("mpmath")      # (a dependency of torch's sympy)
    xs = [0.5, 2.404825557695773, 3.7, 5.05, 7.9, 13.3, 24.5, 25.5, 40.0, 123.4]
    got = getattr(ember.special, f"bessel_j{n}")(ember.tensor(xs, dtype=ember.float64)).numpy()
    want = np.array([float(mpmath.besselj(n, mpmath.mpf(x))) for x in xs])
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-16 * 4)


def test_bessel_j_dtypes_and_no_grad():
    def scenario(T):
        S = T.special
        x = T.tensor([0.5, 3.0], requires_grad=True)
        return [S.bessel_j0(T.tensor([1, 2])), S.bessel_j1(T.tensor([True])),
                S.bessel_j0(x).requires_grad, S.bessel_j1(x).grad_fn is None,
                catch(S.bessel_j0, T.tensor([1j])), catch(S.bessel_j1, T.tensor([1j]))]
    same(scenario, rtol=1e-6)
