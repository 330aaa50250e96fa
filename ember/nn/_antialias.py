"""Anti-aliased resampling weights (`interpolate(..., antialias=True)`, and mode 'lanczos').

Each output pixel i is a normalised weighted sum of the input pixels near its centre
c = ratio * (i + 0.5) (in input pixel units, ratio = input / output size). When downsampling
(ratio > 1) the filter is stretched by `ratio`, so it averages over every input pixel the output
pixel covers instead of sampling a few; when upsampling it is the plain filter. The taps run over
the pixels j with int(c - support + 0.5) <= j < int(c + support + 0.5), and the weights of a
row are divided by their sum. The result is one (out x in) matrix per axis, which
`_conv._axes_op` applies separably (and transposes for the backward).
"""
import numpy as np

# each filter's width in input pixels when not stretched (torch's interp_size)
_TAPS = {"bilinear": 2, "bicubic": 4, "lanczos": 6}


def _filter(mode, x):
    x = np.abs(x)
    if mode == "bilinear":                            # a triangle
        return np.where(x < 1, 1 - x, 0)
    if mode == "bicubic":                             # Keys' cubic with a = -0.5 (not -0.75)
        a = -0.5
        near = ((a + 2) * x - (a + 3)) * x * x + 1
        far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return np.where(x < 1, near, np.where(x < 2, far, 0))
    # Lanczos-3: sinc(x) sinc(x / 3) on |x| < 3
    px = np.pi * np.where(x == 0, 1, x)
    return np.where(x == 0, 1, np.where(x < 3, 3 * np.sin(px) * np.sin(px / 3) / (px * px), 0))


def antialias_matrix(n, out, scale, align_corners, mode, opmath):
    """The (out x n) resampling matrix of one axis, computed in `opmath` (the input's float
    type) as torch computes its weights."""
    if align_corners:
        ratio = opmath((n - 1) / (out - 1)) if out > 1 else opmath(0)
    else:
        ratio = opmath(1.0 / scale) if scale is not None and scale > 0 \
            else opmath(n) / opmath(out)
    stretch = ratio if ratio >= 1 else opmath(1)
    support = opmath(_TAPS[mode] / 2) * stretch
    centre = ratio * (np.arange(out, dtype=opmath) + opmath(0.5))
    # (C++ truncation toward zero; a negative start is clamped to 0 anyway)
    lo = np.maximum((centre - support + opmath(0.5)).astype(np.int64), 0)
    hi = np.minimum((centre + support + opmath(0.5)).astype(np.int64), n)
    cols = np.arange(n)
    taps = (cols >= lo[:, None]) & (cols < hi[:, None])
    offsets = (cols.astype(opmath) - centre[:, None] + opmath(0.5)) * (opmath(1) / stretch)
    w = np.where(taps, _filter(mode, offsets).astype(opmath), opmath(0))
    total = w.sum(axis=1, keepdims=True)
    return np.where(total != 0, w / np.where(total != 0, total, 1), 0).astype(opmath)


# the autograd node of each mode (its backward's node adds "Backward" before the "0")
NODES = {"bilinear": "UpsampleBilinear2DAaBackward0", "bicubic": "UpsampleBicubic2DAaBackward0",
         "lanczos": "UpsampleLanczos2DAaBackward0"}
