"""Differential audit of autograd against PyTorch: each test is a discrepancy that was found
(and fixed) in ember.autograd, run under torch and ember and compared."""
import numpy as np
import pytest

from differential import same, catch, warnings_of


def X(T, *shape, requires_grad=True, dtype=None):
    """A fixed, non-random tensor of the given shape."""
    n = int(np.prod(shape)) if shape else 1
    values = (np.arange(n, dtype=np.float64).reshape(shape) * 0.37 - 0.9).tolist()
    return T.tensor(values, requires_grad=requires_grad, dtype=dtype)


def function(T, forward, backward, setup_context=None, name="MyFn"):
    attrs = dict(forward=staticmethod(forward), backward=staticmethod(backward))
    if setup_context is not None:
        attrs["setup_context"] = staticmethod(setup_context)
    return type(name, (T.autograd.Function,), attrs)


# ----------------------------------------------------------------------------- hooks
def test_leaf_hook_registered_before_the_graph_is_built_applies():
    def scenario(T):
        x = X(T, 3)
        handle = x.register_hook(lambda g: g * 2)
        (x * 1).sum().backward()
        first = x.grad.clone()
        x.grad = None
        (x * 3).sum().backward()            # a new graph: the hook is still there
        second = x.grad.clone()
        handle.remove()
        x.grad = None
        (x * 1).sum().backward()
        return first, second, x.grad
    same(scenario)


def test_leaf_hook_sees_autograd_grad():
    def scenario(T):
        x = X(T, 3)
        seen = []
        x.register_hook(lambda g: seen.append(g.clone()))
        g, = T.autograd.grad((x ** 2).sum(), x)
        return g, seen
    same(scenario)


# ----------------------------------------------------------------------------- backward/grad
def test_index_of_the_output_not_requiring_grad():
    def scenario(T):
        x, w = X(T, 3), X(T, 3, requires_grad=False)
        return (catch(T.autograd.backward, [x.sum(), w.sum()]),
                catch(T.autograd.grad, [(x * 2).sum(), w.sum()], x))
    same(scenario)


def test_count_mismatch_between_outputs_and_gradients():
    def scenario(T):
        x = X(T, 3)
        return (catch(T.autograd.backward, [x.sum(), x.sum()], [T.tensor(1.)]),
                catch(T.autograd.grad, [x.sum(), x.sum()], x, [T.tensor(1.)]))
    same(scenario)


def test_gradients_must_be_tensors_or_none():
    def scenario(T):
        x = X(T, 3)
        return [catch(T.autograd.backward, (x * 2).sum(), grad_tensors=[3]),
                catch(T.autograd.backward, (x * 2).sum(), grad_tensors=["a"]),
                catch(T.autograd.grad, (x * 2), x, grad_outputs=[3.5]),
                catch((x * 2).sum().backward, 2.0),
                x.grad]
    same(scenario)


def test_what_is_differentiated_must_be_tensors():
    def scenario(T):
        x = X(T, 3)
        return [catch(T.autograd.grad, (x * 2).sum(), [x, None]),
                catch(T.autograd.grad, (x * 2).sum(), [x, 3]),
                catch(T.autograd.grad, [(x * 2).sum(), 3], [x]),
                catch(T.autograd.backward, [(x * 2).sum(), 3]),
                catch(T.autograd.backward, (x * 2).sum(), inputs=[x, 3])]
    same(scenario)


def test_materialize_grads_with_allow_unused_false():
    def scenario(T):
        x, w = X(T, 3), X(T, 3)
        return catch(T.autograd.grad, (x * 2).sum(), [x, w], allow_unused=False,
                     materialize_grads=True)
    same(scenario)


@pytest.mark.parametrize("retain", [False, True])
def test_backward_inputs_with_a_non_leaf_fills_its_grad(retain):
    def scenario(T):
        x = X(T, 3)
        y = x * 2
        if retain:
            y.retain_grad()
        z = (y * y).sum()
        z.backward(inputs=[y], retain_graph=True)
        first = (y.grad.clone(), y.retains_grad, x.grad)
        z.backward(inputs=[y, x])
        return first, y.grad, x.grad, warnings_of(lambda: y.grad)[1]
    same(scenario)


def test_backward_inputs_non_leaf_then_plain_backward_keeps_retaining():
    def scenario(T):
        x = X(T, 3)
        y = x * 2
        (y * y).sum().backward(inputs=[y], retain_graph=True)
        (y * 3).sum().backward()
        return y.grad, x.grad, y.retains_grad
    same(scenario)


# ----------------------------------------------------------------------------- accumulation
@pytest.mark.parametrize("make", [
    lambda T: X(T, 4, 3, requires_grad=False).t().requires_grad_(),
    lambda T: X(T, 2, 3, 4, requires_grad=False).permute(2, 0, 1).requires_grad_(),
    lambda T: X(T, 4, 6, requires_grad=False)[:, ::2].requires_grad_(),
    lambda T: X(T, 1, 3, requires_grad=False).expand(2, 3).requires_grad_(),
])
@pytest.mark.parametrize("loss", [lambda x: x.sum(), lambda x: x.exp().sum(),
                                  lambda x: (x * x).sum()])
def test_grad_follows_the_layout_of_its_leaf(make, loss):
    def scenario(T):
        x = make(T)
        loss(x).backward()
        first = x.grad.stride()
        loss(x).backward()
        return first, x.grad.stride(), x.grad
    same(scenario)


def test_grad_of_a_transposed_use_is_laid_out_as_the_leaf():
    def scenario(T):
        x = X(T, 3, 4)
        (x.t() * 2).sum().backward()
        return x.grad.stride(), x.grad.is_contiguous(), x.grad
    same(scenario)


def test_accumulating_into_an_expanded_grad_is_refused():
    def scenario(T):
        x = X(T, 3, 4)
        expanded = T.zeros(1, 4).expand(3, 4)
        x.grad = expanded
        return catch(lambda: (x * 2).sum().backward()), x.grad is expanded, x.grad
    same(scenario)


def test_create_graph_grad_is_a_copy_in_the_graph():
    def scenario(T):
        x = X(T, 3)
        y = (x ** 3).sum()
        y.backward(create_graph=True)
        g = x.grad
        first = (g.grad_fn.name(), [None if n is None else type(n).__name__
                                    for n, _ in g.grad_fn.next_functions], g._version)
        y.backward(create_graph=True)
        second = (x.grad.grad_fn.name(), type(x.grad.grad_fn.next_functions[0][0]).__name__)
        return first, second, x.grad
    same(scenario)


def test_create_graph_grad_is_never_the_given_gradient():
    def scenario(T):
        x = X(T, 3)
        g = T.ones(3)
        x.backward(g, create_graph=True)
        return x.grad is g, x.grad.requires_grad, x.grad
    same(scenario)


def test_create_graph_grad_of_a_transposed_leaf():
    def scenario(T):
        x = X(T, 4, 3, requires_grad=False).t().requires_grad_()
        (x ** 3).sum().backward(create_graph=True)
        return x.grad.grad_fn.name(), x.grad.stride(), x.grad
    same(scenario)


# ----------------------------------------------------------------------------- grad modes
def test_grad_modes_decorate_without_parentheses():
    def scenario(T):
        @T.no_grad
        def f(x):
            return (x * 2).requires_grad, T.is_grad_enabled()

        @T.enable_grad
        def g(x):
            return (x * 2).requires_grad, T.is_grad_enabled()

        @T.inference_mode
        def h():
            return T.is_grad_enabled(), T.is_inference_mode_enabled()
        x = X(T, 3)
        with T.no_grad():
            inside = g(x)
        return f(x), inside, h(), f.__name__, h.__name__, T.is_grad_enabled()
    same(scenario)


def test_set_grad_enabled_as_decorator_leaves_the_mode_alone():
    def scenario(T):
        @T.set_grad_enabled(False)
        def f():
            return T.is_grad_enabled()
        after_decorating = T.is_grad_enabled()
        return after_decorating, f(), T.is_grad_enabled()
    same(scenario)


def test_set_grad_enabled_takes_only_bools_and_reprs():
    def scenario(T):
        out = [catch(T.set_grad_enabled, "x"), catch(T.set_grad_enabled, 1),
               catch(T.set_grad_enabled, None), T.is_grad_enabled()]
        mode = T.set_grad_enabled(False)
        out += [str(mode), mode.prev, mode.mode, T.is_grad_enabled()]
        T.set_grad_enabled(True)
        return out
    same(scenario)


def test_inference_mode_false_enables_grad():
    def scenario(T):
        out = []
        with T.no_grad():
            with T.inference_mode(False):
                out.append((T.is_grad_enabled(), T.is_inference_mode_enabled()))
        with T.inference_mode():
            with T.inference_mode(False):
                out.append((T.is_grad_enabled(), T.is_inference_mode_enabled()))
                out.append((X(T, 3) * 2).requires_grad)
            out.append((T.is_grad_enabled(), T.is_inference_mode_enabled()))
        return out
    same(scenario)


def test_decorating_a_class_warns():
    def scenario(T):
        class A:
            pass
        return warnings_of(lambda: callable(T.no_grad()(A)))
    same(scenario)


# ----------------------------------------------------------------------------- in place
def test_modified_saved_leaf_message_names_no_node():
    def scenario(T):
        x, w = X(T, 3), X(T, 3, requires_grad=False)
        z = x * w
        w.add_(1)
        y = x.exp() * x
        with T.no_grad():
            x.add_(1)
        return catch(z.sum().backward), catch(y.sum().backward)
    same(scenario)


def test_modified_saved_view_message_names_the_regenerated_node():
    def scenario(T):
        x = X(T, 2, 3)
        y = x * 2
        z = y[0] ** 2
        s = y.view(6) ** 2
        y[1].add_(1)
        return catch(z.sum().backward), catch(s.sum().backward)
    same(scenario)


# ----------------------------------------------------------------------------- custom Function
def test_function_returning_its_input_returns_a_view_of_it():
    def scenario(T):
        F = function(T, lambda ctx, x: x, lambda ctx, g: g * 2)
        x = X(T, 3)
        y = F.apply(x)
        out = [y is x, y._base is x, y.grad_fn.name(), y.is_leaf]
        y.sum().backward()
        return out, x.grad
    same(scenario)


def test_mark_dirty_errors():
    def scenario(T):
        def dirty_leaf(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        def dirty_not_returned(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x * 1
        x = X(T, 3)
        return (catch(function(T, dirty_leaf, lambda ctx, g: g).apply, x),
                catch(function(T, dirty_not_returned, lambda ctx, g: g).apply, x * 1))
    same(scenario)


def test_save_for_backward_takes_tensors_or_none():
    def scenario(T):
        def saves_int(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 2

        def saves_none(ctx, x):
            ctx.save_for_backward(x, None)
            return x * 2

        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * (b is None)
        x = X(T, 3)
        out = [catch(function(T, saves_int, backward).apply, x)]
        function(T, saves_none, backward).apply(x).sum().backward()
        return out, x.grad
    same(scenario)


@pytest.mark.parametrize("grad", [5, "a", [None]])
def test_backward_returning_a_non_tensor(grad):
    def scenario(T):
        F = function(T, lambda ctx, x: x * 2, lambda ctx, g: grad)
        return catch(lambda: F.apply(X(T, 3)).sum().backward())
    same(scenario)


def test_gradient_for_a_non_tensor_input():
    def scenario(T):
        F = function(T, lambda ctx, x, k: x * k, lambda ctx, g: (g, g))
        x = X(T, 3)
        return catch(lambda: F.apply(x, 2).sum().backward()), x.grad
    same(scenario)


def test_function_jvp_is_not_implemented():
    def scenario(T):
        F = function(T, lambda ctx, x: x * 2, lambda ctx, g: g)
        return catch(F.jvp, None, None), catch(T.autograd.Function.jvp, None)
    same(scenario)


def test_once_differentiable_results_lead_to_an_error_node():
    def scenario(T):
        class Once(T.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a ** 2

            @staticmethod
            @T.autograd.function.once_differentiable
            def backward(ctx, g):
                a, = ctx.saved_tensors
                return g * 2 * a
        x = X(T, 3)
        go = T.ones(3, requires_grad=True)
        g, = T.autograd.grad(Once.apply(x), x, go, create_graph=True)
        return (g.requires_grad, g.grad_fn.name(),
                [n.name() for n, _ in g.grad_fn.next_functions],
                catch(T.autograd.grad, g.sum(), x, allow_unused=True),
                catch(g.sum().backward),
                catch(T.autograd.grad, g.sum(), go))
    same(scenario)


def test_gradgradcheck_of_a_once_differentiable_function():
    def scenario(T):
        class Once(T.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a ** 2

            @staticmethod
            @T.autograd.function.once_differentiable
            def backward(ctx, g):
                a, = ctx.saved_tensors
                return g * 2 * a
        error = catch(T.autograd.gradgradcheck, Once.apply, (X(T, 3, dtype=T.float64),))
        # (the numbers in the message come from random grad_outputs)
        return error[:2], error[2].split("\n")[0]
    same(scenario)


# ----------------------------------------------------------------------------- functional
def _functional_cases(T):
    x = X(T, 3, requires_grad=False, dtype=T.float64)
    y = X(T, 3, requires_grad=False, dtype=T.float64) + 1
    v = X(T, 3, requires_grad=False, dtype=T.float64) + 2
    ones = lambda a, *rest: T.ones(3, dtype=T.float64)     # noqa: E731
    unused = lambda a, b: a * 2                             # noqa: E731
    linear = lambda a: (a * 2).sum()                        # noqa: E731
    linear2 = lambda a, b: (a * 2).sum() + (b ** 2).sum()   # noqa: E731
    cube = lambda a: (a ** 3).sum()                         # noqa: E731
    detached = lambda a: a.detach().sum()                   # noqa: E731
    F = T.autograd.functional
    return [
        (F.vjp, ones, x, v), (F.vjp, unused, (x, y), v),
        (F.jvp, ones, x, v), (F.jvp, unused, (x, y), (v, v)),
        (F.jvp, lambda a: (a * 2, a.detach()), x, v),
        (F.jacobian, ones, x), (F.jacobian, unused, (x, y)), (F.jacobian, lambda a: a * 2, x),
        (F.hessian, linear, x), (F.hessian, linear2, (x, y)), (F.hessian, cube, x),
        (F.hessian, detached, x),
        (F.vhp, linear, x, v), (F.vhp, cube, x, v), (F.vhp, detached, x, v),
        (F.hvp, linear, x, v), (F.hvp, cube, x, v), (F.hvp, detached, x, v),
        (F.hvp, linear2, (x, y), (v, v)),
    ]


def _flat_requires_grad(result):
    if hasattr(result, "requires_grad"):
        return [result.requires_grad]
    if isinstance(result, tuple) and not (result and result[0] == "raised"):
        return [flag for r in result for flag in _flat_requires_grad(r)]
    return []


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("case", range(19))
def test_functional_strict_and_create_graph(case, strict, create_graph):
    def scenario(T):
        fn, *args = _functional_cases(T)[case]
        result = catch(fn, *args, create_graph=create_graph, strict=strict)
        return result, _flat_requires_grad(result)
    same(scenario)


def test_functional_argument_errors():
    def scenario(T):
        F = T.autograd.functional
        x, v = X(T, 3, requires_grad=False), X(T, 3, requires_grad=False)
        f = lambda a: a * 2     # noqa: E731
        out = []
        for fn in (F.vjp, F.jvp, F.vhp, F.hvp):
            out += [catch(fn, f, [x], v), catch(fn, f, (x, 3), v), catch(fn, f, x, [v]),
                    catch(fn, f, x, (v, v)), catch(fn, f, x, X(T, 4)),
                    catch(fn, f, (x,), (X(T, 4),)), catch(fn, lambda a: [a], x, v),
                    catch(fn, lambda a: 3, x, v), catch(fn, lambda a: (a.sum(), 3), x, v),
                    catch(fn, f, x)]
        for fn in (F.jacobian, F.hessian):
            out += [catch(fn, f, [x]), catch(fn, f, (x, 3)), catch(fn, lambda a: [a], x),
                    catch(fn, lambda a: 3, x), catch(fn, lambda a: (a.sum(), 3), x),
                    catch(fn, lambda a: (a.sum(), a.sum()), x), catch(fn, lambda a: a, x)]
        out += [catch(F.jacobian, f, x, strategy="bad"),
                catch(F.jacobian, f, x, strategy="forward-mode"),
                catch(F.jacobian, f, x, strategy="forward-mode", vectorize=True,
                      create_graph=True),
                catch(F.jacobian, f, x, strict=True, vectorize=True),
                catch(F.hessian, lambda a: (a ** 3).sum(), x, outer_jacobian_strategy="bad"),
                F.jacobian(f, x, strategy="forward-mode", vectorize=True),
                F.vjp(lambda a: a.sum(), x), F.jvp(lambda a: a.sum() * 2, X(T))]
        return out
    same(scenario)


def test_functional_keeps_the_graph_of_inputs_under_create_graph():
    def scenario(T):
        F = T.autograd.functional
        x = X(T, 3, dtype=T.float64)
        out, g = F.vjp(lambda a: a ** 3, x, T.ones(3, dtype=T.float64), create_graph=True)
        g.sum().backward()
        h = F.hessian(lambda a: (a ** 3).sum(), x, create_graph=True)
        return out.requires_grad, g.requires_grad, x.grad, h.requires_grad, h
    same(scenario)


# ----------------------------------------------------------------------------- hook results
def _run_with_node_hook(T, kind, hook):
    x = X(T, 3)
    y = x * 2
    getattr(y.grad_fn, kind)(hook)
    return catch(lambda: y.exp().sum().backward()), x.grad


@pytest.mark.parametrize("hook", [
    lambda go: go[0], lambda go: [go[0] * 3], lambda go: (None,), lambda go: (5,),
    lambda go: (go[0], go[0]), lambda go: 5, lambda go: (go[0] * 0 + 1,),
])
def test_node_prehook_results_are_checked(hook):
    same(lambda T: _run_with_node_hook(T, "register_prehook", hook))


@pytest.mark.parametrize("hook", [
    lambda gi, go: gi[0], lambda gi, go: [gi[0] * 3, None], lambda gi, go: (None, None),
    lambda gi, go: (gi[0], gi[0], gi[0]), lambda gi, go: (gi[0] * 0 + 7, None),
    lambda gi, go: (type(gi).__name__, type(go).__name__) and None,
])
def test_node_post_hook_results_are_checked(hook):
    same(lambda T: _run_with_node_hook(T, "register_hook", hook))


def test_node_hooks_see_tuples():
    def scenario(T):
        x = X(T, 3)
        y = x * 2
        seen = []
        y.grad_fn.register_hook(lambda gi, go: seen.append((type(gi).__name__,
                                                            type(go).__name__)))
        y.grad_fn.register_prehook(lambda go: seen.append(type(go).__name__))
        y.sum().backward()
        return seen
    same(scenario)


class _CallableHook:
    def __call__(self, grad):
        return grad.new_ones(4)


@pytest.mark.parametrize("hook", [
    lambda T, g: T.ones(4), lambda T, g: T.ones(3, dtype=T.float64), lambda T, g: 5,
    lambda T, g: T.ones(3, dtype=T.float64, requires_grad=True),
    lambda T, g: _CallableHook()(g),
])
@pytest.mark.parametrize("leaf", [False, True])
def test_tensor_hook_results_are_checked(hook, leaf):
    def scenario(T):
        x = X(T, 3)
        y = x if leaf else x * 2
        y.register_hook(lambda g: hook(T, g))
        return catch(lambda: (y * 1).sum().backward()), x.grad
    same(scenario)


def test_hook_without_a_name_is_unknown_in_the_message():
    def scenario(T):
        x = X(T, 3)
        y = x * 2
        y.register_hook(_CallableHook())
        return catch(lambda: y.sum().backward())
    same(scenario)


# ----------------------------------------------------------------------------- is_grads_batched
@pytest.mark.parametrize("case", range(11))
def test_grad_with_batched_grad_outputs(case):
    def scenario(T):
        x = T.tensor([1., 2, 3], requires_grad=True)
        w = T.tensor([1., 2], requires_grad=True)
        y = x ** 2
        eye = T.eye(3)
        call = [
            lambda: T.autograd.grad(y, x, eye, is_grads_batched=True),
            lambda: T.autograd.grad(y, x, T.ones(3), is_grads_batched=True),
            lambda: T.autograd.grad(y, x, T.ones(2, 4), is_grads_batched=True),
            lambda: T.autograd.grad(x * 2, x, T.ones(5, 7, 4, 3), is_grads_batched=True),
            lambda: T.autograd.grad(y, x, None, is_grads_batched=True),
            lambda: T.autograd.grad((y, (w * 2).sum()), (x, w), (eye, T.ones(3)),
                                    is_grads_batched=True),
            lambda: T.autograd.grad(y, (x, w), eye, is_grads_batched=True, allow_unused=True),
            lambda: T.autograd.grad(y, (x, w), eye, is_grads_batched=True,
                                    materialize_grads=True),
            lambda: T.autograd.grad(y.sum(), x, T.ones(5), is_grads_batched=True),
            lambda: T.autograd.grad(y, x, eye.double(), is_grads_batched=True),
            lambda: T.autograd.grad(y, x, T.ones(0, 3), is_grads_batched=True),
        ][case]
        return catch(call)
    same(scenario)


def test_batched_grad_keeps_or_frees_the_graph_as_asked():
    def scenario(T):
        x = T.tensor([1., 2, 3], requires_grad=True)
        y = x.exp()
        eye = T.eye(3)
        first = T.autograd.grad(y, x, eye, is_grads_batched=True, retain_graph=True)
        second = T.autograd.grad(y, x, eye, is_grads_batched=True)
        g, = T.autograd.grad(x ** 3, x, eye, is_grads_batched=True, create_graph=True)
        return (first, second, catch(T.autograd.grad, y, x, eye, is_grads_batched=True),
                g, g.requires_grad)
    same(scenario)


# ----------------------------------------------------------------------------- autograd.graph
def test_gradient_edges_as_inputs():
    def scenario(T):
        x = X(T, 3)
        y = x * 2
        z = y.exp().sum()
        edge = T.autograd.graph.get_gradient_edge(y)
        unused = T.autograd.graph.get_gradient_edge(x * 3)
        out = [T.autograd.grad(z, edge, retain_graph=True),
               T.autograd.grad(z, [edge, x], retain_graph=True),
               catch(T.autograd.grad, z, [edge, unused], retain_graph=True),
               catch(T.autograd.grad, z, [edge, unused], allow_unused=True, retain_graph=True),
               catch(T.autograd.grad, z, [edge, unused], materialize_grads=True,
                     retain_graph=True),
               catch(lambda: z.backward(inputs=[edge], retain_graph=True)), x.grad,
               catch(lambda: z.backward(inputs=[edge, x])), x.grad]
        leaf_edge = T.autograd.graph.get_gradient_edge(x)
        out += [leaf_edge.node.name(), leaf_edge.output_nr, leaf_edge.ownership_token,
                leaf_edge.node.variable is x, edge.node is y.grad_fn,
                T.autograd.grad((x * x).sum(), leaf_edge),
                catch(T.autograd.graph.get_gradient_edge, X(T, 3, requires_grad=False))]
        return out
    same(scenario)


def test_increment_version():
    def scenario(T):
        x = X(T, 3)
        y = x.exp()
        T.autograd.graph.increment_version(y)
        z = x * 1
        T.autograd.graph.increment_version([z, x])
        return (int(y._version), catch(y.sum().backward), int(x._version), int(z._version),
                catch(T.autograd.graph.increment_version, 3))
    same(scenario)


def test_setup_context_sees_bound_arguments_with_defaults():
    def scenario(T):
        seen = []

        def setup(ctx, inputs, output):
            seen.append(inputs[1:])
        F = function(T, lambda x, k=2: x * k, lambda ctx, g: (g, None), setup)
        x = X(T, 3)
        return ([F.apply(x), F.apply(x, 3), F.apply(x, k=4), F.apply(x=x, k=2),
                 catch(F.apply, x, 5, 6), catch(F.apply)], seen)
    same(scenario)


def test_non_differentiable_input_returned_as_is():
    def scenario(T):
        def forward(ctx, x):
            ctx.mark_non_differentiable(x)
            return x
        y = function(T, forward, lambda ctx, g: g).apply(X(T, 3))
        return y.requires_grad, y.grad_fn, y._base is None, y.is_leaf
    same(scenario)


def test_ctx_bookkeeping_attributes():
    def scenario(T):
        seen = []
        names = ("to_save", "dirty_tensors", "non_differentiable")

        def forward(ctx, x):
            seen.append([getattr(ctx, n, "missing") for n in names])
            ctx.save_for_backward(x)
            ctx.mark_non_differentiable(x)
            seen.append([type(getattr(ctx, n)).__name__ for n in names])
            ctx.non_differentiable = None
            return x * 2

        def backward(ctx, g):
            seen.append([getattr(ctx, n, "missing") for n in names])
            return g
        function(T, forward, backward).apply(X(T, 3)).sum().backward()
        return seen
    same(scenario)


def test_function_vmap_defaults():
    def scenario(T):
        F = function(T, lambda ctx, x: x * 2, lambda ctx, g: g)
        return F.generate_vmap_rule, catch(F.vmap, None, None, None)
    same(scenario)


def test_backward_and_grad_argument_checks_order_and_texts():
    def scenario(T):
        x, w = X(T, 3), X(T, 3, requires_grad=False)
        z = (x * 1j).sum()
        return [catch(z.backward), catch(T.autograd.grad, z, x),
                catch(lambda: (x * w).sum().backward(inputs=[w])),
                catch(lambda: (x * w).sum().backward(inputs=w)),
                catch(lambda: (x * w).sum().backward(inputs=[x, w])), x.grad,
                catch(T.autograd.backward, x * 2, grad_tensors=T.ones(3),
                      grad_variables=T.ones(3)),
                catch(T.autograd.grad, T.tensor([1, 2]).sum(), T.tensor([1, 2]))]
    same(scenario)
