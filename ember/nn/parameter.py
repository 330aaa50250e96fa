"""Parameter: a leaf Tensor that a Module registers as one of its learnable weights; Buffer; and
the placeholders lazy modules hold until their first forward (UninitializedParameter,
UninitializedBuffer).

A placeholder has a dtype, a device and requires_grad but no data: using its data raises, as in
PyTorch. The first forward of a lazy module materializes it in place (it becomes a Parameter / a
Tensor, the same object, so an optimizer built before still holds it).
"""
from .. import _dtype as D
from .._tensor import Tensor, Size, _rebuild_tensor
from ..ops.creation import empty
import copy


class Parameter(Tensor):
    """A Tensor subclass sharing the memory (and version counter) of the tensor it wraps.

    Ops on a Parameter return plain Tensors: the registry always builds results with
    `Tensor._make`, so only this constructor (and deepcopy/pickle) makes Parameters.
    """
    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        p = cls._make(data._data, data._dtype, data._device)
        p._version_counter = data._version_counter           # like torch's detach(): shared version counter
        if requires_grad:
            if not (data._dtype.is_floating_point or data._dtype.is_complex):
                raise RuntimeError("Only Tensors of floating point and complex dtype can "
                                   "require gradients")
            p._requires_grad = True
        return p

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self._requires_grad)
        if self._grad is not None:
            result._grad = self._grad.clone()
        if self.__dict__:
            result.__dict__.update(copy.deepcopy(self.__dict__, memo))
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self._host().copy(), self._dtype.name, str(self._device),
                                     self._requires_grad))


def _rebuild_parameter(array, dtype_name, device, requires_grad):
    return Parameter(_rebuild_tensor(array, dtype_name, device, False), requires_grad)


class Buffer(Tensor):
    """Marks a tensor to be registered as a buffer when assigned to a Module attribute."""
    __slots__ = ("persistent",)

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = empty(0)
        b = cls._make(data._data, data._dtype, data._device)
        b._version_counter = data._version_counter
        b.persistent = persistent
        return b

    def __init__(self, data=None, *, persistent=True):
        pass


_DATA_SLOT = Tensor.__dict__["_data"]        # Tensor's own storage for the array


def _use_error(cls_name, what):
    return ValueError(
        f"Attempted to use an uninitialized parameter in {what}. This error happens when you "
        f"are using a `LazyModule` or explicitly manipulating "
        f"`ember.nn.parameter.{cls_name}` objects. When using LazyModules Call `forward` with "
        f"a dummy batch to initialize the parameters before calling torch functions")


class UninitializedTensorMixin:
    """What UninitializedParameter and UninitializedBuffer share (see the module docstring)."""
    __slots__ = ()
    cls_to_become = None

    def __init__(self, *args, **kwargs):
        pass                                  # all done in __new__

    @property
    def _data(self):
        # every op reads a tensor's array: this is where using a placeholder fails
        raise _use_error(type(self).__name__, "an ember operation")

    @_data.setter
    def _data(self, array):
        _DATA_SLOT.__set__(self, array)

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually "
            "happens in `load_state_dict` when trying to load an uninitialized parameter into "
            "an initialized one. Call `forward` to initialize the parameters before accessing "
            "their attributes.")

    def size(self, dim=None):
        # PyTorch answers with the size of the empty tensor that stands in for the data
        return Size((0,)) if dim is None else (0,)[dim]

    def materialize(self, shape, device=None, dtype=None):
        """Give the placeholder data of `shape` (uninitialized values) and make it a
        `cls_to_become` (Parameter or Tensor), in place."""
        data = empty(shape, device=device or self._device, dtype=dtype or self._dtype)
        _DATA_SLOT.__set__(self, data._data)
        self._dtype, self._device = data._dtype, data._device
        self.__class__ = self.cls_to_become

    def to(self, *args, **kwargs):
        # a new placeholder with the converted dtype/device (Module.to, .double() ... use this)
        probe = empty(0, device=self._device, dtype=self._dtype).to(*args, **kwargs)
        return self._like(probe._dtype, probe._device)

    def double(self):
        return self.to(D.float64)

    def float(self):
        return self.to(D.float32)

    def half(self):
        return self.to(D.float16)

    def bfloat16(self):
        return self.to(D.bfloat16)

    def cpu(self):
        return self.to("cpu")

    @property
    def data(self):
        return self

    @data.setter
    def data(self, other):
        # Module._apply swaps in the converted placeholder
        if not isinstance(other, UninitializedTensorMixin):
            raise _use_error(type(self).__name__, "Tensor.data")
        self._dtype, self._device = other._dtype, other._device

    def detach(self):
        # the lazy module's state_dict holds the placeholder itself, as PyTorch's does
        return self

    def requires_grad_(self, requires_grad=True):
        raise _use_error(type(self).__name__, "Tensor.requires_grad_")

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = self._like(self._dtype, self._device)
        return memo[id(self)]

    def __reduce_ex__(self, protocol):
        return _rebuild_uninitialized, (type(self), self._requires_grad, str(self._device),
                                        self._dtype.name), self.__dict__

    def __repr__(self):
        return f"<{type(self).__name__}>"

    __str__ = __repr__


def _rebuild_uninitialized(cls, requires_grad, device, dtype_name):
    return cls(requires_grad, device, getattr(D, dtype_name))


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return Parameter.__new__(cls, empty(0, device=device, dtype=dtype), requires_grad)

    def _like(self, dtype, device):
        return type(self)(self._requires_grad, device, dtype)


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        data = empty(0, device=device, dtype=dtype)
        b = cls._make(data._data, data._dtype, data._device, requires_grad)
        b.persistent = persistent
        return b

    def _like(self, dtype, device):
        return type(self)(self._requires_grad, device, dtype, self.persistent)


def is_lazy(param):
    return isinstance(param, UninitializedTensorMixin)
