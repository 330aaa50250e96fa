"""Memory formats of nn ops' results: PyTorch's convolutions, poolings and normalisations give
their outputs (and their backward passes the input gradients) the memory format they take
their input to be in -- channels-last for an NHWC (NDHWC) input.

ember computes these ops in row-major arrays as before; only when the input is taken to be
channels-last is the result copied (once) into channels-last strides, so contiguous inputs
pay one short stride check and nothing more.
"""
from ..._tensor import _CHANNELS_LAST_ORDER, _is_contiguous
from ...ops.creation import copy_strides, strided_empty, suggested_format
from ...ops.views import element_strides

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
