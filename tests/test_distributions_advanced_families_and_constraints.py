"""ember.distributions against torch.distributions, fourth part: ContinuousBernoulli,
FisherSnedecor, GeneralizedPareto, InverseGamma, LKJCholesky, LowRankMultivariateNormal,
MixtureSameFamily, OneHotCategoricalStraightThrough, RelaxedBernoulli,
RelaxedOneHotCategorical, VonMises, Wishart and ExponentialFamily; the transforms Cat, Stack,
Independent, Reshape, Softplus, LowerCholesky, PositiveDefinite, CorrCholesky and
CumulativeDistribution; biject_to / transform_to; the KLs PyTorch registers for these; and the
submodule names. Values in float64 where tight; draws (ember's own stream) by moments."""
import numpy as np
import pytest
import torch

import ember
from tests.differential import catch, same, warnings_of
from test_distributions import _grads, _t, kl_scenario


def _or_error(fn):
    return catch(fn)


def _f64(T, data, grad=False):
    return _t(T, data, grad, dtype=T.float64)


def _corr_chol(T):
    return T.tensor([[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.0, 0.6, 0.8]], dtype=T.float64)


# ---------------------------------------------------------------------------- families
# name -> (factory(D, params, T), float64 parameter values, a value in the support)
FAMILIES = {
    "ContinuousBernoulli_probs": (lambda D, p, T: D.ContinuousBernoulli(probs=p[0]),
                                  [[0.2, 0.5, 0.4995, 0.9]], [0.3, 0.7, 0.1, 0.95]),
    "ContinuousBernoulli_logits": (lambda D, p, T: D.ContinuousBernoulli(logits=p[0]),
                                   [[-1.5, 0.0, 0.003, 2.5]], [0.3, 0.7, 0.1, 0.95]),
    "FisherSnedecor": (lambda D, p, T: D.FisherSnedecor(*p),
                       [[1.5, 3.0, 5.0, 9.0], [1.5, 3.0, 4.5, 12.0]], [0.3, 1.7, 0.1, 2.5]),
    "GeneralizedPareto": (lambda D, p, T: D.GeneralizedPareto(*p),
                          [[0.0, 0.5, -1.0, 1.0], [1.0, 2.0, 0.5, 1.5],
                           [-0.4, 0.0, 0.3, 0.8]], [0.3, 1.7, 0.1, 2.5]),
    "InverseGamma": (lambda D, p, T: D.InverseGamma(*p),
                     [[0.5, 1.5, 3.0, 4.0], [1.0, 2.0, 0.5, 1.5]], [0.3, 1.7, 0.1, 2.5]),
    "VonMises": (lambda D, p, T: D.VonMises(*p),
                 [[0.0, 1.0, -2.0, 3.0], [0.5, 3.0, 0.01, 40.0]], [0.3, 1.7, -3.0, 2.5]),
    "LKJCholesky": (lambda D, p, T: D.LKJCholesky(3, p[0]), [[0.5, 1.0, 2.5]],
                    [[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.0, 0.6, 0.8]]),
    "LowRankMVN": (lambda D, p, T: D.LowRankMultivariateNormal(*p),
                   [[[0.5, -1.0, 0.2], [0.0, 1.0, 2.0]],
                    [[1.0, 0.5], [-0.3, 0.2], [0.7, -1.1]], [[1.5, 0.3, 0.8], [0.4, 1.0, 2.0]]],
                   [0.3, 1.7, 0.1]),
    "RelaxedBernoulli": (lambda D, p, T: D.RelaxedBernoulli(p[0], probs=p[1]),
                         [[0.5, 2.0, 0.7], [0.3, 0.6, 0.9]], [0.3, 0.7, 0.1]),
    "RelaxedBernoulli_logits": (lambda D, p, T: D.RelaxedBernoulli(p[0], logits=p[1]),
                                [[0.5, 2.0, 0.7], [0.3, -0.6, 1.9]], [0.3, 0.7, 0.1]),
    "RelaxedOneHotCategorical": (lambda D, p, T: D.RelaxedOneHotCategorical(p[0], probs=p[1]),
                                 [0.7, [[0.3, 0.6, 0.1], [0.2, 0.2, 0.6]]],
                                 [[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]),
    "RelaxedOneHotCategorical_logits": (
        lambda D, p, T: D.RelaxedOneHotCategorical(p[0], logits=p[1]),
        [[1.5], [[0.3, -0.6, 0.1], [1.2, 0.2, -0.6]]], [[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]),
    "Wishart": (lambda D, p, T: D.Wishart(p[0], covariance_matrix=p[1]),
                [[3.0, 4.5], [[[2.0, 0.5], [0.5, 1.0]], [[1.0, -0.3], [-0.3, 0.5]]]],
                [[1.5, 0.2], [0.2, 0.9]]),
    "Wishart_scale_tril": (lambda D, p, T: D.Wishart(p[0], scale_tril=p[1]),
                           [[3.0, 2.5], [[1.0, 0.0], [0.5, 2.0]]], [[1.5, 0.2], [0.2, 0.9]]),
    "Wishart_precision": (lambda D, p, T: D.Wishart(p[0], precision_matrix=p[1]),
                          [[3.0, 5.0], [[2.0, 0.5], [0.5, 1.0]]], [[1.5, 0.2], [0.2, 0.9]]),
    "Mixture": (lambda D, p, T: D.MixtureSameFamily(D.Categorical(probs=p[0]),
                                                    D.Normal(p[1], p[2])),
                [[[0.2, 0.5, 0.3], [0.1, 0.1, 0.8]], [[0.0, 1.0, -2.0], [0.5, 0.3, 3.0]],
                 [[1.0, 0.5, 2.0], [0.3, 1.0, 0.7]]], [0.3, -1.0]),
    "Mixture_mvn": (lambda D, p, T: D.MixtureSameFamily(
        D.Categorical(logits=p[0]), D.Independent(D.Normal(p[1], p[2]), 1)),
        [[0.2, -0.5], [[0.0, 1.0], [0.5, -1.0]], [[1.0, 0.5], [2.0, 0.7]]], [0.3, -1.0]),
    "OneHotStraightThrough": (lambda D, p, T: D.OneHotCategoricalStraightThrough(probs=p[0]),
                              [[[0.3, 0.6, 0.1], [0.2, 0.2, 0.6]]], [[0.0, 1.0, 0.0],
                                                                     [0.0, 0.0, 1.0]]),
}


# PyTorch's GeneralizedPareto compares its concentration with a float32 zero, which fails for
# float64 parameters: it is compared in float32
FLOAT32 = {"GeneralizedPareto"}


def _build(T, name, grad=False):
    factory, params, value = FAMILIES[name]
    dtype = T.float32 if name in FLOAT32 else T.float64
    params = [_t(T, p, grad, dtype) for p in params]
    return factory(T.distributions, params, T), params, _t(T, value, dtype=dtype)


def _tolerances(name):
    return dict(rtol=1e-5, atol=1e-6) if name in FLOAT32 else dict(rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("name", FAMILIES)
def test_densities_moments_and_gradients(name):
    def scenario(T):
        d, params, value = _build(T, name, grad=True)
        if not name.startswith("OneHot"):
            value.requires_grad_()
        log_prob = d.log_prob(value)
        entropy = _or_error(d.entropy)
        out = [log_prob, entropy, _or_error(lambda: d.mean), _or_error(lambda: d.variance),
               _or_error(lambda: d.stddev), _or_error(lambda: d.mode),
               _grads(T, [p for p in params] + ([value] if value.requires_grad else []),
                      log_prob),
               d.batch_shape, d.event_shape, d.has_rsample, d.has_enumerate_support, repr(d),
               repr(d.support), sorted((k, repr(v)) for k, v in d.arg_constraints.items()),
               isinstance(d, T.distributions.ExponentialFamily)]
        if isinstance(entropy, T.Tensor) and entropy.requires_grad:
            out.append(_grads(T, params, entropy))
        for fn in ("cdf", "icdf"):
            arg = value if fn == "cdf" else T.full(d.batch_shape, 0.3, dtype=value.dtype)
            result = _or_error(lambda: getattr(d, fn)(arg))
            out.append(result)
            if isinstance(result, T.Tensor):
                out.append(_or_error(lambda: _grads(T, params, result)))
        if isinstance(d, T.distributions.TransformedDistribution):
            out += [repr(d.base_dist), [repr(t) for t in d.transforms]]
        return out
    same(scenario, **_tolerances(name))


@pytest.mark.parametrize("name", FAMILIES)
def test_expand(name):
    def scenario(T):
        d, _, value = _build(T, name)
        e = d.expand((3,) + tuple(d.batch_shape))
        return [e.batch_shape, e.event_shape, e.log_prob(value), _or_error(e.entropy),
                _or_error(lambda: e.mean), _or_error(lambda: e.variance),
                e.sample((4,)).shape, e.sample().dtype, e._validate_args, repr(e),
                type(e).__name__, repr(e.support)]
    same(scenario, **_tolerances(name))


@pytest.mark.parametrize("name", FAMILIES)
def test_sample_shapes_dtypes_and_flags(name):
    def scenario(T):
        d, _, _ = _build(T, name, grad=True)
        s = d.sample((5, 4))
        out = [s.shape, s.dtype, s.requires_grad, d.sample().shape, d.has_rsample,
               bool(d.support.check(s).all())]
        if d.has_rsample:
            r = d.rsample((3,))
            out += [r.shape, r.dtype, r.requires_grad]
        else:
            out.append(catch(d.rsample))
        return out
    same(scenario)


def test_invalid_parameters_and_values():
    def scenario(T):
        D = T.distributions
        neg, x = T.tensor([1.0, -1.0]), T.tensor([0.5, 2.0])
        eye = T.eye(2)
        return [catch(D.ContinuousBernoulli), catch(D.ContinuousBernoulli, x, x),
                catch(D.ContinuousBernoulli(T.tensor([0.3])).log_prob, T.tensor([1.5])),
                catch(D.FisherSnedecor, neg, 1.0), catch(D.FisherSnedecor, 1.0, neg),
                catch(D.FisherSnedecor(x, x).log_prob, T.tensor([-1.0, 1.0])),
                catch(D.GeneralizedPareto, 0.0, neg, 0.5),
                catch(D.GeneralizedPareto(0.0, 1.0, -0.5).log_prob, T.tensor([3.0])),
                catch(D.GeneralizedPareto(0.0, 1.0, 0.5).log_prob, T.tensor([-3.0])),
                catch(D.InverseGamma, neg, 1.0), catch(D.InverseGamma, 1.0, neg),
                catch(D.InverseGamma(x, x).log_prob, T.tensor([-1.0, 1.0])),
                catch(D.VonMises, 0.0, neg), catch(D.VonMises, T.tensor([float("nan")]), 1.0),
                catch(D.LKJCholesky, 1), catch(D.LKJCholesky, 3, neg),
                catch(D.LKJCholesky(2).log_prob, T.tensor([[1.0, 0.0], [0.5, 0.5]])),
                catch(D.LowRankMultivariateNormal, T.tensor(0.0), T.ones(3, 1), T.ones(3)),
                catch(D.LowRankMultivariateNormal, T.zeros(3), T.ones(3), T.ones(3)),
                catch(D.LowRankMultivariateNormal, T.zeros(3), T.ones(2, 1), T.ones(3)),
                catch(D.LowRankMultivariateNormal, T.zeros(3), T.ones(3, 1), T.ones(2)),
                catch(D.LowRankMultivariateNormal, T.zeros(2, 3), T.ones(3, 3, 1), T.ones(3)),
                catch(D.LowRankMultivariateNormal, T.zeros(2), T.ones(2, 1), neg),
                catch(D.Wishart, T.tensor([0.5, 3.0]), eye),
                catch(D.Wishart, T.tensor([0.5, 3.0]), eye, validate_args=False),
                catch(D.Wishart, 3.0), catch(D.Wishart, 3.0, eye, scale_tril=eye),
                catch(D.Wishart, 3.0, T.ones(2)), catch(D.Wishart, 3.0, -eye),
                catch(D.Wishart, 3.0, precision_matrix=T.ones(2, 2)),
                catch(D.Wishart, 3.0, scale_tril=T.ones(2, 2)),
                catch(D.Wishart(3.0, eye).log_prob, T.ones(2, 2)),
                catch(D.MixtureSameFamily, D.Normal(0.0, 1.0), D.Normal(T.zeros(3), 1.0)),
                catch(D.MixtureSameFamily, D.Categorical(T.ones(3)), 3),
                catch(D.MixtureSameFamily, D.Categorical(T.ones(2, 3)),
                      D.Normal(T.zeros(4, 3), 1.0)),
                catch(D.MixtureSameFamily, D.Categorical(T.ones(2)), D.Normal(T.zeros(3), 1.0)),
                catch(D.MixtureSameFamily(D.Categorical(T.ones(2)),
                                          D.Exponential(T.ones(2))).log_prob, T.tensor(-1.0)),
                catch(D.RelaxedBernoulli, T.tensor(0.5)),
                catch(D.RelaxedBernoulli, T.tensor(0.5), T.tensor([1.5])),
                catch(D.RelaxedBernoulli(T.tensor(0.5), T.tensor([0.5])).log_prob,
                      T.tensor([1.5])),
                catch(D.RelaxedOneHotCategorical, T.tensor(0.5), T.tensor([0.5, -0.5])),
                catch(D.RelaxedOneHotCategorical(T.tensor(0.5), T.ones(3)).log_prob,
                      T.tensor([0.5, 0.6, 0.1])),
                catch(D.OneHotCategoricalStraightThrough(T.ones(3)).log_prob,
                      T.tensor([0.5, 0.5, 0.0]))]
    same(scenario)


def test_numbers_and_dtypes_of_parameters():
    def scenario(T):
        D = T.distributions
        f64 = T.tensor([0.3, 0.6], dtype=T.float64)
        ds = [D.ContinuousBernoulli(0.3), D.ContinuousBernoulli(logits=f64),
              D.FisherSnedecor(2.0, 3.0), D.FisherSnedecor(f64, 3),
              D.GeneralizedPareto(0.0, 1.0, 0.2), D.GeneralizedPareto(f64, 1.0, 0.0),
              D.InverseGamma(2.0, 3.0), D.InverseGamma(f64, 3.0), D.VonMises(0.0, 1.0),
              D.VonMises(f64, 2), D.LKJCholesky(2), D.LKJCholesky(4, f64),
              D.Wishart(3, T.eye(2)), D.Wishart(T.tensor([3.0, 4.0]), T.eye(2)),
              D.RelaxedBernoulli(T.tensor(0.5), probs=0.3),
              D.RelaxedBernoulli(T.tensor(0.5), logits=f64)]
        out = []
        for d in ds:
            out += [d.batch_shape, d.event_shape, d.sample().dtype, repr(d),
                    _or_error(lambda: d.mean)]
        return out
    same(scenario)


def test_ones_probabilities_and_lims_of_continuous_bernoulli():
    def scenario(T):
        D = T.distributions
        cb = D.ContinuousBernoulli(probs=T.tensor([0.0, 1.0, 0.4995, 0.5]))
        wide = D.ContinuousBernoulli(probs=T.tensor([0.3, 0.45]), lims=(0.4, 0.6))
        value = T.tensor([0.2, 0.8, 0.0, 1.0])
        return [cb.probs, cb.logits, cb.mean, cb.variance, cb.entropy(), cb.log_prob(value),
                cb.cdf(value), cb.icdf(T.tensor([0.2, 0.8, 0.3, 0.5])), cb.param_shape,
                wide.mean, wide.variance, wide.log_prob(T.tensor([0.3, 0.6])),
                wide.expand((2, 2)).mean, cb._natural_params,
                cb._log_normalizer(T.tensor([-2.0, 0.0, 1e-3, 3.0])),
                catch(lambda: cb.mode), D.ContinuousBernoulli(probs=T.tensor([1.5])).probs]
    same(scenario)


def test_exponential_family_entropy_by_bregman_divergence():
    def scenario(T):
        D = T.distributions
        p = _f64(T, [0.2, 0.7, 0.4], grad=True)
        cb = D.ContinuousBernoulli(logits=p)
        bregman = D.ExponentialFamily.entropy(cb)
        df = _f64(T, [3.0, 4.5], grad=True)
        w = D.Wishart(df, _f64(T, [[2.0, 0.5], [0.5, 1.0]]))
        w_bregman = D.ExponentialFamily.entropy(w)
        return [bregman, cb.entropy(), _grads(T, [p], bregman), w_bregman, w.entropy(),
                _grads(T, [df], w_bregman), [issubclass(getattr(D, n), D.ExponentialFamily)
                                             for n in ("Bernoulli", "Beta", "Binomial",
                                                       "Chi2", "Dirichlet", "Exponential",
                                                       "Gamma", "Normal", "Poisson",
                                                       "Wishart", "ContinuousBernoulli",
                                                       "Uniform", "Categorical")],
                catch(D.ExponentialFamily(validate_args=False).entropy)]
    same(scenario, rtol=1e-9, atol=1e-10)


def test_lowrank_matrices_and_mixture_layouts():
    def scenario(T):
        D = T.distributions
        W = _f64(T, [[[1.0, 0.5], [-0.3, 0.2], [0.7, -1.1]]], grad=True)
        d = D.LowRankMultivariateNormal(_f64(T, [[0.5, -1.0, 0.2], [0.0, 1.0, 2.0]]), W,
                                        _f64(T, [1.5, 0.3, 0.8]))
        full = D.MultivariateNormal(d.loc, covariance_matrix=d.covariance_matrix)
        value = _f64(T, [0.3, 1.7, 0.1])
        out = [d.covariance_matrix, d.precision_matrix, d.scale_tril, d.variance,
               d._unbroadcasted_cov_factor.shape, d.cov_factor.shape, d.cov_diag.shape,
               full.log_prob(value), d.log_prob(value), _grads(T, [W], d.precision_matrix),
               _grads(T, [W], d.scale_tril), d.expand((4, 2)).covariance_matrix.shape]
        # mixtures whose categorical has fewer batch dims than the components
        comp = D.Normal(_f64(T, [[[0.0, 1.0], [2.0, -1.0]], [[0.5, 0.2], [1.0, 3.0]]]), 1.0)
        for mix in (D.Categorical(_f64(T, [0.3, 0.7])),
                    D.Categorical(_f64(T, [[0.3, 0.7], [0.5, 0.5]]))):
            m = D.MixtureSameFamily(mix, comp)
            out += [m.batch_shape, m.mean, m.variance, m.log_prob(_f64(T, [0.1, 0.4])),
                    m.cdf(_f64(T, [0.1, 0.4])), repr(m.support),
                    m.support.event_dim, m.mixture_distribution.batch_shape,
                    m.component_distribution.batch_shape]
        return out
    same(scenario, rtol=1e-9, atol=1e-10)


# ---------------------------------------------------------------------------- transforms
TRANSFORMS = {
    "Softplus": (lambda X, T: X.SoftplusTransform(), [0.3, -1.2, 25.0]),
    "Softplus_inv": (lambda X, T: X.SoftplusTransform().inv, [0.3, 1.2, 25.0]),
    "Independent": (lambda X, T: X.IndependentTransform(X.ExpTransform(), 1),
                    [[0.3, -1.2, 2.0], [1.0, 0.0, -3.0]]),
    "Independent_2": (lambda X, T: X.IndependentTransform(X.SoftmaxTransform(), 1),
                      [[0.3, -1.2, 2.0], [1.0, 0.0, -3.0]]),
    "Reshape": (lambda X, T: X.ReshapeTransform((2, 3), (3, 2)),
                [[0.3, -1.2, 2.0], [1.0, 0.0, -3.0]]),
    "LowerCholesky": (lambda X, T: X.LowerCholeskyTransform(),
                      [[0.3, -1.2, 2.0], [1.0, 0.0, -3.0], [0.5, 0.2, 0.1]]),
    "PositiveDefinite": (lambda X, T: X.PositiveDefiniteTransform(),
                         [[0.3, -1.2, 2.0], [1.0, 0.0, -3.0], [0.5, 0.2, 0.1]]),
    "CorrCholesky": (lambda X, T: X.CorrCholeskyTransform(),
                     [[0.3, -1.2, 2.0], [1.0, 0.0, -3.0]]),
    "CorrCholesky_6": (lambda X, T: X.CorrCholeskyTransform(),
                       [0.3, -1.2, 2.0, 1.0, 0.0, -0.5]),
    "Cat": (lambda X, T: X.CatTransform([X.ExpTransform(), X.AffineTransform(1.0, -2.0)],
                                        dim=-1, lengths=[1, 2]),
            [[0.3, -1.2, 2.0], [1.0, 0.0, -3.0]]),
    "Cat_dim0": (lambda X, T: X.CatTransform([X.ExpTransform(), X.SigmoidTransform()]),
                 [[0.3, -1.2, 2.0], [1.0, 0.0, -3.0]]),
    "Cat_event": (lambda X, T: X.CatTransform([X.IndependentTransform(X.ExpTransform(), 1),
                                               X.SoftmaxTransform()], dim=0),
                  [[0.3, -1.2, 2.0], [1.0, 0.0, -3.0]]),
    "Stack": (lambda X, T: X.StackTransform([X.ExpTransform(), X.AffineTransform(1.0, 3.0)],
                                            dim=1),
              [[0.3, -1.2], [1.0, 0.0], [0.5, 2.0]]),
    "Stack_dim0": (lambda X, T: X.StackTransform([X.TanhTransform(), X.ExpTransform()]),
                   [[0.3, -1.2, 2.0], [1.0, 0.0, -3.0]]),
    "CDF": (lambda X, T: X.CumulativeDistributionTransform(
        T.distributions.Normal(T.tensor(0.5, dtype=T.float64), 2.0)), [0.3, -1.2, 2.0]),
    "CDF_inv": (lambda X, T: X.CumulativeDistributionTransform(
        T.distributions.Laplace(T.tensor(0.5, dtype=T.float64), 2.0)).inv, [0.3, 0.1, 0.9]),
}


@pytest.mark.parametrize("name", TRANSFORMS)
def test_transform_values_inverses_jacobians_and_gradients(name):
    def scenario(T):
        make, data = TRANSFORMS[name]
        t = make(T.distributions.transforms, T)
        x = _f64(T, data, grad=True)
        y = t(x)
        back = _or_error(lambda: t.inv(y))
        out = [y, _grads(T, [x], y), back, _or_error(lambda: t.log_abs_det_jacobian(x, y)),
               _or_error(lambda: _grads(T, [x], t.log_abs_det_jacobian(x, y))),
               repr(t), repr(t.inv), repr(t.domain), repr(t.codomain), t.bijective,
               _or_error(lambda: t.sign), _or_error(lambda: t.event_dim),
               t.domain.event_dim, t.codomain.event_dim, t == make(T.distributions.transforms, T),
               t.inv.inv == t, t._cache_size, t.with_cache(1)._cache_size,
               bool(t.codomain.check(y).all()),
               _or_error(lambda: t.forward_shape(x.shape)),
               _or_error(lambda: t.inverse_shape(y.shape))]
        return out
    same(scenario, rtol=1e-9, atol=1e-10)


def test_transform_bijectivity_and_caching():
    """x -> y -> x for the bijections, and their cached inverses; y -> x -> y for the onto
    maps (on their codomain)."""
    def scenario(T):
        X = T.distributions.transforms
        out = []
        for name in TRANSFORMS:
            make, data = TRANSFORMS[name]
            t = make(X, T)
            x = _f64(T, data)
            if t.bijective:
                out.append(float((t.inv(t(x)) - x).abs().max()) < 1e-9)
            cached = t.with_cache(1)
            y = cached(x)
            out += [cached.inv(y) is x, cached(x) is y]
        lower = T.tensor([[2.0, 0.0], [0.5, 1.5]], dtype=T.float64)
        pd = lower @ lower.mT
        out += [X.LowerCholeskyTransform()(X.LowerCholeskyTransform().inv(lower)),
                X.PositiveDefiniteTransform()(X.PositiveDefiniteTransform().inv(pd)),
                X.CorrCholeskyTransform()(X.CorrCholeskyTransform().inv(_corr_chol(T)))]
        return out
    same(scenario, rtol=1e-9, atol=1e-10)


def test_transform_shape_errors_and_helpers():
    def scenario(T):
        X, U = T.distributions.transforms, T.distributions.utils
        c, r = X.CorrCholeskyTransform(), X.ReshapeTransform((2, 3), (6,))
        cat = X.CatTransform([X.ExpTransform(), X.AffineTransform(0.0, 2.0)], -1, [1, 2])
        return [catch(c.forward_shape, (2, 4)), catch(c.inverse_shape, (2, 4)),
                catch(c.inverse_shape, (4,)), c.forward_shape((2, 3)), c.inverse_shape((4, 3, 3)),
                catch(r.forward_shape, (3,)), catch(r.forward_shape, (5, 3, 2)),
                r.forward_shape((5, 2, 3)), r.inverse_shape((5, 6)),
                catch(X.ReshapeTransform, (2, 3), (5,)), cat.length, cat.lengths,
                catch(lambda: cat.sign), cat.event_dim, X.StackTransform([X.ExpTransform()]).dim,
                X.IndependentTransform(X.ExpTransform(), 1).sign,
                X.IndependentTransform(X.AffineTransform(0.0, -2.0), 2).inv.sign,
                X.IndependentTransform(X.ExpTransform(), 2).with_cache(1)._cache_size,
                X.IndependentTransform(X.ExpTransform(), 2).forward_shape((3, 4)),
                X.SoftplusTransform() == X.SoftplusTransform(),
                X.SoftplusTransform() == X.ExpTransform(),
                X.LowerCholeskyTransform() == X.LowerCholeskyTransform(),
                X.CorrCholeskyTransform().inv == X.CorrCholeskyTransform().inv,
                U.vec_to_tril_matrix(T.arange(1.0, 7.0)),
                U.vec_to_tril_matrix(T.arange(1.0, 7.0).view(2, 3), diag=-1),
                U.tril_matrix_to_vec(T.arange(9.0).view(3, 3)),
                U.tril_matrix_to_vec(T.arange(18.0).view(2, 3, 3), diag=-1),
                catch(U.vec_to_tril_matrix, T.arange(4.0)), U.euler_constant,
                U.probs_to_logits(T.tensor([0.2, 0.8]), is_binary=True),
                U.logits_to_probs(T.tensor([0.2, 0.8])),
                U.clamp_probs(T.tensor([0.0, 1.0])),
                [v.shape for v in U.broadcast_all(T.ones(2, 1), 3.0, T.zeros(3))]]
    same(scenario)


# ---------------------------------------------------------------------------- registries
def _constraints(T):
    C = T.distributions.constraints
    return [C.real, C.positive, C.nonnegative, C.unit_interval, C.interval(-1.0, 2.0),
            C.half_open_interval(0.0, 3.0), C.greater_than(1.5), C.greater_than_eq(-1.0),
            C.less_than(2.0), C.simplex, C.real_vector, C.independent(C.positive, 1),
            C.lower_cholesky, C.positive_definite, C.positive_semidefinite, C.corr_cholesky,
            C.cat([C.real, C.positive, C.unit_interval], 0, [1, 2, 1]),
            C.stack([C.real, C.positive, C.less_than(1.0), C.unit_interval], 0), C.boolean,
            C.integer_interval(0, 3), C.interval(T.zeros(4), T.ones(4) * 2)]


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
def test_biject_to_and_transform_to(registry):
    def scenario(T):
        D = T.distributions
        find = getattr(D, registry)
        x = _f64(T, [0.3, -1.2, 2.0, 0.7])
        out = []
        for c in _constraints(T):
            t = _or_error(lambda: find(c))
            if not isinstance(t, D.transforms.Transform):
                out.append(t)
                continue
            if c.event_dim == 2:
                shape = T.Size([3, 3]) if t.domain.event_dim == 2 else T.Size([3])
            else:
                shape = t.inverse_shape(T.Size([4]))
            u = T.linspace(-1.5, 2.0, shape.numel(), dtype=T.float64).view(shape)
            y = t(u)
            out += [repr(t), y, bool(c.check(y).all()), repr(t.domain), repr(t.codomain),
                    t.bijective, _or_error(lambda: t.log_abs_det_jacobian(u, y))]
        stack = D.transforms.StackTransform([D.transforms.ExpTransform()] * 3)
        return out + [x.shape, catch(stack, x)]
    same(scenario, rtol=1e-9, atol=1e-10)


def test_registry_registration_and_new_constraints():
    def scenario(T):
        D = T.distributions
        C, registry = D.constraints, D.constraint_registry.ConstraintRegistry()
        registry.register(C.positive, lambda c: D.transforms.SoftplusTransform())

        @registry.register(C._Boolean)
        def _boolean(c):
            return D.transforms.SigmoidTransform()
        x = T.tensor([[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.0, 0.6, 0.8]])
        sym = T.tensor([[2.0, 1.0], [1.0, -3.0]])
        cat, stack = C.cat([C.real, C.positive], -1, [2, 1]), C.stack([C.real, C.positive], 1)
        return [repr(registry(C.greater_than(2.0))), repr(registry(C.boolean)),
                catch(registry, C.real), catch(registry.register, 3, lambda c: c),
                catch(registry.register, int, lambda c: c),
                C.corr_cholesky.check(x), C.corr_cholesky.check(x * 1.1),
                C.square.check(T.ones(2, 3)), C.square.check(T.ones(4, 3, 3)),
                C.symmetric.check(sym), C.symmetric.check(T.ones(3, 2, 3)),
                C.positive_semidefinite.check(sym), C.positive_semidefinite.check(T.ones(2, 2)),
                C.lower_triangular.check(x), C.lower_triangular.check(T.ones(2, 2, 2)),
                C._IntegerLessThan(3).check(T.tensor([1.0, 2.5, 3.0, -4.0])),
                repr(C._IntegerLessThan(3)), cat.check(T.tensor([[-1.0, 2.0, -3.0]])),
                cat.event_dim, cat.is_discrete, stack.check(T.tensor([[-1.0, 2.0],
                                                                      [1.0, -1.0]])),
                stack.event_dim, C.stack([C.real], 0).event_dim,
                [repr(c) for c in (cat, stack, C.corr_cholesky, C.square, C.symmetric,
                                   C.positive_semidefinite, C.lower_triangular)],
                [(c.event_dim, c.is_discrete) for c in (
                    C.corr_cholesky, C.square, C.symmetric, C.positive_semidefinite,
                    C.lower_triangular, C._IntegerLessThan(2))],
                C.MixtureSameFamilyConstraint(C.positive).check(T.tensor([1.0, -1.0])),
                C.MixtureSameFamilyConstraint(C.simplex).check(T.tensor([[0.5, 0.5]])),
                repr(C.MixtureSameFamilyConstraint(C.real_vector))]
    same(scenario)


# what each submodule exports, by PyTorch's __all__ (the families of one name each)
SUBMODULE_EXPORTS = {name: sorted(getattr(getattr(torch.distributions, name), "__all__", []))
                     for name in dir(torch.distributions)
                     if type(getattr(torch.distributions, name)).__name__ == "module"}


def test_submodules():
    def scenario(T):
        D = T.distributions
        import importlib
        names = ["bernoulli", "beta", "binomial", "categorical", "cauchy", "chi2",
                 "continuous_bernoulli", "dirichlet", "distribution", "exp_family",
                 "exponential", "fishersnedecor", "gamma", "generalized_pareto", "geometric",
                 "gumbel", "half_cauchy", "half_normal", "independent", "inverse_gamma",
                 "kumaraswamy", "laplace", "lkj_cholesky", "log_normal", "logistic_normal",
                 "lowrank_multivariate_normal", "mixture_same_family", "multinomial",
                 "multivariate_normal", "negative_binomial", "normal", "one_hot_categorical",
                 "pareto", "poisson", "relaxed_bernoulli", "relaxed_categorical", "studentT",
                 "transformed_distribution", "uniform", "von_mises", "weibull", "wishart",
                 "constraint_registry", "utils", "kl", "constraints", "transforms"]
        out = []
        for name in names:
            module = importlib.import_module(f"{D.__name__}.{name}")
            out.append((name, getattr(D, name) is module,
                        [(n, getattr(module, n, None) is getattr(D, n, None))
                         for n in SUBMODULE_EXPORTS[name] if n[0].isupper()]))
        from_relaxed = importlib.import_module(f"{D.__name__}.relaxed_bernoulli")
        out.append(repr(from_relaxed.LogitRelaxedBernoulli(T.tensor(0.5),
                                                            probs=T.tensor([0.3, 0.6]))))
        return out + [sorted(n for n in D.__all__)]
    same(scenario)


# ---------------------------------------------------------------------------- KL
def _lowrank(D, a, b):
    return D.LowRankMultivariateNormal(a, b.unsqueeze(-1) * a.unsqueeze(-1), b + 1)


KL_PAIRS = {
    "CB_CB": lambda D, a, b: (D.ContinuousBernoulli(a / 4), D.ContinuousBernoulli(b / 5)),
    "CB_logits": lambda D, a, b: (D.ContinuousBernoulli(logits=a - 1),
                                  D.ContinuousBernoulli(logits=b)),
    "Beta_CB": lambda D, a, b: (D.Beta(a, b), D.ContinuousBernoulli(b / 5)),
    "CB_Exponential": lambda D, a, b: (D.ContinuousBernoulli(a / 4), D.Exponential(b)),
    "CB_Normal": lambda D, a, b: (D.ContinuousBernoulli(a / 4), D.Normal(a, b)),
    "CB_Uniform": lambda D, a, b: (D.ContinuousBernoulli(a / 4), D.Uniform(-b, b + 1)),
    "Uniform_CB": lambda D, a, b: (D.Uniform(a / 10, a / 5), D.ContinuousBernoulli(b / 5)),
    "LowRank_LowRank": lambda D, a, b: (_lowrank(D, a, b), _lowrank(D, b, a)),
    "LowRank_MVN": lambda D, a, b: (_lowrank(D, a, b),
                                    D.MultivariateNormal(b, (a + 1).diag_embed())),
    "MVN_LowRank": lambda D, a, b: (D.MultivariateNormal(b, (a + 1).diag_embed()),
                                    _lowrank(D, a, b)),
    "Wishart_Wishart": lambda D, a, b: (D.Wishart(a + 2, (b + 1).diag_embed()),
                                        D.Wishart(b + 2, (a + 1).diag_embed())),
}


@pytest.mark.parametrize("pair", KL_PAIRS)
def test_kl_divergence_and_its_gradients(pair):
    same(kl_scenario(KL_PAIRS[pair], [0.5, 1.2, 3.0], [1.5, 0.3, 1.0]), rtol=1e-4, atol=1e-5)


def test_kl_infinite_and_unsupported_cases():
    def scenario(T):
        D, kl = T.distributions, T.distributions.kl_divergence
        x = T.tensor([0.5, 2.0])
        cb = D.ContinuousBernoulli(T.tensor([0.2, 0.7]))
        low = D.LowRankMultivariateNormal(T.zeros(2), T.ones(2, 1), T.ones(2))
        return [catch(kl, p, q) for p, q in
                [(cb, D.Pareto(x, x)), (D.Exponential(x), cb), (D.Gamma(x, x), cb),
                 (D.Gumbel(x, x), cb), (D.Laplace(x, x), cb), (D.Normal(x, x), cb),
                 (D.Pareto(x, x), cb), (D.Uniform(x - 1, x), cb), (D.Uniform(x / 4, 1.0), cb),
                 (cb, D.Uniform(x - 1, x)),
                 (low, D.LowRankMultivariateNormal(T.zeros(3), T.ones(3, 1), T.ones(3))),
                 (low, D.MultivariateNormal(T.zeros(3), T.eye(3))),
                 (D.MultivariateNormal(T.zeros(3), T.eye(3)), low),
                 (cb, D.Wishart(3.0, T.eye(2))),
                 (D.VonMises(x, x), D.VonMises(x, x))]]
    same(scenario)


# ---------------------------------------------------------------------------- sampling
MOMENTS = {
    "ContinuousBernoulli": lambda D: D.ContinuousBernoulli(ember.tensor([0.2, 0.5, 0.9])),
    "FisherSnedecor": lambda D: D.FisherSnedecor(ember.tensor([3.0, 8.0]),
                                                 ember.tensor([12.0, 20.0])),
    "GeneralizedPareto": lambda D: D.GeneralizedPareto(ember.tensor([0.0, 1.0, -1.0]),
                                                       ember.tensor([1.0, 2.0, 0.5]),
                                                       ember.tensor([-0.5, 0.0, 0.2])),
    "InverseGamma": lambda D: D.InverseGamma(ember.tensor([5.0, 8.0]), ember.tensor([1.0, 3.0])),
    "LowRankMVN": lambda D: D.LowRankMultivariateNormal(
        ember.tensor([0.5, -1.0, 0.2]), ember.tensor([[1.0, 0.5], [-0.3, 0.2], [0.7, -1.1]]),
        ember.tensor([1.5, 0.3, 0.8])),
    "Mixture": lambda D: D.MixtureSameFamily(D.Categorical(ember.tensor([0.2, 0.5, 0.3])),
                                             D.Normal(ember.tensor([0.0, 1.0, -2.0]),
                                                      ember.tensor([1.0, 0.5, 2.0]))),
    "Wishart": lambda D: D.Wishart(ember.tensor(4.5), ember.tensor([[2.0, 0.5], [0.5, 1.0]])),
}


@pytest.mark.parametrize("name", MOMENTS)
def test_samples_lie_in_support_and_match_moments(name):
    ember.manual_seed(2024)
    d = MOMENTS[name](ember.distributions)
    n = 40000
    s = d.sample((n,))
    assert s.shape == (n,) + tuple(d.batch_shape + d.event_shape)
    assert bool(d.support.check(s).all())
    values, mean, var = s.double(), d.mean.double(), d.variance.double()
    stderr = (var / n).sqrt()
    assert bool(((values.mean(0) - mean).abs() < 5 * stderr).all()), (values.mean(0), mean)
    np.testing.assert_allclose(values.var(0).numpy(), var.numpy(), rtol=0.1)


def test_von_mises_samples():
    """Circular moments: E[cos(x - loc)] = I1(k) / I0(k) = 1 - variance, E[sin(x - loc)] = 0."""
    ember.manual_seed(11)
    loc = ember.tensor([0.5, -2.5, 3.0, 0.0])
    d = ember.distributions.VonMises(loc, ember.tensor([0.3, 2.0, 40.0, 1e-6]))
    n = 40000
    s = d.sample((n,))
    assert s.dtype == ember.float32 and bool(((s >= -np.pi) & (s <= np.pi)).all())
    cos, sin = (s - loc).double().cos(), (s - loc).double().sin()
    bound = 5 / n ** 0.5
    np.testing.assert_allclose(cos.mean(0).numpy(), 1 - d.variance.double().numpy(),
                               atol=bound)
    np.testing.assert_allclose(sin.mean(0).numpy(), 0.0, atol=bound)


def test_lkj_cholesky_samples():
    """The correlation r_10 of LKJ(eta) in dimension d is 2 Beta(b, b) - 1 with
    b = eta - 1 + d / 2: mean 0, variance 1 / (2 b + 1). (PyTorch's onion sampler gives the
    other entries other spreads: those are compared with the spread of PyTorch's own draws.)"""
    ember.manual_seed(3)
    torch.manual_seed(3)
    n = 20000
    d = ember.distributions.LKJCholesky(4, ember.tensor([0.5, 3.0]))
    L = d.sample((n,))
    assert L.shape == (n, 2, 4, 4)
    assert bool(d.support.check(L).all())
    C = (L @ L.mT).double()
    b = np.array([0.5, 3.0]) - 1 + 2
    np.testing.assert_allclose(C[..., 1, 0].mean(0).numpy(), 0.0, atol=5 * (1 / n) ** 0.5)
    np.testing.assert_allclose(C[..., 1, 0].var(0).numpy(), 1 / (2 * b + 1), rtol=0.05)
    tL = torch.distributions.LKJCholesky(4, torch.tensor([0.5, 3.0])).sample((n,))
    tC = (tL @ tL.mT).double()
    for i, j in [(2, 0), (3, 1), (3, 2)]:
        np.testing.assert_allclose(C[..., i, j].var(0).numpy(), tC[..., i, j].var(0).numpy(),
                                   rtol=0.08)


def test_relaxed_samples():
    """Temperature -> 0: a relaxed Bernoulli / categorical draw is nearly one-hot with the
    given probabilities."""
    ember.manual_seed(9)
    D, n = ember.distributions, 40000
    probs = ember.tensor([0.2, 0.7])
    s = D.RelaxedBernoulli(ember.tensor(0.05), probs=probs).rsample((n,))
    assert bool(((s >= 0) & (s <= 1)).all())
    np.testing.assert_allclose((s > 0.5).double().mean(0).numpy(), probs.numpy(),
                               atol=5 * 0.5 / n ** 0.5)
    cat_probs = ember.tensor([0.2, 0.5, 0.3])
    s = D.RelaxedOneHotCategorical(ember.tensor(0.05), probs=cat_probs).rsample((n,))
    assert bool((s >= 0).all()) and float((s.sum(-1) - 1).abs().max()) < 1e-5
    np.testing.assert_allclose(s.argmax(-1).bincount(minlength=3).double().numpy() / n,
                               cat_probs.numpy(), atol=5 * 0.5 / n ** 0.5)
    o = D.OneHotCategoricalStraightThrough(cat_probs).sample((n,))
    np.testing.assert_allclose(o.double().mean(0).numpy(), cat_probs.numpy(),
                               atol=5 * 0.5 / n ** 0.5)


def test_rsample_gradients_match_torchs_on_the_same_draws():
    """For draws by the inverse CDF (ContinuousBernoulli, GeneralizedPareto) the gradient is
    d icdf(u)/dparam at the draw's level u = cdf(x); PyTorch gives it for ember's draws."""
    ember.manual_seed(5)
    for name in ["ContinuousBernoulli_probs", "ContinuousBernoulli_logits",
                 "GeneralizedPareto"]:
        d, params, _ = _build(ember, name, grad=True)
        x = d.rsample((20,))
        grads = ember.autograd.grad(x.sum(), params)
        factory, values, _ = FAMILIES[name]
        dtype = torch.float32 if name in FLOAT32 else torch.float64
        tparams = [torch.tensor(v, dtype=dtype, requires_grad=True) for v in values]
        td = factory(torch.distributions, tparams, torch)
        with torch.no_grad():
            level = td.cdf(torch.tensor(x.detach().numpy(), dtype=dtype))
        tx = td.icdf(level)
        np.testing.assert_allclose(tx.detach().numpy(), x.detach().numpy(), rtol=1e-4,
                                   atol=1e-5, err_msg=name)
        for g, e in zip(grads, torch.autograd.grad(tx.sum(), tparams)):
            np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-3, atol=1e-4,
                                       err_msg=name)


def test_reparameterised_gradients_move_the_mean():
    """d E[x] / d param by the average gradient of many draws equals that of the mean."""
    ember.manual_seed(8)
    D, n = ember.distributions, 40000
    checks = [
        (lambda c, r: D.InverseGamma(c, r), [[5.0, 8.0], [1.0, 3.0]]),
        (lambda a, b: D.FisherSnedecor(a, b), [[3.0, 8.0], [12.0, 20.0]]),
        (lambda loc, w, s: D.LowRankMultivariateNormal(loc, w, s),
         [[0.5, -1.0], [[1.0], [0.5]], [1.5, 0.3]]),
        (lambda df, cov: D.Wishart(df, cov), [4.5, [[2.0, 0.5], [0.5, 1.0]]]),
    ]
    for make, values in checks:
        # (float32: ember's Gamma draws cannot be differentiated in float64, see the report)
        params = [_t(ember, v, grad=True) for v in values]
        d = make(*params)
        draws = ember.autograd.grad(d.rsample((n,)).mean(0).sum(), params, allow_unused=True)
        exact = ember.autograd.grad(d.mean.sum(), params, allow_unused=True)
        for g, e in zip(draws, exact):
            e = np.zeros(g.shape) if e is None else e.detach().numpy()
            np.testing.assert_allclose(g.detach().numpy(), e, rtol=0.06, atol=0.03)


def test_straight_through_and_relaxed_gradients():
    def scenario(T):
        D = T.distributions
        probs = _f64(T, [[0.3, 0.6, 0.1], [0.2, 0.2, 0.6]], grad=True)
        s = D.OneHotCategoricalStraightThrough(probs=probs).rsample((4,))
        (g,) = T.autograd.grad((s * T.arange(3.0, dtype=T.float64)).sum(), [probs])
        temperature = _f64(T, [0.5, 2.0], grad=True)
        logits = _f64(T, [0.3, -1.2], grad=True)
        relaxed = D.RelaxedBernoulli(temperature, logits=logits)
        value = _f64(T, [0.3, 0.8])
        lp = relaxed.log_prob(value)
        cat = D.RelaxedOneHotCategorical(temperature[0], logits=probs.log())
        lp_cat = cat.log_prob(_f64(T, [0.2, 0.3, 0.5]))
        return [g, s.shape, lp, _grads(T, [temperature, logits], lp), lp_cat,
                _grads(T, [temperature, probs], lp_cat), repr(relaxed.base_dist),
                relaxed.temperature, cat.temperature, relaxed.probs, cat.logits]
    same(scenario, rtol=1e-9, atol=1e-10)


def test_wishart_low_df_warning():
    def scenario(T):
        D = T.distributions
        return [warnings_of(lambda: D.Wishart(T.tensor([1.5, 3.0]), T.eye(2)).batch_shape),
                warnings_of(lambda: D.Wishart(2.0, T.eye(2)).batch_shape)]
    same(scenario)


def test_a_family_without_arg_constraints_warns_and_float64_gamma_rsample_backpropagates():
    def scenario(T):
        class Bare(T.distributions.Distribution):
            pass
        w = warnings_of(lambda: Bare(validate_args=True))[1]
        c = T.tensor([2.0, 0.5], dtype=T.float64, requires_grad=True)
        T.manual_seed(0)
        T.distributions.Gamma(c, 1.0).rsample().sum().backward()
        return w, c.grad.shape, c.grad.dtype, bool((c.grad != 0).all())
    same(scenario)


@pytest.mark.parametrize("pair", range(4))
def test_kl_lookup_sees_the_exponential_families_and_classes_print_torchs_module(pair):
    def scenario(T):
        D = T.distributions
        p, q = [(D.Normal(0., 1.), D.Poisson(1.)), (D.Gamma(2., 1.), D.Beta(1., 1.)),
                (D.Chi2(2.), D.Normal(0., 1.)), (D.Normal(0., 1.), D.Cauchy(0., 1.))][pair]
        return catch(D.kl_divergence, p, q), str(type(p)), str(type(q))
    same(scenario)
