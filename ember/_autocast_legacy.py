"""torch's older per-device autocast functions (get_autocast_cpu_dtype, set_autocast_gpu_dtype,
...) and its autocast nesting counter and cache switch, over ember.amp's state.

The per-device getters and setters are deprecated in torch in favour of the ones that take a
device type (ember.get_autocast_dtype("cpu")); they warn as torch does and read or write the
same state. The nesting counter is the one autocast regions count their depth in; leaving the
outermost region (or clear_autocast_cache) drops the cached casts.
"""
import warnings

from . import _dtype as D
from . import amp

__all__ = ["get_autocast_cpu_dtype", "get_autocast_gpu_dtype", "set_autocast_cpu_dtype",
           "set_autocast_gpu_dtype", "is_autocast_cpu_enabled", "set_autocast_cpu_enabled",
           "is_autocast_cache_enabled", "set_autocast_cache_enabled", "clear_autocast_cache",
           "autocast_increment_nesting", "autocast_decrement_nesting"]

_cache = {"enabled": True}


def _deprecated(old, new, line):
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead. (Triggered "
                  f"internally at /__w/pytorch/pytorch/torch/csrc/autograd/init.cpp:{line}.)",
                  DeprecationWarning, stacklevel=3)


def _check(value, kind, name):
    ok = isinstance(value, D.dtype) if kind == "dtype" else isinstance(value, bool)
    if not ok:
        what = "a torch.dtype" if kind == "dtype" else "a bool"
        raise TypeError(f"{name} must be {what} (got {type(value).__name__})")


def get_autocast_cpu_dtype():
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')", 1016)
    return amp.get_autocast_dtype("cpu")


def get_autocast_gpu_dtype():
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')", 1007)
    return amp.get_autocast_dtype("cuda")


def set_autocast_cpu_dtype(dtype):
    _check(dtype, "dtype", "dtype")
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)", 967)
    amp.set_autocast_dtype("cpu", dtype)


def set_autocast_gpu_dtype(dtype):
    _check(dtype, "dtype", "dtype")
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)", 952)
    amp.set_autocast_dtype("cuda", dtype)


def is_autocast_cpu_enabled():
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')", 883)
    return amp.is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled):
    _check(enabled, "bool", "enabled")
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)", 874)
    amp.set_autocast_enabled("cpu", enabled)


def is_autocast_cache_enabled():
    return _cache["enabled"]


def set_autocast_cache_enabled(enabled):
    _check(enabled, "bool", "enabled")
    _cache["enabled"] = enabled


def clear_autocast_cache():
    amp._state.cast_cache.clear()


def autocast_increment_nesting():
    amp._state.depth += 1
    return amp._state.depth


def autocast_decrement_nesting():
    amp._state.depth -= 1
    return amp._state.depth
