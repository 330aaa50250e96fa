"""ember.cuda: availability of the CUDA backend (CuPy), and the deprecated ember.cuda.amp."""
from .. import _backend


def is_available():
    return _backend.cuda_available()


def device_count():
    return _backend.cuda_device_count()


def current_device():
    if not is_available():
        raise AssertionError("Torch not compiled with CUDA enabled")
    return 0


def synchronize(device=None):
    if is_available():
        import cupy
        cupy.cuda.Device().synchronize()


def manual_seed(seed):
    pass


def manual_seed_all(seed):
    pass


def is_bf16_supported():
    return is_available()


from . import amp  # noqa: E402  (ember.cuda.amp reads is_available from this package)
