"""A stand-in for CuPy over NumPy: ember's CUDA plumbing, exercised on the CPU.

`ndarray` here is a distinct type wrapping a NumPy array, and it treats NumPy the way CuPy's
arrays do:
- NumPy functions and ufuncs called on it dispatch back to this module (CuPy implements
  `__array_function__` and `__array_ufunc__`), so `np.sum(a)` stays on the "device";
- an implicit conversion to NumPy (`np.asarray(a)`, what `np.lib.stride_tricks` and most
  NumPy-only code does) raises CuPy's TypeError;
- a plain NumPy array mixed into a device computation raises CuPy's TypeError;
- a reduction or a scalar index gives a 0-d array, not a NumPy scalar.
Explicit transfers (`asnumpy`, `.get()`, `asarray` of host data, `item()`, `tolist()`,
`float(a)`, a host index array) work and are counted in `transfers`, so a test can assert
that a training step moves nothing between host and device.

It models CuPy's behaviour towards NumPy, not its namespace: every NumPy function is
available here, so a function CuPy lacks is found only on a real GPU (tests/gpu/).

    import fake_cupy                    # (tests/ is on sys.path under pytest)
    fake_cupy.install(device_count=2)   # ember's cuda devices now run on this module
    fake_cupy.uninstall()
"""
import contextlib
import traceback
import types

import numpy as np

# array copies each way, and scalar reads (bool(a), float(a), a.item(): a sync, as in CuPy)
transfers = {"to_host": 0, "to_device": 0, "scalar_reads": 0}
# set to a kind ("to_host", ...) to raise at that transfer instead: finds where one happens
raise_on = set()
_current_device = [0]


def reset_transfers():
    for kind in transfers:
        transfers[kind] = 0


# set record[0] to a list to collect (kind, the caller's file:line in ember) per transfer
record = [None]


def _count(kind):
    transfers[kind] += 1
    if kind in raise_on:
        raise RuntimeError(f"fake_cupy: a {kind} transfer")
    if record[0] is not None:
        frames = [f for f in traceback.extract_stack() if "/ember/" in f.filename]
        where = f"{frames[-1].filename.split('/ember/')[-1]}:{frames[-1].lineno}" if frames \
            else "?"
        record[0].append((kind, where))


def _to_host():
    _count("to_host")


def _to_device():
    _count("to_device")


def _scalar_read():
    _count("scalar_reads")


_UNSUPPORTED = "Unsupported type <class 'numpy.ndarray'>"
_IMPLICIT = ("Implicit conversion to a NumPy array is not allowed. Please use `.get()` to "
             "construct a NumPy array explicitly.")
# the ufuncs whose .at CuPy implements (others raise, as CuPy's do)
_UFUNC_AT = {"add", "subtract", "maximum", "minimum", "bitwise_and", "bitwise_or",
             "bitwise_xor"}


def _unwrap(x):
    """The NumPy array inside a device value; a host array in device code is CuPy's error."""
    if isinstance(x, ndarray):
        return x._a
    if isinstance(x, np.ndarray):
        raise TypeError(_UNSUPPORTED)
    if isinstance(x, (list, tuple)):
        return type(x)(_unwrap(v) for v in x)
    return x


def _wrap(x):
    if isinstance(x, np.ndarray):
        return ndarray(x)
    if isinstance(x, np.generic):
        return ndarray(np.asarray(x))       # CuPy gives 0-d arrays, never NumPy scalars
    if isinstance(x, tuple):
        return tuple(_wrap(v) for v in x)
    if isinstance(x, list):
        return [_wrap(v) for v in x]
    return x


def _unwrap_kwargs(kwargs):
    return {k: _unwrap(v) for k, v in kwargs.items()}


def _index(key):
    """A subscript: device arrays unwrapped; host index arrays allowed (CuPy copies them
    to the device) and counted."""
    if isinstance(key, tuple):
        return tuple(_index(k) for k in key)
    if isinstance(key, ndarray):
        return key._a
    if isinstance(key, np.ndarray) or isinstance(key, list) and any(
            isinstance(k, (np.ndarray, ndarray)) for k in key):
        _to_device()
        return np.asarray([_index(k) for k in key]) if isinstance(key, list) else key
    return key


# NumPy ndarray attributes CuPy's ndarray does not have
_NOT_IN_CUPY = {"setflags", "tofile", "dump", "dumps", "itemset", "byteswap", "newbyteorder",
                "getfield", "setfield", "ctypes", "resize", "ptp"}


class _Memory:
    """A device pointer (CuPy's MemoryPointer): an address in an owner array's memory."""
    __slots__ = ("owner", "ptr")

    def __init__(self, owner, ptr):
        self.owner, self.ptr = owner, ptr

    def __add__(self, offset):
        return _Memory(self.owner, self.ptr + offset)


class _Flags:
    """CuPy's ndarray.flags: the contiguity and ownership flags only (no `writeable`)."""
    __slots__ = ("c_contiguous", "f_contiguous", "owndata")

    def __init__(self, flags):
        self.c_contiguous, self.f_contiguous = flags.c_contiguous, flags.f_contiguous
        self.owndata = flags.owndata

    def __getitem__(self, name):
        return getattr(self, {"C_CONTIGUOUS": "c_contiguous", "F_CONTIGUOUS": "f_contiguous",
                              "OWNDATA": "owndata"}[name])


class _Interface:
    """NumPy's array interface for a geometry over an owner's memory (kept alive by it)."""

    def __init__(self, owner, ptr, shape, strides, itemsize):
        self.owner = owner
        self.__array_interface__ = {"data": (ptr, False), "shape": tuple(shape),
                                    "strides": tuple(strides), "typestr": f"|V{itemsize}",
                                    "version": 3}


class ndarray:
    """A device array: a NumPy array that NumPy code cannot silently read."""
    __slots__ = ("_a", "__weakref__")
    __array_priority__ = 100

    def __init__(self, a, dtype=None, memptr=None, strides=None):
        if memptr is not None:
            # CuPy's ndarray(shape, dtype, memptr=, strides=): a view of existing memory
            dtype = np.dtype(dtype)
            strides = strides or tuple(np.cumprod((1,) + tuple(a[:0:-1]))[::-1] *
                                       dtype.itemsize)
            a = np.asarray(_Interface(memptr.owner, memptr.ptr, a, strides,
                                      dtype.itemsize)).view(dtype)
        if not isinstance(a, np.ndarray):
            raise TypeError("fake_cupy.ndarray wraps a NumPy array")
        self._a = a

    # ------------------------------------------------------------------ NumPy protocols
    def __array__(self, dtype=None, copy=None):
        raise TypeError(_IMPLICIT)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "at" and ufunc.__name__ not in _UFUNC_AT:
            raise NotImplementedError(f"cupy.{ufunc.__name__}.at is not supported")
        if method == "at":
            target, index, *rest = inputs
            getattr(ufunc, method)(_unwrap(target), _index(index), *_unwrap(rest))
            return None
        return _wrap(getattr(ufunc, method)(*_unwrap(inputs), **_unwrap_kwargs(kwargs)))

    def __array_function__(self, func, types_, args, kwargs):
        return _wrap(func(*_unwrap(args), **_unwrap_kwargs(kwargs)))

    @property
    def __cuda_array_interface__(self):
        interface = dict(self._a.__array_interface__)
        interface["version"] = 3
        return interface

    # ------------------------------------------------------------------ attributes
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    strides = property(lambda self: self._a.strides)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    flags = property(lambda self: _Flags(self._a.flags))
    T = property(lambda self: ndarray(self._a.T))
    mT = property(lambda self: ndarray(self._a.mT))
    real = property(lambda self: ndarray(self._a.real))
    imag = property(lambda self: ndarray(self._a.imag))
    data = property(lambda self: _Memory(self._a, self._a.__array_interface__["data"][0]))
    device = property(lambda self: cuda.Device(0))

    @property
    def base(self):
        return None if self._a.base is None else ndarray(self._a.base) \
            if isinstance(self._a.base, np.ndarray) else None

    def __getattr__(self, name):
        # the methods CuPy's ndarray shares with NumPy's (reshape, astype, sum, ...); not
        # NumPy's protocols (__array_interface__ is host memory)
        if name.startswith("__") or name in _NOT_IN_CUPY:
            raise AttributeError(f"'cupy.ndarray' object has no attribute '{name}'")
        attr = getattr(self._a, name)
        if not callable(attr):
            return attr

        def method(*args, **kwargs):
            return _wrap(attr(*_unwrap(args), **_unwrap_kwargs(kwargs)))
        return method

    # ------------------------------------------------------------------ transfers
    def get(self, stream=None, order="C", out=None):
        _to_host() if self._a.size > 1 else _scalar_read()
        return self._a.copy()

    def item(self, *args):
        _scalar_read()
        return self._a.item(*args)

    def tolist(self):
        _to_host()
        return self._a.tolist()

    def __float__(self):
        _scalar_read()
        return float(self._a)

    def __int__(self):
        _scalar_read()
        return int(self._a)

    def __complex__(self):
        _scalar_read()
        return complex(self._a)

    def __bool__(self):
        _scalar_read()
        return bool(self._a)

    def __index__(self):
        _scalar_read()
        return self._a.__index__()

    # ------------------------------------------------------------------ containers
    def __len__(self):
        return len(self._a)

    def __iter__(self):
        return (ndarray(np.asarray(v)) for v in self._a)

    def __getitem__(self, key):
        return _wrap(self._a[_index(key)])

    def __setitem__(self, key, value):
        if isinstance(value, np.ndarray):
            _to_device()                   # CuPy copies a host value over
        else:
            value = _unwrap(value)
        self._a[_index(key)] = value

    def __repr__(self):
        return "fake_cupy." + repr(self._a)

    __hash__ = None

    def __copy__(self):
        return ndarray(self._a.copy())

    def __deepcopy__(self, memo):
        return ndarray(self._a.copy())

    def __reduce__(self):
        # pickling a device array goes through the host, as CuPy's does
        _to_host()
        return (_from_pickle, (self._a.copy(),))


def _from_pickle(a):
    return ndarray(a)


def _operator(name):
    numpy_method = getattr(np.ndarray, name)

    def op(self, *args):
        return _wrap(numpy_method(self._a, *_unwrap(args)))
    op.__name__ = name
    return op


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__",
              "__rmod__", "__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__and__",
              "__rand__", "__or__", "__ror__", "__xor__", "__rxor__", "__lshift__",
              "__rlshift__", "__rshift__", "__rrshift__", "__neg__", "__pos__", "__abs__",
              "__invert__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__",
              "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__imod__",
              "__ipow__", "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__"):
    setattr(ndarray, _name, _operator(_name))


def _inplace(name):
    numpy_method = getattr(np.ndarray, name)

    def op(self, other):
        numpy_method(self._a, _unwrap(other))
        return self
    return op


for _name in ("__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__imod__",
              "__ipow__", "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__"):
    setattr(ndarray, _name, _inplace(_name))


# ---------------------------------------------------------------------- the namespace
def asnumpy(a, stream=None, order="C", out=None, blocking=True):
    if isinstance(a, ndarray):
        _to_host() if a._a.size > 1 else _scalar_read()     # one element: a scalar read
        return a._a.copy()
    return np.asarray(a)


def _host_input(obj):
    """Does making a device array of obj copy host memory over?"""
    if isinstance(obj, np.ndarray):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_host_input(v) for v in obj)
    return False


def _transfer_in(numpy_function):
    def make(obj, *args, **kwargs):
        if isinstance(obj, ndarray):
            return _wrap(numpy_function(obj._a, *args, **kwargs))
        if _host_input(obj):
            _to_device()
        return _wrap(numpy_function(_unwrap_host(obj), *args, **kwargs))
    return make


def _unwrap_host(obj):
    if isinstance(obj, ndarray):
        return obj._a
    if isinstance(obj, (list, tuple)):
        return type(obj)(_unwrap_host(v) for v in obj)
    return obj


asarray = _transfer_in(np.asarray)
array = _transfer_in(np.array)
asanyarray = _transfer_in(np.asarray)


def get_array_module(*args):
    return _this if any(isinstance(a, ndarray) for a in args) else np


def _function(numpy_function):
    def call(*args, **kwargs):
        return _wrap(numpy_function(*_unwrap(args), **_unwrap_kwargs(kwargs)))
    call.__name__ = getattr(numpy_function, "__name__", "function")
    return call


class _Namespace(types.SimpleNamespace):
    """A NumPy submodule seen from the device (linalg, fft, random, lib.stride_tricks)."""

    def __init__(self, module):
        super().__init__()
        object.__setattr__(self, "_module", module)

    def __getattr__(self, name):
        return _translate(getattr(self._module, name))


def _translate(obj):
    if isinstance(obj, (type, np.ufunc, np.dtype)) or not callable(obj):
        if isinstance(obj, types.ModuleType):
            return _Namespace(obj)
        return obj                  # dtypes, constants, ufuncs (they dispatch to ndarray)
    return _function(obj)


class _Device:
    def __init__(self, device=None):
        self.id = _current_device[0] if device is None else int(device)

    def __enter__(self):
        self._previous = _current_device[0]
        _current_device[0] = self.id
        return self

    def __exit__(self, *exc):
        _current_device[0] = self._previous

    def synchronize(self):
        pass

    def use(self):
        _current_device[0] = self.id


class _Runtime:
    device_count = 1

    def getDeviceCount(self):
        return self.device_count

    def getDevice(self):
        return _current_device[0]

    def setDevice(self, index):
        _current_device[0] = index

    def memGetInfo(self):
        return (1 << 30, 1 << 30)

    def getDeviceProperties(self, index):
        return {"name": b"fake device", "major": 9, "minor": 0, "totalGlobalMem": 1 << 30,
                "multiProcessorCount": 1}

    def deviceCanAccessPeer(self, a, b):
        return 1


class _Stream:
    null = None
    done = True

    def synchronize(self):
        pass

    def use(self):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass


_Stream.null = _Stream()


class _MemoryPool:
    def used_bytes(self):
        return 0

    def total_bytes(self):
        return 0

    def free_all_blocks(self):
        pass

    def set_limit(self, size=None, fraction=None):
        pass


_pool = _MemoryPool()
cuda = types.SimpleNamespace(Device=_Device, runtime=_Runtime(), Stream=_Stream,
                             ExternalStream=lambda ptr: _Stream(),
                             get_current_stream=lambda: _Stream.null)


def get_default_memory_pool():
    return _pool


def scatter_add(a, slices, value):
    """cupyx.scatter_add"""
    np.add.at(_unwrap(a), _index(slices), _unwrap(value))


def scatter_max(a, slices, value):
    """cupyx.scatter_max"""
    np.maximum.at(_unwrap(a), _index(slices), _unwrap(value))


def scatter_min(a, slices, value):
    """cupyx.scatter_min"""
    np.minimum.at(_unwrap(a), _index(slices), _unwrap(value))


def __getattr__(name):
    # everything else: NumPy's function of that name, seen from the device
    if name.startswith("__"):
        raise AttributeError(name)
    return _translate(getattr(np, name))


_this = __import__(__name__, fromlist=["_"])


def install(device_count=1):
    """Run ember's CUDA devices on this module (as if device_count GPUs were present)."""
    from ember import _backend
    cuda.runtime.device_count = device_count
    _current_device[0] = 0
    reset_transfers()
    _backend.use_cuda_module(_this, _this, device_count)


def uninstall():
    from ember import _backend
    _backend.use_cuda_module(None)


@contextlib.contextmanager
def installed(device_count=1):
    install(device_count)
    try:
        yield _this
    finally:
        uninstall()
