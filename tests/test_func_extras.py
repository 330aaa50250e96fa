"""torch.func's stack_module_state, replace_all_batch_norm_modules_, functionalize,
debug_unwrap and rearrange against torch."""
import pytest

from differential import catch, same


def _models(T, n=3, cls="seq"):
    T.manual_seed(0)
    make = {"seq": lambda: T.nn.Sequential(T.nn.Linear(2, 3), T.nn.BatchNorm1d(3)),
            "lin": lambda: T.nn.Linear(2, 2)}[cls]
    return [make() for _ in range(n)]


def test_stack_module_state():
    def scenario(T):
        params, buffers = T.func.stack_module_state(_models(T))
        return {"params": {k: (v, v.requires_grad, v.is_leaf, v.grad_fn) for k, v in
                           params.items()},
                "buffers": {k: (v, v.requires_grad) for k, v in buffers.items()}}
    same(scenario)


def test_stack_module_state_with_vmap_and_functional_call():
    def scenario(T):
        models = _models(T, cls="lin")
        params, buffers = T.func.stack_module_state(models)
        x = T.arange(4.0).view(2, 2)

        def run(p, b):
            return T.func.functional_call(models[0], (p, b), (x,))
        out = T.func.vmap(run)(params, buffers)
        out.sum().backward()
        return out, params["weight"].grad, [m(x) for m in models]
    same(scenario)


def test_stack_module_state_errors():
    def scenario(T):
        S = T.func.stack_module_state
        frozen = T.nn.Linear(2, 2)
        frozen.weight.requires_grad_(False)
        frozen2 = T.nn.Linear(2, 2)
        frozen2.weight.requires_grad_(False)
        return [catch(S, []), catch(S, [T.nn.Linear(2, 2), T.nn.ReLU()]),
                catch(S, [T.nn.Linear(2, 2), T.nn.Linear(2, 2).eval()]),
                catch(S, [T.nn.Linear(2, 2), T.nn.Linear(3, 2)]),
                catch(S, [frozen, T.nn.Linear(2, 2)]),
                {k: v.requires_grad for k, v in S([frozen, frozen2])[0].items()}]
    same(scenario)


def test_replace_all_batch_norm_modules_():
    def scenario(T):
        net = T.nn.Sequential(T.nn.Conv2d(1, 2, 1), T.nn.BatchNorm2d(2),
                              T.nn.Sequential(T.nn.BatchNorm1d(3)),
                              T.nn.InstanceNorm1d(3, track_running_stats=True))
        out = T.func.replace_all_batch_norm_modules_(net)
        x = T.arange(36.0).view(2, 2, 3, 3)
        return {"same": out is net,
                "state": [(type(m).__name__, m.running_mean, m.running_var,
                           getattr(m, "num_batches_tracked", None), m.track_running_stats)
                          for m in net.modules() if hasattr(m, "running_mean")],
                "y": net[1].eval()(x), "keys": list(net.state_dict().keys())}
    same(scenario)


def test_functionalize():
    def scenario(T):
        def f(x):
            y = x.clone()
            y.add_(1)
            x.mul_(2)
            return y.view(-1)
        x = T.ones(2, 2)
        out = T.func.functionalize(f)(x)
        other = T.func.functionalize(f, remove="mutations_and_views")(T.ones(2))
        grads = T.func.grad(T.func.functionalize(lambda a: (a.clone().mul_(a)).sum()))(
            T.tensor([1.0, 3.0]))
        return [out, x, other, grads, catch(T.func.functionalize, f, remove="bad"),
                T.func.functionalize(f).__name__]
    same(scenario)


def test_debug_unwrap():
    def scenario(T):
        t = T.ones(2)
        return T.func.debug_unwrap(t) is t, T.func.debug_unwrap(t, recurse=False) is t
    same(scenario)


@pytest.mark.parametrize("pattern,kwargs", [
    ("a b c -> c a b", {}), ("a b c -> a (b c)", {}), ("(a1 a2) b c -> a1 a2 b c", {"a1": 1}),
    ("(a1 a2) b c -> a2 (c a1) b", {"a2": 2}), ("... c -> c ...", {}), ("a ... -> ... a", {}),
    ("a b c -> (c b) a", {}), ("a b c -> (a b) c 1", {}), ("a b c -> a () b c", {}),
    ("a (b) c -> a b c", {}), ("a b c -> a b c", {"a": 2}), ("a ... -> a (...)", {}),
    ("a b c -> b c a", {}),
])
def test_rearrange(pattern, kwargs):
    same(lambda T: T.func.rearrange(T.arange(24).view(2, 3, 4), pattern, **kwargs))


def test_rearrange_a_list_and_gradients():
    def scenario(T):
        x = T.arange(6.0, requires_grad=True)
        y = T.func.rearrange(x.view(2, 3), "a b -> b a")
        (y * T.arange(6.0).view(3, 2)).sum().backward()
        return T.func.rearrange([T.ones(2), T.zeros(2)], "n d -> d n"), y, x.grad
    same(scenario)


@pytest.mark.parametrize("pattern,kwargs", [
    ("a b -> a b", {}), ("a b c -> a b", {}), ("(a a2) b c -> a b c", {}), ("a b c", {}),
    ("a a b -> a b", {}), ("a b c -> a b c d", {})])
def test_rearrange_pattern_errors(pattern, kwargs):
    same(lambda T: catch(T.func.rearrange, T.arange(24).view(2, 3, 4), pattern, **kwargs))


@pytest.mark.parametrize("pattern,kwargs", [
    ("(a b) c d -> a b c d", {"a": 3}), ("a b c -> a b c", {"a": 5})])
def test_rearrange_size_errors(pattern, kwargs):
    def scenario(T):
        err = catch(T.func.rearrange, T.arange(24).view(2, 3, 4), pattern, **kwargs)
        return err[:2]
    same(scenario)
