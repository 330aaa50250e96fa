"""Model architectures with torchvision's module structure and names, so that a torchvision
state_dict (saved with torch.save, read with ember.load) loads into them unchanged."""
from .resnet import *  # noqa: F401,F403
from .resnet import __all__ as _resnet_all

__all__ = list(_resnet_all)
