"""ember.vision: computer-vision models for ember, shaped like torchvision's.

    from ember.vision import models
    model = models.resnet18()           # same modules and state_dict keys as torchvision's
"""
from . import models

__all__ = ["models"]
