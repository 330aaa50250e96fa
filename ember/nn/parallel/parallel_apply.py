"""torch.nn.parallel.parallel_apply: run modules[i](*inputs[i], **kwargs_tup[i]) for each i and
return their outputs in order. torch runs them in threads, one per device; ember runs them one
after another (its devices compute synchronously anyway). As in torch, it needs accelerator
devices: a CPU device, or no devices and no accelerator, get torch's errors."""
from ..._tensor import Tensor
from ... import cuda
from .scatter_gather import check_not_cpu

__all__ = ["parallel_apply"]


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None):
    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number "
                             f"of inputs {len(inputs)}")
    if kwargs_tup is not None:
        if len(modules) != len(kwargs_tup):
            raise AssertionError(f"The number of modules {len(modules)} is not equal to the "
                                 f"number of kwargs {len(kwargs_tup)}")
    else:
        kwargs_tup = ({},) * len(modules)
    if devices is not None:
        if len(modules) != len(devices):
            raise AssertionError(f"The number of modules {len(modules)} is not equal to the "
                                 f"number of devices {len(devices)}")
        check_not_cpu([d for d in devices if d is not None], "a cuda device")
    elif not cuda.is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    outputs = []
    for module, args, kwargs in zip(modules, inputs, kwargs_tup):
        if not isinstance(args, (list, tuple)) or isinstance(args, Tensor):
            args = (args,)
        outputs.append(module(*args, **kwargs))
    return outputs
