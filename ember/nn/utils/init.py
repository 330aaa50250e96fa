"""skip_init: build a module without running its parameter initialisation."""
import inspect

from ... import random
from ..modules.module import Module


def skip_init(module_cls, *args, **kwargs):
    """An instance of `module_cls` whose parameters and buffers hold uninitialized memory.

    torch builds it on the meta device; ember has none, so it builds it normally under a forked
    generator (the global random state is left as it was) and then empties it."""
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    device = kwargs.pop("device", "cpu")
    with random.fork_rng():
        module = module_cls(*args, **kwargs)
    return module.to_empty(device=device)
