"""Join: training with uneven inputs across ranks (torch.distributed.algorithms.join).

A rank that runs out of inputs leaves the `with Join([...])` block and waits in its exit,
standing in for the collectives the other ranks still make: each of their iterations starts
with an all-reduce of 1 (`Join.notify_join_context`), which a joined rank answers with 0; when
the sum is 0 every rank has joined. While the sum is not 0 the joined rank runs each joinable's
`JoinHook.main_hook` (which makes the same collectives as one iteration, with neutral values),
and at the end every rank runs `post_hook(is_last_joiner)`.
"""
from abc import ABC, abstractmethod
from typing import NamedTuple

import numpy as np

from ..._tensor import Tensor
from .. import distributed_c10d as c10d


class JoinHook:
    """What a joined rank does per iteration of the others (main_hook) and once all ranks
    have joined (post_hook)."""

    def main_hook(self):
        pass

    def post_hook(self, is_last_joiner):
        pass


class _JoinConfig(NamedTuple):
    enable: bool
    throw_on_early_termination: bool
    is_first_joinable: bool

    @staticmethod
    def construct_disabled_join_config():
        return _JoinConfig(enable=False, throw_on_early_termination=False,
                           is_first_joinable=False)


class Joinable(ABC):
    """A class whose instances can take part in Join (DistributedDataParallel is one)."""

    @abstractmethod
    def __init__(self):
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abstractmethod
    def join_hook(self, **kwargs):
        ...

    @property
    @abstractmethod
    def join_device(self):
        ...

    @property
    @abstractmethod
    def join_process_group(self):
        ...


class Join:
    """Context manager for uneven inputs: see the module's docstring."""

    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = joinables
        self._join_hooks = [joinable.join_hook(**kwargs) for joinable in joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        for i, joinable in enumerate(joinables):
            joinable._join_config = _JoinConfig(enable, throw_on_early_termination, i == 0)
        groups = {id(j.join_process_group) for j in joinables}
        if len(groups) > 1:
            raise ValueError("Using join context manager with multiple process groups")
        self._process_group = joinables[0].join_process_group
        self._rank = c10d.get_rank(self._process_group)

    def __enter__(self):
        pass

    def __exit__(self, kind, value, traceback):
        if not self._enable or kind is not None:
            return      # an error: let it propagate (the job's excepthook stops every rank)
        is_last_joiner = True
        while self._count(0) > 0:
            if self._throw_on_early_termination:
                self._count(1)      # tell the others to stop (their second all-reduce)
                raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")
            for hook in self._join_hooks:
                hook.main_hook()
            is_last_joiner = False
        for hook in self._join_hooks:
            hook.post_hook(is_last_joiner)

    def _count(self, value):
        t = _int_tensor(value)
        c10d.all_reduce(t, group=self._process_group)
        return int(t.item())

    @staticmethod
    def notify_join_context(joinable):
        """Called by a joinable at the start of each iteration: the all-reduce the joined ranks
        answer. With throw_on_early_termination, raises on every rank once one has joined."""
        config = joinable._join_config
        if not config.is_first_joinable or not config.enable:
            return None
        group = joinable.join_process_group
        ones = _int_tensor(1)
        work = c10d.all_reduce(ones, group=group, async_op=True)
        if config.throw_on_early_termination:
            flag = _int_tensor(0)
            c10d.all_reduce(flag, group=group)
            if flag.item():
                raise RuntimeError("Detected at least one rank that exhausted inputs. "
                                   "Throwing across all ranks.")
        return work


def _int_tensor(value):
    return Tensor._make(np.array([value], dtype=np.int64))
