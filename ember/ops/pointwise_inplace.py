"""The in-place pointwise methods (x.pow_(y), x.clamp_(...), x.round_(), ...) and their checks."""
from .. import _dtype as D
from ._pointwise_common import CPP_NAMES, _type_name, _is_tensor, _py_number
from .arithmetic import (_pow_scalar, _pow_tensor, _remainder, _remainder_scalar, _fmod,
                         _fmod_scalar, _div_rounding, _div, _atan2)
from .comparison import _comparison_inplace, eq, ge, gt, le, lt, ne
from .pointwise import (_clamp, _clamp_bound, _clamp_tensor, _clamp_min, _clamp_min_tensor,
                        _clamp_max, _clamp_max_tensor, _check_fill_value, _masked_fill,
                        _masked_fill_tensor, _check_lerp_dtypes, _lerp, _lerp_tensor, _round,
                        _round_decimals, abs, _addcmul, _logit, _nan_to_num, addcdiv_, acos, asin,
                        atan, ceil, cos, cosh, erf, erfc, erfinv, exp, exp2, expm1, floor, frac,
                        log, log10, log1p, log2, neg, reciprocal, relu, rsqrt, sigmoid, sign, sin,
                        sinh, sqrt, tan, tanh, trunc, acosh, asinh, atanh)
from .registry import FLOAT, primitive


def _check_inplace_cast(self, *numbers, cpp_name=False):
    dtype = D.result_dtype([self, *numbers])
    if not D.can_cast(dtype, self._dtype):
        target = CPP_NAMES[self._dtype.name] if cpp_name else _type_name(self._dtype)
        raise RuntimeError(f"result type {_type_name(dtype)} can't be cast to the desired "
                           f"output type {target}")


def float_power_(self, exponent):
    # computed in double: the base must already be double (complex double for complex)
    need = D.complex128 if self._dtype.is_complex or (
        _is_tensor(exponent) and exponent._dtype.is_complex) or isinstance(exponent, complex) \
        else D.float64
    if self._dtype is not need:
        raise RuntimeError(f"the base given to float_power_ has dtype {_type_name(self._dtype)} "
                           f"but the operation's result requires dtype {_type_name(need)}")
    return pow_(self, exponent.double() if _is_tensor(exponent) and need is D.float64
                else exponent)


def pow_(self, exponent):
    if _is_tensor(exponent):
        return _pow_tensor.inplace(self, exponent)
    _check_inplace_cast(self, exponent)
    if self._dtype._category < 2 and not isinstance(exponent, float) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return _pow_scalar.inplace(self, exponent=exponent)


def remainder_(self, other):
    if _is_tensor(other):
        return _remainder.inplace(self, other)
    _check_inplace_cast(self, other)
    return _remainder_scalar.inplace(self, other=other)


def fmod_(self, other):
    if _is_tensor(other):
        return _fmod.inplace(self, other)
    _check_inplace_cast(self, other)
    return _fmod_scalar.inplace(self, other=other)


def floor_divide_(self, other):
    return _div_rounding.inplace(self, other, rounding_mode="floor")


def div_(self, other, *, rounding_mode=None):
    if rounding_mode is None:
        return _div.inplace(self, other)
    if rounding_mode not in ("floor", "trunc"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or "
                           f"'floor' but found '{rounding_mode}'")
    return _div_rounding.inplace(self, other, rounding_mode=rounding_mode)


def clamp_(self, min=None, max=None, *, _op=_clamp):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    min, max = _py_number(min), _py_number(max)
    if _is_tensor(min) or _is_tensor(max):
        lo = _clamp_bound(min, self)
        hi = _clamp_bound(max, self)
        return _clamp_tensor.inplace(self, lo, hi, has_min=min is not None,
                                     has_max=max is not None)
    _check_inplace_cast(self, *[b for b in (min, max) if b is not None], cpp_name=True)
    return _op.inplace(self, min=min, max=max)


def clamp_min_(self, min):
    # torch's own nodes for one bound
    if _is_tensor(min):
        return _clamp_min_tensor.inplace(self, min)
    return clamp_(self, min=min, _op=_clamp_min)


def clamp_max_(self, max):
    if _is_tensor(max):
        return _clamp_max_tensor.inplace(self, max)
    return clamp_(self, max=max, _op=_clamp_max)


def masked_fill_(self, mask, value):
    value = _py_number(value)
    if mask._dtype is not D.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_type_name(mask._dtype).lower()}")
    if _is_tensor(value):
        return _masked_fill_tensor.inplace(self, value, mask=mask)
    _check_fill_value(value, self._dtype)
    return _masked_fill.inplace(self, mask=mask, value=value)


def lerp_(self, end, weight):
    weight = _py_number(weight)
    _check_lerp_dtypes(self, end, weight)
    if _is_tensor(weight):
        return _lerp_tensor.inplace(self, end, weight)
    return _lerp.inplace(self, end, weight=weight)


def round_(self, *, decimals=None):
    if decimals is None:
        return _round.inplace(self)
    return _round_decimals.inplace(self, decimals=decimals)


def _unary_inplace(public):
    def method(self):
        if public is abs and self._dtype.is_complex:     # |z| is real: no complex result to hold
            raise RuntimeError("In-place abs is not supported for complex tensors.")
        return public.op.inplace(self)
    method.__name__ = public.__name__ + "_"
    return method


INPLACE = {
    **{f"{name}_": _comparison_inplace(fn, node) for name, fn, node in [
        ("eq", eq, "Eq"), ("ne", ne, "Ne"), ("lt", lt, "Lt"), ("le", le, "Le"), ("gt", gt, "Gt"),
        ("ge", ge, "Ge")]},
    # square_ is pow_(2) (PowBackward0), whose node saves self as it was before the write
    "pow_": pow_, "square_": lambda self: pow_(self, 2), "float_power_": float_power_, "remainder_": remainder_, "fmod_": fmod_,
    "floor_divide_": floor_divide_,
    "div_": div_, "true_divide_": div_, "divide_": div_,
    "clamp_": clamp_, "clip_": clamp_,
    "clamp_min_": clamp_min_, "clamp_max_": clamp_max_,
    "masked_fill_": masked_fill_, "lerp_": lerp_, "round_": round_,
    "atan2_": lambda self, other: _atan2.inplace(self, other),
    "addcmul_": lambda self, t1, t2, *, value=1: _addcmul.inplace(self, t1, t2, value=value),
    "addcdiv_": addcdiv_,
    "logit_": lambda self, eps=None: _logit.inplace(self, eps=eps),
    "nan_to_num_": lambda self, nan=0.0, posinf=None, neginf=None: _nan_to_num.inplace(
        self, nan=nan, posinf=posinf, neginf=neginf),
}
for _public in (neg, abs, sign, reciprocal, sqrt, rsqrt, exp, exp2, expm1, log, log2, log10,
                log1p, sin, cos, tan, asin, acos, atan, sinh, cosh, tanh,
                sigmoid, erf, erfc, erfinv, relu, floor, ceil, trunc, frac):
    INPLACE[_public.__name__ + "_"] = _unary_inplace(_public)


def _inplace_without_derivative(public, node):
    """public's in-place form, which PyTorch records under a node of its own (`node`) that has
    no derivative: backward through it raises."""
    op = primitive(public.__name__ + "_", node=node, promote=FLOAT)(
        lambda xp, self: public.op.forward(xp, self))

    @op.derivative
    def _(ctx, grad):
        raise NotImplementedError(f"the derivative for 'inplace version of {public.__name__}' "
                                  f"is not implemented.")
    return lambda self: op.inplace(self)


for _public, _node in ((asinh, "AsinhBackward1"), (acosh, "AcoshBackward1"),
                       (atanh, "AtanhBackward1")):
    INPLACE[_public.__name__ + "_"] = _inplace_without_derivative(_public, _node)
for _alias, _name in (("negative_", "neg_"), ("absolute_", "abs_"), ("fix_", "trunc_"),
                      ("arcsin_", "asin_"), ("arccos_", "acos_"), ("arctan_", "atan_"),
                      ("arcsinh_", "asinh_"), ("arccosh_", "acosh_"), ("arctanh_", "atanh_"),
                      ("arctan2_", "atan2_")):
    INPLACE[_alias] = INPLACE[_name]
