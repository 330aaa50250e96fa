"""Numerical differentiation and integration: gradient, diff, trapezoid, cumulative_trapezoid."""
import builtins

from .. import _dtype as D
from .._tensor import Tensor
from . import joining as J, views as V
from ._utils import wrap_dim
from .arithmetic import _div_scalar, _mul_scalar
from .joining import cat


# ----------------------------------------------------------------------------- diff
def diff(input, n=1, dim=-1, prepend=None, append=None):
    ndim = input._data.ndim
    if ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    d = wrap_dim(dim, ndim)
    if prepend is not None or append is not None:
        for name, extra in (("prepend", prepend), ("append", append)):
            if extra is None:
                continue
            if not isinstance(extra, Tensor):
                raise TypeError(f"diff(): argument '{name}' must be Tensor, not "
                                f"{type(extra).__name__}")
            if extra._data.ndim != ndim:            # (a scalar too, unlike NumPy's diff)
                raise RuntimeError("diff expects prepend or append to be the same dimension as "
                                   "input")
            for i in range(ndim):
                if i != d and extra.shape[i] != input.shape[i]:
                    raise RuntimeError(f"diff expects the shape of tensor to prepend or append "
                                       f"to match that of input except along the differencing "
                                       f"dimension; input.size({i}) = {input.shape[i]}, but got "
                                       f"tensor.size({i}) = {extra.shape[i]}")
        input = cat([p for p in (prepend, input, append) if p is not None], d)
    for _ in range(n):
        length = input.shape[d]
        if length == 0:
            break
        a, b = input.narrow(d, 1, length - 1), input.narrow(d, 0, length - 1)
        input = a.logical_xor(b) if input._dtype is D.bool_ else a - b
    return input


# ----------------------------------------------------------------------------- integration
# torch's integrators multiply and divide by a Python number through the Scalar overloads of
# mul and div, whose nodes are MulBackward1 and DivBackward1


def _pair_sum(y, dim):
    """y[1:] + y[:-1] along dim."""
    n = y.shape[dim]
    return y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)


def _spacing(x, y, dim):
    """The spacings of sample points x along dim of y (x 1-D or shaped like y)."""
    if x._data.ndim == 1:
        d = x[1:] - x[:-1]
        shape = [1] * y._data.ndim
        shape[dim] = -1
        return d.view(shape)
    n = x.shape[dim]
    return x.narrow(dim, 1, n - 1) - x.narrow(dim, 0, n - 1)


def _as_float(y):
    return y if y._dtype._category >= 2 else y.to(D._default[0])


def trapezoid(y, x=None, *, dx=None, dim=-1):
    d = wrap_dim(dim, y._data.ndim)
    y = _as_float(y)
    if y.shape[d] == 0:
        return y.sum(d) * 0
    if isinstance(x, Tensor):
        return _div_scalar((_spacing(x, y, d) * _pair_sum(y, d)).sum(d), other=2.0)
    step = 1.0 if dx is None and x is None else (dx if dx is not None else x)
    return _mul_scalar(y.sum(d) - (y.select(d, 0) + y.select(d, -1)) * 0.5, other=step)


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    d = wrap_dim(dim, y._data.ndim)
    y = _as_float(y)
    if isinstance(x, Tensor):
        return _div_scalar((_spacing(x, y, d) * _pair_sum(y, d)).cumsum(d), other=2.0)
    step = 1.0 if dx is None and x is None else (dx if dx is not None else x)
    return (_pair_sum(y, d) * (step / 2.0)).cumsum(d)


# ----------------------------------------------------------------------------- gradient
_GRAD_ERR = "torch.gradient expected "


def _gradient_dims(input, spacing, dim):
    """The dims to differentiate along and one spacing (a number or a 1-D coordinate tensor)
    for each, with PyTorch's checks."""
    ndim = input._data.ndim
    if dim is None:
        dims = list(builtins.range(ndim))
    else:
        dims = [wrap_dim(d, ndim) for d in (dim if isinstance(dim, (list, tuple)) else [dim])]
        for d in dims:
            if dims.count(d) > 1:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    if spacing is None:
        spacing = 1.0
    if isinstance(spacing, Tensor) and spacing._data.ndim == 0:
        spacing = spacing.item()
    if not isinstance(spacing, (list, tuple)):
        return dims, [spacing] * len(dims)
    if len(spacing) != len(dims):
        if dim is None:
            raise RuntimeError(
                f"{_GRAD_ERR}spacing to be unspecified, a scalar, or a list of length equal to "
                f"'self.dim() = {ndim}', since dim argument was not given, but got a list of "
                f"length {len(spacing)}")
        raise RuntimeError(
            f"{_GRAD_ERR}spacing to be unspecified, a scalar or it's spacing and dim arguments "
            f"to have the same length, but got a spacing argument of length {len(spacing)} and "
            f"a dim argument of length {len(dims)}.")
    for s in spacing:
        if isinstance(s, Tensor) and s._data.ndim != 1:
            raise RuntimeError(f"{_GRAD_ERR}each element of spacing to have one dimension, but "
                               f"got an element with {s._data.ndim} dimensions!")
    return dims, list(spacing)


def _gradient_along(f, dim, h, edge_order):
    """One dim's finite differences: central inside, one-sided (first or second order) at the
    two ends; h is a uniform step or the sample coordinates."""
    n = f._data.shape[dim]

    def part(start, length=1):
        return V.narrow(f, dim, start % n, length)

    if not isinstance(h, Tensor):                   # uniform spacing
        inner = (part(2, n - 2) - part(0, n - 2)) / (2 * h)
        if edge_order == 1:
            first = (part(1) - part(0)) / h
            last = (part(-1) - part(-2)) / h
        else:
            first = (part(0) * -1.5 + part(1) * 2 - part(2) * 0.5) / h
            last = (part(-3) * 0.5 - part(-2) * 2 + part(-1) * 1.5) / h
        return J.cat([first, inner, last], dim)

    shape = [1] * f._data.ndim
    shape[dim] = -1

    def along(t):                                   # coefficients broadcast along `dim`
        return t.reshape(shape)

    dx = h[1:] - h[:-1]
    d1, d2 = dx[:-1], dx[1:]
    inner = (along(-d2 / (d1 * (d1 + d2))) * part(0, n - 2)
             + along((d2 - d1) / (d1 * d2)) * part(1, n - 2)
             + along(d1 / (d2 * (d1 + d2))) * part(2, n - 2))
    if edge_order == 1:
        first = (part(1) - part(0)) / along(dx[:1])
        last = (part(-1) - part(-2)) / along(dx[-1:])
    else:
        a, b = along(dx[:1]), along(dx[1:2])
        first = (part(0) * (-(2 * a + b) / (a * (a + b))) + part(1) * ((a + b) / (a * b))
                 + part(2) * (-a / (b * (a + b))))
        a, b = along(dx[-2:-1]), along(dx[-1:])
        last = (part(-3) * (b / (a * (a + b))) + part(-2) * (-(a + b) / (a * b))
                + part(-1) * ((2 * b + a) / (b * (a + b))))
    return J.cat([first, inner, last], dim)


def gradient(input, *, spacing=None, dim=None, edge_order=1):
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims, steps = _gradient_dims(input, spacing, dim)
    for d in dims:
        if input._data.shape[d] < edge_order + 1:
            raise RuntimeError(f"{_GRAD_ERR}each dimension size to be at least edge_order+1")
    return tuple(_gradient_along(input, d, h, edge_order) for d, h in zip(dims, steps))


__all__ = ['trapezoid', 'trapz', 'cumulative_trapezoid', 'gradient', 'diff']
