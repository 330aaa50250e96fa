"""Rprop (resilient backpropagation): per-element step sizes grown or shrunk by the sign of
successive gradients; only the gradient's sign moves the parameter."""
from .optimizer import (Optimizer, addcmul_, check_lr, check_flags, count_step,
                        params_with_grad, real, step_tensor, written, zeros_state)


class Rprop(Optimizer):
    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                        maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)
        check_flags(self)

    _capturable_devices_foreach = Optimizer._capturable_devices
    _group_fallbacks = dict(foreach=None, maximize=False, differentiable=False,
                            capturable=False)

    def _init_state(self, p, group):
        state = self.state[p]
        state["step"] = step_tensor()
        state["prev"] = zeros_state(p)
        # a complex parameter is two real ones: both parts start with the step size lr
        lr = float(group["lr"])
        state["step_size"] = zeros_state(p, complex(lr, lr) if p.is_complex() else lr)

    def _update_group(self, group, ws):
        etaminus, etaplus = group["etas"]
        step_min, step_max = group["step_sizes"]
        for p, xp, param, grad in params_with_grad(group):
            state = self._state_for(p, group)
            count_step(state["step"])
            prev, step_size = real(state["prev"]._data), real(state["step_size"]._data)
            g = xp.negative(grad, out=ws.get(xp, grad, "grad")) if group["maximize"] else grad
            # the factor of each step size: etaplus where the gradient kept its sign,
            # etaminus where it flipped, 1 where either is zero (NaN stays NaN)
            factor = xp.multiply(g, prev, out=ws.get(xp, param, "tmp"))
            xp.sign(factor, out=factor)     # (in place: a 0-dim array stays an array)
            factor[factor > 0] = etaplus
            factor[factor < 0] = etaminus
            factor[factor == 0] = 1
            xp.multiply(step_size, factor, out=step_size)
            xp.clip(step_size, step_min, step_max, out=step_size)
            # after a sign flip the gradient counts as zero: no move now, no flip next time
            xp.copyto(prev, g)
            prev[factor == etaminus] = 0
            addcmul_(xp, param, xp.sign(prev, out=ws.get(xp, param, "tmp2")), step_size, -1,
                     ws.get(xp, param, "tmp3"))
            written(p, state["prev"], state["step_size"])
