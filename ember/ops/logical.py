"""Logical and bitwise ops: logical_and/or/xor/not, bitwise_and/or/xor/not and the shifts."""
import numpy as np

from .. import _dtype as D
from ._pointwise_common import (_out, _OTHER_OVERLOADS, _is_tensor, _numbers_only, _type_name,
                                _wrapped, unsupported)
from .comparison import _predicate
from .registry import primitive, COMMON, check_broadcast


logical_and = _predicate("logical_and", lambda xp, a, b: xp.logical_and(a, b), promote=None,
                         scalar_other=False)
logical_or = _predicate("logical_or", lambda xp, a, b: xp.logical_or(a, b), promote=None,
                        scalar_other=False)
logical_xor = _predicate("logical_xor", lambda xp, a, b: xp.logical_xor(a, b), promote=None,
                         scalar_other=False)
_logical_not = primitive("logical_not", differentiable=False)(lambda xp, a: xp.logical_not(a))


def logical_not(input, *, out=None):
    return _out(_logical_not(input), out, "logical_not", "any")


def _bitwise(name, fn, kernel=None):
    op = primitive(name, differentiable=False, promote=COMMON)(lambda xp, a, b: fn(xp, a, b))
    kernel = kernel or name + "_cpu"

    def public(input, other, *, out=None):
        _numbers_only(name, (input, other), _OTHER_OVERLOADS, 1)
        if not _is_tensor(input):          # a number first (2 & t): wrapped
            input = _wrapped(input, other)
        dtype = D.result_dtype([input, other])
        if dtype._category >= 2:
            check_broadcast((input, other))     # PyTorch reports a bad shape first
            raise NotImplementedError(f'"{kernel}" not implemented for '
                                      f"'{_type_name(dtype)}'")
        return _out(op(input, other), out, name)
    public.__name__ = name
    return public


def _shift(xp, a, b, left):
    # PyTorch: shifting by the bit width or more gives 0 (or -1 for a negative number shifted
    # right); NumPy leaves that to the hardware
    a = xp.asarray(a)
    unsupported("lshift_cpu" if left else "rshift_cpu", a)    # no Bool kernel
    b = xp.asarray(b).astype(a.dtype)
    bits = a.dtype.itemsize * 8
    too_far = (b >= bits) | (b < 0)
    safe = xp.where(too_far, 0, b).astype(a.dtype)
    if left:
        return xp.where(too_far, 0, xp.left_shift(a, safe)).astype(a.dtype)
    fill = xp.where(a < 0, -1, 0) if a.dtype.kind == "i" else 0
    return xp.where(too_far, fill, xp.right_shift(a, safe)).astype(a.dtype)


bitwise_and = _bitwise("bitwise_and", lambda xp, a, b: xp.bitwise_and(a, b))
bitwise_or = _bitwise("bitwise_or", lambda xp, a, b: xp.bitwise_or(a, b))
bitwise_xor = _bitwise("bitwise_xor", lambda xp, a, b: xp.bitwise_xor(a, b))
bitwise_left_shift = _bitwise("bitwise_left_shift", lambda xp, a, b: _shift(xp, a, b, True),
                              "lshift_cpu")
bitwise_right_shift = _bitwise("bitwise_right_shift", lambda xp, a, b: _shift(xp, a, b, False),
                               "rshift_cpu")
_bitwise_not = primitive("bitwise_not", differentiable=False)(
    lambda xp, a: xp.logical_not(a) if a.dtype == np.bool_ else xp.invert(a))


def bitwise_not(input, *, out=None):
    if input._dtype._category >= 2:
        raise NotImplementedError(f'"bitwise_not_cpu" not implemented for '
                                  f"'{_type_name(input._dtype)}'")
    return _out(_bitwise_not(input), out, "bitwise_not", "clamp")


def invert(input):
    """The `~` operator."""
    if input._dtype._category >= 2:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return _bitwise_not(input)
