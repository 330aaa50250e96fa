"""Optimizer flags against PyTorch on the CPU: fused=True (the ordinary update, same results),
capturable=True (PyTorch's assertion at step), differentiable=True (the update in the graph),
and the flags in state_dict / load_state_dict."""
import pytest

import ember
from differential import same, catch

W0 = [0.5, -1.0, 2.0, 0.25]
SCALE = [1.0, 2.0, 3.0, 0.5]


def _train(T, name, steps=3, dtype="float32", **kw):
    """A few steps of an optimizer over one parameter; everything it observes."""
    p = T.nn.Parameter(T.tensor(W0, dtype=getattr(T, dtype)))
    opt = getattr(T.optim, name)([p], **kw)
    for i in range(steps):
        opt.zero_grad()
        ((p - i) ** 2 * T.tensor(SCALE, dtype=p.dtype)).sum().backward()
        opt.step()
    return p.detach(), opt.state_dict()


# ------------------------------------------------------------------ fused=True
FUSED = [("SGD", dict(lr=0.1)),
         ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1)),
         ("SGD", dict(lr=0.1, momentum=0.5, dampening=0.2, maximize=True)),
         ("Adam", dict(lr=0.1)),
         ("Adam", dict(lr=0.05, amsgrad=True, weight_decay=0.1, maximize=True)),
         ("AdamW", dict(lr=0.1, amsgrad=True)),
         ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5))]


@pytest.mark.parametrize("name,kw", FUSED)
def test_fused_runs_the_same_update(name, kw):
    same(lambda T: _train(T, name, fused=True, **kw), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adagrad"])
def test_fused_construction_errors(name):
    def scenario(T):
        cls = getattr(T.optim, name)
        p = T.nn.Parameter(T.ones(2))
        return [catch(cls, [p], lr=0.1, fused=True, differentiable=True),
                catch(cls, [p], lr=0.1, fused=True, foreach=True),
                catch(cls, [p], lr=0.1, fused=True, foreach=True, differentiable=True),
                catch(cls, [], lr=0.1, fused=True, foreach=True),
                catch(cls, [p], lr=-1.0, fused=True, foreach=True),
                cls([p], lr=0.1, fused=False).param_groups[0]["fused"]]
    same(scenario)


@pytest.mark.parametrize("name", ["RMSprop", "Adadelta", "Adamax", "NAdam", "RAdam"])
def test_fused_is_not_an_option_of(name):
    same(lambda T: catch(getattr(T.optim, name), [T.nn.Parameter(T.ones(2))], fused=True))


@pytest.mark.parametrize("name", ["Adam", "Adagrad"])
def test_fused_refuses_complex_params_at_step(name):
    def scenario(T):
        real = T.nn.Parameter(T.ones(3))
        cplx = T.nn.Parameter(T.zeros(3, dtype=T.complex64))
        opt = getattr(T.optim, name)([real, cplx], lr=0.1, fused=True)
        real.grad = T.ones(3)
        cplx.grad = T.ones(3, dtype=T.complex64)
        return catch(opt.step), opt.state_dict()["state"], real.detach()
    same(scenario)


def test_fused_step_count_is_float32_under_float64_default():
    def scenario(T):
        previous = T.get_default_dtype()
        T.set_default_dtype(T.float64)
        try:
            out = []
            for name in ("Adam", "Adagrad", "SGD"):
                for fused in (True, None):
                    p = T.nn.Parameter(T.ones(2))
                    opt = getattr(T.optim, name)([p], lr=0.1, fused=fused)
                    p.grad = T.ones(2)
                    opt.step()
                    out.append(opt.state_dict()["state"])
            return out
        finally:
            T.set_default_dtype(previous)
    same(scenario)


# ------------------------------------------------------------------ capturable=True
CAPTURABLE = ["Adam", "AdamW", "RMSprop", "Adadelta", "Adamax", "NAdam", "RAdam"]


@pytest.mark.parametrize("name", CAPTURABLE)
@pytest.mark.parametrize("foreach", [None, True])
def test_capturable_asserts_on_cpu_after_making_the_state(name, foreach):
    def scenario(T):
        ps = [T.nn.Parameter(T.tensor(W0)), T.nn.Parameter(T.ones(2))]
        opt = getattr(T.optim, name)(ps, lr=0.1, capturable=True, foreach=foreach)
        for p in ps:
            p.grad = T.ones_like(p)
        return catch(opt.step), opt.state_dict(), [p.detach() for p in ps]
    same(scenario)


def test_capturable_without_grads_steps_nothing():
    def scenario(T):
        p = T.nn.Parameter(T.ones(2))
        opt = T.optim.Adam([p], lr=0.1, capturable=True)
        return opt.step(), opt.state_dict()
    same(scenario)


# ------------------------------------------------------------------ differentiable=True
def _meta(T, name, kw, tensor_lr, steps=3):
    """Unrolled optimisation of a non-leaf parameter; the final loss's gradients reach the
    initial weights (and a tensor learning rate) through every update."""
    w = T.tensor(W0, dtype=T.float64, requires_grad=True)
    lr = T.tensor(0.1, dtype=T.float64, requires_grad=True) if tensor_lr else 0.1
    p = w * 1.0
    opt = getattr(T.optim, name)([p], lr=lr, differentiable=True, **kw)
    scale = T.tensor(SCALE, dtype=T.float64)
    for i in range(steps):
        # the gradient of ((p - i) ** 2 * scale).sum(), as autograd.grad(create_graph=True)
        # gives it: a function of p in the graph
        p.grad = 2 * (p - i) * scale
        opt.step()
    # some of these graphs can't be walked back: a later step changed in place a buffer
    # that an earlier one saved (amsgrad's maximum, SGD's momentum times a tensor lr); the
    # error must then be PyTorch's, versions included
    error = catch((p ** 3).sum().backward)
    return (p, error, w.grad, lr.grad if tensor_lr else None,
            opt.state_dict()["state"].get(0), opt.state_dict()["param_groups"][0]["differentiable"])


DIFFERENTIABLE = [("SGD", dict()),
                  ("SGD", dict(momentum=0.9)),
                  ("SGD", dict(momentum=0.9, nesterov=True, weight_decay=0.1)),
                  ("SGD", dict(momentum=0.5, dampening=0.3, maximize=True)),
                  ("Adam", dict()),
                  ("Adam", dict(amsgrad=True, weight_decay=0.1)),
                  ("Adam", dict(maximize=True, betas=(0.8, 0.9))),
                  ("AdamW", dict(weight_decay=0.1)),
                  ("AdamW", dict(amsgrad=True, weight_decay=0.2))]


@pytest.mark.parametrize("name,kw", DIFFERENTIABLE)
@pytest.mark.parametrize("tensor_lr", [False, True])
def test_differentiable_step_matches_torch_gradients(name, kw, tensor_lr):
    # Adam's bias corrections come from the float32 step count, in both libraries
    same(lambda T: _meta(T, name, kw, tensor_lr), rtol=1e-6, atol=1e-9)


def test_differentiable_step_records_the_update_node():
    def scenario(T):
        w = T.ones(2, requires_grad=True)
        p = w * 2
        opt = T.optim.SGD([p], lr=0.1, differentiable=True)
        p.grad = T.ones(2)
        opt.step()
        return type(p.grad_fn).__name__, p.requires_grad, T.is_grad_enabled()
    same(scenario)


@pytest.mark.parametrize("name,kw", [("SGD", dict(momentum=0.9)), ("Adam", dict())])
def test_differentiable_step_on_a_leaf_raises_like_torch(name, kw):
    def scenario(T):
        p = T.nn.Parameter(T.tensor(W0))
        opt = getattr(T.optim, name)([p], lr=0.1, differentiable=True, **kw)
        p.grad = T.ones(4)
        return catch(opt.step), opt.state_dict(), p.detach()
    same(scenario)


def test_non_differentiable_step_runs_without_grad_mode():
    def scenario(T):
        seen = []
        w = T.ones(2, requires_grad=True)
        p = T.nn.Parameter(T.ones(2))
        opt = T.optim.SGD([p], lr=0.1)
        opt.register_step_pre_hook(lambda *a: seen.append(T.is_grad_enabled()))
        p.grad = (w * 3)
        opt.step()
        return p.detach(), p.grad_fn is None, seen
    same(scenario)


@pytest.mark.parametrize("name", ["RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam",
                                  "RAdam"])
def test_differentiable_not_written_for_the_others(name):
    # PyTorch accepts these; ember says plainly that it does not have them
    with pytest.raises(NotImplementedError, match=f"{name}: differentiable=True is not "
                                                  f"implemented"):
        getattr(ember.optim, name)([ember.ones(2).requires_grad_()], differentiable=True)


# ------------------------------------------------------------------ state_dict
ALL = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam"]
FLAGS = {"SGD": dict(fused=True), "Adam": dict(fused=True, capturable=True),
         "AdamW": dict(differentiable=True), "RMSprop": dict(capturable=True),
         "Adagrad": dict(fused=True), "Adadelta": dict(capturable=True),
         "Adamax": dict(capturable=True, foreach=True), "NAdam": dict(capturable=True),
         "RAdam": dict(capturable=True)}
DROPPED = ["fused", "capturable", "differentiable", "foreach", "maximize",
           "decoupled_weight_decay", "amsgrad", "nesterov", "centered"]


@pytest.mark.parametrize("name", ALL)
def test_flags_in_state_dict_and_back(name):
    def scenario(T):
        cls = getattr(T.optim, name)
        p = T.nn.Parameter(T.ones(2))
        opt = cls([p], lr=0.1, **FLAGS[name])
        saved = opt.state_dict()
        other = cls([T.nn.Parameter(T.ones(2))], lr=0.5)
        other.load_state_dict(saved)
        # an old state_dict without the flags: each optimizer fills in its own defaults
        old = cls([T.nn.Parameter(T.ones(2))], lr=0.1).state_dict()
        for key in DROPPED:
            old["param_groups"][0].pop(key, None)
        fresh = cls([T.nn.Parameter(T.ones(2))], lr=0.3)
        fresh.load_state_dict(old)
        return (saved["param_groups"], other.state_dict()["param_groups"],
                fresh.state_dict()["param_groups"], repr(other))
    same(scenario)
