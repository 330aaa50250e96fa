"""Spatial sampling: F.grid_sample and F.affine_grid.

grid_sample reads `input` (N, C, *S) at the points of `grid` (N, *S_out, k), k = len(S), whose
last dim holds normalized coordinates in [-1, 1] (x first: x runs along S's last axis). Every
output point is a weighted sum of a few input points (its "taps": 1 for nearest, 2 per axis for
bilinear, 4 per axis for bicubic). The forward gathers each tap's rows of a (N * prod S, C) view
of the input and adds them with their weights, all points at once.

The derivative is written in ember ops, so it is differentiable again: each tap weight is a
polynomial of the fractional coordinate t, rebuilt as a tensor of the grid; the input's
gradient scatters the output gradient back with the weights (index_add), and the grid's
gradient is the output gradient times the weights' slope in t times the tapped values.
"""
import itertools
import warnings

import numpy as np

from ..ops.registry import primitive, xp_of
from ..ops.creation import zeros
from ..ops.joining import cat, stack
from ..ops.blas import matmul
from .functional import _const      # a constant tensor (index, mask, slope) on a device
from ._conv import _grid_sampler_backward_node, _GRID_SAMPLER_3D_BACKWARD

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


def _type_name(dtype):
    from .._printing import scalar_type_name
    return scalar_type_name(dtype)


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
