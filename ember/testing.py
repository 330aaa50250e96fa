"""ember.testing: torch.testing's assert_close (same default tolerances and failure messages)
and make_tensor."""
import collections.abc
import math
import warnings

import numpy as np

from . import _dtype as D
from ._tensor import Tensor
from .ops.creation import tensor
from .ops.random import rand, randint

# (rtol, atol) by dtype, as torch's defaults; exact comparison for every other dtype
_TOLERANCES = {D.float16: (1e-3, 1e-5), D.bfloat16: (1.6e-2, 1e-5), D.float32: (1.3e-6, 1e-5),
               D.float64: (1e-7, 1e-7), D.complex64: (1.3e-6, 1e-5),
               D.complex128: (1e-7, 1e-7)}


def _as_tensor(x):
    """Python numbers compare as the tensors torch would make of them (int64/float64/...)."""
    if isinstance(x, Tensor):
        return x.detach()
    return tensor(x, dtype={int: D.int64, float: D.float64, complex: D.complex128}[type(x)])


def _compare_tensors(actual, expected, rtol, atol, equal_nan, check_dtype, check_device):
    """None when close, else the failure message."""
    for attr in ("shape", "device") + (("dtype",) if check_dtype else ()):
        if attr == "device" and not check_device:
            continue
        a, e = getattr(actual, attr), getattr(expected, attr)
        if a != e:
            return f"The values for attribute '{attr}' do not match: {a} != {e}."
    dtype = actual.dtype if actual.dtype is expected.dtype else \
        D.promote_types(actual.dtype, expected.dtype)
    if rtol is None:
        rtol, atol = _TOLERANCES.get(dtype, (0.0, 0.0))
    a, e = actual.to(dtype)._data, expected.to(dtype)._data
    if dtype is D.bfloat16:
        a, e = a.astype(np.float32), e.astype(np.float32)
    if not (dtype.is_floating_point or dtype.is_complex):
        a, e = a.astype(np.int64), e.astype(np.int64)       # (bool and uint8 differences)
    if a.ndim == 0:
        return _compare_scalars(a.item(), e.item(), rtol, atol, equal_nan)
    abs_diff = np.abs(a - e)
    # (infinities are close only to themselves)
    close = (a == e) | (np.isfinite(a) & np.isfinite(e) & (abs_diff <= atol + rtol * np.abs(e)))
    if equal_nan:
        close |= np.isnan(a) & np.isnan(e)
    if close.all():
        return None
    if abs_diff.dtype.kind == "i":                           # (integers divide into floats)
        floats = D.get_default_dtype().np      # (both sides: NumPy would divide in float64)
        rel_diff = abs_diff.astype(floats) / np.abs(e).astype(floats)
    else:
        rel_diff = abs_diff / np.abs(e)
    if dtype is D.bfloat16:                                 # (torch's differences are bf16)
        abs_diff, rel_diff = abs_diff.astype(dtype.np), rel_diff.astype(dtype.np)
    kind, allowed = _kind(rtol, atol)
    lines = [f"Tensor-likes are not {kind}!", "",
             f"Mismatched elements: {(~close).sum()} / {close.size} "
             f"({100 * (~close).sum() / close.size:.1f}%)"]
    for name, diff, note in (("absolute", abs_diff, allowed[0]),
                             ("relative", rel_diff, allowed[1])):
        flat = diff.reshape(-1)
        i = int(np.argmax(flat))
        index = tuple(int(k) for k in np.unravel_index(i, diff.shape))
        lines.append(f"Greatest {name} difference: {flat[i].item()} at index {index}{note}")
    return "\n".join(lines)


def _kind(rtol, atol):
    """'close' or 'equal', and the '(up to ... allowed)' notes of the message."""
    if rtol == 0 and atol == 0:
        return "equal", ("", "")
    return "close", (f" (up to {atol} allowed)", f" (up to {rtol} allowed)")


def _compare_scalars(a, e, rtol, atol, equal_nan):
    """Zero-dimensional values: differences in Python numbers, torch's 'Scalars' message."""
    if a == e or (equal_nan and a != a and e != e):
        return None
    abs_diff = abs(a - e)
    finite = all(map(math.isfinite, (abs(a), abs(e))))
    if finite and abs_diff <= atol + rtol * abs(e):
        return None
    rel_diff = abs_diff / abs(e) if e != 0 else math.inf
    kind, allowed = _kind(rtol, atol)
    return (f"Scalars are not {kind}!\n\nExpected {e} but got {a}.\n"
            f"Absolute difference: {abs_diff}{allowed[0]}\n"
            f"Relative difference: {rel_diff}{allowed[1]}")


def _compare(actual, expected, options):
    """None when equal, else (message, path of the failing item)."""
    number = (int, float, complex)
    if isinstance(actual, bool) and isinstance(expected, bool):
        return None if actual is expected else (f"Booleans mismatch: {actual} is not {expected}",
                                                "")
    if isinstance(actual, Tensor) or isinstance(expected, Tensor):
        if not (isinstance(actual, Tensor) and isinstance(expected, Tensor)):
            raise TypeError(f"No comparison pair was able to handle inputs of type "
                            f"{type(actual)} and {type(expected)}.")
    elif isinstance(actual, number) and isinstance(expected, number):
        if options["check_dtype"] and type(actual) is not type(expected):
            return f"The (d)types do not match: {type(actual)} != {type(expected)}.", ""
    elif isinstance(actual, collections.abc.Sequence) and not isinstance(actual, str) and \
            isinstance(expected, collections.abc.Sequence) and not isinstance(expected, str):
        if len(actual) != len(expected):
            return (f"The length of the sequences mismatch: {len(actual)} != "
                    f"{len(expected)}", "")
        for i, (a, e) in enumerate(zip(actual, expected)):
            failure = _compare(a, e, options)
            if failure:
                return failure[0], f"[{i}]{failure[1]}"
        return None
    elif isinstance(actual, collections.abc.Mapping) and \
            isinstance(expected, collections.abc.Mapping):
        if set(actual) != set(expected):
            return (f"The keys of the mappings do not match:\nMissing keys in the actual "
                    f"mapping: {sorted(set(expected) - set(actual))}\nAdditional keys in the "
                    f"actual mapping: {sorted(set(actual) - set(expected))}", "")
        for k in expected:
            failure = _compare(actual[k], expected[k], options)
            if failure:
                return failure[0], f"[{k!r}]{failure[1]}"
        return None
    else:
        raise TypeError(f"No comparison pair was able to handle inputs of type "
                        f"{type(actual)} and {type(expected)}.")
    message = _compare_tensors(_as_tensor(actual), _as_tensor(expected), **options)
    return None if message is None else (message, "")


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Raise AssertionError (with torch's message) unless actual and expected are close:
    |actual - expected| <= atol + rtol * |expected| elementwise, dtype-dependent defaults."""
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {'atol' if atol is None else 'rtol'}.")
    options = dict(rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=check_dtype,
                   check_device=check_device)
    failure = _compare(actual, expected, options)
    if failure is None:
        return
    message, path = failure
    if path:
        message += f"\n\nThe failure occurred for item {path}"
    if msg is not None:
        message = msg(message) if callable(msg) else msg
    raise AssertionError(message)


def make_tensor(*shape, dtype, device=None, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """A random tensor: values in [low, high) (default [-9, 9]; [0, 9] for unsigned), bools
    of either value; `exclude_zero` replaces zeros by the dtype's smallest step."""
    if low is not None and high is not None and low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = tuple(shape[0])
    if dtype is D.bool_:
        result = randint(0, 2, shape, device=device).to(D.bool_)
    elif dtype.is_floating_point or dtype.is_complex:
        low = -9.0 if low is None else low
        high = 9.0 if high is None else high
        result = (rand(shape, dtype=dtype, device=device) * (high - low) + low)
    else:
        info = D.iinfo(dtype)
        low = max(-9 if low is None else math.ceil(low), info.min)
        high = min(10 if high is None else math.ceil(high), info.max + 1)   # (exclusive)
        result = randint(low, high, shape, dtype=dtype, device=device)
    if exclude_zero:
        step = D.finfo(dtype).tiny if dtype.is_floating_point else 1
        result = result.masked_fill(result == 0, step)
    return result.requires_grad_(requires_grad) if requires_grad else result


# the older assert_allclose's default (rtol, atol): the larger of the two dtypes' entries
_ALLCLOSE_TOLERANCES = {D.float16: (1e-3, 1e-3), D.float32: (1e-4, 1e-5),
                        D.float64: (1e-5, 1e-8)}


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """The deprecated predecessor of assert_close: `expected` is made a tensor of `actual`'s
    dtype, dtypes need not match, and the default tolerances are the older, looser ones."""
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be "
                  "removed in a future release. Please use `torch.testing.assert_close()` "
                  "instead. You can find detailed upgrade instructions in "
                  "https://github.com/pytorch/pytorch/issues/61844.", FutureWarning,
                  stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        pairs = [_ALLCLOSE_TOLERANCES.get(t.dtype, (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(p[0] for p in pairs), max(p[1] for p in pairs)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=True, check_dtype=False, check_stride=False, msg=msg or None)
