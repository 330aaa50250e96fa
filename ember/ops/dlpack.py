"""DLPack exchange: from_dlpack and to_dlpack."""
import numpy as np

from .. import _dtype as D
from .._device import as_device
from .._tensor import Tensor


# ----------------------------------------------------------------------------- DLPack
class _Capsule:
    """A bare DLPack capsule (as to_dlpack returns) in the protocol NumPy reads."""
    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)       # kDLCPU


def from_dlpack(ext_tensor, *, device=None, copy=None):
    """A tensor sharing the memory of any object exporting DLPack (NumPy's reader)."""
    source = ext_tensor if hasattr(ext_tensor, "__dlpack__") else _Capsule(ext_tensor)
    data = np.from_dlpack(source, copy=copy) if copy is not None else np.from_dlpack(source)
    return Tensor._make(data, D._FROM_NUMPY[data.dtype], as_device(device))


def to_dlpack(tensor):
    return tensor._data.__dlpack__()


__all__ = ['from_dlpack', 'to_dlpack']
