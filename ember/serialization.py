"""ember.save / ember.load in PyTorch's own checkpoint format.

A checkpoint is a zip archive (entries stored, not compressed) holding:

    archive/data.pkl            the object, pickled with protocol 2; each tensor is pickled as
                                torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
                                requires_grad, OrderedDict()), its storage as a persistent id
                                ('storage', torch.<Type>Storage, key, location, numel)
    archive/data/<key>          the raw bytes of each storage, once per storage (views share it)
    archive/byteorder           "little"
    archive/version             "3"  (plus .format_version and .storage_alignment)

Each storage record starts at a 64-byte boundary of the file, as torch writes them, so the
file can also be memory-mapped by torch. torch.load(path, weights_only=True) reads what
ember.save writes, and ember.load reads what torch.save writes.

Loading never runs code from the file: the unpickler only resolves the handful of names the
format needs (the allowlist below); any other name raises UnpicklingError naming it.
"""
import collections
import contextlib
import enum
import io
import mmap as _mmap
import os
import pickle
import pickletools
import shutil
import struct
import sys
import tempfile
import uuid
import warnings
import zipfile

import numpy as np

from . import _dtype as D, cuda
from ._device import device as _device_cls
from ._layout import layout as _layout_cls, strided, sparse_coo
from ._tensor import Tensor, Size, contiguous_strides
from .sparse._conversions import make_coo_tensor
from .nn.parameter import Parameter
from . import _storage, _typed_storage
from ._storage import UntypedStorage
from .nn import parameter
from .nn.parameter import UninitializedTensorMixin

_ALIGNMENT = 64
_FORMAT_VERSION = b"3\n"

# torch's typed-storage class name for each dtype (the on-disk dtype tag)
_STORAGE_NAME = {
    D.float64: "DoubleStorage", D.float32: "FloatStorage", D.float16: "HalfStorage",
    D.bfloat16: "BFloat16Storage", D.int64: "LongStorage", D.int32: "IntStorage",
    D.int16: "ShortStorage", D.int8: "CharStorage", D.uint8: "ByteStorage",
    D.bool_: "BoolStorage", D.complex64: "ComplexFloatStorage",
    D.complex128: "ComplexDoubleStorage",
}
_STORAGE_DTYPE = {name: dt for dt, name in _STORAGE_NAME.items()}


class CheckpointError(RuntimeError):
    """A checkpoint file that is truncated, corrupted or not a checkpoint at all."""


# ====================================================================== saving
class _Global:
    """A name to write into the pickle as a GLOBAL, without importing it (torch is optional)."""
    __slots__ = ("module", "name")

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):      # pickle insists that a reduce function be callable
        raise TypeError(f"{self.module}.{self.name} is a name written into a checkpoint")


_REBUILD_TENSOR = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")
_TORCH_DEVICE = _Global("torch", "device")
_TORCH_SIZE = _Global("torch", "Size")
_REBUILD_SPARSE = _Global("torch._utils", "_rebuild_sparse_tensor")
_GET_LAYOUT = _Global("torch.serialization", "_get_layout")
_STORAGE_GLOBALS = {dt: _Global("torch", name) for dt, name in _STORAGE_NAME.items()}
_DTYPE_GLOBALS = {dt: _Global("torch", dt.name) for dt in D.ALL_DTYPES + D.LIMITED_DTYPES}
# the dtypes with no typed-storage class (uint16..64, float8, complex32): torch writes their
# memory as an UntypedStorage (numel in bytes) and names the dtype in _rebuild_tensor_v3
_REBUILD_TENSOR_V3 = _Global("torch._utils", "_rebuild_tensor_v3")
_UNTYPED_STORAGE = _Global("torch.storage", "UntypedStorage")


class _Storage:
    """The memory of one root tensor, written once as archive/data/<key>."""
    __slots__ = ("key", "array", "dtype", "location")

    def __init__(self, key, array, dtype, location):
        self.key, self.array, self.dtype, self.location = key, array, dtype, location


class _PlainTensor:
    """The tensor inside a Parameter, pickled without its requires_grad flag (as torch does)."""
    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = tensor


class _Pickler(pickle._Pickler):
    """Python's pickler, taught to write torch's names for tensors, dtypes and devices."""

    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file):
        super().__init__(file, protocol=2)
        self.storages = {}       # id(root tensor or array) -> _Storage, in key order
        self._keep = []          # objects whose id() is a key above stay alive until written

    def _save_global_name(self, obj):
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
        self.memoize(obj)

    dispatch[_Global] = _save_global_name

    def persistent_id(self, obj):
        if type(obj) is _Storage:
            if obj.dtype not in _STORAGE_GLOBALS:
                return ("storage", _UNTYPED_STORAGE, obj.key, obj.location, obj.array.nbytes)
            return ("storage", _STORAGE_GLOBALS[obj.dtype], obj.key, obj.location,
                    obj.array.size)
        return None

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            if _is_placeholder(obj):
                # a lazy module's placeholder has no data: torch writes its class, called with
                # requires_grad (its dtype and device are not kept)
                return (_Global("torch.nn.parameter", type(obj).__name__),
                        (obj._requires_grad,))
            if type(obj).__name__ == "Parameter":
                return (_REBUILD_PARAMETER, (_PlainTensor(obj), obj._requires_grad,
                                             collections.OrderedDict()))
            if obj.is_sparse:
                # torch's form: the layout, then (indices, values, size, is_coalesced)
                return (_REBUILD_SPARSE, (obj.layout, (obj._indices(), obj._values(),
                                                       obj.shape, obj.is_coalesced())))
            return self._reduce_tensor(obj, obj._requires_grad)
        if isinstance(obj, _layout_cls):
            return (_GET_LAYOUT, (str.__str__(obj),))
        if type(obj) is _PlainTensor:
            return self._reduce_tensor(obj.tensor, False)
        if isinstance(obj, _device_cls):
            return (_TORCH_DEVICE, (str(obj),))
        if isinstance(obj, Size):
            return (_TORCH_SIZE, (tuple(obj),))
        return NotImplemented

    def _reduce_tensor(self, t, requires_grad):
        storage, offset, stride = self._storage_of(t)
        args = (storage, offset, tuple(t.shape), stride, bool(requires_grad),
                collections.OrderedDict())
        if t._dtype not in _STORAGE_GLOBALS:
            return (_REBUILD_TENSOR_V3, args + (t._dtype,))
        return (_REBUILD_TENSOR, args)

    def _storage_of(self, t):
        """The storage a tensor is written into, its offset and its strides (in elements).

        A view is written as a window on its root tensor's storage, so a tensor and its views
        are saved once and share memory again after loading. When that is not possible (the
        root's array is itself not contiguous, or the view has negative strides), the tensor
        gets a contiguous storage of its own.
        """
        root = t._storage_root()
        if root._data.flags.c_contiguous and _fits(t, root):
            return self._storage_for(root), t.storage_offset(), t.stride()
        return self._storage_for(t, copy=True), 0, contiguous_strides(tuple(t.shape))

    def _storage_for(self, owner, copy=False):
        """The storage holding `owner`'s memory (a contiguous copy of it when `copy`)."""
        storage = self.storages.get(id(owner))
        if storage is None:
            array = owner._host()
            if copy:
                array = np.ascontiguousarray(array)
            storage = _Storage(str(len(self.storages)), array.reshape(-1), owner._dtype,
                               location_tag(owner.untyped_storage()))
            self.storages[id(owner)] = storage
            self._keep.append(owner)          # keeps id(owner) unique until the save ends
        return storage

    def save(self, obj, save_persistent_id=True):
        if isinstance(obj, D.dtype):         # a dtype is written as the bare name torch.<dtype>
            obj = _DTYPE_GLOBALS[obj]
        super().save(obj, save_persistent_id)


def _is_placeholder(t):
    return isinstance(t, UninitializedTensorMixin)


def _fits(t, root):
    """Does `t`'s memory lie inside its root's, with non-negative whole-element strides?"""
    if t is root:
        return True
    itemsize = t._dtype.itemsize
    if any(s < 0 or s % itemsize for s in t._data.strides):
        return False
    offset = t.storage_offset()
    extent = sum((n - 1) * s for n, s in zip(t.shape, t.stride())) if t.numel() else 0
    return offset >= 0 and offset + extent < max(root.numel(), 1)


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Write `obj` (tensors, state_dicts, optimizer states, ...) to `f` in torch's format.

    `f` is a path or a writable binary file object. A path is written atomically: to a
    temporary file in the same directory, flushed to disk, then renamed over `f`, so a crash
    mid-save never leaves a half-written checkpoint under the real name.
    """
    if pickle_module is not None or pickle_protocol != 2 or not _use_new_zipfile_serialization:
        raise NotImplementedError("ember.save writes only PyTorch's default zip format "
                                  "(pickle protocol 2, the default pickle module)")
    if not isinstance(f, (str, os.PathLike)):
        _write_archive(obj, f)
        return
    path = os.fspath(f)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise RuntimeError(f"Parent directory {os.path.dirname(path) or directory} does not "
                           f"exist.")
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{uuid.uuid4().hex}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)   # honours the umask
    try:
        with os.fdopen(fd, "wb") as out:
            _write_archive(obj, out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_directory(directory)


def _fsync_directory(directory):
    # make the rename itself durable; not every platform lets a directory be opened
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_archive(obj, out):
    buffer = io.BytesIO()
    pickler = _Pickler(buffer)
    pickler.dump(obj)
    prefix = "archive/"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        _write_record(archive, prefix + "data.pkl", buffer.getbuffer())
        _write_record(archive, prefix + ".format_version", b"1")
        _write_record(archive, prefix + ".storage_alignment", str(_ALIGNMENT).encode())
        _write_record(archive, prefix + "byteorder", b"little")
        for storage in pickler.storages.values():
            raw = storage.array.view(np.uint8) if storage.array.size else b""
            if _skip_data[0] is not None:       # the record keeps its size, not the bytes
                raw = bytes(len(raw))
            _write_record(archive, prefix + "data/" + storage.key, raw)
        _write_record(archive, prefix + "version", _FORMAT_VERSION)


def _write_record(archive, name, data):
    """Write one stored entry whose data starts on a 64-byte boundary of the file.

    The local header is 30 bytes + the name + an "extra" field; the padding goes into an extra
    field (id b"FB", as torch writes it) sized to push the data onto the boundary.
    """
    data = memoryview(data).cast("B") if not isinstance(data, bytes) else data
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    info.file_size = len(data)
    zip64 = len(data) > zipfile.ZIP64_LIMIT
    header = 30 + len(name.encode("utf-8")) + 4 + (20 if zip64 else 0)
    pad = -(archive.fp.tell() + header) % _ALIGNMENT
    info.extra = b"FB" + struct.pack("<H", pad) + b"\0" * pad
    with archive.open(info, "w", force_zip64=zip64) as entry:
        entry.write(data)


# ====================================================================== loading
class _StorageType:
    """What the unpickler gives for torch.<Type>Storage: just the dtype it stands for."""
    __slots__ = ("dtype",)

    def __init__(self, dtype):
        self.dtype = dtype


class _LoadedStorage:
    """A storage read from the archive: a flat array, and the tensor that owns its memory."""
    __slots__ = ("array", "dtype", "device", "root")

    def __init__(self, array, dtype, device):
        self.array, self.dtype, self.device, self.root = array, dtype, device, None


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False,
                       backward_hooks=None, metadata=None):
    if not isinstance(storage, _LoadedStorage):
        raise CheckpointError("checkpoint is corrupted: a tensor's storage is not a storage "
                              "record")
    t = _tensor_on(storage, storage_offset, size, stride)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    """torch's form for the dtypes without a typed storage: an UntypedStorage of bytes, read
    as `dtype`."""
    if not isinstance(storage, _LoadedStorage) or not isinstance(dtype, D.dtype):
        raise CheckpointError("checkpoint is corrupted: a tensor's storage is not a storage "
                              "record")
    if storage.dtype is not dtype:
        if storage.root is not None or storage.array.nbytes % dtype.itemsize:
            raise CheckpointError(f"ember: a storage read as two dtypes ({storage.dtype} and "
                                  f"{dtype}) is not supported")
        storage.array = storage.array.view(dtype.np)    # the bytes as elements of `dtype`
        storage.dtype = dtype
    return _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
                              backward_hooks, metadata)


def _tensor_on(storage, offset, size, stride):
    """A tensor of `size`/`stride` (in elements) at `offset` in `storage`, sharing its memory.

    The first tensor covering the whole storage in order becomes the memory's owner; any other
    tensor on the same storage is a view of that owner (or of a flat tensor over the storage).
    """
    size, stride = tuple(size), tuple(stride)
    numel = storage.array.size
    if not (isinstance(offset, int) and all(isinstance(n, int) and n >= 0 for n in size)
            and all(isinstance(s, int) and s >= 0 for s in stride) and len(size) == len(stride)):
        raise CheckpointError(f"checkpoint is corrupted: invalid tensor geometry size={size} "
                              f"stride={stride} offset={offset}")
    count = int(np.prod(size, dtype=np.int64))
    extent = sum((n - 1) * s for n, s in zip(size, stride)) if count else 0
    if offset < 0 or (count and offset + extent >= numel):
        raise CheckpointError(f"checkpoint is corrupted: a tensor of size {list(size)}, stride "
                              f"{list(stride)} at offset {offset} does not fit in its storage "
                              f"of {numel} elements")
    dtype = storage.dtype
    whole = offset == 0 and count == numel and stride == contiguous_strides(size)
    if whole and storage.root is None:
        storage.root = Tensor._make(storage.array.reshape(size), dtype)
        return _to_location(storage.root, storage)
    if storage.root is None:
        storage.root = Tensor._make(storage.array, dtype)
    itemsize = storage.array.itemsize
    flat = storage.array
    if flat.dtype.isbuiltin != 1:       # (a structured or user-defined NumPy dtype)
        # (as_strided cannot make ml-dtypes' float8 or complex32's pairs: it works on the same
        # bytes as unsigned integers, read back as the dtype)
        flat = flat.view(np.dtype(f"u{itemsize}"))
    window = np.lib.stride_tricks.as_strided(flat[offset:] if count else flat, shape=size,
                                             strides=tuple(s * itemsize for s in stride))
    window = window.view(storage.array.dtype)
    return _to_location(storage.root._make_view(window), storage)


def _to_location(t, storage):
    return t if storage.device.type == "cpu" else t.to(storage.device)


def _rebuild_parameter(data, requires_grad, backward_hooks=None):
    return Parameter(data, requires_grad)


def _rebuild_device(spec, index=None):
    return _device_cls(spec, index) if index is not None else _device_cls(spec)


def _rebuild_size(dims=()):
    return Size(dims)


def _get_layout(name):
    """A layout by torch's name ("torch.sparse_coo")."""
    layouts = {"torch.strided": strided, "torch.sparse_coo": sparse_coo}
    if name not in layouts:
        raise pickle.UnpicklingError(f"ember does not load tensors of layout {name}")
    return layouts[name]


def _rebuild_sparse_tensor(layout, data):
    """A sparse COO tensor saved as torch saves it: (indices, values, size, is_coalesced)."""
    indices, values, size, coalesced = data
    return make_coo_tensor(indices, values, size, is_coalesced=coalesced)


def _codecs_encode(text, encoding="utf-8"):
    # protocol 2 writes bytes as _codecs.encode(<latin-1 text>, "latin1")
    if encoding not in ("latin1", "latin-1"):
        raise pickle.UnpicklingError(f"Weights only load failed: unsupported bytes encoding "
                                     f"{encoding!r}")
    return text.encode("latin1")


# The names a checkpoint may refer to, and what each means in ember.
_ALLOWED = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("collections", "Counter"): collections.Counter,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    ("torch._utils", "_rebuild_tensor_v3"): _rebuild_tensor_v3,
    ("torch.storage", "UntypedStorage"): _StorageType(D.uint8),     # (bytes)
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch", "device"): _rebuild_device,
    ("torch", "Size"): _rebuild_size,
    ("torch._utils", "_rebuild_sparse_tensor"): _rebuild_sparse_tensor,
    ("torch.serialization", "_get_layout"): _get_layout,
    ("_codecs", "encode"): _codecs_encode,
    ("builtins", "set"): set, ("__builtin__", "set"): set,
    ("builtins", "frozenset"): frozenset, ("__builtin__", "frozenset"): frozenset,
    ("builtins", "complex"): complex, ("__builtin__", "complex"): complex,
    ("builtins", "slice"): slice, ("__builtin__", "slice"): slice,
    ("builtins", "bytearray"): bytearray, ("__builtin__", "bytearray"): bytearray,
}
# lazy modules' placeholders: not allowed in a weights-only load (as in torch)
_PLACEHOLDERS = ("UninitializedParameter", "UninitializedBuffer")
_ALLOWED.update({("torch", name): _StorageType(dt) for name, dt in _STORAGE_DTYPE.items()})
_ALLOWED.update({("torch", name): dt for name, dt in D.ALIASES.items()})


# Names the user trusts beyond the allowlist: "module.qualname" -> the object.
_SAFE_GLOBALS = {}


def _entry_name(entry):
    # an entry is an object (named by where it is defined) or an (object, "module.name") pair
    return entry[1] if isinstance(entry, tuple) else f"{entry.__module__}.{entry.__qualname__}"


def _safe_global(name):
    entry = _SAFE_GLOBALS.get(name)
    return entry[0] if isinstance(entry, tuple) else entry


def add_safe_globals(safe_globals):
    """Trust these classes/functions (or (object, "module.name") pairs) in weights-only loads."""
    for entry in safe_globals:
        _SAFE_GLOBALS[_entry_name(entry)] = entry


def get_safe_globals():
    return list(_SAFE_GLOBALS.values())


def clear_safe_globals():
    _SAFE_GLOBALS.clear()


class safe_globals:
    """Context manager: `add_safe_globals` for the duration of a `with` block."""

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        self._saved = dict(_SAFE_GLOBALS)
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc):
        _SAFE_GLOBALS.clear()
        _SAFE_GLOBALS.update(self._saved)


# modules no weights-only load may take a name from, even if the user allowlists it
_BLOCKED_MODULES = ("sys", "os", "posix", "nt")
_UNSAFE = ("In PyTorch 2.6, we changed the default value of the `weights_only` argument in "
           "`ember.load` from `False` to `True`. Re-running `ember.load` with `weights_only` "
           "set to `False` will likely succeed, but it can result in arbitrary code execution. "
           "Do it only if you got the file from a trusted source.")
_DOCS = ("\n\nCheck the documentation of torch.load to learn more about types accepted by "
         "default with weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")


def _weights_only_refusal(module, name):
    """torch's message for a weights-only load meeting a name it does not allow."""
    if module in _BLOCKED_MODULES:
        return (f"Weights only load failed. {_UNSAFE}\n\n\nTrying to load unsupported GLOBAL "
                f"{module}.{name} whose module {module} is blocked.{_DOCS}\n(ember) If you "
                f"trust the file's source, pass weights_only=False.")
    # protocol 2 names Python 3's builtins __builtin__; torch shows builtins unqualified
    shown = name if module in ("builtins", "__builtin__") else f"{module}.{name}"
    return ("Weights only load failed. This file can still be loaded, to do so you have two "
            "options, \033[1mdo those steps only if you trust the source of the checkpoint"
            f"\033[0m. \n\t(1) {_UNSAFE}\n\t(2) Alternatively, to load with "
            "`weights_only=True` please check the recommended steps in the following error "
            f"message.\n\tWeightsUnpickler error: Unsupported global: GLOBAL {shown} was not "
            f"an allowed global by default. Please use `ember.serialization.add_safe_globals"
            f"([{shown}])` or the `ember.serialization.safe_globals([{shown}])` context manager "
            f"to allowlist this global if you trust this class/function.{_DOCS}")


class _Unpickler(pickle.Unpickler):
    """Reads data.pkl: storages come from the archive, names only from the allowlist."""

    def __init__(self, file, read_storage, weights_only, map_location):
        super().__init__(file)
        self._read_storage = read_storage
        self._map_location = map_location
        self._weights_only = weights_only
        self._storages = {}
        self.user_error = None

    def find_class(self, module, name):
        found = _ALLOWED.get((module, name))
        if found is None and module not in _BLOCKED_MODULES:
            found = _safe_global(f"{module}.{name}")
        if found is not None:
            return found
        if not self._weights_only:
            if module == "torch.nn.parameter" and name in _PLACEHOLDERS:
                return getattr(parameter, name)
            return super().find_class(module, name)
        raise pickle.UnpicklingError(_weights_only_refusal(module, name))

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"
                and isinstance(pid[1], _StorageType)):
            raise CheckpointError(f"checkpoint is corrupted: unknown persistent id {pid!r}")
        _, storage_type, key, location, numel = pid
        storage = self._storages.get(key)
        if storage is None:
            dtype = storage_type.dtype
            array = self._read_storage(str(key), dtype, numel)
            if _is_location_function(self._map_location):
                array, device = self._call_map_location(array, dtype, str(location))
            else:
                device = _target_device(str(location), self._map_location)
            storage = _LoadedStorage(array, dtype, device)
            self._storages[key] = storage
        return storage

    def _call_map_location(self, array, dtype, location):
        """map_location(storage, location) -> the storage to use (None: the saved location)."""
        try:
            result = self._map_location(UntypedStorage(Tensor._make(array, dtype)), location)
        except Exception as e:
            self.user_error = e          # the user's function failed: raise its error as is
            raise
        if result is None:
            return array, _target_device(location, None)
        if not isinstance(result, UntypedStorage):
            raise TypeError(f"map_location returned {type(result).__name__}, expected a "
                            f"storage or None")
        owner = result._owner
        return owner._host().reshape(-1).view(dtype.np), owner._device


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None,
         **pickle_load_args):
    """Read an object saved by ember.save or torch.save (PyTorch's zip format).

    With weights_only=True (the default, as in torch) only tensors, dtypes, devices, sizes and
    plain containers/numbers/strings can be loaded; anything else raises UnpicklingError and
    no code from the file is ever run (`add_safe_globals` trusts more names). `map_location`
    may be a device, a device string, a dict from saved location to device, or a function
    f(storage, location) returning the storage to use (None: the saved location).
    With mmap=True (a path only) the tensors' memory is the file's, mapped as
    set_default_mmap_options says.
    """
    if pickle_module is not None:
        raise NotImplementedError("ember.load does not support pickle_module")
    if mmap and not isinstance(f, (str, os.PathLike)):
        raise ValueError("f must be a file path in order to use the mmap argument")
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as file:
            mapped = _map_file(file) if mmap else None
            return _load_archive(file, map_location, weights_only, mapped)
    if not (hasattr(f, "seekable") and f.seekable()):     # zip needs to seek: buffer a stream
        f = io.BytesIO(f.read())
    return _load_archive(f, map_location, weights_only)


# the first object pickled in a checkpoint of torch's legacy (pre-1.6, not zip) format
_LEGACY_MAGIC = 0x1950a86a20f9469cfc6c


def _not_zip_error(e):
    return (f"cannot read the checkpoint: it is not a PyTorch zip checkpoint, or it is "
            f"truncated or corrupted ({e}). (ember reads the format torch.save has written "
            f"since PyTorch 1.6, not the legacy format.)")


def _reject_non_zip(file, weights_only):
    """Raise torch's error for a file that is not a zip archive.

    torch reads such a file as its legacy format, whose first pickled object is a magic
    number: it raises the unpickler's own error when the bytes are no pickle at all (for
    weights_only=True its own unpickler's, which ember does not mimic) and RuntimeError
    "Invalid magic number" for any other first object. No code from the file is run: the
    magic number needs no global names.
    """
    try:
        magic = _Unpickler(file, None, True, None).load()
    except pickle.UnpicklingError as e:
        if "Weights only load failed" not in str(e):
            if not weights_only:
                raise
            raise CheckpointError(_not_zip_error(e)) from None
        magic = None                       # a name: whatever it is, it is not the number
    except (EOFError, ValueError, TypeError, KeyError, IndexError, AttributeError) as e:
        if not weights_only and isinstance(e, EOFError):
            raise
        raise CheckpointError(_not_zip_error(e)) from None
    if type(magic) is int and magic == _LEGACY_MAGIC:
        raise CheckpointError(_not_zip_error("a legacy-format checkpoint"))
    raise RuntimeError("Invalid magic number; corrupt file?")


def _map_file(file):
    """The whole file memory-mapped as set_default_mmap_options says: MAP_PRIVATE (the
    default) copies a page on write, MAP_SHARED writes through to the file."""
    if os.fstat(file.fileno()).st_size == 0:
        return None
    if _settings["mmap_flags"] == _mmap.MAP_SHARED:
        with open(file.name, "r+b") as writable:
            return _mmap.mmap(writable.fileno(), 0, access=_mmap.ACCESS_WRITE)
    return _mmap.mmap(file.fileno(), 0, access=_mmap.ACCESS_COPY)


def _record_offset(archive, info):
    """Where a stored record's bytes start in the file (after its local header)."""
    fp = archive.fp
    fp.seek(info.header_offset)
    header = fp.read(30)
    name_length, extra_length = struct.unpack("<HH", header[26:30])
    return info.header_offset + 30 + name_length + extra_length


def _load_archive(file, map_location, weights_only, mapped=None):
    start = file.tell()
    is_zip = file.read(4) == b"PK\x03\x04"       # what torch checks to choose a reader
    file.seek(start)
    if not is_zip:
        _reject_non_zip(file, weights_only)
    try:
        archive = zipfile.ZipFile(file)
    except (zipfile.BadZipFile, EOFError, OSError) as e:
        raise CheckpointError(
            "PytorchStreamReader failed reading zip archive: failed finding central directory. "
            "This is an internal miniz error. If you are seeing this error, there is a high "
            "likelihood that your checkpoint file is corrupted. This can happen if the "
            "checkpoint was not saved properly, was transferred incorrectly, or the file was "
            "modified after saving.\n(ember) " + _not_zip_error(e)) from None
    with archive:
        names = archive.namelist()
        pickles = [n for n in names if n.endswith("data.pkl") and n.count("/") == 1]
        if not pickles:
            raise CheckpointError("cannot read the checkpoint: it has no data.pkl record "
                                  "(not a PyTorch checkpoint?)")
        prefix = pickles[0][:-len("data.pkl")]
        if prefix + "byteorder" in names:
            byteorder = _read_record(archive, prefix + "byteorder").strip()
        else:                   # an old file: the byte order set_default_load_endianness says
            byteorder = _fallback_byteorder()

        def read_storage(key, dtype, numel):
            name = prefix + "data/" + key
            array = np.empty(numel, dtype.np)
            if _skip_data[0] is not None:       # the tensors keep uninitialized memory
                return array
            if mapped is not None and numel and byteorder.decode() == sys.byteorder:
                info = archive.getinfo(name)
                if info.compress_type == zipfile.ZIP_STORED and \
                        info.file_size == array.nbytes:
                    # the tensor's memory is the file's (mmap=True)
                    return np.frombuffer(mapped, dtype.np, numel, _record_offset(archive, info))
            raw = array.view(np.uint8) if numel else np.empty(0, np.uint8)
            _read_record(archive, name, into=raw)
            if byteorder == b"big" and dtype.itemsize > 1:
                array.byteswap(inplace=True)
            return array

        data = _read_record(archive, prefix + "data.pkl")
        unpickler = _Unpickler(io.BytesIO(data), read_storage, weights_only, map_location)
        try:
            return unpickler.load()
        except (pickle.UnpicklingError, CheckpointError):
            raise
        except Exception as e:
            if e is unpickler.user_error:
                raise
            if not isinstance(e, (EOFError, ValueError, TypeError, KeyError, IndexError,
                                  AttributeError)):
                raise
            raise CheckpointError(f"checkpoint is corrupted: its data.pkl cannot be read "
                                  f"({type(e).__name__}: {e})") from None


def _read_record(archive, name, into=None):
    """A record's bytes (or read into a uint8 array), with the zip's CRC check."""
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise CheckpointError(f"checkpoint is corrupted: the record '{name}' is missing") \
            from None
    try:
        if into is None:
            with _open_record(archive, info) as entry:
                return entry.read()
        if info.file_size != into.size:
            raise CheckpointError(f"checkpoint is corrupted: the record '{name}' has "
                                  f"{info.file_size} bytes, expected {into.size}")
        with _open_record(archive, info) as entry:
            view = memoryview(into)
            done = 0
            while done < into.size:
                n = entry.readinto(view[done:])
                if not n:
                    raise CheckpointError(f"checkpoint is truncated: the record '{name}' "
                                          f"ends early")
                done += n
            entry.read(1)            # reach the end of the entry, which checks the CRC
        return into
    except (zipfile.BadZipFile, EOFError, OSError, ValueError) as e:
        raise CheckpointError(f"checkpoint is corrupted: reading the record '{name}' "
                              f"failed ({e})") from None


def _is_location_function(map_location):
    # as in torch, a map_location that is not None, a device (string) or a dict is called
    return not (map_location is None or isinstance(map_location, (str, dict, _device_cls)))


def _target_device(location, map_location):
    """The device a storage saved at `location` is loaded onto."""
    if isinstance(map_location, dict):
        target = map_location.get(location, location)
    elif isinstance(map_location, (str, _device_cls)):
        target = map_location
    else:                                  # None (a function is handled by the unpickler)
        target = location
    target = _device_cls(str(target))
    if target.type == "cuda":
        if not cuda.is_available():
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device but "
                "torch.cuda.is_available() is False. If you are running on a CPU-only machine, "
                "please use torch.load with map_location=torch.device('cpu') to map your "
                "storages to the CPU.")
    return target


def _open_record(archive, info):
    entry = archive.open(info)
    if info.CRC == 0 and info.file_size:
        # torch.save under set_crc32_options(False) writes no checksums (0): nothing to check
        entry._expected_crc = None
    return entry


# ====================================================================== settings and helpers
class SourceChangeWarning(Warning):
    pass


class LoadEndianness(enum.Enum):
    NATIVE = 1
    LITTLE = 2
    BIG = 3


_settings = {"load_endianness": None, "crc32": True, "mmap_flags": _mmap.MAP_PRIVATE}


def get_default_load_endianness():
    """The byte order assumed for a checkpoint that does not record one (None: native)."""
    return _settings["load_endianness"]


def set_default_load_endianness(endianness):
    if endianness is not None and not isinstance(endianness, LoadEndianness):
        raise TypeError("Invalid argument type in function set_default_load_endianness")
    _settings["load_endianness"] = endianness


def _fallback_byteorder():
    order = _settings["load_endianness"]
    if order is LoadEndianness.LITTLE:
        return b"little"
    if order is LoadEndianness.BIG:
        return b"big"
    return sys.byteorder.encode()


def get_crc32_options():
    return _settings["crc32"]


def set_crc32_options(compute_crc32):
    """Whether save writes a CRC-32 for each record. (ember.save always writes them, which
    every reader accepts; the setting is kept for get_crc32_options.)"""
    _settings["crc32"] = compute_crc32


def get_default_mmap_options():
    return _settings["mmap_flags"]


class set_default_mmap_options:
    """The mmap flags (mmap.MAP_PRIVATE or mmap.MAP_SHARED) for loads with mmap=True: set
    at once, restored at the end of a `with` block."""

    def __init__(self, flags):
        if flags != _mmap.MAP_PRIVATE and flags != _mmap.MAP_SHARED:
            raise ValueError("Invalid argument in function set_default_mmap_options, expected "
                             f"mmap.MAP_PRIVATE or mmap.MAP_SHARED, but got {flags}")
        self.prev = _settings["mmap_flags"]
        _settings["mmap_flags"] = flags

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _settings["mmap_flags"] = self.prev


_skip_data = [None]         # the skip_data block in force


class skip_data:
    """Within the block, save writes each storage record as zeros of the right size and load
    leaves the loaded tensors' memory uninitialized: for the structure of a checkpoint
    without the cost of its bytes."""

    def __init__(self, materialize_fake_tensors=False):
        self.materialize_fake_tensors = materialize_fake_tensors

    def __enter__(self):
        self._prev = _skip_data[0]
        _skip_data[0] = self

    def __exit__(self, *exc):
        _skip_data[0] = self._prev


@contextlib.contextmanager
def mkdtemp():
    """A temporary directory, removed with its contents at the end of the block."""
    path = tempfile.mkdtemp()
    try:
        yield path
    finally:
        shutil.rmtree(path)


def check_module_version_greater_or_equal(module, req_version_tuple, error_if_malformed=True):
    """Whether module.__version__ is at least `req_version_tuple`, comparing as many
    dot-separated fields as the tuple has (each converted to its field's type)."""
    fields = module.__version__.split(".")
    try:
        version = tuple(type(want)(fields[i]) for i, want in enumerate(req_version_tuple))
    except (ValueError, IndexError) as e:
        message = (f"'{module.__name__}' module version string is malformed "
                   f"'{module.__version__}' and cannot be compared with tuple "
                   f"{req_version_tuple}")
        if error_if_malformed:
            raise RuntimeError(message) from e
        warnings.warn(message + ", but continuing assuming that requirement is met",
                      stacklevel=2)
        return True
    return version >= req_version_tuple


class StorageType:
    """What a checkpoint's torch.<Type>Storage name stands for: its dtype."""

    def __init__(self, name):
        if name not in _STORAGE_DTYPE:
            raise KeyError(f'pickle storage type "{name}" is not recognized')
        self._dtype = _STORAGE_DTYPE[name]

    @property
    def dtype(self):
        return self._dtype

    def __str__(self):
        return f"StorageType(dtype={self.dtype})"


def normalize_storage_type(storage_type):
    """The storage class of ember's namespace named like `storage_type` (torch looks the name
    up in its own namespace; ember's storage classes live in these two modules)."""
    name = storage_type.__name__
    return getattr(_typed_storage, name) if hasattr(_typed_storage, name) else \
        getattr(_storage, name)


def storage_to_tensor_type(storage):
    """The legacy tensor class named like `storage`'s class (FloatStorage -> FloatTensor), in
    its module: for torch's storages of today that name does not exist (AttributeError)."""
    storage_type = type(storage)
    module = sys.modules[storage_type.__module__]
    return getattr(module, storage_type.__name__.replace("Storage", "Tensor"))


# -------------------------------------------------------------- storage locations
_packages = []      # (priority, tagger, deserializer), lowest priority first


def register_package(priority, tagger, deserializer):
    """Teach save/load a storage location: `tagger(storage)` names a storage's location (or
    None), `deserializer(storage, location)` restores a storage there (or None)."""
    _packages.append((priority, tagger, deserializer))
    _packages.sort(key=lambda entry: entry[0])


def location_tag(storage):
    for _, tagger, _ in _packages:
        tag = tagger(storage)
        if tag:
            return tag
    raise RuntimeError("don't know how to determine data location of " +
                       _storage_typename(storage))


def default_restore_location(storage, location):
    for _, _, deserializer in _packages:
        result = deserializer(storage, location)
        if result is not None:
            return result
    raise RuntimeError("don't know how to restore data location of " +
                       _storage_typename(storage) + " (tagged with " + location + ")")


def _storage_typename(storage):
    if isinstance(storage, UntypedStorage):
        return "torch.storage.UntypedStorage"
    return f"{type(storage).__module__}.{type(storage).__qualname__}"


def validate_cuda_device(location):
    """The device index of a 'cuda[:n]' location, checking that it can be loaded there."""
    index = _device_cls(location).index or 0
    if not cuda.is_available():
        raise RuntimeError(
            "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() "
            "is False. If you are running on a CPU-only machine, please use torch.load with "
            "map_location=torch.device('cpu') to map your storages to the CPU.")
    count = cuda.device_count()
    if index >= count:
        raise RuntimeError(
            f"Attempting to deserialize object on CUDA device {index} but "
            f"torch.cuda.device_count() is {count}. Please use torch.load with map_location "
            "to map your storages to an existing device.")
    return index


def validate_hpu_device(location):
    """ember has no HPU backend, so no storage can be loaded onto one."""
    raise RuntimeError("The HPU device module is not registered. If you are running on a "
                       "CPU-only machine, please use torch.load with "
                       "map_location=torch.device('cpu') to map your storages to the CPU.")


def _cpu_tag(storage):
    return "cpu" if storage.device.type == "cpu" else None


def _cpu_restore(storage, location):
    return storage if location == "cpu" else None


def _device_tag(storage):
    device = storage.device
    if device.type == "cuda":
        return f"cuda:{device.index or 0}"
    return "meta" if device.type == "meta" else None


def _device_restore(storage, location):
    if location.startswith("cuda"):
        index = validate_cuda_device(location)
        return UntypedStorage(storage._owner.to(f"cuda:{index}"))
    if location == "meta":
        return UntypedStorage(storage._owner.to("meta"))
    return None


register_package(10, _cpu_tag, _cpu_restore)
register_package(20, _device_tag, _device_restore)


# -------------------------------------------------------------- auditing a checkpoint
def get_unsafe_globals_in_checkpoint(f):
    """The "module.name" of each class or function a checkpoint refers to that a
    weights-only load would refuse (not allowlisted, nor added with add_safe_globals)."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as file:
            return get_unsafe_globals_in_checkpoint(file)
    start = f.tell()
    is_zip = f.read(4) == b"PK\x03\x04"
    f.seek(start)
    if not is_zip:
        raise ValueError("Expected input to be a checkpoint returned by torch.save")
    with zipfile.ZipFile(f) as archive:
        pickles = [n for n in archive.namelist() if n.endswith("data.pkl") and n.count("/") == 1]
        if not pickles:
            raise ValueError("Expected input to be a checkpoint returned by torch.save")
        data = _read_record(archive, pickles[0])
    unsafe = []
    for module, name in _globals_of(data):
        if (module, name) in _ALLOWED or _safe_global(f"{module}.{name}") is not None:
            continue
        full = f"{module}.{name}"
        if full not in unsafe:
            unsafe.append(full)
    return unsafe


def _globals_of(data):
    """The (module, name) of every global a pickle refers to, in order, without loading it."""
    strings = []
    for op, arg, _ in pickletools.genops(data):
        if op.name == "GLOBAL":
            module, name = arg.split(" ", 1)
            yield module, name
        elif op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE", "BINUNICODE8"):
            strings.append(arg)
        elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
            yield strings[-2], strings[-1]
