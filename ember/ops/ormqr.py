"""torch.ormqr: multiply a matrix by the orthogonal (unitary) Q of a QR factorization kept as
Householder reflectors (geqrf's (input, tau)), without the caller forming Q.

Q is m x m (left=True) or n x n (left=False) for other of shape (m, n): the reflectors' matrix
padded to square with zero columns and zero taus (each an identity reflection), through
linalg.householder_product, so the result is differentiable in input, tau and other.
"""
from .creation import zeros
from .joining import cat
from .linalg_decompositions import householder_product

__all__ = ["ormqr"]


def ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    size = other.shape[-2] if left else other.shape[-1]
    if input.shape[-2] != size:
        side = "other.shape[-2]" if left else "other.shape[-1]"
        raise RuntimeError(f"torch.ormqr: {side} must be equal to input.shape[-2]")
    reflectors = min(size, input.shape[-1])
    if tau.shape[-1] != reflectors:
        side = "other.shape[-2]" if left else "other.shape[-1]"
        raise RuntimeError(f"torch.ormqr: tau.shape[-1] must be equal to min({side}, "
                           f"input.shape[-1])")
    k = input.shape[-1]
    if k < size:
        pad = zeros(*input.shape[:-1], size - k, dtype=input.dtype, device=input.device)
        input = cat([input, pad], -1)
    elif k > size:
        input = input[..., :size]
    if tau.shape[-1] < size:
        pad = zeros(*tau.shape[:-1], size - tau.shape[-1], dtype=tau.dtype, device=tau.device)
        tau = cat([tau, pad], -1)
    q = householder_product(input, tau)
    if transpose:
        q = q.mH
    result = q.matmul(other) if left else other.matmul(q)
    if out is not None:
        out.resize_(result.shape).copy_(result)
        return out
    return result
