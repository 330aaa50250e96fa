"""More of ember.distributions against torch.distributions: Beta's and Dirichlet's
reparameterised sampling (the implicit gradients compared with PyTorch's on the same draws),
Dirichlet, the discrete count families, and the KL divergences PyTorch registers between them.
Densities, moments, reprs and errors are compared directly; draws (from ember's own stream) by
shape, dtype, support and moments."""
import numpy as np
import pytest
import torch

import ember
from tests.differential import catch, same
from test_distributions import _grads, _t, kl_scenario


# ---------------------------------------------------------------------------- families
# name -> (factory(D, params), parameter values, a value in the support, float parameters
# that take a gradient (indices))
FAMILIES = {
    "Dirichlet": (lambda D, p: D.Dirichlet(p[0]),
                  [[[0.5, 1.0, 2.0], [2.0, 3.0, 0.7]]], [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]),
    "Beta": (lambda D, p: D.Beta(*p), [[0.7, 3.0], [2.0, 0.5]], [0.2, 0.9]),
}


def _build(T, name, grad=False):
    factory, params, value = FAMILIES[name]
    params = [_t(T, p, grad) for p in params]
    return factory(T.distributions, params), params, T.tensor(value)


@pytest.mark.parametrize("name", FAMILIES)
def test_log_prob_entropy_moments_and_gradients(name):
    def scenario(T):
        d, params, value = _build(T, name, grad=True)
        value.requires_grad_()
        log_prob, entropy = d.log_prob(value), d.entropy()
        moments = d.mean + d.variance + d.stddev
        return ([log_prob, entropy, d.mean, d.variance, d.stddev, d.mode],
                _grads(T, params + [value], log_prob), _grads(T, params, entropy),
                _grads(T, params, moments), d.batch_shape, d.event_shape, d.has_rsample,
                d.has_enumerate_support, repr(d), repr(d.support))
    same(scenario, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", FAMILIES)
def test_expand(name):
    def scenario(T):
        d, _, value = _build(T, name)
        e = d.expand((3,) + tuple(d.batch_shape))
        return [e.batch_shape, e.event_shape, e.log_prob(value), e.entropy(), e.mean,
                e.sample((4,)).shape, e.rsample().shape, e._validate_args, repr(e)]
    same(scenario, rtol=1e-5, atol=1e-5)


def test_modes_with_concentrations_below_one():
    # every concentration below 1: PyTorch puts the mode at the first corner
    def scenario(T):
        D = T.distributions
        c = T.tensor([[0.5, 0.3], [0.3, 0.5], [0.5, 0.5], [2.0, 0.5], [3.0, 2.0]])
        return D.Dirichlet(c).mode, D.Beta(c[:, 0], c[:, 1]).mode, D.Beta(0.5, 0.5).mode
    same(scenario)


def test_beta_parameters_numbers_and_dtypes():
    def scenario(T):
        D = T.distributions
        b = D.Beta(1.0, 2.0)
        b64 = D.Beta(T.tensor([1.0], dtype=T.float64), 2)
        return [b.concentration1, b.concentration0, b.batch_shape, b64.concentration0,
                b64.rsample().dtype, D.Beta(T.ones(2, 1), T.ones(3)).batch_shape,
                D.Dirichlet(T.ones(3, dtype=T.float64)).sample((2,)).dtype]
    same(scenario)


def test_invalid_parameters_and_values():
    def scenario(T):
        D = T.distributions
        return [catch(D.Dirichlet, T.tensor(1.0)),
                catch(D.Dirichlet, T.tensor([1.0, -1.0])),
                catch(D.Dirichlet, T.tensor([[1.0, 2.0], [0.0, 1.0]])),
                catch(D.Beta, T.tensor([1.0, 2.0]), T.tensor([1.0, 0.0])),
                catch(D.Beta, "a", 1.0),
                catch(D.Dirichlet(T.ones(2)).log_prob, T.tensor([0.3, 0.6])),
                catch(D.Dirichlet(T.ones(2)).log_prob, T.tensor([0.3, 0.3, 0.4])),
                catch(D.Dirichlet(T.ones(2, 2)).log_prob, T.full((3, 2), 0.5)),
                catch(D.Beta(1.0, 1.0).log_prob, T.tensor(-0.5)),
                catch(D.Dirichlet(T.ones(2)).cdf, T.tensor([0.5, 0.5])),
                D.Dirichlet(T.tensor([1.0, 2.0])).log_prob(T.tensor([0.0, 1.0])),
                D.Beta(2.0, 1.0).log_prob(T.tensor(1.0)),
                repr(D.Dirichlet(T.tensor([0.0, 1.0]), validate_args=False))]
    same(scenario)


# ---------------------------------------------------------------------------- KL
KL_PAIRS = {
    "Dirichlet": lambda D, a, b: (D.Dirichlet(a), D.Dirichlet(b)),
    "Beta": lambda D, a, b: (D.Beta(a, b), D.Beta(b + 0.5, a)),
    "Gamma": lambda D, a, b: (D.Gamma(a, b), D.Gamma(b + 0.5, a)),
    "Laplace": lambda D, a, b: (D.Laplace(a - 1, b), D.Laplace(b, a)),
}
_P = {"Beta": lambda D, a, b: D.Beta(a, b), "Exponential": lambda D, a, b: D.Exponential(a),
      "Gamma": lambda D, a, b: D.Gamma(a, b),
      "Uniform": lambda D, a, b: D.Uniform(a / 8, (a + b) / 8),
      "Laplace": lambda D, a, b: D.Laplace(a - 1, b), "Normal": lambda D, a, b: D.Normal(a, b)}
_Q = {"Beta": lambda D, a, b: D.Beta(b + 0.5, a), "Exponential": lambda D, a, b: D.Exponential(b),
      "Gamma": lambda D, a, b: D.Gamma(b, a), "Uniform": lambda D, a, b: D.Uniform(a - 3, b + 6),
      "Normal": lambda D, a, b: D.Normal(b - 1, a), "Laplace": lambda D, a, b: D.Laplace(b, a)}
for _pn, _qns in [("Beta", "Exponential Gamma Normal Uniform"), ("Exponential", "Gamma Normal"),
                  ("Gamma", "Exponential Normal"), ("Uniform", "Beta Exponential Gamma Normal"),
                  ("Laplace", "Normal"), ("Normal", "Laplace")]:
    for _qn in _qns.split():
        KL_PAIRS[f"{_pn}_{_qn}"] = (lambda D, a, b, _pn=_pn, _qn=_qn:
                                    (_P[_pn](D, a, b), _Q[_qn](D, a, b)))


@pytest.mark.parametrize("pair", KL_PAIRS)
def test_kl_divergence_and_its_gradients(pair):
    same(kl_scenario(KL_PAIRS[pair], [[0.5, 1.2, 3.0], [2.0, 0.7, 0.4]],
                     [[1.5, 0.3, 1.0], [0.6, 2.5, 4.0]]), rtol=1e-5, atol=1e-5)


def test_kl_infinite_between_supports():
    def scenario(T):
        D, kl = T.distributions, T.distributions.kl_divergence
        x = T.tensor([0.5, 2.0])
        ps = [D.Exponential(x), D.Gamma(x, 1.0), D.Laplace(x, 1.0), D.Normal(x, 1.0),
              D.Beta(x, x), D.Uniform(x - 1, x)]
        qs = [D.Beta(x, x), D.Uniform(x - 1, x + 1), D.Exponential(x), D.Gamma(x, x),
              D.Normal(x, x), D.Laplace(x, x)]
        return [catch(kl, p, q) for p in ps for q in qs]
    same(scenario)


# ---------------------------------------------------------------------------- sampling
@pytest.mark.parametrize("name", FAMILIES)
def test_sample_shapes_dtypes_and_flags(name):
    def scenario(T):
        d, _, _ = _build(T, name, grad=True)
        s, r = d.sample((5, 4)), d.rsample((3,))
        return [s.shape, s.dtype, s.requires_grad, d.sample().shape, r.shape, r.dtype,
                r.requires_grad, type(r.grad_fn).__name__ if name == "Dirichlet" else None]
    same(scenario)


@pytest.mark.parametrize("name", FAMILIES)
def test_samples_lie_in_support_and_match_moments(name):
    ember.manual_seed(4321)
    d = _build(ember, name)[0]
    n = 40000
    s = d.rsample((n,)).detach()
    assert bool(d.support.check(s).all()) and bool(((s > 0) & (s < 1)).all())
    values, mean, var = s.double(), d.mean.double(), d.variance.double()
    stderr = (var / n).sqrt()
    assert bool(((values.mean(0) - mean).abs() < 5 * stderr).all()), (values.mean(0), mean)
    np.testing.assert_allclose(values.var(0).numpy(), var.numpy(), rtol=0.06)


def test_tiny_concentrations_draw_inside_the_open_simplex():
    ember.manual_seed(2)
    s = ember.distributions.Dirichlet(ember.tensor([1e-3, 1e-3, 1e-3])).sample((500,))
    expected = torch.distributions.Dirichlet(torch.tensor([1e-3, 1e-3, 1e-3])).sample((500,))
    assert s.min().item() == expected.min().item() == torch.finfo(torch.float32).tiny
    assert bool((s < 1).all()) and bool(ember.distributions.Dirichlet(
        ember.ones(3)).support.check(s).all())


def _torch_dirichlet_grads(x, concentration, grad_output):
    """PyTorch's gradient w.r.t. the concentration for the given draws x."""
    from torch.distributions.dirichlet import _Dirichlet_backward
    conc = torch.tensor(concentration.detach().numpy()).expand(x.shape)
    return _Dirichlet_backward(torch.from_numpy(x.detach().numpy()), conc,
                               torch.from_numpy(grad_output.numpy()))


def test_dirichlet_rsample_gradient_matches_torchs_on_the_same_draws():
    ember.manual_seed(12)
    conc = _t(ember, [[0.05, 0.7, 3.0], [40.0, 2.0, 0.3], [1.0, 1.0, 1.0]], True)
    x = ember.distributions.Dirichlet(conc).rsample((200,))
    weights = ember.randn(x.shape)             # a generic function of the draw
    (grad,) = ember.autograd.grad((x * weights).sum(), [conc])
    expected = _torch_dirichlet_grads(x, conc, weights).sum(0)
    np.testing.assert_allclose(grad.numpy(), expected.numpy(), rtol=3e-3, atol=1e-4)


def test_beta_rsample_gradient_matches_torchs_on_the_same_draws():
    ember.manual_seed(13)
    a = _t(ember, [0.05, 0.7, 3.0, 40.0, 0.5], True)
    b = _t(ember, [2.0, 0.5, 3.0, 30.0, 0.05], True)
    x = ember.distributions.Beta(a, b).rsample((300,))
    ga, gb = ember.autograd.grad(x.sum(), [a, b])
    pairs = ember.stack([x, 1 - x], -1)
    out = ember.stack([ember.ones_like(x), ember.zeros_like(x)], -1)
    expected = _torch_dirichlet_grads(pairs, ember.stack([a, b], -1), out).sum(0)
    np.testing.assert_allclose(ga.numpy(), expected[:, 0].numpy(), rtol=3e-3, atol=1e-5)
    np.testing.assert_allclose(gb.numpy(), expected[:, 1].numpy(), rtol=3e-3, atol=1e-5)


def test_beta_rsample_gradient_moves_the_mean():
    """d E[x] / d a estimated from the pathwise gradients matches the closed form."""
    ember.manual_seed(14)
    a, b = _t(ember, [0.7, 3.0], True), _t(ember, [2.0, 0.5], True)
    x = ember.distributions.Beta(a, b).rsample((40000,))
    ga, gb = ember.autograd.grad(x.mean(0).sum(), [a, b])
    a0, b0 = a.detach().double(), b.detach().double()
    np.testing.assert_allclose(ga.numpy(), (b0 / (a0 + b0) ** 2).numpy(), rtol=0.05)
    np.testing.assert_allclose(gb.numpy(), (-a0 / (a0 + b0) ** 2).numpy(), rtol=0.05)


# ---------------------------------------------------------------------------- count families
# name -> (factory(D, params), parameter values, a value in the support)
COUNTS = {
    "Poisson": (lambda D, p: D.Poisson(p[0]), [[0.5, 3.0]], [0.0, 2.0]),
    "Binomial_probs": (lambda D, p: D.Binomial(p[0], probs=p[1]), [[5.0, 10.0], [0.3, 0.9]],
                       [2.0, 10.0]),
    "Binomial_logits": (lambda D, p: D.Binomial(10, logits=p[0]), [[0.3, -0.9]], [3.0, 7.0]),
    "Geometric_probs": (lambda D, p: D.Geometric(p[0]), [[0.3, 0.8]], [2.0, 0.0]),
    "Geometric_logits": (lambda D, p: D.Geometric(logits=p[0]), [[-0.3, 1.2]], [1.0, 4.0]),
    "NegativeBinomial_probs": (lambda D, p: D.NegativeBinomial(p[0], probs=p[1]),
                               [[3.0, 2.5], [0.3, 0.6]], [2.0, 0.0]),
    "NegativeBinomial_logits": (lambda D, p: D.NegativeBinomial(p[0], logits=p[1]),
                                [[3.0, 0.5], [0.3, -1.6]], [4.0, 1.0]),
    "Multinomial": (lambda D, p: D.Multinomial(5, probs=p[0]),
                    [[[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]], [[1.0, 1.0, 3.0], [5.0, 0.0, 0.0]]),
    "Multinomial_logits": (lambda D, p: D.Multinomial(4, logits=p[0]),
                           [[[0.2, -1.3, 0.5], [0.0, 2.0, -1.0]]],
                           [[1.0, 0.0, 3.0], [2.0, 2.0, 0.0]]),
}


def _build_count(T, name, grad=False):
    factory, params, value = COUNTS[name]
    params = [_t(T, p, grad) for p in params]
    return factory(T.distributions, params), params, T.tensor(value)


def _or_error(T, fn, params=None):
    """fn()'s value (and its gradients w.r.t. params), or the error it raises."""
    try:
        out = fn()
    except Exception as exc:      # noqa: BLE001 - compared as an observation
        return ("raised", type(exc).__name__, str(exc))
    return out if params is None else (out, _grads(T, params, out))


@pytest.mark.parametrize("name", COUNTS)
def test_count_families_densities_moments_and_gradients(name):
    def scenario(T):
        d, params, value = _build_count(T, name, grad=True)
        mode = _or_error(T, lambda: d.mode) if not name.startswith("Multinomial") else None
        return [_or_error(T, lambda: d.log_prob(value), params),
                _or_error(T, d.entropy, params), d.mean, d.variance, d.stddev, mode,
                _grads(T, params, d.mean + d.variance), d.batch_shape, d.event_shape,
                d.has_rsample, d.has_enumerate_support, repr(d), repr(d.support),
                d.support.is_discrete, d.support.event_dim]
    same(scenario, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", COUNTS)
def test_count_families_expand(name):
    def scenario(T):
        d, _, value = _build_count(T, name)
        e = d.expand((3,) + tuple(d.batch_shape))
        return [e.batch_shape, e.event_shape, e.log_prob(value), e.mean, e.variance,
                e.sample((4,)).shape, e.sample().dtype, e._validate_args, repr(e),
                _or_error(T, e.entropy)]
    same(scenario, rtol=1e-5, atol=1e-5)


def test_count_families_edge_values():
    def scenario(T):
        D = T.distributions
        return [D.Poisson(T.tensor([0.0, 2.0])).log_prob(T.tensor([0.0, 1.0])),
                D.Geometric(T.tensor([1.0, 1.0])).log_prob(T.tensor([0.0, 1.0])),
                D.Geometric(T.tensor([1.0, 0.5])).entropy(),
                D.Binomial(probs=T.tensor([0.0, 1.0])).log_prob(T.tensor([0.0, 1.0])),
                D.Binomial(4, probs=T.tensor([0.0, 1.0, 0.5])).mode,
                D.Binomial(4, probs=T.tensor([0.0, 1.0, 0.5])).entropy(),
                D.NegativeBinomial(T.tensor([0.0, 1.0]), probs=T.tensor([0.5, 0.0]))
                .log_prob(T.tensor([0.0, 0.0])),
                D.NegativeBinomial(T.tensor([0.5, 1.0]), logits=T.tensor([0.0, 1.0])).mode,
                D.Multinomial(3, T.tensor([0.5, 0.5, 0.0])).log_prob(T.tensor([2.0, 1.0, 0.0])),
                D.Multinomial(3, T.tensor([0.5, 0.5, 0.0])).entropy(),
                catch(D.Multinomial(0, T.tensor([0.5, 0.5])).sample, (2,)),
                catch(D.Categorical(T.ones(2, 3)).sample, (0,)),
                D.Categorical(T.ones(0, 3)).sample((2,)),
                repr(D.Poisson(2.0)), repr(D.Geometric(0.3)),
                D.Binomial(3, T.tensor(0.5)).batch_shape,
                repr(D.Binomial(T.tensor([4.0]), logits=T.tensor([0.0]))),
                D.Binomial(T.ones(2, 1), T.full((3,), 0.5)).batch_shape]
    same(scenario)


def test_count_families_enumerate_support():
    def scenario(T):
        D = T.distributions
        b = D.Binomial(3, probs=T.tensor([[0.2], [0.5]]))
        uneven = D.Binomial(T.tensor([5.0, 10.0]), probs=T.tensor([0.3, 0.9]))
        return [b.enumerate_support(), b.enumerate_support(False), b.param_shape,
                D.Binomial(2, logits=T.zeros(3)).enumerate_support(),
                catch(uneven.enumerate_support), catch(uneven.entropy)]
    same(scenario)


def test_count_families_invalid_parameters_and_values():
    def scenario(T):
        D = T.distributions
        return [catch(D.Poisson, T.tensor([-1.0])),
                catch(D.Geometric, T.tensor([0.0, 0.5])),
                catch(D.Geometric, T.tensor([1.5, 0.5])),
                catch(D.Geometric),
                catch(D.Binomial, T.tensor([1.5]), T.tensor([0.5])),
                catch(D.Binomial, 2, T.tensor([0.5]), T.tensor([0.5])),
                catch(D.NegativeBinomial, T.tensor([1.5]), T.tensor([1.0])),
                catch(D.NegativeBinomial, T.tensor([-1.0]), logits=T.tensor([1.0])),
                catch(D.Multinomial, 2.0, T.ones(3)),
                catch(D.Multinomial, 2, T.tensor([0.5, -0.5, 1.0])),
                catch(D.Multinomial(3, T.ones(3)).log_prob, T.tensor([1.0, 1.0, 2.0])),
                catch(D.Multinomial(3, T.ones(3)).log_prob, T.tensor([1.0, 1.0])),
                catch(D.Binomial(T.tensor([2.0]), T.tensor([0.5])).log_prob, T.tensor([3.0])),
                catch(D.Poisson(1.0).log_prob, T.tensor([0.5])),
                catch(D.Geometric(0.5).log_prob, T.tensor([-1.0])),
                catch(D.NegativeBinomial(2.0, T.tensor(0.5)).log_prob, T.tensor(1.5)),
                D.Poisson(T.tensor([-1.0]), validate_args=False).rate,
                D.Geometric(T.tensor([0.0]), validate_args=False).probs]
    same(scenario)


def test_multinomial_constraint():
    def scenario(T):
        C = T.distributions.constraints
        c = C.multinomial(3)
        x = T.tensor([[1.0, 2.0], [2.0, 2.0], [0.5, 0.5], [-1.0, 1.0]])
        return repr(c), c.check(x), c.is_discrete, c.event_dim, c.upper_bound
    same(scenario)


COUNT_KL_PAIRS = {
    "Poisson": lambda D, a, b: (D.Poisson(a), D.Poisson(b)),
    "Binomial": lambda D, a, b: (D.Binomial(5, probs=a / 4), D.Binomial(5, logits=b)),
    "Geometric": lambda D, a, b: (D.Geometric(a / 4), D.Geometric(logits=b)),
    "Bernoulli_Poisson": lambda D, a, b: (D.Bernoulli(a / 4), D.Poisson(b)),
}


@pytest.mark.parametrize("pair", COUNT_KL_PAIRS)
def test_count_kl_divergences_and_their_gradients(pair):
    def scenario(T):
        a = _t(T, [0.5, 1.2, 3.0], grad=True)
        b = _t(T, [1.5, 0.3, 2.0], grad=True)
        p, q = COUNT_KL_PAIRS[pair](T.distributions, a, b)
        kl = T.distributions.kl_divergence(p, q)
        return kl, _grads(T, [a, b], kl)
    same(scenario, rtol=1e-5, atol=1e-5)


def test_count_kl_infinite_and_unsupported_cases():
    def scenario(T):
        D, kl = T.distributions, T.distributions.kl_divergence
        half = T.tensor([0.5, 0.2])
        return [kl(D.Binomial(T.tensor([4.0, 3.0]), half), D.Binomial(3, T.tensor([0.5, 0.3]))),
                catch(kl, D.Binomial(3, half), D.Binomial(4, half)),
                kl(D.Poisson(T.tensor([1.0, 2.0])), D.Binomial(3, half)),
                kl(D.Poisson(T.tensor([1.0, 2.0])), D.Bernoulli(half)),
                catch(kl, D.NegativeBinomial(3, half), D.NegativeBinomial(3, half)),
                catch(kl, D.Multinomial(3, half), D.Multinomial(3, half)),
                catch(kl, D.Geometric(half), D.Poisson(half))]
    same(scenario)


@pytest.mark.parametrize("name", COUNTS)
def test_count_samples_shapes_support_and_moments(name):
    same(lambda T: [(s.shape, s.dtype, s.requires_grad) for s in
                    [_build_count(T, name, grad=True)[0].sample(shape) for shape in
                     [(), (5,), (2, 3)]]])
    ember.manual_seed(99)
    d = _build_count(ember, name)[0]
    n = 40000
    s = d.sample((n,))
    assert bool(d.support.check(s).all()) and bool((s == s.round()).all())
    values, mean, var = s.double(), d.mean.double(), d.variance.double()
    stderr = (var / n).sqrt()
    assert bool(((values.mean(0) - mean).abs() < 5 * stderr + 1e-9).all()), (values.mean(0), mean)
    np.testing.assert_allclose(values.var(0).numpy(), var.numpy(), rtol=0.07, atol=1e-9)
