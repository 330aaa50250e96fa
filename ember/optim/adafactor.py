"""Adafactor: Adam-like scaling with a factored second moment (a row and a column average of
the squared gradient for every matrix in the parameter's last two dims), relative step sizes
and update clipping.

The step, in PyTorch's order: alpha = max(eps2, RMS(param)) * min(lr, 1/sqrt(t)) is taken
from the parameter before its (decoupled, lr-scaled) weight decay; the row and column factors
move towards the mean square of the gradient along each dim (a lerp with weight t**beta2_decay,
so the first step takes them whole); the update g / sqrt(V) (V clamped to eps1**2) is scaled
down to an RMS of at most d and added with weight -alpha. RMS(x) is the 2-norm (rounded to
the dtype, as PyTorch's float32 reduction is) over sqrt(numel), in Python floats. foreach=True
runs the same update: PyTorch's foreach path rounds a few operations differently.
"""
from .. import _dtype as D
from .._tensor import Tensor
from ..ops.registry import xp_of
from .optimizer import (Optimizer, add_, count_step, lerp_, params_with_grad, scalar,
                        step_tensor, written)


def _norm(xp, a, axis=None):
    """The 2-norm of a float array (over `axis`, kept), accumulated in float64 and rounded to
    the array's dtype as PyTorch's norm returns it."""
    wide = a.astype(xp.float64)
    return xp.sqrt(xp.sum(wide * wide, axis=axis, keepdims=axis is not None)).astype(a.dtype)


def _rms(xp, a):
    """RMS(a) = ||a|| / sqrt(numel), the norm rounded to a's dtype, the division in Python."""
    return float(_norm(xp, a)) / a.size ** 0.5


def _factored(p):
    return p.dim() > 1


class Adafactor(Optimizer):
    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d,
                        weight_decay=weight_decay, foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    _group_fallbacks = dict(foreach=None, maximize=False)

    def _init_state(self, p, group):
        # a matrix (in the last two dims) keeps a row and a column factor; a vector or a
        # scalar the full second moment
        state = self.state[p]
        state["step"] = step_tensor()
        shape, dtype, device = tuple(p.shape), p._dtype, p._device
        xp = xp_of(device)
        if _factored(p):
            row, col = shape[:-1] + (1,), shape[:-2] + (1, shape[-1])
            state["row_var"] = Tensor._make(xp.zeros(row, dtype.np), dtype, device)
            state["col_var"] = Tensor._make(xp.zeros(col, dtype.np), dtype, device)
        else:
            state["variance"] = Tensor._make(xp.zeros_like(p._data), dtype, device)

    def _update_group(self, group, ws):
        # as in PyTorch: every parameter is checked and given its state before any update
        params = [p for p in group["params"] if p._grad is not None]
        for p in params:
            if p.is_complex():
                raise RuntimeError("Adafactor does not support complex parameters")
            self._state_for(p, group)
        lr, weight_decay, d = scalar(group["lr"]), group["weight_decay"], group["d"]
        eps1, eps2 = group["eps"]
        for p, xp, param, grad in params_with_grad(group):
            state = self.state[p]
            t = count_step(state["step"])
            e1 = D.finfo(p.dtype).eps if eps1 is None else eps1
            g = xp.negative(grad, out=ws.get(xp, grad, "grad")) if group["maximize"] else grad
            tmp, var = ws.get(xp, param, "tmp"), ws.get(xp, param, "tmp2")
            weight = 1 - (1 - t ** group["beta2_decay"])        # 1 - beta2_t
            alpha = max(eps2, _rms(xp, param)) * min(lr, 1 / t ** 0.5)
            if weight_decay != 0:
                xp.multiply(param, 1 - lr * weight_decay, out=param)
            if _factored(p):
                rows, cols = state["row_var"], state["col_var"]
                row, col = rows._data, cols._data
                # the mean square along each dim, as PyTorch forms it: ||g||^2 / n
                row_mean = xp.square(_norm(xp, g, -1)) / g.dtype.type(g.shape[-1])
                col_mean = xp.square(_norm(xp, g, -2)) / g.dtype.type(g.shape[-2])
                lerp_(xp, row, row_mean, weight, xp.empty_like(row))
                lerp_(xp, col, col_mean, weight, xp.empty_like(col))
                written(rows, cols)
                # V = row * col / max(mean of row over the rows, eps1)
                row_avg = xp.mean(row, axis=-2, keepdims=True, dtype=xp.float64)
                xp.multiply(row, col, out=var)
                xp.divide(var, xp.maximum(row_avg.astype(row.dtype), e1), out=var)
            else:
                variance = state["variance"]
                lerp_(xp, variance._data, xp.multiply(g, g, out=tmp), weight, var)
                written(variance)
                xp.copyto(var, variance._data)
            # u = g * rsqrt(max(V, eps1^2)), rsqrt as PyTorch's: 1 / sqrt, each rounded
            xp.maximum(var, e1 * e1, out=var)
            xp.sqrt(var, out=var)
            xp.divide(1, var, out=var)
            update = xp.multiply(g, var, out=var)
            denom = max(1.0, _rms(xp, update) / d)
            add_(xp, param, update, -alpha / denom, tmp)
            written(p)

