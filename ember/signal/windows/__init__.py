"""ember.signal.windows (torch.signal.windows): window functions, scipy.signal's definitions.

Each window is computed in float64 with NumPy and returned in the requested dtype (float32 by
default); `sym=False` gives the periodic window (the symmetric window of M + 1 points without
its last point). The argument checks name the function that makes the window, as torch's do
(hann is a general_cosine window, so its checks say "general_cosine").
"""
import math

import numpy as np

from ... import _dtype as D
from ..._tensor import Tensor
from ..._device import as_device

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _checks(name, M, dtype, layout):
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None and str(layout) != "torch.strided":
        raise ValueError(f"{name} is implemented for strided tensors only, got: "
                         f"{str(layout).replace('ember.', 'torch.')}")
    if dtype not in (D.float32, D.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")


def _window(name, M, sym, dtype, layout, device, requires_grad, values):
    """The window of M points: `values(n, N)` at positions n of a symmetric window of N."""
    dtype = dtype or D.get_default_dtype()
    _checks(name, M, dtype, layout)
    if M <= 1:
        data = np.ones(M)
    else:
        data = values(np.arange(M, dtype=np.float64), M if sym else M + 1)
    out = Tensor._make(np.asarray(data, dtype.np), dtype, as_device(device))
    return out.requires_grad_() if requires_grad else out


def general_cosine(M, *, a, sym=True, dtype=None, layout=None, device=None,
                   requires_grad=False, _name="general_cosine"):
    if not isinstance(a, (list, tuple)):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")

    def values(n, N):
        k = 2 * math.pi * n / (N - 1)
        return sum(c * (-1) ** i * np.cos(i * k) for i, c in enumerate(a))
    return _window(_name, M, sym, dtype, layout, device, requires_grad, values)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=None, device=None,
                    requires_grad=False):
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad, _name="blackman")


def nuttall(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    return _window("bartlett", M, sym, dtype, layout, device, requires_grad,
                   lambda n, N: 1 - np.abs(2 * n / (N - 1) - 1))


def cosine(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    return _window("cosine", M, sym, dtype, layout, device, requires_grad,
                   lambda n, N: np.sin(math.pi * (n + 0.5) / N))


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=None, device=None,
                requires_grad=False):
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")

    def values(n, N):
        c = (N - 1) / 2 if center is None else center
        return np.exp(-np.abs(n - c) / tau)
    return _window("exponential", M, sym, dtype, layout, device, requires_grad, values)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=None, device=None,
             requires_grad=False):
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    return _window("gaussian", M, sym, dtype, layout, device, requires_grad,
                   lambda n, N: np.exp(-((n - (N - 1) / 2) / std) ** 2 / 2))


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=None, device=None,
           requires_grad=False):
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    return _window("kaiser", M, sym, dtype, layout, device, requires_grad,
                   lambda n, N: np.i0(beta * np.sqrt(np.clip(1 - (2 * n / (N - 1) - 1) ** 2,
                                                             0, None))) / np.i0(beta))
