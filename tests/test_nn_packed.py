"""nn.utils.rnn (PackedSequence, packing and padding) and RNN/LSTM/GRU on packed input, vs torch."""
import numpy as np
import pytest
import torch

import ember
from differential import same, catch

X = np.random.default_rng(5).standard_normal((5, 3, 2)).astype(np.float32)


def _weights(T, shape):
    return T.arange(int(np.prod(shape)), dtype=T.float32).reshape(shape) / 7 - 1


# ------------------------------------------------------------------ packing and padding
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted,lengths", [(True, [5, 2, 1]), (True, [4, 4, 1]),
                                                    (False, [2, 5, 1]), (False, [1, 3, 3])])
def test_pack_pad_round_trip_values_and_grads(batch_first, enforce_sorted, lengths):
    def scenario(T):
        R = T.nn.utils.rnn
        x = T.tensor(X, requires_grad=True)
        xi = x.transpose(0, 1) if batch_first else x
        p = R.pack_padded_sequence(xi, T.tensor(lengths), batch_first=batch_first,
                                   enforce_sorted=enforce_sorted)
        o, l = R.pad_packed_sequence(p, batch_first=batch_first, padding_value=-2.0,
                                     total_length=6)
        (o * _weights(T, o.shape)).sum().backward()
        return (p.data, p.batch_sizes, p.sorted_indices, p.unsorted_indices, o, l, x.grad,
                type(p.data.grad_fn).__name__, type(o.grad_fn).__name__, repr(p))
    same(scenario)


def test_pack_padded_sequence_errors():
    def scenario(T):
        R = T.nn.utils.rnn
        x = T.tensor(X)
        return [catch(R.pack_padded_sequence, x, [2, 5, 1]),
                catch(R.pack_padded_sequence, x, [5, 2, 0]),
                catch(R.pack_padded_sequence, x, [5, 2]),
                catch(R.pack_padded_sequence, x, T.tensor([[5, 2, 1]])),
                catch(R.pack_padded_sequence, T.ones(3, 0), [3, 2]),
                catch(lambda: R.pad_packed_sequence(R.pack_padded_sequence(x, [5, 2, 1]),
                                                    total_length=4)),
                R.pack_padded_sequence(x, T.tensor([5., 2., 1.])).batch_sizes,
                R.pack_padded_sequence(x, (5, 2, 1)).sorted_indices]
    same(scenario)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence(batch_first, side):
    def scenario(T):
        R = T.nn.utils.rnn
        a = T.tensor(X[:4, 0], requires_grad=True)
        b = T.tensor(X[:2, 1], requires_grad=True)
        out = R.pad_sequence([b, a], batch_first=batch_first, padding_value=3.0,
                             padding_side=side)
        (out * _weights(T, out.shape)).sum().backward()
        return out, a.grad, b.grad, type(out.grad_fn).__name__
    same(scenario)


def test_pad_sequence_errors_and_types():
    def scenario(T):
        R = T.nn.utils.rnn
        return [catch(R.pad_sequence, []),
                catch(R.pad_sequence, [T.ones(2), T.ones(3)], padding_side="middle"),
                R.pad_sequence([T.ones(2), T.ones(3, dtype=T.int64)]),
                R.pad_sequence([T.ones(2, dtype=T.int64), T.ones(1, dtype=T.int64)]),
                R.pad_sequence(T.ones(2, 3))]
    same(scenario)


def test_pack_sequence_unpack_unpad():
    def scenario(T):
        R = T.nn.utils.rnn
        seqs = [T.tensor(X[:n, i], requires_grad=True) for i, n in enumerate([2, 5, 3])]
        p = R.pack_sequence(seqs, enforce_sorted=False)
        back = R.unpack_sequence(p)
        sum((s * (i + 1)).sum() for i, s in enumerate(back)).backward()
        padded = T.tensor(X).clone()
        parts = R.unpad_sequence(padded, T.tensor([5, 1, 3]))
        return (p, back, [s.grad for s in seqs], parts, padded.shape,
                catch(R.pack_sequence, seqs), [type(s.grad_fn).__name__ for s in back])
    same(scenario)


def test_packed_sequence_class():
    def scenario(T):
        R = T.nn.utils.rnn
        p = R.pack_sequence([T.ones(2, 2), T.ones(3, 2)], enforce_sorted=False)
        made = R.PackedSequence(T.ones(3, 2), T.tensor([2, 1]), T.tensor([1, 0]))
        pair = R.PackedSequence((T.ones(3, 2), T.tensor([2, 1])))
        return (p.to(T.float32) is p, p.to("cpu") is p, p.float() is p, p.is_cuda,
                p.double().data, p.long().data, p.double().sorted_indices, p.int(),
                made, pair, list(p._fields), isinstance(p, tuple), repr(made),
                p.data is p[0], p._replace(sorted_indices=None).sorted_indices)
    same(scenario)


# ------------------------------------------------------------------ recurrent layers
def _pair(kind, kw):
    tm = getattr(torch.nn, kind)(**kw).double()
    em = getattr(ember.nn, kind)(**kw).double()
    em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    return tm, em


def _close(t, e, what):
    assert t.shape == tuple(e.shape), what
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-9, atol=1e-10,
                               err_msg=what)


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("layers,bidirectional", [(1, False), (2, False), (1, True), (2, True)])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted,with_state", [(True, False), (False, True)])
def test_rnn_on_packed_input(kind, layers, bidirectional, batch_first, enforce_sorted,
                             with_state):
    kw = dict(input_size=3, hidden_size=4, num_layers=layers, bidirectional=bidirectional,
              batch_first=batch_first)
    tm, em = _pair(kind, kw)
    lengths = [6, 4, 4, 1] if enforce_sorted else [2, 6, 1, 4]
    rng = np.random.default_rng(len(lengths) * layers)
    x = rng.standard_normal((4, 6, 3) if batch_first else (6, 4, 3))
    directions = 2 if bidirectional else 1
    h = rng.standard_normal((layers * directions, 4, 4))
    c = rng.standard_normal((layers * directions, 4, 4))
    results = {}
    for T, m in ((torch, tm), (ember, em)):
        R = T.nn.utils.rnn
        xt = T.tensor(x, requires_grad=True)
        ht, ct = T.tensor(h, requires_grad=True), T.tensor(c, requires_grad=True)
        packed = R.pack_padded_sequence(xt, lengths, batch_first=batch_first,
                                        enforce_sorted=enforce_sorted)
        state = None
        if with_state:
            state = (ht, ct) if kind == "LSTM" else ht
        out, states = m(packed, state)
        assert isinstance(out, R.PackedSequence)
        states = states if kind == "LSTM" else (states,)
        padded, _ = R.pad_packed_sequence(out, batch_first=batch_first)
        loss = (padded * _weights(T, padded.shape)).sum() + \
            sum((s * _weights(T, s.shape)).sum() for s in states)
        loss.backward()
        results[T] = ([out.data, out.batch_sizes, padded] + list(states) +
                      [xt.grad] + ([ht.grad] + ([ct.grad] if kind == "LSTM" else [])
                                   if with_state else []) +
                      [p.grad for p in m.parameters()])
        if out.sorted_indices is not None:
            results[T].append(out.sorted_indices)
    for i, (t, e) in enumerate(zip(results[torch], results[ember])):
        _close(t, e, f"item {i}")
    assert len(results[torch]) == len(results[ember])


def test_lstm_projection_on_packed_input():
    tm, em = _pair("LSTM", dict(input_size=2, hidden_size=4, proj_size=3, num_layers=2,
                                bidirectional=True))
    outs = {}
    for T, m in ((torch, tm), (ember, em)):
        R = T.nn.utils.rnn
        x = T.tensor(X.astype(np.float64), requires_grad=True)
        out, (h, c) = m(R.pack_padded_sequence(x, [3, 5, 2], enforce_sorted=False))
        (out.data.sum() + h.sum() * 2 + c.sum() * 3).backward()
        outs[T] = [out.data, h, c, x.grad] + [p.grad for p in m.parameters()]
    for i, (t, e) in enumerate(zip(outs[torch], outs[ember])):
        _close(t, e, f"item {i}")


def test_rnn_packed_errors():
    def scenario(T):
        T.manual_seed(0)
        R = T.nn.utils.rnn
        gru = T.nn.GRU(2, 3)
        lstm = T.nn.LSTM(2, 3)        # (wrong LSTM states crash torch 2.13 on packed input)
        p = R.pack_sequence([T.ones(2, 2), T.ones(3, 2)], enforce_sorted=False)
        return [catch(lambda: gru(p, T.zeros(3, 3))),
                catch(lambda: gru(R.PackedSequence(T.ones(5, 2, 1), p.batch_sizes))),
                catch(lambda: gru(R.PackedSequence(T.ones(5, 3), p.batch_sizes))),
                type(gru(p)[1].grad_fn).__name__, type(gru(p)[0].data.grad_fn).__name__,
                type(lstm(p)[1][1].grad_fn).__name__]
    same(scenario)
