"""kl_divergence(p, q) and the registry of closed forms (`register_kl`), including the ones for
ContinuousBernoulli, LowRankMultivariateNormal and exponential families in general (by the
Bregman divergence of the log normalizer)."""
import math

import ember
from .continuous import Beta, Cauchy, Exponential, Gamma, Laplace, Normal, Uniform
from .continuous_bernoulli import ContinuousBernoulli
from .counts import Binomial, Geometric, Poisson
from .dirichlet import Dirichlet
from .discrete import Bernoulli, Categorical, OneHotCategorical
from .distribution import Distribution, sum_rightmost
from .exp_family import ExponentialFamily
from .lowrank_multivariate_normal import LowRankMultivariateNormal, _lowrank_logdet
from .transformed import Gumbel, HalfNormal, Pareto
from .transformed_distribution import TransformedDistribution
from .multivariate import (Independent, MultivariateNormal, _half_log_det, _mahalanobis,
                           _solve_lower)

_KL_REGISTRY = {}


def register_kl(type_p, type_q):
    """Decorator: `fn(p, q)` computes KL(p || q) for p of `type_p` and q of `type_q`."""
    def decorator(fn):
        _KL_REGISTRY[type_p, type_q] = fn
        return fn
    return decorator


def _ancestors(cls):
    """cls's MRO, with ExponentialFamily where PyTorch's families derive from it (ember
    registers them with it as virtual subclasses: see exp_family)."""
    mro = cls.__mro__
    if ExponentialFamily not in mro and issubclass(cls, ExponentialFamily):
        i = mro.index(Distribution)
        mro = mro[:i] + (ExponentialFamily,) + mro[i:]
    return mro


def _lookup(type_p, type_q):
    # the most specific registered pair: nearest ancestors first (p's, then q's)
    candidates = [(i + j, i, (p, q)) for i, p in enumerate(_ancestors(type_p))
                  for j, q in enumerate(_ancestors(type_q)) if (p, q) in _KL_REGISTRY]
    return _KL_REGISTRY[min(candidates)[2]] if candidates else None


def kl_divergence(p, q):
    fn = _lookup(type(p), type(q))
    if fn is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{type(p).__name__} and q type {type(q).__name__}")
    return fn(p, q)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    inf = float("inf")
    t1 = p.probs * (ember.nn.functional.softplus(-q.logits)
                    - ember.nn.functional.softplus(-p.logits))
    t1 = ember.where(p.probs == 0, 0.0, ember.where(q.probs == 0, inf, t1))
    t2 = (1 - p.probs) * (ember.nn.functional.softplus(q.logits)
                          - ember.nn.functional.softplus(p.logits))
    t2 = ember.where(p.probs == 1, 0.0, ember.where(q.probs == 1, inf, t2))
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = ember.where((q.probs == 0).expand_as(t), float("inf"), t)
    t = ember.where((p.probs == 0).expand_as(t), 0.0, t)
    return t.sum(-1)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return ember.where((q.low > p.low) | (q.high < p.high), float("inf"), result)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p, q):
    if p.event_shape != q.event_shape:
        # (the run of spaces is in PyTorch's message)
        raise ValueError("KL-divergence between two Multivariate Normals with"
                         "                          different event shapes cannot be computed")
    p_L, q_L = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    n = p.event_shape[0]
    batch = ember.broadcast_shapes(q_L.shape[:-2], p_L.shape[:-2])
    # tr(Σq^-1 Σp) = |Lq^-1 Lp|_F^2
    trace = _solve_lower(q_L.expand(batch + (n, n)), p_L.expand(batch + (n, n))).pow(2)
    trace = trace.sum((-2, -1))
    return (_half_log_det(q_L) - _half_log_det(p_L)
            + 0.5 * (trace + _mahalanobis(q_L, q.loc - p.loc) - n))


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    p_total, q_total = p.concentration.sum(-1), q.concentration.sum(-1)
    log_norms = (ember.lgamma(p_total) - ember.lgamma(q_total)
                 - (ember.lgamma(p.concentration) - ember.lgamma(q.concentration)).sum(-1))
    expected_log_x = ember.digamma(p.concentration) - ember.digamma(p_total).unsqueeze(-1)
    return log_norms + ((p.concentration - q.concentration) * expected_log_x).sum(-1)


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    return _kl_dirichlet_dirichlet(p._dirichlet, q._dirichlet)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count "
                                  "is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p()
                          - (-q.probs).log1p())
    # more trials under p than q can ever have: outcomes q cannot produce
    return ember.where(p.total_count > q.total_count, float("inf"), kl)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - ember.log1p(-q.probs) / p.probs - q.logits


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Poisson, Bernoulli)
@register_kl(Poisson, Binomial)
def _kl_poisson_infinity(p, q):
    # a Poisson puts mass on counts beyond any bound
    return ember.full_like(p.rate, float("inf"))


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    return (q.concentration * (p.rate / q.rate).log()
            + ember.lgamma(q.concentration) - ember.lgamma(p.concentration)
            + (p.concentration - q.concentration) * ember.digamma(p.concentration)
            + (q.rate - p.rate) * (p.concentration / p.rate))


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    distance = (p.loc - q.loc).abs()
    return (-scale_ratio.log() + distance / q.scale
            + scale_ratio * ember.exp(-distance / p.scale) - 1)


def _infinite(param):
    # p has mass where q has none (q's support is bounded, or p's reaches further)
    return ember.full_like(param, float("inf"))


for _p, _qs, _param in [(Exponential, (Beta, Uniform), "rate"),
                        (Gamma, (Beta, Uniform), "concentration"),
                        (Laplace, (Beta, Exponential, Gamma, Uniform), "loc"),
                        (Normal, (Beta, Exponential, Gamma, Uniform), "loc")]:
    for _q in _qs:
        register_kl(_p, _q)(lambda p, q, _param=_param: _infinite(getattr(p, _param)))



# ------------------------------------------------------------------ between families
# KL(p || q) = -H(p) - E_p[log q(x)]; E_p[log q] needs only a few expectations under p.
_EULER = 0.57721566490153286061


def _x_log_x(x):
    return ember.xlogy(x, x)


def _expectations(p):
    """E[x], E[x^2] and E[log x] (None where p's support reaches below 0)."""
    if isinstance(p, Beta):
        a, b = p.concentration1, p.concentration0
        return p.mean, p.variance + p.mean.pow(2), ember.digamma(a) - ember.digamma(a + b)
    if isinstance(p, Exponential):
        return p.rate.reciprocal(), 2 * p.rate.pow(-2), -_EULER - p.rate.log()
    if isinstance(p, Gamma):
        k, rate = p.concentration, p.rate
        return k / rate, (k.pow(2) + k) / rate.pow(2), ember.digamma(k) - rate.log()
    if isinstance(p, Pareto):
        return p.mean, p.variance + p.mean.pow(2), p.scale.log() + p.alpha.reciprocal()
    if isinstance(p, Uniform):
        width = p.high - p.low
        second = (p.high.pow(2) + p.high * p.low + p.low.pow(2)) / 3
        return p.mean, second, (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    return p.mean, p.variance + p.mean.pow(2), None     # Normal, Laplace, Gumbel


def _below_zero(p):
    """Where p has mass below 0 (a Uniform may; Beta, Exponential and Gamma do not)."""
    return p.low < 0 if isinstance(p, Uniform) else None


def _with_inf(result, where):
    return result if where is None else ember.where(where, float("inf"), result)


def _kl_to_exponential(p, q):
    mean, _, _ = _expectations(p)
    return _with_inf(-p.entropy() - q.rate.log() + q.rate * mean, _below_zero(p))


def _kl_to_gamma(p, q):
    mean, _, log_mean = _expectations(p)
    k, rate = q.concentration, q.rate
    cross = ember.lgamma(k) - k * rate.log() - (k - 1) * log_mean + rate * mean
    return _with_inf(-p.entropy() + cross, _below_zero(p))


def _kl_to_normal(p, q):
    mean, second, _ = _expectations(p)
    var = q.scale.pow(2)
    cross = 0.5 * (2 * math.pi * var).log() + (second / 2 - q.loc * mean
                                               + q.loc.pow(2) / 2) / var
    return -p.entropy() + cross


for _p in (Beta, Exponential, Gamma, Uniform):
    register_kl(_p, Normal)(_kl_to_normal)
for _p in (Beta, Gamma, Uniform):
    register_kl(_p, Exponential)(_kl_to_exponential)
for _p in (Beta, Exponential, Uniform):
    register_kl(_p, Gamma)(_kl_to_gamma)
register_kl(Laplace, Normal)(_kl_to_normal)


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return ember.where((q.low > 0) | (q.high < 1), float("inf"), result)


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    a, b = q.concentration1, q.concentration0
    width = p.high - p.low
    log_x = (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    log_1mx = (_x_log_x(1 - p.low) - _x_log_x(1 - p.high) - width) / width
    log_beta = ember.lgamma(a) + ember.lgamma(b) - ember.lgamma(a + b)
    result = -p.entropy() + log_beta - (a - 1) * log_x - (b - 1) * log_1mx
    return ember.where((p.high > 1) | (p.low < 0), float("inf"), result)


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    # E|x - m| for x ~ N(mu, s^2): s sqrt(2/pi) exp(-d^2 / 2s^2) + d erf(d / (s sqrt 2))
    d = p.loc - q.loc
    mean_abs = (math.sqrt(2 / math.pi) * p.scale * ember.exp(-0.5 * (d / p.scale).pow(2))
                + d * ember.erf(d / (p.scale * math.sqrt(2))))
    return -p.entropy() + (2 * q.scale).log() + mean_abs / q.scale


# ------------------------------------------------------------------ transformed families
@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    # the same bijections applied to both: the divergence of the bases
    if p.transforms != q.transforms or p.event_shape != q.event_shape:
        raise NotImplementedError
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist),
                         len(p.event_shape) - len(p.base_dist.event_shape))


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    spread = (p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)
    return spread.log() - (4 * p.scale * q.scale).log()


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    # E_p[exp(-(x - m) / s)] = exp(m / s) Gamma(1 + s_p / s) exp(-mu_p / s)
    ratio = p.scale / q.scale
    shift = (p.loc - q.loc) / q.scale
    return (-ratio.log() + shift + ratio * _EULER
            + ember.exp(ember.lgamma(1 + ratio) - shift) - (1 + _EULER))


def _mgf_at(p, t):
    """E_p[exp(-t x)] for p an Exponential, Gamma, Normal or Uniform."""
    if isinstance(p, Exponential):
        return p.rate / (p.rate + t)
    if isinstance(p, Gamma):
        return (p.rate / (p.rate + t)).pow(p.concentration)
    if isinstance(p, Normal):
        return ember.exp(-p.loc * t + (p.scale * t).pow(2) / 2)
    return (ember.exp(-t * p.low) - ember.exp(-t * p.high)) / (t * (p.high - p.low))


def _kl_to_gumbel(p, q):
    # -log q(x) = log s + (x - m) / s + exp(-(x - m) / s)
    t = q.scale.reciprocal()
    return (-p.entropy() + q.scale.log() + (p.mean - q.loc) * t
            + ember.exp(q.loc * t) * _mgf_at(p, t))


for _p in (Exponential, Gamma, Normal, Uniform):
    register_kl(_p, Gumbel)(_kl_to_gumbel)
register_kl(Gumbel, Normal)(_kl_to_normal)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    alpha_ratio = q.alpha / p.alpha
    result = (q.alpha * (p.scale / q.scale).log() - alpha_ratio.log() + alpha_ratio - 1)
    # p's support starts below q's
    return ember.where(p.scale < q.scale, float("inf"), result)


register_kl(Pareto, Exponential)(_kl_to_exponential)
register_kl(Pareto, Gamma)(_kl_to_gamma)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    # no finite second moment for alpha <= 2
    return ember.where(p.alpha <= 2, float("inf"), _kl_to_normal(p, q))


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    _, _, log_mean = _expectations(p)
    result = (-p.entropy() - q.alpha.log() - q.alpha * q.scale.log()
              + (q.alpha + 1) * log_mean)
    return ember.where(p.low < q.scale, float("inf"), result)


for _p, _qs, _param in [(Gumbel, (Beta, Exponential, Gamma, Pareto, Uniform), "loc"),
                        (Beta, (Pareto,), "concentration1"), (Exponential, (Pareto,), "rate"),
                        (Gamma, (Pareto,), "concentration"), (Laplace, (Pareto,), "loc"),
                        (Normal, (Pareto,), "loc"), (Pareto, (Beta, Uniform), "scale")]:
    for _q in _qs:
        register_kl(_p, _q)(lambda p, q, _param=_param: _infinite(getattr(p, _param)))


# ------------------------------------------------------------------ exponential families
@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    """A(theta_q) - A(theta_p) - <theta_q - theta_p, grad A(theta_p)>."""
    if type(p) is not type(q):
        # (the run of spaces is in PyTorch's message)
        raise NotImplementedError("The cross KL-divergence between different exponential "
                                  "families cannot                             be computed "
                                  "using Bregman divergences")
    p_params = [param.detach().requires_grad_() for param in p._natural_params]
    q_params = q._natural_params
    p_log_norm = p._log_normalizer(*p_params)
    grads = ember.autograd.grad(p_log_norm.sum(), p_params, create_graph=True)
    result = q._log_normalizer(*q_params) - p_log_norm
    for p_param, q_param, grad in zip(p_params, q_params, grads):
        # (summed over as many trailing dims as an event has, whatever the parameter's)
        result = result - sum_rightmost((q_param - p_param) * grad, len(q.event_shape))
    return result


# ------------------------------------------------------------------ ContinuousBernoulli
def _cross_entropy_cb(mean, q):
    """-E[log q(x)] for x of mean `mean`, q a ContinuousBernoulli."""
    return -mean * q.logits - ember.log1p(-q.probs) - q._cont_bern_log_norm()


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_cb_cb(p, q):
    return -p.entropy() + _cross_entropy_cb(p.mean, q)


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_cb(p, q):
    return -p.entropy() + _cross_entropy_cb(p.mean, q)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_cb(p, q):
    result = -p.entropy() + _cross_entropy_cb(p.mean, q)
    # as in PyTorch, a Uniform reaching either end of [0, 1] counts as outside it
    return ember.where((p.high >= 1) | (p.low <= 0), float("inf"), result)


register_kl(ContinuousBernoulli, Exponential)(_kl_to_exponential)
register_kl(ContinuousBernoulli, Normal)(_kl_to_normal)
register_kl(ContinuousBernoulli, Uniform)(_kl_beta_uniform)
register_kl(ContinuousBernoulli, Pareto)(lambda p, q: _infinite(p.probs))
for _p, _param in [(Exponential, "rate"), (Gamma, "concentration"), (Gumbel, "loc"),
                   (Laplace, "loc"), (Normal, "loc"), (Pareto, "scale")]:
    register_kl(_p, ContinuousBernoulli)(lambda p, q, _param=_param: _infinite(getattr(p, _param)))


# ------------------------------------------------------------------ Gaussians
def _gaussian_log_det(d):
    if isinstance(d, LowRankMultivariateNormal):
        return _lowrank_logdet(d._unbroadcasted_cov_factor, d._unbroadcasted_cov_diag,
                               d._capacitance_tril)
    return 2 * _half_log_det(d._unbroadcasted_scale_tril)


def _kl_gaussian(p, q):
    """(tr(Q^-1 P) + |mu_q - mu_p|^2_Q^-1 + log det Q - log det P - n) / 2."""
    if p.event_shape != q.event_shape:
        both = isinstance(p, LowRankMultivariateNormal) and isinstance(
            q, LowRankMultivariateNormal)
        kind = "Low Rank" if both else "(Low Rank)"
        raise ValueError(f"KL-divergence between two {kind} Multivariate Normals with"
                         f"                          different event shapes cannot be computed")
    precision = q.precision_matrix
    trace = (precision * p.covariance_matrix).sum((-2, -1))
    diff = (q.loc - p.loc).unsqueeze(-1)
    mahalanobis = (diff.mT @ precision @ diff).squeeze(-1).squeeze(-1)
    return 0.5 * (trace + mahalanobis + _gaussian_log_det(q) - _gaussian_log_det(p)
                  - p.event_shape[0])


for _p, _q in [(LowRankMultivariateNormal, LowRankMultivariateNormal),
               (LowRankMultivariateNormal, MultivariateNormal),
               (MultivariateNormal, LowRankMultivariateNormal)]:
    register_kl(_p, _q)(_kl_gaussian)
