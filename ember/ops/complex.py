"""Complex numbers: real/imag/conj views, view_as_real/view_as_complex, complex, polar, vdot,
conj_physical, isreal and the conjugate/negative bits."""
import numpy as np

from .. import _dtype as D
from .._printing import scalar_type_name
from .._tensor import Tensor
from ._pointwise_common import _out
from .registry import primitive
from .views import element_strides, restride, select


def _retype(view):
    # a registered view keeps its input's dtype: these views change it
    view._dtype = D._FROM_NUMPY[view._data.dtype]
    return view


@primitive("view_as_real", node="ViewAsRealBackward0", view=True)
def _view_as_real(xp, self):
    # each complex element as its (real, imag) pair: the last dim, of stride 1 in real units
    strides = [2 * s for s in element_strides(self)] + [1]
    real = self["real"] if self.dtype == D.COMPLEX32_NP else self.real     # (float16 pairs)
    return restride(real, self.shape + (2,), strides)


@_view_as_real.derivative
def _(ctx, grad):
    return view_as_complex(grad.contiguous())


@primitive("view_as_complex", node="ViewAsComplexBackward0", view=True)
def _view_as_complex(xp, self):
    # the pairs along the (contiguous) last dim read as complex numbers, in the same memory
    pair = D.COMPLEX32_NP if self.dtype == np.float16 else np.result_type(self.dtype, np.complex64)
    return self.view(pair)[..., 0]


@_view_as_complex.derivative
def _(ctx, grad):
    return view_as_real(grad)


def view_as_real(input):
    if not input._dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return _retype(_view_as_real(input))


def view_as_complex(input):
    if input._dtype not in (D.float16, D.float32, D.float64):
        raise RuntimeError(f"view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: "
                           f"{scalar_type_name(input._dtype)}")
    if not input._data.ndim:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    strides = input.stride()
    if strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return _retype(_view_as_complex(input))


def real(input):
    return select(view_as_real(input), -1, 0) if input._dtype.is_complex else input


def imag(input):
    if not input._dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return select(view_as_real(input), -1, 1)


@primitive("conj", node="ConjBackward0")
def _conj(xp, self):
    # (PyTorch's conj is a lazy view with a conjugate bit; here it is a new tensor)
    return xp.conj(self)


@_conj.derivative
def _(ctx, grad):
    return conj(grad)


def conj(input):
    return _conj(input) if input._dtype.is_complex else input


# ----------------------------------------------------------------------------- complex
def _check_float_pair(a, b):
    if a._dtype not in (D.float16, D.float32, D.float64) or \
            b._dtype not in (D.float16, D.float32, D.float64):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{scalar_type_name(a._dtype)} and {scalar_type_name(b._dtype)}")
    if a._dtype is not b._dtype:
        raise RuntimeError(f"Expected object of scalar type {scalar_type_name(a._dtype)} but "
                           f"got scalar type {scalar_type_name(b._dtype)} for second argument")


_COMPLEX_OF = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128,
               np.dtype(np.float16): np.complex64}


@primitive("complex", node="ComplexBackward0")
def _complex(xp, real, imag):
    shape = np.broadcast_shapes(real.shape, imag.shape)
    if real.dtype == np.float16:        # complex32: a pair of float16 (see _dtype.py)
        out = xp.empty(shape, D.COMPLEX32_NP)
        out["real"], out["imag"] = real, imag
        return out
    out = xp.empty(shape, _COMPLEX_OF[real.dtype])
    out.real, out.imag = real, imag
    return out


@_complex.derivative
def _(ctx, grad):
    return grad.real, grad.imag


@primitive("polar", node="PolarBackward0", save=("result",))
def _polar(xp, abs, angle):
    return _complex.forward(xp, abs * xp.cos(angle), abs * xp.sin(angle))


@_polar.derivative
def _(ctx, grad):
    # as torch defines it: abs's gradient follows the result's direction (so a negative abs
    # gets the opposite sign), angle's the result turned by a quarter
    z, g = ctx.result, grad.conj()
    return (g * z.sgn()).real, (g * z * 1j).real


def complex(real, imag, *, out=None):
    _check_float_pair(real, imag)
    return _out(_complex(real, imag), out, "complex")


def polar(abs, angle, *, out=None):
    _check_float_pair(abs, angle)
    if abs._dtype is D.float16:         # (torch has no complex32 kernel for it)
        raise NotImplementedError("\"polar_cpu\" not implemented for 'Half'")
    return _out(_polar(abs, angle), out, "polar")


@primitive("vdot", node="VdotBackward0", save=("self", "other"), promote=None)
def _vdot(xp, self, other):
    return xp.asarray(xp.vdot(self, other))


@_vdot.derivative
def _(ctx, grad):
    g_self = ctx.other * grad.conj() if ctx.needs_input_grad[0] else None
    g_other = ctx.self * grad if ctx.needs_input_grad[1] else None
    return g_self, g_other


def vdot(input, other, *, out=None):
    if input._data.ndim != 1 or other._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input._data.ndim}D and "
                           f"{other._data.ndim}D tensors")
    if input._dtype is not other._dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{scalar_type_name(input._dtype)} and "
                           f"{scalar_type_name(other._dtype)}")
    if input._data.shape != other._data.shape:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.numel()}] and src "
                           f"[{other.numel()}] to have the same number of elements, but got "
                           f"{input.numel()} and {other.numel()} elements respectively")
    return _out(_vdot(input, other), out, "vdot")


@primitive("conj_physical", node="ConjPhysicalBackward0")
def _conj_physical(xp, self):
    return xp.conj(self)


@_conj_physical.derivative
def _(ctx, grad):
    return _conj_physical(grad)


def conj_physical(input):
    return _conj_physical(input) if input._dtype.is_complex else input


# the in-place form is its own node in torch's graph; same kernel and derivative
_conj_physical_ = primitive("conj_physical_", node="ConjPhysicalBackward1")(
    _conj_physical.forward)
_conj_physical_.derivative(_conj_physical.derivative_fn)


def conj_physical_(self):
    # (recorded for real tensors too, as torch does; the kernel is then the identity)
    return _conj_physical_.inplace(self)


def isreal(input):
    if not input._dtype.is_complex:
        return Tensor._make(np.ones(input._data.shape, np.bool_), D.bool_, input._device)
    return input.imag == 0


def is_conj(input):
    return False        # ember's conj() materialises: no tensor carries a lazy conj bit


def is_neg(input):
    return False        # ... nor a lazy negation bit


def resolve_conj(input):
    return input


def resolve_neg(input):
    return input


__all__ = ['complex', 'polar', 'vdot', 'conj_physical', 'conj_physical_', 'isreal', 'is_conj',
               'is_neg', 'resolve_conj', 'resolve_neg']
