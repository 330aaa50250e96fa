"""The batched (flat-buffer) optimizer updates against torch.optim, in the situations that make
ember rebuild or leave its flat buffers: parameters that skip steps (different step counts in
one group), state loaded or replaced mid-training, strided and mixed-dtype parameters; and
against ember's own per-parameter update, bit for bit. Also clip_grad_norm_ over many
gradients."""
import numpy as np
import pytest
import torch

import ember
from ember.optim.optimizer import Optimizer

TOL = dict(rtol=1e-5, atol=1e-6)
SHAPES = [(6, 5), (5,), (), (1,), (3, 2, 2), (7,)]

CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.2, weight_decay=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    ("AdamW", dict(lr=0.01, weight_decay=0.3)),
    ("AdamW", dict(lr=0.01, amsgrad=True, maximize=True)),
    ("Adadelta", dict(lr=0.5, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, initial_accumulator_value=0.3)),
]


def case_id(case):
    name, kw = case
    return name + "-" + ",".join(f"{k}={v}" for k, v in kw.items())


def data(steps=8, shapes=SHAPES, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s).astype(dtype) for s in shapes]
    grads = [[rng.standard_normal(s).astype(dtype) for s in shapes] for _ in range(steps)]
    return init, grads


def run(lib, name, kw, init, grads, skip=lambda step, i: False, between=None):
    params = [lib.tensor(a.copy(), requires_grad=True) for a in init]
    opt = getattr(lib.optim, name)(params, **kw)
    for step, gs in enumerate(grads):
        for i, (p, g) in enumerate(zip(params, gs)):
            p.grad = None if skip(step, i) else lib.tensor(g.copy())
        opt.step()
        if between is not None:
            opt = between(lib, step, opt, params) or opt
    return params, opt


def values(params, opt):
    out = [p.detach().numpy().copy() for p in params]
    for p in params:
        for k, v in sorted(opt.state[p].items()):
            if v is not None:
                out.append(v.detach().numpy().copy())
    return out


def assert_match(name, kw, **options):
    init, grads = data()
    expected = values(*run(torch, name, kw, init, grads, **options))
    actual = values(*run(ember, name, kw, init, grads, **options))
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert a.dtype == e.dtype and a.shape == e.shape
        np.testing.assert_allclose(a, e, **TOL)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_params_skipping_steps(case):
    # a parameter without a gradient is left out of a step: the set of parameters changes,
    # and (Adam, Adagrad ...) their step counts differ within the group
    assert_match(*case, skip=lambda step, i: (step + i) % 3 == 0)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_state_loaded_mid_training(case):
    def between(lib, step, opt, params):
        if step == 3:           # a new optimizer continues from the saved state
            fresh = type(opt)(params, **case[1])
            fresh.load_state_dict(opt.state_dict())
            return fresh
    assert_match(*case, between=between)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_state_tensor_written_by_the_user(case):
    def between(lib, step, opt, params):
        if step == 2:
            with lib.no_grad():
                for state in opt.state.values():
                    for key, v in state.items():
                        if key != "step" and v is not None:
                            v.mul_(0.5)
    assert_match(*case, between=between)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_param_data_replaced(case):
    def between(lib, step, opt, params):
        if step == 2:
            params[0].data = params[0].data * 2
    assert_match(*case, between=between)


@pytest.mark.parametrize("case", CASES[::2], ids=case_id)
def test_strided_and_mixed_dtype_params(case):
    name, kw = case
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 6)).astype(np.float32)
    b = rng.standard_normal(5)                      # float64: a group of two dtypes
    grads = [(rng.standard_normal((6, 4)).astype(np.float32), rng.standard_normal(5))
             for _ in range(5)]
    results = []
    for lib in (torch, ember):
        pa = lib.tensor(a).t().detach().requires_grad_()     # a strided leaf
        pb = lib.tensor(b, requires_grad=True)
        for params in ([pa], [pa, pb]):
            opt = getattr(lib.optim, name)(params, **kw)
            for ga, gb in grads:
                pa.grad, pb.grad = lib.tensor(ga), lib.tensor(gb)
                opt.step()
        results.append([pa.detach().numpy().copy(), pb.detach().numpy().copy(),
                        pa.stride()])
    (ta, tb, ts), (ea, eb, es) = results
    assert es == ts
    np.testing.assert_allclose(ea, ta, **TOL)
    np.testing.assert_allclose(eb, tb, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kw", [dict(lr=0.1), dict(lr=0.1, weight_decay=0.1, maximize=True)])
def test_sgd_without_momentum_on_large_params(kw):
    # (large parameters: SGD without momentum updates them one at a time, no gathering)
    init, grads = data(steps=3, shapes=[(100, 100), (20_000,), (3,)])
    expected = values(*run(torch, "SGD", kw, init, grads))
    actual = values(*run(ember, "SGD", kw, init, grads))
    for a, e in zip(actual, expected):
        np.testing.assert_allclose(a, e, **TOL)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_held_state_tensors_see_the_updates(case):
    # the state tensors stay the same objects (their arrays move into the flat buffers)
    name, kw = case
    init, grads = data()
    for lib in (torch, ember):
        params = [lib.tensor(a.copy(), requires_grad=True) for a in init]
        opt = getattr(lib.optim, name)(params, **kw)
        for p, g in zip(params, grads[0]):
            p.grad = lib.tensor(g.copy())
        opt.step()
        held = {(i, k): v for i, p in enumerate(params) for k, v in opt.state[p].items()}
        opt.step()
        for (i, k), v in held.items():
            assert opt.state[params[i]][k] is v


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_batched_update_is_the_per_parameter_update_bit_for_bit(case, monkeypatch):
    name, kw = case
    init, grads = data(steps=5)
    batched = values(*run(ember, name, kw, init, grads, skip=lambda s, i: s == 2 and i == 1))
    monkeypatch.setattr(Optimizer, "_flat_for", lambda self, group: None)
    each = values(*run(ember, name, kw, init, grads, skip=lambda s, i: s == 2 and i == 1))
    for a, b in zip(batched, each):
        np.testing.assert_array_equal(a, b)


def test_step_bumps_every_written_version():
    for lib in (torch, ember):
        ps = [lib.tensor(np.ones(3, np.float32), requires_grad=True) for _ in range(3)]
        opt = lib.optim.Adam(ps, lr=0.1)
        for p in ps:
            p.grad = lib.ones(3)
        before = [p._version for p in ps]
        opt.step()
        assert all(p._version > v for p, v in zip(ps, before))
        state = [opt.state[p]["exp_avg"]._version for p in ps]
        for p in ps:
            p.grad = lib.ones(3)
        opt.step()
        assert all(opt.state[p]["exp_avg"]._version > v for p, v in zip(ps, state))


# ----------------------------------------------------------------------------- clip_grad_norm_
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("max_norm", [0.3, 1e6])
def test_clip_grad_norm_over_many_grads(dtype, max_norm):
    rng = np.random.default_rng(5)
    shapes = [(50, 20), (20,), (), (1,), (3, 4, 5)] * 8
    grads = [rng.standard_normal(s).astype(dtype) for s in shapes]
    results = []
    for lib in (torch, ember):
        ps = [lib.tensor(np.zeros(s, dtype), requires_grad=True) for s in shapes]
        for p, g in zip(ps, grads):
            p.grad = lib.tensor(g.copy())
        versions = [p.grad._version for p in ps]
        total = lib.nn.utils.clip_grad_norm_(ps, max_norm)
        assert all(p.grad._version > v for p, v in zip(ps, versions))
        results.append((total.item(), str(total.dtype).split(".")[1], total.dim(),
                        [p.grad.numpy().copy() for p in ps]))
    (tt, td, tn, tg), (et, ed, en, eg) = results
    assert (ed, en) == (td, tn)
    tol = TOL if dtype == np.float32 else dict(rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(et, tt, **tol)
    for e, t in zip(eg, tg):
        np.testing.assert_allclose(e, t, **tol)
