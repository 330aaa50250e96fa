"""Turning what the SummaryWriter methods accept (ember tensors, NumPy arrays, Python numbers)
into NumPy arrays, and images of any layout into one HWC array, as torch's writer does."""
import math

import numpy as np

from ..._tensor import Tensor
from ... import bfloat16


def make_np(x):
    """A NumPy array of `x`: arrays as they are, scalars (numbers, strings) as 1-element
    arrays, tensors detached. bfloat16 goes through float16 (torch's writer does the same,
    so a bfloat16 beyond float16's range logs inf there too)."""
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    if isinstance(x, Tensor):
        x = x.detach()
        if x.dtype == bfloat16:
            x = x.half()
        return x.cpu().numpy()
    raise NotImplementedError(f"Got {type(x)}, but numpy array or torch tensor are expected.")


def make_grid(images, ncols=8):
    """N images (NCHW, 1 or 3 channels) tiled row by row into one CHW image, `ncols` (at most
    N) to a row, with black where the last row runs out."""
    assert isinstance(images, np.ndarray), "plugin error, should pass numpy array here"
    if images.shape[1] == 1:
        images = np.concatenate([images, images, images], 1)
    assert images.ndim == 4 and images.shape[1] == 3, \
        "Input should be a 4D numpy array with 3 channels"
    n, _, height, width = images.shape
    ncols = min(n, ncols)
    nrows = math.ceil(n / ncols)
    canvas = np.zeros((3, height * nrows, width * ncols), dtype=images.dtype)
    for i in range(n):
        row, col = divmod(i, ncols)
        canvas[:, row * height:(row + 1) * height, col * width:(col + 1) * width] = images[i]
    return canvas


def to_hwc(array, dataformats):
    """`array` laid out as `dataformats` (letters N, C, H, W) as an HWC image with 3 channels
    where it had 1 or none; a batch (N) becomes a grid."""
    # (torch's messages carry a run of spaces in the middle: kept, as tests compare them)
    assert len(set(dataformats)) == len(dataformats), (
        "You can not use the same dimension shorthand twice." + " " * 13
        + f"input_format: {dataformats}")
    assert len(array.shape) == len(dataformats), (
        "size of input tensor and input format are different." + " " * 9
        + f"tensor shape: {array.shape}, input_format: {dataformats}")
    dataformats = dataformats.upper()
    # a letter missing from dataformats finds -1, the last axis, as NumPy reads it
    if len(dataformats) == 4:
        nchw = array.transpose([dataformats.find(c) for c in "NCHW"])
        return make_grid(nchw).transpose(1, 2, 0)
    if len(dataformats) == 3:
        hwc = array.transpose([dataformats.find(c) for c in "HWC"])
        if hwc.shape[2] == 1:
            hwc = np.concatenate([hwc, hwc, hwc], 2)
        return hwc
    if len(dataformats) == 2:
        hw = array.transpose([dataformats.find(c) for c in "HW"])
        return np.stack([hw, hw, hw], 2)
    return array
