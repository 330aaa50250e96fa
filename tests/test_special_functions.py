"""ember.ops.special (sigmoid, erf, erfc, erfinv, lgamma, digamma) against PyTorch and mpmath.

Tolerances reached (float64, against mpmath at 50 digits, see ACCURACY_ULPS):
    sigmoid, erf, digamma (x > 0) <= 2 ulp; erfinv, lgamma (x > 0) <= 3 ulp; erfc <= 4 ulp.
    lgamma and digamma for x < 0 (reflection formula): absolute error <= 3 eps times the size of
    the reflection terms, which is not relative accuracy next to their negative zeros.
Against PyTorch, float64: rtol 1e-15 (1.5e-15 for erfc) plus, where PyTorch itself is only
accurate in absolute terms (digamma for x < 10, both functions for x < 0), an allowance of a few
eps times the size of the terms PyTorch adds up. float32: 2 ulp (plus the same allowance in
float32 eps). float16 / bfloat16: every finite and non-finite value of the type, within 1 ulp of
PyTorch's float32 result rounded to the type.
"""
import math
import warnings

import ml_dtypes
import mpmath
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ember.ops import special
from differential import same, catch, warnings_of
from differential import grad_fn_name as _node

NAMES = ["sigmoid", "erf", "erfc", "erfinv", "lgamma", "digamma"]
BF16 = np.dtype(ml_dtypes.bfloat16)
EPS64 = float(np.finfo(np.float64).eps)
EPS32 = float(np.finfo(np.float32).eps)
TINY64 = 4 * 2.0 ** -1074          # a few subnormal steps, for results that underflow
INF, NAN = math.inf, math.nan


def rng():
    """A freshly seeded generator, so every test sees the same samples however it is run."""
    return np.random.default_rng(20240607)

MPMATH = {
    "sigmoid": lambda v: 1 / (1 + mpmath.exp(-v)),
    "erf": mpmath.erf,
    "erfc": mpmath.erfc,
    "erfinv": mpmath.erfinv,
    "lgamma": lambda v: mpmath.re(mpmath.loggamma(v)),
    "digamma": mpmath.digamma,
}


# ----------------------------------------------------------------------------- helpers
def ours(name, x):
    return getattr(special, name)(np, x)


def torch_of(name, x, dtype=None):
    """PyTorch's result on x, as a NumPy array of x's dtype (computed in `dtype` if given)."""
    x = np.asarray(x)
    t = torch.from_numpy(x.astype(np.float32) if x.dtype == BF16 else x)
    if dtype is not None:
        t = t.to(dtype)
    elif x.dtype == BF16:
        t = t.to(torch.bfloat16)
    y = getattr(torch, name)(t)
    if y.dtype == torch.bfloat16:
        y = y.float()
    return y.numpy().astype(x.dtype)


def mp_of(name, x):
    with mpmath.workdps(50):
        return np.array([float(MPMATH[name](mpmath.mpf(float(v)))) for v in np.ravel(x)])


def ulp_distance(a, b):
    """How many representable values of the (common) dtype lie between a and b, elementwise."""
    assert a.dtype == b.dtype
    ints = {8: np.int64, 4: np.int32, 2: np.int16}[a.dtype.itemsize]
    low = np.iinfo(ints).min

    def key(v):                       # float bits -> integers in the same order as the floats
        i = v.view(ints).astype(np.int64)
        return np.where(i < 0, low - i, i)
    ka, kb = key(a), key(b)
    same_side = (ka >= 0) == (kb >= 0)
    with np.errstate(over="ignore"):
        close = np.abs(ka - kb).astype(np.float64)
    return np.where(same_side, close, np.abs(ka.astype(np.float64)) + np.abs(kb.astype(np.float64)))


def _flat(*arrays):
    return [np.ravel(np.asarray(a)) for a in arrays]


def assert_same_specials(actual, expected, x):
    """nan where expected is nan, identical infinities (with sign) where expected is infinite."""
    actual, expected, x = _flat(actual, expected, x)
    nan_mismatch = np.isnan(actual) != np.isnan(expected)
    assert not nan_mismatch.any(), f"nan mismatch at x={x[nan_mismatch][:5]}: " \
                                   f"{actual[nan_mismatch][:5]} vs {expected[nan_mismatch][:5]}"
    bad = (np.isinf(expected) | np.isinf(actual)) & (actual != expected)
    assert not bad.any(), \
        f"inf mismatch at x={x[bad][:5]}: {actual[bad][:5]} vs {expected[bad][:5]}"


def assert_within(actual, expected, allowed, x, what):
    """|actual - expected| <= allowed on finite entries, plus identical specials."""
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    assert_same_specials(actual, expected, x)
    allowed = np.broadcast_to(allowed, np.shape(x))
    actual, expected, allowed, x = _flat(actual, expected, allowed, x)
    err = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
    bad = np.isfinite(expected) & ~(err <= allowed)
    if bad.any():
        i = int(np.argmax(np.where(bad, err - allowed, -np.inf)))
        raise AssertionError(f"{what}: x={x[i]!r} got {actual[i]!r} expected {expected[i]!r} "
                             f"(error {err[i]:.3g}, allowed {allowed[i]:.3g}; {bad.sum()} bad)")


def assert_ulps(actual, expected, ulps, x, what, extra=0.0):
    """Within `ulps` representable steps of expected, or within an absolute `extra`."""
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    assert_same_specials(actual, expected, x)
    extra = np.broadcast_to(extra, np.shape(x))
    actual, expected, extra, x = _flat(actual, expected, extra, x)
    finite = np.isfinite(expected)
    dist = np.where(finite, ulp_distance(actual, expected), 0.0)
    err = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
    bad = finite & (dist > ulps) & ~(err <= extra)
    if bad.any():
        i = int(np.argmax(np.where(bad, dist, -1)))
        raise AssertionError(f"{what}: x={x[i]!r} got {actual[i]!r} expected "
                             f"{expected[i]!r}: {dist[i]:.0f} ulps ({bad.sum()} bad)")


def frac_torch(x):
    """The reduced argument PyTorch's reflection uses: modf(x)[0], in (-1, 0] for x < 0."""
    return np.modf(x)[0]


def reflection_scale(name, x, torch_error=False):
    """Size of the terms the reflection formula adds up, for x < 0 (0 elsewhere).

    lgamma(x) = log(pi) - log|sin(pi x)| - lgamma(1 - x);
    digamma(x) = digamma(1 - x) - pi cot(pi x). With torch_error, digamma's allowance grows like
    PyTorch's own error, which computes cot(pi r) from r = modf(x) in (-1, 0], so that
    pi * r is rounded where cot is steep: an error of eps pi^2 |r| / sin^2(pi r).
    """
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        neg = (x < 0) & np.isfinite(x)
        xs = np.where(neg, x, -0.5)
        one_minus = torch_of(name, 1.0 - xs)
        r = xs - np.round(xs)
        if name == "lgamma":
            log_sin = np.log(np.abs(np.sin(np.pi * r)))
            scale = np.abs(one_minus) + np.abs(log_sin) + math.log(math.pi)
        else:
            scale = np.abs(one_minus) + np.abs(np.pi / np.tan(np.pi * r)) + 1.0
            if torch_error:
                rt = frac_torch(xs)
                scale = scale + np.pi ** 2 * np.abs(rt) / np.sin(np.pi * rt) ** 2
        return np.where(neg & np.isfinite(scale), scale, 0.0)


def digamma_positive_scale(x):
    """PyTorch's digamma adds 1/x + 1/(x+1) + ... up to x >= 10, then ~log(10): its absolute
    error is a few eps times 1/x + log(10) for 0 < x < 10."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        return np.where((x > 0) & (x < 10), 1.0 / x + math.log(10.0), 0.0)


def allowed64(name, x, expected):
    """Allowed |ember - torch| in float64."""
    rel = {"erfc": 1.5e-15}.get(name, 1e-15) * np.abs(expected)
    rel = np.where(np.isfinite(rel), rel, 0.0) + TINY64
    if name == "lgamma":
        rel = rel + 4 * EPS64 * reflection_scale(name, x)
    if name == "digamma":
        rel = rel + 6 * EPS64 * digamma_positive_scale(x)
        rel = rel + 4 * EPS64 * reflection_scale(name, x, torch_error=True)
    return rel


def extra32(name, x):
    """Absolute allowance on top of 2 ulp in float32, where PyTorch's float32 kernel itself is
    accurate only in absolute terms (computed in float32 with the same formulas)."""
    x64 = np.asarray(x, dtype=np.float64)
    if name == "lgamma":
        return EPS32 * reflection_scale(name, x64)
    if name == "digamma":
        return 4 * EPS32 * digamma_positive_scale(x64) + \
            8 * EPS32 * reflection_scale(name, x64, torch_error=True)
    return 0.0


def nonintegers(x):
    return x[x != np.round(x)]


# ----------------------------------------------------------------------------- grids
def _grids():
    def both(v):
        return np.concatenate([v, -v])
    lin = np.linspace
    pos_gamma = np.concatenate([lin(1e-6, 40, 200001), np.logspace(-300, 305, 20001),
                                1 + lin(-1e-3, 1e-3, 2001), 2 + lin(-1e-3, 1e-3, 2001),
                                1.4616321449683623 + lin(-1e-6, 1e-6, 2001)])
    neg_gamma = nonintegers(np.concatenate([lin(-40, -1e-6, 200001), -np.logspace(-300, 15, 5001)]))
    return {
        "sigmoid": np.concatenate([lin(-800, 800, 200001), both(np.logspace(-300, 2.9, 5001)),
                                   -709.782712893384 + lin(-1e-11, 1e-11, 2001)]),
        "erf": np.concatenate([lin(-8, 8, 200001), both(np.logspace(-300, 1.5, 5001))]),
        "erfc": np.concatenate([lin(-10, 28, 200001), both(np.logspace(-300, 1.45, 5001))]),
        "erfinv": np.concatenate([lin(-1, 1, 200001), both(np.logspace(-300, 0, 5001)),
                                  both(1 - np.logspace(-16, -0.3, 5001)),
                                  both(1 - np.arange(1, 200) * 2.0 ** -53)]),
        "lgamma": np.concatenate([pos_gamma, neg_gamma]),
        "digamma": np.concatenate([pos_gamma, neg_gamma]),
    }


GRIDS = _grids()


# ----------------------------------------------------------------------------- dtype, shape, warns
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, BF16], ids=str)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 4), (2, 0, 3)], ids=str)
def test_dtype_and_shape_preserved(name, dtype, shape):
    x = rng().uniform(-0.9, 3, size=shape).astype(dtype)
    y = ours(name, x)
    assert isinstance(y, np.ndarray)
    assert y.dtype == np.dtype(dtype) and y.shape == shape
    expected = torch_of(name, x)
    if dtype == np.float64:
        assert_within(y, expected, allowed64(name, x, expected), x, name)
    else:
        assert_ulps(y, expected, 1 if dtype in (np.float16, BF16) else 2, x, name,
                    extra=extra32(name, x))


@pytest.mark.parametrize("name", NAMES)
def test_non_contiguous_input(name):
    x = rng().uniform(-0.9, 3, size=(6, 8))[::2, ::3].T
    assert not x.flags.c_contiguous
    np.testing.assert_array_equal(ours(name, x), ours(name, np.ascontiguousarray(x)))


EXTREMES = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -3.0, 1e-310, -1e-310, 5e-324, 1e308, -1e308,
            709.9, -709.9, 745.2, -745.2, 30.0, -30.0, 1 - 2 ** -53, -1 + 2 ** -53, INF, -INF, NAN]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, BF16], ids=str)
def test_no_warnings_and_errstate_untouched(name, dtype):
    x = np.array(EXTREMES).astype(dtype)
    before = np.geterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = ours(name, x)
    assert np.geterr() == before
    assert y.dtype == np.dtype(dtype)


# ----------------------------------------------------------------------------- float64 vs torch
@pytest.mark.parametrize("name", NAMES)
def test_float64_dense_grid_matches_torch(name):
    x = GRIDS[name]
    expected = torch_of(name, x)
    assert_within(ours(name, x), expected, allowed64(name, x, expected), x, name)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.sampled_from(NAMES), st.lists(st.floats(width=64), min_size=1, max_size=40))
def test_float64_hypothesis_matches_torch(name, values):
    x = np.array(values, dtype=np.float64)
    expected = torch_of(name, x)
    assert_within(ours(name, x), expected, allowed64(name, x, expected), x, name)


# ----------------------------------------------------------------------------- float64 accuracy
# Largest error in float64 ulps against mpmath (50 digits) over the samples below.
ACCURACY_ULPS = {"sigmoid": 2, "erf": 2, "erfc": 4, "erfinv": 3, "lgamma": 3, "digamma": 2}


def _accuracy_samples(name):
    n = 400
    gen = rng()
    u = gen.uniform
    logu = lambda lo, hi: np.exp(u(lo, hi, n))          # noqa: E731
    sign = lambda: gen.choice([-1.0, 1.0], n)            # noqa: E731
    if name == "sigmoid":
        parts = [u(-40, 40, n), logu(-690, 6.5) * sign()]
    elif name in ("erf", "erfc"):
        parts = [u(-6, 6, n), logu(-690, 3.3) * sign(), u(0.4, 0.6, n), u(9.5, 10.5, n)]
        if name == "erfc":
            parts.append(u(10, 26.5, n))                  # tail, still normal numbers
    elif name == "erfinv":
        parts = [u(-1, 1, n), logu(-690, 0) * sign(), (1 - logu(-36.7, 0)) * sign(),
                 u(0.45, 0.55, n)]
    else:
        parts = [u(0, 12, n), logu(-690, 690), 1 + u(-1e-3, 1e-3, n), 2 + u(-1e-3, 1e-3, n),
                 1 + logu(-36, -2) * sign(), 2 + logu(-36, -2) * sign(), u(9.5, 10.5, n)]
        if name == "digamma":
            parts += [1.4616321449683623 + u(-1e-3, 1e-3, n),
                      1.4616321449683623 + np.arange(-200, 200) * 2.0 ** -52]
    return np.concatenate(parts)


@pytest.mark.parametrize("name", NAMES)
def test_float64_accuracy_against_mpmath(name):
    x = _accuracy_samples(name)
    assert_ulps(ours(name, x), mp_of(name, x), ACCURACY_ULPS[name], x, name)


@pytest.mark.parametrize("name", ["lgamma", "digamma"])
def test_float64_negative_arguments_against_mpmath(name):
    # Reflection formula: accurate to a few eps of the size of its terms (absolute).
    gen = rng()
    x = nonintegers(np.concatenate([gen.uniform(-30, 0, 3000), -np.exp(gen.uniform(-690, 30, 500)),
                                    -np.arange(1, 30) + gen.uniform(-1e-6, 1e-6, 29)]))
    expected = mp_of(name, x)
    scale = reflection_scale(name, x) + 1.0
    assert_within(ours(name, x), expected, 3 * EPS64 * scale, x, name)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.sampled_from(NAMES), st.data())
def test_float64_hypothesis_accuracy(name, data):
    domain = {
        "sigmoid": st.floats(-700, 700),
        "erf": st.floats(-30, 30),
        "erfc": st.floats(-30, 26.5),
        "erfinv": st.floats(-1, 1, exclude_min=True, exclude_max=True),
        "lgamma": st.floats(1e-300, 1e300),
        "digamma": st.floats(1e-300, 1e300),
    }[name]
    x = np.array(data.draw(st.lists(domain, min_size=1, max_size=10)))
    assert_ulps(ours(name, x), mp_of(name, x), ACCURACY_ULPS[name], x, name)


# ----------------------------------------------------------------------------- float32
@pytest.mark.parametrize("name", NAMES)
def test_float32_dense_grid_matches_torch(name):
    x = np.unique(GRIDS[name].astype(np.float32))
    if name in ("lgamma", "digamma"):
        x = x[(x > 0) | (x != np.round(x))]
    if name == "lgamma":            # see test_lgamma_overflow_threshold
        x = x[(x < 4.0371103e36)]
    assert_ulps(ours(name, x), torch_of(name, x), 2, x, name, extra=extra32(name, x))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.sampled_from(NAMES), st.lists(st.floats(width=32), min_size=1, max_size=40))
def test_float32_hypothesis_matches_torch(name, values):
    x = np.array(values, dtype=np.float32)
    if name == "lgamma":
        x = x[~((x >= 4.0371103e36) & (x < 4.0850e36))]
    assert_ulps(ours(name, x), torch_of(name, x), 2, x, name, extra=extra32(name, x))


@pytest.mark.parametrize("name", NAMES)
def test_float32_is_correctly_rounded_mpmath(name):
    x = _accuracy_samples(name).astype(np.float32)
    x = x[np.isfinite(x)]
    if name == "erfinv":
        x = x[np.abs(x) < 1]
    if name in ("lgamma", "digamma"):
        x = x[x > 0]
    expected = mp_of(name, x).astype(np.float32)
    assert_ulps(ours(name, x), expected, 1, x, name)


# ----------------------------------------------------------------------------- float16 / bfloat16
def every_value(dtype):
    return np.arange(2 ** 16, dtype=np.uint16).view(dtype)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.float16, BF16], ids=str)
def test_half_every_value_matches_torch_float32_rounded(name, dtype):
    x = every_value(dtype)
    x32 = x.astype(np.float32)
    if name == "lgamma":
        x32 = np.where((x32 >= 4.0371103e36) & (x32 < 4.085e36), 0.5, x32)   # torch overflows early
        x = x32.astype(dtype)
    expected = torch_of(name, x32).astype(dtype)
    # 1 ulp of the small type, or PyTorch's own float32 error where that is absolute
    assert_ulps(ours(name, x), expected, 1, x, name, extra=extra32(name, x32))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.float16, BF16], ids=str)
def test_half_matches_torch_native_half(name, dtype):
    x = every_value(dtype)
    x32 = x.astype(np.float32)
    if name == "erf":
        # PyTorch's reduced-precision erf is itself several ulps off for |x| < 1e-3 (e.g.
        # torch.erf(bfloat16(1e-7)) = 0); ember rounds the float32 result instead.
        keep = ~(np.abs(x32) < 1e-3)
        x, x32 = x[keep], x32[keep]
    if name == "lgamma":
        keep = ~((x32 >= 4.0371103e36) & (x32 < 4.085e36))
        x, x32 = x[keep], x32[keep]
    tdtype = torch.float16 if dtype == np.float16 else torch.bfloat16
    expected = torch_of(name, x32, tdtype).astype(dtype)
    assert_ulps(ours(name, x), expected, 1, x, name, extra=extra32(name, x32))


# ----------------------------------------------------------------------------- edge cases
def check_exact(name, values, expected, dtype=np.float64):
    x = np.array(values, dtype=dtype)
    y = ours(name, x)
    e = np.array(expected, dtype=dtype)
    assert y.dtype == e.dtype
    assert_same_specials(y, e, x)
    np.testing.assert_array_equal(y.astype(np.float64), e.astype(np.float64))
    keep = ~np.isnan(e)
    np.testing.assert_array_equal(np.signbit(y[keep]), np.signbit(e[keep]))     # -0 stays -0


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, BF16], ids=str)
def test_sigmoid_limits(dtype):
    check_exact("sigmoid", [0.0, -0.0, INF, -INF, NAN, 1e4, 60.0],
                [0.5, 0.5, 1.0, 0.0, NAN, 1.0, 1.0], dtype)
    if dtype != np.float16:
        check_exact("sigmoid", [-1e4, -800.0], [0.0, 0.0], dtype)


def test_sigmoid_underflow_follows_torch():
    # PyTorch computes 1 / (1 + exp(-x)): exactly 0 once exp(-x) overflows in the working
    # precision, although the true value is still a subnormal number.
    for dtype, limit in [(np.float64, 709.782712893384), (np.float32, 88.72283905206835)]:
        x = np.array([-limit * (1 - 1e-7), -limit * (1 + 1e-7), -100.0, -740.0], dtype=dtype)
        y = ours("sigmoid", x)
        np.testing.assert_array_equal(y == 0, torch_of("sigmoid", x) == 0)
        assert y[0] > 0 and y[1] == 0
    x = np.array([-89.0, -100.0], dtype=BF16)            # bfloat16 is evaluated in float32
    assert (ours("sigmoid", x).astype(np.float32) == 0).all()
    assert (torch_of("sigmoid", x).astype(np.float32) == 0).all()


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, BF16], ids=str)
def test_erf_erfc_limits(dtype):
    check_exact("erf", [0.0, -0.0, INF, -INF, NAN, 7.0, -7.0],
                [0.0, -0.0, 1.0, -1.0, NAN, 1.0, -1.0], dtype)
    check_exact("erfc", [0.0, -0.0, INF, -INF, NAN, -7.0], [1.0, 1.0, 0.0, 2.0, NAN, 2.0], dtype)


def test_erf_tiny_arguments():
    x = np.array([1e-300, -1e-300, 5e-324, 1e-20])
    np.testing.assert_allclose(ours("erf", x), 2 / math.sqrt(math.pi) * x, rtol=1e-15, atol=0)


def test_erfc_tail():
    x = np.array([10.0, 15.0, 20.0, 25.0, 26.5, 27.0, 27.2, 27.3, 40.0, 1e300])
    y = ours("erfc", x)
    assert abs(y[0] / 2.088487583762545e-45 - 1) < 2e-15       # erfc(10)
    np.testing.assert_allclose(y[:-1], mp_of("erfc", x[:-1]), rtol=1e-15, atol=TINY64)
    np.testing.assert_allclose(y, torch_of("erfc", x), rtol=1.5e-15, atol=TINY64)
    assert 0 < y[5] < 1e-318 and y[-1] == 0 and y[-2] == 0     # subnormal, then underflow
    np.testing.assert_allclose(ours("erfc", -x), 2.0, rtol=0)


def test_erfc_float32_tail():
    # float32 results are the float64 ones rounded, down to the last subnormal (erfc(10) = 2.1e-45
    # rounds to 1.4e-45); PyTorch's float32 kernel agrees to one subnormal step.
    x = np.array([9.0, 10.0, 10.05, 10.1, 11.0], dtype=np.float32)
    y = ours("erfc", x)
    np.testing.assert_array_equal(y, mp_of("erfc", x).astype(np.float32))
    assert y[1] == y[2] == 2.0 ** -149 and y[3] == y[4] == 0
    np.testing.assert_allclose(y, torch_of("erfc", x), rtol=1e-6, atol=2.0 ** -149)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, BF16], ids=str)
def test_erfinv_limits(dtype):
    check_exact("erfinv", [1.0, -1.0, 0.0, -0.0, 1.5, -1.5, 2.0, INF, -INF, NAN],
                [INF, -INF, 0.0, -0.0, NAN, NAN, NAN, NAN, NAN, NAN], dtype)


def test_erfinv_near_one():
    x = np.concatenate([1 - np.arange(1, 64) * 2.0 ** -53, 1 - 2.0 ** -np.arange(2, 54)])
    x = np.concatenate([x, -x])
    y = ours("erfinv", x)
    np.testing.assert_allclose(y, mp_of("erfinv", x), rtol=5e-16, atol=0)
    np.testing.assert_allclose(y, torch_of("erfinv", x), rtol=1e-15, atol=0)
    assert abs(y[0] - 5.8635847487551676) < 2e-15
    np.testing.assert_allclose(ours("erf", y), x, rtol=2e-16, atol=0)   # round trip


def test_erfinv_tiny_and_round_trip():
    x = np.array([1e-300, -1e-300, 5e-324, 1e-17, 1e-8])
    np.testing.assert_allclose(ours("erfinv", x), math.sqrt(math.pi) / 2 * x, rtol=1e-15)
    x = rng().uniform(-0.999, 0.999, 2000)
    np.testing.assert_allclose(ours("erf", ours("erfinv", x)), x, rtol=1e-15, atol=1e-17)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, BF16], ids=str)
def test_lgamma_special_values(dtype):
    # poles (0, -0, negative integers, -inf) are +inf like torch; lgamma(1) = lgamma(2) = 0 exactly
    check_exact("lgamma", [0.0, -0.0, -1.0, -2.0, -100.0, INF, -INF, NAN, 1.0, 2.0],
                [INF, INF, INF, INF, INF, INF, INF, NAN, 0.0, 0.0], dtype)
    x = np.array([0.0, -0.0, -1.0, -2.0, -100.0, INF, -INF, NAN, 1.0, 2.0, 3.0, 0.5, -0.5], dtype)
    assert_ulps(ours("lgamma", x), torch_of("lgamma", x), 1, x, "lgamma")


def test_lgamma_values():
    x = np.array([3.0, 4.0, 0.5, -0.5, -1.5, 1e-300, -1e-300, 1e-20, 171.5, 1e17, -2.5e15 - 0.5])
    expected = [math.log(2), math.log(6), 0.5 * math.log(math.pi), math.log(2 * math.sqrt(math.pi)),
                math.log(4 * math.sqrt(math.pi) / 3), 690.7755278982137, 690.7755278982137]
    y = ours("lgamma", x)
    np.testing.assert_allclose(y[:7], expected, rtol=3e-16)
    np.testing.assert_allclose(y, mp_of("lgamma", x), rtol=5e-16)
    np.testing.assert_allclose(y, torch_of("lgamma", x), rtol=1e-15)
    np.testing.assert_array_equal(ours("lgamma", -np.array([2.0 ** 52, 2.0 ** 60, 1e300])), INF)
    sub = np.array([2.2250738585e-313, -2.2250738585e-313, 5e-324, -5e-324, -1e-310])   # subnormal
    np.testing.assert_allclose(ours("lgamma", sub), mp_of("lgamma", sub), rtol=3e-16)


def test_lgamma_relative_accuracy_at_its_zeros():
    # lgamma(1 + h) ~ -0.5772 h and lgamma(2 + h) ~ 0.4228 h: relative accuracy survives
    h = np.concatenate([2.0 ** -np.arange(1, 53), -(2.0 ** -np.arange(2, 54))])
    x = np.concatenate([1 + h, 2 + h])
    assert_ulps(ours("lgamma", x), mp_of("lgamma", x), 3, x, "lgamma")
    np.testing.assert_allclose(ours("lgamma", x), torch_of("lgamma", x), rtol=1e-15)


def test_lgamma_overflow_threshold():
    # ember overflows where the result overflows; PyTorch's CPU kernel returns inf a little
    # earlier (it forms x * log(x)), so these values are checked against mpmath instead.
    x = np.array([2.5563e305, 2.5564e305, 2.5565e305, 2.6e305, 1e306])
    y = ours("lgamma", x)
    np.testing.assert_allclose(y[:3], mp_of("lgamma", x[:3]), rtol=3e-16)
    assert np.isinf(y[3:]).all()
    x32 = np.array([4.0371103e36, 4.08e36, 4.085e36, 4.0851e36, 1e38], dtype=np.float32)
    y32 = ours("lgamma", x32)
    np.testing.assert_array_equal(y32[:3], mp_of("lgamma", x32[:3]).astype(np.float32))
    assert np.isinf(y32[3:]).all()
    assert np.isinf(torch_of("lgamma", x32[:1])).all()    # the documented difference


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, BF16], ids=str)
def test_digamma_special_values(dtype):
    # digamma(+0) = -inf, digamma(-0) = +inf, negative integers and -inf are nan, like torch
    check_exact("digamma", [0.0, -0.0, -1.0, -2.0, -100.0, INF, -INF, NAN],
                [-INF, INF, NAN, NAN, NAN, INF, NAN, NAN], dtype)
    x = np.array([0.0, -0.0, -1.0, -2.0, -100.0, INF, -INF, NAN, 1.0, 2.0, 0.5, -0.5], dtype)
    y, expected = ours("digamma", x), torch_of("digamma", x)
    if dtype == np.float64:        # PyTorch is 19 ulp off at -0.5 (see reflection_scale)
        assert_within(y, expected, allowed64("digamma", x, expected), x, "digamma")
    else:
        assert_ulps(y, expected, 1, x, "digamma", extra=extra32("digamma", x.astype(np.float32)))


def test_digamma_values():
    gamma = 0.57721566490153286061
    x = np.array([1.0, 2.0, 0.5, 10.0, 1e-300, -1e-300, 1e300, -0.5, -1e15 - 0.5])
    expected = [-gamma, 1 - gamma, -gamma - 2 * math.log(2), 2.251752589066721, -1e300, 1e300,
                690.7755278982137, 0.03648997397857652]
    y = ours("digamma", x)
    np.testing.assert_allclose(y[:8], expected, rtol=3e-16)
    np.testing.assert_allclose(y, mp_of("digamma", x), rtol=3e-16)
    expected = torch_of("digamma", x)
    assert_within(y, expected, allowed64("digamma", x, expected), x, "digamma")
    np.testing.assert_array_equal(np.isnan(ours("digamma", -np.array([2.0 ** 52, 1e300]))), True)
    sub = np.array([1e-310, -1e-310, 5e-324, -5e-324, 1e-308, -1e-308])   # -1/x overflows
    np.testing.assert_array_equal(ours("digamma", sub), [-INF, INF, -INF, INF, -1e308, 1e308])


def test_digamma_relative_accuracy_at_its_zero():
    # digamma has its positive zero at 1.46163214496836234...; PyTorch's absolute-only error
    # there is ~1e-16, ember keeps the error within 2 ulp of the (tiny) result.
    x = 1.4616321449683623 + np.arange(-50, 51) * 2.0 ** -52
    y = ours("digamma", x)
    assert_ulps(y, mp_of("digamma", x), 2, x, "digamma")
    assert np.all(np.abs(y) < 1e-13) and np.all(np.diff(y) > 0)
    np.testing.assert_allclose(y, torch_of("digamma", x), rtol=0, atol=1e-15)


def test_negative_arguments_near_poles():
    # Close to a negative integer -n: lgamma ~ -log|x + n| - lgamma(n + 1), digamma ~ -1/(x + n)
    # (lgamma can still cancel against lgamma(n + 1): absolute accuracy, see reflection_scale).
    n = np.arange(1.0, 20.0)
    for d in (1e-10, -1e-10, 1e-5, -1e-5):
        x = -n + d
        assert_within(ours("lgamma", x), mp_of("lgamma", x),
                      3 * EPS64 * reflection_scale("lgamma", x), x, "lgamma")
        np.testing.assert_allclose(ours("digamma", x), mp_of("digamma", x), rtol=1e-15)


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


def test_igamma_igammac():
    def f(T):
        a = T.tensor([0.5, 1, 2.])
        b = T.tensor([1., 2, 3], requires_grad=True)
        y, z = T.igamma(a, b), T.igammac(a, b)
        (y + 2 * z).sum().backward()
        return [y, z, b.grad, a.igamma(b.detach()), a.igammac(b.detach()),
                a.clone().igamma_(T.tensor(2., dtype=T.float64)), a.clone().igammac_(b.detach()),
                _node(y), _node(z), catch(T.igamma, a, 2.), catch(a.igamma, 2.),
                catch(a.igammac_, 2), catch(T.igammac, 2., a),
                catch(T.igamma, T.tensor([1, 2]), T.tensor([1, 2])),
                catch(lambda: T.igamma(a.clone().requires_grad_(), b).sum().backward())]
    same(f)


def test_i0_and_grad():
    def f(T):
        x = T.tensor([0.0, 0.5, -3.0, 14.9, 15.1, 40.0, -80.0], dtype=T.float64,
                     requires_grad=True)
        y = T.i0(x)
        y.backward(T.ones(7, dtype=T.float64))
        g = x.grad
        (h,) = T.autograd.grad(T.i0(x).sum(), x, create_graph=True)
        (hh,) = T.autograd.grad(h.sum(), x)
        z = T.tensor([1.0, 2.0])
        z.i0_()
        return [y, _node(y), g, hh, T.i0(T.tensor([1, 2])), z,
                T.tensor([1.0], dtype=T.float32).i0().dtype]
    same(f, rtol=1e-9)


# ----------------------------------------------------------------------------- mvlgamma
def test_mvlgamma():
    def f(T):
        x = T.tensor([1.6, 2.5, 7.0], dtype=T.float64, requires_grad=True)
        y = T.mvlgamma(x, 3)
        y.sum().backward()
        z = T.tensor([3.0, 4.0])
        z.mvlgamma_(2)
        return [y, _node(y), x.grad, z, T.mvlgamma(T.tensor([3, 4]), 2), x.detach().mvlgamma(1),
                T.mvlgamma(T.tensor([0.4, 0.1, -1.0, 0.5, -0.3]), 2),
                catch(T.mvlgamma, T.tensor([3.0]), 0)]
    same(f, rtol=1e-9)


def test_bessel_i1_matches_i0_derivative_across_branches():
    # I0' = I1: its values on both sides of the series/asymptotic switch at |x| = 15
    def f(T):
        x = T.tensor([1e-3, 1.0, 10.0, 14.99, 15.01, 30.0, -20.0, 700.0], dtype=T.float64,
                     requires_grad=True)
        T.i0(x).sum().backward()
        return x.grad / T.i0(x.detach())        # relative: exp(700) is near overflow
    same(f, rtol=1e-12, atol=0)
