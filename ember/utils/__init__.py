"""ember.utils: data loading (ember.utils.data), safetensors files (ember.utils.safetensors) and
hook handles (ember.utils.hooks)."""
from . import data, hooks, safetensors  # noqa: F401


def set_module(obj, mod):
    """Set obj.__module__ (for nicer printing), as torch.utils.set_module does."""
    if not isinstance(mod, str):
        raise TypeError("The mod argument should be a string")
    obj.__module__ = mod
