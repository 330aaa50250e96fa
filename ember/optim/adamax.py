"""Adamax: Adam with the infinity norm in place of the second moment."""
from .adam import check_adam_args
from .optimizer import (Optimizer, addcdiv_, check_flags, count_step, lerp_,
                        params_with_grad, prepared_grad, real, scalar, step_tensor, written,
                        zeros_state)


class Adamax(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        check_adam_args(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)
        check_flags(self)

    _group_fallbacks = dict(foreach=None, maximize=False, differentiable=False,
                            capturable=False)

    def _init_state(self, p, group):
        state = self.state[p]
        state["step"] = step_tensor()
        state["exp_avg"] = zeros_state(p)
        state["exp_inf"] = zeros_state(p)

    def _update_group(self, group, ws):
        lr, (beta1, beta2), eps = scalar(group["lr"]), group["betas"], group["eps"]
        for p, xp, param, grad in params_with_grad(group):
            state = self._state_for(p, group)
            step = count_step(state["step"])
            g = prepared_grad(xp, ws, grad, param, group["maximize"],
                              group["weight_decay"])
            tmp, norm = ws.get(xp, param, "tmp"), ws.get(xp, param, "tmp2")
            exp_avg, exp_inf = real(state["exp_avg"]._data), real(state["exp_inf"]._data)
            lerp_(xp, exp_avg, g, 1 - beta1, tmp)
            xp.multiply(exp_inf, beta2, out=exp_inf)
            xp.add(xp.abs(g, out=norm), eps, out=norm)
            xp.maximum(exp_inf, norm, out=exp_inf)
            clr = lr / (1 - beta1 ** step)
            addcdiv_(xp, param, exp_avg, exp_inf, -clr, tmp)
            written(p, state["exp_avg"], state["exp_inf"])
