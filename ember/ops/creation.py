"""Making tensors: from data, filled, ranges, random; and the copy ops (clone, to, copy_)."""
import numbers
import numpy as np
import warnings

from .. import _backend, _dtype as D
from .._backend import backend
from .._device import array_module, as_device
from .._tensor import Tensor, Size, contiguous_strides, _type_name
from ._utils import as_shape
from .registry import xp_of, primitive, check_broadcast
from .settings import _switches
from .layout import (dense_in_order as _dense_in_order,
                     non_overlapping_and_dense as _non_overlapping_and_dense)
from .._printing import scalar_type_name
from .indexing import _check_fits, checked_number
from .views import element_strides, _extent, restride, strided_view


def _finish(array, dtype, device, requires_grad):
    if dtype is D.complex32:
        D.warn_complex32()
    t = Tensor._make(array, dtype, device)
    if requires_grad:
        if not (dtype.is_floating_point or dtype.is_complex):
            # (a factory's wording; requires_grad_() words it differently, as in PyTorch)
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        t._requires_grad = True
    return t


def _on_device(array, device):
    if device.type == "cpu" or array.__class__ is not np.ndarray:
        return array                        # (already made on the device)
    if array.ndim == 0:
        # a scalar is filled in on the device (no host-to-device copy)
        return array_module(device).full((), array.item(), array.dtype)
    return backend(device.type).from_host(array, device.index)


# ----------------------------------------------------------------------------- from data
def _infer_dtype(data):
    """The dtype PyTorch infers for nested Python data (ints -> int64, floats -> default)."""
    if isinstance(data, Tensor):
        return data._dtype
    if isinstance(data, np.ndarray):
        return D.from_numpy_dtype(data.dtype)
    if isinstance(data, (bool, np.bool_)):
        return D.bool_
    if isinstance(data, numbers.Integral):
        return D.int64 if not isinstance(data, np.integer) else D.from_numpy_dtype(
            np.dtype(type(data)))
    if isinstance(data, np.floating):
        return D.from_numpy_dtype(np.dtype(type(data)))
    if isinstance(data, numbers.Real):
        return D.get_default_dtype()
    if isinstance(data, np.complexfloating):
        return D.from_numpy_dtype(np.dtype(type(data)))
    if isinstance(data, numbers.Complex):
        return D.default_complex_dtype()
    if isinstance(data, (str, bytes)):
        raise ValueError(f"too many dimensions '{type(data).__name__}'")
    if _is_sequence(data):
        kinds = set(map(type, data))
        if kinds <= _PY_NUMBERS:              # a flat run of Python numbers (the usual case)
            return D.default_complex_dtype() if complex in kinds else \
                D.get_default_dtype() if float in kinds or not kinds else \
                D.int64 if int in kinds else D.bool_
        result = None
        for item in data:
            d = _infer_dtype(item)
            result = d if result is None else D.promote_types(result, d)
        return result if result is not None else D.get_default_dtype()
    raise RuntimeError(f"Could not infer dtype of {type(data).__name__}")


_PY_NUMBERS = {bool, int, float, complex}


def _is_sequence(x):
    return isinstance(x, (list, tuple, range)) or (
        hasattr(x, "__len__") and hasattr(x, "__getitem__") and
        not isinstance(x, (str, bytes, dict, Tensor, np.ndarray)))


def _nested_lists(data, dtype):
    """Python data as nested lists of numbers, with PyTorch's checks of its structure: the
    shape is read along the first elements, and every other element must match it. A tensor
    inside counts as one number."""
    shape = []
    first = data
    while _is_sequence(first) or isinstance(first, np.ndarray) and first.ndim:
        shape.append(len(first))
        if not len(first):
            break
        first = first[0]
    if 0 in shape:
        return np.zeros(shape)            # PyTorch reads no element of empty data
    return _checked(data, shape, 0, dtype)


def _checked(data, shape, depth, dtype):
    if depth == len(shape):
        if _is_sequence(data) or isinstance(data, np.ndarray) and data.ndim:
            kind = type(data).__name__
            raise TypeError(f"'{kind}' object cannot be interpreted as an integer"
                            if dtype._category <= 1 else f"must be real number, not {kind}")
        return _scalar(data, dtype)
    if isinstance(data, np.ndarray):
        if data.shape != tuple(shape[depth:depth + data.ndim]) or data.ndim != len(shape) - depth:
            raise ValueError(f"expected sequence of length {shape[depth]} at dim {depth} (got "
                             f"{len(data)})")
        return data.tolist()
    if not _is_sequence(data):
        raise TypeError("not a sequence")
    if len(data) != shape[depth]:
        raise ValueError(f"expected sequence of length {shape[depth]} at dim {depth} (got "
                         f"{len(data)})")
    if depth == len(shape) - 1 and set(map(type, data)) <= _PY_NUMBERS:
        return list(data)                     # innermost Python numbers: nothing to convert
    return [_checked(x, shape, depth + 1, dtype) for x in data]


def _scalar(data, dtype):
    if isinstance(data, Tensor):
        if data._data.size != 1:
            if dtype._category == 1:
                raise TypeError("only integer tensors of a single element can be converted to "
                                "an index")
            raise ValueError("only one element tensors can be converted to Python scalars")
        return data._host().reshape(()).item() if data._dtype is not D.bfloat16 \
            else float(data._host().reshape(()))
    if isinstance(data, np.ndarray):
        return data.item()
    if data is None or not isinstance(data, (numbers.Number, np.bool_)):
        raise TypeError(f"must be real number, not {type(data).__name__}")
    return data


_INT_NAMES = {"float": "must be real number, not {}", "int": "'{}' object cannot be interpreted "
                                                            "as an integer"}


def _to_array(data, dtype):
    """Nested Python data (or a tensor, or an array) as a new array of `dtype`."""
    if isinstance(data, Tensor):
        return D.as_torch_rounds(data._host(), dtype.np).astype(dtype.np, copy=True)
    if isinstance(data, np.ndarray):
        if any(s < 0 for s in data.strides):
            raise ValueError(_NEGATIVE_STRIDES)
        D.from_numpy_dtype(data.dtype)
        return np.array(D.as_torch_rounds(data, dtype.np), dtype=dtype.np)
    if _is_sequence(data) and any(isinstance(x, np.ndarray) for x in data):
        warnings.warn("Creating a tensor from a list of numpy.ndarrays is extremely slow. Please "
                      "consider converting the list to a single numpy.ndarray with numpy.array() "
                      "before converting to a tensor. (Triggered internally at "
                      "/pytorch/torch/csrc/utils/tensor_new.cpp:252.)", UserWarning, stacklevel=4)
    values = _nested_lists(data, dtype)
    natural = np.array(values) if not isinstance(values, bool) else np.array(values, np.bool_)
    if natural.dtype.kind == "f" and natural.size and np.abs(natural).max() >= 2.0 ** 63 and \
            any(type(v) is int and not -2 ** 63 <= v < 2 ** 63
                for v in np.array(values, dtype=object).reshape(-1)):
        natural = np.array(values, dtype=object)  # (NumPy made floats of too-large ints)
    if dtype is D.uint64 and (natural.dtype == object or natural.dtype == np.uint64 or
                              natural.dtype.kind == "i" and natural.size and natural.min() < 0):
        # uint64 holds ints up to 2**64 - 1; the first int outside that is Python's overflow
        for v in np.array(values, dtype=object).reshape(-1):
            if isinstance(v, numbers.Integral) and not 0 <= v < 2 ** 64:
                raise OverflowError("can't convert negative int to unsigned" if v < 0 else
                                    "int too big to convert")
    if (natural.dtype == object or natural.dtype == np.uint64) and dtype is D.uint64 and \
            all(isinstance(v, numbers.Integral) for v in np.array(values, dtype=object).ravel()):
        natural = np.array(values, dtype=np.uint64)
    elif natural.dtype == object or natural.dtype == np.uint64:
        # Python ints beyond int64: fine for a float dtype, an overflow otherwise
        if dtype.np.kind not in "fc":
            raise ValueError("Overflow when unpacking long long")
        natural = np.array(values, dtype=np.complex128 if dtype.is_complex else np.float64)
    kind = natural.dtype.kind
    if kind in "US":
        raise ValueError("too many dimensions 'str'")
    if kind == "c" and dtype._category < 3 and dtype is not D.bool_:
        raise TypeError(_INT_NAMES["int" if dtype._category == 1 else "float"]
                        .format("complex"))
    if dtype._category == 1 and natural.size:
        if kind == "f" and not np.isfinite(natural).all():
            raise RuntimeError(f"value cannot be converted to type {dtype.name} without overflow")
        info = np.iinfo(dtype.np)
        low = -info.max - 1 if dtype is D.uint8 else info.min     # uint8 wraps negatives
        if natural.min() < low or natural.max() > info.max:
            raise RuntimeError(f"value cannot be converted to type {dtype.name} without overflow")
        if dtype is D.uint8 and kind == "i":   # (widened: 256 may not fit the natural type)
            natural = natural.astype(np.int64) % 256
    return D.as_torch_rounds(natural, dtype.np).astype(dtype.np)


_NEGATIVE_STRIDES = ("At least one stride in the given numpy array is negative, and tensors with "
                     "negative strides are not currently supported. (You can probably work "
                     "around this by making a copy of your array  with array.copy().) ")


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
                      "requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    dtype = dtype or _infer_dtype(data)
    device = as_device(device)
    if requires_grad and not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    return _finish(_on_device(_to_array(data, dtype), device), dtype, device, requires_grad)


def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    """Tensor.new_tensor: a copy of `data` with self's dtype and device unless given."""
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
                      "requires_grad_(True), rather than tensor.new_tensor(sourceTensor).",
                      UserWarning, stacklevel=3)
        data = data.detach()
        out = data.to(device=device or self._device, dtype=dtype or self._dtype, copy=True)
        return out.requires_grad_(True) if requires_grad else out
    return tensor(data, dtype=dtype or self._dtype, device=device or self._device,
                  requires_grad=requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Share memory with a tensor or a NumPy array when dtype and device allow, else copy."""
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype) if (dtype or device) else data
    if isinstance(data, np.ndarray) and (dtype is None or dtype.np == data.dtype) and \
            (device is None or as_device(device).type == "cpu"):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    if copy:
        out = tensor(obj, dtype=dtype, device=device) if not isinstance(obj, Tensor) else \
            obj.to(device=device, dtype=dtype, copy=True)
    else:
        out = as_tensor(obj, dtype=dtype, device=device)
    if requires_grad:
        out.requires_grad_(True)
    return out


def from_numpy(array):
    """A tensor over the array's memory (writes through either are seen by both)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    if any(s < 0 for s in array.strides):
        raise ValueError(_NEGATIVE_STRIDES)
    return Tensor._make(array, D.from_numpy_dtype(array.dtype))


def scalar_tensor(value, like=None, dtype=None, *, device=None, requires_grad=False,
                  layout=None, pin_memory=False):
    """A number as a zero-dim tensor. Internally, `like` places a wrapped operand on another
    tensor's device with the number's own dtype; called as ember.scalar_tensor(s) the dtype
    defaults, as in PyTorch, to the default float dtype."""
    if like is None and dtype is None:
        dtype = D.get_default_dtype()
    dtype = dtype or D.scalar_dtype(value)
    device = like._device if isinstance(like, Tensor) else as_device(device)
    if isinstance(value, Tensor):
        value = value.item()
    array = D.as_complex32(np.array(value)) if dtype is D.complex32 else \
        np.array(value, dtype=dtype.np)
    return _finish(_on_device(array, device), dtype, device,
                   requires_grad)


def as_operand(x, dtype, like):
    """A where()/clamp() operand: tensors cast to `dtype`, numbers made zero-dim tensors."""
    if isinstance(x, Tensor):
        return x if x._dtype is dtype else x.to(dtype)
    return scalar_tensor(x, like, dtype)


# ----------------------------------------------------------------------------- legacy constructor
_CPP_TYPE = {"float32": "float", "float64": "double", "float16": "c10::Half",
             "bfloat16": "c10::BFloat16", "uint8": "unsigned char", "int8": "signed char",
             "int16": "short int", "int32": "int", "int64": "long int", "bool": "bool",
             "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _options(dtype):
    return (f"TensorOptions(dtype={_CPP_TYPE[dtype.name]}, device=cpu, layout=Strided, "
            f"requires_grad=false (default), pinned_memory=false (default), "
            f"memory_format=(nullopt))")


def legacy_tensor(cls, args, device=None, dtype=None, fixed_dtype=None, **kwargs):
    """`ember.Tensor(...)` / `FloatTensor(...)` / `x.new(...)`: sizes, data, a tensor, or
    nothing. `fixed_dtype` (else the legacy class's) is the only dtype accepted.

    Sizes make an "uninitialised" tensor, which ember fills with zeros.
    """
    if kwargs or dtype is not None:
        raise TypeError(_legacy_error(args, kwargs={**kwargs, **(
            {"dtype": dtype} if dtype is not None else {})}))
    fixed = fixed_dtype or getattr(cls, "_legacy_dtype", None)
    dtype = fixed or D.get_default_dtype()
    device = as_device(device)
    if len(args) == 0:
        return _finish(_on_device(np.empty((0,), dtype.np), device), dtype, device, False)
    if len(args) == 1:
        a = args[0]
        if isinstance(a, Tensor):
            if fixed is not None and a._dtype is not fixed:
                raise TypeError(f"expected {_options(fixed)} (got {_options(a._dtype)})")
            return a.detach()
        if isinstance(a, (str, bytes)):
            raise TypeError(f"new(): invalid data type '{type(a).__name__}'")
        if isinstance(a, Size):                  # Tensor(x.shape): that size, not data
            return _sized(tuple(a), dtype, device)
        if isinstance(a, (list, tuple, np.ndarray)) or _is_sequence(a):
            return _finish(_on_device(_to_array(a, dtype), device), dtype, device, False)
        if isinstance(a, numbers.Integral) and not isinstance(a, bool):
            return _sized((a,), dtype, device)
        raise TypeError(f"new(): data must be a sequence (got {type(a).__name__})")
    if all(isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in args):
        return _sized(tuple(args), dtype, device)
    if isinstance(args[0], numbers.Integral) and not isinstance(args[0], bool):
        pos = next(i for i, a in enumerate(args)
                   if not isinstance(a, numbers.Integral) or isinstance(a, bool))
        raise TypeError(f"new(): argument 'size' failed to unpack the object at pos {pos + 1} "
                        f"with error \"type must be tuple of ints,but got "
                        f"{type(args[pos]).__name__}\"")
    raise TypeError(_legacy_error(args))


def _sized(shape, dtype, device):
    _check_sizes(shape)
    return _finish(xp_of(device).zeros(shape, dtype.np), dtype, device, False)


def _check_sizes(shape):
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"[{', '.join(map(str, shape))}]")


def arg_kind(a):
    """An argument's type as PyTorch's "invalid types" hints mark it, e.g. !list of [float]!."""
    if isinstance(a, list):
        return f"!list of [{', '.join(type(x).__name__ for x in a)}]!"
    if isinstance(a, tuple):
        return f"!tuple of {tuple(_Named(type(x).__name__) for x in a)!r}!"
    return f"!{type(a).__name__}!"


class _Named(str):
    __repr__ = str.__str__       # (a name in a tuple's repr, without quotes)


def _legacy_error(args, kwargs=None):
    kind = arg_kind
    got = ", ".join([type(a).__name__ for a in args] +
                    [f"{k}={_kw_type(v)}" for k, v in (kwargs or {}).items()])
    if kwargs:
        bad = ", ".join(kwargs)
        return (f"new() received an invalid combination of arguments - got ({got}), but "
                f"expected one of:\n * (*, torch.device device = None)\n * (torch.Storage "
                f"storage)\n * (Tensor other)\n * (tuple of ints size, *, torch.device device = "
                f"None)\n      didn't match because some of the keywords were incorrect: {bad}\n"
                f" * (object data, *, torch.device device = None)\n      didn't match because "
                f"some of the keywords were incorrect: {bad}\n")
    why = ", ".join(kind(a) for a in args)
    return (f"new() received an invalid combination of arguments - got ({got}), but expected "
            f"one of:\n * (*, torch.device device = None)\n      didn't match because some of "
            f"the arguments have invalid types: ({why})\n * (torch.Storage storage)\n * (Tensor "
            f"other)\n * (tuple of ints size, *, torch.device device = None)\n * (object data, "
            f"*, torch.device device = None)\n")


def _kw_type(v):
    return "torch.dtype" if isinstance(v, D.dtype) else type(v).__name__


def legacy_type_dtype(name):
    """'torch.FloatTensor' or a dtype -> a dtype (for Tensor.type(...))."""
    if isinstance(name, D.dtype):
        return name
    if isinstance(name, type) and hasattr(name, "_legacy_dtype"):
        return name._legacy_dtype
    short = name.split(".")[-1]
    for d, n in _LEGACY_NAMES.items():
        if n == short:
            return d
    raise ValueError(f"invalid type: '{name}'")


_LEGACY_NAMES = {D.float32: "FloatTensor", D.float64: "DoubleTensor", D.float16: "HalfTensor",
                 D.bfloat16: "BFloat16Tensor", D.uint8: "ByteTensor", D.int8: "CharTensor",
                 D.int16: "ShortTensor", D.int32: "IntTensor", D.int64: "LongTensor",
                 D.bool_: "BoolTensor"}    # PyTorch has no legacy type for complex dtypes


def make_legacy_types():
    """FloatTensor, LongTensor, ...: Tensor subclasses whose constructor fixes the dtype."""
    out = {}
    for dtype, name in _LEGACY_NAMES.items():
        meta = type("_LegacyMeta", (type,), {
            "__instancecheck__": lambda cls, obj, d=dtype: isinstance(obj, Tensor) and
            obj._dtype is d and obj._device.type == "cpu"})
        cls = meta(name, (Tensor,), {"__slots__": (), "_legacy_dtype": dtype,
                                     "__new__": _legacy_new})
        out[name] = cls
    return out


def _legacy_new(cls, *args, device=None, **kwargs):
    return legacy_tensor(cls, args, device=device, **kwargs)


LEGACY_TYPES = make_legacy_types()      # (ember.FloatTensor, ...; ember.cuda's build on them)


# ----------------------------------------------------------------------------- filled
def _sizes(fname, size, arg="size"):
    """A factory's size argument (ints, or one sequence), with PyTorch's TypeErrors: they name
    the whole argument when its first element is wrong (a bool is no size there), and the
    1-based position of any later wrong element."""
    first = size[0] if size else None
    if len(size) == 1 and isinstance(first, (tuple, list)):
        size = tuple(first)
        if size and not _is_size(size[0], first=True):
            raise TypeError(f"{fname}(): argument '{arg}' (position 1) must be tuple of ints, "
                            f"but found element of type {_type_name(size[0])} at pos 0")
    elif size and not _is_size(first, first=True):
        if len(size) > 1 and fname in ("rand", "randn"):     # (two overloads: another error)
            raise _random_factory_error(fname, ", ".join(type(a).__name__ for a in size))
        if len(size) > 1:
            raise TypeError(f"{fname}() takes 1 positional argument but {len(size)} were given")
        raise TypeError(f"{fname}(): argument '{arg}' (position 1) must be tuple of ints, not "
                        f"{_type_name(first)}")
    for pos, s in enumerate(size):
        if not _is_size(s):
            raise TypeError(f"{fname}(): argument '{arg}' failed to unpack the object at pos "
                            f"{pos + 1} with error \"type must be tuple of ints,but got "
                            f"{type(s).__name__}\"")
    return tuple(s.__index__() for s in size)


def _random_factory_error(fname, got):
    sig = ("tuple of ints size, *, {}Tensor out = None, torch.dtype dtype = None, torch.layout "
           "layout = None, torch.device device = None, bool pin_memory = False, bool "
           "requires_grad = False")
    return TypeError(f"{fname}() received an invalid combination of arguments - got ({got}), "
                     f"but expected one of:\n * ({sig.format('torch.Generator generator, ')})"
                     f"\n * ({sig.format('')})\n")


def _is_size(x, first=False):
    if first and isinstance(x, (bool, np.bool_)):
        return False
    try:
        x.__index__()
    except (AttributeError, TypeError, RuntimeError, ValueError):
        return False
    return True


def _factory(fname, fill):
    def make(*args, size=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False, memory_format=None):
        if size is not None:
            if args:
                raise TypeError(f"{fname}() got multiple values for argument 'size'")
            args = (size,)
        elif not args:
            raise TypeError(f'{fname}() missing 1 required positional arguments: "size"')
        size = args
        if memory_format is not None and fname != "empty":
            raise TypeError(f"{fname}() got an unexpected keyword argument 'memory_format'")
        shape = _sizes(fname, size)
        if fname == "zeros" and any(s < 0 for s in shape):
            raise RuntimeError("zeros: Dimension size must be non-negative.")
        _check_sizes(shape)
        dtype = dtype or D.get_default_dtype()
        device = as_device(device)
        data = fill(xp_of(device), shape, dtype.np)
        if memory_format not in (None, "torch.contiguous_format", "torch.preserve_format"):
            data = preserving_copy(xp_of(device), data, dtype.np, memory_format)
        return _finish(data, dtype, device, requires_grad)
    make.__name__ = fname
    return make


zeros = _factory("zeros", lambda xp, s, d: xp.zeros(s, d))
ones = _factory("ones", lambda xp, s, d: _full(xp, s, 1, d))
empty = _factory("empty", lambda xp, s, d: xp.zeros(s, d))   # zero-filled: no garbage reads


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__}")
    shape = _sizes("full", (size,))
    _check_sizes(shape)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if dtype is None:
        if isinstance(fill_value, (np.bool_, np.complexfloating)) and \
                not isinstance(fill_value, complex):
            # NumPy's bool and complex64 scalars are no Python bool or complex: PyTorch takes
            # them for real numbers (NumPy warns that the imaginary part is dropped)
            fill_value = float(fill_value)
        dtype = D.scalar_dtype(fill_value)
    elif isinstance(fill_value, (numbers.Number, np.bool_)):
        _check_fits(fill_value, dtype)
        fill_value = checked_number(fill_value, dtype)
    device = as_device(device)
    return _finish(_full(xp_of(device), shape, fill_value, dtype.np), dtype, device,
                   requires_grad)


def _full(xp, shape, value, np_dtype):
    if np_dtype == D.COMPLEX32_NP:      # (complex32's float16 pairs: NumPy fills both parts)
        return D.as_complex32(xp.full(shape, value, np.complex64))
    return xp.full(shape, value, np_dtype)


def _like(fn):
    def make(input, *, dtype=None, layout=None, device=None, requires_grad=False,
             memory_format=None, pin_memory=False):
        return _laid_out_like(input, fn(input.shape, dtype=dtype or input._dtype,
                                        device=device or input._device,
                                        requires_grad=requires_grad), memory_format)
    return make


def _laid_out_like(input, out, memory_format=None):
    """*_like results are laid out in memory as `memory_format` says (by default PyTorch's
    preserve_format: in the input's memory order)."""
    strides = copy_strides(input._data, memory_format)
    if strides is not None:
        data = strided_empty(xp_of(out._device), input._data.shape, strides, out._dtype.np)
        data[...] = out._data
        out._data = data
    return out


def copy_strides(a, memory_format=None):
    """The element strides PyTorch gives a new tensor laid out like array `a` in
    `memory_format`, or None for plain C-contiguous ones. preserve_format (the default) keeps
    the strides of a dense, non-overlapping `a`; for any other `a` it orders dense strides as
    `a`'s dims are ordered in memory."""
    if memory_format == "torch.channels_last":
        if a.ndim != 4:
            raise RuntimeError("required rank 4 tensor to use channels_last format")
        return _dense_in_order(a.shape, (1, 3, 2, 0))
    if memory_format == "torch.channels_last_3d":
        if a.ndim != 5:
            raise RuntimeError("required rank 5 tensor to use channels_last_3d format")
        return _dense_in_order(a.shape, (1, 4, 3, 2, 0))
    if memory_format == "torch.contiguous_format" or a.flags.c_contiguous and a.size and \
            element_strides(a) == contiguous_strides(a.shape):
        return None
    strides = element_strides(a)
    if _non_overlapping_and_dense(a.shape, strides):
        return strides
    # dims innermost first, by stride (an insertion sort, so ties keep their order, except
    # that of two equal strides the larger dim goes outside); broadcast dims (stride 0) are
    # not compared, so they stay where a contiguous layout has them
    order = list(range(a.ndim))[::-1]
    for i in range(1, a.ndim):
        moving = i
        for j in range(i - 1, -1, -1):
            s0, s1 = strides[order[j]], strides[order[moving]]
            if s0 == 0 or s1 == 0:
                continue
            if s0 < s1:
                break
            if s0 > s1 or a.shape[order[j]] > a.shape[order[moving]]:
                order[j], order[moving] = order[moving], order[j]
                moving = j
    return _dense_in_order(a.shape, order)


def strided_empty(xp, shape, strides, np_dtype):
    """A new (zero-filled) array with the given shape and element strides."""
    return restride(xp.zeros(max(_extent(shape, strides, 0), 1), np_dtype), shape, strides)


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    return _laid_out_like(input, full(tuple(input.shape), fill_value,
                                      dtype=dtype or input._dtype,
                                      device=device or input._device,
                                      requires_grad=requires_grad), memory_format)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False):
    """An uninitialised (zero-filled) tensor with the given strides, over its own memory."""
    dtype = dtype or D.get_default_dtype()
    device = as_device(device)
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of "
                           f"strides ({len(stride)})")
    _check_sizes(size)
    buf = xp_of(device).zeros(max(_extent(size, stride, 0), 1), dtype.np)
    # (an empty tensor has a one-element buffer, which no reshape turns into its shape)
    arr = buf.reshape(size) if _dense(size, stride) and buf.size == int(np.prod(size)) else \
        strided_view(buf, size, stride, 0)
    return _finish(arr, dtype, device, requires_grad)


def _dense(size, stride):
    expected = 1
    for s, st in zip(reversed(size), reversed(stride)):
        if s != 1 and st != expected:
            return False
        expected *= s
    return True


_EYE_SIGNATURE = ("{}*, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
                  "torch.device device = None, bool pin_memory = False, bool requires_grad = "
                  "False")


def eye(n, *args, m=None, dtype=None, device=None, requires_grad=False, out=None):
    # (m is taken apart from the other positionals only to name it as PyTorch's errors do)
    given_m = args[0] if args else m
    if len(args) > 1 or (args or m is not None) and not _is_size(given_m, first=True) or \
            (args or m is not None) and not _is_size(n, first=True):
        got = ", ".join([type(n).__name__] + [type(a).__name__ for a in args] +
                        ([f"m={type(m).__name__}"] if m is not None else []))
        raise TypeError(f"eye() received an invalid combination of arguments - got ({got}), "
                        f"but expected one of:\n * (int n, {_EYE_SIGNATURE.format('')})\n * "
                        f"(int n, int m, {_EYE_SIGNATURE.format('')})\n")
    if not _is_size(n, first=True):
        raise TypeError(f"eye(): argument 'n' (position 1) must be int, not {_type_name(n)}")
    n, m = n.__index__(), None if given_m is None else given_m.__index__()
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m is not None and m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    dtype = dtype or D.get_default_dtype()
    if dtype is D.complex32:
        raise NotImplementedError("\"eye\" not implemented for 'ComplexHalf'")
    device = as_device(device)
    return _finish(xp_of(device).eye(n, n if m is None else m, dtype=dtype.np), dtype, device,
                   requires_grad)


def _two_sum(x, y):
    """x + y as a double and its exact rounding error (Knuth)."""
    s = x + y
    back = s - x
    return s, (x - (s - back)) + (y - back)


def _fused_multiply_add(a, b, c, dtype=np.float64):
    """a * b + c rounded once to `dtype`, as PyTorch's kernels compute it (NumPy has no fma).

    The product's rounding error (Dekker's split) and the sum's (two-sum) are recovered and
    added back; for a narrower dtype the double result is rounded to odd first, so that its
    final rounding is the single rounding of the exact value."""
    a = np.float64(a) if np.ndim(a) == 0 else np.asarray(a, np.float64)
    p = a * b
    split = 134217729.0                       # 2**27 + 1

    def halves(x):
        t = split * x
        hi = t - (t - x)
        return hi, x - hi
    a_hi, a_lo = halves(a)
    b_hi, b_lo = halves(b)
    p_err = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    s, s_err = _two_sum(p, c)
    err = s_err + p_err
    t, t_err = _two_sum(s, err)
    t = np.where(err == 0, s, t)              # (s + 0.0 would turn -0.0 into 0.0)
    if np.dtype(dtype) == np.float64:
        return t
    even = (np.asarray(t, np.float64).view(np.int64) & 1) == 0
    towards = np.where(t_err > 0, np.inf, -np.inf)
    return np.where((t_err != 0) & even, np.nextafter(t, towards), t).astype(dtype)


def _arange_values(start, step, n, dtype):
    """PyTorch's float arange, rounding for rounding: its CPU kernel fills blocks of one SIMD
    vector (2 vectors at a time, the tail element-wise) from a base rounded to the dtype,
    with fused multiply-adds in double precision."""
    idx = np.arange(n, dtype=np.float64)
    if float(start).is_integer() and float(step).is_integer() and \
            abs(start) + abs(step) * n < 2 ** 53 and dtype.itemsize > 2:
        # every product and sum is exact (not so for the half types, whose blocks start
        # from a base already rounded to the dtype)
        return start + step * idx
    lanes = {2: 16, 4: 8, 8: 4}[dtype.itemsize] if dtype._category == 2 else 1
    vectorised = n // (2 * lanes) * (2 * lanes)
    block = np.where(idx < vectorised, idx // lanes * lanes, idx)
    if dtype.itemsize == 2:
        # half types compute in float32: float16 with fused multiply-adds (a float32 times a
        # small integer is exact in double, so one rounding to float32 is the fused result),
        # bfloat16 rounding the product and then the sum
        f32 = np.float32
        start, step = f32(start), f32(step)
        if dtype.name == "float16":
            def madd(x, k, y):
                return (np.float64(x) * k + np.asarray(y, np.float64)).astype(f32)
        else:
            def madd(x, k, y):
                return x * k.astype(f32) + y
        base = madd(step, block, start).astype(dtype.np).astype(f32)
        return np.where(idx > block, madd(step, idx - block, base), base)
    # (in double precision, then rounded to the dtype: arange accumulates in double)
    base = _fused_multiply_add(step, block, start).astype(dtype.np).astype(np.float64)
    # a block's first element is its base itself ("+ 0 * step" would turn -0.0 into 0.0)
    return np.where(idx > block, _fused_multiply_add(step, idx - block, base), base)


def arange(start, end=None, step=1, *, out=None, dtype=None, device=None,
           requires_grad=False, layout=None, pin_memory=False):
    if end is None:
        start, end = 0, start
    start, end, step = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    for v in (start, end, step):
        if isinstance(v, complex):
            raise RuntimeError("value cannot be converted to type double without overflow")
    if dtype is None:
        dtype = D.int64 if all(isinstance(v, numbers.Integral) for v in (start, end, step)) \
            else D.get_default_dtype()
    if dtype is D.bool_ or dtype is D.complex32:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for "
                                  f"'{scalar_type_name(dtype)}'")
    if dtype is D.int64:
        # an int64 range converts its bounds and step to integers first
        if int(step) == 0:
            raise (ValueError if step else RuntimeError)("step must be nonzero")
        start, end, step = int(start), int(end), int(step)
    elif step == 0:
        raise RuntimeError("step must be nonzero")
    for v in (start, end):
        if isinstance(v, float) and not np.isfinite(v):
            raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (end - start) * step < 0 or (end != start and (end > start) != (step > 0)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    device = as_device(device)
    if dtype is D.int64:
        sign = 1 if step > 0 else -1
        num = end - start + step - sign
        n = abs(num) // abs(step) * (1 if (num >= 0) == (step > 0) else -1)  # C++ division
        # (made where it lives: positions, the common int64 range, need no host copy)
        data = start + step * array_module(device).arange(max(n, 0), dtype=np.int64)
    elif dtype._category == 1:
        # other integer dtypes count in doubles but step in integers
        n = int(np.ceil((float(end) - float(start)) / float(step)))
        data = int(start) + int(step) * np.arange(max(n, 0), dtype=np.int64)
    else:
        n = int(np.ceil((float(end) - float(start)) / float(step)))
        data = _arange_values(float(start), float(step), max(n, 0), dtype)
    return _finish(_on_device(data.astype(dtype.np), device), dtype, device, requires_grad)


_MISSING = object()


def linspace(start, end, steps=_MISSING, *, out=None, dtype=None, device=None, requires_grad=False,
             layout=None):
    start, end, dtype = _range_dtype("linspace", start, end, steps, dtype)
    if dtype is D.complex32:
        raise NotImplementedError("\"linspace_cpu\" not implemented for 'ComplexHalf'")
    device = as_device(device)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if dtype.is_complex:      # the real and imaginary parts run on their own
        real = dtype.to_real()
        data = _linspace_values(start.real, end.real, steps, real) + \
            1j * _linspace_values(start.imag, end.imag, steps, real)
    else:
        data = _linspace_values(start, end, steps, dtype)
    return _finish(_on_device(data.astype(dtype.np), device), dtype, device, requires_grad)


def _range_dtype(fname, start, end, steps, dtype):
    """linspace/logspace's bounds as numbers, and the dtype: complex bounds make a complex
    range (only into a complex dtype). Also PyTorch's check of the argument types."""
    if not (_is_size(steps, first=True) and all(
            isinstance(v, (Tensor, numbers.Number, np.bool_)) for v in (start, end))):
        base = "float base = 10.0, " if fname == "logspace" else ""
        got = ", ".join(type(v).__name__ for v in (start, end, steps) if v is not _MISSING)
        sig = "".join(f" * ({a} start, {b} end, int steps, {base}*, Tensor out = None, "
                      f"torch.dtype dtype = None, torch.layout layout = None, torch.device "
                      f"device = None, bool pin_memory = False, bool requires_grad = False)\n"
                      for a, b in (("Tensor", "Tensor"), ("Number", "Tensor"),
                                   ("Tensor", "Number"), ("Number", "Number")))
        raise TypeError(f"{fname}() received an invalid combination of arguments - got ({got}), "
                        f"but expected one of:\n{sig}")
    start, end = [v.item() if isinstance(v, Tensor) else v for v in (start, end)]
    if isinstance(start, (complex, np.complexfloating)) or \
            isinstance(end, (complex, np.complexfloating)):
        inferred = D.default_complex_dtype()
        if dtype is not None and not dtype.is_complex:
            part = {"complex64": "float", "complex128": "double"}[inferred.name]
            raise RuntimeError(f"torch.{fname}(): inferred dtype c10::complex<{part}> can't be "
                               f"safely cast to passed dtype {scalar_type_name(dtype)}")
        return complex(start), complex(end), dtype or inferred
    return start, end, dtype or D.get_default_dtype()


def _linspace_values(start, end, steps, dtype):
    """PyTorch's formula: the first half counts up from start, the second half down from end
    (so both ends are exact). Integer dtypes take integer bounds and a double step; float
    dtypes round the bounds and the step to the dtype first."""
    if isinstance(start, Tensor):
        start = start.item()
    if isinstance(end, Tensor):
        end = end.item()
    if dtype._category == 1:
        start, end = float(int(start)), float(int(end))
        real = np.float64
    else:
        real = dtype.to_real().np if dtype._category == 3 else dtype.np
        start, end = real.type(start), real.type(end)
    if steps == 1:
        return np.array([start], np.float64 if dtype._category == 1 else real)
    idx = np.arange(steps, dtype=np.float64)
    if dtype._category == 1:
        step = (end - start) / (steps - 1)
    else:
        step = real.type((end - start) / real.type(max(steps - 1, 1)))
    step = np.float64(step)

    def formula(i):
        if dtype._category == 1:
            return np.where(i < steps // 2, np.float64(start) + step * i,
                            np.float64(end) - step * (steps - 1 - i))
        # fused multiply-adds in the dtype, as PyTorch's kernel
        return np.where(i < steps // 2, _fused_multiply_add(step, i, float(start), real),
                        _fused_multiply_add(-step, steps - 1 - i, float(end), real))
    if dtype._category == 2 and dtype.itemsize == 2:
        # half types round every operation (done in float32) back to the dtype
        def h(x):
            return np.asarray(x, np.float32).astype(dtype.np).astype(np.float32)
        f32 = np.float32
        step = h(f32(np.float32(end) - np.float32(start)) / f32(steps - 1))
        i = idx.astype(f32)
        return np.where(i < steps // 2, h(f32(start) + h(step * i)),
                        h(f32(end) - h(step * (steps - 1 - i))))
    values = formula(idx)
    return np.trunc(values) if dtype._category == 1 else values


def logspace(start, end, steps=_MISSING, base=10.0, *, out=None, dtype=None, device=None,
             requires_grad=False, layout=None):
    start, end, dtype = _range_dtype("logspace", start, end, steps, dtype)
    device = as_device(device)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    data = np.power(base, np.linspace(start, end, steps,
                                      dtype=np.complex128 if dtype.is_complex else np.float64))
    return _finish(_on_device(data.astype(dtype.np), device), dtype, device, requires_grad)


# ----------------------------------------------------------------------------- copies
def preserving_copy(xp, a, np_dtype, memory_format=None):
    """A copy of array `a` (as `np_dtype`) laid out as PyTorch lays out a copy in
    `memory_format` (see copy_strides)."""
    if getattr(a, "_ember_sparse", False) or getattr(type(a), "_ember_csr", False):
        return a.astype(np_dtype)           # a sparse tensor's arrays (ember/sparse)
    strides = copy_strides(a, memory_format)
    a = D.as_torch_rounds(a, np_dtype)          # (keeps the layout: astype's order is 'K')
    if strides is None:
        return xp.array(a, dtype=np_dtype, order="C", copy=True)
    out = strided_empty(xp, a.shape, strides, np_dtype)
    out[...] = a
    return out


@primitive("clone", node="CloneBackward0")
def _clone(xp, self, *, memory_format=None):
    return preserving_copy(xp, self, self.dtype, memory_format)


@_clone.derivative
def _(ctx, grad):
    return grad


def clone(input, *, memory_format=None):
    return _clone(input, memory_format=memory_format)


def contiguous(self, memory_format=None):
    if memory_format == "torch.preserve_format":
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    memory_format = memory_format or "torch.contiguous_format"
    return self if self.is_contiguous(memory_format) else _clone(self,
                                                                  memory_format=memory_format)


@primitive("_to_copy", node="ToCopyBackward0")
def _to_copy(xp, self, *, dtype, device, memory_format=None):
    """A copy in `dtype`; on `device` when it is given (None: the input's device)."""
    arr = preserving_copy(xp, self, dtype.np, memory_format)
    if getattr(arr, "_ember_sparse", False) or getattr(type(arr), "_ember_csr", False):
        if device is not None and device.type != "cpu" or not isinstance(arr.values, np.ndarray):
            raise NotImplementedError("ember: moving a sparse tensor between devices is not "
                                      "supported")
        return arr
    if device is not None:
        # across devices: through the host (CuPy copies device to device the same way)
        arr = backend(device.type).from_host(_backend.of(xp).to_host(arr), device.index)
    return arr


@_to_copy.derivative
def _(ctx, grad):
    meta_dtype = ctx.input_dtype()
    if grad._dtype._category == 3 and meta_dtype._category < 3:
        grad = grad.real        # a real input's gradient is the real part, without a warning
    return grad.to(ctx.input_device, meta_dtype)


def to(self, *args, **kwargs):
    """Tensor.to(device | dtype | other, non_blocking=False, copy=False)."""
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    memory_format = kwargs.pop("memory_format", None)
    if kwargs:
        got = ", ".join(f"{k}={type(v).__name__}" for k, v in kwargs.items())
        raise TypeError(
            f"to() received an invalid combination of arguments - got ({got}, ), but expected "
            f"one of:\n * (torch.device device = None, torch.dtype dtype = None, bool "
            f"non_blocking = False, bool copy = False, *, torch.memory_format memory_format = "
            f"None)\n * (torch.dtype dtype, bool non_blocking = False, bool copy = False, *, "
            f"torch.memory_format memory_format = None)\n * (Tensor tensor, bool non_blocking "
            f"= False, bool copy = False, *, torch.memory_format memory_format = None)\n")
    flags = []                      # positional (non_blocking, copy) after the target
    for a in args:
        if isinstance(a, D.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, device = a._dtype, a._device
        elif isinstance(a, bool):
            flags.append(a)
        elif a is not None:
            device = a
    if len(flags) > 1:
        copy = flags[1]
    device = as_device(device) if device is not None else self._device
    dtype = dtype or self._dtype
    if memory_format == "torch.preserve_format":
        memory_format = None
    if dtype is self._dtype and device == self._device and not copy and (
            memory_format is None or
            memory_format == (suggested_format(self._data) or "torch.contiguous_format")):
        return self
    moving = device != self._device
    if dtype is D.complex32:
        D.warn_complex32()
    out = _to_copy(self, dtype=dtype, device=device if moving else None,
                   memory_format=memory_format)
    if moving:
        out._device = device        # the registry labels results with the inputs' device
    if out._grad_fn is not None:
        out._grad_fn._params["input_device"] = self._device
    return out


@primitive("copy_", node="CopyBackwards")
def _copy(xp, self, src):
    return xp.broadcast_to(src, self.shape)


@_copy.derivative
def _(ctx, grad):
    return grad * 0, grad.to(ctx.input_dtype(1))


# PyTorch's name() for this node carries its C++ namespace (its class is still CopyBackwards)
_copy.node_cls.name = lambda self: "torch::autograd::CopyBackwards"


def copy_(self, src, non_blocking=False):
    if not isinstance(src, Tensor):
        src = scalar_tensor(src, self)
    try:
        shape = np.broadcast_shapes(tuple(src.shape), tuple(self.shape))
    except ValueError:
        check_broadcast((self, src))        # PyTorch's words for shapes that do not broadcast
        raise
    if shape != tuple(self.shape):
        raise RuntimeError(f"output with shape [{', '.join(map(str, self.shape))}] doesn't match "
                           f"the broadcast shape [{', '.join(map(str, shape))}]")
    if src._device != self._device or src._dtype is not self._dtype:
        src = src.to(self._device, self._dtype)
    return _copy.inplace(self, src)


# by rank: the format's name and its dims innermost first (C, then W, H, (D,) then N)
_FORMATS = {4: ("torch.channels_last", (1, 3, 2, 0)),
            5: ("torch.channels_last_3d", (1, 4, 3, 2, 0))}


def suggested_format(a):
    """The memory format PyTorch takes array `a` to be in: the channels-last name of its rank
    when its strides are ordered as channels-last strides are, else None (contiguous).

    PyTorch judges by the order of the strides, not by density (a strided slice of an NHWC
    tensor is still NHWC), and settles ambiguous layouts towards contiguous: a zero channel
    stride, an empty dim, or a batch stride equal to the channel stride (N111 tensors) say
    contiguous; the strides of dims of size one count only through the bound they set."""
    entry = _FORMATS.get(a.ndim)
    # (the common quick answer: a last dim closer in memory than the channels, as in any
    # contiguous array with more than one channel, is never channels-last)
    if entry is None or a.strides[-1] < a.strides[1]:
        return None
    name, order = entry
    shape, strides = a.shape, element_strides(a)
    if strides[1] == 0:
        return None
    bound = 0           # the least stride the next dim (outwards) may have
    for d in order:
        if shape[d] == 0 or strides[d] < bound or d == 0 and bound == strides[1]:
            return None
        bound = strides[d] * shape[d] if shape[d] > 1 else strides[d]
    return name


@primitive("fill_", node="FillBackward0")
def _fill(xp, self, *, value):
    return xp.full_like(self, value)


@_fill.derivative
def _(ctx, grad):
    return grad * 0


_fill.fills = True      # (as in PyTorch, an expanded tensor may be filled in place)


def fill_(self, value):
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value._data.ndim} dimensions.")
        value = value.item()
    elif isinstance(value, (numbers.Number, np.bool_)):
        _check_fits(value, self._dtype)
        value = checked_number(value, self._dtype)
    return _fill.inplace(self, value=value)


@primitive("zero_", node="ZeroBackward0")
def _zero(xp, self):
    return xp.zeros_like(self)


@_zero.derivative
def _(ctx, grad):
    return grad * 0


_zero.fills = True


def zero_(self):
    return _zero.inplace(self)


_READONLY_WARNING = (
    "The given buffer is not writable, and PyTorch does not support non-writable tensors. "
    "This means you can write to the underlying (supposedly non-writable) buffer using the "
    "tensor. You may want to copy the buffer to protect its data or make it writable before "
    "converting it to a tensor. This type of warning will be suppressed for the rest of this "
    "program. (Triggered internally at /__w/pytorch/pytorch/torch/csrc/utils/"
    "tensor_new.cpp:1556.)")
_warned_readonly = []


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A tensor sharing the memory of an object with the buffer protocol."""
    view = memoryview(buffer)
    length = view.nbytes
    size = dtype.itemsize
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % size:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({size})")
        count = (length - offset) // size
    elif offset + count * size > length:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    if view.readonly and (_switches["warn_always"] or not _warned_readonly):
        if not _switches["warn_always"]:        # torch's once only counts once-mode warnings
            _warned_readonly.append(True)
        warnings.warn(_READONLY_WARNING, UserWarning, stacklevel=2)
    data = np.frombuffer(view.cast("B"), dtype=dtype.np, count=count, offset=offset)
    if view.readonly:
        data = data.view()
        data.flags.writeable = False
    out = Tensor._make(data, dtype)
    if requires_grad:
        out.requires_grad_(True)
    return out


def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None,
                      requires_grad=False, pin_memory=False):
    return empty_strided(size, stride, dtype=dtype or self._dtype,
                         device=device or self._device, requires_grad=requires_grad)


def fill(input, value):
    return fill_(input.clone(), value)


# ----------------------------------------------------------------------------- creation
def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """An empty tensor whose memory holds its dims in the order `physical_layout`."""
    size, order = as_shape((size,)), as_shape((physical_layout,))
    if len(size) != len(order):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {len(size)} is not equal to "
                           f"len(physical_layout) = {len(order)}")
    physical = contiguous_strides([size[d] for d in order])
    strides = [0] * len(size)
    for d, s in zip(order, physical):
        strides[d] = s
    return empty_strided(size, strides, dtype=dtype, device=device,
                                  requires_grad=requires_grad)


__all__ = ['empty_permuted', 'frombuffer', 'fill']
