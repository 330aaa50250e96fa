"""ember.cuda.amp: the deprecated CUDA spellings of ember.amp's autocast, GradScaler and the
custom Function decorators. Each warns, as torch 2.13 does, that the device-generic
`ember.amp` form replaces it, then behaves as that form with device "cuda"."""
import warnings

from .. import _dtype as D
from .. import amp as _amp
from . import is_available

__all__ = ["amp_definitely_not_available", "autocast", "custom_bwd", "custom_fwd", "GradScaler"]


def _deprecated(old, new):
    # stacklevel 3: the caller of the function or constructor that called this
    warnings.warn(f"`torch.cuda.amp.{old}(args...)` is deprecated. Please use `{new}` instead.",
                  FutureWarning, stacklevel=3)


def amp_definitely_not_available():
    """True when there is no device CUDA autocast could run on."""
    return not is_available()


class autocast(_amp.autocast):
    """`torch.cuda.amp.autocast(...)`, i.e. `torch.amp.autocast("cuda", ...)`."""

    def __init__(self, enabled=True, dtype=D.float16, cache_enabled=True):
        _deprecated("autocast", "torch.amp.autocast('cuda', args...)")
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    """`torch.cuda.amp.GradScaler(...)`, i.e. `torch.amp.GradScaler("cuda", ...)`."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        _deprecated("GradScaler", "torch.amp.GradScaler('cuda', args...)")
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """`torch.amp.custom_fwd(..., device_type="cuda")`."""
    _deprecated("custom_fwd", "torch.amp.custom_fwd(args..., device_type='cuda')")
    return _amp.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd):
    """`torch.amp.custom_bwd(..., device_type="cuda")`."""
    _deprecated("custom_bwd", "torch.amp.custom_bwd(args..., device_type='cuda')")
    return _amp.custom_bwd(bwd, device_type="cuda")
