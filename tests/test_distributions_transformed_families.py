"""ember.distributions against torch.distributions, third part: transforms (values, inverses,
log |det J|, domains, signs, reprs, caching), TransformedDistribution and the families PyTorch
builds on it (LogNormal, Gumbel, Weibull, HalfNormal, HalfCauchy, Pareto, Kumaraswamy), and
Cauchy, Chi2 and StudentT, with the KL divergences PyTorch registers for them. Draws (from
ember's own stream) are compared by shape, dtype, support and moments."""
import numpy as np
import pytest
import torch

import ember
from tests.differential import catch, same
from test_distributions import _grads, _t, kl_scenario


def _or_error(fn):
    try:
        return fn()
    except Exception as exc:      # noqa: BLE001 - compared as an observation
        return ("raised", type(exc).__name__, str(exc))


# ---------------------------------------------------------------------------- transforms
TRANSFORMS = {
    "Exp": (lambda X, T: X.ExpTransform(), [0.3, -1.2, 2.0]),
    "Affine": (lambda X, T: X.AffineTransform(1.0, -2.5), [0.3, -1.2, 2.0]),
    "Affine_tensor": (lambda X, T: X.AffineTransform(T.tensor([1.0, 2.0, 0.5]),
                                                     T.tensor([3.0, -4.0, 0.5])),
                      [0.3, -1.2, 2.0]),
    "Affine_event": (lambda X, T: X.AffineTransform(T.tensor([1.0, 2.0, 0.5]),
                                                    T.tensor([3.0, -4.0, 0.5]), event_dim=1),
                     [[0.3, -1.2, 2.0], [1.0, 0.0, -3.0]]),
    "Sigmoid": (lambda X, T: X.SigmoidTransform(), [0.3, -1.2, 20.0]),
    "Tanh": (lambda X, T: X.TanhTransform(), [0.3, -1.2, 2.0]),
    "Power": (lambda X, T: X.PowerTransform(2.5), [0.3, 1.2, 2.0]),
    "Power_tensor": (lambda X, T: X.PowerTransform(T.tensor([2.0, -0.5, 3.0])), [0.3, 1.2, 2.0]),
    "Softmax": (lambda X, T: X.SoftmaxTransform(), [[0.3, -1.2, 2.0], [1.0, 1.0, 1.0]]),
    "Abs": (lambda X, T: X.AbsTransform(), [0.3, -1.2, 2.0]),
    "Compose": (lambda X, T: X.ComposeTransform([X.AffineTransform(0.5, 2.0), X.ExpTransform(),
                                                 X.PowerTransform(0.5)]), [0.3, -1.2, 2.0]),
    "Compose_softmax": (lambda X, T: X.ComposeTransform([X.AffineTransform(0.5, 2.0),
                                                         X.SoftmaxTransform()]),
                        [[0.3, -1.2, 2.0]]),
    "Exp_inv": (lambda X, T: X.ExpTransform().inv, [0.3, 1.2, 2.0]),
    "Sigmoid_inv": (lambda X, T: X.SigmoidTransform().inv, [0.3, 0.01, 0.9]),
    "Identity": (lambda X, T: X.identity_transform, [0.3, -1.2, 2.0]),
    "StickBreaking": (lambda X, T: X.StickBreakingTransform(),
                      [[0.3, -1.2, 2.0], [0.0, 0.0, 0.0]]),
    "StickBreaking_inv": (lambda X, T: X.StickBreakingTransform().inv,
                          [[0.3, 0.2, 0.1, 0.4], [0.25, 0.25, 0.25, 0.25]]),
}


@pytest.mark.parametrize("name", TRANSFORMS)
def test_transform_values_inverses_jacobians_and_gradients(name):
    def scenario(T):
        make, data = TRANSFORMS[name]
        t = make(T.distributions.transforms, T)
        x = _t(T, data, grad=True)
        y = t(x)
        return [y, _grads(T, [x], y), _or_error(lambda: t.inv(y)),
                _or_error(lambda: t.log_abs_det_jacobian(x, y)),
                _or_error(lambda: _grads(T, [x], t.log_abs_det_jacobian(x, y))),
                repr(t), repr(t.inv), repr(t.domain), repr(t.codomain), t.bijective,
                _or_error(lambda: t.sign), _or_error(lambda: t.event_dim),
                t.forward_shape(T.Size([2, 3])), t.inverse_shape(T.Size([2, 3])),
                t.domain.event_dim, t.codomain.event_dim, t == make(T.distributions.transforms, T),
                t.inv.inv == t, t._cache_size]
    same(scenario, rtol=1e-5, atol=1e-6)


def test_transform_caching():
    def scenario(T):
        X = T.distributions.transforms
        x = T.tensor([0.5, -1.0])
        out = []
        for t in [X.ExpTransform(cache_size=1), X.ExpTransform().with_cache(),
                  X.AffineTransform(1.0, 2.0).with_cache(1),
                  X.ComposeTransform([X.ExpTransform(), X.TanhTransform()], cache_size=1),
                  X.ExpTransform(), X.PowerTransform(2.0).with_cache(1)]:
            y = t(x)
            out += [t.inv(y) is x, t(x) is y, t._cache_size, t.inv._cache_size,
                    t.with_cache(0)._cache_size, t.inv.with_cache(1)._cache_size]
        out += [catch(X.ExpTransform, cache_size=2), catch(lambda: X.Transform().domain),
                catch(lambda: X.Transform()(x)), catch(X.SoftmaxTransform().forward_shape, ()),
                catch(lambda: X.AbsTransform().sign),
                X.ExpTransform() == X.AbsTransform(), X.ExpTransform() != X.ExpTransform(),
                X.AffineTransform(1.0, 2.0) == X.AffineTransform(1.0, 3.0),
                X.AffineTransform(0.0, 0.0).sign, X.AffineTransform(0.0, -2.0).sign,
                X.ComposeTransform([X.AffineTransform(0.0, -2.0), X.ExpTransform()]).sign,
                repr(X.ComposeTransform([])), repr(X.identity_transform.inv),
                repr(X.ComposeTransform([X.ExpTransform(), X.AffineTransform(0.0, 2.0)]).inv)]
        return out
    same(scenario)


# ---------------------------------------------------------------------------- families
# name -> (factory(D, params), parameter values, a value in the support)
FAMILIES = {
    "LogNormal": (lambda D, p: D.LogNormal(*p), [[0.5, -1.0], [1.5, 0.3]], [0.7, 2.0]),
    "Gumbel": (lambda D, p: D.Gumbel(*p), [[0.5, -1.0], [1.5, 0.3]], [0.7, -2.0]),
    "Weibull": (lambda D, p: D.Weibull(*p), [[0.5, 2.0], [1.5, 0.7]], [0.7, 2.0]),
    "HalfNormal": (lambda D, p: D.HalfNormal(*p), [[0.5, 2.0]], [0.7, 2.0]),
    "HalfCauchy": (lambda D, p: D.HalfCauchy(*p), [[0.5, 2.0]], [0.7, 2.0]),
    "Pareto": (lambda D, p: D.Pareto(*p), [[0.5, 2.0], [1.5, 3.0]], [0.7, 2.5]),
    "Pareto_heavy": (lambda D, p: D.Pareto(*p), [[0.5, 2.0], [0.7, 1.5]], [0.7, 2.5]),
    "Kumaraswamy": (lambda D, p: D.Kumaraswamy(*p), [[0.5, 2.0], [1.5, 0.7]], [0.7, 0.2]),
    "Cauchy": (lambda D, p: D.Cauchy(*p), [[0.5, -1.0], [1.5, 0.3]], [0.7, -2.0]),
    "Chi2": (lambda D, p: D.Chi2(*p), [[0.5, 3.0]], [0.7, 2.0]),
    "StudentT": (lambda D, p: D.StudentT(*p), [[0.5, 1.5, 3.0], [0.5, -1.0, 0.0],
                                                [1.5, 0.3, 2.0]], [0.7, -2.0, 1.0]),
    "StudentT_df": (lambda D, p: D.StudentT(*p), [[4.0, 0.8]], [0.7, -2.0]),
}


def _build(T, name, grad=False):
    factory, params, value = FAMILIES[name]
    params = [_t(T, p, grad) for p in params]
    return factory(T.distributions, params), params, T.tensor(value)


@pytest.mark.parametrize("name", FAMILIES)
def test_densities_moments_and_gradients(name):
    def scenario(T):
        d, params, value = _build(T, name, grad=True)
        value.requires_grad_()
        log_prob, entropy = d.log_prob(value), d.entropy()
        out = [log_prob, entropy, d.mean, d.variance, d.stddev, _or_error(lambda: d.mode),
               _grads(T, params + [value], log_prob), _grads(T, params, entropy),
               d.batch_shape, d.event_shape, d.has_rsample, d.has_enumerate_support, repr(d),
               repr(d.support), sorted((k, repr(v)) for k, v in d.arg_constraints.items())]
        for fn in ("cdf", "icdf"):
            arg = value if fn == "cdf" else T.tensor([0.2, 0.9])[:value.numel()]
            result = _or_error(lambda: getattr(d, fn)(arg))
            out.append(result)
            if isinstance(result, T.Tensor):
                out.append(_or_error(lambda: _grads(T, params, result)))
        if isinstance(d, T.distributions.TransformedDistribution):
            out += [repr(d.base_dist), [repr(t) for t in d.transforms]]
        return out
    same(scenario, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", FAMILIES)
def test_expand(name):
    def scenario(T):
        d, _, value = _build(T, name)
        e = d.expand((3,) + tuple(d.batch_shape))
        return [e.batch_shape, e.event_shape, e.log_prob(value), e.entropy(), e.mean,
                e.variance, e.sample((4,)).shape, e._validate_args, repr(e), type(e).__name__,
                repr(e.support)]
    same(scenario, rtol=1e-5, atol=1e-5)


def test_numbers_and_float64_parameters():
    def scenario(T):
        D = T.distributions
        f64 = T.tensor([1.0, 2.0], dtype=T.float64)
        return [(d.batch_shape, d.mean, d.sample().dtype, repr(d)) for d in
                [D.LogNormal(0.0, 1.0), D.Gumbel(1.0, 2.0), D.Weibull(1.0, 2.0),
                 D.HalfNormal(2.0), D.HalfCauchy(1.0), D.Pareto(1.0, 3.0),
                 D.Kumaraswamy(2.0, 3.0), D.Cauchy(0.0, 1.0), D.Chi2(3.0), D.StudentT(5.0),
                 D.LogNormal(f64, 1.0), D.Gumbel(f64, 1), D.Weibull(1.0, f64),
                 D.HalfNormal(f64), D.Pareto(f64, 3.0), D.Kumaraswamy(f64, 2.0),
                 D.Chi2(f64), D.StudentT(f64, 0.0, T.ones(3, 1, dtype=T.float64))]]
    same(scenario)


def test_invalid_parameters_and_values():
    def scenario(T):
        D = T.distributions
        neg = T.tensor([1.0, -1.0])
        return [catch(D.LogNormal, 0.0, neg), catch(D.Gumbel, 0.0, neg),
                catch(D.Weibull, neg, 1.0), catch(D.Weibull, 1.0, neg),
                catch(D.HalfNormal, neg), catch(D.HalfCauchy, neg), catch(D.Pareto, neg, 1.0),
                catch(D.Pareto, 1.0, neg), catch(D.Kumaraswamy, neg, 1.0),
                catch(D.Cauchy, 0.0, neg), catch(D.Chi2, neg), catch(D.StudentT, neg),
                catch(D.StudentT, 1.0, 0.0, neg),
                catch(D.LogNormal(0.0, 1.0).log_prob, T.tensor([-1.0])),
                catch(D.HalfNormal(1.0).log_prob, T.tensor([-1.0])),
                catch(D.Pareto(2.0, 1.0).log_prob, T.tensor([1.0])),
                catch(D.Kumaraswamy(2.0, 1.0).log_prob, T.tensor([1.5])),
                catch(D.Weibull(2.0, 1.0).log_prob, T.tensor([-0.5])),
                catch(D.Chi2(2.0).log_prob, T.tensor([-0.5])),
                catch(D.LogNormal(0.0, 1.0).cdf, T.tensor([-1.0])),
                catch(D.LogNormal(T.zeros(2), 1.0).log_prob, T.ones(3)),
                catch(D.TransformedDistribution, D.Normal(0.0, 1.0), "exp"),
                catch(D.TransformedDistribution, D.Normal(0.0, 1.0), [D.ExpTransform(), 3]),
                catch(D.TransformedDistribution, D.Normal(0.0, 1.0), D.SoftmaxTransform()),
                D.HalfNormal(1.0, validate_args=False).log_prob(T.tensor([-1.0, 1.0])),
                D.HalfCauchy(1.0, validate_args=False).log_prob(T.tensor([-1.0, 1.0]))]
    same(scenario)


def test_transformed_distribution():
    def scenario(T):
        D, X = T.distributions, T.distributions.transforms
        loc = _t(T, [[0.5, -1.0, 0.2], [0.1, 0.3, 2.0]], grad=True)
        base = D.Normal(loc, 1.0)
        value = T.tensor([0.2, 0.3, 0.5])
        simplex = D.TransformedDistribution(base, [X.SoftmaxTransform()])
        affine = D.TransformedDistribution(
            base, [X.AffineTransform(T.tensor([1.0, 2.0, 3.0]), 2.0, event_dim=1)])
        falling = D.TransformedDistribution(
            D.Uniform(T.zeros(2), T.ones(2)), [X.AffineTransform(1.0, -2.0), X.ExpTransform()])
        chain = D.TransformedDistribution(D.Normal(T.zeros(3), 1.0),
                                          X.AffineTransform(T.ones(2, 1), 1.0))
        ident = D.TransformedDistribution(D.Exponential(T.ones(2)), [])
        lp = affine.log_prob(value)
        return [simplex.batch_shape, simplex.event_shape, repr(simplex.support),
                repr(simplex.base_dist), affine.batch_shape, affine.event_shape, lp,
                _grads(T, [loc], lp), repr(affine), repr(affine.support),
                falling.cdf(T.tensor([0.5, 2.0])), falling.icdf(T.tensor([0.25, 0.75])),
                falling.log_prob(T.tensor([0.5, 2.0])), chain.batch_shape,
                repr(chain.base_dist), chain.base_dist.batch_shape,
                repr(ident.support), ident.log_prob(T.tensor([1.0, 2.0])),
                catch(lambda: affine.mean), catch(affine.entropy), affine.has_rsample,
                simplex.expand((4, 2)).batch_shape,
                repr(simplex.expand((4, 2)).base_dist),
                simplex.expand((4, 2)).base_dist.batch_shape,
                repr(D.TransformedDistribution.arg_constraints),
                affine.rsample((5,)).shape, falling.sample((2,)).shape]
    same(scenario, rtol=1e-5, atol=1e-6)


def test_logistic_normal():
    def scenario(T):
        D = T.distributions
        loc = _t(T, [[0.5, -1.0], [0.2, 0.1]], grad=True)
        scale = _t(T, [[1.5, 0.3], [0.4, 1.0]], grad=True)
        d = D.LogisticNormal(loc, scale)
        value = T.tensor([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])
        lp = d.log_prob(value)
        scalar = D.LogisticNormal(T.zeros(2), T.ones(2))
        e = d.expand((3, 2))
        return [lp, _grads(T, [loc, scale], lp), d.batch_shape, d.event_shape, repr(d),
                repr(d.support), d.loc, d.scale, repr(d.base_dist), d.has_rsample,
                catch(lambda: d.mean), catch(d.entropy), scalar.batch_shape,
                scalar.event_shape, scalar.log_prob(T.tensor([0.2, 0.3, 0.5])),
                e.batch_shape, e.log_prob(value), repr(e.base_dist), d.sample((4,)).shape,
                d.rsample().requires_grad, catch(D.LogisticNormal, T.zeros(2), -T.ones(2)),
                catch(d.log_prob, T.tensor([0.2, 0.3, 0.6])),
                repr(D.LogisticNormal(0.0, 1.0).base_dist),
                D.LogisticNormal(0.0, 1.0).event_shape]
    same(scenario, rtol=1e-5, atol=1e-5)


def test_logistic_normal_samples():
    ember.manual_seed(31)
    loc, scale = ember.tensor([0.5, -1.0]), ember.tensor([0.3, 0.8])
    s = ember.distributions.LogisticNormal(loc, scale).sample((20000,))
    assert s.shape == (20000, 3)
    assert bool(ember.distributions.constraints.simplex.check(s).all())
    # the last stick break: log(y2 / y3) = logit(z2) is the second normal coordinate itself
    last = (s[:, 1] / s[:, 2]).log().double()
    assert abs(last.mean().item() - -1.0) < 5 * 0.8 / 20000 ** 0.5
    np.testing.assert_allclose(last.std().item(), 0.8, rtol=0.03)


# ---------------------------------------------------------------------------- sampling
@pytest.mark.parametrize("name", FAMILIES)
def test_sample_shapes_dtypes_and_flags(name):
    def scenario(T):
        d, _, _ = _build(T, name, grad=True)
        s = d.sample((5, 4))
        out = [s.shape, s.dtype, s.requires_grad, d.sample().shape, d.has_rsample]
        if d.has_rsample:
            r = d.rsample((3,))
            out += [r.shape, r.dtype, r.requires_grad]
        return out
    same(scenario)


# families with finite moments, as sampled below (name, params)
MOMENTS = {
    "LogNormal": lambda D: D.LogNormal(ember.tensor([0.5, -1.0]), ember.tensor([0.5, 0.3])),
    "Gumbel": lambda D: D.Gumbel(ember.tensor([0.5, -1.0]), ember.tensor([1.5, 0.3])),
    "Weibull": lambda D: D.Weibull(ember.tensor([0.5, 2.0]), ember.tensor([1.5, 3.0])),
    "HalfNormal": lambda D: D.HalfNormal(ember.tensor([0.5, 2.0])),
    "Pareto": lambda D: D.Pareto(ember.tensor([0.5, 2.0]), ember.tensor([5.0, 6.0])),
    "Kumaraswamy": lambda D: D.Kumaraswamy(ember.tensor([0.5, 2.0]), ember.tensor([1.5, 0.7])),
    "Chi2": lambda D: D.Chi2(ember.tensor([0.5, 3.0])),
    "StudentT": lambda D: D.StudentT(ember.tensor([9.0, 12.0]), ember.tensor([1.0, -1.0]),
                                     ember.tensor([2.0, 0.5])),
}


@pytest.mark.parametrize("name", MOMENTS)
def test_samples_lie_in_support_and_match_moments(name):
    ember.manual_seed(2024)
    d = MOMENTS[name](ember.distributions)
    n = 40000
    s = d.sample((n,))
    assert bool(d.support.check(s).all())
    values, mean, var = s.double(), d.mean.double(), d.variance.double()
    stderr = (var / n).sqrt()
    assert bool(((values.mean(0) - mean).abs() < 5 * stderr).all()), (values.mean(0), mean)
    np.testing.assert_allclose(values.var(0).numpy(), var.numpy(), rtol=0.1)


@pytest.mark.parametrize("name", ["Cauchy", "HalfCauchy"])
def test_heavy_tailed_samples_match_the_cdf(name):
    """No moments: the empirical CDF at a few points matches the CDF."""
    ember.manual_seed(77)
    d = _build(ember, name)[0]
    n = 40000
    s = d.sample((n,))
    assert bool(d.support.check(s).all())
    for q in (0.1, 0.5, 0.8):
        point = d.icdf(ember.full(d.batch_shape, q))
        empirical = (s <= point).double().mean(0).numpy()
        np.testing.assert_allclose(empirical, q, atol=5 * (q * (1 - q) / n) ** 0.5)


def test_rsample_gradients_match_torchs_on_the_same_draws():
    """A draw x = g(noise; params), g monotone in the noise, moves with the parameters as the
    quantile at a fixed level moves: dx/dparam = d icdf(cdf(x))/dparam with the level cdf(x)
    held fixed. PyTorch (in float64) gives that for ember's draws."""
    ember.manual_seed(5)
    for name in ["LogNormal", "Gumbel", "Weibull", "HalfNormal", "HalfCauchy", "Pareto",
                 "Kumaraswamy", "Cauchy"]:
        d, params, _ = _build(ember, name, grad=True)
        x = d.rsample((20,))
        grads = ember.autograd.grad(x.sum(), params)
        factory, values, _ = FAMILIES[name]
        tparams = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]
        td = factory(torch.distributions, tparams)
        with torch.no_grad():
            level = td.cdf(torch.tensor(x.detach().numpy(), dtype=torch.float64))
        tx = td.icdf(level)
        np.testing.assert_allclose(tx.detach().numpy(), x.detach().numpy(), rtol=1e-4,
                                   atol=1e-5, err_msg=name)
        expected = torch.autograd.grad(tx.sum(), tparams)
        for g, e in zip(grads, expected):
            np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-3, atol=1e-4,
                                       err_msg=name)


def test_studentt_and_chi2_rsample_gradients_move_the_mean():
    ember.manual_seed(8)
    loc, scale = _t(ember, [1.0, -1.0], True), _t(ember, [2.0, 0.5], True)
    x = ember.distributions.StudentT(ember.tensor([9.0, 12.0]), loc, scale).rsample((30000,))
    gl, gs = ember.autograd.grad(x.mean(0).sum(), [loc, scale])
    np.testing.assert_allclose(gl.numpy(), [1.0, 1.0], rtol=1e-6)
    np.testing.assert_allclose(gs.numpy(), [0.0, 0.0], atol=0.03)
    df = _t(ember, [0.5, 3.0], True)
    x = ember.distributions.Chi2(df).rsample((30000,))
    (gd,) = ember.autograd.grad(x.mean(0).sum(), [df])
    np.testing.assert_allclose(gd.numpy(), [1.0, 1.0], rtol=0.05)    # E[x] = df


# ---------------------------------------------------------------------------- KL
KL_PAIRS = {
    "Gumbel_Gumbel": lambda D, a, b: (D.Gumbel(a - 1, b), D.Gumbel(b, a)),
    "HalfNormal_HalfNormal": lambda D, a, b: (D.HalfNormal(a), D.HalfNormal(b)),
    "Pareto_Pareto": lambda D, a, b: (D.Pareto(b, a + 1), D.Pareto(b / 2, a)),
    "Cauchy_Cauchy": lambda D, a, b: (D.Cauchy(a - 1, b), D.Cauchy(b, a)),
    "Chi2_Chi2": lambda D, a, b: (D.Chi2(a), D.Chi2(b)),
    "LogNormal_LogNormal": lambda D, a, b: (D.LogNormal(a, b), D.LogNormal(b, a)),
    "Exponential_Gumbel": lambda D, a, b: (D.Exponential(a), D.Gumbel(b, a)),
    "Gamma_Gumbel": lambda D, a, b: (D.Gamma(a, b), D.Gumbel(b, a)),
    "Normal_Gumbel": lambda D, a, b: (D.Normal(a, b), D.Gumbel(b, a)),
    "Uniform_Gumbel": lambda D, a, b: (D.Uniform(a - 1, a + b), D.Gumbel(b, a)),
    "Gumbel_Normal": lambda D, a, b: (D.Gumbel(a, b), D.Normal(b, a)),
    "Uniform_Pareto": lambda D, a, b: (D.Uniform(a + 4, a + b + 4), D.Pareto(b / 2, a)),
    "Pareto_Exponential": lambda D, a, b: (D.Pareto(b, a + 1), D.Exponential(a)),
    "Pareto_Gamma": lambda D, a, b: (D.Pareto(b, a + 1), D.Gamma(a, b)),
    "Pareto_Normal": lambda D, a, b: (D.Pareto(b, a + 2.5), D.Normal(a, b)),
}


@pytest.mark.parametrize("pair", KL_PAIRS)
def test_kl_divergence_and_its_gradients(pair):
    same(kl_scenario(KL_PAIRS[pair], [[0.5, 1.2, 3.0], [2.0, 0.7, 0.4]],
                     [[1.5, 0.3, 1.0], [0.6, 2.5, 4.0]]), rtol=1e-4, atol=1e-5)


def test_kl_infinite_and_unsupported_cases():
    def scenario(T):
        D, kl = T.distributions, T.distributions.kl_divergence
        x = T.tensor([0.5, 2.0])
        infinite = [(D.Gumbel(x, x), q) for q in
                    [D.Beta(x, x), D.Exponential(x), D.Gamma(x, x), D.Pareto(x, x),
                     D.Uniform(x, x + 1)]]
        infinite += [(p, D.Pareto(x, x)) for p in
                     [D.Beta(x, x), D.Exponential(x), D.Gamma(x, x), D.Laplace(x, x),
                      D.Normal(x, x)]]
        infinite += [(D.Pareto(x, x), q) for q in [D.Beta(x, x), D.Uniform(x, x + 1)]]
        infinite += [(D.Pareto(x, T.tensor([0.5, 1.5])), D.Normal(x, x)),
                     (D.Pareto(x, T.tensor([0.5, 1.5])), D.Gamma(x, x)),
                     (D.Pareto(x, T.tensor([0.5, 1.5])), D.Exponential(x)),
                     (D.Pareto(x, T.tensor([1.0, 2.0])), D.Normal(x, x)),
                     (D.Uniform(x - 3, x), D.Pareto(x, x)),
                     (D.Pareto(x, x), D.Pareto(x + 1, x)),
                     (D.Pareto(x, x), D.Pareto(x, x * 3))]
        return ([catch(kl, p, q) for p, q in infinite] +
                [catch(kl, D.LogNormal(x, x), D.Gumbel(x, x)),
                 catch(kl, D.StudentT(x), D.StudentT(x)),
                 catch(kl, D.Weibull(x, x), D.Weibull(x, x)),
                 catch(kl, D.HalfNormal(x), D.HalfNormal(T.tensor([1.0, 2.0, 3.0])[:2])),
                 catch(kl, D.TransformedDistribution(D.Normal(x, 1.0), D.ExpTransform()),
                       D.TransformedDistribution(D.Normal(x, 1.0), D.TanhTransform()))])
    same(scenario)
