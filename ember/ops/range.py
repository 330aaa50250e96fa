"""torch.range, the deprecated arange with its end included (a module of its own: its name shadows
the builtin range)."""
import numpy as np
import warnings

from .. import _dtype as D
from . import creation
from ._pointwise_common import _out


# ----------------------------------------------------------------------------- small functions
_RANGE_DEPRECATED = ("torch.range is deprecated and will be removed in a future release because "
                     "its behavior is inconsistent with Python's range builtin. Instead, use "
                     "torch.arange, which produces values in [start, end).")


def range(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
          requires_grad=False):
    """The deprecated torch.range: like arange but with `end` included. (It shadows the builtin
    in this module: the code here spells that builtins.range.)"""
    if end is None:
        raise TypeError('range() missing 1 required positional arguments: "end"')
    warnings.warn(_RANGE_DEPRECATED, UserWarning, stacklevel=2)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    dtype = dtype or D.get_default_dtype()
    if requires_grad and dtype._category < 2:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    n = int(np.floor((end - start) / step)) + 1
    values = (start + np.arange(n, dtype=np.float64) * step).astype(dtype.np)
    result = creation.as_tensor(values, dtype=dtype, device=device).requires_grad_(requires_grad)
    return _out(result, out, "range")


__all__ = ['range']
