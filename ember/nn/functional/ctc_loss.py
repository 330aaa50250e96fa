"""F.ctc_loss: the Connectionist Temporal Classification loss, computed in log space.

A target l1..lS becomes the extended label sequence (blank, l1, blank, l2, ..., lS, blank) of
L = 2S + 1 positions. alpha[t, n, s] is the log probability of the path prefixes that are at
position s in frame t, beta[t, n, s] that of the suffixes from (t, s) to the end (both count
frame t's emission). A step may stay at s, move to s + 1, or skip a blank to s + 2 when the two
labels differ. The recursions are a Python loop over time; each step handles every batch item
and every position at once.

As torch, the gradient w.r.t. log_probs is that of the loss plus exp(log_probs) (for the frames
within the input length): the gradient w.r.t. the logits once it goes through a log_softmax
backward. The backward has no derivative itself: double backward raises torch's error.
"""
import numpy as np

from ... import _dtype as D
from ..._tensor import Tensor
from ..._backend import backend as _backend, of as _backend_of
from ..._printing import scalar_type_name
from ...ops.registry import primitive
from ...ops.creation import arg_kind, zeros
from ...ops.pointwise import where
from .loss import _reduction

_NEG_INF = -np.inf
_WHILE = " (while checking arguments for ctc_loss_allocate_outputs)"
_REDUCTION_ENUM = {"none": 0, "mean": 1, "sum": 2}


# ----------------------------------------------------------------------------- the recursions
def _logsumexp3(xp, a, b, c):
    top = xp.maximum(xp.maximum(a, b), c)
    safe = xp.where(xp.isneginf(top), 0, top)     # all -inf: the sum is -inf (log 0)
    with np.errstate(divide="ignore"):
        return safe + xp.log(xp.exp(a - safe) + xp.exp(b - safe) + xp.exp(c - safe))


def _shift(xp, x, k):
    """x moved k positions along the last axis (k > 0: to higher s), -inf filled."""
    out = xp.full_like(x, _NEG_INF)
    if k > 0:
        out[..., k:] = x[..., :-k]
    else:
        out[..., :k] = x[..., -k:]
    return out


def _extended(xp, log_probs, targets, target_lengths, blank):
    """Each (n, s): the log probability of its label per frame (T, N, L), -inf beyond the
    target; whether s may be reached by skipping from s - 2; and which positions exist."""
    n_batch, max_len = targets.shape
    width = 2 * max_len + 1
    valid = xp.arange(width) < 2 * target_lengths[:, None] + 1
    labels = xp.full((n_batch, width), blank, dtype=np.int64)
    labels[:, 1::2] = targets
    labels = xp.where(valid, labels, blank)           # (padding may hold anything)
    skip = xp.zeros((n_batch, width), dtype=bool)
    skip[:, 3::2] = targets[:, 1:] != targets[:, :-1]
    emit = xp.take_along_axis(log_probs, xp.broadcast_to(labels, (len(log_probs),) +
                                                         labels.shape), axis=2)
    return xp.where(valid, emit, _NEG_INF), labels, skip, valid


def _log_likelihood(xp, log_alpha, input_lengths, target_lengths):
    """log p(target | input) per batch item, from alpha at its last frame."""
    batch = xp.arange(len(input_lengths))
    last = log_alpha[xp.maximum(input_lengths - 1, 0), batch]            # (N, L)
    end = last[batch, 2 * target_lengths]
    before = xp.where(target_lengths > 0,
                      last[batch, xp.maximum(2 * target_lengths - 1, 0)], _NEG_INF)
    ll = xp.logaddexp(end, before)
    # no frame: only the empty target is possible (with probability 1)
    return xp.where(input_lengths == 0, xp.where(target_lengths == 0, 0, _NEG_INF),
                    ll).astype(log_alpha.dtype)


@primitive("_ctc_loss", node="CtcLossBackward0", save=("log_probs", "result0", "result1"),
           n_outputs=2, differentiable_outputs=1)
def _ctc_loss(xp, log_probs, *, targets, input_lengths, target_lengths, blank, zero_infinity):
    """(negative log likelihood per batch item, log alpha) as torch's _ctc_loss."""
    emit, _, skip, _ = _extended(xp, log_probs, targets, target_lengths, blank)
    log_alpha = xp.full_like(emit, _NEG_INF)
    log_alpha[0, :, :2] = emit[0, :, :2]
    for t in range(1, len(emit)):
        prev = log_alpha[t - 1]
        log_alpha[t] = _logsumexp3(xp, prev, _shift(xp, prev, 1),
                                   xp.where(skip, _shift(xp, prev, 2), _NEG_INF)) + emit[t]
    return -_log_likelihood(xp, log_alpha, input_lengths, target_lengths), log_alpha


@_ctc_loss.derivative
def _(ctx, grad):
    return _ctc_loss_backward(grad, ctx.log_probs, nll=ctx.result0, log_alpha=ctx.result1,
                              targets=ctx.targets, input_lengths=ctx.input_lengths,
                              target_lengths=ctx.target_lengths, blank=ctx.blank,
                              zero_infinity=ctx.zero_infinity)


@primitive("_ctc_loss_backward", node="torch::autograd::NotImplemented")
def _ctc_loss_backward(xp, grad, log_probs, *, nll, log_alpha, targets, input_lengths,
                       target_lengths, blank, zero_infinity):
    n_frames, n_batch, n_classes = log_probs.shape
    emit, labels, skip, valid = _extended(xp, log_probs, targets, target_lengths, blank)
    batch = xp.arange(n_batch)
    # beta starts at each item's last frame, in its last two positions
    last = xp.maximum(input_lengths - 1, 0)
    start = xp.full(emit.shape[1:], _NEG_INF, dtype=emit.dtype)
    ends = 2 * target_lengths
    start[batch, ends] = emit[last, batch, ends]
    before = xp.maximum(ends - 1, 0)
    start[batch, before] = xp.where(target_lengths > 0, emit[last, batch, before],
                                    start[batch, before])
    skip_from_next = xp.zeros_like(skip)               # s + 2 may be reached from s
    skip_from_next[:, :-2] = skip[:, 2:]
    log_beta = xp.full_like(emit, _NEG_INF)
    after = xp.full(emit.shape[1:], _NEG_INF, dtype=emit.dtype)
    for t in range(n_frames - 1, -1, -1):
        step = _logsumexp3(xp, after, _shift(xp, after, -1),
                           xp.where(skip_from_next, _shift(xp, after, -2), _NEG_INF)) + emit[t]
        step = xp.where((t == input_lengths - 1)[:, None], start,
                        xp.where((t < input_lengths - 1)[:, None], step, _NEG_INF))
        log_beta[t] = after = step
    # the share of the paths through (t, s): alpha * beta / (emission * p), in [0, 1]; summed
    # per label it is exp(logsumexp_s(alpha + beta) + nll - log_probs), torch's term
    with np.errstate(invalid="ignore", over="ignore"):
        share = xp.exp(log_alpha + log_beta - xp.where(valid, emit, 0) + nll[:, None])
    share = xp.where(valid, share, 0)
    # torch's kernel keeps, in the last frame, only the last label's share when that label is
    # the blank itself (the final blank's share is overwritten): so do we
    clash = (target_lengths > 0) & (input_lengths > 0) & (labels[batch, before] == blank)
    share[last[clash], batch[clash], ends[clash]] = 0
    frames = xp.arange(n_frames)[:, None, None]
    flat = ((frames * n_batch + batch[:, None]) * n_classes + labels).reshape(-1)
    through = xp.zeros(n_frames * n_batch * n_classes, dtype=emit.dtype)
    _backend_of(xp).scatter_add(through, flat, share.reshape(-1))
    through = through.reshape(log_probs.shape)
    # where torch's log-space term is -inf + inf (a zero-probability label, or an impossible
    # target), it gives nan
    impossible = xp.isinf(nll)[None, :, None]
    through = xp.where(xp.isneginf(log_probs) | impossible, xp.nan, through)
    with np.errstate(invalid="ignore"):
        result = (xp.exp(log_probs) - through) * grad[None, :, None]
    inside = frames < input_lengths[None, :, None]
    if zero_infinity:
        inside = inside & ~impossible
    return xp.where(inside, result, 0).astype(log_probs.dtype, copy=False)


@_ctc_loss_backward.derivative
def _(ctx, grad):
    raise RuntimeError("derivative for aten::_ctc_loss_backward is not implemented")


# ----------------------------------------------------------------------------- checks
def _is_int_list(x):
    return isinstance(x, (list, tuple)) and all(isinstance(v, int) for v in x)


def _check_overload(args):
    """torch's TypeError when the lengths are neither both tensors nor both int lists."""
    il, tl, blank, zero_infinity = args[2], args[3], args[4], args[6]
    lengths_ok = (isinstance(il, Tensor) and isinstance(tl, Tensor)) or \
        (_is_int_list(il) and _is_int_list(tl))
    if lengths_ok and isinstance(blank, int) and isinstance(zero_infinity, bool):
        return
    got = ", ".join(type(a).__name__ if not isinstance(a, Tensor) else "Tensor" for a in args)

    def mark(a):
        return "!Tensor!" if isinstance(a, Tensor) else arg_kind(a)
    # (torch marks every argument after the tensors as mismatched, except tensor lengths in
    # the tensor overload)
    as_lists = ", ".join(["Tensor", "Tensor"] + [mark(a) for a in args[2:]])
    as_tensors = ", ".join(["Tensor", "Tensor"] +
                           ["Tensor" if isinstance(a, Tensor) else mark(a) for a in args[2:4]] +
                           [mark(a) for a in args[4:]])
    head = "(Tensor log_probs, Tensor targets, {0} input_lengths, {0} target_lengths, int blank " \
           "= 0, int reduction = at::Reduction::Mean, bool zero_infinity = False)"
    why = "      didn't match because some of the arguments have invalid types: "
    raise TypeError(f"ctc_loss() received an invalid combination of arguments - got ({got}), "
                    f"but expected one of:\n * {head.format('tuple of ints')}\n{why}"
                    f"({as_lists})\n * {head.format('Tensor')}\n{why}({as_tensors})\n")


def _lengths(value, name):
    if isinstance(value, Tensor):
        if value.dtype.is_floating_point or value.dtype.is_complex or value.dtype is D.bool_:
            raise RuntimeError(f"{name} must be integral")
        return np.asarray(value.detach().cpu()._data, dtype=np.int64).reshape(-1)
    return np.asarray(value, dtype=np.int64).reshape(-1)


def _first(values, bad):
    return int(values[np.argmax(bad)])


def _padded_targets(targets, input_lengths, target_lengths, n_frames, n_batch):
    """The targets as an (N, S) int64 array, after torch's checks of the lengths."""
    flat = np.asarray(targets.detach().cpu()._data).astype(np.int64)
    if len(input_lengths) != n_batch:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(target_lengths) != n_batch:
        raise RuntimeError("target_lengths must be of size batch_size")
    if (target_lengths < 0).any():
        raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value "
                           f"{_first(target_lengths, target_lengths < 0)}{_WHILE}")
    longest = int(target_lengths.max()) if n_batch else 0
    if targets.dim() == 2:
        if longest > flat.shape[1]:
            raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension "
                               f"1, but got size {flat.shape[1]} for argument #2 'targets'"
                               f"{_WHILE}")
        padded = flat[:, :longest]
    else:
        total = int(target_lengths.sum())
        if total != flat.shape[0]:
            raise RuntimeError(f"Expected tensor to have size {total} at dimension 0, but got "
                               f"size {flat.shape[0]} for argument #2 'targets'{_WHILE}")
        # item n's labels start where those of the items before it end
        starts = np.cumsum(target_lengths) - target_lengths
        column = np.arange(longest)
        inside = column < target_lengths[:, None]
        padded = np.where(inside, flat[np.where(inside, starts[:, None] + column, 0)], 0)
    for bad, word in ((input_lengths < 0, "least 0"), (input_lengths > n_frames,
                                                        f"most {n_frames}")):
        if bad.any():
            raise RuntimeError(f"Expected input_lengths to have value at {word}, but got value "
                               f"{_first(input_lengths, bad)}{_WHILE}")
    return padded


# ----------------------------------------------------------------------------- F.ctc_loss
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    reduction = _reduction(reduction)
    _check_overload((log_probs, targets, input_lengths, target_lengths, blank,
                     _REDUCTION_ENUM[reduction], zero_infinity))
    input_lengths = _lengths(input_lengths, "input_lengths")
    target_lengths = _lengths(target_lengths, "target_lengths")
    if log_probs.dtype not in (D.float32, D.float64):
        raise NotImplementedError(f"\"ctc_loss_cpu\" not implemented for "
                                  f"'{scalar_type_name(log_probs.dtype)}'")
    if log_probs.numel() == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    batched = log_probs.dim() == 3
    if not batched:
        log_probs = log_probs.unsqueeze(1)
    if log_probs.dim() != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {log_probs.dim()}-"
                           f"dimensional tensor for argument #1 'log_probs'{_WHILE}")
    n_frames, n_batch, n_classes = log_probs.shape
    if targets.dim() not in (1, 2):
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.dim()}-dimensional "
                           f"tensor for argument #2 'targets'{_WHILE}")
    if not 0 <= blank < n_classes:
        raise RuntimeError("blank must be in label range")
    padded = _padded_targets(targets, input_lengths, target_lengths, n_frames, n_batch)
    if log_probs._device.type != "cpu":
        # (checked on the host, as torch's CPU kernel checks them; computed beside log_probs)
        to_device = _backend(log_probs._device.type).from_host
        padded, input_lengths, target_lengths = (
            to_device(a, log_probs._device.index) for a in (padded, input_lengths, target_lengths))
    loss, _ = _ctc_loss(log_probs, targets=padded, input_lengths=input_lengths,
                        target_lengths=target_lengths, blank=blank,
                        zero_infinity=zero_infinity)
    if zero_infinity:
        loss = where(loss == float("inf"), zeros((), dtype=loss.dtype), loss)
    if reduction == "mean":
        lengths = Tensor._make(target_lengths.astype(loss.dtype.np), loss.dtype, loss._device)
        return (loss / lengths.clamp_min(1)).mean()
    if reduction == "sum":
        return loss.sum()
    return loss if batched else loss.squeeze(0)
