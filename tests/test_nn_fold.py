"""nn.Fold / nn.Unfold (F.fold / F.unfold) against torch: geometry errors and round-trip gradients.
"""
import numpy as np
import pytest
from differential import catch, same


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def fwd_bwd(T, fn, x):
    """fn(x), the input gradient under a fixed upstream gradient, and the output's grad_fn."""
    t = T.tensor(x, requires_grad=True)
    y = fn(t)
    w = T.tensor(np.random.default_rng(1).standard_normal(tuple(y.shape)), dtype=y.dtype)
    (y * w).sum().backward()
    return y, t.grad, type(y.grad_fn).__name__


# ---------------------------------------------------------------- fold / unfold
def test_fold_unfold_geometry_errors():
    def f(T):
        F = T.nn.functional
        out = [catch(F.unfold, T.ones(1, 1, 3, 3), 4),
               catch(F.unfold, T.ones(1, 1, 3, 3), 2, dilation=3),
               catch(F.unfold, T.ones(1, 1, 3, 5), (2, 3), padding=(0, 1), stride=(1, 9)).shape]
        for kw in (dict(kernel_size=0), dict(kernel_size=2, dilation=0),
                   dict(kernel_size=2, padding=-1), dict(kernel_size=(2, 0), stride=0),
                   dict(kernel_size=2, stride=(1, 0)), dict(kernel_size=2, padding=-1, stride=0),
                   dict(kernel_size=2, dilation=0, stride=0), dict(kernel_size=2, dilation=0, padding=-1)):
            out += [catch(F.unfold, T.ones(1, 1, 3, 3), **kw),
                    catch(F.fold, T.ones(1, 4, 4), (3, 3), **kw)]
        return out
    same(f)


@pytest.mark.parametrize("kw", [dict(kernel_size=3, dilation=2, padding=1, stride=2),
                                dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 0),
                                     dilation=(2, 1))])
def test_fold_unfold_round_trip_gradients(kw):
    x = randn(2, 2, 6, 9)

    def f(T):
        F = T.nn.functional
        cols = F.unfold(T.tensor(x), **kw)
        return (fwd_bwd(T, lambda t: F.unfold(t, **kw), x),
                fwd_bwd(T, lambda t: F.fold(t, (6, 9), **kw), cols.numpy()))
    same(f)
