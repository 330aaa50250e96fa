"""ember.accelerator: the machine's accelerator, as torch.accelerator. ember's only one is CUDA
(through CuPy); without it, torch's answers for a CPU-only machine: none available, no current
accelerator, no devices, and the device calls raise torch's RuntimeError."""
from . import cuda as _cuda
from ._device import device

_NONE_ERROR = "Cannot access accelerator device when none is available."


def is_available():
    return _cuda.is_available()


def current_accelerator(check_available=False):
    return device("cuda") if is_available() else None


def device_count():
    return _cuda.device_count() if is_available() else 0


def _check():
    if not is_available():
        raise RuntimeError(_NONE_ERROR)


def current_device_index():
    _check()
    return _cuda.current_device()


current_device_idx = current_device_index


def synchronize(device=None):
    _check()
    _cuda.synchronize(device)


def _device_call(*args, **kwargs):
    """The calls ember has no counterpart for on any device (streams, memory statistics)."""
    _check()
    raise NotImplementedError("ember.accelerator: streams and memory statistics are not "
                              "available in ember")


set_device_index = set_device_idx = empty_cache = memory_allocated = memory_reserved = \
    max_memory_allocated = max_memory_reserved = memory_stats = current_stream = set_stream = \
    get_device_capability = get_memory_info = reset_peak_memory_stats = \
    reset_accumulated_memory_stats = _device_call
