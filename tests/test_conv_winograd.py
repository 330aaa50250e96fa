"""3x3 stride-1 convolutions computed by Winograd F(2x2, 3x3) (ember/_winograd.py) against
torch: values and all three gradients over shapes, paddings, with and without bias, float32
and float64; the fallback to the direct sums for inf/NaN; the same bits at 1 and 2 threads;
double backward."""
import numpy as np
import pytest
import torch

import ember
from ember import _winograd
from ember.autograd import gradcheck, gradgradcheck


@pytest.fixture
def calls(monkeypatch):
    """Counts the Winograd forward/backward calls, and how many gave a result (not None);
    small shapes take the Winograd path too (its speed thresholds off)."""
    monkeypatch.setattr(_winograd, "MIN_CHANNELS", 1)
    monkeypatch.setattr(_winograd, "MIN_PLANE", 1)
    seen = {"forward": [], "backward": []}
    for name in seen:
        real = getattr(_winograd, name)

        def spy(*args, _real=real, _name=name, **kwargs):
            out = _real(*args, **kwargs)
            seen[_name].append(out is not None)
            return out
        monkeypatch.setattr(_winograd, name, spy)
    return seen


def _rand(rng, shape, dtype, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(dtype)


def _run(T, x, w, b, g, padding, grads=(True, True, True)):
    xt, wt = T.tensor(x, requires_grad=grads[0]), T.tensor(w, requires_grad=grads[1])
    bt = None if b is None else T.tensor(b, requires_grad=grads[2])
    y = T.nn.functional.conv2d(xt, wt, bt, padding=padding)
    y.backward(T.tensor(g))
    return [y.detach().numpy()] + [None if t is None or t.grad is None else t.grad.numpy()
                                   for t in (xt, wt, bt)]


def _close(mine, ref, dtype):
    """float64: 1e-10; float32: a few ulps of the largest value (torch sums in another
    order), as tests/test_nn_kernels_threads.py states it for the direct path."""
    assert (mine is None) == (ref is None)
    if ref is None:
        return
    assert mine.shape == ref.shape and mine.dtype == ref.dtype
    tol = 1e-10 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(mine, ref, rtol=tol, atol=tol * float(np.abs(ref).max()))


SHAPES = [
    # n, c, o, h, w, padding
    (4, 8, 8, 10, 10, 0),
    (3, 8, 12, 9, 7, 0),            # odd output sizes: the last tile half used
    (2, 16, 8, 6, 5, 1),
    (5, 10, 9, 3, 4, (0, 1)),
    (2, 8, 16, 7, 8, (1, 0)),
    (1, 8, 8, 1, 1, 1),             # one output pixel
    (3, 9, 8, 3, 3, 0),
    (2, 8, 8, 5, 6, 2),             # padding wider than the kernel's reach
    (17, 32, 24, 12, 12, 0),        # several chunks of the batch
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", SHAPES)
def test_values_and_gradients_match_torch(calls, shape, bias, dtype):
    n, c, o, h, w, padding = shape
    rng = np.random.default_rng(hash(shape) % 1000)
    x, wt = _rand(rng, (n, c, h, w), dtype), _rand(rng, (o, c, 3, 3), dtype, 0.2)
    b = _rand(rng, o, dtype) if bias else None
    out = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(wt), padding=padding).shape
    g = _rand(rng, tuple(out), dtype)
    mine = _run(ember, x, wt, b, g, padding)
    for m, r in zip(mine, _run(torch, x, wt, b, g, padding)):
        _close(m, r, dtype)
    assert calls["forward"] == [True] and calls["backward"] == [True]


@pytest.mark.parametrize("grads", [(True, False, False), (False, True, True)])
def test_one_gradient_only(calls, grads):
    rng = np.random.default_rng(3)
    x, w, b = _rand(rng, (3, 8, 9, 9), np.float32), _rand(rng, (8, 8, 3, 3), np.float32), \
        _rand(rng, 8, np.float32)
    g = _rand(rng, (3, 8, 9, 9), np.float32)
    mine = _run(ember, x, w, b, g, 1, grads)
    for m, r in zip(mine, _run(torch, x, w, b, g, 1, grads)):
        _close(m, r, np.float32)
    assert calls["backward"] == [True]


@pytest.mark.parametrize("shape, used", [
    ((2, 32, 64, 26, 26, 0), True),     # the MNIST CNN's second convolution
    ((2, 16, 16, 22, 22, 1), True),
    ((2, 8, 32, 26, 26, 0), False),     # too few input channels
    ((2, 32, 8, 26, 26, 0), False),     # too few output channels
    ((2, 64, 64, 14, 14, 1), False),    # too small an image
])
def test_which_shapes_take_the_winograd_path(calls, monkeypatch, shape, used):
    monkeypatch.setattr(_winograd, "MIN_CHANNELS", 16)
    monkeypatch.setattr(_winograd, "MIN_PLANE", 144)
    n, c, o, h, w, padding = shape
    rng = np.random.default_rng(4)
    x, wt = _rand(rng, (n, c, h, w), np.float32), _rand(rng, (o, c, 3, 3), np.float32, 0.1)
    y = ember.nn.functional.conv2d(ember.tensor(x), ember.tensor(wt), padding=padding)
    ref = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(wt), padding=padding)
    _close(y.numpy(), ref.numpy(), np.float32)
    assert calls["forward"] == ([True] if used else [])


def test_small_channel_counts_keep_the_direct_path(calls, monkeypatch):
    monkeypatch.setattr(_winograd, "MIN_CHANNELS", 2)
    rng = np.random.default_rng(4)
    x, w = _rand(rng, (2, 1, 8, 8), np.float32), _rand(rng, (8, 1, 3, 3), np.float32)
    y = ember.nn.functional.conv2d(ember.tensor(x), ember.tensor(w))
    ref = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w))
    _close(y.numpy(), ref.numpy(), np.float32)
    assert calls["forward"] == []


@pytest.mark.parametrize("kw", [{"stride": 2}, {"dilation": 2}, {"groups": 2}])
def test_other_geometries_keep_the_direct_path(calls, kw):
    rng = np.random.default_rng(5)
    x = _rand(rng, (2, 16, 9, 9), np.float32)
    w = _rand(rng, (16, 16 // kw.get("groups", 1), 3, 3), np.float32)
    y = ember.nn.functional.conv2d(ember.tensor(x), ember.tensor(w), **kw)
    ref = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), **kw)
    _close(y.numpy(), ref.numpy(), np.float32)
    assert calls["forward"] == []


@pytest.mark.parametrize("value", [np.inf, -np.inf, np.nan])
def test_inf_and_nan_fall_back_to_the_direct_sums(calls, value):
    # Winograd's transforms subtract inputs: an inf would give NaN where the direct sum
    # gives inf; ember notices the non-finite result and recomputes it directly
    rng = np.random.default_rng(6)
    x, w, b = _rand(rng, (2, 8, 8, 8), np.float32), _rand(rng, (8, 8, 3, 3), np.float32), \
        _rand(rng, 8, np.float32)
    x[1, 3, 4, 5] = value
    g = _rand(rng, (2, 8, 6, 6), np.float32)
    mine = _run(ember, x, w, b, g, 0)
    ref = _run(torch, x, w, b, g, 0)
    for m, r in zip(mine, ref):
        np.testing.assert_array_equal(np.isnan(m), np.isnan(r))
        np.testing.assert_array_equal(np.isinf(m), np.isinf(r))
        finite = np.isfinite(r)
        np.testing.assert_allclose(m[finite], r[finite], rtol=1e-5, atol=1e-4)
    assert calls["forward"] == [False] and calls["backward"] == [False]


def test_inf_gradient_falls_back(calls):
    rng = np.random.default_rng(7)
    x, w = _rand(rng, (2, 8, 6, 6), np.float32), _rand(rng, (8, 8, 3, 3), np.float32)
    g = _rand(rng, (2, 8, 4, 4), np.float32)
    g[0, 2, 1, 1] = np.inf
    mine, ref = _run(ember, x, w, None, g, 0), _run(torch, x, w, None, g, 0)
    for m, r in zip(mine[:3], ref[:3]):
        np.testing.assert_array_equal(np.isnan(m), np.isnan(r))
        np.testing.assert_array_equal(np.isinf(m), np.isinf(r))
    assert calls["forward"] == [True] and calls["backward"] == [False]


# (the MNIST CNN's conv2: its forward and backward take 1-sample chunks at 1 thread and
# 5-sample chunks at 2, which must not change the bits)
@pytest.mark.parametrize("n,c,o,size,padding", [(24, 16, 16, 14, 1), (64, 32, 64, 26, 0)])
def test_same_bits_at_one_and_two_threads(calls, n, c, o, size, padding):
    rng = np.random.default_rng(8)
    x, w, b = _rand(rng, (n, c, size, size), np.float32), _rand(rng, (o, c, 3, 3), np.float32), \
        _rand(rng, o, np.float32)
    out = size + 2 * padding - 2
    g = _rand(rng, (n, o, out, out), np.float32)
    before = ember.get_num_threads()
    try:
        results = []
        for threads in (1, 2):
            ember.set_num_threads(threads)
            results.append(_run(ember, x, w, b, g, padding))
    finally:
        ember.set_num_threads(before)
    for one, two in zip(*results):
        np.testing.assert_array_equal(one.view(np.uint32), two.view(np.uint32))
    assert calls["forward"] == [True, True]


def test_float32_accuracy_against_float64(calls):
    # the MNIST CNN's second convolution: F(2x2, 3x3) stays as close to the exact result as
    # torch's own float32 kernel (within 2x of its error)
    rng = np.random.default_rng(9)
    x, w = _rand(rng, (8, 32, 26, 26), np.float32), _rand(rng, (64, 32, 3, 3), np.float32, 0.1)
    g = _rand(rng, (8, 64, 24, 24), np.float32)
    exact = _run(torch, x.astype(np.float64), w.astype(np.float64), None,
                 g.astype(np.float64), 0)
    mine, theirs = _run(ember, x, w, None, g, 0), _run(torch, x, w, None, g, 0)
    for m, t, e in zip(mine[:3], theirs[:3], exact[:3]):
        assert np.abs(m - e).max() <= 2 * np.abs(t - e).max()
    assert calls["forward"] == [True] and calls["backward"] == [True]


def test_double_backward(calls):
    rng = np.random.default_rng(10)
    x = ember.tensor(rng.standard_normal((2, 8, 5, 5)), requires_grad=True)
    w = ember.tensor(rng.standard_normal((8, 8, 3, 3)), requires_grad=True)
    b = ember.tensor(rng.standard_normal(8), requires_grad=True)

    def fn(x, w, b):
        return ember.nn.functional.conv2d(x, w, b, padding=1)
    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))
    assert calls["forward"] and all(calls["forward"]) and all(calls["backward"])
