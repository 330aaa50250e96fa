"""torch.nn.parallel's scatter and gather: split inputs across devices (tensors chunked along
`dim`, lists/tuples/dicts recursed into, anything else copied by reference), and join the
per-device outputs on one device. As in torch they work on accelerator tensors only: a CPU
device or CPU tensors get torch's errors."""
from ..._device import device as _device
from ..._tensor import Tensor
from ...ops.joining import cat

__all__ = ["scatter", "scatter_kwargs", "gather"]


def _device_of(d):
    return _device(d) if isinstance(d, (str, _device)) else _device("cuda", int(d))


def check_not_cpu(devices, what="a non cpu device"):
    out = []
    for d in devices:
        dev = _device_of(d)
        if dev.type == "cpu":
            raise ValueError(f"Expected {what}, but got: cpu")
        out.append(dev)
    return out


def scatter(inputs, target_gpus, dim=0):
    """`inputs` split into one piece per device (tensors in chunks along dim)."""
    devices = check_not_cpu(target_gpus)

    def split(obj):
        if isinstance(obj, Tensor):
            return [c.to(d) for c, d in zip(obj.chunk(len(devices), dim), devices)]
        if isinstance(obj, tuple) and hasattr(obj, "_fields"):          # a namedtuple
            return [type(obj)(*parts) for parts in zip(*map(split, obj))]
        if isinstance(obj, (tuple, list)) and obj:
            return [type(obj)(parts) for parts in zip(*map(split, obj))]
        if isinstance(obj, dict) and obj:
            return [type(obj)(zip(obj.keys(), parts)) for parts in zip(*map(split, obj.values()))]
        return [obj for _ in devices]
    return split(inputs)


def scatter_kwargs(inputs, kwargs, target_gpus, dim=0):
    """scatter of the positional and the keyword arguments, padded to the same length."""
    inputs = scatter(inputs, target_gpus, dim) if inputs else []
    kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    inputs = list(inputs) + [() for _ in range(len(kwargs) - len(inputs))]
    kwargs = list(kwargs) + [{} for _ in range(len(inputs) - len(kwargs))]
    return tuple(inputs), tuple(kwargs)


def gather(outputs, target_device, dim=0):
    """The per-device outputs joined on target_device (-1: the CPU) along dim."""
    target = _device("cpu") if target_device == -1 else _device_of(target_device)

    def join(items):
        first = items[0]
        if isinstance(first, Tensor):
            if any(t.device.type == "cpu" for t in items):
                raise AssertionError("Gather function not implemented for CPU tensors")
            return cat([t.to(target) for t in items], dim)
        if first is None:
            return None
        if isinstance(first, dict):
            return type(first)((k, join([d[k] for d in items])) for k in first)
        if isinstance(first, tuple) and hasattr(first, "_fields"):
            return type(first)(*map(join, zip(*items)))
        return type(first)(map(join, zip(*items)))
    return join(outputs)
