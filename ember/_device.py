"""ember.device: where a tensor lives, and the array module that computes on it."""
import re

from . import _backend

# the device types PyTorch knows (only cpu and cuda hold ember tensors)
_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga",
          "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
_DEVICE_STRING = re.compile(r"([a-zA-Z_]+)(?::([1-9]\d*|0))?")


def _parse(string):
    """'cuda:1' -> ('cuda', 1), with PyTorch's errors."""
    if not string:
        raise RuntimeError("Device string must not be empty")
    match = _DEVICE_STRING.fullmatch(string)
    if match is None:
        raise RuntimeError(f"Invalid device string: '{string}'")
    kind, index = match.group(1), match.group(2)
    if kind not in _TYPES:
        raise RuntimeError(f"Expected one of {', '.join(_TYPES)} device type at start of device "
                           f"string: {kind}")
    return kind, None if index is None else int(index)


class device:
    __slots__ = ("type", "index", "_previous")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int) and not isinstance(type, bool):
            # a bare index means the current accelerator, and ember has none without CuPy
            if type < 0:
                raise RuntimeError("Device index must not be negative")
            if not _backend.cuda_available():
                raise RuntimeError("Cannot access accelerator device when none is available.")
            type, index = "cuda", type
        elif not isinstance(type, str):
            raise TypeError(
                f"device() received an invalid combination of arguments - got "
                f"({type.__class__.__name__}), "
                f"but expected one of:\n * (torch.device device)\n      didn't match because "
                f"some of the arguments have invalid types: (!{type.__class__.__name__}!)\n"
                f" * (str type, int index = -1)\n")
        if index is not None and (isinstance(index, bool) or not isinstance(index, int)):
            raise TypeError(f"device(): argument 'index' (position 2) must be int, not "
                            f"{index.__class__.__name__}")
        kind, parsed = _parse(type)
        if parsed is not None:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was "
                                   f"passed explicitly: {type}")
            index = parsed
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        self.type = kind
        self.index = index

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if not isinstance(other, device):
            return NotImplemented          # as PyTorch: a device never equals a string
        return self.type == other.type and self.index == other.index

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
    """Normalise a device argument (str, int, device or None) to the device a tensor gets."""
    if d is None:
        d = _default_device[0]
        if d is CPU:
            return d
    if d.__class__ is not device:
        d = device(d)
    if d.type == "cpu":
        return CPU                         # a CPU tensor's device never carries an index
    if d.type == "cuda":
        if not _backend.cuda_available():
            raise AssertionError("Torch not compiled with CUDA enabled")
        if d.index is None:
            d = device("cuda", 0)
        return d
    raise RuntimeError(f"ember tensors live on cpu or cuda devices, not on {d.type}")


def set_default_device(d):
    # checked when a tensor is made there, as in PyTorch
    _default_device[0] = CPU if d is None else device(d)


def get_default_device():
    return _default_device[0]


def array_module(d):
    return _backend.backend(d.type).xp
