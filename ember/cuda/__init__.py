"""ember.cuda: the CUDA device (through CuPy, when it is installed and sees a GPU), and the
answers torch's CUDA module gives where there is none.

Without a GPU, every query that needs one raises torch's AssertionError("Torch not compiled
with CUDA enabled"), and the memory statistics read as torch's do before CUDA is initialised
(0 bytes, empty dicts). With CuPy, the device queries and memory figures come from CuPy's
runtime and memory pool (ember allocates through that pool; it keeps no peak figures, so the
max_* functions report the current ones). The deprecated ember.cuda.amp is a submodule.
"""
import collections
import warnings

from .. import _backend
from .._device import device as _device
from ..random import initial_seed as _seed, get_rng_state as _state

_NOT_COMPILED = "Torch not compiled with CUDA enabled"
_NO_NVML = "nvidia-ml-py does not seem to be installed or it can't be imported."

default_generators = ()
has_half = True
has_magma = False


def is_available():
    return _backend.cuda_available()


def device_count():
    return _backend.cuda_device_count()


def _lazy_init():
    """Raise torch's error when there is no CUDA device to ask."""
    if not is_available():
        raise AssertionError(_NOT_COMPILED)


def _cupy():
    _lazy_init()
    return _backend.cupy_module()      # CuPy (or the tests' stand-in for it)


def _index(device):
    """The CUDA device index named by device (None: the current one)."""
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    d = _device(device)
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return current_device() if d.index is None else d.index


def is_initialized():
    return is_available()


def init():
    _lazy_init()


def current_device():
    _lazy_init()
    return _cupy().cuda.runtime.getDevice()


def set_device(device):
    index = _index(device) if not isinstance(device, int) else device
    if index < 0:
        return                  # torch ignores a negative index
    _cupy().cuda.runtime.setDevice(index)


def synchronize(device=None):
    if is_available():
        _cupy().cuda.Device(_index(device)).synchronize()


def manual_seed(seed):
    pass


def manual_seed_all(seed):
    pass


def seed():
    pass


def seed_all():
    pass


def initial_seed():
    _lazy_init()
    return _seed()


def get_rng_state(device="cuda"):
    _lazy_init()
    return _state()


def get_rng_state_all():
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state(new_state, device="cuda"):
    """Accepted and ignored without a GPU, as in torch (ember's CUDA draws use the one
    generator)."""


def set_rng_state_all(new_states):
    for state in new_states:
        set_rng_state(state)


def is_bf16_supported(including_emulation=True):
    return is_available()


def is_tf32_supported():
    return is_available() and get_device_capability()[0] >= 8


def get_arch_list():
    return []


def get_gencode_flags():
    return ""


def _properties(device):
    return _cupy().cuda.runtime.getDeviceProperties(_index(device))


def get_device_name(device=None):
    name = _properties(device)["name"]
    return name.decode() if isinstance(name, bytes) else name


def get_device_capability(device=None):
    props = _properties(device)
    return props["major"], props["minor"]


class _CudaDeviceProperties:
    """torch.cuda.get_device_properties' answer: the device's name, compute capability,
    memory and multiprocessors, from CuPy's runtime."""

    def __init__(self, props):
        name = props["name"]
        self.name = name.decode() if isinstance(name, bytes) else name
        self.major, self.minor = props["major"], props["minor"]
        self.total_memory = props["totalGlobalMem"]
        self.multi_processor_count = props["multiProcessorCount"]
        self.is_integrated = bool(props.get("integrated", 0))
        self.is_multi_gpu_board = bool(props.get("isMultiGpuBoard", 0))

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device=None):
    return _CudaDeviceProperties(_properties(device))


def can_device_access_peer(device, peer_device):
    return bool(_cupy().cuda.runtime.deviceCanAccessPeer(_index(device), _index(peer_device)))


def mem_get_info(device=None):
    with _cupy().cuda.Device(_index(device)):
        return _cupy().cuda.runtime.memGetInfo()


def get_per_process_memory_fraction(device=None):
    _lazy_init()
    return 1.0


def set_per_process_memory_fraction(fraction, device=None):
    _lazy_init()
    _cupy().get_default_memory_pool().set_limit(fraction=fraction)


def get_sync_debug_mode():
    _lazy_init()
    return 0


def set_sync_debug_mode(debug_mode):
    _lazy_init()


def ipc_collect():
    _lazy_init()


def empty_cache():
    if is_available():
        _cupy().get_default_memory_pool().free_all_blocks()


# ---- memory statistics: zero before CUDA is initialised, as in torch -------------------------

def memory_allocated(device=None):
    return _cupy().get_default_memory_pool().used_bytes() if is_available() else 0


def memory_reserved(device=None):
    return _cupy().get_default_memory_pool().total_bytes() if is_available() else 0


max_memory_allocated = memory_allocated
max_memory_reserved = memory_reserved


def memory_cached(device=None):
    warnings.warn("`torch.cuda.memory_cached` has been renamed to `torch.cuda.memory_reserved`",
                  FutureWarning, stacklevel=2)
    return memory_reserved(device)


def max_memory_cached(device=None):
    warnings.warn("`torch.cuda.max_memory_cached` has been renamed to "
                  "`torch.cuda.max_memory_reserved`", FutureWarning, stacklevel=2)
    return max_memory_reserved(device)


def memory_stats(device=None):
    stats = collections.OrderedDict()
    if is_available():
        stats["allocated_bytes.all.current"] = memory_allocated(device)
        stats["reserved_bytes.all.current"] = memory_reserved(device)
    return stats


def memory_stats_as_nested_dict(device=None):
    nested = {}
    for key, value in memory_stats(device).items():
        *path, leaf = key.split(".")
        node = nested
        for part in path:
            node = node.setdefault(part, {})
        node[leaf] = value
    return nested


def host_memory_stats():
    return collections.OrderedDict()


def host_memory_stats_as_nested_dict():
    return {}


def memory_summary(device=None, abbreviated=False):
    stats = memory_stats(device)
    if "allocated_bytes.all.current" not in stats:
        raise KeyError("allocated_bytes.all.current")       # torch's, before CUDA starts
    return (f"allocated: {stats['allocated_bytes.all.current']} bytes, "
            f"reserved: {stats['reserved_bytes.all.current']} bytes")


def reset_peak_memory_stats(device=None):
    _lazy_init()


reset_max_memory_allocated = reset_peak_memory_stats
reset_max_memory_cached = reset_peak_memory_stats
reset_accumulated_memory_stats = reset_peak_memory_stats


def reset_peak_host_memory_stats():
    _lazy_init()


def reset_accumulated_host_memory_stats():
    _lazy_init()


def memory_snapshot(mempool_id=None, include_traces=True):
    """The allocator's segments; ember keeps no segment records, so there are none. (torch
    without a GPU fails here with an AttributeError from its missing C++ binding.)"""
    return []


def is_current_stream_capturing():
    """Is a CUDA graph being captured on the current stream? Never in ember: it does not
    capture graphs. (torch without a GPU fails here with a RuntimeError from a dummy class.)"""
    return False


def list_gpu_processes(device=None):
    return "pynvml module not found, please install nvidia-ml-py"


def _nvml(device=None):
    raise ModuleNotFoundError(_NO_NVML)


utilization = memory_usage = temperature = power_draw = clock_rate = device_memory_used = _nvml


# ---- devices and streams ---------------------------------------------------------------------

class device:
    """`with ember.cuda.device(i):` makes device i current for the block (a negative index, as
    for a CPU tensor's device_of, leaves things as they are)."""

    def __init__(self, device):
        self.idx = _index(device) if device is not None and not isinstance(device, int) \
            else device
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is None:
            raise TypeError("'<' not supported between instances of 'NoneType' and 'int'")
        if self.idx < 0:
            return
        if not is_available():
            raise RuntimeError("PyTorch was compiled without CUDA support")
        self.prev_idx = current_device()
        set_device(self.idx)

    def __exit__(self, *exc):
        if self.prev_idx >= 0:
            set_device(self.prev_idx)
        return False


class device_of(device):
    """The device of a tensor, as a context manager (a CPU tensor: no change)."""

    def __init__(self, obj):
        d = obj.device
        super().__init__(d.index if d.type == "cuda" and d.index is not None else
                         (0 if d.type == "cuda" else -1))


class Stream:
    """A CUDA stream (CuPy's). ember runs every op on the current stream."""

    def __init__(self, device=None, priority=0, **kwargs):
        if not is_available():
            raise RuntimeError("torch.cuda.Stream requires CUDA support")
        self.cupy_stream = _cupy().cuda.Stream()

    def synchronize(self):
        self.cupy_stream.synchronize()

    def query(self):
        return self.cupy_stream.done

    def __enter__(self):
        self.cupy_stream.__enter__()
        return self

    def __exit__(self, *exc):
        return self.cupy_stream.__exit__(*exc)


class StreamContext:
    """`with ember.cuda.stream(s):`; a None stream changes nothing."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        if self.stream is not None:
            self.stream.__enter__()

    def __exit__(self, *exc):
        if self.stream is not None:
            self.stream.__exit__(*exc)
        return False


def stream(stream):
    return StreamContext(stream)


def set_stream(stream):
    if stream is not None:
        stream.cupy_stream.use()


def current_stream(device=None):
    _lazy_init()
    s = Stream.__new__(Stream)
    s.cupy_stream = _cupy().cuda.get_current_stream()
    return s


def default_stream(device=None):
    _lazy_init()
    s = Stream.__new__(Stream)
    s.cupy_stream = _cupy().cuda.Stream.null
    return s


def get_stream_from_external(data_ptr, device=None):
    _lazy_init()
    s = Stream.__new__(Stream)
    s.cupy_stream = _cupy().cuda.ExternalStream(data_ptr)
    return s


class ExternalStream(Stream):
    def __init__(self, stream_ptr, device=None, **kwargs):
        _lazy_init()
        self.cupy_stream = _cupy().cuda.ExternalStream(stream_ptr)


class Event:
    """A CUDA event (CuPy's)."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        if not is_available():
            raise RuntimeError("Tried to instantiate dummy base class Event")
        self.cupy_event = _cupy().cuda.Event(block=blocking, disable_timing=not enable_timing,
                                            interprocess=interprocess)

    def record(self, stream=None):
        self.cupy_event.record(None if stream is None else stream.cupy_stream)

    def synchronize(self):
        self.cupy_event.synchronize()

    def query(self):
        return self.cupy_event.done

    def elapsed_time(self, end_event):
        return _cupy().cuda.get_elapsed_time(self.cupy_event, end_event.cupy_event)


class cudaStatus:
    SUCCESS = 0
    ERROR_NOT_READY = 34


class CudaError(RuntimeError):
    def __init__(self, code):
        self.code = code
        super().__init__(f"CUDA error {code}")


class DeferredCudaCallError(Exception):
    pass


def check_error(res):
    if res != cudaStatus.SUCCESS:
        raise CudaError(res)


from ._legacy import *  # noqa: E402,F401,F403  (FloatTensor, FloatStorage, ...)
from . import amp  # noqa: E402  (ember.cuda.amp reads is_available from this package)
