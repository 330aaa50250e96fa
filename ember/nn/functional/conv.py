"""Convolution: conv1d/2d/3d, their transposes, conv_tbc, and unfold/fold (im2col/col2im).

Every op takes strided windows of the (padded) input without a copy, then does the work with a
few large NumPy calls -- one batched GEMM for a convolution. Backward passes are the adjoint
"fold" (col2im): a loop over the kernel offsets (never over pixels or the batch), each step one
vectorised add of a strided slab. Each op is a primitive with PyTorch's node name, and its
derivative is written with primitives of this file (a convolution's input gradient is a
transposed convolution, its weight gradient a GEMM of windows with the gradient, ...), so double
backward works and shows torch's node names.

A float32/float64 3x3 stride-1 convolution with enough channels over a large enough image (a
CNN's usual layer) runs forward and backward by Winograd F(2x2, 3x3) instead (ember/_winograd.py:
2.25x fewer multiply-adds), falling back to the GEMMs here where its result is not finite.
"""
import itertools
import warnings

import numpy as np

from ... import _dtype as D
from ... import _winograd
from ..._cpu import onednn_takes
from ..._nn_kernels import parallel_samples
from ...ops.blas import _product
from ...ops.hooks import autocast_entry
from ...ops.registry import primitive
from ...ops.views import element_strides
from ._memory_format import conv_format, in_format, laid_out, restrided
from ._utils import (_as_strided, _windows, _fold, _pad_last, _crop_last, _conv_out, _prod, _tuple,
                     _type_name)
from .padding import pad, _check_batch_mode, _non_empty_batch_mode
from .padding import pad as _pad   # (conv_tbc has an argument named pad)


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
        image = _prod(geo.padded)
        if any(geo.padding):
            buf = xp.zeros((n, c, geo.size), dtype=x.dtype)
            buf[:, :, :image].reshape((n, c) + geo.padded)[_interior(geo)] = x
        else:
            buf = xp.empty((n, c, geo.size), dtype=x.dtype)
            buf[:, :, :image] = x.reshape(n, c, image)
            buf[:, :, image:] = 0                   # the slack the last wide windows read
        s = buf.strides
        row_strides = [s[2] * _prod(geo.padded[i + 1:]) for i in range(d)]
        shape = (n, groups, c // groups) + tuple(geo.kernel) + (geo.length,)
        strides = (s[0], s[1] * (c // groups), s[1]) + \
            tuple(st * dl for st, dl in zip(row_strides, geo.dilation)) + (s[2],)
        if xp is np:
            # (a view of the fresh buffer: ndarray() takes ~1 us, as_strided ~15 us)
            win = np.ndarray(shape, buf.dtype, buffer=buf, strides=strides)
        else:
            win = _as_strided(xp, buf, shape, strides)
    else:
        xpad = _pad_last(xp, x, [(p, p) for p in geo.padding])
        win = _windows(xp, xpad, geo.kernel, geo.stride, geo.dilation, geo.out)
        win = win.reshape((n, groups, c // groups) + win.shape[2:])   # split C: still a view
        order = (0, 1, 2) + tuple(range(3 + d, 3 + 2 * d)) + tuple(range(3, 3 + d))
        win = win.transpose(order)                                    # N, G, C/G, *kernel, *out
    return win.reshape(n, groups, (c // groups) * _prod(geo.kernel), geo.length)


def _from_cols(xp, y, geo):
    """A GEMM result (N, O, L) as the output (N, O, *out) (a view): drops the wide
    positions."""
    n, o_ch = y.shape[:2]
    if not geo.flat:
        return y.reshape((n, o_ch) + tuple(geo.out))
    y = y.reshape((n, o_ch, geo.out[0]) + geo.padded[1:])
    return y[(Ellipsis,) + tuple(slice(0, o) for o in geo.out[1:])]


# The products run over chunks of the batch, each chunk's im2col matrix about _CHUNK_BYTES
# (within a core's L2 cache): the matrix is then made, multiplied and (in the backward)
# folded while it is in the CPU's cache, instead of going to main memory and back once for
# each of these passes (the whole batch's matrix is tens of MB for a small CNN). A batch
# makes at least _MIN_CHUNKS chunks (where it has that many samples), so that threads have
# work to share. The chunks are independent: with several threads (ember.set_num_threads)
# each thread takes whole chunks, its products on one BLAS thread
# (_nn_kernels.parallel_samples). The chunking depends on the shapes only, never on the
# thread count, and a chunk's result does not depend on which thread computes it: the same
# bits at any thread count. On a GPU the batch stays whole.
_CHUNK_BYTES = 1 << 21
_MIN_CHUNKS = 8


def _chunk_step(n, per_sample):
    """Samples per chunk of a batch of n whose im2col matrices take per_sample bytes each."""
    return max(1, min(_CHUNK_BYTES // max(per_sample, 1), -(-n // _MIN_CHUNKS)))


def _for_chunks(xp, n, per_sample, body):
    """body(slice) for the chunks of a batch of n whose im2col matrices take per_sample bytes
    each, on ember's threads (each call writes only its own samples' outputs)."""
    if xp is not np:
        body(slice(0, n))
        return
    parallel_samples(lambda s0, s1: body(slice(s0, s1)), n, max(per_sample // 4, 1),
                     _chunk_step(n, per_sample))


def _grad_cols(xp, g, geo, groups):
    """The output gradient g (N, O, *out) as the GEMM operand (N, G, O/G, L); the wide
    positions get zeros."""
    n, o_ch = g.shape[:2]
    if geo.flat and len(geo.out) > 1:
        wide = xp.empty((n, o_ch, geo.out[0]) + geo.padded[1:], dtype=g.dtype)
        inside = tuple(slice(0, o) for o in geo.out[1:])
        wide[(Ellipsis,) + inside] = g
        lead = (slice(None),) * 3                # n, o, the first spatial axis
        for i in range(len(inside)):            # zeros past the output on each other axis
            wide[lead + inside[:i] + (slice(geo.out[1 + i], None),)] = 0
        g = wide
    return g.reshape(n, groups, o_ch // groups, geo.length)


def _fold_cols(xp, cols, geo):
    """The adjoint of `_cols` (col2im): cols (N, C, prod(kernel), L) summed into (N, C, *in)
    (a view where the padding is cropped)."""
    n, c = cols.shape[:2]
    if geo.flat:
        buf = xp.zeros((n, c, geo.size), dtype=cols.dtype)
        for j, off in enumerate(geo.offsets):      # one contiguous add per kernel offset
            buf[:, :, off:off + geo.length] += cols[:, :, j]
        padded = buf[:, :, :_prod(geo.padded)].reshape((n, c) + geo.padded)
        return padded[_interior(geo)]
    cols = cols.reshape((n, c) + tuple(geo.kernel) + tuple(geo.out))
    buf = xp.zeros((n, c) + geo.padded, dtype=cols.dtype)
    _fold(buf, lambda k: cols[(slice(None), slice(None)) + k], geo.kernel, geo.stride,
          geo.dilation, geo.out)
    if not any(geo.padding):
        return buf
    return _crop_last(buf, [(p, p) for p in geo.padding], geo.in_size)


def _conv_forward(xp, x, w, stride, padding, dilation, groups, out=None, bias=None):
    """y[n, o] = sum_{c, k} w[o, c, k] x[n, c, o*stride + k*dilation - padding] (+ bias[o]):
    im2col + GEMM, chunk by chunk.

    `out` limits the output size (a transposed convolution's input gradient may need fewer
    positions than fit)."""
    if xp is np and out is None and \
            _winograd.applies(x, w, stride, padding, dilation, groups, bias):
        y = _winograd.forward(x, w, bias, padding)
        if y is not None:           # (else an inf, NaN or overflow: the direct sum below)
            return y
    d = w.ndim - 2
    n = x.shape[0]
    o_ch, kernel = w.shape[0], w.shape[2:]
    if out is None:
        out = tuple(_conv_out(x.shape[2 + i], kernel[i], stride[i], padding[i], dilation[i])
                    for i in range(d))
    geo = _geometry(x.shape[2:], kernel, stride, padding, dilation, out)
    wmat = w.reshape(groups, o_ch // groups, -1)
    y = xp.empty((n, o_ch) + tuple(geo.out), dtype=xp.result_type(x.dtype, w.dtype))
    b = None if bias is None else bias.reshape((-1,) + (1,) * d)

    def chunk(s):
        part = _product(xp, wmat, _cols(xp, x[s], geo, groups))      # n, G, O/G, L
        result = _from_cols(xp, part.reshape(-1, o_ch, geo.length), geo)
        if b is None:
            y[s] = result
        else:
            xp.add(result, b, out=y[s])     # the bias added as the chunk is copied out
    _for_chunks(xp, n, w[0].size * groups * geo.length * x.itemsize, chunk)
    return y


def _conv_input_grad(xp, g, w, in_size, stride, padding, dilation, groups, gmat=None):
    """The adjoint of `_conv_forward` in x (also the transposed convolution): GEMM, then fold."""
    n = g.shape[0]
    o_ch, cg, kernel = w.shape[0], w.shape[1], w.shape[2:]
    geo = _geometry(in_size, kernel, stride, padding, dilation, g.shape[2:])
    wmat_t = w.reshape(groups, o_ch // groups, cg * _prod(kernel)).transpose(0, 2, 1)
    gi = xp.empty((n, groups * cg) + tuple(in_size), dtype=xp.result_type(g.dtype, w.dtype))

    def chunk(s):
        gm = _grad_cols(xp, g[s], geo, groups) if gmat is None else gmat[s]   # n, G, O/G, L
        cols = _product(xp, wmat_t, gm)                            # n, G, C/G*K, L
        gi[s] = _fold_cols(xp, cols.reshape(-1, groups * cg, _prod(kernel), geo.length), geo)
    _for_chunks(xp, n, w[0].size * groups * geo.length * g.itemsize, chunk)
    return gi


def _conv_weight_grad(xp, x, g, kernel, stride, padding, dilation, groups, gmat=None):
    """The adjoint of `_conv_forward` in w: the gradient times the im2col matrix, summed over
    the batch."""
    n, c = x.shape[:2]
    o_ch = g.shape[1]
    geo = _geometry(x.shape[2:], kernel, stride, padding, dilation, g.shape[2:])
    # written into a fresh array of the weight's shape (not a reshaped view), which the
    # autograd engine can then take as the .grad without a copy
    gw = xp.empty((o_ch, c // groups) + tuple(kernel), dtype=x.dtype)
    gw_mat = gw.reshape(groups, o_ch // groups, -1)                # G, O/G, C/G*K (a view)
    if o_ch // groups <= geo.length:
        # one product per sample, then their sum: the (n, G, C/G*K, O/G) partial products
        # are no larger than cols (cols times the gradient, rather than the gradient times
        # cols, is the faster order for OpenBLAS here)
        half = x.dtype.itemsize == 2            # half floats: add up in float32, as torch
        per_sample = c * _prod(kernel) * geo.length * x.itemsize
        if xp is np:
            step = _chunk_step(n, per_sample)
            count = -(-n // step)
        else:
            step, count = n, 1
        # each chunk's sum in its own slot, added up in chunk order afterwards: the same
        # bits whichever threads computed the chunks
        sums = xp.empty((count, groups, c // groups * _prod(kernel), o_ch // groups),
                        dtype=xp.float32 if half else x.dtype)

        def chunk(s):
            cols = _cols(xp, x[s], geo, groups)                    # n, G, C/G*K, L
            gm = _grad_cols(xp, g[s], geo, groups) if gmat is None else gmat[s]
            partials = _product(xp, cols, gm.transpose(0, 1, 3, 2))
            partials.sum(axis=0, dtype=sums.dtype, out=sums[(s.start or 0) // step])
        _for_chunks(xp, n, per_sample, chunk)
        total = sums[0] if count == 1 else sums.sum(axis=0)
        # (summing straight into the transposed view is slower than summing, then copying)
        gw_mat[...] = total.transpose(0, 2, 1)
    else:
        cols = _cols(xp, x, geo, groups)                           # N, G, C/G*K, L
        if gmat is None:
            gmat = _grad_cols(xp, g, geo, groups)                  # N, G, O/G, L
        # many channels over few positions: contract batch and positions in one product
        # (copies of the two operands rather than a large stack of partial products)
        gw_mat[...] = _product(xp, gmat.transpose(1, 2, 0, 3).reshape(groups, o_ch // groups, -1),
                                cols.transpose(1, 0, 3, 2).reshape(groups, n * geo.length, -1))
    return gw


def _conv_grads(xp, x, g, w, stride, padding, dilation, groups):
    """(input gradient, weight gradient) of a plain float32/float64 convolution on the CPU
    in one pass over the batch's chunks: each chunk's gradient operand is made once, for
    both products, while it is in cache. The same chunks and sums as _conv_input_grad and
    _conv_weight_grad (so the same bits); None where their other ways apply."""
    n, c = x.shape[:2]
    o_ch, cg, kernel = w.shape[0], w.shape[1], w.shape[2:]
    geo = _geometry(x.shape[2:], kernel, stride, padding, dilation, g.shape[2:])
    if xp is not np or x.dtype.itemsize < 4 or o_ch // groups > geo.length:
        return None
    k = _prod(kernel)
    wmat_t = w.reshape(groups, o_ch // groups, cg * k).transpose(0, 2, 1)
    gi = xp.empty((n, c) + tuple(x.shape[2:]), dtype=xp.result_type(g.dtype, w.dtype))
    gw = xp.empty((o_ch, cg) + tuple(kernel), dtype=x.dtype)
    per_sample = c * k * geo.length * x.itemsize             # one sample's im2col bytes
    step = _chunk_step(n, per_sample)
    sums = xp.empty((-(-n // step), groups, cg * k, o_ch // groups), dtype=x.dtype)

    def chunk(s0, s1):
        s = slice(s0, s1)
        gm = _grad_cols(xp, g[s], geo, groups)                    # n, G, O/G, L
        back = _product(xp, wmat_t, gm)                            # n, G, C/G*K, L
        gi[s] = _fold_cols(xp, back.reshape(-1, c, k, geo.length), geo)
        cols = _cols(xp, x[s], geo, groups)                        # n, G, C/G*K, L
        _product(xp, cols, gm.transpose(0, 1, 3, 2)).sum(axis=0, out=sums[s0 // step])
    parallel_samples(chunk, n, max(per_sample // 4, 1), step)
    total = sums[0] if len(sums) == 1 else sums.sum(axis=0)
    gw.reshape(groups, o_ch // groups, -1)[...] = total.transpose(0, 2, 1)
    return gi, gw


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
        if bias is not None:
            y += bias.reshape((-1,) + (1,) * (y.ndim - 2))
    else:
        y = _conv_forward(xp, input, weight, stride, padding, dilation, groups, bias=bias)
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
    # the gradient as a GEMM operand, shared by both products of a plain convolution: on a
    # GPU made once for the whole batch; on the CPU chunk by chunk, in cache (_conv_grads)
    gmat = both = None
    if xp is np and not transposed and (output_mask[0] or output_mask[1]) and \
            g.dtype == x.dtype and _winograd.applies(x, w, stride, padding, dilation, groups):
        both = _winograd.backward(x, w, g, padding, need_input=output_mask[0],
                                  need_weight=output_mask[1])
        if both is not None:        # (else an inf, NaN or overflow: the direct sums below)
            both = tuple(empty if r is None else r for r in both)
    if both is None and not transposed and output_mask[0] and output_mask[1]:
        if xp is np:
            both = _conv_grads(xp, x, g, w, stride, padding, dilation, groups)
        else:
            geo = _geometry(x.shape[2:], kernel, stride, padding, dilation, g.shape[2:])
            gmat = _grad_cols(xp, g, geo, groups)
    if both is not None:
        gi, gw = both
    if output_mask[0] and both is None:
        if transposed:
            gi = _conv_forward(xp, g, w, stride, padding, dilation, groups, x.shape[2:])
        else:
            gi = _conv_input_grad(xp, g, w, x.shape[2:], stride, padding, dilation, groups,
                                  gmat)
    if output_mask[1] and both is None:
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


@autocast_entry
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convnd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


@autocast_entry
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convnd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


@autocast_entry
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


@autocast_entry
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_transposend("conv_transpose1d", 1, input, weight, bias, stride, padding,
                             output_padding, groups, dilation)


@autocast_entry
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_transposend("conv_transpose2d", 2, input, weight, bias, stride, padding,
                             output_padding, groups, dilation)


@autocast_entry
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_transposend("conv_transpose3d", 3, input, weight, bias, stride, padding,
                             output_padding, groups, dilation)


# ======================================================================= conv_tbc (time-major 1-d)
def conv_tbc(input, weight, bias, pad=0):
    """input (time, batch, in), weight (kernel, in, out), bias (out): out[t] = bias +
    sum_k padded[t + k] @ weight[k]; a negative pad crops the time axis."""
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.dim() != 1 or bias.shape[0] != weight.shape[2]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if isinstance(pad, bool) or not isinstance(pad, int):
        raise TypeError(f"conv_tbc(): argument 'pad' (position 4) must be int, not "
                        f"{type(pad).__name__}")
    if input.dtype != weight.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{_type_name(input.dtype)} and {_type_name(weight.dtype)}")
    x = _pad(input, (0, 0, 0, 0, pad, pad))
    kernel = weight.shape[0]
    steps = max(x.shape[0] - kernel + 1, 0)
    # (the bias is added in the input's dtype) one product per kernel offset (the kernel is short; the batch and time are not)
    out = bias.to(input.dtype).expand(steps, input.shape[1], weight.shape[2])
    for k in range(kernel):
        out = out + x[k:k + steps].matmul(weight[k])
    return out


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
