"""RMSprop, optionally centered and with momentum."""
import numpy as np

from .optimizer import (Optimizer, add_, addcdiv_, addcmul_, check_lr, check_flags,
                        count_step, flat_grad, lerp_, params_with_grad, prepared_grad, quotient,
                        real, scalar, scaled, step_tensor, written, zeros_state)


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)
        check_flags(self)

    _capturable_devices_foreach = Optimizer._capturable_devices
    _group_fallbacks = dict(momentum=0, centered=False, foreach=None, maximize=False,
                            differentiable=False, capturable=False)

    def _init_state(self, p, group):
        state = self.state[p]
        state["step"] = step_tensor()
        state["square_avg"] = zeros_state(p)
        if group["momentum"] > 0:
            state["momentum_buffer"] = zeros_state(p)
        if group["centered"]:
            state["grad_avg"] = zeros_state(p)

    def _flat_keys(self, group):
        return ("square_avg",) + (("momentum_buffer",) if group["momentum"] > 0 else ()) + \
            (("grad_avg",) if group["centered"] else ())

    def _update_flat(self, group, flat, ws):
        lr, alpha, eps = scalar(group["lr"]), group["alpha"], group["eps"]
        flat.count_steps()
        g = flat_grad(ws, flat, group, group["weight_decay"])
        tmp, avg = ws.get(np, g, "tmp"), ws.get(np, g, "tmp2")
        square_avg = flat.state["square_avg"]
        np.multiply(square_avg, alpha, out=square_avg)
        addcmul_(np, square_avg, g, g, 1 - alpha, tmp)
        if group["centered"]:
            grad_avg = flat.state["grad_avg"]
            lerp_(np, grad_avg, g, 1 - alpha, tmp)
            np.copyto(avg, square_avg)
            addcmul_(np, avg, grad_avg, grad_avg, -1, tmp)
            np.sqrt(avg, out=avg)
        else:
            np.sqrt(square_avg, out=avg)
        np.add(avg, eps, out=avg)
        if group["momentum"] > 0:
            buf = flat.state["momentum_buffer"]
            np.multiply(buf, group["momentum"], out=buf)
            addcdiv_(np, buf, g, avg, 1, tmp)
            flat.apply(scaled(np, buf, -lr, tmp))
        else:
            flat.apply(quotient(np, g, avg, -lr, tmp))

    def _update_each(self, group, ws):
        lr, alpha, eps = scalar(group["lr"]), group["alpha"], group["eps"]
        momentum, centered = group["momentum"], group["centered"]
        for p, xp, param, grad in params_with_grad(group):
            state = self._state_for(p, group)
            count_step(state["step"])
            g = prepared_grad(xp, ws, grad, param, group["maximize"],
                              group["weight_decay"])
            tmp, avg = ws.get(xp, param, "tmp"), ws.get(xp, param, "tmp2")
            square_avg = real(state["square_avg"]._data)
            xp.multiply(square_avg, alpha, out=square_avg)
            addcmul_(xp, square_avg, g, g, 1 - alpha, tmp)
            written(state["square_avg"])
            if centered:
                grad_avg = real(state["grad_avg"]._data)
                lerp_(xp, grad_avg, g, 1 - alpha, tmp)
                written(state["grad_avg"])
                # avg = sqrt(square_avg - grad_avg * grad_avg)
                xp.copyto(avg, square_avg)
                addcmul_(xp, avg, grad_avg, grad_avg, -1, tmp)
                xp.sqrt(avg, out=avg)
            else:
                xp.sqrt(square_avg, out=avg)
            xp.add(avg, eps, out=avg)
            if momentum > 0:
                buf = real(state["momentum_buffer"]._data)
                xp.multiply(buf, momentum, out=buf)
                addcdiv_(xp, buf, g, avg, 1, tmp)
                written(state["momentum_buffer"])
                add_(xp, param, buf, -lr, tmp)
            else:
                addcdiv_(xp, param, g, avg, -lr, tmp)
            written(p)
