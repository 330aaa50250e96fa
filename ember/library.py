"""ember.library: torch.library's custom operators for eager programs.

`custom_op("ns::name", mutates_args=...)` turns a Python function into an operator: calling
it runs the function (or a kernel registered for the inputs' device) without recording its
inner ops, and `register_autograd` gives it a backward (an autograd node
"GeneratedBackwardFor_<ns>_<name>_defaultBackward", as torch names it). `register_fake`,
`impl_abstract` and `register_vmap` record their functions: ember runs programs eagerly, on
real tensors, so no fake kernel is ever needed, and its vmap runs the operator on each slice.
`infer_schema` writes the operator schema torch would infer from the annotations. torch's
C++ dispatcher registration (Library, define, impl, dispatch keys) and Triton kernels are
not provided (see tools/not_provided.toml).
"""
import inspect
import typing
import warnings

from . import _dtype as D
from .amp import autocast, is_autocast_enabled
from ._tensor import Tensor
from .autograd.function import Function
from .autograd.grad_mode import is_grad_enabled, no_grad

__all__ = ["custom_op", "register_autograd", "register_fake", "impl_abstract",
           "register_vmap", "register_autocast", "infer_schema", "CustomOpDef"]

_ops = {}       # "ns::name" -> CustomOpDef


class CustomOpDef:
    """An operator made by custom_op: call it like the function it wraps."""

    def __init__(self, namespace, name, schema, fn):
        self._namespace, self._name, self._schema = namespace, name, schema
        self._init_fn = fn
        self._kernels = {}                  # device type -> kernel
        self._backward = self._setup_context = None
        self._fake_fn = self._vmap_fn = None
        self._autocast = {}                 # device type -> the dtype inputs are cast to
        self._function = None               # the autograd Function, made on first use

    def __repr__(self):
        return f"<CustomOpDef({self._namespace}::{self._name})>"

    # ---------------------------------------------------------------- registration
    def register_kernel(self, device_types, fn=None):
        def register(func):
            for device in [device_types] if isinstance(device_types, str) or \
                    device_types is None else device_types:
                self._kernels[device] = func
            return func
        return register if fn is None else register(fn)

    def register_autograd(self, backward, /, *, setup_context=None):
        self._backward, self._setup_context = backward, setup_context

    def register_fake(self, fn, /):
        self._fake_fn = fn
        return fn

    def register_vmap(self, func=None, /):
        def register(f):
            self._vmap_fn = f
            return f
        return register if func is None else register(func)

    # ---------------------------------------------------------------- calling
    def _kernel(self, args, kwargs):
        for x in list(args) + list(kwargs.values()):
            if isinstance(x, Tensor) and x.device.type in self._kernels:
                return self._kernels[x.device.type]
        return self._kernels.get(None, self._init_fn)

    def register_autocast(self, device_type, cast_inputs):
        self._autocast[device_type] = cast_inputs

    def _autocast_region(self, args, kwargs):
        """Under autocast for a registered device: the floating inputs (float64 excepted) cast
        to the registered dtype, and the op run with autocast off."""
        for device_type, dtype in self._autocast.items():
            if is_autocast_enabled(device_type):
                def cast(x):
                    if isinstance(x, Tensor) and x.is_floating_point() and \
                            x.dtype is not D.float64 and x.device.type == device_type:
                        return x.to(dtype)
                    return x
                return ([cast(a) for a in args], {k: cast(v) for k, v in kwargs.items()},
                        autocast(device_type, enabled=False))
        return args, kwargs, None

    def __call__(self, *args, **kwargs):
        args, kwargs, region = self._autocast_region(args, kwargs)
        if region is not None:
            with region:
                return self._call(args, kwargs)
        return self._call(args, kwargs)

    def _call(self, args, kwargs):
        kernel = self._kernel(args, kwargs)
        tensors = [x for x in list(args) + list(kwargs.values()) if isinstance(x, Tensor)]
        if not (is_grad_enabled() and any(t.requires_grad for t in tensors)):
            with no_grad():
                return kernel(*args, **kwargs)
        return self._autograd_function().apply(kernel, kwargs, *args)

    def _autograd_function(self):
        if self._function is None:
            op = self

            def forward(ctx, kernel, kwargs, *args):
                with no_grad():
                    out = kernel(*args, **kwargs)
                if op._setup_context is not None:
                    op._setup_context(ctx, args, out)
                return out

            def backward(ctx, *grads):
                if op._backward is None:
                    raise RuntimeError(f"Trying to backward through {op._namespace}."
                                       f"{op._name}.default but no autograd formula was "
                                       "registered. Please use register_autograd to add one.")
                result = op._backward(ctx, *grads)
                result = result if isinstance(result, tuple) else (result,)
                return (None, None) + result

            name = f"GeneratedBackwardFor_{self._namespace}_{self._name}_default"
            self._function = type(name, (Function,), {
                "forward": staticmethod(forward), "backward": staticmethod(backward)})
        return self._function


def _split_name(name):
    if not isinstance(name, str) or name.count("::") != 1:
        raise ValueError(f"Expected there to be a namespace in {name}, i.e. The operator name "
                         "should look something like ns::foo")
    return name.split("::")


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None):
    def make(func):
        namespace, opname = _split_name(name)
        op_schema = schema if schema is not None else infer_schema(func,
                                                                   mutates_args=mutates_args)
        op = CustomOpDef(namespace, opname, op_schema, func)
        if device_types is not None:
            op.register_kernel(device_types, func)
        _ops[name] = op
        return op
    return make if fn is None else make(fn)


def _op(op):
    if isinstance(op, CustomOpDef):
        return op
    found = _ops.get(op)
    if found is None:
        raise ValueError(f"register: the operator {op} was not made with custom_op (ember has "
                         "no operator registry of its own)")
    return found


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    _op(op).register_autograd(backward, setup_context=setup_context)


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1):
    def register(f):
        _op(op).register_fake(f)
        return f
    return register if func is None else register(func)


def impl_abstract(qualname, func=None, *, lib=None, _stacklevel=1):
    warnings.warn("`torch.library.impl_abstract` was renamed to `torch.library.register_fake`. "
                  "Please use that instead; we will remove `torch.library.impl_abstract` in a "
                  "future version of PyTorch.", FutureWarning, stacklevel=2)
    return register_fake(qualname, func, lib=lib)


def register_autocast(op, device_type, cast_inputs, /, *, lib=None):
    """Under autocast on `device_type`, the op's floating inputs are cast to `cast_inputs`
    and it runs with autocast off."""
    _op(op).register_autocast(device_type, cast_inputs)


def register_vmap(op, func=None, /, *, lib=None):
    return _op(op).register_vmap(func)


# ----------------------------------------------------------------------------- schemas
def _type_name(annotation, where):
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is Tensor:
        return "Tensor"
    if origin is typing.Union and len(args) == 2 and type(None) in args:
        inner = args[0] if args[1] is type(None) else args[1]
        return _type_name(inner, where) + "?"
    if origin in (list, tuple, typing.Sequence) or str(origin) == "<class " \
            "'collections.abc.Sequence'>":
        if origin is tuple and where == "return":
            return "(" + ", ".join(_type_name(a, where) for a in args) + ")"
        return _type_name(args[0], where) + "[]"
    simple = {int: "SymInt", float: "float", bool: "bool", str: "str", D.dtype: "ScalarType"}
    if annotation in simple:
        return simple[annotation]
    raise ValueError(f"infer_schema(func): Parameter {where} has unsupported type "
                     f"{annotation}.")


def _default(value):
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, D.dtype):
        return value.name
    return repr(value)


def infer_schema(prototype_function, /, *, mutates_args, op_name=None, tags=()):
    """The operator schema torch infers from the function's annotations, e.g.
    "(Tensor x, SymInt n=2) -> Tensor"."""
    sig = inspect.signature(prototype_function)
    try:
        hints = typing.get_type_hints(prototype_function)
    except Exception:           # (unresolvable names: fall back to the raw annotations)
        hints = {}
    params, mutable = [], 0
    for p in sig.parameters.values():
        annotation = hints.get(p.name, p.annotation)
        if annotation is inspect.Parameter.empty:
            raise ValueError(f"infer_schema(func): Parameter {p.name} must have a type "
                             f"annotation. Got func with signature {sig})")
        kind = _type_name(annotation, p.name)
        if kind.startswith("Tensor") and (mutates_args == "unknown" or
                                          p.name in tuple(mutates_args)):
            kind = kind.replace("Tensor", f"Tensor(a{mutable}!)", 1)
            mutable += 1
        text = f"{kind} {p.name}"
        if p.default is not inspect.Parameter.empty:
            text += f"={_default(p.default)}"
        params.append(text)
    ret = hints.get("return", sig.return_annotation)
    if ret is None or ret is type(None) or ret is inspect.Signature.empty:
        returns = "()"
    else:
        returns = _type_name(ret, "return")
    return f"{op_name or ''}({', '.join(params)}) -> {returns}"
