"""The activation functions of torch.nn.functional / torch.nn (shrinks, rrelu, gumbel_softmax, ...) against torch: values, gradients, graph node names, reprs, warnings and errors.
"""
import numpy as np
import pytest
import torch
import ember
from differential import catch, same, warnings_of
from opinfo import graph_names
from nn_helpers import F, _observe


RNG = np.random.default_rng(11)


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


def f(T):
    return T.nn.functional


def _np(t):
    return t.detach().cpu().numpy()


# ----------------------------------------------------------------------------- errors
def test_activation_errors_match_torch():
    def scenario(T):
        F_, x = f(T), T.ones(2, 3)
        return [catch(F_.softshrink, x, -1.0), catch(F_.softshrink, x.double(), -0.5),
                catch(F_.softshrink, T.tensor([1, 2]), 0.5),
                catch(F_.hardshrink, T.tensor([1, 2]), 0.5),
                catch(F_.rrelu, x, 0.5, 0.1), catch(T.nn.Softmax2d(), x),
                catch(F_.rrelu, T.ones(2, requires_grad=True), training=True, inplace=True)]
    same(scenario)


# ----------------------------------------------------------------------------- random ops
def test_rrelu_training_slopes_lie_between_the_bounds():
    ember.manual_seed(0)
    x = ember.tensor(np.linspace(-3, 3, 2001), requires_grad=True)
    y = ember.nn.functional.rrelu(x, 0.1, 0.3, training=True)
    assert y.grad_fn.name() == "RreluWithNoiseBackward0"
    data, out = x.detach().numpy(), y.detach().numpy()
    neg = data < 0
    slopes = out[neg] / data[neg]
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3
    assert slopes.std() > 0.04            # drawn per element, not one slope for all
    np.testing.assert_array_equal(out[~neg], data[~neg])
    y.sum().backward()
    # the gradient is each element's slope (1 where x > 0)
    np.testing.assert_allclose(x.grad.numpy()[neg], slopes, rtol=1e-12)
    np.testing.assert_array_equal(x.grad.numpy()[data > 0], 1.0)


def test_rrelu_module_draws_only_in_training():
    m = ember.nn.RReLU(0.2, 0.4)
    x = ember.full((1000,), -1.0)
    slopes = -m(x).numpy()
    assert 0.2 <= slopes.min() and slopes.max() <= 0.4 and slopes.std() > 0.03
    m.eval()
    np.testing.assert_allclose(-m(x).numpy(), 0.3, rtol=1e-6)
    t = torch.nn.RReLU(0.2, 0.4).eval()
    np.testing.assert_allclose(m(x).numpy(), t(torch.full((1000,), -1.0)).numpy())


ACTIVATIONS = ["elu", "selu", "celu", "gelu", "silu", "mish", "softplus", "hardsigmoid",
               "hardswish", "leaky_relu", "hardtanh", "relu6", "logsigmoid", "softsign",
               "threshold", "relu", "tanhshrink", "hardshrink", "softshrink", "rrelu"]


# their backward is a node of its own in torch (HardshrinkBackwardBackward0, ...)
PIECEWISE_LINEAR = {"leaky_relu", "hardtanh", "relu6", "threshold", "relu", "hardshrink",
                    "softshrink", "rrelu"}


# torch has no second derivative for hardsigmoid (ember's is zeros)
NO_SECOND_DERIVATIVE_IN_TORCH = {"hardsigmoid"}


INPLACE_ACTIVATIONS = ["elu", "selu", "celu", "silu", "mish", "hardsigmoid", "hardswish",
                       "leaky_relu", "hardtanh", "relu6", "threshold", "relu", "rrelu"]


ACTIVATION_CASES = [(n, False) for n in ACTIVATIONS] + [(n, True) for n in INPLACE_ACTIVATIONS]


def test_inplace_activation_list_is_torchs():
    def has_inplace(name):
        fn = getattr(torch.nn.functional, name)
        return hasattr(fn, "__code__") and "inplace" in fn.__code__.co_varnames
    assert INPLACE_ACTIVATIONS == [n for n in ACTIVATIONS if has_inplace(n)]


def _names(node):
    return [n.replace("torch::autograd::", "") if n else n for n in graph_names(node)]


@pytest.mark.parametrize("name,inplace", ACTIVATION_CASES)
def test_activation_first_and_second_derivatives(name, inplace):
    """Values, gradients and gradients of gradients (zeros where the op is piecewise linear)
    in float64, and the node names (ThresholdBackward1 ... for the in-place forms)."""
    data = np.random.default_rng(0).uniform(-4, 4, 50)
    args = (0.5, -1.0) if name == "threshold" else ()
    results = []
    for T in (torch, ember):
        x = T.tensor(data, requires_grad=True)
        y = getattr(f(T), name)(x * 1 if inplace else x, *args,
                                **(dict(inplace=True) if inplace else {}))
        g, = T.autograd.grad(y, x, T.ones_like(y, requires_grad=True), create_graph=True)
        gg = None
        if g.requires_grad and name not in NO_SECOND_DERIVATIVE_IN_TORCH:
            gg = T.autograd.grad(g.sum(), x, allow_unused=True)[0]
        second = _names(g.grad_fn) if name in PIECEWISE_LINEAR and not inplace else None
        results.append((_np(y), _np(g), None if gg is None else _np(gg), _names(y.grad_fn),
                        second))
    (ty, tg, tgg, tn, t2), (ey, eg, egg, en, e2) = results
    assert en == tn and e2 == t2
    np.testing.assert_allclose(ey, ty, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(eg, tg, rtol=1e-12, atol=1e-14)
    assert (egg is None) == (tgg is None)
    if tgg is not None:
        np.testing.assert_allclose(egg, tgg, rtol=1e-10, atol=1e-12)
