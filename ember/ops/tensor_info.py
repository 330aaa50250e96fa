"""Questions about a tensor and its storage (typename, is_nonzero, is_same_size, is_signed,
is_inference, get_device, is_storage, ...) and the storage-level methods (pin_memory,
share_memory_, set_, as_subclass, apply_, map_)."""
import numpy as np

from .. import _dtype as D
from .._tensor import Tensor, is_inference as _is_inference_tensor, contiguous_strides
from . import views as V
from ._pointwise_common import CPP_NAMES
from .views import as_strided
from .._storage import UntypedStorage
from .. import _shared_memory
from .._tensor import _copy_into_subclass
from ..autograd import grad_mode
from .registry import check_inplace_allowed


def _as_int64(a):
    return Tensor._make(np.asarray(a, dtype=np.int64), D.int64)


def typename(obj):
    if isinstance(obj, Tensor):
        return obj.type()
    cls = obj if isinstance(obj, type) else type(obj)
    if cls.__module__ in ("builtins", None):
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def is_nonzero(input):
    return input.is_nonzero()


def is_same_size(input, other):
    return input.is_same_size(other)


def is_signed(input):
    return input.is_signed()


def is_inference(input):
    return _is_inference_tensor(input)      # (made in inference mode, or a view of one)


def apply_(self, callable):
    """Apply a Python callable to each element, in place (CPU only, as torch)."""
    if self._requires_grad:
        raise RuntimeError("Can't call apply_() on Variable that requires grad. Use "
                           "var.detach().apply_() instead.")
    data = self._data
    data[...] = np.vectorize(callable, otypes=[data.dtype])(data)
    return self


def map_(self, other, callable):
    """self[i] = callable(self[i], other[i]) with other broadcast to self, in place."""
    if self._requires_grad or other._requires_grad:
        raise RuntimeError("Can't call map_() on Variable that requires grad. Use "
                           "var.detach().map_() instead.")
    data = self._data
    data[...] = np.vectorize(callable, otypes=[data.dtype])(
        data, np.broadcast_to(other._data, data.shape))
    return self


def is_pinned(self, device=None):
    return False


def pin_memory(self, device=None):
    raise RuntimeError("Cannot access accelerator device when none is available.")


def is_shared(self):
    return _shared_memory.is_shared(self)


def share_memory_(self):
    """Move this tensor's storage into memory that other processes can map (ember._shared_memory)."""
    _shared_memory.share_storages([self])
    return self


def set_(self, source=None, storage_offset=0, size=None, stride=None):
    """Make self use source's memory (all of it, or a strided window of it), in place."""
    if grad_mode.state.enabled and self._requires_grad:
        check_inplace_allowed(self)
        if self._grad_fn is not None:
            raise RuntimeError("ember: set_() on a tensor with autograd history is not "
                               "supported")
    if source is None:
        data = np.empty(0, self._dtype.np)
    else:
        if source._dtype is not self._dtype:
            raise RuntimeError(f"Could not set tensor of type "
                               f"{CPP_NAMES[source._dtype.name]} to a tensor of type "
                               f"{CPP_NAMES[self._dtype.name]}")
        data = source._data
        if size is not None:
            if stride is None:
                stride = contiguous_strides(tuple(size))
            data = as_strided(source.detach(), tuple(size), tuple(stride),
                                storage_offset)._data
    self._data = data
    self._version_counter.bump()
    return self


def as_subclass(self, cls):
    """self's data and history as an instance of a Tensor subclass (an alias, as torch)."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from "
                        "Tensor is not possible. Make sure your class inherits from Tensor.")
    return _copy_into_subclass(object.__new__(cls), V._alias(self))


def get_device(input):
    return input.get_device()


def is_storage(obj):
    return isinstance(obj, UntypedStorage)


__all__ = ['is_storage', 'typename', 'is_nonzero', 'is_same_size', 'is_signed', 'is_inference',
               'get_device']
