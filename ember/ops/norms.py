"""Norms and distances: torch.norm, vector_norm, frobenius_norm, nuclear_norm, renorm, dist,
cdist."""
import builtins
import math
import numpy as np

from .. import _dtype as D
from .._printing import scalar_type_name
from . import pointwise as P
from ._pointwise_common import _out
from ._utils import wrap_dim, Overloads, with_method, REQUIRED, as_shape, require
from .indexing import _scalar_name
from .reduction import _restore_dims, _count, _reduce_dims, _tname
from .registry import primitive, COMMON
import warnings
from .arithmetic import _check_bool_sub
from .creation import ones_like, zeros_like
from .pointwise import where


# ----------------------------------------------------------------------------- norms
@primitive("linalg_vector_norm", node="LinalgVectorNormBackward0", save=("self", "result"))
def _vector_norm(xp, self, *, ord, dims, keepdim, trivial=False):
    a = xp.abs(self)
    if trivial and ord != 0:
        # one element per result: PyTorch runs no kernel, the norm is |x| (no overflow of x^p)
        r = xp.sum(a, axis=dims, keepdims=keepdim)
    elif ord == float("inf"):
        r = xp.max(a, axis=dims, keepdims=keepdim)
    elif ord == float("-inf"):
        r = xp.min(a, axis=dims, keepdims=keepdim)
    elif ord == 0:
        r = xp.sum(a != 0, axis=dims, keepdims=keepdim).astype(a.dtype)
    elif ord == 1:
        r = xp.sum(a, axis=dims, keepdims=keepdim)
    elif ord == 2:
        r = xp.sqrt(xp.sum(a * a, axis=dims, keepdims=keepdim))
    else:
        r = xp.power(xp.sum(xp.power(a, ord), axis=dims, keepdims=keepdim), 1.0 / ord)
    return xp.asarray(r).astype(a.dtype)


@_vector_norm.derivative
def _(ctx, grad):
    x, p = ctx.self, ctx.ord
    shape = ctx.input_shape()
    g = _restore_dims(grad, shape, ctx.dims, ctx.keepdim)
    norm = _restore_dims(ctx.result, shape, ctx.dims, ctx.keepdim)
    if p == 0:
        return None             # the count of nonzeros: torch sends no gradient at all
    if p == 1:
        return g * x.sgn()
    if p == 2:
        return where(norm == 0, zeros_like(x), g * x / norm)
    if p in (float("inf"), float("-inf")):
        # the elements at the extreme share it; a NaN counts as one (its sgn sends nothing)
        mask = (x.abs() == norm) | x.isnan()
        return x.sgn() * (g / mask.sum(dim=ctx.dims, keepdim=True) * mask)
    # (PyTorch's three forms, each with its own masking of zeros)
    if p < 1:
        scaled = x.sgn() * where(x == 0, zeros_like(x), x.abs().pow(p - 1))
        return scaled * g * norm.pow(1 - p)
    # (a zero norm divided by a 1 instead, so that the masked lanes' double backward is 0)
    zero = norm == 0
    scale = where(zero, zeros_like(norm), g / where(zero, ones_like(norm), norm).pow(p - 1))
    return (x.sgn() * x.abs().pow(p - 1) if p < 2 else x * x.abs().pow(p - 2)) * scale


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    return _out(_vector_norm_of(x, ord, dim, keepdim, dtype), out, "linalg.vector_norm", "mm")


def _check_norm_dtype(fn, A, dtype):
    """The dtype= of a norm: float or complex as A is, and no narrower than A's."""
    if dtype._category < 2:
        raise RuntimeError(f"{fn}: dtype should be floating point or complex, but got "
                           f"{_tname(dtype)}")
    if (dtype._category == 3) != (A._dtype._category == 3):
        kind = "complex" if A._dtype._category == 3 else "real"
        raise RuntimeError(f"{fn}: dtype should be {kind} for {kind} inputs, but got "
                           f"{_tname(dtype)}")
    if D.promote_types(A._dtype, dtype) is not dtype:
        raise RuntimeError(f"{fn}: the dtype of the input ({_tname(A._dtype)}) should be "
                           f"convertible without narrowing to the specified dtype "
                           f"({_tname(dtype)})")


# torch.norm(x, p, dim): linalg.vector_norm's forward and derivative on its own node
_norm_op = primitive("norm.ScalarOpt_dim", node="NormBackward1", save=("self", "result"))(
    _vector_norm.forward)
_norm_op.derivative(_vector_norm.derivative_fn)


def _vector_norm_of(x, ord, dim, keepdim, dtype):
    if x._dtype._category < 2:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor "
                           f"as input. Got {_tname(x._dtype)}")
    if isinstance(ord, (bool, str, list, tuple)) or not isinstance(ord, (int, float)) and \
            not hasattr(ord, "__float__"):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, not "
                        f"{type(ord).__name__}")
    ord = float(ord)
    dims = _reduce_dims(dim, x._data.ndim, False)
    if (ord < 0 or ord == float("inf")) and x._data.size == 0:
        _check_norm_identity(ord, x.shape, dim, dims)
    if dtype is not None:       # checked after the empty reduction, as PyTorch does
        _check_norm_dtype("linalg.vector_norm", x, dtype)
        x = x.to(dtype)
    # one element per result (though a dim given for a 0-dim input runs PyTorch's kernel)
    trivial = _count(x.shape, dims) == 1 and bool(
        x._data.ndim or dim is None or isinstance(dim, (list, tuple)) and not dim)
    return _vector_norm(x, ord=ord, dims=dims, keepdim=keepdim, trivial=trivial)


def _check_norm_identity(ord, shape, dim, dims):
    # max, min and negative powers have no value for an empty reduction (PyTorch's
    # message has no space before "because", and names the dim as the caller wrote it)
    given = [dim] if isinstance(dim, int) else dim
    what = "an empty tensor " if dim is None or dim == [] or dim == () else next(
        (f"the dimension {g}" for g in given if shape[wrap_dim(g, len(shape))] == 0), None)
    if what is not None:
        raise RuntimeError(f"linalg.vector_norm cannot compute the {ord:g} norm on {what}"
                           f"because {'' if what.endswith(' ') else 'this dimension is empty and '}"
                           f"the operation does not have an identity")


# torch.norm is a Python function over these two ops: its arguments' errors are theirs
_VECTOR_NORM = Overloads("linalg_vector_norm", "Tensor input, Scalar ord=2, int[1]? dim=None, "
                         "bool keepdim=False, *, ScalarType? dtype=None, Tensor? out=None")
_MATRIX_NORM = Overloads("linalg_matrix_norm", *(
    f"Tensor input, {ord}, int[] dim={{-2,-1}}, bool keepdim=False, *, ScalarType? dtype=None, "
    f"Tensor? out=None" for ord in ("Scalar ord", 'str ord="fro"')))


def _norm(input, p, dim, keepdim, out, dtype):
    """torch.norm: a vector norm over dim (all dims by default); a string p other than "fro"
    (or "fro" over more than two dims) is a matrix norm over dim (all dims by default). The
    ops are given their arguments as torch.norm gives them: dim as a list (an int in a list),
    dtype= always, out= when given."""
    # (a plain int dim is read as the list holding it would be: passed as is, the call's
    # reading is remembered by its types)
    dims = dim if dim.__class__ is int or not isinstance(dim, int) else [dim]
    kwargs = {"dtype": dtype} if out is None else {"dtype": dtype, "out": out}
    if isinstance(p, str) and not (p == "fro" and (dim is None or isinstance(dim, int) or
                                                   len(dim) <= 2)):
        from .linalg_norms import matrix_norm  # (cycle: ops.linalg_norms imports this module)
        # (int[] takes no lone int: an int dim is the list holding it)
        dims = list(range(input._data.ndim)) if dim is None else [dim] if \
            isinstance(dim, int) else dim
        _, args = _MATRIX_NORM.parse((input, p, dims, keepdim), kwargs)
        result = matrix_norm(input, p, args["dim"], keepdim, dtype=args["dtype"])
        if out is not None and out._dtype is not result._dtype:
            raise RuntimeError(f"linalg.matrix_norm expected out tensor dtype "
                               f"{_tname(result._dtype)} but got: {_tname(out._dtype)}")
        return _out(result, out, "linalg_matrix_norm")
    p = 2 if p is None or isinstance(p, str) else p
    _, args = _VECTOR_NORM.parse((input, p, dims, keepdim), kwargs)
    return _parsed_vector_norm(input, args, out, "linalg_vector_norm")


def _parsed_vector_norm(input, args, out, name):
    ord = args["ord"]
    if isinstance(ord, complex) and input._dtype._category >= 2:
        raise RuntimeError("linalg.vector_norm: Expected a non-complex scalar as the order of "
                           "norm.")
    # (a bool or NumPy order read as the number it is)
    ord = ord if ord.__class__ in (int, float) else float(ord.real)
    return _out(_vector_norm_of(input, ord, args["dim"], args["keepdim"], args["dtype"]), out,
                name, "mm")


def linalg_vector_norm(*args, **kwargs):
    """torch.linalg.vector_norm, its arguments read as torch's parser reads them (ember's own
    code calls `vector_norm`, which skips that)."""
    _, parsed = _VECTOR_NORM.parse(args, kwargs)
    return _parsed_vector_norm(parsed["input"], parsed, parsed["out"], "linalg.vector_norm")


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    return _norm(input, p, dim, keepdim, out, dtype)


def _norm_method(self, p="fro", dim=None, keepdim=False, dtype=None):
    return _norm(self, p, dim, keepdim, None, dtype)


# (Python's own errors for these calls name the method Tensor.norm, as PyTorch's do)
_norm_method.__code__ = _norm_method.__code__.replace(co_name="norm",
                                                      co_qualname="Tensor.norm")
_norm_method.__name__, _norm_method.__qualname__ = "norm", "Tensor.norm"
norm = with_method(norm, _norm_method)


# ----------------------------------------------------------------------------- distances
def _pnorm(xp, diff, p):
    """The p-norm over the last axis of an array of differences."""
    a = xp.abs(diff)
    if p == 0:
        return (a != 0).sum(-1).astype(diff.dtype)
    if p == np.inf:
        return a.max(-1, initial=0)
    if p == 1:
        return a.sum(-1)
    if p == 2:
        return xp.sqrt((a * a).sum(-1))
    return (a ** p).sum(-1) ** (1 / p)


def _pnorm_grad(diff, norm, grad, p, split_ties=False):
    """d norm_p(diff) / d diff times grad (grad and norm over the last dim, unsqueezed):
    sign(diff) |diff|^(p-1) / norm^(p-1), and zero where the norm is zero (as PyTorch).
    p = 0 has no gradient (None, as PyTorch leaves it undefined); for p = inf every element
    at the maximum gets the gradient, shared among them with split_ties (PyTorch's dist does,
    its cdist does not)."""
    if p == 0:
        return None
    if p == 1:
        return grad * diff.sign()
    if p == np.inf:
        hit = (diff.abs() == norm).to(diff._dtype)
        if split_ties:
            hit = hit / hit.sum()
        return where(norm == 0, 0.0, grad * diff.sign() * hit)
    safe = where(norm == 0, 1.0, norm)
    if p == 2:
        return where(norm == 0, 0.0, grad * diff / safe)
    ratio = diff.abs() / safe
    return where(norm == 0, 0.0, grad * diff.sign() * ratio ** (p - 1))


@primitive("cdist", node="CdistBackward0", save=("x1", "x2", "result"))
def _cdist(xp, x1, x2, *, p):
    return _pnorm(xp, x1[..., :, None, :] - x2[..., None, :, :], p)


@_cdist.derivative
def _(ctx, grad):
    diff = ctx.x1.unsqueeze(-2) - ctx.x2.unsqueeze(-3)
    g = _pnorm_grad(diff, ctx.result.unsqueeze(-1), grad.unsqueeze(-1), ctx.p)
    needs = ctx.needs_input_grad
    if g is None:
        return None, None
    return (g.sum(-2) if needs[0] else None, -g.sum(-3) if needs[1] else None)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    if x1.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {x2.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if x1._dtype._category < 2 or x2._dtype._category < 2:
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: "
                           f"{_scalar_name(x1._dtype)}" if x1._dtype._category < 2 else
                           f"cdist only supports floating-point dtypes, X2 got: "
                           f"{_scalar_name(x2._dtype)}")
    return _cdist(x1, x2, p=float(p))


@primitive("dist", node="DistBackward0", save=("self", "other", "result"), promote=COMMON)
def _dist(xp, self, other, *, p):
    diff = xp.subtract(self, other).reshape(-1)
    return xp.asarray(_pnorm(xp, diff, p))


@_dist.derivative
def _(ctx, grad):
    g = _pnorm_grad(ctx.self - ctx.other, ctx.result, grad, ctx.p, split_ties=True)
    needs = ctx.needs_input_grad
    if g is None:
        return None, None
    return (g if needs[0] else None, -g if needs[1] else None)


def dist(input, other, p=2):
    # PyTorch's dist is norm(input - other): the subtraction's bool error, then norm's dtype one
    if D.bool_ in (input._dtype, other._dtype):
        _check_bool_sub(input, other)
    dtype = D.result_dtype([input, other])
    if dtype._category < 2:
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {_scalar_name(dtype)} instead.")
    return _dist(input, other, p=float(p))


# ----------------------------------------------------------------------------- renorm
@primitive("renorm", node="RenormBackward0", save=("self",))
def _renorm(xp, self, *, p, dim, maxnorm):
    return self * _renorm_factor(xp, self, p, dim, maxnorm)


def _renorm_factor(xp, a, p, dim, maxnorm):
    axes = tuple(d for d in range(a.ndim) if d != dim)
    mag = xp.abs(a)
    if p == math.inf:
        norm = mag.max(axis=axes, keepdims=True) if mag.size else mag.sum(axes, keepdims=True)
    else:
        norm = (mag ** p).sum(axis=axes, keepdims=True) ** (1.0 / p)
    scale = maxnorm / (norm + 1e-7)
    return xp.where(norm > maxnorm, scale, 1.0).astype(a.dtype, copy=False)


@_renorm.derivative
def _(ctx, grad):
    x, p, dim, maxnorm = ctx.self, ctx.p, ctx.dim, ctx.maxnorm
    axes = [d for d in range(x.dim()) if d != dim]
    norm = x.norm(p, axes, keepdim=True)
    over = norm > maxnorm
    factor = P.where(over, maxnorm / (norm + 1e-7), 1.0)
    # d factor / d norm, times d norm / d x (the p-norm's gradient)
    dfactor = P.where(over, -maxnorm / (norm + 1e-7) ** 2, 0.0)
    if p == math.inf:
        peak = (x.abs() == norm).to(x._dtype)
        dnorm = x.sign() * peak / peak.sum(axes, keepdim=True)
    else:
        dnorm = x.sign() * x.abs() ** (p - 1) / norm ** (p - 1)
        dnorm = P.where(norm == 0, 0.0, dnorm)
    return grad * factor + (grad * x).sum(axes, keepdim=True) * dfactor * dnorm


def _renorm_args(input, p, dim, maxnorm):
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {_num(maxnorm)}")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if input._data.ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got "
                           f"{input._data.ndim} dimensions")
    if input._dtype._category < 2:
        raise RuntimeError(f"renorm: expected a floating point or complex tensor as input. "
                           f"Got {scalar_type_name(input._dtype)}")
    return dict(p=float(p), dim=wrap_dim(dim, input._data.ndim), maxnorm=float(maxnorm))


def _num(v):
    return int(v) if float(v).is_integer() else v


def renorm(input, p, dim, maxnorm, *, out=None):
    return _out(_renorm(input, **_renorm_args(input, p, dim, maxnorm)), out, "renorm")


def renorm_(self, p, dim, maxnorm):
    return _renorm.inplace(self, **_renorm_args(self, p, dim, maxnorm))


_DEPRECATED_NORM = ("at::{} is deprecated and it is just left for JIT compatibility. It will be "
                    "removed in a future PyTorch release. Please use `{}` instead")
_warned_norms = set()


def _warn_norm_once(name, replacement):
    """torch warns once per process (TORCH_WARN_ONCE)."""
    if name not in _warned_norms:
        _warned_norms.add(name)
        warnings.warn(_DEPRECATED_NORM.format(name, replacement), UserWarning, stacklevel=3)


def frobenius_norm(input, dim=REQUIRED, keepdim=False, *, out=None):
    require("frobenius_norm", "dim", dim, 2, "tuple of ints")
    dim = as_shape((dim,))
    _warn_norm_once("frobenius_norm", "linalg.vector_norm(A, 2., dim, keepdim)")
    if len(dim) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dim)} dimensions "
                           f"instead.")
    dims = tuple(wrap_dim(d, input.dim()) for d in dim) or tuple(builtins.range(input.dim()))
    return _out(_norm_op(input, ord=2.0, dims=dims, keepdim=keepdim), out, "frobenius_norm")


def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    """nuclear_norm(input, keepdim=False) or nuclear_norm(input, dim, keepdim=False)."""
    from .. import linalg  # (cycle: linalg imports this module)
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    _warn_norm_once("nuclear_norm", "linalg.matrix_norm(A, 'nuc', dim, keepdim)")
    return linalg.matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim, out=out)


__all__ = ['frobenius_norm', 'nuclear_norm', 'renorm', 'cdist', 'dist']
