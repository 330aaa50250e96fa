"""The smaller torch.autograd names against torch: the legacy Function classes
(InplaceFunction, NestedIOFunction, autograd.variable), the engine settings
set_multithreading_enabled and enforce_grad_layout_policy, and torch.autograd.graph's
allow_mutation_on_saved_tensors, region_activation_memory_budget and stream settings."""
import importlib
import warnings

import pytest
import torch

from differential import catch, same, warnings_of


def _function_module(T):
    return importlib.import_module(T.__name__ + ".autograd.function")


def _multithreading(T):
    if T is torch:
        return torch._C._is_multithreading_enabled()
    return T.autograd.grad_mode.is_multithreading_enabled()


# ----------------------------------------------------------------------------- legacy Functions
def test_autograd_variable_is_gone():
    same(lambda T: [catch(T.autograd.variable, T.ones(2)),
                    catch(T.autograd.variable, [1.0], requires_grad=True)])


def test_inplace_function():
    def scenario(T):
        F = _function_module(T)

        class Square(F.InplaceFunction):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return 2 * x * g

        x = T.tensor([1.0, -2.0, 3.0], requires_grad=True)
        y = Square.apply(x)
        y.sum().backward()
        made, seen = warnings_of(lambda: (F.InplaceFunction(), F.InplaceFunction(True)))
        return {"y": y, "grad": x.grad, "grad_fn": type(y.grad_fn).__name__,
                "inplace": [m.inplace for m in made], "warnings": seen,
                "subclass": issubclass(F.InplaceFunction, T.autograd.Function),
                "in_autograd": hasattr(T.autograd, "InplaceFunction"),
                "call": catch(lambda: made[0](x))}
    same(scenario)


def test_nested_io_function_fails_as_in_torch():
    def scenario(T):
        F = _function_module(T)

        class Mul(F.NestedIOFunction):
            def forward_extended(self, x, y):
                return x * y

            def backward_extended(self, g):
                return g, g

        x = T.ones(2, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            instance = Mul()
            base = F.NestedIOFunction()
        return {"same_class": T.autograd.NestedIOFunction is F.NestedIOFunction,
                "call": catch(lambda: instance(x, x)),
                "apply": catch(Mul.apply, x, x), "apply_plain": catch(Mul.apply, T.ones(2)),
                "forward_extended": catch(base.forward_extended, x),
                "backward_extended": catch(base.backward_extended, x),
                "subclass": issubclass(F.NestedIOFunction, T.autograd.Function)}
    same(scenario)


# ----------------------------------------------------------------------------- engine settings
def test_set_multithreading_enabled():
    def scenario(T):
        A = T.autograd
        seen = [_multithreading(T)]
        setter = A.set_multithreading_enabled(False)       # applies at once
        seen.append(_multithreading(T))
        with setter:
            seen.append(_multithreading(T))
        seen.append(_multithreading(T))                     # restored by the block's end
        with A.set_multithreading_enabled(False):
            x = T.ones(3, requires_grad=True)
            (x * 2).sum().backward()                        # backward works in either mode
            seen.append(_multithreading(T))
        seen.append(_multithreading(T))

        @A.set_multithreading_enabled(False)
        def inside():
            return _multithreading(T)
        seen += [inside(), _multithreading(T)]
        A.set_multithreading_enabled(True)
        seen.append(_multithreading(T))
        return seen, x.grad, {"prev": setter.prev, "mode": setter.mode}, \
            type(setter.clone()).__name__
    same(scenario)


def _grad_strides(T, enable, f):
    p = T.zeros(2, 3, 4).permute(2, 0, 1).requires_grad_()
    with T.autograd.enforce_grad_layout_policy(enable):
        f(p).sum().backward()
    return p.grad.stride(), p.grad


@pytest.mark.parametrize("enable", [True, False])
@pytest.mark.parametrize("which", ["mul", "contiguous_mul", "permuted_back"])
def test_enforce_grad_layout_policy(enable, which):
    f = {"mul": lambda p: p * 2, "contiguous_mul": lambda p: p.contiguous() * 2,
         "permuted_back": lambda p: (p.permute(1, 2, 0).contiguous() * 2).permute(2, 0, 1)}
    same(lambda T: _grad_strides(T, enable, f[which]))


def test_enforce_grad_layout_policy_settings():
    def scenario(T):
        A = T.autograd
        setter = A.enforce_grad_layout_policy(False)
        state = {"prev": setter.prev, "mode": setter.mode}
        A.enforce_grad_layout_policy(True)
        lin = T.nn.Linear(3, 4)
        with A.enforce_grad_layout_policy(False):
            lin(T.ones(2, 3)).sum().backward()
        w = T.zeros(3, 4).t().requires_grad_()
        with A.enforce_grad_layout_policy(enable=False):
            (w * T.ones(4, 3)).sum().backward()
        after = _grad_strides(T, True, lambda p: p * 2)     # the default is back
        return state, lin.weight.grad.stride(), w.grad.stride(), after
    same(scenario)


# ----------------------------------------------------------------------------- saved tensors
def test_allow_mutation_on_saved_tensors():
    def scenario(T):
        G = T.autograd.graph
        out = {}
        with G.allow_mutation_on_saved_tensors() as ctx:
            out["ctx"] = type(ctx).__name__
            a = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
            b = a.clone()
            loss = (b ** 2).sum()
            b.sin_()                    # b was saved by pow: backward uses its old values
            loss.backward()
            out["a_grad"], out["b"] = a.grad, b
            x = T.ones(4, requires_grad=True)
            y = x * 2
            z = y.exp()                 # saves its result; mutating y's view is fine too
            y[1:].mul_(3)
            z.sum().backward()
            out["x_grad"], out["y"] = x.grad, y
            c = T.tensor([1.0, 2.0], requires_grad=True)
            d = c.clone()
            first = (d * d).sum()
            d.add_(1)
            second = (d * d).sum()
            d.mul_(2)
            (first + second).backward()
            out["c_grad"] = c.grad
            w = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
            h = w.clone()
            prod = h.mm(h)
            h.t_()
            prod.sum().backward()
            out["w_grad"] = w.grad
        return out
    same(scenario)


def test_allow_mutation_on_saved_tensors_errors():
    def scenario(T):
        G = T.autograd.graph

        def nested():
            with G.allow_mutation_on_saved_tensors():
                with G.allow_mutation_on_saved_tensors():
                    pass
        with G.allow_mutation_on_saved_tensors():
            a = T.tensor([1.0, 2.0], requires_grad=True)
            b = a.clone()
            late = (b * b).sum()
            b.add_(1)
            unsaved = (a * 3).sum()     # saves no tensor needing grad: backward works later
        a2 = T.tensor([1.0, 2.0], requires_grad=True)
        b2 = a2.clone()
        plain = (b2 * b2).sum()
        b2.add_(1)                      # outside the block: the usual error
        plain_err = catch(plain.backward)
        return {"nested": catch(nested), "late": catch(late.backward),
                "unsaved": (catch(unsaved.backward), a.grad),
                "plain": (plain_err[0], plain_err[1], plain_err[2][:60])}
    same(scenario)


def test_region_activation_memory_budget_refuses_eager_use():
    same(lambda T: [catch(T.autograd.graph.region_activation_memory_budget, 0.5),
                    catch(T.autograd.graph.region_activation_memory_budget, budget=0.0)])


@pytest.mark.parametrize("name", ["set_override_stale_capture_stream",
                                  "set_warn_on_accumulate_grad_stream_mismatch"])
def test_stream_settings(name):
    def scenario(T):
        setter = getattr(T.autograd.graph, name)
        default = name == "set_warn_on_accumulate_grad_stream_mismatch"
        return [catch(setter, not default), catch(setter, default), catch(setter, 1),
                catch(setter, None), catch(setter, "yes")]
    same(scenario)
