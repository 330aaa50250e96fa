"""The float32 LSTM layer (ember/nn/_rnn_layer.py) at the sizes where its kernels change path:
hidden sizes that make the per-gate products of a step real GEMMs, sequences longer than
a block of _backward_factors, a workspace of many steps. Outputs, final states and every
gradient against torch, for both directions and with and without biases."""
import numpy as np
import pytest
import torch

import ember

TOL = 2e-5


def _close(t, e):
    t, e = t.detach().numpy(), e.detach().numpy()
    assert e.shape == t.shape and e.dtype == t.dtype
    np.testing.assert_allclose(e, t, rtol=TOL, atol=TOL * max(1.0, np.abs(t).max()))


@pytest.mark.parametrize("kw, steps, batch", [
    (dict(input_size=48, hidden_size=64, num_layers=2), 23, 7),
    (dict(input_size=40, hidden_size=96, bidirectional=True), 17, 5),
    (dict(input_size=32, hidden_size=64, bias=False, num_layers=2), 40, 3),
    (dict(input_size=200, hidden_size=200, num_layers=2), 35, 20),     # the LM's layers
])
def test_lstm_layer_matches_torch_at_larger_sizes(kw, steps, batch):
    rng = np.random.default_rng(7)
    directions = 2 if kw.get("bidirectional") else 1
    layers = kw.get("num_layers", 1)
    hidden = kw["hidden_size"]
    x = rng.standard_normal((steps, batch, kw["input_size"])).astype(np.float32)
    h0 = rng.standard_normal((layers * directions, batch, hidden)).astype(np.float32) * 0.5
    c0 = rng.standard_normal((layers * directions, batch, hidden)).astype(np.float32) * 0.5
    g_out = rng.standard_normal((steps, batch, directions * hidden)).astype(np.float32)
    g_h = rng.standard_normal(h0.shape).astype(np.float32)
    g_c = rng.standard_normal(c0.shape).astype(np.float32)
    tm = torch.nn.LSTM(**kw)
    em = ember.nn.LSTM(**kw)
    em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    results = []
    for T, m in ((torch, tm), (ember, em)):
        leaves = [T.tensor(a, requires_grad=True) for a in (x, h0, c0)]
        out, (h_n, c_n) = m(leaves[0], (leaves[1], leaves[2]))
        loss = (out * T.tensor(g_out)).sum() + (h_n * T.tensor(g_h)).sum() + \
            (c_n * T.tensor(g_c)).sum()
        loss.backward()
        results.append([out, h_n, c_n] + [v.grad for v in leaves] +
                       [p.grad for p in m.parameters()])
    for t, e in zip(*results):
        _close(t, e)


def test_the_lm_layer_is_one_node_per_layer_as_in_torch():
    x = np.random.default_rng(3).standard_normal((35, 20, 200)).astype(np.float32)
    names = []
    for T in (torch, ember):
        T.manual_seed(0)
        m = T.nn.LSTM(200, 200, 2)
        out, _ = m(T.tensor(x, requires_grad=True))
        names.append(type(out.grad_fn).__name__)
    assert names[1] == names[0] == "MkldnnRnnLayerBackward0"


@pytest.mark.parametrize("cls", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, batch_first", [((0, 2, 3), False), ((0, 3), False),
                                                ((2, 0, 3), True)])
def test_an_empty_sequence_is_torchs_error(cls, dtype, shape, batch_first):
    errors = []
    for T in (torch, ember):
        m = getattr(T.nn, cls)(3, 4, 2, batch_first=batch_first).to(getattr(T, dtype))
        with pytest.raises(RuntimeError) as info:
            m(T.zeros(shape, dtype=getattr(T, dtype)))
        errors.append(str(info.value))
    assert errors[1] == errors[0] == "Expected sequence length to be larger than 0 in RNN"


@pytest.mark.parametrize("cls", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_an_empty_batch_runs_as_in_torch(cls, dtype):
    got = []
    for T in (torch, ember):
        T.manual_seed(0)
        m = getattr(T.nn, cls)(3, 4, 2, bidirectional=True).to(getattr(T, dtype))
        x = T.zeros((2, 0, 3), dtype=getattr(T, dtype), requires_grad=True)
        out, state = m(x)
        states = state if cls == "LSTM" else (state,)
        (out.sum() + sum(s.sum() for s in states)).backward()
        got.append([tuple(out.shape), [tuple(s.shape) for s in states], out.grad_fn.name(),
                    tuple(x.grad.shape),
                    [(tuple(p.grad.shape), float(p.grad.abs().sum())) for p in m.parameters()]])
    assert got[1] == got[0]


def _lm_layer_grads(x, g):
    ember.manual_seed(0)
    m = ember.nn.LSTM(200, 200, 2)
    xt = ember.tensor(x, requires_grad=True)
    out, (h_n, c_n) = m(xt)
    (out * ember.tensor(g)).sum().backward()
    return [t.detach().numpy() for t in [out, h_n, c_n, xt.grad] +
            [p.grad for p in m.parameters()]]


def test_the_lm_layer_agrees_at_one_and_two_threads():
    """ember's own LSTM kernels give the same bits whatever the thread count; the large
    products (the input projection, the weight gradients over all steps) may run on two
    BLAS threads when ember's policy finds that faster, and OpenBLAS then sums some of them
    in another order (seen: weight_ih_l1's gradient, a (800x700)@(700x200) product): so the
    results agree to float32 rounding, as torch's do across thread counts."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((35, 20, 200)).astype(np.float32)
    g = rng.standard_normal((35, 20, 200)).astype(np.float32)
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        one = _lm_layer_grads(x, g)
        ember.set_num_threads(2)
        two = [_lm_layer_grads(x, g) for _ in range(3)]     # (the BLAS policy may switch)
    finally:
        ember.set_num_threads(before)
    for run in two:
        for a, b in zip(one, run):
            np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
