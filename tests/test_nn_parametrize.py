"""torch.nn.utils.parametrize and the parametrizations (weight_norm, spectral_norm, and the old hook forms) against torch: forward, gradients, state dicts, repr, errors.
"""
import numpy as np
import pytest
from differential import catch, same, warnings_of
from nn_helpers import param_grads as _grads


# ----------------------------------------------------------------------------- parametrize
def _filled(T, module, seed=0):
    """The module with its parameters set from a NumPy generator (the same in both)."""
    rng = np.random.default_rng(seed)
    with T.no_grad():
        for p in module.parameters():
            p.copy_(T.tensor(rng.standard_normal(tuple(p.shape)), dtype=p.dtype))
    return module


def _input(T, *shape, seed=1):
    return T.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=T.float32)


def _parametrizations(T):
    """Parametrizations used below, defined for the library T."""
    nn = T.nn

    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

    class Scale(nn.Module):                 # with a right inverse
        def __init__(self, c):
            super().__init__()
            self.c = c

        def forward(self, X):
            return X * self.c

        def right_inverse(self, Y):
            return Y / self.c

    class RankOne(nn.Module):               # two original tensors
        def forward(self, x, y):
            return x.unsqueeze(-1) @ y.unsqueeze(-2)

        def right_inverse(self, Z):
            return Z[:, 0].clone(), Z[0].clone() / Z[0, 0]

    class Flatten(nn.Module):
        def forward(self, X):
            return X.reshape(-1)

    class Double(nn.Module):
        def forward(self, X):
            return X.double()
    return Symmetric, Scale, RankOne, Flatten, Double


def test_parametrize_register_forward_grad_state_dict_repr():
    def scenario(T):
        P = T.nn.utils.parametrize
        Symmetric, Scale, _, _, _ = _parametrizations(T)
        m = _filled(T, T.nn.Linear(3, 3))
        original = m.weight
        out = [P.is_parametrized(m), P.register_parametrization(m, "weight", Symmetric()) is m]
        P.register_parametrization(m, "weight", Scale(2.0))
        y = m(_input(T, 2, 3))
        y.sum().backward()
        out += [y, m.weight, _grads(m), list(m.state_dict()), repr(m), type(m).__name__,
                type(m).__module__, P.type_before_parametrizations(m).__name__,
                P.is_parametrized(m), P.is_parametrized(m, "weight"),
                P.is_parametrized(m, "bias"), m.parametrizations.weight.original is original,
                [n for n, _ in m.named_parameters()], m.parametrizations.weight.is_tensor,
                m.parametrizations.weight.ntensors, m.parametrizations.weight.unsafe,
                m.parametrizations.weight[1].training]
        return out
    same(scenario)


def test_parametrize_right_inverse_on_register_and_assignment():
    def scenario(T):
        P = T.nn.utils.parametrize
        Symmetric, Scale, _, _, _ = _parametrizations(T)
        m = _filled(T, T.nn.Linear(2, 3))
        w = m.weight.detach().clone()
        P.register_parametrization(m, "weight", Scale(4.0))
        out = [m.parametrizations.weight.original, m.weight]
        m.weight = T.ones(3, 2)                 # runs the right inverse
        out += [m.parametrizations.weight.original, m.weight, w]
        m2 = _filled(T, T.nn.Linear(3, 3))
        P.register_parametrization(m2, "weight", Symmetric())
        out.append(catch(setattr, m2, "weight", T.ones(3, 3)))
        return out
    same(scenario)


def test_parametrize_remove():
    def scenario(T):
        P = T.nn.utils.parametrize
        Symmetric, Scale, RankOne, _, _ = _parametrizations(T)
        out = []
        for leave in (True, False):
            m = _filled(T, T.nn.Linear(3, 3))
            original = m.weight
            P.register_parametrization(m, "weight", Symmetric())
            P.register_parametrization(m, "bias", Scale(3.0))
            P.remove_parametrizations(m, "weight", leave_parametrized=leave)
            out += [m.weight, m.weight is original, isinstance(m.weight, T.nn.Parameter),
                    repr(m), type(m).__name__, list(m.state_dict())]
            P.remove_parametrizations(m, "bias", leave_parametrized=leave)
            out += [m.bias, repr(m), type(m).__name__, hasattr(m, "parametrizations"),
                    list(m.state_dict())]
            out.append(catch(P.remove_parametrizations, m, "weight"))
        m = _filled(T, T.nn.Linear(3, 3, bias=False))
        P.register_parametrization(m, "weight", RankOne())
        out += [list(m.state_dict()), m.weight,
                catch(P.remove_parametrizations, m, "weight", leave_parametrized=False)]
        P.remove_parametrizations(m, "weight")
        out += [m.weight, isinstance(m.weight, T.nn.Parameter), list(m.state_dict())]
        return out
    same(scenario)


def test_parametrize_several_originals_and_buffers():
    def scenario(T):
        P = T.nn.utils.parametrize
        Symmetric, Scale, RankOne, _, _ = _parametrizations(T)
        m = _filled(T, T.nn.Linear(3, 3, bias=False))
        P.register_parametrization(m, "weight", RankOne())
        y = m(_input(T, 2, 3))
        y.pow(2).sum().backward()
        pl = m.parametrizations.weight
        out = [y, pl.ntensors, pl.is_tensor, pl.original0.grad, pl.original1.grad,
               list(m.state_dict()), repr(m)]
        m.weight = T.ones(3, 3) * 2
        out += [pl.original0, pl.original1, m.weight]
        bn = T.nn.BatchNorm1d(3)
        P.register_parametrization(bn, "running_var", Scale(2.0))
        out += [list(bn.state_dict()), bn.running_var,
                [n for n, _ in bn.named_buffers()], repr(bn)]
        return out
    same(scenario)


def test_parametrize_errors():
    def scenario(T):
        P = T.nn.utils.parametrize
        Symmetric, Scale, RankOne, Flatten, Double = _parametrizations(T)

        def fresh():
            return _filled(T, T.nn.Linear(3, 3))
        m = fresh()
        P.register_parametrization(m, "weight", Symmetric())
        unsafe = fresh()
        P.register_parametrization(unsafe, "weight", Flatten(), unsafe=True)
        return [catch(P.register_parametrization, fresh(), "weight", Flatten()),
                catch(P.register_parametrization, fresh(), "weight", Double()),
                catch(P.register_parametrization, fresh(), "nothing", Symmetric()),
                catch(P.register_parametrization, m, "weight", Flatten()),
                catch(P.register_parametrization, m, "weight", Double()),
                catch(lambda: P.ParametrizationList([], T.zeros(2))),
                unsafe.weight, unsafe.parametrizations.weight.unsafe,
                catch(P.remove_parametrizations, fresh(), "weight")]
    same(scenario)


def test_parametrize_cached():
    def scenario(T):
        P = T.nn.utils.parametrize
        _, Scale, _, _, _ = _parametrizations(T)
        calls = []

        class Counted(Scale):
            def forward(self, X):
                calls.append(1)
                return super().forward(X)
        m = _filled(T, T.nn.Linear(3, 3))
        P.register_parametrization(m, "weight", Counted(2.0))
        m.weight, m.weight
        plain = len(calls)
        with P.cached():
            a, b = m.weight, m.weight
            with P.cached():
                m.weight
        cached_calls = len(calls) - plain
        m.weight
        return plain, cached_calls, a is b, len(calls)
    same(scenario)


def test_parametrize_state_dict_round_trip_and_deepcopy():
    def scenario(T):
        import copy
        P = T.nn.utils.parametrize
        Symmetric, Scale, _, _, _ = _parametrizations(T)
        src = _filled(T, T.nn.Linear(3, 3), seed=3)
        P.register_parametrization(src, "weight", Scale(2.0))
        dst = _filled(T, T.nn.Linear(3, 3), seed=4)
        P.register_parametrization(dst, "weight", Scale(2.0))
        result = dst.load_state_dict(src.state_dict())
        clone = copy.deepcopy(dst)
        return [repr(result), dst.weight, type(clone).__name__, clone.weight,
                clone.parametrizations.weight.original is dst.parametrizations.weight.original]
    same(scenario)


# ----------------------------------------------------------------------------- weight_norm
@pytest.mark.parametrize("dim", [0, 1, None, -1, -2])
def test_weight_norm_parametrization(dim):
    def scenario(T):
        m = _filled(T, T.nn.Conv1d(2, 3, 3))
        T.nn.utils.parametrizations.weight_norm(m, dim=dim)
        y = m(_input(T, 2, 2, 5))
        (y ** 2).sum().backward()
        pl = m.parametrizations.weight
        return [y, m.weight, pl.original0, pl.original1, pl.original0.grad,
                pl.original1.grad, list(m.state_dict()), repr(m)]
    same(scenario)


def test_weight_norm_old_and_new_state_dicts():
    def scenario(T):
        U = T.nn.utils
        old = _filled(T, T.nn.Linear(4, 3))
        ((), warned) = warnings_of(lambda: U.weight_norm(old) and ())
        y_old = old(_input(T, 2, 4))
        y_old.sum().backward()
        sd = old.state_dict()
        new = T.nn.utils.parametrizations.weight_norm(T.nn.Linear(4, 3))
        result = new.load_state_dict(sd)
        out = [warned, list(sd), y_old, old.weight_g.grad, old.weight_v.grad,
               [n for n, _ in old.named_parameters()], repr(result), new.weight,
               new(_input(T, 2, 4)), warnings_of(lambda: catch(U.weight_norm, old))]
        U.remove_weight_norm(old)
        out += [list(old.state_dict()), old.weight, isinstance(old.weight, T.nn.Parameter),
                catch(U.remove_weight_norm, old), old(_input(T, 2, 4))]
        return out
    same(scenario)


# ----------------------------------------------------------------------------- spectral_norm
def _set_uv(T, u, v, seed=5):
    rng = np.random.default_rng(seed)
    with T.no_grad():
        for t in (u, v):
            t.copy_(T.nn.functional.normalize(T.tensor(rng.standard_normal(t.shape[0]),
                                                       dtype=t.dtype), dim=0))


@pytest.mark.parametrize("module,kw", [
    ("linear", dict()), ("linear", dict(n_power_iterations=3, eps=1e-4)),
    ("conv", dict()), ("conv", dict(dim=1)), ("convT", dict()), ("convT", dict(dim=-3))],
    ids=str)
def test_spectral_norm_parametrization(module, kw):
    def scenario(T):
        m = {"linear": lambda: T.nn.Linear(4, 3), "conv": lambda: T.nn.Conv2d(2, 3, 2),
             "convT": lambda: T.nn.ConvTranspose2d(2, 3, 2)}[module]()
        _filled(T, m)
        T.nn.utils.parametrizations.spectral_norm(m, **kw)
        sn = m.parametrizations.weight[0]
        _set_uv(T, sn._u, sn._v)
        x = _input(T, 1, 2, 3, 3) if module != "linear" else _input(T, 2, 4)
        out = [sn.dim, list(m.state_dict()), repr(m)]
        for _ in range(2):              # training: each access iterates
            y = m(x)
            out += [y, sn._u.clone(), sn._v.clone()]
        (y ** 2).sum().backward()
        out.append(m.parametrizations.weight.original.grad)
        m.eval()                        # eval: u and v stay
        out += [m(x), m(x), sn._u, sn._v]
        return out
    same(scenario, rtol=1e-4, atol=1e-5)


def test_spectral_norm_parametrization_vector_and_errors():
    def scenario(T):
        SN = T.nn.utils.parametrizations.spectral_norm
        m = _filled(T, T.nn.Linear(3, 3))
        SN(m, "bias")
        return [m.bias, list(m.state_dict()),
                catch(SN, T.nn.Linear(3, 3), n_power_iterations=0),
                catch(SN, T.nn.Linear(3, 3), dim=2),
                catch(SN, T.nn.Linear(3, 3), "nothing")]
    same(scenario)


def test_spectral_norm_old_hook():
    def scenario(T):
        U = T.nn.utils
        m = _filled(T, T.nn.Linear(3, 4))
        U.spectral_norm(m, n_power_iterations=2)
        _set_uv(T, m.weight_u, m.weight_v)
        x = _input(T, 2, 3)
        out = [list(m.state_dict()), [n for n, _ in m.named_buffers()],
               isinstance(m.weight, T.nn.Parameter)]
        for _ in range(2):
            y = m(x)
            out += [y, m.weight, m.weight_u.clone(), m.weight_v.clone()]
        y.sum().backward()
        out.append(m.weight_orig.grad)
        m.eval()
        out += [m(x), m.weight_u]
        sd = m.state_dict()
        out += [sd._metadata, catch(U.spectral_norm, m)]
        m2 = U.spectral_norm(_filled(T, T.nn.Linear(3, 4), seed=7))
        out.append(repr(m2.load_state_dict(sd)))
        out += [m2.weight_u, m2.weight_v]
        # a version-0 state_dict (no metadata, the weight saved, no v): v is solved for
        m3 = U.spectral_norm(_filled(T, T.nn.Linear(3, 4), seed=8))
        old_sd = {"bias": sd["bias"], "weight_orig": sd["weight_orig"],
                  "weight": m.weight.detach(), "weight_u": sd["weight_u"]}
        out += [repr(m3.load_state_dict(old_sd)), m3.weight_v, sorted(old_sd)]
        U.remove_spectral_norm(m)
        out += [list(m.state_dict()), m.weight, len(m._state_dict_hooks),
                len(m._load_state_dict_pre_hooks), catch(U.remove_spectral_norm, m),
                catch(U.spectral_norm, T.nn.Linear(2, 2), n_power_iterations=0)]
        return out
    same(scenario, rtol=1e-4, atol=1e-5)
