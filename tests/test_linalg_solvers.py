"""inv, det, slogdet, logdet, solve, trace against torch: values, dtypes, gradients (incl. double
backward via gradgradcheck), graph node names and errors."""
import numpy as np
import pytest
import torch

import ember
from ember.autograd import gradcheck, gradgradcheck
from differential import same, catch
import warnings

RNG = np.random.default_rng(0)


def well_conditioned(shape, dtype=np.float64):
    """Random square matrices with a strong diagonal, so inverses are stable."""
    n = shape[-1]
    a = RNG.standard_normal(shape) + n * np.eye(n)
    return a.astype(dtype)


def pair(array, requires_grad=False):
    return (torch.tensor(array, requires_grad=requires_grad),
            ember.tensor(array, requires_grad=requires_grad))


def assert_close(e, t, tol):
    assert e.dtype.__repr__().replace("ember", "torch") == repr(t.dtype)
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


def error_of(fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except Exception as exc:    # noqa: BLE001 - the exception is the observation
        return type(exc).__name__, isinstance(exc, RuntimeError), str(exc)
    raise AssertionError("no exception raised")


SHAPES = [(1, 1), (3, 3), (2, 4, 4), (2, 3, 2, 2)]
DTYPES = [np.float32, np.float64]


def compare_unary(t_fn, e_fn, shape, dtype, node):
    a = well_conditioned(shape, dtype)
    ta, ea = pair(a, requires_grad=True)
    t_out, e_out = t_fn(ta), e_fn(ea)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    assert_close(e_out, t_out, tol)
    assert e_out.grad_fn.name() == t_out.grad_fn.name() == node
    g = RNG.standard_normal(t_out.shape).astype(dtype)
    t_out.backward(torch.tensor(g))
    e_out.backward(ember.tensor(g))
    assert_close(ea.grad, ta.grad, tol * 10)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["linalg.inv", "inverse", "method.inverse"])
def test_inv_matches_torch(name, shape, dtype):
    def fn(T, x):
        if name == "linalg.inv":
            return T.linalg.inv(x)
        return T.inverse(x) if name == "inverse" else x.inverse()
    compare_unary(lambda x: fn(torch, x), lambda x: fn(ember, x), shape, dtype,
                  "LinalgInvExBackward0")


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["linalg.det", "det", "method.det"])
def test_det_matches_torch(name, shape, dtype):
    def fn(T, x):
        if name == "linalg.det":
            return T.linalg.det(x)
        return T.det(x) if name == "det" else x.det()
    compare_unary(lambda x: fn(torch, x), lambda x: fn(ember, x), shape, dtype,
                  "LinalgDetBackward0")


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_slogdet_and_logdet_match_torch(shape, dtype):
    compare_unary(lambda x: torch.linalg.slogdet(x).logabsdet,
                  lambda x: ember.linalg.slogdet(x).logabsdet, shape, dtype,
                  "LinalgSlogdetBackward0")
    compare_unary(torch.logdet, ember.logdet, shape, dtype, "WhereBackward0")
    a = well_conditioned(shape, dtype)
    a[..., 0, :] *= -1                          # a negative determinant
    ta, ea = pair(a)
    t_sign, t_log = torch.linalg.slogdet(ta)
    e_out = ember.linalg.slogdet(ea)
    assert e_out.sign is e_out[0] and type(e_out).__name__ == "linalg_slogdet"
    assert type(ember.slogdet(ea)).__name__ == type(torch.slogdet(ta)).__name__ == "slogdet"
    assert_close(ember.slogdet(ea).logabsdet, torch.slogdet(ta).logabsdet, 1e-5)
    assert_close(e_out.sign, t_sign, 0)
    assert_close(e_out.logabsdet, t_log, 1e-5)
    assert_close(ember.logdet(ea), torch.logdet(ta), 1e-5)  # nan where det < 0


def test_singular_values_and_gradients():
    # exactly singular in every LAPACK (a zero column): a matrix made singular by dependent
    # rows comes out of MKL's LU with a det of rounding noise (-3e-16), which torch then uses
    s = np.array([[1., 0, 3], [2, 0, 6], [1, 0, 1]])
    ts, es = pair(s, requires_grad=True)
    assert_close(ember.det(es), torch.det(ts), 1e-12)
    torch.det(ts).backward()
    ember.det(es).backward()
    assert_close(es.grad, ts.grad, 0)           # PyTorch's zeros for a singular matrix
    assert_close(ember.logdet(es), torch.logdet(ts), 0)     # -inf
    t_sign, t_log = torch.linalg.slogdet(ts)
    e_sign, e_log = ember.linalg.slogdet(es)
    assert_close(e_sign, t_sign, 0)
    assert_close(e_log, t_log, 0)


SOLVE_SHAPES = [((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (2, 3)), ((2, 3, 3), (3,)),
                ((2, 3, 3), (3, 4)), ((1, 3, 3), (4, 3, 1)), ((2, 1, 3, 3), (5, 3, 2)),
                ((4, 4), (2, 4, 1))]


@pytest.mark.parametrize("shapes", SOLVE_SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_matches_torch(shapes, dtype):
    a = well_conditioned(shapes[0], dtype)
    b = RNG.standard_normal(shapes[1]).astype(dtype)
    (ta, ea), (tb, eb) = pair(a, True), pair(b, True)
    t_out, e_out = torch.linalg.solve(ta, tb), ember.linalg.solve(ea, eb)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    assert_close(e_out, t_out, tol)
    assert e_out.grad_fn.name() == t_out.grad_fn.name() == "LinalgSolveExBackward0"
    g = RNG.standard_normal(t_out.shape).astype(dtype)
    t_out.backward(torch.tensor(g))
    e_out.backward(ember.tensor(g))
    assert_close(ea.grad, ta.grad, tol * 10)
    assert_close(eb.grad, tb.grad, tol * 10)
    if len(shapes[1]) >= 2 and shapes[1] != shapes[0][:-1]:     # X A = B
        t_right = torch.linalg.solve(ta, tb.mT, left=False)
        e_right = ember.linalg.solve(ea, eb.mT, left=False)
        assert_close(e_right, t_right, tol)


@pytest.mark.parametrize("shape", [(3, 4), (4, 3), (1, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.float16])
def test_trace_matches_torch(shape, dtype):
    a = (RNG.standard_normal(shape) * 5).astype(dtype)
    ta, ea = pair(a)
    assert_close(ember.trace(ea), torch.trace(ta), 1e-3 if dtype == np.float16 else 1e-6)
    assert_close(ea.trace(), ta.trace(), 1e-3 if dtype == np.float16 else 1e-6)
    if dtype in (np.float32, np.float64):
        ta.requires_grad_(), ea.requires_grad_()
        t_out, e_out = torch.trace(ta), ember.trace(ea)
        assert e_out.grad_fn.name() == t_out.grad_fn.name() == "TraceBackward0"
        (t_out * 3).backward()
        (e_out * 3).backward()
        assert_close(ea.grad, ta.grad, 0)


# ---------------------------------------------------------------- gradcheck + gradgradcheck
def _double(shape):
    """float64 matrices A A^T + I: well conditioned, with a positive determinant (logdet)."""
    a = RNG.standard_normal(shape)
    return ember.tensor(a @ np.swapaxes(a, -1, -2) + np.eye(shape[-1]), requires_grad=True)


@pytest.mark.parametrize("fn", [ember.linalg.inv, ember.linalg.det, ember.logdet,
                                lambda x: ember.linalg.slogdet(x).logabsdet],
                         ids=["inv", "det", "logdet", "slogdet"])
@pytest.mark.parametrize("shape", [(3, 3), (2, 2, 2)])
def test_gradcheck_and_gradgradcheck(fn, shape):
    x = _double(shape)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("shapes", [((3, 3), (3,)), ((2, 3, 3), (3, 2)), ((1, 2, 2), (3, 2, 1))])
def test_solve_gradcheck_and_gradgradcheck(shapes):
    a = _double(shapes[0])
    b = ember.tensor(RNG.standard_normal(shapes[1]), requires_grad=True)
    assert gradcheck(ember.linalg.solve, (a, b))
    assert gradgradcheck(ember.linalg.solve, (a, b))


def test_trace_gradcheck_and_gradgradcheck():
    x = ember.tensor(RNG.standard_normal((3, 4)), requires_grad=True)
    assert gradcheck(lambda t: ember.trace(t) ** 2, (x,))
    assert gradgradcheck(lambda t: ember.trace(t) ** 2, (x,))


# ---------------------------------------------------------------- errors
SINGULAR = [
    [[1., 2, 3], [2, 4, 6], [1, 1, 1]],
    [[0., 0], [0, 0]],
    [[1., 2], [2, 4]],
    [[0., 1, 2], [0, 3, 4], [0, 5, 6]],
    [[[1., 0], [0, 1]], [[1., 1], [1, 1]]],
    [[[[1., 0], [0, 1]], [[2., 0], [0, 1]]], [[[1., 0], [0, 1]], [[0., 0], [0, 1]]]],
]


@pytest.mark.parametrize("matrix", SINGULAR)
def test_singular_errors(matrix):
    ta, ea = pair(np.array(matrix))
    e_error = error_of(ember.linalg.inv, ea)
    assert e_error == error_of(torch.linalg.inv, ta)
    assert e_error[0] == "_LinAlgError" and e_error[1]
    assert error_of(ember.inverse, ea) == error_of(torch.inverse, ta)
    b = np.ones(ta.shape[:-1])
    assert error_of(ember.linalg.solve, ea, ember.tensor(b)) == \
        error_of(torch.linalg.solve, ta, torch.tensor(b))
    with pytest.raises(ember.linalg.LinAlgError):
        ember.linalg.inv(ea)


def scalar(T, dtype, shape):
    return T.ones(shape, dtype=getattr(T, dtype))


@pytest.mark.parametrize("case", [
    ("linalg.inv", "float32", (2, 3)), ("linalg.inv", "float32", (3,)),
    ("linalg.inv", "int64", (3, 3)), ("linalg.inv", "float16", (3, 3)),
    ("linalg.inv", "bfloat16", (3, 3)),
    ("linalg.det", "float32", (2, 3)), ("linalg.det", "float32", (3,)),
    ("linalg.det", "int64", (3, 3)),
    ("linalg.det", "float16", (3, 3)), ("det", "bfloat16", (3, 3)),
    ("linalg.slogdet", "float32", (2, 3)), ("linalg.slogdet", "int64", (3, 3)),
    ("linalg.slogdet", "float16", (3, 3)), ("slogdet", "bfloat16", (3, 3)),
    ("logdet", "float32", (2, 3)), ("logdet", "int64", (3, 3)), ("logdet", "float16", (3, 3)),
    ("trace", "float32", (2, 3, 3)), ("trace", "float32", (3,)), ("trace", "bool", (2, 2)),
])
def test_argument_errors(case):
    name, dtype, shape = case

    def run(T):
        fn = T
        for part in name.split("."):
            fn = getattr(fn, part)
        return error_of(fn, scalar(T, dtype, shape))
    assert run(ember) == run(torch)


@pytest.mark.parametrize("shapes", [
    ((2, 3, 3), (4,)), ((2, 3, 3), (4, 2)), ((2, 3, 3), (5, 3, 2)), ((2, 3, 3), (1, 3)),
    ((2, 3), (2,)), ((3,), (3,)), ((2, 3, 3), (4, 3, 1)),
])
@pytest.mark.parametrize("left", [True, False])
def test_solve_shape_errors(shapes, left):
    def run(T):
        return error_of(T.linalg.solve, T.ones(shapes[0]), T.ones(shapes[1]), left=left)
    assert run(ember) == run(torch)


def test_solve_dtype_errors():
    for dtype in ("float16", "bfloat16"):
        assert error_of(ember.linalg.solve, scalar(ember, dtype, (2, 2)),
                        scalar(ember, dtype, (2,))) == \
            error_of(torch.linalg.solve, scalar(torch, dtype, (2, 2)), scalar(torch, dtype, (2,)))
    for T in (torch, ember):
        assert error_of(T.linalg.solve, T.ones(3, 3, dtype=T.float64), T.ones(3)) == (
            "RuntimeError", True, "linalg.solve: Expected A and B to have the same dtype, but "
            "found A of type Double and B of type Float instead")
    assert error_of(ember.linalg.solve, ember.ones(3, 3, dtype=ember.int64),
                    ember.ones(3, dtype=ember.int64)) == \
        error_of(torch.linalg.solve, torch.ones(3, 3, dtype=torch.int64),
                 torch.ones(3, dtype=torch.int64))


def test_linalg_error_class():
    assert issubclass(ember.linalg.LinAlgError, RuntimeError)
    assert ember.linalg.LinAlgError.__name__ == torch.linalg.LinAlgError.__name__
    with pytest.raises(ember.linalg.LinAlgError):
        ember.linalg.inv(ember.zeros(2, 2))


def test_empty_inverse():
    assert_close(ember.linalg.inv(ember.ones(0, 0)), torch.linalg.inv(torch.ones(0, 0)), 0)


# ---------------------------------------------------------------- diag
@pytest.mark.parametrize("shape", [(3,), (1,), (3, 4), (4, 3), (2, 2)])
@pytest.mark.parametrize("offset", [0, 1, -2, 5])
def test_diag_matches_torch(shape, offset):
    a = RNG.standard_normal(shape)
    ta, ea = pair(a, requires_grad=True)
    t_out, e_out = torch.diag(ta, offset), ember.diag(ea, offset)
    assert_close(e_out, t_out, 0)
    assert e_out.grad_fn.name() == t_out.grad_fn.name()
    assert_close(ea.diag(diagonal=offset), ta.diag(diagonal=offset), 0)
    g = RNG.standard_normal(t_out.shape)
    t_out.backward(torch.tensor(g))
    e_out.backward(ember.tensor(g))
    assert_close(ea.grad, ta.grad, 0)
    assert gradgradcheck(lambda x: ember.diag(x, offset) ** 2, (ea,))


def test_diag_integers_and_errors():
    assert_close(ember.diag(ember.arange(3)), torch.diag(torch.arange(3)), 0)
    for shape in [(2, 2, 2), ()]:
        assert error_of(ember.diag, ember.ones(shape)) == error_of(torch.diag, torch.ones(shape))


# ---------------------------------------------------------------- cholesky
def spd(shape, dtype=np.float64):
    a = RNG.standard_normal(shape)
    return (a @ np.swapaxes(a, -1, -2) + np.eye(shape[-1])).astype(dtype)


@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (2, 4, 4)])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
def test_linalg_cholesky_matches_torch(shape, dtype, upper):
    ta, ea = pair(spd(shape, dtype), requires_grad=True)
    t_out, e_out = torch.linalg.cholesky(ta, upper=upper), ember.linalg.cholesky(ea, upper=upper)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    assert_close(e_out, t_out, tol)
    assert e_out.grad_fn.name() == t_out.grad_fn.name() == "LinalgCholeskyExBackward0"
    g = RNG.standard_normal(t_out.shape).astype(dtype)
    t_out.backward(torch.tensor(g))
    e_out.backward(ember.tensor(g))
    assert_close(ea.grad, ta.grad, tol * 10)


def test_deprecated_cholesky_matches_torch():
    ta, ea = pair(spd((3, 3)), requires_grad=True)
    with pytest.warns(UserWarning) as e_warnings:
        e_out = ember.cholesky(ea)
    with pytest.warns(UserWarning) as t_warnings:
        t_out = torch.cholesky(ta)
    assert str(e_warnings[0].message) == str(t_warnings[0].message)
    assert_close(e_out, t_out, 1e-12)
    assert e_out.grad_fn.name() == t_out.grad_fn.name() == "CholeskyBackward0"
    assert_close(ea.cholesky(upper=True), ta.cholesky(upper=True), 1e-12)


@pytest.mark.parametrize("shape", [(3, 3), (2, 2, 2)])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_gradcheck_and_gradgradcheck(shape, upper):
    x = ember.tensor(spd(shape), requires_grad=True)

    def fn(a):      # through a symmetric input, as the derivative assumes
        return ember.linalg.cholesky((a + a.mT) / 2, upper=upper)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("matrix", [
    -np.eye(2), [[1., 2], [2, 1]], [[4., 2, 0], [2, 1, 0], [0, 0, 1]],
    [np.eye(2), -np.eye(2)], [[1., np.nan], [np.nan, 1]],
])
def test_cholesky_errors(matrix):
    ta, ea = pair(np.array(matrix, dtype=np.float64))
    e_error = error_of(ember.linalg.cholesky, ea)
    assert e_error == error_of(torch.linalg.cholesky, ta)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert error_of(ember.cholesky, ea) == error_of(torch.cholesky, ta)


@pytest.mark.parametrize("case", [("int64", (2, 2)), ("float16", (2, 2)), ("bfloat16", (2, 2)),
                                  ("float32", (2, 3)), ("float32", (3,))])
def test_cholesky_argument_errors(case):
    import warnings
    dtype, shape = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("linalg.cholesky", "cholesky"):
            def run(T):
                fn = T
                for part in name.split("."):
                    fn = getattr(fn, part)
                return error_of(fn, scalar(T, dtype, shape))
            assert run(ember) == run(torch)


# ---------------------------------------------------------------- cross
@pytest.mark.parametrize("shapes", [((3,), (3,), -1), ((2, 3), (2, 3), -1), ((3, 4), (3, 4), 0),
                                    ((4, 1, 3), (4, 5, 3), 2), ((1, 3, 2), (4, 3, 1), -2)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_cross_matches_torch(shapes, dtype):
    a = RNG.standard_normal(shapes[0]).astype(dtype)
    b = RNG.standard_normal(shapes[1]).astype(dtype)
    (ta, ea), (tb, eb) = pair(a, True), pair(b, True)
    dim = shapes[2]
    for t_out, e_out in [(torch.linalg.cross(ta, tb, dim=dim), ember.linalg.cross(ea, eb, dim=dim)),
                         (torch.cross(ta, tb, dim=dim), ember.cross(ea, eb, dim=dim)),
                         (ta.cross(tb, dim), ea.cross(eb, dim))]:
        assert_close(e_out, t_out, 1e-6)
        assert e_out.grad_fn.name() == t_out.grad_fn.name() == "LinalgCrossBackward0"
    g = RNG.standard_normal(t_out.shape).astype(dtype)
    t_out.backward(torch.tensor(g))
    e_out.backward(ember.tensor(g))
    assert_close(ea.grad, ta.grad, 1e-5)
    assert_close(eb.grad, tb.grad, 1e-5)
    if dtype == np.float64:
        assert gradgradcheck(lambda x, y: ember.linalg.cross(x, y, dim=dim), (ea, eb))


def test_cross_default_dim_and_integers():
    a, b = RNG.standard_normal((3, 2)), RNG.standard_normal((3, 2))
    with pytest.warns(UserWarning) as e_warnings:
        e_out = ember.cross(ember.tensor(a), ember.tensor(b))
    with pytest.warns(UserWarning) as t_warnings:
        t_out = torch.cross(torch.tensor(a), torch.tensor(b))
    assert str(e_warnings[0].message) == str(t_warnings[0].message)
    assert_close(e_out, t_out, 1e-12)
    assert_close(ember.linalg.cross(ember.arange(3), ember.arange(3) + 1),
                 torch.linalg.cross(torch.arange(3), torch.arange(3) + 1), 0)


@pytest.mark.parametrize("case", [
    ((3, 2), (3, 2), "float32", "float32", {}), ((4, 1, 3), (5, 3), "float32", "float32", {}),
    ((3,), (3,), "float32", "int64", {}), ((3,), (3,), "int64", "float32", {}),
    ((3,), (3,), "float32", "float32", {"dim": 1}), ((3,), (3,), "bool", "bool", {}),
    ((4, 2, 3), (5, 2, 3), "float32", "float32", {}), ((1, 3), (3, 1), "float32", "float32", {}),
])
def test_cross_errors(case):
    sa, sb, da, db, kwargs = case

    def run(T):
        return error_of(T.linalg.cross, scalar(T, da, sa), scalar(T, db, sb), **kwargs)
    assert run(ember) == run(torch)


# ---------------------------------------------------------------------------- complex cholesky
def _hpd(T, shape, seed=0):
    """A complex Hermitian positive-definite matrix (batch): B B^H + n I."""
    rng = np.random.default_rng(seed)
    b = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    n = shape[-1]
    return T.tensor(b @ np.conj(np.swapaxes(b, -1, -2)) + n * np.eye(n), requires_grad=True)


def _cotangent(T, shape, seed=1):
    rng = np.random.default_rng(seed)
    return T.tensor(rng.standard_normal(shape) + 1j * rng.standard_normal(shape))


def _deprecated_cholesky(T, A, upper):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # the once-only deprecation warning
        return T.cholesky(A, upper=upper)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("fn", ["linalg", "deprecated"])
def test_complex_cholesky_value_and_grad(shape, upper, fn):
    def scenario(T):
        A = _hpd(T, shape)
        L = (T.linalg.cholesky(A, upper=upper) if fn == "linalg"
             else _deprecated_cholesky(T, A, upper))
        G = _cotangent(T, shape)
        grad, = T.autograd.grad(L, A, G, create_graph=True)
        # double backward through the derivative (written in ember ops)
        grad2, = T.autograd.grad((grad * _cotangent(T, shape, 2).conj()).real.sum(), A)
        return L, grad, grad2, type(L.grad_fn).__name__
    same(scenario, rtol=1e-7, atol=1e-9)


def test_real_cholesky_grad_unchanged():
    def scenario(T):
        rng = np.random.default_rng(3)
        b = rng.standard_normal((2, 3, 3))
        A = T.tensor(b @ np.swapaxes(b, -1, -2) + 3 * np.eye(3), requires_grad=True)
        L = T.linalg.cholesky(A, upper=True)
        return T.autograd.grad(L, A, T.tensor(rng.standard_normal((2, 3, 3))))[0]
    same(scenario, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("upper", [False, True])
def test_complex_cholesky_gradcheck(upper):
    def scenario(T):
        rng = np.random.default_rng(4)
        B = T.tensor(rng.standard_normal((2, 3, 3)) + 1j * rng.standard_normal((2, 3, 3)),
                     requires_grad=True)

        def f(B):        # Hermitian positive-definite by construction, for any perturbation
            return T.linalg.cholesky(B @ B.mH + 3 * T.eye(3, dtype=B.dtype), upper=upper)
        return T.autograd.gradcheck(f, (B,)), T.autograd.gradgradcheck(f, (B,))
    assert same(scenario) == (True, True)


_COMPLEX_OPS = {   # the derivatives cholesky's relies on, and their neighbours in linalg_solvers
    "inv": lambda T, A, B: T.linalg.inv(A),
    "det": lambda T, A, B: T.linalg.det(A),
    "logabsdet": lambda T, A, B: T.linalg.slogdet(A)[1],
    "sign": lambda T, A, B: T.linalg.slogdet(A)[0],
    "slogdet": lambda T, A, B: T.slogdet(A)[0] * T.slogdet(A)[1],
    "logdet": lambda T, A, B: T.logdet(A),
    "solve": lambda T, A, B: T.linalg.solve(A, B),
    "solve_vector": lambda T, A, B: T.linalg.solve(A, B[..., 0]),
    "solve_right": lambda T, A, B: T.linalg.solve(A, B, left=False),
    "cross": lambda T, A, B: T.linalg.cross(A, B, dim=1),
}


@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
@pytest.mark.parametrize("fn", list(_COMPLEX_OPS))
def test_complex_linalg_grads(fn, dtype):
    def scenario(T):
        rng = np.random.default_rng(5)
        A, B = (T.tensor(rng.standard_normal((2, 3, 3)) + 1j * rng.standard_normal((2, 3, 3)),
                         dtype=getattr(T, dtype), requires_grad=True) for _ in range(2))
        out = _COMPLEX_OPS[fn](T, A, B)
        G = T.tensor(rng.standard_normal(tuple(out.shape)) +
                     (1j * rng.standard_normal(tuple(out.shape)) if out.is_complex() else 0),
                     dtype=out.dtype)
        grads = [g for g in T.autograd.grad(out, (A, B), G, create_graph=True,
                                            allow_unused=True) if g is not None]
        grads2 = T.autograd.grad(sum((g * g.conj()).real.sum() for g in grads), (A, B),
                                 allow_unused=True)
        # (torch answers right-hand solves with conjugate views)
        return [t.resolve_conj() if t is not None else None for t in [out, *grads, *grads2]]
    if dtype == "complex64":
        same(scenario, rtol=1e-3, atol=1e-4)
    else:
        same(scenario, rtol=1e-7, atol=1e-9)
