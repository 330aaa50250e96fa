"""TypedStorage and its legacy per-dtype classes (FloatStorage, ...): names for isinstance
checks and type tests in model code.

ember's tensors expose their memory as an UntypedStorage (`t.untyped_storage()`). torch's
deprecated typed storage of a tensor (`t.storage()`, with torch's warning) is a TypedStorage
over the flat memory of the tensor's base: its elements can be read and written. Making a
storage directly (`torch.FloatStorage(n)`) is not supported: it raises an error pointing to
untyped_storage().
"""
import warnings

from . import _dtype as D
from ._storage import UntypedStorage

__all__ = ["TypedStorage", "FloatStorage", "DoubleStorage", "HalfStorage", "BFloat16Storage",
           "LongStorage", "IntStorage", "ShortStorage", "CharStorage", "ByteStorage",
           "BoolStorage", "ComplexFloatStorage", "ComplexDoubleStorage"]


# torch warns of typed storages once per process, or every time after
# _set_always_warn_typed_storage_removal(True)
_warning = {"given": False, "always": False}


def _get_always_warn_typed_storage_removal():
    return _warning["always"]


def _set_always_warn_typed_storage_removal(always_warn):
    if not isinstance(always_warn, bool):
        raise AssertionError(f"always_warn must be bool, got {type(always_warn).__name__}")
    _warning["always"] = always_warn


def _reset_warn_typed_storage_removal():
    _warning["given"] = False


def _warn_typed_storage_removal(stacklevel=2):
    if _warning["always"] or not _warning["given"]:
        warnings.warn("TypedStorage is deprecated. It will be removed in the future and "
                      "UntypedStorage will be the only storage class. This should only matter "
                      "to you if you are using storages directly.  To access UntypedStorage "
                      "directly, use tensor.untyped_storage() instead of tensor.storage()",
                      UserWarning, stacklevel=stacklevel + 1)
        _warning["given"] = True


class TypedStorage:
    is_sparse = False
    dtype = None

    def __init__(self, *args, **kwargs):
        raise RuntimeError(f"ember.{type(self).__name__}: ember has no typed storages (torch "
                           f"deprecates them); use tensor.untyped_storage() for a tensor's "
                           f"memory, or a tensor itself to hold values")

    @staticmethod
    def _warn():
        _warn_typed_storage_removal(stacklevel=3)

    @classmethod
    def _of(cls, tensor):
        """The typed storage of a tensor: the flat memory of its base, as its dtype."""
        root = tensor._base if tensor._base is not None else tensor
        self = object.__new__(TypedStorage)
        self._root = root
        # the memory resize_ keeps for the root (ops.tensor_methods), else its array, flat
        extra = root._extra
        flat = extra.get("storage") if extra else None
        self._flat = flat if flat is not None else root._data.reshape(-1)
        self.dtype = tensor._dtype
        return self

    @property
    def device(self):
        return self._root._device

    def size(self):
        return int(self._flat.size)

    __len__ = size

    def element_size(self):
        return self.dtype.itemsize

    def nbytes(self):
        return self.size() * self.element_size()

    def data_ptr(self):
        return self._root.data_ptr()

    def untyped(self):
        return UntypedStorage(self._root)

    def is_shared(self):
        return self._root.is_shared()

    def share_memory_(self):
        self._root.share_memory_()
        return self

    def is_pinned(self, device="cuda"):
        return False

    def tolist(self):
        return self._flat.tolist()

    def __iter__(self):
        return iter(self.tolist())

    def __getitem__(self, index):
        if isinstance(index, slice):
            raise RuntimeError("ember: slicing a TypedStorage is not supported; slice the tensor")
        return self._flat[index].item()

    def __setitem__(self, index, value):
        self._flat[index] = value
        self._root._version_counter.bump()

    def __repr__(self):
        body = "\n".join(f" {v}" for v in self.tolist())
        return (f"{body}\n[torch.storage.TypedStorage(dtype={self.dtype!r}, "
                f"device={self.device}) of size {self.size()}]")


class _LegacyStorage(TypedStorage):
    pass


def _legacy(name, dtype):
    return type(name, (_LegacyStorage,), {"dtype": dtype, "__module__": "ember"})


FloatStorage = _legacy("FloatStorage", D.float32)
DoubleStorage = _legacy("DoubleStorage", D.float64)
HalfStorage = _legacy("HalfStorage", D.float16)
BFloat16Storage = _legacy("BFloat16Storage", D.bfloat16)
LongStorage = _legacy("LongStorage", D.int64)
IntStorage = _legacy("IntStorage", D.int32)
ShortStorage = _legacy("ShortStorage", D.int16)
CharStorage = _legacy("CharStorage", D.int8)
ByteStorage = _legacy("ByteStorage", D.uint8)
BoolStorage = _legacy("BoolStorage", D.bool_)
ComplexFloatStorage = _legacy("ComplexFloatStorage", D.complex64)
ComplexDoubleStorage = _legacy("ComplexDoubleStorage", D.complex128)

_BY_DTYPE = {cls.dtype: cls for cls in (
    FloatStorage, DoubleStorage, HalfStorage, BFloat16Storage, LongStorage, IntStorage,
    ShortStorage, CharStorage, ByteStorage, BoolStorage, ComplexFloatStorage,
    ComplexDoubleStorage)}


def storage_class(dtype):
    """The legacy storage class of a dtype (torch.FloatStorage for float32); `torch.Storage` is
    the default dtype's."""
    return _BY_DTYPE[dtype]
