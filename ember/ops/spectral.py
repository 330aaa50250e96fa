"""Spectral ops: stft, istft and the window functions of torch.* (hann_window, ...).
(ember.signal.windows keeps its own scipy-style windows: sym= instead of periodic=, other
checks.)"""
import math
import numpy as np
import warnings

from .. import _dtype as D
from . import creation, fft as _fft, hooks as _hooks
from ._pointwise_common import CPP_NAMES
from .complex import view_as_real
from .creation import tensor


# ----------------------------------------------------------------------------- windows
def _window(name, weights):
    """A window function: weights(n) gives the symmetric window of n points (n >= 2) as float64;
    a periodic window is the symmetric one of n + 1 points without its last."""
    def window(window_length, periodic=True, *args, dtype=None, layout=None, device=None,
               requires_grad=False, pin_memory=False, **params):
        dtype = D._default[0] if dtype is None else dtype
        if dtype._category != 2:
            raise RuntimeError(f"{name} expects floating point dtypes, got: "
                               f"{_dtype_word(dtype)}")
        if window_length < 0:
            raise RuntimeError(f"{name} requires non-negative window_length, got "
                               f"window_length={window_length}")
        if window_length <= 1:
            values = np.ones(window_length)
        else:
            n = window_length + 1 if periodic else window_length
            values = weights(n, *args, **params)[:window_length]
        return tensor(values.astype(dtype.np), dtype=dtype, device=device,
                      requires_grad=requires_grad)
    window.__name__ = name
    return window


def _dtype_word(dtype):
    return (f"TensorOptions(dtype={CPP_NAMES[dtype.name]}, device=cpu, layout=Strided "
            f"(default), requires_grad=false (default), pinned_memory=false, "
            f"memory_format=(nullopt))")


def _cosine_sum(*coefficients):
    def weights(n):
        k = np.arange(n) * (2 * math.pi / (n - 1))
        return sum(c * np.cos(i * k) * (-1) ** i for i, c in enumerate(coefficients))
    return weights


def _hamming(n, alpha=0.54, beta=0.46):
    return alpha - beta * np.cos(np.arange(n) * (2 * math.pi / (n - 1)))


def _bartlett(n):
    return 1 - np.abs(np.arange(n) * (2.0 / (n - 1)) - 1)


def _kaiser(n, beta=12.0):
    ratio = np.arange(n) * (2.0 / (n - 1)) - 1
    return np.i0(beta * np.sqrt(np.clip(1 - ratio ** 2, 0, None))) / np.i0(beta)


hann_window = _window("hann_window", _cosine_sum(0.5, 0.5))
hamming_window = _window("hamming_window", _hamming)
bartlett_window = _window("bartlett_window", _bartlett)
blackman_window = _window("blackman_window", _cosine_sum(0.42, 0.5, 0.08))
kaiser_window = _window("kaiser_window", _kaiser)


# ----------------------------------------------------------------------------- stft / istft
_NO_WINDOW = ("A window was not provided. A rectangular window will be applied,which is known to "
              "cause spectral leakage. Other windows such as torch.hann_window or "
              "torch.hamming_window are recommended to reduce spectral leakage.To suppress this "
              "warning and use a rectangular window, explicitly set `window=torch.ones(n_fft, "
              "device=<device>)`.")
_NO_WINDOW_ISTFT = ("A window was not provided. A rectangular window will be applied.Please "
                    "provide the same window used by stft to make the inversion lossless.To "
                    "suppress this warning and use a rectangular window, explicitly set "
                    "`window=torch.ones(n_fft, device=<device>)`.")
_COMPLEX_REQUIRED = ("stft requires the return_complex parameter be given for real inputs, and "
                     "will further require that return_complex=True in a future PyTorch release.")
_REAL_DEPRECATED = ("stft with return_complex=False is deprecated. In a future pytorch release, "
                    "stft will return complex tensors for all inputs, and return_complex=False "
                    "will raise an error.\nNote: you can still call torch.view_as_real on the "
                    "complex output to recover the old return format.")


_warned = set()


def _warn_once(message):
    """PyTorch gives these warnings once per process (TORCH_WARN_ONCE)."""
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, UserWarning, stacklevel=3)


def _flag(v):
    return "None" if v is None else int(bool(v))


def _full_window(window, win_length, n_fft, like):
    """The window as n_fft samples: ones when none is given, centred in zeros when shorter."""
    if window is None:
        window = creation.ones(win_length, dtype=like._dtype.to_real() if like._dtype.is_complex
                               else like._dtype)
    if win_length < n_fft:
        pad = _hooks.nn_functions["pad"]      # (F.pad: nn is built on the ops)
        left = (n_fft - win_length) // 2
        window = pad(window, (left, n_fft - win_length - left))
    return window


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    if return_complex is None and not input._dtype.is_complex and \
            not (window is not None and window._dtype.is_complex):
        raise RuntimeError(_COMPLEX_REQUIRED)
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if window is None:
        _warn_once(_NO_WINDOW)
    if center:
        pad = _hooks.nn_functions["pad"]      # (F.pad: nn is built on the ops)
        shape = input._data.shape
        flat = input.reshape((1,) * (3 - len(shape)) + shape) if len(shape) < 3 else input
        input = pad(flat, (n_fft // 2, n_fft // 2), mode=pad_mode).reshape(
            shape[:-1] + (shape[-1] + n_fft // 2 * 2,))

    def fail(what):
        w = "None" if window is None else f"{window.type()}{{{list(window.shape)}}}"
        raise RuntimeError(
            f"stft({input.type()}{list(input.shape)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={w}, normalized={_flag(normalized)}, "
            f"onesided={_flag(onesided)}, return_complex={_flag(return_complex)}, "
            f"align_to_window={_flag(align_to_window)}) : {what}")

    if input._dtype._category < 2:
        fail("expected a tensor of floating point or complex values")
    ndim = input._data.ndim
    if ndim not in (1, 2):
        fail("expected a 1D or 2D tensor")
    length = input._data.shape[-1]
    if n_fft <= 0 or n_fft > length:
        fail(f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        fail(f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        fail(f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window._data.ndim != 1 or window._data.shape[0] != win):
        fail(f"expected a 1D window tensor of size equal to win_length={win}, but got window "
             f"with size {list(window.shape)}")
    window = _full_window(window, win, n_fft, input)
    if ndim == 1:
        input = input.unsqueeze(0)
    frames = input.unfold(-1, n_fft, hop) * window           # (..., n_frames, n_fft)
    complex_in = input._dtype.is_complex or window._dtype.is_complex
    if onesided is None:
        onesided = not complex_in
    elif onesided and complex_in:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    norm = "ortho" if normalized else "backward"
    out = _fft.rfft(frames, norm=norm) if onesided else _fft.fft(frames, norm=norm)
    out.transpose_(-1, -2)                  # (in place on the fresh result, as torch's graph shows)
    if ndim == 1:
        out.squeeze_(0)
    if not return_complex:
        _warn_once(_REAL_DEPRECATED)
        return view_as_real(out)
    return out



def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    # (F.fold and F.pad: nn is built on the ops)
    fold, pad = _hooks.nn_functions["fold"], _hooks.nn_functions["pad"]
    if not input._dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    win = n_fft if win_length is None else win_length
    hop = n_fft // 4 if hop_length is None else hop_length
    shape = input._data.shape

    def fail(what, sep=" : "):
        w = "None" if window is None else f"{window.type()}{{{list(window.shape)}}}"
        kind = "Float" if input._dtype.to_real() is D.float32 else "Double"
        raise RuntimeError(
            f"istft(CPUComplex{kind}Type{list(shape)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={w}, center={_flag(center)}, "
            f"normalized={_flag(normalized)}, onesided={_flag(onesided)}, "
            f"length={length}, return_complex={_flag(return_complex)}){sep}{what}")

    if len(shape) + 1 not in (3, 4):        # (counted as torch does, on the real view)
        fail(f"expected a tensor with 3 or 4 dimensions, but got {len(shape) + 1}")
    n_freq = shape[-2]
    one = n_freq != n_fft if onesided is None else onesided
    if one and n_fft // 2 + 1 != n_freq:
        fail("expected the frequency dimension (3rd to the last) of the input tensor to match "
             f"n_fft / 2 + 1 when onesided=True, but got {n_freq}")
    if not one and n_freq != n_fft:
        fail("expected the frequency dimension (3rd to the last) of the input tensor to match "
             f"n_fft when onesided=False, but got {n_freq}")
    if not 0 < hop <= win:
        fail("expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        fail("expected 0 < win_length <= n_fft")
    if window is not None and (window._data.ndim != 1 or window._data.shape[0] != win):
        fail("Invalid window shape. window has to be 1D and length of `win_length`")
    if window is None:
        _warn_once(_NO_WINDOW_ISTFT)
    if one and (return_complex or (window is not None and window._dtype.is_complex)):
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    window = _full_window(window, win, n_fft, input)
    batched = len(shape) == 3
    spec = (input if batched else input.unsqueeze(0)).transpose(1, 2)   # (B, frames, freq)
    if normalized:
        spec = spec * math.sqrt(n_fft)
    frames = _fft.irfft(spec, n_fft) if one else _fft.ifft(spec, n_fft)
    if not one and not return_complex:
        frames = frames.real
    frames = frames * window
    n_frames = shape[-1]
    expected = n_fft + hop * (n_frames - 1)

    def overlap_add(cols):                  # (B, n_fft, frames) summed into (B, expected)
        return fold(cols, (1, expected), (1, n_fft), stride=(1, hop)).reshape(
            cols._data.shape[0], expected)

    y = overlap_add(frames.transpose(1, 2))
    envelope = overlap_add((window * window).reshape(1, n_fft, 1).expand(1, n_fft, n_frames))
    start = n_fft // 2 if center else 0
    end = expected - (n_fft // 2 if center else 0)
    if length is not None:
        end = min(start + length, expected)
    envelope = envelope[:, start:end]
    small = (envelope.abs() < 1e-11).any()
    if small.item():
        fail("window overlap add min: 1\n[ CPUBoolType{} ]", sep=" ")
    y = y[:, start:end] / envelope
    if not batched:
        y = y.squeeze(0)
    if length is not None and end - start < length:
        y = pad(y, (0, length - (end - start)))
    return y


__all__ = ['hann_window', 'hamming_window', 'bartlett_window', 'blackman_window',
               'kaiser_window', 'stft', 'istft']
