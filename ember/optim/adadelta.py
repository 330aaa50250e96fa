"""Adadelta.

Its two addcmul's round twice (fma=False) where PyTorch's kernel rounds once: emulating the
fused multiply-add through float64 made the whole update ~1.6x slower (2 of its ~14 passes
over the parameters become float64 ones), about 10 ms of the MNIST example's step, and
Adadelta's results match torch's to rounding only anyway (its square roots differ in the
last bit: see tests/test_optim_bitexact.py).
"""
import numpy as np

from .._parallel import for_blocks
from .optimizer import (Optimizer, add_, addcmul_, check_lr, check_flags, count_step, flat_grad,
                        params_with_grad, prepared_grad, real, scalar, step_tensor,
                        written, zeros_state)


_BLOCK = 1 << 15        # elements: 128 KB of float32 per array, six arrays in a 1 MB cache


def _update_state(xp, g, square_avg, acc_delta, tmp, std, delta, rho, eps):
    """Adadelta's state update (of a block, or of one parameter); the change (before -lr)
    left in `delta`."""
    xp.multiply(square_avg, rho, out=square_avg)
    addcmul_(xp, square_avg, g, g, 1 - rho, tmp, fma=False)
    xp.sqrt(xp.add(square_avg, eps, out=std), out=std)
    xp.sqrt(xp.add(acc_delta, eps, out=delta), out=delta)
    xp.divide(delta, std, out=delta)
    xp.multiply(delta, g, out=delta)
    xp.multiply(acc_delta, rho, out=acc_delta)
    addcmul_(xp, acc_delta, delta, delta, 1 - rho, tmp, fma=False)


class Adadelta(Optimizer):
    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)
        check_flags(self)

    _capturable_devices = ("cuda", "xpu", "hpu", "privateuseone")
    _group_fallbacks = dict(foreach=None, maximize=False, differentiable=False,
                            capturable=False)

    def _init_state(self, p, group):
        state = self.state[p]
        state["step"] = step_tensor()
        state["square_avg"] = zeros_state(p)
        state["acc_delta"] = zeros_state(p)

    def _flat_keys(self, group):
        return ("square_avg", "acc_delta")

    def _update_flat(self, group, flat, ws):
        lr, rho, eps = scalar(group["lr"]), group["rho"], group["eps"]
        flat.count_steps()
        g = flat_grad(ws, flat, group, group["weight_decay"])
        tmp, std, delta = ws.get(np, g, "tmp"), ws.get(np, g, "tmp2"), ws.get(np, g, "tmp3")
        square_avg, acc_delta = flat.state["square_avg"], flat.state["acc_delta"]
        # block by block, so that the update's dozen passes run over data in the CPU's cache
        # (the same operations, element by element, as over the whole arrays at once; each
        # block writes only its own slices)
        change = None if lr == -1 else tmp

        def block(s, e):
            _update_state(np, g[s:e], square_avg[s:e], acc_delta[s:e], tmp[s:e], std[s:e],
                          delta[s:e], rho, eps)
            if change is not None:
                np.multiply(delta[s:e], -lr, out=tmp[s:e])      # the change, -lr * delta
        for_blocks(block, g.size, _BLOCK)
        flat.apply(delta if change is None else change)

    def _update_each(self, group, ws):
        lr, rho, eps = scalar(group["lr"]), group["rho"], group["eps"]
        for p, xp, param, grad in params_with_grad(group):
            state = self._state_for(p, group)
            count_step(state["step"])
            g = prepared_grad(xp, ws, grad, param, group["maximize"],
                              group["weight_decay"])
            tmp, std = ws.get(xp, param, "tmp"), ws.get(xp, param, "tmp2")
            delta = ws.get(xp, param, "tmp3")
            square_avg = real(state["square_avg"]._data)
            acc_delta = real(state["acc_delta"]._data)
            _update_state(xp, g, square_avg, acc_delta, tmp, std, delta, rho, eps)
            add_(xp, param, delta, -lr, tmp)
            written(p, state["square_avg"], state["acc_delta"])
