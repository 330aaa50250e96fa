"""Parametrizations (torch.nn.utils.parametrize): `module.weight` computed on access as
f(original) by a chain of modules, with the original tensor(s) kept, and saved, under
`module.parametrizations.weight.original` (or `original0`, `original1`, ... when the first
parametrization takes several).

How: the module's class is swapped for a subclass made on the fly ("ParametrizedLinear"),
which gets a property per parametrized name; the property's getter runs the
ParametrizationList, its setter runs the right inverses. Removing the last parametrization
swaps the class back.
"""
from collections.abc import Sequence
from contextlib import contextmanager
from copy import deepcopy

from ..._tensor import Tensor
from ...autograd import grad_mode
from ..modules.container import ModuleDict, ModuleList
from ..parameter import Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations",
           "transfer_parametrizations_and_params"]

# inside `cached()`, each parametrized tensor is computed once: {(id(module), name): tensor}
_cache_depth = 0
_cache = {}


@contextmanager
def cached():
    """Compute each parametrized tensor at most once inside the block (nested blocks share
    the cache; it is emptied when the outermost one ends)."""
    global _cache_depth, _cache
    _cache_depth += 1
    try:
        yield
    finally:
        _cache_depth -= 1
        if not _cache_depth:
            _cache = {}


def _register_tensor(module, name, tensor):
    if isinstance(tensor, Parameter):
        module.register_parameter(name, tensor)
    else:
        module.register_buffer(name, tensor)


def _set_in_place(dest, src):
    """dest takes src's data, keeping its identity (an optimizer holding it keeps working)."""
    with grad_mode.no_grad():
        dest.set_(src)


def _right_inverse(module, value, missing_ok):
    """module.right_inverse(value); the identity where the module has none (or it raises
    NotImplementedError), if missing_ok."""
    inverse = getattr(module, "right_inverse", None)
    if inverse is None:
        if missing_ok:
            return value
        raise RuntimeError(f"parametrization {type(module).__name__} does not implement "
                           f"right_inverse.")
    if not missing_ok:
        return inverse(value)
    try:
        return inverse(value)
    except NotImplementedError:
        return value


def _checked_tensor(z):
    """A parametrization's output, which must be a tensor."""
    if not isinstance(z, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
    return z


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, in order, and its original tensor(s)."""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = original.shape, original.dtype
        # what to keep: the right inverses, last parametrization first, of the tensor
        with grad_mode.no_grad():
            new = original
            for module in reversed(list(self)):
                new = _right_inverse(module, new, missing_ok=True)
        if not isinstance(new, (Tensor, Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                             f"(list, tuple...). Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            for attr in ("dtype", "device"):
                if getattr(original, attr) != getattr(new, attr):
                    raise ValueError(
                        f"When `right_inverse` outputs one tensor, it may not change the "
                        f"{attr}.\noriginal.{attr}: {getattr(original, attr)}\n"
                        f"right_inverse(original).{attr}: {getattr(new, attr)}")
            _set_in_place(original, new)    # the same tensor object stays the original
            _register_tensor(self, "original", original)
        else:
            for i, t in enumerate(new):
                if not isinstance(t, Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of "
                                     "tensors (list, tuple...). Got element "
                                     f"{i} of the sequence with type {type(t).__name__}.")
                if isinstance(original, Parameter):
                    t = Parameter(t, original.requires_grad)
                t.requires_grad_(original.requires_grad)
                _register_tensor(self, f"original{i}", t)
        if not self.unsafe:
            z = _checked_tensor(self())
            for attr, value in (("dtype", dtype), ("shape", shape)):
                if getattr(z, attr) != value:
                    raise ValueError(
                        f"Registering a parametrization may not change the {attr} of the "
                        f"tensor, unless `unsafe` flag is enabled.\nunparametrized {attr}: "
                        f"{value}\nparametrized {attr}: {getattr(z, attr)}")

    def _originals(self):
        if self.is_tensor:
            return [self.original]
        return [getattr(self, f"original{i}") for i in range(self.ntensors)]

    def right_inverse(self, value):
        """Set the original(s) so that the parametrized tensor becomes `value` (the right
        inverses run last parametrization first)."""
        with grad_mode.no_grad():
            for module in reversed(list(self)):
                value = _right_inverse(module, value, missing_ok=False)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got "
                                     f"{type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype "
                                     f"{value.dtype} while `original` has dtype "
                                     f"{self.original.dtype}")
                _set_in_place(self.original, value)
                return
            if not isinstance(value, Sequence):
                raise ValueError(f"'right_inverse' must return a sequence of tensors. Got "
                                 f"{type(value).__name__}.")
            if len(value) != self.ntensors:
                raise ValueError(f"'right_inverse' must return a sequence of tensors of length "
                                 f"{self.ntensors}. Got a sequence of length {len(value)}.")
            for i, (t, original) in enumerate(zip(value, self._originals())):
                if not isinstance(t, Tensor):
                    raise ValueError("'right_inverse' must return a sequence of tensors or "
                                     "reference-type opaques. Got element "
                                     f"{i} of type {type(t).__name__}.")
                if original.dtype != t.dtype:
                    raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype "
                                     f"{t.dtype} while `original{i}` has dtype "
                                     f"{original.dtype}")
                _set_in_place(original, t)

    def forward(self):
        x = self[0](*self._originals())
        for module in list(self)[1:]:
            x = module(x)
        return x


def _deepcopy_plain(self, memo):
    """A deepcopy as copy.deepcopy makes without __deepcopy__ (pickling is refused below)."""
    if id(self) in memo:
        return memo[id(self)]
    replica = self.__new__(type(self))
    memo[id(self)] = replica
    replica.__dict__ = deepcopy(self.__dict__, memo)
    return replica


def _refuse_pickling(self):
    raise RuntimeError("Serialization of parametrized modules is only supported through "
                       "state_dict(). See:\nhttps://pytorch.org/tutorials/beginner/"
                       "saving_loading_models.html#saving-loading-a-general-checkpoint-for-"
                       "inference-and-or-resuming-training")


def _parametrized_class(cls):
    namespace = {"__getstate__": _refuse_pickling, "__module__": __name__}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = _deepcopy_plain
    return type(f"Parametrized{cls.__name__}", (cls,), namespace)


def _property(tensor_name):
    def get(self):
        parametrization = self.parametrizations[tensor_name]
        if not _cache_depth:
            return parametrization()
        key = (id(self), tensor_name)
        if _cache.get(key) is None:
            _cache[key] = parametrization()
        return _cache[key]

    def set_(self, value):
        self.parametrizations[tensor_name].right_inverse(value)
    return property(get, set_)


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Make `module.<tensor_name>` be parametrization(original); a second call on the same
    name chains another parametrization after the first."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            _check_chained(module, tensor_name, parametrization)
        chain = module.parametrizations[tensor_name]
        chain.append(parametrization)
        chain.unsafe |= unsafe
        return module
    if tensor_name not in module._buffers and tensor_name not in module._parameters:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    chain = ParametrizationList([parametrization], getattr(module, tensor_name),
                                unsafe=unsafe)
    delattr(module, tensor_name)
    if not is_parametrized(module):
        module.__class__ = _parametrized_class(type(module))
        module.parametrizations = ModuleDict()
    setattr(type(module), tensor_name, _property(tensor_name))
    module.parametrizations[tensor_name] = chain
    return module


def _check_chained(module, name, parametrization):
    """A parametrization added to a chain keeps the tensor's dtype and shape, and so does its
    right inverse."""
    y = getattr(module, name)
    x = _checked_tensor(parametrization(y))
    for attr in ("dtype", "shape"):
        if getattr(x, attr) != getattr(y, attr):
            raise ValueError(
                f"Registering a parametrization may not change the {attr} of the tensor, "
                f"unless the `unsafe` flag is enabled.\nmodule.{name}.{attr}: "
                f"{getattr(y, attr)}\nparametrization(module.{name}).{attr}: "
                f"{getattr(x, attr)}")
    if not hasattr(parametrization, "right_inverse"):
        return
    try:
        z = parametrization.right_inverse(x)
    except NotImplementedError:
        return
    if not isinstance(z, Tensor):
        raise ValueError(f"parametrization.right_inverse must return a tensor. Got: "
                         f"{type(z).__name__}")
    for attr in ("dtype", "shape"):
        if getattr(z, attr) != getattr(y, attr):
            raise ValueError(
                f"The tensor returned by parametrization.right_inverse must have the same "
                f"{attr} as module.{name}, unless the `unsafe` flag is enabled.\n"
                f"module.{name}.{attr}: {getattr(y, attr)}\nreturned {attr}: "
                f"{getattr(z, attr)}")


def is_parametrized(module, tensor_name=None):
    """Whether `module` has any parametrization (or one on `tensor_name`)."""
    parametrizations = getattr(module, "parametrizations", None)
    if not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else \
        tensor_name in parametrizations


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undo register_parametrization on `tensor_name`: the tensor becomes a plain parameter
    (or buffer) again, holding the parametrized value (leave_parametrized=True) or the
    original one."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    chain = module.parametrizations[tensor_name]
    if chain.is_tensor:
        original = chain.original
        if leave_parametrized:
            with grad_mode.no_grad():
                value = getattr(module, tensor_name)
            _set_in_place(original, value)
    elif leave_parametrized:
        value = getattr(module, tensor_name)
        original = Parameter(value) if value.requires_grad else value
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                         "that is parametrized in terms of a sequence of tensors.")
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    _register_tensor(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type(module).__bases__[0]
    return module


def type_before_parametrizations(module):
    """The module's class before register_parametrization swapped it."""
    return type(module).__bases__[0] if is_parametrized(module) else type(module)


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    """Register on `to_module` the parametrizations of `from_module` (all, or those of one
    tensor), sharing their original tensors; a missing tensor is created first."""
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        source = from_module.parametrizations[name]
        for parametrization in source:
            register_parametrization(to_module, name, parametrization)
        target = to_module.parametrizations[name]
        if hasattr(source, "original"):
            target.original = source.original
        else:
            for i in range(source.ntensors):
                setattr(target, f"original{i}", getattr(source, f"original{i}"))
    return to_module
