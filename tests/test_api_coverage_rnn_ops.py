"""torch's top-level recurrent ops (torch.lstm, gru, rnn_tanh, rnn_relu and their cells)
against torch: outputs, final states and the gradients of the input, states and weights, on
padded and packed input, with layers, both directions, batch_first and LSTM projections."""
import numpy as np
import pytest

from differential import same, catch

GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def _weights(T, op, input_size, hidden, layers, directions, bias, proj=0):
    rng = np.random.default_rng(7)
    g = GATES[op] * hidden
    real = proj or hidden
    params = []
    for layer in range(layers):
        for _ in range(directions):
            size = input_size if layer == 0 else real * directions
            shapes = [(g, size), (g, real)] + ([(g,), (g,)] if bias else []) + \
                ([(proj, hidden)] if proj else [])
            params += [T.tensor(rng.standard_normal(s) * 0.4, dtype=T.float64,
                                requires_grad=True) for s in shapes]
    return params


def _run(T, op, layers, bidirectional, batch_first, bias, proj=0, packed=False):
    rng = np.random.default_rng(3)
    L, N, I, H = 5, 3, 4, 6
    directions = 2 if bidirectional else 1
    params = _weights(T, op, I, H, layers, directions, bias, proj)
    shape = (N, L, I) if batch_first else (L, N, I)
    x = T.tensor(rng.standard_normal(shape), requires_grad=True)
    h0 = T.tensor(rng.standard_normal((layers * directions, N, proj or H)), requires_grad=True)
    hx = h0
    if op == "lstm":
        c0 = T.tensor(rng.standard_normal((layers * directions, N, H)), requires_grad=True)
        hx = (h0, c0)
    fn = getattr(T, op)
    if packed:
        batch_sizes = T.tensor([3, 3, 2, 1, 1])
        data = x.reshape(L * N, I)[:10]
        out = fn(data, batch_sizes, hx, params, bias, layers, 0.0, False, bidirectional)
    else:
        out = fn(x, hx, params, bias, layers, 0.0, False, bidirectional, batch_first)
    loss = sum((o * (i + 1)).sum() for i, o in enumerate(out)) + (out[0] ** 2).sum()
    loss.backward()
    leaves = [x, h0] + ([hx[1]] if op == "lstm" else []) + params
    return [list(out), [t.grad for t in leaves]]


@pytest.mark.parametrize("op", list(GATES))
@pytest.mark.parametrize("layers,bidirectional,batch_first,bias", [
    (1, False, False, True), (2, True, False, True), (1, False, True, False),
    (2, False, True, True)])
def test_recurrence_values_and_gradients(op, layers, bidirectional, batch_first, bias):
    same(lambda T: _run(T, op, layers, bidirectional, batch_first, bias), rtol=1e-7,
         atol=1e-9)


@pytest.mark.parametrize("op", list(GATES))
@pytest.mark.parametrize("bidirectional", [False, True])
def test_recurrence_on_packed_data(op, bidirectional):
    same(lambda T: _run(T, op, 2, bidirectional, False, True, packed=True), rtol=1e-7,
         atol=1e-9)


def test_lstm_with_projections():
    same(lambda T: _run(T, "lstm", 2, True, False, True, proj=3), rtol=1e-7, atol=1e-9)


def test_ops_agree_with_modules():
    def f(T):
        T.manual_seed(0)
        m = T.nn.LSTM(4, 5, num_layers=2, bidirectional=True)
        x = T.ones(3, 2, 4)
        h = (T.zeros(4, 2, 5), T.zeros(4, 2, 5))
        a = m(x, h)
        b = T.lstm(x, h, m._flat_weights, True, 2, 0.0, False, True, False)
        return [(a[0] - b[0]).abs().max().item() == 0, (a[1][1] - b[2]).abs().max().item() == 0]
    same(f)


def test_recurrence_errors():
    def f(T):
        x, h = T.zeros(5, 3, 4), T.zeros(1, 3, 6)
        w = [T.zeros(24, 4), T.zeros(24, 6), T.zeros(24), T.zeros(24)]
        return [catch(T.lstm, x, (h,), w, True, 1, 0.0, False, False, False),
                catch(T.lstm, x, (h, h), w[:3], True, 1, 0.0, False, False, False),
                catch(T.lstm, x, (h, h), w, True, 2, 0.0, False, False, False)]
    same(f)


@pytest.mark.parametrize("op", list(GATES))
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_empty_sequence_is_refused(op, batch_first, dtype):
    # a sequence of length 0: torch's RNN check, for the float32 LSTM's one-node path too
    def f(T):
        x = T.zeros((3, 0, 4) if batch_first else (0, 3, 4), dtype=getattr(T, dtype))
        h = T.zeros(1, 3, 6, dtype=x.dtype)
        w = [T.zeros(GATES[op] * 6, 4, dtype=x.dtype), T.zeros(GATES[op] * 6, 6, dtype=x.dtype)]
        return catch(getattr(T, op), x, (h, h) if op == "lstm" else h, w, False, 1, 0.0,
                     False, False, batch_first)
    assert "larger than 0" in str(same(f))


@pytest.mark.parametrize("op", ["lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell"])
@pytest.mark.parametrize("bias", [True, False])
def test_cells_values_and_gradients(op, bias):
    def f(T):
        rng = np.random.default_rng(5)
        g = GATES[op[:-5]] * 6
        t = lambda *s: T.tensor(rng.standard_normal(s) * 0.5, requires_grad=True)  # noqa: E731
        x, h, c = t(3, 4), t(3, 6), t(3, 6)
        w = [t(g, 4), t(g, 6)] + ([t(g), t(g)] if bias else [])
        hx = (h, c) if op == "lstm_cell" else h
        out = getattr(T, op)(x, hx, *w)
        outs = list(out) if op == "lstm_cell" else [out]
        sum(((o * (i + 2)) ** 2).sum() for i, o in enumerate(outs)).backward()
        leaves = [x, h] + ([c] if op == "lstm_cell" else []) + w
        return [outs, [v.grad for v in leaves]]
    same(f, rtol=1e-7, atol=1e-9)


def test_cell_errors():
    def f(T):
        x, h = T.zeros(3, 4), T.zeros(3, 6)
        w16 = T.zeros(24, 4)
        return [catch(T.lstm_cell, x, (h,), w16, T.zeros(24, 6)),
                catch(T.lstm_cell, x, (h, h), w16, w16),
                catch(T.rnn_tanh_cell, x, h[:2], T.zeros(6, 4), T.zeros(6, 6)),
                catch(T.gru_cell, x, h, T.zeros(17, 4), T.zeros(18, 6))]
    same(f)
