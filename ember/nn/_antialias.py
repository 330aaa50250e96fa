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


def antialias_matrix(n, out, scale, align_corners, mode, opmath, antialias=True):
    """The (out x n) resampling matrix of one axis, computed in `opmath` (the input's float
    type) as torch computes its weights. antialias=False is torch's uint8 bilinear without
    antialiasing: the filter is not stretched, and with align_corners the centres shift by
    half a pixel (pixel i samples input i * ratio)."""
    if align_corners:
        ratio = opmath((n - 1) / (out - 1)) if out > 1 else opmath(0)
    else:
        ratio = opmath(1.0 / scale) if scale is not None and scale > 0 \
            else opmath(n) / opmath(out)
    stretch = ratio if ratio >= 1 and antialias else opmath(1)
    support = opmath(_TAPS[mode] / 2) * stretch
    shift = opmath(0.5) if align_corners and not antialias else opmath(0)
    centre = ratio * (np.arange(out, dtype=opmath) + opmath(0.5) - shift)
    # (C++ truncation toward zero; a negative start is clamped to 0 anyway)
    lo = np.maximum((centre - support + opmath(0.5) + shift).astype(np.int64), 0)
    hi = np.minimum((centre + support + opmath(0.5) + shift).astype(np.int64), n)
    cols = np.arange(n)
    taps = (cols >= lo[:, None]) & (cols < hi[:, None])
    offsets = (cols.astype(opmath) - centre[:, None] + opmath(0.5) - shift) \
        * (opmath(1) / stretch)
    w = np.where(taps, _filter(mode, offsets).astype(opmath), opmath(0))
    total = w.sum(axis=1, keepdims=True)
    return np.where(total != 0, w / np.where(total != 0, total, 1), 0).astype(opmath)


def _to_fixed_point(w):
    """Weights as integers scaled by 2**bits: as many bits (at most 22) as keep the largest
    weight, doubled, under 2**15 (they are int16 in torch's kernel); rounded half away from 0."""
    largest = w.max()
    bits = next((b for b in range(22) if int(0.5 + largest * (1 << (b + 1))) >= 1 << 15), 22)
    scaled = w * (1 << bits)
    return np.trunc(scaled + np.where(scaled < 0, -0.5, 0.5)).astype(np.int64), bits


def fixed_point_resample(x, mats):
    """torch's uint8 resampling (Pillow's algorithm): one pass per axis whose size changes, the
    last axis first, each in integers with fixed-point weights, rounded and clamped to 0..255
    before the next pass."""
    d = len(mats)
    for k in range(d - 1, -1, -1):
        axis = x.ndim - d + k
        if mats[k].shape[0] == mats[k].shape[1]:       # an axis of unchanged size is skipped
            continue
        w, bits = _to_fixed_point(mats[k])
        y = np.moveaxis(np.tensordot(x.astype(np.int64), w, axes=([axis], [1])), -1, axis)
        x = np.clip((y + (1 << (bits - 1))) >> bits, 0, 255).astype(np.uint8)
    return np.ascontiguousarray(x)


# the autograd node of each mode (its backward's node adds "Backward" before the "0")
NODES = {"bilinear": "UpsampleBilinear2DAaBackward0", "bicubic": "UpsampleBicubic2DAaBackward0",
         "lanczos": "UpsampleLanczos2DAaBackward0"}
