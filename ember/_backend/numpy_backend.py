"""The CPU backend: NumPy."""
import numpy as np
from numpy.lib.stride_tricks import as_strided as _np_as_strided, sliding_window_view

xp = np
name = "cpu"


def to_host(array):
    return array


def from_host(array, index=None):
    return array


def scatter_add(target, index, values):
    """target[index] += values, accumulating repeated indices."""
    np.add.at(target, index, values)


def scatter_multiply(target, index, values):
    """target[index] *= values, every repeated index multiplying in."""
    np.multiply.at(target, index, values)


def scatter_max(target, index, values):
    """target[index] = max(target[index], values), over repeated indices too."""
    np.maximum.at(target, index, values)


def scatter_min(target, index, values):
    np.minimum.at(target, index, values)


def windows(array, window_shape, axis):
    """Read-only strided sliding windows (no copy)."""
    return sliding_window_view(array, window_shape, axis=axis)


def as_strided(array, shape, strides_bytes):
    flags = array.flags
    if flags.c_contiguous and flags.writeable:
        # an ndarray over the array's buffer: ~15x faster than NumPy's as_strided. It refuses
        # a geometry reaching past the array (a view's base storage may extend further).
        try:
            return np.ndarray(shape, array.dtype, array, 0, strides_bytes)
        except ValueError:
            pass
    return _np_as_strided(array, shape=shape, strides=strides_bytes, writeable=True)
