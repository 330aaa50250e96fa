"""RAdam: Adam with the variance of the adaptive learning rate rectified."""
from .adam import check_adam_args
from .optimizer import (Optimizer, adam_moments, check_flags, count_step, decayed_grad,
                        params_with_grad, scalar, step_tensor, written, zeros_state)


class RAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        check_adam_args(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)
        check_flags(self)

    _group_fallbacks = dict(foreach=None, maximize=False, differentiable=False,
                            decoupled_weight_decay=False, capturable=False)

    def _init_state(self, p, group):
        state = self.state[p]
        state["step"] = step_tensor()
        state["exp_avg"] = zeros_state(p)
        state["exp_avg_sq"] = zeros_state(p)

    def _update_group(self, group, ws):
        lr, (beta1, beta2), eps = scalar(group["lr"]), group["betas"], group["eps"]
        for p, xp, param, grad in params_with_grad(group):
            state = self._state_for(p, group)
            step = count_step(state["step"])
            g = decayed_grad(xp, ws, param, grad, group, lr)
            tmp, update = ws.get(xp, param, "tmp"), ws.get(xp, param, "tmp2")
            exp_avg, exp_avg_sq = adam_moments(xp, state, g, beta1, beta2, tmp)
            written(state["exp_avg"], state["exp_avg_sq"])

            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            # the length of the approximated simple moving average, and its limit
            rho_inf = 2 / (1 - beta2) - 1
            rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
            # update = exp_avg / bias_correction1 * lr [* adaptive lr * rectification]
            xp.divide(exp_avg, bias_correction1, out=update)
            xp.multiply(update, lr, out=update)
            if rho_t > 5.0:
                rect = ((rho_t - 4) * (rho_t - 2) * rho_inf /
                        ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                # adaptive lr = sqrt(bias_correction2) / (sqrt(exp_avg_sq) + eps),
                # computed as reciprocal() * scalar, as PyTorch's scalar / tensor is
                adaptive = xp.add(xp.sqrt(exp_avg_sq, out=tmp), eps, out=tmp)
                xp.reciprocal(adaptive, out=adaptive)
                xp.multiply(adaptive, bias_correction2 ** 0.5, out=adaptive)
                xp.multiply(update, adaptive, out=update)
                xp.multiply(update, rect, out=update)
            xp.subtract(param, update, out=param)
            written(p)
