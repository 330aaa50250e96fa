"""The short cuts of the record path behave as the general path and as torch.

- F.linear on a 2-D float input with a bias computes and records addmm itself (the transposed
  weight's TBackward0, then AddmmBackward0), skipping addmm's public checks and op dispatch;
- a gradient reduced to its input's shape (a bias's) is summed by NumPy directly when nothing
  records, with the sum op's accumulation (the same bits as `sum_to_size`).

Each is compared with torch (values, gradients, node names, errors) and, where the result must
be bit for bit what the general path gives, with ember's general path.
"""
import numpy as np
import pytest
import torch

import ember
from differential import catch, same
from opinfo import graph_names


def _arrays(dtype, batch=5, fan_in=3, fan_out=4, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((batch, fan_in)).astype(dtype),
            rng.standard_normal((fan_out, fan_in)).astype(dtype),
            rng.standard_normal(fan_out).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("needs", [(True, True, True), (False, True, True),
                                   (True, False, False), (False, False, True),
                                   (False, True, False)])
def test_linear_values_grads_and_graph_as_torch(dtype, needs):
    x, w, b = _arrays(dtype)

    def scenario(T):
        xt, wt, bt = (T.tensor(a, requires_grad=r) for a, r in zip((x, w, b), needs))
        out = T.nn.functional.linear(xt, wt, bt)
        names = graph_names(out.grad_fn)
        if out.requires_grad:
            (out * out).sum().backward()
        return out, names, out.requires_grad, [t.grad for t in (xt, wt, bt)]
    same(scenario)


def test_linear_module_step_as_torch():
    """nn.Linear layers, tanh between them, two steps of Adam: the losses and weights."""
    x, _, _ = _arrays(np.float32, batch=8, fan_in=2)
    y = np.sin(x[:, :1])

    def scenario(T):
        T.manual_seed(0)
        model = T.nn.Sequential(T.nn.Linear(2, 6), T.nn.Tanh(), T.nn.Linear(6, 1))
        opt = T.optim.Adam(model.parameters(), lr=1e-2)
        losses = []
        for _ in range(2):
            opt.zero_grad()
            loss = T.nn.functional.mse_loss(model(T.tensor(x)), T.tensor(y))
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses, [p.detach() for p in model.parameters()]
    same(scenario)


def test_linear_no_grad_and_inference_mode_as_torch():
    x, w, b = _arrays(np.float32)

    def scenario(T):
        wt, bt = T.tensor(w, requires_grad=True), T.tensor(b, requires_grad=True)
        with T.no_grad():
            plain = T.nn.functional.linear(T.tensor(x), wt, bt)
        with T.inference_mode():
            inference = T.nn.functional.linear(T.tensor(x), wt, bt)
        return (plain, plain.requires_grad, plain.grad_fn is None, inference,
                inference.is_inference(), inference.requires_grad)
    same(scenario)


def test_linear_weight_written_after_forward_raises_torchs_error():
    x, w, b = _arrays(np.float32)

    def scenario(T):
        xt = T.tensor(x, requires_grad=True)
        wt, bt = T.tensor(w, requires_grad=True), T.tensor(b, requires_grad=True)
        out = T.nn.functional.linear(xt, wt * 1, bt)
        source = out.grad_fn.next_functions[2][0].next_functions[0][0]
        with T.no_grad():
            xt.mul_(2)          # the input, saved by addmm for the weight's gradient
        return source.name(), catch(out.sum().backward)
    same(scenario)


def test_linear_double_backward_as_torch():
    x, w, b = _arrays(np.float64)

    def scenario(T):
        xt, wt, bt = (T.tensor(a, requires_grad=True) for a in (x, w, b))
        out = T.nn.functional.linear(xt, wt, bt)
        gx, = T.autograd.grad(out.tanh().sum(), xt, create_graph=True)
        gx.pow(2).sum().backward()
        return gx, graph_names(gx.grad_fn), wt.grad, bt.grad
    same(scenario)


def test_linear_hooks_see_torchs_gradients():
    x, w, b = _arrays(np.float32)

    def scenario(T):
        xt = T.tensor(x)
        wt, bt = T.tensor(w, requires_grad=True), T.tensor(b, requires_grad=True)
        seen = []
        wt.register_hook(lambda g: seen.append(("weight", g.clone())))
        bt.register_hook(lambda g: seen.append(("bias", g.clone())) or g * 2)
        T.nn.functional.linear(xt, wt, bt).sum().backward()
        return seen, wt.grad, bt.grad
    same(scenario)


def test_linear_general_path_cases_still_as_torch():
    """What the short cut leaves to addmm/matmul: a 3-D input, no bias, mismatched shapes,
    mixed dtypes."""
    x, w, b = _arrays(np.float32)

    def scenario(T):
        F = T.nn.functional
        xt, wt, bt = (T.tensor(a, requires_grad=True) for a in (x, w, b))
        three = F.linear(xt.reshape(1, 5, 3), wt, bt)
        return (three, graph_names(three.grad_fn), F.linear(xt, wt),
                catch(F.linear, xt, wt.t(), bt),
                catch(F.linear, xt, wt, T.zeros(3)),
                catch(F.linear, xt.double(), wt, bt))
    same(scenario)


def test_linear_short_cut_gives_the_general_paths_bits():
    x, w, b = _arrays(np.float32, batch=33, fan_in=70, fan_out=9)
    xt, wt, bt = (ember.tensor(a, requires_grad=True) for a in (x, w, b))
    fast = ember.nn.functional.linear(xt, wt, bt)
    general = ember.addmm(bt, xt, wt.t())
    assert fast._data.tobytes() == general._data.tobytes()
    assert graph_names(fast.grad_fn) == graph_names(general.grad_fn)
    assert fast.grad_fn._saved_beta == general.grad_fn._saved_beta == 1
    assert fast.grad_fn._saved_alpha == general.grad_fn._saved_alpha == 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, target", [((40, 7), (7,)), ((5000, 3), (3,)),
                                           ((3, 5000), (3, 1)), ((6, 5, 4), (5, 1)),
                                           ((4, 3), (1, 1))])
def test_broadcast_gradient_sum_as_torch(dtype, shape, target):
    """The gradient of an input broadcast against a larger one (bias-like), long serial float32
    sums included (which widen to float64, as torch's sums are accurate)."""
    rng = np.random.default_rng(1)
    big = rng.standard_normal(shape).astype(dtype)
    small = rng.standard_normal(target).astype(dtype)

    def scenario(T):
        s = T.tensor(small, requires_grad=True)
        (T.tensor(big) * (T.tensor(big) + s)).sum().backward()
        return s.grad
    same(scenario, rtol=1e-4 if dtype == np.float32 else 1e-10)


@pytest.mark.parametrize("shape, target", [((40, 7), (7,)), ((5000, 3), (3,)),
                                           ((3, 5000), (3, 1)), ((6, 5, 4), (5, 1)),
                                           ((2, 3), ())])
def test_broadcast_gradient_sum_gives_sum_to_size_bits(shape, target):
    rng = np.random.default_rng(2)
    big = ember.tensor(rng.standard_normal(shape).astype(np.float32) * 100)
    s = ember.tensor(rng.standard_normal(target).astype(np.float32), requires_grad=True)
    (big + s).backward(big)
    expected = big.sum_to_size(target)
    assert s.grad.shape == expected.shape
    assert s.grad._data.tobytes() == expected._data.tobytes()
    assert s.grad._data.flags.c_contiguous
