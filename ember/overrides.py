"""ember.overrides: the `__torch_function__` protocol's helpers, for libraries that define
tensor-like types and for functions that let such types take over (`handle_torch_function`).

A type takes part by defining a `__torch_function__(cls, func, types, args=(), kwargs=None)`
classmethod; plain ember tensors do not count as overriding. ember's own ops do not consult
the protocol: these helpers serve code written against it (the pattern
`if has_torch_function(args): return handle_torch_function(fn, args, *args)`).
"""
import functools
import threading
import ember
from . import _torch_function_switch
from ._tensor import Tensor

__all__ = ["handle_torch_function", "has_torch_function", "has_torch_function_unary",
           "has_torch_function_variadic", "is_tensor_like", "is_tensor_method_or_property",
           "redispatch_function", "resolve_name", "wrap_torch_function"]


class _Redispatch(threading.local):
    skip = False            # the next has_torch_function check answers False (once)


_redispatch = _Redispatch()


def _skipped():
    if _redispatch.skip:
        _redispatch.skip = False
        return True
    return False


def _tensor_class():
    return Tensor


def _overrides(obj):
    """Does obj's type take part in the protocol (a plain tensor does not; nothing does under
    ember.DisableTorchFunction)?"""
    if _torch_function_switch.is_disabled():
        return False
    t = type(obj)
    return t is not _tensor_class() and hasattr(t, "__torch_function__")


def has_torch_function(relevant_args):
    return not _skipped() and any(_overrides(a) for a in relevant_args)


def has_torch_function_unary(obj):
    return not _skipped() and _overrides(obj)


def has_torch_function_variadic(*args):
    return has_torch_function(args)


def is_tensor_like(inp):
    """A tensor, or an object whose type implements __torch_function__."""
    return type(inp) is _tensor_class() or hasattr(type(inp), "__torch_function__")


def _overloaded_args(relevant_args):
    """The arguments whose types override, one per type, each subclass ahead of its bases."""
    args, types = [], []
    for a in relevant_args:
        t = type(a)
        if t in types or not _overrides(a):
            continue
        # a subclass goes before the first of its base classes already collected
        at = next((i for i, seen in enumerate(types) if issubclass(t, seen)), len(types))
        types.insert(at, t)
        args.insert(at, a)
    return args


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Call the __torch_function__ of the overriding types in relevant_args in turn; the first
    result other than NotImplemented is the answer."""
    overloaded = _overloaded_args(relevant_args)
    types = tuple(type(a) for a in overloaded)
    for a in overloaded:
        result = type(a).__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    raise TypeError(f"no implementation found for '{resolve_name(public_api)}' on types that "
                    f"implement __torch_function__: {[type(a) for a in overloaded]}")


def redispatch_function(func, types, args, kwargs):
    """From inside a __torch_function__: call func itself, skipping the protocol for this one
    call (its own has_torch_function check answers False) while the calls it makes still
    dispatch."""
    previous = _redispatch.skip
    _redispatch.skip = True
    try:
        return func(*args, **(kwargs or {}))
    finally:
        _redispatch.skip = previous


def wrap_torch_function(dispatcher):
    """Decorator: the function's `dispatcher(*args, **kwargs)` names its relevant arguments;
    when one of them overrides, the call goes to handle_torch_function."""
    def decorate(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return decorate


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
