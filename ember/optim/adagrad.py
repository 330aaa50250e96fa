"""Adagrad, with learning-rate decay and an initial accumulator value."""
import numpy as np

from .optimizer import (Optimizer, addcdiv_, addcmul_, check_lr, check_flags, count_step,
                        flat_grad, quotient,
                        params_with_grad, prepared_grad, real, scalar, step_tensor, written,
                        zeros_state)


class Adagrad(Optimizer):
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0,
                 initial_accumulator_value=0, eps=1e-10, foreach=None, *, maximize=False,
                 differentiable=False, fused=None):
        check_lr(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        check_flags(self)
        # unlike the other optimizers, Adagrad's state exists from the start
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, group)

    _group_fallbacks = dict(foreach=None, maximize=False, differentiable=False, fused=None)

    def _check_fused(self, p):
        if p.is_complex():
            raise RuntimeError("`fused` does not support sparse grad or complex param")
        super()._check_fused(p)

    def _init_state(self, p, group):
        state = self.state[p]
        state["step"] = step_tensor(group["fused"])
        init = group["initial_accumulator_value"]
        state["sum"] = zeros_state(p, complex(init, init) if p.is_complex() else init)

    def _flat_keys(self, group):
        return ("sum",)

    def _update_flat(self, group, flat, ws):
        lr, lr_decay, eps = scalar(group["lr"]), group["lr_decay"], group["eps"]
        steps = flat.count_steps()
        g = flat_grad(ws, flat, group, group["weight_decay"])
        tmp, std = ws.get(np, g, "tmp"), ws.get(np, g, "tmp2")
        state_sum = flat.state["sum"]
        addcmul_(np, state_sum, g, g, 1, tmp)
        np.sqrt(state_sum, out=std)
        np.add(std, eps, out=std)
        neg_clr = flat.per_element(steps, lambda s: -(lr / (1 + (s - 1) * lr_decay)))
        flat.apply(quotient(np, g, std, neg_clr, tmp))

    def _update_each(self, group, ws):
        lr, lr_decay, eps = scalar(group["lr"]), group["lr_decay"], group["eps"]
        for p, xp, param, grad in params_with_grad(group):
            state = self._state_for(p, group)       # (new: a group added later)
            step = count_step(state["step"])
            g = prepared_grad(xp, ws, grad, param, group["maximize"],
                              group["weight_decay"])
            tmp, std = ws.get(xp, param, "tmp"), ws.get(xp, param, "tmp2")
            clr = lr / (1 + (step - 1) * lr_decay)
            state_sum = real(state["sum"]._data)
            addcmul_(xp, state_sum, g, g, 1, tmp)
            xp.sqrt(state_sum, out=std)
            xp.add(std, eps, out=std)
            addcdiv_(xp, param, g, std, -clr, tmp)
            written(p, state["sum"])
