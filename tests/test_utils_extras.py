"""torch.utils names against torch: checkpoint's helpers (CheckpointError and the determinism
check, context_fn, early stop, detach_variable, noop_context_fn, DefaultDeviceType, ...),
torch.utils.hooks' BackwardHook and warn_if_has_hooks, and torch.utils.swap_tensors."""
import contextlib
import importlib
import re
import weakref

import pytest
import torch
import torch.utils.checkpoint    # noqa: F401

from differential import catch, same, warnings_of


def _C(T):
    return importlib.import_module(T.__name__ + ".utils.checkpoint")


def _H(T):
    return importlib.import_module(T.__name__ + ".utils.hooks")


# ----------------------------------------------------------------------------- checkpoint
def test_checkpoint_helpers():
    def scenario(T):
        C = _C(T)
        x = T.ones(2, requires_grad=True)
        y = x * 2
        detached = C.detach_variable((x, y, T.ones(1), 3, "a", None))
        contexts = C.noop_context_fn()
        default_device = C.DefaultDeviceType.get_device_type()
        C.DefaultDeviceType.set_device_type("cuda")
        changed = C.DefaultDeviceType.get_device_type()
        C.DefaultDeviceType.set_device_type(default_device)
        return {"detached": [(t.requires_grad, t.is_leaf, t is x) if isinstance(t, T.Tensor)
                             else t for t in detached],
                "detach_errors": [catch(C.detach_variable, [x]), catch(C.detach_variable, x)],
                "contexts": [type(c).__name__ for c in contexts],
                "devices": [default_device, changed],
                "validity": [warnings_of(lambda: C.check_backward_validity((T.ones(1), 3)))[1],
                             warnings_of(lambda: C.check_backward_validity((x,)))[1]],
                "device_states": C.get_device_states(x, T.ones(1), 3),
                "set_states": C.set_device_states([], []),
                "error": [issubclass(C.CheckpointError, RuntimeError),
                          str(C.CheckpointError("m"))],
                "policy": [(n, p.value) for n, p in C.CheckpointPolicy.__members__.items()],
                "reentrant_node": C.checkpoint(lambda a: a * 2, x,
                                               use_reentrant=True).grad_fn.name(),
                "function": issubclass(C.CheckpointFunction, T.autograd.Function)}
    same(scenario)


@pytest.mark.parametrize("kwargs", [
    dict(use_reentrant=True, context_fn="noop", k=1), dict(use_reentrant=True, context_fn="own"),
    dict(use_reentrant=True, debug=True), dict(use_reentrant=True, debug=True, k=1),
    dict(use_reentrant=True, determinism_check="bad"),
    dict(use_reentrant=False, determinism_check="bad", context_fn="own"),
    dict(use_reentrant=False, context_fn=lambda: 5),
])
def test_checkpoint_argument_errors(kwargs):
    def scenario(T):
        C = _C(T)
        kw = dict(kwargs)
        if kw.get("context_fn") == "noop":
            kw["context_fn"] = C.noop_context_fn
        elif kw.get("context_fn") == "own":
            kw["context_fn"] = C.noop_context_fn.__call__    # the same, not the default
        x = T.ones(2, requires_grad=True)
        out = catch(lambda: C.checkpoint(lambda a, **k: a * 2, x, **kw))
        return out if isinstance(out, tuple) else out.grad_fn.name()
    same(scenario)


def test_checkpoint_context_fn():
    def scenario(T):
        C = _C(T)
        calls = []

        @contextlib.contextmanager
        def region(tag):
            calls.append("enter " + tag)
            try:
                yield
            finally:
                calls.append("exit " + tag)

        x = T.tensor([0.5, -1.0], requires_grad=True)
        y = C.checkpoint(lambda a: (a * 2).sin(), x, use_reentrant=False,
                         context_fn=lambda: (region("forward"), region("recompute")))
        calls.append("backward")
        y.sum().backward()
        return calls[:4], x.grad
    same(scenario)


def _flaky(kind):
    """A function whose recomputation differs from its first run."""
    runs = [0]

    def f(a):
        runs[0] += 1
        first = runs[0] == 1
        if kind == "more":
            return a.sin() if first else (a.sin() * a).exp()
        if kind == "fewer":
            return (a.sin() * a).exp() if first else a.sin()
        if kind == "shape":
            return a * a if first else a[:1] * a[:1]
        return (a * a).sum() if first else (a * a.double()).sum()
    return f


@pytest.mark.parametrize("kind,early_stop,check", [
    ("more", True, "default"), ("more", False, "default"), ("fewer", True, "default"),
    ("shape", True, "default"), ("shape", True, "none"), ("dtype", True, "default")])
def test_checkpoint_determinism_check(kind, early_stop, check):
    def scenario(T):
        C = _C(T)
        x = T.tensor([0.5, 2.0], requires_grad=True)
        with C.set_checkpoint_early_stop(early_stop):
            y = C.checkpoint(_flaky(kind), x, use_reentrant=False, determinism_check=check)
            err = catch(lambda: y.sum().backward())
        if err is not None:
            kind_, msg = err[1], err[2]
            # the counts in "A different number..." are the library's own; the first line and
            # the tip are torch's text
            first = msg.split("\n")[0]
            return kind_, first, msg[msg.index("\n\nTip:"):]
        return x.grad
    same(scenario)


def test_checkpoint_metadata_error_message():
    def scenario(T):
        C = _C(T)
        x = T.tensor([0.5, 2.0], requires_grad=True)
        y = C.checkpoint(_flaky("shape"), x, use_reentrant=False)
        return catch(lambda: y.sum().backward())
    same(scenario)


def test_checkpoint_settings_and_groups():
    def scenario(T):
        C = _C(T)
        x = T.tensor([0.5, 2.0], requires_grad=True)
        with C.set_checkpoint_debug_enabled(None), C.set_checkpoint_early_stop(False):
            y = C.checkpoint(lambda a: (a * 2).sin() * a, x, use_reentrant=False)
        y.sum().backward(retain_graph=True)
        first = x.grad.clone()
        y.sum().backward(retain_graph=True)          # outside a group: backward again
        second = x.grad.clone()
        with C.GraphExecGroup() as group:
            y.sum().backward(retain_graph=True)
            overlap = catch(lambda: y.sum().backward())     # the same saved tensors again
        z = C.checkpoint(lambda a: a.exp() * a, x, use_reentrant=False)
        w = C.checkpoint(lambda a: a.sin() * 3, x, use_reentrant=False)
        with C.GraphExecGroup():
            z.sum().backward()
            w.sum().backward()                       # another region: no overlap
        return first, second, overlap, x.grad, type(group).__name__, \
            type(C.set_checkpoint_early_stop(True)).__name__
    same(scenario)


# ----------------------------------------------------------------------------- hooks
def test_warn_if_has_hooks():
    def scenario(T):
        H = _H(T)
        t = T.ones(2, requires_grad=True)

        def hook(g):
            return g
        seen = [warnings_of(lambda: H.warn_if_has_hooks(t))[1]]
        t.register_hook(hook)
        seen.append(warnings_of(lambda: H.warn_if_has_hooks(t))[1])
        t.register_hook(H.unserializable_hook(lambda g: g))
        seen.append(warnings_of(lambda: H.warn_if_has_hooks(t))[1])
        u = t * 2
        u.register_hook(hook)
        seen.append(warnings_of(lambda: H.warn_if_has_hooks(u))[1])
        seen.append(warnings_of(lambda: H.warn_if_has_hooks(t * 3))[1])
        return [[re.sub(r" at 0x[0-9a-f]+", "", w) for w in ws] for ws in seen]
    same(scenario)


def test_backward_hook():
    def scenario(T):
        H = _H(T)
        m = T.nn.Linear(2, 3)
        with T.no_grad():
            m.weight.copy_(T.arange(6.0).view(3, 2))
            m.bias.zero_()
        seen = []

        def hook(mod, grad_input, grad_output):
            seen.append(("hook", mod is m, [g for g in grad_input], list(grad_output)))

        def pre(mod, grad_output):
            seen.append(("pre", list(grad_output)))
            return (grad_output[0] * 2,)

        bw = H.BackwardHook(m, [hook], [pre])
        x = T.ones(4, 2, requires_grad=True)
        args = bw.setup_input_hook((x, 3))
        out = bw.setup_output_hook(m(args[0]))
        out.sum().backward()
        return {"args": [type(args).__name__, len(args), args[1]],
                "nodes": [type(args[0].grad_fn).__name__, type(out.grad_fn).__name__],
                "attrs": [bw.user_hooks == [hook], bw.user_pre_hooks == [pre], bw.module is m],
                "seen": seen, "x_grad": x.grad, "w_grad": m.weight.grad}
    same(scenario)


# ----------------------------------------------------------------------------- swap_tensors
def test_swap_tensors():
    def scenario(T):
        U = T.utils
        a = T.ones(2, requires_grad=True)
        b = T.zeros(3)
        a.foo = 1
        a.grad = T.full((2,), 5.0)
        out = {"returns": U.swap_tensors(a, b)}
        out["a"] = [a, a.grad, getattr(a, "foo", None), a.requires_grad]
        out["b"] = [b, b.grad, getattr(b, "foo", None), b.requires_grad, b.is_leaf]
        p, t = T.nn.Parameter(T.ones(2)), T.zeros(2)
        U.swap_tensors(p, t)
        out["classes"] = [type(p).__name__, type(t).__name__, repr(t)]
        x = T.ones(2, requires_grad=True)
        y, z = x * 2, T.zeros(2)
        U.swap_tensors(y, z)
        z.sum().backward()
        out["graph"] = [y.grad_fn, z.grad_fn.name(), x.grad]
        v, w = T.ones(2), T.ones(2)
        v.add_(1)
        before = [v._version, w._version]
        U.swap_tensors(v, w)
        out["versions"] = [before, [v._version, w._version]]
        return out
    same(scenario)


def test_swap_a_module_parameter_and_train():
    def scenario(T):
        U = T.utils
        m = T.nn.Linear(2, 2)
        with T.no_grad():
            m.weight.fill_(1.0)
            m.bias.zero_()
        old = m.weight
        new = T.nn.Parameter(T.arange(4.0).view(2, 2))
        m(T.ones(1, 2)).sum().backward()
        U.swap_tensors(m.weight, new)
        m.zero_grad()
        m(T.tensor([[1.0, 2.0]])).sum().backward()
        T.optim.SGD(m.parameters(), lr=0.5).step()
        return m.weight, m.weight is old, new, new.grad, m.weight.grad
    same(scenario)


def test_swap_tensors_errors():
    def scenario(T):
        U = T.utils
        x = T.ones(2)
        ref = weakref.ref(x)
        return [catch(U.swap_tensors, x, T.zeros(2)), catch(U.swap_tensors, T.zeros(2), x),
                catch(U.swap_tensors, T.ones(1), 3), ref() is x]
    same(scenario)
