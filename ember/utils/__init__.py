"""ember.utils: data loading (ember.utils.data) and safetensors files (ember.utils.safetensors)."""
from . import data, safetensors  # noqa: F401
