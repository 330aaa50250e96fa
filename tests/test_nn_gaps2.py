"""Differential tests (torch vs ember) of more pieces of torch.nn added late: Module.set_submodule,
to_empty, the old register_backward_hook, the global module hooks and the complex-dtype warning
of Module.to; nn.CTCLoss / F.ctc_loss; nn.AdaptiveLogSoftmaxWithLoss."""
import numpy as np
import pytest
import torch

import ember
from differential import catch, same, warnings_of


def _shapes(grads):
    return [None if g is None else g.detach().clone() for g in grads]


# ----------------------------------------------------------------------------- set_submodule
def test_set_submodule():
    def scenario(T):
        nn = T.nn
        m = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.ReLU()))
        m.foo = 3
        seen = []
        for args, kw in [(("", nn.ReLU()), {}), (("0", 5), {}), (("x.y", nn.ReLU()), {}),
                         (("1.0.z", nn.ReLU()), {}), (("0.weight", nn.ReLU()), {}),
                         (("2", nn.Tanh()), {}), (("3", nn.ReLU()), dict(strict=True)),
                         (("1.0", nn.Sigmoid()), dict(strict=True)), (("foo", nn.ReLU()), {}),
                         (("1.0.z.w", nn.ReLU()), {})]:
            seen.append([catch(m.set_submodule, *args, **kw), repr(m)])
        return seen
    same(scenario)


# ----------------------------------------------------------------------------- to_empty
def test_to_empty():
    def scenario(T):
        nn = T.nn
        m = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
        m.register_parameter("p", nn.Parameter(T.ones(2, dtype=T.float64)))
        w, p = m[0].weight, m.p
        top = m.to_empty(device="cpu", recurse=False)
        after_top = [m.p is p, m.p.shape, m.p.dtype, m.p.requires_grad, m[0].weight is w]
        m.to_empty(device=T.device("cpu"))
        kept = [m[0].weight is w, m[0].weight.requires_grad, type(m[0].weight).__name__]
        return [top is m, after_top, kept,
                [(k, v.shape, v.dtype) for k, v in m.state_dict().items()],
                catch(m.to_empty, "cpu"), catch(m.to_empty)]
    same(scenario)


# ----------------------------------------------------------------------------- Module.to(complex)
def test_to_complex_warns():
    def scenario(T):
        nn = T.nn
        lin = nn.Linear(2, 2)
        out = [warnings_of(lambda: lin.to(T.complex64).weight.dtype),
               warnings_of(lambda: nn.Linear(2, 2).to(dtype=T.cdouble).bias.dtype),
               warnings_of(lambda: nn.Linear(2, 2).to(T.float64).bias.dtype),
               warnings_of(lambda: nn.Linear(2, 2).to("cpu", T.complex128).bias.dtype),
               catch(lambda: nn.Linear(2, 2).to(T.int32))]
        return out
    same(scenario)


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


# ----------------------------------------------------------------------------- CTC loss
def _ctc_data(T, dtype="float32", n_frames=8, n_batch=4, n_classes=5, max_len=3, seed=0,
              normalised=True, blank=0):
    """Log-probabilities (T, N, C) requiring grad, padded targets (N, S) avoiding `blank`."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n_frames, n_batch, n_classes))
    if normalised:
        x = x - np.log(np.exp(x).sum(-1, keepdims=True))
    labels = np.array([c for c in range(n_classes) if c != blank])
    targets = labels[rng.integers(0, len(labels), (n_batch, max_len))]
    return (T.tensor(x, dtype=getattr(T, dtype), requires_grad=True),
            T.tensor(targets, dtype=T.int64))


def _concatenated(T, targets, target_lengths):
    return T.cat([targets[i, :int(n)] for i, n in enumerate(target_lengths)])


def _ctc_run(T, lp, targets, il, tl, **kw):
    """The loss, its grad_fn name and the gradient of (a weighted sum of) it."""
    loss = T.nn.functional.ctc_loss(lp, targets, il, tl, **kw)
    weights = T.linspace(0.5, 1.5, loss.numel(), dtype=loss.dtype).reshape(loss.shape)
    (grad,) = T.autograd.grad((loss * weights).sum(), lp)
    return loss, type(loss.grad_fn).__name__, grad


CTC_LENGTHS = {
    "full": ([8, 8, 8, 8], [3, 3, 3, 3]),
    "varied": ([8, 6, 5, 7], [3, 1, 2, 0]),
    # items 0 and 2 cannot fit their target (3 labels, 2 of them repeated, need 4 frames):
    # their loss is inf and their gradient nan, unless zero_infinity
    "impossible": ([2, 6, 3, 0], [3, 2, 3, 1]),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("lengths", list(CTC_LENGTHS))
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss_values_and_grads(dtype, reduction, lengths, zero_infinity):
    il, tl = CTC_LENGTHS[lengths]

    def scenario(T):
        lp, targets = _ctc_data(T, dtype)
        if lengths == "impossible":
            targets[0, 1] = targets[0, 0]                  # a repeat needs a blank between
        return _ctc_run(T, lp, targets, il, tl, reduction=reduction,
                        zero_infinity=zero_infinity)
    same(scenario, **({} if dtype == "float32" else dict(rtol=1e-10, atol=1e-12)))


@pytest.mark.parametrize("form", ["tensor", "list", "tuple", "int32", "concatenated"])
def test_ctc_loss_argument_forms(form):
    def scenario(T):
        lp, targets = _ctc_data(T, seed=1)
        il, tl = [8, 7, 5, 6], [2, 3, 1, 2]
        if form == "tensor":
            il, tl = T.tensor(il), T.tensor(tl)
        elif form == "tuple":
            il, tl = tuple(il), tuple(tl)
        elif form == "int32":
            il, tl = T.tensor(il, dtype=T.int32), T.tensor(tl, dtype=T.int32)
            targets = targets.int()
        elif form == "concatenated":
            targets = _concatenated(T, targets, tl)
        return _ctc_run(T, lp, targets, il, tl, reduction="none")
    same(scenario)


@pytest.mark.parametrize("blank", [0, 2, 4])
def test_ctc_loss_blank_index_and_unnormalised_input(blank):
    def scenario(T):
        lp, targets = _ctc_data(T, "float64", blank=blank, normalised=False, seed=blank)
        return [_ctc_run(T, lp, targets, [8, 6, 7, 3], [3, 2, 3, 1], blank=blank,
                         reduction=r) for r in ("none", "mean")]
    same(scenario, rtol=1e-10, atol=1e-12)


def test_ctc_loss_repeats_and_blank_labels_in_target():
    def scenario(T):
        lp, _ = _ctc_data(T, "float64", n_frames=7)
        targets = T.tensor([[1, 1, 1], [2, 2, 3], [0, 2, 0], [3, 1, 3]])
        return _ctc_run(T, lp, targets, [7, 5, 7, 6], [3, 3, 3, 3], reduction="none")
    same(scenario, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_ctc_loss_unbatched(reduction):
    def scenario(T):
        lp, targets = _ctc_data(T, n_batch=1)
        lp2 = lp.detach()[:, 0].requires_grad_()
        out = [_ctc_run(T, lp2, targets[0], [8], [3], reduction=reduction),
               _ctc_run(T, lp2, targets[0, :2], T.tensor(8), T.tensor(2), reduction=reduction),
               _ctc_run(T, lp2, targets, [6], [3], reduction=reduction)]
        return out
    same(scenario)


def test_ctc_loss_module_and_grad_chain():
    def scenario(T):
        lp, targets = _ctc_data(T)
        out = []
        for kw in [dict(), dict(blank=2, reduction="sum", zero_infinity=True),
                   dict(reduction="none")]:
            m = T.nn.CTCLoss(**kw)
            loss = m(lp, targets, [8, 8, 8, 8], [3, 2, 1, 3])
            node, chain = loss.grad_fn, []
            while node is not None:
                chain.append(node.name())
                node = next((n for n, _ in node.next_functions
                             if n is not None and "Accumulate" not in n.name()), None)
            out.append([repr(m), m.blank, m.reduction, m.zero_infinity, loss, chain])
        return out
    same(scenario)


def test_ctc_loss_double_backward_raises():
    def scenario(T):
        lp, targets = _ctc_data(T)
        loss = T.nn.functional.ctc_loss(lp, targets, [8, 7, 6, 5], [3, 2, 1, 3])
        (g,) = T.autograd.grad(loss, lp, create_graph=True)
        return g.requires_grad, g.grad_fn.name(), catch(lambda: g.sum().backward())
    same(scenario)


def test_ctc_loss_no_grad_input():
    def scenario(T):
        lp, targets = _ctc_data(T)
        loss = T.nn.functional.ctc_loss(lp.detach(), targets, [8, 7, 6, 5], [3, 2, 1, 3],
                                        reduction="none")
        return loss, loss.requires_grad, loss.grad_fn is None
    same(scenario)


def test_ctc_loss_errors():
    def scenario(T):
        F = T.nn.functional
        lp, tg = _ctc_data(T, n_batch=3, n_frames=6)
        il, tl = [6, 5, 4], [3, 2, 3]
        t = T.tensor
        cases = [
            (lp, tg, il, tl, dict(reduction="avg")),
            (lp, tg, t(il), tl, {}), (lp, tg, il, t(tl), {}), (lp, tg, 6, 3, {}),
            (lp, tg, (6, 5, 4), t(tl), {}), (lp, tg, [6.0, 5, 4], tl, {}),
            (lp, tg, None, t(tl), {}), (lp, tg, t(il), t(tl), dict(blank=1.5)),
            (lp, tg, t([6.0, 5, 4]), t(tl), {}), (lp, tg, t(il), t([3.0, 2, 3]), {}),
            (lp, tg, t([True] * 3), t(tl), {}),
            (lp.long(), tg, il, tl, {}), (lp.half(), tg, il, tl, dict(blank=9)),
            (lp.double().to(T.complex128), tg, il, tl, {}),
            (lp[:0], tg, il, tl, dict(blank=9)), (lp[:, :0], tg, il, tl, {}),
            (lp[None], tg[None], il, tl, {}), (lp[0, 0], tg, il, tl, {}),
            (lp, tg[None], il, tl, dict(blank=9)), (lp, tg[0, 0], il, tl, {}),
            (lp, tg, il, tl, dict(blank=5)), (lp, tg, il, tl, dict(blank=-1)),
            (lp, tg, [6, 5], [3, 2], {}), (lp, tg, il, [3, 2], {}),
            (lp, tg, [6, 5], [-1, 2, 3], {}),
            (lp, tg, [-1, 5, 4], [4, -1, 3], {}), (lp, tg, [7, 5, 4], [4, 2, 3], {}),
            (lp, tg.flatten()[:7], [7, 5, 4], tl, {}), (lp, tg.flatten(), il, [3, -1, 3], {}),
            (lp, tg, [6, 5, 7], tl, {}), (lp, tg, [6, -2, 4], tl, {}),
            (lp[:, 0], tg[0], [6], [2], {}), (lp[:, 0], tg[0], [6, 5], [3, 3], {}),
        ]
        return [catch(F.ctc_loss, a, b, c, d, **kw) for a, b, c, d, kw in cases]
    same(scenario)


# ----------------------------------------------------------------------------- adaptive softmax
def _asm(T, in_features=8, n_classes=12, cutoffs=(3, 7), dtype="float32", **kw):
    """The module with weights copied from one NumPy draw (the same in both libraries)."""
    m = T.nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, list(cutoffs),
                                        dtype=getattr(T, dtype), **kw)
    rng = np.random.default_rng(3)
    with T.no_grad():
        for p in m.parameters():
            if p.numel():          # (div_value may leave a cluster with no hidden units)
                p.copy_(T.tensor(rng.standard_normal(tuple(p.shape))))
    return m


def _asm_input(T, n=6, in_features=8, dtype="float32", seed=4):
    rng = np.random.default_rng(seed)
    return T.tensor(rng.standard_normal((n, in_features)), dtype=getattr(T, dtype),
                    requires_grad=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kw", [dict(), dict(head_bias=True, div_value=2.0),
                                dict(cutoffs=(5,), n_classes=9)], ids=str)
def test_adaptive_log_softmax_forward_backward(dtype, kw):
    def scenario(T):
        m = _asm(T, dtype=dtype, **kw)
        x = _asm_input(T, dtype=dtype)
        n_classes = kw.get("n_classes", 12)
        target = T.tensor([0, n_classes - 1, 4, 2, 8 % n_classes, 6])
        out = m(x, target)
        out.loss.backward()
        return [type(out).__name__, out._fields, out.output, out.loss,
                type(out.output.grad_fn).__name__, type(out.loss.grad_fn).__name__, x.grad,
                [(name, p.grad) for name, p in m.named_parameters()], repr(m)]
    same(scenario, **({} if dtype == "float32" else dict(rtol=1e-10, atol=1e-12)))


def test_adaptive_log_softmax_unbatched_single_row_and_errors():
    def scenario(T):
        m = _asm(T)
        x = _asm_input(T)
        single = m(x[:1], T.tensor([9]))
        unbatched = m(x[0], T.tensor(5))
        errors = [catch(m, x, T.tensor([0, 1])), catch(m, x[0], T.tensor([0])),
                  catch(m, x[0, :2], T.tensor([0, 1])), catch(m, x, T.tensor(1)),
                  catch(m, x, T.zeros(6, 1, dtype=T.int64)),
                  catch(m, x, T.tensor([0, 1, 2, 12, 3, -1])),
                  catch(m, x, T.tensor([0, 1, 2, 11, 3, 13]))]
        ctor = [catch(T.nn.AdaptiveLogSoftmaxWithLoss, 8, 10, c)
                for c in ([], [5, 3], [0, 4], [3, 10], [3, 3], [2.5, 4])]
        return single, unbatched, errors, ctor
    same(scenario)


def test_adaptive_log_softmax_log_prob_and_predict():
    def scenario(T):
        m = _asm(T, head_bias=True)
        x = _asm_input(T, n=10)
        log_prob = m.log_prob(x)
        out = [log_prob, log_prob.exp().sum(1), m.predict(x), log_prob.argmax(1)]
        # all rows in the shortlist, all rows in clusters
        with T.no_grad():
            m.head.bias.copy_(T.tensor([50.0, 0, 0, 0, 0]))
        out.append(m.predict(x))
        with T.no_grad():
            m.head.bias.copy_(T.tensor([0.0, 0, 0, 0, 50]))
        out.append(m.predict(x))
        out.append(type(m.log_prob(x).grad_fn).__name__)
        return out
    same(scenario)
