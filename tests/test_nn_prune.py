"""torch.nn.utils.prune against torch: masks and pruned weights of every method (the random
ones after the same manual_seed), the weight_orig / weight_mask / hook layout and state_dict
keys, iterative pruning through PruningContainer, global pruning, remove(), the errors, and a
few training steps of a pruned model."""
import numpy as np
import pytest
import torch
import torch.nn.utils.prune      # noqa: F401 - torch does not import it with torch.nn.utils
import ember.nn.utils.prune      # noqa: F401 - nor does ember

from differential import catch, same


def _x(T, shape, seed=0, requires_grad=False):
    data = np.random.default_rng(seed).standard_normal(shape)
    return T.tensor(data, dtype=T.float32, requires_grad=requires_grad)


def _linear(T, i=5, o=4, seed=0):
    """A Linear with the same seeded weights in both libraries."""
    m = T.nn.Linear(i, o)
    with T.no_grad():
        m.weight.copy_(_x(T, (o, i), seed))
        m.bias.copy_(_x(T, (o,), seed + 1))
    return m


def _conv(T, seed=0):
    m = T.nn.Conv2d(3, 6, 3)
    with T.no_grad():
        m.weight.copy_(_x(T, (6, 3, 3, 3), seed))
    return m


def _layout(m):
    """What pruning did to a module's attributes, as plain data."""
    return {"params": [n for n, _ in m.named_parameters()],
            "buffers": [n for n, _ in m.named_buffers()],
            "state_dict": list(m.state_dict().keys()),
            "hooks": [type(h).__name__ for h in m._forward_pre_hooks.values()],
            "weight_is_param": type(m.weight).__name__}


@pytest.mark.parametrize("method,kwargs", [
    ("random_unstructured", {"amount": 0.3}), ("random_unstructured", {"amount": 7}),
    ("random_unstructured", {"amount": 0}), ("random_unstructured", {"amount": 1.0}),
    ("l1_unstructured", {"amount": 0.5}), ("l1_unstructured", {"amount": 3}),
    ("l1_unstructured", {"amount": 20}),
    ("random_structured", {"amount": 2, "dim": 0}), ("random_structured", {"amount": 0.4,
                                                                          "dim": 1}),
    ("random_structured", {"amount": 0, "dim": -1}),
    ("ln_structured", {"amount": 1, "n": 2, "dim": 0}),
    ("ln_structured", {"amount": 0.6, "n": 1, "dim": -1}),
    ("ln_structured", {"amount": 2, "n": float("inf"), "dim": 1}),
    ("ln_structured", {"amount": 0.0, "n": 2, "dim": 0}),
    ("identity", {}),
])
def test_one_method_on_a_linear(method, kwargs):
    def scenario(T):
        T.manual_seed(3)
        m = _linear(T)
        out = getattr(T.nn.utils.prune, method)(m, "weight", **kwargs)
        return {"returns_module": out is m, "mask": m.weight_mask, "weight": m.weight,
                "orig": m.weight_orig, "grad_fn": type(m.weight.grad_fn).__name__,
                "layout": _layout(m), "pruned": T.nn.utils.prune.is_pruned(m),
                "next_draw": T.rand(3)}
    same(scenario)


@pytest.mark.parametrize("method,kwargs", [
    ("random_structured", {"amount": 3, "dim": 0}),
    ("random_structured", {"amount": 0.5, "dim": 1}),
    ("ln_structured", {"amount": 2, "n": 1, "dim": 0}),
    ("ln_structured", {"amount": 0.5, "n": 2, "dim": -1}),
    ("ln_structured", {"amount": 1, "n": 2, "dim": 1}),
    ("l1_unstructured", {"amount": 0.25}),
    ("random_unstructured", {"amount": 50}),
])
def test_one_method_on_a_conv(method, kwargs):
    def scenario(T):
        T.manual_seed(11)
        m = _conv(T)
        getattr(T.nn.utils.prune, method)(m, "weight", **kwargs)
        return m.weight_mask, m.weight, m(_x(T, (1, 3, 5, 5), 4))
    same(scenario)


def test_pruning_the_bias_and_the_weight_of_one_module():
    def scenario(T):
        P = T.nn.utils.prune
        m = _linear(T)
        P.l1_unstructured(m, "bias", amount=2)
        P.ln_structured(m, "weight", amount=1, n=2, dim=0)
        return m.bias_mask, m.bias, m.weight, _layout(m), m(_x(T, (2, 5), 9))
    same(scenario)


def test_iterative_pruning_combines_masks_in_a_container():
    def scenario(T):
        P = T.nn.utils.prune
        T.manual_seed(0)
        m = _linear(T, 8, 6)
        out = []
        P.random_unstructured(m, "weight", amount=0.25)
        out.append(m.weight_mask.clone())
        # unstructured after unstructured: the amount counts the surviving entries only
        P.l1_unstructured(m, "weight", amount=0.5)
        out.append(m.weight_mask.clone())
        # structured next: only channels with a surviving entry are candidates
        P.ln_structured(m, "weight", amount=2, n=1, dim=0)
        out.append(m.weight_mask.clone())
        P.random_structured(m, "weight", amount=0.5, dim=-1)
        out.append(m.weight_mask.clone())
        P.custom_from_mask(m, "weight", mask=_x(T, (6, 8), 5) > 0)
        out.append(m.weight_mask.clone())
        P.identity(m, "weight")
        out.append(m.weight_mask.clone())
        hooks = list(m._forward_pre_hooks.values())
        container = hooks[0]
        return {"masks": out, "weight": m.weight, "layout": _layout(m), "len": len(container),
                "methods": [type(h).__name__ for h in container],
                "first": type(container[0]).__name__, "name": container._tensor_name,
                "mask_dtype": m.weight_mask.dtype}
    same(scenario)


def test_the_hook_recomputes_the_weight_before_forward():
    def scenario(T):
        P = T.nn.utils.prune
        m = _linear(T)
        P.l1_unstructured(m, "weight", amount=6)
        with T.no_grad():
            m.weight_orig.mul_(2).add_(1)
        before = m.weight.clone()
        y = m(_x(T, (3, 5), 2))
        return before, m.weight, y
    same(scenario)


def test_remove_makes_the_pruning_permanent():
    def scenario(T):
        P = T.nn.utils.prune
        T.manual_seed(5)
        m = _linear(T)
        P.random_unstructured(m, "weight", amount=0.4)
        P.l1_unstructured(m, "weight", amount=2)
        P.l1_unstructured(m, "bias", amount=1)
        out = P.remove(m, "weight")
        after_one = _layout(m)
        P.remove(m, "bias")
        return {"returns_module": out is m, "after_one": after_one, "layout": _layout(m),
                "weight": m.weight, "bias": m.bias, "requires_grad": m.weight.requires_grad,
                "pruned": P.is_pruned(m), "y": m(_x(T, (2, 5), 3))}
    same(scenario)


def test_is_pruned_looks_at_submodules():
    def scenario(T):
        P = T.nn.utils.prune
        net = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.ReLU(),
                              T.nn.Sequential(T.nn.Linear(4, 2)))
        before = P.is_pruned(net)
        P.identity(net[2][0], "bias")
        return before, P.is_pruned(net), P.is_pruned(net[0]), P.is_pruned(net[2])
    same(scenario)


def test_repr_of_a_pruned_model_is_unchanged():
    def scenario(T):
        P = T.nn.utils.prune
        net = T.nn.Sequential(T.nn.Conv2d(1, 2, 3), T.nn.Flatten(), T.nn.Linear(8, 2))
        P.l1_unstructured(net[0], "weight", amount=3)
        P.random_structured(net[2], "weight", amount=1, dim=0)
        return repr(net), str(net[2])
    same(scenario)


def test_global_unstructured():
    def scenario(T):
        P = T.nn.utils.prune
        T.manual_seed(2)
        a, b = _linear(T, 5, 4, 0), _linear(T, 4, 3, 7)
        P.l1_unstructured(a, "bias", amount=1)      # an earlier mask is respected
        params = ((a, "weight"), (b, "weight"), (a, "bias"))
        first = P.global_unstructured(params, pruning_method=P.L1Unstructured, amount=12)
        masks = [a.weight_mask.clone(), b.weight_mask.clone(), a.bias_mask.clone()]
        P.global_unstructured([(a, "weight"), (b, "weight")],
                              pruning_method=P.RandomUnstructured, amount=0.3)
        return {"returned": first, "masks": masks, "a": a.weight_mask, "b": b.weight_mask,
                "layouts": [_layout(a), _layout(b)],
                "hooks": [[type(x).__name__ for x in h] if hasattr(h, "__iter__") else
                          type(h).__name__ for h in a._forward_pre_hooks.values()]}
    same(scenario)


def test_global_unstructured_with_importance_scores():
    def scenario(T):
        P = T.nn.utils.prune
        a, b = _linear(T, 3, 2, 0), _linear(T, 2, 2, 4)
        scores = {(a, "weight"): _x(T, (2, 3), 20).abs()}
        P.global_unstructured([(a, "weight"), (b, "weight")],
                              pruning_method=P.L1Unstructured, importance_scores=scores,
                              amount=0.5)
        return a.weight_mask, b.weight_mask, a.weight, b.weight
    same(scenario)


def test_importance_scores_decide_the_mask():
    def scenario(T):
        P = T.nn.utils.prune
        m = _conv(T)
        P.l1_unstructured(m, "bias", amount=2, importance_scores=_x(T, (6,), 30))
        P.ln_structured(m, "weight", amount=2, n=2, dim=0,
                        importance_scores=_x(T, (6, 3, 3, 3), 31))
        return m.bias_mask, m.weight_mask, m.weight
    same(scenario)


def test_method_objects_used_directly():
    def scenario(T):
        P = T.nn.utils.prune
        T.manual_seed(8)
        t = _x(T, (4, 6), 1)
        first, second = P.RandomUnstructured(0.5), P.Identity()
        first._tensor_name = second._tensor_name = "w"
        cont = P.PruningContainer(first)
        cont.add_pruning_method(second)
        cont.add_pruning_method(None)
        return {"random": P.RandomUnstructured(amount=0.4).prune(T.arange(10.)),
                "l1": P.L1Unstructured(3).prune(t),
                "l1_scores": P.L1Unstructured(3).prune(t, importance_scores=-t),
                "l1_default": P.L1Unstructured(0.5).prune(t, default_mask=(t > 0).float()),
                "ln": P.LnStructured(2, n=1, dim=1).prune(t),
                "rs": P.RandomStructured(1, dim=0).compute_mask(t, T.ones_like(t)),
                "custom": P.CustomFromMask(t > 0.5).prune(t),
                "identity": P.Identity().prune(t),
                "types": [P.Identity.PRUNING_TYPE, P.RandomUnstructured.PRUNING_TYPE,
                          P.L1Unstructured.PRUNING_TYPE, P.RandomStructured.PRUNING_TYPE,
                          P.LnStructured.PRUNING_TYPE, P.CustomFromMask.PRUNING_TYPE],
                "attrs": [P.LnStructured(0.5, 2).dim, P.LnStructured(0.5, 2).n,
                          P.RandomStructured(3).amount],
                "container": [len(cont), [type(x).__name__ for x in cont],
                              type(cont[1]).__name__, cont._tensor_name,
                              len(P.PruningContainer(cont))],
                "container_errors": [catch(P.PruningContainer, first, second),
                                     catch(P.PruningContainer, [first]),
                                     len(P.PruningContainer())],
                "abstract": catch(P.BasePruningMethod),
                "subclasses": [issubclass(c, P.BasePruningMethod) for c in
                               (P.PruningContainer, P.Identity, P.CustomFromMask)]}
    same(scenario)


def test_the_class_apply_returns_the_method():
    def scenario(T):
        P = T.nn.utils.prune
        m = _linear(T)
        first = P.L1Unstructured.apply(m, "weight", amount=3)
        second = P.LnStructured.apply(m, "weight", 1, 2, 0)
        hook = list(m._forward_pre_hooks.values())[0]
        return {"first": type(first).__name__, "amount": first.amount,
                "name": first._tensor_name, "second": type(second).__name__,
                "is_hook": second is hook, "members": [type(x).__name__ for x in second],
                "mask": m.weight_mask}
    same(scenario)


@pytest.mark.parametrize("amount", [-1, 1.5, -0.1, "a", None, [1], 21, 21.0])
def test_amount_errors(amount):
    def scenario(T):
        P = T.nn.utils.prune
        m = _linear(T)
        err = catch(P.l1_unstructured, m, "weight", amount=amount)
        err_cls = catch(lambda: type(P.RandomUnstructured(amount)).__name__)
        # a failed first pruning leaves the module as it was
        return err, err_cls, _layout(m)
    same(scenario)


@pytest.mark.parametrize("call", [
    lambda P, m: P.ln_structured(m, "weight", amount=5, n=2, dim=0),
    lambda P, m: P.random_structured(m, "weight", amount=1, dim=2),
    lambda P, m: P.random_structured(m, "bias", amount=1, dim=0),
    lambda P, m: P.ln_structured(m, "bias", amount=0.5, n=1, dim=-1),
    lambda P, m: P.l1_unstructured(m, "nope", amount=1),
    lambda P, m: P.remove(m, "weight"),
    lambda P, m: P.l1_unstructured(m, "weight", amount=1, importance_scores=m.bias),
    lambda P, m: P.custom_from_mask(m, "weight", mask=m.bias > 0),
    lambda P, m: P.global_unstructured(5, pruning_method=P.L1Unstructured, amount=1),
    lambda P, m: P.global_unstructured([(m, "weight")], pruning_method=P.L1Unstructured,
                                       importance_scores=[1], amount=1),
    lambda P, m: P.global_unstructured([(m, "weight")], pruning_method=P.LnStructured,
                                       amount=1, n=2),
    lambda P, m: P.global_unstructured([(m, "weight")], pruning_method=P.L1Unstructured,
                                       amount=30),
    lambda P, m: P.L1Unstructured(1).prune(m.weight, importance_scores=m.bias),
])
def test_errors(call):
    def scenario(T):
        P = T.nn.utils.prune
        m = _linear(T)
        return catch(call, P, m), _layout(m)
    same(scenario)


def test_container_errors():
    def scenario(T):
        P = T.nn.utils.prune
        m = _linear(T)
        P.l1_unstructured(m, "weight", amount=1)
        P.l1_unstructured(m, "weight", amount=1)
        container = list(m._forward_pre_hooks.values())[0]
        other = P.Identity()
        other._tensor_name = "bias"
        wrong = catch(container.add_pruning_method, other)
        not_method = catch(container.add_pruning_method, 3)
        return (wrong[0], wrong[1], "Can only add pruning methods acting on the parameter "
                "named 'weight' to PruningContainer" in wrong[2],
                wrong[2].endswith("Found 'bias'"), not_method, len(container))
    same(scenario)


def test_a_failed_second_pruning_keeps_the_first():
    def scenario(T):
        P = T.nn.utils.prune
        m = _linear(T)
        P.l1_unstructured(m, "weight", amount=4)
        err = catch(P.l1_unstructured, m, "weight", amount=30)
        return err, _layout(m), m.weight_mask
    same(scenario)


def test_state_dict_round_trip_between_pruned_models():
    def scenario(T):
        P = T.nn.utils.prune
        src = _linear(T)
        P.l1_unstructured(src, "weight", amount=8)
        dst = T.nn.Linear(5, 4)
        P.identity(dst, "weight")
        result = dst.load_state_dict(src.state_dict())
        return (list(result.missing_keys), list(result.unexpected_keys), dst.weight_mask,
                dst(_x(T, (2, 5), 1)), catch(T.nn.Linear(5, 4).load_state_dict,
                                             src.state_dict()))
    same(scenario)


def test_training_a_pruned_linear():
    def scenario(T):
        P = T.nn.utils.prune
        T.manual_seed(4)
        net = T.nn.Sequential(_linear(T, 6, 8, 0), T.nn.Tanh(), _linear(T, 8, 2, 2))
        P.random_unstructured(net[0], "weight", amount=0.5)
        P.ln_structured(net[2], "weight", amount=3, n=2, dim=1)
        opt = T.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
        x, y = _x(T, (10, 6), 5), _x(T, (10, 2), 6)
        losses, grads = [], []
        for _ in range(4):
            opt.zero_grad()
            loss = T.nn.functional.mse_loss(net(x), y)
            loss.backward()
            grads.append(net[0].weight_orig.grad.clone())
            opt.step()
            losses.append(loss.item())
        P.remove(net[0], "weight")
        return {"losses": losses, "grads": grads, "w0": net[0].weight,
                "w2": net[2].weight, "orig2": net[2].weight_orig,
                "params": [n for n, _ in net.named_parameters()]}
    same(scenario, rtol=1e-4, atol=1e-5)
