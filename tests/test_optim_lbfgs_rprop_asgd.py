"""Rprop, ASGD and LBFGS against torch.optim: steps, complex parameters, state dicts, argument errors.
"""
import numpy as np
import pytest
from differential import catch, same, warnings_of


DTYPES = ["float32", "float64"]


def _start(T, dtype, seed=0):
    """Parameters and data of a small least-squares-plus-tanh problem, the same in both."""
    rng = np.random.default_rng(seed)
    dt = getattr(T, dtype)
    w = T.tensor(rng.standard_normal((3, 4)), dtype=dt, requires_grad=True)
    b = T.tensor(rng.standard_normal(3), dtype=dt, requires_grad=True)
    x = T.tensor(rng.standard_normal((6, 4)), dtype=dt)
    y = T.tensor(rng.standard_normal((6, 3)), dtype=dt)
    return [w, b], x, y


def _loss(T, params, x, y):
    w, b = params
    return ((T.tanh(x @ w.t() + b) - y) ** 2).mean() + 0.1 * (w ** 2).sum()


def _state(opt):
    """The state_dict, plus the repr of the optimizer."""
    return [opt.state_dict(), repr(opt)]


# ----------------------------------------------------------------------------- Rprop, ASGD
STEP_CASES = [
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2))),
    ("Rprop", dict(lr=0.02, maximize=True)),
    ("ASGD", dict()),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=5, weight_decay=0.1)),
    ("ASGD", dict(lr=0.05, t0=0, maximize=True)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,kw", STEP_CASES, ids=lambda c: str(c))
def test_optimizer_20_steps(name, kw, dtype):
    def scenario(T):
        params, x, y = _start(T, dtype)
        opt = getattr(T.optim, name)(params, **kw)
        seen = []
        for _ in range(20):
            opt.zero_grad()
            loss = _loss(T, params, x, y)
            loss.backward()
            opt.step()
            seen.append([p.detach().clone() for p in params])
        return seen, _state(opt)
    same(scenario, **({} if dtype == "float32" else dict(rtol=1e-12, atol=1e-14)))


@pytest.mark.parametrize("name", ["Rprop", "ASGD"])
def test_optimizer_complex_params(name):
    def scenario(T):
        rng = np.random.default_rng(1)
        p = T.tensor(rng.standard_normal(5) + 1j * rng.standard_normal(5),
                     dtype=T.complex64, requires_grad=True)
        opt = getattr(T.optim, name)([p], lr=0.1)
        for i in range(5):
            p.grad = T.tensor(rng.standard_normal(5) + 1j * rng.standard_normal(5),
                              dtype=T.complex64)
            opt.step()
        return p.detach(), opt.state_dict()
    same(scenario)


@pytest.mark.parametrize("name", ["Rprop", "ASGD"])
def test_optimizer_state_dict_round_trip(name):
    def scenario(T):
        params, x, y = _start(T, "float64")
        opt = getattr(T.optim, name)(params, lr=0.03)
        for _ in range(3):
            opt.zero_grad()
            _loss(T, params, x, y).backward()
            opt.step()
        saved = opt.state_dict()
        params2 = [p.detach().clone().requires_grad_() for p in params]
        opt2 = getattr(T.optim, name)(params2, lr=0.5)
        opt2.load_state_dict(saved)
        for _ in range(3):
            opt2.zero_grad()
            _loss(T, params2, x, y).backward()
            opt2.step()
        return params2, opt2.state_dict()
    same(scenario, rtol=1e-12, atol=1e-14)


def test_optimizer_argument_errors():
    def scenario(T):
        p = [T.zeros(2, requires_grad=True)]
        return [catch(T.optim.Rprop, p, lr=-1), catch(T.optim.Rprop, p, etas=(1.1, 1.2)),
                catch(T.optim.Rprop, p, etas=(0.5, 0.9)),
                catch(T.optim.ASGD, p, lr=-0.5), catch(T.optim.ASGD, p, weight_decay=-1),
                catch(T.optim.LBFGS, p, lr=-1),
                catch(T.optim.LBFGS, [{"params": p}, {"params": [T.zeros(1)]}]),
                catch(T.optim.Rprop, p, lr=T.tensor([0.1, 0.2]))]
    same(scenario)


@pytest.mark.parametrize("name", ["Rprop", "ASGD"])
@pytest.mark.parametrize("foreach", [False, True])
def test_optimizer_capturable_on_cpu_asserts(name, foreach):
    def scenario(T):
        p = T.ones(3, requires_grad=True)
        p.grad = T.ones(3)
        opt = getattr(T.optim, name)([p], capturable=True, foreach=foreach)
        return catch(opt.step), opt.state_dict()
    same(scenario)


def test_optimizer_state_before_and_after_first_step():
    def scenario(T):
        out = []
        for name in ["Rprop", "ASGD", "LBFGS"]:
            p = T.ones(3, requires_grad=True)
            opt = getattr(T.optim, name)([p])
            before = opt.state_dict()

            def closure():
                opt.zero_grad()
                loss = (p ** 2).sum()
                loss.backward()
                return loss
            out.append([before, opt.step(closure), opt.state_dict(), repr(opt),
                        opt.defaults])
        return out
    same(scenario)


# ----------------------------------------------------------------------------- LBFGS
LBFGS_CASES = [
    dict(),
    dict(lr=0.5, max_iter=5),
    dict(lr=1, max_iter=4, history_size=3),
    dict(line_search_fn="strong_wolfe"),
    dict(line_search_fn="strong_wolfe", max_iter=7, history_size=2),
    dict(line_search_fn="strong_wolfe", lr=0.3, max_iter=3, max_eval=5),
    dict(tolerance_grad=1e-3, tolerance_change=1e-4, max_iter=10),
    dict(tolerance_change=1e-2, line_search_fn="strong_wolfe"),
]


@pytest.mark.parametrize("kw", LBFGS_CASES, ids=str)
def test_lbfgs_20_steps(kw):
    def scenario(T):
        params, x, y = _start(T, "float64")
        opt = T.optim.LBFGS(params, **kw)
        calls = []

        def closure():
            calls.append(1)
            opt.zero_grad()
            loss = _loss(T, params, x, y)
            loss.backward()
            return loss
        seen = []
        for _ in range(20):
            loss = opt.step(closure)
            seen.append([loss, [p.detach().clone() for p in params], len(calls)])
        return seen, _state(opt)
    same(scenario, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_float32_rosenbrock(line_search_fn):
    # the classic banana valley, in float32: the line search brackets and zooms here
    def scenario(T):
        xy = T.tensor([-1.5, 2.0], requires_grad=True)
        opt = T.optim.LBFGS([xy], lr=0.5, max_iter=5, line_search_fn=line_search_fn)

        def closure():
            opt.zero_grad()
            loss = (1 - xy[0]) ** 2 + 100 * (xy[1] - xy[0] ** 2) ** 2
            loss.backward()
            return loss
        seen = [opt.step(closure) for _ in range(3)]
        return seen, xy.detach(), opt.state_dict()
    same(scenario, rtol=1e-4, atol=1e-6)


def test_lbfgs_state_dict_round_trip_and_bad_line_search():
    def scenario(T):
        params, x, y = _start(T, "float64")
        opt = T.optim.LBFGS(params, max_iter=3, history_size=4)

        def closure_for(ps, o):
            def closure():
                o.zero_grad()
                loss = _loss(T, ps, x, y)
                loss.backward()
                return loss
            return closure
        opt.step(closure_for(params, opt))
        params2 = [p.detach().clone().requires_grad_() for p in params]
        opt2 = T.optim.LBFGS(params2, max_iter=3, history_size=4)
        opt2.load_state_dict(opt.state_dict())
        opt2.step(closure_for(params2, opt2))
        bad = T.optim.LBFGS(params2, line_search_fn="backtracking")
        return params2, opt2.state_dict(), catch(bad.step, closure_for(params2, bad))
    same(scenario, rtol=1e-9, atol=1e-12)


def test_lbfgs_complex_and_missing_grad():
    def scenario(T):
        z = T.tensor([1 + 2j, -0.5 + 1j], dtype=T.complex128, requires_grad=True)
        unused = T.ones(2, dtype=T.float64, requires_grad=True)
        opt = T.optim.LBFGS([z, unused], max_iter=4)

        def closure():
            opt.zero_grad()
            loss = ((z - (0.3 - 0.2j)).abs() ** 2).sum()
            loss.backward()
            return loss
        losses = [opt.step(closure) for _ in range(2)]
        return losses, z.detach(), unused.detach(), opt.state_dict()
    same(scenario, rtol=1e-9, atol=1e-12)


def test_lbfgs_converged_start_returns_at_once():
    def scenario(T):
        p = T.zeros(3, requires_grad=True)
        opt = T.optim.LBFGS([p])
        calls = []

        def closure():
            calls.append(1)
            opt.zero_grad()
            loss = (p ** 2).sum()
            loss.backward()
            return loss
        return opt.step(closure), len(calls), opt.state_dict()
    same(scenario)


def test_lbfgs_step_warns_nothing_and_takes_a_float_loss():
    def scenario(T):
        p = T.ones(3, requires_grad=True)
        opt = T.optim.LBFGS([p], max_iter=3)

        def closure():
            opt.zero_grad()
            loss = (p ** 2).sum()
            loss.backward()
            return loss
        first = warnings_of(lambda: opt.step(closure))
        as_float = warnings_of(lambda: opt.step(lambda: float(closure().detach())))
        return first, as_float, p.detach()
    same(scenario)
