"""Top-level names that describe the build and the runtime rather than compute: what the build
has (`has_lapack`, ...), the error classes torch raises for accelerators, the CPU `Stream` and
`Event`, `get_device_module`, and the layout/format names kept for old code.

The build flags answer for ember: linear algebra and FFTs come from NumPy (LAPACK, pocketfft),
threads from ember's own pool; there is no MKL, Vulkan or distributed C++ backend.
"""
import importlib

from . import backends
from ._device import device as _device, get_default_device
from ._tensor import Tensor

__all__ = ["has_lapack", "has_mkl", "has_openmp", "has_spectral", "compiled_with_cxx11_abi",
           "is_vulkan_available", "is_distributed", "get_device_module", "AcceleratorError",
           "OutOfMemoryError", "FatalError", "Stream", "Event"]

has_lapack = True               # numpy.linalg
has_spectral = True             # numpy.fft
has_mkl = False
has_openmp = backends.openmp.is_available()



def compiled_with_cxx11_abi():
    return True


def is_vulkan_available():
    return False


def is_distributed(input):
    if not isinstance(input, Tensor):
        raise TypeError(f"is_distributed(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return False


class AcceleratorError(RuntimeError):
    """An error reported by an accelerator's runtime."""


class OutOfMemoryError(RuntimeError):
    """A device ran out of memory."""


class FatalError(Exception):
    """An unrecoverable internal error."""


_DEVICE_MODULES = {"cpu": "ember.cpu", "cuda": "ember.cuda", "mps": "ember.mps",
                   "xpu": "ember.xpu"}


def get_device_module(device=None):
    """The module of a device type (ember.cuda for "cuda"); no argument: the default device's."""
    if device is None:
        device = get_default_device()
    kind = _device(device).type if isinstance(device, (str, _device)) else None
    if kind is None:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or "
                           f"None")
    if kind not in _DEVICE_MODULES:
        raise RuntimeError(f"Device '{kind}' does not have a corresponding module registered as "
                           f"'torch.{kind}'.")
    return importlib.import_module(_DEVICE_MODULES[kind])


def _cpu_only(device):
    """The device of a torch.Stream/Event: this build's generic streams are the CPU's."""
    dev = _device("cpu" if device is None else device)
    if dev.type != "cpu":
        raise RuntimeError(f"PyTorch is not linked with support for {dev.type} devices")
    return _device("cpu")


class Stream:
    """torch.Stream on the CPU: work runs in order as it is issued, so a stream is always done."""

    def __init__(self, device=None, *, priority=0):
        self.device = _cpu_only(device)
        self.device_type = "cpu"
        self.device_index = -1
        self.stream_id = 0

    def query(self):
        return True

    def synchronize(self):
        pass

    def wait_event(self, event):
        pass

    def wait_stream(self, stream):
        raise RuntimeError(f"{self.device_type} backend doesn't support events.")

    def record_event(self, event=None):
        raise RuntimeError(f"{self.device_type} backend doesn't support events.")

    def __eq__(self, other):
        return isinstance(other, Stream) and (self.device, self.stream_id) == \
            (other.device, other.stream_id)

    def __hash__(self):
        return hash((self.device_type, self.device_index, self.stream_id))

    def __repr__(self):
        return (f"torch.Stream device_type={self.device_type}, device_index="
                f"{self.device_index}, stream_id={self.stream_id}")


class Event:
    """torch.Event on the CPU: it can be made and queried; recording one is refused, as torch's
    CPU backend refuses (it has no events)."""

    def __init__(self, device=None, *, enable_timing=False, blocking=False, interprocess=False):
        self.device = _cpu_only(device)
        self.device_type = "cpu"
        self.device_index = -1
        self.event_flag = int(bool(enable_timing))
        self.event_id = 0

    def query(self):
        return True

    def record(self, stream=None):
        raise RuntimeError(f"{self.device_type} backend doesn't support events.")

    def wait(self, stream=None):
        pass

    def synchronize(self):
        pass

    def elapsed_time(self, end_event):
        if not (self.event_flag and end_event.event_flag):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        raise RuntimeError(f"{self.device_type} backend doesn't support events.")

    def __repr__(self):
        return (f"torch.Event device_type={self.device_type}, device_index="
                f"{self.device_index}, event_flag={self.event_flag}, event_id={self.event_id}")


for _cls in (AcceleratorError, OutOfMemoryError, FatalError, Stream, Event):
    _cls.__module__ = "ember"
