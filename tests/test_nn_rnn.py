"""RNN, LSTM and GRU against PyTorch: parameters, reprs, outputs, gradients, states, errors."""
import math
import warnings

import numpy as np
import pytest
import torch

import ember
from ember.nn.modules.rnn import GRU, LSTM, RNN
from differential import catch, same, warnings_of

RNG = np.random.default_rng(99)
EMBER = dict(RNN=RNN, LSTM=LSTM, GRU=GRU)


def _close(t, e, tol):
    assert tuple(t.shape) == tuple(e.shape)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


def _pair_modules(kind, kw, double=True):
    tm = getattr(torch.nn, kind)(**kw)
    em = EMBER[kind](**kw)
    if double:
        tm, em = tm.double(), em.double()
    em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    return tm, em


def run_both(kind, kw, shape, with_state=False, double=True):
    """Forward and backward through the same weights and inputs; compare everything."""
    tm, em = _pair_modules(kind, kw, double)
    assert repr(em) == repr(tm)
    dtype = np.float64 if double else np.float32
    tol = 1e-10 if double else 2e-5
    x = RNG.standard_normal(shape).astype(dtype)
    tx, ex = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
    targs, eargs = [tx], [ex]
    states = []
    if with_state:
        directions = 2 if kw.get("bidirectional") else 1
        batch = () if len(shape) == 2 else (shape[0] if kw.get("batch_first") else shape[1],)
        layers = directions * kw.get("num_layers", 1)
        h_size = kw.get("proj_size") or kw["hidden_size"]
        h = RNG.standard_normal((layers,) + batch + (h_size,)).astype(dtype)
        c = RNG.standard_normal((layers,) + batch + (kw["hidden_size"],)).astype(dtype)
        th, eh = torch.tensor(h, requires_grad=True), ember.tensor(h, requires_grad=True)
        states.append((th, eh))
        if kind == "LSTM":
            tc, ec = torch.tensor(c, requires_grad=True), ember.tensor(c, requires_grad=True)
            states.append((tc, ec))
            targs.append((th, tc))
            eargs.append((eh, ec))
        else:
            targs.append(th)
            eargs.append(eh)
    tout, tstate = tm(*targs)
    eout, estate = em(*eargs)
    _close(tout, eout, tol)
    if kind == "LSTM":
        _close(tstate[0], estate[0], tol)
        _close(tstate[1], estate[1], tol)
        tlast, elast = tstate[0].sum() + 2 * tstate[1].sum(), estate[0].sum() + 2 * estate[1].sum()
    else:
        _close(tstate, estate, tol)
        tlast, elast = tstate, estate
    g = RNG.standard_normal(tuple(tout.shape)).astype(dtype)
    ((tout * torch.tensor(g)).sum() + tlast.sum()).backward()
    ((eout * ember.tensor(g)).sum() + elast.sum()).backward()
    _close(tx.grad, ex.grad, tol)
    for t, e in states:
        _close(t.grad, e.grad, tol)
    eparams = dict(em.named_parameters())
    for name, p in tm.named_parameters():
        _close(p.grad, eparams[name].grad, tol)


CASES = [
    ("LSTM", dict(input_size=3, hidden_size=4), (5, 2, 3), False),
    ("LSTM", dict(input_size=3, hidden_size=4, num_layers=2, bidirectional=True,
                  batch_first=True), (2, 5, 3), True),
    ("LSTM", dict(input_size=3, hidden_size=4, proj_size=2, num_layers=2), (5, 3), True),
    ("LSTM", dict(input_size=3, hidden_size=5, bias=False, bidirectional=True), (4, 3), False),
    ("GRU", dict(input_size=3, hidden_size=4, num_layers=2, bidirectional=True), (5, 2, 3), True),
    ("GRU", dict(input_size=3, hidden_size=4, bias=False), (5, 3), False),
    ("GRU", dict(input_size=2, hidden_size=3, batch_first=True), (3, 4, 2), True),
    ("RNN", dict(input_size=3, hidden_size=4, nonlinearity="relu", num_layers=3), (5, 2, 3),
     True),
    ("RNN", dict(input_size=3, hidden_size=4, bidirectional=True, batch_first=True), (2, 5, 3),
     False),
    ("RNN", dict(input_size=3, hidden_size=4), (6, 3), True),
]


@pytest.mark.parametrize("kind,kw,shape,with_state", CASES)
def test_recurrent_layers_match_torch(kind, kw, shape, with_state):
    run_both(kind, kw, shape, with_state)


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_recurrent_layers_float32(kind):
    run_both(kind, dict(input_size=3, hidden_size=4, num_layers=2), (4, 2, 3), True,
             double=False)


def test_parameter_names_shapes_and_init_match_torch():
    for kind in ("RNN", "LSTM", "GRU"):
        kw = dict(input_size=3, hidden_size=6, num_layers=2, bidirectional=True)
        if kind == "LSTM":
            kw["proj_size"] = 2
        tm, em = getattr(torch.nn, kind)(**kw), EMBER[kind](**kw)
        tshapes = [(n, tuple(p.shape)) for n, p in tm.named_parameters()]
        assert [(n, tuple(p.shape)) for n, p in em.named_parameters()] == tshapes
        assert list(em.state_dict()) == list(tm.state_dict())
        bound = 1 / math.sqrt(6)
        for p in em.parameters():
            assert p.dtype is ember.float32 and p.requires_grad
            assert np.abs(p.detach().numpy()).max() <= bound
        flat = np.concatenate([p.detach().numpy().ravel() for p in em.parameters()])
        assert flat.std() == pytest.approx(bound / math.sqrt(3), rel=0.15)


def test_reprs_match_torch():
    cases = [("LSTM", (10, 20), dict(num_layers=2, batch_first=True, dropout=0.5,
                                      bidirectional=True)),
             ("RNN", (10, 20), dict(nonlinearity="relu", bias=False)),
             ("GRU", (3, 4), {}), ("RNN", (3, 4), {}), ("LSTM", (3, 4), dict(proj_size=2))]
    for kind, args, kw in cases:
        assert repr(EMBER[kind](*args, **kw)) == repr(getattr(torch.nn, kind)(*args, **kw))


def test_dropout_between_layers():
    kw = dict(input_size=3, hidden_size=4, num_layers=2, dropout=0.5)
    tm, em = _pair_modules("LSTM", kw)
    x = RNG.standard_normal((5, 2, 3))
    tm.eval()
    em.eval()
    _close(tm(torch.tensor(x))[0], em(ember.tensor(x))[0], 1e-10)      # eval: no dropout
    em.train()
    ember.manual_seed(0)
    a = em(ember.tensor(x))[0].detach().numpy()
    b = em(ember.tensor(x))[0].detach().numpy()
    assert not np.allclose(a, b)                     # train: fresh masks between layers
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        LSTM(3, 4, dropout=0.5)
    with warnings.catch_warnings(record=True) as expected:
        warnings.simplefilter("always")
        torch.nn.LSTM(3, 4, dropout=0.5)
    assert [str(w.message) for w in caught] == [str(w.message) for w in expected]


def raised(fn):
    try:
        fn()
    except Exception as exc:   # noqa: BLE001 - the exception is what is compared
        return type(exc).__name__, str(exc).replace("torch.", "ember.")
    return None


CONSTRUCT_ERRORS = [
    lambda nn: nn.LSTM(3, 4, dropout=1.5),
    lambda nn: nn.LSTM(3, 0),
    lambda nn: nn.LSTM(3, 4, num_layers=0),
    lambda nn: nn.RNN(3, 4, nonlinearity="foo"),
    lambda nn: nn.LSTM(3, 4, proj_size=4),
]

CALL_ERRORS = [
    ("LSTM", lambda m, T: m(T.zeros(2, 5, 3, 3))),
    ("LSTM", lambda m, T: m(T.zeros(5, 2, 4))),
    ("LSTM", lambda m, T: m(T.zeros(5, 2, 3), (T.zeros(1, 2, 4), T.zeros(2, 2, 4)))),
    ("LSTM", lambda m, T: m(T.zeros(5, 2, 3), (T.zeros(2, 2, 4), T.zeros(1, 2, 4)))),
    ("LSTM", lambda m, T: m(T.zeros(5, 3), (T.zeros(2, 2, 4), T.zeros(2, 2, 4)))),
    ("LSTM", lambda m, T: m(T.zeros(5, 2, 3), (T.zeros(2, 4), T.zeros(2, 4)))),
    ("RNN", lambda m, T: m(T.zeros(2, 5, 3, 3))),
    ("GRU", lambda m, T: m(T.zeros(2, 5, 3, 3))),
    ("RNN", lambda m, T: m(T.zeros(5, 2, 3), T.zeros(2, 2, 4))),
    ("GRU", lambda m, T: m(T.zeros(5, 3), T.zeros(2, 1, 4))),
    ("RNN", lambda m, T: m(T.zeros(5, 2, 3, dtype=T.float64))),
]


@pytest.mark.parametrize("case", range(len(CONSTRUCT_ERRORS)))
def test_construction_errors_match_torch(case):
    class EmberNN:
        RNN, LSTM, GRU = RNN, LSTM, GRU
    fn = CONSTRUCT_ERRORS[case]
    expected = raised(lambda: fn(torch.nn))
    assert expected is not None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert raised(lambda: fn(EmberNN)) == expected


@pytest.mark.parametrize("case", range(len(CALL_ERRORS)))
def test_call_errors_match_torch(case):
    kind, fn = CALL_ERRORS[case]
    layers = 1 if kind == "RNN" else 2
    tm = getattr(torch.nn, kind)(3, 4, num_layers=layers)
    em = EMBER[kind](3, 4, num_layers=layers)
    expected = raised(lambda: fn(tm, torch))
    assert expected is not None
    assert raised(lambda: fn(em, ember)) == expected


# ----------------------------------------------------------------------------- cells
from ember.nn.modules.rnn import GRUCell, LSTMCell, RNNCell  # noqa: E402

CELLS = dict(RNNCell=RNNCell, LSTMCell=LSTMCell, GRUCell=GRUCell)
CELL_CASES = [("RNNCell", dict(), (2, 3), True), ("RNNCell", dict(nonlinearity="relu",
                                                                  bias=False), (3,), False),
              ("LSTMCell", dict(), (2, 3), True), ("LSTMCell", dict(bias=False), (3,), True),
              ("GRUCell", dict(), (2, 3), False), ("GRUCell", dict(bias=False), (3,), True)]


@pytest.mark.parametrize("name,kw,shape,with_state", CELL_CASES)
def test_cells_match_torch(name, kw, shape, with_state):
    tm = getattr(torch.nn, name)(3, 4, **kw).double()
    em = CELLS[name](3, 4, **kw).double()
    assert repr(em) == repr(tm)
    assert [(n, tuple(p.shape)) for n, p in em.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in tm.named_parameters()]
    em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    x = RNG.standard_normal(shape)
    tx, ex = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
    targs, eargs = [tx], [ex]
    state_shape = shape[:-1] + (4,)
    if with_state:
        states = [RNG.standard_normal(state_shape) for _ in range(2 if name == "LSTMCell" else 1)]
        ts = [torch.tensor(s, requires_grad=True) for s in states]
        es = [ember.tensor(s, requires_grad=True) for s in states]
        targs.append(tuple(ts) if name == "LSTMCell" else ts[0])
        eargs.append(tuple(es) if name == "LSTMCell" else es[0])
    ty, ey = tm(*targs), em(*eargs)
    if name == "LSTMCell":
        _close(ty[1], ey[1], 1e-10)
        ty, ey = ty[0] + 3 * ty[1], ey[0] + 3 * ey[1]
    _close(ty, ey, 1e-10)
    assert type(ey.grad_fn).__name__ == type(ty.grad_fn).__name__
    (ty * ty).sum().backward()
    (ey * ey).sum().backward()
    _close(tx.grad, ex.grad, 1e-10)
    if with_state:
        for t, e in zip(ts, es):
            _close(t.grad, e.grad, 1e-10)
    for (n, tp), ep in zip(tm.named_parameters(), em.parameters()):
        _close(tp.grad, ep.grad, 1e-10)


CELL_ERRORS = [
    ("LSTMCell", lambda m, T: m(T.zeros(2, 5))),
    ("LSTMCell", lambda m, T: m(T.zeros(2, 3, 3))),
    ("LSTMCell", lambda m, T: m(T.zeros(2, 3), (T.zeros(3, 4), T.zeros(2, 4)))),
    ("GRUCell", lambda m, T: m(T.zeros(2, 3), T.zeros(3, 4))),
    ("RNNCell", lambda m, T: m(T.zeros(2, 3, 3))),
]


@pytest.mark.parametrize("case", range(len(CELL_ERRORS)))
def test_cell_errors_match_torch(case):
    name, fn = CELL_ERRORS[case]
    expected = raised(lambda: fn(getattr(torch.nn, name)(3, 4), torch))
    assert expected is not None
    assert raised(lambda: fn(CELLS[name](3, 4), ember)) == expected
    expected = raised(lambda: torch.nn.RNNCell(3, 4, nonlinearity="foo")(torch.zeros(2, 3)))
    assert raised(lambda: RNNCell(3, 4, nonlinearity="foo")(ember.zeros(2, 3))) == expected


@pytest.mark.parametrize("cell", ["LSTMCell", "GRUCell", "RNNCell"])
def test_rnn_cell_hidden_state_checks(cell):
    def f(T):
        c = getattr(T.nn, cell)(3, 4)

        def h(*shape):
            return (T.ones(*shape), T.ones(2, 4)) if cell == "LSTMCell" else T.ones(*shape)
        return [catch(lambda: type(c(T.ones(*x), h(*s))).__name__) for x, s in [
            ((2, 3), (2, 5)), ((2, 3), (3, 5)), ((3,), (5,)), ((2, 3), (2, 4, 1)), ((3,), (2, 4)),
            ((2, 3), (4,)), ((2, 3), (2,)), ((2, 4), (2, 4, 1)), ((2, 4), (2, 4)),
            ((2, 2, 3), (2, 3, 4)), ((2, 3), (2, 4))]]
    same(f)


def test_lstm_cell_second_state_checks():
    def f(T):
        c = T.nn.LSTMCell(3, 4)
        x = T.ones(2, 3)
        return [catch(c, x, (T.ones(2, 4), s)) for s in
                (T.ones(2, 5), T.ones(2, 5, 1), T.ones(3, 4))]
    same(f)
