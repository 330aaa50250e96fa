"""Memory formats of nn ops' results: PyTorch's convolutions, poolings and normalisations give
their outputs (and their backward passes the input gradients) the memory format they take
their input to be in -- channels-last for an NHWC (NDHWC) input.

ember computes these ops in row-major arrays as before; only when the input is taken to be
channels-last is the result copied (once) into channels-last strides, so contiguous inputs
pay one short stride check and nothing more.
"""
from .._tensor import _CHANNELS_LAST_ORDER, _is_contiguous
from ..ops.creation import copy_strides, strided_empty
from ..ops.views import element_strides

# by rank: the format's name and its dims innermost first (C, then W, H, (D,) then N)
_FORMATS = {4: ("torch.channels_last", (1, 3, 2, 0)),
            5: ("torch.channels_last_3d", (1, 4, 3, 2, 0))}


def suggested_format(a):
    """The memory format PyTorch takes array `a` to be in: the channels-last name of its rank
    when its strides are ordered as channels-last strides are, else None (contiguous).

    PyTorch judges by the order of the strides, not by density (a strided slice of an NHWC
    tensor is still NHWC), and settles ambiguous layouts towards contiguous: a zero channel
    stride, an empty dim, or a batch stride equal to the channel stride (N111 tensors) say
    contiguous; the strides of dims of size one count only through the bound they set."""
    entry = _FORMATS.get(a.ndim)
    # (the common quick answer: a last dim closer in memory than the channels, as in any
    # contiguous array with more than one channel, is never channels-last)
    if entry is None or a.strides[-1] < a.strides[1]:
        return None
    name, order = entry
    shape, strides = a.shape, element_strides(a)
    if strides[1] == 0:
        return None
    bound = 0           # the least stride the next dim (outwards) may have
    for d in order:
        if shape[d] == 0 or strides[d] < bound or d == 0 and bound == strides[1]:
            return None
        bound = strides[d] * shape[d] if shape[d] > 1 else strides[d]
    return name


def as_input(xp, y, x):
    """Array `y` laid out in the memory format of input array `x` (a copy only for a
    channels-last `x`)."""
    return laid_out(xp, y, suggested_format(x))


def conv_format(input, weight):
    """A convolution's memory format: channels-last when the input or the weight is."""
    return suggested_format(input) or suggested_format(weight)


def laid_out(xp, y, memory_format):
    """Array `y` in `memory_format`: C-contiguous for None (itself when it already is), else a
    copy with that format's strides."""
    if memory_format is None:
        return xp.ascontiguousarray(y)
    return restrided(xp, y, copy_strides(y, memory_format))


def restrided(xp, y, strides):
    """A copy of array `y` with the given element strides."""
    out = strided_empty(xp, y.shape, strides, y.dtype)
    out[...] = y
    return out


def in_format(a, memory_format):
    """Whether array `a` is contiguous in a channels-last `memory_format` (as
    Tensor.is_contiguous(memory_format) says)."""
    order = _CHANNELS_LAST_ORDER[memory_format]
    strides = element_strides(a)
    return _is_contiguous([a.shape[d] for d in order], [strides[d] for d in order])


def as_input_tensor(t, x):
    """Tensor `t` (a gradient written in ember ops) laid out in tensor `x`'s memory format:
    itself when it already has that format's strides, else a (differentiable) copy."""
    fmt = suggested_format(x._data)
    if fmt is None:
        return t.contiguous()
    return t if t.stride() == copy_strides(t._data, fmt) else t.clone(memory_format=fmt)
