"""The CUDA backend: CuPy (optional; bound only when a CUDA device is first used).

The module is written against a CuPy-like namespace bound by `bind`: the real `cupy` and
`cupyx` (see `ember._backend.backend`), or, in ember's tests, a stand-in over NumPy that
behaves like CuPy towards NumPy (tests/fake_cupy.py), so the device plumbing is exercised
without a GPU.
"""
import numpy as np

xp = None            # the cupy module, once bound
_cupyx = None
name = "cuda"


def bind(cupy_module, cupyx_module):
    global xp, _cupyx
    xp, _cupyx = cupy_module, cupyx_module


def to_host(array):
    return xp.asnumpy(array)


def from_host(array, index=0):
    """A device copy of a host array (or of an array on another CUDA device) on device
    `index`."""
    with xp.cuda.Device(index):
        return xp.asarray(array)


def scatter_add(target, index, values):
    _cupyx.scatter_add(target, index, values)


def scatter_max(target, index, values):
    _cupyx.scatter_max(target, index, values)


def scatter_min(target, index, values):
    _cupyx.scatter_min(target, index, values)


def scatter_multiply(target, index, values):
    """target[index] *= values, every repeated index multiplying in. CuPy's ufunc.at covers
    only some ufuncs: where multiply's is missing, the product is made on the host (a rare
    op: index_reduce/scatter_reduce with 'prod')."""
    try:
        xp.multiply.at(target, index, values)
    except (AttributeError, NotImplementedError, TypeError):
        host = xp.asnumpy(target)
        index = tuple(map(_host, index)) if isinstance(index, tuple) else _host(index)
        np.multiply.at(host, index, _host(values))
        target[...] = xp.asarray(host)


def _host(x):
    return xp.asnumpy(x) if isinstance(x, xp.ndarray) else x


def windows(array, window_shape, axis):
    return xp.lib.stride_tricks.sliding_window_view(array, window_shape, axis=axis)


def strided_view(array, shape, strides_bytes, offset_bytes, dtype=None):
    """A view of `array`'s memory from `offset_bytes` past its first element (negative: into
    the memory of the array it views), with the given geometry and (by default its) dtype."""
    return xp.ndarray(tuple(shape), dtype or array.dtype, memptr=array.data + offset_bytes,
                      strides=tuple(strides_bytes))


def as_strided(array, shape, strides_bytes):
    return xp.lib.stride_tricks.as_strided(array, shape=shape, strides=strides_bytes)
