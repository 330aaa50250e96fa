"""Argument helpers shared by the op modules (PyTorch's dim wrapping and its errors)."""
import types
from .. import _dtype as D
from .._tensor import Tensor
from collections import namedtuple
import numpy as np


def wrap_dim(dim, ndim):
    """A possibly negative dim as an index in [0, ndim); scalars accept -1 and 0."""
    if dim.__class__ is not int:
        dim = _as_int_dim(dim)
    n = ndim if ndim > 0 else 1
    if dim < -n or dim >= n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim + n if dim < 0 else dim if ndim > 0 else 0


def _as_int_dim(dim):
    if hasattr(dim, "__index__"):
        return dim.__index__()
    raise TypeError(f"dim must be an int, got {type(dim).__name__}")


def wrap_dims(dims, ndim):
    """A dim argument (None, int, list or tuple) as a sorted tuple of wrapped dims; None = all."""
    if dims is None:
        return tuple(range(ndim))
    if isinstance(dims, (list, tuple)):
        out = tuple(wrap_dim(d, ndim) for d in dims)
        if len(set(out)) != len(out):
            for d in out:
                if out.count(d) > 1:
                    raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        if ndim == 0:
            return ()
        return tuple(sorted(out))
    d = wrap_dim(dims, ndim)                # (range-checked for a scalar too)
    return (d,) if ndim > 0 else ()


def as_shape(args):
    """A size given as ints, a tuple/list, or a Size (PyTorch accepts f(2, 3) and f((2, 3)))."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    out = []
    for a in args:
        if a.__class__ is not int:
            if hasattr(a, "__index__") and not isinstance(a, bool):
                a = a.__index__()
            else:
                raise TypeError(f"expected a sequence of integers or a single integer, got "
                                f"'{type(a).__name__}'")
        out.append(a)
    return tuple(out)


def return_type(name, fields):
    """A named tuple that prints as torch.return_types.<name> does (ember.return_types...)."""
    cls = namedtuple(name, fields)
    cls.__module__ = "ember.return_types"
    cls.__repr__ = lambda self: (f"ember.return_types.{name}(\n" + ",\n".join(
        f"{f}={v!r}" for f, v in zip(fields, self)) + ")")
    return cls


class _Required:
    """Default of an argument PyTorch requires, so that leaving it out raises PyTorch's message
    rather than Python's."""
    def __repr__(self):
        return "<required>"


REQUIRED = _Required()


def require(name, arg, value, position, kind="int"):
    """PyTorch's TypeErrors for a missing required argument or a None one."""
    if value is REQUIRED:
        raise TypeError(f'{name}() missing 1 required positional arguments: "{arg}"')
    if value is None:
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be {kind}, "
                        f"not NoneType")
    return value


def int_arg(name, arg, value, position):
    """An int argument as PyTorch's parser takes it (ints and integer scalars, not bools), or
    its TypeError naming the op."""
    if value.__class__ is int:
        return value
    if hasattr(value, "__index__") and not isinstance(value, bool):
        return value.__index__()
    require(name, arg, value, position)       # (its message for a missing or None value)
    raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be int, not "
                    f"{type(value).__name__}")


# ----------------------------------------------------------------------------- argument parser
# PyTorch reads the arguments of its built-in ops against a list of overloads, each a signature
# such as "Tensor input, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None": the first
# that accepts them is called. `Overloads` does the same from such descriptions (written as in
# PyTorch's native function schemas) and raises PyTorch's TypeErrors when none accepts them.
_MISSING = object()
# the type names PyTorch prints, and the numpy-style keyword aliases it accepts
_SHOWN = {"int[1]": "tuple of ints", "int[]": "tuple of ints", "Scalar": "Number",
          "ScalarType": "ember.dtype", "Tensor[2]": "tuple of Tensors"}
_ALIASES = {"dim": ("axis",), "keepdim": ("keepdims",), "input": ("x", "a")}


def type_name(x):
    """A value's type as PyTorch's argument errors name it (NumPy's and ember's own types with
    their module, like the built-in types of torch)."""
    cls = type(x)
    module = cls.__module__
    if module == "numpy":
        return f"numpy.{cls.__name__}"
    if module.startswith("ember._") and cls.__name__ in ("dtype", "Size", "device", "layout",
                                                         "memory_format"):
        return f"ember.{cls.__name__}"
    return cls.__name__


def _is_int(x):
    """An int as PyTorch's parser takes one: not a bool; a 0-dim integer tensor too."""
    if x.__class__ is int or isinstance(x, np.integer):
        return True
    return isinstance(x, Tensor) and x._data.ndim == 0 and x._dtype._category == 1


def _is_index(x):
    """What an int list's elements may be: anything with __index__ but a bool."""
    if isinstance(x, bool) or type_name(x) == "numpy.bool":
        return False
    if x.__class__ is int:
        return True
    try:
        x.__index__()
        return True
    except (AttributeError, TypeError, RuntimeError):
        return False


def _is_dtype(x):
    return isinstance(x, D.dtype) or any(x is t for t in (float, int, bool, complex))


def _is_number(x):
    # (a 0-dim tensor that requires grad is not read as a number)
    return isinstance(x, (int, float, complex, np.number, np.bool_)) or \
        isinstance(x, Tensor) and x._data.ndim == 0 and not x._requires_grad


def _is_float(x):
    """A float as PyTorch's parser takes one: a Python or NumPy number (bools and NumPy complex
    numbers too: their real part), or a 0-dim tensor that does not require grad."""
    if isinstance(x, (int, float, np.number, np.bool_)):
        return True
    return _is_tensor(x) and x._data.ndim == 0 and not x._requires_grad


_CHECKS = {
    "Tensor": lambda x: _is_tensor(x),
    "float": _is_float,
    "str": lambda x: isinstance(x, str),
    "int": _is_int,
    "bool": lambda x: x.__class__ is bool,
    "Scalar": _is_number,
    "ScalarType": _is_dtype,
    "Tensor[2]": lambda x: isinstance(x, (tuple, list)),
}


def _is_tensor(x):
    return isinstance(x, Tensor)


def _check_list(param, x):
    """(accepted, index of the element that failed or None) for an int list parameter: a tuple
    or list whose first element is an index (the rest is read later), or, for int[1], one
    index."""
    if isinstance(x, (tuple, list)):
        if not x or _is_index(x[0]):
            return True, None
        return False, 0
    return param.type == "int[1]" and _is_index(x), None


class _Param:
    def __init__(self, text, keyword_only):
        decl, _, default = text.partition("=")
        self.type, self.name = decl.split()
        self.nullable = self.type.endswith("?")
        self.type = self.type.rstrip("?")
        self.optional = bool(default)
        self.default = {"None": None, "True": True, "False": False, "[]": ()}.get(default, None)
        if default.lstrip("-").isdigit():           # int dim=-1
            self.default = int(default)
        elif default.startswith('"'):               # str interpolation="linear"
            self.default = default.strip('"')
        elif default.startswith("{"):               # int[] dim={-2,-1}, as PyTorch prints it
            self.default = tuple(int(d) for d in default[1:-1].split(","))
        # (an int list with a default takes None for it too)
        self.allow_none = self.nullable or default == "None" or \
            self.optional and self.type in ("int[1]", "int[]")
        self.keyword_only = keyword_only
        self.names = (self.name,) + _ALIASES.get(self.name, ())
        self.shown = f"{_SHOWN.get(self.type, self.type)} {self.name}" + (
            f" = {default}" if default else "")

    def convert(self, op, x, index):
        """The accepted value `x` as the op reads it (ints, a tuple of ints, an ember dtype),
        with PyTorch's errors for what only that reading finds wrong."""
        if x is None or self.type in ("Tensor", "bool"):
            return x
        if self.type == "int":
            return x.__index__()
        if self.type in ("int[1]", "int[]"):
            if not isinstance(x, (tuple, list)):
                return x.__index__()
            for i, e in enumerate(x):
                if not _is_index(e) and not isinstance(e, bool):
                    raise TypeError(f"{op}(): argument '{self.name}' failed to unpack the object "
                                    f"at pos {i + 1} with error \"type must be tuple of ints,but "
                                    f"got {type_name(e)}\"")
            return tuple(e.__index__() for e in x)
        if self.type == "ScalarType":
            return {float: D.float64, int: D.int64, bool: D.bool_,
                    complex: D.complex128}.get(x, x)
        if self.type == "Scalar":
            return x.item() if _is_tensor(x) else x
        if self.type == "float":
            return float(x.item() if _is_tensor(x) else x.real)
        if self.type == "str":
            return x
        # Tensor[2]: a tuple of exactly two tensors
        if len(x) != 2:
            raise TypeError(f"expected tuple of 2 elements but got {len(x)}")
        for i, e in enumerate(x):
            if not _is_tensor(e):
                raise TypeError(f"expected Tensor as element {i} in argument {index}, but got "
                                f"{type_name(e)}")
        return tuple(x)

    def accepts(self, x):
        if self.type in ("int[1]", "int[]"):
            return _check_list(self, x)
        return _CHECKS[self.type](x), None


class Signature:
    def __init__(self, name, text, method=False):
        """`text` as PyTorch's schemas write it; the method form has neither input (the tensor
        the method is called on) nor out."""
        self.name = name
        self.params = []
        keyword_only = False
        for part in (text.split(", ") if text else []):
            if part == "*":
                keyword_only = True
            else:
                param = _Param(part, keyword_only)
                if not (method and param.name in ("input", "out")):
                    self.params.append(param)
        self.min_args = sum(not p.optional for p in self.params)
        self.max_args = len(self.params)
        self.max_pos = sum(not p.keyword_only for p in self.params)
        # f(1, 2, 3) for f(int[] dims): the positional arguments as one list
        self.varargs_list = self.max_pos == 1 and self.params[0].type in ("int[1]", "int[]")
        shown, star = [], False
        for p in self.params:
            if p.keyword_only and not star:
                shown.append("*")
                star = True
            shown.append(p.shown)
        self.shown = f"({', '.join(shown)})"

    def bind(self, args, kwargs, raise_errors):
        """The parameters' values (a dict) if the arguments fit, else None (or PyTorch's
        TypeError with raise_errors)."""
        name, nargs = self.name, len(args)
        if nargs > self.max_pos and not self.varargs_list:
            return self._too_many(nargs) if raise_errors else None
        values, pos, used = {}, 0, 0
        for i, p in enumerate(self.params):
            if pos < nargs:
                if p.keyword_only:
                    return self._too_many(nargs) if raise_errors else None
                x, keyword = args[pos], False
            else:
                x = next((kwargs[k] for k in p.names if k in kwargs), _MISSING)
                keyword = True
            if x is _MISSING:
                if not p.optional:
                    return self._missing(i, kwargs) if raise_errors else None
                values[p.name] = p.default
                continue
            if keyword:
                used += 1
            else:
                pos += 1
            if x is None and p.allow_none:
                values[p.name] = None
                continue
            ok, failed = p.accepts(x)
            if ok:
                values[p.name] = x
            elif self.varargs_list and not keyword and pos == 1 and _is_index(x):
                # (its other elements are read with the list's)
                values[p.name], pos = tuple(args), nargs
            elif not raise_errors:
                return None
            else:
                shown = _SHOWN.get(p.type, p.type)
                if keyword:
                    raise TypeError(f"{name}(): argument '{p.name}' must be {shown}, not "
                                    f"{type_name(x)}")
                if failed is not None:
                    raise TypeError(f"{name}(): argument '{p.name}' (position {pos}) must be "
                                    f"{shown}, but found element of type "
                                    f"{type_name(x[failed])} at pos {failed}")
                raise TypeError(f"{name}(): argument '{p.name}' (position {pos}) must be "
                                f"{shown}, not {type_name(x)}")
        if pos < nargs:     # (a list that took its first argument only)
            return self._too_many(nargs) if raise_errors else None
        if used < len(kwargs):
            return self._extra_keywords(args, kwargs) if raise_errors else None
        return values

    def _missing(self, first, kwargs):
        # (PyTorch's message says "arguments" for one, "argument" for more)
        names = [f'"{p.name}"' for p in self.params[first:]
                 if not p.optional and not any(k in kwargs for k in p.names)]
        raise TypeError(f"{self.name}() missing {len(names)} required positional argument"
                        f"{'s' if len(names) == 1 else ''}: {', '.join(names)}")

    def _too_many(self, nargs):
        if self.min_args != self.max_pos:
            raise TypeError(f"{self.name}() takes from {self.min_args} to {self.max_pos} "
                            f"positional arguments but {nargs} were given")
        raise TypeError(f"{self.name}() takes {self.max_pos} positional argument"
                        f"{'' if self.max_pos == 1 else 's'} but {nargs} "
                        f"{'was' if nargs == 1 else 'were'} given")

    def _extra_keywords(self, args, kwargs):
        for key in kwargs:
            index = next((i for i, p in enumerate(self.params) if key in p.names), None)
            if index is None:
                raise TypeError(f"{self.name}() got an unexpected keyword argument '{key}'")
            if index < len(args):
                raise TypeError(f"{self.name}() got multiple values for argument '{key}'")
        raise TypeError(f"{self.name}() got invalid keyword arguments")



class Overloads:
    """An op's overloads (signature texts, in PyTorch's order) read as PyTorch reads them."""
    def __init__(self, name, *signatures, method=False):
        self.name = name
        self.signatures = [Signature(name, s, method) for s in signatures]
        # calls already read, by the types of their arguments: where the types alone decide
        # (see _plan), the overload and where each parameter's value comes from
        self._plans = {}

    def parse(self, args, kwargs):
        """(the index of the first overload that accepts the arguments, their values by
        parameter name: ints, tuples of ints, ember dtypes)."""
        # (a call without keywords is keyed by its argument types alone: no tuple of types
        # is a tuple of tuples)
        key = (tuple(map(type, args)), tuple(kwargs), tuple(map(type, kwargs.values()))) \
            if kwargs else tuple(map(type, args))
        plan = self._plans.get(key)
        if plan is not None:        # the hot path: x.sum(1, keepdim=True) read before
            which, defaults, from_args, from_keywords = plan
            values = defaults.copy()
            for name, i in from_args:
                values[name] = args[i]
            for name, k in from_keywords:
                values[name] = kwargs[k]
            return which, values
        for i, sig in enumerate(self.signatures):
            values = sig.bind(args, kwargs, False)
            if values is not None:
                for index, p in enumerate(sig.params):
                    values[p.name] = p.convert(self.name, values[p.name], index)
                sources = _plan(sig, args, kwargs, values)
                if sources is not None:
                    self._plans[key] = (
                        i, {name: at for name, kind, at in sources if kind == 2},
                        tuple((name, at) for name, kind, at in sources if kind == 0),
                        tuple((name, at) for name, kind, at in sources if kind == 1))
                return i, values
        # no overload fits: where only one could by the number of arguments, that one says why
        n = len(args) + len(kwargs)
        plausible = [s for s in self.signatures if s.min_args <= n <= s.max_args]
        if len(self.signatures) == 1 or len(plausible) == 1:
            (self.signatures[0] if len(self.signatures) == 1 else plausible[0]).bind(
                args, kwargs, True)
        raise TypeError(invalid_combination(self.name, [s.shown for s in self.signatures],
                                            args, kwargs))


def _plan(sig, args, kwargs, values):
    """Where each of `values` came from ((name, 0, argument index), (name, 1, keyword) or
    (name, 2, default)), if the arguments' types alone decide the overload and the values:
    ints, bools, floats, strings, None and ember dtypes, and tensors where a Tensor is expected
    (a tensor read as an int, or a list read as ints, depends on its contents). Else None."""
    sources = []
    for i, p in enumerate(sig.params):
        if i < len(args):
            kind, at = 0, i
            x = args[i]
        else:
            at = next((k for k in p.names if k in kwargs), None)
            kind = 1 if at is not None else 2
            x = kwargs[at] if at is not None else p.default
        if kind == 2:
            at = x
        elif not (x is None or x.__class__ in (int, bool, float, str) or
                  isinstance(x, D.dtype) or
                  isinstance(x, Tensor) and p.type == "Tensor"):
            return None
        if values[p.name] is not x:
            return None
        sources.append((p.name, kind, at))
    return sources


def _keyword_order(kwargs):
    # PyTorch gathers the keywords in a hash map: it lists them last given first
    return list(reversed(list(kwargs)))


def _described(x):
    text = type_name(x)
    if isinstance(x, (tuple, list)):
        inner = ", ".join(type_name(e) for e in x)
        text += f" of ({inner}{',' if len(x) == 1 else ''})" if isinstance(x, tuple) else \
            f" of [{inner}]"
    return text


def _matches(kind, x):
    # the loose test of the error's notes: a type name compared with the value's
    name = type_name(x)
    return name in {"float": ("float", "int", "long"), "int": ("int", "long")}.get(kind, (kind,))


def invalid_combination(name, shown, args, kwargs):
    """PyTorch's "invalid combination of arguments" message: the overloads (their printed
    signatures), each with a note where the number of arguments given equals the number of
    its ", "-separated items, the notes' reading of the items (the text before an item's last
    space as its type, the rest as its name) kept as PyTorch does."""
    keys = _keyword_order(kwargs)
    got = "".join(f"{type_name(a)}, " for a in args) + \
        "".join(f"{k}={type_name(kwargs[k])}, " for k in keys)
    got = got[:-2] if args else got
    text = f"{name}() received an invalid combination of arguments - got ({got}), but " \
           f"expected one of:\n"
    for sig in shown:
        text += f" * {sig}\n"
        items = [(i[:i.rfind(" ")], i[i.rfind(" ") + 1:]) if " " in i else (i, i)
                 for i in sig[1:-1].split(", ")]
        if len(args) + len(kwargs) != len(items):
            continue
        names = [n for _, n in items[max(len(items) - len(kwargs), 0):]]
        unmatched = [k for k in keys if k not in names]
        if unmatched:
            text += ("      didn't match because some of the keywords were incorrect: "
                     f"{', '.join(unmatched)}\n")
            continue
        parts = []
        for i, (kind, item_name) in enumerate(items):
            keyword = i >= len(args)
            x = kwargs[item_name] if keyword else args[i]
            part = (f"{item_name}=" if keyword else "") + _described(x)
            parts.append(part if _matches(kind, x) else f"!{part}!")
        desc = "".join(f"{part}, " for part in parts)
        desc = desc[:-2] if args else desc
        text += f"      didn't match because some of the arguments have invalid types: ({desc})\n"
    return text



class _OpWithMethod:
    """A function that, set as a Tensor attribute, binds its method form: PyTorch's methods read
    their arguments against signatures of their own (no input, no out=). (The function is the
    class's __call__, so calling the op adds no frame: warnings still point at the caller.)"""
    def __get__(self, obj, cls=None):
        return self if obj is None else types.MethodType(self.method, obj)


def with_method(function, method):
    """`function` (called as torch.f(x, ...)) that is `method` as a Tensor method (x.f(...))."""
    cls = type(function.__name__, (_OpWithMethod,), {"__call__": staticmethod(function),
                                                     "method": staticmethod(method)})
    op = cls()
    op.__name__ = op.__qualname__ = function.__name__
    op.__doc__, op.__module__, op.__wrapped__ = function.__doc__, function.__module__, function
    return op
