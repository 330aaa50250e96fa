"""The fast paths of the training hot ops, against torch.

- softmax / log_softmax along the last dim of contiguous float rows (row max by argmax, row
  sums by einsum): not bit-equal to torch (its sums add in another order), so values are
  compared within a few float32 ulps (see the test), and special rows (all -inf, +inf, nan)
  as torch;
- backward without create_graph: mm/addmm gradients computed on the arrays, broadcast (bias)
  gradients summed straight to shape; values and layouts as torch, and with create_graph the
  graph is still built (double backward as torch);
- the in-place error still names the user's file and line.
"""
import numpy as np
import pytest
import torch

import ember


def _err(e, t, fn):
    """softmax: the largest error relative to each value; log_softmax: the largest error in
    ulps of max(|value|, 1) (its values near 0 are differences of nearly equal terms)."""
    e, t = e.astype(np.float64), t.astype(np.float64)
    if fn == "softmax":
        return float(np.max(np.abs(e - t) / np.maximum(np.abs(t), 1e-38)))
    unit = np.spacing(np.maximum(np.abs(t), 1).astype(np.float32)).astype(np.float64)
    return float(np.max(np.abs(e - t) / unit))


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape", [(16, 4, 64, 64), (1024, 65), (7,), (3, 1)])
def test_softmax_rows_within_ulps_of_torch_forward_and_backward(fn, shape):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 4).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    out = []
    for T in (torch, ember):
        xt = T.tensor(x, requires_grad=True)
        y = getattr(T, fn)(xt, -1)
        gx, = T.autograd.grad(y, xt, T.tensor(g))
        out.append((y.detach().numpy(), gx.numpy(), y.grad_fn.name()))
    (ty, tg, tn), (ey, eg, en) = out
    assert en == tn
    assert ey.dtype == eg.dtype == np.float32
    # (measured on these inputs: softmax within 5.6e-7 relative, log_softmax within 3 ulps;
    # the general path before the fast one: 5.2e-7 and 3 ulps)
    assert _err(ey, ty, fn) <= (1e-6 if fn == "softmax" else 4)
    # the gradient is a difference of nearly equal terms: ulps of its largest value
    # (measured: <= 13.75; the general path: <= 11.5)
    scale = np.spacing(np.max(np.abs(tg)))
    assert np.max(np.abs(eg.astype(np.float64) - tg)) <= 16 * scale


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_rows_special_values_as_torch(fn):
    inf, nan = float("inf"), float("nan")
    # (a row holding +inf is all nan in torch: x - max is nan there)
    rows = [[-inf, -inf, -inf], [1.0, -inf, 2.0], [nan, 0.0, 1.0], [1e30, -1e30, 0.0],
            [88.0, 89.0, -200.0], [inf, 1.0, 2.0], [inf, inf, 0.0]]
    # contiguous rows along the last dim take the fast path; the transposed input along dim 0
    # the general one
    for transpose, dim in ((False, -1), (True, 0)):
        t_in, e_in = torch.tensor(rows), ember.tensor(rows)
        if transpose:
            t_in, e_in = t_in.T, e_in.T
        t = getattr(torch, fn)(t_in, dim).numpy()
        e = getattr(ember, fn)(e_in, dim).numpy()
        np.testing.assert_array_equal(np.isnan(e), np.isnan(t))
        np.testing.assert_allclose(e, t, rtol=1e-6, atol=0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_fast_and_general_paths_agree(dtype):
    # a permuted input (not contiguous rows) takes the general path; the same values
    rng = np.random.default_rng(1)
    x = ember.tensor(rng.standard_normal((5, 6, 7)).astype(dtype))
    fast = ember.softmax(x, -1)
    general = ember.softmax(x.transpose(0, 2), 0).transpose(0, 2)
    np.testing.assert_allclose(fast.numpy(), general.numpy(), rtol=4e-7 if dtype == "float32"
                               else 1e-15)
    # torch's result along a middle dim, through the general path
    t = torch.softmax(torch.from_numpy(x.numpy()), 1).numpy()
    np.testing.assert_allclose(ember.softmax(x, 1).numpy(), t, rtol=1e-6)


def _mlp(T, x, seed=0):
    rng = np.random.default_rng(seed)
    w1 = T.tensor(rng.standard_normal((8, 5)).astype(np.float32), requires_grad=True)
    b1 = T.tensor(rng.standard_normal(8).astype(np.float32), requires_grad=True)
    w2 = T.tensor(rng.standard_normal((3, 8)).astype(np.float32), requires_grad=True)
    b2 = T.tensor(rng.standard_normal(3).astype(np.float32), requires_grad=True)
    h = T.nn.functional.linear(T.tensor(x), w1, b1).tanh()
    y = T.nn.functional.linear(h, w2, b2)
    return (w1, b1, w2, b2), y


@pytest.mark.parametrize("shape", [(4, 5), (2, 3, 5)])
def test_linear_backward_values_and_grad_layouts_as_torch(shape):
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    grads = []
    for T in (torch, ember):
        params, y = _mlp(T, x)
        (y * y).sum().backward()
        grads.append([(p.grad.numpy(), p.grad.is_contiguous(), p.grad.stride())
                      for p in params])
    for (tg, tc, ts), (eg, ec, es) in zip(*grads):
        np.testing.assert_allclose(eg, tg, rtol=1e-5, atol=1e-6)
        assert (ec, es) == (tc, ts)


def test_bias_and_weight_grads_become_grad_without_a_view():
    params, y = _mlp(ember, np.ones((4, 5), np.float32))
    y.sum().backward()
    for p in params:
        assert p.grad._base is None and p.grad.grad_fn is None


def test_linear_double_backward_still_recorded_as_torch():
    x = np.random.default_rng(3).standard_normal((4, 5)).astype(np.float32)
    out = []
    for T in (torch, ember):
        params, y = _mlp(T, x)
        grads = T.autograd.grad((y * y).sum(), params, create_graph=True)
        assert all(g.requires_grad for g in grads)
        names = [g.grad_fn.name() for g in grads]
        second = T.autograd.grad(sum((g * g).sum() for g in grads), params)
        out.append((names, [g.detach().numpy() for g in grads], [s.numpy() for s in second]))
    (tn, tg, ts), (en, eg, es) = out
    assert en == tn
    for a, b in zip(eg + es, tg + ts):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_inplace_error_names_the_users_line():
    x = ember.ones(3, requires_grad=True)
    y = x.exp()
    z = y * y
    y.add_(1)
    line = test_inplace_error_names_the_users_line.__code__.co_firstlineno + 4
    with pytest.raises(RuntimeError) as err:
        z.sum().backward()
    assert f"{__file__}:{line}" in str(err.value)
    assert "is at version 1; expected version 0 instead" in str(err.value)
