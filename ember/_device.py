"""ember.device: where a tensor lives, and the array module that computes on it."""
from . import _backend


class device:
    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int):
            return device("cuda", type)
        if ":" in type:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was "
                                   f"passed explicitly: {type}")
            type, _, idx = type.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}:{idx}'")
            index = int(idx)
        if type not in ("cpu", "cuda", "meta"):
            raise RuntimeError("Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, "
                               "ideep, hip, ve, fpga, maia, xla, lazy, vulkan, mps, meta, hpu, "
                               "mtia, privateuseone device type at start of device string: "
                               + type)
        self.type = type
        self.index = index

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))

    def __enter__(self):
        self._previous = _default_device[0]
        set_default_device(self)
        return self

    def __exit__(self, *exc):
        _default_device[0] = self._previous


CPU = device("cpu")
_default_device = [CPU]


def as_device(d):
    """Normalise a device argument (str, int, device or None) to a device object."""
    if d is None:
        return _default_device[0]
    if d.__class__ is device:
        return d
    if isinstance(d, int):
        return device("cuda", d)
    d = device(d)
    if d.type == "cuda":
        if not _backend.cuda_available():
            raise AssertionError("Torch not compiled with CUDA enabled")
        if d.index is None:
            d = device("cuda", 0)
    return d


def set_default_device(d):
    _default_device[0] = CPU if d is None else as_device(d)


def get_default_device():
    return _default_device[0]


def array_module(d):
    return _backend.backend(d.type).xp
