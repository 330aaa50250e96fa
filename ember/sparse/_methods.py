"""The sparse tensors' methods of ember.Tensor, as data: ember/ops/tensor_methods.py binds them
with every other method."""
from . import _conversions as C, _compressed


METHODS = {
    "to_dense": C.to_dense, "to_sparse": C.to_sparse, "to_sparse_coo": C.to_sparse,
    "coalesce": C.coalesce, "is_coalesced": C.is_coalesced, "_coalesced_": C._coalesced_,
    "indices": C.indices, "values": C.values, "_indices": C._indices, "_values": C._values,
    "sparse_dim": C.sparse_dim, "dense_dim": C.dense_dim, "_nnz": C._nnz,
    "sparse_mask": C.sparse_mask,
    "to_sparse_csr": _compressed.to_sparse_csr, "crow_indices": _compressed.crow_indices,
    "col_indices": _compressed.col_indices, "ccol_indices": _compressed.ccol_indices,
    "row_indices": _compressed.row_indices, "to_sparse_csc": _compressed.to_sparse_csc,
    "to_sparse_bsr": _compressed.to_sparse_bsr, "to_sparse_bsc": _compressed.to_sparse_bsc,
}

