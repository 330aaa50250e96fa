"""The names Python's argument errors give ember's functions, made PyTorch's.

A call with an unknown keyword or too many positional arguments raises a TypeError that names the
function by its `__qualname__` ("exp() got an unexpected keyword argument 'foo'"). ember builds
many ops in factories, whose qualnames read "_unary.<locals>.public"; PyTorch's name is fixed by
rules:
  * native ops are named by their schema name: torch.exp and Tensor.exp "exp",
    torch.special.erf "special_erf", torch.linalg.det "linalg_det", torch.fft.fft2 "fft_fft2";
  * the ops PyTorch writes in Python by their Python qualname: Tensor.norm "Tensor.norm",
    F.relu "relu"; a few reach the user through a dispatching wrapper, whose inner function is
    named (torch.unique: "_return_output"). Those are the exceptions tabled below.
`apply(ember)` (run once, at the end of ember/__init__.py) sets each function's `__qualname__` in
place. One function exposed under names PyTorch calls differently (ember.erf is
ember.special.erf) keeps its own name, and the other names get a renamed copy: a function built
on the same code object, so calling it adds no frame and costs nothing more.
"""
import inspect
import types

from .ops._utils import _OpWithMethod, with_method

_PASS_THROUGH = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS
_PREFIX = {"": "", "nn.functional": "", "special": "special_", "linalg": "linalg_", "fft": "fft_"}

# Functions PyTorch writes in Python whose errors name a function other than the rule's
_PYTHON_NAMES = {
    ("", "lu"): "_lu_no_infos",
    ("", "unique"): "_return_output",
    ("", "unique_consecutive"): "_consecutive_return_output",
    ("", "dsmm"): "mm",
    ("", "spmm"): "mm",
    ("", "hsmm"): "hspmm",
    ("", "sym_sqrt"): "_sym_sqrt",
    ("", "to_dlpack"): "_to_dlpack",
    ("", "symeig"): "_symeig",
    ("nn.functional", "logsigmoid"): "log_sigmoid",
    ("nn.functional", "threshold"): "_threshold",
    **{("nn.functional", name): "_" + name for name in (
        "max_pool1d", "max_pool2d", "max_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
        "adaptive_max_pool3d", "fractional_max_pool2d", "fractional_max_pool3d")},
}
# Tensor methods PyTorch writes in Python (torch/_tensor.py): named "Tensor.<name>"
_PYTHON_METHODS = frozenset((
    "backward", "dim_order", "eig", "index", "is_shared", "istft", "lstsq", "lu", "module_load",
    "norm", "register_hook", "register_post_accumulate_grad_hook", "reinforce", "resize",
    "resize_as", "share_memory_", "solve", "split", "stft", "storage", "storage_type", "symeig",
    "to_sparse_coo", "unflatten", "unique", "unique_consecutive"))


def _torch_name(space, name):
    if space == "Tensor":
        return f"Tensor.{name}" if name in _PYTHON_METHODS else name
    return _PREFIX[space] + name if (space, name) not in _PYTHON_NAMES else \
        _PYTHON_NAMES[space, name]


def _named_function(obj, in_class):
    """The function whose qualname a call of `obj` reports (None: not ours to name)."""
    if isinstance(obj, _OpWithMethod):      # the op's function; as a method, its method form
        obj = type(obj).method if in_class else type(obj).__call__
    if not isinstance(obj, types.FunctionType):
        return None
    while (inner := _passed_to(obj)) is not None:
        obj = inner
    return obj


def _passed_to(function):
    """The function a wrapper taking (*args, **kwargs) hands its arguments to: the one function
    it closes over (then that one reports a wrong argument). None for any other function."""
    if function.__code__.co_flags & _PASS_THROUGH != _PASS_THROUGH:
        return None
    inner = [c for c in map(_contents, function.__closure__ or ())
             if isinstance(c, types.FunctionType)]
    return inner[0] if len(inner) == 1 else None


def _contents(cell):
    try:
        return cell.cell_contents
    except ValueError:      # an empty cell
        return None


def _copy(function, qualname):
    """A copy of `function` (the same code, so no extra frame) whose wrong arguments are
    reported under `qualname`: a pass-through wrapper is copied over a renamed copy of its
    inner function."""
    closure, inner = function.__closure__, _passed_to(function)
    if inner is not None:
        inner_copy = _copy(inner, qualname)
        closure = tuple(types.CellType(inner_copy) if _contents(c) is inner else c
                        for c in closure)
    copy = types.FunctionType(function.__code__, function.__globals__, function.__name__,
                              function.__defaults__, closure)
    copy.__kwdefaults__ = function.__kwdefaults__
    copy.__dict__.update(function.__dict__)
    if inner is not None and "__wrapped__" in copy.__dict__:
        copy.__wrapped__ = inner_copy
    copy.__doc__, copy.__module__ = function.__doc__, function.__module__
    copy.__qualname__ = qualname
    return copy


def _renamed(obj, in_class, qualname):
    """`obj` with the function its calls report renamed, as a new object of the same kind."""
    if not isinstance(obj, _OpWithMethod):
        return _copy(obj, qualname)
    op = with_method(_copy(type(obj).__call__, qualname), type(obj).method) if not in_class \
        else with_method(type(obj).__call__, _copy(type(obj).method, qualname))
    op.__dict__.update(obj.__dict__)
    return op


def apply(ember):
    """Name the functions of `ember`, the package (complete when its __init__ calls this)."""
    spaces = {"": ember, "nn.functional": ember.nn.functional, "special": ember.special,
              "linalg": ember.linalg, "fft": ember.fft, "Tensor": ember.Tensor}
    uses = {}       # id(function) -> [(sort key, space, name, object, function)]
    for order, (space, holder) in enumerate(spaces.items()):
        in_class = space == "Tensor"
        names = vars(holder) if in_class else dir(holder)
        for name in names:
            if name.startswith("_"):
                continue
            obj = vars(holder)[name] if in_class else getattr(holder, name)
            function = _named_function(obj, in_class)
            if function is not None:
                # a function keeps the name of the place it was defined under its own name
                key = (name != function.__name__, order)
                uses.setdefault(id(function), []).append((key, space, name, obj, function))
    for entries in uses.values():
        entries.sort(key=lambda entry: entry[0])
        _, space, name, _, function = entries[0]
        function.__qualname__ = _torch_name(space, name)
        for _, space, name, obj, _ in entries[1:]:
            qualname = _torch_name(space, name)
            if qualname != function.__qualname__:
                if space == "Tensor":   # (tensor_methods binds renamed copies, once: see there)
                    raise RuntimeError(f"Tensor.{name} would report its errors as "
                                       f"{function.__qualname__}(): bind a renamed copy")
                setattr(spaces[space], name, _renamed(obj, False, qualname))
