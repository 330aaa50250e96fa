"""ember.nn: Parameter, Module and the layers, functional, init, utils."""
from .parameter import Parameter, Buffer
from .modules import *  # noqa: F401,F403
from . import functional, init, utils
from . import grad
from .parallel import DataParallel  # noqa: F401  (torch.nn.DataParallel)


def factory_kwargs(kwargs):
    """The factory keywords (device, dtype, memory_format) of a layer's **kwargs, merged with
    those given under "factory_kwargs" (for names a signature already uses); any other key, or
    one given both ways, is a TypeError."""
    if kwargs is None:
        return {}
    simple = {"device", "dtype", "memory_format"}
    unknown = set(kwargs) - simple - {"factory_kwargs"}
    if unknown:
        raise TypeError(f"unexpected kwargs {unknown}")
    result = {k: v for k, v in kwargs.items() if k in simple}
    for key, value in kwargs.get("factory_kwargs", {}).items():
        if key in result:
            raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
        result[key] = value
    return result
