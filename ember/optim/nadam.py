"""NAdam: Adam with Nesterov momentum and a momentum-decay schedule."""

from .adam import check_adam_args
from .optimizer import (Optimizer, adam_moments, addcdiv_, check_flags, count_step,
                        decayed_grad, params_with_grad, scalar, step_tensor, written,
                        zeros_state)


class NAdam(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        check_adam_args(lr, eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)
        check_flags(self)

    _capturable_what = "params, mu_products and state_steps"
    _capturable_what_foreach = "params, mu_products, and state_steps"
    _group_fallbacks = dict(maximize=False, foreach=None, capturable=False,
                            differentiable=False, decoupled_weight_decay=False)

    def _init_state(self, p, group):
        state = self.state[p]
        state["step"] = step_tensor()
        # the running product of the momentum coefficients mu_1 ... mu_t
        one = step_tensor()
        one._data[...] = 1
        state["mu_product"] = one
        state["exp_avg"] = zeros_state(p)
        state["exp_avg_sq"] = zeros_state(p)

    def _update_group(self, group, ws):
        lr, (beta1, beta2), eps = scalar(group["lr"]), group["betas"], group["eps"]
        momentum_decay = group["momentum_decay"]
        for p, xp, param, grad in params_with_grad(group):
            state = self._state_for(p, group)
            step = count_step(state["step"])
            bias_correction2 = 1 - beta2 ** step
            g = decayed_grad(xp, ws, param, grad, group, lr)
            tmp, denom = ws.get(xp, param, "tmp"), ws.get(xp, param, "tmp2")

            mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
            mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
            mu_product = state["mu_product"]
            mu_product._data *= mu          # in the step's dtype, as PyTorch rounds it
            written(mu_product)
            mu_product = mu_product._data.item()

            exp_avg, exp_avg_sq = adam_moments(xp, state, g, beta1, beta2, tmp)
            xp.sqrt(xp.divide(exp_avg_sq, bias_correction2, out=denom), out=denom)
            xp.add(denom, eps, out=denom)
            mu_product_next = mu_product * mu_next
            addcdiv_(xp, param, g, denom, -lr * (1.0 - mu) / (1.0 - mu_product), tmp)
            addcdiv_(xp, param, exp_avg, denom, (-lr * mu_next) / (1.0 - mu_product_next),
                     tmp)
            written(p, state["exp_avg"], state["exp_avg_sq"])
