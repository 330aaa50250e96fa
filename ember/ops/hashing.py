"""torch.hash_tensor: a uint64 hash of a tensor's elements (over all of them, or along dims):
each element widened to 64 bits (floating ones to float64, integer and bool ones to int64),
its bits read as an unsigned integer, and the bits xor-ed together (mode 0, the only one)."""
import numpy as np

from .. import _dtype as D
from .._printing import scalar_type_name
from .._tensor import Tensor

__all__ = ["hash_tensor"]

_HASHABLE = (D.bool_, D.uint8, D.int8, D.int16, D.int32, D.int64, D.float16, D.bfloat16,
             D.float32, D.float64)


def hash_tensor(input, dim=None, *, keepdim=False, mode=0):
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    if input.dtype not in _HASHABLE:
        raise NotImplementedError(f"\"xor_sum_cpu\" not implemented for "
                                  f"'{scalar_type_name(input.dtype)}'")
    data = input.detach().cpu()._data
    if dim is None and data.size == 0:
        raise RuntimeError("hash_tensor: Expected reduction dim to be specified for "
                           "input.numel() == 0. Specify the reduction dim with the 'dim' "
                           "argument.")
    wide = data.astype(np.float64 if input.dtype.is_floating_point else np.int64)
    bits = wide.view(np.uint64)
    if dim is None:
        axes = tuple(range(bits.ndim))
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        axes = tuple(d % max(bits.ndim, 1) for d in dims)
        for d in axes:
            if bits.ndim and bits.shape[d] == 0:
                raise IndexError(f"hash_tensor: Expected reduction dim {d} to have non-zero "
                                 f"size.")
    out = np.bitwise_xor.reduce(bits, axis=axes, keepdims=keepdim) if bits.ndim else bits
    return Tensor._make(np.asarray(out, dtype=np.uint64), D.uint64).to(input.device)
