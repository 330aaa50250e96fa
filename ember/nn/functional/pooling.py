"""Pooling: max, average, adaptive, fractional and power-average (LP) pooling, and max unpooling.

Each pooling takes strided windows of the (padded) input without a copy and reduces them in one
NumPy call; its backward is the adjoint fold, a loop over kernel offsets. Adaptive average
pooling is a fixed matrix applied along each spatial axis (a separable linear map, which
interpolation shares).
"""
import itertools
import math

import numpy as np

from ... import _dtype as D
from ..._nn_kernels import for_sample_pieces, sample_split
from ...autograd.grad_mode import is_grad_enabled
from ...ops.registry import primitive
from ..._tensor import Tensor
from ...ops._utils import _is_index, type_name
from ...ops.creation import _check_sizes, copy_strides
from ._memory_format import as_input, laid_out, suggested_format
from ._utils import (_windows, _fold, _pad_last, _crop_last, _prod, _tuple, _type_name,
                     _zero_input_grad)
from .padding import _non_empty_batch_mode
from ...ops.random import rand


# ============================================================================ pooling helpers
def _pool_out(n, k, s, p, d, ceil_mode):
    """PyTorch's pooled size: a ceil-mode window must start inside the input or left padding."""
    span = n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = span // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _pool_padding(sizes, kernel, stride, padding, dilation, out):
    """(lo, hi) paddings that make every window fit: torch's padding, plus ceil-mode overhang."""
    return [(p, max(p, (o - 1) * s + dl * (k - 1) + 1 - p - n))
            for n, k, s, p, dl, o in zip(sizes, kernel, stride, padding, dilation, out)]


def _check_pool(input, kernel, stride, padding, dilation, ceil_mode, d, max_pool=False):
    """PyTorch's pooling argument checks, in its order and words; returns the output size."""
    _check_pool_args(kernel, stride, padding, dilation, d, max_pool)
    return _pool_output(input, kernel, stride, padding, dilation, ceil_mode, d)


def _check_pool_args(kernel, stride, padding, dilation, d, max_pool=False):
    """PyTorch's checks of the pooling geometry (stride, padding, dilation), in its order."""
    if any(s == 0 for s in stride):
        raise RuntimeError("stride should not be zero")
    for k, p, dl in zip(kernel, padding, dilation):
        if p > (dl * (k - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={dl}")
    if max_pool and d == 2 and any(p > k // 2 for k, p in zip(kernel, padding)):
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but "
                           f"got padW = {padding[1]}, padH = {padding[0]}, kW = {kernel[1]}, "
                           f"kH = {kernel[0]}")
    if d == 2 and any(s < 0 for s in stride):
        raise RuntimeError(f"stride should be greater than zero, but got dH: {stride[0]} "
                           f"dW: {stride[1]}")
    if d == 2 and any(dl <= 0 for dl in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: "
                           f"{dilation[0]} dilationW: {dilation[1]}")


def _pool_output(input, kernel, stride, padding, dilation, ceil_mode, d):
    """The pooled size, refused (in torch's words) where it is empty."""
    out = tuple(_pool_out(n, k, s, p, dl, ceil_mode) for n, k, s, p, dl in
                zip(input.shape[-d:], kernel, stride, padding, dilation))
    if any(o < 1 for o in out):
        lead = input.shape[-d - 1]
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, (lead,) + input.shape[-d:]))})"
                           f". Calculated output size: ({'x'.join(map(str, (lead,) + out))}). "
                           f"Output size is too small")
    return out


def _pool_args(kernel_size, stride, padding, dilation, d):
    kernel = _tuple(kernel_size, d, "kernel_size")
    stride = kernel if stride is None or (not isinstance(stride, int) and len(stride) == 0) \
        else _tuple(stride, d, "stride")
    return kernel, stride, _tuple(padding, d, "padding"), _tuple(dilation, d, "dilation")


def _lowest(xp, dtype):
    return np.iinfo(dtype).min if dtype.kind in "iu" else -xp.inf


# ============================================================================ max pooling
def _taps_argmax(xp, taps):
    """Max and argmax over the first axis of `taps` (kernel offset, *windows), as torch's
    pooling picks: the first maximum, but the last NaN when a window has NaNs.

    The argmax is built with one compare and two small-integer passes per offset, from the
    last offset to the first so that the first maximum wins: much faster than NumPy's argmax
    over a short axis."""
    values = taps.max(axis=0)
    small = xp.int8 if len(taps) <= 127 else xp.int64
    arg = xp.zeros(values.shape, dtype=small)
    hit = xp.empty(values.shape, dtype=bool)
    step = xp.empty(values.shape, dtype=small)
    for j in range(len(taps) - 1, -1, -1):
        xp.equal(taps[j], values, out=hit)
        xp.subtract(small(j), arg, out=step)            # arg = j where hit: arg += (j-arg)*hit
        xp.multiply(step, hit, out=step)
        arg += step
    if values.dtype.kind not in "iub":
        nan = xp.isnan(values)
        if nan.any():                                   # NaN != NaN: pick the last NaN instead
            last_nan = len(taps) - 1 - xp.isnan(taps[::-1]).argmax(axis=0)
            arg = xp.where(nan, last_nan, arg)
    return values, arg


def _max_pool_raw(xp, x, kernel, stride, padding, dilation, out):
    """Max over strided windows; indices point into each input plane, flattened (torch's)."""
    d = len(kernel)
    sizes = x.shape[-d:]
    pads = _pool_padding(sizes, kernel, stride, padding, dilation, out)
    xpad = _pad_last(xp, x, pads, _lowest(xp, x.dtype))
    win = _windows(xp, xpad, kernel, stride, dilation, out)         # (*lead, *out, *kernel)
    # the one copy: kernel offsets first, so that each offset's taps are contiguous
    taps = xp.ascontiguousarray(xp.moveaxis(win, tuple(range(-d, 0)), tuple(range(d))))
    values, arg = _taps_argmax(xp, taps.reshape((_prod(kernel),) + win.shape[:-d]))
    if not any(lo or hi for lo, hi in pads):
        # every window inside the input: index = its first tap's + the chosen offset's
        first = 0
        for i in range(d):
            first = first * sizes[i] + (xp.arange(out[i]) * stride[i]).reshape(
                (-1,) + (1,) * (d - 1 - i))
        tap_offsets = xp.asarray([sum(k[i] * dilation[i] * _prod(sizes[i + 1:])
                                      for i in range(d))
                                  for k in itertools.product(*[range(n) for n in kernel])],
                                 dtype=xp.int64)
        index = tap_offsets[arg]
        index += first                              # (in place: one int64 array less)
        return values, index
    taps = xp.unravel_index(arg, kernel)
    index = fallback = 0
    outside = False
    for i in range(d):
        start = (xp.arange(out[i]) * stride[i] - padding[i]).reshape(
            (-1,) + (1,) * (d - 1 - i))
        pos = start + taps[i] * dilation[i]
        outside = outside | (pos < 0) | (pos >= sizes[i])
        index = index * sizes[i] + pos
        # a window of padding only: torch reports its first tap at or after 0 on each axis
        steps_in = xp.maximum(-start + dilation[i] - 1, 0) // dilation[i]
        first = start + steps_in * dilation[i]
        fallback = fallback * sizes[i] + first
    index = xp.where(outside, fallback, index)
    return values, index.astype(xp.int64)


def _max_pool_samples(xp, x, kernel, stride, padding, dilation, out):
    """_max_pool_raw of a batch, its samples shared out over ember's threads (each sample's
    values and indices do not depend on the others)."""
    d = len(kernel)
    per_piece = sample_split(x.shape[0], x.size) if xp is np and x.ndim > d + 1 else None
    if per_piece is None:
        return _max_pool_raw(xp, x, kernel, stride, padding, dilation, out)
    values = xp.empty(x.shape[:-d] + tuple(out), x.dtype)
    index = xp.empty(values.shape, xp.int64)

    def piece(s0, s1):
        values[s0:s1], index[s0:s1] = _max_pool_raw(xp, x[s0:s1], kernel, stride, padding,
                                                    dilation, out)
    for_sample_pieces(piece, x.shape[0], x.size, per_piece)
    return values, index


def _unpool_raw(xp, grad, index, input_shape, d, disjoint=False):
    """The adjoint of picking by `index`: scatter-add grad into each input plane.

    `disjoint`: the windows do not overlap and lie inside the input, so no two indices of a
    plane are equal and a plain scatter does. Otherwise the sums are a bincount; like torch,
    an index past its plane (from a window of padding only) lands in the next plane, and
    one past the whole input takes nothing."""
    plane = _prod(input_shape[-d:])
    lead = _prod(input_shape[:-d])
    if grad.size == 0:                                  # an empty batch
        return xp.zeros(input_shape, dtype=grad.dtype)
    flat = (index.reshape(lead, -1) + (xp.arange(lead) * plane)[:, None]).ravel()
    if disjoint:
        result = xp.zeros(lead * plane, dtype=grad.dtype)
        per_piece = sample_split(input_shape[0], result.size) \
            if xp is np and len(input_shape) > d + 1 else None
        if per_piece is None:
            result[flat] = grad.ravel()
        else:
            # samples on ember's threads: each scatters into its own part of the result
            rows = flat.reshape(input_shape[0], -1)
            g_rows = grad.reshape(input_shape[0], -1)

            def piece(s0, s1):
                result[rows[s0:s1].ravel()] = g_rows[s0:s1].ravel()
            for_sample_pieces(piece, input_shape[0], result.size, per_piece)
        return result.reshape(input_shape)
    inside = (flat >= 0) & (flat < lead * plane)
    weights = xp.where(inside, grad.ravel(), 0)
    sums = xp.bincount(xp.where(inside, flat, 0), weights=weights, minlength=lead * plane)
    return sums.astype(grad.dtype).reshape(input_shape)


def _disjoint_windows(input_shape, kernel, stride, dilation, padding, out):
    """Whether pooling windows never overlap and never leave the input."""
    d = len(kernel)
    return not any(padding) and all(
        s >= dl * (k - 1) + 1 and (o - 1) * s + dl * (k - 1) < n
        for n, k, s, dl, o in zip(input_shape[-d:], kernel, stride, dilation, out))


def _gather_planes(gg, index, d):
    """gg (..., *plane) read at each pooled output's index: the adjoint of `_unpool_raw`, in
    ember ops so that it is differentiable too."""
    lead = _prod(index.shape[:-d])
    flat = Tensor._make(index.reshape(lead, _prod(index.shape[-d:])), D.int64, gg._device)
    plane = _prod(gg.shape[-d:])
    return gg.reshape(lead, plane).gather(1, flat).reshape(index.shape)


def _make_pick_backward(name, node, check_grad=None, keeps_format=False):
    """The backward primitive of a max pooling: scatter-add grad at the picked indices.

    Like torch's node it also takes the pooled input `self`, for its shape (and, where the
    pooling `keeps_format`, its memory format) only: in double backward that edge carries
    zeros."""
    @primitive(name, node=node)
    def backward(xp, grad, self, *, index, d, disjoint=False):
        if check_grad is not None:
            check_grad(grad)
        gi = _unpool_raw(xp, grad, index, self.shape, d, disjoint)
        return as_input(xp, gi, self) if keeps_format else gi

    @backward.derivative
    def _(ctx, gg):
        # the adjoint of a scatter-add is the gather at the same indices
        zeros = gg.new_zeros(ctx.input_shape(1)) if ctx.needs_input_grad[1] else None
        return _gather_planes(gg, ctx.index, ctx.d), zeros

    return backward


def _make_max_pool_ops(node):
    """The max-pool primitive (with its backward) with PyTorch's node names."""
    # (torch's max poolings keep a channels-last input's format, in 2-d and 3-d)
    backward = _make_pick_backward(node + "_backward",
                                   node.replace("Backward0", "BackwardBackward0"),
                                   keeps_format=True)

    @primitive(node, node=node, n_outputs=2, differentiable_outputs=1, save=("self", "result1"))
    def forward(xp, self, *, kernel, stride, padding, dilation, out):
        values, index = _max_pool_samples(xp, self, kernel, stride, padding, dilation, out)
        return as_input(xp, values, self), as_input(xp, index, self)

    @forward.derivative
    def _(ctx, grad, _unused=None):
        shape = tuple(ctx.input_shape())
        return backward(grad, ctx.self, index=ctx.result1, d=len(ctx.kernel),
                        disjoint=_disjoint_windows(shape, ctx.kernel, ctx.stride, ctx.dilation,
                                                   ctx.padding, ctx.out))

    return forward


_max_pool2d = _make_max_pool_ops("MaxPool2DWithIndicesBackward0")
_max_pool3d = _make_max_pool_ops("MaxPool3DWithIndicesBackward0")


def _check_1d_rank(input, name):
    # torch's 1-d poolings (max with indices, average, adaptive) check the rank in these words
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional "
                           f"tensor for argument #1 'self' (while checking arguments for {name})")


def _refuse_dtype(kernel_name, dtype):
    raise NotImplementedError(f"\"{kernel_name}\" not implemented for '{_type_name(dtype)}'")


def _pool_empty_message(input, d, name3d):
    """torch's words for a pooling input with an empty non-batch dim."""
    if d == 2:
        return (f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
                f"but got:{list(input.shape)}")
    # torch names non-batch dimension 0 whichever one is empty
    return (f"{name3d}(): Expected input's non-batch dimensions to have positive length, but "
            f"input has a shape of {list(input.shape)} and non-batch dimension 0 has length "
            f"zero!")


def _max_pool_nd(d, op, input, kernel_size, stride, padding, dilation, ceil_mode,
                 return_indices):
    """max_pool2d/3d: PyTorch's argument checks, then the d-dimensional pooling primitive."""
    if input.dim() not in (d + 1, d + 2):
        raise RuntimeError(f"non-empty {d + 1}D or {d + 2}D (batch mode) tensor expected for input")
    if not _non_empty_batch_mode(input, d):
        raise RuntimeError(_pool_empty_message(input, d,
                                               "max_pool3d_with_indices_out_cpu_template"))
    kernel, stride, padding, dilation = _pool_args(kernel_size, stride, padding, dilation, d)
    out = _check_pool(input, kernel, stride, padding, dilation, ceil_mode, d, max_pool=True)
    if input.dtype is D.bool_ or input.dtype.is_complex:
        _refuse_dtype(f"max_pool{d}d", input.dtype)
    values, indices = op(input, kernel=kernel, stride=stride, padding=padding,
                         dilation=dilation, out=out)
    return (values, indices) if return_indices else values


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    return _max_pool_nd(2, _max_pool2d, input, kernel_size, stride, padding, dilation,
                        ceil_mode, return_indices)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    if return_indices:
        _check_1d_rank(input, "max_pool1d")
    elif not _non_empty_batch_mode(input, 1):
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{list(input.shape)}")
    kernel, stride, padding, dilation = _pool_args(kernel_size, stride, padding, dilation, 1)
    if not return_indices:
        # without indices PyTorch runs its own 1-d kernel first, with its own checks
        (k,), (s,), (p,), (dl,) = kernel, stride, padding, dilation
        if s <= 0:
            raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {s}")
        if p < 0:
            raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
        if dl <= 0:
            raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {dl}")
        if p > k // 2:
            raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, "
                               f"but got padding={p} and kernel_size={k}")
        size = _pool_out(input.shape[-1], k, s, p, dl, ceil_mode)
        if size < 1:
            raise RuntimeError(f"max_pool1d() Invalid computed output size: {size}")
        if not input.dtype.is_floating_point:
            _refuse_dtype("max_pool1d_impl", input.dtype)
    out = max_pool2d(input.unsqueeze(-2), (1,) + kernel, (1,) + stride, (0,) + padding,
                     (1,) + dilation, ceil_mode, return_indices)
    if return_indices:
        return out[0].squeeze(-2), out[1].squeeze(-2)
    return out.squeeze(-2)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    return _max_pool_nd(3, _max_pool3d, input, kernel_size, stride, padding, dilation,
                        ceil_mode, return_indices)


# ============================================================================ average pooling
def _avg_divisor(xp, sizes, kernel, stride, padding, out, count_include_pad, divisor_override,
                 dtype):
    """Each window's divisor: its size clipped to the padded input (or to the input)."""
    if divisor_override:
        return divisor_override
    div = 1
    d = len(kernel)
    for i, (n, k, s, p, o) in enumerate(zip(sizes, kernel, stride, padding, out)):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, n)
        div = div * (end - start).reshape((-1,) + (1,) * (d - 1 - i))
    return xp.asarray(div, dtype=dtype)


def _avg_pool_raw(xp, x, kernel, stride, padding, out, count_include_pad, divisor_override):
    d = len(kernel)
    pads = _pool_padding(x.shape[-d:], kernel, stride, padding, (1,) * d, out)
    xpad = _pad_last(xp, x, pads)
    floating = x.dtype.kind not in "iub"                # bfloat16's NumPy kind is "V"
    # integers sum exactly in int64; half and bfloat16 in float32, as torch accumulates them
    acc_dtype = (xp.float32 if x.dtype.itemsize == 2 else x.dtype) if floating else xp.int64
    acc = xp.zeros(x.shape[:-d] + tuple(out), dtype=acc_dtype)
    for k in itertools.product(*[range(n) for n in kernel]):
        acc += xpad[(Ellipsis,) + tuple(slice(ki, ki + (o - 1) * s + 1, s)
                                        for ki, o, s in zip(k, out, stride))]
    div = _avg_divisor(xp, x.shape[-d:], kernel, stride, padding, out, count_include_pad,
                       divisor_override, acc_dtype if floating else xp.float64)
    if not floating:
        return xp.trunc(acc / div).astype(x.dtype)    # integer division rounds toward zero
    return (acc / div).astype(x.dtype, copy=False)


def _avg_unpool_raw(xp, grad, input_shape, kernel, stride, padding, out, count_include_pad,
                    divisor_override):
    d = len(kernel)
    sizes = input_shape[-d:]
    pads = _pool_padding(sizes, kernel, stride, padding, (1,) * d, out)
    g = grad / _avg_divisor(xp, sizes, kernel, stride, padding, out, count_include_pad,
                            divisor_override, grad.dtype)
    buf = xp.zeros(tuple(input_shape[:-d]) + tuple(n + lo + hi for n, (lo, hi) in
                                                   zip(sizes, pads)), dtype=grad.dtype)
    _fold(buf, lambda k: g, kernel, stride, (1,) * d, out)
    return xp.ascontiguousarray(_crop_last(buf, pads, sizes))


def _make_avg_pool_ops(node, keeps_format):
    """The average-pool primitive and its backward; where the pooling `keeps_format` (torch's
    2-d one, not its 3-d one) a channels-last input gives a channels-last output and input
    gradient."""
    lay_out = as_input if keeps_format else lambda xp, y, x: y

    @primitive(node, node=node, save=("self",))
    def forward(xp, self, *, kernel, stride, padding, out, count_include_pad, divisor_override):
        return lay_out(xp, _avg_pool_raw(xp, self, kernel, stride, padding, out,
                                         count_include_pad, divisor_override), self)

    # (`self`, the forward's input, only for its shape and format: see _zero_input_grad)
    @primitive(node + "_backward", node=node.replace("Backward0", "BackwardBackward0"))
    def backward(xp, grad, self, *, kernel, stride, padding, out, count_include_pad,
                 divisor_override):
        return lay_out(xp, _avg_unpool_raw(xp, grad, self.shape, kernel, stride, padding, out,
                                           count_include_pad, divisor_override), self)

    @forward.derivative
    def _(ctx, grad):
        return backward(grad, ctx.self, **_avg_options(ctx))

    @backward.derivative
    def _(ctx, gg):
        return forward(gg, **_avg_options(ctx)), _zero_input_grad(ctx, gg, 1)

    return forward


def _avg_options(ctx):
    return dict(kernel=ctx.kernel, stride=ctx.stride, padding=ctx.padding, out=ctx.out,
                count_include_pad=ctx.count_include_pad, divisor_override=ctx.divisor_override)


_avg_pool2d = _make_avg_pool_ops("AvgPool2DBackward0", keeps_format=True)
_avg_pool3d = _make_avg_pool_ops("AvgPool3DBackward0", keeps_format=False)


def _check_divisor(divisor_override):
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    kernel, stride, padding, _ = _pool_args(kernel_size, stride, padding, 1, 2)
    _check_divisor(divisor_override)
    if input.dim() < 3:
        input.size(-3)                  # torch reads a dim that is not there: its IndexError
    _check_pool_args(kernel, stride, padding, (1, 1), 2)
    if not _non_empty_batch_mode(input, 2):
        raise RuntimeError(_pool_empty_message(input, 2, None))
    out = _pool_output(input, kernel, stride, padding, (1, 1), ceil_mode, 2)
    if not (input.dtype.is_floating_point or input.dtype is D.int64):
        _refuse_dtype("avg_pool2d", input.dtype)
    return _avg_pool2d(input, kernel=kernel, stride=stride, padding=padding, out=out,
                       count_include_pad=count_include_pad, divisor_override=divisor_override)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    _check_1d_rank(input, "avg_pool1d")
    kernel, stride, padding, _ = _pool_args(kernel_size, stride, padding, 1, 1)
    return avg_pool2d(input.unsqueeze(-2), (1,) + kernel, (1,) + stride, (0,) + padding,
                      ceil_mode, count_include_pad).squeeze(-2)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    if input.dim() not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    kernel, stride, padding, _ = _pool_args(kernel_size, stride, padding, 1, 3)
    _check_divisor(divisor_override)
    _check_pool_args(kernel, stride, padding, (1, 1, 1), 3)
    if not _non_empty_batch_mode(input, 3):
        raise RuntimeError(_pool_empty_message(input, 3, "avg_pool3d"))
    sizes = input.shape[-3:]
    if any(k > n for k, n in zip(kernel, sizes)):
        raise RuntimeError(f"input image (T: {sizes[0]} H: {sizes[1]} W: {sizes[2]}) smaller "
                           f"than kernel size (kT: {kernel[0]} kH: {kernel[1]} kW: {kernel[2]})")
    out = _pool_output(input, kernel, stride, padding, (1, 1, 1), ceil_mode, 3)
    if input.dtype not in (D.float32, D.float64, D.int64):
        _refuse_dtype("avg_pool3d_out_frame", input.dtype)
    return _avg_pool3d(input, kernel=kernel, stride=stride, padding=padding, out=out,
                       count_include_pad=count_include_pad, divisor_override=divisor_override)


# ============================================================================ separable linear maps
# Adaptive average pooling and linear/bilinear/nearest interpolation are each a fixed matrix
# applied along every spatial axis: out = A_h . x . A_w^T. One primitive pair does them all.
def _apply_axes(xp, x, mats):
    d = len(mats)
    for i, m in enumerate(mats):
        axis = x.ndim - d + i
        m = xp.asarray(m, dtype=x.dtype)
        x = xp.moveaxis(xp.tensordot(x, m, axes=([axis], [1])), -1, axis)
    return xp.ascontiguousarray(x)


def _make_axes_op(node):
    # torch's adaptive average pooling backward reads the forward's input (for its shape: see
    # _zero_input_grad); its interpolations' backward does not
    reads_input = node.startswith("AdaptiveAvgPool")
    # (an adaptive average's forward sums its windows as torch does, for torch's rounding)
    raw = _adaptive_avg_raw if reads_input else _apply_axes
    # torch's 2-d adaptive average keeps a channels-last input's format (output and input
    # gradient); its 3-d one does not
    lay_out = as_input if node == "AdaptiveAvgPool2DBackward0" else lambda xp, y, x: y

    @primitive(node, node=node, save=("self",) if reads_input else ())
    def forward(xp, self, *, mats):
        return lay_out(xp, raw(xp, self, mats), self)

    @primitive(node + "_backward", node=node.replace("Backward0", "BackwardBackward0"))
    def backward(xp, grad, self, *, mats):
        return lay_out(xp, _apply_axes(xp, grad, tuple(m.T for m in mats)), self)

    @forward.derivative
    def _(ctx, grad):
        return backward(grad, ctx.self if reads_input else None, mats=ctx.mats)

    @backward.derivative
    def _(ctx, gg):
        return forward(gg, mats=ctx.mats), _zero_input_grad(ctx, gg, 1)

    return forward


def _axes_op(node, x, mats):
    return _AXES_OPS[node](x, mats=tuple(mats))


def _adaptive_windows(n, out):
    """Each of the `out` windows over n inputs: input[floor(o*n/out) : ceil((o+1)*n/out)]."""
    o = np.arange(out)
    return (o * n) // out, -((-(o + 1) * n) // out)


def _adaptive_avg_matrix(n, out):
    """The averaging map (out, n): row o averages window o."""
    start, end = _adaptive_windows(n, out)
    cols = np.arange(n)
    inside = (cols >= start[:, None]) & (cols < end[:, None])
    return inside / (end - start)[:, None]


def _adaptive_picks(n, out):
    """Per window, its input indices padded to the widest window by repeating the last one
    (out, width), and which of them are its own."""
    start, end = _adaptive_windows(n, out)
    idx = start[:, None] + np.arange(int((end - start).max()))
    return np.minimum(idx, end[:, None] - 1), idx < end[:, None]


def _window_layout(a, d):
    """(..., o_1, k_1, ..., o_d, k_d) -> (..., o_1, ..., o_d, K): each window flattened in
    row-major order."""
    lead = a.ndim - 2 * d
    order = tuple(range(lead)) + tuple(lead + 2 * i for i in range(d)) + \
        tuple(lead + 2 * i + 1 for i in range(d))
    a = a.transpose(order)
    return a.reshape(a.shape[:lead + d] + (_prod(a.shape[lead + d:]),))


def _axis_grids(xp, arrays):
    """Per-axis (o_i, k_i) arrays reshaped to broadcast as (o_1, k_1, ..., o_d, k_d)."""
    d = len(arrays)
    grids = []
    for i, p in enumerate(arrays):
        shape = [1] * (2 * d)
        shape[2 * i], shape[2 * i + 1] = p.shape
        grids.append(xp.asarray(p.reshape(shape)))
    return grids


def _adaptive_avg_raw(xp, x, mats):
    """torch's adaptive average (over the windows of `mats`), rounded as its CPU kernels round:
    each window summed in order, then divided by each axis's window width in turn. The 1-d/2-d
    kernel works in float32 for half and bfloat16 (rounding once at the end); the 3-d one in
    the input's dtype, rounding every step."""
    d = len(mats)
    out = tuple(m.shape[0] for m in mats)
    if x.size == 0 or 0 in out:
        return xp.zeros(x.shape[:-d] + out, dtype=x.dtype)
    picks = [_adaptive_picks(n, o) for n, o in zip(x.shape[-d:], out)]
    windows = _window_layout(x[(Ellipsis,) + tuple(_axis_grids(xp, [p for p, _ in picks]))], d)
    own = _window_layout(np.logical_and.reduce(
        np.broadcast_arrays(*_axis_grids(np, [v for _, v in picks]))), d)
    reduced = x.dtype in (np.float16, D.bfloat16.np)
    acc = np.dtype(np.float32) if reduced and d < 3 else x.dtype
    # a cumulative sum adds in order, rounding each step to `acc` (+ 0: torch's sum starts
    # from 0, so a window of -0s sums to +0)
    total = xp.cumsum(xp.where(xp.asarray(own), windows, 0).astype(acc), axis=-1,
                      dtype=acc)[..., -1] + acc.type(0)
    for i, (n, o) in enumerate(zip(x.shape[-d:], out)):
        start, end = _adaptive_windows(n, o)
        total = total / xp.asarray((end - start).reshape((-1,) + (1,) * (d - 1 - i)), dtype=acc)
    return xp.ascontiguousarray(total.astype(x.dtype))


# made at import, as every op is (ember.ops.registry.all_ops() lists them)
_AXES_OPS = {node: _make_axes_op(node) for node in ("AdaptiveAvgPool2DBackward0",
                                                    "AdaptiveAvgPool3DBackward0")}


# ============================================================================ adaptive pooling
def _index_list_arg(value, fname):
    """torch's argument parser reading `output_size` (an int list): an int, or a tuple or list
    of ints (a bool is no int, unless after the first), in its words. An int or a tuple."""
    where = f"{fname}(): argument 'output_size'"
    if _is_index(value):
        return value.__index__()
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"{where} (position 2) must be tuple of ints, not {type_name(value)}")
    for i, e in enumerate(value):
        if i == 0 and not _is_index(e):
            raise TypeError(f"{where} (position 2) must be tuple of ints, but found element of "
                            f"type {type_name(e)} at pos 0")
        if i and not (_is_index(e) or isinstance(e, bool)):      # (a later bool passes)
            raise TypeError(f"{where} failed to unpack the object at pos {i + 1} with error "
                            f"\"type must be tuple of ints,but got {type_name(e)}\"")
    return tuple(e.__index__() for e in value)


def _one_size(size, fname):
    """A 1-d adaptive pooling's parsed output size, which must be one int."""
    if isinstance(size, int):
        return size
    if len(size) != 1:
        raise RuntimeError(f"{fname}() argument 'output_size' should contain one int (got "
                           f"{len(size)})")
    return size[0]


def _output_size_arg(output_size, input, fname):
    """F.adaptive_*_pool{2,3}d's reading of `output_size`: a None takes the input's size there
    (a list as long as the input's rank is refused), then the argument parser's."""
    if not isinstance(output_size, int):     # (a bool passes here; the parser refuses it)
        n = len(output_size)
        if n >= input.dim():
            raise ValueError(f"Input dimension should be at least {n + 1}")
        output_size = [input.shape[input.dim() - n + i] if s is None else s
                       for i, s in enumerate(output_size)]
    return _index_list_arg(output_size, fname)


def _check_non_empty(input, first, name):
    """torch's check that the dims from `first` on are not empty."""
    for axis in range(first, input.dim()):
        if input.shape[axis] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {axis} being empty")


def _adaptive_avg_pool(input, output_size, d):
    """adaptive_avg_pool{2,3}d with torch's checks in its order: the output size, the mean it
    takes for an all-ones output, the rank, empty dims (the spatial ones in 2-d, all but the
    first in 3-d) and the dtype (refused in 2-d only where there is something to compute)."""
    name = f"adaptive_avg_pool{d}d"
    out = _output_size_arg(output_size, input, name)
    out = (out,) * d if isinstance(out, int) else out
    if len(out) != d:
        raise RuntimeError(f"{name}: output_size must be {d}")
    if min(out) < 0:
        shown = f"{out[0]}, {out[1]}" + (f",{out[2]}" if d == 3 else "")
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 "
                           f"but received {{{shown}}}")
    if out == (1,) * d:
        mean = input.mean(tuple(range(-d, 0)), keepdim=True)   # torch's graph: MeanBackward1
        fmt = suggested_format(input._data)
        if fmt is None:
            return mean
        # a channels-last input's mean is restrided in place as channels-last (torch's graph
        # then ends in AsStridedBackward1)
        return mean.as_strided_(mean.shape, copy_strides(mean._data, fmt))
    if input.dim() not in (d + 1, d + 2):
        raise RuntimeError(f"{name}(): Expected {d + 1}D or {d + 2}D tensor, but got "
                           f"{list(input.shape)}")
    _check_non_empty(input, input.dim() - d if d == 2 else 1, name)
    computes = d == 3 or (input.numel() and _prod(out))
    if computes and input.dtype not in (D.float16, D.bfloat16, D.float32, D.float64):
        _refuse_dtype(name if d == 2 else "adaptive_avg_pool3d_cpu", input.dtype)
    mats = [_adaptive_avg_matrix(n, o) for n, o in zip(input.shape[-d:], out)]
    return _axes_op(f"AdaptiveAvgPool{d}DBackward0", input, mats)


def adaptive_avg_pool2d(input, output_size):
    return _adaptive_avg_pool(input, output_size, 2)


def adaptive_avg_pool1d(input, output_size):
    size = _index_list_arg(output_size, "adaptive_avg_pool1d")
    _check_1d_rank(input, "adaptive_avg_pool1d")
    size = _one_size(size, "adaptive_avg_pool1d")
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, size)).squeeze(-2)


def adaptive_avg_pool3d(input, output_size):
    return _adaptive_avg_pool(input, output_size, 3)


def _adaptive_max_raw(xp, x, out):
    """Max over the adaptive windows: gather each window padded to the widest one by repeating
    its last index (a repeat never changes the max, and argmax keeps the first)."""
    d = len(out)
    sizes = x.shape[-d:]
    picks = [_adaptive_picks(n, o)[0] for n, o in zip(sizes, out)]   # per axis (out, widest)
    flat = _window_layout(x[(Ellipsis,) + tuple(_axis_grids(xp, picks))], d)
    values, arg = _taps_argmax(xp, xp.moveaxis(flat, -1, 0))
    widths = tuple(p.shape[1] for p in picks)
    offsets = xp.unravel_index(arg, widths)
    flat_index = 0
    for i in range(d):
        rows = xp.asarray(picks[i])                       # (o_i, width_i)
        o_grid = xp.arange(out[i]).reshape((-1,) + (1,) * (d - 1 - i))
        flat_index = flat_index * sizes[i] + rows[o_grid, offsets[i]]
    return values, flat_index.astype(xp.int64)


def _make_adaptive_max_op(d):
    """The d-dimensional adaptive max-pool primitive (with its backward), torch's node names."""
    name, node = f"adaptive_max_pool{d}d", f"AdaptiveMaxPool{d}DBackward0"

    def check_grad(grad):
        for axis in range(1, grad.ndim):
            if grad.shape[axis] == 0:
                raise RuntimeError(f"{name}_backward(): Expected grad_output to have non-zero "
                                   f"size for non-batch dimensions, but grad_output has sizes "
                                   f"{list(grad.shape)} with dimension {axis} being empty")

    # torch's 2-d adaptive max keeps a channels-last input's format; its 3-d one does not
    keeps_format = d == 2
    backward = _make_pick_backward(name + "_backward",
                                   node.replace("Backward0", "BackwardBackward0"), check_grad,
                                   keeps_format)

    @primitive(name, node=node, n_outputs=2, differentiable_outputs=1, save=("self", "result1"))
    def forward(xp, self, *, out):
        if self.size == 0 or 0 in out:             # nothing to pick from: empty results
            shape = self.shape[:-d] + tuple(out)
            return xp.zeros(shape, dtype=self.dtype), xp.zeros(shape, dtype=xp.int64)
        values, index = _adaptive_max_raw(xp, self, out)
        fmt = suggested_format(self) if keeps_format else None
        return laid_out(xp, values, fmt), laid_out(xp, index, fmt)

    @forward.derivative
    def _(ctx, grad, _unused=None):
        return backward(grad, ctx.self, index=ctx.result1, d=d)

    return forward


_adaptive_max_pool2d = _make_adaptive_max_op(2)
_adaptive_max_pool3d = _make_adaptive_max_op(3)
# the name torch's dtype check gives each kernel
_ADAPTIVE_MAX_KERNEL = {2: "adaptive_max_pool2d", 3: "adaptive_max_pool3d_cpu"}


def _adaptive_max_size(input, output_size, d):
    """PyTorch's checks of a d-dimensional adaptive max pooling, in its order and words;
    returns the output size."""
    name = f"adaptive_max_pool{d}d"
    out = _output_size_arg(output_size, input, name)
    if input.dim() not in (d + 1, d + 2):
        raise RuntimeError(f"{name}(): Expected {d + 1}D or {d + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    _check_non_empty(input, 1, name)
    out = (out,) * d if isinstance(out, int) else out
    if len(out) != d:
        raise RuntimeError(f"{name}(): internal error: output_size.size() must be {d}")
    _check_sizes(tuple(input.shape[:-d]) + out)
    if not input.dtype.is_floating_point:
        _refuse_dtype(_ADAPTIVE_MAX_KERNEL[d], input.dtype)
    return out


def adaptive_max_pool2d(input, output_size, return_indices=False):
    values, indices = _adaptive_max_pool2d(input, out=_adaptive_max_size(input, output_size, 2))
    return (values, indices) if return_indices else values


def adaptive_max_pool1d(input, output_size, return_indices=False):
    size = _index_list_arg(output_size, "adaptive_max_pool1d")
    _check_1d_rank(input, "adaptive_max_pool1d")
    size = _one_size(size, "adaptive_max_pool1d")
    _check_non_empty(input, 1, "adaptive_max_pool1d")
    values, indices = adaptive_max_pool2d(input.unsqueeze(-2), (1, size), True)
    values, indices = values.squeeze(-2), indices.squeeze(-2)
    return (values, indices) if return_indices else values


# ============================================================================ *_with_indices
def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode,
                        return_indices=True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode,
                        return_indices=True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode,
                        return_indices=True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool1d(input, output_size, return_indices=True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool2d(input, output_size, return_indices=True)


# ============================================================================ adaptive max 3-d
def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max_pool3d(input, out=_adaptive_max_size(input, output_size, 3))


def adaptive_max_pool3d(input, output_size, return_indices=False):
    values, indices = adaptive_max_pool3d_with_indices(input, output_size)
    return (values, indices) if return_indices else values


# ============================================================================ max unpooling
def _max_unpool_raw(xp, x, index, out):
    """Each value written at its index into a zero plane of size `out` (the last write wins
    where indices repeat, as in torch's loop, which also reports its last invalid index)."""
    d = len(out)
    lead = x.shape[:-d]
    rows, plane = _prod(lead), _prod(out)
    flat = index.reshape(rows, _prod(index.shape[-d:]))
    bad = (flat < 0) | (flat >= plane)
    if bad.any():
        raise RuntimeError(f"Found an invalid max index: {int(flat[bad][-1])} (output volumes "
                           f"are of size {'x'.join(map(str, out))})")
    result = xp.zeros((rows, plane), dtype=x.dtype)
    result[xp.arange(rows)[:, None], flat] = x.reshape(flat.shape)
    return result.reshape(lead + tuple(out))


def _make_max_unpool_op(d):
    @primitive(f"max_unpool{d}d", node=f"MaxUnpool{d}DBackward0")
    def forward(xp, self, *, index, out):
        return _max_unpool_raw(xp, self, index, out)

    @forward.derivative
    def _(ctx, grad):
        # the adjoint of writing at the indices is reading there (a gather: differentiable)
        return _gather_planes(grad, ctx.index, d)

    return forward


_MAX_UNPOOL = {2: _make_max_unpool_op(2), 3: _make_max_unpool_op(3)}


def _unpool_geometry(input, kernel_size, stride, padding, output_size, d):
    """(stride, output size): torch's output size is the inverse of pooling's, or a given size
    within a stride of it."""
    kernel = _tuple(kernel_size, d, "kernel_size")
    stride = kernel if stride is None else _tuple(stride, d, "stride")
    padding = _tuple(padding, d, "padding")
    default = [(input.shape[-d + i] - 1) * stride[i] + kernel[i] - 2 * padding[i]
               for i in range(d)]
    for i, n in enumerate(default):
        if n < 0:
            raise ValueError(f"max_unpooling: output_size must contain non-negative spatial "
                             f"dimensions, but got output_size[{i}]={n}")
    if output_size is None:
        return stride, tuple(default)
    if len(output_size) == d + 2:
        output_size = output_size[2:]
    if len(output_size) != d:
        raise ValueError(f"output_size should be a sequence containing {d} or {d + 2} elements, "
                         f"but it has a length of '{len(output_size)}'")
    for i in range(d):
        low, high = default[i] - stride[i], default[i] + stride[i]
        if not low < output_size[i] < high:
            raise ValueError(f'invalid output_size "{output_size}" (dim {i} must be between '
                             f'{low} and {high})')
    return stride, tuple(int(n) for n in output_size)


def _check_unpool(input, indices, d):
    if input.dim() not in (d + 1, d + 2):
        raise RuntimeError(f"Input to max_unpooling{d}d should be a {d + 1}d or {d + 2}d Tensor, "
                           f"but got a tensor with {input.dim()} dimensions.")
    if indices.dtype is not D.int64:
        detail = f" but got: {_type_name(indices.dtype)}" if d == 2 else ""
        raise RuntimeError(f"elements in indices should be type int64{detail}")
    if indices.shape != input.shape:
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"max_unpool{d}d\" not implemented for "
                                  f"'{_type_name(input.dtype)}'")


def _max_unpool_nd(input, indices, kernel_size, stride, padding, output_size, d):
    stride, out = _unpool_geometry(input, kernel_size, stride, padding, output_size, d)
    return _max_unpool_checked(input, indices, stride, out, d)


def _max_unpool_checked(input, indices, stride, out, d):
    _check_unpool(input, indices, d)
    if d == 3 and any(s <= 0 for s in stride):
        raise RuntimeError(f"strides should be greater than zero, but got stride: "
                           f"{list(stride)}")
    return _MAX_UNPOOL[d](input, index=indices._data, out=out)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    # as torch does: a 2-d unpooling over a trailing axis of size 1
    stride, out = _unpool_geometry(input, kernel_size, stride, padding, output_size, 1)
    return _max_unpool_checked(input.unsqueeze(-1), indices.unsqueeze(-1), stride + (1,),
                               out + (1,), 2).squeeze(-1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool_nd(input, indices, kernel_size, stride, padding, output_size, 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool_nd(input, indices, kernel_size, stride, padding, output_size, 3)


# ============================================================================ power-average pooling
def _lp_pool(input, norm_type, window, pooled, max_pooled):
    """(sum over each window of x**p) ** (1/p), as torch composes it: an average pool of x**p
    times the window size, with negative averages (odd p) clamped to zero; p = +-inf is the
    max (min) of |x| over each window."""
    if norm_type == math.inf:
        return max_pooled(input.abs())
    if norm_type == -math.inf:
        return -max_pooled(-input.abs())
    out = pooled(input.pow(norm_type))
    return (out.sign() * out.abs().relu()).mul(window).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size,
                    lambda x: avg_pool1d(x, kernel_size, stride, 0, ceil_mode),
                    lambda x: max_pool1d(x, kernel_size, stride, 0, 1, ceil_mode))


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    kw, kh = (kernel_size,) * 2 if isinstance(kernel_size, int) else kernel_size
    return _lp_pool(input, norm_type, kw * kh,
                    lambda x: avg_pool2d(x, kernel_size, stride, 0, ceil_mode),
                    lambda x: max_pool2d(x, kernel_size, stride, 0, 1, ceil_mode))


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    kd, kw, kh = (kernel_size,) * 3 if isinstance(kernel_size, int) else kernel_size
    return _lp_pool(input, norm_type, kd * kw * kh,
                    lambda x: avg_pool3d(x, kernel_size, stride, 0, ceil_mode),
                    lambda x: max_pool3d(x, kernel_size, stride, 0, 1, ceil_mode))


# ========================================================================== fractional max pooling


# Fractional max pooling (Graham, 2014): max over windows of a fixed size whose starts advance by
# a fractional stride, with a random offset per (sample, channel).
#
# Along an axis of n inputs pooled to `out` windows of size k, with alpha = (n - k) / (out - 1)
# and the offset u in [0, 1) drawn for that axis, window i < out - 1 starts at
# int((i + u) * alpha) - int(u * alpha), and the last one at n - k (computed in the input's
# floating type, as torch does). The max, the argmax (an index into each input plane) and the
# scatter-add backward reuse the max-pooling machinery above.
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
    values, arg = _taps_argmax(xp, taps)
    index = xp.take_along_axis(taps_index, arg[None].astype(xp.int64), axis=0)[0]
    return values, index


def _make_fractional_op(d):
    node = f"FractionalMaxPool{d}DBackward0"
    backward = _make_pick_backward(f"fractional_max_pool{d}d_backward",
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
    _check_sizes(tuple(input.shape[:-d]) + tuple(out))
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
        _refuse_dtype(f"fractional_max_pool{d}d_out_frame", input.dtype)
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
