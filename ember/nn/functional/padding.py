"""Padding: F.pad in its constant, reflect, replicate and circular modes."""
from ...ops.creation import _check_sizes, zeros
from ...ops.padding import _constant_pad_nd, _pad_pairs, _pad_last
from ...ops.registry import primitive
from ._utils import _crop_last, _zero_input_grad
from ...ops.views import slice_dim


# ============================================================================ padding
def _unpad_reflect(xp, g, pairs, sizes):
    """The adjoint of reflection padding: fold the mirrored borders back, axis by axis."""
    d = len(pairs)
    for i, ((lo, hi), n) in enumerate(zip(pairs, sizes)):
        axis = g.ndim - d + i
        g = xp.moveaxis(g, axis, 0)
        out = g[lo:lo + n].copy()
        if lo:
            out[1:lo + 1] += g[lo - 1::-1]
        if hi:
            out[n - 1 - hi:n - 1] += g[lo + n:lo + n + hi][::-1]
        g = xp.moveaxis(out, 0, axis)
    return g


def _unpad_replicate(xp, g, pairs, sizes):
    """The adjoint of replication padding: each border sums into its edge element."""
    d = len(pairs)
    for i, ((lo, hi), n) in enumerate(zip(pairs, sizes)):
        axis = g.ndim - d + i
        g = xp.moveaxis(g, axis, 0)
        out = g[lo:lo + n].copy()
        if lo:
            out[0] += g[:lo].sum(axis=0)
        if hi:
            out[n - 1] += g[lo + n:].sum(axis=0)
        g = xp.moveaxis(out, 0, axis)
    return g


def _split_pairs(pairs):
    """(lo, hi) pairs as the padding by their positive parts and the crop by their negative ones:
    torch pads by the first, then crops the result by the second."""
    return (tuple((max(lo, 0), max(hi, 0)) for lo, hi in pairs),
            tuple((max(-lo, 0), max(-hi, 0)) for lo, hi in pairs))


def _make_pad_op(mode, d):
    """The primitive pair (pad, its adjoint) for reflect/replicate padding of d trailing axes.
    A negative pad crops the padded result, within the same op (one node, as torch has)."""
    np_mode = {"reflect": "reflect", "replicate": "edge"}[mode]
    unpad = {"reflect": _unpad_reflect, "replicate": _unpad_replicate}[mode]
    node = f"{'Reflection' if mode == 'reflect' else 'Replication'}Pad{d}DBackward0"

    @primitive(f"{mode}_pad{d}d", node=node, save=("self",))
    def forward(xp, self, *, pairs):
        grow, crop = _split_pairs(pairs)
        out = xp.pad(self, [(0, 0)] * (self.ndim - d) + list(grow), mode=np_mode)
        sizes = out.shape[-d:]
        return xp.ascontiguousarray(_crop_last(
            out, crop, [max(n - a - b, 0) for n, (a, b) in zip(sizes, crop)]))

    # (`self`, the forward's input, only for its shape: see _zero_input_grad)
    @primitive(f"{mode}_pad{d}d_backward", node=node.replace("Backward0", "BackwardBackward0"))
    def backward(xp, grad, self, *, pairs):
        grow, crop = _split_pairs(pairs)
        # the cropped parts had no effect: zeros there, then fold the padding back
        grad = _pad_last(xp, grad, crop)
        return xp.ascontiguousarray(unpad(xp, grad, grow, self.shape[-d:]))

    @forward.derivative
    def _(ctx, grad):
        return backward(grad, ctx.self, pairs=ctx.pairs)

    @backward.derivative
    def _(ctx, gg):
        return forward(gg, pairs=ctx.pairs), _zero_input_grad(ctx, gg, 1)

    return forward


_PAD_OPS = {(mode, d): _make_pad_op(mode, d) for mode in ("reflect", "replicate")
            for d in (1, 2, 3)}


def _non_empty_batch_mode(input, d):
    """Whether `input` is (d+1)-D, or (d+2)-D with a batch dim, and only that dim may be empty."""
    return input.dim() in (d + 1, d + 2) and all(input.shape[input.dim() - d - 1:])


def _check_batch_mode(input, d):
    """PyTorch's input check (and words) for reflect/replicate padding and unfold."""
    if not _non_empty_batch_mode(input, d):
        raise RuntimeError(f"Expected {d + 1}D or {d + 2}D (batch mode) tensor with possibly 0 "
                           f"batch size and other non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")


def pad(input, pad, mode="constant", value=None):
    pad = tuple(pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError(f"Padding length should be less than or equal to two times the "
                           f"input dimension but got padding length {len(pad)} and input of "
                           f"dimension {input.dim()}")
    if mode == "constant":
        return _constant_pad_nd(input, pad=pad, value=0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    d = len(pad) // 2
    if d not in (1, 2, 3) or input.dim() not in (d + 1, d + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.dim()}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    pairs = _pad_pairs(pad)
    if mode == "circular":
        return _circular_pad(input, pairs)
    _check_batch_mode(input, d)
    if mode == "reflect":
        # the last axis first, as torch checks; it names that axis's pair argument #4, the
        # pair before it #6, then #8
        for back, ((lo, hi), n) in enumerate(zip(pairs[::-1], input.shape[::-1])):
            if lo >= n or hi >= n:
                raise RuntimeError(f"Argument #{4 + 2 * back}: Padding size should be less than "
                                   f"the corresponding input dimension, but got: padding ({lo}, "
                                   f"{hi}) at dimension {input.dim() - 1 - back} of input "
                                   f"{list(input.shape)}")
    out = tuple(n + lo + hi for n, (lo, hi) in zip(input.shape[-d:], pairs))
    if all(o < 1 for o in out):
        # torch's words per rank (and mode, for the 2-d spacing)
        ins = [f"{a}: {n}" for a, n in zip("DHW"[3 - d:], input.shape[-d:])]
        shown = ", ".join(ins)
        if d == 2 and mode == "replicate":
            shown += " "
        elif d == 3:
            shown = f"{ins[0]} {ins[1]}, {ins[2]}"
        raise RuntimeError(f"input ({shown}) is too small. Calculated output "
                           + " ".join(f"{a}: {o}" for a, o in zip("DHW"[3 - d:], out)))
    if d == 2 and mode == "reflect" and min(out) < 0:
        raise RuntimeError("numel: integer multiplication overflow")
    _check_sizes(tuple(input.shape[:-d]) + out)
    return _PAD_OPS[(mode, d)](input, pairs=tuple(pairs))


def _circular_pad(input, pairs):
    """Wrap-around padding, built as torch builds it (so the graph shows its CopySlices chain):
    copy the (cropped) input into the middle of a new tensor, then each padded border from the
    opposite side of that tensor, last dim first. The pieces are clamped slices (as torch's), so
    a dimension cropped to nothing gives an empty result rather than an error."""
    d = len(pairs)
    axes = range(input.dim() - d, input.dim())
    out_shape = list(input.shape)
    for axis, (lo, hi) in zip(axes, pairs):     # both checks per dim, the first dim first
        if lo > input.shape[axis] or hi > input.shape[axis]:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        out_shape[axis] += lo + hi
        if out_shape[axis] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    out = zeros(out_shape, dtype=input.dtype, device=input.device)
    middle, source = out, input
    for axis, (lo, hi) in zip(axes, pairs):
        middle = slice_dim(middle, axis, max(lo, 0), out_shape[axis] - max(hi, 0))
        source = slice_dim(source, axis, max(-lo, 0), input.shape[axis] - max(-hi, 0))
    middle.copy_(source)
    # the pairs run from the last dim back, as torch's loop does
    for axis, (lo, hi) in reversed(list(zip(axes, pairs))):
        n = out_shape[axis]
        if lo > 0:
            slice_dim(out, axis, 0, lo).copy_(
                slice_dim(out, axis, n - lo - max(hi, 0), n - max(hi, 0)))
        if hi > 0:
            slice_dim(out, axis, n - hi, n).copy_(slice_dim(out, axis, max(lo, 0), max(lo, 0) + hi))
    return out
