"""Averaged SGD: SGD with a decaying step size eta, plus a running average `ax` of the
parameters that starts averaging after t0 steps."""
from .. import _dtype as D
from .optimizer import (Optimizer, add_, check_lr, check_flags, count_step, params_with_grad,
                        prepared_grad, real, scalar, step_tensor, written, zeros_state)


class ASGD(Optimizer):
    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        check_lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)
        check_flags(self)

    _capturable_what = "params, mus, etas, and state_steps"
    _capturable_what_foreach = _capturable_what
    _group_fallbacks = dict(foreach=None, maximize=False, differentiable=False,
                            capturable=False)

    def _init_state(self, p, group):
        state = self.state[p]
        # eta and mu are 0-dim tensors of the step's dtype, as the step count
        state["step"] = step_tensor()
        state["eta"] = _set(step_tensor(), scalar(group["lr"]))
        state["mu"] = _set(step_tensor(), 1)
        state["ax"] = zeros_state(p)

    def _update_group(self, group, ws):
        lr, lambd, alpha, t0 = scalar(group["lr"]), group["lambd"], group["alpha"], group["t0"]
        for p, xp, param, grad in params_with_grad(group):
            state = self._state_for(p, group)
            step = count_step(state["step"])
            g = prepared_grad(xp, ws, grad, param, group["maximize"], group["weight_decay"])
            tmp = ws.get(xp, param, "tmp")
            eta, mu = state["eta"].item(), state["mu"].item()
            xp.multiply(param, 1 - lambd * eta, out=param)     # the decay term
            add_(xp, param, g, -eta, tmp)
            ax = real(state["ax"]._data)
            if mu != 1:
                # ax += (param - ax) * mu
                xp.add(ax, xp.multiply(xp.subtract(param, ax, out=tmp), mu, out=tmp), out=ax)
            else:
                xp.copyto(ax, param)
            _set(state["eta"], lr / ((1 + lambd * lr * step) ** alpha))
            _set(state["mu"], 1 / max(1, step - t0))
            written(p, state["ax"])


def _set(t, value):
    """Write a Python number into a 0-dim tensor; returns the tensor. As in PyTorch, the
    number goes through a tensor of the default dtype first (a float64 state, after
    load_state_dict, still gets a float32-rounded value)."""
    t._data[...] = D.get_default_dtype().np.type(value)
    t._version_counter.bump()
    return t
