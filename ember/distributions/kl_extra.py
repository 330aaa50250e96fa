"""The KL divergences PyTorch registers for ContinuousBernoulli, LowRankMultivariateNormal and
exponential families in general (by the Bregman divergence of the log normalizer)."""
import ember
from .continuous import Beta, Exponential, Gamma, Laplace, Normal, Uniform
from .continuous_bernoulli import ContinuousBernoulli
from .distribution import sum_rightmost
from .exp_family import ExponentialFamily
from .kl import (_infinite, _kl_beta_uniform, _kl_to_exponential, _kl_to_normal, register_kl)
from .lowrank_multivariate_normal import LowRankMultivariateNormal, _lowrank_logdet
from .multivariate import MultivariateNormal, _half_log_det
from .transformed import Gumbel, Pareto


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
