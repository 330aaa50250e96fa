"""ember.utils: data loading (ember.utils.data), safetensors files (ember.utils.safetensors) and
hook handles (ember.utils.hooks)."""
from . import data, hooks, safetensors  # noqa: F401
