"""Batch norm whose statistics are those of the whole batch spread over a process group.

`sync_batch_norm` is what SyncBatchNorm's forward calls in training when a group with more than
one process is initialised. It is written in differentiable ember ops around one autograd
Function, an all-reduce (sum) whose backward is again an all-reduce (sum) of the gradients:
so the gradient reaching each rank's input is that of the loss summed over ranks, which is
what torch's SyncBatchNorm backward computes (it all-reduces sum(dy) and sum(dy * (x - mean))).

The statistics are computed in two passes (the global mean, then the global sum of squared
deviations from it), which stays accurate where E[x^2] - E[x]^2 would cancel.
"""
from ..autograd import grad_mode
from ..autograd.function import Function
from ..ops.joining import cat
from . import distributed_c10d as c10d


class _AllReduceSum(Function):
    """Sum over the ranks of `group`; its backward sums the gradients over the ranks too."""

    @staticmethod
    def forward(ctx, tensor, group):
        ctx.group = group
        out = tensor.clone()
        c10d.all_reduce(out, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        grad = grad.clone()
        c10d.all_reduce(grad, group=ctx.group)
        return grad, None


def all_reduce_with_grad(tensor, group=None):
    """`tensor` summed over the group, differentiably."""
    return _AllReduceSum.apply(tensor, group)


def sync_batch_norm(input, weight, bias, running_mean, running_var, eps, momentum,
                    process_group=None):
    """Training-mode batch norm with the statistics of every rank's batch together.

    input: (N, C, *) on this rank (N may differ between ranks, even be 0). momentum is the
    factor for the running statistics as F.batch_norm takes it (the module works out
    momentum=None's cumulative factor). running_mean/var (may be None) are updated in place with
    the global mean and the unbiased global variance, as torch's SyncBatchNorm does.
    """
    channels = input.shape[1]
    dims = [0] + list(range(2, input.dim()))
    shape = [1, channels] + [1] * (input.dim() - 2)
    count = input.numel() // channels if channels else 0
    # pass 1: global sum and count -> mean
    local = input.sum(dims)
    counts = local.new_full((1,), float(count))
    total = all_reduce_with_grad(cat([local, counts]), process_group)
    n = float(total[-1].item())
    if n <= 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input "
                         f"size {list(input.shape)}")
    mean = total[:-1] / n
    centered = input - mean.reshape(shape)
    # pass 2: global sum of squared deviations -> the biased variance
    var = all_reduce_with_grad((centered * centered).sum(dims), process_group) / n
    out = centered * (var + eps).rsqrt().reshape(shape)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    with grad_mode.no_grad():
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean.detach().to(running_mean.dtype),
                                                 alpha=momentum)
        if running_var is not None:
            unbiased = var.detach() * (n / (n - 1))
            running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype),
                                                alpha=momentum)
    return out

