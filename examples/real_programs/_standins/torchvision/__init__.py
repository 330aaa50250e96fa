"""A stand-in for the few torchvision pieces the real-program runners need.

Not torchvision: synthetic, deterministic data sets (NumPy-generated, so a torch run and an ember
run see the same pixels) and the handful of transforms the programs use. ``torch`` here is
whichever library the harness made ``torch`` mean.
"""
from . import datasets, models, transforms, utils  # noqa: F401
