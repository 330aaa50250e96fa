"""nll_loss / cross_entropy backward without create_graph: the coefficients times the scalar
gradient written straight into zeros (no recorded multiply). Values and signs of zero as
torch's; with create_graph the recorded path (double backward as torch)."""
import numpy as np
import pytest
import torch

import ember


def _case(T, reduction, weighted, ignore, upstream, loss="nll_loss", create_graph=False):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((12, 7)).astype(np.float32)
    t = rng.integers(0, 7, 12)
    if ignore:
        t[[1, 4]] = 3
    w = rng.uniform(0.5, 2, 7).astype(np.float32)
    xt = T.tensor(x, requires_grad=True)
    kw = dict(reduction=reduction, ignore_index=3 if ignore else -100)
    if weighted:
        kw["weight"] = T.tensor(w)
    inp = xt if loss == "cross_entropy" else T.log_softmax(xt, 1)
    out = getattr(T.nn.functional, loss)(inp, T.tensor(t), **kw)
    g, = T.autograd.grad(out, xt, T.tensor(np.float32(upstream)), create_graph=create_graph)
    return out, g, xt


@pytest.mark.parametrize("loss", ["nll_loss", "cross_entropy"])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore", [False, True])
@pytest.mark.parametrize("upstream", [1.0, -2.5, 0.0])
def test_scalar_loss_gradient_as_torch(loss, reduction, weighted, ignore, upstream):
    _, tg, _ = _case(torch, reduction, weighted, ignore, upstream, loss)
    _, eg, _ = _case(ember, reduction, weighted, ignore, upstream, loss)
    assert eg.dtype == ember.float32
    np.testing.assert_allclose(eg.numpy(), tg.numpy(), rtol=2e-6, atol=1e-7)
    if loss == "nll_loss":     # straight from the nll node's coefficients: signs of zeros too
        _, tn, _ = _case(torch, reduction, weighted, ignore, upstream, "nll_loss")
        np.testing.assert_array_equal(np.signbit(eg.numpy()), np.signbit(tn.numpy()))


def test_nll_gradient_is_zero_not_minus_zero_off_the_targets():
    x = [[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]]
    out = []
    for T in (torch, ember):
        xt = T.tensor(x, requires_grad=True)
        g, = T.autograd.grad(T.nn.functional.nll_loss(xt, T.tensor([2, 0])), xt,
                             T.tensor(-1.0))
        out.append(g.numpy())
    np.testing.assert_array_equal(out[1], out[0])
    np.testing.assert_array_equal(np.signbit(out[1]), np.signbit(out[0]))


def test_create_graph_keeps_the_recorded_path():
    results = []
    for T in (torch, ember):
        out, g, xt = _case(T, "mean", True, True, 1.5, "cross_entropy", create_graph=True)
        assert g.requires_grad
        gg, = T.autograd.grad((g * g).sum(), xt)
        results.append((g.detach().numpy(), gg.numpy()))
    for e, t in zip(results[1], results[0]):
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-7)
