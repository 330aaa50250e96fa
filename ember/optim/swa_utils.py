"""Stochastic weight averaging and exponential moving averages of a model's weights
(torch.optim.swa_utils): AveragedModel, the averaging functions, SWALR and update_bn."""
import itertools
import math
from copy import deepcopy

from .. import _dtype as D
from .._tensor import Tensor
from ..autograd import grad_mode
from ..nn.modules.module import Module
from ..nn.modules.batchnorm import _BatchNorm
from ..ops.creation import tensor
from ..ops.registry import xp_of
from .lr_scheduler import LRScheduler, _per_group, _warn_if_get_lr_called_directly
from .optimizer import lerp_, written

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         f"[0,1] range.")


def _lerp_all_(averaged, current, weight):
    """averaged[i] <- lerp(averaged[i], current[i], weight) for floating tensors, in place with
    PyTorch's lerp rounding (the optimizers' kernel)."""
    for avg, cur in zip(averaged, current):
        xp = xp_of(avg._device)
        lerp_(xp, avg._data, cur._data, weight, xp.empty_like(avg._data))
        written(avg)


def _split_floating(averaged, current):
    floating = [(a, c) for a, c in zip(averaged, current) if a.is_floating_point()]
    other = [(a, c) for a, c in zip(averaged, current) if not a.is_floating_point()]
    return floating, other


def get_ema_multi_avg_fn(decay=0.999):
    """In place, for lists of tensors: ema <- decay * ema + (1 - decay) * current (a lerp for
    floating tensors; other dtypes are computed out of place and copied back)."""
    _check_decay(decay)

    @grad_mode.no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        floating, other = _split_floating(ema_param_list, current_param_list)
        for ema, cur in other:
            ema.copy_(ema * decay + cur * (1 - decay))
        _lerp_all_([a for a, _ in floating], [c for _, c in floating], 1 - decay)

    return ema_update


def get_swa_multi_avg_fn():
    """In place, for lists of tensors: avg <- avg + (current - avg) / (n + 1) (a lerp with
    weight 1 / (n + 1) for floating tensors)."""
    @grad_mode.no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        floating, other = _split_floating(averaged_param_list, current_param_list)
        for avg, cur in other:
            # PyTorch averages all with add_(alpha=1 / (n + 1)), or addcdiv_ by a tensor n + 1,
            # which refuse integer tensors (before anything is updated)
            if isinstance(num_averaged, Tensor):
                avg.addcdiv_(cur - avg, num_averaged + 1)
            else:
                avg.add_(cur - avg, alpha=1 / (num_averaged + 1))
        n = num_averaged.item() if isinstance(num_averaged, Tensor) else num_averaged
        _lerp_all_([a for a, _ in floating], [c for _, c in floating], 1 / (n + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """ema, current, n -> decay * ema + (1 - decay) * current (a new tensor)."""
    _check_decay(decay)

    @grad_mode.no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """averaged, current, n -> averaged + (current - averaged) / (n + 1) (a new tensor)."""
    @grad_mode.no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of `model` whose parameters (and, with use_buffers=True, buffers) hold a running
    average of the weights passed to update_parameters(): equal weights by default (SWA), or
    as avg_fn (one tensor at a time) or multi_avg_fn (lists of tensors, in place) say."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None,
                 use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=D.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        """Fold `model`'s current weights into the average (the first call copies them)."""
        if self.use_buffers:
            mine = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs = itertools.chain(model.parameters(), model.buffers())
        else:
            mine, theirs = self.parameters(), model.parameters()
        averaged, current = [], []
        first = self.n_averaged.item() == 0
        for p_avg, p_model in zip(mine, theirs):
            p_avg = p_avg.detach()
            p_model = p_model.detach().to(p_avg.device)
            averaged.append(p_avg)
            current.append(p_model)
            if first:
                p_avg.copy_(p_model)
        if not first:
            with grad_mode.no_grad():
                if self.multi_avg_fn is not None:
                    for device in dict.fromkeys(p.device for p in averaged):
                        pairs = [(a, c) for a, c in zip(averaged, current) if a.device == device]
                        self.multi_avg_fn([a for a, _ in pairs], [c for _, c in pairs],
                                          self.n_averaged.to(device))
                else:
                    avg_fn = self.avg_fn if self.avg_fn is not None else get_swa_avg_fn()
                    for p_avg, p_model in zip(averaged, current):
                        p_avg.copy_(avg_fn(p_avg, p_model, self.n_averaged.to(p_avg.device)))
        if not self.use_buffers:
            # the buffers (batch-norm statistics, ...) follow the model's as they are
            for b_avg, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                b_avg.detach().copy_(b_model.detach().to(b_avg.device))
        self.n_averaged += 1


@grad_mode.no_grad()
def update_bn(loader, model, device=None):
    """Recompute the running statistics of every batch-norm layer of `model` with one pass over
    `loader` (batches: tensors, or lists/tuples whose first item is the input; anything else is
    passed to the model as it is), as a cumulative average (momentum None)."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for input in loader:
        if isinstance(input, (list, tuple)):
            input = input[0]
        if device is not None:
            input = input.to(device)
        model(input)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


def _cosine(t):
    return (1 - math.cos(math.pi * t)) / 2


def _linear(t):
    return t


class SWALR(LRScheduler):
    """Anneals each group's lr to its swa_lr over anneal_epochs steps (cosine or linear), then
    holds it. Chainable: each step recovers the lr before annealing from the current one, so
    another scheduler may change the lr in between."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1):
        for group, lr in zip(optimizer.param_groups,
                             _per_group("swa_lr", optimizer, swa_lr)):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._anneal_strategy = anneal_strategy
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def anneal_func(self, t):
        return _cosine(t) if self._anneal_strategy == "cos" else _linear(t)

    @staticmethod
    def _lr_before(lr, swa_lr, alpha):
        """The lr that annealing by `alpha` turned into `lr`."""
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        _warn_if_get_lr_called_directly(self)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        span = max(1, self.anneal_epochs)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / span)))
        alpha = self.anneal_func(max(0, min(1, step / span)))
        groups = self.optimizer.param_groups
        before = [self._lr_before(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, before)]
