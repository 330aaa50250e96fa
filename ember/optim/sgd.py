"""Stochastic gradient descent, with momentum, dampening, Nesterov momentum and weight decay."""
from .._tensor import Tensor
from .optimizer import (Optimizer, add_, check_lr, check_supported, params_with_grad,
                        prepared_grad, real, scalar, written)


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        check_supported(defaults)
        super().__init__(params, defaults)

    def _update_group(self, group, ws):
        lr, momentum = scalar(group["lr"]), group["momentum"]
        dampening, nesterov = group["dampening"], group["nesterov"]
        for p, xp, param, grad in params_with_grad(group):
            g = prepared_grad(xp, ws, grad, param, group["maximize"], group["weight_decay"])
            tmp = ws.get(xp, param, "tmp")
            if momentum != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    # the first step's buffer is the gradient itself
                    buf = state["momentum_buffer"] = Tensor._make(
                        g.copy().view(p._data.dtype).reshape(p._data.shape),
                        p._dtype, p._device)
                else:
                    b = real(buf._data)
                    xp.multiply(b, momentum, out=b)
                    add_(xp, b, g, 1 - dampening, tmp)
                    written(buf)
                if nesterov:
                    g = xp.add(g, xp.multiply(real(buf._data), momentum, out=tmp),
                               out=ws.get(xp, g, "grad"))
                else:
                    g = real(buf._data)
            add_(xp, param, g, -lr, tmp)
            written(p)
