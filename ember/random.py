"""ember.random: the global random state, as torch.random (torch's CPU stream, bit for bit)."""
import contextlib

from .ops.random import (manual_seed, seed, initial_seed, get_rng_state, set_rng_state,
                         default_generator, Generator)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type=None):
    """Run the block with the global generator's state saved, and put it back afterwards.

    ember has no accelerator generators of its own, so `devices` and `device_type` are accepted
    and have nothing to fork."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


def thread_safe_generator():
    """The generator a DataLoader thread worker should draw from; None elsewhere, so that draws
    use the global generator. ember's DataLoader workers are processes, so it is always None."""
    return None
