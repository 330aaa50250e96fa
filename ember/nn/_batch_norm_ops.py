"""The batch-norm building blocks torch exposes at the top level, which SyncBatchNorm composes
across processes: per-channel statistics (batch_norm_stats), their merge over the processes'
counts (batch_norm_gather_stats[_with_counts]), the normalization (batch_norm_elemt), the two
halves of its backward (batch_norm_backward_reduce, batch_norm_backward_elemt) and the running
statistics' update (batch_norm_update_stats).

Channels are dimension 1; statistics reduce over every other dimension. `invstd` is
1 / sqrt(var + eps) with the biased variance; running variances are updated with the unbiased
one, as nn.BatchNorm does. torch runs these (but batch_norm_update_stats) on CUDA only; ember
computes them on any device, with ember's ops (so they are differentiable where torch's are).
"""
from .. import _dtype as D
from ..autograd.grad_mode import no_grad
from ..ops.creation import tensor
from ..ops.pointwise import rsqrt

__all__ = ["batch_norm_stats", "batch_norm_elemt", "batch_norm_gather_stats",
           "batch_norm_gather_stats_with_counts", "batch_norm_backward_reduce",
           "batch_norm_backward_elemt", "batch_norm_update_stats"]


def _dims(input):
    return tuple(d for d in range(input.dim()) if d != 1)


def _channel(t, input):
    """A per-channel (C,) tensor shaped to broadcast against input (N, C, *)."""
    return t.reshape((1, -1) + (1,) * (input.dim() - 2))


def _acc(input):
    # half inputs keep their statistics in float32
    return input.float() if input.dtype in (D.float16, D.bfloat16) else input


def batch_norm_stats(input, eps):
    """(mean, invstd) of each channel."""
    x = _acc(input)
    dims = _dims(x)
    mean = x.mean(dims)
    var = x.var(dims, correction=0)
    return mean, rsqrt(var + eps)


def batch_norm_elemt(input, weight, bias, mean, invstd, eps):
    out = (input - _channel(mean, input)) * _channel(invstd, input)
    if weight is not None:
        out = out * _channel(weight, input)
    if bias is not None:
        out = out + _channel(bias, input)
    return out.to(input.dtype)


def _update_running(running_mean, running_var, momentum, mean, var, count):
    with no_grad():
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean.to(running_mean.dtype) * momentum)
        if running_var is not None:
            unbiased = var * (count / (count - 1)) if count > 1 else var
            running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype) * momentum)


def batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var,
                                        momentum, eps, counts):
    """The global (mean, invstd) of per-process statistics (mean and invstd: (world, C);
    counts: the elements per channel each process saw), updating the running statistics."""
    counts = counts.to(mean.dtype).reshape(-1, 1)
    total = counts.sum()
    g_mean = (mean * counts).sum(0) / total
    var = 1 / (invstd * invstd) - eps                   # each process's biased variance
    g_var = (counts * (var + (mean - g_mean) ** 2)).sum(0) / total
    _update_running(running_mean, running_var, momentum, g_mean, g_var, total.item())
    return g_mean, rsqrt(g_var + eps)


def batch_norm_gather_stats(input, mean, invstd, running_mean, running_var, momentum, eps,
                            count):
    """batch_norm_gather_stats_with_counts with the same count for every process."""
    counts = tensor([float(count)] * mean.shape[0], dtype=mean.dtype, device=mean.device)
    return batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var,
                                               momentum, eps, counts)


def batch_norm_backward_reduce(grad_out, input, mean, invstd, weight, input_g, weight_g,
                               bias_g):
    """Per-channel sums for the backward: (sum_dy, sum_dy_xmu, grad_weight, grad_bias); the
    sums when input_g, the parameter gradients when weight_g / bias_g, else None."""
    dims = _dims(input)
    dy = _acc(grad_out)
    sum_dy = dy.sum(dims)
    sum_dy_xmu = (dy * (_acc(input) - _channel(mean, input))).sum(dims)
    grad_weight = (sum_dy_xmu * invstd).to(weight.dtype) if weight_g and weight is not None \
        else None
    grad_bias = sum_dy.to(weight.dtype if weight is not None else grad_out.dtype) if bias_g \
        else None
    if not input_g:
        sum_dy = sum_dy_xmu = None
    return sum_dy, sum_dy_xmu, grad_weight, grad_bias


def batch_norm_backward_elemt(grad_out, input, mean, invstd, weight, sum_dy, sum_dy_xmu, count):
    """The input's gradient from the global sums (count: the elements per channel of each
    process, summed to the global count)."""
    n = count.sum().to(mean.dtype)
    m, s = _channel(mean, input), _channel(invstd, input)
    grad = (_acc(grad_out) - _channel(sum_dy / n, input)
            - (_acc(input) - m) * s * s * _channel(sum_dy_xmu / n, input)) * s
    if weight is not None:
        grad = grad * _channel(weight, input)
    return grad.to(input.dtype)


def batch_norm_update_stats(input, running_mean, running_var, momentum):
    """(mean, biased var) of each channel, and the running statistics updated with them."""
    with no_grad():
        x = _acc(input)
        dims = _dims(x)
        mean = x.mean(dims)
        var = x.var(dims, correction=0)
        _update_running(running_mean, running_var, momentum, mean, var,
                        input.numel() // max(input.shape[1], 1))
    return mean.to(input.dtype), var.to(input.dtype)
