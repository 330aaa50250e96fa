"""The optimizers' updates for sparse gradients (nn.Embedding(sparse=True)), as torch's:
SGD (with momentum: a sparse momentum buffer), Adagrad and SparseAdam; every other optimizer
refuses a sparse gradient with torch's message. The updates work on the raw arrays with `xp`
in torch's order of float operations: a gradient is coalesced first where torch coalesces it,
and a sparse value is added into a dense tensor entry by entry (repeated indices in turn)."""
import math

import numpy as np

from .._backend import of as _backend_of
from .._tensor import Tensor
from ._kernels import scatter_fma

# torch's refusal for each optimizer without a sparse update
REFUSALS = {
    "Adam": "Adam does not support sparse gradients, please consider SparseAdam instead",
    "AdamW": "Adam does not support sparse gradients, please consider SparseAdam instead",
}


def _refuse(optimizer):
    name = type(optimizer).__name__
    raise RuntimeError(REFUSALS.get(name, f"{name} does not support sparse gradients"))


def _f(values, number):
    """A Python number in the values' dtype (torch's float32 kernels take the scalar so)."""
    return values.dtype.type(number)


def _add_into(dense, coo, alpha=1):
    """dense += alpha * coo, entry by entry (torch's add_ of a sparse tensor into a dense:
    with an alpha, each entry one fused multiply-add)."""
    if not coo.nnz:
        return
    if alpha == 1:
        _backend_of(coo.xp).scatter_add(dense, tuple(coo.indices), coo.values)
        return
    rows = dense.reshape((-1,) + dense.shape[coo.sparse_dim:])     # (a view: params are
    coef = coo.xp.full(coo.nnz, alpha, dtype=coo.values.dtype)      # contiguous)
    scatter_fma(rows, coo.linear_index(), coef, coo.values)


def _sparse_sum(a, b, alpha=1):
    """a + alpha * b for two COOArrays, as torch's sparse add (merged when both coalesced)."""
    scaled = b if alpha == 1 else b.with_values(b.values * _f(b.values, alpha))
    return np.add(a, scaled)        # (COOArrays.__array_ufunc__ does the sparse add)


def _sgd(optimizer, group):
    lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
    lr = lr.item() if isinstance(lr, Tensor) else lr
    for p in group["params"]:
        if p._grad is None:
            continue
        grad = p._grad._data if p._grad.is_sparse else None
        if grad is None:
            raise RuntimeError("ember: SGD with a mix of sparse and dense gradients in one "
                               "group is not supported")
        if group["weight_decay"] != 0:
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) "
                               "instead.")
        if group["maximize"]:
            grad = grad.with_values(-grad.values)
        if momentum != 0:
            state = optimizer.state[p]
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = grad.copy()
            else:
                buf = buf._data
                buf = _sparse_sum(buf.with_values(buf.values * _f(buf.values, momentum)), grad,
                                  1 - dampening)
            state["momentum_buffer"] = Tensor._make(buf, p._dtype, p._device)
            grad = _sparse_sum(grad, buf, momentum) if group["nesterov"] else buf
        _add_into(p._data, grad, -lr)
        p._version_counter.bump()


def _adagrad(optimizer, group):
    lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
    lr = lr.item() if isinstance(lr, Tensor) else lr
    for p in group["params"]:
        if p._grad is None:
            continue
        if group["weight_decay"] != 0:
            raise RuntimeError("weight_decay option is not compatible with sparse gradients")
        state = optimizer._state_for(p, group)
        step_t = state["step"]
        step_t._data += 1
        step = step_t._data.item()
        grad = p._grad._data.coalesce()
        if group["maximize"]:
            grad = grad.with_values(-grad.values)
        clr = lr / (1 + (step - 1) * lr_decay)
        state_sum = state["sum"]._data
        _add_into(state_sum, grad.with_values(grad.values * grad.values))
        std = state_sum[tuple(grad.indices)]
        std = np.sqrt(std) if std.__class__ is np.ndarray else grad.xp.sqrt(std)
        std += _f(std, eps)
        _add_into(p._data, grad.with_values(grad.values / std), -clr)
        state["sum"]._version_counter.bump()
        p._version_counter.bump()


def _sparse_adam(optimizer, group):
    lr, eps = group["lr"], group["eps"]
    lr = lr.item() if isinstance(lr, Tensor) else lr
    beta1, beta2 = group["betas"]
    for p in group["params"]:
        if p._grad is None:
            continue
        if not p._grad.is_sparse:
            raise RuntimeError("SparseAdam does not support dense gradients, please consider "
                               "Adam instead")
        state = optimizer.state[p]
        if not state:
            state["step"] = 0
            state["exp_avg"] = Tensor._make(p._data * 0, p._dtype, p._device)
            state["exp_avg_sq"] = Tensor._make(p._data * 0, p._dtype, p._device)
        state["step"] += 1
        step = state["step"]
        grad = p._grad._data.coalesce()
        values = -grad.values if group["maximize"] else grad.values
        at = tuple(grad.indices)
        exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
        # the moments move toward the gradient only at its entries
        old_avg = exp_avg[at]
        avg_step = (values - old_avg) * _f(values, 1 - beta1)
        _add_into(exp_avg, grad.with_values(avg_step))
        old_sq = exp_avg_sq[at]
        sq_step = (values * values - old_sq) * _f(values, 1 - beta2)
        _add_into(exp_avg_sq, grad.with_values(sq_step))
        numer = avg_step + old_avg
        denom = grad.xp.sqrt(sq_step + old_sq) + _f(values, eps)
        bias1 = 1 - beta1 ** step
        bias2 = 1 - beta2 ** step
        step_size = lr * math.sqrt(bias2) / bias1
        _add_into(p._data, grad.with_values(_f(values, -step_size) * (numer / denom)))
        for t in (p, state["exp_avg"], state["exp_avg_sq"]):
            t._version_counter.bump()


UPDATES = {"SGD": _sgd, "Adagrad": _adagrad, "SparseAdam": _sparse_adam}


def sparse_update(optimizer, group):
    """Run `group`'s update for its sparse gradients, or refuse as torch does."""
    for cls in type(optimizer).__mro__:
        update = UPDATES.get(cls.__name__)
        if update is not None and cls.__module__.startswith("ember.optim"):
            return update(optimizer, group)
    _refuse(optimizer)
