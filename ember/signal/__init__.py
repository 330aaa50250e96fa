"""ember.signal (torch.signal): signal-processing windows."""
from . import windows  # noqa: F401
