"""The array module behind each device kind.

Every op receives `xp`, the array module of its inputs' device, and calls only functions that
NumPy and CuPy share. The few calls that differ between the two live here, so that adding a
backend never touches the ops.
"""
import numpy as np

from . import numpy_backend

_BACKENDS = {"cpu": numpy_backend}


def backend(device_type):
    """The backend module for a device type ("cpu" or "cuda")."""
    try:
        return _BACKENDS[device_type]
    except KeyError:
        pass
    if device_type == "cuda":
        from . import cupy_backend   # imported lazily: CuPy is optional
        _BACKENDS["cuda"] = cupy_backend
        return cupy_backend
    raise RuntimeError(f"Expected one of cpu, cuda device type at start of device string: "
                       f"{device_type}")


def of(xp):
    """The backend module whose array module is `xp` (what an op's forward receives)."""
    return numpy_backend if xp is np else backend("cuda")


def cuda_available():
    try:
        import cupy  # noqa: F401
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def cuda_device_count():
    if not cuda_available():
        return 0
    import cupy  # (optional dependency: cupy)
    return cupy.cuda.runtime.getDeviceCount()


__all__ = ["backend", "of", "cuda_available", "cuda_device_count", "np"]
