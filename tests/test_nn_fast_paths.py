"""The fast kernels of convolution and max pooling against PyTorch.

Convolutions with every stride 1 take their windows over the flattened padded image (with
"wide" positions computed and dropped); other strides use the plain windows view. The weight
gradient has two products (per-sample partial products summed, or one product over batch and
positions when the channels outnumber the positions). Max pooling takes its argmax with one
compare per kernel offset, and scatters its gradient directly when windows are disjoint.
Each case here checks values and every gradient against torch on the path named in its id.
"""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
from ember.nn.functional import conv as EF
from ember.nn.functional import pooling as EP

RNG = np.random.default_rng(77)


def _close(t, e, tol):
    """Equal within tol, relative to the largest magnitude of torch's result."""
    assert tuple(t.shape) == tuple(e.shape)
    expected = t.detach().numpy()
    scale = max(1.0, float(np.nanmax(np.abs(expected), initial=0, where=np.isfinite(expected))))
    np.testing.assert_allclose(e.detach().numpy(), expected, rtol=tol, atol=tol * scale)


def _run(T, F, name, arrays, grads, kwargs):
    tensors = [None if a is None else T.tensor(a, requires_grad=g)
               for a, g in zip(arrays, grads)]
    y = getattr(F, name)(*tensors, **kwargs)
    (y * y).sum().backward()
    return y, [None if t is None or not g else t.grad for t, g in zip(tensors, grads)]


def _compare(name, shapes, kwargs, dtype=np.float64, grads=None, tol=1e-9):
    arrays = [None if s is None else RNG.standard_normal(s).astype(dtype) for s in shapes]
    grads = grads or [s is not None for s in shapes]
    ty, tg = _run(torch, TF, name, arrays, grads, kwargs)
    ey, eg = _run(ember, EF, name, arrays, grads, kwargs)
    _close(ty, ey, tol)
    assert type(ey.grad_fn).__name__ == type(ty.grad_fn).__name__
    for t, e in zip(tg, eg):
        assert (t is None) == (e is None)
        if t is not None:
            _close(t, e, tol)


CONV_CASES = {
    # flat windows (every stride 1)
    "2d-flat-padded": ("conv2d", [(2, 3, 7, 6), (4, 3, 3, 3), (4,)], dict(padding=1)),
    "2d-flat-dilated": ("conv2d", [(2, 2, 8, 9), (3, 2, 3, 2), None],
                        dict(padding=(2, 1), dilation=(2, 3))),
    "2d-flat-groups": ("conv2d", [(3, 4, 6, 5), (6, 2, 2, 3), (6,)], dict(groups=2, padding=1)),
    "1d-flat": ("conv1d", [(2, 3, 11), (5, 3, 4), (5,)], dict(padding=2, dilation=2)),
    "3d-flat": ("conv3d", [(2, 2, 4, 5, 6), (3, 2, 2, 3, 2), (3,)],
                dict(padding=(1, 0, 1), dilation=(1, 2, 1))),
    # many channels over few positions: the weight gradient's single-product branch
    "2d-flat-many-channels": ("conv2d", [(3, 4, 2, 2), (40, 2, 3, 3), None],
                              dict(padding=1, groups=2)),
    "2d-strided-many-channels": ("conv2d", [(3, 4, 3, 3), (40, 4, 2, 2), (40,)],
                                 dict(stride=2)),
    # plain windows (a stride above 1 on some axis)
    "2d-strided": ("conv2d", [(2, 3, 9, 8), (4, 3, 3, 2), (4,)],
                   dict(stride=(2, 1), padding=1)),
    "3d-strided": ("conv3d", [(1, 2, 5, 5, 5), (2, 2, 3, 3, 3), None],
                   dict(stride=(1, 2, 1), padding=1)),
    # transposed: the flat fold, with an output size the windows do not fill
    "transposed-flat": ("conv_transpose2d", [(2, 4, 5, 4), (4, 3, 3, 2), (3,)],
                        dict(dilation=2, output_padding=1, padding=1)),
    "transposed-strided": ("conv_transpose2d", [(2, 4, 4, 3), (4, 2, 3, 3), None],
                           dict(stride=2, output_padding=1, groups=2)),
}


@pytest.mark.parametrize("case", sorted(CONV_CASES))
def test_convolution_paths_match_torch(case):
    name, shapes, kwargs = CONV_CASES[case]
    EF._GEOMETRY_CACHE.clear()
    _compare(name, shapes, kwargs)
    # the case ran on the path its name says
    assert {geo.flat for geo in EF._GEOMETRY_CACHE.values()} == {"flat" in case}


def test_benchmark_shapes_match_torch_in_float32():
    """The LeNet and seed-notes convolutions, in float32 as they are trained."""
    _compare("conv2d", [(16, 1, 28, 28), (6, 1, 5, 5), (6,)], dict(padding=2),
             dtype=np.float32, tol=2e-4)
    _compare("conv2d", [(16, 6, 14, 14), (16, 6, 5, 5), (16,)], {}, dtype=np.float32,
             tol=2e-4)
    _compare("conv2d", [(8, 16, 10, 10), (32, 16, 3, 3), None], dict(padding=1),
             dtype=np.float32, tol=2e-4)


def test_input_gradient_is_not_computed_when_not_needed(monkeypatch):
    """The first layer's input needs no gradient: only the weight's is computed."""
    def fail(*args, **kwargs):
        raise AssertionError("input gradient computed")
    monkeypatch.setattr(EF, "_conv_input_grad", fail)
    _compare("conv2d", [(2, 3, 6, 6), (4, 3, 3, 3), (4,)], dict(padding=1),
             grads=[False, True, True])


# ----------------------------------------------------------------------------- max pooling
def _pool_pair(x, kwargs, fn="max_pool2d"):
    results = []
    for T, F in ((torch, TF), (ember, EP)):
        tx = T.tensor(x, requires_grad=x.dtype.kind == "f")
        y, i = getattr(F, fn)(tx, return_indices=True, **kwargs)
        results.append((tx, y, i))
    return results


@pytest.mark.parametrize("kwargs", [
    dict(kernel_size=2),                                   # disjoint windows
    dict(kernel_size=(2, 3), stride=(3, 3)),               # disjoint, with gaps
    dict(kernel_size=3, stride=2, ceil_mode=True),         # overlapping, overhanging
    dict(kernel_size=2, stride=1, dilation=2),             # overlapping
    dict(kernel_size=3, stride=3, padding=1),              # padded
], ids=["disjoint", "gaps", "ceil", "dilated", "padded"])
def test_max_pool2d_ties_nan_and_gradients_match_torch(kwargs):
    x = np.round(RNG.standard_normal((2, 3, 8, 9)), 1)     # rounding makes ties
    x[0, 0, :2, :2] = 0.0
    x[0, 1, 1, 1] = x[0, 1, 0, 1] = np.nan                 # two NaNs in one window
    x[1, 2, :3, :3] = -np.inf
    (tx, ty, ti), (ex, ey, ei) = _pool_pair(x, kwargs)
    np.testing.assert_array_equal(ei.numpy(), ti.numpy())
    _close(ty, ey, 0)
    g = RNG.standard_normal(tuple(ty.shape))
    ty.backward(torch.tensor(g))
    ey.backward(ember.tensor(g))
    _close(tx.grad, ex.grad, 1e-12)


@pytest.mark.parametrize("dtype", ["int32", "bfloat16", "float16"])
def test_max_pool2d_other_dtypes_match_torch(dtype):
    x = RNG.integers(-3, 3, (2, 2, 6, 6))
    tx = torch.tensor(x).to(getattr(torch, dtype))
    ex = ember.tensor(x).to(getattr(ember, dtype))
    for kwargs in (dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1)):
        ty, ti = TF.max_pool2d(tx, return_indices=True, **kwargs)
        ey, ei = EP.max_pool2d(ex, return_indices=True, **kwargs)
        np.testing.assert_array_equal(ei.numpy(), ti.numpy())
        np.testing.assert_array_equal(ey.to(ember.float32).numpy(),
                                      ty.to(torch.float32).numpy())


def test_max_pool3d_disjoint_matches_torch():
    x = RNG.standard_normal((2, 2, 4, 6, 4))
    (tx, ty, ti), (ex, ey, ei) = _pool_pair(x, dict(kernel_size=2), "max_pool3d")
    np.testing.assert_array_equal(ei.numpy(), ti.numpy())
    _close(ty, ey, 0)
    (ty * ty).sum().backward()
    (ey * ey).sum().backward()
    _close(tx.grad, ex.grad, 1e-12)


def test_max_pool1d_window_of_padding_only_scatters_like_torch():
    """A window of padding only reports an index past its one-element plane; torch's backward
    adds its gradient into the next plane's element, and drops the very last one."""
    x = RNG.standard_normal((2, 3, 1))
    grads = []
    for T, F in ((torch, TF), (ember, EP)):
        tx = T.tensor(x, requires_grad=True)
        y = F.max_pool1d(tx, 2, 1, 1, 2)
        (y * y).sum().backward()
        grads.append(tx.grad)
    np.testing.assert_array_equal(grads[1].numpy(), grads[0].numpy())
