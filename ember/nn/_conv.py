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
from .._tensor import Tensor
from ..ops.registry import primitive


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
    width = [(0, 0)] * (x.ndim - len(pads)) + list(pads)
    return xp.pad(x, width, mode="constant", constant_values=value)


def _crop_last(x, pads, sizes):
    return x[(Ellipsis,) + tuple(slice(lo, lo + n) for (lo, _), n in zip(pads, sizes))]


def _conv_out(size, k, s, p, d):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _prod(xs):
    return int(math.prod(xs))


# ============================================================================ convolution kernels
def _im2col(xp, x, kernel, stride, padding, dilation, out, groups):
    """The im2col matrix (G, N*prod(out), C/G*prod(kernel)) of x: the one copy of a convolution."""
    d = len(kernel)
    n, c = x.shape[:2]
    xpad = _pad_last(xp, x, [(p, p) for p in padding])
    win = _windows(xp, xpad, kernel, stride, dilation, out)       # N, C, *out, *kernel
    win = win.reshape((n, groups, c // groups) + win.shape[2:])   # split C: still a view
    order = (1, 0) + tuple(range(3, 3 + d)) + (2,) + tuple(range(3 + d, 3 + 2 * d))
    return win.transpose(order).reshape(groups, n * _prod(out), (c // groups) * _prod(kernel))


def _conv_forward(xp, x, w, stride, padding, dilation, groups):
    """y[n, o] = sum_{c, k} w[o, c, k] x[n, c, o*stride + k*dilation - padding]: one GEMM."""
    d = w.ndim - 2
    n = x.shape[0]
    o_ch, kernel = w.shape[0], w.shape[2:]
    out = tuple(_conv_out(x.shape[2 + i], kernel[i], stride[i], padding[i], dilation[i])
                for i in range(d))
    cols = _im2col(xp, x, kernel, stride, padding, dilation, out, groups)
    wmat = w.reshape(groups, o_ch // groups, -1)
    y = xp.matmul(cols, wmat.transpose(0, 2, 1))                  # G, N*out, O/G
    y = y.reshape((groups, n) + out + (o_ch // groups,))
    order = (1, 0, 2 + d) + tuple(range(2, 2 + d))
    return xp.ascontiguousarray(y.transpose(order)).reshape((n, o_ch) + out)


def _conv_input_grad(xp, g, w, in_size, stride, padding, dilation, groups):
    """The adjoint of `_conv_forward` in x (also the transposed convolution): GEMM, then fold."""
    d = w.ndim - 2
    n, o_ch = g.shape[:2]
    out = g.shape[2:]
    cg, kernel = w.shape[1], w.shape[2:]
    og = o_ch // groups
    gmat = g.reshape((n, groups, og, _prod(out))).transpose(1, 2, 0, 3)
    gmat = gmat.reshape(groups, og, n * _prod(out))               # G, O/G, N*out
    wmat = w.reshape(groups, og, cg * _prod(kernel))
    cols = xp.matmul(wmat.transpose(0, 2, 1), gmat)                # G, C/G*kernel, N*out
    cols = cols.reshape((groups, cg) + tuple(kernel) + (n,) + tuple(out))
    padded = tuple(s + 2 * p for s, p in zip(in_size, padding))
    buf = xp.zeros((groups, cg, n) + padded, dtype=cols.dtype)
    _fold(buf, lambda k: cols[(slice(None), slice(None)) + k], kernel, stride, dilation, out)
    buf = _crop_last(buf, [(p, p) for p in padding], in_size)
    buf = buf.reshape((groups * cg, n) + tuple(in_size))
    return xp.ascontiguousarray(xp.swapaxes(buf, 0, 1))


def _conv_weight_grad(xp, x, g, kernel, stride, padding, dilation, groups):
    """The adjoint of `_conv_forward` in w: the gradient times the im2col matrix, one GEMM."""
    n, o_ch = g.shape[:2]
    out = g.shape[2:]
    c = x.shape[1]
    cols = _im2col(xp, x, kernel, stride, padding, dilation, out, groups)
    gmat = g.reshape((n, groups, o_ch // groups, _prod(out))).transpose(1, 2, 0, 3)
    gmat = gmat.reshape(groups, o_ch // groups, n * _prod(out))
    gw = xp.matmul(gmat, cols)                                      # G, O/G, C/G*kernel
    return gw.reshape((o_ch, c // groups) + tuple(kernel))


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
    return y


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
    if output_mask[0]:
        if transposed:
            gi = _conv_forward(xp, g, w, stride, padding, dilation, groups)
        else:
            gi = _conv_input_grad(xp, g, w, x.shape[2:], stride, padding, dilation, groups)
    if output_mask[1]:
        if transposed:
            # y = F_T(x, w) = adjoint of a conv of y-shaped input; its weight gradient swaps roles
            gw = _conv_weight_grad(xp, g, x, kernel, stride, padding, dilation, groups)
        else:
            gw = _conv_weight_grad(xp, x, g, kernel, stride, padding, dilation, groups)
    if output_mask[2]:
        gb = g.sum(axis=(0,) + tuple(range(2, g.ndim)))
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
    if needs[1] and ggw is not None:
        d_x = _convolution_backward(g, x, ggw, output_mask=(True, False, False), **opts)[0]
    if needs[2] and ggi is not None:
        d_w = _convolution_backward(g, ggi, w, output_mask=(False, True, False), **opts)[1]
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
    return f"torch.{_type_name(dtype)}Tensor"


def _check_conv_inputs(name, input, weight, bias, d, transposed, groups):
    """PyTorch's argument checks (and its messages) for a convolution; returns (input, batched)."""
    dim = input.dim()
    if dim not in (d + 1, d + 2):
        raise RuntimeError(f"Expected {d + 1}D (unbatched) or {d + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    batched = dim == d + 2
    if not batched:
        input = input.unsqueeze(0)
    if weight.dim() != d + 2:
        raise RuntimeError("weight should have at least three dimensions" if weight.dim() < 3
                           else f"Expected {d + 2}-dimensional input for {d + 2}-dimensional "
                                f"weight {list(weight.shape)}, but got {d + 1}-dimensional "
                                f"input of size {list(input.shape)} instead")
    if input._dtype is not weight._dtype:
        if weight._dtype is D.float32 or input._dtype is not D.float32:
            raise RuntimeError(f"expected scalar type {_type_name(input._dtype)} but found "
                               f"{_type_name(weight._dtype)}")
        raise RuntimeError(f"Input type ({_legacy_type(input._dtype)}) and weight type "
                           f"({_legacy_type(weight._dtype)}) should be the same or input "
                           f"should be a MKLDNN tensor and weight is a dense tensor")
    if bias is not None and bias._dtype is not input._dtype:
        raise RuntimeError(f"Input type ({_c_name(input._dtype)}) and bias type "
                           f"({_c_name(bias._dtype)}) should be the same")
    wshape = list(weight.shape)
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{wshape}] instead")
    channels = weight.shape[0] if transposed else weight.shape[1] * groups
    if input.shape[1] != channels:
        what = f"transposed=1, weight" if transposed else f"groups={groups}, weight"
        raise RuntimeError(f"Given {what} of size {wshape}, expected input"
                           f"{list(input.shape)} to have {channels} channels, but got "
                           f"{input.shape[1]} channels instead")
    out_ch = weight.shape[1] * groups if transposed else weight.shape[0]
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != out_ch):
        raise RuntimeError(f"Given weight of size {wshape}, expected bias to be 1-dimensional "
                           f"with {out_ch} elements, but got bias of size {list(bias.shape)} "
                           f"instead")
    return input, batched


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
    input, batched = _check_conv_inputs(name, input, weight, bias, d, False, groups)
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
    input, batched = _check_conv_inputs(name, input, weight, bias, d, True, groups)
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
