"""Distances: normalize, cosine_similarity, pairwise_distance and pdist."""
from ..._printing import scalar_type_name
from ...ops.registry import primitive
from ...ops import reduction as R
from ...ops import pointwise as P
from ...ops import norms as _norm_ops
from ...ops import arithmetic as _arith
from ...autograd import grad_mode
from ._utils import _add_scalar, _norm, _clamp_min_scalar, _broadcast


# ============================================================================ distances
def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    denom = _clamp_min_scalar(_norm_ops.vector_norm(input, p, dim, True), eps).expand_as(input)
    return input / denom if out is None else _arith.div(input, denom, out=out)


def cosine_similarity(x1, x2, dim=1, eps=1e-08):
    x1, x2 = _broadcast(x1, x2)
    n1 = _norm_ops.vector_norm(x1, 2, dim, True).clone()
    n2 = _norm_ops.vector_norm(x2, 2, dim, True).clone()
    # torch floors the norms at eps outside the graph: the gradient flows as if unclamped
    with grad_mode.no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-06, keepdim=False):
    dim = max(x1.dim(), x2.dim(), 1) - 1
    return _norm(_add_scalar(x1 - x2, other=eps), ord=float(p), dims=(dim,), keepdim=keepdim)


# ============================================================================ pdist
def _norms(xp, diff, p):
    """The p-norm of each row of `diff` (p = 0 counts the nonzero entries)."""
    if diff.shape[-1] == 0:
        return xp.zeros(diff.shape[:-1], dtype=diff.dtype)
    a = xp.abs(diff)
    if p == 0:
        return (a != 0).sum(-1).astype(diff.dtype)
    if p == 1:
        return a.sum(-1)
    if p == 2:
        return xp.sqrt((a * a).sum(-1))
    if p == float("inf"):
        return a.max(-1)
    return (a ** p).sum(-1) ** (1.0 / p)


@primitive("pdist", node="PdistBackward0", save=("self", "result"))
def _pdist(xp, self, *, p):
    i, j = xp.triu_indices(self.shape[0], 1)
    return _norms(xp, self[i] - self[j], p)


@primitive("_pdist_backward", node="PdistBackwardBackward0")
def _pdist_backward(xp, grad, self, result, *, p):
    n, m = self.shape
    if n < 2 or m == 0 or p == 0:
        return xp.zeros_like(self)
    i, j = xp.triu_indices(n, 1)
    diff = self[i] - self[j]                       # one row per pair, as in the forward
    dist = result[:, None]
    # each p's derivative of ||d||_p by d, in the order torch computes it (same rounding);
    # zero where the distance is zero, and for p < 1 where the component is zero
    safe_dist = xp.where(dist == 0, 1, dist)
    if p == 1:
        slope = xp.sign(diff)
    elif p == float("inf"):
        slope = xp.sign(diff) * (xp.abs(diff) == dist)
    elif p < 1:
        safe_diff = xp.where(diff == 0, 1, diff)
        slope = xp.where(diff == 0, 0, xp.sign(diff) * xp.abs(safe_diff) ** (p - 1))
    elif p < 2:
        slope = xp.sign(diff) * xp.abs(diff) ** (p - 1)
    elif p == 2:
        slope = diff
    else:
        slope = diff * xp.abs(diff) ** (p - 2)
    g = slope * grad[:, None]
    if p not in (1, float("inf")):
        g = xp.where(dist == 0, 0, g / (safe_dist if p == 2 else safe_dist ** (p - 1)))
    # each pair's gradient goes to its first row, and negated to its second: laid out as an
    # (n, n) grid of pairs, those are the sums along its rows and down its columns (much
    # faster than a scatter-add)
    grid = xp.zeros((n * n, m), dtype=g.dtype)
    grid[i * n + j] = g
    grid = grid.reshape(n, n, m)
    return (grid.sum(1) - grid.sum(0)).astype(self.dtype, copy=False)


@_pdist.derivative
def _(ctx, grad):
    return _pdist_backward(grad, ctx.self, ctx.result, p=ctx.p)


@_pdist_backward.derivative
def _(ctx, gg):
    raise NotImplementedError("the derivative for '_pdist_backward' is not implemented.")


def pdist(input, p=2):
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    if input.dtype.itemsize < 4:                   # torch's kernel has no half precision
        raise NotImplementedError(f"\"pdist\" not implemented for "
                                  f"'{scalar_type_name(input.dtype)}'")
    return _pdist(input, p=float(p))
