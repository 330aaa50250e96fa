"""torch.linalg.ldl_factor, ldl_factor_ex and ldl_solve: the LDL^T factorization of a
symmetric (or Hermitian) indefinite matrix with Bunch-Kaufman pivoting, as LAPACK's sytrf
computes it (lower triangle), and solves with it (LAPACK's sytrs).

LD holds L (unit lower triangular, below the diagonal) and the block diagonal D (1x1 and 2x2
blocks) packed into one lower-triangular matrix; `pivots` are 1-based: pivots[k] = p > 0
means rows/columns k and p-1 were swapped and D has a 1x1 block at k; a negative pair
pivots[k] = pivots[k+1] = -p marks a 2x2 block at k, k+1, with rows k+1 and p-1 swapped.
For complex matrices, hermitian=True factors A = L D L^H (LAPACK's hetrf) and
hermitian=False A = L D L^T (sytrf). Like torch, neither op has a derivative."""
import numpy as np

from ._tensor import Tensor
from .ops._utils import return_type
from .ops.registry import primitive

_ALPHA = (1 + 17 ** 0.5) / 8      # Bunch-Kaufman's pivot threshold

LinalgLdlFactor = return_type("linalg_ldl_factor", ["LD", "pivots"])
LinalgLdlFactorEx = return_type("linalg_ldl_factor_ex", ["LD", "pivots", "info"])


def _cabs1(x):
    """LAPACK's cheap modulus |re| + |im| (the plain modulus for real values)."""
    return np.abs(x.real) + np.abs(x.imag) if np.iscomplexobj(x) else np.abs(x)


def _factor_one(a, hermitian):
    """sytf2 (hetf2 for a complex Hermitian matrix) on one matrix, lower triangle:
    (LD, int32 pivots, info)."""
    a = a.copy()
    herm = hermitian and np.iscomplexobj(a)
    conj = np.conj if herm else (lambda x: x)
    n = a.shape[0]
    pivots = np.zeros(n, np.int32)
    info = 0
    k = 0
    while k < n:
        step = 1
        diag = abs(a[k, k].real) if herm else _cabs1(a[k, k])
        if k < n - 1:
            imax = k + 1 + int(np.argmax(_cabs1(a[k + 1:, k])))
            colmax = _cabs1(a[imax, k])
        else:
            imax, colmax = k, 0.0
        if max(diag, colmax) == 0 or np.isnan(diag):
            if info == 0:
                info = k + 1
            kp = k
            if herm:
                a[k, k] = a[k, k].real
        else:
            if diag >= _ALPHA * colmax:
                kp = k
            else:
                # the largest off-diagonal entry in row/column imax
                rowmax = np.max(_cabs1(a[imax, k:imax]))
                if imax < n - 1:
                    rowmax = max(rowmax, np.max(_cabs1(a[imax + 1:, imax])))
                if diag >= _ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif (abs(a[imax, imax].real) if herm else _cabs1(a[imax, imax])) >= \
                        _ALPHA * rowmax:
                    kp = imax
                else:
                    kp, step = imax, 2
            kk = k + step - 1
            if kp != kk:        # swap rows and columns kk and kp of the trailing matrix
                if kp < n - 1:
                    a[kp + 1:, [kk, kp]] = a[kp + 1:, [kp, kk]]
                between = conj(a[kk + 1:kp, kk].copy())
                a[kk + 1:kp, kk] = conj(a[kp, kk + 1:kp])
                a[kp, kk + 1:kp] = between
                if herm:
                    a[kp, kk] = np.conj(a[kp, kk])
                a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
                if step == 2:
                    if herm:
                        a[k, k] = a[k, k].real
                    a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]
            elif herm:
                a[k, k] = a[k, k].real
                if step == 2:
                    a[k + 1, k + 1] = a[k + 1, k + 1].real
            if step == 1:
                if k < n - 1:
                    x = a[k + 1:, k].copy()
                    pivot = a[k, k].real if herm else a[k, k]
                    a[k + 1:, k + 1:] -= np.outer(x, conj(x)) / pivot
                    a[k + 1:, k] = x / pivot
                    if herm:
                        idx = np.arange(k + 1, n)
                        a[idx, idx] = a[idx, idx].real
            elif k < n - 2:
                c0, c1 = a[k + 2:, k].copy(), a[k + 2:, k + 1].copy()
                if herm:
                    size = abs(a[k + 1, k])
                    d11 = a[k + 1, k + 1].real / size
                    d22 = a[k, k].real / size
                    d21 = a[k + 1, k] / size
                    scale = (1 / (d11 * d22 - 1)) / size
                    w0 = scale * (d11 * c0 - d21 * c1)
                    w1 = scale * (d22 * c1 - np.conj(d21) * c0)
                else:
                    d21 = a[k + 1, k]
                    d11 = a[k + 1, k + 1] / d21
                    d22 = a[k, k] / d21
                    d21 = (1 / (d11 * d22 - 1)) / d21
                    w0 = d21 * (d11 * c0 - c1)
                    w1 = d21 * (d22 * c1 - c0)
                a[k + 2:, k + 2:] -= np.outer(c0, conj(w0)) + np.outer(c1, conj(w1))
                a[k + 2:, k], a[k + 2:, k + 1] = w0, w1
                if herm:
                    idx = np.arange(k + 2, n)
                    a[idx, idx] = a[idx, idx].real
        if step == 1:
            pivots[k] = kp + 1
        else:
            pivots[k] = pivots[k + 1] = -(kp + 1)
        k += step
    return np.tril(a), pivots, info


def _solve_one(ld, pivots, b, hermitian):
    """sytrs (hetrs for a complex Hermitian factorization), lower: X with
    L D L^T X = P B (L^H for Hermitian)."""
    b = b.copy()
    herm = hermitian and np.iscomplexobj(ld)
    conj = np.conj if herm else (lambda x: x)
    n = ld.shape[0]
    k = 0
    while k < n:                    # L D Y = B
        if pivots[k] > 0:
            kp = pivots[k] - 1
            b[[k, kp]] = b[[kp, k]]
            b[k + 1:] -= np.outer(ld[k + 1:, k], b[k])
            b[k] /= ld[k, k].real if herm else ld[k, k]
            k += 1
        else:
            kp = -pivots[k] - 1
            b[[k + 1, kp]] = b[[kp, k + 1]]
            if k < n - 2:
                b[k + 2:] -= np.outer(ld[k + 2:, k], b[k]) + np.outer(ld[k + 2:, k + 1], b[k + 1])
            off = ld[k + 1, k]
            first, second = ld[k, k] / conj(off), ld[k + 1, k + 1] / off
            denom = first * second - 1
            bk, bk1 = b[k] / conj(off), b[k + 1] / off
            b[k], b[k + 1] = (second * bk - bk1) / denom, (first * bk1 - bk) / denom
            k += 2
    k = n - 1
    while k >= 0:                   # L^T X = Y (L^H)
        if pivots[k] > 0:
            b[k] -= conj(ld[k + 1:, k]) @ b[k + 1:]
            kp = pivots[k] - 1
            b[[k, kp]] = b[[kp, k]]
            k -= 1
        else:
            b[k] -= conj(ld[k + 1:, k]) @ b[k + 1:]
            b[k - 1] -= conj(ld[k + 1:, k - 1]) @ b[k + 1:]
            kp = -pivots[k] - 1
            b[[k, kp]] = b[[kp, k]]
            k -= 2
    return b


@primitive("linalg_ldl_factor_ex", node="torch::autograd::NotImplemented", n_outputs=3,
           differentiable_outputs=1)
def _ldl_factor(xp, A, *, hermitian=False):
    host = np.asarray(A.get() if hasattr(A, "get") else A)
    n = host.shape[-1]
    batch = host.shape[:-2]
    flat = host.reshape((int(np.prod(batch)), n, n))
    ld = np.empty_like(flat)
    pivots = np.empty((flat.shape[0], n), np.int32)
    info = np.empty(flat.shape[0], np.int32)
    for i, matrix in enumerate(flat):
        ld[i], pivots[i], info[i] = _factor_one(matrix, hermitian)
    return (xp.asarray(ld.reshape(host.shape)), xp.asarray(pivots.reshape(batch + (n,))),
            xp.asarray(info.reshape(batch)))


@_ldl_factor.derivative
def _(ctx, grad_LD):
    raise RuntimeError("derivative for aten::linalg_ldl_factor_ex is not implemented")


@primitive("linalg_ldl_solve", node="torch::autograd::NotImplemented", promote=None)
def _ldl_solve(xp, LD, B, *, pivots, hermitian=False):
    # (the pivots are a parameter, not an input: torch's node has no edge for them)
    ld, piv, b = (np.asarray(x.get() if hasattr(x, "get") else x)
                  for x in (LD, pivots._data, B))
    shape = np.broadcast_shapes(ld.shape[:-2], piv.shape[:-1], b.shape[:-2])
    n = ld.shape[-1]
    count = int(np.prod(shape))
    ld = np.broadcast_to(ld, shape + ld.shape[-2:]).reshape((count, n, n))
    piv = np.broadcast_to(piv, shape + (n,)).reshape((count, n))
    rhs = np.broadcast_to(b, shape + b.shape[-2:]).reshape((count,) + b.shape[-2:])
    out = np.empty(rhs.shape, rhs.dtype)
    for i in range(count):
        out[i] = _solve_one(ld[i], piv[i], rhs[i], hermitian)
    return xp.asarray(out.reshape(shape + b.shape[-2:]))


@_ldl_solve.derivative
def _(ctx, grad):
    raise RuntimeError("derivative for aten::linalg_ldl_solve is not implemented")


def _check_factor_input(A, fn="torch.linalg.ldl_factor_ex"):
    if A.dim() < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got "
                           f"{_name(A.dtype)}")


def _name(dtype):
    # torch's scalar type names in messages (Long, Float, ...)
    return {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool", "float16": "Half", "bfloat16": "BFloat16", "float32": "Float",
            "float64": "Double"}.get(dtype.name, dtype.name)


def _raise_info(fn, info):
    bad = np.nonzero(np.asarray(info._data).reshape(-1))[0]
    if len(bad):
        code = int(np.asarray(info._data).reshape(-1)[bad[0]])
        # (torch reports a singular D through an internal assertion)
        raise RuntimeError("false INTERNAL ASSERT FAILED at \"/__w/pytorch/pytorch/aten/src/"
                           "ATen/native/BatchLinearAlgebra.cpp\":1642, please report a bug to "
                           f"PyTorch. {fn}: Unknown error code: {code}.")


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    _check_factor_input(A)
    LD, pivots, info = _ldl_factor(A, hermitian=hermitian)
    if check_errors:
        _raise_info("torch.linalg.ldl_factor_ex", info)
    return _into(out, LinalgLdlFactorEx(LD, pivots, info))


def ldl_factor(A, *, hermitian=False, out=None):
    _check_factor_input(A)
    LD, pivots, info = _ldl_factor(A, hermitian=hermitian)
    _raise_info("torch.linalg.ldl_factor", info)
    return _into(out, LinalgLdlFactor(LD, pivots))


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    if B.dim() < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(B.dim(), 1)}, {max(B.dim(), 1) - 1}], but got -2)")
    if LD.shape[-1] != B.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for torch.linalg.ldl_solve: each A "
                           f"matrix is {LD.shape[-2]} by {LD.shape[-1]} but each b matrix is "
                           f"{B.shape[-2]} by {B.shape[-1]}")
    if B.dtype != LD.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_name(B.dtype)} and A of type {_name(LD.dtype)} instead.")
    return _into(out, _ldl_solve(LD, B, pivots=pivots, hermitian=hermitian))


def _into(out, result):
    """PyTorch's out=: the results copied into the given tensor(s)."""
    if out is None:
        return result
    if isinstance(result, Tensor):
        out.resize_(result.shape).copy_(result)
        return out
    for o, r in zip(out, result):
        o.resize_(r.shape).copy_(r)
    return type(result)(*out)
