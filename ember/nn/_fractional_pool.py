"""Fractional max pooling (Graham, 2014): max over windows of a fixed size whose starts advance by
a fractional stride, with a random offset per (sample, channel).

Along an axis of n inputs pooled to `out` windows of size k, with alpha = (n - k) / (out - 1)
and the offset u in [0, 1) drawn for that axis, window i < out - 1 starts at
int((i + u) * alpha) - int(u * alpha), and the last one at n - k (computed in the input's
floating type, as torch does). The max, the argmax (an index into each input plane) and the
scatter-add backward reuse the max-pooling machinery of `_conv.py`.
"""
from .. import _dtype as D
from ..autograd.grad_mode import is_grad_enabled
from ..ops.registry import primitive
from . import _conv as C
from ._conv import _prod


def _starts(xp, u, n, out, k):
    """Window starts (..., out) along one axis, for the offsets u (...,)."""
    dtype = u.dtype.type
    i = xp.arange(out - 1).astype(dtype)
    alpha = dtype(n - k) / dtype(out - 1) if out > 1 else dtype(0)
    # C++ int casts truncate toward zero, as astype does
    inner = ((i + u[..., None]) * alpha).astype(xp.int64) - \
        (u * alpha).astype(xp.int64)[..., None]
    last = xp.full(u.shape + (min(out, 1),), n - k, dtype=xp.int64)
    return xp.concatenate([inner, last], axis=-1)


def _fractional_raw(xp, x, samples, kernel, out):
    """Values and flat plane indices of the fractional max pooling of x (N, C, *sizes)."""
    d = len(kernel)
    sizes = x.shape[-d:]
    lead = x.shape[:-d]
    # torch's sample order: width, height for 2-d; time, height, width for 3-d
    axis_sample = (1, 0) if d == 2 else (0, 1, 2)
    # an empty window (kernel size <= 0) keeps one tap, its start, for its index
    width = [max(k, 1) for k in kernel]
    # per axis, the input positions (lead, out_i, k_i) of every window's taps
    flat = 0
    for i in range(d):
        starts = _starts(xp, samples[..., axis_sample[i]], sizes[i], out[i], kernel[i])
        pos = starts[..., None] + xp.arange(width[i])
        # (lead, o_1, k_1, ..., o_d, k_d) by broadcasting, row-major over the plane
        shape = list(lead) + [1] * (2 * d)
        shape[len(lead) + 2 * i:len(lead) + 2 * i + 2] = pos.shape[-2:]
        flat = flat * sizes[i] + pos.reshape(shape)
    flat = xp.broadcast_to(flat, lead + tuple(v for o, k in zip(out, width) for v in (o, k)))
    # kernel offsets to the front, windows after: (K, lead, *out)
    order = tuple(len(lead) + 2 * i + 1 for i in range(d))
    taps_index = xp.moveaxis(flat, order, tuple(range(d))).reshape(
        (_prod(width),) + lead + tuple(out))
    if min(kernel) <= 0:
        # torch reports -inf at each empty window's start
        return xp.full(lead + tuple(out), -xp.inf, dtype=x.dtype), taps_index[0].copy()
    planes = x.reshape(lead + (_prod(sizes),))
    taps = xp.take_along_axis(planes[None], taps_index.reshape(
        taps_index.shape[:1 + len(lead)] + (_prod(out),)), axis=-1).reshape(taps_index.shape)
    values, arg = C._taps_argmax(xp, taps)
    index = xp.take_along_axis(taps_index, arg[None].astype(xp.int64), axis=0)[0]
    return values, index


def _make_fractional_op(d):
    node = f"FractionalMaxPool{d}DBackward0"
    backward = C._make_pick_backward(f"fractional_max_pool{d}d_backward",
                                     node.replace("Backward0", "BackwardBackward0"))

    @primitive(f"fractional_max_pool{d}d", node=node, n_outputs=2, differentiable_outputs=1,
               save=("self", "result1"))
    def forward(xp, self, *, samples, kernel, out):
        return _fractional_raw(xp, self, samples, kernel, out)

    @forward.derivative
    def _(ctx, grad, _unused=None):
        return backward(grad, ctx.self, index=ctx.result1, d=d)

    return forward


_OPS = {2: _make_fractional_op(2), 3: _make_fractional_op(3)}


def _sizes(value, d, name, fname):
    """kernel_size / output_size as torch's argument parser and checks take them."""
    where = f"{fname}(): argument '{name}'"
    position = f"{where} (position {2 if name == 'kernel_size' else 3})"
    if isinstance(value, (tuple, list)):
        for pos, v in enumerate(value):
            if isinstance(v, int):
                continue
            if pos == 0:
                raise TypeError(f"{position} must be tuple of ints, but found element of type "
                                f"{type(v).__name__} at pos 0")
            raise TypeError(f"{where} failed to unpack the object at pos {pos + 1} with error "
                            f"\"type must be tuple of ints,but got {type(v).__name__}\"")
        value = tuple(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        value = (value,) * d
    else:
        raise TypeError(f"{position} must be tuple of ints, not {type(value).__name__}")
    if len(value) != d:
        raise RuntimeError(f"{fname}: {name} must either be a single Int or tuple of "
                           f"{'three ' if d == 3 else ''}Ints")
    return value


def _fractional_max_pool(d, input, kernel_size, output_size, output_ratio, return_indices,
                         _random_samples):
    fname = f"fractional_max_pool{d}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{fname} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if d == 2 and len(output_ratio) > 2:
            raise ValueError(f"{fname} requires output_ratio to either be a single Int or "
                             f"tuple of Ints.")
        ratio = tuple(output_ratio) if isinstance(output_ratio, (tuple, list)) \
            else (output_ratio,) * d
        output_size = [int(input.size(i - d) * ratio[i]) for i in range(d)]
    if _random_samples is None:
        from ..ops.random import rand
        batch = 1 if input.dim() == d + 1 else input.size(0)
        _random_samples = rand(batch, input.size(-d - 1), d, dtype=input.dtype,
                               device=input.device)
    kernel = _sizes(kernel_size, d, "kernel_size", fname)
    out = _sizes(output_size, d, "output_size", fname)
    values, indices = _checked(d, input, kernel, out, _random_samples)
    return (values, indices) if return_indices else values


def _checked(d, input, kernel, out, samples):
    """torch's checks, in its order, then the pooling."""
    fname = f"fractional_max_pool{d}d" + ("" if d == 2 else "_out")
    if samples.requires_grad and is_grad_enabled():
        raise RuntimeError(f"The function 'fractional_max_pool{d}d' is not differentiable with "
                           f"respect to argument 'random_samples'. This input cannot have "
                           f"requires_grad True.")
    if input.dim() not in (d + 1, d + 2):
        raise RuntimeError(f"{fname}(): Expected {d + 1}D or {d + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    for i in range(1, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(f"{fname}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but got{list(input.shape)} with dimension {i} "
                               f"being empty.")
    names = ("height", "width") if d == 2 else ("time", "height", "width")
    for name, o, k, n in zip(names, out, kernel, input.shape[-d:]):
        # the 2-d pooling allows the windows to reach the last input, the 3-d one does not
        if o + k - 1 > n or (d == 3 and o + k - 1 == n):
            raise RuntimeError(f"{fname}(): pool {name} {k} too large relative to input "
                               f"{name} {n}")
    C._check_sizes(tuple(input.shape[:-d]) + tuple(out))
    if samples.dtype is not input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.dim() != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.dim()}")
    batch = 1 if input.dim() == d + 1 else input.shape[0]
    if samples.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != input.shape[-d - 1]:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != d:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {d}; got "
                           f"{samples.shape[2]}.")
    if input.dtype not in (D.float32, D.float64, D.float16, D.bfloat16):
        C._refuse_dtype(f"fractional_max_pool{d}d_out_frame", input.dtype)
    # one offset per (sample, channel) and axis: (N, C, d), or (C, d) for an unbatched input
    rows = samples._data[:batch] if input.dim() == d + 2 else samples._data[0]
    return _OPS[d](input, samples=rows, kernel=kernel, out=out)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    return _fractional_max_pool(2, input, kernel_size, output_size, output_ratio, True,
                                _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    return _fractional_max_pool(3, input, kernel_size, output_size, output_ratio, True,
                                _random_samples)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    return _fractional_max_pool(2, input, kernel_size, output_size, output_ratio,
                                return_indices, _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    return _fractional_max_pool(3, input, kernel_size, output_size, output_ratio,
                                return_indices, _random_samples)
