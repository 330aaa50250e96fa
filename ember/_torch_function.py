"""The `__torch_function__` protocol's checks and dispatch (has_torch_function,
handle_torch_function, ...), below the namespaces: nn.functional re-exports them as torch's
does, and ember.overrides (which walks ember's namespaces) adds the name resolution. See
ember/overrides.py for the protocol."""
import functools
import threading

from . import _torch_function_switch
from ._tensor import Tensor

# how an error names a function: ember.overrides puts its resolve_name here when imported
_NAMER = [lambda f: getattr(f, "__qualname__", repr(f))]


def _name_of(func):
    return _NAMER[0](func)


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
    raise TypeError(f"no implementation found for '{_name_of(public_api)}' on types that "
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
