"""Adam (and, with decoupled_weight_decay=True, AdamW), with AMSGrad."""
import numpy as np

from .._parallel import for_blocks, scratch
from .._tensor import Tensor
from ..ops.arithmetic import maximum
from .optimizer import (Optimizer, adam_moments, addcdiv_, addcmul_, check_lr, check_flags,
                        count_step, decayed_grad, flat_grad, lerp_, params_with_grad, quotient,
                        real, scalar, step_tensor, written, zeros_state)


def _part(operand, s, e):
    """A per-element operand's block (a number stays a number)."""
    return operand[s:e] if isinstance(operand, np.ndarray) else operand


def check_adam_args(lr, eps, betas, weight_decay):
    """The argument checks (and their order) shared by Adam, AdamW, Adamax, NAdam and RAdam."""
    check_lr(lr)
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        if isinstance(lr, Tensor) and foreach and not capturable:
            raise ValueError("lr as a Tensor is not supported for capturable=False and "
                             "foreach=True")
        check_adam_args(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)
        check_flags(self)

    _group_fallbacks = dict(amsgrad=False, maximize=False, foreach=None, capturable=False,
                            differentiable=False, decoupled_weight_decay=False, fused=None)

    def _init_state(self, p, group):
        state = self.state[p]
        state["step"] = step_tensor(group["fused"])
        state["exp_avg"] = zeros_state(p)
        state["exp_avg_sq"] = zeros_state(p)
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = zeros_state(p)

    def _flat_keys(self, group):
        return ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if group["amsgrad"] else ())

    def _update_flat(self, group, flat, ws):
        lr, (beta1, beta2), eps = scalar(group["lr"]), group["betas"], group["eps"]
        steps = flat.count_steps()
        weight_decay, decoupled = group["weight_decay"], group["decoupled_weight_decay"]
        g = flat_grad(ws, flat, group, 0 if decoupled else weight_decay)
        change = ws.get(np, g, "tmp")
        exp_avg, exp_avg_sq = flat.state["exp_avg"], flat.state["exp_avg_sq"]
        max_sq = flat.state["max_exp_avg_sq"] if group["amsgrad"] else None
        neg_step_size = flat.per_element(steps, lambda s: -(lr / (1 - beta1 ** s)))
        bias_correction2_sqrt = flat.per_element(steps, lambda s: (1 - beta2 ** s) ** 0.5)

        def block(s, e):
            # every pass over one cache-sized block (the same element-wise arithmetic as
            # over the whole buffers, so the same bits on any number of threads)
            tmp, tmp2 = (a[:e - s] for a in scratch(2, g.dtype))
            m, v, gb = exp_avg[s:e], exp_avg_sq[s:e], g[s:e]
            lerp_(np, m, gb, 1 - beta1, tmp)
            np.multiply(v, beta2, out=v)
            addcmul_(np, v, gb, gb, 1 - beta2, tmp)
            second = v
            if max_sq is not None:
                second = max_sq[s:e]
                np.maximum(second, v, out=second)
            denom = np.sqrt(second, out=tmp2)
            np.divide(denom, _part(bias_correction2_sqrt, s, e), out=denom)
            np.add(denom, eps, out=denom)
            quotient(np, m, denom, _part(neg_step_size, s, e), change[s:e])
        for_blocks(block, g.size)
        # (decoupled weight decay shrinks each parameter just before the change is added: the
        # per-parameter update's order, as its value is not read in between)
        flat.apply(change, 1 - lr * weight_decay if decoupled and weight_decay != 0 else None)

    def _update_each(self, group, ws):
        lr, (beta1, beta2) = scalar(group["lr"]), group["betas"]
        eps, amsgrad = group["eps"], group["amsgrad"]
        for p, xp, param, grad in params_with_grad(group):
            state = self._state_for(p, group)
            step = count_step(state["step"])
            g = decayed_grad(xp, ws, param, grad, group, lr)
            tmp, tmp2 = ws.get(xp, param, "tmp"), ws.get(xp, param, "tmp2")
            exp_avg, exp_avg_sq = adam_moments(xp, state, g, beta1, beta2, tmp)

            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            step_size = lr / bias_correction1
            bias_correction2_sqrt = bias_correction2 ** 0.5
            second = exp_avg_sq
            if amsgrad:
                second = real(state["max_exp_avg_sq"]._data)
                xp.maximum(second, exp_avg_sq, out=second)
                written(state["max_exp_avg_sq"])
            denom = xp.sqrt(second, out=tmp2)
            xp.divide(denom, bias_correction2_sqrt, out=denom)
            xp.add(denom, eps, out=denom)
            addcdiv_(xp, param, exp_avg, denom, -step_size, tmp)
            written(p, state["exp_avg"], state["exp_avg_sq"])

    def _update_group_differentiable(self, group):
        """The same update in ember's ops, recorded by autograd. As in PyTorch, the bias
        corrections are then tensors computed from the step tensor (in its dtype)."""
        lr, (beta1, beta2) = group["lr"], group["betas"]
        eps, weight_decay = group["eps"], group["weight_decay"]
        for p in group["params"]:
            g = p._grad         # (p may be a non-leaf: ._grad, as PyTorch, does not warn)
            if g is None:
                continue
            state = self._state_for(p, group)
            g = -g if group["maximize"] else g
            step = state["step"]
            step += 1
            if weight_decay != 0:
                if group["decoupled_weight_decay"]:
                    p.mul_(1 - lr * weight_decay)
                else:
                    g = g.add(p, alpha=weight_decay)
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            exp_avg.lerp_(g, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2)
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            step_size_neg = -(lr / bias_correction1)
            second = exp_avg_sq
            if group["amsgrad"]:
                max_sq = state["max_exp_avg_sq"]
                max_sq.copy_(maximum(max_sq.clone(), exp_avg_sq))
                second = max_sq
            # -step_size * m / (sqrt(v) / sqrt(bc2) + eps), rounded as PyTorch computes it
            denom = (second.sqrt() / (bias_correction2.sqrt() * step_size_neg)).add_(
                eps / step_size_neg)
            p.addcdiv_(exp_avg.clone(), denom)
