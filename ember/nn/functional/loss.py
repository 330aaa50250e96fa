"""Losses: regression, classification, margin and embedding losses, and linear_cross_entropy."""
import math
import warnings

import numpy as np

from ... import _dtype as D
from ..._tensor import Tensor
from ...autograd import grad_mode
from ...ops.creation import zeros
from ...ops.registry import primitive, COMMON
from ...ops import pointwise as P
from ...ops.special import xlogy as _special_xlogy
from ...ops import arithmetic as _arith
from .linear import linear
from ._utils import (_const, _xp, _dtype_word, _add_scalar, _sub_scalar, _mul_scalar,
                     _div_scalar, _clamp_min_scalar, _scalar_minus, _broadcast,
                     _not_implemented_backward)
from .activation import softplus, log_softmax, logsigmoid, _softplus_array
from .distance import pairwise_distance


# ============================================================================ losses
def _legacy_reduction(size_average, reduce, emit_warning=True):
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "none" if not reduce else ("mean" if size_average else "sum")
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use "
                      f"reduction='{ret}' instead.", stacklevel=3)
    return ret


def _reduction(reduction, size_average=None, reduce=None):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _reduce_array(xp, loss, reduction):
    if reduction == "mean":
        if loss.size == 0:      # torch's mean of nothing is nan, without NumPy's warning
            return xp.asarray(xp.nan, dtype=loss.dtype)
        return loss.mean(dtype=loss.dtype)
    if reduction == "sum":
        return loss.sum(dtype=loss.dtype)
    return loss


def _reduced_grad(ctx, g):
    """The incoming gradient spread back over the elements of an elementwise loss."""
    if ctx.reduction == "mean":
        n = 1
        for s in ctx.input_shape():
            n *= s
        return g / n
    return g


def _warn_size(input, target):
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input "
                      f"size ({input.shape}). This will likely lead to incorrect results due to "
                      f"broadcasting. Please ensure they have the same size.", stacklevel=3)


def _pointwise_loss(op, input, target, reduction, **options):
    _warn_size(input, target)
    input, target = _broadcast(input, target)
    return op(input, target, reduction=reduction, **options)


def _both_grads(ctx, g_input):
    needs = ctx.needs_input_grad
    return (g_input if needs[0] else None), (-g_input if needs[1] else None)


@primitive("mse_loss", node="MseLossBackward0", save=("self", "target"), promote=COMMON)
def _mse_loss(xp, self, target, *, reduction):
    d = self - target
    return _reduce_array(xp, d * d, reduction)


@_mse_loss.derivative
def _(ctx, g):
    return _both_grads(ctx, _reduced_grad(ctx, g) * 2 * (ctx.self - ctx.target))


def _check_weight(weight, input):
    if weight is not None and weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")


def _weighted_reduce(loss, weight, reduction):
    """A pointwise loss times per-element weights, reduced; 'mean' is the weighted mean."""
    loss = loss * weight
    if reduction == "mean":
        return loss.sum() / weight.sum()
    return _reduce(loss, reduction)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = _reduction(reduction, size_average, reduce)
    if weight is not None:
        _check_weight(weight, input)
        _warn_size(input, target)
        return _weighted_reduce((input - target) ** 2, weight, reduction)
    return _pointwise_loss(_mse_loss, input, target, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = _reduction(reduction, size_average, reduce)
    _check_weight(weight, input)
    _warn_size(input, target)
    loss = (input - target).abs()
    return _weighted_reduce(loss, weight, reduction) if weight is not None else \
        _reduce(loss, reduction)


def _smooth_l1_forward(xp, self, target, *, reduction, beta):
    d = xp.abs(self - target)
    loss = xp.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta).astype(d.dtype)
    return _reduce_array(xp, loss, reduction)


_smooth_l1_loss = primitive("smooth_l1_loss", node="SmoothL1LossBackward0",
                            save=("self", "target"), promote=COMMON)(_smooth_l1_forward)


@_smooth_l1_loss.derivative
def _(ctx, g):
    d = ctx.self - ctx.target
    beta = ctx.beta
    slope = P.where(d < -beta, -1.0, P.where(d > beta, 1.0, d / beta)).to(d.dtype)
    return _both_grads(ctx, _reduced_grad(ctx, g) * slope)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    reduction = _reduction(reduction, size_average, reduce)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0.0:
        return l1_loss(input, target, reduction=reduction)
    return _pointwise_loss(_smooth_l1_loss, input, target, reduction, beta=beta)


@primitive("huber_loss", node="HuberLossBackward0", save=("self", "target"), promote=COMMON)
def _huber_loss(xp, self, target, *, reduction, delta):
    d = xp.abs(self - target)
    loss = xp.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)).astype(d.dtype)
    return _reduce_array(xp, loss, reduction)


@_huber_loss.derivative
def _(ctx, g):
    d = ctx.self - ctx.target
    delta = ctx.delta
    slope = P.where(d < -delta, -delta, P.where(d > delta, delta, d)).to(d.dtype)
    return _both_grads(ctx, _reduced_grad(ctx, g) * slope)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    reduction = _reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is not None:
        # torch weighs the unreduced loss, then reduces it as usual (a plain mean)
        _check_weight(weight, input)
        loss = _pointwise_loss(_huber_loss, input, target, "none", delta=delta)
        return _reduce(loss * weight, reduction)
    return _pointwise_loss(_huber_loss, input, target, reduction, delta=delta)


# ---------------------------------------------------------------------------- binary
def _no_grad_argument(tensor, argument, function):
    """torch's error for a tensor argument its function is not differentiable for (weights):
    such an argument is an option of the op, with no edge in the graph."""
    if tensor is not None and tensor.requires_grad and grad_mode.is_grad_enabled():
        raise RuntimeError(f"The function '{function}' is not differentiable with respect to "
                           f"argument '{argument}'. This input cannot have requires_grad True.")
    return None if tensor is None else tensor._data


def _const_or_none(array, like):
    return None if array is None else _const(array, like)


@primitive("binary_cross_entropy", node="BinaryCrossEntropyBackward0", save=("self", "target"))
def _bce(xp, self, target, *, weight, reduction):
    # written so that nan is out of range too
    if not xp.all((self >= 0) & (self <= 1)):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if not xp.all((target >= 0) & (target <= 1)):
        raise RuntimeError("all elements of target should be between 0 and 1")
    # PyTorch clamps each log at -100 so that a saturated prediction costs 100, not inf
    log_p = xp.maximum(xp.log(self), -100)
    log_q = xp.maximum(xp.log1p(-self), -100)
    loss = -(target * log_p + (1 - target) * log_q)
    if weight is not None:
        loss = loss * weight
    return _reduce_array(xp, loss.astype(self.dtype), reduction)


@_bce.derivative
def _(ctx, g):
    x, t, w = ctx.self, ctx.target, _const_or_none(ctx.weight, g)
    g = _reduced_grad(ctx, g)
    if w is not None:
        g = g * w
    needs = ctx.needs_input_grad
    gx = g * (x - t) / (x * (1 - x)).clamp_min(1e-12) if needs[0] else None
    gt = None
    if needs[1]:
        gt = g * ((-x).log1p() - x.log())        # unclamped, as torch's target gradient
    return gx, gt


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the "
                         f"input size ({input.shape}) is deprecated. Please ensure they have "
                         f"the same size.")
    if weight is not None and weight.shape != input.shape:
        # torch expands the weight to the target's size (naming the first bad dim from the
        # right), then writes the loss into a tensor of the input's shape
        for i in range(1, min(weight.dim(), target.dim()) + 1):
            if weight.shape[-i] not in (1, target.shape[-i]):
                raise RuntimeError(f"Attempting to broadcast a dimension of length "
                                   f"{weight.shape[-i]} at -{i}! Mismatching argument at index "
                                   f"1 had {weight.shape}; but expected shape should be "
                                   f"broadcastable to {list(target.shape)}")
        shape = _broadcast(weight, target)[0].shape
        if shape != input.shape:
            raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the "
                               f"broadcast shape {list(shape)}")
        weight = weight.expand(input.shape)
    if target.dtype != input.dtype:
        raise RuntimeError(f"Found dtype {_dtype_word(target.dtype)} but expected "
                           f"{_dtype_word(input.dtype)}")
    return _bce(input, target, weight=_no_grad_argument(weight, "weight", "binary_cross_entropy"),
                reduction=reduction)


@primitive("binary_cross_entropy_with_logits", node="BinaryCrossEntropyWithLogitsBackward0",
           save=("self", "target"))
def _bce_logits(xp, self, target, *, weight, pos_weight, reduction):
    # (1 - t) x + l (log(1 + e^-|x|) + max(-x, 0)),  l = 1 + (pos_weight - 1) t
    softplus_neg = xp.log1p(xp.exp(-xp.abs(self))) + xp.maximum(-self, 0)
    scale = 1 if pos_weight is None else 1 + (pos_weight - 1) * target
    loss = (1 - target) * self + scale * softplus_neg
    if weight is not None:
        loss = loss * weight
    # torch builds the loss on the target, so it has the target's dtype
    return _reduce_array(xp, loss.astype(target.dtype), reduction)


@_bce_logits.derivative
def _(ctx, g):
    x, t = ctx.self, ctx.target
    w, pw = _const_or_none(ctx.weight, g), _const_or_none(ctx.pos_weight, g)
    g = _reduced_grad(ctx, g)
    if w is not None:
        g = g * w
    needs = ctx.needs_input_grad
    gx = gt = None
    if needs[0]:
        if pw is None:
            gx = g * (x.sigmoid() - t)
        else:
            scale = (pw - 1) * t + 1
            gx = g * ((1 - t) - scale * (-x).sigmoid())
    if needs[1]:
        gt = -g * x if pw is None else g * ((pw - 1) * softplus(-x) - x)
    return gx, gt


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction="mean", pos_weight=None):
    reduction = _reduction(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    # the shape errors torch's broadcasting products give (pos_weight * target, loss * weight)
    if pos_weight is not None:
        _broadcast(pos_weight, target)
    if weight is not None:
        _broadcast(input, weight)
    name = "binary_cross_entropy_with_logits"
    return _bce_logits(input, target, weight=_no_grad_argument(weight, "weight", name),
                       pos_weight=_no_grad_argument(pos_weight, "pos_weight", name),
                       reduction=reduction)


# ---------------------------------------------------------------------------- classification
def _nll_weights(xp, target, weight, ignore_index, n_classes, dtype):
    """(safe targets, per-target weights or None for all ones) of an NLL loss.

    Ignored targets read class 0 with weight 0; an out-of-range target is torch's IndexError.
    The common case (no class weights, nothing ignored) makes no weight array at all."""
    ignored = target == ignore_index
    any_ignored = bool(ignored.any())
    safe = xp.where(ignored, 0, target) if any_ignored else target
    if ((safe < 0) | (safe >= n_classes)).any():
        bad = (safe < 0) | (safe >= n_classes)
        raise IndexError(f"Target {int(target[bad].reshape(-1)[0])} is out of bounds.")
    if weight is None and not any_ignored:
        return safe, None
    w = xp.ones(safe.shape, dtype) if weight is None else weight[safe].astype(dtype)
    return safe, (xp.where(ignored, 0, w).astype(dtype) if any_ignored else w)


def _pick(xp, a, index, cdim):
    """a's entries at `index` along the class dim cdim (index has a's shape without cdim)."""
    if a.ndim == 2 and cdim == 1:
        return a[xp.arange(a.shape[0]), index]
    return xp.take_along_axis(a, xp.expand_dims(index, cdim), cdim).squeeze(cdim)


def _nll_forward(xp, self, *, target, weight, ignore_index, reduction):
    cdim = 0 if self.ndim == 1 else 1
    safe, w = _nll_weights(xp, target, weight, ignore_index, self.shape[cdim], self.dtype)
    picked = self[safe] if self.ndim == 1 else _pick(xp, self, safe, cdim)
    losses = -picked if w is None else -picked * w
    if reduction == "none":
        return xp.asarray(losses, dtype=self.dtype)
    total = losses.sum(dtype=self.dtype)
    if reduction == "sum":
        return total
    count = self.dtype.type(safe.size) if w is None else w.sum(dtype=self.dtype)
    return xp.asarray(total / count, dtype=self.dtype)


def _nll_derivative(ctx, g):
    """-w[t] (/ total weight for 'mean') at each target's class, zero elsewhere: a constant
    coefficient times the incoming gradient, so this is differentiable again."""
    shape, dtype = ctx.input_shape(), ctx.input_dtype()
    cdim = 0 if len(shape) == 1 else 1
    xp = _xp(g)
    safe, w = _nll_weights(xp, ctx.target, ctx.weight, ctx.ignore_index, shape[cdim],
                           dtype.np)
    minus_w = xp.full(safe.shape, -1, dtype.np) if w is None else -w
    if ctx.reduction == "mean":
        total = safe.size if w is None else w.sum(dtype=dtype.np)
        if total != 0:                 # all targets ignored: torch's gradient is all zeros
            minus_w = (minus_w / total).astype(dtype.np)
    # no graph to record (no create_graph) and a scalar gradient: the coefficients times it,
    # written straight into the zeros (one op and one pass fewer; zeros stay +0, as torch's)
    direct = ctx.reduction != "none" and not grad_mode.state.enabled and xp is np and \
        g._data.ndim == 0 and g._data.dtype == dtype.np
    if direct:
        minus_w = (minus_w * g._data).astype(dtype.np, copy=False)
        ignored = ctx.target == ctx.ignore_index
        if ignored.any():       # +0 there (not -0 * g): torch leaves those entries unwritten
            minus_w = np.where(ignored, dtype.np.type(0), minus_w)
    # -w at each target's class, zero elsewhere
    coef = xp.zeros(shape, dtype.np)
    if len(shape) == 1:
        coef[safe] = minus_w
    elif len(shape) == 2:
        coef[xp.arange(shape[0]), safe] = minus_w
    else:
        xp.put_along_axis(coef, xp.expand_dims(safe, cdim), xp.expand_dims(minus_w, cdim),
                          cdim)
    if direct:
        return _const(coef, g)
    if ctx.reduction == "none":
        g = g.unsqueeze(cdim)
    return g * _const(coef, g)


_nll_loss = primitive("nll_loss", node="NllLossBackward0")(_nll_forward)
_nll_loss.derivative(_nll_derivative)
_nll_loss2d = primitive("nll_loss2d", node="NllLoss2DBackward0")(_nll_forward)
_nll_loss2d.derivative(_nll_derivative)


def _check_target_dtype(target):
    if target._dtype not in (D.int64, D.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{_dtype_word(target._dtype)}")


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    dim = input.dim()
    if dim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {dim})")
    if dim != 1 and (target.dim() == 0 or input.shape[0] != target.shape[0]):
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({target.shape[0] if target.dim() else 0}).")
    n_classes = input.shape[0 if dim == 1 else 1]
    if dim <= 2:
        if target.dim() > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    elif dim == 4:
        if target.dim() != 3 or target.shape != input.shape[:1] + input.shape[2:]:
            raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: "
                               f"{list(target.shape)}")
    elif target.shape != input.shape[:1] + input.shape[2:]:
        raise RuntimeError(f"Expected target size {list(input.shape[:1] + input.shape[2:])}, "
                           f"got {list(target.shape)}")
    _check_target_dtype(target)
    if weight is not None and weight.numel() != n_classes:
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} classes "
                           f"or no classes but got weight tensor of shape: "
                           f"{list(weight.shape)}")
    if weight is not None and weight._dtype is not input._dtype:
        raise RuntimeError(f"expected scalar type {_dtype_word(input._dtype)} but found "
                           f"{_dtype_word(weight._dtype)}")
    options = dict(weight=None if weight is None else weight._data,
                   ignore_index=ignore_index, reduction=reduction)
    if dim <= 2:
        return _nll_loss(input, target=target._data, **options)
    if dim == 4:
        return _nll_loss2d(input, target=target._data, **options)
    # other ranks go through the 4-D kernel: (N, C, d1) as (N, C, d1, 1), higher as (N, C, 1, -1)
    n, c = input.shape[:2]
    shape4 = (n, c, input.shape[2], 1) if dim == 3 else (n, c, 1, -1)
    flat_target = target._data.reshape((n,) + shape4[2:] if dim == 3 else (n, 1, -1))
    out = _nll_loss2d(input.reshape(shape4), target=flat_target, **options)
    return out.reshape(target.shape) if reduction == "none" else out


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    reduction = _reduction(reduction, size_average, reduce)
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    if not label_smoothing > 0.0:       # torch smooths nothing for a negative (or nan) amount
        label_smoothing = 0.0
    cdim = 0 if input.dim() == 1 else 1
    logp = log_softmax(input, cdim)
    n_classes = input.shape[cdim]
    if target.shape == input.shape and target.is_floating_point():
        if ignore_index != -100:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _cross_entropy_probs(logp, target, weight, reduction, label_smoothing, cdim)
    loss = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing == 0.0:
        return loss
    # mix in the loss against the uniform distribution: -mean over classes of log p
    wshape = [1] * input.dim()
    wshape[cdim] = n_classes
    smooth = -(logp * weight.reshape(wshape)).sum(cdim) if weight is not None else \
        -logp.sum(cdim)
    ignored = target == ignore_index
    smooth = smooth.masked_fill(ignored, 0.0)
    if reduction == "mean":
        kept = target._data[~ignored._data]
        total = weight._data[kept].sum() if weight is not None else kept.size
        smooth = smooth.sum() / total
    elif reduction == "sum":
        smooth = smooth.sum()
    return _mul_scalar(loss, other=1 - label_smoothing) + _mul_scalar(
        smooth, other=label_smoothing / n_classes)


def _cross_entropy_probs(logp, target, weight, reduction, label_smoothing, cdim):
    n_classes = logp.shape[cdim]
    if label_smoothing > 0:
        target = _add_scalar(_mul_scalar(target, other=1 - label_smoothing),
                             other=label_smoothing / n_classes)
    terms = logp * target
    if weight is not None:
        wshape = [1] * logp.dim()
        wshape[cdim] = n_classes
        terms = terms * weight.reshape(wshape)
    if reduction == "none":
        return -terms.sum(cdim)
    total = -terms.sum()
    if reduction == "sum":
        return total
    return _div_scalar(total, other=logp.numel() // n_classes)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns "
                      "with the KL div math definition.'mean' will be changed to behave the "
                      "same as 'batchmean' in the next major release.", stacklevel=2)
    if reduction not in ("none", "mean", "sum", "batchmean"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = _special_xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() != 0 else loss.sum()
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                          reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    eps = 1e-12
    dim = input1.dim() - 1
    dot = (input1 * input2).sum(dim)
    mag1 = _add_scalar((input1 * input1).sum(dim), other=eps)
    mag2 = _add_scalar((input2 * input2).sum(dim), other=eps)
    cos = dot / (mag1 * mag2).sqrt()
    zero = zeros((), dtype=cos.dtype)
    pos = P.where(target == 1, _scalar_minus(1, cos), zero)
    neg = P.where(target == -1, _clamp_min_scalar(_sub_scalar(cos, other=margin), 0), zero)
    return _reduce(pos + neg, reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    if not (input1.dim() == input2.dim() == target.dim()):
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.shape}, input2: {input2.shape}, "
                           f"target: {target.shape} ")
    return _reduce(_clamp_min_scalar(_add_scalar(-target * (input1 - input2), other=margin), 0),
                   reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    zero = zeros((), dtype=input.dtype)
    margin_clamp = _clamp_min_scalar(_scalar_minus(margin, input), 0)
    loss = P.where(target != 1, margin_clamp, zero) + P.where(target != -1, input, zero)
    return _reduce(loss, reduction)


@primitive("soft_margin_loss", node="SoftMarginLossBackward0", save=("self",))
def _soft_margin_loss(xp, self, *, target, reduction):
    # log(1 + exp(-t x)), without overflow
    return _reduce_array(xp, _softplus_array(xp, -target * self).astype(self.dtype), reduction)


@_soft_margin_loss.derivative
def _(ctx, g):
    t = _const(ctx.target, g)
    return _reduced_grad(ctx, g) * -t * (-t * ctx.self).sigmoid()


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    if target.shape != input.shape:
        # torch writes the loss into a tensor of the input's shape
        shape = _broadcast(input, target)[0].shape
        if shape != input.shape:
            raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the "
                               f"broadcast shape {list(shape)}")
    target = _no_grad_argument(target, "target", "soft_margin_loss")
    return _soft_margin_loss(input, target=target.astype(input._dtype.np, copy=False),
                             reduction=reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-08,
                     reduce=None, reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * _add_scalar(input, other=eps).log()
    if full:
        stirling = target * target.log() - target + _mul_scalar(
            _mul_scalar(target, other=2 * math.pi).log(), other=0.5)
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _arith.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce(_clamp_min_scalar(_add_scalar(d_pos, other=margin) - d_neg, 0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)) with any distance d
    (pairwise_distance by default); swap uses d(positive, negative) when smaller."""
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dims = (anchor.dim(), positive.dim(), negative.dim())
    if len(set(dims)) != 1:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {dims[0]}D, positive "
                           f"{dims[1]}D, and negative {dims[2]}D inputs")
    distance = pairwise_distance if distance_function is None else distance_function
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = _arith.minimum(d_neg, distance(positive, negative))
    loss = _clamp_min_scalar(margin + d_pos - d_neg, 0)
    return _reduce(loss, _reduction(reduction))


def gaussian_nll_loss(input, target, var, full=False, eps=1e-06, reduction="mean"):
    """0.5 (log var + (input - target)^2 / var) (+ 0.5 log 2 pi when full), with var floored
    at eps outside the graph. var may have input's shape, or lack (or have 1 as) its last dim."""
    if not isinstance(var, Tensor):
        var = input.new_full(input.shape, var)     # a number: one variance for every element
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (input.shape[:-1] == var.shape[:-1] and var.shape[-1] == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not valid")
    if bool((var._data < 0).any()):
        raise ValueError("var has negative entry/entries")
    var = var.clone()
    with grad_mode.no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """Binary cross entropy of each class's logit, averaged over the classes (last dim)."""
    reduction = _reduction(reduction, size_average, reduce)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    return _reduce(loss, reduction)


def _as_rows(input):
    """A (C,) or (N, C) input as (N, C), or torch's error for any other shape."""
    if input.dim() > 2 or (input.numel() == 0 and input.dim() != 2):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, "
                           f"but got: {list(input.shape)}")
    return input._data.reshape(-1, input.shape[-1] if input.dim() else 1)


def _reduce_rows(xp, losses, reduction, shape):
    """Per-sample losses reduced; 'none' keeps the batch shape (none for a 1-D input)."""
    if reduction == "none":
        return losses.reshape(shape)
    if losses.size == 0:
        return xp.zeros((), losses.dtype)      # (torch leaves this one uninitialized)
    return _reduce_array(xp, losses, reduction)


def _row_grad(ctx, g, n_rows):
    """The incoming gradient of a per-sample loss, as one value per row (N, 1)."""
    if ctx.reduction == "none":
        return g.reshape(-1, 1)
    return (g / n_rows if ctx.reduction == "mean" else g).reshape(1, 1)


# ---------------------------------------------------------------------------- multi margin
# loss(x, y) = sum over classes j != y of w[y] max(0, margin - x[y] + x[j])^p / C
@primitive("multi_margin_loss", node="MultiMarginLossBackward0", save=("self",))
def _multi_margin_loss(xp, self, *, target, p, margin, weight, reduction):
    x = self.reshape(-1, self.shape[-1] if self.ndim else 1)
    onehot = (xp.arange(x.shape[1]) == target.reshape(-1, 1)).astype(x.dtype)
    z = x - (x * onehot).sum(1, keepdims=True) + margin
    z = xp.where(onehot > 0, 0, xp.maximum(z, 0))
    terms = z if p == 1 else z * z
    if weight is not None:
        terms = terms * weight[target.reshape(-1)][:, None]
    losses = (terms.sum(1) / x.shape[1]).astype(self.dtype)
    return _reduce_rows(xp, losses, reduction, self.shape[:-1] if self.ndim == 2 else ())


@_multi_margin_loss.derivative
def _(ctx, g):
    x = ctx.self
    shape = x.shape
    rows = x.reshape(-1, shape[-1] if len(shape) else 1)
    n, c = rows.shape
    xp = _xp(g)
    target = ctx.target.reshape(-1)
    onehot = _const((xp.arange(c) == target[:, None]).astype(g._dtype.np), g)
    z = rows - (rows * onehot).sum(1, keepdim=True) + ctx.margin
    active = _const(((z._data > 0) & (onehot._data == 0)).astype(g._dtype.np), g)
    coef = active if ctx.p == 1 else z * active * 2     # d/dx[j] of each class's term
    if ctx.weight is not None:
        coef = coef * _const(ctx.weight[target][:, None].astype(g._dtype.np), g)
    coef = coef / c
    # x[j] enters its own term with +coef; x[y] enters every term with -coef
    grad_rows = coef - onehot * coef.sum(1, keepdim=True)
    # (torch's multi_margin_loss_backward has no derivative)
    return _not_implemented_backward((grad_rows * _row_grad(ctx, g, n)).reshape(shape), x,
                                     backward="multi_margin_loss_backward")


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    rows = _as_rows(input)
    n, c = rows.shape
    if target.dim() > 1 or target.numel() != n:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to "
                           f"the number of input samples (batch size). Expected target size "
                           f"[{n}], but got {list(target.shape)}. Input has shape "
                           f"{list(input.shape)}.")
    if target._dtype is not D.int64:
        raise RuntimeError(f"expected scalar type Long but found {_dtype_word(target._dtype)}")
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got "
                           f"{list(weight.shape)}")
    t = target._data
    if t.size and (t.min() < 0 or t.max() >= c):
        raise RuntimeError("target out of range")
    return _multi_margin_loss(input, target=t, p=p, margin=margin,
                              weight=None if weight is None else
                              weight._data.astype(input._dtype.np),
                              reduction=reduction)


# ---------------------------------------------------------------------------- multilabel margin
# Each row's target lists class indices up to its first -1. loss = sum over listed classes j and
# unlisted classes i of max(0, 1 - (x[j] - x[i])) / C.
def _multilabel_pairs(xp, x, target):
    """(hinge terms (N, T, C) for target entry t against class i, one-hot of each target
    entry's class (N, T, C), active pairs (N, T, C))."""
    c = x.shape[1]
    listed = xp.cumprod(target >= 0, axis=1).astype(bool)       # before the first -1
    longest = int(listed.sum(1).max()) if listed.size else 0
    listed, target = listed[:, :longest], target[:, :longest]   # T: the longest list
    safe = xp.where(listed, target, 0)
    entry_class = (safe[:, :, None] == xp.arange(c)) & listed[:, :, None]
    is_target = entry_class.any(1)
    z = 1 - xp.take_along_axis(x, safe, 1)[:, :, None] + x[:, None, :]
    active = listed[:, :, None] & ~is_target[:, None, :] & (z > 0)
    return z, entry_class, active


@primitive("multilabel_margin_loss", node="MultilabelMarginLossBackward0", save=("self",))
def _multilabel_margin_loss(xp, self, *, target, reduction):
    x = self.reshape(-1, self.shape[-1] if self.ndim else 1)
    z, _, active = _multilabel_pairs(xp, x, target.reshape(x.shape))
    losses = (xp.where(active, z, 0).sum((1, 2)) / x.shape[1]).astype(self.dtype)
    return _reduce_rows(xp, losses, reduction, self.shape[:-1] if self.ndim == 2 else ())


@_multilabel_margin_loss.derivative
def _(ctx, g):
    # piecewise linear in x: the gradient is g times a constant coefficient per element
    shape = ctx.input_shape()
    xp = _xp(g)
    x = ctx.self._data
    rows = x.reshape(-1, shape[-1] if len(shape) else 1)
    n, c = rows.shape
    _, entry_class, active = _multilabel_pairs(xp, rows, ctx.target.reshape(rows.shape))
    active = active.astype(rows.dtype)
    # +1 for each unlisted class i per active pair, -1 for the listed class of the entry
    coef = active.sum(1) - (active.sum(2)[:, :, None] * entry_class).sum(1)
    coef = _const((coef / c).astype(rows.dtype), g)
    return (coef * _row_grad(ctx, g, n)).reshape(shape)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    rows = _as_rows(input)
    if target.shape != input.shape and not (input.dim() <= 1 and target.dim() <= 1 and
                                            target.numel() == rows.size):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    if target._dtype is not D.int64:
        raise RuntimeError(f"expected scalar type Long but found {_dtype_word(target._dtype)}")
    t = target._data
    if t.size and (t.min() < -1 or t.max() >= rows.shape[1]):
        raise RuntimeError("argument #2 'target' is out of range")
    return _multilabel_margin_loss(input, target=t, reduction=reduction)


# ---------------------------------------------------------------------------- linear_cross_entropy
# torch has a chunked implementation (chosen by passing `options`) that never materializes the
# whole logits tensor; ember always computes the reference form, linear then cross_entropy, whose
# values are the ones the chunked path approximates. `options` are validated and, where torch's
# chunked path would refuse them, warned about as torch does.
def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0, options=None):
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...), where a weight of
    shape (C, d_1, ..., d_K, in_features) gives logits (N, C, d_1, ..., d_K)."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    batch = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(f"expected equal input and linear_weight last dimensions "
                           f"(in_features), got {input.shape[-1]} and "
                           f"{linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batch:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, "
                           f"(N, {in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits_shape = (*batch, num_classes, *out_features)
    # a target of the logits' shape holds class probabilities
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    if options is not None and (out_features or reduction not in {"mean", "sum", "none"} or
                                label_smoothing != 0.0 or target.dtype is not D.int64):
        bias_shape = tuple(linear_bias.shape) if linear_bias is not None else None
        warnings.warn(f"linear_cross_entropy: ``options`` ignored; chunked path needs reduction "
                      f"in {{'mean','sum','none'}}, label_smoothing == 0, target.dtype == int64, "
                      f"out_features == (). Got reduction={reduction!r}, "
                      f"label_smoothing={label_smoothing}, target.dtype={target.dtype}, "
                      f"out_features={out_features}, tracing=False, "
                      f"linear_bias.shape={bias_shape}.", stacklevel=2)
    n_out = math.prod(out_features, start=num_classes)
    logits = linear(input, linear_weight.reshape(n_out, in_features),
                      None if linear_bias is None else linear_bias.reshape(n_out))
    return cross_entropy(logits.reshape(logits_shape), target, weight=weight,
                           reduction=reduction, ignore_index=ignore_index,
                           label_smoothing=label_smoothing)
