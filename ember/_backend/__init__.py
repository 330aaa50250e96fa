"""The array module behind each device kind.

Every op receives `xp`, the array module of its inputs' device, and calls only functions that
NumPy and CuPy share. The few calls that differ between the two live here, so that adding a
backend never touches the ops.

The CUDA backend is CuPy's, bound when a CUDA device is first used. `use_cuda_module` binds
another CuPy-like module instead: ember's tests use it to run the device plumbing on the CPU
over a stand-in for CuPy (tests/fake_cupy.py); nothing else should call it.
"""
import numpy as np

from . import cupy_backend, numpy_backend

_BACKENDS = {"cpu": numpy_backend}
# the array module per device type, as the op registry looks it up on its hot path
ARRAY_MODULES = {"cpu": np}
# a stand-in CuPy bound by use_cuda_module: (module, device count), or None for the real one
_override = [None]


def backend(device_type):
    """The backend module for a device type ("cpu" or "cuda")."""
    try:
        return _BACKENDS[device_type]
    except KeyError:
        pass
    if device_type == "cuda":
        import cupy      # imported lazily: CuPy is optional
        import cupyx     # (optional, with CuPy)
        cupy_backend.bind(cupy, cupyx)
        _BACKENDS["cuda"] = cupy_backend
        return cupy_backend
    raise RuntimeError(f"Expected one of cpu, cuda device type at start of device string: "
                       f"{device_type}")


def of(xp):
    """The backend module whose array module is `xp` (what an op's forward receives)."""
    return numpy_backend if xp is np else backend("cuda")


def cupy_module():
    """The bound CuPy module (the real one, or the tests' stand-in)."""
    return backend("cuda").xp


def use_cuda_module(module, cupyx_module=None, device_count=1):
    """Test-only switch: run ember's CUDA devices on `module`, a CuPy-like namespace, as if
    `device_count` GPUs were present. `use_cuda_module(None)` restores the real CuPy."""
    _BACKENDS.pop("cuda", None)
    ARRAY_MODULES.pop("cuda", None)
    if module is None:
        _override[0] = None
        cupy_backend.bind(None, None)
        return
    cupy_backend.bind(module, cupyx_module or module)
    _BACKENDS["cuda"] = cupy_backend
    _override[0] = (module, device_count)


def cuda_available():
    if _override[0] is not None:
        return _override[0][1] > 0
    try:
        import cupy  # (optional dependency: cupy)
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def cuda_device_count():
    if _override[0] is not None:
        return _override[0][1]
    if not cuda_available():
        return 0
    import cupy  # (optional dependency: cupy)
    return cupy.cuda.runtime.getDeviceCount()


__all__ = ["backend", "of", "cupy_module", "use_cuda_module", "cuda_available",
           "cuda_device_count", "np"]
