"""torch.profiler's DeviceType and kineto_available, and torch.autograd.profiler's helpers
EnforceUnique, KinetoStepTracker and MemRecordsAcc, against torch."""
import importlib

import torch
import torch.autograd.profiler      # noqa: F401

import ember
from differential import catch, same


def _autograd_profiler(T):
    return importlib.import_module(T.__name__ + ".autograd.profiler")


def test_device_type():
    def scenario(T):
        D = T.profiler.DeviceType
        return {"members": [(name, int(m)) for name, m in D.__members__.items()],
                "repr": repr(D.CPU), "str": str(D.CUDA), "name": D.MPS.name,
                "by_value": str(D(1)), "eq": [D.CPU == D.CPU, D.CPU == 0, D.CPU == D.CUDA],
                "index": [0, 1, 2][D.CUDA], "is_int": isinstance(D.CPU, int)}
    same(scenario)


def test_events_are_on_the_cpu():
    def scenario(T):
        with T.profiler.profile() as prof:
            T.ones(2) + 1
        return [str(e.device_type) for e in prof.events()][:1], \
            type(prof.events()[0].device_type) is T.profiler.DeviceType
    same(scenario)


def test_kineto_available():
    # an environment query: torch here is built with Kineto, ember's profiler is its own
    assert torch.profiler.kineto_available() is True
    assert ember.profiler.kineto_available() is False
    # the profile API works all the same
    with ember.profiler.profile() as prof:
        ember.ones(2).sum()
    assert "aten::sum" in [e.name for e in prof.events()]


def test_enforce_unique():
    def scenario(T):
        u = _autograd_profiler(T).EnforceUnique()
        return [catch(u.see, 1), catch(u.see, 1), catch(u.see, 2, "a"), catch(u.see, 2, "a"),
                catch(u.see), catch(u.see), catch(u.see, 1, 2)]
    same(scenario)


def test_kineto_step_tracker():
    def scenario(T):
        K = _autograd_profiler(T).KinetoStepTracker
        K._step_dict.clear()
        K._current_step = 0
        seen = [K.current_step(), K.init_step_count("a"), K.increment_step("a"),
                K.current_step(), K.increment_step("a"), K.init_step_count("b"),
                K.increment_step("b"), K.increment_step("a"), K.current_step(),
                K.erase_step_count("a"), K.erase_step_count("zz"), K.increment_step("b"),
                K.increment_step("new"), dict(K._step_dict)]
        K._step_dict.clear()
        with T.profiler.profile() as prof:
            inside = dict(K._step_dict)
            prof.step()
            stepped = dict(K._step_dict)
        after = dict(K._step_dict)
        p = T.profiler.profile()
        p.start()
        started = dict(K._step_dict)
        p.stop()
        stopped = dict(K._step_dict)
        K._step_dict.clear()
        K._current_step = 0
        return seen, inside, stepped, after, started, stopped
    same(scenario)


class _Record:
    def __init__(self, ns):
        self.ns = ns

    def start_ns(self):
        return self.ns


def test_mem_records_acc():
    def scenario(T):
        Acc = _autograd_profiler(T).MemRecordsAcc
        records = [(_Record(ns), tag) for ns, tag in
                   [(50, "a"), (10, "b"), (30, "c"), (30, "d"), (70, "e")]]
        acc = Acc(records)
        return [[tag for _, tag in acc.in_interval(lo, hi)]
                for lo, hi in [(0, 100), (10, 30), (11, 29), (30, 30), (60, 80), (80, 90)]] + \
            [list(Acc([]).in_interval(0, 10))]
    same(scenario)
