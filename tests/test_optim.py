"""ember.optim against torch.optim: the same start parameters and the same gradients in both,
then parameters, state_dict contents, reprs and errors compared."""
import copy
import tracemalloc
import warnings

import numpy as np
import pytest
import torch

import ember
from differential import catch, same, warnings_of

SHAPES = [(4, 3), (5,), ()]
STEPS = 20
TOL = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float64: dict(rtol=1e-12, atol=1e-14)}

CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.8, nesterov=True, weight_decay=0.05, maximize=True)),
    ("Adam", dict()),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.95), weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(lr=0.01, maximize=True, eps=1e-4)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("AdamW", dict()),
    ("AdamW", dict(lr=0.02, weight_decay=0.3, amsgrad=True, maximize=True)),
    ("RMSprop", dict()),
    ("RMSprop", dict(lr=0.01, alpha=0.9, eps=1e-6, centered=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, weight_decay=0.1, maximize=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True)),
    ("Adagrad", dict()),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, initial_accumulator_value=0.3, weight_decay=0.1)),
    ("Adagrad", dict(lr=0.1, eps=1e-6, maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-4, weight_decay=0.1, maximize=True)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.01, betas=(0.7, 0.9), weight_decay=0.1, maximize=True)),
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.01, momentum_decay=0.01, weight_decay=0.1)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict()),
    ("RAdam", dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
]
NAMES = sorted({name for name, _ in CASES})


def case_id(case):
    name, kw = case
    return name + "-" + ",".join(f"{k}={v}" for k, v in kw.items())


def make_data(dtype, seed=0, steps=STEPS, shapes=SHAPES):
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s).astype(dtype) for s in shapes]
    grads = [[rng.standard_normal(s).astype(dtype) for s in shapes] for _ in range(steps)]
    return init, grads


def leaves(lib, arrays):
    return [lib.tensor(a.copy(), requires_grad=True) for a in arrays]


def feed(lib, params, grads):
    for p, g in zip(params, grads):
        p.grad = lib.tensor(g.copy())


def as_numpy(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()


def assert_close(e, t, dtype):
    np.testing.assert_allclose(as_numpy(e), as_numpy(t), **TOL[dtype])


def assert_state_dicts_match(esd, tsd, dtype):
    assert esd["param_groups"] == tsd["param_groups"]
    assert esd["state"].keys() == tsd["state"].keys()
    for k, tstate in tsd["state"].items():
        estate = esd["state"][k]
        assert list(estate) == list(tstate)
        for key, tv in tstate.items():
            ev = estate[key]
            assert isinstance(ev, ember.Tensor)
            assert str(ev.dtype).split(".")[1] == str(tv.dtype).split(".")[1]
            assert tuple(ev.shape) == tuple(tv.shape)
            assert not ev.requires_grad
            assert_close(ev, tv, dtype)


def run_both(name, kw, dtype, steps=STEPS):
    init, grads = make_data(dtype, steps=steps)
    tp, ep = leaves(torch, init), leaves(ember, init)
    to, eo = getattr(torch.optim, name)(tp, **kw), getattr(ember.optim, name)(ep, **kw)
    for g in grads:
        feed(torch, tp, g)
        feed(ember, ep, g)
        to.step()
        eo.step()
    return tp, ep, to, eo


# ----------------------------------------------------------------------------- updates
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_updates_match_torch(case, dtype):
    name, kw = case
    tp, ep, to, eo = run_both(name, kw, dtype)
    for e, t in zip(ep, tp):
        assert e.dtype == getattr(ember, str(t.dtype).split(".")[1])
        assert_close(e, t, dtype)
    assert_state_dicts_match(eo.state_dict(), to.state_dict(), dtype)


def test_default_dtype_float64_makes_float64_steps():
    ember.set_default_dtype(ember.float64)
    torch.set_default_dtype(torch.float64)
    try:
        tp, ep, to, eo = run_both("NAdam", dict(lr=0.01), np.float64, steps=3)
        assert eo.state[ep[0]]["step"].dtype == ember.float64
        assert eo.state[ep[0]]["mu_product"].dtype == ember.float64
        assert_state_dicts_match(eo.state_dict(), to.state_dict(), np.float64)
    finally:
        ember.set_default_dtype(ember.float32)
        torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "Adagrad", "Adamax"])
def test_complex_params_update_per_component(name):
    rng = np.random.default_rng(3)

    def complex_normal(shape):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(
            np.complex64)

    shapes = [(4,), ()]
    init = [complex_normal(s) for s in shapes]
    kw = dict(lr=0.1, momentum=0.9) if name == "SGD" else dict(lr=0.1)
    tp, ep = leaves(torch, init), leaves(ember, init)
    to, eo = getattr(torch.optim, name)(tp, **kw), getattr(ember.optim, name)(ep, **kw)
    for _ in range(5):
        g = [complex_normal(s) for s in shapes]
        feed(torch, tp, g)
        feed(ember, ep, g)
        to.step()
        eo.step()
    for e, t in zip(ep, tp):
        assert e.dtype == ember.complex64 and tuple(e.shape) == tuple(t.shape)
        np.testing.assert_allclose(as_numpy(e), as_numpy(t), rtol=1e-5, atol=1e-6)
    assert_state_dicts_match(eo.state_dict(), to.state_dict(), np.float32)


def test_params_without_grad_are_skipped():
    init, grads = make_data(np.float32)
    tp, ep = leaves(torch, init), leaves(ember, init)
    to, eo = torch.optim.Adam(tp, lr=0.1), ember.optim.Adam(ep, lr=0.1)
    for g in grads[:3]:
        feed(torch, tp[:1], g[:1])
        feed(ember, ep[:1], g[:1])
        to.step()
        eo.step()
    for e, t in zip(ep, tp):
        assert_close(e, t, np.float32)
    np.testing.assert_array_equal(as_numpy(ep[1]), init[1])
    assert eo.state_dict()["state"].keys() == to.state_dict()["state"].keys() == {0}


def test_param_groups_with_their_own_options():
    init, grads = make_data(np.float32)
    tp, ep = leaves(torch, init), leaves(ember, init)

    def groups(p):
        return [{"params": p[:1]}, {"params": p[1:], "lr": 0.5, "momentum": 0.5}]

    to = torch.optim.SGD(groups(tp), lr=0.1, momentum=0.9)
    eo = ember.optim.SGD(groups(ep), lr=0.1, momentum=0.9)
    for g in grads:
        feed(torch, tp, g)
        feed(ember, ep, g)
        to.step()
        eo.step()
    for e, t in zip(ep, tp):
        assert_close(e, t, np.float32)
    assert_state_dicts_match(eo.state_dict(), to.state_dict(), np.float32)
    assert repr(eo) == repr(to)


def test_add_param_group_later():
    init, grads = make_data(np.float32)
    tp, ep = leaves(torch, init), leaves(ember, init)
    to, eo = torch.optim.Adam(tp[:2], lr=0.1), ember.optim.Adam(ep[:2], lr=0.1)
    to.add_param_group({"params": tp[2], "lr": 0.01, "amsgrad": True})
    eo.add_param_group({"params": ep[2], "lr": 0.01, "amsgrad": True})
    assert eo.param_groups[1]["params"] == [ep[2]]
    for g in grads:
        feed(torch, tp, g)
        feed(ember, ep, g)
        to.step()
        eo.step()
    for e, t in zip(ep, tp):
        assert_close(e, t, np.float32)
    assert_state_dicts_match(eo.state_dict(), to.state_dict(), np.float32)


def test_lr_changed_between_steps_is_used():
    init, grads = make_data(np.float32)
    tp, ep = leaves(torch, init), leaves(ember, init)
    to, eo = torch.optim.RMSprop(tp), ember.optim.RMSprop(ep)
    for i, g in enumerate(grads):
        to.param_groups[0]["lr"] = eo.param_groups[0]["lr"] = 0.01 * (i + 1)
        feed(torch, tp, g)
        feed(ember, ep, g)
        to.step()
        eo.step()
    for e, t in zip(ep, tp):
        assert_close(e, t, np.float32)


# ----------------------------------------------------------------------------- state_dict
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_state_dict_round_trip_continues_identically(case):
    name, kw = case
    init, grads = make_data(np.float32)
    straight = leaves(ember, init)
    opt = getattr(ember.optim, name)(straight, **kw)
    for g in grads:
        feed(ember, straight, g)
        opt.step()

    first = leaves(ember, init)
    opt1 = getattr(ember.optim, name)(first, **kw)
    for g in grads[:10]:
        feed(ember, first, g)
        opt1.step()
    saved = copy.deepcopy(opt1.state_dict())
    resumed = leaves(ember, [as_numpy(p) for p in first])
    opt2 = getattr(ember.optim, name)(resumed, lr=123.0)   # options come from the state_dict
    opt2.load_state_dict(saved)
    assert opt2.param_groups[0]["lr"] == opt1.param_groups[0]["lr"]
    assert opt2.param_groups[0]["params"] == resumed
    for g in grads[10:]:
        feed(ember, resumed, g)
        opt2.step()
    for a, b in zip(resumed, straight):
        np.testing.assert_array_equal(as_numpy(a), as_numpy(b))


def test_state_dict_format_matches_torch():
    init, grads = make_data(np.float32)
    tp, ep = leaves(torch, init), leaves(ember, init)

    def groups(p):
        return [{"params": [p[0], p[2]], "lr": 0.1}, {"params": [p[1]]}]

    to, eo = torch.optim.SGD(groups(tp), lr=0.2, momentum=0.9), \
        ember.optim.SGD(groups(ep), lr=0.2, momentum=0.9)
    assert eo.state_dict() == to.state_dict() == {
        "state": {},
        "param_groups": to.state_dict()["param_groups"]}
    assert [g["params"] for g in eo.state_dict()["param_groups"]] == [[0, 1], [2]]
    feed(torch, tp, grads[0])
    feed(ember, ep, grads[0])
    to.step()
    eo.step()
    esd, tsd = eo.state_dict(), to.state_dict()
    assert sorted(esd["state"]) == sorted(tsd["state"]) == [0, 1, 2]
    assert_state_dicts_match(esd, tsd, np.float32)
    # the state's tensors are the live buffers, as in torch
    assert esd["state"][0]["momentum_buffer"] is eo.state[ep[0]]["momentum_buffer"]


@pytest.mark.parametrize("name", NAMES)
def test_state_before_the_first_step_matches_torch(name):
    # empty, except Adagrad's, which is created with the optimizer
    init = make_data(np.float32)[0]
    kw = dict(lr=0.1) if name == "SGD" else {}
    to = getattr(torch.optim, name)(leaves(torch, init), **kw)
    eo = getattr(ember.optim, name)(leaves(ember, init), **kw)
    assert_state_dicts_match(eo.state_dict(), to.state_dict(), np.float32)
    assert bool(eo.state_dict()["state"]) == (name == "Adagrad")


def test_step_state_is_a_float_scalar_tensor():
    _, ep, to, eo = run_both("Adam", dict(lr=0.1), np.float32, steps=3)
    tstep = to.state[list(to.state)[0]]["step"]
    estep = eo.state[ep[0]]["step"]
    assert estep.dtype == ember.float32 and tuple(estep.shape) == () == tuple(tstep.shape)
    assert estep.item() == tstep.item() == 3.0


def test_load_state_dict_errors():
    ep = leaves(ember, make_data(np.float32)[0])
    tp = leaves(torch, make_data(np.float32)[0])
    esd = ember.optim.SGD(ep, lr=0.1).state_dict()
    tsd = torch.optim.SGD(tp, lr=0.1).state_dict()
    for lib, params, sd in [(ember, ep, esd), (torch, tp, tsd)]:
        with pytest.raises(ValueError) as e1:
            lib.optim.SGD([{"params": params[:1]}, {"params": params[1:]}], lr=0.1) \
                .load_state_dict(sd)
        with pytest.raises(ValueError) as e2:
            lib.optim.SGD(params[:2], lr=0.1).load_state_dict(sd)
        if lib is ember:
            ember_msgs = (str(e1.value), str(e2.value))
        else:
            torch_msgs = (str(e1.value), str(e2.value))
    assert ember_msgs == torch_msgs
    assert ember_msgs == ("loaded state dict has a different number of parameter groups",
                          "loaded state dict contains a parameter group that doesn't match the "
                          "size of optimizer's group")


def test_load_state_dict_casts_state_to_param_dtype():
    ep32 = leaves(ember, make_data(np.float32)[0])
    opt = ember.optim.Adam(ep32)
    feed(ember, ep32, make_data(np.float32)[1][0])
    opt.step()
    ep64 = leaves(ember, make_data(np.float64)[0])
    opt64 = ember.optim.Adam(ep64)
    opt64.load_state_dict(opt.state_dict())
    state = opt64.state[ep64[0]]
    assert state["exp_avg"].dtype == ember.float64
    assert state["step"].dtype == ember.float32       # the step count keeps its dtype


# ----------------------------------------------------------------------------- zero_grad
@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad(set_to_none):
    init, grads = make_data(np.float32)
    results = []
    for lib in (torch, ember):
        params = leaves(lib, init)
        opt = lib.optim.SGD(params, lr=0.1)
        feed(lib, params[:2], grads[0][:2])
        kept = params[0].grad
        opt.zero_grad(set_to_none=set_to_none)
        if set_to_none:
            results.append([p.grad is None for p in params])
        else:
            assert params[0].grad is kept           # zeroed in place, same tensor
            results.append([None if p.grad is None else as_numpy(p.grad).tolist()
                            for p in params])
    assert results[0] == results[1]


def test_zero_grad_default_sets_none_and_detaches_grad_with_history():
    p = ember.tensor(np.ones(3, np.float32), requires_grad=True)
    opt = ember.optim.SGD([p], lr=0.1)
    q = ember.tensor(np.ones(3, np.float32), requires_grad=True)
    p.grad = q * 2                                  # a grad with a graph
    opt.zero_grad(set_to_none=False)
    assert p.grad.grad_fn is None and not p.grad.requires_grad
    np.testing.assert_array_equal(as_numpy(p.grad), np.zeros(3, np.float32))
    opt.zero_grad()
    assert p.grad is None


# ----------------------------------------------------------------------------- step
def test_step_returns_closure_loss_and_runs_it_with_grad():
    for lib in (torch, ember):
        p = lib.tensor(np.array([1.0, 2.0], np.float32), requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1)
        seen = []

        def closure():
            opt.zero_grad()
            loss = (p * p).sum()
            seen.append(lib.is_grad_enabled())
            loss.backward()
            return loss

        with lib.no_grad():
            loss = opt.step(closure)
        assert seen == [True]
        assert float(loss.detach()) == 5.0
        np.testing.assert_allclose(as_numpy(p), [0.8, 1.6], rtol=1e-6)
        assert opt.step() is None


def test_step_bumps_param_version_for_autograd():
    for lib in (torch, ember):
        p = lib.tensor(np.ones(3, np.float32), requires_grad=True)
        opt = lib.optim.Adam([p], lr=0.1)
        y = (p * p).sum()
        version = lambda: p._version
        before = version()
        p.grad = lib.ones(3)
        opt.step()
        assert version() > before
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()


def test_step_does_not_record_graph_or_touch_grad():
    p = ember.tensor(np.ones(3, np.float32), requires_grad=True)
    g = ember.tensor(np.full(3, 0.5, np.float32))
    p.grad = g
    opt = ember.optim.SGD([p], lr=0.1, momentum=0.9, weight_decay=0.1, maximize=True)
    opt.step()
    opt.step()
    assert p.is_leaf and p.grad_fn is None and p.requires_grad
    assert p.grad is g
    np.testing.assert_array_equal(as_numpy(g), np.full(3, 0.5, np.float32))


def test_step_reuses_buffers_and_allocates_little():
    rng = np.random.default_rng(0)
    n = 200_000
    p = ember.tensor(rng.standard_normal(n).astype(np.float32), requires_grad=True)
    p.grad = ember.tensor(rng.standard_normal(n).astype(np.float32))
    param_array = p._data
    for name, kw in [("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1)),
                     ("Adam", dict(amsgrad=True, weight_decay=0.1)), ("AdamW", {}),
                     ("RMSprop", dict(centered=True, momentum=0.9)), ("Adagrad", {}),
                     ("Adadelta", {}), ("Adamax", {}), ("NAdam", {}), ("RAdam", {})]:
        opt = getattr(ember.optim, name)([p], **kw)
        opt.step()                                  # creates state and scratch buffers
        buffers = {k: v._data for k, v in opt.state[p].items()}
        tracemalloc.start()
        opt.step()
        opt.step()
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert peak < p.nbytes // 4, (name, peak)   # no parameter-sized temporaries
        assert p._data is param_array
        assert all(opt.state[p][k]._data is a for k, a in buffers.items())


def test_training_an_mlp_matches_torch():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((16, 5)).astype(np.float32)
    y = rng.standard_normal((16, 2)).astype(np.float32)
    init = [rng.standard_normal((5, 8)).astype(np.float32) * 0.5,
            np.zeros(8, np.float32),
            rng.standard_normal((8, 2)).astype(np.float32) * 0.5]
    final = []
    for lib in (torch, ember):
        w1, b1, w2 = leaves(lib, init)
        opt = lib.optim.Adam([w1, b1, w2], lr=0.05)
        xs, ys = lib.tensor(x), lib.tensor(y)
        for _ in range(10):
            opt.zero_grad()
            h = (xs.matmul(w1) + b1).relu()
            loss = ((h.matmul(w2) - ys) ** 2).mean()
            loss.backward()
            opt.step()
        final.append([as_numpy(t) for t in (w1, b1, w2)])
    for e, t in zip(final[1], final[0]):
        np.testing.assert_allclose(e, t, rtol=1e-4, atol=1e-5)


# ----------------------------------------------------------------------------- repr
def _param(lib):
    return [lib.tensor(np.zeros(2, np.float32), requires_grad=True)]


@pytest.mark.parametrize("name", NAMES)
def test_repr_matches_torch(name):
    kw = dict(lr=0.1) if name == "SGD" else {}
    assert repr(getattr(ember.optim, name)(_param(ember), **kw)) == \
        repr(getattr(torch.optim, name)(_param(torch), **kw))


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_repr_with_options_and_groups_matches_torch(case):
    name, kw = case
    reprs = []
    for lib in (torch, ember):
        groups = [{"params": _param(lib)}, {"params": _param(lib), "lr": 0.25}]
        reprs.append(repr(getattr(lib.optim, name)(groups, **kw)))
    assert reprs[0] == reprs[1]
    assert "Parameter Group 1\n" in reprs[1]


def test_repr_format():
    assert repr(ember.optim.SGD(_param(ember), lr=0.1)) == (
        "SGD (\nParameter Group 0\n    dampening: 0\n    differentiable: False\n"
        "    foreach: None\n    fused: None\n    lr: 0.1\n    maximize: False\n"
        "    momentum: 0\n    nesterov: False\n    weight_decay: 0\n)")


# ----------------------------------------------------------------------------- errors
def _error(lib, fn):
    with pytest.raises(Exception) as info:
        fn(lib)
    return type(info.value).__name__, str(info.value)


ERRORS = {
    "empty params": lambda lib: lib.optim.SGD([], lr=0.1),
    "tensor params": lambda lib: lib.optim.SGD(_param(lib)[0], lr=0.1),
    "int params": lambda lib: lib.optim.SGD(5, lr=0.1),
    "non-tensor param": lambda lib: lib.optim.SGD([1.5], lr=0.1),
    "non-leaf": lambda lib: lib.optim.SGD([_param(lib)[0] * 2], lr=0.1),
    "set params": lambda lib: lib.optim.SGD([{"params": set(_param(lib))}], lr=0.1),
    "group not dict": lambda lib: lib.optim.SGD(_param(lib), lr=0.1).add_param_group(
        _param(lib)),
    "duplicate across groups": lambda lib: (lambda p: lib.optim.SGD(
        [{"params": p}, {"params": p}], lr=0.1))(_param(lib)),
    "nesterov": lambda lib: lib.optim.SGD(_param(lib), lr=0.1, nesterov=True),
    "sgd momentum": lambda lib: lib.optim.SGD(_param(lib), lr=0.1, momentum=-1),
    "sgd weight_decay": lambda lib: lib.optim.SGD(_param(lib), lr=0.1, weight_decay=-1),
    "adam beta0": lambda lib: lib.optim.Adam(_param(lib), betas=(1.0, 0.9)),
    "adam beta1": lambda lib: lib.optim.Adam(_param(lib), betas=(0.9, -0.1)),
    "adam eps": lambda lib: lib.optim.Adam(_param(lib), eps=-1),
    "adamw weight_decay": lambda lib: lib.optim.AdamW(_param(lib), weight_decay=-1),
    "rmsprop alpha": lambda lib: lib.optim.RMSprop(_param(lib), alpha=-1),
    "rmsprop momentum": lambda lib: lib.optim.RMSprop(_param(lib), momentum=-1),
    "adagrad lr_decay": lambda lib: lib.optim.Adagrad(_param(lib), lr_decay=-1),
    "adagrad init": lambda lib: lib.optim.Adagrad(_param(lib), initial_accumulator_value=-1),
    "adadelta rho": lambda lib: lib.optim.Adadelta(_param(lib), rho=1.5),
    "nadam momentum_decay": lambda lib: lib.optim.NAdam(_param(lib), momentum_decay=-1),
    "radam beta": lambda lib: lib.optim.RAdam(_param(lib), betas=(0.9, 1.0)),
}


@pytest.mark.parametrize("what", sorted(ERRORS))
def test_errors_match_torch(what):
    assert _error(ember, ERRORS[what]) == _error(torch, ERRORS[what])


@pytest.mark.parametrize("name", NAMES)
def test_negative_lr_error(name):
    expected = ("ValueError", "Invalid learning rate: -1")
    assert _error(ember, lambda lib: getattr(lib.optim, name)(_param(lib), lr=-1)) == expected
    assert _error(torch, lambda lib: getattr(lib.optim, name)(_param(lib), lr=-1)) == expected


def test_duplicate_params_in_a_group_warn_like_torch():
    messages = []
    for lib in (torch, ember):
        p = _param(lib)[0]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.optim.SGD([p, p], lr=0.1)
        messages.append([str(w.message) for w in caught if "duplicate" in str(w.message)])
    assert messages[0] == messages[1] and len(messages[1]) == 1


def test_unsupported_implementations_raise():
    # fused/capturable/differentiable are tested in test_optim_flags.py; what ember lacks:
    with pytest.raises(NotImplementedError, match="differentiable"):
        ember.optim.RMSprop(_param(ember), differentiable=True)


def test_named_params_keep_their_names():
    sds = []
    for lib in (torch, ember):
        p = _param(lib)[0]
        sds.append(lib.optim.SGD([("w", p)], lr=0.1).state_dict())
    assert sds[0] == sds[1]
    assert sds[1]["param_groups"][0]["param_names"] == ["w"]


def test_required_default():
    from ember.optim.optimizer import required, Optimizer
    assert repr(required) == "<required parameter>"

    class Needs(Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": required})

    with pytest.raises(ValueError, match="didn't specify a value of required optimization "
                                         "parameter lr"):
        Needs(_param(ember))
    assert Needs([{"params": _param(ember), "lr": 0.5}]).param_groups[0]["lr"] == 0.5


# ----------------------------------------------------------------------------- step hooks
def _optimizer_module(lib):
    import sys
    return sys.modules[lib.optim.__name__ + ".optimizer"]


def test_step_hooks_run_like_torch():
    logs = []
    for lib in (torch, ember):
        log = []
        p = lib.tensor(np.ones(2, np.float32), requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1)
        module = _optimizer_module(lib)
        handles = [
            opt.register_step_pre_hook(lambda o, a, k: log.append(("pre", len(a), sorted(k)))),
            opt.register_step_post_hook(lambda o, a, k: log.append(("post", len(a)))),
            module.register_optimizer_step_pre_hook(lambda o, a, k: log.append("global pre")),
            module.register_optimizer_step_post_hook(lambda o, a, k: log.append("global post")),
        ]
        try:
            p.grad = lib.ones(2)
            opt.step()
            opt.step(closure=lambda: 1.0)
            handles[0].remove()
            opt.step()
        finally:
            for h in handles:
                h.remove()
        opt.step()
        logs.append(log)
    assert logs[0] == logs[1]
    assert logs[1][:4] == ["global pre", ("pre", 1, []), ("post", 1), "global post"]


def test_step_pre_hook_can_replace_arguments():
    p = ember.tensor(np.ones(2, np.float32), requires_grad=True)
    opt = ember.optim.SGD([p], lr=0.1)
    opt.register_step_pre_hook(lambda o, a, k: (a, {"closure": lambda: 7.0}))
    assert opt.step() == 7.0
    opt.register_step_pre_hook(lambda o, a, k: "bad")
    with pytest.raises(RuntimeError, match="must return None or a tuple"):
        opt.step()


# ---------------------------------------------------------------- optim
@pytest.mark.parametrize("name", ["Adam", "AdamW", "Adamax", "RAdam"])
@pytest.mark.parametrize("flags", [dict(foreach=True), dict(foreach=True, capturable=True),
                                   dict(foreach=False), dict()])
@pytest.mark.parametrize("lr", [0.01, [0.01], [0.01, 0.02]])
def test_tensor_lr_with_foreach(name, flags, lr):
    def f(T):
        p = T.nn.Parameter(T.ones(2))
        rate = T.tensor(lr) if isinstance(lr, list) else lr
        return catch(lambda: repr(getattr(T.optim, name)([p], lr=rate, **flags)))
    same(f)
