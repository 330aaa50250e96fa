"""Vision: interpolate (and the deprecated upsample forms), grid_sample, affine_grid,
pixel_shuffle/unshuffle and channel_shuffle."""
import itertools
import math
import warnings

import numpy as np

from ... import _backend, _dtype as D
from ...ops.registry import primitive, xp_of
from ...ops.creation import zeros
from ...ops.joining import cat, stack
from ...ops.blas import matmul
from ._utils import (_const, _prod, _tuple, _type_name, _grid_sampler_backward_node,
                     _GRID_SAMPLER_3D_BACKWARD)
from .pooling import (_apply_axes, _refuse_dtype, adaptive_avg_pool1d, adaptive_avg_pool2d,
                      adaptive_avg_pool3d)
from ..._tensor import _is_contiguous


# ============================================================================ channel shuffles
def _pixel_shuffle_array(xp, x, r):
    """(*, C r^2, H, W) -> (*, C, H r, W r): each group of r^2 channels fills r x r blocks."""
    *batch, c, h, w = x.shape
    nb = len(batch)
    x = x.reshape(*batch, c // (r * r), r, r, h, w)
    perm = tuple(range(nb)) + (nb, nb + 3, nb + 1, nb + 4, nb + 2)
    return xp.ascontiguousarray(x.transpose(perm)).reshape(*batch, c // (r * r), h * r, w * r)


def _pixel_unshuffle_array(xp, x, r):
    """The inverse: (*, C, H r, W r) -> (*, C r^2, H, W)."""
    *batch, c, h, w = x.shape
    nb = len(batch)
    x = x.reshape(*batch, c, h // r, r, w // r, r)
    perm = tuple(range(nb)) + (nb, nb + 2, nb + 4, nb + 1, nb + 3)
    return xp.ascontiguousarray(x.transpose(perm)).reshape(*batch, c * r * r, h // r, w // r)


@primitive("pixel_shuffle", node="PixelShuffleBackward0")
def _pixel_shuffle(xp, self, *, factor):
    return _pixel_shuffle_array(xp, self, factor)


@primitive("pixel_unshuffle", node="PixelUnshuffleBackward0")
def _pixel_unshuffle(xp, self, *, factor):
    return _pixel_unshuffle_array(xp, self, factor)


@_pixel_shuffle.derivative
def _(ctx, g):
    return _pixel_unshuffle(g, factor=ctx.factor)


@_pixel_unshuffle.derivative
def _(ctx, g):
    return _pixel_shuffle(g, factor=ctx.factor)


def _check_pixel_shuffle(name, input, factor, factor_name):
    if input.dim() < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input "
                           f"with {input.dim()} dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {factor_name}, but got {factor}")


def pixel_shuffle(input, upscale_factor):
    _check_pixel_shuffle("pixel_shuffle", input, upscale_factor, "upscale_factor")
    c = input.shape[-3]
    if c % (upscale_factor * upscale_factor):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {upscale_factor * upscale_factor}")
    return _pixel_shuffle(input, factor=upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    _check_pixel_shuffle("pixel_unshuffle", input, downscale_factor, "downscale_factor")
    for what, dim in (("height", -2), ("width", -1)):
        if input.shape[dim] % downscale_factor:
            raise RuntimeError(f"pixel_unshuffle expects {what} to be divisible by "
                               f"downscale_factor, but input.size({dim})={input.shape[dim]} is "
                               f"not divisible by {downscale_factor}")
    return _pixel_unshuffle(input, factor=downscale_factor)


@primitive("channel_shuffle", node="ChannelShuffleBackward0")
def _channel_shuffle(xp, self, *, groups):
    """Channels (g, C/g) read as (C/g, g): channel i of group k moves to position i g + k."""
    n, c = self.shape[:2]
    x = self.reshape(n, groups, c // groups, *self.shape[2:]).swapaxes(1, 2)
    return xp.ascontiguousarray(x).reshape(self.shape)


@_channel_shuffle.derivative
def _(ctx, g):
    # shuffling C/g groups undoes shuffling g groups
    return _channel_shuffle(g, groups=ctx.input_shape()[1] // ctx.groups)


def channel_shuffle(input, groups):
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    c = input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    return _channel_shuffle(input, groups=groups)


# ============================================================================ interpolate
# Each axis is resampled by "taps": output i of an axis reads input idx[i, j] with weight
# w[i, j]. The forward sums the taps in the order and precision of torch's CPU kernels, so that
# float16/bfloat16 (and mostly float32) results agree bit for bit; the backward applies the
# adjoint matrices of the taps (see _taps_matrix).
def _fma(a, b, c):
    """a * b + c rounded once, as the fused multiply-adds torch's compiled kernels use. Exact for
    float32 through float64 (a product of two float32 is exact there); for float64 NumPy has no
    fused form, so that is a plain multiply-add (an ulp off at times)."""
    if a.dtype == np.float64:
        return a * b + c
    return (a.astype(np.float64) * b + c).astype(np.float32)


def _weighted_sum(terms, order):
    """Sum of x * w over `terms` [(x, w)], taken in `order`: first a product, then fused adds."""
    acc = None
    for j in order:
        x, w = terms[j]
        acc = x * w if acc is None else _fma(x, w, acc)
    return acc


def _source_index(n, out, scale, align_corners, opmath, clamp_low):
    """Where each output pixel samples the input, computed as torch does (in the compute
    precision, `ratio * (i + 0.5) - 0.5` fused)."""
    dst = np.arange(out, dtype=opmath)
    if align_corners:
        ratio = opmath((n - 1) / (out - 1)) if out > 1 else opmath(0)
        return ratio * dst
    ratio = opmath(1.0 / scale) if scale is not None and scale > 0 else opmath(n) / opmath(out)
    src = _fma(np.full(out, ratio), dst + opmath(0.5), opmath(-0.5)).astype(opmath)
    return np.maximum(src, opmath(0)) if clamp_low else src


def _nearest_taps(n, out, scale, shortcuts, exact=False):
    """One tap per output: input floor(i * ratio) (floor((i + 0.5) * ratio) for
    'nearest-exact', which samples at pixel centres), computed in float32 as torch does.

    torch's 2-d kernel copies an axis of unchanged size and halves indices for an exact
    doubling, whatever the scale factor; its 1-d and 3-d kernels do not."""
    ratio = np.float32(1.0 / scale) if scale is not None else np.float32(n) / np.float32(out)
    dst = np.arange(out)
    if shortcuts and out == n:
        src = dst
    elif shortcuts and out == 2 * n:
        src = dst >> 1
    else:
        pos = dst.astype(np.float32) + np.float32(0.5 if exact else 0)
        src = np.minimum(np.floor(pos * ratio).astype(np.int64), n - 1)
    return src[:, None], np.ones((out, 1))


def _linear_taps(n, out, scale, align_corners, opmath):
    """Two taps per output (the pixels around its source position), weights 1 - t and t."""
    if n == out:                       # an axis of unchanged size is copied, as in torch
        return np.stack([np.arange(n)] * 2, 1), np.array([[1, 0]] * n, dtype=opmath)
    src = _source_index(n, out, scale, align_corners, opmath, clamp_low=True)
    i0 = np.minimum(np.floor(src).astype(np.int64), n - 1)
    t = np.clip(src - i0.astype(opmath), 0, 1).astype(opmath)
    return np.stack([i0, i0 + (i0 < n - 1)], 1), np.stack([opmath(1) - t, t], 1)


def _cubic_taps(n, out, scale, align_corners, opmath, a=-0.75):
    """Four taps per output: cubic convolution (a = -0.75) around its source position; taps
    past the edges read the edge pixel."""
    src = _source_index(n, out, scale, align_corners, opmath, clamp_low=False)
    floor = np.floor(src)
    t = (src - floor).astype(opmath)
    a, one = opmath(a), opmath(1)

    def near(x):             # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):              # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    w = np.stack([far(t + one), near(t), near(one - t), far((one - t) + one)], 1)
    idx = np.clip(floor.astype(np.int64)[:, None] + np.arange(-1, 3), 0, n - 1)
    return idx, w.astype(opmath)


def _taps_matrix(n, idx, w):
    """The (out x n) matrix of an axis's taps (repeated edge taps add up)."""
    m = np.zeros((idx.shape[0], n))
    np.add.at(m, (np.arange(idx.shape[0])[:, None], idx), w.astype(np.float64))
    return m


def _channels_last(input, d):
    """Whether the input's strides are channels-last (channels_last / channels_last_3d)."""
    perm = (0,) + tuple(range(2, d + 2)) + (1,)
    return _is_contiguous([input.shape[i] for i in perm], [input.stride()[i] for i in perm])


# The summation orders of torch's channels-last linear kernel (2-d, and 3-d channels-last),
# measured: it sums the 2^d corner products, corners numbered by their bits (h, w), with fused
# adds, in an order that differs between its vectorised loop over the channels and the scalar
# loop over the remainder (vector widths of 256-bit AVX2). 3-d orders are assumed by analogy.
_CORNER_ORDERS = {  # (float32?, vectorised?) -> order for 4 corners
    (True, True): (2, 3, 1, 0), (True, False): (1, 0, 2, 3),
    (False, True): (3, 2, 1, 0), (False, False): (0, 1, 2, 3)}


def _corner_sum(x, taps, float32):
    """torch's channels-last linear kernel: each output is the sum over the 2^d corners of the
    input value times the product of the axes' weights (in the compute precision)."""
    d = len(taps)
    corners = list(itertools.product((0, 1), repeat=d))
    terms = []
    for bits in corners:
        index, weight = [], None
        for k, (b, (idx, w)) in enumerate(zip(bits, taps)):
            shape = [-1 if i == k else 1 for i in range(d)]
            index.append(idx[:, b].reshape(shape))
            wk = w[:, b].reshape(shape)
            weight = wk if weight is None else weight * wk
        terms.append((x[(Ellipsis,) + tuple(index)], weight.astype(x.dtype)))
    width = (8 if float32 else 16) if x.dtype == np.float32 else 4
    channels = x.shape[1]
    vec = channels - channels % width               # channels the vectorised loop handles
    out = []
    for part, vectorised in ((slice(0, vec), True), (slice(vec, channels), False)):
        if d == 2:
            order = _CORNER_ORDERS[(float32, vectorised)]
        else:
            order = range(len(corners)) if not vectorised else range(len(corners) - 1, -1, -1)
        out.append(_weighted_sum([(t[:, part], w) for t, w in terms], order))
    return np.concatenate(out, axis=1)


def _resample(xp, x, kind, taps, mats):
    """The forward values of one interpolation (see _interp_plan for `kind`)."""
    if kind == "matrices":                         # antialiased float: weight matrices
        return _apply_axes(xp, x, mats)
    if kind == "fixed":                            # uint8 (not nearest): fixed point
        return fixed_point_resample(x, mats)
    d = len(taps)
    if kind == "nearest":
        for k, (idx, _) in enumerate(taps):
            x = np.take(x, idx[:, 0], axis=x.ndim - d + k)
        return np.ascontiguousarray(x)
    opmath = np.float64 if x.dtype == np.float64 else np.float32
    y = x.astype(opmath)
    if kind in ("corners", "corners-half"):
        y = _corner_sum(y, taps, float32=kind == "corners")
    else:
        # torch's generic kernel nests the axes, outermost first: innermost sums are done
        # first; each axis's taps summed in `kind`'s order (linear: 1, 0; cubic: 0..3)
        for k in range(d - 1, -1, -1):
            idx, w = taps[k]
            axis = y.ndim - d + k
            shape = (-1,) + (1,) * (d - 1 - k)
            terms = [(np.take(y, idx[:, j], axis=axis), w[:, j].reshape(shape))
                     for j in range(idx.shape[1])]
            y = _weighted_sum(terms, (1, 0) if len(terms) == 2 else range(len(terms)))
    return xp.ascontiguousarray(y.astype(x.dtype))


def _make_interp_op(node):
    @primitive(node, node=node)
    def forward(xp, self, *, kind, taps, mats):
        return _resample(xp, self, kind, taps, mats)

    @primitive(node + "_backward", node=node.replace("Backward0", "BackwardBackward0"))
    def backward(xp, grad, *, kind, taps, mats):
        # half-precision gradients are summed in float32 and rounded once
        wide = grad.astype(np.float32) if grad.dtype.itemsize == 2 else grad
        return _apply_axes(xp, wide, tuple(m.T for m in mats)).astype(grad.dtype)

    @forward.derivative
    def _(ctx, grad):
        return backward(grad, kind=ctx.kind, taps=ctx.taps, mats=ctx.mats)

    @backward.derivative
    def _(ctx, gg):
        return forward(gg, kind="matrices", taps=ctx.taps, mats=ctx.mats)

    return forward


def _interp_op(node, x, kind, taps, mats):
    op = _INTERP_OPS[node]
    if x._device.type != "cpu":
        # the plan (source indices, weights) is made on the host: its small arrays go over
        to_device = _backend.backend(x._device.type).from_host
        taps = [tuple(to_device(a, x._device.index) for a in tap) for tap in taps]
        mats = [to_device(m, x._device.index) for m in mats]
    return op(x, kind=kind, taps=tuple(taps), mats=tuple(mats))


_INTERP_NODES = {("nearest", 1): "UpsampleNearest1DBackward0",
                 ("nearest", 2): "UpsampleNearest2DBackward0",
                 ("nearest", 3): "UpsampleNearest3DBackward0",
                 ("nearest-exact", 1): "UpsampleNearestExact1DBackward0",
                 ("nearest-exact", 2): "UpsampleNearestExact2DBackward0",
                 ("nearest-exact", 3): "UpsampleNearestExact3DBackward0",
                 ("linear", 1): "UpsampleLinear1DBackward0",
                 ("bilinear", 2): "UpsampleBilinear2DBackward0",
                 ("trilinear", 3): "UpsampleTrilinear3DBackward0",
                 ("bicubic", 2): "UpsampleBicubic2DBackward0",
                 ("area", 1): None, ("area", 2): None, ("area", 3): None}   # adaptive avg pool

_FLOATS = (D.float16, D.bfloat16, D.float32, D.float64)


def _area_kernel_name(input, d):
    """The name torch's adaptive average pooling refuses a dtype under."""
    if d == 3:
        return "adaptive_avg_pool3d_cpu"
    channels_last = d == 2 and _channels_last(input, 2) and not input.is_contiguous()
    return "adaptive_avg_pool2d_channels_last" if channels_last else "adaptive_avg_pool2d"


def _interp_kernel(mode, d, input, out):
    """(kernel name, whether torch takes its channels-last kernel) for a non-antialiased mode.

    torch runs its channels-last ("vectorised") kernel for a channels-last input with more
    than 3 channels, and in 2-d also for any input whose output height + width <= 128; the
    kernel's name is what a refused dtype's error names."""
    vectorised = d > 1 and input.shape[1] > 3 and _channels_last(input, d) or \
        d == 2 and sum(out) <= 128
    if mode == "bicubic":
        return "compute_indices_weights_cubic", False
    family = "nearest" if mode.startswith("nearest") else "linear"
    if vectorised and (family == "nearest" or d > 1):
        name = {"nearest": "nearest", "linear": "bilinear" if d == 2 else "trilinear"}[family]
        return f"upsample_{name}{d}d_channels_last", True
    return f"compute_indices_weights_{family}", False


def _interp_plan(mode, d, input, sizes, out, scales, align_corners):
    """(kind, taps, mats) of a non-antialiased interpolation; refuses dtypes as torch does.

    kind: 'nearest' (gathers), 'fixed' (uint8 fixed point), 'corners'/'corners-half' (torch's
    channels-last linear kernel), 'generic' (its separable kernel)."""
    dtype = input._dtype
    name, vectorised = _interp_kernel(mode, d, input, out)
    nearest = mode in ("nearest", "nearest-exact")
    if dtype not in _FLOATS and not (dtype is D.uint8 and (nearest or d == 2)):
        _refuse_dtype(name, dtype)
    if nearest:
        taps = [_nearest_taps(n, o, s, d == 2, mode == "nearest-exact")
                for n, o, s in zip(sizes, out, scales)]
        return "nearest", taps, [_taps_matrix(n, *t) for n, t in zip(sizes, taps)]
    if dtype is D.uint8:                  # bilinear, bicubic: weights in double, fixed point
        if mode == "bicubic":
            mats = [_taps_matrix(n, *_cubic_taps(n, o, s, align_corners, np.float64))
                    for n, o, s in zip(sizes, out, scales)]
        else:
            mats = [antialias_matrix(n, o, s, align_corners, "bilinear", np.float64, False)
                    for n, o, s in zip(sizes, out, scales)]
        return "fixed", [], mats
    opmath = np.float64 if dtype is D.float64 else np.float32
    make = _cubic_taps if mode == "bicubic" else _linear_taps
    taps = [make(n, o, s, align_corners, opmath) for n, o, s in zip(sizes, out, scales)]
    if vectorised:
        kind = "corners" if dtype in (D.float32, D.float64) else "corners-half"
    else:
        kind = "generic"
        if dtype in (D.float16, D.bfloat16):
            # the generic kernel keeps its weights in the input's dtype (a linear one's
            # first weight is 1 - the rounded second)
            low = input._data.dtype

            def rnd(a):
                return a.astype(low).astype(np.float32)

            taps = [(i, rnd(w) if w.shape[1] == 4 else
                     np.stack([rnd(1 - rnd(w[:, 1])), rnd(w[:, 1])], 1)) for i, w in taps]
    return kind, taps, [_taps_matrix(n, *t) for n, t in zip(sizes, taps)]


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    d = input.dim() - 2
    sizes = input.shape[2:]
    # PyTorch's checks, in its order: arguments first, then the mode against the rank
    if mode in ("nearest", "area", "nearest-exact") and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(size, (tuple, list)) and len(size) != d:
        raise ValueError(f"Input and output must have the same number of spatial dimensions, "
                         f"but got input with spatial dimensions of {list(input.shape[2:])} and "
                         f"output size of {size}. Please provide input tensor in (N, C, d1, d2, "
                         f"...,dK) format and output size in (o1, o2, ...,oK) format.")
    if isinstance(scale_factor, (tuple, list)) and len(scale_factor) != d:
        raise ValueError(f"Input and scale_factor must have the same number of spatial "
                         f"dimensions, but got input with spatial dimensions of "
                         f"{list(sizes)} and scale_factor of shape {scale_factor}. "
                         f"Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                         f"and scale_factor in (s1, s2, ...,sK) format.")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if antialias and not (mode in AA_NODES and d == 2):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    if mode == "lanczos" and d == 2:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    needed = {"linear": 1, "bilinear": 2, "trilinear": 3}.get(mode)
    if needed is not None and d != needed and d in (1, 2, 3):
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs "
                                  f"{needed + 2}D input")
    if (mode, d) not in _INTERP_NODES and not antialias:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                  f"(got {input.dim()}D) for the modes: nearest | linear | "
                                  f"bilinear | bicubic | trilinear | lanczos | area | "
                                  f"nearest-exact (got {mode})")
    if size is not None:
        out = _tuple(size, d, "size") if not isinstance(size, int) else (size,) * d
        scales = (None,) * d
    else:
        scales = tuple(scale_factor) if isinstance(scale_factor, (tuple, list)) \
            else (scale_factor,) * d
        out = tuple(int(math.floor(n * s)) for n, s in zip(sizes, scales))
        if recompute_scale_factor:
            scales = (None,) * d
    if any(n <= 0 for n in sizes) or any(o <= 0 for o in out):
        names = ("D", "H", "W")[3 - d:]
        raise RuntimeError(
            f"Input and output sizes should be greater than 0, but got input "
            f"({', '.join(f'{a}: {n}' for a, n in zip(names, sizes))}) "
            f"{'and ' if d == 1 else ''}output "
            f"({', '.join(f'{a}: {o}' for a, o in zip(names, out))})")
    if input.numel() == 0 and _prod(input.shape[1:]) == 0 and mode != "area":
        raise RuntimeError(f"Non-empty {input.dim()}D data tensor expected but got a tensor "
                           f"with sizes {list(input.shape)}")
    if mode == "area":
        # (an empty input escapes the 2-d kernel's dtype check, not the 3-d one's)
        if (input.numel() or d == 3) and input._dtype not in _FLOATS:
            _refuse_dtype(_area_kernel_name(input, d), input._dtype)
        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[d - 1](input, out)
    align_corners = bool(align_corners)
    if antialias:
        # an axis of unchanged size is copied; an input with none changing is copied whatever
        # its dtype
        if tuple(sizes) == out:
            taps = [(np.arange(n)[:, None], np.ones((n, 1))) for n in sizes]
            return _interp_op(AA_NODES[mode], input, "nearest", taps,
                              [np.eye(n) for n in sizes])
        if input._dtype not in (D.float32, D.float64, D.uint8):
            _refuse_dtype("compute_index_ranges_weights", input._dtype)
        if input._dtype is D.uint8:
            mats = [antialias_matrix(n, o, s, align_corners, mode, np.float64)
                    for n, o, s in zip(sizes, out, scales)]
            return _interp_op(AA_NODES[mode], input, "fixed", [], mats)
        opmath = np.float64 if input._dtype is D.float64 else np.float32
        mats = [np.eye(n) if n == o else antialias_matrix(n, o, s, align_corners, mode, opmath)
                for n, o, s in zip(sizes, out, scales)]
        return _interp_op(AA_NODES[mode], input, "matrices", [], mats)
    kind, taps, mats = _interp_plan(mode, d, input, sizes, out, scales, align_corners)
    return _interp_op(_INTERP_NODES[(mode, d)], input, kind, taps, mats)


# =========================================================================== upsample (deprecated)
def _deprecated_upsample(name):
    warnings.warn(f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` "
                  f"instead.", stacklevel=3)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    _deprecated_upsample("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    _deprecated_upsample("upsample_nearest")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    _deprecated_upsample("upsample_bilinear")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ======================================================================= grid_sample / affine_grid


# Spatial sampling: F.grid_sample and F.affine_grid.
#
# grid_sample reads `input` (N, C, *S) at the points of `grid` (N, *S_out, k), k = len(S), whose
# last dim holds normalized coordinates in [-1, 1] (x first: x runs along S's last axis). Every
# output point is a weighted sum of a few input points (its "taps": 1 for nearest, 2 per axis for
# bilinear, 4 per axis for bicubic). The forward gathers each tap's rows of a (N * prod S, C) view
# of the input and adds them with their weights, all points at once.
#
# The derivative is written in ember ops, so it is differentiable again: each tap weight is a
# polynomial of the fractional coordinate t, rebuilt as a tensor of the grid; the input's
# gradient scatters the output gradient back with the weights (index_add), and the grid's
# gradient is the output gradient times the weights' slope in t times the tapped values.
_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}
_CUBIC_A = -0.75        # the cubic convolution kernel's free parameter (Keys; PyTorch uses -0.75)


def _column(factor):
    """A per-point factor as a column to scale (points, C) rows; a number stays a number."""
    return factor if isinstance(factor, float) else factor.reshape(-1, 1)


# ---------------------------------------------------------------------------- coordinates
def _unnormalize(coord, size, align_corners):
    """[-1, 1] -> pixel coordinates; and d(pixel)/d(coord)."""
    if align_corners:
        return (coord + 1) * ((size - 1) / 2), (size - 1) / 2
    return ((coord + 1) * size - 1) / 2, size / 2


def _clip(xp, x, size):
    """x clipped to [0, size - 1], and its slope (0 at and beyond the ends, as torch's)."""
    slope = ((x > 0) & (x < size - 1)).astype(x.dtype)
    return xp.clip(x, 0, size - 1), slope


def _reflect(xp, x, twice_low, twice_high):
    """x reflected into [low, high] by the borders (repeatedly), and its slope (+1 or -1)."""
    if twice_low == twice_high:
        return xp.zeros_like(x), xp.zeros_like(x)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    x = x - low
    sign = xp.where(x < 0, -1.0, 1.0).astype(x.dtype)
    x = xp.abs(x)
    extra = xp.fmod(x, span)
    odd = (xp.floor(x / span) % 2) == 1
    return xp.where(odd, span - extra, extra) + low, xp.where(odd, -sign, sign)


def _pad_coordinate(xp, x, size, padding, align_corners):
    """Where border/reflection padding moves a pixel coordinate, and the slope of that move."""
    if padding == "border":
        return _clip(xp, x, size)
    if padding == "reflection":
        if align_corners:
            x, slope = _reflect(xp, x, 0, 2 * (size - 1))
        else:
            x, slope = _reflect(xp, x, -1, 2 * size - 1)
        x, clip_slope = _clip(xp, x, size)
        return x, slope * clip_slope
    return x, xp.ones_like(x)


# ---------------------------------------------------------------------------- tap weights
# Each takes the fractional coordinate t (an array in the forward, a tensor in the derivative)
# and gives the weight of each tap, or its slope in t.
def _linear_weights(t):
    return [1 - t, t]


def _linear_slopes(t):
    return [-1.0, 1.0]


def _cubic_near(s):     # the kernel at |s| <= 1
    a = _CUBIC_A
    return ((a + 2) * s - (a + 3)) * s * s + 1


def _cubic_far(s):      # the kernel at 1 < |s| < 2
    a = _CUBIC_A
    return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a


def _cubic_near_slope(s):
    a = _CUBIC_A
    return (3 * (a + 2) * s - 2 * (a + 3)) * s


def _cubic_far_slope(s):
    a = _CUBIC_A
    return (3 * a * s - 10 * a) * s + 8 * a


def _cubic_weights(t):          # taps at floor - 1, floor, floor + 1, floor + 2
    return [_cubic_far(t + 1), _cubic_near(t), _cubic_near(1 - t), _cubic_far(2 - t)]


def _cubic_slopes(t):
    return [_cubic_far_slope(t + 1), _cubic_near_slope(t), -_cubic_near_slope(1 - t),
            -_cubic_far_slope(2 - t)]


class _Axis:
    """One spatial axis of the sampling: each tap's position (int) and in-bounds mask, the
    fractional coordinate t, and d(t)/d(grid coordinate)."""

    def __init__(self, xp, coord, size, mode, padding, align_corners):
        x, scale = _unnormalize(coord, size, align_corners)
        if mode == "bicubic":
            # the coordinate itself is not padded: each tap's position is (below)
            base = xp.floor(x)
            self.t, self.slope = x - base, xp.full_like(x, scale)
            positions = [base + k for k in (-1, 0, 1, 2)]
            if padding != "zeros":
                positions = [_pad_coordinate(xp, p, size, padding, align_corners)[0]
                             for p in positions]
        else:
            x, pad_slope = _pad_coordinate(xp, x, size, padding, align_corners)
            self.slope = pad_slope * scale
            if mode == "nearest":
                positions, self.t = [xp.rint(x)], None      # rint: half to even, as torch
            else:
                base = xp.floor(x)
                positions, self.t = [base, base + 1], x - base
        self.inside = [(p >= 0) & (p <= size - 1) for p in positions]
        # out-of-bounds taps read row 0 with weight 0
        self.index = [xp.where(ok, p, 0).astype(np.int64) for p, ok in zip(positions, self.inside)]
        self.mode = mode

    def weights(self, t):
        if self.mode == "nearest":
            return [1.0]
        return (_cubic_weights if self.mode == "bicubic" else _linear_weights)(t)

    def slopes(self, t):
        return (_cubic_slopes if self.mode == "bicubic" else _linear_slopes)(t)


def _axes(xp, grid, sizes, mode, padding, align_corners):
    """The _Axis of each spatial dim of the input (grid's coordinate k-1-j for input axis j)."""
    k = len(sizes)
    return [_Axis(xp, grid[..., k - 1 - j], size, mode, padding, align_corners)
            for j, size in enumerate(sizes)]


def _taps(xp, axes, sizes, n):
    """Every combination of one tap per axis: (its row in the (N * prod S, C) view of the input,
    its mask, the tap number on each axis)."""
    strides = [int(np.prod(sizes[j + 1:])) for j in range(len(sizes))]
    ndim = axes[0].index[0].ndim
    batch = (xp.arange(n) * int(np.prod(sizes))).reshape((n,) + (1,) * (ndim - 1))
    for combo in itertools.product(*[range(len(a.index)) for a in axes]):
        row = batch
        mask = True
        for a, stride, i in zip(axes, strides, combo):
            row = row + a.index[i] * stride
            mask = mask & a.inside[i]
        yield row.reshape(-1), mask.reshape(-1), combo


def _rows(xp, x):
    """(N, C, *S) -> (N * prod S, C)."""
    return xp.moveaxis(x, 1, -1).reshape(-1, x.shape[1])


# ---------------------------------------------------------------------------- the op
def _grid_sampler_forward(xp, input, grid, *, mode, padding_mode, align_corners):
    sizes, n, c = input.shape[2:], input.shape[0], input.shape[1]
    axes = _axes(xp, grid, sizes, mode, padding_mode, align_corners)
    weights = [a.weights(a.t) for a in axes]
    rows = _rows(xp, input)
    out = xp.zeros((grid[..., 0].size, c), dtype=input.dtype)
    for row, mask, combo in _taps(xp, axes, sizes, n):
        w = mask.astype(input.dtype)[:, None]
        for j, i in enumerate(combo):
            w = w * _column(weights[j][i])
        out += w * rows[row]
    out = out.reshape(grid.shape[:-1] + (c,))
    return xp.moveaxis(out, -1, 1).astype(input.dtype, copy=False)


def _grid_sampler_derivative(ctx, g):
    input, grid = ctx.input, ctx.grid
    needs = ctx.needs_input_grad
    xp = xp_of(input._device)
    sizes, (n, c), k = input.shape[2:], input.shape[:2], grid.shape[-1]
    mode = ctx.mode
    axes = _axes(xp, grid._data, sizes, mode, ctx.padding_mode, ctx.align_corners)
    # t as a tensor of the grid: its value, and its slope d(t)/d(grid) on every point
    ts = []
    for j, a in enumerate(axes):
        if a.t is None:
            ts.append(None)
            continue
        coord = grid[..., k - 1 - j]
        slope = _const(a.slope.astype(a.t.dtype), g)
        ts.append((coord - _const(grid._data[..., k - 1 - j], g)) * slope + _const(a.t, g))
    weights = [a.weights(t) for a, t in zip(axes, ts)]
    g_rows = g.movedim(1, -1).reshape(-1, c)
    want_grid = needs[1] and mode != "nearest"
    in_rows = input.movedim(1, -1).reshape(-1, c) if want_grid else None
    index, sources = [], []
    pulls = [0.0] * len(axes)            # d(out)/d(t_j), summed over taps: (points, C)
    slopes = [a.slopes(t) for a, t in zip(axes, ts)] if want_grid else None
    for row, mask, combo in _taps(xp, axes, sizes, n):
        m = _const(mask.astype(g._dtype.np)[:, None], g)
        factors = [weights[j][i] for j, i in enumerate(combo)]
        if needs[0]:
            w = m
            for f in factors:
                w = w * _column(f)
            index.append(row)
            sources.append(g_rows * w)
        if want_grid:
            v = in_rows.index_select(0, _const(row, g)) * m
            for j in range(len(axes)):
                d = _column(slopes[j][combo[j]])
                for i, f in enumerate(factors):
                    if i != j:
                        d = d * _column(f)
                pulls[j] = pulls[j] + d * v
    grad_input = grad_grid = None
    if needs[0]:
        flat = zeros(n * int(np.prod(sizes)), c, dtype=g.dtype, device=g.device)
        flat = flat.index_add(0, _const(xp.concatenate(index), g), cat(sources))
        grad_input = flat.reshape((n,) + tuple(sizes) + (c,)).movedim(-1, 1)
        # on torch's node, which has an edge to the input (see _zero_input_grad)
        tag = _grid_sampler_backward_node if k == 2 else _GRID_SAMPLER_3D_BACKWARD
        grad_input = tag(grad_input, input)
    if needs[1]:
        if mode == "nearest":
            grad_grid = zeros(grid.shape, dtype=g.dtype, device=g.device)
        else:
            shape = tuple(grid.shape[:-1])
            parts = [((g_rows * pulls[j]).sum(1) * _const(axes[j].slope.reshape(-1), g))
                     .reshape(shape) for j in range(len(axes))]
            grad_grid = stack(parts[::-1], -1)      # grid's coordinate 0 is the last axis
    return grad_input, grad_grid


_grid_sampler_2d = primitive("grid_sampler_2d", node="GridSampler2DBackward0",
                             save=("input", "grid"))(_grid_sampler_forward)
_grid_sampler_2d.derivative(_grid_sampler_derivative)
_grid_sampler_3d = primitive("grid_sampler_3d", node="GridSampler3DBackward0",
                             save=("input", "grid"))(_grid_sampler_forward)
_grid_sampler_3d.derivative(_grid_sampler_derivative)


def _default_align_corners(align_corners):
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to "
                      "align_corners=False since 1.3.0. Please specify align_corners=True if "
                      "the old behavior is desired. See the documentation of grid_sample for "
                      "details.", stacklevel=3)
        return False
    return align_corners


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """torch.grid_sampler: the modes as numbers (bilinear 0, nearest 1, bicubic 2; zeros 0,
    border 1, reflection 2)."""
    mode = {v: k for k, v in _MODES.items()}[interpolation_mode]
    padding = {v: k for k, v in _PADDINGS.items()}[padding_mode]
    # torch's checks, in torch's order
    k = input.dim() - 2
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    if grid.shape[-1] != k:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {k} in last dimension, "
                           f"but got grid with sizes {list(grid.shape)}")
    if input.dim() != grid.dim() or input.dim() not in (4, 5):
        raise RuntimeError(f"grid_sampler(): expected {4 if input.dim() == 4 else 5}D input and "
                           f"grid with same number of dimensions, but got input with sizes "
                           f"{list(input.shape)} and grid with sizes {list(grid.shape)}")
    for i in range(2, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {i} being empty")
    if grid.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {_type_name(input.dtype)} but found "
                           f"{_type_name(grid.dtype)}")
    if mode == "bicubic" and k == 3:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    op = _grid_sampler_2d if k == 2 else _grid_sampler_3d
    return op(input, grid, mode=mode, padding_mode=padding, align_corners=bool(align_corners))


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    if mode not in _MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in _PADDINGS:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    align_corners = _default_align_corners(align_corners)
    return grid_sampler(input, grid, _MODES[mode], _PADDINGS[padding_mode], align_corners)


# ---------------------------------------------------------------------------- affine_grid
def _base_grid(xp, sizes, dtype, align_corners):
    """(prod sizes, k + 1): each output point's normalized (x, y[, z], 1)."""
    def line(n):
        if n <= 1:
            return xp.zeros(n, dtype)
        v = xp.linspace(-1, 1, n, dtype=dtype)
        return v if align_corners else v * dtype.type((n - 1) / n)
    coords = xp.meshgrid(*[line(s) for s in sizes], indexing="ij")   # input axis order
    ones = xp.ones(coords[0].shape, dtype)
    return xp.stack(list(coords[::-1]) + [ones], -1).reshape(-1, len(sizes) + 1)


@primitive("affine_grid_generator", node="AffineGridGeneratorBackward0")
def _affine_grid(xp, theta, *, sizes, align_corners):
    base = _base_grid(xp, sizes, theta.dtype, align_corners)
    out = xp.matmul(base, xp.swapaxes(theta, 1, 2))          # (N, points, k)
    return out.reshape((theta.shape[0],) + tuple(sizes) + (len(sizes),))


@_affine_grid.derivative
def _(ctx, g):
    n, k = g.shape[0], len(ctx.sizes)
    base = _base_grid(xp_of(g._device), ctx.sizes, g._dtype.np, ctx.align_corners)
    return matmul(g.reshape(n, -1, k).transpose(1, 2), _const(base, g))


def affine_grid_generator(theta, size, align_corners):
    """torch.affine_grid_generator: F.affine_grid without its argument checks."""
    size = tuple(size)
    n, k = size[0], len(size) - 2
    if theta.shape[0] != n:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{n}, {k + 1}] but got: [{theta.shape[0]}, {k + 1}].")
    return _affine_grid(theta, sizes=size[2:], align_corners=bool(align_corners))


def affine_grid(theta, size, align_corners=None):
    align_corners = _default_align_corners(align_corners)
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = tuple(size)
    if len(size) == 4:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got {theta.shape}.")
    elif len(size) == 5:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got {theta.shape}.")
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if align_corners and min(size[2:]) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return affine_grid_generator(theta, size, align_corners)


# ============================================================================ anti-aliasing


# Anti-aliased resampling weights (`interpolate(..., antialias=True)`, and mode 'lanczos').
#
# Each output pixel i is a normalised weighted sum of the input pixels near its centre
# c = ratio * (i + 0.5) (in input pixel units, ratio = input / output size). When downsampling
# (ratio > 1) the filter is stretched by `ratio`, so it averages over every input pixel the output
# pixel covers instead of sampling a few; when upsampling it is the plain filter. The taps run over
# the pixels j with int(c - support + 0.5) <= j < int(c + support + 0.5), and the weights of a
# row are divided by their sum. The result is one (out x in) matrix per axis, which
# `_axes_op` (functional/pooling.py) applies separably (and transposes for the backward).
# each filter's width in input pixels when not stretched (torch's interp_size)
_TAPS = {"bilinear": 2, "bicubic": 4, "lanczos": 6}


def _filter(mode, x):
    x = np.abs(x)
    if mode == "bilinear":                            # a triangle
        return np.where(x < 1, 1 - x, 0)
    if mode == "bicubic":                             # Keys' cubic with a = -0.5 (not -0.75)
        a = -0.5
        near = ((a + 2) * x - (a + 3)) * x * x + 1
        far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return np.where(x < 1, near, np.where(x < 2, far, 0))
    # Lanczos-3: sinc(x) sinc(x / 3) on |x| < 3
    px = np.pi * np.where(x == 0, 1, x)
    return np.where(x == 0, 1, np.where(x < 3, 3 * np.sin(px) * np.sin(px / 3) / (px * px), 0))


def antialias_matrix(n, out, scale, align_corners, mode, opmath, antialias=True):
    """The (out x n) resampling matrix of one axis, computed in `opmath` (the input's float
    type) as torch computes its weights. antialias=False is torch's uint8 bilinear without
    antialiasing: the filter is not stretched, and with align_corners the centres shift by
    half a pixel (pixel i samples input i * ratio)."""
    if align_corners:
        ratio = opmath((n - 1) / (out - 1)) if out > 1 else opmath(0)
    else:
        ratio = opmath(1.0 / scale) if scale is not None and scale > 0 \
            else opmath(n) / opmath(out)
    stretch = ratio if ratio >= 1 and antialias else opmath(1)
    support = opmath(_TAPS[mode] / 2) * stretch
    shift = opmath(0.5) if align_corners and not antialias else opmath(0)
    centre = ratio * (np.arange(out, dtype=opmath) + opmath(0.5) - shift)
    # (C++ truncation toward zero; a negative start is clamped to 0 anyway)
    lo = np.maximum((centre - support + opmath(0.5) + shift).astype(np.int64), 0)
    hi = np.minimum((centre + support + opmath(0.5) + shift).astype(np.int64), n)
    cols = np.arange(n)
    taps = (cols >= lo[:, None]) & (cols < hi[:, None])
    offsets = (cols.astype(opmath) - centre[:, None] + opmath(0.5) - shift) \
        * (opmath(1) / stretch)
    w = np.where(taps, _filter(mode, offsets).astype(opmath), opmath(0))
    total = w.sum(axis=1, keepdims=True)
    return np.where(total != 0, w / np.where(total != 0, total, 1), 0).astype(opmath)


def _to_fixed_point(w):
    """Weights as integers scaled by 2**bits: as many bits (at most 22) as keep the largest
    weight, doubled, under 2**15 (they are int16 in torch's kernel); rounded half away from 0."""
    largest = w.max()
    bits = next((b for b in range(22) if int(0.5 + largest * (1 << (b + 1))) >= 1 << 15), 22)
    scaled = w * (1 << bits)
    return np.trunc(scaled + np.where(scaled < 0, -0.5, 0.5)).astype(np.int64), bits


def fixed_point_resample(x, mats):
    """torch's uint8 resampling (Pillow's algorithm): one pass per axis whose size changes, the
    last axis first, each in integers with fixed-point weights, rounded and clamped to 0..255
    before the next pass."""
    d = len(mats)
    for k in range(d - 1, -1, -1):
        axis = x.ndim - d + k
        if mats[k].shape[0] == mats[k].shape[1]:       # an axis of unchanged size is skipped
            continue
        w, bits = _to_fixed_point(mats[k])
        y = np.moveaxis(np.tensordot(x.astype(np.int64), w, axes=([axis], [1])), -1, axis)
        x = np.clip((y + (1 << (bits - 1))) >> bits, 0, 255).astype(np.uint8)
    return np.ascontiguousarray(x)


# the autograd node of each mode (its backward's node adds "Backward" before the "0")
AA_NODES = {"bilinear": "UpsampleBilinear2DAaBackward0", "bicubic": "UpsampleBicubic2DAaBackward0",
         "lanczos": "UpsampleLanczos2DAaBackward0"}
# made at import, as every op is (ember.ops.registry.all_ops() lists them)
_INTERP_OPS = {node: _make_interp_op(node)
               for node in [*_INTERP_NODES.values(), *AA_NODES.values()] if node is not None}
