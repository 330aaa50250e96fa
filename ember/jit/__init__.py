"""ember.jit: TorchScript's API for a library without a compiler.

ember runs every program eagerly in Python, so there is nothing to compile: `script(obj)` and
`trace(fn, example_inputs)` return `obj`/`fn` itself, and `ember.jit.script(model)(x)` runs the
model as it is (same parameters, same results). `trace` does what it can check eagerly: it runs
the function once on the example inputs (with `is_tracing()` True meanwhile), raising torch's
errors for missing inputs and for outputs a trace cannot hold. The decorators model code puts
on methods for the compiler (`ignore`, `unused`, `export`) leave them as they are,
`is_scripting()` is False, and `fork` runs the call at once.

Nothing is ever a ScriptModule or ScriptFunction (the classes exist for isinstance checks),
and no TorchScript archive is written or read: `save`/`load` raise an error naming
`ember.save`/`ember.load` (a model's state_dict or the module itself) as the way.
"""
import builtins
import collections
import contextlib
import os
import typing
import warnings

from ..futures import Future  # noqa: F401 (torch.jit.Future is torch.futures.Future)
from ..nn.modules.module import Module as _Module
from .._tensor import Tensor

Final = typing.Final
# `self.x = ember.jit.Attribute(value, type)`: eagerly, the (value, type) pair itself
Attribute = collections.namedtuple("Attribute", ["value", "type"])

_tracing = [False]


def _deprecated(name, instead="switch to `torch.compile` or `torch.export`"):
    # torch 2.13's DeprecationWarning for the TorchScript entry points (raised from inside
    # the library, so Python's default filters hide it, as torch's)
    warnings.warn(f"`torch.jit.{name}` is deprecated. Please {instead}.", DeprecationWarning)


class ScriptModule(_Module):
    """The class of scripted modules in torch; ember's `script` returns the module itself, so
    no module is one (`isinstance(m, ember.jit.ScriptModule)` is False)."""


class RecursiveScriptModule(ScriptModule):
    pass


class TracedModule(ScriptModule):
    pass


class TopLevelTracedModule(TracedModule):
    pass


class ScriptFunction:
    """The class of scripted functions in torch; never an ember function's class."""


class CompilationUnit:
    pass


def is_scripting():
    return False


def is_tracing():
    """True while `trace` runs the function on its example inputs."""
    return _tracing[0]


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """`obj` itself (a module, function or class): ember runs it eagerly."""
    _deprecated("script")
    if not callable(obj) and type(obj).__module__ == "builtins" and \
            not builtins.isinstance(obj, (list, dict)):
        raise TypeError(f"{type(obj)} is a built-in class")
    return obj


def script_method(fn):
    return fn


def _check_traced_output(out, strict):
    """torch's errors for what a trace cannot hold as its output."""
    if out is None:
        raise RuntimeError("The traced function didn't return any values! Side-effects are not "
                           "captured in traces, so it would be a no-op.")
    if builtins.isinstance(out, dict):
        if strict:
            raise RuntimeError(
                "Encountering a dict at the output of the tracer might cause the trace to be "
                "incorrect, this is only valid if the container structure does not change "
                "based on the module's inputs. Consider using a constant container instead "
                "(e.g. for `list`, use a `tuple` instead. for `dict`, use a `NamedTuple` "
                "instead). If you absolutely need this and know the side effects, pass "
                "strict=False to trace() to allow this behavior.")
        values = out.values()
    elif builtins.isinstance(out, (list, tuple)):
        values = out
    elif builtins.isinstance(out, Tensor):
        return
    else:
        raise RuntimeError("Only tensors, lists, tuples of tensors, or dictionary of tensors "
                           "can be output from traced functions")
    for value in values:
        _check_traced_output(value, strict)


def _run_traced(fn, args, kwargs, strict):
    _tracing[0], was = True, _tracing[0]
    try:
        out = fn(*args, **kwargs)
    finally:
        _tracing[0] = was
    _check_traced_output(out, strict)


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-05, strict=True, _force_outplace=False, _module_class=None,
          _compilation_unit=None, example_kwarg_inputs=None, _store_inputs=True):
    """`func` itself, after running it once on the example inputs (a tensor, a tuple of
    positional inputs, or `example_kwarg_inputs`, a dict of keyword inputs)."""
    _deprecated("trace")
    if not callable(func):
        raise RuntimeError("Could not get name of python class object")
    if example_kwarg_inputs is not None:
        if not builtins.isinstance(example_kwarg_inputs, dict):
            raise TypeError("example_kwarg_inputs should be a dict")
        _run_traced(func, (), example_kwarg_inputs, strict)
        return func
    # a single tensor is one positional input; anything else must be iterable (None and numbers
    # raise Python's TypeError, as in torch)
    args = (example_inputs,) if builtins.isinstance(example_inputs, Tensor) \
        else tuple(example_inputs)
    if builtins.isinstance(func, _Module):       # (torch traces a module's forward as a method)
        _deprecated("trace_method")
    _run_traced(func, args, {}, strict)
    return func


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None,
                 check_tolerance=1e-05, strict=True, _force_outplace=False, _module_class=None,
                 _compilation_unit=None, example_inputs_is_kwarg=False, _store_inputs=True):
    """`mod` itself, after running each named method on its example inputs."""
    _deprecated("trace_method")
    if not builtins.isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    for name, example in inputs.items():
        method = getattr(mod, name)
        if example_inputs_is_kwarg:
            _run_traced(method, (), example, strict)
        else:
            _run_traced(method, (example,) if builtins.isinstance(example, Tensor)
                        else tuple(example),
                        {}, strict)
    return mod


def ignore(drop=False, **kwargs):
    """Used bare (`@ignore`) or called (`@ignore(drop=...)`): the function unchanged."""
    if callable(drop):
        return drop
    if drop:
        warnings.warn(f"ignore(True) has been deprecated. TorchScript will now drop the "
                      f"function call on compilation. Use torch.jit.unused now. {kwargs}",
                      FutureWarning, stacklevel=2)
    return lambda fn: fn


def unused(fn):
    return fn


def export(fn):
    return fn


def interface(obj):
    return obj


def script_if_tracing(fn):
    return fn


def annotate(the_type, the_value):
    return the_value


def _overload_method(fn):
    return fn


def fork(func, *args, **kwargs):
    """Run func(*args, **kwargs) now (eagerly, in this thread); its Future holds the result."""
    _deprecated("fork", "use `torch.compile` instead")
    future = Future()
    future.set_result(func(*args, **kwargs))
    return future


def wait(future):
    return future.wait()


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """The module itself (nothing to fold): torch's errors for a module not in eval mode."""
    _deprecated("freeze", "use `torch.compile` instead")
    if not builtins.isinstance(mod, _Module):
        raise RuntimeError("Freezing expects a ScriptModule as input. Please use "
                           "torch.jit.script or torch.jit.trace to script your 'nn.Module'.")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. "
                           "Please call .eval() on your module before freezing.")
    return mod


def optimize_for_inference(mod, other_methods=None):
    """The module itself, put in eval mode (as torch's freezes it)."""
    _deprecated("optimize_for_inference", "use `torch.compile` instead")
    if not builtins.isinstance(mod, _Module):
        raise RuntimeError("optimize_for_inference expects a ScriptModule as input. Please use "
                           "torch.jit.script or torch.jit.trace to script your 'nn.Module'.")
    return mod.eval()


_NO_ARCHIVES = ("ember has no TorchScript, so it neither writes nor reads TorchScript "
                "archives: save a model with ember.save(model.state_dict(), f) (or "
                "ember.save(model, f)) and read it back with ember.load(f)")


def save(m, f, _extra_files=None):
    _deprecated("save", "switch to `torch.export`")
    raise RuntimeError(f"ember.jit.save: {_NO_ARCHIVES}")


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    _deprecated("load", "switch to `torch.export`")
    if builtins.isinstance(f, (str, os.PathLike)):       # torch's errors for a path it cannot open
        if not os.path.exists(f):
            raise ValueError(f"The provided filename {f} does not exist")
        if os.path.isdir(f):
            raise ValueError(f"The provided filename {f} is a directory")
    raise RuntimeError(f"ember.jit.load: {_NO_ARCHIVES}")


def enable_onednn_fusion(enabled):
    """Accepted: there is no fuser (so are set_fusion_strategy, fuser, optimized_execution)."""


def onednn_fusion_enabled():
    return False


_fusion_strategy = [[("STATIC", 2), ("DYNAMIC", 10)]]


def set_fusion_strategy(strategy):
    """Recorded only; returns the previous strategy, as torch."""
    previous, _fusion_strategy[0] = _fusion_strategy[0], list(strategy)
    return previous


@contextlib.contextmanager
def fuser(name):
    yield


@contextlib.contextmanager
def optimized_execution(should_optimize):
    yield


class Error(Exception):
    """The error a TorchScript `raise` produces (torch.jit.Error)."""


from ._typed_containers import isinstance  # noqa: E402,A001  (torch.jit.isinstance)
