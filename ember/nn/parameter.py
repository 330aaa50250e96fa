"""Parameter: a leaf Tensor that a Module registers as one of its learnable weights."""
from .._tensor import Tensor, _rebuild_tensor


class Parameter(Tensor):
    """A Tensor subclass sharing the memory (and version counter) of the tensor it wraps.

    Ops on a Parameter return plain Tensors: the registry always builds results with
    `Tensor._make`, so only this constructor (and deepcopy/pickle) makes Parameters.
    """
    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from ..ops.creation import empty
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
            import copy
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
            from ..ops.creation import empty
            data = empty(0)
        b = cls._make(data._data, data._dtype, data._device)
        b._version_counter = data._version_counter
        b.persistent = persistent
        return b

    def __init__(self, data=None, *, persistent=True):
        pass


def is_lazy(param):
    from .modules.lazy import is_lazy as lazy       # the lazy placeholders live with LazyLinear...
    return lazy(param)


def __getattr__(name):
    # UninitializedParameter/-Buffer, defined with the lazy modules (importing them here would
    # be an import cycle)
    if name in ("UninitializedParameter", "UninitializedBuffer", "UninitializedTensorMixin"):
        from .modules import lazy
        return getattr(lazy, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
