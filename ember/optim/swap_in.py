"""torch.optim.swap_in_optimizer_params_and_state: run code (an optimizer.step()) against other
parameters and optimizer state than the live ones, then put the live ones back.

The swap-in parameters take the places of the optimizer's parameters in order (the order of
its param_groups); the swap-in state is a state_dict()-shaped dict, whose packed integer ids
name those places. Steps taken inside change the swap-in tensors in place; anything else done
to the optimizer inside (new state entries, reassigned values) is dropped on exit.
"""
import contextlib
from collections import defaultdict

__all__ = ["swap_in_optimizer_params_and_state"]


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters, swapin_optim_state):
    params = list(swapin_parameters.values())
    live_count = sum(len(g["params"]) for g in optimizer.param_groups)
    if len(params) != live_count:
        raise ValueError(f"expected {live_count} swap-in parameters (one per optimizer "
                         f"parameter), got {len(params)}")
    # the packed ids number the optimizer's parameters in param_groups order
    ids = [i for g in swapin_optim_state["param_groups"] for i in g["params"]]
    by_id = dict(zip(ids, params))
    groups = []
    for live, given in zip(optimizer.param_groups, swapin_optim_state["param_groups"]):
        group = dict(live)
        group.update({k: v for k, v in given.items() if k != "params"})
        group["params"] = [by_id[i] for i in given["params"]]
        groups.append(group)
    state = defaultdict(dict)
    for i, entries in swapin_optim_state["state"].items():
        state[by_id[i]] = dict(entries)
    live_groups, live_state = optimizer.param_groups, optimizer.state
    optimizer.param_groups, optimizer.state = groups, state
    try:
        yield
    finally:
        optimizer.param_groups, optimizer.state = live_groups, live_state
