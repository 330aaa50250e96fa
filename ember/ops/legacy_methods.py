"""Tensor methods for old or low-level uses (legacy): storages (`storage()`, `storage_type()`,
`const_data_ptr()`, `is_set_to`), the deprecated `resize_as`, `map2_`, `module_load`,
`record_stream`, `grad_dtype` and `name`.

METHODS is bound onto Tensor by ember/ops/tensor_methods.py's table.
"""
import warnings

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
from . import views as V
from .._typed_storage import TypedStorage, storage_class
from .hashing import hash_tensor as _hash
from .ormqr import ormqr as _ormqr

__all__ = ["METHODS"]


def _type_error(method, arg, position, value):
    raise TypeError(f"{method}(): argument '{arg}' (position {position}) must be Tensor, not "
                    f"{type(value).__name__}")


def const_data_ptr(self):
    return self.data_ptr()


def is_set_to(self, tensor):
    """Do both tensors view the same memory with the same geometry?"""
    if not isinstance(tensor, Tensor):
        _type_error("is_set_to", "tensor", 1, tensor)
    return (self.untyped_storage() == tensor.untyped_storage()
            and self.storage_offset() == tensor.storage_offset()
            and self.shape == tensor.shape and self.stride() == tensor.stride())


def resize_as(self, the_template):
    """The deprecated non-inplace resize_as: a reshape to the template's shape (same number of
    elements), as a view."""
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    shape = tuple(the_template.shape)
    n = int(np.prod(shape))
    if n != self._data.size:
        raise RuntimeError(
            f"requested resize to {'x'.join(map(str, shape))} ({n} elements in total), but the "
            f"given tensor has a size of {'x'.join(map(str, self.shape))} ({self._data.size} "
            f"elements). autograd's resize can only change the shape of a given tensor, while "
            f"preserving the number of elements. ")
    return V._resize_view(self.contiguous(), shape=shape)


def map2_(self, x, y, callable):
    """self[i] = callable(self[i], x[i], y[i]), with x and y broadcast to self, in place."""
    if self._requires_grad or x._requires_grad or y._requires_grad:
        raise RuntimeError("Can't call map2_() on Variable that requires grad. Use "
                           "var.detach().map2_() instead.")
    data = self._data
    xs, ys = (other.expand(self.shape)._data for other in (x, y))   # torch's expand errors
    data[...] = np.vectorize(callable, otypes=[data.dtype])(data, xs, ys)
    return self


def module_load(self, other, assign=False):
    """What Module.load_state_dict swaps in for `self` (torch.__future__'s swap path): `other`
    itself with assign=True, else `self` with `other`'s values copied in."""
    if assign:
        return other.detach()
    return self.copy_(other).detach()


def record_stream(self, stream):
    if self._device.type == "cpu":
        raise NotImplementedError("Could not run 'aten::record_stream' with arguments from the "
                                  "'CPU' backend.")
    # CuPy's memory pool frees a block only once the streams using it are done: nothing to do


def storage_type(self):
    return storage_class(self._dtype)


def storage(self):
    TypedStorage._warn()
    return TypedStorage._of(self)


def _grad_dtype(self):
    if not self.is_leaf:
        raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
    extra = self._extra
    return extra.get("grad_dtype", self._dtype) if extra else self._dtype


def _set_grad_dtype(self, value):
    if value is not None and not isinstance(value, D.dtype):
        raise RuntimeError(f"grad_dtype must be a torch.dtype or None, but got "
                           f"{type(value).__name__}")
    if not self.is_leaf:
        raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
    if value is not None and value is not self._dtype:
        # torch then accumulates .grad in that dtype (or any, for None); ember's engine
        # accumulates a leaf's gradient in the leaf's own dtype only
        raise RuntimeError(f"ember: a grad_dtype other than the tensor's own dtype "
                           f"({self._dtype}) is not supported")
    self._get_extra()["grad_dtype"] = value


def ormqr(self, input2, input3, left=True, transpose=False):
    return _ormqr(self, input2, input3, left, transpose)


def hash_tensor(self, dim=None, *, keepdim=False, mode=0):
    return _hash(self, dim, keepdim=keepdim, mode=mode)


def _name(self):
    return None     # (torch's Tensor.name; ember has no named tensors)


METHODS = {
    "const_data_ptr": const_data_ptr, "is_set_to": is_set_to, "resize_as": resize_as,
    "map2_": map2_, "module_load": module_load, "record_stream": record_stream,
    "storage_type": storage_type, "storage": storage,
    "grad_dtype": property(_grad_dtype, _set_grad_dtype), "name": property(_name),
    "ormqr": ormqr, "hash_tensor": hash_tensor,
}
