"""The real and imaginary parts of complex tensors, as differentiable views (PyTorch's graph:
`x.real` is view_as_real(x).select(-1, 0)), and conj, differentiable.

Gradients follow PyTorch's convention (the conjugate Wirtinger derivative): the gradient of a
real view of a complex tensor is the complex tensor view_as_complex(grad), and back.
"""
import numpy as np

from .. import _dtype as D
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
    return restride(self.real, self.shape + (2,), strides)


@_view_as_real.derivative
def _(ctx, grad):
    return view_as_complex(grad.contiguous())


@primitive("view_as_complex", node="ViewAsComplexBackward0", view=True)
def _view_as_complex(xp, self):
    # the pairs along the (contiguous) last dim read as complex numbers, in the same memory
    return self.view(np.result_type(self.dtype, np.complex64))[..., 0]


@_view_as_complex.derivative
def _(ctx, grad):
    return view_as_real(grad)


def view_as_real(input):
    if not input._dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return _retype(_view_as_real(input))


def view_as_complex(input):
    if input._dtype not in (D.float16, D.float32, D.float64):
        from .._printing import scalar_type_name
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
