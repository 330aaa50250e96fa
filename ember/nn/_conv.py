"""Convolution, pooling, resampling, padding and attention: the functional ops behind the layers.

Every op here follows one pattern for speed: take strided windows of the (padded) input without a
copy, then do the work with a few large NumPy calls -- one batched GEMM for a convolution, one
reduction for a pooling. Backward passes are the adjoint "fold" (col2im): a loop over the kernel
offsets (never over pixels or the batch), each step one vectorised add of a strided slab.

Each op is a primitive with PyTorch's node name, and its derivative is written with primitives of
this file (a convolution's input gradient is a transposed convolution, its weight gradient a GEMM
of windows with the gradient, ...), so double backward works and shows torch's node names.
"""
import itertools
import math
import warnings

import numpy as np

from .. import _dtype as D
from .._cpu import onednn_takes
from .._tensor import Tensor
from ..ops.creation import _check_sizes, copy_strides, zeros
from ..ops._utils import _is_index, type_name
from ..ops.blas import _product
from ..ops.registry import primitive, xp_of
from ..ops.views import element_strides
from ._layout import as_input, conv_format, in_format, laid_out, restrided, suggested_format


# ============================================================================ double-backward nodes
# torch passes some linear ops' backward the forward's input, for its shape only: under
# create_graph the first derivative then has a graph to that input (AvgPool2DBackwardBackward0,
# ...), and the next derivative by it is zeros (or nothing, for grid_sample). A few ops'
# backwards have no derivative at all: the node is there, and differentiating through it
# raises torch's error.
def _zero_input_grad(ctx, gg, i):
    """The derivative of such a backward by input i (the forward's input): zeros."""
    if not ctx.needs_input_grad[i]:
        return None
    return zeros(ctx.input_shape(i), dtype=ctx.input_dtype(i), device=gg.device)


@primitive("_grid_sampler_backward", node="GridSampler2DBackwardBackward0")
def _grid_sampler_backward_node(xp, value, input):
    """`value` (grid_sample's input gradient, computed in ember ops), recorded on the node torch
    shows: its derivative by the input is nothing (torch's "not used in the graph")."""
    return value


@_grid_sampler_backward_node.derivative
def _(ctx, gg):
    return gg, None


_GRID_SAMPLER_3D_BACKWARD = primitive("_grid_sampler_backward",
                                      node="GridSampler3DBackwardBackward0")(
    _grid_sampler_backward_node.forward)
_GRID_SAMPLER_3D_BACKWARD.derivative(_grid_sampler_backward_node.derivative_fn)


@primitive("_not_implemented_backward", node="torch::autograd::NotImplemented")
def _not_implemented_backward(xp, value, input, *, backward):
    """`value` (a first derivative) recorded on torch's node for a `backward` that has
    no derivative."""
    return value


@_not_implemented_backward.derivative
def _(ctx, gg):
    raise RuntimeError(f"derivative for aten::{ctx.backward} is not implemented")


# ============================================================================ array helpers
def _as_strided(xp, a, shape, strides):
    if xp is np:
        return np.lib.stride_tricks.as_strided(a, shape=shape, strides=strides, writeable=False)
    return xp.lib.stride_tricks.as_strided(a, shape=shape, strides=strides)


def _windows(xp, x, kernel, stride, dilation, out):
    """A no-copy view (*lead, *out, *kernel) of the windows over x's last len(kernel) axes."""
    d = len(kernel)
    lead, lead_strides = x.shape[:-d], x.strides[:-d]
    sp = x.strides[-d:]
    shape = lead + tuple(out) + tuple(kernel)
    strides = lead_strides + tuple(s * st for s, st in zip(sp, stride)) + \
        tuple(s * dl for s, dl in zip(sp, dilation))
    return _as_strided(xp, x, shape, strides)


def _fold(buf, pieces, kernel, stride, dilation, out):
    """buf[..., k*dilation + o*stride] += pieces(k)[..., o] for every kernel offset k.

    The adjoint of `_windows`: the scatter-add of col2im, one vectorised add per kernel offset.
    """
    for k in itertools.product(*[range(n) for n in kernel]):
        region = tuple(slice(ki * dl, ki * dl + (o - 1) * s + 1, s)
                       for ki, dl, o, s in zip(k, dilation, out, stride))
        buf[(Ellipsis,) + region] += pieces(k)


def _pad_last(xp, x, pads, value=0):
    """Pad x's last len(pads) axes by (before, after) pairs with a constant."""
    if not any(lo or hi for lo, hi in pads):
        return x
    d = len(pads)
    shape = x.shape[:-d] + tuple(n + lo + hi for n, (lo, hi) in zip(x.shape[-d:], pads))
    out = xp.full(shape, value, dtype=x.dtype) if value else xp.zeros(shape, dtype=x.dtype)
    out[(Ellipsis,) + tuple(slice(lo, lo + n) for n, (lo, _) in zip(x.shape[-d:], pads))] = x
    return out


def _crop_last(x, pads, sizes):
    return x[(Ellipsis,) + tuple(slice(lo, lo + n) for (lo, _), n in zip(pads, sizes))]


def _conv_out(size, k, s, p, d):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _prod(xs):
    return int(math.prod(xs))


# ============================================================================ convolution kernels
# Layout: the im2col matrix is batched, cols (N, G, C/G*prod(kernel), L), so that the forward is
# w (G, O/G, C/G*K) @ cols -> (N, G, O/G, L), already in (N, O, ...) order: no transposing copy
# of the output or of the gradient. The GEMMs are N small ones (NumPy's batched matmul): as
# fast as one large product on one thread, and OpenBLAS runs the smallest of them (below about
# 2**18 multiply-adds) on one thread, which on a busy machine is much faster than a product
# split over threads that must all be scheduled.
#
# When every stride is 1 (the common case) the windows are taken over the flattened padded
# image: each kernel offset's window is then one contiguous run of L = out[0] * row positions
# (row = the padded size of the other spatial axes), so the im2col copy and the backward fold
# work on long runs instead of many short rows. The run covers whole padded rows: the extra
# "wide" positions past the output's last columns are computed and dropped in the forward,
# and carry zero gradient in the backward.
class _Geometry:
    """Where a convolution's windows lie in its input: see the comment above."""
    __slots__ = ("in_size", "kernel", "stride", "padding", "dilation", "out", "padded", "flat",
                 "length", "offsets", "size")

    def __init__(self, in_size, kernel, stride, padding, dilation, out):
        self.in_size, self.kernel, self.stride = in_size, kernel, stride
        self.padding, self.dilation, self.out = padding, dilation, out
        self.padded = tuple(n + 2 * p for n, p in zip(in_size, padding))
        self.flat = all(s == 1 for s in stride)
        if self.flat:
            # element strides of the padded image, and each kernel offset's flat start
            strides = [_prod(self.padded[i + 1:]) for i in range(len(kernel))]
            self.length = out[0] * strides[0]
            self.offsets = [sum(k * dl * st for k, dl, st in zip(ks, dilation, strides))
                            for ks in itertools.product(*[range(n) for n in kernel])]
            # the flat buffer: the padded image, plus slack for the last wide window
            self.size = max(_prod(self.padded), self.offsets[-1] + self.length)
        else:
            self.length = _prod(out)


_GEOMETRY_CACHE = {}


def _geometry(in_size, kernel, stride, padding, dilation, out):
    key = (tuple(in_size), tuple(kernel), tuple(stride), tuple(padding), tuple(dilation),
           tuple(out))
    geo = _GEOMETRY_CACHE.get(key)
    if geo is None:
        if len(_GEOMETRY_CACHE) > 512:          # a bound, for programs of many shapes
            _GEOMETRY_CACHE.clear()
        geo = _GEOMETRY_CACHE[key] = _Geometry(*key)
    return geo


def _interior(geo):
    """The index of the unpadded image inside the padded one."""
    return (Ellipsis,) + tuple(slice(p, p + n) for p, n in zip(geo.padding, geo.in_size))


def _cols(xp, x, geo, groups):
    """The im2col matrix (N, G, C/G*prod(kernel), L) of x: the one copy of a convolution."""
    n, c = x.shape[:2]
    d = len(geo.kernel)
    if geo.flat:
        buf = xp.zeros((n, c, geo.size), dtype=x.dtype)
        buf[:, :, :_prod(geo.padded)].reshape((n, c) + geo.padded)[_interior(geo)] = x
        s = buf.strides
        row_strides = [s[2] * _prod(geo.padded[i + 1:]) for i in range(d)]
        win = _as_strided(xp, buf, (n, groups, c // groups) + tuple(geo.kernel) + (geo.length,),
                          (s[0], s[1] * (c // groups), s[1]) +
                          tuple(st * dl for st, dl in zip(row_strides, geo.dilation)) + (s[2],))
    else:
        xpad = _pad_last(xp, x, [(p, p) for p in geo.padding])
        win = _windows(xp, xpad, geo.kernel, geo.stride, geo.dilation, geo.out)
        win = win.reshape((n, groups, c // groups) + win.shape[2:])   # split C: still a view
        order = (0, 1, 2) + tuple(range(3 + d, 3 + 2 * d)) + tuple(range(3, 3 + d))
        win = win.transpose(order)                                    # N, G, C/G, *kernel, *out
    return win.reshape(n, groups, (c // groups) * _prod(geo.kernel), geo.length)


def _from_cols(xp, y, geo):
    """A GEMM result (N, O, L) as the output (N, O, *out): drops the wide positions."""
    n, o_ch = y.shape[:2]
    if not geo.flat:
        return y.reshape((n, o_ch) + tuple(geo.out))
    y = y.reshape((n, o_ch, geo.out[0]) + geo.padded[1:])
    return xp.ascontiguousarray(y[(Ellipsis,) + tuple(slice(0, o) for o in geo.out[1:])])


def _grad_cols(xp, g, geo, groups):
    """The output gradient g (N, O, *out) as the GEMM operand (N, G, O/G, L); the wide
    positions get zeros."""
    n, o_ch = g.shape[:2]
    if geo.flat and len(geo.out) > 1:
        wide = xp.zeros((n, o_ch, geo.out[0]) + geo.padded[1:], dtype=g.dtype)
        wide[(Ellipsis,) + tuple(slice(0, o) for o in geo.out[1:])] = g
        g = wide
    return g.reshape(n, groups, o_ch // groups, geo.length)


def _fold_cols(xp, cols, geo):
    """The adjoint of `_cols` (col2im): cols (N, C, prod(kernel), L) summed into (N, C, *in)."""
    n, c = cols.shape[:2]
    if geo.flat:
        buf = xp.zeros((n, c, geo.size), dtype=cols.dtype)
        for j, off in enumerate(geo.offsets):      # one contiguous add per kernel offset
            buf[:, :, off:off + geo.length] += cols[:, :, j]
        padded = buf[:, :, :_prod(geo.padded)].reshape((n, c) + geo.padded)
        return xp.ascontiguousarray(padded[_interior(geo)])
    cols = cols.reshape((n, c) + tuple(geo.kernel) + tuple(geo.out))
    buf = xp.zeros((n, c) + geo.padded, dtype=cols.dtype)
    _fold(buf, lambda k: cols[(slice(None), slice(None)) + k], geo.kernel, geo.stride,
          geo.dilation, geo.out)
    if not any(geo.padding):
        return buf
    return xp.ascontiguousarray(_crop_last(buf, [(p, p) for p in geo.padding], geo.in_size))


def _conv_forward(xp, x, w, stride, padding, dilation, groups, out=None):
    """y[n, o] = sum_{c, k} w[o, c, k] x[n, c, o*stride + k*dilation - padding]: im2col + GEMM.

    `out` limits the output size (a transposed convolution's input gradient may need fewer
    positions than fit)."""
    d = w.ndim - 2
    n = x.shape[0]
    o_ch, kernel = w.shape[0], w.shape[2:]
    if out is None:
        out = tuple(_conv_out(x.shape[2 + i], kernel[i], stride[i], padding[i], dilation[i])
                    for i in range(d))
    geo = _geometry(x.shape[2:], kernel, stride, padding, dilation, out)
    cols = _cols(xp, x, geo, groups)
    y = _product(xp, w.reshape(groups, o_ch // groups, -1), cols)  # N, G, O/G, L
    return _from_cols(xp, y.reshape(n, o_ch, geo.length), geo)


def _conv_input_grad(xp, g, w, in_size, stride, padding, dilation, groups, gmat=None):
    """The adjoint of `_conv_forward` in x (also the transposed convolution): GEMM, then fold."""
    n = g.shape[0]
    o_ch, cg, kernel = w.shape[0], w.shape[1], w.shape[2:]
    geo = _geometry(in_size, kernel, stride, padding, dilation, g.shape[2:])
    if gmat is None:
        gmat = _grad_cols(xp, g, geo, groups)                      # N, G, O/G, L
    wmat = w.reshape(groups, o_ch // groups, cg * _prod(kernel))
    cols = _product(xp, wmat.transpose(0, 2, 1), gmat)             # N, G, C/G*K, L
    return _fold_cols(xp, cols.reshape(n, groups * cg, _prod(kernel), geo.length), geo)


def _conv_weight_grad(xp, x, g, kernel, stride, padding, dilation, groups, gmat=None):
    """The adjoint of `_conv_forward` in w: the gradient times the im2col matrix, summed over
    the batch."""
    n, c = x.shape[:2]
    o_ch = g.shape[1]
    geo = _geometry(x.shape[2:], kernel, stride, padding, dilation, g.shape[2:])
    cols = _cols(xp, x, geo, groups)                               # N, G, C/G*K, L
    if gmat is None:
        gmat = _grad_cols(xp, g, geo, groups)                      # N, G, O/G, L
    # written into a fresh array of the weight's shape (not a reshaped view), which the
    # autograd engine can then take as the .grad without a copy
    gw = xp.empty((o_ch, c // groups) + tuple(kernel), dtype=x.dtype)
    gw_mat = gw.reshape(groups, o_ch // groups, -1)                # G, O/G, C/G*K (a view)
    if o_ch // groups <= geo.length:
        # one product per sample, then their sum: the (N, G, C/G*K, O/G) partial products
        # are no larger than cols (cols times the gradient, rather than the gradient times
        # cols, is the faster order for OpenBLAS here)
        partials = _product(xp, cols, gmat.transpose(0, 1, 3, 2))
        # (summing straight into the transposed view is slower than summing, then copying)
        half = partials.dtype.itemsize == 2       # half floats: add up in float32, as torch
        gw_mat[...] = partials.sum(axis=0, dtype=xp.float32 if half else None).transpose(0, 2, 1)
    else:
        # many channels over few positions: contract batch and positions in one product
        # (copies of the two operands rather than a large stack of partial products)
        gw_mat[...] = _product(xp, gmat.transpose(1, 2, 0, 3).reshape(groups, o_ch // groups, -1),
                                cols.transpose(1, 0, 3, 2).reshape(groups, n * geo.length, -1))
    return gw


def _transposed_out(in_size, kernel, stride, padding, dilation, output_padding):
    return tuple((i - 1) * s - 2 * p + dl * (k - 1) + op + 1 for i, k, s, p, dl, op in
                 zip(in_size, kernel, stride, padding, dilation, output_padding))


# ============================================================================ convolution primitive
@primitive("convolution", node="ConvolutionBackward0", save=("input", "weight"))
def _convolution(xp, input, weight, bias, *, stride, padding, dilation, transposed,
                 output_padding, groups):
    if transposed:
        # y = the input gradient of a convolution whose output is `input`
        size = _transposed_out(input.shape[2:], weight.shape[2:], stride, padding, dilation,
                               output_padding)
        y = _conv_input_grad(xp, input, weight, size, stride, padding, dilation, groups)
    else:
        y = _conv_forward(xp, input, weight, stride, padding, dilation, groups)
    if bias is not None:
        y += bias.reshape((-1,) + (1,) * (y.ndim - 2))
    return laid_out(xp, y, _conv_layout(input, weight, groups, transposed, stride,
                                        output_padding)[0])


@_convolution.derivative
def _(ctx, grad):
    needs = ctx.needs_input_grad
    mask = (bool(needs[0]), bool(needs[1]), len(needs) > 2 and bool(needs[2]))
    gi, gw, gb = _convolution_backward(grad, ctx.input, ctx.weight, output_mask=mask,
                                       **_conv_options(ctx))
    return tuple(g if m else None for g, m in zip((gi, gw, gb), mask))


def _conv_options(ctx):
    return dict(stride=ctx.stride, padding=ctx.padding, dilation=ctx.dilation,
                transposed=ctx.transposed, output_padding=ctx.output_padding,
                groups=ctx.groups)


@primitive("convolution_backward", node="ConvolutionBackwardBackward0", n_outputs=3,
           save=("grad_output", "input", "weight"))
def _convolution_backward(xp, grad_output, input, weight, *, output_mask, stride, padding,
                          dilation, transposed, output_padding, groups):
    """(grad_input, grad_weight, grad_bias) of a convolution; a masked-out one is empty."""
    g, x, w = grad_output, input, weight
    empty = xp.zeros((0,), dtype=g.dtype)
    gi = gw = gb = empty
    kernel = w.shape[2:]
    # the gradient as a GEMM operand, shared by both products of a plain convolution
    gmat = None
    if not transposed and output_mask[0] and output_mask[1]:
        geo = _geometry(x.shape[2:], kernel, stride, padding, dilation, g.shape[2:])
        gmat = _grad_cols(xp, g, geo, groups)
    if output_mask[0]:
        if transposed:
            gi = _conv_forward(xp, g, w, stride, padding, dilation, groups, x.shape[2:])
        else:
            gi = _conv_input_grad(xp, g, w, x.shape[2:], stride, padding, dilation, groups,
                                  gmat)
    if output_mask[1]:
        if transposed:
            # a transposed convolution is the adjoint of a convolution from y to x: the
            # weight gradient swaps the roles of its input and its gradient
            gw = _conv_weight_grad(xp, g, x, kernel, stride, padding, dilation, groups)
        else:
            gw = _conv_weight_grad(xp, x, g, kernel, stride, padding, dilation, groups, gmat)
    if output_mask[2]:
        gb = g.sum(axis=(0,) + tuple(range(2, g.ndim)))
    fmt, mkldnn = _conv_layout(x, w, groups, transposed, stride, output_padding)
    if fmt is not None:
        # both gradients in the convolution's format; but PyTorch's slow kernels give the
        # weight gradient the weight's own strides when it is already in that format
        gi = laid_out(xp, gi, fmt) if output_mask[0] else gi
        if output_mask[1]:
            gw = laid_out(xp, gw, fmt) if mkldnn or not in_format(w, fmt) else \
                restrided(xp, gw, element_strides(w))
    return gi, gw, gb


@_convolution_backward.derivative
def _(ctx, ggi, ggw, ggb):
    # y = F(x, w) + b is bilinear in (x, w); the first backward is (F_x^T g, F_w^T g, sum g).
    # Its derivative in g is F(ggi, w) + F(x, ggw) + ggb; in x it is F_x^T g with weight ggw;
    # in w it is F_w^T g with input ggi.
    opts = _conv_options(ctx)
    mask = ctx.output_mask
    ggi = ggi if mask[0] else None
    ggw = ggw if mask[1] else None
    ggb = ggb if mask[2] else None
    g, x, w = ctx.grad_output, ctx.input, ctx.weight
    needs = ctx.needs_input_grad
    d_g = d_x = d_w = None
    if needs[0]:
        if ggi is not None:
            d_g = _convolution(ggi, w, None, **opts)
        if ggw is not None:
            term = _convolution(x, ggw, None, **opts)
            d_g = term if d_g is None else d_g + term
        if ggb is not None:
            term = ggb.reshape((1, -1) + (1,) * (g.ndim - 2)).expand(g.shape)
            d_g = term if d_g is None else d_g + term
    # (x and w give these two only their shapes: detached, as torch's terms have no graph
    # to them, so the next derivative is None where torch's is)
    if needs[1] and ggw is not None:
        # the input gradient F_x^T g with weight ggw, as torch writes it: the transposed
        # convolution (ConvolutionBackward0), with the output padding that gives x's size
        flipped = dict(opts, transposed=not opts["transposed"], output_padding=(0,) * (g.ndim - 2))
        if not opts["transposed"]:
            bare = _transposed_out(g.shape[2:], ggw.shape[2:], opts["stride"], opts["padding"],
                                   opts["dilation"], flipped["output_padding"])
            flipped["output_padding"] = tuple(n - b for n, b in zip(x.shape[2:], bare))
        d_x = _convolution(g, ggw, None, **flipped)
    if needs[2] and ggi is not None:
        d_w = _convolution_backward(g, ggi, w.detach(), output_mask=(False, True, False),
                                    **opts)[1]
    return d_g, d_x, d_w


# ============================================================================ convolution API
def _tuple(value, n, name, what="convolution dimensions"):
    if isinstance(value, int):
        return (value,) * n
    value = tuple(value)
    if len(value) == 1:
        return value * n
    if len(value) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} "
                           f"values to match the {what}, but got {name}={list(value)}")
    return value


def _type_name(dtype):
    from .._printing import scalar_type_name
    return scalar_type_name(dtype)


def _legacy_type(dtype):
    return f"ember.{_type_name(dtype)}Tensor"


def _uses_mkldnn(input, weight, groups):
    """Whether PyTorch's CPU convolution would pick its oneDNN backend: that decides which of
    two messages a dtype mismatch gets."""
    if input._dtype is not D.float32:
        return False
    shape = list(input.shape) if input.dim() != 3 else [*input.shape[:2], 1, input.shape[2]]
    return _mkldnn_shapes(shape, weight.shape, groups)


def _mkldnn_shapes(shape, wshape, groups):
    """PyTorch's heuristic for oneDNN on a float32 convolution: grouped, or a kernel over 3x3,
    or a batch, or a large input (1-D shapes are seen with a unit height)."""
    return (groups > 1 or (len(wshape) > 3 and wshape[-1] > 3 and wshape[-2] > 3)
            or shape[0] > 1 or shape[0] * shape[1] * shape[2] * shape[3] > 20480)


def _conv_layout(x, w, groups, transposed, stride, output_padding):
    """(memory format, oneDNN?) of PyTorch's CPU convolution of arrays x and w: its output and
    both gradients are channels-last when the input or the weight is. Every 2-d backend keeps
    channels-last; of the 3-d ones only oneDNN does, which takes float32 (by the heuristic)
    and the half types where this CPU has the instructions for them (ember._cpu), but no
    transposed convolution whose output padding reaches its stride."""
    fmt = conv_format(x, w)
    if fmt is None:
        return None, False
    mkldnn = (x.dtype == np.float32 and _mkldnn_shapes(x.shape, w.shape, groups)
              or x.dtype == D.bfloat16.np and onednn_takes("bfloat16")
              or x.dtype == np.float16 and onednn_takes("float16")) and \
        not (transposed and any(op >= s for op, s in zip(output_padding, stride)))
    return (fmt if mkldnn or x.ndim == 4 else None), mkldnn


def _check_conv_dtypes(input, weight, bias, d, transposed, groups):
    """PyTorch's dtype checks of (batched) input, weight and bias, in its order and with the
    message of the backend it would use; returns the bias to use."""
    mkldnn = _uses_mkldnn(input, weight, groups)

    def mismatch(other, what):
        if mkldnn:
            return RuntimeError(f"Input type ({_legacy_type(input._dtype)}) and {what} type "
                                f"({_legacy_type(other._dtype)}) should be the same or input "
                                f"should be a MKLDNN tensor and {what} is a dense tensor")
        return RuntimeError(f"expected scalar type {_type_name(input._dtype)} but found "
                            f"{_type_name(other._dtype)}")
    bias_differs = bias is not None and bias._dtype is not input._dtype
    if bias_differs and not transposed:
        # the forward convolution compares the bias first, with the C++ type names
        raise RuntimeError(f"Input type ({_c_name(input._dtype)}) and bias type "
                           f"({_c_name(bias._dtype)}) should be the same")
    if weight._dtype is not input._dtype:
        raise mismatch(weight, "weight")
    if bias_differs:
        if mkldnn or d == 3:
            raise mismatch(bias, "bias")
        # the 1-D/2-D transposed fallback adds the bias in the input's dtype
        if not D.can_cast(bias._dtype, input._dtype):
            raise RuntimeError(f"result type {_type_name(bias._dtype)} can't be cast to the "
                               f"desired output type {_type_name(input._dtype)}")
        bias = bias.to(input._dtype)
    return bias


def _check_conv_inputs(name, input, weight, bias, d, transposed, groups, stride,
                       string_padding=False):
    """PyTorch's argument checks (and its messages) for a convolution; returns (input, bias,
    batched)."""
    dim = input.dim()
    if dim not in (d + 1, d + 2):
        raise RuntimeError(f"Expected {d + 1}D (unbatched) or {d + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    batched = dim == d + 2
    if not batched:
        input = input.unsqueeze(0)
    if weight.dim() != d + 2:
        if weight.dim() < 3:
            raise RuntimeError("weight should have at least three dimensions")
        # PyTorch takes the dimensionality from the weight: the stride (already expanded to
        # `d` values) must match it, then the input's rank
        _tuple(_tuple(stride, d, "stride"), weight.dim() - 2, "stride")
        w = weight.dim()
        raise RuntimeError(f"Expected {w}-dimensional input for {w}-dimensional weight"
                           f"{'' if string_padding else ' '}{list(weight.shape)}, but got "
                           f"{input.dim()}-dimensional input of size {list(input.shape)} "
                           f"instead")
    bias = _check_conv_dtypes(input, weight, bias, d, transposed, groups)
    wshape = list(weight.shape)
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{wshape}] instead")
    channels = weight.shape[0] if transposed else weight.shape[1] * groups
    if input.shape[1] != channels:
        what = "transposed=1, weight" if transposed else f"groups={groups}, weight"
        raise RuntimeError(f"Given {what} of size {wshape}, expected input"
                           f"{list(input.shape)} to have {channels} channels, but got "
                           f"{input.shape[1]} channels instead")
    out_ch = weight.shape[1] * groups if transposed else weight.shape[0]
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != out_ch):
        given = "transposed=1, weight" if transposed else "weight"
        raise RuntimeError(f"Given {given} of size {wshape}, expected bias to be 1-dimensional "
                           f"with {out_ch} elements, but got bias of size {list(bias.shape)} "
                           f"instead")
    return input, bias, batched


_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int"}


def _c_name(dtype):
    """The C++ type name PyTorch prints in some dtype errors."""
    return _C_NAMES.get(dtype.name, dtype.name)


def _check_geometry(stride, padding, dilation):
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(dl <= 0 for dl in dilation):
        raise RuntimeError("dilation should be greater than zero")


def _convnd(name, d, input, weight, bias, stride, padding, dilation, groups):
    input, bias, batched = _check_conv_inputs(name, input, weight, bias, d, False, groups,
                                              stride, padding == "same")
    stride = _tuple(stride, d, "stride")
    dilation = _tuple(dilation, d, "dilation")
    kernel = weight.shape[2:]
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * d
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            totals = [dl * (k - 1) for dl, k in zip(dilation, kernel)]
            padding = tuple(t // 2 for t in totals)
            if any(t % 2 for t in totals):
                # odd total padding: the extra element goes on the right, as a padded copy
                warnings.warn("Using padding='same' with even kernel lengths and odd dilation "
                              "may require a zero-padded copy of the input be created",
                              UserWarning, stacklevel=3)
                extra = []
                for t in reversed(totals):
                    extra += [0, t % 2]
                input = pad(input, extra)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        padding = _tuple(padding, d, "padding")
    _check_geometry(stride, padding, dilation)
    padded = [s + 2 * p for s, p in zip(input.shape[2:], padding)]
    effective = [dl * (k - 1) + 1 for dl, k in zip(dilation, kernel)]
    if any(p < e for p, e in zip(padded, effective)):
        raise RuntimeError(f"Calculated padded input size per channel: "
                           f"({' x '.join(map(str, padded))}). Kernel size: "
                           f"({' x '.join(map(str, effective))}). Kernel size can't be greater "
                           f"than actual input size")
    y = _convolution(input, weight, bias, stride=stride, padding=padding, dilation=dilation,
                     transposed=False, output_padding=(0,) * d, groups=groups)
    return y if batched else y.squeeze(0)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convnd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convnd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convnd("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def _conv_transposend(name, d, input, weight, bias, stride, padding, output_padding, groups,
                      dilation):
    input, bias, batched = _check_conv_inputs(name, input, weight, bias, d, True, groups,
                                              stride)
    stride = _tuple(stride, d, "stride")
    padding = _tuple(padding, d, "padding")
    dilation = _tuple(dilation, d, "dilation")
    output_padding = _tuple(output_padding, d, "output_padding")
    _check_geometry(stride, padding, dilation)
    if any(op >= s and op >= dl for op, s, dl in zip(output_padding, stride, dilation)):
        names = ["height", "width"] if d == 2 else ["depth", "height", "width"][-d:] \
            if d != 1 else ["width"]
        parts = [f"output_padding_{n}: {v}" for n, v in zip(names, output_padding)] + \
            [f"stride_{n}: {v}" for n, v in zip(names, stride)] + \
            [f"dilation_{n}: {v}" for n, v in zip(names, dilation)]
        raise RuntimeError("output padding must be smaller than either stride or dilation, but "
                           "got " + " ".join(parts))
    size = _transposed_out(input.shape[2:], weight.shape[2:], stride, padding, dilation,
                           output_padding)
    if any(s <= 0 for s in size):
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, input.shape[2:]))}"
                           f"). Calculated output size per channel: "
                           f"({' x '.join(map(str, size))}). Output size is too small")
    y = _convolution(input, weight, bias, stride=stride, padding=padding, dilation=dilation,
                     transposed=True, output_padding=output_padding, groups=groups)
    return y if batched else y.squeeze(0)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_transposend("conv_transpose1d", 1, input, weight, bias, stride, padding,
                             output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_transposend("conv_transpose2d", 2, input, weight, bias, stride, padding,
                             output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_transposend("conv_transpose3d", 3, input, weight, bias, stride, padding,
                             output_padding, groups, dilation)


# ============================================================================ padding
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


def _pad_pairs(pad):
    """PyTorch's pad list (last axis first) as (lo, hi) pairs for the trailing axes in order."""
    d = len(pad) // 2
    return [(pad[2 * (d - 1 - i)], pad[2 * (d - 1 - i) + 1]) for i in range(d)]


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
    from ..ops.creation import zeros
    from ..ops.views import slice_dim
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
        return values, tap_offsets[arg] + first
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
        result[flat] = grad.ravel()
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
        values, index = _max_pool_raw(xp, self, kernel, stride, padding, dilation, out)
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


_AXES_OPS = {}


def _axes_op(node, x, mats):
    op = _AXES_OPS.get(node)
    if op is None:
        op = _AXES_OPS[node] = _make_axes_op(node)
    return op(x, mats=tuple(mats))


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


# ============================================================================ unfold / fold
@primitive("im2col", node="Im2ColBackward0")
def _im2col_op(xp, self, *, kernel, dilation, padding, stride):
    if self.ndim == 3:                                            # unbatched, as in torch
        return _im2col_op.forward(xp, self[None], kernel=kernel, dilation=dilation,
                                  padding=padding, stride=stride)[0]
    n, c = self.shape[:2]
    out = tuple(_conv_out(s, k, st, p, dl) for s, k, st, p, dl in
                zip(self.shape[2:], kernel, stride, padding, dilation))
    xpad = _pad_last(xp, self, [(p, p) for p in padding])
    win = _windows(xp, xpad, kernel, stride, dilation, out)       # N, C, *out, *kernel
    d = len(kernel)
    order = (0, 1) + tuple(range(2 + d, 2 + 2 * d)) + tuple(range(2, 2 + d))
    return win.transpose(order).reshape(n, c * _prod(kernel), _prod(out))


@primitive("col2im", node="Col2ImBackward0")
def _col2im_op(xp, self, *, output_size, kernel, dilation, padding, stride):
    if self.ndim == 2:                                            # unbatched, as in torch
        return _col2im_op.forward(xp, self[None], output_size=output_size, kernel=kernel,
                                  dilation=dilation, padding=padding, stride=stride)[0]
    n = self.shape[0]
    c = self.shape[1] // _prod(kernel)
    out = tuple(_conv_out(s, k, st, p, dl) for s, k, st, p, dl in
                zip(output_size, kernel, stride, padding, dilation))
    cols = self.reshape((n, c) + tuple(kernel) + out)
    buf = xp.zeros((n, c) + tuple(s + 2 * p for s, p in zip(output_size, padding)),
                   dtype=self.dtype)
    _fold(buf, lambda k: cols[(slice(None), slice(None)) + k], kernel, stride, dilation, out)
    return xp.ascontiguousarray(_crop_last(buf, [(p, p) for p in padding], output_size))


@_im2col_op.derivative
def _(ctx, grad):
    return _col2im_op(grad, output_size=tuple(ctx.input_shape()[-2:]), kernel=ctx.kernel,
                      dilation=ctx.dilation, padding=ctx.padding, stride=ctx.stride)


@_col2im_op.derivative
def _(ctx, grad):
    return _im2col_op(grad, kernel=ctx.kernel, dilation=ctx.dilation, padding=ctx.padding,
                      stride=ctx.stride)


def _check_fold_geometry(kernel, dilation, padding, stride, stride_first=False):
    """torch's checks (and messages) of fold/unfold's 2-d window geometry, in its order (fold
    checks the stride right after the kernel, unfold last)."""
    checks = [("kernel size", "kernel", kernel, min(kernel) > 0, "greater than zero"),
              ("dilation", "dilation", dilation, min(dilation) > 0, "greater than zero"),
              ("padding", "pad", padding, min(padding) >= 0, "non-negative")]
    stride_check = ("stride", "stride", stride, min(stride) > 0, "greater than zero")
    checks.insert(1 if stride_first else 3, stride_check)
    for name, short, values, ok, cond in checks:
        if not ok:
            raise RuntimeError(f"{name} should be {cond}, but got {short}_height: {values[0]} "
                               f"{short}_width: {values[1]}")


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    if input.dim() < 3:
        input.size(max(input.dim(), 1))     # torch reads a dim that is not there: its IndexError
    _check_batch_mode(input, 2)
    kernel, dilation = _tuple(kernel_size, 2, "kernel_size"), _tuple(dilation, 2, "dilation")
    padding, stride = _tuple(padding, 2, "padding"), _tuple(stride, 2, "stride")
    _check_fold_geometry(kernel, dilation, padding, stride)
    blocks = [_conv_out(s, k, st, p, dl) for s, k, st, p, dl in
              zip(input.shape[-2:], kernel, stride, padding, dilation)]
    if min(blocks) < 1:
        raise RuntimeError(f"Given input with spatial size {tuple(input.shape[-2:])}, "
                           f"kernel_size={kernel}, dilation={dilation}, padding={padding}, "
                           f"calculated shape of the array of sliding blocks as "
                           f"{tuple(blocks)}, but its components must be at least one.")
    return _im2col_op(input, kernel=kernel, dilation=dilation, padding=padding, stride=stride)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    if not _non_empty_batch_mode(input, 1):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    kernel = _tuple(kernel_size, 2, "kernel_size")
    args = dict(output_size=_tuple(output_size, 2, "output_size"), kernel=kernel,
                dilation=_tuple(dilation, 2, "dilation"), padding=_tuple(padding, 2, "padding"),
                stride=_tuple(stride, 2, "stride"))
    _check_fold_geometry(kernel, args["dilation"], args["padding"], args["stride"],
                         stride_first=True)
    channels = input.shape[-2]
    # the messages name the dims of the batched input (1: channels, 2: blocks), also unbatched
    if channels % _prod(kernel):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the "
                           f"product of kernel_size, but got input.size(1)={channels} and "
                           f"kernel_size={kernel}.")
    blocks = _prod(_conv_out(s, k, st, p, dl) for s, k, st, p, dl in
                   zip(args["output_size"], kernel, args["stride"], args["padding"],
                       args["dilation"]))
    if input.shape[-1] != blocks:
        raise RuntimeError(
            f"Given output_size={args['output_size']}, kernel_size={kernel}, "
            f"dilation={args['dilation']}, padding={args['padding']}, stride={args['stride']}, "
            f"expected size of input's dimension 2 to match the calculated "
            f"number of sliding blocks "
            + " * ".join(str(_conv_out(s, k, st, p, dl)) for s, k, st, p, dl in
                         zip(args["output_size"], kernel, args["stride"], args["padding"],
                             args["dilation"]))
            + f" = {blocks}, but got input.size(2)={input.shape[-1]}.")
    return _col2im_op(input, **args)


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
    from .._tensor import _is_contiguous
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
        from ._antialias import fixed_point_resample
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
    return np.ascontiguousarray(y.astype(x.dtype))


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


_INTERP_OPS = {}


def _interp_op(node, x, kind, taps, mats):
    op = _INTERP_OPS.get(node)
    if op is None:
        op = _INTERP_OPS[node] = _make_interp_op(node)
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
        from ._antialias import antialias_matrix
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
    from ._antialias import NODES as AA_NODES, antialias_matrix
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


# ============================================================================ attention
def _attention_bias(xp, mask, is_causal, L, S, dtype):
    """The additive score bias of a boolean/float mask and/or causal masking (None if none)."""
    bias = None
    if mask is not None:
        if mask.dtype == bool:
            bias = xp.where(mask, 0, -xp.inf).astype(dtype)
        else:
            bias = mask.astype(dtype)
    if is_causal:
        causal = xp.where(xp.tril(xp.ones((L, S), dtype=bool)), 0, -xp.inf).astype(dtype)
        bias = causal if bias is None else bias + causal
    return bias


def _safe_softmax(xp, s):
    """Softmax over the last axis; a row whose scores are all -inf gives zeros, as in torch."""
    m = s.max(axis=-1, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0)
    e = xp.exp(s - m)
    total = e.sum(axis=-1, keepdims=True)
    return xp.where(total > 0, e / xp.where(total > 0, total, 1), 0)


@primitive("_safe_softmax", node="SafeSoftmaxBackward0", save=("result",))
def _safe_softmax_op(xp, self):
    """Softmax over the last dim that gives zeros for a fully masked row (torch's math path)."""
    return _safe_softmax(xp, self).astype(self.dtype, copy=False)


@_safe_softmax_op.derivative
def _(ctx, grad):
    from ..ops.softmax import _softmax_backward  # softmax's: zero rows give zero grads
    return _softmax_backward(grad, ctx.result, dim=-1)


@primitive("scaled_dot_product_attention", node="ScaledDotProductFlashAttentionForCpuBackward0",
           save=("query", "key", "value"))
def _sdpa(xp, query, key, value, *, mask, is_causal, scale, groups=1):
    if groups > 1:          # grouped-query attention: each key/value head serves `groups` heads
        key, value = (xp.repeat(t, groups, axis=-3) for t in (key, value))
    s = xp.matmul(query, xp.swapaxes(key, -1, -2)) * scale
    bias = _attention_bias(xp, mask, is_causal, s.shape[-2], s.shape[-1], s.dtype)
    if bias is not None:
        s = s + bias
    return xp.matmul(_safe_softmax(xp, s), value)


def _attention_probs(q, k, mask, is_causal, scale):
    """softmax(q k^T * scale + bias) written in ember ops (so it is differentiable)."""
    s = q.matmul(k.transpose(-1, -2)) * scale
    bias = _attention_bias(xp_of(s._device), mask, is_causal, s.shape[-2], s.shape[-1],
                           s._dtype.np)
    if bias is not None:
        s = s + Tensor._make(bias, s._dtype, s._device)
    return _safe_softmax_op(s)


@_sdpa.derivative
def _(ctx, grad):
    q, k, v = ctx.query, ctx.key, ctx.value
    if ctx.groups > 1:
        k, v = _repeat_heads(k, ctx.groups), _repeat_heads(v, ctx.groups)
    p = _attention_probs(q, k, ctx.mask, ctx.is_causal, ctx.scale)
    dv = p.transpose(-1, -2).matmul(grad)
    dp = grad.matmul(v.transpose(-1, -2))
    ds = p * (dp - (dp * p).sum(-1, keepdim=True))
    dq = ds.matmul(k) * ctx.scale
    dk = ds.transpose(-1, -2).matmul(q) * ctx.scale
    if ctx.groups > 1:      # each shared head's gradient is the sum over the heads it served
        dk, dv = (_sum_head_groups(t, ctx.groups) for t in (dk, dv))
    return dq, dk, dv


def _repeat_heads(t, groups):
    """(..., H, S, E) -> (..., H * groups, S, E), each head repeated `groups` times in turn
    (torch's repeat_interleave: unsqueeze, expand, contiguous copy, view)."""
    shape = tuple(t.shape[:-3])
    heads = t.shape[-3]
    expanded = t.unsqueeze(-3).expand(*shape, heads, groups, *t.shape[-2:])
    return expanded.contiguous().view(*shape, heads * groups, *t.shape[-2:])


def _sum_head_groups(t, groups):
    shape = tuple(t.shape[:-3])
    return t.reshape(*shape, t.shape[-3] // groups, groups, *t.shape[-2:]).sum(-3)


def _sdpa_math(query, key, value, attn_mask, dropout_p, is_causal, scale, groups):
    """PyTorch's math path, op for op, so that the graph shows its nodes: both operands of the
    score product scaled by sqrt(scale), the mask added, a safe softmax, dropout, the product."""
    from .functional import _mul_scalar, _keep_mask
    if groups > 1:
        key, value = _repeat_heads(key, groups), _repeat_heads(value, groups)
    root = math.sqrt(scale)
    scores = _mul_scalar(query, other=root).matmul(_mul_scalar(key.transpose(-2, -1),
                                                               other=root))
    if attn_mask is not None and attn_mask._dtype is not D.bool_:
        scores = scores + attn_mask         # a float mask stays in the graph (it may want grad)
    else:
        bias = _attention_bias(xp_of(scores._device), None if attn_mask is None else
                               attn_mask._data, is_causal, scores.shape[-2], scores.shape[-1],
                               scores._dtype.np)
        if bias is not None:
            scores = scores + Tensor._make(bias, scores._dtype, scores._device)
    attn = _safe_softmax_op(scores)
    if dropout_p > 0.0:
        attn = attn * _keep_mask(attn, dropout_p, attn.shape)
    return attn.matmul(value)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    groups = 1
    if enable_gqa and query.dim() >= 3 and key.shape[-3] != query.shape[-3]:
        groups = query.shape[-3] // key.shape[-3]
    # PyTorch's fused CPU kernel takes 4-D float inputs with one batch size, one head size and
    # the key/value heads serving whole groups of query heads, no dropout, and a mask that does
    # not want a gradient; anything else takes its math path
    fused = (dropout_p == 0.0 and query._dtype in (D.float32, D.float64) and query.dim() == 4 and
             query.shape[0] == key.shape[0] == value.shape[0] and
             key.shape[1] == value.shape[1] and query.shape[1] == key.shape[1] * groups and
             query.shape[-1] == value.shape[-1] and
             (attn_mask is None or not attn_mask.requires_grad))
    if not fused:
        return _sdpa_math(query, key, value, attn_mask, dropout_p, is_causal, scale, groups)
    mask = None if attn_mask is None else attn_mask._data
    return _sdpa(query, key, value, mask=mask, is_causal=is_causal, scale=scale, groups=groups)
