"""Comparisons: eq, ne, lt, le, gt, ge (and their aliases), isclose, allclose, equal."""
import numpy as np

from .. import _dtype as D
from ..autograd import grad_mode
from ._pointwise_common import _is_tensor, _out, _py_number, _zeros, unsupported, _type_name
from .inplace_via import _inplace_via
from .registry import COMMON, primitive


# ----------------------------------------------------------------------------- comparisons, logic
def _require_tensor(name, input, other, scalar_other):
    """PyTorch's argument errors: `input` must be a Tensor (and `other` too, for logical ops;
    the comparisons, with a Tensor and a Number overload, word theirs differently)."""
    if not _is_tensor(input):
        if scalar_other:
            got = ", ".join(type(x).__name__ if not _is_tensor(x) else "Tensor"
                            for x in (input, other))
            raise TypeError(f"{name}() received an invalid combination of arguments - got "
                            f"({got}), but expected one of:\n"
                            f" * (Tensor input, Tensor other, *, Tensor out = None)\n"
                            f" * (Tensor input, Number other, *, Tensor out = None)\n")
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if not scalar_other and not _is_tensor(other):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")


def _require_tensor_arg(method, other, arg="other"):
    """A Tensor-only method's TypeError for a number `other` (position 1: after self)."""
    if not _is_tensor(other):
        raise TypeError(f"{method}(): argument '{arg}' (position 1) must be Tensor, not "
                        f"{type(other).__name__}")


def _predicate(name, fn, promote=COMMON, scalar_other=True):
    op = primitive(name, differentiable=False, promote=promote)(lambda xp, a, b: fn(xp, a, b))

    def public(input, other, *, out=None):
        _require_tensor(name, input, other, scalar_other)
        return _out(op(input, other), out, name, "any")     # (out may have any dtype)
    public.__name__ = name
    public.kernel = fn
    return public


def _comparison_inplace(predicate, node):
    """`x.eq_(other)` and the other in-place comparisons. On a tensor in a graph PyTorch records
    the comparison as a node (EqBackward0 for a number, EqBackward1 for a tensor) whose
    gradients are zeros: the 0/1 result is constant in its inputs. Without a graph it is the
    plain comparison written into self."""
    kernel, name = predicate.kernel, predicate.__name__
    with_number = primitive(f"{name}_.Scalar", node=f"{node}Backward0")(
        lambda xp, self, *, other: kernel(xp, self, other))
    with_tensor = primitive(f"{name}_.Tensor", node=f"{node}Backward1")(
        lambda xp, self, other: kernel(xp, self, other))
    with_number.derivative(lambda ctx, grad: _zeros(grad))
    with_tensor.derivative(lambda ctx, grad: (_zeros(grad), _zeros(grad)))

    plain = _inplace_via(predicate)     # the comparison written into self

    def method(self, other):
        if not (grad_mode.state.enabled and (self._requires_grad or
                                             getattr(other, "_requires_grad", False))):
            return plain(self, other)
        if _is_tensor(other):
            return with_tensor.inplace(self, other)
        return with_number.inplace(self, other=_py_number(other))
    method.__name__ = f"{name}_"
    return method


eq = _predicate("eq", lambda xp, a, b: xp.equal(a, b))
ne = _predicate("ne", lambda xp, a, b: xp.not_equal(a, b))
lt = _predicate("lt", lambda xp, a, b: unsupported("lt_cpu", a, "c", b) or xp.less(a, b))
le = _predicate("le", lambda xp, a, b: unsupported("le_cpu", a, "c", b) or xp.less_equal(a, b))
gt = _predicate("gt", lambda xp, a, b: unsupported("gt_cpu", a, "c", b) or xp.greater(a, b))
ge = _predicate("ge", lambda xp, a, b: unsupported("ge_cpu", a, "c", b) or xp.greater_equal(a, b))
less, less_equal, greater, greater_equal, not_equal = lt, le, gt, ge, ne


@primitive("isclose", differentiable=False)
def _isclose(xp, self, other, *, rtol, atol, equal_nan):
    if self.dtype.itemsize == 2 and self.dtype.kind not in "iub":     # float16, bfloat16
        self, other = self.astype(np.float32), other.astype(np.float32)
    return xp.isclose(self, other, rtol=rtol, atol=atol, equal_nan=equal_nan)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    if input._dtype is not other._dtype:
        raise RuntimeError(f"{_type_name(input._dtype)} did not match "
                           f"{_type_name(other._dtype)}")
    return _isclose(input, other, rtol=rtol, atol=atol, equal_nan=equal_nan)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


def equal(input, other):
    """Same shape and the same values (NaN is never equal); dtypes may differ."""
    if input._dtype is D.complex32:     # (torch has no complex32 kernel for it)
        raise NotImplementedError("\"equal_cpu\" not implemented for 'ComplexHalf'")
    return input.shape == other.shape and bool(eq(input, other).all())
