"""The autograd engine's semantics, each scenario run under torch and ember and compared."""
import gc
import sys
import weakref

import numpy as np
import pytest

import ember
from differential import same, catch, warnings_of


def fixed(T, values, requires_grad=False, dtype=None):
    return T.tensor(values, requires_grad=requires_grad, dtype=dtype)


def names(fn):
    """The node names along a graph's next_functions, breadth first (None where no node)."""
    out, frontier = [], [fn]
    while frontier:
        nxt = []
        for n in frontier:
            out.append(None if n is None else n.name())
            if n is not None:
                nxt += [f for f, _ in n.next_functions]
        frontier = nxt
    return out


# ----------------------------------------------------------------------------- the graph
def test_seed_graph_of_z_equals_w_x_plus_b():
    def scenario(T):
        x = T.autograd.Variable(T.ones(1))
        b = T.autograd.Variable(fixed(T, [0.3]), requires_grad=True)
        w = T.autograd.Variable(fixed(T, [0.7]), requires_grad=True)
        y = w * x
        z = y + b
        acc = y.grad_fn.next_functions[0][0]
        result = [type(z.grad_fn).__name__, names(z.grad_fn),
                  [(type(f).__name__ if f is not None else None, i)
                   for f, i in z.grad_fn.next_functions],
                  [(type(f).__name__ if f is not None else None, i)
                   for f, i in y.grad_fn.next_functions],
                  acc.variable is w, x.requires_grad, w.is_leaf, z.is_leaf, b.grad_fn]
        z.backward()
        return result + [x.grad, w.grad, b.grad, repr(z.grad_fn).startswith("<AddBackward0 ")]
    same(scenario)


def test_flags_and_repr_of_leaves_and_results():
    def scenario(T):
        x = fixed(T, [0.1, 0.2, 0.3], requires_grad=True)
        y = x ** 2
        z = x + x
        return [(t.requires_grad, t.is_leaf, t.grad_fn.name() if t.grad_fn else None)
                for t in (x, y, z)]
    same(scenario)


def test_requires_grad_propagation_and_errors():
    def scenario(T):
        a = T.ones(2)
        b = T.ones(2, requires_grad=True)
        c = a * 2
        d = b * 2
        return [c.requires_grad, d.requires_grad, (a + b).requires_grad,
                catch(lambda: T.ones(2, dtype=T.long).requires_grad_()),
                catch(lambda: setattr(d, "requires_grad", False)),
                d.requires_grad_(True) is d,
                catch(lambda: T.ones(2).backward())]
    same(scenario)


def test_accumulation_across_backward_calls():
    def scenario(T):
        x = fixed(T, [1.0, 2.0], requires_grad=True)
        for _ in range(3):
            (x * x).sum().backward()
        return x.grad
    same(scenario)


def test_grad_is_settable_and_deletable():
    def scenario(T):
        x = fixed(T, [1.0, 2.0], requires_grad=True)
        x.grad = fixed(T, [5.0, 5.0])
        (x * 3).sum().backward()
        first = x.grad.clone()
        del x.grad
        after_del = x.grad
        return [first, after_del, catch(lambda: setattr(x, "grad", fixed(T, [1.0])))]
    same(scenario)


def test_non_leaf_grad_warning_and_retain_grad():
    def scenario(T):
        x = fixed(T, [1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        got, warned = warnings_of(lambda: y.grad)
        y2 = x * 3
        y2.retain_grad()
        (y2 * y2).sum().backward()
        y.grad = fixed(T, [1.0, 1.0, 1.0])
        set_grad, warned_when_set = warnings_of(lambda: y.grad)     # torch: no warning now
        return [got, warned, y2.retains_grad, y2.grad, x.grad, set_grad, warned_when_set]
    same(scenario)


def test_tensor_hooks_replace_gradient_and_handles_remove():
    def scenario(T):
        seen = []
        x = fixed(T, [1.0, 2.0], requires_grad=True)
        y = x * 2
        h1 = y.register_hook(lambda g: g * 10)
        h2 = x.register_hook(lambda g: seen.append(g.clone()))
        y.sum().backward()
        first = x.grad.clone()
        h1.remove()
        h2.remove()
        x.grad = None
        (x * 2).sum().backward()
        return [first, seen, x.grad, catch(lambda: T.ones(1).register_hook(lambda g: g))]
    same(scenario)


def test_node_hooks_and_prehooks():
    def scenario(T):
        x = fixed(T, [1.0, 2.0], requires_grad=True)
        y = x * 3
        log = []
        y.grad_fn.register_prehook(lambda go: log.append(("pre", go[0].clone())))
        y.grad_fn.register_hook(lambda gi, go: log.append(("post", gi[0].clone(),
                                                           go[0].clone())))
        y.sum().backward()
        return log
    same(scenario)


# ----------------------------------------------------------------------------- running it
def test_backward_needs_gradient_for_non_scalars():
    def scenario(T):
        x = T.ones(2, requires_grad=True)
        z = x + 2
        err = catch(z.backward)
        z.backward(T.ones_like(z))
        g1 = x.grad.clone()
        x.grad = None
        z.sum().backward()
        return [err, g1, x.grad]
    same(scenario)


def test_grad_tensors_weight_the_outputs():
    def scenario(T):
        x = fixed(T, [1.0, 2.0, 3.0], requires_grad=True)
        y = x * x
        T.autograd.backward([y], grad_tensors=[fixed(T, [1.0, 0.1, 0.01])])
        g = x.grad.clone()
        x.grad = None
        a, b = x * 2, x * 3
        T.autograd.backward([a.sum(), b], [None, fixed(T, [1.0, 1.0, 1.0])])
        return [g, x.grad, catch(lambda: (x * 2).backward(fixed(T, [1.0, 2.0])))]
    same(scenario)


def test_grad_variables_is_deprecated():
    def scenario(T):
        x = fixed(T, [1.0, 2.0], requires_grad=True)
        y = x * 2
        _, warned = warnings_of(lambda: T.autograd.backward(y, grad_variables=T.ones(2)))
        return [warned, x.grad]
    same(scenario)


def test_backward_inputs_restricts_accumulation():
    def scenario(T):
        a = fixed(T, [1.0, 2.0], requires_grad=True)
        b = fixed(T, [3.0, 4.0], requires_grad=True)
        (a * b).sum().backward(inputs=[a])
        return [a.grad, b.grad, catch(lambda: (a * b).sum().backward(inputs=[]))]
    same(scenario)


def test_autograd_grad_options_and_errors():
    def scenario(T):
        x = fixed(T, [1.0, 2.0], requires_grad=True)
        y = fixed(T, [3.0, 4.0], requires_grad=True)
        z = fixed(T, [5.0, 6.0], requires_grad=True)
        out = (x * y).sum()
        gx, gy = T.autograd.grad(out, [x, y], retain_graph=True)
        unused = catch(lambda: T.autograd.grad(out, [x, z], retain_graph=True))
        allowed = T.autograd.grad(out, [x, z], retain_graph=True, allow_unused=True)
        materialised = T.autograd.grad(out, [z], retain_graph=True, materialize_grads=True)
        weighted = T.autograd.grad(x * y, x, grad_outputs=fixed(T, [1.0, -1.0]),
                                   retain_graph=True)
        _, warned = warnings_of(lambda: T.autograd.grad(out, x, only_inputs=False,
                                                        retain_graph=True))
        return [gx, gy, unused, allowed, materialised, weighted, warned, x.grad,
                catch(lambda: T.autograd.grad(out, T.ones(2)))]
    same(scenario)


def test_grad_of_grad_of_grad():
    def scenario(T):
        x = fixed(T, [2.0, -1.5], requires_grad=True)
        y = (x ** 3 + x.sin() * x.exp()).sum()
        g1, = T.autograd.grad(y, x, create_graph=True)
        g2, = T.autograd.grad(g1.sum(), x, create_graph=True)
        g3, = T.autograd.grad(g2.sum(), x)
        return [g1, g2, g3, g1.requires_grad, g3.requires_grad]
    same(scenario)


def test_create_graph_backward_builds_a_differentiable_grad():
    def scenario(T):
        x = fixed(T, [1.0, 3.0], requires_grad=True)
        (x ** 3).sum().backward(create_graph=True)
        g = x.grad
        result = [g, g.requires_grad, g.grad_fn is not None]
        x.grad = None
        g.sum().backward()
        return result + [x.grad]
    same(scenario)


def test_saved_tensors_freed_after_backward():
    def scenario(T):
        x = fixed(T, [1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        y.backward()
        second = catch(y.backward)
        z = (x * x).sum()
        z.backward(retain_graph=True)
        z.backward()
        w = (x + 1).sum()        # no saved tensors: a second backward is fine in torch too
        w.backward()
        w.backward()
        return [second, x.grad]
    same(scenario)


def test_fan_out_and_fan_in_accumulate():
    def scenario(T):
        x = fixed(T, [0.5, -2.0, 3.0], requires_grad=True)
        a = x * 2
        b = a.exp()
        c = a * a
        d = (b + c + a).sum() + (a * x).sum()
        d.backward()
        return x.grad
    same(scenario)


def test_deep_chain_has_no_recursion_limit():
    x = ember.ones(3, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones(3, np.float32))
    assert sys.getrecursionlimit() < 100_000


# ----------------------------------------------------------------------------- memory
def test_graph_is_freed_by_reference_counting_without_gc():
    gc.disable()
    try:
        x = ember.ones(4, requires_grad=True)
        y = (x * 2).exp()
        node_ref = weakref.ref(y.grad_fn)
        out_ref = weakref.ref(y)
        del y
        assert node_ref() is None and out_ref() is None
        # a node saving its own output (exp saves result) makes no cycle either
        z = x.exp()
        nref, zref = weakref.ref(z.grad_fn), weakref.ref(z)
        del z
        assert nref() is None and zref() is None
    finally:
        gc.enable()


def test_saved_tensors_are_released_after_backward():
    x = ember.ones(4, requires_grad=True)
    h = x * 3
    h_ref = weakref.ref(h)
    out = (h * h).sum()          # MulBackward0 saves h twice
    del h
    assert h_ref() is not None   # kept alive by the graph
    out.backward()
    assert h_ref() is None       # released when backward is done with it


# ----------------------------------------------------------------------------- modes
def test_no_grad_enable_grad_set_grad_enabled_inference_mode():
    def scenario(T):
        x = T.ones(3, requires_grad=True)
        r = [(x ** 2).requires_grad]
        with T.no_grad():
            r.append((x ** 2).requires_grad)
            with T.enable_grad():
                r.append((x ** 2).requires_grad)
            r.append(T.is_grad_enabled())
        r.append((x ** 2).requires_grad)

        @T.no_grad()
        def f(t):
            return t * 2
        r.append(f(x).requires_grad)
        T.set_grad_enabled(False)
        r.append((x * 2).requires_grad)
        T.set_grad_enabled(True)
        with T.set_grad_enabled(False):
            r.append((x * 2).requires_grad)
        r.append(T.is_grad_enabled())
        with T.inference_mode():
            r.append((x * 2).requires_grad)
            r.append(T.is_inference_mode_enabled())
        r.append(T.is_inference_mode_enabled())
        return r
    same(scenario)


def test_grad_mode_is_thread_local():
    import threading
    seen = []
    with ember.no_grad():
        t = threading.Thread(target=lambda: seen.append(ember.is_grad_enabled()))
        t.start()
        t.join()
        seen.append(ember.is_grad_enabled())
    assert seen == [True, False]


# ----------------------------------------------------------------------------- detach and .data
def test_detach_shares_version_so_inplace_is_caught():
    def scenario(T):
        a = fixed(T, [7.0, 0.0, 0.0], requires_grad=True)
        b = a + 2
        before = repr(b)
        loss = T.mean(b * b)
        b_ = b.detach()
        b_.zero_()
        return [before, repr(b), b_.requires_grad, catch(loss.backward)]
    result = same(scenario)
    assert "modified by an inplace operation" in result[3][2]


def test_data_is_not_tracked_silent_wrong_gradient_as_in_torch():
    def scenario(T):
        a = fixed(T, [7.0, 0.0, 0.0], requires_grad=True)
        b = a + 2
        loss = T.mean(b * b)
        b_ = b.data
        b_.zero_()
        loss.backward()
        return [repr(b), a.grad, b_.requires_grad]
    same(scenario)


def test_inplace_error_names_the_users_line():
    a = ember.tensor([7.0, 0.0, 0.0], requires_grad=True)
    b = a + 2
    loss = (b * b).mean()
    b.detach().zero_()                        # <- the line the error must point at
    line = sys._getframe().f_lineno - 1
    with pytest.raises(RuntimeError) as info:
        loss.backward()
    assert f"test_autograd.py:{line}" in str(info.value)


def test_detach_inplace():
    def scenario(T):
        x = T.ones(2, requires_grad=True)
        y = x * 2
        y.detach_()
        view = (x * 2)[0:1]
        return [y.requires_grad, y.grad_fn, y.is_leaf, catch(view.detach_)]
    same(scenario)


# ----------------------------------------------------------------------------- in place
def test_leaf_inplace_errors():
    def scenario(T):
        x = T.ones(3, requires_grad=True)
        r = [catch(lambda: x.add_(1)), catch(lambda: x[0].mul_(2))]
        with T.no_grad():
            x.add_(1)              # allowed without grad mode
        return r + [x]
    same(scenario)


def test_inplace_on_non_leaf_rebases_graph():
    def scenario(T):
        x = fixed(T, [1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        y.mul_(y)                # saves y as it was before the write: a later write is caught
        y.add_(1)
        err = catch(lambda: (y * fixed(T, [1.0, 2.0, 3.0])).sum().backward())
        u = x * 2
        u.mul_(fixed(T, [2.0, 3.0, 4.0]))  # needs the original u? no: the other operand
        u.add_(1).exp_()
        (u * fixed(T, [1.0, 2.0, 3.0])).sum().backward()
        return [y.grad_fn.name(), y._version, err, u.grad_fn.name(), x.grad]
    same(scenario)


def test_inplace_through_views_copyslices():
    def scenario(T):
        x = fixed(T, [1.0, 2.0, 3.0, 4.0], requires_grad=True)
        y = x.clone()
        v = y[1:3]
        v.mul_(3)
        names_after = [y.grad_fn.name(), v.grad_fn.name(), names(y.grad_fn)]
        (y * fixed(T, [1.0, 10.0, 100.0, 1000.0])).sum().backward()
        return names_after + [x.grad, y]
    same(scenario)


def test_setitem_in_graph_differentiates():
    def scenario(T):
        x = T.ones(2, 3, requires_grad=True)
        y = x * 1
        y[0, 1] = 5
        y[:, 2] *= 2
        (y * T.arange(6.0).reshape(2, 3)).sum().backward()
        w = fixed(T, [0.5, -1.0, 2.0], requires_grad=True)
        buf = T.zeros(5)
        buf[1:4] = w * 2
        (buf * T.arange(5.0)).sum().backward()
        return [x.grad, y, w.grad, buf.grad_fn.name()]
    same(scenario)


def test_views_of_a_base_modified_in_place_regenerate_grad_fn():
    def scenario(T):
        a = T.ones(3, requires_grad=True).clone()
        v = a[:2]
        before = v.grad_fn.name()
        with T.no_grad():
            a.mul_(2)
        after = v.grad_fn.name()
        v2 = a[1:]
        a.mul_(fixed(T, [1.0, 2.0, 3.0]))
        return [before, after, v2.grad_fn.name(), v2]
    same(scenario)


def test_version_counter_is_shared_by_views():
    def scenario(T):
        a = T.zeros(4)
        v = a[1:3]
        v.add_(1)
        a.mul_(2)
        return [a._version, v._version, a.detach()._version]
    same(scenario)


# ----------------------------------------------------------------------------- legacy API
def test_variable_and_volatile():
    def scenario(T):
        x, warned = warnings_of(lambda: T.autograd.Variable(T.ones(1), volatile=True))
        w = T.autograd.Variable(fixed(T, [0.5]), requires_grad=True)
        y = x * w
        return [warned, x.requires_grad, w.requires_grad, y.requires_grad]
    same(scenario)


# ----------------------------------------------------------------------------- custom Function
def _seed_functions(T):
    class Sigmoid(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            output = 1 / (1 + T.exp(-x))
            ctx.save_for_backward(output)
            return output

        @staticmethod
        def backward(ctx, grad_output):
            output, = ctx.saved_tensors
            return output * (1 - output) * grad_output

    class MultiplyAdd(T.autograd.Function):
        @staticmethod
        def forward(ctx, w, x, b):
            ctx.save_for_backward(w, x)
            return w * x + b

        @staticmethod
        def backward(ctx, grad_output):
            w, x = ctx.saved_tensors
            return grad_output * x, grad_output * w, grad_output * 1
    return Sigmoid, MultiplyAdd


def test_seed_custom_functions_run_as_written():
    def scenario(T):
        Sigmoid, MultiplyAdd = _seed_functions(T)
        x = T.ones(1)
        w = fixed(T, [0.25], requires_grad=True)
        b = fixed(T, [0.75], requires_grad=True)
        z = MultiplyAdd.apply(w, x, b)
        z.backward()
        s_in = fixed(T, [-1.0, 0.0, 2.0], requires_grad=True)
        s = Sigmoid.apply(s_in)
        s.sum().backward()
        return [x.grad, w.grad, b.grad, z.grad_fn.name(), type(z.grad_fn).__name__, s_in.grad,
                repr(z.grad_fn).split(" object")[0]]
    same(scenario)


def test_custom_function_ctx_features():
    def scenario(T):
        class Fn(T.autograd.Function):
            @staticmethod
            def forward(ctx, a, scale):
                ctx.scale = scale
                ctx.mark_non_differentiable
                ctx.save_for_backward(a)
                return a * scale, (a > 0)

            @staticmethod
            def backward(ctx, g, g_mask):
                a, = ctx.saved_tensors
                return g * ctx.scale * ctx.needs_input_grad[0], None

        class Wrong(T.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a + b

            @staticmethod
            def backward(ctx, g):
                return g

        class Setup(T.autograd.Function):
            @staticmethod
            def forward(a):
                return a * 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(inputs[0])

            @staticmethod
            def backward(ctx, g):
                a, = ctx.saved_tensors
                return g * 2 + a * 0

        a = fixed(T, [1.0, -2.0], requires_grad=True)
        out, mask = Fn.apply(a, 3.0)
        out.sum().backward()
        w = Wrong.apply(a, T.ones(2, requires_grad=True))
        s = Setup.apply(a)
        s.sum().backward()
        _, warned = warnings_of(lambda: _saved_variables(T, a))
        return [a.grad, mask.requires_grad, catch(lambda: w.sum().backward()), warned]
    same(scenario)


def _saved_variables(T, a):
    class Old(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 1

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_variables
            return g
    Old.apply(a).sum().backward()


def test_custom_function_mark_dirty_and_once_differentiable():
    def scenario(T):
        class AddOneInplace(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        class Square(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            @T.autograd.function.once_differentiable
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return 2 * x * g

        a = fixed(T, [1.0, 2.0], requires_grad=True)
        y = a * 1
        z = AddOneInplace.apply(y)
        r = [z is y, y._version]
        (z * 3).sum().backward()
        r.append(a.grad)
        b = fixed(T, [3.0], requires_grad=True)
        g, = T.autograd.grad(Square.apply(b), b, create_graph=True)
        r.append(g)
        r.append(catch(lambda: g.backward()))
        return r
    same(scenario)


# ----------------------------------------------------------------------------- user tools
def test_gradcheck_and_gradgradcheck():
    x = ember.tensor([0.3, -0.7, 1.2], dtype=ember.float64, requires_grad=True)
    y = ember.tensor([1.1, 0.4, -0.2], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda a, b: (a * b.exp()).sin(), (x, y))
    assert ember.autograd.gradgradcheck(lambda a, b: (a * b.exp()).sin(), (x, y))

    class Bad(ember.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3            # wrong on purpose
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        ember.autograd.gradcheck(Bad.apply, (x,))
    assert ember.autograd.gradcheck(Bad.apply, (x,), raise_exception=False) is False


def test_functional_jacobian_hessian_vjp_jvp_hvp_vhp():
    def scenario(T):
        F = T.autograd.functional
        x = fixed(T, [0.5, -1.0, 2.0], dtype=T.float64)
        v = fixed(T, [1.0, 0.5, -0.25], dtype=T.float64)

        def f(t):
            return t.sin() * t ** 2

        def s(t):
            return (t.exp() * t).sum()
        return [F.jacobian(f, x), F.hessian(s, x), F.vjp(f, x, v), F.jvp(f, x, v),
                F.hvp(s, x, v), F.vhp(s, x, v)]
    same(scenario, rtol=1e-10, atol=1e-12)


def test_anomaly_detection_reports_nan_and_forward_trace():
    def scenario(T):
        x = fixed(T, [0.0, 1.0], requires_grad=True)
        with warnings_of_silent():
            with T.autograd.detect_anomaly():
                y = x.sqrt() * 0
                err = catch(lambda: (y / y).sum().backward())
        return err
    same(scenario)


class warnings_of_silent:
    def __enter__(self):
        import warnings
        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc):
        self._ctx.__exit__(*exc)


def test_node_name_metadata_and_accumulate_grad_variable():
    def scenario(T):
        x = T.ones(2, requires_grad=True)
        y = (x * 2).sum()
        fn = y.grad_fn
        fn.metadata["tag"] = 7
        acc = fn.next_functions[0][0].next_functions[0][0]
        return [fn.name(), fn.metadata, fn.next_functions[0][0].name(), acc.name(),
                acc.variable is x, fn.next_functions[0][0].next_functions[1]]
    same(scenario)


def test_gradcheck_failure_report_names_the_output_and_input_as_torch():
    def scenario(T):
        class Bad(T.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2, a * 3

            @staticmethod
            def backward(ctx, g, h):
                return g * 2 + h * 4          # wrong for the second output on purpose
        x = T.tensor([0.3, -0.7], dtype=T.float64, requires_grad=True)
        err = catch(lambda: T.autograd.gradcheck(Bad.apply, (x,)))
        return [err, T.autograd.gradcheck(Bad.apply, (x,), raise_exception=False)]
    same(scenario)


def _hook_every_node(root, log):
    """A post-hook on every node reachable from `root` that logs the node's name."""
    seen, stack = set(), [root]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        node.register_hook(lambda grads_in, grads_out, node=node: log.append(node.name()))
        stack.extend(child for child, _ in node.next_functions)


def test_nodes_run_in_torchs_order_leaf_accumulators_as_soon_as_ready():
    def scenario(T):
        log = []
        a = T.tensor([1., 2.], requires_grad=True)
        w = T.tensor([0.5, 1.5], requires_grad=True)
        b = a * 2
        e = (b.exp() + b * w).sin()
        loss = (e * b + a.cos() + w.tanh()).sum()
        _hook_every_node(loss.grad_fn, log)
        loss.backward()
        return log, a.grad, w.grad
    same(scenario)


def test_a_node_that_receives_no_gradient_still_runs_its_hooks():
    def scenario(T):
        class FirstGetsNone(T.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x * y

            @staticmethod
            def backward(ctx, g):
                return None, g
        log = []
        a = T.tensor([1., 2.], requires_grad=True)
        e = a.exp()
        e.grad_fn.register_prehook(lambda grads_out: log.append(("exp pre", grads_out)))
        e.grad_fn.register_hook(lambda grads_in, grads_out: log.append(("exp post", grads_in)))
        accumulate = e.grad_fn.next_functions[0][0]
        accumulate.register_hook(lambda grads_in, grads_out: log.append(("acc", grads_out)))
        FirstGetsNone.apply(e, T.ones(2, requires_grad=True)).sum().backward()
        return log, a.grad
    same(scenario)


def test_grad_of_a_non_leaf_leaves_its_history_for_a_later_backward():
    def scenario(T):
        w = T.tensor([1., 2.], requires_grad=True)
        p = w * 1.0
        log = []
        p.grad_fn.register_hook(lambda grads_in, grads_out: log.append("mul ran"))
        g, = T.autograd.grad((p * p).sum(), p)        # captured at p: p's node does not run
        (p ** 3).sum().backward()                     # ... and is still whole afterwards
        return g, w.grad, log
    same(scenario)


def test_double_backward_graph_of_pow_by_a_number_is_torchs():
    from opinfo import graph_names

    def scenario(T):
        x = T.tensor([0.5, 1.5], requires_grad=True)
        out = []
        for e in (2, 3.5, -1):
            g, = T.autograd.grad((x ** e).sum(), x, create_graph=True)
            gg, = T.autograd.grad(g.sum(), x)
            out.append((graph_names(g.grad_fn), g, gg))
        return out
    same(scenario)
