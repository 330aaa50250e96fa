"""Making tensors: from data, filled, ranges, random; and the copy ops (clone, to, copy_)."""
import numbers

import numpy as np

from .. import _dtype as D
from .._device import as_device, array_module, CPU
from .._tensor import Tensor
from ..autograd import grad_mode
from ._utils import as_shape
from .registry import primitive, write_into, xp_of, Op


def _finish(array, dtype, device, requires_grad):
    t = Tensor._make(array, dtype, device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _on_device(array, device):
    if device.type == "cpu":
        return array
    return array_module(device).asarray(array)


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
    if isinstance(data, numbers.Complex):
        return D.default_complex_dtype()
    if isinstance(data, (list, tuple)):
        result = None
        for item in data:
            d = _infer_dtype(item)
            result = d if result is None else _promote_scalar_kinds(result, d)
        return result if result is not None else D.get_default_dtype()
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def _promote_scalar_kinds(a, b):
    return D.promote_types(a, b)


def _to_array(data, dtype):
    if isinstance(data, Tensor):
        return data._host().astype(dtype.np, copy=True)
    if isinstance(data, (list, tuple)):
        if any(isinstance(x, Tensor) for x in _flat(data)):
            data = _tensors_to_lists(data)
        _check_ragged(data)
    try:
        return np.array(data, dtype=dtype.np)
    except OverflowError:
        raise RuntimeError(f"value cannot be converted to type {dtype.name} without overflow") \
            from None


def _flat(data):
    for x in data:
        if isinstance(x, (list, tuple)):
            yield from _flat(x)
        else:
            yield x


def _tensors_to_lists(data):
    if isinstance(data, Tensor):
        if data._data.ndim == 0:
            return data.item()
        return data.tolist()
    if isinstance(data, (list, tuple)):
        return [_tensors_to_lists(x) for x in data]
    return data


def _check_ragged(data, depth=0):
    if not isinstance(data, (list, tuple)) or not data:
        return
    first = data[0]
    is_seq = isinstance(first, (list, tuple))
    n = len(first) if is_seq else None
    for x in data:
        if isinstance(x, (list, tuple)) != is_seq or (is_seq and len(x) != n):
            got = len(x) if isinstance(x, (list, tuple)) else None
            if got is None or n is None:
                raise TypeError(f"not a sequence" if is_seq else
                                f"expected a sequence of numbers, got {type(x).__name__}")
            raise ValueError(f"expected sequence of length {n} at dim {depth + 1} (got {got})")
        if is_seq:
            _check_ragged(x, depth + 1)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    if isinstance(data, Tensor):
        import warnings
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
                      "requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
    dtype = dtype or _infer_dtype(data)
    device = as_device(device)
    return _finish(_on_device(_to_array(data, dtype), device), dtype, device, requires_grad)


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype) if (dtype or device) else data
    if isinstance(data, np.ndarray) and (dtype is None or dtype.np == data.dtype) and \
            (device is None or as_device(device).type == "cpu"):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


asarray = as_tensor


def from_numpy(array):
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    if any(s < 0 for s in array.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors "
                         "with negative strides are not currently supported. (You can probably "
                         "work around this by making a copy of your array  with array.copy().) ")
    return Tensor._make(array, D.from_numpy_dtype(array.dtype))


def scalar_tensor(value, like=None, dtype=None):
    """A Python number as a zero-dim tensor (a wrapped operand where PyTorch needs a Tensor)."""
    dtype = dtype or D.scalar_dtype(value)
    device = like._device if isinstance(like, Tensor) else CPU
    return Tensor._make(_on_device(np.array(value, dtype=dtype.np), device), dtype, device)


def as_operand(x, dtype, like):
    """A where()/clamp() operand: tensors cast to `dtype`, numbers made zero-dim tensors."""
    if isinstance(x, Tensor):
        return x if x._dtype is dtype else x.to(dtype)
    return scalar_tensor(x, like, dtype)


# ----------------------------------------------------------------------------- the legacy constructor
_LEGACY_TYPES = {}


def legacy_tensor(cls, args, device=None, dtype=None):
    """`ember.Tensor(...)` / `FloatTensor(...)`: sizes, data, a tensor, or nothing."""
    dtype = dtype or getattr(cls, "_legacy_dtype", None) or D.get_default_dtype()
    device = as_device(device)
    if len(args) == 0:
        return _finish(np.empty((0,), dtype.np), dtype, device, False)
    if len(args) == 1:
        a = args[0]
        if isinstance(a, Tensor):
            if a._dtype is not dtype and cls is not Tensor:
                raise TypeError(f"expected {dtype.name} (got {a._dtype.name})")
            return a.detach() if cls is Tensor else a.detach()
        if isinstance(a, np.ndarray) or (isinstance(a, (list, tuple)) and
                                          not (isinstance(a, tuple) and False)):
            if isinstance(a, (list, tuple)) and a and not all(
                    isinstance(x, (numbers.Number, list, tuple, Tensor, np.ndarray, np.number))
                    for x in a):
                raise TypeError(_legacy_error(args))
            return _finish(_on_device(_to_array(a, dtype), device), dtype, device, False)
    if all(isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in args):
        return _finish(_on_device(np.zeros(tuple(args), dtype.np), device), dtype, device, False)
    if len(args) == 1 and isinstance(args[0], numbers.Number):
        raise TypeError(_legacy_error(args))
    raise TypeError(_legacy_error(args))


def _legacy_error(args):
    def kind(a):
        if isinstance(a, list):
            inner = {type(x).__name__ for x in a}
            return f"!list of [{', '.join(type(x).__name__ for x in a)}]!"
        return f"!{type(a).__name__}!"
    got = ", ".join(type(a).__name__ for a in args)
    why = ", ".join(kind(a) for a in args)
    return (f"new() received an invalid combination of arguments - got ({got}), but expected "
            f"one of:\n * (*, torch.device device = None)\n      didn't match because some of "
            f"the arguments have invalid types: ({why})\n * (torch.Storage storage)\n * (Tensor "
            f"other)\n * (tuple of ints size, *, torch.device device = None)\n * (object data, "
            f"*, torch.device device = None)\n")


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
                 D.bool_: "BoolTensor", D.complex64: "ComplexFloatTensor",
                 D.complex128: "ComplexDoubleTensor"}


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


def _legacy_new(cls, *args, device=None):
    t = legacy_tensor(cls, args, device=device, dtype=cls._legacy_dtype)
    return t


# ----------------------------------------------------------------------------- filled
def _factory(fill):
    def make(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False, memory_format=None):
        shape = as_shape(size)
        for s in shape:
            if s < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                                   f"[{', '.join(map(str, shape))}]")
        dtype = dtype or D.get_default_dtype()
        device = as_device(device)
        xp = xp_of(device)
        return _finish(fill(xp, shape, dtype.np), dtype, device, requires_grad)
    return make


zeros = _factory(lambda xp, s, d: xp.zeros(s, d))
ones = _factory(lambda xp, s, d: xp.ones(s, d))
empty = _factory(lambda xp, s, d: xp.zeros(s, d))   # zero-filled: no uninitialised reads


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    if dtype is None:
        dtype = D.scalar_dtype(fill_value)
    device = as_device(device)
    shape = as_shape((size,)) if not isinstance(size, int) else (size,)
    return _finish(xp_of(device).full(shape, fill_value, dtype.np), dtype, device, requires_grad)


def _like(fn):
    def make(input, *, dtype=None, layout=None, device=None, requires_grad=False,
             memory_format=None, pin_memory=False):
        return fn(input.shape, dtype=dtype or input._dtype, device=device or input._device,
                  requires_grad=requires_grad)
    return make


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)
rand_like = None   # defined after rand
randn_like = None


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    return full(input.shape, fill_value, dtype=dtype or input._dtype,
                device=device or input._device, requires_grad=requires_grad)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False):
    """An uninitialised (zero-filled) tensor with the given strides, over its own memory."""
    dtype = dtype or D.get_default_dtype()
    device = as_device(device)
    size, stride = tuple(size), tuple(stride)
    from .views import _extent, strided_view
    buf = xp_of(device).zeros(max(_extent(size, stride, 0), 1), dtype.np)
    arr = buf.reshape(size) if _dense(size, stride) else strided_view(buf, size, stride, 0)
    return _finish(arr, dtype, device, requires_grad)


def _dense(size, stride):
    expected = 1
    for s, st in zip(reversed(size), reversed(stride)):
        if s != 1 and st != expected:
            return False
        expected *= s
    return True


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False, out=None):
    dtype = dtype or D.get_default_dtype()
    device = as_device(device)
    return _finish(xp_of(device).eye(n, n if m is None else m, dtype=dtype.np), dtype, device,
                   requires_grad)


def arange(start, end=None, step=1, *, out=None, dtype=None, device=None,
           requires_grad=False, layout=None, pin_memory=False):
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    start, end, step = vals
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if dtype is None:
        dtype = D.int64 if all(isinstance(v, numbers.Integral) for v in vals) \
            else D.get_default_dtype()
    device = as_device(device)
    n = int(np.ceil((end - start) / step))
    data = (start + step * np.arange(n, dtype=np.float64)) if dtype._category >= 2 else \
        np.arange(start, end, step)
    return _finish(_on_device(data.astype(dtype.np), device), dtype, device, requires_grad)


def linspace(start, end, steps, *, out=None, dtype=None, device=None, requires_grad=False,
             layout=None):
    dtype = dtype or D.get_default_dtype()
    device = as_device(device)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    data = np.linspace(start, end, steps, dtype=np.float64)
    if dtype._category == 1:
        data = np.trunc(data)
    return _finish(_on_device(data.astype(dtype.np), device), dtype, device, requires_grad)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, device=None,
             requires_grad=False, layout=None):
    dtype = dtype or D.get_default_dtype()
    device = as_device(device)
    data = np.power(base, np.linspace(start, end, steps, dtype=np.float64))
    return _finish(_on_device(data.astype(dtype.np), device), dtype, device, requires_grad)


# ----------------------------------------------------------------------------- random
class Generator:
    """ember's random stream (NumPy's PCG64): torch's distributions, not torch's numbers."""

    def __init__(self, device="cpu"):
        self.device = as_device(device)
        self._seed = 67280421310721
        self._rng = np.random.Generator(np.random.PCG64(self._seed))

    def manual_seed(self, seed):
        self._seed = int(seed)
        self._rng = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def seed(self):
        import secrets
        self.manual_seed(secrets.randbits(63))
        return self._seed

    def initial_seed(self):
        return self._seed

    def get_state(self):
        import pickle
        state = pickle.dumps(self._rng.bit_generator.state)
        return Tensor._make(np.frombuffer(state, np.uint8).copy(), D.uint8)

    def set_state(self, state):
        import pickle
        self._rng.bit_generator.state = pickle.loads(state._data.tobytes())
        return self


default_generator = Generator()


def manual_seed(seed):
    default_generator.manual_seed(seed)
    return default_generator


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state):
    default_generator.set_state(state)


def _rng(generator):
    return (generator or default_generator)._rng


def _random_factory(sample):
    def make(*size, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
        shape = as_shape(size)
        dtype = dtype or D.get_default_dtype()
        device = as_device(device)
        data = sample(_rng(generator), shape).astype(dtype.np)
        return _finish(_on_device(data, device), dtype, device, requires_grad)
    return make


rand = _random_factory(lambda rng, s: rng.random(s, dtype=np.float64))
randn = _random_factory(lambda rng, s: rng.standard_normal(s))


def rand_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return rand(input.shape, dtype=dtype or input._dtype, device=device or input._device,
                requires_grad=requires_grad)


def randn_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return randn(input.shape, dtype=dtype or input._dtype, device=device or input._device,
                 requires_grad=requires_grad)


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad=False, out=None):
    if size is None:       # randint(high, size)
        low, high, size = 0, low, high
    dtype = dtype or D.int64
    device = as_device(device)
    data = _rng(generator).integers(low, high, size=tuple(size)).astype(dtype.np)
    return _finish(_on_device(data, device), dtype, device, requires_grad)


def randint_like(input, low, high=None, *, dtype=None, device=None):
    return randint(low, high, input.shape, dtype=dtype or input._dtype,
                   device=device or input._device)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False, out=None):
    dtype = dtype or D.int64
    device = as_device(device)
    return _finish(_on_device(_rng(generator).permutation(n).astype(dtype.np), device), dtype,
                   device, requires_grad)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None,
           device=None, requires_grad=False):
    rng = _rng(generator)
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        m = mean._data if isinstance(mean, Tensor) else mean
        s = std._data if isinstance(std, Tensor) else std
        like = mean if isinstance(mean, Tensor) else std
        shape = np.broadcast_shapes(np.shape(m), np.shape(s))
        data = rng.normal(0.0, 1.0, shape) * s + m
        return Tensor._make(data.astype(like._dtype.np), like._dtype, like._device)
    dtype = dtype or D.get_default_dtype()
    device = as_device(device)
    data = rng.normal(mean, std, tuple(size)).astype(dtype.np)
    return _finish(_on_device(data, device), dtype, device, requires_grad)


def bernoulli(input, p=None, *, generator=None, out=None):
    probs = input._data if p is None else np.full(input.shape, p)
    if np.any((probs < 0) | (probs > 1)):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could "
                           "this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")
    data = (_rng(generator).random(input.shape) < probs).astype(input._dtype.np)
    return Tensor._make(data, input._dtype, input._device)


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    probs = input._data.astype(np.float64)
    if probs.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if np.any(probs < 0) or not np.all(np.isfinite(probs)):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    rows = probs.reshape(-1, probs.shape[-1])
    if np.any(rows.sum(-1) <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement and num_samples > rows.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    rng = _rng(generator)
    out = np.empty((rows.shape[0], num_samples), np.int64)
    for i, row in enumerate(rows):          # one draw per distribution row, vectorised inside
        p = row / row.sum()
        if replacement:
            out[i] = rng.choice(len(p), size=num_samples, replace=True, p=p)
        else:
            # Gumbel-top-k: sampling without replacement proportional to p
            keys = np.log(np.where(p > 0, p, 1e-300)) - np.log(-np.log(rng.random(len(p))))
            keys[p == 0] = -np.inf
            out[i] = np.argsort(-keys, kind="stable")[:num_samples]
    if probs.ndim == 1:
        out = out[0]
    return Tensor._make(out, D.int64, input._device)


def poisson(input, generator=None):
    return Tensor._make(_rng(generator).poisson(input._data).astype(input._dtype.np),
                        input._dtype, input._device)


# ----------------------------------------------------------------------------- copies
@primitive("clone", node="CloneBackward0")
def _clone(xp, self):
    return self.copy()


@_clone.derivative
def _(ctx, grad):
    return grad


def clone(input, *, memory_format=None):
    return _clone(input)


def contiguous(self, memory_format=None):
    return self if self.is_contiguous() else _clone(self)


@primitive("_to_copy", node="ToCopyBackward0")
def _to_copy(xp, self, *, dtype, device):
    arr = self.astype(dtype.np, copy=True)
    if device.type != "cpu" or not isinstance(arr, np.ndarray):
        from .._backend import backend
        arr = backend(device.type).from_host(backend("cpu" if isinstance(arr, np.ndarray)
                                                     else "cuda").to_host(arr))
    return arr


@_to_copy.derivative
def _(ctx, grad):
    meta_dtype = ctx.input_dtype()
    return grad.to(ctx.input_device, meta_dtype)


def to(self, *args, **kwargs):
    """Tensor.to(device | dtype | other, non_blocking=False, copy=False)."""
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    for a in args:
        if isinstance(a, D.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, device = a._dtype, a._device
        elif isinstance(a, bool):
            continue
        elif a is not None:
            device = a
    device = as_device(device) if device is not None else self._device
    dtype = dtype or self._dtype
    if dtype is self._dtype and device == self._device and not copy:
        return self
    out = _to_copy(self, dtype=dtype, device=device)
    if out._grad_fn is not None:
        out._grad_fn._params["input_device"] = self._device
    return out


@primitive("copy_", node="CopyBackwards")
def _copy(xp, self, src):
    return xp.broadcast_to(src, self.shape)


@_copy.derivative
def _(ctx, grad):
    return grad * 0, grad.to(ctx.input_dtype(1))


def copy_(self, src, non_blocking=False):
    if not isinstance(src, Tensor):
        src = scalar_tensor(src, self)
    try:
        shape = np.broadcast_shapes(tuple(src.shape), tuple(self.shape))
    except ValueError:
        shape = None
    if shape != tuple(self.shape):
        raise RuntimeError(f"output with shape [{', '.join(map(str, self.shape))}] doesn't match "
                           f"the broadcast shape [{', '.join(map(str, shape or src.shape))}]")
    if src._device != self._device or src._dtype is not self._dtype:
        src = src.to(self._device, self._dtype)
    return _copy.inplace(self, src)


@primitive("fill_", node="FillBackward0")
def _fill(xp, self, *, value):
    return xp.full_like(self, value)


@_fill.derivative
def _(ctx, grad):
    return grad * 0


def fill_(self, value):
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value._data.ndim} dimensions.")
        value = value.item()
    return _fill.inplace(self, value=value)


@primitive("zero_", node="ZeroBackward0")
def _zero(xp, self):
    return xp.zeros_like(self)


@_zero.derivative
def _(ctx, grad):
    return grad * 0


def zero_(self):
    return _zero.inplace(self)
