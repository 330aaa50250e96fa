"""Differential audit of the autograd engine against PyTorch: retain_grad through in-place ops,
hooks on unused outputs, leaf gradients handed over without a copy, saved-tensor hooks and
multi-grad hooks; each scenario runs under torch and ember and the observations are compared."""
import gc

import numpy as np
import pytest

from differential import same, catch


def X(T, *shape, requires_grad=True):
    """A fixed, non-random tensor of the given shape."""
    n = int(np.prod(shape)) if shape else 1
    values = (np.arange(n, dtype=np.float64).reshape(shape) * 0.37 - 0.9).tolist()
    return T.tensor(values, requires_grad=requires_grad)


# ----------------------------------------------------------------------------- retain_grad
def test_retain_grad_follows_an_in_place_op():
    def scenario(T):
        y = X(T, 3) * 2
        y.retain_grad()
        y.mul_(3)
        y.add_(1)
        (y * y).sum().backward()
        return y.grad, y.retains_grad
    same(scenario)


def test_retain_grad_and_a_hook_registered_before_an_in_place_op():
    def scenario(T):
        seen = []
        y = X(T, 3) * 2
        y.register_hook(lambda g: seen.append(g.clone()))
        y.retain_grad()
        y.mul_(3)
        y.sum().backward()
        return y.grad, seen
    same(scenario)


def test_retain_grad_of_a_base_written_through_a_view():
    def scenario(T):
        y = X(T, 2, 3) * 2
        y.retain_grad()
        y[0].mul_(3)
        y.sum().backward()
        return y.grad
    same(scenario)


def test_retain_grad_of_a_view_follows_its_regenerated_history():
    def scenario(T):
        out = []
        for write_view in (True, False):
            y = X(T, 2, 3) * 2
            v = y[0]
            v.retain_grad()
            early = v * 1                   # uses the view's history before the write
            (v if write_view else y).mul_(3)
            (v * y).sum().backward(retain_graph=True)
            out.append(v.grad)
            v.grad = None
            early.sum().backward()          # the old history no longer retains
            out.append(v.grad)
        return out
    same(scenario)


def test_retain_grad_then_in_place_then_backward_with_inputs():
    def scenario(T):
        y = X(T, 3) * 2
        y.retain_grad()
        y.mul_(3)
        (y * 3).sum().backward(inputs=[y])
        return y.grad
    same(scenario)


def test_retain_grad_through_a_custom_function_marking_its_input_dirty():
    def scenario(T):
        class Scale(T.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                a.mul_(3)
                ctx.mark_dirty(a)
                return a

            @staticmethod
            def backward(ctx, g):
                return g * 3
        y = X(T, 3) * 2
        y.retain_grad()
        Scale.apply(y).sum().backward()
        return y.grad
    same(scenario)


# ----------------------------------------------------------------------------- hooks seeing None
class _FirstOnly:
    """A custom Function a + b whose backward sends nothing to b."""
    @staticmethod
    def make(T):
        class FirstOnly(T.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a + b

            @staticmethod
            def backward(ctx, g):
                return g, None
        return FirstOnly


def test_tensor_hooks_of_unused_outputs_are_called_with_none():
    def scenario(T):
        seen = []
        x = X(T, 3, 2)
        a, b, c = (x * 2).unbind(0)
        b.retain_grad()
        b.register_hook(lambda g: seen.append(("b", g)))
        c.register_hook(lambda g: seen.append(("c", g)))
        p, q = (x * 3).split(2)
        q.register_hook(lambda g: seen.append(("q", g)))
        (a + p[0]).sum().backward()
        return seen, b.grad, x.grad
    same(scenario)


def test_hooks_of_a_node_and_a_leaf_that_received_no_gradient():
    def scenario(T):
        seen = []
        x, w = X(T, 2), X(T, 2)
        y = x * 2
        for name, t in (("x", x), ("w", w), ("y", y)):
            t.register_hook(lambda g, name=name: seen.append((name, g)))
        w.register_post_accumulate_grad_hook(lambda t: seen.append(("w acc", t.grad)))
        _FirstOnly.make(T).apply(x, w).sum().backward()
        _FirstOnly.make(T).apply(w, y).sum().backward()
        return seen, x.grad, w.grad
    same(scenario)


def test_a_hook_cannot_replace_a_none_gradient():
    def scenario(T):
        out = []
        for replacement in ("tensor", "number"):
            x = X(T, 3, 2)
            a, b, c = (x * 2).unbind(0)
            b.register_hook(lambda g: T.ones(2) if replacement == "tensor" else 5)
            out.append(catch(a.sum().backward))
        x = X(T, 3, 2)
        outs = (x * 2).unbind(0)
        outs[0].grad_fn.register_prehook(lambda g: (g[0], T.ones(2), None))
        out.append(catch(outs[0].sum().backward))
        x, w = X(T, 2), X(T, 2)
        y = x * 2
        y.grad_fn.register_hook(lambda gi, go: (T.ones(2), None))
        out.append(catch(_FirstOnly.make(T).apply(w, y).sum().backward))
        return out
    same(scenario)


# ----------------------------------------------------------------------------- leaf .grad, no copy
def _fresh_gradient_hook(ptrs, kept=None):
    """A tensor hook returning a new tensor (2 * grad) and noting where its data lives."""
    def hook(g):
        new = g * 2
        ptrs.append(new.data_ptr())
        if kept is not None:
            kept.append(new)
        return new
    return hook


def test_a_gradient_nothing_else_holds_becomes_the_leaf_grad():
    def scenario(T):
        x = X(T, 3)
        y = x * 3
        ptrs = []

        def post(grad_inputs, grad_outputs):
            new = grad_inputs[0] * 2
            ptrs.append(new.data_ptr())
            return (new, None)
        y.grad_fn.register_hook(post)
        y.sum().backward()
        stolen = x.grad.data_ptr() == ptrs[0]
        first = x.grad
        y = x * 3
        y.sum().backward()                  # a second backward adds into the same tensor
        return stolen, x.grad is first, x.grad
    same(scenario)


@pytest.mark.filterwarnings("ignore:Using backward")
def test_a_gradient_held_elsewhere_is_copied_into_the_leaf_grad():
    def scenario(T):
        out = []
        x, ptrs, kept = X(T, 3), [], []
        x.register_hook(_fresh_gradient_hook(ptrs, kept))      # the hook keeps its result
        (x * 3).sum().backward()
        out.append((x.grad.data_ptr() == ptrs[0], x.grad))
        x, w, ptrs = X(T, 3), X(T, 3), []
        y = x + w                           # one gradient flows to both leaves
        y.register_hook(_fresh_gradient_hook(ptrs))
        (y * 1).sum().backward()
        out.append((x.grad.data_ptr() == ptrs[0], w.grad.data_ptr() == ptrs[0], x.grad, w.grad))
        x, ptrs = X(T, 3), []
        x.register_hook(_fresh_gradient_hook(ptrs))
        (x * 3).sum().backward(create_graph=True)     # .grad is part of a graph: a copy
        out.append((x.grad.data_ptr() == ptrs[0], x.grad.requires_grad))
        for through_view in (False, True):
            x = X(T, 3)
            y = x.view(3) if through_view else x + 1
            y.retain_grad()                 # y.grad holds the gradient x receives
            (y * 2).sum().backward()
            out.append(x.grad.data_ptr() == y.grad.data_ptr())
            x.grad.add_(1)
            out.append((y.grad, x.grad))
        return out
    same(scenario)


# ----------------------------------------------------------------------------- saved-tensor hooks
def _logging_hooks(T, log, unpacked=lambda t: t):
    def pack(t):
        log.append(("pack", tuple(t.shape), str(t.dtype), T.is_grad_enabled()))
        return t

    def unpack(t):
        log.append(("unpack", tuple(t.shape)))
        return unpacked(t)
    return T.autograd.graph.saved_tensors_hooks(pack, unpack)


def test_saved_tensors_hooks_see_what_ops_save_and_feed_the_derivatives():
    def scenario(T):
        log = []
        x = X(T, 2, 3)
        with _logging_hooks(T, log, lambda t: t * 10 if t.is_floating_point() else t):
            y = x.exp()                     # saves its output
            v, i = x.max(1)                 # saves its indices
            z = x.sin().sum() + y.sum() + v.sum() + x.pow(3).sum()
            w = (x * 2).sum()               # saves nothing that is a tensor
        z.backward()
        w.backward()
        return log, x.grad
    same(scenario)


def test_saved_tensors_hooks_nest_and_may_keep_anything():
    def scenario(T):
        log, store = [], {}
        x = X(T, 3)

        def pack(t):
            store[len(store)] = t.detach().clone()
            return len(store) - 1
        with T.autograd.graph.saved_tensors_hooks(pack, lambda k: store[k]):
            with _logging_hooks(T, log):    # the innermost hooks win
                y = x.sin()
            z = y.cos()
        (z.sum() + y.sum()).backward(retain_graph=True)
        z.sum().backward()                  # unpack runs on each use
        return log, sorted(store), x.grad
    same(scenario)


def test_saved_values_read_through_unpack_stand_where_the_saved_tensor_stood():
    def scenario(T):
        x = X(T, 3)
        a = x * 1
        with T.autograd.graph.saved_tensors_hooks(lambda t: ("kept", t), lambda p: p[1] * 10):
            y = a * x
            e = a.exp()
        s, o, r = y.grad_fn._saved_self, y.grad_fn._saved_other, e.grad_fn._saved_result
        return (s, s is a, s.grad_fn.name(), o, o is x, o.is_leaf, o.requires_grad,
                r, r.grad_fn is e.grad_fn, y.grad_fn._saved_self is s)
    same(scenario)


def test_saved_tensors_hooks_and_double_backward_through_an_unpacked_leaf():
    def scenario(T):
        x = X(T, 3)
        with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t * 1):
            y = (x * x * x).sum()
        g, = T.autograd.grad(y, x, create_graph=True)
        g.sum().backward()
        return g, x.grad
    same(scenario)


def test_saved_tensors_hooks_of_a_custom_function():
    def scenario(T):
        class Double(T.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                b = a * 2
                ctx.save_for_backward(a, b)
                return b

            @staticmethod
            def backward(ctx, g):
                a, b = ctx.saved_tensors
                return g * b * a
        log = []

        def pack(t):
            log.append(("pack", t.requires_grad, t.grad_fn is not None and t.grad_fn.name()))
            return t
        x = X(T, 3)
        with T.autograd.graph.saved_tensors_hooks(pack, lambda t: t + 1):
            y = Double.apply(x)
        y.sum().backward()
        return log, x.grad
    same(scenario)


def test_saved_tensors_hooks_errors():
    def scenario(T):
        graph = T.autograd.graph
        out = []
        x = X(T, 3)

        def grad_with(pack, unpack, modify_after=False):
            x.grad = None
            with graph.saved_tensors_hooks(pack, unpack):
                a = x * 1
                y = (a * a).sum()
            if modify_after:
                a.mul_(2)                   # no version check: the hooks decide what is kept
            y.backward()
            return x.grad
        out.append(catch(grad_with, lambda t: t, lambda t: 5))
        out.append(catch(grad_with, lambda t: t.mul_(2), lambda t: t))
        out.append(catch(grad_with, lambda t: t, lambda t: t, modify_after=True))
        out.append(catch(grad_with, lambda t: None, lambda t: T.ones(3)))
        with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            e = x.exp()
        e.sum().backward()
        out.append(catch(lambda: e.grad_fn._saved_result))     # freed by backward

        def enter(*managers):
            entered = []
            try:
                for m in managers:
                    m.__enter__()
                    entered.append(m)
                return "entered"
            finally:
                for m in reversed(entered):
                    m.__exit__(None, None, None)
        hooks = lambda: graph.saved_tensors_hooks(lambda t: t, lambda t: t)   # noqa: E731
        out.append(catch(enter, graph.disable_saved_tensors_hooks("off"), hooks()))
        out.append(catch(enter, hooks(), graph.disable_saved_tensors_hooks("off")))
        out.append(catch(enter, graph.disable_saved_tensors_hooks("a"),
                         graph.disable_saved_tensors_hooks("b"), graph.save_on_cpu()))
        out.append(catch(enter, graph.disable_saved_tensors_hooks("a"), hooks(), hooks()))
        out.append(catch(enter, hooks()))       # enabled again once the contexts are left

        @graph.disable_saved_tensors_hooks("as a decorator")
        def decorated():
            with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
        out.append(catch(decorated))
        with graph.disable_saved_tensors_hooks("off"):
            out.append(catch(lambda: (x * x).sum()))    # saving without hooks is fine
        return out
    same(scenario)


def test_save_on_cpu():
    def scenario(T):
        x = X(T, 2, 3)
        with T.autograd.graph.save_on_cpu(pin_memory=False):
            a = x * 2
            y = (a * a).exp().sum()
        saved = a.exp().grad_fn._saved_result
        y.backward()
        return x.grad, saved
    same(scenario)


# ----------------------------------------------------------------------------- multi-grad hooks
def test_multi_grad_hook_all_gets_every_gradient_once_per_backward():
    def scenario(T):
        log = []
        a, b, c = X(T, 2), X(T, 2), X(T, 2)
        handle = T.autograd.graph.register_multi_grad_hook((a, b, c), lambda gs: log.append(gs))
        (a * 2 + b * 3).sum().backward()
        (c * 4).sum().backward()
        (a * 5 + b).sum().backward(inputs=[a])      # b is not among the inputs: None
        handle.remove()
        (a * 6).sum().backward()
        x = X(T, 2)
        p, q = x * 2, x * 3
        T.autograd.graph.register_multi_grad_hook([p, q], lambda gs: log.append(gs))
        (p * q).sum().backward(retain_graph=True)
        T.autograd.grad((p * q).sum(), [p])          # q's node does not run: None
        y, z, w = (x * 2 + X(T, 3, 2)).unbind(0)
        T.autograd.graph.register_multi_grad_hook([y, z], lambda gs: log.append(gs))
        y.sum().backward()                          # z's gradient is None, its node runs
        return log, type(handle).__name__
    same(scenario)


def test_multi_grad_hook_any_gets_the_first_gradient():
    def scenario(T):
        log = []
        x = X(T, 2)
        a, b = x * 2, x * 3
        handle = T.autograd.graph.register_multi_grad_hook(
            [T.ones(2), a, b], lambda g: log.append(g) or g * 0, mode="any")
        (a * 4 + b).sum().backward(retain_graph=True)
        (b * 5).sum().backward(retain_graph=True)
        handle.remove()
        (a * 1).sum().backward()
        return log, x.grad
    same(scenario)


def test_multi_grad_hook_order_and_errors():
    def scenario(T):
        graph = T.autograd.graph
        log = []
        x = X(T, 2)
        a, b = x * 2, x * 3
        a.register_hook(lambda g: log.append("a"))
        graph.register_multi_grad_hook([a, b], lambda gs: log.append("all") or (gs[0] * 0, None))
        b.register_hook(lambda g: log.append("b"))
        (a * b).sum().backward()
        return (log, x.grad, catch(graph.register_multi_grad_hook, [x], print, mode="some"),
                catch(graph.register_multi_grad_hook, [T.ones(2)], print))
    same(scenario)


def test_hooks_of_what_backward_inputs_leave_out_are_not_called():
    def scenario(T):
        log = []
        a, b = X(T, 2), X(T, 2)
        p, q = a * 2, a * 3
        for name, t in (("a", a), ("b", b), ("p", p), ("q", q)):
            t.register_hook(lambda g, name=name: log.append((name, g)))
        (a * b).sum().backward(inputs=[a])
        T.autograd.grad((a * b).sum(), [a])
        T.autograd.grad((p * q).sum(), [p], retain_graph=True)
        (p * q).sum().backward(inputs=[p])
        return log, a.grad, b.grad
    same(scenario)


def test_pack_hooks_see_outputs_already_in_the_graph_and_in_place_results():
    def scenario(T):
        log = []

        def pack(t):
            log.append((t.is_leaf, t.grad_fn and t.grad_fn.name(), tuple(t.shape)))
            return t

        def unpack(t):
            log.append("unpack")
            return t
        x = X(T, 3)
        with T.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = x.exp()                 # saves its output
            z = (x * 1).exp_()          # saves the in-place result
        (y.sum() + z.sum()).backward()
        return log, x.grad
    same(scenario)


def test_a_linear_layers_weight_gradient_is_a_plain_contiguous_tensor():
    def scenario(T):
        T.manual_seed(0)
        lin = T.nn.Linear(3, 2)
        lin(T.ones(4, 3)).sum().backward()
        g = lin.weight.grad
        return g._base is None, g.is_contiguous(), g.stride(), lin.bias.grad._base is None
    same(scenario)


def test_multi_grad_hooks_of_two_threads_each_see_their_own_backward():
    # thread A's backward pauses inside a hook while thread B's backward is in progress; A's
    # multi-grad hook must still count A's gradients, not B's run
    import threading

    def scenario(T):
        log = {}
        a_paused, b_inside, a_done = threading.Event(), threading.Event(), threading.Event()

        def thread_a():
            x, y = T.ones(2, requires_grad=True), T.ones(2, requires_grad=True)
            u, v = x * 2, y * 3
            T.autograd.graph.register_multi_grad_hook(
                (u, v), lambda gs: log.setdefault("a", [g.tolist() for g in gs]))
            s = (u + v).sum()
            s.register_hook(lambda g: (a_paused.set(), b_inside.wait(5), g)[-1])
            s.backward()
            a_done.set()

        def thread_b():
            a_paused.wait(5)
            w = T.ones(3, requires_grad=True)
            t = (w * 5).sum()
            t.register_hook(lambda g: (b_inside.set(), a_done.wait(5), g)[-1])
            t.backward()

        threads = [threading.Thread(target=f) for f in (thread_a, thread_b)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        return log
    assert same(scenario) == {"a": [[1.0, 1.0], [1.0, 1.0]]}


@pytest.mark.parametrize("op", ["softmax", "log_softmax", "gelu", "layer_norm", "sigmoid"])
def test_a_kernel_result_laid_out_as_rows_becomes_the_leaf_grad(op):
    # the kernels compute on a 2-D view of their rows and return a reshape of it; the
    # gradient is still held by nothing else, so it becomes x.grad without a copy (as in
    # PyTorch), while a gradient the user keeps a view of is copied
    def scenario(T):
        fn = {"softmax": lambda x: T.softmax(x, -1), "log_softmax": lambda x: T.log_softmax(x, -1),
              "gelu": T.nn.functional.gelu, "sigmoid": T.sigmoid,
              "layer_norm": lambda x: T.nn.functional.layer_norm(x, (64,))}[op]
        x = T.tensor((np.sin(np.arange(4 * 8 * 64) * 1.3) * 3).astype(np.float32)
                     .reshape(4, 8, 64), requires_grad=True)
        y = fn(x)
        ptrs = []
        y.grad_fn.register_hook(lambda gi, go: ptrs.append(gi[0].data_ptr()))
        (y * T.linspace(-1, 1, 64) ** 2).sum().backward()
        out = [x.grad.data_ptr() == ptrs[0], x.grad]
        kept = []
        y = fn(x.detach().requires_grad_())
        y.grad_fn.register_hook(lambda gi, go: kept.append(gi[0].view(-1)))
        leaf = y.grad_fn.next_functions[0][0].variable
        (y * 2).sum().backward()
        out += [leaf.grad.data_ptr() == kept[0].data_ptr(), leaf.grad]
        return out
    same(scenario, rtol=1e-5, atol=1e-5)      # (float32 kernels: values to a few ulps)


def test_a_users_gradient_is_never_the_leaf_grad():
    def scenario(T):
        out = []
        x = X(T, 2, 3)
        g = T.ones(6).view(2, 3) * 2            # a view the user holds
        x.backward(g)
        out.append((x.grad.data_ptr() == g.data_ptr(), x.grad))
        x = X(T, 2, 3)
        base = T.ones(6) * 3
        x.backward(base.view(2, 3))             # a temporary view of the user's tensor
        out.append((x.grad.data_ptr() == base.data_ptr(), x.grad))
        x = X(T, 2, 3)
        y = x * 2
        y.backward(T.ones(2, 3), retain_graph=True)
        first = x.grad.clone()
        y.backward(T.ones(2, 3))
        out.append((first, x.grad))
        return out
    same(scenario)
