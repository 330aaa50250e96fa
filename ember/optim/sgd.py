"""Stochastic gradient descent, with momentum, dampening, Nesterov momentum and weight decay."""
import numpy as np

from .._tensor import Tensor
from .optimizer import (Optimizer, add_, check_lr, check_flags, flat_grad, grad_add, scaled,
                        params_with_grad, prepared_grad, real, scalar, written, zeros_state)


# mean elements per parameter above which SGD without momentum updates one parameter at a time
_LARGE = 8192


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
        super().__init__(params, defaults)
        check_flags(self)

    _group_fallbacks = dict(nesterov=False, maximize=False, foreach=None,
                            differentiable=False, fused=False)

    def _check_fused_and_init(self, p, group):
        self._check_fused(p)        # SGD's state (a momentum buffer) is made by the update

    # batched: the momentum buffers live in a flat buffer
    _flat_step = False

    def _flat_keys(self, group):
        return ("momentum_buffer",) if group["momentum"] != 0 else ()

    def _flat_for(self, group):
        # without momentum there is no state to batch, only NumPy calls to save: worth it for
        # small parameters, while for large ones gathering the gradients is one more pass
        # over memory than the per-parameter update makes
        if group["momentum"] == 0:
            sizes = [p._data.size for p in group["params"] if p._grad is not None]
            if sizes and sum(sizes) > _LARGE * len(sizes):
                return None
        return super()._flat_for(group)

    def _make_flat(self, group, params):
        """As the base's; on the first step with momentum (no parameter has a buffer yet)
        the buffers are made here, to be set from the gradients by the update."""
        fresh = group["momentum"] != 0 and self._flat_dtype(params) is not None and all(
            self.state[p].get("momentum_buffer") is None for p in params)
        if fresh:
            for p in params:
                self.state[p]["momentum_buffer"] = zeros_state(p)
        flat = super()._make_flat(group, params)
        if flat is not None:
            flat.fresh = fresh
        return flat

    def _update_flat(self, group, flat, ws):
        lr, momentum = scalar(group["lr"]), group["momentum"]
        g = flat_grad(ws, flat, group, group["weight_decay"])
        tmp = ws.get(np, g, "tmp")
        if momentum != 0:
            buf = flat.state["momentum_buffer"]
            if flat.fresh:              # the first step's buffer is the gradient itself
                np.copyto(buf, g)
                flat.fresh = False
            else:
                np.multiply(buf, momentum, out=buf)
                add_(np, buf, g, 1 - group["dampening"], tmp)
            g = grad_add(np, ws, g, buf, momentum) if group["nesterov"] else buf
        flat.apply(scaled(np, g, -lr, tmp))

    def _update_each(self, group, ws):
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
                    g = grad_add(xp, ws, g, real(buf._data), momentum)
                else:
                    g = real(buf._data)
            add_(xp, param, g, -lr, tmp)
            written(p)

    def _update_group_differentiable(self, group):
        """The same update in ember's in-place ops, so that autograd records it."""
        lr, momentum = group["lr"], group["momentum"]
        dampening, nesterov = group["dampening"], group["nesterov"]
        weight_decay = group["weight_decay"]
        for p in group["params"]:
            g = p._grad         # (p may be a non-leaf: ._grad, as PyTorch, does not warn)
            if g is None:
                continue
            state = self.state[p] if momentum != 0 else None
            g = -g if group["maximize"] else g
            if weight_decay != 0:
                g = g.add(p, alpha=weight_decay)
            buf = None
            if momentum != 0:
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = g.detach().clone()     # the first buffer starts a new history
                else:
                    buf.mul_(momentum).add_(g, alpha=1 - dampening)
                g = g.add(buf, alpha=momentum) if nesterov else buf
            if isinstance(lr, Tensor) and lr.requires_grad:
                p.addcmul_(g, lr, value=-1)
            else:
                p.add_(g, alpha=-scalar(lr))
            if buf is not None:
                state["momentum_buffer"] = buf
