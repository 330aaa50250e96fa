"""Muon: momentum SGD for 2-D parameters whose update is orthogonalized by a few Newton-Schulz
iterations.

Each step, in PyTorch's order: the momentum buffer moves towards the gradient,
B <- lerp(B, g, 1 - momentum); the update is lerp(g, B, momentum) (Nesterov) or B; it is
normalized by its Frobenius norm (plus eps) and iterated ns_steps times,
A = X X^T, B = b A + c A A, X = a X + B X (on the wide orientation of the matrix); the
parameter decays by lr * weight_decay and takes the update at lr adjusted to the matrix's
shape. As in PyTorch, the iteration runs in bfloat16: every product is formed in float32 and
rounded to bfloat16 once, as PyTorch's bfloat16 addmm/mm kernels round (see _orthogonalize
for where the two can still differ).
"""
import math

import ml_dtypes
import numpy as np

from .._tensor import Tensor
from .optimizer import (Optimizer, add_, lerp_, params_with_grad, scalar, written,
                        zeros_state)

_ADJUST_LR_FNS = ("original", "match_rms_adamw")


def _bf16(a):
    """a (float32 or float64) rounded to bfloat16 values, kept as float32."""
    return a.astype(ml_dtypes.bfloat16).astype(np.float32)


def _orthogonalize(update, coefficients, eps, ns_steps):
    """The Newton-Schulz iterate of `update` (a 2-D float array), as bfloat16 values in a
    float32 array."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = coefficients
    x = _bf16(update)
    # the norm, then norm + eps, then the quotient: each a bfloat16 result
    norm = _bf16(np.sqrt(np.sum(np.square(x, dtype=np.float64))))
    x = _bf16(x / _bf16(norm + np.float64(eps)).astype(np.float64))
    tall = update.shape[0] > update.shape[1]
    if tall:
        x = x.T
    # PyTorch sums the products in float32 (in its kernels' order) and rounds to bfloat16;
    # the sums here are float64 (near exact, whatever the BLAS's order), so the two round
    # to different bfloat16 values only where the float32 sum's own error crosses a rounding
    # boundary (rare, but more likely the larger the matrix)
    x = x.astype(np.float64)
    a, b, c = (np.float64(np.float32(v)) for v in (a, b, c))
    for _ in range(ns_steps):
        gram = _bf16(x @ x.T).astype(np.float64)
        poly = _bf16(b * gram + c * (gram @ gram)).astype(np.float64)
        x = _bf16(a * x + poly @ x).astype(np.float64)
    return (x.T if tall else x).astype(np.float32)


def _adjusted_lr(lr, shape, adjust_lr_fn):
    rows, cols = shape
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, rows / cols))
    return 0.2 * math.sqrt(max(rows, cols)) * lr


class Muon(Optimizer):
    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(3.4445, -4.775, 2.0315), eps=1e-7, ns_steps=5,
                 adjust_lr_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in _ADJUST_LR_FNS:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum,
                        nesterov=nesterov, ns_coefficients=ns_coefficients, eps=eps,
                        ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.dim() != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def _init_state(self, p, group):
        self.state[p]["momentum_buffer"] = zeros_state(p)

    def _update_group(self, group, ws):
        # as in PyTorch: every parameter is checked and given its state before any update
        for p in group["params"]:
            if p._grad is not None:
                if p.is_complex():
                    raise RuntimeError("Muon does not support complex parameters")
                self._state_for(p, group)
        lr, momentum = scalar(group["lr"]), group["momentum"]
        for p, xp, param, grad in params_with_grad(group):
            if grad.ndim != 2:
                raise ValueError("Param gradient must be a 2D matrix")
            tmp = ws.get(xp, param, "tmp")
            buf = self.state[p]["momentum_buffer"]
            lerp_(xp, buf._data, grad, 1 - momentum, tmp)
            written(buf)
            update = buf._data
            if group["nesterov"]:
                update = ws.get(xp, param, "grad")
                xp.copyto(update, grad)
                lerp_(xp, update, buf._data, momentum, tmp)
            ortho = _orthogonalize(xp.asnumpy(update) if xp is not np else update,
                                   group["ns_coefficients"], group["eps"], group["ns_steps"])
            xp.multiply(param, 1 - lr * group["weight_decay"], out=param)
            step = _adjusted_lr(lr, param.shape, group["adjust_lr_fn"])
            add_(xp, param, xp.asarray(ortho, dtype=param.dtype), -step, tmp)
            written(p)
