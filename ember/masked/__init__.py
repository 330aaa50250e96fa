"""ember.masked: torch.masked's reductions and normalizations over the elements a boolean
`mask` selects, on plain tensors.

Each op fills the masked-out elements with the value that leaves the result unchanged (0 for
sum, 1 for prod, -inf for amax and softmax, +inf for amin and softmin, ...) and runs the
ordinary op; an output over no selected element is that fill's result (0 for sum, -inf for
amax, nan for mean, var and median). The mask broadcasts to the input's shape. torch's
prototype MaskedTensor class is not provided (see tools/not_provided.toml).
"""
import math

import ember

__all__ = ["amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax",
           "logaddexp", "logsumexp", "mean", "median", "norm", "normalize", "prod", "softmax",
           "softmin", "std", "sum", "var"]

def _mask(input, mask):
    """The mask as a bool tensor of the input's shape (all True when None)."""
    if mask is None:
        return ember.ones_like(input, dtype=ember.bool)
    return mask.to(ember.bool).expand(input.shape)


def _dims(input, dim):
    """`dim` as a tuple of non-negative dims (all of them for None or ())."""
    if dim is None or dim == ():
        return tuple(range(input.dim()))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    n = max(input.dim(), 1)
    for d in dims:
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, "
                             f"{n - 1}], but got {d})")
    return tuple(d % n for d in dims)


def _cast(input, dtype):
    return input if dtype is None else input.to(dtype)


def _lowest(dtype):
    if dtype.is_floating_point:
        return -math.inf
    return ember.iinfo(dtype).min if dtype is not ember.bool else False


def _highest(dtype):
    if dtype.is_floating_point:
        return math.inf
    return ember.iinfo(dtype).max if dtype is not ember.bool else True


def _filled(input, mask, value):
    return ember.where(_mask(input, mask), input, ember.full_like(input, value))


def _reduce(op, input, dim, keepdim, fill, mask):
    dims = _dims(input, dim)
    filled = _filled(input, mask, fill)
    if input.dim() == 0:
        return op(filled)
    return op(filled, dims, keepdim=keepdim)


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    if dtype is None and (input.dtype is ember.bool or not input.dtype.is_floating_point
                          and not input.dtype.is_complex):
        dtype = ember.int64         # (as torch.sum: integers and bools add up in int64)
    input = _cast(input, dtype)
    return _reduce(ember.sum, input, dim, keepdim, 0, mask)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    input = _cast(input, dtype)
    dims = _dims(input, dim)
    out = _filled(input, mask, 1)
    for d in sorted(dims, reverse=True):
        out = ember.prod(out, d, keepdim=keepdim)
    return out


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    input = _cast(input, dtype)
    return _reduce(ember.amax, input, dim, keepdim, _lowest(input.dtype), mask)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    input = _cast(input, dtype)
    return _reduce(ember.amin, input, dim, keepdim, _highest(input.dtype), mask)


def _arg(op, fill, input, dim, keepdim, dtype, mask):
    filled = _filled(input, mask, fill(input.dtype))
    index = op(filled) if dim is None else op(filled, dim, keepdim=keepdim)
    # (torch.masked returns the index in the input's dtype, or `dtype`)
    return index.to(dtype if dtype is not None else input.dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    return _arg(ember.argmax, _lowest, input, dim, keepdim, dtype, mask)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    return _arg(ember.argmin, _highest, input, dim, keepdim, dtype, mask)


def _count(input, dim, keepdim, mask):
    dims = _dims(input, dim)
    selected = _mask(input, mask)
    return selected.sum(dims, keepdim=keepdim) if input.dim() else selected.sum()


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    input = _cast(input, dtype)
    total = _reduce(ember.sum, input, dim, keepdim, 0, mask)
    return total / _count(input, dim, keepdim, mask).to(total.dtype)


def _var(input, dim, unbiased, correction, keepdim, dtype, mask):
    input = _cast(input, dtype)
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    count = _count(input, dim, True, mask).to(input.dtype)
    centre = _reduce(ember.sum, input, dim, True, 0, mask) / count
    deviation = _filled(input - centre, mask, 0)
    squares = deviation * deviation.conj() if input.dtype.is_complex else deviation ** 2
    total = ember.sum(squares.real if input.dtype.is_complex else squares,
                      _dims(input, dim), keepdim=True)
    out = total / ember.clamp(count - correction, min=0)
    return out if keepdim else out.squeeze(_dims(input, dim)) if input.dim() else out


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    return _var(input, dim, unbiased, correction, keepdim, dtype, mask)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    return ember.sqrt(_var(input, dim, unbiased, correction, keepdim, dtype, mask))


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    input = _cast(input, dtype)
    fill = math.inf if ord == -math.inf else 0
    filled = _filled(input, mask, fill)
    return ember.linalg.vector_norm(filled, ord, _dims(input, dim), keepdim=keepdim)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    input = _cast(input, dtype)
    size = norm(input, ord, dim, keepdim=True, mask=mask)
    return _filled(input, mask, 0) / ember.clamp(size, min=eps)


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    input = _cast(input, dtype)
    return ember.logsumexp(_filled(input, mask, -math.inf), _dims(input, dim),
                           keepdim=keepdim)


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    input = _cast(input, dtype)
    filled = _filled(input, mask, math.nan)
    return ember.nanmedian(filled, dim, keepdim=keepdim).values


def cumsum(input, dim, *, dtype=None, mask=None):
    input = _cast(input, dtype)
    return ember.cumsum(_filled(input, mask, 0), dim)


def cumprod(input, dim, *, dtype=None, mask=None):
    input = _cast(input, dtype)
    return ember.cumprod(_filled(input, mask, 1), dim)


def softmax(input, dim, *, dtype=None, mask=None):
    input = _cast(input, dtype)
    return ember.softmax(_filled(input, mask, -math.inf), dim)


def log_softmax(input, dim, *, dtype=None, mask=None):
    input = _cast(input, dtype)
    return ember.log_softmax(_filled(input, mask, -math.inf), dim)


def softmin(input, dim, *, dtype=None, mask=None):
    input = _cast(input, dtype)
    return ember.softmax(-_filled(input, mask, math.inf), dim)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    input, other = _cast(input, dtype), _cast(other, dtype)
    return ember.logaddexp(_filled(input, input_mask, -math.inf),
                           _filled(other, other_mask, -math.inf))
