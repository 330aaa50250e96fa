"""softmax and log_softmax."""
import builtins

import numpy as np

from .. import _fast_kernels
from .._tensor import Tensor
from ._utils import wrap_dim
from .reduction import _acc_np, _tname, _parsed
from .registry import backward_records_nothing, primitive


def _shifted(xp, x, dim):
    # x - max along dim, a new array (a no-op shift for empty inputs and all -inf rows; a +inf
    # max shifts by +inf, which makes the row NaN, as torch's softmax of it is)
    if x.size == 0:
        return x.copy()
    m = xp.max(x, axis=dim, keepdims=True)
    shift = m != -np.inf
    return xp.asarray(x - (m if shift.all() else xp.where(shift, m, 0)))   # (0-d: array)


def _rows(xp, a, dim):
    """a as C-contiguous rows along its last dim when `dim` is that dim (float32/64, not
    empty), else None: the fast paths below work on such rows (with any array module, so
    that every device computes the same values)."""
    if a.ndim and dim == a.ndim - 1 and a.size and a.flags.c_contiguous and \
            a.dtype in (np.float32, np.float64):
        return a.reshape(-1, a.shape[-1])
    return None


def _row_max(xp, rows):
    """Each row's maximum, as a column (NaN where the row has one). NumPy's max along a short
    last axis is ~2x slower than argmax there; the maximum itself is exact either way."""
    return xp.take_along_axis(rows, rows.argmax(axis=1)[:, None], axis=1)


def _shifted_rows(xp, rows):
    # rows - each row's max, a new array; an all -inf row is shifted by 0 (see _shifted)
    m = _row_max(xp, rows)
    shift = m != -np.inf
    return rows - (m if shift.all() else xp.where(shift, m, 0))


def _row_sums(xp, rows):
    # each row's sum as a column: einsum's one pass is ~3x faster than add.reduce on short rows
    return xp.einsum("ij->i", rows)[:, None]


def _rows_backward_on_arrays(grad, output, dim, log):
    """softmax's (or log_softmax's) backward straight on NumPy arrays where the row kernel
    applies (see _softmax_backward), else None."""
    g, y = grad._data, output._data
    if g.__class__ is not np.ndarray or y.__class__ is not np.ndarray or \
            grad._dtype is not output._dtype or g.shape != y.shape:
        return None
    g_rows, y_rows = _rows(np, g, dim), _rows(np, y, dim)
    if g_rows is None or y_rows is None:
        return None
    out = _fast_kernels.softmax_backward_rows(g_rows, y_rows, log=log).reshape(g.shape)
    return Tensor._make(out, grad._dtype, grad._device)


@primitive("softmax", node="SoftmaxBackward0", save=("result",))
def _softmax(xp, self, *, dim):
    rows = _rows(xp, self, dim)
    if rows is not None and xp is np:
        return _fast_kernels.softmax_rows(rows).reshape(self.shape)
    if rows is not None:
        e = _shifted_rows(xp, rows)
        xp.exp(e, out=e)
        e /= _row_sums(xp, e)
        return e.reshape(self.shape)
    # in place on the one new array: each pass as few times as the formula needs
    e = _shifted(xp, self.astype(_acc_np(self.dtype), copy=False), dim)
    # (in place for floats; an empty bool or integer input's exp makes its own float array)
    e = xp.exp(e, out=e) if e.dtype.kind in "fcV" else xp.exp(e)      # (V: bfloat16)
    e /= xp.sum(e, axis=dim, keepdims=True)
    return e.astype(self.dtype, copy=False)


@_softmax.derivative
def _(ctx, grad):
    if backward_records_nothing():
        direct = _rows_backward_on_arrays(grad, ctx.result, ctx.dim, log=False)
        if direct is not None:
            return direct
    return _softmax_backward(grad, ctx.result, dim=ctx.dim)


@primitive("softmax_backward", node="SoftmaxBackwardDataBackward0",
           save=("grad_output", "output"))
def _softmax_backward(xp, grad_output, output, *, dim):
    """softmax's backward in one pass: y * (g - sum(g * y))."""
    g_rows, y_rows = _rows(xp, grad_output, dim), _rows(xp, output, dim)
    if g_rows is not None and y_rows is not None and g_rows.dtype == y_rows.dtype:
        if xp is np:
            return _fast_kernels.softmax_backward_rows(g_rows, y_rows).reshape(
                grad_output.shape)
        out = g_rows - xp.einsum("ij,ij->i", g_rows, y_rows)[:, None]
        out *= y_rows
        return out.reshape(grad_output.shape)
    gy = grad_output * output
    gy -= output * xp.sum(gy, axis=dim, keepdims=True)
    return gy.astype(grad_output.dtype, copy=False)


@_softmax_backward.derivative
def _(ctx, gg):
    # out = y * (g - sum(g * y)): d/dg = y * (gg - sum(gg * y));
    # d/dy = gg * (g - sum(g * y)) - g * sum(gg * y)
    y, g = ctx.output, ctx.grad_output
    gg_y = (gg * y).sum(ctx.dim, keepdim=True)
    g_grad = y * (gg - gg_y)
    g_out = gg * (g - (g * y).sum(ctx.dim, keepdim=True)) - g * gg_y
    return g_grad, g_out


@primitive("log_softmax", node="LogSoftmaxBackward0", save=("result",))
def _log_softmax(xp, self, *, dim):
    rows = _rows(xp, self, dim)
    if rows is not None and xp is np:
        return _fast_kernels.softmax_rows(rows, log=True).reshape(self.shape)
    if rows is not None:
        shifted = _shifted_rows(xp, rows)
        shifted -= xp.log(_row_sums(xp, xp.exp(shifted)))
        return shifted.reshape(self.shape)
    shifted = _shifted(xp, self.astype(_acc_np(self.dtype), copy=False), dim)
    shifted -= xp.log(xp.sum(xp.exp(shifted), axis=dim, keepdims=True))
    return shifted.astype(self.dtype, copy=False)


@_log_softmax.derivative
def _(ctx, grad):
    if backward_records_nothing():
        direct = _rows_backward_on_arrays(grad, ctx.result, ctx.dim, log=True)
        if direct is not None:
            return direct
    return _log_softmax_backward(grad, ctx.result, dim=ctx.dim)


@primitive("log_softmax_backward", node="LogSoftmaxBackwardDataBackward0",
           save=("grad_output", "output"))
def _log_softmax_backward(xp, grad_output, output, *, dim):
    """log_softmax's backward in one pass: g - exp(y) * sum(g)."""
    g_rows, y_rows = _rows(xp, grad_output, dim), _rows(xp, output, dim)
    if g_rows is not None and y_rows is not None and g_rows.dtype == y_rows.dtype:
        if xp is np:
            return _fast_kernels.softmax_backward_rows(g_rows, y_rows, log=True).reshape(
                grad_output.shape)
        out = xp.exp(y_rows)
        out *= _row_sums(xp, g_rows)
        xp.subtract(g_rows, out, out=out)
        return out.reshape(grad_output.shape)
    total = xp.sum(grad_output, axis=dim, keepdims=True)
    out = xp.asarray(xp.exp(output))          # (a 0-d exp is a scalar)
    out *= total
    xp.subtract(grad_output, out, out=out)
    return out.astype(grad_output.dtype, copy=False)


@_log_softmax_backward.derivative
def _(ctx, gg):
    # out = g - e * S with e = exp(y), S = sum(g): d/dg = gg - sum(gg * e); d/dy = -gg * e * S
    e = ctx.output.exp()
    g_grad = gg - (gg * e).sum(ctx.dim, keepdim=True)
    g_out = -gg * e * ctx.grad_output.sum(ctx.dim, keepdim=True)
    return g_grad, g_out


def _softmax_input(input, dim, dtype, name="softmax"):
    # (torch.softmax needs a dim: nn.functional's implicit one is chosen there)
    if dtype is not None:
        input = input.to(dtype)
    ndim = input._data.ndim
    dim = wrap_dim(dim, ndim)
    if (input._dtype._category < 2 or input._dtype.is_complex) and input._data.size:
        # (no kernel runs on an empty input)
        kernel = "lastdim_kernel_impl" if dim == builtins.max(ndim - 1, 0) else "kernel_impl"
        raise NotImplementedError(f'"{name}_{kernel}" not implemented for '
                                  f"'{_tname(input._dtype)}'")
    return input, dim


_SOFTMAX = "Tensor input, int dim, ScalarType? dtype=None, *, Tensor? out=None"


@_parsed("softmax", _SOFTMAX, out_rule="mm")
def softmax(which, input, dim, dtype=None):
    input, dim = _softmax_input(input, dim, dtype)
    return _softmax(input, dim=dim)


@_parsed("log_softmax", _SOFTMAX, out_rule="mm")
def log_softmax(which, input, dim, dtype=None):
    input, dim = _softmax_input(input, dim, dtype, "log_softmax")
    return _log_softmax(input, dim=dim)
