"""torch.sparse.FloatTensor and its kin: the legacy constructors of sparse COO tensors (still
in old GCN code: `torch.sparse.FloatTensor(indices, values, shape)`), deprecated as in torch,
and usable with isinstance."""
import warnings

from .. import _dtype as D
from .._tensor import Tensor
from ._conversions import make_coo_tensor, is_sparse

_SITE = " (Triggered internally at /__w/pytorch/pytorch/torch/csrc/utils/tensor_new.cpp:{}.)"
_DEPRECATED = ("torch.sparse.SparseTensor(indices, values, shape, *, device=) is deprecated.  "
               "Please use torch.sparse_coo_tensor(indices, values, shape, dtype=, device=)."
               + _SITE.format(653))
_DEPRECATED_SHAPE = ("torch.sparse.SparseTensor(shape, *, device=) is deprecated.  Please use "
                     "torch.sparse_coo_tensor(shape, dtype=, device=)." + _SITE.format(684))
_warned = set()


def _warn_once(message):
    """torch gives these warnings once per process (TORCH_WARN_ONCE)."""
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, UserWarning, stacklevel=4)


class _LegacySparseType(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and is_sparse(obj) and obj.dtype is cls._dtype

    def __repr__(cls):
        return f"<class 'ember.sparse.{cls.__name__}'>"


def _make(dtype, args, device):
    if len(args) >= 2 and isinstance(args[0], Tensor) and isinstance(args[1], Tensor):
        _warn_once(_DEPRECATED)
        # (the values keep their own dtype, as in torch)
        return make_coo_tensor(*args, device=device)
    _warn_once(_DEPRECATED_SHAPE)
    shape = args[0] if len(args) == 1 and not isinstance(args[0], int) else args
    return make_coo_tensor(tuple(shape), dtype=dtype, device=device)


def _legacy_type(name, dtype):
    def __new__(cls, *args, device=None):
        return _make(cls._dtype, args, device)
    return _LegacySparseType(name, (), {"_dtype": dtype, "__new__": __new__,
                                        "__module__": "ember.sparse"})


FloatTensor = _legacy_type("FloatTensor", D.float32)
DoubleTensor = _legacy_type("DoubleTensor", D.float64)
HalfTensor = _legacy_type("HalfTensor", D.float16)
BFloat16Tensor = _legacy_type("BFloat16Tensor", D.bfloat16)
LongTensor = _legacy_type("LongTensor", D.int64)
IntTensor = _legacy_type("IntTensor", D.int32)
ShortTensor = _legacy_type("ShortTensor", D.int16)
CharTensor = _legacy_type("CharTensor", D.int8)
ByteTensor = _legacy_type("ByteTensor", D.uint8)
