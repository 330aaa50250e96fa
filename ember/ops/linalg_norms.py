"""torch.linalg's matrix norms: matrix_norm, norm, cond, matrix_rank."""
import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
from ._linalg_common import (_check_matrix, _with_out, _tname, _LinAlgError, _check_square,
                             _real_dtype)
from .linalg_decompositions import _xp, svdvals, _check_svd, inv_ex
from .linalg_solvers import _check_float_or_double, _tolerance, inv
from ._utils import wrap_dim
from .creation import zeros
from .norms import vector_norm, _check_norm_dtype
from .pointwise import where


# ---------------------------------------------------------------------------- rank, norms, cond
@_with_out("linalg.matrix_rank")
def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None):
    _check_float_or_double(A)
    if A._data.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at "
                           "least 2 dimensions.")
    _check_matrix("torch.linalg.matrix_rank", A)
    if tol is not None:                 # the old spelling of atol
        atol, rtol = tol, 0.0
    xp, a = _xp(A), A._data
    if hermitian:
        S = xp.abs(xp.linalg.eigvalsh(a))
        s_max = S.max(-1, keepdims=True, initial=0)
    else:
        S = xp.linalg.svd(a, compute_uv=False)
        s_max = S[..., :1] if S.shape[-1] else xp.zeros(S.shape[:-1] + (1,), S.dtype)
    rank = (S > _tolerance(a, s_max, atol, rtol)).sum(-1).astype(np.int64)
    return Tensor._make(xp.asarray(rank), D.int64, A._device)


@_with_out("linalg.matrix_norm")
def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    supported = ("fro", "nuc") if isinstance(ord, str) else (1, -1, 2, -2, float("inf"),
                                                            float("-inf"))
    if ord not in supported:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")   # checked first
    _check_matrix("linalg.matrix_norm", A)
    if ord in ("nuc", 2, -2) and A._data.dtype.itemsize < 4:   # these need an SVD
        raise RuntimeError(f"linalg.matrix_norm: Low precision dtypes not supported. Got "
                           f"{_tname(A._dtype)}")
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(map(str, dim))}")
    if dtype is not None:
        _check_norm_dtype("linalg.matrix_norm", A, dtype)
        A = A.to(dtype)
    d0, d1 = (wrap_dim(d, A._data.ndim) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, "
                           f"{dim[1]})")
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        S = svdvals(A.movedim((d0, d1), (-2, -1)))
        if ord == 2 and S.shape[-1] == 0:
            result = S.sum(-1)                      # an empty matrix's norm is 0
        else:
            result = S.sum(-1) if ord == "nuc" else S.amax(-1) if ord == 2 else S.amin(-1)
        if keepdim:
            for d in sorted((d0, d1)):
                result = result.unsqueeze(d)
        return result
    # 1: the largest column sum of |A|; inf: the largest row sum
    summed, picked = (d0, d1) if abs(ord) == 1 else (d1, d0)
    sums = A.abs().sum(summed, keepdim=keepdim)
    if not keepdim and summed < picked:
        picked -= 1
    if ord < 0:
        return sums.amin(picked, keepdim=keepdim)
    # a max of absolute values: 0 (its identity) over an empty dimension, as in PyTorch
    return sums.amax(picked, keepdim=keepdim) if sums.shape[picked] else \
        sums.sum(picked, keepdim=keepdim)


@_with_out("linalg.norm")
def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """torch.linalg.norm: a matrix norm for a string ord, a 2-tuple dim, or a 2-D A with an
    ord; otherwise a vector norm (of the flattened A when dim is None)."""
    if dim is not None and not isinstance(dim, (tuple, list)):
        dim = (dim,)
    if dim is not None and len(dim) not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. "
                           f"Got {list(dim)}")
    if ord is not None and dim is None and A._data.ndim not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must "
                           f"be 1D or 2D. Got {A._data.ndim}D.")
    matrix = isinstance(ord, str) or (dim is not None and len(dim) == 2) or \
        (dim is None and ord is not None and A._data.ndim == 2)
    if matrix and ord is not None:
        return matrix_norm(A, ord, (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


@_with_out("linalg.cond")
def cond(A, p=None):
    if A._data.ndim < 2:
        subject = f"linalg.cond(ord={p}): The input tensor A" if isinstance(p, str) else \
            "linalg.cond: The input tensor"
        raise RuntimeError(f"{subject} must have at least 2 dimensions.")
    if A._data.shape[-1] == 0 and A._data.shape[-2] == 0:     # empty matrices: 0, as PyTorch
        return zeros(A._data.shape[:-2], dtype=_real_dtype(A), device=A.device)
    if p in (None, 2, -2):
        S = svdvals(A)
        return S[..., 0] / S[..., -1] if p != -2 else S[..., -1] / S[..., 0]
    n, m = A._data.shape[-2:]
    if n != m:
        raise RuntimeError(f"linalg.cond(ord={p}): A must be batches of square matrices, but "
                           f"they are {n} by {m} matrices")
    # the dtype checks of the SVD or the inverse it computes
    _check_svd("linalg.svd", A) if p == "nuc" else _check_square("linalg.inv", A)
    try:
        return matrix_norm(A, p) * matrix_norm(inv(A), p)
    except _LinAlgError:
        pass
    # singular matrices have an infinite condition number
    inverse, info = inv_ex(A)
    return where(info > 0, float("inf"), matrix_norm(A, p) * matrix_norm(inverse, p))
