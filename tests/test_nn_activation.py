"""The activation functions of torch.nn.functional / torch.nn (shrinks, rrelu, gumbel_softmax, ...) against torch: values, gradients, graph node names, reprs, warnings and errors.
"""
import numpy as np
import pytest
import torch
import ember
from differential import catch, same, warnings_of
from opinfo import graph_names


RNG = np.random.default_rng(11)


def F(T):
    return T.nn.functional


def _weights(shape, dtype):
    return np.random.default_rng(1).standard_normal(tuple(shape)).astype(dtype)


def _observe(T, fn, *arrays):
    """fn(T, *tensors)'s outputs, the gradient of a random weighting of its first output with
    respect to each float input, and the node names of that output's graph."""
    xs = [T.tensor(a.copy(), requires_grad=a.dtype.kind == "f") for a in arrays]
    out = fn(T, *xs)
    y = out[0] if isinstance(out, tuple) else out
    w = T.tensor(_weights(y.shape, arrays[0].dtype))
    grads = T.autograd.grad((y * w).sum(), [x for x in xs if x.requires_grad])
    return out, grads, graph_names(y.grad_fn)


def randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# ---------------------------------------------------------------- gumbel_softmax
@pytest.fixture
def fixed_noise(monkeypatch):
    """Make `Tensor.exponential_` fill with the same numbers in both libraries."""
    def patch(array):
        for T in (torch, ember):
            def exponential_(self, lambd=1.0, *, generator=None, T=T):
                return self.copy_(T.tensor(array, dtype=self.dtype))
            monkeypatch.setattr(T.Tensor, "exponential_", exponential_)
    return patch


@pytest.mark.parametrize("hard", [False, True])
@pytest.mark.parametrize("tau,dim", [(1, -1), (0.5, 0), (2.0, 1)])
def test_gumbel_softmax_with_fixed_noise(fixed_noise, hard, tau, dim):
    logits = randn(4, 5, 3)
    fixed_noise(RNG.exponential(size=logits.shape).astype(np.float32))
    same(lambda T: _observe(T, lambda T, x: F(T).gumbel_softmax(x, tau, hard, dim=dim), logits))


def test_gumbel_softmax_structure_with_ember_noise():
    logits = ember.tensor(randn(6, 4), requires_grad=True)
    soft = ember.nn.functional.gumbel_softmax(logits, tau=0.7)
    hard = ember.nn.functional.gumbel_softmax(logits, hard=True)
    np.testing.assert_allclose(soft.sum(-1).detach().numpy(), np.ones(6), rtol=1e-6)
    assert ((hard == 0) | (hard == 1)).all().item()
    np.testing.assert_array_equal(hard.sum(-1).detach().numpy(), np.ones(6))
    # straight through: the gradient of a one-hot sample is the soft sample's, which sums to
    # zero over each row for a constant upstream gradient
    (g,) = ember.autograd.grad(hard.sum(), logits)
    np.testing.assert_allclose(g.numpy(), np.zeros((6, 4)), atol=1e-6)


def test_gumbel_softmax_eps_warning(fixed_noise):
    fixed_noise(np.ones((2, 3), dtype=np.float32))
    same(lambda T: warnings_of(lambda: F(T).gumbel_softmax(T.zeros(2, 3), eps=1e-3)))
