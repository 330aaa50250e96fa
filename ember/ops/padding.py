"""Constant padding of the trailing dimensions: torch.constant_pad_nd, the op F.pad's constant
mode and the FFT's zero padding both run."""
from .registry import primitive


def _pad_last(xp, x, pads, value=0):
    """Pad x's last len(pads) axes by (before, after) pairs with a constant."""
    if not any(lo or hi for lo, hi in pads):
        return x
    d = len(pads)
    shape = x.shape[:-d] + tuple(n + lo + hi for n, (lo, hi) in zip(x.shape[-d:], pads))
    out = xp.full(shape, value, dtype=x.dtype) if value else xp.zeros(shape, dtype=x.dtype)
    out[(Ellipsis,) + tuple(slice(lo, lo + n) for n, (lo, _) in zip(x.shape[-d:], pads))] = x
    return out


def _pad_pairs(pad):
    """PyTorch's pad list (last axis first) as (lo, hi) pairs for the trailing axes in order."""
    d = len(pad) // 2
    return [(pad[2 * (d - 1 - i)], pad[2 * (d - 1 - i) + 1]) for i in range(d)]


@primitive("constant_pad_nd", node="ConstantPadNdBackward0")
def _constant_pad_nd(xp, self, *, pad, value):
    # `pad` is in PyTorch's order: (last_lo, last_hi, second_last_lo, ...); negative crops
    d = len(pad) // 2
    pairs = _pad_pairs(pad)
    # torch narrows by the negative pads first
    sizes = self.shape[self.ndim - d:]
    if any(n + min(lo, 0) + min(hi, 0) < 0 for (lo, hi), n in zip(pairs, sizes)):
        raise RuntimeError("narrow(): length must be non-negative.")
    crop = tuple(slice(max(-lo, 0), n - max(-hi, 0))
                 for (lo, hi), n in zip(pairs, self.shape[self.ndim - d:]))
    x = self[(Ellipsis,) + crop]
    out = _pad_last(xp, x, [(max(lo, 0), max(hi, 0)) for lo, hi in pairs], value)
    return out if out is not self else self.copy()


@_constant_pad_nd.derivative
def _(ctx, grad):
    return _constant_pad_nd(grad, pad=tuple(-p for p in ctx.pad), value=0)
