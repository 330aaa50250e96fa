"""median, mode, quantile, nan-reductions, aminmax, cummax/cummin, logcumsumexp, diff, unique,
bincount, histc, searchsorted, bucketize, isin: compared with torch."""
import numpy as np
import pytest

import ember
import types
from ember.ops import statistics as _statistics, reduction as _reduction, scan as _scan
from ember.ops import calculus as _calculus, sorting as _sorting
# ----------------------------------------------------------------------------- property sweeps
from hypothesis import given, settings, strategies as st  # noqa: E402
# the ops this file tests, from the modules that hold them now
_RX_MODULES = (_statistics, _reduction, _scan, _calculus, _sorting)
RX = types.SimpleNamespace(**{n: getattr(m, n) for m in _RX_MODULES for n in m.__all__})
from tests.differential import catch, same, warnings_of

NAN = float("nan")
RNG = np.random.default_rng(0)


def T(mod, a, **kw):
    a = np.asarray(a)
    requires_grad = kw.pop("requires_grad", False)
    # (reshape keeps empty shapes, which a nested list loses; the leaf is made after it)
    return mod.tensor(a.tolist(), **kw).reshape(a.shape).requires_grad_(requires_grad)


def distinct(*shape):
    """Values without ties (so the index a reduction picks is unambiguous)."""
    n = int(np.prod(shape))
    return (RNG.permutation(n).reshape(shape) * 0.5 - 3).astype(np.float64)


def fn(mod, name):
    """The op under test: torch's, or ember's from the module under test."""
    return getattr(mod, name) if mod.__name__ == "torch" else getattr(RX, name)


def grads(mod, name, data, *args, pick=lambda r: r, node=True, **kw):
    """Forward result, grad_fn name and input gradient of sum(weights * op(x)); node=False
    for composite ops, whose last node is an implementation detail."""
    x = T(mod, data, dtype=mod.float64, requires_grad=True)
    r = pick(fn(mod, name)(x, *args, **kw))
    w = mod.arange(r.numel(), dtype=mod.float64).reshape(r.shape) + 1
    (r * w).sum().backward()
    assert x.grad is not None
    return r.detach(), type(r.grad_fn).__name__ if node else None, x.grad


SHAPES = [(5,), (3, 4), (2, 3, 5)]


# ----------------------------------------------------------------------------- median / nanmedian
@pytest.mark.parametrize("name", ["median", "nanmedian"])
@pytest.mark.parametrize("shape", SHAPES + [()])
def test_median_forms(name, shape):
    data = distinct(*shape)

    def scenario(T_):
        x = T(T_, data)
        out = [fn(T_, name)(x), fn(T_, name)(x.to(T_.int32))]
        for d in range(-len(shape), len(shape)) if shape else [0, -1]:
            for keep in (False, True):
                v, i = fn(T_, name)(x, d, keep)
                out += [v, i]
        return out
    same(scenario)


@pytest.mark.parametrize("name", ["median", "nanmedian"])
def test_median_nan_empty_errors(name):
    def scenario(T_):
        x = T(T_, [[1.0, NAN, 3.0, 0.5], [NAN, NAN, NAN, NAN], [4.0, 2.0, 1.0, 3.0]])
        f = fn(T_, name)
        v, i = f(x, 1)
        # (which NaN an all-NaN row's nanmedian points at is an implementation detail)
        return [f(x), v, i[[0, 2]], f(x[2]), f(T_.tensor([])), f(T_.zeros(0, dtype=T_.int64)),
                catch(f, T_.zeros(0, 2), 0), catch(f, x, 2),
                catch(f, T_.zeros(3, dtype=T_.complex64))]
    same(scenario)


@pytest.mark.parametrize("name", ["median", "nanmedian"])
def test_median_grads(name):
    data = distinct(3, 4)
    same(lambda T_: grads(T_, name, data))
    same(lambda T_: grads(T_, name, data, 1, pick=lambda r: r.values))
    same(lambda T_: grads(T_, name, data, 0, True, pick=lambda r: r.values))
    # ties share the all-reduce gradient
    same(lambda T_: grads(T_, name, [3.0, 1.0, 2.0, 2.0]))
    x = ember.tensor(data, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: getattr(RX, name)(t, 1).values, (x,))


def test_median_reprs_and_methods():
    def scenario(T_):
        x = T(T_, [[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]], requires_grad=True)
        return [repr(x.median(1)), repr(x.nanmedian(0, keepdim=True)), repr(x.mode(1)),
                repr(x.cummax(1)), repr(x.cummin(0)), catch(x.detach().to(T_.complex64).mode),
                catch(x.detach().to(T_.complex64).cummin, 0), repr(x.aminmax()),
                repr(x.aminmax(dim=1, keepdim=True))]
    same(scenario)


# ----------------------------------------------------------------------------- mode
def test_mode():
    data = RNG.integers(0, 4, (3, 4, 7))

    def scenario(T_):
        x = T(T_, data)
        out = [fn(T_, "mode")(T_.tensor([1, 2, 2, 1])),
               fn(T_, "mode")(T_.tensor([1, 2, 2, 1, 1, 2])),
               fn(T_, "mode")(T_.tensor(5.0)), fn(T_, "mode")(T_.tensor(5.0), 0, True)]
        for d in (0, 1, -1):
            for keep in (False, True):
                out.append(tuple(fn(T_, "mode")(x, d, keep)))
                out.append(tuple(fn(T_, "mode")(x.double(), d, keep)))
        # NaNs count as one value (which NaN's index is reported is not compared)
        nans = T_.tensor([[NAN, 1.0, NAN, NAN, 2.0, 1.0], [NAN, 1.0, 3.0, 1.0, 2.0, 1.0]])
        out.append(fn(T_, "mode")(nans).values)
        out.append(catch(fn(T_, "mode"), T_.zeros(2, 0)))
        out.append(catch(fn(T_, "mode"), x, 3))
        return out
    same(scenario)


def test_mode_grad():
    data = [[1.0, 2.0, 2.0, 3.0], [4.0, 4.0, 1.0, 0.0]]
    same(lambda T_: grads(T_, "mode", data, pick=lambda r: r.values))
    same(lambda T_: grads(T_, "mode", data, 0, True, pick=lambda r: r.values))


# ----------------------------------------------------------------------------- quantile
@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_forms(name, interpolation):
    data = RNG.standard_normal((3, 5))
    data[1, 2] = NAN
    data[2, :] = NAN

    def scenario(T_):
        x = T(T_, data, dtype=T_.float64)
        f = fn(T_, name)
        kw = {"interpolation": interpolation}
        q = T_.tensor([0.0, 0.25, 0.5, 0.9, 1.0], dtype=T_.float64)
        return [f(x, 0.3, **kw), f(x, q, **kw), f(x, 0.4, 1, **kw), f(x, q, 1, True, **kw),
                f(x, q, 0, **kw), f(x, 0.5, None, True, **kw), f(x[0], 0.5, **kw),
                f(x.float(), T_.tensor(0.5), 1, **kw), f(x, 0.5, 1, interpolation=interpolation),
                f(T_.tensor(2.0), 0.5, 0, **kw),
                f(T_.tensor(2.0, dtype=T_.float64), q, **kw), f(x[0, :4], q, **kw)]
    same(scenario)


def test_quantile_errors():
    def scenario(T_):
        x = T_.arange(6.0).reshape(2, 3)
        q = fn(T_, "quantile")
        return [catch(q, x.long(), 0.5), catch(q, x, 1.5), catch(q, x, T_.tensor([0.5, 1.5])),
                catch(q, x, -0.5), catch(q, x.double(), T_.tensor([0.5])),
                catch(q, x, T_.tensor([[0.5]])), catch(q, x, 0.5, interpolation="cubic"),
                catch(q, T_.tensor([]), 0.5)]
    same(scenario)


def test_quantile_grads():
    data = distinct(3, 5)
    same(lambda T_: grads(T_, "quantile", data, T_.tensor([0.3, 0.75], dtype=T_.float64), 1,
                                 node=False))
    same(lambda T_: grads(T_, "nanquantile", data, 0.5, node=False))
    x = ember.tensor(data, requires_grad=True)
    q = ember.tensor([0.1, 0.6], dtype=ember.float64)
    assert ember.autograd.gradcheck(lambda t: RX.quantile(t, q, 0), (x,))


# ----------------------------------------------------------------------------- nansum / nanmean
@pytest.mark.parametrize("shape", SHAPES + [(), (0, 3)])
def test_nansum_nanmean(shape):
    data = RNG.standard_normal(shape)
    if data.size:
        data.reshape(-1)[::3] = NAN

    def scenario(T_):
        x = T(T_, data)
        out = [fn(T_, "nansum")(x), fn(T_, "nanmean")(x), fn(T_, "nansum")(x.float()),
               fn(T_, "nansum")(T_.ones(shape, dtype=T_.int32)),
               fn(T_, "nansum")(x, dtype=T_.float32),
               catch(fn(T_, "nanmean"), T_.ones(shape, dtype=T_.int64))]
        for d in range(len(shape)):
            out += [fn(T_, "nansum")(x, d), fn(T_, "nanmean")(x, d, True),
                    fn(T_, "nansum")(x, (d, -1) if d != len(shape) - 1 else d, True)]
        return out
    same(scenario)


def test_nansum_nanmean_grads():
    data = [[1.0, NAN, 3.0], [NAN, NAN, 2.0]]
    same(lambda T_: grads(T_, "nansum", data))
    same(lambda T_: grads(T_, "nansum", data, 1))
    same(lambda T_: grads(T_, "nanmean", data, 0))
    x = ember.tensor(data, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: RX.nansum(t, 0), (x,))


# ----------------------------------------------------------------------------- aminmax
@pytest.mark.parametrize("shape", SHAPES + [()])
def test_aminmax(shape):
    data = RNG.integers(-3, 3, shape)

    def scenario(T_):
        x = T(T_, data)
        out = [tuple(fn(T_, "aminmax")(x)), tuple(fn(T_, "aminmax")(x.double(), keepdim=True))]
        for d in range(-len(shape), len(shape)) if shape else [0]:
            out.append(tuple(fn(T_, "aminmax")(x, dim=d, keepdim=True)))
            out.append(tuple(fn(T_, "aminmax")(x.float(), dim=d)))
        return out
    same(scenario)


def test_aminmax_grads_and_errors():
    data = [[1.0, 3.0, 3.0], [2.0, 0.0, 2.0]]
    same(lambda T_: grads(T_, "aminmax", data, pick=lambda r: r.min + 2 * r.max))
    same(lambda T_: grads(T_, "aminmax", data, dim=1, pick=lambda r: r.min * 3 + r.max))
    same(lambda T_: grads(T_, "aminmax", data, dim=0, pick=lambda r: r.max))
    same(lambda T_: [catch(fn(T_, "aminmax"), T_.zeros(0)),
                     catch(fn(T_, "aminmax"), T_.zeros(2, 0), dim=1)])
    x = ember.tensor(distinct(2, 3), requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: tuple(RX.aminmax(t, dim=0)), (x,))


# ----------------------------------------------------------------------------- cummax / cummin
@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cummax_cummin(name):
    ints = RNG.integers(0, 4, (3, 6))
    floats = RNG.standard_normal((2, 7))
    floats[0, 2] = NAN
    floats[1, 5] = NAN
    floats[1, 6] = NAN

    def scenario(T_):
        f = fn(T_, name)
        out = []
        for x in (T(T_, ints), T(T_, floats), T_.tensor(2.5), T_.zeros(0, 3), T_.zeros(2, 0)):
            for d in range(-x.dim(), x.dim()) if x.dim() else [0, -1]:
                out.append(tuple(f(x, d)))
        out.append(catch(f, T(T_, ints), 2))
        return out
    same(scenario)


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cummax_cummin_grads(name):
    data = [[1.0, 3.0, 2.0, 3.0, 0.0], [5.0, 4.0, 6.0, 1.0, 7.0]]
    same(lambda T_: grads(T_, name, data, 1, pick=lambda r: r.values))
    same(lambda T_: grads(T_, name, data, 0, pick=lambda r: r.values))
    x = ember.tensor(distinct(3, 4), requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: getattr(RX, name)(t, 1).values, (x,))


# ----------------------------------------------------------------------------- logcumsumexp
def test_logcumsumexp():
    data = RNG.standard_normal((3, 4)) * 5

    def scenario(T_):
        x = T(T_, data)
        return [fn(T_, "logcumsumexp")(x, 0), fn(T_, "logcumsumexp")(x, -1),
                fn(T_, "logcumsumexp")(x.float(), 1), fn(T_, "logcumsumexp")(T_.tensor(3.0), 0),
                catch(fn(T_, "logcumsumexp"), T_.arange(4), 0),
                fn(T_, "logcumsumexp")(T_.tensor([-float("inf"), 0.0, -float("inf")]), 0),
                fn(T_, "logcumsumexp")(T_.zeros(0, 2), 0)]
    same(scenario)
    same(lambda T_: grads(T_, "logcumsumexp", data, 1))
    large = [[800.0, 801.0, 799.0], [-900.0, -905.0, -890.0]]
    same(lambda T_: grads(T_, "logcumsumexp", large, 1))
    x = ember.tensor(data, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: RX.logcumsumexp(t, 0), (x,))
    assert ember.autograd.gradgradcheck(lambda t: RX.logcumsumexp(t, 1), (x,))


# ----------------------------------------------------------------------------- diff
def test_diff():
    data = RNG.integers(-5, 5, (3, 5))

    def scenario(T_):
        x = T(T_, data)
        f = fn(T_, "diff")
        return [f(x), f(x, 2), f(x, dim=0), f(x, 3, 0), f(x.float(), 1, -1, T_.ones(3, 2)),
                f(x, 1, 1, append=T_.zeros(3, 1, dtype=T_.int64)), f(x > 0), f(x > 0, 2, 0),
                f(T_.tensor([1.0, 4.0, 9.0]), prepend=T_.tensor([0.0])), f(x, 9),
                f(T_.zeros(0)), catch(f, T_.tensor(1.0)), catch(f, x, 1, 2)]
    same(scenario)
    data = distinct(3, 4)
    same(lambda T_: grads(T_, "diff", data, 2, 1))
    x = ember.tensor(data, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: RX.diff(t, 1, 0), (x,))


# ----------------------------------------------------------------------------- unique
def test_unique():
    data = RNG.integers(0, 4, (3, 4))
    rows = np.array([[1, 2], [0, 1], [1, 2], [0, 0]])

    def scenario(T_):
        x = T(T_, data)
        f = fn(T_, "unique")
        return [f(x), f(x, return_inverse=True), f(x, return_counts=True),
                f(x, True, True, True), f(x.float(), sorted=False), f(T_.tensor(3)),
                f(T_.zeros(0)), f(T(T_, rows), dim=0, return_inverse=True, return_counts=True),
                f(T(T_, rows), dim=1, return_counts=True), f(x.bool(), return_counts=True),
                f(T_.tensor([NAN, 1.0, NAN, 2.0]), return_inverse=True, return_counts=True),
                f(T_.zeros(0, 3), True, True, True, dim=0), catch(f, T_.zeros(2, 0), dim=0),
                catch(f, T_.zeros(0, 0), dim=0)]
    same(scenario)


def test_unique_consecutive():
    data = [[1, 1, 2], [2, 2, 3], [3, 1, 1]]

    def scenario(T_):
        x = T(T_, data)
        f = fn(T_, "unique_consecutive")
        rows = T_.tensor([[1, 2], [1, 2], [0, 1], [1, 2]])
        return [f(x), f(x, True, True), f(x.float(), return_counts=True), f(T_.tensor(3)),
                f(T_.zeros(0), return_inverse=True), f(rows, True, True, 0),
                f(rows, return_counts=True, dim=1), x.unique_consecutive()]
    same(scenario)


# ----------------------------------------------------------------------------- bincount / histc
def test_bincount():
    data = RNG.integers(0, 6, 20)
    w = RNG.standard_normal(20)

    def scenario(T_):
        x = T(T_, data)
        f = fn(T_, "bincount")
        return [f(x), f(x, minlength=10), f(x, T(T_, w)), f(x, T(T_, w, dtype=T_.float32)),
                f(x, T(T_, w, dtype=T_.float16)), f(x, T_.ones(20, dtype=T_.int64), 3),
                f(T_.zeros(0, dtype=T_.int64)), f(T_.zeros(0, dtype=T_.int64), minlength=2),
                f(x.to(T_.uint8)), catch(f, T_.tensor([1, -1])), catch(f, T_.tensor([1.0])),
                catch(f, x.reshape(4, 5)), catch(f, T_.tensor([True])), catch(f, x, minlength=-1),
                catch(f, x, T_.ones(3))]
    same(scenario)


def test_histc():
    data = RNG.standard_normal(50)

    def scenario(T_):
        x = T(T_, data)
        f = fn(T_, "histc")
        return [f(x), f(x, 7), f(x.float(), 5, -1, 1), f(x, 4, 0.5, 0.5),
                f(T_.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3), f(T_.tensor([2.0]), 3),
                f(T_.zeros(0), 3), f(x.reshape(5, 10), 6), x.histc(3),
                catch(f, T_.tensor([1, 2]), 3), catch(f, x, 3, 2, 1), catch(f, x, -1)]
    same(scenario)


# ----------------------------------------------------------------------------- searching
def test_searchsorted():
    seq = np.sort(RNG.integers(0, 10, 12))
    seq2 = np.sort(RNG.integers(0, 10, (2, 3, 6)), axis=-1)
    vals = RNG.integers(-1, 11, (4, 3))
    vals2 = RNG.integers(-1, 11, (2, 3, 4))

    def scenario(T_):
        f = fn(T_, "searchsorted")
        s, s2 = T(T_, seq), T(T_, seq2)
        v, v2 = T(T_, vals), T(T_, vals2)
        perm = T_.tensor(np.argsort(seq2[..., ::-1], axis=-1, kind="stable").tolist())
        return [f(s, v), f(s, v, right=True), f(s, v, side="right"), f(s, v, out_int32=True),
                f(s, 4), f(s, T_.tensor(4)), f(s2, v2), f(s2, v2, right=True),
                f(s2.flip(-1), v2, sorter=perm), f(s.double(), v.double() + 0.5),
                f(s, T_.zeros(0, dtype=T_.int64)),
                catch(f, s2, v), catch(f, s, v, side="middle"),
                catch(f, s, v, right=True, side="left"), catch(f, T_.tensor(1), v)]
    same(scenario)


def test_bucketize_isin():
    b = [1, 3, 5, 7, 9]
    data = RNG.integers(0, 11, (3, 4))

    def scenario(T_):
        x = T(T_, data)
        g = fn(T_, "isin")
        return [fn(T_, "bucketize")(x, T_.tensor(b)),
                fn(T_, "bucketize")(x, T_.tensor(b), right=True, out_int32=True),
                fn(T_, "bucketize")(4, T_.tensor(b)),
                catch(fn(T_, "bucketize"), x, T_.tensor([b])),
                g(x, T_.tensor(b)), g(x, T_.tensor(b), invert=True), g(x, 3), g(3, x),
                g(x.float(), T_.tensor([1.0, 2.0])), g(T_.zeros(0), T_.tensor([1.0]))]
    same(scenario)


def test_out_arguments():
    def scenario(T_):
        x = T_.tensor([[1.0, 4.0, 2.0], [3.0, 0.5, 6.0]])
        s = T_.tensor([1, 3, 5])
        outs = [T_.zeros(2), T_.zeros(2, 3), T_.zeros(4), T_.zeros(2, dtype=T_.int64),
                T_.zeros(3, dtype=T_.int32), T_.zeros(2)]
        fn(T_, "quantile")(x, 0.5, 1, out=outs[0])
        fn(T_, "logcumsumexp")(x, 1, out=outs[1])
        fn(T_, "histc")(x, 4, out=outs[2])
        fn(T_, "searchsorted")(s, T_.tensor([2, 5]), right=True, out=outs[3])
        fn(T_, "bucketize")(T_.tensor([0, 3, 9]), s, out_int32=True, out=outs[4])
        fn(T_, "nanquantile")(x, 0.25, 0, out=outs[5].resize_(3))
        return outs + [catch(fn(T_, "searchsorted"), s, T_.tensor([2]),
                             out=T_.zeros(1, dtype=T_.int32))]
    same(scenario)


# ----------------------------------------------------------------------------- histogramdd
def test_histogramdd():
    def f(T):
        x = T.tensor([[0., 1], [1, 1], [2, 0.5], [0.2, 0.9]])
        return [T.histogramdd(x, bins=[2, 2]), T.histogramdd(x, 2, range=[0., 2, 0, 1],
                                                              density=True),
                T.histogramdd(x, [T.tensor([0., 1, 2]), T.tensor([0., .5, 1])],
                              weight=T.tensor([1., 2, 3, 4])),
                T.histogramdd(x.double(), [3, 1], range=[0., 1, 0, 2]),
                catch(T.histogramdd, x, [2]), catch(T.histogramdd, x.long(), 2)]
    same(f)


# ----------------------------------------------------------------------------- histogram
def test_histogram():
    def f(T):
        x = T.tensor([1.0, 2.0, 3.0, 3.5, 2.5, -1.0])
        w = T.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
        return [T.histogram(x, 3), T.histogram(x, T.tensor([0.0, 2.0, 5.0]), weight=w,
                                                density=True),
                T.histogram(x, 2, range=(0.0, 2.0)), x.histogram(4, density=True),
                T.histogram(x.double(), 5, weight=w.double()),
                T.histogram(T.tensor([2.0, 2.0]), 2), str(T.histogram(x, 2)),
                catch(T.histogram, T.tensor([1, 2]), 3),
                catch(T.histogram, x, 0),
                catch(T.histogram, x, 2, range=(3.0, 1.0))]
    same(f)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 40), st.integers(1, 8), st.booleans(), st.booleans(),
       st.integers(0, 2 ** 31 - 1))
def test_histogram_sweep(n, bins, weighted, density, seed):
    rng = np.random.default_rng(seed)
    data = np.round(rng.standard_normal(n) * 4) / 2          # values on bin edges happen
    weights = rng.random(n)

    def f(T):
        x = T.tensor(data, dtype=T.float64)
        w = T.tensor(weights, dtype=T.float64) if weighted else None
        return [T.histogram(x, bins, weight=w, density=density),
                T.histogram(x, bins, range=(-2.0, 3.0), weight=w, density=density)]
    same(f, rtol=1e-9, atol=1e-12)
