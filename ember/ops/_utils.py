"""Argument helpers shared by the op modules (PyTorch's dim wrapping and its errors)."""


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
    from collections import namedtuple
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
