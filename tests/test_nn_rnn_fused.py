"""nn.LSTM in float32, where each layer and direction is one node (MkldnnRnnLayerBackward0, as
torch's oneDNN path records): outputs, gradients, node names and higher derivatives vs torch."""
import numpy as np
import pytest
import torch

import ember
from opinfo import graph_names

RNG = np.random.default_rng(123)
TOL = 2e-5


def _pair(kw):
    tm = torch.nn.LSTM(**kw)
    em = ember.nn.LSTM(**kw)
    em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    return tm, em


def _close(t, e):
    assert tuple(t.shape) == tuple(e.shape)
    t, e = t.detach().numpy(), e.detach().numpy()
    assert e.dtype == t.dtype
    np.testing.assert_allclose(e, t, rtol=TOL, atol=TOL * max(1.0, np.abs(t).max()))


def _run(T, m, x, states, loss):
    """Forward, then backward of loss(output, h_n, c_n); the leaves' gradients."""
    xt = T.tensor(x, requires_grad=True)
    leaves = [xt]
    args = [xt]
    if states is not None:
        h, c = (T.tensor(s, requires_grad=True) for s in states)
        leaves += [h, c]
        args.append((h, c))
    out, (h_n, c_n) = m(*args)
    loss(out, h_n, c_n).backward()
    grads = [leaf.grad for leaf in leaves] + [p.grad for p in m.parameters()]
    names = [graph_names(t.grad_fn) for t in (out, h_n, c_n)]
    return [out, h_n, c_n] + grads, names


LOSSES = {
    "all": lambda o, h, c: (o * o).sum() + h.sin().sum() + 2 * c.sum(),
    "output only": lambda o, h, c: o.cos().sum(),
    "h_n only": lambda o, h, c: (h * h).sum(),
    "c_n only": lambda o, h, c: c.sum(),
}

CASES = [
    (dict(input_size=3, hidden_size=4), (5, 2, 3), False),
    (dict(input_size=3, hidden_size=4, num_layers=2), (6, 3, 3), True),
    (dict(input_size=3, hidden_size=5, num_layers=2, bidirectional=True), (4, 2, 3), True),
    (dict(input_size=4, hidden_size=3, bias=False), (5, 2, 4), True),
    (dict(input_size=3, hidden_size=4, batch_first=True, bidirectional=True), (2, 5, 3),
     False),
    (dict(input_size=3, hidden_size=4, num_layers=3), (1, 2, 3), False),       # one step
    (dict(input_size=3, hidden_size=4, bidirectional=True), (5, 3), True),     # unbatched
]


@pytest.mark.parametrize("loss", sorted(LOSSES))
@pytest.mark.parametrize("kw,shape,with_states", CASES)
def test_float32_lstm_matches_torch(kw, shape, with_states, loss):
    tm, em = _pair(kw)
    x = RNG.standard_normal(shape).astype(np.float32)
    states = None
    if with_states:
        layers = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
        batch = () if len(shape) == 2 else (shape[0] if kw.get("batch_first") else shape[1],)
        states = [RNG.standard_normal((layers,) + batch + (kw["hidden_size"],))
                  .astype(np.float32) for _ in range(2)]
    t_vals, t_names = _run(torch, tm, x, states, LOSSES[loss])
    e_vals, e_names = _run(ember, em, x, states, LOSSES[loss])
    assert e_names == t_names
    for t, e in zip(t_vals, e_vals):
        if t is None:
            assert e is None
        else:
            _close(t, e)


def test_the_layer_is_one_node_in_float32_only():
    # (float64, float16 and projections record the per-step ops)
    for dtype, kw in (("float32", {}), ("float64", {}), ("float32", dict(proj_size=2))):
        names = []
        for T in (torch, ember):
            T.manual_seed(0)
            m = T.nn.LSTM(3, 4, **kw).to(getattr(T, dtype))
            out, _ = m(T.ones(3, 2, 3, dtype=getattr(T, dtype)))
            names.append(graph_names(out.grad_fn))
        if dtype == "float32" and not kw:
            assert names[0] == names[1]
        assert ("MkldnnRnnLayerBackward0" in names[1]) == (dtype == "float32" and not kw)


def test_double_backward_through_the_layer_matches_torch():
    tm, em = _pair(dict(input_size=3, hidden_size=4, num_layers=2, bidirectional=True))
    x = RNG.standard_normal((4, 2, 3)).astype(np.float32)
    res = []
    for T, m in ((torch, tm), (ember, em)):
        xt = T.tensor(x, requires_grad=True)
        out, (h, c) = m(xt)
        g, = T.autograd.grad((out * out).sum() + h.sum() + c.sum(), xt, create_graph=True)
        (g * g).sum().backward()
        res.append([g, xt.grad] + [p.grad for p in m.parameters()])
    for t, e in zip(*res):
        _close(t, e)


def test_writing_into_the_output_after_the_forward_is_an_error_in_backward():
    # the backward reads the saved output: a write into it (under no_grad) is caught by the
    # version check, as in torch
    tm, em = _pair(dict(input_size=3, hidden_size=4))
    x = RNG.standard_normal((5, 2, 3)).astype(np.float32)
    res = []
    for T, m in ((torch, tm), (ember, em)):
        xt = T.tensor(x, requires_grad=True)
        out, _ = m(xt)
        loss = out.sum()
        with T.no_grad():
            out.mul_(0)
        try:
            loss.backward()
            res.append(("ok", xt.grad.numpy().copy()))
        except RuntimeError as err:
            res.append((type(err).__name__, str(err).split(" Hint")[0]))
    assert res[0][0] == res[1][0] == "RuntimeError"
    assert res[1][1] == res[0][1].replace("torch.", "ember.") or res[1][1] == res[0][1]


def test_weights_only_and_no_grad():
    tm, em = _pair(dict(input_size=3, hidden_size=4, num_layers=2))
    x = RNG.standard_normal((5, 2, 3)).astype(np.float32)
    res = []
    for T, m in ((torch, tm), (ember, em)):
        with T.no_grad():
            out_ng, _ = m(T.tensor(x))
        out, (h, c) = m(T.tensor(x))            # the input needs no gradient
        (out.sum() + c.sum()).backward()
        res.append([out_ng, out] + [p.grad for p in m.parameters()])
        assert out_ng.grad_fn is None
    for t, e in zip(*res):
        _close(t, e)
