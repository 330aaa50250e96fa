"""Scans: cumsum, cumprod, cummax, cummin, logcumsumexp."""
import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
from ._pointwise_common import _out
from ._utils import wrap_dim
from .reduction import _sum_dtype, _acc, _parsed, _values_indices, _tname
from .registry import primitive
from .statistics import _no_complex
from ..autograd import grad_mode
from .creation import zeros, ones_like, zeros_like, ones
from .joining import cat
from .pointwise import where


# ----------------------------------------------------------------------------- scans
def _scan_dtype(input, out):
    # with out= and no dtype=, PyTorch scans in out's dtype (the input converted to it first)
    return out._dtype if out is not None else _sum_dtype(input._dtype)


@primitive("cumsum", node="CumsumBackward0")
def _cumsum(xp, self, *, dim, dtype):
    out = xp.cumsum(self, axis=dim, dtype=_acc(dtype)) if self.ndim else self
    return out.astype(dtype.np)


@_cumsum.derivative
def _(ctx, grad):
    if grad._data.ndim == 0:
        return grad
    return grad.flip(ctx.dim).cumsum(ctx.dim).flip(ctx.dim)


_SCAN = "Tensor input, int dim, *, ScalarType? dtype=None, Tensor? out=None"


@_parsed("cumsum", _SCAN, takes_out=True)
def cumsum(which, input, dim, dtype=None, out=None):
    if (out is not None and out._dtype is D.bool_) or dtype is D.bool_:
        raise NotImplementedError("\"cumsum_out_cpu\" not implemented for 'Bool'")
    return _out(_cumsum(input, dim=wrap_dim(dim, input._data.ndim),
                        dtype=dtype or _scan_dtype(input, out)), out, "cumsum", "any")


@primitive("cumprod", node="CumprodBackward0", save=("self", "result"))
def _cumprod(xp, self, *, dim, dtype):
    out = xp.cumprod(self, axis=dim, dtype=_acc(dtype)) if self.ndim else self
    return out.astype(dtype.np)


@_cumprod.derivative
def _(ctx, grad):
    # out_i = prod_{j<=i} x_j, so grad_k = sum_{i>=k} g_i * prod_{j<=i, j!=k} x_j
    x, dim = ctx.self, ctx.dim
    if x._data.size <= 1 or x.shape[dim] == 1:
        return grad             # (as PyTorch: even where x is not finite)
    if not (x._data == 0).any():
        # no zeros: prod_{j<=i, j!=k} x_j = out_i / x_k
        return _reversed_cumsum(grad * ctx.result.conj(), dim) / x.conj()
    if grad_mode.state.enabled:     # differentiable again (create_graph): PyTorch's O(n^2) way
        return _cumprod_grad_with_zeros(grad, x.conj(), dim)
    return _cumprod_grad_first_zero(grad, x.conj(), ctx.result.conj(), dim)


def _reversed_cumsum(t, dim):
    return t.flip(dim).cumsum(dim).flip(dim)


def _cumprod_grad_first_zero(grad, x, out, dim):
    """The cumprod gradient where x has zeros, in O(n) as PyTorch's first-order backward, with
    its masks (so that non-finite values past a zero do not leak into it): before the first
    zero of a slice the no-zero formula; at it out[z-1] * sum_{z<=i<z2} g_i prod_{z<j<=i} x_j
    (z2 the second zero); after it nothing."""
    zeros_seen = (x == 0).cumsum(dim)
    before = zeros_seen == 0
    grad_before = _reversed_cumsum(where(before, out * grad, zeros_like(out)), dim) / x
    first_zero = (zeros_seen == 1) & (x == 0)
    between = (zeros_seen == 1) & ~first_zero          # strictly between the first two zeros
    run = where(between, x, ones_like(x)).cumprod(dim)
    inner = (run * where(zeros_seen == 1, grad, zeros_like(grad))).sum(dim, keepdim=True)
    out_before = cat([ones_like(out.narrow(dim, 0, 1)), out.narrow(dim, 0, x.shape[dim] - 1)],
                     dim)
    at_zero = inner * out_before
    return where(before, grad_before, where(first_zero, at_zero, zeros_like(grad_before)))


def _cumprod_grad_with_zeros(grad, x, dim):
    """The cumprod gradient where x has zeros, without dividing: with dim moved last,
    grad_k = (prod_{j<k} x_j) * sum_{i>=k} g_i * prod_{k<j<=i} x_j, the inner products read off
    one cumulative product of an (n, n) matrix per row (O(n^2) memory along dim)."""
    xl, gl = x.movedim(dim, -1), grad.movedim(dim, -1)
    n = xl.shape[-1]
    k = np.arange(n)
    after = Tensor._make(k[None, :] > k[:, None], D.bool_)     # [k, j]: j > k
    upper = Tensor._make(k[None, :] >= k[:, None], D.bool_)    # [k, i]: i >= k
    rows = xl.unsqueeze(-2).expand(*xl.shape[:-1], n, n)
    partial = where(after, rows, ones_like(rows)).cumprod(-1)     # [k, i]: prod_{k<j<=i} x_j
    inner = (gl.unsqueeze(-2) * partial * upper).sum(-1)
    one = ones(list(xl.shape[:-1]) + [1], dtype=x._dtype)
    before = cat([one, xl.narrow(-1, 0, n - 1).cumprod(-1)], -1) if n > 1 else one
    return (before * inner).movedim(-1, dim)


@_parsed("cumprod", _SCAN, takes_out=True)
def cumprod(which, input, dim, dtype=None, out=None):
    if (out is not None and out._dtype is D.bool_) or dtype is D.bool_:
        raise NotImplementedError("\"cumprod_out_cpu\" not implemented for 'Bool'")
    return _out(_cumprod(input, dim=wrap_dim(dim, input._data.ndim),
                         dtype=dtype or _scan_dtype(input, out)), out, "cumprod", "any")


# ----------------------------------------------------------------------------- cummax / cummin
def _cum_extreme(xp, x, dim, largest):
    """Running max/min along dim and the index of its latest holder (NaN wins and sticks)."""
    if x.ndim == 0:
        return x.copy(), xp.zeros((), xp.int64)
    if x.size == 0:
        return x.copy(), xp.zeros(x.shape, xp.int64)
    acc = xp.maximum if largest else xp.minimum
    values = acc.accumulate(x, axis=dim)
    prev = xp.concatenate([xp.take(x, [0], axis=dim),
                           xp.take(values, xp.arange(x.shape[dim] - 1), axis=dim)], axis=dim)
    takes = (x >= prev) if largest else (x <= prev)
    if x.dtype.kind in "fV":
        takes = takes | xp.isnan(x)
    pos = xp.arange(x.shape[dim]).reshape([-1] + [1] * (x.ndim - 1 - dim))
    idx = xp.maximum.accumulate(xp.where(takes, pos, 0), axis=dim)
    return values, idx.astype(xp.int64)


def _cum_op(name, largest):
    op = primitive(name, node=name.capitalize() + "Backward0", n_outputs=2,
                   differentiable_outputs=1, save=("result1",))(
        lambda xp, self, *, dim: _cum_extreme(xp, self, dim, largest))

    @op.derivative
    def _(ctx, grad):
        if not len(ctx.input_shape()):
            return grad
        idx = Tensor._make(ctx.result1, D.int64)
        return zeros(ctx.input_shape(), dtype=grad._dtype, device=grad._device).scatter_add(
            ctx.dim, idx, grad)

    @_parsed(name, "Tensor input, int dim, *, Tensor[2]? out=None", takes_out=True)
    def public(which, input, dim, out=None):
        if out is not None:         # (checked first: values, then indices)
            _check_scan_out(out[0], input._dtype)
            _check_scan_out(out[1], D.int64)
        if not input._data.ndim and dim not in (0, -1):
            raise IndexError(f"{name}(): Expected reduction dim -1 or 0 for scalar but got "
                             f"{dim}")
        # an empty input runs no kernel: any dim will do, and no dtype is refused
        d = wrap_dim(dim, input._data.ndim) if input._data.size else 0
        if input._data.size:
            _no_complex(f"{name}_cpu", input)
        v, i = op(input, dim=d)
        return _values_indices(name, v, i, out)
    return public


def _check_scan_out(out, dtype):
    """The scans' out= must have the result's dtype exactly."""
    if out._dtype is not dtype:
        raise RuntimeError(f"expected scalar_type {_tname(dtype)} but found {_tname(out._dtype)}")


cummax = _cum_op("cummax", True)
cummin = _cum_op("cummin", False)


# ----------------------------------------------------------------------------- logcumsumexp
@primitive("logcumsumexp", node="LogcumsumexpBackward0", save=("self", "result"))
def _logcumsumexp(xp, self, *, dim):
    if self.ndim == 0 or self.size == 0:
        return self.copy()
    if self.dtype.kind == "c":
        # no complex logaddexp ufunc to accumulate: a prefix scan that adds in the partial
        # result `step` places back, doubling step (log2(n) whole-array steps)
        out = xp.moveaxis(self, dim, -1).copy()
        step = 1
        while step < out.shape[-1]:
            out[..., step:] = _complex_logaddexp(xp, out[..., step:], out[..., :-step])
            step *= 2
        return xp.moveaxis(out, -1, dim)
    return xp.logaddexp.accumulate(self, axis=dim)


def _complex_logaddexp(xp, a, b):
    """log(e^a + e^b) for complex arrays: m + log1p(e^(n - m)), m the one with the larger real
    part (two -inf real parts give -inf)."""
    first = a.real >= b.real
    big, small = xp.where(first, a, b), xp.where(first, b, a)
    with np.errstate(all="ignore"):
        out = big + xp.log1p(xp.exp(small - big))
    return xp.where(xp.isneginf(big.real), big, out)


@_logcumsumexp.derivative
def _(ctx, grad):
    # d r_j / d x_i = exp(x_i - r_j) for j >= i: grad_x_i = exp(x_i - c) * sum_{j>=i}
    # g_j exp(c - r_j), a reversed cumulative sum. The shift c (each slice's first, smallest r;
    # a constant, as it cancels) keeps both factors in range unless r spans > ~700 in a slice.
    if grad._data.ndim == 0 or grad._data.size == 0:
        return grad
    d, r = ctx.dim, ctx.result
    c = r.narrow(d, 0, 1).detach()
    c = where(c.isfinite(), c, 0.0)
    # (for complex inputs each factor enters conjugated)
    return (grad * (c - r).exp().conj()).flip(d).cumsum(d).flip(d) * (ctx.self - c).exp().conj()


@_parsed("logcumsumexp", "Tensor input, int dim, *, Tensor? out=None", takes_out=True)
def logcumsumexp(which, input, dim, out=None):
    if out is not None:
        _check_scan_out(out, input._dtype)
    d = wrap_dim(dim, input._data.ndim)
    if input._dtype._category < 2:
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for "
                                  f"'{_tname(input._dtype)}'")
    return _out(_logcumsumexp(input, dim=d), out, "logcumsumexp")


__all__ = ['cummax', 'cummin', 'logcumsumexp']
