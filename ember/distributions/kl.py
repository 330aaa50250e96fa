"""kl_divergence(p, q) and the registry of closed forms (`register_kl`)."""
import ember
from .continuous import Exponential, Normal, Uniform
from .discrete import Bernoulli, Categorical, OneHotCategorical
from .distribution import sum_rightmost
from .multivariate import (Independent, MultivariateNormal, _half_log_det, _mahalanobis,
                           _solve_lower)

_KL_REGISTRY = {}


def register_kl(type_p, type_q):
    """Decorator: `fn(p, q)` computes KL(p || q) for p of `type_p` and q of `type_q`."""
    def decorator(fn):
        _KL_REGISTRY[type_p, type_q] = fn
        return fn
    return decorator


def _lookup(type_p, type_q):
    # the most specific registered pair: nearest ancestors first (p's, then q's)
    candidates = [(i + j, i, (p, q)) for i, p in enumerate(type_p.__mro__)
                  for j, q in enumerate(type_q.__mro__) if (p, q) in _KL_REGISTRY]
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
