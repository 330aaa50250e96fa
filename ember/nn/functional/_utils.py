"""Helpers shared by the functional categories: constants on a device, scalar-operand ops,
shape broadcasting, argument tuples, strided-window array helpers and the double-backward nodes
of linear ops."""
import itertools
import math

import numpy as np

from ... import _dtype as D
from ..._tensor import Tensor
from ...ops.padding import _pad_last
from ...ops.registry import primitive, xp_of
from ...ops import reduction as R, special
from ...ops import pointwise as P
from ...ops.creation import zeros, full_like
from ...ops import norms as _norms
from ...ops import arithmetic as _arith
from ..._printing import scalar_type_name


def _special():
    return special


def _const(array, like):
    """Wrap an array of constants (a mask, a coefficient) as a tensor on `like`'s device."""
    return Tensor._make(array, D.from_numpy_dtype(array.dtype), like._device)


def _xp(t):
    """The array module (numpy or cupy) of a tensor's device."""
    return xp_of(t._device)


def _dtype_word(dtype):
    return scalar_type_name(dtype)


def _on_device(array, like):
    """A host array (random draws come from the CPU generator) on `like`'s device."""
    return array if like._device.type == "cpu" else _xp(like).asarray(array)


# ============================================================================ scalar operands
# torch's C++ composites (losses, distances, attention) call some ops with a Python number
# operand, and its graph shows those as nodes of their own with a single edge: `x + eps` there
# is AddBackward1, where Python's `x + eps` (torch's and ember's) is AddBackward0 with a second,
# empty edge. Those ops (declared in ops/pointwise.py) make ember's composites show torch's graphs.
_add_scalar, _sub_scalar = _arith._add_scalar, _arith._sub_scalar
_mul_scalar, _div_scalar = _arith._mul_scalar, _arith._div_scalar
# torch.norm(x, p, dim) (NormBackward1), declared beside linalg.vector_norm in ops/norms.py
_norm = _norms._norm_op


def _clamp_min_scalar(input, min):
    return P._clamp_min(input, min=min, max=None)       # (ClampMinBackward0, as torch's)


def _scalar_minus(value, tensor):
    """value - tensor as torch's C++ writes it: a filled tensor minus tensor (SubBackward0 with
    an empty first edge; Python's `value - tensor` is RsubBackward1)."""
    return full_like(tensor, value) - tensor


def _broadcast(a, b):
    if a.shape == b.shape:
        return a, b
    n = max(a.dim(), b.dim())
    sa = (1,) * (n - a.dim()) + tuple(a.shape)
    sb = (1,) * (n - b.dim()) + tuple(b.shape)
    for i in reversed(range(n)):
        if sa[i] != sb[i] and sa[i] != 1 and sb[i] != 1:
            raise RuntimeError(f"The size of tensor a ({sa[i]}) must match the size of tensor b "
                               f"({sb[i]}) at non-singleton dimension {i}")
    shape = tuple(max(x, y) for x, y in zip(sa, sb))
    return a.expand(shape), b.expand(shape)


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


def _crop_last(x, pads, sizes):
    return x[(Ellipsis,) + tuple(slice(lo, lo + n) for (lo, _), n in zip(pads, sizes))]


def _conv_out(size, k, s, p, d):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _prod(xs):
    return int(math.prod(xs))


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
    return scalar_type_name(dtype)
