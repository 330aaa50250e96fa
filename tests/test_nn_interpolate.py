"""F.interpolate and nn.Upsample against torch: modes (nearest-exact, antialias, lanczos), values, gradients and errors.
"""
import numpy as np
import pytest
from differential import catch, same, warnings_of


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
