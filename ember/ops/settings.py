"""Global switches: deterministic algorithms, warn_always, default tensor type, flush denormal and
the interop thread count."""
import builtins
import warnings

from .. import _dtype as D
import os
from . import creation as _creation


# ----------------------------------------------------------------------------- global switches
_switches = {"deterministic": False, "deterministic_warn_only": False, "warn_always": False}


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Recorded as in torch; ember's NumPy kernels are deterministic anyway."""
    if not isinstance(mode, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be "
                        f"bool, not {type(mode).__name__}")
    if not isinstance(warn_only, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'warn_only' must be bool, "
                        f"not {type(warn_only).__name__}")
    _switches["deterministic"] = mode
    _switches["deterministic_warn_only"] = warn_only if mode else False


def are_deterministic_algorithms_enabled():
    return _switches["deterministic"]


def is_deterministic_algorithms_warn_only_enabled():
    return _switches["deterministic_warn_only"]


def set_warn_always(b):
    if not isinstance(b, bool):
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    _switches["warn_always"] = b


def is_warn_always_enabled():
    return _switches["warn_always"]


def set_default_tensor_type(t):
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives. "
                  "(Triggered internally at /__w/pytorch/pytorch/torch/csrc/tensor/"
                  "python_tensor.cpp:434.)", UserWarning, stacklevel=2)
    name = t if isinstance(t, str) else "torch." + t.__name__
    dtype = _creation.legacy_type_dtype(name)
    if dtype._category != 2:
        raise TypeError("only floating-point types are supported as the default type")
    D.set_default_dtype(dtype)


# ----------------------------------------------------------------------------- runtime settings
def set_flush_denormal(mode):
    """Whether the CPU can flush denormals (x86 and ARM can: True). (NumPy arithmetic in ember
    keeps denormals either way.)"""
    return True


_interop_threads = [None]


def get_num_interop_threads():
    """As set, else torch's default: one per usable CPU."""
    usable = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else \
        builtins.range(os.cpu_count())
    return _interop_threads[0] or len(usable)


def set_num_interop_threads(num):
    """Settable once (ember runs no inter-op threads: the number is recorded only)."""
    if isinstance(num, bool) or not isinstance(num, int):
        raise RuntimeError(f"set_num_interop_threads expects an int, but got "
                           f"{type(num).__name__}")
    if num <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if _interop_threads[0] is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work "
                           "has started or set_num_interop_threads called")
    _interop_threads[0] = num


def init_num_threads():
    return None


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode):
    """The deterministic switches by number or name: 0 "default" (off), 1 "warn" (on, warning
    only), 2 "error" (on)."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    elif debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    if not _switches["deterministic"]:
        return 0
    return 1 if _switches["deterministic_warn_only"] else 2


__all__ = ['set_flush_denormal', 'get_num_interop_threads', 'set_num_interop_threads',
               'init_num_threads', 'use_deterministic_algorithms',
               'are_deterministic_algorithms_enabled',
               'is_deterministic_algorithms_warn_only_enabled', 'set_warn_always',
               'is_warn_always_enabled', 'set_default_tensor_type',
               'set_deterministic_debug_mode', 'get_deterministic_debug_mode']
