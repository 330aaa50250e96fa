"""torch.optim.swa_utils against torch: AveragedModel (and its averaging functions, integer and float64 buffers), update_bn and SWALR.
"""
import numpy as np
import pytest
from differential import catch, same, warnings_of


def case_id(case):
    return ",".join(f"{k}={v}" for k, v in case.items()) or "defaults"


# ----------------------------------------------------------------------------- swa_utils
def _net(T, seed):
    T.manual_seed(seed)
    net = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.BatchNorm1d(4), T.nn.ReLU(),
                          T.nn.Linear(4, 2))
    rng = np.random.default_rng(seed)
    with T.no_grad():
        for p in net.parameters():
            p.copy_(T.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    return net


AVERAGING = {
    "swa": lambda su: {},
    "ema_multi": lambda su: dict(multi_avg_fn=su.get_ema_multi_avg_fn(0.9)),
    "ema": lambda su: dict(avg_fn=su.get_ema_avg_fn(0.75)),
    "swa_fn": lambda su: dict(avg_fn=su.get_swa_avg_fn()),
    "swa_multi": lambda su: dict(multi_avg_fn=su.get_swa_multi_avg_fn()),
    "custom": lambda su: dict(avg_fn=lambda avg, cur, n: avg * 0.5 + cur * 0.5 + n),
}


@pytest.mark.parametrize("use_buffers", [False, True])
@pytest.mark.parametrize("how", sorted(AVERAGING))
def test_averaged_model(how, use_buffers):
    batches = [np.random.default_rng(5 + i).standard_normal((6, 3)).astype(np.float32)
               for i in range(4)]

    def scenario(T):
        rng = np.random.default_rng(8)
        from importlib import import_module
        su = import_module(T.__name__ + ".optim.swa_utils")
        net = _net(T, 0)
        avg = su.AveragedModel(net, use_buffers=use_buffers, **AVERAGING[how](su))
        seen = [avg.n_averaged.clone()]
        for i, x in enumerate(batches):
            # new weights (the same under both) and batch-norm statistics from a batch
            with T.no_grad():
                for p in net.parameters():
                    p.copy_(T.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
            net(T.tensor(x))
            # (the SWA multi-tensor function refuses the integer batch count, as torch's)
            seen += [catch(avg.update_parameters, net), avg.n_averaged.clone()]
        state = avg.state_dict()
        avg.eval()
        out = avg(T.tensor(batches[0]))
        return seen, dict(state), out.detach(), str(avg), avg.module is not net
    same(scenario)


def test_averaged_model_errors_and_mismatched_models():
    def scenario(T):
        su = T.optim.swa_utils
        net = T.nn.Sequential(T.nn.BatchNorm1d(3))
        out = [catch(su.AveragedModel, net, avg_fn=su.get_swa_avg_fn(),
                     multi_avg_fn=su.get_swa_multi_avg_fn()),
               catch(su.get_ema_multi_avg_fn, 1.5), catch(su.get_ema_avg_fn, -0.1)]
        avg = su.AveragedModel(net)
        # more buffers in the model than in the average: zip(strict) in the buffer copy
        out.append(catch(avg.update_parameters,
                         T.nn.Sequential(T.nn.BatchNorm1d(3), T.nn.BatchNorm1d(3))))
        out.append(avg.n_averaged)
        # fewer parameters in the model: the extra averaged ones are left alone
        two = su.AveragedModel(T.nn.Sequential(T.nn.Linear(2, 2), T.nn.Linear(2, 1)))
        kept = two.module[1].weight.detach().clone()
        out += [catch(two.update_parameters, T.nn.Linear(2, 2)), two.n_averaged,
                T.equal(kept, two.module[1].weight.detach())]
        return out
    same(scenario)


def test_averaging_functions():
    rng = np.random.default_rng(6)
    a, c = rng.standard_normal((2, 1000)).astype(np.float32)
    b64 = rng.standard_normal(50)

    def scenario(T):
        su = T.optim.swa_utils
        out = []
        for n in (1, 2, 5, T.tensor(3)):
            x, y = [T.tensor(a)], [T.tensor(c)]
            su.get_swa_multi_avg_fn()(x, y, n)
            out += [x[0], su.get_swa_avg_fn()(T.tensor(a), T.tensor(c), n)]
        for decay in (0.9, 0.999, 0.3):
            x = [T.tensor(a)]
            su.get_ema_multi_avg_fn(decay)(x, [T.tensor(c)], 4)
            out += [*x, su.get_ema_avg_fn(decay)(T.tensor(a), T.tensor(c), 4)]
        return out
    same(scenario, rtol=0, atol=0)

    def float64(T):
        # float64 lerps: torch fuses the multiply-add, ember rounds twice (an ulp apart)
        x = [T.tensor(b64)]
        T.optim.swa_utils.get_ema_multi_avg_fn(0.9)(x, [T.tensor(b64[::-1].copy())], 4)
        return x
    same(float64, rtol=1e-15, atol=1e-15)


def test_averaging_functions_on_integer_tensors():
    def scenario(T):
        su = T.optim.swa_utils
        ints = lambda: [T.tensor([1, 5])]           # noqa: E731
        cur = [T.tensor([4, 9])]
        out = []
        for n in (3, T.tensor(3)):
            x = ints()
            out += [catch(su.get_swa_multi_avg_fn(), x, cur, n), x,
                    su.get_swa_avg_fn()(ints()[0], cur[0], n)]
        x = ints()
        out += [catch(su.get_ema_multi_avg_fn(0.5), x, cur, 3), x,
                su.get_ema_avg_fn(0.5)(ints()[0], cur[0], 3)]
        return out
    same(scenario)


def test_averaged_model_integer_and_float64_buffers():
    # the default average of an integer buffer truncates, as copy_ does
    def scenario(T):
        class M(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = T.nn.Parameter(T.tensor([1.0, 2.0]))
                self.register_buffer("b", T.tensor([1, 4]))
                self.register_buffer("f", T.tensor([1.0, 4.0], dtype=T.float64))
        m = M()
        avg = T.optim.swa_utils.AveragedModel(m, use_buffers=True)
        avg.update_parameters(m)
        out = []
        for v in (10, 20, 7):
            with T.no_grad():
                for t in (m.b, m.f, m.w):
                    t.fill_(v)
            avg.update_parameters(m)
            out.append(dict(avg.state_dict()))
        return out
    same(scenario, rtol=0, atol=0)


def _loader_batches(T, kind):
    rng = np.random.default_rng(7)
    xs = [T.tensor(rng.standard_normal((5, 3)).astype(np.float32)) for _ in range(3)]
    if kind == "tensor":
        return xs
    if kind == "tuple":
        return [(x, T.zeros(5)) for x in xs]
    if kind == "list":
        return [[x, 1] for x in xs]
    return [{"x": x} for x in xs]


class _DictInput:
    """A model taking the loader's dict batches (the factory makes the module class for T)."""

    @staticmethod
    def make(T, net):
        class Wrapper(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.net = net

            def forward(self, batch):
                return self.net(batch["x"])
        return Wrapper()


@pytest.mark.parametrize("kind", ["tensor", "tuple", "list", "dict"])
def test_update_bn(kind):
    def scenario(T):
        net = _net(T, 1)
        net[1].momentum = 0.3
        model = _DictInput.make(T, net) if kind == "dict" else net
        model.eval()
        T.optim.swa_utils.update_bn(_loader_batches(T, kind), model)
        bn = net[1]
        return (bn.running_mean, bn.running_var, bn.num_batches_tracked, bn.momentum,
                model.training, net[1].training)
    same(scenario)


def test_update_bn_without_batch_norm_does_not_run_the_model():
    def scenario(T):
        calls = []
        model = T.nn.Linear(3, 2)
        model.register_forward_hook(lambda *a: calls.append(1))
        result = T.optim.swa_utils.update_bn(_loader_batches(T, "dict"), model)
        return result, calls
    same(scenario)


SWALR_CASES = [dict(swa_lr=0.05), dict(swa_lr=0.05, anneal_epochs=3),
               dict(swa_lr=[0.05, 0.2], anneal_epochs=4, anneal_strategy="linear"),
               dict(swa_lr=0.01, anneal_epochs=0), dict(swa_lr=0.02, anneal_epochs=1,
                                                         anneal_strategy="linear")]


@pytest.mark.parametrize("kw", SWALR_CASES, ids=case_id)
def test_swalr_learning_rates(kw):
    def scenario(T):
        p, q = T.nn.Parameter(T.ones(2)), T.nn.Parameter(T.ones(2))
        opt = T.optim.SGD([{"params": [p]}, {"params": [q], "lr": 0.3}], lr=0.1)
        sched = T.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
        swa = T.optim.swa_utils.SWALR(opt, **kw)
        lrs = [swa.get_last_lr()]
        for epoch in range(12):
            opt.step()
            if 3 <= epoch < 6:
                sched.step()        # another scheduler changes the lr between SWALR's steps
            else:
                swa.step()
            lrs.append([g["lr"] for g in opt.param_groups])
        return lrs, swa.state_dict(), [g["swa_lr"] for g in opt.param_groups]
    same(scenario, rtol=0, atol=0)


def test_swalr_errors_and_warnings():
    def scenario(T):
        SWALR = T.optim.swa_utils.SWALR
        opt = T.optim.SGD([T.nn.Parameter(T.ones(2))], lr=0.1)
        out = [catch(SWALR, opt, swa_lr=0.05, anneal_strategy="foo"),
               catch(SWALR, opt, swa_lr=0.05, anneal_epochs=-1),
               catch(SWALR, opt, swa_lr=0.05, anneal_epochs=1.5),
               catch(SWALR, opt, swa_lr=[0.05, 0.1]),
               catch(SWALR, opt, swa_lr=[1, 2], anneal_strategy="foo"),
               catch(SWALR, opt, swa_lr=0.3, anneal_strategy="foo", anneal_epochs=-1),
               opt.param_groups[0]["swa_lr"]]
        swa = SWALR(opt, swa_lr=0.05, anneal_epochs=2)
        out.append(warnings_of(swa.get_lr))
        out.append(warnings_of(swa.step))      # before any optimizer step
        restored = SWALR(T.optim.SGD([T.nn.Parameter(T.ones(2))], lr=0.1), swa_lr=0.01)
        restored.load_state_dict(swa.state_dict())
        out.append((restored.state_dict(), restored.anneal_func(0.5)))
        return out
    same(scenario)
