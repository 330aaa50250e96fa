"""F.interpolate and nn.Upsample against torch: modes (nearest-exact, antialias, lanczos), values, gradients and errors.
"""
import numpy as np
import pytest
from differential import catch, same, warnings_of
import ember
import torch
from hypothesis import given, settings, strategies as st


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# ---------------------------------------------------------------- interpolate
@pytest.mark.parametrize("shape", [(1, 2, 7), (2, 1, 5, 6), (1, 1, 3, 4, 5)])
@pytest.mark.parametrize("kw", [dict(scale_factor=1.7), dict(scale_factor=0.6), dict(size=11),
                                dict(size=2), dict(scale_factor=2), dict(scale_factor=3),
                                dict(scale_factor=1.3, recompute_scale_factor=True)])
def test_interpolate_nearest_exact(shape, kw):
    x = randn(*shape)

    def f(T):
        t = T.tensor(x, requires_grad=True)
        y = T.nn.functional.interpolate(t, mode="nearest-exact", **kw)
        (y * T.arange(y.numel()).reshape(y.shape)).sum().backward()
        return y, t.grad, type(y.grad_fn).__name__
    same(f)


def test_upsample_module_nearest_exact():
    x = randn(1, 2, 3, 5)
    same(lambda T: (T.nn.Upsample(scale_factor=1.5, mode="nearest-exact")(T.tensor(x)),
                    repr(T.nn.Upsample(scale_factor=1.5, mode="nearest-exact"))))


def _x(T, shape, dtype="float64", seed=0, requires_grad=False):
    data = np.random.default_rng(seed).standard_normal(shape)
    return T.tensor(data, dtype=getattr(T, dtype), requires_grad=requires_grad)


# ----------------------------------------------------------------------------- antialias
AA_CASES = [dict(size=(4, 5)), dict(size=(3, 2)), dict(size=(20, 31)), dict(size=(1, 1)),
            dict(size=(9, 30)), dict(size=5), dict(scale_factor=0.4), dict(scale_factor=(0.3, 2.2)),
            dict(scale_factor=1.7), dict(scale_factor=0.6, recompute_scale_factor=True)]


@pytest.mark.parametrize("mode,align_corners", [("bilinear", False), ("bilinear", True),
                                                ("bicubic", False), ("bicubic", True),
                                                ("lanczos", False), ("lanczos", None),
                                                ("bilinear", None)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_interpolate_antialias_values(mode, align_corners, dtype):
    def scenario(T):
        x = _x(T, (2, 3, 9, 11), dtype)
        out = []
        for kw in AA_CASES:
            y = T.nn.functional.interpolate(x, mode=mode, align_corners=align_corners,
                                            antialias=True, **kw)
            out.append(y)
        # a size-1 axis, and unchanged sizes
        out.append(T.nn.functional.interpolate(_x(T, (1, 2, 1, 6), dtype), size=(3, 6),
                                               mode=mode, align_corners=align_corners,
                                               antialias=True))
        return out
    same(scenario, rtol=1e-4 if dtype == "float32" else 1e-10,
         atol=1e-5 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("mode,align_corners", [("bilinear", False), ("bicubic", True),
                                                ("lanczos", False)])
def test_interpolate_antialias_grads(mode, align_corners):
    def scenario(T):
        x = _x(T, (2, 2, 8, 9), requires_grad=True)
        out = []
        for kw in (dict(size=(3, 4)), dict(size=(13, 5)), dict(scale_factor=0.45)):
            y = T.nn.functional.interpolate(x, mode=mode, align_corners=align_corners,
                                            antialias=True, **kw)
            go = _x(T, tuple(y.shape), seed=1, requires_grad=True)
            gx, = T.autograd.grad(y, x, go, create_graph=True)
            ggo, = T.autograd.grad((gx * gx).sum(), go)
            out.append([y.grad_fn.name(), gx.grad_fn.name(), gx, ggo])
        return out
    same(scenario, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
def test_interpolate_antialias_gradcheck(mode):
    x = _x(ember, (1, 2, 7, 6), requires_grad=True)
    f = lambda t: ember.nn.functional.interpolate(t, size=(3, 8), mode=mode,  # noqa: E731
                                                  antialias=True)
    assert ember.autograd.gradcheck(f, (x,))
    assert ember.autograd.gradgradcheck(f, (x,))


def test_interpolate_antialias_errors():
    def scenario(T):
        F = T.nn.functional
        x = T.ones(1, 1, 4, 4)
        out = [catch(F.interpolate, x.to(dt), size=2, mode=m, antialias=True)
               for dt in (T.float16, T.bfloat16, T.int64, T.uint8, T.bool)
               for m in ("bilinear", "lanczos") if dt is not T.uint8]
        for mode in ("nearest", "linear", "trilinear", "area", "nearest-exact", "bilinear",
                     "bicubic", "lanczos"):
            for shape in ((1, 1, 4), (1, 1, 4, 4), (1, 1, 4, 4, 4)):
                if mode in ("bilinear", "bicubic", "lanczos") and len(shape) == 4:
                    continue
                out.append(catch(F.interpolate, T.ones(*shape), scale_factor=2, mode=mode,
                                 antialias=True))
        out += [catch(F.interpolate, x, size=2, mode="lanczos"),
                catch(F.interpolate, x, size=2, mode="lanczos", align_corners=True,
                      antialias=True),
                catch(F.interpolate, x, size=2, mode="lanczos", align_corners=True),
                catch(F.interpolate, x[0], size=2, mode="lanczos"),
                catch(F.interpolate, x[0], size=(2, 2), mode="bilinear"),
                catch(F.interpolate, x[0, 0], size=2, mode="bilinear"),
                catch(F.interpolate, x, size=2, mode="bilinear", recompute_scale_factor=True),
                catch(F.interpolate, x, size=(0, 2), mode="bicubic", antialias=True),
                catch(F.interpolate, x.half(), size=(0, 2), mode="bicubic", antialias=True),
                catch(F.interpolate, x[:, :, :0], size=2, mode="bicubic", antialias=True),
                catch(F.interpolate, x, scale_factor=(2, 2, 2), mode="bicubic", antialias=True),
                catch(F.interpolate, x, size=2, mode="nearest", align_corners=True,
                      antialias=True)]
        out.append(F.interpolate(T.ones(0, 2, 5, 5), size=(2, 3), mode="bilinear",
                                 antialias=True))
        return out
    same(scenario)


def f(T):
    return T.nn.functional


def _np(t):
    return t.detach().cpu().numpy()


def test_interpolate_errors_match_torch():
    def scenario(T):
        F_, x = f(T), T.ones(2, 4, 6, 6)
        return [catch(F_.interpolate, x[0], size=4, mode="bicubic"),
                catch(F_.interpolate, x[None], size=4, mode="bicubic"),
                catch(F_.interpolate, x, size=4, mode="area", align_corners=True),
                catch(F_.interpolate, x, size=4, mode="nearest", align_corners=False),
                catch(F_.interpolate, x, size=4, mode="foo"),
                catch(F_.interpolate, T.ones(2, 3), size=4, mode="area"),
                catch(F_.interpolate, x, size=3, mode="nearest", antialias=True),
                catch(F_.interpolate, x[0], size=3, mode="linear", antialias=True),
                tuple(F_.interpolate(x, scale_factor=0.7, mode="area",
                                     recompute_scale_factor=True).shape)]
    same(scenario)


@settings(max_examples=30, deadline=None)
@given(mode=st.sampled_from(["bicubic", "area"]), align=st.booleans(),
       n_in=st.tuples(st.integers(1, 7), st.integers(1, 7)),
       n_out=st.tuples(st.integers(1, 9), st.integers(1, 9)),
       scale=st.one_of(st.none(), st.floats(0.3, 3.0)))
def test_interpolate_sizes_sweep_float64(mode, align, n_in, n_out, scale):
    """Any input and output size (or scale factor) gives torch's values and gradients."""
    rng = np.random.default_rng(sum(n_in) * 10 + sum(n_out))
    data = rng.uniform(-1, 1, (1, 2) + n_in)
    kwargs = dict(mode=mode, align_corners=align if mode == "bicubic" else None)
    if scale is None:
        kwargs["size"] = n_out
    else:
        kwargs["scale_factor"] = scale
        out = [int(n * scale) for n in n_in]
        if min(out) < 1:
            return                  # an empty output: an error in both (tested elsewhere)
        if mode == "bicubic" and tuple(out) == n_in:
            # torch's bicubic backward copies the gradient when no size changes, although its
            # forward applies the scale factor: a quirk ember does not reproduce
            return
    outs = []
    for T in (torch, ember):
        x = T.tensor(data, requires_grad=True)
        y = f(T).interpolate(x, **kwargs)
        (y * T.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)))).sum().backward()
        outs.append((_np(y), _np(x.grad)))
    for e, t in zip(outs[1], outs[0]):
        np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12)


def test_deprecated_upsample_functions_warn_and_interpolate():
    def scenario(T):
        F_, x = f(T), T.linspace(-1, 1, 6).reshape(1, 1, 2, 3)
        return [warnings_of(lambda: F_.upsample(x, scale_factor=2)),
                warnings_of(lambda: F_.upsample(x, size=4, mode="bicubic", align_corners=True)),
                warnings_of(lambda: F_.upsample_nearest(x, size=(3, 5))),
                warnings_of(lambda: F_.upsample_bilinear(x, scale_factor=2)),
                warnings_of(lambda: T.nn.UpsamplingBilinear2d(scale_factor=2)(x))]
    same(scenario)
