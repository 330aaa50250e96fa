"""ember.cuda.FloatTensor, ember.cuda.FloatStorage, ...: the legacy typed constructors for
CUDA. Without a GPU they raise torch's errors; with one, a FloatTensor is ember.FloatTensor's
result on the CUDA device."""
from .. import _dtype as D
from . import is_available
from .. import _typed_storage
from .._tensor import Tensor
from ..ops.creation import LEGACY_TYPES

_NAMES = {"Bool": D.bool_, "Byte": D.uint8, "Char": D.int8, "Short": D.int16, "Int": D.int32,
          "Long": D.int64, "Half": D.float16, "BFloat16": D.bfloat16, "Float": D.float32,
          "Double": D.float64}
_STORAGE_ONLY = {"ComplexFloat": D.complex64, "ComplexDouble": D.complex128}


class _CudaTensorType(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls._dtype and obj.device.type == "cuda"


def _new_tensor(cls, *args, **kwargs):
    if not is_available():
        raise TypeError(f"type torch.cuda.{cls.__name__} not available. Torch not compiled "
                        "with CUDA enabled.")
    return LEGACY_TYPES[cls.__name__](*args, **kwargs).cuda()


def _new_storage(cls, *args, **kwargs):
    if not is_available():
        raise AssertionError("Torch not compiled with CUDA enabled")
    return getattr(_typed_storage, cls.__name__)(*args, **kwargs)


__all__ = []
for _prefix, _dtype in _NAMES.items():
    globals()[f"{_prefix}Tensor"] = _CudaTensorType(f"{_prefix}Tensor", (),
                                                    {"_dtype": _dtype, "__new__": _new_tensor})
    __all__.append(f"{_prefix}Tensor")
for _prefix, _dtype in {**_NAMES, **_STORAGE_ONLY}.items():
    globals()[f"{_prefix}Storage"] = type(f"{_prefix}Storage", (),
                                          {"_dtype": _dtype, "__new__": _new_storage})
    __all__.append(f"{_prefix}Storage")
