"""The autograd function behind nn.CrossMapLRN2d (its own forward and backward formulas)."""
from ...autograd.function import Function
from ...ops.creation import arange
from .. import functional as C


def _window_sums(t, lo, hi):
    """sum of t[:, lo[c]:hi[c]] along dim 1 for every channel c, by differences of a cumsum."""
    cs = C.pad(t.cumsum(1), (0, 0, 0, 0, 1, 0))
    return cs[:, hi] - cs[:, lo]


class CrossMapLRN2d(Function):
    """Lua Torch's SpatialCrossMapLRN, kept as torch has it: the forward's running window sum
    never drops channel 0, and the backward is its own formula (a centred window of
    grad * output / scale), not the exact derivative of the forward."""

    @staticmethod
    def forward(ctx, input, size, alpha, beta, k):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             f"instead.")
        channels = input.shape[1]
        square = input * input
        half = int((size - 1) / 2 + 1)
        c = arange(channels)
        # channel c sums the squares of channels max(1, c-half+1) .. min(c+half-1, C-1), and
        # of channel 0, which the running sum never subtracts
        lo = (c - half + 1).clamp(min=1)
        hi = (c + half - 1).clamp(max=channels - 1) + 1
        total = square[:, :1] + _window_sums(square, lo, hi)
        scale = total * (alpha / size) + k
        output = scale.pow(-beta) * input
        ctx.size, ctx.alpha, ctx.beta, ctx.scale = size, alpha, beta, scale
        ctx.save_for_backward(input, output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, output = ctx.saved_tensors
        size, channels = ctx.size, input.shape[1]
        front = int(size - (size - 1) / 2)
        if front > size - 1:        # torch narrows a buffer too short for it (size 1)
            raise RuntimeError(f"start ({front}) + length ({channels}) exceeds dimension size "
                               f"({channels + size - 1}).")
        ratio = grad_output * output / ctx.scale
        padded = C.pad(ratio, (0, 0, 0, 0, front, size - 1 - front))
        c = arange(channels)
        accum = _window_sums(padded, c, c + size)
        grad = ctx.scale.pow(-ctx.beta) * grad_output \
            - (2 * ctx.alpha * ctx.beta / size) * input * accum
        return grad, None, None, None, None
