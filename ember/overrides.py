"""ember.overrides: the `__torch_function__` protocol's helpers, for libraries that define
tensor-like types and for functions that let such types take over (`handle_torch_function`).

A type takes part by defining a `__torch_function__(cls, func, types, args=(), kwargs=None)`
classmethod; plain ember tensors do not count as overriding. ember's own ops do not consult
the protocol: these helpers serve code written against it (the pattern
`if has_torch_function(args): return handle_torch_function(fn, args, *args)`).
"""
import ember
from . import _torch_function
from ._torch_function import (  # noqa: F401  (the protocol's checks, re-exported)
    handle_torch_function, has_torch_function, has_torch_function_unary,
    has_torch_function_variadic, is_tensor_like, redispatch_function, wrap_torch_function,
    _tensor_class)

__all__ = ["handle_torch_function", "has_torch_function", "has_torch_function_unary",
           "has_torch_function_variadic", "is_tensor_like", "is_tensor_method_or_property",
           "redispatch_function", "resolve_name", "wrap_torch_function"]


def _namespaces():
    return (("torch", ember), ("torch.nn.functional", ember.nn.functional),
            ("torch.linalg", ember.linalg), ("torch.fft", ember.fft),
            ("torch.special", ember.special))


def _is_namespace_function(func):
    name = getattr(func, "__name__", None)
    return name is not None and any(getattr(ns, name, None) is func for _, ns in _namespaces())


def is_tensor_method_or_property(func):
    """Is func a Tensor method, or the getter of a Tensor property? A few ember functions are
    one object serving as both `torch.add` and `torch.Tensor.add`; they answer as the
    namespace function (False), as torch.add does."""
    if _is_namespace_function(func):
        return False
    Tensor = _tensor_class()
    for name in dir(Tensor):
        attr = getattr(Tensor, name, None)
        if attr is func or (isinstance(attr, property) and attr.fget is func):
            return True
    return getattr(func, "__name__", None) == "__get__"


def resolve_name(f):
    """The torch-style dotted name of an API function ("torch.add", "torch.Tensor.add"), or
    None for a function that is not part of the API."""
    name = getattr(f, "__name__", None)
    if name is None:
        return None
    if name == "__get__":                      # a property getter, as torch passes them
        owner = getattr(f, "__self__", None)
        prop = getattr(owner, "__name__", None) or getattr(owner, "fget", None).__name__ \
            if owner is not None else None
        return f"torch.Tensor.{prop}.__get__" if prop else None
    for prefix, ns in _namespaces():
        if getattr(ns, name, None) is f:
            return f"{prefix}.{name}"
    if getattr(_tensor_class(), name, None) is f:
        return f"torch.Tensor.{name}"
    return None


_torch_function._NAMER[0] = resolve_name
