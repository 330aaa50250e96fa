"""ember.distributions against torch.distributions: densities, moments, entropies, KL
divergences and their gradients on the same parameters; reprs and validation errors as
strings; sampling (from ember's own stream) by shape, dtype, support and moments."""
import math

import numpy as np
import pytest

import ember
from tests.differential import catch, same, warnings_of


def _t(T, data, grad=False, dtype=None):
    return T.tensor(data, dtype=dtype or T.float32, requires_grad=grad)


# ---------------------------------------------------------------------------- families
# name -> (factory(T, params), parameter values, a value in the support (batch shape (2,)))
FAMILIES = {
    "Normal": (lambda D, p: D.Normal(*p), [[0.5, -1.0], [1.5, 0.3]], [0.2, -2.0]),
    "Laplace": (lambda D, p: D.Laplace(*p), [[0.5, -1.0], [1.5, 0.3]], [0.2, -2.0]),
    "Uniform": (lambda D, p: D.Uniform(*p), [[-1.0, 0.5], [2.0, 3.0]], [0.2, 2.5]),
    "Exponential": (lambda D, p: D.Exponential(*p), [[0.5, 2.0]], [0.2, 3.0]),
    "Gamma": (lambda D, p: D.Gamma(*p), [[0.7, 3.0], [2.0, 0.5]], [0.2, 3.0]),
    "Beta": (lambda D, p: D.Beta(*p), [[0.7, 3.0], [2.0, 0.5]], [0.2, 0.9]),
    "Bernoulli_probs": (lambda D, p: D.Bernoulli(probs=p[0]), [[0.3, 0.8]], [1.0, 0.0]),
    "Bernoulli_logits": (lambda D, p: D.Bernoulli(logits=p[0]), [[-0.3, 2.0]], [1.0, 0.0]),
    "Categorical_probs": (lambda D, p: D.Categorical(probs=p[0]),
                          [[[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]], [2, 0]),
    "Categorical_logits": (lambda D, p: D.Categorical(logits=p[0]),
                           [[[0.2, -1.3, 0.5], [2.0, 0.1, 0.3]]], [1, 2]),
    "OneHotCategorical": (lambda D, p: D.OneHotCategorical(logits=p[0]),
                          [[[0.2, -1.3, 0.5], [2.0, 0.1, 0.3]]], [[0., 1., 0.], [0., 0., 1.]]),
    "MVN_cov": (lambda D, p: D.MultivariateNormal(p[0], covariance_matrix=p[1]),
                [[[0.5, -1.0], [0.0, 2.0]], [[2.0, 0.3], [0.3, 1.0]]], [[0.2, 0.1], [1.0, -1.0]]),
    "MVN_tril": (lambda D, p: D.MultivariateNormal(p[0], scale_tril=p[1]),
                 [[0.5, -1.0], [[1.5, 0.0], [0.4, 0.8]]], [[0.2, 0.1], [1.0, -1.0]]),
    "MVN_precision": (lambda D, p: D.MultivariateNormal(p[0], precision_matrix=p[1]),
                      [[0.5, -1.0], [[2.0, 0.3], [0.3, 1.0]]], [[0.2, 0.1], [1.0, -1.0]]),
    "Independent": (lambda D, p: D.Independent(D.Normal(*p), 1),
                    [[[0.5, -1.0], [0.0, 2.0]], [[1.5, 0.3], [0.7, 1.0]]],
                    [[0.2, 0.1], [1.0, -1.0]]),
}
NO_MODE = {"Uniform"}               # nan by definition: compared too, but no gradient
HAS_ICDF = {"Normal", "Laplace", "Uniform", "Exponential"}
HAS_CDF = HAS_ICDF | {"Gamma"}


def _build(T, name, grad=False):
    factory, params, value = FAMILIES[name]
    params = [_t(T, p, grad) for p in params]
    dtype = T.int64 if name.startswith("Categorical") else T.float32
    return factory(T.distributions, params), params, T.tensor(value, dtype=dtype)


def _grads(T, params, out):
    if not out.requires_grad:           # e.g. a Categorical's mean: nan, whatever the params
        return "constant"
    grads = T.autograd.grad(out.sum(), params, allow_unused=True, retain_graph=True)
    return [g if g is not None else "none" for g in grads]


@pytest.mark.parametrize("name", FAMILIES)
def test_log_prob_entropy_and_their_gradients(name):
    def scenario(T):
        d, params, value = _build(T, name, grad=True)
        if value.is_floating_point() and not name.startswith(("Bernoulli", "OneHot")):
            value.requires_grad_()          # the score w.r.t. the value too
            params = params + [value]
        log_prob = d.log_prob(value)
        entropy = d.entropy()
        return (log_prob, entropy, _grads(T, params, log_prob),
                _grads(T, params, entropy), d.batch_shape, d.event_shape)
    same(scenario, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", FAMILIES)
def test_moments_and_their_gradients(name):
    def scenario(T):
        d, params, _ = _build(T, name, grad=True)
        out = [d.mean, d.variance, d.stddev, d.mode]
        moments = d.mean.nan_to_num() + d.variance.nan_to_num() + d.stddev.nan_to_num()
        return out, _grads(T, params, moments)
    same(scenario, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(HAS_CDF))
def test_cdf_icdf_and_their_gradients(name):
    def scenario(T):
        d, params, value = _build(T, name, grad=True)
        value.requires_grad_()
        cdf = d.cdf(value)
        # (no gradient w.r.t. a Gamma's concentration, in PyTorch either: compared as errors)
        out = [cdf, catch(_grads, T, params + [value], cdf)]
        if name in HAS_ICDF:
            icdf = d.icdf(T.tensor([0.1, 0.7]))
            out += [icdf, _grads(T, params, icdf)]
        else:
            out.append(catch(d.icdf, T.tensor([0.1, 0.7])))
        return out
    same(scenario, rtol=1e-5, atol=1e-5)


def test_lazy_probs_and_logits():
    def scenario(T):
        D = T.distributions
        b = D.Bernoulli(logits=T.tensor([-0.3, 2.0]))
        c = D.Categorical(probs=T.tensor([2.0, 1.0, 1.0]))
        b2 = D.Bernoulli(probs=T.tensor([0.0, 0.25]))
        reprs = [repr(c)]
        values = [b.probs, c.logits, c.probs, b2.logits]
        return values, reprs + [repr(c)]      # logits, once computed, shows in the repr
    same(scenario)


def test_float64_parameters_keep_their_dtype():
    def scenario(T):
        D = T.distributions
        d = D.Normal(T.tensor([0.5], dtype=T.float64), 2.0)
        g = D.Gamma(T.tensor(2.0, dtype=T.float64), 3)
        return (d.log_prob(T.tensor([1.0], dtype=T.float64)), d.sample((3,)).dtype,
                d.rsample().dtype, g.sample().dtype, g.entropy())
    same(scenario)


# ---------------------------------------------------------------------------- KL
KL_PAIRS = {
    "Normal": lambda D, a, b: (D.Normal(a, b), D.Normal(b - 1, a.abs() + 0.5)),
    "Bernoulli": lambda D, a, b: (D.Bernoulli(logits=a), D.Bernoulli(logits=b)),
    "Categorical": lambda D, a, b: (D.Categorical(logits=a.reshape(1, 2)),
                                    D.Categorical(logits=b.reshape(1, 2))),
    "Uniform": lambda D, a, b: (D.Uniform(a, a + b), D.Uniform(a - 1, a + b + 1)),
    "Exponential": lambda D, a, b: (D.Exponential(a.abs()), D.Exponential(b)),
    "OneHotCategorical": lambda D, a, b: (D.OneHotCategorical(logits=a.reshape(1, 2)),
                                          D.OneHotCategorical(logits=b.reshape(1, 2))),
    "Independent": lambda D, a, b: (D.Independent(D.Normal(a, b.abs()), 1),
                                    D.Independent(D.Normal(b, a.abs()), 1)),
    "MVN": lambda D, a, b: (
        D.MultivariateNormal(a, scale_tril=(a.abs() + 0.1).diag()),
        D.MultivariateNormal(b, covariance_matrix=b.outer(b) + a.abs().diag() + 1)),
}


def kl_scenario(make_pair, a, b):
    """A scenario: KL(p || q) for the pair `make_pair(distributions, a, b)` makes from the
    parameter values a and b, and its gradients by them (shared by the distributions tests)."""
    def scenario(T):
        ta, tb = _t(T, a, grad=True), _t(T, b, grad=True)
        p, q = make_pair(T.distributions, ta, tb)
        kl = T.distributions.kl_divergence(p, q)
        return kl, _grads(T, [ta, tb], kl)
    return scenario


@pytest.mark.parametrize("pair", KL_PAIRS)
def test_kl_divergence_and_its_gradients(pair):
    same(kl_scenario(KL_PAIRS[pair], [0.5, -1.2], [1.5, 0.3]), rtol=1e-5, atol=1e-5)


def test_kl_infinite_and_zero_cases():
    def scenario(T):
        D, kl = T.distributions, T.distributions.kl_divergence
        B, C = D.Bernoulli, D.Categorical
        return [kl(B(T.tensor([0.0, 1.0, 0.5])), B(T.tensor([1.0, 0.0, 0.0]))),
                kl(C(T.tensor([0.5, 0.5, 0.0])), C(T.tensor([0.0, 0.5, 0.5]))),
                kl(C(T.tensor([0.0, 0.5, 0.5])), C(T.tensor([0.2, 0.3, 0.5]))),
                kl(D.Uniform(T.tensor([0.0, 0.0]), 1.0), D.Uniform(T.tensor([0.5, -1.0]), 2.0))]
    same(scenario)


def test_register_kl_and_missing_pair():
    def scenario(T):
        D = T.distributions

        class MyNormal(D.Normal):
            pass

        missing = catch(D.kl_divergence, D.Categorical(T.ones(2)), D.Normal(0.0, 1.0))
        ndims = catch(D.kl_divergence, D.Independent(D.Normal(T.zeros(2, 2), 1.0), 1),
                      D.Independent(D.Normal(T.zeros(2, 2), 1.0), 2))
        # a subclass finds its parents' closed form ...
        inherited = D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 2.0))

        @D.register_kl(MyNormal, MyNormal)
        def _kl(p, q):
            return T.tensor(42.0)
        # ... until it registers its own
        return missing, ndims, inherited, D.kl_divergence(MyNormal(0.0, 1.0), MyNormal(1.0, 2.0))
    same(scenario)


def test_kl_mvn_event_shape_mismatch():
    same(lambda T: catch(T.distributions.kl_divergence,
                         T.distributions.MultivariateNormal(T.zeros(2), T.eye(2)),
                         T.distributions.MultivariateNormal(T.zeros(3), T.eye(3))))


# ---------------------------------------------------------------------------- reprs
def test_reprs():
    def scenario(T):
        D = T.distributions
        z2 = T.zeros(2)
        return [repr(d) for d in [
            D.Normal(z2, T.ones(2)), D.Normal(0.0, 1.0), D.Normal(T.tensor([0.0]), 1.0),
            D.Bernoulli(probs=T.tensor([0.3])), D.Bernoulli(logits=z2),
            D.Categorical(probs=T.ones(3)), D.Categorical(logits=T.ones(2, 3)),
            D.OneHotCategorical(logits=T.zeros(2, 3)), D.Uniform(0.0, 2.0),
            D.MultivariateNormal(z2, T.eye(2)), D.MultivariateNormal(z2, scale_tril=T.eye(2)),
            D.Independent(D.Normal(T.zeros(2, 3), 1.0), 1), D.Beta(1.0, 2.0),
            D.Gamma(1.0, 2.0), D.Exponential(1.0), D.Laplace(0.0, 1.0),
            D.Normal(0.0, 1.0).expand([3])]] + [repr(d.support) for d in [
                D.Normal(0.0, 1.0), D.Uniform(0.0, 2.0), D.Categorical(T.ones(3)),
                D.Bernoulli(0.5), D.Exponential(1.0), D.Gamma(1.0, 1.0), D.Beta(1.0, 1.0),
                D.OneHotCategorical(T.ones(3)), D.MultivariateNormal(z2, T.eye(2)),
                D.Independent(D.Normal(z2, 1.0), 1)]]
    same(scenario)


def test_constraint_reprs_and_checks():
    def scenario(T):
        C = T.distributions.constraints
        cs = [C.real, C.positive, C.unit_interval, C.boolean, C.simplex, C.nonnegative_integer,
              C.positive_definite, C.lower_cholesky, C.real_vector, C.independent(C.real, 1),
              C.greater_than(2), C.interval(0, 1), C.half_open_interval(0, 1), C.one_hot,
              C.integer_interval(0, 3), C.nonnegative, C.less_than(1.5)]
        x = T.tensor([[0.0, 1.0], [0.5, float("nan")]])
        m = T.tensor([[[2.0, 0.5], [0.5, 1.0]], [[1.0, 2.0], [2.0, 1.0]],
                      [[1.0, 0.0], [0.3, 1.0]]])
        checks = [c.check(x) for c in cs if c.event_dim < 2] + \
                 [c.check(m) for c in cs if c.event_dim == 2]
        return [repr(c) for c in cs], checks, [(c.is_discrete, c.event_dim) for c in cs]
    same(scenario)


# ---------------------------------------------------------------------------- validation
def test_invalid_parameter_errors():
    def scenario(T):
        D = T.distributions
        nan = float("nan")
        return [catch(D.Normal, T.zeros(2), T.tensor([1.0, -1.0])),
                catch(D.Normal, nan, 1.0),
                catch(D.Bernoulli, T.tensor(2.0)),
                catch(D.Bernoulli, T.tensor([0.5]), T.tensor([0.5])),
                catch(D.Bernoulli),
                catch(D.Categorical, T.tensor(1.0)),
                catch(D.Categorical, T.tensor([0.5, -0.5, 1.0])),
                catch(D.Categorical, None, T.tensor(1.0)),
                catch(D.Uniform, T.tensor(1.0), T.tensor(0.0)),
                catch(D.Exponential, T.tensor([1.0, 0.0])),
                catch(D.Laplace, 0.0, -1.0),
                catch(D.Gamma, T.tensor([-1.0]), 1.0),
                catch(D.Beta, 1.0, -2.0),
                catch(D.MultivariateNormal, T.zeros(2)),
                catch(D.MultivariateNormal, T.tensor(0.0), T.eye(2)),
                catch(D.MultivariateNormal, T.zeros(2), T.ones(2)),
                catch(D.MultivariateNormal, T.zeros(2), precision_matrix=T.ones(2)),
                catch(D.MultivariateNormal, T.zeros(2), scale_tril=T.ones(2)),
                catch(D.MultivariateNormal, T.zeros(2), T.tensor([[1.0, 2.0], [2.0, 1.0]])),
                catch(D.MultivariateNormal, T.zeros(2), scale_tril=T.ones(2, 2)),
                catch(D.MultivariateNormal, T.zeros(2), T.eye(2), T.eye(2)),
                catch(D.Independent, D.Normal(0.0, 1.0), 1),
                catch(D.Normal, "a", 1.0),
                repr(D.Normal(0.0, -1.0, validate_args=False))]
    same(scenario)


def test_invalid_value_errors():
    def scenario(T):
        D = T.distributions
        n = D.Normal(T.zeros(2), 1.0)
        return [catch(n.log_prob, T.zeros(2, 3)),
                catch(n.log_prob, 1.0),
                catch(D.Normal(0.0, 1.0).log_prob, T.tensor([float("nan")])),
                catch(D.Bernoulli(T.tensor([0.5])).log_prob, T.tensor([0.5])),
                catch(D.Categorical(T.ones(3)).log_prob, T.tensor([3])),
                catch(D.Exponential(1.0).log_prob, T.tensor(-1.0)),
                catch(D.Uniform(0.0, 1.0).log_prob, T.tensor(2.0)),
                catch(D.Beta(1.0, 1.0).log_prob, T.tensor(1.5)),
                catch(D.OneHotCategorical(T.ones(3)).log_prob, T.tensor([1.0, 1.0, 0.0])),
                catch(D.MultivariateNormal(T.zeros(2), T.eye(2)).log_prob, T.zeros(3)),
                catch(D.Independent(D.Normal(T.zeros(2), 1.0), 1).log_prob, T.zeros(3)),
                catch(n.expand, [3]),
                D.Uniform(0.0, 1.0, validate_args=False).log_prob(T.tensor([2.0, 0.5]))]
    same(scenario)


def test_default_validation_switch():
    def scenario(T):
        D = T.distributions
        D.Distribution.set_default_validate_args(False)
        try:
            unchecked = D.Normal(0.0, -1.0).log_prob(T.tensor(1.0))
        finally:
            D.Distribution.set_default_validate_args(True)
        return unchecked, catch(D.Normal, 0.0, -1.0)
    same(scenario)


# ---------------------------------------------------------------------------- expand
@pytest.mark.parametrize("name", FAMILIES)
def test_expand(name):
    def scenario(T):
        d, _, value = _build(T, name)
        value = value if len(d.batch_shape) else value[0]
        e = d.expand((3,) + tuple(d.batch_shape))
        out = [e.batch_shape, e.event_shape, e.log_prob(value), e.entropy(), e.mean,
               e.sample((4,)).shape, e._validate_args]
        return out + ([repr(e)] if name != "MVN_tril" else [])
    same(scenario, rtol=1e-5, atol=1e-5)


def test_enumerate_support():
    def scenario(T):
        D = T.distributions
        b = D.Bernoulli(T.tensor([0.3, 0.8]))
        c = D.Categorical(T.ones(2, 3))
        o = D.OneHotCategorical(T.ones(2, 3))
        return [b.enumerate_support(), b.enumerate_support(False), c.enumerate_support(),
                c.enumerate_support(expand=False), o.enumerate_support(),
                o.enumerate_support(False), b.has_enumerate_support,
                D.Normal(0.0, 1.0).has_enumerate_support]
    same(scenario)


# ---------------------------------------------------------------------------- sampling
SAMPLED = ["Normal", "Laplace", "Uniform", "Exponential", "Gamma", "Beta", "Bernoulli_probs",
           "Categorical_logits", "OneHotCategorical", "MVN_cov", "MVN_precision", "Independent"]


@pytest.mark.parametrize("name", SAMPLED)
def test_sample_shapes_dtypes_and_flags(name):
    def scenario(T):
        d, params, _ = _build(T, name, grad=True)
        s = d.sample((5, 4))
        out = [s.shape, s.dtype, s.requires_grad, d.sample().shape]
        out.append(d.has_rsample)
        if d.has_rsample:
            r = d.rsample((3,))
            out += [r.shape, r.dtype, r.requires_grad]
        return out
    same(scenario)


def _ember_dist(name):
    return _build(ember, name)[0]


@pytest.mark.parametrize("name", SAMPLED)
def test_samples_lie_in_support_and_match_moments(name):
    ember.manual_seed(1234)
    d = _ember_dist(name)
    n = 40000
    s = d.sample((n,))
    assert bool(d.support.check(s).all())
    values = s.double()
    if name.startswith("Categorical"):      # moments of the class index
        k = d.probs.shape[-1]
        classes = ember.arange(k, dtype=ember.float64)
        mean = (d.probs.double() * classes).sum(-1)
        var = (d.probs.double() * classes ** 2).sum(-1) - mean ** 2
    else:
        mean, var = d.mean.double(), d.variance.double()
    # 5 standard errors of the sample mean; the sample variance within 6%
    stderr = (var / n).sqrt()
    assert bool(((values.mean(0) - mean).abs() < 5 * stderr + 1e-9).all()), (values.mean(0), mean)
    np.testing.assert_allclose(values.var(0).numpy(), var.numpy(), rtol=0.06, atol=1e-9)
    if name.startswith("MVN"):              # the covariances too
        centred = values - values.mean(0)
        cov = (centred.unsqueeze(-1) * centred.unsqueeze(-2)).sum(0) / (n - 1)
        np.testing.assert_allclose(cov.numpy(), d.covariance_matrix.double().numpy(),
                                   rtol=0.06, atol=0.03)


def test_categorical_never_samples_a_zero_probability_class():
    ember.manual_seed(5)
    probs = ember.tensor([[0.0, 0.5, 0.0, 0.5], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 2.0]])
    s = ember.distributions.Categorical(probs).sample((2000,))
    assert set(np.unique(s[:, 0].numpy())) == {1, 3}
    assert (s[:, 1] == 0).all() and (s[:, 2] == 3).all()


def test_sampling_follows_ember_manual_seed():
    d = _ember_dist("Gamma")
    ember.manual_seed(7)
    first = [d.sample((3,)), _ember_dist("Normal").rsample((3,)),
             _ember_dist("Categorical_probs").sample((3,))]
    ember.manual_seed(7)
    again = [d.sample((3,)), _ember_dist("Normal").rsample((3,)),
             _ember_dist("Categorical_probs").sample((3,))]
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(first[0].numpy(), d.sample((3,)).numpy())


def test_sample_n_warns_and_samples():
    def scenario(T):
        result, caught = warnings_of(lambda: T.distributions.Normal(T.zeros(2), 1.0).sample_n(3))
        return result.shape, caught
    same(scenario)


def _rsample_grads(d, params):
    sample = d.rsample((6,))
    return sample, ember.autograd.grad(sample.sum(), params)


def test_rsample_reparameterised_gradients():
    """The gradients of a sample w.r.t. the parameters through its (fixed) noise."""
    D = ember.distributions
    ember.manual_seed(3)
    loc, scale = _t(ember, [0.5, -1.0], True), _t(ember, [1.5, 0.3], True)
    x, (gl, gs) = _rsample_grads(D.Normal(loc, scale), [loc, scale])
    np.testing.assert_allclose(gl.numpy(), [6.0, 6.0])
    np.testing.assert_allclose(gs.numpy(), ((x - loc) / scale).sum(0).detach().numpy(),
                               rtol=1e-5)
    x, (gl, gs) = _rsample_grads(D.Laplace(loc, scale), [loc, scale])
    np.testing.assert_allclose(gl.numpy(), [6.0, 6.0])
    np.testing.assert_allclose(gs.numpy(), ((x - loc) / scale).sum(0).detach().numpy(),
                               rtol=1e-5)
    low, high = _t(ember, [-1.0, 0.5], True), _t(ember, [2.0, 3.0], True)
    x, (gl, gh) = _rsample_grads(D.Uniform(low, high), [low, high])
    u = ((x - low) / (high - low)).detach()
    np.testing.assert_allclose(gl.numpy(), (1 - u).sum(0).numpy(), rtol=1e-5)
    np.testing.assert_allclose(gh.numpy(), u.sum(0).numpy(), rtol=1e-5)
    rate = _t(ember, [0.5, 2.0], True)
    x, (gr,) = _rsample_grads(D.Exponential(rate), [rate])
    np.testing.assert_allclose(gr.numpy(), (-x / rate).sum(0).detach().numpy(), rtol=1e-5)
    mloc = _t(ember, [0.5, -1.0], True)
    tril = _t(ember, [[1.5, 0.0], [0.4, 0.8]], True)
    x, (gl, gt) = _rsample_grads(D.MultivariateNormal(mloc, scale_tril=tril), [mloc, tril])
    np.testing.assert_allclose(gl.numpy(), [6.0, 6.0])
    eps = ember.linalg.solve_triangular(tril.detach(), (x - mloc).detach().unsqueeze(-1),
                                        upper=False).squeeze(-1)
    # d(sum of x)/dL[i, j] = sum of eps[j] over the samples, for every row i
    np.testing.assert_allclose(gt.numpy(), np.broadcast_to(eps.sum(0).numpy(), (2, 2)),
                               rtol=1e-4, atol=1e-5)


def test_gamma_rsample_gradient_matches_torchs_on_the_same_draws():
    import torch
    ember.manual_seed(11)
    alpha = _t(ember, [0.05, 0.7, 3.0, 40.0], True)
    rate = _t(ember, [1.0, 2.0, 0.5, 3.0], True)
    x = ember.distributions.Gamma(alpha, rate).rsample((50,))
    g_alpha, g_rate = ember.autograd.grad(x.sum(), [alpha, rate])
    assert x.grad_fn is not None and bool((x > 0).all())
    unit = torch.from_numpy((x * rate).detach().numpy())      # the Gamma(alpha, 1) draws
    expected = torch._standard_gamma_grad(torch.tensor(alpha.detach().numpy()).expand(50, 4),
                                          unit) / torch.tensor(rate.detach().numpy())
    np.testing.assert_allclose(g_alpha.numpy(), expected.sum(0).numpy(), rtol=2e-3)
    np.testing.assert_allclose(g_rate.numpy(), (-x / rate).sum(0).detach().numpy(), rtol=1e-5)


def test_sample_is_detached_and_rsample_is_not():
    loc = _t(ember, [0.5], True)
    d = ember.distributions.Normal(loc, 1.0)
    assert not d.sample().requires_grad and d.rsample().requires_grad
    assert math.isfinite(float(d.log_prob(d.sample()).sum().detach()))
