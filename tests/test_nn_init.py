"""ember.nn.init against torch.nn.init: gains, fans, errors, deterministic initialisers exactly,
and random ones by their distribution (ember draws its own numbers)."""
import math
import warnings

import numpy as np
import pytest
import torch

import ember
from nn_helpers import outcome
from differential import catch, same, warnings_of

EI, TI = ember.nn.init, torch.nn.init


@pytest.mark.parametrize("args", [("linear",), ("conv2d",), ("sigmoid",), ("tanh",), ("relu",),
                                  ("leaky_relu",), ("leaky_relu", 0.2), ("leaky_relu", 3),
                                  ("selu",), ("conv_transpose3d",)])
def test_calculate_gain(args):
    assert EI.calculate_gain(*args) == TI.calculate_gain(*args)


def test_init_errors():
    cases = [
        lambda I, T: I.calculate_gain("foo"),
        lambda I, T: I.calculate_gain("leaky_relu", True),
        lambda I, T: I.calculate_gain("leaky_relu", "x"),
        lambda I, T: I.xavier_uniform_(T.empty(3)),
        lambda I, T: I.kaiming_normal_(T.empty(3, 4), mode="fan_foo"),
        lambda I, T: I.orthogonal_(T.empty(3)),
        lambda I, T: I.eye_(T.empty(2, 2, 2)),
        lambda I, T: I.dirac_(T.empty(2, 2)),
    ]
    for case in cases:
        assert outcome(lambda: case(EI, ember)) == outcome(lambda: case(TI, torch))


@pytest.mark.parametrize("shape", [(3, 4), (5, 2, 3), (6, 4, 3, 2)])
def test_fans(shape):
    assert EI._calculate_fan_in_and_fan_out(ember.empty(*shape)) == \
        TI._calculate_fan_in_and_fan_out(torch.empty(*shape))


def test_deterministic_initialisers_match_torch():
    for e_fn, t_fn, shape in [
        (lambda t: EI.constant_(t, 0.3), lambda t: TI.constant_(t, 0.3), (3, 4)),
        (EI.ones_, TI.ones_, (2, 3)),
        (EI.zeros_, TI.zeros_, (2, 3)),
        (EI.eye_, TI.eye_, (3, 5)),
        (EI.dirac_, TI.dirac_, (4, 3, 3)),
        (lambda t: EI.dirac_(t, 2), lambda t: TI.dirac_(t, 2), (6, 2, 3, 3)),
        (EI.dirac_, TI.dirac_, (2, 3, 1, 3, 3)),
    ]:
        e = ember.empty(*shape, requires_grad=True)
        t = torch.empty(*shape, requires_grad=True)
        assert e_fn(e) is e
        t_fn(t)
        np.testing.assert_array_equal(e.detach().numpy(), t.detach().numpy())
        assert e.requires_grad and e.is_leaf and e.grad_fn is None


def _sample(fn, shape=(400, 500), dtype=ember.float32):
    ember.manual_seed(0)
    w = ember.empty(*shape, dtype=dtype, requires_grad=True)
    out = fn(w)
    assert out is w and w.is_leaf and w.requires_grad
    assert w.dtype == dtype
    return w.detach().numpy().astype(np.float64)


def test_uniform_and_normal():
    a = _sample(lambda w: EI.uniform_(w, -0.5, 1.5))
    assert a.min() >= -0.5 and a.max() <= 1.5 and abs(a.mean() - 0.5) < 0.01
    a = _sample(lambda w: EI.normal_(w, 2.0, 0.5), dtype=ember.float64)
    assert abs(a.mean() - 2.0) < 0.01 and abs(a.std() - 0.5) < 0.01


def test_xavier():
    fan_in, fan_out = 500, 400
    std = math.sqrt(2.0 / (fan_in + fan_out))
    a = _sample(lambda w: EI.xavier_uniform_(w, gain=2.0))
    bound = 2.0 * math.sqrt(3.0) * std
    assert a.min() >= -bound and a.max() <= bound and a.max() > 0.99 * bound
    assert abs(a.std() - 2.0 * std) < 0.01 * 2.0 * std
    a = _sample(EI.xavier_normal_)
    assert abs(a.std() - std) < 0.01 * std


@pytest.mark.parametrize("kwargs", [{}, dict(a=math.sqrt(5)), dict(mode="fan_out"),
                                    dict(nonlinearity="relu"), dict(a=0.2, mode="fan_out")])
def test_kaiming(kwargs):
    shape = (300, 20, 3, 3)
    t = torch.empty(*shape)
    fan = TI._calculate_correct_fan(t, kwargs.get("mode", "fan_in"))
    std = TI.calculate_gain(kwargs.get("nonlinearity", "leaky_relu"), kwargs.get("a", 0)) / \
        math.sqrt(fan)
    a = _sample(lambda w: EI.kaiming_uniform_(w, **kwargs), shape)
    bound = math.sqrt(3.0) * std
    assert a.min() >= -bound and a.max() <= bound and a.max() > 0.99 * bound
    assert abs(a.std() - std) < 0.01 * std
    a = _sample(lambda w: EI.kaiming_normal_(w, **kwargs), shape)
    assert abs(a.std() - std) < 0.01 * std and abs(a.mean()) < 0.01 * std


def test_kaiming_zero_element_warns_like_torch():
    msgs = []
    for I, T in ((EI, ember), (TI, torch)):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            I.kaiming_uniform_(T.empty(0, 3))
        msgs.append([str(m.message) for m in w])
    assert msgs[0] == msgs[1] == ["Initializing zero-element tensors is a no-op"]


def test_trunc_normal():
    a = _sample(lambda w: EI.trunc_normal_(w, mean=0.5, std=1.0, a=-1.0, b=1.5))
    assert a.min() >= -1.0 and a.max() <= 1.5
    t = torch.empty(400, 500)
    torch.manual_seed(0)
    TI.trunc_normal_(t, mean=0.5, std=1.0, a=-1.0, b=1.5)
    t = t.numpy()
    assert abs(a.mean() - t.mean()) < 0.01 and abs(a.std() - t.std()) < 0.01


@pytest.mark.parametrize("shape", [(4, 7), (7, 4), (3, 2, 2)])
def test_orthogonal(shape):
    ember.manual_seed(1)
    w = ember.empty(*shape, dtype=ember.float64)
    assert EI.orthogonal_(w, gain=2.0) is w
    m = w.numpy().reshape(shape[0], -1)
    if m.shape[0] <= m.shape[1]:
        np.testing.assert_allclose(m @ m.T, 4.0 * np.eye(m.shape[0]), atol=1e-12)
    else:
        np.testing.assert_allclose(m.T @ m, 4.0 * np.eye(m.shape[1]), atol=1e-12)


def test_init_is_not_recorded_and_bumps_version():
    p = ember.nn.Parameter(ember.empty(3, 4))
    v = p._version
    EI.kaiming_uniform_(p, a=math.sqrt(5))
    assert p.grad_fn is None and p._version > v
    with ember.enable_grad():
        EI.zeros_(p)
    assert p.grad_fn is None and p.abs().sum().item() == 0.0


# ----------------------------------------------------------------------------- init
def test_init_sparse():
    def scenario(T):
        init = T.nn.init
        out = []
        for rows, cols, sparsity in [(5, 4, 0.5), (10, 3, 0.25), (4, 6, 0.0), (3, 3, 1.0)]:
            w = init.sparse_(T.empty(rows, cols), sparsity, std=0.5)
            out += [(w == 0).sum(0), bool(w.abs().max() < 5)]
        w, warns = warnings_of(lambda: init.sparse(T.empty(6, 2), 0.5))
        out += [(w == 0).sum(0), warns, catch(init.sparse_, T.empty(2, 2, 2), 0.1),
                init.sparse_(T.empty(3, 3, requires_grad=True), 0.3).grad_fn]
        return out
    same(scenario)


def test_init_deprecated_aliases():
    def scenario(T):
        init = T.nn.init
        return [warnings_of(lambda: init.eye(T.empty(3, 4))),
                warnings_of(lambda: init.dirac(T.empty(4, 2, 3))),
                warnings_of(lambda: init.constant(T.empty(2), 1.5)),
                sorted(init.__all__)]
    same(scenario)
