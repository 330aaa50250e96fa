"""Turning a list of samples into a batch, the way torch's default_collate does.

Tensors are stacked; NumPy arrays and NumPy scalars become tensors and are stacked; Python
floats become float64 tensors, ints int64, bools bool; strings and bytes stay a list; dicts,
named tuples and sequences are collated field by field (a tuple of fields comes back a list).
"""
import collections.abc

import numpy as np

from ... import _dtype, _tensor
from ...ops import creation as _creation
from ...ops.joining import stack as _stack

_TYPE_ERROR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
               "lists; found {}")


def default_collate(batch):
    elem = batch[0]
    elem_type = type(elem)
    if isinstance(elem, _tensor.Tensor):
        return _stack(list(batch), 0)
    if isinstance(elem, np.ndarray) or isinstance(elem, np.generic):
        if elem.dtype.kind in "SUO":     # strings or objects: NumPy arrays torch cannot hold
            raise TypeError(_TYPE_ERROR.format(elem.dtype))
        if isinstance(elem, np.generic) or elem.ndim == 0:
            return _creation.as_tensor(np.asarray(batch))
        return _stack([_creation.as_tensor(b) for b in batch], 0)
    if isinstance(elem, bool):
        return _creation.tensor(batch)
    if isinstance(elem, float):
        return _creation.tensor(batch, dtype=_dtype.float64)
    if isinstance(elem, int):
        return _creation.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return elem_type(collated)
        except TypeError:            # a mapping type that cannot be built from a dict
            return collated
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):     # a named tuple
        return elem_type(*(default_collate(field) for field in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        fields = [default_collate(field) for field in zip(*batch)]   # strings stay tuples
        if isinstance(elem, tuple):
            return fields
        try:
            return elem_type(fields)
        except TypeError:
            return fields
    raise TypeError(_TYPE_ERROR.format(elem_type))


def default_convert(data):
    """What a DataLoader without batching does to each sample: NumPy arrays become tensors."""
    if isinstance(data, _tensor.Tensor):
        return data
    if isinstance(data, np.ndarray):
        if data.dtype.kind in "SUO":
            return data
        return _creation.as_tensor(data)
    if isinstance(data, np.generic):
        return _creation.as_tensor(data)
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        converted = {key: default_convert(data[key]) for key in data}
        try:
            return type(data)(converted)
        except TypeError:
            return converted
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data
