"""The sparse gradient of an embedding (F.embedding / F.embedding_bag with sparse=True): one
entry per looked-up index, in lookup order and uncoalesced, as torch gives it; the padding
row's lookups are left out."""
import numpy as np

from .._tensor import Tensor
from ._conversions import _from_values


def embedding_sparse_grad(grad, indices, num_weights, padding_idx, scale_grad_by_freq):
    """The weight's gradient (a sparse tensor of size (num_weights, dim)) from the output's
    gradient `grad` and the looked-up `indices` (an int array)."""
    if scale_grad_by_freq:
        raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse "
                           "gradients")
    dim = grad.shape[-1]
    flat = indices.reshape(-1).astype(np.int64)
    rows = grad.reshape(-1, dim)
    if padding_idx is not None:
        # (torch selects the kept rows even when none is dropped: its values are then a
        # fresh contiguous copy, which decides how a later sparse add combines them)
        keep = flat != padding_idx
        flat = flat[keep]
        rows = rows[Tensor._make(keep, device=grad.device)]
    return _from_values(rows, indices=flat.reshape(1, -1), size=(num_weights, dim),
                        coalesced=flat.shape[0] <= 1)     # (one entry is coalesced)


def sparse_rows_grad(rows, indices, num_weights):
    """The weight's sparse gradient from each looked-up row's gradient `rows` (an ember
    tensor (n, dim)) and the rows' weight indices (an int array (n,))."""
    flat = indices.reshape(-1).astype(np.int64)
    return _from_values(rows, indices=flat.reshape(1, -1), size=(num_weights, rows.shape[1]),
                        coalesced=flat.shape[0] <= 1)
