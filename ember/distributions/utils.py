"""torch.distributions.utils: the helpers the distributions share, and conversions between a
matrix's lower triangle and a vector of its entries (row by row)."""
import math

import numpy as np

import ember
from .distribution import (broadcast_all, clamp_probs, lazy_property, logits_to_probs,
                           probs_to_logits, sum_rightmost as _sum_rightmost)

euler_constant = 0.57721566490153286061

__all__ = ["broadcast_all", "clamp_probs", "euler_constant", "lazy_property",
           "logits_to_probs", "probs_to_logits", "tril_matrix_to_vec", "vec_to_tril_matrix"]


def _tril_positions(n, diag):
    # flat (row-major) positions of the entries with col < row + diag + 1
    rows, cols = np.indices((n, n))
    return np.flatnonzero(cols < rows + diag + 1)


def vec_to_tril_matrix(vec, diag=0):
    """The n x n matrix whose lower triangle (offset `diag`) is `vec`, row by row; 0 above."""
    k = vec.shape[-1]
    # the n with n (n + 1 + 2 diag) / 2 = k, rounded: a k of no such n fails on the size
    n = int(round((-(1 + 2 * diag) + math.sqrt((1 + 2 * diag) ** 2 + 8 * k)) / 2))
    positions = _tril_positions(n, diag)
    if positions.size != k:
        raise RuntimeError(f"shape mismatch: value tensor of shape [{k}] cannot be broadcast "
                           f"to indexing result of shape [{positions.size}]")
    # every position reads from vec padded with one zero (the last entry)
    source = np.full(n * n, k)
    source[positions] = np.arange(k)
    padded = ember.cat([vec, vec.new_zeros(vec.shape[:-1] + (1,))], -1)
    return padded[..., ember.tensor(source)].reshape(vec.shape[:-1] + (n, n))


def tril_matrix_to_vec(mat, diag=0):
    """The lower triangle (offset `diag`) of the trailing n x n matrices, row by row."""
    n = mat.shape[-1]
    return mat.flatten(-2)[..., ember.tensor(_tril_positions(n, diag))]
