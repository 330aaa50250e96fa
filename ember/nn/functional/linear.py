"""Linear maps: linear and bilinear."""
import numpy as np

from ..._device import CPU
from ..._tensor import Tensor
from ...autograd import grad_mode
from ...ops import hooks
from ...ops.hooks import autocast_entry
from ...ops.registry import primitive
from ...ops.blas import addmm, matmul, _addmm, _product
from ...ops.views import _t

_ndarray = np.ndarray
_grad_state = grad_mode.state
_ADDMM_PARAMS = {"beta": 1, "alpha": 1}     # what addmm passes its op by default


# ============================================================================ linear
@autocast_entry
def linear(input, weight, bias=None):
    """y = x W^T + b. A 2-D input with a bias is one addmm, as in PyTorch's graph."""
    if bias is not None and _plain_2d(input, weight, bias):
        return _linear_2d(input, weight, bias)
    if bias is None:
        return matmul(input, weight.t())
    if input.dim() == 2:
        return addmm(bias, input, weight.t())
    flat = input.reshape(-1, input.shape[-1])
    out = addmm(bias, flat, weight.t())
    return out.view(*input.shape[:-1], out.shape[-1])


def _plain_2d(input, weight, bias):
    """The common layer call: a 2-D input, a 2-D weight and a 1-D bias of one real floating
    dtype (float32/float64) on the CPU, shapes that fit, and no autocast, profiler or forward
    AD. Then `_linear_2d` gives addmm's result without addmm's checks and op dispatch."""
    if not (isinstance(input, Tensor) and isinstance(weight, Tensor) and
            isinstance(bias, Tensor)):
        return False
    dtype = input._dtype
    x, w, b = input._data, weight._data, bias._data
    return (weight._dtype is dtype and bias._dtype is dtype and dtype._category == 2 and
            not dtype._half and input._device is CPU and weight._device is CPU and
            bias._device is CPU and x.__class__ is _ndarray and w.__class__ is _ndarray and
            b.__class__ is _ndarray and x.ndim == 2 and w.ndim == 2 and b.ndim == 1 and
            x.shape[1] == w.shape[1] and b.shape[0] == w.shape[0] and w.size and
            not hooks.autocast_regions[0] and not hooks.profiling and not hooks.dual_levels)


def _linear_2d(input, weight, bias):
    """addmm(bias, input, weight.t()) as its op calls compute and record it: the weight's
    transposed view (TBackward0 when grad mode records), then the product plus the bias
    (AddmmBackward0), each with its op's forward arithmetic and its op's record."""
    recording = _grad_state.enabled
    w = weight._data
    wt = weight._make_view(w.T)             # (t's forward on a non-empty 2-D array)
    if recording and weight._requires_grad:
        _t._record((weight,), wt, {})
    out = _product(np, input._data, w.T)
    out += bias._data                       # (addmm's arithmetic, for beta = alpha = 1)
    result = Tensor._make(out, input._dtype)
    if recording and (input._requires_grad or wt._requires_grad or bias._requires_grad):
        _addmm._record((bias, input, wt), result, dict(_ADDMM_PARAMS))
    return result


@primitive("_trilinear", node="TrilinearBackward0", save=("i1", "i2", "i3"))
def _trilinear(xp, i1, i2, i3):
    """out[b, o] = sum_ij i1[b, i] i2[o, i, j] i3[b, j]: bilinear's product, one node in torch's
    graph (its `_trilinear`, here only in the layout bilinear uses)."""
    n_out, n1, n2 = i2.shape
    # (i1 W_o) for every output o at once, then the inner product with i3
    t = xp.matmul(i1, i2.transpose(1, 0, 2).reshape(n1, n_out * n2)).reshape(-1, n_out, n2)
    return (t * i3[:, None, :]).sum(-1).astype(i1.dtype, copy=False)


@_trilinear.derivative
def _(ctx, g):
    x1, w, x2 = ctx.i1, ctx.i2, ctx.i3
    n_out, n1, n2 = w.shape
    needs = ctx.needs_input_grad
    g1 = gw = g2 = None
    if needs[0]:      # sum_oj g[b, o] w[o, i, j] x2[b, j]
        gx2 = (g.unsqueeze(2) * x2.unsqueeze(1)).reshape(-1, n_out * n2)
        g1 = gx2.matmul(w.permute(1, 0, 2).reshape(n1, n_out * n2).t())
    if needs[1]:      # sum_b g[b, o] x1[b, i] x2[b, j]
        outer = (x1.unsqueeze(2) * x2.unsqueeze(1)).reshape(-1, n1 * n2)
        gw = g.t().matmul(outer).reshape(n_out, n1, n2)
    if needs[2]:      # sum_oi g[b, o] x1[b, i] w[o, i, j]
        g2 = (g.unsqueeze(2) * x1.unsqueeze(1)).reshape(-1, n_out * n1).matmul(
            w.reshape(n_out * n1, n2))
    return g1, gw, g2


def _check_bilinear(input1, input2, weight, bias):
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and "
                           f"{input2.dim()}")
    for i, (a, b) in enumerate(zip(input1.shape[:-1], input2.shape[:-1])):
        if a != b:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: "
                               f"got {a} and {b}")
    for name, x, dim in (("input1", input1, 1), ("input2", input2, 2)):
        if weight.dim() > dim and x.shape[-1] != weight.shape[dim]:
            raise RuntimeError(f"bilinear(): {name} size does not match weight size: got "
                               f"{x.shape[-1]} but expected {weight.shape[dim]}")
    if bias is not None and bias.shape[-1] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[-1]} but expected {weight.shape[0]}")


def bilinear(input1, input2, weight, bias=None):
    """y_o = x1^T W_o x2 + b_o over the last dims (leading dims are batch dims)."""
    _check_bilinear(input1, input2, weight, bias)
    out = _trilinear(input1.reshape(-1, input1.shape[-1]), weight,
                     input2.reshape(-1, input2.shape[-1]))
    out = out.view(*input1.shape[:-1], weight.shape[0])
    return out + bias if bias is not None else out
