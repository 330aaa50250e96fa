"""TypedStorage and its legacy per-dtype classes (FloatStorage, ...): names for isinstance
checks and type tests in model code.

ember's tensors expose their memory as an UntypedStorage (`t.untyped_storage()`); torch's
deprecated typed storages (`t.storage()`, `torch.FloatStorage(n)`) are not made, so making
one raises an error pointing to untyped_storage().
"""
from . import _dtype as D

__all__ = ["TypedStorage", "FloatStorage", "DoubleStorage", "HalfStorage", "BFloat16Storage",
           "LongStorage", "IntStorage", "ShortStorage", "CharStorage", "ByteStorage",
           "BoolStorage", "ComplexFloatStorage", "ComplexDoubleStorage"]


class TypedStorage:
    is_sparse = False
    dtype = None

    def __init__(self, *args, **kwargs):
        raise RuntimeError(f"ember.{type(self).__name__}: ember has no typed storages (torch "
                           f"deprecates them); use tensor.untyped_storage() for a tensor's "
                           f"memory, or a tensor itself to hold values")


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
