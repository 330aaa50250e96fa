"""Helpers the pointwise families share: Python numbers against tensors, promotion, alpha checks,
and writing results into out=."""
import functools
import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
import warnings
from .._printing import scalar_type_name
from ..autograd import forward_ad as _forward_ad
from ..autograd.grad_mode import state
from .registry import write_into
from . import creation as _creation


_BF16 = D.bfloat16.np


def _special():
    from . import special       # (cycle: ops.special, erf, lgamma, ..., is built on this module)
    return special


def _is_tensor(x):
    return isinstance(x, Tensor)


def _c(x):
    """The complex conjugate of a derivative factor (PyTorch's gradients of complex inputs are
    grad * conj(f'(z))); a no-op for real tensors and numbers."""
    if isinstance(x, Tensor):
        return x.conj() if x._dtype.is_complex else x
    return x.conjugate() if isinstance(x, complex) else x


def _zeros(t):
    """Zeros like t, for derivatives: a constant, where `t * 0` would turn an inf or nan
    gradient into nan (PyTorch's derivatives give exact zeros there)."""
    return _creation.zeros_like(t)


def _ones(t):
    return _creation.ones_like(t)


# ----------------------------------------------------------------------------- helpers
def _cast_like(value, array):
    """A Python number as a NumPy scalar of `array`'s dtype (ints wrap, as PyTorch casts them):
    NumPy would otherwise widen some (bfloat16 * 0.5 -> float32)."""
    dtype = array.dtype
    try:
        return dtype.type(value)
    except (OverflowError, TypeError, ValueError):
        return np.asarray(value).astype(dtype)[()]


def _wrapped(value, like):
    """A Python number as the zero-dim tensor PyTorch wraps it in when an op has no Scalar
    overload: its dtype is the result dtype with `like`, so it never raises the result type."""
    dtype = D.result_dtype([like, value])
    return _creation.scalar_tensor(np.asarray(value).astype(dtype.np)[()], like, dtype)


def _promote_to(input, *numbers):
    """`input` cast to its result dtype with the Python numbers (an int tensor raised to 2.5 is
    computed in float), for ops that take numbers as options rather than as operands."""
    dtype = D.result_dtype([input, *numbers])
    return input if dtype is input._dtype else input.to(dtype)


def _py_number(x):
    """A NumPy scalar as PyTorch's argument parser reads one given for a Number: an integer as
    int, anything else as float (np.bool_ too; a complex one loses its imaginary part, with
    NumPy's warning). Other values are returned as they are."""
    if isinstance(x, np.generic):
        return int(x) if isinstance(x, np.integer) else float(x)
    return x


def _number_as_tensor(input, other):
    """PyTorch's argument parser takes a number given for a Tensor `input` as a tensor of its
    own (2 -> int64, 2.5 -> the default float dtype) when `other` is a number too:
    torch.sub(2, 3) is tensor(-1)."""
    if _is_tensor(input) or _is_tensor(other):
        return input
    return _creation.tensor(input)


def _numbers_only(name, args, overloads, number_first=None):
    """PyTorch's error for an op without that conversion called with numbers alone
    (torch.pow(2, 3)): `overloads` are its signatures; the one at `number_first` (the
    number-first overload) says which arguments were of the wrong type."""
    if any(_is_tensor(a) for a in args):
        return
    names = [_creation._type_name(a) for a in args]
    lines = ""
    for i, sig in enumerate(overloads):
        lines += f" * ({sig})\n"
        if i == number_first:
            bad = ", ".join(f"!{n}!" for n in names)
            lines += (f"      didn't match because some of the arguments have invalid types: "
                      f"({bad})\n")
    raise TypeError(f"{name}() received an invalid combination of arguments - got "
                    f"({', '.join(names)}), but expected one of:\n{lines}")


# the signatures PyTorch lists in those errors
_OTHER_OVERLOADS = ("Tensor input, Tensor other, *, Tensor out = None",
                    "Number self, Tensor other", "Tensor input, Number other, *, Tensor out = None")
_POW_OVERLOADS = ("Tensor input, Tensor exponent, *, Tensor out = None",
                  "Number self, Tensor exponent, *, Tensor out = None",
                  "Tensor input, Number exponent, *, Tensor out = None")


def _check_alpha(input, other, alpha):
    if alpha.__class__ is int and alpha == 1:
        return      # (1.0 and True are checked: torch checks the type, not the value)
    dtype = D.result_dtype([input, other])
    if isinstance(alpha, bool) and dtype is not D.bool_:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if dtype._category < 2 and isinstance(alpha, float):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")


def _int_pow(xp, base, exponent):
    """Integer power as PyTorch computes it: a negative exponent gives 1/base**|e| truncated
    (1 for base 1, +-1 for base -1, else 0) instead of NumPy's error."""
    negative = exponent < 0
    if not xp.any(negative):
        return xp.power(base, exponent)
    out = xp.power(base, xp.where(negative, 0, exponent).astype(base.dtype if hasattr(
        base, "dtype") else exponent.dtype))
    odd = (exponent % 2) != 0
    small = xp.where(base == 1, 1, xp.where(base == -1, xp.where(odd, -1, 1), 0))
    return xp.where(negative, small, out).astype(out.dtype)


def unsupported(kernel, x, kinds="b", other=None):
    """PyTorch's error for a dtype its kernel has no implementation for (kinds: NumPy dtype
    kinds that raise; "b" bool, "iu" integers). `other`: an elementwise kernel's other operand,
    for PyTorch reports shapes that do not broadcast before the dtype (NumPy's ValueError
    here becomes that error in the registry)."""
    if getattr(x, "dtype", None) is not None and x.dtype.kind in kinds:
        if other is not None:
            np.broadcast_shapes(np.shape(x), np.shape(other))
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_type_name(D.from_numpy_dtype(x.dtype))}'")


def _is_int_array(x):
    return getattr(x, "dtype", np.dtype(np.float64)).kind in "iub"


def _type_name(dtype):
    return scalar_type_name(dtype)


# ----------------------------------------------------------------------------- out=
def _out(result, out, name, dtype_rule="cast"):
    """Write a result into a user-supplied `out=` tensor, as PyTorch does: its dtype must pass
    the op's rule (below), and a mismatched shape is resized (with PyTorch's deprecation warning
    unless `out` was empty). `out=` records no graph, so it refuses inputs that require grad."""
    if out is None:
        return result
    if result._requires_grad and _grad_enabled():
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           f"differentiation, but one of the arguments requires grad.")
    if out._dtype is not result._dtype:
        _check_out_dtype(dtype_rule, name, result._dtype, out._dtype)
    if out.shape != result.shape:
        warn_resize(out, result.shape, stacklevel=4)
        out.resize_(result.shape)
    write_into(out, result._data)
    if _forward_ad._levels:
        _forward_ad.check_out(result, out, name)     # (PyTorch writes out first, then refuses)
    return out


def warn_resize(out, shape, stacklevel=3):
    """PyTorch's deprecation warning for an out= with elements resized to another shape."""
    if out._data.size and tuple(out.shape) != tuple(shape):
        warnings.warn(f"An output with one or more elements was resized since it had shape "
                      f"{list(out.shape)}, which does not match the required output shape "
                      f"{list(shape)}. This behavior is deprecated, and in a future "
                      f"PyTorch release outputs will not be resized unless they have zero "
                      f"elements. You can explicitly reuse an out tensor t by resizing it, "
                      f"inplace, to zero elements with t.resize_(0).", UserWarning,
                      stacklevel=stacklevel)


def _check_out_dtype(rule, name, have, want):
    """PyTorch's out= dtype rules, which differ by op: "cast" (the result dtype must cast to
    out's), "any" (out may have any dtype), or the same dtype exactly, with the op's message."""
    t, c = _type_name, CPP_NAMES
    if rule == "any":
        return
    if rule in ("cast", "cat"):
        if D.can_cast(have, want):
            return
        if rule == "cat":
            raise TypeError(f"torch.cat(): input types can't be cast to the desired output type "
                            f"{t(want)}")
        raise RuntimeError(f"result type {t(have)} can't be cast to the desired output type "
                           f"{t(want)}")
    raise RuntimeError({
        "mm": f"Expected out tensor to have dtype {c[have.name]}, but got {c[want.name]} instead",
        "amax": f"Expected the dtype for input and out to match, but got {t(have)} for input's "
                f"dtype and {t(want)} for out's dtype.",
        "clamp": f"Found dtype {t(want)} but expected {t(have)}",
        "where": f"Expected out type to be {t(have)} but got {t(want)}",
        "bool": f"{name} does not support non-boolean outputs.",
        "nan_to_num": f"nan_to_num: dtype of out: {t(want)} should be same as input: {t(have)}",
        "long": f"Expected out tensor to have dtype long int, but got {c[want.name]} instead",
        "logical": f"{name} only supports bool tensor for result, got: {t(want)}",
        "float_out": f"{name}(): Expected floating point type for result tensor, but got: "
                     f"{t(want)}",
    }[rule])


def _grad_enabled():
    return state.enabled


# ----------------------------------------------------------------------------- in place
# `x.op_(...)` for the differentiable primitives: the op's own in-place form (Op.inplace), so that
# its node saves x as it was before the write, as PyTorch does. Bound as Tensor methods by
# methods.py.
# PyTorch's C++ type names (some of its messages use them instead of ScalarType names)
CPP_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char",
             "int16": "short int", "int32": "int", "int64": "long int",
             "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
             "float64": "double", "complex64": "c10::complex<float>",
             "complex128": "c10::complex<double>"}


# ----------------------------------------------------------------------------- dtype plumbing
def _quiet(xp):
    """Silence floating-point warnings (overflow to inf, 0/0 in branches `where` discards)."""
    errstate = getattr(xp, "errstate", None) or np.errstate
    return errstate(all="ignore")


def _float_function(kernel):
    """Turn `kernel(xp, x64, wide)` (float64 in and out) into a dtype-preserving function.

    `wide` tells the kernel whether PyTorch would evaluate in float64 (True) or in float32
    (False: float32, float16 and bfloat16 inputs); only sigmoid's overflow limit depends on it.
    """
    @functools.wraps(kernel)
    def fn(xp, x):
        x = xp.asarray(x)
        dtype = x.dtype
        with _quiet(xp):
            y = kernel(xp, x.astype(xp.float64), dtype == xp.float64)
            if dtype == xp.float64:
                return xp.asarray(y, dtype=xp.float64)
            y = xp.asarray(y).astype(xp.float32)
            if dtype.kind == "f" or dtype.name == "bfloat16":
                y = y.astype(dtype)
            return y
    return fn


def _branches(xp, cond, if_true, if_false, *arrays):
    """where(cond, if_true(*arrays), if_false(*arrays)), calling each function only on the
    elements that it decides (the arrays share cond's shape)."""
    out = xp.empty_like(arrays[0])
    out[cond] = if_true(*(a[cond] for a in arrays))
    rest = ~cond
    out[rest] = if_false(*(a[rest] for a in arrays))
    return out


def _horner(xp, t, coeffs):
    """sum(c_k t^k) for a list of Python floats, lowest degree first."""
    acc = xp.full_like(t, coeffs[-1])
    for c in reversed(coeffs[:-1]):
        acc = acc * t + c
    return acc
