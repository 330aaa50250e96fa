"""ember.optim.lr_scheduler against torch.optim.lr_scheduler: the same optimizer and schedule in
both, stepped side by side; the lr sequences (and momentum/betas for OneCycleLR) compared."""
import copy
import warnings

import numpy as np
import pytest
import torch

import ember
from differential import catch, same, warnings_of

STEPS = 30


def make_optimizer(lib, name="SGD", **kw):
    """Two param groups with different lrs, so per-group behaviour is exercised."""
    a = lib.tensor(np.ones(3, np.float32), requires_grad=True)
    b = lib.tensor(np.ones(2, np.float32), requires_grad=True)
    groups = [{"params": [a]}, {"params": [b], "lr": 0.05}]
    if name == "SGD":
        kw.setdefault("momentum", 0.9)
        return getattr(lib.optim, name)(groups, lr=0.1, **kw)
    return getattr(lib.optim, name)(groups, lr=0.1, **kw)


def group_values(opt, key):
    return [g[key] for g in opt.param_groups]


SCHEDULES = {
    "StepLR": lambda S, o: S.StepLR(o, step_size=4, gamma=0.5),
    "StepLR-default-gamma": lambda S, o: S.StepLR(o, 3),
    "MultiStepLR": lambda S, o: S.MultiStepLR(o, milestones=[3, 7, 7, 12], gamma=0.3),
    "ExponentialLR": lambda S, o: S.ExponentialLR(o, gamma=0.9),
    "CosineAnnealingLR": lambda S, o: S.CosineAnnealingLR(o, T_max=10),
    "CosineAnnealingLR-eta_min": lambda S, o: S.CosineAnnealingLR(o, T_max=7, eta_min=0.01),
    "LambdaLR": lambda S, o: S.LambdaLR(o, lr_lambda=lambda e: 0.95 ** e),
    "LambdaLR-list": lambda S, o: S.LambdaLR(o, [lambda e: 1 / (e + 1), lambda e: 0.9 ** e]),
    "LinearLR": lambda S, o: S.LinearLR(o),
    "LinearLR-decay": lambda S, o: S.LinearLR(o, start_factor=1.0, end_factor=0.1,
                                              total_iters=12),
    "OneCycleLR": lambda S, o: S.OneCycleLR(o, max_lr=1.0, total_steps=STEPS),
    "OneCycleLR-list-linear": lambda S, o: S.OneCycleLR(
        o, max_lr=[1.0, 0.5], epochs=3, steps_per_epoch=10, pct_start=0.25,
        anneal_strategy="linear", base_momentum=[0.8, 0.7], max_momentum=0.9),
    "OneCycleLR-three-phase": lambda S, o: S.OneCycleLR(o, max_lr=0.3, total_steps=STEPS,
                                                        three_phase=True, div_factor=10.0,
                                                        final_div_factor=100.0),
    "OneCycleLR-no-momentum": lambda S, o: S.OneCycleLR(o, max_lr=0.3, total_steps=STEPS,
                                                        cycle_momentum=False),
    "SequentialLR": lambda S, o: S.SequentialLR(
        o, [S.LinearLR(o, start_factor=0.1, total_iters=5),
            S.CosineAnnealingLR(o, T_max=10, eta_min=0.001)], milestones=[5]),
    "MultiplicativeLR": lambda S, o: S.MultiplicativeLR(o, lambda e: 0.9 if e % 3 else 1.05),
    "ConstantLR": lambda S, o: S.ConstantLR(o),
    "ConstantLR-factor": lambda S, o: S.ConstantLR(o, factor=0.2, total_iters=9),
    "PolynomialLR": lambda S, o: S.PolynomialLR(o, total_iters=20, power=2.0),
    "CosineAnnealingWarmRestarts": lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=7),
    "CosineAnnealingWarmRestarts-mult": lambda S, o: S.CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=2, eta_min=0.001),
    "ChainedScheduler": lambda S, o: S.ChainedScheduler(
        [S.ConstantLR(o, factor=0.5, total_iters=4), S.ExponentialLR(o, gamma=0.9)]),
    "SequentialLR-three": lambda S, o: S.SequentialLR(
        o, [S.ExponentialLR(o, gamma=0.9), S.StepLR(o, 2), S.LambdaLR(o, lambda e: 1.0)],
        milestones=[4, 11]),
}


def run_schedule(lib, make, optimizer="SGD", steps=STEPS):
    opt = make_optimizer(lib, optimizer)
    sched = make(lib.optim.lr_scheduler, opt)
    trace = [(list(sched.get_last_lr()), group_values(opt, "lr"), _momenta(opt))]
    for _ in range(steps):
        opt.step()
        sched.step()
        trace.append((list(sched.get_last_lr()), group_values(opt, "lr"), _momenta(opt)))
    return trace, opt, sched


def _momenta(opt):
    key = "betas" if "betas" in opt.defaults else "momentum"
    return group_values(opt, key)


@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
@pytest.mark.parametrize("what", sorted(SCHEDULES))
def test_lr_sequence_matches_torch(what, optimizer):
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # stepped in the right order: no warnings
        expected, topt, tsched = run_schedule(torch, SCHEDULES[what], optimizer)
        got, eopt, esched = run_schedule(ember, SCHEDULES[what], optimizer)
    assert got == expected                  # same formulas, so bit-identical floats
    assert eopt.param_groups[0].keys() - {"params"} == topt.param_groups[0].keys() - {"params"}
    assert getattr(esched, "last_epoch", None) == getattr(tsched, "last_epoch", None)


def test_lr_sequence_is_not_trivial():
    trace, _, _ = run_schedule(ember, SCHEDULES["OneCycleLR"])
    lrs = [t[0][0] for t in trace]
    momenta = [t[2][0] for t in trace]
    assert len(set(lrs)) > 20 and len(set(momenta)) > 20
    assert max(lrs) == pytest.approx(1.0, rel=1e-3)


def test_onecycle_past_total_steps_raises_like_torch():
    messages = []
    for lib in (torch, ember):
        opt = make_optimizer(lib)
        sched = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=3)
        for _ in range(3):
            opt.step()
            sched.step()
        with pytest.raises(ValueError) as info:
            sched.step()
        messages.append(str(info.value))
    assert messages[0] == messages[1] == \
        "Tried to step 4 times. The specified number of total steps is 3"


CLOSED_FORM = ["StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "LinearLR-decay",
               "ConstantLR-factor", "PolynomialLR", "CosineAnnealingWarmRestarts-mult"]


@pytest.mark.parametrize("what", CLOSED_FORM)
def test_step_with_epoch_uses_closed_form_and_warns(what):
    results = []
    for lib in (torch, ember):
        opt = make_optimizer(lib)
        sched = SCHEDULES[what](lib.optim.lr_scheduler, opt)
        lrs = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for epoch in [3, 1, 8, 8, 15, 2, 21.5, 0.25]:
                opt.step()
                sched.step(epoch)
                lrs.append(list(sched.get_last_lr()))
        results.append((lrs, sorted({str(w.message) for w in caught})))
    assert results[0] == results[1]
    # warm restarts take an epoch as their normal API (fractional ones too), without warning
    warned = any("epoch parameter in `scheduler.step()`" in m for m in results[1][1])
    assert warned == ("WarmRestarts" not in what)


@pytest.mark.parametrize("mode,threshold_mode", [("min", "rel"), ("min", "abs"),
                                                 ("max", "rel"), ("max", "abs")])
def test_reduce_lr_on_plateau_matches_torch(mode, threshold_mode):
    rng = np.random.default_rng(0)
    metrics = np.concatenate([np.linspace(1.0, 0.5, 5), np.full(10, 0.5),
                              0.5 + 0.001 * rng.standard_normal(20), np.linspace(0.5, 2, 5)])
    if mode == "max":
        metrics = 3.0 - metrics
    traces = []
    for lib in (torch, ember):
        opt = make_optimizer(lib)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(
            opt, mode=mode, factor=0.5, patience=2, threshold=0.01,
            threshold_mode=threshold_mode, cooldown=1, min_lr=[0.001, 0.01], eps=1e-9)
        trace = []
        for m in metrics:
            opt.step()
            sched.step(float(m))
            trace.append((list(sched.get_last_lr()), group_values(opt, "lr"), sched.best,
                          sched.num_bad_epochs, sched.cooldown_counter, sched.last_epoch))
        traces.append(trace)
    assert traces[0] == traces[1]
    assert len({t[0][0] for t in traces[1]}) > 2        # it did reduce, more than once


def test_reduce_lr_on_plateau_defaults_and_tensor_metric():
    traces = []
    for lib in (torch, ember):
        opt = make_optimizer(lib)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt)
        trace = []
        for i in range(40):
            sched.step(lib.tensor(1.0 if i > 3 else 5.0 - i))
            trace.append(list(sched.get_last_lr()))
        traces.append((trace, sched.state_dict()))
    assert traces[0] == traces[1]


@pytest.mark.parametrize("what", ["StepLR", "CosineAnnealingLR", "OneCycleLR", "LinearLR",
                                  "MultiStepLR", "SequentialLR", "ChainedScheduler",
                                  "CosineAnnealingWarmRestarts-mult", "PolynomialLR"])
def test_state_dict_matches_torch_and_round_trips(what):
    dicts = []
    for lib in (torch, ember):
        _, opt, sched = run_schedule(lib, SCHEDULES[what], steps=7)
        dicts.append(sched.state_dict())
    assert dicts[0] == dicts[1]

    # resume: a fresh scheduler loaded from the state continues like the original
    straight, _, _ = run_schedule(ember, SCHEDULES[what], steps=15)
    _, opt, sched = run_schedule(ember, SCHEDULES[what], steps=7)
    saved_opt, saved_sched = copy.deepcopy(opt.state_dict()), copy.deepcopy(sched.state_dict())
    opt2 = make_optimizer(ember)
    sched2 = SCHEDULES[what](ember.optim.lr_scheduler, opt2)
    opt2.load_state_dict(saved_opt)
    sched2.load_state_dict(saved_sched)
    resumed = []
    for _ in range(8):
        opt2.step()
        sched2.step()
        resumed.append(list(sched2.get_last_lr()))
    assert resumed == [t[0] for t in straight[8:]]


def test_lambda_lr_state_dict_keeps_callable_objects_state():
    class Factor:
        def __init__(self):
            self.base = 0.5

        def __call__(self, epoch):
            return self.base ** epoch

    dicts = []
    for lib in (torch, ember):
        opt = make_optimizer(lib)
        sched = lib.optim.lr_scheduler.LambdaLR(opt, [Factor(), lambda e: 1.0])
        dicts.append(sched.state_dict())
    assert dicts[0] == dicts[1]
    assert dicts[1]["lr_lambdas"] == [{"base": 0.5}, None]
    opt = make_optimizer(ember)
    factor = Factor()
    sched = ember.optim.lr_scheduler.LambdaLR(opt, [factor, lambda e: 1.0])
    saved = copy.deepcopy(dicts[1])
    saved["lr_lambdas"][0]["base"] = 0.25
    sched.load_state_dict(saved)
    assert factor.base == 0.25


# ----------------------------------------------------------------------------- warnings
def _warnings(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [str(w.message) for w in caught]


def test_scheduler_step_before_optimizer_step_warns_like_torch():
    messages = []
    for lib in (torch, ember):
        opt = make_optimizer(lib)
        sched = lib.optim.lr_scheduler.StepLR(opt, 2)
        messages.append(_warnings(sched.step))
    assert messages[0] == messages[1]
    assert len(messages[1]) == 1 and messages[1][0].startswith(
        "Detected call of `lr_scheduler.step()` before `optimizer.step()`.")


def test_no_warning_in_the_right_order_and_step_still_returns_loss():
    for lib in (torch, ember):
        opt = make_optimizer(lib)
        sched = lib.optim.lr_scheduler.ExponentialLR(opt, 0.5)
        assert _warnings(lambda: opt.step(lambda: 3.0)) == []
        assert opt.step(lambda: 3.0) == 3.0
        assert _warnings(sched.step) == []


def test_overridden_optimizer_step_warns_like_torch():
    messages = []
    for lib in (torch, ember):
        opt = make_optimizer(lib)
        sched = lib.optim.lr_scheduler.StepLR(opt, 2)
        opt.step = lambda closure=None: None
        messages.append(_warnings(sched.step))
    assert messages[0] == messages[1] and "has been overridden" in messages[1][0]


def test_get_lr_called_directly_warns_like_torch():
    messages = []
    for lib in (torch, ember):
        sched = lib.optim.lr_scheduler.StepLR(make_optimizer(lib), 2)
        messages.append(_warnings(sched.get_lr))
    assert messages[0] == messages[1] == [
        "To get the last learning rate computed by the scheduler, please use "
        "`get_last_lr()`."]


# ----------------------------------------------------------------------------- errors
def _error(lib, fn):
    with pytest.raises(Exception) as info:
        fn(lib.optim.lr_scheduler, make_optimizer(lib))
    return type(info.value).__name__, str(info.value)


ERRORS = {
    "not an optimizer": lambda S, o: S.StepLR(object(), 2),
    "linear start": lambda S, o: S.LinearLR(o, start_factor=0),
    "linear end": lambda S, o: S.LinearLR(o, end_factor=2),
    "plateau factor": lambda S, o: S.ReduceLROnPlateau(o, factor=1.0),
    "plateau mode": lambda S, o: S.ReduceLROnPlateau(o, mode="up"),
    "plateau threshold mode": lambda S, o: S.ReduceLROnPlateau(o, threshold_mode="x"),
    "plateau min_lrs": lambda S, o: S.ReduceLROnPlateau(o, min_lr=[0.1]),
    "lambda count": lambda S, o: S.LambdaLR(o, [lambda e: 1.0]),
    "onecycle steps": lambda S, o: S.OneCycleLR(o, max_lr=1.0),
    "onecycle total": lambda S, o: S.OneCycleLR(o, max_lr=1.0, total_steps=0),
    "onecycle pct": lambda S, o: S.OneCycleLR(o, max_lr=1.0, total_steps=5, pct_start=1.5),
    "onecycle anneal": lambda S, o: S.OneCycleLR(o, 1.0, total_steps=5, anneal_strategy="x"),
    "onecycle max_lr list": lambda S, o: S.OneCycleLR(o, max_lr=[1.0], total_steps=5),
    "sequential milestones": lambda S, o: S.SequentialLR(o, [S.StepLR(o, 2)], milestones=[3]),
    "sequential empty": lambda S, o: S.SequentialLR(o, [], milestones=[]),
    "resume without initial_lr": lambda S, o: S.StepLR(o, 2, last_epoch=3),
    "constant factor": lambda S, o: S.ConstantLR(o, factor=1.5),
    "multiplicative not callable": lambda S, o: S.MultiplicativeLR(o, 0.5),
    "warm restarts T_0": lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=0),
    "warm restarts T_mult": lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=1.5),
    "warm restarts epoch": lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=2).step(-1),
    "chained empty": lambda S, o: S.ChainedScheduler([]),
    "chained plateau": lambda S, o: S.ChainedScheduler([S.ReduceLROnPlateau(o)], o),
}


@pytest.mark.parametrize("what", sorted(ERRORS))
def test_errors_match_torch(what):
    assert _error(ember, ERRORS[what]) == _error(torch, ERRORS[what])


def test_onecycle_without_momentum_support_raises():
    class Plain(ember.optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": 0.1})

    p = ember.tensor(np.ones(2, np.float32), requires_grad=True)
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        ember.optim.lr_scheduler.OneCycleLR(Plain([p]), max_lr=1.0, total_steps=5)


def _cyclic_run(T, opt_name, opt_kw, kw, steps=14):
    p = T.nn.Parameter(T.ones(2))
    opt = getattr(T.optim, opt_name)([p], lr=0.5, **opt_kw)
    sched = T.optim.lr_scheduler.CyclicLR(opt, **kw)

    def seen():
        g = opt.param_groups[0]
        return sched.get_last_lr(), g["lr"], g.get("momentum"), g.get("betas")
    out = [seen()]
    for _ in range(steps):
        opt.step()
        sched.step()
        out.append(seen())
    return out, sched.state_dict(), sorted(opt.param_groups[0])


@pytest.mark.parametrize("opt_name,opt_kw,kw", [
    ("SGD", dict(momentum=0.9), dict(base_lr=0.1, max_lr=1.0, step_size_up=3)),
    ("SGD", dict(momentum=0.9), dict(base_lr=0.1, max_lr=1.0, step_size_up=2, step_size_down=5,
                                     mode="triangular2")),
    ("SGD", dict(momentum=0.9), dict(base_lr=0.1, max_lr=1.0, step_size_up=3, mode="exp_range",
                                     gamma=0.9)),
    ("Adam", dict(), dict(base_lr=0.1, max_lr=1.0, step_size_up=3, base_momentum=0.7,
                          max_momentum=0.95)),
    ("SGD", dict(), dict(base_lr=0.1, max_lr=1.0, step_size_up=3, cycle_momentum=False)),
    ("SGD", dict(momentum=0.9), dict(base_lr=[0.1], max_lr=[1.0], step_size_up=3,
                                     scale_fn=lambda x: 0.5, scale_mode="iterations")),
])
def test_cyclic_lr(opt_name, opt_kw, kw):
    same(lambda T: _cyclic_run(T, opt_name, opt_kw, kw))


def test_cyclic_lr_errors():
    def f(T):
        p = T.nn.Parameter(T.ones(2))
        opt = T.optim.SGD([p], lr=0.5, momentum=0.9)
        C = T.optim.lr_scheduler.CyclicLR
        return (catch(lambda: repr(C(opt, 0.1, 1.0, mode="foo"))),
                catch(lambda: repr(C(T.optim.Adagrad([p]), 0.1, 1.0))),
                catch(lambda: repr(C(opt, [0.1, 0.2], 1.0))),
                catch(lambda: C(opt, 0.1, 1.0, mode="foo", scale_fn=lambda x: 1.).get_last_lr()),
                catch(C, 3, 0.1, 1.0))
    same(f)


class _Halving:
    """A scale_fn object: CyclicLR saves its attributes in state_dict."""

    def __init__(self, k=0.5):
        self.k = k

    def __call__(self, x):
        return self.k ** x


def test_cyclic_lr_state_dict_of_a_callable_scale_fn():
    def f(T):
        p = T.nn.Parameter(T.ones(2))
        opt = T.optim.SGD([p], lr=0.5, momentum=0.9)
        sched = T.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0, step_size_up=2, scale_fn=_Halving())
        for _ in range(3):
            opt.step()
            sched.step()
        state = sched.state_dict()
        other = _Halving(0.1)
        resumed = T.optim.lr_scheduler.CyclicLR(T.optim.SGD([p], lr=0.5, momentum=0.9), 0.1,
                                                1.0, step_size_up=2, scale_fn=other)
        resumed.load_state_dict(dict(state))
        return state["_scale_fn_custom"], other.k, resumed.last_epoch, resumed.get_last_lr()
    same(f)
