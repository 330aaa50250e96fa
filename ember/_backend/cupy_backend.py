"""The CUDA backend: CuPy (optional; imported only when a CUDA device is used)."""
import cupy as cp
import cupyx
from cupy.lib.stride_tricks import as_strided as _cp_as_strided
import numpy as np

xp = cp
name = "cuda"


def to_host(array):
    return cp.asnumpy(array)


def from_host(array):
    return cp.asarray(array)


def scatter_add(target, index, values):
    cupyx.scatter_add(target, index, values)


def scatter_multiply(target, index, values):
    """target[index] *= values, every repeated index multiplying in. CuPy's ufunc.at covers
    only some ufuncs: where multiply's is missing, the product is made on the host."""
    try:
        cp.multiply.at(target, index, values)
    except (AttributeError, NotImplementedError, TypeError):
        host = cp.asnumpy(target)
        index = tuple(map(_host, index)) if isinstance(index, tuple) else _host(index)
        np.multiply.at(host, index, _host(values))
        target[...] = cp.asarray(host)


def _host(x):
    return cp.asnumpy(x) if isinstance(x, cp.ndarray) else x


def windows(array, window_shape, axis):
    from cupy.lib.stride_tricks import sliding_window_view  # (optional dependency: cupy)
    return sliding_window_view(array, window_shape, axis=axis)


def as_strided(array, shape, strides_bytes):
    return _cp_as_strided(array, shape=shape, strides=strides_bytes)
