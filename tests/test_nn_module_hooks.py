"""Module hooks against torch: the old register_backward_hook, the global module hooks
(register_module_forward_hook & co., always_call, errors) and full backward hooks."""
import numpy as np
import pytest
import torch

import ember
from differential import catch, same, warnings_of


def _shapes(grads):
    return [None if g is None else g.detach().clone() for g in grads]


# ----------------------------------------------------------------------------- old backward hook
def _old_hook_run(T, make, inputs, out_to_loss=lambda y: y.sum(), hook_result=None):
    """Register an old-style backward hook, run forward/backward; return what the hook saw,
    the input grads and the warnings."""
    log = []

    def hook(mod, grad_input, grad_output):
        log.append((type(mod).__name__, _shapes(grad_input), _shapes(grad_output)))
        return hook_result(grad_input) if hook_result else None

    def run():
        T.manual_seed(0)
        m = make(T)
        rng = np.random.default_rng(0)
        for p in m.parameters():
            with T.no_grad():
                p.copy_(T.tensor(rng.standard_normal(tuple(p.shape)), dtype=p.dtype))
        m.register_backward_hook(hook)
        xs = inputs(T)
        y = m(*xs)
        out_to_loss(y).backward()
        return [x.grad for x in xs if isinstance(x, T.Tensor) and x.requires_grad]
    grads, warned = warnings_of(run)
    return log, grads, warned


def _leaf(T, *shape):
    rng = np.random.default_rng(1)
    return T.tensor(rng.standard_normal(shape), dtype=T.float32, requires_grad=True)


def _non_leaf(T, *shape):
    return _leaf(T, *shape) * 1.5


class _Two:
    @staticmethod
    def make(T):
        class Two(T.nn.Module):
            def forward(self, x):
                return x * 2, x + 1
        return Two()


class _Dict:
    @staticmethod
    def make(T):
        class D(T.nn.Module):
            def forward(self, x):
                return {"a": x * 2}
        return D()


class _Scaled:
    @staticmethod
    def make(T):
        class M(T.nn.Module):
            def forward(self, x, s):
                return x * s
        return M()


OLD_HOOK_CASES = {
    # one op on a non-leaf input: the node's gradients are the module's (no warning)
    "relu_nonleaf": (lambda T: T.nn.ReLU(), lambda T: (_non_leaf(T, 4, 3),), None),
    "tanh_nonleaf": (lambda T: T.nn.Tanh(), lambda T: (_non_leaf(T, 5),), None),
    # a leaf input: its AccumulateGrad node is not its grad_fn, torch warns
    "relu_leaf": (lambda T: T.nn.ReLU(), lambda T: (_leaf(T, 4, 3),), None),
    "seq": (lambda T: T.nn.Sequential(T.nn.Linear(3, 2), T.nn.Tanh()),
            lambda T: (_non_leaf(T, 4, 3),), None),
    "two_outputs": (_Two.make, lambda T: (_non_leaf(T, 3),), lambda y: (y[0] + y[1]).sum()),
    "dict_output": (_Dict.make, lambda T: (_non_leaf(T, 3),), lambda y: y["a"].sum()),
    "scalar_arg": (_Scaled.make, lambda T: (_non_leaf(T, 3), 2.0), None),
}


@pytest.mark.parametrize("case", list(OLD_HOOK_CASES))
def test_old_backward_hook(case):
    make, inputs, loss = OLD_HOOK_CASES[case]
    same(lambda T: _old_hook_run(T, make, inputs, loss or (lambda y: y.sum())))


def test_old_backward_hook_replaces_grad_input():
    same(lambda T: _old_hook_run(T, lambda T: T.nn.ReLU(), lambda T: (_non_leaf(T, 4),),
                                 hook_result=lambda gi: (gi[0] * 3,)))


def test_old_backward_hook_registration():
    def scenario(T):
        def hook(*a):
            return None
        a = T.nn.Linear(2, 2)
        a.register_backward_hook(hook)
        b = T.nn.Linear(2, 2)
        b.register_full_backward_hook(hook)
        c = T.nn.ReLU()
        h = c.register_backward_hook(hook)
        h.remove()
        # no grad: nothing is hooked, nothing warned
        quiet = warnings_of(lambda: c(T.ones(2)))
        return [catch(a.register_full_backward_hook, hook), catch(b.register_backward_hook, hook),
                catch(c.register_full_backward_hook, hook), quiet]
    same(scenario)


# ----------------------------------------------------------------------------- global hooks
@pytest.fixture
def reset_global_backward_kind():
    """torch never forgets whether a global backward hook was full or old-style: reset it (in
    both libraries) so that tests do not depend on each other."""
    yield
    for lib in (torch, ember):
        lib.nn.modules.module._global_is_full_backward_hook = None


def _hooked_net(T):
    nn = T.nn
    net = nn.Sequential(nn.Linear(3, 2), nn.Tanh())
    rng = np.random.default_rng(2)
    with T.no_grad():
        for p in net.parameters():
            p.copy_(T.tensor(rng.standard_normal(tuple(p.shape)), dtype=p.dtype))
    return net


def test_global_hooks_order_and_removal(reset_global_backward_kind):
    def scenario(T):
        mm = T.nn.modules.module
        log = []
        net = _hooked_net(T)

        def name(m):
            return type(m).__name__

        def g_pre(m, args):
            log.append(("g_pre", name(m)))

        def g_fwd(m, args, out):
            log.append(("g_fwd", name(m)))

        def g_bpre(m, go):
            log.append(("g_bpre", name(m), _shapes(go)))

        def g_bwd(m, gi, go):
            log.append(("g_bwd", name(m), _shapes(gi)))
        handles = [mm.register_module_forward_pre_hook(g_pre),
                   mm.register_module_forward_hook(g_fwd),
                   mm.register_module_full_backward_pre_hook(g_bpre),
                   mm.register_module_full_backward_hook(g_bwd)]
        try:
            lin = net[0]
            lin.register_forward_pre_hook(lambda m, a: log.append(("pre", name(m))))
            lin.register_forward_hook(lambda m, a, o: log.append(("fwd", name(m))))
            lin.register_full_backward_pre_hook(lambda m, go: log.append(("bpre", name(m))))
            lin.register_full_backward_hook(lambda m, gi, go: log.append(("bwd", name(m))))
            x = T.tensor([[1.0, -2.0, 0.5]], requires_grad=True)
            net(x).sum().backward()
            log.append("--")
            # modules made while the hooks are on are hooked too
            T.nn.ReLU()(x).sum().backward()
        finally:
            for h in handles:
                h.remove()
        log.append("removed")
        T.nn.ReLU()(x).sum().backward()
        return log, x.grad
    same(scenario)


def test_global_hooks_change_values(reset_global_backward_kind):
    def scenario(T):
        mm = T.nn.modules.module
        net = _hooked_net(T)
        handles = [
            mm.register_module_forward_pre_hook(
                lambda m, args: (args[0] * 2,) if isinstance(m, T.nn.Linear) else None),
            mm.register_module_forward_hook(
                lambda m, args, out: out + 1 if isinstance(m, T.nn.Tanh) else None),
            mm.register_module_full_backward_pre_hook(
                lambda m, go: (go[0] * 3,) if isinstance(m, T.nn.Tanh) else None),
            mm.register_module_full_backward_hook(
                lambda m, gi, go: (gi[0] * 0.5,) if isinstance(m, T.nn.Linear) else None),
            # the module's own hook sees what the global one made
            net[0].register_forward_pre_hook(lambda m, args: (args[0] - 1,)),
        ]
        try:
            x = T.tensor([[1.0, -2.0, 0.5], [0.1, 0.2, 0.3]], requires_grad=True)
            y = net(x)
            y.sum().backward()
        finally:
            for h in handles:
                h.remove()
        return y, x.grad, [p.grad for p in net.parameters()]
    same(scenario)


def test_global_forward_hook_kwargs_and_always_call(reset_global_backward_kind):
    def scenario(T):
        mm = T.nn.modules.module
        log = []

        class Boom(T.nn.Module):
            def forward(self, x, scale=1.0):
                if scale < 0:
                    raise ValueError("negative scale")
                return x * scale
        m = Boom()
        handles = [
            mm.register_module_forward_hook(
                lambda mod, args, kwargs, out: log.append(("kw", sorted(kwargs))),
                with_kwargs=True),
            mm.register_module_forward_hook(
                lambda mod, args, out: log.append(("always", out is None)), always_call=True),
        ]
        m.register_forward_hook(lambda mod, args, out: log.append("own always"),
                                always_call=True)
        try:
            first = m(T.ones(2), scale=2.0)
            raised = catch(m, T.ones(2), scale=-1.0)
        finally:
            for h in handles:
                h.remove()
        return first, raised, log
    same(scenario)


def test_global_always_call_hook_error_is_a_warning(reset_global_backward_kind):
    def scenario(T):
        mm = T.nn.modules.module

        def bad(mod, args, out):
            raise RuntimeError("hook failed")

        class Boom(T.nn.Module):
            def forward(self, x):
                raise ValueError("forward failed")
        m = Boom()
        m.register_forward_hook(bad, always_call=True)
        h = mm.register_module_forward_hook(bad, always_call=True)
        try:
            return warnings_of(lambda: catch(m, T.ones(1)))
        finally:
            h.remove()
    same(scenario)


def test_global_backward_hook_kinds(reset_global_backward_kind):
    def scenario(T):
        mm = T.nn.modules.module
        log = []
        h = mm.register_module_full_backward_hook(lambda m, gi, go: None)
        h.remove()
        # the kind is remembered after the removal
        clash = catch(mm.register_module_backward_hook, lambda m, gi, go: None)
        mm._global_is_full_backward_hook = None
        old = mm.register_module_backward_hook(
            lambda m, gi, go: log.append((type(m).__name__, _shapes(gi), _shapes(go))))
        try:
            clash2 = catch(mm.register_module_full_backward_hook, lambda m, gi, go: None)
            x = T.tensor([0.5, -1.0, 2.0], requires_grad=True)
            tanh = T.nn.Tanh()      # (kept alive: the hook holds its module weakly)
            result = warnings_of(lambda: tanh(x * 2).sum().backward())
        finally:
            old.remove()
        return clash, clash2, log, result
    same(scenario)


def test_full_backward_hooks_match_torch():
    """Non-tensor arguments, inputs without grad and a pre-hook returning the wrong count."""
    def scenario(T):
        log = []

        class M(T.nn.Module):
            def forward(self, x, s, y):
                return x * s + y, s, y * 2, x * 2

        def hook(m, gi, go):
            log.append(("hook", _shapes(gi), _shapes(go)))

        def pre(m, go):
            log.append(("pre", _shapes(go)))
        m = M()
        m.register_full_backward_hook(hook)
        m.register_full_backward_pre_hook(pre)
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = T.tensor([0.5, 0.5])
        out, warned = warnings_of(lambda: m(x, 3.0, y))
        out[0].sum().backward()
        # only pre-hooks and no input needing grad: torch still warns
        p = T.nn.Linear(2, 2)
        p.register_full_backward_pre_hook(pre)
        quiet = warnings_of(lambda: p(T.ones(2, requires_grad=True)).sum().backward())
        loud = warnings_of(lambda: p(T.ones(2)).sum().backward())
        q = T.nn.Tanh()
        q.register_full_backward_pre_hook(lambda m, go: (go[0], go[0]))
        wrong = catch(lambda: q(x).sum().backward())
        r = T.nn.Tanh()
        r.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
        wrong2 = catch(lambda: r(x).sum().backward())
        s = T.nn.Linear(2, 2)
        s.register_full_backward_hook(lambda m, gi, go: (go[0],))
        bad_none = catch(lambda: warnings_of(lambda: s(T.ones(2)).sum().backward()))
        return log, warned, x.grad, quiet, loud, wrong, wrong2, bad_none
    same(scenario)


def test_forward_hook_always_call_error_warns():
    def scenario(T):
        def bad(mod, args, out):
            raise RuntimeError("hook failed")

        class Boom(T.nn.Module):
            def forward(self, x):
                raise ValueError("forward failed")
        m = Boom()
        m.register_forward_hook(bad, always_call=True)
        return warnings_of(lambda: catch(m, T.ones(1)))
    same(scenario)


def test_forward_hook_error_runs_remaining_always_call_hooks():
    def scenario(T):
        log = []
        m = T.nn.Identity()
        m.register_forward_hook(lambda mod, a, o: log.append("first"), always_call=True)

        def bad(mod, args, out):
            raise RuntimeError("second hook failed")
        m.register_forward_hook(bad)
        m.register_forward_hook(lambda mod, a, o: log.append("third"), always_call=True)
        return catch(m, T.ones(1)), log
    same(scenario)


def test_old_backward_hook_linear():
    """The hook gets the gradients of Linear's one node (bias, input, transposed weight)."""
    same(lambda T: _old_hook_run(T, lambda T: T.nn.Linear(3, 2), lambda T: (_non_leaf(T, 4, 3),)))
