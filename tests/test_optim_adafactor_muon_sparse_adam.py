"""Adafactor, Muon and SparseAdam against torch.optim (swa_utils: test_optim_swa_utils.py).

Exactness: Muon's Newton-Schulz iteration matches torch bit for bit on small matrices (checked
alone below; on large ones torch's float32 sums inside its bfloat16 matmuls can round to the
other bfloat16 value); over 20 steps Muon and Adafactor match to float32 rounding only: ember's
add-with-alpha rounds twice where torch fuses (see test_optim_bitexact.py), and Adafactor's
norms are reductions whose float32 order differs from torch's. The SWA/EMA averages, which are
lerps, are compared bit for bit; SWALR's learning rates too.
"""
import numpy as np
import pytest
import torch

import ember
from differential import catch, same, warnings_of

STEPS = 20


def training(name, kw, shapes, steps=STEPS, seed=0, tensor_lr=False):
    """A scenario: `steps` steps of the optimizer from the same start on the same gradients;
    observes the parameters and every state tensor."""
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in shapes] for _ in range(steps)]

    def scenario(T):
        params = [T.tensor(a.copy(), requires_grad=True) for a in init]
        options = dict(kw)
        if tensor_lr:
            options["lr"] = T.tensor(options["lr"])
        opt = getattr(T.optim, name)(params, **options)
        for step_grads in grads:
            for p, g in zip(params, step_grads):
                p.grad = T.tensor(g.copy())
            opt.step()
        state = [sorted(opt.state[p].items()) for p in params]
        return [p.detach() for p in params], state
    return scenario


def case_id(case):
    return ",".join(f"{k}={v}" for k, v in case.items()) or "defaults"


# ----------------------------------------------------------------------------- Adafactor
ADAFACTOR_SHAPES = [(16, 12), (7,), (2, 3, 4), ()]
ADAFACTOR = [
    dict(),
    dict(lr=0.05, weight_decay=0.1),
    dict(lr=0.05, maximize=True),
    dict(lr=0.3, beta2_decay=-0.5, eps=(1e-3, 1e-2), d=1.5),
    dict(lr=0.02, eps=(1e-30, 0.0), weight_decay=0.2, maximize=True, foreach=False),
    dict(lr=0.02, weight_decay=0.1, foreach=True),
    dict(beta2_decay=0.0, foreach=None),
]


@pytest.mark.parametrize("kw", ADAFACTOR, ids=case_id)
def test_adafactor_matches_torch_to_rounding(kw):
    same(training("Adafactor", kw, ADAFACTOR_SHAPES))


def test_adafactor_tensor_lr():
    same(training("Adafactor", dict(lr=0.05, weight_decay=0.1), ADAFACTOR_SHAPES,
                  tensor_lr=True))


def test_adafactor_float64_state_and_step_dtype():
    def scenario(T):
        p = T.nn.Parameter(T.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=T.float64))
        opt = T.optim.Adafactor([p], lr=0.1)
        for i in range(3):
            p.grad = T.tensor([[1.0, -2.0], [0.5, i + 1.0]], dtype=T.float64)
            opt.step()
        return p.detach(), opt.state_dict()
    same(scenario, rtol=1e-12, atol=1e-14)


def test_adafactor_errors():
    def scenario(T):
        p = T.nn.Parameter(T.ones(3, 2))
        A = T.optim.Adafactor
        out = [catch(A, [p], **kw) for kw in (
            dict(lr=-1), dict(lr=T.tensor([1.0, 2.0])), dict(lr=T.tensor(-1.0)),
            dict(beta2_decay=0.1), dict(eps=(-1, 1e-3)), dict(eps=(None, -1)),
            dict(d=0.9), dict(weight_decay=-1), dict(lr=-1, beta2_decay=1),
            dict(eps=(-1, -1), d=0), dict(d=0, weight_decay=-1), dict(fused=True),
            dict(differentiable=True), dict(capturable=True))]
        # complex parameters: refused at step, after every parameter's state is made
        real = T.nn.Parameter(T.ones(2))
        cplx = T.nn.Parameter(T.ones(2, dtype=T.complex64))
        opt = A([real, cplx])
        real.grad, cplx.grad = T.ones(2), T.ones(2, dtype=T.complex64)
        out += [catch(opt.step), opt.state_dict(), real.detach()]
        return out
    same(scenario)


# ----------------------------------------------------------------------------- Muon
MUON_SHAPES = [(6, 4), (4, 6), (5, 5), (1, 3)]
MUON = [
    dict(),
    dict(lr=0.02, nesterov=False, weight_decay=0.0),
    dict(lr=0.05, momentum=0.5, adjust_lr_fn="match_rms_adamw", ns_steps=3, eps=1e-3),
    dict(lr=0.05, ns_coefficients=(2.0, -1.5, 0.5), adjust_lr_fn="original",
         weight_decay=0.3),
    dict(lr=0.01, momentum=0.0, ns_steps=0),
]


@pytest.mark.parametrize("kw", MUON, ids=case_id)
def test_muon_matches_torch_to_rounding(kw):
    same(training("Muon", kw, MUON_SHAPES))


def test_muon_tensor_lr():
    same(training("Muon", dict(lr=0.05), MUON_SHAPES, tensor_lr=True))


@pytest.mark.parametrize("ns_steps", [1, 5])
@pytest.mark.parametrize("seed", range(4))
def test_muon_orthogonalization_is_bit_exact(ns_steps, seed):
    # from zero weights with lr=1 and no decay, one step leaves exactly -adjusted_lr * NS(g)
    # (momentum=0: the buffer is the gradient), so the bfloat16 iteration shows bit for bit
    rng = np.random.default_rng(seed)
    grads = [rng.standard_normal(s).astype(np.float32) for s in [(8, 5), (5, 8), (3, 3)]]

    def scenario(T):
        params = [T.zeros(g.shape, requires_grad=True) for g in grads]
        opt = T.optim.Muon(params, lr=1.0, weight_decay=0.0, momentum=0.0,
                           ns_steps=ns_steps)
        for p, g in zip(params, grads):
            p.grad = T.tensor(g)
        opt.step()
        return [p.detach() for p in params]
    same(scenario, rtol=0, atol=0)


def test_muon_errors():
    def scenario(T):
        M = T.optim.Muon
        p = T.nn.Parameter(T.ones(4, 3))
        out = [catch(M, [p], **kw) for kw in (
            dict(lr=-1), dict(lr=T.tensor([1.0, 2.0])), dict(weight_decay=-1),
            dict(momentum=-1), dict(adjust_lr_fn="foo"), dict(lr=-1, momentum=-1),
            dict(foreach=True), dict(maximize=True))]
        out += [catch(M, [T.nn.Parameter(T.ones(3))]),
                catch(M, [p, T.nn.Parameter(T.ones(2, 3, 4))])]
        # errors at step: where the state and parameter stand when they are raised
        for kw in (dict(ns_steps=100), dict(ns_coefficients=(1, 2)),
                   dict(ns_steps=101, ns_coefficients=(1, 2)),
                   dict(ns_steps=1.5, ns_coefficients=(1, 2)), dict(ns_steps=1.5)):
            q = T.nn.Parameter(T.ones(4, 3))
            opt = M([q], **kw)
            q.grad = T.ones(4, 3)
            out += [catch(opt.step), opt.state_dict()["state"], q.detach()]
        # a 1-D parameter slipped in through add_param_group
        q, v = T.nn.Parameter(T.ones(4, 3)), T.nn.Parameter(T.ones(3))
        opt = M([q])
        opt.add_param_group({"params": [v]})
        q.grad, v.grad = T.ones(4, 3), T.ones(3)
        out += [catch(opt.step), opt.state_dict()["state"], q.detach()]
        c = T.nn.Parameter(T.ones(4, 3, dtype=T.complex64))
        opt = M([c])
        c.grad = T.ones(4, 3, dtype=T.complex64)
        out.append(catch(opt.step))
        return out
    same(scenario)


# ----------------------------------------------------------------------------- SparseAdam
def test_sparse_adam_refuses_dense_gradients():
    # ember has no sparse tensors: every gradient is dense, and refused as torch refuses it
    def scenario(T):
        p = T.nn.Parameter(T.ones(3))
        opt = T.optim.SparseAdam([p], lr=0.1)
        no_grad_step = opt.step()
        p.grad = T.ones(3)
        return no_grad_step, catch(opt.step), opt.state_dict(), p.detach(), str(opt)
    same(scenario)


def test_sparse_adam_errors_and_repr():
    def scenario(T):
        S = T.optim.SparseAdam
        p = T.nn.Parameter(T.ones(2))
        out = [catch(S, [p], **kw) for kw in (
            dict(lr=-1), dict(lr=T.tensor(-1.0)), dict(lr=T.tensor([1.0, 2.0])),
            dict(eps=0), dict(eps=-1), dict(lr=-1, eps=-1), dict(betas=(1.0, 0.5)),
            dict(betas=(0.5, 1.0)), dict(betas=(-0.1, 0.5)), dict(foreach=True))]
        out.append(str(S([p], lr=T.tensor(0.1), betas=(0.8, 0.9), maximize=True)))
        return out
    same(scenario)


# ----------------------------------------------------------------------------- all three
NEW = [("Adafactor", dict(lr=0.05, weight_decay=0.1), [(4, 3), (5,)]),
       ("Muon", dict(lr=0.05), [(4, 3), (3, 5)])]


@pytest.mark.parametrize("name,kw,shapes", NEW, ids=[n for n, _, _ in NEW])
def test_state_dict_round_trip(name, kw, shapes):
    """3 steps, a state_dict loaded into a fresh optimizer (after a deepcopy of the dict),
    3 more steps there: as torch."""
    rng = np.random.default_rng(3)
    init = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in shapes] for _ in range(6)]

    def scenario(T):
        import copy
        params = [T.nn.Parameter(T.tensor(a)) for a in init]
        opt = getattr(T.optim, name)(params, **kw)
        for gs in grads[:3]:
            for p, g in zip(params, gs):
                p.grad = T.tensor(g)
            opt.step()
        saved = copy.deepcopy(opt.state_dict())
        fresh = getattr(T.optim, name)(params, lr=0.5)
        fresh.load_state_dict(saved)
        for gs in grads[3:]:
            for p, g in zip(params, gs):
                p.grad = T.tensor(g)
            fresh.step()
        return saved, fresh.state_dict(), [p.detach() for p in params], str(fresh)
    same(scenario)


@pytest.mark.parametrize("name,kw,shapes", NEW, ids=[n for n, _, _ in NEW])
def test_loads_a_state_dict_made_by_torch(name, kw, shapes):
    """torch's weights and state_dict after 2 steps, converted to ember, loaded into a fresh
    ember optimizer: its next 2 steps agree with torch's."""
    rng = np.random.default_rng(4)
    init = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in shapes] for _ in range(4)]

    def steps(T, params, opt, todo):
        for gs in todo:
            for p, g in zip(params, gs):
                p.grad = T.tensor(g)
            opt.step()

    params = [torch.nn.Parameter(torch.tensor(a)) for a in init]
    opt = getattr(torch.optim, name)(params, **kw)
    steps(torch, params, opt, grads[:2])
    sd = opt.state_dict()
    converted = {"state": {k: {n: ember.tensor(v.numpy()) for n, v in s.items()}
                           for k, s in sd["state"].items()},
                 "param_groups": sd["param_groups"]}
    mine = [ember.nn.Parameter(ember.tensor(p.detach().numpy())) for p in params]
    steps(torch, params, opt, grads[2:])
    ember_opt = getattr(ember.optim, name)(mine, lr=0.5)
    ember_opt.load_state_dict(converted)
    steps(ember, mine, ember_opt, grads[2:])
    for p, q in zip(params, mine):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
    for k, state in opt.state_dict()["state"].items():
        for n, v in state.items():
            np.testing.assert_allclose(ember_opt.state_dict()["state"][k][n].numpy(),
                                       v.numpy(), rtol=1e-5, atol=1e-6)
    assert ember_opt.state_dict()["param_groups"] == opt.state_dict()["param_groups"]


@pytest.mark.parametrize("name", ["Adafactor", "Muon", "SparseAdam"])
def test_param_groups_and_repr(name):
    def scenario(T):
        a, b = T.nn.Parameter(T.ones(3, 2)), T.nn.Parameter(T.full((2, 2), 0.5))
        cls = getattr(T.optim, name)
        opt = cls([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
        opt.add_param_group({"params": [T.nn.Parameter(T.ones(2, 3))], "lr": 0.01})
        if name != "SparseAdam":
            for i, p in enumerate([a, b]):
                p.grad = T.full(p.shape, i + 1.0)
            opt.step()
        named = cls([("w", T.nn.Parameter(T.ones(2, 2)))])
        return (str(opt), opt.state_dict(), [a.detach(), b.detach()],
                catch(opt.add_param_group, {"params": [a]}), named.state_dict(), str(named),
                catch(cls, []), catch(cls, T.ones(2, 2)))
    same(scenario)


def test_exports():
    def scenario(T):
        su = T.optim.swa_utils
        return (sorted(n for n in ("Adafactor", "Muon", "SparseAdam", "swa_utils")
                       if n in T.optim.__all__), sorted(su.__all__))
    same(scenario)
