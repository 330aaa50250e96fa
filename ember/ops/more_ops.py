"""More torch functions that complete the API: gradient (finite differences), stft/istft, the
random fills log_normal_/cauchy_/geometric_, index_reduce, binomial, igamma/igammac, the torch.<op>_
in-place function forms, and small odds and ends (range, adjoint, nonzero_static, ...).

Composites are written in ember ops, so their graphs show their parts as torch's do; ops that
show a node of their own in PyTorch are primitives with PyTorch's node name.
"""
import builtins
import warnings

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
from ._utils import wrap_dim
from . import pointwise as P
from . import views as V
from . import joining as J
from . import creation
from . import misc_extra as _MX
from .registry import primitive
from .shape_extra import _scalar_name
from . import pointwise_extra as _PX
from . import special_extra as _SX


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
    from . import creation
    if window is None:
        window = creation.ones(win_length, dtype=like._dtype.to_real() if like._dtype.is_complex
                               else like._dtype)
    if win_length < n_fft:
        from ..nn.functional import pad
        left = (n_fft - win_length) // 2
        window = pad(window, (left, n_fft - win_length - left))
    return window


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    from .. import fft as _fft
    from .complex_views import view_as_real
    if return_complex is None and not input._dtype.is_complex and \
            not (window is not None and window._dtype.is_complex):
        raise RuntimeError(_COMPLEX_REQUIRED)
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if window is None:
        _warn_once(_NO_WINDOW)
    if center:
        from ..nn.functional import pad
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
    import math
    from .. import fft as _fft
    from ..nn.functional import fold, pad
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



# ----------------------------------------------------------------------------- random fills
def _random_fill(name, node, draw, inputs=1):
    """x.<name>_(...): fill x in place with draws from a distribution; a primitive so that
    the graph shows PyTorch's node (whose gradient is zero: the values do not depend on x).
    A complex x gets independent draws for its real and imaginary parts. `inputs`: the tensor
    operands (x, and bernoulli_'s tensor of probabilities)."""
    def forward(xp, self, *tensors, args, rng):
        out = draw(rng, self.shape, *tensors, *args)
        if self.dtype.kind == "c":
            out = out + 1j * draw(rng, self.shape, *tensors, *args)
        return np.asarray(out, self.dtype)
    if inputs == 1:
        op = primitive(name, node=node)(lambda xp, self, *, args, rng: forward(
            xp, self, args=args, rng=rng))
    else:
        op = primitive(name, node=node)(lambda xp, self, p, *, args, rng: forward(
            xp, self, p, args=args, rng=rng))

    @op.derivative
    def _(ctx, grad):
        return (grad.new_zeros(grad.shape),) * inputs
    return op


_cauchy = _random_fill("cauchy_", "CauchyBackward0",
                       lambda rng, shape, median, sigma: median + sigma * rng.standard_cauchy(shape))
_log_normal = _random_fill("log_normal_", "LogNormalBackward0",
                           lambda rng, shape, mean, std: rng.lognormal(mean, std, shape))
_geometric = _random_fill("geometric_", "GeometricBackward0",
                          lambda rng, shape, p: rng.geometric(p, shape))
_uniform = _random_fill("uniform_", "UniformBackward0",
                        lambda rng, shape, a, b: rng.uniform(a, b, shape))
_normal = _random_fill("normal_", "NormalBackward0",
                       lambda rng, shape, mean, std: rng.normal(mean, std, shape))
_exponential = _random_fill("exponential_", "ExponentialBackward0",
                            lambda rng, shape, lambd: rng.exponential(1.0 / lambd, shape))
# random_(from, to) / random_(to) / random_(): PyTorch's three overloads, three node names
_randoms = [_random_fill("random_", f"RandomBackward{k}",
                         lambda rng, shape, low, high: rng.integers(low, high, shape,
                                                                    endpoint=True))
            for k in builtins.range(3)]
_bernoulli = _random_fill("bernoulli_", "BernoulliBackward2",
                          lambda rng, shape, p: rng.random(shape) < p)
_bernoulli_tensor = _random_fill("bernoulli_", "BernoulliBackward1",
                                 lambda rng, shape, p: rng.random(shape) < p, inputs=2)


def _check_fill(self):
    """PyTorch refuses a leaf that requires grad before it looks at the fill's arguments."""
    from ..autograd import grad_mode
    from .registry import check_inplace_allowed
    if grad_mode.state.enabled and self._requires_grad:
        check_inplace_allowed(self)


def _continuous_only(self, kind, name=None):
    """name: how the message names the dtype (Cauchy's: the C++ type name)."""
    if self._dtype._category != 2:
        raise RuntimeError(f"{kind} distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified "
                           f"{(name or _scalar_type_name)(self._dtype)}")


def _scalar_type_name(dtype):
    from .._printing import scalar_type_name
    return scalar_type_name(dtype)


def _cpp_type_name(dtype):
    return _CPP_TYPE_NAMES.get(dtype.name, dtype.name)


# (the C++ type names PyTorch's message prints)
_CPP_TYPE_NAMES = {"int64": "long int", "int32": "int", "int16": "short int",
                   "int8": "signed char", "uint8": "unsigned char", "bool": "bool",
                   "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def cauchy_(self, median=0, sigma=1, *, generator=None):
    _check_fill(self)
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    _continuous_only(self, "Cauchy", _cpp_type_name)
    return _cauchy.inplace(self, args=(median, sigma), rng=creation._rng(generator))


def log_normal_(self, mean=1, std=2, *, generator=None):
    _check_fill(self)
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    if self._dtype._category != 2:
        raise creation._not_implemented("log_normal_cpu", self._dtype)
    return _log_normal.inplace(self, args=(mean, std), rng=creation._rng(generator))


def geometric_(self, p, *, generator=None):
    _check_fill(self)
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    if self._dtype is D.bool_ or self._dtype._category == 3:
        raise creation._not_implemented("geometric_cpu", self._dtype)
    return _geometric.inplace(self, args=(p,), rng=creation._rng(generator))


def uniform_(self, from_=0.0, to=1.0, *, generator=None):
    _check_fill(self)
    dtype = self._dtype
    if dtype._category < 2:
        raise creation._not_implemented("check_uniform_bounds", dtype)
    if dtype._category == 2:
        # the bounds and their distance must be finite in self's dtype
        top = D.finfo(dtype).max
        for which, value in (("from", from_), ("to", to)):
            if not -top <= value <= top:
                raise RuntimeError(f"{which} is out of bounds for "
                                   f"{creation._C_TYPE_NAMES[dtype.name]}")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={from_:g} > to={to:g}")
    if dtype._category == 2 and to - from_ > top:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<"
                           f"{_scalar_type_name(dtype)}>::max(), but found to={to:g} and "
                           f"from={from_:g} which result in to-from to exceed the limit")
    return _uniform.inplace(self, args=(from_, to), rng=creation._rng(generator))


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    _check_fill(self)
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    if self._dtype._category < 2:
        raise creation._not_implemented("normal_kernel_cpu", self._dtype)
    if self._dtype.is_complex:          # the variance is split between the two parts
        std = std / np.sqrt(2)
    return _normal.inplace(self, args=(mean, std), rng=creation._rng(generator))


def exponential_(self, lambd=1.0, *, generator=None):
    _check_fill(self)
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    _continuous_only(self, "Exponential")
    return _exponential.inplace(self, args=(lambd,), rng=creation._rng(generator))


def random_(self, *args, generator=None, **bounds):
    """random_(): integers from 0 to the most the dtype holds exactly; random_(to): [0, to);
    random_(from, to): [from, to), or from `from` up to that most when to is None."""
    _check_fill(self)
    args += tuple(bounds[k] for k in ("from", "to") if k in bounds)
    dtype = self._dtype
    if not args and dtype.is_complex:
        raise creation._not_implemented("random_kernel_cpu", dtype)
    if dtype.is_complex:
        creation._check_random_bounds(0, 1, dtype)      # (raises for complex)
    # the most: the dtype's largest integer, or (floating) the last one held exactly
    most = 1 if dtype is D.bool_ else int(np.iinfo(dtype.np).max) if dtype._category < 2 else \
        2 ** {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}[dtype.name]
    low, high = (0, args[0]) if len(args) == 1 else args if args else (0, None)
    if high is None:
        high = most
    else:
        low, high = _index(low), _index(high)
        if low >= high:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                               f"from={low} >= to={high}")
        creation._check_random_bounds(low, high, dtype)
        high -= 1                                       # (drawn with the end included)
    # PyTorch's overloads random_(from, to), random_(to), random_(): three node names
    return _randoms[2 - len(args)].inplace(self, args=(low, high), rng=creation._rng(generator))


def _index(x):
    return int(x.item()) if isinstance(x, Tensor) else x.__index__()


def bernoulli_(self, p=0.5, *, generator=None):
    _check_fill(self)
    rng = creation._rng(generator)
    if isinstance(p, Tensor):
        if self._dtype.is_complex:
            raise creation._not_implemented("bernoulli_tensor_cpu_self_", self._dtype)
        if p._dtype._category < 2:
            raise creation._not_implemented("bernoulli_tensor_cpu_p_", p._dtype)
        probs = p._data
        if np.any((probs < 0) | (probs > 1)):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  "
                               "(Could this error message be improved?  If so, please report "
                               "an enhancement request to PyTorch.)")
        return _bernoulli_tensor.inplace(self, p.expand(self.shape), args=(),
                                         rng=rng)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    if self._dtype.is_complex:
        raise creation._not_implemented("bernoulli_scalar_cpu_", self._dtype)
    return _bernoulli.inplace(self, args=(p,), rng=rng)


# ----------------------------------------------------------------------------- index_reduce
@primitive("index_reduce", node="IndexReduceBackward0", save=("self", "src", "result"))
def _index_reduce(xp, self, src, *, dim, index, reduce, include_self):
    # the scatter_reduce of src with each index repeated across src's other dims
    if self.ndim == 0:                      # (scatter_reduce works on one dim at least)
        return _index_reduce.forward(xp, self.reshape(1), src.reshape(1), dim=0,
                                     index=index.reshape(1), reduce=reduce,
                                     include_self=include_self).reshape(())
    return _MX._scatter_reduce.forward(xp, self, src, dim=dim, index=index, reduce=reduce,
                                       include_self=include_self)


_index_reduce.derivative(lambda ctx, grad: _MX._scatter_reduce.derivative_fn(ctx, grad))


def _index_reduce_args(self, dim, index, source, reduce, include_self):
    fn = "index_reduce_()"
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    _warn_once("index_reduce() is in beta and the API may change at any time.")
    ndim = self._data.ndim
    d = wrap_dim(dim, ndim)
    if index._dtype not in (D.int32, D.int64):
        raise RuntimeError(f"{fn}: Expected dtype int32/int64 for index but got: "
                           f"{_scalar_name(index._dtype)}")
    if index._data.ndim > 1:
        raise IndexError(f"{fn}: Index is supposed to be a vector, but got dim: "
                         f"{index._data.ndim} with type: {_scalar_name(index._dtype)} and size: "
                         f"{list(index.shape)}")
    if source._dtype is not self._dtype:
        raise RuntimeError(f"{fn}: self ({_scalar_name(self._dtype)}) and source "
                           f"({_scalar_name(source._dtype)}) must have the same scalar type")
    idx = index._data.reshape(-1).astype(np.int64)
    n_src = source._data.shape[d] if source._data.ndim else 1
    if idx.size != n_src:
        raise RuntimeError(f"{fn}: Number of indices ({idx.size}) should be equal to "
                           f"source.size(dim): ({n_src}), for dim: {d}")
    shape, src_shape = list(self.shape), list(source.shape)
    if ndim and (len(src_shape) != ndim or shape[:d] + shape[d + 1:] !=
                 src_shape[:d] + src_shape[d + 1:]):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {shape} source.shape = "
                           f"{src_shape}")
    size = shape[d] if ndim else 1
    if ((idx < 0) | (idx >= size)).any():
        raise IndexError("index out of range in self")
    # each index, along dim, at every position of source
    full = np.broadcast_to(idx.reshape([-1 if i == d else 1 for i in builtins.range(ndim)]),
                           source._data.shape) if ndim else idx.reshape(())
    return dict(dim=d, index=np.array(full), reduce=reduce,
                include_self=include_self)


def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None):
    result = _index_reduce(input, source, **_index_reduce_args(input, dim, index, source, reduce,
                                                               include_self))
    return P._out(result, out, "index_reduce")


def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    return _index_reduce.inplace(self, source, **_index_reduce_args(self, dim, index, source,
                                                                    reduce, include_self))



# ----------------------------------------------------------------------------- igamma / igammac
def _method_other(name, other):
    """A method's tensor-only argument: PyTorch counts it as position 1 (self is not counted)."""
    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(other).__name__}")


def _igamma_public(name, op):
    def public(input, other, *, out=None):
        _PX._require_tensors(name, input, other)
        return P._out(op(input, other), out, name)

    def method(self, other):
        _method_other(name, other)
        return op(self, other)

    def inplace(self, other):
        _method_other(name + "_", other)
        return op.inplace(self, other)
    public.__name__, method.__name__, inplace.__name__ = name, name, name + "_"
    return public, method, inplace


igamma, _igamma_method, igamma_ = _igamma_public("igamma", _SX._igamma)
igammac, _igammac_method, igammac_ = _igamma_public("igammac", _SX._igammac)


# ----------------------------------------------------------------------------- small functions
_RANGE_DEPRECATED = ("torch.range is deprecated and will be removed in a future release because "
                     "its behavior is inconsistent with Python's range builtin. Instead, use "
                     "torch.arange, which produces values in [start, end).")


def range(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
          requires_grad=False):
    """The deprecated torch.range: like arange but with `end` included. (It shadows the builtin
    in this module: the code here spells that builtins.range.)"""
    if end is None:
        raise TypeError('range() missing 1 required positional arguments: "end"')
    warnings.warn(_RANGE_DEPRECATED, UserWarning, stacklevel=2)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    dtype = dtype or D.get_default_dtype()
    if requires_grad and dtype._category < 2:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    n = int(np.floor((end - start) / step)) + 1
    values = (start + np.arange(n, dtype=np.float64) * step).astype(dtype.np)
    result = creation.as_tensor(values, dtype=dtype, device=device).requires_grad_(requires_grad)
    return P._out(result, out, "range")


def adjoint(input):
    return input.adjoint()


def get_device(input):
    return input.get_device()


def nonzero_static(input, *, size, fill_value=-1):
    """The indices of the first `size` nonzero elements, as nonzero(), padded with fill_value
    rows up to `size`."""
    if not isinstance(size, int) or size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    found = np.argwhere(input._data)[:size]
    out = np.full((size, input._data.ndim), fill_value, np.int64)
    out[:len(found)] = found
    return Tensor._make(out, D.int64, input._device)


def _inplace_function(name):
    """torch.<name>(input, ...): the in-place method input.<name>(...)."""
    def function(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)
    function.__name__ = name
    return function


_INPLACE_FUNCTIONS = [
    "abs_", "acos_", "acosh_", "asin_", "asinh_", "atan_", "atanh_", "arccos_", "arccosh_",
    "arcsin_", "arcsinh_", "arctan_", "arctanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_",
    "clip_", "cos_", "cosh_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fix_", "floor_",
    "frac_", "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_", "negative_",
    "reciprocal_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinh_", "sqrt_", "square_", "tan_",
    "tanh_", "trunc_", "zero_", "detach_", "resize_as_"]
globals().update({name: _inplace_function(name) for name in _INPLACE_FUNCTIONS})


__all__ = ["gradient", "stft", "istft", "index_reduce", "igamma", "igammac", "range", "adjoint",
           "get_device", "nonzero_static"] + _INPLACE_FUNCTIONS
