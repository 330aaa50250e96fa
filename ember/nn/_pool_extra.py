"""More pooling over `ember.nn._conv`: the `*_with_indices` spellings, 3-d adaptive max pooling,
max unpooling and power-average (LP) pooling.

The max-pooling machinery (windows, argmax, indices into each input plane, the scatter-add
adjoint, the adaptive max-pool primitives and their checks) lives in `_conv.py`; this file
reuses it.
"""
import math

from .. import _dtype as D
from ..ops.registry import primitive
from . import _conv as C
from ._conv import _prod, _tuple


# ============================================================================ *_with_indices
def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return C.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode,
                        return_indices=True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return C.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode,
                        return_indices=True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return C.max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode,
                        return_indices=True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return C.adaptive_max_pool1d(input, output_size, return_indices=True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return C.adaptive_max_pool2d(input, output_size, return_indices=True)


# ============================================================================ adaptive max 3-d
def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return C._adaptive_max_pool3d(input, out=C._adaptive_max_size(input, output_size, 3))


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
        return C._gather_planes(grad, ctx.index, d)

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
        detail = f" but got: {C._type_name(indices.dtype)}" if d == 2 else ""
        raise RuntimeError(f"elements in indices should be type int64{detail}")
    if indices.shape != input.shape:
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"max_unpool{d}d\" not implemented for "
                                  f"'{C._type_name(input.dtype)}'")


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
                    lambda x: C.avg_pool1d(x, kernel_size, stride, 0, ceil_mode),
                    lambda x: C.max_pool1d(x, kernel_size, stride, 0, 1, ceil_mode))


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    kw, kh = (kernel_size,) * 2 if isinstance(kernel_size, int) else kernel_size
    return _lp_pool(input, norm_type, kw * kh,
                    lambda x: C.avg_pool2d(x, kernel_size, stride, 0, ceil_mode),
                    lambda x: C.max_pool2d(x, kernel_size, stride, 0, 1, ceil_mode))


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    kd, kw, kh = (kernel_size,) * 3 if isinstance(kernel_size, int) else kernel_size
    return _lp_pool(input, norm_type, kd * kw * kh,
                    lambda x: C.avg_pool3d(x, kernel_size, stride, 0, ceil_mode),
                    lambda x: C.max_pool3d(x, kernel_size, stride, 0, 1, ceil_mode))
