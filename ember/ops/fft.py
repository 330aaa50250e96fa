"""Discrete Fourier transforms (torch.fft), built as PyTorch builds them on three primitives:

    _fft_c2c  complex -> complex, forward or inverse          (FftC2CBackward0)
    _fft_r2c  real -> complex, forward, full or one-sided     (FftR2CBackward0)
    _fft_c2r  one-sided Hermitian complex -> real, inverse    (FftC2RBackward0)

The public functions resize the input (crop with narrow, zero-pad with constant_pad_nd),
conjugate where the math asks for it (ifft of a real signal, hfft, ihfft), and call one of
them, so their graphs have PyTorch's nodes. Forwards run the array module's `fft`; each
derivative is the adjoint transform written with these same primitives, so it differentiates
again.

A normalization is kept as a scale mode, independent of the direction of the transform:
0 = unscaled, 1 = by 1/sqrt(n), 2 = by 1/n (n the product of the signal sizes). The adjoint of
a transform is the opposite direction with the same mode.
"""
import numpy as np

from .. import _dtype as D
from .._printing import scalar_type_name
from .._tensor import Tensor
from ._utils import wrap_dim
from .complex import conj, conj_physical
from .registry import primitive
from .shape import roll
from .views import narrow
from .padding import _constant_pad_nd
from .creation import tensor


_UNSCALED, _BY_SQRT_N, _BY_N = 0, 1, 2
# numpy's `norm` for a mode, in the forward and in the inverse direction
_NP_NORM = {True: ("backward", "ortho", "forward"), False: ("forward", "ortho", "backward")}


def _complex_np(dtype):
    return np.result_type(dtype, np.complex64)


def _real_np(dtype):
    return np.finfo(dtype).dtype


# ============================================================================ primitives
@primitive("_fft_c2c", node="FftC2CBackward0")
def _fft_c2c(xp, self, *, dim, normalization, forward):
    transform = xp.fft.fftn if forward else xp.fft.ifftn
    out = transform(self, axes=dim, norm=_NP_NORM[forward][normalization])
    return out.astype(self.dtype, copy=False)


@_fft_c2c.derivative
def _(ctx, grad):
    return _fft_c2c(grad, dim=ctx.dim, normalization=ctx.normalization,
                    forward=not ctx.forward)


@primitive("_fft_r2c", node="FftR2CBackward0")
def _fft_r2c(xp, self, *, dim, normalization, onesided):
    transform = xp.fft.rfftn if onesided else xp.fft.fftn
    out = transform(self, axes=dim, norm=_NP_NORM[True][normalization])
    return out.astype(_complex_np(self.dtype), copy=False)


@_fft_r2c.derivative
def _(ctx, grad):
    if ctx.onesided:
        # the adjoint of keeping the first n//2+1 bins: zeros for the dropped ones
        last = ctx.dim[-1]
        missing = ctx.input_shape(0)[last] - grad.shape[last]
        grad = _zero_pad(grad, {last: missing})
    full = _fft_c2c(grad, dim=ctx.dim, normalization=ctx.normalization, forward=False)
    return full.real


@primitive("_fft_c2r", node="FftC2RBackward0")
def _fft_c2r(xp, self, *, dim, normalization, last_dim_size):
    sizes = [self.shape[d] for d in dim[:-1]] + [last_dim_size]
    out = xp.fft.irfftn(self, s=sizes, axes=dim, norm=_NP_NORM[False][normalization])
    return out.astype(_real_np(self.dtype), copy=False)


@_fft_c2r.derivative
def _(ctx, grad):
    # c2r reads bin k (0 < k < n - n//2) for both k and its mirror n-k: its adjoint counts
    # those bins twice; the DC bin and (n even) the Nyquist bin once
    g = _fft_r2c(grad, dim=ctx.dim, normalization=ctx.normalization, onesided=True)
    last = ctx.dim[-1]
    half = g.shape[last]
    mirrored = ctx.last_dim_size - half
    if mirrored > 0:
        weights = np.ones(half, dtype=_real_np(g._dtype.np))
        weights[1:1 + mirrored] = 2
        shape = [1] * g.ndim
        shape[last] = half
        g = g * Tensor._make(weights.reshape(shape), D._FROM_NUMPY[weights.dtype], g._device)
    return g


# ============================================================================ helpers
def _zero_pad(x, pads):
    """x zero-padded at the end of each dim in {dim: amount} (one ConstantPadNd node)."""
    pads = {d: p for d, p in pads.items() if p > 0}
    if not pads:
        return x
    pad = [0] * (2 * (x.ndim - min(pads)))        # PyTorch's order: last dim first
    for d, p in pads.items():
        pad[2 * (x.ndim - 1 - d) + 1] = p
    return _constant_pad_nd(x, pad=tuple(pad), value=0)


def _resize(x, dims, sizes):
    """x cropped (narrow) or zero-padded (at the end) to `sizes` along `dims`."""
    pads = {}
    for d, n in zip(dims, sizes):
        if n < x.shape[d]:
            x = narrow(x, d, 0, n)
        elif n > x.shape[d]:
            pads[d] = n - x.shape[d]
    return _zero_pad(x, pads)


def _mode(norm, forward):
    """The scale mode of `norm` ("backward", "forward", "ortho" or None) for a direction."""
    if norm is None or norm == "backward":
        return _UNSCALED if forward else _BY_N
    if norm == "forward":
        return _BY_N if forward else _UNSCALED
    if norm == "ortho":
        return _BY_SQRT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _check_int(fname, name, value):
    if value is not None and (value.__class__ is bool or not hasattr(value, "__index__")):
        raise TypeError(f"fft_{fname}(): argument '{name}' must be int, not "
                        f"{type(value).__name__}")


def _check_size(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _as_float(x):
    """Integers and bools promote to the default float; half precision is not supported."""
    dtype = x._dtype
    if dtype._category < 2:
        return x.to(D._default[0])
    if dtype in (D.float16, D.bfloat16):
        raise RuntimeError(f"Unsupported dtype {scalar_type_name(dtype)}")
    return x


def _as_complex(x):
    x = _as_float(x)
    return x if x._dtype.is_complex else x.to(D._FROM_NUMPY[_complex_np(x._dtype.np)])


def _require_real(x, message):
    x = _as_float(x)
    if x._dtype.is_complex:
        raise RuntimeError(f"{message}, but got {scalar_type_name(x._dtype)}")
    return x


def _one_dim(fname, input, n, dim):
    """(dim wrapped, n or the input's size) for a 1-D transform; the callers check `norm`
    last, after the sizes and dtypes, in PyTorch's order."""
    _check_int(fname, "n", n)
    _check_int(fname, "dim", dim)
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    dim = wrap_dim(dim, input.ndim)
    n = input.shape[dim] if n is None else n
    return dim, n


def _n_dims(input, s, dim, norm, forward):
    """(dims, sizes, scale mode) for an N-D transform: dims default to the last len(s) dims,
    or all; a size of -1 keeps the input's."""
    ndim = input.ndim
    if dim is not None:
        dims = [dim] if hasattr(dim, "__index__") else list(dim)
        dims = [wrap_dim(d, ndim) for d in dims]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{ndim} dimensions.")
        dims = list(range(ndim - len(s), ndim))
    else:
        dims = list(range(ndim))
    sizes = [input.shape[d] for d in dims] if s is None else \
        [input.shape[d] if n == -1 else n for d, n in zip(dims, s)]
    return tuple(dims), sizes, _mode(norm, forward)


# ============================================================================ 1-D
def fft(input, n=None, dim=-1, norm=None):
    dim, n = _one_dim("fft", input, n, dim)
    _check_size(n)
    x = _resize(_as_float(input), (dim,), (n,))
    mode = _mode(norm, True)
    if x._dtype.is_complex:
        return _fft_c2c(x, dim=(dim,), normalization=mode, forward=True)
    return _fft_r2c(x, dim=(dim,), normalization=mode, onesided=False)


def ifft(input, n=None, dim=-1, norm=None):
    dim, n = _one_dim("ifft", input, n, dim)
    _check_size(n)
    x = _resize(_as_float(input), (dim,), (n,))
    mode = _mode(norm, False)
    if x._dtype.is_complex:
        return _fft_c2c(x, dim=(dim,), normalization=mode, forward=False)
    # a real signal's inverse transform is the conjugate of its forward one
    return conj(_fft_r2c(x, dim=(dim,), normalization=mode, onesided=False))


def rfft(input, n=None, dim=-1, norm=None):
    dim, n = _one_dim("rfft", input, n, dim)
    x = _require_real(input, "rfft expects a real input tensor")
    _check_size(n)
    x = _resize(x, (dim,), (n,))
    mode = _mode(norm, True)
    return _fft_r2c(x, dim=(dim,), normalization=mode, onesided=True)


def ihfft(input, n=None, dim=-1, norm=None):
    dim, n = _one_dim("ihfft", input, n, dim)
    x = _require_real(input, "ihfft expects a real input tensor")
    _check_size(n)
    x = _resize(x, (dim,), (n,))
    mode = _mode(norm, False)
    return conj(_fft_r2c(x, dim=(dim,), normalization=mode, onesided=True))


def _hermitian_to_real(fname, input, n, dim, norm, forward, conjugate):
    """irfft (forward=False) and hfft (forward=True, the conjugate's inverse transform):
    n output points (default 2*(m-1)) from the first n//2+1 bins of a Hermitian signal."""
    dim, _ = _one_dim(fname, input, n, dim)
    n = 2 * (input.shape[dim] - 1) if n is None else n
    _check_size(n)
    x = _resize(_as_complex(input), (dim,), (n // 2 + 1,))
    if conjugate:
        x = conj(x)
    return _fft_c2r(x, dim=(dim,), normalization=_mode(norm, forward), last_dim_size=n)


def irfft(input, n=None, dim=-1, norm=None):
    return _hermitian_to_real("irfft", input, n, dim, norm, False, False)


def hfft(input, n=None, dim=-1, norm=None):
    return _hermitian_to_real("hfft", input, n, dim, norm, True, True)


# ============================================================================ N-D
def fftn(input, s=None, dim=None, norm=None):
    dims, sizes, mode = _n_dims(input, s, dim, norm, True)
    for n in sizes:
        _check_size(n)
    x = _resize(_as_complex(input), dims, sizes)
    return _fft_c2c(x, dim=dims, normalization=mode, forward=True)


def ifftn(input, s=None, dim=None, norm=None):
    dims, sizes, mode = _n_dims(input, s, dim, norm, False)
    for n in sizes:
        _check_size(n)
    x = _resize(_as_complex(input), dims, sizes)
    return _fft_c2c(x, dim=dims, normalization=mode, forward=False)


def rfftn(input, s=None, dim=None, norm=None):
    x = _require_real(input, "rfftn expects a real-valued input tensor")
    dims, sizes, mode = _n_dims(x, s, dim, norm, True)
    if not dims:
        raise RuntimeError("rfftn must transform at least one axis")
    for n in sizes:
        _check_size(n)
    x = _resize(x, dims, sizes)
    return _fft_r2c(x, dim=dims, normalization=mode, onesided=True)


def _halve_last(fname, input, s, dims, sizes):
    """For a transform to a real signal: its last dim's size (given, or 2*(m-1) from the
    input's m bins), returned; `sizes` is changed in place to the bins read (n//2+1)."""
    if not dims:
        raise RuntimeError(f"{fname} must transform at least one axis")
    if s is None or s[-1] == -1:
        sizes[-1] = 2 * (input.shape[dims[-1]] - 1)
    last_dim_size = sizes[-1]
    for n in sizes:
        _check_size(n)
    sizes[-1] = last_dim_size // 2 + 1
    return last_dim_size


def irfftn(input, s=None, dim=None, norm=None):
    dims, sizes, mode = _n_dims(input, s, dim, norm, False)
    last_dim_size = _halve_last("irfftn", input, s, dims, sizes)
    x = _resize(_as_complex(input), dims, sizes)
    return _fft_c2r(x, dim=dims, normalization=mode, last_dim_size=last_dim_size)


def hfftn(input, s=None, dim=None, norm=None):
    """The forward transform of a Hermitian signal given by its half: the other dims first
    (c2c), then the halved last dim (c2r of the conjugate)."""
    dims, sizes, mode = _n_dims(input, s, dim, norm, True)
    last_dim_size = _halve_last("hfftn", input, s, dims, sizes)
    x = _resize(_as_complex(input), dims, sizes)
    if len(dims) > 1:
        x = _fft_c2c(x, dim=dims[:-1], normalization=mode, forward=True)
    return _fft_c2r(conj(x), dim=dims[-1:], normalization=mode, last_dim_size=last_dim_size)


def ihfftn(input, s=None, dim=None, norm=None):
    """The inverse of hfftn: the halved last dim first (conjugated r2c), then the others."""
    x = _as_float(input)
    if x._dtype.is_complex:
        raise RuntimeError(f"Only supports floating-point dtypes, but found: "
                           f"{scalar_type_name(x._dtype)}")
    dims, sizes, mode = _n_dims(x, s, dim, norm, False)
    if not dims:
        raise RuntimeError("ihfftn must transform at least one axis")
    for n in sizes:
        _check_size(n)
    x = _resize(x, dims, sizes)
    half = _fft_r2c(x, dim=dims[-1:], normalization=mode, onesided=True)
    if len(dims) == 1:
        return conj(half)
    return _fft_c2c(conj_physical(half), dim=dims[:-1], normalization=mode, forward=False)


def hfft2(input, s=None, dim=(-2, -1), norm=None):
    return hfftn(input, s, dim, norm)


def ihfft2(input, s=None, dim=(-2, -1), norm=None):
    return ihfftn(input, s, dim, norm)


def fft2(input, s=None, dim=(-2, -1), norm=None):
    return fftn(input, s, dim, norm)


def ifft2(input, s=None, dim=(-2, -1), norm=None):
    return ifftn(input, s, dim, norm)


def rfft2(input, s=None, dim=(-2, -1), norm=None):
    return rfftn(input, s, dim, norm)


def irfft2(input, s=None, dim=(-2, -1), norm=None):
    return irfftn(input, s, dim, norm)


# ============================================================================ helpers
def _frequencies(fname, n, d, dtype, device, requires_grad, onesided):
    dtype = D._default[0] if dtype is None else dtype
    if not dtype.is_floating_point:
        if dtype.is_complex:
            raise NotImplementedError(f"\"arange_cpu\" not implemented for "
                                      f"'{scalar_type_name(dtype)}'")
        raise RuntimeError(f"{fname} requires a floating point or complex dtype")
    # n/2 truncates toward zero, as in C++: rfftfreq(-1) has one bin
    count = int(n / 2) + 1 if onesided else n
    if count < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {count}: "
                           f"[{count}]")
    npd = dtype.np
    k = np.arange(count, dtype=npd)
    if not onesided:
        k[(n + 1) // 2:] -= n           # the negative frequencies, after the positive ones
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.float64(1.0) / (n * float(d))     # rfftfreq(0): 0 * inf, a NaN as in PyTorch
    out = tensor(k * npd.type(scale), dtype=dtype, device=device)
    return out.requires_grad_(requires_grad) if requires_grad else out


def fftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False):
    return _frequencies("fftfreq", n, d, dtype, device, requires_grad, False)


def rfftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False):
    return _frequencies("rfftfreq", n, d, dtype, device, requires_grad, True)


def _shift(input, dim, sign):
    dims = list(range(input.ndim)) if dim is None else \
        [dim] if hasattr(dim, "__index__") else list(dim)
    dims = [wrap_dim(d, input.ndim) for d in dims]
    # fftshift moves bin 0 to the middle (n//2); ifftshift moves it back
    shifts = [(input.shape[d] // 2) if sign > 0 else (input.shape[d] + 1) // 2 for d in dims]
    return roll(input, shifts, dims)


def fftshift(input, dim=None):
    return _shift(input, dim, 1)


def ifftshift(input, dim=None):
    return _shift(input, dim, -1)
